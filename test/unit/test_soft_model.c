/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where the soft NIC's work runs, and what its per-run shortcuts must not
 * change (soft.rst, "Where the work runs"):
 * - every operation executes from the requester's doorbell, so WRITE,
 *   READ and atomics complete with a target that never polls, never arms,
 *   never posts;
 * - the CQ event check is made once per doorbell run: an armed CQ still
 *   gets exactly one event for a burst, and a solicited-only arm only for
 *   a burst that holds a solicited message;
 * - the producers' copy of a CQ's consumer index and the consumer's copy
 *   of an RQ's head never make a CQ look full that is not, nor a receive
 *   look posted that is not, across the 2^32 wrap of the counters.
 */
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include <rte_malloc.h>

#include "test_common.h"

TestSuite(soft_model, .init = qt_eal_init, .fini = qt_eal_fini);

static void
post_n(struct qt_end *e, const struct qpio_send_wr *wr, uint16_t n)
{
	int err = 1;

	cr_assert_eq(qpio_qp_post_send(e->qp, wr, n, &err), n);
	cr_assert_eq(err, 0);
}

/* Events counted on the CQ's fd without blocking (0 when none). */
static uint64_t
events(struct qpio_cq *cq)
{
	struct pollfd pfd = { .fd = qpio_cq_event_fd(cq), .events = POLLIN };
	uint64_t n = 0;

	if (poll(&pfd, 1, 0) != 1)
		return 0;
	cr_assert_eq(read(pfd.fd, &n, sizeof(n)), (ssize_t)sizeof(n));
	return n;
}

/*
 * One burst of WRITE, READ, CMP_AND_SWP and FETCH_AND_ADD, all signaled,
 * against b, which after connecting does nothing at all: all four
 * complete on a's CQ with the right data, and b's CQ stays empty.
 */
Test(soft_model, one_sided_ops_complete_with_a_target_that_never_polls)
{
	struct qt_end a, b;
	struct qpio_sge sw, sr, sc, sf;
	struct qpio_send_wr wr[4];
	struct qpio_wc wc[4];
	uint64_t *cas_t, *fa_t, v;
	unsigned int i;

	qt_require_soft("execution from the requester's doorbell");
	qt_pair_create(&a, &b, NULL);
	qt_fill(a.buf, 256, 1);             /* WRITE source */
	qt_fill(b.buf + 4096, 128, 2);      /* READ source */
	cas_t = (uint64_t *)(void *)(b.buf + 8192);
	fa_t = (uint64_t *)(void *)(b.buf + 8200);
	*cas_t = 7;
	*fa_t = 100;

	sw = (struct qpio_sge){ (uintptr_t)a.buf, 256, qpio_mr_lkey(a.mr) };
	sr = (struct qpio_sge){ (uintptr_t)a.buf + 1024, 128, qpio_mr_lkey(a.mr) };
	sc = (struct qpio_sge){ (uintptr_t)a.buf + 2048, 8, qpio_mr_lkey(a.mr) };
	sf = (struct qpio_sge){ (uintptr_t)a.buf + 2056, 8, qpio_mr_lkey(a.mr) };
	wr[0] = qt_send_wr(10, &sw, 1, QPIO_SEND_SIGNALED);
	wr[0].opcode = QPIO_WR_RDMA_WRITE;
	wr[0].wr.rdma.remote_addr = (uintptr_t)b.buf + 512;
	wr[0].wr.rdma.rkey = qpio_mr_rkey(b.mr);
	wr[1] = qt_send_wr(11, &sr, 1, QPIO_SEND_SIGNALED);
	wr[1].opcode = QPIO_WR_RDMA_READ;
	wr[1].wr.rdma.remote_addr = (uintptr_t)b.buf + 4096;
	wr[1].wr.rdma.rkey = qpio_mr_rkey(b.mr);
	wr[2] = qt_send_wr(12, &sc, 1, QPIO_SEND_SIGNALED);
	wr[2].opcode = QPIO_WR_ATOMIC_CMP_AND_SWP;
	wr[2].wr.atomic.remote_addr = (uintptr_t)cas_t;
	wr[2].wr.atomic.rkey = qpio_mr_rkey(b.mr);
	wr[2].wr.atomic.compare_add = 7;
	wr[2].wr.atomic.swap = 70;
	wr[3] = qt_send_wr(13, &sf, 1, QPIO_SEND_SIGNALED);
	wr[3].opcode = QPIO_WR_ATOMIC_FETCH_AND_ADD;
	wr[3].wr.atomic.remote_addr = (uintptr_t)fa_t;
	wr[3].wr.atomic.rkey = qpio_mr_rkey(b.mr);
	wr[3].wr.atomic.compare_add = 5;
	post_n(&a, wr, 4);

	/* complete now, from the doorbell: one poll, no waiting */
	cr_assert_eq(qpio_cq_poll(a.cq, wc, 4), 4);
	for (i = 0; i < 4; i++) {
		cr_assert_eq(wc[i].wr_id, 10 + i);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
	}
	cr_assert_eq(wc[0].opcode, QPIO_WC_RDMA_WRITE);
	cr_assert_eq(wc[0].byte_len, 256);
	cr_assert_eq(wc[1].opcode, QPIO_WC_RDMA_READ);
	cr_assert_eq(wc[1].byte_len, 128);
	cr_assert_eq(wc[2].opcode, QPIO_WC_COMP_SWAP);
	cr_assert_eq(wc[3].opcode, QPIO_WC_FETCH_ADD);
	cr_assert_eq(qt_check(b.buf + 512, 256, 1), 1, "WRITE data at the target");
	cr_assert_eq(qt_check(a.buf + 1024, 128, 2), 1, "READ data at the requester");
	memcpy(&v, a.buf + 2048, 8);
	cr_assert_eq(v, 7);
	cr_assert_eq(*cas_t, 70);
	memcpy(&v, a.buf + 2056, 8);
	cr_assert_eq(v, 100);
	cr_assert_eq(*fa_t, 105);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 4), 0, "one-sided: no target CQE");
	qt_pair_destroy(&a, &b);
}

