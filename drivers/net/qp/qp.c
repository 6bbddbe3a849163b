/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qp port driver, control path: devargs, queues, QP creation and the link
 * to the peer port, stop/flush, statistics.
 *
 * Queue i of a port is QP i (nb_rxq must equal nb_txq). Queue setup
 * allocates the rings and CQs and registers the rx mempool; start creates
 * the QPs, posts every receive buffer and, when the peer port is started
 * too, connects QP i of each end to QP i of the other (RC: RTR with the
 * peer's LID/GID and QPN; UD: an address handle per tx queue). Stop moves
 * the QPs to ERR, reaps the flushed completions (transmit mbufs are freed,
 * receive buffers stay with the queue) and destroys the QPs.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "qp_private.h"

RTE_LOG_REGISTER(qp_logtype, qpio.net.qp, INFO);

static const char *const qp_port_keys[] = {
	"dev", "qp", "peer", "inline", "mac", "timeout", "retry_cnt",
	"mcast", "mlid", "listen", "connect", "reconnect", NULL,
};

/* Keys that belong to one transport, and why. Given on the other one they
 * are refused, never ignored. */
static const struct {
	const char *key;
	enum qp_port_transport transport;
	const char *why;
} qp_transport_keys[] = {
	/* IBA 9.7.6.1.3: the ACK timeout and the retries after it. */
	{ "timeout", QP_PORT_RC, "only RC QPs wait for ACKs" },
	{ "retry_cnt", QP_PORT_RC, "only RC QPs retransmit" },
	{ "mcast", QP_PORT_UD, "only UD QPs join multicast groups" },
};

static const char *
transport_name(enum qp_port_transport t)
{
	return t == QP_PORT_UD ? "ud" : "rc";
}

/* Refuse a key of qp_transport_keys given to a port of the other
 * transport. */
static int
transport_keys_check(const struct qpio_port *port,
		     const struct rte_kvargs *kv, enum qp_port_transport t)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(qp_transport_keys); i++)
		if (qp_transport_keys[i].transport != t &&
		    rte_kvargs_count(kv, qp_transport_keys[i].key) > 0) {
			QP_LOG(ERR, "port %s: %s= needs qp=%s (%s; this port "
			       "is qp=%s)", port->name, qp_transport_keys[i].key,
			       transport_name(qp_transport_keys[i].transport),
			       qp_transport_keys[i].why, transport_name(t));
			return -EINVAL;
		}
	return 0;
}

/* Devices this driver created, so the last port using one closes it. */
static struct {
	struct qpio_device *dev;
	uint32_t users;
} own_devs[QPIO_MAX_DEVICES];

static struct qpio_device *
dev_get(const char *name, int *own)
{
	struct qpio_device *dev = qpio_rdma_dev_get_by_name(name);
	unsigned int i;

	*own = 0;
	if (dev != NULL) {
		for (i = 0; i < QPIO_MAX_DEVICES; i++)
			if (own_devs[i].dev == dev) {
				own_devs[i].users++;
				*own = 1;
			}
		return dev;   /* the application's, or one we created */
	}
	for (i = 0; i < QPIO_MAX_DEVICES; i++)
		if (own_devs[i].dev == NULL)
			break;
	if (i == QPIO_MAX_DEVICES) {
		rte_errno = ENOSPC;
		return NULL;
	}
	dev = qpio_rdma_dev_create(name);
	if (dev == NULL)
		return NULL;
	own_devs[i].dev = dev;
	own_devs[i].users = 1;
	*own = 1;
	return dev;
}

static void
dev_put(struct qpio_device *dev)
{
	unsigned int i;

	for (i = 0; i < QPIO_MAX_DEVICES; i++)
		if (own_devs[i].dev == dev) {
			if (--own_devs[i].users == 0) {
				own_devs[i].dev = NULL;
				qpio_rdma_dev_close(dev);
			}
			return;
		}
}

static struct qp_port *
qp_priv(struct qpio_port *port)
{
	return port->priv;
}

static void
qp_info_get(struct qpio_port *port, struct qpio_port_info *info)
{
	struct qp_port *qp = qp_priv(port);
	const struct qpio_device_attr *a = &qp->dattr;

	info->max_rx_queues = (uint16_t)RTE_MIN(a->max_qp, (uint32_t)QPIO_PORT_MAX_QUEUES);
	info->max_tx_queues = info->max_rx_queues;
	info->min_desc = 16;
	info->max_desc = (uint16_t)RTE_MIN(a->max_qp_wr, 32768u);
	info->max_tx_segs = (uint16_t)RTE_MIN(a->max_sge, QP_PORT_MAX_SEGS);
	info->max_rx_segs = info->max_tx_segs;
	/* RC carries messages of any size; UD one MTU less the GRH room. */
	info->max_rx_pkt_len = qp->transport == QP_PORT_UD ? 4096 : 262144;
	/* Inline frames go back to their pool at post (qp.rst). */
	info->tx_offload_capa = QPIO_PORT_TX_OFFLOAD_MBUF_FAST_FREE;
}

