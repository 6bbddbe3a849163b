/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Device registry and devargs parsing.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_kvargs.h>
#include <rte_malloc.h>

#include "qpio_config.h"
#include "qpio_devargs.h"
#include "rdma_driver.h"
#include "rdma_events.h"
#include "rdma_private.h"

RTE_LOG_REGISTER(qpio_rdma_logtype, qpio.lib.rdma, NOTICE);

static TAILQ_HEAD(, qpio_rdma_driver) drivers = TAILQ_HEAD_INITIALIZER(drivers);
static struct qpio_device *devices[QPIO_MAX_DEVICES];
static unsigned int nb_devices;

void
qpio_rdma_driver_register(struct qpio_rdma_driver *drv)
{
	TAILQ_INSERT_TAIL(&drivers, drv, next);
}

/* "soft12" -> the driver named "soft" if the rest is 1..3 decimal digits. */
static const struct qpio_rdma_driver *
driver_for_name(const char *name)
{
	const struct qpio_rdma_driver *drv;

	TAILQ_FOREACH(drv, &drivers, next) {
		size_t n = strlen(drv->name);
		const char *p = name + n;
		size_t digits = 0;

		if (strncmp(name, drv->name, n) != 0)
			continue;
		while (isdigit((unsigned char)p[digits]))
			digits++;
		/* one to three digits, no leading zero: "soft0", "soft12" */
		if (digits >= 1 && digits <= 3 && p[digits] == '\0' &&
		    (digits == 1 || p[0] != '0'))
			return drv;
	}
	return NULL;
}

int
qpio_rdma_kvargs_u32(const struct rte_kvargs *kvlist, const char *key,
		     uint32_t min, uint32_t max, uint32_t *val)
{
	return qpio_devargs_u32("devargs", kvlist, key, min, max, val);
}

