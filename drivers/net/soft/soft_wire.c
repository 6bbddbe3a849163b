/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC on the wire: a soft device bound to a DPDK ethdev (devargs
 * wire=) sends its UD datagrams as RoCEv2 packets (soft_wire_pkt.c) on
 * that port and delivers the RoCEv2 packets it receives there to its UD
 * QPs. The binding (the port, its mbuf pool, the GID table, the
 * neighbours), the progress step that receives (run by the polls of the
 * device's CQs), ARP, and the send side of the UD model.
 *
 * Queues (devargs queues=N): port queue pair q is device queue q, the
 * queue of the CQs of completion vector q and of the QPs using them.
 * Every frame and datagram of a queue goes through its lock, so two
 * lcores never burst on one port queue at once; a progress step that
 * finds the lock taken returns: the holder is doing the work. The peer
 * chooses the UDP source port that RSS spreads its packets by, so a
 * packet may come in on another queue than its QP's: that queue hands it
 * over (the steer ring of the QP's queue), and only the QP's queue reads
 * it. The neighbour table is the device's: with more than one queue it
 * has a lock of its own, taken inside a queue's (nt_lock()).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_net_crc.h>

#include "port_driver.h"
#include "qpio_port.h"
#include "soft_model.h"
#include "soft_wire.h"
#include "soft_wire_pkt.h"

/* ---- neighbours ---- */

/* The neighbour table of a device of several queues is shared: its lock
 * is taken inside the queue's, around every use of the table (a device
 * of one queue has only the queue's lock). */
static inline void
nt_lock(struct soft_wire *w)
{
	if (w->nq > 1)
		rte_spinlock_lock(&w->sh->lock);
}

static inline void
nt_unlock(struct soft_wire *w)
{
	if (w->nq > 1)
		rte_spinlock_unlock(&w->sh->lock);
}

/* An entry of the table changes (the caller holds it). */
static inline void
nt_gen_bump(struct soft_wire *w)
{
	__atomic_store_n(&w->sh->gen, w->sh->gen + 1, __ATOMIC_RELEASE);
}

static inline uint32_t
nt_gen(const struct soft_wire *w)
{
	return __atomic_load_n(&w->sh->gen, __ATOMIC_ACQUIRE);
}

static struct wire_neigh *
neigh_find(struct soft_wire *w, const uint8_t ip[16])
{
	unsigned int i;

	for (i = 0; i < WIRE_NEIGH; i++)
		if (w->sh->neigh[i].state != NEIGH_FREE &&
		    memcmp(w->sh->neigh[i].ip, ip, 16) == 0)
			return &w->sh->neigh[i];
	return NULL;
}

static void
neigh_drop_holds(struct soft_wire *w, struct wire_neigh *n)
{
	w->st.tx_no_neigh += n->nhold;
	rte_pktmbuf_free_bulk(n->hold, n->nhold);
	n->nhold = 0;
}

/* A free entry for ip, evicting a learnt one (never a static one, nor
 * one that holds datagrams) when the table is full; NULL when none. */
static struct wire_neigh *
neigh_new(struct soft_wire *w, const uint8_t ip[16])
{
	unsigned int i;

	for (i = 0; i < WIRE_NEIGH; i++)
		if (w->sh->neigh[i].state == NEIGH_FREE)
			goto found;
	for (i = 0; i < WIRE_NEIGH; i++) {
		unsigned int j = (w->sh->neigh_next + i) % WIRE_NEIGH;

		if (w->sh->neigh[j].state == NEIGH_REACHABLE) {
			w->sh->neigh_next = (uint8_t)((j + 1) % WIRE_NEIGH);
			i = j;
			goto found;
		}
	}
	return NULL;
found:
	nt_gen_bump(w);
	memset(&w->sh->neigh[i], 0, sizeof(w->sh->neigh[i]));
	memcpy(w->sh->neigh[i].ip, ip, 16);
	return &w->sh->neigh[i];
}

static void tx_stage(struct soft_wire *w, struct rte_mbuf *m);
static void nd_solicit(struct soft_wire *w, const uint8_t target[16]);

/* Frame m, held by queue q for a neighbour that queue w learnt, goes to
 * q (sent by q: its port queue is its QPs' only one). The caller holds
 * the table. q takes what was released to it before it holds anything
 * (soft_wire_send_locked()), so its released and held frames together
 * are at most WIRE_REL; were the slots full all the same, m would leave
 * on w. @return true when m went to q's slots (wake q). */
static bool
rel_put(struct soft_wire *w, unsigned int q, struct rte_mbuf *m)
{
	struct soft_wire_shared *sh = w->sh;

	RTE_BUILD_BUG_ON(WIRE_REL > UINT8_MAX);
	RTE_BUILD_BUG_ON(WIRE_MAX_QUEUES > 32);
	if (q == w->qid || unlikely(sh->nrel[q] == WIRE_REL)) {
		tx_stage(w, m);
		return false;
	}
	sh->rel[q][sh->nrel[q]++] = m;
	__atomic_fetch_or(&sh->rel_mask, 1u << q, __ATOMIC_RELEASE);
	return true;
}

/* Queue w's released frames, staged on w before anything else it sends
 * to their neighbour. The caller holds the table. */
static void
rel_take(struct soft_wire *w)
{
	struct soft_wire_shared *sh = w->sh;
	unsigned int i;

	for (i = 0; i < sh->nrel[w->qid]; i++)
		tx_stage(w, sh->rel[w->qid][i]);
	sh->nrel[w->qid] = 0;
	__atomic_fetch_and(&sh->rel_mask, ~(1u << w->qid), __ATOMIC_RELAXED);
}

/* Work published where queue to's step takes it (a frame in its steer
 * ring, frames released to it, a frame looped back): with rx_intr=1, wake
 * its lcore if it sleeps in qpio_soft_wire_queue_wait() or polls its
 * event fd. The waiter sets sleeping, then steps; the fence orders the
 * caller's publication before this load. */
static inline void
wire_wake(struct soft_wire *to)
{
	if (likely(!to->rx_intr))
		return;
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&to->sleeping, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&to->intr_keep, __ATOMIC_RELAXED))
		(void)qpio_port_rx_intr_wake(to->port_id, to->qid);
}

/* wire_wake() each queue of mask qs (frames were released to it). */
static void
rel_wake(struct soft_wire *w, uint32_t qs)
{
	unsigned int q;

	for (q = 0; q < w->nq && qs != 0; q++)
		if ((qs & (1u << q)) != 0 && w->sh->qs[q] != NULL)
			wire_wake(w->sh->qs[q]);
}

/* The MAC of a link-local GID in modified EUI-64 form (fe80::/64, ff:fe
 * in the middle; RFC 4291 appendix A): @return true and *mac. */
static bool
gid_ll_mac(const uint8_t gid[16], struct rte_ether_addr *mac)
{
	static const uint8_t ll[8] = { 0xfe, 0x80 };

	if (memcmp(gid, ll, 8) != 0 || gid[11] != 0xff || gid[12] != 0xfe)
		return false;
	mac->addr_bytes[0] = gid[8] ^ 0x02;
	mac->addr_bytes[1] = gid[9];
	mac->addr_bytes[2] = gid[10];
	mac->addr_bytes[3] = gid[13];
	mac->addr_bytes[4] = gid[14];
	mac->addr_bytes[5] = gid[15];
	return true;
}

/* 1 when gid is one of the device's GIDs (its own addresses): not its
 * link-local GID (index 0) when the port's MAC is zero (net_ring's),
 * which every such port shares, so a peer's is the same. */
static bool
gid_is_mine(const struct soft_wire *w, const uint8_t gid[16])
{
	unsigned int i = rte_is_zero_ether_addr(&w->mac) ? 1 : 0;

	for (; i < w->ngid; i++)
		if (memcmp(w->gids[i], gid, 16) == 0)
			return true;
	return false;
}

/* 1 when the first plen bits of a and b are equal. */
static int
prefix_eq(const uint8_t *a, const uint8_t *b, unsigned int plen)
{
	unsigned int full = plen / 8, rest = plen % 8;

	if (memcmp(a, b, full) != 0)
		return 0;
	return rest == 0 ||
	       ((a[full] ^ b[full]) & (uint8_t)(0xff00u >> rest)) == 0;
}

/* The address whose MAC a packet to dgid goes to: dgid itself when it is
 * on the link (inside the device's prefix of its IP version, link-local,
 * multicast, or no prefix given), else that version's gateway; NULL when
 * there is none (RFC 1812 5.2.4.3 / RFC 4861 5.2: next-hop
 * determination, as the kernel's route lookup gives rdma_cm its
 * gateway's MAC). */
static const uint8_t *
next_hop(const struct soft_wire *w, const uint8_t dgid[16])
{
	if (soft_wire_gid_is_v4(dgid)) {
		if (w->v4_plen > 32 || (dgid[12] & 0xf0) == 0xe0 ||
		    prefix_eq(dgid + 12, w->v4, w->v4_plen))
			return dgid;
		return w->has_gw4 ? w->gw4 : NULL;
	}
	if (w->v6_plen > 128 || dgid[0] == 0xff ||
	    (dgid[0] == 0xfe && (dgid[1] & 0xc0) == 0x80) ||
	    prefix_eq(dgid, w->v6, w->v6_plen))
		return dgid;
	return w->has_gw6 ? w->gw6 : NULL;
}

/* 1 when a line timed by *last_tsc may be said now (at most one a
 * second); *last_tsc then takes the time. */
static int
log_once_a_second(const struct soft_wire *w, uint64_t *last_tsc)
{
	uint64_t now = rte_get_tsc_cycles();

	if (*last_tsc != 0 && now - *last_tsc < 1000 * w->ms_tsc)
		return 0;
	*last_tsc = now;
	return 1;
}

/* The address of gid as text: dotted IPv4 for an IPv4-mapped GID. */
static const char *
gid_str(const uint8_t gid[16], char a[INET6_ADDRSTRLEN])
{
	if (soft_wire_gid_is_v4(gid))
		return inet_ntop(AF_INET, gid + 12, a, INET6_ADDRSTRLEN);
	return inet_ntop(AF_INET6, gid, a, INET6_ADDRSTRLEN);
}

/* A packet to dgid with no route: counted, and said at most once a
 * second. */
static void
no_route(struct soft_wire *w, const uint8_t dgid[16])
{
	char a[INET6_ADDRSTRLEN];

	w->st.tx_no_route++;
	if (!log_once_a_second(w, &w->no_route_log_tsc))
		return;
	gid_str(dgid, a);
	SOFT_LOG(WARNING, "wire port %s: no route to %s: outside the "
		 "link's prefix (ip%s=ADDR/LEN) and no gateway (%s=); not "
		 "sent (tx_no_route)", w->port_name, a,
		 soft_wire_gid_is_v4(dgid) ? "" : "6",
		 soft_wire_gid_is_v4(dgid) ? "gw" : "gw6");
}

/* ip is at mac: learn it (a static entry stays as set), and send what
 * waited for it. The caller holds the table (nt_lock()). */
static void
neigh_learn(struct soft_wire *w, const uint8_t ip[16],
	    const struct rte_ether_addr *mac, bool create)
{
	struct wire_neigh *n = neigh_find(w, ip);
	unsigned int i;
	uint32_t rel = 0;

	if (n == NULL) {
		if (!create)
			return;
		n = neigh_new(w, ip);
		if (n == NULL)
			return;
	}
	if (n->state == NEIGH_STATIC)
		return;
	if (n->state == NEIGH_INCOMPLETE)
		__atomic_fetch_sub(&w->sh->n_incomplete, 1, __ATOMIC_RELAXED);
	if (n->state != NEIGH_REACHABLE || !rte_is_same_ether_addr(mac, &n->mac))
		nt_gen_bump(w);
	n->state = NEIGH_REACHABLE;
	rte_ether_addr_copy(mac, &n->mac);
	for (i = 0; i < n->nhold; i++) {
		rte_ether_addr_copy(mac, rte_pktmbuf_mtod(n->hold[i],
							  struct rte_ether_addr *));
		if (w->nq == 1)
			tx_stage(w, n->hold[i]);
		else if (rel_put(w, n->hold_q[i], n->hold[i]))
			rel |= 1u << n->hold_q[i];
	}
	n->nhold = 0;
	rel_wake(w, rel);
}

