/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The send queue drained (SQD) and send queue error (SQE) states.
 *
 * 1. The rows of the transition table that reach or leave SQD and SQE,
 *    against the Linux kernel's ib_modify_qp_is_ok() table.
 * 2. SQD on the soft NIC (IBA 10.3.1): RTS->SQD stops starting WQEs, the
 *    one started before (an RC WQE an RNR NAK holds) completes, then
 *    SQ_DRAINED is raised once when EN_SQD_ASYNC_NOTIFY asked for it;
 *    WRs posted in SQD start after SQD->RTS; receives keep working;
 *    attributes change in SQD only once drained.
 * 3. SQE: a UD or UC send error moves the QP to SQE (not ERR), the SQ's
 *    WRs flush with WR_FLUSH_ERR, receives keep working, SQE->RTS
 *    resumes; an RC send error still moves the QP to ERR.
 */
#include <string.h>

#include <rte_errno.h>

#include "test_common.h"

TestSuite(sqd, .init = qt_eal_init, .fini = qt_eal_fini);

#define QK 0x11111111u
#define BAD_LKEY 0x00dead00u   /* MR table index 0xdead: no such MR */
/* The status of a send with a bad lkey: LOC_PROT_ERR, LOC_QP_OP_ERR on
 * rxe (doc/guides/nics/ibv.rst). */
#define BAD_LKEY_STATUS (qt_dev_is_rxe() ? QPIO_WC_LOC_QP_OP_ERR : \
			 QPIO_WC_LOC_PROT_ERR)

/* ------------------------------------------------------------------ */
/* Helpers                                                              */
/* ------------------------------------------------------------------ */

static void
expect_ok(enum qpio_qp_type t, enum qpio_qp_state cur, enum qpio_qp_state next,
	  int mask)
{
	const char *why = "(none)";

	cr_assert_eq(qpio_qp_transition_ok(t, cur, next, mask, &why), 1,
		     "%s->%s mask 0x%x refused: %s", qpio_qp_state_str(cur),
		     qpio_qp_state_str(next), mask, why);
}

static void
expect_refused(enum qpio_qp_type t, enum qpio_qp_state cur,
	       enum qpio_qp_state next, int mask, const char *reason)
{
	const char *why = NULL;

	cr_assert_eq(qpio_qp_transition_ok(t, cur, next, mask, &why), 0,
		     "%s->%s mask 0x%x allowed", qpio_qp_state_str(cur),
		     qpio_qp_state_str(next), mask);
	cr_assert_not_null(why);
	cr_assert_str_eq(why, reason);
}

static int
modify_state(struct qpio_qp *qp, enum qpio_qp_state s, int extra,
	     const struct qpio_qp_attr *base)
{
	struct qpio_qp_attr a;

	if (base != NULL)
		a = *base;
	else
		memset(&a, 0, sizeof(a));
	a.qp_state = s;
	return qpio_qp_modify(qp, &a, QPIO_QP_STATE | extra);
}

static int
to_sqd(struct qpio_qp *qp, int notify)
{
	struct qpio_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_SQD;
	a.en_sqd_async_notify = (uint8_t)notify;
	return qpio_qp_modify(qp, &a, QPIO_QP_STATE |
			      (notify ? QPIO_QP_EN_SQD_ASYNC_NOTIFY : 0));
}

static struct qpio_qp_attr
query(struct qpio_qp *qp)
{
	struct qpio_qp_attr a;

	cr_assert_eq(qpio_qp_query(qp, &a, NULL), 0);
	return a;
}

/* Assert the next async event of dev is SQ_DRAINED for qp, then none. */
static void
expect_drained_event(struct qpio_device *dev, struct qpio_qp *qp)
{
	struct qpio_async_event ev;

	memset(&ev, 0, sizeof(ev));
	cr_assert_eq(qpio_rdma_get_async_event(dev, &ev), 0);
	cr_assert_eq(ev.event_type, QPIO_EVENT_SQ_DRAINED);
	cr_assert_eq(ev.element.qp, qp);
	cr_assert_eq(qpio_rdma_get_async_event(dev, &ev), -EAGAIN,
		     "SQ_DRAINED is raised once");
}

