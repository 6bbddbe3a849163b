/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The soft NIC on the wire: RoCEv2 packets (soft_wire_pkt.c) byte for
 * byte, the ICRC against zlib's CRC-32 over the masked headers as IBA
 * Annex A17.3.3 lays them out, hostile frames dropped with their reason,
 * and UD between two soft wire devices whose ethdevs (net_ring) are joined
 * by this test's pump, ARP included. With QPIO_WIRE_PCAP=FILE the pump
 * writes every frame it moves to FILE (test/integration/wire_tshark.sh
 * opens it with tshark's RoCE dissector).
 */
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <pcap/pcap.h>
#include <rte_arp.h>
#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "test_common.h"
#include "soft_wire_pkt.h"
#include "cm_mad.h"
#include "qpio_port.h"

TestSuite(wire_pkt, .init = qt_eal_init, .fini = qt_eal_fini);
TestSuite(soft_wire, .init = qt_eal_init, .fini = qt_eal_fini);

/* ---- packets ---- */

static const uint8_t V4_A[4] = { 10, 0, 0, 1 };
static const uint8_t V4_B[4] = { 10, 0, 0, 2 };

static void
hdr_v4(struct soft_wire_hdr *h, int imm)
{
	static const struct rte_ether_addr da = {{ 0x02, 0, 0, 0, 0, 0xb }};
	static const struct rte_ether_addr sa = {{ 0x02, 0, 0, 0, 0, 0xa }};

	memset(h, 0, sizeof(*h));
	h->dmac = da;
	h->smac = sa;
	memcpy(h->sip, V4_A, 4);
	memcpy(h->dip, V4_B, 4);
	h->hop_limit = 64;
	h->tclass = 0x02;
	h->udp_sport = 0xc123;
	h->pkey = 0xffff;
	h->dqpn = 0x000123;
	h->src_qpn = 0x000456;
	h->psn = 0xabcdef;
	h->qkey = 0x11111111;
	h->opcode = imm ? SOFT_IB_OPC_UD_SEND_ONLY_IMM : SOFT_IB_OPC_UD_SEND_ONLY;
	h->imm = 0xdeadbeef;
}

static void
hdr_v6(struct soft_wire_hdr *h)
{
	hdr_v4(h, 0);
	h->ipv6 = 1;
	memset(h->sip, 0, 16);
	memset(h->dip, 0, 16);
	h->sip[0] = 0xfd;
	h->sip[15] = 1;
	h->dip[0] = 0xfd;
	h->dip[15] = 2;
	h->flow_label = 0x12345;
}

/* The ICRC computed independently: the masked headers written out as
 * the spec lists them, then zlib's crc32() over them and the rest. */
static uint32_t
ref_icrc(const uint8_t *frame, uint32_t flen, int ipv6)
{
	uint8_t buf[9000];
	uint32_t iplen = ipv6 ? 40 : 20, n = 0;
	const uint8_t *l3 = frame + 14;
	uint8_t *ip, *udp, *bth;

	memset(buf, 0xff, 8);
	n = 8;
	memcpy(buf + n, l3, flen - 14 - 4);
	ip = buf + n;
	udp = ip + iplen;
	bth = udp + 8;
	if (ipv6) {
		ip[0] |= 0x0f;        /* traffic class, low nibble in byte 0 */
		ip[1] = ip[2] = ip[3] = 0xff;
		ip[7] = 0xff;
	} else {
		ip[1] = 0xff;
		ip[8] = 0xff;
		ip[10] = ip[11] = 0xff;
	}
	udp[6] = udp[7] = 0xff;
	bth[4] = 0xff;
	n += flen - 14 - 4;
	return (uint32_t)crc32(0L, buf, n);
}

static uint32_t
frame_icrc(const uint8_t *f, uint32_t flen)
{
	const uint8_t *x = f + flen - 4;

	return (uint32_t)x[0] | ((uint32_t)x[1] << 8) | ((uint32_t)x[2] << 16) |
		((uint32_t)x[3] << 24);
}

static uint32_t
build(uint8_t *f, const struct soft_wire_hdr *h, const uint8_t *pl,
      uint32_t len)
{
	struct soft_wire_seg seg = { pl, len };

	return soft_wire_build(f, h, &seg, 1, len);
}

static uint8_t my_ips[2][16];

static void
my_ips_init(void)
{
	soft_wire_ipv4_mapped(my_ips[0], V4_B);
	memset(my_ips[1], 0, 16);
	my_ips[1][0] = 0xfd;
	my_ips[1][15] = 2;
}

static enum soft_wire_drop
parse(uint8_t *f, uint32_t len, struct soft_wire_pkt *p)
{
	my_ips_init();
	return soft_wire_parse(f, len, (const uint8_t (*)[16])my_ips, 2, p);
}

Test(wire_pkt, ud_ipv4_bytes_exact)
{
	uint8_t f[256], pl[5] = { 1, 2, 3, 4, 5 };
	struct soft_wire_hdr h;
	uint32_t flen;

	hdr_v4(&h, 1);
	flen = build(f, &h, pl, 5);
	/* 14 + 20 + 8 + 12 + 8 + 4 + 5 + 3 pad + 4 */
	cr_assert_eq(flen, 78);
	cr_assert_eq(flen, soft_wire_frame_len(&h, 5));
	cr_assert_eq(f[12], 0x08);
	cr_assert_eq(f[13], 0x00);
	cr_assert_eq(f[14], 0x45);
	cr_assert_eq(f[15], 0x02);                     /* tclass */
	cr_assert_eq((f[16] << 8) | f[17], 64);        /* total length */
	cr_assert_eq((f[20] << 8) | f[21], 0x4000);    /* DF */
	cr_assert_eq(f[22], 64);
	cr_assert_eq(f[23], 17);
	cr_assert_eq(rte_raw_cksum(f + 14, 20), 0xffff);
	cr_assert_eq(memcmp(f + 26, V4_A, 4), 0);
	cr_assert_eq(memcmp(f + 30, V4_B, 4), 0);
	cr_assert_eq((f[34] << 8) | f[35], 0xc123);    /* UDP source port */
	cr_assert_eq((f[36] << 8) | f[37], 4791);
	cr_assert_eq((f[38] << 8) | f[39], 44);        /* UDP length */
	cr_assert_eq((f[40] << 8) | f[41], 0);         /* checksum 0 (IPv4) */
	cr_assert_eq(f[42], 0x65);                     /* UD SEND ONLY IMM */
	cr_assert_eq(f[43], 0x30);                     /* SE 0, pad 3, TVer 0 */
	cr_assert_eq((f[44] << 8) | f[45], 0xffff);
	cr_assert_eq(f[46], 0);                        /* resv8a */
	cr_assert_eq((f[47] << 16) | (f[48] << 8) | f[49], 0x123);
	cr_assert_eq(f[50], 0);                        /* AckReq 0 */
	cr_assert_eq((f[51] << 16) | (f[52] << 8) | f[53], 0xabcdef);
	cr_assert_eq(((uint32_t)f[54] << 24) | (f[55] << 16) | (f[56] << 8) |
		     f[57], 0x11111111u);              /* DETH Q_Key */
	cr_assert_eq(f[58], 0);
	cr_assert_eq((f[59] << 16) | (f[60] << 8) | f[61], 0x456);
	cr_assert_eq(((uint32_t)f[62] << 24) | (f[63] << 16) | (f[64] << 8) |
		     f[65], 0xdeadbeefu);              /* ImmDt */
	cr_assert_eq(memcmp(f + 66, pl, 5), 0);
	cr_assert_eq(f[71], 0);
	cr_assert_eq(f[72], 0);
	cr_assert_eq(f[73], 0);
	cr_assert_eq(frame_icrc(f, flen), ref_icrc(f, flen, 0));
}

/*
 * The IPv4 header checksum the build writes and the parse checks (five
 * 32-bit words, folded) against DPDK's own, two bytes a step: 4096
 * headers of every byte value in the fields the path sets (seeded, so a
 * failure repeats), each built and checked (its checksum the bytes
 * rte_ipv4_cksum() writes), then given a checksum of
 * any value (a third keep the right one): the parse refuses it exactly
 * when rte_raw_cksum() says the header does not sum to 0xffff.
 */
Test(wire_pkt, ipv4_checksum_as_dpdk_computes_it)
{
	uint8_t f[512], pl[300];
	struct soft_wire_hdr h;
	struct soft_wire_pkt p;
	enum soft_wire_drop d;
	uint32_t x = 12345, flen, n, bad = 0, ok = 0;
	unsigned int i, k;

	memset(pl, 0x5a, sizeof(pl));
	for (i = 0; i < 4096; i++) {
		uint16_t ck, dck;

		hdr_v4(&h, i & 1);
		x = x * 1103515245u + 12345u;
		h.tclass = (uint8_t)(x >> 8);
		h.hop_limit = (uint8_t)(x >> 16);
		for (k = 0; k < 4; k++) {
			x = x * 1103515245u + 12345u;
			h.sip[k] = (uint8_t)(x >> 16);
		}
		if (i < 4)   /* the extremes: all zeros, all ones */
			memset(h.sip, i < 2 ? 0 : 0xff, 4);
		x = x * 1103515245u + 12345u;
		n = (x >> 16) % sizeof(pl);
		flen = build(f, &h, pl, n);
		cr_assert_eq(rte_raw_cksum(f + 14, 20), 0xffff, "header %u", i);
		/* the very bytes DPDK writes (0x0000, never 0xffff) */
		ck = get_be16(f + 24);
		put_be16(f + 24, 0);
		dck = rte_ipv4_cksum((const struct rte_ipv4_hdr *)(f + 14));
		cr_assert_eq(ck, rte_be_to_cpu_16(dck),
			     "header %u: %#x, DPDK %#x", i, ck,
			     rte_be_to_cpu_16(dck));
		put_be16(f + 24, ck);
		cr_assert_eq(parse(f, flen, &p), SOFT_WIRE_OK, "header %u", i);
		cr_assert_eq(p.len, n);
		x = x * 1103515245u + 12345u;
		ck = (uint16_t)(x >> 8);
		if (i % 3 == 0)   /* the right one */
			ck = get_be16(f + 24);
		put_be16(f + 24, ck);
		bad += rte_raw_cksum(f + 14, 20) != 0xffff;
		d = parse(f, flen, &p);
		ok += d == SOFT_WIRE_OK;
		cr_assert_eq(d == SOFT_WIRE_BAD_IP,
			     rte_raw_cksum(f + 14, 20) != 0xffff,
			     "header %u, checksum %#x", i, ck);
	}
	/* the random checksums (two thirds, 2730) were wrong but a few;
	 * every other header parsed */
	cr_assert_gt(bad, 2700);
	cr_assert_eq(ok + bad, 4096);
}

Test(wire_pkt, icrc_matches_zlib_over_masked_headers)
{
	uint8_t f[4200], pl[4096];
	struct soft_wire_hdr h;
	uint32_t len, flen;

	qt_fill(pl, sizeof(pl), 7);
	for (len = 0; len <= 4096; len = len < 16 ? len + 1 : len * 2 + 3) {
		hdr_v4(&h, (int)(len & 1));
		h.tclass = (uint8_t)len;      /* masked: must not matter */
		h.hop_limit = (uint8_t)(len + 1);
		flen = build(f, &h, pl, len);
		cr_assert_eq(frame_icrc(f, flen), ref_icrc(f, flen, 0),
			     "IPv4, %u bytes", len);
		hdr_v6(&h);
		h.opcode = len & 1 ? SOFT_IB_OPC_UD_SEND_ONLY_IMM :
			SOFT_IB_OPC_UD_SEND_ONLY;
		h.hop_limit = (uint8_t)(len + 3);
		h.tclass = (uint8_t)(len * 7);
		flen = build(f, &h, pl, len);
		cr_assert_eq(frame_icrc(f, flen), ref_icrc(f, flen, 1),
			     "IPv6, %u bytes", len);
	}
}

Test(wire_pkt, icrc_ignores_the_fields_routers_change)
{
	uint8_t f[256], pl[33];
	struct soft_wire_hdr h;
	uint32_t flen, before;

	qt_fill(pl, sizeof(pl), 3);
	hdr_v4(&h, 0);
	flen = build(f, &h, pl, 33);
	before = frame_icrc(f, flen);
	f[15] ^= 0xfc;   /* DSCP */
	f[22] -= 3;      /* TTL */
	f[24] ^= 0x55;   /* IP checksum */
	f[40] = 0x12;    /* UDP checksum */
	f[46] = 0x80;    /* BTH resv8a */
	cr_assert_eq(soft_wire_icrc(f + 14, false, flen - 14 - 4), before);
	f[60] ^= 1;      /* a covered field: the source QP */
	cr_assert_neq(soft_wire_icrc(f + 14, false, flen - 14 - 4), before);
	/* the call put every byte it masked back */
	cr_assert_eq(f[22], 61);
	cr_assert_eq(f[46], 0x80);
}

Test(wire_pkt, parse_roundtrip_ipv4_and_ipv6)
{
	uint8_t f[256], pl[37], gid[16];
	struct soft_wire_hdr h;
	struct soft_wire_pkt p;
	uint32_t flen;

	qt_fill(pl, sizeof(pl), 11);
	hdr_v4(&h, 1);
	h.se = 1;
	flen = build(f, &h, pl, 37);
	cr_assert_eq(parse(f, flen, &p), SOFT_WIRE_OK);
	cr_assert_eq(p.opcode, SOFT_IB_OPC_UD_SEND_ONLY_IMM);
	cr_assert_eq(p.ipv6, 0);
	cr_assert_eq(p.se, 1);
	cr_assert_eq(p.pkey, 0xffff);
	cr_assert_eq(p.dqpn, 0x123);
	cr_assert_eq(p.psn, 0xabcdef);
	cr_assert_eq(p.qkey, 0x11111111u);
	cr_assert_eq(p.src_qpn, 0x456);
	cr_assert_eq(p.has_imm, 1);
	cr_assert_eq(p.imm, 0xdeadbeefu);
	cr_assert_eq(p.len, 37);
	cr_assert_eq(memcmp(p.payload, pl, 37), 0);
	soft_wire_ipv4_mapped(gid, V4_A);
	cr_assert_eq(memcmp(p.sip, gid, 16), 0);
	soft_wire_ipv4_mapped(gid, V4_B);
	cr_assert_eq(memcmp(p.dip, gid, 16), 0);
	cr_assert_eq(p.hop_limit, 64);
	cr_assert_eq(p.udp_sport, 0xc123);

	hdr_v6(&h);
	flen = build(f, &h, pl, 36);
	cr_assert_eq(flen, 14 + 40 + 8 + 12 + 8 + 36 + 4);
	cr_assert_eq((f[14] >> 4), 6);
	cr_assert_eq((f[18] << 8) | f[19], 8 + 12 + 8 + 36 + 4);
	cr_assert_neq((f[14 + 40 + 6] << 8) | f[14 + 40 + 7], 0,
		      "IPv6 carries the UDP checksum");
	cr_assert_eq(rte_ipv6_udptcp_cksum_verify(
		(const struct rte_ipv6_hdr *)(f + 14), f + 54), 0);
	cr_assert_eq(parse(f, flen, &p), SOFT_WIRE_OK);
	cr_assert_eq(p.ipv6, 1);
	cr_assert_eq(p.flow_label, 0x12345);
	cr_assert_eq(p.has_imm, 0);
	cr_assert_eq(p.len, 36);
	cr_assert_eq(memcmp(p.payload, pl, 36), 0);
}

Test(wire_pkt, ethernet_padding_is_not_payload)
{
	uint8_t f[128], pl[1] = { 0x5a };
	struct soft_wire_hdr h;
	struct soft_wire_pkt p;
	uint32_t flen;

	hdr_v4(&h, 0);
	flen = build(f, &h, pl, 1);
	cr_assert_eq(flen, 14 + 20 + 8 + 12 + 8 + 1 + 3 + 4);
	/* a NIC pads a short frame to 60 bytes, or adds its own bytes */
	memset(f + flen, 0xa5, 20);
	cr_assert_eq(parse(f, flen + 20, &p), SOFT_WIRE_OK);
	cr_assert_eq(p.len, 1);
	cr_assert_eq(p.payload[0], 0x5a);
}

Test(wire_pkt, every_cut_of_a_frame_is_refused)
{
	uint8_t f[256], g[256], pl[20];
	struct soft_wire_hdr h;
	struct soft_wire_pkt p;
	uint32_t flen, cut;

	qt_fill(pl, sizeof(pl), 5);
	hdr_v4(&h, 1);
	flen = build(f, &h, pl, 20);
	for (cut = 0; cut < flen; cut++) {
		enum soft_wire_drop d;

		memcpy(g, f, cut);
		d = parse(g, cut, &p);
		cr_assert_neq(d, SOFT_WIRE_OK, "cut at %u accepted", cut);
		/* below the IP header's end the frame is short; after it the
		 * IP total length says more than there is */
		cr_assert(d == SOFT_WIRE_TRUNCATED ||
			  (cut < 14 + 20 && d == SOFT_WIRE_NOT_ROCE),
			  "cut at %u: %s", cut, soft_wire_drop_name(d));
	}
}

/* One field of a good frame changed: the drop reason it must give. */
struct spoil {
	const char *what;
	unsigned int off;
	uint8_t val;
	enum soft_wire_drop want;
	int fix_ip_ck;   /* recompute the IPv4 checksum after the change */
};

Test(wire_pkt, hostile_fields_dropped_with_their_reason)
{
	static const struct spoil sp[] = {
		{ "ethertype VLAN", 12, 0x81, SOFT_WIRE_NOT_ROCE, 0 },
		{ "IP options (IHL 6)", 14, 0x46, SOFT_WIRE_BAD_IP, 1 },
		{ "IP version 5", 14, 0x55, SOFT_WIRE_BAD_IP, 1 },
		{ "IP checksum", 24, 0x00, SOFT_WIRE_BAD_IP, 0 },
		{ "IP more fragments", 20, 0x20, SOFT_WIRE_BAD_IP, 1 },
		{ "IP fragment offset", 21, 0x01, SOFT_WIRE_BAD_IP, 1 },
		{ "IP protocol TCP", 23, 6, SOFT_WIRE_NOT_ROCE, 1 },
		{ "IP destination", 33, 9, SOFT_WIRE_NOT_MINE, 1 },
		{ "UDP port", 37, 0xb8, SOFT_WIRE_NOT_ROCE, 0 },
		{ "UDP length", 39, 43, SOFT_WIRE_BAD_UDP, 0 },
		{ "UDP checksum", 41, 0x01, SOFT_WIRE_BAD_UDP, 0 },
		{ "BTH TVer 1", 43, 0x01, SOFT_WIRE_BAD_BTH, 0 },
		/* a known opcode: the headers parse, the ICRC (which
		 * covers the opcode) fails */
		{ "RC SEND ONLY", 42, 0x04, SOFT_WIRE_BAD_ICRC, 0 },
		{ "opcode 0xff", 42, 0xff, SOFT_WIRE_BAD_BTH, 0 },
		{ "opcode 0x15 (reserved)", 42, 0x15, SOFT_WIRE_BAD_BTH, 0 },
		{ "RD SEND ONLY 0x44", 42, 0x44, SOFT_WIRE_BAD_BTH, 0 },
		/* an ACK carries no data: this frame's bytes after it */
		{ "ACK with data", 42, 0x11, SOFT_WIRE_BAD_BTH, 0 },
		{ "BTH destination QP", 49, 0x24, SOFT_WIRE_BAD_ICRC, 0 },
		{ "DETH Q_Key", 57, 0x10, SOFT_WIRE_BAD_ICRC, 0 },
		{ "payload", 66, 0x00, SOFT_WIRE_BAD_ICRC, 0 },
		{ "ICRC", 74, 0x00, SOFT_WIRE_BAD_ICRC, 0 },
	};
	uint8_t f[256], g[256], pl[8];
	struct soft_wire_hdr h;
	struct soft_wire_pkt p;
	uint32_t flen;
	unsigned int i;

	memset(pl, 0x77, sizeof(pl));
	hdr_v4(&h, 1);
	flen = build(f, &h, pl, 8);
	cr_assert_eq(flen, 78);
	for (i = 0; i < RTE_DIM(sp); i++) {
		memcpy(g, f, flen);
		cr_assert_neq(g[sp[i].off], sp[i].val, "%s: no change",
			      sp[i].what);
		g[sp[i].off] = sp[i].val;
		if (sp[i].fix_ip_ck) {
			uint16_t ck;

			g[24] = g[25] = 0;
			ck = rte_ipv4_cksum((const struct rte_ipv4_hdr *)(g + 14));
			memcpy(g + 24, &ck, 2);
		}
		cr_assert_eq(parse(g, flen, &p), sp[i].want, "%s: got %s",
			     sp[i].what, soft_wire_drop_name(parse(g, flen, &p)));
	}
}

/* An IPv4-mapped address (::ffff:a.b.c.d) names an IPv4 node: in an IPv6
 * header it would reach the device's IPv4 address over IPv6 and, as the
 * source, overwrite that IPv4 neighbour's MAC (found by fuzz_wire_rx;
 * test/fuzz/corpus/fuzz_wire_rx/regress-v6-*-v4-mapped). */
Test(wire_pkt, ipv6_with_an_ipv4_mapped_address_refused)
{
	uint8_t f[256], pl[9];
	struct soft_wire_hdr h;
	struct soft_wire_pkt p;
	uint32_t flen;

	qt_fill(pl, sizeof(pl), 1);
	hdr_v6(&h);
	soft_wire_ipv4_mapped(h.dip, V4_B);   /* the device's IPv4 GID */
	flen = build(f, &h, pl, sizeof(pl));
	cr_assert_eq(parse(f, flen, &p), SOFT_WIRE_BAD_IP);
	hdr_v6(&h);
	soft_wire_ipv4_mapped(h.sip, V4_A);
	flen = build(f, &h, pl, sizeof(pl));
	cr_assert_eq(parse(f, flen, &p), SOFT_WIRE_BAD_IP);
	hdr_v6(&h);                           /* the same, unmapped: taken */
	flen = build(f, &h, pl, sizeof(pl));
	cr_assert_eq(parse(f, flen, &p), SOFT_WIRE_OK);
	cr_assert_eq(p.len, sizeof(pl));
}

/* ---- two wire devices over net_ring, joined by the pump ---- */

struct wire_pair {
	struct rte_ring *a_tx, *a_rx, *b_tx, *b_rx;
	char name_a[RTE_ETH_NAME_MAX_LEN], name_b[RTE_ETH_NAME_MAX_LEN];
	uint16_t port_a, port_b;
	struct rte_mempool *mp;       /* frames the test makes */
	struct qpio_device *a, *b;
	pcap_t *pc;
	pcap_dumper_t *pd;
	uint64_t moved;
	uint32_t psn[16];             /* BTH PSNs of the first RoCE frames */
	unsigned int nroce;
	/* RoCE frames each way so far, and the ones to lose: bit i of
	 * drop_ab is A->B frame i (from 0) */
	unsigned int n_ab, n_ba;
	uint64_t drop_ab, drop_ba;
	unsigned int dropped;
	/* pump() calls so far, and the one that moved each A->B frame */
	unsigned int pumps;
	unsigned int pump_ab[512];
};

static struct wire_pair W;

static struct rte_ring *
ring(const char *name)
{
	struct rte_ring *r = rte_ring_create(name, 1024, SOCKET_ID_ANY,
					     RING_F_SP_ENQ | RING_F_SC_DEQ);

	cr_assert_not_null(r, "ring %s: %s", name, rte_strerror(rte_errno));
	return r;
}

/* An ethdev over rings rx and tx; its name into name. @return its port. */
static int
eth_of_rings(const char *what, struct rte_ring *rx, struct rte_ring *tx,
	     char *name)
{
	int pid = rte_eth_from_rings(what, &rx, 1, &tx, 1, SOCKET_ID_ANY);

	cr_assert_geq(pid, 0, "%s: %s", what, rte_strerror(rte_errno));
	cr_assert_eq(rte_eth_dev_get_name_by_port((uint16_t)pid, name), 0);
	return pid;
}

/* ethdevs wire_a (rx a_rx, tx a_tx) and wire_b (rx b_rx, tx b_tx). */
static void
pair_rings(void)
{
	/* a vdev's name stays taken after its ethdev closed: new names for
	 * each pair of a test */
	static unsigned int gen;
	char n[4][32];

	memset(&W, 0, sizeof(W));
	snprintf(n[0], sizeof(n[0]), "wa_tx%u", gen);
	snprintf(n[1], sizeof(n[1]), "wa_rx%u", gen);
	snprintf(n[2], sizeof(n[2]), "wb_tx%u", gen);
	snprintf(n[3], sizeof(n[3]), "wb_rx%u", gen);
	W.a_tx = ring(n[0]);
	W.a_rx = ring(n[1]);
	W.b_tx = ring(n[2]);
	W.b_rx = ring(n[3]);
	snprintf(n[0], sizeof(n[0]), "wire_a%u", gen);
	snprintf(n[1], sizeof(n[1]), "wire_b%u", gen++);
	W.port_a = (uint16_t)eth_of_rings(n[0], W.a_rx, W.a_tx, W.name_a);
	W.port_b = (uint16_t)eth_of_rings(n[1], W.b_rx, W.b_tx, W.name_b);
	W.mp = rte_pktmbuf_pool_create("wire_test", 255, 0, 0, 2048 + 128,
				       SOCKET_ID_ANY);
	cr_assert_not_null(W.mp);
}

/* Devices soft0 on wire_a and soft1 on wire_b, with the devargs given. */
static void
pair_devs(const char *args_a, const char *args_b)
{
	char da[256], db[256];
	const char *pcap_path = getenv("QPIO_WIRE_PCAP");

	snprintf(da, sizeof(da), "soft0,wire=%s%s", W.name_a, args_a);
	snprintf(db, sizeof(db), "soft1,wire=%s%s", W.name_b, args_b);
	W.a = qpio_rdma_dev_create(da);
	cr_assert_not_null(W.a, "%s: %s", da, rte_strerror(rte_errno));
	W.b = qpio_rdma_dev_create(db);
	cr_assert_not_null(W.b, "%s: %s", db, rte_strerror(rte_errno));
	if (pcap_path != NULL) {
		W.pc = pcap_open_dead(DLT_EN10MB, 65535);
		cr_assert_not_null(W.pc);
		W.pd = pcap_dump_open_append(W.pc, pcap_path);
		cr_assert_not_null(W.pd, "%s: %s", pcap_path, pcap_geterr(W.pc));
	}
}

static void
pair_up(const char *args_a, const char *args_b)
{
	pair_rings();
	pair_devs(args_a, args_b);
}

static void
pair_down(void)
{
	cr_assert_eq(qpio_rdma_dev_close(W.a), 0);
	cr_assert_eq(qpio_rdma_dev_close(W.b), 0);
	if (W.pd != NULL) {
		pcap_dump_close(W.pd);
		pcap_close(W.pc);
	}
	/* the devices' ports closed the ethdevs; the rings are the test's */
	rte_ring_free(W.a_tx);
	rte_ring_free(W.a_rx);
	rte_ring_free(W.b_tx);
	rte_ring_free(W.b_rx);
	rte_mempool_free(W.mp);
}

static void
dump(struct rte_mbuf *m)
{
	struct pcap_pkthdr ph;

	if (W.pd == NULL)
		return;
	memset(&ph, 0, sizeof(ph));
	ph.caplen = ph.len = rte_pktmbuf_data_len(m);
	pcap_dump((u_char *)W.pd, &ph, rte_pktmbuf_mtod(m, const u_char *));
}

/* 1 when f is a RoCEv2 frame (IPv4 or IPv6, UDP 4791). */
static int
is_roce(const uint8_t *f)
{
	if (f[12] == 0x08 && f[13] == 0x00)
		return f[14 + 9] == 17 && f[36] == 0x12 && f[37] == 0xb7;
	if (f[12] == 0x86 && f[13] == 0xdd)
		return f[14 + 6] == 17 && f[56] == 0x12 && f[57] == 0xb7;
	return 0;
}

/* Move every frame one way (losing those of the drop mask); @return how
 * many arrived. */
static unsigned int
pump_one(struct rte_ring *from, struct rte_ring *to, unsigned int *count,
	 uint64_t drop)
{
	void *objs[64], *keep[64];
	unsigned int n, i, k = 0;

	n = rte_ring_dequeue_burst(from, objs, 64, NULL);
	for (i = 0; i < n; i++) {
		const uint8_t *f = rte_pktmbuf_mtod((struct rte_mbuf *)objs[i],
						    const uint8_t *);

		if (is_roce(f)) {
			unsigned int idx = (*count)++;

			if (count == &W.n_ab && idx < RTE_DIM(W.pump_ab))
				W.pump_ab[idx] = W.pumps;
			if (idx < 64 && (drop >> idx) & 1) {
				rte_pktmbuf_free(objs[i]);
				W.dropped++;
				continue;
			}
			/* IPv4: the BTH PSN, bytes 9-11 of the BTH at 42 */
			if (f[12] == 0x08 && W.nroce < RTE_DIM(W.psn))
				W.psn[W.nroce++] = ((uint32_t)f[51] << 16) |
					((uint32_t)f[52] << 8) | f[53];
		}
		dump(objs[i]);
		keep[k++] = objs[i];
	}
	cr_assert_eq(rte_ring_enqueue_burst(to, keep, k, NULL), k);
	W.moved += k;
	return k;
}

static unsigned int
pump(void)
{
	W.pumps++;
	return pump_one(W.a_tx, W.b_rx, &W.n_ab, W.drop_ab) +
		pump_one(W.b_tx, W.a_rx, &W.n_ba, W.drop_ba);
}

/* Poll cq, moving the frames (pumpf) and running both devices' steps,
 * until n completions came or 10 s passed (a loaded machine may hold
 * the process back; only a failing test waits that long). */
static unsigned int
poll_pair(struct qpio_cq *cq, struct qpio_wc *wc, unsigned int n,
	  unsigned int (*pumpf)(void), struct qpio_device *a,
	  struct qpio_device *b)
{
	uint64_t end = rte_get_tsc_cycles() + 10 * rte_get_tsc_hz();
	unsigned int got = 0;

	while (got < n && rte_get_tsc_cycles() < end) {
		pumpf();
		qpio_soft_wire_progress(a);
		qpio_soft_wire_progress(b);
		pumpf();
		got += qpio_cq_poll(cq, wc + got, (uint16_t)(n - got));
	}
	return got;
}

/* poll_pair() of the net_ring pair W. */
static unsigned int
poll_wire(struct qpio_cq *cq, struct qpio_wc *wc, unsigned int n)
{
	return poll_pair(cq, wc, n, pump, W.a, W.b);
}

/* Pump and progress for ms milliseconds. */
static void
run_for(unsigned int ms)
{
	uint64_t end = rte_get_tsc_cycles() + ms * (rte_get_tsc_hz() / 1000);

	while (rte_get_tsc_cycles() < end) {
		pump();
		qpio_soft_wire_progress(W.a);
		qpio_soft_wire_progress(W.b);
	}
	pump();
}

/* Run both devices until a's QP has had n RNR NAKs, 10 s at most (a
 * loaded machine may hold the progress back). */
static void
run_until_rnr_naks(struct qt_end *a, uint64_t n)
{
	uint64_t end = rte_get_tsc_cycles() + 10 * rte_get_tsc_hz();

	while (qt_stats(a->qp).rnr_naks < n && rte_get_tsc_cycles() < end)
		run_for(1);
	cr_assert_geq(qt_stats(a->qp).rnr_naks, n, "fewer RNR NAKs than %lu within 10 s", (unsigned long)n);
}

static struct qpio_soft_wire_stats
wst(struct qpio_device *d)
{
	struct qpio_soft_wire_stats s;

	cr_assert_eq(qpio_soft_wire_stats_get(d, &s), 0);
	return s;
}

/* Steps of d for ms milliseconds (the link is read every WIRE_LINK_MS at
 * most): @return its first asynchronous event's status (0 and *ev, or
 * -EAGAIN when none came); stops at the first event. */
static int
steps_for_event(struct qpio_device *d, unsigned int ms,
		struct qpio_async_event *ev)
{
	uint64_t end = rte_get_tsc_cycles() + ms * rte_get_tsc_hz() / 1000;
	int r;

	while ((r = qpio_rdma_get_async_event(d, ev)) == -EAGAIN &&
	       rte_get_tsc_cycles() < end) {
		qpio_soft_wire_progress(d);
		rte_delay_us_sleep(1000);
	}
	return r;
}

/* W.a's ethdev link set down (up 0) or up: the port query says so at
 * once, W.a's steps raise QPIO_EVENT_PORT_ERR (down) or
 * QPIO_EVENT_PORT_ACTIVE (up) for port 1 and no second event in 300 ms,
 * and link_changes is then changes. */
static void
link_flip(int up, uint64_t changes)
{
	struct qpio_async_event ev;
	struct qpio_port_attr pa;

	cr_assert_eq(up ? rte_eth_dev_set_link_up(W.port_a) :
		     rte_eth_dev_set_link_down(W.port_a), 0);
	cr_assert_eq(qpio_rdma_port_query(W.a, 1, &pa), 0);
	cr_assert_eq(pa.state, up ? QPIO_PORT_ACTIVE : QPIO_PORT_DOWN);
	cr_assert_eq(steps_for_event(W.a, 10000, &ev), 0, "no %s",
		     up ? "PORT_ACTIVE" : "PORT_ERR");
	cr_assert_eq(ev.event_type, up ? QPIO_EVENT_PORT_ACTIVE :
		     QPIO_EVENT_PORT_ERR);
	cr_assert_eq(ev.element.port_num, 1);
	cr_assert_eq(steps_for_event(W.a, 300, &ev), -EAGAIN,
		     "a second event (%d) for one change", (int)ev.event_type);
	cr_assert_eq(wst(W.a).link_changes, changes);
}

/* The port's link, as rxe follows its netdev's: the ethdev's link taken
 * down (net_ring's rte_eth_dev_set_link_down()) is reported DOWN by the
 * port query at once, and the device's steps raise QPIO_EVENT_PORT_ERR
 * for port 1, once; up again, QPIO_EVENT_PORT_ACTIVE, once. No event
 * while the link stays as it is (300 ms of steps: three reads), none for
 * the link as the device starts, none on the other device. */
Test(soft_wire, link_down_and_up_raise_port_events)
{
	struct qpio_async_event ev;
	struct qpio_port_attr pa;

	pair_up(",ip=10.0.0.1", ",ip=10.0.0.2");
	cr_assert_eq(qpio_rdma_port_query(W.a, 1, &pa), 0);
	cr_assert_eq(pa.state, QPIO_PORT_ACTIVE);
	cr_assert_eq(steps_for_event(W.a, 300, &ev), -EAGAIN,
		     "an event (%d) with the link as it started",
		     (int)ev.event_type);

	link_flip(0, 1);
	link_flip(1, 2);

	cr_assert_eq(steps_for_event(W.b, 300, &ev), -EAGAIN);
	cr_assert_eq(wst(W.b).link_changes, 0);
	cr_assert_eq(qpio_rdma_async_events_lost(W.a), 0);
	pair_down();
}

/* An AH on e towards gid (IPv4-mapped or IPv6), from sgid_index. */
static struct qpio_ah *
ah_to(struct qt_end *e, const uint8_t gid[16], uint8_t sgid_index)
{
	struct qpio_ah_attr aa;
	struct qpio_ah *ah;

	memset(&aa, 0, sizeof(aa));
	aa.port_num = 1;
	aa.is_global = 1;
	aa.grh.sgid_index = sgid_index;
	aa.grh.hop_limit = 1;
	memcpy(aa.grh.dgid.raw, gid, 16);
	ah = qpio_ah_create(e->pd, &aa);
	cr_assert_not_null(ah, "ah: %s", rte_strerror(rte_errno));
	return ah;
}

static void
ud_post_send(struct qt_end *e, struct qpio_ah *ah, uint32_t qpn, uint32_t qkey,
	     uint32_t off, uint32_t len, uint64_t wr_id, int imm)
{
	struct qpio_sge sge = { (uintptr_t)e->buf + off, len, qpio_mr_lkey(e->mr) };
	struct qpio_send_wr wr = qt_ud_wr(wr_id, &sge, 1, QPIO_SEND_SIGNALED,
					  ah, qpn, qkey);
	int err = 1;

	if (imm) {
		wr.opcode = QPIO_WR_SEND_WITH_IMM;
		wr.imm_data = 0x0badcafe;
	}
	cr_assert_eq(qpio_qp_post_send(e->qp, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);
}

static void
expect_send_done(struct qt_end *e, uint64_t wr_id)
{
	struct qpio_wc wc;

	cr_assert_eq(poll_wire(e->cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS, "%s",
		     qpio_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, QPIO_WC_SEND);
	cr_assert_eq(wc.wr_id, wr_id);
}

#define QK 0x11111111u

Test(soft_wire, ud_ipv4_arp_then_datagram_bytes_exact)
{
	struct qt_end a, b;
	struct qpio_wc wc;
	struct qpio_ah *ah;
	struct qpio_soft_wire_stats sa, sb;
	struct qpio_port_attr pa;
	union qpio_gid g;
	uint8_t gid_b[16];
	const uint8_t *grh;

	pair_up(",ip=10.0.0.1", ",ip=10.0.0.2");
	cr_assert_eq(qpio_rdma_port_query(W.b, 1, &pa), 0);
	cr_assert_eq(pa.link_layer, QPIO_LINK_LAYER_ETHERNET);
	cr_assert_eq(pa.gid_tbl_len, 2);
	cr_assert_eq(pa.active_mtu, QPIO_MTU_1024);     /* mtu 1500 */
	cr_assert_eq(qpio_rdma_gid_query(W.b, 1, 1, &g), 0);
	soft_wire_ipv4_mapped(gid_b, V4_B);
	cr_assert_eq(memcmp(g.raw, gid_b, 16), 0);
	cr_assert_eq(qpio_rdma_gid_query(W.b, 1, 0, &g), 0);
	cr_assert_eq(g.raw[0], 0xfe);
	cr_assert_eq(g.raw[1], 0x80);
	cr_assert_eq(g.raw[11], 0xff);
	cr_assert_eq(g.raw[12], 0xfe);
	cr_assert_eq(qpio_rdma_gid_query(W.b, 1, 2, &g), -EINVAL);

	qt_ud_end_create(&a, W.a, QK, NULL);
	qt_ud_end_create(&b, W.b, QK, NULL);
	qt_fill(a.buf, 300, 42);
	memset(b.buf, 0xee, 512);
	qt_post_recv(&b, 7, b.buf, 40 + 300);
	ah = ah_to(&a, gid_b, 1);
	ud_post_send(&a, ah, qpio_qp_num(b.qp), QK, 0, 300, 1, 1);
	/* the datagram waits for B's MAC: ARP request, reply, then it */
	expect_send_done(&a, 1);
	cr_assert_eq(poll_wire(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS, "%s",
		     qpio_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, QPIO_WC_RECV);
	cr_assert_eq(wc.wr_id, 7);
	cr_assert_eq(wc.byte_len, 340);
	cr_assert_eq(wc.src_qp, qpio_qp_num(a.qp));
	cr_assert(wc.wc_flags & QPIO_WC_GRH);
	cr_assert(wc.wc_flags & QPIO_WC_WITH_IMM);
	cr_assert_eq(wc.imm_data, 0x0badcafe);
	/* GRH space: 20 zero bytes, then the IPv4 header from 10.0.0.1 */
	grh = b.buf;
	for (unsigned int i = 0; i < 20; i++)
		cr_assert_eq(grh[i], 0, "GRH byte %u", i);
	cr_assert_eq(grh[20], 0x45);
	cr_assert_eq(grh[20 + 8], 1, "TTL: the AH's hop limit");
	cr_assert_eq(memcmp(grh + 20 + 12, V4_A, 4), 0);
	cr_assert_eq(memcmp(grh + 20 + 16, V4_B, 4), 0);
	cr_assert(qt_check(b.buf + 40, 300, 42));
	cr_assert_eq(b.buf[340], 0xee, "nothing past the message");

	sa = wst(W.a);
	sb = wst(W.b);
	cr_assert_eq(sa.arp_tx, 1);      /* the request */
	cr_assert_eq(sb.arp_rx, 1);
	cr_assert_eq(sb.arp_tx, 1);      /* the reply */
	cr_assert_eq(sa.arp_rx, 1);
	cr_assert_eq(sa.tx_packets, 1);
	cr_assert_eq(sa.tx_bytes, 14 + 20 + 8 + 12 + 8 + 4 + 300 + 4);
	cr_assert_eq(sb.rx_packets, 1);
	cr_assert_eq(sb.rx_bytes, sa.tx_bytes);
	cr_assert_eq(sb.rx_bad_icrc + sb.rx_not_roce + sb.rx_no_qp +
		     sb.rx_truncated + sb.tx_no_neigh, 0);
	cr_assert_eq(W.moved, 3);

	/* the answer, addressed from the completion's GRH */
	{
		struct qpio_ah_attr back;
		struct qpio_ah *ah2;

		cr_assert_eq(qpio_ah_init_from_wc(W.b, 1, &wc, b.buf, &back), 0);
		cr_assert_eq(back.is_global, 1);
		cr_assert_eq(back.grh.sgid_index, 1);
		ah2 = qpio_ah_create(b.pd, &back);
		cr_assert_not_null(ah2);
		qt_post_recv(&a, 9, a.buf + 1024, 40 + 64);
		qt_fill(b.buf + 2048, 64, 9);
		ud_post_send(&b, ah2, wc.src_qp, QK, 2048, 64, 2, 0);
		expect_send_done(&b, 2);
		cr_assert_eq(poll_wire(a.cq, &wc, 1), 1);
		cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc.wr_id, 9);
		cr_assert_eq(wc.byte_len, 104);
		cr_assert_eq(wc.src_qp, qpio_qp_num(b.qp));
		cr_assert(qt_check(a.buf + 1024 + 40, 64, 9));
		/* B learnt A's MAC from the request: no second ARP */
		cr_assert_eq(wst(W.b).arp_tx, 1);
		cr_assert_eq(qpio_ah_destroy(ah2), 0);
	}
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_end_destroy(&a);
	qt_end_destroy(&b);
	pair_down();
}

Test(soft_wire, ud_ipv6_static_neighbour_both_ways)
{
	struct qt_end a, b;
	struct qpio_wc wc;
	struct qpio_ah *ab, *ba;
	struct rte_ether_addr mac_b;
	struct qpio_port_attr pa;
	uint8_t ga[16] = { 0xfd, [15] = 1 }, gb[16] = { 0xfd, [15] = 2 };
	char args[160];

	pair_rings();
	cr_assert_eq(rte_eth_macaddr_get(W.port_b, &mac_b), 0);
	snprintf(args, sizeof(args), ",ip6=fd00::1,mtu=9000,neigh=fd00::2@"
		 RTE_ETHER_ADDR_PRT_FMT, RTE_ETHER_ADDR_BYTES(&mac_b));
	pair_devs(args, ",ip6=fd00::2,mtu=9000");
	cr_assert_eq(qpio_rdma_port_query(W.a, 1, &pa), 0);
	cr_assert_eq(pa.active_mtu, QPIO_MTU_4096);
	cr_assert_eq(pa.gid_tbl_len, 2);
	qt_ud_end_create(&a, W.a, QK, NULL);
	qt_ud_end_create(&b, W.b, QK, NULL);
	ab = ah_to(&a, gb, 1);
	ba = ah_to(&b, ga, 1);

	/* B knows no MAC for A: it asks by NDP (a Neighbor Solicitation to
	 * A's solicited-node address), A answers (and learns B from the
	 * solicitation's source link-layer address), the datagram that
	 * waited goes */
	qt_post_recv(&a, 3, a.buf + 8192, 40 + 10);
	ud_post_send(&b, ba, qpio_qp_num(a.qp), QK, 4096, 10, 1, 0);
	expect_send_done(&b, 1);
	cr_assert_eq(poll_wire(a.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 3);
	cr_assert_eq(wc.byte_len, 50);
	cr_assert_eq(wst(W.b).nd_tx, 1, "one solicitation");
	cr_assert_eq(wst(W.a).nd_rx, 1);
	cr_assert_eq(wst(W.a).nd_tx, 1, "one advertisement");
	cr_assert_eq(wst(W.b).nd_rx, 1);
	cr_assert_eq(wst(W.b).tx_no_neigh, 0);
	cr_assert_eq(wst(W.b).tx_packets, 1, "NDP is not RoCE");
	cr_assert_eq(wst(W.b).arp_tx, 0, "no ARP for IPv6");
	cr_assert_eq(W.moved, 3);
	qt_post_recv(&a, 3, a.buf + 8192, 40 + 10);

	/* A has a static entry for B */
	qt_post_recv(&b, 1, b.buf, 40 + 4000);
	qt_fill(a.buf, 4000, 3);
	ud_post_send(&a, ab, qpio_qp_num(b.qp), QK, 0, 4000, 2, 0);
	expect_send_done(&a, 2);
	cr_assert_eq(poll_wire(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 1);
	cr_assert_eq(wc.byte_len, 4040);
	cr_assert_eq(b.buf[0] >> 4, 6, "the GRH space holds the IPv6 header");
	cr_assert_eq(memcmp(b.buf + 8, ga, 16), 0);
	cr_assert_eq(memcmp(b.buf + 24, gb, 16), 0);
	cr_assert(qt_check(b.buf + 40, 4000, 3));

	/* B knows A's MAC now: its answer goes at once */
	ud_post_send(&b, ba, qpio_qp_num(a.qp), QK, 4096, 10, 4, 0);
	expect_send_done(&b, 4);
	cr_assert_eq(poll_wire(a.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 3);
	cr_assert_eq(wc.byte_len, 50);
	cr_assert_eq(wst(W.b).tx_packets, 2);
	cr_assert_eq(wst(W.b).nd_tx + wst(W.a).nd_tx, 2, "asked once");

	/* a datagram over the path MTU (4096) is not sent */
	ud_post_send(&a, ab, qpio_qp_num(b.qp), QK, 0, 4097, 5, 0);
	expect_send_done(&a, 5);
	cr_assert_eq(qt_stats(a.qp).ud_too_long, 1);
	cr_assert_eq(wst(W.a).tx_packets, 1);
	cr_assert_eq(qpio_ah_destroy(ab), 0);
	cr_assert_eq(qpio_ah_destroy(ba), 0);
	qt_end_destroy(&a);
	qt_end_destroy(&b);
	pair_down();
}

Test(soft_wire, ud_psn_counts_from_sq_psn_and_wraps)
{
	struct qt_end a, b;
	struct qpio_wc wc[4];
	struct qpio_qp_attr qa;
	struct qpio_ah *ah;
	uint8_t gid_b[16];
	unsigned int i;

	pair_up(",ip=10.0.0.1", ",ip=10.0.0.2,neigh=10.0.0.1@00:00:00:00:00:00");
	qt_ud_end_create(&a, W.a, QK, NULL);
	qt_ud_end_create(&b, W.b, QK, NULL);
	/* walked again from RESET, with an sq_psn 2 before the wrap */
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = QPIO_QPS_RESET;
	cr_assert_eq(qpio_qp_modify(a.qp, &qa, QPIO_QP_STATE), 0);
	qa.qp_state = QPIO_QPS_INIT;
	qa.port_num = 1;
	qa.qkey = QK;
	cr_assert_eq(qpio_qp_modify(a.qp, &qa, QPIO_QP_STATE |
				    QPIO_QP_PKEY_INDEX | QPIO_QP_PORT |
				    QPIO_QP_QKEY), 0);
	qa.qp_state = QPIO_QPS_RTR;
	cr_assert_eq(qpio_qp_modify(a.qp, &qa, QPIO_QP_STATE), 0);
	qa.qp_state = QPIO_QPS_RTS;
	qa.sq_psn = 0xfffffe;
	cr_assert_eq(qpio_qp_modify(a.qp, &qa, QPIO_QP_STATE | QPIO_QP_SQ_PSN), 0);
	soft_wire_ipv4_mapped(gid_b, V4_B);
	ah = ah_to(&a, gid_b, 1);
	for (i = 0; i < 3; i++) {
		qt_post_recv(&b, i, b.buf + i * 256, 40 + 16);
		ud_post_send(&a, ah, qpio_qp_num(b.qp), QK, 0, 16, 10 + i, 0);
	}
	cr_assert_eq(poll_wire(a.cq, wc, 3), 3);
	cr_assert_eq(poll_wire(b.cq, wc, 3), 3);
	cr_assert_eq(W.nroce, 3);
	cr_assert_eq(W.psn[0], 0xfffffe);
	cr_assert_eq(W.psn[1], 0xffffff);
	cr_assert_eq(W.psn[2], 0);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_end_destroy(&a);
	qt_end_destroy(&b);
	pair_down();
}

Test(soft_wire, drops_counted_qkey_qpn_icrc_and_junk)
{
	struct qt_end a, b;
	struct qpio_wc wc[2];
	struct qpio_ah *ah;
	struct qpio_soft_wire_stats sb;
	struct soft_wire_hdr h;
	struct rte_mbuf *m[4];
	uint8_t gid_b[16], pl[16];
	uint32_t flen;

	pair_up(",ip=10.0.0.1", ",ip=10.0.0.2");
	qt_ud_end_create(&a, W.a, QK, NULL);
	qt_ud_end_create(&b, W.b, QK, NULL);
	soft_wire_ipv4_mapped(gid_b, V4_B);
	ah = ah_to(&a, gid_b, 1);
	qt_post_recv(&b, 1, b.buf, 40 + 64);
	/* wrong Q_Key, then no such QPN, then a good one */
	ud_post_send(&a, ah, qpio_qp_num(b.qp), QK + 1, 0, 16, 1, 0);
	ud_post_send(&a, ah, 0xabcdef, QK, 0, 16, 2, 0);
	ud_post_send(&a, ah, qpio_qp_num(b.qp), QK, 0, 16, 3, 0);
	cr_assert_eq(poll_wire(a.cq, wc, 2), 2);
	expect_send_done(&a, 3);
	cr_assert_eq(poll_wire(b.cq, wc, 1), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(qt_stats(b.qp).ud_qkey_drops, 1);
	sb = wst(W.b);
	cr_assert_eq(sb.rx_no_qp, 1);
	cr_assert_eq(sb.rx_packets, 2, "the Q_Key drop reached its QP");

	/* frames made here, straight into B's receive ring: a bad ICRC,
	 * a cut one, an IPv4 frame that is not RoCE, an ARP for someone
	 * else */
	hdr_v4(&h, 0);
	h.dqpn = qpio_qp_num(b.qp);
	h.qkey = QK;
	memset(pl, 1, sizeof(pl));
	for (unsigned int i = 0; i < 4; i++) {
		m[i] = rte_pktmbuf_alloc(W.mp);
		cr_assert_not_null(m[i]);
	}
	{
		struct soft_wire_seg seg = { pl, 16 };
		uint8_t *f = rte_pktmbuf_mtod(m[0], uint8_t *);

		flen = soft_wire_build(f, &h, &seg, 1, 16);
		f[flen - 1] ^= 0xff;
		rte_pktmbuf_append(m[0], (uint16_t)flen);
		f = rte_pktmbuf_mtod(m[1], uint8_t *);
		soft_wire_build(f, &h, &seg, 1, 16);
		rte_pktmbuf_append(m[1], 40);
		f = rte_pktmbuf_mtod(m[2], uint8_t *);
		soft_wire_build(f, &h, &seg, 1, 16);
		f[14 + 9] = 1;  /* ICMP */
		rte_pktmbuf_append(m[2], (uint16_t)flen);
		f = rte_pktmbuf_mtod(m[3], uint8_t *);
		memset(f, 0, 60);
		memset(f, 0xff, 6);
		f[12] = 0x08;
		f[13] = 0x06;
		f[14 + 1] = 1;       /* Ethernet */
		f[14 + 2] = 0x08;    /* IPv4 */
		f[14 + 4] = 6;
		f[14 + 5] = 4;
		f[14 + 7] = 1;       /* request */
		f[14 + 14] = 10;
		f[14 + 17] = 7;      /* from 10.0.0.7 */
		f[14 + 24] = 10;
		f[14 + 27] = 9;      /* for 10.0.0.9 */
		rte_pktmbuf_append(m[3], 60);
	}
	cr_assert_eq(rte_ring_enqueue_burst(W.b_rx, (void **)m, 4, NULL), 4);
	run_for(20);
	sb = wst(W.b);
	cr_assert_eq(sb.rx_bad_icrc, 1);
	cr_assert_eq(sb.rx_truncated, 1);
	cr_assert_eq(sb.rx_not_roce, 1);
	cr_assert_eq(sb.arp_rx, 2, "A's request and the stranger's");
	cr_assert_eq(sb.arp_tx, 1, "only A was answered");
	cr_assert_eq(sb.rx_packets, 2);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 2), 0, "nothing delivered");
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_end_destroy(&a);
	qt_end_destroy(&b);
	pair_down();
}

/* e made by qt_ud_end_create() with its UD QP swapped for the device's
 * QP1, brought to RTS as the kernel's MAD layer does (the GSI Q_Key at
 * INIT). */
static void
gsi_end_create(struct qt_end *e, struct qpio_device *dev)
{
	struct qpio_qp_init_attr ia;

	qt_ud_end_create(e, dev, QK, NULL);
	cr_assert_eq(qpio_qp_destroy(e->qp), 0);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	ia.qp_type = QPIO_QPT_UD;
	ia.cap.max_send_wr = 16;
	ia.cap.max_recv_wr = 16;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	e->qp = qpio_qp_create_gsi(e->pd, &ia);
	cr_assert_not_null(e->qp, "%s", rte_strerror(rte_errno));
	qt_ud_qp_rts(e->qp, QPIO_GSI_QKEY);
}

/* The REQ a Linux 6.1 kernel sent for rping (test_cm_mad.c's LINUX_REQ),
 * its zeros left out. */
static const char linux_req_hex[] =
	"010702030000000000000002359f56f10010000000000000f1569f3500000000"
	"0000000001061c02505400fffe71780100000000000000000000110100000001"
	"000000a0eb0987a7ffff37f0ffffffff00000000000000000000ffff0a004e01"
	"00000000000000000000ffff0a004e0239497000004000980000000000000000"
	"0000000000000000000000000000000000000000000000000000000000000000"
	"000000000040a0cb0000000000000000000000000a004e010000000000000000"
	"000000000a004e02";

Test(soft_wire, gsi_qp1_carries_mads_with_the_gsi_qkey)
{
	struct qt_end a, b, u;
	struct qpio_qp_init_attr ia;
	struct qpio_qp_attr attr;
	struct qpio_wc wc;
	struct qpio_ah *ah, *uah;
	struct cm_mad m;
	uint8_t gid_b[16];
	const char *why;
	unsigned int i, x;

	pair_up(",ip=10.0.0.1", ",ip=10.0.0.2");
	soft_wire_ipv4_mapped(gid_b, V4_B);
	gsi_end_create(&a, W.a);
	gsi_end_create(&b, W.b);
	cr_assert_eq(qpio_qp_num(a.qp), 1);
	cr_assert_eq(qpio_qp_num(b.qp), 1);
	/* one a device; UD only; no SRQ; Q_Key fixed */
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = a.cq;
	ia.recv_cq = a.cq;
	ia.qp_type = QPIO_QPT_UD;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	cr_assert_null(qpio_qp_create_gsi(a.pd, &ia));
	cr_assert_eq(rte_errno, EBUSY);
	ia.qp_type = QPIO_QPT_RC;
	cr_assert_null(qpio_qp_create_gsi(a.pd, &ia));
	cr_assert_eq(rte_errno, EINVAL);
	memset(&attr, 0, sizeof(attr));
	attr.qkey = QK;
	cr_assert_eq(qpio_qp_modify(a.qp, &attr, QPIO_QP_QKEY), -EINVAL);
	attr.qkey = QPIO_GSI_QKEY;
	cr_assert_eq(qpio_qp_modify(a.qp, &attr, QPIO_QP_QKEY), 0);

	/* A's QP1 sends the kernel's REQ to B's QP1; a remote Q_Key with
	 * the high bit set (a controlled Q_Key, IBA's Post Send) takes the
	 * QP's own, the GSI's. */
	memset(a.buf, 0, 256);
	for (i = 0; i < sizeof(linux_req_hex) / 2; i++) {
		cr_assert_eq(sscanf(linux_req_hex + 2 * i, "%2x", &x), 1);
		a.buf[i] = (uint8_t)x;
	}
	memset(b.buf, 0xee, 512);
	qt_post_recv(&b, 5, b.buf, 40 + 256);
	ah = ah_to(&a, gid_b, 1);
	ud_post_send(&a, ah, QPIO_GSI_QPN, 0x80000000u, 0, 256, 1, 0);
	expect_send_done(&a, 1);
	cr_assert_eq(poll_wire(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS, "%s",
		     qpio_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, QPIO_WC_RECV);
	cr_assert_eq(wc.wr_id, 5);
	cr_assert_eq(wc.byte_len, 40 + 256);
	cr_assert_eq(wc.src_qp, 1);
	cr_assert_eq(wc.qp_num, 1);
	cr_assert(wc.wc_flags & QPIO_WC_GRH);
	cr_assert_eq(memcmp(b.buf + 40, a.buf, 256), 0);
	cr_assert_eq(b.buf[40 + 256], 0xee);
	cr_assert_eq(cm_mad_parse(b.buf + 40, 256, &m, &why), 0);
	cr_assert_eq(m.attr, CM_ATTR_REQ);
	cr_assert_eq(m.req.local_comm_id, 0xf1569f35u);

	/* An ordinary UD QP of A: a datagram to QP1 with its own Q_Key,
	 * and one asking for the GSI's (the high bit set gives its own:
	 * only QP1 sends the GSI Q_Key) both dropped at B's QP1, counted. */
	qt_ud_end_create(&u, W.a, QK, NULL);
	cr_assert_neq(qpio_qp_num(u.qp), 1);
	uah = ah_to(&u, gid_b, 1);
	qt_post_recv(&b, 6, b.buf, 40 + 256);
	ud_post_send(&u, uah, QPIO_GSI_QPN, QK, 0, 64, 2, 0);
	expect_send_done(&u, 2);
	ud_post_send(&u, uah, QPIO_GSI_QPN, QPIO_GSI_QKEY, 0, 64, 3, 0);
	expect_send_done(&u, 3);
	run_for(20);
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0);
	cr_assert_eq(qt_stats(b.qp).ud_qkey_drops, 2);
	cr_assert_eq(wst(W.b).rx_no_qp, 0);

	/* QP1 gone: its number resolves no more, a new one takes it. */
	cr_assert_eq(qpio_ah_destroy(uah), 0);
	qt_end_destroy(&u);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_end_destroy(&b);
	ud_post_send(&a, ah = ah_to(&a, gid_b, 1), QPIO_GSI_QPN, 0x80000000u,
		     0, 256, 4, 0);
	expect_send_done(&a, 4);
	run_for(20);
	cr_assert_eq(wst(W.b).rx_no_qp, 1);
	gsi_end_create(&b, W.b);
	cr_assert_eq(qpio_qp_num(b.qp), 1);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_end_destroy(&a);
	qt_end_destroy(&b);
	pair_down();
}

Test(soft_wire, gsi_only_on_wire_devices)
{
	struct qpio_device *dev = qpio_rdma_dev_create("soft9");
	struct qpio_qp_init_attr ia;
	struct qpio_pd *pd;
	struct qpio_cq *cq;

	cr_assert_not_null(dev);
	pd = qpio_pd_alloc(dev);
	cq = qpio_cq_create(dev, 16, SOCKET_ID_ANY);
	cr_assert(pd != NULL && cq != NULL);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = QPIO_QPT_UD;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	cr_assert_null(qpio_qp_create_gsi(pd, &ia));
	cr_assert_eq(rte_errno, EOPNOTSUPP);
	cr_assert_null(qpio_qp_create_gsi(pd, NULL));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_qp_create_gsi(NULL, &ia));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_eq(qpio_cq_destroy(cq), 0);
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(dev), 0);
}

Test(soft_wire, devargs_and_verbs_refused_with_their_rule)
{
	struct qpio_device *d;
	struct qpio_pd *pd;
	struct qpio_cq *cq;
	struct qpio_qp_init_attr ia;
	struct qpio_ah_attr aa;
	struct qpio_soft_wire_stats st;
	struct rte_ring *r = ring("wd");
	char nm[RTE_ETH_NAME_MAX_LEN], a[200];

	eth_of_rings("wire_d", r, r, nm);
#define DEV(fmt) (snprintf(a, sizeof(a), "soft0,wire=%s" fmt, nm), a)
	/* Refused with EINVAL: after "soft0,wire=<the ring ethdev>" (on),
	 * or alone */
	static const struct {
		int on;
		const char *args;
	} einval[] = {
		{ 1, "" },
		{ 0, "soft0,ip=10.0.0.1" },
		{ 1, ",ip=10.0.0.300" },
		{ 1, ",ip6=::ffff:1.2.3.4" },
		{ 1, ",ip=10.0.0.1,neigh=10.0.0.2" },
		{ 1, ",ip=10.0.0.1,mtu=9001" },
		{ 1, ",ip=10.0.0.1,ack_hold=2" },
		{ 0, "soft0,ack_hold=0" },
		/* IEEE 802.1Q: VID 1..4094 (0 is no VLAN, 4095 reserved),
		 * PCP 0..7 and only with a VID, both only on the wire */
		{ 1, ",ip=10.0.0.1,vlan=0" },
		{ 1, ",ip=10.0.0.1,vlan=4095" },
		{ 1, ",ip=10.0.0.1,vlan=ten" },
		{ 1, ",ip=10.0.0.1,vlan=10,pcp=8" },
		{ 1, ",ip=10.0.0.1,pcp=3" },
		{ 0, "soft0,vlan=100" },
		{ 0, "soft0,pcp=1" },
		{ 1, ",ip=10.0.0.1,fault_drop_ppm=10" },
	};

	for (unsigned int i = 0; i < RTE_DIM(einval); i++) {
		snprintf(a, sizeof(a), "%s%s%s", einval[i].on ? "soft0,wire=" : "",
			 einval[i].on ? nm : "", einval[i].args);
		cr_assert_null(qpio_rdma_dev_create(a), "%s: created", a);
		cr_assert_eq(rte_errno, EINVAL, "%s: rte_errno %d", a, rte_errno);
	}
	cr_assert_null(qpio_rdma_dev_create("soft0,wire=nosuch,ip=10.0.0.1"));
	cr_assert_eq(rte_errno, ENODEV);

	d = qpio_rdma_dev_create(DEV(",ip=10.0.0.1"));
	cr_assert_not_null(d);
	pd = qpio_pd_alloc(d);
	cq = qpio_cq_create(d, 16, SOCKET_ID_ANY);
	cr_assert_not_null(pd);
	cr_assert_not_null(cq);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	{
		/* an RC path on RoCE is global: a LID is refused at RTR */
		struct qpio_qp *qp = qpio_qp_create(pd, &ia);
		struct qpio_qp_attr a;

		cr_assert_not_null(qp);
		memset(&a, 0, sizeof(a));
		a.qp_state = QPIO_QPS_INIT;
		a.port_num = 1;
		cr_assert_eq(qpio_qp_modify(qp, &a, QPIO_QP_STATE |
					    QPIO_QP_PKEY_INDEX | QPIO_QP_PORT |
					    QPIO_QP_ACCESS_FLAGS), 0);
		a.qp_state = QPIO_QPS_RTR;
		a.ah_attr.port_num = 1;
		a.ah_attr.dlid = 2;
		a.path_mtu = QPIO_MTU_1024;
		a.dest_qp_num = 0x100;
		cr_assert_eq(qpio_qp_modify(qp, &a, QPIO_QP_STATE | QPIO_QP_AV |
					    QPIO_QP_PATH_MTU | QPIO_QP_DEST_QPN |
					    QPIO_QP_RQ_PSN |
					    QPIO_QP_MAX_DEST_RD_ATOMIC |
					    QPIO_QP_MIN_RNR_TIMER), -EINVAL);
		cr_assert_eq(qpio_qp_state(qp), QPIO_QPS_INIT);
		/* an IPv6 destination from the IPv4 GID */
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.sgid_index = 1;
		a.ah_attr.grh.dgid.raw[0] = 0xfd;
		a.ah_attr.grh.dgid.raw[15] = 2;
		cr_assert_eq(qpio_qp_modify(qp, &a, QPIO_QP_STATE | QPIO_QP_AV |
					    QPIO_QP_PATH_MTU | QPIO_QP_DEST_QPN |
					    QPIO_QP_RQ_PSN |
					    QPIO_QP_MAX_DEST_RD_ATOMIC |
					    QPIO_QP_MIN_RNR_TIMER), -EINVAL);
		cr_assert_eq(qpio_qp_destroy(qp), 0);
	}
	memset(&aa, 0, sizeof(aa));
	aa.port_num = 1;
	aa.dlid = 1;
	cr_assert_null(qpio_ah_create(pd, &aa), "RoCE needs a GRH");
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_eq(qpio_soft_wire_stats_get(d, NULL), -EINVAL);
	cr_assert_eq(qpio_soft_wire_stats_get(d, &st), 0);
	cr_assert_eq(st.rx_packets + st.tx_packets, 0);
	cr_assert_eq(qpio_cq_destroy(cq), 0);
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);

	d = qpio_rdma_dev_create("soft0");
	cr_assert_not_null(d);
	cr_assert_eq(qpio_soft_wire_stats_get(d, &st), -ENODEV);
	cr_assert_eq(qpio_soft_wire_progress(d), -ENODEV);
	cr_assert_eq(qpio_soft_wire_progress(NULL), -EINVAL);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
	rte_ring_free(r);
}

/* ---- RC and UC ---- */

/* The ACK timeouts wire_connect() sets. WIRE_TIMEOUT, 20 (4.3 s), is
 * the default: a test that loses nothing never sees the timer fire, even
 * when a loaded machine holds its process back between a send and the
 * answer (meson runs tests side by side, each with two Criterion
 * workers, on two CPUs under AddressSanitizer: a wait of tens of ms is
 * common, and a 4.2 ms timer there sent packets again and broke the
 * exact counts). WIRE_TIMEOUT_LOSS, 16 (268 ms), is for a test whose
 * lost packet only the timer brings back: short enough for nine rounds
 * inside poll_wire()'s deadline, long enough that a wait of the process
 * is not taken for a loss. */
#define WIRE_TIMEOUT 20
#define WIRE_TIMEOUT_LOSS 16
static uint8_t wire_timeout = WIRE_TIMEOUT;

/* RESET -> RTS of e's RC or UC QP towards the QP peer_qpn at peer_gid,
 * from GID 1 (the IPv4 one): path MTU 1024, the PSNs 0x100 (A's sends)
 * and 0x200, timeout wire_timeout, the retries given. */
static void
wire_connect(struct qt_end *e, const uint8_t peer_gid[16], uint32_t peer_qpn,
	     uint32_t sq_psn, uint32_t rq_psn, uint8_t rnr_retry)
{
	struct qpio_qp_attr a;
	int uc = e->qp->qp_type == QPIO_QPT_UC;

	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = QPIO_ACCESS_LOCAL_WRITE | QPIO_ACCESS_REMOTE_WRITE |
		(uc ? 0 : QPIO_ACCESS_REMOTE_READ | QPIO_ACCESS_REMOTE_ATOMIC);
	cr_assert_eq(qpio_qp_modify(e->qp, &a, QPIO_QP_STATE |
				    QPIO_QP_PKEY_INDEX | QPIO_QP_PORT |
				    QPIO_QP_ACCESS_FLAGS), 0);
	a.qp_state = QPIO_QPS_RTR;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 64;
	memcpy(a.ah_attr.grh.dgid.raw, peer_gid, 16);
	a.path_mtu = QPIO_MTU_1024;
	a.dest_qp_num = peer_qpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	cr_assert_eq(qpio_qp_modify(e->qp, &a, QPIO_QP_STATE | QPIO_QP_AV |
				    QPIO_QP_PATH_MTU | QPIO_QP_DEST_QPN |
				    QPIO_QP_RQ_PSN |
				    (uc ? 0 : QPIO_QP_MAX_DEST_RD_ATOMIC |
				     QPIO_QP_MIN_RNR_TIMER)), 0);
	a.qp_state = QPIO_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = wire_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = 4;
	cr_assert_eq(qpio_qp_modify(e->qp, &a, QPIO_QP_STATE | QPIO_QP_SQ_PSN |
				    (uc ? 0 : QPIO_QP_TIMEOUT |
				     QPIO_QP_RETRY_CNT | QPIO_QP_RNR_RETRY |
				     QPIO_QP_MAX_QP_RD_ATOMIC)), 0);
}

/* Devargs rc_world() adds to both devices' (",ack_hold=0"). */
static const char *rc_world_args = "";

/* Two RC (or UC) ends over the wire, A (10.0.0.1) to B (10.0.0.2), each
 * knowing the other's MAC (net_ring's: zero). */
static void
rc_world(struct qt_end *a, struct qt_end *b, enum qpio_qp_type type,
	 uint8_t rnr_retry)
{
	struct qt_pair_opts o = { .type = type, .max_send_wr = 64,
				  .max_recv_wr = 64, .max_inline = 64 };
	uint8_t ga[16], gb[16];
	char da[128], db[128];

	snprintf(da, sizeof(da), ",ip=10.0.0.1,neigh=10.0.0.2@00:00:00:00:00:00%s",
		 rc_world_args);
	snprintf(db, sizeof(db), ",ip=10.0.0.2,neigh=10.0.0.1@00:00:00:00:00:00%s",
		 rc_world_args);
	pair_up(da, db);
	qt_end_create(a, W.a, &o);
	qt_end_create(b, W.b, &o);
	soft_wire_ipv4_mapped(ga, V4_A);
	soft_wire_ipv4_mapped(gb, V4_B);
	wire_connect(a, gb, qpio_qp_num(b->qp), 0x100, 0x200, rnr_retry);
	wire_connect(b, ga, qpio_qp_num(a->qp), 0x200, 0x100, rnr_retry);
}

static void
rc_world_down(struct qt_end *a, struct qt_end *b)
{
	qt_end_destroy(a);
	qt_end_destroy(b);
	pair_down();
}

/* Post one WR of opcode on e over [off, off + len) of its buffer. */
static void
rc_post(struct qt_end *e, enum qpio_wr_opcode op, uint32_t off, uint32_t len,
	uint64_t raddr, uint32_t rkey, uint64_t wr_id)
{
	struct qpio_sge sge = { (uintptr_t)e->buf + off, len, qpio_mr_lkey(e->mr) };
	struct qpio_send_wr wr = qt_send_wr(wr_id, &sge, 1, QPIO_SEND_SIGNALED);
	int err = 1;

	wr.opcode = op;
	wr.imm_data = 0x12345678;
	if (op == QPIO_WR_ATOMIC_CMP_AND_SWP || op == QPIO_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = op == QPIO_WR_ATOMIC_CMP_AND_SWP ?
			0x1111111111111111ull : 5;
		wr.wr.atomic.swap = 0x2222222222222222ull;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	cr_assert_eq(qpio_qp_post_send(e->qp, &wr, 1, &err), 1, "post: %d", err);
}

/* One completion on e's CQ: status, wr_id, opcode, byte_len. */
static struct qpio_wc
wc_one(struct qt_end *e, enum qpio_wc_status st, uint64_t wr_id)
{
	struct qpio_wc wc;

	cr_assert_eq(poll_wire(e->cq, &wc, 1), 1, "wr_id %lu: no completion",
		     (unsigned long)wr_id);
	cr_assert_eq(wc.status, st, "wr_id %lu: %s", (unsigned long)wr_id,
		     qpio_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, wr_id);
	return wc;
}

/* A's WRITE_WITH_IMM a_id of len bytes (qt_fill seed) completed, and B's
 * receive b_id with it; the bytes at B's offset off. */
static void
write_imm_landed(struct qt_end *a, struct qt_end *b, uint64_t a_id,
		 uint64_t b_id, uint32_t off, uint32_t len, uint32_t seed)
{
	struct qpio_wc wc;

	wc_one(a, QPIO_WC_SUCCESS, a_id);
	wc = wc_one(b, QPIO_WC_SUCCESS, b_id);
	cr_assert_eq(wc.opcode, QPIO_WC_RECV_RDMA_WITH_IMM);
	cr_assert_eq(wc.byte_len, len);
	cr_assert_eq(wc.imm_data, 0x12345678);
	cr_assert(qt_check(b->buf + off, len, seed));
}

Test(soft_wire, rc_send_write_read_atomics_segmented)
{
	struct qt_end a, b;
	struct qpio_wc wc;
	struct qpio_soft_wire_stats sa, sb;
	uint64_t word;
	uint32_t rkey;

	rc_world(&a, &b, QPIO_QPT_RC, 7);
	rkey = qpio_mr_rkey(b.mr);
	qt_fill(a.buf, 3000, 1);
	qt_post_recv(&b, 1, b.buf, 4000);
	/* SEND of 3000 bytes: FIRST, MIDDLE, LAST at path MTU 1024 */
	rc_post(&a, QPIO_WR_SEND, 0, 3000, 0, 0, 10);
	wc = wc_one(&a, QPIO_WC_SUCCESS, 10);
	cr_assert_eq(wc.opcode, QPIO_WC_SEND);
	wc = wc_one(&b, QPIO_WC_SUCCESS, 1);
	cr_assert_eq(wc.opcode, QPIO_WC_RECV);
	cr_assert_eq(wc.byte_len, 3000);
	cr_assert_eq(wc.src_qp, qpio_qp_num(a.qp));
	cr_assert(qt_check(b.buf, 3000, 1));

	/* WRITE_WITH_IMM of 2500 bytes at B's offset 8192 */
	qt_fill(a.buf + 4096, 2500, 2);
	qt_post_recv(&b, 2, b.buf + 65536, 16);
	rc_post(&a, QPIO_WR_RDMA_WRITE_WITH_IMM, 4096, 2500,
		(uintptr_t)b.buf + 8192, rkey, 11);
	write_imm_landed(&a, &b, 11, 2, 8192, 2500, 2);

	/* READ of 5000 bytes from B's offset 16384: five responses */
	qt_fill(b.buf + 16384, 5000, 3);
	memset(a.buf + 16384, 0, 5000);
	rc_post(&a, QPIO_WR_RDMA_READ, 16384, 5000, (uintptr_t)b.buf + 16384,
		rkey, 12);
	wc = wc_one(&a, QPIO_WC_SUCCESS, 12);
	cr_assert_eq(wc.opcode, QPIO_WC_RDMA_READ);
	cr_assert_eq(wc.byte_len, 5000);
	cr_assert(qt_check(a.buf + 16384, 5000, 3));

	/* CMP_AND_SWP that matches, then FETCH_AND_ADD */
	word = 0x1111111111111111ull;
	memcpy(b.buf + 32768, &word, 8);
	rc_post(&a, QPIO_WR_ATOMIC_CMP_AND_SWP, 32768, 8,
		(uintptr_t)b.buf + 32768, rkey, 13);
	wc = wc_one(&a, QPIO_WC_SUCCESS, 13);
	cr_assert_eq(wc.opcode, QPIO_WC_COMP_SWAP);
	memcpy(&word, a.buf + 32768, 8);
	cr_assert_eq(word, 0x1111111111111111ull, "the original value");
	memcpy(&word, b.buf + 32768, 8);
	cr_assert_eq(word, 0x2222222222222222ull, "swapped");
	rc_post(&a, QPIO_WR_ATOMIC_FETCH_AND_ADD, 32776, 8,
		(uintptr_t)b.buf + 32768, rkey, 14);
	wc_one(&a, QPIO_WC_SUCCESS, 14);
	memcpy(&word, a.buf + 32776, 8);
	cr_assert_eq(word, 0x2222222222222222ull);
	memcpy(&word, b.buf + 32768, 8);
	cr_assert_eq(word, 0x2222222222222227ull);

	/* a zero-length SEND */
	qt_post_recv(&b, 3, b.buf, 64);
	rc_post(&a, QPIO_WR_SEND, 0, 0, 0, 0, 15);
	wc_one(&a, QPIO_WC_SUCCESS, 15);
	wc = wc_one(&b, QPIO_WC_SUCCESS, 3);
	cr_assert_eq(wc.byte_len, 0);

	/* A sent 3 + 3 + 1 + 1 + 1 + 1 packets, B answered with 1 ACK,
	 * 1 ACK, 5 READ responses, 2 ATOMIC ACKs and 1 ACK; nothing again */
	sa = wst(W.a);
	sb = wst(W.b);
	cr_assert_eq(sa.tx_packets, 10);
	cr_assert_eq(sb.rx_packets, 10);
	cr_assert_eq(sb.tx_packets, 10);
	cr_assert_eq(sa.rx_packets, 10);
	cr_assert_eq(qt_stats(a.qp).transport_retries, 0);
	cr_assert_eq(W.psn[0], 0x100, "A's first PSN is its sq_psn");
	rc_world_down(&a, &b);
}

/* An RC end r on d (whose ip= is 10.0.0.1) connected to itself at that
 * address, PSNs 0x100: its receive wr_id 1 of 4000 bytes at offset roff
 * posted, then its SEND wr_id 10 of 3000 bytes (qt_fill seed) from offset
 * 0: three packets at path MTU 1024. */
static void
self_send(struct qt_end *r, struct qpio_device *d, uint32_t roff,
	  uint32_t seed)
{
	struct qt_pair_opts o = { .type = QPIO_QPT_RC, .max_send_wr = 64,
				  .max_recv_wr = 64, .max_inline = 64 };
	uint8_t ga[16];

	qt_end_create(r, d, &o);
	soft_wire_ipv4_mapped(ga, V4_A);
	wire_connect(r, ga, qpio_qp_num(r->qp), 0x100, 0x100, 7);
	qt_fill(r->buf, 3000, seed);
	qt_post_recv(r, 1, r->buf + roff, 4000);
	rc_post(r, QPIO_WR_SEND, 0, 3000, 0, 0, 10);
}

/* Packets to an address of the device's own loop back inside it, as rxe
 * and RoCE NICs loop them, and never leave by the port: a UD datagram
 * from one QP of A to another at A's IPv6 address (asked of no one), and
 * an RC QP of A connected to itself at A's IPv4 address: a
 * SEND of three packets, a READ of five responses, a FETCH_AND_ADD, all
 * exact. Every packet is counted sent, looped and received by A; no
 * frame crosses the ring, no ARP or NDP is sent, B sees nothing. */
Test(soft_wire, loopback_to_an_address_of_its_own)
{
	struct qt_end u1, u2, r;
	struct qpio_soft_wire_stats sa, sb;
	struct qpio_wc wc[2];
	struct qpio_ah *ah;
	union qpio_gid g0;
	uint64_t word;
	unsigned int i;

	pair_up(",ip=10.0.0.1,ip6=fd00::1", ",ip=10.0.0.2,ip6=fd00::2");
	cr_assert_eq(qpio_rdma_gid_query(W.a, 1, 2, &g0), 0);
	cr_assert_eq(g0.raw[0], 0xfd);

	/* UD to A's own IPv6 GID: 40 bytes of GRH (IPv6) */
	qt_ud_end_create(&u1, W.a, QK, NULL);
	qt_ud_end_create(&u2, W.a, QK, NULL);
	qt_fill(u1.buf, 300, 5);
	memset(u2.buf, 0xee, 512);
	qt_post_recv(&u2, 7, u2.buf, 40 + 300);
	ah = ah_to(&u1, g0.raw, 2);
	ud_post_send(&u1, ah, qpio_qp_num(u2.qp), QK, 0, 300, 1, 1);
	expect_send_done(&u1, 1);
	cr_assert_eq(poll_wire(u2.cq, wc, 1), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS, "%s",
		     qpio_wc_status_str(wc[0].status));
	cr_assert_eq(wc[0].wr_id, 7);
	cr_assert_eq(wc[0].byte_len, 340);
	cr_assert_eq(wc[0].src_qp, qpio_qp_num(u1.qp));
	cr_assert(wc[0].wc_flags & QPIO_WC_GRH);
	cr_assert_eq(wc[0].imm_data, 0x0badcafe);
	cr_assert_eq(u2.buf[0] >> 4, 6, "an IPv6 header in the GRH space");
	cr_assert_eq(memcmp(u2.buf + 8, g0.raw, 16), 0, "from A's GID 2");
	cr_assert_eq(memcmp(u2.buf + 24, g0.raw, 16), 0, "to A's GID 2");
	cr_assert(qt_check(u2.buf + 40, 300, 5));
	cr_assert_eq(u2.buf[340], 0xee, "nothing past the message");
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	sa = wst(W.a);
	cr_assert_eq(sa.tx_loopback, 1);
	cr_assert_eq(sa.tx_packets, 1);
	cr_assert_eq(sa.rx_packets, 1);
	cr_assert_eq(sa.rx_bytes, sa.tx_bytes);

	/* RC connected to itself at A's IPv4 address */
	self_send(&r, W.a, 65536, 1);
	cr_assert_eq(poll_wire(r.cq, wc, 2), 2);
	/* the receive first: the ACK that completes the SEND follows it */
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS, "%s",
		     qpio_wc_status_str(wc[0].status));
	cr_assert_eq(wc[0].opcode, QPIO_WC_RECV);
	cr_assert_eq(wc[0].wr_id, 1);
	cr_assert_eq(wc[0].byte_len, 3000);
	cr_assert_eq(wc[0].src_qp, qpio_qp_num(r.qp));
	cr_assert(qt_check(r.buf + 65536, 3000, 1));
	cr_assert_eq(wc[1].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[1].opcode, QPIO_WC_SEND);
	cr_assert_eq(wc[1].wr_id, 10);
	/* READ of 5000 bytes of its own buffer: five responses */
	qt_fill(r.buf + 16384, 5000, 3);
	memset(r.buf + 32768, 0, 5000);
	rc_post(&r, QPIO_WR_RDMA_READ, 32768, 5000, (uintptr_t)r.buf + 16384,
		qpio_mr_rkey(r.mr), 11);
	wc[0] = wc_one(&r, QPIO_WC_SUCCESS, 11);
	cr_assert_eq(wc[0].opcode, QPIO_WC_RDMA_READ);
	cr_assert_eq(wc[0].byte_len, 5000);
	cr_assert(qt_check(r.buf + 32768, 5000, 3));
	/* FETCH_AND_ADD of 5 on a word of its own */
	word = 40;
	memcpy(r.buf + 49152, &word, 8);
	rc_post(&r, QPIO_WR_ATOMIC_FETCH_AND_ADD, 49160, 8,
		(uintptr_t)r.buf + 49152, qpio_mr_rkey(r.mr), 12);
	wc[0] = wc_one(&r, QPIO_WC_SUCCESS, 12);
	cr_assert_eq(wc[0].opcode, QPIO_WC_FETCH_ADD);
	memcpy(&word, r.buf + 49160, 8);
	cr_assert_eq(word, 40, "the original value");
	memcpy(&word, r.buf + 49152, 8);
	cr_assert_eq(word, 45);
	cr_assert_eq(qt_stats(r.qp).transport_retries, 0);

	/* 1 datagram; 3 SEND packets and 1 ACK, 1 READ request and 5
	 * responses, 1 FETCH_AND_ADD and its ATOMIC ACK: 13, all looped */
	sa = wst(W.a);
	sb = wst(W.b);
	cr_assert_eq(sa.tx_loopback, 13);
	cr_assert_eq(sa.tx_packets, 13);
	cr_assert_eq(sa.rx_packets, 13);
	cr_assert_eq(sa.rx_bytes, sa.tx_bytes);
	cr_assert_eq(sa.arp_tx + sa.nd_tx + sa.tx_dropped + sa.tx_no_neigh, 0);
	cr_assert_eq(sa.rx_bad_icrc + sa.rx_no_qp + sa.rx_not_mine, 0);
	cr_assert_eq(W.moved, 0, "a frame crossed the ring");
	for (i = 0; i < sizeof(sb) / sizeof(uint64_t); i++)
		cr_assert_eq(((const uint64_t *)&sb)[i], 0, "B's counter %u", i);
	qt_end_destroy(&r);
	qt_end_destroy(&u1);
	qt_end_destroy(&u2);
	pair_down();
}

Test(soft_wire, rc_lost_packets_and_acks_sent_again)
{
	struct qt_end a, b;
	struct qpio_wc wc;

	wire_timeout = WIRE_TIMEOUT_LOSS;
	rc_world(&a, &b, QPIO_QPT_RC, 7);
	wire_timeout = WIRE_TIMEOUT;
	/* the MIDDLE of the first SEND lost: B NAKs the sequence, A sends
	 * the message again, B takes the rest of it */
	W.drop_ab = 1u << 1;
	qt_fill(a.buf, 3000, 4);
	qt_post_recv(&b, 1, b.buf, 3000);
	rc_post(&a, QPIO_WR_SEND, 0, 3000, 0, 0, 10);
	wc_one(&a, QPIO_WC_SUCCESS, 10);
	wc = wc_one(&b, QPIO_WC_SUCCESS, 1);
	cr_assert_eq(wc.byte_len, 3000);
	cr_assert(qt_check(b.buf, 3000, 4));
	cr_assert_eq(W.dropped, 1);
	cr_assert_eq(qt_stats(a.qp).transport_retries, 1);

	/* the ACK of the next SEND lost: A times out (268 ms), sends it
	 * again, B ACKs the duplicate and delivers it once */
	W.drop_ba = 1ull << W.n_ba;
	qt_fill(a.buf, 100, 5);
	qt_post_recv(&b, 2, b.buf, 3000);
	qt_post_recv(&b, 3, b.buf + 4096, 3000);
	rc_post(&a, QPIO_WR_SEND, 0, 100, 0, 0, 11);
	wc_one(&a, QPIO_WC_SUCCESS, 11);
	wc = wc_one(&b, QPIO_WC_SUCCESS, 2);
	cr_assert_eq(wc.byte_len, 100);
	cr_assert_eq(W.dropped, 2);
	cr_assert_eq(qt_stats(a.qp).transport_retries, 2);
	run_for(5);
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0, "delivered once");

	/* the LAST of a WRITE lost: the timer, not a NAK, brings it */
	W.drop_ab = 1ull << (W.n_ab + 2);
	qt_fill(a.buf, 2100, 6);
	rc_post(&a, QPIO_WR_RDMA_WRITE, 0, 2100, (uintptr_t)b.buf + 65536,
		qpio_mr_rkey(b.mr), 12);
	wc_one(&a, QPIO_WC_SUCCESS, 12);
	cr_assert(qt_check(b.buf + 65536, 2100, 6));
	cr_assert_eq(W.dropped, 3);
	cr_assert_eq(qt_stats(a.qp).transport_retries, 3);
	rc_world_down(&a, &b);
}

/* Four READs of 2048 bytes (two responses each) in flight, every
 * response but the first lost (none comes past a gap to show it): at the
 * timeout A asks for the rest of the first READ alone (its READ window
 * falls to 1), sends the next two once it is answered (2), the last
 * after (4 = max_rd_atomic): the answers of max_rd_atomic READs at once
 * can overrun a receive ring, and sent again all at once they would be
 * lost again every time. Every READ completes, in order, bytes right,
 * after one timeout. */
Test(soft_wire, rc_read_window_after_a_timeout)
{
	struct qt_end a, b;
	struct qpio_wc wc;
	unsigned int i;
	uint32_t rkey;

	wire_timeout = WIRE_TIMEOUT_LOSS;
	rc_world(&a, &b, QPIO_QPT_RC, 7);
	wire_timeout = WIRE_TIMEOUT;
	rkey = qpio_mr_rkey(b.mr);
	W.drop_ba = 0xfe;
	for (i = 0; i < 4; i++) {
		qt_fill(b.buf + 8192 * i, 2048, 20 + i);
		memset(a.buf + 8192 * i, 0, 2048);
		rc_post(&a, QPIO_WR_RDMA_READ, 8192 * i, 2048,
			(uintptr_t)b.buf + 8192 * i, rkey, 30 + i);
	}
	for (i = 0; i < 4; i++) {
		wc = wc_one(&a, QPIO_WC_SUCCESS, 30 + i);
		cr_assert_eq(wc.opcode, QPIO_WC_RDMA_READ);
		cr_assert_eq(wc.byte_len, 2048);
		cr_assert(qt_check(a.buf + 8192 * i, 2048, 20 + i), "READ %u", i);
	}
	cr_assert_eq(W.dropped, 7);
	cr_assert_eq(qt_stats(a.qp).transport_retries, 1);
	/* A->B: the four READs, then the rest of READ 0 alone, then 1 and
	 * 2 together, then 3; B->A: 8 responses, 1, 4, 2 */
	cr_assert_eq(W.n_ab, 8);
	cr_assert_eq(W.n_ba, 8 + 1 + 4 + 2);
	cr_assert_eq(W.pump_ab[1], W.pump_ab[0]);
	cr_assert_eq(W.pump_ab[3], W.pump_ab[0]);
	cr_assert_gt(W.pump_ab[4], W.pump_ab[3]);
	cr_assert_gt(W.pump_ab[5], W.pump_ab[4], "READ 1 waits for READ 0");
	cr_assert_eq(W.pump_ab[6], W.pump_ab[5], "then READs 1 and 2");
	cr_assert_gt(W.pump_ab[7], W.pump_ab[6], "READ 3 waits for READ 1");
	rc_world_down(&a, &b);
}

/* One READ of 10 packets whose responses each time come but for the
 * first (the rest lost, so only the timer tells): ten rounds, nine
 * timeouts, more than retry_cnt (7), yet every round brought a packet in
 * order: progress, so the READ completes, every byte right (before, the
 * eighth timeout failed it with RETRY_EXC_ERR). B->A frames of round r
 * start at
 * 10 + 9 + ... : 0, 10, 19, 27, 34, 40, 45, 49, 52, 54. */
Test(soft_wire, rc_read_progress_between_timeouts_is_no_retry)
{
	static const unsigned int kept[] = { 0, 10, 19, 27, 34, 40, 45, 49,
					     52, 54 };
	struct qt_end a, b;
	struct qpio_wc wc;
	unsigned int i;

	wire_timeout = WIRE_TIMEOUT_LOSS;
	rc_world(&a, &b, QPIO_QPT_RC, 7);
	wire_timeout = WIRE_TIMEOUT;
	W.drop_ba = (1ull << 55) - 1;
	for (i = 0; i < RTE_DIM(kept); i++)
		W.drop_ba &= ~(1ull << kept[i]);
	qt_fill(b.buf, 10240, 77);
	memset(a.buf, 0, 10240);
	rc_post(&a, QPIO_WR_RDMA_READ, 0, 10240, (uintptr_t)b.buf,
		qpio_mr_rkey(b.mr), 5);
	wc = wc_one(&a, QPIO_WC_SUCCESS, 5);
	cr_assert_eq(wc.opcode, QPIO_WC_RDMA_READ);
	cr_assert_eq(wc.byte_len, 10240);
	cr_assert(qt_check(a.buf, 10240, 77));
	cr_assert_eq(W.dropped, 45);
	cr_assert_eq(W.n_ba, 55);
	cr_assert_eq(W.n_ab, 10);         /* the READ and its nine resumes */
	cr_assert_eq(qt_stats(a.qp).transport_retries, 9);
	cr_assert_eq(qt_stats(a.qp).retry_exceeded, 0);
	rc_world_down(&a, &b);
}

/* Five WRITEs of 32 packets, A->B frame 5 lost: the first four (128
 * PSNs, RC_PSN_WINDOW) go at once, not the fifth; B NAKs PSN 5 once, A
 * sends again from that PSN (27 packets of the first WRITE, not 32) and
 * the next three, the fifth once the first is answered: 128 + 123 + 32
 * frames. Then the same without loss: 160. Every byte right. */
Test(soft_wire, rc_psn_window_and_resend_from_the_nak)
{
	struct qt_end a, b;
	unsigned int i, round, first = 0;
	uint32_t rkey;

	rc_world(&a, &b, QPIO_QPT_RC, 7);   /* 4.3 s: only the NAK sends again */
	rkey = qpio_mr_rkey(b.mr);
	W.drop_ab = 1ull << 5;
	for (round = 0; round < 2; round++) {
		for (i = 0; i < 5; i++) {
			qt_fill(a.buf + 32768 * i, 32768, 40 + 10 * round + i);
			rc_post(&a, QPIO_WR_RDMA_WRITE, 32768 * i, 32768,
				(uintptr_t)b.buf + 32768 * i, rkey, 50 + i);
		}
		/* on the way: the first four, not the fifth */
		cr_assert_eq(rte_ring_count(W.a_tx), 128, "round %u", round);
		for (i = 0; i < 5; i++)
			wc_one(&a, QPIO_WC_SUCCESS, 50 + i);
		for (i = 0; i < 5; i++)
			cr_assert(qt_check(b.buf + 32768 * i, 32768,
					   40 + 10 * round + i), "WRITE %u", i);
		if (round == 0)
			first = W.n_ab;
	}
	cr_assert_eq(W.dropped, 1);
	cr_assert_eq(first, 128 + 123 + 32, "round 0: %u", first);
	cr_assert_eq(W.n_ab - first, 160, "round 1: %u", W.n_ab - first);
	cr_assert_eq(qt_stats(a.qp).transport_retries, 1);
	rc_world_down(&a, &b);
}

/* Two unsignaled WRITEs: the device finishes both when B's ACK comes,
 * and sq_executed counts them while no CQE is there to poll and the
 * slots are not yet released (sq_completed), as an application with CQ
 * moderation sees its requester progress. */
Test(soft_wire, rc_unsignaled_writes_counted_as_executed)
{
	struct qt_end a, b;
	struct qpio_sge sge = { 0, 4096, 0 };
	struct qpio_send_wr wr;
	struct qpio_soft_qp_stats st;
	struct qpio_wc wc;
	unsigned int i;
	int err = 1;

	rc_world(&a, &b, QPIO_QPT_RC, 7);
	st = qt_stats(a.qp);
	cr_assert_eq(st.sq_executed, 0);
	sge.lkey = qpio_mr_lkey(a.mr);
	for (i = 0; i < 2; i++) {
		qt_fill(a.buf + 4096 * i, 4096, 80 + i);
		sge.addr = (uintptr_t)a.buf + 4096 * i;
		wr = qt_send_wr(90 + i, &sge, 1, 0);
		wr.opcode = QPIO_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = (uintptr_t)b.buf + 4096 * i;
		wr.wr.rdma.rkey = qpio_mr_rkey(b.mr);
		cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1, "%d", err);
	}
	cr_assert_eq(qt_stats(a.qp).sq_executed, 0, "nothing answered yet");
	run_for(50);
	st = qt_stats(a.qp);
	cr_assert_eq(st.sq_executed, 2);
	cr_assert_eq(st.sq_posted, 2);
	cr_assert_eq(st.sq_completed, 0, "no CQE polled: no slot released");
	cr_assert_eq(qpio_cq_poll(a.cq, &wc, 1), 0);
	for (i = 0; i < 2; i++)
		cr_assert(qt_check(b.buf + 4096 * i, 4096, 80 + i), "WRITE %u", i);
	rc_world_down(&a, &b);
}

