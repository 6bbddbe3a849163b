/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libibverbs driver send path: a burst becomes one chained ibv_post_send,
 * so the provider writes every WQE and rings the doorbell once.
 */
#include <inttypes.h>

#include <rte_byteorder.h>

#include "ibv_private.h"

#define T_RC (1u << QPIO_QPT_RC)
#define T_UC (1u << QPIO_QPT_UC)
#define T_UD (1u << QPIO_QPT_UD)

/* What each opcode needs: QP types allowed, inline allowed, and the
 * completion opcode recorded for error completions. */
static const struct {
	uint8_t types;
	uint8_t no_inline;
	uint8_t wc_opcode;
} op_table[] = {
	[QPIO_WR_RDMA_WRITE] = { T_RC | T_UC, 0, QPIO_WC_RDMA_WRITE },
	[QPIO_WR_RDMA_WRITE_WITH_IMM] = { T_RC | T_UC, 0, QPIO_WC_RDMA_WRITE },
	[QPIO_WR_SEND] = { T_RC | T_UC | T_UD, 0, QPIO_WC_SEND },
	[QPIO_WR_SEND_WITH_IMM] = { T_RC | T_UC | T_UD, 0, QPIO_WC_SEND },
	[QPIO_WR_RDMA_READ] = { T_RC, 1, QPIO_WC_RDMA_READ },
	[QPIO_WR_ATOMIC_CMP_AND_SWP] = { T_RC, 1, QPIO_WC_COMP_SWAP },
	[QPIO_WR_ATOMIC_FETCH_AND_ADD] = { T_RC, 1, QPIO_WC_FETCH_ADD },
};

/* Validate one WR against lib/rdma's rules; nothing is posted for a
 * refused one. */
static inline int
wr_check(const struct ibvd_qp *qp, const struct qpio_send_wr *wr)
{
	uint32_t i;

	if (unlikely((unsigned int)wr->opcode >= RTE_DIM(op_table) ||
		     !(op_table[wr->opcode].types & (1u << qp->base.qp_type))))
		goto bad_opcode;
	if (unlikely(wr->num_sge > qp->sq.max_sge)) {
		IBVD_LOG(DEBUG, "qp 0x%x: num_sge %u > max_send_sge %u",
			 qp->base.qp_num, wr->num_sge, qp->sq.max_sge);
		return -EINVAL;
	}
	if (wr->send_flags & QPIO_SEND_INLINE) {
		uint64_t sum = 0;

		if (unlikely(op_table[wr->opcode].no_inline))
			goto bad_opcode;
		/* 64-bit sum: 32-bit lengths must not wrap past the limit. */
		for (i = 0; i < wr->num_sge; i++)
			sum += wr->sg_list[i].length;
		if (unlikely(sum > qp->sq.max_inline)) {
			IBVD_LOG(DEBUG, "qp 0x%x: inline %" PRIu64 " bytes > max_inline_data %u",
				 qp->base.qp_num, sum, qp->sq.max_inline);
			return -EINVAL;
		}
	} else {
		/* Same limit as the soft NIC: 31 bits of length per SGE. */
		for (i = 0; i < wr->num_sge; i++)
			if (unlikely(wr->sg_list[i].length > INT32_MAX)) {
				IBVD_LOG(DEBUG, "qp 0x%x: SGE %u length 0x%x over 2^31 - 1",
					 qp->base.qp_num, i, wr->sg_list[i].length);
				return -EINVAL;
			}
	}
	/* Same rule as the soft NIC: READ and atomics need outstanding
	 * requests allowed (max_rd_atomic, as set at RTR->RTS). */
	if (unlikely(op_table[wr->opcode].no_inline && qp->max_rd_atomic == 0)) {
		IBVD_LOG(DEBUG, "qp 0x%x: READ or atomic with max_rd_atomic 0",
			 qp->base.qp_num);
		return -EINVAL;
	}
	/* Same rule as the soft NIC: an atomic has one 8-byte SGE (rxe
	 * alone would take two 4-byte ones). */
	if (unlikely((wr->opcode == QPIO_WR_ATOMIC_CMP_AND_SWP ||
		      wr->opcode == QPIO_WR_ATOMIC_FETCH_AND_ADD) &&
		     (wr->num_sge != 1 || wr->sg_list[0].length != 8))) {
		IBVD_LOG(DEBUG, "qp 0x%x: an atomic needs one SGE of 8 bytes",
			 qp->base.qp_num);
		return -EINVAL;
	}
	if (unlikely(qp->base.qp_type == QPIO_QPT_UD && wr->wr.ud.ah == NULL)) {
		IBVD_LOG(DEBUG, "qp 0x%x: UD send without an address handle",
			 qp->base.qp_num);
		return -EINVAL;
	}
	if (unlikely(qp->base.qp_type == QPIO_QPT_UD &&
		     wr->wr.ud.remote_qpn > 0xffffffu)) {
		IBVD_LOG(DEBUG, "qp 0x%x: remote_qpn 0x%x over 24 bits",
			 qp->base.qp_num, wr->wr.ud.remote_qpn);
		return -EINVAL;
	}
	if (unlikely(qp->base.qp_type == QPIO_QPT_UD &&
		     ((const struct qpio_ah *)wr->wr.ud.ah)->pd != qp->base.pd)) {
		IBVD_LOG(DEBUG, "qp 0x%x: address handle of another PD",
			 qp->base.qp_num);
		return -EINVAL;
	}
	return 0;
bad_opcode:
	IBVD_LOG(DEBUG, "qp 0x%x: opcode %d not valid here (QP type %u, flags 0x%x)",
		 qp->base.qp_num, (int)wr->opcode, qp->base.qp_type,
		 wr->send_flags);
	return -EINVAL;
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

uint16_t
ibvd_post_send(struct qpio_qp *qqp, const struct qpio_send_wr *wrs,
	       uint16_t n, int *err)
{
	struct ibvd_qp *qp = to_iqp(qqp);
	struct ibvd_sq *sq = &qp->sq;
	uint8_t state = __atomic_load_n(&qqp->state, __ATOMIC_ACQUIRE);
	uint32_t pi = sq->pi;
	struct ibv_send_wr *bad = NULL;
	uint16_t i = 0;
	int rc = 0, ret;

	if (unlikely(state != QPIO_QPS_RTS && state != QPIO_QPS_ERR)) {
		IBVD_LOG(DEBUG, "qp 0x%x: post send in %s (needs RTS)",
			 qqp->qp_num, qpio_qp_state_str(state));
		rc = -EINVAL;
		goto out;
	}
	for (i = 0; i < n; i++) {
		/* A WR that breaks a rule is -EINVAL even into a full SQ. */
		rc = wr_check(qp, &wrs[i]);
		if (unlikely(rc != 0))
			break;
		if (unlikely(pi - sq->tail >= sq->depth)) {
			rc = -ENOMEM;
			break;
		}
		/* i < depth here: at most depth slots are free. */
		wr_fill(qp, &wrs[i], &sq->wrs[i], pi);
		sq->wrid[pi & sq->mask] = wrs[i].wr_id;
		sq->opcode[pi & sq->mask] = op_table[wrs[i].opcode].wc_opcode;
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
