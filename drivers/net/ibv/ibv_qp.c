/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libibverbs driver: queue pairs (create, destroy, modify, query).
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "ibv_private.h"
#include "qpio_ibv.h"
#include "rdma_wr.h"

void
ibvd_qp_free(struct ibvd_qp *qp)
{
	rte_free(qp->sq.wrs);
	rte_free(qp->sq.wrid);
	rte_free(qp->sq.opcode);
	rte_free(qp->rq.wrs);
	rte_free(qp->rq.wrid);
	rte_free(qp);
}

struct qpio_qp *
ibvd_qp_create(struct qpio_pd *pd, struct qpio_qp_init_attr *ia)
{
	struct ibvd_dev *idev;
	struct qpio_qp_cap *cap = &ia->cap;
	int socket;
	struct ibv_qp_init_attr init;
	struct ibvd_qp *qp;

	if (ia->qp_type == QPIO_QPT_XRC_SEND || ia->qp_type == QPIO_QPT_XRC_RECV)
		return ibvd_qp_create_xrc(pd, ia);
	idev = to_idev(pd->dev);
	socket = ia->send_cq->socket_id;

	qp = rte_zmalloc_socket("ibvd_qp", sizeof(*qp), RTE_CACHE_LINE_SIZE,
				socket);
	if (qp == NULL)
		goto nomem;
	qp->sq.depth = rte_align32pow2(RTE_MAX(cap->max_send_wr, 1u));
	qp->sq.mask = qp->sq.depth - 1;
	qp->sq.max_sge = RTE_MAX(cap->max_send_sge, 1u);
	qp->sq.max_inline = cap->max_inline_data;
	qp->rq.depth = rte_align32pow2(RTE_MAX(cap->max_recv_wr, 1u));
	qp->rq.mask = qp->rq.depth - 1;
	qp->rq.max_sge = RTE_MAX(cap->max_recv_sge, 1u);
	qp->sq.wrs = rte_zmalloc_socket("ibvd_sq_wrs",
					sizeof(*qp->sq.wrs) * qp->sq.depth,
					RTE_CACHE_LINE_SIZE, socket);
	qp->sq.wrid = rte_zmalloc_socket("ibvd_sq_wrid",
					 sizeof(uint64_t) * qp->sq.depth,
					 RTE_CACHE_LINE_SIZE, socket);
	qp->sq.opcode = rte_zmalloc_socket("ibvd_sq_op", qp->sq.depth,
					   RTE_CACHE_LINE_SIZE, socket);
	qp->rq.wrs = rte_zmalloc_socket("ibvd_rq_wrs",
					sizeof(*qp->rq.wrs) * qp->rq.depth,
					RTE_CACHE_LINE_SIZE, socket);
	qp->rq.wrid = rte_zmalloc_socket("ibvd_rq_wrid",
					 sizeof(uint64_t) * qp->rq.depth,
					 RTE_CACHE_LINE_SIZE, socket);
	if (qp->sq.wrs == NULL || qp->sq.wrid == NULL || qp->sq.opcode == NULL ||
	    qp->rq.wrs == NULL || qp->rq.wrid == NULL)
		goto nomem;

	memset(&init, 0, sizeof(init));
	init.qp_context = qp;
	init.send_cq = to_icq(ia->send_cq)->cq;
	init.recv_cq = to_icq(ia->recv_cq)->cq;
	init.qp_type = (enum ibv_qp_type)ia->qp_type;
	init.sq_sig_all = ia->sq_sig_all != 0;
	init.cap.max_send_wr = qp->sq.depth;
	init.cap.max_recv_wr = qp->rq.depth;
	init.cap.max_send_sge = qp->sq.max_sge;
	init.cap.max_recv_sge = qp->rq.max_sge;
	if (ia->srq != NULL) {
		/* Receives come from the SRQ: the QP has no RQ of its own. */
		qp->srq = to_isrq(ia->srq);
		init.srq = qp->srq->srq;
		init.cap.max_recv_wr = 0;
		init.cap.max_recv_sge = 0;
	}
	init.cap.max_inline_data = qp->sq.max_inline;
	qp->qp = ibv_create_qp(to_ipd(pd)->pd, &init);
	if (qp->qp == NULL) {
		rte_errno = errno != 0 ? errno : ENOMEM;
		IBVD_LOG(ERR, "%s: ibv_create_qp(type %d, wr %u/%u, sge %u/%u, "
			 "inline %u): %s", pd->dev->name, (int)ia->qp_type,
			 qp->sq.depth, qp->rq.depth, qp->sq.max_sge,
			 qp->rq.max_sge, qp->sq.max_inline, strerror(rte_errno));
		ibvd_qp_free(qp);
		return NULL;
	}
	if (ibvd_cq_attach(to_icq(ia->send_cq), qp) != 0 ||
	    (ia->recv_cq != ia->send_cq &&
	     ibvd_cq_attach(to_icq(ia->recv_cq), qp) != 0)) {
		ibvd_cq_detach(to_icq(ia->send_cq), qp);
		ibv_destroy_qp(qp->qp);
		goto nomem;
	}
	/* The provider may grant more than asked; qpio enforces and
	 * reports what was asked (rounded), the same on every device. */
	cap->max_send_wr = qp->sq.depth;
	cap->max_recv_wr = qp->srq != NULL ? 0 : qp->rq.depth;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_recv_sge = qp->srq != NULL ? 0 : qp->rq.max_sge;
	qp->cap = *cap;
	qp->idev = idev;
	qp->base.qp_num = qp->qp->qp_num;
	qp->base.post_send = ibvd_post_send;
	qp->base.post_send_sge = ia->qp_type == QPIO_QPT_RC ||
				 ia->qp_type == QPIO_QPT_UC ?
				 ibvd_post_send_sge : qpio_rdma_post_send_sge_refuse;
	qp->base.post_recv = ibvd_post_recv;
	qp->base.post_recv_sge = ibvd_post_recv_sge;
	qp->base.state = QPIO_QPS_RESET;
	return &qp->base;
nomem:
	rte_errno = ENOMEM;
	if (qp != NULL)
		ibvd_qp_free(qp);
	return NULL;
}

