/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC on the wire: RC and UC as RoCEv2 packets (IBA chapter 9, the
 * transport's rules as the kernel's rxe keeps them).
 *
 * Requester: a run of the SQ (the doorbell, or the progress step when an
 * ACK opens room) decodes each WQE and sends it as packets of at most the
 * path MTU: SEND and RDMA WRITE as FIRST / MIDDLE / LAST or ONLY, the
 * last asking for an ACK; RDMA READ as one request that takes one PSN per
 * response packet; CMP_AND_SWP and FETCH_AND_ADD as one request each. A
 * WQE completes when the responder says so: an ACK whose PSN covers its
 * last packet (SEND, WRITE), its last READ response, its ATOMIC ACK. UC
 * completes at the send, as it has no ACKs. A NAK of a PSN sequence
 * error, an RNR NAK once its timer ran out, and the ACK timeout (4.096 us
 * x 2^timeout, retry_cnt times) send again from the oldest WQE not
 * completed (go-back-N at message grain: the responder ACKs what it had
 * again); a NAK of an access, request or operation error completes the
 * oldest WQE with it and moves the QP to ERR.
 *
 * Responder: the expected PSN (rq_psn at RTR) takes the packet; one
 * behind is a duplicate (ACKed again; a READ executed again, an atomic
 * answered from the last one's result); one ahead draws one PSN sequence
 * error NAK. SEND takes a receive at its first packet (none: RNR NAK with
 * min_rnr_timer) and completes it at its last; WRITE checks the R_Key at
 * its first packet for the whole DMA length; READ answers with response
 * packets; atomics run on the target's memory. The MSN counts the
 * messages done.
 *
 * All of it runs under the lock of the QP's device queue (qp->wq,
 * soft_wire.c), from the SQ's run or that queue's progress step.
 */
#include <string.h>

#include <rte_cycles.h>

#include "soft_resp.h"
#include "soft_wire.h"

enum rc_kind { RC_SEND, RC_WRITE, RC_READ, RC_ATOMIC };

/* A WQE sent and not yet completed, by SQ position. */
struct rc_wqe {
	uint32_t psn;          /* its first PSN */
	uint32_t npkts;        /* PSNs it takes */
	uint32_t len;          /* message bytes */
	uint8_t kind;          /* enum rc_kind */
};

struct soft_wire_rc {
	TAILQ_ENTRY(soft_wire_rc) next;
	struct soft_qp *qp;
	uint8_t uc;
	uint8_t dgid[16];
	struct soft_wire_hdr tmpl;   /* path, P_Key, destination QP */
	uint32_t mtu;                /* path MTU, bytes */
	/* requester */
	uint32_t npsn;               /* PSN of the next new packet */
	uint32_t una;                /* PSN after the last one answered */
	uint32_t sent;               /* SQ position of the next WQE to send */
	uint32_t nrd;                /* READs and atomics in flight */
	/* READs and atomics allowed in flight after a timeout: 1, doubled
	 * by each one answered, back to max_rd_atomic (0: no limit of its
	 * own). The answers of max_rd_atomic READs at once can be more
	 * frames than the port's receive ring holds: sent again all at
	 * once, they would be lost again, every time. */
	uint32_t rd_win;
	uint64_t to_tsc;             /* ACK timeout deadline; 0: none */
	uint64_t rnr_tsc;            /* RNR NAK: send again at; 0: none */
	uint32_t retries;            /* timeouts in a row */
	uint32_t rnr_retries;        /* RNR NAKs in a row */
	uint32_t rd_pkts;            /* READ responses of the oldest placed */
	uint32_t rd_off;             /* their bytes */
	/* An implied NAK (a response past the one awaited) sent the oldest
	 * READ or atomic again from gap_psn: no second time for the same
	 * PSN (the rest of the stream that showed the gap is past it too);
	 * cleared by the next response placed or WQE completed. */
	uint8_t gap_set;
	uint32_t gap_psn;
	struct rc_wqe *w;            /* sq.depth entries */
	/* responder */
	uint32_t epsn;
	uint32_t msn;
	uint8_t nak_sent;            /* a sequence NAK for epsn went */
	uint8_t in_msg;              /* IN_SEND or IN_WRITE: a message open */
	uint8_t at_valid;
	/* 1 while a receive is held and not completed: the one a SEND took
	 * at its first packet, or (UC) that of a message lost in part, kept
	 * for the next one (IBA: the WQE is reused). Whoever takes it to 0
	 * completes it: the message's last packet or its error
	 * (recv_done()), or the QP's flush (soft_wire_rc_rq_flush()). */
	uint8_t rheld;
	uint32_t rpos, rslot, roff;  /* SEND: its receive, bytes in it */
	uint8_t *wdst;               /* WRITE: the target, its length, done */
	uint32_t wlen, woff;
	uint32_t wpsn;               /* WRITE: the PSN of its first packet */
	uint32_t at_psn;             /* the last atomic: PSN and result */
	uint64_t at_orig;
	/* ACK coalescing (ack_coalesce=1): an ACK this progress step owes,
	 * for the PSN and MSN of the last request that asked for one; sent
	 * at the end of the step's receive (soft_wire_rc_acks_flush()), or
	 * before any other answer of the QP. ack_next links the queue's
	 * list of QPs that owe one or did in this step (ack_listed: on it
	 * until the step's end, whether its ACK went early or not). */
	uint8_t ack_due;
	uint8_t ack_listed;
	uint32_t ack_psn, ack_msn;
	struct soft_wire_rc *ack_next;
};

/* Unanswered PSNs past which the requester starts no new WQE (one WQE
 * alone may be longer), and sends no more again after a loss: rxe's
 * RXE_MAX_UNACKED_PSNS. A burst the size of the send queue (128 SENDs of
 * 64 packets) overran the receive rings on the way; sent again whole
 * after a loss, it was lost again, and never got through 1 % loss. */
#define RC_PSN_WINDOW 128u

#define IN_SEND  1
#define IN_WRITE 2
#define IN_DROP  3   /* UC: the rest of a message that found no receive */

static inline int
psn_before(uint32_t a, uint32_t b)   /* a < b, 24-bit serial numbers */
{
	return ((a - b) & 0x800000u) != 0 && a != b;
}

static inline uint32_t
psn_add(uint32_t a, uint32_t n)
{
	return (a + n) & 0xffffffu;
}

static inline uint32_t
psn_diff(uint32_t a, uint32_t b)     /* a - b, 24-bit */
{
	return (a - b) & 0xffffffu;
}

/* ---- requester ---- */

static uint64_t
ack_timeout_tsc(const struct soft_qp *qp)
{
	uint32_t t = qp->attr.timeout;

	if (t == 0)               /* IBA: 0 waits for ever */
		return 0;
	/* 4.096 us x 2^t */
	return (uint64_t)((double)rte_get_tsc_hz() * 4.096e-6 *
			  (double)(1ull << RTE_MIN(t, 31u)));
}

static void
timer_arm(struct soft_wire_rc *rc)
{
	uint64_t t = ack_timeout_tsc(rc->qp);

	rc->to_tsc = t != 0 ? rte_get_tsc_cycles() + t : 0;
}

