/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC queue pairs: create, destroy, modify, query.
 */
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "soft_barrier.h"
#include "soft_private.h"
#include "soft_wire.h"
#include "qpio_soft.h"
#include "rdma_wr.h"

/* Bytes of the largest WQE a QP with these caps can post. */
static uint32_t
sq_wqe_size(enum qpio_qp_type type, uint32_t max_sge, uint32_t max_inline)
{
	/* UD: the datagram segment; XRC: the XRC segment before RC's
	 * remote address and atomic segments. */
	uint32_t addr = type == QPIO_QPT_UD ?
		(uint32_t)sizeof(struct mlx5_wqe_datagram_seg) :
		type == QPIO_QPT_XRC_SEND ? 3 * SOFT_SEG : 2 * SOFT_SEG;
	uint32_t data = RTE_MAX(max_sge * SOFT_SEG,
				RTE_ALIGN_CEIL(4 + max_inline, SOFT_SEG));

	return SOFT_SEG + addr + data;
}

static void
queues_reset(struct soft_qp *qp, uint32_t start)
{
	struct soft_cq *scq = to_scq(qp->base.send_cq);

	/* XRC: an initiator has no recv CQ, a target no CQ at all (the
	 * completions of its receives are its SRQs', and stay). */
	if (scq != NULL)
		soft_cq_purge(scq, qp);
	if (qp->base.recv_cq != NULL && qp->base.recv_cq != qp->base.send_cq)
		soft_cq_purge(to_scq(qp->base.recv_cq), qp);
	/* A requester's copy of a receive of the positions before is stale
	 * from here, at the same positions: the new epoch first, and a
	 * requester that reads the new ci (soft_rq_ci_read(),
	 * rc_send_exec()) reads it too. */
	soft_rq_epoch_publish(&qp->rq.epoch, soft_rq_epoch_next());
	qp->sq.pi = qp->sq.ci = qp->sq.tail = qp->sq.dbrec = start;
	qp->rq.head = qp->rq.ci = qp->rq.tail = qp->rq.head_cache = start;
	memset(qp->rq.done, 0, qp->rq.depth);
	qp->sq_draining = 0;
	qp->rnr_naks = 0;
	qp->rnr_deadline = 0;
	if (soft_qp_pending_take(&qp->pending) && scq != NULL)
		soft_cq_pending_sub(&scq->nb_pending);
}

/* A QP's queues, then the QP (NULL: nothing). */
static void
qp_free(struct soft_qp *qp)
{
	if (qp == NULL)
		return;
	soft_wire_rc_destroy(qp);
	soft_obj_free(qp->sq.buf);
	soft_obj_free(qp->sq.wrid);
	soft_obj_free(qp->rq.buf);
	soft_obj_free(qp->rq.wrid);
	soft_obj_free(qp->rq.done);
	soft_obj_free(qp);
}

