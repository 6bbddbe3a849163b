/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XRC (eXtended Reliable Connection) objects: domain handles, XRC SRQs and
 * the registrations that keep an XRC target QP alive. The rules of
 * ibv_open_xrcd(3), ibv_create_srq_ex(3) and ibv_open_qp(3), checked here
 * once, then the driver op.
 */
#include <fcntl.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "rdma_driver.h"
#include "rdma_private.h"

#define RET_NULL(err) do { rte_errno = (err); return NULL; } while (0)

/* Whether the driver of dev offers XRC (every op of the set). */
static int
dev_has_xrc(const struct qpio_device *dev)
{
	const struct qpio_dev_ops *o = dev->ops;

	return o->xrcd_open != NULL && o->xrcd_close != NULL &&
		o->srq_create_xrc != NULL && o->xrcd_has_qp != NULL;
}

struct qpio_xrcd *
qpio_xrcd_open(struct qpio_device *dev, int fd, int oflags)
{
	struct qpio_device_attr_ex ax;
	struct qpio_xrcd *xrcd;

	if (dev == NULL)
		RET_NULL(EINVAL);
	if (qpio_rdma_dev_query_ex(dev, &ax) != 0 || ax.max_xrcd == 0 ||
	    !dev_has_xrc(dev)) {
		RDMA_LOG(ERR, "xrcd on %s: the device has no XRC (max_xrcd 0)",
			 dev->name);
		RET_NULL(EOPNOTSUPP);
	}
	if (fd != -1 && (oflags & ~(O_CREAT | O_EXCL))) {
		RDMA_LOG(ERR, "xrcd on %s: oflags 0x%x: only O_CREAT and O_EXCL "
			 "are defined (ibv_open_xrcd)", dev->name,
			 (unsigned int)oflags);
		RET_NULL(EINVAL);
	}
	if (fd < -1) {
		RDMA_LOG(ERR, "xrcd on %s: fd %d is neither -1 nor a file "
			 "descriptor", dev->name, fd);
		RET_NULL(EBADF);
	}
	if (dev->nb_xrcd >= ax.max_xrcd) {
		RDMA_LOG(ERR, "device %s: max_xrcd (%u) handles open", dev->name,
			 ax.max_xrcd);
		RET_NULL(ENOSPC);
	}
	xrcd = dev->ops->xrcd_open(dev, fd, fd == -1 ? 0 : oflags);
	if (xrcd == NULL)
		return NULL;
	xrcd->dev = dev;
	xrcd->refcnt = 0;
	if (rdma_handle_add(xrcd, RDMA_HANDLE_XRCD) < 0) {
		(void)dev->ops->xrcd_close(xrcd);
		RDMA_LOG(ERR, "no memory to track a new handle");
		RET_NULL(ENOMEM);
	}
	dev->nb_xrcd++;
	return xrcd;
}

int
qpio_xrcd_close(struct qpio_xrcd *xrcd)
{
	struct qpio_device *dev;
	int ret;

	if (xrcd == NULL)
		return -EINVAL;
	RDMA_HANDLE_CHECK(xrcd, RDMA_HANDLE_XRCD, "xrcd");
	dev = xrcd->dev;
	if (xrcd->refcnt != 0) {
		RDMA_LOG(ERR, "xrcd %u of %s: close refused, %u XRC SRQs and "
			 "target QP registrations still use it (ibv_close_xrcd: "
			 "destroy them first)", xrcd->xrcdn, dev->name,
			 xrcd->refcnt);
		return -EBUSY;
	}
	ret = dev->ops->xrcd_close(xrcd);
	if (ret < 0)
		return ret;
	rdma_handle_del(xrcd);
	dev->nb_xrcd--;
	return 0;
}

uint32_t
qpio_xrcd_num(const struct qpio_xrcd *xrcd)
{
	return xrcd != NULL ? xrcd->xrcdn : 0;
}

