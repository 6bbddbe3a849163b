/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_PORT_CORE_H
#define QPIO_PORT_CORE_H

/**
 * @file
 * Layouts the inline burst functions of qpio_port.h need.
 * Do not use these fields directly: use qpio_port_rx_burst() and
 * qpio_port_tx_burst().
 */

#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "qpio_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Driver receive burst: queue is the driver's rx queue object. */
typedef uint16_t (*qpio_port_rx_burst_t)(void *queue, struct rte_mbuf **pkts,
					 uint16_t nb_pkts);
/** Driver transmit burst: queue is the driver's tx queue object. */
typedef uint16_t (*qpio_port_tx_burst_t)(void *queue, struct rte_mbuf **pkts,
					 uint16_t nb_pkts);

/**
 * Per-port fast-path table, one cache-aligned entry per port id. The
 * burst functions are set when the port starts and reset to functions
 * that return 0 when it stops, so a stopped port never reaches a driver.
 */
struct qpio_port_fp {
	qpio_port_rx_burst_t rx_burst;
	qpio_port_tx_burst_t tx_burst;
	uint16_t nb_rxq;            /**< queues valid while started */
	uint16_t nb_txq;
	void *rxq[QPIO_PORT_MAX_QUEUES];
	void *txq[QPIO_PORT_MAX_QUEUES];
} __rte_cache_aligned;

/** The table behind the inline burst functions. Do not use directly. */
extern struct qpio_port_fp qpio_port_fp_ops[QPIO_MAX_PORTS];

#ifdef __cplusplus
}
#endif

#endif /* QPIO_PORT_CORE_H */
