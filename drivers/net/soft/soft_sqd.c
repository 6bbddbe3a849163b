/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC send queue states beside RTS (IBA 10.3.1):
 * - SQD, send queue drained: entered from RTS by a modify. No WQE is
 *   started any more; the ones started before complete. The soft NIC
 *   executes a WQE and completes it in one step, so the only WQE that can
 *   be "started and not complete" is an RC WQE an RNR NAK holds (its
 *   retry is pending). Once it has completed, the drain ends: sq_draining
 *   reads 0 and, when the modify asked (EN_SQD_ASYNC_NOTIFY), the device
 *   raises QPIO_EVENT_SQ_DRAINED for the QP, once. WRs posted in SQD wait
 *   in the SQ and start after SQD->RTS. The receive side keeps working.
 * - SQE, send queue error: a UD or UC send WQE completed in error. The
 *   QP's send WRs, those outstanding and those posted later, complete
 *   with WR_FLUSH_ERR; the receive queue keeps working. SQE->RTS resumes.
 *   RC send errors still move the QP to ERR (soft_err.c).
 * The SQ run (soft_req.c) does the per-WQE part, inside the test of the
 * state it made already for ERR; this file holds the transitions.
 */
#include "soft_model.h"

void
soft_qp_sqd_enter(struct soft_qp *qp, bool notify)
{
	qp->sqd_notify = notify;
	soft_sq_drain_begin(&qp->sq_draining);
	/* After the flag: a run that sees SQD also sees the drain to end. */
	soft_qp_state_publish(&qp->base.state, (uint8_t)QPIO_QPS_SQD);
	/* A run now ends the drain when nothing is in progress; a run that
	 * another lcore holds (an RNR resume from a shared send CQ) sees
	 * SQD when it rechecks (soft_sq_run()) and ends it there. */
	soft_sq_run(qp);
}

void
soft_sqd_run_end(struct soft_qp *qp)
{
	uint8_t st = soft_qp_state_read(&qp->base.state);

	/* RTS: the modify to SQD has set the flag and not yet the state
	 * (soft_qp_sqd_enter() runs the SQ after), or SQD->RTS has set the
	 * state and clears the flag itself (soft_qp_sq_resume()). */
	if (st == QPIO_QPS_RTS)
		return;
	if (st == QPIO_QPS_SQD && qp->rnr_deadline != 0)
		return;   /* the WQE started in RTS still waits its retry */
	if (soft_sq_drain_take(&qp->sq_draining) == 0)
		return;
	/* Left SQD before the drain ended (to ERR or RESET): no
	 * SQ_DRAINED. */
	if (st != QPIO_QPS_SQD || !qp->sqd_notify)
		return;
	SOFT_LOG(DEBUG, "qp 0x%x: SQ drained (sq.ci %u)", qp->base.qp_num,
		 qp->sq.ci);
	qpio_rdma_event_raise(qp->sdev->qdev, QPIO_EVENT_SQ_DRAINED,
			      &qp->base, 0);
}

void
soft_qp_sq_resume(struct soft_qp *qp)
{
	soft_sq_drain_clear(&qp->sq_draining);
	/* The WQEs posted in SQD were recorded by their doorbell: run them. */
	soft_sq_run(qp);
}

bool
soft_qp_set_sqe(struct soft_qp *qp)
{
	uint8_t s = soft_qp_state_read(&qp->base.state);

	do {
		if (s != QPIO_QPS_RTS && s != QPIO_QPS_SQD)
			return false;
	} while (!soft_qp_state_move(&qp->base.state, &s,
				     (uint8_t)QPIO_QPS_SQE));
	soft_sq_drain_clear(&qp->sq_draining);
	return true;
}
