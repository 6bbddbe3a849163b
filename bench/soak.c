/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-soak: N frames of random sizes in random bursts through an RC link
 * between two soft QPs (soft0 -> soft1), every payload checked, mbufs and
 * WQEs accounted at the end.
 *
 * Frame i has a size and content derived from i and the seed, so the
 * receiver checks each one without a copy of what was sent; RC delivers in
 * order, so receive k must be frame k. Send buffers and receive buffers are
 * mbufs of one registered pool (lib/mr), one SGE each; frames up to the
 * QP's max_inline are sent inline at random. The receive queue is kept
 * full; a burst goes out only when the send queue has room for it.
 *
 * At the end the responder QP is moved to ERR so that the receives still
 * posted complete as flushed, and the program prints and checks:
 *   frames sent = frames received, payload errors 0, completion errors 0,
 *   send WQEs posted = completed, receive WQEs posted = completed +
 *   flushed, the device's own counters agree (sq_posted, sq_completed,
 *   rq_posted, rq_consumed), every mbuf back in the pool.
 * Exit 0 when all hold, 1 otherwise, 2 on a usage or setup error.
 *
 * --faults KEY=VAL,... gives the sending device soft NIC faults (the
 * fault_* devargs of doc/guides/nics/soft.rst: lost packets, RNR storms,
 * late completions); the same checks hold, and the fault counters are
 * printed. --timeout sets the requester's local ACK timeout (IBA code,
 * 4.096 us x 2^N), which a lost packet waits out before it is sent again.
 *
 *   qpio-soak [EAL options] -- [-n FRAMES] [-s MAX_SIZE] [-b MAX_BURST]
 *             [--seed N] [--faults KEY=VAL,...] [--timeout N]
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

#include "qpio_eal.h"
#include "qpio_mr.h"
#include "qpio_rdma.h"
#include "qpio_soft.h"

#define QDEPTH 256u
#define MAX_INLINE 64u

struct soak_opts {
	uint64_t frames;
	uint32_t max_size;
	uint32_t max_burst;
	uint64_t seed;
	const char *faults;      /* fault_* devargs of soft0, or NULL */
	uint8_t timeout;
};

struct end {
	struct qpio_device *dev;
	struct qpio_pd *pd;
	struct qpio_cq *cq;
	struct qpio_qp *qp;
	struct qpio_mr_mempool *reg;
	struct qpio_mr_cache mrc;
};

struct counts {
	uint64_t sent, received, bytes, bad_payload, bad_len, wc_errors;
	uint64_t sq_posted, sq_completed, rq_posted, rq_completed, rq_flushed;
	uint64_t refused;            /* post calls that took fewer WRs */
};

/* splitmix64: the size and the content of frame i. */
static uint64_t
mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint32_t
frame_size(const struct soak_opts *o, uint64_t i)
{
	return 1 + (uint32_t)(mix(o->seed ^ (i * 2 + 1)) % o->max_size);
}

static void
frame_fill(uint8_t *p, uint32_t len, uint64_t key)
{
	uint64_t v = mix(key);
	uint32_t j;

	for (j = 0; j + 8 <= len; j += 8, v += 0x9e3779b97f4a7c15ull)
		memcpy(p + j, &v, 8);
	for (; j < len; j++)
		p[j] = (uint8_t)(v >> (8 * (j & 7)));
}

static int
frame_ok(const uint8_t *p, uint32_t len, uint64_t key)
{
	uint64_t v = mix(key);
	uint32_t j;

	for (j = 0; j + 8 <= len; j += 8, v += 0x9e3779b97f4a7c15ull)
		if (memcmp(p + j, &v, 8) != 0)
			return 0;
	for (; j < len; j++)
		if (p[j] != (uint8_t)(v >> (8 * (j & 7))))
			return 0;
	return 1;
}

static void
die(const char *what)
{
	fprintf(stderr, "qpio-soak: %s: %s\n", what, rte_strerror(rte_errno));
	exit(2);
}

