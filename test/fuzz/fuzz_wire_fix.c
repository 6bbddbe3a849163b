/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_wire_dev's frame fix-up (fuzz_wire_dev.h): an input's bytes made
 * into a frame that reaches the state machine the control bytes aim at.
 */
#include <string.h>

#include <rte_common.h>
#include <rte_ip.h>

#include "fuzz_wire_dev.h"

/* The device's addresses and its peer's (the seeds' too). */
static const uint8_t ip_me[4] = { 10, 0, 0, 2 };
static const uint8_t ip_peer[4] = { 10, 0, 0, 1 };
static const uint8_t ip6_me[16] = { 0xfd, [15] = 2 };
static const uint8_t ip6_peer[16] = { 0xfd, [15] = 1 };

/* RETH addresses and lengths reach this far around MR T. */
#define T_AROUND 64u

/* Every opcode a wire device takes (c[0]: the BTH's own destination). */
static const uint8_t all_ops[] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
	0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14,
	0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a,
	0x2b, 0x64, 0x65,
};

/* An R_Key (or rkey of an AtomicETH): T's mostly, R's (no remote access),
 * or the one that came. */
static uint32_t
rkey_pick(const struct wire_fix_env *env, uint32_t in)
{
	switch (in & 3) {
	case 0:
	case 1:
		return env->t_rkey;
	case 2:
		return env->r_rkey;
	default:
		return in;
	}
}

/* The IP checksum and the ICRC of the frame at f: the IP packet's length
 * from its own header (nothing when it does not fit n bytes). */
static void
sums_fix(uint8_t *f, uint32_t n)
{
	uint8_t *l3 = f + SOFT_ETH_LEN;
	uint32_t l3len, icrc;
	bool v6;

	if (n < SOFT_ETH_LEN + SOFT_IPV4_LEN)
		return;
	if (get_be16(f + 12) == 0x0800) {
		v6 = false;
		l3len = get_be16(l3 + 2);
		if (l3[0] == 0x45) {
			uint16_t ck;

			l3[10] = l3[11] = 0;
			ck = rte_ipv4_cksum((const struct rte_ipv4_hdr *)l3);
			memcpy(l3 + 10, &ck, 2);
		}
	} else if (get_be16(f + 12) == 0x86dd && n >= SOFT_ETH_LEN + SOFT_IPV6_LEN) {
		v6 = true;
		l3len = SOFT_IPV6_LEN + get_be16(l3 + 4);
	} else {
		return;
	}
	if (l3len < (v6 ? SOFT_IPV6_LEN : SOFT_IPV4_LEN) + SOFT_UDP_LEN +
	    SOFT_BTH_LEN + SOFT_ICRC_LEN || l3len > n - SOFT_ETH_LEN)
		return;
	icrc = soft_wire_icrc(l3, v6, l3len - SOFT_ICRC_LEN);
	l3[l3len - 4] = (uint8_t)icrc;
	l3[l3len - 3] = (uint8_t)(icrc >> 8);
	l3[l3len - 2] = (uint8_t)(icrc >> 16);
	l3[l3len - 1] = (uint8_t)(icrc >> 24);
}

