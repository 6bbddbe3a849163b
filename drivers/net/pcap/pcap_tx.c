/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pcap port transmit: every frame becomes one record of the tx file
 * (multi-segment mbufs linearised first), stamped with the time of the
 * burst, and its mbufs are freed at once.
 */
#include <sys/time.h>
#include <time.h>

#include "pcap_private.h"

uint16_t
pcap_tx_burst_file(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	struct pcap_tx_queue *txq = queue;
	struct pcap_pkthdr hdr;
	struct timespec now;
	uint16_t i;

	if (nb_pkts == 0)
		return 0;
	clock_gettime(CLOCK_REALTIME, &now);
	hdr.ts.tv_sec = now.tv_sec;
	hdr.ts.tv_usec = now.tv_nsec / 1000;
	for (i = 0; i < nb_pkts; i++) {
		struct rte_mbuf *m = pkts[i];
		uint32_t len = rte_pktmbuf_pkt_len(m);
		const void *data;

		if (unlikely(len > txq->max_len)) {
			txq->oversize++;
			txq->errors++;
			rte_pktmbuf_free(m);
			continue;
		}
		/* Points into m when it is one segment, else into scratch;
		 * NULL only for a chain shorter than its pkt_len. */
		data = rte_pktmbuf_read(m, 0, len, txq->scratch);
		if (unlikely(data == NULL)) {
			txq->errors++;
			rte_pktmbuf_free(m);
			continue;
		}
		hdr.caplen = len;
		hdr.len = len;
		pcap_dump((u_char *)txq->dumper, &hdr, data);
		txq->packets++;
		txq->bytes += len;
		rte_pktmbuf_free(m);
	}
	return nb_pkts;
}

uint16_t
pcap_tx_burst_sink(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	struct pcap_tx_queue *txq = queue;
	uint16_t i;

	for (i = 0; i < nb_pkts; i++) {
		struct rte_mbuf *m = pkts[i];
		uint32_t len = rte_pktmbuf_pkt_len(m);

		if (unlikely(len > txq->max_len)) {
			txq->oversize++;
			txq->errors++;
		} else {
			txq->packets++;
			txq->bytes += len;
		}
		rte_pktmbuf_free(m);
	}
	return nb_pkts;
}
