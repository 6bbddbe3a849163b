/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-order-answer: two processes of one machine over an RC connection
 * of the soft NIC. The server (the DPDK primary) answers orders; the
 * client (a secondary of the same --file-prefix) sends COUNT orders, one
 * at a time, and checks every byte of every answer. lib/cm makes the
 * connection. This is the program of the guide's first program page
 * (doc/guides/prog_guide/first_program.rst), which shows it in parts
 * between the "8<" and ">8" markers.
 *
 *   qpio-order-answer -l 0 --file-prefix=oa -- server soft0 7471
 *   qpio-order-answer -l 1 --file-prefix=oa --proc-type=secondary -- \
 *       client soft1 127.0.0.1 7471 100
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include <qpio_cm.h>
#include <qpio_devargs.h>
#include <qpio_eal.h>
#include <qpio_rdma.h>

#define MSG_LEN 64u     /* bytes of an order and of an answer */
#define RECVS 8u        /* receives posted at a time */

/* What one process owns. */
struct side {
	struct qpio_device *dev;
	struct qpio_pd *pd;
	struct qpio_cq *cq;     /* sends and receives complete here */
	struct qpio_qp *qp;
	struct qpio_mr *mr;
	uint8_t *bufs;          /* RECVS receive buffers of MSG_LEN bytes */
	struct qpio_cm_channel *ch;
};

/* Print "qpio-order-answer: what: why" and end the process with 1. */
static void
die(const char *what, const char *why)
{
	fprintf(stderr, "qpio-order-answer: %s: %s\n", what, why);
	exit(1);
}

/* die() with a connection event that was not the one expected. */
static void
die_event(const char *what, const struct qpio_cm_event *ev)
{
	char why[128];

	snprintf(why, sizeof(why), "%s (%s)", qpio_cm_event_str(ev->type),
		 strerror(-ev->status));
	die(what, why);
}

/* Byte k of order seq (answer 0) or of its answer (answer 1). */
static uint8_t
msg_byte(uint32_t seq, int answer, unsigned int k)
{
	return (uint8_t)((seq * 31 + k) ^ (answer ? 0xa5u : 0));
}

/* Die unless the len bytes at m are order (or answer) seq, to the byte. */
static void
msg_check(const uint8_t *m, uint32_t len, uint32_t seq, int answer)
{
	unsigned int k;

	if (len != MSG_LEN)
		die(answer ? "answer" : "order", "wrong length");
	for (k = 0; k < MSG_LEN; k++)
		if (m[k] != msg_byte(seq, answer, k))
			die(answer ? "answer" : "order", "wrong byte");
}

/* Die if an EAL option before "--" keeps this process's memory to
 * itself: the other process could not reach it. */
static void
check_shared(int argc, char **argv)
{
	static const char *const private_opts[] = {
		"--no-huge", "--no-shconf", "--in-memory", NULL,
	};
	const char *const *o;
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		for (o = private_opts; *o != NULL; o++)
			if (strcmp(argv[i], *o) == 0)
				die(*o, "memory of this mode is private to one "
				    "process: two processes need hugepages");
}

/* rte_eal_init() failed with rte_errno err: say what it means here
 * (the runtime directory the failed EAL made goes first). */
static void
eal_failed(int err)
{
	qpio_eal_init_failed();
	/* EAL failures. 8< */
	if (err == EACCES)
		die("EAL", "no hugepages to use: reserve and mount them (the "
		    "EAL line above says what is missing)");
	if (err == ENOMEM)
		die("EAL", "the free hugepages cannot hold -m (the EAL line "
		    "above gives both sizes): reserve more, or lower -m");
	if (err == 0)
		die("EAL", "no shared configuration (the EAL line above says "
		    "why): a client needs its server running with the same "
		    "--file-prefix, and a second server a prefix of its own");
	die("EAL", rte_strerror(err));
	/* >8 End of EAL failures. */
}

/* Open the device and make the PD, CQ, receive buffers, MR, QP and CM
 * channel of one side. The QP stays in RESET: lib/cm walks it. */
