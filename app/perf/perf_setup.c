/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-perf setup: the devices, PDs, CQs, MRs and QPs of both ends, the
 * capabilities the device granted, the RESET->INIT->RTR->RTS connection
 * of each QP pair, and the loop over message sizes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "qpio_soft.h"
#include "perf_run.h"

static int
fail(const char *what, int err)
{
	fprintf(stderr, "qpio-perf: %s: %s\n", what, strerror(err));
	return PERF_EXIT_FAIL;
}

static uint32_t
pow2_ge(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* Clamp a requested capability to the device limit and record the cut. */
static uint32_t
cap_request(struct perf_caps *c, unsigned int i, const char *name,
	    uint32_t want, uint32_t limit, const char *why)
{
	c->cap[i].name = name;
	c->cap[i].requested = want;
	c->cap[i].cut = NULL;
	if (want > limit) {
		c->cap[i].cut = why;
		return limit;
	}
	return want;
}

/* The source GID of the end's paths: -x, else with --perftest the first
 * IPv4-mapped one (perftest's own default choice, and its peer must use
 * one of the same kind), else index 0. */
static int
gid_choose(struct perf_ctx *x, struct perf_end *e,
	   const struct qpio_port_attr *pa)
{
	static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };
	const struct perf_opts *o = x->o;
	int i;

	if (o->gid_index >= 0) {
		if ((uint32_t)o->gid_index >= pa->gid_tbl_len ||
		    qpio_rdma_gid_query(e->dev, 1, o->gid_index, &e->gid) < 0) {
			fprintf(stderr, "qpio-perf: -x %d: port 1 has GIDs "
				"0..%u\n", o->gid_index, pa->gid_tbl_len - 1);
			return PERF_EXIT_USAGE;
		}
		e->gid_index = (uint8_t)o->gid_index;
		return 0;
	}
	e->gid_index = 0;
	qpio_rdma_gid_query(e->dev, 1, 0, &e->gid);
	if (!o->perftest)
		return 0;
	for (i = 0; (uint32_t)i < pa->gid_tbl_len && i < 256; i++) {
		union qpio_gid g;

		if (qpio_rdma_gid_query(e->dev, 1, i, &g) == 0 &&
		    memcmp(g.raw, v4, sizeof(v4)) == 0) {
			e->gid = g;
			e->gid_index = (uint8_t)i;
			return 0;
		}
	}
	return 0;
}

static int
end_open(struct perf_ctx *x, struct perf_end *e, const char *devargs,
	 struct qpio_device *shared)
{
	struct qpio_port_attr pa;
	struct qpio_device_attr da;
	int ret;

	e->ctx = x;
	if (shared != NULL) {
		e->dev = shared;
	} else {
		e->dev = qpio_rdma_dev_create(devargs);
		if (e->dev == NULL && rte_errno == EEXIST &&
		    x->o->role != PERF_ROLE_LOCAL) {
			fprintf(stderr, "qpio-perf: --dev %s: a device of that name "
				"is already on the fabric (the server's?): give this "
				"end its own, e.g. --dev soft1\n", devargs);
			return PERF_EXIT_FAIL;
		}
		if (e->dev == NULL)
			return fail(devargs, rte_errno);
	}
	qpio_rdma_dev_query(e->dev, &da);
	if (qpio_rdma_port_query(e->dev, 1, &pa) < 0)
		return fail("port query", EINVAL);
	if (pa.state != QPIO_PORT_ACTIVE) {
		/* A wire device's port is up when its link is: a memif
		 * server's once the client connects. Wait for it, as long
		 * as for the peer. */
		uint64_t end = rte_get_timer_cycles() +
			(uint64_t)(x->o->timeout * (double)rte_get_timer_hz());

		fprintf(stderr, "qpio-perf: %s port 1 is not ACTIVE: waiting up "
			"to %g s%s for its link\n", da.name, x->o->timeout,
			x->o->role != PERF_ROLE_LOCAL ? " (--timeout)" : "");
		while (pa.state != QPIO_PORT_ACTIVE && !perf_stop_requested &&
		       rte_get_timer_cycles() < end) {
			rte_delay_us_sleep(10000);
			if (qpio_rdma_port_query(e->dev, 1, &pa) < 0)
				return fail("port query", EINVAL);
		}
	}
	if (pa.state != QPIO_PORT_ACTIVE) {
		fprintf(stderr, "qpio-perf: %s port 1 is not ACTIVE%s: is the "
			"link up (a wire device's ethdev: the peer of a memif, "
			"the cable of a NIC)?\n", da.name,
			perf_stop_requested ? " (stopped while waiting)" :
			" after the wait");
		return PERF_EXIT_FAIL;
	}
	e->lid = pa.lid;
	ret = gid_choose(x, e, &pa);
	if (ret != 0)
		return ret;
	e->pd = qpio_pd_alloc(e->dev);
	if (e->pd == NULL)
		return fail("pd_alloc", rte_errno);
	return 0;
}

