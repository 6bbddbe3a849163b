/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * examples/gateway: the route file loader and its refusals, the lookup
 * tables, TTL / hop-limit decrement with the IPv4 checksum update, ARP
 * and neighbor discovery answers (exact bytes), ICMP errors and the rules
 * that forbid them (exact bytes), and one router half on ring ports (TTL
 * 1 and no route dropped, counted and answered, the ICMP rate, neighbor
 * resolution).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_ip.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "qpio_port.h"
#include "gw.h"
#include "gw_site.h"
#include "test_common.h"

TestSuite(gateway_conf);
TestSuite(gateway_pkt, .init = qt_eal_init, .fini = qt_eal_fini);

static char conf_path[64];

/* Write len bytes of text (NUL bytes too) to a fresh file and load it. */
static int
load_n(const char *text, size_t len, struct gw_conf *c, char *err,
       size_t errlen)
{
	snprintf(conf_path, sizeof(conf_path), "/tmp/qpio-gw-%d.conf",
		 getpid());
	qt_file_write(conf_path, text, len);
	return gw_conf_load(conf_path, c, err, errlen);
}

/* Write text to a fresh file and load it. */
static int
load(const char *text, struct gw_conf *c, char *err, size_t errlen)
{
	return load_n(text, strlen(text), c, err, errlen);
}

static const char good_conf[] =
	"# comment\n"
	"a addr  10.1.0.1/24   # site a\n"
	"a addr  fd00:1::1/64\n"
	"a route 10.2.0.0/24 link\n"
	"a route fd00:2::/64 link\n"
	"\n"
	"b addr 10.2.0.1/24\n"
	"b route 0.0.0.0/0 link\n"
	"b route 192.168.7.0/24 eth\n";

Test(gateway_conf, loads_exact_entries)
{
	struct gw_conf c;
	char err[256];

	cr_assert_eq(load(good_conf, &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.site[0].nb_addr4, 1);
	cr_assert_eq(c.site[0].nb_addr6, 1);
	cr_assert_eq(c.site[0].nb_route4, 2);
	cr_assert_eq(c.site[0].nb_route6, 2);
	cr_assert_eq(c.site[0].addr4[0].ip4, htonl(0x0a010001));
	cr_assert_eq(c.site[0].addr4[0].depth, 24);
	/* The addr line added its on-link prefix, host bits cleared. */
	cr_assert_eq(c.site[0].route4[0].ip4, htonl(0x0a010000));
	cr_assert_eq(c.site[0].route4[0].nh, GW_NH_ETH);
	cr_assert_eq(c.site[0].route4[1].ip4, htonl(0x0a020000));
	cr_assert_eq(c.site[0].route4[1].nh, GW_NH_LINK);
	cr_assert_eq(c.site[0].route6[0].ip6[1], 0x00);
	cr_assert_eq(c.site[0].route6[0].ip6[3], 0x01);
	cr_assert_eq(c.site[0].route6[0].ip6[15], 0x00);
	cr_assert_eq(c.site[0].route6[1].nh, GW_NH_LINK);
	cr_assert_eq(c.site[1].nb_addr4, 1);
	cr_assert_eq(c.site[1].nb_addr6, 0);
	cr_assert_eq(c.site[1].nb_route4, 3);
	cr_assert_eq(c.site[1].route4[1].depth, 0);
	cr_assert_eq(c.site[1].route4[2].nh, GW_NH_ETH);
	unlink(conf_path);
}

/* Each bad file with the message its refusal must carry. */
static const struct {
	const char *text;
	const char *msg;
} bad_confs[] = {
	{ "c addr 10.0.0.1/24\n", ":1: site 'c' unknown (sites are a and b)" },
	{ "a\n", ":1: missing kind (addr or route)" },
	{ "a via 10.0.0.1/24\n", ":1: kind 'via' unknown" },
	{ "a addr 10.0.0.1\n", ":1: '10.0.0.1' needs a prefix length" },
	{ "a addr 10.0.0.300/24\n", "'10.0.0.300' is not an IPv4 or IPv6" },
	{ "a addr 10.0.0.1/33\n", "prefix length '33' must be 0..32" },
	{ "a addr 10.0.0.1/\n", "prefix length '' must be 0..32" },
	{ "a addr fd00::1/129\n", "prefix length '129' must be 0..128" },
	/* A length is decimal digits: a sign is refused, not read. */
	{ "a addr 10.0.0.1/+8\n",
	  ":1: prefix length '+8' must be 0..32 in decimal digits" },
	{ "a addr 10.1.0.1/24\na route fd00:2::/+64 link\n",
	  ":2: prefix length '+64' must be 0..128 in decimal digits" },
	{ "a addr 10.0.0.1/32\n", "interface address needs a length in 1..31" },
	{ "a addr 10.0.0.1/24 x\n", "addr takes one field" },
	{ "a addr 10.1.0.1/24\na route 10.2.0.1/24 link\n",
	  ":2: route prefix has host bits set beyond /24" },
	{ "a addr 10.1.0.1/24\na route fd00:2::1/64 link\n",
	  ":2: route prefix has host bits set beyond /64" },
	{ "a addr 10.1.0.1/24\na route 10.2.0.0/24 via\n",
	  ":2: next hop 'via' unknown" },
	{ "a addr 10.1.0.1/24\na route 10.2.0.0/24\n",
	  ":2: route takes two fields" },
	{ "a addr 10.1.0.1/24\na route 10.1.0.0/24 eth\n",
	  ":2: route 10.1.0.0/24 given twice" },
	{ "a addr 10.1.0.1/24 a b c d\n", ":1: too many fields" },
	{ "a addr 10.1.0.1/24\n", "site b has no IPv4 address" },
	{ "a addr fd00::1/64\nb addr 10.2.0.1/24\n",
	  "site a has no IPv4 address" },
};

Test(gateway_conf, refusals_named)
{
	struct gw_conf c;
	char err[256], *longline;
	unsigned int i;

	for (i = 0; i < RTE_DIM(bad_confs); i++) {
		err[0] = '\0';
		cr_assert_eq(load(bad_confs[i].text, &c, err, sizeof(err)),
			     -EINVAL, "case %u", i);
		cr_assert_not_null(strstr(err, bad_confs[i].msg),
				   "case %u: '%s' lacks '%s'", i, err,
				   bad_confs[i].msg);
		cr_assert_not_null(strstr(err, conf_path), "case %u", i);
	}
	longline = malloc(400);
	cr_assert_not_null(longline);
	memset(longline, '#', 399);
	longline[399] = '\0';
	cr_assert_eq(load(longline, &c, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, ":1: line longer than 256"), "%s", err);
	free(longline);
	unlink(conf_path);
	cr_assert_eq(gw_conf_load("/nonexistent/gw.conf", &c, err,
				  sizeof(err)), -ENOENT);
	cr_assert_not_null(strstr(err, "/nonexistent/gw.conf: cannot open"));
}

/* A NUL byte is named as such, not taken for a line without its end;
 * a directory given as the file is refused by name. */
Test(gateway_conf, nul_byte_and_directory_named)
{
	static const char text[] = "a addr 10.1.0.1/24\0\n";
	char dir[] = "/tmp/qpio-gw-dir.XXXXXX", err[256], want[128];
	struct gw_conf c;

	cr_assert_eq(load_n(text, sizeof(text) - 1, &c, err, sizeof(err)),
		     -EINVAL);
	snprintf(want, sizeof(want), "%s:1: NUL byte at column 19 (a text file "
		 "has none)", conf_path);
	cr_assert_str_eq(err, want);
	unlink(conf_path);
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(gw_conf_load(dir, &c, err, sizeof(err)), -EISDIR);
	snprintf(want, sizeof(want), "%s: is a directory (give the file)", dir);
	cr_assert_str_eq(err, want);
	rmdir(dir);
}

Test(gateway_pkt, lpm_tables_route_as_configured)
{
	struct rte_lpm *l4;
	struct rte_lpm6 *l6;
	struct gw_conf c;
	uint8_t ip6[16];
	uint32_t nh;
	char err[256];

	cr_assert_eq(load(good_conf, &c, err, sizeof(err)), 0, "%s", err);
	unlink(conf_path);
	cr_assert_eq(gw_lpm_build(&c.site[0], "ta", SOCKET_ID_ANY, &l4, &l6),
		     0);
	cr_assert_eq(rte_lpm_lookup(l4, 0x0a010009, &nh), 0);
	cr_assert_eq(nh, GW_NH_ETH);
	cr_assert_eq(rte_lpm_lookup(l4, 0x0a0200fe, &nh), 0);
	cr_assert_eq(nh, GW_NH_LINK);
	cr_assert_eq(rte_lpm_lookup(l4, 0x0a030001, &nh), -ENOENT);
	inet_pton(AF_INET6, "fd00:2::77", ip6);
	cr_assert_eq(rte_lpm6_lookup(l6, ip6, &nh), 0);
	cr_assert_eq(nh, GW_NH_LINK);
	inet_pton(AF_INET6, "fd00:3::1", ip6);
	cr_assert_eq(rte_lpm6_lookup(l6, ip6, &nh), -ENOENT);
	rte_lpm_free(l4);
	rte_lpm6_free(l6);
	/* Site b's default route covers every address. */
	cr_assert_eq(gw_lpm_build(&c.site[1], "tb", SOCKET_ID_ANY, &l4, &l6),
		     0);
	cr_assert_eq(rte_lpm_lookup(l4, 0xc0a80705, &nh), 0);
	cr_assert_eq(nh, GW_NH_ETH);
	cr_assert_eq(rte_lpm_lookup(l4, 0x01020304, &nh), 0);
	cr_assert_eq(nh, GW_NH_LINK);
	cr_assert_eq(rte_lpm_lookup(l4, 0xfe000001, &nh), 0);
	cr_assert_eq(nh, GW_NH_LINK);
	rte_lpm_free(l4);
	rte_lpm6_free(l6);
}

/* Hex string to bytes; returns the length. */
static size_t
unhex(const char *hex, uint8_t *out)
{
	size_t n = 0;
	unsigned int b;

	while (hex[0] != '\0' && sscanf(hex, "%2x", &b) == 1) {
		out[n++] = (uint8_t)b;
		hex += 2;
	}
	return n;
}

static struct rte_mempool *
pool(void)
{
	struct rte_mempool *mp = rte_pktmbuf_pool_create("gw_test", 511, 0, 0,
			RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);

	cr_assert_not_null(mp);
	return mp;
}

static struct rte_mbuf *
mbuf_of(struct rte_mempool *mp, const uint8_t *b, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	char *p;

	cr_assert_not_null(m);
	p = rte_pktmbuf_append(m, (uint16_t)len);
	cr_assert_not_null(p);
	memcpy(p, b, len);
	return m;
}

static void
assert_bytes(const struct rte_mbuf *m, const char *hex)
{
	uint8_t want[256];
	size_t n = unhex(hex, want);

	cr_assert_eq(rte_pktmbuf_pkt_len(m), n, "length %u, want %zu",
		     rte_pktmbuf_pkt_len(m), n);
	cr_assert_eq(memcmp(rte_pktmbuf_mtod(m, void *), want, n), 0,
		     "bytes differ");
}

#define ZERO64 "0000000000000000000000000000000000000000000000000000000000000000" \
	"0000000000000000000000000000000000000000000000000000000000000000"
#define V4_TTL64 "45000054abcd400040017ad50a0100020a020002"
#define V4_TTL63 "45000054abcd40003f017bd50a0100020a020002"
#define HOST_MAC "020000000a02"
#define GW_MAC "02000000a001"

Test(gateway_pkt, ttl_decrement_and_checksum_exact)
{
	struct rte_mempool *mp = pool();
	uint8_t b[128] = { 0 };
	struct rte_mbuf *m;
	unsigned int ttl;

	/* Ethernet header, then the IPv4 header (ICMP, 84 bytes total). */
	unhex(V4_TTL64, b + 14);
	m = mbuf_of(mp, b, 14 + 84);
	cr_assert_eq(gw_ipv4_ttl_dec(m, 14), GW_FORWARD);
	cr_assert_eq(memcmp(rte_pktmbuf_mtod_offset(m, uint8_t *, 14),
			    (unhex(V4_TTL63, b), b), 20), 0);
	/* Down to 1 the update equals a full recomputation. */
	for (ttl = 63; ttl > 1; ttl--) {
		struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m,
				struct rte_ipv4_hdr *, 14);
		uint16_t got;

		cr_assert_eq(gw_ipv4_ttl_dec(m, 14), GW_FORWARD);
		cr_assert_eq(ip->time_to_live, ttl - 1);
		got = ip->hdr_checksum;
		ip->hdr_checksum = 0;
		cr_assert_eq(got, rte_ipv4_cksum(ip), "ttl %u", ttl - 1);
		ip->hdr_checksum = got;
	}
	/* TTL 1 and 0: not forwarded, packet unchanged. */
	memcpy(b, rte_pktmbuf_mtod_offset(m, uint8_t *, 14), 20);
	cr_assert_eq(b[8], 1);
	cr_assert_eq(gw_ipv4_ttl_dec(m, 14), GW_DROP_TTL);
	cr_assert_eq(memcmp(rte_pktmbuf_mtod_offset(m, uint8_t *, 14), b, 20),
		     0);
	rte_pktmbuf_mtod_offset(m, uint8_t *, 14)[8] = 0;
	cr_assert_eq(gw_ipv4_ttl_dec(m, 14), GW_DROP_TTL);
	/* Malformed: version, IHL, total length beyond the frame. */
	rte_pktmbuf_mtod_offset(m, uint8_t *, 14)[8] = 64;
	rte_pktmbuf_mtod_offset(m, uint8_t *, 14)[0] = 0x65;
	cr_assert_eq(gw_ipv4_ttl_dec(m, 14), GW_DROP_BAD);
	rte_pktmbuf_mtod_offset(m, uint8_t *, 14)[0] = 0x44;
	cr_assert_eq(gw_ipv4_ttl_dec(m, 14), GW_DROP_BAD);
	rte_pktmbuf_mtod_offset(m, uint8_t *, 14)[0] = 0x45;
	rte_pktmbuf_mtod_offset(m, uint8_t *, 14)[2] = 0x01;
	cr_assert_eq(gw_ipv4_ttl_dec(m, 14), GW_DROP_BAD);
	rte_pktmbuf_free(m);
	/* A frame shorter than the header. */
	m = mbuf_of(mp, b, 14 + 10);
	cr_assert_eq(gw_ipv4_ttl_dec(m, 14), GW_DROP_BAD);
	rte_pktmbuf_free(m);
	rte_mempool_free(mp);
}

