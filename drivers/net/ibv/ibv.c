/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libibverbs driver: probe (devargs, device and port selection, limits),
 * port and GID queries, async events.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "ibv_private.h"
#include "qpio_ibv.h"

RTE_LOG_REGISTER(ibvd_logtype, qpio.net.ibv, NOTICE);

static const char *const ibvd_valid_keys[] = {
	"dev", "port", "gid_index", NULL,
};

/* The qpio object a verbs event names, found through the context each
 * verbs object was created with; NULL for port and device events. */
static void *
event_obj(const struct ibv_async_event *ev)
{
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		return ev->element.cq->cq_context;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return ev->element.qp->qp_context;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return ev->element.srq->srq_context;
	default:
		return NULL;
	}
}

void
ibvd_async_drain(struct ibvd_dev *idev)
{
	struct ibv_async_event ev;

	/* The async fd is non-blocking: this stops at EAGAIN. */
	while (ibv_get_async_event(idev->ctx, &ev) == 0) {
		void *obj = event_obj(&ev);
		uint8_t port = 0;

		switch (ev.event_type) {
		case IBV_EVENT_QP_FATAL:
		case IBV_EVENT_QP_REQ_ERR:
		case IBV_EVENT_QP_ACCESS_ERR:
			if (obj != NULL)
				__atomic_store_n(&((struct ibvd_qp *)obj)->base.state,
						 QPIO_QPS_ERR, __ATOMIC_RELEASE);
			IBVD_LOG(NOTICE, "%s: qp 0x%x: %s", idev->qdev->name,
				 ev.element.qp->qp_num,
				 ibv_event_type_str(ev.event_type));
			break;
		case IBV_EVENT_CQ_ERR:
			IBVD_LOG(ERR, "%s: cq: %s (overrun): its QPs are in ERR",
				 idev->qdev->name, ibv_event_type_str(ev.event_type));
			break;
		case IBV_EVENT_PORT_ACTIVE:
		case IBV_EVENT_PORT_ERR:
		case IBV_EVENT_LID_CHANGE:
		case IBV_EVENT_PKEY_CHANGE:
		case IBV_EVENT_SM_CHANGE:
		case IBV_EVENT_CLIENT_REREGISTER:
		case IBV_EVENT_GID_CHANGE:
			/* Only the port behind qpio port 1 is reported. */
			if (ev.element.port_num == idev->port)
				port = 1;
			IBVD_LOG(NOTICE, "%s: port %d: %s", idev->qdev->name,
				 ev.element.port_num,
				 ibv_event_type_str(ev.event_type));
			break;
		default:
			IBVD_LOG(INFO, "%s: %s", idev->qdev->name,
				 ibv_event_type_str(ev.event_type));
			break;
		}
		/* enum qpio_event_type has the values of enum ibv_event_type. */
		if (obj != NULL || port != 0 ||
		    ev.event_type == IBV_EVENT_DEVICE_FATAL)
			qpio_rdma_event_raise(idev->qdev,
					      (enum qpio_event_type)ev.event_type,
					      obj, port);
		ibv_ack_async_event(&ev);
	}
}

void
ibvd_async_poll(struct qpio_device *dev)
{
	ibvd_async_drain(to_idev(dev));
}

int
ibvd_async_event_fd(const struct qpio_device *dev)
{
	return to_idev(dev)->ctx->async_fd;
}

static int
ibvd_close(struct qpio_device *dev)
{
	struct ibvd_dev *idev = to_idev(dev);

	ibvd_async_drain(idev);
	if (ibv_close_device(idev->ctx) != 0)
		return errno != 0 ? -errno : -EIO;
	rte_free(idev);
	dev->priv = NULL;
	return 0;
}

static int
ibvd_port_query(const struct qpio_device *dev, uint8_t port,
		struct qpio_port_attr *attr)
{
	const struct ibvd_dev *idev = to_idev(dev);
	struct ibv_port_attr pa;
	int ret;

