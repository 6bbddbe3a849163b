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
 * With --listen and --connect the two sides are two processes (two hosts,
 * or the two ends of a link), connected by lib/cm: the exchange listens,
 * the gateway connects and measures.
 *
 * See doc/guides/sample_app_ug/pingpong.rst for lcore and CPU isolation.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "qpio_cm.h"
#include "qpio_devargs.h"
#include "qpio_eal.h"
#include "qpio_rdma.h"
#include "qpio_soft.h"

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
	/* Two processes (--listen, --connect): the connection's channel,
	 * looked at now and then while the side waits for a message. */
	struct qpio_cm_channel *ch;
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
/* Two processes: --listen [HOST:]PORT (the exchange) or --connect
 * HOST:PORT (the gateway); host NULL: every address of the device. */
static int listen_mode, connect_mode;
static char cm_host[64], cm_port[8];

/* What the gateway tells the exchange in its connect request (lib/cm's
 * private data, big endian): the message size and how many orders come,
 * warm-up included, so the exchange sizes its QP and knows when it is
 * done. */
#define HELLO_MAGIC 0x51505047u   /* "QPPG" */
struct hello {
	uint32_t magic;
	uint32_t size;
	uint64_t orders;
};

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

static void
die_event(const char *what, const struct qpio_cm_event *ev)
{
	fprintf(stderr, "qpio-pingpong: %s: %s (%s)\n", what,
		qpio_cm_event_str(ev->type), strerror(-ev->status));
	exit(1);
}

/* Busy-poll the receive CQ for one message; returns its slot. Two
 * processes: every 65536 empty polls the connection is looked at, so a
 * peer that disconnects (or whose socket closes) ends the wait, and so
 * does IDLE_LIMIT_S seconds without a message (a peer process that died
 * on the wire sent no disconnect; a live one answers in microseconds). */
