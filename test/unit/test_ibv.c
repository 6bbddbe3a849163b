/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ibv driver's own behaviour: devargs, the device it reports, one
 * provider call per burst, the GRH rule on RoCE ports. The devargs test
 * runs everywhere; the others need QPIO_TEST_DEV_A to name an ibv device
 * (test/rxe runs them against Soft-RoCE).
 */
#include <inttypes.h>
#include <string.h>

#include <rte_errno.h>

#include "test_common.h"

TestSuite(ibv, .init = qt_eal_init, .fini = qt_eal_fini);

#define qt_require_ibv() do { \
		if (strncmp(qt_dev_a(), "ibv", 3) != 0) \
			qt_skip_test("needs an ibv device in QPIO_TEST_DEV_A " \
				     "(test/rxe/run.sh)"); \
	} while (0)

Test(ibv, devargs_errors)
{
	/* checked before any device is opened */
	cr_assert_null(qpio_rdma_dev_create("ibv0,port=0"));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_rdma_dev_create("ibv0,port=256"));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_rdma_dev_create("ibv0,gid_index=256"));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_rdma_dev_create("ibv0,bogus=1"));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_rdma_dev_create("ibv0,dev"));
	cr_assert_eq(rte_errno, EINVAL);
	/* no verbs device of that name (on a host without RDMA, none at all) */
	cr_assert_null(qpio_rdma_dev_create("ibv0,dev=qpio_no_such_dev"));
	cr_assert_eq(rte_errno, ENODEV);
	cr_assert_eq(qpio_rdma_dev_count(), 0);
	cr_assert_eq(qpio_ibv_dev_info(NULL, NULL), -EINVAL);
	cr_assert_eq(qpio_ibv_qp_stats(NULL, NULL), -EINVAL);
}

Test(ibv, device_port_and_limits)
{
	struct qpio_ibv_dev_info info;
	struct qpio_device_attr da;
	struct qpio_port_attr pa;
	union qpio_gid gid;
	struct qpio_device *d;

	qt_require_ibv();
	d = qpio_rdma_dev_create(qt_dev_a());
	cr_assert_not_null(d, "%s: %s", qt_dev_a(), rte_strerror(rte_errno));
	cr_assert_eq(qpio_rdma_dev_query(d, &da), 0);
	cr_assert_str_eq(da.driver, "ibv");
	cr_assert_eq(da.phys_port_cnt, 1);
	cr_assert_eq(da.max_cqe & (da.max_cqe - 1), 0, "max_cqe %u", da.max_cqe);
	cr_assert_eq(da.max_qp_wr & (da.max_qp_wr - 1), 0);
	cr_assert_eq(qpio_ibv_dev_info(d, &info), 0);
	cr_assert_eq(info.port, 1);
	cr_assert_eq(info.gid_index, 0);
	cr_assert_eq(qpio_rdma_port_query(d, 1, &pa), 0);
	cr_assert_eq(pa.state, QPIO_PORT_ACTIVE);
	cr_assert_eq(qpio_rdma_port_query(d, 2, &pa), -EINVAL);
	cr_assert_eq(qpio_rdma_gid_query(d, 1, 0, &gid), 0);
	if (qt_dev_is_rxe()) {
		/* Soft-RoCE of Linux 6.1 (ibv_devinfo -v in the VM) */
		cr_assert_eq(strncmp(info.ibdev, "rxe", 3), 0);
		cr_assert_eq(info.roce, 1);
		cr_assert_eq(pa.link_layer, QPIO_LINK_LAYER_ETHERNET);
		cr_assert_eq(pa.lid, 0);
		cr_assert_eq(da.max_cqe, 16384);       /* 32767 rounded down */
		cr_assert_eq(da.max_sge, 32);
		cr_assert_eq(da.max_inline_data, 512, "probed %u",
			     da.max_inline_data);
		cr_assert_eq(da.atomic_cap, QPIO_ATOMIC_HCA);
		/* the default GID is link-local: fe80::/64 */
		cr_assert_eq(gid.raw[0], 0xfe);
		cr_assert_eq(gid.raw[1], 0x80);
	}
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

/* A burst of 16 sends is one ibv_post_send, 16 receives one ibv_post_recv:
 * the provider rings one doorbell per burst. */
Test(ibv, burst_is_one_provider_call)
{
	struct qpio_ibv_qp_stats sa, sb;
	struct qpio_send_wr wr[16];
	struct qpio_recv_wr rwr[16];
	struct qpio_sge sge[16], rsge[16];
	struct qpio_wc wc[32];
	struct qt_end a, b;
	unsigned int i;
	int err = 1;

	qt_require_ibv();
	qt_pair_create(&a, &b, NULL);
	cr_assert_eq(qpio_ibv_qp_stats(a.qp, &sa), 0);
	cr_assert_eq(qpio_ibv_qp_stats(b.qp, &sb), 0);
	for (i = 0; i < 16; i++) {
		rsge[i] = (struct qpio_sge){ (uintptr_t)b.buf + i * 128, 128,
					     qpio_mr_lkey(b.mr) };
		rwr[i] = (struct qpio_recv_wr){ .wr_id = 100 + i,
						.sg_list = &rsge[i], .num_sge = 1 };
		qt_fill(a.buf + i * 128, 100, i);
		sge[i] = (struct qpio_sge){ (uintptr_t)a.buf + i * 128, 100,
					    qpio_mr_lkey(a.mr) };
		wr[i] = qt_send_wr(i, &sge[i], 1, QPIO_SEND_SIGNALED);
	}
	cr_assert_eq(qpio_qp_post_recv(b.qp, rwr, 16, &err), 16);
	cr_assert_eq(err, 0);
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 16, &err), 16);
	cr_assert_eq(err, 0);
	cr_assert_eq(qt_poll_n(a.cq, wc, 16), 16);
	for (i = 0; i < 16; i++) {
		cr_assert_eq(wc[i].wr_id, i);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
	}
	cr_assert_eq(qt_poll_n(b.cq, wc, 16), 16);
	for (i = 0; i < 16; i++) {
		cr_assert_eq(wc[i].wr_id, 100 + i);
		cr_assert_eq(wc[i].byte_len, 100);
		cr_assert(qt_check(b.buf + i * 128, 100, i), "message %u", i);
	}
	cr_assert_eq(qpio_ibv_qp_stats(a.qp, &sa), 0);
	cr_assert_eq(qpio_ibv_qp_stats(b.qp, &sb), 0);
	cr_assert_eq(sa.post_send_calls, 1);
	cr_assert_eq(sa.sq_posted, 16);
	cr_assert_eq(sa.sq_completed, 16);
	cr_assert_eq(sb.post_recv_calls, 1);
	cr_assert_eq(sb.rq_posted, 16);
	cr_assert_eq(sb.rq_completed, 16);
	qt_pair_destroy(&a, &b);
}

