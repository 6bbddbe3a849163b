/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_ETH_PRIVATE_H
#define QPIO_ETH_PRIVATE_H

/*
 * Eth port driver: a qpio port over a DPDK ethdev, driven only through the
 * public rte_ethdev API. Control path in eth.c, devargs in eth_devargs.c,
 * bursts in eth_rxtx.c.
 */

#include <stdint.h>

#include <rte_common.h>
#include <rte_dev.h>
#include <rte_epoll.h>
#include <rte_ethdev.h>

#include "port_driver.h"
#include "qpio_log.h"

extern int eth_logtype;

#define ETH_LOG(level, ...) \
	QPIO_LOG_LINE(level, eth_logtype, "qpio.net.eth", __VA_ARGS__)

/** Longest vdev argument string handed to rte_vdev_init (bytes). */
#define ETH_VDEV_ARGS_LEN 512

/** Where the ethdev of a port comes from, after parsing the devargs. */
struct eth_args {
	const char *vdev;          /**< vdev=: created at probe, removed at close */
	char vdev_args[ETH_VDEV_ARGS_LEN]; /**< PMD keys passed to rte_vdev_init */
	const char *name;          /**< name=: ethdev EAL probed, by name */
	uint32_t port;             /**< port=: ethdev EAL probed, by id */
	uint8_t has_port;
	uint32_t promisc;          /**< promisc=0|1 (default 1) */
};

/** One rx or tx queue: the ethdev port and queue it stands for. */
struct eth_queue {
	uint16_t eth_id;
	uint16_t qid;
	/* rx queue of a port with conf.rx_intr, while started: an epoll
	 * instance holding the queue's interrupt (ethdev's) and a wake
	 * eventfd (-1 both otherwise) */
	int epfd;
	int wakefd;
	struct rte_epoll_event wake_ev;
} __rte_cache_aligned;

/** Kernel sockets of a PMD this process reads drop counters from. */
#define ETH_MAX_KSOCKS 16

/** Driver state of one port. */
struct eth_port {
	uint16_t eth_id;                      /**< ethdev port id */
	uint8_t own_vdev;                     /**< created by this port */
	uint8_t promisc;
	uint8_t eth_started;
	/* rte_eth_dev_configure() done once: the ethdev is this port's
	 * setting. An ethdev taken with name=/port= and never configured is
	 * handed back untouched at close (eth_close()). */
	uint8_t eth_configured;
	char dev_name[RTE_DEV_NAME_MAX_LEN];  /**< ethdev name */
	/* Frames the kernel dropped in front of net_af_packet, which counts
	 * none itself (eth_kdrops.c): its AF_PACKET sockets, found at
	 * start, PACKET_STATISTICS tp_drops (read and cleared) summed. */
	int ksock[ETH_MAX_KSOCKS];
	uint8_t nb_ksock;
	int ksock_ifindex;
	uint64_t kdrops;                      /**< since the last reset */
};

/**
 * Find the AF_PACKET sockets of ep's ethdev when it is net_af_packet,
 * bound to its interface, among this process's file descriptors
 * (/proc/self/fd), after the ethdev started; other PMDs have none.
 * Control thread.
 */
void eth_kdrops_find(struct eth_port *ep);

/**
 * Frames the kernel dropped in front of net_af_packet (its rings full)
 * since the last eth_kdrops_reset(): PACKET_STATISTICS tp_drops of the
 * sockets, summed. Control thread, one reader: the kernel clears the
 * counter at each read. 0 for other PMDs.
 */
uint64_t eth_kdrops_get(struct eth_port *ep);

/** Zero what eth_kdrops_get() returns. */
void eth_kdrops_reset(struct eth_port *ep);

/** NULL-terminated keys of eth devargs: our own, then PMD keys. */
extern const char *const eth_valid_keys[];

/**
 * Parse the devargs of port into args: exactly one of vdev=, port=,
 * name=; PMD keys (iface=, size=, rx_pcap=, ...) only with vdev=, copied
 * in order into args->vdev_args. Pointers in args point into kvlist.
 * @return 0 or -EINVAL (logged, naming the rule).
 */
int eth_args_parse(const struct qpio_port *port,
		   const struct rte_kvargs *kvlist, struct eth_args *args);

/** rte_eth_rx_burst on the queue of a struct eth_queue. */
uint16_t eth_rx_burst(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts);

/** rte_eth_tx_burst on the queue of a struct eth_queue; the frames from
 *  the returned index on stay the caller's, as with ethdev (tx-ownership). */
uint16_t eth_tx_burst(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts);

#endif /* QPIO_ETH_PRIVATE_H */
