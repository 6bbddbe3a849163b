/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 packets: the UD datagram a soft wire device sends, the parse and
 * checks of every frame it receives, the ICRC (soft_wire_pkt.h).
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_net_crc.h>
#include <rte_udp.h>

#include "soft_wire_pkt.h"

uint32_t
soft_wire_icrc(uint8_t *l3, bool ipv6, uint32_t len)
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

#define H(x) SOFT_WIRE_HAS_ ## x
#define F SOFT_WIRE_FIRST
#define L SOFT_WIRE_LAST
/* IBA 9.2 Table 38 with 9.3: the headers of each opcode, RC's; UC's are
 * RC's SEND and WRITE codes plus 0x20. */
static const uint16_t opc_has[0x15] = {
	[SOFT_IB_OPC_SEND_FIRST] = H(PAYLOAD) | F,
	[SOFT_IB_OPC_SEND_MIDDLE] = H(PAYLOAD),
	[SOFT_IB_OPC_SEND_LAST] = H(PAYLOAD) | L,
	[SOFT_IB_OPC_SEND_LAST_IMM] = H(IMM) | H(PAYLOAD) | L,
	[SOFT_IB_OPC_SEND_ONLY] = H(PAYLOAD) | F | L,
	[SOFT_IB_OPC_SEND_ONLY_IMM] = H(IMM) | H(PAYLOAD) | F | L,
	[SOFT_IB_OPC_WRITE_FIRST] = H(RETH) | H(PAYLOAD) | F,
	[SOFT_IB_OPC_WRITE_MIDDLE] = H(PAYLOAD),
	[SOFT_IB_OPC_WRITE_LAST] = H(PAYLOAD) | L,
	[SOFT_IB_OPC_WRITE_LAST_IMM] = H(IMM) | H(PAYLOAD) | L,
	[SOFT_IB_OPC_WRITE_ONLY] = H(RETH) | H(PAYLOAD) | F | L,
	[SOFT_IB_OPC_WRITE_ONLY_IMM] = H(RETH) | H(IMM) | H(PAYLOAD) | F | L,
	[SOFT_IB_OPC_READ_REQUEST] = H(RETH) | F | L,
	[SOFT_IB_OPC_READ_RESP_FIRST] = H(AETH) | H(PAYLOAD) | F,
	[SOFT_IB_OPC_READ_RESP_MIDDLE] = H(PAYLOAD),
	[SOFT_IB_OPC_READ_RESP_LAST] = H(AETH) | H(PAYLOAD) | L,
	[SOFT_IB_OPC_READ_RESP_ONLY] = H(AETH) | H(PAYLOAD) | F | L,
	[SOFT_IB_OPC_ACK] = H(AETH) | F | L,
	[SOFT_IB_OPC_ATOMIC_ACK] = H(AETH) | H(ATOMICACK) | F | L,
	[SOFT_IB_OPC_CMP_SWAP] = H(ATOMIC) | F | L,
	[SOFT_IB_OPC_FETCH_ADD] = H(ATOMIC) | F | L,
};
#undef H
#undef F
#undef L

uint32_t
soft_wire_opcode(uint8_t op)
{
	if (op < RTE_DIM(opc_has))
		return opc_has[op];
	if (op >= SOFT_IB_OPC_UC && op <= SOFT_IB_OPC_UC + SOFT_IB_OPC_WRITE_ONLY_IMM)
		return opc_has[op - SOFT_IB_OPC_UC];
	if (op == SOFT_IB_OPC_UD_SEND_ONLY)
		return SOFT_WIRE_HAS_DETH | SOFT_WIRE_HAS_PAYLOAD |
			SOFT_WIRE_FIRST | SOFT_WIRE_LAST;
	if (op == SOFT_IB_OPC_UD_SEND_ONLY_IMM)
		return SOFT_WIRE_HAS_DETH | SOFT_WIRE_HAS_IMM |
			SOFT_WIRE_HAS_PAYLOAD | SOFT_WIRE_FIRST | SOFT_WIRE_LAST;
	return 0;
}

static uint32_t
has_len(uint32_t has)
{
	return (has & SOFT_WIRE_HAS_RETH ? SOFT_RETH_LEN : 0) +
		(has & SOFT_WIRE_HAS_AETH ? SOFT_AETH_LEN : 0) +
		(has & SOFT_WIRE_HAS_ATOMIC ? SOFT_ATOMICETH_LEN : 0) +
		(has & SOFT_WIRE_HAS_ATOMICACK ? SOFT_ATOMICACK_LEN : 0) +
		(has & SOFT_WIRE_HAS_IMM ? SOFT_IMMDT_LEN : 0) +
		(has & SOFT_WIRE_HAS_DETH ? SOFT_DETH_LEN : 0);
}

uint32_t
soft_wire_ext_len(uint8_t opcode)
{
	return has_len(soft_wire_opcode(opcode));
}