#define IDLE_LIMIT_S 10u
static uint8_t *
wait_message(struct side *s)
{
	struct qpio_cm_event ev;
	struct qpio_wc wc;
	uint64_t t0 = 0;
	uint32_t idle = 0;

	while (qpio_cq_poll(s->recv_cq, &wc, 1) == 0) {
		if (s->ch == NULL || ++idle % 65536 != 0)
			continue;
		if (qpio_cm_poll(s->ch, &ev) == 1)
			die_event("connection", &ev);
		if (t0 == 0)
			t0 = rte_get_tsc_cycles();
		else if (rte_get_tsc_cycles() - t0 >
			 IDLE_LIMIT_S * rte_get_tsc_hz()) {
			fprintf(stderr, "qpio-pingpong: no message from the "
				"peer for %u s: it is gone (a process that "
				"dies leaves no disconnect on the wire)\n",
				IDLE_LIMIT_S);
			exit(1);
		}
	}
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
		"                     [--listen [HOST:]PORT | --connect HOST:PORT]\n"
		"  --count N       orders measured, 1..%u (100000)\n"
		"  --warmup N      orders sent first, not measured, 0..%u (1000)\n"
		"  --dev DEVARGS   the rdma device (soft0); given twice, the\n"
		"                  gateway's, then the exchange's (e.g. two soft\n"
		"                  wire devices on the two ends of a link)\n"
		"  --size BYTES    message bytes, the order then zeros, %zu..%u "
		"(%zu)\n"
		"  --calibrate     time cross-core bounces before each order\n"
		"  --listen [HOST:]PORT\n"
		"                  be the exchange only, in this process: answer\n"
		"                  the orders of one gateway that connects (lib/cm;\n"
		"                  PORT 0: a free one, printed); one lcore\n"
		"  --connect HOST:PORT\n"
		"                  be the gateway only: connect to an exchange's\n"
		"                  --listen and measure; one lcore ([v6 address]:PORT)\n"
		"  -h, --help      this text\n"
		"Numbers are decimal digits only; each option is given once, --dev\n"
		"at most twice (not with --listen or --connect).\n",
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

/*
 * [HOST:]PORT of --listen (need_host 0: HOST may be left out, PORT
 * 0..65535) or HOST:PORT of --connect (PORT 1..65535) into cm_host and
 * cm_port; an IPv6 HOST goes in brackets ([fd00::1]:5000). @return 0, or
 * -EINVAL after a message naming the option and the rule.
 */
static int
parse_endpoint(const char *opt, const char *v, int need_host)
{
	const char *colon = strrchr(v, ':'), *host = v, *port = v;
	size_t hlen = 0;
	uint64_t p;

	if (v[0] == '[') {
		const char *end = strchr(v, ']');

		if (end == NULL || end[1] != ':') {
			fprintf(stderr, "qpio-pingpong: %s=%s: want [IPv6 "
				"host]:PORT, the port after the bracket "
				"([fd00::1]:5000)\n", opt, v);
			return -EINVAL;
		}
		colon = end + 1;
	}
	if (colon != NULL) {
		port = colon + 1;
		hlen = (size_t)(colon - v);
		if (hlen > 1 && v[0] == '[' && v[hlen - 1] == ']') {
			host = v + 1;
			hlen -= 2;
		} else if (memchr(v, ':', hlen) != NULL) {
			fprintf(stderr, "qpio-pingpong: %s=%s: an IPv6 host goes "
				"in brackets: [fd00::1]:5000\n", opt, v);
			return -EINVAL;
		}
		if (hlen == 0 || hlen >= sizeof(cm_host)) {
			fprintf(stderr, "qpio-pingpong: %s=%s: want HOST:PORT "
				"with a host of 1..%zu characters\n", opt, v,
				sizeof(cm_host) - 1);
			return -EINVAL;
		}
	} else if (need_host) {
		fprintf(stderr, "qpio-pingpong: %s=%s: want HOST:PORT (the "
			"exchange's address and its --listen port)\n", opt, v);
		return -EINVAL;
	}
	if (qpio_devargs_parse_u64(port, need_host ? 1 : 0, 65535, &p) != 0) {
		fprintf(stderr, "qpio-pingpong: %s=%s: the port must be a "
			"decimal number in [%d, 65535] (decimal digits only)\n",
			opt, v, need_host ? 1 : 0);
		return -EINVAL;
	}
	memcpy(cm_host, host, hlen);
	cm_host[hlen] = '\0';
	snprintf(cm_port, sizeof(cm_port), "%u", (unsigned int)p);
	return 0;
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
		{ "listen", required_argument, NULL, 'L' },
		{ "connect", required_argument, NULL, 'C' },
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
		case 'L':
			if (parse_endpoint("--listen", optarg, 0) < 0)
				return -EINVAL;
			listen_mode = 1;
			break;
		case 'C':
			if (parse_endpoint("--connect", optarg, 1) < 0)
				return -EINVAL;
			connect_mode = 1;
			break;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "qpio-pingpong: unexpected argument '%s' "
			"(options start with --; see --help)\n", argv[optind]);
		return -EINVAL;
	}
	if (listen_mode && connect_mode) {
		fprintf(stderr, "qpio-pingpong: --listen and --connect: a "
			"process is the exchange (--listen) or the gateway "
			"(--connect), not both\n");
		return -EINVAL;
	}
	if ((listen_mode || connect_mode) && devargs_ex != NULL) {
		fprintf(stderr, "qpio-pingpong: --dev given twice with --%s: "
			"one process is one side, on one device (give --dev "
			"once)\n", listen_mode ? "listen" : "connect");
		return -EINVAL;
	}
	if (listen_mode && (seen['s'] || seen['n'] || seen['w'])) {
		fprintf(stderr, "qpio-pingpong: --%s with --listen: the "
			"gateway's --connect sets the size and the orders (its "
			"request carries them)\n", seen['s'] ? "size" :
			seen['n'] ? "count" : "warmup");
		return -EINVAL;
	}
	if ((listen_mode || connect_mode) && calibrate) {
		fprintf(stderr, "qpio-pingpong: --calibrate with --%s: the "
			"bounce needs both sides in one process\n",
			listen_mode ? "listen" : "connect");
		return -EINVAL;
	}
	return 0;
}

