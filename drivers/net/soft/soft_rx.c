/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC receive path: receive WQEs (arrays of mlx5 data segments).
 */
#include "soft_rx.h"

uint16_t
soft_post_recv(struct qpio_qp *qqp, const struct qpio_recv_wr *wrs,
	       uint16_t n, int *err)
{
	struct soft_qp *qp = to_sqp(qqp);
	struct soft_rq *rq = &qp->rq;
	uint8_t state = __atomic_load_n(&qqp->state, __ATOMIC_ACQUIRE);
	uint32_t tail = soft_index_read(&rq->tail);
	uint32_t head = rq->head;
	uint16_t i = 0;
	int rc = 0;

	if (unlikely(state == QPIO_QPS_RESET || qqp->srq != NULL)) {
		SOFT_LOG(DEBUG, "qp 0x%x: post recv refused (%s)", qqp->qp_num,
			 qqp->srq != NULL ? "QP uses an SRQ" : "QP in RESET");
		rc = -EINVAL;
		goto out;
	}
	for (i = 0; i < n; i++) {
		/* Rules first: a WR that breaks one is -EINVAL even into a
		 * full RQ (as qpio_qp_post_send()). */
		if (unlikely(wrs[i].num_sge > rq->max_sge)) {
			SOFT_LOG(DEBUG, "qp 0x%x: num_sge %u > max_recv_sge %u",
				 qqp->qp_num, wrs[i].num_sge, rq->max_sge);
			rc = -EINVAL;
			break;
		}
		if (unlikely(head - tail >= rq->depth)) {
			rc = -ENOMEM;
			break;
		}
		if (likely(wrs[i].num_sge == 1 && wrs[i].sg_list[0].length != 0 &&
			   !(wrs[i].sg_list[0].length & MLX5_INLINE_SEG) &&
			   wrs[i].sg_list[0].lkey != MLX5_INVALID_LKEY)) {
			/* one SGE, the rules met: one data segment */
			const struct qpio_sge *sg = wrs[i].sg_list;
			struct mlx5_wqe_data_seg *d = (struct mlx5_wqe_data_seg *)
				(rq->buf + (size_t)(head & rq->mask) * rq->stride);

			d[0].byte_count = rte_cpu_to_be_32(sg->length);
			d[0].lkey = rte_cpu_to_be_32(sg->lkey);
			d[0].addr = rte_cpu_to_be_64(sg->addr);
			if (rq->max_sge > 1)
				d[1].lkey = RTE_BE32(MLX5_INVALID_LKEY);
			rq->wrid[head & rq->mask] = wrs[i].wr_id;
			head++;
			continue;
		}
		rc = soft_rwqe_check(&wrs[i], "qp", qqp->qp_num);
		if (unlikely(rc != 0))
			break;
		soft_rwqe_fill(rq, head, &wrs[i]);
		head++;
	}
	if (likely(head != rq->head)) {
		/* Doorbell record after the WQEs. Sequentially consistent,
		 * with the state read below: either a concurrent move to ERR
		 * flushes these WQEs or this lcore sees ERR and does. */
		soft_doorbell_record(&rq->head, head);
		qp->rq_doorbells++;
		if (unlikely(__atomic_load_n(&qqp->state, __ATOMIC_SEQ_CST) ==
			     QPIO_QPS_ERR))
			soft_rq_flush(qp);
	}
out:
	if (err != NULL)
		*err = rc;
	return i;
}
