/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_PL_ACL_H
#define QPIO_PL_ACL_H

/*
 * qpio-pipeline classification: IPv4 and IPv6 5-tuple rules from a file,
 * one rte_acl context per family built from them, and the 5-tuple of a
 * frame.
 */

#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>

/** Most rules a file may hold. */
#define PL_MAX_RULES 1024

enum pl_action {
	PL_PERMIT = 1,
	PL_DENY = 2,
};

/** Which frames a rule applies to, from its addresses. */
enum pl_family {
	PL_FAMILY_ANY = 0,        /**< both addresses any: IPv4 and IPv6 */
	PL_FAMILY_IPV4 = 4,       /**< an IPv4 address given */
	PL_FAMILY_IPV6 = 6,       /**< an IPv6 address given */
};

/**
 * One rule. IPv4 addresses in host byte order (src, dst); IPv6 ones in
 * network byte order (src6, dst6); ports in host byte order. The depths
 * are prefix lengths, 0..32 (IPv4) or 0..128 (IPv6); 0 is any.
 */
struct pl_rule {
	uint8_t action;           /**< enum pl_action */
	uint8_t proto;            /**< with proto_any 0: this protocol */
	uint8_t proto_any;
	uint8_t family;           /**< enum pl_family */
	uint8_t src_depth;        /**< 0: any */
	uint8_t dst_depth;
	uint32_t src;             /**< family IPV4 */
	uint32_t dst;
	uint8_t src6[16];         /**< family IPV6 */
	uint8_t dst6[16];
	uint16_t sport_lo, sport_hi;
	uint16_t dport_lo, dport_hi;
	unsigned int line;        /**< line in the file */
};

/** The rules of a file, first line first (first match wins). */
struct pl_rules {
	struct pl_rule rule[PL_MAX_RULES];
	unsigned int nb;
};

/**
 * The IPv4 5-tuple rte_acl reads, in network byte order (rte_acl wants
 * input data in network order and rules in host order). The first field
 * is one byte, as rte_acl requires; the others fill 4-byte groups.
 */
struct pl_key {
	uint8_t proto;
	uint8_t pad[3];
	uint32_t src;
	uint32_t dst;
	uint16_t sport;
	uint16_t dport;
};

/**
 * The IPv6 5-tuple, network byte order: proto is the upper-layer
 * protocol after the extension headers; each address is four 4-byte
 * groups of rte_acl's input.
 */
struct pl_key6 {
	uint8_t proto;
	uint8_t pad[3];
	uint8_t src[16];
	uint8_t dst[16];
	uint16_t sport;
	uint16_t dport;
};

/** The 5-tuple of either family; pl_key_get() says which. */
union pl_keys {
	struct pl_key v4;
	struct pl_key6 v6;
};

/**
 * Load a rules file. One rule a line, '#' starts a comment:
 *
 *   <permit|deny> <proto> <src> <dst> <sport> <dport>
 *
 * proto: tcp, udp, icmp, icmpv6, sctp, a number 0..255, or any (the
 * number is matched as it is: icmp is 1 and matches no ICMPv6 packet).
 * src, dst: a.b.c.d/len (0..32), an IPv6 address/len (0..128, any form
 * inet_pton() reads) or any. A rule with an IPv4 address matches IPv4
 * frames only, one with an IPv6 address IPv6 frames only, one whose
 * addresses are both any both families; an IPv4 source with an IPv6
 * destination (or the reverse) is refused. sport, dport: N, LO-HI
 * (0..65535) or any; ports other than any only with tcp, udp, sctp (or
 * their numbers) or any protocol, as only those carry ports (with proto
 * any, a frame of another protocol or a later fragment has ports 0).
 * Numbers are decimal digits only (no sign: qpio_devargs_parse_u32()).
 * The first matching line decides; a packet no line matches is dropped
 * (counted as no_match). Lines are read by conf_file_read()
 * (examples/common).
 *
 * @param path    the rules file.
 * @param rules   receives the rules.
 * @param err     buffer for the refusal, "FILE:LINE: rule (fix)" or
 *   "FILE: rule".
 * @param errlen  bytes of err.
 * @return 0; -ENOENT (cannot open); -EISDIR (path is a directory); -EIO
 *   (read error); -EINVAL (a NUL byte, a line longer than CONF_LINE_MAX,
 *   wrong field count, unknown action or protocol, bad address or length,
 *   host bits set, addresses of two families, bad port or LO > HI, ports
 *   on a protocol without them, more than PL_MAX_RULES rules, no rule at
 *   all).
 */
int pl_rules_load(const char *path, struct pl_rules *rules, char *err,
		  size_t errlen);

struct rte_acl_ctx;

/**
 * The classifier of a rules file: one rte_acl context per family, NULL
 * where no rule applies to that family (its frames are then no_match).
 */
struct pl_acl {
	struct rte_acl_ctx *v4;
	struct rte_acl_ctx *v6;
};