static void
expect_no_event(struct qpio_device *dev)
{
	struct qpio_async_event ev;

	cr_assert_eq(qpio_rdma_get_async_event(dev, &ev), -EAGAIN);
}

/* Post n signaled UD sends of 16 bytes, wr_id first.. from e->buf. */
static void
ud_sends(struct qt_end *e, struct qpio_ah *ah, uint32_t qpn, uint64_t first,
	 unsigned int n, uint32_t lkey)
{
	struct qpio_sge sge = { (uintptr_t)e->buf, 16, lkey };
	struct qpio_send_wr wr[8];
	unsigned int i;
	int err = 1;

	cr_assert_leq(n, 8u);
	for (i = 0; i < n; i++)
		wr[i] = qt_ud_wr(first + i, &sge, 1, QPIO_SEND_SIGNALED, ah,
				 qpn, QK);
	cr_assert_eq(qpio_qp_post_send(e->qp, wr, (uint16_t)n, &err), n);
	cr_assert_eq(err, 0);
}

/* Post n receives of 40 + 64 bytes at e->buf + 4096 * (i + 1). */
static void
recvs(struct qt_end *e, uint64_t first, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		qt_post_recv(e, first + i, e->buf + 4096 * (i + 1),
			     QPIO_GRH_LEN + 64);
}

/* ------------------------------------------------------------------ */
/* 1. Table rows                                                        */
/* ------------------------------------------------------------------ */

Test(sqd, table_rts_to_sqd_takes_only_en_sqd_async_notify)
{
	static const enum qpio_qp_type types[] = {
		QPIO_QPT_RC, QPIO_QPT_UC, QPIO_QPT_UD,
	};
	unsigned int t;

	for (t = 0; t < RTE_DIM(types); t++) {
		expect_ok(types[t], QPIO_QPS_RTS, QPIO_QPS_SQD, QPIO_QP_STATE);
		expect_ok(types[t], QPIO_QPS_RTS, QPIO_QPS_SQD,
			  QPIO_QP_STATE | QPIO_QP_EN_SQD_ASYNC_NOTIFY);
		expect_refused(types[t], QPIO_QPS_RTS, QPIO_QPS_SQD,
			       QPIO_QP_STATE | QPIO_QP_QKEY,
			       "RTS->SQD does not allow QKEY");
		expect_refused(types[t], QPIO_QPS_RTS, QPIO_QPS_SQD,
			       QPIO_QP_STATE | QPIO_QP_CUR_STATE,
			       "RTS->SQD does not allow CUR_STATE");
		/* SQD is entered from RTS only */
		expect_refused(types[t], QPIO_QPS_RTR, QPIO_QPS_SQD,
			       QPIO_QP_STATE, "RTR->SQD is not a legal transition");
		expect_refused(types[t], QPIO_QPS_INIT, QPIO_QPS_SQD,
			       QPIO_QP_STATE, "INIT->SQD is not a legal transition");
		expect_refused(types[t], QPIO_QPS_SQE, QPIO_QPS_SQD,
			       QPIO_QP_STATE, "SQE->SQD is not a legal transition");
		/* SQE is entered by the device only */
		expect_refused(types[t], QPIO_QPS_RTS, QPIO_QPS_SQE,
			       QPIO_QP_STATE, "RTS->SQE is not a legal transition");
		expect_refused(types[t], QPIO_QPS_SQD, QPIO_QPS_SQE,
			       QPIO_QP_STATE, "SQD->SQE is not a legal transition");
		/* out of SQD and SQE: to ERR, RESET with STATE alone */
		expect_ok(types[t], QPIO_QPS_SQD, QPIO_QPS_ERR, QPIO_QP_STATE);
		expect_ok(types[t], QPIO_QPS_SQD, QPIO_QPS_RESET, QPIO_QP_STATE);
		expect_ok(types[t], QPIO_QPS_SQE, QPIO_QPS_ERR, QPIO_QP_STATE);
		expect_ok(types[t], QPIO_QPS_SQE, QPIO_QPS_RESET, QPIO_QP_STATE);
	}
}