/* neigh_learn() taking the table. */
static void
neigh_learn_nt(struct soft_wire *w, const uint8_t ip[16],
	       const struct rte_ether_addr *mac, bool create)
{
	nt_lock(w);
	neigh_learn(w, ip, mac, create);
	nt_unlock(w);
}

/* The sender of a RoCE packet received, at mac, learnt (an IP on the
 * link): nothing to do when it is the sender the queue learnt last, at
 * that MAC, and the table has not changed since (w->rxc_*); else the
 * table learns it and the cache takes it when the table now holds that
 * MAC for it. */
static void
neigh_learn_sender(struct soft_wire *w, const uint8_t ip[16],
		   const struct rte_ether_addr *mac)
{
	struct wire_neigh *n;

	if (w->rxc_ok && w->rxc_gen == nt_gen(w) &&
	    rte_is_same_ether_addr(mac, &w->rxc_mac) &&
	    memcmp(ip, w->rxc_ip, 16) == 0)
		return;
	/* (a routed sender's MAC is its last router's: the gateway's
	 * entry answers for it; the device itself, in a frame it looped
	 * back, is no neighbour) */
	if (next_hop(w, ip) != ip || gid_is_mine(w, ip))
		return;
	nt_lock(w);
	neigh_learn(w, ip, mac, true);
	n = neigh_find(w, ip);
	w->rxc_ok = n != NULL && n->state >= NEIGH_REACHABLE &&
		rte_is_same_ether_addr(mac, &n->mac);
	if (w->rxc_ok) {
		memcpy(w->rxc_ip, ip, 16);
		rte_ether_addr_copy(mac, &w->rxc_mac);
		w->rxc_gen = w->sh->gen;
	}
	nt_unlock(w);
}

/* ---- transmit ---- */

/* Hand the staged frames to the port: RoCEv2 ones it takes count in
 * tx_packets, every frame it refuses (RoCEv2 or ARP) in tx_dropped. */
static void
tx_flush(struct soft_wire *w)
{
	uint16_t sent, i, k = 0;

	if (w->ntx == 0)
		return;
	for (i = 0; i < w->ntx; i++) {
		struct rte_mbuf *m = w->txb[i];
		const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
		/* ARP and ICMPv6 (NDP) are not RoCEv2 packets */
		bool roce = !((f[12] == 0x08 && f[13] == 0x06) ||
			      (f[12] == 0x86 && f[13] == 0xdd && f[20] == 58));

		/* Every frame of a VLAN device leaves tagged, ARP and NDP
		 * too (IEEE 802.1Q: TPID 0x8100 after the source MAC, then
		 * PCP, DEI 0 and the VID), as the kernel's VLAN device sends
		 * rxe's. rte_vlan_insert() takes 4 bytes of the headroom of
		 * the device's own mbufs (direct, never shared); one it
		 * refuses is dropped, never sent untagged. */
		if (w->vlan_id != 0) {
			m->vlan_tci = w->vlan_tci;
			if (unlikely(rte_vlan_insert(&m) != 0)) {
				w->st.tx_dropped++;
				rte_pktmbuf_free(m);
				continue;
			}
		}
		w->txlen[k] = roce ? m->pkt_len : 0;
		w->txb[k++] = m;
	}
	w->ntx = k;
	if (k == 0)
		return;
	sent = qpio_port_tx_burst(w->port_id, w->qid, w->txb, w->ntx);
	for (i = 0; i < sent; i++) {
		if (w->txlen[i] != 0) {
			w->st.tx_packets++;
			w->st.tx_bytes += w->txlen[i];
		}
	}
	for (i = sent; i < w->ntx; i++) {
		w->st.tx_dropped++;
		rte_pktmbuf_free(w->txb[i]);
	}
	w->ntx = 0;
}

static void
tx_stage(struct soft_wire *w, struct rte_mbuf *m)
{
	if (w->ntx == WIRE_BURST)
		tx_flush(w);
	w->txb[w->ntx++] = m;
}

/* An ARP packet (RFC 826) of op from this device to tha/tpa. */
static void
arp_send(struct soft_wire *w, uint16_t op, const struct rte_ether_addr *tha,
	 const uint8_t tpa[4])
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(w->mp);
	struct rte_ether_hdr *eh;
	struct rte_arp_hdr *ah;

	if (m == NULL) {
		w->st.tx_nombuf++;
		return;
	}
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	ah = (struct rte_arp_hdr *)(eh + 1);
	if (op == RTE_ARP_OP_REQUEST)
		memset(&eh->dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
	else
		rte_ether_addr_copy(tha, &eh->dst_addr);
	rte_ether_addr_copy(&w->mac, &eh->src_addr);
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	ah->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	ah->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ah->arp_hlen = RTE_ETHER_ADDR_LEN;
	ah->arp_plen = 4;
	ah->arp_opcode = rte_cpu_to_be_16(op);
	rte_ether_addr_copy(&w->mac, &ah->arp_data.arp_sha);
	memcpy(&ah->arp_data.arp_sip, w->v4, 4);
	if (op == RTE_ARP_OP_REQUEST)
		memset(&ah->arp_data.arp_tha, 0, RTE_ETHER_ADDR_LEN);
	else
		rte_ether_addr_copy(tha, &ah->arp_data.arp_tha);
	memcpy(&ah->arp_data.arp_tip, tpa, 4);
	/* 42 bytes, padded to Ethernet's 60 */
	memset((uint8_t *)(ah + 1), 0, 60 - sizeof(*eh) - sizeof(*ah));
	m->data_len = 60;
	m->pkt_len = 60;
	w->st.arp_tx++;
	tx_stage(w, m);
}

/* Hold m until ip's MAC is known, asking for it (IPv4) the first time;
 * m is dropped and counted when no entry or hold slot is left. */
static void
neigh_hold(struct soft_wire *w, const uint8_t ip[16], struct rte_mbuf *m)
{
	struct wire_neigh *n = neigh_find(w, ip);
	uint64_t now = rte_get_tsc_cycles();

	if (n == NULL) {
		n = neigh_new(w, ip);
		if (n == NULL) {
			w->st.tx_no_neigh++;
			rte_pktmbuf_free(m);
			return;
		}
		n->state = NEIGH_INCOMPLETE;
		n->first_tsc = now;
		n->req_tsc = now;
		n->nreq = 1;
		__atomic_fetch_add(&w->sh->n_incomplete, 1, __ATOMIC_RELAXED);
		if (soft_wire_gid_is_v4(ip) && w->has_v4)
			arp_send(w, RTE_ARP_OP_REQUEST, NULL, ip + 12);
		else if (!soft_wire_gid_is_v4(ip))
			nd_solicit(w, ip);
	}
	if (n->nhold == WIRE_HOLD) {
		w->st.tx_no_neigh++;
		rte_pktmbuf_free(m);
		return;
	}
	n->hold_q[n->nhold] = (uint8_t)w->qid;
	n->hold[n->nhold++] = m;
}

/*
 * A neighbour that dgid names without asking anyone, learnt: a link-local
 * GID of a MAC is at that MAC (the kernel's ib_resolve_eth_dmac() asks no
 * one for these either). The caller holds the table. @return true when
 * learnt.
 */
static bool
neigh_implied(struct soft_wire *w, const uint8_t dgid[16])
{
	struct rte_ether_addr mac;

	if (!gid_ll_mac(dgid, &mac))
		return false;
	neigh_learn(w, dgid, &mac, true);
	return true;
}

static void
neigh_ask(struct soft_wire *w, const uint8_t dest[16])
{
	const uint8_t *dgid = next_hop(w, dest);
	struct wire_neigh *n;

	/* the device's own addresses are looped back (lo_send()), asked of
	 * no one */
	if (dgid == NULL || gid_is_mine(w, dest) ||
	    neigh_find(w, dgid) != NULL || neigh_implied(w, dgid))
		return;
	if (soft_wire_gid_is_v4(dgid) && !w->has_v4)
		return;
	n = neigh_new(w, dgid);
	if (n == NULL)
		return;
	n->state = NEIGH_INCOMPLETE;
	n->first_tsc = n->req_tsc = rte_get_tsc_cycles();
	n->nreq = 1;
	__atomic_fetch_add(&w->sh->n_incomplete, 1, __ATOMIC_RELAXED);
	if (soft_wire_gid_is_v4(dgid))
		arp_send(w, RTE_ARP_OP_REQUEST, NULL, dgid + 12);
	else
		nd_solicit(w, dgid);
}

void
soft_wire_neigh_ask_locked(struct soft_wire *w, const uint8_t dest[16])
{
	nt_lock(w);
	neigh_ask(w, dest);
	nt_unlock(w);
	soft_wire_flush_locked(w);
}

/* A neighbour that never answered: said at most once a second (what a
 * connect that times out, or a UD sender, would otherwise never learn). */
static void
no_neigh(struct soft_wire *w, const struct wire_neigh *n, unsigned int held)
{
	char a[INET6_ADDRSTRLEN];
	int v4 = soft_wire_gid_is_v4(n->ip);

	if (!log_once_a_second(w, &w->sh->no_neigh_log_tsc))
		return;
	gid_str(n->ip, a);
	SOFT_LOG(WARNING, "wire port %s: no %s answer from %s within %u ms "
		 "(%u requests): %u packets that waited for it dropped "
		 "(tx_no_neigh); is the host up and on this link (or behind "
		 "gw=)?", w->port_name, v4 ? "ARP" : "NDP", a,
		 WIRE_ARP_GIVEUP_MS, n->nreq, held);
	/* frames of another VLAN came: the likelier cause */
	if (w->st.rx_other_vlan != 0)
		SOFT_LOG(WARNING, "wire port %s: %" PRIu64 " frames of another "
			 "VLAN arrived (rx_other_vlan; this device is %s%u): "
			 "do both ends give the same vlan=?", w->port_name,
			 w->st.rx_other_vlan,
			 w->vlan_id != 0 ? "on VLAN " : "untagged, VLAN ",
			 w->vlan_id);
}

/* Neighbour timers: requests again, and the datagrams of a neighbour
 * that never answered dropped. */
static void
neigh_timers(struct soft_wire *w)
{
	uint64_t now = rte_get_tsc_cycles();
	unsigned int i;

	for (i = 0; i < WIRE_NEIGH; i++) {
		struct wire_neigh *n = &w->sh->neigh[i];

		if (n->state != NEIGH_INCOMPLETE)
			continue;
		if (now - n->first_tsc >= WIRE_ARP_GIVEUP_MS * w->ms_tsc) {
			no_neigh(w, n, n->nhold);
			neigh_drop_holds(w, n);
			nt_gen_bump(w);
			n->state = NEIGH_FREE;
			__atomic_fetch_sub(&w->sh->n_incomplete, 1, __ATOMIC_RELAXED);
		} else if (now - n->req_tsc >= WIRE_ARP_RETRY_MS * w->ms_tsc) {
			n->req_tsc = now;
			n->nreq++;
			if (!soft_wire_gid_is_v4(n->ip))
				nd_solicit(w, n->ip);
			else if (w->has_v4)
				arp_send(w, RTE_ARP_OP_REQUEST, NULL, n->ip + 12);
		}
	}
}

