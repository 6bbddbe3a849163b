/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Telemetry commands of lib/rdma, registered once when the library is
 * loaded (dpdk-telemetry.py, no plugin):
 *
 *   /qpio/rdma/list              device names
 *   /qpio/rdma/info,DEV          driver, live objects, limits
 *   /qpio/rdma/qps,DEV           QP numbers of the device
 *   /qpio/rdma/qp,DEV,QPN        type, state, CQs and the driver's QP
 *                                counters (qp_stats_get; absent fields
 *                                are omitted)
 *   /qpio/rdma/cqs,DEV           CQ numbers of the device
 *   /qpio/rdma/cq,DEV,CQN        depth, users, occupancy, its high-water
 *                                mark, overflows, empty polls
 *
 * The callbacks hold the registry lock and the device's tel_lock, which
 * qpio_rdma_dev_close() and the QP and CQ destroy calls take before they
 * free anything, so every object read is alive.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_malloc.h>
#include <rte_telemetry.h>

#include "qpio_config.h"
#include "qpio_devargs.h"
#include "rdma_driver.h"
#include "rdma_private.h"

static rte_spinlock_t registry_lock = RTE_SPINLOCK_INITIALIZER;

void
rdma_registry_lock(void)
{
	rte_spinlock_lock(&registry_lock);
}

void
rdma_registry_unlock(void)
{
	rte_spinlock_unlock(&registry_lock);
}

int
rdma_tel_track(struct qpio_device *dev, struct rdma_objlist *l, void *obj)
{
	int ret = 0;

	rte_spinlock_lock(&dev->tel_lock);
	if (l->n == l->cap) {
		uint32_t cap = l->cap != 0 ? l->cap * 2 : 16;
		/* In the DPDK heap, like the device that holds the list. */
		void **v = rte_realloc(l->obj, cap * sizeof(*v), 0);

		if (v == NULL) {
			ret = -ENOMEM;
			goto out;
		}
		l->obj = v;
		l->cap = cap;
	}
	l->obj[l->n++] = obj;
out:
	rte_spinlock_unlock(&dev->tel_lock);
	if (ret < 0)
		RDMA_LOG(WARNING, "device %s: out of memory, an object is not "
			 "shown by telemetry", dev->name);
	return ret;
}

void
rdma_tel_untrack(struct qpio_device *dev, struct rdma_objlist *l, void *obj)
{
	uint32_t i;

	rte_spinlock_lock(&dev->tel_lock);
	for (i = 0; i < l->n; i++)
		if (l->obj[i] == obj) {
			l->obj[i] = l->obj[--l->n];
			break;
		}
	rte_spinlock_unlock(&dev->tel_lock);
}

void
rdma_tel_fini(struct qpio_device *dev)
{
	rte_free(dev->qps.obj);
	rte_free(dev->cqs.obj);
	memset(&dev->qps, 0, sizeof(dev->qps));
	memset(&dev->cqs, 0, sizeof(dev->cqs));
}

/* Split "DEV[,NUM]"; the device found under the registry lock, which the
 * caller releases. want_num: NUM is required. */
static struct qpio_device *
tel_dev_lock(const char *params, int want_num, uint32_t *num)
{
	char name[QPIO_DEV_NAME_LEN];
	struct qpio_device *dev = NULL;
	const char *comma;
	unsigned int i;
	size_t len;

	if (params == NULL)
		return NULL;
	comma = strchr(params, ',');
	if ((comma != NULL) != (want_num != 0))
		return NULL;
	len = comma != NULL ? (size_t)(comma - params) : strlen(params);
	if (len == 0 || len >= sizeof(name))
		return NULL;
	memcpy(name, params, len);
	name[len] = '\0';
	if (comma != NULL) {
		if (qpio_devargs_parse_u32(comma + 1, 0, UINT32_MAX, num) < 0)
			return NULL;
	}
	rdma_registry_lock();
	for (i = 0; i < QPIO_MAX_DEVICES; i++) {
		dev = qpio_rdma_dev_get(i);
		if (dev != NULL && strcmp(dev->name, name) == 0)
			return dev;
	}
	rdma_registry_unlock();
	return NULL;
}

static int
tel_rdma_list(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct qpio_device *dev;
	unsigned int i;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	rdma_registry_lock();
	for (i = 0; i < QPIO_MAX_DEVICES; i++) {
		dev = qpio_rdma_dev_get(i);
		if (dev != NULL)
			rte_tel_data_add_array_string(d, dev->name);
	}
	rdma_registry_unlock();
	return 0;
}