static void
side_setup(struct side *s, const char *devargs)
{
	/* Resources. 8< */
	struct qpio_qp_init_attr ia = {
		.qp_type = QPIO_QPT_RC,
		.cap = { .max_send_wr = RECVS, .max_recv_wr = RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = MSG_LEN },
	};
	struct qpio_device_attr da;

	s->dev = qpio_rdma_dev_create(devargs);
	if (s->dev == NULL)
		die(devargs, rte_strerror(rte_errno));
	if (qpio_rdma_dev_query(s->dev, &da) != 0 ||
	    da.max_inline_data < MSG_LEN)
		die(devargs, "cannot send a message inline");
	s->pd = qpio_pd_alloc(s->dev);
	s->cq = qpio_cq_create(s->dev, 2 * RECVS, SOCKET_ID_ANY);
	/* DPDK (hugepage) memory: the peer's process writes into it. */
	s->bufs = rte_zmalloc("order_answer", RECVS * MSG_LEN, 64);
	if (s->pd == NULL || s->cq == NULL || s->bufs == NULL)
		die("setup", rte_strerror(rte_errno));
	s->mr = qpio_mr_reg(s->pd, s->bufs, RECVS * MSG_LEN,
			    QPIO_ACCESS_LOCAL_WRITE);
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	s->qp = qpio_qp_create(s->pd, &ia);
	s->ch = qpio_cm_channel_create();
	if (s->mr == NULL || s->qp == NULL || s->ch == NULL)
		die("setup", rte_strerror(rte_errno));
	/* >8 End of resources. */
}

/* Messages. 8< */
/* Give receive buffer slot to the device. */
static void
post_recv(struct side *s, uint64_t slot)
{
	struct qpio_sge sge = { (uintptr_t)(s->bufs + slot * MSG_LEN),
				MSG_LEN, qpio_mr_lkey(s->mr) };
	struct qpio_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				   .num_sge = 1 };
	int err;

	if (qpio_qp_post_recv(s->qp, &wr, 1, &err) != 1)
		die("post_recv", strerror(-err));
}

/* SEND order seq (answer 0) or its answer (answer 1), inline: the bytes
 * are copied into the work request, so they need no MR. */
static void
send_msg(struct side *s, uint32_t seq, int answer)
{
	uint8_t m[MSG_LEN];
	struct qpio_sge sge = { (uintptr_t)m, MSG_LEN, 0 };
	struct qpio_send_wr wr = {
		.wr_id = seq, .sg_list = &sge, .num_sge = 1,
		.opcode = QPIO_WR_SEND,
		.send_flags = QPIO_SEND_INLINE | QPIO_SEND_SIGNALED,
	};
	unsigned int k;
	int err;

	for (k = 0; k < MSG_LEN; k++)
		m[k] = msg_byte(seq, answer, k);
	if (qpio_qp_post_send(s->qp, &wr, 1, &err) != 1)
		die("post_send", strerror(-err));
}

/* Poll the CQ until a message arrives and return its completion; the
 * completions of our own SENDs are passed over. Polling also runs the
 * soft NIC's retries. Now and then look at the connection: a peer that
 * goes away ends the program. */
static struct qpio_wc
wait_recv(struct side *s)
{
	struct qpio_cm_event ev;
	struct qpio_wc wc;
	unsigned int idle = 0;

	for (;;) {
		if (qpio_cq_poll(s->cq, &wc, 1) == 0) {
			if (++idle % 4096 == 0 && qpio_cm_poll(s->ch, &ev) == 1)
				die_event("connection", &ev);
			continue;
		}
		if (wc.status != QPIO_WC_SUCCESS)
			die("completion", qpio_wc_status_str(wc.status));
		if (wc.opcode == QPIO_WC_RECV)
			return wc;
	}
}
/* >8 End of messages. */

/* Busy-wait for the next connection event; die unless it is of type. */
static struct qpio_cm_event
wait_event(struct side *s, enum qpio_cm_event_type type, const char *what)
{
	struct qpio_cm_event ev;

	while (qpio_cm_poll(s->ch, &ev) == 0)
		;
	if (ev.type != type)
		die_event(what, &ev);
	return ev;
}

/* Listen, accept one client, answer the orders it announced, and wait
 * for its disconnect. */