int
soft_wire_path(const struct soft_wire *w, unsigned int sgid,
	       const uint8_t dgid[16], uint8_t tclass, uint8_t hop_limit,
	       uint32_t flow_label, struct soft_wire_hdr *h)
{
	int v4 = soft_wire_gid_is_v4(w->gids[sgid]);

	if (v4 != soft_wire_gid_is_v4(dgid))
		return -1;
	h->ipv6 = !v4;
	if (v4) {
		memcpy(h->sip, w->gids[sgid] + 12, 4);
		memcpy(h->dip, dgid + 12, 4);
	} else {
		memcpy(h->sip, w->gids[sgid], 16);
		memcpy(h->dip, dgid, 16);
	}
	rte_ether_addr_copy(&w->mac, &h->smac);
	h->tclass = tclass;
	h->hop_limit = hop_limit != 0 ? hop_limit : WIRE_DEF_HOP;
	h->flow_label = flow_label & 0xfffff;
	return 0;
}

/* A RoCEv2 frame of the packet h, seg[0 .. nseg), len payload bytes, in
 * a new mbuf of the device's pool (its destination MAC for the caller to
 * write). @return it, or NULL (counted in tx_nombuf) when the pool is
 * empty. */
static __rte_always_inline struct rte_mbuf *
frame_build(struct soft_wire *w, const struct soft_wire_hdr *h,
	    const struct soft_wire_seg *seg, unsigned int nseg, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(w->mp);
	uint32_t flen;

	if (unlikely(m == NULL)) {
		w->st.tx_nombuf++;
		return NULL;
	}
	flen = soft_wire_build(rte_pktmbuf_mtod(m, uint8_t *), h, seg, nseg,
			       len);
	m->data_len = (uint16_t)flen;
	m->pkt_len = flen;
	return m;
}

/*
 * A packet to one of the device's own addresses (dest a GID of its own:
 * an RC or UC QP connected to a QP of the same device, a UD datagram to
 * its own GID): built to the device's own MAC (and tagged with its VLAN)
 * and looped back, as rxe loops such a packet (rxe_loopback()) and RoCE
 * NICs do, never to the port; the queue's next progress step takes it as
 * received (lo_input()). Counted sent (tx_packets, tx_bytes) and in
 * tx_loopback; past WIRE_LO frames waiting, in tx_dropped. @return 0, or
 * -1 when the device's pool is empty (as soft_wire_send_locked()).
 */
static int
lo_send(struct soft_wire *w, const struct soft_wire_hdr *h,
	const struct soft_wire_seg *seg, unsigned int nseg, uint32_t len)
{
	struct rte_mbuf *m;

	if (unlikely(w->nlo == WIRE_LO)) {
		w->st.tx_dropped++;
		return 0;
	}
	m = frame_build(w, h, seg, nseg, len);
	if (unlikely(m == NULL))
		return -1;
	rte_ether_addr_copy(&w->mac, rte_pktmbuf_mtod(m, struct rte_ether_addr *));
	/* tagged as it would leave (tx_flush()), so that the queue that
	 * takes it (another one's steer ring included) reads it as a
	 * frame of the port */
	if (w->vlan_id != 0) {
		m->vlan_tci = w->vlan_tci;
		if (unlikely(rte_vlan_insert(&m) != 0)) {
			w->st.tx_dropped++;
			rte_pktmbuf_free(m);
			return 0;
		}
	}
	w->st.tx_packets++;
	w->st.tx_bytes += m->pkt_len;
	w->st.tx_loopback++;
	w->lo[w->nlo++] = m;
	/* a frame with no interrupt of its own: an lcore asleep on the
	 * queue, or polling its event fd, wakes for it (wire_wake()), as
	 * for a frame another queue hands over */
	wire_wake(w);
	return 0;
}

int
soft_wire_send_locked(struct soft_wire *w, const uint8_t dest[16],
		      const struct soft_wire_hdr *h,
		      const struct soft_wire_seg *seg, unsigned int nseg,
		      uint32_t len)
{
	const uint8_t *dgid;
	struct rte_mbuf *m;
	struct wire_neigh *n;

	/* the destination of the last packet, the table as it was then */
	if (likely(w->txc_ok && w->txc_gen == nt_gen(w) &&
		   memcmp(dest, w->txc_dest, 16) == 0)) {
		m = frame_build(w, h, seg, nseg, len);
		if (unlikely(m == NULL))
			return -1;
		rte_ether_addr_copy(&w->txc_mac,
				    rte_pktmbuf_mtod(m, struct rte_ether_addr *));
		tx_stage(w, m);
		return 0;
	}
	if (unlikely(gid_is_mine(w, dest)))
		return lo_send(w, h, seg, nseg, len);
	dgid = next_hop(w, dest);
	if (unlikely(dgid == NULL)) {
		no_route(w, dest);
		return 0;
	}
	m = frame_build(w, h, seg, nseg, len);
	if (unlikely(m == NULL))
		return -1;
	nt_lock(w);
	/* what this queue held and another released: before anything it
	 * sends or holds now */
	if (unlikely(w->nq > 1 && w->sh->nrel[w->qid] != 0))
		rel_take(w);
	n = neigh_find(w, dgid);
	if (unlikely(n == NULL) && neigh_implied(w, dgid))
		n = neigh_find(w, dgid);
	if (likely(n != NULL && n->state >= NEIGH_REACHABLE)) {
		rte_ether_addr_copy(&n->mac, rte_pktmbuf_mtod(m,
					struct rte_ether_addr *));
		memcpy(w->txc_dest, dest, 16);
		rte_ether_addr_copy(&n->mac, &w->txc_mac);
		w->txc_gen = w->sh->gen;
		w->txc_ok = 1;
		tx_stage(w, m);
	} else {
		neigh_hold(w, dgid, m);
	}
	nt_unlock(w);
	return 0;
}

enum exec_result
soft_wire_ud_send(struct soft_run *d, const struct mlx5_wqe_av *av)
{
	struct soft_qp *qp = d->qp;
	struct soft_wire *w = qp->wq;
	struct soft_wire_seg seg[SOFT_MAX_SGE + 1];
	struct soft_wire_hdr h;
	uint32_t gfl = rte_be_to_cpu_32(av->grh_gid_fl);
	uint32_t i;

	if (unlikely(d->total > w->path_mtu)) {
		qp->ud_too_long++;
		return EXEC_OK;
	}
	/* soft_ah_create() made every AV of a wire device global, with an
	 * sgid_index in the table (lib/rdma's AV check). */
	memset(&h, 0, sizeof(h));
	if (unlikely(soft_wire_path(w, (gfl >> 20) & 0xff, av->rgid, av->tclass,
				    av->hop_limit, gfl, &h) != 0)) {
		__atomic_fetch_add(&w->st.tx_bad_gid, 1, __ATOMIC_RELAXED);
		return EXEC_OK;
	}
	h.opcode = d->opcode == MLX5_OPCODE_SEND_IMM ?
		SOFT_IB_OPC_UD_SEND_ONLY_IMM : SOFT_IB_OPC_UD_SEND_ONLY;
	h.dqpn = rte_be_to_cpu_32(av->dqp_dct) & 0xffffff;
	h.src_qpn = qp->base.qp_num;
	h.udp_sport = soft_wire_sport(h.src_qpn, h.dqpn);
	h.pkey = qp->pkey;
	h.qkey = rte_be_to_cpu_32(av->key.qkey.qkey);
	h.se = !!(d->fm_ce_se & MLX5_WQE_CTRL_SOLICITED);
	h.imm = d->imm;
	h.psn = qp->wire_psn;
	qp->wire_psn = (qp->wire_psn + 1) & 0xffffff;
	for (i = 0; i < d->nspan; i++) {
		seg[i].p = d->spans[i].p;
		seg[i].len = d->spans[i].len;
	}
	rte_spinlock_lock(&w->lock);
	soft_wire_send_locked(w, av->rgid, &h, seg, d->nspan,
			      (uint32_t)d->total);
	rte_spinlock_unlock(&w->lock);
	return EXEC_OK;
}

void
soft_wire_flush_locked(struct soft_wire *w)
{
	tx_flush(w);
}

void
soft_wire_quiesce(struct soft_wire *w)
{
	unsigned int i;

	for (i = 0; i < w->nq; i++) {
		rte_spinlock_lock(&w->sh->qs[i]->lock);
		rte_spinlock_unlock(&w->sh->qs[i]->lock);
	}
}

void
soft_wire_tx_flush(struct soft_wire *w)
{
	rte_spinlock_lock(&w->lock);
	tx_flush(w);
	rte_spinlock_unlock(&w->lock);
}

void
soft_sq_execute_ud_wire(struct soft_qp *qp)
{
	soft_sq_execute_ud(qp);
	soft_wire_tx_flush(qp->wq);
}

/* ---- receive ---- */

/* An ARP frame of len bytes: requests for the device's address are
 * answered, and the sender of a request to it or of any reply is
 * learnt (RFC 826's merge). */
static void
arp_input(struct soft_wire *w, const uint8_t *f, uint32_t len)
{
	const struct rte_arp_hdr *ah = (const struct rte_arp_hdr *)(f + 14);
	uint8_t spa[16], tpa[4];
	uint16_t op;
	bool for_me;

	if (len < 14 + sizeof(*ah)) {
		w->st.rx_truncated++;
		return;
	}
	if (ah->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    ah->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    ah->arp_hlen != RTE_ETHER_ADDR_LEN || ah->arp_plen != 4) {
		w->st.rx_not_roce++;
		return;
	}
	w->st.arp_rx++;
	op = rte_be_to_cpu_16(ah->arp_opcode);
	soft_wire_ipv4_mapped(spa, (const uint8_t *)&ah->arp_data.arp_sip);
	memcpy(tpa, &ah->arp_data.arp_tip, 4);
	for_me = w->has_v4 && memcmp(tpa, w->v4, 4) == 0;
	/* a sender of 0.0.0.0 (a probe) is not learnt */
	if (ah->arp_data.arp_sip != 0)
		neigh_learn_nt(w, spa, &ah->arp_data.arp_sha, for_me);
	if (for_me && op == RTE_ARP_OP_REQUEST)
		arp_send(w, RTE_ARP_OP_REPLY, &ah->arp_data.arp_sha,
			 (const uint8_t *)&ah->arp_data.arp_sip);
}

/* ---- IPv6 neighbour discovery (RFC 4861) ---- */

#define ND_NS 135               /* Neighbor Solicitation */
#define ND_NA 136               /* Neighbor Advertisement */
#define ND_OPT_SLLA 1           /* source link-layer address */
#define ND_OPT_TLLA 2           /* target link-layer address */
#define ND_LEN 32               /* ICMPv6 header, target, one option */

/* 1 when ip is one of the device's IPv6 GIDs (link-local or ip6=). */
static bool
nd_is_mine(const struct soft_wire *w, const uint8_t ip[16])
{
	unsigned int i;

	for (i = 0; i < w->ngid; i++)
		if (!soft_wire_gid_is_v4(w->gids[i]) &&
		    memcmp(w->gids[i], ip, 16) == 0)
			return true;
	return false;
}

/* The device's address to ask from: its link-local GID (index 0) for a
 * link-local target, else its first other IPv6 GID (ip6=). */
static const uint8_t *
nd_source(const struct soft_wire *w, const uint8_t target[16])
{
	unsigned int i;

	if (target[0] != 0xfe || (target[1] & 0xc0) != 0x80)
		for (i = 1; i < w->ngid; i++)
			if (!soft_wire_gid_is_v4(w->gids[i]))
				return w->gids[i];
	return w->gids[0];
}