static void
end_up(struct end *e, const char *devargs, struct rte_mempool *mp)
{
	struct qpio_qp_init_attr ia;

	e->dev = qpio_rdma_dev_create(devargs);
	if (e->dev == NULL)
		die(devargs);
	e->pd = qpio_pd_alloc(e->dev);
	e->cq = qpio_cq_create(e->dev, 2 * QDEPTH, SOCKET_ID_ANY);
	if (e->pd == NULL || e->cq == NULL)
		die("pd/cq");
	e->reg = qpio_mr_mempool_reg(e->pd, mp, QPIO_ACCESS_LOCAL_WRITE);
	if (e->reg == NULL || qpio_mr_cache_init(&e->mrc, e->pd) != 0)
		die("mempool registration");
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	ia.qp_type = QPIO_QPT_RC;
	ia.sq_sig_all = 1;
	ia.cap.max_send_wr = QDEPTH;
	ia.cap.max_recv_wr = QDEPTH;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = MAX_INLINE;
	e->qp = qpio_qp_create(e->pd, &ia);
	if (e->qp == NULL)
		die("qp_create");
}

static void
qp_connect_to(struct qpio_qp *qp, struct qpio_device *peer, uint32_t peer_qpn,
	      uint8_t timeout)
{
	struct qpio_port_attr pa;
	struct qpio_qp_attr at;

	if (qpio_rdma_port_query(peer, 1, &pa) != 0)
		die("port_query");
	memset(&at, 0, sizeof(at));
	at.qp_state = QPIO_QPS_INIT;
	at.port_num = 1;
	at.qp_access_flags = QPIO_ACCESS_LOCAL_WRITE;
	if (qpio_qp_modify(qp, &at, QPIO_QP_STATE | QPIO_QP_PKEY_INDEX |
			   QPIO_QP_PORT | QPIO_QP_ACCESS_FLAGS) != 0)
		die("RESET->INIT");
	memset(&at, 0, sizeof(at));
	at.qp_state = QPIO_QPS_RTR;
	at.path_mtu = QPIO_MTU_4096;
	at.dest_qp_num = peer_qpn;
	at.min_rnr_timer = 1;
	at.ah_attr.dlid = pa.lid;
	at.ah_attr.port_num = 1;
	if (qpio_qp_modify(qp, &at, QPIO_QP_STATE | QPIO_QP_AV |
			   QPIO_QP_PATH_MTU | QPIO_QP_DEST_QPN |
			   QPIO_QP_RQ_PSN | QPIO_QP_MAX_DEST_RD_ATOMIC |
			   QPIO_QP_MIN_RNR_TIMER) != 0)
		die("INIT->RTR");
	memset(&at, 0, sizeof(at));
	at.qp_state = QPIO_QPS_RTS;
	at.timeout = timeout;
	at.retry_cnt = 7;
	at.rnr_retry = 7;
	if (qpio_qp_modify(qp, &at, QPIO_QP_STATE | QPIO_QP_TIMEOUT |
			   QPIO_QP_RETRY_CNT | QPIO_QP_RNR_RETRY |
			   QPIO_QP_SQ_PSN | QPIO_QP_MAX_QP_RD_ATOMIC) != 0)
		die("RTR->RTS");
}

/* Keep the responder's receive queue full of mbufs. */
static void
rq_fill(struct end *b, struct rte_mempool *mp, struct counts *c)
{
	struct qpio_recv_wr wr[32];
	struct qpio_sge sg[32];
	struct rte_mbuf *m[32];
	uint64_t room = QDEPTH - (c->rq_posted - c->rq_completed);
	uint16_t n, i, k;

	while (room > 0) {
		n = (uint16_t)RTE_MIN(room, RTE_DIM(wr));
		if (rte_pktmbuf_alloc_bulk(mp, m, n) != 0)
			return;
		for (i = 0; i < n; i++) {
			sg[i].addr = (uintptr_t)rte_pktmbuf_mtod(m[i], void *);
			sg[i].length = rte_pktmbuf_tailroom(m[i]);
			sg[i].lkey = qpio_mr_mbuf_lkey(&b->mrc, m[i]);
			wr[i].wr_id = (uintptr_t)m[i];
			wr[i].sg_list = &sg[i];
			wr[i].num_sge = 1;
		}
		k = qpio_qp_post_recv(b->qp, wr, n, NULL);
		if (k < n) {
			c->refused++;
			rte_pktmbuf_free_bulk(&m[k], n - k);
		}
		c->rq_posted += k;
		room -= k;
		if (k < n)
			return;
	}
}

