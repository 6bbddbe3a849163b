/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC device model, errors: a CQ that overflows, a QP moved to ERR,
 * the flushes of its SQ and RQ, and the RNR NAKs of a requester whose
 * responder has no receive posted.
 */
#include <stdio.h>

#include <rte_cycles.h>

#include "soft_model.h"
#include "soft_wire.h"

/* IBA 9.7.5.2.8: RNR NAK timer field -> delay in units of 10 us. */
static const uint32_t rnr_timer_10us[32] = {
	65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
	12288, 16384, 24576, 32768, 49152,
};

/*
 * A CQE did not fit: the CQ enters the error state, once. From then on
 * it takes no CQE (room 0; those already in it stay readable), every CQE
 * meant for it is counted in overflow_count, the device raises CQ_ERR,
 * and every QP that uses the CQ moves to ERR with a QP_FATAL event.
 * Error path: it takes the device's control lock to walk its QP table
 * (in chunks; QPs are moved to ERR with the lock released, since their
 * flushes may complete into a CQ that overflows in turn).
 */
void
soft_cq_error(struct soft_cq *cq)
{
	struct soft_dev *sdev = cq->sdev;
	struct soft_qp *qps[64];
	uint32_t slot = 0, n, i;

	__atomic_fetch_add(&cq->overflow_count, 1, __ATOMIC_RELAXED);
	if (!soft_cq_overflow_raise(&cq->overflow))
		return;
	soft_cq_room_set(&cq->room, 0);
	SOFT_LOG(ERR, "cq %u: overflow (depth %u, pi %u, ci %u): CQ in error, "
		 "its QPs to ERR (a CQ must hold every completion its QPs can "
		 "have outstanding)", cq->base.cqn, cq->base.depth,
		 soft_cq_pi_peek(&cq->pi), soft_index_peek(&cq->ci));
	qpio_rdma_event_raise(sdev->qdev, QPIO_EVENT_CQ_ERR, &cq->base, 0);
	while (slot < sdev->max_qp) {
		n = 0;
		soft_dev_lock(sdev);
		for (; slot < sdev->max_qp && n < RTE_DIM(qps); slot++) {
			struct soft_qp *qp = sdev->qp_tbl[slot];

			if (qp != NULL && (qp->base.send_cq == &cq->base ||
					   qp->base.recv_cq == &cq->base))
				qps[n++] = qp;
		}
		soft_dev_unlock(sdev);
		for (i = 0; i < n; i++)
			soft_qp_set_err(qps[i], false, QPIO_EVENT_QP_FATAL);
	}
}

/* Produce one CQE into cq; a CQ that is full or in error does not take
 * it (see soft_cq_error()). @return 0 if written, -1 if not. */
int
soft_complete(struct soft_cq *cq, const struct soft_cqe_info *ci)
{
	uint32_t idx;
	int ret;

	if (cq->sdev->owner != soft_self_token)
		ret = soft_cq_reserve_noted(cq, &idx, ci->qpn, ci->wqe_counter,
					    0);
	else
		ret = soft_cq_reserve(cq, &idx);
	if (unlikely(ret != 0)) {
		soft_cq_error(cq);
		return -1;
	}
	soft_cq_publish(cq, idx, ci);
	soft_cq_event_check(cq, ci);
	return 0;
}

void
soft_mark_pending(struct soft_qp *qp)
{
	struct soft_cq *scq = to_scq(qp->base.send_cq);

	if (soft_qp_pending_mark(&qp->pending))
		soft_cq_pending_add(&scq->nb_pending);
}

/* Flush the QP's own RQ (an SRQ QP has nothing of its own to flush). */
void
soft_rq_flush(struct soft_qp *qp)
{
	struct soft_rq *rq = &qp->rq;
	struct soft_cq *rcq = to_scq(qp->base.recv_cq);
	struct soft_cqe_info ci = {
		.opcode = MLX5_CQE_RESP_ERR,
		.syndrome = MLX5_CQE_SYNDROME_WR_FLUSH_ERR,
		.qpn = qp->base.qp_num,
	};
	uint32_t c = soft_rq_ci_peek(&rq->ci);


	for (;;) {
		uint32_t head = soft_doorbell_read(&rq->head);

		if (c == head)
			break;
		if (!soft_rq_consume(&rq->ci, &c, 1))
			continue;
		ci.wqe_counter = (uint16_t)c;
		if (soft_complete(rcq, &ci) == 0)
			qp->flushed++;
		c++;
	}
}

