/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connected qp ports: listen=ADDR:PORT and connect=ADDR:PORT over lib/cm,
 * for a peer port in another process or on another host.
 *
 * Queue i of a port is one lib/cm connection of QP i. The connect side
 * dials one connection per queue (again every QP_CM_RETRY_MS until the
 * first one is up, and after a disconnect with reconnect=1); the listen
 * side accepts a request for queue i when that queue is free. The
 * connection's private data (struct qp_cm_pdata) carries the queue index,
 * the port's shape and, for RC, the address and rkey of the rx queue's
 * credit word and its receive count, so the sender reads the receiver's
 * credits with RDMA READs across the connection (qp_credit.c).
 *
 * A control thread per port (rte_ctrl_thread_create, "qpcm-<port>")
 * polls the lib/cm channel and moves the QPs; it never writes the
 * queues' datapath state. The hand-over goes through three words per
 * queue direction (struct qp_link of the rx and of the tx queue):
 *
 * - word (control thread writes, release): a generation, with QP_LINK_UP
 *   while the link is up. The peer's credit word address, rkey and
 *   receive count (UD: address handle and QPN) are staged in the tx
 *   queue (struct qp_link_stage, link_stage()) before it is raised.
 * - seen (datapath only): the link word the burst function last
 *   applied. A new word is applied once, out of line: on a new link the
 *   rx side forgets what the old QP left in its CQ, reposts every receive
 *   and publishes its credits from zero (the control thread does this
 *   itself before raising the link when the queue was acknowledged down,
 *   as on the first link, so receives are there when the link is up);
 *   the tx side frees what the old QP can no longer complete and takes
 *   the staged peer. On a link down the rx side stops reposting (the
 *   credit word stays still).
 * - ack (datapath writes, release): the down link word, once the queue
 *   is drained (no receive posted, every send reclaimed).
 *
 * Peer gone (DISCONNECTED: the peer's disconnect, its process or host
 * died, its socket closed): lib/cm moved the QP to ERR, so every posted WR
 * completes once with WR_FLUSH_ERR; the link goes down (counted in
 * cm_link_downs); the datapath reaps the flushes (rx_flushed, tx_flushed)
 * and acknowledges; then, or after QP_CM_DRAIN_MS when the application
 * does not poll both directions of the queue, the control thread moves
 * the QP to RESET and, with reconnect=1, connects again. The per-burst
 * cost for a connected port is one load of the link word and a compare.
 * The data path side of the hand-over is in qp_cm_burst.c.
 */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netdb.h>
#include <pthread.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "qp_private.h"
#include "qpio_cm.h"
#include "qpio_devargs.h"

/* Poll period of the control thread, ms (connection events and lib/cm's
 * handshake timeouts). */
#define QP_CM_TICK_MS 10
/* Connect side: ms between attempts while a queue is not connected. */
#define QP_CM_RETRY_MS 200u
/* ms a queue whose link went down may take to be drained by the
 * application's bursts before its QP is reset anyway. */
#define QP_CM_DRAIN_MS 1000u
/* ms a stopping port waits for its sends in flight to complete. */
#define QP_CM_STOP_DRAIN_MS 2000u
/* UD address handles kept per queue (one per link; the oldest goes when
 * a new one is made: the sending lcore has moved on from it). */
#define QP_CM_AHS 4u
/* "QPPT": private data of a qp port connection. */
#define QP_CM_MAGIC 0x51505054u
#define QP_CM_VERSION 1u

/* Why a listener refused a queue (qp_cm_pdata.reason of a REJ). */
enum qp_cm_reason {
	QP_CM_OK = 0,
	QP_CM_BAD_MSG = 1,   /* not a qp port, or another version */
	QP_CM_MISMATCH = 2,  /* transport, queue count or max_rx_pkt_len */
	QP_CM_BUSY = 3,      /* the queue is connected or still draining */
	QP_CM_NO_RECONNECT = 4, /* the link was used, reconnect=0 */
};

static const char *const qp_cm_reason_str[] = {
	"ok", "not a qp port of this version", "different port shape",
	"queue busy", "the link was used and the listener has reconnect=0",
};

