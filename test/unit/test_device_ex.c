/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Extended device query (qpio_rdma_dev_query_ex, ibv_query_device_ex) and
 * completion timestamps (QPIO_CQ_FLAG_TIMESTAMP, qpio_cq_poll_ts) on the
 * soft NIC.
 */
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "test_common.h"

TestSuite(device_ex, .init = qt_eal_init, .fini = qt_eal_fini);

Test(device_ex, soft_attributes)
{
	struct qpio_device *d = qpio_rdma_dev_create("soft0,max_inline=128");
	struct qpio_device_attr a;
	struct qpio_device_attr_ex x;

	cr_assert_not_null(d);
	cr_assert_eq(qpio_rdma_dev_query(d, &a), 0);
	memset(&x, 0xa5, sizeof(x));
	cr_assert_eq(qpio_rdma_dev_query_ex(d, &x), 0);
	cr_assert_eq(memcmp(&x.orig, &a, sizeof(a)), 0, "orig is dev_query");
	cr_assert_eq(x.completion_timestamp_mask, UINT64_MAX);
	cr_assert_eq(x.timestamp_clock_hz, rte_get_tsc_hz());
	cr_assert_eq(x.max_inline_rc, 128);
	cr_assert_eq(x.max_inline_uc, 128);
	cr_assert_eq(x.max_inline_ud, 128);
	cr_assert_eq(x.atomic_size_mask, 1u << 3, "8-byte atomics");
	cr_assert_eq(x.odp_caps, QPIO_ODP_NONE);
	cr_assert_eq(x.orig.max_cqe, 65536);
	cr_assert_eq(x.orig.max_srq_wr, a.max_qp_wr);
	cr_assert_eq(qpio_rdma_dev_query_ex(NULL, &x), -EINVAL);
	cr_assert_eq(qpio_rdma_dev_query_ex(d, NULL), -EINVAL);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

Test(device_ex, cq_create_ex_flags)
{
	struct qpio_device *d = qpio_rdma_dev_create("soft0");
	struct qpio_cq_init_attr ca = { .cqe = 100, .socket_id = SOCKET_ID_ANY };
	struct qpio_wc wc[4];
	uint64_t ts[4];
	struct qpio_cq *cq;

	cr_assert_not_null(d);
	ca.flags = 1u << 1;
	cr_assert_null(qpio_cq_create_ex(d, &ca), "unknown flag");
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_cq_create_ex(d, NULL));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_cq_create_ex(NULL, &ca));
	cr_assert_eq(rte_errno, EINVAL);
	ca.flags = QPIO_CQ_FLAG_TIMESTAMP;
	ca.cqe = 0;
	cr_assert_null(qpio_cq_create_ex(d, &ca), "cqe 0");
	cr_assert_eq(rte_errno, EINVAL);
	ca.cqe = 100;
	cq = qpio_cq_create_ex(d, &ca);
	cr_assert_not_null(cq, "%s", rte_strerror(rte_errno));
	cr_assert_eq(qpio_cq_depth(cq), 128);
	cr_assert_eq(qpio_cq_poll_ts(cq, wc, ts, 4), 0, "empty");
	/* A timestamp CQ resizes like any other. */
	cr_assert_eq(qpio_cq_resize(cq, 8), 8);
	cr_assert_eq(qpio_cq_destroy(cq), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

/* One end on a new device from devargs with a CQ of 64 and the given
 * flags (RC QP of 16 WRs each way, one SGE; 64 KiB MR). */
static void
ts_end_create(struct qt_end *e, const char *devargs, uint32_t flags)
{
	const struct qt_pair_opts o = { .max_send_wr = 16, .max_recv_wr = 16,
					.max_send_sge = 1, .max_recv_sge = 1,
					.cqe = 64, .buf_len = 1 << 16,
					.cq_flags = flags };
	struct qpio_device *dev = qpio_rdma_dev_create(devargs);

	cr_assert_not_null(dev, "%s", devargs);
	qt_end_create(e, dev, &o);
}

Test(device_ex, completion_timestamps_from_the_tsc)
{
	struct qt_end a, b;
	struct qpio_wc wc[4];
	uint64_t ts[4], t0, t1, t2;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	int err = 1;

	qt_require_soft("the soft NIC's TSC timestamps");
	ts_end_create(&a, "soft0", QPIO_CQ_FLAG_TIMESTAMP);
	ts_end_create(&b, "soft1", 0);
	qt_qp_connect(a.qp, b.dev, qpio_qp_num(b.qp), 7);
	qt_qp_connect(b.qp, a.dev, qpio_qp_num(a.qp), 7);
	qt_post_recv(&b, 11, b.buf, 64);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 32, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(21, &sge, 1, QPIO_SEND_SIGNALED);
	t0 = rte_rdtsc();
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);
	/* a's CQ asked for timestamps: the send completion has one. */
	memset(ts, 0xff, sizeof(ts));
	{
		unsigned int got = 0, spins = 0;

		while (got == 0 && spins++ < 100000000)
			got = qpio_cq_poll_ts(a.cq, wc, ts, 4);
		cr_assert_eq(got, 1);
	}
	t1 = rte_rdtsc();
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[0].wr_id, 21);
	cr_assert_eq(wc[0].opcode, QPIO_WC_SEND);
	cr_assert(ts[0] >= t0 && ts[0] <= t1,
		  "send ts %lu not within the post %lu .. poll %lu",
		  (unsigned long)ts[0], (unsigned long)t0, (unsigned long)t1);
	cr_assert_eq(ts[1], UINT64_MAX, "only the completions polled");
	/* b's CQ did not ask: qpio_cq_poll_ts() gives 0. */
	memset(ts, 0xff, sizeof(ts));
	{
		unsigned int got = 0, spins = 0;

		while (got == 0 && spins++ < 100000000)
			got = qpio_cq_poll_ts(b.cq, wc, ts, 4);
		cr_assert_eq(got, 1);
	}
	cr_assert_eq(wc[0].wr_id, 11);
	cr_assert_eq(wc[0].byte_len, 32);
	cr_assert_eq(ts[0], 0);
	cr_assert_eq(ts[1], UINT64_MAX);
	/* An error completion (bad lkey) carries its timestamp too. */
	sge.lkey = qpio_mr_lkey(a.mr) + 0x100;
	wr = qt_send_wr(22, &sge, 1, QPIO_SEND_SIGNALED);
	t1 = rte_rdtsc();
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);
	{
		unsigned int got = 0, spins = 0;

		while (got == 0 && spins++ < 100000000)
			got = qpio_cq_poll_ts(a.cq, wc, ts, 1);
		cr_assert_eq(got, 1);
	}
	t2 = rte_rdtsc();
	cr_assert_eq(wc[0].wr_id, 22);
	cr_assert_eq(wc[0].status, QPIO_WC_LOC_PROT_ERR, "status %d",
		     (int)wc[0].status);
	cr_assert(ts[0] >= t1 && ts[0] <= t2,
		  "error ts %lu not within %lu .. %lu", (unsigned long)ts[0],
		  (unsigned long)t1, (unsigned long)t2);
	qt_end_destroy(&a);
	qt_end_destroy(&b);
	cr_assert_eq(qpio_rdma_dev_close(a.dev), 0);
	cr_assert_eq(qpio_rdma_dev_close(b.dev), 0);
}
