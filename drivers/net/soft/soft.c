/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC: probe, devargs, the fabric, port and GID queries.
 */
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memzone.h>

#include "soft_private.h"

RTE_LOG_REGISTER(soft_logtype, qpio.net.soft, NOTICE);

#define SOFT_FABRIC_MZ "qpio_soft_fabric"

static struct soft_fabric *fabric;

struct soft_fabric *
soft_fabric_get(void)
{
	const struct rte_memzone *mz;

	if (fabric != NULL)
		return fabric;
	mz = rte_memzone_lookup(SOFT_FABRIC_MZ);
	if (mz == NULL) {
		mz = rte_memzone_reserve(SOFT_FABRIC_MZ, sizeof(*fabric),
					 SOCKET_ID_ANY, 0);
		if (mz == NULL)
			return NULL;
		memset(mz->addr, 0, sizeof(*fabric));
		((struct soft_fabric *)mz->addr)->next_pdn = 1;
		rte_spinlock_init(&((struct soft_fabric *)mz->addr)->lock);
	}
	fabric = mz->addr;
	return fabric;
}

struct soft_dev *
soft_fabric_dev_by_lid(uint16_t lid)
{
	struct soft_fabric *f = fabric;

	if (f == NULL || lid == 0 || lid > QPIO_MAX_DEVICES)
		return NULL;
	return f->devs[lid - 1];
}

void
soft_dev_gid(const struct soft_dev *sdev, union qpio_gid *gid)
{
	gid->global.subnet_prefix = rte_cpu_to_be_64(0xfe80000000000000ull);
	gid->global.interface_id = rte_cpu_to_be_64(sdev->guid);
}

struct soft_dev *
soft_fabric_dev_by_gid(const union qpio_gid *gid)
{
	struct soft_fabric *f = fabric;
	unsigned int i;

	if (f == NULL)
		return NULL;
	for (i = 0; i < QPIO_MAX_DEVICES; i++) {
		struct soft_dev *d = f->devs[i];

		if (d != NULL &&
		    gid->global.interface_id == rte_cpu_to_be_64(d->guid))
			return d;
	}
	return NULL;
}

static const char *const soft_valid_keys[] = {
	"max_qp", "max_qp_wr", "max_sge", "max_cqe", "max_mr", "max_inline",
	"max_ah", "max_srq", NULL,
};

static int
soft_close(struct qpio_device *dev)
{
	struct soft_dev *sdev = to_sdev(dev);
	struct soft_fabric *f = soft_fabric_get();

	rte_spinlock_lock(&f->lock);
	f->devs[sdev->fabric_slot] = NULL;
	rte_spinlock_unlock(&f->lock);
	rte_free(sdev->qp_tbl);
	rte_free(sdev->mr_tbl);
	rte_free(sdev);
	dev->priv = NULL;
	return 0;
}

static int
soft_port_query(const struct qpio_device *dev, uint8_t port,
		struct qpio_port_attr *attr)
{
	RTE_SET_USED(port);
	attr->state = QPIO_PORT_ACTIVE;
	attr->max_mtu = QPIO_MTU_4096;
	attr->active_mtu = QPIO_MTU_4096;
	attr->link_layer = QPIO_LINK_LAYER_INFINIBAND;
	attr->gid_tbl_len = SOFT_GID_TBL_LEN;
	attr->lid = to_sdev(dev)->lid;
	return 0;
}

/* GID 0 is the link-local GID fe80::<node guid> (IBA 4.1.1). */
static int
soft_gid_query(const struct qpio_device *dev, uint8_t port, unsigned int index,
	       union qpio_gid *gid)
{
	RTE_SET_USED(port);
	RTE_SET_USED(index);
	soft_dev_gid(to_sdev(dev), gid);
	return 0;
}

static const struct qpio_dev_ops soft_ops = {
	.close = soft_close,
	.port_query = soft_port_query,
	.gid_query = soft_gid_query,
	.pd_alloc = soft_pd_alloc,
	.pd_free = soft_pd_free,
	.mr_reg = soft_mr_reg,
	.mr_dereg = soft_mr_dereg,
	.cq_create = soft_cq_create,
	.cq_destroy = soft_cq_destroy,
	.cq_req_notify = soft_cq_req_notify,
	.cq_event_fd = soft_cq_event_fd,
	.qp_create = soft_qp_create,
	.qp_destroy = soft_qp_destroy,
	.qp_modify = soft_qp_modify,
	.qp_query = soft_qp_query,
	.ah_create = soft_ah_create,
	.ah_destroy = soft_ah_destroy,
	.srq_create = soft_srq_create,
	.srq_modify = soft_srq_modify,
	.srq_query = soft_srq_query,
	.srq_destroy = soft_srq_destroy,
};

