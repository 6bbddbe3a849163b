/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_NET_QP_PRIVATE_H
#define QPIO_NET_QP_PRIVATE_H

/*
 * The qp port driver: a packet port over any lib/rdma device.
 * Queue i of a port is QP i: rx queue i is its RQ, tx queue i its SQ.
 *
 * RC flow control is credit based (qp_credit.c): rx queue i publishes how
 * many receive WRs it has posted on its QP in a word of the port's credit
 * MR; tx queue i of the peer reads that word with an RDMA READ and sends
 * no more SENDs than the receives it knows are posted.
 *
 * The driver's files, one job each:
 *   qp_probe.c     devargs, probe, close, the ops table
 *   qp_queue.c     queue set-up and release
 *   qp_link.c      start and stop, the link to a peer= port
 *   qp_rx.c        receive burst and receive posting
 *   qp_tx.c        transmit bursts and completion reclaim
 *   qp_credit.c    RC credits (receiver's word, sender's READ)
 *   qp_cm.c        listen= / connect= ports: lib/cm control thread
 *   qp_cm_burst.c  their bursts: the data path's side of a link change
 *   qp_mcast.c     qp=ud multicast groups
 *   qp_stats.c     statistics and extended statistics
 */

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "port_driver.h"
#include "qpio_mr.h"
#include "qpio_rdma.h"
#include "qpio_log.h"

/* Work completions read per CQ poll. */
#define QP_PORT_POLL 64u
/* Frames handled per internal chunk of a burst (WR arrays on the stack). */
#define QP_PORT_CHUNK 64u
/* SGEs per receive post (the queue's receive WR array). */
#define QP_RX_SGES 256u
/* Largest scatter/gather list the adapter builds per WR. */
#define QP_PORT_MAX_SEGS 32u
/* Pools registered per port. */
#define QP_PORT_MAX_POOLS 8u
/* Bytes of the credit MR per queue: the rx queue's posted counter on one
 * cache line, the tx queue's READ landing word on the next. */
#define QP_CREDIT_STRIDE (2u * RTE_CACHE_LINE_SIZE)
/* Default UD qkey of qp=ud ports (both ends use it). */
#define QP_PORT_QKEY 0x7170696fu

enum qp_port_transport {
	QP_PORT_RC,
	QP_PORT_UD,
};

struct qp_port;

/* "rc" or "ud", as in the qp= devarg. */
static inline const char *
qp_transport_name(enum qp_port_transport t)
{
	return t == QP_PORT_UD ? "ud" : "rc";
}

/* Link word of a queue of a connected port (listen= or connect=,
 * qp_cm.c): a generation in the low bits, QP_LINK_UP while the datapath
 * may use the queue. */
#define QP_LINK_UP (1u << 31)

struct qp_cm;

/*
 * The hand-over words of one queue direction of a connected port
 * (qp_cm.c writes word, the queue's burst in qp_cm_burst.c ack and seen;
 * qp_link_publish(), qp_link_ack() and qp_link_read() below). Unused (0)
 * on other ports.
 */
struct qp_link {
	uint32_t word;                 /* control thread: generation, with
					* QP_LINK_UP while the link is up */
	uint32_t ack;                  /* polling lcore: the down word, once
					* the queue is drained */
	uint32_t seen;                 /* polling lcore: the word last
					* applied */
};

/*
 * The two hand-over points of a queue. qp_link_publish() (control thread,
 * release) orders the queue state it set up (receives posted, credits,
 * AH) before the new link word; it pairs with qp_link_read() at the start of
 * each burst (acquire). qp_link_ack() (datapath, release) orders the drained
 * queue state (posted 0, head == tail, mbufs freed) before the ack; it
 * pairs with qp_link_read() of the ack in qp_cm.c's progress() (acquire).
 */
