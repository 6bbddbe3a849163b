/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD QPs and address handles on the soft NIC: AH rules, Q_Key checks,
 * the 40-byte GRH area, bursts to several destinations,
 * datagrams lost and counted (no receive, unknown destination, over the
 * MTU, receive too short).
 */
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "test_common.h"

TestSuite(ud, .init = qt_eal_init, .fini = qt_eal_fini);

#define QK 0x11111111u
#define GUARD 0xeeu

/* Post one UD send of len bytes from a->buf and assert it was posted. */
static void
ud_send(struct qt_end *a, struct qpio_ah *ah, uint32_t qpn, uint32_t qkey,
	uint32_t len, uint64_t wr_id)
{
	struct qpio_sge sge = { (uintptr_t)a->buf, len, qpio_mr_lkey(a->mr) };
	struct qpio_send_wr wr = qt_ud_wr(wr_id, &sge, 1, QPIO_SEND_SIGNALED,
					  ah, qpn, qkey);
	int err = 1;

	cr_assert_eq(qpio_qp_post_send(a->qp, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);
}

/* The sender's completion: SUCCESS, wr_id, byte_len = payload. */
static void
expect_send_ok(struct qt_end *a, uint64_t wr_id, uint32_t len)
{
	struct qpio_wc wc;

	cr_assert_eq(qt_poll_n(a->cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS, "got %s",
		     qpio_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, QPIO_WC_SEND);
	cr_assert_eq(wc.wr_id, wr_id);
	cr_assert_eq(wc.byte_len, len);
	cr_assert_eq(wc.qp_num, qpio_qp_num(a->qp));
}

Test(ud, ah_create_destroy_and_pd_busy)
{
	struct qpio_device *d = qpio_rdma_dev_create("soft0,max_ah=2");
	struct qpio_device_attr da;
	struct qpio_ah_attr aa;
	struct qpio_pd *pd;
	struct qpio_ah *ah1, *ah2;

	cr_assert_not_null(d);
	cr_assert_eq(qpio_rdma_dev_query(d, &da), 0);
	cr_assert_eq(da.max_ah, 2);
	pd = qpio_pd_alloc(d);
	cr_assert_not_null(pd);
	memset(&aa, 0, sizeof(aa));
	aa.port_num = 1;
	aa.dlid = 1;

	cr_assert_null(qpio_ah_create(NULL, &aa));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_ah_create(pd, NULL));
	cr_assert_eq(rte_errno, EINVAL);
	aa.port_num = 0;
	cr_assert_null(qpio_ah_create(pd, &aa));
	cr_assert_eq(rte_errno, EINVAL);
	aa.port_num = 2;
	cr_assert_null(qpio_ah_create(pd, &aa));
	cr_assert_eq(rte_errno, EINVAL);
	aa.port_num = 1;
	aa.is_global = 1;
	aa.grh.sgid_index = 1;               /* gid_tbl_len is 1 */
	cr_assert_null(qpio_ah_create(pd, &aa));
	cr_assert_eq(rte_errno, EINVAL);
	aa.grh.sgid_index = 0;
	aa.grh.flow_label = 0x100000;        /* 21 bits */
	cr_assert_null(qpio_ah_create(pd, &aa));
	cr_assert_eq(rte_errno, EINVAL);
	aa.grh.flow_label = 0xfffff;

	ah1 = qpio_ah_create(pd, &aa);
	cr_assert_not_null(ah1);
	aa.is_global = 0;
	ah2 = qpio_ah_create(pd, &aa);
	cr_assert_not_null(ah2);
	cr_assert_null(qpio_ah_create(pd, &aa), "max_ah is 2");
	cr_assert_eq(rte_errno, ENOSPC);

	cr_assert_eq(qpio_pd_free(pd), -EBUSY, "two AHs use the PD");
	cr_assert_eq(qpio_ah_destroy(ah1), 0);
	cr_assert_eq(qpio_pd_free(pd), -EBUSY, "one AH uses the PD");
	cr_assert_eq(qpio_ah_destroy(ah2), 0);
	cr_assert_eq(qpio_ah_destroy(NULL), -EINVAL);
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);

	d = qpio_rdma_dev_create("soft0");
	cr_assert_eq(qpio_rdma_dev_query(d, &da), 0);
	cr_assert_eq(da.max_ah, 1024, "default max_ah");
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
	cr_assert_null(qpio_rdma_dev_create("soft0,max_ah=65537"));
	cr_assert_eq(rte_errno, EINVAL);
}

