/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_PORT_CAPTURE_H
#define QPIO_PORT_CAPTURE_H

/**
 * @file
 * Capture tap: copies of the frames a port receives or sends, written to
 * a pcapng file (rte_pcapng) by a writer thread, while the port runs.
 *
 * The lcore that receives or sends calls qpio_port_capture_tap() with
 * the burst. Each frame is copied (at most snaplen bytes) into an mbuf of
 * the capture's own pool and put on a ring; the writer thread takes the
 * copies off the ring and writes them. The lcore never waits: when the
 * pool or the ring is full (the writer is behind), the copy is not made
 * and the frame is counted in qpio_port_capture_stats.dropped. The
 * frames of the burst are only read.
 *
 * The file starts with a section header and one interface description
 * (Ethernet, the port's name, snaplen). With max_bytes, the writer
 * starts a new file when one has reached that size: FILE.pcapng, then
 * FILE.1.pcapng, FILE.2.pcapng, ... each a complete pcapng file.
 */

#include <stdint.h>

#include <rte_mbuf.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Direction of a tapped burst. */
enum qpio_port_capture_dir {
	QPIO_PORT_CAPTURE_RX = 1,   /**< frames the port received */
	QPIO_PORT_CAPTURE_TX = 2,   /**< frames given to the port to send */
};

/** Settings of a capture. */
struct qpio_port_capture_conf {
	const char *path;       /**< file to create (truncated) */
	/** Bytes kept per frame, at most about 65200 (a copy must fit an
	 *  mbuf); 0: the port's largest frame (max_rx_pkt_len). */
	uint32_t snaplen;
	uint64_t max_bytes;     /**< start a new file at this size, 0: never */
	uint32_t ring_size;     /**< copies in flight, power of 2, 0: 1024 */
};

/** Counters of a capture. */
struct qpio_port_capture_stats {
	uint64_t tapped;        /**< frames offered to qpio_port_capture_tap() */
	uint64_t written;       /**< frames written to the files */
	uint64_t dropped;       /**< frames not captured: pool or ring full */
	uint64_t bytes;         /**< bytes written to the files, headers too */
	uint32_t files;         /**< files written (1 + rotations) */
};

struct qpio_port_capture;

/**
 * Start a capture of port_id: create the file, its pool and ring, and
 * the writer thread. Control thread only.
 * @return the capture, or NULL with rte_errno: EINVAL (NULL conf or
 *   path, no such port, ring_size not a power of 2, snaplen too large,
 *   max_bytes below 64 KiB), ENOMEM, or the errno of creating the file
 *   or the thread (logged with the path).
 */
struct qpio_port_capture *
qpio_port_capture_start(uint16_t port_id,
			const struct qpio_port_capture_conf *conf);

/**
 * Copy the n frames of pkts (received or about to be sent on queue of
 * the capture's port) to the capture. Any lcore; several lcores may tap
 * one capture at once. Never blocks; frames that cannot be copied are
 * counted as dropped. The frames stay the caller's.
 */
void qpio_port_capture_tap(struct qpio_port_capture *cap, uint16_t queue,
			   struct rte_mbuf *const *pkts, uint16_t n,
			   enum qpio_port_capture_dir dir);

/**
 * Read the counters. Any thread; values may be one burst stale.
 * @return 0, or -EINVAL for NULL arguments.
 */
int qpio_port_capture_stats_get(const struct qpio_port_capture *cap,
				struct qpio_port_capture_stats *stats);

/**
 * Stop: the writer writes every copy still on the ring, closes the file
 * and exits; then everything is freed. No lcore may tap cap any more.
 * Control thread only.
 * @param stats filled with the final counters when not NULL.
 * @return 0, -EINVAL for NULL cap, or -errno of the last failed write
 *   (the counters say how far it got).
 */
int qpio_port_capture_stop(struct qpio_port_capture *cap,
			   struct qpio_port_capture_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* QPIO_PORT_CAPTURE_H */
