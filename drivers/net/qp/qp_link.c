/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qp port driver: start, stop and the link to the peer port.
 *
 * Queue i of a port is QP i (nb_rxq must equal nb_txq). Start creates the
 * QPs, posts every receive buffer and, when the peer port is started
 * too, connects QP i of each end to QP i of the other (RC: RTR with the
 * peer's LID/GID and QPN; UD: an address handle per tx queue). Stop moves
 * the QPs to ERR, reaps the flushed completions (transmit mbufs are freed,
 * receive buffers stay with the queue) and destroys the QPs. Ports with
 * listen= or connect= are linked by lib/cm instead (qp_cm.c).
 */

#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>

#include "qp_private.h"

/* Whether qp's driver has the flat send burst: a probe of one SGE into
 * the new QP (RESET, so nothing can be posted) is refused with -EINVAL by
 * a driver that has it (the state rule) and with -EOPNOTSUPP by one that
 * has none. */
static bool
qp_has_flat_send(struct qpio_qp *qp)
{
	struct qpio_sge sge = { 0, 0, 0 };
	int err = 0;

	(void)qpio_qp_post_send_sge(qp, &sge, 1, 0, 0, &err);
	return err != -EOPNOTSUPP;
}

/* The same for the flat receive burst. */
static bool
qp_has_flat_recv(struct qpio_qp *qp)
{
	struct qpio_sge sge = { 0, 0, 0 };
	int err = 0;

	(void)qpio_qp_post_recv_sge(qp, &sge, 1, 0, &err);
	return err != -EOPNOTSUPP;
}

/*
 * The port's burst functions, chosen once at start as DPDK's PMDs (memif,
 * mlx5) choose theirs at dev start: flat when every QP takes the flat send
 * burst (qp=rc on a driver that has it), a multicast sender's rx burst
 * that drops its own datagrams, and the connected ports' bursts that apply
 * link changes first.
 */
static void
bursts_choose(struct qpio_port *port, bool flat)
{
	const struct qp_port *qport = qp_priv(port);

	if (qport->cm != NULL) {
		port->rx_burst = qp_cm_rx_burst;
		port->tx_burst = flat ? qp_cm_tx_burst_flat : qp_cm_tx_burst_wr;
		return;
	}
	port->rx_burst = qport->mcast_tx ? qp_rx_burst_mcast : qp_rx_burst;
	port->tx_burst = flat ? qp_tx_burst_flat : qp_tx_burst_wr;
}

/* RESET -> INIT for QP i. */
static int
qp_to_init(struct qp_port *qport, struct qpio_qp *qp)
{
	struct qpio_qp_attr a;
	int mask = QPIO_QP_STATE | QPIO_QP_PKEY_INDEX | QPIO_QP_PORT;

	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_INIT;
	a.port_num = 1;
	if (qport->transport == QP_PORT_UD) {
		a.qkey = qport->qkey;
		mask |= QPIO_QP_QKEY;
	} else {
		/* Remote read: the peer reads the credit word. */
		a.qp_access_flags = QPIO_ACCESS_LOCAL_WRITE |
				    QPIO_ACCESS_REMOTE_READ;
		mask |= QPIO_QP_ACCESS_FLAGS;
	}
	return qpio_qp_modify(qp, &a, mask);
}

/* INIT -> RTR -> RTS of qp towards QP dest_qpn of the peer. */
static int
qp_connect(struct qp_port *qport, struct qpio_qp *qp,
	   const struct qp_port *peer, uint32_t dest_qpn)
{
	struct qpio_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTR;
	if (qport->transport == QP_PORT_UD) {
		ret = qpio_qp_modify(qp, &a, QPIO_QP_STATE);
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
		ret = qpio_qp_modify(qp, &a, QPIO_QP_STATE | QPIO_QP_AV |
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
	if (qport->transport == QP_PORT_UD)
		return qpio_qp_modify(qp, &a, QPIO_QP_STATE | QPIO_QP_SQ_PSN);
	a.timeout = qport->timeout;
	a.retry_cnt = qport->retry_cnt;
	/* Credits keep SENDs within the peer's receives; RNR waits remain
	 * the fallback. */
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;   /* one credit READ at a time */
	return qpio_qp_modify(qp, &a, QPIO_QP_STATE | QPIO_QP_SQ_PSN |
			      QPIO_QP_TIMEOUT | QPIO_QP_RETRY_CNT |
			      QPIO_QP_RNR_RETRY | QPIO_QP_MAX_QP_RD_ATOMIC);
}

/* The port named by port's peer=, or NULL (no peer= or not created). */
static struct qpio_port *
qp_peer_get(const struct qpio_port *port)
{
	const struct qp_port *qport = port->priv;
	int pid;

	if (qport->peer[0] == '\0')
		return NULL;
	pid = qpio_port_get_by_name(qport->peer);
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

static int qp_ud_dest(struct qp_port *qport, struct qp_txq *txq,
		      const struct qp_port *peer, uint32_t dest_qpn);

/* Connect every queue of a (started, INIT) to b's and back. */
static int
qp_link_ports(struct qpio_port *a, struct qpio_port *b)
{
	struct qp_port *qport_a = qp_priv(a), *qport_b = qp_priv(b);
	uint16_t i;
	int ret;

	if (qport_a->transport != qport_b->transport ||
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
		if (qport_a->transport == QP_PORT_UD) {
			ret = qp_ud_dest(qport_a, ta, qport_b,
					 qpio_qp_num(tb->qp));
			if (ret == 0)
				ret = qp_ud_dest(qport_b, tb, qport_a,
						 qpio_qp_num(ta->qp));
			if (ret < 0)
				return ret;
		}
		qp_credit_link(&ta->credit, qport_a, i, qport_b, b->rxq[i]);
		qp_credit_link(&tb->credit, qport_b, i, qport_a, a->rxq[i]);
		ret = qp_connect(qport_a, ta->qp, qport_b,
				 qpio_qp_num(tb->qp));
		if (ret == 0)
			ret = qp_connect(qport_b, tb->qp, qport_a,
					 qpio_qp_num(ta->qp));
		if (ret < 0) {
			QP_LOG(ERR, "ports %s and %s: queue %u: connect failed: "
			       "%s", a->name, b->name, i, rte_strerror(-ret));
			return ret;
		}
	}
	QP_LOG(INFO, "ports %s and %s: link up (%s, %u queue pairs)", a->name,
	       b->name, qp_transport_name(qport_a->transport), a->nb_rxq);
	return 0;
}

/* UD: point txq at QP dest_qpn of peer through a new address handle. */
static int
qp_ud_dest(struct qp_port *qport, struct qp_txq *txq,
	   const struct qp_port *peer, uint32_t dest_qpn)
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
	txq->ah = qpio_ah_create(qport->pd, &aa);
	if (txq->ah == NULL) {
		QP_LOG(ERR, "port %s: address handle for %s: %s",
		       qport->port->name, peer->port->name,
		       rte_strerror(rte_errno));
		return -rte_errno;
	}
	txq->remote_qpn = dest_qpn;
	qp_txq_wr_init(txq);
	return 0;
}

static void qp_queues_down(struct qpio_port *port);

/* Port start: create each queue's QP, post its receives and link the
 * port: to its peer= port when that one is started too, to its group,
 * or through lib/cm (qp_cm.c). */
int
qp_start(struct qpio_port *port)
{
	struct qp_port *qport = qp_priv(port);
	struct qpio_qp_init_attr ia;
	struct qpio_port *peer;
	/* The QPs of a port are of one type on one device: all have the
	 * flat send burst, or none (if they differed, all would take the
	 * WR list). */
	bool flat = qport->transport == QP_PORT_RC;
	uint16_t i;
	int ret;

	for (i = 0; i < port->nb_rxq; i++) {
		struct qp_rxq *rxq = port->rxq[i];
		struct qp_txq *txq = port->txq[i];
		struct qpio_qp *qp;

		memset(&ia, 0, sizeof(ia));
		ia.send_cq = txq->cq;
		ia.recv_cq = rxq->cq;
		ia.qp_type = qport->transport == QP_PORT_UD ? QPIO_QPT_UD :
			     QPIO_QPT_RC;
		ia.cap.max_send_wr = txq->nb_desc;
		ia.cap.max_recv_wr = rxq->nb_desc;
		ia.cap.max_send_sge = txq->max_sge;
		ia.cap.max_recv_sge = rxq->nseg;
		ia.cap.max_inline_data = qport->inline_max;
		qp = qpio_qp_create(qport->pd, &ia);
		if (qp == NULL) {
			QP_LOG(ERR, "port %s: queue %u: QP create failed: %s",
			       port->name, i, rte_strerror(rte_errno));
			ret = -rte_errno;
			goto fail;
		}
		rxq->qp = qp;
		txq->qp = qp;
		/* Frames the adapter frees once posted must be ones the driver
		 * copies: no more than the QP's actual inline size. */
		txq->inline_max = RTE_MIN(qport->inline_max,
					  ia.cap.max_inline_data);
		flat = flat && qp_has_flat_send(qp);
		rxq->flat = rxq->nseg == 1 && qp_has_flat_recv(qp);
		txq->bounce_mp = rxq->mp;
		txq->head = 0;
		txq->tail = 0;
		txq->held = 0;
		qp_credit_off(&txq->credit);
		qp_txq_wr_init(txq);
		qp_credit_rxq_start(qport, rxq);
		if (qport->cm != NULL)
			continue;   /* lib/cm walks it from RESET */
		ret = qp_to_init(qport, qp);
		if (ret == 0)
			ret = qp_rxq_post_all(rxq);
		if (ret < 0) {
			QP_LOG(ERR, "port %s: queue %u: QP to INIT with %u "
			       "receives failed: %s", port->name, i,
			       rxq->nb_desc, rte_strerror(-ret));
			goto fail;
		}
	}
	bursts_choose(port, flat);
	if (qport->cm != NULL) {
		/* The link comes up when lib/cm connects each queue. */
		ret = qp_cm_start(qport);
		if (ret < 0)
			goto fail;
		return 0;
	}
	if (qport->mcast_on) {
		ret = qp_mcast_start(port);
		if (ret < 0)
			goto fail;
		if (qport->mcast_tx)
			return 0;   /* the group is the link */
	}
	peer = qp_peer_get(port);
	/* A peer created after this start is allowed (an application may
	 * create and start its ports one by one), so a missing peer is
	 * waited for, with a warning that names a likely typo. */
	if (peer == NULL && qport->peer[0] != '\0')
		QP_LOG(WARNING, "port %s: peer=%s is no port yet: the link "
		       "stays down until a qp port %s naming %s is created and "
		       "started (a typo in peer=, or a missing --dev?)",
		       port->name, qport->peer, qport->peer, port->name);
	if (peer != NULL && !qp_peer_matches(port, peer)) {
		QP_LOG(ERR, "port %s: peer=%s must be a qp port whose peer= "
		       "names %s", port->name, qport->peer, port->name);
		ret = -EINVAL;
		goto fail;
	}
	if (peer == NULL || !peer->started) {
		QP_LOG(INFO, "port %s: link waits for peer %s to start",
		       port->name, qport->peer);
		return 0;
	}
	ret = qp_link_ports(port, peer);
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
		ipackets = rxq->stats.ipackets;
		ibytes = rxq->stats.ibytes;
		deadline = rte_get_timer_cycles() + rte_get_timer_hz();
		while ((txq->head != txq->tail || rxq->posted > 0) &&
		       rte_get_timer_cycles() < deadline) {
			struct rte_mbuf *drop[QP_PORT_POLL];
			uint16_t n, k;

			qp_txq_reclaim(txq, 0);
			/* Frames still completing: hand back to the pool. */
			n = qp_rx_burst(rxq, drop, QP_PORT_POLL);
			for (k = 0; k < n; k++)
				rte_pktmbuf_free(drop[k]);
		}
		/* Frames that arrived but were never handed to the
		 * application are dropped by the stop: imissed. */
		qp_count(&rxq->stats.stop_drops, rxq->stats.ipackets - ipackets);
		rxq->stats.ipackets = ipackets;
		rxq->stats.ibytes = ibytes;
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
		qp_credit_off(&txq->credit);
		txq->stats.rnr_naks += qp_txq_rnr_naks(txq);
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

/* Port stop: the link down on the peer's side (or lib/cm's connections
 * ended), then the queues drained and their QPs destroyed. */
int
qp_stop(struct qpio_port *port)
{
	struct qp_port *qport = qp_priv(port);

	if (qport->cm != NULL)
		qp_cm_stop(qport);
	else
		qp_peer_link_down(port);
	qp_queues_down(port);
	return 0;
}

/* Link up when every tx queue's QP is in RTS (and, on a connected port,
 * every queue's link is up). */
void
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