Test(sqd, table_sqd_to_rts_optional_bits_per_type)
{
	expect_ok(QPIO_QPT_RC, QPIO_QPS_SQD, QPIO_QPS_RTS,
		  QPIO_QP_STATE | QPIO_QP_CUR_STATE | QPIO_QP_ALT_PATH |
		  QPIO_QP_ACCESS_FLAGS | QPIO_QP_MIN_RNR_TIMER |
		  QPIO_QP_PATH_MIG_STATE);
	expect_ok(QPIO_QPT_UC, QPIO_QPS_SQD, QPIO_QPS_RTS,
		  QPIO_QP_STATE | QPIO_QP_CUR_STATE | QPIO_QP_ALT_PATH |
		  QPIO_QP_ACCESS_FLAGS | QPIO_QP_PATH_MIG_STATE);
	expect_ok(QPIO_QPT_UD, QPIO_QPS_SQD, QPIO_QPS_RTS,
		  QPIO_QP_STATE | QPIO_QP_CUR_STATE | QPIO_QP_QKEY);
	expect_refused(QPIO_QPT_UC, QPIO_QPS_SQD, QPIO_QPS_RTS,
		       QPIO_QP_STATE | QPIO_QP_MIN_RNR_TIMER,
		       "SQD->RTS does not allow MIN_RNR_TIMER");
	expect_refused(QPIO_QPT_UD, QPIO_QPS_SQD, QPIO_QPS_RTS,
		       QPIO_QP_STATE | QPIO_QP_PKEY_INDEX,
		       "SQD->RTS does not allow PKEY_INDEX");
	expect_refused(QPIO_QPT_RC, QPIO_QPS_SQD, QPIO_QPS_RTS,
		       QPIO_QP_STATE | QPIO_QP_SQ_PSN,
		       "SQD->RTS does not allow SQ_PSN");
}

Test(sqd, table_sqd_to_sqd_changes_path_attributes)
{
	expect_ok(QPIO_QPT_RC, QPIO_QPS_SQD, QPIO_QPS_SQD,
		  QPIO_QP_STATE | QPIO_QP_PORT | QPIO_QP_AV | QPIO_QP_TIMEOUT |
		  QPIO_QP_RETRY_CNT | QPIO_QP_RNR_RETRY |
		  QPIO_QP_MAX_QP_RD_ATOMIC | QPIO_QP_MAX_DEST_RD_ATOMIC |
		  QPIO_QP_ALT_PATH | QPIO_QP_ACCESS_FLAGS | QPIO_QP_PKEY_INDEX |
		  QPIO_QP_MIN_RNR_TIMER | QPIO_QP_PATH_MIG_STATE);
	/* without STATE: the same-state row */
	expect_ok(QPIO_QPT_RC, QPIO_QPS_SQD, QPIO_QPS_SQD, QPIO_QP_TIMEOUT);
	expect_ok(QPIO_QPT_UC, QPIO_QPS_SQD, QPIO_QPS_SQD,
		  QPIO_QP_STATE | QPIO_QP_AV | QPIO_QP_ALT_PATH |
		  QPIO_QP_ACCESS_FLAGS | QPIO_QP_PKEY_INDEX |
		  QPIO_QP_PATH_MIG_STATE);
	expect_ok(QPIO_QPT_UD, QPIO_QPS_SQD, QPIO_QPS_SQD,
		  QPIO_QP_STATE | QPIO_QP_PKEY_INDEX | QPIO_QP_QKEY);
	expect_refused(QPIO_QPT_UC, QPIO_QPS_SQD, QPIO_QPS_SQD,
		       QPIO_QP_STATE | QPIO_QP_TIMEOUT,
		       "SQD->SQD does not allow TIMEOUT");
	expect_refused(QPIO_QPT_UD, QPIO_QPS_SQD, QPIO_QPS_SQD,
		       QPIO_QP_STATE | QPIO_QP_AV, "SQD->SQD does not allow AV");
	expect_refused(QPIO_QPT_RC, QPIO_QPS_SQD, QPIO_QPS_SQD,
		       QPIO_QP_STATE | QPIO_QP_SQ_PSN,
		       "SQD->SQD does not allow SQ_PSN");
	expect_refused(QPIO_QPT_RC, QPIO_QPS_SQD, QPIO_QPS_SQD,
		       QPIO_QP_STATE | QPIO_QP_CUR_STATE,
		       "SQD->SQD does not allow CUR_STATE");
}