/**
 * Build the rte_acl contexts (one category each) from the rules: rule i
 * goes to the context of its family (both for PL_FAMILY_ANY) with
 * userdata i + 1 and the priority RTE_ACL_MAX_PRIORITY - i, so that the
 * earlier line wins within a family and across the two.
 *
 * @param rules      loaded by pl_rules_load().
 * @param name       prefix of the contexts' names ("NAME_v4", "NAME_v6";
 *   at most 20 characters, unique among live rte_acl contexts).
 * @param socket_id  NUMA socket of the contexts, or SOCKET_ID_ANY.
 * @param acl        receives the contexts; free them with pl_acl_free().
 * @return 0; -EINVAL (a NULL argument, a name over 20 characters);
 *   -ENOMEM or rte_acl's error (message on stderr, nothing kept).
 *
 * Thread-safety: not safe against itself with the same name (rte_acl's
 * list of contexts is shared); call it before the lcores start.
 */
int pl_acl_build(const struct pl_rules *rules, const char *name,
		 int socket_id, struct pl_acl *acl);

/** Free the contexts of pl_acl_build() (NULL ones too) and NULL them. */
void pl_acl_free(struct pl_acl *acl);

/** What pl_key_get() found. */
enum pl_parse {
	PL_IPV4 = 0,       /**< key->v4 filled */
	PL_IPV6,           /**< key->v6 filled */
	PL_NOT_IP,         /**< neither IPv4 nor IPv6 (after at most one
			    *   VLAN tag) */
	PL_BAD,            /**< IP header or IPv6 extension header
			    *   truncated or malformed */
};

/** Most IPv6 extension headers pl_key_get() walks before the upper
 *  layer; a longer chain is PL_BAD. */
#define PL_MAX_EXT_HDRS 8

/**
 * Extract the 5-tuple of an Ethernet frame (one VLAN tag skipped) from
 * its first segment.
 *
 * IPv4: IHL at least 5 and the header within the frame, else PL_BAD.
 * IPv6: the fixed header within the frame, version 6, else PL_BAD; then
 * hop-by-hop options (0), routing (43), destination options (60),
 * fragment (44) and AH (51) headers are skipped, as the kernel's
 * ipv6_skip_exthdr() does, at most PL_MAX_EXT_HDRS of them, each within
 * the frame, else PL_BAD. A fragment header with an offset other than 0
 * ends the walk, and there are no ports: its Next Header is the
 * protocol (RFC 8200 4.5: the first header of the fragmentable part),
 * unless that is one of the extension headers above, whose upper layer a
 * later fragment does not show: then the protocol is 44 (fragment), where
 * ipv6_skip_exthdr() stops for every later fragment. Any other next
 * header (ESP 50 and no next header 59 included) is the protocol.
 *
 * Ports are those of TCP, UDP and SCTP in the first fragment (or an
 * unfragmented packet) when the frame holds them, else 0. The payload
 * length fields are not checked against the frame.
 *
 * @param m    the frame; not changed.
 * @param key  receives the 5-tuple (padding zeroed) of the family the
 *   result names; untouched for PL_NOT_IP and PL_BAD.
 * @return enum pl_parse.
 */
enum pl_parse pl_key_get(const struct rte_mbuf *m, union pl_keys *key);

/** Most frames pl_classify() takes in one call. */
#define PL_CLASSIFY_BURST 64

/**
 * What pl_classify() did with the frames it took: every frame ends in
 * exactly one of not_ip, bad, no_match, denied and permitted, so they
 * sum to in. ipv6 counts the IPv6 frames among in (they are also in one
 * of the others).
 */
struct pl_classify_stats {
	uint64_t in;         /**< frames taken */
	uint64_t ipv6;       /**< of in, pl_key_get() said PL_IPV6 */
	uint64_t not_ip;     /**< pl_key_get() said PL_NOT_IP: freed */
	uint64_t bad;        /**< pl_key_get() said PL_BAD: freed */
	uint64_t no_match;   /**< IPv4 or IPv6, no rule matched: freed */
	uint64_t denied;     /**< first matching rule is deny: freed */
	uint64_t permitted;  /**< first matching rule is permit: kept */
};

/**
 * The classify stage of one burst: the 5-tuple of each frame
 * (pl_key_get()), rte_acl_classify() over the IPv4 ones and over the
 * IPv6 ones, and the first matching rule's action. Frames that are
 * neither IPv4 nor IPv6, malformed, matched by no rule or denied are
 * freed; permitted ones are written to keep in their order, each with
 * hash.usr set to its rule's number + 1 (rules->rule[hash.usr - 1] is
 * the rule).
 *
 * @param acl    contexts from pl_acl_build() over rules.
 * @param rules  the rules acl was built from.
 * @param pkts   n frames; ownership passes to the call (freed or kept).
 * @param n      0..PL_CLASSIFY_BURST frames; more is -EINVAL, nothing
 *   taken.
 * @param keep   room for n frames: the permitted ones, now the caller's.
 * @param st     counters, added to (not reset).
 * @return the number of frames written to keep (0..n), or -EINVAL (n
 *   above PL_CLASSIFY_BURST, or a NULL argument with n > 0).
 *
 * Thread-safety: rte_acl_classify() may run on many lcores over one acl;
 * st and the frames are the caller's own.
 */
int pl_classify(const struct pl_acl *acl, const struct pl_rules *rules,
		struct rte_mbuf **pkts, unsigned int n, struct rte_mbuf **keep,
		struct pl_classify_stats *st);

#endif /* QPIO_PL_ACL_H */
