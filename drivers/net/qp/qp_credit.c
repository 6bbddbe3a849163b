/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Credit-based flow control of RC qp ports.
 *
 * An RC SEND that finds no receive posted gets an RNR NAK and the requester
 * retries after min_rnr_timer: the frame sits in the send queue, the device
 * model (or the wire) redoes the work, and a frame that is never received
 * is flushed at stop. A port should instead do what a full ethdev queue
 * does: take only what fits and leave the rest with the caller (tx-ownership).
 *
 * The receiver publishes, for each rx queue, a free-running count of the
 * receive WRs it has posted on its QP (rq_posted) in a 32-bit word of the
 * port's credit MR (local write, remote read). The sender (struct
 * qp_credit of its tx queue) keeps a free-running count of the SENDs it has posted (sends) and the last value
 * of the peer's word it has seen (peer_posted). Receives are consumed in
 * order, one per SEND, and the peer's count only grows, so when a SEND is
 * posted the peer has at least peer_posted - sends receives free for it:
 * that many frames may go. When fewer than low credits are left the
 * sender posts one signaled RDMA READ of the peer's word into its own
 * landing word; the READ's completion, reaped with the send completions,
 * refreshes peer_posted. One READ is outstanding at a time.
 *
 * This is a pull, like a READ of a remote producer index: it works on every
 * driver (soft, ibv/rxe, across hosts) and keeps the QP's send queue with
 * the sending lcore alone, since the receiver never posts on it. RNR stays
 * the fallback (rnr_retry 7), e.g. for a peer whose application stops
 * reposting; the device's RNR NAK count (qpio_qp_stats_get()) is reported
 * as tx_rnr_naks.
 */

#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "qp_private.h"

/* Allocate and register the port's credit words (probe): QP_CREDIT_STRIDE
 * bytes per queue, local write and remote read. */
int
qp_credit_init(struct qp_port *qport)
{
	size_t len = (size_t)QPIO_PORT_MAX_QUEUES * QP_CREDIT_STRIDE;

	qport->credit_area = rte_zmalloc("qp_credit", len, RTE_CACHE_LINE_SIZE);
	if (qport->credit_area == NULL)
		return -ENOMEM;
	qport->credit_mr = qpio_mr_reg(qport->pd, qport->credit_area, len,
				    QPIO_ACCESS_LOCAL_WRITE |
				    QPIO_ACCESS_REMOTE_READ);
	if (qport->credit_mr == NULL) {
		int ret = -rte_errno;

		QP_LOG(ERR, "port %s: registering the credit words: %s",
		       qport->port->name, rte_strerror(-ret));
		rte_free(qport->credit_area);
		qport->credit_area = NULL;
		return ret;
	}
	return 0;
}

/* Deregister and free the credit words (close). */
void
qp_credit_fini(struct qp_port *qport)
{
	if (qport->credit_mr != NULL && qpio_mr_dereg(qport->credit_mr) < 0)
		QP_LOG(ERR, "port %s: credit MR still in use",
		       qport->port->name);
	qport->credit_mr = NULL;
	rte_free(qport->credit_area);
	qport->credit_area = NULL;
}

/* Cache line `line` of queue qid's credit words: 0 the rx queue's posted
 * count, 1 the tx queue's READ landing word. */
static uint8_t *
credit_line(const struct qp_port *qport, uint16_t qid, unsigned int line)
{
	return qport->credit_area + (size_t)qid * QP_CREDIT_STRIDE +
	       line * RTE_CACHE_LINE_SIZE;
}

/* A new QP for rx queue rxq (before its receives are posted). */
void
qp_credit_rxq_start(struct qp_port *qport, struct qp_rxq *rxq)
{
	rxq->rq_posted = 0;
	rxq->credit = qport->transport == QP_PORT_RC ?
		(volatile uint32_t *)credit_line(qport, rxq->qid, 0) : NULL;
	qp_credit_publish(rxq);
}

/* Set rx queue qid's credit word to 0 (control path: a connected port's
 * queue between two links; release, as qp_credit_publish()). */
void
qp_credit_clear(struct qp_port *qport, uint16_t qid)
{
	__atomic_store_n((uint32_t *)credit_line(qport, qid, 0), 0,
			 __ATOMIC_RELEASE);
}

/* No credits until the next link (a new QP, or a stopped queue); no
 * READ outstanding. */
void
qp_credit_off(struct qp_credit *cr)
{
	cr->on = 0;
	cr->reading = 0;
}

