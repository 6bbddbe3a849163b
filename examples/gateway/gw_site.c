/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-gateway router half: receive from the site's eth port and from the
 * RC link, answer ARP and neighbor solicitations for the site's
 * addresses, route with rte_lpm / rte_lpm6, decrement TTL, resolve
 * neighbors, send in bursts.
 */

#include <arpa/inet.h>
#include <assert.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ip.h>
#include <rte_ring_elem.h>

#include "qpio_port.h"
#include "gw_site.h"

/* Send the tx buffer of a port; frames the port does not take after a
 * few tries (RC back-pressure) are freed and counted. */
static void
txb_flush(struct gw_site *s, uint16_t port, struct rte_mbuf **b,
	  uint16_t *n, uint64_t *sent_ctr)
{
	uint16_t sent = 0;
	unsigned int tries;

	for (tries = 0; tries < 64 && sent < *n; tries++)
		sent += qpio_port_tx_burst(port, s->queue, b + sent,
					   *n - sent);
	*sent_ctr += sent;
	if (sent < *n) {
		s->st.tx_drops += *n - sent;
		rte_pktmbuf_free_bulk(b + sent, *n - sent);
	}
	*n = 0;
}

static void
eth_send(struct gw_site *s, struct rte_mbuf *m)
{
	if (s->eth_txn == GW_TX_BUF)
		txb_flush(s, s->eth_port, s->eth_txb, &s->eth_txn,
			  &s->st.eth_tx);
	s->eth_txb[s->eth_txn++] = m;
}

static void
link_send(struct gw_site *s, struct rte_mbuf *m)
{
	struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);

	eh->src_addr = s->mac;
	eh->dst_addr = s->link_mac;
	if (s->link_txn == GW_TX_BUF)
		txb_flush(s, s->link_port, s->link_txb, &s->link_txn,
			  &s->st.link_tx);
	s->link_txb[s->link_txn++] = m;
}

static int
own_addr4(const struct gw_site *s, uint32_t ip)
{
	unsigned int i;

	for (i = 0; i < s->conf->nb_addr4; i++)
		if (s->conf->addr4[i].ip4 == ip)
			return 1;
	return 0;
}

static int
own_addr6(const struct gw_site *s, const uint8_t *ip)
{
	unsigned int i;

	for (i = 0; i < s->conf->nb_addr6; i++)
		if (memcmp(s->conf->addr6[i].ip6, ip, 16) == 0)
			return 1;
	return 0;
}

static struct gw_neigh *
neigh_find(struct gw_site *s, int family, uint32_t ip4, const uint8_t *ip6)
{
	unsigned int i;

	for (i = 0; i < GW_MAX_NEIGH; i++) {
		struct gw_neigh *n = &s->neigh[i];

		if (n->family != family)
			continue;
		if (family == AF_INET ? n->ip4 == ip4 :
		    memcmp(n->ip6, ip6, 16) == 0)
			return n;
	}
	return NULL;
}

static struct gw_neigh *
neigh_new(struct gw_site *s, int family, uint32_t ip4, const uint8_t *ip6)
{
	unsigned int i;

	for (i = 0; i < GW_MAX_NEIGH; i++) {
		struct gw_neigh *n = &s->neigh[i];

		if (n->family != 0)
			continue;
		memset(n, 0, sizeof(*n));
		n->family = (uint8_t)family;
		n->ip4 = ip4;
		if (ip6 != NULL)
			memcpy(n->ip6, ip6, 16);
		return n;
	}
	return NULL;
}

static void
neigh_send(struct gw_site *s, const struct gw_neigh *n, struct rte_mbuf *m)
{
	struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);

	eh->src_addr = s->mac;
	eh->dst_addr = n->mac;
	eth_send(s, m);
}

static_assert(sizeof(struct gw_learned) == 32,
	      "a learn ring element is a multiple of 4 bytes (rte_ring_elem)");

/* Tell the site's other contexts what this one learned. */
static void
neigh_tell(struct gw_site *s, int family, uint32_t ip4, const uint8_t *ip6,
	   const struct rte_ether_addr *mac)
{
	struct gw_learned l;
	unsigned int i;

	if (s->nb_learn_to == 0)
		return;
	memset(&l, 0, sizeof(l));
	l.family = (uint8_t)family;
	l.ip4 = ip4;
	if (ip6 != NULL)
		memcpy(l.ip6, ip6, 16);
	l.mac = *mac;
	for (i = 0; i < s->nb_learn_to; i++)
		rte_ring_mp_enqueue_elem(s->learn_to[i], &l, sizeof(l));
}

