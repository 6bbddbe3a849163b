/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The slow path of the shared send WR check (rdma_wr.h): say which rule a
 * refused WR broke and what the fix is.
 */
#include <errno.h>
#include <inttypes.h>

#include "rdma_private.h"
#include "rdma_wr.h"

int
qpio_rdma_wr_reject(const struct qpio_qp *qp, const struct qpio_send_wr *wr,
		    const struct qpio_rdma_wr_limits *lim,
		    enum qpio_rdma_wr_rule rule)
{
	uint64_t sum = 0;
	uint32_t i;

	switch (rule) {
	case QPIO_RDMA_WR_OPCODE:
		RDMA_LOG(DEBUG, "qp 0x%x: opcode %d not valid for QP type %u "
			 "(READ and atomics: RC, XRC_SEND; WRITE: RC, UC, "
			 "XRC_SEND; SEND: all but XRC_RECV)",
			 qp->qp_num, (int)wr->opcode, qp->qp_type);
		break;
	case QPIO_RDMA_WR_NUM_SGE:
		RDMA_LOG(DEBUG, "qp 0x%x: num_sge %u > max_send_sge %u",
			 qp->qp_num, wr->num_sge, lim->max_sge);
		break;
	case QPIO_RDMA_WR_INLINE_OP:
		RDMA_LOG(DEBUG, "qp 0x%x: QPIO_SEND_INLINE with opcode %d: only "
			 "WRITE and SEND carry inline data", qp->qp_num,
			 (int)wr->opcode);
		break;
	case QPIO_RDMA_WR_INLINE_LEN:
		for (i = 0; i < wr->num_sge; i++)
			sum += wr->sg_list[i].length;
		RDMA_LOG(DEBUG, "qp 0x%x: inline %" PRIu64 " bytes > "
			 "max_inline_data %u (send it from an MR instead)",
			 qp->qp_num, sum, lim->max_inline);
		break;
	case QPIO_RDMA_WR_SGE_LEN:
		RDMA_LOG(DEBUG, "qp 0x%x: an SGE over 2^31 - 1 bytes (split it)",
			 qp->qp_num);
		break;
	case QPIO_RDMA_WR_RD_ATOMIC:
		RDMA_LOG(DEBUG, "qp 0x%x: READ or atomic with max_rd_atomic 0 "
			 "(set it at RTR -> RTS)", qp->qp_num);
		break;
	case QPIO_RDMA_WR_ATOMIC_SGE:
		RDMA_LOG(DEBUG, "qp 0x%x: an atomic needs one SGE of 8 bytes",
			 qp->qp_num);
		break;
	case QPIO_RDMA_WR_UD_AH:
		RDMA_LOG(DEBUG, "qp 0x%x: UD WR needs an AH of the QP's PD",
			 qp->qp_num);
		break;
	case QPIO_RDMA_WR_UD_QPN:
		RDMA_LOG(DEBUG, "qp 0x%x: UD remote_qpn 0x%x over 24 bits",
			 qp->qp_num, wr->wr.ud.remote_qpn);
		break;
	case QPIO_RDMA_WR_XRC_SRQN:
		RDMA_LOG(DEBUG, "qp 0x%x: XRC remote_srqn 0x%x over 24 bits",
			 qp->qp_num, wr->qp_type.xrc.remote_srqn);
		break;
	default:
		break;
	}
	return -EINVAL;
}

int
qpio_rdma_sge_flags_reject(const struct qpio_qp *qp, unsigned int flags)
{
	RDMA_LOG(DEBUG, "qp 0x%x: flat send burst flags 0x%x: only INLINE, "
		 "SIGNALED and SOLICITED (FENCE and the rest: "
		 "qpio_qp_post_send())", qp->qp_num, flags);
	return -EINVAL;
}

uint16_t
qpio_rdma_post_send_sge_refuse(struct qpio_qp *qp,
			       const struct qpio_sge *sges __rte_unused,
			       uint16_t nb_wr, uint64_t wr_id __rte_unused,
			       unsigned int flags __rte_unused, int *err)
{
	if (nb_wr != 0)
		RDMA_LOG(DEBUG, "qp 0x%x: the flat send burst is for RC and UC "
			 "QPs (this one is of type %u: qpio_qp_post_send())",
			 qp->qp_num, qp->qp_type);
	if (err != NULL)
		*err = nb_wr != 0 ? -EINVAL : 0;
	return 0;
}

uint16_t
qpio_rdma_post_recv_sge_refuse(struct qpio_qp *qp,
			       const struct qpio_sge *sges __rte_unused,
			       uint16_t nb_wr, uint64_t wr_id __rte_unused,
			       int *err)
{
	if (nb_wr != 0)
		RDMA_LOG(DEBUG, "qp 0x%x: post recv to an XRC QP (receives go to "
			 "XRC SRQs: qpio_srq_post_recv())", qp->qp_num);
	if (err != NULL)
		*err = nb_wr != 0 ? -EINVAL : 0;
	return 0;
}
