/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous events and CQ overflow: the event ring (values, order,
 * loss counting, removal at destroy), which errors raise which event, and
 * what a CQ that overflows does to its QPs. The SRQ limit event runs on
 * every device; the others check the soft NIC's behaviour and counters
 * (doc/guides/nics/ibv.rst says what rxe does instead).
 */
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "test_common.h"

TestSuite(async, .init = qt_eal_init, .fini = qt_eal_fini);

static int
next_event(struct qpio_device *dev, struct qpio_async_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	return qpio_rdma_get_async_event(dev, ev);
}

static uint64_t
fd_count(int fd)
{
	uint64_t c = 0;

	if (read(fd, &c, sizeof(c)) != (ssize_t)sizeof(c))
		return 0;
	return c;
}

/* The next event of dev, waiting up to 5 s for devices whose events
 * arrive after the operation that caused them returned. */
static int
wait_event(struct qpio_device *dev, struct qpio_async_event *ev)
{
	unsigned int i;
	int ret = -EAGAIN;

	for (i = 0; i < 5000 && ret == -EAGAIN; i++) {
		ret = next_event(dev, ev);
		if (ret == -EAGAIN && !qt_dev_is_soft())
			usleep(1000);
		else if (ret == -EAGAIN)
			break;
	}
	return ret;
}

/* The event numbers are libibverbs' (enum ibv_event_type). */
Test(async, event_values_and_names)
{
	cr_assert_eq(QPIO_EVENT_CQ_ERR, 0);
	cr_assert_eq(QPIO_EVENT_QP_FATAL, 1);
	cr_assert_eq(QPIO_EVENT_QP_REQ_ERR, 2);
	cr_assert_eq(QPIO_EVENT_QP_ACCESS_ERR, 3);
	cr_assert_eq(QPIO_EVENT_DEVICE_FATAL, 8);
	cr_assert_eq(QPIO_EVENT_PORT_ACTIVE, 9);
	cr_assert_eq(QPIO_EVENT_PORT_ERR, 10);
	cr_assert_eq(QPIO_EVENT_SRQ_ERR, 14);
	cr_assert_eq(QPIO_EVENT_SRQ_LIMIT_REACHED, 15);
	cr_assert_eq(QPIO_EVENT_QP_LAST_WQE_REACHED, 16);
	cr_assert_eq(QPIO_EVENT_WQ_FATAL, 19);
	cr_assert_eq(QPIO_SRQ_MAX_WR, 1);
	cr_assert_eq(QPIO_SRQ_LIMIT, 2);
	cr_assert_str_eq(qpio_event_type_str(QPIO_EVENT_CQ_ERR), "CQ_ERR");
	cr_assert_str_eq(qpio_event_type_str(QPIO_EVENT_SRQ_LIMIT_REACHED),
			 "SRQ_LIMIT_REACHED");
	cr_assert_str_eq(qpio_event_type_str(QPIO_EVENT_WQ_FATAL), "WQ_FATAL");
	cr_assert_str_eq(qpio_event_type_str((enum qpio_event_type)20), "?");
}

/* A new device has no event (the soft port is ACTIVE from the start and
 * never changes, so no port event either). */