Test(gateway_pkt, ipv6_hop_limit)
{
	struct rte_mempool *mp = pool();
	uint8_t b[128] = { 0 };
	struct rte_mbuf *m;

	b[14] = 0x60;
	b[14 + 5] = 8;            /* payload length 8 */
	b[14 + 6] = 58;
	b[14 + 7] = 2;            /* hop limit */
	m = mbuf_of(mp, b, 14 + 40 + 8);
	cr_assert_eq(gw_ipv6_hop_dec(m, 14), GW_FORWARD);
	cr_assert_eq(rte_pktmbuf_mtod_offset(m, uint8_t *, 21)[0], 1);
	cr_assert_eq(gw_ipv6_hop_dec(m, 14), GW_DROP_TTL);
	cr_assert_eq(rte_pktmbuf_mtod_offset(m, uint8_t *, 21)[0], 1);
	rte_pktmbuf_mtod_offset(m, uint8_t *, 19)[0] = 9;  /* beyond frame */
	cr_assert_eq(gw_ipv6_hop_dec(m, 14), GW_DROP_BAD);
	rte_pktmbuf_free(m);
	rte_mempool_free(mp);
}

Test(gateway_pkt, arp_answer_and_request_exact)
{
	struct rte_mempool *mp = pool();
	struct rte_ether_addr gw, mac;
	uint8_t b[64];
	struct rte_mbuf *m;
	uint32_t ip;
	uint8_t ip6[16];
	size_t n;

	unhex(GW_MAC, gw.addr_bytes);
	/* Host 10.1.0.2 asks who has 10.1.0.1. */
	n = unhex("ffffffffffff" HOST_MAC "0806" "0001080006040001" HOST_MAC
		  "0a010002" "000000000000" "0a010001", b);
	cr_assert_eq(n, 42);
	m = mbuf_of(mp, b, n);
	cr_assert_eq(gw_neigh_learn(m, &ip, ip6, &mac), 1);
	cr_assert_eq(ip, htonl(0x0a010002));
	cr_assert_eq(memcmp(mac.addr_bytes, b + 6, 6), 0);
	/* Not for 10.1.0.9: unchanged. */
	cr_assert_eq(gw_arp_reply(m, &gw, htonl(0x0a010009)), 0);
	cr_assert_eq(memcmp(rte_pktmbuf_mtod(m, void *), b, n), 0);
	cr_assert_eq(gw_arp_reply(m, &gw, htonl(0x0a010001)), 1);
	assert_bytes(m, HOST_MAC GW_MAC "0806" "0001080006040002" GW_MAC
		     "0a010001" HOST_MAC "0a010002");
	/* A reply is not answered again. */
	cr_assert_eq(gw_arp_reply(m, &gw, htonl(0x0a010001)), 0);
	rte_pktmbuf_free(m);
	/* Truncated ARP: malformed. */
	m = mbuf_of(mp, b, 30);
	cr_assert_eq(gw_arp_reply(m, &gw, htonl(0x0a010001)), -1);
	cr_assert_eq(gw_arp_request(m, &gw, htonl(0x0a020001),
				    htonl(0x0a020002)), 0);
	assert_bytes(m, "ffffffffffff" GW_MAC "0806" "0001080006040001" GW_MAC
		     "0a020001" "000000000000" "0a020002");
	rte_pktmbuf_free(m);
	rte_mempool_free(mp);
}

#define HOST_NS "3333ff000001020000000a0286dd6000000000203afffd00000100000" \
	"0000000000000000002ff0200000000000000000001ff0000018700739500000000" \
	"fd0000010000000000000000000000010101020000000a02"
#define GW_NA "020000000a0202000000a00186dd6000000000203afffd0000010000000" \
	"00000000000000001fd00000100000000000000000000000288007c9860000000fd" \
	"000001000000000000000000000001020102000000a001"
#define GW_NS "3333ff00000202000000a00186dd6000000000203afffd0000020000000" \
	"00000000000000001ff0200000000000000000001ff0000028700dd9200000000fd" \
	"000002000000000000000000000002010102000000a001"

