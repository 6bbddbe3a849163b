/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_CM_WIRE_H
#define QPIO_CM_WIRE_H
/*
 * The soft-device exchange's wire format, version 1 (all integers in
 * network byte order; doc/guides/prog_guide/cm_lib.rst has the table):
 *
 *   header   0 magic "QPCM" (u32) | 4 version (u8) | 5 type (u8) |
 *            6 length of the whole message in bytes (u16)
 *   REQ, REP 8 device name (32 bytes, NUL-terminated) | 40 qpn | 44 psn |
 *            48 qkey (u32 each) | 52 lid (u16) | 54 qp type | 55 mtu |
 *            56 gid (16 bytes) | 72 is_global | 73 private data length |
 *            74 two zero bytes | 76 private data
 *   REJ      8 private data length | 9 three zero bytes | 12 private data
 *   RTU, DREQ  header only
 */
#include <stddef.h>
#include <stdint.h>

#include "qpio_cm.h"

#define CM_WIRE_MAGIC 0x5150434du /* "QPCM" */
#define CM_WIRE_VERSION 1u
#define CM_WIRE_HDR_LEN 8u
#define CM_WIRE_REQ_BASE 76u
#define CM_WIRE_REJ_BASE 12u
#define CM_WIRE_MAX_LEN (CM_WIRE_REQ_BASE + QPIO_CM_PRIVATE_DATA_MAX)

enum cm_msg_type {
	CM_MSG_REQ = 1,  /* requester -> listener: connect */
	CM_MSG_REP = 2,  /* listener -> requester: accepted */
	CM_MSG_RTU = 3,  /* requester -> listener: ready to use */
	CM_MSG_REJ = 4,  /* listener -> requester: rejected */
	CM_MSG_DREQ = 5, /* either way: disconnect */
};

struct cm_msg {
	uint8_t type;                /* enum cm_msg_type */
	uint8_t qp_type;             /* REQ, REP: enum qpio_qp_type */
	uint8_t pdata_len;
	uint8_t pdata[QPIO_CM_PRIVATE_DATA_MAX];
	struct qpio_cm_peer peer;    /* REQ, REP */
};

/* Write msg into buf (CM_WIRE_MAX_LEN bytes); return its length. */
size_t cm_wire_build(uint8_t *buf, const struct cm_msg *msg);

/*
 * Parse the first message of buf[0..len).
 * Return its length (> 0) with msg filled, 0 when more bytes are needed,
 * or -EPROTO with *why naming the broken rule.
 */
int cm_wire_parse(const uint8_t *buf, size_t len, struct cm_msg *msg,
		  const char **why);

#endif