static int
soft_probe(struct qpio_device *dev, const struct rte_kvargs *kv)
{
	struct qpio_device_attr *a = &dev->attr;
	struct soft_fabric *f;
	struct soft_dev *sdev;
	uint32_t max_qp = 256, max_qp_wr = 4096, max_sge = SOFT_MAX_SGE;
	uint32_t max_cqe = 65536, max_mr = 1024, max_inline = 256;
	uint32_t max_ah = 1024, max_srq = SOFT_DEF_SRQ;
	unsigned int slot;
	int ret = 0;

	ret |= qpio_rdma_kvargs_u32(kv, "max_qp", 1, QPIO_MAX_QP_PER_DEVICE, &max_qp);
	ret |= qpio_rdma_kvargs_u32(kv, "max_qp_wr", 1, SOFT_MAX_QP_WR, &max_qp_wr);
	ret |= qpio_rdma_kvargs_u32(kv, "max_sge", 1, SOFT_MAX_SGE, &max_sge);
	ret |= qpio_rdma_kvargs_u32(kv, "max_cqe", 1, SOFT_MAX_CQE, &max_cqe);
	ret |= qpio_rdma_kvargs_u32(kv, "max_mr", 1, SOFT_MAX_MR - 1, &max_mr);
	ret |= qpio_rdma_kvargs_u32(kv, "max_inline", 0, SOFT_MAX_INLINE, &max_inline);
	ret |= qpio_rdma_kvargs_u32(kv, "max_ah", 0, SOFT_MAX_AH, &max_ah);
	ret |= qpio_rdma_kvargs_u32(kv, "max_srq", 0, SOFT_MAX_SRQ, &max_srq);
	if (ret != 0)
		return -EINVAL;

	f = soft_fabric_get();
	if (f == NULL) {
		SOFT_LOG(ERR, "%s: cannot reserve the fabric memzone: %s",
			 dev->name, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	sdev = rte_zmalloc("soft_dev", sizeof(*sdev), RTE_CACHE_LINE_SIZE);
	if (sdev == NULL)
		return -ENOMEM;
	sdev->max_qp = max_qp;
	sdev->max_ah = max_ah;
	sdev->max_mr = max_mr + 1; /* slot 0 unused */
	sdev->mr_tbl = rte_zmalloc("soft_mr_tbl",
				   sizeof(*sdev->mr_tbl) * sdev->max_mr,
				   RTE_CACHE_LINE_SIZE);
	sdev->qp_tbl_mask = rte_align32pow2(max_qp) - 1;
	sdev->qp_tbl = rte_zmalloc("soft_qp_tbl",
				   sizeof(*sdev->qp_tbl) * (sdev->qp_tbl_mask + 1),
				   RTE_CACHE_LINE_SIZE);
	if (sdev->mr_tbl == NULL || sdev->qp_tbl == NULL) {
		rte_free(sdev->mr_tbl);
		rte_free(sdev->qp_tbl);
		rte_free(sdev);
		return -ENOMEM;
	}
	rte_spinlock_init(&sdev->lock);
	sdev->qdev = dev;

	rte_spinlock_lock(&f->lock);
	for (slot = 0; slot < QPIO_MAX_DEVICES; slot++)
		if (f->devs[slot] == NULL)
			break;
	if (slot < QPIO_MAX_DEVICES)
		f->devs[slot] = sdev;
	rte_spinlock_unlock(&f->lock);
	if (slot == QPIO_MAX_DEVICES) {
		rte_free(sdev->mr_tbl);
		rte_free(sdev->qp_tbl);
		rte_free(sdev);
		SOFT_LOG(ERR, "%s: fabric full (%u devices)", dev->name,
			 QPIO_MAX_DEVICES);
		return -ENOSPC;
	}
	sdev->fabric_slot = slot;
	sdev->lid = (uint16_t)(slot + 1);
	sdev->guid = 0x0002c90300000000ull | (slot + 1);

	memset(a, 0, sizeof(*a));
	a->node_guid = sdev->guid;
	a->max_mr_size = SOFT_MAX_MR_SIZE;
	a->max_qp = max_qp;
	a->max_qp_wr = max_qp_wr;
	a->max_sge = max_sge;
	a->max_cq = SOFT_MAX_CQ;
	a->max_cqe = max_cqe;
	a->max_mr = max_mr;
	a->max_pd = SOFT_MAX_PD;
	a->max_inline_data = max_inline;
	a->max_qp_rd_atom = SOFT_MAX_RD_ATOM;
	a->max_qp_init_rd_atom = SOFT_MAX_RD_ATOM;
	/* SRQ slots are named by the 16-bit CQE wqe_counter: max_qp_wr
	 * (at most 32768) keeps every SRQ depth within it. */
	a->max_srq = max_srq;
	a->max_srq_wr = max_srq != 0 ? max_qp_wr : 0;
	a->max_srq_sge = max_srq != 0 ? max_sge : 0;
	a->max_ah = max_ah;
	/* Atomics are CPU atomics on the target memory: atomic with respect
	 * to every soft device, every lcore and CPU atomics (GLOB). */
	a->atomic_cap = QPIO_ATOMIC_GLOB;
	a->phys_port_cnt = 1;

	dev->ops = &soft_ops;
	dev->priv = sdev;
	return 0;
}

static struct qpio_rdma_driver soft_driver = {
	.name = "soft",
	.valid_keys = soft_valid_keys,
	.probe = soft_probe,
};

QPIO_RDMA_DRIVER_REGISTER(soft_driver);