	RTE_SET_USED(port);
	ret = ibv_query_port(idev->ctx, idev->port, &pa);
	if (ret != 0)
		return -ret;
	attr->state = (enum qpio_port_state)pa.state;
	attr->max_mtu = (enum qpio_mtu)pa.max_mtu;
	attr->active_mtu = (enum qpio_mtu)pa.active_mtu;
	attr->link_layer = pa.link_layer == IBV_LINK_LAYER_ETHERNET ?
		QPIO_LINK_LAYER_ETHERNET : QPIO_LINK_LAYER_INFINIBAND;
	attr->gid_tbl_len = (uint32_t)pa.gid_tbl_len;
	attr->lid = pa.lid;
	attr->pkey_tbl_len = pa.pkey_tbl_len;
	return 0;
}

static int
ibvd_pkey_query(const struct qpio_device *dev, uint8_t port,
		unsigned int index, uint16_t *pkey)
{
	const struct ibvd_dev *idev = to_idev(dev);
	__be16 v;
	int ret;

	RTE_SET_USED(port);
	ret = ibv_query_pkey(idev->ctx, idev->port, (int)index, &v);
	if (ret != 0)
		return ret < 0 ? ret : -ret;
	*pkey = rte_be_to_cpu_16(v);
	return 0;
}

static int
ibvd_gid_query(const struct qpio_device *dev, uint8_t port, unsigned int index,
	       union qpio_gid *gid)
{
	const struct ibvd_dev *idev = to_idev(dev);
	union ibv_gid g;
	int ret;

	RTE_SET_USED(port);
	ret = ibv_query_gid(idev->ctx, idev->port, ibvd_gid_map(idev, index), &g);
	if (ret != 0)
		return ret > 0 ? -ret : (errno != 0 ? -errno : -EINVAL);
	memcpy(gid->raw, g.raw, sizeof(gid->raw));
	return 0;
}

static const struct qpio_dev_ops ibvd_ops = {
	.close = ibvd_close,
	.port_query = ibvd_port_query,
	.pkey_query = ibvd_pkey_query,
	.gid_query = ibvd_gid_query,
	.pd_alloc = ibvd_pd_alloc,
	.pd_free = ibvd_pd_free,
	.mr_reg = ibvd_mr_reg,
	.mr_dereg = ibvd_mr_dereg,
	.cq_create = ibvd_cq_create,
	.cq_resize = ibvd_cq_resize,
	.cq_destroy = ibvd_cq_destroy,
	.qp_create = ibvd_qp_create,
	.qp_destroy = ibvd_qp_destroy,
	.mcast_attach = ibvd_mcast_attach,
	.mcast_detach = ibvd_mcast_detach,
	.qp_modify = ibvd_qp_modify,
	.qp_query = ibvd_qp_query,
	.cq_req_notify = ibvd_cq_req_notify,
	.cq_event_fd = ibvd_cq_event_fd,
	.cq_ack_events = ibvd_cq_ack_events,
	.ah_create = ibvd_ah_create,
	.ah_destroy = ibvd_ah_destroy,
	.srq_create = ibvd_srq_create,
	.srq_modify = ibvd_srq_modify,
	.srq_query = ibvd_srq_query,
	.srq_destroy = ibvd_srq_destroy,
	.dev_query_ex = ibvd_dev_query_ex,
	.xrcd_open = ibvd_xrcd_open,
	.xrcd_close = ibvd_xrcd_close,
	.srq_create_xrc = ibvd_srq_create_xrc,
	.xrcd_has_qp = ibvd_xrcd_has_qp,
	.async_poll = ibvd_async_poll,
	.async_event_fd = ibvd_async_event_fd,
	.qp_stats_get = ibvd_qp_stats_get,
	.cq_stats_get = ibvd_cq_stats_get,
};

/* Can the device create an RC QP with max_inline_data bytes inline? */
static int
inline_fits(struct ibv_pd *pd, struct ibv_cq *cq, uint32_t max_inline)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 1;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = max_inline;
	qp = ibv_create_qp(pd, &ia);
	if (qp == NULL)
		return 0;
	ibv_destroy_qp(qp);
	return 1;
}

