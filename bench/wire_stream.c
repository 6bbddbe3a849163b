/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-bench-wire: a stream of RC SENDs between two soft wire devices on
 * one lcore, for counting the instructions of the wire transport per
 * message (bench/wire-vs-memif.sh -i runs it under callgrind).
 *
 * Two ethdevs over a pair of rte_rings (rte_eth_from_rings(): what A's tx
 * queue enqueues, B's rx queue dequeues, and back), a soft wire device on
 * each (soft0 10.0.0.1, soft1 10.0.0.2, static neighbours: no ARP), one
 * RC QP each, path MTU 1024, connected from their IPv4 GIDs. The sender
 * keeps up to --depth SENDs of --size bytes in flight (inline when they
 * fit, one in 16 signaled, posted as one array of up to 32 a doorbell, as
 * ib_send_bw -l does) and polls its CQ, which runs its device's progress
 * step (the ACKs); the receiver polls its CQ (its device's step: the
 * SENDs, their ACKs sent) and posts the receives again as one array. The
 * two are the functions sender() and receiver(), whose inclusive costs
 * callgrind splits. Every message's payload is checked (a 64-bit sequence
 * number at its start).
 *
 *   qpio-bench-wire [EAL options] -- [--count N] [--size BYTES]
 *                   [--depth N]
 *
 * Prints one line with the messages, seconds and the rate of both ends
 * on one lcore (not the figure of two lcores: bench/wire-vs-memif.sh
 * measures that). Exit 0 after N messages, 1 on a failed call, a
 * completion in error or a wrong payload, 2 on a refused option.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "qpio_devargs.h"
#include "qpio_eal.h"
#include "qpio_rdma.h"

#define SIGNAL_EVERY 16u
#define LIST 32u             /* WRs a doorbell, receives a post */
#define MAX_DEPTH 512u
#define MAX_SIZE 1024u       /* one packet at path MTU 1024 */

struct end {
	struct qpio_device *dev;
	struct qpio_pd *pd;
	struct qpio_cq *cq;
	struct qpio_qp *qp;
	struct qpio_mr *mr;
	uint8_t *buf;             /* depth slots of msg_size bytes */
	uint32_t max_inline;
};

static uint64_t count = 200000;
static uint32_t msg_size = 64;
static uint32_t depth = 128;

/* the stream's state */
static uint64_t posted, acked, received;

static void
die(const char *what, int err)
{
	fprintf(stderr, "qpio-bench-wire: %s: %s\n", what, strerror(err));
	exit(1);
}

/* An ethdev over rings rx and tx: its name into name. */
static void
eth_of_rings(const char *what, struct rte_ring *rx, struct rte_ring *tx,
	     char name[RTE_ETH_NAME_MAX_LEN])
{
	int pid = rte_eth_from_rings(what, &rx, 1, &tx, 1, (int)rte_socket_id());

	if (pid < 0 || rte_eth_dev_get_name_by_port((uint16_t)pid, name) != 0)
		die("rte_eth_from_rings", rte_errno);
}

static void
end_init(struct end *e, const char *devargs)
{
	struct qpio_qp_init_attr ia = { 0 };
	struct qpio_device_attr da;

	e->dev = qpio_rdma_dev_create(devargs);
	if (e->dev == NULL)
		die(devargs, rte_errno);
	if (qpio_rdma_dev_query(e->dev, &da) != 0)
		die("dev_query", EINVAL);
	e->max_inline = da.max_inline_data;
	e->pd = qpio_pd_alloc(e->dev);
	e->cq = qpio_cq_create(e->dev, 2 * MAX_DEPTH, (int)rte_socket_id());
	e->buf = rte_zmalloc("wire_stream", (size_t)depth * msg_size, 64);
	if (e->pd == NULL || e->cq == NULL || e->buf == NULL)
		die("setup", rte_errno);
	e->mr = qpio_mr_reg(e->pd, e->buf, (size_t)depth * msg_size,
			    QPIO_ACCESS_LOCAL_WRITE);
	if (e->mr == NULL)
		die("mr_reg", rte_errno);
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap.max_send_wr = depth;
	ia.cap.max_recv_wr = depth;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = RTE_MIN(msg_size, e->max_inline);
	e->qp = qpio_qp_create(e->pd, &ia);
	if (e->qp == NULL)
		die("qp_create", rte_errno);
}

