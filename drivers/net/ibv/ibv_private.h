/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef IBVD_PRIVATE_H
#define IBVD_PRIVATE_H

/*
 * libibverbs driver objects. Static names use the prefix "ibvd_" (ibv
 * driver), because "ibv_" belongs to libibverbs.
 *
 * Each qpio object embeds its generic part first and holds the verbs
 * object it stands for. Queue bookkeeping (wr_id rings, free slots) is
 * kept here rather than left to the provider, so that every device
 * refuses a full queue, an oversized inline payload or a bad opcode at
 * the same point, with the same code, as lib/rdma documents.
 */
#include <stdalign.h>
#include <stddef.h>

#include <infiniband/verbs.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_log.h>

#include "qpio_config.h"
#include "rdma_driver.h"
#include "ibv_defs.h"
#include "qpio_log.h"

extern int ibvd_logtype;

#define IBVD_LOG(level, ...) \
	QPIO_LOG_LINE(level, ibvd_logtype, "qpio.net.ibv", __VA_ARGS__)

/* qpio's scatter/gather entry and work completion are laid out as the
 * verbs ones, so lists pass to the provider and completions come back
 * from it without a copy. */
static_assert(sizeof(struct qpio_sge) == sizeof(struct ibv_sge), "sge size");
static_assert(offsetof(struct qpio_sge, addr) == offsetof(struct ibv_sge, addr), "sge addr");
static_assert(offsetof(struct qpio_sge, length) == offsetof(struct ibv_sge, length), "sge length");
static_assert(offsetof(struct qpio_sge, lkey) == offsetof(struct ibv_sge, lkey), "sge lkey");
static_assert(sizeof(struct qpio_wc) == sizeof(struct ibv_wc), "wc size");
static_assert(offsetof(struct qpio_wc, status) == offsetof(struct ibv_wc, status), "wc status");
static_assert(offsetof(struct qpio_wc, opcode) == offsetof(struct ibv_wc, opcode), "wc opcode");
static_assert(offsetof(struct qpio_wc, vendor_err) == offsetof(struct ibv_wc, vendor_err), "wc vendor_err");
static_assert(offsetof(struct qpio_wc, byte_len) == offsetof(struct ibv_wc, byte_len), "wc byte_len");
static_assert(offsetof(struct qpio_wc, imm_data) == offsetof(struct ibv_wc, imm_data), "wc imm_data");
static_assert(offsetof(struct qpio_wc, qp_num) == offsetof(struct ibv_wc, qp_num), "wc qp_num");
static_assert(offsetof(struct qpio_wc, src_qp) == offsetof(struct ibv_wc, src_qp), "wc src_qp");
static_assert(offsetof(struct qpio_wc, wc_flags) == offsetof(struct ibv_wc, wc_flags), "wc flags");
static_assert(offsetof(struct qpio_wc, pkey_index) == offsetof(struct ibv_wc, pkey_index), "wc pkey");
static_assert(offsetof(struct qpio_wc, slid) == offsetof(struct ibv_wc, slid), "wc slid");
static_assert(offsetof(struct qpio_wc, sl) == offsetof(struct ibv_wc, sl), "wc sl");
static_assert(offsetof(struct qpio_wc, dlid_path_bits) == offsetof(struct ibv_wc, dlid_path_bits), "wc dlid_path_bits");

/* ibv wr_id of a WR this driver posts: direction, reset generation and
 * the free-running slot counter of its queue. */
#define IBVD_WRID_RECV (1ull << 63)
/* With IBVD_WRID_RECV: a receive of an XRC SRQ, whose index in its CQ's
 * table sits where the generation does (the completion names the XRC
 * target QP, not a QP of the CQ). */
#define IBVD_WRID_XRC  (1ull << 62)

/* Generation bits of a wr_id: 30, below IBVD_WRID_XRC. */
#define IBVD_WRID_GEN_MASK 0x3fffffffu

static inline uint64_t
ibvd_wrid(uint64_t dir, uint32_t gen, uint32_t slot)
{
	return dir | ((uint64_t)(gen & IBVD_WRID_GEN_MASK) << IBVD_WRID_GEN_SHIFT) |
		slot;
}

struct ibvd_qp;