/* ud-grh: receive of 40 + 256 bytes, 256 sent by LID (no GRH): byte_len 296,
 * payload at offset 40, the 40 bytes untouched, no GRH flag. */
Test(ud, c07_lid_send_reserves_40_bytes_no_grh)
{
	struct qt_end a, b;
	struct qpio_port_attr pa;
	struct qpio_ah *ah;
	struct qpio_wc wc;
	unsigned int i;

	qt_require_soft("sends by LID without a GRH; RoCE ports have no LIDs");
	qt_ud_world_create(&a, &b, QK);
	ah = qt_ah_create(a.pd, b.dev, 0);
	memset(b.buf, GUARD, 1024);
	qt_post_recv(&b, 0xb1, b.buf, QPIO_GRH_LEN + 256);
	qt_fill(a.buf, 256, 11);
	ud_send(&a, ah, qpio_qp_num(b.qp), QK, 256, 0xa1);
	expect_send_ok(&a, 0xa1, 256);

	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.opcode, QPIO_WC_RECV);
	cr_assert_eq(wc.wr_id, 0xb1);
	cr_assert_eq(wc.byte_len, 296);
	cr_assert_eq(wc.wc_flags, 0);
	cr_assert_eq(wc.qp_num, qpio_qp_num(b.qp));
	cr_assert_eq(wc.src_qp, qpio_qp_num(a.qp));
	cr_assert_eq(qpio_rdma_port_query(a.dev, 1, &pa), 0);
	cr_assert_eq(wc.slid, pa.lid);
	cr_assert_eq(wc.slid, 1);
	cr_assert_eq(wc.pkey_index, 0);
	cr_assert_eq(wc.sl, 0);
	for (i = 0; i < QPIO_GRH_LEN; i++)
		cr_assert_eq(b.buf[i], GUARD, "GRH byte %u touched", i);
	cr_assert(qt_check(b.buf + QPIO_GRH_LEN, 256, 11));
	cr_assert_eq(b.buf[QPIO_GRH_LEN + 256], GUARD);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RTS);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_ud_world_destroy(&a, &b);
}

/* Global AH: the receiver gets QPIO_WC_GRH and a GRH whose every byte is
 * known: version 6, traffic class, flow label, PayLen, next header 0x1b,
 * hop limit, sender GID, destination GID. */