Test(async, new_device_has_no_event)
{
	struct qpio_device *d = qpio_rdma_dev_create("soft0");
	struct qpio_async_event ev;
	int fd;

	cr_assert_not_null(d);
	cr_assert_eq(next_event(d, &ev), -EAGAIN);
	cr_assert_eq(qpio_rdma_get_async_event(NULL, &ev), -EINVAL);
	cr_assert_eq(qpio_rdma_get_async_event(d, NULL), -EINVAL);
	fd = qpio_rdma_async_event_fd(d);
	cr_assert_geq(fd, 0);
	cr_assert_eq(qpio_rdma_async_event_fd(NULL), -EINVAL);
	cr_assert_eq(fd_count(fd), 0);
	cr_assert_eq(qpio_rdma_async_events_lost(d), 0);
	cr_assert_eq(qpio_rdma_async_events_lost(NULL), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

/* 300 limit events on a ring of 256: the first 256 are queued in order,
 * 44 are counted as lost, the eventfd counts the 256 queued. */
Test(async, ring_full_counts_lost_events)
{
	struct qt_end a, b;
	struct qpio_srq_attr sa = { .max_wr = 4, .max_sge = 1 };
	struct qpio_srq_attr lim = { .srq_limit = 1 };
	struct qpio_qp_init_attr ia;
	struct qpio_async_event ev;
	struct qpio_srq *srq;
	struct qpio_qp *bq, *old;
	struct qpio_sge sge, rsge;
	struct qpio_recv_wr rwr;
	struct qpio_send_wr wr;
	struct qpio_wc wc;
	unsigned int i, n = 0;
	int err;

	qt_require_soft("reads the eventfd counter of the soft NIC's event fd");
	qt_pair_create(&a, &b, NULL);
	srq = qpio_srq_create(b.pd, &sa);
	cr_assert_not_null(srq);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = b.cq;
	ia.recv_cq = b.cq;
	ia.srq = srq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap = (struct qpio_qp_cap){ 4, 0, 1, 0, 0 };
	bq = qpio_qp_create(b.pd, &ia);
	cr_assert_not_null(bq);
	/* connect a <-> bq instead of a <-> b */
	old = b.qp;
	b.qp = bq;
	{
		struct qpio_qp_attr r = { .qp_state = QPIO_QPS_RESET };

		cr_assert_eq(qpio_qp_modify(a.qp, &r, QPIO_QP_STATE), 0);
	}
	qt_qp_connect(a.qp, b.dev, qpio_qp_num(bq), 7);
	qt_qp_connect(bq, a.dev, qpio_qp_num(a.qp), 7);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 8, qpio_mr_lkey(a.mr) };
	rsge = (struct qpio_sge){ (uintptr_t)b.buf, 64, qpio_mr_lkey(b.mr) };
	rwr = (struct qpio_recv_wr){ .sg_list = &rsge, .num_sge = 1 };
	for (i = 0; i < 300; i++) {
		rwr.wr_id = i;
		cr_assert_eq(qpio_srq_post_recv(srq, &rwr, 1, &err), 1);
		cr_assert_eq(qpio_srq_modify(srq, &lim, QPIO_SRQ_LIMIT), 0);
		wr = qt_send_wr(i, &sge, 1, QPIO_SEND_SIGNALED);
		cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
		cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
		cr_assert_eq(wc.wr_id, i);
		cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	}
	cr_assert_eq(qpio_rdma_async_events_lost(b.dev), 300 - QPIO_ASYNC_EVENT_RING);
	cr_assert_eq(fd_count(qpio_rdma_async_event_fd(b.dev)), QPIO_ASYNC_EVENT_RING);
	while (next_event(b.dev, &ev) == 0) {
		cr_assert_eq(ev.event_type, QPIO_EVENT_SRQ_LIMIT_REACHED);
		cr_assert_eq(ev.element.srq, srq);
		n++;
	}
	cr_assert_eq(n, QPIO_ASYNC_EVENT_RING);
	cr_assert_eq(next_event(b.dev, &ev), -EAGAIN);
	cr_assert_eq(qpio_rdma_async_events_lost(b.dev), 44);
	cr_assert_eq(next_event(a.dev, &ev), -EAGAIN, "nothing on the sender");
	/* room again: the next event is queued */
	rwr.wr_id = 300;
	cr_assert_eq(qpio_srq_post_recv(srq, &rwr, 1, &err), 1);
	cr_assert_eq(qpio_srq_modify(srq, &lim, QPIO_SRQ_LIMIT), 0);
	wr = qt_send_wr(300, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(next_event(b.dev, &ev), 0);
	cr_assert_eq(ev.event_type, QPIO_EVENT_SRQ_LIMIT_REACHED);
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);

	cr_assert_eq(qpio_qp_destroy(bq), 0);
	cr_assert_eq(qpio_srq_destroy(srq), 0);
	b.qp = old;
	qt_pair_destroy(&a, &b);
}

/* A refused remote access gives REM_ACCESS_ERR at the requester and
 * QP_ACCESS_ERR on the responder's device (its QP moved to ERR with no WQE
 * to report it); a misaligned atomic gives QP_REQ_ERR. Errors that a
 * completion reports raise nothing. */
static void
responder_event(int misaligned)
{
	struct qt_end a, b;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_async_event ev;
	struct qpio_wc wc;
	int err;

	qt_require_soft("rxe (Linux 6.1) raises no QP_ACCESS_ERR or QP_REQ_ERR "
			"on the responder: the requester's completion tells");
	qt_pair_create(&a, &b, NULL);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 8, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(1, &sge, 1, QPIO_SEND_SIGNALED);
	if (misaligned) {
		wr.opcode = QPIO_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.remote_addr = (uintptr_t)b.buf + 4;
		wr.wr.atomic.rkey = qpio_mr_rkey(b.mr);
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.opcode = QPIO_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = (uintptr_t)b.buf;
		wr.wr.rdma.rkey = qpio_mr_rkey(b.mr) ^ 0x100;
	}
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, misaligned ? QPIO_WC_REM_INV_REQ_ERR :
		     QPIO_WC_REM_ACCESS_ERR);
	cr_assert_eq(next_event(b.dev, &ev), 0);
	cr_assert_eq(ev.event_type, misaligned ? QPIO_EVENT_QP_REQ_ERR :
		     QPIO_EVENT_QP_ACCESS_ERR);
	cr_assert_eq(ev.element.qp, b.qp);
	cr_assert_eq(next_event(b.dev, &ev), -EAGAIN);
	cr_assert_eq(next_event(a.dev, &ev), -EAGAIN,
		     "the requester's error is in its completion");
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_ERR);
	qt_pair_destroy(&a, &b);
}

