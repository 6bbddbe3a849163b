/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 packets: the UD datagram a soft wire device sends, the parse and
 * checks of every frame it receives, the ICRC (soft_wire_pkt.h).
 */
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_net_crc.h>
#include <rte_udp.h>

#include "soft_wire_pkt.h"

/*
 * The ones' complement sum (RFC 1071) of a 20-byte IPv4 header, folded to
 * 16 bits, in the byte order of the header (RFC 1071 2(B): the sum of the
 * words as the CPU loads them is the sum in network order, loaded).
 * rte_raw_cksum() adds the header two bytes a step; five 32-bit words
 * give the same sum in a fifth of the instructions.
 */
static inline uint16_t
ipv4_hdr_sum(const uint8_t *l3)
{
	uint32_t w[5];
	uint64_t s;

	memcpy(w, l3, sizeof(w));
	s = (uint64_t)w[0] + w[1] + w[2] + w[3] + w[4];
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffu) + (s >> 16);
	s = (s & 0xffffu) + (s >> 16);
	s = (s & 0xffffu) + (s >> 16);
	return (uint16_t)s;
}

/* soft_wire_icrc(), inline in the parse of every received frame. */
static inline uint32_t
icrc_masked(uint8_t *l3, bool ipv6, uint32_t len)
{
	uint32_t iplen = ipv6 ? SOFT_IPV6_LEN : SOFT_IPV4_LEN;
	uint8_t *udp = l3 + iplen;
	uint8_t *bth = udp + SOFT_UDP_LEN;
	uint8_t save_lrh[8], save_ip[4], save_ttl, save_udp[2], save_bth;
	uint32_t crc;

	/* The masked copy is made in place: DPDK's CRC-32 (rte_net_crc,
	 * the CPU's carry-less multiply where it has one) takes one
	 * contiguous buffer and no running value, so the 8 bytes of ones
	 * stand where the Ethernet source address ends, just before l3,
	 * and every byte changed is put back after. */
	memcpy(save_lrh, l3 - 8, 8);
	memset(l3 - 8, 0xff, 8);
	if (ipv6) {
		memcpy(save_ip, l3, 4);       /* version, class, flow label */
		l3[0] |= 0x0f;
		l3[1] = 0xff;
		l3[2] = 0xff;
		l3[3] = 0xff;
		save_ttl = l3[7];
		l3[7] = 0xff;
	} else {
		save_ip[0] = l3[1];           /* type of service */
		memcpy(&save_ip[2], l3 + 10, 2); /* checksum */
		l3[1] = 0xff;
		l3[10] = 0xff;
		l3[11] = 0xff;
		save_ttl = l3[8];
		l3[8] = 0xff;
	}
	memcpy(save_udp, udp + 6, 2);
	udp[6] = 0xff;
	udp[7] = 0xff;
	save_bth = bth[4];
	bth[4] = 0xff;

	crc = rte_net_crc_calc(l3 - 8, len + 8, RTE_NET_CRC32_ETH);

	bth[4] = save_bth;
	memcpy(udp + 6, save_udp, 2);
	if (ipv6) {
		memcpy(l3, save_ip, 4);
		l3[7] = save_ttl;
	} else {
		l3[1] = save_ip[0];
		memcpy(l3 + 10, &save_ip[2], 2);
		l3[8] = save_ttl;
	}
	memcpy(l3 - 8, save_lrh, 8);
	return crc;
}

uint32_t
soft_wire_icrc(uint8_t *l3, bool ipv6, uint32_t len)
{
	return icrc_masked(l3, ipv6, len);
}

#define H(x) SOFT_WIRE_HAS_ ## x
#define F SOFT_WIRE_FIRST
#define L SOFT_WIRE_LAST
/* Bytes of the headers after the BTH that the bits of has name. */
#define EXT_LEN(has) \
	((((has) & H(RETH)) ? SOFT_RETH_LEN : 0) + \
	 (((has) & H(AETH)) ? SOFT_AETH_LEN : 0) + \
	 (((has) & H(ATOMIC)) ? SOFT_ATOMICETH_LEN : 0) + \
	 (((has) & H(ATOMICACK)) ? SOFT_ATOMICACK_LEN : 0) + \
	 (((has) & H(IMM)) ? SOFT_IMMDT_LEN : 0) + \
	 (((has) & H(DETH)) ? SOFT_DETH_LEN : 0))
