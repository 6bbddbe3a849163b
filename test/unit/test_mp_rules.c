/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * soft-mp, part two: every rule of "Completion semantics that every
 * driver must honour" (rdma_lib.rst) with the requester in one process
 * and the responder in the other. The primary is the requester and runs
 * the cases; the secondary serves requests on its own objects (QPs, CQs,
 * an SRQ, MRs with various access flags and PDs over one buffer) and
 * reports what it sees: its completions, its memory, its QP states and
 * the asynchronous events of its device, including whether its event fd
 * was woken although the events were raised by the primary's process.
 *
 * The CQ overflow also runs the other way round: the secondary's sends
 * overflow a receive CQ of the primary.
 *
 * Each case makes fresh QP pairs (an error takes both QPs of a pair to
 * ERR) and the secondary destroys its objects at the end of the case.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "qpio_soft.h"
#include "test_mp.h"

/* The rules buffer: the same layout in both processes. */
#define RBUF_LEN     (256 * 1024)
#define MR_ALL       0      /* [0, 64K): every access */
#define MR_NOWRITE   1      /* no REMOTE_WRITE */
#define MR_NOREAD    2      /* no REMOTE_READ */
#define MR_NOATOMIC  3      /* no REMOTE_ATOMIC */
#define MR_PD2       4      /* every access, on the second PD */
#define MR_NOLOCAL   5      /* no LOCAL_WRITE (no access at all) */
#define NB_MR        6
#define NB_SLOT      8
#define DEF_CQE      64
#define QUIET_MS     20     /* no further completion within this */
#define SRC_OFF      0xf000 /* sends and WRITEs come from here (MR_ALL) */

static const struct {
	uint32_t off;
	uint32_t len;
	unsigned int access;
	int pd2;
} mr_layout[NB_MR] = {
	[MR_ALL] = { 0, 64 * 1024, QPIO_ACCESS_ALL, 0 },
	[MR_NOWRITE] = { 64 * 1024, 16 * 1024, QPIO_ACCESS_LOCAL_WRITE |
			 QPIO_ACCESS_REMOTE_READ | QPIO_ACCESS_REMOTE_ATOMIC, 0 },
	[MR_NOREAD] = { 80 * 1024, 16 * 1024, QPIO_ACCESS_LOCAL_WRITE |
			QPIO_ACCESS_REMOTE_WRITE | QPIO_ACCESS_REMOTE_ATOMIC, 0 },
	[MR_NOATOMIC] = { 96 * 1024, 16 * 1024, QPIO_ACCESS_LOCAL_WRITE |
			  QPIO_ACCESS_REMOTE_WRITE | QPIO_ACCESS_REMOTE_READ, 0 },
	[MR_PD2] = { 112 * 1024, 16 * 1024, QPIO_ACCESS_ALL, 1 },
	[MR_NOLOCAL] = { 128 * 1024, 16 * 1024, 0, 0 },
};

/* Requests of the primary to the secondary (m.arg[], r.res[]). */
enum rq_type {
	RQ_SETUP = MSG_RULES, /* -> res[0] buffer address, res[1 + i] rkey */
	RQ_QP,        /* arg: peer qpn, flags (RQF_*), recv CQ depth, access,
		       * min_rnr_timer, slot sharing the recv CQ, max_recv_sge
		       * -> res[0] slot, res[1] qpn */
	RQ_RECV,      /* arg: slot (NB_SLOT: the SRQ), wr_id, count, mr, off,
		       * len, stride, offset of a second SGE (0: none) */
	RQ_POLL,      /* arg: slot, send CQ?, expected, timeout ms
		       * -> res[0] count, 4 words per completion (wc_pack) */
	RQ_FILL,      /* arg: off, len, seed */
	RQ_CHECK,     /* arg: off, len, seed, origin -> res[0] first wrong */
	RQ_U64,       /* arg: off, set?, value -> res[0] value before */
	RQ_STATE,     /* arg: slot -> res[0] QP state */
	RQ_EVENTS,    /* arg: expected, timeout ms -> res[0] event fd count,
		       * res[1] events, then type and element (ev_id) each */
	RQ_SEND,      /* arg: slot, opcode, wr_id, count, signaled mask, len
		       * -> res[0] posted, res[1] err */
	RQ_CQINFO,    /* arg: slot -> res[0] overflowed, res[1] count */
	RQ_SRQ,       /* arg: max_wr, limit */
	RQ_SRQSTATS,  /* -> res[0] posted, res[1] consumed, res[2] limit events */
	RQ_QPSTATS,   /* arg: slot -> res[0] rq_consumed */
	RQ_CLEAR,     /* destroy every QP, CQ and the SRQ -> res[0] errors */
};

#define RQF_SRQ      1u     /* receives from the SRQ */
#define RQF_SHARE_CQ 2u     /* recv CQ of slot arg[5] */

/* Element of an event, as a number both processes understand. */
#define EV_QP(slot)   (0x100u | (slot))
#define EV_RCQ(slot)  (0x200u | (slot))
#define EV_SCQ(slot)  (0x300u | (slot))
#define EV_SRQ        0x400u
#define EV_UNKNOWN    0xfffu

struct slot {
	struct qpio_qp *qp;
	struct qpio_cq *scq;
	struct qpio_cq *rcq;
	int own_rcq;
};

/* This process's objects for the rules (each process has one). */
static struct {
	struct qpio_device *dev;
	struct qpio_pd *pd;
	struct qpio_pd *pd2;
	uint8_t *buf;
	struct qpio_mr *mr[NB_MR];
	struct slot slot[NB_SLOT];
	struct qpio_srq *srq;
	const char *peer;
} R;

/* The secondary's buffer and keys, as RQ_SETUP reports them. */
static uint64_t peer_buf;
static uint32_t peer_rkey[NB_MR];
static int wfd_, rfd_;

static int
rules_setup(struct qpio_device *dev, const char *peer)
{
	unsigned int i;

	if (R.buf != NULL)
		return 0;
	R.dev = dev;
	R.peer = peer;
	R.pd = qpio_pd_alloc(dev);
	R.pd2 = qpio_pd_alloc(dev);
	R.buf = rte_zmalloc("mp_rules", RBUF_LEN, 64);
	if (R.pd == NULL || R.pd2 == NULL || R.buf == NULL) {
		fail("rules: pd/buffer: %s", rte_strerror(rte_errno));
		return -1;
	}
	for (i = 0; i < NB_MR; i++) {
		R.mr[i] = qpio_mr_reg(mr_layout[i].pd2 ? R.pd2 : R.pd,
				      R.buf + mr_layout[i].off, mr_layout[i].len,
				      mr_layout[i].access);
		if (R.mr[i] == NULL) {
			fail("rules: mr %u: %s", i, rte_strerror(rte_errno));
			return -1;
		}
	}
	return 0;
}

/* Destroy the QPs, then the CQs and the SRQ. @return the failures. */
static int
rules_clear(void)
{
	struct qpio_async_event ev;
	unsigned int i;
	int bad = 0;
	uint64_t v;

	for (i = 0; i < NB_SLOT; i++)
		if (R.slot[i].qp != NULL)
			bad += qpio_qp_destroy(R.slot[i].qp) != 0;
	for (i = 0; i < NB_SLOT; i++) {
		if (R.slot[i].scq != NULL)
			bad += qpio_cq_destroy(R.slot[i].scq) != 0;
		if (R.slot[i].rcq != NULL && R.slot[i].own_rcq)
			bad += qpio_cq_destroy(R.slot[i].rcq) != 0;
	}
	memset(R.slot, 0, sizeof(R.slot));
	if (R.srq != NULL)
		bad += qpio_srq_destroy(R.srq) != 0;
	R.srq = NULL;
	if (R.dev != NULL) {
		while (qpio_rdma_get_async_event(R.dev, &ev) == 0)
			;
		/* Wake-ups of another process come a moment after. */
		usleep(2000);
		while (read(qpio_rdma_async_event_fd(R.dev), &v, sizeof(v)) > 0)
			;
	}
	return bad;
}

void
rules_fini(void)
{
	unsigned int i;
	int bad = rules_clear();

	for (i = 0; i < NB_MR; i++)
		if (R.mr[i] != NULL)
			bad += qpio_mr_dereg(R.mr[i]) != 0;
	if (R.pd != NULL)
		bad += qpio_pd_free(R.pd) != 0;
	if (R.pd2 != NULL)
		bad += qpio_pd_free(R.pd2) != 0;
	rte_free(R.buf);
	memset(&R, 0, sizeof(R));
	CHECK_EQ(bad, 0, "destroying the rules' objects");
}

/* A new RC QP with its own send CQ, and its own recv CQ of rcq_depth
 * entries (or share_rcq's), in RESET. @return the slot, or -1. */
