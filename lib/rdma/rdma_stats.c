/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Driver-independent QP and CQ counters (qpio_qp_stats_get,
 * qpio_cq_stats_get): the handle is checked, then the driver's optional
 * qp_stats_get / cq_stats_get fills what it counts.
 */
#include <errno.h>
#include <string.h>

#include "rdma_driver.h"
#include "rdma_private.h"

int
qpio_qp_stats_get(const struct qpio_qp *qp, struct qpio_qp_stats *st)
{
	if (st == NULL) {
		RDMA_LOG(ERR, "qp stats: st is NULL (give a struct qpio_qp_stats "
			 "to fill)");
		return -EINVAL;
	}
	memset(st, 0, sizeof(*st));
	RDMA_HANDLE_CHECK(qp, RDMA_HANDLE_QP, "qp");
	if (qp->dev->ops->qp_stats_get != NULL)
		qp->dev->ops->qp_stats_get(qp, st);
	return 0;
}

int
qpio_cq_stats_get(const struct qpio_cq *cq, struct qpio_cq_stats *st)
{
	if (st == NULL) {
		RDMA_LOG(ERR, "cq stats: st is NULL (give a struct qpio_cq_stats "
			 "to fill)");
		return -EINVAL;
	}
	memset(st, 0, sizeof(*st));
	RDMA_HANDLE_CHECK(cq, RDMA_HANDLE_CQ, "cq");
	if (cq->dev->ops->cq_stats_get != NULL)
		cq->dev->ops->cq_stats_get(cq, st);
	return 0;
}
