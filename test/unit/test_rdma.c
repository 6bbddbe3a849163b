/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/rdma object model: devices and devargs, PD/CQ busy rules, the MR
 * access-flag rule.
 */
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "test_common.h"

TestSuite(rdma, .init = qt_eal_init, .fini = qt_eal_fini);

Test(rdma, dev_create_query_close)
{
	struct qpio_device_attr a;
	struct qpio_port_attr pa;
	union qpio_gid gid;
	struct qpio_device *d = qpio_rdma_dev_create("soft0,max_qp=64,max_inline=128");

	cr_assert_not_null(d);
	cr_assert_eq(qpio_rdma_dev_count(), 1);
	cr_assert_eq(qpio_rdma_dev_get_by_name("soft0"), d);
	cr_assert_eq(qpio_rdma_dev_get(qpio_rdma_dev_index(d)), d);
	cr_assert_eq(qpio_rdma_dev_query(d, &a), 0);
	cr_assert_str_eq(a.name, "soft0");
	cr_assert_str_eq(a.driver, "soft");
	cr_assert_eq(a.max_qp, 64);
	cr_assert_eq(a.max_inline_data, 128);
	cr_assert_eq(a.phys_port_cnt, 1);
	cr_assert_eq(a.atomic_cap, QPIO_ATOMIC_GLOB);
	cr_assert_eq(a.max_qp_rd_atom, 16);
	cr_assert_eq(a.max_qp_init_rd_atom, 16);
	cr_assert_eq(qpio_rdma_port_query(d, 1, &pa), 0);
	cr_assert_eq(pa.state, QPIO_PORT_ACTIVE);
	cr_assert_eq(pa.active_mtu, QPIO_MTU_4096);
	cr_assert_eq(pa.gid_tbl_len, 1);
	cr_assert_eq(pa.lid, 1);
	cr_assert_eq(qpio_rdma_port_query(d, 0, &pa), -EINVAL);
	cr_assert_eq(qpio_rdma_port_query(d, 2, &pa), -EINVAL);
	cr_assert_eq(qpio_rdma_gid_query(d, 1, 0, &gid), 0);
	cr_assert_eq(gid.raw[0], 0xfe);
	cr_assert_eq(gid.raw[1], 0x80);
	cr_assert_eq(gid.raw[15], 1);
	cr_assert_eq(qpio_rdma_gid_query(d, 1, 1, &gid), -EINVAL);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
	cr_assert_eq(qpio_rdma_dev_count(), 0);
	cr_assert_null(qpio_rdma_dev_get_by_name("soft0"));
}

Test(rdma, devargs_errors)
{
	struct qpio_device *d;

	cr_assert_null(qpio_rdma_dev_create(NULL));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_rdma_dev_create(""));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_rdma_dev_create("nosuch0"));
	cr_assert_eq(rte_errno, ENODEV);
	cr_assert_null(qpio_rdma_dev_create("soft"));
	cr_assert_eq(rte_errno, ENODEV);
	cr_assert_null(qpio_rdma_dev_create("soft0x"));
	cr_assert_eq(rte_errno, ENODEV);
	cr_assert_null(qpio_rdma_dev_create("soft0,bogus=1"));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_rdma_dev_create("soft0,max_qp=0"));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_rdma_dev_create("soft0,max_qp=-1"));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_rdma_dev_create("soft0,max_inline=513"));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_rdma_dev_create("soft0,max_qp=12abc"));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_rdma_dev_create("soft0,max_qp"));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_rdma_dev_create("soft0,"));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_rdma_dev_create("soft0,,max_qp=4"));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_rdma_dev_create("soft0,max_qp=4,"));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_rdma_dev_create("soft0,max_qp=0x10"));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_rdma_dev_create("soft0,max_qp= 5"));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_rdma_dev_create("soft00"));
	cr_assert_eq(rte_errno, ENODEV);
	cr_assert_eq(qpio_rdma_dev_count(), 0);
	d = qpio_rdma_dev_create("soft0");
	cr_assert_not_null(d);
	cr_assert_null(qpio_rdma_dev_create("soft0"));
	cr_assert_eq(rte_errno, EEXIST);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
	cr_assert_eq(qpio_rdma_dev_close(NULL), -EINVAL);
}