struct qpio_qp *
soft_qp_create(struct qpio_pd *pd, struct qpio_qp_init_attr *ia)
{
	/* An XRC target has no PD: the device of its domain. */
	struct qpio_device *dev = pd != NULL ? pd->dev : ia->xrcd->dev;
	struct soft_dev *sdev = to_sdev(dev);
	struct qpio_qp_cap *cap = &ia->cap;
	int socket = ia->send_cq != NULL ? ia->send_cq->socket_id : SOCKET_ID_ANY;
	struct soft_qp *qp;
	uint32_t wqe_size, slot;

	if (sdev->wire != NULL && ia->qp_type != QPIO_QPT_UD &&
	    ia->qp_type != QPIO_QPT_RC && ia->qp_type != QPIO_QPT_UC) {
		SOFT_LOG(ERR, "%s: XRC QPs do not go over the wire yet (qp_type "
			 "%d): RC, UC and UD do (doc/guides/nics/soft.rst, "
			 "\"On the wire\")", dev->name, (int)ia->qp_type);
		rte_errno = EOPNOTSUPP;
		return NULL;
	}
	/* A wire device's queue serves the QP's sends and receives: both
	 * CQs of one completion vector (soft_wire.h) */
	if (sdev->wire != NULL && ia->send_cq != NULL && ia->recv_cq != NULL &&
	    to_scq(ia->send_cq)->wq != to_scq(ia->recv_cq)->wq) {
		SOFT_LOG(ERR, "%s: the QP's send CQ is of completion vector %u "
			 "and its recv CQ of %u: on a wire device of several "
			 "queues (queues=) the vector is the QP's queue; give "
			 "both CQs one comp_vector", dev->name,
			 to_scq(ia->send_cq)->wq->qid,
			 to_scq(ia->recv_cq)->wq->qid);
		rte_errno = EINVAL;
		return NULL;
	}
	wqe_size = sq_wqe_size(ia->qp_type, RTE_MAX(cap->max_send_sge, 1u),
			       cap->max_inline_data);
	if (wqe_size > SOFT_MAX_WQE_BBS * SOFT_WQE_BB) {
		SOFT_LOG(ERR, "%s: WQE of %u bytes exceeds %u", dev->name,
			 wqe_size, SOFT_MAX_WQE_BBS * SOFT_WQE_BB);
		rte_errno = EINVAL;
		return NULL;
	}
	qp = soft_obj_alloc(sdev, SOFT_OBJ_QP, "soft_qp", sizeof(*qp), socket);
	if (qp == NULL)
		goto nomem;
	qp->sq.depth = rte_align32pow2(RTE_MAX(cap->max_send_wr, 1u));
	qp->sq.mask = qp->sq.depth - 1;
	qp->sq.stride = rte_align32pow2(RTE_ALIGN_CEIL(wqe_size, SOFT_WQE_BB));
	qp->sq.log_stride = (uint32_t)rte_log2_u32(qp->sq.stride);
	qp->sq.max_sge = RTE_MAX(cap->max_send_sge, 1u);
	qp->sq.max_inline = cap->max_inline_data;
	qp->sq.buf = soft_obj_alloc(sdev, SOFT_OBJ_BUF, "soft_sq", (size_t)qp->sq.depth * qp->sq.stride, socket);
	qp->sq.wrid = soft_obj_alloc(sdev, SOFT_OBJ_BUF, "soft_sq_wrid", sizeof(uint64_t) * qp->sq.depth, socket);
	/* An SRQ QP keeps a one-entry RQ of its own, never used. */
	qp->rq.depth = ia->srq != NULL ? 1 :
		rte_align32pow2(RTE_MAX(cap->max_recv_wr, 1u));
	qp->rq.mask = qp->rq.depth - 1;
	qp->rq.max_sge = ia->srq != NULL ? 1 : RTE_MAX(cap->max_recv_sge, 1u);
	qp->rq.pdn = pd != NULL ? pd->pdn : 0;
	qp->rq.epoch = soft_rq_epoch_next();
	qp->rq.stride = rte_align32pow2(qp->rq.max_sge) * SOFT_SEG;
	qp->rq.buf = soft_obj_alloc(sdev, SOFT_OBJ_BUF, "soft_rq", (size_t)qp->rq.depth * qp->rq.stride, socket);
	qp->rq.wrid = soft_obj_alloc(sdev, SOFT_OBJ_BUF, "soft_rq_wrid", sizeof(uint64_t) * qp->rq.depth, socket);
	qp->rq.done = soft_obj_alloc(sdev, SOFT_OBJ_BUF, "soft_rq_done", qp->rq.depth, socket);
	if (qp->sq.buf == NULL || qp->sq.wrid == NULL || qp->rq.buf == NULL ||
	    qp->rq.wrid == NULL || qp->rq.done == NULL)
		goto nomem;
	qp->sdev = sdev;
	if (sdev->wire != NULL)
		qp->wq = to_scq(ia->recv_cq != NULL ? ia->recv_cq :
				ia->send_cq)->wq;
	if (sdev->wire != NULL && ia->qp_type != QPIO_QPT_UD &&
	    soft_wire_rc_create(qp, ia->qp_type == QPIO_QPT_UC) != 0)
		goto nomem;

	soft_dev_lock(sdev);
	for (slot = 0; slot < sdev->max_qp; slot++)
		if (sdev->qp_tbl[slot] == NULL)
			break;
	if (slot == sdev->max_qp) {
		soft_dev_unlock(sdev);
		rte_errno = ENOSPC;
		goto err;
	}
	sdev->qp_tbl[slot] = qp;
	qp->tbl_slot = slot;
	/* Slot in the low bits, a generation above them; under 2^24. */
	qp->base.qp_num = SOFT_QPN_BASE + slot +
		((sdev->qpn_gen++ * (sdev->qp_tbl_mask + 1)) & 0x7fffffu);
	soft_dev_unlock(sdev);

	cap->max_send_wr = qp->sq.depth;
	cap->max_recv_wr = ia->srq != NULL ? 0 : qp->rq.depth;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_recv_sge = ia->srq != NULL ? 0 : qp->rq.max_sge;
	qp->srq = ia->srq != NULL ? to_ssrq(ia->srq) : NULL;
	qp->rqp = qp->srq != NULL ? &qp->srq->rq : &qp->rq;
	qp->sdev = sdev;
	qp->pkey = sdev->pkeys[0];
	qp->pdn = pd != NULL ? pd->pdn : 0;
	/* The burst and model functions of the QP type, chosen here once. */
	qp->base.post_send_sge = qpio_rdma_post_send_sge_refuse;
	switch (ia->qp_type) {
	case QPIO_QPT_UD:
		qp->base.post_send = soft_post_send_ud;
		qp->sq_execute = soft_sq_execute_pick(sdev, ia->qp_type);
		qp->base.post_recv = soft_post_recv;
		qp->base.post_recv_sge = soft_post_recv_sge;
		break;
	case QPIO_QPT_XRC_SEND:
		qp->base.post_send = soft_post_send_xrc;
		qp->sq_execute = soft_sq_execute_pick(sdev, ia->qp_type);
		qp->base.post_recv = soft_post_recv_none;
		qp->base.post_recv_sge = qpio_rdma_post_recv_sge_refuse;
		break;
	case QPIO_QPT_XRC_RECV:
		/* No SQ and no RQ: every post is refused; the model never
		 * runs its (empty) SQ. */
		qp->base.post_send = soft_post_send_none;
		qp->sq_execute = soft_sq_execute_rc;
		qp->base.post_recv = soft_post_recv_none;
		qp->base.post_recv_sge = qpio_rdma_post_recv_sge_refuse;
		qp->xrc_dom = ((struct soft_xrcd *)ia->xrcd)->dom;
		break;
	default:
		qp->base.post_send = soft_post_send;
		/* flat_burst=0: none, which qpio_qp_create() turns into
		 * -EOPNOTSUPP, as for a driver without it. */
		qp->base.post_send_sge = sdev->flat_burst ?
			soft_post_send_sge : NULL;
		qp->sq_execute = soft_sq_execute_pick(sdev, ia->qp_type);
		qp->base.post_recv = soft_post_recv;
		qp->base.post_recv_sge = soft_post_recv_sge;
		break;
	}
	qp->base.state = QPIO_QPS_RESET;
	qp->base.send_cq = ia->send_cq;
	qp->base.recv_cq = ia->recv_cq;
	qp->base.srq = ia->srq;
	if (ia->qp_type == QPIO_QPT_XRC_RECV)
		memset(cap, 0, sizeof(*cap));
	else if (ia->qp_type == QPIO_QPT_XRC_SEND)
		cap->max_recv_wr = cap->max_recv_sge = 0;
	qp->attr.cap = *cap;
	if (ia->send_cq != NULL)
		TAILQ_INSERT_TAIL(&to_scq(ia->send_cq)->send_qps, qp, cq_next);
	return &qp->base;
nomem:
	rte_errno = ENOMEM;
err:
	qp_free(qp);
	return NULL;
}

