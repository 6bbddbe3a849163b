/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC receive path: receive WQEs (arrays of mlx5 data segments).
 */
#include "soft_rwqe.h"

/* A receive is posted in any state but RESET, to a QP without an SRQ:
 * 0, or -EINVAL with the rule logged. */
static inline int
post_recv_state_check(const struct qpio_qp *qqp, uint8_t state)
{
	if (likely(state != QPIO_QPS_RESET && qqp->srq == NULL))
		return 0;
	SOFT_LOG(DEBUG, "qp 0x%x: post recv refused (%s)", qqp->qp_num,
		 qqp->srq != NULL ? "QP uses an SRQ" : "QP in RESET");
	return -EINVAL;
}

/* The RQ doorbell record after the WQEs up to head. Sequentially
 * consistent, with the state read after it: either a concurrent move to
 * ERR flushes these WQEs or this lcore sees ERR and does. */
static inline void
rq_doorbell(struct soft_qp *qp, uint32_t head)
{
	soft_doorbell_record(&qp->rq.head, head);
	qp->rq_doorbells++;
	if (unlikely(soft_qp_state_recheck(&qp->base.state) == QPIO_QPS_ERR))
		soft_rq_flush(qp);
}

uint16_t
soft_post_recv(struct qpio_qp *qqp, const struct qpio_recv_wr *wrs,
	       uint16_t n, int *err)
{
	struct soft_qp *qp = to_sqp(qqp);
	struct soft_rq *rq = &qp->rq;
	uint8_t state = soft_qp_state_read(&qqp->state);
	uint32_t tail = soft_index_read(&rq->tail);
	uint32_t head = rq->head;
	uint16_t i = 0;
	int rc = 0;

	rc = post_recv_state_check(qqp, state);
	if (unlikely(rc != 0))
		goto out;
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
	if (likely(head != rq->head))
		rq_doorbell(qp, head);
out:
	if (err != NULL)
		*err = rc;
	return i;
}

/*
 * Write the receive WQEs of sges[0..fit) from slot *head on (wr_ids
 * wr_id + i), as soft_post_recv() writes one-SGE WRs: one data segment and,
 * when marker (max_sge > 1), the end marker after it; an SGE off the fast
 * case (length 0, over 2^31 - 1, or the reserved lkey) goes through
 * soft_rwqe_check() and soft_rwqe_fill(). Advances *head past the WQEs
 * written. marker is a constant, so the loop has no per-receive test of it.
 * @return how many were written; *rc is -EINVAL when an SGE broke a rule
 *   (it and those after it not written), else untouched.
 */
static __rte_always_inline uint16_t
soft_rwqe_sge_burst(struct qpio_qp *qqp, struct soft_rq *rq,
		    const struct qpio_sge *sges, uint16_t fit, uint64_t wr_id,
		    uint32_t *headp, int *rc, const bool marker)
{
	uint32_t head = *headp;
	uint32_t mask = rq->mask, stride = rq->stride;
	uint8_t *buf = rq->buf;
	uint64_t *wrid = rq->wrid;
	uint16_t i;

	for (i = 0; i < fit; i++) {
		const struct qpio_sge *sg = &sges[i];
		struct mlx5_wqe_data_seg *d;

		/* length in [1, 2^31 - 1] and not the reserved lkey */
		if (unlikely(sg->length - 1u >= (uint32_t)MLX5_INLINE_SEG - 1u ||
			     sg->lkey == MLX5_INVALID_LKEY)) {
			struct qpio_recv_wr wr = {
				.wr_id = wr_id + i, .sg_list = sg, .num_sge = 1,
			};

			*rc = soft_rwqe_check(&wr, "qp", qqp->qp_num);
			if (unlikely(*rc != 0))
				break;
			soft_rwqe_fill(rq, head, &wr);
			head++;
			continue;
		}
		d = (struct mlx5_wqe_data_seg *)
			(buf + (size_t)(head & mask) * stride);
		d[0].byte_count = rte_cpu_to_be_32(sg->length);
		d[0].lkey = rte_cpu_to_be_32(sg->lkey);
		d[0].addr = rte_cpu_to_be_64(sg->addr);
		if (marker)
			d[1].lkey = RTE_BE32(MLX5_INVALID_LKEY);
		wrid[head & mask] = wr_id + i;
		head++;
	}
	*headp = head;
	return i;
}

/*
 * The flat receive burst (qpio_qp_post_recv_sge()): receive i is the
 * one-SGE WR { wr_id + i, &sges[i], 1 } given to soft_post_recv(), with
 * the same checks in the same order (RESET or an SRQ refuse the burst;
 * max_recv_sge 0 refuses its first WR; a full RQ is -ENOMEM before the SGE
 * rules are looked at) and byte-identical WQEs (soft_rwqe_sge_burst()).
 * One doorbell record for the burst, then the same ERR recheck.
 */
uint16_t
soft_post_recv_sge(struct qpio_qp *qqp, const struct qpio_sge *sges,
		   uint16_t n, uint64_t wr_id, int *err)
{
	struct soft_qp *qp = to_sqp(qqp);
	struct soft_rq *rq = &qp->rq;
	uint8_t state = soft_qp_state_read(&qqp->state);
	uint32_t tail = soft_index_read(&rq->tail);
	uint32_t head = rq->head;
	uint16_t i = 0, fit;
	int rc = 0;

	rc = post_recv_state_check(qqp, state);
	if (unlikely(rc != 0))
		goto out;
	if (unlikely(n == 0))
		goto out;
	if (unlikely(rq->max_sge == 0)) {
		SOFT_LOG(DEBUG, "qp 0x%x: num_sge 1 > max_recv_sge 0",
			 qqp->qp_num);
		rc = -EINVAL;
		goto out;
	}
	/* Every WR has one SGE, so only room can stop the burst before its
	 * rules do: post the first fit = min(n, free slots). */
	fit = (uint16_t)RTE_MIN((uint32_t)n, rq->depth - (head - tail));
	if (rq->max_sge > 1)
		i = soft_rwqe_sge_burst(qqp, rq, sges, fit, wr_id, &head, &rc,
					true);
	else
		i = soft_rwqe_sge_burst(qqp, rq, sges, fit, wr_id, &head, &rc,
					false);
	if (i == fit && fit < n)
		rc = -ENOMEM;
	if (likely(head != rq->head))
		rq_doorbell(qp, head);
out:
	if (err != NULL)
		*err = rc;
	return i;
}
