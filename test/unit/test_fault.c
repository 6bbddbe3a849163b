/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC fault injection (qpio_soft_fault_set, the fault_* devargs,
 * qpio_soft_cq_force_overrun) and the completion rules under each fault:
 * lost packets (RC retransmits after the local ACK timeout, then
 * RETRY_EXC_ERR; UC and UD lose the message), RNR storms, late
 * completions, a forced CQ overrun. Every WR completes exactly once and
 * every payload that arrives is exact.
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>

#include "test_common.h"
#include "qpio_cm.h"

TestSuite(fault, .init = qt_eal_init, .fini = qt_eal_fini);

#define MSG_MAX 2048u

static struct qpio_soft_qp_stats
sstats(const struct qpio_qp *qp)
{
	struct qpio_soft_qp_stats st;

	cr_assert_eq(qpio_soft_qp_stats(qp, &st), 0);
	return st;
}

/* A connected pair whose side a sends with the given local ACK timeout
 * and retry count: a is walked again from RESET (b stays connected to
 * a's QPN). */
static void
fault_pair(struct qt_end *a, struct qt_end *b, enum qpio_qp_type type,
	   uint8_t timeout, uint8_t retry_cnt, uint8_t rnr_retry)
{
	struct qt_pair_opts o = { .type = type, .rnr_retry = rnr_retry,
				  .max_send_wr = 256, .max_recv_wr = 256,
				  .cqe = 1024, .buf_len = 512 * 1024 };
	struct qpio_qp_attr reset = { .qp_state = QPIO_QPS_RESET };
	struct qpio_cm_qp_params p;
	struct qpio_cm_peer peer;

	qt_require_soft("fault injection is a soft NIC feature");
	qt_pair_create(a, b, &o);
	cr_assert_eq(qpio_qp_modify(a->qp, &reset, QPIO_QP_STATE), 0);
	qpio_cm_qp_params_init(&p);
	p.timeout = timeout;
	p.retry_cnt = retry_cnt;
	p.rnr_retry = rnr_retry;
	p.min_rnr_timer = 1;
	p.access_flags = QPIO_ACCESS_ALL;
	cr_assert_eq(qpio_cm_qp_describe(b->qp, NULL, &peer), 0);
	cr_assert_eq(qpio_cm_qp_ready(a->qp, &p, &peer), 0);
}

static void
faults(struct qpio_device *dev, uint32_t drop, uint32_t rnr, uint32_t delay,
       uint32_t seed)
{
	struct qpio_soft_fault f = { .drop_ppm = drop, .rnr_ppm = rnr,
				     .delay_us = delay, .seed = seed };

	cr_assert_eq(qpio_soft_fault_set(dev, &f), 0);
}

/* Receive i: MSG_MAX bytes at b->buf + i * MSG_MAX. */
static void
post_recvs(struct qt_end *b, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		qt_post_recv(b, i, b->buf + (size_t)i * MSG_MAX, MSG_MAX);
}

/* SEND i: len(i) bytes of pattern i from a->buf + i * MSG_MAX, signaled. */
static uint32_t
msg_len(unsigned int i)
{
	return 1 + (i * 397u) % MSG_MAX;
}

static void
post_sends(struct qt_end *a, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint8_t *p = a->buf + (size_t)i * MSG_MAX;
		struct qpio_sge sge = { (uintptr_t)p, msg_len(i),
					qpio_mr_lkey(a->mr) };
		struct qpio_send_wr wr = qt_send_wr(i, &sge, 1,
						    QPIO_SEND_SIGNALED);
		int err = 1;

		qt_fill(p, msg_len(i), i);
		cr_assert_eq(qpio_qp_post_send(a->qp, &wr, 1, &err), 1);
		cr_assert_eq(err, 0);
	}
}

/* Poll both CQs until each has n completions (the send CQ's poll is what
 * resumes a waiting SQ); every wr_id in [0, n) seen once on each side,
 * its status in sst / rst (n entries each). */