/*
 * QP1 of a wire device: a UD QP of the device's own, numbered 1, with
 * the GSI's Q_Key, which the IB CM's MADs travel on (lib/cm). One per
 * device; it keeps the slot soft_qp_create() gave it and soft_qp_lookup()
 * finds it by its number.
 */
struct qpio_qp *
soft_qp_create_gsi(struct qpio_pd *pd, struct qpio_qp_init_attr *ia)
{
	struct soft_dev *sdev = to_sdev(pd->dev);
	struct qpio_qp *qqp;
	struct soft_qp *qp;

	if (sdev->wire == NULL) {
		SOFT_LOG(ERR, "%s: QP1 is a wire device's (devargs wire=): "
			 "on the soft fabric lib/cm connects through its "
			 "own exchange", pd->dev->name);
		rte_errno = EOPNOTSUPP;
		return NULL;
	}
	if (sdev->gsi != NULL) {
		SOFT_LOG(ERR, "%s: QP1 exists already (one a device)",
			 pd->dev->name);
		rte_errno = EBUSY;
		return NULL;
	}
	qqp = soft_qp_create(pd, ia);
	if (qqp == NULL)
		return NULL;
	qp = to_sqp(qqp);
	soft_dev_lock(sdev);
	if (sdev->gsi != NULL) {              /* another thread was first */
		soft_dev_unlock(sdev);
		(void)soft_qp_destroy(qqp);
		rte_errno = EBUSY;
		return NULL;
	}
	qqp->qp_num = SOFT_GSI_QPN;
	qp->attr.qkey = SOFT_GSI_QKEY;
	sdev->gsi = qp;
	soft_dev_unlock(sdev);
	return qqp;
}

