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
	uint32_t tail = __atomic_load_n(&rq->tail, __ATOMIC_ACQUIRE);
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
		const struct qpio_recv_wr *wr = &wrs[i];
		struct mlx5_wqe_data_seg *d;
		uint32_t j, k = 0;

		if (unlikely(wr->num_sge > rq->max_sge)) {
			SOFT_LOG(DEBUG, "qp 0x%x: num_sge %u > max_recv_sge %u",
				 qqp->qp_num, wr->num_sge, rq->max_sge);
			rc = -EINVAL;
			break;
		}
		if (unlikely(head - tail >= rq->depth)) {
			rc = -ENOMEM;
			break;
		}
		for (j = 0; j < wr->num_sge; j++)
			if (unlikely((wr->sg_list[j].length & MLX5_INLINE_SEG) ||
				     wr->sg_list[j].lkey == MLX5_INVALID_LKEY))
				break;
		if (unlikely(j != wr->num_sge)) {
			SOFT_LOG(DEBUG, "qp 0x%x: receive SGE %u: length over 2^31 - 1 "
				 "or reserved lkey 0x100", qqp->qp_num, j);
			rc = -EINVAL;
			break;
		}
		d = (struct mlx5_wqe_data_seg *)
			(rq->buf + (size_t)(head & rq->mask) * rq->stride);
		for (j = 0; j < wr->num_sge; j++) {
			if (wr->sg_list[j].length == 0)
				continue;
			d[k].byte_count = rte_cpu_to_be_32(wr->sg_list[j].length);
			d[k].lkey = rte_cpu_to_be_32(wr->sg_list[j].lkey);
			d[k].addr = rte_cpu_to_be_64(wr->sg_list[j].addr);
			k++;
		}
		if (k < rq->max_sge) {
			d[k].byte_count = 0;
			d[k].lkey = rte_cpu_to_be_32(MLX5_INVALID_LKEY);
			d[k].addr = 0;
		}
		rq->wrid[head & rq->mask] = wr->wr_id;
		head++;
	}
	if (likely(head != rq->head)) {
		/* Doorbell record after the WQEs. Sequentially consistent,
		 * with the state read below: either a concurrent move to ERR
		 * flushes these WQEs or this lcore sees ERR and does. */
		__atomic_store_n(&rq->head, head, __ATOMIC_SEQ_CST);
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