/* Create the CQ, buffer, MR and QPs of an end; caps filled from end 0. */
static int
end_create(struct perf_ctx *x, struct perf_end *e, struct perf_caps *caps,
	   uint32_t max_size)
{
	const struct perf_opts *o = x->o;
	struct qpio_device_attr da;
	struct qpio_qp_init_attr ia;
	struct perf_caps local;
	uint32_t i, cqe, depth;
	unsigned int access = QPIO_ACCESS_LOCAL_WRITE | QPIO_ACCESS_REMOTE_WRITE |
		QPIO_ACCESS_REMOTE_READ;
	static char why[PERF_NCAPS][96];

	qpio_rdma_dev_query(e->dev, &da);
	if (o->test == PERF_ATOMIC && da.atomic_cap == QPIO_ATOMIC_NONE) {
		fprintf(stderr, "qpio-perf: %s has no atomics (atomic_cap NONE)\n",
			da.name);
		return PERF_EXIT_USAGE;
	}
	if (da.atomic_cap != QPIO_ATOMIC_NONE)
		access |= QPIO_ACCESS_REMOTE_ATOMIC;
	if (e->id != x->local)
		caps = &local;
	memset(&ia, 0, sizeof(ia));
	snprintf(why[0], sizeof(why[0]), "device max_qp_wr is %u", da.max_qp_wr);
	snprintf(why[1], sizeof(why[1]), "device max_qp_wr is %u", da.max_qp_wr);
	snprintf(why[2], sizeof(why[2]), "device max_sge is %u", da.max_sge);
	snprintf(why[3], sizeof(why[3]), "device max_sge is %u", da.max_sge);
	snprintf(why[4], sizeof(why[4]), "device max_inline_data is %u",
		 da.max_inline_data);
	ia.cap.max_send_wr = cap_request(caps, 0, "max_send_wr", o->tx_depth,
					 da.max_qp_wr, why[0]);
	ia.cap.max_recv_wr = cap_request(caps, 1, "max_recv_wr",
					 o->test == PERF_SEND ? o->rx_depth : 1,
					 da.max_qp_wr, why[1]);
	ia.cap.max_send_sge = cap_request(caps, 2, "max_send_sge", o->sge,
					  da.max_sge, why[2]);
	ia.cap.max_recv_sge = cap_request(caps, 3, "max_recv_sge", o->sge,
					  da.max_sge, why[3]);
	ia.cap.max_inline_data = cap_request(caps, 4, "max_inline_data",
		(o->test == PERF_SEND || o->test == PERF_WRITE) ?
		(o->inline_set ? o->inline_size :
		 RTE_MIN(o->inline_size, da.max_inline_data)) : 0,
		da.max_inline_data, why[4]);
	if (ia.cap.max_send_sge < o->sge) {
		fprintf(stderr, "qpio-perf: --sge %u: %s\n", o->sge, why[2]);
		return PERF_EXIT_USAGE;
	}
	ia.qp_type = (enum qpio_qp_type)o->transport;

	depth = pow2_ge(ia.cap.max_send_wr) + pow2_ge(ia.cap.max_recv_wr);
	cqe = o->qps * depth + 64;
	if (cqe > da.max_cqe) {
		fprintf(stderr, "qpio-perf: -q %u with -t %u and -r %u needs a CQ of "
			"%u entries; the device allows %u: lower -q, -t or -r\n",
			o->qps, o->tx_depth, o->rx_depth, cqe, da.max_cqe);
		return PERF_EXIT_USAGE;
	}
	e->cq = qpio_cq_create(e->dev, cqe, (int)rte_socket_id());
	if (e->cq == NULL)
		return fail("cq_create", rte_errno);

	/* Slots: enough for the deeper queue, at most PERF_SLOT_MEM. */
	x->grh = o->transport == QPIO_QPT_UD ? QPIO_GRH_LEN : 0;
	x->stride = RTE_ALIGN_CEIL(max_size + x->grh, 64u);
	x->nslots = RTE_MAX(ia.cap.max_send_wr, ia.cap.max_recv_wr);
	if ((uint64_t)x->nslots * x->stride > PERF_SLOT_MEM)
		x->nslots = RTE_MAX(1u, PERF_SLOT_MEM / x->stride);
	/* perftest's peer may touch a page, or the message if larger, from
	 * the address this end gives (its WRITEs and READs cycle in it). */
	if (o->perftest)
		x->nslots = RTE_MAX(x->nslots,
				    (uint32_t)RTE_ALIGN_CEIL(4096u, x->stride) /
				    x->stride);
	x->qp_len = (size_t)2 * x->nslots * x->stride + 64;
	e->buf_len = x->qp_len * o->qps;
	if (x->net != NULL) {
		/* The peer process reaches this buffer: over the soft NIC it
		 * must be in DPDK's shared (hugepage) memory. */
		e->buf = rte_malloc("qpio_perf_buf", e->buf_len, 4096);
		e->buf_rte = 1;
	} else {
		e->buf = aligned_alloc(4096, RTE_ALIGN_CEIL(e->buf_len, 4096));
	}
	if (e->buf == NULL && e->buf_rte) {
		fprintf(stderr, "qpio-perf: no %zu bytes of DPDK memory for the "
			"message buffers (-q x 2 x slots x the largest size): give "
			"EAL more with -m, or lower -s, -a, -t or -q\n", e->buf_len);
		return PERF_EXIT_FAIL;
	}
	if (e->buf == NULL)
		return fail("buffer", ENOMEM);
	memset(e->buf, 0, e->buf_len);
	if (o->run_inf && e->id == 0) {
		e->ihist = malloc(sizeof(*e->ihist));
		if (e->ihist == NULL)
			return fail("interval histogram", ENOMEM);
		perf_hist_init(e->ihist);
	}
	e->mr = qpio_mr_reg(e->pd, e->buf, e->buf_len, access);
	if (e->mr == NULL)
		return fail("mr_reg", rte_errno);

	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	for (i = 0; i < o->qps; i++) {
		struct qpio_qp_init_attr a = ia;
		struct perf_qp *q = &e->qp[i];

		q->qp = qpio_qp_create(e->pd, &a);
		if (q->qp == NULL)
			return fail("qp_create", rte_errno);
		q->base = e->buf + (size_t)i * x->qp_len;
		q->ts_mask = pow2_ge(a.cap.max_send_wr) - 1;
		q->ts = calloc(q->ts_mask + 1, sizeof(*q->ts));
		q->hist = malloc(sizeof(*q->hist));
		if (q->ts == NULL || q->hist == NULL)
			return fail("qp state", ENOMEM);
		e->inline_max = a.cap.max_inline_data;
		e->sq_depth = a.cap.max_send_wr;
		e->rq_depth = a.cap.max_recv_wr;
		if (i == 0) {
			caps->cap[0].granted = a.cap.max_send_wr;
			caps->cap[1].granted = a.cap.max_recv_wr;
			caps->cap[2].granted = a.cap.max_send_sge;
			caps->cap[3].granted = a.cap.max_recv_sge;
			caps->cap[4].granted = a.cap.max_inline_data;
		}
	}
	caps->ncut = 0;
	for (i = 0; i < PERF_NCAPS; i++) {
		if (caps->cap[i].cut == NULL &&
		    caps->cap[i].granted < caps->cap[i].requested)
			caps->cap[i].cut = "the driver granted less than requested";
		if (caps->cap[i].cut != NULL)
			caps->ncut++;
	}
	if (e->id == x->local) {
		snprintf(caps->device, sizeof(caps->device), "%s", da.name);
		snprintf(caps->driver, sizeof(caps->driver), "%s", da.driver);
	}
	return 0;
}