int
soft_qp_destroy(struct qpio_qp *qqp)
{
	struct soft_qp *qp = to_sqp(qqp);
	struct soft_dev *sdev = qp->sdev;
	struct soft_cq *scq = to_scq(qqp->send_cq);

	if (qqp->qp_type == QPIO_QPT_UD)
		soft_mcast_qp_gone(qp);  /* as uverbs detaches at destroy */
	soft_qp_state_reset(&qqp->state, QPIO_QPS_RESET);
	queues_reset(qp, 0);
	if (scq != NULL)
		TAILQ_REMOVE(&scq->send_qps, qp, cq_next);
	soft_dev_lock(sdev);
	sdev->qp_tbl[qp->tbl_slot] = NULL;
	if (sdev->gsi == qp)
		sdev->gsi = NULL;
	soft_dev_unlock(sdev);
	soft_peer_gen_bump();   /* before the QP's memory goes */
	/* a wire device's progress steps found QPs in the table under
	 * their queue's lock: once each lock was free, none holds it */
	if (sdev->wire != NULL)
		soft_wire_quiesce(sdev->wire);
	/* queues_reset() purged this QP's CQEs and the pollers' cached QP;
	 * a CQE another lcore still writes for it names a QPN that no
	 * longer resolves, and the poller drops it. */
	qp_free(qp);
	return 0;
}