static int
slot_new(uint32_t rcq_depth, struct qpio_cq *share_rcq, int use_srq,
	 uint32_t max_recv_sge)
{
	struct qpio_qp_init_attr ia;
	struct slot *s;
	int i;

	for (i = 0; i < NB_SLOT; i++)
		if (R.slot[i].qp == NULL)
			break;
	if (i == NB_SLOT) {
		fail("rules: no free QP slot");
		return -1;
	}
	s = &R.slot[i];
	s->scq = qpio_cq_create(R.dev, DEF_CQE, SOCKET_ID_ANY);
	s->own_rcq = share_rcq == NULL;
	s->rcq = share_rcq != NULL ? share_rcq :
		qpio_cq_create(R.dev, rcq_depth != 0 ? rcq_depth : DEF_CQE,
			       SOCKET_ID_ANY);
	if (s->scq == NULL || s->rcq == NULL) {
		fail("rules: cq_create: %s", rte_strerror(rte_errno));
		return -1;
	}
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = s->scq;
	ia.recv_cq = s->rcq;
	ia.srq = use_srq ? R.srq : NULL;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap.max_send_wr = 16;
	ia.cap.max_recv_wr = use_srq ? 0 : 16;
	ia.cap.max_send_sge = 2;
	ia.cap.max_recv_sge = max_recv_sge != 0 ? max_recv_sge : 1;
	ia.cap.max_inline_data = 64;
	s->qp = qpio_qp_create(R.pd, &ia);
	if (s->qp == NULL) {
		fail("rules: qp_create: %s", rte_strerror(rte_errno));
		return -1;
	}
	return i;
}

static uint32_t
ev_id(const struct qpio_async_event *ev)
{
	unsigned int i;

	if (ev->event_type == QPIO_EVENT_SRQ_LIMIT_REACHED)
		return ev->element.srq == R.srq ? EV_SRQ : EV_UNKNOWN;
	for (i = 0; i < NB_SLOT; i++) {
		if (ev->event_type == QPIO_EVENT_CQ_ERR) {
			if (R.slot[i].rcq != NULL && ev->element.cq == R.slot[i].rcq)
				return EV_RCQ(i);
			if (R.slot[i].scq != NULL && ev->element.cq == R.slot[i].scq)
				return EV_SCQ(i);
		} else if (R.slot[i].qp != NULL && ev->element.qp == R.slot[i].qp) {
			return EV_QP(i);
		}
	}
	return EV_UNKNOWN;
}

/* Wait until this process's device event fd has counted want events
 * (or timeout_ms passed), then QUIET_MS more; take the queued events.
 * res[0]: the fd count, res[1]: events, then type and ev_id() of each. */