/* The pieces of the spans of d for bytes [off, off + len). @return how
 * many. */
static unsigned int
spans_slice(const struct soft_run *d, uint32_t off, uint32_t len,
	    struct soft_wire_seg *seg)
{
	unsigned int n = 0;
	uint32_t i;

	for (i = 0; i < d->nspan && len != 0; i++) {
		uint32_t sl = d->spans[i].len, take;

		if (off >= sl) {
			off -= sl;
			continue;
		}
		take = RTE_MIN(sl - off, len);
		seg[n].p = d->spans[i].p + off;
		seg[n].len = take;
		n++;
		len -= take;
		off = 0;
	}
	return n;
}

static uint8_t
wqe_kind(uint8_t mlx5_op)
{
	switch (mlx5_op) {
	case MLX5_OPCODE_RDMA_WRITE:
	case MLX5_OPCODE_RDMA_WRITE_IMM:
		return RC_WRITE;
	case MLX5_OPCODE_RDMA_READ:
		return RC_READ;
	case MLX5_OPCODE_ATOMIC_CS:
	case MLX5_OPCODE_ATOMIC_FA:
		return RC_ATOMIC;
	default:
		return RC_SEND;
	}
}

/* Packets of a message of len bytes at path MTU mtu (one for 0). */
static inline uint32_t
npkts_of(uint32_t len, uint32_t mtu)
{
	return len == 0 ? 1 : (len + mtu - 1) / mtu;
}

/* Send the packets of the decoded WQE d from PSN psn. @return the PSNs
 * it takes. */
static uint32_t
wqe_send(struct soft_wire *w, struct soft_wire_rc *rc, const struct soft_run *d,
	 uint32_t psn, uint32_t from)
{
	struct soft_wire_seg seg[SOFT_MAX_SGE + 1];
	struct soft_wire_hdr h = rc->tmpl;
	uint8_t kind = wqe_kind(d->opcode);
	uint8_t uc = rc->uc ? SOFT_IB_OPC_UC : 0;
	uint32_t total = (uint32_t)d->total, n, i;
	int imm = d->opcode == MLX5_OPCODE_SEND_IMM ||
		d->opcode == MLX5_OPCODE_RDMA_WRITE_IMM;

	if (kind == RC_READ) {
		/* from: the responses already placed; the request asks for
		 * the rest, at the PSN of the first one missing (as rxe's
		 * requester resumes a READ) */
		h.opcode = SOFT_IB_OPC_READ_REQUEST;
		h.psn = psn_add(psn, from);
		h.ackreq = 1;
		h.va = d->raddr + (uint64_t)from * rc->mtu;
		h.rkey = d->rkey;
		h.dmalen = total - from * rc->mtu;
		soft_wire_send_locked(w, rc->dgid, &h, NULL, 0, 0);
		return npkts_of(total, rc->mtu);
	}
	if (kind == RC_ATOMIC) {
		h.opcode = d->opcode == MLX5_OPCODE_ATOMIC_CS ?
			SOFT_IB_OPC_CMP_SWAP : SOFT_IB_OPC_FETCH_ADD;
		h.psn = psn;
		h.ackreq = 1;
		h.va = d->raddr;
		h.rkey = d->rkey;
		h.swap_add = d->swap_add;
		h.compare = d->compare;
		soft_wire_send_locked(w, rc->dgid, &h, NULL, 0, 0);
		return 1;
	}
	n = npkts_of(total, rc->mtu);
	for (i = from; i < n; i++) {
		uint32_t off = i * rc->mtu, len = RTE_MIN(rc->mtu, total - off);
		int first = i == 0, last = i == n - 1;
		uint8_t op;

		if (kind == RC_SEND)
			op = first && last ? (imm ? SOFT_IB_OPC_SEND_ONLY_IMM :
					      SOFT_IB_OPC_SEND_ONLY) :
				first ? SOFT_IB_OPC_SEND_FIRST :
				!last ? SOFT_IB_OPC_SEND_MIDDLE :
				imm ? SOFT_IB_OPC_SEND_LAST_IMM :
				SOFT_IB_OPC_SEND_LAST;
		else
			op = first && last ? (imm ? SOFT_IB_OPC_WRITE_ONLY_IMM :
					      SOFT_IB_OPC_WRITE_ONLY) :
				first ? SOFT_IB_OPC_WRITE_FIRST :
				!last ? SOFT_IB_OPC_WRITE_MIDDLE :
				imm ? SOFT_IB_OPC_WRITE_LAST_IMM :
				SOFT_IB_OPC_WRITE_LAST;
		h.opcode = (uint8_t)(op + uc);
		h.psn = psn_add(psn, i);
		h.ackreq = last && !rc->uc;
		h.se = last && (d->fm_ce_se & MLX5_WQE_CTRL_SOLICITED);
		h.imm = d->imm;
		h.va = d->raddr;
		h.rkey = d->rkey;
		h.dmalen = total;
		soft_wire_send_locked(w, rc->dgid, &h, seg,
				      spans_slice(d, off, len, seg), len);
	}
	return n;
}

static void
wqe_decode_at(struct soft_qp *qp, uint32_t pos, struct soft_run *d,
	      int *syn)
{
	const uint8_t *wqe = qp->sq.buf +
		((size_t)(pos & qp->sq.mask) << qp->sq.log_stride);

	memset(d, 0, offsetof(struct soft_run, spans));
	d->qp = qp;
	*syn = soft_wqe_decode(d, wqe);
}

/* The send completion of the WQE at pos (when signaled), or its error
 * completion (syndrome != 0); sq.ci moves past it. */
static void
wqe_complete(struct soft_qp *qp, uint32_t pos, uint32_t len, uint8_t syndrome)
{
	const struct mlx5_wqe_ctrl_seg *ctrl = (const void *)(qp->sq.buf +
		((size_t)(pos & qp->sq.mask) << qp->sq.log_stride));
	struct soft_cqe_info info;

	memset(&info, 0, sizeof(info));
	info.qpn = qp->base.qp_num;
	info.wqe_counter = (uint16_t)pos;
	info.wqe_opcode = (uint8_t)rte_be_to_cpu_32(ctrl->opmod_idx_opcode);
	if (syndrome != 0) {
		info.opcode = MLX5_CQE_REQ_ERR;
		info.syndrome = syndrome;
	} else {
		info.opcode = MLX5_CQE_REQ;
		info.byte_cnt = len;
	}
	soft_sq_ci_store(&qp->sq.ci, pos + 1);
	if (syndrome != 0 || (ctrl->fm_ce_se & MLX5_WQE_CTRL_CQ_UPDATE))
		soft_complete(to_scq(qp->base.send_cq), &info);
}

/* The oldest WQE fails with syndrome: its completion, the QP to ERR (the
 * send CQ's poller flushes the rest). */
