/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * API misuse: every object destroyed twice (QP, CQ, MR, PD, AH, SRQ,
 * device, mempool registration) is refused with -EINVAL, never freed twice.
 * Run under AddressSanitizer in CI, a second free would be reported.
 */
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "qpio_mr.h"
#include "test_common.h"

TestSuite(destroy_twice, .init = qt_eal_init, .fini = qt_eal_fini);

Test(destroy_twice, qp_cq_mr_pd_device_refused_the_second_time)
{
	struct qt_end a, b;
	struct qpio_device *da, *db;
	struct qpio_qp *qp;
	struct qpio_cq *cq;
	struct qpio_mr *mr;
	struct qpio_pd *pd;

	qt_pair_create(&a, &b, NULL);
	da = a.dev;
	db = b.dev;
	qp = a.qp;
	cq = a.cq;
	mr = a.mr;
	pd = a.pd;
	cr_assert_eq(qpio_qp_destroy(qp), 0);
	cr_assert_eq(qpio_qp_destroy(qp), -EINVAL);
	cr_assert_eq(qpio_cq_destroy(cq), 0);
	cr_assert_eq(qpio_cq_destroy(cq), -EINVAL);
	cr_assert_eq(qpio_mr_dereg(mr), 0);
	cr_assert_eq(qpio_mr_dereg(mr), -EINVAL);
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_pd_free(pd), -EINVAL);
	rte_free(a.buf);
	cr_assert_eq(qpio_qp_destroy(b.qp), 0);
	cr_assert_eq(qpio_cq_destroy(b.cq), 0);
	cr_assert_eq(qpio_mr_dereg(b.mr), 0);
	cr_assert_eq(qpio_pd_free(b.pd), 0);
	rte_free(b.buf);
	if (db != da) {
		cr_assert_eq(qpio_rdma_dev_close(db), 0);
		cr_assert_eq(qpio_rdma_dev_close(db), -EINVAL);
	}
	cr_assert_eq(qpio_rdma_dev_close(da), 0);
	cr_assert_eq(qpio_rdma_dev_close(da), -EINVAL);
	cr_assert_eq(qpio_rdma_dev_count(), 0);
}