/* The sender's state at a new link of tx queue qid: peer_posted
 * receives known, the peer's word at peer_addr (rkey peer_rkey); RC only
 * (on other transports the credits stay off). */
static void
credit_link(struct qp_credit *cr, const struct qp_port *qport, uint16_t qid,
	    uint32_t peer_posted, uint32_t peer_nb_desc, uint64_t peer_addr,
	    uint32_t peer_rkey)
{
	cr->peer_posted = peer_posted;
	cr->peer_nb_desc = peer_nb_desc;
	/* Ask again at half the peer's ring: the receiver reposts in groups
	 * of at most 32, so a READ then finds fresh receives. */
	cr->low = RTE_MAX(peer_nb_desc / 2, 1u);
	cr->landing = (volatile uint32_t *)credit_line(qport, qid, 1);
	*cr->landing = peer_posted;
	cr->lkey = qpio_mr_lkey(qport->credit_mr);
	cr->peer_addr = peer_addr;
	cr->peer_rkey = peer_rkey;
}

/* Tx queue qid's QP (new, INIT) is being connected to peer_rxq's: every
 * receive the peer has posted so far is a credit (control path, both ends
 * stopped from the data path's view). */
void
qp_credit_link(struct qp_credit *cr, const struct qp_port *qport,
	       uint16_t qid, const struct qp_port *peer,
	       const struct qp_rxq *peer_rxq)
{
	cr->sends = 0;
	cr->reading = 0;
	cr->on = qport->transport == QP_PORT_RC;
	if (!cr->on)
		return;
	credit_link(cr, qport, qid,
		    __atomic_load_n(peer_rxq->credit, __ATOMIC_ACQUIRE),
		    peer_rxq->nb_desc, (uintptr_t)peer_rxq->credit,
		    qpio_mr_rkey(peer->credit_mr));
}

/* Tx queue qid's QP is connected through lib/cm to a peer in another
 * process or host: its credit word is at peer_addr (rkey peer_rkey), read
 * from the connection's private data, and its receives are not known yet,
 * so the sender starts with no credit and reads the word at its first
 * burst (the sending lcore, at the link change; qp_cm_burst.c). */
void
qp_credit_link_remote(struct qp_credit *cr, const struct qp_port *qport,
		      uint16_t qid, uint64_t peer_addr, uint32_t peer_rkey,
		      uint32_t peer_nb_desc)
{
	cr->sends = 0;
	cr->reading = 0;
	cr->on = qport->transport == QP_PORT_RC;
	if (!cr->on)
		return;
	credit_link(cr, qport, qid, 0, peer_nb_desc, peer_addr, peer_rkey);
}

/* Post a READ of the peer's posted count if none is outstanding and the
 * send queue has a free slot. Sending lcore only. */
void
qp_credit_request(struct qp_txq *txq)
{
	struct qp_credit *cr = &txq->credit;
	struct qpio_send_wr wr;
	struct qpio_sge sge;
	int err;

	if (cr->reading || txq->head - txq->tail >= txq->nb_desc)
		return;
	sge.addr = (uintptr_t)cr->landing;
	sge.length = sizeof(uint32_t);
	sge.lkey = cr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = txq->head;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = QPIO_WR_RDMA_READ;
	wr.send_flags = QPIO_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = cr->peer_addr;
	wr.wr.rdma.rkey = cr->peer_rkey;
	txq->elts[txq->head & txq->mask] = NULL;
	if (qpio_qp_post_send(txq->qp, &wr, 1, &err) != 1)
		return;   /* the QP left RTS: the next burst returns 0 */
	cr->read_wr = txq->head;
	cr->reading = 1;
	txq->head++;
	qp_count(&txq->stats.credit_reads, 1);
}

/* The completion of the outstanding READ. A value that would give more
 * credits than the peer has receive WRs is not from the peer's word (a
 * torn or stale copy): it is ignored and the next burst asks again. */
void
qp_credit_read_done(struct qp_credit *cr, const struct qpio_wc *wc)
{
	uint32_t seen;

	cr->reading = 0;
	if (wc->status != QPIO_WC_SUCCESS)
		return;
	seen = __atomic_load_n(cr->landing, __ATOMIC_ACQUIRE);
	if ((int32_t)(seen - cr->peer_posted) > 0 &&
	    seen - cr->sends <= cr->peer_nb_desc)
		cr->peer_posted = seen;
}
