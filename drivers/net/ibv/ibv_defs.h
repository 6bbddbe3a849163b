/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef IBVD_DEFS_H
#define IBVD_DEFS_H

/* Constants of the libibverbs driver (doc/guides/nics/ibv.rst). */

/* Largest max_inline_data the create-QP probe tries, bytes. */
#define IBVD_PROBE_INLINE_MAX   4096u
/* Hop limit used on RoCE ports when an address vector leaves it 0. */
#define IBVD_ROCE_HOP_LIMIT     64u
/* Initial room of a CQ's QP table (grows on the control path). */
#define IBVD_CQ_QPS_INIT        4u
/* Bits of an ibv wr_id that hold the queue slot counter; the bits above
 * carry the QP's reset generation, so completions a reset left behind
 * in the CQ are recognised and dropped. */
#define IBVD_WRID_GEN_SHIFT     32
/* XRC SRQs that complete into one CQ: the index of the SRQ in its CQ's
 * table replaces the generation bits of its receives' wr_ids. */
#define IBVD_CQ_XRC_SRQS        64u
/* XRC domain handles a device may have open (qpio's limit). */
#define IBVD_MAX_XRCD           64u

#endif /* IBVD_DEFS_H */
