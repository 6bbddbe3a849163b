/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-rc-msg: messages over a soft-NIC RC queue pair between two lcores.
 *
 * Phase 1 streams --count messages of --size bytes from the main lcore to
 * a worker lcore, which checks each one; phase 2 bounces one message back
 * and forth to measure round-trip latency. Both lcores run to completion:
 * post, poll, repost, with the device model running inside those calls.
 *
 *   qpio-rc-msg -l 0-1 --no-huge --no-shconf --no-pci -- --count 1000000
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
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "qpio_devargs.h"
#include "qpio_eal.h"
#include "qpio_rdma.h"

#define RQ_DEPTH 512u
#define SQ_DEPTH 512u
#define SLOT 2048u
#define PINGPONG_ROUNDS 20000u

struct end {
	struct qpio_device *dev;
	struct qpio_pd *pd;
	struct qpio_cq *cq;
	struct qpio_qp *qp;
	struct qpio_mr *mr;
	uint8_t *buf;            /* RQ_DEPTH receive slots, then SQ_DEPTH send slots */
};

static struct {
	uint64_t count;
	uint32_t size;
	uint32_t burst;
} opt = { 1000000, 64, 32 };

/* Receiver results. */
static uint64_t rx_msgs, rx_bytes, rx_bad;

static void
die(const char *what, int err)
{
	fprintf(stderr, "qpio-rc-msg: %s: %s\n", what, strerror(err));
	exit(1);
}

static void
usage(FILE *f, const char *prog)
{
	fprintf(f, "usage: %s [EAL options] -- [--count N] [--size BYTES] [--burst N]\n"
	       "  --count N     messages in the stream phase, 1..10^12\n"
	       "                (default 1000000)\n"
	       "  --size BYTES  payload bytes, 1..%u (default 64)\n"
	       "  --burst N     WRs per doorbell, 1..256 (default 32)\n"
	       "  -h, --help    this text\n"
	       "Numbers are decimal digits only; each option is given once.\n",
	       prog, SLOT);
}

/* A number option by lib/devargs' rule (decimal digits only: no sign, no
 * space, no 0x) in [lo, hi], named in the refusal. */
static int
parse_num(const char *opt, const char *s, uint64_t lo, uint64_t hi,
	  uint64_t *v)
{
	if (qpio_devargs_parse_u64(s, lo, hi, v) == 0)
		return 0;
	fprintf(stderr, "qpio-rc-msg: %s=%s: want a decimal number in [%" PRIu64
		", %" PRIu64 "] (decimal digits only: no sign, no space, no "
		"0x)\n", opt, s, lo, hi);
	return -EINVAL;
}

