/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libibverbs driver counters for qpio_qp_stats_get / qpio_cq_stats_get
 * and telemetry: read from any thread while lcores use the queues, with
 * relaxed loads of counters the datapath keeps. libibverbs shows neither
 * a QP's RNR NAKs nor a CQ's occupancy, so those fields are left out;
 * error completions are counted as the poller takes them.
 */
#include "ibv_private.h"

#define LD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

void
ibvd_qp_stats_get(const struct qpio_qp *qqp, struct qpio_qp_stats *st)
{
	const struct ibvd_qp *qp = (const struct ibvd_qp *)qqp;

	st->wqes_posted = LD(qp->sq.pi);
	st->sq_doorbells = LD(qp->post_send_calls);
	st->rq_doorbells = LD(qp->post_recv_calls);
	st->rnr_exceeded = LD(qp->rnr_exceeded);
	st->retry_exceeded = LD(qp->retry_exceeded);
	st->flushed = LD(qp->flushed);
	st->valid = QPIO_QP_STAT_WQES_POSTED | QPIO_QP_STAT_SQ_DOORBELLS |
		    QPIO_QP_STAT_RQ_DOORBELLS | QPIO_QP_STAT_RNR_EXCEEDED |
		    QPIO_QP_STAT_RETRY_EXCEEDED | QPIO_QP_STAT_FLUSHED;
}

void
ibvd_cq_stats_get(const struct qpio_cq *qcq, struct qpio_cq_stats *st)
{
	const struct ibvd_cq *cq = (const struct ibvd_cq *)qcq;

	st->empty_polls = LD(cq->empty_polls);
	st->valid = QPIO_CQ_STAT_EMPTY_POLLS;
}
