/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_PORT_H
#define QPIO_PORT_H

/**
 * @file
 * qpio packet ports: an ethdev-like burst API over any port driver
 * (the qp-port adapter over lib/rdma devices, pcap files, rte_ring pairs).
 *
 * Life cycle, as in DPDK's ethdev:
 *   qpio_port_create() -> qpio_port_configure() -> rx/tx queue setup ->
 *   qpio_port_start() -> bursts -> qpio_port_stop() -> (setup again or)
 *   qpio_port_close().
 *
 * Threading: the control functions (create, configure, setup, start, stop,
 * close, release) are not thread-safe; call them from one thread while no
 * lcore bursts on the port. Statistics reads may run at any time (values
 * are read without locks and can be one burst stale). One rx queue and one
 * tx queue are each used by at most one lcore at a time; different queues
 * of a port, and different ports, may be used by different lcores.
 *
 * Errors: int functions return 0 (or a count) or a negative errno, and
 * log a line naming the port and the rule; qpio_port_create() returns the
 * new port id or a negative errno.
 */

#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "qpio_config.h"
#include "qpio_port_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Longest port name ("qp0", "pcap12"), terminator included. */
#define QPIO_PORT_NAME_LEN 32
/** Longest extended statistic name, terminator included: room for a
 *  driver's prefix before a name of DPDK's size (RTE_ETH_XSTATS_NAME_SIZE,
 *  64), as the eth port's "ethdev_<name>". */
#define QPIO_PORT_XSTAT_NAME_LEN 128
/** Frame size when the configuration leaves max_rx_pkt_len at 0:
 *  Ethernet MTU 1500 plus header and CRC-less trailer room (bytes). */
#define QPIO_PORT_DEFAULT_MAX_PKT_LEN 1518u

/**
 * Transmit offload: fast release of sent mbufs (the value of ethdev's
 * RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE). With it the application guarantees,
 * for every tx queue of the port, that all the mbufs it transmits, every
 * segment, come from one mempool, are direct (not attached, no external
 * buffer) and have refcnt 1, so the driver may hand them back to the pool
 * with rte_mempool_put_bulk() without the per-mbuf checks of
 * rte_pktmbuf_free(). An mbuf outside that contract is undefined
 * behaviour, as with ethdev. Which mbufs a driver releases that way is in
 * its guide (doc/guides/nics).
 */
#define QPIO_PORT_TX_OFFLOAD_MBUF_FAST_FREE (UINT64_C(1) << 16)

/** Port configuration given to qpio_port_configure(). */
struct qpio_port_conf {
	/**
	 * Largest frame the port receives and transmits, in bytes, without
	 * CRC. 0 selects QPIO_PORT_DEFAULT_MAX_PKT_LEN (capped at the
	 * driver's max_rx_pkt_len). Larger frames follow the driver's
	 * documented policy (dropped and counted in ierrors/oerrors, never
	 * truncated).
	 */
	uint32_t max_rx_pkt_len;
	/**
	 * QPIO_PORT_TX_OFFLOAD_* bits the application asks for; each must
	 * be in qpio_port_info.tx_offload_capa. 0 asks for none.
	 */
	uint64_t tx_offloads;
	/**
	 * Nonzero: the rx queues can wake an lcore that sleeps on them
	 * (qpio_port_rx_intr_wait(), ethdev's intr_conf.rxq). Only a
	 * driver whose device raises rx queue interrupts takes it: the eth
	 * driver on a PMD that gives them (net_vhost, net_virtio_user,
	 * virtio and most hardware PMDs; not net_af_packet, net_memif,
	 * net_ring, net_pcap), checked when the port starts (-EOPNOTSUPP
	 * there); any other driver refuses it at configure (-EOPNOTSUPP).
	 * 0: no interrupts, the polling default.
	 */
	uint8_t rx_intr;
};