bool
soft_qp_set_err(struct soft_qp *qp, bool owner, int event)
{
	uint8_t s = soft_qp_state_read(&qp->base.state);

	do {
		if (s == QPIO_QPS_ERR || s == QPIO_QPS_RESET)
			return false;
	} while (!soft_qp_state_move(&qp->base.state, &s,
				     (uint8_t)QPIO_QPS_ERR));
	if (event >= 0)
		qpio_rdma_event_raise(qp->sdev->qdev, (enum qpio_event_type)event,
				      &qp->base, 0);
	/* An XRC target has no queue of its own: nothing to flush (the
	 * receives it took completed when it took them). */
	if (unlikely(qp->base.qp_type == QPIO_QPT_XRC_RECV))
		return true;
	if (unlikely(qp->wrc != NULL))
		soft_wire_rc_rq_flush(qp);
	if (qp->srq != NULL)
		soft_qp_last_wqe(qp);
	else
		soft_rq_flush(qp);
	if (owner)
		soft_sq_run(qp);
	else
		soft_mark_pending(qp);
	return true;
}

/* A QP of an SRQ entered ERR: the model takes an SRQ receive and
 * completes it in one step, so none is in progress on the QP and it will
 * take no more: the last WQE is reached (IBV_EVENT_QP_LAST_WQE_REACHED of
 * ibv_get_async_event(3)). The SRQ's receives stay for its other QPs. */
void
soft_qp_last_wqe(struct soft_qp *qp)
{
	qpio_rdma_event_raise(qp->sdev->qdev, QPIO_EVENT_QP_LAST_WQE_REACHED,
			      &qp->base, 0);
}

void
soft_sq_flush(struct soft_qp *qp, uint32_t ci, uint32_t pi)
{
	struct soft_cq *scq = to_scq(qp->base.send_cq);
	struct soft_cqe_info info = {
		.opcode = MLX5_CQE_REQ_ERR,
		.syndrome = MLX5_CQE_SYNDROME_WR_FLUSH_ERR,
		.qpn = qp->base.qp_num,
	};

	for (; ci != pi; ci++) {
		const struct mlx5_wqe_ctrl_seg *ctrl = (const void *)
			(qp->sq.buf + ((size_t)(ci & qp->sq.mask) << qp->sq.log_stride));

		info.wqe_opcode = (uint8_t)rte_be_to_cpu_32(ctrl->opmod_idx_opcode);
		info.wqe_counter = (uint16_t)ci;
		if (soft_complete(scq, &info) == 0)
			qp->flushed++;
	}
	soft_sq_ci_store(&qp->sq.ci, ci);
}

uint64_t
soft_rnr_timer_tsc(uint8_t t)
{
	return rte_get_tsc_hz() / 100000 * rnr_timer_10us[t & 31];
}

bool
soft_rnr_nak(struct soft_run *r)
{
	struct soft_qp *qp = r->qp;
	uint32_t t = r->peer != NULL ? r->peer->attr.min_rnr_timer : 0;

	qp->rnr_naks++;
	qp->rnr_nak_total++;
	if (qp->attr.rnr_retry == 7 || qp->rnr_naks <= qp->attr.rnr_retry) {
		qp->rnr_deadline = rte_get_tsc_cycles() +
			rte_get_tsc_hz() / 100000 * rnr_timer_10us[t];
		soft_mark_pending(qp);
		return true;
	}
	qp->rnr_exceeded++;
	return false;
}

/* RC/UC QPs completing into cq whose peer QP belongs to a process that is
 * gone move to ERR (QP_FATAL): their receives flush, once each. A real
 * responder never hears of a dead requester; a soft one can, and leaving
 * the receives posted for ever helps nobody. A QP with send work still
 * to run is left to its requester side, which fails that work with
 * RETRY_EXC_ERR as a dead responder calls for. */
