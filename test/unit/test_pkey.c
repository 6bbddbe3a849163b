/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * P_Keys on the soft NIC: the port's table from the pkeys devarg
 * (qpio_rdma_pkey_query, ibv_query_pkey), pkey_index checked at modify,
 * and messages between QPs whose P_Keys do not match (IBA 10.9.3)
 * dropped and counted by the receiver.
 */
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "test_common.h"

TestSuite(pkey, .init = qt_eal_init, .fini = qt_eal_fini);

#define QK 0x11111111u

Test(pkey, table_from_devargs)
{
	struct qpio_device *d = qpio_rdma_dev_create("soft0,pkeys=0xffff:0x8001:0x0001");
	struct qpio_device *e = qpio_rdma_dev_create("soft1");
	struct qpio_port_attr pa;
	uint16_t k = 0;

	cr_assert(d != NULL && e != NULL);
	cr_assert_eq(qpio_rdma_port_query(d, 1, &pa), 0);
	cr_assert_eq(pa.pkey_tbl_len, 3);
	cr_assert_eq(qpio_rdma_pkey_query(d, 1, 0, &k), 0);
	cr_assert_eq(k, 0xffff);
	cr_assert_eq(qpio_rdma_pkey_query(d, 1, 1, &k), 0);
	cr_assert_eq(k, 0x8001);
	cr_assert_eq(qpio_rdma_pkey_query(d, 1, 2, &k), 0);
	cr_assert_eq(k, 0x0001);
	k = 7;
	cr_assert_eq(qpio_rdma_pkey_query(d, 1, 3, &k), -EINVAL, "index 3 of 3");
	cr_assert_eq(k, 7, "nothing written");
	cr_assert_eq(qpio_rdma_pkey_query(d, 2, 0, &k), -EINVAL, "port 2");
	cr_assert_eq(qpio_rdma_pkey_query(d, 0, 0, &k), -EINVAL, "port 0");
	cr_assert_eq(qpio_rdma_pkey_query(NULL, 1, 0, &k), -EINVAL);
	cr_assert_eq(qpio_rdma_pkey_query(d, 1, 0, NULL), -EINVAL);
	/* Without the devarg: the default partition, full member. */
	cr_assert_eq(qpio_rdma_port_query(e, 1, &pa), 0);
	cr_assert_eq(pa.pkey_tbl_len, 1);
	cr_assert_eq(qpio_rdma_pkey_query(e, 1, 0, &k), 0);
	cr_assert_eq(k, 0xffff);
	cr_assert_eq(qpio_rdma_dev_close(e), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

Test(pkey, devargs_refused)
{
	static const char *const bad[] = {
		"soft0,pkeys=",
		"soft0,pkeys=0x10000",
		"soft0,pkeys=1::2",
		"soft0,pkeys=1:",
		"soft0,pkeys=:1",
		"soft0,pkeys=-1",
		"soft0,pkeys=0xffff:x",
		"soft0,pkeys=+1",
		"soft0,pkeys=0x",
		"soft0,pkeys=0x0x1",
		"soft0,pkeys=65536",
		"soft0,pkeys=1:2:3:4:5:6:7:8:9:10:11:12:13:14:15:16:17",
	};
	struct qpio_device *d;
	struct qpio_port_attr pa;
	uint16_t k = 0;
	unsigned int i;

	for (i = 0; i < RTE_DIM(bad); i++) {
		cr_assert_null(qpio_rdma_dev_create(bad[i]), "%s", bad[i]);
		cr_assert_eq(rte_errno, EINVAL, "%s: %d", bad[i], rte_errno);
	}
	d = qpio_rdma_dev_create("soft0,pkeys=1:2:3:4:5:6:7:8:9:10:11:12:13:14:15:16");
	cr_assert_not_null(d, "16 entries fit");
	cr_assert_eq(qpio_rdma_port_query(d, 1, &pa), 0);
	cr_assert_eq(pa.pkey_tbl_len, 16);
	cr_assert_eq(qpio_rdma_pkey_query(d, 1, 15, &k), 0);
	cr_assert_eq(k, 16);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

Test(pkey, index_checked_at_modify)
{
	struct qpio_device *d = qpio_rdma_dev_create("soft0,pkeys=0xffff:0x8001");
	struct qpio_pd *pd = qpio_pd_alloc(d);
	struct qpio_cq *cq = qpio_cq_create(d, 16, SOCKET_ID_ANY);
	struct qpio_qp_init_attr ia;
	struct qpio_qp_attr at, q;
	struct qpio_qp_init_attr qi;
	struct qpio_qp *qp;
	int mask = QPIO_QP_STATE | QPIO_QP_PKEY_INDEX | QPIO_QP_PORT |
		QPIO_QP_ACCESS_FLAGS;

	cr_assert(pd != NULL && cq != NULL);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap = (struct qpio_qp_cap){ 4, 4, 1, 1, 0 };
	qp = qpio_qp_create(pd, &ia);
	cr_assert_not_null(qp);
	memset(&at, 0, sizeof(at));
	at.qp_state = QPIO_QPS_INIT;
	at.port_num = 1;
	at.pkey_index = 2;
	cr_assert_eq(qpio_qp_modify(qp, &at, mask), -EINVAL, "index 2 of 2");
	cr_assert_eq(qpio_qp_query(qp, &q, &qi), 0);
	cr_assert_eq(q.qp_state, QPIO_QPS_RESET, "refused: still RESET");
	at.pkey_index = 1;
	cr_assert_eq(qpio_qp_modify(qp, &at, mask), 0);
	cr_assert_eq(qpio_qp_query(qp, &q, &qi), 0);
	cr_assert_eq(q.qp_state, QPIO_QPS_INIT);
	cr_assert_eq(q.pkey_index, 1);
	cr_assert_eq(qpio_qp_destroy(qp), 0);
	cr_assert_eq(qpio_cq_destroy(cq), 0);
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

/* One SEND of 16 bytes from a to b over a pair of type t whose index-0
 * P_Keys come from the devargs; @return the sender's status, and the
 * receiver's pkey_drops and receive count. */
static void
pair_send(enum qpio_qp_type t, const char *da, const char *db,
	  enum qpio_wc_status want, uint64_t want_drops, unsigned int want_rx)
{
	struct qt_pair_opts o = { .type = t, .devargs_a = da, .devargs_b = db,
				  .rnr_retry = 7 };
	struct qt_end a, b;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc[2];
	int err = 1;

	qt_pair_create(&a, &b, &o);
	qt_post_recv(&b, 5, b.buf, 64);
	qt_fill(a.buf, 16, 3);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 16, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(9, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 9);
	cr_assert_eq(wc[0].status, want, "%s -> %s: status %d", da, db,
		     (int)wc[0].status);
	cr_assert_eq(qt_stats(b.qp).pkey_drops, want_drops, "%s -> %s", da, db);
	cr_assert_eq(qt_stats(a.qp).pkey_drops, 0);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 2), want_rx, "%s -> %s", da, db);
	if (want_rx)
		cr_assert(qt_check(b.buf, 16, 3));
	qt_pair_destroy(&a, &b);
}

Test(pkey, rc_uc_mismatch_dropped_and_counted)
{
	qt_require_soft("soft NIC P_Key tables (pkeys devarg)");
	/* Same partition, both full members. */
	pair_send(QPIO_QPT_RC, "soft0,pkeys=0x8001", "soft1,pkeys=0x8001",
		  QPIO_WC_SUCCESS, 0, 1);
	/* Another partition: RC sees no responder. */
	pair_send(QPIO_QPT_RC, "soft0,pkeys=0x8001", "soft1,pkeys=0x8002",
		  QPIO_WC_RETRY_EXC_ERR, 1, 0);
	/* Same partition, both limited members: no match (IBA 10.9.3). */
	pair_send(QPIO_QPT_RC, "soft0,pkeys=0x0005", "soft1,pkeys=0x0005",
		  QPIO_WC_RETRY_EXC_ERR, 1, 0);
	/* A limited member talks to a full member. */
	pair_send(QPIO_QPT_RC, "soft0,pkeys=0x0005", "soft1,pkeys=0x8005",
		  QPIO_WC_SUCCESS, 0, 1);
	/* Partition 0 is no partition, even for full members. */
	pair_send(QPIO_QPT_RC, "soft0,pkeys=0x8000", "soft1,pkeys=0x8000",
		  QPIO_WC_RETRY_EXC_ERR, 1, 0);
	/* UC: the sender completes, the receiver drops and counts. */
	pair_send(QPIO_QPT_UC, "soft0,pkeys=0x8001", "soft1,pkeys=0x8002",
		  QPIO_WC_SUCCESS, 1, 0);
	pair_send(QPIO_QPT_UC, "soft0,pkeys=0x8001", "soft1,pkeys=0x0001",
		  QPIO_WC_SUCCESS, 0, 1);
}

/* Move q RTS->SQD->SQD(pkey_index idx)->RTS (IBA 11.2.4.2: the index
 * changes in SQD->SQD); asserts each step. */
static void
pkey_index_move(struct qpio_qp *q, uint16_t idx)
{
	struct qpio_qp_attr at;
	struct qpio_qp_attr qa;
	struct qpio_qp_init_attr qi;

	memset(&at, 0, sizeof(at));
	at.qp_state = QPIO_QPS_SQD;
	cr_assert_eq(qpio_qp_modify(q, &at, QPIO_QP_STATE), 0);
	at.pkey_index = idx;
	cr_assert_eq(qpio_qp_modify(q, &at, QPIO_QP_STATE | QPIO_QP_PKEY_INDEX), 0);
	at.qp_state = QPIO_QPS_RTS;
	cr_assert_eq(qpio_qp_modify(q, &at, QPIO_QP_STATE), 0);
	cr_assert_eq(qpio_qp_query(q, &qa, &qi), 0);
	cr_assert_eq(qa.qp_state, QPIO_QPS_RTS);
	cr_assert_eq(qa.pkey_index, idx);
}

/* One signaled SEND of sge with wr_id id: by the WR list (flat 0) or as
 * an inline flat burst (flat 1, the direct path); asserts it posted. */
static void
pkey_post(struct qpio_qp *qp, const struct qpio_sge *sge, unsigned int flat,
	  uint64_t id)
{
	struct qpio_send_wr wr;
	int err = 1;

	if (flat) {
		cr_assert_eq(qpio_qp_post_send_sge(qp, sge, 1, id,
						   QPIO_SEND_INLINE |
						   QPIO_SEND_SIGNALED, &err), 1);
	} else {
		wr = qt_send_wr(id, sge, 1, QPIO_SEND_SIGNALED);
		cr_assert_eq(qpio_qp_post_send(qp, &wr, 1, &err), 1);
	}
	cr_assert_eq(err, 0);
}

/* A requester keeps the responder it found for the next runs: a P_Key
 * the responder takes after the first SEND applies to the next one, by
 * the WR list and by the flat burst alike, and taking the old one back
 * lets SENDs through again. */
Test(pkey, rc_pkey_change_after_traffic_applies_to_the_next_send)
{
	struct qt_pair_opts o = { .type = QPIO_QPT_RC,
				  .devargs_a = "soft0,pkeys=0x8001",
				  .devargs_b = "soft1,pkeys=0x8001:0x8002",
				  .rnr_retry = 7 };
	struct qt_end a, b;
	struct qpio_qp_attr at;
	struct qpio_sge sge;
	struct qpio_wc wc[2];
	unsigned int i;

	qt_require_soft("soft NIC P_Key tables (pkeys devarg)");
	qt_pair_create(&a, &b, &o);
	qt_fill(a.buf, 16, 3);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 16, qpio_mr_lkey(a.mr) };
	for (i = 0; i < 2; i++) {
		/* i 0: the WR list; i 1: an inline flat burst (direct) */
		qt_post_recv(&b, 5, b.buf + 4096 * i, 64);
		pkey_post(a.qp, &sge, i, 9);
		cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
		cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS, "%u: before", i);
		cr_assert_eq(qt_poll_n(b.cq, wc, 1), 1);
		cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
		cr_assert(qt_check(b.buf + 4096 * i, 16, 3));
		/* b to partition 0x8002: a's next SEND finds no responder */
		pkey_index_move(b.qp, 1);
		qt_post_recv(&b, 6, b.buf + 4096 * i + 1024, 64);
		pkey_post(a.qp, &sge, i, 10);
		cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
		cr_assert_eq(wc[0].wr_id, 10);
		cr_assert_eq(wc[0].status, QPIO_WC_RETRY_EXC_ERR,
			     "%u: after b's P_Key changed: %s", i,
			     qpio_wc_status_str(wc[0].status));
		cr_assert_eq(qt_stats(b.qp).pkey_drops, i + 1);
		cr_assert_eq(qpio_cq_poll(b.cq, wc, 2), 0, "%u: nothing lands", i);
		/* a is in ERR now: both back to RESET, connected again, b on
		 * index 0 */
		memset(&at, 0, sizeof(at));
		at.qp_state = QPIO_QPS_RESET;
		cr_assert_eq(qpio_qp_modify(a.qp, &at, QPIO_QP_STATE), 0);
		cr_assert_eq(qpio_qp_modify(b.qp, &at, QPIO_QP_STATE), 0);
		qt_qp_connect(a.qp, b.dev, qpio_qp_num(b.qp), 7);
		qt_qp_connect(b.qp, a.dev, qpio_qp_num(a.qp), 7);
	}
	qt_pair_destroy(&a, &b);
}

