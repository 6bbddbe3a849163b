/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qp port driver, multicast: qp=ud,mcast=<MGID>[,mlid=<MLID>] makes every
 * QP of the port join the group (qpio_qp_attach_mcast()) at start, so the
 * port receives the datagrams sent to the group. With peer= the port
 * sends to its peer as before; without, the group is its link: the QPs go
 * to RTS at start and the tx queues send to the group (remote QPN
 * QPIO_MCAST_QPN). A port that sends to its group is a member too, so it
 * would receive its own frames: its rx burst (chosen at start) drops the
 * datagrams whose source is one of its QPs, as an Ethernet port does not
 * receive what it sends. Stop destroys the QPs, which detaches them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include "qpio_devargs.h"
#include "qp_private.h"

/* The default MLID of an MGID: its eight 16-bit groups folded by XOR
 * into the 14 bits below 0xC000, 0xFFFF (permissive) avoided. */
static uint16_t
mlid_of(const union qpio_gid *g)
{
	uint16_t x = 0;
	unsigned int i;

	for (i = 0; i < 16; i += 2)
		x ^= (uint16_t)((g->raw[i] << 8) | g->raw[i + 1]);
	x = (uint16_t)(QPIO_MCAST_LID_MIN | (x & 0x3fff));
	return x > QPIO_MCAST_LID_MAX ? QPIO_MCAST_LID_MAX : x;
}

/* Parse mcast= and mlid= (probe). */
int
qp_mcast_parse(struct qp_port *qport, const char *mgid, const char *mlid)
{
	const char *name = qport->port->name;

	if (mgid == NULL) {
		if (mlid != NULL) {
			QP_LOG(ERR, "port %s: mlid= needs mcast=<MGID>", name);
			return -EINVAL;
		}
		return 0;
	}
	/* qp=rc with mcast= was refused with the other keys of one
	 * transport (qp_probe.c). */
	if (inet_pton(AF_INET6, mgid, qport->mgid.raw) != 1 ||
	    qport->mgid.raw[0] != 0xff) {
		QP_LOG(ERR, "port %s: mcast=%s must be a multicast GID in "
		       "ff00::/8, written as an IPv6 address (ff12::1)", name,
		       mgid);
		return -EINVAL;
	}
	if (mlid != NULL) {
		/* Hex after 0x, or decimal (lib/devargs' rule). */
		uint64_t v;

		if (qpio_devargs_parse_uint(mlid, QPIO_MCAST_LID_MIN,
					    QPIO_MCAST_LID_MAX, &v) < 0) {
			QP_LOG(ERR, "port %s: mlid=%s must be a multicast LID, "
			       "0x%x..0x%x", name, mlid, QPIO_MCAST_LID_MIN,
			       QPIO_MCAST_LID_MAX);
			return -EINVAL;
		}
		qport->mlid = (uint16_t)v;
	} else {
		qport->mlid = mlid_of(&qport->mgid);
	}
	qport->mcast_on = 1;
	qport->mcast_tx = qport->peer[0] == '\0';
	return 0;
}

/* Point txq at the group. */
static int
tx_to_group(struct qp_port *qport, struct qp_txq *txq)
{
	struct qpio_ah_attr aa;

	memset(&aa, 0, sizeof(aa));
	aa.port_num = 1;
	aa.dlid = qport->mlid;
	aa.is_global = 1;
	aa.grh.dgid = qport->mgid;
	aa.grh.hop_limit = 1;
	if (txq->ah != NULL)
		qpio_ah_destroy(txq->ah);
	txq->ah = qpio_ah_create(qport->pd, &aa);
	if (txq->ah == NULL) {
		QP_LOG(ERR, "port %s: address handle for the group: %s",
		       qport->port->name, rte_strerror(rte_errno));
		return -rte_errno;
	}
	txq->remote_qpn = QPIO_MCAST_QPN;
	qp_txq_wr_init(txq);
	return 0;
}

/* UD INIT -> RTR -> RTS: no peer to name. */
static int
ud_to_rts(struct qpio_qp *qp)
{
	struct qpio_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTR;
	ret = qpio_qp_modify(qp, &a, QPIO_QP_STATE);
	if (ret < 0)
		return ret;
	a.qp_state = QPIO_QPS_RTS;
	a.sq_psn = 0;
	return qpio_qp_modify(qp, &a, QPIO_QP_STATE | QPIO_QP_SQ_PSN);
}

/* Port start of a port with mcast=, its QPs in INIT: join the group with
 * each; without peer=, the QPs go to RTS towards the group. */
int
qp_mcast_start(struct qpio_port *port)
{
	struct qp_port *qport = port->priv;
	uint16_t i;
	int ret;

	qport->nb_self = 0;
	for (i = 0; i < port->nb_rxq; i++) {
		struct qp_txq *txq = port->txq[i];

		ret = qpio_qp_attach_mcast(txq->qp, &qport->mgid, qport->mlid);
		if (ret < 0) {
			QP_LOG(ERR, "port %s: queue %u: join the group "
			       "(mcast=, MLID 0x%x): %s", port->name, i,
			       qport->mlid, rte_strerror(-ret));
			return ret;
		}
		if (!qport->mcast_tx)
			continue;
		qport->self_qpn[qport->nb_self++] = qpio_qp_num(txq->qp);
		ret = tx_to_group(qport, txq);
		if (ret == 0)
			ret = ud_to_rts(txq->qp);
		if (ret < 0) {
			QP_LOG(ERR, "port %s: queue %u: to RTS towards the "
			       "group: %s", port->name, i, rte_strerror(-ret));
			return ret;
		}
	}
	QP_LOG(INFO, "port %s: %u queues joined the group (MLID 0x%x)%s",
	       port->name, port->nb_rxq, qport->mlid,
	       qport->mcast_tx ? ", tx to the group" : "");
	return 0;
}