static void
cq_peers_check(struct soft_cq *cq)
{
	struct soft_dev *sdev = cq->sdev;
	struct soft_qp *gone[16];
	uint64_t seen = 0, now = rte_get_tsc_cycles();
	uint32_t slot = 0, n, i;
	int seen_alive = 1;

	/* At most every 100 ms: it walks the device's QPs and asks the
	 * kernel about each peer process (once per process a walk). */
	if (now - cq->peers_tsc < rte_get_tsc_hz() / 10)
		return;
	cq->peers_tsc = now;

	while (slot < sdev->max_qp) {
		n = 0;
		soft_dev_lock(sdev);
		for (; slot < sdev->max_qp && n < RTE_DIM(gone); slot++) {
			struct soft_qp *qp = sdev->qp_tbl[slot];
			uint8_t st;

			if (qp == NULL || qp->base.recv_cq != &cq->base ||
			    qp->peer_owner == 0 ||
			    qp->peer_owner == soft_self_token)
				continue;
			st = soft_qp_state_read(&qp->base.state);
			if (st != QPIO_QPS_RTR && st != QPIO_QPS_RTS &&
			    st != QPIO_QPS_SQD)
				continue;
			if (soft_sq_ci_peek(&qp->sq.ci) !=
			    soft_doorbell_read(&qp->sq.dbrec) ||
			    soft_qp_pending_peek(&qp->pending))
				continue;
			if (qp->peer_owner != seen) {
				seen = qp->peer_owner;
				seen_alive = soft_token_alive(seen,
							      &qp->peer_live_tsc);
			}
			if (!seen_alive)
				gone[n++] = qp;
		}
		soft_dev_unlock(sdev);
		for (i = 0; i < n; i++) {
			SOFT_LOG(NOTICE, "qp 0x%x: the process of its peer qp 0x%x "
				 "is gone: to ERR, its receives flush",
				 gone[i]->base.qp_num, gone[i]->dest_qpn);
			soft_qp_set_err(gone[i], false, QPIO_EVENT_QP_FATAL);
		}
	}
}

void
soft_cq_stall_check(struct soft_cq *cq)
{
	uint32_t ci = cq->ci;
	uint32_t pi = soft_cq_pi_read(&cq->pi);
	struct mlx5_cqe64 *cqe = &cq->cqes[ci & cq->mask];
	soft_cqe_resv r = 0, w;
	uint64_t lo, hi, token;
	uint8_t op_own;

	if (pi == ci)
		goto peers;
	op_own = soft_cqe_owner_read(&cqe->op_own);
	if ((op_own & 1) == ((ci >> cq->log_depth) & 1) &&
	    (op_own >> 4) != MLX5_CQE_INVALID)
		goto peers;      /* written: the poll takes it */
	/* The slot's record: in the reservation word while its reservation
	 * is the latest, else in resv[] (soft_cqe.h). */
	w = resv_load(&cq->piw);
	if (resv_valid(w) && resv_idx(w) == ci + 1)
		r = resv_at(w, ci);
	else
		r = resv_load(&cq->resv[ci & cq->mask]);
	if (!resv_valid(r) || resv_idx(r) != ci)
		goto peers;      /* reserved by this process: it writes it */
	lo = (uint64_t)r;
	hi = (uint64_t)(r >> 64);
	token = ((hi >> 40) & ((1u << SOFT_TOKEN_PID_BITS) - 1)) |
		(((lo >> 58) | ((hi >> 62) << 6)) << SOFT_TOKEN_PID_BITS);
	if (!soft_token_alive_bits(token, 8, &cq->resv_live_tsc)) {
		struct soft_cqe_info info = {
			.opcode = MLX5_CQE_RESP_ERR,
			.syndrome = MLX5_CQE_SYNDROME_WR_FLUSH_ERR,
			.qpn = (uint32_t)(lo >> 32) & 0xffffff,
			.wqe_counter = (uint16_t)hi,
		};

		SOFT_LOG(NOTICE, "cq %u: slot %u was reserved by process %d, "
			 "which died before writing it: its receive (qp 0x%x) "
			 "completes WR_FLUSH_ERR", cq->base.cqn, ci,
			 (int)(token & ((1u << SOFT_TOKEN_PID_BITS) - 1)),
			 info.qpn);
		cqe->srqn_uidx = (lo & SOFT_RESV_XRC) ?
			rte_cpu_to_be_32((uint32_t)((hi >> 16) & 0xffffff) |
					 SOFT_XRC_CQE_MARK) : 0;
		soft_cq_publish(cq, ci, &info);
	}
peers:
	cq_peers_check(cq);
}
