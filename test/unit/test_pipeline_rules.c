/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * examples/pipeline: the ACL rules file loader (exact rules, refusals
 * named), the rte_acl context built from it (first line wins) and the
 * 5-tuple extraction.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_acl.h>
#include <rte_mbuf.h>

#include "pl_acl.h"
#include "test_common.h"

TestSuite(pipeline_rules);
TestSuite(pipeline_acl, .init = qt_eal_init, .fini = qt_eal_fini);

static char path[64];
static struct pl_rules rules;

/* Write len bytes of text (NUL bytes too) to a fresh file and load it. */
static int
load_n(const char *text, size_t len, char *err, size_t errlen)
{
	snprintf(path, sizeof(path), "/tmp/qpio-pl-%d.rules", getpid());
	qt_file_write(path, text, len);
	return pl_rules_load(path, &rules, err, errlen);
}

static int
load(const char *text, char *err, size_t errlen)
{
	return load_n(text, strlen(text), err, errlen);
}

static const char good[] =
	"# comment\n"
	"deny   udp  any          any           any     53\n"
	"permit tcp  10.0.0.0/8   192.168.1.0/24 1024-65535 80  # web\n"
	"deny   47   any          any           any     any\n"
	"permit any  any          any           any     any\n";

Test(pipeline_rules, loads_exact)
{
	char err[256];

	cr_assert_eq(load(good, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(rules.nb, 4);
	cr_assert_eq(rules.rule[0].action, PL_DENY);
	cr_assert_eq(rules.rule[0].proto, 17);
	cr_assert_eq(rules.rule[0].dport_lo, 53);
	cr_assert_eq(rules.rule[0].dport_hi, 53);
	cr_assert_eq(rules.rule[0].sport_lo, 0);
	cr_assert_eq(rules.rule[0].sport_hi, 65535);
	cr_assert_eq(rules.rule[0].line, 2);
	cr_assert_eq(rules.rule[1].src, 0x0a000000);
	cr_assert_eq(rules.rule[1].src_depth, 8);
	cr_assert_eq(rules.rule[1].dst, 0xc0a80100);
	cr_assert_eq(rules.rule[1].dst_depth, 24);
	cr_assert_eq(rules.rule[1].sport_lo, 1024);
	cr_assert_eq(rules.rule[2].proto, 47);
	cr_assert_eq(rules.rule[3].proto_any, 1);
	cr_assert_eq(rules.rule[3].line, 5);
	cr_assert_eq(rules.rule[0].family, PL_FAMILY_ANY);
	cr_assert_eq(rules.rule[1].family, PL_FAMILY_IPV4);
	cr_assert_eq(rules.rule[3].family, PL_FAMILY_ANY);
	unlink(path);
}

/* IPv6 addresses: network order, exact depth, the family from the one
 * address given; 0.0.0.0/0 and ::/0 keep a rule to their family. */
Test(pipeline_rules, loads_ipv6_exact)
{
	static const char text[] =
		"permit tcp    2001:db8::/32 any      1024-65535 80\n"
		"deny   udp    any  fd00::1/128        any any\n"
		"permit icmpv6 any  any                any any\n"
		"permit any    0.0.0.0/0 any           any any\n"
		"permit any    ::/0 any                any any\n"
		"deny   tcp    2001:db8:8000::/33 ::ffff:10.0.0.0/104 any any\n";
	static const uint8_t db8[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	static const uint8_t fd1[16] = { 0xfd, [15] = 1 };
	static const uint8_t db8_8[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x80 };
	static const uint8_t mapped[16] = { [10] = 0xff, [11] = 0xff,
					    [12] = 10 };
	static const uint8_t zero[16];
	char err[256];

	cr_assert_eq(load(text, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	cr_assert_eq(rules.nb, 6);
	cr_assert_eq(rules.rule[0].family, PL_FAMILY_IPV6);
	cr_assert_arr_eq(rules.rule[0].src6, db8, 16);
	cr_assert_eq(rules.rule[0].src_depth, 32);
	cr_assert_arr_eq(rules.rule[0].dst6, zero, 16);
	cr_assert_eq(rules.rule[0].dst_depth, 0);
	cr_assert_eq(rules.rule[0].sport_lo, 1024);
	cr_assert_eq(rules.rule[0].dport_hi, 80);
	cr_assert_eq(rules.rule[1].family, PL_FAMILY_IPV6);
	cr_assert_arr_eq(rules.rule[1].dst6, fd1, 16);
	cr_assert_eq(rules.rule[1].dst_depth, 128);
	cr_assert_eq(rules.rule[2].family, PL_FAMILY_ANY);
	cr_assert_eq(rules.rule[2].proto, 58);
	cr_assert_eq(rules.rule[3].family, PL_FAMILY_IPV4);
	cr_assert_eq(rules.rule[3].src_depth, 0);
	cr_assert_eq(rules.rule[4].family, PL_FAMILY_IPV6);
	cr_assert_eq(rules.rule[4].src_depth, 0);
	cr_assert_arr_eq(rules.rule[5].src6, db8_8, 16);
	cr_assert_eq(rules.rule[5].src_depth, 33);
	cr_assert_arr_eq(rules.rule[5].dst6, mapped, 16);
	cr_assert_eq(rules.rule[5].dst_depth, 104);
}

static const struct {
	const char *text;
	const char *msg;
} bad[] = {
	{ "permit tcp any any any\n", ":1: want 6 fields" },
	{ "permit tcp any any any any extra\n", ":1: want 6 fields" },
	{ "allow tcp any any any any\n", ":1: action 'allow' unknown" },
	{ "permit tcpx any any any any\n", "protocol 'tcpx' unknown" },
	{ "permit 256 any any any any\n", "protocol '256' unknown" },
	{ "permit tcp 10.0.0.1 any any any\n",
	  "source '10.0.0.1' needs a length" },
	{ "permit tcp 10.0.0.256/8 any any any\n",
	  "source '10.0.0.256' is not an IPv4 address" },
	{ "permit tcp any 10.0.0.0/33 any any\n",
	  "destination length '33' must be 0..32" },
	{ "permit tcp 10.0.0.1/8 any any any\n",
	  "source 10.0.0.1/8 has host bits set" },
	{ "permit tcp any any 80-20 any\n", "source port range '80-20' has LO > HI" },
	{ "permit tcp any any any 65536\n",
	  "destination port '65536' must be N, LO-HI" },
	{ "permit tcp any any any 1-\n", "destination port '1-' must be" },
	{ "permit tcp any any any x\n", "destination port 'x' must be" },
	/* Numbers are decimal digits: a sign is refused, not read. */
	{ "permit udp any any any +53\n",
	  ":1: destination port '+53' must be N, LO-HI (0..65535 in decimal "
	  "digits) or any" },
	{ "permit udp any any 10-+20 any\n",
	  ":1: source port '10-+20' must be N, LO-HI (0..65535 in decimal "
	  "digits) or any" },
	{ "permit +6 any any any any\n",
	  ":1: protocol '+6' unknown (tcp, udp, icmp, icmpv6, sctp, 0..255 in "
	  "decimal digits, or any)" },
	{ "permit tcp 10.0.0.0/+8 any any any\n",
	  ":1: source length '+8' must be 0..32 in decimal digits" },
	{ "permit icmp any any 8 0\n",
	  ":1: protocol 'icmp' has no ports (only tcp, udp and sctp have "
	  "them: write any any)" },
	{ "deny 47 any any any 1723\n",
	  ":1: protocol '47' has no ports" },
	/* IPv6 */
	{ "permit tcp 2001:db8::1 any any any\n",
	  ":1: source '2001:db8::1' needs a length (a.b.c.d/len, x:y::/len) "
	  "or any" },
	{ "permit tcp 2001:db8::g/32 any any any\n",
	  ":1: source '2001:db8::g' is not an IPv6 address" },
	{ "permit tcp any 2001:db8::/129 any any\n",
	  ":1: destination length '129' must be 0..128 in decimal digits" },
	{ "permit tcp 2001:db8::1/32 any any any\n",
	  ":1: source 2001:db8::1/32 has host bits set (give the network "
	  "address)" },
	{ "permit tcp 2001:db8:4000::/33 any any any\n",
	  ":1: source 2001:db8:4000::/33 has host bits set" },
	{ "permit tcp 10.0.0.0/8 2001:db8::/32 any any\n",
	  ":1: source is IPv4 and destination IPv6 (a rule is of one family: "
	  "write a rule for each)" },
	{ "permit tcp fd00::/8 0.0.0.0/0 any any\n",
	  ":1: source is IPv6 and destination IPv4" },
	{ "permit icmpv6 any any 128 any\n",
	  ":1: protocol 'icmpv6' has no ports" },
	{ "# only a comment\n", "no rule" },
	{ "permit any any any any any\n\ndeny x any any any any\n",
	  ":3: protocol 'x' unknown" },
};

Test(pipeline_rules, refusals_named)
{
	char err[256];
	unsigned int i;

	for (i = 0; i < RTE_DIM(bad); i++) {
		err[0] = '\0';
		cr_assert_eq(load(bad[i].text, err, sizeof(err)), -EINVAL,
			     "case %u", i);
		cr_assert_not_null(strstr(err, bad[i].msg),
				   "case %u: '%s' lacks '%s'", i, err,
				   bad[i].msg);
		cr_assert_not_null(strstr(err, path));
	}
	unlink(path);
	cr_assert_eq(pl_rules_load("/nonexistent.rules", &rules, err,
				   sizeof(err)), -ENOENT);
	cr_assert_not_null(strstr(err, "/nonexistent.rules: cannot open"));
}

/* A NUL byte is named as such, not taken for a line without its end. */
Test(pipeline_rules, nul_byte_named)
{
	static const char text[] = "permit any any any any any\n"
				   "permit tcp any any 80\0 any\n";
	char err[256], want[128];

	cr_assert_eq(load_n(text, sizeof(text) - 1, err, sizeof(err)),
		     -EINVAL);
	snprintf(want, sizeof(want), "%s:2: NUL byte at column 22 (a text file "
		 "has none)", path);
	cr_assert_str_eq(err, want);
	unlink(path);
}

/* A directory given as the rules file is refused by name (fopen() opens
 * one, and reading it then failed as "no rule"). */
Test(pipeline_rules, directory_refused)
{
	char dir[] = "/tmp/qpio-pl-dir.XXXXXX", err[256], want[128];

	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(pl_rules_load(dir, &rules, err, sizeof(err)), -EISDIR);
	snprintf(want, sizeof(want), "%s: is a directory (give the file)", dir);
	cr_assert_str_eq(err, want);
	rmdir(dir);
}

/* A frame: Ethernet, IPv4 (IHL 5), then sport/dport. */
static struct rte_mbuf *
frame(struct rte_mempool *mp, uint8_t proto, uint32_t src, uint32_t dst,
      uint16_t sport, uint16_t dport, uint16_t frag)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	uint8_t *p;

	cr_assert_not_null(m);
	p = (uint8_t *)rte_pktmbuf_append(m, 64);
	memset(p, 0, 64);
	p[12] = 0x08;
	p[14] = 0x45;
	p[14 + 6] = (uint8_t)(frag >> 8);
	p[14 + 7] = (uint8_t)frag;
	p[14 + 8] = 64;
	p[14 + 9] = proto;
	src = htonl(src);
	dst = htonl(dst);
	memcpy(p + 26, &src, 4);
	memcpy(p + 30, &dst, 4);
	sport = htons(sport);
	dport = htons(dport);
	memcpy(p + 34, &sport, 2);
	memcpy(p + 36, &dport, 2);
	return m;
}

/* Load text as the rules, build their contexts under name, and make a
 * pool of 63 mbufs of that name. */
static struct rte_mempool *
acl_setup(const char *text, const char *name, struct pl_acl *acl)
{
	struct rte_mempool *mp;
	char err[256];

	cr_assert_eq(load(text, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	cr_assert_eq(pl_acl_build(&rules, name, SOCKET_ID_ANY, acl), 0);
	mp = rte_pktmbuf_pool_create(name, 63, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     SOCKET_ID_ANY);
	cr_assert_not_null(mp);
	return mp;
}

Test(pipeline_acl, first_line_wins)
{
	struct rte_mempool *mp;
	struct pl_acl acl;
	struct rte_mbuf *m[6];
	union pl_keys keys[6];
	const uint8_t *data[6];
	uint32_t res[6];
	unsigned int i;

	mp = acl_setup(good, "pl_t", &acl);
	cr_assert_not_null(acl.v4);
	/* DNS: line 2 (deny). Web from 10/8 to 192.168.1/24: line 3.
	 * The same from port 80: line 5. GRE: line 4. A later fragment of
	 * UDP to 53 has no ports: line 5. ICMP: line 5. */
	m[0] = frame(mp, 17, 0x01020304, 0x05060708, 4000, 53, 0);
	m[1] = frame(mp, 6, 0x0a010203, 0xc0a80109, 40000, 80, 0);
	m[2] = frame(mp, 6, 0x0a010203, 0xc0a80109, 80, 80, 0);
	m[3] = frame(mp, 47, 0x0a010203, 0xc0a80109, 0, 0, 0);
	m[4] = frame(mp, 17, 0x01020304, 0x05060708, 4000, 53, 0x0010);
	m[5] = frame(mp, 1, 0x01020304, 0x05060708, 0, 0, 0);
	for (i = 0; i < 6; i++) {
		cr_assert_eq(pl_key_get(m[i], &keys[i]), PL_IPV4);
		data[i] = (const uint8_t *)&keys[i].v4;
	}
	cr_assert_eq(keys[4].v4.dport, 0);
	cr_assert_eq(keys[1].v4.dport, htons(80));
	cr_assert_eq(rte_acl_classify(acl.v4, data, res, 6, 1), 0);
	cr_assert_eq(rules.rule[res[0] - 1].line, 2);
	cr_assert_eq(rules.rule[res[1] - 1].line, 3);
	cr_assert_eq(rules.rule[res[2] - 1].line, 5);
	cr_assert_eq(rules.rule[res[3] - 1].line, 4);
	cr_assert_eq(rules.rule[res[4] - 1].line, 5);
	cr_assert_eq(rules.rule[res[5] - 1].line, 5);
	/* ARP is not IP; an IPv4 header under the IPv6 type is bad; so is
	 * a truncated header. */
	rte_pktmbuf_mtod(m[0], uint8_t *)[13] = 0x06;
	cr_assert_eq(pl_key_get(m[0], &keys[0]), PL_NOT_IP);
	rte_pktmbuf_mtod(m[0], uint8_t *)[12] = 0x86;
	rte_pktmbuf_mtod(m[0], uint8_t *)[13] = 0xdd;
	cr_assert_eq(pl_key_get(m[0], &keys[0]), PL_BAD);
	rte_pktmbuf_trim(m[1], 64 - 20);
	cr_assert_eq(pl_key_get(m[1], &keys[1]), PL_BAD);
	rte_pktmbuf_free_bulk(m, 6);
	cr_assert_eq(rte_mempool_in_use_count(mp), 0);
	rte_mempool_free(mp);
	pl_acl_free(&acl);
	cr_assert_null(acl.v4);
}

/* The classify stage of one burst: every frame ends in exactly one
 * counter, the permitted ones are kept in order with their rule, the
 * others freed. Rules (good): line 2 denies UDP to 53, line 3 permits web
 * from 10/8 to 192.168.1/24, line 4 denies GRE, line 5 permits the rest;
 * a second context without line 5 leaves frames unmatched. */
Test(pipeline_acl, classify_counts_each_frame_once)
{
	static const char some[] =
		"deny   udp  any        any            any   53\n"
		"permit tcp  10.0.0.0/8 192.168.1.0/24 any   80\n";
	struct pl_classify_stats st = { .in = 100 };
	struct rte_mbuf *m[8], *keep[8];
	struct rte_mempool *mp;
	struct pl_acl acl;
	char err[256];
	int nk;

	cr_assert_eq(load(good, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(pl_acl_build(&rules, "pl_cls", SOCKET_ID_ANY, &acl), 0);
	mp = rte_pktmbuf_pool_create("pl_c", 63, 0, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	cr_assert_not_null(mp);
	m[0] = frame(mp, 17, 0x01020304, 0x05060708, 4000, 53, 0); /* deny */
	m[1] = frame(mp, 6, 0x0a010203, 0xc0a80109, 40000, 80, 0); /* 3 */
	m[2] = frame(mp, 47, 0x0a010203, 0xc0a80109, 0, 0, 0);     /* deny */
	m[3] = frame(mp, 1, 0x01020304, 0x05060708, 0, 0, 0);      /* 5 */
	m[4] = frame(mp, 6, 0x0a010203, 0xc0a80109, 1, 2, 0);      /* 5 */
	m[5] = frame(mp, 6, 0x0a010203, 0xc0a80109, 1, 2, 0);
	rte_pktmbuf_mtod(m[5], uint8_t *)[13] = 0xdd;              /* 0x08dd */
	m[6] = frame(mp, 6, 0x0a010203, 0xc0a80109, 1, 2, 0);
	rte_pktmbuf_mtod(m[6], uint8_t *)[14] = 0x44;              /* IHL 4 */
	m[7] = frame(mp, 17, 0x01020304, 0x05060708, 4000, 54, 0); /* 5 */
	nk = pl_classify(&acl, &rules, m, 8, keep, &st);
	cr_assert_eq(nk, 4);
	cr_assert_eq(st.in, 108);
	cr_assert_eq(st.denied, 2);
	cr_assert_eq(st.not_ip, 1);
	cr_assert_eq(st.ipv6, 0);
	cr_assert_eq(st.bad, 1);
	cr_assert_eq(st.no_match, 0);
	cr_assert_eq(st.permitted, 4);
	cr_assert_eq(keep[0], m[1]);
	cr_assert_eq(keep[1], m[3]);
	cr_assert_eq(keep[2], m[4]);
	cr_assert_eq(keep[3], m[7]);
	cr_assert_eq(rules.rule[keep[0]->hash.usr - 1].line, 3);
	cr_assert_eq(rules.rule[keep[1]->hash.usr - 1].line, 5);
	cr_assert_eq(rules.rule[keep[2]->hash.usr - 1].line, 5);
	cr_assert_eq(rules.rule[keep[3]->hash.usr - 1].line, 5);
	/* the four not kept went back to the pool */
	cr_assert_eq(rte_mempool_in_use_count(mp), 4);
	rte_pktmbuf_free_bulk(keep, 4);
	pl_acl_free(&acl);

	/* Without the last permit: what no line matches is freed and
	 * counted once. */
	cr_assert_eq(load(some, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	cr_assert_eq(pl_acl_build(&rules, "pl_cls2", SOCKET_ID_ANY, &acl), 0);
	memset(&st, 0, sizeof(st));
	m[0] = frame(mp, 6, 0x0a010203, 0xc0a80109, 40000, 80, 0); /* 2 */
	m[1] = frame(mp, 1, 0x01020304, 0x05060708, 0, 0, 0);      /* none */
	m[2] = frame(mp, 17, 0x01020304, 0x05060708, 4000, 53, 0); /* deny */
	nk = pl_classify(&acl, &rules, m, 3, keep, &st);
	cr_assert_eq(nk, 1);
	cr_assert_eq(keep[0], m[0]);
	cr_assert_eq(keep[0]->hash.usr, 2);
	cr_assert_eq(st.in, 3);
	cr_assert_eq(st.no_match, 1);
	cr_assert_eq(st.denied, 1);
	cr_assert_eq(st.permitted, 1);
	cr_assert_eq(st.not_ip + st.bad, 0);
	rte_pktmbuf_free(keep[0]);
	/* Refusals: nothing taken, nothing counted. */
	cr_assert_eq(pl_classify(&acl, &rules, m, PL_CLASSIFY_BURST + 1, keep,
				 &st), -EINVAL);
	cr_assert_eq(pl_classify(&acl, &rules, m, 1, keep, NULL), -EINVAL);
	cr_assert_eq(pl_classify(NULL, &rules, m, 1, keep, &st), -EINVAL);
	cr_assert_eq(pl_classify(&acl, &rules, m, 0, keep, &st), 0);
	cr_assert_eq(st.in, 3);
	cr_assert_eq(rte_mempool_in_use_count(mp), 0);
	rte_mempool_free(mp);
	pl_acl_free(&acl);
}

/* A frame: Ethernet, IPv6 from src to dst with next header nh, ext_len
 * bytes of extension headers, then sport/dport and 4 more bytes. */
static struct rte_mbuf *
frame6(struct rte_mempool *mp, const char *src, const char *dst, uint8_t nh,
       const uint8_t *ext, unsigned int ext_len, uint16_t sport,
       uint16_t dport)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	unsigned int len = 14 + 40 + ext_len + 8;
	uint8_t *p;

	cr_assert_not_null(m);
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	cr_assert_not_null(p);
	memset(p, 0, len);
	p[12] = 0x86;
	p[13] = 0xdd;
	p[14] = 0x60;
	p[14 + 4] = (uint8_t)((ext_len + 8) >> 8);
	p[14 + 5] = (uint8_t)(ext_len + 8);
	p[14 + 6] = nh;
	p[14 + 7] = 64;
	cr_assert_eq(inet_pton(AF_INET6, src, p + 22), 1);
	cr_assert_eq(inet_pton(AF_INET6, dst, p + 38), 1);
	if (ext_len > 0)
		memcpy(p + 54, ext, ext_len);
	sport = htons(sport);
	dport = htons(dport);
	memcpy(p + 54 + ext_len, &sport, 2);
	memcpy(p + 54 + ext_len + 2, &dport, 2);
	return m;
}

static const char rules6[] =
	"deny   udp any                any      any        53\n"
	"permit tcp 2001:db8::/32      fd00::/8 1024-65535 80\n"
	"deny   any 2001:db8:8000::/33 any      any        any\n"
	"permit tcp 10.0.0.0/8         any      any        any\n"
	"permit any any                any      any        any\n";

/* Hop-by-hop, destination options, a first fragment, then UDP. */
static const uint8_t ext_hbh_dst_frag0[24] = {
	60, 0, 1, 4, 0, 0, 0, 0,
	44, 0, 1, 4, 0, 0, 0, 0,
	17, 0, 0x00, 0x01, 0, 0, 0, 7,
};
/* A later fragment (offset 8 bytes) of UDP. */
static const uint8_t ext_frag1[8] = { 17, 0, 0x00, 0x08, 0, 0, 0, 7 };
/* AH of 24 bytes (payload length 4: (4 + 2) * 4), then TCP. */
static const uint8_t ext_ah[24] = { 6, 4, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1 };

/* IPv6 keys through the extension headers, and first line wins in the
 * IPv6 context: a family-any rule, a /33 across a 32-bit group, an IPv4
 * rule that IPv6 frames never match. */
Test(pipeline_acl, ipv6_first_line_wins)
{
	static const unsigned int want[] = { 1, 2, 3, 5, 1, 5, 2 };
	struct rte_mempool *mp;
	struct rte_mbuf *m[7];
	union pl_keys keys[7];
	const uint8_t *data[7];
	uint8_t a[16];
	uint32_t res[7];
	struct pl_acl acl;
	unsigned int i;

	mp = acl_setup(rules6, "pl_t6", &acl);
	cr_assert_not_null(acl.v4);
	cr_assert_not_null(acl.v6);
	m[0] = frame6(mp, "2001:db8::1", "fd00::1", 17, NULL, 0, 4000, 53);
	m[1] = frame6(mp, "2001:db8::1", "fd00::1", 6, NULL, 0, 40000, 80);
	m[2] = frame6(mp, "2001:db8:ffff::1", "fd00::1", 6, NULL, 0, 80, 80);
	m[3] = frame6(mp, "2001:db8:7fff::1", "fd00::1", 6, NULL, 0, 80, 80);
	m[4] = frame6(mp, "2001:db8::1", "fd00::1", 0, ext_hbh_dst_frag0,
		      sizeof(ext_hbh_dst_frag0), 4000, 53);
	m[5] = frame6(mp, "2001:db8::1", "fd00::1", 44, ext_frag1,
		      sizeof(ext_frag1), 4000, 53);
	m[6] = frame6(mp, "2001:db8::1", "fd00::1", 51, ext_ah,
		      sizeof(ext_ah), 40000, 80);
	for (i = 0; i < 7; i++) {
		cr_assert_eq(pl_key_get(m[i], &keys[i]), PL_IPV6, "frame %u",
			     i);
		data[i] = (const uint8_t *)&keys[i].v6;
	}
	cr_assert_eq(inet_pton(AF_INET6, "2001:db8::1", a), 1);
	cr_assert_arr_eq(keys[4].v6.src, a, 16);
	cr_assert_eq(inet_pton(AF_INET6, "fd00::1", a), 1);
	cr_assert_arr_eq(keys[4].v6.dst, a, 16);
	cr_assert_eq(keys[4].v6.proto, 17);
	cr_assert_eq(keys[4].v6.sport, htons(4000));
	cr_assert_eq(keys[4].v6.dport, htons(53));
	cr_assert_eq(keys[5].v6.proto, 17);
	cr_assert_eq(keys[5].v6.sport, 0);
	cr_assert_eq(keys[5].v6.dport, 0);
	cr_assert_eq(keys[6].v6.proto, 6);
	cr_assert_eq(keys[6].v6.dport, htons(80));
	/* A later fragment whose fragmentable part starts with destination
	 * options: its upper layer is not in it, the protocol is 44. */
	{
		static const uint8_t frag_dst[8] = { 60, 0, 0x00, 0x08 };
		union pl_keys k;
		struct rte_mbuf *f = frame6(mp, "2001:db8::1", "fd00::1", 44,
					    frag_dst, sizeof(frag_dst), 4000,
					    53);

		cr_assert_eq(pl_key_get(f, &k), PL_IPV6);
		cr_assert_eq(k.v6.proto, 44);
		cr_assert_eq(k.v6.sport, 0);
		cr_assert_eq(k.v6.dport, 0);
		rte_pktmbuf_free(f);
	}
	cr_assert_eq(rte_acl_classify(acl.v6, data, res, 7, 1), 0);
	for (i = 0; i < 7; i++)
		cr_assert_eq(rules.rule[res[i] - 1].line, want[i], "frame %u",
			     i);
	rte_pktmbuf_free_bulk(m, 7);
	cr_assert_eq(rte_mempool_in_use_count(mp), 0);
	rte_mempool_free(mp);
	pl_acl_free(&acl);
}

/* Malformed IPv6: each is PL_BAD, none read past the frame. */
Test(pipeline_acl, ipv6_malformed_is_bad)
{
	uint8_t chain[9 * 8], trunc[8] = { 17, 2, 1, 4 };
	struct rte_mempool *mp;
	union pl_keys key;
	struct rte_mbuf *m;
	unsigned int i;

	mp = rte_pktmbuf_pool_create("pl_t6b", 63, 0, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	cr_assert_not_null(mp);
	/* 8 destination-options headers are walked, 9 are too many. */
	memset(chain, 0, sizeof(chain));
	for (i = 0; i < 9; i++)
		chain[8 * i] = 60;
	chain[8 * 7] = 17;
	m = frame6(mp, "fd00::2", "fd00::1", 60, chain, 8 * 8, 1, 2);
	cr_assert_eq(pl_key_get(m, &key), PL_IPV6);
	cr_assert_eq(key.v6.proto, 17);
	cr_assert_eq(key.v6.dport, htons(2));
	rte_pktmbuf_free(m);
	chain[8 * 7] = 60;
	chain[8 * 8] = 17;
	m = frame6(mp, "fd00::2", "fd00::1", 60, chain, 9 * 8, 1, 2);
	cr_assert_eq(pl_key_get(m, &key), PL_BAD);
	rte_pktmbuf_free(m);
	/* A hop-by-hop header of 24 bytes in a frame with 16 after it. */
	m = frame6(mp, "fd00::2", "fd00::1", 0, trunc, sizeof(trunc), 1, 2);
	cr_assert_eq(pl_key_get(m, &key), PL_BAD);
	/* An extension header cut short, and the fixed header cut short. */
	rte_pktmbuf_trim(m, 8 + 1);
	cr_assert_eq(pl_key_get(m, &key), PL_BAD);
	rte_pktmbuf_trim(m, 7);
	cr_assert_eq(rte_pktmbuf_data_len(m), 14 + 40);
	cr_assert_eq(pl_key_get(m, &key), PL_BAD);
	rte_pktmbuf_trim(m, 1);
	rte_pktmbuf_mtod(m, uint8_t *)[20] = 17;
	cr_assert_eq(pl_key_get(m, &key), PL_BAD);
	/* Version 4 in an IPv6 frame. */
	rte_pktmbuf_append(m, 1);
	rte_pktmbuf_mtod(m, uint8_t *)[14] = 0x40;
	cr_assert_eq(pl_key_get(m, &key), PL_BAD);
	/* The fixed header alone, UDP next, no ports in the frame. */
	rte_pktmbuf_mtod(m, uint8_t *)[14] = 0x60;
	cr_assert_eq(pl_key_get(m, &key), PL_IPV6);
	cr_assert_eq(key.v6.proto, 17);
	cr_assert_eq(key.v6.sport, 0);
	rte_pktmbuf_free(m);
	cr_assert_eq(rte_mempool_in_use_count(mp), 0);
	rte_mempool_free(mp);
}

/* Rules of one family (text): the other family's context is NULL and
 * its frame no_match. Of an IPv6 frame from fd00::2 and an IPv4 frame
 * from 10.1.2.3, the one kept is the IPv6 one when kept6 is set. */
static void
one_family(struct rte_mempool *mp, const char *text, int kept6)
{
	struct pl_classify_stats st = { 0 };
	struct rte_mbuf *m[2], *keep[2];
	struct pl_acl acl;
	char err[256];

	cr_assert_eq(load(text, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	cr_assert_eq(pl_acl_build(&rules, "pl_c6", SOCKET_ID_ANY, &acl), 0);
	cr_assert_eq(acl.v4 == NULL, kept6);
	cr_assert_eq(acl.v6 == NULL, !kept6);
	m[0] = frame6(mp, "fd00::2", "fd00::1", 6, NULL, 0, 1, 2);
	m[1] = frame(mp, 6, 0x0a010203, 0x01020304, 1, 2, 0);
	cr_assert_eq(pl_classify(&acl, &rules, m, 2, keep, &st), 1);
	cr_assert_eq(keep[0], m[kept6 ? 0 : 1]);
	cr_assert_eq(st.no_match, 1);
	cr_assert_eq(st.ipv6, 1);
	rte_pktmbuf_free(keep[0]);
	pl_acl_free(&acl);
}

/* One burst of both families: order kept, each frame counted once, the
 * IPv6 ones counted in ipv6; rules of one family leave the other's
 * context NULL and its frames no_match. */
Test(pipeline_acl, classify_both_families)
{
	static const char only4[] = "permit any 10.0.0.0/8 any any any\n";
	static const char only6[] = "permit any fd00::/8 any any any\n";
	struct pl_classify_stats st = { 0 };
	struct rte_mbuf *m[6], *keep[6];
	struct rte_mempool *mp;
	struct pl_acl acl;
	char err[256];
	int nk;

	mp = rte_pktmbuf_pool_create("pl_c6", 63, 0, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	cr_assert_not_null(mp);
	cr_assert_eq(load(rules6, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(pl_acl_build(&rules, "pl_c6", SOCKET_ID_ANY, &acl), 0);
	m[0] = frame(mp, 6, 0x0a010203, 0x01020304, 1, 2, 0);      /* 4 */
	m[1] = frame6(mp, "2001:db8::1", "fd00::1", 6, NULL, 0, 40000, 80);
	m[2] = frame6(mp, "2001:db8::1", "fd00::1", 17, NULL, 0, 1, 53);
	m[3] = frame(mp, 17, 0x0a010203, 0x01020304, 1, 53, 0);    /* deny */
	m[4] = frame6(mp, "2001:db8:8000::1", "fd00::1", 58, NULL, 0, 0, 0);
	m[5] = frame(mp, 1, 0x01020304, 0x05060708, 0, 0, 0);      /* 5 */
	nk = pl_classify(&acl, &rules, m, 6, keep, &st);
	cr_assert_eq(nk, 3);
	cr_assert_eq(keep[0], m[0]);
	cr_assert_eq(keep[0]->hash.usr, 4);
	cr_assert_eq(keep[1], m[1]);
	cr_assert_eq(keep[1]->hash.usr, 2);
	cr_assert_eq(keep[2], m[5]);
	cr_assert_eq(keep[2]->hash.usr, 5);
	cr_assert_eq(st.in, 6);
	cr_assert_eq(st.ipv6, 3);
	cr_assert_eq(st.denied, 3);
	cr_assert_eq(st.permitted, 3);
	cr_assert_eq(st.no_match + st.not_ip + st.bad, 0);
	rte_pktmbuf_free_bulk(keep, 3);
	pl_acl_free(&acl);

	one_family(mp, only4, 0);
	one_family(mp, only6, 1);
	cr_assert_eq(rte_mempool_in_use_count(mp), 0);
	rte_mempool_free(mp);
}

/* pl_acl_build() refuses what it cannot name and NULL arguments. */
Test(pipeline_acl, build_refusals)
{
	struct pl_acl acl = { (void *)1, (void *)1 };
	char err[256];

	cr_assert_eq(load(good, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	cr_assert_eq(pl_acl_build(&rules, "a_name_of_21_chars_xx", SOCKET_ID_ANY,
				  &acl), -EINVAL);
	cr_assert_null(acl.v4);
	cr_assert_null(acl.v6);
	cr_assert_eq(pl_acl_build(NULL, "x", SOCKET_ID_ANY, &acl), -EINVAL);
	cr_assert_eq(pl_acl_build(&rules, NULL, SOCKET_ID_ANY, &acl), -EINVAL);
	cr_assert_eq(pl_acl_build(&rules, "x", SOCKET_ID_ANY, NULL), -EINVAL);
	cr_assert_eq(pl_acl_build(&rules, "a_name_of_20_chars_x", SOCKET_ID_ANY,
				  &acl), 0);
	pl_acl_free(&acl);
	pl_acl_free(NULL);
}