static int
qp_connect(struct perf_ctx *x, struct perf_end *e, struct perf_qp *q,
	   const struct perf_end *peer, enum qpio_mtu mtu)
{
	const struct perf_opts *o = x->o;
	struct qpio_device_attr da;
	struct qpio_qp_attr a;
	int mask, ret;

	qpio_rdma_dev_query(e->dev, &da);
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_INIT;
	a.port_num = 1;
	mask = QPIO_QP_STATE | QPIO_QP_PKEY_INDEX | QPIO_QP_PORT;
	if (o->transport == QPIO_QPT_UD) {
		a.qkey = PERF_QKEY;
		mask |= QPIO_QP_QKEY;
	} else {
		a.qp_access_flags = QPIO_ACCESS_LOCAL_WRITE | QPIO_ACCESS_REMOTE_WRITE;
		if (o->transport == QPIO_QPT_RC)
			a.qp_access_flags |= QPIO_ACCESS_REMOTE_READ |
				(da.atomic_cap != QPIO_ATOMIC_NONE ?
				 QPIO_ACCESS_REMOTE_ATOMIC : 0);
		mask |= QPIO_QP_ACCESS_FLAGS;
	}
	ret = qpio_qp_modify(q->qp, &a, mask);
	if (ret < 0)
		return fail("RESET->INIT", -ret);

	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTR;
	mask = QPIO_QP_STATE;
	if (o->transport != QPIO_QPT_UD) {
		a.path_mtu = mtu;
		a.dest_qp_num = q->peer_qpn;
		a.rq_psn = q->peer_psn;
		a.ah_attr.dlid = peer->lid;
		a.ah_attr.port_num = 1;
		if (peer->lid == 0) {
			a.ah_attr.is_global = 1;
			a.ah_attr.grh.dgid = peer->gid;
			a.ah_attr.grh.sgid_index = e->gid_index;
			a.ah_attr.grh.hop_limit = o->perftest ? 0xff : 1;
		}
		mask |= QPIO_QP_AV | QPIO_QP_PATH_MTU | QPIO_QP_DEST_QPN |
			QPIO_QP_RQ_PSN;
		if (o->transport == QPIO_QPT_RC) {
			a.max_dest_rd_atomic = (uint8_t)RTE_MIN(da.max_qp_init_rd_atom, 16u);
			a.min_rnr_timer = 1;            /* 0.01 ms */
			if (o->perftest) {
				/* as perftest sets its own */
				a.max_dest_rd_atomic = RTE_MAX(e->out_reads,
							       (uint8_t)1);
				a.min_rnr_timer = 12;   /* 0.64 ms */
			}
			mask |= QPIO_QP_MAX_DEST_RD_ATOMIC | QPIO_QP_MIN_RNR_TIMER;
		}
	}
	ret = qpio_qp_modify(q->qp, &a, mask);
	if (ret < 0)
		return fail("INIT->RTR", -ret);

	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTS;
	a.sq_psn = q->psn;
	mask = QPIO_QP_STATE | QPIO_QP_SQ_PSN;
	if (o->transport == QPIO_QPT_RC) {
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;                        /* retry forever */
		a.max_rd_atomic = (uint8_t)RTE_MIN(da.max_qp_rd_atom, 16u);
		if (o->perftest)        /* what perftest's QP answers at once */
			a.max_rd_atomic = (uint8_t)RTE_MAX(1u, RTE_MIN(
				(uint32_t)e->peer->out_reads, da.max_qp_rd_atom));
		mask |= QPIO_QP_TIMEOUT | QPIO_QP_RETRY_CNT | QPIO_QP_RNR_RETRY |
			QPIO_QP_MAX_QP_RD_ATOMIC;
	}
	ret = qpio_qp_modify(q->qp, &a, mask);
	if (ret < 0)
		return fail("RTR->RTS", -ret);
	return 0;
}

