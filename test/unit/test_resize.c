/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Resizing on the soft NIC: qpio_cq_resize() (ibv_resize_cq) and
 * qpio_srq_modify() with QPIO_SRQ_MAX_WR (ibv_modify_srq). Completions
 * and posted receives survive in order, sizes below what the queue holds
 * are refused and leave it unchanged, the granted sizes are exact.
 */
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "test_common.h"

TestSuite(resize, .init = qt_eal_init, .fini = qt_eal_fini);

/* a sends n signaled SENDs of 8 + i bytes (wr_id base + i) into receives
 * b posted at offsets 64 * i (wr_id rbase + i); a's send completions are
 * polled, b's receive completions stay in b's CQ. */
static void
send_n(struct qt_end *a, struct qt_end *b, unsigned int n, uint64_t base,
       uint64_t rbase)
{
	struct qpio_wc wc[64];
	unsigned int i;

	for (i = 0; i < n; i++)
		qt_post_recv(b, rbase + i, b->buf + 64 * i, 64);
	for (i = 0; i < n; i++) {
		struct qpio_sge sge = { (uintptr_t)a->buf + 64 * i, 8 + i,
					qpio_mr_lkey(a->mr) };
		struct qpio_send_wr wr = qt_send_wr(base + i, &sge, 1,
						    QPIO_SEND_SIGNALED);
		int err = 1;

		qt_fill(a->buf + 64 * i, 8 + i, (uint32_t)(base + i));
		cr_assert_eq(qpio_qp_post_send(a->qp, &wr, 1, &err), 1);
		cr_assert_eq(err, 0);
	}
	cr_assert_eq(qt_poll_n(a->cq, wc, n), n);
	for (i = 0; i < n; i++) {
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[i].wr_id, base + i);
	}
}

/* Poll n receive completions from b and check their order and bytes. */
static void
expect_recv_n(struct qt_end *b, unsigned int n, uint64_t base,
	      uint64_t rbase)
{
	struct qpio_wc wc[64];
	unsigned int i;

	cr_assert_eq(qt_poll_n(b->cq, wc, n), n);
	for (i = 0; i < n; i++) {
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS, "wc %u: %d", i,
			     (int)wc[i].status);
		cr_assert_eq(wc[i].opcode, QPIO_WC_RECV);
		cr_assert_eq(wc[i].wr_id, rbase + i, "wc %u: wr_id %lu", i,
			     (unsigned long)wc[i].wr_id);
		cr_assert_eq(wc[i].byte_len, 8 + i);
		cr_assert_eq(wc[i].qp_num, qpio_qp_num(b->qp));
		cr_assert(qt_check(b->buf + 64 * i, 8 + i, (uint32_t)(base + i)));
	}
	cr_assert_eq(qpio_cq_poll(b->cq, wc, 1), 0, "nothing more");
}

Test(resize, cq_keeps_completions_in_order)
{
	struct qt_pair_opts o = { .cqe = 16 };
	struct qt_end a, b;
	struct qpio_wc wc[1];

	qt_require_soft("the soft NIC's CQ ring and its exact depths");
	qt_pair_create(&a, &b, &o);
	cr_assert_eq(qpio_cq_depth(b.cq), 16);
	/* The sender's CQ takes up to 40 send completions. */
	cr_assert_eq(qpio_cq_resize(a.cq, 40), 64);
	/* Fill 12 and drain them, so the next 10 wrap the 16-entry ring
	 * (indices 12..21: owner bit flips at 16). */
	send_n(&a, &b, 12, 1000, 2000);
	expect_recv_n(&b, 12, 1000, 2000);
	send_n(&a, &b, 10, 3000, 4000);
	/* 10 held: 8 is below the occupancy, refused, nothing changes. */
	cr_assert_eq(qpio_cq_resize(b.cq, 8), -EINVAL);
	cr_assert_eq(qpio_cq_depth(b.cq), 16);
	/* 10 rounds up to 16: granted as it is. */
	cr_assert_eq(qpio_cq_resize(b.cq, 10), 16);
	cr_assert_eq(qpio_cq_resize(b.cq, 33), 64);
	cr_assert_eq(qpio_cq_depth(b.cq), 64);
	expect_recv_n(&b, 10, 3000, 4000);
	/* The grown CQ takes more than the old depth held. */
	send_n(&a, &b, 40, 5000, 6000);
	cr_assert_eq(qpio_cq_resize(b.cq, 39), -EINVAL, "40 held");
	cr_assert_eq(qpio_cq_resize(b.cq, 40), 64);
	expect_recv_n(&b, 40, 5000, 6000);
	/* Empty: shrinks to the smallest depth, 2, and laps it. */
	cr_assert_eq(qpio_cq_resize(b.cq, 1), 2);
	cr_assert_eq(qpio_cq_depth(b.cq), 2);
	send_n(&a, &b, 2, 7000, 8000);
	expect_recv_n(&b, 2, 7000, 8000);
	send_n(&a, &b, 2, 7100, 8100);
	expect_recv_n(&b, 2, 7100, 8100);
	send_n(&a, &b, 1, 7200, 8200);
	/* 1 held at index 4 (slot 0, owner 0): grow keeps it. */
	cr_assert_eq(qpio_cq_resize(b.cq, 4), 4);
	expect_recv_n(&b, 1, 7200, 8200);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 1), 0);
	qt_pair_destroy(&a, &b);
}