struct qpio_device *
qpio_rdma_dev_create(const char *devargs)
{
	const struct qpio_rdma_driver *drv;
	struct rte_kvargs *kvlist = NULL;
	struct qpio_device *dev;
	char name[QPIO_DEV_NAME_LEN], doc[64];
	const char *args;
	unsigned int slot;
	int ret;

	if (devargs == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (qpio_devargs_split(devargs, name, sizeof(name), &args) < 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	drv = driver_for_name(name);
	if (drv == NULL) {
		RDMA_LOG(ERR, "devargs '%s': no driver for '%s' (want <driver><0-999>)",
			 devargs, name);
		rte_errno = ENODEV;
		return NULL;
	}
	for (slot = 0; slot < QPIO_MAX_DEVICES; slot++)
		if (devices[slot] != NULL &&
		    strcmp(devices[slot]->name, name) == 0) {
			RDMA_LOG(ERR, "device %s exists already", name);
			rte_errno = EEXIST;
			return NULL;
		}
	for (slot = 0; slot < QPIO_MAX_DEVICES; slot++)
		if (devices[slot] == NULL)
			break;
	if (slot == QPIO_MAX_DEVICES) {
		RDMA_LOG(ERR, "device %s: QPIO_MAX_DEVICES (%u) reached",
			 name, QPIO_MAX_DEVICES);
		rte_errno = ENOSPC;
		return NULL;
	}
	snprintf(doc, sizeof(doc), "doc/guides/nics/%s.rst", drv->name);
	if (qpio_devargs_parse(name, args, (const char *const *)drv->valid_keys,
			       doc, &kvlist) < 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	dev = rte_zmalloc("qpio_device", sizeof(*dev), 0);
	if (dev == NULL) {
		rte_kvargs_free(kvlist);
		rte_errno = ENOMEM;
		return NULL;
	}
	strcpy(dev->name, name);
	dev->index = slot;
	dev->drv = drv;
	ret = rdma_events_init(dev);
	if (ret == 0) {
		ret = drv->probe(dev, kvlist);
		if (ret < 0)
			rdma_events_fini(dev);
	}
	rte_kvargs_free(kvlist);
	if (ret < 0) {
		rte_free(dev);
		rte_errno = -ret;
		return NULL;
	}
	snprintf(dev->attr.name, sizeof(dev->attr.name), "%s", name);
	snprintf(dev->attr.driver, sizeof(dev->attr.driver), "%s", drv->name);
	rte_spinlock_init(&dev->tel_lock);
	rdma_registry_lock();
	devices[slot] = dev;
	nb_devices++;
	rdma_registry_unlock();
	RDMA_LOG(INFO, "device %s created (driver %s)", name, drv->name);
	return dev;
}

int
qpio_rdma_dev_close(struct qpio_device *dev)
{
	unsigned int slot;
	int ret;

	if (dev == NULL)
		return -EINVAL;
	/* Look the device up in the registry before reading it: a device
	 * closed already is refused, never freed twice. */
	for (slot = 0; slot < QPIO_MAX_DEVICES; slot++)
		if (devices[slot] == dev)
			break;
	if (slot == QPIO_MAX_DEVICES) {
		RDMA_LOG(ERR, "device %p: not an open device (closed already, "
			 "or never created)", (void *)dev);
		return -EINVAL;
	}
	if (dev->nb_pd != 0 || dev->nb_cq != 0 || dev->nb_xrcd != 0) {
		RDMA_LOG(ERR, "device %s: close refused, %u PDs, %u CQs and %u "
			 "XRC domain handles alive", dev->name, dev->nb_pd,
			 dev->nb_cq, dev->nb_xrcd);
		return -EBUSY;
	}
	ret = dev->ops->close(dev);
	if (ret < 0)
		return ret;
	rdma_events_fini(dev);
	rdma_registry_lock();
	devices[dev->index] = NULL;
	nb_devices--;
	rdma_registry_unlock();
	rdma_tel_fini(dev);
	memset(dev, 0x6b, sizeof(*dev));   /* poison: a stale pointer reads garbage */
	rte_free(dev);
	return 0;
}

unsigned int
qpio_rdma_dev_count(void)
{
	return nb_devices;
}

struct qpio_device *
qpio_rdma_dev_get(unsigned int idx)
{
	if (idx >= QPIO_MAX_DEVICES)
		return NULL;
	return devices[idx];
}

struct qpio_device *
qpio_rdma_dev_get_by_name(const char *name)
{
	unsigned int i;

	if (name != NULL)
		for (i = 0; i < QPIO_MAX_DEVICES; i++)
			if (devices[i] != NULL &&
			    strcmp(devices[i]->name, name) == 0)
				return devices[i];
	rte_errno = ENODEV;
	return NULL;
}

unsigned int
qpio_rdma_dev_index(const struct qpio_device *dev)
{
	return dev->index;
}

int
qpio_rdma_dev_query(const struct qpio_device *dev, struct qpio_device_attr *attr)
{
	if (dev == NULL || attr == NULL)
		return -EINVAL;
	*attr = dev->attr;
	return 0;
}

int
qpio_rdma_dev_query_ex(const struct qpio_device *dev,
		       struct qpio_device_attr_ex *attr)
{
	if (dev == NULL || attr == NULL)
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->orig = dev->attr;
	/* What qpio does with any device: the one inline limit it enforces
	 * for every QP type, 8-byte atomics (IBA 9.4.5), pinned MRs. */
	attr->max_inline_rc = dev->attr.max_inline_data;
	attr->max_inline_uc = dev->attr.max_inline_data;
	attr->max_inline_ud = dev->attr.max_inline_data;
	attr->atomic_size_mask = dev->attr.atomic_cap != QPIO_ATOMIC_NONE ?
		1u << 3 : 0;
	attr->odp_caps = QPIO_ODP_NONE;
	if (dev->ops->dev_query_ex != NULL)
		return dev->ops->dev_query_ex(dev, attr);
	return 0;
}

int
qpio_rdma_pkey_query(const struct qpio_device *dev, uint8_t port,
		     unsigned int index, uint16_t *pkey)
{
	struct qpio_port_attr pa;
	int ret;

	if (dev == NULL || pkey == NULL)
		return -EINVAL;
	if (port < 1 || port > dev->attr.phys_port_cnt) {
		RDMA_LOG(ERR, "device %s: port %u out of range 1..%u",
			 dev->name, port, dev->attr.phys_port_cnt);
		return -EINVAL;
	}
	if (dev->ops->pkey_query == NULL) {
		RDMA_LOG(ERR, "device %s: driver %s has no P_Key table query",
			 dev->name, dev->drv->name);
		return -EOPNOTSUPP;
	}
	memset(&pa, 0, sizeof(pa));
	ret = dev->ops->port_query(dev, port, &pa);
	if (ret != 0)
		return ret;
	if (index >= pa.pkey_tbl_len) {
		RDMA_LOG(ERR, "device %s port %u: P_Key index %u not in "
			 "[0, pkey_tbl_len %u)", dev->name, port, index,
			 pa.pkey_tbl_len);
		return -EINVAL;
	}
	return dev->ops->pkey_query(dev, port, index, pkey);
}

int
qpio_rdma_port_query(const struct qpio_device *dev, uint8_t port,
		     struct qpio_port_attr *attr)
{
	if (dev == NULL || attr == NULL)
		return -EINVAL;
	if (port < 1 || port > dev->attr.phys_port_cnt) {
		RDMA_LOG(ERR, "device %s: port %u out of range 1..%u",
			 dev->name, port, dev->attr.phys_port_cnt);
		return -EINVAL;
	}
	memset(attr, 0, sizeof(*attr));
	return dev->ops->port_query(dev, port, attr);
}

int
qpio_rdma_gid_query(const struct qpio_device *dev, uint8_t port,
		    unsigned int index, union qpio_gid *gid)
{
	struct qpio_port_attr pattr;
	int ret;

	if (gid == NULL)
		return -EINVAL;
	ret = qpio_rdma_port_query(dev, port, &pattr);
	if (ret < 0)
		return ret;
	if (index >= pattr.gid_tbl_len) {
		RDMA_LOG(ERR, "device %s port %u: GID index %u >= table length %u",
			 dev->name, port, index, pattr.gid_tbl_len);
		return -EINVAL;
	}
	return dev->ops->gid_query(dev, port, index, gid);
}

static const char *const wc_status_names[] = {
	"SUCCESS", "LOC_LEN_ERR", "LOC_QP_OP_ERR", "LOC_EEC_OP_ERR",
	"LOC_PROT_ERR", "WR_FLUSH_ERR", "MW_BIND_ERR", "BAD_RESP_ERR",
	"LOC_ACCESS_ERR", "REM_INV_REQ_ERR", "REM_ACCESS_ERR", "REM_OP_ERR",
	"RETRY_EXC_ERR", "RNR_RETRY_EXC_ERR", "LOC_RDD_VIOL_ERR",
	"REM_INV_RD_REQ_ERR", "REM_ABORT_ERR", "INV_EECN_ERR",
	"INV_EEC_STATE_ERR", "FATAL_ERR", "RESP_TIMEOUT_ERR", "GENERAL_ERR",
};

const char *
qpio_wc_status_str(enum qpio_wc_status status)
{
	if ((unsigned int)status >= RTE_DIM(wc_status_names))
		return "?";
	return wc_status_names[status];
}

static const char *const port_state_names[] = {
	[QPIO_PORT_DOWN] = "DOWN", [QPIO_PORT_INIT] = "INIT",
	[QPIO_PORT_ARMED] = "ARMED", [QPIO_PORT_ACTIVE] = "ACTIVE",
};

const char *
qpio_port_state_str(enum qpio_port_state state)
{
	if ((unsigned int)state >= RTE_DIM(port_state_names) ||
	    port_state_names[state] == NULL)
		return "?";
	return port_state_names[state];
}

void
qpio_rdma_dev_orphan_free(struct qpio_device *dev)
{
	if (dev == NULL)
		return;
	rte_free(dev->events);
	rte_free(dev->qps.obj);
	rte_free(dev->cqs.obj);
	memset(dev, 0x6b, sizeof(*dev));
	rte_free(dev);
}

void
qpio_rdma_qp_orphan_free(struct qpio_qp *qp)
{
	rte_free(qp->xrc_regs);
	qp->xrc_regs = NULL;
	qp->nb_xrc_regs = 0;
}