/* Private data of REQ and REP, network byte order (36 bytes). */
struct qp_cm_pdata {
	uint32_t magic;
	uint8_t version;
	uint8_t transport;       /* enum qp_port_transport */
	uint16_t queue;          /* queue index = QP index */
	uint16_t nb_queues;
	uint16_t reason;         /* REJ: enum qp_cm_reason */
	uint32_t max_rx_pkt_len;
	uint32_t rx_desc;        /* receive WRs of rx queue `queue` */
	uint32_t credit_rkey;    /* RC: rkey of the credit MR */
	uint32_t pad;
	uint64_t credit_addr;    /* RC: address of the rx queue's word */
} __rte_packed;

static_assert(sizeof(struct qp_cm_pdata) <= QPIO_CM_PRIVATE_DATA_MAX,
	      "qp port private data must fit a lib/cm message");

enum qp_cm_qstate {
	QCM_IDLE,        /* control thread owns the queue, QP in RESET */
	QCM_CONNECTING,  /* a connection of this queue is being set up */
	QCM_UP,          /* link up, the datapath owns the queue */
	QCM_DRAIN,       /* link down, waiting for the datapath's ack */
	QCM_DEAD,        /* down for good (reconnect=0 or a refused shape) */
};

struct qp_cm_queue {
	enum qp_cm_qstate state;
	struct qpio_cm_id *id;
	uint64_t next_try_ms;
	uint64_t drain_end_ms;
	struct qpio_ah *ah[QP_CM_AHS];
	uint32_t nb_ah;
	uint32_t gen;
	uint8_t used;            /* was up once */
	uint8_t fail_logged;
};

struct qp_cm {
	struct qp_port *qport;
	char host[256];          /* "" = every address (listen) */
	char service[8];
	uint8_t listen;
	uint8_t reconnect;
	struct qpio_cm_channel *ch;
	struct qpio_cm_id *listen_id;
	pthread_t thread;
	uint8_t thread_on;
	uint32_t stop;
	struct qpio_cm_qp_params params;
	struct qp_cm_queue queue[QPIO_PORT_MAX_QUEUES];
	/* counters, control thread only */
	uint64_t link_ups;
	uint64_t link_downs;
	uint64_t failures;       /* connections refused, unreachable, failed */
};

/* Milliseconds of the timer (deadlines of the control thread). */
static uint64_t
now_ms(void)
{
	return rte_get_timer_cycles() * 1000 / rte_get_timer_hz();
}

/* "host:port", "[v6]:port", ":port" or "*:port" (listen: every address). */
static int
split_addr(struct qp_cm *cm, const char *key, const char *val)
{
	const char *colon, *h = val;
	uint32_t port;
	size_t hl;

	if (val[0] == '[') {
		const char *end = strchr(val, ']');

		if (end == NULL || end[1] != ':')
			goto bad;
		h = val + 1;
		hl = (size_t)(end - h);
		colon = end + 1;
	} else {
		colon = strrchr(val, ':');
		if (colon == NULL || memchr(val, ':', (size_t)(colon - val)))
			goto bad;
		hl = (size_t)(colon - val);
	}
	/* Port 0 is no port for either side: a listener on it would get
	 * one the kernel picks, which no connector could be told. */
	if (hl >= sizeof(cm->host) ||
	    qpio_devargs_parse_u32(colon + 1, 1, 65535, &port) < 0)
		goto bad;
	memcpy(cm->host, h, hl);
	cm->host[hl] = '\0';
	if (strcmp(cm->host, "*") == 0)
		cm->host[0] = '\0';
	if (cm->host[0] == '\0' && !cm->listen)
		goto bad;
	snprintf(cm->service, sizeof(cm->service), "%u", port);
	return 0;
bad:
	QP_LOG(ERR, "port %s: %s=%s: give ADDR:PORT (a host name, IPv4 or "
	       "[IPv6] address and a port 1..65535%s)", cm->qport->port->name,
	       key, val, cm->listen ? "; *:PORT or :PORT listens on every "
	       "address" : "");
	return -EINVAL;
}

/* Parse listen=, connect= and reconnect= (probe): qport->cm is set for a
 * connected port, left NULL when neither address is given. */