/* The largest max_inline_data an RC QP accepts: verbs has no device
 * attribute for it, so ask by creating QPs (binary search). */
static uint32_t
probe_max_inline(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = pd != NULL ? ibv_create_cq(ctx, 2, NULL, NULL, 0) : NULL;
	uint32_t lo = 0, hi = IBVD_PROBE_INLINE_MAX;

	if (cq == NULL) {
		if (pd != NULL)
			ibv_dealloc_pd(pd);
		return 0;
	}
	if (!inline_fits(pd, cq, 0))
		lo = 0;
	else if (inline_fits(pd, cq, hi))
		lo = hi;
	else
		while (hi - lo > 1) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (inline_fits(pd, cq, mid))
				lo = mid;
			else
				hi = mid;
		}
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	return lo;
}

static struct ibv_context *
open_device(const char *name, char *found, size_t found_len)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n = 0;

	list = ibv_get_device_list(&n);
	if (list == NULL || n == 0) {
		IBVD_LOG(ERR, "no RDMA device (ibv_get_device_list found none)");
		if (list != NULL)
			ibv_free_device_list(list);
		errno = ENODEV;
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (name == NULL || strcmp(ibv_get_device_name(list[i]), name) == 0)
			break;
	if (i == n) {
		IBVD_LOG(ERR, "no RDMA device named %s", name);
		errno = ENODEV;
	} else {
		ctx = ibv_open_device(list[i]);
		if (ctx == NULL)
			IBVD_LOG(ERR, "ibv_open_device(%s): %s",
				 ibv_get_device_name(list[i]), strerror(errno));
		else
			snprintf(found, found_len, "%s",
				 ibv_get_device_name(list[i]));
	}
	ibv_free_device_list(list);
	return ctx;
}

static void
fill_attr(struct qpio_device_attr *a, const struct ibv_device_attr *d,
	  uint32_t max_inline)
{
	memset(a, 0, sizeof(*a));
	a->node_guid = rte_be_to_cpu_64(d->node_guid);
	a->max_mr_size = d->max_mr_size;
	a->max_qp = (uint32_t)d->max_qp;
	/* Queues are rounded up to powers of two: the largest allowed
	 * request must fit once rounded. */
	a->max_qp_wr = rte_align32prevpow2((uint32_t)d->max_qp_wr);
	a->max_sge = (uint32_t)d->max_sge;
	a->max_cq = (uint32_t)d->max_cq;
	a->max_cqe = rte_align32prevpow2((uint32_t)d->max_cqe);
	a->max_mr = (uint32_t)d->max_mr;
	a->max_pd = (uint32_t)d->max_pd;
	a->max_inline_data = max_inline;
	a->max_qp_rd_atom = (uint32_t)d->max_qp_rd_atom;
	a->max_qp_init_rd_atom = (uint32_t)d->max_qp_init_rd_atom;
	a->max_srq = (uint32_t)d->max_srq;
	a->max_srq_wr = (uint32_t)d->max_srq_wr;
	a->max_srq_sge = (uint32_t)d->max_srq_sge;
	a->max_ah = (uint32_t)d->max_ah;
	a->atomic_cap = (enum qpio_atomic_cap)d->atomic_cap;
	a->phys_port_cnt = 1;
}