/* A neighbor told its address: record it and send what waited for it. */
static void
neigh_learn(struct gw_site *s, int family, uint32_t ip4, const uint8_t *ip6,
	    const struct rte_ether_addr *mac)
{
	struct gw_neigh *n = neigh_find(s, family, ip4, ip6);
	unsigned int i;

	if (n == NULL)
		n = neigh_new(s, family, ip4, ip6);
	if (n == NULL)
		return;
	n->mac = *mac;
	n->valid = 1;
	for (i = 0; i < n->nb_pending; i++)
		neigh_send(s, n, n->pending[i]);
	n->nb_pending = 0;
}

/* Ask for the neighbor with an ARP request or a neighbor solicitation,
 * at most once per resolve_gap. */
static void
neigh_ask(struct gw_site *s, struct gw_neigh *n)
{
	uint64_t now = rte_get_tsc_cycles();
	struct rte_mbuf *m;
	int ret;

	if (n->asked_tsc != 0 && now - n->asked_tsc < s->resolve_gap)
		return;
	if (n->family == AF_INET6 && s->conf->nb_addr6 == 0)
		return;
	m = rte_pktmbuf_alloc(s->mp);
	if (m == NULL)
		return;
	if (n->family == AF_INET)
		ret = gw_arp_request(m, &s->mac, s->conf->addr4[0].ip4, n->ip4);
	else
		ret = gw_nd_solicit(m, &s->mac, s->conf->addr6[0].ip6, n->ip6);
	if (ret < 0) {
		rte_pktmbuf_free(m);
		return;
	}
	n->asked_tsc = now;
	if (n->family == AF_INET)
		s->st.arp_requests++;
	else
		s->st.nd_solicits++;
	eth_send(s, m);
}

/* Take one token of s's own bucket: 1, or 0 when it is empty. */
static int
icmp_take(struct gw_site *s)
{
	uint64_t now, add;

	if (s->icmp_burst == 0)
		return 0;
	now = rte_get_tsc_cycles();
	if (s->icmp_gap != 0 && s->icmp_tokens < s->icmp_burst &&
	    now - s->icmp_tsc >= s->icmp_gap) {
		add = (now - s->icmp_tsc) / s->icmp_gap;
		if (add >= s->icmp_burst - s->icmp_tokens) {
			s->icmp_tokens = s->icmp_burst;
			s->icmp_tsc = now;
		} else {
			s->icmp_tokens += (uint32_t)add;
			s->icmp_tsc += add * s->icmp_gap;
		}
	}
	if (s->icmp_tokens == 0)
		return 0;
	if (s->icmp_tokens == s->icmp_burst)
		s->icmp_tsc = now;     /* a full bucket's clock starts now */
	s->icmp_tokens--;
	return 1;
}

/* Take one token of the ICMP error bucket the context draws from. */
static int
icmp_token(struct gw_site *s)
{
	struct gw_site *b = s->icmp_from != NULL ? s->icmp_from : s;
	int ok;

	rte_spinlock_lock(&b->icmp_lock);
	ok = icmp_take(b);
	rte_spinlock_unlock(&b->icmp_lock);
	return ok;
}

/* Answer m (Ethernet frame, IP at 14), which is dropped, with the ICMP
 * error (type, code; info: the 4 bytes after the checksum), sent back
 * the way m came: over the link, or on the site's interface to m's
 * Ethernet source, within that way's MTU. *sent counts it. The error's
 * source is the site's first address of the family. m is not changed. */
