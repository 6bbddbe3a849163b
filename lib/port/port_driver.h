/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_PORT_DRIVER_H
#define QPIO_PORT_DRIVER_H

/**
 * @file
 * Interface between lib/port and port drivers (installed for out-of-tree
 * drivers, like DPDK's ethdev_driver.h).
 *
 * lib/port checks the port state, queue ids, counts and descriptor ranges
 * against qpio_port_info before it calls an op. Ops return 0 or -errno
 * and log the reason themselves.
 */

#include <sys/queue.h>

#include <rte_kvargs.h>
#include <rte_log.h>

#include "qpio_port.h"
#include "qpio_internal.h"

struct qpio_port;

/** Operations of a port driver. Required unless marked optional. */
struct qpio_port_ops {
	/** Fill the limits; lib/port fills name and driver afterwards. */
	void (*info_get)(struct qpio_port *port, struct qpio_port_info *info);
	/** Queue counts and conf are in port->nb_rxq/nb_txq/conf (optional). */
	int (*configure)(struct qpio_port *port);
	/** Set port->rxq[qid] (and port->txq[qid]) to the new queue. */
	int (*rx_queue_setup)(struct qpio_port *port, uint16_t qid,
			      uint16_t nb_desc, int socket_id,
			      struct rte_mempool *mp);
	int (*tx_queue_setup)(struct qpio_port *port, uint16_t qid,
			      uint16_t nb_desc, int socket_id);
	/** Free the queue and exactly the mbufs the driver still owns. */
	void (*rx_queue_release)(struct qpio_port *port, uint16_t qid);
	void (*tx_queue_release)(struct qpio_port *port, uint16_t qid);
	/** Make the queues ready; set port->rx_burst and port->tx_burst. */
	int (*start)(struct qpio_port *port);
	/** Stop the datapath; free every mbuf held for transmission. */
	int (*stop)(struct qpio_port *port);
	/** Free driver state (queues are released before). */
	void (*close)(struct qpio_port *port);
	/** Fill the basic counters (zeroed by lib/port first). */
	void (*stats_get)(struct qpio_port *port, struct qpio_port_stats *st);
	void (*stats_reset)(struct qpio_port *port);
	/** Driver xstats (optional): names (NULL: count only) and values. */
	int (*xstats_names)(struct qpio_port *port,
			    struct qpio_port_xstat_name *names, unsigned int n);
	int (*xstats_values)(struct qpio_port *port, uint64_t *values,
			     unsigned int n);
	/** Link state while started (optional: up at start otherwise). */
	void (*link_get)(struct qpio_port *port, struct qpio_port_link *link);
	/** Reclaim transmit completions (optional). */
	int (*tx_done_cleanup)(struct qpio_port *port, uint16_t qid,
			       uint32_t free_cnt);
	/**
	 * Rx queue interrupts (optional, all four or none; lib/port calls
	 * them only on a started port configured with conf.rx_intr, for a
	 * queue that is set up): arm, disarm, sleep (1 woken, 0 timed out,
	 * -EINTR), wake a sleeper, and the pollable fd.
	 */
	int (*rx_intr_enable)(struct qpio_port *port, uint16_t qid);
	int (*rx_intr_disable)(struct qpio_port *port, uint16_t qid);
	int (*rx_intr_wait)(struct qpio_port *port, uint16_t qid,
			    int timeout_ms);
	int (*rx_intr_wake)(struct qpio_port *port, uint16_t qid);
	int (*rx_intr_fd)(struct qpio_port *port, uint16_t qid);
};

/** A port: generic part, allocated by lib/port. */
struct qpio_port {
	char name[QPIO_PORT_NAME_LEN];
	uint16_t port_id;
	uint8_t started;
	uint8_t configured;
	uint16_t nb_rxq;
	uint16_t nb_txq;
	struct qpio_port_conf conf;           /**< max_rx_pkt_len resolved */
	const struct qpio_port_driver *drv;
	const struct qpio_port_ops *ops;
	struct rte_ether_addr mac;            /**< set by probe */
	void *rxq[QPIO_PORT_MAX_QUEUES];      /**< driver queue objects */
	void *txq[QPIO_PORT_MAX_QUEUES];
	qpio_port_rx_burst_t rx_burst;        /**< set by ops->start */
	qpio_port_tx_burst_t tx_burst;
	void *priv;                           /**< driver state */
};

/** A port driver, registered from a constructor. */
struct qpio_port_driver {
	TAILQ_ENTRY(qpio_port_driver) next;
	const char *name;                 /**< port name prefix: "pcap" */
	const char *const *valid_keys;    /**< NULL-terminated kvargs keys */
	/**
	 * Create the driver state: set port->ops, port->priv and port->mac.
	 * kvlist holds the parsed devargs (NULL when there were none).
	 * @return 0 or -errno (logged).
	 */
	int (*probe)(struct qpio_port *port, const struct rte_kvargs *kvlist);
};

/** Add a driver to the registry. Called from constructors only. */
__qpio_internal
void qpio_port_driver_register(struct qpio_port_driver *drv);

#define QPIO_PORT_DRIVER_REGISTER(drv) \
	RTE_INIT(qpio_port_driver_register_ ## drv) \
	{ \
		qpio_port_driver_register(&(drv)); \
	}

/**
 * qpio_port_create() for a port that a device owns (a soft device's wire
 * port): the port takes the highest free id instead of the lowest, so the
 * application's own ports keep ids 0, 1, ... in the order it creates them
 * (as an ethdev owned by another driver stays out of an application's
 * port numbering in DPDK). Same errors as qpio_port_create().
 */
__qpio_internal
int qpio_port_create_owned(const char *devargs);

/** The live port with this id, or NULL. For drivers linking ports. */
__qpio_internal
struct qpio_port *qpio_port_get(uint16_t port_id);

/**
 * Read key from kvlist as an unsigned integer in [min, max] (decimal
 * only); leaves *val untouched when absent.
 * @return 0 or -EINVAL (logged, naming the port, key and range).
 */
__qpio_internal
int qpio_port_kvargs_u32(const struct qpio_port *port,
			 const struct rte_kvargs *kvlist, const char *key,
			 uint32_t min, uint32_t max, uint32_t *val);

/**
 * Read key from kvlist as a string; *val points into kvlist (valid until
 * probe returns) or is left untouched when absent.
 * @return 0 or -EINVAL (key given twice or empty; logged).
 */
__qpio_internal
int qpio_port_kvargs_str(const struct qpio_port *port,
			 const struct rte_kvargs *kvlist, const char *key,
			 const char **val);

/** A locally administered unicast MAC derived from the port id. */
__qpio_internal
void qpio_port_default_mac(uint16_t port_id, struct rte_ether_addr *mac);

#endif /* QPIO_PORT_DRIVER_H */