static int
qp_configure(struct qpio_port *port)
{
	if (port->nb_rxq != port->nb_txq) {
		QP_LOG(ERR, "port %s: queue i is QP i, so nb_rxq (%u) must "
		       "equal nb_txq (%u)", port->name, port->nb_rxq,
		       port->nb_txq);
		return -EINVAL;
	}
	return 0;
}

static struct qp_pool_reg *
pool_get(struct qp_port *qp, struct rte_mempool *mp)
{
	struct qp_pool_reg *free_slot = NULL;
	unsigned int i;

	for (i = 0; i < QP_PORT_MAX_POOLS; i++) {
		if (qp->pools[i].mp == mp) {
			qp->pools[i].refs++;
			return &qp->pools[i];
		}
		if (qp->pools[i].mp == NULL && free_slot == NULL)
			free_slot = &qp->pools[i];
	}
	if (free_slot == NULL) {
		QP_LOG(ERR, "port %s: more than %u mempools", qp->port->name,
		       QP_PORT_MAX_POOLS);
		return NULL;
	}
	free_slot->reg = qpio_mr_mempool_reg(qp->pd, mp,
					     QPIO_ACCESS_LOCAL_WRITE);
	if (free_slot->reg == NULL) {
		QP_LOG(ERR, "port %s: registering mempool %s failed: %s",
		       qp->port->name, mp->name, rte_strerror(rte_errno));
		return NULL;
	}
	free_slot->mp = mp;
	free_slot->refs = 1;
	return free_slot;
}

static void
pool_put(struct qp_port *qp, struct rte_mempool *mp)
{
	unsigned int i;

	for (i = 0; i < QP_PORT_MAX_POOLS; i++)
		if (qp->pools[i].mp == mp && --qp->pools[i].refs == 0) {
			qpio_mr_mempool_dereg(qp->pools[i].reg);
			memset(&qp->pools[i], 0, sizeof(qp->pools[i]));
			return;
		}
}

static void
rxq_free(struct qp_port *qp, struct qp_rxq *rxq)
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
		pool_put(qp, rxq->mp);
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

static int
qp_rx_queue_setup(struct qpio_port *port, uint16_t qid, uint16_t nb_desc,
		  int socket_id, struct rte_mempool *mp)
{
	struct qp_port *qp = qp_priv(port);
	struct qp_pool_reg *reg;
	struct qp_rxq *rxq;
	uint32_t room, nseg, grh;
	size_t n;

	grh = qp->transport == QP_PORT_UD ? QPIO_GRH_LEN : 0;
	room = rte_pktmbuf_data_room_size(mp) - RTE_PKTMBUF_HEADROOM;
	if (grh > RTE_PKTMBUF_HEADROOM) {
		QP_LOG(ERR, "port %s: qp=ud needs RTE_PKTMBUF_HEADROOM >= %u "
		       "for the GRH", port->name, grh);
		return -EINVAL;
	}
	nseg = (port->conf.max_rx_pkt_len + room - 1) / room;
	if (nseg > qp->dattr.max_sge || nseg > QP_PORT_MAX_SEGS) {
		QP_LOG(ERR, "port %s: rx queue %u: max_rx_pkt_len %u needs %u "
		       "mbufs of %u bytes per frame; the device takes %u SGEs: "
		       "use larger mbufs", port->name, qid,
		       port->conf.max_rx_pkt_len, nseg, room,
		       RTE_MIN(qp->dattr.max_sge, QP_PORT_MAX_SEGS));
		return -EINVAL;
	}
	rxq = rte_zmalloc_socket("qp_rxq", sizeof(*rxq), RTE_CACHE_LINE_SIZE,
				 socket_id);
	if (rxq == NULL)
		return -ENOMEM;
	rxq->port = qp;
	rxq->port_id = port->port_id;
	rxq->qid = qid;
	rxq->nb_desc = rte_align32pow2(nb_desc);
	rxq->nseg = nseg;
	rxq->flat = nseg == 1;
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
	reg = pool_get(qp, mp);
	if (reg == NULL) {
		rxq_free(qp, rxq);
		return -ENOMEM;
	}
	rxq->mp = mp;
	/* A pool in one chunk is one MR: its lkey serves every buffer. */
	rxq->lkey = qpio_mr_mempool_nb_mr(reg->reg) == 1 ?
		    qpio_mr_lkey(qpio_mr_mempool_mr(reg->reg, 0)) :
		    QPIO_MR_INVALID_LKEY;
	rxq->mbuf_init = rx_mbuf_init(port->port_id);
	qp_rxq_wr_init(rxq);
	if (qpio_mr_cache_init(&rxq->mrc, qp->pd) < 0)
		goto nomem;
	rxq->cq = qpio_cq_create(qp->dev, rxq->nb_desc, socket_id);
	if (rxq->cq == NULL) {
		QP_LOG(ERR, "port %s: rx queue %u: CQ of %u entries: %s",
		       port->name, qid, rxq->nb_desc, rte_strerror(rte_errno));
		rxq_free(qp, rxq);
		return -rte_errno;
	}
	if (rte_pktmbuf_alloc_bulk(mp, rxq->elts, n) != 0) {
		QP_LOG(ERR, "port %s: rx queue %u: mempool %s cannot give %zu "
		       "mbufs", port->name, qid, mp->name, n);
		memset(rxq->elts, 0, n * sizeof(*rxq->elts));
		rxq_free(qp, rxq);
		return -ENOMEM;
	}
	port->rxq[qid] = rxq;
	return 0;
nomem:
	rxq_free(qp, rxq);
	return -ENOMEM;
}

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