int
qp_cm_parse(struct qp_port *qport, const char *listen, const char *connect,
	    uint32_t reconnect)
{
	struct qp_cm *cm;
	int ret;

	if (listen == NULL && connect == NULL) {
		if (reconnect != UINT32_MAX) {
			QP_LOG(ERR, "port %s: reconnect= goes with listen= or "
			       "connect=", qport->port->name);
			return -EINVAL;
		}
		return 0;
	}
	if (listen != NULL && connect != NULL) {
		QP_LOG(ERR, "port %s: a port listens or connects, not both "
		       "(listen=%s, connect=%s)", qport->port->name, listen,
		       connect);
		return -EINVAL;
	}
	if (qport->peer[0] != '\0') {
		QP_LOG(ERR, "port %s: peer= names a port of this process; "
		       "listen= and connect= reach one in another process or "
		       "host: give one of them", qport->port->name);
		return -EINVAL;
	}
	cm = rte_zmalloc("qp_cm", sizeof(*cm), RTE_CACHE_LINE_SIZE);
	if (cm == NULL)
		return -ENOMEM;
	cm->qport = qport;
	cm->listen = listen != NULL;
	cm->reconnect = reconnect == 1;
	ret = split_addr(cm, listen != NULL ? "listen" : "connect",
			 listen != NULL ? listen : connect);
	if (ret < 0) {
		rte_free(cm);
		return ret;
	}
	qpio_cm_qp_params_init(&cm->params);
	cm->params.qkey = qport->qkey;
	cm->params.min_rnr_timer = 1;      /* 0.01 ms, as peer= links */
	cm->params.timeout = qport->timeout;  /* the timeout= and retry_cnt= */
	cm->params.retry_cnt = qport->retry_cnt;
	cm->params.access_flags = QPIO_ACCESS_LOCAL_WRITE |
				  QPIO_ACCESS_REMOTE_READ;
	qport->cm = cm;
	return 0;
}

/* Free what qp_cm_parse() allocated (close, or a failed probe). */
void
qp_cm_free(struct qp_port *qport)
{
	rte_free(qport->cm);
	qport->cm = NULL;
}

/* The private data this port sends for queue qid (a REQ, REP or, with
 * reason, a REJ): its shape and, on RC, the rx queue's credit word. */
static void
pdata_fill(const struct qp_port *qport, uint16_t qid, enum qp_cm_reason reason,
	   struct qp_cm_pdata *pd)
{
	const struct qpio_port *port = qport->port;
	const struct qp_rxq *rxq = qid < port->nb_rxq ? port->rxq[qid] : NULL;

	memset(pd, 0, sizeof(*pd));
	pd->magic = rte_cpu_to_be_32(QP_CM_MAGIC);
	pd->version = QP_CM_VERSION;
	pd->transport = (uint8_t)qport->transport;
	pd->queue = rte_cpu_to_be_16(qid);
	pd->nb_queues = rte_cpu_to_be_16(port->nb_rxq);
	pd->reason = rte_cpu_to_be_16((uint16_t)reason);
	pd->max_rx_pkt_len = rte_cpu_to_be_32(port->conf.max_rx_pkt_len);
	if (rxq != NULL)
		pd->rx_desc = rte_cpu_to_be_32(rxq->nb_desc);
	if (qport->transport == QP_PORT_RC && rxq != NULL) {
		pd->credit_rkey =
			rte_cpu_to_be_32(qpio_mr_rkey(qport->credit_mr));
		pd->credit_addr =
			rte_cpu_to_be_64((uintptr_t)qport->credit_area +
					 (uint64_t)qid * QP_CREDIT_STRIDE);
	}
}

/* Check the peer's private data against this port; host order into out. */
static enum qp_cm_reason
pdata_check(const struct qp_port *qport, const uint8_t *data, uint8_t len,
	    struct qp_cm_pdata *out)
{
	const struct qpio_port *port = qport->port;
	struct qp_cm_pdata pd;