/* The flat receive burst: 19 receives into an RQ of 16 are 16 posted in
 * one ibv_post_recv (-ENOMEM for the rest), wr_ids from UINT64_MAX - 7 on
 * (across 2^64); a full RQ takes none and calls nothing; 16 SENDs of
 * distinct lengths and payloads land in them in order. */
Test(ibv, recv_sge_burst_and_full_rq)
{
	struct qt_pair_opts o = { .max_recv_wr = 16, .max_recv_sge = 1,
				  .max_send_wr = 16, .rnr_retry = 7 };
	const uint64_t base = UINT64_MAX - 7;
	struct qpio_ibv_qp_stats sb;
	struct qpio_send_wr wr[16];
	struct qpio_sge sge[16], rsge[19];
	struct qpio_wc wc[32];
	struct qt_end a, b;
	unsigned int i;
	int err = 1;

	qt_require_ibv();
	qt_pair_create(&a, &b, &o);
	for (i = 0; i < 19; i++)
		rsge[i] = (struct qpio_sge){ (uintptr_t)b.buf + (i % 16) * 256,
					     256, qpio_mr_lkey(b.mr) };
	for (i = 0; i < 16; i++) {
		qt_fill(a.buf + i * 256, 1 + 13 * i, 0x40 + i);
		sge[i] = (struct qpio_sge){ (uintptr_t)a.buf + i * 256,
					    1 + 13 * i, qpio_mr_lkey(a.mr) };
		wr[i] = qt_send_wr(i, &sge[i], 1, QPIO_SEND_SIGNALED);
	}
	cr_assert_eq(qpio_qp_post_recv_sge(b.qp, rsge, 19, base, &err), 16);
	cr_assert_eq(err, -ENOMEM, "err %d", err);
	err = 1;
	cr_assert_eq(qpio_qp_post_recv_sge(b.qp, rsge, 1, 0x99, &err), 0);
	cr_assert_eq(err, -ENOMEM, "full RQ: err %d", err);
	cr_assert_eq(qpio_ibv_qp_stats(b.qp, &sb), 0);
	cr_assert_eq(sb.post_recv_calls, 1);
	cr_assert_eq(sb.rq_posted, 16);
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 16, &err), 16);
	cr_assert_eq(err, 0);
	cr_assert_eq(qt_poll_n(a.cq, wc, 16), 16);
	for (i = 0; i < 16; i++) {
		cr_assert_eq(wc[i].wr_id, i);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
	}
	cr_assert_eq(qt_poll_n(b.cq, wc, 16), 16);
	for (i = 0; i < 16; i++) {
		cr_assert_eq(wc[i].wr_id, base + i, "recv %u: wr_id 0x%" PRIx64,
			     i, wc[i].wr_id);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS, "recv %u: %s", i,
			     qpio_wc_status_str(wc[i].status));
		cr_assert_eq(wc[i].opcode, QPIO_WC_RECV);
		cr_assert_eq(wc[i].byte_len, 1 + 13 * i);
		cr_assert(qt_check(b.buf + i * 256, 1 + 13 * i, 0x40 + i),
			  "message %u", i);
	}
	cr_assert_eq(wc[8].wr_id, 0);
	cr_assert_eq(qpio_ibv_qp_stats(b.qp, &sb), 0);
	cr_assert_eq(sb.post_recv_calls, 1);
	cr_assert_eq(sb.rq_completed, 16);
	/* the RQ takes receives again */
	err = 1;
	cr_assert_eq(qpio_qp_post_recv_sge(b.qp, rsge, 1, 0x99, &err), 1);
	cr_assert_eq(err, 0);
	qt_pair_destroy(&a, &b);
}

