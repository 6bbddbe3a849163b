/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qp port driver: queue set-up and release. Queue set-up allocates the
 * rings, WR arrays and CQ of a queue and registers the rx mempool (one
 * registration per pool and port, shared by the queues that use it); the
 * QPs are created at start (qp_link.c).
 */

#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "qp_private.h"

/* Register mp with the port's PD, or count one more user of its
 * registration. */
static struct qp_pool_reg *
pool_get(struct qp_port *qport, struct rte_mempool *mp)
{
	struct qp_pool_reg *free_slot = NULL;
	unsigned int i;

	for (i = 0; i < QP_PORT_MAX_POOLS; i++) {
		if (qport->pools[i].mp == mp) {
			qport->pools[i].refs++;
			return &qport->pools[i];
		}
		if (qport->pools[i].mp == NULL && free_slot == NULL)
			free_slot = &qport->pools[i];
	}
	if (free_slot == NULL) {
		QP_LOG(ERR, "port %s: more than %u mempools", qport->port->name,
		       QP_PORT_MAX_POOLS);
		return NULL;
	}
	free_slot->reg = qpio_mr_mempool_reg(qport->pd, mp,
					     QPIO_ACCESS_LOCAL_WRITE);
	if (free_slot->reg == NULL) {
		QP_LOG(ERR, "port %s: registering mempool %s failed: %s",
		       qport->port->name, mp->name, rte_strerror(rte_errno));
		return NULL;
	}
	free_slot->mp = mp;
	free_slot->refs = 1;
	return free_slot;
}

/* One user less of mp's registration: the last deregisters it. */
static void
pool_put(struct qp_port *qport, struct rte_mempool *mp)
{
	unsigned int i;

	for (i = 0; i < QP_PORT_MAX_POOLS; i++)
		if (qport->pools[i].mp == mp && --qport->pools[i].refs == 0) {
			qpio_mr_mempool_dereg(qport->pools[i].reg);
			memset(&qport->pools[i], 0, sizeof(qport->pools[i]));
			return;
		}
}

/* Free an rx queue and everything it holds (its mbufs, CQ, pool
 * registration). */
static void
rxq_free(struct qp_port *qport, struct qp_rxq *rxq)
{
	size_t i;

	if (rxq == NULL)
		return;
	if (rxq->elts != NULL)
		for (i = 0; i < (size_t)rxq->nb_desc * rxq->nseg; i++)
			rte_pktmbuf_free(rxq->elts[i]);
	rte_free(rxq->elts);
	rte_free(rxq->slot_posted);
	rte_free(rxq->rwr);
	rte_free(rxq->rsge);
	if (rxq->mrc.table != NULL)
		qpio_mr_cache_fini(&rxq->mrc);
	if (rxq->cq != NULL)
		qpio_cq_destroy(rxq->cq);
	if (rxq->mp != NULL)
		pool_put(qport, rxq->mp);
	rte_free(rxq);
}

/* rearm_data of a received mbuf: data_off at the headroom, refcnt 1, one
 * segment, the port (as DPDK PMDs build their mbuf initializer). */
static uint64_t
rx_mbuf_init(uint16_t port_id)
{
	struct rte_mbuf mb;

	memset(&mb, 0, sizeof(mb));
	mb.data_off = RTE_PKTMBUF_HEADROOM;
	mb.nb_segs = 1;
	mb.port = port_id;
	rte_mbuf_refcnt_set(&mb, 1);
	uint64_t v;

	memcpy(&v, &mb.data_off, sizeof(v));
	return v;
}

/* Set up rx queue qid: rings, receive WRs, CQ and nseg mbufs per receive
 * WR from mp, whose memory is registered. */