Test(ud, grh_written_byte_by_byte)
{
	struct qt_end a, b;
	struct qpio_ah_attr aa;
	union qpio_gid sgid, dgid;
	struct qpio_ah *ah;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc;
	uint8_t expect[QPIO_GRH_LEN];
	int err;

	qt_require_soft("checks the InfiniBand GRH the soft NIC writes; rxe writes the RoCE v2 IPv6 header there");
	qt_ud_world_create(&a, &b, QK);
	cr_assert_eq(qpio_rdma_gid_query(a.dev, 1, 0, &sgid), 0);
	cr_assert_eq(qpio_rdma_gid_query(b.dev, 1, 0, &dgid), 0);
	memset(&aa, 0, sizeof(aa));
	aa.port_num = 1;
	aa.is_global = 1;
	aa.grh.dgid = dgid;
	aa.grh.flow_label = 0x12345;
	aa.grh.traffic_class = 0xa5;
	aa.grh.hop_limit = 64;
	aa.sl = 3;
	ah = qpio_ah_create(a.pd, &aa);
	cr_assert_not_null(ah);

	/* a 256-byte SEND into two SGEs: 20 bytes + the rest, so the GRH
	 * itself is scattered over two buffers */
	memset(b.buf, GUARD, 4096);
	{
		struct qpio_sge rx[2] = {
			{ (uintptr_t)b.buf, 20, qpio_mr_lkey(b.mr) },
			{ (uintptr_t)b.buf + 1024, 20 + 256, qpio_mr_lkey(b.mr) },
		};
		struct qpio_recv_wr rwr = { .wr_id = 1, .sg_list = rx, .num_sge = 2 };

		cr_assert_eq(qpio_qp_post_recv(b.qp, &rwr, 1, &err), 1);
	}
	qt_fill(a.buf, 256, 5);
	ud_send(&a, ah, qpio_qp_num(b.qp), QK, 256, 2);
	expect_send_ok(&a, 2, 256);
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.wc_flags, QPIO_WC_GRH);
	cr_assert_eq(wc.byte_len, 296);
	cr_assert_eq(wc.sl, 3);
	cr_assert_eq(wc.slid, 1);

	expect[0] = 0x6a;   /* version 6, traffic class 0xa5 ... */
	expect[1] = 0x51;   /* ... flow label 0x12345 */
	expect[2] = 0x23;
	expect[3] = 0x45;
	expect[4] = 0x01;   /* PayLen 12 BTH + 8 DETH + 256 + 4 ICRC = 280 */
	expect[5] = 0x18;
	expect[6] = 0x1b;   /* next header: BTH */
	expect[7] = 64;     /* hop limit */
	memcpy(expect + 8, sgid.raw, 16);
	memcpy(expect + 24, dgid.raw, 16);
	cr_assert_eq(expect[8], 0xfe);
	cr_assert_eq(expect[23], 0x01, "sender is the first device");
	cr_assert_eq(expect[39], 0x02, "receiver is the second device");
	for (unsigned int i = 0; i < 20; i++)
		cr_assert_eq(b.buf[i], expect[i], "GRH byte %u", i);
	cr_assert_eq(b.buf[20], GUARD);
	for (unsigned int i = 20; i < QPIO_GRH_LEN; i++)
		cr_assert_eq(b.buf[1024 + i - 20], expect[i], "GRH byte %u", i);
	cr_assert(qt_check(b.buf + 1024 + 20, 256, 5));
	cr_assert_eq(b.buf[1024 + 276], GUARD);

	/* SEND_WITH_IMM of 5 bytes: PayLen 12 + 8 + 4 ImmDt + 8 (5 padded)
	 * + 4 = 36, flags GRH | WITH_IMM */
	qt_post_recv(&b, 3, b.buf + 2048, 64);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 5, qpio_mr_lkey(a.mr) };
	wr = qt_ud_wr(4, &sge, 1, QPIO_SEND_SIGNALED, ah, qpio_qp_num(b.qp), QK);
	wr.opcode = QPIO_WR_SEND_WITH_IMM;
	wr.imm_data = 0xcafef00d;
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	expect_send_ok(&a, 4, 5);
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.wc_flags, QPIO_WC_GRH | QPIO_WC_WITH_IMM);
	cr_assert_eq(wc.imm_data, 0xcafef00d);
	cr_assert_eq(wc.byte_len, 45);
	cr_assert_eq(b.buf[2048 + 4], 0x00);
	cr_assert_eq(b.buf[2048 + 5], 36);
	cr_assert_eq(memcmp(b.buf + 2048 + QPIO_GRH_LEN, a.buf, 5), 0);
	cr_assert_eq(b.buf[2048 + QPIO_GRH_LEN + 5], GUARD);

	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_ud_world_destroy(&a, &b);
}

/* Q_Key: a mismatch is dropped and counted, the sender still completes
 * SUCCESS; a WR Q_Key with bit 31 set sends the QP's own Q_Key. */
Test(ud, qkey_match_mismatch_and_controlled_qkey)
{
	struct qt_end a, b;
	struct qpio_qp_attr attr;
	struct qpio_ah *ah;
	struct qpio_wc wc;
	struct qpio_soft_qp_stats st;

	qt_ud_world_create(&a, &b, QK);
	ah = qt_ah_create(a.pd, b.dev, 0);
	qt_post_recv(&b, 10, b.buf, 128);

	ud_send(&a, ah, qpio_qp_num(b.qp), 0x22222222, 16, 1);
	expect_send_ok(&a, 1, 16);
	if (qt_dev_is_soft()) { /* the soft NIC counts the drop */
		st = qt_stats(b.qp);
		cr_assert_eq(st.ud_qkey_drops, 1);
		cr_assert_eq(st.rq_consumed, 0);
	}
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0);

	ud_send(&a, ah, qpio_qp_num(b.qp), QK, 16, 2);
	expect_send_ok(&a, 2, 16);
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 10);
	cr_assert_eq(wc.byte_len, 56);
	if (qt_dev_is_rxe()) {
		/* rxe (Linux 6.1) does not deliver a datagram sent with a
		 * controlled Q_Key (high bit set): the rest is soft only */
		cr_assert_eq(qpio_ah_destroy(ah), 0);
		qt_ud_world_destroy(&a, &b);
		return;
	}

	/* a's own Q_Key is QK: 0x80000000 means "use it" */
	qt_post_recv(&b, 11, b.buf, 128);
	ud_send(&a, ah, qpio_qp_num(b.qp), 0x80000000u, 16, 3);
	expect_send_ok(&a, 3, 16);
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 11);

	/* change a's Q_Key (RTS->RTS): the controlled Q_Key no longer matches */
	memset(&attr, 0, sizeof(attr));
	attr.qkey = 0x33333333;
	cr_assert_eq(qpio_qp_modify(a.qp, &attr, QPIO_QP_QKEY), 0);
	ud_send(&a, ah, qpio_qp_num(b.qp), 0x80000001u, 16, 4);
	expect_send_ok(&a, 4, 16);
	if (qt_dev_is_soft()) {
		st = qt_stats(b.qp);
		cr_assert_eq(st.ud_qkey_drops, 2);
		cr_assert_eq(st.rq_consumed, 2);
		cr_assert_eq(st.ud_no_recv_drops, 0);
		cr_assert_eq(qt_stats(a.qp).ud_no_dest, 0);
	}
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RTS);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RTS);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_ud_world_destroy(&a, &b);
}

