/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libibverbs driver receive path: post receive bursts and poll CQs.
 */
#include <stdbool.h>
#include <string.h>

#include <rte_byteorder.h>

#include "ibv_rx.h"

/* A receive is posted in any state but RESET, to a QP without an SRQ:
 * 0, or -EINVAL with the rule logged. */
static inline int
post_recv_state_check(const struct qpio_qp *qqp, uint8_t state)
{
	if (likely(state != QPIO_QPS_RESET && qqp->srq == NULL))
		return 0;
	IBVD_LOG(DEBUG, "qp 0x%x: post recv refused (%s)", qqp->qp_num,
		 qqp->srq != NULL ? "QP uses an SRQ" : "QP in RESET");
	return -EINVAL;
}

/* Post the chain rq->wrs[0..n), whose last slot is pi - 1: one chained
 * ibv_post_recv(), so the provider writes every WQE, then updates the
 * doorbell record once. @return the WRs the provider took; *rc its code
 * when it refused the rest. */
static inline uint16_t
rq_post_chain(struct ibvd_qp *qp, uint16_t n, uint32_t pi, int *rc)
{
	struct ibvd_rq *rq = &qp->rq;
	struct ibv_recv_wr *bad = NULL;
	int ret;

	rq->wrs[n - 1].next = NULL;
	ret = ibv_post_recv(qp->qp, rq->wrs, &bad);
	qp->post_recv_calls++;
	if (unlikely(ret != 0)) {
		n = bad != NULL ? (uint16_t)(bad - rq->wrs) : 0;
		pi = rq->pi + n;
		*rc = -ret;
	}
	rq->pi = pi;
	return n;
}

uint16_t
ibvd_post_recv(struct qpio_qp *qqp, const struct qpio_recv_wr *wrs,
	       uint16_t n, int *err)
{
	struct ibvd_qp *qp = to_iqp(qqp);
	struct ibvd_rq *rq = &qp->rq;
	uint8_t state = __atomic_load_n(&qqp->state, __ATOMIC_ACQUIRE);
	uint32_t pi = rq->pi;
	uint16_t i = 0;
	int rc = 0;

	rc = post_recv_state_check(qqp, state);
	if (unlikely(rc != 0))
		goto out;
	for (i = 0; i < n; i++) {
		const struct qpio_recv_wr *wr = &wrs[i];
		struct ibv_recv_wr *w = &rq->wrs[i];
		uint32_t j;

		if (unlikely(wr->num_sge > rq->max_sge)) {
			IBVD_LOG(DEBUG, "qp 0x%x: num_sge %u > max_recv_sge %u",
				 qqp->qp_num, wr->num_sge, rq->max_sge);
			rc = -EINVAL;
			break;
		}
		if (unlikely(pi - rq->tail >= rq->depth)) {
			rc = -ENOMEM;
			break;
		}
		/* Same rule as the send side and the soft NIC: 31 bits of
		 * length per SGE. */
		for (j = 0; j < wr->num_sge; j++)
			if (unlikely(wr->sg_list[j].length > INT32_MAX))
				break;
		if (unlikely(j != wr->num_sge)) {
			IBVD_LOG(DEBUG, "qp 0x%x: receive SGE %u length over 2^31 - 1",
				 qqp->qp_num, j);
			rc = -EINVAL;
			break;
		}
		w->wr_id = ibvd_wrid(IBVD_WRID_RECV, qp->gen, pi);
		w->next = w + 1;
		w->sg_list = (struct ibv_sge *)(uintptr_t)wr->sg_list;
		w->num_sge = (int)wr->num_sge;
		rq->wrid[pi & rq->mask] = wr->wr_id;
		pi++;
	}
	if (likely(i != 0))
		i = rq_post_chain(qp, i, pi, &rc);
out:
	if (err != NULL)
		*err = rc;
	return i;
}

/*
 * The flat receive burst (qpio_qp_post_recv_sge()): receive i is the
 * one-SGE WR { wr_id + i, &sges[i], 1 } of ibvd_post_recv(), with its
 * checks in its order (RESET or an SRQ refuse the burst; max_recv_sge 0
 * refuses the first WR; a full RQ is -ENOMEM before the 31-bit length
 * rule). The chain points straight at sges (qpio_sge has ibv_sge's
 * layout); one ibv_post_recv() for the burst.
 */
uint16_t
ibvd_post_recv_sge(struct qpio_qp *qqp, const struct qpio_sge *sges,
		   uint16_t n, uint64_t wr_id, int *err)
{
	struct ibvd_qp *qp = to_iqp(qqp);
	struct ibvd_rq *rq = &qp->rq;
	uint8_t state = __atomic_load_n(&qqp->state, __ATOMIC_ACQUIRE);
	uint32_t pi = rq->pi;
	uint16_t i = 0, fit;
	int rc = 0;

	rc = post_recv_state_check(qqp, state);
	if (unlikely(rc != 0))
		goto out;
	if (unlikely(n == 0))
		goto out;
	if (unlikely(rq->max_sge == 0)) {
		IBVD_LOG(DEBUG, "qp 0x%x: num_sge 1 > max_recv_sge 0",
			 qqp->qp_num);
		rc = -EINVAL;
		goto out;
	}
	fit = (uint16_t)RTE_MIN((uint32_t)n, rq->depth - (pi - rq->tail));
	for (i = 0; i < fit; i++) {
		struct ibv_recv_wr *w = &rq->wrs[i];

		if (unlikely(sges[i].length > INT32_MAX)) {
			IBVD_LOG(DEBUG, "qp 0x%x: receive SGE 0 length over "
				 "2^31 - 1", qqp->qp_num);
			rc = -EINVAL;
			break;
		}
		w->wr_id = ibvd_wrid(IBVD_WRID_RECV, qp->gen, pi);
		w->next = w + 1;
		w->sg_list = (struct ibv_sge *)(uintptr_t)&sges[i];
		w->num_sge = 1;
		rq->wrid[pi & rq->mask] = wr_id + i;
		pi++;
	}
	if (i == fit && fit < n)
		rc = -ENOMEM;
	if (likely(i != 0))
		i = rq_post_chain(qp, i, pi, &rc);
out:
	if (err != NULL)
		*err = rc;
	return i;
}