Test(gateway_pkt, neighbor_discovery_exact)
{
	struct rte_mempool *mp = pool();
	uint8_t b[128], me[16], other[16], sip[16], tip[16], ip6[16];
	struct rte_ether_addr gw, mac;
	struct rte_mbuf *m;
	uint32_t ip;
	size_t n;

	unhex(GW_MAC, gw.addr_bytes);
	inet_pton(AF_INET6, "fd00:1::1", me);
	inet_pton(AF_INET6, "fd00:1::9", other);
	n = unhex(HOST_NS, b);
	cr_assert_eq(n, 86);
	m = mbuf_of(mp, b, n);
	cr_assert_eq(gw_neigh_learn(m, &ip, ip6, &mac), 2);
	inet_pton(AF_INET6, "fd00:1::2", sip);
	cr_assert_eq(memcmp(ip6, sip, 16), 0);
	cr_assert_eq(memcmp(mac.addr_bytes, b + 6, 6), 0);
	cr_assert_eq(gw_nd_advert(m, &gw, other), 0);
	cr_assert_eq(gw_nd_advert(m, &gw, me), 1);
	assert_bytes(m, GW_NA);
	/* The answer teaches the asker's side: target and its MAC. */
	cr_assert_eq(gw_neigh_learn(m, &ip, ip6, &mac), 2);
	cr_assert_eq(memcmp(ip6, me, 16), 0);
	cr_assert(rte_is_same_ether_addr(&mac, &gw));
	/* Hop limit not 255: not neighbor discovery (RFC 4861 7.1.1). */
	rte_pktmbuf_free(m);
	b[14 + 7] = 64;
	m = mbuf_of(mp, b, n);
	cr_assert_eq(gw_nd_advert(m, &gw, me), 0);
	inet_pton(AF_INET6, "fd00:2::1", sip);
	inet_pton(AF_INET6, "fd00:2::2", tip);
	cr_assert_eq(gw_nd_solicit(m, &gw, sip, tip), 0);
	assert_bytes(m, GW_NS);
	rte_pktmbuf_free(m);
	rte_mempool_free(mp);
}

/* One router half on ring ports: ring0 is the site interface, ring1 the
 * link; frames are fed into their rx rings and read from their tx rings. */
struct site_rig {
	struct rte_mempool *mp;
	struct gw_conf conf;
	struct gw_site s;
	struct rte_ring *eth_in, *eth_out, *link_in, *link_out;
	int eth, link;
};

/* The rig with nq queues on both ports; r->s polls queue 0. */
static void
rig_up_q(struct site_rig *r, uint16_t nq)
{
	/* jumbo frames both ways (the MTU tests feed 3000 bytes) */
	const struct qpio_port_conf pc = { .max_rx_pkt_len = 9014 };
	char err[256];
	int id;
	uint16_t q;
	struct rte_mempool *mp;

	memset(r, 0, sizeof(*r));
	r->mp = mp = pool();
	cr_assert_eq(load(good_conf, &r->conf, err, sizeof(err)), 0);
	unlink(conf_path);
	r->eth = qpio_port_create("ring0");
	r->link = qpio_port_create("ring1");
	cr_assert_geq(r->eth, 0);
	cr_assert_geq(r->link, 0);
	for (id = r->eth; id <= r->link; id++) {
		cr_assert_eq(qpio_port_configure(id, nq, nq, &pc), 0);
		for (q = 0; q < nq; q++) {
			cr_assert_eq(qpio_port_rx_queue_setup(id, q, 64,
							      SOCKET_ID_ANY,
							      mp), 0);
			cr_assert_eq(qpio_port_tx_queue_setup(id, q, 64,
							      SOCKET_ID_ANY), 0);
		}
		cr_assert_eq(qpio_port_start(id), 0);
	}
	r->eth_in = rte_ring_lookup("ring0_rx0");
	r->eth_out = rte_ring_lookup("ring0_tx0");
	r->link_in = rte_ring_lookup("ring1_rx0");
	r->link_out = rte_ring_lookup("ring1_tx0");
	cr_assert(r->eth_in && r->eth_out && r->link_in && r->link_out);
	r->s.name = 'a';
	r->s.eth_port = (uint16_t)r->eth;
	r->s.link_port = (uint16_t)r->link;
	unhex(GW_MAC, r->s.mac.addr_bytes);
	unhex("02000000b001", r->s.link_mac.addr_bytes);
	r->s.conf = &r->conf.site[0];
	r->s.mp = mp;
	r->s.resolve_gap = UINT64_MAX / 2;
	/* Eight ICMP errors, none given back during a test. */
	r->s.icmp_gap = UINT64_MAX / 2;
	r->s.icmp_burst = 8;
	r->s.icmp_tokens = 8;
	cr_assert_eq(gw_lpm_build(r->s.conf, "rig", SOCKET_ID_ANY, &r->s.lpm4,
				  &r->s.lpm6), 0);
}

static void
rig_up(struct site_rig *r)
{
	rig_up_q(r, 1);
}

static void
rig_down(struct site_rig *r)
{
	gw_site_release(&r->s);
	cr_assert_eq(qpio_port_close(r->eth), 0);
	cr_assert_eq(qpio_port_close(r->link), 0);
	rte_lpm_free(r->s.lpm4);
	rte_lpm6_free(r->s.lpm6);
	cr_assert_eq(rte_mempool_in_use_count(r->mp), 0);
	rte_mempool_free(r->mp);
}

static void
feed(struct site_rig *r, struct rte_ring *in, const char *hex)
{
	uint8_t b[256] = { 0 };
	size_t n = unhex(hex, b);
	struct rte_mbuf *m;

	if (n < 60)
		n = 60;
	m = mbuf_of(r->mp, b, n);
	cr_assert_eq(rte_ring_enqueue(in, m), 0);
}

static struct rte_mbuf *
take(struct rte_ring *out)
{
	void *m = NULL;

	if (rte_ring_dequeue(out, &m) != 0)
		return NULL;
	return m;
}

/* The held packet of the site tests, as it leaves for the host: to the
 * host's MAC from the gateway's, TTL 63. */
static void
take_routed_to_host(struct rte_ring *out)
{
	struct rte_mbuf *m = take(out);

	cr_assert_not_null(m);
	cr_assert_eq(memcmp(rte_pktmbuf_mtod(m, uint8_t *),
			    "\x02\x00\x00\x00\x0a\x02\x02\x00\x00\x00\xa0\x01",
			    12), 0);
	cr_assert_eq(rte_pktmbuf_mtod(m, uint8_t *)[14 + 8], 63);
	rte_pktmbuf_free(m);
}

/* An IPv4 ICMP packet of 84 bytes (header + 64 zero bytes). */
static void
ipv4_frame(char *hex, size_t len, const char *dmac, const char *smac,
	   const char *iphdr)
{
	size_t off;

	off = (size_t)snprintf(hex, len, "%s%s0800%s", dmac, smac, iphdr);
	while (off + 2 < len && off < 2 * (14 + 84)) {
		hex[off++] = '0';
		hex[off] = '\0';
	}
}

Test(gateway_pkt, site_routes_drops_ttl1_resolves_neighbors)
{
	struct site_rig r;
	struct rte_mbuf *m;
	char hex[512];

	rig_up(&r);
	/* 10.1.0.2 -> 10.2.0.2, TTL 64, from the site: over the link with
	 * TTL 63 and the updated checksum, payload unchanged. */
	ipv4_frame(hex, sizeof(hex), GW_MAC, HOST_MAC, V4_TTL64);
	feed(&r, r.eth_in, hex);
	gw_site_poll(&r.s);
	m = take(r.link_out);
	cr_assert_not_null(m);
	ipv4_frame(hex, sizeof(hex), "02000000b001", GW_MAC, V4_TTL63);
	assert_bytes(m, hex);
	rte_pktmbuf_free(m);
	cr_assert_eq(r.s.st.fwd4, 1);
	cr_assert_eq(r.s.st.link_tx, 1);

	/* TTL 1: dropped and counted; ICMP time exceeded from 10.1.0.1
	 * back to the host, nothing over the link. */
	ipv4_frame(hex, sizeof(hex), GW_MAC, HOST_MAC,
		   "45000054abcd400001017ad50a0100020a020002");
	feed(&r, r.eth_in, hex);
	gw_site_poll(&r.s);
	cr_assert_null(take(r.link_out));
	m = take(r.eth_out);
	cr_assert_not_null(m);
	assert_bytes(m, HOST_MAC GW_MAC "0800"
		     "45c0007000000000400165c90a0100010a010002"
		     "0b00340000000000"
		     "45000054abcd400001017ad50a0100020a020002" ZERO64);
	rte_pktmbuf_free(m);
	cr_assert_null(take(r.eth_out));
	cr_assert_eq(r.s.st.ttl_drops, 1);
	cr_assert_eq(r.s.st.icmp_time_exceeded, 1);
	cr_assert_eq(r.s.st.fwd4, 1);

	/* From the link to 10.1.0.2, not yet known: held, ARP request. */
	ipv4_frame(hex, sizeof(hex), GW_MAC, "02000000b001",
		   "45000054abcd400040017ad50a0200020a010002");
	feed(&r, r.link_in, hex);
	gw_site_poll(&r.s);
	m = take(r.eth_out);
	cr_assert_not_null(m);
	assert_bytes(m, "ffffffffffff" GW_MAC "0806" "0001080006040001" GW_MAC
		     "0a010001" "000000000000" "0a010002");
	rte_pktmbuf_free(m);
	cr_assert_null(take(r.eth_out));
	cr_assert_eq(r.s.st.arp_requests, 1);
	/* The host answers: the held packet leaves, TTL 63, to its MAC. */
	feed(&r, r.eth_in, GW_MAC HOST_MAC "0806" "0001080006040002" HOST_MAC
	     "0a010002" GW_MAC "0a010001");
	gw_site_poll(&r.s);
	take_routed_to_host(r.eth_out);
	/* No route (10.3.0.1) and link -> link (10.2.0.9) are dropped,
	 * each answered with net unreachable the way it came. */
	ipv4_frame(hex, sizeof(hex), GW_MAC, HOST_MAC,
		   "45000054abcd400040017ad50a0100020a030001");
	feed(&r, r.eth_in, hex);
	ipv4_frame(hex, sizeof(hex), GW_MAC, "02000000b001",
		   "45000054abcd400040017ad50a0100020a020009");
	feed(&r, r.link_in, hex);
	gw_site_poll(&r.s);
	cr_assert_eq(r.s.st.no_route, 2);
	cr_assert_eq(r.s.st.icmp_unreach, 2);
	m = take(r.eth_out);
	cr_assert_not_null(m);
	assert_bytes(m, HOST_MAC GW_MAC "0800"
		     "45c0007000010000400165c80a0100010a010002"
		     "0300fcff00000000"
		     "45000054abcd400040017ad50a0100020a030001" ZERO64);
	rte_pktmbuf_free(m);
	m = take(r.link_out);
	cr_assert_not_null(m);
	assert_bytes(m, "02000000b001" GW_MAC "0800"
		     "45c0007000020000400165c70a0100010a010002"
		     "0300fcf800000000"
		     "45000054abcd400040017ad50a0100020a020009" ZERO64);
	rte_pktmbuf_free(m);
	cr_assert_null(take(r.eth_out));
	cr_assert_null(take(r.link_out));
	cr_assert_eq(r.s.st.eth_rx, 4);
	cr_assert_eq(r.s.st.link_rx, 2);
	cr_assert_eq(r.s.st.icmp_limited, 0);
	cr_assert_eq(r.s.st.icmp_barred, 0);
	rig_down(&r);
}