/* One NS or NA: from src to dst (at dmac) about target, with our MAC in
 * its one option (source link-layer address in an NS, target's in an
 * NA), hop limit 255, flags the NA's R|S|O word. */
static void
nd_send(struct soft_wire *w, uint8_t type, const uint8_t src[16],
	const uint8_t dst[16], const struct rte_ether_addr *dmac,
	const uint8_t target[16], uint32_t flags)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(w->mp);
	struct rte_ether_hdr *eh;
	struct rte_ipv6_hdr *ip;
	uint8_t *icmp;
	uint16_t ck;

	if (m == NULL) {
		w->st.tx_nombuf++;
		return;
	}
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	rte_ether_addr_copy(dmac, &eh->dst_addr);
	rte_ether_addr_copy(&w->mac, &eh->src_addr);
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	ip = (struct rte_ipv6_hdr *)(eh + 1);
	ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
	ip->payload_len = rte_cpu_to_be_16(ND_LEN);
	ip->proto = IPPROTO_ICMPV6;
	ip->hop_limits = 255;
	memcpy(ip->src_addr, src, 16);
	memcpy(ip->dst_addr, dst, 16);
	icmp = (uint8_t *)(ip + 1);
	memset(icmp, 0, ND_LEN);
	icmp[0] = type;
	flags = rte_cpu_to_be_32(flags);
	memcpy(icmp + 4, &flags, 4);
	memcpy(icmp + 8, target, 16);
	icmp[24] = type == ND_NS ? ND_OPT_SLLA : ND_OPT_TLLA;
	icmp[25] = 1;                            /* 8 bytes */
	memcpy(icmp + 26, &w->mac, RTE_ETHER_ADDR_LEN);
	ck = rte_ipv6_udptcp_cksum(ip, icmp);
	memcpy(icmp + 2, &ck, 2);
	m->data_len = m->pkt_len = (uint32_t)(sizeof(*eh) + sizeof(*ip) +
					      ND_LEN);
	w->st.nd_tx++;
	tx_stage(w, m);
}

/* Ask for target's MAC: an NS to its solicited-node multicast address
 * (ff02::1:ff and its last 3 bytes; MAC 33:33 and the last 4). */
static void
nd_solicit(struct soft_wire *w, const uint8_t target[16])
{
	uint8_t dst[16] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };
	struct rte_ether_addr dmac = { { 0x33, 0x33, 0xff } };

	memcpy(dst + 13, target + 13, 3);
	memcpy(&dmac.addr_bytes[3], target + 13, 3);
	nd_send(w, ND_NS, nd_source(w, target), dst, &dmac, target, 0);
}

/* An ICMPv6 NS or NA of len bytes (the IPv6 header without extension
 * headers at 14): an NS for one of the device's addresses is answered
 * (solicited, override) and its sender learnt; an NA tells the MAC of a
 * neighbour asked for. One that fails RFC 4861's checks (hop limit 255,
 * code 0, the checksum, the length) is not taken: rx_not_roce. */
static void
nd_input(struct soft_wire *w, const uint8_t *f, uint32_t len)
{
	const struct rte_ether_hdr *eh = (const struct rte_ether_hdr *)f;
	const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)(f + 14);
	const uint8_t *icmp = f + 14 + sizeof(*ip), *opt, *target;
	const struct rte_ether_addr *slla = NULL, *tlla = NULL;
	static const uint8_t unspec[16];
	uint32_t plen = rte_be_to_cpu_16(ip->payload_len), off;

	if (plen < 24 || 14 + sizeof(*ip) + plen > len) {
		w->st.rx_truncated++;
		return;
	}
	if (ip->hop_limits != 255 || icmp[1] != 0 ||
	    rte_ipv6_udptcp_cksum_verify(ip, icmp) != 0) {
		w->st.rx_not_roce++;
		return;
	}
	for (off = 24; off + 8 <= plen; off += opt[1] * 8u) {
		opt = icmp + off;
		if (opt[1] == 0 || off + opt[1] * 8u > plen) {
			w->st.rx_not_roce++;        /* RFC 4861 7.1.1 */
			return;
		}
		if (opt[0] == ND_OPT_SLLA && opt[1] == 1)
			slla = (const struct rte_ether_addr *)(opt + 2);
		else if (opt[0] == ND_OPT_TLLA && opt[1] == 1)
			tlla = (const struct rte_ether_addr *)(opt + 2);
	}
	w->st.nd_rx++;
	target = icmp + 8;
	if (icmp[0] == ND_NA) {
		if (tlla != NULL)
			neigh_learn_nt(w, target, tlla, false);
		return;
	}
	/* an NS; from :: it is duplicate address detection: not answered */
	if (memcmp(ip->src_addr, unspec, 16) == 0)
		return;
	if (slla != NULL)
		neigh_learn_nt(w, ip->src_addr, slla,
			       nd_is_mine(w, target));
	if (nd_is_mine(w, target))
		nd_send(w, ND_NA, target, ip->src_addr,
			slla != NULL ? slla : &eh->src_addr, target,
			0x60000000u);                   /* S, O */
}

/* Deliver a parsed UD packet to its QP. */
static void
ud_input(struct soft_dev *sdev, struct soft_wire *w,
	 const struct soft_wire_pkt *p, uint32_t flen)
{
	struct soft_qp *qp = soft_qp_lookup(sdev, p->dqpn);
	struct soft_run r;
	struct soft_ud_src src;
	uint8_t grh[SOFT_GRH_LEN];
	uint8_t ps;

	ps = qp != NULL ? soft_qp_state_read(&qp->base.state) : 0;
	if (qp == NULL || qp->base.qp_type != QPIO_QPT_UD ||
	    !(SOFT_QPS_BIT(ps) & SOFT_QPS_RESPOND)) {
		w->st.rx_no_qp++;
		return;
	}
	w->st.rx_packets++;
	w->st.rx_bytes += flen;
	/* The GRH space (verbs on RoCEv2): the IPv6 header as it came, or
	 * 20 zero bytes and the IPv4 header. */
	if (p->ipv6) {
		memcpy(grh, p->l3, SOFT_GRH_LEN);
	} else {
		memset(grh, 0, 20);
		memcpy(grh + 20, p->l3, 20);
	}
	memset(&src, 0, sizeof(src));
	src.pkey = p->pkey;
	src.qkey = p->qkey;
	src.src_qpn = p->src_qpn;
	src.grh = grh;

	r.qp = NULL;
	r.ev[0].cq = NULL;
	r.ev[1].cq = NULL;
	r.mp = 0;
	r.opcode = p->has_imm ? MLX5_OPCODE_SEND_IMM : MLX5_OPCODE_SEND;
	r.imm = p->imm;
	r.fm_ce_se = p->se ? MLX5_WQE_CTRL_SOLICITED : 0;
	r.nspan = 1;
	r.spans[0].p = p->payload;
	r.spans[0].len = p->len;
	r.total = p->len;
	soft_ud_deliver(&r, &src, qp);
	soft_run_events(&r);
}

/* An RC or UC packet to its QP: one of this device's, of the transport
 * of the opcode. */
static void
rc_input(struct soft_dev *sdev, struct soft_wire *w,
	 const struct soft_wire_pkt *p, uint32_t flen)
{
	struct soft_qp *qp = soft_qp_lookup(sdev, p->dqpn);
	enum qpio_qp_type want = p->opcode & SOFT_IB_OPC_UC ? QPIO_QPT_UC :
		QPIO_QPT_RC;

	if (qp == NULL || qp->base.qp_type != want || qp->wrc == NULL ||
	    soft_wire_rc_input(w, qp, p) != 0) {
		w->st.rx_no_qp++;
		return;
	}
	w->st.rx_packets++;
	w->st.rx_bytes += flen;
}

/*
 * IEEE 802.1Q on receive: the frame's VLAN tag, where the port left it
 * in the frame (TPID 0x8100 after the source MAC: removed here with
 * rte_vlan_strip()) or took it out already (RTE_MBUF_F_RX_VLAN_STRIPPED
 * and vlan_tci: a NIC's VLAN strip, or net_af_packet, to which Linux
 * hands the tag beside the frame). Either way the frame is left
 * untagged. The frame is of the device's VLAN when it is tagged with its
 * VID (vlan=), or, on an untagged device, untagged or priority-tagged
 * (VID 0, IEEE 802.1Q 9.6). The PCP and DEI are not looked at.
 * @return the bytes of the tag it had (0 or RTE_VLAN_HLEN: they count in
 * rx_bytes, as tx_bytes has them), or -1 for a frame of another VLAN.
 */
static int
vlan_input(const struct soft_wire *w, struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	uint16_t vid;

	if (m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED) {
		vid = m->vlan_tci & 0xfff;
	} else if (rte_pktmbuf_data_len(m) >= RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN &&
		   f[12] == 0x81 && f[13] == 0x00) {
		vid = get_be16(f + 14) & 0xfff;
		if (rte_vlan_strip(m) != 0)
			return -1;
	} else {
		return w->vlan_id == 0 ? 0 : -1;
	}
	return vid == w->vlan_id ? (int)RTE_VLAN_HLEN : -1;
}

/* What steer() did with a frame. */
enum steer_result {
	STEER_MINE = -1,    /* not for another queue: this one reads it */
	STEER_DROPPED = 0,  /* the other queue's ring was full: dropped */
	STEER_HANDED = 1,   /* in the other queue's steer ring */
};

/*
 * A device of several queues: a RoCEv2 packet (UDP port 4791) whose BTH
 * names a QP of another queue goes to that queue's steer ring, which
 * only that queue's progress step reads. Only the UDP destination port
 * and the BTH's destination QP are read here (a packet too short for
 * them, with IPv4 options, or of an unknown QP stays here): the QP's
 * queue checks all of it, so every frame still ends in one counter of
 * one queue. Frames of one flow keep their order: one queue receives
 * them and hands them on in that order to one ring.
 */
static enum steer_result
steer(struct soft_wire *w, struct rte_mbuf *m, const uint8_t *f,
      uint32_t len, bool handed)
{
	const uint8_t *udp;
	struct soft_qp *qp;
	struct soft_wire *to;

	if (f[12] == 0x08 && f[13] == 0x00 &&
	    len >= RTE_ETHER_HDR_LEN + 20 + 8 + 12 && f[14] == 0x45 &&
	    f[23] == IPPROTO_UDP)
		udp = f + RTE_ETHER_HDR_LEN + 20;
	else if (f[12] == 0x86 && f[13] == 0xdd &&
		 len >= RTE_ETHER_HDR_LEN + 40 + 8 + 12 &&
		 f[20] == IPPROTO_UDP)
		udp = f + RTE_ETHER_HDR_LEN + 40;
	else
		return STEER_MINE;
	if (udp[2] != 0x12 || udp[3] != 0xb7)           /* 4791 */
		return STEER_MINE;
	/* the BTH's destination QP: bytes 5-7 (after FECN, BECN, resv6) */
	qp = soft_qp_lookup(w->sdev, get_be32(udp + 8 + 4) & 0xffffff);
	to = qp != NULL ? qp->wq : NULL;
	if (to == NULL || to == w)
		return STEER_MINE;
	/* A frame handed to this queue whose QP number now names a QP of
	 * another queue (destroyed and made again meanwhile: QP1 on
	 * another vector): the QP it was for is gone. Never handed on a
	 * second time. */
	if (handed) {
		w->st.rx_no_qp++;
		return STEER_DROPPED;
	}
	w->st.rx_steered++;
	if (unlikely(rte_ring_mp_enqueue(to->steer, m) != 0)) {
		w->st.rx_steer_dropped++;
		return STEER_DROPPED;
	}
	/* a sleeper on that queue wakes for it (the frame is in the ring
	 * before wire_wake()'s load) */
	wire_wake(to);
	return STEER_HANDED;
}

