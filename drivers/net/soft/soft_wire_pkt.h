/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SOFT_WIRE_PKT_H
#define SOFT_WIRE_PKT_H

/*
 * RoCEv2 packets (IBA Annex A17): the frame a soft wire device puts on an
 * ethdev and takes off it, without any device state, so that the unit
 * tests and the fuzz target drive it directly:
 *
 *   Ethernet | IPv4 (20, no options) or IPv6 (40) | UDP (8, destination
 *   port 4791) | BTH (12) | extension headers of the opcode | payload |
 *   pad (0-3 bytes, to 4) | ICRC (4)
 *
 * Field layouts are IBA's (chapter 9: BTH 9.2, DETH 9.3.2, ImmDt 9.3.4)
 * and every multi-byte field is big endian, but the ICRC, which is sent
 * least significant byte first, as Ethernet's FCS is.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_ether.h>

#define SOFT_ROCE_UDP_PORT   4791u
#define SOFT_ETH_LEN         14u
#define SOFT_IPV4_LEN        20u
#define SOFT_IPV6_LEN        40u
#define SOFT_UDP_LEN         8u
#define SOFT_BTH_LEN         12u
#define SOFT_DETH_LEN        8u
#define SOFT_IMMDT_LEN       4u
#define SOFT_ICRC_LEN        4u

/* IBA 9.2 Table 38: transport (bits 7-5: RC 0, UC 1, UD 3) and
 * operation (bits 4-0). */
#define SOFT_IB_OPC_SEND_FIRST        0x00u
#define SOFT_IB_OPC_SEND_MIDDLE       0x01u
#define SOFT_IB_OPC_SEND_LAST         0x02u
#define SOFT_IB_OPC_SEND_LAST_IMM     0x03u
#define SOFT_IB_OPC_SEND_ONLY         0x04u
#define SOFT_IB_OPC_SEND_ONLY_IMM     0x05u
#define SOFT_IB_OPC_WRITE_FIRST       0x06u
#define SOFT_IB_OPC_WRITE_MIDDLE      0x07u
#define SOFT_IB_OPC_WRITE_LAST        0x08u
#define SOFT_IB_OPC_WRITE_LAST_IMM    0x09u
#define SOFT_IB_OPC_WRITE_ONLY        0x0au
#define SOFT_IB_OPC_WRITE_ONLY_IMM    0x0bu
#define SOFT_IB_OPC_READ_REQUEST      0x0cu
#define SOFT_IB_OPC_READ_RESP_FIRST   0x0du
#define SOFT_IB_OPC_READ_RESP_MIDDLE  0x0eu
#define SOFT_IB_OPC_READ_RESP_LAST    0x0fu
#define SOFT_IB_OPC_READ_RESP_ONLY    0x10u
#define SOFT_IB_OPC_ACK               0x11u
#define SOFT_IB_OPC_ATOMIC_ACK        0x12u
#define SOFT_IB_OPC_CMP_SWAP          0x13u
#define SOFT_IB_OPC_FETCH_ADD         0x14u
#define SOFT_IB_OPC_UC                0x20u   /* added to a SEND/WRITE code */
#define SOFT_IB_OPC_UD_SEND_ONLY      0x64u
#define SOFT_IB_OPC_UD_SEND_ONLY_IMM  0x65u

/* Big-endian fields at any alignment: the packet code's, the tests' and
 * the fuzz targets' that build or read frames. */
static inline void
put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint16_t
get_be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static inline uint32_t
get_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
		((uint32_t)p[2] << 8) | p[3];
}

static inline void
put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32(p + 4, (uint32_t)v);
}

static inline uint64_t
get_be64(const uint8_t *p)
{
	return ((uint64_t)get_be32(p) << 32) | get_be32(p + 4);
}

/* The headers after the BTH an opcode carries (soft_wire_opcode()). */
#define SOFT_WIRE_HAS_RETH      (1u << 0)   /* 16: VA, R_Key, DMA length */
#define SOFT_WIRE_HAS_AETH      (1u << 1)   /* 4: syndrome, MSN */
#define SOFT_WIRE_HAS_ATOMIC    (1u << 2)   /* 28: VA, R_Key, swap/add, compare */
#define SOFT_WIRE_HAS_ATOMICACK (1u << 3)   /* 8: the original value */
#define SOFT_WIRE_HAS_IMM       (1u << 4)   /* 4: ImmDt */
#define SOFT_WIRE_HAS_DETH      (1u << 5)   /* 8: Q_Key, source QP */
#define SOFT_WIRE_HAS_PAYLOAD   (1u << 6)   /* data may follow */
#define SOFT_WIRE_FIRST         (1u << 7)   /* FIRST or ONLY of a message */
#define SOFT_WIRE_LAST          (1u << 8)   /* LAST or ONLY of a message */
#define SOFT_RETH_LEN        16u
#define SOFT_AETH_LEN        4u
#define SOFT_ATOMICETH_LEN   28u
#define SOFT_ATOMICACK_LEN   8u