	if (len < sizeof(pd))
		return QP_CM_BAD_MSG;
	memcpy(&pd, data, sizeof(pd));
	out->magic = rte_be_to_cpu_32(pd.magic);
	out->version = pd.version;
	out->transport = pd.transport;
	out->queue = rte_be_to_cpu_16(pd.queue);
	out->nb_queues = rte_be_to_cpu_16(pd.nb_queues);
	out->reason = rte_be_to_cpu_16(pd.reason);
	out->max_rx_pkt_len = rte_be_to_cpu_32(pd.max_rx_pkt_len);
	out->rx_desc = rte_be_to_cpu_32(pd.rx_desc);
	out->credit_rkey = rte_be_to_cpu_32(pd.credit_rkey);
	out->credit_addr = rte_be_to_cpu_64(pd.credit_addr);
	if (out->magic != QP_CM_MAGIC || out->version != QP_CM_VERSION)
		return QP_CM_BAD_MSG;
	if (out->transport != qport->transport ||
	    out->nb_queues != port->nb_rxq || out->queue >= port->nb_rxq ||
	    out->max_rx_pkt_len != port->conf.max_rx_pkt_len ||
	    out->rx_desc == 0)
		return QP_CM_MISMATCH;
	return QP_CM_OK;
}

/* Raise or drop the link of both directions of a queue (control thread,
 * release: what was staged before is seen with the word). */
static void
link_store(struct qp_rxq *rxq, struct qp_txq *txq, uint32_t v)
{
	qp_link_publish(&rxq->link.word, v);
	qp_link_publish(&txq->link.word, v);
}

/* Move a queue's QP to RESET (any state may) and clear its credit word,
 * so a new peer never reads the old link's count. */
static void
queue_qp_reset(struct qp_port *qport, uint16_t qid)
{
	struct qpio_port *port = qport->port;
	struct qp_rxq *rxq = port->rxq[qid];
	struct qpio_qp_attr a = { .qp_state = QPIO_QPS_RESET };

	if (qpio_qp_state(rxq->qp) != QPIO_QPS_RESET &&
	    qpio_qp_modify(rxq->qp, &a, QPIO_QP_STATE) < 0)
		QP_LOG(ERR, "port %s: queue %u: QP 0x%x to RESET failed",
		       port->name, qid, qpio_qp_num(rxq->qp));
	qp_credit_clear(qport, qid);
}

/* Destroy the lib/cm id of a queue, if it has one. */
static void
queue_id_drop(struct qp_cm_queue *cmq)
{
	if (cmq->id != NULL)
		qpio_cm_id_destroy(cmq->id);
	cmq->id = NULL;
}

/* A connection attempt of qid ended without a link. */
static void
queue_failed(struct qp_cm *cm, uint16_t qid, const char *what, int status)
{
	struct qp_cm_queue *cmq = &cm->queue[qid];

	cm->failures++;
	if (!cmq->fail_logged)
		QP_LOG(NOTICE, "port %s: queue %u: %s %s%s%s: %s; %s",
		       cm->qport->port->name, qid, what,
		       cm->host[0] ? cm->host : "*", ":", cm->service,
		       rte_strerror(-status), cm->listen ?
		       "waiting for the next request" : "trying again");
	cmq->fail_logged = 1;
	queue_id_drop(cmq);
	queue_qp_reset(cm->qport, qid);
	cmq->state = cmq->used && !cm->reconnect ? QCM_DEAD : QCM_IDLE;
	cmq->next_try_ms = now_ms() + QP_CM_RETRY_MS;
}

/* Connect side: start a connection of queue qid to the listener. */
static void
dial(struct qp_cm *cm, uint16_t qid)
{
	struct qp_port *qport = cm->qport;
	struct qp_cm_queue *cmq = &cm->queue[qid];
	struct qpio_cm_conn_param param;
	struct qp_cm_pdata pd;

	pdata_fill(qport, qid, QP_CM_OK, &pd);
	memset(&param, 0, sizeof(param));
	param.private_data = &pd;
	param.private_data_len = sizeof(pd);
	param.qp_params = &cm->params;
	cmq->id = qpio_cm_connect(cm->ch, qport->port->txq[qid] != NULL ?
			((struct qp_txq *)qport->port->txq[qid])->qp : NULL,
			cm->host, cm->service, &param, NULL);
	if (cmq->id == NULL) {
		/* Checked at start: only resources fail here. */
		QP_LOG(ERR, "port %s: queue %u: connect to %s:%s: %s",
		       qport->port->name, qid, cm->host, cm->service,
		       rte_strerror(rte_errno));
		cmq->next_try_ms = now_ms() + QP_CM_RETRY_MS;
		return;
	}
	cmq->state = QCM_CONNECTING;
}