int
qp_rx_queue_setup(struct qpio_port *port, uint16_t qid, uint16_t nb_desc,
		  int socket_id, struct rte_mempool *mp)
{
	struct qp_port *qport = qp_priv(port);
	struct qp_pool_reg *reg;
	struct qp_rxq *rxq;
	uint32_t room, nseg, grh;
	size_t n;

	grh = qport->transport == QP_PORT_UD ? QPIO_GRH_LEN : 0;
	room = rte_pktmbuf_data_room_size(mp) - RTE_PKTMBUF_HEADROOM;
	if (grh > RTE_PKTMBUF_HEADROOM) {
		QP_LOG(ERR, "port %s: qp=ud needs RTE_PKTMBUF_HEADROOM >= %u "
		       "for the GRH", port->name, grh);
		return -EINVAL;
	}
	nseg = (port->conf.max_rx_pkt_len + room - 1) / room;
	if (nseg > qport->dattr.max_sge || nseg > QP_PORT_MAX_SEGS) {
		QP_LOG(ERR, "port %s: rx queue %u: max_rx_pkt_len %u needs %u "
		       "mbufs of %u bytes per frame; the device takes %u SGEs: "
		       "use larger mbufs", port->name, qid,
		       port->conf.max_rx_pkt_len, nseg, room,
		       RTE_MIN(qport->dattr.max_sge, QP_PORT_MAX_SEGS));
		return -EINVAL;
	}
	rxq = rte_zmalloc_socket("qp_rxq", sizeof(*rxq), RTE_CACHE_LINE_SIZE,
				 socket_id);
	if (rxq == NULL)
		return -ENOMEM;
	rxq->qport = qport;
	rxq->port_id = port->port_id;
	rxq->qid = qid;
	rxq->nb_desc = rte_align32pow2(nb_desc);
	rxq->nseg = nseg;
	rxq->rearm_thresh = RTE_MIN(32u, rxq->nb_desc / 4);
	rxq->seg_room = room;
	rxq->grh = grh;
	rxq->max_pkt_len = port->conf.max_rx_pkt_len;
	n = (size_t)rxq->nb_desc * nseg;
	rxq->elts = rte_zmalloc_socket("qp_rxq_elts", n * sizeof(*rxq->elts),
				       RTE_CACHE_LINE_SIZE, socket_id);
	rxq->slot_posted = rte_zmalloc_socket("qp_rxq_posted", rxq->nb_desc,
					      RTE_CACHE_LINE_SIZE, socket_id);
	rxq->rwr = rte_zmalloc_socket("qp_rxq_wr",
				      QP_PORT_POLL * sizeof(*rxq->rwr),
				      RTE_CACHE_LINE_SIZE, socket_id);
	rxq->rsge = rte_zmalloc_socket("qp_rxq_sge",
				       QP_RX_SGES * sizeof(*rxq->rsge),
				       RTE_CACHE_LINE_SIZE, socket_id);
	if (rxq->elts == NULL || rxq->slot_posted == NULL ||
	    rxq->rwr == NULL || rxq->rsge == NULL)
		goto nomem;
	reg = pool_get(qport, mp);
	if (reg == NULL) {
		rxq_free(qport, rxq);
		return -ENOMEM;
	}
	rxq->mp = mp;
	/* A pool in one chunk is one MR: its lkey serves every buffer. */
	rxq->lkey = qpio_mr_mempool_nb_mr(reg->reg) == 1 ?
		    qpio_mr_lkey(qpio_mr_mempool_mr(reg->reg, 0)) :
		    QPIO_MR_INVALID_LKEY;
	rxq->mbuf_init = rx_mbuf_init(port->port_id);
	qp_rxq_wr_init(rxq);
	if (qpio_mr_cache_init(&rxq->mrc, qport->pd) < 0)
		goto nomem;
	rxq->cq = qpio_cq_create(qport->dev, rxq->nb_desc, socket_id);
	if (rxq->cq == NULL) {
		QP_LOG(ERR, "port %s: rx queue %u: CQ of %u entries: %s",
		       port->name, qid, rxq->nb_desc, rte_strerror(rte_errno));
		rxq_free(qport, rxq);
		return -rte_errno;
	}
	if (rte_pktmbuf_alloc_bulk(mp, rxq->elts, n) != 0) {
		QP_LOG(ERR, "port %s: rx queue %u: mempool %s cannot give %zu "
		       "mbufs", port->name, qid, mp->name, n);
		memset(rxq->elts, 0, n * sizeof(*rxq->elts));
		rxq_free(qport, rxq);
		return -ENOMEM;
	}
	port->rxq[qid] = rxq;
	return 0;
nomem:
	rxq_free(qport, rxq);
	return -ENOMEM;
}