Test(resize, cq_refuses_misuse)
{
	struct qpio_device *d = qpio_rdma_dev_create("soft0");
	struct qpio_device_attr da;
	struct qpio_cq *cq;

	cr_assert_not_null(d);
	cr_assert_eq(qpio_rdma_dev_query(d, &da), 0);
	cq = qpio_cq_create(d, 100, SOCKET_ID_ANY);
	cr_assert_not_null(cq);
	cr_assert_eq(qpio_cq_depth(cq), 128);
	cr_assert_eq(qpio_cq_resize(NULL, 8), -EINVAL);
	cr_assert_eq(qpio_cq_resize(cq, 0), -EINVAL, "cqe 0");
	cr_assert_eq(qpio_cq_resize(cq, da.max_cqe + 1), -EINVAL,
		     "over max_cqe");
	cr_assert_eq(qpio_cq_depth(cq), 128, "refused resizes change nothing");
	cr_assert_eq(qpio_cq_resize(cq, da.max_cqe), (int)da.max_cqe);
	cr_assert_eq(qpio_cq_depth(cq), da.max_cqe);
	/* The event fd survives a resize. */
	cr_assert_geq(qpio_cq_event_fd(cq), 0);
	cr_assert_eq(qpio_cq_req_notify(cq, 0), 0);
	cr_assert_eq(qpio_cq_ack_events(cq), 0);
	cr_assert_eq(qpio_cq_destroy(cq), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

/* Receiver with an SRQ of srq_wr entries and one RC QP on it, taking
 * SENDs from a sender on device A. */
struct srq_pair {
	struct qt_end snd;
	struct qpio_device *dev;
	struct qpio_pd *pd;
	struct qpio_srq *srq;
	struct qpio_cq *cq;
	struct qpio_qp *qp;
	struct qpio_mr *mr;
	uint8_t *buf;
};

static void
srq_pair_create(struct srq_pair *p, uint32_t srq_wr)
{
	struct qpio_srq_attr sa = { .max_wr = srq_wr, .max_sge = 1 };
	struct qpio_qp_init_attr ia;
	struct qpio_device *da;

	memset(p, 0, sizeof(*p));
	da = qpio_rdma_dev_create(qt_dev_a());
	cr_assert_not_null(da);
	p->dev = qt_dev_open_b(da);
	p->pd = qpio_pd_alloc(p->dev);
	p->buf = rte_zmalloc("srq_rbuf", 1 << 16, 64);
	cr_assert(p->pd != NULL && p->buf != NULL);
	p->mr = qpio_mr_reg(p->pd, p->buf, 1 << 16, QPIO_ACCESS_ALL);
	p->srq = qpio_srq_create(p->pd, &sa);
	p->cq = qpio_cq_create(p->dev, 256, SOCKET_ID_ANY);
	cr_assert(p->mr != NULL && p->srq != NULL && p->cq != NULL);
	cr_assert_eq(sa.max_wr, srq_wr);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = p->cq;
	ia.recv_cq = p->cq;
	ia.srq = p->srq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap.max_send_wr = 16;
	ia.cap.max_send_sge = 1;
	p->qp = qpio_qp_create(p->pd, &ia);
	cr_assert_not_null(p->qp);
	p->snd.dev = da;
	p->snd.pd = qpio_pd_alloc(da);
	p->snd.cq = qpio_cq_create(da, 256, SOCKET_ID_ANY);
	p->snd.buf_len = 1 << 16;
	p->snd.buf = rte_zmalloc("srq_sbuf", p->snd.buf_len, 64);
	cr_assert(p->snd.pd != NULL && p->snd.cq != NULL && p->snd.buf != NULL);
	p->snd.mr = qpio_mr_reg(p->snd.pd, p->snd.buf, p->snd.buf_len,
				QPIO_ACCESS_ALL);
	cr_assert_not_null(p->snd.mr);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = p->snd.cq;
	ia.recv_cq = p->snd.cq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap = (struct qpio_qp_cap){ 64, 4, 1, 1, 64 };
	p->snd.qp = qpio_qp_create(p->snd.pd, &ia);
	cr_assert_not_null(p->snd.qp);
	qt_qp_connect(p->snd.qp, p->dev, qpio_qp_num(p->qp), 7);
	qt_qp_connect(p->qp, da, qpio_qp_num(p->snd.qp), 7);
}

static void
srq_pair_destroy(struct srq_pair *p)
{
	struct qpio_device *da = p->snd.dev;

	qt_end_destroy(&p->snd);
	cr_assert_eq(qpio_qp_destroy(p->qp), 0);
	cr_assert_eq(qpio_cq_destroy(p->cq), 0);
	cr_assert_eq(qpio_srq_destroy(p->srq), 0);
	cr_assert_eq(qpio_mr_dereg(p->mr), 0);
	cr_assert_eq(qpio_pd_free(p->pd), 0);
	rte_free(p->buf);
	if (da != p->dev)
		cr_assert_eq(qpio_rdma_dev_close(da), 0);
	cr_assert_eq(qpio_rdma_dev_close(p->dev), 0);
}

/* Post receive wr_id at offset 64 * (wr_id % 512) of the receive buffer.
 * @return the post's err code. */
static int
srq_post(struct srq_pair *p, uint64_t wr_id)
{
	struct qpio_sge sge = { (uintptr_t)p->buf + 64 * (wr_id % 512), 64,
				qpio_mr_lkey(p->mr) };
	struct qpio_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				   .num_sge = 1 };
	int err = 1;

	qpio_srq_post_recv(p->srq, &wr, 1, &err);
	return err;
}

/* Send n SENDs of 4 + i bytes (seed seed + i) and poll the sender's
 * completions. */
static void
srq_send_n(struct srq_pair *p, unsigned int n, uint32_t seed)
{
	struct qpio_wc wc[64];
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct qpio_sge sge = { (uintptr_t)p->snd.buf + 64 * i, 4 + i,
					qpio_mr_lkey(p->snd.mr) };
		struct qpio_send_wr wr = qt_send_wr(i, &sge, 1,
						    QPIO_SEND_SIGNALED);
		int err = 1;

		qt_fill(p->snd.buf + 64 * i, 4 + i, seed + i);
		cr_assert_eq(qpio_qp_post_send(p->snd.qp, &wr, 1, &err), 1);
		cr_assert_eq(err, 0);
	}
	cr_assert_eq(qt_poll_n(p->snd.cq, wc, n), n);
	for (i = 0; i < n; i++)
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS, "send %u: %d", i,
			     (int)wc[i].status);
}

