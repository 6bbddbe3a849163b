/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Driver-independent counters (qpio_qp_stats_get, qpio_cq_stats_get),
 * the numbers telemetry shows under /qpio/rdma/qp and /qpio/rdma/cq:
 * posts, doorbells, flushes, empty polls and the CQ occupancy high-water
 * mark, with exact values on every device (the fields a driver cannot
 * count have their valid bit clear).
 */
#include <errno.h>

#include "test_common.h"

TestSuite(stats, .init = qt_eal_init, .fini = qt_eal_fini);

#define QP_ALL_SOFT (QPIO_QP_STAT_WQES_POSTED | QPIO_QP_STAT_SQ_DOORBELLS | \
		     QPIO_QP_STAT_RQ_DOORBELLS | QPIO_QP_STAT_RNR_NAKS | \
		     QPIO_QP_STAT_RNR_EXCEEDED | QPIO_QP_STAT_RETRY_EXCEEDED | \
		     QPIO_QP_STAT_FLUSHED)
#define CQ_ALL_SOFT (QPIO_CQ_STAT_OCCUPANCY | QPIO_CQ_STAT_OVERFLOWS | \
		     QPIO_CQ_STAT_EMPTY_POLLS | QPIO_CQ_STAT_OCCUPANCY_HWM | \
		     QPIO_CQ_STAT_COMPRESSED)

static struct qpio_cq_stats
cq_stats(const struct qpio_cq *cq)
{
	struct qpio_cq_stats st;

	cr_assert_eq(qpio_cq_stats_get(cq, &st), 0);
	return st;
}

static struct qpio_qp_stats
qp_stats(const struct qpio_qp *qp)
{
	struct qpio_qp_stats st;

	cr_assert_eq(qpio_qp_stats_get(qp, &st), 0);
	return st;
}

/* Poll cq with bursts of burst until n completions came (bounded by
 * qt_poll_n's clock through it); *empty counts the polls that found
 * nothing. */
static unsigned int
poll_counting(struct qpio_cq *cq, unsigned int n, uint16_t burst,
	      uint64_t *empty)
{
	struct qpio_wc wc[64];
	unsigned int got = 0;
	uint64_t tries;

	cr_assert_leq(burst, 64);
	for (tries = 0; got < n && tries < 200000000u; tries++) {
		uint16_t k = qpio_cq_poll(cq, wc, burst);

		if (k == 0)
			(*empty)++;
		got += k;
	}
	return got;
}

/* n receives of 64 bytes on e in one burst: one receive doorbell. */
static void
post_recvs(struct qt_end *e, unsigned int n)
{
	struct qpio_sge sge[16];
	struct qpio_recv_wr wr[16];
	unsigned int i;
	int err = 1;

	cr_assert_leq(n, 16);
	for (i = 0; i < n; i++) {
		sge[i] = (struct qpio_sge){ (uintptr_t)e->buf + 4096 + 64 * i,
					    64, qpio_mr_lkey(e->mr) };
		wr[i] = (struct qpio_recv_wr){ .wr_id = 100 + i,
					       .sg_list = &sge[i], .num_sge = 1 };
	}
	cr_assert_eq(qpio_qp_post_recv(e->qp, wr, (uint16_t)n, &err), n);
	cr_assert_eq(err, 0);
}

/* n signaled 8-byte SENDs from e in one burst: one send doorbell. */
static void
post_sends(struct qt_end *e, unsigned int n)
{
	struct qpio_sge sge = { (uintptr_t)e->buf, 8, qpio_mr_lkey(e->mr) };
	struct qpio_send_wr wr[16];
	unsigned int i;
	int err = 1;

	cr_assert_leq(n, 16);
	for (i = 0; i < n; i++)
		wr[i] = qt_send_wr(i, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(e->qp, wr, (uint16_t)n, &err), n);
	cr_assert_eq(err, 0);
}

/* Every poll that returns nothing is counted once, on any driver; the
 * fields each driver fills are the documented ones. */
