/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-pingpong: an order message and its acknowledgement over one RC
 * queue pair per side, each side busy-polling on its own lcore.
 *
 * The gateway (main lcore) sends a small order as an inline SEND and spins
 * on its receive CQ until the exchange (worker lcore) answers with an ack
 * of the same size. Half of each round trip, measured with the TSC, goes
 * into a histogram printed at the end.
 *
 *   qpio-pingpong -l 2,3 --no-huge --no-shconf --no-pci -- --count 100000
 *
 * See doc/guides/sample_app_ug/pingpong.rst for lcore and CPU isolation.
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

#define RING 64u            /* receive slots and send queue depth */
#define MAX_COUNT 100000000u  /* --count: 8 bytes of samples each */
#define MAX_WARMUP 1000000000u
#define SIGNAL_EVERY 16u    /* one signaled SEND in 16 (selective signaling) */

/* The message on the wire: 32 bytes, sent inline (no DMA read of it). */
struct order {
	uint64_t order_id;
	uint32_t instrument;
	uint32_t quantity;
	int64_t price;          /* fixed point, 1e-4 */
	uint8_t side;           /* 'B' or 'S'; the ack echoes it */
	uint8_t status;         /* 0 new, 1 acknowledged */
	uint8_t pad[6];
};

struct side {
	struct qpio_pd *pd;
	struct qpio_cq *send_cq, *recv_cq;
	struct qpio_qp *qp;
	struct qpio_mr *mr;
	uint8_t *slot;          /* RING receive slots of msg_size bytes */
	uint64_t sent;
	int no_sge_burst;       /* the driver has no flat burst (-EOPNOTSUPP) */
};

static uint64_t count = 100000, warmup = 1000;
/* Bytes on the wire: the order, then zeros up to this size (--size). */
static uint32_t msg_size = sizeof(struct order);
#define MAX_SIZE 256u
/* --calibrate: before each order the two lcores bounce BOUNCES times, so
 * each sample carries the cross-core one-way time of its own moment (a
 * VM's vCPUs may move between near and distant cores within
 * milliseconds). Each lcore writes a line of its own (ping, pong) and
 * polls the other's, as the two ends of a queue do; on some hosts that
 * costs twice a bounce of one line both write (qpio-bench-cacheline
 * --lines 1 and 2). */
static int calibrate;
#define BOUNCES 8u
#define NEAR_NS 80.0            /* one-way below this: "near" placement */
static struct {
	volatile uint64_t ping __rte_cache_aligned;
	volatile uint64_t pong __rte_cache_aligned;
} bounce;
static const char *devargs = "soft0";
static const char *devargs_ex;  /* the exchange's own device (--dev twice) */

static void
die(const char *what, int err)
{
	fprintf(stderr, "qpio-pingpong: %s: %s\n", what, strerror(err));
	exit(1);
}

static void
side_init(struct side *s, struct qpio_device *dev)
{
	struct qpio_qp_init_attr ia = { 0 };

	s->pd = qpio_pd_alloc(dev);
	s->send_cq = qpio_cq_create(dev, RING, (int)rte_socket_id());
	s->recv_cq = qpio_cq_create(dev, RING, (int)rte_socket_id());
	s->slot = rte_zmalloc("pingpong", RING * msg_size, 64);
	if (s->pd == NULL || s->send_cq == NULL || s->recv_cq == NULL ||
	    s->slot == NULL)
		die("setup", rte_errno);
	s->mr = qpio_mr_reg(s->pd, s->slot, RING * msg_size,
			    QPIO_ACCESS_LOCAL_WRITE);
	if (s->mr == NULL)
		die("mr_reg", rte_errno);
	ia.send_cq = s->send_cq;
	ia.recv_cq = s->recv_cq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap.max_send_wr = RING;
	ia.cap.max_recv_wr = RING;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = msg_size;
	s->qp = qpio_qp_create(s->pd, &ia);
	if (s->qp == NULL)
		die("qp_create (inline messages need max_inline_data >= --size)",
		    rte_errno);
}

/* RESET -> INIT -> RTR -> RTS towards the peer QP on port 1 of peer_dev
 * (dev itself, or the other end's device): by its LID, or on RoCE by its
 * GID 0 (on a soft wire device the link-local one, whose MAC it names). */