static void
poll_both(struct end *a, struct end *b, const struct soak_opts *o,
	  struct counts *c)
{
	struct qpio_wc wc[64];
	uint16_t n, i;

	n = qpio_cq_poll(a->cq, wc, RTE_DIM(wc));
	for (i = 0; i < n; i++) {
		if (wc[i].status != QPIO_WC_SUCCESS)
			c->wc_errors++;
		if (wc[i].wr_id != 0)
			rte_pktmbuf_free((struct rte_mbuf *)(uintptr_t)wc[i].wr_id);
	}
	c->sq_completed += n;
	n = qpio_cq_poll(b->cq, wc, RTE_DIM(wc));
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = (struct rte_mbuf *)(uintptr_t)wc[i].wr_id;
		uint64_t seq = c->received;

		c->rq_completed++;
		if (wc[i].status == QPIO_WC_WR_FLUSH_ERR) {
			c->rq_flushed++;
		} else if (wc[i].status != QPIO_WC_SUCCESS) {
			c->wc_errors++;
		} else {
			uint32_t want = frame_size(o, seq);

			if (wc[i].byte_len != want)
				c->bad_len++;
			else if (!frame_ok(rte_pktmbuf_mtod(m, uint8_t *), want,
					   o->seed ^ (seq * 2)))
				c->bad_payload++;
			c->received++;
			c->bytes += wc[i].byte_len;
		}
		rte_pktmbuf_free(m);
	}
}