/* Two contexts of one site on queues 0 and 1 (main.c's --queues 2): each
 * polls and sends on its own queue; what one learns of a neighbor goes
 * to the other through its learn ring and frees what the other held; the
 * ICMP error bucket is queue 0's for both. */
Test(gateway_pkt, two_queues_share_neighbors_and_icmp_bucket)
{
	struct rte_ring *eth_in1, *eth_out1, *link_in1, *learn0, *learn1;
	struct site_rig r;
	struct gw_site s1;
	struct rte_mbuf *m;
	char hex[512];
	unsigned int i;

	rig_up_q(&r, 2);
	eth_in1 = rte_ring_lookup("ring0_rx1");
	eth_out1 = rte_ring_lookup("ring0_tx1");
	link_in1 = rte_ring_lookup("ring1_rx1");
	cr_assert(eth_in1 && eth_out1 && link_in1);
	learn0 = rte_ring_create_elem("t_learn0", sizeof(struct gw_learned),
				      16, SOCKET_ID_ANY, RING_F_SC_DEQ);
	learn1 = rte_ring_create_elem("t_learn1", sizeof(struct gw_learned),
				      16, SOCKET_ID_ANY, RING_F_SC_DEQ);
	cr_assert(learn0 && learn1);
	s1 = r.s;
	s1.queue = 1;
	s1.icmp_from = &r.s;
	r.s.learn_in = learn0;
	r.s.learn_to[0] = learn1;
	r.s.nb_learn_to = 1;
	s1.learn_in = learn1;
	s1.learn_to[0] = learn0;
	s1.nb_learn_to = 1;

	/* From the link on queue 1 to 10.1.0.2, unknown: queue 1 holds it
	 * and asks on queue 1 of the interface. */
	ipv4_frame(hex, sizeof(hex), GW_MAC, "02000000b001",
		   "45000054abcd400040017ad50a0200020a010002");
	feed(&r, link_in1, hex);
	gw_site_poll(&s1);
	m = take(eth_out1);
	cr_assert_not_null(m);
	assert_bytes(m, "ffffffffffff" GW_MAC "0806" "0001080006040001" GW_MAC
		     "0a010001" "000000000000" "0a010002");
	rte_pktmbuf_free(m);
	cr_assert_null(take(r.eth_out));
	cr_assert_eq(s1.st.arp_requests, 1);
	cr_assert_eq(s1.st.link_rx, 1);
	cr_assert_eq(r.s.st.link_rx, 0);
	/* The reply lands on queue 0: queue 0 learns (it held nothing), and
	 * queue 1 hears of it at its next poll and sends what it held. */
	feed(&r, r.eth_in, GW_MAC HOST_MAC "0806" "0001080006040002" HOST_MAC
	     "0a010002" GW_MAC "0a010001");
	gw_site_poll(&r.s);
	cr_assert_null(take(r.eth_out));
	cr_assert_eq(r.s.st.local, 1);
	cr_assert_eq(rte_ring_count(learn1), 1);
	gw_site_poll(&s1);
	cr_assert_eq(rte_ring_count(learn1), 0);
	take_routed_to_host(eth_out1);
	cr_assert_null(take(r.eth_out));
	cr_assert_eq(s1.st.eth_tx, 2);
	cr_assert_eq(s1.st.fwd4, 1);

	/* One bucket of two for both queues (queue 1's own fields, 8,
	 * are not used): a TTL-1 packet on queue 0 and two on queue 1 get
	 * two time exceeded errors, each on its queue; one is limited. */
	r.s.icmp_burst = 2;
	r.s.icmp_tokens = 2;
	ipv4_frame(hex, sizeof(hex), GW_MAC, HOST_MAC,
		   "45000054abcd400001017ad50a0100020a020002");
	feed(&r, r.eth_in, hex);
	for (i = 0; i < 2; i++)
		feed(&r, eth_in1, hex);
	gw_site_poll(&r.s);
	gw_site_poll(&s1);
	m = take(r.eth_out);
	cr_assert_not_null(m);
	cr_assert_eq(rte_pktmbuf_mtod(m, uint8_t *)[34], 11);
	rte_pktmbuf_free(m);
	m = take(eth_out1);
	cr_assert_not_null(m);
	cr_assert_eq(rte_pktmbuf_mtod(m, uint8_t *)[34], 11);
	rte_pktmbuf_free(m);
	cr_assert_null(take(r.eth_out));
	cr_assert_null(take(eth_out1));
	cr_assert_eq(r.s.st.icmp_time_exceeded, 1);
	cr_assert_eq(s1.st.icmp_time_exceeded, 1);
	cr_assert_eq(s1.st.icmp_limited, 1);
	cr_assert_eq(r.s.st.icmp_limited, 0);
	cr_assert_eq(r.s.icmp_tokens, 0);
	cr_assert_eq(s1.icmp_tokens, 8);
	gw_site_release(&s1);
	cr_assert_eq(s1.st.neigh_held, 0);
	rte_ring_free(learn0);
	rte_ring_free(learn1);
	rig_down(&r);
}

Test(gateway_pkt, site_icmp_rate_limited_and_barred)
{
	struct site_rig r;
	struct rte_mbuf *m;
	char hex[512];
	unsigned int i;

	rig_up(&r);
	r.s.icmp_burst = 2;
	r.s.icmp_tokens = 2;
	/* Three echo replies with TTL 1: a bucket of two sends two time
	 * exceeded errors (its clock gives nothing back in the test). */
	for (i = 0; i < 3; i++) {
		ipv4_frame(hex, sizeof(hex), GW_MAC, HOST_MAC,
			   "45000054abcd400001017ad50a0100020a020002");
		feed(&r, r.eth_in, hex);
	}
	gw_site_poll(&r.s);
	for (i = 0; i < 2; i++) {
		m = take(r.eth_out);
		cr_assert_not_null(m);
		cr_assert_eq(rte_pktmbuf_mtod(m, uint8_t *)[34], 11);
		rte_pktmbuf_free(m);
	}
	cr_assert_null(take(r.eth_out));
	cr_assert_eq(r.s.st.ttl_drops, 3);
	cr_assert_eq(r.s.st.icmp_time_exceeded, 2);
	cr_assert_eq(r.s.st.icmp_limited, 1);
	/* An ICMP error (type 3) with TTL 1, and an echo reply to
	 * 224.0.0.9 with no route: barred by RFC 1812 4.3.2.7, before the
	 * empty bucket is asked. */
	ipv4_frame(hex, sizeof(hex), GW_MAC, HOST_MAC,
		   "45000054abcd400001017ad50a0100020a020002");
	hex[2 * 34 + 1] = '3';     /* ICMP type 3 */
	feed(&r, r.eth_in, hex);
	ipv4_frame(hex, sizeof(hex), GW_MAC, HOST_MAC,
		   "45000054abcd400040017ad50a010002e0000009");
	feed(&r, r.eth_in, hex);
	gw_site_poll(&r.s);
	cr_assert_null(take(r.eth_out));
	cr_assert_null(take(r.link_out));
	cr_assert_eq(r.s.st.ttl_drops, 4);
	cr_assert_eq(r.s.st.no_route, 1);
	cr_assert_eq(r.s.st.icmp_barred, 2);
	cr_assert_eq(r.s.st.icmp_limited, 1);
	cr_assert_eq(r.s.st.icmp_unreach, 0);
	rig_down(&r);
}

/* ICMP errors (RFC 792, RFC 1812 4.3.2, RFC 4443): exact bytes, computed
 * apart from DPDK's checksum code. */