/* Poll n receives: wr_ids first..first+n-1 in order, with the bytes of
 * srq_send_n(seed). */
static void
srq_expect_n(struct srq_pair *p, unsigned int n, uint64_t first, uint32_t seed)
{
	struct qpio_wc wc[64];
	unsigned int i;

	cr_assert_eq(qt_poll_n(p->cq, wc, n), n);
	for (i = 0; i < n; i++) {
		uint64_t id = first + i;

		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[i].wr_id, id, "wc %u: wr_id %lu", i,
			     (unsigned long)wc[i].wr_id);
		cr_assert_eq(wc[i].byte_len, 4 + i);
		cr_assert(qt_check(p->buf + 64 * (id % 512), 4 + i, seed + i));
	}
}

static uint32_t
srq_max_wr(struct srq_pair *p)
{
	struct qpio_srq_attr q;

	cr_assert_eq(qpio_srq_query(p->srq, &q), 0);
	return q.max_wr;
}

Test(resize, srq_keeps_posted_receives)
{
	struct qpio_srq_attr m = { 0 };
	struct srq_pair p;
	unsigned int i;

	qt_require_soft("the soft NIC resizes SRQs (rxe: see the ibv guide)");
	srq_pair_create(&p, 16);
	for (i = 0; i < 10; i++)
		cr_assert_eq(srq_post(&p, 100 + i), 0);
	m.max_wr = 8;
	cr_assert_eq(qpio_srq_modify(p.srq, &m, QPIO_SRQ_MAX_WR), -EINVAL,
		     "10 posted, 8 asked");
	cr_assert_eq(srq_max_wr(&p), 16, "refused: unchanged");
	m.max_wr = 20;
	cr_assert_eq(qpio_srq_modify(p.srq, &m, QPIO_SRQ_MAX_WR), 0);
	cr_assert_eq(srq_max_wr(&p), 32, "granted: 20 rounded up");
	/* 22 more fit now (32 in all), the 33rd does not. */
	for (i = 10; i < 32; i++)
		cr_assert_eq(srq_post(&p, 100 + i), 0, "post %u", i);
	cr_assert_eq(srq_post(&p, 999), -ENOMEM, "SRQ full at 32");
	srq_send_n(&p, 32, 77);
	srq_expect_n(&p, 32, 100, 77);
	/* Receives taken but not polled block a resize (-EBUSY). */
	for (i = 0; i < 3; i++)
		cr_assert_eq(srq_post(&p, 200 + i), 0);
	srq_send_n(&p, 1, 5);
	m.max_wr = 64;
	cr_assert_eq(qpio_srq_modify(p.srq, &m, QPIO_SRQ_MAX_WR), -EBUSY);
	cr_assert_eq(srq_max_wr(&p), 32);
	srq_expect_n(&p, 1, 200, 5);
	/* 2 posted (at slots 33 and 34 of the old ring): shrink to 2. */
	m.max_wr = 2;
	m.srq_limit = 1;
	cr_assert_eq(qpio_srq_modify(p.srq, &m,
				     QPIO_SRQ_MAX_WR | QPIO_SRQ_LIMIT), 0);
	cr_assert_eq(srq_max_wr(&p), 2);
	cr_assert_eq(qpio_srq_query(p.srq, &m), 0);
	cr_assert_eq(m.srq_limit, 1, "armed with the resize");
	cr_assert_eq(srq_post(&p, 300), -ENOMEM, "2 posted fill 2");
	srq_send_n(&p, 2, 9);
	srq_expect_n(&p, 2, 201, 9);
	cr_assert_eq(qpio_srq_query(p.srq, &m), 0);
	cr_assert_eq(m.srq_limit, 0, "the last receive fired the limit");
	/* Slots come back after polling: 2 more fit. */
	cr_assert_eq(srq_post(&p, 301), 0);
	cr_assert_eq(srq_post(&p, 302), 0);
	cr_assert_eq(srq_post(&p, 303), -ENOMEM);
	srq_send_n(&p, 2, 11);
	srq_expect_n(&p, 2, 301, 11);
	srq_pair_destroy(&p);
}

