/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_PL_ACL_H
#define QPIO_PL_ACL_H

/*
 * qpio-pipeline classification: IPv4 5-tuple rules from a file, an
 * rte_acl context built from them, and the 5-tuple of a frame.
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

/** One rule, fields in host byte order. */
struct pl_rule {
	uint8_t action;           /**< enum pl_action */
	uint8_t proto;            /**< with proto_any 0: this protocol */
	uint8_t proto_any;
	uint8_t src_depth;        /**< 0: any */
	uint8_t dst_depth;
	uint32_t src;
	uint32_t dst;
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
 * Load a rules file. One rule a line, '#' starts a comment:
 *
 *   <permit|deny> <proto> <src> <dst> <sport> <dport>
 *
 * proto: tcp, udp, icmp, sctp, a number 0..255, or any. src, dst:
 * a.b.c.d/len or any. sport, dport: N, LO-HI (0..65535) or any; ports
 * other than any only with tcp, udp, sctp (or their numbers) or any
 * protocol, as only those carry ports (with proto any, a frame of another
 * protocol or a later fragment has ports 0). Numbers are decimal digits
 * only (no sign: qpio_devargs_parse_u32()). The first
 * matching line decides; a packet no line matches is dropped (counted as
 * no_match). Lines are read by conf_file_read() (examples/common).
 *
 * @param path    the rules file.
 * @param rules   receives the rules.
 * @param err     buffer for the refusal, "FILE:LINE: rule (fix)" or
 *   "FILE: rule".
 * @param errlen  bytes of err.
 * @return 0; -ENOENT (cannot open); -EISDIR (path is a directory); -EIO
 *   (read error); -EINVAL (a NUL byte, a line longer than CONF_LINE_MAX,
 *   wrong field count, unknown action or protocol, bad address or length,
 *   host bits set, bad port or LO > HI, ports on a protocol without
 *   them, more than PL_MAX_RULES rules, no rule at all).
 */
int pl_rules_load(const char *path, struct pl_rules *rules, char *err,
		  size_t errlen);

struct rte_acl_ctx;

/**
 * Build an rte_acl context (one category) from the rules: rule i gets
 * userdata i + 1 and a priority that makes earlier lines win.
 * @return the context, or NULL (message on stderr).
 */
struct rte_acl_ctx *pl_acl_build(const struct pl_rules *rules,
				 const char *name, int socket_id);

/** What pl_key_get() found. */
enum pl_parse {
	PL_IPV4 = 0,       /**< key filled */
	PL_NOT_IPV4,       /**< not IPv4 (after at most one VLAN tag) */
	PL_BAD,            /**< IPv4 header truncated or malformed */
};

/**
 * Extract the 5-tuple of an Ethernet frame (one VLAN tag skipped).
 * Ports are those of TCP, UDP and SCTP in the first fragment when the
 * frame holds them, else 0.
 */
enum pl_parse pl_key_get(const struct rte_mbuf *m, struct pl_key *key);

/** Most frames pl_classify() takes in one call. */
#define PL_CLASSIFY_BURST 64

/**
 * What pl_classify() did with the frames it took: every frame ends in
 * exactly one of not_ipv4, bad, no_match, denied and permitted, so they
 * sum to in.
 */
struct pl_classify_stats {
	uint64_t in;         /**< frames taken */
	uint64_t not_ipv4;   /**< pl_key_get() said PL_NOT_IPV4: freed */
	uint64_t bad;        /**< pl_key_get() said PL_BAD: freed */
	uint64_t no_match;   /**< IPv4, no rule matched: freed */
	uint64_t denied;     /**< first matching rule is deny: freed */
	uint64_t permitted;  /**< first matching rule is permit: kept */
};

/**
 * The classify stage of one burst: the 5-tuple of each frame
 * (pl_key_get()), rte_acl_classify() over the IPv4 ones, and the first
 * matching rule's action. Frames that are not IPv4, malformed, matched by
 * no rule or denied are freed; permitted ones are written to keep in their
 * order, each with hash.usr set to its rule's number + 1 (rules->rule[
 * hash.usr - 1] is the rule).
 *
 * @param ctx    context from pl_acl_build() over rules.
 * @param rules  the rules ctx was built from.
 * @param pkts   n frames; ownership passes to the call (freed or kept).
 * @param n      0..PL_CLASSIFY_BURST frames; more is -EINVAL, nothing
 *   taken.
 * @param keep   room for n frames: the permitted ones, now the caller's.
 * @param st     counters, added to (not reset).
 * @return the number of frames written to keep (0..n), or -EINVAL (n
 *   above PL_CLASSIFY_BURST, or a NULL argument with n > 0).
 *
 * Thread-safety: rte_acl_classify() may run on many lcores over one ctx;
 * st and the frames are the caller's own.
 */
int pl_classify(const struct rte_acl_ctx *ctx, const struct pl_rules *rules,
		struct rte_mbuf **pkts, unsigned int n, struct rte_mbuf **keep,
		struct pl_classify_stats *st);

#endif /* QPIO_PL_ACL_H */