/* One frame of the port (or one the device sent to itself, lo_send()),
 * or (handed) one another queue handed over. @return true when m went to
 * another queue's ring (not to be freed here; never for a handed
 * frame). */
static bool
frame_input(struct soft_dev *sdev, struct soft_wire *w, struct rte_mbuf *m,
	    bool handed)
{
	struct soft_wire_pkt p;
	enum soft_wire_drop why;
	uint8_t *f;
	uint32_t len;
	int flen_tag;

	if (unlikely(m->nb_segs != 1)) {
		w->st.rx_oversize++;
		return false;
	}
	flen_tag = vlan_input(w, m);
	if (flen_tag < 0) {
		w->st.rx_other_vlan++;
		return false;
	}
	/* the frame without its tag */
	f = rte_pktmbuf_mtod(m, uint8_t *);
	len = rte_pktmbuf_data_len(m);
	if (w->nq > 1) {
		enum steer_result sr = steer(w, m, f, len, handed);

		if (sr != STEER_MINE)
			return sr == STEER_HANDED;
	}
	if (len >= 14 && f[12] == 0x08 && f[13] == 0x06) {
		arp_input(w, f, len);
		return false;
	}
	if (len >= 14 + 40 + 1 && f[12] == 0x86 && f[13] == 0xdd &&
	    f[20] == IPPROTO_ICMPV6 &&
	    (f[54] == ND_NS || f[54] == ND_NA)) {
		nd_input(w, f, len);
		return false;
	}
	why = soft_wire_parse(f, len, (const uint8_t (*)[16])w->gids, w->ngid,
			      &p);
	switch (why) {
	case SOFT_WIRE_OK:
		break;
	case SOFT_WIRE_NOT_ROCE:
		w->st.rx_not_roce++;
		return false;
	case SOFT_WIRE_TRUNCATED:
		w->st.rx_truncated++;
		return false;
	case SOFT_WIRE_BAD_IP:
		w->st.rx_bad_ip++;
		return false;
	case SOFT_WIRE_NOT_MINE:
		w->st.rx_not_mine++;
		return false;
	case SOFT_WIRE_BAD_UDP:
		w->st.rx_bad_udp++;
		return false;
	case SOFT_WIRE_BAD_BTH:
		w->st.rx_bad_bth++;
		return false;
	default:
		w->st.rx_bad_icrc++;
		return false;
	}
	/* The sender's MAC, for the answer (and IPv6, which asks no one:
	 * soft.rst) */
	neigh_learn_sender(w, p.sip, (const struct rte_ether_addr *)(f + 6));
	if (p.opcode == SOFT_IB_OPC_UD_SEND_ONLY ||
	    p.opcode == SOFT_IB_OPC_UD_SEND_ONLY_IMM) {
		ud_input(sdev, w, &p, len + (uint32_t)flen_tag);
		return false;
	}
	rc_input(sdev, w, &p, len + (uint32_t)flen_tag);
	return false;
}

static void adopt_idle(struct soft_wire *w);

/* The frames lo_send() looped back since the queue's last step, taken
 * as frames of the port (what they send in turn waits for the next
 * step). @return how many. */
static uint16_t
lo_input(struct soft_dev *sdev, struct soft_wire *w)
{
	struct rte_mbuf *pkts[WIRE_LO];
	uint16_t n = w->nlo, i, k;

	memcpy(pkts, w->lo, n * sizeof(pkts[0]));
	w->nlo = 0;
	for (i = 0, k = 0; i < n; i++)
		if (!frame_input(sdev, w, pkts[i], false))
			pkts[k++] = pkts[i];
	if (k != 0)
		rte_pktmbuf_free_bulk(pkts, k);
	return n;
}

/* The port's link: *up 1 when up. @return 0, or qpio_port_link_get()'s
 * error (*up not written). */
static int
link_read(const struct soft_wire *w, uint8_t *up)
{
	struct qpio_port_link link;
	int ret = qpio_port_link_get(w->port_id, &link);

	if (ret == 0)
		*up = link.up ? 1 : 0;
	return ret;
}

/*
 * The port's link, as rxe follows its netdev's (rxe_port_up(),
 * rxe_port_down()): read with qpio_port_link_get() at most every
 * WIRE_LINK_MS by one queue of the device at a time (under
 * sh->link_lock, taken with a trylock: a queue that finds it taken goes
 * on), and a change raises the verbs port event (QPIO_EVENT_PORT_ERR
 * when it went down, QPIO_EVENT_PORT_ACTIVE when it came up; port 1)
 * once, with a line in the log; the read, the compare and the raise are
 * one under the lock, so two queues never raise one change twice or two
 * changes out of order. The state qpio_port_query() reports is read
 * from the port at each query. No thread of the device's own: a link
 * that changes while no lcore steps or waits on the device is seen at
 * its next step, and a change undone between two reads is not seen.
 */
static void
link_watch(struct soft_wire *w)
{
	struct soft_wire_shared *sh = w->sh;
	uint64_t now = rte_get_tsc_cycles();
	uint8_t up;

	if (now < __atomic_load_n(&sh->link_next, __ATOMIC_RELAXED) ||
	    !rte_spinlock_trylock(&sh->link_lock))
		return;
	if (now < sh->link_next || link_read(w, &up) != 0)
		goto out;
	__atomic_store_n(&sh->link_next, now + WIRE_LINK_MS * w->ms_tsc,
			 __ATOMIC_RELAXED);
	if (up == sh->link_up)
		goto out;
	sh->link_up = up;
	__atomic_fetch_add(&w->st.link_changes, 1, __ATOMIC_RELAXED);
	(void)qpio_rdma_event_raise(w->sdev->qdev, up ? QPIO_EVENT_PORT_ACTIVE :
				    QPIO_EVENT_PORT_ERR, NULL, 1);
	if (up)
		SOFT_LOG(NOTICE, "wire port %s: link up: port 1 ACTIVE, "
			 "QPIO_EVENT_PORT_ACTIVE raised", w->port_name);
	else
		SOFT_LOG(WARNING, "wire port %s: link down: port 1 DOWN, "
			 "QPIO_EVENT_PORT_ERR raised", w->port_name);
out:
	rte_spinlock_unlock(&sh->link_lock);
}

static __rte_always_inline uint16_t
wire_step_locked(struct soft_dev *sdev, struct soft_wire *w);

int
soft_wire_progress(struct soft_wire *w)
{
	struct soft_dev *sdev = w->sdev;
	uint16_t got;

	if (!rte_spinlock_trylock(&w->lock))
		return 0;
	got = wire_step_locked(sdev, w);
	rte_spinlock_unlock(&w->lock);
	return got;
}

/* The step itself (w->lock held). @return the frames taken. */
static __rte_always_inline uint16_t
wire_step_locked(struct soft_dev *sdev, struct soft_wire *w)
{
	struct rte_mbuf *pkts[WIRE_BURST];
	uint16_t n, i, k, got = 0;
	bool held;

	/* frames staged now were held by an earlier step (doorbells
	 * flush): they leave with this step's, whatever it holds */
	held = w->ntx != 0;
	if (w->nq > 1) {
		/* what the other queues received for this one's QPs first:
		 * it came before this step's burst */
		n = (uint16_t)rte_ring_sc_dequeue_burst(w->steer,
							(void **)pkts,
							WIRE_BURST, NULL);
		for (i = 0; i < n; i++)
			frame_input(sdev, w, pkts[i], true);
		if (n != 0)
			rte_pktmbuf_free_bulk(pkts, n);
		got = n;
		/* frames it held, released by the queue that learnt their
		 * neighbour: they leave before anything this step sends */
		if (unlikely(__atomic_load_n(&w->sh->rel_mask,
					     __ATOMIC_ACQUIRE) &
			     (1u << w->qid))) {
			nt_lock(w);
			rel_take(w);
			nt_unlock(w);
		}
	}
	if (unlikely(w->nlo != 0))
		got = (uint16_t)(got + lo_input(sdev, w));
	n = qpio_port_rx_burst(w->port_id, w->qid, pkts, WIRE_BURST);
	for (i = 0, k = 0; i < n; i++)
		if (!frame_input(sdev, w, pkts[i], false))
			pkts[k++] = pkts[i];
	if (k != 0)
		rte_pktmbuf_free_bulk(pkts, k);
	got = (uint16_t)(got + n);
	if (w->ack_list != NULL)
		soft_wire_rc_acks_flush(w);
	if (unlikely(__atomic_load_n(&w->sh->n_incomplete,
				     __ATOMIC_RELAXED) != 0)) {
		nt_lock(w);
		neigh_timers(w);
		nt_unlock(w);
	}
	if (!TAILQ_EMPTY(&w->rcs))
		soft_wire_rc_timers(w);
	/* A step that completed a receive holds its ACK for the doorbell
	 * of the answer the application posts on reading the completion:
	 * one burst (one kick of the port) carries both, where two bursts
	 * put the ACK's kick before the answer on the one-way path
	 * (bench/README.md, latency-vs-memif.sh -w). At most one step:
	 * the next one sends it. */
	if (!w->tx_hold || held)
		tx_flush(w);
	w->tx_hold = 0;
	if (w->nq > 1) {
		__atomic_store_n(&w->steps, w->steps + 1, __ATOMIC_RELAXED);
		if (unlikely(--w->adopt_in == 0)) {
			w->adopt_in = WIRE_ADOPT_STEPS;
			adopt_idle(w);
		}
	}
	if (unlikely(--w->link_in == 0)) {
		w->link_in = WIRE_LINK_STEPS;
		link_watch(w);
	}
	return got;
}

/*
 * Every WIRE_ADOPT_STEPS steps of a queue, the other queues that took no
 * step since its last look are stepped by it: a queue whose completion
 * vector no lcore polls (an application of one lcore on a device of
 * several queues, or a vector whose CQs nobody polls for a while) still
 * has its port queue read, its timers run and its packets handed to
 * their QPs' queues, as the peer's RSS puts flows on any queue. A queue
 * whose lcore polls it is left alone (its steps move); its lock keeps
 * both from one step at once (w's lock is held: a step of q that looks
 * in turn finds w taken and leaves it). One remote line read a look.
 */
static void
adopt_idle(struct soft_wire *w)
{
	unsigned int k;

	for (k = 0; k < w->nq; k++) {
		struct soft_wire *q = w->sh->qs[k];
		uint64_t s;

		/* a queue whose lcore sleeps on it (interrupt mode) is
		 * not idle: its interrupt and the hand-over wake it */
		if (q == w || __atomic_load_n(&q->sleeping, __ATOMIC_RELAXED))
			continue;
		s = __atomic_load_n(&q->steps, __ATOMIC_RELAXED);
		if (s == w->seen[k])
			soft_wire_progress(q);
		w->seen[k] = __atomic_load_n(&q->steps, __ATOMIC_RELAXED);
	}
}

/* ---- binding (probe, close, queries) ---- */

/* IB MTU enum of bytes (256 << (mtu - 1)). */
static enum qpio_mtu
mtu_enum(uint32_t bytes)
{
	enum qpio_mtu m = QPIO_MTU_256;

	while (m < QPIO_MTU_4096 && (256u << m) <= bytes)
		m++;
	return m;
}

/* The largest IB MTU whose packets fit an Ethernet MTU of eth_mtu bytes:
 * IPv6 40 + UDP 8 + BTH 12 + the longest extension headers (RETH 16 or
 * AtomicETH 28) + ImmDt 4 + ICRC 4 (as rxe chooses its active MTU). */