uint32_t
soft_wire_build(uint8_t *frame, const struct soft_wire_hdr *h,
		const struct soft_wire_seg *seg, unsigned int nseg, uint32_t len)
{
	uint32_t flen = soft_wire_frame_len(h, len);
	uint32_t iplen = h->ipv6 ? SOFT_IPV6_LEN : SOFT_IPV4_LEN;
	uint32_t pad = (4u - (len & 3u)) & 3u;
	uint32_t has = soft_wire_opcode(h->opcode);
	uint8_t *l3 = frame + SOFT_ETH_LEN;
	uint8_t *udp = l3 + iplen;
	uint8_t *bth = udp + SOFT_UDP_LEN;
	uint8_t *p = bth + SOFT_BTH_LEN;
	uint32_t l4len = flen - SOFT_ETH_LEN - iplen;
	uint32_t icrc;
	unsigned int i;

	memcpy(frame, &h->dmac, 6);
	memcpy(frame + 6, &h->smac, 6);
	put_be16(frame + 12, h->ipv6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	if (h->ipv6) {
		put_be32(l3, (6u << 28) | ((uint32_t)h->tclass << 20) |
			 (h->flow_label & 0xfffff));
		put_be16(l3 + 4, (uint16_t)l4len);
		l3[6] = IPPROTO_UDP;
		l3[7] = h->hop_limit;
		memcpy(l3 + 8, h->sip, 16);
		memcpy(l3 + 24, h->dip, 16);
	} else {
		l3[0] = 0x45;
		l3[1] = h->tclass;
		put_be16(l3 + 2, (uint16_t)(iplen + l4len));
		put_be16(l3 + 4, 0);          /* identification */
		put_be16(l3 + 6, 0x4000);     /* DF, as rxe sends */
		l3[8] = h->hop_limit;
		l3[9] = IPPROTO_UDP;
		put_be16(l3 + 10, 0);
		memcpy(l3 + 12, h->sip, 4);
		memcpy(l3 + 16, h->dip, 4);
	}
	put_be16(udp, h->udp_sport);
	put_be16(udp + 2, SOFT_ROCE_UDP_PORT);
	put_be16(udp + 4, (uint16_t)l4len);
	put_be16(udp + 6, 0);

	bth[0] = h->opcode;
	bth[1] = (uint8_t)((h->se ? SOFT_BTH_SE : 0) | (pad << SOFT_BTH_PAD_SHIFT));
	put_be16(bth + 2, h->pkey);
	put_be32(bth + 4, h->dqpn & 0xffffff);   /* byte 4: reserved, 0 */
	put_be32(bth + 8, (h->psn & 0xffffff) |
		 (h->ackreq ? (uint32_t)SOFT_BTH_ACKREQ << 24 : 0));
	/* IBA 9.3: RETH or AtomicETH or DETH, then AETH, AtomicAckETH,
	 * ImmDt, in this order when several are there */
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
		put_be32(p, ((uint32_t)h->aeth_syn << 24) | (h->msn & 0xffffff));
		p += SOFT_AETH_LEN;
	}
	if (has & SOFT_WIRE_HAS_ATOMICACK) {
		put_be64(p, h->atomic_orig);
		p += SOFT_ATOMICACK_LEN;
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
	memset(p, 0, pad);
	p += pad;

	icrc = soft_wire_icrc(l3, h->ipv6, (uint32_t)(p - l3));
	p[0] = (uint8_t)icrc;
	p[1] = (uint8_t)(icrc >> 8);
	p[2] = (uint8_t)(icrc >> 16);
	p[3] = (uint8_t)(icrc >> 24);

	if (h->ipv6) {
		uint16_t ck = rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)l3,
						    udp);

		memcpy(udp + 6, &ck, 2);   /* already in network order */
	} else {
		uint16_t ck = rte_ipv4_cksum((const struct rte_ipv4_hdr *)l3);

		memcpy(l3 + 10, &ck, 2);
	}
	return flen;
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
	uint8_t dip[16];

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
		    rte_raw_cksum(l3, SOFT_IPV4_LEN) != 0xffff)
			return SOFT_WIRE_BAD_IP;
		iplen = SOFT_IPV4_LEN;
		p->ipv6 = 0;
		p->tclass = l3[1];
		p->hop_limit = l3[8];
		p->flow_label = 0;
		memset(p->sip, 0, sizeof(p->sip));
		memcpy(p->sip, l3 + 12, 4);
		memset(p->dip, 0, sizeof(p->dip));
		memcpy(p->dip, l3 + 16, 4);
		soft_wire_ipv4_mapped(dip, l3 + 16);
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
		memcpy(dip, l3 + 24, 16);
	} else {
		return SOFT_WIRE_NOT_ROCE;
	}
	udp = l3 + iplen;
	if (get_be16(udp + 2) != SOFT_ROCE_UDP_PORT)
		return SOFT_WIRE_NOT_ROCE;
	if (!ip_is_mine(dip, ip, nip))
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
	p->has = soft_wire_opcode(bth[0]);
	if (p->has == 0)
		return SOFT_WIRE_BAD_BTH;
	ext = has_len(p->has);
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
	want = soft_wire_icrc(l3, p->ipv6, l3len - SOFT_ICRC_LEN);
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
