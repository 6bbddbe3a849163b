/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared receive queues on the soft NIC: the API's rules and codes, QPs
 * taking receives from one SRQ in posting order, the limit event, and
 * senders on two lcores delivering into one SRQ and one CQ at once.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "test_common.h"

TestSuite(srq, .init = qt_eal_init, .fini = qt_eal_fini);

/* Receiver side: one device, PD, MR, SRQ, and nqp QPs on it. */
#define MAX_QPS 4

struct srq_env {
	struct qpio_device *dev;          /* receiver device (B) */
	struct qpio_pd *pd;
	struct qpio_srq *srq;
	struct qpio_mr *mr;
	uint8_t *buf;
	size_t buf_len;
	unsigned int nqp;
	struct qpio_cq *rcq[MAX_QPS];     /* receive CQs (maybe shared) */
	struct qpio_cq *scq;              /* send CQ of the SRQ QPs */
	struct qpio_qp *qp[MAX_QPS];      /* SRQ QPs */
	struct qt_end snd[MAX_QPS];       /* a sender per SRQ QP, on device A */
	struct qpio_device *sdev;
};

struct srq_opts {
	uint32_t srq_wr;        /* [64] */
	uint32_t srq_sge;       /* [2] */
	unsigned int nqp;       /* [2] */
	int shared_rcq;         /* one receive CQ for every SRQ QP */
	uint32_t rcq_cqe;       /* [1024] */
	uint32_t snd_wr;        /* [64] */
	uint8_t rnr_retry;      /* as given */
	enum qpio_qp_type type; /* [RC] */
};

/* QP i of type on the SRQ (receive CQ rcq[i], send CQ scq, 16 send WRs
 * of one SGE), left in RESET; it has no RQ of its own. */
static void
srq_qp_create(struct srq_env *e, unsigned int i, enum qpio_qp_type type)
{
	struct qpio_qp_init_attr ia;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = e->scq;
	ia.recv_cq = e->rcq[i];
	ia.srq = e->srq;
	ia.qp_type = type;
	ia.cap.max_send_wr = 16;
	ia.cap.max_send_sge = 1;
	e->qp[i] = qpio_qp_create(e->pd, &ia);
	cr_assert_not_null(e->qp[i], "qp_create: %s", rte_strerror(rte_errno));
	cr_assert_eq(ia.cap.max_recv_wr, 0);
	cr_assert_eq(ia.cap.max_recv_sge, 0);
}

static void
srq_env_create(struct srq_env *e, const struct srq_opts *o)
{
	struct qpio_srq_attr sa = { .max_wr = o->srq_wr ? o->srq_wr : 64,
				    .max_sge = o->srq_sge ? o->srq_sge : 2 };
	struct qt_pair_opts so = { .max_send_wr = o->snd_wr ? o->snd_wr : 64,
				   .cqe = 1024, .rnr_retry = o->rnr_retry,
				   .type = o->type ? o->type : QPIO_QPT_RC };
	enum qpio_qp_type type = o->type ? o->type : QPIO_QPT_RC;
	unsigned int i;

	memset(e, 0, sizeof(*e));
	e->nqp = o->nqp ? o->nqp : 2;
	e->sdev = qpio_rdma_dev_create(qt_dev_a());
	cr_assert_not_null(e->sdev, "%s: %s", qt_dev_a(), rte_strerror(rte_errno));
	e->dev = qt_dev_open_b(e->sdev);
	e->pd = qpio_pd_alloc(e->dev);
	cr_assert_not_null(e->pd);
	e->buf_len = 1 << 20;
	e->buf = rte_zmalloc("srq_buf", e->buf_len, 64);
	cr_assert_not_null(e->buf);
	e->mr = qpio_mr_reg(e->pd, e->buf, e->buf_len, QPIO_ACCESS_ALL);
	cr_assert_not_null(e->mr);
	e->srq = qpio_srq_create(e->pd, &sa);
	cr_assert_not_null(e->srq, "srq_create: %s", rte_strerror(rte_errno));
	e->scq = qpio_cq_create(e->dev, 1024, SOCKET_ID_ANY);
	cr_assert_not_null(e->scq);
	for (i = 0; i < e->nqp; i++) {
		if (i == 0 || !o->shared_rcq) {
			e->rcq[i] = qpio_cq_create(e->dev, o->rcq_cqe ? o->rcq_cqe : 1024,
						   SOCKET_ID_ANY);
			cr_assert_not_null(e->rcq[i]);
		} else {
			e->rcq[i] = e->rcq[0];
		}
		srq_qp_create(e, i, type);
	}
	for (i = 0; i < e->nqp; i++) {
		struct qpio_qp_init_attr ia;
		struct qt_end *s = &e->snd[i];

		memset(s, 0, sizeof(*s));
		s->dev = e->sdev;
		s->pd = qpio_pd_alloc(e->sdev);
		s->cq = qpio_cq_create(e->sdev, so.cqe, SOCKET_ID_ANY);
		s->buf_len = 1 << 18;
		s->buf = rte_zmalloc("snd_buf", s->buf_len, 64);
		cr_assert(s->pd != NULL && s->cq != NULL && s->buf != NULL);
		s->mr = qpio_mr_reg(s->pd, s->buf, s->buf_len, QPIO_ACCESS_ALL);
		cr_assert_not_null(s->mr);
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = s->cq;
		ia.recv_cq = s->cq;
		ia.qp_type = so.type;
		ia.cap = (struct qpio_qp_cap){ so.max_send_wr, 4, 1, 1, 64 };
		s->qp = qpio_qp_create(s->pd, &ia);
		cr_assert_not_null(s->qp);
		if (type != QPIO_QPT_UD) {
			qt_qp_connect(s->qp, e->dev, qpio_qp_num(e->qp[i]), so.rnr_retry);
			qt_qp_connect(e->qp[i], e->sdev, qpio_qp_num(s->qp), so.rnr_retry);
		}
	}
}

static void
srq_env_destroy(struct srq_env *e)
{
	unsigned int i;

	for (i = 0; i < e->nqp; i++) {
		qt_end_destroy(&e->snd[i]);
		cr_assert_eq(qpio_qp_destroy(e->qp[i]), 0);
	}
	for (i = 0; i < e->nqp; i++)
		if (i == 0 || e->rcq[i] != e->rcq[0])
			cr_assert_eq(qpio_cq_destroy(e->rcq[i]), 0);
	cr_assert_eq(qpio_cq_destroy(e->scq), 0);
	cr_assert_eq(qpio_srq_destroy(e->srq), 0);
	cr_assert_eq(qpio_mr_dereg(e->mr), 0);
	cr_assert_eq(qpio_pd_free(e->pd), 0);
	rte_free(e->buf);
	if (e->dev != e->sdev)
		cr_assert_eq(qpio_rdma_dev_close(e->sdev), 0);
	cr_assert_eq(qpio_rdma_dev_close(e->dev), 0);
}