static void
icmp_answer(struct gw_site *s, const struct rte_mbuf *m, int from_link,
	    int family, uint8_t type, uint8_t code, uint32_t info,
	    uint64_t *sent)
{
	struct rte_mbuf *e;
	int ret;

	if (family == AF_INET ? s->conf->nb_addr4 == 0 ||
	    !gw_icmp4_may_answer(m, RTE_ETHER_HDR_LEN) :
	    s->conf->nb_addr6 == 0 ||
	    !gw_icmp6_may_answer(m, RTE_ETHER_HDR_LEN)) {
		s->st.icmp_barred++;
		return;
	}
	if (!icmp_token(s) || (e = rte_pktmbuf_alloc(s->mp)) == NULL) {
		s->st.icmp_limited++;
		return;
	}
	if (family == AF_INET)
		ret = gw_icmp4_error(e, m, RTE_ETHER_HDR_LEN, type, code,
				     info, s->conf->addr4[0].ip4,
				     s->icmp_ip_id++,
				     from_link ? s->link_mtu : s->eth_mtu);
	else
		ret = gw_icmp6_error(e, m, RTE_ETHER_HDR_LEN, type, code,
				     info, s->conf->addr6[0].ip6);
	if (ret < 0) {
		rte_pktmbuf_free(e);
		s->st.icmp_limited++;
		return;
	}
	(*sent)++;
	if (from_link) {
		link_send(s, e);
	} else {
		rte_pktmbuf_mtod(e, struct rte_ether_hdr *)->src_addr = s->mac;
		eth_send(s, e);
	}
}

/* Route m (IP header at 14) to an on-link destination of the site. */
static void
forward_eth(struct gw_site *s, struct rte_mbuf *m, int family, uint32_t ip4,
	    const uint8_t *ip6)
{
	struct gw_neigh *n = neigh_find(s, family, ip4, ip6);

	if (n != NULL && n->valid) {
		neigh_send(s, n, m);
		return;
	}
	if (n == NULL)
		n = neigh_new(s, family, ip4, ip6);
	if (n == NULL) {
		s->st.neigh_drops++;
		rte_pktmbuf_free(m);
		return;
	}
	/* Hold up to GW_NEIGH_HOLD packets; beyond, the oldest goes, as
	 * Linux's neighbor queue drops its head. */
	if (n->nb_pending == GW_NEIGH_HOLD) {
		s->st.neigh_drops++;
		rte_pktmbuf_free(n->pending[0]);
		memmove(&n->pending[0], &n->pending[1],
			(GW_NEIGH_HOLD - 1) * sizeof(n->pending[0]));
		n->nb_pending--;
	}
	n->pending[n->nb_pending++] = m;
	neigh_ask(s, n);
}

/* Send the IPv4 datagram m (TTL decremented, DF clear, above mtu) as
 * fragments of at most mtu bytes towards nh. It counts in fwd4 and
 * frag4 once sent, in mtu_drops when it cannot be cut (no mbufs). */
static void
fragment4(struct gw_site *s, struct rte_mbuf *m, uint32_t nh, uint32_t dst,
	  uint32_t mtu)
{
	struct rte_mbuf *frags[GW_MAX_FRAGS];
	int n, i;

	n = gw_ipv4_fragment(m, mtu, s->mp, frags, GW_MAX_FRAGS);
	if (n < 0) {
		s->st.mtu_drops++;
		rte_pktmbuf_free(m);
		return;
	}
	s->st.fwd4++;
	s->st.frag4++;
	s->st.frags += (uint64_t)n;
	for (i = 0; i < n; i++)
		if (nh == GW_NH_LINK)
			link_send(s, frags[i]);
		else
			forward_eth(s, frags[i], AF_INET, dst, NULL);
}

/* Route an IPv4 packet; from_link is set for frames off the RC link. */
static void
route4(struct gw_site *s, struct rte_mbuf *m, int from_link)
{
	const struct rte_ipv4_hdr *ip;
	uint32_t nh, dst, mtu;
	enum gw_verdict v;

	if (rte_pktmbuf_data_len(m) < RTE_ETHER_HDR_LEN + sizeof(*ip))
		goto bad;
	ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *,
				     RTE_ETHER_HDR_LEN);
	dst = ip->dst_addr;
	if (own_addr4(s, dst)) {
		s->st.local++;
		rte_pktmbuf_free(m);
		return;
	}
	if (rte_lpm_lookup(s->lpm4, ntohl(dst), &nh) != 0 ||
	    (from_link && nh == GW_NH_LINK)) {
		s->st.no_route++;
		icmp_answer(s, m, from_link, AF_INET, GW_ICMP4_UNREACH,
			    GW_ICMP4_UNREACH_NET, 0, &s->st.icmp_unreach);
		rte_pktmbuf_free(m);
		return;
	}
	mtu = nh == GW_NH_LINK ? s->link_mtu : s->eth_mtu;
	v = gw_ipv4_hop(m, RTE_ETHER_HDR_LEN, mtu != 0 ? mtu : UINT32_MAX);
	if (v == GW_DROP_TTL) {
		s->st.ttl_drops++;
		icmp_answer(s, m, from_link, AF_INET, GW_ICMP4_TIME_EXCEEDED,
			    GW_ICMP4_TTL_TRANSIT, 0,
			    &s->st.icmp_time_exceeded);
		rte_pktmbuf_free(m);
		return;
	}
	if (v == GW_DROP_BAD)
		goto bad;
	if (v == GW_TOO_BIG) {
		s->st.mtu_drops++;
		icmp_answer(s, m, from_link, AF_INET, GW_ICMP4_UNREACH,
			    GW_ICMP4_UNREACH_FRAG_NEEDED, mtu,
			    &s->st.icmp_too_big);
		rte_pktmbuf_free(m);
		return;
	}
	if (v == GW_FRAGMENT) {
		fragment4(s, m, nh, dst, mtu);
		return;
	}
	s->st.fwd4++;
	if (nh == GW_NH_LINK)
		link_send(s, m);
	else
		forward_eth(s, m, AF_INET, dst, NULL);
	return;