#define ORIG4 GW_MAC HOST_MAC "0800" \
	"45000054abcd40000101b9d50a0100020a020002" \
	"0800eeb712340001000102030405060708090a0b0c0d0e0f101112131415161718" \
	"191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f3031323334353637"
#define TE4 HOST_MAC GW_MAC "0800" \
	"45c0007004d20000400160f70a0100010a010002" "0b00f4ff00000000" \
	"45000054abcd40000101b9d50a0100020a020002" \
	"0800eeb712340001000102030405060708090a0b0c0d0e0f101112131415161718" \
	"191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f3031323334353637"
#define ORIG6 GW_MAC HOST_MAC "86dd" \
	"6000000000183a01fd000001000000000000000000000002" \
	"fd000002000000000000000000000002" \
	"80004d5b00070002000102030405060708090a0b0c0d0e0f"
#define TE6 HOST_MAC GW_MAC "86dd" \
	"6000000000483a40fd000001000000000000000000000001" \
	"fd000001000000000000000000000002" "030068af00000000" \
	"6000000000183a01fd000001000000000000000000000002" \
	"fd000002000000000000000000000002" \
	"80004d5b00070002000102030405060708090a0b0c0d0e0f"

static const uint8_t gw_ip4[4] = { 10, 1, 0, 1 };
static const uint8_t gw_ip6[16] = { 0xfd, 0, 0, 1, [15] = 1 };

static struct rte_mbuf *
mbuf_hex(struct rte_mempool *mp, const char *hex)
{
	uint8_t b[256];

	return mbuf_of(mp, b, unhex(hex, b));
}

static uint32_t
gw4(void)
{
	uint32_t ip;

	memcpy(&ip, gw_ip4, 4);
	return ip;
}

Test(gateway_pkt, icmp_time_exceeded_exact)
{
	struct rte_mempool *mp = pool();
	struct rte_mbuf *o, *e = rte_pktmbuf_alloc(mp);

	/* IPv4: an echo request with TTL 1 from 10.1.0.2. */
	o = mbuf_hex(mp, ORIG4);
	cr_assert_eq(gw_icmp4_may_answer(o, 14), 1);
	cr_assert_eq(gw_icmp4_error(e, o, 14, GW_ICMP4_TIME_EXCEEDED,
				    GW_ICMP4_TTL_TRANSIT, 0, gw4(), 1234, 0), 0);
	assert_bytes(e, TE4);
	rte_pktmbuf_free(o);
	/* IPv6: an echo request with hop limit 1 from fd00:1::2. */
	o = mbuf_hex(mp, ORIG6);
	cr_assert_eq(gw_icmp6_may_answer(o, 14), 1);
	cr_assert_eq(gw_icmp6_error(e, o, 14, GW_ICMP6_TIME_EXCEEDED,
				    GW_ICMP6_HOP_TRANSIT, 0, gw_ip6), 0);
	assert_bytes(e, TE6);
	rte_pktmbuf_free(o);
	/* The Ethernet padding of a short frame is not quoted: ORIG4 in a
	 * frame padded by 30 bytes gives the same error. */
	{
		uint8_t b[256] = { 0 };
		size_t n = unhex(ORIG4, b);

		memset(b + n, 0xee, 30);
		o = mbuf_of(mp, b, n + 30);
		cr_assert_eq(gw_icmp4_error(e, o, 14, GW_ICMP4_TIME_EXCEEDED,
					    GW_ICMP4_TTL_TRANSIT, 0, gw4(), 1234, 0), 0);
		assert_bytes(e, TE4);
		rte_pktmbuf_free(o);
		/* A total length below the header: refused, not quoted. */
		b[17] = 19;
		o = mbuf_of(mp, b, n);
		cr_assert_eq(gw_icmp4_error(e, o, 14, GW_ICMP4_TIME_EXCEEDED,
					    GW_ICMP4_TTL_TRANSIT, 0, gw4(), 1234, 0),
			     -EINVAL);
		rte_pktmbuf_free(o);
		/* A frame cut inside the IPv4 header: refused. */
		o = mbuf_of(mp, b, 14 + 19);
		cr_assert_eq(gw_icmp4_error(e, o, 14, GW_ICMP4_TIME_EXCEEDED,
					    GW_ICMP4_TTL_TRANSIT, 0, gw4(), 1234, 0),
			     -EINVAL);
		rte_pktmbuf_free(o);
	}
	rte_pktmbuf_free(e);
	rte_mempool_free(mp);
}

/* A frame of len bytes: the Ethernet header of ORIG4, hdr (hex) and then
 * the bytes (i * mul) & 0xff for the rest. */
static struct rte_mbuf *
long_frame(struct rte_mempool *mp, const char *eth, const char *hdr,
	   size_t len, unsigned int mul)
{
	uint8_t b[2048];
	size_t n = unhex(eth, b), i, h;

	h = unhex(hdr, b + n);
	for (i = 0; n + h + i < len; i++)
		b[n + h + i] = (uint8_t)(i * mul);
	return mbuf_of(mp, b, len);
}

Test(gateway_pkt, icmp_quote_cut_at_576_and_1280)
{
	struct rte_mempool *mp = pool();
	struct rte_mbuf *o, *e = rte_pktmbuf_alloc(mp);
	const uint8_t *p;

	/* A 1000-byte UDP datagram to 10.3.0.1: the error is 576 bytes,
	 * quoting the first 548 of it (RFC 1812 4.3.2.3). */
	o = long_frame(mp, GW_MAC HOST_MAC "0800", "450003e800010000401162fe"
		       "0a0100020a0300011388003503d40000", 14 + 1000, 7);
	cr_assert_eq(gw_icmp4_may_answer(o, 14), 1);
	cr_assert_eq(gw_icmp4_error(e, o, 14, GW_ICMP4_UNREACH,
				    GW_ICMP4_UNREACH_NET, 0, gw4(), 1234, 0), 0);
	p = rte_pktmbuf_mtod(e, const uint8_t *);
	cr_assert_eq(rte_pktmbuf_pkt_len(e), 14 + 576);
	cr_assert_eq(p[16] << 8 | p[17], 576);        /* total length */
	cr_assert_eq(p[18] << 8 | p[19], 0x04d2);     /* ID */
	cr_assert_eq(p[20] << 8 | p[21], 0);         /* DF clear */
	cr_assert_eq(p[24] << 8 | p[25], 0x5f27);     /* header checksum */
	cr_assert_eq(p[34], 3);
	cr_assert_eq(p[35], 0);
	cr_assert_eq(p[36] << 8 | p[37], 0x107f);     /* ICMP checksum */
	cr_assert_eq(memcmp(p + 42, rte_pktmbuf_mtod_offset(o, uint8_t *, 14),
			    548), 0);
	rte_pktmbuf_free(o);
	/* A 1400-byte IPv6 UDP packet: 1280 bytes, 1232 of it quoted
	 * (RFC 4443 2.4 (c)). */
	o = long_frame(mp, GW_MAC HOST_MAC "86dd", "6000000005501140"
		       "fd000001000000000000000000000002"
		       "fd000009000000000000000000000001"
		       "1388003505500000", 14 + 1400, 5);
	cr_assert_eq(gw_icmp6_may_answer(o, 14), 1);
	cr_assert_eq(gw_icmp6_error(e, o, 14, GW_ICMP6_UNREACH,
				    GW_ICMP6_UNREACH_NOROUTE, 0, gw_ip6), 0);
	p = rte_pktmbuf_mtod(e, const uint8_t *);
	cr_assert_eq(rte_pktmbuf_pkt_len(e), 14 + 1280);
	cr_assert_eq(p[18] << 8 | p[19], 1240);       /* payload length */
	cr_assert_eq(p[54], 1);
	cr_assert_eq(p[55], 0);
	cr_assert_eq(p[56] << 8 | p[57], 0xde14);     /* ICMPv6 checksum */
	cr_assert_eq(memcmp(p + 62, rte_pktmbuf_mtod_offset(o, uint8_t *, 14),
			    1232), 0);
	rte_pktmbuf_free(o);
	rte_pktmbuf_free(e);
	rte_mempool_free(mp);
}

Test(gateway_pkt, icmp_quote_read_across_segments)
{
	struct rte_mempool *mp = pool();
	struct rte_mbuf *o, *tail, *e = rte_pktmbuf_alloc(mp);
	uint8_t b[256];
	size_t n = unhex(ORIG4, b);

	static const size_t cut[] = {
		40,        /* after the IPv4 header */
		20,        /* inside the IPv4 header */
	};
	unsigned int i;

	/* ORIG4 cut into two segments: the same error. */
	for (i = 0; i < RTE_DIM(cut); i++) {
		o = mbuf_of(mp, b, cut[i]);
		tail = mbuf_of(mp, b + cut[i], n - cut[i]);
		cr_assert_eq(rte_pktmbuf_chain(o, tail), 0);
		cr_assert_eq(gw_icmp4_may_answer(o, 14), 1, "cut %zu", cut[i]);
		cr_assert_eq(gw_icmp4_error(e, o, 14, GW_ICMP4_TIME_EXCEEDED,
					    GW_ICMP4_TTL_TRANSIT, 0, gw4(), 1234, 0), 0);
		assert_bytes(e, TE4);
		rte_pktmbuf_free(o);
	}
	rte_pktmbuf_free(e);
	rte_mempool_free(mp);
}