static int
parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "count", required_argument, NULL, 'c' },
		{ "size", required_argument, NULL, 's' },
		{ "burst", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned char seen[256] = { 0 };
	uint64_t v = 0;
	int c, li;

	for (;;) {
		li = -1;
		c = getopt_long(argc, argv, "h", longopts, &li);
		if (c == -1)
			break;
		if (c == 'h') {
			usage(stdout, argv[0]);
			exit(0);
		}
		if (c == '?')
			return -EINVAL;
		/* A second value would replace the first without a word. */
		if (seen[c]) {
			fprintf(stderr, "qpio-rc-msg: --%s given twice: give "
				"each option once\n", longopts[li].name);
			return -EINVAL;
		}
		seen[c] = 1;
		switch (c) {
		case 'c':
			if (parse_num("--count", optarg, 1, 1000000000000ull,
				      &v) < 0)
				return -EINVAL;
			opt.count = v;
			break;
		case 's':
			if (parse_num("--size", optarg, 1, SLOT, &v) < 0)
				return -EINVAL;
			opt.size = (uint32_t)v;
			break;
		case 'b':
			if (parse_num("--burst", optarg, 1, 256, &v) < 0)
				return -EINVAL;
			opt.burst = (uint32_t)v;
			break;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "qpio-rc-msg: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static void
end_init(struct end *e, const char *devargs)
{
	struct qpio_device_attr da;
	struct qpio_qp_init_attr ia;
	size_t len = (size_t)(RQ_DEPTH + SQ_DEPTH) * SLOT;

	e->dev = qpio_rdma_dev_create(devargs);
	if (e->dev == NULL)
		die(devargs, rte_errno);
	qpio_rdma_dev_query(e->dev, &da);
	e->pd = qpio_pd_alloc(e->dev);
	e->cq = qpio_cq_create(e->dev, RQ_DEPTH + SQ_DEPTH, (int)rte_socket_id());
	e->buf = rte_zmalloc_socket("rc_msg", len, 64, (int)rte_socket_id());
	if (e->pd == NULL || e->cq == NULL || e->buf == NULL)
		die("setup", rte_errno);
	e->mr = qpio_mr_reg(e->pd, e->buf, len, QPIO_ACCESS_LOCAL_WRITE);
	if (e->mr == NULL)
		die("mr_reg", rte_errno);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap.max_send_wr = SQ_DEPTH;
	ia.cap.max_recv_wr = RQ_DEPTH;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = RTE_MIN(da.max_inline_data, 256u);
	e->qp = qpio_qp_create(e->pd, &ia);
	if (e->qp == NULL)
		die("qp_create", rte_errno);
}

static void
connect_qp(struct end *e, const struct end *peer)
{
	struct qpio_port_attr pa;
	struct qpio_qp_attr a;
	int ret;

	qpio_rdma_port_query(peer->dev, 1, &pa);
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = QPIO_ACCESS_LOCAL_WRITE;
	ret = qpio_qp_modify(e->qp, &a, QPIO_QP_STATE | QPIO_QP_PKEY_INDEX |
			     QPIO_QP_PORT | QPIO_QP_ACCESS_FLAGS);
	if (ret < 0)
		die("RESET->INIT", -ret);
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTR;
	a.path_mtu = QPIO_MTU_4096;
	a.dest_qp_num = qpio_qp_num(peer->qp);
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;        /* 10 us */
	a.ah_attr.dlid = pa.lid;
	a.ah_attr.port_num = 1;
	ret = qpio_qp_modify(e->qp, &a, QPIO_QP_STATE | QPIO_QP_AV |
			     QPIO_QP_PATH_MTU | QPIO_QP_DEST_QPN |
			     QPIO_QP_RQ_PSN | QPIO_QP_MAX_DEST_RD_ATOMIC |
			     QPIO_QP_MIN_RNR_TIMER);
	if (ret < 0)
		die("INIT->RTR", -ret);
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;            /* retry forever */
	a.max_rd_atomic = 1;
	ret = qpio_qp_modify(e->qp, &a, QPIO_QP_STATE | QPIO_QP_TIMEOUT |
			     QPIO_QP_RETRY_CNT | QPIO_QP_RNR_RETRY |
			     QPIO_QP_SQ_PSN | QPIO_QP_MAX_QP_RD_ATOMIC);
	if (ret < 0)
		die("RTR->RTS", -ret);
}

static inline void
post_recv_slot(struct end *e, uint32_t slot)
{
	struct qpio_sge sge = {
		.addr = (uintptr_t)e->buf + (uint64_t)slot * SLOT,
		.length = SLOT, .lkey = qpio_mr_lkey(e->mr),
	};
	struct qpio_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 };

	qpio_qp_post_recv(e->qp, &wr, 1, NULL);
}

static inline void
fill(uint8_t *p, uint64_t seq, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seq + i);
}

static inline int
check(const uint8_t *p, uint64_t seq, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (uint8_t)(seq + i))
			return 0;
	return 1;
}

/* Post one message of opt.size bytes with sequence seq; 1 if posted. */
static inline int
send_one(struct end *e, uint64_t seq, unsigned int flags)
{
	uint8_t *p = e->buf + (uint64_t)(RQ_DEPTH + seq % SQ_DEPTH) * SLOT;
	struct qpio_sge sge = { (uintptr_t)p, opt.size, qpio_mr_lkey(e->mr) };
	struct qpio_send_wr wr;

	fill(p, seq, opt.size);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = seq;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = QPIO_WR_SEND;
	wr.send_flags = flags | (opt.size <= 64 ? QPIO_SEND_INLINE : 0);
	return qpio_qp_post_send(e->qp, &wr, 1, NULL);
}

