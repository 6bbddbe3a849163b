/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PD, MR, CQ and QP objects: argument and rule checks in one place, then
 * the driver op.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "rdma_driver.h"
#include "rdma_events.h"
#include "rdma_private.h"

#define RET_NULL(err) do { rte_errno = (err); return NULL; } while (0)

/* Enter a new handle in the table of live handles; on failure undo the
 * driver's create with undo(obj) and fail with ENOMEM. */
#define HANDLE_ADD_OR_UNDO(obj, type, undo) do { \
		if (rdma_handle_add((obj), (type)) < 0) { \
			(void)(undo)(obj); \
			RDMA_LOG(ERR, "no memory to track a new handle"); \
			RET_NULL(ENOMEM); \
		} \
	} while (0)

struct qpio_pd *
qpio_pd_alloc(struct qpio_device *dev)
{
	struct qpio_pd *pd;

	if (dev == NULL)
		RET_NULL(EINVAL);
	if (dev->nb_pd >= dev->attr.max_pd) {
		RDMA_LOG(ERR, "device %s: max_pd (%u) reached", dev->name,
			 dev->attr.max_pd);
		RET_NULL(ENOSPC);
	}
	pd = dev->ops->pd_alloc(dev);
	if (pd == NULL)
		return NULL;
	pd->dev = dev;
	pd->refcnt = 0;
	HANDLE_ADD_OR_UNDO(pd, RDMA_HANDLE_PD, dev->ops->pd_free);
	dev->nb_pd++;
	return pd;
}

int
qpio_pd_free(struct qpio_pd *pd)
{
	struct qpio_device *dev;
	int ret;

	if (pd == NULL)
		return -EINVAL;
	RDMA_HANDLE_CHECK(pd, RDMA_HANDLE_PD, "pd");
	dev = pd->dev;
	if (pd->refcnt != 0) {
		RDMA_LOG(ERR, "pd %u of %s: free refused, %u MRs/QPs/AHs/SRQs still use it",
			 pd->pdn, dev->name, pd->refcnt);
		return -EBUSY;
	}
	ret = dev->ops->pd_free(pd);
	if (ret < 0)
		return ret;
	rdma_handle_del(pd);
	dev->nb_pd--;
	return 0;
}