Test(sqd, table_sqe_to_rts_for_ud_and_uc)
{
	expect_ok(QPIO_QPT_UD, QPIO_QPS_SQE, QPIO_QPS_RTS,
		  QPIO_QP_STATE | QPIO_QP_CUR_STATE | QPIO_QP_QKEY);
	expect_ok(QPIO_QPT_UC, QPIO_QPS_SQE, QPIO_QPS_RTS,
		  QPIO_QP_STATE | QPIO_QP_CUR_STATE | QPIO_QP_ACCESS_FLAGS);
	expect_refused(QPIO_QPT_UC, QPIO_QPS_SQE, QPIO_QPS_RTS,
		       QPIO_QP_STATE | QPIO_QP_QKEY,
		       "SQE->RTS does not allow QKEY");
	expect_refused(QPIO_QPT_UD, QPIO_QPS_SQE, QPIO_QPS_RTS,
		       QPIO_QP_STATE | QPIO_QP_ACCESS_FLAGS,
		       "SQE->RTS does not allow ACCESS_FLAGS");
	/* The kernel's row is valid for every type with no optional bit for
	 * RC; an RC QP never is in SQE (its send errors go to ERR). */
	expect_ok(QPIO_QPT_RC, QPIO_QPS_SQE, QPIO_QPS_RTS, QPIO_QP_STATE);
	expect_refused(QPIO_QPT_RC, QPIO_QPS_SQE, QPIO_QPS_RTS,
		       QPIO_QP_STATE | QPIO_QP_CUR_STATE,
		       "SQE->RTS does not allow CUR_STATE");
	/* no same-state row for SQE */
	expect_refused(QPIO_QPT_UD, QPIO_QPS_SQE, QPIO_QPS_SQE, QPIO_QP_QKEY,
		       "SQE->SQE is not a legal transition");
}

/* ------------------------------------------------------------------ */
/* 2. SQD                                                               */
/* ------------------------------------------------------------------ */

/* Nothing outstanding: the drain ends in the modify itself. */
Test(sqd, ud_drain_with_nothing_outstanding_raises_sq_drained_at_once)
{
	struct qt_end a, b;
	struct qpio_qp_attr q;

	qt_require_soft("the soft NIC's drain timing");
	qt_ud_world_create(&a, &b, QK);
	cr_assert_eq(to_sqd(a.qp, 1), 0);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_SQD);
	q = query(a.qp);
	cr_assert_eq(q.qp_state, QPIO_QPS_SQD);
	cr_assert_eq(q.sq_draining, 0);
	cr_assert_eq(q.en_sqd_async_notify, 1);
	expect_drained_event(a.dev, a.qp);
	qt_ud_world_destroy(&a, &b);
}

Test(sqd, without_en_sqd_async_notify_no_event)
{
	struct qt_end a, b;

	qt_require_soft("the soft NIC's drain timing");
	qt_ud_world_create(&a, &b, QK);
	cr_assert_eq(to_sqd(a.qp, 0), 0);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_SQD);
	cr_assert_eq(query(a.qp).sq_draining, 0);
	expect_no_event(a.dev);
	/* EN_SQD_ASYNC_NOTIFY with the value 0 asks for no event either */
	cr_assert_eq(modify_state(a.qp, QPIO_QPS_RTS, 0, NULL), 0);
	{
		struct qpio_qp_attr at;

		memset(&at, 0, sizeof(at));
		at.qp_state = QPIO_QPS_SQD;
		at.en_sqd_async_notify = 0;
		cr_assert_eq(qpio_qp_modify(a.qp, &at, QPIO_QP_STATE |
					    QPIO_QP_EN_SQD_ASYNC_NOTIFY), 0);
	}
	expect_no_event(a.dev);
	qt_ud_world_destroy(&a, &b);
}

