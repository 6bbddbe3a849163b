/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef IBVD_RX_H
#define IBVD_RX_H

/*
 * Hot inlines of the completion path: which QP a completion belongs to.
 */
#include "ibv_private.h"

/* QP of this CQ with number qpn, or NULL (destroyed since it posted). */
static inline struct ibvd_qp *
ibvd_cq_qp(struct ibvd_cq *cq, uint32_t qpn)
{
	uint32_t i;

	if (likely(cq->last_qp != NULL && cq->last_qp->base.qp_num == qpn))
		return cq->last_qp;
	for (i = 0; i < cq->nb_qps; i++)
		if (cq->qps[i]->base.qp_num == qpn) {
			cq->last_qp = cq->qps[i];
			return cq->last_qp;
		}
	return NULL;
}

/* Count an error completion of qp by status (telemetry). */
static inline void
ibvd_wc_error_count(struct ibvd_qp *qp, enum qpio_wc_status status)
{
	switch (status) {
	case QPIO_WC_WR_FLUSH_ERR:
		qp->flushed++;
		break;
	case QPIO_WC_RNR_RETRY_EXC_ERR:
		qp->rnr_exceeded++;
		break;
	case QPIO_WC_RETRY_EXC_ERR:
		qp->retry_exceeded++;
		break;
	default:
		break;
	}
}

#endif /* IBVD_RX_H */