/* Whether q's driver has the flat send burst: a probe of one SGE into
 * the new QP (RESET, so nothing can be posted) is refused with -EINVAL by
 * a driver that has it (the state rule) and with -ENOTSUP by one that
 * has none. */
static bool
qp_has_flat_send(struct qpio_qp *q)
{
	struct qpio_sge sge = { 0, 0, 0 };
	int err = 0;

	(void)qpio_qp_post_send_sge(q, &sge, 1, 0, 0, &err);
	return err != -ENOTSUP;
}

static int
qp_tx_queue_setup(struct qpio_port *port, uint16_t qid, uint16_t nb_desc,
		  int socket_id)
{
	struct qp_port *qp = qp_priv(port);
	struct qp_txq *txq;

	txq = rte_zmalloc_socket("qp_txq", sizeof(*txq), RTE_CACHE_LINE_SIZE,
				 socket_id);
	if (txq == NULL)
		return -ENOMEM;
	txq->port = qp;
	txq->port_id = port->port_id;
	txq->qid = qid;
	txq->nb_desc = rte_align32pow2(nb_desc);
	txq->mask = txq->nb_desc - 1;
	txq->inline_max = qp->inline_max;
	txq->max_pkt_len = port->conf.max_rx_pkt_len;
	txq->fast_free = (port->conf.tx_offloads &
			  QPIO_PORT_TX_OFFLOAD_MBUF_FAST_FREE) != 0;
	txq->max_sge = RTE_MIN(qp->dattr.max_sge, QP_PORT_MAX_SEGS);
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
	    qpio_mr_cache_init(&txq->mrc, qp->pd) < 0) {
		txq_free(txq);
		return -ENOMEM;
	}
	txq->cq = qpio_cq_create(qp->dev, txq->nb_desc, socket_id);
	if (txq->cq == NULL) {
		QP_LOG(ERR, "port %s: tx queue %u: CQ of %u entries: %s",
		       port->name, qid, txq->nb_desc, rte_strerror(rte_errno));
		txq_free(txq);
		return -rte_errno;
	}
	port->txq[qid] = txq;
	return 0;
}

static void
qp_rx_queue_release(struct qpio_port *port, uint16_t qid)
{
	rxq_free(qp_priv(port), port->rxq[qid]);
	port->rxq[qid] = NULL;
}

static void
qp_tx_queue_release(struct qpio_port *port, uint16_t qid)
{
	txq_free(port->txq[qid]);
	port->txq[qid] = NULL;
}

/* RESET -> INIT for QP i. */
static int
qp_to_init(struct qp_port *qp, struct qpio_qp *q)
{
	struct qpio_qp_attr a;
	int mask = QPIO_QP_STATE | QPIO_QP_PKEY_INDEX | QPIO_QP_PORT;

	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_INIT;
	a.port_num = 1;
	if (qp->transport == QP_PORT_UD) {
		a.qkey = qp->qkey;
		mask |= QPIO_QP_QKEY;
	} else {
		/* Remote read: the peer reads the credit word. */
		a.qp_access_flags = QPIO_ACCESS_LOCAL_WRITE |
				    QPIO_ACCESS_REMOTE_READ;
		mask |= QPIO_QP_ACCESS_FLAGS;
	}
	return qpio_qp_modify(q, &a, mask);
}

