/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RESET->INIT->RTR->RTS walk of a QP towards a described peer.
 *
 * The attribute masks are the required bits of the verbs transition table
 * (doc/guides/prog_guide/rdma_lib.rst, lib/rdma/rdma_qp_state.c; IBA
 * 10.3.1 and table 93 as ib_modify_qp_is_ok() checks them), so every step
 * is accepted by qpio_qp_transition_ok() and no optional bit is ever set.
 */
#include <string.h>

#include <rte_common.h>
#include <rte_log.h>

#include "qpio_cm.h"
#include "cm_private.h"

RTE_LOG_REGISTER(qpio_cm_logtype, qpio.lib.cm, NOTICE);

#define CM_QPN_MASK 0xffffffu

void
qpio_cm_qp_params_init(struct qpio_cm_qp_params *p)
{
	if (p == NULL)
		return;
	memset(p, 0, sizeof(*p));
	p->port_num = 1;
	p->hop_limit = 64;
	p->timeout = 14;
	p->retry_cnt = 7;
	p->rnr_retry = 7;
	p->min_rnr_timer = 12;
	p->max_rd_atomic = 1;
	p->max_dest_rd_atomic = 1;
	p->qkey = QPIO_CM_DEFAULT_QKEY;
	p->access_flags = QPIO_ACCESS_LOCAL_WRITE | QPIO_ACCESS_REMOTE_WRITE |
			  QPIO_ACCESS_REMOTE_READ;
}

int
qpio_cm_qp_step_mask(enum qpio_qp_type type, enum qpio_qp_state next)
{
	if (type != QPIO_QPT_RC && type != QPIO_QPT_UC && type != QPIO_QPT_UD)
		return 0;
	switch (next) {
	case QPIO_QPS_INIT:
		return QPIO_QP_STATE | QPIO_QP_PKEY_INDEX | QPIO_QP_PORT |
		       (type == QPIO_QPT_UD ? QPIO_QP_QKEY : QPIO_QP_ACCESS_FLAGS);
	case QPIO_QPS_RTR:
		if (type == QPIO_QPT_UD)
			return QPIO_QP_STATE;
		return QPIO_QP_STATE | QPIO_QP_AV | QPIO_QP_PATH_MTU |
		       QPIO_QP_DEST_QPN | QPIO_QP_RQ_PSN |
		       (type == QPIO_QPT_RC ? QPIO_QP_MAX_DEST_RD_ATOMIC |
					      QPIO_QP_MIN_RNR_TIMER : 0);
	case QPIO_QPS_RTS:
		if (type != QPIO_QPT_RC)
			return QPIO_QP_STATE | QPIO_QP_SQ_PSN;
		return QPIO_QP_STATE | QPIO_QP_SQ_PSN | QPIO_QP_TIMEOUT |
		       QPIO_QP_RETRY_CNT | QPIO_QP_RNR_RETRY |
		       QPIO_QP_MAX_QP_RD_ATOMIC;
	default:
		return 0;
	}
}

/* Run one step; on refusal log the step and the rule the table names. */
static int
cm_step(struct qpio_qp *qp, enum qpio_qp_type type, enum qpio_qp_state cur,
	enum qpio_qp_state next, struct qpio_qp_attr *attr)
{
	int mask = qpio_cm_qp_step_mask(type, next);
	const char *why = NULL;
	int ret;

	attr->qp_state = next;
	if (!qpio_qp_transition_ok(type, cur, next, mask, &why)) {
		CM_LOG(ERR, "qp 0x%x: %s->%s refused: %s", qpio_qp_num(qp),
		       qpio_qp_state_str(cur), qpio_qp_state_str(next), why);
		return -EINVAL;
	}
	ret = qpio_qp_modify(qp, attr, mask);
	if (ret != 0)
		CM_LOG(ERR, "qp 0x%x: %s->%s failed (%d): see the qpio.lib.rdma "
		       "line above for the rule", qpio_qp_num(qp),
		       qpio_qp_state_str(cur), qpio_qp_state_str(next), ret);
	return ret;
}