/* IBA 10.3.1: in SQD posting is allowed; the WRs start after SQD->RTS. */
Test(sqd, ud_posts_in_sqd_wait_and_run_after_resume)
{
	struct qt_end a, b;
	struct qpio_ah *ah;
	struct qpio_wc wc[4];
	struct qpio_soft_qp_stats st;
	unsigned int i;

	if (qt_dev_is_rxe())
		qt_skip_test("rxe does not run WRs posted in SQD after SQD->RTS "
			     "(none completed within 5 s in the VM; ibv.rst)");
	qt_ud_world_create(&a, &b, QK);
	ah = qt_ah_create(a.pd, b.dev, 0);
	recvs(&b, 100, 3);
	cr_assert_eq(to_sqd(a.qp, 0), 0);
	ud_sends(&a, ah, qpio_qp_num(b.qp), 1, 3, qpio_mr_lkey(a.mr));
	cr_assert_eq(qpio_cq_poll(a.cq, wc, 4), 0, "no WQE starts in SQD");
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 4), 0, "nothing was sent");
	if (qt_dev_is_soft()) {
		st = qt_stats(a.qp);
		cr_assert_eq(st.sq_posted, 3);
		cr_assert_eq(st.sq_completed, 0);
	}
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_SQD);
	cr_assert_eq(modify_state(a.qp, QPIO_QPS_RTS, 0, NULL), 0);
	cr_assert_eq(qt_poll_n(a.cq, wc, 3), 3);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(wc[i].wr_id, 1 + i);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[i].opcode, QPIO_WC_SEND);
	}
	cr_assert_eq(qt_poll_n(b.cq, wc, 3), 3);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(wc[i].wr_id, 100 + i);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[i].byte_len, QPIO_GRH_LEN + 16);
		cr_assert_eq(wc[i].src_qp, qpio_qp_num(a.qp));
	}
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_ud_world_destroy(&a, &b);
}

/* The drain concerns the send queue: a QP in SQD still receives. */
Test(sqd, receives_work_in_sqd)
{
	struct qt_end a, b;
	struct qpio_ah *ah;
	struct qpio_wc wc[2];

	qt_ud_world_create(&a, &b, QK);
	ah = qt_ah_create(b.pd, a.dev, 0);
	recvs(&a, 200, 1);
	cr_assert_eq(to_sqd(a.qp, 0), 0);
	ud_sends(&b, ah, qpio_qp_num(a.qp), 7, 1, qpio_mr_lkey(b.mr));
	cr_assert_eq(qt_poll_n(b.cq, wc, 1), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 200);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[0].opcode, QPIO_WC_RECV);
	cr_assert_eq(wc[0].byte_len, QPIO_GRH_LEN + 16);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_SQD);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_ud_world_destroy(&a, &b);
}

/* SQD->SQD changes the Q_Key (UD row: PKEY_INDEX, QKEY); the sends
 * posted before go out after the resume with the new controlled Q_Key. */
Test(sqd, ud_sqd_to_sqd_changes_qkey)
{
	struct qt_end a, b;
	struct qpio_qp_attr at;

	qt_ud_world_create(&a, &b, QK);
	cr_assert_eq(to_sqd(a.qp, 0), 0);
	memset(&at, 0, sizeof(at));
	at.qp_state = QPIO_QPS_SQD;
	at.qkey = 0x22222222u;
	cr_assert_eq(qpio_qp_modify(a.qp, &at, QPIO_QP_STATE | QPIO_QP_QKEY), 0);
	cr_assert_eq(query(a.qp).qkey, 0x22222222u);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_SQD);
	/* a bit the row does not allow: refused, QP unchanged */
	at.qp_access_flags = QPIO_ACCESS_LOCAL_WRITE;
	cr_assert_eq(qpio_qp_modify(a.qp, &at, QPIO_QP_STATE |
				    QPIO_QP_ACCESS_FLAGS), -EINVAL);
	cr_assert_eq(query(a.qp).qkey, 0x22222222u);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_SQD);
	qt_ud_world_destroy(&a, &b);
}