/*
 * Keep the fast-path copy of the state in step with what an error
 * completion tells of the device's: a send error of a UD or UC QP moves
 * it to SQE (IBA 10.3.1; flushes, which SQE and ERR produce, change
 * nothing), any other error of a connected QP to ERR. The device's own
 * state (ibv_query_qp) stays the authority: a provider that moves UD/UC
 * QPs to ERR instead (rxe does) is seen at the next qpio_qp_query().
 */
static void
ibvd_qp_error_state(struct ibvd_qp *qp, bool send, enum qpio_wc_status st)
{
	uint8_t s = __atomic_load_n(&qp->base.state, __ATOMIC_ACQUIRE);

	if (send && qp->base.qp_type != QPIO_QPT_RC) {
		if (st != QPIO_WC_WR_FLUSH_ERR &&
		    (s == QPIO_QPS_RTS || s == QPIO_QPS_SQD))
			__atomic_compare_exchange_n(&qp->base.state, &s,
						    (uint8_t)QPIO_QPS_SQE, 0,
						    __ATOMIC_ACQ_REL,
						    __ATOMIC_ACQUIRE);
		return;
	}
	if (qp->base.qp_type != QPIO_QPT_UD)
		__atomic_store_n(&qp->base.state, QPIO_QPS_ERR,
				 __ATOMIC_RELEASE);
}

uint16_t
ibvd_cq_poll(struct qpio_cq *qcq, struct qpio_wc *wc, uint16_t n)
{
	struct ibvd_cq *cq = to_icq(qcq);
	struct ibv_wc *iwc = (struct ibv_wc *)wc;
	uint16_t out = 0;
	int got, i;

	if (unlikely(n == 0))
		return 0;
	/* The provider writes ibv_wc entries straight into wc (same layout)
	 * and updates its consumer index once for the call. */
	got = ibv_poll_cq(cq->cq, n, iwc);
	if (unlikely(got <= 0)) {
		cq->empty_polls++;
		return 0;
	}
	for (i = 0; i < got; i++) {
		uint64_t id = iwc[i].wr_id;
		uint32_t slot = (uint32_t)id;
		struct ibvd_qp *qp = ibvd_cq_qp(cq, iwc[i].qp_num);
		struct qpio_wc *o;

		if (unlikely(qp == NULL)) {
			/* An XRC SRQ's receive names its target QP, which
			 * no CQ lists: the wr_id names the SRQ. */
			if ((id & (IBVD_WRID_RECV | IBVD_WRID_XRC)) ==
			    (IBVD_WRID_RECV | IBVD_WRID_XRC))
				out += (uint16_t)ibvd_xrc_wc(cq, &iwc[i],
							     &wc[out]);
			continue;
		}
		/* SRQ slots outlive a QP's resets; its own queues do not. */
		if (unlikely(((id >> IBVD_WRID_GEN_SHIFT) & IBVD_WRID_GEN_MASK) !=
			     (qp->gen & IBVD_WRID_GEN_MASK) &&
			     !((id & IBVD_WRID_RECV) && qp->srq != NULL))) {
			qp->stale_wc++;
			continue;
		}
		o = &wc[out];
		if (out != i)
			memcpy(o, &iwc[i], sizeof(*o));
		if (id & IBVD_WRID_RECV) {
			if (qp->srq != NULL) {
				o->wr_id = ibvd_srq_complete(qp->srq, slot);
			} else {
				o->wr_id = qp->rq.wrid[slot & qp->rq.mask];
				qp->rq.tail = slot + 1;
			}
			if (unlikely(o->status != QPIO_WC_SUCCESS))
				o->opcode = QPIO_WC_RECV;
			/* Verbs defines src_qp and GRH for UD only; qpio
			 * reports the peer QP on connected QPs, and a GRH
			 * only where it sits in the receive buffer. */
			if (qp->base.qp_type != QPIO_QPT_UD) {
				o->src_qp = qp->dest_qpn;
				o->wc_flags &= ~(unsigned int)QPIO_WC_GRH;
			}
		} else {
			o->wr_id = qp->sq.wrid[slot & qp->sq.mask];
			if (unlikely(o->status != QPIO_WC_SUCCESS))
				o->opcode = (enum qpio_wc_opcode)
					qp->sq.opcode[slot & qp->sq.mask];
			/* Releases this slot and every unsignaled one before. */
			qp->sq.tail = slot + 1;
		}
		o->wc_flags &= QPIO_WC_GRH | QPIO_WC_WITH_IMM;
		if (unlikely(o->status != QPIO_WC_SUCCESS)) {
			/* Fields other than wr_id, status, opcode, qp_num and
			 * vendor_err are undefined in verbs; qpio zeroes them. */
			o->byte_len = 0;
			o->imm_data = 0;
			o->wc_flags = 0;
			ibvd_wc_error_count(qp, o->status);
			ibvd_qp_error_state(qp, !(id & IBVD_WRID_RECV),
					    o->status);
		} else if (o->wc_flags & QPIO_WC_WITH_IMM) {
			o->imm_data = rte_be_to_cpu_32(o->imm_data);
		}
		out++;
	}
	return out;
}
