/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_PCAP_PRIVATE_H
#define QPIO_PCAP_PRIVATE_H

/*
 * pcap port driver: state shared by the probe/control code (pcap.c) and
 * the bursts (pcap_rx.c, pcap_tx.c).
 *
 * A port has at most one rx and one tx queue. The queue objects are
 * embedded in the port state, so their counters and the position in the
 * capture survive queue release and setup; only close frees them.
 */

#include <stdint.h>

#include <pcap/pcap.h>

#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "port_driver.h"
#include "qpio_log.h"

/** Largest frame the port carries (bytes): libpcap's largest snaplen. */
#define PCAP_MAX_FRAME 262144u
/** Snapshot length written in the header of tx files (bytes). */
#define PCAP_TX_SNAPLEN 262144

extern int pcap_logtype;

#define PCAP_LOG(level, ...) \
	QPIO_LOG_LINE(level, pcap_logtype, "qpio.net.pcap", __VA_ARGS__)

/** One record of an infinite_rx capture held in memory. */
struct pcap_rec {
	uint32_t off;      /**< offset of the data in pcap_rx_queue.replay_data */
	uint32_t caplen;   /**< captured bytes */
	uint32_t len;      /**< original length on the wire */
};

struct pcap_rx_queue {
	/* Fast-path state. */
	pcap_t *pcap;                 /**< NULL: the port has no rx_pcap */
	struct rte_mempool *mp;
	struct rte_mbuf **segs;       /**< scratch for one frame's segments */
	uint32_t max_len;             /**< frames above are dropped (bytes) */
	uint32_t seg_room;            /**< data bytes per mbuf */
	uint16_t port_id;
	uint8_t eof;                  /**< no more records will be read */
	uint8_t pending;              /**< pend_* holds a record not delivered */
	const u_char *pend_data;      /**< libpcap's buffer, valid until the next read */
	uint32_t pend_caplen;
	uint32_t pend_len;
	/* infinite_rx: the whole capture, replayed in a loop. */
	const uint8_t *replay_data;
	const struct pcap_rec *replay;
	uint32_t nb_replay;
	uint32_t replay_next;
	/* Counters (reset by stats_reset). */
	uint64_t packets;
	uint64_t bytes;
	uint64_t errors;              /**< oversize + read errors */
	uint64_t nombuf;
	uint64_t oversize;
	uint64_t truncated;           /**< records with caplen < len */
	uint64_t records;             /**< records taken from the capture */
	uint64_t read_errors;
	/* Cold. */
	uint64_t rec_no;              /**< records read from the file so far */
	const char *path;             /**< for log lines */
	const char *port_name;
	int socket_id;                /**< of the queue, for the replay copy */
	uint8_t setup;
} __rte_cache_aligned;

struct pcap_tx_queue {
	pcap_dumper_t *dumper;        /**< NULL: the port has no tx_pcap (sink) */
	uint8_t *scratch;             /**< linearised frame, max_len bytes */
	uint32_t max_len;
	uint64_t packets;
	uint64_t bytes;
	uint64_t errors;
	uint64_t oversize;
	uint8_t setup;
} __rte_cache_aligned;

struct pcap_port {
	struct pcap_rx_queue rxq;
	struct pcap_tx_queue txq;
	char *rx_path;                /**< NULL when absent */
	char *tx_path;
	uint8_t infinite;
	pcap_t *tx_dead;              /**< handle the dumper is opened from */
	uint8_t *replay_data;         /**< infinite_rx capture, owned */
	struct pcap_rec *replay;
	int load_err;                 /**< 0, or the error of a failed load */
};

/*
 * Bursts (installed by pcap_start() as the port's rx_burst/tx_burst).
 * queue is the port's struct pcap_rx_queue / struct pcap_tx_queue; one
 * lcore at a time per queue; the rx and tx queue of a port may run on
 * different lcores. Counters are plain stores read without locks.
 */

/**
 * Receive up to nb_pkts frames read from the rx file with pcap_next_ex().
 * Frames above max_len are dropped and counted; a record that finds too
 * few mbufs stays pending for the next burst (rx_nombuf + 1); a damaged
 * record is logged once and ends the input (eof).
 * @return frames stored in pkts[0..n); ownership passes to the caller.
 */
uint16_t pcap_rx_burst_file(void *queue, struct rte_mbuf **pkts,
			    uint16_t nb_pkts);
/**
 * Receive up to nb_pkts frames copied from the in-memory capture
 * (infinite_rx=1), wrapping after its last record. Visits at most
 * 2 * nb_pkts records per call.
 * @return frames stored in pkts[0..n).
 */
uint16_t pcap_rx_burst_replay(void *queue, struct rte_mbuf **pkts,
			      uint16_t nb_pkts);
/** Receive burst of a port without rx_pcap. @return 0. */
uint16_t pcap_rx_burst_none(void *queue, struct rte_mbuf **pkts,
			    uint16_t nb_pkts);
/**
 * Read the whole rx file into memory for infinite_rx (once; later calls
 * return 0 or the first call's error). Control path only.
 * @param socket_id NUMA node of the copy, or SOCKET_ID_ANY.
 * @return 0, -EINVAL (no records, or a damaged record; logged), -ENOMEM,
 *   -E2BIG (more than 4 GiB of data or 2^32 - 1 records).
 */
int pcap_rx_load(struct pcap_port *pp, int socket_id);

/**
 * Write every frame as one record of the tx file (caplen = len =
 * pkt_len, time of the burst), linearising chains into the scratch
 * buffer; frames above max_len are dropped and counted. Frees every mbuf.
 * @return nb_pkts (every frame is taken).
 */
uint16_t pcap_tx_burst_file(void *queue, struct rte_mbuf **pkts,
			    uint16_t nb_pkts);
/**
 * Transmit burst of a port without tx_pcap: frees every frame, counts it
 * as sent (or as oversize). @return nb_pkts.
 */
uint16_t pcap_tx_burst_sink(void *queue, struct rte_mbuf **pkts,
			    uint16_t nb_pkts);

#endif /* QPIO_PCAP_PRIVATE_H */
