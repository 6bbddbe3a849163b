/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-perf --perftest -R: perftest's rdma_cm mode, so that an unmodified
 * ib_send_bw -R, ib_write_lat -R, ... is the peer. The facts come from
 * perftest 4.5-0.17 (perftest_communication.c: create_comm_struct(),
 * rdma_client_connect(), rdma_server_connect(), ctx_xchg_data_rdma(),
 * rdma_write_keys(); create_rdma_cm_connection() and the tools' main()):
 *
 *   the exchange   an RC QP of its own, connected by rdma_cm (port space
 *                  TCP, IPv4) to the server's port (-p); every message of
 *                  the TCP path (version, page and cache-line size, MTU,
 *                  keys, reports) is one SEND of exactly its length, the
 *                  client sending first. perftest keeps one receive of 56
 *                  bytes posted and waits for each send to complete.
 *   the keys       56 bytes, perftest's struct pingpong_dest with each
 *                  field big-endian: LID, OUT_READS, QPN, PSN, RKEY at 0,
 *                  4, 8, 12, 16; VADDR (64 bits) at 24; the GID's 16
 *                  bytes at 32; SRQN at 48, GID index at 52.
 *   the test QP    after one key exchange, connected by rdma_cm to the
 *                  same port (the perftest server listens there again;
 *                  its client tries 10 times, 100 ms apart); then one
 *                  more key exchange, and the tool goes on as without -R
 *                  but for the QP walk (rdma_cm did it). Its close is one
 *                  key exchange only.
 *   the end        the perftest client disconnects the test QP and waits
 *                  for DISCONNECTED; the perftest server disconnects it
 *                  and leaves. The exchange's connection ends when the
 *                  process does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "qpio_cm.h"
#include "perf_run.h"

#define CM_SLOTS 4              /* receives kept posted on the exchange QP */
#define CM_SLOT 64              /* bytes per slot; perftest's largest is 56 */
#define CM_SEND_ID UINT64_MAX   /* wr_id of the exchange's send */
#define CM_RETRY_US 100000      /* between connects, as perftest's client */
#define CM_CLOSE_SEC 3.0        /* teardown: the DREQ/DREP exchange */

enum cm_conn { CM_COMM, CM_DATA, CM_NCONN };
enum cm_state { CM_NONE, CM_CONNECTING, CM_UP, CM_DOWN };

struct perf_cm {
	struct qpio_cm_channel *ch;
	struct qpio_cm_id *listen;      /**< server: the one listener */
	struct qpio_cm_id *req;         /**< server: a request not yet taken */
	struct qpio_cm_id *id[CM_NCONN];
	enum cm_state state[CM_NCONN];
	enum qpio_cm_event_type why[CM_NCONN]; /**< the event that ended it */
	int status[CM_NCONN];
	struct qpio_cq *cq;             /**< the exchange QP's */
	struct qpio_qp *qp;
	struct qpio_mr *mr;
	uint8_t *buf;                   /**< CM_SLOTS receive slots, a send slot */
	struct qpio_wc rx;              /**< the peer's message, not yet taken */
	int have_rx;
	int rx_extra;                   /**< a second one came in the same turn */
	int sent;                       /**< the send of this turn completed */
	enum qpio_wc_status wc_err;     /**< the first failed completion */
};

static const char *const conn_name[CM_NCONN] = {
	"the exchange's connection", "the test QP's connection",
};

static const char *
peer_tool(const struct perf_ctx *x)
{
	return perf_pt_tool(x->o);
}

static int
cm_fail(const char *what, int err)
{
	fprintf(stderr, "qpio-perf: -R: %s: %s\n", what, strerror(err));
	return PERF_EXIT_FAIL;
}

/* Which of our connections an id is, or -1. */
static int
conn_of(const struct perf_cm *cm, const struct qpio_cm_id *id)
{
	int k;

	for (k = 0; k < CM_NCONN; k++)
		if (id != NULL && cm->id[k] == id)
			return k;
	return -1;
}

/* Take every event the channel holds. A request arriving while one is
 * waiting, or while none is expected, is refused. */
static void
cm_pump(struct perf_cm *cm)
{
	struct qpio_cm_event ev;
	int k;

	while (qpio_cm_poll(cm->ch, &ev) == 1) {
		if (ev.type == QPIO_CM_EVENT_CONNECT_REQUEST) {
			if (cm->req == NULL && cm->id[CM_DATA] == NULL) {
				cm->req = ev.id;
			} else {
				qpio_cm_reject(ev.id, NULL, 0);
				qpio_cm_id_destroy(ev.id);
			}
			continue;
		}
		k = conn_of(cm, ev.id);
		if (k < 0)
			continue;
		if (ev.type == QPIO_CM_EVENT_ESTABLISHED) {
			cm->state[k] = CM_UP;
		} else {
			cm->state[k] = CM_DOWN;
			cm->why[k] = ev.type;
			cm->status[k] = ev.status;
		}
	}
}

/* A sentence for how connection k ended. */
static void
conn_ended(const struct perf_ctx *x, int k)
{
	const struct perf_cm *cm = x->cm;

	fprintf(stderr, "qpio-perf: -R: %s with %s: %s (%s)\n", conn_name[k],
		peer_tool(x), qpio_cm_event_str(cm->why[k]),
		cm->status[k] ? strerror(-cm->status[k]) : "orderly");
}

/* One turn of a wait: the channel, the exchange's CQ (both run a soft
 * wire device's progress step), the test end's CQ once it exists. What
 * the exchange's CQ gives is noted in cm (the send done, the peer's
 * message kept for cm_recv()).
 * @return 1 when something moved, 0 when idle, -1 when the run failed. */
static int
cm_turn(struct perf_ctx *x)
{
	struct perf_end *e = &x->end[x->local];
	struct perf_cm *cm = x->cm;
	struct qpio_wc wc;
	int n, nwc;

	cm_pump(cm);
	nwc = cm->cq != NULL ? qpio_cq_poll(cm->cq, &wc, 1) : 0;
	if (nwc > 0) {
		if (wc.status != QPIO_WC_SUCCESS) {
			if (cm->wc_err == QPIO_WC_SUCCESS)
				cm->wc_err = wc.status;
		} else if (wc.wr_id == CM_SEND_ID) {
			cm->sent = 1;
		} else if (cm->have_rx) {
			cm->rx_extra = 1;
		} else {
			cm->rx = wc;
			cm->have_rx = 1;
		}
	}
	if (e->cq != NULL) {
		n = perf_end_poll(e);
		if (n < 0)
			return -1;
		return nwc > 0 || n > 0;
	}
	if (nwc == 0)
		usleep(100);
	return nwc > 0;
}

static uint64_t
deadline(const struct perf_ctx *x, double sec)
{
	return sec >= 0 ? rte_rdtsc() + (uint64_t)(sec * (double)x->hz) : 0;
}

/* Wait until connection k is no longer CONNECTING. @return 0 (UP),
 * -ETIMEDOUT, or the event's status (or -ECONNRESET) when it failed. */
static int
cm_wait_conn(struct perf_ctx *x, int k, double sec)
{
	struct perf_cm *cm = x->cm;
	uint64_t end = deadline(x, sec);

	while (cm->state[k] == CM_CONNECTING) {
		if (cm_turn(x) < 0)
			return -ECANCELED;
		if (sec >= 0 && rte_rdtsc() > end)
			return -ETIMEDOUT;
	}
	if (cm->state[k] == CM_UP)
		return 0;
	return cm->status[k] != 0 ? cm->status[k] : -ECONNRESET;
}

/* Server: wait for a request and walk qp to RTS towards it (accept),
 * then for its ESTABLISHED. post: called between the accept and the
 * wait (the exchange's receives). @return 0 or PERF_EXIT_FAIL. */
static int
cm_accept(struct perf_ctx *x, int k, struct qpio_qp *qp,
	  const struct qpio_cm_qp_params *qpp, int (*post)(struct perf_ctx *))
{
	struct perf_cm *cm = x->cm;
	struct qpio_cm_conn_param cp = { .qp_params = qpp };
	uint64_t end = deadline(x, x->o->timeout);
	int ret;

	while (cm->req == NULL) {
		if (cm_turn(x) < 0)
			return PERF_EXIT_FAIL;
		if (cm->state[CM_COMM] == CM_DOWN && k == CM_DATA) {
			conn_ended(x, CM_COMM);
			return PERF_EXIT_FAIL;
		}
		if (rte_rdtsc() > end) {
			fprintf(stderr, "qpio-perf: -R: no connection request "
				"for %s from %s within --timeout %g s\n",
				conn_name[k], peer_tool(x), x->o->timeout);
			return PERF_EXIT_FAIL;
		}
	}
	cm->id[k] = cm->req;
	cm->req = NULL;
	cm->state[k] = CM_CONNECTING;
	ret = qpio_cm_accept(cm->id[k], qp, &cp);
	if (ret != 0) {
		fprintf(stderr, "qpio-perf: -R: accepting %s from %s: %s (is "
			"it an RC request? perftest -R connects RC)\n",
			conn_name[k], peer_tool(x), strerror(-ret));
		return PERF_EXIT_FAIL;
	}
	if (post != NULL && post(x) != 0)
		return PERF_EXIT_FAIL;
	ret = cm_wait_conn(x, k, x->o->timeout);
	if (ret != 0) {
		fprintf(stderr, "qpio-perf: -R: %s from %s did not come up: "
			"%s\n", conn_name[k], peer_tool(x), strerror(-ret));
		return PERF_EXIT_FAIL;
	}
	return 0;
}

/* Client: connect qp (in RESET) to the server's port, again every 100 ms
 * while nobody listens there yet, within --timeout. */
static int
cm_connect(struct perf_ctx *x, int k, struct qpio_qp *qp,
	   const struct qpio_cm_qp_params *qpp)
{
	const struct perf_opts *o = x->o;
	struct perf_cm *cm = x->cm;
	struct qpio_cm_conn_param cp = { .qp_params = qpp };
	uint64_t end = deadline(x, o->timeout);
	char port[8];
	int ret = -ETIMEDOUT;

	snprintf(port, sizeof(port), "%u", o->port);
	for (;;) {
		double left = (double)(int64_t)(end - rte_rdtsc()) /
			(double)x->hz;

		if (left <= 0)
			break;
		cp.timeout_ms = (uint32_t)RTE_MIN(left * 1000.0 + 1, 2000.0);
		cm->id[k] = qpio_cm_connect(cm->ch, qp, o->host, port, &cp, NULL);
		if (cm->id[k] == NULL) {
			fprintf(stderr, "qpio-perf: -R: connecting %s to %s port "
				"%s: %s\n", conn_name[k], o->host, port,
				strerror(rte_errno));
			return PERF_EXIT_FAIL;
		}
		cm->state[k] = CM_CONNECTING;
		ret = cm_wait_conn(x, k, -1);
		if (ret == 0)
			return 0;
		if (ret == -ECANCELED)
			break;
		/* refused (nobody listens yet), or no answer: again; the
		 * QP is back in RESET */
		qpio_cm_id_destroy(cm->id[k]);
		cm->id[k] = NULL;
		cm->state[k] = CM_NONE;
		if (ret != -ECONNREFUSED && ret != -ETIMEDOUT)
			break;
		usleep(CM_RETRY_US);
	}
	fprintf(stderr, "qpio-perf: -R: %s to %s port %s (%s) did not come "
		"up within --timeout %g s: %s\n", conn_name[k], o->host, port,
		peer_tool(x), o->timeout, strerror(-ret));
	return PERF_EXIT_FAIL;
}

/* Post the exchange's receive slot i. */
static int
cm_post_recv(struct perf_ctx *x, unsigned int i)
{
	struct perf_cm *cm = x->cm;
	struct qpio_sge sge = {
		.addr = (uintptr_t)(cm->buf + (size_t)i * CM_SLOT),
		.length = CM_SLOT,
		.lkey = qpio_mr_lkey(cm->mr),
	};
	int err = 0;

	if (qpio_qp_post_recv_sge(cm->qp, &sge, 1, i, &err) != 1)
		return cm_fail("posting the exchange's receive", -err);
	return 0;
}

static int
cm_post_all(struct perf_ctx *x)
{
	unsigned int i;

	for (i = 0; i < CM_SLOTS; i++)
		if (cm_post_recv(x, i) != 0)
			return PERF_EXIT_FAIL;
	return 0;
}

/* The exchange QP's local side: perftest's comm QP is RC with one send
 * and one receive, rnr_retry 7. */
static void
cm_params(const struct perf_ctx *x, struct qpio_cm_qp_params *p)
{
	const struct perf_end *e = &x->end[x->local];

	qpio_cm_qp_params_init(p);
	p->sgid_index = e->gid_index;
	p->hop_limit = 0xff;
}

int
perf_cm_open(struct perf_ctx *x)
{
	const struct perf_opts *o = x->o;
	struct perf_end *e = &x->end[x->local];
	struct qpio_qp_init_attr ia;
	struct qpio_cm_qp_params p;
	struct perf_cm *cm;
	char port[8];

	cm = calloc(1, sizeof(*cm));
	if (cm == NULL)
		return cm_fail("state", ENOMEM);
	x->cm = cm;
	cm->ch = qpio_cm_channel_create();
	if (cm->ch == NULL)
		return cm_fail("cm channel", rte_errno);
	cm->cq = qpio_cq_create(e->dev, 4 * CM_SLOTS, (int)rte_socket_id());
	if (cm->cq == NULL)
		return cm_fail("the exchange's CQ", rte_errno);
	cm->buf = rte_zmalloc("qpio_perf_cm", (CM_SLOTS + 1) * CM_SLOT, 64);
	if (cm->buf == NULL)
		return cm_fail("the exchange's buffer", ENOMEM);
	cm->mr = qpio_mr_reg(e->pd, cm->buf, (CM_SLOTS + 1) * CM_SLOT,
			     QPIO_ACCESS_LOCAL_WRITE);
	if (cm->mr == NULL)
		return cm_fail("the exchange's MR", rte_errno);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = QPIO_QPT_RC;
	ia.send_cq = cm->cq;
	ia.recv_cq = cm->cq;
	ia.cap.max_send_wr = 2;
	ia.cap.max_recv_wr = CM_SLOTS;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	cm->qp = qpio_qp_create(e->pd, &ia);
	if (cm->qp == NULL)
		return cm_fail("the exchange's QP", rte_errno);
	cm_params(x, &p);
	if (o->role == PERF_ROLE_CLIENT) {
		if (cm_connect(x, CM_COMM, cm->qp, &p) != 0)
			return PERF_EXIT_FAIL;
		return cm_post_all(x);
	}
	snprintf(port, sizeof(port), "%u", o->port);
	cm->listen = qpio_cm_listen(cm->ch, e->dev, NULL, port, NULL);
	if (cm->listen == NULL) {
		fprintf(stderr, "qpio-perf: -R: listening on rdma_cm port %s: %s\n",
			port, strerror(rte_errno));
		return PERF_EXIT_FAIL;
	}
	printf(" qpio-perf server listening on rdma_cm port %u\n",
	       qpio_cm_id_port(cm->listen));
	fflush(stdout);
	return cm_accept(x, CM_COMM, cm->qp, &p, cm_post_all);
}

/* Fail with the reason the exchange cannot go on, or 0. */
static int
cm_broken(const struct perf_cm *cm, uint64_t end)
{
	if (cm->wc_err != QPIO_WC_SUCCESS)
		return -EIO;
	if (cm->rx_extra)
		return -EPROTO;
	if (cm->state[CM_COMM] == CM_DOWN)
		return -ECONNRESET;
	if (end != 0 && rte_rdtsc() > end)
		return -ETIMEDOUT;
	return 0;
}

/* Turn until *flag (set by cm_turn()) is set, or the exchange broke. */
static int
cm_wait_flag(struct perf_ctx *x, const int *flag, uint64_t end)
{
	int ret;

	while (!*flag) {
		if (cm_turn(x) < 0)
			return -ECANCELED;
		ret = cm_broken(x->cm, end);
		if (ret != 0)
			return ret;
	}
	return 0;
}

/* Send len bytes on the exchange QP and wait for the send to complete. */
static int
cm_send(struct perf_ctx *x, const void *mine, size_t len, uint64_t end)
{
	struct perf_cm *cm = x->cm;
	uint8_t *slot = cm->buf + (size_t)CM_SLOTS * CM_SLOT;
	struct qpio_sge sge = {
		.addr = (uintptr_t)slot,
		.length = (uint32_t)len,
		.lkey = qpio_mr_lkey(cm->mr),
	};
	int err = 0;

	memcpy(slot, mine, len);
	cm->sent = 0;
	if (qpio_qp_post_send_sge(cm->qp, &sge, 1, CM_SEND_ID,
				  QPIO_SEND_SIGNALED, &err) != 1)
		return err != 0 ? err : -EIO;
	return cm_wait_flag(x, &cm->sent, end);
}

/* Wait for the peer's message of len bytes into peers. */
static int
cm_recv(struct perf_ctx *x, void *peers, size_t len, uint64_t end)
{
	struct perf_cm *cm = x->cm;
	struct qpio_wc *rx = &cm->rx;
	int ret;

	ret = cm_wait_flag(x, &cm->have_rx, end);
	if (ret != 0)
		return ret;
	cm->have_rx = 0;
	if (rx->opcode != QPIO_WC_RECV || rx->wr_id >= CM_SLOTS)
		return -EPROTO;
	if (rx->byte_len != len) {
		fprintf(stderr, "qpio-perf: -R: %s sent %u bytes where this "
			"exchange has %zu: the two tools are at different "
			"steps (another perftest version?)\n", peer_tool(x),
			rx->byte_len, len);
		return -EPROTO;
	}
	memcpy(peers, cm->buf + (size_t)rx->wr_id * CM_SLOT, len);
	return cm_post_recv(x, (unsigned int)rx->wr_id) == 0 ? 0 : -EIO;
}

int
perf_cm_xchg(struct perf_ctx *x, const void *mine, void *peers, size_t len,
	     double timeout)
{
	uint64_t end = deadline(x, timeout);
	int ret;

	if (len > CM_SLOT)
		return -EMSGSIZE;
	if (x->cm->state[CM_COMM] != CM_UP)
		return -ECONNRESET;
	if (x->o->role == PERF_ROLE_CLIENT) {
		ret = cm_send(x, mine, len, end);
		return ret != 0 ? ret : cm_recv(x, peers, len, end);
	}
	ret = cm_recv(x, peers, len, end);
	return ret != 0 ? ret : cm_send(x, mine, len, end);
}

const char *
perf_cm_strerror(const struct perf_ctx *x, int err)
{
	if (err == -ECONNRESET && x->cm != NULL &&
	    x->cm->state[CM_COMM] == CM_DOWN)
		return qpio_cm_event_str(x->cm->why[CM_COMM]);
	if (err == -EIO && x->cm != NULL)
		return qpio_wc_status_str(x->cm->wc_err);
	if (err == -EPROTO)
		return "the peer's messages are out of step (two in one turn, "
			"or not a receive)";
	if (err == -ECANCELED)
		return "the run failed meanwhile";
	return strerror(-err);
}

int
perf_cm_link(struct perf_ctx *x, enum qpio_mtu mtu)
{
	const struct perf_opts *o = x->o;
	struct perf_end *e = &x->end[x->local];
	struct qpio_device_attr da;
	struct qpio_cm_qp_params p;
	uint8_t rd;

	qpio_rdma_dev_query(e->dev, &da);
	cm_params(x, &p);
	/* The requester's REQ names the path MTU both ends use (IBA
	 * 12.7.2): ours, or as the listener the perftest client's, which
	 * is rdma_cm's (its netdev's), whatever -m says. */
	p.path_mtu = o->role == PERF_ROLE_CLIENT ? mtu : 0;
	p.access_flags = QPIO_ACCESS_LOCAL_WRITE | QPIO_ACCESS_REMOTE_WRITE |
		QPIO_ACCESS_REMOTE_READ;
	if (da.atomic_cap != QPIO_ATOMIC_NONE)
		p.access_flags |= QPIO_ACCESS_REMOTE_ATOMIC;
	/* perftest asks rdma_cm for out_reads both ways with READ and
	 * atomics, and for none otherwise; this end's depth is its own */
	rd = (o->test == PERF_READ || o->test == PERF_ATOMIC) ?
		RTE_MAX(e->out_reads, (uint8_t)1) : 1;
	p.max_rd_atomic = rd;
	p.max_dest_rd_atomic = rd;
	if (o->role == PERF_ROLE_CLIENT)
		return cm_connect(x, CM_DATA, e->qp[0].qp, &p);
	return cm_accept(x, CM_DATA, e->qp[0].qp, &p, NULL);
}

/* Wait until connection k is down, at most sec seconds. */
static void
cm_wait_down(struct perf_cm *cm, int k, double sec, uint64_t hz)
{
	uint64_t end = rte_rdtsc() + (uint64_t)(sec * (double)hz);
	struct qpio_wc wc;

	while (cm->state[k] == CM_UP && rte_rdtsc() < end) {
		cm_pump(cm);
		qpio_cq_poll(cm->cq, &wc, 1);
		usleep(1000);
	}
}

void
perf_cm_close(struct perf_ctx *x)
{
	struct perf_cm *cm = x->cm;

	if (cm == NULL)
		return;
	/* The test QP: the perftest client disconnects it and waits for
	 * the DREP, the perftest server disconnects it and leaves; wait a
	 * second for that DREQ, else send ours and wait for its DREP.
	 * The exchange's connection ends with the id (one DREQ), as
	 * perftest's ends with its process. */
	if (cm->ch != NULL && cm->cq != NULL) {
		cm_wait_down(cm, CM_DATA, 1.0, x->hz);
		if (cm->state[CM_DATA] == CM_UP &&
		    qpio_cm_disconnect(cm->id[CM_DATA]) == 0)
			cm_wait_down(cm, CM_DATA, CM_CLOSE_SEC, x->hz);
	}
	if (cm->ch != NULL)
		qpio_cm_channel_destroy(cm->ch);
	if (cm->qp != NULL)
		qpio_qp_destroy(cm->qp);
	if (cm->mr != NULL)
		qpio_mr_dereg(cm->mr);
	if (cm->cq != NULL)
		qpio_cq_destroy(cm->cq);
	rte_free(cm->buf);
	free(cm);
	x->cm = NULL;
}