/* The gateway's loop: warmup + count orders, one at a time, each answer
 * checked; the half round trips of the measured ones into half[] (TSC
 * cycles), with --calibrate the one-way time before each into oneway[],
 * the worst order into *w. */
static void
gateway(struct side *gw, uint64_t *half, uint64_t *oneway, struct worst *w)
{
	uint64_t i, t_first = 0;

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
		send_order(gw, &msg);
		in = wait_message(gw);
		t1 = rte_rdtsc();
		memcpy(&ack, in, sizeof(ack));
		if (ack.order_id != i || ack.status != 1)
			die("ack does not match the order", EPROTO);
		post_recv(gw, (uint32_t)((in - gw->slot) / msg_size));
		if (i == warmup)
			t_first = t0;
		if (i >= warmup) {
			half[i - warmup] = (t1 - t0) / 2;
			if (i == warmup || half[i - warmup] > w->half)
				*w = (struct worst){ .index = i - warmup,
					.at = t0 - t_first,
					.half = half[i - warmup] };
		}
	}
}

/* Poll ch for its next connection event, for limit_s seconds at most
 * (0: no limit); die unless it is of type. @return 1, or 0 when the
 * time ran out. */
static int
wait_event_for(struct qpio_cm_channel *ch, enum qpio_cm_event_type type,
	       const char *what, unsigned int limit_s, struct qpio_cm_event *ev)
{
	uint64_t end = rte_get_tsc_cycles() + limit_s * rte_get_tsc_hz();
	int ret;

	while ((ret = qpio_cm_poll(ch, ev)) == 0)
		if (limit_s != 0 && rte_get_tsc_cycles() > end)
			return 0;
	if (ret < 0)
		die(what, -ret);
	if (ev->type != type)
		die_event(what, ev);
	return 1;
}

static struct qpio_cm_event
wait_event(struct qpio_cm_channel *ch, enum qpio_cm_event_type type,
	   const char *what)
{
	struct qpio_cm_event ev;

	wait_event_for(ch, type, what, 0, &ev);
	return ev;
}

/* A connect request of a qpio-pingpong --connect: its struct hello,
 * checked, into *h (host order). */
static int
hello_read(const struct qpio_cm_event *ev, struct hello *h)
{
	if (ev->private_data_len < sizeof(*h))
		return 0;
	memcpy(h, ev->private_data, sizeof(*h));
	h->magic = rte_be_to_cpu_32(h->magic);
	h->size = rte_be_to_cpu_32(h->size);
	h->orders = rte_be_to_cpu_64(h->orders);
	return h->magic == HELLO_MAGIC && h->size >= sizeof(struct order) &&
		h->size <= MAX_SIZE && h->orders != 0 &&
		h->orders <= (uint64_t)MAX_COUNT + MAX_WARMUP;
}

/*
 * --listen: the exchange alone, for one gateway in another process. The
 * gateway's request says the message size and how many orders come
 * (struct hello); the QP is made for that size, the orders are answered,
 * and the process ends at the gateway's disconnect (or 5 s after the
 * last answer without it). A request that is not a qpio-pingpong's is
 * rejected and the exchange listens on; once one is accepted the
 * listener goes, so a second gateway is refused as by a port nobody
 * listens on.
 */
