/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libibverbs driver: completion queues and the list of QPs each serves.
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "ibv_rx.h"

struct qpio_cq *
ibvd_cq_create(struct qpio_device *dev, uint32_t cqe, int socket_id)
{
	struct ibvd_dev *idev = to_idev(dev);
	uint32_t depth = rte_align32pow2(RTE_MAX(cqe, 2u));
	struct ibvd_cq *cq;

	cq = rte_zmalloc_socket("ibvd_cq", sizeof(*cq), RTE_CACHE_LINE_SIZE,
				socket_id);
	if (cq == NULL)
		goto nomem;
	cq->qps_room = IBVD_CQ_QPS_INIT;
	cq->qps = rte_zmalloc_socket("ibvd_cq_qps",
				     sizeof(*cq->qps) * cq->qps_room, 0,
				     socket_id);
	if (cq->qps == NULL)
		goto nomem;
	cq->cq = ibv_create_cq(idev->ctx, (int)depth, cq, NULL, 0);
	if (cq->cq == NULL) {
		rte_errno = errno != 0 ? errno : ENOMEM;
		IBVD_LOG(ERR, "%s: ibv_create_cq(%u): %s", dev->name, depth,
			 strerror(rte_errno));
		goto fail;
	}
	cq->idev = idev;
	cq->base.poll = ibvd_cq_poll;
	cq->base.depth = depth;
	cq->base.cqn = idev->next_cqn++;
	return &cq->base;
nomem:
	rte_errno = ENOMEM;
fail:
	if (cq != NULL)
		rte_free(cq->qps);
	rte_free(cq);
	return NULL;
}

int
ibvd_cq_destroy(struct qpio_cq *qcq)
{
	struct ibvd_cq *cq = to_icq(qcq);
	int ret = ibv_destroy_cq(cq->cq);

	if (ret != 0) {
		IBVD_LOG(ERR, "cq %u: ibv_destroy_cq: %s", qcq->cqn,
			 strerror(ret));
		return -ret;
	}
	rte_free(cq->qps);
	rte_free(cq);
	return 0;
}

int
ibvd_cq_attach(struct ibvd_cq *cq, struct ibvd_qp *qp)
{
	if (cq->nb_qps == cq->qps_room) {
		struct ibvd_qp **n = rte_realloc(cq->qps,
						 sizeof(*n) * cq->qps_room * 2, 0);

		if (n == NULL)
			return -ENOMEM;
		cq->qps = n;
		cq->qps_room *= 2;
	}
	cq->qps[cq->nb_qps++] = qp;
	return 0;
}

void
ibvd_cq_detach(struct ibvd_cq *cq, struct ibvd_qp *qp)
{
	uint32_t i;

	for (i = 0; i < cq->nb_qps; i++)
		if (cq->qps[i] == qp) {
			cq->qps[i] = cq->qps[--cq->nb_qps];
			break;
		}
	if (cq->last_qp == qp)
		cq->last_qp = NULL;
}