/* Device: one port of one verbs device. */
struct ibvd_dev {
	struct qpio_device *qdev;
	struct ibv_context *ctx;
	struct ibv_device_attr dattr;
	char ibdev[IBV_SYSFS_NAME_MAX];
	uint8_t port;            /* verbs port number behind qpio port 1 */
	uint8_t gid_index;       /* verbs GID index behind qpio GID index 0 */
	uint8_t roce;            /* Ethernet link layer: AVs need a GRH */
	uint32_t next_pdn;
	uint32_t next_cqn;
};

struct ibvd_pd {
	struct qpio_pd base;
	struct ibv_pd *pd;
};

struct ibvd_mr {
	struct qpio_mr base;
	struct ibv_mr *mr;
};

/* Completion queue. qps lists the QPs that use it, for the wr_id lookup
 * of each completion; last_qp short-cuts the common one-QP case. */
struct ibvd_cq {
	struct qpio_cq base;
	struct ibv_cq *cq;
	struct ibv_comp_channel *channel; /* CQ events: non-blocking fd */
	struct ibvd_qp *last_qp;
	struct ibvd_qp **qps;
	uint32_t nb_qps;
	uint32_t qps_room;
	struct ibvd_dev *idev;
	/* XRC SRQs completing into it, by the index their wr_ids carry */
	struct ibvd_srq *xrc_srqs[IBVD_CQ_XRC_SRQS];
	uint64_t empty_polls;     /* poller only; telemetry reads */
};

/* Send queue bookkeeping; owner lcore only. */
struct ibvd_sq {
	struct ibv_send_wr *wrs;  /* depth entries: the chain of one burst */
	uint64_t *wrid;           /* user wr_id per slot */
	uint8_t *opcode;          /* enum qpio_wc_opcode per slot */
	uint32_t depth;           /* entries, power of two */
	uint32_t mask;
	uint32_t pi;              /* WRs posted (free-running) */
	uint32_t tail;            /* WRs completed (free-running) */
	uint32_t max_sge;
	uint32_t max_inline;      /* bytes */
};

/* Receive queue bookkeeping; owner lcore only. */
struct ibvd_rq {
	struct ibv_recv_wr *wrs;
	uint64_t *wrid;
	uint32_t depth;
	uint32_t mask;
	uint32_t pi;
	uint32_t tail;
	uint32_t max_sge;
};

/* Multicast groups one QP may join on the ibv driver. */
#define IBVD_MCAST_MAX 16u

struct ibvd_qp {
	struct qpio_qp base;
	struct ibv_qp *qp;
	struct ibvd_srq *srq;     /* receives complete through its slots */
	uint32_t gen;             /* bumped on every move to RESET */
	uint32_t dest_qpn;        /* RC/UC: the peer, reported as src_qp */
	uint8_t max_rd_atomic;    /* RC: READ and atomics need it nonzero */
	struct ibvd_sq sq;
	struct ibvd_rq rq;
	struct qpio_qp_cap cap;   /* the caps qpio enforces and reports */
	struct ibvd_dev *idev;
	struct ibvd_xrcd *xrcd;   /* XRC_RECV: the handle it was created by */
	/* counters: owner lcore only */
	uint64_t post_send_calls;
	uint64_t post_recv_calls;
	uint64_t stale_wc;
	/* completions by status: the CQ's poller only */
	uint64_t flushed;
	uint64_t rnr_exceeded;
	uint64_t retry_exceeded;
	/* UD: the multicast groups attached (ibv_mcast.c), so that a second
	 * attach and a detach of a group not attached get lib/rdma's codes
	 * whatever the provider answers. */
	struct {
		union qpio_gid gid;
		uint16_t lid;
	} mcast[IBVD_MCAST_MAX];
	uint32_t nb_mcast;
};

/* Address handle for UD work requests. */
struct ibvd_ah {
	struct qpio_ah base;
	struct ibv_ah *ah;
	struct ibvd_pd *pd;
};

/* Shared receive queue. */
struct ibvd_srq {
	struct qpio_srq base;
	struct ibv_srq *srq;
	struct ibvd_pd *pd;
	struct ibv_recv_wr *wrs;  /* max_wr entries: the chain of one burst */
	uint64_t *wrid;           /* user wr_id per slot */
	uint32_t *free_slots;     /* stack of free slots */
	uint32_t nb_free;
	uint32_t max_wr;          /* slots in circulation (free + in use) */
	uint32_t cap;             /* entries of wrs, wrid, free_slots */
	uint32_t fresh;           /* slots [fresh, cap) never handed out */
	uint32_t max_sge;
	uint64_t wrid_base;       /* of its receives' wr_ids, slot added */
	struct ibvd_cq *xrc_cq;   /* XRC SRQs: their CQ */
	uint32_t xrc_index;       /* XRC SRQs: index in xrc_cq->xrc_srqs */
};