Test(destroy_twice, ah_and_srq_refused_the_second_time)
{
	struct qpio_srq_attr sa = { .max_wr = 16, .max_sge = 1 };
	struct qpio_device *d;
	struct qpio_srq *srq;
	struct qpio_ah *ah;
	struct qpio_pd *pd;

	qt_require_soft("AH and SRQ counts of the soft NIC's devargs");
	d = qpio_rdma_dev_create("soft0,max_ah=4,max_srq=2");
	cr_assert_not_null(d);
	pd = qpio_pd_alloc(d);
	cr_assert_not_null(pd);
	ah = qt_ah_create(pd, d, 0);
	srq = qpio_srq_create(pd, &sa);
	cr_assert_not_null(srq, "%s", rte_strerror(rte_errno));
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	cr_assert_eq(qpio_ah_destroy(ah), -EINVAL);
	cr_assert_eq(qpio_srq_destroy(srq), 0);
	cr_assert_eq(qpio_srq_destroy(srq), -EINVAL);
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

Test(destroy_twice, handle_of_one_kind_is_not_another)
{
	struct qpio_device *d = qpio_rdma_dev_create("soft0");
	struct qpio_pd *pd;
	struct qpio_cq *cq;

	cr_assert_not_null(d);
	pd = qpio_pd_alloc(d);
	cq = qpio_cq_create(d, 16, SOCKET_ID_ANY);
	cr_assert_not_null(pd);
	cr_assert_not_null(cq);
	/* A CQ given where a QP or an MR is expected is not touched. */
	cr_assert_eq(qpio_qp_destroy((struct qpio_qp *)cq), -EINVAL);
	cr_assert_eq(qpio_mr_dereg((struct qpio_mr *)pd), -EINVAL);
	cr_assert_eq(qpio_cq_destroy(cq), 0);
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

/* A destroyed QP (its memory freed, and zeroed by rte_free) is not
 * read: query, modify to ERR and RTS->SQD are -EINVAL, not a crash on
 * its device pointer nor a log line about an "unknown QP type". */
Test(destroy_twice, modify_and_query_of_a_destroyed_qp_refused)
{
	struct qt_end a, b;
	struct qpio_qp_init_attr ia;
	struct qpio_qp_attr at;
	struct qpio_qp *qp;

	qt_pair_create(&a, &b, NULL);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = QPIO_QPT_UD;
	ia.send_cq = a.cq;
	ia.recv_cq = a.cq;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	qp = qpio_qp_create(a.pd, &ia);
	cr_assert_not_null(qp);
	cr_assert_eq(qpio_qp_destroy(qp), 0);
	memset(&at, 0, sizeof(at));
	at.qp_state = QPIO_QPS_ERR;
	cr_assert_eq(qpio_qp_modify(qp, &at, QPIO_QP_STATE), -EINVAL);
	at.qp_state = QPIO_QPS_SQD;
	cr_assert_eq(qpio_qp_modify(qp, &at, QPIO_QP_STATE), -EINVAL);
	cr_assert_eq(qpio_qp_query(qp, &at, &ia), -EINVAL);
	cr_assert_eq(qpio_qp_query(qp, &at, NULL), -EINVAL);
	/* Nor a handle of another kind. */
	cr_assert_eq(qpio_qp_query((struct qpio_qp *)a.cq, &at, NULL), -EINVAL);
	cr_assert_eq(qpio_qp_modify((struct qpio_qp *)a.cq, &at, QPIO_QP_STATE),
		     -EINVAL);
	qt_pair_destroy(&a, &b);
}

Test(destroy_twice, mempool_registration_refused_the_second_time)
{
	struct qpio_device *d = qpio_rdma_dev_create("soft0");
	struct qpio_mr_mempool *r;
	struct rte_mempool *mp;
	struct qpio_pd *pd;

	cr_assert_not_null(d);
	pd = qpio_pd_alloc(d);
	cr_assert_not_null(pd);
	mp = rte_pktmbuf_pool_create("twice", 256, 0, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	cr_assert_not_null(mp);
	r = qpio_mr_mempool_reg(pd, mp, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(r);
	cr_assert_eq(qpio_mr_mempool_dereg(r), 0);
	cr_assert_eq(qpio_mr_mempool_dereg(r), -EINVAL);
	/* The PD has no MR left: the second dereg released nothing twice. */
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
	rte_mempool_free(mp);
}

/* The CQ event calls and qpio_qp_create() look each handle up before
 * reading it: a destroyed CQ, PD or SRQ, or a handle of another kind, is
 * -EINVAL (NULL with rte_errno EINVAL), not a read of freed memory. */
Test(destroy_twice, cq_event_calls_and_qp_create_refuse_dead_handles)
{
	struct qpio_srq_attr sa = { .max_wr = 4, .max_sge = 1 };
	struct qpio_qp_init_attr ia;
	struct qpio_cq *cq;
	struct qpio_pd *pd;
	struct qpio_srq *srq;
	struct qt_end a, b;

	qt_pair_create(&a, &b, NULL);
	cq = qpio_cq_create(a.dev, 16, SOCKET_ID_ANY);
	pd = qpio_pd_alloc(a.dev);
	cr_assert_not_null(cq);
	cr_assert_not_null(pd);
	srq = qpio_srq_create(pd, &sa);
	cr_assert_not_null(srq);
	cr_assert_geq(qpio_cq_event_fd(cq), 0);
	cr_assert_eq(qpio_cq_req_notify(cq, 0), 0);
	cr_assert_eq(qpio_cq_ack_events(cq), 0);
	cr_assert_eq(qpio_cq_destroy(cq), 0);
	cr_assert_eq(qpio_cq_req_notify(cq, 0), -EINVAL);
	cr_assert_eq(qpio_cq_event_fd(cq), -EINVAL);
	cr_assert_eq(qpio_cq_ack_events(cq), -EINVAL);
	/* A handle of another kind. */
	cr_assert_eq(qpio_cq_req_notify((struct qpio_cq *)a.qp, 0), -EINVAL);
	cr_assert_eq(qpio_cq_event_fd((struct qpio_cq *)a.pd), -EINVAL);

	memset(&ia, 0, sizeof(ia));
	ia.qp_type = QPIO_QPT_RC;
	ia.send_cq = cq;            /* destroyed */
	ia.recv_cq = a.cq;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	rte_errno = 0;
	cr_assert_null(qpio_qp_create(a.pd, &ia));
	cr_assert_eq(rte_errno, EINVAL);
	ia.send_cq = a.cq;
	ia.recv_cq = (struct qpio_cq *)a.mr;   /* another kind */
	rte_errno = 0;
	cr_assert_null(qpio_qp_create(a.pd, &ia));
	cr_assert_eq(rte_errno, EINVAL);
	ia.recv_cq = a.cq;
	cr_assert_eq(qpio_srq_destroy(srq), 0);
	ia.srq = srq;               /* destroyed */
	ia.cap.max_recv_wr = 0;
	rte_errno = 0;
	cr_assert_null(qpio_qp_create(pd, &ia));
	cr_assert_eq(rte_errno, EINVAL);
	ia.srq = NULL;
	ia.cap.max_recv_wr = 4;
	cr_assert_eq(qpio_pd_free(pd), 0);
	rte_errno = 0;
	cr_assert_null(qpio_qp_create(pd, &ia));   /* destroyed PD */
	cr_assert_eq(rte_errno, EINVAL);
	qt_pair_destroy(&a, &b);
}