/* A's READ of 8 responses (8192 bytes, path MTU 1024) from B with
 * response lost (from 0) lost, A's ACK timeout timeout: it completes,
 * every byte right, after the READ and one READ of the rest (n_ab 2),
 * with one retry. */
static void
read8_one_lost(struct qt_end *a, struct qt_end *b, unsigned int lost,
	       uint8_t timeout, uint32_t seed)
{
	struct qpio_wc wc;

	wire_timeout = timeout;
	rc_world(a, b, QPIO_QPT_RC, 7);
	wire_timeout = WIRE_TIMEOUT;
	W.drop_ba = 1u << lost;
	qt_fill(b->buf + 16384, 8192, seed);
	memset(a->buf + 16384, 0, 8192);
	rc_post(a, QPIO_WR_RDMA_READ, 16384, 8192, (uintptr_t)b->buf + 16384,
		qpio_mr_rkey(b->mr), seed);
	wc = wc_one(a, QPIO_WC_SUCCESS, seed);
	cr_assert_eq(wc.byte_len, 8192);
	cr_assert(qt_check(a->buf + 16384, 8192, seed));
	cr_assert_eq(W.dropped, 1);
	cr_assert_eq(W.n_ab, 2, "the READ, then the READ of the rest");
	cr_assert_eq(W.n_ba, 8 + (8 - lost), "8 responses, then the missing");
	cr_assert_eq(W.psn[0], 0x100, "the READ at its PSN");
	cr_assert_eq(qt_stats(a->qp).transport_retries, 1);
}