static void
server(struct side *s, const char *port)
{
	/* Server. 8< */
	struct qpio_cm_event ev;
	struct qpio_cm_id *lid;
	uint32_t count, seq, i;
	struct qpio_wc wc;

	lid = qpio_cm_listen(s->ch, s->dev, NULL, port, NULL);
	if (lid == NULL)
		die("listen", rte_strerror(rte_errno));
	printf("server: listening on port %u\n", qpio_cm_id_port(lid));
	fflush(stdout);
	ev = wait_event(s, QPIO_CM_EVENT_CONNECT_REQUEST, "request");
	if (ev.private_data_len < sizeof(count))
		die("request", "no order count");
	memcpy(&count, ev.private_data, sizeof(count));
	count = ntohl(count);
	if (qpio_cm_accept(ev.id, s->qp, NULL) != 0)
		die("accept", "refused (see the log)");
	/* The QP is in RTS: post the receives before the first order. */
	for (i = 0; i < RECVS; i++)
		post_recv(s, i);
	wait_event(s, QPIO_CM_EVENT_ESTABLISHED, "accept");
	for (seq = 0; seq < count; seq++) {
		wc = wait_recv(s);
		msg_check(s->bufs + wc.wr_id * MSG_LEN, wc.byte_len, seq, 0);
		post_recv(s, wc.wr_id);         /* ready for the next order */
		send_msg(s, seq, 1);
	}
	wait_event(s, QPIO_CM_EVENT_DISCONNECTED, "end");
	printf("server: %u orders answered, %u bytes each way, every byte "
	       "as expected\n", count, count * MSG_LEN);
	/* >8 End of server. */
}

/* Connect, send count orders one at a time, check each answer, and
 * disconnect. */
static void
client(struct side *s, const char *host, const char *port, uint32_t count)
{
	/* Client. 8< */
	uint32_t announce = htonl(count), seq, i;
	struct qpio_cm_conn_param param = {
		.private_data = &announce,
		.private_data_len = sizeof(announce),
	};
	struct qpio_cm_event ev;
	struct qpio_wc wc;

	if (qpio_cm_connect(s->ch, s->qp, host, port, &param, NULL) == NULL)
		die("connect", rte_strerror(rte_errno));
	ev = wait_event(s, QPIO_CM_EVENT_ESTABLISHED, "connect");
	/* Post the receives for the answers before the first order. */
	for (i = 0; i < RECVS; i++)
		post_recv(s, i);
	for (seq = 0; seq < count; seq++) {
		send_msg(s, seq, 0);
		wc = wait_recv(s);
		msg_check(s->bufs + wc.wr_id * MSG_LEN, wc.byte_len, seq, 1);
		post_recv(s, wc.wr_id);
	}
	if (qpio_cm_disconnect(ev.id) != 0)
		die("disconnect", "refused");
	wait_event(s, QPIO_CM_EVENT_DISCONNECTED, "disconnect");
	printf("client: %u orders sent, %u answers received, %u bytes each "
	       "way, every byte as expected\n", count, count, count * MSG_LEN);
	/* >8 End of client. */
}

/* Free what side_setup() made, in the reverse order. */
static void
side_close(struct side *s)
{
	qpio_cm_channel_destroy(s->ch);
	qpio_qp_destroy(s->qp);
	qpio_mr_dereg(s->mr);
	qpio_cq_destroy(s->cq);
	qpio_pd_free(s->pd);
	qpio_rdma_dev_close(s->dev);
	rte_free(s->bufs);
}

/* EAL first, then the role named after "--". */
int
main(int argc, char **argv)
{
	static struct side s;
	uint32_t count = 0;
	int n, is_server;

	/* Main. 8< */
	check_shared(argc, argv);
	n = rte_eal_init(argc, argv);
	if (n < 0)
		eal_failed(rte_errno);
	argc -= n;
	argv += n;
	is_server = argc == 4 && strcmp(argv[1], "server") == 0;
	if (argc == 6 && strcmp(argv[1], "client") == 0)
		qpio_devargs_parse_u32(argv[5], 1, 1000000, &count);
	if (!is_server && count == 0)
		die("usage", "EAL-ARGS -- server DEVICE PORT | "
		    "client DEVICE HOST PORT COUNT (1..1000000)");
	side_setup(&s, argv[2]);
	if (is_server)
		server(&s, argv[3]);
	else
		client(&s, argv[3], argv[4], count);
	side_close(&s);
	qpio_eal_cleanup();
	return 0;
	/* >8 End of main. */
}