/** What a port can do, from qpio_port_info_get(). */
struct qpio_port_info {
	char name[QPIO_PORT_NAME_LEN];
	char driver[QPIO_PORT_NAME_LEN];
	uint16_t max_rx_queues;
	uint16_t max_tx_queues;
	uint16_t min_desc;           /**< descriptors per queue, inclusive */
	uint16_t max_desc;
	uint32_t max_rx_pkt_len;     /**< largest frame it can carry (bytes) */
	uint16_t max_tx_segs;        /**< mbuf segments per transmitted frame */
	uint16_t max_rx_segs;        /**< mbuf segments per received frame */
	int socket_id;               /**< NUMA node of the device, or SOCKET_ID_ANY */
	uint64_t tx_offload_capa;    /**< QPIO_PORT_TX_OFFLOAD_* it supports */
	/**
	 * Smallest mbuf data room past the headroom that its rx queues
	 * take, in bytes (net_af_packet: its ring frame less 32); 0 for
	 * none beyond qpio_port_rx_queue_setup()'s own 64.
	 */
	uint32_t min_rx_buf;
};

/** Basic statistics (as rte_eth_stats). Counters are 64-bit, wrap-free. */
struct qpio_port_stats {
	uint64_t ipackets;   /**< frames received and handed to the app */
	uint64_t opackets;   /**< frames accepted for transmission */
	uint64_t ibytes;     /**< bytes of ipackets */
	uint64_t obytes;     /**< bytes of opackets */
	uint64_t imissed;    /**< frames the device dropped for lack of buffers */
	uint64_t ierrors;    /**< frames received in error (oversize, bad status) */
	uint64_t oerrors;    /**< frames dropped on transmit (counted, freed) */
	uint64_t rx_nombuf;  /**< receive buffer allocations that failed */
	uint64_t q_ipackets[QPIO_PORT_MAX_QUEUES];
	uint64_t q_opackets[QPIO_PORT_MAX_QUEUES];
	uint64_t q_ibytes[QPIO_PORT_MAX_QUEUES];
	uint64_t q_obytes[QPIO_PORT_MAX_QUEUES];
	uint64_t q_errors[QPIO_PORT_MAX_QUEUES];  /**< per rx queue ierrors */
};

/** Name of one extended statistic. */
struct qpio_port_xstat_name {
	char name[QPIO_PORT_XSTAT_NAME_LEN];
};

/** Value of one extended statistic; id indexes the names array. */
struct qpio_port_xstat {
	uint64_t id;
	uint64_t value;
};

/** Link state from qpio_port_link_get(). */
struct qpio_port_link {
	uint32_t speed_mbps;   /**< 0 when unknown */
	uint8_t up;            /**< 1 when frames can flow */
	uint8_t full_duplex;
};

/**
 * Create a port from a devargs string "<driver><n>[,key=value...]":
 * "qp0,dev=soft0,qp=rc,peer=qp1", "pcap0,rx_pcap=in.pcap",
 * "ring0,...". The text before the first comma is the port name, and the
 * longest registered driver name that prefixes it chooses the driver (its
 * keys are in doc/guides/nics/<driver>.rst). Keys are parsed with
 * rte_kvargs; unknown keys, empty items and bad values are refused.
 *
 * @param devargs NUL-terminated string, copied; the caller keeps it.
 * @return the port id (>= 0), or -EINVAL (syntax, unknown key, bad value),
 *   -ENODEV (no driver for the name), -EEXIST (name taken), -ENOSPC
 *   (QPIO_MAX_PORTS ports exist), -ENOMEM, or the driver's probe error
 *   (e.g. -ENOENT for a capture file that does not exist).
 */
int qpio_port_create(const char *devargs);

/** @return the number of ports created and not yet closed. */
uint16_t qpio_port_count(void);

/**
 * @return 1 when port_id names a live port, else 0.
 */
int qpio_port_is_valid(uint16_t port_id);

/**
 * Find a port by name.
 * @return the port id, or -ENODEV (no such port), -EINVAL (name NULL).
 */
int qpio_port_get_by_name(const char *name);

/**
 * Copy the port's name into buf (size bytes, NUL-terminated, truncated to
 * fit). @return 0, or -ENODEV, -EINVAL (buf NULL or size 0).
 */
int qpio_port_name_get(uint16_t port_id, char *buf, size_t size);

/**
 * Fill info with the port's limits. @return 0, -ENODEV or -EINVAL.
 */