bad:
	s->st.bad_drops++;
	rte_pktmbuf_free(m);
}

static void
route6(struct gw_site *s, struct rte_mbuf *m, int from_link)
{
	const struct rte_ipv6_hdr *ip;
	uint8_t dst[16];
	enum gw_verdict v;
	uint32_t nh, mtu;

	if (rte_pktmbuf_data_len(m) < RTE_ETHER_HDR_LEN + sizeof(*ip))
		goto bad;
	ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *,
				     RTE_ETHER_HDR_LEN);
	memcpy(dst, ip->dst_addr, 16);
	/* Multicast (ff00::/8: neighbor discovery, MLD) and link-local
	 * (fe80::/10) stay on their link. */
	if (own_addr6(s, dst) || dst[0] == 0xff ||
	    (dst[0] == 0xfe && (dst[1] & 0xc0) == 0x80)) {
		s->st.local++;
		rte_pktmbuf_free(m);
		return;
	}
	if (rte_lpm6_lookup(s->lpm6, dst, &nh) != 0 ||
	    (from_link && nh == GW_NH_LINK)) {
		s->st.no_route++;
		icmp_answer(s, m, from_link, AF_INET6, GW_ICMP6_UNREACH,
			    GW_ICMP6_UNREACH_NOROUTE, 0,
			    &s->st.icmp_unreach);
		rte_pktmbuf_free(m);
		return;
	}
	mtu = nh == GW_NH_LINK ? s->link_mtu : s->eth_mtu;
	v = gw_ipv6_hop(m, RTE_ETHER_HDR_LEN, mtu != 0 ? mtu : UINT32_MAX);
	if (v == GW_DROP_TTL) {
		s->st.ttl_drops++;
		icmp_answer(s, m, from_link, AF_INET6, GW_ICMP6_TIME_EXCEEDED,
			    GW_ICMP6_HOP_TRANSIT, 0,
			    &s->st.icmp_time_exceeded);
		rte_pktmbuf_free(m);
		return;
	}
	if (v == GW_DROP_BAD)
		goto bad;
	if (v == GW_TOO_BIG) {
		s->st.mtu_drops++;
		icmp_answer(s, m, from_link, AF_INET6, GW_ICMP6_PKT_TOO_BIG, 0,
			    mtu, &s->st.icmp_too_big);
		rte_pktmbuf_free(m);
		return;
	}
	s->st.fwd6++;
	if (nh == GW_NH_LINK)
		link_send(s, m);
	else
		forward_eth(s, m, AF_INET6, 0, dst);
	return;
bad:
	s->st.bad_drops++;
	rte_pktmbuf_free(m);
}