static uint32_t
path_mtu_of(uint32_t eth_mtu)
{
	uint32_t room = eth_mtu > 96 ? eth_mtu - 96 : 0;
	uint32_t b = 4096;

	while (b > 256 && b > room)
		b >>= 1;
	return b;
}

/* The link-local GID fe80::<EUI-64 of mac> (RFC 4291 appendix A). */
static void
gid_link_local(uint8_t gid[16], const struct rte_ether_addr *mac)
{
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	gid[8] = mac->addr_bytes[0] ^ 0x02;
	gid[9] = mac->addr_bytes[1];
	gid[10] = mac->addr_bytes[2];
	gid[11] = 0xff;
	gid[12] = 0xfe;
	gid[13] = mac->addr_bytes[3];
	gid[14] = mac->addr_bytes[4];
	gid[15] = mac->addr_bytes[5];
}

/* "ADDR" or "ADDR/LEN" of family af into a (4 or 16 bytes) and *plen
 * (255 without /LEN). @return 0, or -1 (not an address of af, LEN not
 * decimal 0..32 or 0..128). */
static int
addr_plen_parse(int af, const char *v, uint8_t *a, uint8_t *plen)
{
	unsigned int max = af == AF_INET ? 32 : 128, n = 0;
	char buf[INET6_ADDRSTRLEN + 8];
	char *slash;
	const char *d;

	if (strlen(v) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", v);
	*plen = 255;
	slash = strchr(buf, '/');
	if (slash != NULL) {
		*slash = '\0';
		d = slash + 1;
		if (*d == '\0' || strlen(d) > 3)
			return -1;
		for (; *d != '\0'; d++) {
			if (*d < '0' || *d > '9')
				return -1;
			n = n * 10 + (unsigned int)(*d - '0');
		}
		if (n > max)
			return -1;
		*plen = (uint8_t)n;
	}
	return inet_pton(af, buf, a) == 1 ? 0 : -1;
}

/* gw= and gw6=: the gateways, each inside its version's prefix. */
static int
gw_parse(struct soft_wire *w, const char *dev, const char *gw4,
	 const char *gw6, const uint8_t *a6)
{
	uint8_t a[16];

	if (gw4 != NULL) {
		if (inet_pton(AF_INET, gw4, a) != 1) {
			SOFT_LOG(ERR, "%s: gw=%s is not an IPv4 address "
				 "(gw=10.0.0.254)", dev, gw4);
			return -EINVAL;
		}
		if (!w->has_v4 || w->v4_plen > 32 ||
		    !prefix_eq(a, w->v4, w->v4_plen)) {
			SOFT_LOG(ERR, "%s: gw=%s must be on the link: give "
				 "ip=ADDR/LEN with a prefix that holds it "
				 "(ip=10.0.0.1/24,gw=10.0.0.254)", dev, gw4);
			return -EINVAL;
		}
		soft_wire_ipv4_mapped(w->gw4, a);
		w->has_gw4 = 1;
	}
	if (gw6 != NULL) {
		if (inet_pton(AF_INET6, gw6, a) != 1 ||
		    soft_wire_gid_is_v4(a) || a[0] == 0xff) {
			SOFT_LOG(ERR, "%s: gw6=%s is not a unicast IPv6 address "
				 "(gw6=fd00::fe)", dev, gw6);
			return -EINVAL;
		}
		if (a6 == NULL || w->v6_plen > 128 ||
		    (!prefix_eq(a, w->v6, w->v6_plen) &&
		     !(a[0] == 0xfe && (a[1] & 0xc0) == 0x80))) {
			SOFT_LOG(ERR, "%s: gw6=%s must be on the link: "
				 "link-local, or inside ip6=ADDR/LEN's prefix "
				 "(ip6=fd00::1/64,gw6=fd00::fe)", dev, gw6);
			return -EINVAL;
		}
		memcpy(w->gw6, a, 16);
		w->has_gw6 = 1;
	}
	return 0;
}

/* neigh=IP@MAC[+IP@MAC...] */
static int
neigh_parse(struct soft_wire *w, const char *dev, const char *v)
{
	char buf[256];
	char *save = NULL, *tok;

	if (strlen(v) >= sizeof(buf))
		goto bad;
	snprintf(buf, sizeof(buf), "%s", v);
	for (tok = strtok_r(buf, "+", &save); tok != NULL;
	     tok = strtok_r(NULL, "+", &save)) {
		char *at = strchr(tok, '@');
		struct rte_ether_addr mac;
		struct wire_neigh *n;
		uint8_t ip[16], v4[4];

		if (at == NULL)
			goto bad;
		*at = '\0';
		if (inet_pton(AF_INET, tok, v4) == 1)
			soft_wire_ipv4_mapped(ip, v4);
		else if (inet_pton(AF_INET6, tok, ip) != 1)
			goto bad;
		if (rte_ether_unformat_addr(at + 1, &mac) != 0)
			goto bad;
		n = neigh_find(w, ip);
		if (n == NULL)
			n = neigh_new(w, ip);
		if (n == NULL) {
			SOFT_LOG(ERR, "%s: neigh=: at most %u neighbours", dev,
				 WIRE_NEIGH);
			return -EINVAL;
		}
		n->state = NEIGH_STATIC;
		n->mac = mac;
	}
	return 0;
bad:
	SOFT_LOG(ERR, "%s: neigh=%s: want IP@MAC[+IP@MAC...], an IPv4 or IPv6 "
		 "address and a MAC address (neigh=10.0.0.2@02:00:00:00:00:02)",
		 dev, v);
	return -EINVAL;
}

static void
crc_choose_once(void)
{
	rte_net_crc_set_alg(RTE_NET_CRC_AVX512);
}

/* Free queue 0 w of a device and everything it shares: the port, the
 * other queues, the neighbour table, the pool. */
static void
wire_free(struct soft_wire *w)
{
	struct soft_wire_shared *sh = w->sh;
	struct rte_mempool *mp = w->mp;
	unsigned int i;
	void *m;

	if (w->port_name[0] != '\0') {
		int pid = qpio_port_get_by_name(w->port_name);

		if (pid >= 0)
			qpio_port_close((uint16_t)pid);
	}
	for (i = 0; i < WIRE_NEIGH; i++)
		rte_pktmbuf_free_bulk(sh->neigh[i].hold, sh->neigh[i].nhold);
	for (i = 0; i < WIRE_MAX_QUEUES; i++) {
		struct soft_wire *q = sh->qs[i];

		rte_pktmbuf_free_bulk(sh->rel[i], sh->nrel[i]);
		if (q == NULL)
			continue;
		rte_pktmbuf_free_bulk(q->txb, q->ntx);
		rte_pktmbuf_free_bulk(q->lo, q->nlo);
		if (q->steer != NULL) {
			while (rte_ring_sc_dequeue(q->steer, &m) == 0)
				rte_pktmbuf_free(m);
			rte_ring_free(q->steer);
		}
		if (q != w)
			rte_free(q);
	}
	rte_mempool_free(mp);
	rte_free(sh);
	rte_free(w);
}

/* Queues 1..nq-1 of the device of queue 0 w (set up but for its port's
 * queues): copies of w with their own lock, staging, counters, RC list
 * and steer ring; queue 0 gets its steer ring too. @return 0 or
 * -ENOMEM. */
static int
wire_queues(struct soft_wire *w, const char *dev)
{
	char rname[RTE_RING_NAMESIZE];
	unsigned int i;

	for (i = 0; i < w->nq; i++) {
		struct soft_wire *q = w;

		if (i != 0) {
			q = rte_zmalloc("soft_wire_q", sizeof(*q),
					RTE_CACHE_LINE_SIZE);
			if (q == NULL)
				return -ENOMEM;
			memcpy(q, w, sizeof(*q));
			rte_spinlock_init(&q->lock);
			TAILQ_INIT(&q->rcs);
			q->ntx = 0;
			q->tx_hold = 0;
			q->no_route_log_tsc = 0;
			memset(&q->st, 0, sizeof(q->st));
			q->qid = (uint16_t)i;
			q->steer = NULL;
			q->adopt_in = WIRE_ADOPT_STEPS;
			q->link_in = WIRE_LINK_STEPS;
			w->sh->qs[i] = q;
		}
		/* the device's name is unique in the process (the fabric) */
		if ((size_t)snprintf(rname, sizeof(rname), "sws_%s_%u", dev,
				     i) >= sizeof(rname)) {
			SOFT_LOG(ERR, "%s: queues=: a device name of at most "
				 "%zu characters names its steer rings", dev,
				 sizeof(rname) - 7);
			return -EINVAL;
		}
		/* several queues hand frames to one; it alone takes them */
		q->steer = rte_ring_create(rname, WIRE_STEER_RING,
					   SOCKET_ID_ANY,
					   RING_F_SC_DEQ | RING_F_EXACT_SZ);
		if (q->steer == NULL) {
			SOFT_LOG(ERR, "%s: wire queue %u: steer ring: %s", dev,
				 i, rte_strerror(rte_errno));
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * DPDK 22.11's rte_net_crc chooses its CRC code at the first
 * rte_net_crc_calc() of the process, and while it chooses, its handler
 * table is NULL for any other thread: two lcores whose first packets
 * go at once (a device of several queues) read it NULL and crash
 * (seen under AddressSanitizer in soft_wire/queues_two_threads_crossed).
 * The first wire device of the process chooses it at its probe, before
 * any lcore can send (the best the CPU has: AVX512, else SSE4.2's
 * carry-less multiply, else the table).
 */
static void
wire_crc_choose(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, crc_choose_once);
}

int
soft_wire_attach(struct soft_dev *sdev, const struct rte_kvargs *kv)
{
	const char *port, *ip4, *ip6, *neigh, *gw4, *gw6;
	const char *dev = sdev->name;
	struct qpio_port_conf conf;
	struct qpio_port_info info;
	struct soft_wire *w;
	char args[QPIO_PORT_NAME_LEN + 96], pname[64];
	uint32_t mtu = 1500, ack_hold = 1, ack_coalesce = 1, vlan = 0, pcp = 0;
	uint32_t nq = 1, rx_intr = 0, spin_us = 0, l2, q;
	uint8_t a6[16];
	int pid, ret;

	if (kv == NULL)
		return 0;
	port = rte_kvargs_get(kv, "wire");
	ip4 = rte_kvargs_get(kv, "ip");
	ip6 = rte_kvargs_get(kv, "ip6");
	neigh = rte_kvargs_get(kv, "neigh");
	gw4 = rte_kvargs_get(kv, "gw");
	gw6 = rte_kvargs_get(kv, "gw6");
	if (port == NULL) {
		if (ip4 != NULL || ip6 != NULL || neigh != NULL ||
		    gw4 != NULL || gw6 != NULL ||
		    rte_kvargs_count(kv, "mtu") != 0 ||
		    rte_kvargs_count(kv, "ack_hold") != 0 ||
		    rte_kvargs_count(kv, "ack_coalesce") != 0 ||
		    rte_kvargs_count(kv, "vlan") != 0 ||
		    rte_kvargs_count(kv, "pcp") != 0 ||
		    rte_kvargs_count(kv, "queues") != 0 ||
		    rte_kvargs_count(kv, "rx_intr") != 0 ||
		    rte_kvargs_count(kv, "rx_intr_spin") != 0) {
			SOFT_LOG(ERR, "%s: ip=, ip6=, gw=, gw6=, neigh=, mtu=, "
				 "ack_hold=, ack_coalesce=, vlan=, pcp=, queues=, "
				 "rx_intr= and rx_intr_spin= describe the wire: give "
				 "wire=<ethdev name> too", dev);
			return -EINVAL;
		}
		return 0;
	}
	if (qpio_rdma_kvargs_u32(kv, "mtu", 68, 9000, &mtu) != 0 ||
	    qpio_rdma_kvargs_u32(kv, "ack_hold", 0, 1, &ack_hold) != 0 ||
	    qpio_rdma_kvargs_u32(kv, "ack_coalesce", 0, 1, &ack_coalesce) != 0 ||
	    qpio_rdma_kvargs_u32(kv, "vlan", 1, 4094, &vlan) != 0 ||
	    qpio_rdma_kvargs_u32(kv, "pcp", 0, 7, &pcp) != 0 ||
	    qpio_rdma_kvargs_u32(kv, "queues", 1, WIRE_MAX_QUEUES, &nq) != 0 ||
	    qpio_rdma_kvargs_u32(kv, "rx_intr", 0, 1, &rx_intr) != 0 ||
	    qpio_rdma_kvargs_u32(kv, "rx_intr_spin", 0, 1000000, &spin_us) != 0)
		return -EINVAL;
	if (rx_intr == 0 && rte_kvargs_count(kv, "rx_intr_spin") != 0) {
		SOFT_LOG(ERR, "%s: rx_intr_spin= is how long a wait in the "
			 "interrupt mode polls before it sleeps: give rx_intr=1 "
			 "too (without it nothing sleeps)", dev);
		return -EINVAL;
	}
	if (vlan == 0 && rte_kvargs_count(kv, "pcp") != 0) {
		SOFT_LOG(ERR, "%s: pcp= is the priority of the device's VLAN "
			 "tag: give vlan=<1..4094> too (an untagged device "
			 "sends no tag)", dev);
		return -EINVAL;
	}
	/* the Ethernet header, and the VLAN tag a frame of the link has */
	l2 = RTE_ETHER_HDR_LEN + (vlan != 0 ? RTE_VLAN_HLEN : 0);
	if (ip4 == NULL && ip6 == NULL) {
		SOFT_LOG(ERR, "%s: wire=%s needs the device's address: ip=<IPv4> "
			 "and/or ip6=<IPv6> (its RoCEv2 GIDs)", dev, port);
		return -EINVAL;
	}
	if (sdev->fault_on) {
		SOFT_LOG(ERR, "%s: fault_* devargs work on the fabric only; on "
			 "the wire use tc netem on the link", dev);
		return -EINVAL;
	}
	wire_crc_choose();
	w = rte_zmalloc("soft_wire", sizeof(*w), RTE_CACHE_LINE_SIZE);
	if (w == NULL)
		return -ENOMEM;
	w->sh = rte_zmalloc("soft_wire_shared", sizeof(*w->sh),
			    RTE_CACHE_LINE_SIZE);
	if (w->sh == NULL) {
		rte_free(w);
		return -ENOMEM;
	}
	w->sh->qs[0] = w;
	rte_spinlock_init(&w->sh->lock);
	rte_spinlock_init(&w->sh->link_lock);
	w->sdev = sdev;
	w->nq = (uint16_t)nq;
	w->adopt_in = WIRE_ADOPT_STEPS;
	w->link_in = WIRE_LINK_STEPS;
	rte_spinlock_init(&w->lock);
	TAILQ_INIT(&w->rcs);
	w->ms_tsc = rte_get_tsc_hz() / 1000;
	w->v4_plen = 255;
	w->v6_plen = 255;
	if (ip4 != NULL) {
		if (addr_plen_parse(AF_INET, ip4, w->v4, &w->v4_plen) != 0) {
			SOFT_LOG(ERR, "%s: ip=%s is not an IPv4 address with "
				 "an optional prefix length 0..32 (ip=10.0.0.1 "
				 "or ip=10.0.0.1/24)", dev, ip4);
			ret = -EINVAL;
			goto err;
		}
		w->has_v4 = 1;
	}
	if (ip6 != NULL && (addr_plen_parse(AF_INET6, ip6, a6,
					    &w->v6_plen) != 0 ||
			    soft_wire_gid_is_v4(a6) || a6[0] == 0xff)) {
		SOFT_LOG(ERR, "%s: ip6=%s is not a unicast IPv6 address with "
			 "an optional prefix length 0..128 (ip6=fd00::1 or "
			 "ip6=fd00::1/64; IPv4 goes in ip=)", dev, ip6);
		ret = -EINVAL;
		goto err;
	}
	if (ip6 != NULL)
		memcpy(w->v6, a6, 16);
	if (gw_parse(w, dev, gw4, gw6, ip6 != NULL ? a6 : NULL) != 0) {
		ret = -EINVAL;
		goto err;
	}
	if (neigh != NULL && neigh_parse(w, dev, neigh) != 0) {
		ret = -EINVAL;
		goto err;
	}

	/* The port: an eth port of the ethdev, owned by the device, at the
	 * highest free port id (qpio_port_create_owned()), named by the
	 * first free eth<n> from eth1000 on: the application's own ports
	 * keep the low ids and names. */
	for (pid = 0; pid < QPIO_MAX_PORTS; pid++) {
		snprintf(w->port_name, sizeof(w->port_name), "eth%d",
			 WIRE_PORT_NUM + pid);
		if (qpio_port_get_by_name(w->port_name) < 0)
			break;
	}
	if ((size_t)snprintf(args, sizeof(args), "%s,name=%s", w->port_name,
			     port) >= sizeof(args)) {
		SOFT_LOG(ERR, "%s: wire=%s: ethdev name over %zu characters",
			 dev, port, sizeof(args) - strlen(w->port_name) - 7);
		w->port_name[0] = '\0';
		ret = -EINVAL;
		goto err;
	}
	pid = qpio_port_create_owned(args);
	if (pid < 0) {
		SOFT_LOG(ERR, "%s: wire=%s: no DPDK ethdev of that name to "
			 "bind (create it with --vdev or -a first): %s", dev,
			 port, strerror(-pid));
		w->port_name[0] = '\0';
		ret = pid == -EEXIST ? -EEXIST : -ENODEV;
		goto err;
	}
	w->port_id = (uint16_t)pid;
	ret = qpio_port_info_get(w->port_id, &info);
	if (ret == 0 && (nq > info.max_rx_queues || nq > info.max_tx_queues)) {
		SOFT_LOG(ERR, "%s: queues=%u: the port %s has %u rx and %u tx "
			 "queues; give queues=%u or less, or an ethdev of more "
			 "queues (net_af_packet: qpairs=%u)", dev, nq, port,
			 info.max_rx_queues, info.max_tx_queues,
			 RTE_MIN(info.max_rx_queues, info.max_tx_queues), nq);
		ret = -EINVAL;
		goto err;
	}
	if (ret == 0 && mtu + l2 > info.max_rx_pkt_len) {
		SOFT_LOG(ERR, "%s: mtu=%u: frames of %u bytes, over the %u the "
			 "port %s takes; give mtu=%u or less", dev, mtu,
			 mtu + l2, info.max_rx_pkt_len, port,
			 info.max_rx_pkt_len - l2);
		ret = -EINVAL;
		goto err;
	}
	w->eth_mtu = mtu;
	w->ack_hold = (uint8_t)ack_hold;
	w->ack_coalesce = (uint8_t)ack_coalesce;
	w->vlan_id = (uint16_t)vlan;
	w->vlan_tci = (uint16_t)(pcp << 13 | vlan);
	w->path_mtu = path_mtu_of(mtu);
	w->active_mtu = mtu_enum(w->path_mtu);
	snprintf(pname, sizeof(pname), "soft_wire_%s", dev);
	/* A frame in one mbuf, never less than DPDK's default room, nor
	 * than what the port's rx queues take (net_af_packet: a whole ring
	 * frame, min_rx_buf); room for a VLAN tag on every device (an
	 * untagged one takes priority-tagged frames). */
	w->mp = rte_pktmbuf_pool_create(pname, WIRE_POOL + (nq - 1) * 2048u,
					256, 0,
					RTE_PKTMBUF_HEADROOM +
					RTE_MAX(RTE_MAX((uint32_t)RTE_MBUF_DEFAULT_DATAROOM,
							info.min_rx_buf),
						RTE_ALIGN_CEIL(mtu + RTE_ETHER_HDR_LEN +
							       RTE_VLAN_HLEN +
							       RTE_ETHER_CRC_LEN, 64)),
					SOCKET_ID_ANY);
	if (w->mp == NULL) {
		SOFT_LOG(ERR, "%s: wire mbuf pool: %s", dev,
			 rte_strerror(rte_errno));
		ret = -ENOMEM;
		goto err;
	}
	memset(&conf, 0, sizeof(conf));
	conf.max_rx_pkt_len = mtu + l2;
	conf.rx_intr = (uint8_t)rx_intr;
	w->rx_intr = (uint8_t)rx_intr;
	w->spin_tsc = (uint64_t)spin_us * rte_get_tsc_hz() / 1000000;
	ret = qpio_port_configure(w->port_id, (uint16_t)nq, (uint16_t)nq,
				  &conf);
	for (q = 0; q < nq && ret == 0; q++) {
		ret = qpio_port_rx_queue_setup(w->port_id, (uint16_t)q,
					       WIRE_RXD, SOCKET_ID_ANY, w->mp);
		if (ret == 0)
			ret = qpio_port_tx_queue_setup(w->port_id, (uint16_t)q,
						       WIRE_TXD, SOCKET_ID_ANY);
	}
	if (ret == 0)
		ret = qpio_port_start(w->port_id);
	if (ret == 0)
		ret = qpio_port_macaddr_get(w->port_id, &w->mac);
	if (ret != 0) {
		SOFT_LOG(ERR, "%s: wire=%s: port set-up failed: %s", dev, port,
			 strerror(-ret));
		goto err;
	}
	/* the link as the device starts: no event for it (as libibverbs
	 * reports none for a port's first state); link_watch() raises the
	 * changes */
	if (link_read(w, &w->sh->link_up) != 0)
		w->sh->link_up = 0;
	w->sh->link_next = rte_get_tsc_cycles() + WIRE_LINK_MS * w->ms_tsc;
	gid_link_local(w->gids[0], &w->mac);
	w->ngid = 1;
	if (w->has_v4)
		soft_wire_ipv4_mapped(w->gids[w->ngid++], w->v4);
	if (ip6 != NULL)
		memcpy(w->gids[w->ngid++], a6, 16);
	if (nq > 1) {
		ret = wire_queues(w, dev);
		if (ret != 0)
			goto err;
	}
	sdev->wire = w;
	SOFT_LOG(INFO, "%s: on the wire: ethdev %s, MAC " RTE_ETHER_ADDR_PRT_FMT
		 ", MTU %u (path MTU %u), %u GIDs, %s %u (PCP %u), %u queues",
		 dev, port, RTE_ETHER_ADDR_BYTES(&w->mac), mtu, w->path_mtu,
		 w->ngid, vlan != 0 ? "VLAN" : "untagged, VLAN", vlan, pcp, nq);
	return 0;
err:
	wire_free(w);
	return ret;
}

void
soft_wire_detach(struct soft_dev *sdev)
{
	unsigned int i;

	if (sdev->wire == NULL)
		return;
	for (i = 0; i < sdev->wire->nq; i++) {
		struct soft_wire *q = sdev->wire->sh->qs[i];

		rte_spinlock_lock(&q->lock);
		if (q->nq > 1) {
			/* what another queue released to it */
			nt_lock(q);
			rel_take(q);
			nt_unlock(q);
		}
		tx_flush(q);    /* an ACK a progress step held */
		rte_spinlock_unlock(&q->lock);
	}
	wire_free(sdev->wire);
	sdev->wire = NULL;
}

void
soft_wire_port_query(const struct soft_dev *sdev, struct qpio_port_attr *attr)
{
	const struct soft_wire *w = sdev->wire;
	uint8_t up;

	attr->link_layer = QPIO_LINK_LAYER_ETHERNET;
	attr->active_mtu = w->active_mtu;
	attr->max_mtu = QPIO_MTU_4096;
	attr->gid_tbl_len = w->ngid;
	attr->lid = 0;
	attr->state = link_read(w, &up) == 0 && up ? QPIO_PORT_ACTIVE :
		QPIO_PORT_DOWN;
}

int
soft_wire_gid(const struct soft_dev *sdev, unsigned int index,
	      union qpio_gid *gid)
{
	const struct soft_wire *w = sdev->wire;

	if (index >= w->ngid)
		return -EINVAL;
	memcpy(gid->raw, w->gids[index], 16);
	return 0;
}

/* Add the counters of queue q to *st (each read whole: 64-bit loads). */
static void
stats_add(const struct soft_wire *q, struct qpio_soft_wire_stats *st)
{
	const uint64_t *from = (const uint64_t *)&q->st;
	uint64_t *to = (uint64_t *)st;
	size_t i;

	RTE_BUILD_BUG_ON(sizeof(*st) % sizeof(uint64_t) != 0);
	for (i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		to[i] += __atomic_load_n(&from[i], __ATOMIC_RELAXED);
}

#define WIRE_ALL_QUEUES UINT_MAX

/* Queues [*first, *end) of dev's wire device: every one for queue
 * WIRE_ALL_QUEUES, else that one. @return 0, -EINVAL (not a soft
 * device, queue not below its queues) or -ENODEV (no wire=). */
static int
wire_queue_range(const struct qpio_device *dev, unsigned int queue,
		 const struct soft_wire **w, unsigned int *first,
		 unsigned int *end)
{
	if (!soft_is_dev(dev))
		return -EINVAL;
	*w = to_sdev(dev)->wire;
	if (*w == NULL)
		return -ENODEV;
	if (queue == WIRE_ALL_QUEUES) {
		*first = 0;
		*end = (*w)->nq;
		return 0;
	}
	if (queue >= (*w)->nq)
		return -EINVAL;
	*first = queue;
	*end = queue + 1;
	return 0;
}

/* The counters of queues queue (or all) summed into *st. */
static int
wire_stats(const struct qpio_device *dev, unsigned int queue,
	   struct qpio_soft_wire_stats *st)
{
	const struct soft_wire *w;
	unsigned int i, end;
	int ret;

	if (st == NULL)
		return -EINVAL;
	ret = wire_queue_range(dev, queue, &w, &i, &end);
	if (ret != 0)
		return ret;
	memset(st, 0, sizeof(*st));
	for (; i < end; i++)
		stats_add(w->sh->qs[i], st);
	return 0;
}

/* The progress steps of queue queue (or of all, in turn). */
static int
wire_steps(const struct qpio_device *dev, unsigned int queue)
{
	const struct soft_wire *w;
	unsigned int i, end;
	int ret, n = 0;

	ret = wire_queue_range(dev, queue, &w, &i, &end);
	if (ret != 0)
		return ret;
	for (; i < end; i++)
		n += soft_wire_progress(w->sh->qs[i]);
	return n;
}

int
qpio_soft_wire_stats_get(const struct qpio_device *dev,
			 struct qpio_soft_wire_stats *st)
{
	return wire_stats(dev, WIRE_ALL_QUEUES, st);
}

int
qpio_soft_wire_queue_stats_get(const struct qpio_device *dev,
			       unsigned int queue,
			       struct qpio_soft_wire_stats *st)
{
	return queue == WIRE_ALL_QUEUES ? -EINVAL : wire_stats(dev, queue, st);
}

int
qpio_soft_wire_progress(struct qpio_device *dev)
{
	return wire_steps(dev, WIRE_ALL_QUEUES);
}

int
qpio_soft_wire_queue_progress(struct qpio_device *dev, unsigned int queue)
{
	return queue == WIRE_ALL_QUEUES ? -EINVAL : wire_steps(dev, queue);
}

/* The earliest deadline (TSC) of the timers of queue w: its RC/UC QPs'
 * ACK and RNR timers, the neighbour table's next request or give-up
 * while an answer is awaited; 0 when none runs. */
static uint64_t
wire_next_tsc(struct soft_wire *w)
{
	uint64_t next, t;
	unsigned int i;

	/* the queue's lock, then the table's (the order of a step; a
	 * device of one queue has no table lock: its queue's holds it) */
	rte_spinlock_lock(&w->lock);
	next = soft_wire_rc_next_tsc(w);
	if (__atomic_load_n(&w->sh->n_incomplete, __ATOMIC_RELAXED) != 0) {
		nt_lock(w);
		for (i = 0; i < WIRE_NEIGH; i++) {
			const struct wire_neigh *n = &w->sh->neigh[i];

			if (n->state != NEIGH_INCOMPLETE)
				continue;
			t = RTE_MIN(n->req_tsc + WIRE_ARP_RETRY_MS * w->ms_tsc,
				    n->first_tsc + WIRE_ARP_GIVEUP_MS * w->ms_tsc);
			if (next == 0 || t < next)
				next = t;
		}
		nt_unlock(w);
	}
	rte_spinlock_unlock(&w->lock);
	return next;
}

/* Milliseconds from now to TSC deadline, rounded up: -1 for deadline 0
 * (none), 0 when it has passed. */
static int
wire_ms_until(const struct soft_wire *w, uint64_t deadline)
{
	uint64_t now, t;

	if (deadline == 0)
		return -1;
	now = rte_get_tsc_cycles();
	if (deadline <= now)
		return 0;
	t = (deadline - now + w->ms_tsc - 1) / w->ms_tsc;
	return t > INT_MAX ? INT_MAX : (int)t;
}

/* The queue of a wire device with rx_intr=1. */
static int
wire_intr_queue(struct qpio_device *dev, unsigned int queue,
		struct soft_wire **out)
{
	const struct soft_wire *w;
	unsigned int i, end;
	int ret;

	if (queue == WIRE_ALL_QUEUES)
		return -EINVAL;
	ret = wire_queue_range(dev, queue, &w, &i, &end);
	if (ret != 0)
		return ret;
	if (!w->rx_intr)
		return -EOPNOTSUPP;
	*out = w->sh->qs[queue];
	return 0;
}

/* A step of queue w that waits for its lock. */
static int
wire_step_wait(struct soft_wire *w)
{
	int n;

	rte_spinlock_lock(&w->lock);
	n = wire_step_locked(w->sdev, w);
	rte_spinlock_unlock(&w->lock);
	return n;
}

int
qpio_soft_wire_queue_wait(struct qpio_device *dev, unsigned int queue,
			  int timeout_ms)
{
	struct soft_wire *w;
	uint64_t due = 0;
	int n = 0, t, tl, ret;
	bool link_cap, resumed = false;

	ret = wire_intr_queue(dev, queue, &w);
	if (ret != 0)
		return ret;
	ret = 0;
	link_watch(w);
	/* The wait's deadline, set at its start: the queue's earliest
	 * timer, at most the end of timeout_ms (0: none). A sleep ends at
	 * it at the latest, and the step after it runs the timer; the
	 * timers that step arms are the next wait's. It only moves earlier
	 * (a timer another lcore arms meanwhile, seen at each pass). */
	if (timeout_ms != 0) {
		due = wire_next_tsc(w);
		if (timeout_ms > 0) {
			uint64_t end = rte_get_tsc_cycles() +
				(uint64_t)timeout_ms * w->ms_tsc;

			if (due == 0 || end < due)
				due = end;
		}
	}
	/* rx_intr_spin: poll first, as a polling lcore does, for the
	 * frames that come soon after (an answer, the rest of a burst),
	 * which then cost no wake; never past the deadline: reached while
	 * polling, it ends the wait as the sleep's end at it would, with
	 * the step that runs the timer (0, or the frames that came) */
	if (w->spin_tsc != 0 && timeout_ms != 0) {
		uint64_t now = rte_get_tsc_cycles(), stop = now + w->spin_tsc;

		if (due != 0 && due < stop)
			stop = due;
		for (;;) {
			n = wire_step_wait(w);
			if (n != 0) {
				w->st.intr_spin_takes++;
				return n;
			}
			if (now >= stop)
				break;
			rte_pause();
			now = rte_get_tsc_cycles();
		}
		if (due != 0 && now >= due)
			return 0;
	}
	__atomic_store_n(&w->sleeping, 1, __ATOMIC_RELAXED);
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (;;) {
		/* l3fwd-power's order: arm (again: an interrupt may mask
		 * itself when it fires), look once more, sleep; the look
		 * waits for the queue's lock (a step that found it taken
		 * would miss what the other lcore left) */
		ret = qpio_port_rx_intr_enable(w->port_id, w->qid);
		if (ret != 0) {
			n = 0;
			break;
		}
		n = wire_step_wait(w);
		if (n != 0)
			break;
		/* the sleep: to the deadline (-1: none) */
		if (timeout_ms != 0) {
			uint64_t nt = wire_next_tsc(w);

			if (nt != 0 && (due == 0 || nt < due))
				due = nt;
		}
		t = timeout_ms == 0 ? 0 : wire_ms_until(w, due);
		if (t == 0) {
			/* due (or no sleep): the step just run ran the
			 * timer; what came since is taken too */
			n = wire_step_wait(w);
			break;
		}
		/* A link that changes brings no frame: the sleep stops at
		 * the link's next read (WIRE_LINK_MS at most) to read it,
		 * and, when nothing came, goes on as the same sleep (not
		 * counted again) */
		link_watch(w);
		tl = wire_ms_until(w, __atomic_load_n(&w->sh->link_next,
						      __ATOMIC_RELAXED));
		link_cap = tl >= 0 && (t < 0 || tl < t);
		if (link_cap)
			t = tl > 0 ? tl : 1;
		if (!resumed)
			w->st.intr_sleeps++;
		ret = qpio_port_rx_intr_wait(w->port_id, w->qid, t);
		if (ret < 0)
			break;
		resumed = ret == 0 && link_cap;
		/* woken, or timed out: step again (at the loop's top); a
		 * wake that brought nothing (an interrupt raised before
		 * this arm), or a sleep whose clock ended it before the TSC
		 * reached the deadline, sleeps again for what is left */
	}
	__atomic_store_n(&w->sleeping, 0, __ATOMIC_RELAXED);
	/* A wake that came while this lcore did not sleep is consumed here,
	 * not by the next wait; not with the event fd given out, whose
	 * poller would lose the event of a frame that came after the last
	 * step (it then calls again for nothing, at worst) */
	if (!w->intr_keep) {
		(void)qpio_port_rx_intr_wait(w->port_id, w->qid, 0);
		(void)qpio_port_rx_intr_disable(w->port_id, w->qid);
	}
	if (ret < 0 && n == 0)
		return ret;
	return n;
}

int
qpio_soft_wire_queue_timeout(struct qpio_device *dev, unsigned int queue)
{
	struct soft_wire *w;
	int ret;

	ret = wire_intr_queue(dev, queue, &w);
	return ret != 0 ? ret : wire_ms_until(w, wire_next_tsc(w));
}

int
qpio_soft_wire_queue_event_fd(struct qpio_device *dev, unsigned int queue)
{
	struct soft_wire *w;
	int ret;

	ret = wire_intr_queue(dev, queue, &w);
	if (ret != 0)
		return ret;
	ret = qpio_port_rx_intr_enable(w->port_id, w->qid);
	if (ret != 0)
		return ret;
	w->intr_keep = 1;
	return qpio_port_rx_intr_fd(w->port_id, w->qid);
}
