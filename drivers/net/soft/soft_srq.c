/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC shared receive queues: a receive queue (the same WQE format as
 * a QP's RQ) that the QPs attached to it take receives from.
 *
 * Producer: the lcore that posts. For each WR it takes a free WQE slot,
 * writes the WQE there and the slot's index at the next queue position,
 * then publishes the doorbell record head. Consumers: the device model on
 * any lcore, with a CAS on ci, as for an RQ, then the slot that position
 * names. Release: a slot is free again once its completion is polled, on
 * the receive CQ of whichever QP took it, in any order: that lcore puts
 * it on the free ring, which the producer takes slots from.
 */
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "soft_rwqe.h"
#include "qpio_soft.h"

static void
srq_free(struct soft_srq *srq)
{
	soft_obj_free(srq->rq.buf);
	soft_obj_free(srq->rq.wrid);
	soft_obj_free(srq->rq.ring);
	soft_obj_free(srq->fring);
	soft_obj_free(srq->fseq);
	soft_obj_free(srq);
}

struct qpio_srq *
soft_srq_create(struct qpio_pd *pd, struct qpio_srq_attr *attr)
{
	struct soft_dev *sdev = to_sdev(pd->dev);
	struct soft_srq *srq;
	struct soft_rq *rq;

	srq = soft_obj_alloc(sdev, SOFT_OBJ_SRQ, "soft_srq", sizeof(*srq), SOCKET_ID_ANY);
	if (srq == NULL)
		goto nomem;
	rq = &srq->rq;
	rq->depth = rte_align32pow2(attr->max_wr);
	rq->mask = rq->depth - 1;
	rq->max_sge = RTE_MAX(attr->max_sge, 1u);
	rq->stride = rte_align32pow2(rq->max_sge) * SOFT_SEG;
	rq->pdn = pd->pdn;
	rq->buf = soft_obj_alloc(sdev, SOFT_OBJ_BUF, "soft_srq_buf", (size_t)rq->depth * rq->stride, SOCKET_ID_ANY);
	rq->wrid = soft_obj_alloc(sdev, SOFT_OBJ_BUF, "soft_srq_wrid", sizeof(uint64_t) * rq->depth, SOCKET_ID_ANY);
	rq->ring = soft_obj_alloc(sdev, SOFT_OBJ_BUF, "soft_srq_ring", sizeof(uint32_t) * rq->depth, SOCKET_ID_ANY);
	srq->fring = soft_obj_alloc(sdev, SOFT_OBJ_BUF, "soft_srq_fring", sizeof(uint32_t) * rq->depth, SOCKET_ID_ANY);
	srq->fseq = soft_obj_alloc(sdev, SOFT_OBJ_BUF, "soft_srq_fseq", sizeof(uint32_t) * rq->depth, SOCKET_ID_ANY);
	if (rq->buf == NULL || rq->wrid == NULL || rq->ring == NULL ||
	    srq->fring == NULL || srq->fseq == NULL)
		goto nomem;
	srq->sdev = sdev;
	srq->base.post_recv = soft_srq_post_recv;
	soft_dev_lock(sdev);
	srq->base.srq_num = sdev->next_srqn++;
	soft_dev_unlock(sdev);
	attr->max_wr = rq->depth;
	attr->max_sge = rq->max_sge;
	return &srq->base;
nomem:
	if (srq != NULL)
		srq_free(srq);
	rte_errno = ENOMEM;
	return NULL;
}

int
soft_srq_destroy(struct qpio_srq *qsrq)
{
	if (to_ssrq(qsrq)->xrc_dom != NULL)
		soft_srq_xrc_unlink(to_ssrq(qsrq));
	srq_free(to_ssrq(qsrq));
	return 0;
}

/*
 * Resize (ibv_modify_srq, IBV_SRQ_MAX_WR). The caller keeps posters,
 * deliveries and pollers away (qpio_srq_modify() contract), so the
 * indices are stable and every freed slot is published. A slot taken by a
 * QP is named by its CQE until polled, so it cannot move: the resize is
 * refused while any is. The posted receives (queue positions ci..head)
 * are copied, in order, to slots 0..n-1 of the new arrays and keep their
 * positions; the free ring starts empty with slots n..depth-1 fresh.
 */
static int
srq_resize(struct soft_srq *srq, uint32_t max_wr)
{
	struct soft_rq *rq = &srq->rq;
	uint32_t depth = rte_align32pow2(max_wr), mask = depth - 1;
	uint32_t head = soft_doorbell_read(&rq->head);
	uint32_t ci = soft_index_read(&rq->ci);
	uint32_t posted = head - ci, freed, taken, k;
	uint8_t *buf;
	uint64_t *wrid;
	uint32_t *ring, *fring, *fseq;

	freed = soft_srq_free_count(&srq->fpi) - srq->fci;
	taken = srq->fresh - freed - posted;
	if (posted > max_wr) {
		SOFT_LOG(ERR, "srq %u: max_wr %u refused: %u receives are posted "
			 "and max_wr must be at least that (ibv_modify_srq)",
			 srq->base.srq_num, max_wr, posted);
		return -EINVAL;
	}
	if (taken != 0) {
		SOFT_LOG(ERR, "srq %u: resize refused: %u receives taken from "
			 "it have completions not yet polled; poll the receive "
			 "CQs of its QPs first", srq->base.srq_num, taken);
		return -EBUSY;
	}
	buf = soft_obj_alloc(srq->sdev, SOFT_OBJ_BUF, "soft_srq_buf", (size_t)depth * rq->stride, SOCKET_ID_ANY);
	wrid = soft_obj_alloc(srq->sdev, SOFT_OBJ_BUF, "soft_srq_wrid", sizeof(uint64_t) * depth, SOCKET_ID_ANY);
	ring = soft_obj_alloc(srq->sdev, SOFT_OBJ_BUF, "soft_srq_ring", sizeof(uint32_t) * depth, SOCKET_ID_ANY);
	fring = soft_obj_alloc(srq->sdev, SOFT_OBJ_BUF, "soft_srq_fring", sizeof(uint32_t) * depth, SOCKET_ID_ANY);
	fseq = soft_obj_alloc(srq->sdev, SOFT_OBJ_BUF, "soft_srq_fseq", sizeof(uint32_t) * depth, SOCKET_ID_ANY);
	if (buf == NULL || wrid == NULL || ring == NULL || fring == NULL ||
	    fseq == NULL) {
		soft_obj_free(buf);
		soft_obj_free(wrid);
		soft_obj_free(ring);
		soft_obj_free(fring);
		soft_obj_free(fseq);
		return -ENOMEM;
	}
	for (k = 0; k < posted; k++) {
		uint32_t pos = ci + k;
		uint32_t slot = rq->ring[pos & rq->mask] & rq->mask;

		memcpy(buf + (size_t)k * rq->stride,
		       rq->buf + (size_t)slot * rq->stride, rq->stride);
		wrid[k] = rq->wrid[slot];
		ring[pos & mask] = k;
	}
	soft_obj_free(rq->buf);
	soft_obj_free(rq->wrid);
	soft_obj_free(rq->ring);
	soft_obj_free(srq->fring);
	soft_obj_free(srq->fseq);
	rq->buf = buf;
	rq->wrid = wrid;
	rq->ring = ring;
	rq->depth = depth;
	rq->mask = mask;
	srq->fring = fring;
	srq->fseq = fseq;
	srq->fresh = posted;
	srq->fci = 0;
	soft_srq_free_reset(&srq->fpi);
	/* Deliveries read head_cache up to head: still valid positions. */
	return 0;
}

int
soft_srq_modify(struct qpio_srq *qsrq, const struct qpio_srq_attr *attr,
		int mask)
{
	struct soft_srq *srq = to_ssrq(qsrq);

	int ret;

	if (mask & QPIO_SRQ_MAX_WR) {
		ret = srq_resize(srq, attr->max_wr);
		if (ret < 0)
			return ret;
	}
	if (mask & QPIO_SRQ_LIMIT)
		soft_srq_limit_arm(&srq->limit, attr->srq_limit);
	return 0;
}

int
soft_srq_query(struct qpio_srq *qsrq, struct qpio_srq_attr *attr)
{
	struct soft_srq *srq = to_ssrq(qsrq);

	attr->max_wr = srq->rq.depth;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = soft_srq_limit_read(&srq->limit);
	return 0;
}

void
soft_srq_limit_check(struct soft_srq *srq, uint32_t c)
{
	uint32_t lim = soft_srq_limit_peek(&srq->limit);
	uint32_t head;

	if (likely(lim == 0))
		return;
	/* receives still posted once c is taken */
	head = soft_doorbell_read(&srq->rq.head);
	if (head - (c + 1) >= lim)
		return;
	/* One event per arm: the CAS disarms; the loser raises nothing. */
	if (!soft_srq_limit_take(&srq->limit, &lim))
		return;
	__atomic_fetch_add(&srq->limit_events, 1, __ATOMIC_RELAXED);
	qpio_rdma_event_raise(srq->sdev->qdev, QPIO_EVENT_SRQ_LIMIT_REACHED,
			      &srq->base, 0);
}

/* A free WQE slot: a never-used one, else the oldest freed one whose
 * entry is published. Producer only. @return 0 and *slot, or -1. */
static inline int
srq_slot_alloc(struct soft_srq *srq, uint32_t *slot)
{
	uint32_t pos = srq->fci, i;

	if (unlikely(srq->fresh < srq->rq.depth)) {
		*slot = srq->fresh++;
		return 0;
	}
	i = pos & srq->rq.mask;
	if (soft_srq_free_read(&srq->fseq[i]) != pos + 1)
		return -1;
	*slot = srq->fring[i];
	srq->fci = pos + 1;
	return 0;
}

uint16_t
soft_srq_post_recv(struct qpio_srq *qsrq, const struct qpio_recv_wr *wrs,
		   uint16_t n, int *err)
{
	struct soft_srq *srq = to_ssrq(qsrq);
	struct soft_rq *rq = &srq->rq;
	uint32_t head = rq->head;
	uint16_t i;
	int rc = 0;

	for (i = 0; i < n; i++) {
		uint32_t slot;

		if (unlikely(wrs[i].num_sge > rq->max_sge)) {
			SOFT_LOG(DEBUG, "srq %u: num_sge %u > max_sge %u",
				 qsrq->srq_num, wrs[i].num_sge, rq->max_sge);
			rc = -EINVAL;
			break;
		}
		/* Rules first: nothing is taken for a refused WR. */
		if (unlikely(soft_rwqe_check(&wrs[i], "srq", qsrq->srq_num) != 0)) {
			rc = -EINVAL;
			break;
		}
		if (unlikely(srq_slot_alloc(srq, &slot) != 0)) {
			rc = -ENOMEM;
			break;
		}
		soft_rwqe_fill(rq, slot, &wrs[i]);
		rq->ring[head & rq->mask] = slot;
		head++;
	}
	if (likely(head != rq->head))
		/* Doorbell record after the WQEs and ring entries: a consumer
		 * that sees the new head (soft_doorbell_read()) sees them. */
		soft_srq_doorbell_record(&rq->head, head);
	if (err != NULL)
		*err = rc;
	return i;
}

int
qpio_soft_srq_stats(const struct qpio_srq *qsrq, struct qpio_soft_srq_stats *st)
{
	const struct soft_srq *srq = (const struct soft_srq *)qsrq;

	if (qsrq == NULL || st == NULL || !soft_is_dev(qsrq->dev))
		return -EINVAL;
	st->posted = soft_doorbell_read(&srq->rq.head);
	st->consumed = soft_rq_ci_read(&srq->rq.ci);
	st->limit_events = __atomic_load_n(&srq->limit_events, __ATOMIC_RELAXED);
	return 0;
}