/* Moving a QP in SQD to ERR flushes the WRs posted in SQD. */
Test(sqd, sqd_to_err_flushes_the_posted_wrs)
{
	struct qt_end a, b;
	struct qpio_ah *ah;
	struct qpio_wc wc[4];

	qt_ud_world_create(&a, &b, QK);
	ah = qt_ah_create(a.pd, b.dev, 0);
	cr_assert_eq(to_sqd(a.qp, 0), 0);
	ud_sends(&a, ah, qpio_qp_num(b.qp), 1, 2, qpio_mr_lkey(a.mr));
	cr_assert_eq(modify_state(a.qp, QPIO_QPS_ERR, 0, NULL), 0);
	cr_assert_eq(qt_poll_n(a.cq, wc, 2), 2);
	cr_assert_eq(wc[0].wr_id, 1);
	cr_assert_eq(wc[0].status, QPIO_WC_WR_FLUSH_ERR);
	cr_assert_eq(wc[1].wr_id, 2);
	cr_assert_eq(wc[1].status, QPIO_WC_WR_FLUSH_ERR);
	cr_assert_eq(qpio_cq_poll(a.cq, wc, 4), 0);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_ud_world_destroy(&a, &b);
}

/* RC: the WQE an RNR NAK holds was started in RTS and completes in SQD;
 * the one behind it does not start; SQ_DRAINED follows the first one's
 * completion; attributes change only once drained. */
Test(sqd, rc_drain_waits_for_the_wqe_in_rnr_retry)
{
	struct qt_end a, b;
	struct qt_pair_opts o = { .rnr_retry = 7 };
	struct qpio_sge sge;
	struct qpio_send_wr wr[2];
	struct qpio_qp_attr at;
	struct qpio_wc wc[4];
	int err;

	qt_require_soft("the soft NIC's RNR retry in SQD");
	qt_pair_create(&a, &b, &o);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 32, qpio_mr_lkey(a.mr) };
	wr[0] = qt_send_wr(1, &sge, 1, QPIO_SEND_SIGNALED);
	wr[1] = qt_send_wr(2, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 2, &err), 2);
	cr_assert_eq(qt_stats(a.qp).rnr_naks >= 1, 1, "b has no receive");
	cr_assert_eq(to_sqd(a.qp, 1), 0);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_SQD);
	cr_assert_eq(query(a.qp).sq_draining, 1);
	expect_no_event(a.dev);
	/* IBA: attributes change in SQD once drained */
	memset(&at, 0, sizeof(at));
	at.qp_state = QPIO_QPS_SQD;
	at.timeout = 18;
	cr_assert_eq(qpio_qp_modify(a.qp, &at, QPIO_QP_STATE | QPIO_QP_TIMEOUT),
		     -EBUSY);
	cr_assert_eq(query(a.qp).timeout, 14, "unchanged");
	/* the receive comes: the WQE in retry completes, the next waits */
	qt_post_recv(&b, 10, b.buf, 64);
	qt_post_recv(&b, 11, b.buf + 64, 64);
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(qpio_cq_poll(a.cq, wc, 4), 0, "WR 2 did not start");
	cr_assert_eq(query(a.qp).sq_draining, 0);
	expect_drained_event(a.dev, a.qp);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 4), 1);
	cr_assert_eq(wc[0].wr_id, 10);
	cr_assert_eq(wc[0].byte_len, 32);
	/* drained: the same modify now succeeds */
	cr_assert_eq(qpio_qp_modify(a.qp, &at, QPIO_QP_STATE | QPIO_QP_TIMEOUT),
		     0);
	cr_assert_eq(query(a.qp).timeout, 18);
	cr_assert_eq(modify_state(a.qp, QPIO_QPS_RTS, 0, NULL), 0);
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 2);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(qt_poll_n(b.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 11);
	expect_no_event(a.dev);
	qt_pair_destroy(&a, &b);
}