static int
end_ah(struct perf_end *e)
{
	struct qpio_ah_attr aa;

	memset(&aa, 0, sizeof(aa));
	aa.port_num = 1;
	aa.dlid = e->peer->lid;
	if (e->peer->lid == 0) {
		aa.is_global = 1;
		aa.grh.dgid = e->peer->gid;
		aa.grh.sgid_index = e->gid_index;
		aa.grh.hop_limit = e->ctx->o->perftest ? 0xff : 1;
	}
	e->ah = qpio_ah_create(e->pd, &aa);
	if (e->ah == NULL)
		return fail("ah_create", rte_errno);
	return 0;
}

static void
end_close(struct perf_end *e, int close_dev)
{
	unsigned int i;

	for (i = 0; i < PERF_MAX_QPS; i++) {
		if (e->qp[i].qp != NULL)
			qpio_qp_destroy(e->qp[i].qp);
		free(e->qp[i].ts);
		free(e->qp[i].hist);
		free(e->qp[i].ref);
	}
	if (e->ah != NULL)
		qpio_ah_destroy(e->ah);
	if (e->mr != NULL)
		qpio_mr_dereg(e->mr);
	if (e->cq != NULL)
		qpio_cq_destroy(e->cq);
	if (e->pd != NULL)
		qpio_pd_free(e->pd);
	if (e->buf_rte)
		rte_free(e->buf);
	else
		free(e->buf);
	free(e->ihist);
	if (close_dev && e->dev != NULL)
		qpio_rdma_dev_close(e->dev);
}

