/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-bench-onemsg: qpio-pingpong's exchange of messages on one lcore,
 * for counting instructions (bench/instructions.sh --latency runs it
 * under callgrind).
 *
 * Two RC QPs of one device, A and B, each with its send CQ and receive CQ.
 * Each round: A posts one inline SEND of --size bytes (the flat burst,
 * qpio_qp_post_send_sge(), one SGE; one in 16 signaled, as qpio-pingpong
 * posts), polls its send CQ once, B polls its receive CQ for the message,
 * posts the same back, polls its send CQ once and posts the receive
 * again; A polls its receive CQ for the answer and posts the receive
 * again. So each round is two posts of one message, two polls that find
 * one receive completion, two send CQ polls (one in 16 finds a
 * completion) and two posts of one receive, each call the same as one
 * lcore of qpio-pingpong makes, without the other lcore's cache line
 * transfers. Every answer is checked against its message.
 *
 *   qpio-bench-onemsg [EAL options] -- [--rounds N] [--size BYTES]
 *                     [--dev DEVARGS]
 *
 * Exit 0 after N rounds, 1 on a failed call or a wrong answer, 2 on a
 * refused option.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "qpio_devargs.h"
#include "qpio_eal.h"
#include "qpio_rdma.h"

#define RING 64u
#define SIGNAL_EVERY 16u
#define MAX_SIZE 256u

struct end {
	struct qpio_pd *pd;
	struct qpio_cq *send_cq, *recv_cq;
	struct qpio_qp *qp;
	struct qpio_mr *mr;
	uint8_t *slot;
	uint64_t sent;
};

static uint64_t rounds = 100000;
static uint32_t msg_size = 32;
static const char *devargs = "soft0";

static void
die(const char *what, int err)
{
	fprintf(stderr, "qpio-bench-onemsg: %s: %s\n", what, strerror(err));
	exit(1);
}

static void
end_init(struct end *e, struct qpio_device *dev)
{
	struct qpio_qp_init_attr ia = { 0 };

	e->pd = qpio_pd_alloc(dev);
	e->send_cq = qpio_cq_create(dev, RING, (int)rte_socket_id());
	e->recv_cq = qpio_cq_create(dev, RING, (int)rte_socket_id());
	e->slot = rte_zmalloc("onemsg", RING * msg_size, 64);
	if (e->pd == NULL || e->send_cq == NULL || e->recv_cq == NULL ||
	    e->slot == NULL)
		die("setup", rte_errno);
	e->mr = qpio_mr_reg(e->pd, e->slot, RING * msg_size,
			    QPIO_ACCESS_LOCAL_WRITE);
	if (e->mr == NULL)
		die("mr_reg", rte_errno);
	ia.send_cq = e->send_cq;
	ia.recv_cq = e->recv_cq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap.max_send_wr = RING;
	ia.cap.max_recv_wr = RING;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = msg_size;
	e->qp = qpio_qp_create(e->pd, &ia);
	if (e->qp == NULL)
		die("qp_create", rte_errno);
}

/* RESET -> INIT -> RTR -> RTS towards peer_qpn on the same device. */
static void
end_connect(struct end *e, struct qpio_device *dev, uint32_t peer_qpn)
{
	struct qpio_port_attr pa;
	struct qpio_qp_attr a = { 0 };

	qpio_rdma_port_query(dev, 1, &pa);
	a.qp_state = QPIO_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = QPIO_ACCESS_LOCAL_WRITE;
	if (qpio_qp_modify(e->qp, &a, QPIO_QP_STATE | QPIO_QP_PKEY_INDEX |
			   QPIO_QP_PORT | QPIO_QP_ACCESS_FLAGS) < 0)
		die("RESET->INIT", EINVAL);
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTR;
	a.path_mtu = pa.active_mtu;
	a.dest_qp_num = peer_qpn;
	a.min_rnr_timer = 1;
	a.ah_attr.dlid = pa.lid;
	a.ah_attr.port_num = 1;
	if (pa.lid == 0) {
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.hop_limit = 1;
		qpio_rdma_gid_query(dev, 1, 0, &a.ah_attr.grh.dgid);
	}
	if (qpio_qp_modify(e->qp, &a, QPIO_QP_STATE | QPIO_QP_AV |
			   QPIO_QP_PATH_MTU | QPIO_QP_DEST_QPN |
			   QPIO_QP_RQ_PSN | QPIO_QP_MAX_DEST_RD_ATOMIC |
			   QPIO_QP_MIN_RNR_TIMER) < 0)
		die("INIT->RTR", EINVAL);
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	if (qpio_qp_modify(e->qp, &a, QPIO_QP_STATE | QPIO_QP_TIMEOUT |
			   QPIO_QP_RETRY_CNT | QPIO_QP_RNR_RETRY |
			   QPIO_QP_SQ_PSN | QPIO_QP_MAX_QP_RD_ATOMIC) < 0)
		die("RTR->RTS", EINVAL);
}