struct qpio_mr *
qpio_mr_reg(struct qpio_pd *pd, void *addr, size_t length, unsigned int access)
{
	struct qpio_device *dev;
	struct qpio_mr *mr;

	if (pd == NULL || addr == NULL)
		RET_NULL(EINVAL);
	dev = pd->dev;
	if (length == 0 || length > dev->attr.max_mr_size) {
		RDMA_LOG(ERR, "mr on %s: length %zu not in [1, max_mr_size %" PRIu64 "]",
			 dev->name, length, dev->attr.max_mr_size);
		RET_NULL(EINVAL);
	}
	if ((uintptr_t)addr + length - 1 < (uintptr_t)addr) {
		RDMA_LOG(ERR, "mr on %s: range %p + %zu wraps the address space",
			 dev->name, addr, length);
		RET_NULL(EINVAL);
	}
	if (access & ~QPIO_ACCESS_ALL) {
		RDMA_LOG(ERR, "mr on %s: unknown access flags 0x%x", dev->name,
			 access & ~QPIO_ACCESS_ALL);
		RET_NULL(EINVAL);
	}
	if ((access & (QPIO_ACCESS_REMOTE_WRITE | QPIO_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & QPIO_ACCESS_LOCAL_WRITE)) {
		RDMA_LOG(ERR, "mr on %s: REMOTE_WRITE/REMOTE_ATOMIC need LOCAL_WRITE "
			 "(IBA C10-24)", dev->name);
		RET_NULL(EINVAL);
	}
	if (dev->nb_mr >= dev->attr.max_mr) {
		RDMA_LOG(ERR, "device %s: max_mr (%u) reached", dev->name,
			 dev->attr.max_mr);
		RET_NULL(ENOSPC);
	}
	mr = dev->ops->mr_reg(pd, addr, length, access);
	if (mr == NULL)
		return NULL;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->access = access;
	HANDLE_ADD_OR_UNDO(mr, RDMA_HANDLE_MR, dev->ops->mr_dereg);
	pd->refcnt++;
	dev->nb_mr++;
	return mr;
}

int
qpio_mr_dereg(struct qpio_mr *mr)
{
	struct qpio_pd *pd;
	int ret;

	if (mr == NULL)
		return -EINVAL;
	RDMA_HANDLE_CHECK(mr, RDMA_HANDLE_MR, "mr");
	pd = mr->pd;
	ret = pd->dev->ops->mr_dereg(mr);
	if (ret < 0)
		return ret;
	rdma_handle_del(mr);
	pd->refcnt--;
	pd->dev->nb_mr--;
	return 0;
}

struct qpio_ah *
qpio_ah_create(struct qpio_pd *pd, const struct qpio_ah_attr *attr)
{
	struct qpio_device *dev;
	struct qpio_ah *ah;

	if (pd == NULL || attr == NULL)
		RET_NULL(EINVAL);
	if (!rdma_handle_live(pd, RDMA_HANDLE_PD)) {
		RDMA_LOG(ERR, "ah: pd %p is not a live pd of this process "
			 "(freed already, or never allocated)", (void *)pd);
		RET_NULL(EINVAL);
	}
	dev = pd->dev;
	if (rdma_av_check(dev, attr, "ah") < 0)
		RET_NULL(EINVAL);
	if (dev->nb_ah >= dev->attr.max_ah) {
		RDMA_LOG(ERR, "device %s: max_ah (%u) reached", dev->name,
			 dev->attr.max_ah);
		RET_NULL(ENOSPC);
	}
	if (dev->ops->ah_create == NULL) {
		RDMA_LOG(ERR, "device %s: driver %s has no address handles",
			 dev->name, dev->drv->name);
		RET_NULL(EOPNOTSUPP);
	}
	ah = dev->ops->ah_create(pd, attr);
	if (ah == NULL)
		return NULL;
	ah->pd = pd;
	ah->attr = *attr;
	HANDLE_ADD_OR_UNDO(ah, RDMA_HANDLE_AH, dev->ops->ah_destroy);
	pd->refcnt++;
	dev->nb_ah++;
	return ah;
}

int
qpio_ah_destroy(struct qpio_ah *ah)
{
	struct qpio_pd *pd;
	int ret;

	if (ah == NULL)
		return -EINVAL;
	RDMA_HANDLE_CHECK(ah, RDMA_HANDLE_AH, "ah");
	pd = ah->pd;
	ret = pd->dev->ops->ah_destroy(ah);
	if (ret < 0)
		return ret;
	rdma_handle_del(ah);
	pd->refcnt--;
	pd->dev->nb_ah--;
	return 0;
}

/* poll_ts of a CQ created without QPIO_CQ_FLAG_TIMESTAMP. */
static uint16_t
cq_poll_no_ts(struct qpio_cq *cq, struct qpio_wc *wc, uint64_t *ts,
	      uint16_t nb_wc)
{
	uint16_t n = cq->poll(cq, wc, nb_wc);

	memset(ts, 0, sizeof(*ts) * n);
	return n;
}

struct qpio_cq *
qpio_cq_create_ex(struct qpio_device *dev, const struct qpio_cq_init_attr *attr)
{
	struct qpio_device_attr_ex ax;
	struct qpio_cq *cq;

	if (dev == NULL || attr == NULL)
		RET_NULL(EINVAL);
	if (attr->cqe == 0 || attr->cqe > dev->attr.max_cqe) {
		RDMA_LOG(ERR, "cq on %s: %u entries not in [1, max_cqe %u]",
			 dev->name, attr->cqe, dev->attr.max_cqe);
		RET_NULL(EINVAL);
	}
	if (attr->flags & ~(uint32_t)QPIO_CQ_FLAG_TIMESTAMP) {
		RDMA_LOG(ERR, "cq on %s: unknown flags 0x%x", dev->name,
			 attr->flags & ~(uint32_t)QPIO_CQ_FLAG_TIMESTAMP);
		RET_NULL(EINVAL);
	}
	if (attr->flags & QPIO_CQ_FLAG_TIMESTAMP) {
		if (qpio_rdma_dev_query_ex(dev, &ax) != 0 ||
		    ax.completion_timestamp_mask == 0) {
			RDMA_LOG(ERR, "cq on %s: QPIO_CQ_FLAG_TIMESTAMP, but the "
				 "device gives no completion timestamps "
				 "(completion_timestamp_mask 0)", dev->name);
			RET_NULL(EOPNOTSUPP);
		}
	}
	if (attr->comp_vector >= RTE_MAX(dev->attr.num_comp_vectors, 1u)) {
		RDMA_LOG(ERR, "cq on %s: comp_vector %u, but the device has %u "
			 "completion vectors (0..%u; num_comp_vectors of "
			 "qpio_rdma_dev_query())", dev->name, attr->comp_vector,
			 RTE_MAX(dev->attr.num_comp_vectors, 1u),
			 RTE_MAX(dev->attr.num_comp_vectors, 1u) - 1);
		RET_NULL(EINVAL);
	}
	if (dev->nb_cq >= dev->attr.max_cq) {
		RDMA_LOG(ERR, "device %s: max_cq (%u) reached", dev->name,
			 dev->attr.max_cq);
		RET_NULL(ENOSPC);
	}
	cq = dev->ops->cq_create(dev, attr->cqe, attr->socket_id, attr->flags,
				 attr->comp_vector);
	if (cq == NULL)
		return NULL;
	cq->dev = dev;
	cq->refcnt = 0;
	cq->socket_id = attr->socket_id;
	cq->flags = attr->flags;
	if (!(attr->flags & QPIO_CQ_FLAG_TIMESTAMP))
		cq->poll_ts = cq_poll_no_ts;
	HANDLE_ADD_OR_UNDO(cq, RDMA_HANDLE_CQ, dev->ops->cq_destroy);
	dev->nb_cq++;
	rdma_tel_track(dev, &dev->cqs, cq);
	return cq;
}

struct qpio_cq *
qpio_cq_create(struct qpio_device *dev, uint32_t cqe, int socket_id)
{
	struct qpio_cq_init_attr a = { .cqe = cqe, .socket_id = socket_id };

	return qpio_cq_create_ex(dev, &a);
}

int
qpio_cq_destroy(struct qpio_cq *cq)
{
	struct qpio_device *dev;
	int ret;

	if (cq == NULL)
		return -EINVAL;
	RDMA_HANDLE_CHECK(cq, RDMA_HANDLE_CQ, "cq");
	dev = cq->dev;
	if (cq->refcnt != 0) {
		RDMA_LOG(ERR, "cq %u of %s: destroy refused, %u QP uses",
			 cq->cqn, dev->name, cq->refcnt);
		return -EBUSY;
	}
	rdma_tel_untrack(dev, &dev->cqs, cq);
	ret = dev->ops->cq_destroy(cq);
	if (ret < 0) {
		rdma_tel_track(dev, &dev->cqs, cq);
		return ret;
	}
	rdma_handle_del(cq);
	rdma_events_scrub(dev, cq);
	dev->nb_cq--;
	return 0;
}

int
qpio_cq_resize(struct qpio_cq *cq, uint32_t cqe)
{
	int ret;

	if (cq == NULL)
		return -EINVAL;
	RDMA_HANDLE_CHECK(cq, RDMA_HANDLE_CQ, "cq");
	if (cqe == 0 || cqe > cq->dev->attr.max_cqe) {
		RDMA_LOG(ERR, "cq %u of %s: resize to %u entries not in "
			 "[1, max_cqe %u]", cq->cqn, cq->dev->name, cqe,
			 cq->dev->attr.max_cqe);
		return -EINVAL;
	}
	if (cq->dev->ops->cq_resize == NULL) {
		RDMA_LOG(ERR, "cq %u of %s: driver %s cannot resize CQs",
			 cq->cqn, cq->dev->name, cq->dev->drv->name);
		return -EOPNOTSUPP;
	}
	ret = cq->dev->ops->cq_resize(cq, cqe);
	if (ret < 0)
		return ret;
	return (int)cq->depth;
}

int
qpio_cq_req_notify(struct qpio_cq *cq, int solicited_only)
{
	if (cq == NULL)
		return -EINVAL;
	RDMA_HANDLE_CHECK(cq, RDMA_HANDLE_CQ, "cq");
	if (cq->dev->ops->cq_req_notify == NULL)
		return -EOPNOTSUPP;
	return cq->dev->ops->cq_req_notify(cq, solicited_only != 0);
}

int
qpio_cq_event_fd(const struct qpio_cq *cq)
{
	if (cq == NULL)
		return -EINVAL;
	RDMA_HANDLE_CHECK(cq, RDMA_HANDLE_CQ, "cq");
	if (cq->dev->ops->cq_event_fd == NULL)
		return -EOPNOTSUPP;
	return cq->dev->ops->cq_event_fd(cq);
}

int
qpio_cq_ack_events(struct qpio_cq *cq)
{
	if (cq == NULL)
		return -EINVAL;
	RDMA_HANDLE_CHECK(cq, RDMA_HANDLE_CQ, "cq");
	if (cq->dev->ops->cq_ack_events == NULL)
		return -EOPNOTSUPP;
	return cq->dev->ops->cq_ack_events(cq);
}

struct qpio_srq *
qpio_srq_create(struct qpio_pd *pd, struct qpio_srq_attr *attr)
{
	struct qpio_device *dev;
	struct qpio_srq *srq;

	if (pd == NULL || attr == NULL)
		RET_NULL(EINVAL);
	dev = pd->dev;
	if (dev->attr.max_srq == 0) {
		RDMA_LOG(ERR, "srq on %s: the device has no SRQs (max_srq 0)",
			 dev->name);
		RET_NULL(EOPNOTSUPP);
	}
	if (attr->max_wr == 0 || attr->max_wr > dev->attr.max_srq_wr) {
		RDMA_LOG(ERR, "srq on %s: max_wr %u not in [1, max_srq_wr %u]",
			 dev->name, attr->max_wr, dev->attr.max_srq_wr);
		RET_NULL(EINVAL);
	}
	if (attr->max_sge > dev->attr.max_srq_sge) {
		RDMA_LOG(ERR, "srq on %s: max_sge %u over max_srq_sge %u",
			 dev->name, attr->max_sge, dev->attr.max_srq_sge);
		RET_NULL(EINVAL);
	}
	if (dev->nb_srq >= dev->attr.max_srq) {
		RDMA_LOG(ERR, "device %s: max_srq (%u) reached", dev->name,
			 dev->attr.max_srq);
		RET_NULL(ENOSPC);
	}
	if (dev->ops->srq_create == NULL) {
		RDMA_LOG(ERR, "device %s: driver %s has no SRQs", dev->name,
			 dev->drv->name);
		RET_NULL(EOPNOTSUPP);
	}
	srq = dev->ops->srq_create(pd, attr);
	if (srq == NULL)
		return NULL;
	attr->srq_limit = 0;
	srq->dev = dev;
	srq->pd = pd;
	srq->refcnt = 0;
	srq->xrcd = NULL;
	srq->cq = NULL;
	srq->srq_type = QPIO_SRQT_BASIC;
	HANDLE_ADD_OR_UNDO(srq, RDMA_HANDLE_SRQ, dev->ops->srq_destroy);
	pd->refcnt++;
	dev->nb_srq++;
	return srq;
}

int
qpio_srq_modify(struct qpio_srq *srq, const struct qpio_srq_attr *attr,
		int attr_mask)
{
	struct qpio_srq_attr cur;
	int ret;

	if (srq == NULL || attr == NULL)
		return -EINVAL;
	if (attr_mask & ~(QPIO_SRQ_MAX_WR | QPIO_SRQ_LIMIT)) {
		RDMA_LOG(ERR, "srq %u: unknown attr_mask bits 0x%x", srq->srq_num,
			 (unsigned int)attr_mask & ~(QPIO_SRQ_MAX_WR | QPIO_SRQ_LIMIT));
		return -EINVAL;
	}
	memset(&cur, 0, sizeof(cur));
	ret = srq->dev->ops->srq_query(srq, &cur);
	if (ret < 0)
		return ret;
	if ((attr_mask & QPIO_SRQ_LIMIT) &&
	    attr->srq_limit > ((attr_mask & QPIO_SRQ_MAX_WR) ? attr->max_wr :
			       cur.max_wr)) {
		RDMA_LOG(ERR, "srq %u: srq_limit %u over max_wr %u", srq->srq_num,
			 attr->srq_limit, (attr_mask & QPIO_SRQ_MAX_WR) ?
			 attr->max_wr : cur.max_wr);
		return -EINVAL;
	}
	if ((attr_mask & QPIO_SRQ_MAX_WR) &&
	    (attr->max_wr == 0 || attr->max_wr > srq->dev->attr.max_srq_wr)) {
		RDMA_LOG(ERR, "srq %u: max_wr %u not in [1, max_srq_wr %u]",
			 srq->srq_num, attr->max_wr, srq->dev->attr.max_srq_wr);
		return -EINVAL;
	}
	return srq->dev->ops->srq_modify(srq, attr, attr_mask);
}

int
qpio_srq_query(struct qpio_srq *srq, struct qpio_srq_attr *attr)
{
	if (srq == NULL || attr == NULL)
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	return srq->dev->ops->srq_query(srq, attr);
}

int
qpio_srq_destroy(struct qpio_srq *srq)
{
	struct qpio_device *dev;
	struct qpio_xrcd *xrcd;
	struct qpio_cq *cq;
	struct qpio_pd *pd;
	int ret;

	if (srq == NULL)
		return -EINVAL;
	RDMA_HANDLE_CHECK(srq, RDMA_HANDLE_SRQ, "srq");
	dev = srq->dev;
	pd = srq->pd;
	if (srq->refcnt != 0) {
		RDMA_LOG(ERR, "srq %u of %s: destroy refused, %u QPs use it",
			 srq->srq_num, dev->name, srq->refcnt);
		return -EBUSY;
	}
	xrcd = srq->xrcd;
	cq = srq->cq;
	ret = dev->ops->srq_destroy(srq);
	if (ret < 0)
		return ret;
	rdma_handle_del(srq);
	rdma_events_scrub(dev, srq);
	pd->refcnt--;
	if (xrcd != NULL)
		xrcd->refcnt--;
	if (cq != NULL)
		cq->refcnt--;
	dev->nb_srq--;
	return 0;
}

static int
check_qp_cap(const struct qpio_device *dev, const struct qpio_qp_init_attr *ia)
{
	const struct qpio_device_attr *a = &dev->attr;
	const struct qpio_qp_cap *c = &ia->cap;

	if (c->max_send_wr > a->max_qp_wr || c->max_recv_wr > a->max_qp_wr) {
		RDMA_LOG(ERR, "qp on %s: max_send_wr %u / max_recv_wr %u over max_qp_wr %u",
			 dev->name, c->max_send_wr, c->max_recv_wr, a->max_qp_wr);
		return -EINVAL;
	}
	if (c->max_send_sge > a->max_sge || c->max_recv_sge > a->max_sge) {
		RDMA_LOG(ERR, "qp on %s: max_send_sge %u / max_recv_sge %u over max_sge %u",
			 dev->name, c->max_send_sge, c->max_recv_sge, a->max_sge);
		return -EINVAL;
	}
	if (c->max_inline_data > a->max_inline_data) {
		RDMA_LOG(ERR, "qp on %s: max_inline_data %u over device limit %u",
			 dev->name, c->max_inline_data, a->max_inline_data);
		return -EINVAL;
	}
	if (ia->srq != NULL && c->max_recv_wr != 0) {
		RDMA_LOG(ERR, "qp on %s: max_recv_wr must be 0 with an SRQ",
			 dev->name);
		return -EINVAL;
	}
	return 0;
}

/*
 * The XRC rules of qpio_qp_create() (ibv_create_qp_ex(3)): an initiator
 * has a PD and a send CQ only; a target has no PD and no CQ, an xrcd of
 * a device with XRC, and no queue of its own. ia is normalised: the
 * fields the type ignores are cleared. @return the device, or NULL with
 * rte_errno (logged).
 */
static struct qpio_device *
xrc_qp_check(struct qpio_pd *pd, struct qpio_qp_init_attr *ia)
{
	struct qpio_device *dev;
	struct qpio_device_attr_ex ax;

	if (ia->qp_type == QPIO_QPT_XRC_SEND) {
		if (pd == NULL || ia->send_cq == NULL) {
			RDMA_LOG(ERR, "qp: an XRC_SEND QP needs a pd and a send_cq "
				 "(ibv_create_qp_ex)");
			RET_NULL(EINVAL);
		}
		dev = pd->dev;
		if (ia->xrcd != NULL) {
			RDMA_LOG(ERR, "qp on %s: an XRC_SEND QP takes no xrcd "
				 "(its WRs name the remote SRQ)", dev->name);
			RET_NULL(EINVAL);
		}
		ia->recv_cq = NULL;
		ia->srq = NULL;
		ia->cap.max_recv_wr = 0;
		ia->cap.max_recv_sge = 0;
	} else {
		if (pd != NULL || ia->xrcd == NULL) {
			RDMA_LOG(ERR, "qp: an XRC_RECV QP is created with pd NULL "
				 "and init_attr->xrcd (ibv_create_qp_ex)");
			RET_NULL(EINVAL);
		}
		if (!rdma_handle_live(ia->xrcd, RDMA_HANDLE_XRCD)) {
			RDMA_LOG(ERR, "qp: xrcd %p is not an open XRC domain handle",
				 (void *)ia->xrcd);
			RET_NULL(EINVAL);
		}
		dev = ia->xrcd->dev;
		ia->send_cq = NULL;
		ia->recv_cq = NULL;
		ia->srq = NULL;
		memset(&ia->cap, 0, sizeof(ia->cap));
		ia->sq_sig_all = 0;
	}
	if (qpio_rdma_dev_query_ex(dev, &ax) != 0 || ax.max_xrcd == 0 ||
	    dev->ops->xrcd_open == NULL) {
		RDMA_LOG(ERR, "qp on %s: the device has no XRC (max_xrcd 0)",
			 dev->name);
		RET_NULL(EOPNOTSUPP);
	}
	return dev;
}

/* The flat bursts of a driver that has none: refused, nothing posted. */
static uint16_t
post_send_sge_none(struct qpio_qp *qp, const struct qpio_sge *sges __rte_unused,
		   uint16_t nb_wr, uint64_t wr_id __rte_unused,
		   unsigned int flags __rte_unused, int *err)
{
	if (nb_wr != 0)
		RDMA_LOG(DEBUG, "qp 0x%x: the driver of %s has no flat send "
			 "burst (use qpio_qp_post_send())", qp->qp_num,
			 qp->dev->name);
	if (err != NULL)
		*err = nb_wr != 0 ? -EOPNOTSUPP : 0;
	return 0;
}

static uint16_t
post_recv_sge_none(struct qpio_qp *qp, const struct qpio_sge *sges __rte_unused,
		   uint16_t nb_wr, uint64_t wr_id __rte_unused, int *err)
{
	if (nb_wr != 0)
		RDMA_LOG(DEBUG, "qp 0x%x: the driver of %s has no flat receive "
			 "burst (use qpio_qp_post_recv())", qp->qp_num,
			 qp->dev->name);
	if (err != NULL)
		*err = nb_wr != 0 ? -EOPNOTSUPP : 0;
	return 0;
}

/* qpio_qp_create(), and with gsi set qpio_qp_create_gsi(). */
static struct qpio_qp *
qp_create(struct qpio_pd *pd, struct qpio_qp_init_attr *ia, int gsi)
{
	struct qpio_qp *(*create)(struct qpio_pd *,
				  struct qpio_qp_init_attr *);
	struct qpio_device *dev;
	struct qpio_qp *qp;
	int ret, xrc;

	if (ia == NULL)
		RET_NULL(EINVAL);
	/* Every handle looked up before it is read: a destroyed or foreign
	 * one is refused, never dereferenced. */
	if ((pd != NULL && !rdma_handle_live(pd, RDMA_HANDLE_PD)) ||
	    (ia->send_cq != NULL &&
	     !rdma_handle_live(ia->send_cq, RDMA_HANDLE_CQ)) ||
	    (ia->recv_cq != NULL &&
	     !rdma_handle_live(ia->recv_cq, RDMA_HANDLE_CQ)) ||
	    (ia->srq != NULL && !rdma_handle_live(ia->srq, RDMA_HANDLE_SRQ))) {
		RDMA_LOG(ERR, "qp: pd %p, send_cq %p, recv_cq %p or srq %p is "
			 "not a live object of this process (destroyed "
			 "already, or never created)", (void *)pd,
			 (void *)ia->send_cq, (void *)ia->recv_cq,
			 (void *)ia->srq);
		RET_NULL(EINVAL);
	}
	xrc = ia->qp_type == QPIO_QPT_XRC_SEND || ia->qp_type == QPIO_QPT_XRC_RECV;
	if (xrc) {
		dev = xrc_qp_check(pd, ia);
		if (dev == NULL)
			return NULL;
		goto checked;
	}
	if (pd == NULL || ia->send_cq == NULL || ia->recv_cq == NULL)
		RET_NULL(EINVAL);
	dev = pd->dev;
	if (ia->xrcd != NULL) {
		RDMA_LOG(ERR, "qp on %s: xrcd is for XRC_RECV QPs only",
			 dev->name);
		RET_NULL(EINVAL);
	}
	if (ia->send_cq->dev != dev || ia->recv_cq->dev != dev) {
		RDMA_LOG(ERR, "qp on %s: CQs must belong to the same device",
			 dev->name);
		RET_NULL(EINVAL);
	}
	if (ia->srq != NULL && ia->srq->dev != dev) {
		RDMA_LOG(ERR, "qp on %s: srq %u belongs to device %s",
			 dev->name, ia->srq->srq_num, ia->srq->dev->name);
		RET_NULL(EINVAL);
	}
	if (ia->qp_type != QPIO_QPT_RC && ia->qp_type != QPIO_QPT_UC &&
	    ia->qp_type != QPIO_QPT_UD) {
		RDMA_LOG(ERR, "qp on %s: unknown qp_type %d", dev->name,
			 (int)ia->qp_type);
		RET_NULL(EINVAL);
	}
checked:
	if (ia->send_cq != NULL && ia->send_cq->dev != dev) {
		RDMA_LOG(ERR, "qp on %s: CQs must belong to the same device",
			 dev->name);
		RET_NULL(EINVAL);
	}
	ret = check_qp_cap(dev, ia);
	if (ret < 0)
		RET_NULL(-ret);
	if (dev->nb_qp >= dev->attr.max_qp) {
		RDMA_LOG(ERR, "device %s: max_qp (%u) reached", dev->name,
			 dev->attr.max_qp);
		RET_NULL(ENOSPC);
	}
	create = gsi ? dev->ops->gsi_qp_create : dev->ops->qp_create;
	if (create == NULL) {
		RDMA_LOG(ERR, "device %s (%s) has no QP1 of its own to give",
			 dev->name, dev->attr.driver);
		RET_NULL(EOPNOTSUPP);
	}
	qp = create(pd, ia);
	if (qp == NULL)
		return NULL;
	if (qp->post_send_sge == NULL)
		qp->post_send_sge = post_send_sge_none;
	if (qp->post_recv_sge == NULL)
		qp->post_recv_sge = post_recv_sge_none;
	qp->dev = dev;
	qp->pd = pd;
	qp->send_cq = ia->send_cq;
	qp->recv_cq = ia->recv_cq;
	qp->srq = ia->srq;
	qp->qp_context = ia->qp_context;
	qp->qp_type = (uint8_t)ia->qp_type;
	qp->sq_sig_all = ia->sq_sig_all != 0;
	qp->xrcd = ia->qp_type == QPIO_QPT_XRC_RECV ? ia->xrcd : NULL;
	qp->xrc_regs = NULL;
	qp->nb_xrc_regs = 0;
	qp->xrc_regs_cap = 0;
	if (qp->xrcd != NULL && rdma_xrc_reg_push(qp, qp->xrcd) < 0) {
		(void)dev->ops->qp_destroy(qp);
		RDMA_LOG(ERR, "no memory for the registration of a target QP");
		RET_NULL(ENOMEM);
	}
	if (rdma_handle_add(qp, RDMA_HANDLE_QP) < 0) {
		if (qp->xrcd != NULL)
			(void)rdma_xrc_reg_pop(qp);
		(void)dev->ops->qp_destroy(qp);
		RDMA_LOG(ERR, "no memory to track a new handle");
		RET_NULL(ENOMEM);
	}
	if (pd != NULL)
		pd->refcnt++;
	if (ia->send_cq != NULL)
		ia->send_cq->refcnt++;
	if (ia->recv_cq != NULL)
		ia->recv_cq->refcnt++;
	if (ia->srq != NULL)
		ia->srq->refcnt++;
	dev->nb_qp++;
	rdma_tel_track(dev, &dev->qps, qp);
	return qp;
}

struct qpio_qp *
qpio_qp_create(struct qpio_pd *pd, struct qpio_qp_init_attr *ia)
{
	return qp_create(pd, ia, 0);
}

struct qpio_qp *
qpio_qp_create_gsi(struct qpio_pd *pd, struct qpio_qp_init_attr *ia)
{
	if (ia != NULL && ia->qp_type != QPIO_QPT_UD) {
		RDMA_LOG(ERR, "QP1 is a UD QP (IBA ch. 13): qp_type %d given",
			 (int)ia->qp_type);
		RET_NULL(EINVAL);
	}
	if (ia != NULL && ia->srq != NULL) {
		RDMA_LOG(ERR, "QP1 takes its own receives: srq given");
		RET_NULL(EINVAL);
	}
	return qp_create(pd, ia, 1);
}

int
qpio_qp_destroy(struct qpio_qp *qp)
{
	struct qpio_device *dev;
	struct qpio_pd *pd;
	struct qpio_cq *scq, *rcq;
	struct qpio_srq *srq;
	struct qpio_xrcd *xrcd, **regs;
	int ret;

	if (qp == NULL)
		return -EINVAL;
	RDMA_HANDLE_CHECK(qp, RDMA_HANDLE_QP, "qp");
	/* An XRC target lives while registered (ibv_open_qp(3)). */
	if (qp->nb_xrc_regs > 1) {
		(void)rdma_xrc_reg_pop(qp);
		return 0;
	}
	xrcd = qp->nb_xrc_regs != 0 ? qp->xrc_regs[0] : NULL;
	regs = qp->xrc_regs;
	dev = qp->dev;
	pd = qp->pd;
	scq = qp->send_cq;
	rcq = qp->recv_cq;
	srq = qp->srq;
	rdma_tel_untrack(dev, &dev->qps, qp);
	ret = dev->ops->qp_destroy(qp);
	if (ret < 0) {
		rdma_tel_track(dev, &dev->qps, qp);
		return ret;
	}
	if (xrcd != NULL) {   /* the last registration, read before the free */
		xrcd->refcnt--;
		rte_free(regs);
	}
	rdma_handle_del(qp);
	rdma_events_scrub(dev, qp);
	if (pd != NULL)
		pd->refcnt--;
	if (scq != NULL)
		scq->refcnt--;
	if (rcq != NULL)
		rcq->refcnt--;
	if (srq != NULL)
		srq->refcnt--;
	dev->nb_qp--;
	return 0;
}

/* Range rules for attribute values, per IBA 10.2.5 and the verbs man pages. */
static int
check_qp_attr_values(const struct qpio_qp *qp, const struct qpio_qp_attr *attr,
		     int mask, enum qpio_qp_state cur)
{
	const struct qpio_device *dev = qp->dev;
	const char *rule = NULL;

	if ((mask & QPIO_QP_CUR_STATE) && attr->cur_qp_state != cur)
		rule = "cur_qp_state differs from the current state";
	else if ((mask & QPIO_QP_PORT) &&
		 (attr->port_num < 1 || attr->port_num > dev->attr.phys_port_cnt))
		rule = "port_num out of range";
	else if ((mask & QPIO_QP_ACCESS_FLAGS) &&
		 (attr->qp_access_flags & ~QPIO_ACCESS_ALL))
		rule = "unknown qp_access_flags bit";
	else if ((mask & QPIO_QP_PATH_MTU) &&
		 (attr->path_mtu < QPIO_MTU_256 || attr->path_mtu > QPIO_MTU_4096))
		rule = "path_mtu not in 256..4096";
	else if ((mask & QPIO_QP_DEST_QPN) && attr->dest_qp_num > 0xffffff)
		rule = "dest_qp_num over 24 bits";
	else if ((mask & QPIO_QP_RQ_PSN) && attr->rq_psn > 0xffffff)
		rule = "rq_psn over 24 bits";
	else if ((mask & QPIO_QP_SQ_PSN) && attr->sq_psn > 0xffffff)
		rule = "sq_psn over 24 bits";
	else if ((mask & QPIO_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		rule = "min_rnr_timer over 5 bits";
	else if ((mask & QPIO_QP_TIMEOUT) && attr->timeout > 31)
		rule = "timeout over 5 bits";
	else if ((mask & QPIO_QP_RETRY_CNT) && attr->retry_cnt > 7)
		rule = "retry_cnt over 3 bits";
	else if ((mask & QPIO_QP_RNR_RETRY) && attr->rnr_retry > 7)
		rule = "rnr_retry over 3 bits";
	else if ((mask & QPIO_QP_MAX_QP_RD_ATOMIC) &&
		 attr->max_rd_atomic > dev->attr.max_qp_rd_atom)
		rule = "max_rd_atomic over device max_qp_rd_atom";
	else if ((mask & QPIO_QP_MAX_DEST_RD_ATOMIC) &&
		 attr->max_dest_rd_atomic > dev->attr.max_qp_init_rd_atom)
		rule = "max_dest_rd_atomic over device max_qp_init_rd_atom";
	if (rule != NULL) {
		RDMA_LOG(ERR, "qp 0x%x: %s", qp->qp_num, rule);
		return -EINVAL;
	}
	if (mask & QPIO_QP_PKEY_INDEX) {
		/* Every qpio device has one port: the table of port 1. */
		struct qpio_port_attr pa;

		memset(&pa, 0, sizeof(pa));
		if (dev->ops->port_query(dev, 1, &pa) == 0 &&
		    pa.pkey_tbl_len != 0 && attr->pkey_index >= pa.pkey_tbl_len) {
			RDMA_LOG(ERR, "qp 0x%x: pkey_index %u not in [0, "
				 "pkey_tbl_len %u): the port's P_Key table "
				 "(qpio_rdma_pkey_query())", qp->qp_num,
				 attr->pkey_index, pa.pkey_tbl_len);
			return -EINVAL;
		}
	}
	if (mask & QPIO_QP_AV) {
		char who[32];

		snprintf(who, sizeof(who), "qp 0x%x", qp->qp_num);
		return rdma_av_check(dev, &attr->ah_attr, who);
	}
	return 0;
}

int
qpio_qp_modify(struct qpio_qp *qp, const struct qpio_qp_attr *attr,
	       int attr_mask)
{
	enum qpio_qp_state cur, next;
	const char *reason;
	int ret;

	if (qp == NULL || attr == NULL)
		return -EINVAL;
	RDMA_HANDLE_CHECK(qp, RDMA_HANDLE_QP, "qp");
	cur = qpio_qp_state(qp);
	next = (attr_mask & QPIO_QP_STATE) ? attr->qp_state : cur;
	if (!qpio_qp_transition_ok((enum qpio_qp_type)qp->qp_type, cur, next,
				   attr_mask, &reason)) {
		RDMA_LOG(ERR, "qp 0x%x: %s", qp->qp_num, reason);
		return -EINVAL;
	}
	ret = check_qp_attr_values(qp, attr, attr_mask, cur);
	if (ret < 0)
		return ret;
	if (qp->qp_num == QPIO_GSI_QPN && (attr_mask & QPIO_QP_QKEY) &&
	    attr->qkey != QPIO_GSI_QKEY) {
		RDMA_LOG(ERR, "qp 0x1: QP1's Q_Key is the GSI's 0x%08x, "
			 "0x%08x given: leave it out of the mask or give that",
			 QPIO_GSI_QKEY, attr->qkey);
		return -EINVAL;
	}
	return qp->dev->ops->qp_modify(qp, attr, attr_mask, cur, next);
}

int
qpio_qp_query(struct qpio_qp *qp, struct qpio_qp_attr *attr,
	      struct qpio_qp_init_attr *init_attr)
{
	if (qp == NULL || attr == NULL)
		return -EINVAL;
	RDMA_HANDLE_CHECK(qp, RDMA_HANDLE_QP, "qp");
	memset(attr, 0, sizeof(*attr));
	if (init_attr != NULL) {
		memset(init_attr, 0, sizeof(*init_attr));
		init_attr->qp_context = qp->qp_context;
		init_attr->send_cq = qp->send_cq;
		init_attr->recv_cq = qp->recv_cq;
		init_attr->srq = qp->srq;
		init_attr->qp_type = (enum qpio_qp_type)qp->qp_type;
		init_attr->sq_sig_all = qp->sq_sig_all;
		init_attr->xrcd = qp->xrcd;
	}
	return qp->dev->ops->qp_query(qp, attr, init_attr);
}