static void
drain_both(struct qt_end *a, struct qt_end *b, unsigned int n,
	   enum qpio_wc_status *sst, enum qpio_wc_status *rst,
	   unsigned int *nrecv)
{
	unsigned int ns = 0, nr = 0;
	uint64_t end = rte_get_tsc_cycles() + 20 * rte_get_tsc_hz();
	struct qpio_wc wc[32];

	memset(sst, 0xff, n * sizeof(*sst));
	memset(rst, 0xff, n * sizeof(*rst));

	while ((ns < n || (nrecv == NULL && nr < n)) &&
	       rte_get_tsc_cycles() < end) {
		uint16_t k = qpio_cq_poll(a->cq, wc, 32), i;

		for (i = 0; i < k; i++) {
			cr_assert_lt(wc[i].wr_id, n);
			cr_assert_eq(sst[wc[i].wr_id], (enum qpio_wc_status)-1,
				     "send %lu completed twice",
				     (unsigned long)wc[i].wr_id);
			sst[wc[i].wr_id] = wc[i].status;
		}
		ns += k;
		k = qpio_cq_poll(b->cq, wc, 32);
		for (i = 0; i < k; i++) {
			cr_assert_lt(wc[i].wr_id, n);
			cr_assert_eq(rst[wc[i].wr_id], (enum qpio_wc_status)-1,
				     "receive %lu completed twice",
				     (unsigned long)wc[i].wr_id);
			rst[wc[i].wr_id] = wc[i].status;
			if (wc[i].status == QPIO_WC_SUCCESS)
				cr_assert_eq(wc[i].byte_len, msg_len(wc[i].wr_id));
		}
		nr += k;
	}
	cr_assert_eq(ns, n, "send completions: %u of %u", ns, n);
	if (nrecv != NULL)
		*nrecv = nr;
	else
		cr_assert_eq(nr, n, "receive completions: %u of %u", nr, n);
}

/* nr receives at b, ns SENDs from a, then drain_both() for ns. */
static void
exchange(struct qt_end *a, struct qt_end *b, unsigned int nr, unsigned int ns,
	 enum qpio_wc_status *sst, enum qpio_wc_status *rst,
	 unsigned int *nrecv)
{
	post_recvs(b, nr);
	post_sends(a, ns);
	drain_both(a, b, ns, sst, rst, nrecv);
}

/* Every packet lost: the first SEND is sent 1 + retry_cnt times, then
 * fails with RETRY_EXC_ERR; the others flush; the responder never saw a
 * thing (its receive stays posted, it stays in RTS). */
Test(fault, rc_every_packet_lost_retries_then_fails)
{
	struct qt_end a, b;
	enum qpio_wc_status sst[3], rst[3];
	struct qpio_soft_qp_stats st;
	unsigned int nr;

	fault_pair(&a, &b, QPIO_QPT_RC, 1, 3, 7);
	faults(a.dev, 1000000, 0, 0, 1);
	exchange(&a, &b, 1, 3, sst, rst, &nr);
	cr_assert_eq(sst[0], QPIO_WC_RETRY_EXC_ERR);
	cr_assert_eq(sst[1], QPIO_WC_WR_FLUSH_ERR);
	cr_assert_eq(sst[2], QPIO_WC_WR_FLUSH_ERR);
	cr_assert_eq(nr, 0, "nothing arrived");
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RTS);
	st = sstats(a.qp);
	cr_assert_eq(st.fault_drops, 4, "the first try and 3 retries");
	cr_assert_eq(st.transport_retries, 3);
	cr_assert_eq(st.retry_exceeded, 1);
	cr_assert_eq(st.flushed, 2);
	st = sstats(b.qp);
	cr_assert_eq(st.rq_consumed, 0);
	cr_assert_eq(st.rq_posted, 1);
	qt_pair_destroy(&a, &b);
}

/* 30 % of packets lost, 7 retries: every SEND arrives exactly once, in
 * order, byte-exact, and every loss was retried (none exhausted). */
Test(fault, rc_losses_retried_every_message_once_and_exact)
{
	enum { N = 200 };
	struct qt_end a, b;
	enum qpio_wc_status sst[N], rst[N];
	struct qpio_soft_qp_stats st;
	unsigned int i;

	fault_pair(&a, &b, QPIO_QPT_RC, 1, 7, 7);
	faults(a.dev, 300000, 0, 0, 42);
	exchange(&a, &b, N, N, sst, rst, NULL);
	for (i = 0; i < N; i++) {
		cr_assert_eq(sst[i], QPIO_WC_SUCCESS, "send %u: %s", i,
			     qpio_wc_status_str(sst[i]));
		cr_assert_eq(rst[i], QPIO_WC_SUCCESS, "receive %u", i);
		cr_assert(qt_check(b.buf + (size_t)i * MSG_MAX, msg_len(i), i),
			  "payload %u", i);
	}
	st = sstats(a.qp);
	cr_assert_gt(st.fault_drops, 0);
	cr_assert_eq(st.transport_retries, st.fault_drops,
		     "each loss sent again once");
	cr_assert_eq(st.retry_exceeded, 0);
	cr_assert_eq(sstats(b.qp).rq_consumed, N);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RTS);
	qt_pair_destroy(&a, &b);
}

