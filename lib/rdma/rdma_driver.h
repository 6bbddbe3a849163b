/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_RDMA_DRIVER_H
#define QPIO_RDMA_DRIVER_H

/**
 * @file
 * Interface between lib/rdma and its drivers. Not installed.
 *
 * lib/rdma validates every argument a user gives (NULL pointers, limits,
 * the QP transition table, access-flag rules, busy counts) before it calls
 * a driver op, so the ops only see well-formed requests. Constructors
 * return NULL with rte_errno set; other ops return 0 or -errno.
 */

#include <sys/queue.h>

#include <rte_kvargs.h>
#include <rte_spinlock.h>

#include "qpio_rdma.h"
#include "qpio_internal.h"

/** Live objects of a device, for telemetry (lib/rdma/rdma_telemetry.c). */
struct rdma_objlist {
	void **obj;
	uint32_t n;
	uint32_t cap;
};

/** Device: generic part. Allocated and freed by lib/rdma. */
struct qpio_device {
	char name[QPIO_DEV_NAME_LEN];
	unsigned int index;                 /**< registry slot */
	const struct qpio_rdma_driver *drv;
	const struct qpio_dev_ops *ops;
	struct qpio_device_attr attr;       /**< filled by probe */
	uint32_t nb_pd;                     /**< live objects, for -EBUSY */
	uint32_t nb_cq;
	uint32_t nb_mr;
	uint32_t nb_qp;
	uint32_t nb_ah;
	uint32_t nb_srq;
	uint32_t nb_xrcd;                   /**< XRC domain handles open */
	struct rdma_event_ring *events;     /**< asynchronous events (lib) */
	rte_spinlock_t tel_lock;            /**< guards qps and cqs (lib) */
	struct rdma_objlist qps;            /**< live QPs (lib) */
	struct rdma_objlist cqs;            /**< live CQs (lib) */
	void *priv;                         /**< driver state */
};

/** Protection domain: generic part. */
struct qpio_pd {
	struct qpio_device *dev;
	uint32_t pdn;                       /**< set by the driver, unique per device */
	uint32_t refcnt;                    /**< MRs, QPs and AHs using this PD */
};

/** XRC domain handle: generic part. Allocated by the driver. */
struct qpio_xrcd {
	struct qpio_device *dev;
	uint32_t xrcdn;                     /**< set by the driver */
	uint32_t refcnt;                    /**< XRC SRQs and target QP
					     *  registrations it holds (lib) */
};

/** Address handle: generic part. attr is a copy of what the user gave. */
struct qpio_ah {
	struct qpio_pd *pd;
	struct qpio_ah_attr attr;
};

/** Operations a driver provides for each device. All are required but
 *  the AH, SRQ, CQ-notify and CQ-resize ops: without them lib/rdma returns
 *  -EOPNOTSUPP (constructors: NULL with rte_errno EOPNOTSUPP), and the
 *  async_poll/async_event_fd pair, which only drivers whose events come
 *  from elsewhere (the kernel) need. */