static void
side_connect(struct side *s, struct qpio_device *dev,
	     struct qpio_device *peer_dev, uint32_t peer_qpn)
{
	struct qpio_port_attr pa, own;
	struct qpio_qp_attr a = { 0 };
	int ret;

	qpio_rdma_port_query(peer_dev, 1, &pa);
	qpio_rdma_port_query(dev, 1, &own);
	a.qp_state = QPIO_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = QPIO_ACCESS_LOCAL_WRITE;
	ret = qpio_qp_modify(s->qp, &a, QPIO_QP_STATE | QPIO_QP_PKEY_INDEX |
			     QPIO_QP_PORT | QPIO_QP_ACCESS_FLAGS);
	if (ret < 0)
		die("RESET->INIT", -ret);
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTR;
	a.path_mtu = RTE_MIN(pa.active_mtu, own.active_mtu);
	a.dest_qp_num = peer_qpn;
	a.min_rnr_timer = 1;
	a.ah_attr.dlid = pa.lid;
	a.ah_attr.port_num = 1;
	if (pa.lid == 0) {              /* RoCE: address the port by GID */
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.hop_limit = 1;
		qpio_rdma_gid_query(peer_dev, 1, 0, &a.ah_attr.grh.dgid);
	}
	ret = qpio_qp_modify(s->qp, &a, QPIO_QP_STATE | QPIO_QP_AV |
			     QPIO_QP_PATH_MTU | QPIO_QP_DEST_QPN | QPIO_QP_RQ_PSN |
			     QPIO_QP_MAX_DEST_RD_ATOMIC | QPIO_QP_MIN_RNR_TIMER);
	if (ret < 0)
		die("INIT->RTR", -ret);
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	ret = qpio_qp_modify(s->qp, &a, QPIO_QP_STATE | QPIO_QP_TIMEOUT |
			     QPIO_QP_RETRY_CNT | QPIO_QP_RNR_RETRY |
			     QPIO_QP_SQ_PSN | QPIO_QP_MAX_QP_RD_ATOMIC);
	if (ret < 0)
		die("RTR->RTS", -ret);
}

static void
post_recv(struct side *s, uint32_t i)
{
	struct qpio_sge sge = { (uintptr_t)(s->slot + (size_t)i * msg_size),
				msg_size, qpio_mr_lkey(s->mr) };
	struct qpio_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };

	if (qpio_qp_post_recv(s->qp, &wr, 1, NULL) != 1)
		die("post_recv", ENOSPC);
}

/* Inline SEND of one message of msg_size bytes, the order first: the
 * payload is copied during the post, so the stack copy may go away at once.
 * Every 16th is signaled, and polling the send CQ frees the slots of the
 * 15 before it. A SEND of one SGE goes through the flat burst call, which
 * builds no WR list (a driver without it says -EOPNOTSUPP: then the WR). */
static void
send_order(struct side *s, const void *o)
{
	struct qpio_sge sge = { (uintptr_t)o, msg_size, 0 };
	unsigned int flags = QPIO_SEND_INLINE |
		(s->sent % SIGNAL_EVERY == SIGNAL_EVERY - 1 ? QPIO_SEND_SIGNALED : 0);
	struct qpio_wc wc;
	int err = 0;

	while (!s->no_sge_burst &&
	       qpio_qp_post_send_sge(s->qp, &sge, 1, s->sent, flags, &err) != 1) {
		if (err == -EOPNOTSUPP) {
			s->no_sge_burst = 1;
			break;
		}
		if (err != -ENOMEM)
			die("post_send_sge", -err);
		qpio_cq_poll(s->send_cq, &wc, 1);       /* SQ full: reclaim */
	}
	if (s->no_sge_burst) {
		struct qpio_send_wr wr = { 0 };

		wr.wr_id = s->sent;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = QPIO_WR_SEND;
		wr.send_flags = flags;
		while (qpio_qp_post_send(s->qp, &wr, 1, NULL) != 1)
			qpio_cq_poll(s->send_cq, &wc, 1);
	}
	s->sent++;
	if (qpio_cq_poll(s->send_cq, &wc, 1) == 1 && wc.status != QPIO_WC_SUCCESS)
		die(qpio_wc_status_str(wc.status), EIO);
}

