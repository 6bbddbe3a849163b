/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libibverbs driver: protection domains and memory regions.
 */
#include <errno.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "ibv_private.h"

struct qpio_pd *
ibvd_pd_alloc(struct qpio_device *dev)
{
	struct ibvd_dev *idev = to_idev(dev);
	struct ibvd_pd *pd;

	pd = rte_zmalloc("ibvd_pd", sizeof(*pd), 0);
	if (pd == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	pd->pd = ibv_alloc_pd(idev->ctx);
	if (pd->pd == NULL) {
		rte_errno = errno != 0 ? errno : ENOMEM;
		IBVD_LOG(ERR, "%s: ibv_alloc_pd: %s", dev->name,
			 strerror(rte_errno));
		rte_free(pd);
		return NULL;
	}
	pd->base.pdn = idev->next_pdn++;
	return &pd->base;
}

int
ibvd_pd_free(struct qpio_pd *qpd)
{
	struct ibvd_pd *pd = to_ipd(qpd);
	int ret = ibv_dealloc_pd(pd->pd);

	if (ret != 0) {
		IBVD_LOG(ERR, "pd %u: ibv_dealloc_pd: %s", qpd->pdn,
			 strerror(ret));
		return -ret;
	}
	rte_free(pd);
	return 0;
}

struct qpio_mr *
ibvd_mr_reg(struct qpio_pd *qpd, void *addr, size_t length, unsigned int access)
{
	struct ibvd_mr *mr;

	mr = rte_zmalloc("ibvd_mr", sizeof(*mr), 0);
	if (mr == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	/* enum qpio_access_flags has the values of enum ibv_access_flags. */
	mr->mr = ibv_reg_mr(to_ipd(qpd)->pd, addr, length, (int)access);
	if (mr->mr == NULL) {
		rte_errno = errno != 0 ? errno : ENOMEM;
		IBVD_LOG(ERR, "pd %u: ibv_reg_mr(%p, %zu, 0x%x): %s", qpd->pdn,
			 addr, length, access, strerror(rte_errno));
		rte_free(mr);
		return NULL;
	}
	mr->base.lkey = mr->mr->lkey;
	mr->base.rkey = mr->mr->rkey;
	return &mr->base;
}

int
ibvd_mr_dereg(struct qpio_mr *qmr)
{
	struct ibvd_mr *mr = (struct ibvd_mr *)qmr;
	int ret = ibv_dereg_mr(mr->mr);

	if (ret != 0) {
		IBVD_LOG(ERR, "mr 0x%x: ibv_dereg_mr: %s", qmr->lkey,
			 strerror(ret));
		return -ret;
	}
	rte_free(mr);
	return 0;
}