/* INIT -> RTR -> RTS of q towards QP dest_qpn of the peer. */
static int
qp_connect(struct qp_port *qp, struct qpio_qp *q, const struct qp_port *peer,
	   uint32_t dest_qpn)
{
	struct qpio_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTR;
	if (qp->transport == QP_PORT_UD) {
		ret = qpio_qp_modify(q, &a, QPIO_QP_STATE);
	} else {
		a.path_mtu = QPIO_MTU_4096;
		a.dest_qp_num = dest_qpn;
		a.rq_psn = 0;
		a.max_dest_rd_atomic = 1;   /* the peer's credit READ */
		a.min_rnr_timer = 1;         /* 0.01 ms */
		a.ah_attr.dlid = peer->lid;
		a.ah_attr.port_num = 1;
		if (peer->lid == 0) {
			a.ah_attr.is_global = 1;
			a.ah_attr.grh.dgid = peer->gid;
			a.ah_attr.grh.hop_limit = 1;
		}
		ret = qpio_qp_modify(q, &a, QPIO_QP_STATE | QPIO_QP_AV |
				     QPIO_QP_PATH_MTU | QPIO_QP_DEST_QPN |
				     QPIO_QP_RQ_PSN |
				     QPIO_QP_MAX_DEST_RD_ATOMIC |
				     QPIO_QP_MIN_RNR_TIMER);
	}
	if (ret < 0)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTS;
	a.sq_psn = 0;
	if (qp->transport == QP_PORT_UD)
		return qpio_qp_modify(q, &a, QPIO_QP_STATE | QPIO_QP_SQ_PSN);
	a.timeout = qp->timeout;
	a.retry_cnt = qp->retry_cnt;
	/* Credits keep SENDs within the peer's receives; RNR waits remain
	 * the fallback. */
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;   /* one credit READ at a time */
	return qpio_qp_modify(q, &a, QPIO_QP_STATE | QPIO_QP_SQ_PSN |
			      QPIO_QP_TIMEOUT | QPIO_QP_RETRY_CNT |
			      QPIO_QP_RNR_RETRY | QPIO_QP_MAX_QP_RD_ATOMIC);
}

/* The port named by port's peer=, or NULL (no peer= or not created). */
static struct qpio_port *
qp_peer_get(const struct qpio_port *port)
{
	const struct qp_port *qp = port->priv;
	int pid;

	if (qp->peer[0] == '\0')
		return NULL;
	pid = qpio_port_get_by_name(qp->peer);
	return pid >= 0 ? qpio_port_get(pid) : NULL;
}

/* 1 when peer is a qp port whose peer= names port back. */
static int
qp_peer_matches(const struct qpio_port *port, const struct qpio_port *peer)
{
	return peer->ops == port->ops &&
	       strcmp(((const struct qp_port *)peer->priv)->peer,
		      port->name) == 0;
}

static int qp_ud_dest(struct qp_port *qp, struct qp_txq *txq,
		      const struct qp_port *peer, uint32_t dest_qpn);

/* Connect every queue of a (started, INIT) to b's and back. */
static int
qp_link(struct qpio_port *a, struct qpio_port *b)
{
	struct qp_port *qa = qp_priv(a), *qb = qp_priv(b);
	uint16_t i;
	int ret;

	if (qa->transport != qb->transport ||
	    a->nb_rxq != b->nb_rxq ||
	    a->conf.max_rx_pkt_len != b->conf.max_rx_pkt_len) {
		QP_LOG(ERR, "ports %s and %s: a link needs the same qp= "
		       "transport, queue count and max_rx_pkt_len on both "
		       "ends (%u/%u queues, %u/%u bytes)", a->name, b->name,
		       a->nb_rxq, b->nb_rxq, a->conf.max_rx_pkt_len,
		       b->conf.max_rx_pkt_len);
		return -EINVAL;
	}
	for (i = 0; i < a->nb_rxq; i++) {
		struct qp_txq *ta = a->txq[i], *tb = b->txq[i];

		if (qpio_qp_state(ta->qp) != QPIO_QPS_INIT ||
		    qpio_qp_state(tb->qp) != QPIO_QPS_INIT) {
			QP_LOG(ERR, "ports %s and %s: queue %u is not waiting "
			       "for a link (states %s/%s): stop and start "
			       "both ports", a->name, b->name, i,
			       qpio_qp_state_str(qpio_qp_state(ta->qp)),
			       qpio_qp_state_str(qpio_qp_state(tb->qp)));
			return -EINVAL;
		}
		if (qa->transport == QP_PORT_UD) {
			ret = qp_ud_dest(qa, ta, qb, qpio_qp_num(tb->qp));
			if (ret == 0)
				ret = qp_ud_dest(qb, tb, qa, qpio_qp_num(ta->qp));
			if (ret < 0)
				return ret;
		}
		qp_credit_link(qa, ta, qb, b->rxq[i]);
		qp_credit_link(qb, tb, qa, a->rxq[i]);
		ret = qp_connect(qa, ta->qp, qb, qpio_qp_num(tb->qp));
		if (ret == 0)
			ret = qp_connect(qb, tb->qp, qa, qpio_qp_num(ta->qp));
		if (ret < 0) {
			QP_LOG(ERR, "ports %s and %s: queue %u: connect failed: "
			       "%s", a->name, b->name, i, rte_strerror(-ret));
			return ret;
		}
	}
	QP_LOG(INFO, "ports %s and %s: link up (%s, %u queue pairs)", a->name,
	       b->name, transport_name(qa->transport), a->nb_rxq);
	return 0;
}