static int
tel_rdma_info(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct qpio_device *dev;

	RTE_SET_USED(cmd);
	dev = tel_dev_lock(params, 0, NULL);
	if (dev == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "name", dev->name);
	rte_tel_data_add_dict_string(d, "driver", dev->attr.driver);
	rte_tel_data_add_dict_u64(d, "nb_pd", dev->nb_pd);
	rte_tel_data_add_dict_u64(d, "nb_cq", dev->nb_cq);
	rte_tel_data_add_dict_u64(d, "nb_mr", dev->nb_mr);
	rte_tel_data_add_dict_u64(d, "nb_qp", dev->nb_qp);
	rte_tel_data_add_dict_u64(d, "nb_ah", dev->nb_ah);
	rte_tel_data_add_dict_u64(d, "nb_srq", dev->nb_srq);
	rte_tel_data_add_dict_u64(d, "max_qp", dev->attr.max_qp);
	rte_tel_data_add_dict_u64(d, "max_qp_wr", dev->attr.max_qp_wr);
	rte_tel_data_add_dict_u64(d, "max_cq", dev->attr.max_cq);
	rte_tel_data_add_dict_u64(d, "max_cqe", dev->attr.max_cqe);
	rte_tel_data_add_dict_u64(d, "max_mr", dev->attr.max_mr);
	rte_tel_data_add_dict_u64(d, "max_inline_data",
				  dev->attr.max_inline_data);
	rdma_registry_unlock();
	return 0;
}

/* Numbers of the QPs (qps) or CQs of a device. */
static int
tel_rdma_nums(const char *params, struct rte_tel_data *d, int qps)
{
	struct qpio_device *dev;
	struct rdma_objlist *l;
	uint32_t i;

	dev = tel_dev_lock(params, 0, NULL);
	if (dev == NULL)
		return -EINVAL;
	rte_tel_data_start_array(d, RTE_TEL_U64_VAL);
	rte_spinlock_lock(&dev->tel_lock);
	l = qps ? &dev->qps : &dev->cqs;
	for (i = 0; i < l->n; i++)
		rte_tel_data_add_array_u64(d, qps ?
			((struct qpio_qp *)l->obj[i])->qp_num :
			((struct qpio_cq *)l->obj[i])->cqn);
	rte_spinlock_unlock(&dev->tel_lock);
	rdma_registry_unlock();
	return 0;
}

static int
tel_rdma_qps(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	return tel_rdma_nums(params, d, 1);
}

static int
tel_rdma_cqs(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	return tel_rdma_nums(params, d, 0);
}

static const char *
qp_type_str(uint8_t t)
{
	switch (t) {
	case QPIO_QPT_RC: return "RC";
	case QPIO_QPT_UC: return "UC";
	case QPIO_QPT_UD: return "UD";
	case QPIO_QPT_XRC_SEND: return "XRC_SEND";
	case QPIO_QPT_XRC_RECV: return "XRC_RECV";
	default: return "?";
	}
}

