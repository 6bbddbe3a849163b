/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libibverbs driver: XRC, where the device reports IBV_DEVICE_XRC.
 * Domains are ibv_open_xrcd(3) domains, XRC SRQs ibv_create_srq_ex(3)
 * ones (IBV_SRQT_XRC, with their CQ), XRC QPs ibv_create_qp_ex(3) ones
 * (IBV_QPT_XRC_SEND with a PD and a send CQ, IBV_QPT_XRC_RECV with the
 * domain). A receive of an XRC SRQ completes on the SRQ's CQ naming the
 * target QP, which no CQ lists: its wr_id names the SRQ instead (its
 * index in the CQ's table, IBVD_WRID_XRC).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "ibv_private.h"
#include "rdma_wr.h"

static inline struct ibvd_xrcd *
to_ixrcd(const struct qpio_xrcd *x)
{
	return (struct ibvd_xrcd *)(uintptr_t)x;
}

int
ibvd_dev_query_ex(const struct qpio_device *dev,
		  struct qpio_device_attr_ex *attr)
{
	const struct ibvd_dev *idev = to_idev(dev);

	attr->max_xrcd = (idev->dattr.device_cap_flags & IBV_DEVICE_XRC) ?
		IBVD_MAX_XRCD : 0;
	return 0;
}

static uint32_t next_xrcdn = 1;
/* The open handles of this process, so that handles of one file read one
 * domain number (qpio_xrcd_num()). Control path: device calls are not
 * thread-safe against each other. */
static struct ibvd_xrcd *xrcd_open_list[IBVD_MAX_XRCD * QPIO_MAX_DEVICES];

static uint32_t
xrcd_number(struct ibvd_xrcd *x)
{
	uint32_t i, n = 0;

	for (i = 0; i < RTE_DIM(xrcd_open_list); i++) {
		struct ibvd_xrcd *o = xrcd_open_list[i];

		if (o != NULL && x->st_ino != 0 && o->st_ino == x->st_ino &&
		    o->st_dev == x->st_dev)
			n = o->base.xrcdn;
	}
	for (i = 0; i < RTE_DIM(xrcd_open_list); i++)
		if (xrcd_open_list[i] == NULL) {
			xrcd_open_list[i] = x;
			break;
		}
	return n != 0 ? n : __atomic_fetch_add(&next_xrcdn, 1, __ATOMIC_RELAXED);
}

struct qpio_xrcd *
ibvd_xrcd_open(struct qpio_device *dev, int fd, int oflags)
{
	struct ibvd_dev *idev = to_idev(dev);
	struct ibv_xrcd_init_attr init;
	struct ibvd_xrcd *x;
	struct stat st;

	memset(&st, 0, sizeof(st));
	if (fd != -1 && fstat(fd, &st) != 0) {
		IBVD_LOG(ERR, "%s: xrcd: fd %d: %s", dev->name, fd,
			 strerror(errno));
		rte_errno = EBADF;
		return NULL;
	}
	x = rte_zmalloc("ibvd_xrcd", sizeof(*x), 0);
	if (x == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	memset(&init, 0, sizeof(init));
	init.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	init.fd = fd;
	init.oflags = oflags;
	x->xrcd = ibv_open_xrcd(idev->ctx, &init);
	if (x->xrcd == NULL) {
		rte_errno = errno != 0 ? errno : ENOMEM;
		IBVD_LOG(ERR, "%s: ibv_open_xrcd(fd %d, oflags 0x%x): %s",
			 dev->name, fd, (unsigned int)oflags,
			 strerror(rte_errno));
		rte_free(x);
		return NULL;
	}
	x->st_dev = fd != -1 ? (uint64_t)st.st_dev : 0;
	x->st_ino = fd != -1 ? (uint64_t)st.st_ino : 0;
	x->base.xrcdn = xrcd_number(x);
	return &x->base;
}

int
ibvd_xrcd_close(struct qpio_xrcd *qx)
{
	struct ibvd_xrcd *x = to_ixrcd(qx);
	int ret = ibv_close_xrcd(x->xrcd);
	uint32_t i;

	if (ret != 0) {
		IBVD_LOG(ERR, "xrcd %u: ibv_close_xrcd: %s", qx->xrcdn,
			 strerror(ret));
		return -ret;
	}
	for (i = 0; i < RTE_DIM(xrcd_open_list); i++)
		if (xrcd_open_list[i] == x)
			xrcd_open_list[i] = NULL;
	rte_free(x);
	return 0;
}

int
ibvd_xrcd_has_qp(const struct qpio_xrcd *qx, const struct qpio_qp *qqp)
{
	const struct ibvd_xrcd *a = to_ixrcd(qx);
	const struct ibvd_xrcd *b = ((const struct ibvd_qp *)qqp)->xrcd;

	if (a == b)
		return 1;
	/* Two handles of one file are one domain (the kernel's table). */
	return b != NULL && a->st_ino != 0 && a->st_ino == b->st_ino &&
		a->st_dev == b->st_dev;
}

struct qpio_srq *
ibvd_srq_create_xrc(struct qpio_pd *pd, struct qpio_xrcd *qx,
		    struct qpio_cq *qcq, struct qpio_srq_attr *attr)
{
	struct ibvd_cq *cq = to_icq(qcq);
	struct ibv_srq_init_attr_ex init;
	struct ibvd_srq *srq;
	uint32_t idx, num = 0;

	for (idx = 0; idx < IBVD_CQ_XRC_SRQS; idx++)
		if (cq->xrc_srqs[idx] == NULL)
			break;
	if (idx == IBVD_CQ_XRC_SRQS) {
		IBVD_LOG(ERR, "cq %u: %u XRC SRQs complete into it already",
			 qcq->cqn, IBVD_CQ_XRC_SRQS);
		rte_errno = ENOSPC;
		return NULL;
	}
	srq = ibvd_srq_bufs_alloc(attr->max_wr, attr->max_sge);
	if (srq == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	memset(&init, 0, sizeof(init));
	init.srq_context = srq;
	init.attr.max_wr = srq->max_wr;
	init.attr.max_sge = srq->max_sge;
	init.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
		IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	init.srq_type = IBV_SRQT_XRC;
	init.pd = to_ipd(pd)->pd;
	init.xrcd = to_ixrcd(qx)->xrcd;
	init.cq = cq->cq;
	srq->srq = ibv_create_srq_ex(to_idev(pd->dev)->ctx, &init);
	if (srq->srq == NULL) {
		rte_errno = errno != 0 ? errno : ENOMEM;
		IBVD_LOG(ERR, "pd %u: ibv_create_srq_ex(XRC, %u, %u): %s",
			 pd->pdn, srq->max_wr, srq->max_sge, strerror(rte_errno));
		goto fail;
	}
	if (ibv_get_srq_num(srq->srq, &num) != 0) {
		rte_errno = errno != 0 ? errno : EINVAL;
		IBVD_LOG(ERR, "pd %u: ibv_get_srq_num: %s", pd->pdn,
			 strerror(rte_errno));
		ibv_destroy_srq(srq->srq);
		goto fail;
	}
	srq->pd = to_ipd(pd);
	srq->xrc_cq = cq;
	srq->xrc_index = idx;
	srq->wrid_base = IBVD_WRID_RECV | IBVD_WRID_XRC |
		((uint64_t)idx << IBVD_WRID_GEN_SHIFT);
	cq->xrc_srqs[idx] = srq;
	srq->base.post_recv = ibvd_srq_post_recv;
	/* The number initiators name: the device's own. */
	srq->base.srq_num = num;
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	return &srq->base;
fail:
	ibvd_srq_bufs_free(srq);
	return NULL;
}

void
ibvd_srq_xrc_unlink(struct ibvd_srq *srq)
{
	srq->xrc_cq->xrc_srqs[srq->xrc_index] = NULL;
	srq->xrc_cq = NULL;
}

int
ibvd_xrc_wc(struct ibvd_cq *cq, const struct ibv_wc *in, struct qpio_wc *o)
{
	uint64_t id = in->wr_id;
	struct ibvd_srq *srq =
		cq->xrc_srqs[(id >> IBVD_WRID_GEN_SHIFT) & (IBVD_CQ_XRC_SRQS - 1)];

	if (srq == NULL)
		return 0;
	if ((const void *)o != (const void *)in)
		memcpy(o, in, sizeof(*o));
	o->wr_id = ibvd_srq_complete(srq, (uint32_t)id);
	o->wc_flags &= QPIO_WC_WITH_IMM;
	if (o->status != QPIO_WC_SUCCESS) {
		o->opcode = QPIO_WC_RECV;
		o->byte_len = 0;
		o->imm_data = 0;
		o->wc_flags = 0;
	} else if (o->wc_flags & QPIO_WC_WITH_IMM) {
		o->imm_data = rte_be_to_cpu_32(o->imm_data);
	}
	return 1;
}

/* An XRC QP's queues that do not exist refuse every WR. */
uint16_t
ibvd_post_none(struct qpio_qp *qp, const struct qpio_send_wr *wrs __rte_unused,
	       uint16_t n, int *err)
{
	if (n != 0)
		IBVD_LOG(DEBUG, "qp 0x%x: post send to an XRC_RECV QP (no send "
			 "queue)", qp->qp_num);
	if (err != NULL)
		*err = n != 0 ? -EINVAL : 0;
	return 0;
}

uint16_t
ibvd_post_recv_none(struct qpio_qp *qp, const struct qpio_recv_wr *wrs __rte_unused,
		    uint16_t n, int *err)
{
	if (n != 0)
		IBVD_LOG(DEBUG, "qp 0x%x: post recv to an XRC QP (receives go to "
			 "XRC SRQs)", qp->qp_num);
	if (err != NULL)
		*err = n != 0 ? -EINVAL : 0;
	return 0;
}

struct qpio_qp *
ibvd_qp_create_xrc(struct qpio_pd *pd, struct qpio_qp_init_attr *ia)
{
	struct qpio_device *dev = pd != NULL ? pd->dev : ia->xrcd->dev;
	struct ibvd_dev *idev = to_idev(dev);
	struct qpio_qp_cap *cap = &ia->cap;
	struct ibv_qp_init_attr_ex init;
	struct ibvd_qp *qp;
	int send = ia->qp_type == QPIO_QPT_XRC_SEND;

	qp = rte_zmalloc("ibvd_qp", sizeof(*qp), RTE_CACHE_LINE_SIZE);
	if (qp == NULL)
		goto nomem;
	/* One-entry rings on the side a type lacks: never used. */
	qp->sq.depth = send ? rte_align32pow2(RTE_MAX(cap->max_send_wr, 1u)) : 1;
	qp->sq.mask = qp->sq.depth - 1;
	qp->sq.max_sge = send ? RTE_MAX(cap->max_send_sge, 1u) : 0;
	qp->sq.max_inline = send ? cap->max_inline_data : 0;
	qp->rq.depth = 1;
	qp->sq.wrs = rte_zmalloc("ibvd_sq_wrs", sizeof(*qp->sq.wrs) * qp->sq.depth,
				 RTE_CACHE_LINE_SIZE);
	qp->sq.wrid = rte_zmalloc("ibvd_sq_wrid", sizeof(uint64_t) * qp->sq.depth,
				  RTE_CACHE_LINE_SIZE);
	qp->sq.opcode = rte_zmalloc("ibvd_sq_op", qp->sq.depth,
				    RTE_CACHE_LINE_SIZE);
	if (qp->sq.wrs == NULL || qp->sq.wrid == NULL || qp->sq.opcode == NULL)
		goto nomem;
	memset(&init, 0, sizeof(init));
	init.qp_context = qp;
	init.qp_type = (enum ibv_qp_type)ia->qp_type;
	if (send) {
		init.send_cq = to_icq(ia->send_cq)->cq;
		init.recv_cq = init.send_cq;   /* unused; some providers read it */
		init.sq_sig_all = ia->sq_sig_all != 0;
		init.cap.max_send_wr = qp->sq.depth;
		init.cap.max_send_sge = qp->sq.max_sge;
		init.cap.max_inline_data = qp->sq.max_inline;
		init.comp_mask = IBV_QP_INIT_ATTR_PD;
		init.pd = to_ipd(pd)->pd;
	} else {
		init.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		init.xrcd = to_ixrcd(ia->xrcd)->xrcd;
		qp->xrcd = to_ixrcd(ia->xrcd);
	}
	qp->qp = ibv_create_qp_ex(idev->ctx, &init);
	if (qp->qp == NULL) {
		rte_errno = errno != 0 ? errno : ENOMEM;
		IBVD_LOG(ERR, "%s: ibv_create_qp_ex(%s): %s", dev->name,
			 send ? "XRC_SEND" : "XRC_RECV", strerror(rte_errno));
		ibvd_qp_free(qp);
		return NULL;
	}
	if (send && ibvd_cq_attach(to_icq(ia->send_cq), qp) != 0) {
		ibv_destroy_qp(qp->qp);
		goto nomem;
	}
	memset(cap, 0, sizeof(*cap));
	if (send) {
		cap->max_send_wr = qp->sq.depth;
		cap->max_send_sge = qp->sq.max_sge;
		cap->max_inline_data = qp->sq.max_inline;
	}
	qp->cap = *cap;
	qp->idev = idev;
	qp->base.qp_num = qp->qp->qp_num;
	qp->base.post_send = send ? ibvd_post_send : ibvd_post_none;
	qp->base.post_send_sge = qpio_rdma_post_send_sge_refuse;
	qp->base.post_recv = ibvd_post_recv_none;
	qp->base.post_recv_sge = qpio_rdma_post_recv_sge_refuse;
	qp->base.state = QPIO_QPS_RESET;
	return &qp->base;
nomem:
	rte_errno = ENOMEM;
	if (qp != NULL)
		ibvd_qp_free(qp);
	return NULL;
}