Test(stats, cq_counts_every_empty_poll)
{
	struct qt_end a, b;
	struct qpio_cq_stats st;
	struct qpio_wc wc[4];
	uint64_t empty = 0;
	int i;

	qt_pair_create(&a, &b, NULL);
	st = cq_stats(b.cq);
	cr_assert_eq(st.valid, qt_dev_is_soft() ? CQ_ALL_SOFT :
		     QPIO_CQ_STAT_EMPTY_POLLS);
	cr_assert_eq(st.empty_polls, 0);
	for (i = 0; i < 5; i++)
		cr_assert_eq(qpio_cq_poll(b.cq, wc, 4), 0);
	cr_assert_eq(cq_stats(b.cq).empty_polls, 5);
	cr_assert_eq(cq_stats(a.cq).empty_polls, 0, "a's CQ was not polled");

	post_recvs(&b, 1);
	post_sends(&a, 1);
	cr_assert_eq(poll_counting(b.cq, 1, 4, &empty), 1);
	cr_assert_eq(cq_stats(b.cq).empty_polls, 5 + empty);
	empty = 0;
	cr_assert_eq(poll_counting(a.cq, 1, 4, &empty), 1);
	cr_assert_eq(cq_stats(a.cq).empty_polls, empty);
	qt_pair_destroy(&a, &b);
}

/* Posts, doorbells and flushes of one QP, and no RNR or retry failure,
 * on any driver. */
Test(stats, qp_counts_posts_doorbells_and_flushes)
{
	struct qt_end a, b;
	struct qpio_qp_attr attr = { .qp_state = QPIO_QPS_ERR };
	struct qpio_qp_stats st;
	uint64_t empty = 0;

	qt_pair_create(&a, &b, NULL);
	st = qp_stats(a.qp);
	cr_assert_eq(st.valid, qt_dev_is_soft() ? QP_ALL_SOFT :
		     QP_ALL_SOFT & ~QPIO_QP_STAT_RNR_NAKS);
	cr_assert_eq(st.wqes_posted, 0);
	cr_assert_eq(st.sq_doorbells, 0);
	cr_assert_eq(st.rq_doorbells, 0);

	post_recvs(&a, 2);
	post_recvs(&b, 4);
	post_sends(&a, 4);
	cr_assert_eq(poll_counting(b.cq, 4, 8, &empty), 4);
	/* on the wire, the ACKs of b's receives leave with b's next
	 * progress step (ack_hold) */
	qt_wire_progress();
	cr_assert_eq(poll_counting(a.cq, 4, 8, &empty), 4);
	cr_assert_eq(qpio_qp_modify(a.qp, &attr, QPIO_QP_STATE), 0);
	cr_assert_eq(poll_counting(a.cq, 2, 8, &empty), 2,
		     "a's two receives flushed");

	st = qp_stats(a.qp);
	cr_assert_eq(st.wqes_posted, 4);
	cr_assert_eq(st.sq_doorbells, 1, "one doorbell for the burst of 4");
	cr_assert_eq(st.rq_doorbells, 1, "one doorbell for the 2 receives");
	cr_assert_eq(st.flushed, 2);
	cr_assert_eq(st.rnr_naks, 0);
	cr_assert_eq(st.rnr_exceeded, 0);
	cr_assert_eq(st.retry_exceeded, 0);
	st = qp_stats(b.qp);
	cr_assert_eq(st.wqes_posted, 0);
	cr_assert_eq(st.sq_doorbells, 0);
	cr_assert_eq(st.rq_doorbells, 1);
	cr_assert_eq(st.flushed, 0);
	qt_pair_destroy(&a, &b);
}

/* rnr with rnr_retry 0: the one RNR_RETRY_EXC_ERR is counted, and the
 * flushed WQE behind it. */
Test(stats, qp_counts_rnr_exceeded)
{
	struct qt_end a, b;
	struct qt_pair_opts o = { .rnr_retry = 0 };
	struct qpio_qp_stats st;
	uint64_t empty = 0;

	qt_pair_create(&a, &b, &o);
	post_sends(&a, 2);
	cr_assert_eq(poll_counting(a.cq, 2, 8, &empty), 2);
	st = qp_stats(a.qp);
	cr_assert_eq(st.rnr_exceeded, 1);
	cr_assert_eq(st.flushed, 1);
	cr_assert_eq(st.retry_exceeded, 0);
	if (qt_dev_is_soft())
		cr_assert_eq(st.rnr_naks, 1, "the first attempt's NAK");
	qt_pair_destroy(&a, &b);
}