Test(async, refused_write_raises_qp_access_err) { responder_event(0); }
Test(async, misaligned_atomic_raises_qp_req_err) { responder_event(1); }

/* Completion-reported errors (LOC_PROT_ERR at the requester, LOC_LEN_ERR
 * at the receiver) and modify to ERR raise no event. */
Test(async, completion_errors_raise_no_event)
{
	struct qt_end a, b;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_async_event ev;
	struct qpio_qp_attr qa;
	struct qpio_wc wc[2];
	int err;

	qt_pair_create(&a, &b, NULL);
	qt_post_recv(&b, 1, b.buf, 4);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 8, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(1, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(b.cq, wc, 1), 1);
	/* rxe reports a short receive as LOC_QP_OP_ERR (ibv.rst) */
	cr_assert_eq(wc[0].status, qt_dev_is_rxe() ? QPIO_WC_LOC_QP_OP_ERR :
		     QPIO_WC_LOC_LEN_ERR);
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = QPIO_QPS_RESET;
	cr_assert_eq(qpio_qp_modify(a.qp, &qa, QPIO_QP_STATE), 0);
	qa.qp_state = QPIO_QPS_ERR;
	/* rxe has no RESET->ERR (ibv.rst, qp_state/c04_*) */
	cr_assert_eq(qpio_qp_modify(a.qp, &qa, QPIO_QP_STATE),
		     qt_dev_is_rxe() ? -EINVAL : 0);
	cr_assert_eq(next_event(a.dev, &ev), -EAGAIN);
	cr_assert_eq(next_event(b.dev, &ev), -EAGAIN);
	qt_pair_destroy(&a, &b);
}

/* SRQ limit on any device: armed at 2 with 4 receives posted, the third
 * receive taken leaves 1 < 2: one SRQ_LIMIT_REACHED naming the SRQ, the
 * limit reads 0 (disarmed), no second event. The event fd is readable
 * before the event is taken; on ibv devices not after. */