int qpio_port_info_get(uint16_t port_id, struct qpio_port_info *info);

/**
 * Set the number of rx and tx queues (and the frame size). Allowed while
 * the port is stopped; releases queues set up before (their mbufs are
 * freed).
 *
 * @param conf may be NULL for the defaults.
 * @return 0, -ENODEV, -EBUSY (port started), -EINVAL (both counts 0, a
 *   count above the driver's maximum, max_rx_pkt_len outside
 *   [60, info.max_rx_pkt_len], or a tx offload outside
 *   info.tx_offload_capa; the message names the limit), or a driver
 *   error.
 */
int qpio_port_configure(uint16_t port_id, uint16_t nb_rxq, uint16_t nb_txq,
			const struct qpio_port_conf *conf);

/**
 * Set up rx queue queue_id with nb_desc receive descriptors whose buffers
 * come from mp (the driver allocates, posts and frees them; a qp port
 * registers mp with its PD through lib/mr). A queue set up before is
 * released first.
 *
 * @param nb_desc descriptors (entries), within [min_desc, max_desc] of
 *   qpio_port_info; drivers may round it up to a power of two.
 * @param socket_id NUMA node for the queue's memory, or SOCKET_ID_ANY.
 * @param mp packet mbuf pool (rte_pktmbuf_pool_create, or
 *   rte_pktmbuf_pool_create_extbuf: a qp port registers its external
 *   memory too); it must outlive the queue.
 * @return 0, -ENODEV, -EBUSY (started), -EINVAL (queue_id not below the
 *   configured count, nb_desc out of range, mp NULL or with a data room
 *   below RTE_PKTMBUF_HEADROOM + 64 or + qpio_port_info.min_rx_buf,
 *   or a pool whose private area does not
 *   describe its buffers: qpio_mbuf_pool_check(), for every driver),
 *   -ENOMEM (mp cannot fill the ring), or a driver error.
 */
int qpio_port_rx_queue_setup(uint16_t port_id, uint16_t queue_id,
			     uint16_t nb_desc, int socket_id,
			     struct rte_mempool *mp);

/**
 * Set up tx queue queue_id with nb_desc descriptors. A queue set up
 * before is released first (mbufs it still owns are freed).
 * @return 0, -ENODEV, -EBUSY, -EINVAL (as for rx), -ENOMEM, or a driver
 *   error.
 */
int qpio_port_tx_queue_setup(uint16_t port_id, uint16_t queue_id,
			     uint16_t nb_desc, int socket_id);

/**
 * Release rx queue queue_id of a stopped port: the driver frees exactly
 * the mbufs it still holds as receive buffers; mbufs already handed to
 * the application stay the application's. Releasing a
 * queue that is not set up is a no-op.
 * @return 0, -ENODEV, -EBUSY (started), -EINVAL (queue_id not configured).
 */
int qpio_port_rx_queue_release(uint16_t port_id, uint16_t queue_id);

/**
 * Release tx queue queue_id of a stopped port, freeing the mbufs whose
 * transmission it still tracks. Same returns as the rx variant.
 */
int qpio_port_tx_queue_release(uint16_t port_id, uint16_t queue_id);

/**
 * Start the port: every configured queue must be set up. Chooses the
 * burst functions, and for a qp port connects the queue pairs to the
 * peer's (the link comes up once both ends are started).
 * @return 0 (also when already started), -ENODEV, -EINVAL (a queue is
 *   not set up; the message names it), or a driver error.
 */
int qpio_port_start(uint16_t port_id);

/**
 * Stop the port: bursts return 0 from now on; completions the driver was
 * waiting for are reclaimed or flushed so that every mbuf it held for
 * transmission is freed. Receive buffers stay posted until release or
 * close. @return 0 (also when already stopped), -ENODEV, or a driver error.
 */
int qpio_port_stop(uint16_t port_id);

/**
 * Close the port: stop it, release all queues and free the driver state.
 * The id may be reused by a later qpio_port_create().
 * @return 0, -ENODEV, or a driver error (the port is then kept).
 */
int qpio_port_close(uint16_t port_id);