Test(resize, srq_refuses_misuse)
{
	struct qpio_srq_attr m = { 0 };
	struct qpio_device_attr da;
	struct srq_pair p;

	qt_require_soft("exact soft NIC limits");
	srq_pair_create(&p, 16);
	cr_assert_eq(qpio_rdma_dev_query(p.dev, &da), 0);
	m.max_wr = 0;
	cr_assert_eq(qpio_srq_modify(p.srq, &m, QPIO_SRQ_MAX_WR), -EINVAL);
	m.max_wr = da.max_srq_wr + 1;
	cr_assert_eq(qpio_srq_modify(p.srq, &m, QPIO_SRQ_MAX_WR), -EINVAL);
	cr_assert_eq(qpio_srq_modify(NULL, &m, QPIO_SRQ_MAX_WR), -EINVAL);
	cr_assert_eq(srq_max_wr(&p), 16);
	m.max_wr = da.max_srq_wr;
	cr_assert_eq(qpio_srq_modify(p.srq, &m, QPIO_SRQ_MAX_WR), 0);
	cr_assert_eq(srq_max_wr(&p), da.max_srq_wr);
	srq_pair_destroy(&p);
}

/* A destroyed CQ is not resized: -EINVAL, not a crash on its freed
 * device pointer; nor a handle of another kind. */
Test(resize, destroyed_cq_refused)
{
	struct qpio_device *d = qpio_rdma_dev_create(qt_dev_a());
	struct qpio_cq *cq;
	struct qpio_pd *pd;

	cr_assert_not_null(d);
	cq = qpio_cq_create(d, 16, SOCKET_ID_ANY);
	pd = qpio_pd_alloc(d);
	cr_assert(cq != NULL && pd != NULL);
	cr_assert_eq(qpio_cq_destroy(cq), 0);
	cr_assert_eq(qpio_cq_resize(cq, 32), -EINVAL);
	cr_assert_eq(qpio_cq_resize((struct qpio_cq *)pd, 32), -EINVAL);
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}