static void
attr_apply(struct qpio_qp_attr *a, const struct qpio_qp_attr *in, int mask)
{
	if (mask & QPIO_QP_ACCESS_FLAGS)
		a->qp_access_flags = in->qp_access_flags;
	if (mask & QPIO_QP_PKEY_INDEX)
		a->pkey_index = in->pkey_index;
	if (mask & QPIO_QP_PORT)
		a->port_num = in->port_num;
	if (mask & QPIO_QP_QKEY)
		a->qkey = in->qkey;
	if (mask & QPIO_QP_AV)
		a->ah_attr = in->ah_attr;
	if (mask & QPIO_QP_PATH_MTU)
		a->path_mtu = in->path_mtu;
	if (mask & QPIO_QP_TIMEOUT)
		a->timeout = in->timeout;
	if (mask & QPIO_QP_RETRY_CNT)
		a->retry_cnt = in->retry_cnt;
	if (mask & QPIO_QP_RNR_RETRY)
		a->rnr_retry = in->rnr_retry;
	if (mask & QPIO_QP_RQ_PSN)
		a->rq_psn = in->rq_psn;
	if (mask & QPIO_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = in->max_rd_atomic;
	if (mask & QPIO_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = in->min_rnr_timer;
	if (mask & QPIO_QP_SQ_PSN)
		a->sq_psn = in->sq_psn;
	if (mask & QPIO_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = in->max_dest_rd_atomic;
	if (mask & QPIO_QP_DEST_QPN)
		a->dest_qp_num = in->dest_qp_num;
	if (mask & QPIO_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = in->en_sqd_async_notify;
}

/* Find the device an address vector names: by GID when global, else LID. */
static int
av_resolve(const struct qpio_ah_attr *ah, uint16_t *lid)
{
	if (!ah->is_global) {
		*lid = ah->dlid;
		return 0;
	}
	*lid = soft_fabric_lid_by_gid(&ah->grh.dgid);
	return *lid == 0 ? -EINVAL : 0;
}

int
soft_qp_modify(struct qpio_qp *qqp, const struct qpio_qp_attr *in, int mask,
	       enum qpio_qp_state cur, enum qpio_qp_state next)
{
	struct soft_qp *qp = to_sqp(qqp);
	uint16_t lid = qp->dlid;

	/* IBA 10.3.1, SQD: attributes may change once the SQ has drained,
	 * not while a WQE started in RTS is still in progress. */
	if (cur == QPIO_QPS_SQD && next == QPIO_QPS_SQD &&
	    (mask & ~QPIO_QP_STATE) != 0 &&
	    soft_sq_draining(&qp->sq_draining)) {
		SOFT_LOG(ERR, "qp 0x%x: SQD->SQD changes attributes only once "
			 "the SQ has drained (sq_draining is 1; wait for "
			 "SQ_DRAINED)", qqp->qp_num);
		return -EBUSY;
	}
	if ((mask & QPIO_QP_AV) && qp->wrc != NULL) {
		if (soft_wire_rc_av_check(qp, &in->ah_attr) != 0)
			return -EINVAL;
	} else if ((mask & QPIO_QP_AV) && av_resolve(&in->ah_attr, &lid) != 0) {
		SOFT_LOG(ERR, "qp 0x%x: AV names a GID no soft device has",
			 qqp->qp_num);
		return -EINVAL;
	}
	attr_apply(&qp->attr, in, mask);
	if (mask & QPIO_QP_SQ_PSN)   /* a wire device's BTH PSNs start here */
		qp->wire_psn = in->sq_psn & 0xffffff;
	if (mask & QPIO_QP_PKEY_INDEX) /* index checked by lib/rdma */
		soft_qp_pkey_set(&qp->pkey,
				 qp->sdev->pkeys[qp->attr.pkey_index]);
	qp->dlid = lid;
	qp->dest_qpn = qp->attr.dest_qp_num;
	if (mask & QPIO_QP_AV)
		qp->peer_owner = soft_fabric_owner_by_lid(lid);
	/* Any requester's cached responder is looked up again: this QP's
	 * destination, its P_Key or its state may be what it depends on. */
	soft_peer_gen_bump();
	if (next == QPIO_QPS_RESET) {
		soft_qp_state_reset(&qqp->state, QPIO_QPS_RESET);
		queues_reset(qp, 0);
		if (qp->wrc != NULL)
			soft_wire_rc_modify(qp, mask, next);
		return 0;
	}
	if (qp->wrc != NULL)
		soft_wire_rc_modify(qp, mask, next);
	if (next == QPIO_QPS_ERR) {
		if (cur == QPIO_QPS_RESET) { /* nothing posted, nothing to flush */
			soft_qp_state_publish(&qqp->state, QPIO_QPS_ERR);
			if (qp->srq != NULL)
				soft_qp_last_wqe(qp);
		} else {
			soft_qp_set_err(qp, true, -1);
		}
		return 0;
	}
	if (next == QPIO_QPS_SQD) {
		if (cur == QPIO_QPS_RTS)
			soft_qp_sqd_enter(qp,
				(mask & QPIO_QP_EN_SQD_ASYNC_NOTIFY) &&
				in->en_sqd_async_notify);
		return 0;
	}
	soft_qp_state_publish(&qqp->state, (uint8_t)next);
	if (next == QPIO_QPS_RTS &&
	    (cur == QPIO_QPS_SQD || cur == QPIO_QPS_SQE))
		soft_qp_sq_resume(qp);
	return 0;
}

int
soft_qp_query(struct qpio_qp *qqp, struct qpio_qp_attr *attr,
	      struct qpio_qp_init_attr *ia)
{
	struct soft_qp *qp = to_sqp(qqp);

	*attr = qp->attr;
	attr->qp_state = qpio_qp_state(qqp);
	attr->cur_qp_state = attr->qp_state;
	attr->sq_draining = attr->qp_state == QPIO_QPS_SQD &&
		soft_sq_draining(&qp->sq_draining);
	attr->cap = qp->attr.cap;
	if (ia != NULL)
		ia->cap = qp->attr.cap;
	return 0;
}

int
qpio_soft_qp_set_counters(struct qpio_qp *qqp, uint32_t start)
{
	struct soft_qp *qp;

	if (qqp == NULL || !soft_is_dev(qqp->dev))
		return -EINVAL;
	qp = to_sqp(qqp);
	if (qpio_qp_state(qqp) != QPIO_QPS_RESET) {
		SOFT_LOG(ERR, "qp 0x%x: counters can be set only in RESET",
			 qqp->qp_num);
		return -EINVAL;
	}
	queues_reset(qp, start);
	return 0;
}

int
qpio_soft_qp_stats(const struct qpio_qp *qqp, struct qpio_soft_qp_stats *st)
{
	const struct soft_qp *qp;

	if (qqp == NULL || st == NULL || !soft_is_dev(qqp->dev))
		return -EINVAL;
	qp = (const struct soft_qp *)qqp;
	st->rnr_naks = qp->rnr_nak_total;
	st->rnr_retry_exceeded = qp->rnr_exceeded;
	st->retry_exceeded = qp->retry_exceeded;
	st->flushed = qp->flushed;
	st->ud_no_dest = qp->ud_no_dest;
	st->ud_too_long = qp->ud_too_long;
	st->ud_qkey_drops = __atomic_load_n(&qp->ud_qkey_drops, __ATOMIC_RELAXED);
	st->ud_no_recv_drops = __atomic_load_n(&qp->ud_no_recv_drops,
					       __ATOMIC_RELAXED);
	st->ud_len_drops = __atomic_load_n(&qp->ud_len_drops, __ATOMIC_RELAXED);
	st->pkey_drops = __atomic_load_n(&qp->pkey_drops, __ATOMIC_RELAXED);
	st->sq_doorbells = qp->sq_doorbells;
	st->rq_doorbells = qp->rq_doorbells;
	st->sq_direct = qp->sq_direct;
	st->sq_posted = qp->sq.pi;
	st->sq_completed = qp->sq.tail;
	st->sq_executed = soft_sq_ci_peek(&qp->sq.ci);
	st->rq_posted = qp->rq.head;
	st->rq_consumed = qp->rq.ci;
	st->transport_retries = qp->transport_retries;
	st->fault_drops = qp->fault_drops;
	st->fault_rnr = qp->fault_rnr;
	st->fault_delays = qp->fault_delays;
	return 0;
}

int
qpio_soft_cq_overflowed(const struct qpio_cq *qcq)
{
	if (qcq == NULL || !soft_is_dev(qcq->dev))
		return -EINVAL;
	return soft_cq_overflowed(&((const struct soft_cq *)qcq)->overflow);
}

int
qpio_soft_cq_overflow_count(const struct qpio_cq *qcq, uint64_t *count)
{
	if (qcq == NULL || count == NULL || !soft_is_dev(qcq->dev))
		return -EINVAL;
	*count = __atomic_load_n(&((const struct soft_cq *)qcq)->overflow_count,
				 __ATOMIC_RELAXED);
	return 0;
}