/* Busy-poll the receive CQ for one message; returns its slot. */
static uint8_t *
wait_message(struct side *s)
{
	struct qpio_wc wc;

	while (qpio_cq_poll(s->recv_cq, &wc, 1) == 0)
		;
	if (wc.status != QPIO_WC_SUCCESS)
		die(qpio_wc_status_str(wc.status), EIO);
	return s->slot + (size_t)wc.wr_id * msg_size;
}

/* The exchange: acknowledge every order. */
static int
exchange(void *arg)
{
	struct side *s = arg;
	uint64_t i;

	for (i = 0; i < warmup + count; i++) {
		uint8_t *in;

		if (calibrate) {
			uint64_t b;

			for (b = i * BOUNCES + 1; b <= (i + 1) * BOUNCES; b++) {
				while (bounce.ping != b)
					;
				bounce.pong = b;
			}
		}
		in = wait_message(s);
		union {
			struct order o;
			uint8_t b[MAX_SIZE];
		} ack;

		memcpy(ack.b, in, msg_size);
		ack.o.status = 1;
		send_order(s, &ack);
		post_recv(s, (uint32_t)((in - s->slot) / msg_size));
	}
	return 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The worst order of the run: its index among the measured orders, when
 * it was sent (TSC cycles after the first measured order was) and its
 * half round trip (cycles). */
struct worst {
	uint64_t index;
	uint64_t at;
	uint64_t half;
};

/* Half round trips in TSC cycles (sorted here): percentiles, the worst
 * order and log2 buckets. A percentile is the sample at rank
 * floor(p/100 * (n - 1)): p99.999 means something from 100000 orders on,
 * below that it is one of the last few samples. */
static void
print_histogram(uint64_t *v, uint64_t n, uint64_t hz, const struct worst *w)
{
	static const double pct[] = { 50, 90, 99, 99.9, 99.99, 99.999 };
	double ns = 1e9 / (double)hz;
	uint64_t i, lo = 0, b;

	qsort(v, n, sizeof(*v), cmp_u64);
	printf("half round trip over %" PRIu64 " orders: min %.0f ns", n,
	       (double)v[0] * ns);
	for (i = 0; i < RTE_DIM(pct); i++)
		printf(", p%g %.0f ns", pct[i],
		       (double)v[(uint64_t)(pct[i] / 100 * (double)(n - 1))] * ns);
	printf(", max %.0f ns\n", (double)v[n - 1] * ns);
	printf("worst order: #%" PRIu64 " of %" PRIu64 ", sent %.3f ms after "
	       "the first, half round trip %.0f ns\n", w->index, n,
	       (double)w->at * ns / 1e6, (double)w->half * ns);
	printf("%12s %10s\n", "ns below", "orders");
	for (b = 64; lo < n; b *= 2) {
		uint64_t k = 0;

		while (lo + k < n && (double)v[lo + k] * ns < (double)b)
			k++;
		if (k > 0 || lo > 0)
			printf("%12" PRIu64 " %10" PRIu64 " %.*s\n", b, k,
			       (int)(k * 50 / n), "##################################################");
		lo += k;
	}
}

/*
 * --calibrate: per placement (the one-way time of the bounce before each
 * order, below or above NEAR_NS), the p50 of the one-way time and of the
 * half round trip of the same orders, and their ratio. Sorts nothing in
 * place: half[] is printed as a whole after this.
 */
static void
print_calibrated(const uint64_t *half, const uint64_t *oneway, uint64_t n,
		 uint64_t hz)
{
	static const char *const name[2] = { "near", "far" };
	double ns = 1e9 / (double)hz;
	uint64_t *h = malloc(n * sizeof(*h)), *o = malloc(n * sizeof(*o));
	int p;

	if (h == NULL || o == NULL)
		die("samples", ENOMEM);
	printf("calibrated (one cache-line bounce before each order; near: "
	       "one-way below %.0f ns):\n", NEAR_NS);
	for (p = 0; p < 2; p++) {
		uint64_t i, k = 0;
		double ow, hr;

		for (i = 0; i < n; i++) {
			if (((double)oneway[i] * ns >= NEAR_NS) != p)
				continue;
			h[k] = half[i];
			o[k] = oneway[i];
			k++;
		}
		if (k == 0) {
			printf("  %s: no orders\n", name[p]);
			continue;
		}
		qsort(h, k, sizeof(*h), cmp_u64);
		qsort(o, k, sizeof(*o), cmp_u64);
		ow = (double)o[(k - 1) / 2] * ns;
		hr = (double)h[(k - 1) / 2] * ns;
		printf("  %s: %" PRIu64 " orders, one-way p50 %.0f ns, half round "
		       "trip p50 %.0f ns, %.1f one-way times\n", name[p], k, ow,
		       hr, ow > 0 ? hr / ow : 0);
	}
	free(h);
	free(o);
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: qpio-pingpong [EAL options] -- [--count N] "
		"[--warmup N] [--dev DEVARGS] [--size BYTES] [--calibrate]\n"
		"  --count N       orders measured, 1..%u (100000)\n"
		"  --warmup N      orders sent first, not measured, 0..%u (1000)\n"
		"  --dev DEVARGS   the rdma device (soft0); given twice, the\n"
		"                  gateway's, then the exchange's (e.g. two soft\n"
		"                  wire devices on the two ends of a link)\n"
		"  --size BYTES    message bytes, the order then zeros, %zu..%u "
		"(%zu)\n"
		"  --calibrate     time cross-core bounces before each order\n"
		"  -h, --help      this text\n"
		"Numbers are decimal digits only; each option is given once, --dev\n"
		"at most twice.\n",
		MAX_COUNT, MAX_WARMUP, sizeof(struct order), MAX_SIZE,
		sizeof(struct order));
}

