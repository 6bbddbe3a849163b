/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libibverbs driver: shared receive queues.
 *
 * lib/rdma does not have SRQ ops yet. These functions are complete and
 * are wired into struct qpio_dev_ops when it gains them. SRQ receives
 * complete out of order (whichever QP takes them), so their wr_ids live
 * in slots taken from a free stack rather than in a ring; the CQ poller
 * returns a slot with ibvd_srq_complete().
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "ibv_private.h"

static void
srq_free(struct ibvd_srq *srq)
{
	rte_free(srq->wrs);
	rte_free(srq->wrid);
	rte_free(srq->free_slots);
	rte_free(srq);
}

struct ibvd_srq *
ibvd_srq_create(struct qpio_pd *qpd, uint32_t max_wr, uint32_t max_sge,
		uint32_t limit)
{
	struct ibv_srq_init_attr init;
	struct ibvd_srq *srq;
	uint32_t i;

	srq = rte_zmalloc("ibvd_srq", sizeof(*srq), RTE_CACHE_LINE_SIZE);
	if (srq == NULL)
		goto nomem;
	srq->max_wr = rte_align32pow2(RTE_MAX(max_wr, 1u));
	srq->max_sge = RTE_MAX(max_sge, 1u);
	srq->wrs = rte_zmalloc("ibvd_srq_wrs", sizeof(*srq->wrs) * srq->max_wr, 0);
	srq->wrid = rte_zmalloc("ibvd_srq_wrid", sizeof(uint64_t) * srq->max_wr, 0);
	srq->free_slots = rte_zmalloc("ibvd_srq_free",
				      sizeof(uint32_t) * srq->max_wr, 0);
	if (srq->wrs == NULL || srq->wrid == NULL || srq->free_slots == NULL)
		goto nomem;
	for (i = 0; i < srq->max_wr; i++)
		srq->free_slots[i] = srq->max_wr - 1 - i;
	srq->nb_free = srq->max_wr;
	memset(&init, 0, sizeof(init));
	init.srq_context = srq;
	init.attr.max_wr = srq->max_wr;
	init.attr.max_sge = srq->max_sge;
	init.attr.srq_limit = limit;
	srq->srq = ibv_create_srq(to_ipd(qpd)->pd, &init);
	if (srq->srq == NULL) {
		rte_errno = errno != 0 ? errno : ENOMEM;
		IBVD_LOG(ERR, "pd %u: ibv_create_srq(%u, %u): %s", qpd->pdn,
			 srq->max_wr, srq->max_sge, strerror(rte_errno));
		srq_free(srq);
		return NULL;
	}
	srq->pd = to_ipd(qpd);
	return srq;
nomem:
	rte_errno = ENOMEM;
	if (srq != NULL)
		srq_free(srq);
	return NULL;
}

int
ibvd_srq_modify(struct ibvd_srq *srq, uint32_t max_wr, uint32_t limit, int mask)
{
	struct ibv_srq_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.max_wr = max_wr;
	a.srq_limit = limit;
	if (mask & IBV_SRQ_MAX_WR) {
		/* The slot table is sized at creation. */
		IBVD_LOG(ERR, "srq: resizing is not supported");
		return -EOPNOTSUPP;
	}
	ret = ibv_modify_srq(srq->srq, &a, mask);
	return -ret;
}

int
ibvd_srq_destroy(struct ibvd_srq *srq)
{
	int ret = ibv_destroy_srq(srq->srq);

	if (ret != 0) {
		IBVD_LOG(ERR, "ibv_destroy_srq: %s", strerror(ret));
		return -ret;
	}
	srq_free(srq);
	return 0;
}

uint16_t
ibvd_srq_post_recv(struct ibvd_srq *srq, const struct qpio_recv_wr *wrs,
		   uint16_t n, int *err)
{
	struct ibv_recv_wr *bad = NULL;
	uint16_t i;
	int rc = 0, ret;

	for (i = 0; i < n; i++) {
		struct ibv_recv_wr *w = &srq->wrs[i];
		uint32_t slot;

		if (unlikely(wrs[i].num_sge > srq->max_sge)) {
			rc = -EINVAL;
			break;
		}
		if (unlikely(srq->nb_free == 0)) {
			rc = -ENOMEM;
			break;
		}
		slot = srq->free_slots[--srq->nb_free];
		srq->wrid[slot] = wrs[i].wr_id;
		/* Generation 0: an SRQ is never reset. */
		w->wr_id = ibvd_wrid(IBVD_WRID_RECV, 0, slot);
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