static int
qp_ud_dest(struct qp_port *qp, struct qp_txq *txq, const struct qp_port *peer,
	   uint32_t dest_qpn)
{
	struct qpio_ah_attr aa;

	memset(&aa, 0, sizeof(aa));
	aa.dlid = peer->lid;
	aa.port_num = 1;
	if (peer->lid == 0) {
		aa.is_global = 1;
		aa.grh.dgid = peer->gid;
		aa.grh.hop_limit = 1;
	}
	if (txq->ah != NULL)
		qpio_ah_destroy(txq->ah);
	txq->ah = qpio_ah_create(qp->pd, &aa);
	if (txq->ah == NULL) {
		QP_LOG(ERR, "port %s: address handle for %s: %s",
		       qp->port->name, peer->port->name, rte_strerror(rte_errno));
		return -rte_errno;
	}
	txq->remote_qpn = dest_qpn;
	qp_txq_wr_init(txq);
	return 0;
}

static void qp_queues_down(struct qpio_port *port);

static int
qp_start(struct qpio_port *port)
{
	struct qp_port *qp = qp_priv(port);
	struct qpio_qp_init_attr ia;
	struct qpio_port *peer;
	uint16_t i;
	int ret;

	for (i = 0; i < port->nb_rxq; i++) {
		struct qp_rxq *rxq = port->rxq[i];
		struct qp_txq *txq = port->txq[i];
		struct qpio_qp *q;

		memset(&ia, 0, sizeof(ia));
		ia.send_cq = txq->cq;
		ia.recv_cq = rxq->cq;
		ia.qp_type = qp->transport == QP_PORT_UD ? QPIO_QPT_UD :
			     QPIO_QPT_RC;
		ia.cap.max_send_wr = txq->nb_desc;
		ia.cap.max_recv_wr = rxq->nb_desc;
		ia.cap.max_send_sge = txq->max_sge;
		ia.cap.max_recv_sge = rxq->nseg;
		ia.cap.max_inline_data = qp->inline_max;
		q = qpio_qp_create(qp->pd, &ia);
		if (q == NULL) {
			QP_LOG(ERR, "port %s: queue %u: QP create failed: %s",
			       port->name, i, rte_strerror(rte_errno));
			ret = -rte_errno;
			goto fail;
		}
		rxq->qp = q;
		txq->qp = q;
		/* Frames the adapter frees once posted must be ones the driver
		 * copies: no more than the QP's actual inline size. */
		txq->inline_max = RTE_MIN(qp->inline_max,
					  ia.cap.max_inline_data);
		txq->flat = qp->transport == QP_PORT_RC &&
			    qp_has_flat_send(q);
		txq->bounce_mp = rxq->mp;
		txq->head = 0;
		txq->tail = 0;
		txq->held = 0;
		txq->credit_on = 0;
		txq->credit_rd = 0;
		qp_txq_wr_init(txq);
		qp_credit_rxq_start(qp, rxq);
		if (qp->cm != NULL)
			continue;   /* lib/cm walks it from RESET */
		ret = qp_to_init(qp, q);
		if (ret == 0)
			ret = qp_rxq_post_all(rxq);
		if (ret < 0) {
			QP_LOG(ERR, "port %s: queue %u: QP to INIT with %u "
			       "receives failed: %s", port->name, i,
			       rxq->nb_desc, rte_strerror(-ret));
			goto fail;
		}
	}
	if (qp->cm != NULL) {
		/* The link comes up when lib/cm connects each queue. */
		port->rx_burst = qp_cm_rx_burst;
		port->tx_burst = qp_cm_tx_burst;
		ret = qp_cm_start(qp);
		if (ret < 0)
			goto fail;
		return 0;
	}
	port->rx_burst = qp_port_rx_burst;
	port->tx_burst = qp_port_tx_burst;
	if (qp->mcast_on) {
		ret = qp_mcast_start(port);
		if (ret < 0)
			goto fail;
		if (qp->mcast_tx)
			return 0;   /* the group is the link */
	}
	peer = qp_peer_get(port);
	/* A peer created after this start is allowed (an application may
	 * create and start its ports one by one), so a missing peer is
	 * waited for, with a warning that names a likely typo. */
	if (peer == NULL && qp->peer[0] != '\0')
		QP_LOG(WARNING, "port %s: peer=%s is no port yet: the link "
		       "stays down until a qp port %s naming %s is created and "
		       "started (a typo in peer=, or a missing --dev?)",
		       port->name, qp->peer, qp->peer, port->name);
	if (peer != NULL && !qp_peer_matches(port, peer)) {
		QP_LOG(ERR, "port %s: peer=%s must be a qp port whose peer= "
		       "names %s", port->name, qp->peer, port->name);
		ret = -EINVAL;
		goto fail;
	}
	if (peer == NULL || !peer->started) {
		QP_LOG(INFO, "port %s: link waits for peer %s to start",
		       port->name, qp->peer);
		return 0;
	}
	ret = qp_link(port, peer);
	if (ret < 0)
		goto fail;
	return 0;
fail:
	qp_queues_down(port);
	return ret;
}