/* The same seed gives the same losses: two runs count the same. */
Test(fault, same_seed_same_losses)
{
	uint64_t drops[2];
	int run;

	for (run = 0; run < 2; run++) {
		enum { N = 64 };
		struct qt_end a, b;
		enum qpio_wc_status sst[N], rst[N];

		fault_pair(&a, &b, QPIO_QPT_RC, 1, 7, 7);
		faults(a.dev, 250000, 0, 0, 1234);
		exchange(&a, &b, N, N, sst, rst, NULL);
		drops[run] = sstats(a.qp).fault_drops;
		qt_pair_destroy(&a, &b);
	}
	cr_assert_gt(drops[0], 0);
	cr_assert_eq(drops[0], drops[1]);
}

/* UC has no retries: each lost SEND completes SUCCESS at the sender and
 * never arrives; the receives stay posted. */
Test(fault, uc_losses_complete_at_the_sender_only)
{
	struct qt_end a, b;
	enum qpio_wc_status sst[4], rst[4];
	unsigned int nr, i;

	fault_pair(&a, &b, QPIO_QPT_UC, 1, 0, 0);
	faults(a.dev, 1000000, 0, 0, 5);
	exchange(&a, &b, 4, 4, sst, rst, &nr);
	for (i = 0; i < 4; i++)
		cr_assert_eq(sst[i], QPIO_WC_SUCCESS);
	cr_assert_eq(nr, 0);
	cr_assert_eq(sstats(a.qp).fault_drops, 4);
	cr_assert_eq(sstats(a.qp).transport_retries, 0);
	cr_assert_eq(sstats(b.qp).rq_consumed, 0);
	qt_pair_destroy(&a, &b);
}

/* UD: a lost datagram completes at the sender and reaches nobody. */
Test(fault, ud_losses_complete_at_the_sender_only)
{
	struct qt_end a, b;
	struct qpio_device *da, *db;
	struct qpio_ah *ah;
	struct qpio_wc wc;
	unsigned int i;

	qt_require_soft("fault injection is a soft NIC feature");
	da = qpio_rdma_dev_create("soft0");
	db = qpio_rdma_dev_create("soft1");
	cr_assert_not_null(da);
	cr_assert_not_null(db);
	qt_ud_end_create(&a, da, 0x11111111, NULL);
	qt_ud_end_create(&b, db, 0x11111111, NULL);
	ah = qt_ah_create(a.pd, db, 0);
	faults(da, 1000000, 0, 0, 5);
	for (i = 0; i < 3; i++) {
		struct qpio_sge sge = { (uintptr_t)a.buf, 100, qpio_mr_lkey(a.mr) };
		struct qpio_send_wr wr = qt_ud_wr(i, &sge, 1, QPIO_SEND_SIGNALED,
						  ah, qpio_qp_num(b.qp),
						  0x11111111);
		int err = 1;

		qt_post_recv(&b, i, b.buf, 1024);
		cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
		cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
		cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc.wr_id, i);
	}
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0);
	cr_assert_eq(sstats(a.qp).fault_drops, 3);
	cr_assert_eq(sstats(b.qp).rq_consumed, 0);
	faults(da, 0, 0, 0, 0);
	{
		struct qpio_sge sge = { (uintptr_t)a.buf, 100, qpio_mr_lkey(a.mr) };
		struct qpio_send_wr wr = qt_ud_wr(9, &sge, 1, QPIO_SEND_SIGNALED,
						  ah, qpio_qp_num(b.qp),
						  0x11111111);
		int err = 1;

		cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
		cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1,
			     "faults cleared: delivered");
		cr_assert_eq(wc.byte_len, QPIO_GRH_LEN + 100);
	}
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_end_destroy(&a);
	qt_end_destroy(&b);
	cr_assert_eq(qpio_rdma_dev_close(da), 0);
	cr_assert_eq(qpio_rdma_dev_close(db), 0);
}

/* RNR storm, rnr_retry 7: half the SENDs meet an RNR NAK (each retried
 * after the responder's min_rnr_timer); all arrive once and exact. */
