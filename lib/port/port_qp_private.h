/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_PORT_QP_PRIVATE_H
#define QPIO_PORT_QP_PRIVATE_H

/*
 * The qp-port adapter: a packet port over any lib/rdma device.
 * Queue i of a port is QP i: rx queue i is its RQ, tx queue i its SQ.
 */

#include <stdint.h>

#include <rte_mbuf.h>

#include "port_driver.h"
#include "qpio_mr.h"
#include "qpio_rdma.h"

/* Work completions read per CQ poll. */
#define QP_PORT_POLL 64u
/* Frames handled per internal chunk of a burst (WR arrays on the stack). */
#define QP_PORT_CHUNK 64u
/* Largest scatter/gather list the adapter builds per WR. */
#define QP_PORT_MAX_SEGS 32u
/* Pools registered per port. */
#define QP_PORT_MAX_POOLS 8u
/* Default UD qkey of qp=ud ports (both ends use it). */
#define QP_PORT_QKEY 0x7170696fu

enum qp_port_transport {
	QP_PORT_RC,
	QP_PORT_UD,
};

struct qp_port;

/* Receive side of queue i. */
struct qp_rxq {
	struct qpio_qp *qp;            /* NULL while stopped */
	struct qpio_cq *cq;
	struct rte_mempool *mp;
	struct qp_port *port;
	uint16_t port_id;
	uint16_t qid;
	uint32_t nb_desc;              /* receive WRs, power of two */
	uint32_t nseg;                 /* mbufs (SGEs) per receive WR */
	uint32_t seg_room;             /* bytes per mbuf after the headroom */
	uint32_t max_pkt_len;
	uint32_t grh;                  /* QPIO_GRH_LEN on UD, else 0 */
	uint32_t posted;               /* receive WRs on the RQ now */
	uint32_t rearm_start;          /* first completed slot not reposted */
	uint32_t rearm_n;              /* completed slots not reposted */
	uint32_t rearm_thresh;         /* repost once this many completed */
	uint8_t *slot_posted;          /* per slot: 1 while on the RQ */
	struct rte_mbuf **elts;        /* nb_desc * nseg mbufs the driver owns */
	struct qpio_mr_cache mrc;
	/* counters, written by the polling lcore only */
	uint64_t ipackets;
	uint64_t ibytes;
	uint64_t ierrors;
	uint64_t rx_nombuf;
	uint64_t wc_errors;
	uint64_t flushed;
	uint64_t stop_drops;           /* received, dropped by a stop */
} __rte_cache_aligned;

/* Transmit side of queue i. */
struct qp_txq {
	struct qpio_qp *qp;            /* NULL while stopped */
	struct qpio_cq *cq;
	struct qp_port *port;
	struct rte_mempool *bounce_mp; /* registered pool for copies */
	uint16_t port_id;
	uint16_t qid;
	uint32_t nb_desc;              /* send WRs, power of two */
	uint32_t mask;
	uint32_t head;                 /* WRs posted (free-running) */
	uint32_t tail;                 /* WRs reclaimed (free-running) */
	uint32_t inline_max;           /* bytes; frames up to it go inline */
	uint32_t max_pkt_len;
	uint32_t max_sge;
	uint32_t remote_qpn;           /* UD destination */
	struct qpio_ah *ah;            /* UD destination, NULL on RC */
	struct rte_mbuf **elts;        /* per WR: mbuf freed at completion */
	struct qpio_mr_cache mrc;
	/* counters, written by the sending lcore only */
	uint64_t opackets;
	uint64_t obytes;
	uint64_t oerrors;
	uint64_t inline_pkts;
	uint64_t zero_copy_pkts;
	uint64_t copied_pkts;
	uint64_t oversize;
	uint64_t wc_errors;
	uint64_t flushed;              /* frames flushed, never sent */
	uint64_t bursts;
} __rte_cache_aligned;

/* A registered mempool of the port's PD. */
struct qp_pool_reg {
	struct rte_mempool *mp;
	struct qpio_mr_mempool *reg;
	uint32_t refs;
};

/* Driver state of one qp port. */
struct qp_port {
	struct qpio_port *port;
	struct qpio_device *dev;
	int own_dev;                   /* created by this port */
	struct qpio_pd *pd;
	enum qp_port_transport transport;
	char peer[QPIO_PORT_NAME_LEN]; /* peer port name, "" if none */
	uint32_t inline_max;
	uint32_t qkey;
	uint16_t lid;
	union qpio_gid gid;
	struct qpio_device_attr dattr;
	struct qp_pool_reg pools[QP_PORT_MAX_POOLS];
};

uint16_t qp_port_rx_burst(void *queue, struct rte_mbuf **pkts,
			  uint16_t nb_pkts);
uint16_t qp_port_tx_burst(void *queue, struct rte_mbuf **pkts,
			  uint16_t nb_pkts);
/* Reclaim send completions; returns the number of mbufs freed. */
uint32_t qp_txq_reclaim(struct qp_txq *txq, uint32_t max_free);
/* Post every receive slot that is not on the RQ; -errno on failure. */
int qp_rxq_post_all(struct qp_rxq *rxq);

extern int qpio_port_logtype;
#define QP_LOG(level, ...) \
	rte_log(RTE_LOG_ ## level, qpio_port_logtype, \
		RTE_FMT("qpio.lib.port: " RTE_FMT_HEAD(__VA_ARGS__,) "\n", \
			RTE_FMT_TAIL(__VA_ARGS__,)))

#endif /* QPIO_PORT_QP_PRIVATE_H */