/* IBA 9.2 Table 38 with 9.3: the headers of each opcode this device
 * takes. RC's SEND and WRITE codes are UC's too, plus 0x20 (RC_UC);
 * UD takes SEND only. */
#define RC_UC(X, op, has) X(op, has) X(op + SOFT_IB_OPC_UC, has)
#define OPCODES(X) \
	RC_UC(X, SOFT_IB_OPC_SEND_FIRST, H(PAYLOAD) | F) \
	RC_UC(X, SOFT_IB_OPC_SEND_MIDDLE, H(PAYLOAD)) \
	RC_UC(X, SOFT_IB_OPC_SEND_LAST, H(PAYLOAD) | L) \
	RC_UC(X, SOFT_IB_OPC_SEND_LAST_IMM, H(IMM) | H(PAYLOAD) | L) \
	RC_UC(X, SOFT_IB_OPC_SEND_ONLY, H(PAYLOAD) | F | L) \
	RC_UC(X, SOFT_IB_OPC_SEND_ONLY_IMM, H(IMM) | H(PAYLOAD) | F | L) \
	RC_UC(X, SOFT_IB_OPC_WRITE_FIRST, H(RETH) | H(PAYLOAD) | F) \
	RC_UC(X, SOFT_IB_OPC_WRITE_MIDDLE, H(PAYLOAD)) \
	RC_UC(X, SOFT_IB_OPC_WRITE_LAST, H(PAYLOAD) | L) \
	RC_UC(X, SOFT_IB_OPC_WRITE_LAST_IMM, H(IMM) | H(PAYLOAD) | L) \
	RC_UC(X, SOFT_IB_OPC_WRITE_ONLY, H(RETH) | H(PAYLOAD) | F | L) \
	RC_UC(X, SOFT_IB_OPC_WRITE_ONLY_IMM, \
	      H(RETH) | H(IMM) | H(PAYLOAD) | F | L) \
	X(SOFT_IB_OPC_READ_REQUEST, H(RETH) | F | L) \
	X(SOFT_IB_OPC_READ_RESP_FIRST, H(AETH) | H(PAYLOAD) | F) \
	X(SOFT_IB_OPC_READ_RESP_MIDDLE, H(PAYLOAD)) \
	X(SOFT_IB_OPC_READ_RESP_LAST, H(AETH) | H(PAYLOAD) | L) \
	X(SOFT_IB_OPC_READ_RESP_ONLY, H(AETH) | H(PAYLOAD) | F | L) \
	X(SOFT_IB_OPC_ACK, H(AETH) | F | L) \
	X(SOFT_IB_OPC_ATOMIC_ACK, H(AETH) | H(ATOMICACK) | F | L) \
	X(SOFT_IB_OPC_CMP_SWAP, H(ATOMIC) | F | L) \
	X(SOFT_IB_OPC_FETCH_ADD, H(ATOMIC) | F | L) \
	X(SOFT_IB_OPC_UD_SEND_ONLY, H(DETH) | H(PAYLOAD) | F | L) \
	X(SOFT_IB_OPC_UD_SEND_ONLY_IMM, \
	  H(DETH) | H(IMM) | H(PAYLOAD) | F | L)
#define HAS_OF(op, has) [op] = (has),
#define EXT_OF(op, has) [op] = EXT_LEN(has),
/* One load for what an opcode carries and one for its headers' bytes
 * (0 for the codes not taken: RD, XRC, SEND with invalidate, ...). */
static const uint16_t opc_has[256] = { OPCODES(HAS_OF) };
static const uint8_t opc_ext[256] = { OPCODES(EXT_OF) };
#undef HAS_OF
#undef EXT_OF
#undef OPCODES
#undef RC_UC