/* XRC domain handle. A domain named by a file is the same for every
 * handle of that file (the kernel's inode table): its (dev, ino). */
struct ibvd_xrcd {
	struct qpio_xrcd base;
	struct ibv_xrcd *xrcd;
	uint64_t st_dev;
	uint64_t st_ino;          /* 0: private (fd -1) */
};

static inline struct ibvd_dev *to_idev(const struct qpio_device *dev)
{ return (struct ibvd_dev *)dev->priv; }
static inline struct ibvd_qp *to_iqp(struct qpio_qp *qp)
{ return (struct ibvd_qp *)qp; }
static inline struct ibvd_cq *to_icq(struct qpio_cq *cq)
{ return (struct ibvd_cq *)cq; }
static inline struct ibvd_pd *to_ipd(struct qpio_pd *pd)
{ return (struct ibvd_pd *)pd; }
static inline struct ibvd_srq *to_isrq(struct qpio_srq *srq)
{ return (struct ibvd_srq *)srq; }

/* qpio GID index <-> verbs GID index: index 0 and the devargs gid_index
 * trade places, every other index maps to itself. */
static inline uint8_t
ibvd_gid_map(const struct ibvd_dev *idev, unsigned int index)
{
	if (index == 0)
		return idev->gid_index;
	if (index == idev->gid_index)
		return 0;
	return (uint8_t)index;
}

/* ibv.c */
void ibvd_async_drain(struct ibvd_dev *idev);
void ibvd_async_poll(struct qpio_device *dev);
int ibvd_async_event_fd(const struct qpio_device *dev);

/* ibv_mr.c */
struct qpio_pd *ibvd_pd_alloc(struct qpio_device *dev);
int ibvd_pd_free(struct qpio_pd *pd);
struct qpio_mr *ibvd_mr_reg(struct qpio_pd *pd, void *addr, size_t length,
			    unsigned int access);
int ibvd_mr_dereg(struct qpio_mr *mr);

/* ibv_cq.c */
struct qpio_cq *ibvd_cq_create(struct qpio_device *dev, uint32_t cqe,
			       int socket_id, uint32_t flags,
			       uint32_t comp_vector);
int ibvd_cq_destroy(struct qpio_cq *cq);
int ibvd_cq_resize(struct qpio_cq *cq, uint32_t cqe);
int ibvd_cq_req_notify(struct qpio_cq *cq, int solicited_only);
int ibvd_cq_event_fd(const struct qpio_cq *cq);
int ibvd_cq_ack_events(struct qpio_cq *cq);
int ibvd_cq_attach(struct ibvd_cq *cq, struct ibvd_qp *qp);
void ibvd_cq_detach(struct ibvd_cq *cq, struct ibvd_qp *qp);

/* ibv_qp.c */
/* Free a QP's memory (not its verbs QP). */
void ibvd_qp_free(struct ibvd_qp *qp);
struct qpio_qp *ibvd_qp_create(struct qpio_pd *pd,
			       struct qpio_qp_init_attr *ia);
int ibvd_qp_destroy(struct qpio_qp *qp);
/* ibv_mcast.c */
int ibvd_mcast_attach(struct qpio_qp *qp, const union qpio_gid *gid,
		      uint16_t lid);
int ibvd_mcast_detach(struct qpio_qp *qp, const union qpio_gid *gid,
		      uint16_t lid);
int ibvd_qp_modify(struct qpio_qp *qp, const struct qpio_qp_attr *attr,
		   int mask, enum qpio_qp_state cur, enum qpio_qp_state next);
int ibvd_qp_query(struct qpio_qp *qp, struct qpio_qp_attr *attr,
		  struct qpio_qp_init_attr *ia);
int ibvd_ah_attr_to_ibv(const struct ibvd_dev *idev,
			const struct qpio_ah_attr *in, struct ibv_ah_attr *out,
			uint32_t qpn);

/* ibv_tx.c / ibv_rx.c: the fast path */
/* The flat send burst (RC, UC; other QP types get lib/rdma's
 * qpio_rdma_post_send_sge_refuse()). */
uint16_t ibvd_post_send_sge(struct qpio_qp *qp, const struct qpio_sge *sges,
			    uint16_t n, uint64_t wr_id, unsigned int flags,
			    int *err);
