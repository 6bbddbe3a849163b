/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-gateway per-packet steps: TTL / hop limit decrement with the IPv4
 * checksum update, ARP answers and requests, IPv6 neighbor discovery
 * answers and solicitations, neighbor learning.
 */

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_ip_frag.h>
#include <rte_mbuf.h>

#include "gw.h"

#define ICMP6_NS 135
#define ICMP6_NA 136
#define ND_OPT_SLLA 1
#define ND_OPT_TLLA 2
#define ND_HOP_LIMIT 255       /* RFC 4861 7.1.1 */
#define ND_LEN (RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv6_hdr) + \
		sizeof(struct nd_msg))

/* NS and NA with one link-layer address option (RFC 4861 4.3, 4.4). */
struct nd_msg {
	uint8_t type;
	uint8_t code;
	rte_be16_t cksum;
	uint8_t flags;             /* NA: R S O in the top bits */
	uint8_t reserved[3];
	uint8_t target[16];
	uint8_t opt_type;
	uint8_t opt_len;           /* units of 8 bytes */
	struct rte_ether_addr opt_mac;
};
static_assert(sizeof(struct nd_msg) == 32, "NS/NA with one option: 32 bytes");

enum gw_verdict
gw_ipv4_hop(struct rte_mbuf *m, uint32_t l3, uint32_t mtu)
{
	struct rte_ipv4_hdr *ip;
	uint16_t old_w, new_w, hc;
	uint32_t sum, ihl, len;

	if (rte_pktmbuf_data_len(m) < l3 + sizeof(*ip))
		return GW_DROP_BAD;
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, l3);
	ihl = (ip->version_ihl & 0x0f) * 4u;
	len = rte_be_to_cpu_16(ip->total_length);
	if ((ip->version_ihl >> 4) != 4 || ihl < sizeof(*ip) ||
	    l3 + ihl > rte_pktmbuf_data_len(m) || len < ihl ||
	    len > rte_pktmbuf_pkt_len(m) - l3)
		return GW_DROP_BAD;
	if (ip->time_to_live <= 1)
		return GW_DROP_TTL;
	if (len > mtu &&
	    (rte_be_to_cpu_16(ip->fragment_offset) & RTE_IPV4_HDR_DF_FLAG))
		return GW_TOO_BIG;
	/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), m the TTL/protocol word. */
	old_w = (uint16_t)(ip->time_to_live << 8 | ip->next_proto_id);
	ip->time_to_live--;
	new_w = (uint16_t)(ip->time_to_live << 8 | ip->next_proto_id);
	hc = rte_be_to_cpu_16(ip->hdr_checksum);
	sum = (uint16_t)~hc + (uint32_t)(uint16_t)~old_w + new_w;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	ip->hdr_checksum = rte_cpu_to_be_16((uint16_t)~sum);
	return len > mtu ? GW_FRAGMENT : GW_FORWARD;
}

enum gw_verdict
gw_ipv4_ttl_dec(struct rte_mbuf *m, uint32_t l3)
{
	return gw_ipv4_hop(m, l3, UINT32_MAX);
}

enum gw_verdict
gw_ipv6_hop(struct rte_mbuf *m, uint32_t l3, uint32_t mtu)
{
	struct rte_ipv6_hdr *ip;
	uint32_t len;

	if (rte_pktmbuf_data_len(m) < l3 + sizeof(*ip))
		return GW_DROP_BAD;
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, l3);
	len = rte_be_to_cpu_16(ip->payload_len) + (uint32_t)sizeof(*ip);
	if ((rte_be_to_cpu_32(ip->vtc_flow) >> 28) != 6 ||
	    len > rte_pktmbuf_pkt_len(m) - l3)
		return GW_DROP_BAD;
	if (ip->hop_limits <= 1)
		return GW_DROP_TTL;
	/* IPv6 routers never fragment (RFC 8200 5). */
	if (len > mtu)
		return GW_TOO_BIG;
	ip->hop_limits--;
	return GW_FORWARD;
}

enum gw_verdict
gw_ipv6_hop_dec(struct rte_mbuf *m, uint32_t l3)
{
	return gw_ipv6_hop(m, l3, UINT32_MAX);
}