/*
 * A SEND completes on both sides from the requester's doorbell: the
 * requester polls its CQ once and never again, the data and the receive
 * completion are already at the responder.
 */
Test(soft_model, send_completes_without_the_requester_polling_again)
{
	struct qt_end a, b;
	struct qpio_sge sge;
	struct qpio_send_wr wr[8];
	struct qpio_wc wc[8];
	unsigned int i;

	qt_require_soft("execution from the requester's doorbell");
	qt_pair_create(&a, &b, NULL);
	for (i = 0; i < 8; i++)
		qt_post_recv(&b, 100 + i, b.buf + 256 * i, 256);
	qt_fill(a.buf, 200, 3);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 200, qpio_mr_lkey(a.mr) };
	for (i = 0; i < 8; i++)
		wr[i] = qt_send_wr(i, &sge, 1, i == 7 ? QPIO_SEND_SIGNALED : 0);
	post_n(&a, wr, 8);
	cr_assert_eq(qpio_cq_poll(a.cq, wc, 8), 1);
	cr_assert_eq(wc[0].wr_id, 7);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	/* the requester stops polling; the responder has everything */
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 8), 8);
	for (i = 0; i < 8; i++) {
		cr_assert_eq(wc[i].wr_id, 100 + i);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[i].opcode, QPIO_WC_RECV);
		cr_assert_eq(wc[i].byte_len, 200);
		cr_assert_eq(qt_check(b.buf + 256 * i, 200, 3), 1);
	}
	qt_pair_destroy(&a, &b);
}

/*
 * The event check runs once per doorbell run: an armed CQ gets exactly one
 * event for a burst of 8 receives; armed solicited-only, none for a burst
 * without a solicited SEND and one for a burst whose last SEND is.
 */