/* A controlled Q_Key other than 0x80000000 in the WR (0x80001234) sends
 * the QP's own Q_Key (QK), not the WR's: a receiver whose Q_Key is QK gets
 * the datagram, one whose Q_Key is the WR's value drops it. */
Test(ud, controlled_qkey_in_wr_sends_the_qps_own_qkey)
{
	const uint32_t wr_qkey = 0x80001234u;
	struct qt_end a, b, c;
	struct qpio_ah *ah;
	struct qpio_wc wc;

	if (qt_dev_is_rxe())
		qt_skip_test("rxe does not deliver a datagram sent with a controlled Q_Key");
	qt_ud_world_create(&a, &b, QK);
	qt_ud_end_create(&c, b.dev, wr_qkey, NULL);
	ah = qt_ah_create(a.pd, b.dev, 0);
	qt_post_recv(&b, 10, b.buf, 128);
	qt_post_recv(&c, 20, c.buf, 128);

	ud_send(&a, ah, qpio_qp_num(c.qp), wr_qkey, 16, 1);
	expect_send_ok(&a, 1, 16);
	cr_assert_eq(qpio_cq_poll(c.cq, &wc, 1), 0, "the WR's Q_Key is not sent");
	if (qt_dev_is_soft()) {
		cr_assert_eq(qt_stats(c.qp).ud_qkey_drops, 1);
		cr_assert_eq(qt_stats(c.qp).rq_consumed, 0);
	}

	ud_send(&a, ah, qpio_qp_num(b.qp), wr_qkey, 16, 2);
	expect_send_ok(&a, 2, 16);
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 10);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, QPIO_GRH_LEN + 16);
	cr_assert_eq(wc.src_qp, qpio_qp_num(a.qp));
	if (qt_dev_is_soft())
		cr_assert_eq(qt_stats(b.qp).ud_qkey_drops, 0);

	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_end_destroy(&c);
	qt_ud_world_destroy(&a, &b);
}

/* One UD QP, one burst of 3 WRs to 3 QPs on 2 devices (by LID and by
 * GID), one doorbell; each receiver gets its own payload. */
Test(ud, burst_to_three_destinations_one_doorbell)
{
	struct qt_end a, b1, b2, b3;
	struct qpio_device *da, *db, *dc;
	struct qpio_ah *ah_b, *ah_c;
	struct qpio_sge sge[3];
	struct qpio_send_wr wr[3];
	struct qpio_wc wc[4];
	struct qt_end *rx[3] = { &b1, &b2, &b3 };
	unsigned int i;
	int err = 1;

	da = qpio_rdma_dev_create("soft0");
	db = qpio_rdma_dev_create("soft1");
	dc = qpio_rdma_dev_create("soft2");
	qt_ud_end_create(&a, da, QK, NULL);
	qt_ud_end_create(&b1, db, QK, NULL);
	qt_ud_end_create(&b2, db, QK, NULL);
	qt_ud_end_create(&b3, dc, QK, NULL);
	ah_b = qt_ah_create(a.pd, db, 0);
	ah_c = qt_ah_create(a.pd, dc, 1);
	for (i = 0; i < 3; i++) {
		qt_fill(a.buf + 1000 * i, 100 + i, 20 + i);
		qt_post_recv(rx[i], 50 + i, rx[i]->buf, 1024);
		sge[i] = (struct qpio_sge){ (uintptr_t)a.buf + 1000 * i, 100 + i,
					    qpio_mr_lkey(a.mr) };
		wr[i] = qt_ud_wr(70 + i, &sge[i], 1, QPIO_SEND_SIGNALED,
				 i < 2 ? ah_b : ah_c, qpio_qp_num(rx[i]->qp), QK);
	}
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 3, &err), 3);
	cr_assert_eq(err, 0);
	cr_assert_eq(qt_stats(a.qp).sq_doorbells, 1);
	cr_assert_eq(qt_poll_n(a.cq, wc, 3), 3);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[i].wr_id, 70 + i);
		cr_assert_eq(wc[i].byte_len, 100 + i);
	}
	for (i = 0; i < 3; i++) {
		cr_assert_eq(qt_poll_n(rx[i]->cq, wc, 1), 1, "receiver %u", i);
		cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[0].wr_id, 50 + i);
		cr_assert_eq(wc[0].byte_len, QPIO_GRH_LEN + 100 + i);
		cr_assert_eq(wc[0].src_qp, qpio_qp_num(a.qp));
		cr_assert_eq(wc[0].qp_num, qpio_qp_num(rx[i]->qp));
		cr_assert_eq(wc[0].wc_flags, i < 2 ? 0 : QPIO_WC_GRH);
		cr_assert(qt_check(rx[i]->buf + QPIO_GRH_LEN, 100 + i, 20 + i));
		cr_assert_eq(qpio_cq_poll(rx[i]->cq, wc, 4), 0);
	}
	cr_assert_eq(qpio_ah_destroy(ah_b), 0);
	cr_assert_eq(qpio_ah_destroy(ah_c), 0);
	qt_end_destroy(&a);
	qt_end_destroy(&b1);
	qt_end_destroy(&b2);
	qt_end_destroy(&b3);
	cr_assert_eq(qpio_rdma_dev_close(da), 0);
	cr_assert_eq(qpio_rdma_dev_close(db), 0);
	cr_assert_eq(qpio_rdma_dev_close(dc), 0);
}