/* A READ of 8 packets whose 4th response is lost: the 5th, past the one
 * awaited, is an implied NAK, and A asks for the rest at once (a READ
 * request at the PSN of the missing response, its address and length
 * moved on by the 3 placed), once, not again for the 6th to 8th; B
 * answers with 5 responses. The ACK timer waits for ever (timeout 0):
 * only the gap can have sent it again. */
Test(soft_wire, rc_read_resumed_at_the_missing_response)
{
	struct qt_end a, b;
	unsigned int i;

	read8_one_lost(&a, &b, 3, 0, 61);
	cr_assert_eq(W.nroce, 14);
	/* the READ, responses 0-2 and 4-7, the READ of the rest at the
	 * missing PSN, its responses */
	for (i = 0; i < 7; i++)
		cr_assert_eq(W.psn[1 + i], 0x100 + i + (i >= 3), "frame %u", 1 + i);
	cr_assert_eq(W.psn[8], 0x103, "the READ of the rest at 0x103");
	for (i = 0; i < 5; i++)
		cr_assert_eq(W.psn[9 + i], 0x103 + i, "frame %u", 9 + i);
	rc_world_down(&a, &b);
}

/* The last response of a READ lost: no later one shows the gap, so the
 * ACK timer sends the READ of the rest (one response) again. */