/**
 * Read the basic counters. @return 0, -ENODEV, -EINVAL (stats NULL).
 */
int qpio_port_stats_get(uint16_t port_id, struct qpio_port_stats *stats);

/** Zero the basic and extended counters. @return 0 or -ENODEV. */
int qpio_port_stats_reset(uint16_t port_id);

/**
 * Names of the extended statistics: the basic counters under DPDK's xstat
 * names (rx_good_packets, tx_good_packets, rx_good_bytes, tx_good_bytes,
 * rx_missed_errors, rx_errors, tx_errors, rx_mbuf_allocation_errors),
 * per-queue counters (rx_q0_packets, rx_q0_bytes, rx_q0_errors,
 * tx_q0_packets, tx_q0_bytes) and the driver's own.
 *
 * @param names array of n entries, or NULL to ask for the count.
 * @return the number of extended statistics (which may exceed n; then
 *   only n names were written), -ENODEV.
 */
int qpio_port_xstats_names_get(uint16_t port_id,
			       struct qpio_port_xstat_name *names,
			       unsigned int n);

/**
 * Values of the extended statistics, in the order of the names.
 * @param xstats array of n entries, or NULL to ask for the count.
 * @return the number of extended statistics (when above n, nothing was
 *   written, as rte_eth_xstats_get), or -ENODEV.
 */
int qpio_port_xstats_get(uint16_t port_id, struct qpio_port_xstat *xstats,
			 unsigned int n);

/**
 * Look one extended statistic up by name.
 * @return 0 and *value, -ENODEV, -ENOENT (no such name), -EINVAL.
 */
int qpio_port_xstat_get_by_name(uint16_t port_id, const char *name,
				uint64_t *value);

/**
 * The port's MAC address (drivers give a locally administered unicast
 * address unless their devargs set one).
 * @return 0, -ENODEV, -EINVAL (mac NULL).
 */
int qpio_port_macaddr_get(uint16_t port_id, struct rte_ether_addr *mac);

/**
 * Link state now (no waiting). A stopped port is down.
 * @return 0, -ENODEV, -EINVAL (link NULL).
 */
int qpio_port_link_get(uint16_t port_id, struct qpio_port_link *link);

/**
 * Reclaim transmit completions of tx queue queue_id and free the mbufs
 * they cover, as rte_eth_tx_done_cleanup(). Same threading rule as
 * qpio_port_tx_burst() on that queue. qpio_port_tx_burst() with
 * nb_pkts 0 does the same, so an idle loop may call either.
 * @param free_cnt upper bound of mbufs to free, 0 for all.
 * @return the number of mbufs freed, -ENODEV, -EINVAL, -EOPNOTSUPP.
 */
int qpio_port_tx_done_cleanup(uint16_t port_id, uint16_t queue_id,
			      uint32_t free_cnt);

/**
 * Arm rx queue queue_id's interrupt (rte_eth_dev_rx_intr_enable()): from
 * now on a frame arriving on the queue wakes qpio_port_rx_intr_wait() and
 * makes qpio_port_rx_intr_fd() readable. A PMD whose queue interrupt is
 * always armed (net_tap: the queue's own file descriptor) takes the call
 * as done. Arm, then receive once more before sleeping: a frame that
 * came before the arm raises nothing (DPDK's rule, l3fwd-power's loop).
 * The port must be started with qpio_port_conf.rx_intr. Same threading
 * rule as qpio_port_rx_burst() on that queue.
 * @return 0, -ENODEV (no such port), -EINVAL (queue not set up, port not
 *   started), -EOPNOTSUPP (configured without rx_intr), or the PMD's
 *   error.
 */
int qpio_port_rx_intr_enable(uint16_t port_id, uint16_t queue_id);

/**
 * Disarm rx queue queue_id's interrupt (rte_eth_dev_rx_intr_disable()),
 * for an lcore that polls again: the device stops raising interrupts it
 * would pay for. Same rules and errors as qpio_port_rx_intr_enable().
 */
int qpio_port_rx_intr_disable(uint16_t port_id, uint16_t queue_id);

