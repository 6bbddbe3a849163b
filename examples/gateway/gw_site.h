/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_GW_SITE_H
#define QPIO_GW_SITE_H

/*
 * One router half of qpio-gateway: the eth port of a site, its end of
 * the RC link, its routes and its neighbors. One lcore polls a site; the
 * two sites share nothing but the link.
 */

#include <stdint.h>

#include <rte_ether.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_mempool.h>

#include "gw.h"

#define GW_BURST 32
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

/**
 * Counters of one site. Every frame received (eth_rx + link_rx) lands in
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
	uint16_t icmp_ip_id;               /**< IPv4 ID of the next error */
	struct gw_neigh neigh[GW_MAX_NEIGH];
	struct rte_mbuf *eth_txb[GW_TX_BUF];
	uint16_t eth_txn;
	struct rte_mbuf *link_txb[GW_TX_BUF];
	uint16_t link_txn;
	struct gw_site_stats st;
};

/** One poll: a burst from each port, routed, and the tx buffers sent. */
void gw_site_poll(struct gw_site *s);

/** At exit: free the packets held for neighbors (counted in neigh_held)
 * and the frames left in the tx buffers (tx_drops). Calling it again
 * frees and counts nothing. */
void gw_site_release(struct gw_site *s);

#endif /* QPIO_GW_SITE_H */