int
ibvd_qp_destroy(struct qpio_qp *qqp)
{
	struct ibvd_qp *qp = to_iqp(qqp);
	int ret = ibv_destroy_qp(qp->qp);

	if (ret != 0) {
		IBVD_LOG(ERR, "qp 0x%x: ibv_destroy_qp: %s", qqp->qp_num,
			 strerror(ret));
		return -ret;
	}
	/* Completions it left in the CQs no longer find it: dropped. XRC
	 * QPs have one CQ (XRC_SEND) or none (XRC_RECV). */
	if (qqp->send_cq != NULL)
		ibvd_cq_detach(to_icq(qqp->send_cq), qp);
	if (qqp->recv_cq != NULL && qqp->recv_cq != qqp->send_cq)
		ibvd_cq_detach(to_icq(qqp->recv_cq), qp);
	ibvd_qp_free(qp);
	return 0;
}

int
ibvd_ah_attr_to_ibv(const struct ibvd_dev *idev, const struct qpio_ah_attr *in,
		    struct ibv_ah_attr *out, uint32_t qpn)
{
	memset(out, 0, sizeof(*out));
	if (idev->roce && !in->is_global) {
		IBVD_LOG(ERR, "qp 0x%x: %s port %u is RoCE: the address vector "
			 "needs a GRH (is_global and grh.dgid)", qpn,
			 idev->ibdev, idev->port);
		return -EINVAL;
	}
	out->dlid = in->dlid;
	out->sl = in->sl;
	out->src_path_bits = in->src_path_bits;
	out->is_global = in->is_global;
	out->port_num = idev->port;
	if (in->is_global) {
		memcpy(out->grh.dgid.raw, in->grh.dgid.raw, sizeof(out->grh.dgid.raw));
		out->grh.flow_label = in->grh.flow_label;
		out->grh.sgid_index = ibvd_gid_map(idev, in->grh.sgid_index);
		out->grh.hop_limit = in->grh.hop_limit;
		out->grh.traffic_class = in->grh.traffic_class;
		/* RoCEv2 puts hop_limit in the IP TTL: 0 would never leave. */
		if (idev->roce && out->grh.hop_limit == 0)
			out->grh.hop_limit = IBVD_ROCE_HOP_LIMIT;
	}
	return 0;
}

static void
ah_attr_from_ibv(const struct ibvd_dev *idev, const struct ibv_ah_attr *in,
		 struct qpio_ah_attr *out)
{
	memset(out, 0, sizeof(*out));
	out->dlid = in->dlid;
	out->sl = in->sl;
	out->src_path_bits = in->src_path_bits;
	out->is_global = in->is_global;
	out->port_num = in->port_num != 0 ? 1 : 0;
	if (in->is_global) {
		memcpy(out->grh.dgid.raw, in->grh.dgid.raw, sizeof(out->grh.dgid.raw));
		out->grh.flow_label = in->grh.flow_label;
		out->grh.sgid_index = ibvd_gid_map(idev, in->grh.sgid_index);
		out->grh.hop_limit = in->grh.hop_limit;
		out->grh.traffic_class = in->grh.traffic_class;
	}
}

int
ibvd_qp_modify(struct qpio_qp *qqp, const struct qpio_qp_attr *in, int mask,
	       enum qpio_qp_state cur, enum qpio_qp_state next)
{
	struct ibvd_qp *qp = to_iqp(qqp);
	struct ibvd_dev *idev = qp->idev;
	struct ibv_qp_attr a;
	int ret;

