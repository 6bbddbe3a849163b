/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pcap port receive: records of the rx file (or of its in-memory copy
 * for infinite_rx) copied into mbufs, chained when a frame is longer than
 * one mbuf's data room.
 */
#include <errno.h>
#include <string.h>

#include <rte_malloc.h>

#include "pcap_private.h"

/*
 * Copy one record into a chain of mbufs. Returns 1 when *out holds the
 * frame, 0 when the record was dropped (oversize), -ENOBUFS when the pool
 * had too few mbufs (nothing allocated; the caller keeps the record).
 */
static inline int
rx_copy(struct pcap_rx_queue *rxq, const u_char *data, uint32_t caplen,
	uint32_t len, struct rte_mbuf **out)
{
	uint32_t nseg, i, off = 0;
	struct rte_mbuf *head;

	if (unlikely(caplen > rxq->max_len)) {
		rxq->oversize++;
		rxq->errors++;
		return 0;
	}
	nseg = caplen == 0 ? 1 : (caplen + rxq->seg_room - 1) / rxq->seg_room;
	if (unlikely(rte_pktmbuf_alloc_bulk(rxq->mp, rxq->segs, nseg) != 0)) {
		rxq->nombuf++;
		return -ENOBUFS;
	}
	for (i = 0; i < nseg; i++) {
		struct rte_mbuf *m = rxq->segs[i];
		/* The copy is bounded by this mbuf's own buffer, not only by
		 * what the pool's private area says. */
		uint32_t n = RTE_MIN(RTE_MIN(rxq->seg_room,
					     (uint32_t)rte_pktmbuf_tailroom(m)),
				     caplen - off);

		memcpy(rte_pktmbuf_mtod(m, void *), data + off, n);
		m->data_len = (uint16_t)n;
		m->next = i + 1 < nseg ? rxq->segs[i + 1] : NULL;
		off += n;
	}
	if (unlikely(off != caplen)) {
		/* An mbuf shorter than the pool's data room: drop the frame
		 * rather than truncate it silently. */
		rte_pktmbuf_free(rxq->segs[0]);   /* frees the chain */
		rxq->errors++;
		return 0;
	}
	head = rxq->segs[0];
	head->nb_segs = (uint16_t)nseg;
	head->pkt_len = caplen;
	head->port = rxq->port_id;
	if (caplen < len)
		rxq->truncated++;
	rxq->packets++;
	rxq->bytes += caplen;
	*out = head;
	return 1;
}

/* The file cannot be read past this point: report it once. */
static void
rx_read_error(struct pcap_rx_queue *rxq)
{
	PCAP_LOG(ERR, "port %s: rx file %s: record %" PRIu64 ": %s; "
		 "no more records are read from it", rxq->port_name,
		 rxq->path, rxq->rec_no + 1, pcap_geterr(rxq->pcap));
	rxq->read_errors++;
	rxq->errors++;
	rxq->eof = 1;
}

uint16_t
pcap_rx_burst_file(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	struct pcap_rx_queue *rxq = queue;
	uint16_t nb = 0;

	while (nb < nb_pkts && !rxq->eof) {
		int r;

		if (!rxq->pending) {
			struct pcap_pkthdr *h;
			const u_char *data;

			r = pcap_next_ex(rxq->pcap, &h, &data);
			if (r == PCAP_ERROR_BREAK) {   /* end of file */
				rxq->eof = 1;
				break;
			}
			if (r != 1) {
				/* -1 (damaged record); 0 is for live captures only. */
				rx_read_error(rxq);
				break;
			}
			rxq->rec_no++;
			rxq->records++;
			rxq->pend_data = data;
			rxq->pend_caplen = h->caplen;
			rxq->pend_len = h->len;
			rxq->pending = 1;
		}
		r = rx_copy(rxq, rxq->pend_data, rxq->pend_caplen,
			    rxq->pend_len, &pkts[nb]);
		if (r < 0)
			break;      /* out of mbufs: keep the record */
		rxq->pending = 0;
		nb += r;
	}
	return nb;
}