/* The frame hex with byte off (from the frame's start) set to v, asked
 * of may (gw_icmp4_may_answer or gw_icmp6_may_answer); checksums are not
 * fixed (the rules do not read them). */
static int
may_with(struct rte_mempool *mp, const char *hex,
	 int (*may)(const struct rte_mbuf *, uint32_t), unsigned int off,
	 uint8_t v)
{
	uint8_t b[256];
	size_t n = unhex(hex, b);
	struct rte_mbuf *o;
	int r;

	b[off] = v;
	o = mbuf_of(mp, b, n);
	r = may(o, 14);
	rte_pktmbuf_free(o);
	return r;
}

#define may4_with(mp, off, v) may_with(mp, ORIG4, gw_icmp4_may_answer, off, v)
#define may6_with(mp, off, v) may_with(mp, ORIG6, gw_icmp6_may_answer, off, v)

Test(gateway_pkt, icmp_never_answers_what_the_rfcs_forbid)
{
	struct rte_mempool *mp = pool();
	struct rte_mbuf *o;
	uint8_t b[256];
	unsigned int t;

	/* IPv4 (offsets in the frame: IP at 14, ICMP type at 34). Queries
	 * and their replies are answered; errors and unknown types not. */
	for (t = 0; t < 256; t++)
		cr_assert_eq(may4_with(mp, 34, (uint8_t)t),
			     t == 0 || t == 8 || (t >= 13 && t <= 18),
			     "ICMP type %u", t);
	cr_assert_eq(may4_with(mp, 23, 17), 1);      /* UDP */
	cr_assert_eq(may4_with(mp, 20, 0x20), 1);    /* MF, offset 0 */
	cr_assert_eq(may4_with(mp, 21, 0x01), 0);    /* offset 8 bytes */
	cr_assert_eq(may4_with(mp, 20, 0x1f), 0);    /* offset high bits */
	cr_assert_eq(may4_with(mp, 0, 0xff), 0);     /* Ethernet broadcast */
	cr_assert_eq(may4_with(mp, 0, 0x01), 0);     /* Ethernet multicast */
	cr_assert_eq(may4_with(mp, 30, 224), 0);     /* to 224.2.0.2 */
	cr_assert_eq(may4_with(mp, 30, 255), 0);     /* to 255.2.0.2 */
	cr_assert_eq(may4_with(mp, 30, 223), 1);     /* to 223.2.0.2 */
	cr_assert_eq(may4_with(mp, 26, 0), 0);       /* from 0.1.0.2 */
	cr_assert_eq(may4_with(mp, 26, 127), 0);     /* from 127.1.0.2 */
	cr_assert_eq(may4_with(mp, 26, 230), 0);     /* from multicast */
	cr_assert_eq(may4_with(mp, 26, 240), 0);     /* from 240/4 */
	cr_assert_eq(may4_with(mp, 26, 1), 1);       /* from 1.1.0.2 */
	cr_assert_eq(may4_with(mp, 14, 0x65), 0);    /* version 6 */
	cr_assert_eq(may4_with(mp, 14, 0x44), 0);    /* IHL 4 */
	cr_assert_eq(may4_with(mp, 16, 0x01), 0);    /* longer than frame */
	/* An ICMP datagram without an ICMP byte: taken as an error. */
	{
		size_t n = unhex(ORIG4, b);

		b[17] = 20;                           /* total length 20 */
		o = mbuf_of(mp, b, n);
		cr_assert_eq(gw_icmp4_may_answer(o, 14), 0);
		rte_pktmbuf_free(o);
		o = mbuf_of(mp, b, 14 + 10);          /* header cut short */
		cr_assert_eq(gw_icmp4_may_answer(o, 14), 0);
		rte_pktmbuf_free(o);
	}
	/* IPv6 (ICMPv6 type at 54): informational types (128..255) are
	 * answered, errors (0..127) not. */
	for (t = 0; t < 256; t++)
		cr_assert_eq(may6_with(mp, 54, (uint8_t)t), t >= 128,
			     "ICMPv6 type %u", t);
	cr_assert_eq(may6_with(mp, 20, 17), 1);      /* UDP */
	cr_assert_eq(may6_with(mp, 38, 0xff), 0);    /* to ff00::/8 */
	cr_assert_eq(may6_with(mp, 22, 0xff), 0);    /* from multicast */
	cr_assert_eq(may6_with(mp, 0, 0x33), 0);     /* Ethernet 33:33:.. */
	cr_assert_eq(may6_with(mp, 14, 0x40), 0);    /* version 4 */
	cr_assert_eq(may6_with(mp, 18, 0x01), 0);    /* longer than frame */
	{
		size_t n = unhex(ORIG6, b);

		memset(b + 22, 0, 16);                /* from :: */
		o = mbuf_of(mp, b, n);
		cr_assert_eq(gw_icmp6_may_answer(o, 14), 0);
		rte_pktmbuf_free(o);
	}
	rte_mempool_free(mp);
}

/* ---- MTU: fragmentation needed, packet too big, fragmenting ---- */

/* Fragmentation needed (3/4, RFC 1191 4: next-hop MTU 1500 in the low
 * 16 bits of the rest of the header) for ORIG4 (DF set), and packet too
 * big (2/0, RFC 4443 3.2: MTU 1280) for ORIG6. Checksums computed apart
 * from DPDK's code. */
#define FN4 HOST_MAC GW_MAC "0800" \
	"45c0007004d20000400160f70a0100010a010002" "0304f71f000005dc" \
	"45000054abcd40000101b9d50a0100020a020002" \
	"0800eeb712340001000102030405060708090a0b0c0d0e0f101112131415161718" \
	"191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f3031323334353637"
#define PTB6 HOST_MAC GW_MAC "86dd" \
	"6000000000483a40fd000001000000000000000000000001" \
	"fd000001000000000000000000000002" "020064af00000500" \
	"6000000000183a01fd000001000000000000000000000002" \
	"fd000002000000000000000000000002" \
	"80004d5b00070002000102030405060708090a0b0c0d0e0f"

Test(gateway_pkt, icmp_frag_needed_and_packet_too_big_exact)
{
	struct rte_mempool *mp = pool();
	struct rte_mbuf *o, *e = rte_pktmbuf_alloc(mp);

	o = mbuf_hex(mp, ORIG4);
	cr_assert_eq(gw_icmp4_error(e, o, 14, GW_ICMP4_UNREACH,
				    GW_ICMP4_UNREACH_FRAG_NEEDED, 1500, gw4(),
				    1234, 0),
		     0);
	assert_bytes(e, FN4);
	rte_pktmbuf_free(o);
	o = mbuf_hex(mp, ORIG6);
	cr_assert_eq(gw_icmp6_error(e, o, 14, GW_ICMP6_PKT_TOO_BIG, 0, 1280,
				    gw_ip6), 0);
	assert_bytes(e, PTB6);
	rte_pktmbuf_free(o);
	rte_pktmbuf_free(e);
	rte_mempool_free(mp);
}

/* ORIG4's time exceeded within a 68-byte way back: 40 bytes quoted
 * (the header and 20 bytes), and within 111 bytes: 83 quoted. Computed
 * apart from DPDK's checksum code. */
#define TE4_68 HOST_MAC GW_MAC "0800" \
	"45c0004404d20000400161230a0100010a010002" "0b00cdee00000000" \
	"45000054abcd40000101b9d50a0100020a020002" \
	"0800eeb712340001000102030405060708090a0b"
#define TE4_111 HOST_MAC GW_MAC "0800" \
	"45c0006f04d20000400160f80a0100010a010002" "0b00f53600000000" \
	"45000054abcd40000101b9d50a0100020a020002" \
	"0800eeb712340001000102030405060708090a0b0c0d0e0f101112131415161718" \
	"191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f30313233343536"

Test(gateway_pkt, icmp4_error_within_the_way_out_mtu)
{
	struct rte_mempool *mp = pool();
	struct rte_mbuf *o, *e = rte_pktmbuf_alloc(mp);

	o = mbuf_hex(mp, ORIG4);
	cr_assert_eq(gw_icmp4_error(e, o, 14, GW_ICMP4_TIME_EXCEEDED,
				    GW_ICMP4_TTL_TRANSIT, 0, gw4(), 1234, 68),
		     0);
	assert_bytes(e, TE4_68);
	cr_assert_eq(gw_icmp4_error(e, o, 14, GW_ICMP4_TIME_EXCEEDED,
				    GW_ICMP4_TTL_TRANSIT, 0, gw4(), 1234, 111),
		     0);
	assert_bytes(e, TE4_111);
	/* 112 holds the whole error, as no limit does. */
	cr_assert_eq(gw_icmp4_error(e, o, 14, GW_ICMP4_TIME_EXCEEDED,
				    GW_ICMP4_TTL_TRANSIT, 0, gw4(), 1234, 112),
		     0);
	assert_bytes(e, TE4);
	/* Below IPv4's 68: refused, as no interface may be narrower. */
	cr_assert_eq(gw_icmp4_error(e, o, 14, GW_ICMP4_TIME_EXCEEDED,
				    GW_ICMP4_TTL_TRANSIT, 0, gw4(), 1234, 67),
		     -EMSGSIZE);
	cr_assert_eq(gw_icmp4_error(e, o, 14, GW_ICMP4_TIME_EXCEEDED,
				    GW_ICMP4_TTL_TRANSIT, 0, gw4(), 1234, 1),
		     -EMSGSIZE);
	rte_pktmbuf_free(o);
	rte_pktmbuf_free(e);
	rte_mempool_free(mp);
}