static void
events_take(unsigned int want, unsigned int timeout_ms, uint64_t *res)
{
	struct pollfd pfd = {
		.fd = qpio_rdma_async_event_fd(R.dev), .events = POLLIN,
	};
	struct qpio_async_event ev;
	uint64_t end = now_ms() + timeout_ms, v;
	unsigned int n = 0;

	res[0] = 0;
	/* The events are in the ring before the wake-up: wait for the fd
	 * to count them, then take them. */
	do {
		if (poll(&pfd, 1, 1) == 1 &&
		    read(pfd.fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
			res[0] += v;
	} while (res[0] < want && now_ms() < end);
	/* Any wake-up beyond those expected. */
	usleep(QUIET_MS * 1000);
	if (read(pfd.fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
		res[0] += v;
	while (n < (MSG_RES_WORDS - 2) / 2 &&
	       qpio_rdma_get_async_event(R.dev, &ev) == 0) {
		res[2 + 2 * n] = ev.event_type;
		res[3 + 2 * n] = ev_id(&ev);
		n++;
	}
	res[1] = n;
}

/* One completion in 4 words. */
static void
wc_pack(const struct qpio_wc *wc, uint64_t *w)
{
	w[0] = wc->wr_id;
	w[1] = ((uint64_t)wc->status << 32) | ((uint64_t)wc->opcode << 16) |
		(wc->wc_flags & 0xffff);
	w[2] = ((uint64_t)wc->imm_data << 32) | wc->byte_len;
	w[3] = ((uint64_t)wc->qp_num << 32) | wc->src_qp;
}

/* Poll cq for up to want completions within timeout_ms, then QUIET_MS
 * more for any extra one. @return how many, at most max in wc. */
static unsigned int
poll_n(struct qpio_cq *cq, struct qpio_wc *wc, unsigned int want,
       unsigned int max, unsigned int timeout_ms)
{
	uint64_t end = now_ms() + timeout_ms;
	unsigned int n = 0;

	while (n < want && now_ms() < end)
		n += qpio_cq_poll(cq, wc + n, (uint16_t)(max - n));
	end = now_ms() + QUIET_MS;
	while (n < max && now_ms() < end)
		n += qpio_cq_poll(cq, wc + n, (uint16_t)(max - n));
	return n;
}

static int
post_sends(struct qpio_qp *qp, uint8_t *buf, uint32_t lkey, uint32_t opcode,
	   uint64_t wr_id, uint32_t count, uint32_t sig_mask, uint32_t len,
	   int *err)
{
	struct qpio_send_wr wr[8];
	struct qpio_sge sg = { (uintptr_t)(buf + SRC_OFF), len, lkey };
	uint32_t i;

	memset(wr, 0, sizeof(wr));
	for (i = 0; i < count && i < RTE_DIM(wr); i++) {
		wr[i].wr_id = wr_id + i;
		wr[i].sg_list = &sg;
		wr[i].num_sge = 1;
		wr[i].opcode = (enum qpio_wr_opcode)opcode;
		wr[i].send_flags = (sig_mask >> i) & 1 ? QPIO_SEND_SIGNALED : 0;
	}
	return qpio_qp_post_send(qp, wr, (uint16_t)i, err);
}

static int
post_recvs(int slot, uint64_t wr_id, uint32_t count, uint32_t mr,
	   uint64_t off, uint32_t len, uint32_t stride, uint32_t off2)
{
	struct qpio_sge sg[2];
	struct qpio_recv_wr wr;
	uint32_t i;
	int err = 0, n = 0;

	for (i = 0; i < count; i++) {
		sg[0].addr = (uintptr_t)(R.buf + off + (uint64_t)i * stride);
		sg[0].length = len;
		sg[0].lkey = qpio_mr_lkey(R.mr[mr]);
		sg[1] = sg[0];
		sg[1].addr += off2;
		wr.wr_id = wr_id + i;
		wr.sg_list = sg;
		wr.num_sge = off2 != 0 ? 2 : 1;
		n += slot == NB_SLOT ? qpio_srq_post_recv(R.srq, &wr, 1, &err) :
			qpio_qp_post_recv(R.slot[slot].qp, &wr, 1, &err);
	}
	if ((uint32_t)n != count)
		fail("rules: post_recv: %d of %u posted (%d)", n, count, err);
	return n;
}

int
rules_serve(struct qpio_device *dev, const char *peer, const struct msg *m,
	    struct msg *r)
{
	const uint64_t *a = m->arg;
	struct qpio_wc wc[15];
	struct qpio_soft_qp_stats qs;
	struct qpio_soft_srq_stats ss;
	unsigned int i, n;
	int slot, err = 0;
	uint64_t v;

	if (m->type < MSG_RULES || m->type > RQ_CLEAR)
		return -1;
	if (m->type != RQ_SETUP && R.buf == NULL) {
		r->status = -1;
		return 0;
	}
	slot = (int)a[0];
	if ((m->type == RQ_STATE || m->type == RQ_POLL || m->type == RQ_SEND ||
	     m->type == RQ_CQINFO || m->type == RQ_QPSTATS) &&
	    (slot < 0 || slot >= NB_SLOT || R.slot[slot].qp == NULL)) {
		r->status = -1;
		return 0;
	}
	switch ((enum rq_type)m->type) {
	case RQ_SETUP:
		if (rules_setup(dev, peer) != 0) {
			r->status = -1;
			break;
		}
		r->res[0] = (uintptr_t)R.buf;
		for (i = 0; i < NB_MR; i++)
			r->res[1 + i] = qpio_mr_rkey(R.mr[i]);
		break;
	case RQ_QP:
		if ((a[1] & RQF_SHARE_CQ) &&
		    (a[5] >= NB_SLOT || R.slot[a[5]].rcq == NULL)) {
			r->status = -1;
			break;
		}
		slot = slot_new((uint32_t)a[2], a[1] & RQF_SHARE_CQ ?
				R.slot[a[5]].rcq : NULL, !!(a[1] & RQF_SRQ),
				(uint32_t)a[6]);
		if (slot < 0 || connect_qp_attr(R.slot[slot].qp, peer,
						(uint32_t)a[0], (unsigned int)a[3],
						(uint8_t)a[4], 7) != 0) {
			r->status = -1;
			break;
		}
		r->res[0] = (uint64_t)slot;
		r->res[1] = qpio_qp_num(R.slot[slot].qp);
		break;
	case RQ_RECV:
		if (slot != NB_SLOT && (slot < 0 || slot >= NB_SLOT ||
					R.slot[slot].qp == NULL)) {
			r->status = -1;
			break;
		}
		r->res[0] = (uint64_t)post_recvs(slot, a[1], (uint32_t)a[2],
						 (uint32_t)a[3], a[4],
						 (uint32_t)a[5], (uint32_t)a[6],
						 (uint32_t)a[7]);
		if (r->res[0] != a[2])
			r->status = -1;
		break;
	case RQ_POLL:
		n = poll_n(a[1] ? R.slot[slot].scq : R.slot[slot].rcq, wc,
			   (unsigned int)a[2], RTE_DIM(wc), (unsigned int)a[3]);
		r->res[0] = n;
		for (i = 0; i < n; i++)
			wc_pack(&wc[i], &r->res[1 + 4 * i]);
		break;
	case RQ_FILL:
		fill(R.buf + a[0], a[1], (uint32_t)a[2]);
		break;
	case RQ_CHECK:
		r->res[0] = check_at(R.buf + a[0], a[1], (uint32_t)a[2], a[3]);
		break;
	case RQ_U64:
		memcpy(&v, R.buf + a[0], sizeof(v));
		r->res[0] = v;
		if (a[1])
			memcpy(R.buf + a[0], &a[2], sizeof(v));
		break;
	case RQ_STATE:
		r->res[0] = qpio_qp_state(R.slot[slot].qp);
		break;
	case RQ_EVENTS:
		events_take((unsigned int)a[0], (unsigned int)a[1], r->res);
		break;
	case RQ_SEND:
		r->res[0] = (uint64_t)post_sends(R.slot[slot].qp, R.buf,
			qpio_mr_lkey(R.mr[MR_ALL]), (uint32_t)a[1], a[2],
			(uint32_t)a[3], (uint32_t)a[4], (uint32_t)a[5], &err);
		r->res[1] = (uint64_t)(int64_t)err;
		break;
	case RQ_CQINFO:
		r->res[0] = (uint64_t)qpio_soft_cq_overflowed(R.slot[slot].rcq);
		if (qpio_soft_cq_overflow_count(R.slot[slot].rcq, &v) != 0)
			r->status = -1;
		r->res[1] = v;
		break;
	case RQ_SRQ: {
		struct qpio_srq_attr sa = { (uint32_t)a[0], 1, 0 };

		R.srq = qpio_srq_create(R.pd, &sa);
		if (R.srq == NULL) {
			r->status = -1;
			break;
		}
		sa.srq_limit = (uint32_t)a[1];
		if (a[1] != 0 && qpio_srq_modify(R.srq, &sa, QPIO_SRQ_LIMIT) != 0)
			r->status = -1;
		break;
	}
	case RQ_SRQSTATS:
		if (R.srq == NULL || qpio_soft_srq_stats(R.srq, &ss) != 0) {
			r->status = -1;
			break;
		}
		r->res[0] = ss.posted;
		r->res[1] = ss.consumed;
		r->res[2] = ss.limit_events;
		break;
	case RQ_QPSTATS:
		if (qpio_soft_qp_stats(R.slot[slot].qp, &qs) != 0)
			r->status = -1;
		r->res[0] = qs.rq_consumed;
		break;
	case RQ_CLEAR:
		r->res[0] = (uint64_t)rules_clear();
		break;
	}
	return 0;
}

/* ---------------------------------------------------------------- */
/* The primary's side.                                                */
/* ---------------------------------------------------------------- */

/* Ask the secondary; args are a[0..n). @return 0 and r, or -1. */
static int
rq(struct msg *r, uint32_t type, unsigned int n, ...)
{
	struct msg m;
	va_list ap;
	unsigned int i;

	memset(&m, 0, sizeof(m));
	m.type = type;
	va_start(ap, n);
	for (i = 0; i < n && i < MSG_ARGS; i++)
		m.arg[i] = va_arg(ap, uint64_t);
	va_end(ap);
	if (ask(wfd_, rfd_, &m, r) != 0)
		return -1;
	if (r->status != 0) {
		fail("the secondary could not do request %u", type);
		return -1;
	}
	return 0;
}

#define A(x) ((uint64_t)(x))

/* Options of a QP pair. */
struct pair_opt {
	unsigned int rsp_access;   /* responder QP access flags */
	uint8_t min_rnr_timer;     /* responder's */
	uint8_t rnr_retry;         /* requester's */
	uint32_t rcq_depth;        /* responder's recv CQ, 0 = default */
	uint32_t flags;            /* RQF_* */
	uint32_t share_slot;       /* with RQF_SHARE_CQ */
	uint32_t max_recv_sge;
	uint32_t p_rcq_depth;      /* the primary QP's recv CQ, 0 = default */
	uint32_t p_flags;          /* RQF_SHARE_CQ: the primary's ... */
	uint32_t p_share_slot;     /* ... slot whose recv CQ it shares */
};

/* A connected RC pair: the primary's QP is the requester, except in
 * rule_cq_overflow_rev(). */
struct pair {
	int req;                   /* primary slot */
	int rsp;                   /* secondary slot */
	uint32_t rsp_qpn;
};

static const struct pair_opt def_opt = {
	.rsp_access = QPIO_ACCESS_ALL, .min_rnr_timer = 1, .rnr_retry = 7,
	.max_recv_sge = 1,
};

/* A requester QP here connected to a responder QP there. */
static int
pair_new(struct pair *p, const struct pair_opt *o)
{
	struct msg r;

	p->req = slot_new(o->p_rcq_depth, o->p_flags & RQF_SHARE_CQ ?
			  R.slot[o->p_share_slot].rcq : NULL, 0, 1);
	if (p->req < 0)
		return -1;
	if (rq(&r, RQ_QP, 7, A(qpio_qp_num(R.slot[p->req].qp)), A(o->flags),
	       A(o->rcq_depth), A(o->rsp_access), A(o->min_rnr_timer),
	       A(o->share_slot), A(o->max_recv_sge)) != 0)
		return -1;
	p->rsp = (int)r.res[0];
	p->rsp_qpn = (uint32_t)r.res[1];
	return connect_qp_attr(R.slot[p->req].qp, R.peer, p->rsp_qpn,
			       QPIO_ACCESS_ALL, 1, o->rnr_retry);
}

/* Post one WR on the requester of p. sge_mr/sge_off/len: local SGE (of
 * this process's rules buffer); no SGE when len is 0 and nosge. */
static int
req_post(const struct pair *p, uint32_t opcode, uint64_t wr_id,
	 unsigned int flags, uint32_t sge_mr, uint64_t sge_off, uint32_t len,
	 uint64_t raddr, uint32_t rkey, uint64_t cmp_add, uint64_t swap)
{
	struct qpio_sge sg = {
		(uintptr_t)(R.buf + sge_off), len, qpio_mr_lkey(R.mr[sge_mr]),
	};
	struct qpio_send_wr wr;
	int err = 0;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = (enum qpio_wr_opcode)opcode;
	wr.send_flags = flags;
	if (opcode == QPIO_WR_ATOMIC_CMP_AND_SWP ||
	    opcode == QPIO_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (qpio_qp_post_send(R.slot[p->req].qp, &wr, 1, &err) != 1) {
		fail("post_send opcode %u: %d", opcode, err);
		return -1;
	}
	return 0;
}

/* Poll the requester's send CQ: exactly want completions. */
static unsigned int
req_poll(const struct pair *p, struct qpio_wc *wc, unsigned int want,
	 unsigned int max)
{
	unsigned int n = poll_n(R.slot[p->req].scq, wc, want, max,
				CQ_TIMEOUT_MS);

	CHECK_EQ(n, want, "requester completions");
	return n;
}

/* One signaled WR and its completion's status. */
static int
req_one(const struct pair *p, uint32_t opcode, uint64_t wr_id,
	uint32_t sge_mr, uint64_t sge_off, uint32_t len, uint64_t raddr,
	uint32_t rkey, uint64_t cmp_add, uint64_t swap, struct qpio_wc *wc)
{
	struct qpio_wc w[2];

	if (req_post(p, opcode, wr_id, QPIO_SEND_SIGNALED, sge_mr, sge_off,
		     len, raddr, rkey, cmp_add, swap) != 0)
		return -1;
	if (req_poll(p, w, 1, 2) != 1)
		return -1;
	CHECK_EQ(w[0].wr_id, wr_id, "requester wr_id");
	*wc = w[0];
	return (int)w[0].status;
}

/* The responder's completions: exactly want, unpacked into wc. */
static unsigned int
rsp_poll(const struct pair *p, int send_cq, unsigned int want,
	 struct qpio_wc *wc)
{
	struct msg r;
	unsigned int i, n;

	if (rq(&r, RQ_POLL, 4, A(p->rsp), A(send_cq), A(want),
	       A(CQ_TIMEOUT_MS)) != 0)
		return 0;
	n = (unsigned int)r.res[0];
	CHECK_EQ(n, want, "responder completions");
	for (i = 0; i < n && i < 15; i++) {
		const uint64_t *w = &r.res[1 + 4 * i];

		memset(&wc[i], 0, sizeof(wc[i]));
		wc[i].wr_id = w[0];
		wc[i].status = (enum qpio_wc_status)(w[1] >> 32);
		wc[i].opcode = (enum qpio_wc_opcode)((w[1] >> 16) & 0xffff);
		wc[i].wc_flags = (unsigned int)(w[1] & 0xffff);
		wc[i].imm_data = (uint32_t)(w[2] >> 32);
		wc[i].byte_len = (uint32_t)w[2];
		wc[i].qp_num = (uint32_t)(w[3] >> 32);
		wc[i].src_qp = (uint32_t)w[3];
	}
	return n;
}

static uint64_t
rsp_u64(struct msg *r, uint32_t type, unsigned int n, uint64_t a0,
	uint64_t a1, uint64_t a2, uint64_t a3)
{
	if (rq(r, type, n, a0, a1, a2, a3) != 0)
		return UINT64_MAX;
	return r->res[0];
}

static uint64_t
rsp_state(const struct pair *p)
{
	struct msg r;

	return rsp_u64(&r, RQ_STATE, 1, A(p->rsp), 0, 0, 0);
}

/* The responder's memory [off, off + len) still holds seed's pattern. */
static void
rsp_unchanged(uint64_t off, uint32_t len, uint32_t seed, const char *what)
{
	struct msg r;

	CHECK_EQ(rsp_u64(&r, RQ_CHECK, 4, off, A(len), A(seed), 0), len, what);
}

/* The events of the secondary's device (local: of this process's):
 * exactly the n given (type, element) pairs, in order, and its event fd
 * woken n times. */
static void
events_expect(int local, unsigned int n, const uint32_t *want)
{
	struct msg r;
	unsigned int i;

	if (local)
		events_take(n, CQ_TIMEOUT_MS, r.res);
	else if (rq(&r, RQ_EVENTS, 2, A(n), A(CQ_TIMEOUT_MS)) != 0)
		return;
	CHECK_EQ(r.res[0], n, "responder's event fd counter (woken from "
		 "the requester's process)");
	CHECK_EQ(r.res[1], n, "responder's async events");
	for (i = 0; i < n && i < r.res[1]; i++) {
		CHECK_EQ(r.res[2 + 2 * i], want[2 * i], "async event type");
		CHECK_EQ(r.res[3 + 2 * i], want[2 * i + 1], "async event element");
	}
}

static void
clear_all(void)
{
	struct msg r;

	CHECK_EQ(rules_clear(), 0, "destroying the primary's rule objects");
	if (rq(&r, RQ_CLEAR, 0) == 0)
		CHECK_EQ(r.res[0], 0, "destroying the secondary's rule objects");
}

static uint64_t
raddr(uint32_t mr, uint64_t off)
{
	return peer_buf + mr_layout[mr].off + off;
}

/* Rule 1: each posted WR completes exactly once in error (flush, signaled
 * or not); the first failing WR moves the QP to ERR. */
static void
rule_flush(void)
{
	struct pair p;
	struct qpio_wc wc[8];
	struct qpio_send_wr wr[4];
	struct qpio_sge sg = { 0, 64, 0 };
	struct msg r;
	unsigned int i, n;
	uint32_t ev[2];
	int err = 0;

	if (pair_new(&p, &def_opt) != 0)
		return;
	rq(&r, RQ_FILL, 3, A(0x1000), A(256), A(11));
	rq(&r, RQ_RECV, 7, A(p.rsp), A(0x100), A(3), A(MR_ALL), A(0x2000),
	   A(256), A(256));
	sg.addr = (uintptr_t)(R.buf + SRC_OFF);
	sg.lkey = qpio_mr_lkey(R.mr[MR_ALL]);
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 4; i++) {
		wr[i].wr_id = 0xa0 + i;
		wr[i].sg_list = &sg;
		wr[i].num_sge = 1;
	}
	/* A WRITE with a wrong rkey (signaled), then an unsignaled SEND, a
	 * signaled SEND, an unsignaled valid WRITE: one burst. */
	wr[0].opcode = QPIO_WR_RDMA_WRITE;
	wr[0].send_flags = QPIO_SEND_SIGNALED;
	wr[0].wr.rdma.remote_addr = raddr(MR_ALL, 0x1000);
	wr[0].wr.rdma.rkey = peer_rkey[MR_ALL] ^ 0x1;
	wr[1].opcode = QPIO_WR_SEND;
	wr[2].opcode = QPIO_WR_SEND;
	wr[2].send_flags = QPIO_SEND_SIGNALED;
	wr[3].opcode = QPIO_WR_RDMA_WRITE;
	wr[3].wr.rdma.remote_addr = raddr(MR_ALL, 0x1000);
	wr[3].wr.rdma.rkey = peer_rkey[MR_ALL];
	CHECK_EQ(qpio_qp_post_send(R.slot[p.req].qp, wr, 4, &err), 4,
		 "burst of 4 posted");
	n = req_poll(&p, wc, 4, RTE_DIM(wc));
	for (i = 0; i < n; i++) {
		CHECK_EQ(wc[i].wr_id, 0xa0 + i, "requester wr_id, in order");
		CHECK_EQ(wc[i].status, i == 0 ? QPIO_WC_REM_ACCESS_ERR :
			 QPIO_WC_WR_FLUSH_ERR, "requester status");
	}
	CHECK_EQ(qpio_qp_state(R.slot[p.req].qp), QPIO_QPS_ERR,
		 "requester state");
	rsp_unchanged(0x1000, 256, 11, "WRITE target after the flush");
	/* The responder refused the access: ERR, its receives flushed. */
	CHECK_EQ(rsp_state(&p), QPIO_QPS_ERR, "responder state");
	n = rsp_poll(&p, 0, 3, wc);
	for (i = 0; i < n; i++) {
		CHECK_EQ(wc[i].wr_id, 0x100 + i, "responder receive wr_id");
		CHECK_EQ(wc[i].status, QPIO_WC_WR_FLUSH_ERR,
			 "responder receive status");
		CHECK_EQ(wc[i].opcode, QPIO_WC_RECV, "responder receive opcode");
	}
	ev[0] = QPIO_EVENT_QP_ACCESS_ERR;
	ev[1] = EV_QP(p.rsp);
	events_expect(0, 1, ev);
	/* The responder's own sends in ERR: signaled or not, each flushed
	 * once. */
	if (rq(&r, RQ_SEND, 6, A(p.rsp), A(QPIO_WR_SEND), A(0x200), A(2),
	       A(0x1), A(16)) == 0)
		CHECK_EQ(r.res[0], 2, "responder sends posted in ERR");
	n = rsp_poll(&p, 1, 2, wc);
	for (i = 0; i < n; i++) {
		CHECK_EQ(wc[i].wr_id, 0x200 + i, "responder send wr_id");
		CHECK_EQ(wc[i].status, QPIO_WC_WR_FLUSH_ERR,
			 "responder send status");
	}
	clear_all();
}

/* Rule 2: a receive shorter than the message. Also: two 4-byte SGEs take
 * an 8-byte message. */
static void
rule_short_recv(void)
{
	struct pair_opt o = def_opt;
	struct pair p;
	struct qpio_wc wc[4];
	struct msg r;

	if (pair_new(&p, &def_opt) != 0)
		return;
	/* A 4-byte receive at 0x2010, guard bytes 0x2000..0x2040. */
	rq(&r, RQ_FILL, 3, A(0x2000), A(64), A(21));
	rq(&r, RQ_RECV, 7, A(p.rsp), A(0x300), A(1), A(MR_ALL), A(0x2010),
	   A(4), A(0));
	fill(R.buf + SRC_OFF, 8, 22);
	if (req_one(&p, QPIO_WR_SEND, 0x301, MR_ALL, SRC_OFF, 8, 0, 0, 0, 0,
		    wc) >= 0) {
		CHECK_EQ(wc[0].status, QPIO_WC_REM_INV_REQ_ERR,
			 "sender: remote error");
		CHECK_EQ(wc[0].opcode, QPIO_WC_SEND, "sender opcode");
	}
	CHECK_EQ(qpio_qp_state(R.slot[p.req].qp), QPIO_QPS_ERR, "sender state");
	if (rsp_poll(&p, 0, 1, wc) == 1) {
		CHECK_EQ(wc[0].wr_id, 0x300, "receiver wr_id");
		CHECK_EQ(wc[0].status, QPIO_WC_LOC_LEN_ERR, "receiver status");
	}
	CHECK_EQ(rsp_u64(&r, RQ_CHECK, 4, 0x2000, 16, 21, 0), 16,
		 "guard bytes before the receive");
	CHECK_EQ(rsp_u64(&r, RQ_CHECK, 4, 0x2014, 44, 21, 0x14), 44,
		 "guard bytes after the receive");
	CHECK_EQ(rsp_state(&p), QPIO_QPS_ERR, "receiver state");
	events_expect(0, 0, NULL);
	clear_all();

	/* Scatter: 4 + 4 bytes. */
	o.max_recv_sge = 2;
	if (pair_new(&p, &o) != 0)
		return;
	rq(&r, RQ_FILL, 3, A(0x3000), A(64), A(23));
	rq(&r, RQ_RECV, 8, A(p.rsp), A(0x310), A(1), A(MR_ALL), A(0x3000),
	   A(4), A(0), A(16));
	fill(R.buf + SRC_OFF, 8, 24);
	if (req_one(&p, QPIO_WR_SEND, 0x311, MR_ALL, SRC_OFF, 8, 0, 0, 0, 0,
		    wc) >= 0)
		CHECK_EQ(wc[0].status, QPIO_WC_SUCCESS, "two-SGE send status");
	if (rsp_poll(&p, 0, 1, wc) == 1) {
		CHECK_EQ(wc[0].status, QPIO_WC_SUCCESS, "two-SGE receive status");
		CHECK_EQ(wc[0].byte_len, 8, "two-SGE receive byte_len");
	}
	CHECK_EQ(rsp_u64(&r, RQ_CHECK, 4, 0x3000, 4, 24, 0), 4,
		 "bytes 0..3 in the first SGE");
	CHECK_EQ(rsp_u64(&r, RQ_CHECK, 4, 0x3010, 4, 24, 4), 4,
		 "bytes 4..7 in the second SGE");
	CHECK_EQ(rsp_u64(&r, RQ_CHECK, 4, 0x3004, 12, 23, 4), 12,
		 "bytes between the SGEs");
	clear_all();
}

/* Rule 3: a local SGE the lkey does not cover, or of another PD:
 * LOC_PROT_ERR, nothing read or written; on either side. */
static void
rule_loc_prot(void)
{
	static const struct {
		const char *what;
		uint32_t opcode;
		uint32_t mr;
		uint64_t off;
	} req_cases[] = {
		{ "SEND, SGE past the MR's end", QPIO_WR_SEND, MR_ALL,
		  64 * 1024 - 8 },
		{ "WRITE, SGE of an MR of another PD", QPIO_WR_RDMA_WRITE,
		  MR_PD2, 0 },
		{ "READ into an MR without LOCAL_WRITE", QPIO_WR_RDMA_READ,
		  MR_NOLOCAL, 0 },
	};
	static const struct {
		const char *what;
		uint32_t mr;
		uint64_t off;
	} rsp_cases[] = {
		{ "receive SGE past the MR's end", MR_ALL, 64 * 1024 - 8 },
		{ "receive SGE of an MR of another PD", MR_PD2, 0x100 },
	};
	struct pair p;
	struct qpio_wc wc[4];
	struct msg r;
	unsigned int i;

	for (i = 0; i < RTE_DIM(req_cases); i++) {
		uint64_t loff = mr_layout[req_cases[i].mr].off + req_cases[i].off;

		if (pair_new(&p, &def_opt) != 0)
			return;
		/* Responder: a receive and a WRITE/READ target, patterned. */
		rq(&r, RQ_FILL, 3, A(0x4000), A(0x200), A(31));
		rq(&r, RQ_RECV, 7, A(p.rsp), A(0x400), A(1), A(MR_ALL),
		   A(0x4000), A(64), A(0));
		fill(R.buf + loff, 64, 32);
		if (req_one(&p, req_cases[i].opcode, 0x401, req_cases[i].mr,
			    loff, 64, raddr(MR_ALL, 0x4100),
			    peer_rkey[MR_ALL], 0, 0, wc) >= 0)
			CHECK_EQ(wc[0].status, QPIO_WC_LOC_PROT_ERR,
				 req_cases[i].what);
		CHECK_EQ(qpio_qp_state(R.slot[p.req].qp), QPIO_QPS_ERR,
			 "requester state");
		CHECK_EQ(check(R.buf + loff, 64, 32), 64,
			 "the requester's SGE bytes unchanged");
		rsp_unchanged(0x4000, 0x200, 31, "responder memory");
		rsp_poll(&p, 0, 0, wc);
		CHECK_EQ(rsp_u64(&r, RQ_QPSTATS, 1, A(p.rsp), 0, 0, 0), 0,
			 "receives the responder's device took");
		CHECK_EQ(rsp_state(&p), QPIO_QPS_RTS, "responder state");
		clear_all();
	}
	for (i = 0; i < RTE_DIM(rsp_cases); i++) {
		uint64_t roff = mr_layout[rsp_cases[i].mr].off + rsp_cases[i].off;

		if (pair_new(&p, &def_opt) != 0)
			return;
		rq(&r, RQ_FILL, 3, A(roff), A(64), A(33));
		rq(&r, RQ_RECV, 7, A(p.rsp), A(0x410), A(1), A(rsp_cases[i].mr),
		   A(roff), A(64), A(0));
		fill(R.buf + SRC_OFF, 32, 34);
		if (req_one(&p, QPIO_WR_SEND, 0x411, MR_ALL, SRC_OFF, 32, 0, 0,
			    0, 0, wc) >= 0)
			CHECK_EQ(wc[0].status, QPIO_WC_REM_OP_ERR,
				 "sender status");
		if (rsp_poll(&p, 0, 1, wc) == 1) {
			CHECK_EQ(wc[0].wr_id, 0x410, "receiver wr_id");
			CHECK_EQ(wc[0].status, QPIO_WC_LOC_PROT_ERR,
				 rsp_cases[i].what);
		}
		rsp_unchanged(roff, 64, 33, "receive buffer");
		CHECK_EQ(rsp_state(&p), QPIO_QPS_ERR, "receiver state");
		clear_all();
	}
}

/* Rule 4: remote op outside the MR, wrong rkey, wrong PD, missing remote
 * access flag (of the MR or of the QP): REM_ACCESS_ERR, target unchanged. */
static void
rule_rem_access(void)
{
	static const struct {
		const char *what;
		uint32_t opcode;
		uint32_t mr;
		uint64_t off;
		uint32_t rkey_xor;
		unsigned int qp_access;
	} cases[] = {
		{ "WRITE past the MR's end", QPIO_WR_RDMA_WRITE, MR_ALL,
		  64 * 1024 - 32, 0, QPIO_ACCESS_ALL },
		{ "READ past the MR's end", QPIO_WR_RDMA_READ, MR_NOWRITE,
		  16 * 1024 - 32, 0, QPIO_ACCESS_ALL },
		{ "WRITE with a wrong rkey", QPIO_WR_RDMA_WRITE, MR_ALL, 0x100,
		  0x1, QPIO_ACCESS_ALL },
		{ "WRITE into an MR of another PD", QPIO_WR_RDMA_WRITE, MR_PD2,
		  0x100, 0, QPIO_ACCESS_ALL },
		{ "WRITE into an MR without REMOTE_WRITE", QPIO_WR_RDMA_WRITE,
		  MR_NOWRITE, 0x100, 0, QPIO_ACCESS_ALL },
		{ "READ of an MR without REMOTE_READ", QPIO_WR_RDMA_READ,
		  MR_NOREAD, 0x100, 0, QPIO_ACCESS_ALL },
		{ "FETCH_AND_ADD on an MR without REMOTE_ATOMIC",
		  QPIO_WR_ATOMIC_FETCH_AND_ADD, MR_NOATOMIC, 0x100, 0,
		  QPIO_ACCESS_ALL },
		{ "WRITE to a QP without REMOTE_WRITE", QPIO_WR_RDMA_WRITE,
		  MR_ALL, 0x100, 0, QPIO_ACCESS_LOCAL_WRITE |
		  QPIO_ACCESS_REMOTE_READ | QPIO_ACCESS_REMOTE_ATOMIC },
	};
	struct pair_opt o = def_opt;
	struct pair p;
	struct qpio_wc wc[2];
	struct msg r;
	uint32_t ev[2];
	unsigned int i;

	for (i = 0; i < RTE_DIM(cases); i++) {
		uint64_t roff = mr_layout[cases[i].mr].off + cases[i].off;
		uint32_t len = cases[i].opcode == QPIO_WR_ATOMIC_FETCH_AND_ADD ?
			8 : 64;

		o.rsp_access = cases[i].qp_access;
		if (pair_new(&p, &o) != 0)
			return;
		/* The target and 32 bytes on each side of it. */
		rq(&r, RQ_FILL, 3, A(roff - 32), A(len + 64), A(41));
		fill(R.buf + 0x5000, 64, 42);
		if (req_one(&p, cases[i].opcode, 0x500 + i, MR_ALL, 0x5000, len,
			    raddr(cases[i].mr, cases[i].off),
			    peer_rkey[cases[i].mr] ^ cases[i].rkey_xor, 1, 0,
			    wc) >= 0)
			CHECK_EQ(wc[0].status, QPIO_WC_REM_ACCESS_ERR,
				 cases[i].what);
		CHECK_EQ(check(R.buf + 0x5000, 64, 42), 64,
			 "the requester's buffer unchanged");
		rsp_unchanged(roff - 32, len + 64, 41,
			      "target memory in the responder's process");
		CHECK_EQ(rsp_state(&p), QPIO_QPS_ERR, "responder state");
		ev[0] = QPIO_EVENT_QP_ACCESS_ERR;
		ev[1] = EV_QP(p.rsp);
		events_expect(0, 1, ev);
		clear_all();
	}
}

/* Rule 5: RNR retries, spaced by the responder's min_rnr_timer, then
 * RNR_RETRY_EXC_ERR; 7 retries until the other process posts a receive. */
static void
rule_rnr(void)
{
	/* timer 16: 2.56 ms (IBA 9.7.5.2.8) */
	static const uint8_t retries[] = { 0, 3 };
	struct pair_opt o = def_opt;
	struct qpio_soft_qp_stats st;
	struct pair p;
	struct qpio_wc wc[4];
	struct msg r;
	uint64_t t0, dt = 0, dt_before, pre, end, nak_us[8], before_us[8];
	unsigned int i, k, n, nb_nak;

	o.min_rnr_timer = 16;
	for (i = 0; i < RTE_DIM(retries); i++) {
		o.rnr_retry = retries[i];
		if (pair_new(&p, &o) != 0)
			return;
		fill(R.buf + SRC_OFF, 32, 51);
		t0 = rte_get_tsc_cycles();
		req_post(&p, QPIO_WR_SEND, 0x600, QPIO_SEND_SIGNALED, MR_ALL,
			 SRC_OFF, 32, 0, 0, 0, 0);
		req_post(&p, QPIO_WR_SEND, 0x601, 0, MR_ALL, SRC_OFF, 32, 0, 0,
			 0, 0);
		/* Poll, and note when each RNR NAK comes (in us). */
		nb_nak = 0;
		n = 0;
		dt_before = 0;
		end = now_ms() + CQ_TIMEOUT_MS;
		while (n == 0 && now_ms() < end) {
			n = qpio_cq_poll(R.slot[p.req].scq, wc, 1);
			/* The other process may run this QP too: a NAK can be
			 * counted at any moment, so a look is bounded by a
			 * time taken before its read of the count (pre) and
			 * one taken after (dt). */
			pre = (rte_get_tsc_cycles() - t0) * 1000000 /
				rte_get_tsc_hz();
			qpio_soft_qp_stats(R.slot[p.req].qp, &st);
			dt = (rte_get_tsc_cycles() - t0) * 1000000 /
				rte_get_tsc_hz();
			/* NAK k came after the read of the last look that did
			 * not see it (so after that look's pre: before_us)
			 * and by this look's read (nak_us) */
			while (nb_nak < st.rnr_naks && nb_nak < RTE_DIM(nak_us)) {
				before_us[nb_nak] = dt_before;
				nak_us[nb_nak++] = dt;
			}
			dt_before = pre;
		}
		CHECK_EQ(n, 1, "first completion");
		CHECK_EQ(nb_nak, 1u + retries[i], "RNR NAKs seen while polling");
		/* Each retry waits the responder's timer: 2.56 ms at least.
		 * The poller sees a NAK some time after it came, so the most
		 * two NAKs can be apart is from the last look that did not see
		 * the first (before its read) to the look that saw the second
		 * (after its read): below 2.56 ms the retry was early,
		 * whatever the poller's delays or the other process's runs. */
		for (k = 1; k < nb_nak; k++)
			if (nak_us[k] - before_us[k - 1] < 2560)
				fail("rnr_retry %u: NAK %u came at most %" PRIu64
				     " us after the one before, expected >= 2560 us",
				     retries[i], k + 1,
				     nak_us[k] - before_us[k - 1]);
		if (n == 1) {
			CHECK_EQ(wc[0].wr_id, 0x600, "RNR-failed wr_id");
			CHECK_EQ(wc[0].status, QPIO_WC_RNR_RETRY_EXC_ERR,
				 "RNR-failed status");
		}
		n = req_poll(&p, wc, 1, 2);
		if (n == 1) {
			CHECK_EQ(wc[0].wr_id, 0x601, "later WR: flushed wr_id");
			CHECK_EQ(wc[0].status, QPIO_WC_WR_FLUSH_ERR,
				 "later WR: flushed");
		}
		CHECK_EQ(qpio_soft_qp_stats(R.slot[p.req].qp, &st), 0, "stats");
		CHECK_EQ(st.rnr_naks, 1u + retries[i], "RNR NAKs (1 + rnr_retry)");
		CHECK_EQ(st.rnr_retry_exceeded, 1, "rnr_retry_exceeded");
		printf("[primary] rnr_retry %u, min_rnr_timer 2.56 ms: "
		       "RNR_RETRY_EXC_ERR after %" PRIu64 " us\n", retries[i],
		       dt);
		CHECK_EQ(qpio_qp_state(R.slot[p.req].qp), QPIO_QPS_ERR,
			 "requester state");
		/* The responder took nothing and is unharmed. */
		rsp_poll(&p, 0, 0, wc);
		CHECK_EQ(rsp_state(&p), QPIO_QPS_RTS, "responder state");
		clear_all();
	}

	/* 7 = forever: the receive comes from the other process later. */
	o.rnr_retry = 7;
	o.min_rnr_timer = 1;  /* 0.01 ms */
	if (pair_new(&p, &o) != 0)
		return;
	fill(R.buf + SRC_OFF, 100, 52);
	req_post(&p, QPIO_WR_SEND, 0x610, QPIO_SEND_SIGNALED, MR_ALL, SRC_OFF,
		 100, 0, 0, 0, 0);
	CHECK_EQ(poll_n(R.slot[p.req].scq, wc, 0, 1, 0), 0,
		 "completion while no receive is posted");
	CHECK_EQ(qpio_soft_qp_stats(R.slot[p.req].qp, &st), 0, "stats");
	if (st.rnr_naks < 2)
		fail("rnr_retry 7: %" PRIu64 " RNR NAKs in %u ms, expected "
		     "retries", st.rnr_naks, QUIET_MS);
	rq(&r, RQ_RECV, 7, A(p.rsp), A(0x611), A(1), A(MR_ALL), A(0x6000),
	   A(256), A(0));
	n = req_poll(&p, wc, 1, 2);
	if (n == 1)
		CHECK_EQ(wc[0].status, QPIO_WC_SUCCESS, "rnr_retry 7: status");
	CHECK_EQ(qpio_soft_qp_stats(R.slot[p.req].qp, &st), 0, "stats");
	CHECK_EQ(st.rnr_retry_exceeded, 0, "rnr_retry 7: retries exceeded");
	if (rsp_poll(&p, 0, 1, wc) == 1) {
		CHECK_EQ(wc[0].wr_id, 0x611, "delivered receive wr_id");
		CHECK_EQ(wc[0].status, QPIO_WC_SUCCESS, "delivered status");
		CHECK_EQ(wc[0].byte_len, 100, "delivered byte_len");
	}
	CHECK_EQ(rsp_u64(&r, RQ_CHECK, 4, 0x6000, 100, 52, 0), 100,
		 "delivered payload");
	CHECK_EQ(rsp_u64(&r, RQ_QPSTATS, 1, A(p.rsp), 0, 0, 0), 1,
		 "receives taken: exactly one");
	clear_all();
}

/* Rule 6: atomics return the original value; a misaligned remote address
 * is an invalid request, nothing changes. */
static void
rule_atomics(void)
{
	static const uint32_t ops[] = {
		QPIO_WR_ATOMIC_CMP_AND_SWP, QPIO_WR_ATOMIC_FETCH_AND_ADD,
	};
	struct pair p;
	struct qpio_wc wc[2];
	struct msg r;
	uint32_t ev[2];
	uint64_t orig, guard = UINT64_C(0xa5a5a5a5a5a5a5a5);
	unsigned int i;

	if (pair_new(&p, &def_opt) != 0)
		return;
	rq(&r, RQ_U64, 3, A(0x7000), A(1), UINT64_C(0x1122334455667788));
	memset(R.buf + 0x7000, 0xee, 8);
	if (req_one(&p, QPIO_WR_ATOMIC_CMP_AND_SWP, 0x700, MR_ALL, 0x7000, 8,
		    raddr(MR_ALL, 0x7000), peer_rkey[MR_ALL],
		    UINT64_C(0x1122334455667788), UINT64_C(0x0a0b0c0d),
		    wc) >= 0)
		CHECK_EQ(wc[0].status, QPIO_WC_SUCCESS, "CAS status");
	memcpy(&orig, R.buf + 0x7000, 8);
	CHECK_EQ(orig, UINT64_C(0x1122334455667788), "CAS: original value");
	if (req_one(&p, QPIO_WR_ATOMIC_FETCH_AND_ADD, 0x701, MR_ALL, 0x7000, 8,
		    raddr(MR_ALL, 0x7000), peer_rkey[MR_ALL], 5, 0, wc) >= 0)
		CHECK_EQ(wc[0].status, QPIO_WC_SUCCESS, "FAA status");
	memcpy(&orig, R.buf + 0x7000, 8);
	CHECK_EQ(orig, UINT64_C(0x0a0b0c0d), "FAA: original value");
	CHECK_EQ(rsp_u64(&r, RQ_U64, 1, A(0x7000), 0, 0, 0),
		 UINT64_C(0x0a0b0c12), "the responder's integer");
	clear_all();

	for (i = 0; i < RTE_DIM(ops); i++) {
		if (pair_new(&p, &def_opt) != 0)
			return;
		rq(&r, RQ_U64, 3, A(0x7100), A(1), A(guard));
		rq(&r, RQ_U64, 3, A(0x7108), A(1), A(guard));
		memset(R.buf + 0x7000, 0xee, 8);
		if (req_one(&p, ops[i], 0x710 + i, MR_ALL, 0x7000, 8,
			    raddr(MR_ALL, 0x7104), peer_rkey[MR_ALL], guard, 1,
			    wc) >= 0)
			CHECK_EQ(wc[0].status, QPIO_WC_REM_INV_REQ_ERR,
				 "misaligned atomic status");
		memcpy(&orig, R.buf + 0x7000, 8);
		CHECK_EQ(orig, UINT64_C(0xeeeeeeeeeeeeeeee),
			 "misaligned atomic: local buffer unchanged");
		CHECK_EQ(rsp_u64(&r, RQ_U64, 1, A(0x7100), 0, 0, 0), guard,
			 "misaligned atomic: responder word 0 unchanged");
		CHECK_EQ(rsp_u64(&r, RQ_U64, 1, A(0x7108), 0, 0, 0), guard,
			 "misaligned atomic: responder word 1 unchanged");
		CHECK_EQ(rsp_state(&p), QPIO_QPS_ERR, "responder state");
		ev[0] = QPIO_EVENT_QP_REQ_ERR;
		ev[1] = EV_QP(p.rsp);
		events_expect(0, 1, ev);
		clear_all();
	}
}

/* Rule 8: the responder's receive CQ overflows, filled by the requester's
 * process. */
static void
rule_cq_overflow(void)
{
	struct pair_opt o = def_opt;
	struct pair px, py;
	struct qpio_wc wc[8];
	struct msg r;
	uint32_t ev[6];
	unsigned int i, n;

	/* X: receive CQ of 4 entries; Y: a second QP on that CQ, idle. */
	o.rcq_depth = 4;
	if (pair_new(&px, &o) != 0)
		return;
	o.flags = RQF_SHARE_CQ;
	o.share_slot = (uint32_t)px.rsp;
	if (pair_new(&py, &o) != 0)
		return;
	rq(&r, RQ_RECV, 7, A(px.rsp), A(0x800), A(6), A(MR_ALL), A(0x8000),
	   A(64), A(64));
	rq(&r, RQ_RECV, 7, A(py.rsp), A(0x900), A(2), A(MR_ALL), A(0x9000),
	   A(64), A(64));
	for (i = 0; i < 5; i++) {
		fill(R.buf + SRC_OFF, 32, 80 + i);
		if (req_one(&px, QPIO_WR_SEND, 0x810 + i, MR_ALL, SRC_OFF, 32,
			    0, 0, 0, 0, wc) >= 0)
			CHECK_EQ(wc[0].status, QPIO_WC_SUCCESS,
				 "sends up to the one that overflows");
	}
	/* The receiver is in ERR now: no responder. */
	if (req_one(&px, QPIO_WR_SEND, 0x815, MR_ALL, SRC_OFF, 32, 0, 0, 0, 0,
		    wc) >= 0)
		CHECK_EQ(wc[0].status, QPIO_WC_RETRY_EXC_ERR,
			 "send after the overflow");

	/* In the receiver's process: CQ_ERR, then QP_FATAL for X and Y. */
	ev[0] = QPIO_EVENT_CQ_ERR;
	ev[1] = EV_RCQ(px.rsp);
	ev[2] = QPIO_EVENT_QP_FATAL;
	ev[3] = EV_QP(px.rsp);
	ev[4] = QPIO_EVENT_QP_FATAL;
	ev[5] = EV_QP(py.rsp);
	events_expect(0, 3, ev);
	CHECK_EQ(rsp_state(&px), QPIO_QPS_ERR, "receiver QP X state");
	CHECK_EQ(rsp_state(&py), QPIO_QPS_ERR, "receiver QP Y (same CQ) state");
	if (rq(&r, RQ_CQINFO, 1, A(px.rsp)) == 0) {
		CHECK_EQ(r.res[0], 1, "qpio_soft_cq_overflowed");
		/* the 5th receive, X's 1 and Y's 2 flushed receives */
		CHECK_EQ(r.res[1], 4, "completions counted as not written");
	}
	/* The 4 completions in the CQ are intact, and nothing after. */
	n = rsp_poll(&px, 0, 4, wc);
	for (i = 0; i < n; i++) {
		CHECK_EQ(wc[i].wr_id, 0x800 + i, "kept completion wr_id");
		CHECK_EQ(wc[i].status, QPIO_WC_SUCCESS, "kept completion status");
		CHECK_EQ(wc[i].byte_len, 32, "kept completion byte_len");
		CHECK_EQ(wc[i].qp_num, px.rsp_qpn, "kept completion qp_num");
	}
	for (i = 0; i < 5; i++)
		CHECK_EQ(rsp_u64(&r, RQ_CHECK, 4, 0x8000 + 64 * i, 32, 80 + i,
				 0), 32, "received payload");
	clear_all();
}

/* Rule 8 the other way round: the secondary's sends overflow the
 * primary's receive CQ; the primary's device gets the events. */
static void
rule_cq_overflow_rev(void)
{
	struct pair_opt o = def_opt;
	struct pair px, py;
	struct qpio_wc wc[8];
	struct msg r;
	uint32_t ev[6];
	uint64_t count = 0;
	unsigned int i, n;

	o.p_rcq_depth = 4;
	if (pair_new(&px, &o) != 0)
		return;
	o.p_flags = RQF_SHARE_CQ;
	o.p_share_slot = (uint32_t)px.req;
	if (pair_new(&py, &o) != 0)
		return;
	post_recvs(px.req, 0xc00, 6, MR_ALL, 0xc000, 64, 64, 0);
	post_recvs(py.req, 0xd00, 2, MR_ALL, 0xd000, 64, 64, 0);
	rq(&r, RQ_FILL, 3, A(SRC_OFF), A(32), A(120));
	/* 5 signaled SENDs in one burst of the secondary. */
	if (rq(&r, RQ_SEND, 6, A(px.rsp), A(QPIO_WR_SEND), A(0xc10), A(5),
	       A(0x1f), A(32)) == 0)
		CHECK_EQ(r.res[0], 5, "the secondary's sends posted");
	n = rsp_poll(&px, 1, 5, wc);
	for (i = 0; i < n; i++) {
		CHECK_EQ(wc[i].wr_id, 0xc10 + i, "sender wr_id");
		CHECK_EQ(wc[i].status, QPIO_WC_SUCCESS, "sender status");
	}
	ev[0] = QPIO_EVENT_CQ_ERR;
	ev[1] = EV_RCQ(px.req);
	ev[2] = QPIO_EVENT_QP_FATAL;
	ev[3] = EV_QP(px.req);
	ev[4] = QPIO_EVENT_QP_FATAL;
	ev[5] = EV_QP(py.req);
	events_expect(1, 3, ev);
	CHECK_EQ(qpio_qp_state(R.slot[px.req].qp), QPIO_QPS_ERR,
		 "receiver QP X state");
	CHECK_EQ(qpio_qp_state(R.slot[py.req].qp), QPIO_QPS_ERR,
		 "receiver QP Y (same CQ) state");
	CHECK_EQ(qpio_soft_cq_overflowed(R.slot[px.req].rcq), 1,
		 "qpio_soft_cq_overflowed");
	CHECK_EQ(qpio_soft_cq_overflow_count(R.slot[px.req].rcq, &count), 0,
		 "overflow count");
	CHECK_EQ(count, 4, "completions counted as not written");
	n = poll_n(R.slot[px.req].rcq, wc, 4, RTE_DIM(wc), CQ_TIMEOUT_MS);
	CHECK_EQ(n, 4, "completions kept in the CQ");
	for (i = 0; i < n; i++) {
		CHECK_EQ(wc[i].wr_id, 0xc00 + i, "kept completion wr_id");
		CHECK_EQ(wc[i].status, QPIO_WC_SUCCESS, "kept completion status");
		CHECK_EQ(wc[i].byte_len, 32, "kept completion byte_len");
		CHECK_EQ(check(R.buf + 0xc000 + 64 * i, 32, 120), 32,
			 "received payload");
	}
	clear_all();
}

/* Rule 9: zero-length SEND, SEND_WITH_IMM, RDMA_WRITE, WRITE_WITH_IMM. */
static void
rule_zero_len(void)
{
	struct pair p;
	struct qpio_send_wr wr[5];
	struct qpio_sge sg = { 0, 0, 0 };
	struct qpio_wc wc[8];
	struct msg r;
	unsigned int i, n;
	int err = 0;
	static const uint32_t want_op[5] = {
		QPIO_WC_SEND, QPIO_WC_SEND, QPIO_WC_SEND, QPIO_WC_RDMA_WRITE,
		QPIO_WC_RDMA_WRITE,
	};

	if (pair_new(&p, &def_opt) != 0)
		return;
	rq(&r, RQ_FILL, 3, A(0xa000), A(0x400), A(91));
	rq(&r, RQ_RECV, 7, A(p.rsp), A(0xa00), A(4), A(MR_ALL), A(0xa000),
	   A(64), A(256));
	sg.addr = (uintptr_t)(R.buf + SRC_OFF);
	sg.lkey = qpio_mr_lkey(R.mr[MR_ALL]);
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 5; i++) {
		wr[i].wr_id = 0xa10 + i;
		wr[i].send_flags = QPIO_SEND_SIGNALED;
	}
	wr[0].opcode = QPIO_WR_SEND;            /* no SGE */
	wr[1].opcode = QPIO_WR_SEND;            /* one 0-byte SGE */
	wr[1].sg_list = &sg;
	wr[1].num_sge = 1;
	wr[2].opcode = QPIO_WR_SEND_WITH_IMM;
	wr[2].imm_data = 0x1234;
	wr[3].opcode = QPIO_WR_RDMA_WRITE;      /* no rkey is checked */
	wr[4].opcode = QPIO_WR_RDMA_WRITE_WITH_IMM;
	wr[4].imm_data = 0x5678;
	CHECK_EQ(qpio_qp_post_send(R.slot[p.req].qp, wr, 5, &err), 5,
		 "zero-length WRs posted");
	n = req_poll(&p, wc, 5, RTE_DIM(wc));
	for (i = 0; i < n; i++) {
		CHECK_EQ(wc[i].wr_id, 0xa10 + i, "requester wr_id");
		CHECK_EQ(wc[i].status, QPIO_WC_SUCCESS, "requester status");
		CHECK_EQ(wc[i].opcode, want_op[i], "requester opcode");
		CHECK_EQ(wc[i].byte_len, 0, "requester byte_len");
	}
	n = rsp_poll(&p, 0, 4, wc);
	for (i = 0; i < n; i++) {
		CHECK_EQ(wc[i].wr_id, 0xa00 + i, "receive wr_id");
		CHECK_EQ(wc[i].status, QPIO_WC_SUCCESS, "receive status");
		CHECK_EQ(wc[i].byte_len, 0, "receive byte_len");
		CHECK_EQ(wc[i].opcode, i == 3 ? QPIO_WC_RECV_RDMA_WITH_IMM :
			 QPIO_WC_RECV, "receive opcode");
		CHECK_EQ(wc[i].wc_flags & QPIO_WC_WITH_IMM,
			 i >= 2 ? QPIO_WC_WITH_IMM : 0, "receive WITH_IMM flag");
		CHECK_EQ(wc[i].imm_data, i == 2 ? 0x1234 : i == 3 ? 0x5678 : 0,
			 "receive imm_data");
	}
	rsp_unchanged(0xa000, 0x400, 91, "receive buffers");
	clear_all();
}

/* SRQ: the responder's two QPs take receives from one SRQ, filled and
 * emptied from the other process; limit event; RNR on an empty SRQ. */
static void
rule_srq(void)
{
	struct pair_opt o = def_opt;
	struct pair p1, p2;
	struct qpio_wc wc[4];
	struct msg r;
	uint32_t ev[2];
	static const uint32_t seed[] = { 101, 102, 103 };
	unsigned int i;

	if (rq(&r, RQ_SRQ, 2, A(8), A(2)) != 0)
		return;
	o.flags = RQF_SRQ;
	if (pair_new(&p1, &o) != 0 || pair_new(&p2, &o) != 0)
		return;
	rq(&r, RQ_RECV, 7, A(NB_SLOT), A(0xb00), A(4), A(MR_ALL), A(0xb000),
	   A(64), A(64));
	/* p1, p2, p1: receives 0, 1, 2 in posting order. */
	for (i = 0; i < 3; i++) {
		fill(R.buf + SRC_OFF, 48, seed[i]);
		if (req_one(i == 1 ? &p2 : &p1, QPIO_WR_SEND, 0xb10 + i, MR_ALL,
			    SRC_OFF, 48, 0, 0, 0, 0, wc) >= 0)
			CHECK_EQ(wc[0].status, QPIO_WC_SUCCESS, "send status");
	}
	if (rsp_poll(&p1, 0, 2, wc) == 2) {
		CHECK_EQ(wc[0].wr_id, 0xb00, "QP 1: first SRQ receive");
		CHECK_EQ(wc[1].wr_id, 0xb02, "QP 1: third SRQ receive");
		CHECK_EQ(wc[0].qp_num, p1.rsp_qpn, "QP 1: qp_num");
		CHECK_EQ(wc[1].byte_len, 48, "QP 1: byte_len");
	}
	if (rsp_poll(&p2, 0, 1, wc) == 1) {
		CHECK_EQ(wc[0].wr_id, 0xb01, "QP 2: second SRQ receive");
		CHECK_EQ(wc[0].qp_num, p2.rsp_qpn, "QP 2: qp_num");
		CHECK_EQ(wc[0].src_qp, qpio_qp_num(R.slot[p2.req].qp),
			 "QP 2: src_qp");
	}
	for (i = 0; i < 3; i++)
		CHECK_EQ(rsp_u64(&r, RQ_CHECK, 4, 0xb000 + 64 * i, 48, seed[i],
				 0), 48, "SRQ receive payload");
	if (rq(&r, RQ_SRQSTATS, 0) == 0) {
		CHECK_EQ(r.res[0], 4, "SRQ receives posted");
		CHECK_EQ(r.res[1], 3, "SRQ receives taken");
		CHECK_EQ(r.res[2], 1, "SRQ limit events");
	}
	ev[0] = QPIO_EVENT_SRQ_LIMIT_REACHED;
	ev[1] = EV_SRQ;
	events_expect(0, 1, ev);

	/* The 4th receive, then an empty SRQ: RNR until the other process
	 * posts one more. */
	req_post(&p2, QPIO_WR_SEND, 0xb20, QPIO_SEND_SIGNALED, MR_ALL, SRC_OFF,
		 16, 0, 0, 0, 0);
	req_post(&p2, QPIO_WR_SEND, 0xb21, QPIO_SEND_SIGNALED, MR_ALL, SRC_OFF,
		 16, 0, 0, 0, 0);
	CHECK_EQ(poll_n(R.slot[p2.req].scq, wc, 1, 2, CQ_TIMEOUT_MS), 1,
		 "one send delivered while the SRQ is empty");
	rq(&r, RQ_RECV, 7, A(NB_SLOT), A(0xb04), A(1), A(MR_ALL), A(0xb100),
	   A(64), A(0));
	if (req_poll(&p2, wc, 1, 2) == 1)
		CHECK_EQ(wc[0].wr_id, 0xb21, "send delivered after the RNR");
	if (rsp_poll(&p2, 0, 2, wc) == 2) {
		CHECK_EQ(wc[0].wr_id, 0xb03, "fourth SRQ receive");
		CHECK_EQ(wc[1].wr_id, 0xb04, "receive posted during the RNR");
	}
	clear_all();
}

void
rules_run(struct qpio_device *dev, const char *peer, int wfd, int rfd)
{
	struct msg r;
	unsigned int i;

	wfd_ = wfd;
	rfd_ = rfd;
	rule_begin("rules set-up");
	if (rules_setup(dev, peer) != 0 || rq(&r, RQ_SETUP, 0) != 0) {
		rule_end();
		return;
	}
	peer_buf = r.res[0];
	for (i = 0; i < NB_MR; i++)
		peer_rkey[i] = (uint32_t)r.res[1 + i];
	rule_end();

	rule_begin("1 flush: each WR completes once in ERR, signaled or not; "
		   "the first failing WR moves the QP to ERR");
	rule_flush();
	rule_end();
	rule_begin("2 short receive: LOC_LEN_ERR, nothing past the buffer, "
		   "remote error at the sender");
	rule_short_recv();
	rule_end();
	rule_begin("3 lkey not covering the SGE, or wrong PD: LOC_PROT_ERR, "
		   "nothing read or written");
	rule_loc_prot();
	rule_end();
	rule_begin("4 remote op outside the MR, wrong rkey, wrong PD, missing "
		   "access flag: REM_ACCESS_ERR, target unchanged");
	rule_rem_access();
	rule_end();
	rule_begin("5 RNR: rnr_retry retries spaced by min_rnr_timer, then "
		   "RNR_RETRY_EXC_ERR; 7 = forever");
	rule_rnr();
	rule_end();
	rule_begin("6 atomics: original value returned; misaligned address "
		   "is REM_INV_REQ_ERR");
	rule_atomics();
	rule_end();
	rule_begin("8 CQ overflow: CQ_ERR event in the receiver's process, "
		   "its QPs to ERR, completions kept");
	rule_cq_overflow();
	rule_end();
	rule_begin("8 CQ overflow, the other way: the secondary overflows the "
		   "primary's CQ, the primary sees CQ_ERR");
	rule_cq_overflow_rev();
	rule_end();
	rule_begin("9 zero-length SEND and RDMA_WRITE: byte_len 0");
	rule_zero_len();
	rule_end();
	rule_begin("SRQ: the responder's QPs take receives from one SRQ");
	rule_srq();
	rule_end();
}
