/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ring port driver: probe and devargs, queue setup and release, start and
 * stop, statistics, registration.
 *
 * A port either creates its own rings (one rx and one tx ring per queue,
 * named "<port>_rx<q>" and "<port>_tx<q>"), sends into the rx rings of a
 * peer ring port (peer=), or attaches rings that exist already (rx_ring=,
 * tx_ring=). The rx side always owns the rings of a peer link.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "ring_private.h"

RTE_LOG_REGISTER(ring_logtype, qpio.net.ring, NOTICE);

#define RING_DRV_NAME "ring"

static const char *const ring_valid_keys[] = {
	"peer", "rx_ring", "tx_ring", NULL,
};

static struct qpio_port_driver ring_driver;

static inline struct ring_port *
to_rport(const struct qpio_port *port)
{
	return port->priv;
}

static void
ring_info_get(struct qpio_port *port, struct qpio_port_info *info)
{
	const struct ring_port *rp = to_rport(port);
	uint16_t maxq = QPIO_PORT_MAX_QUEUES;

	/* An attached ring serves exactly one queue. */
	if (rp->rx_attach != NULL || rp->tx_attach != NULL)
		maxq = 1;
	info->max_rx_queues = maxq;
	info->max_tx_queues = maxq;
	info->min_desc = 1;
	info->max_desc = RING_MAX_DESC;
	info->max_rx_pkt_len = UINT16_MAX;
	info->max_tx_segs = RTE_MBUF_MAX_NB_SEGS;
	info->max_rx_segs = RTE_MBUF_MAX_NB_SEGS;
	info->socket_id = SOCKET_ID_ANY;
}

/* Create the ring "<port>_<dir><qid>" holding exactly nb_desc rounded up
 * to a power of two entries; one producer and one consumer. */