Test(gateway_pkt, site_icmp_error_fits_the_way_back)
{
	struct site_rig r;
	struct rte_mbuf *m;
	char hex[512];

	rig_up(&r);
	r.s.eth_mtu = 68;
	r.s.icmp_ip_id = 0xffff;
	/* TTL 1 from a host on a 68-byte interface: the error back is 68
	 * bytes, 40 of the packet quoted, ID 0xffff and then 0. */
	ipv4_frame(hex, sizeof(hex), GW_MAC, HOST_MAC,
		   "45000054abcd400001017ad50a0100020a020002");
	feed(&r, r.eth_in, hex);
	gw_site_poll(&r.s);
	m = take(r.eth_out);
	cr_assert_not_null(m);
	assert_bytes(m, HOST_MAC GW_MAC "0800"
		     "45c00044ffff0000400165f50a0100010a010002"
		     "0b00340000000000"
		     "45000054abcd400001017ad50a0100020a020002"
		     "0000000000000000000000000000000000000000");
	rte_pktmbuf_free(m);
	feed(&r, r.eth_in, hex);
	gw_site_poll(&r.s);
	m = take(r.eth_out);
	cr_assert_not_null(m);
	assert_bytes(m, HOST_MAC GW_MAC "0800"
		     "45c0004400000000400165f50a0100010a010002"
		     "0b00340000000000"
		     "45000054abcd400001017ad50a0100020a020002"
		     "0000000000000000000000000000000000000000");
	rte_pktmbuf_free(m);
	cr_assert_null(take(r.eth_out));
	cr_assert_null(take(r.link_out));
	cr_assert_eq(r.s.st.ttl_drops, 2);
	cr_assert_eq(r.s.st.icmp_time_exceeded, 2);
	rig_down(&r);
}

/* The IPv4 header at 14 of m, as hex (40 characters). */
static void
ip4_hex(const struct rte_mbuf *m, char out[41])
{
	const uint8_t *p = rte_pktmbuf_mtod_offset(m, const uint8_t *, 14);
	unsigned int i;

	for (i = 0; i < 20; i++)
		snprintf(out + 2 * i, 3, "%02x", p[i]);
}

Test(gateway_pkt, ipv4_and_ipv6_hop_against_the_mtu)
{
	struct rte_mempool *mp = pool();
	struct rte_mbuf *m;
	uint8_t b[256];
	size_t n = unhex(ORIG4, b);
	char h[41];

	b[14 + 8] = 64;            /* TTL 64, checksum left as ORIG4's */
	/* 84 bytes with DF: above 83 it is too big and left as it was,
	 * at 84 it goes (TTL 63). */
	m = mbuf_of(mp, b, n);
	cr_assert_eq(gw_ipv4_hop(m, 14, 83), GW_TOO_BIG);
	ip4_hex(m, h);
	cr_assert_str_eq(h, "45000054abcd40004001b9d50a0100020a020002");
	cr_assert_eq(gw_ipv4_hop(m, 14, 84), GW_FORWARD);
	cr_assert_eq(rte_pktmbuf_mtod(m, uint8_t *)[14 + 8], 63);
	rte_pktmbuf_free(m);
	/* Without DF: GW_FRAGMENT, TTL decremented. */
	b[14 + 6] = 0;
	m = mbuf_of(mp, b, n);
	cr_assert_eq(gw_ipv4_hop(m, 14, 83), GW_FRAGMENT);
	cr_assert_eq(rte_pktmbuf_mtod(m, uint8_t *)[14 + 8], 63);
	rte_pktmbuf_free(m);
	/* The TTL is looked at first: TTL 1 and too big is GW_DROP_TTL. */
	b[14 + 6] = 0x40;
	b[14 + 8] = 1;
	m = mbuf_of(mp, b, n);
	cr_assert_eq(gw_ipv4_hop(m, 14, 83), GW_DROP_TTL);
	/* A total length below the header is bad. */
	rte_pktmbuf_mtod(m, uint8_t *)[14 + 3] = 19;
	cr_assert_eq(gw_ipv4_hop(m, 14, 83), GW_DROP_BAD);
	rte_pktmbuf_free(m);

	/* IPv6: 40 + 24 = 64 bytes. Above 63 too big, unchanged; never
	 * fragmented. */
	n = unhex(ORIG6, b);
	b[14 + 7] = 64;
	m = mbuf_of(mp, b, n);
	cr_assert_eq(gw_ipv6_hop(m, 14, 63), GW_TOO_BIG);
	cr_assert_eq(rte_pktmbuf_mtod(m, uint8_t *)[14 + 7], 64);
	cr_assert_eq(gw_ipv6_hop(m, 14, 64), GW_FORWARD);
	cr_assert_eq(rte_pktmbuf_mtod(m, uint8_t *)[14 + 7], 63);
	rte_pktmbuf_free(m);
	b[14 + 7] = 1;
	m = mbuf_of(mp, b, n);
	cr_assert_eq(gw_ipv6_hop(m, 14, 63), GW_DROP_TTL);
	rte_pktmbuf_free(m);
	rte_mempool_free(mp);
}

/* A frame of eth (14 bytes, hex), the IPv4 header hdr (hex), then the
 * bytes (i * 7) & 0xff up to len bytes and pad bytes 0xee: in two
 * segments, the first of 1000 bytes, when it is longer than that. */
static struct rte_mbuf *
big_frame(struct rte_mempool *mp, const char *eth, const char *hdr,
	  size_t len, size_t pad)
{
	static uint8_t b[4096];
	struct rte_mbuf *m, *m2;
	size_t n = unhex(eth, b), i, h, first;

	h = unhex(hdr, b + n);
	for (i = 0; n + h + i < len; i++)
		b[n + h + i] = (uint8_t)(i * 7);
	memset(b + len, 0xee, pad);
	len += pad;
	first = RTE_MIN(len, (size_t)1000);
	m = mbuf_of(mp, b, first);
	if (len > first) {
		m2 = mbuf_of(mp, b + first, len - first);
		cr_assert_eq(rte_pktmbuf_chain(m, m2), 0);
	}
	return m;
}

/* Fragment k of the 3000-byte datagram has payload bytes
 * ((off + i) * 7) & 0xff, off = 1480 * k. */
static void
assert_frag(const struct rte_mbuf *f, const char *eth, const char *hdr,
	    uint32_t payload, uint32_t off)
{
	uint8_t want_eth[14];
	const uint8_t *p;
	uint32_t i;
	char h[41];

	cr_assert_not_null(f);
	cr_assert_eq(f->nb_segs, 1);
	cr_assert_eq(rte_pktmbuf_pkt_len(f), 14 + 20 + payload);
	unhex(eth, want_eth);
	cr_assert_eq(memcmp(rte_pktmbuf_mtod(f, void *), want_eth, 14), 0);
	ip4_hex(f, h);
	cr_assert_str_eq(h, hdr);
	p = rte_pktmbuf_mtod_offset(f, const uint8_t *, 34);
	for (i = 0; i < payload; i++)
		cr_assert_eq(p[i], (uint8_t)((off + i) * 7), "byte %u", i);
}

#define FRAG_ETH GW_MAC HOST_MAC "0800"

Test(gateway_pkt, ipv4_fragment_exact)
{
	struct rte_mempool *mp = pool();
	struct rte_mbuf *m, *out[4];
	unsigned int i;
	uint8_t before[64];

	/* 3000 bytes, TTL 64, in two segments and 30 bytes of padding: at
	 * MTU 1500 three fragments of 1480, 1480 and 20 payload bytes,
	 * offsets 0, 185, 370 (units of 8), MF on the first two, TTL 63,
	 * the header checksums computed apart from DPDK's code. A middle
	 * fragment (MF, offset 100) cut again: MF on every piece, offsets
	 * 100, 285, 470. */
	static const struct {
		const char *in;
		size_t pad;
		const char *out[3];
	} cases[] = {
		{ "45000bb812340000401148fb0a0100020a020002", 30,
		  { "450005dc123420003f112fd70a0100020a020002",
		    "450005dc123420b93f112f1e0a0100020a020002",
		    "45000028123401723f1154190a0100020a020002" } },
		{ "45000bb812342064401128970a0100020a020002", 0,
		  { "450005dc123420643f112f730a0100020a020002",
		    "450005dc1234211d3f112eba0a0100020a020002",
		    "45000028123421d63f1133b50a0100020a020002" } },
	};
	unsigned int c;

	for (c = 0; c < RTE_DIM(cases); c++) {
		m = big_frame(mp, FRAG_ETH, cases[c].in, 14 + 3000,
			      cases[c].pad);
		cr_assert_eq(gw_ipv4_hop(m, 14, 1500), GW_FRAGMENT);
		cr_assert_eq(gw_ipv4_fragment(m, 1500, mp, out, 4), 3);
		for (i = 0; i < 3; i++)
			assert_frag(out[i], FRAG_ETH, cases[c].out[i],
				    i < 2 ? 1480 : 20, 1480 * i);
		rte_pktmbuf_free_bulk(out, 3);
	}

	/* Refusals leave m as it was: DF set, an MTU below 68, too few
	 * entries for the pieces. */
	m = big_frame(mp, FRAG_ETH, "45000bb812344000401108fb0a0100020a020002",
		      14 + 3000, 0);
	memcpy(before, rte_pktmbuf_mtod(m, void *), sizeof(before));
	cr_assert_eq(gw_ipv4_fragment(m, 1500, mp, out, 4), -ENOTSUP);
	cr_assert_eq(rte_pktmbuf_pkt_len(m), 14 + 3000);
	cr_assert_eq(memcmp(rte_pktmbuf_mtod(m, void *), before,
			    sizeof(before)), 0);
	rte_pktmbuf_free(m);
	m = big_frame(mp, FRAG_ETH, "45000bb812340000401148fb0a0100020a020002",
		      14 + 3000, 0);
	memcpy(before, rte_pktmbuf_mtod(m, void *), sizeof(before));
	cr_assert_eq(gw_ipv4_fragment(m, 67, mp, out, 4), -EINVAL);
	cr_assert_eq(gw_ipv4_fragment(m, 1500, mp, out, 2), -EINVAL);
	cr_assert_eq(rte_pktmbuf_pkt_len(m), 14 + 3000);
	cr_assert_eq(memcmp(rte_pktmbuf_mtod(m, void *), before,
			    sizeof(before)), 0);
	rte_pktmbuf_free(m);
	for (i = 0; i < 4; i++)
		out[i] = NULL;
	cr_assert_eq(rte_mempool_in_use_count(mp), 0);
	rte_mempool_free(mp);
}