/* Post one receive of len bytes at offset off of e->buf to the SRQ. */
static void
srq_post1(struct srq_env *e, uint64_t wr_id, size_t off, uint32_t len)
{
	struct qpio_sge sge = { (uintptr_t)e->buf + off, len, qpio_mr_lkey(e->mr) };
	struct qpio_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	int err = 1;

	cr_assert_eq(qpio_srq_post_recv(e->srq, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);
}

/* Sender i sends len bytes (pattern seed) as one signaled SEND. */
static void
send1(struct srq_env *e, unsigned int i, uint64_t wr_id, uint32_t len,
      uint32_t seed)
{
	struct qt_end *s = &e->snd[i];
	struct qpio_sge sge = { (uintptr_t)s->buf, len, qpio_mr_lkey(s->mr) };
	struct qpio_send_wr wr = qt_send_wr(wr_id, &sge, 1, QPIO_SEND_SIGNALED);
	int err = 1;

	qt_fill(s->buf, len, seed);
	cr_assert_eq(qpio_qp_post_send(s->qp, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);
}

static int
next_event(struct qpio_device *dev, struct qpio_async_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	return qpio_rdma_get_async_event(dev, ev);
}

/* rxe (Linux 6.1) raises no QP_LAST_WQE_REACHED: check that none comes
 * within 1 s. The soft NIC raises it at once. */
static void
expect_last_wqe(struct srq_env *e, struct qpio_qp *qp)
{
	struct qpio_async_event ev;
	unsigned int i;

	if (qt_dev_is_rxe()) {
		for (i = 0; i < 100; i++) {
			cr_assert_eq(next_event(e->dev, &ev), -EAGAIN,
				     "rxe raised event %d",
				     (int)ev.event_type);
			usleep(10000);
		}
		return;
	}
	cr_assert_eq(next_event(e->dev, &ev), 0);
	cr_assert_eq(ev.event_type, QPIO_EVENT_QP_LAST_WQE_REACHED);
	cr_assert_eq(ev.element.qp, qp);
	cr_assert_eq(next_event(e->dev, &ev), -EAGAIN);
}

/* An expected event: the soft NIC has raised it by now; other devices
 * raise it a little later, so wait up to 5 s. */
static int
wait_event(struct qpio_device *dev, struct qpio_async_event *ev)
{
	unsigned int i;
	int ret = next_event(dev, ev);

	for (i = 0; i < 5000 && ret == -EAGAIN && !qt_dev_is_soft(); i++) {
		usleep(1000);
		ret = next_event(dev, ev);
	}
	return ret;
}

Test(srq, device_reports_limits_and_max_srq)
{
	struct qpio_device *d0, *d1, *d2;
	struct qpio_device_attr a;
	struct qpio_srq_attr sa = { .max_wr = 4, .max_sge = 1 };
	struct qpio_srq *s[3];
	struct qpio_pd *pd;

	d0 = qpio_rdma_dev_create("soft0");
	cr_assert_not_null(d0);
	cr_assert_eq(qpio_rdma_dev_query(d0, &a), 0);
	cr_assert_eq(a.max_srq, 64);
	cr_assert_eq(a.max_srq_wr, 4096);
	cr_assert_eq(a.max_srq_sge, 16);
	d1 = qpio_rdma_dev_create("soft1,max_srq=0");
	cr_assert_not_null(d1);
	cr_assert_eq(qpio_rdma_dev_query(d1, &a), 0);
	cr_assert_eq(a.max_srq, 0);
	cr_assert_eq(a.max_srq_wr, 0);
	cr_assert_eq(a.max_srq_sge, 0);
	pd = qpio_pd_alloc(d1);
	rte_errno = 0;
	cr_assert_null(qpio_srq_create(pd, &sa));
	cr_assert_eq(rte_errno, EOPNOTSUPP);
	cr_assert_eq(qpio_pd_free(pd), 0);
	d2 = qpio_rdma_dev_create("soft2,max_srq=2,max_qp_wr=512,max_sge=3");
	cr_assert_not_null(d2);
	cr_assert_eq(qpio_rdma_dev_query(d2, &a), 0);
	cr_assert_eq(a.max_srq, 2);
	cr_assert_eq(a.max_srq_wr, 512);
	cr_assert_eq(a.max_srq_sge, 3);
	pd = qpio_pd_alloc(d2);
	s[0] = qpio_srq_create(pd, &sa);
	s[1] = qpio_srq_create(pd, &sa);
	cr_assert(s[0] != NULL && s[1] != NULL);
	cr_assert_neq(qpio_srq_num(s[0]), qpio_srq_num(s[1]));
	rte_errno = 0;
	s[2] = qpio_srq_create(pd, &sa);
	cr_assert_null(s[2]);
	cr_assert_eq(rte_errno, ENOSPC);
	cr_assert_eq(qpio_pd_free(pd), -EBUSY, "an SRQ keeps its PD busy");
	cr_assert_eq(qpio_srq_destroy(s[0]), 0);
	cr_assert_eq(qpio_srq_destroy(s[1]), 0);
	cr_assert_eq(qpio_pd_free(pd), 0);
	rte_errno = 0;
	cr_assert_null(qpio_rdma_dev_create("soft3,max_srq=4097"));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_eq(qpio_rdma_dev_close(d2), 0);
	cr_assert_eq(qpio_rdma_dev_close(d1), 0);
	cr_assert_eq(qpio_rdma_dev_close(d0), 0);
}

Test(srq, create_checks_and_writes_back_sizes)
{
	struct qpio_device *d = qpio_rdma_dev_create("soft0,max_qp_wr=1024");
	struct qpio_pd *pd = qpio_pd_alloc(d);
	struct qpio_srq_attr sa, q;
	struct qpio_srq *srq;

	cr_assert_not_null(pd);
	sa = (struct qpio_srq_attr){ .max_wr = 1, .max_sge = 1 };
	rte_errno = 0;
	cr_assert_null(qpio_srq_create(NULL, &sa));
	cr_assert_eq(rte_errno, EINVAL);
	rte_errno = 0;
	cr_assert_null(qpio_srq_create(pd, NULL));
	cr_assert_eq(rte_errno, EINVAL);
	sa = (struct qpio_srq_attr){ .max_wr = 0, .max_sge = 1 };
	rte_errno = 0;
	cr_assert_null(qpio_srq_create(pd, &sa));
	cr_assert_eq(rte_errno, EINVAL);
	sa = (struct qpio_srq_attr){ .max_wr = 1025, .max_sge = 1 };
	rte_errno = 0;
	cr_assert_null(qpio_srq_create(pd, &sa));
	cr_assert_eq(rte_errno, EINVAL);
	sa = (struct qpio_srq_attr){ .max_wr = 8, .max_sge = 17 };
	rte_errno = 0;
	cr_assert_null(qpio_srq_create(pd, &sa));
	cr_assert_eq(rte_errno, EINVAL);

	/* 100 -> 128 entries, 0 SGEs -> 1, srq_limit ignored at create */
	sa = (struct qpio_srq_attr){ .max_wr = 100, .max_sge = 0, .srq_limit = 7 };
	srq = qpio_srq_create(pd, &sa);
	cr_assert_not_null(srq);
	cr_assert_eq(sa.max_wr, 128);
	cr_assert_eq(sa.max_sge, 1);
	cr_assert_eq(sa.srq_limit, 0);
	memset(&q, 0xff, sizeof(q));
	cr_assert_eq(qpio_srq_query(srq, &q), 0);
	cr_assert_eq(q.max_wr, 128);
	cr_assert_eq(q.max_sge, 1);
	cr_assert_eq(q.srq_limit, 0);
	cr_assert_eq(qpio_srq_query(NULL, &q), -EINVAL);
	cr_assert_eq(qpio_srq_query(srq, NULL), -EINVAL);
	cr_assert_eq(qpio_srq_destroy(NULL), -EINVAL);
	cr_assert_eq(qpio_srq_destroy(srq), 0);
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

Test(srq, modify_arms_limit_checks_resize)
{
	struct qpio_device *d = qpio_rdma_dev_create("soft0");
	struct qpio_pd *pd = qpio_pd_alloc(d);
	struct qpio_srq_attr sa = { .max_wr = 16, .max_sge = 1 }, m, q;
	struct qpio_srq *srq = qpio_srq_create(pd, &sa);

	cr_assert_not_null(srq);
	memset(&m, 0, sizeof(m));
	m.srq_limit = 17;
	cr_assert_eq(qpio_srq_modify(srq, &m, QPIO_SRQ_LIMIT), -EINVAL,
		     "limit over max_wr");
	cr_assert_eq(qpio_srq_modify(srq, &m, 1 << 2), -EINVAL, "unknown bit");
	m.max_wr = 8;
	m.srq_limit = 12;
	cr_assert_eq(qpio_srq_modify(srq, &m, QPIO_SRQ_MAX_WR | QPIO_SRQ_LIMIT),
		     -EINVAL, "limit over the new max_wr");
	m.srq_limit = 17;
	cr_assert_eq(qpio_srq_modify(NULL, &m, QPIO_SRQ_LIMIT), -EINVAL);
	cr_assert_eq(qpio_srq_modify(srq, NULL, QPIO_SRQ_LIMIT), -EINVAL);
	cr_assert_eq(qpio_srq_query(srq, &q), 0);
	cr_assert_eq(q.srq_limit, 0, "refused modifies change nothing");
	cr_assert_eq(q.max_wr, 16);
	m.srq_limit = 16;
	cr_assert_eq(qpio_srq_modify(srq, &m, QPIO_SRQ_LIMIT), 0);
	cr_assert_eq(qpio_srq_query(srq, &q), 0);
	cr_assert_eq(q.srq_limit, 16);
	m.srq_limit = 0;
	cr_assert_eq(qpio_srq_modify(srq, &m, QPIO_SRQ_LIMIT), 0);
	cr_assert_eq(qpio_srq_query(srq, &q), 0);
	cr_assert_eq(q.srq_limit, 0);
	cr_assert_eq(qpio_srq_destroy(srq), 0);
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

/* A QP on an SRQ: the SRQ is busy, the QP refuses its own receives, the
 * caps say 0, query names the SRQ; max_recv_wr != 0 or an SRQ of another
 * device is refused. */
Test(srq, qp_on_srq_rules)
{
	struct srq_env e;
	struct srq_opts o = { .nqp = 1, .rnr_retry = 7 };
	struct qpio_qp_attr qa;
	struct qpio_qp_init_attr ia;
	struct qpio_sge sge;
	struct qpio_recv_wr rwr;
	struct qpio_srq_attr sa = { .max_wr = 4, .max_sge = 1 };
	struct qpio_pd *pd0;
	struct qpio_srq *other;
	int err = 0;

	srq_env_create(&e, &o);
	cr_assert_eq(qpio_srq_destroy(e.srq), -EBUSY);
	sge = (struct qpio_sge){ (uintptr_t)e.buf, 64, qpio_mr_lkey(e.mr) };
	rwr = (struct qpio_recv_wr){ .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	cr_assert_eq(qpio_qp_post_recv(e.qp[0], &rwr, 1, &err), 0);
	cr_assert_eq(err, -EINVAL);
	cr_assert_eq(qpio_qp_query(e.qp[0], &qa, &ia), 0);
	cr_assert_eq(ia.srq, e.srq);
	cr_assert_eq(ia.cap.max_recv_wr, 0);
	cr_assert_eq(ia.cap.max_recv_sge, 0);

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = e.scq;
	ia.recv_cq = e.rcq[0];
	ia.srq = e.srq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 1;
	rte_errno = 0;
	cr_assert_null(qpio_qp_create(e.pd, &ia));
	cr_assert_eq(rte_errno, EINVAL);
	/* an SRQ of device A for a QP of device B (one device: skipped) */
	if (e.sdev != e.dev) {
		pd0 = qpio_pd_alloc(e.sdev);
		other = qpio_srq_create(pd0, &sa);
		cr_assert_not_null(other);
		ia.cap.max_recv_wr = 0;
		ia.srq = other;
		rte_errno = 0;
		cr_assert_null(qpio_qp_create(e.pd, &ia));
		cr_assert_eq(rte_errno, EINVAL);
		cr_assert_eq(qpio_srq_destroy(other), 0);
		cr_assert_eq(qpio_pd_free(pd0), 0);
	}
	srq_env_destroy(&e);
}

/* Burst rules of qpio_srq_post_recv(): stop at the first refused WR,
 * -EINVAL for a rule, -ENOMEM when full; a slot is free again once its
 * completion is polled. */
Test(srq, post_burst_partial_full_and_refill)
{
	struct srq_env e;
	struct srq_opts o = { .nqp = 1, .srq_wr = 8, .srq_sge = 2, .rnr_retry = 7 };
	struct qpio_sge sg[3];
	struct qpio_recv_wr w[8];
	struct qpio_soft_srq_stats st;
	struct qpio_wc wc;
	unsigned int i;
	int err = 0;

	srq_env_create(&e, &o);
	for (i = 0; i < 3; i++)
		sg[i] = (struct qpio_sge){ (uintptr_t)e.buf + 64 * i, 64,
					   qpio_mr_lkey(e.mr) };
	for (i = 0; i < 8; i++)
		w[i] = (struct qpio_recv_wr){ .wr_id = i, .sg_list = sg, .num_sge = 1 };
	w[2].num_sge = 3;
	cr_assert_eq(qpio_srq_post_recv(e.srq, w, 4, &err), 2);
	cr_assert_eq(err, -EINVAL);
	w[2].num_sge = 2;
	sg[0].length = 0x80000000u;
	cr_assert_eq(qpio_srq_post_recv(e.srq, &w[2], 1, &err), 0);
	cr_assert_eq(err, -EINVAL, "SGE length bit 31");
	sg[0].length = 64;
	if (qt_dev_is_soft()) {
		/* the soft NIC's reserved lkey (see send/sge_length_bit31_*) */
		sg[0].lkey = 0x100;
		cr_assert_eq(qpio_srq_post_recv(e.srq, &w[2], 1, &err), 0);
		cr_assert_eq(err, -EINVAL, "reserved lkey 0x100");
		sg[0].lkey = qpio_mr_lkey(e.mr);
	}
	cr_assert_eq(qpio_srq_post_recv(e.srq, &w[2], 6, &err), 6);
	cr_assert_eq(err, 0);
	w[0].wr_id = 100;
	cr_assert_eq(qpio_srq_post_recv(e.srq, w, 1, &err), 0);
	cr_assert_eq(err, -ENOMEM);
	if (qt_dev_is_soft()) {
		cr_assert_eq(qpio_soft_srq_stats(e.srq, &st), 0);
		cr_assert_eq(st.posted, 8);
		cr_assert_eq(st.consumed, 0);
	}

	/* one receive taken but not polled: still full */
	send1(&e, 0, 1, 16, 1);
	cr_assert_eq(qpio_srq_post_recv(e.srq, w, 1, &err), 0);
	cr_assert_eq(err, -ENOMEM, "a slot is busy until its completion is polled");
	cr_assert_eq(qt_poll_n(e.rcq[0], &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 0);
	cr_assert_eq(wc.byte_len, 16);
	cr_assert_eq(qpio_srq_post_recv(e.srq, w, 1, &err), 1);
	cr_assert_eq(err, 0);
	if (qt_dev_is_soft()) {
		cr_assert_eq(qpio_soft_srq_stats(e.srq, &st), 0);
		cr_assert_eq(st.posted, 9);
		cr_assert_eq(st.consumed, 1);
	}
	cr_assert_eq(qpio_soft_srq_stats(NULL, &st), -EINVAL);
	cr_assert_eq(qt_poll_n(e.snd[0].cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	srq_env_destroy(&e);
}

/* Two QPs take receives from one SRQ in posting order; each completion
 * lands on the CQ of the QP that took it, with its payload. */
Test(srq, two_qps_take_receives_in_posting_order)
{
	struct srq_env e;
	struct srq_opts o = { .nqp = 2, .rnr_retry = 7 };
	struct qpio_wc wc[4];
	unsigned int i;

	srq_env_create(&e, &o);
	memset(e.buf, 0xee, 4096);
	for (i = 0; i < 4; i++)
		srq_post1(&e, 10 + i, 1024 * i, 512);
	send1(&e, 0, 100, 100, 1000);
	send1(&e, 1, 200, 200, 2000);
	send1(&e, 0, 101, 300, 1001);
	send1(&e, 1, 201, 400, 2001);
	cr_assert_eq(qt_poll_n(e.rcq[0], wc, 2), 2);
	cr_assert_eq(wc[0].wr_id, 10);
	cr_assert_eq(wc[0].byte_len, 100);
	cr_assert_eq(wc[0].qp_num, qpio_qp_num(e.qp[0]));
	cr_assert_eq(wc[0].src_qp, qpio_qp_num(e.snd[0].qp));
	cr_assert_eq(wc[1].wr_id, 12);
	cr_assert_eq(wc[1].byte_len, 300);
	cr_assert_eq(qt_poll_n(e.rcq[1], wc + 2, 2), 2);
	cr_assert_eq(wc[2].wr_id, 11);
	cr_assert_eq(wc[2].byte_len, 200);
	cr_assert_eq(wc[2].qp_num, qpio_qp_num(e.qp[1]));
	cr_assert_eq(wc[2].src_qp, qpio_qp_num(e.snd[1].qp));
	cr_assert_eq(wc[3].wr_id, 13);
	cr_assert_eq(wc[3].byte_len, 400);
	for (i = 0; i < 4; i++)
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
	cr_assert(qt_check(e.buf, 100, 1000));
	cr_assert(qt_check(e.buf + 1024, 200, 2000));
	cr_assert(qt_check(e.buf + 2048, 300, 1001));
	cr_assert(qt_check(e.buf + 3072, 400, 2001));
	cr_assert_eq(e.buf[100], 0xee);
	cr_assert_eq(e.buf[3072 + 400], 0xee);
	cr_assert_eq(qpio_cq_poll(e.rcq[0], wc, 4), 0);
	cr_assert_eq(qpio_cq_poll(e.rcq[1], wc, 4), 0);
	for (i = 0; i < 2; i++) {
		cr_assert_eq(qt_poll_n(e.snd[i].cq, wc, 2), 2);
		cr_assert_eq(wc[0].wr_id, 100 * (i + 1));
		cr_assert_eq(wc[1].wr_id, 100 * (i + 1) + 1);
	}
	srq_env_destroy(&e);
}

/* An empty SRQ makes an RC sender retry (RNR); a receive posted later is
 * taken, once. WRITE_WITH_IMM takes a receive from the SRQ too. */
Test(srq, empty_srq_is_rnr_then_delivered)
{
	struct srq_env e;
	struct srq_opts o = { .nqp = 1, .rnr_retry = 7 };
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc;
	int err;

	srq_env_create(&e, &o);
	send1(&e, 0, 1, 64, 77);
	cr_assert_eq(qpio_cq_poll(e.snd[0].cq, &wc, 1), 0);
	if (qt_dev_is_soft()) /* verbs has no RNR NAK counter */
		cr_assert_geq(qt_stats(e.snd[0].qp).rnr_naks, 1);
	srq_post1(&e, 5, 0, 128);
	cr_assert_eq(qt_poll_n(e.snd[0].cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(qt_poll_n(e.rcq[0], &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 5);
	cr_assert_eq(wc.byte_len, 64);
	cr_assert(qt_check(e.buf, 64, 77));
	cr_assert_eq(qpio_cq_poll(e.rcq[0], &wc, 1), 0);

	srq_post1(&e, 6, 4096, 128);
	sge = (struct qpio_sge){ (uintptr_t)e.snd[0].buf, 32, qpio_mr_lkey(e.snd[0].mr) };
	wr = qt_send_wr(2, &sge, 1, QPIO_SEND_SIGNALED);
	wr.opcode = QPIO_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = 0x5151;
	wr.wr.rdma.remote_addr = (uintptr_t)e.buf + 8192;
	wr.wr.rdma.rkey = qpio_mr_rkey(e.mr);
	cr_assert_eq(qpio_qp_post_send(e.snd[0].qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(e.rcq[0], &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 6);
	cr_assert_eq(wc.opcode, QPIO_WC_RECV_RDMA_WITH_IMM);
	cr_assert_eq(wc.imm_data, 0x5151);
	cr_assert_eq(wc.byte_len, 32);
	cr_assert_eq(qt_poll_n(e.snd[0].cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	srq_env_destroy(&e);
}

/* A receive error on one SRQ QP moves that QP to ERR (with the last-WQE
 * event); the SRQ's other receives stay posted and the other QP keeps
 * taking them. */
Test(srq, short_receive_errors_one_qp_srq_keeps_the_rest)
{
	struct srq_env e;
	struct srq_opts o = { .nqp = 2, .rnr_retry = 7 };
	struct qpio_wc wc;

	srq_env_create(&e, &o);
	memset(e.buf, 0xab, 64);
	srq_post1(&e, 1, 16, 4);
	srq_post1(&e, 2, 1024, 64);
	send1(&e, 0, 10, 8, 3);
	cr_assert_eq(qt_poll_n(e.rcq[0], &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 1);
	/* rxe reports a short receive as LOC_QP_OP_ERR (ibv.rst) */
	cr_assert_eq(wc.status, qt_dev_is_rxe() ? QPIO_WC_LOC_QP_OP_ERR :
		     QPIO_WC_LOC_LEN_ERR);
	for (int i = 0; i < 64; i++)
		cr_assert_eq(e.buf[i], 0xab, "guard byte %d", i);
	cr_assert_eq(qpio_qp_state(e.qp[0]), QPIO_QPS_ERR);
	cr_assert_eq(qpio_cq_poll(e.rcq[0], &wc, 1), 0, "nothing else flushed");
	cr_assert_eq(qt_poll_n(e.snd[0].cq, &wc, 1), 1);
	cr_assert_eq(wc.status, qt_dev_is_rxe() ? QPIO_WC_REM_OP_ERR :
		     QPIO_WC_REM_INV_REQ_ERR);
	expect_last_wqe(&e, e.qp[0]);

	send1(&e, 1, 20, 40, 4);
	cr_assert_eq(qt_poll_n(e.rcq[1], &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 2);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 40);
	cr_assert(qt_check(e.buf + 1024, 40, 4));
	cr_assert_eq(qpio_qp_state(e.qp[1]), QPIO_QPS_RTS);
	srq_env_destroy(&e);
}

/* Moving an SRQ QP to ERR by modify raises the last-WQE event too, and
 * takes none of the SRQ's receives. */
Test(srq, modify_to_err_raises_last_wqe_reached)
{
	struct srq_env e;
	struct srq_opts o = { .nqp = 1, .rnr_retry = 7 };
	struct qpio_qp_attr qa;
	struct qpio_soft_srq_stats st;
	struct qpio_wc wc;

	srq_env_create(&e, &o);
	srq_post1(&e, 1, 0, 64);
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = QPIO_QPS_ERR;
	cr_assert_eq(qpio_qp_modify(e.qp[0], &qa, QPIO_QP_STATE), 0);
	expect_last_wqe(&e, e.qp[0]);
	cr_assert_eq(qpio_cq_poll(e.rcq[0], &wc, 1), 0);
	if (qt_dev_is_soft()) {
		cr_assert_eq(qpio_soft_srq_stats(e.srq, &st), 0);
		cr_assert_eq(st.posted, 1);
		cr_assert_eq(st.consumed, 0);
	}
	srq_env_destroy(&e);
}

/* The limit: armed at 4 with 8 receives posted, the 5th receive taken
 * leaves 3 and raises exactly one SRQ_LIMIT_REACHED; the SRQ is then
 * disarmed (the limit reads 0) and later receives raise nothing. */
Test(srq, limit_event_once_then_disarmed)
{
	struct srq_env e;
	struct srq_opts o = { .nqp = 1, .rnr_retry = 7 };
	struct qpio_srq_attr m = { .srq_limit = 4 }, q;
	struct qpio_async_event ev;
	struct qpio_soft_srq_stats st;
	struct qpio_wc wc[8];
	uint64_t cnt = 0;
	unsigned int i;
	int fd;

	srq_env_create(&e, &o);
	fd = qpio_rdma_async_event_fd(e.dev);
	cr_assert_geq(fd, 0);
	for (i = 0; i < 8; i++)
		srq_post1(&e, i, 256 * i, 256);
	cr_assert_eq(qpio_srq_modify(e.srq, &m, QPIO_SRQ_LIMIT), 0);
	for (i = 0; i < 4; i++)
		send1(&e, 0, i, 8, i);
	cr_assert_eq(qt_poll_n(e.rcq[0], wc, 4), 4);
	cr_assert_eq(next_event(e.dev, &ev), -EAGAIN, "4 left: not below 4");
	/* the soft NIC's event fd is an eventfd counting the events */
	if (qt_dev_is_soft())
		cr_assert_eq(read(fd, &cnt, sizeof(cnt)), -1, "fd not readable yet");
	send1(&e, 0, 4, 8, 4);
	cr_assert_eq(qt_poll_n(e.rcq[0], wc, 1), 1);
	if (qt_dev_is_soft()) {
		cr_assert_eq(read(fd, &cnt, sizeof(cnt)), (ssize_t)sizeof(cnt));
		cr_assert_eq(cnt, 1);
	}
	cr_assert_eq(wait_event(e.dev, &ev), 0);
	cr_assert_eq(ev.event_type, QPIO_EVENT_SRQ_LIMIT_REACHED);
	cr_assert_eq(ev.element.srq, e.srq);
	cr_assert_eq(next_event(e.dev, &ev), -EAGAIN);
	cr_assert_eq(qpio_srq_query(e.srq, &q), 0);
	cr_assert_eq(q.srq_limit, 0, "the event disarms");
	send1(&e, 0, 5, 8, 5);
	send1(&e, 0, 6, 8, 6);
	cr_assert_eq(qt_poll_n(e.rcq[0], wc, 2), 2);
	cr_assert_eq(next_event(e.dev, &ev), -EAGAIN);
	if (qt_dev_is_soft()) {
		cr_assert_eq(qpio_soft_srq_stats(e.srq, &st), 0);
		cr_assert_eq(st.limit_events, 1);
	}
	/* armed while 1 is left (below 2): the next receive taken raises it */
	m.srq_limit = 2;
	cr_assert_eq(qpio_srq_modify(e.srq, &m, QPIO_SRQ_LIMIT), 0);
	cr_assert_eq(next_event(e.dev, &ev), -EAGAIN, "not raised by the arm itself");
	send1(&e, 0, 7, 8, 7);
	cr_assert_eq(qt_poll_n(e.rcq[0], wc, 1), 1);
	cr_assert_eq(wait_event(e.dev, &ev), 0);
	cr_assert_eq(ev.event_type, QPIO_EVENT_SRQ_LIMIT_REACHED);
	cr_assert_eq(qt_poll_n(e.snd[0].cq, wc, 8), 8);
	srq_env_destroy(&e);
}

/* UD QPs on an SRQ: datagrams from two senders land in posting order,
 * payload after the 40-byte GRH space. */
Test(srq, ud_qps_share_an_srq)
{
	struct srq_env e;
	struct srq_opts o = { .nqp = 2, .type = QPIO_QPT_UD, .shared_rcq = 1 };
	struct qpio_qp_attr qa;
	struct qpio_ah *ah[2];
	struct qpio_wc wc[2];
	unsigned int i;
	int err;

	srq_env_create(&e, &o);
	for (i = 0; i < 2; i++) {
		struct qpio_qp *q[2] = { e.qp[i], e.snd[i].qp };

		for (unsigned int k = 0; k < 2; k++) {
			memset(&qa, 0, sizeof(qa));
			qa.qp_state = QPIO_QPS_INIT;
			qa.port_num = 1;
			qa.qkey = 0x22;
			cr_assert_eq(qpio_qp_modify(q[k], &qa, QPIO_QP_STATE |
				QPIO_QP_PKEY_INDEX | QPIO_QP_PORT | QPIO_QP_QKEY), 0);
			qa.qp_state = QPIO_QPS_RTR;
			cr_assert_eq(qpio_qp_modify(q[k], &qa, QPIO_QP_STATE), 0);
			qa.qp_state = QPIO_QPS_RTS;
			cr_assert_eq(qpio_qp_modify(q[k], &qa, QPIO_QP_STATE |
						    QPIO_QP_SQ_PSN), 0);
		}
		ah[i] = qt_ah_create(e.snd[i].pd, e.dev, 0);
	}
	srq_post1(&e, 1, 0, 40 + 100);
	srq_post1(&e, 2, 1024, 40 + 100);
	for (i = 0; i < 2; i++) {
		struct qpio_sge sge = { (uintptr_t)e.snd[i].buf, 50 + 10 * i,
					qpio_mr_lkey(e.snd[i].mr) };
		struct qpio_send_wr wr = qt_ud_wr(i, &sge, 1, QPIO_SEND_SIGNALED,
						  ah[i], qpio_qp_num(e.qp[1 - i]),
						  0x22);

		qt_fill(e.snd[i].buf, sge.length, 90 + i);
		cr_assert_eq(qpio_qp_post_send(e.snd[i].qp, &wr, 1, &err), 1);
	}
	cr_assert_eq(qt_poll_n(e.rcq[0], wc, 2), 2);
	cr_assert_eq(wc[0].wr_id, 1);
	cr_assert_eq(wc[0].byte_len, 40 + 50);
	cr_assert_eq(wc[0].qp_num, qpio_qp_num(e.qp[1]));
	cr_assert_eq(wc[1].wr_id, 2);
	cr_assert_eq(wc[1].byte_len, 40 + 60);
	cr_assert_eq(wc[1].qp_num, qpio_qp_num(e.qp[0]));
	cr_assert(qt_check(e.buf + 40, 50, 90));
	cr_assert(qt_check(e.buf + 1024 + 40, 60, 91));
	for (i = 0; i < 2; i++) {
		cr_assert_eq(qt_poll_n(e.snd[i].cq, wc, 1), 1);
		cr_assert_eq(qpio_ah_destroy(ah[i]), 0);
	}
	srq_env_destroy(&e);
}

/*
 * Concurrency and stress: senders on two lcores post random bursts of
 * 1..64 SENDs (fixed seed) into two QPs that share one SRQ and one
 * receive CQ. The main lcore also keeps the SRQ filled and polls the
 * receive CQ. Every payload is checked, each (sender, sequence) arrives
 * exactly once, and each send and receive wr_id completes exactly once.
 */
#define ST_MSGS   20000u     /* per sender */
#define ST_SQ     128u
#define ST_SRQ    512u
#define ST_LEN    64u

struct st_sender {
	struct qt_end *s;
	uint32_t id;
	uint32_t rng;
	uint32_t posted;
	uint32_t completed;
	uint32_t bad;        /* bad status, order or duplicate */
	volatile int done;
};

static uint32_t
st_rand(uint32_t *x)
{
	*x = *x * 1103515245u + 12345u;
	return *x >> 16;
}

static void
st_payload(uint8_t *p, uint32_t id, uint32_t seq)
{
	memcpy(p, &id, 4);
	memcpy(p + 4, &seq, 4);
	qt_fill(p + 8, ST_LEN - 8, (id << 24) ^ seq);
}

/* One step of a sender: post a burst if there is room, poll its CQ. */
static void
st_sender_step(struct st_sender *w)
{
	struct qpio_send_wr wr[64];
	struct qpio_sge sg[64];
	struct qpio_wc wc[64];
	uint32_t room = ST_SQ - (w->posted - w->completed);
	uint32_t n = 1 + st_rand(&w->rng) % 64, i;
	uint16_t got;

	if (n > room)
		n = room;
	if (n > ST_MSGS - w->posted)
		n = ST_MSGS - w->posted;
	for (i = 0; i < n; i++) {
		uint32_t seq = w->posted + i;
		uint8_t *p = w->s->buf + (seq % ST_SQ) * ST_LEN;

		st_payload(p, w->id, seq);
		sg[i] = (struct qpio_sge){ (uintptr_t)p, ST_LEN, qpio_mr_lkey(w->s->mr) };
		wr[i] = qt_send_wr(seq, &sg[i], 1, QPIO_SEND_SIGNALED);
	}
	if (n > 0) {
		int err = 0;
		uint16_t k = qpio_qp_post_send(w->s->qp, wr, (uint16_t)n, &err);

		if (k != n)
			w->bad++;
		w->posted += k;
	}
	got = qpio_cq_poll(w->s->cq, wc, RTE_DIM(wc));
	for (i = 0; i < got; i++) {
		if (wc[i].status != QPIO_WC_SUCCESS || wc[i].wr_id != w->completed)
			w->bad++;
		w->completed++;
	}
}

static int
st_sender_main(void *arg)
{
	struct st_sender *w = arg;
	uint64_t deadline = rte_get_timer_cycles() + 60 * rte_get_timer_hz();

	while (w->completed < ST_MSGS && rte_get_timer_cycles() < deadline)
		st_sender_step(w);
	w->done = 1;
	return 0;
}

Test(srq, two_lcores_random_bursts_into_one_srq_and_cq, .timeout = 300)
{
	struct srq_env e;
	struct srq_opts o = { .nqp = 2, .shared_rcq = 1, .srq_wr = ST_SRQ,
			      .srq_sge = 1, .rcq_cqe = 2 * ST_SRQ,
			      .snd_wr = ST_SQ, .rnr_retry = 7 };
	struct st_sender w[2];
	unsigned int lcore = rte_get_next_lcore(-1, 1, 0);
	uint8_t *seen[2];
	uint8_t *rx_seen;
	uint16_t *buf_of;          /* receive wr_id -> buffer slot */
	uint16_t freed[ST_SRQ];    /* buffers read, to post again */
	uint32_t nfreed = 0;
	uint64_t next_wr = 0, deadline;
	uint32_t received = 0, bad_payload = 0, dup = 0, bad_wc = 0, i;
	struct qpio_wc wc[64];

	cr_assert_lt(lcore, RTE_MAX_LCORE, "needs a second lcore (-l 0-1)");
	srq_env_create(&e, &o);
	seen[0] = calloc(ST_MSGS, 1);
	seen[1] = calloc(ST_MSGS, 1);
	rx_seen = calloc(2 * ST_MSGS + ST_SRQ, 1);
	buf_of = calloc(2 * ST_MSGS + ST_SRQ, sizeof(*buf_of));
	cr_assert(seen[0] && seen[1] && rx_seen && buf_of);
	/* fill the SRQ: receive wr_id k uses buffer buf_of[k] */
	for (; next_wr < ST_SRQ; next_wr++) {
		buf_of[next_wr] = (uint16_t)next_wr;
		srq_post1(&e, next_wr, next_wr * ST_LEN, ST_LEN);
	}
	for (i = 0; i < 2; i++)
		w[i] = (struct st_sender){ .s = &e.snd[i], .id = i,
					   .rng = 0x5eed + i };
	cr_assert_eq(rte_eal_remote_launch(st_sender_main, &w[1], lcore), 0);
	deadline = rte_get_timer_cycles() + 60 * rte_get_timer_hz();
	while (received < 2 * ST_MSGS && rte_get_timer_cycles() < deadline) {
		uint16_t got, k;

		if (w[0].completed < ST_MSGS)
			st_sender_step(&w[0]);
		got = qpio_cq_poll(e.rcq[0], wc, RTE_DIM(wc));
		for (k = 0; k < got; k++) {
			const uint8_t *p;
			uint32_t id, seq;

			if (wc[k].status != QPIO_WC_SUCCESS ||
			    wc[k].byte_len != ST_LEN ||
			    wc[k].wr_id >= 2 * ST_MSGS + ST_SRQ ||
			    rx_seen[wc[k].wr_id]++ != 0) {
				bad_wc++;
				continue;
			}
			p = e.buf + (size_t)buf_of[wc[k].wr_id] * ST_LEN;
			freed[nfreed++] = buf_of[wc[k].wr_id];
			memcpy(&id, p, 4);
			memcpy(&seq, p + 4, 4);
			if (id > 1 || seq >= ST_MSGS ||
			    wc[k].qp_num != qpio_qp_num(e.qp[id]) ||
			    !qt_check(p + 8, ST_LEN - 8, (id << 24) ^ seq)) {
				bad_payload++;
				continue;
			}
			if (seen[id][seq]++ != 0)
				dup++;
			received++;
		}
		/* Give the buffers read back under new wr_ids: each polled
		 * completion freed one SRQ slot, so every repost fits. */
		while (nfreed > 0) {
			struct qpio_sge sge = {
				(uintptr_t)e.buf + (size_t)freed[nfreed - 1] * ST_LEN,
				ST_LEN, qpio_mr_lkey(e.mr) };
			struct qpio_recv_wr rw = { .wr_id = next_wr,
						   .sg_list = &sge, .num_sge = 1 };
			int err = 0;

			buf_of[next_wr] = freed[nfreed - 1];
			if (qpio_srq_post_recv(e.srq, &rw, 1, &err) != 1) {
				bad_wc++;
				break;
			}
			nfreed--;
			next_wr++;
		}
	}
	cr_assert_eq(rte_eal_wait_lcore(lcore), 0);
	cr_assert_eq(bad_wc, 0, "receive completions with bad status/len/wr_id");
	cr_assert_eq(bad_payload, 0);
	cr_assert_eq(dup, 0);
	cr_assert_eq(received, 2 * ST_MSGS);
	for (i = 0; i < 2; i++) {
		cr_assert_eq(w[i].bad, 0, "sender %u", i);
		cr_assert_eq(w[i].posted, ST_MSGS);
		cr_assert_eq(w[i].completed, ST_MSGS);
		for (uint32_t s = 0; s < ST_MSGS; s++)
			cr_assert_eq(seen[i][s], 1, "sender %u seq %u", i, s);
	}
	cr_assert_eq(qpio_cq_poll(e.rcq[0], wc, 64), 0);
	if (qt_dev_is_soft())
		cr_assert_eq(qpio_soft_cq_overflowed(e.rcq[0]), 0);
	free(seen[0]);
	free(seen[1]);
	free(rx_seen);
	free(buf_of);
	srq_env_destroy(&e);
}

/* The receive CQ of one SRQ QP overflows: CQ_ERR, then QP_FATAL and
 * QP_LAST_WQE_REACHED for that QP; the receive whose completion was not
 * written frees its SRQ slot, so the SRQ keeps serving the other QP and
 * all max_wr slots can be posted again. */
Test(srq, cq_overflow_of_one_qp_keeps_the_srq_usable)
{
	struct srq_env e;
	struct srq_opts o = { .nqp = 2, .srq_wr = 4, .srq_sge = 1, .rcq_cqe = 2,
			      .rnr_retry = 7 };
	struct qpio_async_event ev;
	struct qpio_sge sge;
	struct qpio_recv_wr rw[4];
	struct qpio_wc wc[4];
	uint64_t lost = 0;
	unsigned int i;
	int err;

	qt_require_soft("the soft NIC's CQ overflow counters (qpio_soft_cq_overflowed)");
	srq_env_create(&e, &o);
	cr_assert_eq(qpio_cq_depth(e.rcq[0]), 2);
	for (i = 0; i < 4; i++)
		srq_post1(&e, i, 256 * i, 256);
	for (i = 0; i < 3; i++)
		send1(&e, 0, i, 16, i);
	cr_assert_eq(qpio_soft_cq_overflowed(e.rcq[0]), 1);
	cr_assert_eq(qpio_soft_cq_overflow_count(e.rcq[0], &lost), 0);
	cr_assert_eq(lost, 1);
	cr_assert_eq(wait_event(e.dev, &ev), 0);
	cr_assert_eq(ev.event_type, QPIO_EVENT_CQ_ERR);
	cr_assert_eq(ev.element.cq, e.rcq[0]);
	cr_assert_eq(wait_event(e.dev, &ev), 0);
	cr_assert_eq(ev.event_type, QPIO_EVENT_QP_FATAL);
	cr_assert_eq(ev.element.qp, e.qp[0]);
	expect_last_wqe(&e, e.qp[0]);
	cr_assert_eq(qpio_qp_state(e.qp[0]), QPIO_QPS_ERR);
	cr_assert_eq(qpio_qp_state(e.qp[1]), QPIO_QPS_RTS);
	cr_assert_eq(qpio_cq_poll(e.rcq[0], wc, 4), 2);
	cr_assert_eq(wc[0].wr_id, 0);
	cr_assert_eq(wc[1].wr_id, 1);

	send1(&e, 1, 10, 32, 10);
	cr_assert_eq(qt_poll_n(e.rcq[1], wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 3, "receive 2 went to the lost completion");
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert(qt_check(e.buf + 768, 32, 10));
	/* every slot is free again: four receives fit */
	sge = (struct qpio_sge){ (uintptr_t)e.buf, 64, qpio_mr_lkey(e.mr) };
	for (i = 0; i < 4; i++)
		rw[i] = (struct qpio_recv_wr){ .wr_id = 20 + i, .sg_list = &sge,
					       .num_sge = 1 };
	cr_assert_eq(qpio_srq_post_recv(e.srq, rw, 4, &err), 4);
	cr_assert_eq(err, 0);
	srq_env_destroy(&e);
}

/* An SRQ destroyed with its limit event still queued: the event is
 * removed with it. */
Test(srq, destroy_removes_its_limit_event)
{
	struct srq_env e;
	struct srq_opts o = { .nqp = 1, .rnr_retry = 7 };
	struct qpio_srq_attr m = { .srq_limit = 2 };
	struct qpio_srq_attr sa = { .max_wr = 4, .max_sge = 1 };
	struct qpio_async_event ev;
	struct qpio_wc wc;

	qt_require_soft("counts the queued event with qpio_soft_srq_stats; on ibv it waits in the kernel, which drops it at ibv_destroy_srq");
	srq_env_create(&e, &o);
	srq_post1(&e, 1, 0, 64);
	cr_assert_eq(qpio_srq_modify(e.srq, &m, QPIO_SRQ_LIMIT), 0);
	send1(&e, 0, 1, 8, 1);
	cr_assert_eq(qt_poll_n(e.rcq[0], &wc, 1), 1);
	cr_assert_eq(qt_poll_n(e.snd[0].cq, &wc, 1), 1);
	{
		struct qpio_soft_srq_stats st;

		cr_assert_eq(qpio_soft_srq_stats(e.srq, &st), 0);
		cr_assert_eq(st.limit_events, 1, "an event is queued");
	}
	/* the QP goes, then the SRQ; a new SRQ keeps the env's teardown */
	cr_assert_eq(qpio_qp_destroy(e.qp[0]), 0);
	cr_assert_eq(qpio_srq_destroy(e.srq), 0);
	cr_assert_eq(next_event(e.dev, &ev), -EAGAIN);
	e.srq = qpio_srq_create(e.pd, &sa);
	cr_assert_not_null(e.srq);
	/* a new QP 0 for the env's teardown */
	srq_qp_create(&e, 0, QPIO_QPT_RC);
	srq_env_destroy(&e);
}

/* An SRQ slot is free again as soon as its own completion is polled,
 * whatever the order: QP 0's older receive stays unpolled while QP 1's
 * newer one is polled, and that is enough to post again. */
Test(srq, slot_free_once_polled_in_any_order)
{
	struct srq_env e;
	struct srq_opts o = { .nqp = 2, .srq_wr = 2, .srq_sge = 1, .rnr_retry = 7 };
	struct qpio_sge sge;
	struct qpio_recv_wr rw;
	struct qpio_wc wc;
	int err = 0;

	srq_env_create(&e, &o);
	srq_post1(&e, 1, 0, 64);
	srq_post1(&e, 2, 64, 64);
	sge = (struct qpio_sge){ (uintptr_t)e.buf + 128, 64, qpio_mr_lkey(e.mr) };
	rw = (struct qpio_recv_wr){ .wr_id = 3, .sg_list = &sge, .num_sge = 1 };
	cr_assert_eq(qpio_srq_post_recv(e.srq, &rw, 1, &err), 0);
	cr_assert_eq(err, -ENOMEM);
	send1(&e, 0, 10, 8, 1);   /* QP 0 takes receive 1: not polled */
	send1(&e, 1, 20, 8, 2);   /* QP 1 takes receive 2: polled */
	cr_assert_eq(qt_poll_n(e.rcq[1], &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 2);
	cr_assert_eq(qpio_srq_post_recv(e.srq, &rw, 1, &err), 1);
	cr_assert_eq(err, 0);
	rw.wr_id = 4;
	cr_assert_eq(qpio_srq_post_recv(e.srq, &rw, 1, &err), 0);
	cr_assert_eq(err, -ENOMEM, "receive 1 still holds its slot");
	cr_assert_eq(qt_poll_n(e.rcq[0], &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 1);
	cr_assert_eq(qpio_srq_post_recv(e.srq, &rw, 1, &err), 1);
	/* both new receives are taken, in posting order */
	send1(&e, 1, 21, 16, 3);
	cr_assert_eq(qt_poll_n(e.rcq[1], &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 3);
	cr_assert(qt_check(e.buf + 128, 16, 3));
	send1(&e, 0, 11, 24, 4);
	cr_assert_eq(qt_poll_n(e.rcq[0], &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 4);
	cr_assert(qt_check(e.buf + 128, 24, 4));
	srq_env_destroy(&e);
}

/* Destroying a QP whose receive completions from the SRQ were never
 * polled gives the SRQ those slots back: all 4 of a depth-4 SRQ are taken
 * by QP 0 and left unpolled; after QP 0 is destroyed, 4 posts fit (the
 * 5th is -ENOMEM) and QP 1 receives into them. */
Test(srq, destroy_qp_with_unpolled_receives_frees_their_slots)
{
	struct srq_env e;
	struct srq_opts o = { .nqp = 2, .srq_wr = 4, .srq_sge = 1, .rnr_retry = 7 };
	struct qpio_sge sge;
	struct qpio_recv_wr rw[5];
	struct qpio_wc wc;
	unsigned int i;
	int err = 1;

	/* The rule of mlx5's providers (a destroyed QP's completions are
	 * cleaned from the CQ, their SRQ WQEs freed), which the soft NIC
	 * keeps; rxe of Linux 6.1 keeps the slots taken */
	qt_require_soft("rxe keeps the SRQ slots of a destroyed QP's unpolled "
			"completions (ibv.rst)");
	srq_env_create(&e, &o);
	for (i = 0; i < 4; i++)
		srq_post1(&e, i, 256 * i, 256);
	for (i = 0; i < 4; i++) {
		send1(&e, 0, i, 16, i);
		cr_assert_eq(qt_poll_n(e.snd[0].cq, &wc, 1), 1);
		cr_assert_eq(wc.status, QPIO_WC_SUCCESS, "send %u", i);
	}
	sge = (struct qpio_sge){ (uintptr_t)e.buf + 2048, 64, qpio_mr_lkey(e.mr) };
	for (i = 0; i < 5; i++)
		rw[i] = (struct qpio_recv_wr){ .wr_id = 20 + i, .sg_list = &sge,
					       .num_sge = 1 };
	cr_assert_eq(qpio_srq_post_recv(e.srq, rw, 1, &err), 0);
	cr_assert_eq(err, -ENOMEM, "4 receives taken, none polled");

	cr_assert_eq(qpio_qp_destroy(e.qp[0]), 0);
	cr_assert_eq(qpio_srq_post_recv(e.srq, rw, 5, &err), 4);
	cr_assert_eq(err, -ENOMEM);
	send1(&e, 1, 30, 24, 30);
	cr_assert_eq(qt_poll_n(e.rcq[1], &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 20);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 24);
	cr_assert(qt_check(e.buf + 2048, 24, 30));
	/* a new QP 0 for the env's teardown */
	srq_qp_create(&e, 0, QPIO_QPT_RC);
	srq_env_destroy(&e);
}
