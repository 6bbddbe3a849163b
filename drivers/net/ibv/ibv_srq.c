/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libibverbs driver: shared receive queues.
 *
 * SRQ receives complete out of order (whichever QP takes them), so their
 * wr_ids live in slots taken from a free stack rather than in a ring; the
 * CQ poller returns a slot with ibvd_srq_complete(). A resize
 * (QPIO_SRQ_MAX_WR, ibv_modify_srq with IBV_SRQ_MAX_WR) grows the slot
 * arrays when needed; shrinking takes free slots out of circulation, so
 * max_wr slots (free or in use) always circulate.
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "ibv_private.h"

void
ibvd_srq_bufs_free(struct ibvd_srq *srq)
{
	rte_free(srq->wrs);
	rte_free(srq->wrid);
	rte_free(srq->free_slots);
	rte_free(srq);
}

struct ibvd_srq *
ibvd_srq_bufs_alloc(uint32_t max_wr, uint32_t max_sge)
{
	struct ibvd_srq *srq;
	uint32_t i;

	srq = rte_zmalloc("ibvd_srq", sizeof(*srq), RTE_CACHE_LINE_SIZE);
	if (srq == NULL)
		return NULL;
	srq->max_wr = rte_align32pow2(RTE_MAX(max_wr, 1u));
	srq->max_sge = RTE_MAX(max_sge, 1u);
	srq->wrs = rte_zmalloc("ibvd_srq_wrs", sizeof(*srq->wrs) * srq->max_wr, 0);
	srq->wrid = rte_zmalloc("ibvd_srq_wrid", sizeof(uint64_t) * srq->max_wr, 0);
	srq->free_slots = rte_zmalloc("ibvd_srq_free",
				      sizeof(uint32_t) * srq->max_wr, 0);
	if (srq->wrs == NULL || srq->wrid == NULL || srq->free_slots == NULL) {
		ibvd_srq_bufs_free(srq);
		return NULL;
	}
	for (i = 0; i < srq->max_wr; i++)
		srq->free_slots[i] = srq->max_wr - 1 - i;
	srq->nb_free = srq->max_wr;
	srq->cap = srq->max_wr;
	srq->fresh = srq->max_wr;
	return srq;
}

static uint32_t next_srqn = 1;