Test(pkey, ud_mismatch_dropped_and_counted)
{
	struct qpio_device *da, *db;
	struct qt_end a, b1, b2;
	struct qpio_qp_attr at;
	struct qpio_ah *ah;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc[2];
	int err = 1;

	qt_require_soft("soft NIC P_Key tables (pkeys devarg)");
	da = qpio_rdma_dev_create("soft0,pkeys=0x8001");
	db = qpio_rdma_dev_create("soft1,pkeys=0x8001:0x8002");
	cr_assert(da != NULL && db != NULL);
	qt_ud_end_create(&a, da, QK, NULL);
	qt_ud_end_create(&b1, db, QK, NULL);   /* pkey_index 0: 0x8001 */
	/* b2 takes pkey_index 1 (0x8002) at RESET->INIT. */
	memset(&b2, 0, sizeof(b2));
	{
		struct qpio_qp_init_attr ia;

		b2.dev = db;
		b2.pd = qpio_pd_alloc(db);
		b2.cq = qpio_cq_create(db, 64, SOCKET_ID_ANY);
		b2.buf_len = 1 << 16;
		b2.buf = rte_zmalloc("pk_buf", b2.buf_len, 64);
		cr_assert(b2.pd != NULL && b2.cq != NULL && b2.buf != NULL);
		b2.mr = qpio_mr_reg(b2.pd, b2.buf, b2.buf_len, QPIO_ACCESS_ALL);
		cr_assert_not_null(b2.mr);
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = b2.cq;
		ia.recv_cq = b2.cq;
		ia.qp_type = QPIO_QPT_UD;
		ia.cap = (struct qpio_qp_cap){ 8, 8, 1, 1, 0 };
		b2.qp = qpio_qp_create(b2.pd, &ia);
		cr_assert_not_null(b2.qp);
		memset(&at, 0, sizeof(at));
		at.qp_state = QPIO_QPS_INIT;
		at.port_num = 1;
		at.pkey_index = 1;
		at.qkey = QK;
		cr_assert_eq(qpio_qp_modify(b2.qp, &at, QPIO_QP_STATE |
					    QPIO_QP_PKEY_INDEX | QPIO_QP_PORT |
					    QPIO_QP_QKEY), 0);
		at.qp_state = QPIO_QPS_RTR;
		cr_assert_eq(qpio_qp_modify(b2.qp, &at, QPIO_QP_STATE), 0);
		at.qp_state = QPIO_QPS_RTS;
		at.sq_psn = 0;
		cr_assert_eq(qpio_qp_modify(b2.qp, &at, QPIO_QP_STATE |
					    QPIO_QP_SQ_PSN), 0);
	}
	qt_post_recv(&b1, 1, b1.buf, 1024);
	qt_post_recv(&b2, 2, b2.buf, 1024);
	ah = qt_ah_create(a.pd, db, 0);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 32, qpio_mr_lkey(a.mr) };
	wr = qt_ud_wr(10, &sge, 1, QPIO_SEND_SIGNALED, ah, qpio_qp_num(b1.qp), QK);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	wr = qt_ud_wr(11, &sge, 1, QPIO_SEND_SIGNALED, ah, qpio_qp_num(b2.qp), QK);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(a.cq, wc, 2), 2);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[1].status, QPIO_WC_SUCCESS, "UD sender never knows");
	cr_assert_eq(qt_poll_n(b1.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 1);
	cr_assert_eq(wc[0].byte_len, 32 + QPIO_GRH_LEN);
	cr_assert_eq(qpio_cq_poll(b2.cq, wc, 1), 0, "b2 (0x8002) dropped it");
	cr_assert_eq(qt_stats(b1.qp).pkey_drops, 0);
	cr_assert_eq(qt_stats(b2.qp).pkey_drops, 1);
	cr_assert_eq(qt_stats(b2.qp).ud_qkey_drops, 0);
	cr_assert_eq(qt_stats(b2.qp).ud_no_recv_drops, 0);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_end_destroy(&a);
	qt_end_destroy(&b1);
	qt_end_destroy(&b2);
	cr_assert_eq(qpio_rdma_dev_close(da), 0);
	cr_assert_eq(qpio_rdma_dev_close(db), 0);
}

/* A leading zero is decimal, as every qpio number (lib/devargs), not
 * octal: pkeys=010:0x10 is 10 and 16. */
Test(pkey, devargs_decimal_or_hex)
{
	struct qpio_device *d = qpio_rdma_dev_create("soft0,pkeys=010:0x10");
	uint16_t k = 0;

	cr_assert_not_null(d);
	cr_assert_eq(qpio_rdma_pkey_query(d, 1, 0, &k), 0);
	cr_assert_eq(k, 10);
	cr_assert_eq(qpio_rdma_pkey_query(d, 1, 1, &k), 0);
	cr_assert_eq(k, 16);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}