static void
run_exchange(struct qpio_device *dev)
{
	struct side ex = { 0 };
	struct qpio_cm_event ev;
	struct qpio_cm_id *lid;
	struct hello h;
	uint32_t i;
	int ret;

	ex.ch = qpio_cm_channel_create();
	if (ex.ch == NULL)
		die("connection channel", rte_errno);
	lid = qpio_cm_listen(ex.ch, dev, cm_host[0] != '\0' ? cm_host : NULL,
			     cm_port, NULL);
	if (lid == NULL)
		die("--listen", rte_errno);
	printf("qpio-pingpong: exchange on %s, lcore %u, listening on port "
	       "%u\n", devargs, rte_lcore_id(), qpio_cm_id_port(lid));
	fflush(stdout);
	for (;;) {
		ev = wait_event(ex.ch, QPIO_CM_EVENT_CONNECT_REQUEST,
				"waiting for the gateway");
		if (hello_read(&ev, &h))
			break;
		qpio_cm_reject(ev.id, NULL, 0);
		qpio_cm_id_destroy(ev.id);
		fprintf(stderr, "qpio-pingpong: a connect request that is not "
			"a qpio-pingpong --connect's (its private data): "
			"rejected; listening on\n");
	}
	msg_size = h.size;
	warmup = 0;
	count = h.orders;
	side_init(&ex, dev);
	ret = qpio_cm_accept(ev.id, ex.qp, NULL);
	if (ret != 0)
		die("accept", -ret);
	qpio_cm_id_destroy(lid);
	for (i = 0; i < RING; i++)
		post_recv(&ex, i);
	wait_event(ex.ch, QPIO_CM_EVENT_ESTABLISHED, "accept");
	exchange(&ex);
	printf("qpio-pingpong: exchange answered %" PRIu64 " orders of %u "
	       "bytes\n", count, msg_size);
	if (!wait_event_for(ex.ch, QPIO_CM_EVENT_DISCONNECTED,
			    "waiting for the gateway's disconnect", 5, &ev))
		printf("qpio-pingpong: no disconnect from the gateway within "
		       "5 s of the last answer\n");
	printf("posted with: %s\n", ex.no_sge_burst ?
	       "qpio_qp_post_send() (the driver has no flat burst)" :
	       "qpio_qp_post_send_sge() (the flat burst)");
	qpio_cm_channel_destroy(ex.ch);
}

/* --connect: the gateway alone, against an exchange's --listen. */
static void
run_gateway_connected(struct qpio_device *dev, uint64_t *half,
		      struct worst *w, int *no_sge_burst)
{
	struct side gw = { 0 };
	const struct hello h = {
		.magic = rte_cpu_to_be_32(HELLO_MAGIC),
		.size = rte_cpu_to_be_32(msg_size),
		.orders = rte_cpu_to_be_64(warmup + count),
	};
	const struct qpio_cm_conn_param param = {
		.private_data = &h, .private_data_len = sizeof(h),
	};
	struct qpio_cm_event ev;
	uint32_t i;

	side_init(&gw, dev);
	gw.ch = qpio_cm_channel_create();
	if (gw.ch == NULL)
		die("connection channel", rte_errno);
	if (qpio_cm_connect(gw.ch, gw.qp, cm_host, cm_port, &param,
			    NULL) == NULL)
		die("--connect", rte_errno);
	ev = wait_event(gw.ch, QPIO_CM_EVENT_ESTABLISHED, "connect");
	/* Soft devices of two fabrics (two primary processes, or private
	 * memory) number their QPs alike: the peer named is then this QP. */
	if (ev.peer.qpn == qpio_qp_num(gw.qp) && ev.peer.lid != 0) {
		struct qpio_port_attr pa;

		if (qpio_rdma_port_query(dev, 1, &pa) == 0 &&
		    pa.lid == ev.peer.lid) {
			fprintf(stderr, "qpio-pingpong: connected to its own "
				"QP 0x%x: the exchange's device is in another "
				"fabric (soft devices of two processes share "
				"one only as primary and secondary on "
				"hugepages, --proc-type=secondary with the same "
				"--file-prefix; between hosts use soft wire "
				"devices, wire=)\n", ev.peer.qpn);
			exit(1);
		}
	}
	for (i = 0; i < RING; i++)
		post_recv(&gw, i);
	printf("qpio-pingpong: %" PRIu64 " orders of %u bytes on %s, gateway "
	       "lcore %u, exchange at %s:%s\n", count, msg_size, devargs,
	       rte_lcore_id(), cm_host, cm_port);
	gateway(&gw, half, NULL, w);
	if (qpio_cm_disconnect(ev.id) != 0)
		die("disconnect", EPROTO);
	wait_event(gw.ch, QPIO_CM_EVENT_DISCONNECTED, "disconnect");
	*no_sge_burst = gw.no_sge_burst;
	qpio_cm_channel_destroy(gw.ch);
}

