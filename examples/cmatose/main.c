/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-cmatose: the message exchange of rdmacm-utils' ucmatose (RC) and,
 * with --ud, udaddy (UD), on any qpio device, connected by lib/cm. Its
 * options, ports and steps are theirs, so either end can be the
 * unmodified tool on a RoCE host (Linux rxe or hardware) and the other a
 * qpio soft device on the wire (the IB CM), or both qpio.
 *
 * RC (ucmatose, port 7471, RDMA_PS_TCP): the client posts COUNT receives
 * and connects; the server posts COUNT receives, accepts, SENDs COUNT
 * messages of SIZE bytes, waits for their completions, then for COUNT
 * messages from the client, and disconnects. The client answers with
 * COUNT SENDs once it has COUNT messages, and waits for the disconnect.
 *
 * UD (udaddy, port 7174, RDMA_PS_UDP; Q_Key 0x01234567, rdma_cm's): the
 * client SENDs COUNT messages WITH_IMM (its QPN) to the QPN and Q_Key of
 * the SIDR REP; the server waits for them, makes its AH from the first
 * one's GRH and QPN from its immediate data, and answers with COUNT
 * messages of its own, which the client waits for.
 *
 *   qpio-cmatose -l 0 --vdev net_af_packet0,iface=eth1 -- \
 *       --dev soft0,wire=net_af_packet0,ip=10.0.0.2 -s 10.0.0.1
 *   ucmatose -s 10.0.0.2        (with qpio-cmatose ... --dev ... alone)
 *
 * The message bytes are not checked: ucmatose and udaddy send what their
 * buffers hold. Counts, lengths, opcodes and (UD) the source QPN and the
 * immediate data are, and every completion must be a success.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include <qpio_cm.h>
#include <qpio_devargs.h>
#include <qpio_eal.h>
#include <qpio_rdma.h>

#include "app_opts.h"

#define RDMA_UDP_QKEY 0x01234567u   /* librdmacm's Q_Key of a UD id */

struct opts {
	const char *dev;            /* --dev DEVARGS */
	const char *server;         /* -s: connect to it; NULL: serve */
	const char *bind;           /* -b: listen on it (server) */
	const char *port;           /* -p */
	uint32_t count;             /* -C */
	uint32_t size;              /* -S */
	uint32_t timeout_s;         /* --timeout */
	int ud;                     /* --ud: udaddy's exchange */
};

struct end {
	struct opts o;
	struct qpio_device *dev;
	struct qpio_pd *pd;
	struct qpio_cq *cq;
	struct qpio_qp *qp;
	struct qpio_mr *mr;
	uint8_t *buf;               /* count receive slots, then one send */
	uint32_t slot;              /* bytes of a receive slot */
	struct qpio_cm_channel *ch;
	struct qpio_cm_id *id;      /* the connection */
	struct qpio_ah *ah;         /* UD: towards the peer */
	uint32_t peer_qpn, peer_qkey;
	uint64_t deadline_ns;
	uint32_t sends_done, recvs_done;
	const char *role;
};

/* What is set up after the EAL's start: die() takes it down too. */
static struct end *live;

/* Release what e holds, in reverse order of setup, then the EAL and its
 * runtime directory. The channel goes first: an id still connected
 * tells its peer (a DREQ on the IB CM), so a peer does not wait for its
 * timeout when this end gives up. */
static void
teardown(struct end *e)
{
	if (e->o.ud && e->o.server == NULL && e->ah != NULL)
		qpio_ah_destroy(e->ah);
	if (e->ch != NULL)
		qpio_cm_channel_destroy(e->ch);
	if (e->qp != NULL)
		qpio_qp_destroy(e->qp);
	if (e->mr != NULL)
		qpio_mr_dereg(e->mr);
	if (e->cq != NULL)
		qpio_cq_destroy(e->cq);
	if (e->pd != NULL)
		qpio_pd_free(e->pd);
	if (e->dev != NULL)
		qpio_rdma_dev_close(e->dev);
	rte_free(e->buf);
	qpio_eal_cleanup();
}

static void
die(const struct end *e, const char *what, const char *why)
{
	fprintf(stderr, "qpio-cmatose: %s%s%s: %s\n", e != NULL ? e->role : "",
		e != NULL ? ": " : "", what, why);
	fflush(stdout);
	if (live != NULL)
		teardown(live);
	exit(1);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
check_deadline(const struct end *e, const char *waiting_for)
{
	char why[160];

	if (now_ns() < e->deadline_ns)
		return;
	snprintf(why, sizeof(why), "nothing within --timeout %u s (sends "
		 "completed %u of %u, messages received %u of %u)",
		 e->o.timeout_s, e->sends_done, e->o.count, e->recvs_done,
		 e->o.count);
	die(e, waiting_for, why);
}

#define PROG "qpio-cmatose"

static void
usage(FILE *f)
{
	fprintf(f,
"usage: qpio-cmatose [EAL options] -- --dev DEVARGS [options]\n"
"  --dev DEVARGS        the qpio device (a soft device on the wire:\n"
"                       soft0,wire=PORT,ip=ADDR; ibv0,dev=rxe0; ...)\n"
"  -s, --server ADDR    connect to the server at ADDR (default: be the server)\n"
"  -b, --bind ADDR      server: listen on ADDR only (default: every address)\n"
"  -p, --port PORT      1..65535 (default 7471, with --ud 7174)\n"
"  -C, --count COUNT    messages each way, 1..32768 (default 10)\n"
"  -S, --size SIZE      bytes per message, 1..1048576 (default 100; with\n"
"                       --ud at most the port's active MTU)\n"
"  --ud                 udaddy's exchange over UD (default: ucmatose's, RC)\n"
"  --timeout SEC        give up after SEC s without progress, 1..3600\n"
"                       (default 30)\n"
"  -h, --help           this text\n"
"  Numbers are decimal digits only; each option is given once.\n");
}

/* The options after "--"; -1 after a message (usage exit status). */
static int
parse(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "server", required_argument, NULL, 's' },
		{ "bind", required_argument, NULL, 'b' },
		{ "port", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'C' },
		{ "size", required_argument, NULL, 'S' },
		{ "ud", no_argument, NULL, 'U' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned char seen[256] = { 0 };
	uint32_t port = 0;
	int c;

	memset(o, 0, sizeof(*o));
	o->count = 10;
	o->size = 100;
	o->timeout_s = 30;
	optind = 1;
	while ((c = getopt_long(argc, argv, "s:b:p:C:S:h", longopts,
				NULL)) != -1) {
		/* A second value would replace the first without a word. */
		if (c != '?' && c != 'h' &&
		    example_opt_once(PROG, longopts, c, seen) < 0)
			return -1;
		switch (c) {
		case 'd':
			if (example_opt_text(PROG, "--dev", optarg,
					     "DEVARGS (soft0,wire=...)") < 0)
				return -1;
			o->dev = optarg;
			break;
		case 's':
			if (example_opt_text(PROG, "--server", optarg,
					     "the server's address") < 0)
				return -1;
			o->server = optarg;
			break;
		case 'b':
			if (example_opt_text(PROG, "--bind", optarg,
					     "an address of the device") < 0)
				return -1;
			o->bind = optarg;
			break;
		case 'p':
			if (example_opt_u32(PROG, "--port", optarg, 1, 65535,
					    &port) < 0)
				return -1;
			o->port = optarg;
			break;
		case 'C':
			/* the CQ takes both directions: 2 * 32768 CQEs */
			if (example_opt_u32(PROG, "--count", optarg, 1, 32768,
					    &o->count) < 0)
				return -1;
			break;
		case 'S':
			if (example_opt_u32(PROG, "--size", optarg, 1, 1u << 20,
					    &o->size) < 0)
				return -1;
			break;
		case 'U':
			o->ud = 1;
			break;
		case 'T':
			if (example_opt_u32(PROG, "--timeout", optarg, 1, 3600,
					    &o->timeout_s) < 0)
				return -1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, PROG ": '%s': not an option (the server is "
			"-s ADDR; see --help)\n", argv[optind]);
		return -1;
	}
	if (o->dev == NULL) {
		fprintf(stderr, PROG ": --dev DEVARGS is required "
			"(soft0,wire=<ethdev>,ip=<address>)\n");
		return -1;
	}
	if (o->bind != NULL && o->server != NULL) {
		fprintf(stderr, PROG ": --bind is the server's and --server "
			"makes a client: give one\n");
		return -1;
	}
	if (o->port == NULL)
		o->port = o->ud ? "7174" : "7471";
	return 0;
}

/* PD, CQ, buffers, MR, QP and channel; the QP stays in RESET (lib/cm
 * walks it). */
static void
setup(struct end *e)
{
	struct qpio_qp_init_attr ia;
	struct qpio_port_attr pa;
	size_t len;

	e->dev = qpio_rdma_dev_create(e->o.dev);
	if (e->dev == NULL)
		die(e, e->o.dev, rte_strerror(rte_errno));
	if (qpio_rdma_port_query(e->dev, 1, &pa) != 0)
		die(e, e->o.dev, "port 1 cannot be queried");
	if (e->o.ud && e->o.size > (128u << pa.active_mtu)) {
		char why[128];

		snprintf(why, sizeof(why), "a UD message is one packet: at "
			 "most the port's active MTU, %u bytes",
			 128u << pa.active_mtu);
		die(e, "--size", why);
	}
	e->slot = e->o.size + (e->o.ud ? QPIO_GRH_LEN : 0);
	len = (size_t)e->slot * e->o.count + e->o.size;
	e->pd = qpio_pd_alloc(e->dev);
	e->cq = qpio_cq_create(e->dev, 2 * e->o.count, SOCKET_ID_ANY);
	if (e->pd == NULL || e->cq == NULL)
		die(e, "setup", rte_strerror(rte_errno));
	e->buf = rte_zmalloc("qpio_cmatose", len, 64);
	if (e->buf == NULL) {
		char why[160];

		snprintf(why, sizeof(why), "out of memory: %zu bytes of "
			 "buffers (-C x -S, each way); raise -m or lower them",
			 len);
		die(e, "setup", why);
	}
	memset(e->buf + (size_t)e->slot * e->o.count, 0x5a, e->o.size);
	e->mr = qpio_mr_reg(e->pd, e->buf, len, QPIO_ACCESS_LOCAL_WRITE);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = e->o.ud ? QPIO_QPT_UD : QPIO_QPT_RC;
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	ia.cap.max_send_wr = e->o.count;
	ia.cap.max_recv_wr = e->o.count;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.sq_sig_all = 1;
	e->qp = e->mr != NULL ? qpio_qp_create(e->pd, &ia) : NULL;
	e->ch = qpio_cm_channel_create();
	if (e->mr == NULL || e->qp == NULL || e->ch == NULL)
		die(e, "setup", rte_strerror(rte_errno));
}

static void
post_recvs(struct end *e)
{
	uint32_t i;
	int err;

	for (i = 0; i < e->o.count; i++) {
		struct qpio_sge sge = {
			(uintptr_t)(e->buf + (size_t)i * e->slot), e->slot,
			qpio_mr_lkey(e->mr) };
		struct qpio_recv_wr wr = { .wr_id = i, .sg_list = &sge,
					   .num_sge = 1 };

		if (qpio_qp_post_recv(e->qp, &wr, 1, &err) != 1)
			die(e, "post_recv", strerror(-err));
	}
}

static void
post_sends(struct end *e)
{
	struct qpio_sge sge = {
		(uintptr_t)(e->buf + (size_t)e->slot * e->o.count), e->o.size,
		qpio_mr_lkey(e->mr) };
	struct qpio_send_wr wr;
	uint32_t i;
	int err;

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = e->o.ud ? QPIO_WR_SEND_WITH_IMM : QPIO_WR_SEND;
	wr.send_flags = QPIO_SEND_SIGNALED;
	if (e->o.ud) {
		wr.imm_data = qpio_qp_num(e->qp);
		wr.wr.ud.ah = e->ah;
		wr.wr.ud.remote_qpn = e->peer_qpn;
		wr.wr.ud.remote_qkey = e->peer_qkey;
	}
	for (i = 0; i < e->o.count; i++) {
		wr.wr_id = e->o.count + i;
		/* the send queue holds count: never full here */
		if (qpio_qp_post_send(e->qp, &wr, 1, &err) != 1)
			die(e, "post_send", strerror(-err));
	}
}

/* One receive completion: the checks ucmatose and udaddy imply. */
static void
check_recv(struct end *e, const struct qpio_wc *wc)
{
	char why[160];
	uint32_t want = e->o.size + (e->o.ud ? QPIO_GRH_LEN : 0);

	if (wc->byte_len != want) {
		snprintf(why, sizeof(why), "%u bytes, expected %u",
			 wc->byte_len, want);
		die(e, "message", why);
	}
	if (!e->o.ud)
		return;
	if (!(wc->wc_flags & QPIO_WC_WITH_IMM))
		die(e, "message", "no immediate data (udaddy sends its QPN)");
	if (wc->imm_data != wc->src_qp) {
		snprintf(why, sizeof(why), "immediate data 0x%x is not the "
			 "source QPN 0x%x", wc->imm_data, wc->src_qp);
		die(e, "message", why);
	}
	if (e->ah == NULL) {
		/* the server's reply address: udaddy's create_reply_ah() */
		e->ah = qpio_ah_create_from_wc(e->pd, wc,
					       e->buf + (size_t)wc->wr_id *
					       e->slot, 1);
		if (e->ah == NULL)
			die(e, "AH from the first message",
			    rte_strerror(rte_errno));
		e->peer_qpn = wc->imm_data;
		e->peer_qkey = RDMA_UDP_QKEY;
	} else if (wc->src_qp != e->peer_qpn) {
		snprintf(why, sizeof(why), "from QPN 0x%x, expected 0x%x",
			 wc->src_qp, e->peer_qpn);
		die(e, "message", why);
	}
}

/* Poll until sends and receives reach their targets; every completion
 * must be a success. A connection event meanwhile ends the program. */
/* A request for another connection while this one runs (one at a
 * time, as the tools serve): refused with a consumer REJ, the run goes
 * on. 1 when ev was one. */
static int
refuse_other(const struct end *x, const struct qpio_cm_event *ev)
{
	if (ev->type != QPIO_CM_EVENT_CONNECT_REQUEST || ev->id == x->id)
		return 0;
	fprintf(stderr, PROG ": another connect request while one is "
		"served: rejected\n");
	qpio_cm_reject(ev->id, NULL, 0);
	return 1;
}

static void
poll_until(struct end *e, uint32_t sends, uint32_t recvs, const char *what)
{
	struct qpio_cm_event ev;
	struct qpio_wc wc[16];
	unsigned int idle = 0;
	int n, i;

	e->deadline_ns = now_ns() + (uint64_t)e->o.timeout_s * 1000000000u;
	while (e->sends_done < sends || e->recvs_done < recvs) {
		n = qpio_cq_poll(e->cq, wc, RTE_DIM(wc));
		if (n < 0)
			die(e, "poll", strerror(-n));
		if (n == 0) {
			if (++idle % 1024 == 0) {
				check_deadline(e, what);
				if (qpio_cm_poll(e->ch, &ev) == 1 &&
				    !refuse_other(e, &ev))
					die(e, what, qpio_cm_event_str(
						ev.type));
			}
			continue;
		}
		for (i = 0; i < n; i++) {
			if (wc[i].status != QPIO_WC_SUCCESS)
				die(e, wc[i].opcode & QPIO_WC_RECV ?
				    "receive" : "send",
				    qpio_wc_status_str(wc[i].status));
			if (wc[i].opcode & QPIO_WC_RECV) {
				check_recv(e, &wc[i]);
				e->recvs_done++;
			} else {
				e->sends_done++;
			}
		}
		e->deadline_ns = now_ns() +
				 (uint64_t)e->o.timeout_s * 1000000000u;
	}
}

static struct qpio_cm_event
wait_event(struct end *e, enum qpio_cm_event_type type, const char *what)
{
	struct qpio_cm_event ev;
	char why[96];
	int ret;

	e->deadline_ns = now_ns() + (uint64_t)e->o.timeout_s * 1000000000u;
	while ((ret = qpio_cm_poll(e->ch, &ev)) == 0 ||
	       (ret == 1 && e->id != NULL && refuse_other(e, &ev)))
		check_deadline(e, what);
	if (ret < 0)
		die(e, what, strerror(-ret));
	if (ev.type != type) {
		snprintf(why, sizeof(why), "%s (%s), expected %s",
			 qpio_cm_event_str(ev.type), strerror(-ev.status),
			 qpio_cm_event_str(type));
		die(e, what, why);
	}
	return ev;
}

static void
server(struct end *e)
{
	struct qpio_cm_qp_params qp;
	struct qpio_cm_conn_param cp;
	struct qpio_cm_event ev;
	struct qpio_cm_id *lid;

	printf("qpio-cmatose: starting server\n");
	lid = qpio_cm_listen(e->ch, e->dev, e->o.bind, e->o.port, NULL);
	if (lid == NULL)
		die(e, "listen", rte_strerror(rte_errno));
	printf("qpio-cmatose: listening on port %u\n", qpio_cm_id_port(lid));
	fflush(stdout);
	ev = wait_event(e, QPIO_CM_EVENT_CONNECT_REQUEST, "connect request");
	e->id = ev.id;
	qpio_cm_qp_params_init(&qp);
	if (e->o.ud)
		qp.qkey = RDMA_UDP_QKEY;
	memset(&cp, 0, sizeof(cp));
	cp.qp_params = &qp;
	if (qpio_cm_accept(e->id, e->qp, &cp) != 0)
		die(e, "accept", "refused (see the log)");
	/* in RTS now; nothing is received before the next poll */
	post_recvs(e);
	wait_event(e, QPIO_CM_EVENT_ESTABLISHED, "accept");
	if (e->o.ud) {
		printf("receiving data transfers\n");
		poll_until(e, 0, e->o.count, "messages from the client");
		printf("sending replies\n");
		post_sends(e);
		poll_until(e, e->o.count, e->o.count, "the replies' sends");
		printf("data transfers complete\n");
	} else {
		printf("initiating data transfers\n");
		post_sends(e);
		printf("completing sends\n");
		poll_until(e, e->o.count, 0, "the sends' completions");
		printf("receiving data transfers\n");
		poll_until(e, e->o.count, e->o.count,
			   "messages from the client");
		printf("data transfers complete\n");
		printf("qpio-cmatose: disconnecting\n");
		if (qpio_cm_disconnect(e->id) != 0)
			die(e, "disconnect", "refused");
		wait_event(e, QPIO_CM_EVENT_DISCONNECTED, "disconnect");
		printf("disconnected\n");
	}
	qpio_cm_id_destroy(lid);
}

static void
client(struct end *e)
{
	struct qpio_cm_qp_params qp;
	struct qpio_cm_conn_param cp;
	struct qpio_cm_event ev;

	printf("qpio-cmatose: starting client\n");
	qpio_cm_qp_params_init(&qp);
	if (e->o.ud)
		qp.qkey = RDMA_UDP_QKEY;
	memset(&cp, 0, sizeof(cp));
	cp.qp_params = &qp;
	cp.timeout_ms = e->o.timeout_s * 1000u;
	printf("qpio-cmatose: connecting\n");
	e->id = qpio_cm_connect(e->ch, e->qp, e->o.server, e->o.port, &cp,
				NULL);
	if (e->id == NULL)
		die(e, "connect", rte_strerror(rte_errno));
	ev = wait_event(e, QPIO_CM_EVENT_ESTABLISHED, "connect");
	/* in RTS now; nothing is received before the next poll */
	post_recvs(e);
	if (e->o.ud) {
		e->ah = ev.ah;
		e->peer_qpn = ev.peer.qpn;
		e->peer_qkey = ev.peer.qkey;
		printf("initiating data transfers\n");
		post_sends(e);
		printf("receiving data transfers\n");
		poll_until(e, e->o.count, e->o.count, "the server's replies");
		e->ah = NULL;   /* the id's */
		printf("data transfers complete\n");
	} else {
		printf("receiving data transfers\n");
		poll_until(e, 0, e->o.count, "messages from the server");
		printf("sending replies\n");
		post_sends(e);
		poll_until(e, e->o.count, e->o.count, "the replies' sends");
		printf("data transfers complete\n");
		wait_event(e, QPIO_CM_EVENT_DISCONNECTED,
			   "the server's disconnect");
		printf("disconnected\n");
	}
}

int
main(int argc, char **argv)
{
	static struct end e;
	char *prog = (char *)"qpio-cmatose";
	int n, dd = 1;

	/* The options after "--" first: a refused line sets up nothing. */
	while (dd < argc && strcmp(argv[dd], "--") != 0)
		dd++;
	if (dd < argc) {
		char *saved = argv[dd];

		argv[dd] = prog;
		n = parse(argc - dd, argv + dd, &e.o);
		argv[dd] = saved;
	} else {
		n = parse(1, &prog, &e.o);
	}
	if (n < 0)
		return 2;
	optind = 1;
	n = rte_eal_init(argc, argv);
	if (n < 0)
		die(NULL, "EAL", rte_strerror(rte_errno));
	e.role = e.o.server != NULL ? "client" : "server";
	live = &e;
	setup(&e);
	if (e.o.server != NULL)
		client(&e);
	else
		server(&e);
	printf("qpio-cmatose: %s: %u messages of %u bytes each way over %s, "
	       "every completion a success\n", e.role, e.o.count, e.o.size,
	       e.o.ud ? "UD" : "RC");
	fflush(stdout);
	teardown(&e);
	return 0;
}
