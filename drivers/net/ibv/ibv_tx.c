/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libibverbs driver send path: a burst becomes one chained ibv_post_send,
 * so the provider writes every WQE and rings the doorbell once.
 */
#include <inttypes.h>

#include <rte_byteorder.h>

#include "ibv_private.h"
#include "rdma_wr.h"

/* Validate one WR (lib/rdma's rules, rdma_wr.h); nothing is posted for
 * a refused one. rxe alone would take, for example, an atomic with two
 * 4-byte SGEs: the rules are the soft NIC's, so both drivers agree. */
static inline int
wr_check(const struct ibvd_qp *qp, const struct qpio_send_wr *wr,
	 const struct qpio_rdma_wr_limits *lim)
{
	const struct qpio_rdma_wr_op *op;
	enum qpio_rdma_wr_rule rule = qpio_rdma_wr_check(&qp->base, wr, lim, &op);

	if (unlikely(rule != QPIO_RDMA_WR_OK))
		return qpio_rdma_wr_reject(&qp->base, wr, lim, rule);
	return 0;
}

/* Translate wr into w. The SGE list is passed as is (same layout). */
static inline void
wr_fill(const struct ibvd_qp *qp, const struct qpio_send_wr *wr,
	struct ibv_send_wr *w, uint32_t slot)
{
	w->wr_id = ibvd_wrid(0, qp->gen, slot);
	w->next = w + 1;
	w->sg_list = (struct ibv_sge *)(uintptr_t)wr->sg_list;
	w->num_sge = (int)wr->num_sge;
	/* enum qpio_wr_opcode and enum qpio_send_flags have the verbs values */
	w->opcode = (enum ibv_wr_opcode)wr->opcode;
	w->send_flags = wr->send_flags;
	w->imm_data = rte_cpu_to_be_32(wr->imm_data);
	/* XRC_SEND: the remote SRQ; other types' providers ignore it. */
	w->qp_type.xrc.remote_srqn = wr->qp_type.xrc.remote_srqn;
	switch (wr->opcode) {
	case QPIO_WR_RDMA_WRITE:
	case QPIO_WR_RDMA_WRITE_WITH_IMM:
	case QPIO_WR_RDMA_READ:
		w->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		w->wr.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case QPIO_WR_ATOMIC_CMP_AND_SWP:
	case QPIO_WR_ATOMIC_FETCH_AND_ADD:
		w->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		w->wr.atomic.compare_add = wr->wr.atomic.compare_add;
		w->wr.atomic.swap = wr->wr.atomic.swap;
		w->wr.atomic.rkey = wr->wr.atomic.rkey;
		break;
	default:
		if (qp->base.qp_type == QPIO_QPT_UD) {
			w->wr.ud.ah = ((const struct ibvd_ah *)wr->wr.ud.ah)->ah;
			w->wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
			w->wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
		}
		break;
	}
}

/* RTS, SQD (the WRs start after the resume), SQE and ERR (both flush):
 * the states libibverbs providers post in. As bits, one compare.
 * @return 0, or -EINVAL with the rule logged. */
static inline int
post_send_state_check(const struct qpio_qp *qqp, uint8_t state)
{
	if (likely((1u << state) & ((1u << QPIO_QPS_RTS) | (1u << QPIO_QPS_SQD) |
				    (1u << QPIO_QPS_SQE) | (1u << QPIO_QPS_ERR))))
		return 0;
	IBVD_LOG(DEBUG, "qp 0x%x: post send in %s (needs RTS, SQD, SQE or ERR)",
		 qqp->qp_num, qpio_qp_state_str(state));
	return -EINVAL;
}

uint16_t
ibvd_post_send(struct qpio_qp *qqp, const struct qpio_send_wr *wrs,
	       uint16_t n, int *err)
{
	struct ibvd_qp *qp = to_iqp(qqp);
	struct ibvd_sq *sq = &qp->sq;
	uint8_t state = __atomic_load_n(&qqp->state, __ATOMIC_ACQUIRE);
	uint32_t pi = sq->pi;
	struct ibv_send_wr *bad = NULL;
	const struct qpio_rdma_wr_limits lim = {
		.max_sge = sq->max_sge,
		.max_inline = sq->max_inline,
		.max_rd_atomic = qp->max_rd_atomic,
	};
	uint16_t i = 0;
	int rc = 0, ret;

	rc = post_send_state_check(qqp, state);
	if (unlikely(rc != 0))
		goto out;
	for (i = 0; i < n; i++) {
		/* A WR that breaks a rule is -EINVAL even into a full SQ. */
		rc = wr_check(qp, &wrs[i], &lim);
		if (unlikely(rc != 0))
			break;
		if (unlikely(pi - sq->tail >= sq->depth)) {
			rc = -ENOMEM;
			break;
		}
		/* i < depth here: at most depth slots are free. */
		wr_fill(qp, &wrs[i], &sq->wrs[i], pi);
		sq->wrid[pi & sq->mask] = wrs[i].wr_id;
		sq->opcode[pi & sq->mask] = qpio_rdma_wr_ops[wrs[i].opcode].wc_opcode;
		pi++;
	}
	if (likely(i != 0)) {
		/* One chained post for the burst: one doorbell. */
		sq->wrs[i - 1].next = NULL;
		ret = ibv_post_send(qp->qp, sq->wrs, &bad);
		qp->post_send_calls++;
		if (unlikely(ret != 0)) {
			/* The provider refused bad and everything after it. */
			i = bad != NULL ? (uint16_t)(bad - sq->wrs) : 0;
			pi = sq->pi + i;
			rc = -ret;
		}
		sq->pi = pi;
	}
out:
	if (err != NULL)
		*err = rc;
	return i;
}

