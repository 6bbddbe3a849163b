/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_RDMA_PRIVATE_H
#define QPIO_RDMA_PRIVATE_H

#include <rte_log.h>

extern int qpio_rdma_logtype;

#define RDMA_LOG(level, ...) \
	rte_log(RTE_LOG_ ## level, qpio_rdma_logtype, \
		RTE_FMT("qpio.lib.rdma: " RTE_FMT_HEAD(__VA_ARGS__,) "\n", \
			RTE_FMT_TAIL(__VA_ARGS__,)))

struct qpio_device;
struct rdma_objlist;

/** Registry lock: held while devices are added or removed, and by the
 *  telemetry callbacks while they read devices. */
void rdma_registry_lock(void);
void rdma_registry_unlock(void);

/** Track obj (a QP or CQ of dev) for telemetry; -ENOMEM. */
int rdma_tel_track(struct qpio_device *dev, struct rdma_objlist *l,
		   void *obj);
/** Stop tracking obj; call before the object is freed. */
void rdma_tel_untrack(struct qpio_device *dev, struct rdma_objlist *l,
		      void *obj);
/** Free the lists of a closing device. */
void rdma_tel_fini(struct qpio_device *dev);

#endif /* QPIO_RDMA_PRIVATE_H */