	ibvd_async_drain(idev);
	memset(&a, 0, sizeof(a));
	/* enum qpio_qp_attr_mask has the values of enum ibv_qp_attr_mask. */
	a.qp_state = (enum ibv_qp_state)in->qp_state;
	a.cur_qp_state = (enum ibv_qp_state)in->cur_qp_state;
	a.path_mtu = (enum ibv_mtu)in->path_mtu;
	a.qkey = in->qkey;
	a.rq_psn = in->rq_psn;
	a.sq_psn = in->sq_psn;
	a.dest_qp_num = in->dest_qp_num;
	a.qp_access_flags = in->qp_access_flags;
	a.pkey_index = in->pkey_index;
	a.en_sqd_async_notify = in->en_sqd_async_notify;
	a.max_rd_atomic = in->max_rd_atomic;
	a.max_dest_rd_atomic = in->max_dest_rd_atomic;
	a.min_rnr_timer = in->min_rnr_timer;
	a.port_num = idev->port;
	a.timeout = in->timeout;
	a.retry_cnt = in->retry_cnt;
	a.rnr_retry = in->rnr_retry;
	if (mask & QPIO_QP_CAP) {
		a.cap.max_send_wr = in->cap.max_send_wr;
		a.cap.max_recv_wr = in->cap.max_recv_wr;
		a.cap.max_send_sge = in->cap.max_send_sge;
		a.cap.max_recv_sge = in->cap.max_recv_sge;
		a.cap.max_inline_data = in->cap.max_inline_data;
	}
	if (mask & QPIO_QP_AV) {
		ret = ibvd_ah_attr_to_ibv(idev, &in->ah_attr, &a.ah_attr,
					  qqp->qp_num);
		if (ret < 0)
			return ret;
	}
	ret = ibv_modify_qp(qp->qp, &a, mask);
	if (ret != 0) {
		IBVD_LOG(ERR, "qp 0x%x: %s->%s: ibv_modify_qp(mask 0x%x) on %s: %s",
			 qqp->qp_num, qpio_qp_state_str(cur),
			 qpio_qp_state_str(next), mask, idev->ibdev,
			 strerror(ret));
		return -ret;
	}
	if (mask & QPIO_QP_DEST_QPN)
		qp->dest_qpn = in->dest_qp_num;
	if (mask & QPIO_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = in->max_rd_atomic;
	if (next == QPIO_QPS_RESET) {
		/* The device forgot every WR; completions still in the CQ
		 * carry the old generation and are dropped when polled. */
		qp->gen++;
		qp->sq.pi = qp->sq.tail = 0;
		qp->rq.pi = qp->rq.tail = 0;
	}
	__atomic_store_n(&qqp->state, (uint8_t)next, __ATOMIC_RELEASE);
	return 0;
}

int
ibvd_qp_query(struct qpio_qp *qqp, struct qpio_qp_attr *attr,
	      struct qpio_qp_init_attr *ia)
{
	struct ibvd_qp *qp = to_iqp(qqp);
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	int ret;

	ibvd_async_drain(qp->idev);
	memset(&a, 0, sizeof(a));
	ret = ibv_query_qp(qp->qp, &a, 0x1fffff, &init);
	if (ret != 0) {
		IBVD_LOG(ERR, "qp 0x%x: ibv_query_qp: %s", qqp->qp_num,
			 strerror(ret));
		return -ret;
	}
	attr->qp_state = (enum qpio_qp_state)a.qp_state;
	attr->cur_qp_state = (enum qpio_qp_state)a.qp_state;
	attr->path_mtu = (enum qpio_mtu)a.path_mtu;
	attr->qkey = a.qkey;
	attr->rq_psn = a.rq_psn;
	attr->sq_psn = a.sq_psn;
	attr->dest_qp_num = a.dest_qp_num;
	attr->qp_access_flags = a.qp_access_flags;
	attr->cap = qp->cap;
	ah_attr_from_ibv(qp->idev, &a.ah_attr, &attr->ah_attr);
	attr->pkey_index = a.pkey_index;
	attr->en_sqd_async_notify = a.en_sqd_async_notify;
	attr->sq_draining = a.sq_draining;
	attr->max_rd_atomic = a.max_rd_atomic;
	attr->max_dest_rd_atomic = a.max_dest_rd_atomic;
	attr->min_rnr_timer = a.min_rnr_timer;
	attr->port_num = a.port_num != 0 ? 1 : 0;
	attr->timeout = a.timeout;
	attr->retry_cnt = a.retry_cnt;
	attr->rnr_retry = a.rnr_retry;
	if (ia != NULL)
		ia->cap = qp->cap;
	/* The device moves QPs to ERR on its own: keep the fast-path copy
	 * of the state in step with what it reports. */
	if (a.qp_state == IBV_QPS_ERR || a.qp_state == IBV_QPS_SQE)
		__atomic_store_n(&qqp->state, (uint8_t)a.qp_state,
				 __ATOMIC_RELEASE);
	return 0;
}

int
qpio_ibv_qp_stats(const struct qpio_qp *qqp, struct qpio_ibv_qp_stats *st)
{
	const struct ibvd_qp *qp;

	if (qqp == NULL || st == NULL || qqp->post_send != ibvd_post_send)
		return -EINVAL;
	qp = (const struct ibvd_qp *)qqp;
	st->post_send_calls = qp->post_send_calls;
	st->post_recv_calls = qp->post_recv_calls;
	st->stale_wc = qp->stale_wc;
	st->sq_posted = qp->sq.pi;
	st->sq_completed = qp->sq.tail;
	st->rq_posted = qp->rq.pi;
	st->rq_completed = qp->rq.tail;
	return 0;
}
