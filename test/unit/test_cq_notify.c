/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQ events (qpio_cq_req_notify, qpio_cq_event_fd, qpio_cq_ack_events)
 * and the SOLICITED send flag: one event per arm, solicited-only arming.
 * The soft NIC raises an event while the completion is written, inside
 * the post call; other devices raise it later, so the helper waits.
 */
#include <string.h>
#include <unistd.h>

#include "test_common.h"

TestSuite(cq_notify, .init = qt_eal_init, .fini = qt_eal_fini);

static void
send_flags(struct qt_end *a, uint64_t id, unsigned int flags)
{
	struct qpio_sge sge = { (uintptr_t)a->buf, 8, qpio_mr_lkey(a->mr) };
	struct qpio_send_wr wr = qt_send_wr(id, &sge, 1, flags);
	int err = 1;

	cr_assert_eq(qpio_qp_post_send(a->qp, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);
}

/* On the soft NIC, reading the eventfd counter acknowledges, as
 * qpio_cq_ack_events() does. */
Test(cq_notify, soft_eventfd_read_acknowledges)
{
	struct qt_end a, b;
	struct qpio_wc wc[2];
	uint64_t n = 0;

	qt_require_soft("its CQ event fd is an eventfd");
	qt_pair_create(&a, &b, NULL);
	qt_post_recv(&b, 1, b.buf, 64);
	cr_assert_eq(qpio_cq_req_notify(b.cq, 0), 0);
	send_flags(&a, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(read(qpio_cq_event_fd(b.cq), &n, sizeof(n)),
		     (ssize_t)sizeof(n));
	cr_assert_eq(n, 1);
	cr_assert_eq(qpio_cq_ack_events(b.cq), 0, "already read");
	cr_assert_eq(qt_poll_n(b.cq, wc, 1), 1);
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	qt_pair_destroy(&a, &b);
}

Test(cq_notify, null_arguments)
{
	cr_assert_eq(qpio_cq_req_notify(NULL, 0), -EINVAL);
	cr_assert_eq(qpio_cq_event_fd(NULL), -EINVAL);
	cr_assert_eq(qpio_cq_ack_events(NULL), -EINVAL);
}

/* Armed for any completion: exactly one event per arm; completions before
 * the arm raise none. */
Test(cq_notify, one_event_per_arm)
{
	struct qt_end a, b;
	struct qpio_wc wc[4];
	unsigned int i;

	qt_pair_create(&a, &b, NULL);
	for (i = 0; i < 4; i++)
		qt_post_recv(&b, i, b.buf + 64 * i, 64);
	send_flags(&a, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qt_poll_n(b.cq, wc, 1), 1);
	cr_assert_eq(qt_cq_events(b.cq), 0, "not armed");

	cr_assert_eq(qpio_cq_req_notify(b.cq, 0), 0);
	cr_assert_eq(qt_cq_events(b.cq), 0, "armed, nothing new yet");
	send_flags(&a, 2, QPIO_SEND_SIGNALED);
	send_flags(&a, 3, QPIO_SEND_SIGNALED);
	cr_assert_eq(qt_cq_events(b.cq), 1, "two completions, one arm: one event");
	cr_assert_eq(qt_poll_n(b.cq, wc, 2), 2);
	cr_assert_eq(qpio_cq_req_notify(b.cq, 0), 0);
	send_flags(&a, 4, QPIO_SEND_SIGNALED);
	cr_assert_eq(qt_cq_events(b.cq), 1);
	cr_assert_eq(qt_cq_events(b.cq), 0, "acknowledged");
	cr_assert_eq(qt_poll_n(b.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 3);
	/* the sender's CQ was never armed */
	cr_assert_eq(qt_poll_n(a.cq, wc, 4), 4);
	cr_assert_eq(qt_cq_events(a.cq), 0);
	qt_pair_destroy(&a, &b);
}

/* Solicited-only: an unsolicited receive raises no event, a SOLICITED one
 * does, and so does an error completion. */
Test(cq_notify, solicited_only)
{
	struct qt_end a, b;
	struct qpio_qp_attr attr;
	struct qpio_wc wc[4];
	unsigned int i;

	qt_pair_create(&a, &b, NULL);
	for (i = 0; i < 3; i++)
		qt_post_recv(&b, i, b.buf + 64 * i, 64);
	cr_assert_eq(qpio_cq_req_notify(b.cq, 1), 0);
	send_flags(&a, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qt_poll_n(b.cq, wc, 1), 1);
	cr_assert_eq(qt_cq_events(b.cq), 0, "unsolicited receive");
	send_flags(&a, 2, QPIO_SEND_SIGNALED | QPIO_SEND_SOLICITED);
	cr_assert_eq(qt_cq_events(b.cq), 1, "solicited receive");
	cr_assert_eq(qt_poll_n(b.cq, wc, 1), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[0].wr_id, 1);

	/* a solicited SEND's own (requester) completion is not solicited */
	cr_assert_eq(qpio_cq_req_notify(a.cq, 1), 0);
	qt_post_recv(&b, 9, b.buf + 1024, 64);
	send_flags(&a, 3, QPIO_SEND_SIGNALED | QPIO_SEND_SOLICITED);
	cr_assert_eq(qt_cq_events(a.cq), 0);

	/* an error completion (flush) is solicited */
	cr_assert_eq(qpio_cq_req_notify(b.cq, 1), 0);
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = QPIO_QPS_ERR;
	cr_assert_eq(qpio_qp_modify(b.qp, &attr, QPIO_QP_STATE), 0);
	cr_assert_eq(qt_cq_events(b.cq), 1, "flush of the pending receives");
	qt_pair_destroy(&a, &b);
}

/* SOLICITED on WRITE_WITH_IMM and on UD sends. */
Test(cq_notify, solicited_write_imm_and_ud)
{
	struct qt_end a, b, u, v;
	struct qpio_device *du, *dv;
	struct qpio_ah *ah;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	int err;

	qt_pair_create(&a, &b, NULL);
	qt_post_recv(&b, 1, b.buf, 64);
	qt_post_recv(&b, 2, b.buf, 64);
	cr_assert_eq(qpio_cq_req_notify(b.cq, 1), 0);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 8, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(1, &sge, 1, QPIO_SEND_SIGNALED);
	wr.opcode = QPIO_WR_RDMA_WRITE_WITH_IMM;
	wr.wr.rdma.remote_addr = (uintptr_t)b.buf + 512;
	wr.wr.rdma.rkey = qpio_mr_rkey(b.mr);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_cq_events(b.cq), 0);
	wr.send_flags |= QPIO_SEND_SOLICITED;
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_cq_events(b.cq), 1);

	du = qpio_rdma_dev_create("soft2");
	dv = qpio_rdma_dev_create("soft3");
	qt_ud_end_create(&u, du, 7, NULL);
	qt_ud_end_create(&v, dv, 7, NULL);
	ah = qt_ah_create(u.pd, dv, 0);
	qt_post_recv(&v, 1, v.buf, 128);
	cr_assert_eq(qpio_cq_req_notify(v.cq, 1), 0);
	sge = (struct qpio_sge){ (uintptr_t)u.buf, 8, qpio_mr_lkey(u.mr) };
	wr = qt_ud_wr(1, &sge, 1, QPIO_SEND_SOLICITED, ah, qpio_qp_num(v.qp), 7);
	cr_assert_eq(qpio_qp_post_send(u.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_cq_events(v.cq), 1);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_end_destroy(&u);
	qt_end_destroy(&v);
	cr_assert_eq(qpio_rdma_dev_close(du), 0);
	cr_assert_eq(qpio_rdma_dev_close(dv), 0);
	qt_pair_destroy(&a, &b);
}