struct qpio_srq *
qpio_srq_create_ex(struct qpio_device *dev, struct qpio_srq_init_attr_ex *a)
{
	struct qpio_srq *srq;
	struct qpio_pd *pd;

	if (dev == NULL || a == NULL)
		RET_NULL(EINVAL);
	pd = a->pd;
	if (!rdma_handle_live(pd, RDMA_HANDLE_PD) || pd->dev != dev) {
		RDMA_LOG(ERR, "srq on %s: pd %p is not a live PD of the device",
			 dev->name, (void *)pd);
		RET_NULL(EINVAL);
	}
	if (a->srq_type == QPIO_SRQT_BASIC) {
		srq = qpio_srq_create(pd, &a->attr);
		return srq;
	}
	if (a->srq_type != QPIO_SRQT_XRC) {
		RDMA_LOG(ERR, "srq on %s: unknown srq_type %d", dev->name,
			 (int)a->srq_type);
		RET_NULL(EINVAL);
	}
	if (a->xrcd == NULL || a->cq == NULL) {
		RDMA_LOG(ERR, "srq on %s: an XRC SRQ needs an xrcd and a cq "
			 "(ibv_create_srq_ex)", dev->name);
		RET_NULL(EINVAL);
	}
	if (!rdma_handle_live(a->xrcd, RDMA_HANDLE_XRCD) ||
	    !rdma_handle_live(a->cq, RDMA_HANDLE_CQ) ||
	    a->xrcd->dev != dev || a->cq->dev != dev) {
		RDMA_LOG(ERR, "srq on %s: xrcd and cq must be live objects of "
			 "the device", dev->name);
		RET_NULL(EINVAL);
	}
	if (!dev_has_xrc(dev)) {
		RDMA_LOG(ERR, "srq on %s: driver %s has no XRC", dev->name,
			 dev->drv->name);
		RET_NULL(EOPNOTSUPP);
	}
	if (dev->attr.max_srq == 0) {
		RDMA_LOG(ERR, "srq on %s: the device has no SRQs (max_srq 0)",
			 dev->name);
		RET_NULL(EOPNOTSUPP);
	}
	if (a->attr.max_wr == 0 || a->attr.max_wr > dev->attr.max_srq_wr) {
		RDMA_LOG(ERR, "srq on %s: max_wr %u not in [1, max_srq_wr %u]",
			 dev->name, a->attr.max_wr, dev->attr.max_srq_wr);
		RET_NULL(EINVAL);
	}
	if (a->attr.max_sge > dev->attr.max_srq_sge) {
		RDMA_LOG(ERR, "srq on %s: max_sge %u over max_srq_sge %u",
			 dev->name, a->attr.max_sge, dev->attr.max_srq_sge);
		RET_NULL(EINVAL);
	}
	if (dev->nb_srq >= dev->attr.max_srq) {
		RDMA_LOG(ERR, "device %s: max_srq (%u) reached", dev->name,
			 dev->attr.max_srq);
		RET_NULL(ENOSPC);
	}
	srq = dev->ops->srq_create_xrc(pd, a->xrcd, a->cq, &a->attr);
	if (srq == NULL)
		return NULL;
	a->attr.srq_limit = 0;
	srq->dev = dev;
	srq->pd = pd;
	srq->refcnt = 0;
	srq->xrcd = a->xrcd;
	srq->cq = a->cq;
	srq->srq_type = QPIO_SRQT_XRC;
	if (rdma_handle_add(srq, RDMA_HANDLE_SRQ) < 0) {
		(void)dev->ops->srq_destroy(srq);
		RDMA_LOG(ERR, "no memory to track a new handle");
		RET_NULL(ENOMEM);
	}
	pd->refcnt++;
	a->xrcd->refcnt++;
	a->cq->refcnt++;
	dev->nb_srq++;
	return srq;
}

int
rdma_xrc_reg_push(struct qpio_qp *qp, struct qpio_xrcd *xrcd)
{
	if (qp->nb_xrc_regs == qp->xrc_regs_cap) {
		uint32_t cap = qp->xrc_regs_cap != 0 ? qp->xrc_regs_cap * 2 : 4;
		struct qpio_xrcd **r = rte_realloc(qp->xrc_regs,
						   sizeof(*r) * cap, 0);

		if (r == NULL)
			return -ENOMEM;
		qp->xrc_regs = r;
		qp->xrc_regs_cap = cap;
	}
	qp->xrc_regs[qp->nb_xrc_regs++] = xrcd;
	xrcd->refcnt++;
	return 0;
}

int
rdma_xrc_reg_pop(struct qpio_qp *qp)
{
	struct qpio_xrcd *xrcd = qp->xrc_regs[--qp->nb_xrc_regs];

	xrcd->refcnt--;
	if (qp->nb_xrc_regs != 0) {
		RDMA_LOG(DEBUG, "qp 0x%x: registration of xrcd %u dropped, %u "
			 "left: the target QP stays", qp->qp_num, xrcd->xrcdn,
			 qp->nb_xrc_regs);
		return 1;
	}
	rte_free(qp->xrc_regs);
	qp->xrc_regs = NULL;
	qp->xrc_regs_cap = 0;
	return 0;
}

struct qpio_qp *
qpio_qp_open(struct qpio_xrcd *xrcd, uint32_t qp_num)
{
	struct qpio_device *dev;
	struct qpio_qp *qp = NULL;
	uint32_t i;

	if (xrcd == NULL || !rdma_handle_live(xrcd, RDMA_HANDLE_XRCD))
		RET_NULL(EINVAL);
	dev = xrcd->dev;
	rte_spinlock_lock(&dev->tel_lock);
	for (i = 0; i < dev->qps.n; i++) {
		struct qpio_qp *q = dev->qps.obj[i];

		if (q->qp_num == qp_num) {
			qp = q;
			break;
		}
	}
	rte_spinlock_unlock(&dev->tel_lock);
	if (qp == NULL || qp->qp_type != QPIO_QPT_XRC_RECV) {
		RDMA_LOG(ERR, "xrcd %u of %s: no XRC target QP 0x%x on the device "
			 "in this process (ibv_open_qp)", xrcd->xrcdn, dev->name,
			 qp_num);
		RET_NULL(EINVAL);
	}
	if (!dev->ops->xrcd_has_qp(xrcd, qp)) {
		RDMA_LOG(ERR, "xrcd %u of %s: target QP 0x%x is of another XRC "
			 "domain", xrcd->xrcdn, dev->name, qp_num);
		RET_NULL(EINVAL);
	}
	if (rdma_xrc_reg_push(qp, xrcd) < 0)
		RET_NULL(ENOMEM);
	return qp;
}