/* Move the QPs to ERR, reap every flushed completion, destroy the QPs. */
static void
qp_queues_down(struct qpio_port *port)
{
	struct qpio_qp_attr a;
	uint16_t i;

	for (i = 0; i < port->nb_rxq; i++) {
		struct qp_rxq *rxq = port->rxq[i];
		struct qp_txq *txq = port->txq[i];
		uint64_t deadline, ipackets, ibytes;

		if (rxq == NULL || txq == NULL || rxq->qp == NULL)
			continue;
		memset(&a, 0, sizeof(a));
		a.qp_state = QPIO_QPS_ERR;
		qpio_qp_modify(rxq->qp, &a, QPIO_QP_STATE);
		ipackets = rxq->ipackets;
		ibytes = rxq->ibytes;
		deadline = rte_get_timer_cycles() + rte_get_timer_hz();
		while ((txq->head != txq->tail || rxq->posted > 0) &&
		       rte_get_timer_cycles() < deadline) {
			struct rte_mbuf *drop[QP_PORT_POLL];
			uint16_t n, k;

			qp_txq_reclaim(txq, 0);
			/* Frames still completing: hand back to the pool. */
			n = qp_port_rx_burst(rxq, drop, QP_PORT_POLL);
			for (k = 0; k < n; k++)
				rte_pktmbuf_free(drop[k]);
		}
		/* Frames that arrived but were never handed to the
		 * application are dropped by the stop: imissed. */
		qp_count(&rxq->stop_drops, rxq->ipackets - ipackets);
		rxq->ipackets = ipackets;
		rxq->ibytes = ibytes;
		if (txq->head != txq->tail || rxq->posted > 0)
			QP_LOG(ERR, "port %s: queue %u: %u sends and %u "
			       "receives not flushed after 1 s", port->name,
			       i, txq->head - txq->tail, rxq->posted);
		/* Whatever did not complete is freed with the ring. */
		while (txq->tail != txq->head) {
			rte_pktmbuf_free(txq->elts[txq->tail & txq->mask]);
			txq->elts[txq->tail & txq->mask] = NULL;
			txq->tail++;
		}
		txq->held = 0;
		memset(rxq->slot_posted, 0, rxq->nb_desc);
		rxq->posted = 0;
		rxq->credit = NULL;
		txq->credit_on = 0;
		txq->credit_rd = 0;
		txq->rnr_naks += qp_txq_rnr_naks(txq);
		rxq->rearm_start = 0;
		rxq->rearm_n = 0;
		qpio_qp_destroy(rxq->qp);
		rxq->qp = NULL;
		txq->qp = NULL;
		if (txq->ah != NULL)
			qpio_ah_destroy(txq->ah);
		txq->ah = NULL;
	}
}

/* The link is gone: move the started peer's QPs to ERR, so its tx_burst
 * returns 0 (the caller keeps its frames) and its link reads down, instead
 * of frames being posted towards QPs that no longer exist. */