/**
 * Sleep until rx queue queue_id's interrupt fires (a frame arrived since
 * qpio_port_rx_intr_enable()), qpio_port_rx_intr_wake() is called for the
 * queue, or timeout_ms passes; consume what woke it (the PMD's event
 * counter read as ethdev's epoll does; a wake's count), so the next wait
 * sleeps again. The frames themselves stay in the queue for
 * qpio_port_rx_burst(). One lcore at a time per queue.
 * @param timeout_ms  milliseconds, 0 to only consume, -1 without limit.
 * @return 1 (woken), 0 (timed out), -EINTR (a signal came: the caller
 *   checks its stop flag), -ENODEV, -EINVAL (queue not set up, port not
 *   started), -EOPNOTSUPP (configured without rx_intr), -EIO (the
 *   epoll wait failed otherwise).
 * Stopping the port while an lcore waits or wakes on it is not allowed:
 * quiesce them first (as for the bursts).
 */
int qpio_port_rx_intr_wait(uint16_t port_id, uint16_t queue_id,
			   int timeout_ms);

/**
 * Make a qpio_port_rx_intr_wait() on rx queue queue_id return now, or
 * the next one at once when none sleeps (one eventfd write): for another
 * lcore that has handed the sleeper work. Any lcore, any time while the
 * port is started.
 * @return 0, -ENODEV, -EINVAL (queue not set up, port not started),
 *   -EOPNOTSUPP (configured without rx_intr).
 */
int qpio_port_rx_intr_wake(uint16_t port_id, uint16_t queue_id);

/**
 * A file descriptor for an application's own poll(2)/epoll loop that is
 * readable when qpio_port_rx_intr_wait() on rx queue queue_id would
 * return 1 at once (an epoll instance holding the queue's interrupt and
 * its wake): when it is, call qpio_port_rx_intr_wait() with timeout 0 to
 * consume it, then receive. Readable events are edge-triggered inside
 * it: arm, receive until a burst comes back short, then poll. The fd is
 * the port's: valid until the port stops; do not read or close it.
 * @return the fd (>= 0), -ENODEV, -EINVAL, -EOPNOTSUPP as
 *   qpio_port_rx_intr_wait().
 */
int qpio_port_rx_intr_fd(uint16_t port_id, uint16_t queue_id);

/**
 * Receive up to nb_pkts frames from rx queue queue_id into pkts.
 * Ownership of the returned mbufs passes to the caller. Returns 0 while
 * the port is stopped.
 *
 * Ports and queue ids are not checked here (build with QPIO_DEBUG to
 * check them): pass only ids of a configured port.
 *
 * @param pkts array of at least nb_pkts pointers.
 * @return the number of frames stored in pkts[0..n).
 */
static inline uint16_t
qpio_port_rx_burst(uint16_t port_id, uint16_t queue_id,
		   struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	struct qpio_port_fp *fp = &qpio_port_fp_ops[port_id];

#ifdef QPIO_DEBUG
	if (port_id >= QPIO_MAX_PORTS || queue_id >= QPIO_PORT_MAX_QUEUES)
		return 0;
#endif
	return fp->rx_burst(fp->rxq[queue_id], pkts, nb_pkts);
}

/**
 * Transmit up to nb_pkts frames on tx queue queue_id. The first n frames
 * (the return value) pass to the driver, which frees them when it is done
 * with them (at once for frames copied inline or dropped by policy, after
 * the completion that covers them for zero-copy frames). Frames from
 * pkts[n] on stay the caller's: the driver neither frees nor keeps them.
 * nb_pkts 0 only reclaims completions.
 *
 * @return the number of frames taken (0 while stopped or link down).
 */
static inline uint16_t
qpio_port_tx_burst(uint16_t port_id, uint16_t queue_id,
		   struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	struct qpio_port_fp *fp = &qpio_port_fp_ops[port_id];

#ifdef QPIO_DEBUG
	if (port_id >= QPIO_MAX_PORTS || queue_id >= QPIO_PORT_MAX_QUEUES)
		return 0;
#endif
	return fp->tx_burst(fp->txq[queue_id], pkts, nb_pkts);
}

#ifdef __cplusplus
}
#endif

#endif /* QPIO_PORT_H */
