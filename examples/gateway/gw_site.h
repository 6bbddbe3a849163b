/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_GW_SITE_H
#define QPIO_GW_SITE_H

/*
 * One router half of qpio-gateway: the eth port of a site, its end of
 * the RC link, its routes and its neighbors. A site has one context
 * (struct gw_site) per queue: context q polls and sends on queue q of
 * both ports, on one lcore. The contexts of a site share its route
 * tables (read only), its ICMP error bucket (under a lock) and what they
 * learn of neighbors (through rings); the two sites share nothing but
 * the link.
 */

#include <stdint.h>

#include <rte_ether.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "gw.h"

#define GW_BURST 32
/** Queues per port, so contexts per site, at most (--queues). */
#define GW_MAX_QUEUES 8
/** Neighbor news a context's learn ring holds. */
#define GW_LEARN_RING 256
#define GW_MAX_NEIGH 64
/** Packets held per unresolved neighbor; more drop the oldest, as
 * Linux's neighbor queue does (a ping's first two, or the fragments of
 * one datagram, arrive together). */
#define GW_NEIGH_HOLD 16
#define GW_TX_BUF 64
/** Fragments one IPv4 datagram may become: 64 (a 65535-byte datagram
 * at an MTU of 1060 or more); a datagram that would need more is
 * counted in mtu_drops. */
#define GW_MAX_FRAGS 64
/** ICMP errors per second and burst of a site (qpio-gateway's). */
#define GW_ICMP_PER_S 1000
#define GW_ICMP_BURST 50

/** A neighbor on the site's interface, learned or being resolved. */
struct gw_neigh {
	uint8_t family;            /**< 0 (free), AF_INET or AF_INET6 */
	uint8_t valid;             /**< mac known */
	uint32_t ip4;              /**< network order */
	uint8_t ip6[16];
	struct rte_ether_addr mac;
	/** packets held until resolved, oldest first */
	struct rte_mbuf *pending[GW_NEIGH_HOLD];
	uint8_t nb_pending;
	uint64_t asked_tsc;        /**< last ARP request / NS sent */
};

/** A neighbor one context of a site learned, told to the others (an
 *  element of their learn rings: 32 bytes). */
struct gw_learned {
	uint8_t family;            /**< AF_INET or AF_INET6 */
	uint8_t pad[3];
	uint32_t ip4;              /**< network order */
	uint8_t ip6[16];
	struct rte_ether_addr mac;
	uint8_t pad2[2];
};

/**
 * Counters of one site (of one context: a site's are the sums). Every frame received (eth_rx + link_rx) lands in
 * exactly one of fwd4, fwd6, arp_replies, nd_adverts, ttl_drops,
 * bad_drops, no_route, local, other and mtu_drops. What is lost after
 * the route was chosen is counted again, apart: neigh_drops and
 * neigh_held (a routed packet, or a fragment of one, that never met its
 * neighbor) and tx_drops (any frame a port did not take: routed ones,
 * ICMP errors, ARP and ND the gateway made).
 */
struct gw_site_stats {
	uint64_t eth_rx, link_rx;          /**< frames received */
	uint64_t eth_tx, link_tx;          /**< frames sent */
	uint64_t fwd4, fwd6;               /**< packets routed */
	uint64_t arp_replies, arp_requests;
	uint64_t nd_adverts, nd_solicits;
	uint64_t ttl_drops;                /**< TTL / hop limit 1 or 0 */
	uint64_t bad_drops;                /**< malformed headers */
	uint64_t no_route;                 /**< no route, or link -> link */
	uint64_t local;                    /**< for the gateway, not answered */
	uint64_t other;                    /**< neither IPv4, IPv6 nor ARP */
	uint64_t neigh_drops;              /**< oldest held packet dropped
						for a 17th, table full */
	uint64_t tx_drops;                 /**< port did not take them */
	uint64_t neigh_held;               /**< still waiting for their
						neighbor at exit, freed */
	uint64_t mtu_drops;                /**< above the next hop's MTU and
						not fragmented: IPv4 DF, IPv6,
						or fragmenting failed */
	uint64_t frag4;                    /**< of fwd4: sent as fragments */
	uint64_t frags;                    /**< fragments made of them */
	/* ICMP errors: messages the gateway made, not packets it received
	 * (the packet answered is counted in ttl_drops or no_route). */
	uint64_t icmp_time_exceeded;       /**< sent for ttl_drops */
	uint64_t icmp_unreach;             /**< sent for no_route */
	uint64_t icmp_too_big;             /**< sent for mtu_drops: IPv4
						fragmentation needed, IPv6
						packet too big */
	uint64_t icmp_limited;             /**< not sent: rate, or no mbuf */
	uint64_t icmp_barred;              /**< not sent: RFC 1812 4.3.2.7 /
						RFC 4443 2.4 (e) forbid it */
};