Test(async, srq_limit_event_names_the_srq)
{
	struct qt_end a, b;
	struct qpio_srq_attr sa = { .max_wr = 8, .max_sge = 1 };
	struct qpio_srq_attr lim = { .srq_limit = 2 }, q;
	struct qpio_qp_init_attr ia;
	struct qpio_async_event ev;
	struct qpio_qp_attr r = { .qp_state = QPIO_QPS_RESET };
	struct qpio_srq *srq;
	struct qpio_qp *bq, *old;
	struct qpio_sge sge, rsge[4];
	struct qpio_recv_wr rwr[4];
	struct qpio_send_wr wr;
	struct qpio_wc wc;
	struct pollfd pfd;
	unsigned int i;
	int err;

	qt_pair_create(&a, &b, NULL);
	srq = qpio_srq_create(b.pd, &sa);
	cr_assert_not_null(srq, "srq_create: %s", rte_strerror(rte_errno));
	cr_assert_eq(sa.max_wr, 8);
	cr_assert_eq(sa.max_sge, 1);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = b.cq;
	ia.recv_cq = b.cq;
	ia.srq = srq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap = (struct qpio_qp_cap){ 4, 0, 1, 0, 0 };
	bq = qpio_qp_create(b.pd, &ia);
	cr_assert_not_null(bq, "qp_create: %s", rte_strerror(rte_errno));
	old = b.qp;
	b.qp = bq;
	cr_assert_eq(qpio_qp_modify(a.qp, &r, QPIO_QP_STATE), 0);
	qt_qp_connect(a.qp, b.dev, qpio_qp_num(bq), 7);
	qt_qp_connect(bq, a.dev, qpio_qp_num(a.qp), 7);
	for (i = 0; i < 4; i++) {
		rsge[i] = (struct qpio_sge){ (uintptr_t)b.buf + 64 * i, 64,
					     qpio_mr_lkey(b.mr) };
		rwr[i] = (struct qpio_recv_wr){ .wr_id = 10 + i,
						.sg_list = &rsge[i], .num_sge = 1 };
	}
	cr_assert_eq(qpio_srq_post_recv(srq, rwr, 4, &err), 4);
	cr_assert_eq(err, 0);
	cr_assert_eq(qpio_srq_modify(srq, &lim, QPIO_SRQ_LIMIT), 0);
	cr_assert_eq(qpio_srq_query(srq, &q), 0);
	cr_assert_eq(q.srq_limit, 2);
	cr_assert_eq(q.max_wr, 8);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 8, qpio_mr_lkey(a.mr) };
	for (i = 0; i < 2; i++) {
		wr = qt_send_wr(i, &sge, 1, QPIO_SEND_SIGNALED);
		cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
		cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
		cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc.wr_id, 10 + i, "SRQ receives in posted order");
		cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	}
	cr_assert_eq(next_event(b.dev, &ev), -EAGAIN, "2 left, not fewer than 2");
	wr = qt_send_wr(2, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 12);
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	pfd = (struct pollfd){ .fd = qpio_rdma_async_event_fd(b.dev),
			       .events = POLLIN };
	cr_assert_geq(pfd.fd, 0);
	cr_assert_eq(poll(&pfd, 1, 5000), 1, "event fd readable");
	cr_assert_eq(wait_event(b.dev, &ev), 0);
	cr_assert_eq(ev.event_type, QPIO_EVENT_SRQ_LIMIT_REACHED);
	cr_assert_eq(ev.element.srq, srq);
	cr_assert_eq(next_event(b.dev, &ev), -EAGAIN);
	if (qt_dev_is_soft())
		cr_assert_eq(fd_count(pfd.fd), 1);
	else
		cr_assert_eq(poll(&pfd, 1, 0), 0, "every event taken");
	cr_assert_eq(qpio_srq_query(srq, &q), 0);
	cr_assert_eq(q.srq_limit, 0, "disarmed by the event");
	/* disarmed: the last receive raises nothing */
	wr = qt_send_wr(3, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 13);
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	cr_assert_eq(next_event(b.dev, &ev), -EAGAIN);
	cr_assert_eq(next_event(a.dev, &ev), -EAGAIN);
	cr_assert_eq(qpio_qp_destroy(bq), 0);
	cr_assert_eq(qpio_srq_destroy(srq), 0);
	b.qp = old;
	qt_pair_destroy(&a, &b);
}

/* One RC end on dev: PD, CQ of 64, 4 KiB buffer and MR, QP (8 WRs each
 * way, one SGE) in RESET. */
static void
rc_end_create(struct qt_end *e, struct qpio_device *dev)
{
	const struct qt_pair_opts o = { .max_send_wr = 8, .max_recv_wr = 8,
					.max_send_sge = 1, .max_recv_sge = 1,
					.cqe = 64, .buf_len = 4096 };

	qt_end_create(e, dev, &o);
}

/* Destroying a QP removes the events queued for it; events of other
 * objects stay, in order. */