static inline uint32_t
qp_link_read(const uint32_t *word)
{
	return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/* Control thread: a new link word (release). */
static inline void
qp_link_publish(uint32_t *word, uint32_t v)
{
	__atomic_store_n(word, v, __ATOMIC_RELEASE);
}

/* Polling lcore: the ack of a drained queue (release). */
static inline void
qp_link_ack(uint32_t *word, uint32_t v)
{
	__atomic_store_n(word, v, __ATOMIC_RELEASE);
}

/*
 * The peer of a connected tx queue's next link: staged by the control
 * thread (qp_cm.c) before it raises the link word, taken by the sending
 * lcore when its burst first sees that word (qp_cm_burst.c).
 */
struct qp_link_stage {
	uint64_t credit_addr;          /* RC: the peer rx queue's credit word */
	uint32_t credit_rkey;          /* RC: rkey of the peer's credit MR */
	uint32_t nb_desc;              /* the peer rx queue's receive WRs */
	uint32_t remote_qpn;           /* UD: the peer's QPN */
	struct qpio_ah *ah;            /* UD: towards the peer (the control
					* thread's, qp_cm.c) */
};

/*
 * The sender's side of RC credits (qp_credit.c): how many SENDs the peer
 * rx queue has receives for. The counters are free-running.
 */
struct qp_credit {
	uint8_t on;                    /* RC link up: SENDs need credits */
	uint8_t reading;               /* a READ of the peer's word is
					* outstanding */
	uint32_t sends;                /* SEND WRs posted on this QP */
	uint32_t peer_posted;          /* the peer's rq_posted, last seen */
	uint32_t low;                  /* READ when fewer credits than this */
	uint32_t read_wr;              /* WR number of the outstanding READ */
	uint32_t peer_nb_desc;         /* the peer's receive WRs (sanity
					* bound of a word read) */
	uint32_t lkey;                 /* of the landing word (credit MR) */
	uint32_t peer_rkey;
	uint64_t peer_addr;            /* the peer rx queue's credit word */
	volatile uint32_t *landing;    /* the READ lands here (credit MR) */
};

/* Counters of an rx queue, written by the polling lcore only
 * (qp_count()). */
struct qp_rxq_stats {
	uint64_t ipackets;
	uint64_t ibytes;
	uint64_t ierrors;
	uint64_t rx_nombuf;
	uint64_t wc_errors;
	uint64_t flushed;
	uint64_t stop_drops;           /* received, dropped by a stop */
	uint64_t mcast_self_drops;     /* group datagrams this port sent */
};

/* Counters of a tx queue, written by the sending lcore only
 * (qp_count()): those of every burst on one cache line, then those of
 * exceptions. */
struct qp_txq_stats {
	uint64_t opackets;
	uint64_t obytes;
	uint64_t bursts;
	uint64_t inline_pkts;
	uint64_t zero_copy_pkts;
	uint64_t flat_pkts;            /* posted by qpio_qp_post_send_sge() */
	uint64_t wr_pkts;              /* posted in a WR list */
	uint64_t oerrors;
	uint64_t copied_pkts;
	uint64_t oversize;
	uint64_t no_credit;            /* frames left with the caller */
	uint64_t credit_reads;
	uint64_t wc_errors;
	uint64_t flushed;              /* frames flushed, never sent */
	/* RNR NAKs of the queue's destroyed QPs, less the count of its QP
	 * at the last reset (control path: stop, stats reset) */
	uint64_t rnr_naks;
};

/*
 * Receive side of queue i. The fields the receive burst reads and writes
 * come first, on one cache line; those of the repost (once per
 * rearm_thresh frames) and a connected port's link words on the second;
 * the counters on the third.
 */
struct qp_rxq {
	struct qpio_cq *cq;
	struct rte_mempool *mp;
	struct rte_mbuf **elts;        /* nb_desc * nseg mbufs the driver owns */
	uint8_t *slot_posted;          /* per slot: 1 while on the RQ */
	uint64_t mbuf_init;            /* rearm_data of a received mbuf */
	uint32_t nseg;                 /* mbufs (SGEs) per receive WR */
	uint32_t grh;                  /* QPIO_GRH_LEN on UD, else 0 */
	uint32_t max_pkt_len;
	uint32_t posted;               /* receive WRs on the RQ now */
	uint32_t rearm_n;              /* completed slots not reposted */
	uint32_t rearm_thresh;         /* repost once this many completed */
	/* second cache line */
	struct qpio_qp *qp;            /* NULL while stopped */
	struct qpio_sge *rsge;         /* SGEs of rwr (QP_RX_SGES) */
	struct qpio_recv_wr *rwr;      /* QP_PORT_POLL receive WRs */
	volatile uint32_t *credit;     /* word in the credit MR (RC) */
	uint32_t rearm_start;          /* first completed slot not reposted */
	uint32_t nb_desc;              /* receive WRs, power of two */
	uint32_t lkey;                 /* the pool's lkey when it is one MR,
					* else QPIO_MR_INVALID_LKEY (lookup) */
	uint32_t rq_posted;            /* receive WRs posted on this QP
					* (free-running); published in *credit */
	struct qp_link link;           /* connected ports */
	uint32_t seg_room;             /* bytes per mbuf after the headroom */
	/* third */
	struct qp_rxq_stats stats;
	/* cold */
	struct qp_port *qport;
	uint32_t flat;                 /* nseg 1 and a driver that has it:
					* post through the flat burst
					* (qpio_qp_post_recv_sge()); set at
					* start */
	uint32_t cm_ready;             /* a link word the control thread
					* applied itself (queue acked) */
	uint16_t port_id;
	uint16_t qid;
	struct qpio_mr_cache mrc;      /* lkeys of a pool of several MRs */
} __rte_cache_aligned;

/*
 * Transmit side of queue i. The ring fields every burst reads and writes
 * come first, on one cache line; the credits and a connected port's link
 * words on the second; the counters (those of every burst first) on the
 * third and fourth, with the WR list; the MR lookup cache, then what the
 * bursts do not touch.
 */
struct qp_txq {
	struct qpio_qp *qp;            /* NULL while stopped */
	struct qpio_cq *cq;
	struct rte_mbuf **elts;        /* per WR: mbuf freed at completion */
	struct qpio_sge *sge;          /* QP_PORT_MAX_SEGS per WR of wr; the
					* flat burst's SGEs */
	uint32_t head;                 /* WRs posted (free-running) */
	uint32_t tail;                 /* WRs reclaimed (free-running) */
	uint32_t mask;
	uint32_t nb_desc;              /* send WRs, power of two */
	/* Entries of elts that hold an mbuf (zero-copy and copied frames;
	 * inline ones are freed at post): 0 lets the reclaim move the tail
	 * over a completed range without reading it. */
	uint32_t held;
	uint32_t inline_max;           /* bytes; frames up to it go inline */
	uint32_t max_pkt_len;
	uint8_t fast_free;             /* MBUF_FAST_FREE: inline frames go
					* straight back to their pool */
	/* second cache line */
	struct qp_credit credit;       /* RC */
	struct qp_link link;           /* connected ports */
	uint32_t max_sge;
	/* third and fourth */
	struct qp_txq_stats stats;
	struct qpio_send_wr *wr;       /* QP_PORT_CHUNK send WRs, constant
					* fields set by qp_txq_wr_init() */
	struct qpio_mr_cache mrc;      /* lkeys of zero-copy frames */
	/* cold */
	struct qp_port *qport;
	struct rte_mempool *bounce_mp; /* registered pool for copies */
	struct qpio_ah *ah;            /* UD destination, NULL on RC */
	uint32_t remote_qpn;           /* UD destination */
	uint16_t port_id;
	uint16_t qid;
	struct qp_link_stage stage;    /* connected ports */
} __rte_cache_aligned;

/* The fields of every burst on the lines the comments above give them. */
static_assert(offsetof(struct qp_rxq, rearm_thresh) + sizeof(uint32_t) <=
	      RTE_CACHE_LINE_SIZE, "qp_rxq: burst fields off line 0");
static_assert(offsetof(struct qp_rxq, seg_room) + sizeof(uint32_t) <=
	      2 * RTE_CACHE_LINE_SIZE, "qp_rxq: repost fields off line 1");
static_assert(offsetof(struct qp_rxq, stats) % RTE_CACHE_LINE_SIZE == 0 &&
	      sizeof(struct qp_rxq_stats) == RTE_CACHE_LINE_SIZE,
	      "qp_rxq: counters off line 2");
static_assert(offsetof(struct qp_txq, fast_free) < RTE_CACHE_LINE_SIZE,
	      "qp_txq: burst fields off line 0");
static_assert(offsetof(struct qp_txq, max_sge) + sizeof(uint32_t) <=
	      2 * RTE_CACHE_LINE_SIZE, "qp_txq: credits off line 1");
static_assert(offsetof(struct qp_txq, stats) == 2 * RTE_CACHE_LINE_SIZE &&
	      offsetof(struct qp_txq_stats, oerrors) < RTE_CACHE_LINE_SIZE,
	      "qp_txq: counters of every burst off line 2");

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
	uint8_t timeout;               /* qp=rc: local ACK timeout (IBA code) */
	uint8_t retry_cnt;             /* qp=rc: transport retries */
	uint16_t lid;
	uint32_t mtu_len;           /* the device port's active MTU, bytes */
	union qpio_gid gid;
	struct qpio_device_attr dattr;
	struct qp_pool_reg pools[QP_PORT_MAX_POOLS];
	uint8_t *credit_area;          /* QP_CREDIT_STRIDE per queue */
	struct qpio_mr *credit_mr;     /* local write, remote read */
	/* qp=ud,mcast=: the group every QP of the port joins (qp_mcast.c) */
	uint8_t mcast_on;
	uint8_t mcast_tx;              /* no peer=: tx goes to the group */
	uint16_t mlid;
	union qpio_gid mgid;
	uint32_t self_qpn[QPIO_PORT_MAX_QUEUES]; /* the port's QPs (mcast_tx) */
	uint16_t nb_self;
	struct qp_cm *cm;              /* listen= or connect=, else NULL */
};