int
gw_ipv4_fragment(struct rte_mbuf *m, uint32_t mtu, struct rte_mempool *mp,
		 struct rte_mbuf **out, uint16_t nb_out)
{
	struct rte_ether_hdr eh;
	struct rte_ipv4_hdr *ip;
	int32_t n, i;

	if (mtu < GW_IPV4_MIN_MTU || mtu > UINT16_MAX || nb_out == 0 ||
	    rte_pktmbuf_data_len(m) < RTE_ETHER_HDR_LEN + sizeof(*ip))
		return -EINVAL;
	memcpy(&eh, rte_pktmbuf_mtod(m, void *), sizeof(eh));
	rte_pktmbuf_adj(m, RTE_ETHER_HDR_LEN);
	/* Ethernet padding is no part of the datagram. */
	ip = rte_pktmbuf_mtod(m, struct rte_ipv4_hdr *);
	rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) -
			      rte_be_to_cpu_16(ip->total_length)));
	n = rte_ipv4_fragment_copy_nonseg_packet(m, out, nb_out,
						 (uint16_t)mtu, mp);
	if (n <= 0) {
		memcpy(rte_pktmbuf_prepend(m, RTE_ETHER_HDR_LEN), &eh,
		       sizeof(eh));
		return n < 0 ? n : -EINVAL;
	}
	for (i = 0; i < n; i++) {
		void *f = rte_pktmbuf_prepend(out[i], RTE_ETHER_HDR_LEN);

		if (f == NULL) {
			rte_pktmbuf_free_bulk(out, (unsigned int)n);
			memcpy(rte_pktmbuf_prepend(m, RTE_ETHER_HDR_LEN), &eh,
			       sizeof(eh));
			return -ENOSPC;
		}
		memcpy(f, &eh, sizeof(eh));
		ip = rte_pktmbuf_mtod_offset(out[i], struct rte_ipv4_hdr *,
					     RTE_ETHER_HDR_LEN);
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	rte_pktmbuf_free(m);
	return n;
}

/* The ARP header of m, or NULL when m is not a complete Ethernet/IPv4
 * ARP packet. */
static struct rte_arp_hdr *
arp_get(const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh;
	struct rte_arp_hdr *arp;

	if (rte_pktmbuf_data_len(m) < RTE_ETHER_HDR_LEN + sizeof(*arp))
		return NULL;
	eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	if (eh->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP))
		return NULL;
	arp = rte_pktmbuf_mtod_offset(m, struct rte_arp_hdr *,
				      RTE_ETHER_HDR_LEN);
	if (arp->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    arp->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != 4)
		return NULL;
	return arp;
}

int
gw_arp_reply(struct rte_mbuf *m, const struct rte_ether_addr *mac,
	     uint32_t ip)
{
	struct rte_ether_hdr *eh;
	struct rte_arp_hdr *arp;

	arp = arp_get(m);
	if (arp == NULL)
		return rte_pktmbuf_data_len(m) >= RTE_ETHER_HDR_LEN &&
			rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->ether_type
			== rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP) ? -1 : 0;
	if (arp->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) ||
	    arp->arp_data.arp_tip != ip)
		return 0;
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
	arp->arp_data.arp_tha = arp->arp_data.arp_sha;
	arp->arp_data.arp_tip = arp->arp_data.arp_sip;
	arp->arp_data.arp_sha = *mac;
	arp->arp_data.arp_sip = ip;
	eh->dst_addr = arp->arp_data.arp_tha;
	eh->src_addr = *mac;
	return 1;
}

int
gw_arp_request(struct rte_mbuf *m, const struct rte_ether_addr *mac,
	       uint32_t sip, uint32_t tip)
{
	struct rte_ether_hdr *eh;
	struct rte_arp_hdr *arp;

	rte_pktmbuf_reset(m);
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m,
			RTE_ETHER_HDR_LEN + sizeof(*arp));
	if (eh == NULL)
		return -ENOSPC;
	memset(&eh->dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
	eh->src_addr = *mac;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp = (struct rte_arp_hdr *)(eh + 1);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
	arp->arp_data.arp_sha = *mac;
	arp->arp_data.arp_sip = sip;
	memset(&arp->arp_data.arp_tha, 0, RTE_ETHER_ADDR_LEN);
	arp->arp_data.arp_tip = tip;
	return 0;
}

