/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: a capture file read through the pcap port. The input
 * is the file; the first byte picks the mbuf size and max_rx_pkt_len (so
 * frames are cut into chains at many sizes) and whether the port replays
 * the file (infinite_rx). Every frame delivered must be a well-formed chain
 * (pkt_len the sum of data_len, nb_segs the chain length, each segment's
 * data inside its own buffer), and after the port closes every mbuf is
 * back in the pool.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "qpio_port.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NB_MBUF 1024u
#define FILE_NAME "in.pcap"

static const uint16_t rooms[] = { 64, 128, 1000, 2048 };
static const uint32_t max_lens[] = { 60, 1514, 9018, 65535 };
static struct rte_mempool *pools[RTE_DIM(rooms)];

static void
frame_check(const struct rte_mbuf *m, uint32_t max_len)
{
	const struct rte_mbuf *s;
	uint32_t sum = 0;
	uint16_t n = 0;

	for (s = m; s != NULL; s = s->next) {
		if ((uint32_t)s->data_off + s->data_len > s->buf_len)
			FUZZ_FAIL("segment %u: data_off %u + data_len %u over "
				  "buf_len %u", n, s->data_off, s->data_len,
				  s->buf_len);
		sum += s->data_len;
		n++;
	}
	if (sum != m->pkt_len || n != m->nb_segs)
		FUZZ_FAIL("chain: pkt_len %u, sum of data_len %u, nb_segs %u, "
			  "%u segments", m->pkt_len, sum, m->nb_segs, n);
	if (m->pkt_len > max_len)
		FUZZ_FAIL("frame of %u bytes over max_rx_pkt_len %u",
			  m->pkt_len, max_len);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qpio_port_conf conf = { 0 };
	struct rte_mbuf *pkts[32];
	struct rte_mempool *mp;
	unsigned int sel, i, idle = 0, polls;
	char devargs[64];
	FILE *f;
	int id;

	if (pools[0] == NULL) {
		fuzz_eal_init();
		fuzz_chdir_tmp();
		for (i = 0; i < RTE_DIM(rooms); i++) {
			char name[32];

			snprintf(name, sizeof(name), "fuzz_pcap_%u", i);
			pools[i] = rte_pktmbuf_pool_create(name, NB_MBUF, 0, 0,
					rooms[i] + RTE_PKTMBUF_HEADROOM,
					SOCKET_ID_ANY);
			if (pools[i] == NULL)
				FUZZ_FAIL("pool of %u-byte mbufs", rooms[i]);
		}
	}
	if (size < 1)
		return 0;
	sel = data[0];
	f = fopen(FILE_NAME, "w");
	if (f == NULL || fwrite(data + 1, 1, size - 1, f) != size - 1 ||
	    fclose(f) != 0)
		FUZZ_FAIL("cannot write %s", FILE_NAME);
	mp = pools[sel % RTE_DIM(rooms)];
	conf.max_rx_pkt_len = max_lens[(sel >> 2) % RTE_DIM(max_lens)];
	snprintf(devargs, sizeof(devargs), "pcap0,rx_pcap=%s,infinite_rx=%u",
		 FILE_NAME, (sel >> 4) & 1);
	id = qpio_port_create(devargs);
	if (id < 0)
		return 0;       /* a file the port refuses at create */
	if (qpio_port_configure((uint16_t)id, 1, 0, &conf) != 0 ||
	    qpio_port_rx_queue_setup((uint16_t)id, 0, 64, SOCKET_ID_ANY,
				     mp) != 0 ||
	    qpio_port_start((uint16_t)id) != 0)
		goto close;
	/* A file is read to its end; a replay is cut after 256 bursts. */
	for (polls = 0; polls < 256 && idle < 4; polls++) {
		uint16_t n = qpio_port_rx_burst((uint16_t)id, 0, pkts,
						RTE_DIM(pkts));

		idle = n == 0 ? idle + 1 : 0;
		for (i = 0; i < n; i++) {
			frame_check(pkts[i], conf.max_rx_pkt_len);
			rte_pktmbuf_free(pkts[i]);
		}
	}
	qpio_port_stop((uint16_t)id);
close:
	if (qpio_port_close((uint16_t)id) != 0)
		FUZZ_FAIL("close of the pcap port failed");
	if (rte_mempool_avail_count(mp) != NB_MBUF)
		FUZZ_FAIL("%u of %u mbufs back in the pool",
			  rte_mempool_avail_count(mp), NB_MBUF);
	return 0;
}