Test(async, destroy_removes_queued_events)
{
	struct qt_end a, b, a2, b2;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_async_event ev;
	struct qpio_wc wc;
	struct qpio_qp *gone;
	int err;

	qt_require_soft("needs responder QP_ACCESS_ERR events, which rxe does not raise");
	qt_pair_create(&a, &b, NULL);
	/* a second RC pair a2 <-> b2 on the same two devices */
	rc_end_create(&a2, a.dev);
	rc_end_create(&b2, b.dev);
	qt_qp_connect(a2.qp, b.dev, qpio_qp_num(b2.qp), 7);
	qt_qp_connect(b2.qp, a.dev, qpio_qp_num(a2.qp), 7);
	/* two refused WRITEs: b.qp's event, then b2.qp's */
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 8, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(1, &sge, 1, QPIO_SEND_SIGNALED);
	wr.opcode = QPIO_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = 0x1000;
	wr.wr.rdma.rkey = 0xbad01;
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	sge.lkey = qpio_mr_lkey(a2.mr);
	sge.addr = (uintptr_t)a2.buf;
	cr_assert_eq(qpio_qp_post_send(a2.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	cr_assert_eq(qt_poll_n(a2.cq, &wc, 1), 1);
	gone = b.qp;
	cr_assert_eq(qpio_qp_destroy(b.qp), 0);
	b.qp = NULL;
	cr_assert_eq(next_event(b.dev, &ev), 0);
	cr_assert_eq(ev.event_type, QPIO_EVENT_QP_ACCESS_ERR);
	cr_assert_eq(ev.element.qp, b2.qp);
	cr_assert_neq(ev.element.qp, gone);
	cr_assert_eq(next_event(b.dev, &ev), -EAGAIN);
	/* put a QP back so the pair helper can tear down */
	{
		struct qpio_qp_init_attr ia;

		memset(&ia, 0, sizeof(ia));
		ia.qp_type = QPIO_QPT_RC;
		ia.cap = (struct qpio_qp_cap){ 1, 1, 1, 1, 0 };
		ia.send_cq = ia.recv_cq = b.cq;
		b.qp = qpio_qp_create(b.pd, &ia);
		cr_assert_not_null(b.qp);
	}
	qt_end_destroy(&a2);
	qt_end_destroy(&b2);
	qt_pair_destroy(&a, &b);
}

/*
 * CQ overflow. b's QP has receive CQ rcq of depth 4, and a second QP b2
 * uses rcq as its send CQ. Six SENDs into six receives: four receive
 * completions fit; the fifth does not. Then:
 * - rcq is in error: its four completions stay readable, nothing is ever
 *   written to it again (counted: the fifth receive completion and the
 *   flush of the sixth receive, later b2's flushed send);
 * - the device raises CQ_ERR(rcq), then QP_FATAL for b's QP and for b2
 *   (every QP using rcq, send or receive, moves to ERR);
 * - the sender's fifth SEND completes SUCCESS (its data was delivered;
 *   only the receive completion is lost), the sixth finds no responder.
 */
Test(async, cq_overflow_errors_cq_and_every_qp_using_it)
{
	struct qt_end a, b;
	struct qpio_cq *rcq, *b2_rcq;
	struct qpio_qp *bq, *b2;
	struct qpio_qp_init_attr ia;
	struct qpio_async_event ev;
	struct qpio_sge sge;
	struct qpio_send_wr wr[6];
	struct qpio_wc wc[8];
	uint64_t lost = 0;
	unsigned int i;
	int err;

	qt_require_soft("the soft NIC's CQ overflow counters (qpio_soft_cq_overflowed)");
	qt_pair_create(&a, &b, NULL);
	rcq = qpio_cq_create(b.dev, 4, SOCKET_ID_ANY);
	b2_rcq = qpio_cq_create(b.dev, 16, SOCKET_ID_ANY);
	cr_assert(rcq != NULL && b2_rcq != NULL);
	cr_assert_eq(qpio_cq_depth(rcq), 4);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = QPIO_QPT_RC;
	ia.cap = (struct qpio_qp_cap){ 8, 8, 1, 1, 0 };
	ia.send_cq = b.cq;
	ia.recv_cq = rcq;
	bq = qpio_qp_create(b.pd, &ia);
	ia.send_cq = rcq;
	ia.recv_cq = b2_rcq;
	b2 = qpio_qp_create(b.pd, &ia);
	cr_assert(bq != NULL && b2 != NULL);
	{
		struct qpio_qp_attr r = { .qp_state = QPIO_QPS_RESET };

		cr_assert_eq(qpio_qp_modify(a.qp, &r, QPIO_QP_STATE), 0);
	}
	qt_qp_connect(a.qp, b.dev, qpio_qp_num(bq), 7);
	qt_qp_connect(bq, a.dev, qpio_qp_num(a.qp), 7);
	/* b2 in RTS towards a QP that does not exist: never used */
	qt_qp_connect(b2, a.dev, 0xfff, 7);

	for (i = 0; i < 6; i++) {
		struct qpio_sge rs = { (uintptr_t)b.buf + 64 * i, 64, qpio_mr_lkey(b.mr) };
		struct qpio_recv_wr rw = { .wr_id = 100 + i, .sg_list = &rs, .num_sge = 1 };

		cr_assert_eq(qpio_qp_post_recv(bq, &rw, 1, &err), 1);
	}
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 16, qpio_mr_lkey(a.mr) };
	for (i = 0; i < 6; i++)
		wr[i] = qt_send_wr(i, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 6, &err), 6);

	cr_assert_eq(qpio_soft_cq_overflowed(rcq), 1);
	cr_assert_eq(qpio_soft_cq_overflowed(b.cq), 0);
	cr_assert_eq(qpio_soft_cq_overflow_count(rcq, &lost), 0);
	cr_assert_eq(lost, 2, "5th receive completion and the 6th's flush");
	cr_assert_eq(next_event(b.dev, &ev), 0);
	cr_assert_eq(ev.event_type, QPIO_EVENT_CQ_ERR);
	cr_assert_eq(ev.element.cq, rcq);
	cr_assert_eq(next_event(b.dev, &ev), 0);
	cr_assert_eq(ev.event_type, QPIO_EVENT_QP_FATAL);
	cr_assert_eq(ev.element.qp, bq);
	cr_assert_eq(next_event(b.dev, &ev), 0);
	cr_assert_eq(ev.event_type, QPIO_EVENT_QP_FATAL);
	cr_assert_eq(ev.element.qp, b2);
	cr_assert_eq(next_event(b.dev, &ev), -EAGAIN);
	cr_assert_eq(qpio_qp_state(bq), QPIO_QPS_ERR);
	cr_assert_eq(qpio_qp_state(b2), QPIO_QPS_ERR);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RTS, "b.qp uses other CQs");

	/* the four that fit, in order; then nothing, even with room */
	cr_assert_eq(qpio_cq_poll(rcq, wc, 8), 4);
	for (i = 0; i < 4; i++) {
		cr_assert_eq(wc[i].wr_id, 100 + i);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[i].byte_len, 16);
	}
	cr_assert_eq(qpio_cq_poll(rcq, wc, 8), 0);
	/* a send posted on b2 in ERR is flushed into rcq: not written */
	sge = (struct qpio_sge){ (uintptr_t)b.buf, 4, qpio_mr_lkey(b.mr) };
	wr[0] = qt_send_wr(7, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(b2, wr, 1, &err), 1);
	cr_assert_eq(qpio_cq_poll(rcq, wc, 8), 0);
	cr_assert_eq(qpio_soft_cq_overflow_count(rcq, &lost), 0);
	cr_assert_eq(lost, 3);
	cr_assert_eq(next_event(b.dev, &ev), -EAGAIN, "CQ_ERR is raised once");

	/* the sender: 5 SUCCESS, then no responder (bq in ERR) */
	cr_assert_eq(qt_poll_n(a.cq, wc, 6), 6);
	for (i = 0; i < 5; i++) {
		cr_assert_eq(wc[i].wr_id, i);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
	}
	cr_assert_eq(wc[5].wr_id, 5);
	cr_assert_eq(wc[5].status, QPIO_WC_RETRY_EXC_ERR);
	cr_assert_eq(qt_stats(a.qp).retry_exceeded, 1);
	cr_assert_eq(next_event(a.dev, &ev), -EAGAIN);
	cr_assert_eq(qpio_soft_cq_overflow_count(NULL, &lost), -EINVAL);
	cr_assert_eq(qpio_soft_cq_overflow_count(rcq, NULL), -EINVAL);

	cr_assert_eq(qpio_qp_destroy(bq), 0);
	cr_assert_eq(qpio_qp_destroy(b2), 0);
	cr_assert_eq(qpio_cq_destroy(rcq), 0);
	cr_assert_eq(qpio_cq_destroy(b2_rcq), 0);
	qt_pair_destroy(&a, &b);
}