static void
qp_peer_link_down(struct qpio_port *port)
{
	struct qpio_port *peer = qp_peer_get(port);
	struct qpio_qp_attr a;
	uint16_t i;

	if (peer == NULL || !peer->started || !qp_peer_matches(port, peer))
		return;
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_ERR;
	for (i = 0; i < peer->nb_txq; i++) {
		struct qp_txq *txq = peer->txq[i];

		if (txq != NULL && txq->qp != NULL &&
		    qpio_qp_state(txq->qp) == QPIO_QPS_RTS)
			qpio_qp_modify(txq->qp, &a, QPIO_QP_STATE);
	}
	QP_LOG(INFO, "port %s stopped: link of %s down until both start again",
	       port->name, peer->name);
}

static int
qp_stop(struct qpio_port *port)
{
	struct qp_port *qp = qp_priv(port);

	if (qp->cm != NULL)
		qp_cm_stop(qp);
	else
		qp_peer_link_down(port);
	qp_queues_down(port);
	return 0;
}

static void
qp_close(struct qpio_port *port)
{
	struct qp_port *qp = qp_priv(port);

	qp_cm_free(qp);
	qp_credit_fini(qp);
	if (qp->pd != NULL && qpio_pd_free(qp->pd) < 0)
		QP_LOG(ERR, "port %s: PD still in use at close", port->name);
	if (qp->own_dev)
		dev_put(qp->dev);
	rte_free(qp);
	port->priv = NULL;
}

static void
qp_link_get(struct qpio_port *port, struct qpio_port_link *link)
{
	uint16_t i;

	link->speed_mbps = 100000;
	if (qp_priv(port)->cm != NULL && !qp_cm_link_up(qp_priv(port))) {
		link->up = 0;
		return;
	}
	for (i = 0; i < port->nb_txq; i++) {
		struct qp_txq *txq = port->txq[i];

		if (txq == NULL || txq->qp == NULL ||
		    qpio_qp_state(txq->qp) != QPIO_QPS_RTS) {
			link->up = 0;
			return;
		}
	}
}

static int
qp_tx_done_cleanup(struct qpio_port *port, uint16_t qid, uint32_t free_cnt)
{
	struct qp_txq *txq = port->txq[qid];

	if (txq->qp == NULL)
		return 0;
	return (int)qp_txq_reclaim(txq, free_cnt);
}

static const struct qpio_port_ops qp_port_ops = {
	.info_get = qp_info_get,
	.configure = qp_configure,
	.rx_queue_setup = qp_rx_queue_setup,
	.tx_queue_setup = qp_tx_queue_setup,
	.rx_queue_release = qp_rx_queue_release,
	.tx_queue_release = qp_tx_queue_release,
	.start = qp_start,
	.stop = qp_stop,
	.close = qp_close,
	.stats_get = qp_stats_get,
	.stats_reset = qp_stats_reset,
	.xstats_names = qp_xstats_names,
	.xstats_values = qp_xstats_values,
	.link_get = qp_link_get,
	.tx_done_cleanup = qp_tx_done_cleanup,
};