Test(fault, rnr_storm_every_message_once_and_exact)
{
	enum { N = 100 };
	struct qt_end a, b;
	enum qpio_wc_status sst[N], rst[N];
	struct qpio_soft_qp_stats st;
	unsigned int i;

	fault_pair(&a, &b, QPIO_QPT_RC, 1, 7, 7);
	faults(a.dev, 0, 500000, 0, 7);
	exchange(&a, &b, N, N, sst, rst, NULL);
	for (i = 0; i < N; i++) {
		cr_assert_eq(sst[i], QPIO_WC_SUCCESS, "send %u", i);
		cr_assert_eq(rst[i], QPIO_WC_SUCCESS, "receive %u", i);
		cr_assert(qt_check(b.buf + (size_t)i * MSG_MAX, msg_len(i), i));
	}
	st = sstats(a.qp);
	cr_assert_gt(st.fault_rnr, 0);
	cr_assert_eq(st.rnr_naks, st.fault_rnr, "every NAK was a fault's");
	cr_assert_eq(st.rnr_retry_exceeded, 0);
	qt_pair_destroy(&a, &b);
}

/* RNR storm with rnr_retry 0: the first SEND fails with
 * RNR_RETRY_EXC_ERR though a receive was posted; the rest flush. */
Test(fault, rnr_storm_without_retries_fails_once)
{
	struct qt_end a, b;
	enum qpio_wc_status sst[2], rst[2];
	unsigned int nr;

	fault_pair(&a, &b, QPIO_QPT_RC, 1, 7, 0);
	faults(a.dev, 0, 1000000, 0, 7);
	exchange(&a, &b, 2, 2, sst, rst, &nr);
	cr_assert_eq(sst[0], QPIO_WC_RNR_RETRY_EXC_ERR);
	cr_assert_eq(sst[1], QPIO_WC_WR_FLUSH_ERR);
	cr_assert_eq(nr, 0);
	cr_assert_eq(sstats(a.qp).fault_rnr, 1);
	cr_assert_eq(sstats(a.qp).rnr_naks, 1);
	cr_assert_eq(sstats(b.qp).rq_consumed, 0, "the receive stays posted");
	qt_pair_destroy(&a, &b);
}

/* Late completions: nothing runs at the doorbell; the send CQ's poll
 * starts the WQEs once the delay has passed, all of them at once. */
Test(fault, delayed_doorbell_runs_after_the_delay)
{
	enum { N = 4 };
	struct qt_end a, b;
	enum qpio_wc_status sst[N], rst[N];
	struct qpio_wc wc;
	uint64_t t0;

	fault_pair(&a, &b, QPIO_QPT_RC, 14, 7, 7);
	faults(a.dev, 0, 0, 20000, 1);
	post_recvs(&b, N);
	t0 = rte_get_tsc_cycles();
	post_sends(&a, N);
	cr_assert_eq(qpio_cq_poll(a.cq, &wc, 1), 0, "held at the doorbell");
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0);
	cr_assert_eq(sstats(b.qp).rq_consumed, 0);
	drain_both(&a, &b, N, sst, rst, NULL);
	cr_assert_geq(rte_get_tsc_cycles() - t0, rte_get_tsc_hz() / 50,
		      "not before the 20 ms");
	cr_assert_eq(sstats(a.qp).fault_delays, 1, "one doorbell, one delay");
	/* the next doorbell waits again */
	post_recvs(&b, 1);
	post_sends(&a, 1);
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0);
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(sstats(a.qp).fault_delays, 2);
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	qt_pair_destroy(&a, &b);
}

/* A forced overrun: the CQE in the CQ stays readable, the next
 * completion overflows it (counted once), CQ_ERR is raised once and the
 * QP that uses it goes to ERR with QP_FATAL. */
Test(fault, forced_cq_overrun_follows_the_overflow_rules)
{
	struct qt_end a, b;
	struct qpio_async_event ev;
	struct qpio_wc wc;
	uint64_t lost = 9;

	qt_require_soft("fault injection is a soft NIC feature");
	qt_pair_create(&a, &b, NULL);
	qt_post_recv(&b, 1, b.buf, 64);
	qt_post_recv(&b, 2, b.buf + 64, 64);
	post_sends(&a, 1);
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	cr_assert_eq(qpio_soft_cq_force_overrun(b.cq), 0);
	cr_assert_eq(qpio_soft_cq_overflowed(b.cq), 0, "not before a CQE");
	post_sends(&a, 1);
	cr_assert_eq(qpio_soft_cq_overflowed(b.cq), 1);
	cr_assert_eq(qpio_soft_cq_overflow_count(b.cq, &lost), 0);
	cr_assert_eq(lost, 1);
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 1, "the CQE before stays");
	cr_assert_eq(wc.wr_id, 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_ERR);
	cr_assert_eq(qpio_rdma_get_async_event(b.dev, &ev), 0);
	cr_assert_eq(ev.event_type, QPIO_EVENT_CQ_ERR);
	cr_assert_eq(ev.element.cq, b.cq);
	cr_assert_eq(qpio_rdma_get_async_event(b.dev, &ev), 0);
	cr_assert_eq(ev.event_type, QPIO_EVENT_QP_FATAL);
	cr_assert_eq(ev.element.qp, b.qp);
	cr_assert_eq(qpio_rdma_get_async_event(b.dev, &ev), -EAGAIN);
	cr_assert_eq(qpio_soft_cq_force_overrun(NULL), -EINVAL);
	qt_pair_destroy(&a, &b);
}