/* ARP, NS and NA from the site: learn, and answer for own addresses. */
static int
neighbor_msg(struct gw_site *s, struct rte_mbuf *m)
{
	struct rte_ether_addr mac;
	uint8_t ip6[16];
	unsigned int i;
	uint32_t ip4;
	int kind, r;

	kind = gw_neigh_learn(m, &ip4, ip6, &mac);
	if (kind == 1) {
		neigh_learn(s, AF_INET, ip4, NULL, &mac);
		neigh_tell(s, AF_INET, ip4, NULL, &mac);
	} else if (kind == 2) {
		neigh_learn(s, AF_INET6, 0, ip6, &mac);
		neigh_tell(s, AF_INET6, 0, ip6, &mac);
	}
	for (i = 0; i < s->conf->nb_addr4; i++) {
		r = gw_arp_reply(m, &s->mac, s->conf->addr4[i].ip4);
		if (r == 1) {
			s->st.arp_replies++;
			eth_send(s, m);
			return 1;
		}
	}
	for (i = 0; i < s->conf->nb_addr6; i++) {
		r = gw_nd_advert(m, &s->mac, s->conf->addr6[i].ip6);
		if (r == 1) {
			s->st.nd_adverts++;
			eth_send(s, m);
			return 1;
		}
	}
	if (kind != 0) {
		s->st.local++;
		rte_pktmbuf_free(m);
		return 1;
	}
	return 0;
}

static void
from_eth(struct gw_site *s, struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh;

	if (rte_pktmbuf_data_len(m) < RTE_ETHER_HDR_LEN) {
		s->st.bad_drops++;
		rte_pktmbuf_free(m);
		return;
	}
	eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	switch (rte_be_to_cpu_16(eh->ether_type)) {
	case RTE_ETHER_TYPE_ARP:
		if (!neighbor_msg(s, m)) {
			s->st.local++;
			rte_pktmbuf_free(m);
		}
		return;
	case RTE_ETHER_TYPE_IPV4:
		route4(s, m, 0);
		return;
	case RTE_ETHER_TYPE_IPV6:
		if (!neighbor_msg(s, m))
			route6(s, m, 0);
		return;
	default:
		s->st.other++;
		rte_pktmbuf_free(m);
	}
}

static void
from_link(struct gw_site *s, struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh;

	if (rte_pktmbuf_data_len(m) < RTE_ETHER_HDR_LEN) {
		s->st.bad_drops++;
		rte_pktmbuf_free(m);
		return;
	}
	eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	switch (rte_be_to_cpu_16(eh->ether_type)) {
	case RTE_ETHER_TYPE_IPV4:
		route4(s, m, 1);
		return;
	case RTE_ETHER_TYPE_IPV6:
		route6(s, m, 1);
		return;
	default:
		s->st.other++;
		rte_pktmbuf_free(m);
	}
}

void
gw_site_poll(struct gw_site *s)
{
	struct gw_learned l[GW_BURST];
	struct rte_mbuf *pkts[GW_BURST];
	uint16_t n, i;

	if (s->learn_in != NULL) {
		n = (uint16_t)rte_ring_sc_dequeue_burst_elem(s->learn_in, l,
							     sizeof(l[0]),
							     GW_BURST, NULL);
		for (i = 0; i < n; i++)
			neigh_learn(s, l[i].family, l[i].ip4,
				    l[i].family == AF_INET6 ? l[i].ip6 : NULL,
				    &l[i].mac);
	}
	n = qpio_port_rx_burst(s->eth_port, s->queue, pkts, GW_BURST);
	s->st.eth_rx += n;
	for (i = 0; i < n; i++)
		from_eth(s, pkts[i]);
	n = qpio_port_rx_burst(s->link_port, s->queue, pkts, GW_BURST);
	s->st.link_rx += n;
	for (i = 0; i < n; i++)
		from_link(s, pkts[i]);
	if (s->eth_txn > 0)
		txb_flush(s, s->eth_port, s->eth_txb, &s->eth_txn,
			  &s->st.eth_tx);
	if (s->link_txn > 0)
		txb_flush(s, s->link_port, s->link_txb, &s->link_txn,
			  &s->st.link_tx);
	else
		qpio_port_tx_burst(s->link_port, s->queue, NULL, 0);
}

void
gw_site_release(struct gw_site *s)
{
	unsigned int i;

	for (i = 0; i < GW_MAX_NEIGH; i++)
		if (s->neigh[i].nb_pending != 0) {
			s->st.neigh_held += s->neigh[i].nb_pending;
			rte_pktmbuf_free_bulk(s->neigh[i].pending,
					      s->neigh[i].nb_pending);
			s->neigh[i].nb_pending = 0;
		}
	s->st.tx_drops += s->eth_txn + s->link_txn;
	rte_pktmbuf_free_bulk(s->eth_txb, s->eth_txn);
	rte_pktmbuf_free_bulk(s->link_txb, s->link_txn);
	s->eth_txn = s->link_txn = 0;
}