static int
qp_probe(struct qpio_port *port, const struct rte_kvargs *kv)
{
	const char *dev_name = NULL, *transport = "rc", *peer = NULL;
	const char *mac = NULL, *mgid = NULL, *mlid = NULL;
	const char *listen = NULL, *connect = NULL;
	struct qpio_port_attr pa;
	struct qp_port *qp;
	uint32_t inl = UINT32_MAX, timeout = 14, retry_cnt = 7;
	uint32_t reconnect = UINT32_MAX;
	int ret = 0;

	ret |= qpio_port_kvargs_str(port, kv, "dev", &dev_name);
	ret |= qpio_port_kvargs_str(port, kv, "qp", &transport);
	ret |= qpio_port_kvargs_str(port, kv, "peer", &peer);
	ret |= qpio_port_kvargs_str(port, kv, "mac", &mac);
	ret |= qpio_port_kvargs_str(port, kv, "mcast", &mgid);
	ret |= qpio_port_kvargs_str(port, kv, "mlid", &mlid);
	ret |= qpio_port_kvargs_u32(port, kv, "inline", 0, UINT16_MAX, &inl);
	/* IBA 9.7.6.1.3: 5 bits of 4.096 us x 2^timeout (0: for ever);
	 * 3 bits of retries after a lost packet. */
	ret |= qpio_port_kvargs_u32(port, kv, "timeout", 0, 31, &timeout);
	ret |= qpio_port_kvargs_u32(port, kv, "retry_cnt", 0, 7, &retry_cnt);
	ret |= qpio_port_kvargs_str(port, kv, "listen", &listen);
	ret |= qpio_port_kvargs_str(port, kv, "connect", &connect);
	ret |= qpio_port_kvargs_u32(port, kv, "reconnect", 0, 1, &reconnect);
	if (ret != 0)
		return -EINVAL;
	if (dev_name == NULL) {
		QP_LOG(ERR, "port %s: devargs need dev=<rdma device>, e.g. "
		       "dev=soft0", port->name);
		return -EINVAL;
	}
	if (strcmp(transport, "rc") != 0 && strcmp(transport, "ud") != 0) {
		QP_LOG(ERR, "port %s: qp=%s: the transport is rc or ud",
		       port->name, transport);
		return -EINVAL;
	}
	ret = transport_keys_check(port, kv, strcmp(transport, "ud") == 0 ?
				   QP_PORT_UD : QP_PORT_RC);
	if (ret < 0)
		return ret;
	if (peer != NULL && (strlen(peer) >= QPIO_PORT_NAME_LEN ||
			     strcmp(peer, port->name) == 0)) {
		QP_LOG(ERR, "port %s: peer=%s must name another port",
		       port->name, peer);
		return -EINVAL;
	}
	if (mac != NULL && (rte_ether_unformat_addr(mac, &port->mac) < 0 ||
			    !rte_is_valid_assigned_ether_addr(&port->mac))) {
		QP_LOG(ERR, "port %s: mac=%s must be a unicast, non-zero "
		       "XX:XX:XX:XX:XX:XX address", port->name, mac);
		return -EINVAL;
	}
	qp = rte_zmalloc("qp_port", sizeof(*qp), RTE_CACHE_LINE_SIZE);
	if (qp == NULL)
		return -ENOMEM;
	qp->port = port;
	qp->transport = strcmp(transport, "ud") == 0 ? QP_PORT_UD : QP_PORT_RC;
	qp->qkey = QP_PORT_QKEY;
	qp->timeout = (uint8_t)timeout;
	qp->retry_cnt = (uint8_t)retry_cnt;
	if (peer != NULL)
		snprintf(qp->peer, sizeof(qp->peer), "%s", peer);
	ret = qp_cm_parse(qp, listen, connect, reconnect);
	if (ret < 0) {
		rte_free(qp);
		return ret;
	}
	ret = qp_mcast_parse(qp, mgid, mlid);
	if (ret < 0)
		goto fail;
	qp->dev = dev_get(dev_name, &qp->own_dev);
	if (qp->dev == NULL) {
		ret = -rte_errno;
		QP_LOG(ERR, "port %s: rdma device %s: %s", port->name,
		       dev_name, rte_strerror(-ret));
		goto fail;
	}
	qpio_rdma_dev_query(qp->dev, &qp->dattr);
	if (inl == UINT32_MAX)
		inl = qp->dattr.max_inline_data;
	if (inl > qp->dattr.max_inline_data) {
		QP_LOG(ERR, "port %s: inline=%u above the device's "
		       "max_inline_data %u", port->name, inl,
		       qp->dattr.max_inline_data);
		ret = -EINVAL;
		goto fail;
	}
	qp->inline_max = inl;
	ret = qpio_rdma_port_query(qp->dev, 1, &pa);
	if (ret == 0)
		ret = qpio_rdma_gid_query(qp->dev, 1, 0, &qp->gid);
	if (ret < 0)
		goto fail;
	qp->lid = pa.lid;
	qp->pd = qpio_pd_alloc(qp->dev);
	if (qp->pd == NULL) {
		ret = -rte_errno;
		goto fail;
	}
	if (qp->transport == QP_PORT_RC && qp->dattr.max_qp_rd_atom == 0) {
		QP_LOG(ERR, "port %s: qp=rc reads the peer's credits with an "
		       "RDMA READ; device %s allows none (max_qp_rd_atom 0)",
		       port->name, dev_name);
		ret = -ENOTSUP;
		goto fail;
	}
	ret = qp_credit_init(qp);
	if (ret < 0)
		goto fail;
	port->ops = &qp_port_ops;
	port->priv = qp;
	return 0;
fail:
	qp_cm_free(qp);
	if (qp->pd != NULL)
		qpio_pd_free(qp->pd);
	if (qp->dev != NULL && qp->own_dev)
		dev_put(qp->dev);
	rte_free(qp);
	return ret;
}

static struct qpio_port_driver qp_port_driver = {
	.name = "qp",
	.valid_keys = qp_port_keys,
	.probe = qp_probe,
};

QPIO_PORT_DRIVER_REGISTER(qp_port_driver);
