/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the soft wire device's receive parser
 * (soft_wire_parse, drivers/net/soft/soft_wire_pkt.c) on one Ethernet
 * frame per input, copied into a buffer of exactly its size so that a
 * read past the frame is caught. The parser masks header bytes in place
 * for the ICRC and writes the 8 bytes before the IP header: the frame must
 * come out of every call byte for byte as it went in, of the parser's and
 * of soft_wire_icrc() called on its own over any bytes. A frame that parses
 * must have its payload, pad and ICRC inside the IP packet, which lies
 * inside the frame, the lengths of its headers adding up to the UDP
 * length, a destination that is one of the device's addresses, and must
 * parse again, field for field, once rebuilt by soft_wire_build().
 * Inputs to a unicast MAC get their ICRC and checksums made right first
 * (fix_sums), so that mutations reach the checks behind them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ip.h>

#include "fuzz_common.h"
#include "soft_wire_pkt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The device's addresses: 10.0.0.2 (IPv4-mapped) and fd00::2, the
 * destinations of the seeds. */
static const uint8_t my_ip[2][16] = {
	{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2 },
	{ 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 },
};

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static void
same_bytes(const uint8_t *frame, const uint8_t *data, size_t size,
	   const char *call)
{
	size_t i;

	for (i = 0; i < size; i++)
		if (frame[i] != data[i])
			FUZZ_FAIL("%s changed byte %zu of %zu: 0x%02x, was 0x%02x",
				  call, i, size, frame[i], data[i]);
}

/* The rules of a frame that parsed (p from soft_wire_parse on frame). */
static void
check_parsed(const uint8_t *frame, size_t size, const struct soft_wire_pkt *p)
{
	const uint8_t *l3 = frame + SOFT_ETH_LEN;
	uint32_t iplen = p->ipv6 ? SOFT_IPV6_LEN : SOFT_IPV4_LEN;
	uint32_t l3len, ulen, ext, pad;
	const uint8_t *udp, *bth, *end;

	if (p->l3 != l3)
		FUZZ_FAIL("IP header at offset %td", p->l3 - frame);
	if (be16(frame + 12) != (p->ipv6 ? 0x86dd : 0x0800))
		FUZZ_FAIL("ethertype 0x%04x parsed as IPv%d", be16(frame + 12),
			  p->ipv6 ? 6 : 4);
	l3len = p->ipv6 ? SOFT_IPV6_LEN + be16(l3 + 4) : be16(l3 + 2);
	if (SOFT_ETH_LEN + (size_t)l3len > size)
		FUZZ_FAIL("IP packet of %u bytes in a frame of %zu", l3len, size);
	udp = l3 + iplen;
	bth = udp + SOFT_UDP_LEN;
	ulen = be16(udp + 4);
	if (ulen != l3len - iplen)
		FUZZ_FAIL("UDP length %u in an IP packet of %u", ulen, l3len);
	if (be16(udp + 2) != SOFT_ROCE_UDP_PORT)
		FUZZ_FAIL("UDP port %u", be16(udp + 2));
	if (p->opcode != bth[0] || soft_wire_opcode(p->opcode) == 0 ||
	    p->has != soft_wire_opcode(p->opcode))
		FUZZ_FAIL("opcode 0x%02x accepted (BTH 0x%02x, has 0x%x)",
			  p->opcode, bth[0], p->has);
	if (p->has_imm != !!(p->has & SOFT_WIRE_HAS_IMM))
		FUZZ_FAIL("has_imm %u with opcode 0x%02x", p->has_imm, p->opcode);
	if ((bth[1] & 0x0f) != 0)
		FUZZ_FAIL("TVer %u accepted", bth[1] & 0x0f);
	ext = soft_wire_ext_len(p->opcode);
	pad = (bth[1] >> SOFT_BTH_PAD_SHIFT) & 3u;
	if (!(p->has & SOFT_WIRE_HAS_PAYLOAD) && (p->len != 0 || pad != 0))
		FUZZ_FAIL("opcode 0x%02x without data: %u bytes, pad %u",
			  p->opcode, p->len, pad);
	if (p->payload != bth + SOFT_BTH_LEN + ext)
		FUZZ_FAIL("payload at offset %td, headers end at %td",
			  p->payload - frame, bth + SOFT_BTH_LEN + ext - frame);
	if ((uint64_t)p->len + SOFT_UDP_LEN + SOFT_BTH_LEN + ext + pad +
	    SOFT_ICRC_LEN != ulen)
		FUZZ_FAIL("payload %u + headers %u + pad %u + ICRC 4 != UDP "
			  "length %u", p->len, SOFT_UDP_LEN + SOFT_BTH_LEN + ext,
			  pad, ulen);
	end = p->payload + p->len + pad + SOFT_ICRC_LEN;
	if (end != l3 + l3len || end > frame + size)
		FUZZ_FAIL("payload, pad and ICRC end at offset %td, the IP packet "
			  "at %td, the frame at %zu", end - frame,
			  l3 + l3len - frame, size);
	if (p->dqpn > 0xffffff || p->src_qpn > 0xffffff || p->psn > 0xffffff)
		FUZZ_FAIL("24-bit field over 24 bits: dqpn 0x%x src_qpn 0x%x "
			  "psn 0x%x", p->dqpn, p->src_qpn, p->psn);
	if (p->se > 1 || p->ackreq > 1 || p->ipv6 > 1 || p->has_imm > 1)
		FUZZ_FAIL("a flag not 0 or 1");
	if (!p->ipv6 && p->flow_label != 0)
		FUZZ_FAIL("IPv4 with flow label 0x%x", p->flow_label);
	if (p->flow_label > 0xfffff)
		FUZZ_FAIL("flow label 0x%x over 20 bits", p->flow_label);
	if (memcmp(p->dip, my_ip[p->ipv6 ? 1 : 0], 16) != 0 ||
	    soft_wire_gid_is_v4(p->sip) != !p->ipv6)
		FUZZ_FAIL("delivered to an address not the device's, or an "
			  "address not of the packet's IP version (IPv4 as "
			  "::ffff:a.b.c.d, IPv6 never so)");
}