static void
qp_fill(const struct qpio_qp *qp, struct rte_tel_data *d)
{
	const struct qpio_dev_ops *ops = qp->dev->ops;
	struct qpio_qp_stats st;

	rte_tel_data_add_dict_u64(d, "qpn", qp->qp_num);
	rte_tel_data_add_dict_string(d, "type", qp_type_str(qp->qp_type));
	rte_tel_data_add_dict_string(d, "state", qpio_qp_state_str(
		(enum qpio_qp_state)__atomic_load_n(&qp->state,
						    __ATOMIC_RELAXED)));
	/* XRC QPs lack one CQ (XRC_SEND) or both (XRC_RECV). */
	if (qp->send_cq != NULL)
		rte_tel_data_add_dict_u64(d, "send_cqn", qp->send_cq->cqn);
	if (qp->recv_cq != NULL)
		rte_tel_data_add_dict_u64(d, "recv_cqn", qp->recv_cq->cqn);
	if (qp->srq != NULL)
		rte_tel_data_add_dict_u64(d, "srq_num", qp->srq->srq_num);
	if (ops->qp_stats_get == NULL)
		return;
	memset(&st, 0, sizeof(st));
	ops->qp_stats_get(qp, &st);
#define QP_STAT(bit, field) \
	if (st.valid & QPIO_QP_STAT_ ## bit) \
		rte_tel_data_add_dict_u64(d, #field, st.field)
	QP_STAT(WQES_POSTED, wqes_posted);
	QP_STAT(SQ_DOORBELLS, sq_doorbells);
	QP_STAT(RQ_DOORBELLS, rq_doorbells);
	QP_STAT(RNR_NAKS, rnr_naks);
	QP_STAT(RNR_EXCEEDED, rnr_exceeded);
	QP_STAT(RETRY_EXCEEDED, retry_exceeded);
	QP_STAT(FLUSHED, flushed);
#undef QP_STAT
	if ((st.valid & QPIO_QP_STAT_WQES_POSTED) &&
	    (st.valid & QPIO_QP_STAT_SQ_DOORBELLS) && st.sq_doorbells != 0) {
		char buf[32];

		snprintf(buf, sizeof(buf), "%.2f",
			 (double)st.wqes_posted / (double)st.sq_doorbells);
		rte_tel_data_add_dict_string(d, "wqes_per_doorbell", buf);
	}
}

static void
cq_fill(const struct qpio_cq *cq, struct rte_tel_data *d)
{
	const struct qpio_dev_ops *ops = cq->dev->ops;
	struct qpio_cq_stats st;

	rte_tel_data_add_dict_u64(d, "cqn", cq->cqn);
	rte_tel_data_add_dict_u64(d, "depth", cq->depth);
	rte_tel_data_add_dict_u64(d, "qp_users", cq->refcnt);
	if (ops->cq_stats_get == NULL)
		return;
	memset(&st, 0, sizeof(st));
	ops->cq_stats_get(cq, &st);
	if (st.valid & QPIO_CQ_STAT_OCCUPANCY)
		rte_tel_data_add_dict_u64(d, "occupancy", st.occupancy);
	if (st.valid & QPIO_CQ_STAT_OVERFLOWS)
		rte_tel_data_add_dict_u64(d, "overflows", st.overflows);
	if (st.valid & QPIO_CQ_STAT_OCCUPANCY_HWM)
		rte_tel_data_add_dict_u64(d, "occupancy_hwm", st.occupancy_hwm);
	if (st.valid & QPIO_CQ_STAT_EMPTY_POLLS)
		rte_tel_data_add_dict_u64(d, "empty_polls", st.empty_polls);
	if (st.valid & QPIO_CQ_STAT_COMPRESSED)
		rte_tel_data_add_dict_u64(d, "compressed", st.compressed);
}

/* One QP (qps) or CQ by number. */
static int
tel_rdma_obj(const char *params, struct rte_tel_data *d, int qps)
{
	struct qpio_device *dev;
	struct rdma_objlist *l;
	uint32_t num, i;
	int ret = -EINVAL;

	dev = tel_dev_lock(params, 1, &num);
	if (dev == NULL)
		return -EINVAL;
	rte_spinlock_lock(&dev->tel_lock);
	l = qps ? &dev->qps : &dev->cqs;
	for (i = 0; i < l->n; i++) {
		if (qps && ((struct qpio_qp *)l->obj[i])->qp_num == num) {
			rte_tel_data_start_dict(d);
			qp_fill(l->obj[i], d);
			ret = 0;
			break;
		}
		if (!qps && ((struct qpio_cq *)l->obj[i])->cqn == num) {
			rte_tel_data_start_dict(d);
			cq_fill(l->obj[i], d);
			ret = 0;
			break;
		}
	}
	rte_spinlock_unlock(&dev->tel_lock);
	rdma_registry_unlock();
	return ret;
}

static int
tel_rdma_qp(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	return tel_rdma_obj(params, d, 1);
}

static int
tel_rdma_cq(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	return tel_rdma_obj(params, d, 0);
}

RTE_INIT(qpio_rdma_telemetry_init)
{
	rte_telemetry_register_cmd("/qpio/rdma/list", tel_rdma_list,
		"Returns the qpio RDMA device names. Takes no parameters");
	rte_telemetry_register_cmd("/qpio/rdma/info", tel_rdma_info,
		"Returns driver, live objects and limits of an RDMA device. "
		"Parameters: string device");
	rte_telemetry_register_cmd("/qpio/rdma/qps", tel_rdma_qps,
		"Returns the QP numbers of an RDMA device. "
		"Parameters: string device");
	rte_telemetry_register_cmd("/qpio/rdma/qp", tel_rdma_qp,
		"Returns state and counters of a QP. "
		"Parameters: string device, int qpn");
	rte_telemetry_register_cmd("/qpio/rdma/cqs", tel_rdma_cqs,
		"Returns the CQ numbers of an RDMA device. "
		"Parameters: string device");
	rte_telemetry_register_cmd("/qpio/rdma/cq", tel_rdma_cq,
		"Returns depth, occupancy, its high-water mark, overflows "
		"and empty polls of a CQ. "
		"Parameters: string device, int cqn");
}
