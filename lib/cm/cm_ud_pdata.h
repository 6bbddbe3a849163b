/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_CM_UD_PDATA_H
#define QPIO_CM_UD_PDATA_H
/*
 * lib/cm's private data of a UD connection (a SIDR exchange, IBA 12.11),
 * the same on ibv devices (librdmacm, cm_rdmacm_ud.c) and on soft wire
 * devices (the IB CM, cm_ibcm.c), so either end may be either. SIDR
 * carries neither the requester's QPN and Q_Key nor the length of the
 * consumer's data, so lib/cm sends its private data at a fixed layout,
 * 70 bytes, in the SIDR REQ (after rdma_cm's header), the SIDR REP and
 * the rejecting SIDR REP:
 *
 *   bytes  0..55  the user's private data, zero-padded
 *   byte   56     CM_UD_MAGIC (0x51)
 *   byte   57     CM_UD_VERSION (1)
 *   byte   58     length of the user's private data, 0..56
 *   byte   59     0
 *   bytes 60..63  QPN of the sender's QP, big-endian (0 in a reject)
 *   bytes 64..67  Q_Key of the sender's QP, big-endian (0 in a reject)
 *   bytes 68..69  LID of the sender's port, big-endian (0 on RoCE)
 */
#include <stdint.h>

#include "cm_wire.h"

#define CM_UD_MAGIC 0x51
#define CM_UD_VERSION 1
#define CM_UD_OFF QPIO_CM_PRIVATE_DATA_MAX  /* where the trailer starts */
#define CM_UD_LEN (CM_UD_OFF + 14)          /* the whole private data */

/* The CM_UD_LEN bytes of private data into buf: msg's (NULL: none), then
 * the trailer with qpn, qkey and lid. */
void cm_ud_pdata_build(uint8_t *buf, const struct cm_msg *msg, uint32_t qpn,
		       uint32_t qkey, uint16_t lid);

/* Read len bytes of a SIDR message's private data p (NULL: none) into
 * msg->pdata: with lib/cm's trailer the user's bytes and 1 (qpn, qkey and
 * lid set); without it the first QPIO_CM_PRIVATE_DATA_MAX bytes and 0. */
int cm_ud_pdata_parse(const uint8_t *p, unsigned int len, struct cm_msg *msg,
		      uint32_t *qpn, uint32_t *qkey, uint16_t *lid);

#endif