/* Leaving SQD before the drain ended raises no SQ_DRAINED. */
Test(sqd, resume_before_drained_raises_no_event)
{
	struct qt_end a, b;
	struct qt_pair_opts o = { .rnr_retry = 7 };
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc[2];
	int err;

	qt_require_soft("the soft NIC's RNR retry in SQD");
	qt_pair_create(&a, &b, &o);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 8, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(1, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(to_sqd(a.qp, 1), 0);
	cr_assert_eq(query(a.qp).sq_draining, 1);
	cr_assert_eq(modify_state(a.qp, QPIO_QPS_RTS, 0, NULL), 0);
	cr_assert_eq(query(a.qp).sq_draining, 0);
	qt_post_recv(&b, 10, b.buf, 64);
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	expect_no_event(a.dev);
	qt_pair_destroy(&a, &b);
}

/* ------------------------------------------------------------------ */
/* 3. SQE                                                               */
/* ------------------------------------------------------------------ */

/* IBA 10.3.1: a UD send error is a send queue error: SQE, the SQ's WRs
 * flush, the RQ works on, SQE->RTS resumes. */
Test(sqd, ud_send_error_moves_to_sqe_and_flushes_only_the_sq)
{
	struct qt_end a, b;
	struct qpio_ah *ab, *ba;
	struct qpio_sge sge[2];
	struct qpio_send_wr wr[3];
	struct qpio_wc wc[4];
	int err;

	qt_ud_world_create(&a, &b, QK);
	ab = qt_ah_create(a.pd, b.dev, 0);
	ba = qt_ah_create(b.pd, a.dev, 0);
	recvs(&b, 100, 2);
	recvs(&a, 300, 1);
	sge[0] = (struct qpio_sge){ (uintptr_t)a.buf, 16, BAD_LKEY };
	sge[1] = (struct qpio_sge){ (uintptr_t)a.buf, 16, qpio_mr_lkey(a.mr) };
	wr[0] = qt_ud_wr(1, &sge[0], 1, QPIO_SEND_SIGNALED, ab,
			 qpio_qp_num(b.qp), QK);
	wr[1] = qt_ud_wr(2, &sge[1], 1, QPIO_SEND_SIGNALED, ab,
			 qpio_qp_num(b.qp), QK);
	wr[2] = qt_ud_wr(3, &sge[1], 1, 0, ab, qpio_qp_num(b.qp), QK);
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 3, &err), 3);
	cr_assert_eq(qt_poll_n(a.cq, wc, 3), 3);
	cr_assert_eq(wc[0].wr_id, 1);
	cr_assert_eq(wc[0].status, BAD_LKEY_STATUS);
	cr_assert_eq(wc[1].wr_id, 2);
	cr_assert_eq(wc[1].status, QPIO_WC_WR_FLUSH_ERR);
	cr_assert_eq(wc[2].wr_id, 3, "unsignaled WRs flush too");
	cr_assert_eq(wc[2].status, QPIO_WC_WR_FLUSH_ERR);
	if (qt_dev_is_rxe()) {
		/* rxe moves a UD QP to ERR, not SQE (ibv.rst): the query
		 * says so and corrects the fast-path copy; its receive
		 * flushes with it. */
		cr_assert_eq(query(a.qp).qp_state, QPIO_QPS_ERR);
		cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
		cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
		cr_assert_eq(wc[0].wr_id, 300);
		cr_assert_eq(wc[0].status, QPIO_WC_WR_FLUSH_ERR);
		cr_assert_eq(qpio_ah_destroy(ab), 0);
		cr_assert_eq(qpio_ah_destroy(ba), 0);
		qt_ud_world_destroy(&a, &b);
		return;
	}
	cr_assert_eq(qpio_cq_poll(a.cq, wc, 4), 0);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_SQE);
	cr_assert_eq(query(a.qp).qp_state, QPIO_QPS_SQE);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 4), 0, "nothing reached b");
	/* posted in SQE: flushed */
	ud_sends(&a, ab, qpio_qp_num(b.qp), 4, 1, qpio_mr_lkey(a.mr));
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 4);
	cr_assert_eq(wc[0].status, QPIO_WC_WR_FLUSH_ERR);
	/* the RQ works in SQE: its receive was not flushed, b's datagram
	 * lands in it */
	ud_sends(&b, ba, qpio_qp_num(a.qp), 50, 1, qpio_mr_lkey(b.mr));
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 300);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[0].opcode, QPIO_WC_RECV);
	cr_assert_eq(qt_poll_n(b.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 50);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_SQE);
	/* recovery: SQE->RTS, then sends work again */
	cr_assert_eq(modify_state(a.qp, QPIO_QPS_RTS, 0, NULL), 0);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RTS);
	ud_sends(&a, ab, qpio_qp_num(b.qp), 5, 1, qpio_mr_lkey(a.mr));
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 5);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(qt_poll_n(b.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 100);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(qpio_ah_destroy(ab), 0);
	cr_assert_eq(qpio_ah_destroy(ba), 0);
	qt_ud_world_destroy(&a, &b);
}