static int
ibvd_probe(struct qpio_device *dev, const struct rte_kvargs *kv)
{
	const char *name = kv != NULL ? rte_kvargs_get(kv, "dev") : NULL;
	uint32_t port = 1, gid_index = 0;
	struct ibv_port_attr pa;
	struct ibvd_dev *idev;
	union ibv_gid gid;
	int ret = 0, flags;

	if (kv != NULL && name == NULL && rte_kvargs_count(kv, "dev") != 0) {
		IBVD_LOG(ERR, "%s: dev needs a value (dev=<ibdev name>)", dev->name);
		return -EINVAL;
	}
	ret |= qpio_rdma_kvargs_u32(kv, "port", 1, 255, &port);
	ret |= qpio_rdma_kvargs_u32(kv, "gid_index", 0, 255, &gid_index);
	if (ret != 0)
		return -EINVAL;
	idev = rte_zmalloc("ibvd_dev", sizeof(*idev), RTE_CACHE_LINE_SIZE);
	if (idev == NULL)
		return -ENOMEM;
	idev->ctx = open_device(name, idev->ibdev, sizeof(idev->ibdev));
	if (idev->ctx == NULL) {
		ret = -errno;
		goto fail;
	}
	if (ibv_query_device(idev->ctx, &idev->dattr) != 0) {
		ret = errno != 0 ? -errno : -EIO;
		IBVD_LOG(ERR, "%s: ibv_query_device(%s): %s", dev->name,
			 idev->ibdev, strerror(-ret));
		goto fail_close;
	}
	if (port > idev->dattr.phys_port_cnt) {
		IBVD_LOG(ERR, "%s: port=%u but %s has %u port(s)", dev->name,
			 port, idev->ibdev, idev->dattr.phys_port_cnt);
		ret = -EINVAL;
		goto fail_close;
	}
	ret = ibv_query_port(idev->ctx, (uint8_t)port, &pa);
	if (ret != 0) {
		ret = -ret;
		goto fail_close;
	}
	if (gid_index >= (uint32_t)pa.gid_tbl_len ||
	    ibv_query_gid(idev->ctx, (uint8_t)port, (int)gid_index, &gid) != 0) {
		IBVD_LOG(ERR, "%s: gid_index=%u not readable on %s port %u "
			 "(table of %d)", dev->name, gid_index, idev->ibdev,
			 port, pa.gid_tbl_len);
		ret = -EINVAL;
		goto fail_close;
	}
	/* Async events are read from the control path without blocking. */
	flags = fcntl(idev->ctx->async_fd, F_GETFL);
	if (flags < 0 ||
	    fcntl(idev->ctx->async_fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		ret = -errno;
		goto fail_close;
	}
	idev->qdev = dev;
	idev->port = (uint8_t)port;
	idev->gid_index = (uint8_t)gid_index;
	idev->roce = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
	idev->next_pdn = 1;
	fill_attr(&dev->attr, &idev->dattr, probe_max_inline(idev->ctx));
	dev->attr.num_comp_vectors =
		(uint32_t)RTE_MAX(idev->ctx->num_comp_vectors, 1);
	dev->ops = &ibvd_ops;
	dev->priv = idev;
	IBVD_LOG(INFO, "%s: %s port %u (%s), gid_index %u, max_inline_data %u",
		 dev->name, idev->ibdev, port, idev->roce ? "RoCE" : "InfiniBand",
		 gid_index, dev->attr.max_inline_data);
	return 0;
fail_close:
	ibv_close_device(idev->ctx);
fail:
	rte_free(idev);
	return ret < 0 ? ret : -ENODEV;
}

int
qpio_ibv_dev_info(const struct qpio_device *dev, struct qpio_ibv_dev_info *info)
{
	const struct ibvd_dev *idev;

	if (dev == NULL || info == NULL || dev->ops != &ibvd_ops)
		return -EINVAL;
	idev = to_idev(dev);
	memset(info, 0, sizeof(*info));
	snprintf(info->ibdev, sizeof(info->ibdev), "%s", idev->ibdev);
	info->port = idev->port;
	info->gid_index = idev->gid_index;
	info->roce = idev->roce;
	info->vendor_id = idev->dattr.vendor_id;
	info->vendor_part_id = idev->dattr.vendor_part_id;
	return 0;
}

static struct qpio_rdma_driver ibvd_driver = {
	.name = "ibv",
	.valid_keys = ibvd_valid_keys,
	.probe = ibvd_probe,
};

QPIO_RDMA_DRIVER_REGISTER(ibvd_driver);