/* The site against MTUs of 1500 both ways: a 3000-byte datagram without
 * DF crosses the link as three fragments; with DF it is answered with
 * fragmentation needed (MTU 1500) and dropped; an IPv6 packet of 1600
 * bytes gets packet too big (MTU 1500). Every packet in one counter. */
Test(gateway_pkt, site_fragments_and_answers_too_big)
{
	struct site_rig r;
	struct rte_mbuf *m;
	const uint8_t *p;
	char h[41];

	rig_up(&r);
	r.s.eth_mtu = 1500;
	r.s.link_mtu = 1500;
	m = big_frame(r.mp, FRAG_ETH, "45000bb812340000401148fb0a0100020a020002",
		      14 + 3000, 0);
	cr_assert_eq(rte_ring_enqueue(r.eth_in, m), 0);
	gw_site_poll(&r.s);
	assert_frag(m = take(r.link_out), "02000000b001" GW_MAC "0800",
		    "450005dc123420003f112fd70a0100020a020002", 1480, 0);
	rte_pktmbuf_free(m);
	assert_frag(m = take(r.link_out), "02000000b001" GW_MAC "0800",
		    "450005dc123420b93f112f1e0a0100020a020002", 1480, 1480);
	rte_pktmbuf_free(m);
	assert_frag(m = take(r.link_out), "02000000b001" GW_MAC "0800",
		    "45000028123401723f1154190a0100020a020002", 20, 2960);
	rte_pktmbuf_free(m);
	cr_assert_null(take(r.link_out));
	cr_assert_eq(r.s.st.fwd4, 1);
	cr_assert_eq(r.s.st.frag4, 1);
	cr_assert_eq(r.s.st.frags, 3);
	cr_assert_eq(r.s.st.link_tx, 3);

	/* DF: fragmentation needed back to the host, from 10.1.0.1,
	 * quoting the datagram as it came (TTL 64). */
	m = big_frame(r.mp, FRAG_ETH, "45000bb812344000401108fb0a0100020a020002",
		      14 + 3000, 0);
	cr_assert_eq(rte_ring_enqueue(r.eth_in, m), 0);
	gw_site_poll(&r.s);
	cr_assert_null(take(r.link_out));
	m = take(r.eth_out);
	cr_assert_not_null(m);
	cr_assert_eq(rte_pktmbuf_pkt_len(m), 14 + 576);
	ip4_hex(m, h);
	cr_assert_str_eq(h, "45c0024000000000400163f90a0100010a010002");
	p = rte_pktmbuf_mtod(m, const uint8_t *);
	cr_assert_eq(p[34], 3);
	cr_assert_eq(p[35], 4);
	cr_assert_eq(p[38] << 24 | p[39] << 16 | p[40] << 8 | p[41], 1500);
	{
		uint8_t q[20];

		unhex("45000bb812344000401108fb0a0100020a020002", q);
		cr_assert_eq(memcmp(p + 42, q, 20), 0);
	}
	rte_pktmbuf_free(m);
	cr_assert_eq(r.s.st.mtu_drops, 1);
	cr_assert_eq(r.s.st.icmp_too_big, 1);
	cr_assert_eq(r.s.st.fwd4, 1);

	/* IPv6, 1600 bytes (payload 1560) to fd00:2::2: packet too big
	 * with MTU 1500; IPv6 is never fragmented. (UDP: payload bytes
	 * after an ICMPv6 header would make it an error, not answered.) */
	m = big_frame(r.mp, GW_MAC HOST_MAC "86dd",
		      "6000000006181140fd000001000000000000000000000002"
		      "fd000002000000000000000000000002", 14 + 1600, 0);
	cr_assert_eq(rte_ring_enqueue(r.eth_in, m), 0);
	gw_site_poll(&r.s);
	cr_assert_null(take(r.link_out));
	m = take(r.eth_out);
	cr_assert_not_null(m);
	cr_assert_eq(rte_pktmbuf_pkt_len(m), 14 + 1280);
	p = rte_pktmbuf_mtod(m, const uint8_t *);
	cr_assert_eq(p[14 + 6], 58);
	cr_assert_eq(p[54], 2);
	cr_assert_eq(p[55], 0);
	cr_assert_eq(p[58] << 24 | p[59] << 16 | p[60] << 8 | p[61], 1500);
	rte_pktmbuf_free(m);
	cr_assert_eq(r.s.st.mtu_drops, 2);
	cr_assert_eq(r.s.st.icmp_too_big, 2);
	cr_assert_eq(r.s.st.fwd6, 0);
	cr_assert_null(take(r.eth_out));
	rig_down(&r);
}

/* Seventeen packets from the link to 10.1.0.2, not yet resolved, in one
 * burst (a ping's first two, or the fragments of one datagram, come
 * together): one ARP request (the next is 100 ms away), GW_NEIGH_HOLD
 * (16) held, the oldest dropped (neigh 1); the answer sends the 16 in
 * the order they came (IPv4 ID 1 .. 16). */
/* Packets still waiting for their neighbor at exit are counted, once:
 * each received packet stays in fwd4, what it never met in neigh_held. */
Test(gateway_pkt, site_counts_packets_held_at_exit)
{
	struct site_rig r;
	struct rte_mbuf *m;
	char hex[512];
	unsigned int i;

	rig_up(&r);
	ipv4_frame(hex, sizeof(hex), GW_MAC, "02000000b001",
		   "45000054abcd400040017ad50a0200020a010002");
	for (i = 0; i < 5; i++)
		feed(&r, r.link_in, hex);
	gw_site_poll(&r.s);
	m = take(r.eth_out);
	cr_assert_not_null(m);                     /* the ARP request */
	rte_pktmbuf_free(m);
	cr_assert_eq(r.s.st.link_rx, 5);
	cr_assert_eq(r.s.st.fwd4, 5);
	cr_assert_eq(r.s.st.neigh_held, 0);
	gw_site_release(&r.s);
	cr_assert_eq(r.s.st.neigh_held, 5);
	cr_assert_eq(r.s.st.tx_drops, 0);
	gw_site_release(&r.s);
	cr_assert_eq(r.s.st.neigh_held, 5);
	cr_assert_eq(r.s.st.neigh_drops, 0);
	rig_down(&r);
}

Test(gateway_pkt, site_holds_sixteen_packets_for_a_neighbor)
{
	struct site_rig r;
	struct rte_mbuf *m;
	char hex[512], hdr[41];
	unsigned int i;
	const uint8_t *p;

	rig_up(&r);
	for (i = 0; i <= GW_NEIGH_HOLD; i++) {
		/* ID i; the checksum is not looked at on the way */
		snprintf(hdr, sizeof(hdr), "45000054%04x400040017ad50a0200020a010002",
			 i);
		ipv4_frame(hex, sizeof(hex), GW_MAC, "02000000b001", hdr);
		feed(&r, r.link_in, hex);
	}
	gw_site_poll(&r.s);
	m = take(r.eth_out);
	cr_assert_not_null(m);
	cr_assert_eq(rte_pktmbuf_mtod(m, uint8_t *)[12], 0x08);
	cr_assert_eq(rte_pktmbuf_mtod(m, uint8_t *)[13], 0x06);   /* ARP */
	rte_pktmbuf_free(m);
	cr_assert_null(take(r.eth_out));
	cr_assert_eq(r.s.st.arp_requests, 1);
	cr_assert_eq(r.s.st.neigh_drops, 1);
	cr_assert_eq(r.s.st.fwd4, GW_NEIGH_HOLD + 1);
	feed(&r, r.eth_in, GW_MAC HOST_MAC "0806" "0001080006040002" HOST_MAC
	     "0a010002" GW_MAC "0a010001");
	gw_site_poll(&r.s);
	for (i = 1; i <= GW_NEIGH_HOLD; i++) {
		m = take(r.eth_out);
		cr_assert_not_null(m, "held packet %u", i);
		p = rte_pktmbuf_mtod(m, const uint8_t *);
		cr_assert_eq(memcmp(p, "\x02\x00\x00\x00\x0a\x02", 6), 0);
		cr_assert_eq(p[14 + 4] << 8 | p[14 + 5], i, "packet %u", i);
		rte_pktmbuf_free(m);
	}
	cr_assert_null(take(r.eth_out));
	cr_assert_eq(r.s.st.eth_tx, GW_NEIGH_HOLD + 1);
	rig_down(&r);
}