Test(rdma, pd_busy_while_mr_or_qp)
{
	struct qpio_device *d = qpio_rdma_dev_create("soft0");
	struct qpio_pd *pd = qpio_pd_alloc(d);
	struct qpio_cq *cq = qpio_cq_create(d, 16, SOCKET_ID_ANY);
	uint8_t *buf = rte_zmalloc(NULL, 4096, 0);
	struct qpio_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = QPIO_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct qpio_mr *mr;
	struct qpio_qp *qp;

	cr_assert_not_null(pd);
	cr_assert_not_null(cq);
	mr = qpio_mr_reg(pd, buf, 4096, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(mr);
	cr_assert_eq(qpio_pd_free(pd), -EBUSY);
	cr_assert_eq(qpio_mr_dereg(mr), 0);
	qp = qpio_qp_create(pd, &ia);
	cr_assert_not_null(qp);
	cr_assert_eq(qpio_pd_free(pd), -EBUSY);
	cr_assert_eq(qpio_cq_destroy(cq), -EBUSY);
	cr_assert_eq(qpio_rdma_dev_close(d), -EBUSY);
	cr_assert_eq(qpio_qp_destroy(qp), 0);
	cr_assert_eq(qpio_cq_destroy(cq), 0);
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
	rte_free(buf);
}

Test(rdma, mr_access_flag_rule)
{
	struct qpio_device *d = qpio_rdma_dev_create("soft0");
	struct qpio_pd *pd = qpio_pd_alloc(d);
	uint8_t *buf = rte_zmalloc(NULL, 4096, 0);
	struct qpio_mr *mr;

	mr = qpio_mr_reg(pd, buf, 4096, QPIO_ACCESS_REMOTE_WRITE);
	cr_assert_null(mr);
	cr_assert_eq(rte_errno, EINVAL);
	mr = qpio_mr_reg(pd, buf, 4096, QPIO_ACCESS_REMOTE_ATOMIC);
	cr_assert_null(mr);
	cr_assert_eq(rte_errno, EINVAL);
	mr = qpio_mr_reg(pd, buf, 4096, 1u << 7);
	cr_assert_null(mr);
	cr_assert_eq(rte_errno, EINVAL);
	mr = qpio_mr_reg(pd, buf, 0, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_null(mr);
	cr_assert_eq(rte_errno, EINVAL);
	mr = qpio_mr_reg(pd, (void *)(UINTPTR_MAX - 10), 100, 0);
	cr_assert_null(mr);
	cr_assert_eq(rte_errno, EINVAL);
	/* REMOTE_READ alone is fine; so is everything with LOCAL_WRITE. */
	mr = qpio_mr_reg(pd, buf, 4096, QPIO_ACCESS_REMOTE_READ);
	cr_assert_not_null(mr);
	cr_assert_eq(qpio_mr_lkey(mr), qpio_mr_rkey(mr));
	cr_assert_eq(qpio_mr_addr(mr), buf);
	cr_assert_eq(qpio_mr_length(mr), 4096);
	cr_assert_eq(qpio_mr_dereg(mr), 0);
	mr = qpio_mr_reg(pd, buf, 4096, QPIO_ACCESS_ALL);
	cr_assert_not_null(mr);
	cr_assert_eq(qpio_mr_dereg(mr), 0);
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
	rte_free(buf);
}

Test(rdma, cq_depth_and_limits)
{
	struct qpio_device *d = qpio_rdma_dev_create("soft0,max_cqe=1024");
	struct qpio_cq *cq;

	cq = qpio_cq_create(d, 0, SOCKET_ID_ANY);
	cr_assert_null(cq);
	cr_assert_eq(rte_errno, EINVAL);
	cq = qpio_cq_create(d, 1025, SOCKET_ID_ANY);
	cr_assert_null(cq);
	cr_assert_eq(rte_errno, EINVAL);
	cq = qpio_cq_create(d, 100, SOCKET_ID_ANY);
	cr_assert_not_null(cq);
	cr_assert_eq(qpio_cq_depth(cq), 128);
	cr_assert_eq(qpio_cq_destroy(cq), 0);
	cr_assert_eq(qpio_cq_destroy(NULL), -EINVAL);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

/* ibv_port_state_str's names, without "PORT_"; "?" outside the enum. */
Test(rdma, port_state_str_names_each_state)
{
	struct qpio_device *dev = qpio_rdma_dev_create("soft0");
	struct qpio_port_attr pa;

	cr_assert_str_eq(qpio_port_state_str(QPIO_PORT_DOWN), "DOWN");
	cr_assert_str_eq(qpio_port_state_str(QPIO_PORT_INIT), "INIT");
	cr_assert_str_eq(qpio_port_state_str(QPIO_PORT_ARMED), "ARMED");
	cr_assert_str_eq(qpio_port_state_str(QPIO_PORT_ACTIVE), "ACTIVE");
	cr_assert_str_eq(qpio_port_state_str((enum qpio_port_state)0), "?");
	cr_assert_str_eq(qpio_port_state_str((enum qpio_port_state)5), "?");
	cr_assert_str_eq(qpio_port_state_str((enum qpio_port_state)-1), "?");
	cr_assert_not_null(dev);
	cr_assert_eq(qpio_rdma_port_query(dev, 1, &pa), 0);
	cr_assert_str_eq(qpio_port_state_str(pa.state), "ACTIVE");
	cr_assert_eq(qpio_rdma_dev_close(dev), 0);
}
