/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_RING_PRIVATE_H
#define QPIO_RING_PRIVATE_H

/*
 * Ring port driver: a packet port whose queues are rte_rings. Control
 * path in ring.c, bursts in ring_rxtx.c.
 */

#include <stdint.h>

#include <rte_common.h>
#include <rte_ring.h>

#include "port_driver.h"
#include "qpio_log.h"

extern int ring_logtype;

#define RING_LOG(level, ...) \
	QPIO_LOG_LINE(level, ring_logtype, "qpio.net.ring", __VA_ARGS__)

/** Largest descriptor count of a queue (a power of two). */
#define RING_MAX_DESC 32768u

/** One rx queue: frames are dequeued from ring. */
struct ring_rxq {
	struct rte_ring *ring;
	uint32_t max_len;         /**< frames above it are dropped (bytes) */
	uint64_t packets;
	uint64_t bytes;
	uint64_t errors;          /**< oversize frames dropped */
	uint8_t owned;            /**< ring created by this queue */
} __rte_cache_aligned;

/** One tx queue: frames are enqueued into ring. */
struct ring_txq {
	struct rte_ring *ring;    /**< own, attached, or the peer's rx ring */
	uint32_t max_len;         /**< frames above it are freed (bytes) */
	uint64_t packets;
	uint64_t bytes;
	uint64_t errors;          /**< oversize frames freed */
	uint8_t owned;
} __rte_cache_aligned;

/** Driver state of one port. */
struct ring_port {
	char peer[QPIO_PORT_NAME_LEN];   /**< "" without peer= */
	struct rte_ring *rx_attach;      /**< rx_ring=NAME, else NULL */
	struct rte_ring *tx_attach;      /**< tx_ring=NAME, else NULL */
};

/**
 * Dequeue up to nb_pkts frames of a struct ring_rxq into pkts; frames
 * longer than max_len are freed and counted as errors. The caller owns
 * the frames returned. One lcore per queue.
 * @return frames stored in pkts[0..n).
 */
uint16_t ring_rx_burst(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts);

/**
 * Enqueue up to nb_pkts frames into the ring of a struct ring_txq.
 * Frames longer than max_len are freed and counted as errors; they count
 * as taken. Frames from the returned index on stay the caller's (tx-ownership).
 * One lcore per queue.
 * @return frames taken, a prefix of pkts.
 */
uint16_t ring_tx_burst(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts);

#endif /* QPIO_RING_PRIVATE_H */