/* The path MTU: the port's, at most -m (as perftest's -m caps its own). */
static enum qpio_mtu
mtu_cap(const struct perf_opts *o, enum qpio_mtu port)
{
	enum qpio_mtu m = QPIO_MTU_256;

	if (o->mtu == 0)
		return port;
	while ((128u << (m + 1)) <= o->mtu && m < QPIO_MTU_4096)
		m = (enum qpio_mtu)(m + 1);
	return RTE_MIN(m, port);
}

/* A soft wire device's counters and QP 0's retries of the transport,
 * one line each (nothing for other devices): what went on the wire, what
 * came back wrong, and what was sent again. */
static void
wire_report(const struct perf_end *e)
{
	struct qpio_soft_wire_stats w;
	struct qpio_soft_qp_stats q;

	if (e->dev == NULL || qpio_soft_wire_stats_get(e->dev, &w) != 0)
		return;
	if (e->qp[0].qp != NULL && qpio_soft_qp_stats(e->qp[0].qp, &q) == 0)
		printf(" qp: transport_retries %" PRIu64 " rnr_naks %" PRIu64
		       " retry_exceeded %" PRIu64 "\n", q.transport_retries,
		       q.rnr_naks, q.retry_exceeded);
	printf(" wire: rx_packets %" PRIu64 " tx_packets %" PRIu64
	       " arp_rx %" PRIu64 " arp_tx %" PRIu64 " rx_bad_icrc %" PRIu64
	       " rx_no_qp %" PRIu64 " rx_not_roce %" PRIu64 " tx_no_neigh %"
	       PRIu64 " tx_nombuf %" PRIu64 " tx_dropped %" PRIu64
	       " nd_rx %" PRIu64 " nd_tx %" PRIu64 " tx_no_route %" PRIu64
	       " rx_other_vlan %" PRIu64 " rx_steered %" PRIu64
	       " rx_steer_dropped %" PRIu64 "\n",
	       w.rx_packets, w.tx_packets, w.arp_rx, w.arp_tx, w.rx_bad_icrc,
	       w.rx_no_qp, w.rx_not_roce, w.tx_no_neigh, w.tx_nombuf,
	       w.tx_dropped, w.nd_rx, w.nd_tx, w.tx_no_route, w.rx_other_vlan,
	       w.rx_steered, w.rx_steer_dropped);
	fflush(stdout);
}