/* A number option by lib/devargs' rule (decimal digits only: no sign, no
 * space, no 0x) in [lo, hi], named in the refusal. */
static int
parse_num(const char *opt, const char *s, uint64_t lo, uint64_t hi,
	  uint64_t *v)
{
	if (qpio_devargs_parse_u64(s, lo, hi, v) == 0)
		return 0;
	fprintf(stderr, "qpio-pingpong: %s=%s: want a decimal number in [%"
		PRIu64 ", %" PRIu64 "] (decimal digits only: no sign, no "
		"space, no 0x)\n", opt, s, lo, hi);
	return -EINVAL;
}

/* The options after EAL's "--" (argv[0] the program name). Returns 0, 1
 * after --help, -EINVAL after a message naming the option. */
static int
parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "dev", required_argument, NULL, 'd' },
		{ "size", required_argument, NULL, 's' },
		{ "calibrate", no_argument, NULL, 'c' },
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
			usage(stdout);
			return 1;
		}
		if (c == '?')
			return -EINVAL;
		/* A second value would replace the first without a word;
		 * --dev alone may come twice (the exchange's device). */
		if (c == 'd' && seen[c] == 1) {
			if (optarg[0] == '\0') {
				fprintf(stderr, "qpio-pingpong: --dev: give "
					"DEVARGS (the value is empty)\n");
				return -EINVAL;
			}
			devargs_ex = optarg;
			seen[c] = 2;
			continue;
		}
		if (c == 'd' && seen[c] == 2) {
			fprintf(stderr, "qpio-pingpong: --dev given three times: "
				"the gateway's device, then the exchange's\n");
			return -EINVAL;
		}
		if (seen[c]) {
			fprintf(stderr, "qpio-pingpong: --%s given twice: give "
				"each option once\n", longopts[li].name);
			return -EINVAL;
		}
		seen[c] = 1;
		switch (c) {
		case 'd':
			if (optarg[0] == '\0') {
				fprintf(stderr, "qpio-pingpong: --dev: give "
					"DEVARGS (the value is empty)\n");
				return -EINVAL;
			}
			devargs = optarg;
			break;
		case 'c':
			calibrate = 1;
			break;
		case 's':
			if (parse_num("--size", optarg, sizeof(struct order),
				      MAX_SIZE, &v) < 0)
				return -EINVAL;
			msg_size = (uint32_t)v;
			break;
		case 'n':
			if (parse_num("--count", optarg, 1, MAX_COUNT, &v) < 0)
				return -EINVAL;
			count = v;
			break;
		case 'w':
			if (parse_num("--warmup", optarg, 0, MAX_WARMUP, &v) < 0)
				return -EINVAL;
			warmup = v;
			break;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "qpio-pingpong: unexpected argument '%s' "
			"(options start with --; see --help)\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct side gw = { 0 }, ex = { 0 };
	struct qpio_device *dev, *dev_ex;
	uint64_t *half, *oneway, hz, i, t_first = 0;
	struct worst worst = { 0, 0, 0 };
	unsigned int worker;
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
	if (ret != 0)
		return ret > 0 ? 0 : 2;
	ret = rte_eal_init(sep, argv);
	if (ret < 0) {
		ret = rte_errno;
		qpio_eal_init_failed();
		die("rte_eal_init", ret);
	}
	worker = rte_get_next_lcore(-1, 1, 0);
	if (worker >= RTE_MAX_LCORE) {
		fprintf(stderr, "qpio-pingpong: needs two lcores (EAL -l 2,3)\n");
		qpio_eal_cleanup();
		return 2;
	}
	dev = qpio_rdma_dev_create(devargs);
	if (dev == NULL)
		die(devargs, rte_errno);
	dev_ex = dev;
	if (devargs_ex != NULL) {
		dev_ex = qpio_rdma_dev_create(devargs_ex);
		if (dev_ex == NULL)
			die(devargs_ex, rte_errno);
	}
	side_init(&gw, dev);
	side_init(&ex, dev_ex);
	side_connect(&gw, dev, dev_ex, qpio_qp_num(ex.qp));
	side_connect(&ex, dev_ex, dev, qpio_qp_num(gw.qp));
	for (i = 0; i < RING; i++) {
		post_recv(&gw, (uint32_t)i);
		post_recv(&ex, (uint32_t)i);
	}
	half = malloc(count * sizeof(*half));
	oneway = calibrate ? malloc(count * sizeof(*oneway)) : NULL;
	if (half == NULL || (calibrate && oneway == NULL))
		die("samples", ENOMEM);
	hz = rte_get_tsc_hz();
	printf("qpio-pingpong: %" PRIu64 " orders of %u bytes on %s%s%s, "
	       "gateway lcore %u, exchange lcore %u\n", count, msg_size,
	       devargs, devargs_ex != NULL ? " and " : "",
	       devargs_ex != NULL ? devargs_ex : "", rte_lcore_id(), worker);
	rte_eal_remote_launch(exchange, &ex, worker);

	for (i = 0; i < warmup + count; i++) {
		union {
			struct order o;
			uint8_t b[MAX_SIZE];
		} msg;
		uint64_t t0, t1;
		struct order ack;
		uint8_t *in;

		if (calibrate) {
			uint64_t c0 = rte_rdtsc(), b;

			for (b = i * BOUNCES + 1; b <= (i + 1) * BOUNCES; b++) {
				bounce.ping = b;
				while (bounce.pong != b)
					;
			}
			if (i >= warmup)
				oneway[i - warmup] = (rte_rdtsc() - c0) /
					(2 * BOUNCES);
		}

		/* The padding after the order goes out as zeros. */
		memset(msg.b, 0, msg_size);
		msg.o = (struct order){ .order_id = i, .instrument = 42,
					.quantity = 100, .price = 1234500,
					.side = 'B' };
		t0 = rte_rdtsc();
		send_order(&gw, &msg);
		in = wait_message(&gw);
		t1 = rte_rdtsc();
		memcpy(&ack, in, sizeof(ack));
		if (ack.order_id != i || ack.status != 1)
			die("ack does not match the order", EPROTO);
		post_recv(&gw, (uint32_t)((in - gw.slot) / msg_size));
		if (i == warmup)
			t_first = t0;
		if (i >= warmup) {
			half[i - warmup] = (t1 - t0) / 2;
			if (i == warmup || half[i - warmup] > worst.half)
				worst = (struct worst){ .index = i - warmup,
					.at = t0 - t_first,
					.half = half[i - warmup] };
		}
	}
	rte_eal_wait_lcore(worker);
	if (calibrate)
		print_calibrated(half, oneway, count, hz);
	print_histogram(half, count, hz, &worst);
	printf("posted with: %s\n", gw.no_sge_burst || ex.no_sge_burst ?
	       "qpio_qp_post_send() (the driver has no flat burst)" :
	       "qpio_qp_post_send_sge() (the flat burst)");
	free(oneway);
	free(half);
	qpio_eal_cleanup();
	return 0;
}