/* The driver state of a qp port. */
static inline struct qp_port *
qp_priv(struct qpio_port *port)
{
	return port->priv;
}

/* Queue set-up and release (qp_queue.c). */
int qp_rx_queue_setup(struct qpio_port *port, uint16_t qid, uint16_t nb_desc,
		      int socket_id, struct rte_mempool *mp);
int qp_tx_queue_setup(struct qpio_port *port, uint16_t qid, uint16_t nb_desc,
		      int socket_id);
void qp_rx_queue_release(struct qpio_port *port, uint16_t qid);
void qp_tx_queue_release(struct qpio_port *port, uint16_t qid);
int qp_tx_done_cleanup(struct qpio_port *port, uint16_t qid,
		       uint32_t free_cnt);

/* Start, stop and the link to the peer port (qp_link.c). */
int qp_start(struct qpio_port *port);
int qp_stop(struct qpio_port *port);
void qp_link_get(struct qpio_port *port, struct qpio_port_link *link);

/* Bursts (qp_rx.c, qp_tx.c), chosen at start (qp_link.c). */
/* Receive burst. */
uint16_t qp_rx_burst(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts);
/* The same for a port that sends to its multicast group: datagrams the
 * port itself sent (it is a member too) are dropped and counted. */
uint16_t qp_rx_burst_mcast(void *queue, struct rte_mbuf **pkts,
			   uint16_t nb_pkts);