/* RESET -> RTS towards the peer's QP at its IPv4 GID (index 1). */
static void
end_connect(struct end *e, const struct end *peer)
{
	struct qpio_qp_attr a = { 0 };

	a.qp_state = QPIO_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = QPIO_ACCESS_LOCAL_WRITE;
	if (qpio_qp_modify(e->qp, &a, QPIO_QP_STATE | QPIO_QP_PKEY_INDEX |
			   QPIO_QP_PORT | QPIO_QP_ACCESS_FLAGS) < 0)
		die("RESET->INIT", EINVAL);
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTR;
	a.path_mtu = QPIO_MTU_1024;
	a.dest_qp_num = qpio_qp_num(peer->qp);
	a.min_rnr_timer = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 64;
	if (qpio_rdma_gid_query(peer->dev, 1, 1, &a.ah_attr.grh.dgid) != 0)
		die("gid_query", EINVAL);
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

/* Receives for slots [first, first + n) of e (n at most LIST), as one
 * post. */
static void
post_recvs(struct end *e, uint32_t first, uint32_t n)
{
	struct qpio_sge sge[LIST];
	struct qpio_recv_wr wr[LIST];
	uint32_t i;

	for (i = 0; i < n; i++) {
		uint32_t slot = (first + i) % depth;

		sge[i].addr = (uintptr_t)(e->buf + (size_t)slot * msg_size);
		sge[i].length = msg_size;
		sge[i].lkey = qpio_mr_lkey(e->mr);
		wr[i].wr_id = slot;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
	}
	if (qpio_qp_post_recv(e->qp, wr, n, NULL) != (int)n)
		die("post_recv", ENOSPC);
}

/* The sender's turn: an array of SENDs into the window, then one poll of
 * its CQ (its device's progress step: the ACKs). */
static __attribute__((noinline)) void
sender(struct end *a)
{
	struct qpio_sge sge[LIST];
	struct qpio_send_wr wr[LIST];
	struct qpio_wc wc[LIST];
	uint32_t n = 0, i;
	uint16_t got;
	int err = 0;

	while (n < LIST && posted + n < count && posted + n - acked < depth) {
		uint64_t seq = posted + n;
		uint8_t *p = a->buf + (size_t)(seq % depth) * msg_size;

		memcpy(p, &seq, sizeof(seq));
		sge[n].addr = (uintptr_t)p;
		sge[n].length = msg_size;
		sge[n].lkey = qpio_mr_lkey(a->mr);
		memset(&wr[n], 0, sizeof(wr[n]));
		wr[n].wr_id = seq;
		wr[n].sg_list = &sge[n];
		wr[n].num_sge = 1;
		wr[n].opcode = QPIO_WR_SEND;
		wr[n].send_flags = (msg_size <= a->max_inline ?
				    QPIO_SEND_INLINE : 0) |
			(seq % SIGNAL_EVERY == SIGNAL_EVERY - 1 ?
			 QPIO_SEND_SIGNALED : 0);
		n++;
	}
	if (n > 0) {
		if (qpio_qp_post_send(a->qp, wr, n, &err) != (int)n)
			die("post_send", -err);
		posted += n;
	}
	got = qpio_cq_poll(a->cq, wc, LIST);
	for (i = 0; i < got; i++) {
		if (wc[i].status != QPIO_WC_SUCCESS)
			die(qpio_wc_status_str(wc[i].status), EIO);
		/* a signaled SEND completes the SIGNAL_EVERY before it */
		acked = wc[i].wr_id + 1;
	}
}

/* The receiver's turn: one poll of its CQ (its device's progress step:
 * the SENDs, their ACKs), every payload checked, the receives posted
 * again. */
static __attribute__((noinline)) void
receiver(struct end *b)
{
	struct qpio_wc wc[LIST];
	uint16_t got, i;

	got = qpio_cq_poll(b->cq, wc, LIST);
	for (i = 0; i < got; i++) {
		uint64_t seq;

		if (wc[i].status != QPIO_WC_SUCCESS)
			die(qpio_wc_status_str(wc[i].status), EIO);
		memcpy(&seq, b->buf + wc[i].wr_id * msg_size, sizeof(seq));
		if (wc[i].byte_len != msg_size || seq != received)
			die("a message out of order or of another length",
			    EPROTO);
		received++;
	}
	if (got > 0)
		post_recvs(b, (uint32_t)(wc[0].wr_id), got);
}

static int
parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 's' },
		{ "depth", required_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "n:s:q:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (qpio_devargs_parse_u64(optarg, SIGNAL_EVERY,
						   1000000000, &v) != 0 ||
			    v % SIGNAL_EVERY != 0)
				goto bad;
			count = v;
			break;
		case 's':
			if (qpio_devargs_parse_u64(optarg, 8, MAX_SIZE, &v) != 0)
				goto bad;
			msg_size = (uint32_t)v;
			break;
		case 'q':
			if (qpio_devargs_parse_u64(optarg, LIST, MAX_DEPTH,
						   &v) != 0 ||
			    v % SIGNAL_EVERY != 0)
				goto bad;
			depth = (uint32_t)v;
			break;
		case 'h':
			printf("usage: qpio-bench-wire [EAL options] -- "
			       "[--count N (multiple of %u, up to 1000000000; "
			       "200000)] [--size BYTES (8..%u, 64)] "
			       "[--depth N (multiple of %u, %u..%u; 128)]\n",
			       SIGNAL_EVERY, MAX_SIZE, SIGNAL_EVERY, LIST,
			       MAX_DEPTH);
			return 1;
		default:
			return -EINVAL;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "qpio-bench-wire: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