Test(soft_model, one_event_per_burst_for_an_armed_cq)
{
	struct qt_end a, b;
	struct qpio_sge sge;
	struct qpio_send_wr wr[8];
	struct qpio_wc wc[8];
	unsigned int i;

	qt_require_soft("the event check once per doorbell run");
	qt_pair_create(&a, &b, NULL);
	for (i = 0; i < 24; i++)
		qt_post_recv(&b, i, b.buf + 64 * i, 64);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 32, qpio_mr_lkey(a.mr) };
	for (i = 0; i < 8; i++)
		wr[i] = qt_send_wr(i, &sge, 1, 0);

	cr_assert_eq(qpio_cq_req_notify(b.cq, 0), 0);
	post_n(&a, wr, 8);
	cr_assert_eq(events(b.cq), 1);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 8), 8);

	cr_assert_eq(qpio_cq_req_notify(b.cq, 1), 0);
	post_n(&a, wr, 8);
	cr_assert_eq(events(b.cq), 0, "no solicited SEND in the burst");
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 8), 8);
	wr[7].send_flags |= QPIO_SEND_SOLICITED;
	post_n(&a, wr, 8);
	cr_assert_eq(events(b.cq), 1, "the burst's last SEND is solicited");
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 8), 8);
	cr_assert_eq(events(b.cq), 0);
	qt_pair_destroy(&a, &b);
}

/*
 * A receive CQ of depth 4 filled, half polled, filled again, across the
 * 2^32 wrap of the QP counters: the producers' copy of the consumer index
 * is refreshed when it says "full", so no CQE is refused while there is
 * room; the fifth one with no room is (the CQ overflows). The responder's
 * copy of the RQ head never shows a receive that is not posted: a SEND
 * with the RQ empty waits (RNR) and completes once a receive is posted.
 */
Test(soft_model, cached_indices_across_wrap)
{
	struct qt_end a, b;
	struct qt_pair_opts o = { .cqe = 4, .max_send_wr = 16, .max_recv_wr = 16,
				  .rnr_retry = 7 };
	struct qpio_qp_attr r = { .qp_state = QPIO_QPS_RESET };
	struct qpio_sge sge;
	struct qpio_send_wr wr[4];
	struct qpio_wc wc[8];
	uint64_t lost = 0;
	unsigned int i;

	qt_require_soft("the soft NIC's cached queue indices");
	qt_pair_create(&a, &b, &o);
	cr_assert_eq(qpio_cq_depth(b.cq), 4);
	cr_assert_eq(qpio_qp_modify(a.qp, &r, QPIO_QP_STATE), 0);
	cr_assert_eq(qpio_qp_modify(b.qp, &r, QPIO_QP_STATE), 0);
	cr_assert_eq(qpio_soft_qp_set_counters(a.qp, UINT32_MAX - 2), 0);
	cr_assert_eq(qpio_soft_qp_set_counters(b.qp, UINT32_MAX - 2), 0);
	qt_qp_connect(a.qp, b.dev, qpio_qp_num(b.qp), 7);
	qt_qp_connect(b.qp, a.dev, qpio_qp_num(a.qp), 7);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 16, qpio_mr_lkey(a.mr) };
	for (i = 0; i < 4; i++)
		wr[i] = qt_send_wr(i, &sge, 1, 0);

	/* the RQ is empty: the SEND waits (RNR), then goes once a receive
	 * is posted and a's send CQ is polled (the RNR retry runs there) */
	post_n(&a, wr, 1);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 8), 0);
	cr_assert_eq(qt_stats(a.qp).rnr_naks, 1);
	for (i = 0; i < 8; i++)
		qt_post_recv(&b, 100 + i, b.buf + 64 * i, 64);
	for (i = 0; i < 2000000 && qpio_cq_poll(b.cq, wc, 1) == 0; i++)
		cr_assert_eq(qpio_cq_poll(a.cq, wc, 1), 0);
	cr_assert_eq(wc[0].wr_id, 100, "the RNR retry delivered it");
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	/* 3 in, 2 polled: 1 left, the producers' copy of ci still 0 */
	post_n(&a, wr, 3);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 2), 2);
	cr_assert_eq(wc[0].wr_id, 101);
	cr_assert_eq(wc[1].wr_id, 102);
	/* pi - copy = 4 says full; the true fill is 1: 3 more fit */
	post_n(&a, wr, 3);
	cr_assert_eq(qpio_soft_cq_overflowed(b.cq), 0);
	cr_assert_eq(qpio_soft_cq_overflow_count(b.cq, &lost), 0);
	cr_assert_eq(lost, 0);
	/* now it is full: one more has no room */
	post_n(&a, wr, 1);
	cr_assert_eq(qpio_soft_cq_overflowed(b.cq), 1);
	cr_assert_eq(qpio_soft_cq_overflow_count(b.cq, &lost), 0);
	cr_assert_eq(lost, 1);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 8), 4);
	for (i = 0; i < 4; i++) {
		cr_assert_eq(wc[i].wr_id, 103 + i);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[i].byte_len, 16);
	}
	qt_pair_destroy(&a, &b);
}