/* The queue whose connection is id, or -1 (an id already dropped). */
static int
queue_of(const struct qp_cm *cm, const struct qpio_cm_id *id)
{
	uint16_t i;

	for (i = 0; i < cm->qport->port->nb_rxq; i++)
		if (cm->queue[i].id == id)
			return i;
	return -1;
}

/* Listen side: a connection request for a queue; accepted when the
 * peer's shape matches and the queue is free, else rejected with why. */
static void
on_request(struct qp_cm *cm, const struct qpio_cm_event *ev)
{
	struct qp_port *qport = cm->qport;
	struct qpio_cm_conn_param param;
	struct qp_cm_pdata in, out;
	enum qp_cm_reason why;
	struct qp_cm_queue *cmq = NULL;
	int ret;

	why = pdata_check(qport, ev->private_data, ev->private_data_len, &in);
	if (why == QP_CM_OK) {
		cmq = &cm->queue[in.queue];
		if (cmq->state == QCM_DEAD)
			why = QP_CM_NO_RECONNECT;
		else if (cmq->state != QCM_IDLE)
			why = QP_CM_BUSY;
	}
	if (why != QP_CM_OK) {
		QP_LOG(NOTICE, "port %s: refused a connection for queue %u: "
		       "%s (here: %s, %u queues, max_rx_pkt_len %u)",
		       qport->port->name, in.queue, qp_cm_reason_str[why],
		       qp_transport_name(qport->transport),
		       qport->port->nb_rxq, qport->port->conf.max_rx_pkt_len);
		pdata_fill(qport, in.queue, why, &out);
		qpio_cm_reject(ev->id, &out, sizeof(out));
		qpio_cm_id_destroy(ev->id);
		cm->failures++;
		return;
	}
	pdata_fill(qport, in.queue, QP_CM_OK, &out);
	memset(&param, 0, sizeof(param));
	param.private_data = &out;
	param.private_data_len = sizeof(out);
	param.qp_params = &cm->params;
	cmq->id = ev->id;
	cmq->state = QCM_CONNECTING;
	ret = qpio_cm_accept(ev->id, ((struct qp_txq *)
			     qport->port->txq[in.queue])->qp, &param);
	if (ret < 0)
		queue_failed(cm, in.queue, "accepting from", ret);
}

/* Stage the peer of txq's next link (its credit word and receive count
 * from in; UD: ah and remote_qpn, else ah NULL) for the sending lcore,
 * which takes it when its burst first sees the raised link word
 * (qp_cm_burst.c). Before link_store(), whose release orders it before
 * the word. */
static void
link_stage(struct qp_txq *txq, const struct qp_cm_pdata *in,
	   struct qpio_ah *ah, uint32_t remote_qpn)
{
	txq->stage.credit_addr = in->credit_addr;
	txq->stage.credit_rkey = in->credit_rkey;
	txq->stage.nb_desc = in->rx_desc;
	if (ah != NULL) {
		txq->stage.ah = ah;
		txq->stage.remote_qpn = remote_qpn;
	}
}