static int
ring_create(struct qpio_port *port, const char *dir, uint16_t qid,
	    uint16_t nb_desc, int socket_id, struct rte_ring **out)
{
	char name[RTE_RING_NAMESIZE];
	struct rte_ring *r;
	int len;

	len = snprintf(name, sizeof(name), "%s_%s%u", port->name, dir, qid);
	if (len < 0 || (size_t)len >= sizeof(name)) {
		RING_LOG(ERR, "port %s: ring name %s_%s%u is longer than %u "
			 "characters", port->name, port->name, dir, qid,
			 (unsigned int)RTE_RING_NAMESIZE - 1);
		return -EINVAL;
	}
	r = rte_ring_create(name, rte_align32pow2(nb_desc), socket_id,
			    RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (r == NULL) {
		int err = rte_errno;

		RING_LOG(ERR, "port %s: cannot create ring %s (%u entries): %s",
			 port->name, name, rte_align32pow2(nb_desc),
			 rte_strerror(err));
		return err == EEXIST ? -EEXIST : -ENOMEM;
	}
	*out = r;
	return 0;
}

/* Free every mbuf left in r (a ring this port owns). */
static void
ring_drain(struct rte_ring *r)
{
	struct rte_mbuf *pkts[32];
	unsigned int n, i;

	do {
		n = rte_ring_dequeue_burst(r, (void **)pkts, RTE_DIM(pkts),
					   NULL);
		for (i = 0; i < n; i++)
			rte_pktmbuf_free(pkts[i]);
	} while (n > 0);
}

static int
ring_rx_queue_setup(struct qpio_port *port, uint16_t qid, uint16_t nb_desc,
		    int socket_id, struct rte_mempool *mp)
{
	struct ring_port *rp = to_rport(port);
	struct ring_rxq *rxq;
	int ret;

	RTE_SET_USED(mp);   /* frames arrive as mbufs from the producer */
	rxq = rte_zmalloc_socket("ring_rxq", sizeof(*rxq), RTE_CACHE_LINE_SIZE,
				 socket_id);
	if (rxq == NULL)
		return -ENOMEM;
	if (rp->rx_attach != NULL) {
		rxq->ring = rp->rx_attach;
	} else {
		ret = ring_create(port, "rx", qid, nb_desc, socket_id,
				  &rxq->ring);
		if (ret < 0) {
			rte_free(rxq);
			return ret;
		}
		rxq->owned = 1;
	}
	rxq->max_len = port->conf.max_rx_pkt_len;
	port->rxq[qid] = rxq;
	return 0;
}

static int
ring_tx_queue_setup(struct qpio_port *port, uint16_t qid, uint16_t nb_desc,
		    int socket_id)
{
	struct ring_port *rp = to_rport(port);
	struct ring_txq *txq;
	int ret;

	txq = rte_zmalloc_socket("ring_txq", sizeof(*txq), RTE_CACHE_LINE_SIZE,
				 socket_id);
	if (txq == NULL)
		return -ENOMEM;
	if (rp->tx_attach != NULL) {
		txq->ring = rp->tx_attach;
	} else if (rp->peer[0] == '\0') {
		ret = ring_create(port, "tx", qid, nb_desc, socket_id,
				  &txq->ring);
		if (ret < 0) {
			rte_free(txq);
			return ret;
		}
		txq->owned = 1;
	}
	/* With a peer the ring is bound when the port starts. */
	txq->max_len = port->conf.max_rx_pkt_len;
	port->txq[qid] = txq;
	return 0;
}

static void
ring_rx_queue_release(struct qpio_port *port, uint16_t qid)
{
	struct ring_rxq *rxq = port->rxq[qid];

	if (rxq->owned) {
		ring_drain(rxq->ring);
		rte_ring_free(rxq->ring);
	}
	rte_free(rxq);
	port->rxq[qid] = NULL;
}

static void
ring_tx_queue_release(struct qpio_port *port, uint16_t qid)
{
	struct ring_txq *txq = port->txq[qid];

	/* Frames in an own tx ring have no consumer left: free them. */
	if (txq->owned) {
		ring_drain(txq->ring);
		rte_ring_free(txq->ring);
	}
	rte_free(txq);
	port->txq[qid] = NULL;
}

/* Bind the tx queues of port to the rx rings of its peer. */
static int
ring_peer_bind(struct qpio_port *port)
{
	struct ring_port *rp = to_rport(port);
	struct qpio_port *peer, *other;
	uint16_t q, id;
	int pid;

	pid = qpio_port_get_by_name(rp->peer);
	if (pid < 0) {
		RING_LOG(ERR, "port %s: peer port %s does not exist", port->name,
			 rp->peer);
		return -ENODEV;
	}
	peer = qpio_port_get((uint16_t)pid);
	if (peer->drv != &ring_driver) {
		RING_LOG(ERR, "port %s: peer %s is not a ring port", port->name,
			 rp->peer);
		return -EINVAL;
	}
	/* The peer's rx rings have one producer: refuse a second feeder. */
	for (id = 0; id < QPIO_MAX_PORTS; id++) {
		other = qpio_port_get(id);
		if (other == NULL || other == port || !other->started ||
		    other->drv != &ring_driver ||
		    strcmp(to_rport(other)->peer, rp->peer) != 0)
			continue;
		RING_LOG(ERR, "port %s: peer %s is already fed by started port "
			 "%s", port->name, rp->peer, other->name);
		return -EBUSY;
	}
	for (q = 0; q < port->nb_txq; q++) {
		struct ring_rxq *prxq = q < peer->nb_rxq ? peer->rxq[q] : NULL;

		if (prxq == NULL) {
			RING_LOG(ERR, "port %s: tx queue %u needs rx queue %u of "
				 "peer %s set up", port->name, q, q, peer->name);
			return -EINVAL;
		}
		((struct ring_txq *)port->txq[q])->ring = prxq->ring;
	}
	return 0;
}

static int
ring_start(struct qpio_port *port)
{
	struct ring_port *rp = to_rport(port);
	uint16_t q;
	int ret;

	if (rp->peer[0] != '\0' && port->nb_txq > 0) {
		ret = ring_peer_bind(port);
		if (ret < 0)
			return ret;
	}
	for (q = 0; q < port->nb_rxq; q++)
		((struct ring_rxq *)port->rxq[q])->max_len =
			port->conf.max_rx_pkt_len;
	for (q = 0; q < port->nb_txq; q++)
		((struct ring_txq *)port->txq[q])->max_len =
			port->conf.max_rx_pkt_len;
	port->rx_burst = ring_rx_burst;
	port->tx_burst = ring_tx_burst;
	return 0;
}

static int
ring_stop(struct qpio_port *port)
{
	struct ring_port *rp = to_rport(port);
	uint16_t q;

	/* Frames already enqueued belong to the ring; nothing is held for
	 * transmission. Drop the binding to the peer's rings, which the
	 * peer may release while this port is stopped. */
	if (rp->peer[0] != '\0')
		for (q = 0; q < port->nb_txq; q++)
			if (port->txq[q] != NULL)
				((struct ring_txq *)port->txq[q])->ring = NULL;
	return 0;
}

static void
ring_close(struct qpio_port *port)
{
	rte_free(port->priv);
	port->priv = NULL;
}

static void
ring_stats_get(struct qpio_port *port, struct qpio_port_stats *st)
{
	uint16_t q;

	for (q = 0; q < port->nb_rxq && q < QPIO_PORT_MAX_QUEUES; q++) {
		const struct ring_rxq *rxq = port->rxq[q];

		if (rxq == NULL)
			continue;
		st->q_ipackets[q] = rxq->packets;
		st->q_ibytes[q] = rxq->bytes;
		st->q_errors[q] = rxq->errors;
		st->ipackets += rxq->packets;
		st->ibytes += rxq->bytes;
		st->ierrors += rxq->errors;
	}
	for (q = 0; q < port->nb_txq && q < QPIO_PORT_MAX_QUEUES; q++) {
		const struct ring_txq *txq = port->txq[q];

		if (txq == NULL)
			continue;
		st->q_opackets[q] = txq->packets;
		st->q_obytes[q] = txq->bytes;
		st->opackets += txq->packets;
		st->obytes += txq->bytes;
		st->oerrors += txq->errors;
	}
}

static void
ring_stats_reset(struct qpio_port *port)
{
	uint16_t q;

	for (q = 0; q < QPIO_PORT_MAX_QUEUES; q++) {
		struct ring_rxq *rxq = port->rxq[q];
		struct ring_txq *txq = port->txq[q];

		if (rxq != NULL)
			rxq->packets = rxq->bytes = rxq->errors = 0;
		if (txq != NULL)
			txq->packets = txq->bytes = txq->errors = 0;
	}
}

static int
ring_tx_done_cleanup(struct qpio_port *port, uint16_t qid, uint32_t free_cnt)
{
	/* A ring keeps no transmitted frame: nothing to reclaim. */
	RTE_SET_USED(port);
	RTE_SET_USED(qid);
	RTE_SET_USED(free_cnt);
	return 0;
}

static const struct qpio_port_ops ring_ops = {
	.info_get = ring_info_get,
	.rx_queue_setup = ring_rx_queue_setup,
	.tx_queue_setup = ring_tx_queue_setup,
	.rx_queue_release = ring_rx_queue_release,
	.tx_queue_release = ring_tx_queue_release,
	.start = ring_start,
	.stop = ring_stop,
	.close = ring_close,
	.stats_get = ring_stats_get,
	.stats_reset = ring_stats_reset,
	.tx_done_cleanup = ring_tx_done_cleanup,
};

/* "ring" followed by one or more digits. */
static int
ring_name_valid(const char *name)
{
	size_t len = strlen(RING_DRV_NAME);
	const char *p = name + len;

	if (strncmp(name, RING_DRV_NAME, len) != 0 || *p == '\0' ||
	    strlen(name) >= QPIO_PORT_NAME_LEN)
		return 0;
	for (; *p != '\0'; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

static int
ring_attach(const struct qpio_port *port, const char *key, const char *name,
	    struct rte_ring **out)
{
	struct rte_ring *r;

	if (name == NULL)
		return 0;
	r = rte_ring_lookup(name);
	if (r == NULL) {
		RING_LOG(ERR, "port %s: %s=%s: no rte_ring of that name",
			 port->name, key, name);
		return -ENOENT;
	}
	*out = r;
	return 0;
}

static int
ring_probe(struct qpio_port *port, const struct rte_kvargs *kvlist)
{
	const char *peer = NULL, *rx_name = NULL, *tx_name = NULL;
	struct ring_port *rp;
	int ret;

	if (qpio_port_kvargs_str(port, kvlist, "peer", &peer) < 0 ||
	    qpio_port_kvargs_str(port, kvlist, "rx_ring", &rx_name) < 0 ||
	    qpio_port_kvargs_str(port, kvlist, "tx_ring", &tx_name) < 0)
		return -EINVAL;
	if (peer != NULL && !ring_name_valid(peer)) {
		RING_LOG(ERR, "port %s: peer=%s must name a ring port "
			 "(ring<n>)", port->name, peer);
		return -EINVAL;
	}
	if (peer != NULL && (rx_name != NULL || tx_name != NULL)) {
		RING_LOG(ERR, "port %s: peer= excludes rx_ring= and tx_ring=",
			 port->name);
		return -EINVAL;
	}
	rp = rte_zmalloc("ring_port", sizeof(*rp), RTE_CACHE_LINE_SIZE);
	if (rp == NULL)
		return -ENOMEM;
	ret = ring_attach(port, "rx_ring", rx_name, &rp->rx_attach);
	if (ret == 0)
		ret = ring_attach(port, "tx_ring", tx_name, &rp->tx_attach);
	if (ret < 0) {
		rte_free(rp);
		return ret;
	}
	if (peer != NULL)
		snprintf(rp->peer, sizeof(rp->peer), "%s", peer);
	port->priv = rp;
	port->ops = &ring_ops;
	return 0;
}

static struct qpio_port_driver ring_driver = {
	.name = RING_DRV_NAME,
	.valid_keys = ring_valid_keys,
	.probe = ring_probe,
};

QPIO_PORT_DRIVER_REGISTER(ring_driver);