Test(soft_wire, rc_read_last_response_lost_waits_for_the_timer)
{
	struct qt_end a, b;

	read8_one_lost(&a, &b, 7, WIRE_TIMEOUT_LOSS, 62);
	cr_assert_eq(W.psn[8], 0x107, "the READ of the last response");
	cr_assert_eq(W.psn[9], 0x107);
	rc_world_down(&a, &b);
}

/* A FETCH_AND_ADD then a READ; the ATOMIC ACK lost: the READ's response,
 * past the atomic's PSN, is an implied NAK (the ACK timer waits for
 * ever). A sends the atomic again alone (READ window 1), and B answers it
 * from the result it kept (IBA 9.4.5: an atomic runs once), then the
 * READ again: the target added to once, both results right. */
Test(soft_wire, rc_atomic_ack_lost_resent_at_the_next_response)
{
	struct qt_end a, b;
	struct qpio_wc wc;
	uint64_t v = 1000, got;

	wire_timeout = 0;
	rc_world(&a, &b, QPIO_QPT_RC, 7);
	wire_timeout = WIRE_TIMEOUT;
	W.drop_ba = 1u << 0;
	memcpy(b.buf + 4096, &v, 8);
	qt_fill(b.buf + 8192, 1024, 63);
	memset(a.buf, 0, 8);
	memset(a.buf + 8192, 0, 1024);
	rc_post(&a, QPIO_WR_ATOMIC_FETCH_AND_ADD, 0, 8,
		(uintptr_t)b.buf + 4096, qpio_mr_rkey(b.mr), 72);
	rc_post(&a, QPIO_WR_RDMA_READ, 8192, 1024, (uintptr_t)b.buf + 8192,
		qpio_mr_rkey(b.mr), 73);
	wc = wc_one(&a, QPIO_WC_SUCCESS, 72);
	cr_assert_eq(wc.opcode, QPIO_WC_FETCH_ADD);
	wc = wc_one(&a, QPIO_WC_SUCCESS, 73);
	cr_assert_eq(wc.opcode, QPIO_WC_RDMA_READ);
	memcpy(&got, a.buf, 8);
	cr_assert_eq(got, 1000, "the original value, from B's kept result");
	memcpy(&got, b.buf + 4096, 8);
	cr_assert_eq(got, 1005, "added to once");
	cr_assert(qt_check(a.buf + 8192, 1024, 63));
	cr_assert_eq(W.dropped, 1);
	/* the atomic and the READ, the atomic again, the READ again */
	cr_assert_eq(W.n_ab, 4);
	cr_assert_eq(W.n_ba, 4, "ACK lost, READ response, ACK, response");
	cr_assert_eq(qt_stats(a.qp).transport_retries, 1);
	rc_world_down(&a, &b);
}

/* No neighbour given: the path set at RTR asks ARP for the peer's MAC
 * there and then, so the first WRITE (10 packets) goes whole, none of it
 * held or dropped for want of a MAC (it lost 6 of them, and a timeout). */
Test(soft_wire, rc_rtr_asks_arp_before_the_first_burst)
{
	struct qpio_soft_wire_stats sa;
	struct qt_pair_opts o = { .type = QPIO_QPT_RC, .max_send_wr = 64,
				  .max_recv_wr = 64, .max_inline = 64 };
	struct qt_end a, b;
	uint8_t ga[16], gb[16];

	pair_up(",ip=10.0.0.1", ",ip=10.0.0.2");
	qt_end_create(&a, W.a, &o);
	qt_end_create(&b, W.b, &o);
	soft_wire_ipv4_mapped(ga, V4_A);
	soft_wire_ipv4_mapped(gb, V4_B);
	wire_connect(&a, gb, qpio_qp_num(b.qp), 0x100, 0x200, 7);
	wire_connect(&b, ga, qpio_qp_num(a.qp), 0x200, 0x100, 7);
	sa = wst(W.a);
	cr_assert_eq(sa.arp_tx, 1, "asked at RTR");
	run_for(5);
	qt_fill(a.buf, 10240, 71);
	rc_post(&a, QPIO_WR_RDMA_WRITE, 0, 10240, (uintptr_t)b.buf + 65536,
		qpio_mr_rkey(b.mr), 72);
	wc_one(&a, QPIO_WC_SUCCESS, 72);
	cr_assert(qt_check(b.buf + 65536, 10240, 71));
	sa = wst(W.a);
	cr_assert_eq(sa.tx_no_neigh, 0);
	cr_assert_eq(sa.tx_packets, 10);
	cr_assert_eq(qt_stats(a.qp).transport_retries, 0);
	rc_world_down(&a, &b);
}

/* An NS or NA frame to B: hop limit hop, from src about target, with a
 * link-layer option of mac; the checksum spoilt when bad; the IPv6
 * payload length cut to plen. */
static void
nd_inject_b(uint8_t type, uint8_t hop, const uint8_t src[16],
	    const uint8_t target[16], int bad, uint16_t plen)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(W.mp);
	uint8_t *f;
	struct rte_ipv6_hdr *ip;
	uint16_t ck;

	cr_assert_not_null(m);
	f = (uint8_t *)rte_pktmbuf_append(m, 14 + 40 + 32);
	memset(f, 0, 14 + 40 + 32);
	f[6] = 0x02;                     /* a source MAC of the test's */
	f[11] = 0x0a;
	f[12] = 0x86;
	f[13] = 0xdd;
	ip = (struct rte_ipv6_hdr *)(f + 14);
	ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
	ip->payload_len = rte_cpu_to_be_16(32);
	ip->proto = 58;
	ip->hop_limits = hop;
	memcpy(ip->src_addr, src, 16);
	memcpy(ip->dst_addr, target, 16);
	f[54] = type;
	memcpy(f + 62, target, 16);
	f[78] = type == 135 ? 1 : 2;
	f[79] = 1;
	f[80] = 0x02;
	f[85] = 0x0a;
	ck = rte_ipv6_udptcp_cksum(ip, f + 54);
	if (bad)
		ck ^= 0x0101;
	memcpy(f + 56, &ck, 2);
	ip->payload_len = rte_cpu_to_be_16(plen);
	cr_assert_eq(rte_ring_enqueue(W.b_rx, m), 0);
}

/* B's NDP against hostile and foreign frames, each in one counter: a
 * solicitation for its address answered once; hop limit 254, a bad
 * checksum (rx_not_roce), a length past the frame (rx_truncated), one
 * for another address and one from :: (taken, not answered). */
Test(soft_wire, ndp_rules_and_counters)
{
	uint8_t a6[16] = { 0xfd, [15] = 1 }, b6[16] = { 0xfd, [15] = 2 };
	uint8_t other[16] = { 0xfd, [15] = 9 }, unspec[16] = { 0 };
	struct qpio_soft_wire_stats sb;

	pair_up(",ip6=fd00::1", ",ip6=fd00::2");
	nd_inject_b(135, 255, a6, b6, 0, 32);          /* answered */
	nd_inject_b(135, 254, a6, b6, 0, 32);          /* RFC 4861 7.1.1 */
	nd_inject_b(135, 255, a6, b6, 1, 32);          /* checksum */
	nd_inject_b(135, 255, a6, b6, 0, 200);         /* past the frame */
	nd_inject_b(135, 255, a6, other, 0, 32);       /* not B's */
	nd_inject_b(135, 255, unspec, b6, 0, 32);      /* DAD */
	run_for(5);
	sb = wst(W.b);
	cr_assert_eq(sb.nd_rx, 3);
	cr_assert_eq(sb.nd_tx, 1);
	cr_assert_eq(sb.rx_not_roce, 2);
	cr_assert_eq(sb.rx_truncated, 1);
	cr_assert_eq(sb.rx_packets + sb.arp_rx + sb.rx_bad_ip, 0);
	/* the answer reached A: an NA, taken */
	cr_assert_eq(wst(W.a).nd_rx, 1);
	pair_down();
}

Test(soft_wire, rc_rnr_waits_then_fails_when_spent)
{
	struct qt_end a, b;
	struct qpio_wc wc;

	/* rnr_retry 7: the SEND waits (RNR NAKs) until B posts */
	rc_world(&a, &b, QPIO_QPT_RC, 7);
	qt_fill(a.buf, 500, 7);
	rc_post(&a, QPIO_WR_SEND, 0, 500, 0, 0, 10);
	run_until_rnr_naks(&a, 1);
	cr_assert_eq(qpio_cq_poll(a.cq, &wc, 1), 0, "waiting");
	qt_post_recv(&b, 1, b.buf, 500);
	wc_one(&a, QPIO_WC_SUCCESS, 10);
	wc = wc_one(&b, QPIO_WC_SUCCESS, 1);
	cr_assert_eq(wc.byte_len, 500);
	cr_assert(qt_check(b.buf, 500, 7));
	rc_world_down(&a, &b);

	/* rnr_retry 0: one RNR NAK, RNR_RETRY_EXC_ERR, the rest flushed */
	rc_world(&a, &b, QPIO_QPT_RC, 0);
	rc_post(&a, QPIO_WR_SEND, 0, 500, 0, 0, 20);
	rc_post(&a, QPIO_WR_SEND, 0, 500, 0, 0, 21);
	wc_one(&a, QPIO_WC_RNR_RETRY_EXC_ERR, 20);
	wc_one(&a, QPIO_WC_WR_FLUSH_ERR, 21);
	cr_assert_eq(qt_stats(a.qp).rnr_naks, 1);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
	rc_world_down(&a, &b);
}

/* Two SENDs, no receive: the first gets an RNR NAK, the second the
 * sequence NAK that follows it; the requester waits for the RNR timer
 * (B's min_rnr_timer 31: 491.52 ms) before it sends again, so the 50 ms
 * after the first RNR NAK see no other, not a round per NAK. Both land
 * once B posts. */
Test(soft_wire, rc_rnr_wait_not_cut_short_by_a_sequence_nak)
{
	struct qpio_qp_attr attr = { .min_rnr_timer = 31 };
	struct qt_end a, b;
	struct qpio_wc wc;

	rc_world(&a, &b, QPIO_QPT_RC, 7);
	cr_assert_eq(qpio_qp_modify(b.qp, &attr, QPIO_QP_MIN_RNR_TIMER), 0);
	qt_fill(a.buf, 200, 3);
	rc_post(&a, QPIO_WR_SEND, 0, 100, 0, 0, 10);
	rc_post(&a, QPIO_WR_SEND, 100, 100, 0, 0, 11);
	run_until_rnr_naks(&a, 1);
	run_for(50);
	cr_assert_eq(qt_stats(a.qp).rnr_naks, 1);
	cr_assert_eq(qpio_cq_poll(a.cq, &wc, 1), 0, "waiting");
	qt_post_recv(&b, 1, b.buf, 100);
	qt_post_recv(&b, 2, b.buf + 100, 100);
	wc_one(&a, QPIO_WC_SUCCESS, 10);
	wc_one(&a, QPIO_WC_SUCCESS, 11);
	cr_assert_eq(wc_one(&b, QPIO_WC_SUCCESS, 1).byte_len, 100);
	cr_assert_eq(wc_one(&b, QPIO_WC_SUCCESS, 2).byte_len, 100);
	cr_assert(qt_check(b.buf, 200, 3));
	cr_assert_eq(qt_stats(a.qp).rnr_naks, 1);
	rc_world_down(&a, &b);
}

/* A WRITE with immediate of several packets finds no receive at its
 * last packet: an RNR NAK of that packet, and the requester sends it
 * (only it) again after the timer, each time; it lands once B posts a
 * receive: A sent the 3 packets and one more per RNR NAK. */
Test(soft_wire, rc_write_imm_rnr_at_its_last_packet_sent_again_whole)
{
	struct qt_end a, b;
	struct qpio_wc wc;

	rc_world(&a, &b, QPIO_QPT_RC, 7);
	qt_fill(a.buf, 2500, 17);
	rc_post(&a, QPIO_WR_RDMA_WRITE_WITH_IMM, 0, 2500,
		(uintptr_t)b.buf + 8192, qpio_mr_rkey(b.mr), 10);
	run_until_rnr_naks(&a, 2);       /* waits: RNR NAKs again */
	cr_assert_eq(qpio_cq_poll(a.cq, &wc, 1), 0, "waiting");
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RTS);
	qt_post_recv(&b, 1, b.buf, 16);
	write_imm_landed(&a, &b, 10, 1, 8192, 2500, 17);
	cr_assert_eq(W.n_ab, 3 + qt_stats(a.qp).rnr_naks, "%u packets for "
		     "%lu RNR NAKs", W.n_ab,
		     (unsigned long)qt_stats(a.qp).rnr_naks);
	rc_world_down(&a, &b);
}

Test(soft_wire, rc_remote_errors_nak_and_touch_nothing)
{
	struct qt_end a, b;
	uint8_t before[64];

	rc_world(&a, &b, QPIO_QPT_RC, 7);
	/* a WRITE with an R_Key that is not B's */
	memset(b.buf + 1024, 0x5a, 64);
	memcpy(before, b.buf + 1024, 64);
	qt_fill(a.buf, 64, 8);
	rc_post(&a, QPIO_WR_RDMA_WRITE, 0, 64, (uintptr_t)b.buf + 1024,
		qpio_mr_rkey(b.mr) ^ 0x100, 10);
	rc_post(&a, QPIO_WR_SEND, 0, 8, 0, 0, 11);
	wc_one(&a, QPIO_WC_REM_ACCESS_ERR, 10);
	wc_one(&a, QPIO_WC_WR_FLUSH_ERR, 11);
	cr_assert_eq(memcmp(b.buf + 1024, before, 64), 0, "target unchanged");
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
	run_for(2);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_ERR);
	rc_world_down(&a, &b);

	/* a READ past the end of B's MR */
	rc_world(&a, &b, QPIO_QPT_RC, 7);
	rc_post(&a, QPIO_WR_RDMA_READ, 0, 64,
		(uintptr_t)b.buf + b.buf_len - 32, qpio_mr_rkey(b.mr), 12);
	wc_one(&a, QPIO_WC_REM_ACCESS_ERR, 12);
	/* an atomic at an address not 8-byte aligned */
	rc_world_down(&a, &b);
	rc_world(&a, &b, QPIO_QPT_RC, 7);
	rc_post(&a, QPIO_WR_ATOMIC_FETCH_AND_ADD, 0, 8,
		(uintptr_t)b.buf + 4, qpio_mr_rkey(b.mr), 13);
	wc_one(&a, QPIO_WC_REM_INV_REQ_ERR, 13);
	/* a SEND longer than B's receive: LOC_LEN_ERR there, REM_INV_REQ
	 * here */
	rc_world_down(&a, &b);
	rc_world(&a, &b, QPIO_QPT_RC, 7);
	qt_post_recv(&b, 1, b.buf, 100);
	rc_post(&a, QPIO_WR_SEND, 0, 101, 0, 0, 14);
	wc_one(&a, QPIO_WC_REM_INV_REQ_ERR, 14);
	wc_one(&b, QPIO_WC_LOC_LEN_ERR, 1);
	rc_world_down(&a, &b);
}

/* Two 3000-byte SENDs (three packets at path MTU 1024) into receives of
 * two SGEs: packets inside the first SGE at offset 0 and 1024, a packet
 * across the SGE boundary, and (the second receive) packets that start
 * at the second SGE and inside it. Every byte lands where the scatter
 * list says, none past the message's end. */
Test(soft_wire, rc_send_packets_scattered_over_receive_sges)
{
	struct qpio_sge rx[2];
	struct qpio_recv_wr rwr;
	struct qt_end a, b;
	struct qpio_wc wc;
	int err;

	rc_world(&a, &b, QPIO_QPT_RC, 7);
	memset(b.buf, 0x55, 32768);
	rx[0] = (struct qpio_sge){ (uintptr_t)b.buf, 2500, qpio_mr_lkey(b.mr) };
	rx[1] = (struct qpio_sge){ (uintptr_t)b.buf + 8192, 1000,
				   qpio_mr_lkey(b.mr) };
	rwr = (struct qpio_recv_wr){ .wr_id = 1, .sg_list = rx, .num_sge = 2 };
	cr_assert_eq(qpio_qp_post_recv(b.qp, &rwr, 1, &err), 1);
	rx[0] = (struct qpio_sge){ (uintptr_t)b.buf + 16384, 1024,
				   qpio_mr_lkey(b.mr) };
	rx[1] = (struct qpio_sge){ (uintptr_t)b.buf + 20000, 3000,
				   qpio_mr_lkey(b.mr) };
	rwr.wr_id = 2;
	cr_assert_eq(qpio_qp_post_recv(b.qp, &rwr, 1, &err), 1);
	qt_fill(a.buf, 3000, 31);
	qt_fill(a.buf + 4096, 3000, 32);
	rc_post(&a, QPIO_WR_SEND, 0, 3000, 0, 0, 10);
	rc_post(&a, QPIO_WR_SEND, 4096, 3000, 0, 0, 11);
	wc_one(&a, QPIO_WC_SUCCESS, 10);
	wc_one(&a, QPIO_WC_SUCCESS, 11);
	wc = wc_one(&b, QPIO_WC_SUCCESS, 1);
	cr_assert_eq(wc.byte_len, 3000);
	wc = wc_one(&b, QPIO_WC_SUCCESS, 2);
	cr_assert_eq(wc.byte_len, 3000);
	cr_assert_eq(memcmp(b.buf, a.buf, 2500), 0);
	cr_assert_eq(memcmp(b.buf + 8192, a.buf + 2500, 500), 0);
	cr_assert_eq(b.buf[2500], 0x55);
	cr_assert_eq(b.buf[8192 + 500], 0x55, "scatter stops at the end");
	cr_assert_eq(memcmp(b.buf + 16384, a.buf + 4096, 1024), 0);
	cr_assert_eq(memcmp(b.buf + 20000, a.buf + 4096 + 1024, 1976), 0);
	cr_assert_eq(b.buf[16384 + 1024], 0x55);
	cr_assert_eq(b.buf[20000 + 1976], 0x55, "scatter stops at the end");
	rc_world_down(&a, &b);
}

Test(soft_wire, uc_sends_and_loses_a_message_with_a_gap)
{
	struct qt_end a, b;
	struct qpio_wc wc;

	rc_world(&a, &b, QPIO_QPT_UC, 0);
	qt_post_recv(&b, 1, b.buf, 3000);
	qt_post_recv(&b, 2, b.buf + 4096, 3000);
	/* the MIDDLE of the first message lost: that message is gone, the
	 * receive stays for the next one */
	W.drop_ab = 1u << 1;
	qt_fill(a.buf, 3000, 9);
	rc_post(&a, QPIO_WR_SEND, 0, 3000, 0, 0, 10);
	wc_one(&a, QPIO_WC_SUCCESS, 10);
	qt_fill(a.buf + 4096, 2000, 10);
	rc_post(&a, QPIO_WR_SEND, 4096, 2000, 0, 0, 11);
	wc_one(&a, QPIO_WC_SUCCESS, 11);
	wc = wc_one(&b, QPIO_WC_SUCCESS, 1);
	cr_assert_eq(wc.byte_len, 2000);
	cr_assert(qt_check(b.buf, 2000, 10));
	/* a WRITE on UC */
	qt_fill(a.buf, 1500, 11);
	rc_post(&a, QPIO_WR_RDMA_WRITE, 0, 1500, (uintptr_t)b.buf + 65536,
		qpio_mr_rkey(b.mr), 12);
	wc_one(&a, QPIO_WC_SUCCESS, 12);
	run_for(2);
	cr_assert(qt_check(b.buf + 65536, 1500, 11));
	cr_assert_eq(W.n_ba, 0, "UC has no ACKs");
	rc_world_down(&a, &b);
}

/* h for packets from A to the QP dqpn of B (inject_b()). */
static void
hdr_to_b(struct soft_wire_hdr *h, uint32_t dqpn)
{
	memset(h, 0, sizeof(*h));
	h->dqpn = dqpn;
	h->udp_sport = 0xc000;
	h->hop_limit = 64;
}

/* Put a packet of h with opcode and psn (from A's address to B's) with
 * len bytes of pl into B's receive ring, as if A had sent it. */
static void
inject_b(struct soft_wire_hdr *h, uint8_t opcode, uint32_t psn,
	 const uint8_t *pl, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(W.mp);
	struct soft_wire_seg seg = { pl, len };
	uint32_t flen;

	cr_assert_not_null(m);
	h->opcode = opcode;
	h->psn = psn;
	memset(&h->dmac, 0, sizeof(h->dmac));      /* net_ring's MAC */
	memcpy(h->sip, V4_A, 4);
	memcpy(h->dip, V4_B, 4);
	h->pkey = 0xffff;
	flen = soft_wire_build(rte_pktmbuf_mtod(m, uint8_t *), h, &seg, 1, len);
	cr_assert_not_null(rte_pktmbuf_append(m, (uint16_t)flen));
	cr_assert_eq(rte_ring_enqueue(W.b_rx, m), 0);
}

/* A SEND whose first packets took B's receive, then B to ERR: that
 * receive completes (flushed) with the others; it was lost, never
 * completed (found by fuzz_wire_dev; test/fuzz/corpus/fuzz_wire_dev/
 * regress-rc-send-open-at-err). */
Test(soft_wire, rc_receive_of_an_open_send_flushed_at_err)
{
	struct qt_end a, b;
	struct qpio_qp_attr qa;
	struct qpio_wc wc;

	rc_world(&a, &b, QPIO_QPT_RC, 7);
	qt_post_recv(&b, 1, b.buf, 4000);
	qt_post_recv(&b, 2, b.buf + 4096, 4000);
	/* FIRST and MIDDLE arrive; the LAST and every packet sent again
	 * are lost */
	W.drop_ab = ~3ull;
	qt_fill(a.buf, 3000, 13);
	rc_post(&a, QPIO_WR_SEND, 0, 3000, 0, 0, 10);
	run_for(2);
	cr_assert_eq(W.n_ab - W.dropped, 2);
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0, "the message is open");
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = QPIO_QPS_ERR;
	cr_assert_eq(qpio_qp_modify(b.qp, &qa, QPIO_QP_STATE), 0);
	wc = wc_one(&b, QPIO_WC_WR_FLUSH_ERR, 1);
	cr_assert_eq(wc.qp_num, qpio_qp_num(b.qp));
	wc_one(&b, QPIO_WC_WR_FLUSH_ERR, 2);
	rc_world_down(&a, &b);
}

/* UC: a FIRST at the expected PSN while a SEND is open (its LAST lost
 * with no gap in the PSNs), or a packet of the wrong kind: the open
 * message is lost and its receive kept for the next one (IBA 9.8.2,
 * rxe's reuse of the WQE). The new message took a second receive and
 * the first was never completed (found by fuzz_wire_dev; corpus
 * regress-uc-first-while-open, regress-uc-wrong-kind-while-open). */
Test(soft_wire, uc_open_message_cut_short_keeps_its_receive)
{
	struct qt_end a, b;
	struct soft_wire_hdr h;
	struct qpio_wc wc;
	uint8_t pl[1024], pl2[100], pl3[60];

	rc_world(&a, &b, QPIO_QPT_UC, 0);
	qt_post_recv(&b, 1, b.buf, 3000);
	qt_post_recv(&b, 2, b.buf + 4096, 3000);
	qt_fill(pl, sizeof(pl), 14);
	qt_fill(pl2, sizeof(pl2), 15);
	qt_fill(pl3, sizeof(pl3), 16);
	hdr_to_b(&h, qpio_qp_num(b.qp));
	/* B's rq_psn is 0x100 (rc_world): FIRST, then SEND ONLY at 0x101 */
	inject_b(&h, SOFT_IB_OPC_UC + SOFT_IB_OPC_SEND_FIRST, 0x100, pl, 1024);
	inject_b(&h, SOFT_IB_OPC_UC + SOFT_IB_OPC_SEND_ONLY, 0x101, pl2,
		 sizeof(pl2));
	wc = wc_one(&b, QPIO_WC_SUCCESS, 1);
	cr_assert_eq(wc.byte_len, 100);
	cr_assert(qt_check(b.buf, 100, 15));
	/* FIRST, a WRITE MIDDLE (not this message's kind), SEND ONLY */
	inject_b(&h, SOFT_IB_OPC_UC + SOFT_IB_OPC_SEND_FIRST, 0x102, pl, 1024);
	inject_b(&h, SOFT_IB_OPC_UC + SOFT_IB_OPC_WRITE_MIDDLE, 0x103, pl, 1024);
	inject_b(&h, SOFT_IB_OPC_UC + SOFT_IB_OPC_SEND_ONLY, 0x104, pl3,
		 sizeof(pl3));
	wc = wc_one(&b, QPIO_WC_SUCCESS, 2);
	cr_assert_eq(wc.byte_len, 60);
	cr_assert(qt_check(b.buf + 4096, 60, 16));
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RTS);
	cr_assert_eq(wst(W.b).rx_packets, 5);
	rc_world_down(&a, &b);
}

/* A READ or an atomic at the expected PSN while a SEND is open is out of
 * sequence: NAK invalid request, B to ERR, nothing read or changed, the
 * SEND's receive flushed. It was answered in the middle of the SEND. */
