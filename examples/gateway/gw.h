/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_GW_H
#define QPIO_GW_H

/*
 * qpio-gateway: an L3 gateway between two sites. Each site is one router
 * half: an eth port on the site's interface and one end of an RC link to
 * the other half. This header holds the route configuration (gw_conf.c)
 * and the per-packet steps (gw_pkt.c) that the unit tests reach.
 */

#include <stdint.h>
#include <stdio.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

/** Sites of one gateway: "a" and "b". */
#define GW_NB_SITES 2
/** Interface addresses per site and family. */
#define GW_MAX_ADDRS 8
/** Routes per site and family (rte_lpm rules). */
#define GW_MAX_ROUTES 256

/** Where a route sends a packet. Values are the rte_lpm next hops. */
enum gw_nh {
	GW_NH_ETH = 0,     /**< on-link on the site's interface */
	GW_NH_LINK = 1,    /**< to the other site over the RC link */
};

/** An IPv4 or IPv6 prefix (address in network byte order). */
struct gw_prefix {
	uint8_t family;    /**< AF_INET or AF_INET6 */
	uint8_t depth;     /**< prefix length in bits */
	uint8_t nh;        /**< enum gw_nh (routes only) */
	union {
		uint32_t ip4;              /**< network byte order */
		uint8_t ip6[16];
	};
};

/** What the configuration file gives one site. */
struct gw_site_conf {
	struct gw_prefix addr4[GW_MAX_ADDRS];   /**< interface addresses */
	unsigned int nb_addr4;
	struct gw_prefix addr6[GW_MAX_ADDRS];
	unsigned int nb_addr6;
	struct gw_prefix route4[GW_MAX_ROUTES]; /**< addr prefixes included */
	unsigned int nb_route4;
	struct gw_prefix route6[GW_MAX_ROUTES];
	unsigned int nb_route6;
};

/** The whole configuration: site 0 is "a", site 1 is "b". */
struct gw_conf {
	struct gw_site_conf site[GW_NB_SITES];
};

/**
 * Load a route configuration file. Lines, '#' starts a comment:
 *
 *   <site> addr  <address>/<len>            interface address (IPv4/IPv6);
 *                                           adds its on-link prefix route
 *   <site> route <prefix>/<len> eth|link    a route; eth = on-link
 *
 * site is "a" or "b". Every site needs at least one IPv4 address. A
 * length is decimal digits only (no sign: qpio_devargs_parse_u32()).
 * Lines are read by conf_file_read() (examples/common).
 *
 * @param path file to read.
 * @param conf filled (zeroed first).
 * @param err buffer for the refusal, "FILE:LINE: rule (fix)" or
 *   "FILE: rule".
 * @param errlen bytes of err.
 * @return 0; -ENOENT (file missing or unreadable); -EISDIR (path is a
 *   directory); -EIO (read error); -EINVAL (a NUL byte, a line longer
 *   than CONF_LINE_MAX, or a line that breaks a rule: unknown site, kind
 *   or next hop, missing or extra field, bad address, length out of
 *   range, host bits set in a route prefix, the same prefix twice, too
 *   many entries, site without IPv4 address).
 */
int gw_conf_load(const char *path, struct gw_conf *conf, char *err,
		 size_t errlen);

struct rte_lpm;
struct rte_lpm6;

/**
 * Build the lookup tables of one site (rte_lpm for IPv4, rte_lpm6 for
 * IPv6) from its configuration. Names are "<prefix>_lpm4"/"_lpm6".
 * @return 0 or -ENOMEM/-EINVAL (rte_lpm refused; logged to stderr).
 */
int gw_lpm_build(const struct gw_site_conf *sc, const char *prefix,
		 int socket_id, struct rte_lpm **lpm4, struct rte_lpm6 **lpm6);

/* ------------------------------------------------------------------ */
/* Per-packet steps (gw_pkt.c). They work in place on one mbuf whose    */
/* first segment holds the headers.                                     */
/* ------------------------------------------------------------------ */

/** Verdict of gw_ipv4_ttl_dec() and gw_ipv6_hop_dec(). */
enum gw_verdict {
	GW_FORWARD = 0,    /**< forward the packet */
	GW_DROP_TTL,       /**< TTL/hop limit would reach 0: drop, count */
	GW_DROP_BAD,       /**< malformed header: drop, count */
	GW_TOO_BIG,        /**< above the MTU and may not be fragmented
				(IPv4 DF, any IPv6): drop, count, answer */
	GW_FRAGMENT,       /**< IPv4 above the MTU without DF: TTL
				decremented, fragment it (gw_ipv4_fragment) */
};

