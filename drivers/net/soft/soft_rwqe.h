/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SOFT_RWQE_H
#define SOFT_RWQE_H

/*
 * Receive WQEs (arrays of mlx5 data segments), shared by the posters
 * (soft_rx.c, soft_srq.c), the device model and the CQ poller: the WQE
 * slot of a queue position, an SRQ slot given back, and a receive WR
 * checked and written as a WQE.
 */
#include "soft_barrier.h"
#include "soft_private.h"

/* WQE slot of queue position c: c itself for a QP's RQ, the slot the
 * producer put there for an SRQ. The caller read head with
 * soft_doorbell_read(), after the producer stored ring[c] and then head
 * (soft_srq_doorbell_record()). */
static inline uint32_t
soft_rq_wqe_index(const struct soft_rq *rq, uint32_t c)
{
	if (likely(rq->ring == NULL))
		return c;
	return soft_srq_ring_read(&rq->ring[c & rq->mask]);
}

/* Give SRQ slot back (any lcore: the poller of its completion, or the
 * lcore that dropped it). wr_id and WQE reads happen before this. */
static inline void
soft_srq_slot_free(struct soft_srq *srq, uint32_t slot)
{
	uint32_t p = soft_srq_free_claim(&srq->fpi);
	uint32_t i = p & srq->rq.mask;

	srq->fring[i] = slot & srq->rq.mask;
	soft_srq_free_publish(&srq->fseq[i], p + 1);
}

/*
 * Check the SGEs of one receive WR: none over 2^31 - 1 bytes (bit 31
 * marks inline data) and no reserved lkey MLX5_INVALID_LKEY (the end
 * marker of a receive WQE). what/num name the queue in the DEBUG line.
 * @return 0 or -EINVAL.
 */
static inline int
soft_rwqe_check(const struct qpio_recv_wr *wr, const char *what, uint32_t num)
{
	uint32_t j;

	for (j = 0; j < wr->num_sge; j++)
		if (unlikely((wr->sg_list[j].length & MLX5_INLINE_SEG) ||
			     wr->sg_list[j].lkey == MLX5_INVALID_LKEY)) {
			SOFT_LOG(DEBUG, "%s 0x%x: receive SGE %u: length over "
				 "2^31 - 1 or reserved lkey 0x100", what, num, j);
			return -EINVAL;
		}
	return 0;
}

/*
 * Write a checked receive WR as the receive WQE in slot idx of rq (an
 * array of data segments, 0-length SGEs left out, ended by
 * MLX5_INVALID_LKEY when shorter than max_sge), and its wr_id.
 */
static inline void
soft_rwqe_fill(struct soft_rq *rq, uint32_t idx, const struct qpio_recv_wr *wr)
{
	struct mlx5_wqe_data_seg *d = (struct mlx5_wqe_data_seg *)
		(rq->buf + (size_t)(idx & rq->mask) * rq->stride);
	uint32_t j, k = 0;

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
	rq->wrid[idx & rq->mask] = wr->wr_id;
}

#endif /* SOFT_RWQE_H */
