/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One address-vector validator: qpio_qp_modify() with QPIO_QP_AV refuses
 * exactly what qpio_ah_create() refuses (port_num outside the device's
 * ports, sgid_index outside the port's GID table, a flow label over 20
 * bits), and accepts what it accepts.
 */
#include <string.h>

#include <rte_errno.h>

#include "test_common.h"

TestSuite(av_rules, .init = qt_eal_init, .fini = qt_eal_fini);

struct av_case {
	const char *what;
	uint8_t port_num;
	uint8_t is_global;
	uint8_t sgid_index;
	uint32_t flow_label;
	int ok;
	uint8_t sl;
	uint8_t src_path_bits;
};

/* soft devices: one port, a GID table of one entry. */
static const struct av_case cases[] = {
	{ "port 1, no GRH", 1, 0, 0, 0, 1, 0, 0 },
	{ "port 1, GRH sgid 0", 1, 1, 0, 0, 1, 0, 0 },
	{ "port 0", 0, 0, 0, 0, 0, 0, 0 },
	{ "port 2 of a one-port device", 2, 0, 0, 0, 0, 0, 0 },
	{ "port 255", 255, 1, 0, 0, 0, 0, 0 },
	{ "sgid_index 1 of a one-entry table", 1, 1, 1, 0, 0, 0, 0 },
	{ "sgid_index 255", 1, 1, 255, 0, 0, 0, 0 },
	{ "flow_label 0x100000", 1, 1, 0, 0x100000, 0, 0, 0 },
	{ "sgid_index 9 without GRH (not used)", 1, 0, 9, 0, 1, 0, 0 },
	{ "sl 15", 1, 0, 0, 0, 1, 15, 0 },
	{ "sl 16 (over 4 bits)", 1, 0, 0, 0, 0, 16, 0 },
	{ "sl 255", 1, 1, 0, 0, 0, 255, 0 },
	{ "src_path_bits 0x7f", 1, 0, 0, 0, 1, 0, 0x7f },
	{ "src_path_bits 0x80 (over 7 bits)", 1, 0, 0, 0, 0, 0, 0x80 },
};

static void
av_fill(struct qpio_ah_attr *av, const struct av_case *c, uint16_t dlid,
	const union qpio_gid *dgid)
{
	memset(av, 0, sizeof(*av));
	av->dlid = dlid;
	av->port_num = c->port_num;
	av->is_global = c->is_global;
	av->grh.sgid_index = c->sgid_index;
	av->grh.flow_label = c->flow_label;
	av->grh.hop_limit = 64;
	av->sl = c->sl;
	av->src_path_bits = c->src_path_bits;
	av->grh.dgid = *dgid;
}

Test(av_rules, qp_modify_and_ah_create_agree)
{
	struct qpio_port_attr pa;
	union qpio_gid gid;
	struct qpio_device *d;
	struct qpio_cq *cq;
	struct qpio_pd *pd;
	unsigned int i;

	qt_require_soft("the case table is for a one-port, one-GID device");
	d = qpio_rdma_dev_create("soft0,max_ah=4");
	cr_assert_not_null(d);
	cr_assert_eq(qpio_rdma_port_query(d, 1, &pa), 0);
	cr_assert_eq(qpio_rdma_gid_query(d, 1, 0, &gid), 0);
	pd = qpio_pd_alloc(d);
	cq = qpio_cq_create(d, 64, SOCKET_ID_ANY);
	cr_assert_not_null(pd);
	cr_assert_not_null(cq);
	for (i = 0; i < RTE_DIM(cases); i++) {
		const struct av_case *c = &cases[i];
		struct qpio_qp_init_attr ia = {
			.send_cq = cq, .recv_cq = cq, .qp_type = QPIO_QPT_RC,
			.cap = { .max_send_wr = 4, .max_recv_wr = 4,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		struct qpio_qp_attr at = { 0 };
		struct qpio_ah_attr av;
		struct qpio_ah *ah;
		struct qpio_qp *qp;
		int ret;

		qp = qpio_qp_create(pd, &ia);
		cr_assert_not_null(qp);
		at.qp_state = QPIO_QPS_INIT;
		at.port_num = 1;
		at.qp_access_flags = QPIO_ACCESS_REMOTE_WRITE;
		cr_assert_eq(qpio_qp_modify(qp, &at, QPIO_QP_STATE |
				QPIO_QP_PKEY_INDEX | QPIO_QP_PORT |
				QPIO_QP_ACCESS_FLAGS), 0);
		memset(&at, 0, sizeof(at));
		at.qp_state = QPIO_QPS_RTR;
		at.path_mtu = QPIO_MTU_1024;
		at.dest_qp_num = 0x11;
		at.rq_psn = 0;
		at.max_dest_rd_atomic = 1;
		at.min_rnr_timer = 1;
		av_fill(&at.ah_attr, c, pa.lid, &gid);
		ret = qpio_qp_modify(qp, &at, QPIO_QP_STATE | QPIO_QP_AV |
				     QPIO_QP_PATH_MTU | QPIO_QP_DEST_QPN |
				     QPIO_QP_RQ_PSN | QPIO_QP_MAX_DEST_RD_ATOMIC |
				     QPIO_QP_MIN_RNR_TIMER);
		cr_assert_eq(ret, c->ok ? 0 : -EINVAL, "qp_modify, %s: %d",
			     c->what, ret);
		cr_assert_eq(qpio_qp_state(qp), c->ok ? QPIO_QPS_RTR :
			     QPIO_QPS_INIT, "%s: state", c->what);
		av_fill(&av, c, pa.lid, &gid);
		rte_errno = 0;
		ah = qpio_ah_create(pd, &av);
		if (c->ok) {
			cr_assert_not_null(ah, "ah_create, %s: %s", c->what,
					   rte_strerror(rte_errno));
			cr_assert_eq(qpio_ah_destroy(ah), 0);
		} else {
			cr_assert_null(ah, "ah_create accepted %s", c->what);
			cr_assert_eq(rte_errno, EINVAL, "%s", c->what);
		}
		cr_assert_eq(qpio_qp_destroy(qp), 0);
	}
	cr_assert_eq(qpio_cq_destroy(cq), 0);
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}