/* ESTABLISHED: stage the peer for the sending lcore, raise the link. */
static void
on_established(struct qp_cm *cm, uint16_t qid, const struct qpio_cm_event *ev)
{
	struct qp_port *qport = cm->qport;
	struct qpio_port *port = qport->port;
	struct qp_rxq *rxq = port->rxq[qid];
	struct qp_txq *txq = port->txq[qid];
	struct qp_cm_queue *cmq = &cm->queue[qid];
	struct qpio_ah *ah = NULL;
	struct qp_cm_pdata in;
	enum qp_cm_reason why;

	why = pdata_check(qport, ev->private_data, ev->private_data_len, &in);
	if (why == QP_CM_OK && in.queue != qid)
		why = QP_CM_MISMATCH;
	if (why != QP_CM_OK) {
		QP_LOG(ERR, "port %s: queue %u: the peer answered: %s",
		       port->name, qid, qp_cm_reason_str[why]);
		qpio_cm_disconnect(cmq->id);
		queue_failed(cm, qid, "connection with", -EPROTO);
		return;
	}
	if (qport->transport == QP_PORT_UD) {
		/* lib/cm's AH (ev->ah) goes with its id; the queue keeps one
		 * of its own with the same address vector (on ibv devices
		 * the route's GID index, not params.sgid_index). */
		ah = qpio_ah_create(qport->pd, &ev->ah_attr);
		if (ah == NULL) {
			QP_LOG(ERR, "port %s: queue %u: address handle: %s",
			       port->name, qid, rte_strerror(rte_errno));
			qpio_cm_disconnect(cmq->id);
			queue_failed(cm, qid, "connection with", -rte_errno);
			return;
		}
		if (cmq->nb_ah == QP_CM_AHS) {
			qpio_ah_destroy(cmq->ah[0]);
			memmove(cmq->ah, cmq->ah + 1,
				(QP_CM_AHS - 1) * sizeof(cmq->ah[0]));
			cmq->nb_ah--;
		}
		cmq->ah[cmq->nb_ah++] = ah;
	}
	link_stage(txq, &in, ah, ev->peer.qpn);
	cmq->state = QCM_UP;
	cmq->used = 1;
	cmq->fail_logged = 0;
	cmq->gen++;
	cm->link_ups++;
	/* The receives go up with the link when the queue is ours (the
	 * first link, or a drained one): "link up" then means the peer's
	 * frames find receives, on UD too. */
	if (qp_link_read(&rxq->link.ack) == rxq->link.word) {
		qp_cm_rx_prepare(rxq);
		rxq->cm_ready = QP_LINK_UP | cmq->gen;
	}
	link_store(rxq, txq, QP_LINK_UP | cmq->gen);
	QP_LOG(INFO, "port %s: queue %u: link up with QP 0x%x of %s (%s, "
	       "%u receives there)", port->name, qid, ev->peer.qpn,
	       ev->peer.dev_name, qp_transport_name(qport->transport),
	       in.rx_desc);
}

/* One lib/cm event of the port's channel. */
static void
on_event(struct qp_cm *cm, const struct qpio_cm_event *ev)
{
	struct qpio_port *port = cm->qport->port;
	struct qp_cm_queue *cmq;
	int qid;

	if (ev->type == QPIO_CM_EVENT_CONNECT_REQUEST) {
		on_request(cm, ev);
		return;
	}
	qid = queue_of(cm, ev->id);
	if (qid < 0)
		return;    /* an id already dropped */
	cmq = &cm->queue[qid];
	switch (ev->type) {
	case QPIO_CM_EVENT_ESTABLISHED:
		on_established(cm, (uint16_t)qid, ev);
		break;
	case QPIO_CM_EVENT_DISCONNECTED:
		queue_id_drop(cmq);
		if (cmq->state != QCM_UP) {
			queue_failed(cm, (uint16_t)qid, "connection with",
				     ev->status ? ev->status : -ECONNRESET);
			break;
		}
		/* lib/cm moved the QP to ERR: the datapath reaps the
		 * flushes, then acknowledges the new generation. */
		cmq->gen++;
		cmq->state = QCM_DRAIN;
		cmq->drain_end_ms = now_ms() + QP_CM_DRAIN_MS;
		cm->link_downs++;
		link_store(port->rxq[qid], port->txq[qid], cmq->gen);
		QP_LOG(NOTICE, "port %s: queue %u: link down: the peer %s "
		       "(%s); %s", port->name, qid, ev->status == 0 ?
		       "disconnected" : "is gone", ev->status == 0 ? "orderly" :
		       rte_strerror(-ev->status), cm->reconnect ?
		       "reconnecting once the queue is drained" :
		       "it stays down (reconnect=0)");
		break;
	case QPIO_CM_EVENT_REJECTED: {
		struct qp_cm_pdata in;

		if (pdata_check(cm->qport, ev->private_data,
				ev->private_data_len, &in) == QP_CM_BAD_MSG)
			in.reason = QP_CM_BAD_MSG;
		if (in.reason == QP_CM_MISMATCH || in.reason == QP_CM_BAD_MSG ||
		    in.reason == QP_CM_NO_RECONNECT) {
			QP_LOG(ERR, "port %s: queue %u: the listener at %s:%s "
			       "refused: %s; the link stays down (same qp=, "
			       "queue count and max_rx_pkt_len on both ends)",
			       port->name, qid, cm->host, cm->service,
			       qp_cm_reason_str[in.reason < RTE_DIM(
				       qp_cm_reason_str) ? in.reason : 1]);
			cm->failures++;
			queue_id_drop(cmq);
			queue_qp_reset(cm->qport, (uint16_t)qid);
			cmq->state = QCM_DEAD;
			break;
		}
		queue_failed(cm, (uint16_t)qid, "connection refused by",
			     ev->status);
		break;
	}
	case QPIO_CM_EVENT_UNREACHABLE:
		queue_failed(cm, (uint16_t)qid, "no listener at", ev->status);
		break;
	case QPIO_CM_EVENT_CONNECT_ERROR:
		queue_failed(cm, (uint16_t)qid, "handshake with", ev->status);
		break;
	default:
		break;
	}
}

