/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libibverbs driver: address handles for UD work requests. The send path
 * reads a UD WR's wr.ud.ah as a struct ibvd_ah. On RoCE every AH carries
 * a GRH (ibvd_ah_attr_to_ibv() adds it).
 */
#include <errno.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "ibv_private.h"

struct qpio_ah *
ibvd_ah_create(struct qpio_pd *qpd, const struct qpio_ah_attr *attr)
{
	struct ibvd_pd *pd = to_ipd(qpd);
	struct ibv_ah_attr a;
	struct ibvd_ah *ah;
	int ret;

	ret = ibvd_ah_attr_to_ibv(to_idev(qpd->dev), attr, &a, 0);
	if (ret < 0) {
		rte_errno = -ret;
		return NULL;
	}
	ah = rte_zmalloc("ibvd_ah", sizeof(*ah), 0);
	if (ah == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	ah->ah = ibv_create_ah(pd->pd, &a);
	if (ah->ah == NULL) {
		rte_errno = errno != 0 ? errno : ENOMEM;
		IBVD_LOG(ERR, "pd %u: ibv_create_ah: %s", qpd->pdn,
			 strerror(rte_errno));
		rte_free(ah);
		return NULL;
	}
	ah->pd = pd;
	return &ah->base;
}

int
ibvd_ah_destroy(struct qpio_ah *qah)
{
	struct ibvd_ah *ah = (struct ibvd_ah *)qah;
	int ret = ibv_destroy_ah(ah->ah);

	if (ret != 0) {
		IBVD_LOG(ERR, "ibv_destroy_ah: %s", strerror(ret));
		return -ret;
	}
	rte_free(ah);
	return 0;
}