Test(soft_wire, rc_read_or_atomic_inside_an_open_send_refused)
{
	static const uint8_t ops[2] = { SOFT_IB_OPC_READ_REQUEST,
					SOFT_IB_OPC_FETCH_ADD };
	unsigned int i;

	for (i = 0; i < RTE_DIM(ops); i++) {
		struct qt_end a, b;
		struct soft_wire_hdr h;
		uint8_t pl[1024];
		uint64_t word = 7;

		rc_world(&a, &b, QPIO_QPT_RC, 7);
		qt_post_recv(&b, 1, b.buf, 3000);
		memcpy(b.buf + 8192, &word, 8);
		qt_fill(pl, sizeof(pl), 18);
		hdr_to_b(&h, qpio_qp_num(b.qp));
		inject_b(&h, SOFT_IB_OPC_SEND_FIRST, 0x100, pl, sizeof(pl));
		h.ackreq = 1;
		h.va = (uintptr_t)b.buf + 8192;
		h.rkey = qpio_mr_rkey(b.mr);
		h.dmalen = 8;
		h.swap_add = 1;
		inject_b(&h, ops[i], 0x101, NULL, 0);
		wc_one(&b, QPIO_WC_WR_FLUSH_ERR, 1);
		cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_ERR, "opcode 0x%02x",
			     ops[i]);
		cr_assert_eq(wst(W.b).tx_packets, 1, "the NAK, nothing else");
		memcpy(&word, b.buf + 8192, 8);
		cr_assert_eq(word, 7);
		rc_world_down(&a, &b);
	}
}

Test(soft_wire, link_local_gid_names_its_mac)
{
	struct qt_end a, b;
	struct qpio_wc wc;
	struct qpio_ah *ah;
	union qpio_gid gb;

	/* IPv6 only: GID 0 is fe80::<EUI-64 of the MAC> (net_ring's MAC
	 * is zero: fe80::200:ff:fe00:0), and A reaches B by it with no
	 * neighbour entry and no question */
	pair_up(",ip6=fd00::1", ",ip6=fd00::2");
	qt_ud_end_create(&a, W.a, QK, NULL);
	qt_ud_end_create(&b, W.b, QK, NULL);
	cr_assert_eq(qpio_rdma_gid_query(W.b, 1, 0, &gb), 0);
	cr_assert_eq(gb.raw[8], 0x02);
	cr_assert_eq(gb.raw[11], 0xff);
	cr_assert_eq(gb.raw[12], 0xfe);
	ah = ah_to(&a, gb.raw, 0);
	qt_post_recv(&b, 1, b.buf, 40 + 32);
	qt_fill(a.buf, 32, 12);
	ud_post_send(&a, ah, qpio_qp_num(b.qp), QK, 0, 32, 1, 0);
	expect_send_done(&a, 1);
	cr_assert_eq(poll_wire(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 72);
	cr_assert(qt_check(b.buf + 40, 32, 12));
	cr_assert_eq(memcmp(b.buf + 24, gb.raw, 16), 0, "to the link-local GID");
	cr_assert_eq(wst(W.a).tx_no_neigh, 0);
	cr_assert_eq(W.moved, 1, "one frame: no ARP, no NDP");
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_end_destroy(&a);
	qt_end_destroy(&b);
	pair_down();
}

/* The frames waiting in A's transmit ring: their BTH opcodes (IPv4,
 * the BTH at byte 42) in ops[], the frames left in the ring. @return how
 * many. */
static unsigned int
a_tx_opcodes(uint8_t *ops, unsigned int max)
{
	void *objs[8];
	unsigned int n, i;

	n = rte_ring_dequeue_burst(W.a_tx, objs, RTE_MIN(max, 8u), NULL);
	for (i = 0; i < n; i++)
		ops[i] = rte_pktmbuf_mtod((struct rte_mbuf *)objs[i],
					  const uint8_t *)[42];
	cr_assert_eq(rte_ring_enqueue_burst(W.a_tx, objs, n, NULL), n);
	return n;
}

/* ack_hold (default): the step that completes A's receive holds its ACK;
 * the answer A posts on reading the completion leaves behind the ACK in
 * one burst. A step without an answer sends the ACK alone; ack_hold=0
 * sends it in the step that completed the receive. */
static void
ack_hold_case(int hold)
{
	struct qt_end a, b;
	struct qpio_wc wc;
	uint8_t ops[8];

	rc_world_args = hold ? "" : ",ack_hold=0";
	rc_world(&a, &b, QPIO_QPT_RC, 7);
	rc_world_args = "";
	qt_post_recv(&a, 2, a.buf, 256);
	qt_post_recv(&a, 3, a.buf + 256, 256);
	qt_post_recv(&b, 1, b.buf, 256);
	qt_fill(b.buf + 1024, 100, 21);
	rc_post(&b, QPIO_WR_SEND, 1024, 100, 0, 0, 10);
	cr_assert_eq(pump(), 1, "B's SEND");
	cr_assert_eq(qpio_cq_poll(a.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 2);
	cr_assert_eq(wc.byte_len, 100);
	cr_assert(qt_check(a.buf, 100, 21));
	if (!hold) {
		cr_assert_eq(a_tx_opcodes(ops, 8), 1, "the ACK at once");
		cr_assert_eq(ops[0], SOFT_IB_OPC_ACK);
		pump();
		wc_one(&b, QPIO_WC_SUCCESS, 10);
		rc_world_down(&a, &b);
		return;
	}
	cr_assert_eq(a_tx_opcodes(ops, 8), 0, "the ACK held");
	/* A's answer: ACK then SEND_ONLY, one burst of its doorbell */
	qt_fill(a.buf + 1024, 60, 22);
	rc_post(&a, QPIO_WR_SEND, 1024, 60, 0, 0, 30);
	cr_assert_eq(a_tx_opcodes(ops, 8), 2);
	cr_assert_eq(ops[0], SOFT_IB_OPC_ACK);
	cr_assert_eq(ops[1], SOFT_IB_OPC_SEND_ONLY);
	wc_one(&b, QPIO_WC_SUCCESS, 10);
	wc = wc_one(&b, QPIO_WC_SUCCESS, 1);
	cr_assert_eq(wc.byte_len, 60);
	cr_assert(qt_check(b.buf, 60, 22));
	/* B's ACK of the answer was held by B and went with B's next step
	 * (poll_wire's); A's send completes */
	wc_one(&a, QPIO_WC_SUCCESS, 30);

	/* no answer: A's next step sends the held ACK alone */
	rc_post(&b, QPIO_WR_SEND, 1024, 100, 0, 0, 11);
	cr_assert_eq(pump(), 1, "B's second SEND");
	cr_assert_eq(qpio_cq_poll(a.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 3);
	cr_assert_eq(a_tx_opcodes(ops, 8), 0, "the ACK held");
	cr_assert_eq(qpio_cq_poll(a.cq, &wc, 1), 0);
	cr_assert_eq(a_tx_opcodes(ops, 8), 1, "sent by the next step");
	cr_assert_eq(ops[0], SOFT_IB_OPC_ACK);
	pump();
	wc_one(&b, QPIO_WC_SUCCESS, 11);
	cr_assert_eq(W.dropped, 0);
	rc_world_down(&a, &b);
}

Test(soft_wire, rc_ack_held_for_the_answer)
{
	ack_hold_case(1);
}

Test(soft_wire, rc_ack_hold_0_acks_at_once)
{
	ack_hold_case(0);
}

/* The frames in B's tx ring: per frame its BTH opcode, PSN, and AETH
 * syndrome and MSN (IPv4: the BTH at 42, the AETH at 54), the frames
 * left in the ring. @return how many. */
static unsigned int
b_tx_aeths(uint8_t *ops, uint32_t *psn, uint8_t *syn, uint32_t *msn,
	   unsigned int max)
{
	void *objs[8];
	unsigned int n, i;

	n = rte_ring_dequeue_burst(W.b_tx, objs, RTE_MIN(max, 8u), NULL);
	for (i = 0; i < n; i++) {
		const uint8_t *f = rte_pktmbuf_mtod((struct rte_mbuf *)objs[i],
						    const uint8_t *);

		ops[i] = f[42];
		psn[i] = get_be32(f + 50) & 0xffffff;
		syn[i] = f[54];
		msn[i] = get_be32(f + 54) & 0xffffff;
	}
	cr_assert_eq(rte_ring_enqueue_burst(W.b_tx, objs, n, NULL), n);
	return n;
}

/* ack_coalesce (default): five SENDs B takes in one progress step draw
 * one ACK, of the last PSN (0x104) and MSN 5; a step whose requests end
 * in an RNR NAK sends the ACK it owes first (ACK 0x106 MSN 7, then the
 * RNR NAK of 0x107). ack_coalesce=0: one ACK per SEND, as rxe. */
static void
ack_coalesce_case(int coalesce)
{
	struct qt_end a, b;
	struct qpio_wc wc[8];
	uint8_t ops[8], syn[8];
	uint32_t psn[8], msn[8];
	unsigned int i, n;

	rc_world_args = coalesce ? ",ack_hold=0" : ",ack_hold=0,ack_coalesce=0";
	rc_world(&a, &b, QPIO_QPT_RC, 7);
	rc_world_args = "";
	for (i = 0; i < 7; i++)
		qt_post_recv(&b, i, b.buf + i * 256, 256);
	for (i = 0; i < 5; i++)
		rc_post(&a, QPIO_WR_SEND, i * 256, 100, 0, 0, i);
	cr_assert_eq(pump(), 5, "A's five SENDs, one burst for B");
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 8), 5);
	n = b_tx_aeths(ops, psn, syn, msn, 8);
	if (!coalesce) {
		cr_assert_eq(n, 5, "one ACK a SEND");
		for (i = 0; i < 5; i++) {
			cr_assert_eq(ops[i], SOFT_IB_OPC_ACK);
			cr_assert_eq(psn[i], 0x100 + i);
			cr_assert_eq(msn[i], i + 1);
		}
		pump();
		cr_assert_eq(qpio_cq_poll(a.cq, wc, 8), 5);
		cr_assert_eq(wst(W.b).tx_packets, 5);
		rc_world_down(&a, &b);
		return;
	}
	cr_assert_eq(n, 1, "one ACK for the five");
	cr_assert_eq(ops[0], SOFT_IB_OPC_ACK);
	cr_assert_eq(psn[0], 0x104);
	cr_assert_eq(syn[0], SOFT_AETH_ACK);
	cr_assert_eq(msn[0], 5);
	pump();
	cr_assert_eq(qpio_cq_poll(a.cq, wc, 8), 5, "the one ACK completes all");
	for (i = 0; i < 5; i++) {
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[i].wr_id, i);
	}
	/* two SENDs find receives, the third none */
	for (i = 0; i < 3; i++)
		rc_post(&a, QPIO_WR_SEND, i * 256, 100, 0, 0, 10 + i);
	cr_assert_eq(pump(), 3);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 8), 2);
	n = b_tx_aeths(ops, psn, syn, msn, 8);
	cr_assert_eq(n, 2, "the ACK owed, then the RNR NAK");
	cr_assert_eq(ops[0], SOFT_IB_OPC_ACK);
	cr_assert_eq(psn[0], 0x106);
	cr_assert_eq(syn[0], SOFT_AETH_ACK);
	cr_assert_eq(msn[0], 7);
	cr_assert_eq(ops[1], SOFT_IB_OPC_ACK);
	cr_assert_eq(psn[1], 0x107);
	cr_assert_eq(syn[1] & 0xe0, SOFT_AETH_RNR, "an RNR NAK: 0x%02x", syn[1]);
	cr_assert_eq(msn[1], 7);
	pump();
	cr_assert_eq(qpio_cq_poll(a.cq, wc, 8), 2, "the first two complete");
	cr_assert_eq(wc[1].wr_id, 11);
	/* the third goes again once a receive is there */
	qt_post_recv(&b, 7, b.buf + 7 * 256, 256);
	wc_one(&a, QPIO_WC_SUCCESS, 12);
	wc_one(&b, QPIO_WC_SUCCESS, 7);
	cr_assert_eq(W.dropped, 0);
	rc_world_down(&a, &b);
}

/* One step takes a SEND (its ACK owed), a duplicate of an earlier SEND
 * (ACKed again at once, after the owed ACK) and another SEND (owed
 * again): three ACKs leave, 0x101, 0x101 and 0x102, and the step ends
 * (a QP owing an ACK a second time in one step is listed once). */
Test(soft_wire, rc_ack_owed_again_after_an_answer_in_one_step, .timeout = 60)
{
	struct qt_end a, b;
	struct qpio_wc wc[4];
	struct rte_mbuf *m, *dup;
	uint8_t ops[8], syn[8];
	uint32_t psn[8], msn[8];
	void *objs[2];

	rc_world_args = ",ack_hold=0";
	rc_world(&a, &b, QPIO_QPT_RC, 7);
	rc_world_args = "";
	qt_post_recv(&b, 0, b.buf, 256);
	qt_post_recv(&b, 1, b.buf + 256, 256);
	qt_post_recv(&b, 2, b.buf + 512, 256);
	rc_post(&a, QPIO_WR_SEND, 0, 100, 0, 0, 0);
	/* a copy of SEND 0x100 for later */
	cr_assert_eq(rte_ring_dequeue(W.a_tx, (void **)&m), 0);
	dup = rte_pktmbuf_copy(m, W.mp, 0, UINT32_MAX);
	cr_assert_not_null(dup);
	cr_assert_eq(rte_ring_enqueue(W.a_tx, m), 0);
	cr_assert_eq(pump(), 1);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 4), 1);
	cr_assert_eq(b_tx_aeths(ops, psn, syn, msn, 8), 1);
	pump();
	cr_assert_eq(qpio_cq_poll(a.cq, wc, 4), 1);
	/* SEND 0x101, the duplicate 0x100, SEND 0x102: one burst for B */
	rc_post(&a, QPIO_WR_SEND, 256, 100, 0, 0, 1);
	rc_post(&a, QPIO_WR_SEND, 512, 100, 0, 0, 2);
	cr_assert_eq(rte_ring_dequeue_burst(W.a_tx, objs, 2, NULL), 2);
	cr_assert_eq(rte_ring_enqueue(W.b_rx, objs[0]), 0);
	cr_assert_eq(rte_ring_enqueue(W.b_rx, dup), 0);
	cr_assert_eq(rte_ring_enqueue(W.b_rx, objs[1]), 0);
	cr_assert_eq(qpio_soft_wire_progress(W.b), 3);
	cr_assert_eq(b_tx_aeths(ops, psn, syn, msn, 8), 3);
	cr_assert_eq(psn[0], 0x101, "the ACK owed, before the duplicate's");
	cr_assert_eq(psn[1], 0x101, "the duplicate's: the last PSN taken");
	cr_assert_eq(psn[2], 0x102, "owed again, sent at the step's end");
	cr_assert_eq(msn[2], 3);
	cr_assert_eq(ops[0] | ops[1] | ops[2], SOFT_IB_OPC_ACK);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 4), 2);
	pump();
	cr_assert_eq(qpio_cq_poll(a.cq, wc, 4), 2);
	cr_assert_eq(wc[1].wr_id, 2);
	rc_world_down(&a, &b);
}

Test(soft_wire, rc_acks_coalesced_per_step)
{
	ack_coalesce_case(1);
}

Test(soft_wire, rc_ack_coalesce_0_acks_each_request)
{
	ack_coalesce_case(0);
}

/* A QP destroyed after its last receive: its held ACK leaves with the
 * destroy, and B's SEND completes. */
Test(soft_wire, rc_destroy_sends_the_held_ack)
{
	struct qt_end a, b;
	struct qpio_wc wc;
	uint8_t ops[8];

	rc_world(&a, &b, QPIO_QPT_RC, 7);
	qt_post_recv(&a, 1, a.buf, 256);
	rc_post(&b, QPIO_WR_SEND, 1024, 8, 0, 0, 12);
	cr_assert_eq(pump(), 1);
	cr_assert_eq(qpio_cq_poll(a.cq, &wc, 1), 1);
	cr_assert_eq(a_tx_opcodes(ops, 8), 0, "the ACK held");
	cr_assert_eq(qpio_qp_destroy(a.qp), 0);
	cr_assert_eq(a_tx_opcodes(ops, 8), 1, "sent by the destroy");
	cr_assert_eq(ops[0], SOFT_IB_OPC_ACK);
	pump();
	wc_one(&b, QPIO_WC_SUCCESS, 12);
	cr_assert_eq(qpio_mr_dereg(a.mr), 0);
	cr_assert_eq(qpio_cq_destroy(a.cq), 0);
	cr_assert_eq(qpio_pd_free(a.pd), 0);
	rte_free(a.buf);
	qt_end_destroy(&b);
	pair_down();
}

/* An ACK of a PSN B never sent (far after its last) completes nothing:
 * B's SEND, whose real ACK is lost, completes only when it was sent again
 * and ACKed (one retransmission). */
Test(soft_wire, rc_ack_of_a_psn_never_sent_completes_nothing)
{
	struct qt_end a, b;
	struct soft_wire_hdr h;
	struct qpio_wc wc;

	wire_timeout = WIRE_TIMEOUT_LOSS;
	rc_world(&a, &b, QPIO_QPT_RC, 7);
	wire_timeout = WIRE_TIMEOUT;
	W.drop_ab = 1u << 0;                /* A's ACK of B's SEND */
	qt_post_recv(&a, 1, a.buf, 256);
	qt_fill(b.buf, 100, 13);
	rc_post(&b, QPIO_WR_SEND, 0, 100, 0, 0, 10);
	wc_one(&a, QPIO_WC_SUCCESS, 1);
	/* the ACK leaves with A's next step (ack_hold) */
	qpio_soft_wire_progress(W.a);
	pump();
	cr_assert_eq(W.dropped, 1);
	/* B's only PSN was 0x200: an ACK of 0x1200 */
	hdr_to_b(&h, qpio_qp_num(b.qp));
	h.aeth_syn = SOFT_AETH_ACK;
	h.msn = 1;
	inject_b(&h, SOFT_IB_OPC_ACK, 0x1200, NULL, 0);
	cr_assert_eq(qpio_soft_wire_progress(W.b), 1);
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0, "completed by a stranger's ACK");
	wc_one(&b, QPIO_WC_SUCCESS, 10);
	cr_assert_eq(qt_stats(b.qp).transport_retries, 1);
	run_for(2);
	cr_assert_eq(qpio_cq_poll(a.cq, &wc, 1), 0, "delivered once");
	rc_world_down(&a, &b);
}

/* ---- routing: ip=ADDR/LEN and gw= ---- */

/* One UD datagram of len bytes (qt_fill seed) from a's UD end to b's at
 * gid lands whole, after the 40 bytes of its GRH in b.buf. */