/** Smallest IPv4 MTU (RFC 791: 68 bytes). */
#define GW_IPV4_MIN_MTU 68
/** Smallest IPv6 link MTU (RFC 8200 5): 1280 bytes. */
#define GW_IPV6_MIN_MTU 1280

/**
 * gw_ipv4_ttl_dec() with the next hop's MTU: the header checks, then the
 * TTL (RFC 1812 5.3.1, as Linux's ip_forward() orders them), then the
 * size. A datagram whose total length is above mtu with DF set is
 * GW_TOO_BIG and is not changed (the ICMP "fragmentation needed" quotes
 * it as it came, RFC 1191); without DF it is GW_FRAGMENT and its TTL is
 * decremented, as for GW_FORWARD.
 * @param mtu largest IPv4 datagram of the next hop, in bytes (the
 *   interface MTU); UINT32_MAX for no limit.
 * @return GW_FORWARD, GW_FRAGMENT, GW_TOO_BIG, GW_DROP_TTL or GW_DROP_BAD
 *   (version not 4, IHL < 5, total length below the header or above the
 *   frame).
 */
enum gw_verdict gw_ipv4_hop(struct rte_mbuf *m, uint32_t l3, uint32_t mtu);

/**
 * gw_ipv6_hop_dec() with the next hop's MTU: a packet (40-byte header
 * plus payload length) above mtu is GW_TOO_BIG, unchanged: IPv6 routers
 * never fragment (RFC 8200 5), they answer with ICMPv6 packet too big.
 * The hop limit is checked first. @return GW_FORWARD, GW_TOO_BIG,
 * GW_DROP_TTL or GW_DROP_BAD.
 */
enum gw_verdict gw_ipv6_hop(struct rte_mbuf *m, uint32_t l3, uint32_t mtu);

/**
 * Fragment the IPv4 datagram of the Ethernet frame m (IPv4 header at 14,
 * DF clear; after gw_ipv4_hop() said GW_FRAGMENT) into datagrams of at
 * most mtu bytes (RFC 791 2.3 and 3.2: payloads a multiple of 8 bytes
 * but the last; options copied to the first only, or to every fragment
 * when their copy flag is set; MF kept on every fragment of a datagram
 * that was itself a fragment but not its last), by copy with DPDK's
 * rte_ipv4_fragment_copy_nonseg_packet() (any number of input segments).
 * Each fragment gets m's Ethernet header and its header checksum; the
 * Ethernet padding of m is not carried.
 *
 * @param m the frame; freed on success, unchanged on failure.
 * @param mtu next hop's MTU in bytes, GW_IPV4_MIN_MTU .. 65535.
 * @param mp pool of the fragments (one single-segment mbuf each; its
 *   data room must hold 14 + mtu bytes after the headroom).
 * @param out receives the fragments, in order; owned by the caller.
 * @param nb_out entries of out.
 * @return the number of fragments; -EINVAL (mtu out of range, nb_out too
 *   small for the datagram, m shorter than two headers, or DPDK refused
 *   the header), -ENOTSUP (DF set), -ENOMEM (mp empty), -ENOSPC (no
 *   headroom for the Ethernet header). Thread-safe for distinct m.
 */
int gw_ipv4_fragment(struct rte_mbuf *m, uint32_t mtu, struct rte_mempool *mp,
		     struct rte_mbuf **out, uint16_t nb_out);

/**
 * Check the IPv4 header at offset l3 of m and decrement its TTL, updating
 * the header checksum incrementally (RFC 1624, eqn. 3), as a router does
 * (RFC 1812 5.3.1: a packet with TTL <= 1 is not forwarded).
 * @return GW_FORWARD, GW_DROP_TTL (TTL 0 or 1; the packet is unchanged)
 *   or GW_DROP_BAD (version not 4, IHL < 5, total length above the frame).
 */
enum gw_verdict gw_ipv4_ttl_dec(struct rte_mbuf *m, uint32_t l3);

/**
 * Check the IPv6 header at offset l3 and decrement its hop limit (there
 * is no header checksum). @return as gw_ipv4_ttl_dec().
 */
enum gw_verdict gw_ipv6_hop_dec(struct rte_mbuf *m, uint32_t l3);