/* AETH syndromes (IBA 9.7.5.2.2 Table 43): ACK with no credit count,
 * RNR NAK (low 5 bits: the RNR timer), NAKs. */
#define SOFT_AETH_ACK           0x1fu
#define SOFT_AETH_RNR           0x20u
#define SOFT_AETH_NAK_PSN       0x60u   /* PSN sequence error */
#define SOFT_AETH_NAK_INV_REQ   0x61u
#define SOFT_AETH_NAK_REM_ACC   0x62u
#define SOFT_AETH_NAK_REM_OP    0x63u
#define SOFT_AETH_TYPE(s)       ((s) & 0xe0u)

/* What an opcode carries (SOFT_WIRE_HAS_*, FIRST, LAST), 0 for one this
 * device does not take (RD, XRC, the SEND with invalidate). */
uint32_t soft_wire_opcode(uint8_t opcode);

/* BTH byte 1: SE, MigReq, PadCnt (2 bits), TVer (4 bits). */
#define SOFT_BTH_SE          0x80u
#define SOFT_BTH_MIG         0x40u
#define SOFT_BTH_PAD_SHIFT   4u
/* BTH byte 8: AckReq, then 7 reserved bits. */
#define SOFT_BTH_ACKREQ      0x80u

/* The UD receive's 40-byte GRH space (IBA 11.4.1.2; verbs for RoCEv2 over
 * IPv4: 20 zero bytes, then the IPv4 header, as rxe writes it). */
#define SOFT_GRH_LEN         40u

/* Why a received frame was not delivered (soft_wire_parse()); each one
 * is a counter of the device (qpio_soft_wire_stats). */
enum soft_wire_drop {
	SOFT_WIRE_OK = 0,
	SOFT_WIRE_NOT_ROCE,    /* another ethertype, IP protocol or port */
	SOFT_WIRE_TRUNCATED,   /* shorter than its headers say */
	SOFT_WIRE_OVERSIZE,    /* not in one receive buffer (the device's) */
	SOFT_WIRE_BAD_IP,      /* IP version, header length, checksum,
				* length, fragment, an IPv4-mapped
				* address in an IPv6 header */
	SOFT_WIRE_NOT_MINE,    /* IP destination not the device's */
	SOFT_WIRE_BAD_UDP,     /* UDP length */
	SOFT_WIRE_BAD_BTH,     /* TVer, opcode not implemented */
	SOFT_WIRE_BAD_ICRC,
	SOFT_WIRE_DROP_MAX,
};

/* What a parsed RoCEv2 packet carries. Pointers point into the frame. */
struct soft_wire_pkt {
	uint8_t opcode;        /* BTH OpCode */
	uint8_t se;            /* BTH solicited event */
	uint8_t ackreq;
	uint8_t ipv6;          /* 1: IPv6, 0: IPv4 */
	uint8_t tclass;        /* IPv4 DSCP/ECN byte, IPv6 traffic class */
	uint8_t hop_limit;     /* IPv4 TTL, IPv6 hop limit */
	uint16_t pkey;
	uint16_t udp_sport;
	uint32_t flow_label;   /* IPv6 only */
	uint32_t dqpn;         /* 24 bits */
	uint32_t psn;          /* 24 bits */
	uint32_t qkey;         /* DETH */
	uint32_t src_qpn;      /* DETH, 24 bits */
	uint32_t imm;          /* ImmDt, host order */
	uint8_t has_imm;
	uint32_t has;          /* soft_wire_opcode() of the opcode */
	uint64_t va;           /* RETH, AtomicETH */
	uint32_t rkey;
	uint32_t dmalen;       /* RETH */
	uint64_t swap_add;     /* AtomicETH */
	uint64_t compare;
	uint8_t aeth_syn;      /* AETH */
	uint32_t msn;
	uint64_t atomic_orig;  /* AtomicAckETH */
	const uint8_t *l3;     /* IP header */
	const uint8_t *payload;
	uint32_t len;          /* payload bytes, without pad */
	uint8_t sip[16];       /* as GIDs: IPv4 ones ::ffff:a.b.c.d */
	uint8_t dip[16];
};

/* What soft_wire_build() puts in a packet: the fields of the headers
 * its opcode carries (the others are not read). */