int
main(int argc, char **argv)
{
	struct side gw = { 0 }, ex = { 0 };
	struct qpio_device *dev, *dev_ex;
	uint64_t *half, *oneway, hz, i;
	struct worst worst = { 0, 0, 0 };
	unsigned int worker = RTE_MAX_LCORE;
	const char *private_mem = NULL;
	int ret, sep, no_sge_burst;

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
	for (i = 1; i < (uint64_t)sep; i++)
		if (strcmp(argv[i], "--no-huge") == 0 ||
		    strcmp(argv[i], "--no-shconf") == 0 ||
		    strcmp(argv[i], "--in-memory") == 0)
			private_mem = argv[i];
	ret = rte_eal_init(sep, argv);
	if (ret < 0) {
		ret = rte_errno;
		qpio_eal_init_failed();
		die("rte_eal_init", ret);
	}
	if (!listen_mode && !connect_mode) {
		worker = rte_get_next_lcore(-1, 1, 0);
		if (worker >= RTE_MAX_LCORE) {
			fprintf(stderr, "qpio-pingpong: needs two lcores (EAL "
				"-l 2,3), or one with --listen or --connect\n");
			qpio_eal_cleanup();
			return 2;
		}
	}
	dev = qpio_rdma_dev_create(devargs);
	if (dev == NULL)
		die(devargs, rte_errno);
	/* A soft device of the fabric reaches another process's only
	 * through shared hugepage memory (the second process a secondary);
	 * a soft wire device or an ibv one needs none. */
	if ((listen_mode || connect_mode) && private_mem != NULL &&
	    qpio_soft_wire_stats_get(dev, &(struct qpio_soft_wire_stats){ 0 }) ==
	    -ENODEV) {
		fprintf(stderr, "qpio-pingpong: --%s on %s (a soft device of "
			"the fabric) with %s: memory of this mode is private to "
			"one process, and two processes need hugepages (the "
			"second with --proc-type=secondary); or give each a "
			"soft wire device (wire=)\n", listen_mode ? "listen" :
			"connect", devargs, private_mem);
		qpio_rdma_dev_close(dev);
		qpio_eal_cleanup();
		return 2;
	}
	if (listen_mode) {
		run_exchange(dev);
		qpio_eal_cleanup();
		return 0;
	}
	half = malloc(count * sizeof(*half));
	oneway = calibrate ? malloc(count * sizeof(*oneway)) : NULL;
	if (half == NULL || (calibrate && oneway == NULL))
		die("samples", ENOMEM);
	hz = rte_get_tsc_hz();
	if (connect_mode) {
		run_gateway_connected(dev, half, &worst, &no_sge_burst);
	} else {
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
		printf("qpio-pingpong: %" PRIu64 " orders of %u bytes on %s%s%s, "
		       "gateway lcore %u, exchange lcore %u\n", count, msg_size,
		       devargs, devargs_ex != NULL ? " and " : "",
		       devargs_ex != NULL ? devargs_ex : "", rte_lcore_id(),
		       worker);
		rte_eal_remote_launch(exchange, &ex, worker);
		gateway(&gw, half, oneway, &worst);
		rte_eal_wait_lcore(worker);
		no_sge_burst = gw.no_sge_burst || ex.no_sge_burst;
	}
	if (calibrate)
		print_calibrated(half, oneway, count, hz);
	print_histogram(half, count, hz, &worst);
	printf("posted with: %s\n", no_sge_burst ?
	       "qpio_qp_post_send() (the driver has no flat burst)" :
	       "qpio_qp_post_send_sge() (the flat burst)");
	free(oneway);
	free(half);
	qpio_eal_cleanup();
	return 0;
}