/* UC: the same rule (SQE); the peer is not touched. SQE->RTS takes
 * ACCESS_FLAGS. */
Test(sqd, uc_send_error_moves_to_sqe)
{
	struct qt_end a, b;
	struct qt_pair_opts o = { .type = QPIO_QPT_UC };
	struct qpio_sge bad, good;
	struct qpio_send_wr wr[2];
	struct qpio_qp_attr at;
	struct qpio_wc wc[4];
	int err;

	qt_pair_create(&a, &b, &o);
	qt_post_recv(&b, 10, b.buf, 64);
	bad = (struct qpio_sge){ (uintptr_t)a.buf, 8, BAD_LKEY };
	good = (struct qpio_sge){ (uintptr_t)a.buf, 8, qpio_mr_lkey(a.mr) };
	wr[0] = qt_send_wr(1, &bad, 1, QPIO_SEND_SIGNALED);
	wr[1] = qt_send_wr(2, &good, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 2, &err), 2);
	cr_assert_eq(qt_poll_n(a.cq, wc, 2), 2);
	cr_assert_eq(wc[0].wr_id, 1);
	cr_assert_eq(wc[0].status, BAD_LKEY_STATUS);
	cr_assert_eq(wc[1].wr_id, 2);
	cr_assert_eq(wc[1].status, QPIO_WC_WR_FLUSH_ERR);
	if (qt_dev_is_rxe()) {
		/* rxe moves a UC QP to ERR, not SQE (ibv.rst). */
		cr_assert_eq(query(a.qp).qp_state, QPIO_QPS_ERR);
		cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
		cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RTS);
		qt_pair_destroy(&a, &b);
		return;
	}
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_SQE);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RTS);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 4), 0);
	memset(&at, 0, sizeof(at));
	at.qp_state = QPIO_QPS_RTS;
	at.qp_access_flags = QPIO_ACCESS_LOCAL_WRITE | QPIO_ACCESS_REMOTE_WRITE;
	cr_assert_eq(qpio_qp_modify(a.qp, &at, QPIO_QP_STATE |
				    QPIO_QP_ACCESS_FLAGS), 0);
	cr_assert_eq(query(a.qp).qp_access_flags,
		     QPIO_ACCESS_LOCAL_WRITE | QPIO_ACCESS_REMOTE_WRITE);
	wr[1].wr_id = 3;
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr[1], 1, &err), 1);
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 3);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(qt_poll_n(b.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 10);
	cr_assert_eq(wc[0].byte_len, 8);
	qt_pair_destroy(&a, &b);
}

/* RC send errors still move the QP to ERR, and ERR does not go back to
 * RTS. */
Test(sqd, rc_send_error_still_moves_to_err)
{
	struct qt_end a, b;
	struct qpio_sge bad;
	struct qpio_send_wr wr;
	struct qpio_wc wc[2];
	int err;

	qt_pair_create(&a, &b, NULL);
	bad = (struct qpio_sge){ (uintptr_t)a.buf, 8, BAD_LKEY };
	wr = qt_send_wr(1, &bad, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].status, BAD_LKEY_STATUS);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
	cr_assert_eq(modify_state(a.qp, QPIO_QPS_RTS, 0, NULL), -EINVAL);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
	qt_pair_destroy(&a, &b);
}