/* The IPv6 header and ND message of m when m is an Ethernet/IPv6 ICMPv6
 * NS or NA (no extension headers) with hop limit 255, else NULL. */
static struct nd_msg *
nd_get(const struct rte_mbuf *m, struct rte_ipv6_hdr **ipp)
{
	const struct rte_ether_hdr *eh;
	struct rte_ipv6_hdr *ip;
	struct nd_msg *nd;

	if (rte_pktmbuf_data_len(m) < RTE_ETHER_HDR_LEN + sizeof(*ip) +
	    offsetof(struct nd_msg, opt_type))
		return NULL;
	eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	if (eh->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6))
		return NULL;
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *,
				     RTE_ETHER_HDR_LEN);
	if (ip->proto != IPPROTO_ICMPV6 || ip->hop_limits != ND_HOP_LIMIT)
		return NULL;
	nd = (struct nd_msg *)(ip + 1);
	if ((nd->type != ICMP6_NS && nd->type != ICMP6_NA) || nd->code != 0)
		return NULL;
	*ipp = ip;
	return nd;
}

/* 1 when the ND message of m carries a link-layer option of type t. */
static int
nd_has_opt(const struct rte_mbuf *m, const struct nd_msg *nd, uint8_t t)
{
	return rte_pktmbuf_data_len(m) >= ND_LEN && nd->opt_type == t &&
		nd->opt_len == 1;
}

static void
nd_cksum(struct rte_ipv6_hdr *ip, struct nd_msg *nd)
{
	nd->cksum = 0;
	nd->cksum = rte_ipv6_udptcp_cksum(ip, nd);
}

int
gw_nd_advert(struct rte_mbuf *m, const struct rte_ether_addr *mac,
	     const uint8_t ip6[16])
{
	static const uint8_t unspec[16];
	struct rte_ether_hdr *eh;
	struct rte_ipv6_hdr *ip;
	struct nd_msg *nd;

	nd = nd_get(m, &ip);
	if (nd == NULL || nd->type != ICMP6_NS)
		return 0;
	if (memcmp(nd->target, ip6, 16) != 0)
		return 0;
	/* Duplicate address detection (source ::) is not answered here. */
	if (memcmp(ip->src_addr, unspec, 16) == 0)
		return 0;
	if (m->nb_segs != 1 || rte_pktmbuf_tailroom(m) +
	    rte_pktmbuf_data_len(m) < ND_LEN)
		return -1;
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	eh->dst_addr = eh->src_addr;
	eh->src_addr = *mac;
	memcpy(ip->dst_addr, ip->src_addr, 16);
	memcpy(ip->src_addr, ip6, 16);
	ip->payload_len = rte_cpu_to_be_16(sizeof(*nd));
	ip->hop_limits = ND_HOP_LIMIT;
	nd->type = ICMP6_NA;
	nd->code = 0;
	nd->flags = 0x60;          /* solicited, override */
	memset(nd->reserved, 0, sizeof(nd->reserved));
	nd->opt_type = ND_OPT_TLLA;
	nd->opt_len = 1;
	nd->opt_mac = *mac;
	m->data_len = ND_LEN;
	m->pkt_len = ND_LEN;
	nd_cksum(ip, nd);
	return 1;
}