/* Free a tx queue and the mbufs it still holds. */
static void
txq_free(struct qp_txq *txq)
{
	uint32_t i;

	if (txq == NULL)
		return;
	if (txq->elts != NULL)
		for (i = 0; i < txq->nb_desc; i++)
			rte_pktmbuf_free(txq->elts[i]);
	rte_free(txq->elts);
	rte_free(txq->wr);
	rte_free(txq->sge);
	if (txq->mrc.table != NULL)
		qpio_mr_cache_fini(&txq->mrc);
	if (txq->cq != NULL)
		qpio_cq_destroy(txq->cq);
	rte_free(txq);
}

/* Set up tx queue qid: ring, send WRs and their SGEs, CQ. */
int
qp_tx_queue_setup(struct qpio_port *port, uint16_t qid, uint16_t nb_desc,
		  int socket_id)
{
	struct qp_port *qport = qp_priv(port);
	struct qp_txq *txq;

	txq = rte_zmalloc_socket("qp_txq", sizeof(*txq), RTE_CACHE_LINE_SIZE,
				 socket_id);
	if (txq == NULL)
		return -ENOMEM;
	txq->qport = qport;
	txq->port_id = port->port_id;
	txq->qid = qid;
	txq->nb_desc = rte_align32pow2(nb_desc);
	txq->mask = txq->nb_desc - 1;
	txq->inline_max = qport->inline_max;
	txq->max_pkt_len = port->conf.max_rx_pkt_len;
	txq->fast_free = (port->conf.tx_offloads &
			  QPIO_PORT_TX_OFFLOAD_MBUF_FAST_FREE) != 0;
	txq->max_sge = RTE_MIN(qport->dattr.max_sge, QP_PORT_MAX_SEGS);
	txq->elts = rte_zmalloc_socket("qp_txq_elts",
				       txq->nb_desc * sizeof(*txq->elts),
				       RTE_CACHE_LINE_SIZE, socket_id);
	txq->wr = rte_zmalloc_socket("qp_txq_wr",
				     QP_PORT_CHUNK * sizeof(*txq->wr),
				     RTE_CACHE_LINE_SIZE, socket_id);
	txq->sge = rte_zmalloc_socket("qp_txq_sge", QP_PORT_CHUNK *
				      QP_PORT_MAX_SEGS * sizeof(*txq->sge),
				      RTE_CACHE_LINE_SIZE, socket_id);
	if (txq->elts == NULL || txq->wr == NULL || txq->sge == NULL ||
	    qpio_mr_cache_init(&txq->mrc, qport->pd) < 0) {
		txq_free(txq);
		return -ENOMEM;
	}
	txq->cq = qpio_cq_create(qport->dev, txq->nb_desc, socket_id);
	if (txq->cq == NULL) {
		QP_LOG(ERR, "port %s: tx queue %u: CQ of %u entries: %s",
		       port->name, qid, txq->nb_desc, rte_strerror(rte_errno));
		txq_free(txq);
		return -rte_errno;
	}
	port->txq[qid] = txq;
	return 0;
}

/* Release rx queue qid (the port is stopped). */
void
qp_rx_queue_release(struct qpio_port *port, uint16_t qid)
{
	rxq_free(qp_priv(port), port->rxq[qid]);
	port->rxq[qid] = NULL;
}

/* Release tx queue qid (the port is stopped). */
void
qp_tx_queue_release(struct qpio_port *port, uint16_t qid)
{
	txq_free(port->txq[qid]);
	port->txq[qid] = NULL;
}

/* Reclaim the send completions of tx queue qid; free_cnt 0: all. */
int
qp_tx_done_cleanup(struct qpio_port *port, uint16_t qid, uint32_t free_cnt)
{
	struct qp_txq *txq = port->txq[qid];

	if (txq->qp == NULL)
		return 0;
	return (int)qp_txq_reclaim(txq, free_cnt);
}
