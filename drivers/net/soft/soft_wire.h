/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SOFT_WIRE_H
#define SOFT_WIRE_H

/*
 * The soft NIC on the wire (soft_wire.c, soft_wire_rc.c): what the rest
 * of the driver calls. A device with sdev->wire != NULL is bound to a
 * DPDK ethdev.
 */
#include <sys/queue.h>

#include <rte_ether.h>
#include <rte_kvargs.h>
#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "qpio_port.h"
#include "soft_model.h"
#include "soft_wire_pkt.h"

/* GIDs of a wire device: fe80::<EUI-64 of its MAC>, then ::ffff:<ip=>,
 * then <ip6=>, those given. */
#define SOFT_WIRE_MAX_GID 3u

#define WIRE_BURST        32u
#define WIRE_LO           512u    /* frames looped back, waiting a step
				   * (as many as the port's tx ring) */
#define WIRE_NEIGH        16u     /* neighbour entries per device */
#define WIRE_HOLD         4u      /* datagrams waiting for one neighbour */
#define WIRE_RXD          512u
#define WIRE_TXD          512u
#define WIRE_POOL         4095u
#define WIRE_ARP_RETRY_MS 200u    /* a request again after */
#define WIRE_ARP_GIVEUP_MS 1000u  /* held datagrams dropped after */
#define WIRE_DEF_HOP      64u     /* IPv4 TTL when the AV's hop limit is 0 */
#define WIRE_PORT_NUM     1000    /* the device's eth port: eth1000 on */
#define WIRE_MAX_QUEUES   8u      /* queues=: port queue pairs a device */
#define WIRE_STEER_RING   1024u   /* frames handed to one queue at most */
/* a queue looks at the others every this many of its steps: one that
 * took none meanwhile is stepped by it (soft_wire_progress()) */
#define WIRE_ADOPT_STEPS  256u
/* The port's link, looked at by a queue's step every WIRE_LINK_STEPS
 * steps and by an interrupt-mode wait at its start and every
 * WIRE_LINK_MS of its sleep, read at most every WIRE_LINK_MS
 * milliseconds (link_watch()) */
#define WIRE_LINK_STEPS   64u
#define WIRE_LINK_MS      100u

enum neigh_state {
	NEIGH_FREE = 0,
	NEIGH_INCOMPLETE,   /* asked, no answer yet: datagrams held */
	NEIGH_REACHABLE,    /* learnt from ARP or a received packet */
	NEIGH_STATIC,       /* devargs neigh= */
};

struct wire_neigh {
	uint8_t ip[16];
	struct rte_ether_addr mac;
	uint8_t state;
	uint8_t nhold;
	uint8_t nreq;              /* INCOMPLETE: requests sent */
	uint64_t first_tsc;        /* INCOMPLETE: first request */
	uint64_t req_tsc;          /* INCOMPLETE: last request */
	struct rte_mbuf *hold[WIRE_HOLD];
	uint8_t hold_q[WIRE_HOLD]; /* the queue that held each */
};

/* Held frames released to their queue and not yet sent by it: at most
 * every hold of every entry (a queue takes its released frames before it
 * holds more) */
#define WIRE_REL (WIRE_NEIGH * WIRE_HOLD)

/*
 * What the queues of a device share: the neighbour table (under its own
 * lock when the device has more than one queue) and the queues.
 */
struct soft_wire_shared {
	rte_spinlock_t lock;       /* the neighbour table (nq > 1) */
	/* Moves whenever an entry changes (made, evicted, learnt with
	 * another MAC or state, freed): a queue's one-entry caches of the
	 * table (soft_wire txc_*, rxc_*) hold while it has not moved. */
	uint32_t gen;
	uint8_t n_incomplete;
	uint8_t neigh_next;        /* eviction cursor */
	/* nq > 1: bit q set while queue q has released frames (rel[q]):
	 * read by each step of q, on the line of n_incomplete */
	uint32_t rel_mask;
	uint64_t no_neigh_log_tsc; /* the last "no ARP/NDP answer" line */
	/* The port's link as last read (1 up), and the TSC before which no
	 * queue reads it again: a queue that takes link_lock (a trylock)
	 * with link_next passed reads it, and a change raises
	 * QPIO_EVENT_PORT_ERR or QPIO_EVENT_PORT_ACTIVE once */
	uint64_t link_next;
	rte_spinlock_t link_lock;  /* one read, compare and raise at a time */
	uint8_t link_up;
	struct wire_neigh neigh[WIRE_NEIGH];
	/* nq > 1: frames queue q held for a neighbour that another queue
	 * learnt: released to q, which sends them on its own port queue
	 * (its next step, or before its next packet to a learnt neighbour),
	 * so a QP's packets leave on its queue only; under the table's
	 * lock */
	uint8_t nrel[WIRE_MAX_QUEUES];
	struct rte_mbuf *rel[WIRE_MAX_QUEUES][WIRE_REL];
	struct soft_wire *qs[WIRE_MAX_QUEUES];
};

/*
 * One queue of a wire device (devargs queues=N: N of them, queue 0 is
 * sdev->wire). Each has port queue pair qid, its lock, its staged frames,
 * its counters and the RC/UC QPs whose CQs are of its completion vector;
 * the rest is the device's, the same in every queue (copied at attach).
 */
struct soft_wire {
	rte_spinlock_t lock;
	uint16_t port_id;
	uint16_t ntx;
	uint16_t qid;              /* this queue: port rx/tx queue qid */
	uint16_t nq;               /* the device's queues (queues=) */
	struct soft_dev *sdev;
	struct soft_wire_shared *sh;
	/* nq > 1: frames another queue received for the QPs of this one
	 * (multi-producer, taken by this queue's progress step) */
	struct rte_ring *steer;
	/* One-entry caches of the neighbour table, valid while sh->gen is
	 * *_gen: the MAC the last packet sent went to, for its destination
	 * GID (txc_dest), and the last sender learnt from a received
	 * packet, at its MAC (rxc_*): a stream to or from one peer skips
	 * the next-hop choice, the table and its lock. */
	uint8_t txc_ok, rxc_ok;
	uint32_t txc_gen, rxc_gen;
	uint8_t txc_dest[16], rxc_ip[16];
	struct rte_ether_addr txc_mac, rxc_mac;
	/* Steps of this queue (written in its step); what this queue saw
	 * of the others' at its last look, and its steps until the next */
	uint64_t steps;
	uint64_t seen[WIRE_MAX_QUEUES];
	uint32_t adopt_in;
	uint32_t link_in;          /* steps until link_watch() */
	uint8_t ngid;
	uint8_t has_v4;
	uint8_t v4[4];
	/* Routing (ip=ADDR/LEN, ip6=ADDR/LEN, gw=, gw6=): a destination
	 * outside the link's prefix goes to the gateway's MAC. A plen of
	 * 255: no prefix given, every address is on the link. */
	uint8_t v4_plen, v6_plen;
	uint8_t has_gw4, has_gw6;
	uint8_t v6[16];            /* ip6=, the prefix's address */
	uint8_t gw4[16], gw6[16];  /* as GIDs (IPv4-mapped for gw=) */
	uint64_t no_route_log_tsc; /* the last "no route" line */
	struct rte_ether_addr mac;
	uint32_t eth_mtu;          /* IP packet bytes */
	uint32_t path_mtu;         /* IB MTU bytes */
	enum qpio_mtu active_mtu;
	struct rte_mempool *mp;
	uint64_t ms_tsc;           /* TSC ticks per millisecond */
	uint8_t gids[SOFT_WIRE_MAX_GID][16];
	struct rte_mbuf *txb[WIRE_BURST];
	uint32_t txlen[WIRE_BURST];   /* tx_flush(): RoCEv2 bytes, 0 for ARP */
	/* Frames to an address of the device's own: looped back by
	 * lo_send() instead of sent, taken as received by the queue's next
	 * progress step (lo_input()) */
	uint16_t nlo;
	struct rte_mbuf *lo[WIRE_LO];
	/* Set by a progress step that completed a receive of an RC QP: the
	 * frames it staged (that message's ACK) stay staged, so the answer
	 * the application posts on reading the completion leaves in the
	 * same burst; the next doorbell, progress step, modify or destroy
	 * of an RC QP, or close sends them (soft_wire_progress()); never
	 * with ack_hold=0. */
	uint8_t tx_hold;
	uint8_t ack_hold;          /* ack_hold= (default 1; 0: never hold) */
	/* ack_coalesce= (default 1): the ACKs a step owes, one per QP, go
	 * at the end of its receive (soft_wire_rc.c ack_request()); the
	 * QPs that owe one */
	uint8_t ack_coalesce;
	struct soft_wire_rc *ack_list;
	/* IEEE 802.1Q (vlan=, pcp=): vlan_id 0 is an untagged device, which
	 * sends untagged frames and takes untagged and priority-tagged (VID
	 * 0) ones; else every frame it sends carries the tag vlan_tci (PCP
	 * << 13 | VID) and it takes only frames tagged with its VID. */
	uint16_t vlan_id;
	uint16_t vlan_tci;
	/* rx_intr=1: the port's rx queues raise interrupts, an lcore may
	 * sleep on this queue (qpio_soft_wire_queue_wait()); sleeping is
	 * set while one does, so a queue that hands it a frame wakes it */
	uint8_t rx_intr;
	uint8_t sleeping;
	uint8_t intr_keep;         /* the event fd was given: stays armed */
	/* rx_intr_spin=US: TSC cycles a wait keeps stepping before it
	 * arms the interrupt and sleeps (0: it sleeps at once) */
	uint64_t spin_tsc;
	struct qpio_soft_wire_stats st;
	char port_name[QPIO_PORT_NAME_LEN];
	/* RC and UC QPs of the device (soft_wire_rc.c): their timers run
	 * in the progress step */
	TAILQ_HEAD(, soft_wire_rc) rcs;
};

/* The UDP source port of a flow between two QPs (RoCEv2's entropy, Annex
 * A17.4.5.1): one per pair, in the range rxe uses. */
static inline uint16_t
soft_wire_sport(uint32_t a, uint32_t b)
{
	return (uint16_t)(0xc000u | ((a ^ b) & 0x3fffu));
}

/* Probe: bind sdev to the ethdev of devargs wire= (ip=, ip6=, neigh=,
 * mtu=), configure and start its port. @return 0 (also without wire=),
 * or -EINVAL (bad or missing keys, logged), -ENODEV (no such ethdev),
 * -EEXIST, -ENOMEM, or the port's error. */
int soft_wire_attach(struct soft_dev *sdev, const struct rte_kvargs *kv);
/* Close: the port closed, every mbuf of the device freed. */
void soft_wire_detach(struct soft_dev *sdev);
/* The port attributes and GIDs of a wire device (soft_port_query(),
 * soft_gid_query()). */
void soft_wire_port_query(const struct soft_dev *sdev,
			  struct qpio_port_attr *attr);
int soft_wire_gid(const struct soft_dev *sdev, unsigned int index,
		  union qpio_gid *gid);
/* The progress step of queue w: the frames other queues handed to it,
 * one receive burst of its port queue, its timers, its transmit.
 * @return the frames taken (0 when another lcore was in the step). */
int soft_wire_progress(struct soft_wire *w);
/* The queue of completion vector v of a wire device (v below nq). */
static inline struct soft_wire *
soft_wire_queue(const struct soft_wire *w, uint32_t v)
{
	return w->sh->qs[v];
}
/* Wait until no progress step of any queue of the device of queue w is
 * in progress (each queue's lock taken and released): a QP taken out of
 * the device's table before is found by none (its destroy). */
void soft_wire_quiesce(struct soft_wire *w);
/* Transmit what a run of an SQ of queue w staged. */
void soft_wire_tx_flush(struct soft_wire *w);
/* The run of a UD SQ of a wire device: the run, then its frames sent. */
void soft_sq_execute_ud_wire(struct soft_qp *qp);

/* The IP and Ethernet source part of h for a path from GID sgid (an
 * index of w's table) to dgid. @return 0, or -1 when the two GIDs are
 * not of one IP version. */
int soft_wire_path(const struct soft_wire *w, unsigned int sgid,
		   const uint8_t dgid[16], uint8_t tclass, uint8_t hop_limit,
		   uint32_t flow_label, struct soft_wire_hdr *h);
/* Build the packet of h with its payload into an mbuf of the device and
 * stage it for dgid (held while the neighbour is asked for). w->lock
 * held. @return 0, or -1 when the pool is empty (counted). */
int soft_wire_send_locked(struct soft_wire *w, const uint8_t dgid[16],
			  const struct soft_wire_hdr *h,
			  const struct soft_wire_seg *seg, unsigned int nseg,
			  uint32_t len);
/* Hand what is staged to the port (w->lock held). */
void soft_wire_flush_locked(struct soft_wire *w);
/* The MAC of dgid is about to be needed (an RC or UC QP's path was set):
 * ask ARP for it now when it is not known, as the kernel resolves a
 * QP's destination MAC at RTR, so that the first burst is not held (4
 * frames) and dropped (the rest) while the answer comes. w->lock held. */
void soft_wire_neigh_ask_locked(struct soft_wire *w, const uint8_t dgid[16]);

/* soft_wire_rc.c: RC and UC over the wire. */
struct soft_wire_rc;
/* A new RC or UC QP of a wire device: its transport state. @return 0 or
 * -ENOMEM. */
int soft_wire_rc_create(struct soft_qp *qp, bool uc);
/* Its destroy (nothing without one). */
void soft_wire_rc_destroy(struct soft_qp *qp);
/* A modify of a wire RC/UC QP was applied (attributes in qp->attr):
 * the path, the PSNs, a reset's clean state. */
void soft_wire_rc_modify(struct soft_qp *qp, int mask,
			 enum qpio_qp_state next);
/* Before a modify of a wire RC/UC QP applies its AV: a RoCE path must be
 * global and of one IP version. @return 0 or -EINVAL (logged). */
int soft_wire_rc_av_check(const struct soft_qp *qp,
			  const struct qpio_ah_attr *ah);
/* The run of a wire RC/UC QP's SQ (struct soft_qp sq_execute). */
void soft_sq_execute_rc_wire(struct soft_qp *qp);
/* A parsed RC/UC packet for qp (w->lock held). @return 0, or -1 when
 * the QP is in no state to take it (a response outside RTS and SQD, a
 * request outside RTR, RTS, SQD and SQE): nothing done. */
int soft_wire_rc_input(struct soft_wire *w, struct soft_qp *qp,
		       const struct soft_wire_pkt *p);
/* The QP enters ERR: a receive a UC QP kept for its next message
 * completes with FLUSH (any context; no lock taken). */
void soft_wire_rc_rq_flush(struct soft_qp *qp);
/* The earliest deadline (TSC) of the RC/UC timers of queue w, 0 when
 * none runs (w->lock held). */
uint64_t soft_wire_rc_next_tsc(struct soft_wire *w);
/* The RC timers of the device (w->lock held). */
void soft_wire_rc_timers(struct soft_wire *w);
/* The coalesced ACKs the QPs of queue w owe, sent (w->lock held; the end
 * of a progress step's receive). */
void soft_wire_rc_acks_flush(struct soft_wire *w);

#endif /* SOFT_WIRE_H */