/*
 * The run's receive MR cache: receives alternate between two MRs, and the
 * last one lies in the cached MR but runs 56 bytes past its end. The
 * first two SENDs of the burst land; the third finds the receive buffer
 * out of bounds (LOC_PROT_ERR at the responder, REM_OP_ERR at the
 * requester), as without the cache.
 */
Test(soft_model, receive_mr_cache_checks_bounds_and_keys)
{
	struct qt_end a, b;
	struct qpio_mr *mr2;
	uint8_t *buf2;
	struct qpio_sge sge, rs;
	struct qpio_recv_wr rw;
	struct qpio_send_wr wr[3];
	struct qpio_wc wc[4];
	unsigned int i;
	int err;

	qt_require_soft("the device model's receive MR cache");
	qt_pair_create(&a, &b, NULL);
	buf2 = rte_zmalloc(NULL, 4096, 64);
	cr_assert_not_null(buf2);
	mr2 = qpio_mr_reg(b.pd, buf2, 4096, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(mr2);
	qt_post_recv(&b, 100, b.buf, 64);
	rs = (struct qpio_sge){ (uintptr_t)buf2 + 128, 64, qpio_mr_lkey(mr2) };
	rw = (struct qpio_recv_wr){ .wr_id = 101, .sg_list = &rs, .num_sge = 1 };
	cr_assert_eq(qpio_qp_post_recv(b.qp, &rw, 1, &err), 1);
	rs = (struct qpio_sge){ (uintptr_t)b.buf + b.buf_len - 8, 64,
				qpio_mr_lkey(b.mr) };
	rw = (struct qpio_recv_wr){ .wr_id = 102, .sg_list = &rs, .num_sge = 1 };
	cr_assert_eq(qpio_qp_post_recv(b.qp, &rw, 1, &err), 1);
	qt_fill(a.buf, 32, 9);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 32, qpio_mr_lkey(a.mr) };
	for (i = 0; i < 3; i++)
		wr[i] = qt_send_wr(i, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 3, &err), 3);

	cr_assert_eq(qpio_cq_poll(a.cq, wc, 4), 3);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[1].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[2].status, QPIO_WC_REM_OP_ERR, "got %s",
		     qpio_wc_status_str(wc[2].status));
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 4), 3);
	cr_assert_eq(wc[0].wr_id, 100);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(qt_check(b.buf, 32, 9), 1);
	cr_assert_eq(wc[1].wr_id, 101);
	cr_assert_eq(wc[1].status, QPIO_WC_SUCCESS);
	cr_assert_eq(qt_check(buf2 + 128, 32, 9), 1);
	cr_assert_eq(wc[2].wr_id, 102);
	cr_assert_eq(wc[2].status, QPIO_WC_LOC_PROT_ERR, "got %s",
		     qpio_wc_status_str(wc[2].status));
	cr_assert_eq(b.buf[b.buf_len - 8], 0, "nothing written past the MR");
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_ERR);
	cr_assert_eq(qpio_mr_dereg(mr2), 0);
	rte_free(buf2);
	qt_pair_destroy(&a, &b);
}