/* Run one size on both lcores and collect its result. */
static int
run_size(struct perf_ctx *x, unsigned int worker, struct perf_result *r)
{
	const struct perf_opts *o = x->o;
	unsigned int i, k;
	double secs;

	x->ready = 0;
	x->stop = 0;
	for (k = 0; k < 2; k++) {
		struct perf_end *e = &x->end[k];

		e->req_done = 0;
		e->bytes = 0;
		e->peak_bps = 0;
		e->checked = e->mismatches = e->lost = 0;
		e->t_start = e->t_end = 0;
		e->requester = k == 0 || (o->mode == PERF_BW && o->bidir);
		if (x->net != NULL && k != x->local) {
			/* The peer process's end: its DONE line fills it in. */
			for (i = 0; i < o->qps; i++)
				e->qp[i].completed = 0;
			continue;
		}
		for (i = 0; i < o->qps; i++) {
			struct perf_qp *q = &e->qp[i];
			uint8_t *recv = q->base + (size_t)x->nslots * x->stride;
			uint32_t s;

			q->posted = q->completed = q->rx_count = q->rx_expect = 0;
			/* a READ of this size brings this size's first bytes */
			free(q->ref);
			q->ref = NULL;
			perf_hist_init(q->hist);
			/* Counter at zero; READ sources hold their slot's pattern;
			 * everything else zero so stale data never passes. */
			for (s = 0; s < 2 * x->nslots; s++)
				memset(q->base + (size_t)s * x->stride, 0,
				       RTE_MIN(x->stride, x->size + x->grh));
			memset(q->base + (size_t)2 * x->nslots * x->stride, 0, 64);
			if (o->test == PERF_READ)
				for (s = 0; s < x->nslots; s++)
					perf_fill(recv + (size_t)s * x->stride, s, x->size);
			if (!o->validate && (o->test == PERF_SEND || o->test == PERF_WRITE))
				for (s = 0; s < x->nslots; s++)
					perf_fill(q->base + (size_t)s * x->stride, s, x->size);
		}
	}
	if (x->net != NULL) {
		x->done_sent = 0;
		x->peer_done = 0;
		x->end[x->local ^ 1].req_done = 0;
		perf_end_run(&x->end[x->local]);
	} else {
		if (rte_eal_remote_launch(perf_end_run, &x->end[1], worker) != 0) {
			fprintf(stderr, "qpio-perf: lcore %u is busy\n", worker);
			return PERF_EXIT_FAIL;
		}
		perf_end_run(&x->end[0]);
		rte_eal_wait_lcore(worker);
	}
	if (x->abort)
		return PERF_EXIT_FAIL;

	memset(r, 0, sizeof(*r));
	r->bytes = x->size;
	r->hist = malloc(sizeof(*r->hist));
	if (r->hist == NULL)
		return fail("result", ENOMEM);
	perf_hist_init(r->hist);
	secs = 0;
	for (k = 0; k < 2; k++) {
		struct perf_end *e = &x->end[k];
		double s = (double)(e->t_end - e->t_start) / (double)x->hz;

		r->checked += e->checked;
		r->mismatches += e->mismatches;
		r->lost += e->lost;
		if (o->perftest && k == x->local && !e->requester &&
		    o->test == PERF_SEND && o->mode == PERF_BW) {
			/* ib_send_bw's server reports what it received */
			for (i = 0; i < o->qps; i++)
				r->iterations += e->qp[i].rx_count;
			if (s > secs)
				secs = s;
			continue;
		}
		if (!e->requester)
			continue;
		for (i = 0; i < o->qps; i++) {
			if (e->qp[i].hist != NULL)
				perf_hist_merge(r->hist, e->qp[i].hist);
			r->iterations += e->qp[i].completed;
		}
		r->bw_peak_mib += e->peak_bps / 1048576.0;
		if (s > secs)
			secs = s;
	}
	if (o->perftest && x->pt_report && !x->end[x->local].requester) {
		/* the server of ib_write_bw, ib_read_bw, ib_atomic_bw prints
		 * its client's report */
		r->iterations = x->pt_iters;
		r->bw_peak_mib = x->pt_peak / 1048576.0;
		secs = x->pt_avg > 0 ?
			(double)x->pt_iters * x->size / x->pt_avg : 0;
	}
	r->seconds = secs;
	if (secs > 0) {
		r->bw_avg_mib = (double)r->iterations * x->size / secs / 1048576.0;
		r->msg_rate_mpps = (double)r->iterations / secs / 1e6;
	}
	if (r->bw_peak_mib < r->bw_avg_mib)
		r->bw_peak_mib = r->bw_avg_mib;
	r->rate_target_pps = o->rate;
	return 0;
}

/* Open this process's end (both ends in one process) and agree on the
 * path MTU (*mtu) and the largest MR (*max_mr) with the peer. @return 0
 * or a PERF_EXIT_ code (printed). */
static int
run_open_ends(struct perf_ctx *x, struct perf_net *net, enum qpio_mtu *mtu,
	      uint64_t *max_mr)
{
	const struct perf_opts *o = x->o;
	struct qpio_port_attr pa0, pa1;
	struct qpio_device_attr da;
	int ret;

	if (o->role != PERF_ROLE_LOCAL) {
		ret = end_open(x, &x->end[x->local], o->dev[0], NULL);
		if (ret != 0)
			return ret;
		ret = perf_remote_open(x, net);
		if (ret != 0)
			return ret;
		qpio_rdma_dev_query(x->end[x->local].dev, &da);
		qpio_rdma_port_query(x->end[x->local].dev, 1, &pa0);
		*mtu = mtu_cap(o, pa0.active_mtu);
		*max_mr = da.max_mr_size;
		if (!o->perftest)
			return perf_remote_hello(x, mtu, max_mr);
		x->end[x->local].out_reads = (o->test == PERF_READ ||
					      o->test == PERF_ATOMIC) ?
			(uint8_t)RTE_MIN(da.max_qp_rd_atom, 16u) : 1;
		return perf_pt_hello(x, mtu);
	}
	ret = end_open(x, &x->end[0], o->dev[0], NULL);
	if (ret == 0)
		ret = end_open(x, &x->end[1], o->dev[o->ndev - 1],
			       o->ndev == 1 ? x->end[0].dev : NULL);
	if (ret != 0)
		return ret;
	qpio_rdma_dev_query(x->end[0].dev, &da);
	qpio_rdma_port_query(x->end[0].dev, 1, &pa0);
	qpio_rdma_port_query(x->end[1].dev, 1, &pa1);
	*mtu = mtu_cap(o, RTE_MIN(pa0.active_mtu, pa1.active_mtu));
	*max_mr = da.max_mr_size;
	return 0;
}

/* The message sizes of the run into sizes[] (at most 32): every power of
 * two that fits (-a), or the one size; a UD message is one packet.
 * @return how many, or -PERF_EXIT_USAGE (printed). */
