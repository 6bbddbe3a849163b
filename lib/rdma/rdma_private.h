/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_RDMA_PRIVATE_H
#define QPIO_RDMA_PRIVATE_H

#include <rte_log.h>
#include "qpio_log.h"

extern int qpio_rdma_logtype;

#define RDMA_LOG(level, ...) \
	QPIO_LOG_LINE(level, qpio_rdma_logtype, "qpio.lib.rdma", __VA_ARGS__)

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

struct qpio_ah_attr;

/**
 * The address-vector rules (rdma_av.c): port_num in [1, phys_port_cnt];
 * with a GRH, sgid_index inside the port's GID table and flow_label in
 * 20 bits. who names the caller in the log line ("ah", "qp 0x11").
 * 0 or -EINVAL (logged).
 */
int rdma_av_check(const struct qpio_device *dev, const struct qpio_ah_attr *av,
		  const char *who);

struct qpio_qp;
struct qpio_xrcd;

/** Add a registration of XRC target qp held by xrcd (rdma_xrc.c).
 *  0 or -ENOMEM. */
int rdma_xrc_reg_push(struct qpio_qp *qp, struct qpio_xrcd *xrcd);
/** Drop the newest registration of qp. @return 1 if others remain (the
 *  QP stays), 0 if that was the last (destroy it). */
int rdma_xrc_reg_pop(struct qpio_qp *qp);

/** Kinds of handle the library hands out (rdma_handle.c). */
enum rdma_handle_type {
	RDMA_HANDLE_PD = 1,
	RDMA_HANDLE_MR,
	RDMA_HANDLE_CQ,
	RDMA_HANDLE_QP,
	RDMA_HANDLE_AH,
	RDMA_HANDLE_SRQ,
	RDMA_HANDLE_XRCD,
};

/** Enter a handle just created. 0 or -ENOMEM. */
int rdma_handle_add(const void *obj, enum rdma_handle_type type);
/** 1 if obj is a live handle of that type in this process, else 0. */
int rdma_handle_live(const void *obj, enum rdma_handle_type type);
/** Forget a handle (after its destroy succeeded). */
void rdma_handle_del(const void *obj);

/** Every object a destroy may be given, looked up before it is read. */
#define RDMA_HANDLE_CHECK(obj, type, what) do { \
		if (!rdma_handle_live((obj), (type))) { \
			RDMA_LOG(ERR, "%s %p: not a live %s of this process " \
				 "(destroyed already, or never created)", \
				 (what), (const void *)(obj), (what)); \
			return -EINVAL; \
		} \
	} while (0)

#endif /* QPIO_RDMA_PRIVATE_H */