struct qpio_dev_ops {
	int (*close)(struct qpio_device *dev);
	/** Extended attributes (optional): lib/rdma fills attr with orig and
	 *  its defaults (see qpio_rdma_dev_query_ex()) first; the driver
	 *  overwrites what it knows better. */
	int (*dev_query_ex)(const struct qpio_device *dev,
			    struct qpio_device_attr_ex *attr);
	int (*port_query)(const struct qpio_device *dev, uint8_t port,
			  struct qpio_port_attr *attr);
	int (*gid_query)(const struct qpio_device *dev, uint8_t port,
			 unsigned int index, union qpio_gid *gid);
	/** Optional: P_Key table entry; port and index checked against
	 *  port_query's pkey_tbl_len. */
	int (*pkey_query)(const struct qpio_device *dev, uint8_t port,
			  unsigned int index, uint16_t *pkey);
	struct qpio_pd *(*pd_alloc)(struct qpio_device *dev);
	int (*pd_free)(struct qpio_pd *pd);
	/** addr/length/access already validated. Fills lkey, rkey. */
	struct qpio_mr *(*mr_reg)(struct qpio_pd *pd, void *addr, size_t length,
				  unsigned int access);
	int (*mr_dereg)(struct qpio_mr *mr);
	/** cqe in [1, max_cqe]; flags known, QPIO_CQ_FLAG_TIMESTAMP only
	 *  when dev_query_ex reports a timestamp mask; comp_vector below
	 *  attr.num_comp_vectors. Sets poll, depth, cqn, and poll_ts when
	 *  flags has QPIO_CQ_FLAG_TIMESTAMP. */
	struct qpio_cq *(*cq_create)(struct qpio_device *dev, uint32_t cqe,
				     int socket_id, uint32_t flags,
				     uint32_t comp_vector);
	int (*cq_destroy)(struct qpio_cq *cq);
	/** Resize (optional): cqe in [1, max_cqe]. Keeps the completions in
	 *  the CQ in order; -EINVAL (logged) when fewer entries than it holds
	 *  are asked. Sets cq->depth to the granted depth; on failure the
	 *  CQ is unchanged. */
	int (*cq_resize)(struct qpio_cq *cq, uint32_t cqe);
	/** Arm for one event; solicited_only is 0 or 1. */
	int (*cq_req_notify)(struct qpio_cq *cq, int solicited_only);
	/** The CQ's event fd (owned by the CQ). */
	int (*cq_event_fd)(const struct qpio_cq *cq);
	/** Acknowledge the CQ's events raised so far, without blocking.
	 *  @return how many, or -errno. */
	int (*cq_ack_events)(struct qpio_cq *cq);
	/** caps checked against device limits; writes actual caps back.
	 *  Sets post_send, post_recv, qp_num, and post_send_sge and
	 *  post_recv_sge when it has the flat bursts (left NULL: lib refuses
	 *  them with -EOPNOTSUPP); lib fills the other fields.
	 *  XRC: pd is NULL for QPIO_QPT_XRC_RECV (ia->xrcd set, no CQs);
	 *  QPIO_QPT_XRC_SEND has ia->recv_cq NULL and ia->srq NULL. */
	struct qpio_qp *(*qp_create)(struct qpio_pd *pd,
				     struct qpio_qp_init_attr *init_attr);
	/** Optional: the device's QP1 (qpio_qp_create_gsi()), a UD QP as
	 *  qp_create makes one, numbered 1, Q_Key 0x80010000. NULL: lib
	 *  refuses with -EOPNOTSUPP. */
	struct qpio_qp *(*gsi_qp_create)(struct qpio_pd *pd,
					 struct qpio_qp_init_attr *init_attr);
	int (*qp_destroy)(struct qpio_qp *qp);
	/**
	 * Apply a modify that lib/rdma has checked against the transition
	 * table. cur is the state seen by the check; the driver sets qp->state
	 * itself (atomically), since it also moves QPs to ERR on its own.
	 * It must leave the QP unchanged when it fails.
	 */
	int (*qp_modify)(struct qpio_qp *qp, const struct qpio_qp_attr *attr,
			 int attr_mask, enum qpio_qp_state cur,
			 enum qpio_qp_state next);
	/** Fill attr (state and attributes); lib passes a zeroed attr. */
	int (*qp_query)(struct qpio_qp *qp, struct qpio_qp_attr *attr,
			struct qpio_qp_init_attr *init_attr);
	/** attr checked (port, sgid_index, flow_label); lib fills pd and
	 *  attr of the returned AH. */
	struct qpio_ah *(*ah_create)(struct qpio_pd *pd,
				     const struct qpio_ah_attr *attr);
	int (*ah_destroy)(struct qpio_ah *ah);
	/** attr->max_wr in [1, max_srq_wr], max_sge in [0, max_srq_sge];
	 *  writes the actual sizes back. Sets post_recv and srq_num; lib
	 *  fills the other generic fields. */
	struct qpio_srq *(*srq_create)(struct qpio_pd *pd,
				       struct qpio_srq_attr *attr);
	/** mask checked (known bits); srq_limit checked against max_wr. */
	int (*srq_modify)(struct qpio_srq *srq, const struct qpio_srq_attr *attr,
			  int attr_mask);
	/** Fill attr; lib passes a zeroed attr. */
	int (*srq_query)(struct qpio_srq *srq, struct qpio_srq_attr *attr);
	/** No QP uses the SRQ. */
	int (*srq_destroy)(struct qpio_srq *srq);
	/** XRC (optional, all four or none; without them lib/rdma refuses
	 *  XRC with EOPNOTSUPP). fd is -1 or open, oflags only O_CREAT and
	 *  O_EXCL; the driver applies the file rules (EINVAL, EBADF). */
	struct qpio_xrcd *(*xrcd_open)(struct qpio_device *dev, int fd,
				       int oflags);
	/** The handle holds nothing (refcnt 0). */
	int (*xrcd_close)(struct qpio_xrcd *xrcd);
	/** An XRC SRQ: attr as srq_create; xrcd and cq of pd's device.
	 *  Sets post_recv and srq_num; lib fills the generic fields. */
	struct qpio_srq *(*srq_create_xrc)(struct qpio_pd *pd,
					   struct qpio_xrcd *xrcd,
					   struct qpio_cq *cq,
					   struct qpio_srq_attr *attr);
	/** 1 if qp (an XRC target QP of this device) is of xrcd's domain. */
	int (*xrcd_has_qp)(const struct qpio_xrcd *xrcd,
			   const struct qpio_qp *qp);
	/** Move the events the device holds into the event ring with
	 *  qpio_rdma_event_raise(), without blocking. Called by
	 *  qpio_rdma_get_async_event() when the ring is empty. */
	void (*async_poll)(struct qpio_device *dev);
	/** The fd that becomes readable when the device holds an event
	 *  (replaces the ring's eventfd in qpio_rdma_async_event_fd()). */
	int (*async_event_fd)(const struct qpio_device *dev);
	/** Counters of a QP (optional). Called from the telemetry thread
	 *  while lcores use the QP: read, never write; values may be one
	 *  burst stale. Fill the counted fields and set their bits. */
	void (*qp_stats_get)(const struct qpio_qp *qp,
			     struct qpio_qp_stats *st);
	/** State of a CQ (optional), under the same rules. */
	void (*cq_stats_get)(const struct qpio_cq *cq,
			     struct qpio_cq_stats *st);
	/** Multicast (optional): qp is a live UD QP, gid in ff00::/8, lid
	 *  checked on InfiniBand ports. -EEXIST for a second attach of the
	 *  same group, -EINVAL for a detach of a group not attached. */
	int (*mcast_attach)(struct qpio_qp *qp, const union qpio_gid *gid,
			    uint16_t lid);
	int (*mcast_detach)(struct qpio_qp *qp, const union qpio_gid *gid,
			    uint16_t lid);
};