/**
 * Turn an ARP request for ip (network order) into the reply from mac, in
 * place (RFC 826): swap the addresses, opcode 2, Ethernet source mac and
 * destination the asker.
 * @return 1 when m was such a request and now is the reply, 0 when it is
 *   not a request for ip (m unchanged), -1 when it is malformed.
 */
int gw_arp_reply(struct rte_mbuf *m, const struct rte_ether_addr *mac,
		 uint32_t ip);

/**
 * Write into m (reset first) a broadcast ARP request from mac/sip for
 * tip (addresses in network order): 42 bytes.
 * @return 0, or -ENOSPC when m has no room.
 */
int gw_arp_request(struct rte_mbuf *m, const struct rte_ether_addr *mac,
		   uint32_t sip, uint32_t tip);

/**
 * Turn an ICMPv6 Neighbor Solicitation for ip6 into the Neighbor
 * Advertisement from mac (RFC 4861 4.4, 7.2.4: solicited, override,
 * target link-layer address option), in place, checksum computed.
 * @return 1 when answered, 0 when m is not an NS for ip6, -1 malformed.
 */
int gw_nd_advert(struct rte_mbuf *m, const struct rte_ether_addr *mac,
		 const uint8_t ip6[16]);

/**
 * Write into m (reset first) a Neighbor Solicitation from mac/sip6 for
 * tip6, sent to its solicited-node multicast address (RFC 4861 7.2.2),
 * with the source link-layer address option. @return 0 or -ENOSPC.
 */
int gw_nd_solicit(struct rte_mbuf *m, const struct rte_ether_addr *mac,
		  const uint8_t sip6[16], const uint8_t tip6[16]);

/**
 * Sender of an ARP packet or link-layer address of an NS/NA (for
 * learning neighbors).
 * @return 1 with ip and mac filled (IPv4, network order), 2 with ip6
 *   and mac filled (IPv6),
 *   0 when m teaches nothing.
 */
int gw_neigh_learn(const struct rte_mbuf *m, uint32_t *ip, uint8_t ip6[16],
		   struct rte_ether_addr *mac);

/* ------------------------------------------------------------------ */
/* ICMP errors a router sends (gw_pkt.c).                               */
/* ------------------------------------------------------------------ */

/** ICMPv4 types and codes the gateway sends (RFC 792). */
#define GW_ICMP4_UNREACH 3          /**< destination unreachable */
#define GW_ICMP4_UNREACH_NET 0      /**< code: no route to the network */
#define GW_ICMP4_UNREACH_FRAG_NEEDED 4 /**< code: fragmentation needed and
					  DF set (RFC 1191 4) */
#define GW_ICMP4_TIME_EXCEEDED 11   /**< time exceeded */
#define GW_ICMP4_TTL_TRANSIT 0      /**< code: TTL exceeded in transit */
/** ICMPv6 types and codes the gateway sends (RFC 4443). */
#define GW_ICMP6_UNREACH 1          /**< destination unreachable */
#define GW_ICMP6_UNREACH_NOROUTE 0  /**< code: no route to destination */
#define GW_ICMP6_PKT_TOO_BIG 2      /**< packet too big (RFC 4443 3.2) */
#define GW_ICMP6_TIME_EXCEEDED 3    /**< time exceeded */
#define GW_ICMP6_HOP_TRANSIT 0      /**< code: hop limit exceeded */

/** Largest ICMPv4 error datagram (RFC 1812 4.3.2.3): 576 bytes. */
#define GW_ICMP4_MAX 576
/** Largest ICMPv6 error packet (RFC 4443 2.4 (c)): the IPv6 minimum
 * MTU, 1280 bytes. */
#define GW_ICMP6_MAX 1280

/**
 * May a router answer the IPv4 packet at offset l3 of the Ethernet frame
 * m with an ICMP error? RFC 1812 4.3.2.7 (and RFC 1122 3.2.2) say no for:
 * an ICMP error message (any ICMP type other than the queries 0, 8, 13,
 * 14, 15, 16, 17, 18; an ICMP header cut short counts as one), a
 * fragment other than the first, a frame sent to an Ethernet broadcast or
 * multicast address, a datagram to a multicast (224/4) or broadcast
 * (255.255.255.255) address, a source that is not one host (0/8, 127/8,
 * 224/4 and above). A header that is not a whole IPv4 header (version,
 * IHL, total length within the frame) is not answered either.
 *
 * @param m frame; not changed. Any number of segments.
 * @param l3 offset of the IPv4 header in m (14 after Ethernet).
 * @return 1 when an error may be sent, 0 when not. Thread-safe (reads m).
 */