static void
rc_fail(struct soft_wire_rc *rc, uint8_t syndrome)
{
	struct soft_qp *qp = rc->qp;

	if (qp->sq.ci != rc->sent)
		wqe_complete(qp, qp->sq.ci, 0, syndrome);
	rc->to_tsc = 0;
	rc->rnr_tsc = 0;
	soft_qp_set_err(qp, false, -1);
}

/* The flush of a QP in ERR: every WQE from sq.ci up to the doorbell. */
static void
rc_flush(struct soft_wire_rc *rc, uint32_t pi)
{
	struct soft_qp *qp = rc->qp;

	soft_sq_flush(qp, qp->sq.ci, pi);
	rc->sent = pi;
	rc->nrd = 0;
	rc->to_tsc = 0;
	rc->rnr_tsc = 0;
	rc->rd_pkts = rc->rd_off = 0;
}

/* Send the WQEs doorbelled since the last run, as far as the READ/atomic
 * limit and an RNR wait allow. */
static void
rc_push(struct soft_wire *w, struct soft_wire_rc *rc)
{
	struct soft_qp *qp = rc->qp;
	uint32_t pi = soft_doorbell_read(&qp->sq.dbrec);
	uint8_t state = soft_qp_state_read(&qp->base.state);
	uint32_t rd_max = RTE_MAX(qp->attr.max_rd_atomic, 1u);
	struct soft_run d;

	if (rc->rd_win != 0 && rc->rd_win < rd_max)
		rd_max = rc->rd_win;
	if (state == QPIO_QPS_ERR || state == QPIO_QPS_SQE) {
		rc_flush(rc, pi);
		return;
	}
	if (state != QPIO_QPS_RTS || rc->rnr_tsc != 0)
		return;
	while (rc->sent != pi) {
		struct rc_wqe *e = &rc->w[rc->sent & qp->sq.mask];
		int syn;

		wqe_decode_at(qp, rc->sent, &d, &syn);
		if (unlikely(syn != 0)) {
			/* a local error completes in order: after the ones
			 * in flight */
			if (rc->sent == qp->sq.ci) {
				rc->sent++;
				rc_fail(rc, (uint8_t)syn);
			}
			return;
		}
		e->kind = wqe_kind(d.opcode);
		if ((e->kind == RC_READ || e->kind == RC_ATOMIC) &&
		    (rc->uc || rc->nrd >= rd_max))
			break;
		/* FENCE: after every READ and atomic before it has its
		 * answer (IBA 10.8.3.3) */
		if ((d.fm_ce_se & MLX5_WQE_CTRL_FENCE) && rc->nrd != 0)
			break;
		e->len = (uint32_t)d.total;
		/* the PSN window: a new WQE waits while RC_PSN_WINDOW
		 * PSNs are unanswered (with none, any goes) */
		if (!rc->uc && rc->sent != qp->sq.ci &&
		    psn_diff(rc->npsn, rc->una) >= RC_PSN_WINDOW)
			break;
		e->psn = rc->npsn;
		e->npkts = wqe_send(w, rc, &d, rc->npsn, 0);
		rc->npsn = psn_add(rc->npsn, e->npkts);
		rc->sent++;
		if (rc->uc) {          /* no ACK comes: done once sent */
			wqe_complete(qp, rc->sent - 1, e->len, 0);
			continue;
		}
		if (e->kind == RC_READ || e->kind == RC_ATOMIC)
			rc->nrd++;
		if (rc->to_tsc == 0)
			timer_arm(rc);
	}
}

/* Send again from PSN from, in the oldest WQE not completed, and every
 * WQE after it (go-back-N, IBA 9.7.5.1.6: the PSN of a sequence NAK, or
 * after the last one answered at a timeout); a READ at the head asks
 * only for the responses it has not placed, a later one goes again
 * whole. Only as far as the PSN window and, with rd_win set, the READ window
 * allow: the rest is taken back (sent and npsn go back to the first of
 * it, which keeps its PSN) and goes again from rc_push() as answers
 * come; an answer to a PSN taken back is then one never sent, and
 * completes nothing. */
static void
rc_resend(struct soft_wire *w, struct soft_wire_rc *rc, uint32_t from)
{
	struct soft_qp *qp = rc->qp;
	uint32_t pos, nrd = 0, first;
	struct soft_run d;

	/* a READ at the head keeps the responses it placed: it asks for
	 * the rest only */
	if (qp->sq.ci == rc->sent ||
	    rc->w[qp->sq.ci & qp->sq.mask].kind != RC_READ)
		rc->rd_pkts = rc->rd_off = 0;
	first = rc->w[qp->sq.ci & qp->sq.mask].psn;
	for (pos = qp->sq.ci; pos != rc->sent; pos++) {
		struct rc_wqe *e = &rc->w[pos & qp->sq.mask];
		int rd = e->kind == RC_READ || e->kind == RC_ATOMIC;
		uint32_t k = 0;
		int syn;

		if ((rd && rc->rd_win != 0 && nrd >= rc->rd_win) ||
		    (pos != qp->sq.ci &&
		     psn_diff(e->psn, first) >= RC_PSN_WINDOW)) {
			rc->sent = pos;
			rc->npsn = e->psn;
			break;
		}
		if (pos == qp->sq.ci && !rd &&
		    psn_diff(from, e->psn) < e->npkts)
			k = psn_diff(from, e->psn);
		if (pos == qp->sq.ci && e->kind == RC_READ)
			k = rc->rd_pkts;
		wqe_decode_at(qp, pos, &d, &syn);
		if (syn == 0)
			wqe_send(w, rc, &d, e->psn, k);
		nrd += (uint32_t)rd;
	}
	rc->nrd = nrd;
	qp->transport_retries++;
	timer_arm(rc);
}

/* An ACK (or a response) for PSN psn: the SEND and WRITE WQEs whose last
 * packet it covers complete, in order, up to the first READ or atomic. */
static void
rc_acked(struct soft_wire_rc *rc, uint32_t psn)
{
	struct soft_qp *qp = rc->qp;
	int moved = 0;

	/* every PSN up to psn arrived (IBA 9.7.5.1.2: ACKs coalesce) */
	if (!psn_before(psn, rc->una) && psn_before(psn, rc->npsn))
		rc->una = psn_add(psn, 1);

	while (qp->sq.ci != rc->sent) {
		struct rc_wqe *e = &rc->w[qp->sq.ci & qp->sq.mask];

		if (e->kind == RC_READ || e->kind == RC_ATOMIC ||
		    psn_before(psn, psn_add(e->psn, e->npkts - 1)))
			break;
		wqe_complete(qp, qp->sq.ci, e->len, 0);
		moved = 1;
	}
	if (moved) {
		rc->retries = 0;
		rc->rnr_retries = 0;
		rc->gap_set = 0;
		if (qp->sq.ci == rc->sent)
			rc->to_tsc = 0;
		else
			timer_arm(rc);
	}
}