/* Queues waiting for the datapath, and the connect side's dialling. */
static void
progress(struct qp_cm *cm)
{
	struct qpio_port *port = cm->qport->port;
	uint64_t now = now_ms();
	uint16_t i;

	for (i = 0; i < port->nb_rxq; i++) {
		struct qp_cm_queue *cmq = &cm->queue[i];
		struct qp_rxq *rxq = port->rxq[i];
		struct qp_txq *txq = port->txq[i];

		if (cmq->state == QCM_DRAIN) {
			int acked = qp_link_read(&rxq->link.ack) == cmq->gen &&
				    qp_link_read(&txq->link.ack) == cmq->gen;

			if (!acked && now < cmq->drain_end_ms)
				continue;
			if (!acked)
				QP_LOG(NOTICE, "port %s: queue %u: not drained "
				       "by the application's bursts within %u "
				       "ms (poll rx and tx of the queue, an "
				       "empty tx burst will do); its QP is "
				       "reset now", port->name, i,
				       QP_CM_DRAIN_MS);
			queue_qp_reset(cm->qport, i);
			cmq->state = cm->reconnect ? QCM_IDLE : QCM_DEAD;
			cmq->next_try_ms = now;
		}
		if (cmq->state == QCM_IDLE && !cm->listen &&
		    now >= cmq->next_try_ms)
			dial(cm, i);
	}
}

/* The port's control thread ("qpcm-<port>"): lib/cm events, drains and
 * dialling, every QP_CM_TICK_MS, until qp_cm_stop(). */
static void *
cm_thread(void *arg)
{
	struct qp_cm *cm = arg;
	struct pollfd pfd = { .fd = qpio_cm_channel_fd(cm->ch),
			      .events = POLLIN };
	struct qpio_cm_event ev;

	while (!qp_link_read(&cm->stop)) {
		poll(&pfd, 1, QP_CM_TICK_MS);
		while (qpio_cm_poll(cm->ch, &ev) == 1)
			on_event(cm, &ev);
		progress(cm);
	}
	return NULL;
}

/* Port start of a connected port (the QPs in RESET): every queue down
 * and the control thread's, then listen or check the connect address,
 * and start the control thread. */
int
qp_cm_start(struct qp_port *qport)
{
	struct qp_cm *cm = qport->cm;
	struct qpio_port *port = qport->port;
	char name[RTE_MAX_THREAD_NAME_LEN];
	uint16_t i;
	int ret;

	memset(cm->queue, 0, sizeof(cm->queue));
	for (i = 0; i < port->nb_rxq; i++) {
		struct qp_rxq *rxq = port->rxq[i];
		struct qp_txq *txq = port->txq[i];

		/* Down, generation 0, and the control thread's. */
		rxq->link.word = rxq->link.ack = rxq->link.seen = 0;
		rxq->cm_ready = 0;
		txq->link.word = txq->link.ack = txq->link.seen = 0;
		txq->stage.ah = NULL;
		qp_credit_rxq_start(qport, rxq);
	}
	cm->stop = 0;
	cm->ch = qpio_cm_channel_create();
	if (cm->ch == NULL)
		return -rte_errno;
	if (cm->listen) {
		cm->listen_id = qpio_cm_listen(cm->ch, qport->dev,
				cm->host[0] ? cm->host : NULL, cm->service,
				NULL);
		if (cm->listen_id == NULL) {
			ret = -rte_errno;
			QP_LOG(ERR, "port %s: listen=%s:%s: %s", port->name,
			       cm->host[0] ? cm->host : "*", cm->service,
			       rte_strerror(-ret));
			goto fail;
		}
	} else {
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
		int gai = getaddrinfo(cm->host, cm->service, &hints, &res);

		if (gai != 0) {
			QP_LOG(ERR, "port %s: connect=%s:%s: %s", port->name,
			       cm->host, cm->service, gai_strerror(gai));
			ret = -EINVAL;
			goto fail;
		}
		freeaddrinfo(res);
	}
	/* Thread names are short: "qpcm-" and the port's first chars. */
	snprintf(name, sizeof(name), "qpcm-%.10s", port->name);
	ret = -rte_ctrl_thread_create(&cm->thread, name, NULL, cm_thread, cm);
	if (ret < 0) {
		QP_LOG(ERR, "port %s: control thread: %s", port->name,
		       rte_strerror(-ret));
		goto fail;
	}
	cm->thread_on = 1;
	QP_LOG(INFO, "port %s: %s %s:%s (%u queue pairs, reconnect=%u)",
	       port->name, cm->listen ? "listening on" : "connecting to",
	       cm->host[0] ? cm->host : "*", cm->service, port->nb_rxq,
	       cm->reconnect);
	return 0;
fail:
	if (cm->listen_id != NULL)
		qpio_cm_id_destroy(cm->listen_id);
	cm->listen_id = NULL;
	qpio_cm_channel_destroy(cm->ch);
	cm->ch = NULL;
	return ret;
}