/* On a RoCE port an address vector without a GRH is refused by qpio,
 * before the kernel sees it, and the QP stays in INIT. */
Test(ibv, roce_av_without_grh_is_einval)
{
	struct qpio_qp_init_attr ia;
	struct qpio_qp_attr at;
	struct qpio_port_attr pa;
	struct qpio_device *d;
	struct qpio_pd *pd;
	struct qpio_cq *cq;
	struct qpio_qp *qp;

	qt_require_ibv();
	d = qpio_rdma_dev_create(qt_dev_a());
	cr_assert_not_null(d);
	cr_assert_eq(qpio_rdma_port_query(d, 1, &pa), 0);
	if (pa.link_layer != QPIO_LINK_LAYER_ETHERNET)
		qt_skip_test("port is InfiniBand: LIDs route without a GRH");
	pd = qpio_pd_alloc(d);
	cq = qpio_cq_create(d, 16, SOCKET_ID_ANY);
	cr_assert_not_null(cq);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	qp = qpio_qp_create(pd, &ia);
	cr_assert_not_null(qp);
	memset(&at, 0, sizeof(at));
	at.qp_state = QPIO_QPS_INIT;
	at.port_num = 1;
	at.qp_access_flags = QPIO_ACCESS_LOCAL_WRITE;
	cr_assert_eq(qpio_qp_modify(qp, &at, QPIO_QP_STATE | QPIO_QP_PKEY_INDEX |
				    QPIO_QP_PORT | QPIO_QP_ACCESS_FLAGS), 0);
	memset(&at, 0, sizeof(at));
	at.qp_state = QPIO_QPS_RTR;
	at.path_mtu = QPIO_MTU_1024;
	at.dest_qp_num = qpio_qp_num(qp);
	at.max_dest_rd_atomic = 1;
	at.min_rnr_timer = 1;
	at.ah_attr.port_num = 1;
	cr_assert_eq(qpio_qp_modify(qp, &at, QPIO_QP_STATE | QPIO_QP_AV |
				    QPIO_QP_PATH_MTU | QPIO_QP_DEST_QPN |
				    QPIO_QP_RQ_PSN | QPIO_QP_MAX_DEST_RD_ATOMIC |
				    QPIO_QP_MIN_RNR_TIMER), -EINVAL);
	cr_assert_eq(qpio_qp_state(qp), QPIO_QPS_INIT);
	cr_assert_eq(qpio_qp_destroy(qp), 0);
	cr_assert_eq(qpio_cq_destroy(cq), 0);
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}