/* No receive posted: the datagram is lost and counted at the receiver; a
 * receive posted later does not get it. */
Test(ud, no_receive_dropped_and_counted)
{
	struct qt_end a, b;
	struct qpio_ah *ah;
	struct qpio_wc wc;

	qt_ud_world_create(&a, &b, QK);
	ah = qt_ah_create(a.pd, b.dev, 0);
	ud_send(&a, ah, qpio_qp_num(b.qp), QK, 32, 1);
	ud_send(&a, ah, qpio_qp_num(b.qp), QK, 32, 2);
	expect_send_ok(&a, 1, 32);
	expect_send_ok(&a, 2, 32);
	if (qt_dev_is_soft()) { /* the soft NIC counts the drops */
		cr_assert_eq(qt_stats(b.qp).ud_no_recv_drops, 2);
		cr_assert_eq(qt_stats(a.qp).rnr_naks, 0);
	} else {
		usleep(100000); /* let the device drop them before the post */
	}
	qt_post_recv(&b, 9, b.buf, 128);
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0, "lost datagrams stay lost");
	ud_send(&a, ah, qpio_qp_num(b.qp), QK, 32, 3);
	expect_send_ok(&a, 3, 32);
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 9);
	if (qt_dev_is_soft())
		cr_assert_eq(qt_stats(b.qp).ud_no_recv_drops, 2);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_ud_world_destroy(&a, &b);
}

/* IBA C10-93.1.1: a UD message over the port MTU (4096) is not sent and
 * completes without error; 4096 bytes is the largest that arrives. */
Test(ud, over_mtu_not_sent_c10_93_1_1)
{
	struct qt_end a, b;
	struct qpio_port_attr pa;
	struct qpio_ah *ah;
	struct qpio_wc wc;

	qt_require_soft("counts the refused datagram with the soft NIC's ud_too_long counter");
	qt_ud_world_create(&a, &b, QK);
	cr_assert_eq(qpio_rdma_port_query(b.dev, 1, &pa), 0);
	cr_assert_eq(pa.active_mtu, QPIO_MTU_4096);
	ah = qt_ah_create(a.pd, b.dev, 0);
	qt_post_recv(&b, 1, b.buf, QPIO_GRH_LEN + 8192);
	qt_fill(a.buf, 8192, 3);
	ud_send(&a, ah, qpio_qp_num(b.qp), QK, 4097, 1);
	expect_send_ok(&a, 1, 4097);
	cr_assert_eq(qt_stats(a.qp).ud_too_long, 1);
	cr_assert_eq(qt_stats(b.qp).rq_consumed, 0);
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RTS);

	ud_send(&a, ah, qpio_qp_num(b.qp), QK, 4096, 2);
	expect_send_ok(&a, 2, 4096);
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, QPIO_GRH_LEN + 4096);
	cr_assert(qt_check(b.buf + QPIO_GRH_LEN, 4096, 3));
	cr_assert_eq(qt_stats(a.qp).ud_too_long, 1);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_ud_world_destroy(&a, &b);
}