/* Port stop (the datapath has stopped): end every connection with a
 * disconnect message, then the channel; the QPs go down with the port. */
void
qp_cm_stop(struct qp_port *qport)
{
	struct qp_cm *cm = qport->cm;
	uint16_t i;

	if (cm == NULL || cm->ch == NULL)
		return;
	if (cm->thread_on) {
		qp_link_publish(&cm->stop, 1);
		pthread_join(cm->thread, NULL);
		cm->thread_on = 0;
	}
	for (i = 0; i < qport->port->nb_rxq; i++) {
		struct qp_cm_queue *cmq = &cm->queue[i];
		struct qp_txq *txq = qport->port->txq[i];
		uint64_t end = rte_get_timer_cycles() +
			       QP_CM_STOP_DRAIN_MS * rte_get_timer_hz() / 1000;

		/* An orderly stop: frames posted before it still reach the
		 * peer (their completions come back first), then the
		 * disconnect. The data path has stopped; the queue is ours. */
		while (cmq->state == QCM_UP && txq->head != txq->tail &&
		       qpio_qp_state(txq->qp) == QPIO_QPS_RTS &&
		       rte_get_timer_cycles() < end)
			qp_txq_reclaim(txq, 0);
		if (cmq->state == QCM_UP && txq->head != txq->tail)
			QP_LOG(NOTICE, "port %s: queue %u: %u sends not "
			       "completed within %u ms of stop: flushed",
			       qport->port->name, i, txq->head - txq->tail,
			       QP_CM_STOP_DRAIN_MS);
		if (cmq->id != NULL && cmq->state == QCM_UP)
			qpio_cm_disconnect(cmq->id);
		queue_id_drop(cmq);
		/* The AHs are the control thread's, not the queue's. */
		txq->ah = NULL;
		txq->stage.ah = NULL;
		while (cmq->nb_ah > 0)
			qpio_ah_destroy(cmq->ah[--cmq->nb_ah]);
	}
	if (cm->listen_id != NULL)
		qpio_cm_id_destroy(cm->listen_id);
	cm->listen_id = NULL;
	qpio_cm_channel_destroy(cm->ch);
	cm->ch = NULL;
}

/* Whether every queue's link is up (qpio_port_link_get()). */
int
qp_cm_link_up(const struct qp_port *qport)
{
	const struct qpio_port *port = qport->port;
	uint16_t i;

	for (i = 0; i < port->nb_rxq; i++) {
		const struct qp_txq *txq = port->txq[i];

		if (!(qp_link_read(&txq->link.word) & QP_LINK_UP))
			return 0;
	}
	return port->nb_rxq > 0;
}

/* The cm_link_ups, cm_link_downs and cm_connect_failures xstats (0 on a
 * port that is not connected). */
void
qp_cm_xstats(const struct qp_port *qport, uint64_t *ups, uint64_t *downs,
	     uint64_t *failures)
{
	const struct qp_cm *cm = qport->cm;

	*ups = cm != NULL ? cm->link_ups : 0;
	*downs = cm != NULL ? cm->link_downs : 0;
	*failures = cm != NULL ? cm->failures : 0;
}