static int
parse(int argc, char **argv, struct soak_opts *o)
{
	static const struct option lo[] = {
		{ "seed", required_argument, NULL, 'S' },
		{ "faults", required_argument, NULL, 'F' },
		{ "timeout", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->frames = 100000000ull;
	o->max_size = 2048;
	o->max_burst = 32;
	o->seed = 1;
	o->faults = NULL;
	o->timeout = 14;
	while ((c = getopt_long(argc, argv, "n:s:b:", lo, NULL)) != -1) {
		char *end;
		unsigned long long v;

		if (optarg == NULL)
			return -1;
		if (c == 'F') {
			if (strncmp(optarg, "fault_", 6) != 0)
				return -1;
			o->faults = optarg;
			continue;
		}
		v = strtoull(optarg, &end, 10);
		if (*end != '\0' || *optarg < '0' || *optarg > '9')
			return -1;
		switch (c) {
		case 'n': o->frames = v; break;
		case 's': if (v < 1 || v > 9000) return -1;
			  o->max_size = (uint32_t)v; break;
		case 'b': if (v < 1 || v > 64) return -1;
			  o->max_burst = (uint32_t)v; break;
		case 'S': o->seed = v; break;
		case 'T': if (v > 31) return -1;
			  o->timeout = (uint8_t)v; break;
		default: return -1;
		}
	}
	return optind == argc ? 0 : -1;
}

#define CHECK(ok, ...) do { \
		if (!(ok)) { printf("FAIL: " __VA_ARGS__); printf("\n"); fails++; } \
	} while (0)

int
main(int argc, char **argv)
{
	struct qpio_soft_qp_stats sa, sb;
	struct qpio_send_wr wr[64];
	struct qpio_sge sg[64];
	struct rte_mbuf *m[64];
	struct soak_opts o;
	struct counts c;
	struct rte_mempool *mp;
	struct qpio_qp_attr at;
	struct end a, b;
	char devargs[256];
	uint64_t t0, spins;
	unsigned int nb_mbuf = 4 * QDEPTH + 256;
	int ret, fails = 0;
	double secs;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		ret = rte_errno;
		qpio_eal_init_failed();
		rte_errno = ret;
		die("rte_eal_init");
	}
	if (parse(argc - ret, argv + ret, &o) != 0) {
		fprintf(stderr, "usage: qpio-soak [EAL options] -- [-n FRAMES] "
			"[-s MAX_SIZE 1..9000] [-b MAX_BURST 1..64] [--seed N] "
			"[--faults fault_KEY=VAL,...] [--timeout 0..31]\n");
		qpio_eal_cleanup();
		return 2;
	}
	memset(&c, 0, sizeof(c));
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	mp = rte_pktmbuf_pool_create("soak", nb_mbuf, 0, 0,
				     RTE_PKTMBUF_HEADROOM + 9216, SOCKET_ID_ANY);
	if (mp == NULL)
		die("mbuf pool");
	snprintf(devargs, sizeof(devargs), "soft0%s%s", o.faults ? "," : "",
		 o.faults ? o.faults : "");
	end_up(&a, devargs, mp);
	end_up(&b, "soft1", mp);
	qp_connect_to(a.qp, b.dev, qpio_qp_num(b.qp), o.timeout);
	qp_connect_to(b.qp, a.dev, qpio_qp_num(a.qp), o.timeout);
	if (o.faults != NULL)
		printf("qpio-soak: soft0 with %s, timeout %u\n", o.faults,
		       o.timeout);
	printf("qpio-soak: %" PRIu64 " frames of 1..%u bytes, bursts of 1..%u, "
	       "seed %" PRIu64 "\n", o.frames, o.max_size, o.max_burst, o.seed);

	t0 = rte_get_timer_cycles();
	while (c.sent < o.frames) {
		uint16_t n, i, k;

		rq_fill(&b, mp, &c);
		n = (uint16_t)(1 + mix(o.seed ^ ~c.sent) % o.max_burst);
		n = (uint16_t)RTE_MIN((uint64_t)n, o.frames - c.sent);
		if (QDEPTH - (c.sq_posted - c.sq_completed) < n ||
		    rte_pktmbuf_alloc_bulk(mp, m, n) != 0) {
			poll_both(&a, &b, &o, &c);
			continue;
		}
		for (i = 0; i < n; i++) {
			uint64_t seq = c.sent + i;
			uint32_t len = frame_size(&o, seq);
			uint8_t *p = (uint8_t *)rte_pktmbuf_append(m[i], (uint16_t)len);
			int in = len <= MAX_INLINE && (mix(seq) & 1);

			frame_fill(p, len, o.seed ^ (seq * 2));
			sg[i].addr = (uintptr_t)p;
			sg[i].length = len;
			sg[i].lkey = qpio_mr_mbuf_lkey(&a.mrc, m[i]);
			memset(&wr[i], 0, sizeof(wr[i]));
			wr[i].wr_id = (uintptr_t)m[i];
			wr[i].sg_list = &sg[i];
			wr[i].num_sge = 1;
			wr[i].opcode = QPIO_WR_SEND;
			wr[i].send_flags = in ? QPIO_SEND_INLINE : 0;
		}
		k = qpio_qp_post_send(a.qp, wr, n, NULL);
		if (k < n) {
			c.refused++;
			rte_pktmbuf_free_bulk(&m[k], n - k);
		}
		c.sent += k;
		c.sq_posted += k;
		poll_both(&a, &b, &o, &c);
	}
	/* Every send completes; then the receives left are flushed. */
	for (spins = 0; spins < 100000000ull &&
	     (c.sq_completed < c.sq_posted || c.received < c.sent); spins++)
		poll_both(&a, &b, &o, &c);
	secs = (double)(rte_get_timer_cycles() - t0) / rte_get_timer_hz();
	memset(&at, 0, sizeof(at));
	at.qp_state = QPIO_QPS_ERR;
	if (qpio_qp_modify(b.qp, &at, QPIO_QP_STATE) != 0)
		die("responder to ERR");
	for (spins = 0; spins < 10000000ull && c.rq_completed < c.rq_posted;
	     spins++)
		poll_both(&a, &b, &o, &c);
	if (qpio_soft_qp_stats(a.qp, &sa) != 0 ||
	    qpio_soft_qp_stats(b.qp, &sb) != 0)
		die("soft qp stats");

	printf("frames:   sent %" PRIu64 ", received %" PRIu64 ", lost %" PRIu64
	       ", bytes %" PRIu64 "\n", c.sent, c.received, c.sent - c.received,
	       c.bytes);
	printf("payload:  bad length %" PRIu64 ", bad content %" PRIu64
	       ", completion errors %" PRIu64 ", refused posts %" PRIu64 "\n",
	       c.bad_len, c.bad_payload, c.wc_errors, c.refused);
	printf("send WQEs: posted %" PRIu64 ", completed %" PRIu64
	       " (device: posted %u, completed %u)\n", c.sq_posted,
	       c.sq_completed, sa.sq_posted, sa.sq_completed);
	printf("recv WQEs: posted %" PRIu64 ", completed %" PRIu64
	       " (%" PRIu64 " flushed at the end) (device: posted %u, "
	       "consumed %u)\n", c.rq_posted, c.rq_completed, c.rq_flushed,
	       sb.rq_posted, sb.rq_consumed);
	printf("faults:   lost %" PRIu64 " (sent again %" PRIu64 "), RNR NAKs "
	       "%" PRIu64 " (%" PRIu64 " injected), delayed runs %" PRIu64 "\n",
	       sa.fault_drops, sa.transport_retries, sa.rnr_naks, sa.fault_rnr,
	       sa.fault_delays);
	printf("rate:     %.2f s, %.3f Mframes/s, %.3f Gbit/s\n", secs,
	       c.received / secs / 1e6, c.bytes * 8 / secs / 1e9);
	CHECK(c.sent == o.frames, "sent %" PRIu64 " of %" PRIu64, c.sent,
	      o.frames);
	CHECK(c.received == c.sent, "lost %" PRIu64, c.sent - c.received);
	CHECK(c.bad_len == 0 && c.bad_payload == 0 && c.wc_errors == 0,
	      "bad frames or completions");
	CHECK(c.sq_posted == c.sq_completed, "send WQEs not completed: %" PRIu64,
	      c.sq_posted - c.sq_completed);
	CHECK(c.rq_posted == c.rq_completed, "recv WQEs not completed: %" PRIu64,
	      c.rq_posted - c.rq_completed);
	CHECK(c.rq_flushed == c.rq_posted - c.received,
	      "flushed %" PRIu64 ", posted - received %" PRIu64, c.rq_flushed,
	      c.rq_posted - c.received);
	CHECK(sa.sq_posted == (uint32_t)c.sq_posted &&
	      sa.sq_completed == (uint32_t)c.sq_completed &&
	      sb.rq_posted == (uint32_t)c.rq_posted,
	      "device WQE counters disagree");
	if (qpio_qp_destroy(a.qp) != 0 || qpio_qp_destroy(b.qp) != 0 ||
	    qpio_cq_destroy(a.cq) != 0 || qpio_cq_destroy(b.cq) != 0)
		die("destroy");
	qpio_mr_cache_fini(&a.mrc);
	qpio_mr_cache_fini(&b.mrc);
	if (qpio_mr_mempool_dereg(a.reg) != 0 ||
	    qpio_mr_mempool_dereg(b.reg) != 0 || qpio_pd_free(a.pd) != 0 ||
	    qpio_pd_free(b.pd) != 0 || qpio_rdma_dev_close(a.dev) != 0 ||
	    qpio_rdma_dev_close(b.dev) != 0)
		die("teardown");
	printf("mbufs:    %u of %u back in the pool, leaked %u\n",
	       rte_mempool_avail_count(mp), nb_mbuf,
	       nb_mbuf - rte_mempool_avail_count(mp));
	CHECK(rte_mempool_avail_count(mp) == nb_mbuf, "mbufs leaked");
	rte_mempool_free(mp);
	qpio_eal_cleanup();
	printf("qpio-soak: %s\n", fails == 0 ? "PASS (0 lost, 0 leaked)" : "FAIL");
	return fails == 0 ? 0 : 1;
}