/* The high-water mark is what a poll found waiting: a poll that fills
 * its burst counts what it left behind too. */
Test(stats, cq_hwm_counts_what_a_full_poll_left)
{
	struct qt_end a, b;
	struct qpio_cq_stats st;
	struct qpio_wc wc[8];

	qt_require_soft("libibverbs does not show a CQ's occupancy");
	qt_pair_create(&a, &b, NULL);
	post_recvs(&b, 5);
	post_sends(&a, 5);
	/* The soft NIC delivered at the doorbell: 5 waiting on each CQ. */
	st = cq_stats(b.cq);
	cr_assert_eq(st.occupancy, 5);
	cr_assert_eq(st.occupancy_hwm, 0, "nothing polled yet");
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 2), 2);
	st = cq_stats(b.cq);
	cr_assert_eq(st.occupancy_hwm, 5, "the full burst of 2 left 3");
	cr_assert_eq(st.occupancy, 3);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 8), 3);
	cr_assert_eq(cq_stats(b.cq).occupancy_hwm, 5);
	cr_assert_eq(cq_stats(b.cq).occupancy, 0);

	post_recvs(&b, 2);
	post_sends(&a, 2);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 8), 2);
	cr_assert_eq(cq_stats(b.cq).occupancy_hwm, 5, "2 < 5: unchanged");

	/* a's CQ: 7 send completions; a poll that stops on an empty entry
	 * counts what it took. */
	cr_assert_eq(qpio_cq_poll(a.cq, wc, 8), 7);
	st = cq_stats(a.cq);
	cr_assert_eq(st.occupancy_hwm, 7);
	cr_assert_eq(st.empty_polls, 0);
	cr_assert_eq(st.overflows, 0);
	qt_pair_destroy(&a, &b);
}

/* qpio_cq_resize() starts the mark again at the completions it kept. */
Test(stats, cq_hwm_restarts_at_resize)
{
	struct qt_end a, b;
	struct qpio_wc wc[8];

	qt_require_soft("libibverbs does not show a CQ's occupancy");
	qt_pair_create(&a, &b, NULL);
	post_recvs(&b, 6);
	post_sends(&a, 6);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 1), 1);
	cr_assert_eq(cq_stats(b.cq).occupancy_hwm, 6);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 2), 2);
	cr_assert_eq(qpio_cq_resize(b.cq, 16), 16);
	cr_assert_eq(cq_stats(b.cq).occupancy_hwm, 3, "3 kept");
	cr_assert_eq(cq_stats(b.cq).occupancy, 3);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 8), 3);
	cr_assert_eq(cq_stats(b.cq).occupancy_hwm, 3);
	cr_assert_eq(qpio_cq_poll(a.cq, wc, 8), 6);
	qt_pair_destroy(&a, &b);
}

/* Misuse: NULL arguments and handles that are no longer live are refused
 * with -EINVAL, and st is cleared so nothing stale is read. */
Test(stats, refuses_null_and_dead_handles)
{
	struct qt_end a, b;
	struct qpio_qp_stats qs = { .valid = 0xff, .flushed = 9 };
	struct qpio_cq_stats cs = { .valid = 0xff, .empty_polls = 9 };
	struct qpio_cq *cq;

	qt_pair_create(&a, &b, NULL);
	cr_assert_eq(qpio_qp_stats_get(NULL, &qs), -EINVAL);
	cr_assert_eq(qs.valid, 0);
	cr_assert_eq(qs.flushed, 0);
	cr_assert_eq(qpio_cq_stats_get(NULL, &cs), -EINVAL);
	cr_assert_eq(cs.valid, 0);
	cr_assert_eq(cs.empty_polls, 0);
	cr_assert_eq(qpio_qp_stats_get(a.qp, NULL), -EINVAL);
	cr_assert_eq(qpio_cq_stats_get(a.cq, NULL), -EINVAL);

	cq = qpio_cq_create(a.dev, 4, SOCKET_ID_ANY);
	cr_assert_not_null(cq);
	cr_assert_eq(qpio_cq_destroy(cq), 0);
	cs.valid = 0xff;
	cr_assert_eq(qpio_cq_stats_get(cq, &cs), -EINVAL, "destroyed CQ");
	cr_assert_eq(cs.valid, 0);
	qt_pair_destroy(&a, &b);
}