static int
receiver(void *arg)
{
	struct end *e = arg;
	struct qpio_wc wc[64];
	uint64_t pongs = 0, msgs = 0, bytes = 0, bad = 0;
	uint32_t i;

	for (i = 0; i < RQ_DEPTH; i++)
		post_recv_slot(e, i);
	/* Stream phase: check every message in order. The counts are the
	 * receiver's own; each poll publishes them with a release store that
	 * pairs with the main lcore's acquire load of rx_msgs. */
	while (msgs < opt.count) {
		uint16_t n = qpio_cq_poll(e->cq, wc, RTE_DIM(wc));

		for (i = 0; i < n; i++) {
			const uint8_t *p = e->buf + wc[i].wr_id * SLOT;

			if (wc[i].status != QPIO_WC_SUCCESS ||
			    wc[i].opcode != QPIO_WC_RECV ||
			    wc[i].byte_len != opt.size ||
			    !check(p, msgs, opt.size))
				bad++;
			bytes += wc[i].byte_len;
			msgs++;
			post_recv_slot(e, (uint32_t)wc[i].wr_id);
		}
		if (n != 0) {
			rx_bad = bad;
			rx_bytes = bytes;
			__atomic_store_n(&rx_msgs, msgs, __ATOMIC_RELEASE);
		}
	}
	/* Pingpong phase: echo each message back. */
	while (pongs < PINGPONG_ROUNDS) {
		uint16_t n = qpio_cq_poll(e->cq, wc, RTE_DIM(wc));

		for (i = 0; i < n; i++) {
			if (wc[i].opcode != QPIO_WC_RECV)
				continue; /* our own signaled pong */
			post_recv_slot(e, (uint32_t)wc[i].wr_id);
			while (send_one(e, pongs, QPIO_SEND_SIGNALED) != 1)
				qpio_cq_poll(e->cq, wc + n, 0);
			pongs++;
		}
	}
	return 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	struct end a, b;
	struct qpio_wc wc[64];
	uint64_t sent = 0, done = 0, t0, t1, *rtt, hz;
	unsigned int worker;
	uint32_t i;
	int ret, sep;

	/* The options after "--" are read before EAL starts, so a refused
	 * line sets up nothing; argv[sep] becomes their argv[0]. */
	for (sep = 1; sep < argc; sep++)
		if (strcmp(argv[sep], "--") == 0)
			break;
	if (sep < argc) {
		argv[sep] = argv[0];
		ret = parse_args(argc - sep, &argv[sep]);
	} else {
		ret = parse_args(1, argv);
	}
	if (ret < 0) {
		usage(stderr, "qpio-rc-msg");
		return 2;
	}
	ret = rte_eal_init(sep, argv);
	if (ret < 0) {
		ret = rte_errno;
		qpio_eal_init_failed();
		die("rte_eal_init", ret);
	}
	worker = rte_get_next_lcore(-1, 1, 0);
	if (worker >= RTE_MAX_LCORE) {
		fprintf(stderr, "qpio-rc-msg: needs two lcores (EAL option -l 0-1)\n");
		qpio_eal_cleanup();
		return 2;
	}
	end_init(&a, "soft0");
	end_init(&b, "soft1");
	connect_qp(&a, &b);
	connect_qp(&b, &a);
	hz = rte_get_tsc_hz();
	printf("qpio-rc-msg: %" PRIu64 " messages of %u bytes, burst %u, "
	       "soft0 qp 0x%x (lcore %u) -> soft1 qp 0x%x (lcore %u)\n",
	       opt.count, opt.size, opt.burst, qpio_qp_num(a.qp),
	       rte_lcore_id(), qpio_qp_num(b.qp), worker);

	rte_eal_remote_launch(receiver, &b, worker);

	/* Stream: bursts of opt.burst, one signaled WR per burst. */
	t0 = rte_get_tsc_cycles();
	while (done < opt.count) {
		struct qpio_send_wr wrs[256];
		struct qpio_sge sges[256];
		uint32_t n = (uint32_t)RTE_MIN((uint64_t)opt.burst, opt.count - sent);

		if (sent - done + n > SQ_DEPTH)
			n = 0;
		for (i = 0; i < n; i++) {
			uint64_t seq = sent + i;
			uint8_t *p = a.buf + (uint64_t)(RQ_DEPTH + seq % SQ_DEPTH) * SLOT;

			fill(p, seq, opt.size);
			sges[i] = (struct qpio_sge){ (uintptr_t)p, opt.size,
						     qpio_mr_lkey(a.mr) };
			memset(&wrs[i], 0, sizeof(wrs[i]));
			wrs[i].wr_id = seq;
			wrs[i].sg_list = &sges[i];
			wrs[i].num_sge = 1;
			wrs[i].opcode = QPIO_WR_SEND;
			wrs[i].send_flags = (i == n - 1 ? QPIO_SEND_SIGNALED : 0) |
				(opt.size <= 64 ? QPIO_SEND_INLINE : 0);
		}
		if (n > 0)
			sent += qpio_qp_post_send(a.qp, wrs, (uint16_t)n, NULL);
		ret = qpio_cq_poll(a.cq, wc, RTE_DIM(wc));
		for (i = 0; i < (uint32_t)ret; i++) {
			if (wc[i].status != QPIO_WC_SUCCESS) {
				fprintf(stderr, "qpio-rc-msg: send %" PRIu64 " failed: %s\n",
					wc[i].wr_id, qpio_wc_status_str(wc[i].status));
				return 1;
			}
			done = wc[i].wr_id + 1;
		}
	}
	while (__atomic_load_n(&rx_msgs, __ATOMIC_ACQUIRE) < opt.count)
		rte_pause();
	t1 = rte_get_tsc_cycles();

	/* Pingpong: one message in flight, round-trip time per message. */
	rtt = calloc(PINGPONG_ROUNDS, sizeof(*rtt));
	for (i = 0; i < RQ_DEPTH; i++)
		post_recv_slot(&a, i);
	for (i = 0; i < PINGPONG_ROUNDS; i++) {
		uint64_t s = rte_get_tsc_cycles();
		int got = 0;

		while (send_one(&a, i, QPIO_SEND_SIGNALED) != 1)
			qpio_cq_poll(a.cq, wc, 1);
		while (!got) {
			uint16_t n = qpio_cq_poll(a.cq, wc, RTE_DIM(wc));

			for (uint16_t k = 0; k < n; k++)
				if (wc[k].opcode == QPIO_WC_RECV) {
					got = 1;
					post_recv_slot(&a, (uint32_t)wc[k].wr_id);
				}
		}
		rtt[i] = rte_get_tsc_cycles() - s;
	}
	rte_eal_wait_lcore(worker);
	qsort(rtt, PINGPONG_ROUNDS, sizeof(*rtt), cmp_u64);

	printf("received: %" PRIu64 " messages, %" PRIu64 " bytes, %" PRIu64
	       " bad\n", rx_msgs, rx_bytes, rx_bad);
	printf("rate: %.2f Mmsg/s, %.2f Gbit/s over %.3f s\n",
	       (double)opt.count / ((double)(t1 - t0) / (double)hz) / 1e6,
	       (double)rx_bytes * 8 / ((double)(t1 - t0) / (double)hz) / 1e9,
	       (double)(t1 - t0) / (double)hz);
	printf("round trip (%u pingpongs): p50 %.2f us, p99 %.2f us, max %.2f us\n",
	       PINGPONG_ROUNDS,
	       (double)rtt[PINGPONG_ROUNDS / 2] * 1e6 / (double)hz,
	       (double)rtt[PINGPONG_ROUNDS * 99 / 100] * 1e6 / (double)hz,
	       (double)rtt[PINGPONG_ROUNDS - 1] * 1e6 / (double)hz);
	free(rtt);
	qpio_eal_cleanup();
	return rx_bad == 0 && rx_msgs == opt.count ? 0 : 1;
}