int gw_icmp4_may_answer(const struct rte_mbuf *m, uint32_t l3);

/**
 * IPv6's rule (RFC 4443 2.4 (e)): no error for an ICMPv6 error message
 * (an ICMPv6 type below 128 right after the IPv6 header, or an ICMPv6
 * header cut short; the gateway does not walk extension headers, so an
 * error behind one is answered), a packet to a multicast address
 * (ff00::/8) or sent to an Ethernet broadcast or multicast address, a
 * source that is unspecified (::) or multicast. A header that is not a
 * whole IPv6 header (version, payload length within the frame) is not
 * answered. @return 1 or 0, as gw_icmp4_may_answer().
 */
int gw_icmp6_may_answer(const struct rte_mbuf *m, uint32_t l3);

/**
 * Write into m (reset first) the ICMP error (type, code) for the IPv4
 * packet at offset l3 of orig: Ethernet addresses of orig swapped (the
 * error goes back to the previous hop), IPv4 from src (network order) to
 * orig's source, TOS 0xc0 (internetwork control), DF clear and the ID
 * given (as Linux's icmp_send(), whose socket does no path MTU discovery:
 * an error that meets a narrower link on its way back is fragmented, not
 * lost), TTL 64, protocol 1; the ICMP header (its 4-byte rest of header
 * info, big-endian: 0, or for fragmentation needed the next hop's MTU,
 * which lands in the low 16 bits as RFC 1191 4 places it) and as much
 * of orig's datagram (its total length, not the Ethernet padding) as
 * keeps the error within GW_ICMP4_MAX bytes (RFC 1812 4.3.2.3) and
 * within mtu, the MTU of the interface it leaves by (Linux's
 * icmp_send() bounds it by the route's MTU the same way); both
 * checksums computed. Call it only when gw_icmp4_may_answer() said 1.
 *
 * @param m an mbuf of the caller's; its first segment gets the error.
 * @param orig the packet answered; not changed.
 * @param id the IPv4 identification, host order (a counter of the
 *   caller's: RFC 6864 4.1 asks a datagram that may be fragmented for an
 *   ID not repeated within its lifetime).
 * @param mtu largest IPv4 datagram of the way out, in bytes; 0 for no
 *   limit but GW_ICMP4_MAX.
 * @return 0; -EMSGSIZE when mtu is below GW_IPV4_MIN_MTU (68, RFC 791:
 *   the least room for the header and the 8 bytes quoted, RFC 792);
 *   -ENOSPC when the frame (at most 14 + GW_ICMP4_MAX bytes) does not
 *   fit in m's first segment (m then holds nothing of use); -EINVAL when
 *   orig is shorter than l3 + 20 bytes or its total length is below 20.
 */
int gw_icmp4_error(struct rte_mbuf *m, const struct rte_mbuf *orig,
		   uint32_t l3, uint8_t type, uint8_t code, uint32_t info,
		   uint32_t src, uint16_t id, uint32_t mtu);

/**
 * The ICMPv6 error (type, code) for the IPv6 packet at l3 of orig, as
 * gw_icmp4_error() does for IPv4: hop limit 64, next header 58, traffic
 * class and flow label 0, the 4 bytes after the checksum info
 * (big-endian: 0, or the MTU of packet too big, RFC 4443 3.2), as much
 * of the invoking packet as keeps the IPv6 packet within GW_ICMP6_MAX
 * bytes (RFC 4443 2.4 (c)), the checksum over the pseudo-header (RFC
 * 4443 2.3). Every IPv6 link carries GW_ICMP6_MAX bytes (RFC 8200 5),
 * so there is no mtu: the gateway refuses IPv6 on a narrower interface.
 * Call it only when gw_icmp6_may_answer() said 1.
 * @param src the error's source address (16 bytes).
 * @return 0; -ENOSPC when the frame (at most 14 + GW_ICMP6_MAX bytes)
 *   does not fit in m's first segment; -EINVAL when orig is shorter
 *   than l3 + 40 bytes.
 */
int gw_icmp6_error(struct rte_mbuf *m, const struct rte_mbuf *orig,
		   uint32_t l3, uint8_t type, uint8_t code, uint32_t info,
		   const uint8_t src[16]);

#endif /* QPIO_GW_H */
