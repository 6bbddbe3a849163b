/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_ETH_H
#define QPIO_ETH_H

/**
 * @file
 * The eth port driver (ports over DPDK ethdevs): what an application
 * needs to know before it creates a port, for the PMDs whose limits
 * depend on devargs it chooses. DPDK 22.11's net_af_packet receives a
 * frame after 66 bytes of its ring frame (TPACKET_V2's header and the
 * sockaddr, aligned: net/packet/af_packet.c, tpacket_rcv()) and cuts what
 * passes the ring frame's end; it copies each ring frame into one mbuf
 * (its rx queue set-up wants framesz - 32 bytes of mbuf data room). The
 * eth port reports both for a port made (qpio_port_info max_rx_pkt_len
 * and min_rx_buf); these calls give them for a port to make.
 */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** net_af_packet's ring frame size when its devargs give none (DPDK
 *  22.11's DFLT_FRAME_SIZE). */
#define QPIO_ETH_AFP_FRAMESZ_DEFAULT 2048u

/**
 * The net_af_packet ring frame size (its framesz= and blocksz= devargs)
 * that carries frames of max_frame bytes (Ethernet header included, no
 * CRC): QPIO_ETH_AFP_FRAMESZ_DEFAULT when that does (max_frame + 66 at
 * most 2048), else the size rounded up to whole pages of page bytes.
 *
 * @param max_frame largest frame, bytes (an interface's MTU + 14).
 * @param page the page size (sysconf(_SC_PAGESIZE)); a power of two.
 * @return the frame size, or 0 when the frames its mbufs would need
 *   pass 65535 bytes of data room (qpio_eth_afp_max_frame() gives the
 *   largest that fits). Thread-safe (no state).
 */
uint32_t qpio_eth_afp_framesz(uint32_t max_frame, uint32_t page);

/**
 * The largest frame (Ethernet header included) net_af_packet's ring
 * frames of framesz bytes carry: framesz - 66, at most 65535.
 * @return 0 for a framesz of 66 or less. Thread-safe.
 */
uint32_t qpio_eth_afp_max_frame(uint32_t framesz);

/**
 * The mbuf data room net_af_packet's rx queue wants for ring frames of
 * framesz bytes: framesz - 32 (the frame's own bytes behind TPACKET_V2's
 * header, which its copy takes whole).
 * @return 0 for a framesz of 32 or less. Thread-safe.
 */
uint32_t qpio_eth_afp_rx_buf(uint32_t framesz);

/** The largest frame any net_af_packet geometry carries in mbufs whose
 *  data room fits DPDK's 16 bits with the default headroom, for page
 *  bytes a page (61374 with 4096: ring frames of 61440 bytes). */
uint32_t qpio_eth_afp_frame_limit(uint32_t page);

#ifdef __cplusplus
}
#endif

#endif /* QPIO_ETH_H */