/* Inline UD send from a stack buffer with lkey 0. */
Test(ud, inline_send_from_stack)
{
	struct qt_end a, b;
	struct qpio_ah *ah;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc;
	uint8_t data[60];
	int err;

	qt_ud_world_create(&a, &b, QK);
	ah = qt_ah_create(a.pd, b.dev, 1);
	memset(b.buf, GUARD, 256);
	qt_post_recv(&b, 7, b.buf, 128);
	qt_fill(data, sizeof(data), 42);
	sge = (struct qpio_sge){ (uintptr_t)data, sizeof(data), 0 };
	wr = qt_ud_wr(8, &sge, 1, QPIO_SEND_SIGNALED | QPIO_SEND_INLINE, ah,
		      qpio_qp_num(b.qp), QK);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	memset(data, 0, sizeof(data));   /* the caller may reuse it at once */
	expect_send_ok(&a, 8, 60);
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 100);
	cr_assert_eq(wc.wc_flags, QPIO_WC_GRH);
	cr_assert(qt_check(b.buf + QPIO_GRH_LEN, 60, 42));
	cr_assert_eq(b.buf[100], GUARD);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_ud_world_destroy(&a, &b);
}

/* Unknown LID, unknown GID, no such QPN, an RC QP, a UD QP in INIT: the
 * sender completes SUCCESS and counts each datagram as lost. */
Test(ud, unknown_destination_counted_at_sender)
{
	struct qt_end a, b, c;
	struct qpio_ah_attr aa;
	struct qpio_ah *ah_lid, *ah_gid, *ah_b;
	struct qpio_qp_attr attr;
	struct qpio_qp_init_attr ia;
	struct qpio_qp *rc, *init_qp;
	struct qpio_wc wc;

	qt_require_soft("addresses LID 77 and counts ud_no_dest; RoCE ports have no LIDs");
	qt_ud_world_create(&a, &b, QK);
	memset(&aa, 0, sizeof(aa));
	aa.port_num = 1;
	aa.dlid = 77;
	ah_lid = qpio_ah_create(a.pd, &aa);
	cr_assert_not_null(ah_lid);
	aa.is_global = 1;
	aa.grh.dgid.raw[0] = 0xfe;
	aa.grh.dgid.raw[1] = 0x80;
	aa.grh.dgid.raw[15] = 0x77;
	ah_gid = qpio_ah_create(a.pd, &aa);
	cr_assert_not_null(ah_gid, "an unknown GID is accepted");
	ah_b = qt_ah_create(a.pd, b.dev, 0);

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = b.cq;
	ia.recv_cq = b.cq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap = (struct qpio_qp_cap){ 4, 4, 1, 1, 0 };
	rc = qpio_qp_create(b.pd, &ia);
	cr_assert_not_null(rc);
	qt_qp_connect(rc, a.dev, qpio_qp_num(a.qp), 7);
	ia.qp_type = QPIO_QPT_UD;
	init_qp = qpio_qp_create(b.pd, &ia);
	cr_assert_not_null(init_qp);
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = QPIO_QPS_INIT;
	attr.port_num = 1;
	attr.qkey = QK;
	cr_assert_eq(qpio_qp_modify(init_qp, &attr, QPIO_QP_STATE |
				    QPIO_QP_PKEY_INDEX | QPIO_QP_PORT |
				    QPIO_QP_QKEY), 0);
	qt_post_recv(&b, 1, b.buf, 128);
	c = b;
	c.qp = init_qp;
	qt_post_recv(&c, 2, b.buf + 128, 128);

	ud_send(&a, ah_lid, qpio_qp_num(b.qp), QK, 8, 1);
	ud_send(&a, ah_gid, qpio_qp_num(b.qp), QK, 8, 2);
	ud_send(&a, ah_b, 0xabcdef, QK, 8, 3);
	ud_send(&a, ah_b, qpio_qp_num(rc), QK, 8, 4);
	ud_send(&a, ah_b, qpio_qp_num(init_qp), QK, 8, 5);
	for (uint64_t id = 1; id <= 5; id++)
		expect_send_ok(&a, id, 8);
	cr_assert_eq(qt_stats(a.qp).ud_no_dest, 5);
	cr_assert_eq(qt_stats(b.qp).rq_consumed, 0);
	cr_assert_eq(qt_stats(init_qp).rq_consumed, 0);
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RTS);

	cr_assert_eq(qpio_qp_destroy(rc), 0);
	cr_assert_eq(qpio_qp_destroy(init_qp), 0);
	cr_assert_eq(qpio_ah_destroy(ah_lid), 0);
	cr_assert_eq(qpio_ah_destroy(ah_gid), 0);
	cr_assert_eq(qpio_ah_destroy(ah_b), 0);
	qt_ud_world_destroy(&a, &b);
}