static void
ud_lands(struct qt_end *a, struct qt_end *b, const uint8_t gid[16],
	 uint32_t len, uint32_t seed)
{
	struct qpio_wc wc;
	struct qpio_ah *ah;

	qt_fill(a->buf, len, seed);
	qt_post_recv(b, 3, b->buf, 40 + len);
	ah = ah_to(a, gid, 1);
	ud_post_send(a, ah, qpio_qp_num(b->qp), QK, 0, len, 1, 0);
	expect_send_done(a, 1);
	cr_assert_eq(poll_wire(b->cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 40 + len);
	cr_assert(qt_check(b->buf + 40, len, seed));
	cr_assert_eq(qpio_ah_destroy(ah), 0);
}

/* A (10.0.0.1/24) and B (10.0.1.2/24) in two subnets, each reaching the
 * other through its gateway (.254 of its own subnet, a static neighbour
 * at net_ring's MAC): no ARP at all, a UD datagram each way whose IP
 * header names the two hosts (the gateways' addresses never in a
 * packet), and RC SEND, WRITE and READ through them. */
Test(soft_wire, routed_through_the_gateway_ud_and_rc)
{
	struct qt_pair_opts o = { .type = QPIO_QPT_RC, .max_send_wr = 64,
				  .max_recv_wr = 64, .max_inline = 64 };
	struct qt_end a, b, ra, rb;
	struct qpio_wc wc;
	uint8_t ga[16], gb[16];
	static const uint8_t v4_b[4] = { 10, 0, 1, 2 };

	pair_up(",ip=10.0.0.1/24,gw=10.0.0.254,"
		"neigh=10.0.0.254@00:00:00:00:00:00",
		",ip=10.0.1.2/24,gw=10.0.1.254,"
		"neigh=10.0.1.254@00:00:00:00:00:00");
	soft_wire_ipv4_mapped(ga, V4_A);
	soft_wire_ipv4_mapped(gb, v4_b);
	qt_ud_end_create(&a, W.a, QK, NULL);
	qt_ud_end_create(&b, W.b, QK, NULL);
	ud_lands(&a, &b, gb, 200, 5);
	cr_assert_eq(memcmp(b.buf + 20 + 12, V4_A, 4), 0, "IP source: A");
	cr_assert_eq(memcmp(b.buf + 20 + 16, v4_b, 4), 0, "IP destination: B");
	/* RC both ways through the gateways */
	qt_end_create(&ra, W.a, &o);
	qt_end_create(&rb, W.b, &o);
	wire_connect(&ra, gb, qpio_qp_num(rb.qp), 0x100, 0x200, 7);
	wire_connect(&rb, ga, qpio_qp_num(ra.qp), 0x200, 0x100, 7);
	qt_fill(ra.buf, 3000, 77);
	qt_post_recv(&rb, 11, rb.buf, 4096);
	rc_post(&ra, QPIO_WR_SEND, 0, 3000, 0, 0, 12);
	wc_one(&ra, QPIO_WC_SUCCESS, 12);
	wc = wc_one(&rb, QPIO_WC_SUCCESS, 11);
	cr_assert_eq(wc.byte_len, 3000);
	cr_assert(qt_check(rb.buf, 3000, 77));
	qt_fill(rb.buf + 8192, 2500, 78);
	rc_post(&ra, QPIO_WR_RDMA_READ, 16384, 2500,
		(uintptr_t)rb.buf + 8192, qpio_mr_rkey(rb.mr), 13);
	wc_one(&ra, QPIO_WC_SUCCESS, 13);
	cr_assert(qt_check(ra.buf + 16384, 2500, 78));
	cr_assert_eq(wst(W.a).arp_tx + wst(W.b).arp_tx, 0, "no ARP");
	cr_assert_eq(wst(W.a).tx_no_route + wst(W.b).tx_no_route, 0);
	cr_assert_eq(wst(W.a).tx_no_neigh + wst(W.b).tx_no_neigh, 0);
	qt_end_destroy(&ra);
	qt_end_destroy(&rb);
	qt_end_destroy(&a);
	qt_end_destroy(&b);
	pair_down();
}

/* IPv6: A (fd00:1::1/64) to B (fd00:2::2/64), each through a link-local
 * gateway (a static neighbour): the datagram arrives with both hosts in
 * its IPv6 header, and no NDP is sent. */
Test(soft_wire, routed_ipv6_through_a_link_local_gateway)
{
	struct qt_end a, b;
	uint8_t ga[16], gb[16];

	pair_up(",ip6=fd00:1::1/64,gw6=fe80::1,neigh=fe80::1@00:00:00:00:00:00",
		",ip6=fd00:2::2/64,gw6=fe80::2,neigh=fe80::2@00:00:00:00:00:00");
	cr_assert_eq(inet_pton(AF_INET6, "fd00:1::1", ga), 1);
	cr_assert_eq(inet_pton(AF_INET6, "fd00:2::2", gb), 1);
	qt_ud_end_create(&a, W.a, QK, NULL);
	qt_ud_end_create(&b, W.b, QK, NULL);
	ud_lands(&a, &b, gb, 100, 6);
	cr_assert_eq(b.buf[0] >> 4, 6, "an IPv6 GRH");
	cr_assert_eq(memcmp(b.buf + 8, ga, 16), 0, "source: A");
	cr_assert_eq(memcmp(b.buf + 24, gb, 16), 0, "destination: B");
	cr_assert_eq(wst(W.a).nd_tx + wst(W.b).nd_tx, 0, "no NDP");
	cr_assert_eq(wst(W.a).tx_no_route, 0);
	qt_end_destroy(&a);
	qt_end_destroy(&b);
	pair_down();
}

/* Devices with the devargs given, a UD end on each, and an AH on a
 * towards 10.0.9.9 (off the links of the tests below). */
static struct qpio_ah *
far_pair_up(const char *args_a, const char *args_b, struct qt_end *a,
	    struct qt_end *b)
{
	static const uint8_t v4_far[4] = { 10, 0, 9, 9 };
	uint8_t far[16];

	pair_up(args_a, args_b);
	soft_wire_ipv4_mapped(far, v4_far);
	qt_ud_end_create(a, W.a, QK, NULL);
	qt_ud_end_create(b, W.b, QK, NULL);
	return ah_to(a, far, 1);
}

static void
far_pair_down(struct qt_end *a, struct qt_end *b, struct qpio_ah *ah)
{
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_end_destroy(a);
	qt_end_destroy(b);
	pair_down();
}

/* The gateway's MAC is asked by ARP (its address in the request, not
 * the destination's); B is that gateway here and, not routing, counts
 * the datagram for 10.0.9.9 as not its own. */
Test(soft_wire, gateway_asked_by_arp_for_an_off_link_destination)
{
	struct qt_end a, b;
	struct qpio_ah *ah;
	struct qpio_soft_wire_stats sa, sb;

	ah = far_pair_up(",ip=10.0.0.1/24,gw=10.0.0.2", ",ip=10.0.0.2/24",
			 &a, &b);
	ud_post_send(&a, ah, 0x123, QK, 0, 64, 1, 0);
	expect_send_done(&a, 1);
	run_for(20);
	sa = wst(W.a);
	sb = wst(W.b);
	cr_assert_eq(sa.arp_tx, 1, "one request, for the gateway");
	cr_assert_eq(sb.arp_rx, 1);
	cr_assert_eq(sb.arp_tx, 1, "the gateway's reply");
	cr_assert_eq(sa.tx_packets, 1);
	cr_assert_eq(sb.rx_not_mine, 1, "10.0.9.9 is not B's");
	cr_assert_eq(sa.tx_no_route, 0);
	far_pair_down(&a, &b, ah);
}

/* Outside the prefix with no gateway: not sent, counted in tx_no_route,
 * logged naming the fix; the UD send completes (a datagram's fate is
 * not the sender's) and nothing is asked by ARP. No prefix: every
 * address is on the link, as before ip= took one. */
Test(soft_wire, off_link_without_a_gateway_is_no_route)
{
	struct qt_end a, b;
	struct qpio_ah *ah;

	ah = far_pair_up(",ip=10.0.0.1/24", ",ip=10.0.0.2/24", &a, &b);
	qt_log_capture();
	ud_post_send(&a, ah, 0x123, QK, 0, 64, 1, 0);
	expect_send_done(&a, 1);
	ud_post_send(&a, ah, 0x123, QK, 0, 64, 2, 0);
	expect_send_done(&a, 2);
	qt_log_expect("no route to 10.0.9.9: outside the link's prefix "
		      "(ip=ADDR/LEN) and no gateway (gw=); not sent "
		      "(tx_no_route)");
	qt_log_release();
	run_for(10);
	cr_assert_eq(wst(W.a).tx_no_route, 2);
	cr_assert_eq(wst(W.a).arp_tx, 0);
	cr_assert_eq(wst(W.a).tx_packets, 0);
	cr_assert_eq(W.moved, 0);
	far_pair_down(&a, &b, ah);
}

/* A neighbour that never answers ARP: asked every 200 ms, then after
 * 1 s the packets that waited for it are dropped (tx_no_neigh) and a
 * line names the address, the requests and the drops. */
Test(soft_wire, neighbour_that_never_answers_is_said_and_counted)
{
	struct qt_end a, b;
	struct qpio_ah *ah;
	struct qpio_soft_wire_stats sa;
	char want[200];
	unsigned int i;

	ah = far_pair_up(",ip=10.0.0.1", ",ip=10.0.0.2", &a, &b);
	qt_log_capture();
	for (i = 0; i < 3; i++) {
		ud_post_send(&a, ah, 0x123, QK, 0, 64, i, 0);
		expect_send_done(&a, i);
	}
	run_for(1300);
	sa = wst(W.a);
	cr_assert_eq(sa.tx_no_neigh, 3, "the three datagrams held");
	cr_assert_eq(sa.tx_packets, 0);
	cr_assert_geq(sa.arp_tx, 2, "asked again");
	cr_assert_leq(sa.arp_tx, 5, "every 200 ms for 1 s");
	snprintf(want, sizeof(want), "no ARP answer from 10.0.9.9 within "
		 "1000 ms (%u requests): 3 packets that waited for it dropped "
		 "(tx_no_neigh)", (unsigned int)sa.arp_tx);
	qt_log_expect(want);
	qt_log_release();
	far_pair_down(&a, &b, ah);
}

Test(soft_wire, routing_devargs_refused_with_their_rule)
{
	static const char *const bad[] = {
		",ip=10.0.0.1/33", ",ip=10.0.0.1/", ",ip=10.0.0.1/2x",
		",ip=10.0.0.1/-1", ",ip=10.0.0.1/0024", ",ip6=fd00::1/129",
		",ip=10.0.0.1,gw=10.0.0.254",          /* no prefix */
		",ip=10.0.0.1/24,gw=10.0.1.254",       /* off the link */
		",ip=10.0.0.1/24,gw=10.0.0",           /* not an address */
		",ip6=fd00::1,gw6=fd00::fe",           /* no prefix */
		",ip6=fd00::1/64,gw6=fd01::fe",        /* off the link */
		",ip6=fd00::1/64,gw6=ff02::1",         /* multicast */
		",ip=10.0.0.1/24,gw6=fe80::1",         /* no ip6= */
	};
	struct rte_ring *r = ring("wr");
	char nm[RTE_ETH_NAME_MAX_LEN], a[200];
	struct qpio_device *d;
	unsigned int i;

	eth_of_rings("wire_r", r, r, nm);
	for (i = 0; i < RTE_DIM(bad); i++) {
		snprintf(a, sizeof(a), "soft0,wire=%s%s", nm, bad[i]);
		cr_assert_null(qpio_rdma_dev_create(a), "%s", a);
		cr_assert_eq(rte_errno, EINVAL, "%s", a);
	}
	cr_assert_null(qpio_rdma_dev_create("soft0,gw=10.0.0.254"));
	cr_assert_eq(rte_errno, EINVAL);
	/* a link-local IPv6 gateway, and /0 (everything on the link) */
	snprintf(a, sizeof(a), "soft0,wire=%s,ip=10.0.0.1/0,gw=10.0.0.254,"
		 "ip6=fd00::1/64,gw6=fe80::1", nm);
	d = qpio_rdma_dev_create(a);
	cr_assert_not_null(d, "%s: %s", a, rte_strerror(rte_errno));
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
	rte_ring_free(r);
}

/* ---- IEEE 802.1Q VLANs ---- */

/* The next frame in ring from (it must be there): its bytes into f,
 * the mbuf into *mp, not moved on. @return its length. */
static uint32_t
frame_take(struct rte_ring *from, uint8_t *f, uint32_t max, struct rte_mbuf **mp)
{
	void *obj;
	uint32_t len;

	cr_assert_eq(rte_ring_dequeue(from, &obj), 0, "no frame in the ring");
	*mp = obj;
	len = rte_pktmbuf_data_len(*mp);
	cr_assert_leq(len, max);
	memcpy(f, rte_pktmbuf_mtod(*mp, const uint8_t *), len);
	return len;
}

static void
frame_give(struct rte_ring *to, struct rte_mbuf *m)
{
	cr_assert_eq(rte_ring_enqueue(to, m), 0);
}

/* A tagged frame f of len bytes: the tag (TPID 0x8100, PCP, DEI 0, VID)
 * then ethertype; the frame without its tag into u. @return its length. */
static uint32_t
untag(const uint8_t *f, uint32_t len, uint16_t tci, uint16_t etype, uint8_t *u)
{
	cr_assert_eq(f[12], 0x81);
	cr_assert_eq(f[13], 0x00);
	cr_assert_eq(get_be16(f + 14), tci, "TCI 0x%04x, want 0x%04x",
		     get_be16(f + 14), tci);
	cr_assert_eq(get_be16(f + 16), etype);
	memcpy(u, f, 12);
	memcpy(u + 12, f + 16, len - 16);
	return len - 4;
}

/* vlan=100,pcp=5 on both ends: ARP and RoCEv2 frames leave tagged (TCI
 * 5 << 13 | 100 = 0xa064) with the ICRC of the untagged packet (the tag
 * is not in its coverage), the tag is counted in tx_bytes and rx_bytes,
 * and a frame whose tag the port took out (RTE_MBUF_F_RX_VLAN_STRIPPED,
 * as net_af_packet and NICs' VLAN strip hand them) is taken the same. */
Test(soft_wire, vlan_frames_tagged_both_ways)
{
	struct qt_end a, b;
	struct qpio_wc wc;
	struct qpio_ah *ah;
	struct rte_mbuf *m;
	uint8_t gid_b[16], f[2048], u[2048];
	uint32_t len, ulen;
	const uint32_t roce = 14 + 20 + 8 + 12 + 8 + 4 + 300 + 4;

	pair_up(",ip=10.0.0.1,vlan=100,pcp=5", ",ip=10.0.0.2,vlan=100,pcp=5");
	qt_ud_end_create(&a, W.a, QK, NULL);
	qt_ud_end_create(&b, W.b, QK, NULL);
	soft_wire_ipv4_mapped(gid_b, V4_B);
	ah = ah_to(&a, gid_b, 1);
	qt_fill(a.buf, 300, 77);
	qt_post_recv(&b, 1, b.buf, 40 + 300);
	qt_post_recv(&b, 2, b.buf + 1024, 40 + 300);
	ud_post_send(&a, ah, qpio_qp_num(b.qp), QK, 0, 300, 1, 1);
	/* A asks for B's MAC, on VLAN 100 */
	len = frame_take(W.a_tx, f, sizeof(f), &m);
	ulen = untag(f, len, 0xa064, RTE_ETHER_TYPE_ARP, u);
	cr_assert_eq(ulen, 60u, "42 bytes of ARP padded to 60, then tagged");
	cr_assert_eq(get_be16(u + 14 + 6), RTE_ARP_OP_REQUEST);
	frame_give(W.b_rx, m);
	expect_send_done(&a, 1);
	cr_assert_eq(poll_wire(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 1);
	cr_assert_eq(wc.byte_len, 340);
	cr_assert(qt_check(b.buf + 40, 300, 77));
	cr_assert_eq(wst(W.b).arp_tx, 1, "B answered, tagged (A took it)");
	cr_assert_eq(wst(W.a).arp_rx, 1);

	/* the second datagram, MAC known: one tagged RoCEv2 frame */
	qt_fill(a.buf, 300, 78);
	ud_post_send(&a, ah, qpio_qp_num(b.qp), QK, 0, 300, 2, 1);
	len = frame_take(W.a_tx, f, sizeof(f), &m);
	cr_assert_eq(len, 4 + roce);
	ulen = untag(f, len, 0xa064, RTE_ETHER_TYPE_IPV4, u);
	cr_assert_eq(frame_icrc(u, ulen), ref_icrc(u, ulen, 0),
		     "the ICRC of the untagged packet");
	/* handed to B as a stripping port would: tag beside the frame */
	cr_assert_eq(rte_vlan_strip(m), 0);
	cr_assert(m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED);
	cr_assert_eq(rte_pktmbuf_data_len(m), roce);
	frame_give(W.b_rx, m);
	expect_send_done(&a, 2);
	cr_assert_eq(poll_wire(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 2);
	cr_assert(qt_check(b.buf + 1024 + 40, 300, 78));
	cr_assert_eq(b.buf[1024 + 20], 0x45, "the IPv4 header in the GRH space");

	cr_assert_eq(wst(W.a).tx_packets, 2);
	cr_assert_eq(wst(W.a).tx_bytes, 2 * (4 + roce));
	cr_assert_eq(wst(W.b).rx_packets, 2);
	cr_assert_eq(wst(W.b).rx_bytes, 2 * (4 + roce), "the tag counted "
		     "whether it came in the frame or beside it");
	cr_assert_eq(wst(W.a).rx_other_vlan + wst(W.b).rx_other_vlan, 0);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_end_destroy(&a);
	qt_end_destroy(&b);
	pair_down();
}

/* RC on VLAN 100: a segmented SEND, a WRITE_WITH_IMM and a READ, their
 * ACKs and responses tagged; no frame of another VLAN. */
Test(soft_wire, vlan_rc_send_write_read)
{
	struct qt_end a, b;
	struct qpio_wc wc;

	rc_world_args = ",vlan=100,pcp=5";
	rc_world(&a, &b, QPIO_QPT_RC, 7);
	rc_world_args = "";
	qt_fill(a.buf, 2100, 31);
	qt_post_recv(&b, 10, b.buf, 4096);
	rc_post(&a, QPIO_WR_SEND, 0, 2100, 0, 0, 1);
	wc_one(&a, QPIO_WC_SUCCESS, 1);
	wc = wc_one(&b, QPIO_WC_SUCCESS, 10);
	cr_assert_eq(wc.byte_len, 2100);
	cr_assert(qt_check(b.buf, 2100, 31));
	qt_fill(a.buf + 4096, 1500, 32);
	qt_post_recv(&b, 11, b.buf, 16);
	rc_post(&a, QPIO_WR_RDMA_WRITE_WITH_IMM, 4096, 1500,
		(uintptr_t)b.buf + 8192, qpio_mr_rkey(b.mr), 2);
	write_imm_landed(&a, &b, 2, 11, 8192, 1500, 32);
	qt_fill(b.buf + 16384, 3000, 33);
	rc_post(&a, QPIO_WR_RDMA_READ, 20000, 3000, (uintptr_t)b.buf + 16384,
		qpio_mr_rkey(b.mr), 3);
	wc_one(&a, QPIO_WC_SUCCESS, 3);
	cr_assert(qt_check(a.buf + 20000, 3000, 33));
	cr_assert_eq(W.n_ab + W.n_ba, 0, "no untagged RoCEv2 frame moved");
	cr_assert_geq(wst(W.b).rx_packets, 3 + 2 + 1);
	cr_assert_geq(wst(W.a).rx_packets, 1 + 1 + 3);
	cr_assert_eq(wst(W.a).rx_other_vlan + wst(W.b).rx_other_vlan, 0);
	cr_assert_eq(wst(W.a).rx_bad_icrc + wst(W.b).rx_bad_icrc, 0);
	rc_world_down(&a, &b);
}

/* A's frames reach B on a VLAN that is not B's: dropped before ARP or
 * RoCE reads them, counted in rx_other_vlan, nothing answered. */
static void
vlan_mismatch(const char *args_a, const char *args_b)
{
	struct qt_end a, b;
	struct qpio_ah *ah;
	uint8_t gid_b[16];

	pair_up(args_a, args_b);
	qt_ud_end_create(&a, W.a, QK, NULL);
	qt_ud_end_create(&b, W.b, QK, NULL);
	soft_wire_ipv4_mapped(gid_b, V4_B);
	ah = ah_to(&a, gid_b, 1);
	qt_post_recv(&b, 1, b.buf, 40 + 32);
	ud_post_send(&a, ah, qpio_qp_num(b.qp), QK, 0, 32, 1, 0);
	run_for(50);   /* one ARP request: the next is 200 ms on */
	cr_assert_eq(wst(W.a).arp_tx, 1);
	cr_assert_eq(wst(W.b).rx_other_vlan, 1);
	cr_assert_eq(wst(W.b).arp_rx + wst(W.b).arp_tx + wst(W.b).rx_not_roce, 0);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_end_destroy(&a);
	qt_end_destroy(&b);
	pair_down();
}

Test(soft_wire, vlan_other_vid_or_no_tag_dropped_and_counted)
{
	vlan_mismatch(",ip=10.0.0.1,vlan=100", ",ip=10.0.0.2,vlan=200");
	vlan_mismatch(",ip=10.0.0.1", ",ip=10.0.0.2,vlan=100");
	vlan_mismatch(",ip=10.0.0.1,vlan=100", ",ip=10.0.0.2");
}

/* An untagged device takes priority-tagged frames (VID 0, IEEE 802.1Q
 * 9.6), whatever their PCP, and sends untagged ones. */
Test(soft_wire, vlan_priority_tagged_frames_taken_untagged)
{
	struct qt_end a, b;
	struct qpio_wc wc;
	struct qpio_ah *ah;
	struct rte_mbuf *m;
	uint8_t gid_b[16], f[2048];
	uint32_t len;

	pair_up(",ip=10.0.0.1", ",ip=10.0.0.2");
	qt_ud_end_create(&a, W.a, QK, NULL);
	qt_ud_end_create(&b, W.b, QK, NULL);
	soft_wire_ipv4_mapped(gid_b, V4_B);
	ah = ah_to(&a, gid_b, 1);
	qt_fill(a.buf, 64, 5);
	qt_post_recv(&b, 1, b.buf, 40 + 64);
	ud_post_send(&a, ah, qpio_qp_num(b.qp), QK, 0, 64, 1, 0);
	len = frame_take(W.a_tx, f, sizeof(f), &m);
	cr_assert_eq(get_be16(f + 12), RTE_ETHER_TYPE_ARP, "untagged");
	m->vlan_tci = 6 << 13;                /* PCP 6, VID 0 */
	cr_assert_eq(rte_vlan_insert(&m), 0);
	cr_assert_eq(rte_pktmbuf_data_len(m), len + 4);
	frame_give(W.b_rx, m);
	expect_send_done(&a, 1);
	cr_assert_eq(poll_wire(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert(qt_check(b.buf + 40, 64, 5));
	cr_assert_eq(wst(W.b).arp_rx, 1, "the priority-tagged request taken");
	cr_assert_eq(wst(W.b).rx_other_vlan, 0);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_end_destroy(&a);
	qt_end_destroy(&b);
	pair_down();
}

/* ---- queues=2: a port queue pair per completion vector, steering ---- */

/* Two wire devices of two queues over net_ring ethdevs of two queue
 * pairs each; the pump moves A's tx queue i to B's rx queue i, or to
 * queue 1 - i when crossed (every RoCE packet then comes in on the
 * other queue than its QP's, as RSS on the peer's UDP source port may
 * put it). */
struct queue_pair {
	struct rte_ring *a_tx[2], *a_rx[2], *b_tx[2], *b_rx[2];
	struct qpio_device *a, *b;
	int cross;
	unsigned int roce_a_tx[2];    /* RoCE frames from A's tx queue i */
	unsigned int lost;            /* frames a full rx ring did not take */
};

static struct queue_pair Q;

/* qpair_up() without static neighbours (the tests of ARP) */
static int qpair_arp;

static void
qpair_up(int cross)
{
	static unsigned int gen;
	char n[64], name_a[RTE_ETH_NAME_MAX_LEN], name_b[RTE_ETH_NAME_MAX_LEN];
	char da[256], db[256];
	unsigned int i;
	int pa, pb;

	memset(&Q, 0, sizeof(Q));
	Q.cross = cross;
	for (i = 0; i < 2; i++) {
		snprintf(n, sizeof(n), "qa_tx%u_%u", i, gen);
		Q.a_tx[i] = ring(n);
		snprintf(n, sizeof(n), "qa_rx%u_%u", i, gen);
		Q.a_rx[i] = ring(n);
		snprintf(n, sizeof(n), "qb_tx%u_%u", i, gen);
		Q.b_tx[i] = ring(n);
		snprintf(n, sizeof(n), "qb_rx%u_%u", i, gen);
		Q.b_rx[i] = ring(n);
	}
	snprintf(n, sizeof(n), "qwire_a%u", gen);
	pa = rte_eth_from_rings(n, Q.a_rx, 2, Q.a_tx, 2, SOCKET_ID_ANY);
	snprintf(n, sizeof(n), "qwire_b%u", gen++);
	pb = rte_eth_from_rings(n, Q.b_rx, 2, Q.b_tx, 2, SOCKET_ID_ANY);
	cr_assert_geq(pa, 0);
	cr_assert_geq(pb, 0);
	cr_assert_eq(rte_eth_dev_get_name_by_port((uint16_t)pa, name_a), 0);
	cr_assert_eq(rte_eth_dev_get_name_by_port((uint16_t)pb, name_b), 0);
	/* static neighbours, unless qpair_arp: then ARP finds them */
	snprintf(da, sizeof(da), "soft0,wire=%s,ip=10.0.0.1,queues=2%s",
		 name_a, qpair_arp ? "" : ",neigh=10.0.0.2@00:00:00:00:00:00");
	snprintf(db, sizeof(db), "soft1,wire=%s,ip=10.0.0.2,queues=2%s",
		 name_b, qpair_arp ? "" : ",neigh=10.0.0.1@00:00:00:00:00:00");
	Q.a = qpio_rdma_dev_create(da);
	cr_assert_not_null(Q.a, "%s: %s", da, rte_strerror(rte_errno));
	Q.b = qpio_rdma_dev_create(db);
	cr_assert_not_null(Q.b, "%s: %s", db, rte_strerror(rte_errno));
}

static void
qpair_down(void)
{
	unsigned int i;

	cr_assert_eq(qpio_rdma_dev_close(Q.a), 0);
	cr_assert_eq(qpio_rdma_dev_close(Q.b), 0);
	for (i = 0; i < 2; i++) {
		rte_ring_free(Q.a_tx[i]);
		rte_ring_free(Q.a_rx[i]);
		rte_ring_free(Q.b_tx[i]);
		rte_ring_free(Q.b_rx[i]);
	}
}

/* objs[0..n) into r; what it has no room for is freed and counted. */
static void
qgive(struct rte_ring *r, void **objs, unsigned int n)
{
	unsigned int k = rte_ring_enqueue_burst(r, objs, n, NULL);

	Q.lost += n - k;
	for (; k < n; k++)
		rte_pktmbuf_free(objs[k]);
}

/* Move what each tx queue holds (the pump thread of the two-thread test
 * runs it alone: the rings are single-producer, single-consumer).
 * @return the frames moved. */
static unsigned int
qpump(void)
{
	void *objs[64];
	unsigned int i, j, n, to, moved = 0;

	for (i = 0; i < 2; i++) {
		to = Q.cross ? 1 - i : i;
		n = rte_ring_dequeue_burst(Q.a_tx[i], objs, 64, NULL);
		for (j = 0; j < n; j++)
			Q.roce_a_tx[i] += is_roce(rte_pktmbuf_mtod(
				(struct rte_mbuf *)objs[j], const uint8_t *));
		qgive(Q.b_rx[to], objs, n);
		moved += n;
		n = rte_ring_dequeue_burst(Q.b_tx[i], objs, 64, NULL);
		qgive(Q.a_rx[to], objs, n);
		moved += n;
	}
	return moved;
}

/* poll_pair() of the queue pair Q (the CQ's poll runs its queue's step;
 * every step of both devices runs too). */
static unsigned int
qpoll(struct qpio_cq *cq, struct qpio_wc *wc, unsigned int n)
{
	return poll_pair(cq, wc, n, qpump, Q.a, Q.b);
}

/* An end on dev whose CQ is of completion vector vec: QP of type. */
static void
qend_create(struct qt_end *e, struct qpio_device *dev, enum qpio_qp_type type,
	    uint32_t vec)
{
	struct qpio_cq_init_attr ca = { .cqe = 256, .socket_id = SOCKET_ID_ANY,
					.comp_vector = vec };
	struct qpio_qp_init_attr ia;

	memset(e, 0, sizeof(*e));
	e->dev = dev;
	e->pd = qpio_pd_alloc(dev);
	cr_assert_not_null(e->pd);
	e->cq = qpio_cq_create_ex(dev, &ca);
	cr_assert_not_null(e->cq, "cq vector %u: %s", vec,
			   rte_strerror(rte_errno));
	e->buf_len = 64 * 1024;
	e->buf = rte_zmalloc("qt_buf", e->buf_len, 64);
	cr_assert_not_null(e->buf);
	e->mr = qpio_mr_reg(e->pd, e->buf, e->buf_len, QPIO_ACCESS_ALL);
	cr_assert_not_null(e->mr);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	ia.qp_type = type;
	ia.cap.max_send_wr = 64;
	ia.cap.max_recv_wr = 64;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	e->qp = qpio_qp_create(e->pd, &ia);
	cr_assert_not_null(e->qp, "qp: %s", rte_strerror(rte_errno));
}

static struct qpio_soft_wire_stats
qst(struct qpio_device *d, unsigned int q)
{
	struct qpio_soft_wire_stats s;

	cr_assert_eq(qpio_soft_wire_queue_stats_get(d, q, &s), 0);
	return s;
}

/* queues=N: the device reports N completion vectors, a CQ of another
 * vector is refused, a QP whose two CQs are of two vectors is refused,
 * and queues= outside 1..8, over the port's queues, or without wire= is
 * refused at probe; the fabric has one vector. */
Test(soft_wire, queues_vectors_and_refusals)
{
	struct qpio_cq_init_attr ca = { .cqe = 16, .socket_id = SOCKET_ID_ANY };
	struct qpio_device_attr da;
	struct qpio_qp_init_attr ia;
	struct qpio_cq *c0, *c1;
	struct qpio_pd *pd;
	struct qpio_device *d;
	struct qpio_soft_wire_stats st;
	char a[256], nm[RTE_ETH_NAME_MAX_LEN];

	qpair_up(0);
	cr_assert_eq(qpio_rdma_dev_query(Q.a, &da), 0);
	cr_assert_eq(da.num_comp_vectors, 2);
	pd = qpio_pd_alloc(Q.a);
	cr_assert_not_null(pd);
	c0 = qpio_cq_create_ex(Q.a, &ca);
	ca.comp_vector = 1;
	c1 = qpio_cq_create_ex(Q.a, &ca);
	cr_assert_not_null(c0);
	cr_assert_not_null(c1);
	ca.comp_vector = 2;
	cr_assert_null(qpio_cq_create_ex(Q.a, &ca));
	cr_assert_eq(rte_errno, EINVAL);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = c0;
	ia.recv_cq = c1;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	cr_assert_null(qpio_qp_create(pd, &ia), "send CQ of vector 0, recv 1");
	cr_assert_eq(rte_errno, EINVAL);
	ia.qp_type = QPIO_QPT_UD;
	cr_assert_null(qpio_qp_create(pd, &ia));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_eq(qpio_soft_wire_queue_stats_get(Q.a, 2, &st), -EINVAL);
	cr_assert_eq(qpio_soft_wire_queue_stats_get(Q.a, 1, NULL), -EINVAL);
	cr_assert_eq(qpio_soft_wire_queue_progress(Q.a, 2), -EINVAL);
	cr_assert_eq(qpio_soft_wire_queue_progress(Q.a, 1), 0);
	cr_assert_eq(qpio_cq_destroy(c0), 0);
	cr_assert_eq(qpio_cq_destroy(c1), 0);
	cr_assert_eq(qpio_pd_free(pd), 0);
	qpair_down();

	/* queues=1 is the default device (its close closes the ethdev) */
	pair_rings();
	cr_assert_eq(rte_eth_dev_get_name_by_port(W.port_b, nm), 0);
	snprintf(a, sizeof(a), "soft0,wire=%s,ip=10.0.0.1,queues=1", nm);
	d = qpio_rdma_dev_create(a);
	cr_assert_not_null(d, "%s", rte_strerror(rte_errno));
	cr_assert_eq(qpio_rdma_dev_query(d, &da), 0);
	cr_assert_eq(da.num_comp_vectors, 1);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
	/* a port of one queue pair: queues=2 is more than it has */
	cr_assert_eq(rte_eth_dev_get_name_by_port(W.port_a, nm), 0);
	snprintf(a, sizeof(a), "soft0,wire=%s,ip=10.0.0.1,queues=0", nm);
	cr_assert_null(qpio_rdma_dev_create(a));
	snprintf(a, sizeof(a), "soft0,wire=%s,ip=10.0.0.1,queues=9", nm);
	cr_assert_null(qpio_rdma_dev_create(a));
	cr_assert_null(qpio_rdma_dev_create("soft0,queues=2"));
	cr_assert_eq(rte_errno, EINVAL);
	snprintf(a, sizeof(a), "soft0,wire=%s,ip=10.0.0.1,queues=2", nm);
	cr_assert_null(qpio_rdma_dev_create(a));
	cr_assert_eq(rte_errno, EINVAL);
	/* the refusal left the application's ethdev as it was */
	cr_assert(rte_eth_dev_is_valid_port(W.port_a));
	snprintf(a, sizeof(a), "soft0,wire=%s,ip=10.0.0.1,queues=1", nm);
	d = qpio_rdma_dev_create(a);
	cr_assert_not_null(d, "the same ethdev again: %s",
			   rte_strerror(rte_errno));
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
	d = qpio_rdma_dev_create("soft0");
	cr_assert_not_null(d);
	cr_assert_eq(qpio_rdma_dev_query(d, &da), 0);
	cr_assert_eq(da.num_comp_vectors, 1);
	ca.comp_vector = 1;
	cr_assert_null(qpio_cq_create_ex(d, &ca), "the fabric has vector 0");
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_eq(qpio_soft_wire_queue_progress(d, 0), -ENODEV);
	cr_assert_eq(qpio_soft_wire_queue_stats_get(d, 0, &st), -ENODEV);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
	rte_ring_free(W.a_tx);
	rte_ring_free(W.a_rx);
	rte_ring_free(W.b_tx);
	rte_ring_free(W.b_rx);
	rte_mempool_free(W.mp);
}

/* Crossed queues: RC pair i joins A's and B's QPs of completion vector
 * i, and each packet comes in on the other port queue, which hands it to
 * its QP's queue. Every byte arrives; every RoCE packet a device
 * received was steered exactly once (rx_steered of the queue it came in
 * on equals rx_packets of its QP's queue); each QP's packets leave on
 * its own queue's port queue (RC pair 0: 10 SENDs of 3 packets at path
 * MTU 1024, pair 1: 3 of one). A UD datagram on vector 1 goes the same
 * way. */
Test(soft_wire, queues_crossed_steered_exact)
{
	struct qt_end a[2], b[2], ua, ub;
	struct qpio_wc wc[16];
	struct qpio_soft_wire_stats sa, sb, q0, q1;
	struct qpio_ah *ah;
	uint8_t ga[16], gb[16];
	unsigned int i, k;
	const unsigned int nmsg[2] = { 10, 3 }, len[2] = { 3000, 500 };

	qpair_up(1);
	soft_wire_ipv4_mapped(ga, V4_A);
	soft_wire_ipv4_mapped(gb, V4_B);
	for (i = 0; i < 2; i++) {
		qend_create(&a[i], Q.a, QPIO_QPT_RC, i);
		qend_create(&b[i], Q.b, QPIO_QPT_RC, i);
		wire_connect(&a[i], gb, qpio_qp_num(b[i].qp), 0x100, 0x200, 7);
		wire_connect(&b[i], ga, qpio_qp_num(a[i].qp), 0x200, 0x100, 7);
	}
	for (i = 0; i < 2; i++) {
		for (k = 0; k < nmsg[i]; k++) {
			qt_post_recv(&b[i], k, b[i].buf + k * 4096, 4096);
			qt_fill(a[i].buf + k * 4096, len[i], 100 * i + k);
			rc_post(&a[i], QPIO_WR_SEND, k * 4096, len[i], 0, 0, k);
		}
	}
	for (i = 0; i < 2; i++) {
		cr_assert_eq(qpoll(a[i].cq, wc, nmsg[i]), nmsg[i]);
		for (k = 0; k < nmsg[i]; k++)
			cr_assert_eq(wc[k].status, QPIO_WC_SUCCESS, "pair %u "
				     "send %u: %s", i, k,
				     qpio_wc_status_str(wc[k].status));
		cr_assert_eq(qpoll(b[i].cq, wc, nmsg[i]), nmsg[i]);
		for (k = 0; k < nmsg[i]; k++) {
			cr_assert_eq(wc[k].status, QPIO_WC_SUCCESS);
			cr_assert_eq(wc[k].wr_id, k);
			cr_assert_eq(wc[k].byte_len, len[i]);
			cr_assert(qt_check(b[i].buf + k * 4096, len[i],
					   100 * i + k), "pair %u msg %u", i, k);
		}
	}
	cr_assert_eq(Q.roce_a_tx[0], 30, "pair 0's 10 x 3 packets, on A's "
		     "tx queue 0");
	cr_assert_eq(Q.roce_a_tx[1], 3, "pair 1's 3 x 1, on tx queue 1");
	sa = wst(Q.a);
	sb = wst(Q.b);
	cr_assert_eq(sb.rx_packets, 33);
	cr_assert_eq(sb.rx_steered, 33, "every packet came in on the other "
		     "queue");
	cr_assert_eq(sa.rx_steered, sa.rx_packets);
	cr_assert_eq(sa.rx_steer_dropped + sb.rx_steer_dropped, 0);
	cr_assert_eq(Q.lost, 0);
	q0 = qst(Q.b, 0);
	q1 = qst(Q.b, 1);
	cr_assert_eq(q0.rx_packets, 30, "pair 0's packets read by queue 0");
	cr_assert_eq(q1.rx_steered, 30, "...which came in on port queue 1");
	cr_assert_eq(q1.rx_packets, 3);
	cr_assert_eq(q0.rx_steered, 3);
	cr_assert_eq(q0.rx_packets + q1.rx_packets, sb.rx_packets);
	q0 = qst(Q.a, 0);
	q1 = qst(Q.a, 1);
	cr_assert_eq(q0.tx_packets, 30, "queue 0 sent pair 0's packets");
	cr_assert_eq(q1.tx_packets, 3);
	cr_assert_geq(q0.rx_packets, 1, "B's ACKs of pair 0...");
	cr_assert_eq(q1.rx_steered, q0.rx_packets, "...came in on port "
		     "queue 1");
	cr_assert_geq(q1.rx_packets, 1);
	cr_assert_eq(q0.rx_steered, q1.rx_packets);

	/* UD on vector 1: A's tx queue 1 to B's port queue 0, handed to
	 * B's queue 1 */
	qend_create(&ua, Q.a, QPIO_QPT_UD, 1);
	qend_create(&ub, Q.b, QPIO_QPT_UD, 1);
	qt_ud_qp_rts(ua.qp, QK);
	qt_ud_qp_rts(ub.qp, QK);
	ah = ah_to(&ua, gb, 1);
	qt_post_recv(&ub, 7, ub.buf, 40 + 256);
	qt_fill(ua.buf, 256, 9);
	ud_post_send(&ua, ah, qpio_qp_num(ub.qp), QK, 0, 256, 7, 0);
	cr_assert_eq(qpoll(ua.cq, wc, 1), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(qpoll(ub.cq, wc, 1), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[0].byte_len, 40 + 256);
	cr_assert(qt_check(ub.buf + 40, 256, 9));
	cr_assert_eq(qst(Q.b, 0).rx_steered, 3 + 1);
	cr_assert_eq(qst(Q.b, 1).rx_packets, 3 + 1);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_end_destroy(&ua);
	qt_end_destroy(&ub);
	for (i = 0; i < 2; i++) {
		qt_end_destroy(&a[i]);
		qt_end_destroy(&b[i]);
	}
	qpair_down();
}

/* Two UD QPs of A, a1 on vector 1 and a0 on vector 0, and b1 of B on
 * vector 1, in RTS; two receives of 40 + 256 bytes on b1 (wr_id 0 and
 * 1, 512 bytes apart). */
static void
held_ends_up(struct qpio_device *A, struct qpio_device *B, struct qt_end *a0,
	     struct qt_end *a1, struct qt_end *b1)
{
	unsigned int k;

	qend_create(a1, A, QPIO_QPT_UD, 1);
	qend_create(a0, A, QPIO_QPT_UD, 0);
	qend_create(b1, B, QPIO_QPT_UD, 1);
	qt_ud_qp_rts(a1->qp, QK);
	qt_ud_qp_rts(a0->qp, QK);
	qt_ud_qp_rts(b1->qp, QK);
	for (k = 0; k < 2; k++)
		qt_post_recv(b1, k, b1->buf + k * 512, 40 + 256);
}

/* a1, then a0, send b1 a 256-byte datagram (filled 11 and 10) before
 * A knows B's MAC: queue 1 asks, and both wait in the one entry.
 * *ah0 and *ah1: their AHs. */
static void
held_sends(struct qpio_device *A, struct qt_end *a0, struct qt_end *a1,
	   struct qt_end *b1, struct qpio_ah **ah0, struct qpio_ah **ah1)
{
	uint8_t gb[16];

	soft_wire_ipv4_mapped(gb, V4_B);
	*ah1 = ah_to(a1, gb, 1);
	*ah0 = ah_to(a0, gb, 1);
	qt_fill(a1->buf, 256, 11);
	ud_post_send(a1, *ah1, qpio_qp_num(b1->qp), QK, 0, 256, 1, 0);
	qt_fill(a0->buf, 256, 10);
	ud_post_send(a0, *ah0, qpio_qp_num(b1->qp), QK, 0, 256, 0, 0);
	cr_assert_eq(qst(A, 1).arp_tx, 1, "queue 1 asked");
	cr_assert_eq(qst(A, 0).arp_tx, 0, "queue 0 waits on the same entry");
}

/* b1's two completions (wc) of held_sends()'s datagrams: one of each,
 * in either order, byte for byte. */
static void
held_check_b(const struct qt_end *b1, const struct qpio_wc *wc)
{
	unsigned int k;

	for (k = 0; k < 2; k++) {
		cr_assert_eq(wc[k].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[k].byte_len, 40 + 256);
	}
	cr_assert((qt_check(b1->buf + 40, 256, 11) &&
		   qt_check(b1->buf + 512 + 40, 256, 10)) ||
		  (qt_check(b1->buf + 40, 256, 10) &&
		   qt_check(b1->buf + 512 + 40, 256, 11)));
}

/* Frames held for ARP leave on their QP's queue, whichever queue learns
 * the neighbour. A's UD QPs of vectors 1 and 0 each send a datagram to B
 * before its MAC is known: queue 1 asks (its request on tx queue 1) and
 * both datagrams wait in the one entry. Crossed, B's answer comes in on
 * A's port queue 1, whose step learns B: its own datagram leaves on tx
 * queue 1 at once, queue 0's is released to queue 0 and leaves on tx
 * queue 0 (one RoCE frame each; both on tx queue 1 before, where a
 * QP's packets could leave on two port queues). Both arrive intact. */
Test(soft_wire, queues_held_frames_leave_on_their_queue)
{
	struct qt_end a0, a1, b1;
	struct qpio_wc wc[4];
	struct qpio_ah *ah0, *ah1;
	unsigned int got;

	qpair_arp = 1;
	qpair_up(1);
	qpair_arp = 0;
	held_ends_up(Q.a, Q.b, &a0, &a1, &b1);
	held_sends(Q.a, &a0, &a1, &b1, &ah0, &ah1);
	cr_assert_eq(qpoll(a1.cq, wc, 1), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(qpoll(a0.cq, wc, 1), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	got = qpoll(b1.cq, wc, 2);
	cr_assert_eq(got, 2, "B took %u datagrams", got);
	held_check_b(&b1, wc);
	cr_assert_eq(qst(Q.a, 1).arp_rx, 1, "B's answer came in on queue 1");
	cr_assert_eq(Q.roce_a_tx[1], 1, "queue 1's datagram on tx queue 1");
	cr_assert_eq(Q.roce_a_tx[0], 1, "queue 0's datagram on tx queue 0, "
		     "not on the queue that learnt B");
	cr_assert_eq(qst(Q.a, 0).tx_packets, 1);
	cr_assert_eq(qst(Q.a, 1).tx_packets, 1);
	cr_assert_eq(wst(Q.a).tx_no_neigh, 0);
	cr_assert_eq(Q.lost, 0);
	cr_assert_eq(qpio_ah_destroy(ah0), 0);
	cr_assert_eq(qpio_ah_destroy(ah1), 0);
	qt_end_destroy(&a0);
	qt_end_destroy(&a1);
	qt_end_destroy(&b1);
	qpair_down();
}

/* Straight queues: a packet comes in on its QP's queue, nothing is
 * steered. */
Test(soft_wire, queues_straight_nothing_steered)
{
	struct qt_end a, b;
	struct qpio_wc wc[4];
	uint8_t ga[16], gb[16];

	qpair_up(0);
	soft_wire_ipv4_mapped(ga, V4_A);
	soft_wire_ipv4_mapped(gb, V4_B);
	qend_create(&a, Q.a, QPIO_QPT_RC, 1);
	qend_create(&b, Q.b, QPIO_QPT_RC, 1);
	wire_connect(&a, gb, qpio_qp_num(b.qp), 0x100, 0x200, 7);
	wire_connect(&b, ga, qpio_qp_num(a.qp), 0x200, 0x100, 7);
	qt_post_recv(&b, 1, b.buf, 4096);
	qt_fill(a.buf, 2000, 5);
	rc_post(&a, QPIO_WR_SEND, 0, 2000, 0, 0, 1);
	cr_assert_eq(qpoll(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(qpoll(b.cq, wc, 1), 1);
	cr_assert(qt_check(b.buf, 2000, 5));
	cr_assert_eq(Q.roce_a_tx[1], 2);
	cr_assert_eq(Q.roce_a_tx[0], 0);
	cr_assert_eq(qst(Q.b, 1).rx_packets, 2);
	cr_assert_eq(qst(Q.b, 0).rx_packets, 0);
	cr_assert_eq(wst(Q.a).rx_steered + wst(Q.b).rx_steered, 0);
	qt_end_destroy(&a);
	qt_end_destroy(&b);
	qpair_down();
}

/* Two threads, each owning one queue of both devices (it posts to and
 * polls only the QPs and CQs of its vector), and a third moving the
 * frames, crossed: both pairs run RC SENDs at once through the two
 * queues' locks, the neighbour table and the steer rings; every byte
 * arrives. */
struct qthread {
	struct qt_end *a, *b;
	unsigned int n;
	uint32_t seed;
	int ok;
	char why[128];
};

static volatile int qpump_run;
/* owner threads still sending: each polls on until none is (its queue
 * steers the other's packets) */
static unsigned int qowners_left;

static void *
qpump_thread(void *arg)
{
	(void)arg;
	while (__atomic_load_n(&qpump_run, __ATOMIC_ACQUIRE))
		qpump();
	return NULL;
}

static void *
qowner_thread(void *arg)
{
	struct qthread *t = arg;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_recv_wr rw;
	struct qpio_wc wc[8];
	uint64_t end = rte_get_tsc_cycles() + 20 * rte_get_tsc_hz();
	unsigned int sent = 0, got = 0, done = 0, k, n;
	int err;

	while ((got < t->n || done < t->n ||
		__atomic_load_n(&qowners_left, __ATOMIC_ACQUIRE) != 0) &&
	       rte_get_tsc_cycles() < end) {
		if (got == t->n && done == t->n && !t->ok) {
			t->ok = 1;
			__atomic_fetch_sub(&qowners_left, 1, __ATOMIC_RELEASE);
		}
		/* 16 receives ahead at most, and 48 sends not completed
		 * (the SQ holds 64; ACKs may come a step late) */
		if (sent < t->n && sent - got < 16 && sent - done < 48) {
			uint32_t slot = sent % 16;

			sge.addr = (uintptr_t)t->b->buf + slot * 2048;
			sge.length = 2048;
			sge.lkey = qpio_mr_lkey(t->b->mr);
			memset(&rw, 0, sizeof(rw));
			rw.wr_id = sent;
			rw.sg_list = &sge;
			rw.num_sge = 1;
			if (qpio_qp_post_recv(t->b->qp, &rw, 1, &err) != 1)
				goto fail;
			qt_fill(t->a->buf + slot * 2048, 1500, t->seed + sent);
			sge.addr = (uintptr_t)t->a->buf + slot * 2048;
			sge.length = 1500;
			sge.lkey = qpio_mr_lkey(t->a->mr);
			wr = qt_send_wr(sent, &sge, 1, QPIO_SEND_SIGNALED);
			if (qpio_qp_post_send(t->a->qp, &wr, 1, &err) != 1)
				goto fail;
			sent++;
		}
		n = qpio_cq_poll(t->a->cq, wc, 8);
		for (k = 0; k < n; k++, done++)
			if (wc[k].status != QPIO_WC_SUCCESS)
				goto fail;
		n = qpio_cq_poll(t->b->cq, wc, 8);
		for (k = 0; k < n; k++, got++) {
			if (wc[k].status != QPIO_WC_SUCCESS ||
			    wc[k].wr_id != got || wc[k].byte_len != 1500 ||
			    !qt_check(t->b->buf + (got % 16) * 2048, 1500,
				      t->seed + got)) {
				snprintf(t->why, sizeof(t->why), "receive %u: "
					 "status %d wr_id %lu len %u", got,
					 wc[k].status,
					 (unsigned long)wc[k].wr_id,
					 wc[k].byte_len);
				return NULL;
			}
		}
	}
	if (!t->ok)
		snprintf(t->why, sizeof(t->why), "%u of %u received, %u sends "
			 "done in 20 s", got, t->n, done);
	return NULL;
fail:
	snprintf(t->why, sizeof(t->why), "post or send completion failed at "
		 "%u", sent);
	return NULL;
}

Test(soft_wire, queues_two_threads_crossed)
{
	struct qt_end a[2], b[2];
	struct qthread t[2];
	pthread_t th[2], pump_th;
	uint8_t ga[16], gb[16];
	unsigned int i;

	qpair_up(1);
	soft_wire_ipv4_mapped(ga, V4_A);
	soft_wire_ipv4_mapped(gb, V4_B);
	for (i = 0; i < 2; i++) {
		qend_create(&a[i], Q.a, QPIO_QPT_RC, i);
		qend_create(&b[i], Q.b, QPIO_QPT_RC, i);
		wire_connect(&a[i], gb, qpio_qp_num(b[i].qp), 0x100, 0x200, 7);
		wire_connect(&b[i], ga, qpio_qp_num(a[i].qp), 0x200, 0x100, 7);
		memset(&t[i], 0, sizeof(t[i]));
		t[i].a = &a[i];
		t[i].b = &b[i];
		t[i].n = 2000;
		t[i].seed = 1000000 * (i + 1);
	}
	__atomic_store_n(&qowners_left, 2, __ATOMIC_RELEASE);
	__atomic_store_n(&qpump_run, 1, __ATOMIC_RELEASE);
	cr_assert_eq(pthread_create(&pump_th, NULL, qpump_thread, NULL), 0);
	for (i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, qowner_thread,
					    &t[i]), 0);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	__atomic_store_n(&qpump_run, 0, __ATOMIC_RELEASE);
	pthread_join(pump_th, NULL);
	for (i = 0; i < 2; i++)
		cr_assert(t[i].ok, "queue %u: %s", i, t[i].why);
	cr_assert_eq(wst(Q.b).rx_steered, wst(Q.b).rx_packets);
	cr_assert_geq(wst(Q.b).rx_packets, 2 * 2000 * 2, "two packets a "
		      "message (path MTU 1024)");
	for (i = 0; i < 2; i++) {
		qt_end_destroy(&a[i]);
		qt_end_destroy(&b[i]);
	}
	qpair_down();
}

/* An application of one lcore on a device of two queues: it polls only
 * CQs of vector 0, never the other queue nor qpio_soft_wire_progress(),
 * and every packet comes in on port queue 1 (crossed). Queue 0's steps
 * step queue 1 once it took none for WIRE_ADOPT_STEPS of them: the
 * packets are read and handed over, every message arrives. */
Test(soft_wire, queues_unpolled_queue_stepped_by_the_polled_one)
{
	struct qt_end a, b;
	struct qpio_wc wc[4];
	uint8_t ga[16], gb[16];
	uint64_t end;
	unsigned int k, got_a = 0, got_b = 0;

	qpair_up(1);
	soft_wire_ipv4_mapped(ga, V4_A);
	soft_wire_ipv4_mapped(gb, V4_B);
	qend_create(&a, Q.a, QPIO_QPT_RC, 0);
	qend_create(&b, Q.b, QPIO_QPT_RC, 0);
	wire_connect(&a, gb, qpio_qp_num(b.qp), 0x100, 0x200, 7);
	wire_connect(&b, ga, qpio_qp_num(a.qp), 0x200, 0x100, 7);
	for (k = 0; k < 4; k++) {
		qt_post_recv(&b, k, b.buf + k * 4096, 4096);
		qt_fill(a.buf + k * 4096, 1000, 40 + k);
		rc_post(&a, QPIO_WR_SEND, k * 4096, 1000, 0, 0, k);
	}
	end = rte_get_tsc_cycles() + 10 * rte_get_tsc_hz();
	while ((got_a < 4 || got_b < 4) && rte_get_tsc_cycles() < end) {
		qpump();
		got_a += qpio_cq_poll(a.cq, wc, 4);
		got_b += qpio_cq_poll(b.cq, wc, 4);
	}
	cr_assert_eq(got_a, 4, "A's sends done: B's ACKs read off port "
		     "queue 1 by queue 0's steps");
	cr_assert_eq(got_b, 4);
	for (k = 0; k < 4; k++)
		cr_assert(qt_check(b.buf + k * 4096, 1000, 40 + k));
	cr_assert_eq(qst(Q.b, 1).rx_steered, 4, "B's queue 1 (stepped by "
		     "queue 0) handed the 4 SENDs over");
	cr_assert_eq(qst(Q.b, 0).rx_packets, 4);
	cr_assert_eq(qst(Q.b, 1).rx_packets, 0);
	qt_end_destroy(&a);
	qt_end_destroy(&b);
	qpair_down();
}

/* A frame handed to a queue whose QP number names, by the time that
 * queue reads it, a QP of another queue (QP1 destroyed and made again on
 * vector 0 while its datagram waited in vector 1's ring) is dropped
 * there (rx_no_qp), never handed on again: the mbuf goes back to its
 * pool once, and the new QP1 gets nothing. */
Test(soft_wire, queues_handed_frame_of_a_moved_qp_dropped_once)
{
	struct qpio_cq_init_attr ca = { .cqe = 64, .socket_id = SOCKET_ID_ANY };
	struct qpio_qp_init_attr ia;
	struct qt_end ua, g;
	struct qpio_qp *gsi;
	struct qpio_cq *cq0;
	struct qpio_wc wc[4];
	struct qpio_ah *ah;
	struct rte_mempool *mp;
	uint8_t gb[16];
	unsigned int avail;

	qpair_up(1);
	soft_wire_ipv4_mapped(gb, V4_B);
	mp = rte_mempool_lookup("soft_wire_soft0");   /* A's frames */
	cr_assert_not_null(mp);
	/* B's QP1 on vector 1 */
	qend_create(&g, Q.b, QPIO_QPT_UD, 1);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = g.cq;
	ia.recv_cq = g.cq;
	ia.qp_type = QPIO_QPT_UD;
	ia.cap.max_send_wr = 16;
	ia.cap.max_recv_wr = 16;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	gsi = qpio_qp_create_gsi(g.pd, &ia);
	cr_assert_not_null(gsi, "%s", rte_strerror(rte_errno));
	qt_ud_qp_rts(gsi, QPIO_GSI_QKEY);
	/* A's datagram to QPN 1 leaves on A's tx queue 1, comes in on B's
	 * port queue 0, which hands it to queue 1 */
	qend_create(&ua, Q.a, QPIO_QPT_UD, 1);
	qt_ud_qp_rts(ua.qp, QK);
	ah = ah_to(&ua, gb, 1);
	avail = rte_mempool_avail_count(mp);
	ud_post_send(&ua, ah, 1, QPIO_GSI_QKEY, 0, 100, 1, 0);
	qpump();
	cr_assert_eq(qpio_soft_wire_queue_progress(Q.b, 0), 1);
	cr_assert_eq(qst(Q.b, 0).rx_steered, 1);
	/* QP1 made again on vector 0 before queue 1 reads its ring */
	cr_assert_eq(qpio_qp_destroy(gsi), 0);
	cq0 = qpio_cq_create_ex(Q.b, &ca);
	cr_assert_not_null(cq0);
	ia.send_cq = cq0;
	ia.recv_cq = cq0;
	gsi = qpio_qp_create_gsi(g.pd, &ia);
	cr_assert_not_null(gsi);
	qt_ud_qp_rts(gsi, QPIO_GSI_QKEY);
	qt_post_recv(&(struct qt_end){ .qp = gsi, .mr = g.mr }, 9, g.buf, 4096);
	cr_assert_eq(qpio_soft_wire_queue_progress(Q.b, 1), 1);
	cr_assert_eq(qst(Q.b, 1).rx_no_qp, 1, "dropped where it was handed");
	cr_assert_eq(qst(Q.b, 1).rx_steered, 0, "not handed on again");
	cr_assert_eq(qpio_soft_wire_queue_progress(Q.b, 0), 0, "nothing in "
		     "queue 0's ring");
	cr_assert_eq(qpio_cq_poll(cq0, wc, 4), 0, "the new QP1 got nothing");
	/* A's send completion: its CQ's poll */
	cr_assert_eq(qpoll(ua.cq, wc, 1), 1);
	cr_assert_eq(rte_mempool_avail_count(mp), avail,
		     "the frame's mbuf back in its pool once");
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	cr_assert_eq(qpio_qp_destroy(gsi), 0);
	cr_assert_eq(qpio_cq_destroy(cq0), 0);
	qt_end_destroy(&ua);
	qt_end_destroy(&g);
	qpair_down();
}

/* An ARP request from ip (IPv4, 4 bytes) at mac for A (10.0.0.1), into
 * A's receive ring. */
static void
arp_to_a(const uint8_t ip[4], const uint8_t mac[6])
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(W.mp);
	uint8_t *f;

	cr_assert_not_null(m);
	f = (uint8_t *)rte_pktmbuf_append(m, 60);
	cr_assert_not_null(f);
	memset(f, 0, 60);
	memset(f, 0xff, 6);
	memcpy(f + 6, mac, 6);
	f[12] = 0x08;
	f[13] = 0x06;
	f[14 + 1] = 1;          /* Ethernet */
	f[14 + 2] = 0x08;       /* IPv4 */
	f[14 + 4] = 6;
	f[14 + 5] = 4;
	f[14 + 7] = 1;          /* request */
	memcpy(f + 14 + 8, mac, 6);
	memcpy(f + 14 + 14, ip, 4);
	memcpy(f + 14 + 24, V4_A, 4);
	cr_assert_eq(rte_ring_enqueue(W.a_rx, m), 0);
}

/* The destination MAC of the next frame in A's tx ring (taken out). */
static void
a_tx_dmac(uint8_t mac[6])
{
	uint8_t f[2048];
	struct rte_mbuf *m;

	frame_take(W.a_tx, f, sizeof(f), &m);
	memcpy(mac, f, 6);
	rte_pktmbuf_free(m);
}

/* A queue caches the MAC of the last destination it sent to and the last
 * sender it learnt; a change of the neighbour table (B's address at
 * another MAC, by an ARP request; back at its own MAC, learnt from B's
 * datagram) is seen by the next packet: A's datagrams go to
 * 02:00:00:00:00:99, then to B's MAC (net_ring's 00:...:00) again. */
Test(soft_wire, neighbour_change_seen_by_the_next_packet)
{
	static const uint8_t other[6] = { 2, 0, 0, 0, 0, 0x99 }, zero[6];
	struct qt_end a, b;
	struct qpio_wc wc;
	struct qpio_ah *ah, *ah_b;
	uint8_t gid_a[16], gid_b[16], mac[6];

	pair_up(",ip=10.0.0.1", ",ip=10.0.0.2");
	qt_ud_end_create(&a, W.a, QK, NULL);
	qt_ud_end_create(&b, W.b, QK, NULL);
	soft_wire_ipv4_mapped(gid_a, V4_A);
	soft_wire_ipv4_mapped(gid_b, V4_B);
	ah = ah_to(&a, gid_b, 1);
	ah_b = ah_to(&b, gid_a, 1);
	qt_post_recv(&b, 1, b.buf, 40 + 64);
	ud_post_send(&a, ah, qpio_qp_num(b.qp), QK, 0, 64, 1, 0);
	expect_send_done(&a, 1);
	cr_assert_eq(poll_wire(b.cq, &wc, 1), 1);
	/* 10.0.0.2 is at 02:00:00:00:00:99 now, says an ARP request */
	arp_to_a(V4_B, other);
	cr_assert_eq(qpio_soft_wire_progress(W.a), 1);
	a_tx_dmac(mac);                        /* A's ARP reply */
	cr_assert_eq(memcmp(mac, other, 6), 0);
	ud_post_send(&a, ah, qpio_qp_num(b.qp), QK, 0, 64, 2, 0);
	a_tx_dmac(mac);
	cr_assert_eq(memcmp(mac, other, 6), 0, "the new MAC, not the cached");
	/* B's datagram to A: A learns 10.0.0.2 at B's own MAC again */
	qt_post_recv(&a, 3, a.buf + 1024, 40 + 64);
	ud_post_send(&b, ah_b, qpio_qp_num(a.qp), QK, 0, 64, 3, 0);
	{
		struct qpio_wc w2[2];

		/* A's SEND 2 (to the MAC nobody has), then B's datagram */
		cr_assert_eq(poll_wire(a.cq, w2, 2), 2);
		cr_assert_eq(w2[0].wr_id, 2);
		cr_assert_eq(w2[1].opcode, QPIO_WC_RECV);
		cr_assert_eq(w2[1].wr_id, 3);
	}
	cr_assert_eq(rte_ring_count(W.a_tx), 0);
	ud_post_send(&a, ah, qpio_qp_num(b.qp), QK, 0, 64, 4, 0);
	a_tx_dmac(mac);
	cr_assert_eq(memcmp(mac, zero, 6), 0, "B's MAC again");
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	cr_assert_eq(qpio_ah_destroy(ah_b), 0);
	qt_end_destroy(&a);
	qt_end_destroy(&b);
	pair_down();
}

/* rxe's requester asks for an ACK on a middle packet every 65 packets: a
 * WRITE with immediate whose middle packet asked, and whose last packet
 * finds no receive, draws the ACK of that middle packet, then the RNR
 * NAK of the last one, in PSN order; the WRITE stays open, and its last
 * packet sent again once a receive is there lands it whole. */
Test(soft_wire, rc_write_imm_rnr_after_a_middle_ack_in_psn_order)
{
	struct qt_end a, b;
	struct soft_wire_hdr h;
	struct qpio_wc wc;
	uint8_t ops[8], syn[8], pl[1024];
	uint32_t psn[8], msn[8], i;

	rc_world_args = ",ack_hold=0";
	rc_world(&a, &b, QPIO_QPT_RC, 7);
	rc_world_args = "";
	hdr_to_b(&h, qpio_qp_num(b.qp));
	h.va = (uintptr_t)b.buf + 8192;
	h.rkey = qpio_mr_rkey(b.mr);
	h.dmalen = 3 * 1024;
	h.imm = 0x0c0ffee0;
	for (i = 0; i < 3; i++) {
		qt_fill(pl, 1024, 60 + i);
		h.ackreq = i != 0;
		inject_b(&h, i == 0 ? SOFT_IB_OPC_WRITE_FIRST :
			 i == 1 ? SOFT_IB_OPC_WRITE_MIDDLE :
			 SOFT_IB_OPC_WRITE_LAST_IMM, 0x100 + i, pl, 1024);
	}
	cr_assert_eq(qpio_soft_wire_progress(W.b), 3);
	cr_assert_eq(b_tx_aeths(ops, psn, syn, msn, 8), 2);
	cr_assert_eq(ops[0], SOFT_IB_OPC_ACK);
	cr_assert_eq(psn[0], 0x101, "the middle packet's ACK first");
	cr_assert_eq(syn[0], SOFT_AETH_ACK);
	cr_assert_eq(msn[0], 0);
	cr_assert_eq(ops[1], SOFT_IB_OPC_ACK);
	cr_assert_eq(psn[1], 0x102, "then the RNR NAK of the last packet");
	cr_assert_eq(syn[1] & 0xe0, SOFT_AETH_RNR);
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0);
	/* the frames go nowhere; a receive, and the last packet again */
	{
		void *m;

		while (rte_ring_dequeue(W.b_tx, &m) == 0)
			rte_pktmbuf_free(m);
	}
	qt_post_recv(&b, 5, b.buf, 16);
	qt_fill(pl, 1024, 62);
	h.ackreq = 1;
	inject_b(&h, SOFT_IB_OPC_WRITE_LAST_IMM, 0x102, pl, 1024);
	cr_assert_eq(qpio_soft_wire_progress(W.b), 1);
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.opcode, QPIO_WC_RECV_RDMA_WITH_IMM);
	cr_assert_eq(wc.byte_len, 3 * 1024);
	cr_assert_eq(wc.imm_data, 0x0c0ffee0);
	for (i = 0; i < 3; i++)
		cr_assert(qt_check(b.buf + 8192 + i * 1024, 1024, 60 + i),
			  "packet %u's bytes", i);
	cr_assert_eq(b_tx_aeths(ops, psn, syn, msn, 8), 1);
	cr_assert_eq(psn[0], 0x102);
	cr_assert_eq(syn[0], SOFT_AETH_ACK);
	cr_assert_eq(msn[0], 1);
	rc_world_down(&a, &b);
}

/* Interrupt mode (devargs rx_intr=1): refused where the ethdev raises no
 * rx queue interrupts (net_ring), with nothing left behind; the calls of
 * the mode refused on a device without it, on the fabric and for a queue
 * it does not have, each with its own error. (The mode itself runs in
 * the integration test wire-vhost-events: net_vhost and
 * net_virtio_user raise them.) */
Test(soft_wire, rx_intr_refused_where_the_port_raises_none)
{
	struct rte_ring *r1 = ring("wi1"), *r2 = ring("wi2");
	struct qpio_device *d;
	char nm1[RTE_ETH_NAME_MAX_LEN], nm2[RTE_ETH_NAME_MAX_LEN], a[200];
	int p1;

	p1 = eth_of_rings("wire_i1", r1, r1, nm1);
	eth_of_rings("wire_i2", r2, r2, nm2);
	snprintf(a, sizeof(a), "soft0,wire=%s,ip=10.0.0.1,rx_intr=2", nm1);
	cr_assert_null(qpio_rdma_dev_create(a));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_rdma_dev_create("soft0,rx_intr=1"),
		       "rx_intr= without wire=");
	cr_assert_eq(rte_errno, EINVAL);
	snprintf(a, sizeof(a), "soft0,wire=%s,ip=10.0.0.1,rx_intr=1", nm1);
	cr_assert_null(qpio_rdma_dev_create(a), "net_ring has no rx "
		       "interrupts");
	cr_assert_eq(rte_errno, EOPNOTSUPP, "rte_errno %d", rte_errno);
	/* the port it configured is closed with the refusal (the ethdev
	 * was the device's from its configure on), and the name is free */
	cr_assert(!rte_eth_dev_is_valid_port((uint16_t)p1));
	cr_assert_eq(qpio_port_get_by_name("eth1000"), -ENODEV);

	snprintf(a, sizeof(a), "soft0,wire=%s,ip=10.0.0.1", nm2);
	d = qpio_rdma_dev_create(a);
	cr_assert_not_null(d, "%s", rte_strerror(rte_errno));
	cr_assert_eq(qpio_soft_wire_queue_wait(d, 0, 0), -EOPNOTSUPP);
	cr_assert_eq(qpio_soft_wire_queue_timeout(d, 0), -EOPNOTSUPP);
	cr_assert_eq(qpio_soft_wire_queue_event_fd(d, 0), -EOPNOTSUPP);
	cr_assert_eq(qpio_soft_wire_queue_wait(d, 1, 0), -EINVAL);
	cr_assert_eq(qpio_soft_wire_queue_wait(NULL, 0, 0), -EINVAL);
	/* a port without rx_intr: its interrupt calls refused */
	cr_assert_eq(qpio_port_rx_intr_enable((uint16_t)qpio_port_get_by_name(
		"eth1000"), 0), -EOPNOTSUPP);
	cr_assert_eq(qpio_port_rx_intr_wait((uint16_t)qpio_port_get_by_name(
		"eth1000"), 0, 0), -EOPNOTSUPP);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
	d = qpio_rdma_dev_create("soft0");
	cr_assert_not_null(d);
	cr_assert_eq(qpio_soft_wire_queue_wait(d, 0, 0), -ENODEV);
	cr_assert_eq(qpio_soft_wire_queue_timeout(d, 0), -ENODEV);
	cr_assert_eq(qpio_soft_wire_queue_event_fd(d, 0), -ENODEV);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
	cr_assert_eq(qpio_port_rx_intr_wake(UINT16_MAX - 1, 0), -ENODEV);
	rte_ring_free(r1);
	rte_ring_free(r2);
}

/* ---- interrupt mode on a vhost-user link in this process ---- */

/* A net_vhost ethdev (v) and the name of a net_virtio_user one (u) to
 * join it by a vhost-user socket once the vhost port is configured (the
 * PMD makes the socket then): both PMDs raise rx queue interrupts. */
static unsigned int vhost_gen;

static void
vhost_link(char *sock, size_t socklen, char *v, char *u, unsigned int nq)
{
	unsigned int gen = vhost_gen++;
	char args[160];

	snprintf(sock, socklen, "/tmp/qpio-ut-vhost-%d-%u.sock", (int)getpid(),
		 gen);
	unlink(sock);
	sprintf(v, "net_vhost_i%u", gen);
	sprintf(u, "net_virtio_user_i%u", gen);
	snprintf(args, sizeof(args), "iface=%s,queues=%u", sock, nq);
	cr_assert_eq(rte_vdev_init(v, args), 0, "%s", v);
}

static void
virtio_user_join(const char *sock, const char *u, unsigned int nq)
{
	char args[160];

	snprintf(args, sizeof(args), "path=%s,queues=%u", sock, nq);
	cr_assert_eq(rte_vdev_init(u, args), 0, "%s", u);
}

struct sleeper {
	struct qpio_device *dev;
	unsigned int queue;
	int timeout;
	struct qpio_cq *cq;
	struct qpio_wc wc;
	int got;
	unsigned int waits;
	unsigned int waits_empty;   /* woke with no frame taken */
	int err;
	int done;
	/* waits only, no CQ poll between them (a poll steps the device
	 * too): until the device received one RoCE packet */
	int waits_only;
};

/* Poll; when nothing came, arm the CQ, poll again, sleep on the queue:
 * until one completion (waits_only: the waits alone, until one packet),
 * 20 waits at most. */
static void *
sleeper_run(void *arg)
{
	struct sleeper *s = arg;
	struct qpio_soft_wire_stats st;
	int r;

	while (s->waits < 20) {
		if (s->waits_only) {
			if (qpio_soft_wire_stats_get(s->dev, &st) != 0 ||
			    st.rx_packets != 0)
				break;
		} else {
			if (qpio_cq_poll(s->cq, &s->wc, 1) == 1) {
				s->got = 1;
				break;
			}
			if (qpio_cq_req_notify(s->cq, 0) != 0) {
				s->err = -1;
				break;
			}
			if (qpio_cq_poll(s->cq, &s->wc, 1) == 1) {
				s->got = 1;
				break;
			}
		}
		r = qpio_soft_wire_queue_wait(s->dev, s->queue, s->timeout);
		s->waits++;
		if (r < 0) {
			s->err = r;
			break;
		}
		if (r == 0)
			s->waits_empty++;
		if (!s->waits_only)
			(void)qpio_cq_ack_events(s->cq);
	}
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Two soft wire devices on the two ends of a vhost-user link in this
 * process, A on net_vhost and B on net_virtio_user, and (intr_pair_up())
 * a UD end on each. */
struct intr_pair {
	char sock[96], v[48], u[48];
	struct qpio_device *A, *B;
	struct qt_end a, b;
};

/* The devices alone, on a link of nq queue pairs: A
 * "soft0,wire=<vhost>,ip=10.0.0.1<a_tail>", B
 * "soft1,wire=<virtio_user>,ip=10.0.0.2<b_tail>". */
static void
intr_link_up(struct intr_pair *p, unsigned int nq, const char *a_tail,
	     const char *b_tail)
{
	char args[200];

	vhost_link(p->sock, sizeof(p->sock), p->v, p->u, nq);
	snprintf(args, sizeof(args), "soft0,wire=%s,ip=10.0.0.1%s", p->v,
		 a_tail);
	p->A = qpio_rdma_dev_create(args);
	cr_assert_not_null(p->A, "%s: %s", args, rte_strerror(rte_errno));
	virtio_user_join(p->sock, p->u, nq);
	snprintf(args, sizeof(args), "soft1,wire=%s,ip=10.0.0.2%s", p->u,
		 b_tail);
	p->B = qpio_rdma_dev_create(args);
	cr_assert_not_null(p->B, "%s: %s", args, rte_strerror(rte_errno));
}

/* Both devices closed, the link taken down. */
static void
intr_link_down(struct intr_pair *p)
{
	cr_assert_eq(qpio_rdma_dev_close(p->B), 0);
	cr_assert_eq(qpio_rdma_dev_close(p->A), 0);
	rte_vdev_uninit(p->u);
	rte_vdev_uninit(p->v);
	unlink(p->sock);
}

/* rx_intr=1 on both, one queue pair, a_extra and b_extra added to their
 * devargs, a UD end on each. */
static void
intr_pair_up(struct intr_pair *p, const char *a_extra, const char *b_extra)
{
	char a_tail[160], b_tail[160];

	snprintf(a_tail, sizeof(a_tail), ",rx_intr=1%s", a_extra);
	snprintf(b_tail, sizeof(b_tail), ",rx_intr=1%s", b_extra);
	intr_link_up(p, 1, a_tail, b_tail);
	qt_ud_end_create(&p->a, p->A, QK, NULL);
	qt_ud_end_create(&p->b, p->B, QK, NULL);
}

static void
intr_pair_down(struct intr_pair *p)
{
	qt_end_destroy(&p->a);
	qt_end_destroy(&p->b);
	intr_link_down(p);
}

/* End e sends a 64-byte datagram (wr_id 1) to 10.0.0.9, which nobody
 * has: ARP asks five times, 200 ms apart, then gives up and drops it.
 * @return its AH. */
static struct qpio_ah *
send_to_nobody(struct qt_end *e, uint8_t fill)
{
	const uint8_t ip9[4] = { 10, 0, 0, 9 };
	uint8_t gid9[16];
	struct qpio_ah *ah;

	soft_wire_ipv4_mapped(gid9, ip9);
	ah = ah_to(e, gid9, 1);
	qt_fill(e->buf, 64, fill);
	ud_post_send(e, ah, 5, QK, 0, 64, 1, 0);
	return ah;
}

/* B's receive posted (wr_id 7, 0xee around it), fn started on its own
 * thread as B's lcore (s: zeroed, its timeout set), then A's 100-byte
 * datagram to B (wr_id 2): A polls (its steps read B's ARP answer and
 * send the datagram they held) until B's thread is done, and its one
 * completion is checked. */
static void
send_to_b_thread(struct intr_pair *p, struct sleeper *s,
		 void *(*fn)(void *))
{
	struct qpio_wc wc;
	struct qpio_ah *ah;
	pthread_t th;
	uint8_t gidb[16];
	unsigned int n;
	uint64_t end;

	memset(p->b.buf, 0xee, 256);
	qt_post_recv(&p->b, 7, p->b.buf, 40 + 100);
	s->dev = p->B;
	s->cq = p->b.cq;
	cr_assert_eq(pthread_create(&th, NULL, fn, s), 0);
	soft_wire_ipv4_mapped(gidb, V4_B);
	ah = ah_to(&p->a, gidb, 1);
	qt_fill(p->a.buf + 512, 100, 77);
	ud_post_send(&p->a, ah, qpio_qp_num(p->b.qp), QK, 512, 100, 2, 0);
	end = rte_get_tsc_cycles() + 10 * rte_get_tsc_hz();
	for (n = 0; !__atomic_load_n(&s->done, __ATOMIC_ACQUIRE) &&
	     rte_get_tsc_cycles() < end; )
		n += qpio_cq_poll(p->a.cq, &wc, 1);
	cr_assert_eq(n, 1, "A's datagram: %u completions", n);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 2);
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(s->err, 0, "B's lcore: %d", s->err);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
}

/* B's completion of send_to_b_thread()'s datagram, and its bytes. */
static void
check_b_received(const struct intr_pair *p, const struct qpio_wc *wc)
{
	cr_assert_eq(wc->status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc->wr_id, 7);
	cr_assert_eq(wc->byte_len, 140);
	cr_assert(qt_check(p->b.buf + 40, 100, 77));
	cr_assert_eq(p->b.buf[140], 0xee);
}

/* The sleeper wakes at its timers and at frames. A datagram to an address
 * nobody has waits for ARP: every wait of the sender returns at the next
 * request (200 ms apart), so all five requests go out and then the give-up
 * (a sleep that ignored the timers would give up after one). Then a
 * datagram to a device whose lcore sleeps: the ARP request wakes it (it
 * answers), the datagram wakes it again; every sleep of that lcore ends
 * with a frame taken, none by its 10 s timeout, and the message arrives
 * byte for byte. */
Test(soft_wire, rx_intr_sleeper_wakes_for_timers_and_frames, .timeout = 60)
{
	struct intr_pair p;
	struct qpio_device *A, *B;
	struct qpio_ah *ah;
	struct qpio_wc wc;
	struct sleeper s;
	unsigned int n;
	int t;

	intr_pair_up(&p, "", "");
	A = p.A;
	B = p.B;
	cr_assert_eq(qpio_soft_wire_queue_timeout(A, 0), -1, "no timer yet");
	cr_assert_geq(qpio_soft_wire_queue_event_fd(B, 0), 0);

	ah = send_to_nobody(&p.a, 3);
	cr_assert_eq(wst(A).arp_tx, 1, "the first request at the post");
	t = qpio_soft_wire_queue_timeout(A, 0);
	cr_assert(t >= 0 && t <= 200, "next ARP request in %d ms", t);
	for (n = 0; n < 12 && wst(A).tx_no_neigh == 0; n++)
		cr_assert_geq(qpio_soft_wire_queue_wait(A, 0, 10000), 0);
	cr_assert_eq(wst(A).tx_no_neigh, 1, "given up after %u waits", n);
	cr_assert_eq(wst(A).arp_tx, 5, "each timer woke the sleeper: %lu "
		     "requests", (unsigned long)wst(A).arp_tx);
	cr_assert_eq(n, 5, "one request a wait, then the give-up: %u waits", n);
	cr_assert_eq(qpio_soft_wire_queue_timeout(A, 0), -1);
	cr_assert_eq(qpio_cq_poll(p.a.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(qpio_ah_destroy(ah), 0);

	/* B sleeps on its own thread; A sends to it */
	memset(&s, 0, sizeof(s));
	s.timeout = 10000;
	send_to_b_thread(&p, &s, sleeper_run);
	cr_assert_eq(s.got, 1, "B's receive never completed (%u sleeps; B rx "
		     "%lu arp_rx %lu not_roce %lu no_qp %lu; A tx %lu)", s.waits,
		     (unsigned long)wst(B).rx_packets,
		     (unsigned long)wst(B).arp_rx,
		     (unsigned long)wst(B).rx_not_roce,
		     (unsigned long)wst(B).rx_no_qp,
		     (unsigned long)wst(A).tx_packets);
	cr_assert_geq(s.waits, 1, "B never slept");
	cr_assert_eq(s.waits_empty, 0, "%u of B's %u sleeps ended with no frame",
		     s.waits_empty, s.waits);
	check_b_received(&p, &s.wc);
	cr_assert_eq(wst(B).arp_tx, 1, "B answered A's request");
	cr_assert_eq(wst(B).rx_packets, 1);
	intr_pair_down(&p);
}

/* An lcore that waits (rx_intr=1) on a device whose RC QP is connected
 * to itself. A looped-back packet raises no interrupt of the port: the
 * queue's event fd, quiet before, is readable at once after the SEND's
 * doorbell looped its packets back (lo_send()'s wake). Then the waits'
 * steps take them: the first wait the SEND's three packets (its step
 * loops back the ACK), the second that ACK. No sleep in either; both
 * completions and the bytes exact. */
Test(soft_wire, rx_intr_wait_takes_what_the_device_looped_back, .timeout = 60)
{
	struct qpio_async_event ev;
	struct pollfd pfd = { .events = POLLIN };
	struct intr_pair p;
	struct qpio_wc wc[2];
	struct qt_end r;
	uint64_t sleeps;
	int n, i;

	intr_link_up(&p, 1, ",rx_intr=1", ",rx_intr=1");
	/* the vhost-user link up first (a peer closed while it still
	 * negotiates can crash net_virtio's interrupt thread) */
	cr_assert_eq(steps_for_event(p.A, 10000, &ev), 0, "no PORT_ACTIVE");
	cr_assert_eq(ev.event_type, QPIO_EVENT_PORT_ACTIVE);
	/* the event fd, drained by short waits until quiet */
	pfd.fd = qpio_soft_wire_queue_event_fd(p.A, 0);
	cr_assert_geq(pfd.fd, 0);
	for (i = 0; i < 20 && poll(&pfd, 1, 0) == 1; i++)
		cr_assert_geq(qpio_soft_wire_queue_wait(p.A, 0, 1), 0);
	cr_assert_eq(poll(&pfd, 1, 0), 0, "the event fd stays readable");
	sleeps = wst(p.A).intr_sleeps;
	self_send(&r, p.A, 8192, 4);
	cr_assert_eq(poll(&pfd, 1, 0), 1, "no wake for the looped-back SEND");
	n = qpio_soft_wire_queue_wait(p.A, 0, 10000);
	cr_assert_eq(n, 3, "the SEND's packets: %d", n);
	n = qpio_soft_wire_queue_wait(p.A, 0, 10000);
	cr_assert_eq(n, 1, "the ACK: %d", n);
	cr_assert_eq(wst(p.A).intr_sleeps, sleeps);
	cr_assert_eq(qpio_cq_poll(r.cq, wc, 2), 2);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[0].wr_id, 1);
	cr_assert_eq(wc[0].byte_len, 3000);
	cr_assert(qt_check(r.buf + 8192, 3000, 4));
	cr_assert_eq(wc[1].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[1].wr_id, 10);
	cr_assert_eq(wc[1].opcode, QPIO_WC_SEND);
	cr_assert_eq(wst(p.A).tx_loopback, 4);
	cr_assert_eq(wst(p.B).rx_packets, 0);
	qt_end_destroy(&r);
	intr_link_down(&p);
}

/* rx_intr_spin=US: a wait polls the queue for up to US microseconds
 * before it sleeps. Refused without rx_intr=1, without wire= and above
 * 1000000. With 1 s of it: a sender's waits for ARP each end at the next
 * request's timer, which their polling never passes (one request a wait:
 * a spin that ran past the timers would send two or more in one wait,
 * then give up), and none of them sleeps; a device whose lcore only
 * waits takes the peer's ARP request and then its datagram while it
 * polls, every wait ending in its spin with frames (intr_spin_takes) and
 * none asleep (intr_sleeps 0); and the device without the spin sleeps in
 * each wait for its timers, one request a wait. */
Test(soft_wire, rx_intr_spin_polls_before_it_sleeps, .timeout = 60)
{
	char sock[96], v[48], u[48], args[200];
	struct intr_pair p;
	struct qpio_device *A, *B;
	struct qpio_ah *ah;
	struct qpio_wc wc;
	struct sleeper s;
	unsigned int n;
	uint64_t arp;

	cr_assert_null(qpio_rdma_dev_create("soft0,rx_intr_spin=5"),
		       "rx_intr_spin= without wire=");
	cr_assert_eq(rte_errno, EINVAL);
	vhost_link(sock, sizeof(sock), v, u, 1);
	snprintf(args, sizeof(args), "soft0,wire=%s,ip=10.0.0.1,"
		 "rx_intr_spin=5", v);
	cr_assert_null(qpio_rdma_dev_create(args), "without rx_intr=1");
	cr_assert_eq(rte_errno, EINVAL);
	snprintf(args, sizeof(args), "soft0,wire=%s,ip=10.0.0.1,"
		 "rx_intr=1,rx_intr_spin=1000001", v);
	cr_assert_null(qpio_rdma_dev_create(args), "above 1 s");
	cr_assert_eq(rte_errno, EINVAL);
	rte_vdev_uninit(v);
	unlink(sock);

	/* A sleeps at once, B polls 1 s first */
	intr_pair_up(&p, "", ",rx_intr_spin=1000000");
	A = p.A;
	B = p.B;

	/* B's datagram to an address nobody has: five requests 200 ms
	 * apart, then the give-up; each wait ends at the next of them (A
	 * sends nothing meanwhile; what came before, and its interrupt,
	 * taken first: a wait of timeout 0 never sleeps nor polls) */
	while (qpio_soft_wire_queue_wait(B, 0, 0) > 0)
		;
	ah = send_to_nobody(&p.b, 3);
	cr_assert_eq(wst(B).arp_tx, 1, "the first request at the post");
	for (n = 0; n < 12 && wst(B).tx_no_neigh == 0; n++) {
		arp = wst(B).arp_tx;
		cr_assert_eq(qpio_soft_wire_queue_wait(B, 0, 10000), 0,
			     "wait %u: a timer, no frame", n);
		if (wst(B).tx_no_neigh == 0)
			cr_assert_eq(wst(B).arp_tx, arp + 1, "wait %u sent %lu "
				     "requests", n,
				     (unsigned long)(wst(B).arp_tx - arp));
		else
			cr_assert_eq(wst(B).arp_tx, arp, "the give-up sends "
				     "no request");
	}
	cr_assert_eq(wst(B).tx_no_neigh, 1);
	cr_assert_eq(wst(B).arp_tx, 5);
	cr_assert_eq(n, 5, "four requests and the give-up: %u waits", n);
	cr_assert_eq(wst(B).intr_sleeps, 0, "the spin outlasts each timer");
	cr_assert_eq(wst(B).intr_spin_takes, 0, "no frame came");
	cr_assert_eq(qpio_cq_poll(p.b.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(qpio_ah_destroy(ah), 0);

	/* A, without the spin, sleeps in each wait: the timers of its
	 * datagram to nobody (B's requests and their interrupt taken
	 * first) */
	while (qpio_soft_wire_queue_wait(A, 0, 0) > 0)
		;
	ah = send_to_nobody(&p.a, 4);
	for (n = 0; n < 12 && wst(A).tx_no_neigh == 0; n++)
		cr_assert_eq(qpio_soft_wire_queue_wait(A, 0, 10000), 0);
	cr_assert_eq(n, 5, "A: %u waits, %lu sleeps, arp_tx %lu", n,
		     (unsigned long)wst(A).intr_sleeps,
		     (unsigned long)wst(A).arp_tx);
	/* once a wait at least (again after a wake that brought nothing,
	 * or a sleep whose clock ran ahead of the TSC's deadline) */
	cr_assert_geq(wst(A).intr_sleeps, 5, "A slept %lu times",
		      (unsigned long)wst(A).intr_sleeps);
	cr_assert_eq(wst(A).intr_spin_takes, 0);
	cr_assert_eq(qpio_cq_poll(p.a.cq, &wc, 1), 1);
	cr_assert_eq(qpio_ah_destroy(ah), 0);

	/* B's lcore waits on its own thread, nothing else steps B; A
	 * sends to it */
	memset(&s, 0, sizeof(s));
	s.timeout = 10000;
	s.waits_only = 1;
	send_to_b_thread(&p, &s, sleeper_run);
	cr_assert_eq(wst(B).rx_packets, 1, "B's datagram never came");
	/* the ARP request, then the datagram: two waits at least, each
	 * taking in its spin */
	cr_assert_geq(s.waits, 2, "%u waits", s.waits);
	cr_assert_eq(s.waits_empty, 0);
	cr_assert_eq(wst(B).intr_sleeps, 0, "B slept %lu times",
		     (unsigned long)wst(B).intr_sleeps);
	cr_assert_eq(wst(B).intr_spin_takes, s.waits, "%lu of %u waits took "
		     "frames in their spin",
		     (unsigned long)wst(B).intr_spin_takes, s.waits);
	cr_assert_eq(qpio_cq_poll(p.b.cq, &wc, 1), 1);
	check_b_received(&p, &wc);
	intr_pair_down(&p);
}

static int queue0_stop;

/* Queue 0's lcore of a device of two queues: sleeps on its port queue
 * until told to stop. */
static void *
queue0_run(void *arg)
{
	struct qpio_device *d = arg;

	while (!__atomic_load_n(&queue0_stop, __ATOMIC_ACQUIRE))
		if (qpio_soft_wire_queue_wait(d, 0, 100) < 0)
			break;
	return NULL;
}

/* Two queues, each lcore asleep on its own (queues=2, rx_intr=1): the
 * datagram comes in on port queue 0 (the peer's flow is its choice) for
 * a QP of queue 1. Queue 0's lcore wakes for it and hands it to queue 1,
 * whose lcore sleeps with no timeout and no timer: only the hand-over's
 * wake can end that sleep (without it the test times out). */
Test(soft_wire, rx_intr_handed_frame_wakes_its_queue, .timeout = 60)
{
	struct intr_pair p;
	struct qpio_soft_wire_stats q0, q1;
	struct qpio_device *A, *B;
	struct qt_end ua, ub;
	struct qpio_ah *ah;
	struct qpio_wc wc;
	struct sleeper s;
	pthread_t th0, th1;
	uint8_t ga[16];
	unsigned int n;
	uint64_t end;

	intr_link_up(&p, 2, ",rx_intr=1,queues=2", ",rx_intr=1,queues=2");
	A = p.A;
	B = p.B;
	qend_create(&ua, A, QPIO_QPT_UD, 1);
	qend_create(&ub, B, QPIO_QPT_UD, 0);
	qt_ud_qp_rts(ua.qp, QK);
	qt_ud_qp_rts(ub.qp, QK);
	memset(ua.buf, 0xee, 256);
	qt_post_recv(&ua, 11, ua.buf, 40 + 200);

	__atomic_store_n(&queue0_stop, 0, __ATOMIC_RELEASE);
	memset(&s, 0, sizeof(s));
	s.dev = A;
	s.queue = 1;
	s.cq = ua.cq;
	s.timeout = -1;
	cr_assert_eq(pthread_create(&th0, NULL, queue0_run, A), 0);
	cr_assert_eq(pthread_create(&th1, NULL, sleeper_run, &s), 0);
	soft_wire_ipv4_mapped(ga, V4_A);
	ah = ah_to(&ub, ga, 1);
	qt_fill(ub.buf, 200, 21);
	ud_post_send(&ub, ah, qpio_qp_num(ua.qp), QK, 0, 200, 5, 0);
	/* B's lcore polls (its steps send the ARP request, read A's reply
	 * and send the datagram it held) until A's queue 1 is done */
	end = rte_get_tsc_cycles() + 10 * rte_get_tsc_hz();
	for (n = 0; !__atomic_load_n(&s.done, __ATOMIC_ACQUIRE) &&
	     rte_get_tsc_cycles() < end; ) {
		n += qpio_cq_poll(ub.cq, &wc, 1);
		qpio_soft_wire_progress(B);
	}
	cr_assert(__atomic_load_n(&s.done, __ATOMIC_ACQUIRE),
		  "queue 1 never woke for the handed datagram");
	cr_assert_eq(pthread_join(th1, NULL), 0);
	__atomic_store_n(&queue0_stop, 1, __ATOMIC_RELEASE);
	cr_assert_eq(pthread_join(th0, NULL), 0);
	cr_assert_eq(n, 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(s.err, 0, "queue 1: %d", s.err);
	cr_assert_eq(s.got, 1);
	cr_assert_geq(s.waits, 1, "queue 1 never slept");
	cr_assert_eq(s.waits_empty, 0);
	cr_assert_eq(s.wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(s.wc.wr_id, 11);
	cr_assert_eq(s.wc.byte_len, 240);
	cr_assert(qt_check(ua.buf + 40, 200, 21));
	cr_assert_eq(ua.buf[240], 0xee);
	cr_assert_eq(qpio_soft_wire_queue_stats_get(A, 0, &q0), 0);
	cr_assert_eq(qpio_soft_wire_queue_stats_get(A, 1, &q1), 0);
	cr_assert_eq(q0.rx_steered, 1, "port queue 0 took it and handed it");
	cr_assert_eq(q0.rx_steer_dropped, 0);
	cr_assert_eq(q1.rx_packets, 1);
	cr_assert_eq(q0.rx_packets, 0);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_end_destroy(&ua);
	qt_end_destroy(&ub);
	intr_link_down(&p);
}

/* One wait of an lcore on a queue, no timeout: only a wake with a frame
 * for it ends it. */
struct one_wait {
	struct qpio_device *dev;
	unsigned int queue;
	int ret;
	int done;
};

static void *
one_wait_run(void *arg)
{
	struct one_wait *o = arg;

	o->ret = qpio_soft_wire_queue_wait(o->dev, o->queue, -1);
	__atomic_store_n(&o->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Frames held for ARP and released to a queue whose lcore sleeps wake
 * it (queues=2, rx_intr=1): A's UD QPs of vectors 1 and 0 each send a
 * datagram to B before B's MAC is known, while queue 0's lcore sleeps
 * in one wait with no timeout. Queue 1 (this thread) asks, learns B from
 * the answer, sends its own datagram and releases queue 0's. Only the
 * release's wake can make queue 0's lcore send it on tx queue 0 while it
 * is still in its wait (without the wake B never gets it and the test
 * fails); that wake took no frame, so the lcore sleeps again. B's
 * datagram to queue 0's QP, handed over by queue 1, then ends the wait
 * with one frame. */
Test(soft_wire, rx_intr_released_frames_wake_their_queue, .timeout = 60)
{
	struct intr_pair p;
	struct qpio_device *A, *B;
	struct qt_end a0, a1, b1;
	struct qpio_ah *ah0, *ah1, *ahb;
	struct qpio_wc wc[4];
	struct one_wait o;
	pthread_t th;
	uint8_t ga[16];
	unsigned int n, k, sends, recvs;
	uint64_t end, slept;
	bool asleep;

	intr_link_up(&p, 2, ",rx_intr=1,queues=2", ",queues=2");
	A = p.A;
	B = p.B;
	held_ends_up(A, B, &a0, &a1, &b1);
	memset(a0.buf + 1024, 0xee, 512);
	qt_post_recv(&a0, 12, a0.buf + 1024, 40 + 128);
	soft_wire_ipv4_mapped(ga, V4_A);

	/* queue 0's lcore asleep before anything is sent */
	memset(&o, 0, sizeof(o));
	o.dev = A;
	o.queue = 0;
	cr_assert_eq(pthread_create(&th, NULL, one_wait_run, &o), 0);
	end = rte_get_tsc_cycles() + 10 * rte_get_tsc_hz();
	while (qst(A, 0).intr_sleeps == 0 && rte_get_tsc_cycles() < end)
		rte_delay_us_sleep(1000);
	/* (the link's first interrupt may wake it once for nothing: it
	 * sleeps again) */
	rte_delay_us_sleep(100000);
	slept = qst(A, 0).intr_sleeps;
	cr_assert_geq(slept, 1, "queue 0's lcore asleep");
	cr_assert(!__atomic_load_n(&o.done, __ATOMIC_ACQUIRE));

	held_sends(A, &a0, &a1, &b1, &ah0, &ah1);

	/* this thread is queue 1's lcore on A and B's only one; queue 0
	 * of A is left to its sleeper */
	end = rte_get_tsc_cycles() + 10 * rte_get_tsc_hz();
	for (n = 0; n < 2 && rte_get_tsc_cycles() < end; ) {
		(void)qpio_cq_poll(a1.cq, wc, 1);
		n += qpio_cq_poll(b1.cq, wc + n, 2 - n);
		qpio_soft_wire_progress(B);
	}
	asleep = !__atomic_load_n(&o.done, __ATOMIC_ACQUIRE);
	cr_assert_eq(n, 2, "B took %u datagrams: queue 0's never left, its "
		     "lcore not woken by the release", n);
	cr_assert(asleep, "queue 0's wait ended before B's datagram came");
	held_check_b(&b1, wc);
	cr_assert_eq(qst(A, 1).arp_rx, 1, "B's answer came in on queue 1");
	cr_assert_eq(qst(A, 1).tx_packets, 1, "queue 1's datagram");
	cr_assert_eq(qst(A, 0).tx_packets, 1, "queue 0's datagram, sent by "
		     "queue 0's lcore");
	cr_assert_eq(wst(A).tx_no_neigh, 0);
	/* the release's wake took no frame: queue 0's lcore sleeps again */
	end = rte_get_tsc_cycles() + 10 * rte_get_tsc_hz();
	while (qst(A, 0).intr_sleeps <= slept && rte_get_tsc_cycles() < end)
		rte_delay_us_sleep(1000);
	cr_assert_gt(qst(A, 0).intr_sleeps, slept, "queue 0 slept again");
	slept = qst(A, 0).intr_sleeps;
	cr_assert(!__atomic_load_n(&o.done, __ATOMIC_ACQUIRE));

	/* B's datagram to queue 0's QP (in on A's port queue 1, handed
	 * over) ends the wait */
	ahb = ah_to(&b1, ga, 1);
	qt_fill(b1.buf + 2048, 128, 12);
	ud_post_send(&b1, ahb, qpio_qp_num(a0.qp), QK, 2048, 128, 5, 0);
	end = rte_get_tsc_cycles() + 10 * rte_get_tsc_hz();
	for (n = 0; !__atomic_load_n(&o.done, __ATOMIC_ACQUIRE) &&
	     rte_get_tsc_cycles() < end; ) {
		(void)qpio_cq_poll(a1.cq, wc, 1);
		n += qpio_cq_poll(b1.cq, wc, 1);
		qpio_soft_wire_progress(B);
	}
	cr_assert(__atomic_load_n(&o.done, __ATOMIC_ACQUIRE),
		  "queue 0 never woke for the handed datagram");
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(o.ret, 1, "the wait's last step took %d frames", o.ret);
	cr_assert_eq(qst(A, 0).intr_sleeps, slept, "the handed frame's wake "
		     "took it: no sleep more");
	cr_assert_eq(qst(A, 1).rx_steered, 1, "handed to queue 0");
	for (; n < 1 && rte_get_tsc_cycles() < end; )
		n += qpio_cq_poll(b1.cq, wc, 1);
	cr_assert_eq(n, 1, "B's send completion");
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[0].wr_id, 5);
	/* a0's CQ: its send's completion and the datagram */
	sends = recvs = 0;
	for (n = 0; n < 2 && rte_get_tsc_cycles() < end; )
		n += qpio_cq_poll(a0.cq, wc + n, 2 - n);
	cr_assert_eq(n, 2);
	for (k = 0; k < 2; k++) {
		cr_assert_eq(wc[k].status, QPIO_WC_SUCCESS);
		if (wc[k].wr_id == 0) {
			sends++;
		} else {
			cr_assert_eq(wc[k].wr_id, 12);
			cr_assert_eq(wc[k].byte_len, 40 + 128);
			recvs++;
		}
	}
	cr_assert_eq(sends, 1);
	cr_assert_eq(recvs, 1);
	cr_assert(qt_check(a0.buf + 1024 + 40, 128, 12));
	cr_assert_eq(a0.buf[1024 + 40 + 128], 0xee);
	cr_assert_eq(qpio_ah_destroy(ahb), 0);
	cr_assert_eq(qpio_ah_destroy(ah0), 0);
	cr_assert_eq(qpio_ah_destroy(ah1), 0);
	qt_end_destroy(&a0);
	qt_end_destroy(&a1);
	qt_end_destroy(&b1);
	intr_link_down(&p);
}

/* A wait with a timeout: one qpio_soft_wire_queue_wait() of o->queue;
 * o->ret is set to o->timeout beforehand by the caller. */
static void *
timed_wait_run(void *arg)
{
	struct one_wait *o = arg;

	o->ret = qpio_soft_wire_queue_wait(o->dev, o->queue, o->ret);
	__atomic_store_n(&o->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* A link that goes down while the device's only lcore sleeps on it
 * (rx_intr=1): the vhost-user peer leaves (its device closed, its
 * net_virtio_user removed: net_vhost's link goes down), which brings no
 * frame; the sleep stops at the link's next read, raises
 * QPIO_EVENT_PORT_ERR and goes on sleeping as the same sleep, to the
 * wait's timeout (3 s): the event comes while the lcore is still in its
 * wait, the wait took nothing, and its reads of the link (about 30) are
 * not counted as sleeps. (A started before its peer, its link
 * down: the peer's arrival raised QPIO_EVENT_PORT_ACTIVE first.) */
Test(soft_wire, rx_intr_sleeper_sees_the_link_go_down, .timeout = 60)
{
	struct intr_pair p;
	struct qpio_async_event ev;
	struct qpio_port_attr pa;
	struct one_wait o;
	pthread_t th;
	uint64_t end, slept;
	int r;

	intr_pair_up(&p, "", "");
	/* A started before its vhost-user peer joined, its link down: the
	 * peer's arrival brought it up, which A's steps report */
	cr_assert_eq(steps_for_event(p.A, 10000, &ev), 0, "no PORT_ACTIVE");
	cr_assert_eq(ev.event_type, QPIO_EVENT_PORT_ACTIVE);
	cr_assert_eq(ev.element.port_num, 1);
	cr_assert_eq(qpio_rdma_port_query(p.A, 1, &pa), 0);
	cr_assert_eq(pa.state, QPIO_PORT_ACTIVE);
	cr_assert_eq(wst(p.A).link_changes, 1);
	memset(&o, 0, sizeof(o));
	o.dev = p.A;
	o.queue = 0;
	o.ret = 3000;
	cr_assert_eq(pthread_create(&th, NULL, timed_wait_run, &o), 0);
	end = rte_get_tsc_cycles() + 10 * rte_get_tsc_hz();
	while (qst(p.A, 0).intr_sleeps == 0 && rte_get_tsc_cycles() < end)
		rte_delay_us_sleep(1000);
	cr_assert_geq(qst(p.A, 0).intr_sleeps, 1, "A's lcore asleep");
	rte_delay_us_sleep(50000);
	slept = qst(p.A, 0).intr_sleeps;

	/* B leaves */
	qt_end_destroy(&p.b);
	cr_assert_eq(qpio_rdma_dev_close(p.B), 0);
	rte_vdev_uninit(p.u);
	end = rte_get_tsc_cycles() + 10 * rte_get_tsc_hz();
	while ((r = qpio_rdma_get_async_event(p.A, &ev)) == -EAGAIN &&
	       !__atomic_load_n(&o.done, __ATOMIC_ACQUIRE) &&
	       rte_get_tsc_cycles() < end)
		rte_delay_us_sleep(1000);
	cr_assert_eq(r, 0, "no event while A's lcore slept (%d)", r);
	cr_assert(!__atomic_load_n(&o.done, __ATOMIC_ACQUIRE),
		  "the event came only after the wait");
	cr_assert_eq(ev.event_type, QPIO_EVENT_PORT_ERR);
	cr_assert_eq(ev.element.port_num, 1);
	cr_assert_eq(qpio_rdma_port_query(p.A, 1, &pa), 0);
	cr_assert_eq(pa.state, QPIO_PORT_DOWN);
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(o.ret, 0, "the wait took %d frames", o.ret);
	/* about 30 reads of the link in the wait's 3 s, none a sleep more
	 * (the peer's leaving may wake it once, for nothing) */
	cr_assert_leq(qst(p.A, 0).intr_sleeps, slept + 1, "the link's reads "
		      "counted as sleeps: %lu sleeps, %lu before",
		      (unsigned long)qst(p.A, 0).intr_sleeps,
		      (unsigned long)slept);
	cr_assert_eq(wst(p.A).link_changes, 2);
	cr_assert_eq(qpio_rdma_get_async_event(p.A, &ev), -EAGAIN);
	qt_end_destroy(&p.a);
	cr_assert_eq(qpio_rdma_dev_close(p.A), 0);
	rte_vdev_uninit(p.v);
	unlink(p.sock);
}