/* p rebuilt by soft_wire_build() must parse to the same fields. */
static void
check_rebuilt(const uint8_t *frame, const struct soft_wire_pkt *p)
{
	struct soft_wire_hdr h;
	struct soft_wire_seg seg = { p->payload, p->len };
	struct soft_wire_pkt q;
	enum soft_wire_drop d;
	uint32_t flen;
	uint8_t *g;

	memset(&h, 0, sizeof(h));
	memcpy(&h.dmac, frame, 6);
	memcpy(&h.smac, frame + 6, 6);
	h.ipv6 = p->ipv6;
	/* the build takes IPv4 addresses as 4 bytes, the parse gives GIDs */
	memcpy(h.sip, p->ipv6 ? p->sip : p->sip + 12, p->ipv6 ? 16 : 4);
	memcpy(h.dip, p->ipv6 ? p->dip : p->dip + 12, p->ipv6 ? 16 : 4);
	h.tclass = p->tclass;
	h.hop_limit = p->hop_limit;
	h.flow_label = p->flow_label;
	h.udp_sport = p->udp_sport;
	h.pkey = p->pkey;
	h.se = p->se;
	h.ackreq = p->ackreq;
	h.opcode = p->opcode;
	h.imm = p->imm;
	h.va = p->va;
	h.rkey = p->rkey;
	h.dmalen = p->dmalen;
	h.swap_add = p->swap_add;
	h.compare = p->compare;
	h.aeth_syn = p->aeth_syn;
	h.msn = p->msn;
	h.atomic_orig = p->atomic_orig;
	h.dqpn = p->dqpn;
	h.psn = p->psn;
	h.qkey = p->qkey;
	h.src_qpn = p->src_qpn;
	flen = soft_wire_frame_len(&h, p->len);
	g = malloc(flen);
	if (g == NULL)
		abort();
	if (soft_wire_build(g, &h, &seg, 1, p->len) != flen)
		FUZZ_FAIL("built frame not of soft_wire_frame_len()");
	memset(&q, 0, sizeof(q));
	d = soft_wire_parse(g, flen, my_ip, 2, &q);
	if (d != SOFT_WIRE_OK)
		FUZZ_FAIL("rebuilt frame of %u bytes refused: %s", flen,
			  soft_wire_drop_name(d));
	if (q.opcode != p->opcode || q.se != p->se || q.ipv6 != p->ipv6 ||
	    q.tclass != p->tclass || q.hop_limit != p->hop_limit ||
	    q.flow_label != p->flow_label || q.udp_sport != p->udp_sport ||
	    q.pkey != p->pkey || q.dqpn != p->dqpn || q.psn != p->psn ||
	    q.qkey != p->qkey || q.src_qpn != p->src_qpn ||
	    q.has_imm != p->has_imm || q.imm != p->imm || q.len != p->len ||
	    q.ackreq != p->ackreq || q.has != p->has ||
	    ((p->has & (SOFT_WIRE_HAS_RETH | SOFT_WIRE_HAS_ATOMIC)) &&
	     (q.va != p->va || q.rkey != p->rkey)) ||
	    ((p->has & SOFT_WIRE_HAS_RETH) && q.dmalen != p->dmalen) ||
	    ((p->has & SOFT_WIRE_HAS_ATOMIC) &&
	     (q.swap_add != p->swap_add || q.compare != p->compare)) ||
	    ((p->has & SOFT_WIRE_HAS_AETH) &&
	     (q.aeth_syn != p->aeth_syn || q.msn != p->msn)) ||
	    ((p->has & SOFT_WIRE_HAS_ATOMICACK) &&
	     q.atomic_orig != p->atomic_orig) ||
	    memcmp(q.sip, p->sip, 16) != 0 || memcmp(q.dip, p->dip, 16) != 0 ||
	    memcmp(q.payload, p->payload, p->len) != 0)
		FUZZ_FAIL("a field changed by build and parse");
	free(g);
}