static int
run_sizes(const struct perf_opts *o, uint32_t mtu_bytes, uint64_t max_mr,
	  uint32_t sizes[32])
{
	unsigned int nsizes = 0;
	uint32_t s;

	if (o->all_sizes) {
		uint64_t cap = RTE_MIN((uint64_t)PERF_ALL_MAX_SIZE, max_mr / 4);

		if (o->transport == QPIO_QPT_UD)
			cap = RTE_MIN(cap, (uint64_t)mtu_bytes);
		/* perftest sweeps to 2^23 whatever the device: a peer
		 * going further than this end can is refused here */
		if (o->perftest && cap < PERF_ALL_MAX_SIZE) {
			fprintf(stderr, "qpio-perf: --perftest -a: perftest sweeps "
				"to %u bytes; this device's max_mr_size (%" PRIu64
				") takes messages of %" PRIu64 " at most; give -s "
				"sizes one by one\n", PERF_ALL_MAX_SIZE, max_mr,
				cap);
			return -PERF_EXIT_USAGE;
		}
		for (s = PERF_ALL_MIN_SIZE; s <= cap; s <<= 1)
			sizes[nsizes++] = s;
	} else if (o->transport == QPIO_QPT_UD && !o->size_set &&
		   o->size > mtu_bytes) {
		sizes[nsizes++] = mtu_bytes;    /* the UD default: one full packet */
	} else {
		if (o->transport == QPIO_QPT_UD && o->size > mtu_bytes) {
			fprintf(stderr, "qpio-perf: -s %u: a UD message is one packet "
				"(IBA 9.8), at most the path MTU of %u bytes; use "
				"-s <= %u or -c RC\n", o->size, mtu_bytes, mtu_bytes);
			return -PERF_EXIT_USAGE;
		}
		sizes[nsizes++] = o->size;
	}
	return (int)nsizes;
}

/* Print each capability the device granted below the request; with
 * --strict that ends the run. @return 0 or PERF_EXIT_USAGE. */
static int
run_report_cuts(const struct perf_opts *o, const struct perf_caps *caps)
{
	unsigned int i;

	if (caps->ncut == 0)
		return 0;
	for (i = 0; i < PERF_NCAPS; i++)
		if (caps->cap[i].cut != NULL)
			fprintf(stderr, "qpio-perf: %s %s: requested %u, granted "
				"%u (%s)\n", o->strict ? "error:" : "warning:",
				caps->cap[i].name, caps->cap[i].requested,
				caps->cap[i].granted, caps->cap[i].cut);
	if (o->strict) {
		fprintf(stderr, "qpio-perf: --strict: the device cut a "
			"requested capability; lower the request or drop --strict\n");
		return PERF_EXIT_USAGE;
	}
	return 0;
}

/* Tell each end its peer's QPNs, buffer and rkey (over the exchange, or
 * directly in one process), then walk every QP to RTS towards its peer.
 * @return 0 or a PERF_EXIT_ code (printed). */
static int
run_link_ends(struct perf_ctx *x, enum qpio_mtu mtu)
{
	const struct perf_opts *o = x->o;
	unsigned int i, k;
	int ret = 0;

	if (x->cm != NULL) {
		/* perftest -R (create_rdma_cm_connection()): a key exchange,
		 * the test QP connected by rdma_cm, another key exchange;
		 * then the tool's own exchanges, without the QP walk. */
		ret = perf_pt_keys_rdma_cm(x);
		if (ret == 0)
			ret = perf_cm_link(x, mtu);
		if (ret == 0)
			ret = perf_pt_keys_rdma_cm(x);
		if (ret == 0)
			ret = perf_pt_keys_before(x);
		if (ret == 0)
			ret = perf_pt_keys_after(x);
		return ret;
	}
	if (x->net != NULL) {
		ret = o->perftest ? perf_pt_keys_before(x) : perf_remote_qps(x);
		if (ret != 0)
			return ret;
	} else {
		for (i = 0; i < o->qps; i++) {
			x->end[0].qp[i].peer_qpn = qpio_qp_num(x->end[1].qp[i].qp);
			x->end[1].qp[i].peer_qpn = qpio_qp_num(x->end[0].qp[i].qp);
			x->end[0].qp[i].peer_base = x->end[1].qp[i].base;
			x->end[1].qp[i].peer_base = x->end[0].qp[i].base;
		}
		x->end[0].peer_rkey = qpio_mr_rkey(x->end[1].mr);
		x->end[1].peer_rkey = qpio_mr_rkey(x->end[0].mr);
	}
	for (k = 0; k < 2 && ret == 0; k++) {
		if (x->net != NULL && k != x->local)
			continue;
		for (i = 0; i < o->qps && ret == 0; i++)
			ret = qp_connect(x, &x->end[k], &x->end[k].qp[i],
					 x->end[k].peer, mtu);
		if (ret == 0 && o->transport == QPIO_QPT_UD)
			ret = end_ah(&x->end[k]);
	}
	if (ret == 0 && o->perftest)
		ret = perf_pt_keys_after(x);
	return ret;
}

