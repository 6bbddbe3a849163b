/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC counters for telemetry (qp_stats_get, cq_stats_get): read
 * from the telemetry thread while lcores use the queues, with relaxed
 * loads of counters the datapath keeps anyway.
 */

#include "soft_private.h"

void
soft_qp_stats_get(const struct qpio_qp *qp, struct qpio_qp_stats *st)
{
	const struct soft_qp *sqp = (const struct soft_qp *)qp;

#define LD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
	st->wqes_posted = LD(sqp->sq.pi);
	st->sq_doorbells = LD(sqp->sq_doorbells);
	st->rq_doorbells = LD(sqp->rq_doorbells);
	st->rnr_naks = LD(sqp->rnr_nak_total);
	st->rnr_exceeded = LD(sqp->rnr_exceeded);
	st->retry_exceeded = LD(sqp->retry_exceeded);
	st->flushed = LD(sqp->flushed);
	st->valid = QPIO_QP_STAT_WQES_POSTED | QPIO_QP_STAT_SQ_DOORBELLS |
		    QPIO_QP_STAT_RQ_DOORBELLS | QPIO_QP_STAT_RNR_NAKS |
		    QPIO_QP_STAT_RNR_EXCEEDED | QPIO_QP_STAT_RETRY_EXCEEDED |
		    QPIO_QP_STAT_FLUSHED;
}

void
soft_cq_stats_get(const struct qpio_cq *cq, struct qpio_cq_stats *st)
{
	const struct soft_cq *scq = (const struct soft_cq *)cq;
	uint32_t pi = LD(scq->pi), ci = LD(scq->ci);

	/* pi counts reservations: a CQE being written is counted. */
	st->occupancy = (uint32_t)(pi - ci);
	st->overflows = LD(scq->overflow_count);
	st->empty_polls = LD(scq->empty_polls);
	st->occupancy_hwm = LD(scq->hwm);
	st->compressed = LD(scq->zip_cqes);
	st->valid = QPIO_CQ_STAT_OCCUPANCY | QPIO_CQ_STAT_OVERFLOWS |
		    QPIO_CQ_STAT_EMPTY_POLLS | QPIO_CQ_STAT_OCCUPANCY_HWM |
		    QPIO_CQ_STAT_COMPRESSED;
#undef LD
}