/*
 * A send CQ of depth 2 and four signaled SENDs: two completions fit; the
 * third SEND is delivered but its completion does not fit (the CQ and
 * the requester QP enter error); the fourth is flushed into the CQ in
 * error. Each of the two is counted once: a WQE whose completion was
 * lost is not flushed again, and its SEND is not executed again.
 */
Test(async, cq_overflow_counts_each_lost_completion_once)
{
	struct qt_end a, b;
	struct qpio_cq *scq;
	struct qpio_qp *aq;
	struct qpio_qp_init_attr ia;
	struct qpio_sge sge;
	struct qpio_send_wr wr[4];
	struct qpio_wc wc[8];
	struct qpio_qp_attr r = { .qp_state = QPIO_QPS_RESET };
	uint64_t lost = 0;
	unsigned int i;
	int err;

	qt_require_soft("the soft NIC's CQ overflow counters (qpio_soft_cq_overflowed)");
	qt_pair_create(&a, &b, NULL);
	scq = qpio_cq_create(a.dev, 2, SOCKET_ID_ANY);
	cr_assert_not_null(scq);
	cr_assert_eq(qpio_cq_depth(scq), 2);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = QPIO_QPT_RC;
	ia.cap = (struct qpio_qp_cap){ 8, 8, 1, 1, 0 };
	ia.send_cq = scq;
	ia.recv_cq = a.cq;
	aq = qpio_qp_create(a.pd, &ia);
	cr_assert_not_null(aq);
	cr_assert_eq(qpio_qp_modify(b.qp, &r, QPIO_QP_STATE), 0);
	qt_qp_connect(aq, b.dev, qpio_qp_num(b.qp), 7);
	qt_qp_connect(b.qp, a.dev, qpio_qp_num(aq), 7);
	for (i = 0; i < 4; i++)
		qt_post_recv(&b, 100 + i, b.buf + 64 * i, 64);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 16, qpio_mr_lkey(a.mr) };
	for (i = 0; i < 4; i++)
		wr[i] = qt_send_wr(i, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(aq, wr, 4, &err), 4);

	cr_assert_eq(qpio_soft_cq_overflowed(scq), 1);
	cr_assert_eq(qpio_soft_cq_overflow_count(scq, &lost), 0);
	cr_assert_eq(lost, 2, "3rd SEND's completion and the 4th's flush, "
		     "each once (got %lu)", (unsigned long)lost);
	cr_assert_eq(qpio_qp_state(aq), QPIO_QPS_ERR);
	cr_assert_eq(qt_stats(aq).flushed, 0, "the flush was not written");
	cr_assert_eq(qpio_cq_poll(scq, wc, 8), 2);
	for (i = 0; i < 2; i++) {
		cr_assert_eq(wc[i].wr_id, i);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
	}
	cr_assert_eq(qpio_cq_poll(scq, wc, 8), 0);
	/* the responder got the first three SENDs, each once */
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 8), 3);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(wc[i].wr_id, 100 + i);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[i].byte_len, 16);
	}
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 8), 0);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RTS);

	cr_assert_eq(qpio_qp_destroy(aq), 0);
	cr_assert_eq(qpio_cq_destroy(scq), 0);
	qt_pair_destroy(&a, &b);
}