uint16_t ibvd_post_send(struct qpio_qp *qp, const struct qpio_send_wr *wrs,
			uint16_t n, int *err);
uint16_t ibvd_post_recv(struct qpio_qp *qp, const struct qpio_recv_wr *wrs,
			uint16_t n, int *err);
/* qpio_qp_post_recv_sge(): receive i is the one-SGE WR
 * { wr_id + i, &sges[i], 1 } of ibvd_post_recv(). */
uint16_t ibvd_post_recv_sge(struct qpio_qp *qp, const struct qpio_sge *sges,
			    uint16_t n, uint64_t wr_id, int *err);
uint16_t ibvd_cq_poll(struct qpio_cq *cq, struct qpio_wc *wc, uint16_t n);
void ibvd_qp_stats_get(const struct qpio_qp *qp, struct qpio_qp_stats *st);
/* An SRQ's slot bookkeeping (wrs, wr_ids, the free stack of max_wr
 * slots, rounded up to a power of two; max_sge at least 1), NULL when out
 * of memory; and its free (ibv_srq.c, for basic and XRC SRQs). */
struct ibvd_srq *ibvd_srq_bufs_alloc(uint32_t max_wr, uint32_t max_sge);
void ibvd_srq_bufs_free(struct ibvd_srq *srq);
void ibvd_cq_stats_get(const struct qpio_cq *cq, struct qpio_cq_stats *st);

/* ibv_ah.c: address handles */
struct qpio_ah *ibvd_ah_create(struct qpio_pd *pd,
			       const struct qpio_ah_attr *attr);
int ibvd_ah_destroy(struct qpio_ah *ah);

/* ibv_xrc.c: XRC domains, XRC SRQs, XRC QPs */
int ibvd_dev_query_ex(const struct qpio_device *dev,
		      struct qpio_device_attr_ex *attr);
struct qpio_xrcd *ibvd_xrcd_open(struct qpio_device *dev, int fd, int oflags);
int ibvd_xrcd_close(struct qpio_xrcd *xrcd);
int ibvd_xrcd_has_qp(const struct qpio_xrcd *xrcd, const struct qpio_qp *qp);
struct qpio_srq *ibvd_srq_create_xrc(struct qpio_pd *pd, struct qpio_xrcd *xrcd,
				     struct qpio_cq *cq,
				     struct qpio_srq_attr *attr);
/* XRC_SEND / XRC_RECV QPs through ibv_create_qp_ex (ibvd_qp_create()). */
struct qpio_qp *ibvd_qp_create_xrc(struct qpio_pd *pd,
				   struct qpio_qp_init_attr *ia);
/* Take an XRC SRQ out of its CQ's table (ibvd_srq_destroy()). */
void ibvd_srq_xrc_unlink(struct ibvd_srq *srq);
/* A completion of cq whose wr_id names an XRC SRQ receive: into o.
 * @return 1 if o was written, 0 if the SRQ is gone. */
int ibvd_xrc_wc(struct ibvd_cq *cq, const struct ibv_wc *in,
		struct qpio_wc *o);
uint16_t ibvd_post_none(struct qpio_qp *qp, const struct qpio_send_wr *wrs,
			uint16_t n, int *err);
uint16_t ibvd_post_recv_none(struct qpio_qp *qp, const struct qpio_recv_wr *wrs,
			     uint16_t n, int *err);

/* ibv_srq.c: shared receive queues */
struct qpio_srq *ibvd_srq_create(struct qpio_pd *pd,
				 struct qpio_srq_attr *attr);
int ibvd_srq_modify(struct qpio_srq *srq, const struct qpio_srq_attr *attr,
		    int mask);
int ibvd_srq_query(struct qpio_srq *srq, struct qpio_srq_attr *attr);
int ibvd_srq_destroy(struct qpio_srq *srq);
/* A receive completion of a QP attached to srq: the user's wr_id of the
 * slot, which becomes free again. */
static inline uint64_t
ibvd_srq_complete(struct ibvd_srq *srq, uint32_t slot)
{
	srq->free_slots[srq->nb_free++] = slot;
	return srq->wrid[slot];
}
uint16_t ibvd_srq_post_recv(struct qpio_srq *srq,
			    const struct qpio_recv_wr *wrs, uint16_t n,
			    int *err);

#endif /* IBVD_PRIVATE_H */
