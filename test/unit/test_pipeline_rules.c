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
	unlink(path);
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
	  ":1: protocol '+6' unknown (tcp, udp, icmp, sctp, 0..255 in decimal "
	  "digits, or any)" },
	{ "permit tcp 10.0.0.0/+8 any any any\n",
	  ":1: source length '+8' must be 0..32 in decimal digits" },
	{ "permit icmp any any 8 0\n",
	  ":1: protocol 'icmp' has no ports (only tcp, udp and sctp have "
	  "them: write any any)" },
	{ "deny 47 any any any 1723\n",
	  ":1: protocol '47' has no ports" },
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

Test(pipeline_acl, first_line_wins)
{
	struct rte_mempool *mp;
	struct rte_acl_ctx *ctx;
	struct rte_mbuf *m[6];
	struct pl_key keys[6];
	const uint8_t *data[6];
	uint32_t res[6];
	char err[256];
	unsigned int i;

	cr_assert_eq(load(good, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	ctx = pl_acl_build(&rules, "pl_test", SOCKET_ID_ANY);
	cr_assert_not_null(ctx);
	mp = rte_pktmbuf_pool_create("pl_t", 63, 0, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	cr_assert_not_null(mp);
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
		data[i] = (const uint8_t *)&keys[i];
	}
	cr_assert_eq(keys[4].dport, 0);
	cr_assert_eq(keys[1].dport, htons(80));
	cr_assert_eq(rte_acl_classify(ctx, data, res, 6, 1), 0);
	cr_assert_eq(rules.rule[res[0] - 1].line, 2);
	cr_assert_eq(rules.rule[res[1] - 1].line, 3);
	cr_assert_eq(rules.rule[res[2] - 1].line, 5);
	cr_assert_eq(rules.rule[res[3] - 1].line, 4);
	cr_assert_eq(rules.rule[res[4] - 1].line, 5);
	cr_assert_eq(rules.rule[res[5] - 1].line, 5);
	/* Not IPv4, and a truncated header. */
	rte_pktmbuf_mtod(m[0], uint8_t *)[12] = 0x86;
	rte_pktmbuf_mtod(m[0], uint8_t *)[13] = 0xdd;
	cr_assert_eq(pl_key_get(m[0], &keys[0]), PL_NOT_IPV4);
	rte_pktmbuf_trim(m[1], 64 - 20);
	cr_assert_eq(pl_key_get(m[1], &keys[1]), PL_BAD);
	rte_pktmbuf_free_bulk(m, 6);
	cr_assert_eq(rte_mempool_in_use_count(mp), 0);
	rte_mempool_free(mp);
	rte_acl_free(ctx);
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
	struct rte_acl_ctx *ctx;
	struct rte_mempool *mp;
	char err[256];
	int nk;

	cr_assert_eq(load(good, err, sizeof(err)), 0, "%s", err);
	ctx = pl_acl_build(&rules, "pl_cls", SOCKET_ID_ANY);
	cr_assert_not_null(ctx);
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
	nk = pl_classify(ctx, &rules, m, 8, keep, &st);
	cr_assert_eq(nk, 4);
	cr_assert_eq(st.in, 108);
	cr_assert_eq(st.denied, 2);
	cr_assert_eq(st.not_ipv4, 1);
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
	rte_acl_free(ctx);

	/* Without the last permit: what no line matches is freed and
	 * counted once. */
	cr_assert_eq(load(some, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	ctx = pl_acl_build(&rules, "pl_cls2", SOCKET_ID_ANY);
	cr_assert_not_null(ctx);
	memset(&st, 0, sizeof(st));
	m[0] = frame(mp, 6, 0x0a010203, 0xc0a80109, 40000, 80, 0); /* 2 */
	m[1] = frame(mp, 1, 0x01020304, 0x05060708, 0, 0, 0);      /* none */
	m[2] = frame(mp, 17, 0x01020304, 0x05060708, 4000, 53, 0); /* deny */
	nk = pl_classify(ctx, &rules, m, 3, keep, &st);
	cr_assert_eq(nk, 1);
	cr_assert_eq(keep[0], m[0]);
	cr_assert_eq(keep[0]->hash.usr, 2);
	cr_assert_eq(st.in, 3);
	cr_assert_eq(st.no_match, 1);
	cr_assert_eq(st.denied, 1);
	cr_assert_eq(st.permitted, 1);
	cr_assert_eq(st.not_ipv4 + st.bad, 0);
	rte_pktmbuf_free(keep[0]);
	/* Refusals: nothing taken, nothing counted. */
	cr_assert_eq(pl_classify(ctx, &rules, m, PL_CLASSIFY_BURST + 1, keep,
				 &st), -EINVAL);
	cr_assert_eq(pl_classify(ctx, &rules, m, 1, keep, NULL), -EINVAL);
	cr_assert_eq(pl_classify(ctx, &rules, m, 0, keep, &st), 0);
	cr_assert_eq(st.in, 3);
	cr_assert_eq(rte_mempool_in_use_count(mp), 0);
	rte_mempool_free(mp);
	rte_acl_free(ctx);
}