/* A CQ destroyed with its CQ_ERR event queued: the event is removed. */
Test(async, cq_destroy_removes_its_cq_err)
{
	struct qt_end a, b;
	struct qt_pair_opts o = { .cqe = 2, .max_send_wr = 4, .max_recv_wr = 4,
				  .rnr_retry = 7 };
	struct qpio_async_event ev;
	struct qpio_sge sge;
	struct qpio_send_wr wr[3];
	unsigned int i;
	int err;

	qt_require_soft("the soft NIC's CQ overflow counters (qpio_soft_cq_overflowed)");
	qt_pair_create(&a, &b, &o);
	for (i = 0; i < 3; i++)
		qt_post_recv(&b, i, b.buf + 64 * i, 64);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 8, qpio_mr_lkey(a.mr) };
	for (i = 0; i < 3; i++)
		wr[i] = qt_send_wr(i, &sge, 1, 0);
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 3, &err), 3);
	cr_assert_eq(qpio_soft_cq_overflowed(b.cq), 1);
	cr_assert_eq(qpio_qp_destroy(b.qp), 0);
	cr_assert_eq(qpio_cq_destroy(b.cq), 0);
	cr_assert_eq(next_event(b.dev, &ev), -EAGAIN,
		     "CQ_ERR and QP_FATAL removed with their objects");
	cr_assert_eq(qpio_mr_dereg(b.mr), 0);
	cr_assert_eq(qpio_pd_free(b.pd), 0);
	rte_free(b.buf);
	qt_end_destroy(&a);
	cr_assert_eq(qpio_rdma_dev_close(a.dev), 0);
	cr_assert_eq(qpio_rdma_dev_close(b.dev), 0);
}

/* Two lcores raise events into one device's ring at once: each drives
 * 100 SRQ limit events on its own SRQ of device soft1. All 200 are
 * queued (none lost, none twice), 100 per SRQ, and the fd counts 200. */
struct ev_worker {
	struct qt_end snd;          /* sender on soft0 */
	struct qt_end rcv;          /* receiver QP on soft1, on srq */
	struct qpio_srq *srq;
	unsigned int fails;
};

static void
ev_worker_create(struct ev_worker *w, struct qpio_device *d0,
		 struct qpio_device *d1)
{
	struct qpio_srq_attr sa = { .max_wr = 4, .max_sge = 1 };
	struct qpio_qp_init_attr ia;