/*
 * qpio_qp_post_send_sge() on an RC or UC QP: one chained ibv_post_send of
 * SENDs with one SGE each (qpio_sge has ibv_sge's layout, passed as is),
 * IBV_SEND_INLINE on those of at most max_inline bytes when the burst asks
 * for inline, the signaled and solicited bits on the last one.
 */
uint16_t
ibvd_post_send_sge(struct qpio_qp *qqp, const struct qpio_sge *sges,
		   uint16_t n, uint64_t wr_id, unsigned int flags, int *err)
{
	struct ibvd_qp *qp = to_iqp(qqp);
	struct ibvd_sq *sq = &qp->sq;
	uint8_t state = __atomic_load_n(&qqp->state, __ATOMIC_ACQUIRE);
	uint32_t pi = sq->pi, room;
	const uint32_t inl_lim = flags & QPIO_SEND_INLINE ? sq->max_inline + 1 : 0;
	const uint8_t wc_op = qpio_rdma_wr_ops[QPIO_WR_SEND].wc_opcode;
	struct ibv_send_wr *bad = NULL;
	uint16_t i = 0, want = n;
	int rc = 0, ret;

	rc = post_send_state_check(qqp, state);
	if (unlikely(rc != 0))
		goto out;
	if (unlikely(n == 0))
		goto out;
	rc = qpio_rdma_sge_flags_check(qqp, flags);
	if (unlikely(rc != 0))
		goto out;
	if (unlikely(sq->max_sge == 0)) {
		IBVD_LOG(DEBUG, "qp 0x%x: num_sge 1 > max_send_sge 0",
			 qqp->qp_num);
		rc = -EINVAL;
		goto out;
	}
	room = sq->depth - (pi - sq->tail);
	if (unlikely(want > room))
		want = (uint16_t)room;
	for (i = 0; i < want; i++) {
		struct ibv_send_wr *w = &sq->wrs[i];
		const uint32_t len = sges[i].length;

		if (unlikely(len >= inl_lim && len > INT32_MAX)) {
			IBVD_LOG(DEBUG, "qp 0x%x: an SGE over 2^31 - 1 bytes "
				 "(split it)", qqp->qp_num);
			rc = -EINVAL;
			break;
		}
		w->wr_id = ibvd_wrid(0, qp->gen, pi);
		w->next = w + 1;
		w->sg_list = (struct ibv_sge *)(uintptr_t)&sges[i];
		w->num_sge = 1;
		w->opcode = IBV_WR_SEND;
		w->send_flags = len < inl_lim ? IBV_SEND_INLINE : 0;
		w->imm_data = 0;
		sq->wrid[pi & sq->mask] = wr_id + i;
		sq->opcode[pi & sq->mask] = wc_op;
		pi++;
	}
	if (likely(i != 0)) {
		sq->wrs[i - 1].next = NULL;
		sq->wrs[i - 1].send_flags |=
			(flags & QPIO_SEND_SIGNALED ? IBV_SEND_SIGNALED : 0) |
			(flags & QPIO_SEND_SOLICITED ? IBV_SEND_SOLICITED : 0);
		ret = ibv_post_send(qp->qp, sq->wrs, &bad);
		qp->post_send_calls++;
		if (unlikely(ret != 0)) {
			i = bad != NULL ? (uint16_t)(bad - sq->wrs) : 0;
			pi = sq->pi + i;
			rc = -ret;
		}
		sq->pi = pi;
	}
	if (rc == 0 && i < n) {
		/* The first SEND that found the SQ full: a rule it breaks is
		 * -EINVAL even into a full SQ, as in ibvd_post_send(). */
		if (unlikely(sges[i].length >= inl_lim &&
			     sges[i].length > INT32_MAX)) {
			IBVD_LOG(DEBUG, "qp 0x%x: an SGE over 2^31 - 1 bytes "
				 "(split it)", qqp->qp_num);
			rc = -EINVAL;
		} else {
			rc = -ENOMEM;
		}
	}
out:
	if (err != NULL)
		*err = rc;
	return i;
}