/* Transmit burst of a port whose QPs take the flat send burst
 * (qpio_qp_post_send_sge(): qp=rc on a driver that has it); frames it
 * cannot carry go in WR lists. */
uint16_t qp_tx_burst_flat(void *queue, struct rte_mbuf **pkts,
			  uint16_t nb_pkts);
/* Transmit burst of the other ports: every frame in a WR list. */
uint16_t qp_tx_burst_wr(void *queue, struct rte_mbuf **pkts,
			uint16_t nb_pkts);
/* Reclaim send completions; returns the number of mbufs freed. */
uint32_t qp_txq_reclaim(struct qp_txq *txq, uint32_t max_free);
/* Post every receive slot that is not on the RQ; -errno on failure. */
int qp_rxq_post_all(struct qp_rxq *rxq);
/* Set the fields of the queue's receive WRs that never change. */
void qp_rxq_wr_init(struct qp_rxq *rxq);
/* Set the fields of the queue's send WRs that never change (again after
 * the UD destination changed). */
void qp_txq_wr_init(struct qp_txq *txq);

/* Statistics ops (qp_stats.c). */
void qp_stats_get(struct qpio_port *port, struct qpio_port_stats *st);
void qp_stats_reset(struct qpio_port *port);
int qp_xstats_names(struct qpio_port *port, struct qpio_port_xstat_name *names,
		    unsigned int n);
int qp_xstats_values(struct qpio_port *port, uint64_t *v, unsigned int n);
/* RNR NAKs the device counted on txq's current QP (qpio_qp_stats_get()). */
uint64_t qp_txq_rnr_naks(const struct qp_txq *txq);

/* Multicast (qp_mcast.c). */
/* Parse mcast= (an MGID in ff00::/8) and mlid= (NULL: derived from the
 * MGID); mgid NULL: no group. */
int qp_mcast_parse(struct qp_port *qport, const char *mgid, const char *mlid);
/* At start, every QP in INIT: join the group; without peer=, bring the
 * QPs to RTS and point the tx queues at the group. */
int qp_mcast_start(struct qpio_port *port);