struct qpio_srq *
ibvd_srq_create(struct qpio_pd *qpd, struct qpio_srq_attr *attr)
{
	struct ibv_srq_init_attr init;
	struct ibvd_srq *srq;

	srq = ibvd_srq_bufs_alloc(attr->max_wr, attr->max_sge);
	if (srq == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	memset(&init, 0, sizeof(init));
	init.srq_context = srq;
	init.attr.max_wr = srq->max_wr;
	init.attr.max_sge = srq->max_sge;
	srq->srq = ibv_create_srq(to_ipd(qpd)->pd, &init);
	if (srq->srq == NULL) {
		rte_errno = errno != 0 ? errno : ENOMEM;
		IBVD_LOG(ERR, "pd %u: ibv_create_srq(%u, %u): %s", qpd->pdn,
			 srq->max_wr, srq->max_sge, strerror(rte_errno));
		ibvd_srq_bufs_free(srq);
		return NULL;
	}
	srq->pd = to_ipd(qpd);
	srq->wrid_base = IBVD_WRID_RECV;
	srq->base.post_recv = ibvd_srq_post_recv;
	srq->base.srq_num = __atomic_fetch_add(&next_srqn, 1, __ATOMIC_RELAXED);
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	return &srq->base;
}

/* Grow the slot arrays to n entries; the new slots go on the free stack
 * only when the caller puts them in circulation. */
static int
srq_slots_grow(struct ibvd_srq *srq, uint32_t n)
{
	struct ibv_recv_wr *wrs;
	uint64_t *wrid;
	uint32_t *fs;

	wrs = rte_realloc(srq->wrs, sizeof(*wrs) * n, 0);
	if (wrs == NULL)
		return -ENOMEM;
	srq->wrs = wrs;
	wrid = rte_realloc(srq->wrid, sizeof(*wrid) * n, 0);
	if (wrid == NULL)
		return -ENOMEM;
	srq->wrid = wrid;
	fs = rte_realloc(srq->free_slots, sizeof(*fs) * n, 0);
	if (fs == NULL)
		return -ENOMEM;
	srq->free_slots = fs;
	return 0;
}

/* ibv_modify_srq(IBV_SRQ_MAX_WR): the provider resizes its queue (and
 * refuses a size below the receives posted), then qpio's slots follow. */
static int
srq_resize(struct ibvd_srq *srq, uint32_t max_wr)
{
	uint32_t n = rte_align32pow2(max_wr), in_use = srq->max_wr - srq->nb_free;
	struct ibv_srq_attr a;
	int ret;

	if (max_wr < in_use) {
		IBVD_LOG(ERR, "srq %u: max_wr %u refused: %u receives are posted "
			 "or await polling (ibv_modify_srq)", srq->base.srq_num,
			 max_wr, in_use);
		return -EINVAL;
	}
	/* A growth hands out never-used indices (those a shrink took out
	 * of circulation may still be named by posted receives). */
	if (n > srq->max_wr && srq->fresh + (n - srq->max_wr) > srq->cap) {
		ret = srq_slots_grow(srq, srq->fresh + (n - srq->max_wr));
		if (ret < 0)
			return ret;
		srq->cap = srq->fresh + (n - srq->max_wr);
	}
	memset(&a, 0, sizeof(a));
	a.max_wr = n;
	ret = ibv_modify_srq(srq->srq, &a, IBV_SRQ_MAX_WR);
	if (ret != 0) {
		IBVD_LOG(ERR, "srq %u: ibv_modify_srq(max_wr %u): %s%s",
			 srq->base.srq_num, n, strerror(ret),
			 ret == EINVAL || ret == EOPNOTSUPP ? " (the device may "
			 "not resize SRQs, or the size is below the receives "
			 "posted)" : "");
		return ret == ENOSYS ? -EOPNOTSUPP : -ret;
	}
	if (n > srq->max_wr) {
		while (srq->max_wr < n) {
			srq->free_slots[srq->nb_free++] = srq->fresh++;
			srq->max_wr++;
		}
	} else {
		srq->nb_free = n - in_use;
	}
	srq->max_wr = n;
	return 0;
}

int
ibvd_srq_modify(struct qpio_srq *qsrq, const struct qpio_srq_attr *attr,
		int mask)
{
	struct ibvd_srq *srq = to_isrq(qsrq);
	struct ibv_srq_attr a;
	int ret;

	if (mask & QPIO_SRQ_MAX_WR) {
		ret = srq_resize(srq, attr->max_wr);
		if (ret < 0 || !(mask & QPIO_SRQ_LIMIT))
			return ret;
	}
	memset(&a, 0, sizeof(a));
	a.srq_limit = attr->srq_limit;
	/* IBV_SRQ_LIMIT has the value of QPIO_SRQ_LIMIT. */
	ret = ibv_modify_srq(srq->srq, &a, IBV_SRQ_LIMIT);
	if (ret != 0) {
		IBVD_LOG(ERR, "srq %u: ibv_modify_srq(limit %u): %s",
			 qsrq->srq_num, attr->srq_limit, strerror(ret));
		return -ret;
	}
	return 0;
}

int
ibvd_srq_query(struct qpio_srq *qsrq, struct qpio_srq_attr *attr)
{
	struct ibvd_srq *srq = to_isrq(qsrq);
	struct ibv_srq_attr a;
	int ret;

	ret = ibv_query_srq(srq->srq, &a);
	if (ret != 0)
		return -ret;
	/* The sizes qpio enforces; the provider may have granted more. */
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = a.srq_limit;
	return 0;
}

int
ibvd_srq_destroy(struct qpio_srq *qsrq)
{
	struct ibvd_srq *srq = to_isrq(qsrq);
	int ret = ibv_destroy_srq(srq->srq);

	if (ret != 0) {
		IBVD_LOG(ERR, "srq %u: ibv_destroy_srq: %s", qsrq->srq_num,
			 strerror(ret));
		return -ret;
	}
	if (srq->xrc_cq != NULL)
		ibvd_srq_xrc_unlink(srq);
	ibvd_srq_bufs_free(srq);
	return 0;
}

uint16_t
ibvd_srq_post_recv(struct qpio_srq *qsrq, const struct qpio_recv_wr *wrs,
		   uint16_t n, int *err)
{
	struct ibvd_srq *srq = to_isrq(qsrq);
	struct ibv_recv_wr *bad = NULL;
	uint16_t i;
	int rc = 0, ret;

	for (i = 0; i < n; i++) {
		struct ibv_recv_wr *w = &srq->wrs[i];
		uint32_t slot;

		uint32_t j;

		if (unlikely(wrs[i].num_sge > srq->max_sge)) {
			rc = -EINVAL;
			break;
		}
		/* Same rule as a QP's receives: 31 bits of length per SGE. */
		for (j = 0; j < wrs[i].num_sge; j++)
			if (unlikely(wrs[i].sg_list[j].length > INT32_MAX))
				break;
		if (unlikely(j != wrs[i].num_sge)) {
			rc = -EINVAL;
			break;
		}
		if (unlikely(srq->nb_free == 0)) {
			rc = -ENOMEM;
			break;
		}
		slot = srq->free_slots[--srq->nb_free];
		srq->wrid[slot] = wrs[i].wr_id;
		/* Generation 0: an SRQ is never reset (an XRC SRQ's base
		 * carries its index in its CQ instead). */
		w->wr_id = srq->wrid_base | slot;
		w->next = w + 1;
		w->sg_list = (struct ibv_sge *)(uintptr_t)wrs[i].sg_list;
		w->num_sge = (int)wrs[i].num_sge;
	}
	if (likely(i != 0)) {
		uint16_t posted;

		srq->wrs[i - 1].next = NULL;
		ret = ibv_post_srq_recv(srq->srq, srq->wrs, &bad);
		if (unlikely(ret != 0)) {
			posted = bad != NULL ? (uint16_t)(bad - srq->wrs) : 0;
			/* Give back the slots of the refused WRs. */
			while (i > posted) {
				i--;
				srq->free_slots[srq->nb_free++] =
					(uint32_t)srq->wrs[i].wr_id;
			}
			rc = -ret;
		}
	}
	if (err != NULL)
		*err = rc;
	return i;
}