uint16_t
pcap_rx_burst_replay(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	struct pcap_rx_queue *rxq = queue;
	uint16_t nb = 0;
	unsigned int tries;

	/* Bounded by nb_pkts records delivered or nb_pkts * 2 records
	 * visited, so a capture made only of oversize frames cannot spin. */
	for (tries = 0; nb < nb_pkts && tries < 2u * nb_pkts; tries++) {
		const struct pcap_rec *rec = &rxq->replay[rxq->replay_next];
		int r;

		r = rx_copy(rxq, rxq->replay_data + rec->off, rec->caplen,
			    rec->len, &pkts[nb]);
		if (r < 0)
			break;
		rxq->records++;
		if (++rxq->replay_next == rxq->nb_replay)
			rxq->replay_next = 0;
		nb += r;
	}
	return nb;
}

uint16_t
pcap_rx_burst_none(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	RTE_SET_USED(queue);
	RTE_SET_USED(pkts);
	RTE_SET_USED(nb_pkts);
	return 0;
}

int
pcap_rx_load(struct pcap_port *pp, int socket_id)
{
	struct pcap_rx_queue *rxq = &pp->rxq;
	size_t cap_data = 0, cap_recs = 0, used = 0;
	uint8_t *data = NULL;
	struct pcap_rec *recs = NULL;
	uint32_t n = 0;
	int r;

	if (pp->replay != NULL)
		return 0;
	if (pp->load_err != 0)
		return pp->load_err;
	for (;;) {
		struct pcap_pkthdr *h;
		const u_char *d;

		r = pcap_next_ex(rxq->pcap, &h, &d);
		if (r != 1)
			break;
		if (n == UINT32_MAX || used + h->caplen > UINT32_MAX) {
			PCAP_LOG(ERR, "port %s: rx file %s: more than 4 GiB or "
				 "2^32 records cannot be held for infinite_rx",
				 rxq->port_name, rxq->path);
			r = -E2BIG;
			break;
		}
		if (n == cap_recs) {
			size_t c = cap_recs ? cap_recs * 2 : 256;
			void *p = rte_realloc_socket(recs, c * sizeof(*recs), 0,
						     socket_id);
			if (p == NULL) {
				r = -ENOMEM;
				break;
			}
			recs = p;
			cap_recs = c;
		}
		if (data == NULL || used + h->caplen > cap_data) {
			size_t c = cap_data ? cap_data : 65536;
			void *p;

			while (c < used + h->caplen)
				c *= 2;
			p = rte_realloc_socket(data, c, 0, socket_id);
			if (p == NULL) {
				r = -ENOMEM;
				break;
			}
			data = p;
			cap_data = c;
		}
		memcpy(data + used, d, h->caplen);
		recs[n].off = (uint32_t)used;
		recs[n].caplen = h->caplen;
		recs[n].len = h->len;
		used += h->caplen;
		n++;
		rxq->rec_no++;
	}
	if (r == PCAP_ERROR_BREAK && n == 0) {
		PCAP_LOG(ERR, "port %s: rx file %s holds no records; "
			 "infinite_rx has nothing to replay", rxq->port_name,
			 rxq->path);
		r = -EINVAL;
	} else if (r == -ENOMEM) {
		PCAP_LOG(ERR, "port %s: rx file %s: no memory to hold it for "
			 "infinite_rx (%u records read)", rxq->port_name,
			 rxq->path, n);
	} else if (r != PCAP_ERROR_BREAK && r != -E2BIG) {
		PCAP_LOG(ERR, "port %s: rx file %s: record %" PRIu64 ": %s; "
			 "infinite_rx needs a file without damaged records",
			 rxq->port_name, rxq->path, rxq->rec_no + 1,
			 pcap_geterr(rxq->pcap));
		r = -EINVAL;
	}
	if (r != PCAP_ERROR_BREAK) {
		rte_free(data);
		rte_free(recs);
		pp->load_err = r;
		return r;
	}
	pp->replay_data = data;
	pp->replay = recs;
	rxq->replay_data = data;
	rxq->replay = recs;
	rxq->nb_replay = n;
	rxq->replay_next = 0;
	return 0;
}
