/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_FUZZ_WIRE_DEV_H
#define QPIO_FUZZ_WIRE_DEV_H

/*
 * The parts of fuzz_wire_dev: the frame fix-up (fuzz_wire_fix.c), the
 * bytes of one input record made into a frame that gets past the checks
 * a random frame fails, so that it reaches the QP state machine its
 * control bytes aim at; the rules of the device's counters
 * (fuzz_wire_stats.c).
 *
 * A record's 4 control bytes c:
 *   c[0] bits 0-1: the QP (Q_RC, Q_UC, Q_UD; 3: the BTH's own
 *        destination and PSN); bit 2: IPv6 (else IPv4); bits 3-7: the
 *        mode, WIRE_FIX_* below (under WIRE_FIX_TRAILER: every fix);
 *   c[1] the PSN: under 0xc0 the one the QP expects, else that -16..+15;
 *        for a response to the RC requester (READ response, ACK, ATOMIC
 *        ACK), bits 0-2 one of the last 8 PSNs it sent (0: the last),
 *        bits 3-7 an offset from it (24..31: -8..-1);
 *   c[2] from 0xc0: an action before the frame (fuzz_wire_dev.c); bits
 *        0-2: the bit a spoiling mode flips;
 *   c[3] the action's length, the byte a spoiling mode changes, or the
 *        Ethernet padding (low 4 bits).
 */
#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>

#include "qpio_rdma.h"
#include "qpio_soft.h"
#include "soft_wire_pkt.h"

enum { Q_RC, Q_UC, Q_UD, WIRE_FIX_NQ };

/* Modes (c[0] bits 3-7): what is left as it came. */
#define WIRE_FIX_TRAILER     25  /* Ethernet padding after the IP packet */
#define WIRE_FIX_SPOIL_FIXED 26  /* a bit flipped, then the sums made right */
#define WIRE_FIX_SPOIL       27  /* a bit flipped after the sums */
#define WIRE_FIX_RAW_LEN     28  /* the IP and UDP lengths */
#define WIRE_FIX_RAW_KEYS    29  /* P_Key, Q_Key, R_Key, addresses, the
				  * IP source */
#define WIRE_FIX_RAW_OP      30  /* the opcode and the BTH's TVer */
#define WIRE_FIX_RAW         31  /* everything; c[1] bit 0: the sums made
				  * right when the lengths let */

/* What the fix-up aims at. */
struct wire_fix_env {
	struct rte_ether_addr mac;     /* the device's */
	uint64_t t;                    /* MR T (remote access): address */
	uint32_t t_len, t_rkey;
	uint32_t r_rkey;               /* MR R: local write only */
	uint32_t qkey;                 /* the UD QP's */
	uint32_t qpn[WIRE_FIX_NQ];
	uint32_t epsn[WIRE_FIX_NQ];    /* the PSN each QP expects */
	uint32_t req_psn[8];           /* the RC requester's last PSNs */
	unsigned int nreq;             /* PSNs it sent: req_psn[(nreq - 1) % 8]
					* the last */
};

/* What the fix-up chose. */
struct wire_fixed {
	int q;                         /* the QP aimed at, -1: none */
	uint8_t opcode;
	uint32_t psn;
	uint32_t dmalen;               /* RETH */
};

/*
 * Fix the n bytes of frame f up by the control bytes c (above): Ethernet
 * to env->mac, IPv4 10.0.0.1 -> 10.0.0.2 or IPv6 fd00::1 -> fd00::2, UDP
 * to 4791 with its length, an opcode of the QP's transport (one that
 * came of it stays), the BTH's destination QP and PSN, P_Key 0xffff, the
 * Q_Key, R_Keys of MR T mostly, addresses at and around MR T, DMA
 * lengths of this packet or of more, the IP checksum and the ICRC
 * (soft_wire_icrc()). f has room for n + 128 bytes: a frame shorter than
 * its headers is extended with zeros. @return the frame's length.
 */
uint32_t wire_fix_frame(const struct wire_fix_env *env, uint8_t *f,
			uint32_t n, const uint8_t c[4], struct wire_fixed *fx);

/* The device's counters (stops the run when it cannot read them). */
struct qpio_soft_wire_stats wire_stats(const struct qpio_device *dev);

/* a -> b: frames (0 or 1) frames of len bytes received meanwhile, each
 * ended in exactly one rx counter (rx_* and arp_rx); rx_bytes grew by
 * len when it was delivered, else not at all. Stops the run otherwise. */
void wire_rx_check(const struct qpio_soft_wire_stats *a,
		   const struct qpio_soft_wire_stats *b, uint32_t len,
		   int frames);

/* QPIO_FUZZ_TRACE: the counter the frame fx of len bytes ended in. */
void wire_rx_trace(const struct qpio_soft_wire_stats *a,
		   const struct qpio_soft_wire_stats *b,
		   const struct wire_fixed *fx, uint32_t len);

/* a -> b: the frames and RoCEv2 bytes taken off the tx ring meanwhile
 * are the ones counted (tx_packets and arp_tx, tx_bytes); nothing was
 * dropped, lacked an mbuf, waited for a neighbour or had a bad GID. */
void wire_tx_check(const struct qpio_soft_wire_stats *a,
		   const struct qpio_soft_wire_stats *b, uint64_t frames,
		   uint64_t bytes);

/* a + n in 24-bit PSN space (n may be negative). */
static inline uint32_t
psn_add(uint32_t a, int32_t n)
{
	return (uint32_t)((int32_t)a + n) & 0xffffffu;
}

#endif