uint32_t
soft_wire_opcode(uint8_t op)
{
	return opc_has[op];
}

#undef EXT_LEN
#undef H
#undef F
#undef L

uint32_t
soft_wire_ext_len(uint8_t opcode)
{
	return opc_ext[opcode];
}

uint32_t
soft_wire_build(uint8_t *frame, const struct soft_wire_hdr *h,
		const struct soft_wire_seg *seg, unsigned int nseg, uint32_t len)
{
	uint32_t has = opc_has[h->opcode];
	uint32_t iplen = h->ipv6 ? SOFT_IPV6_LEN : SOFT_IPV4_LEN;
	uint32_t pad = (4u - (len & 3u)) & 3u;
	uint8_t *l3 = frame + SOFT_ETH_LEN;
	uint8_t *udp = l3 + iplen;
	uint8_t *bth = udp + SOFT_UDP_LEN;
	uint8_t *p = bth + SOFT_BTH_LEN;
	uint32_t l4len = SOFT_UDP_LEN + SOFT_BTH_LEN + opc_ext[h->opcode] +
		len + pad + SOFT_ICRC_LEN;
	uint32_t icrc;
	unsigned int i;

	/* Every field the ICRC masks is written masked first (all ones:
	 * the 8 bytes before l3, which stand for the LRH, the IP fields
	 * routers change, the UDP checksum, the BTH's reserved byte 4), so
	 * the CRC runs over the frame as it is, and then written with its
	 * value: nothing to save and put back, as soft_wire_icrc() must. */
	memcpy(frame, &h->dmac, 6);
	memset(frame + 6, 0xff, 8);
	if (h->ipv6) {
		put_be32(l3, 0x6fffffffu);
		put_be16(l3 + 4, (uint16_t)l4len);
		l3[6] = IPPROTO_UDP;
		l3[7] = 0xff;
		memcpy(l3 + 8, h->sip, 16);
		memcpy(l3 + 24, h->dip, 16);
	} else {
		l3[0] = 0x45;
		l3[1] = 0xff;
		put_be16(l3 + 2, (uint16_t)(iplen + l4len));
		put_be16(l3 + 4, 0);          /* identification */
		put_be16(l3 + 6, 0x4000);     /* DF, as rxe sends */
		l3[8] = 0xff;
		l3[9] = IPPROTO_UDP;
		l3[10] = 0xff;
		l3[11] = 0xff;
		memcpy(l3 + 12, h->sip, 4);
		memcpy(l3 + 16, h->dip, 4);
	}
	put_be16(udp, h->udp_sport);
	put_be16(udp + 2, SOFT_ROCE_UDP_PORT);
	put_be16(udp + 4, (uint16_t)l4len);
	udp[6] = 0xff;
	udp[7] = 0xff;

	bth[0] = h->opcode;
	bth[1] = (uint8_t)((h->se ? SOFT_BTH_SE : 0) | (pad << SOFT_BTH_PAD_SHIFT));
	put_be16(bth + 2, h->pkey);
	put_be32(bth + 4, 0xff000000u | (h->dqpn & 0xffffff));
	put_be32(bth + 8, (h->psn & 0xffffff) |
		 (h->ackreq ? (uint32_t)SOFT_BTH_ACKREQ << 24 : 0));
	/* IBA 9.3: RETH or AtomicETH or DETH, then AETH, AtomicAckETH,
	 * ImmDt, in this order when several are there */
	if (unlikely(has & (SOFT_WIRE_HAS_DETH | SOFT_WIRE_HAS_RETH |
			    SOFT_WIRE_HAS_ATOMIC | SOFT_WIRE_HAS_AETH |
			    SOFT_WIRE_HAS_ATOMICACK))) {
		if (has & SOFT_WIRE_HAS_DETH) {
			put_be32(p, h->qkey);
			put_be32(p + 4, h->src_qpn & 0xffffff);
			p += SOFT_DETH_LEN;
		}
		if (has & SOFT_WIRE_HAS_RETH) {
			put_be64(p, h->va);
			put_be32(p + 8, h->rkey);
			put_be32(p + 12, h->dmalen);
			p += SOFT_RETH_LEN;
		}
		if (has & SOFT_WIRE_HAS_ATOMIC) {
			put_be64(p, h->va);
			put_be32(p + 8, h->rkey);
			put_be64(p + 12, h->swap_add);
			put_be64(p + 20, h->compare);
			p += SOFT_ATOMICETH_LEN;
		}
		if (has & SOFT_WIRE_HAS_AETH) {
			put_be32(p, ((uint32_t)h->aeth_syn << 24) |
				 (h->msn & 0xffffff));
			p += SOFT_AETH_LEN;
		}
		if (has & SOFT_WIRE_HAS_ATOMICACK) {
			put_be64(p, h->atomic_orig);
			p += SOFT_ATOMICACK_LEN;
		}
	}
	if (has & SOFT_WIRE_HAS_IMM) {
		put_be32(p, h->imm);
		p += SOFT_IMMDT_LEN;
	}
	for (i = 0; i < nseg; i++) {
		if (seg[i].len != 0)
			memcpy(p, seg[i].p, seg[i].len);
		p += seg[i].len;
	}
	for (i = 0; i < pad; i++)
		*p++ = 0;

	icrc = rte_net_crc_calc(l3 - 8, (uint32_t)(p - l3) + 8,
				RTE_NET_CRC32_ETH);
	p[0] = (uint8_t)icrc;
	p[1] = (uint8_t)(icrc >> 8);
	p[2] = (uint8_t)(icrc >> 16);
	p[3] = (uint8_t)(icrc >> 24);

	/* the masked fields' values */
	memcpy(frame + 6, &h->smac, 6);
	put_be16(frame + 12, h->ipv6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	bth[4] = 0;                           /* reserved */
	udp[6] = 0;
	udp[7] = 0;
	if (h->ipv6) {
		uint16_t ck;

		put_be32(l3, (6u << 28) | ((uint32_t)h->tclass << 20) |
			 (h->flow_label & 0xfffff));
		l3[7] = h->hop_limit;
		ck = rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)l3, udp);
		memcpy(udp + 6, &ck, 2);   /* already in network order */
	} else {
		uint16_t ck;

		l3[1] = h->tclass;
		l3[8] = h->hop_limit;
		l3[10] = 0;
		l3[11] = 0;
		ck = (uint16_t)~ipv4_hdr_sum(l3);   /* UDP checksum 0, as rxe */
		memcpy(l3 + 10, &ck, 2);
	}
	return SOFT_ETH_LEN + iplen + l4len;
}