	rc_end_create(&w->snd, d0);
	rc_end_create(&w->rcv, d1);
	cr_assert_eq(qpio_qp_destroy(w->rcv.qp), 0);
	w->srq = qpio_srq_create(w->rcv.pd, &sa);
	cr_assert_not_null(w->srq);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = QPIO_QPT_RC;
	ia.cap = (struct qpio_qp_cap){ 8, 0, 1, 0, 0 };
	ia.send_cq = w->rcv.cq;
	ia.recv_cq = w->rcv.cq;
	ia.srq = w->srq;
	w->rcv.qp = qpio_qp_create(w->rcv.pd, &ia);
	cr_assert_not_null(w->rcv.qp);
	qt_qp_connect(w->snd.qp, d1, qpio_qp_num(w->rcv.qp), 7);
	qt_qp_connect(w->rcv.qp, d0, qpio_qp_num(w->snd.qp), 7);
}

static int
ev_worker_main(void *arg)
{
	struct ev_worker *w = arg;
	struct qpio_srq_attr lim = { .srq_limit = 1 };
	struct qpio_sge sge = { (uintptr_t)w->snd.buf, 8, qpio_mr_lkey(w->snd.mr) };
	struct qpio_sge rsge = { (uintptr_t)w->rcv.buf, 64, qpio_mr_lkey(w->rcv.mr) };
	struct qpio_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 };
	struct qpio_send_wr wr;
	struct qpio_wc wc;
	unsigned int i;
	int err;

	for (i = 0; i < 100; i++) {
		rwr.wr_id = i;
		wr = qt_send_wr(i, &sge, 1, QPIO_SEND_SIGNALED);
		if (qpio_srq_post_recv(w->srq, &rwr, 1, &err) != 1 ||
		    qpio_srq_modify(w->srq, &lim, QPIO_SRQ_LIMIT) != 0 ||
		    qpio_qp_post_send(w->snd.qp, &wr, 1, &err) != 1 ||
		    qt_poll_n(w->rcv.cq, &wc, 1) != 1 || wc.wr_id != i ||
		    qt_poll_n(w->snd.cq, &wc, 1) != 1 ||
		    wc.status != QPIO_WC_SUCCESS)
			w->fails++;
	}
	return 0;
}

Test(async, two_lcores_raise_events_into_one_ring, .timeout = 120)
{
	struct qpio_device *d0 = qpio_rdma_dev_create("soft0");
	struct qpio_device *d1 = qpio_rdma_dev_create("soft1");
	unsigned int lcore = rte_get_next_lcore(-1, 1, 0), n[2] = { 0, 0 }, k;
	struct ev_worker w[2];
	struct qpio_async_event ev;

	cr_assert_lt(lcore, RTE_MAX_LCORE, "needs a second lcore (-l 0-1)");
	cr_assert(d0 != NULL && d1 != NULL);
	for (k = 0; k < 2; k++) {
		memset(&w[k], 0, sizeof(w[k]));
		ev_worker_create(&w[k], d0, d1);
	}
	cr_assert_eq(rte_eal_remote_launch(ev_worker_main, &w[1], lcore), 0);
	ev_worker_main(&w[0]);
	cr_assert_eq(rte_eal_wait_lcore(lcore), 0);
	cr_assert_eq(w[0].fails + w[1].fails, 0);
	while (next_event(d1, &ev) == 0) {
		cr_assert_eq(ev.event_type, QPIO_EVENT_SRQ_LIMIT_REACHED);
		cr_assert(ev.element.srq == w[0].srq || ev.element.srq == w[1].srq);
		n[ev.element.srq == w[1].srq]++;
	}
	cr_assert_eq(n[0], 100);
	cr_assert_eq(n[1], 100);
	cr_assert_eq(qpio_rdma_async_events_lost(d1), 0);
	cr_assert_eq(fd_count(qpio_rdma_async_event_fd(d1)), 200);
	cr_assert_eq(next_event(d0, &ev), -EAGAIN);
	for (k = 0; k < 2; k++) {
		qt_end_destroy(&w[k].snd);
		cr_assert_eq(qpio_qp_destroy(w[k].rcv.qp), 0);
		cr_assert_eq(qpio_srq_destroy(w[k].srq), 0);
		cr_assert_eq(qpio_mr_dereg(w[k].rcv.mr), 0);
		cr_assert_eq(qpio_cq_destroy(w[k].rcv.cq), 0);
		cr_assert_eq(qpio_pd_free(w[k].rcv.pd), 0);
		rte_free(w[k].rcv.buf);
	}
	cr_assert_eq(qpio_rdma_dev_close(d0), 0);
	cr_assert_eq(qpio_rdma_dev_close(d1), 0);
}