uint32_t
wire_fix_frame(const struct wire_fix_env *env, uint8_t *f, uint32_t n,
	       const uint8_t c[4], struct wire_fixed *fx)
{
	unsigned int q = c[0] & 3, m = c[0] >> 3;
	bool v6 = (c[0] & 4) != 0;
	uint32_t iplen = v6 ? SOFT_IPV6_LEN : SOFT_IPV4_LEN;
	uint8_t *l3 = f + SOFT_ETH_LEN, *udp = l3 + iplen;
	uint8_t *bth = udp + SOFT_UDP_LEN, *x = bth + SOFT_BTH_LEN;
	uint32_t has, ext, hdr, pad, plen, trailer = 0, l3len, psn;
	uint8_t op;

	fx->q = -1;
	if (m == WIRE_FIX_RAW) {
		if (c[1] & 1)
			sums_fix(f, n);
		return n;
	}
	if (n < (uint32_t)(x - f)) {
		memset(f + n, 0, (size_t)(x - f) - n);
		n = (uint32_t)(x - f);
	}
	/* the opcode: one of the chosen QP's transport */
	op = bth[0];
	if (m != WIRE_FIX_RAW_OP) {
		/* an opcode of the transport stays as it is */
		switch (q) {
		case Q_RC:
			if (op > SOFT_IB_OPC_FETCH_ADD)
				op = op % (SOFT_IB_OPC_FETCH_ADD + 1);
			break;
		case Q_UC:
			if (op < SOFT_IB_OPC_UC ||
			    op > SOFT_IB_OPC_UC + SOFT_IB_OPC_WRITE_ONLY_IMM)
				op = SOFT_IB_OPC_UC +
					op % (SOFT_IB_OPC_WRITE_ONLY_IMM + 1);
			break;
		case Q_UD:
			op = SOFT_IB_OPC_UD_SEND_ONLY | (op & 1);
			break;
		default:
			if (soft_wire_opcode(op) == 0)
				op = all_ops[op % RTE_DIM(all_ops)];
			break;
		}
		bth[0] = op;
		bth[1] &= 0xf0;       /* TVer 0 */
	}
	has = soft_wire_opcode(op);
	ext = soft_wire_ext_len(op);
	hdr = (uint32_t)(x - f) + ext;
	pad = (bth[1] >> SOFT_BTH_PAD_SHIFT) & 3u;
	if (has != 0 && !(has & SOFT_WIRE_HAS_PAYLOAD)) {
		pad = 0;
		bth[1] &= (uint8_t)~(3u << SOFT_BTH_PAD_SHIFT);
		if (n < hdr + SOFT_ICRC_LEN)
			memset(f + n, 0, hdr + SOFT_ICRC_LEN - n);
		n = hdr + SOFT_ICRC_LEN;
	} else if (n < hdr + pad + SOFT_ICRC_LEN) {
		memset(f + n, 0, hdr + pad + SOFT_ICRC_LEN - n);
		n = hdr + pad + SOFT_ICRC_LEN;
	}
	plen = n - hdr - pad - SOFT_ICRC_LEN;
	l3len = n - SOFT_ETH_LEN;

	/* Ethernet, IP, UDP */
	memcpy(f, &env->mac, RTE_ETHER_ADDR_LEN);
	put_be16(f + 12, v6 ? 0x86dd : 0x0800);
	if (v6) {
		l3[0] = (uint8_t)(0x60 | (l3[0] & 0x0f));
		if (m != WIRE_FIX_RAW_LEN)
			put_be16(l3 + 4, (uint16_t)(l3len - SOFT_IPV6_LEN));
		l3[6] = IPPROTO_UDP;
		if (m != WIRE_FIX_RAW_KEYS || soft_wire_gid_is_v4(l3 + 8))
			memcpy(l3 + 8, ip6_peer, 16);
		memcpy(l3 + 24, ip6_me, 16);
	} else {
		l3[0] = 0x45;
		if (m != WIRE_FIX_RAW_LEN)
			put_be16(l3 + 2, (uint16_t)l3len);
		l3[6] &= 0x40;        /* DF or nothing: not a fragment */
		l3[7] = 0;
		l3[9] = IPPROTO_UDP;
		if (m != WIRE_FIX_RAW_KEYS)
			memcpy(l3 + 12, ip_peer, 4);
		memcpy(l3 + 16, ip_me, 4);
	}
	put_be16(udp + 2, SOFT_ROCE_UDP_PORT);
	if (m != WIRE_FIX_RAW_LEN)
		put_be16(udp + 4, (uint16_t)(l3len - iplen));
	put_be16(udp + 6, 0);

	/* BTH: P_Key, destination QP, PSN */
	if (m != WIRE_FIX_RAW_KEYS)
		put_be16(bth + 2, 0xffff);
	if (q < WIRE_FIX_NQ)
		put_be32(bth + 4, (uint32_t)bth[4] << 24 | env->qpn[q]);
	psn = get_be32(bth + 8) & 0xffffff;
	if (q < WIRE_FIX_NQ) {
		uint8_t b = c[1];

		if (q == Q_RC && op >= SOFT_IB_OPC_READ_RESP_FIRST &&
		    op <= SOFT_IB_OPC_ATOMIC_ACK && env->nreq != 0) {
			unsigned int off = b >> 3;

			psn = psn_add(env->req_psn[(env->nreq - 1 - (b & 7)) %
						   RTE_DIM(env->req_psn)],
				      off < 24 ? (int32_t)off : (int32_t)off - 32);
		} else if (b < 0xc0) {
			psn = env->epsn[q];
		} else {
			psn = psn_add(env->epsn[q], (int32_t)(b & 0x1f) - 16);
		}
		bth[9] = (uint8_t)(psn >> 16);
		bth[10] = (uint8_t)(psn >> 8);
		bth[11] = (uint8_t)psn;
	}
	fx->q = q < WIRE_FIX_NQ ? (int)q : -1;
	fx->opcode = op;
	fx->psn = psn;
	fx->dmalen = 0;

	/* the extension headers: keys and addresses at or around MR T */
	if (m != WIRE_FIX_RAW_KEYS) {
		if (has & SOFT_WIRE_HAS_DETH) {
			put_be32(x, env->qkey);
			x += SOFT_DETH_LEN;
		}
		if (has & SOFT_WIRE_HAS_RETH) {
			uint64_t va = get_be64(x);
			uint32_t dl = get_be32(x + 12);

			put_be64(x, env->t - T_AROUND +
			      va % (env->t_len + 2 * T_AROUND));
			put_be32(x + 8, rkey_pick(env, get_be32(x + 8)));
			switch (dl >> 30) {
			case 0:   /* the message: this packet, and more */
				dl = op == SOFT_IB_OPC_READ_REQUEST ?
					dl & 0x1fff : plen +
					(has & SOFT_WIRE_LAST ? 0 : dl & 0xfff);
				break;
			case 1:
				dl %= env->t_len + 2 * T_AROUND;
				break;
			case 2:
				dl = plen;
				break;
			default:
				break;
			}
			put_be32(x + 12, dl);
			fx->dmalen = dl;
			x += SOFT_RETH_LEN;
		}
		if (has & SOFT_WIRE_HAS_ATOMIC) {
			uint64_t va = get_be64(x);
			uint64_t a = env->t - 16 +
				8 * (va % (env->t_len / 8 + 4));

			if (va >> 63)
				a |= va & 7;  /* not aligned */
			put_be64(x, a);
			put_be32(x + 8, rkey_pick(env, get_be32(x + 8)));
		}
	} else if (has & SOFT_WIRE_HAS_RETH) {
		fx->dmalen = get_be32(x + 12);
	}

	/* Ethernet padding past the IP packet */
	if (m == WIRE_FIX_TRAILER) {
		trailer = c[3] & 15;
		memset(f + n, c[3], trailer);
	}
	if (m == WIRE_FIX_SPOIL_FIXED)
		f[c[3] % n] ^= (uint8_t)(1u << (c[2] & 7));
	sums_fix(f, n);
	if (m == WIRE_FIX_SPOIL)
		f[c[3] % n] ^= (uint8_t)(1u << (c[2] & 7));
	return n + trailer;
}

