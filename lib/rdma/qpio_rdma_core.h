/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_RDMA_CORE_H
#define QPIO_RDMA_CORE_H

/**
 * @file
 * Object layouts the inline fast path of qpio_rdma.h needs.
 * Do not use these fields directly: use the accessors of qpio_rdma.h.
 * Drivers embed these structures as the first member of their own objects.
 */

#include <stddef.h>
#include <stdint.h>

#include <rte_common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct qpio_device;
struct qpio_pd;
struct qpio_srq;
struct qpio_xrcd;
struct qpio_ah;
struct qpio_qp;
struct qpio_cq;
struct qpio_sge;
struct qpio_send_wr;
struct qpio_recv_wr;
struct qpio_wc;

/** Driver burst function behind qpio_qp_post_send(). */
typedef uint16_t (*qpio_post_send_t)(struct qpio_qp *qp,
				     const struct qpio_send_wr *wrs,
				     uint16_t nb_wr, int *err);
/** Driver burst function behind qpio_qp_post_recv(). */
typedef uint16_t (*qpio_post_recv_t)(struct qpio_qp *qp,
				     const struct qpio_recv_wr *wrs,
				     uint16_t nb_wr, int *err);
/** Driver burst function behind qpio_qp_post_send_sge(). */
typedef uint16_t (*qpio_post_send_sge_t)(struct qpio_qp *qp,
					 const struct qpio_sge *sges,
					 uint16_t nb_wr, uint64_t wr_id,
					 unsigned int flags, int *err);
/** Driver burst function behind qpio_qp_post_recv_sge(). */
typedef uint16_t (*qpio_post_recv_sge_t)(struct qpio_qp *qp,
					 const struct qpio_sge *sges,
					 uint16_t nb_wr, uint64_t wr_id,
					 int *err);
/** Driver burst function behind qpio_srq_post_recv(). */
typedef uint16_t (*qpio_srq_post_recv_t)(struct qpio_srq *srq,
					 const struct qpio_recv_wr *wrs,
					 uint16_t nb_wr, int *err);
/** Driver burst function behind qpio_cq_poll(). */
typedef uint16_t (*qpio_poll_cq_t)(struct qpio_cq *cq, struct qpio_wc *wc,
				   uint16_t nb_wc);

/** Driver burst function behind qpio_cq_poll_ts(): as qpio_poll_cq_t,
 *  and ts[i] the completion timestamp of wc[i]. */
typedef uint16_t (*qpio_poll_cq_ts_t)(struct qpio_cq *cq, struct qpio_wc *wc,
				      uint64_t *ts, uint16_t nb_wc);

/** Memory region: generic part. */
struct qpio_mr {
	uint32_t lkey;
	uint32_t rkey;
	void *addr;
	size_t length;           /**< bytes */
	unsigned int access;     /**< enum qpio_access_flags */
	struct qpio_pd *pd;
};

/** Completion queue: generic part. The first cache line is fast path. */
struct qpio_cq {
	qpio_poll_cq_t poll;
	uint32_t depth;          /**< entries, power of two */
	uint32_t cqn;
	struct qpio_device *dev;
	uint32_t refcnt;         /**< QPs using this CQ */
	int socket_id;
	/** Set by the driver for CQs created with QPIO_CQ_FLAG_TIMESTAMP;
	 *  lib/rdma sets the others to a poll that writes ts 0. */
	qpio_poll_cq_ts_t poll_ts;
	uint32_t flags;          /**< enum qpio_cq_flags given at creation */
};

/** Shared receive queue: generic part. The first cache line is fast path. */
struct qpio_srq {
	qpio_srq_post_recv_t post_recv;
	uint32_t srq_num;        /**< unique per device */
	uint32_t refcnt;         /**< QPs attached to this SRQ */
	/* control path from here */
	struct qpio_device *dev;
	struct qpio_pd *pd;
	struct qpio_xrcd *xrcd;  /**< XRC SRQs: their domain, else NULL */
	struct qpio_cq *cq;      /**< XRC SRQs: their CQ, else NULL */
	uint32_t srq_type;       /**< enum qpio_srq_type */
};

/** Queue pair: generic part. The first cache line is fast path. */
struct qpio_qp {
	qpio_post_send_t post_send;
	qpio_post_recv_t post_recv;
	qpio_post_send_sge_t post_send_sge;
	qpio_post_recv_sge_t post_recv_sge;
	uint32_t qp_num;         /**< 24 bits */
	uint8_t state;           /**< enum qpio_qp_state, atomic access */
	uint8_t qp_type;         /**< enum qpio_qp_type */
	uint8_t sq_sig_all;
	uint8_t pad0;
	void *qp_context;
	/* control path from here */
	struct qpio_device *dev;
	struct qpio_pd *pd;
	struct qpio_cq *send_cq;
	struct qpio_cq *recv_cq;
	struct qpio_srq *srq;
	/* XRC target QPs (lib/rdma): the domain, and the handles that hold
	 * a registration (qpio_qp_open()), newest last */
	struct qpio_xrcd *xrcd;
	struct qpio_xrcd **xrc_regs;
	uint32_t nb_xrc_regs;
	uint32_t xrc_regs_cap;
};

#ifdef __cplusplus
}
#endif

#endif /* QPIO_RDMA_CORE_H */