int
gw_nd_solicit(struct rte_mbuf *m, const struct rte_ether_addr *mac,
	      const uint8_t sip6[16], const uint8_t tip6[16])
{
	struct rte_ether_hdr *eh;
	struct rte_ipv6_hdr *ip;
	struct nd_msg *nd;

	rte_pktmbuf_reset(m);
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, ND_LEN);
	if (eh == NULL)
		return -ENOSPC;
	memset(eh, 0, ND_LEN);
	/* Solicited-node multicast ff02::1:ffXX:XXXX, MAC 33:33:ff:XX:XX:XX. */
	ip = (struct rte_ipv6_hdr *)(eh + 1);
	ip->dst_addr[0] = 0xff;
	ip->dst_addr[1] = 0x02;
	ip->dst_addr[11] = 0x01;
	ip->dst_addr[12] = 0xff;
	memcpy(&ip->dst_addr[13], &tip6[13], 3);
	eh->dst_addr.addr_bytes[0] = 0x33;
	eh->dst_addr.addr_bytes[1] = 0x33;
	memcpy(&eh->dst_addr.addr_bytes[2], &ip->dst_addr[12], 4);
	eh->src_addr = *mac;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
	ip->payload_len = rte_cpu_to_be_16(sizeof(*nd));
	ip->proto = IPPROTO_ICMPV6;
	ip->hop_limits = ND_HOP_LIMIT;
	memcpy(ip->src_addr, sip6, 16);
	nd = (struct nd_msg *)(ip + 1);
	nd->type = ICMP6_NS;
	memcpy(nd->target, tip6, 16);
	nd->opt_type = ND_OPT_SLLA;
	nd->opt_len = 1;
	nd->opt_mac = *mac;
	nd_cksum(ip, nd);
	return 0;
}

int
gw_neigh_learn(const struct rte_mbuf *m, uint32_t *ip, uint8_t ip6[16],
	       struct rte_ether_addr *mac)
{
	static const uint8_t unspec[16];
	const struct rte_arp_hdr *arp;
	struct rte_ipv6_hdr *ip6h;
	const struct nd_msg *nd;

	arp = arp_get(m);
	if (arp != NULL) {
		if (arp->arp_data.arp_sip == 0 ||
		    !rte_is_unicast_ether_addr(&arp->arp_data.arp_sha))
			return 0;
		*ip = arp->arp_data.arp_sip;
		*mac = arp->arp_data.arp_sha;
		return 1;
	}
	nd = nd_get(m, &ip6h);
	if (nd == NULL)
		return 0;
	if (nd->type == ICMP6_NS && nd_has_opt(m, nd, ND_OPT_SLLA) &&
	    memcmp(ip6h->src_addr, unspec, 16) != 0) {
		memcpy(ip6, ip6h->src_addr, 16);
		*mac = nd->opt_mac;
		return 2;
	}
	if (nd->type == ICMP6_NA && nd_has_opt(m, nd, ND_OPT_TLLA)) {
		memcpy(ip6, nd->target, 16);
		*mac = nd->opt_mac;
		return 2;
	}
	return 0;
}

/* ICMP errors (RFC 792, RFC 1812 4.3.2, RFC 4443). */

#define ICMP_HDR_LEN 8
#define ICMP_ERR_TTL 64

/* 1 when the frame's Ethernet destination is one station (an error is
 * never sent for a link-layer broadcast or multicast, RFC 1812 4.3.2.7). */
static int
eth_dst_unicast(const struct rte_mbuf *m)
{
	struct rte_ether_hdr eh_buf;
	const struct rte_ether_hdr *eh;

	eh = rte_pktmbuf_read(m, 0, sizeof(eh_buf), &eh_buf);
	return eh != NULL && rte_is_unicast_ether_addr(&eh->dst_addr);
}

/* 1 when ICMP type t is a query or a reply to one, not an error. */
static int
icmp4_is_query(uint8_t t)
{
	return t == 0 || t == 8 || (t >= 13 && t <= 18);
}

int
gw_icmp4_may_answer(const struct rte_mbuf *m, uint32_t l3)
{
	struct rte_ipv4_hdr ip_buf;
	const struct rte_ipv4_hdr *ip;
	uint32_t ihl, src, dst, len;
	const uint8_t *type;
	uint8_t t_buf;

	ip = rte_pktmbuf_read(m, l3, sizeof(ip_buf), &ip_buf);
	if (ip == NULL || !eth_dst_unicast(m))
		return 0;
	ihl = (ip->version_ihl & 0x0f) * 4u;
	len = rte_be_to_cpu_16(ip->total_length);
	if ((ip->version_ihl >> 4) != 4 || ihl < sizeof(*ip) || len < ihl ||
	    len > rte_pktmbuf_pkt_len(m) - l3)
		return 0;
	if ((rte_be_to_cpu_16(ip->fragment_offset) &
	     RTE_IPV4_HDR_OFFSET_MASK) != 0)
		return 0;
	src = rte_be_to_cpu_32(ip->src_addr);
	dst = rte_be_to_cpu_32(ip->dst_addr);
	if (dst >= 0xe0000000u || src >= 0xe0000000u ||
	    (src >> 24) == 0 || (src >> 24) == 127)
		return 0;
	if (ip->next_proto_id == IPPROTO_ICMP) {
		if (len < ihl + 1)
			return 0;
		type = rte_pktmbuf_read(m, l3 + ihl, 1, &t_buf);
		if (type == NULL || !icmp4_is_query(*type))
			return 0;
	}
	return 1;
}