static void
post_recv(struct end *e, uint32_t i)
{
	struct qpio_sge sge = { (uintptr_t)(e->slot + (size_t)i * msg_size),
				msg_size, qpio_mr_lkey(e->mr) };
	struct qpio_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };

	if (qpio_qp_post_recv(e->qp, &wr, 1, NULL) != 1)
		die("post_recv", ENOSPC);
}

/* One inline SEND of msg_size bytes, one in 16 signaled, then one poll
 * of the send CQ (qpio-pingpong's send_order()). */
static void
send_one(struct end *e, const void *msg)
{
	struct qpio_sge sge = { (uintptr_t)msg, msg_size, 0 };
	unsigned int flags = QPIO_SEND_INLINE |
		(e->sent % SIGNAL_EVERY == SIGNAL_EVERY - 1 ? QPIO_SEND_SIGNALED : 0);
	struct qpio_wc wc;
	int err = 0;

	if (qpio_qp_post_send_sge(e->qp, &sge, 1, e->sent, flags, &err) != 1)
		die("post_send_sge", -err);
	e->sent++;
	if (qpio_cq_poll(e->send_cq, &wc, 1) == 1 && wc.status != QPIO_WC_SUCCESS)
		die(qpio_wc_status_str(wc.status), EIO);
}

/* The one receive completion the send before made: its slot. */
static uint8_t *
take_one(struct end *e)
{
	struct qpio_wc wc;

	if (qpio_cq_poll(e->recv_cq, &wc, 1) != 1)
		die("no receive completion after the send", EIO);
	if (wc.status != QPIO_WC_SUCCESS)
		die(qpio_wc_status_str(wc.status), EIO);
	if (wc.byte_len != msg_size)
		die("receive completion of another length", EPROTO);
	return e->slot + (size_t)wc.wr_id * msg_size;
}

static int
parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rounds", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 's' },
		{ "dev", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "n:s:d:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (qpio_devargs_parse_u64(optarg, 1, 1000000000, &v) != 0)
				goto bad;
			rounds = v;
			break;
		case 's':
			if (qpio_devargs_parse_u64(optarg, 8, MAX_SIZE, &v) != 0)
				goto bad;
			msg_size = (uint32_t)v;
			break;
		case 'd':
			devargs = optarg;
			break;
		case 'h':
			printf("usage: qpio-bench-onemsg [EAL options] -- "
			       "[--rounds N (1..1000000000, 100000)] "
			       "[--size BYTES (8..%u, 32)] [--dev DEVARGS (soft0)]\n",
			       MAX_SIZE);
			return 1;
		default:
			return -EINVAL;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "qpio-bench-onemsg: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
bad:
	fprintf(stderr, "qpio-bench-onemsg: --%s=%s: want decimal digits in "
		"range (--rounds 1..1000000000, --size 8..%u)\n",
		c == 'n' ? "rounds" : "size", optarg, MAX_SIZE);
	return -EINVAL;
}

int
main(int argc, char **argv)
{
	struct end a = { 0 }, b = { 0 };
	struct qpio_device *dev;
	uint8_t msg[MAX_SIZE];
	uint64_t i;
	int ret, sep;

	for (sep = 1; sep < argc; sep++)
		if (strcmp(argv[sep], "--") == 0)
			break;
	if (sep < argc) {
		argv[sep] = argv[0];
		ret = parse_args(argc - sep, &argv[sep]);
	} else {
		ret = parse_args(1, argv);
	}
	if (ret != 0)
		return ret > 0 ? 0 : 2;
	if (rte_eal_init(sep, argv) < 0) {
		int err = rte_errno;

		qpio_eal_init_failed();
		die("rte_eal_init", err);
	}
	dev = qpio_rdma_dev_create(devargs);
	if (dev == NULL)
		die(devargs, rte_errno);
	end_init(&a, dev);
	end_init(&b, dev);
	end_connect(&a, dev, qpio_qp_num(b.qp));
	end_connect(&b, dev, qpio_qp_num(a.qp));
	for (i = 0; i < RING; i++) {
		post_recv(&a, (uint32_t)i);
		post_recv(&b, (uint32_t)i);
	}
	memset(msg, 0, sizeof(msg));
	for (i = 0; i < rounds; i++) {
		uint8_t *in;

		memcpy(msg, &i, sizeof(i));
		msg[8] = 'B';
		send_one(&a, msg);
		in = take_one(&b);
		memcpy(msg, in, msg_size);
		msg[8] = 'A';
		send_one(&b, msg);
		post_recv(&b, (uint32_t)((in - b.slot) / msg_size));
		in = take_one(&a);
		if (memcmp(in, &i, sizeof(i)) != 0 || in[8] != 'A')
			die("answer does not match the message", EPROTO);
		post_recv(&a, (uint32_t)((in - a.slot) / msg_size));
	}
	printf("qpio-bench-onemsg: %" PRIu64 " rounds of %u bytes on %s: "
	       "%" PRIu64 " posts of one SEND, every answer checked\n",
	       rounds, msg_size, devargs, 2 * rounds);
	qpio_eal_cleanup();
	return 0;
}
