/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The soft fabric inside one process: finding a device by name, and MRs
 * outside DPDK memory, which only the process's own devices may reach.
 * test_mp.c covers two processes.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>

#include "test_common.h"

TestSuite(soft_fabric, .init = qt_eal_init, .fini = qt_eal_fini);

Test(soft_fabric, dev_find_by_name)
{
	struct qpio_device *d0 = qpio_rdma_dev_create("soft0");
	struct qpio_device *d7 = qpio_rdma_dev_create("soft7");
	struct qpio_device *d5;
	union qpio_gid gid, want;
	uint16_t lid = 0;

	cr_assert_not_null(d0);
	cr_assert_not_null(d7);
	cr_assert_eq(qpio_soft_dev_find("soft7", &lid, &gid), 0);
	cr_assert_eq(lid, 2);
	cr_assert_eq(qpio_rdma_gid_query(d7, 1, 0, &want), 0);
	cr_assert_arr_eq(gid.raw, want.raw, sizeof(gid.raw));
	cr_assert_eq(qpio_soft_dev_find("soft0", &lid, NULL), 0);
	cr_assert_eq(lid, 1);
	/* the whole name, not a prefix of it */
	cr_assert_eq(qpio_soft_dev_find("soft", &lid, NULL), -ENODEV);
	cr_assert_eq(qpio_soft_dev_find("soft70", &lid, NULL), -ENODEV);
	cr_assert_eq(lid, 1);
	cr_assert_eq(qpio_soft_dev_find(NULL, &lid, NULL), -EINVAL);
	cr_assert_eq(qpio_soft_dev_find("soft0", NULL, NULL), -EINVAL);
	/* a closed device is gone; its LID goes to the next device */
	cr_assert_eq(qpio_rdma_dev_close(d7), 0);
	cr_assert_eq(qpio_soft_dev_find("soft7", &lid, NULL), -ENODEV);
	d5 = qpio_rdma_dev_create("soft5");
	cr_assert_not_null(d5);
	cr_assert_eq(qpio_soft_dev_find("soft5", &lid, NULL), 0);
	cr_assert_eq(lid, 2);
	cr_assert_eq(qpio_rdma_dev_close(d5), 0);
	cr_assert_eq(qpio_rdma_dev_close(d0), 0);
}

/* Memory from the C heap is private to the process, but its own devices
 * reach it: a WRITE into it and a SEND into a receive buffer in it both
 * arrive between two devices of one process. */
Test(soft_fabric, heap_mr_reached_in_process)
{
	struct qt_end a, b;
	uint8_t *heap = calloc(1, 4096);
	struct qpio_mr *mr;
	struct qpio_sge sg, rsg;
	struct qpio_send_wr wr;
	struct qpio_recv_wr rwr;
	struct qpio_wc wc[2];
	int err = 0;

	cr_assert_not_null(heap);
	qt_pair_create(&a, &b, NULL);
	mr = qpio_mr_reg(b.pd, heap, 4096, QPIO_ACCESS_ALL);
	cr_assert_not_null(mr);
	qt_fill(a.buf, 512, 21);

	sg = (struct qpio_sge){ (uintptr_t)a.buf, 512, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(1, &sg, 1, QPIO_SEND_SIGNALED);
	wr.opcode = QPIO_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)heap + 1024;
	wr.wr.rdma.rkey = qpio_mr_rkey(mr);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert(qt_check(heap + 1024, 512, 21));

	rsg = (struct qpio_sge){ (uintptr_t)heap, 512, qpio_mr_lkey(mr) };
	rwr = (struct qpio_recv_wr){ 2, &rsg, 1 };
	cr_assert_eq(qpio_qp_post_recv(b.qp, &rwr, 1, &err), 1);
	qt_fill(a.buf, 300, 22);
	sg.length = 300;
	wr = qt_send_wr(3, &sg, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(qt_poll_n(b.cq, wc, 1), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[0].wr_id, 2);
	cr_assert_eq(wc[0].byte_len, 300);
	cr_assert(qt_check(heap, 300, 22));

	cr_assert_eq(qpio_mr_dereg(mr), 0);
	qt_pair_destroy(&a, &b);
	free(heap);
}