int
gw_icmp6_may_answer(const struct rte_mbuf *m, uint32_t l3)
{
	static const uint8_t unspec[16];
	struct rte_ipv6_hdr ip_buf;
	const struct rte_ipv6_hdr *ip;
	const uint8_t *type;
	uint32_t plen;
	uint8_t t_buf;

	ip = rte_pktmbuf_read(m, l3, sizeof(ip_buf), &ip_buf);
	if (ip == NULL || !eth_dst_unicast(m))
		return 0;
	plen = rte_be_to_cpu_16(ip->payload_len);
	if ((rte_be_to_cpu_32(ip->vtc_flow) >> 28) != 6 ||
	    plen + sizeof(*ip) > rte_pktmbuf_pkt_len(m) - l3)
		return 0;
	if (ip->dst_addr[0] == 0xff || ip->src_addr[0] == 0xff ||
	    memcmp(ip->src_addr, unspec, 16) == 0)
		return 0;
	if (ip->proto == IPPROTO_ICMPV6) {
		if (plen < 1)
			return 0;
		type = rte_pktmbuf_read(m, l3 + sizeof(*ip), 1, &t_buf);
		if (type == NULL || *type < 128)
			return 0;
	}
	return 1;
}

/* Start the error frame in m for the IPv4 or IPv6 packet at l3 of orig
 * (ether_type says which): the Ethernet header with orig's addresses
 * swapped, hdr_len bytes zeroed, the ICMP header (type, code, checksum
 * 0, info big-endian), then as much of orig's
 * datagram (its length field's, not the Ethernet padding) as keeps the
 * IP packet within max bytes, copied from any segments. *quote gets that
 * count (at least hdr_len: orig's header is always quoted). Returns 0,
 * -EINVAL (orig has no whole IP header at l3, or its length field says
 * less than one) or
 * -ENOSPC (the frame does not fit in m's first segment). */
static int
icmp_frame(struct rte_mbuf *m, const struct rte_mbuf *orig, uint32_t l3,
	   uint16_t ether_type, uint32_t hdr_len, uint32_t max,
	   uint8_t type, uint8_t code, uint32_t info,
	   uint8_t **frame, uint32_t *quote)
{
	union {
		struct rte_ipv4_hdr v4;
		struct rte_ipv6_hdr v6;
	} ip_buf;
	struct rte_ether_hdr eh_buf;
	const struct rte_ether_hdr *oeh;
	struct rte_ether_hdr *eh;
	const void *oip, *p;
	uint32_t len;
	uint8_t *f, *q;

	oip = rte_pktmbuf_read(orig, l3, hdr_len, &ip_buf);
	oeh = rte_pktmbuf_read(orig, 0, sizeof(eh_buf), &eh_buf);
	if (oip == NULL || oeh == NULL)
		return -EINVAL;
	if (ether_type == RTE_ETHER_TYPE_IPV4)
		len = rte_be_to_cpu_16(((const struct rte_ipv4_hdr *)oip)->
				       total_length);
	else
		len = hdr_len + rte_be_to_cpu_16(((const struct rte_ipv6_hdr *)
						  oip)->payload_len);
	if (len < hdr_len)
		return -EINVAL;
	len = RTE_MIN(len, max - hdr_len - ICMP_HDR_LEN);
	rte_pktmbuf_reset(m);
	f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(RTE_ETHER_HDR_LEN +
					  hdr_len + ICMP_HDR_LEN + len));
	if (f == NULL)
		return -ENOSPC;
	q = f + RTE_ETHER_HDR_LEN + hdr_len + ICMP_HDR_LEN;
	p = rte_pktmbuf_read(orig, l3, len, q);
	if (p == NULL)
		return -EINVAL;
	if (p != q)
		memcpy(q, p, len);
	eh = (struct rte_ether_hdr *)f;
	eh->dst_addr = oeh->src_addr;
	eh->src_addr = oeh->dst_addr;
	eh->ether_type = rte_cpu_to_be_16(ether_type);
	memset(f + RTE_ETHER_HDR_LEN, 0, hdr_len + ICMP_HDR_LEN);
	q = f + RTE_ETHER_HDR_LEN + hdr_len;       /* the ICMP header */
	q[0] = type;
	q[1] = code;
	info = rte_cpu_to_be_32(info);
	memcpy(&q[4], &info, sizeof(info));
	*frame = f;
	*quote = len;
	return 0;
}