/* ud-grh: 256-byte receive (no room for GRH + payload) and a 256-byte send:
 * guard bytes intact, the datagram dropped and counted, the receive stays
 * posted and the QP in RTS; a 216-byte datagram then fits exactly. */
Test(ud, c07_receive_too_short_dropped_qp_stays_rts)
{
	struct qt_end a, b;
	struct qpio_ah *ah;
	struct qpio_wc wc;
	unsigned int i;

	qt_require_soft("rxe writes the start of a datagram into a receive too short for it (byte 64 changed)");
	qt_ud_world_create(&a, &b, QK);
	ah = qt_ah_create(a.pd, b.dev, 1);
	memset(b.buf, GUARD, 1024);
	qt_post_recv(&b, 1, b.buf + 64, 256);
	qt_fill(a.buf, 256, 8);
	ud_send(&a, ah, qpio_qp_num(b.qp), QK, 256, 1);
	expect_send_ok(&a, 1, 256);
	for (i = 0; i < 1024; i++)
		cr_assert_eq(b.buf[i], GUARD, "byte %u", i);
	cr_assert_eq(qt_stats(b.qp).ud_len_drops, 1);
	cr_assert_eq(qt_stats(b.qp).rq_consumed, 0);
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RTS);

	ud_send(&a, ah, qpio_qp_num(b.qp), QK, 216, 2);
	expect_send_ok(&a, 2, 216);
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 1);
	cr_assert_eq(wc.byte_len, 256);
	cr_assert(qt_check(b.buf + 64 + QPIO_GRH_LEN, 216, 8));
	cr_assert_eq(b.buf[63], GUARD);
	cr_assert_eq(b.buf[64 + 256], GUARD);
	cr_assert_eq(qt_stats(b.qp).ud_len_drops, 1);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_ud_world_destroy(&a, &b);
}

/* Refused at post time with -EINVAL, nothing written: no AH, an AH of
 * another PD, a QPN over 24 bits, an RDMA opcode on UD. */
Test(ud, post_refuses_bad_ud_wrs)
{
	struct qt_end a, b;
	struct qpio_pd *pd2;
	struct qpio_ah *ah, *ah2;
	struct qpio_sge sge;
	struct qpio_send_wr wr[2];
	int err = 0;

	qt_ud_world_create(&a, &b, QK);
	ah = qt_ah_create(a.pd, b.dev, 0);
	pd2 = qpio_pd_alloc(a.dev);
	ah2 = qt_ah_create(pd2, b.dev, 0);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 8, qpio_mr_lkey(a.mr) };
	wr[0] = qt_ud_wr(1, &sge, 1, QPIO_SEND_SIGNALED, NULL, qpio_qp_num(b.qp), QK);
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 1, &err), 0);
	cr_assert_eq(err, -EINVAL);
	wr[0].wr.ud.ah = ah2;
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 1, &err), 0);
	cr_assert_eq(err, -EINVAL);
	wr[0].wr.ud.ah = ah;
	wr[0].wr.ud.remote_qpn = 0x1000000;
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 1, &err), 0);
	cr_assert_eq(err, -EINVAL);
	wr[0].wr.ud.remote_qpn = qpio_qp_num(b.qp);
	wr[1] = wr[0];
	wr[1].opcode = QPIO_WR_RDMA_WRITE;
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 2, &err), 1, "WR 0 posted");
	cr_assert_eq(err, -EINVAL);
	cr_assert_eq(qt_stats(a.qp).sq_posted, 1);
	cr_assert_eq(qt_stats(a.qp).sq_doorbells, 1);
	cr_assert_eq(qpio_ah_destroy(ah2), 0);
	cr_assert_eq(qpio_pd_free(pd2), 0);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_ud_world_destroy(&a, &b);
}

/* Many senders, one UD QP: two lcores each send 2000 datagrams to the
 * same receiver at once; every datagram lands in its own receive exactly
 * once (receive slots are taken with a CAS, CQEs reserved with a CAS). */
#define MS_PER_SENDER 2000u

struct ms_sender {
	struct qt_end *e;
	struct qpio_ah *ah;
	uint32_t dst_qpn;
	uint32_t id;
	uint32_t bad;
};