/* A response past want, the PSN the oldest WQE (a READ or an atomic)
 * awaits, came: the responses from want to it were lost, as a responder
 * answers in PSN order (IBA's implied NAK sequence error, which RoCE
 * NICs count, e.g. mlx5's implied_nak_seq_err). An ACK without a
 * response does not come here (rc_aeth()): an unsolicited ACK inside a
 * READ's range is no gap. The oldest goes again from want,
 * as at a timeout (a READ asks for the responses it has not placed; the
 * READ window falls to 1), without waiting for the timer and without
 * counting a timeout; once per want: the rest of the stream that showed
 * the gap is past want too. */
static void
rc_implied_nak(struct soft_wire *w, struct soft_wire_rc *rc, uint32_t want)
{
	if (rc->gap_set && rc->gap_psn == want)
		return;
	rc->gap_set = 1;
	rc->gap_psn = want;
	rc->rd_win = 1;
	rc_resend(w, rc, want);
}

/* A READ response or an ATOMIC ACK for the oldest WQE. */
static void
rc_response(struct soft_wire *w, struct soft_wire_rc *rc,
	    const struct soft_wire_pkt *p)
{
	struct soft_qp *qp = rc->qp;
	struct rc_wqe *e;
	struct soft_run d;
	uint32_t want;
	int syn;

	/* a response acknowledges every request before its own */
	rc_acked(rc, psn_add(p->psn, 0xffffff));
	if (qp->sq.ci == rc->sent)
		return;
	e = &rc->w[qp->sq.ci & qp->sq.mask];
	if (e->kind != RC_READ && e->kind != RC_ATOMIC)
		return;
	want = e->kind == RC_READ ? psn_add(e->psn, rc->rd_pkts) : e->psn;
	if (psn_before(want, p->psn)) {
		rc_implied_nak(w, rc, want);
		return;
	}
	if (p->opcode == SOFT_IB_OPC_ATOMIC_ACK) {
		if (e->kind != RC_ATOMIC || p->psn != e->psn)
			return;
		wqe_decode_at(qp, qp->sq.ci, &d, &syn);
		if (syn == 0 && d.nspan >= 1 && d.spans[0].len >= 8)
			memcpy((void *)(uintptr_t)d.spans[0].p, &p->atomic_orig, 8);
		rc->una = psn_add(p->psn, 1);
	} else {
		struct soft_wire_seg seg[SOFT_MAX_SGE + 1];
		unsigned int n, i;

		if (e->kind != RC_READ || p->psn != want)
			return;   /* one placed already, or not a READ's */
		if (rc->rd_off + p->len > e->len) {
			rc_fail(rc, MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
			return;
		}
		wqe_decode_at(qp, qp->sq.ci, &d, &syn);
		if (syn != 0) {
			rc_fail(rc, (uint8_t)syn);
			return;
		}
		n = spans_slice(&d, rc->rd_off, p->len, seg);
		for (i = 0, syn = 0; i < n; i++) {
			memcpy((void *)(uintptr_t)seg[i].p, p->payload + syn,
			       seg[i].len);
			syn += (int)seg[i].len;
		}
		rc->rd_off += p->len;
		rc->rd_pkts++;
		rc->gap_set = 0;
		rc->una = psn_add(p->psn, 1);
		/* a response in order is progress: the timeouts counted
		 * against retry_cnt are those in a row without one (a READ
		 * larger than what the path delivers between two timeouts
		 * would exhaust them otherwise) */
		rc->retries = 0;
		if (!(p->has & SOFT_WIRE_LAST))
			return;
		if (rc->rd_off != e->len) {
			rc_fail(rc, MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
			return;
		}
		rc->rd_pkts = rc->rd_off = 0;
	}
	wqe_complete(qp, qp->sq.ci, e->len, 0);
	rc->nrd--;
	rc->gap_set = 0;
	if (rc->rd_win != 0 &&
	    (rc->rd_win *= 2) >= RTE_MAX(qp->attr.max_rd_atomic, 1u))
		rc->rd_win = 0;
	rc->retries = 0;
	rc->rnr_retries = 0;
	if (qp->sq.ci == rc->sent)
		rc->to_tsc = 0;
	else
		timer_arm(rc);
	RTE_SET_USED(w);
}

/* An ACK or NAK (AETH) for PSN psn. */
static void
rc_aeth(struct soft_wire *w, struct soft_wire_rc *rc,
	const struct soft_wire_pkt *p)
{
	struct soft_qp *qp = rc->qp;
	uint8_t syn = p->aeth_syn;

	switch (SOFT_AETH_TYPE(syn)) {
	case 0x00:                          /* ACK */
		rc_acked(rc, p->psn);
		return;
	case SOFT_AETH_RNR:
		rc_acked(rc, psn_add(p->psn, 0xffffff));
		qp->rnr_naks++;
		qp->rnr_nak_total++;
		rc->rnr_retries++;
		if (qp->attr.rnr_retry != 7 &&
		    rc->rnr_retries > qp->attr.rnr_retry) {
			qp->rnr_exceeded++;
			rc_fail(rc, MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR);
			return;
		}
		rc->rnr_tsc = rte_get_tsc_cycles() +
			soft_rnr_timer_tsc(syn & 0x1f);
		rc->to_tsc = 0;
		return;
	case 0x60:                          /* NAK */
		rc_acked(rc, psn_add(p->psn, 0xffffff));
		if (syn == SOFT_AETH_NAK_PSN) {
			/* Waiting out an RNR NAK: the responder's sequence
			 * NAK answers the packets that followed the refused
			 * one; the resend waits for the RNR timer (IBA
			 * 9.7.5.2.8), or every round would go at once. */
			if (rc->rnr_tsc != 0)
				return;
			rc_resend(w, rc, p->psn);
			return;
		}
		rc_fail(rc, syn == SOFT_AETH_NAK_REM_ACC ?
			MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR :
			syn == SOFT_AETH_NAK_INV_REQ ?
			MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR :
			MLX5_CQE_SYNDROME_REMOTE_OP_ERR);
		return;
	default:
		return;
	}
}

/* ---- responder ---- */

static void
aeth_send(struct soft_wire *w, struct soft_wire_rc *rc, uint32_t psn,
	  uint8_t syn, uint32_t msn)
{
	struct soft_wire_hdr h = rc->tmpl;

	h.opcode = SOFT_IB_OPC_ACK;
	h.psn = psn;
	h.aeth_syn = syn;
	h.msn = msn;
	soft_wire_send_locked(w, rc->dgid, &h, NULL, 0, 0);
}

/* The ACK rc owes (coalesced), sent now: before any other answer of the
 * QP, so answers leave in PSN order. */
static inline void
ack_flush(struct soft_wire *w, struct soft_wire_rc *rc)
{
	if (rc->ack_due) {
		rc->ack_due = 0;
		aeth_send(w, rc, rc->ack_psn, SOFT_AETH_ACK, rc->ack_msn);
	}
}

/* An ACK, a NAK or an RNR NAK for psn with the QP's MSN, after the ACK
 * it owes. */
static void
send_aeth(struct soft_wire *w, struct soft_wire_rc *rc, uint32_t psn,
	  uint8_t syn)
{
	ack_flush(w, rc);
	aeth_send(w, rc, psn, syn, rc->msn);
}

/*
 * The ACK a request at psn asked for (the AckReq bit). With ack_coalesce
 * (the default) it is owed until the end of this progress step's
 * receive: one ACK, of the last PSN and MSN that asked, answers every
 * request of the QP the step took (an ACK acknowledges every PSN before
 * its own: IBA 9.7.5.1.1, the responder may coalesce), where a stream
 * of SENDs drew one ACK frame each. Any other answer of the QP the step
 * sends (a NAK, an RNR NAK, a READ response, an atomic ACK) sends it
 * first. ack_coalesce=0 sends it at once, as rxe does.
 */
static void
ack_request(struct soft_wire *w, struct soft_wire_rc *rc, uint32_t psn)
{
	if (!w->ack_coalesce) {
		aeth_send(w, rc, psn, SOFT_AETH_ACK, rc->msn);
		return;
	}
	rc->ack_psn = psn;
	rc->ack_msn = rc->msn;
	rc->ack_due = 1;
	if (!rc->ack_listed) {
		rc->ack_listed = 1;
		rc->ack_next = w->ack_list;
		w->ack_list = rc;
	}
}

void
soft_wire_rc_acks_flush(struct soft_wire *w)
{
	struct soft_wire_rc *rc = w->ack_list;

	w->ack_list = NULL;
	for (; rc != NULL; rc = rc->ack_next) {
		rc->ack_listed = 0;
		ack_flush(w, rc);
	}
}

/* Write len bytes at offset off of the receive in slot: every SGE the
 * bytes reach is checked, and the room counted, before any byte is
 * written (a packet that does not fit writes nothing). @return 0 or the
 * syndrome of the receiver's error. */
static uint8_t
recv_write(struct soft_qp *qp, uint32_t slot, uint32_t off, const uint8_t *src,
	   uint32_t len)
{
	struct soft_rq *rq = qp->rqp;
	const uint8_t *rwqe = rq->buf + (size_t)(slot & rq->mask) * rq->stride;
	uint8_t *dst[SOFT_MAX_SGE];
	uint32_t dlen[SOFT_MAX_SGE], doff[SOFT_MAX_SGE];
	uint32_t i, n = 0, need = len;

	/* the bytes within the first SGE (a one-SGE receive, a packet of
	 * a message in its first SGE): what the loop below does for them,
	 * without its arrays */
	if (likely(len != 0 && rq->max_sge != 0)) {
		const struct mlx5_wqe_data_seg *ds =
			(const struct mlx5_wqe_data_seg *)rwqe;
		uint32_t lkey = rte_be_to_cpu_32(ds->lkey);
		uint32_t bc = rte_be_to_cpu_32(ds->byte_count);

		if (likely(lkey != MLX5_INVALID_LKEY && off < bc &&
			   bc - off >= len)) {
			uint8_t *d = soft_mr_check(qp->sdev, lkey, rq->pdn,
						   rte_be_to_cpu_64(ds->addr),
						   bc, QPIO_ACCESS_LOCAL_WRITE);

			if (d == NULL)
				return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
			memcpy(d + off, src, len);
			return 0;
		}
	}
	for (i = 0; i < rq->max_sge && need != 0; i++) {
		const struct mlx5_wqe_data_seg *ds =
			(const struct mlx5_wqe_data_seg *)(rwqe + i * SOFT_SEG);
		uint32_t lkey = rte_be_to_cpu_32(ds->lkey);
		uint32_t bc = rte_be_to_cpu_32(ds->byte_count);

		if (lkey == MLX5_INVALID_LKEY)
			break;
		if (off >= bc) {
			off -= bc;
			continue;
		}
		dst[n] = soft_mr_check(qp->sdev, lkey, rq->pdn,
				       rte_be_to_cpu_64(ds->addr), bc,
				       QPIO_ACCESS_LOCAL_WRITE);
		if (dst[n] == NULL)
			return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
		doff[n] = off;
		dlen[n] = RTE_MIN(bc - off, need);
		need -= dlen[n];
		n++;
		off = 0;
	}
	if (need != 0)
		return MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
	for (i = 0; i < n; i++) {
		memcpy(dst[i] + doff[i], src, dlen[i]);
		src += dlen[i];
	}
	return 0;
}

/* The completion of the receive in slot (syndrome 0: success). */
static __rte_always_inline void
recv_complete(struct soft_wire_rc *rc, uint8_t opcode, uint8_t syndrome,
	      uint32_t len, uint32_t imm, uint8_t se)
{
	struct soft_qp *qp = rc->qp;
	struct soft_cqe_info ci;

	memset(&ci, 0, sizeof(ci));
	ci.qpn = qp->base.qp_num;
	ci.wqe_counter = (uint16_t)rc->rslot;
	ci.src_qpn = qp->dest_qpn;
	if (syndrome != 0) {
		ci.opcode = MLX5_CQE_RESP_ERR;
		ci.syndrome = syndrome;
	} else {
		ci.opcode = opcode;
		ci.byte_cnt = len;
		ci.imm = imm;
		ci.se = se;
	}
	if (soft_complete(to_scq(qp->base.recv_cq), &ci) != 0 &&
	    qp->srq != NULL)
		soft_srq_slot_free(qp->srq, rc->rslot);
}

/* The completion of the held receive (syndrome 0: success), unless the
 * QP's flush completed it first. */
static void
recv_done(struct soft_wire_rc *rc, uint8_t opcode, uint8_t syndrome,
	  uint32_t len, uint32_t imm, uint8_t se)
{
	if (soft_recv_held_take(&rc->rheld)) {
		recv_complete(rc, opcode, syndrome, len, imm, se);
		if (syndrome == 0 && !rc->uc)
			rc->qp->wq->tx_hold = rc->qp->wq->ack_hold;
	}
}

/* Take a receive for a message (UC: the one kept, if any); it is held
 * until recv_done() or the QP's flush. @return 0, or -1 when none is
 * posted. */
static __rte_always_inline int
recv_take(struct soft_wire_rc *rc)
{
	struct soft_qp *qp = rc->qp;
	struct soft_dst t;

	rc->roff = 0;
	if (soft_recv_held(&rc->rheld) != 0)
		return 0;
	if (rq_take(qp->rqp, &rc->rpos, &rc->rslot) != 0)
		return -1;
	dst_of_qp(&t, qp);
	rq_taken(&t, rc->rpos);
	soft_recv_held_mark(&rc->rheld);
	/* a flush that began after this packet's state check missed it */
	if (unlikely(soft_qp_state_recheck(&qp->base.state) == QPIO_QPS_ERR)) {
		recv_done(rc, 0, MLX5_CQE_SYNDROME_WR_FLUSH_ERR, 0, 0, 0);
		return -1;
	}
	return 0;
}

/* The responder refuses the request at psn: NAK (RC) with syn, the QP to
 * ERR; UC drops the message. */
static void
resp_refuse(struct soft_wire *w, struct soft_wire_rc *rc, uint32_t psn,
	    uint8_t syn)
{
	rc->in_msg = rc->uc ? IN_DROP : 0;
	if (rc->uc)
		return;
	send_aeth(w, rc, psn, syn);
	soft_qp_set_err(rc->qp, false, -1);
}

/* READ responses for a request at psn of len bytes at dst. */
static void
read_respond(struct soft_wire *w, struct soft_wire_rc *rc, uint32_t psn,
	     const uint8_t *src, uint32_t len)
{
	struct soft_wire_hdr h = rc->tmpl;
	uint32_t n = npkts_of(len, rc->mtu), i;

	ack_flush(w, rc);
	for (i = 0; i < n; i++) {
		uint32_t off = i * rc->mtu, l = RTE_MIN(rc->mtu, len - off);
		struct soft_wire_seg seg = { src + off, l };

		h.opcode = n == 1 ? SOFT_IB_OPC_READ_RESP_ONLY :
			i == 0 ? SOFT_IB_OPC_READ_RESP_FIRST :
			i == n - 1 ? SOFT_IB_OPC_READ_RESP_LAST :
			SOFT_IB_OPC_READ_RESP_MIDDLE;
		h.psn = psn_add(psn, i);
		h.aeth_syn = SOFT_AETH_ACK;
		h.msn = rc->msn;
		soft_wire_send_locked(w, rc->dgid, &h, &seg, 1, l);
	}
}

/* The target of a remote access: len bytes at va under rkey, with the
 * access right need; NULL when the key, the PD, the bounds or the QP's
 * access flags refuse it. */
static uint8_t *
remote_target(struct soft_wire_rc *rc, uint64_t va, uint32_t rkey, uint32_t len,
	      uint32_t need)
{
	struct soft_qp *qp = rc->qp;

	if (!(qp->attr.qp_access_flags & need))
		return NULL;
	if (len == 0)
		return (uint8_t *)(uintptr_t)1;   /* nothing is touched */
	return soft_mr_check(qp->sdev, rkey, qp->pdn, va, len, need);
}

static void
atomic_ack(struct soft_wire *w, struct soft_wire_rc *rc, uint32_t psn)
{
	struct soft_wire_hdr h = rc->tmpl;

	ack_flush(w, rc);
	h.opcode = SOFT_IB_OPC_ATOMIC_ACK;
	h.psn = psn;
	h.aeth_syn = SOFT_AETH_ACK;
	h.msn = rc->msn;
	h.atomic_orig = rc->at_orig;
	soft_wire_send_locked(w, rc->dgid, &h, NULL, 0, 0);
}

/* A duplicate request (PSN before the expected one). */
static void
resp_duplicate(struct soft_wire *w, struct soft_wire_rc *rc,
	       const struct soft_wire_pkt *p, uint8_t op)
{
	if (op == SOFT_IB_OPC_READ_REQUEST) {
		const uint8_t *src = remote_target(rc, p->va, p->rkey,
						   p->dmalen,
						   QPIO_ACCESS_REMOTE_READ);

		if (src != NULL)
			read_respond(w, rc, p->psn, src, p->dmalen);
		return;
	}
	if (op == SOFT_IB_OPC_CMP_SWAP || op == SOFT_IB_OPC_FETCH_ADD) {
		if (rc->at_valid && rc->at_psn == p->psn)
			atomic_ack(w, rc, p->psn);
		return;
	}
	if (p->ackreq)
		send_aeth(w, rc, psn_add(rc->epsn, 0xffffff), SOFT_AETH_ACK);
}

/* An RNR NAK for the request at psn, with the QP's min_rnr_timer. */
static void
send_rnr(struct soft_wire *w, struct soft_wire_rc *rc, uint32_t psn)
{
	send_aeth(w, rc, psn, (uint8_t)(SOFT_AETH_RNR |
					(rc->qp->attr.min_rnr_timer & 0x1f)));
}

/* UC: the message in progress is lost; a SEND's receive stays held for
 * the next message. */
static void
uc_abandon(struct soft_wire_rc *rc)
{
	rc->in_msg = 0;
}

void
soft_wire_rc_rq_flush(struct soft_qp *qp)
{
	struct soft_wire_rc *rc = qp->wrc;

	if (rc != NULL && soft_recv_held_take(&rc->rheld))
		recv_complete(rc, 0, MLX5_CQE_SYNDROME_WR_FLUSH_ERR, 0, 0, 0);
}

/* The first packet of a request at psn (a SEND, a WRITE, RC's READ and
 * atomics), while a SEND or WRITE is open: RC refuses it (an opcode out
 * of sequence is an invalid request, NAKed, as rxe's check_op_seq()
 * says); UC loses the open message (a SEND's receive kept) and starts the
 * new one. @return 0, or -1 when refused. */
static int
msg_open(struct soft_wire *w, struct soft_wire_rc *rc, uint32_t psn)
{
	if (rc->in_msg == 0)
		return 0;
	if (!rc->uc) {
		resp_refuse(w, rc, psn, SOFT_AETH_NAK_INV_REQ);
		return -1;
	}
	uc_abandon(rc);
	return 0;
}

static void
resp_input(struct soft_wire *w, struct soft_wire_rc *rc,
	   const struct soft_wire_pkt *p)
{
	struct soft_qp *qp = rc->qp;
	uint8_t op = p->opcode & 0x1f;
	uint32_t has = p->has;
	uint8_t syn;

	if (p->psn != rc->epsn) {
		if (rc->uc) {
			/* UC: a gap loses the message in progress (its
			 * receive waits for the next one); a new message
			 * starts where the sender is */
			uc_abandon(rc);
			if (!(has & SOFT_WIRE_FIRST)) {
				rc->in_msg = IN_DROP;
				rc->epsn = psn_add(p->psn, 1);
				return;
			}
			rc->epsn = p->psn;
		} else if (psn_before(p->psn, rc->epsn)) {
			resp_duplicate(w, rc, p, op);
			return;
		} else {
			if (!rc->nak_sent) {
				send_aeth(w, rc, rc->epsn, SOFT_AETH_NAK_PSN);
				rc->nak_sent = 1;
			}
			return;
		}
	}
	rc->nak_sent = 0;
	if (rc->in_msg == IN_DROP) {
		if (!(has & SOFT_WIRE_FIRST)) {
			rc->epsn = psn_add(rc->epsn, 1);
			return;
		}
		rc->in_msg = 0;
	}
	switch (op) {
	case SOFT_IB_OPC_SEND_FIRST:
	case SOFT_IB_OPC_SEND_MIDDLE:
	case SOFT_IB_OPC_SEND_LAST:
	case SOFT_IB_OPC_SEND_LAST_IMM:
	case SOFT_IB_OPC_SEND_ONLY:
	case SOFT_IB_OPC_SEND_ONLY_IMM:
		if (has & SOFT_WIRE_FIRST) {
			if (msg_open(w, rc, p->psn) != 0)
				return;
			if (recv_take(rc) != 0) {
				if (rc->uc) {       /* lost, no RNR on UC */
					rc->in_msg = IN_DROP;
					rc->epsn = psn_add(rc->epsn, 1);
					return;
				}
				send_rnr(w, rc, p->psn);
				return;
			}
			rc->in_msg = IN_SEND;
		} else if (rc->in_msg != IN_SEND) {
			resp_refuse(w, rc, p->psn, SOFT_AETH_NAK_INV_REQ);
			return;
		}
		syn = recv_write(qp, rc->rslot, rc->roff, p->payload, p->len);
		if (syn != 0) {
			recv_done(rc, 0, syn, 0, 0, 0);
			resp_refuse(w, rc, p->psn,
				    syn == MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR ?
				    SOFT_AETH_NAK_INV_REQ : SOFT_AETH_NAK_REM_OP);
			if (rc->uc)
				soft_qp_set_err(qp, false, -1);
			return;
		}
		rc->roff += p->len;
		if (has & SOFT_WIRE_LAST) {
			recv_done(rc, p->has_imm ? MLX5_CQE_RESP_SEND_IMM :
				  MLX5_CQE_RESP_SEND, 0, rc->roff, p->imm, p->se);
			rc->msn = psn_add(rc->msn, 1);
			rc->in_msg = 0;
		}
		break;
	case SOFT_IB_OPC_WRITE_FIRST:
	case SOFT_IB_OPC_WRITE_MIDDLE:
	case SOFT_IB_OPC_WRITE_LAST:
	case SOFT_IB_OPC_WRITE_LAST_IMM:
	case SOFT_IB_OPC_WRITE_ONLY:
	case SOFT_IB_OPC_WRITE_ONLY_IMM:
		if (has & SOFT_WIRE_FIRST) {
			if (msg_open(w, rc, p->psn) != 0)
				return;
			rc->wdst = remote_target(rc, p->va, p->rkey, p->dmalen,
						 QPIO_ACCESS_REMOTE_WRITE);
			if (rc->wdst == NULL) {
				resp_refuse(w, rc, p->psn, SOFT_AETH_NAK_REM_ACC);
				return;
			}
			rc->wlen = p->dmalen;
			rc->woff = 0;
			rc->wpsn = p->psn;
			rc->in_msg = IN_WRITE;
		} else if (rc->in_msg != IN_WRITE) {
			resp_refuse(w, rc, p->psn, SOFT_AETH_NAK_INV_REQ);
			return;
		}
		if (p->len > rc->wlen - rc->woff ||
		    ((has & SOFT_WIRE_LAST) && rc->woff + p->len != rc->wlen)) {
			resp_refuse(w, rc, p->psn, SOFT_AETH_NAK_INV_REQ);
			return;
		}
		if (p->len != 0)
			memcpy(rc->wdst + rc->woff, p->payload, p->len);
		rc->woff += p->len;
		if (has & SOFT_WIRE_LAST) {
			if (p->has_imm) {
				if (recv_take(rc) != 0) {
					if (rc->uc) {
						rc->in_msg = 0;
						break;
					}
					/* the WRITE stays open, expecting
					 * its last packet again, which the
					 * RNR NAK names (as rxe's responder:
					 * the requester resumes there; the
					 * packets before it were taken, and
					 * may have been ACKed already) */
					rc->woff -= p->len;
					send_rnr(w, rc, p->psn);
					return;
				}
				recv_done(rc, MLX5_CQE_RESP_WR_IMM, 0,
					  rc->wlen, p->imm, p->se);
			}
			rc->msn = psn_add(rc->msn, 1);
			rc->in_msg = 0;
		}
		break;
	case SOFT_IB_OPC_READ_REQUEST: {
		const uint8_t *src;

		if (rc->uc) {
			rc->epsn = psn_add(rc->epsn, 1);
			return;
		}
		if (msg_open(w, rc, p->psn) != 0)
			return;
		/* a responder that takes no READ (max_dest_rd_atomic 0):
		 * an invalid request (IBA 9.7.5.1.4; rxe answers so) */
		if (qp->attr.max_dest_rd_atomic == 0) {
			resp_refuse(w, rc, p->psn, SOFT_AETH_NAK_INV_REQ);
			return;
		}
		src = remote_target(rc, p->va, p->rkey, p->dmalen,
				    QPIO_ACCESS_REMOTE_READ);
		if (src == NULL) {
			resp_refuse(w, rc, p->psn, SOFT_AETH_NAK_REM_ACC);
			return;
		}
		rc->msn = psn_add(rc->msn, 1);
		read_respond(w, rc, p->psn, src, p->dmalen);
		rc->epsn = psn_add(rc->epsn, npkts_of(p->dmalen, rc->mtu));
		return;
	}
	case SOFT_IB_OPC_CMP_SWAP:
	case SOFT_IB_OPC_FETCH_ADD: {
		uint64_t *t;

		if (rc->uc) {
			rc->epsn = psn_add(rc->epsn, 1);
			return;
		}
		if (msg_open(w, rc, p->psn) != 0)
			return;
		if ((p->va & 7) || qp->attr.max_dest_rd_atomic == 0) {
			resp_refuse(w, rc, p->psn, SOFT_AETH_NAK_INV_REQ);
			return;
		}
		t = (uint64_t *)remote_target(rc, p->va, p->rkey, 8,
					      QPIO_ACCESS_REMOTE_ATOMIC);
		if (t == NULL) {
			resp_refuse(w, rc, p->psn, SOFT_AETH_NAK_REM_ACC);
			return;
		}
		if (op == SOFT_IB_OPC_CMP_SWAP)
			rc->at_orig = soft_ib_atomic_cmp_swap(t, p->compare,
							      p->swap_add);
		else
			rc->at_orig = soft_ib_atomic_fetch_add(t, p->swap_add);
		rc->at_psn = p->psn;
		rc->at_valid = 1;
		rc->msn = psn_add(rc->msn, 1);
		atomic_ack(w, rc, p->psn);
		rc->epsn = psn_add(rc->epsn, 1);
		return;
	}
	default:
		return;
	}
	rc->epsn = psn_add(rc->epsn, 1);
	if (p->ackreq && !rc->uc)
		ack_request(w, rc, p->psn);
}

int
soft_wire_rc_input(struct soft_wire *w, struct soft_qp *qp,
		   const struct soft_wire_pkt *p)
{
	struct soft_wire_rc *rc = qp->wrc;
	uint8_t op = p->opcode;
	uint8_t state = soft_qp_state_read(&qp->base.state);

	if (op >= SOFT_IB_OPC_READ_RESP_FIRST && op <= SOFT_IB_OPC_ATOMIC_ACK) {
		/* for the requester: RTS, or draining (SQD) */
		if (rc->uc || (state != QPIO_QPS_RTS && state != QPIO_QPS_SQD))
			return -1;
		/* an answer to a PSN never sent (after the last one) is a
		 * stranger's or a broken one: it completes nothing (IBA
		 * C9-114: ACKs of PSNs not outstanding are ignored) */
		if (psn_before(psn_add(rc->npsn, 0xffffff), p->psn))
			return 0;
		if (op == SOFT_IB_OPC_ACK)
			rc_aeth(w, rc, p);
		else if (op == SOFT_IB_OPC_ATOMIC_ACK ||
			 op == SOFT_IB_OPC_READ_RESP_FIRST ||
			 op == SOFT_IB_OPC_READ_RESP_ONLY ||
			 op == SOFT_IB_OPC_READ_RESP_LAST) {
			/* an AETH with a NAK ends the READ too */
			if (SOFT_AETH_TYPE(p->aeth_syn) != 0) {
				rc_aeth(w, rc, p);
				return 0;
			}
			rc_response(w, rc, p);
		} else {
			rc_response(w, rc, p);
		}
		rc_push(w, rc);
		return 0;
	}
	if (!(SOFT_QPS_BIT(state) & SOFT_QPS_RESPOND))
		return -1;
	resp_input(w, rc, p);
	return 0;
}

void
soft_wire_rc_timers(struct soft_wire *w)
{
	struct soft_wire_rc *rc;
	uint64_t now = 0;

	TAILQ_FOREACH(rc, &w->rcs, next) {
		struct soft_qp *qp = rc->qp;

		if (rc->to_tsc == 0 && rc->rnr_tsc == 0)
			continue;
		if (now == 0)
			now = rte_get_tsc_cycles();
		if (rc->rnr_tsc != 0 && now >= rc->rnr_tsc) {
			rc->rnr_tsc = 0;
			rc_resend(w, rc, rc->una);
			rc_push(w, rc);
		} else if (rc->to_tsc != 0 && now >= rc->to_tsc) {
			if (qp->sq.ci == rc->sent) {
				rc->to_tsc = 0;
				continue;
			}
			if (++rc->retries > qp->attr.retry_cnt) {
				qp->retry_exceeded++;
				rc_fail(rc, MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
				continue;
			}
			rc->rd_win = 1;
			rc_resend(w, rc, rc->una);
		}
	}
}

uint64_t
soft_wire_rc_next_tsc(struct soft_wire *w)
{
	const struct soft_wire_rc *rc;
	uint64_t next = 0;

	TAILQ_FOREACH(rc, &w->rcs, next) {
		if (rc->rnr_tsc != 0 && (next == 0 || rc->rnr_tsc < next))
			next = rc->rnr_tsc;
		if (rc->to_tsc != 0 && (next == 0 || rc->to_tsc < next))
			next = rc->to_tsc;
	}
	return next;
}

/* ---- the QP's life ---- */

void
soft_sq_execute_rc_wire(struct soft_qp *qp)
{
	struct soft_wire *w = qp->wq;

	rte_spinlock_lock(&w->lock);
	rc_push(w, qp->wrc);
	soft_wire_flush_locked(w);
	rte_spinlock_unlock(&w->lock);
}

int
soft_wire_rc_create(struct soft_qp *qp, bool uc)
{
	struct soft_wire *w = qp->wq;
	struct soft_wire_rc *rc;

	rc = soft_obj_alloc(qp->sdev, SOFT_OBJ_BUF, "soft_wire_rc", sizeof(*rc),
			    SOCKET_ID_ANY);
	if (rc == NULL)
		return -ENOMEM;
	rc->w = soft_obj_alloc(qp->sdev, SOFT_OBJ_BUF, "soft_wire_rc_wqe",
			       sizeof(*rc->w) * qp->sq.depth, SOCKET_ID_ANY);
	if (rc->w == NULL) {
		soft_obj_free(rc);
		return -ENOMEM;
	}
	rc->qp = qp;
	rc->uc = uc;
	rc->mtu = w->path_mtu;
	qp->wrc = rc;
	rte_spinlock_lock(&w->lock);
	TAILQ_INSERT_TAIL(&w->rcs, rc, next);
	rte_spinlock_unlock(&w->lock);
	return 0;
}

void
soft_wire_rc_destroy(struct soft_qp *qp)
{
	struct soft_wire *w = qp->wq;
	struct soft_wire_rc *rc = qp->wrc;

	if (rc == NULL)
		return;
	rte_spinlock_lock(&w->lock);
	TAILQ_REMOVE(&w->rcs, rc, next);
	soft_wire_flush_locked(w);  /* an ACK a progress step held */
	rte_spinlock_unlock(&w->lock);
	qp->wrc = NULL;
	soft_obj_free(rc->w);
	soft_obj_free(rc);
}

int
soft_wire_rc_av_check(const struct soft_qp *qp, const struct qpio_ah_attr *ah)
{
	struct soft_wire_hdr h;

	if (!ah->is_global) {
		SOFT_LOG(ERR, "qp 0x%x: a RoCE path names its destination by "
			 "GID: set ah_attr.is_global and grh.dgid (::ffff:<IPv4> "
			 "or the IPv6 address)", qp->base.qp_num);
		return -EINVAL;
	}
	if (soft_wire_path(qp->wq, ah->grh.sgid_index,
			   ah->grh.dgid.raw, 0, 0, 0, &h) != 0) {
		SOFT_LOG(ERR, "qp 0x%x: GID %u of the device and the "
			 "destination GID are not of one IP version",
			 qp->base.qp_num, ah->grh.sgid_index);
		return -EINVAL;
	}
	return 0;
}

void
soft_wire_rc_modify(struct soft_qp *qp, int mask, enum qpio_qp_state next)
{
	struct soft_wire *w = qp->wq;
	struct soft_wire_rc *rc = qp->wrc;
	const struct qpio_qp_attr *a = &qp->attr;

	rte_spinlock_lock(&w->lock);
	if (mask & QPIO_QP_AV) {
		const struct qpio_ah_attr *ah = &a->ah_attr;

		memcpy(rc->dgid, ah->grh.dgid.raw, 16);
		soft_wire_path(w, ah->grh.sgid_index, ah->grh.dgid.raw,
			       ah->grh.traffic_class, ah->grh.hop_limit,
			       ah->grh.flow_label, &rc->tmpl);
		soft_wire_neigh_ask_locked(w, rc->dgid);
	}
	if (mask & QPIO_QP_PATH_MTU)
		rc->mtu = RTE_MIN(256u << (a->path_mtu - 1), w->path_mtu);
	if (mask & QPIO_QP_RQ_PSN)
		rc->epsn = a->rq_psn & 0xffffff;
	if (mask & QPIO_QP_SQ_PSN)
		rc->npsn = rc->una = a->sq_psn & 0xffffff;
	rc->tmpl.dqpn = qp->dest_qpn;
	rc->tmpl.pkey = qp->pkey;
	rc->tmpl.udp_sport = soft_wire_sport(qp->base.qp_num, qp->dest_qpn);
	if (next == QPIO_QPS_RESET) {
		rc->sent = qp->sq.ci;
		rc->nrd = 0;
		rc->rd_win = 0;
		rc->to_tsc = rc->rnr_tsc = 0;
		rc->retries = rc->rnr_retries = 0;
		rc->rd_pkts = rc->rd_off = 0;
		rc->gap_set = 0;
		rc->msn = 0;
		rc->nak_sent = 0;
		rc->in_msg = 0;
		rc->at_valid = 0;
		rc->rheld = 0;      /* the reset discarded every receive */
	}
	soft_wire_flush_locked(w);  /* an ACK a progress step held */
	rte_spinlock_unlock(&w->lock);
}