/* Connected ports (qp_cm.c, qp_cm_burst.c). */
int qp_cm_parse(struct qp_port *qport, const char *listen, const char *connect,
		uint32_t reconnect);
int qp_cm_start(struct qp_port *qport);
void qp_cm_stop(struct qp_port *qport);
void qp_cm_free(struct qp_port *qport);
int qp_cm_link_up(const struct qp_port *qport);
void qp_cm_xstats(const struct qp_port *qport, uint64_t *ups, uint64_t *downs,
		  uint64_t *failures);
/* A new link on rx queue rxq: post every receive (qp_cm_burst.c). */
void qp_cm_rx_prepare(struct qp_rxq *rxq);
/* The bursts of connected ports: a link change applied first, then
 * qp_rx_burst() / qp_tx_burst_flat() / qp_tx_burst_wr() while the link is
 * up, a drain while it is down. */
uint16_t qp_cm_rx_burst(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts);
uint16_t qp_cm_tx_burst_flat(void *queue, struct rte_mbuf **pkts,
			     uint16_t nb_pkts);
uint16_t qp_cm_tx_burst_wr(void *queue, struct rte_mbuf **pkts,
			   uint16_t nb_pkts);

/*
 * Queue counters: written only by the queue's lcore, read by any thread
 * (stats, xstats, telemetry) while the queue runs, so each store and read
 * is a relaxed atomic one (plain moves on x86: no cost on the datapath).
 */
#define qp_count(c, n) \
	__atomic_store_n((c), *(c) + (n), __ATOMIC_RELAXED)
#define qp_counter(c) __atomic_load_n(&(c), __ATOMIC_RELAXED)
#define qp_counter_clear(c) __atomic_store_n(&(c), 0, __ATOMIC_RELAXED)

typedef uint64_t __attribute__((__may_alias__)) qp_u64_alias;
/* Write data_off, refcnt, nb_segs and port of m with one 8-byte store
 * (rearm_data), as DPDK PMDs do with their mbuf initializer. */
static inline void
qp_mbuf_rearm(struct rte_mbuf *m, uint64_t rearm)
{
	*(qp_u64_alias *)(uintptr_t)&m->rearm_data = rearm;
}

/* Credits (qp_credit.c). The port's credit MR, at probe and close: */
int qp_credit_init(struct qp_port *qport);
void qp_credit_fini(struct qp_port *qport);
/* The receiver's side: */
void qp_credit_rxq_start(struct qp_port *qport, struct qp_rxq *rxq);
void qp_credit_clear(struct qp_port *qport, uint16_t qid);
/* The sender's side (struct qp_credit of tx queue qid): */
void qp_credit_off(struct qp_credit *cr);
void qp_credit_link(struct qp_credit *cr, const struct qp_port *qport,
		    uint16_t qid, const struct qp_port *peer,
		    const struct qp_rxq *peer_rxq);
void qp_credit_link_remote(struct qp_credit *cr, const struct qp_port *qport,
			   uint16_t qid, uint64_t peer_addr,
			   uint32_t peer_rkey, uint32_t peer_nb_desc);
void qp_credit_request(struct qp_txq *txq);
void qp_credit_read_done(struct qp_credit *cr, const struct qpio_wc *wc);

/* Publish the receives posted so far for the peer's credit READ: a
 * release store, so the peer never counts a receive not yet posted. */
static inline void
qp_credit_publish(struct qp_rxq *rxq)
{
	if (rxq->credit != NULL)
		__atomic_store_n(rxq->credit, rxq->rq_posted, __ATOMIC_RELEASE);
}

/* SENDs the peer has receives for. */
static inline uint32_t
qp_credit_avail(const struct qp_credit *cr)
{
	return cr->on ? cr->peer_posted - cr->sends : UINT32_MAX;
}

/* n SENDs were posted: n credits used. */
static inline void
qp_credit_spend(struct qp_credit *cr, uint32_t n)
{
	cr->sends += n;
}

/* Whether the send completion of WR number wr_id is the credit READ's
 * (qp_credit_read_done() takes it), not a frame's. */
static inline bool
qp_credit_is_read(const struct qp_credit *cr, uint64_t wr_id)
{
	return cr->reading && (uint32_t)wr_id == cr->read_wr;
}

extern int qp_logtype;
#define QP_LOG(level, ...) \
	QPIO_LOG_LINE(level, qp_logtype, "qpio.net.qp", __VA_ARGS__)

#endif /* QPIO_NET_QP_PRIVATE_H */