/*
 * A random ICRC is right once in 2^32 inputs: without help the fuzzer
 * would never get a mutated frame past it. When the Ethernet destination
 * is unicast (bit 0 of byte 0 clear, as in the seeds), the ICRC and the
 * IP and UDP checksums are written as a sender would, wherever the IP
 * header's length puts them inside the frame; a multicast destination
 * leaves the input as it is.
 */
static void
fix_sums(uint8_t *f, size_t size)
{
	uint8_t *l3 = f + SOFT_ETH_LEN, *udp;
	uint32_t iplen, l3len, icrc;
	uint16_t ck;
	bool v6;

	if (size < SOFT_ETH_LEN || (f[0] & 1) != 0)
		return;
	if (be16(f + 12) == 0x0800 && size >= SOFT_ETH_LEN + SOFT_IPV4_LEN) {
		v6 = false;
		iplen = SOFT_IPV4_LEN;
		l3len = be16(l3 + 2);
	} else if (be16(f + 12) == 0x86dd &&
		   size >= SOFT_ETH_LEN + SOFT_IPV6_LEN) {
		v6 = true;
		iplen = SOFT_IPV6_LEN;
		l3len = SOFT_IPV6_LEN + be16(l3 + 4);
	} else {
		return;
	}
	if (l3len < iplen + SOFT_UDP_LEN + SOFT_BTH_LEN + SOFT_ICRC_LEN ||
	    l3len > size - SOFT_ETH_LEN)
		return;
	udp = l3 + iplen;
	icrc = soft_wire_icrc(l3, v6, l3len - SOFT_ICRC_LEN);
	l3[l3len - 4] = (uint8_t)icrc;
	l3[l3len - 3] = (uint8_t)(icrc >> 8);
	l3[l3len - 2] = (uint8_t)(icrc >> 16);
	l3[l3len - 1] = (uint8_t)(icrc >> 24);
	/* DPDK's IPv4 sums read the header length from the header: only
	 * for the 20 bytes the parser takes */
	if (!v6 && l3[0] != 0x45)
		return;
	if (!v6) {
		l3[10] = l3[11] = 0;
		ck = rte_ipv4_cksum((const struct rte_ipv4_hdr *)l3);
		memcpy(l3 + 10, &ck, 2);
	}
	/* a UDP checksum of 0 is not checked: left 0 */
	if (be16(udp + 6) == 0)
		return;
	udp[6] = udp[7] = 0;
	ck = v6 ? rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)l3, udp) :
		rte_ipv4_udptcp_cksum((const struct rte_ipv4_hdr *)l3, udp);
	memcpy(udp + 6, &ck, 2);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct soft_wire_pkt p;
	enum soft_wire_drop d;
	uint8_t *frame, *in;

	if (size > UINT32_MAX)
		return 0;
	/* exactly size bytes each, so that ASan sees a read past the frame
	 * (malloc(0) may give NULL: nothing to read then, and the parser
	 * must not) */
	frame = malloc(size);
	in = malloc(size);
	if ((frame == NULL || in == NULL) && size != 0)
		abort();
	if (size != 0)
		memcpy(in, data, size);
	fix_sums(in, size);
	if (size != 0)
		memcpy(frame, in, size);
	memset(&p, 0, sizeof(p));
	d = soft_wire_parse(frame, (uint32_t)size, my_ip, 2, &p);
	same_bytes(frame, in, size, "soft_wire_parse");
	if ((unsigned int)d >= SOFT_WIRE_DROP_MAX ||
	    strcmp(soft_wire_drop_name(d), "?") == 0)
		FUZZ_FAIL("drop reason %d has no name", (int)d);
	if (d == SOFT_WIRE_OVERSIZE)
		FUZZ_FAIL("the parser reported oversize (the device's rule)");
	if (d == SOFT_WIRE_OK) {
		check_parsed(frame, size, &p);
		check_rebuilt(frame, &p);
	}
	/* The ICRC on its own over any bytes long enough for the headers
	 * it masks (the parser reaches it only past every other check);
	 * bit 0 of byte 1 picks IPv6. */
	if (size >= SOFT_ETH_LEN + SOFT_IPV4_LEN + SOFT_UDP_LEN +
	    SOFT_BTH_LEN) {
		bool v6 = size >= SOFT_ETH_LEN + SOFT_IPV6_LEN + SOFT_UDP_LEN +
			SOFT_BTH_LEN && (in[1] & 1);
		uint32_t l3b = (uint32_t)size - SOFT_ETH_LEN;
		uint32_t crc = soft_wire_icrc(frame + SOFT_ETH_LEN, v6, l3b);

		same_bytes(frame, in, size, "soft_wire_icrc");
		if (soft_wire_icrc(frame + SOFT_ETH_LEN, v6, l3b) != crc)
			FUZZ_FAIL("ICRC of the same bytes differs");
	}
	free(frame);
	free(in);
	return 0;
}