struct gw_site {
	char name;                         /**< 'a' or 'b' */
	uint16_t eth_port;
	uint16_t link_port;
	uint16_t queue;                    /**< of both ports: polled and
						sent on by this context */
	struct rte_ether_addr mac;         /**< of the eth port */
	struct rte_ether_addr link_mac;    /**< of the peer link port */
	const struct gw_site_conf *conf;
	struct rte_lpm *lpm4;
	struct rte_lpm6 *lpm6;
	struct rte_mempool *mp;            /**< ARP, NS, ICMP, fragments */
	/* Largest IP packet each way out, in bytes (an interface's MTU);
	 * 0 for no limit. */
	uint32_t eth_mtu;                  /**< the site's interface */
	uint32_t link_mtu;                 /**< the RC link */
	uint64_t resolve_gap;              /**< TSC cycles between asks */
	/* ICMP error rate: a token bucket of icmp_burst errors, one token
	 * back every icmp_gap TSC cycles (RFC 1812 4.3.2.8, RFC 4443 2.4
	 * (f)). icmp_burst 0 sends none. Set icmp_tokens to icmp_burst at
	 * start; icmp_tsc is the bucket's clock. */
	uint64_t icmp_gap;
	uint32_t icmp_burst;
	uint32_t icmp_tokens;
	uint64_t icmp_tsc;
	/* The bucket a context draws from: its own (icmp_from NULL), or
	 * that of the context icmp_from names (queue 0's of the site),
	 * under that context's icmp_lock, so that a site's rate is the
	 * same whatever its queues. */
	struct gw_site *icmp_from;
	rte_spinlock_t icmp_lock;
	uint16_t icmp_ip_id;               /**< IPv4 ID of the next error */
	/* Several queues: a neighbor one context learns (ARP, NS, NA) is
	 * told to the others through their learn_in rings (struct
	 * gw_learned elements, many producers, one consumer), which each
	 * reads at the start of its poll. With one queue learn_in is NULL
	 * and nb_learn_to 0. A full ring loses the news: that context asks
	 * for the neighbor itself. */
	struct rte_ring *learn_in;
	struct rte_ring *learn_to[GW_MAX_QUEUES - 1];
	unsigned int nb_learn_to;
	struct gw_neigh neigh[GW_MAX_NEIGH];
	struct rte_mbuf *eth_txb[GW_TX_BUF];
	uint16_t eth_txn;
	struct rte_mbuf *link_txb[GW_TX_BUF];
	uint16_t link_txn;
	struct gw_site_stats st;
};

/**
 * One poll of a context: the neighbors its site's other contexts
 * learned, a burst from queue s->queue of each port, routed, and the tx
 * buffers sent on that queue.
 *
 * Thread-safety: one lcore polls a context; contexts of one site may be
 * polled on different lcores at once (they share only what the struct
 * says).
 */
void gw_site_poll(struct gw_site *s);

/** At exit: free the packets held for neighbors (counted in neigh_held)
 * and the frames left in the tx buffers (tx_drops). Calling it again
 * frees and counts nothing. */
void gw_site_release(struct gw_site *s);

#endif /* QPIO_GW_SITE_H */