int
gw_icmp4_error(struct rte_mbuf *m, const struct rte_mbuf *orig, uint32_t l3,
	       uint8_t type, uint8_t code, uint32_t info, uint32_t src,
	       uint16_t id, uint32_t mtu)
{
	struct rte_ipv4_hdr *ip;
	uint32_t quote, orig_src;
	uint8_t *f, *icmp;
	uint16_t ck;
	int ret;

	if (mtu != 0 && mtu < GW_IPV4_MIN_MTU)
		return -EMSGSIZE;
	ret = icmp_frame(m, orig, l3, RTE_ETHER_TYPE_IPV4, sizeof(*ip),
			 mtu != 0 ? RTE_MIN(mtu, (uint32_t)GW_ICMP4_MAX) :
			 GW_ICMP4_MAX, type, code, info, &f, &quote);
	if (ret < 0)
		return ret;
	/* orig's source, from the quote's copy of its header */
	memcpy(&orig_src, f + RTE_ETHER_HDR_LEN + sizeof(*ip) + ICMP_HDR_LEN +
	       offsetof(struct rte_ipv4_hdr, src_addr), sizeof(orig_src));
	ip = (struct rte_ipv4_hdr *)(f + RTE_ETHER_HDR_LEN);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0xc0;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) +
						       ICMP_HDR_LEN + quote));
	ip->packet_id = rte_cpu_to_be_16(id);
	ip->time_to_live = ICMP_ERR_TTL;
	ip->next_proto_id = IPPROTO_ICMP;
	ip->src_addr = src;
	ip->dst_addr = orig_src;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	icmp = (uint8_t *)(ip + 1);
	ck = (uint16_t)~rte_raw_cksum(icmp, ICMP_HDR_LEN + quote);
	memcpy(&icmp[2], &ck, sizeof(ck));
	return 0;
}

int
gw_icmp6_error(struct rte_mbuf *m, const struct rte_mbuf *orig, uint32_t l3,
	       uint8_t type, uint8_t code, uint32_t info, const uint8_t src[16])
{
	struct rte_ipv6_hdr *ip;
	uint8_t *f, *icmp;
	uint32_t quote;
	uint16_t ck;
	int ret;

	ret = icmp_frame(m, orig, l3, RTE_ETHER_TYPE_IPV6, sizeof(*ip),
			 GW_ICMP6_MAX, type, code, info, &f, &quote);
	if (ret < 0)
		return ret;
	ip = (struct rte_ipv6_hdr *)(f + RTE_ETHER_HDR_LEN);
	ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
	ip->payload_len = rte_cpu_to_be_16((uint16_t)(ICMP_HDR_LEN + quote));
	ip->proto = IPPROTO_ICMPV6;
	ip->hop_limits = ICMP_ERR_TTL;
	memcpy(ip->src_addr, src, 16);
	/* orig's source, from the quote's copy of its header */
	memcpy(ip->dst_addr, f + RTE_ETHER_HDR_LEN + sizeof(*ip) +
	       ICMP_HDR_LEN + offsetof(struct rte_ipv6_hdr, src_addr), 16);
	icmp = (uint8_t *)(ip + 1);
	ck = rte_ipv6_udptcp_cksum(ip, icmp);
	memcpy(&icmp[2], &ck, sizeof(ck));
	return 0;
}