static bool
ip_is_mine(const uint8_t dip[16], const uint8_t (*ip)[16], unsigned int nip)
{
	unsigned int i;

	for (i = 0; i < nip; i++)
		if (memcmp(dip, ip[i], 16) == 0)
			return true;
	return false;
}

enum soft_wire_drop
soft_wire_parse(uint8_t *frame, uint32_t len, const uint8_t (*ip)[16],
		unsigned int nip, struct soft_wire_pkt *p)
{
	uint8_t *l3 = frame + SOFT_ETH_LEN;
	const uint8_t *udp, *bth, *x;
	uint32_t l3len, iplen, ulen, hdrs, pad, ext, icrc, want;
	uint16_t etype;

	if (len < SOFT_ETH_LEN)
		return SOFT_WIRE_TRUNCATED;
	etype = get_be16(frame + 12);
	if (etype == RTE_ETHER_TYPE_IPV4) {
		if (len < SOFT_ETH_LEN + SOFT_IPV4_LEN)
			return SOFT_WIRE_TRUNCATED;
		if (l3[9] != IPPROTO_UDP)
			return SOFT_WIRE_NOT_ROCE;
		if (l3[0] != 0x45)   /* version 4, no options */
			return SOFT_WIRE_BAD_IP;
		l3len = get_be16(l3 + 2);
		if (l3len > len - SOFT_ETH_LEN)
			return SOFT_WIRE_TRUNCATED;
		if (l3len < SOFT_IPV4_LEN + SOFT_UDP_LEN ||
		    (get_be16(l3 + 6) & 0x3fff) != 0 ||   /* MF, offset */
		    ipv4_hdr_sum(l3) != 0xffff)
			return SOFT_WIRE_BAD_IP;
		iplen = SOFT_IPV4_LEN;
		p->ipv6 = 0;
		p->tclass = l3[1];
		p->hop_limit = l3[8];
		p->flow_label = 0;
		soft_wire_ipv4_mapped(p->sip, l3 + 12);
		soft_wire_ipv4_mapped(p->dip, l3 + 16);
	} else if (etype == RTE_ETHER_TYPE_IPV6) {
		uint32_t vtf;

		if (len < SOFT_ETH_LEN + SOFT_IPV6_LEN)
			return SOFT_WIRE_TRUNCATED;
		if (l3[6] != IPPROTO_UDP)
			return SOFT_WIRE_NOT_ROCE;
		vtf = get_be32(l3);
		if ((vtf >> 28) != 6)
			return SOFT_WIRE_BAD_IP;
		l3len = SOFT_IPV6_LEN + get_be16(l3 + 4);
		if (l3len > len - SOFT_ETH_LEN)
			return SOFT_WIRE_TRUNCATED;
		if (l3len < SOFT_IPV6_LEN + SOFT_UDP_LEN)
			return SOFT_WIRE_BAD_IP;
		/* ::ffff:a.b.c.d names an IPv4 node (RFC 4291 2.5.5.2): it
		 * would match the device's IPv4 GID, or be learnt as that
		 * IPv4 neighbour's MAC */
		if (soft_wire_gid_is_v4(l3 + 8) || soft_wire_gid_is_v4(l3 + 24))
			return SOFT_WIRE_BAD_IP;
		iplen = SOFT_IPV6_LEN;
		p->ipv6 = 1;
		p->tclass = (uint8_t)(vtf >> 20);
		p->flow_label = vtf & 0xfffff;
		p->hop_limit = l3[7];
		memcpy(p->sip, l3 + 8, 16);
		memcpy(p->dip, l3 + 24, 16);
	} else {
		return SOFT_WIRE_NOT_ROCE;
	}
	udp = l3 + iplen;
	if (get_be16(udp + 2) != SOFT_ROCE_UDP_PORT)
		return SOFT_WIRE_NOT_ROCE;
	if (!ip_is_mine(p->dip, ip, nip))
		return SOFT_WIRE_NOT_MINE;
	ulen = get_be16(udp + 4);
	if (ulen != l3len - iplen)
		return SOFT_WIRE_BAD_UDP;
	if (p->ipv6 && get_be16(udp + 6) != 0 &&
	    rte_ipv6_udptcp_cksum_verify((const struct rte_ipv6_hdr *)l3,
					 udp) != 0)
		return SOFT_WIRE_BAD_UDP;
	if (!p->ipv6 && get_be16(udp + 6) != 0 &&
	    rte_ipv4_udptcp_cksum_verify((const struct rte_ipv4_hdr *)l3,
					 udp) != 0)
		return SOFT_WIRE_BAD_UDP;
	if (ulen < SOFT_UDP_LEN + SOFT_BTH_LEN + SOFT_ICRC_LEN)
		return SOFT_WIRE_TRUNCATED;
	bth = udp + SOFT_UDP_LEN;
	if ((bth[1] & 0x0f) != 0)          /* TVer */
		return SOFT_WIRE_BAD_BTH;
	p->has = opc_has[bth[0]];
	if (p->has == 0)
		return SOFT_WIRE_BAD_BTH;
	ext = opc_ext[bth[0]];
	pad = (bth[1] >> SOFT_BTH_PAD_SHIFT) & 3u;
	hdrs = SOFT_UDP_LEN + SOFT_BTH_LEN + ext;
	if (ulen < hdrs + pad + SOFT_ICRC_LEN)
		return SOFT_WIRE_TRUNCATED;
	/* an opcode without data carries none (nor pad) */
	if (!(p->has & SOFT_WIRE_HAS_PAYLOAD) &&
	    ulen != hdrs + SOFT_ICRC_LEN)
		return SOFT_WIRE_BAD_BTH;

	x = l3 + l3len - SOFT_ICRC_LEN;
	icrc = (uint32_t)x[0] | ((uint32_t)x[1] << 8) |
		((uint32_t)x[2] << 16) | ((uint32_t)x[3] << 24);
	want = icrc_masked(l3, p->ipv6, l3len - SOFT_ICRC_LEN);
	if (icrc != want)
		return SOFT_WIRE_BAD_ICRC;

	p->l3 = l3;
	p->opcode = bth[0];
	p->se = !!(bth[1] & SOFT_BTH_SE);
	p->pkey = get_be16(bth + 2);
	p->dqpn = get_be32(bth + 4) & 0xffffff;
	p->ackreq = !!(bth[8] & SOFT_BTH_ACKREQ);
	p->psn = get_be32(bth + 8) & 0xffffff;
	p->udp_sport = get_be16(udp);
	x = bth + SOFT_BTH_LEN;
	p->has_imm = !!(p->has & SOFT_WIRE_HAS_IMM);
	p->qkey = 0;
	p->src_qpn = 0;
	p->imm = 0;
	if (p->has & SOFT_WIRE_HAS_DETH) {
		p->qkey = get_be32(x);
		p->src_qpn = get_be32(x + 4) & 0xffffff;
		x += SOFT_DETH_LEN;
	}
	if (p->has & SOFT_WIRE_HAS_RETH) {
		p->va = get_be64(x);
		p->rkey = get_be32(x + 8);
		p->dmalen = get_be32(x + 12);
		x += SOFT_RETH_LEN;
	}
	if (p->has & SOFT_WIRE_HAS_ATOMIC) {
		p->va = get_be64(x);
		p->rkey = get_be32(x + 8);
		p->swap_add = get_be64(x + 12);
		p->compare = get_be64(x + 20);
		x += SOFT_ATOMICETH_LEN;
	}
	if (p->has & SOFT_WIRE_HAS_AETH) {
		uint32_t a = get_be32(x);

		p->aeth_syn = (uint8_t)(a >> 24);
		p->msn = a & 0xffffff;
		x += SOFT_AETH_LEN;
	}
	if (p->has & SOFT_WIRE_HAS_ATOMICACK) {
		p->atomic_orig = get_be64(x);
		x += SOFT_ATOMICACK_LEN;
	}
	if (p->has & SOFT_WIRE_HAS_IMM)
		p->imm = get_be32(x);
	p->payload = bth + SOFT_BTH_LEN + ext;
	p->len = ulen - hdrs - pad - SOFT_ICRC_LEN;
	return SOFT_WIRE_OK;
}

const char *
soft_wire_drop_name(enum soft_wire_drop d)
{
	static const char *const names[SOFT_WIRE_DROP_MAX] = {
		[SOFT_WIRE_OK] = "ok",
		[SOFT_WIRE_NOT_ROCE] = "not_roce",
		[SOFT_WIRE_TRUNCATED] = "truncated",
		[SOFT_WIRE_OVERSIZE] = "oversize",
		[SOFT_WIRE_BAD_IP] = "bad_ip",
		[SOFT_WIRE_NOT_MINE] = "not_mine",
		[SOFT_WIRE_BAD_UDP] = "bad_udp",
		[SOFT_WIRE_BAD_BTH] = "bad_bth",
		[SOFT_WIRE_BAD_ICRC] = "bad_icrc",
	};

	return (unsigned int)d < SOFT_WIRE_DROP_MAX ? names[d] : "?";
}