int
qpio_cm_qp_ready(struct qpio_qp *qp, const struct qpio_cm_qp_params *local,
		 const struct qpio_cm_peer *peer)
{
	struct qpio_cm_qp_params defaults;
	struct qpio_qp_init_attr init;
	struct qpio_port_attr pa;
	struct qpio_qp_attr attr;
	enum qpio_qp_type type;
	int ret, roce;

	if (qp == NULL || peer == NULL) {
		CM_LOG(ERR, "qp_ready: qp and peer must not be NULL");
		return -EINVAL;
	}
	if (local == NULL) {
		qpio_cm_qp_params_init(&defaults);
		local = &defaults;
	}
	ret = qpio_qp_query(qp, &attr, &init);
	if (ret != 0)
		return ret;
	type = init.qp_type;
	if (attr.qp_state != QPIO_QPS_RESET) {
		CM_LOG(ERR, "qp 0x%x: the walk starts in RESET, the QP is in %s "
		       "(move it to RESET first)", qpio_qp_num(qp),
		       qpio_qp_state_str(attr.qp_state));
		return -EINVAL;
	}
	if (qpio_rdma_port_query(qp->dev, local->port_num, &pa) != 0) {
		CM_LOG(ERR, "qp 0x%x: RESET->INIT: port %u does not exist on "
		       "the QP's device", qpio_qp_num(qp), local->port_num);
		return -EINVAL;
	}
	roce = pa.link_layer == QPIO_LINK_LAYER_ETHERNET;
	if (type != QPIO_QPT_UD) {
		if (peer->qpn > CM_QPN_MASK || peer->psn > CM_QPN_MASK ||
		    local->sq_psn > CM_QPN_MASK) {
			CM_LOG(ERR, "qp 0x%x: QPN and PSN are 24 bits (peer qpn "
			       "0x%x psn 0x%x, local sq_psn 0x%x)",
			       qpio_qp_num(qp), peer->qpn, peer->psn,
			       local->sq_psn);
			return -EINVAL;
		}
		if (roce && !peer->is_global) {
			CM_LOG(ERR, "qp 0x%x: INIT->RTR: port %u is RoCE "
			       "(Ethernet link layer): the peer must be named "
			       "by its GID (is_global)", qpio_qp_num(qp),
			       local->port_num);
			return -EINVAL;
		}
		if (local->path_mtu == 0 &&
		    (peer->mtu < QPIO_MTU_256 || peer->mtu > QPIO_MTU_4096)) {
			CM_LOG(ERR, "qp 0x%x: INIT->RTR: peer MTU %d is not "
			       "QPIO_MTU_256..QPIO_MTU_4096", qpio_qp_num(qp),
			       (int)peer->mtu);
			return -EINVAL;
		}
	}

	/* RESET -> INIT */
	memset(&attr, 0, sizeof(attr));
	attr.port_num = local->port_num;
	attr.pkey_index = local->pkey_index;
	attr.qp_access_flags = local->access_flags;
	attr.qkey = local->qkey;
	ret = cm_step(qp, type, QPIO_QPS_RESET, QPIO_QPS_INIT, &attr);
	if (ret != 0)
		return ret;

	/* INIT -> RTR */
	memset(&attr, 0, sizeof(attr));
	if (type != QPIO_QPT_UD) {
		attr.path_mtu = local->path_mtu;
		if (attr.path_mtu == 0)
			attr.path_mtu = RTE_MIN(peer->mtu, pa.active_mtu);
		attr.dest_qp_num = peer->qpn;
		attr.rq_psn = peer->psn;
		attr.max_dest_rd_atomic = local->max_dest_rd_atomic;
		attr.min_rnr_timer = local->min_rnr_timer;
		attr.ah_attr.dlid = peer->lid;
		attr.ah_attr.sl = local->sl;
		attr.ah_attr.port_num = local->port_num;
		if (peer->is_global || roce) {
			attr.ah_attr.is_global = 1;
			attr.ah_attr.grh.dgid = peer->gid;
			attr.ah_attr.grh.sgid_index = local->sgid_index;
			attr.ah_attr.grh.hop_limit = local->hop_limit;
			attr.ah_attr.grh.traffic_class = local->traffic_class;
		}
	}
	ret = cm_step(qp, type, QPIO_QPS_INIT, QPIO_QPS_RTR, &attr);
	if (ret != 0)
		return ret;

	/* RTR -> RTS */
	memset(&attr, 0, sizeof(attr));
	attr.sq_psn = local->sq_psn;
	attr.timeout = local->timeout;
	attr.retry_cnt = local->retry_cnt;
	attr.rnr_retry = local->rnr_retry;
	attr.max_rd_atomic = local->max_rd_atomic;
	return cm_step(qp, type, QPIO_QPS_RTR, QPIO_QPS_RTS, &attr);
}

int
qpio_cm_qp_describe(const struct qpio_qp *qp,
		    const struct qpio_cm_qp_params *local,
		    struct qpio_cm_peer *out)
{
	struct qpio_cm_qp_params defaults;
	struct qpio_device_attr da;
	struct qpio_port_attr pa;
	int ret;

	if (qp == NULL || out == NULL)
		return -EINVAL;
	if (local == NULL) {
		qpio_cm_qp_params_init(&defaults);
		local = &defaults;
	}
	memset(out, 0, sizeof(*out));
	ret = qpio_rdma_dev_query(qp->dev, &da);
	if (ret != 0)
		return ret;
	ret = qpio_rdma_port_query(qp->dev, local->port_num, &pa);
	if (ret != 0) {
		CM_LOG(ERR, "qp 0x%x: port %u does not exist on %s",
		       qpio_qp_num(qp), local->port_num, da.name);
		return -EINVAL;
	}
	ret = qpio_rdma_gid_query(qp->dev, local->port_num, local->sgid_index,
				  &out->gid);
	if (ret != 0) {
		CM_LOG(ERR, "qp 0x%x: GID index %u is beyond the GID table of "
		       "%s port %u (%u entries)", qpio_qp_num(qp),
		       local->sgid_index, da.name, local->port_num,
		       pa.gid_tbl_len);
		return -EINVAL;
	}
	memcpy(out->dev_name, da.name, sizeof(out->dev_name));
	out->dev_name[sizeof(out->dev_name) - 1] = '\0';
	out->qpn = qpio_qp_num(qp);
	out->psn = local->sq_psn & CM_QPN_MASK;
	out->qkey = local->qkey;
	out->lid = pa.lid;
	out->is_global = pa.link_layer == QPIO_LINK_LAYER_ETHERNET ||
			 pa.lid == 0;
	out->mtu = pa.active_mtu;
	return 0;
}