/* Devargs set faults at creation; out-of-range values are refused there
 * and by qpio_soft_fault_set(); NULL clears. */
Test(fault, devargs_and_api_set_read_and_refuse)
{
	struct qpio_soft_fault f;
	struct qpio_soft_fault bad = { .rnr_ppm = 1000001 };
	struct qpio_device *dev;

	qt_require_soft("fault injection is a soft NIC feature");
	dev = qpio_rdma_dev_create("soft0,fault_drop_ppm=1000,fault_rnr_ppm=20,"
				   "fault_delay_us=5,fault_seed=9");
	cr_assert_not_null(dev, "%s", rte_strerror(rte_errno));
	cr_assert_eq(qpio_soft_fault_get(dev, &f), 0);
	cr_assert_eq(f.drop_ppm, 1000);
	cr_assert_eq(f.rnr_ppm, 20);
	cr_assert_eq(f.delay_us, 5);
	cr_assert_eq(f.seed, 9);
	cr_assert_eq(qpio_soft_fault_set(dev, &bad), -EINVAL);
	bad = (struct qpio_soft_fault){ .drop_ppm = 1000001 };
	cr_assert_eq(qpio_soft_fault_set(dev, &bad), -EINVAL);
	bad = (struct qpio_soft_fault){ .delay_us = 1000001 };
	cr_assert_eq(qpio_soft_fault_set(dev, &bad), -EINVAL);
	cr_assert_eq(qpio_soft_fault_get(dev, &f), 0);
	cr_assert_eq(f.drop_ppm, 1000, "a refused set changes nothing");
	cr_assert_eq(qpio_soft_fault_set(dev, NULL), 0);
	cr_assert_eq(qpio_soft_fault_get(dev, &f), 0);
	cr_assert_eq(f.drop_ppm + f.rnr_ppm + f.delay_us + f.seed, 0);
	cr_assert_eq(qpio_soft_fault_set(NULL, NULL), -EINVAL);
	cr_assert_eq(qpio_soft_fault_get(dev, NULL), -EINVAL);
	cr_assert_eq(qpio_rdma_dev_close(dev), 0);

	rte_errno = 0;
	cr_assert_null(qpio_rdma_dev_create("soft0,fault_drop_ppm=1000001"));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_rdma_dev_create("soft0,fault_delay_us=0x10"));
	cr_assert_eq(rte_errno, EINVAL);
}

/* qpio_soft_fault_set() and _get() take open soft devices only: a closed
 * one, or another handle cast to a device, is -EINVAL, never read. */
Test(fault, set_and_get_refuse_what_is_no_open_device)
{
	struct qpio_soft_fault f = { .drop_ppm = 5 };
	struct qpio_device *dead;
	struct qt_end a, b;

	qt_require_soft("fault injection is a soft NIC feature");
	qt_pair_create(&a, &b, NULL);
	cr_assert_eq(qpio_soft_fault_set((struct qpio_device *)a.cq, &f),
		     -EINVAL);
	cr_assert_eq(qpio_soft_fault_set((struct qpio_device *)a.qp, NULL),
		     -EINVAL);
	cr_assert_eq(qpio_soft_fault_get((struct qpio_device *)a.pd, &f),
		     -EINVAL);
	qt_pair_destroy(&a, &b);
	dead = qpio_rdma_dev_create("soft2");
	cr_assert_not_null(dead);
	cr_assert_eq(qpio_rdma_dev_close(dead), 0);
	cr_assert_eq(qpio_soft_fault_set(dead, &f), -EINVAL);
	cr_assert_eq(qpio_soft_fault_get(dead, &f), -EINVAL);
}