bad:
	fprintf(stderr, "qpio-bench-wire: -%c %s: want decimal digits in range "
		"(--count a multiple of %u up to 1000000000, --size 8..%u, "
		"--depth a multiple of %u in %u..%u)\n", c, optarg,
		SIGNAL_EVERY, MAX_SIZE, SIGNAL_EVERY, LIST, MAX_DEPTH);
	return -EINVAL;
}

int
main(int argc, char **argv)
{
	struct end a = { 0 }, b = { 0 };
	struct rte_ring *ab, *ba;
	char na[RTE_ETH_NAME_MAX_LEN], nb[RTE_ETH_NAME_MAX_LEN], args[256];
	uint64_t t0, t1, spins = 0;
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
	ab = rte_ring_create("wire_stream_ab", 4096, (int)rte_socket_id(),
			     RING_F_SP_ENQ | RING_F_SC_DEQ);
	ba = rte_ring_create("wire_stream_ba", 4096, (int)rte_socket_id(),
			     RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (ab == NULL || ba == NULL)
		die("rte_ring_create", rte_errno);
	eth_of_rings("wire_stream_a", ba, ab, na);
	eth_of_rings("wire_stream_b", ab, ba, nb);
	/* net_ring ports have the MAC 00:00:00:00:00:00 */
	snprintf(args, sizeof(args), "soft0,wire=%s,ip=10.0.0.1,"
		 "neigh=10.0.0.2@00:00:00:00:00:00", na);
	end_init(&a, args);
	snprintf(args, sizeof(args), "soft1,wire=%s,ip=10.0.0.2,"
		 "neigh=10.0.0.1@00:00:00:00:00:00", nb);
	end_init(&b, args);
	end_connect(&a, &b);
	end_connect(&b, &a);
	for (uint32_t i = 0; i < depth; i += LIST)
		post_recvs(&b, i, LIST);
	t0 = rte_get_timer_cycles();
	while (received < count || acked < count) {
		uint64_t before = posted + received + acked;

		sender(&a);
		receiver(&b);
		/* nothing moved for 2^24 turns in a row: longer than the
		 * ACK timeout (67 ms at timeout 14) that would bring a lost
		 * packet back: a bug */
		if (posted + received + acked != before)
			spins = 0;
		else if (++spins > (1u << 24))
			die("no progress", ETIMEDOUT);
	}
	t1 = rte_get_timer_cycles();
	printf("qpio-bench-wire: %" PRIu64 " messages of %u bytes, depth %u, "
	       "in %.3f s: %.3f Mpps on one lcore (sender and receiver), "
	       "every payload checked\n", count, msg_size, depth,
	       (double)(t1 - t0) / rte_get_timer_hz(),
	       count / ((double)(t1 - t0) / rte_get_timer_hz()) / 1e6);
	qpio_eal_cleanup();
	return 0;
}