/** A driver, registered from a constructor with QPIO_RDMA_DRIVER_REGISTER. */
struct qpio_rdma_driver {
	TAILQ_ENTRY(qpio_rdma_driver) next;
	const char *name;                   /**< devargs prefix: "soft" */
	const char *const *valid_keys;      /**< NULL-terminated kvargs keys */
	/**
	 * Create device state: fill dev->ops, dev->attr (name and driver are
	 * filled by lib/rdma) and dev->priv. kvlist holds the parsed devargs
	 * (only valid_keys) and may be NULL when there were none.
	 * @return 0 or -errno.
	 */
	int (*probe)(struct qpio_device *dev, const struct rte_kvargs *kvlist);
};

/**
 * Queue an asynchronous event of dev (see qpio_rdma_get_async_event()).
 * Any lcore may call it, concurrently with others and with the reader;
 * it takes no lock and makes one eventfd write (a system call: call it on
 * error paths only). obj is the CQ, QP or SRQ the type names; port the
 * port number of port events.
 * @return 0, or -ENOSPC when the ring is full (the event is counted as
 *   lost).
 */
__qpio_internal
int qpio_rdma_event_raise(struct qpio_device *dev, enum qpio_event_type type,
			  void *obj, uint8_t port);

/**
 * Free the parts lib/rdma allocated in DPDK memory for a device whose
 * process died: its event ring (its eventfd was that process's and is
 * not closed), its telemetry lists and the device itself. For a driver
 * that reclaims the objects of a dead process (the soft NIC); the
 * caller makes sure nothing reads dev any more. Control path.
 */
__qpio_internal
void qpio_rdma_dev_orphan_free(struct qpio_device *dev);

/**
 * Free the parts lib/rdma allocated in DPDK memory for a QP of a dead
 * process (its XRC registrations), not the QP itself, which is the
 * driver's. Control path.
 */
__qpio_internal
void qpio_rdma_qp_orphan_free(struct qpio_qp *qp);

/** Add a driver to the registry. Called from constructors only. */
__qpio_internal
void qpio_rdma_driver_register(struct qpio_rdma_driver *drv);

#define QPIO_RDMA_DRIVER_REGISTER(drv) \
	RTE_INIT(qpio_rdma_driver_register_ ## drv) \
	{ \
		qpio_rdma_driver_register(&(drv)); \
	}

/**
 * Helpers for drivers parsing devargs values: read key from kvlist as an
 * unsigned integer in [min, max]; leaves *val untouched when the key is
 * absent. @return 0, or -EINVAL (logged, naming the key and the range).
 */
__qpio_internal
int qpio_rdma_kvargs_u32(const struct rte_kvargs *kvlist, const char *key,
			 uint32_t min, uint32_t max, uint32_t *val);

#endif /* QPIO_RDMA_DRIVER_H */