struct soft_wire_hdr {
	struct rte_ether_addr dmac;
	struct rte_ether_addr smac;
	uint8_t ipv6;
	uint8_t sip[16];       /* IPv4: first 4 bytes */
	uint8_t dip[16];
	uint8_t tclass;
	uint8_t hop_limit;
	uint32_t flow_label;
	uint16_t udp_sport;
	uint8_t opcode;        /* SOFT_IB_OPC_* */
	uint8_t se;
	uint8_t ackreq;
	uint16_t pkey;
	uint32_t dqpn;
	uint32_t psn;
	uint32_t qkey;         /* DETH */
	uint32_t src_qpn;
	uint64_t va;           /* RETH, AtomicETH */
	uint32_t rkey;
	uint32_t dmalen;       /* RETH */
	uint64_t swap_add;     /* AtomicETH */
	uint64_t compare;
	uint8_t aeth_syn;      /* AETH */
	uint32_t msn;
	uint64_t atomic_orig;  /* AtomicAckETH */
	uint32_t imm;          /* ImmDt, host order */
};

/* Bytes of the headers after the BTH for opcode (0 when not taken). */
uint32_t soft_wire_ext_len(uint8_t opcode);

/* Bytes of the frame of a packet of h with len payload bytes. */
static inline uint32_t
soft_wire_frame_len(const struct soft_wire_hdr *h, uint32_t len)
{
	return SOFT_ETH_LEN + (h->ipv6 ? SOFT_IPV6_LEN : SOFT_IPV4_LEN) +
		SOFT_UDP_LEN + SOFT_BTH_LEN + soft_wire_ext_len(h->opcode) +
		((len + 3u) & ~3u) + SOFT_ICRC_LEN;
}

/*
 * The ICRC of a RoCEv2 packet (IBA Annex A17.3.3): CRC-32 (the Ethernet
 * polynomial, reflected, initial value and final complement all ones)
 * over 8 bytes of ones (the LRH a RoCEv2 packet lacks), then the IP
 * header with the fields routers change set to ones (IPv4: type of
 * service, TTL, checksum; IPv6: traffic class, flow label, hop limit),
 * the UDP header with its checksum set to ones, the BTH with its reserved
 * byte 4 set to ones, and everything after it up to the ICRC.
 * @param l3 the IP header; the 8 bytes before it are overwritten during
 *   the call and restored, as are the masked fields (the frame must be
 *   writable and contiguous: a single-segment mbuf).
 * @param len bytes from l3 up to, not including, the ICRC.
 * @return the ICRC as the CRC's value: the frame carries it least
 *   significant byte first.
 */
uint32_t soft_wire_icrc(uint8_t *l3, bool ipv6, uint32_t len);

/* A piece of a packet's payload. */
struct soft_wire_seg {
	const void *p;
	uint32_t len;
};

/*
 * Write the packet of h (its opcode's headers, from h) into frame, with
 * the nseg pieces of seg one after the other (len bytes in all) as its
 * payload, zero pad to 4 bytes, the IPv4 checksum (UDP checksum 0 on
 * IPv4, as rxe sends; the full one on IPv6) and the ICRC. frame holds
 * soft_wire_frame_len(h, len) bytes; h->opcode is one soft_wire_opcode()
 * takes. @return that length.
 */
uint32_t soft_wire_build(uint8_t *frame, const struct soft_wire_hdr *h,
			 const struct soft_wire_seg *seg, unsigned int nseg,
			 uint32_t len);

/*
 * Parse and check a received frame of len bytes: Ethernet, IPv4 (no
 * options, no fragment, checksum right, total length within the frame:
 * Ethernet padding beyond it is ignored) or IPv6 (neither address
 * IPv4-mapped), UDP to port 4791 with a consistent length, BTH version
 * 0, an opcode this device takes (soft_wire_opcode()), the extension
 * headers it carries, no payload on one that carries none, the ICRC. The
 * IP destination must be
 * one of the nip addresses of ip (16 bytes each, IPv4 ones as
 * ::ffff:a.b.c.d). frame is written during the ICRC check and restored.
 * @return SOFT_WIRE_OK and *p filled, or the reason of the drop.
 */
enum soft_wire_drop soft_wire_parse(uint8_t *frame, uint32_t len,
				    const uint8_t (*ip)[16], unsigned int nip,
				    struct soft_wire_pkt *p);

/* The name of a drop reason, as in the device's statistics. */
const char *soft_wire_drop_name(enum soft_wire_drop d);

/* IPv4-mapped IPv6 address ::ffff:a.b.c.d of a 4-byte IPv4 address. */
static inline void
soft_wire_ipv4_mapped(uint8_t gid[16], const uint8_t v4[4])
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					 0xff, 0xff };

	memcpy(gid, pfx, sizeof(pfx));
	memcpy(gid + 12, v4, 4);
}

/* 1 when gid is an IPv4-mapped address. */
static inline int
soft_wire_gid_is_v4(const uint8_t gid[16])
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					 0xff, 0xff };
	unsigned int i;

	for (i = 0; i < 12; i++)
		if (gid[i] != pfx[i])
			return 0;
	return 1;
}

#endif /* SOFT_WIRE_PKT_H */