int
perf_run(const struct perf_opts *o, struct perf_caps *caps,
	 struct perf_result **res, unsigned int *nres, double *tsc_hz)
{
	static struct perf_ctx x;
	static struct perf_net net = { .fd = -1 };
	uint32_t sizes[32], mtu_bytes;
	uint64_t max_mr = 0;
	unsigned int nsizes, worker, i, k;
	enum qpio_mtu mtu = QPIO_MTU_256;
	int ret;

	memset(&x, 0, sizeof(x));
	x.o = o;
	x.hz = rte_get_tsc_hz();
	*tsc_hz = (double)x.hz;
	worker = rte_get_next_lcore(-1, 1, 0);
	if (o->role != PERF_ROLE_LOCAL) {
		x.local = o->role == PERF_ROLE_SERVER ? 1 : 0;
		x.net = &net;
		srand48((long)rte_rdtsc() ^ (long)getpid());
	} else if (worker >= RTE_MAX_LCORE) {
		fprintf(stderr, "qpio-perf: the two ends run on two lcores: give EAL "
			"two, e.g. -l 0-1\n");
		return PERF_EXIT_USAGE;
	}
	x.end[0].id = 0;
	x.end[1].id = 1;
	x.end[0].peer = &x.end[1];
	x.end[1].peer = &x.end[0];
	ret = run_open_ends(&x, &net, &mtu, &max_mr);
	if (ret != 0)
		goto out;
	mtu_bytes = 128u << mtu;
	caps->path_mtu = mtu_bytes;
	ret = run_sizes(o, mtu_bytes, max_mr, sizes);
	if (ret < 0) {
		ret = -ret;
		goto out;
	}
	nsizes = (unsigned int)ret;
	ret = 0;
	for (k = 0; k < 2 && ret == 0; k++)
		if (x.net == NULL || k == x.local)
			ret = end_create(&x, &x.end[k], caps, sizes[nsizes - 1]);
	if (ret == 0)
		ret = run_report_cuts(o, caps);
	if (ret == 0)
		ret = run_link_ends(&x, mtu);
	if (ret != 0)
		goto out;
	if (x.cm != NULL) {
		/* -R: the path MTU is the REQ's, which a perftest client's
		 * rdma_cm chose; report the one the QP has. */
		struct qpio_qp_attr qa;

		if (qpio_qp_query(x.end[x.local].qp[0].qp, &qa, NULL) == 0 &&
		    qa.path_mtu >= QPIO_MTU_256 && qa.path_mtu <= QPIO_MTU_4096)
			caps->path_mtu = 128u << qa.path_mtu;
	}

	*res = calloc(nsizes, sizeof(**res));
	if (*res == NULL) {
		ret = fail("results", ENOMEM);
		goto out;
	}
	*nres = 0;
	perf_report_header(o, caps);
	x.nsizes = nsizes;
	for (i = 0; i < nsizes; i++) {
		x.size = sizes[i];
		x.size_i = i;
		ret = run_size(&x, worker, &(*res)[i]);
		if (ret != 0)
			break;
		(*nres)++;
		if (o->role == PERF_ROLE_SERVER && o->mode == PERF_LAT) {
			if (o->validate)
				printf("  validate: %" PRIu64 " checked, %" PRIu64
				       " mismatches at %u bytes (the client reports "
				       "the latency)\n", (*res)[i].checked,
				       (*res)[i].mismatches, (*res)[i].bytes);
		} else {
			perf_report_row(o, &(*res)[i], (double)x.hz);
		}
	}
	perf_report_footer(o);
out:
	if (x.net != NULL) {
		wire_report(&x.end[x.local]);
		perf_net_watchdog(o->timeout);  /* disarmed after qpio_eal_cleanup */
		perf_cm_close(&x);
		perf_net_close(x.net);
		x.net = NULL;
		end_close(&x.end[x.local], 1);
		return ret;
	}
	end_close(&x.end[1], o->ndev == 2);
	end_close(&x.end[0], 1);
	return ret;
}