static int
ms_main(void *arg)
{
	struct ms_sender *s = arg;
	struct qpio_wc wc[32];
	uint32_t seq = 0, done = 0;

	while (done < MS_PER_SENDER) {
		if (seq < MS_PER_SENDER && seq - done < 32) {
			uint32_t msg[2] = { s->id, seq };
			struct qpio_sge sge = { (uintptr_t)msg, sizeof(msg), 0 };
			struct qpio_send_wr wr = qt_ud_wr(seq, &sge, 1,
				QPIO_SEND_SIGNALED | QPIO_SEND_INLINE, s->ah,
				s->dst_qpn, QK);

			seq += qpio_qp_post_send(s->e->qp, &wr, 1, NULL);
		}
		for (uint16_t k = qpio_cq_poll(s->e->cq, wc, 32), i = 0; i < k; i++) {
			if (wc[i].status != QPIO_WC_SUCCESS)
				s->bad++;
			done++;
		}
	}
	return 0;
}

Test(ud, many_senders_two_lcores_one_ud_qp, .timeout = 120)
{
	struct qt_end a1, a2, b;
	struct qt_pair_opts ob = { .max_recv_wr = 2 * MS_PER_SENDER,
				   .cqe = 2 * MS_PER_SENDER,
				   .buf_len = 2 * MS_PER_SENDER * 64 };
	struct qpio_device *da, *db;
	struct ms_sender s1, s2;
	struct qpio_wc wc[64];
	unsigned int lcore = rte_get_next_lcore(-1, 1, 0);
	uint8_t seen[2][MS_PER_SENDER];
	uint32_t i, got = 0, dup = 0;

	cr_assert_lt(lcore, RTE_MAX_LCORE, "needs a second lcore (-l 0-1)");
	da = qpio_rdma_dev_create("soft0");
	db = qpio_rdma_dev_create("soft1");
	qt_ud_end_create(&a1, da, QK, NULL);
	qt_ud_end_create(&a2, da, QK, NULL);
	qt_ud_end_create(&b, db, QK, &ob);
	for (i = 0; i < 2 * MS_PER_SENDER; i++)
		qt_post_recv(&b, i, b.buf + 64 * i, 64);
	s1 = (struct ms_sender){ &a1, qt_ah_create(a1.pd, db, 0), qpio_qp_num(b.qp), 0, 0 };
	s2 = (struct ms_sender){ &a2, qt_ah_create(a2.pd, db, 1), qpio_qp_num(b.qp), 1, 0 };
	cr_assert_eq(rte_eal_remote_launch(ms_main, &s2, lcore), 0);
	ms_main(&s1);
	cr_assert_eq(rte_eal_wait_lcore(lcore), 0);
	cr_assert_eq(s1.bad + s2.bad, 0);

	memset(seen, 0, sizeof(seen));
	while (got < 2 * MS_PER_SENDER) {
		uint16_t k = qpio_cq_poll(b.cq, wc, 64);

		cr_assert_neq(k, 0, "only %u of %u datagrams arrived", got,
			      2 * MS_PER_SENDER);
		for (i = 0; i < k; i++) {
			uint32_t msg[2];

			cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
			cr_assert_eq(wc[i].byte_len, QPIO_GRH_LEN + 8);
			memcpy(msg, b.buf + 64 * wc[i].wr_id + QPIO_GRH_LEN, 8);
			cr_assert_lt(msg[0], 2);
			cr_assert_lt(msg[1], MS_PER_SENDER);
			cr_assert_eq(wc[i].src_qp, qpio_qp_num(msg[0] ? a2.qp : a1.qp));
			cr_assert_eq(wc[i].wc_flags, msg[0] ? QPIO_WC_GRH : 0);
			dup += seen[msg[0]][msg[1]]++ != 0;
		}
		got += k;
	}
	cr_assert_eq(dup, 0);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 64), 0);
	cr_assert_eq(qt_stats(b.qp).rq_consumed, 2 * MS_PER_SENDER);
	cr_assert_eq(qt_stats(b.qp).ud_no_recv_drops, 0);
	cr_assert_eq(qpio_ah_destroy(s1.ah), 0);
	cr_assert_eq(qpio_ah_destroy(s2.ah), 0);
	qt_end_destroy(&a1);
	qt_end_destroy(&a2);
	qt_end_destroy(&b);
	cr_assert_eq(qpio_rdma_dev_close(da), 0);
	cr_assert_eq(qpio_rdma_dev_close(db), 0);
}
