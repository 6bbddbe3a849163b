/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-cmatose: the message exchange of rdmacm-utils' ucmatose (RC) and,
 * with --ud, udaddy (UD), on any qpio device, connected by lib/cm. Its
 * options, ports and steps are theirs, so either end can be the
 * unmodified tool on a RoCE host (Linux rxe or hardware) and the other a
 * qpio soft device on the wire (the IB CM), or both qpio.
 *
 * RC (ucmatose, port 7471, RDMA_PS_TCP): the client posts COUNT receives
 * and connects; the server posts COUNT receives, accepts, SENDs COUNT
 * messages of SIZE bytes, waits for their completions, then for COUNT
 * messages from the client, and disconnects. The client answers with
 * COUNT SENDs once it has COUNT messages, and waits for the disconnect.
 *
 * UD (udaddy, port 7174, RDMA_PS_UDP; Q_Key 0x01234567, rdma_cm's): the
 * client SENDs COUNT messages WITH_IMM (its QPN) to the QPN and Q_Key of
 * the SIDR REP; the server waits for them, makes its AH from the first
 * one's GRH and QPN from its immediate data, and answers with COUNT
 * messages of its own, which the client waits for.
 *
 *   qpio-cmatose -l 0 --vdev net_af_packet0,iface=eth1 -- \
 *       --dev soft0,wire=net_af_packet0,ip=10.0.0.2 -s 10.0.0.1
 *   ucmatose -s 10.0.0.2        (with qpio-cmatose ... --dev ... alone)
 *
 * With -c N (the tools' --connections) there are N connections at once,
 * each with its QP, CQ and buffers, set up before any data moves; each
 * does the exchange above, the server disconnecting every one at the
 * end (RC).
 *
 * The message bytes are not checked: ucmatose and udaddy send what their
 * buffers hold. Counts, lengths, opcodes and (UD) the source QPN and the
 * immediate data are, and every completion must be a success.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include <qpio_cm.h>
#include <qpio_devargs.h>
#include <qpio_eal.h>
#include <qpio_rdma.h>

#include "app_opts.h"

#define RDMA_UDP_QKEY 0x01234567u   /* librdmacm's Q_Key of a UD id */

struct opts {
	const char *dev;            /* --dev DEVARGS */
	const char *server;         /* -s: connect to it; NULL: serve */
	const char *bind;           /* -b: listen on it (server) */
	const char *port;           /* -p */
	uint32_t count;             /* -C */
	uint32_t size;              /* -S */
	uint32_t timeout_s;         /* --timeout */
	uint32_t conns;             /* -c */
	int ud;                     /* --ud: udaddy's exchange */
};

#define MAX_CONNS 64u

/* One connection: its QP, CQ and buffers. */
struct node {
	struct qpio_cq *cq;
	struct qpio_qp *qp;
	struct qpio_mr *mr;
	uint8_t *buf;               /* count receive slots, then one send */
	struct qpio_cm_id *id;      /* the connection */
	struct qpio_ah *ah;         /* UD: towards the peer */
	uint32_t peer_qpn, peer_qkey;
	uint32_t sends_done, recvs_done;
	int established, disconnected;
};

struct end {
	struct opts o;
	struct qpio_device *dev;
	struct qpio_pd *pd;
	uint32_t slot;              /* bytes of a receive slot */
	struct qpio_cm_channel *ch;
	struct node nodes[MAX_CONNS];
	uint32_t nodes_used;        /* server: connect requests taken */
	uint32_t established, disconnected;
	uint64_t deadline_ns;
	const char *role;
};

/* What is set up after the EAL's start: die() takes it down too. */
static struct end *live;

/* Release what e holds, in reverse order of setup, then the EAL and its
 * runtime directory. The channel goes first: an id still connected
 * tells its peer (a DREQ on the IB CM), so a peer does not wait for its
 * timeout when this end gives up. */
static void
teardown(struct end *e)
{
	struct node *nd;
	uint32_t i;

	/* (a client's UD AH is its id's, gone with the channel) */
	for (i = 0; i < e->o.conns; i++)
		if (e->o.ud && e->o.server == NULL && e->nodes[i].ah != NULL)
			qpio_ah_destroy(e->nodes[i].ah);
	if (e->ch != NULL)
		qpio_cm_channel_destroy(e->ch);
	for (i = 0; i < e->o.conns; i++) {
		nd = &e->nodes[i];
		if (nd->qp != NULL)
			qpio_qp_destroy(nd->qp);
		if (nd->mr != NULL)
			qpio_mr_dereg(nd->mr);
		if (nd->cq != NULL)
			qpio_cq_destroy(nd->cq);
		rte_free(nd->buf);
	}
	if (e->pd != NULL)
		qpio_pd_free(e->pd);
	if (e->dev != NULL)
		qpio_rdma_dev_close(e->dev);
	qpio_eal_cleanup();
}

static void
die(const struct end *e, const char *what, const char *why)
{
	fprintf(stderr, "qpio-cmatose: %s%s%s: %s\n", e != NULL ? e->role : "",
		e != NULL ? ": " : "", what, why);
	fflush(stdout);
	if (live != NULL)
		teardown(live);
	exit(1);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
check_deadline(const struct end *e, const char *waiting_for)
{
	uint32_t i, sends = 0, recvs = 0;
	char why[200];

	if (now_ns() < e->deadline_ns)
		return;
	for (i = 0; i < e->o.conns; i++) {
		sends += e->nodes[i].sends_done;
		recvs += e->nodes[i].recvs_done;
	}
	snprintf(why, sizeof(why), "nothing within --timeout %u s (sends "
		 "completed %u of %u, messages received %u of %u, "
		 "connections established %u of %u)", e->o.timeout_s, sends,
		 e->o.count * e->o.conns, recvs, e->o.count * e->o.conns,
		 e->established, e->o.conns);
	die(e, waiting_for, why);
}

#define PROG "qpio-cmatose"

static void
usage(FILE *f)
{
	fprintf(f,
"usage: qpio-cmatose [EAL options] -- --dev DEVARGS [options]\n"
"  --dev DEVARGS        the qpio device (a soft device on the wire:\n"
"                       soft0,wire=PORT,ip=ADDR; ibv0,dev=rxe0; ...)\n"
"  -s, --server ADDR    connect to the server at ADDR (default: be the server)\n"
"  -b, --bind ADDR      server: listen on ADDR only (default: every address)\n"
"  -p, --port PORT      1..65535 (default 7471, with --ud 7174)\n"
"  -c, --connections N  connections at once, 1..64 (default 1)\n"
"  -C, --count COUNT    messages each way on each, 1..32768 (default 10)\n"
"  -S, --size SIZE      bytes per message, 1..1048576 (default 100; with\n"
"                       --ud at most the port's active MTU)\n"
"  --ud                 udaddy's exchange over UD (default: ucmatose's, RC)\n"
"  --timeout SEC        give up after SEC s without progress, 1..3600\n"
"                       (default 30)\n"
"  -h, --help           this text\n"
"  Numbers are decimal digits only; each option is given once.\n");
}

/* The options after "--"; -1 after a message (usage exit status). */
static int
parse(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "server", required_argument, NULL, 's' },
		{ "bind", required_argument, NULL, 'b' },
		{ "port", required_argument, NULL, 'p' },
		{ "connections", required_argument, NULL, 'c' },
		{ "count", required_argument, NULL, 'C' },
		{ "size", required_argument, NULL, 'S' },
		{ "ud", no_argument, NULL, 'U' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned char seen[256] = { 0 };
	uint32_t port = 0;
	int c;

	memset(o, 0, sizeof(*o));
	o->count = 10;
	o->size = 100;
	o->timeout_s = 30;
	o->conns = 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "s:b:p:c:C:S:h", longopts,
				NULL)) != -1) {
		/* A second value would replace the first without a word. */
		if (c != '?' && c != 'h' &&
		    example_opt_once(PROG, longopts, c, seen) < 0)
			return -1;
		switch (c) {
		case 'd':
			if (example_opt_text(PROG, "--dev", optarg,
					     "DEVARGS (soft0,wire=...)") < 0)
				return -1;
			o->dev = optarg;
			break;
		case 's':
			if (example_opt_text(PROG, "--server", optarg,
					     "the server's address") < 0)
				return -1;
			o->server = optarg;
			break;
		case 'b':
			if (example_opt_text(PROG, "--bind", optarg,
					     "an address of the device") < 0)
				return -1;
			o->bind = optarg;
			break;
		case 'p':
			if (example_opt_u32(PROG, "--port", optarg, 1, 65535,
					    &port) < 0)
				return -1;
			o->port = optarg;
			break;
		case 'c':
			if (example_opt_u32(PROG, "--connections", optarg, 1,
					    MAX_CONNS, &o->conns) < 0)
				return -1;
			break;
		case 'C':
			/* the CQ takes both directions: 2 * 32768 CQEs */
			if (example_opt_u32(PROG, "--count", optarg, 1, 32768,
					    &o->count) < 0)
				return -1;
			break;
		case 'S':
			if (example_opt_u32(PROG, "--size", optarg, 1, 1u << 20,
					    &o->size) < 0)
				return -1;
			break;
		case 'U':
			o->ud = 1;
			break;
		case 'T':
			if (example_opt_u32(PROG, "--timeout", optarg, 1, 3600,
					    &o->timeout_s) < 0)
				return -1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, PROG ": '%s': not an option (the server is "
			"-s ADDR; see --help)\n", argv[optind]);
		return -1;
	}
	if (o->dev == NULL) {
		fprintf(stderr, PROG ": --dev DEVARGS is required "
			"(soft0,wire=<ethdev>,ip=<address>)\n");
		return -1;
	}
	if (o->bind != NULL && o->server != NULL) {
		fprintf(stderr, PROG ": --bind is the server's and --server "
			"makes a client: give one\n");
		return -1;
	}
	if (o->port == NULL)
		o->port = o->ud ? "7174" : "7471";
	return 0;
}

/* PD and channel, then each connection's CQ, buffers, MR and QP; the
 * QPs stay in RESET (lib/cm walks them). */
static void
setup(struct end *e)
{
	struct qpio_qp_init_attr ia;
	struct qpio_port_attr pa;
	struct node *nd;
	size_t len;
	uint32_t i;

	e->dev = qpio_rdma_dev_create(e->o.dev);
	if (e->dev == NULL)
		die(e, e->o.dev, rte_strerror(rte_errno));
	if (qpio_rdma_port_query(e->dev, 1, &pa) != 0)
		die(e, e->o.dev, "port 1 cannot be queried");
	if (e->o.ud && e->o.size > (128u << pa.active_mtu)) {
		char why[128];

		snprintf(why, sizeof(why), "a UD message is one packet: at "
			 "most the port's active MTU, %u bytes",
			 128u << pa.active_mtu);
		die(e, "--size", why);
	}
	e->slot = e->o.size + (e->o.ud ? QPIO_GRH_LEN : 0);
	len = (size_t)e->slot * e->o.count + e->o.size;
	e->pd = qpio_pd_alloc(e->dev);
	e->ch = qpio_cm_channel_create();
	if (e->pd == NULL || e->ch == NULL)
		die(e, "setup", rte_strerror(rte_errno));
	for (i = 0; i < e->o.conns; i++) {
		nd = &e->nodes[i];
		nd->cq = qpio_cq_create(e->dev, 2 * e->o.count, SOCKET_ID_ANY);
		if (nd->cq == NULL)
			die(e, "setup", rte_strerror(rte_errno));
		nd->buf = rte_zmalloc("qpio_cmatose", len, 64);
		if (nd->buf == NULL) {
			char why[160];

			snprintf(why, sizeof(why), "out of memory: %zu bytes "
				 "of buffers (-C x -S, each way, for each of "
				 "-c); raise -m or lower them", len);
			die(e, "setup", why);
		}
		memset(nd->buf + (size_t)e->slot * e->o.count, 0x5a,
		       e->o.size);
		nd->mr = qpio_mr_reg(e->pd, nd->buf, len,
				     QPIO_ACCESS_LOCAL_WRITE);
		memset(&ia, 0, sizeof(ia));
		ia.qp_type = e->o.ud ? QPIO_QPT_UD : QPIO_QPT_RC;
		ia.send_cq = nd->cq;
		ia.recv_cq = nd->cq;
		ia.cap.max_send_wr = e->o.count;
		ia.cap.max_recv_wr = e->o.count;
		ia.cap.max_send_sge = 1;
		ia.cap.max_recv_sge = 1;
		ia.sq_sig_all = 1;
		nd->qp = nd->mr != NULL ? qpio_qp_create(e->pd, &ia) : NULL;
		if (nd->mr == NULL || nd->qp == NULL)
			die(e, "setup", rte_strerror(rte_errno));
	}
}

static void
post_recvs(struct end *e, struct node *nd)
{
	uint32_t i;
	int err;

	for (i = 0; i < e->o.count; i++) {
		struct qpio_sge sge = {
			(uintptr_t)(nd->buf + (size_t)i * e->slot), e->slot,
			qpio_mr_lkey(nd->mr) };
		struct qpio_recv_wr wr = { .wr_id = i, .sg_list = &sge,
					   .num_sge = 1 };

		if (qpio_qp_post_recv(nd->qp, &wr, 1, &err) != 1)
			die(e, "post_recv", strerror(-err));
	}
}

static void
post_sends(struct end *e, struct node *nd)
{
	struct qpio_sge sge = {
		(uintptr_t)(nd->buf + (size_t)e->slot * e->o.count), e->o.size,
		qpio_mr_lkey(nd->mr) };
	struct qpio_send_wr wr;
	uint32_t i;
	int err;

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = e->o.ud ? QPIO_WR_SEND_WITH_IMM : QPIO_WR_SEND;
	wr.send_flags = QPIO_SEND_SIGNALED;
	if (e->o.ud) {
		wr.imm_data = qpio_qp_num(nd->qp);
		wr.wr.ud.ah = nd->ah;
		wr.wr.ud.remote_qpn = nd->peer_qpn;
		wr.wr.ud.remote_qkey = nd->peer_qkey;
	}
	for (i = 0; i < e->o.count; i++) {
		wr.wr_id = e->o.count + i;
		/* the send queue holds count: never full here */
		if (qpio_qp_post_send(nd->qp, &wr, 1, &err) != 1)
			die(e, "post_send", strerror(-err));
	}
}

/* One receive completion: the checks ucmatose and udaddy imply. */
static void
check_recv(struct end *e, struct node *nd, const struct qpio_wc *wc)
{
	char why[160];
	uint32_t want = e->o.size + (e->o.ud ? QPIO_GRH_LEN : 0);

	if (wc->byte_len != want) {
		snprintf(why, sizeof(why), "%u bytes, expected %u",
			 wc->byte_len, want);
		die(e, "message", why);
	}
	if (!e->o.ud)
		return;
	if (!(wc->wc_flags & QPIO_WC_WITH_IMM))
		die(e, "message", "no immediate data (udaddy sends its QPN)");
	if (wc->imm_data != wc->src_qp) {
		snprintf(why, sizeof(why), "immediate data 0x%x is not the "
			 "source QPN 0x%x", wc->imm_data, wc->src_qp);
		die(e, "message", why);
	}
	if (nd->ah == NULL) {
		/* the server's reply address: udaddy's create_reply_ah() */
		nd->ah = qpio_ah_create_from_wc(e->pd, wc,
						nd->buf + (size_t)wc->wr_id *
						e->slot, 1);
		if (nd->ah == NULL)
			die(e, "AH from the first message",
			    rte_strerror(rte_errno));
		nd->peer_qpn = wc->imm_data;
		nd->peer_qkey = RDMA_UDP_QKEY;
	} else if (wc->src_qp != nd->peer_qpn) {
		snprintf(why, sizeof(why), "from QPN 0x%x, expected 0x%x",
			 wc->src_qp, nd->peer_qpn);
		die(e, "message", why);
	}
}

/* The node of a connection id; NULL when none. */
static struct node *
node_of(struct end *e, const struct qpio_cm_id *id)
{
	uint32_t i;

	if (id == NULL)
		return NULL;
	for (i = 0; i < e->o.conns; i++)
		if (e->nodes[i].id == id)
			return &e->nodes[i];
	return NULL;
}

/* A connection event. A request beyond -c is refused with a consumer
 * REJ and the run goes on (the tools serve their -c and no more); a
 * DISCONNECTED of a connection whose exchange is done is counted (the
 * server ends each once it has every connection's messages). 1 when ev
 * was taken so; 0 when the caller must judge it. */
static int
event_taken(struct end *e, const struct qpio_cm_event *ev)
{
	struct node *nd = node_of(e, ev->id);

	if (ev->type == QPIO_CM_EVENT_CONNECT_REQUEST &&
	    e->nodes_used == e->o.conns) {
		fprintf(stderr, PROG ": another connect request while %u "
			"are served: rejected\n", e->o.conns);
		qpio_cm_reject(ev->id, NULL, 0);
		return 1;
	}
	if (ev->type == QPIO_CM_EVENT_DISCONNECTED && nd != NULL &&
	    !nd->disconnected && nd->sends_done == e->o.count &&
	    nd->recvs_done == e->o.count) {
		nd->disconnected = 1;
		e->disconnected++;
		return 1;
	}
	return 0;
}

/* Poll nd's CQ until its sends and receives reach their targets; every
 * completion must be a success. A connection event meanwhile that
 * event_taken() does not take ends the program. */
static void
poll_until(struct end *e, struct node *nd, uint32_t sends, uint32_t recvs,
	   const char *what)
{
	struct qpio_cm_event ev;
	struct qpio_wc wc[16];
	unsigned int idle = 0;
	int n, i;

	e->deadline_ns = now_ns() + (uint64_t)e->o.timeout_s * 1000000000u;
	while (nd->sends_done < sends || nd->recvs_done < recvs) {
		n = qpio_cq_poll(nd->cq, wc, RTE_DIM(wc));
		if (n < 0)
			die(e, "poll", strerror(-n));
		if (n == 0) {
			if (++idle % 1024 == 0) {
				check_deadline(e, what);
				if (qpio_cm_poll(e->ch, &ev) == 1 &&
				    !event_taken(e, &ev))
					die(e, what, qpio_cm_event_str(
						ev.type));
			}
			continue;
		}
		for (i = 0; i < n; i++) {
			if (wc[i].status != QPIO_WC_SUCCESS)
				die(e, wc[i].opcode & QPIO_WC_RECV ?
				    "receive" : "send",
				    qpio_wc_status_str(wc[i].status));
			if (wc[i].opcode & QPIO_WC_RECV) {
				check_recv(e, nd, &wc[i]);
				nd->recvs_done++;
			} else {
				nd->sends_done++;
			}
		}
		e->deadline_ns = now_ns() +
				 (uint64_t)e->o.timeout_s * 1000000000u;
	}
}

/* The next connection event event_taken() leaves, of type type or
 * (unless it is the same) type2. */
static struct qpio_cm_event
wait_event2(struct end *e, enum qpio_cm_event_type type,
	    enum qpio_cm_event_type type2, const char *what)
{
	struct qpio_cm_event ev;
	char why[96];
	int ret;

	e->deadline_ns = now_ns() + (uint64_t)e->o.timeout_s * 1000000000u;
	while ((ret = qpio_cm_poll(e->ch, &ev)) == 0 ||
	       (ret == 1 && event_taken(e, &ev)))
		check_deadline(e, what);
	if (ret < 0)
		die(e, what, strerror(-ret));
	if (ev.type != type && ev.type != type2) {
		snprintf(why, sizeof(why), "%s (%s), expected %s",
			 qpio_cm_event_str(ev.type), strerror(-ev.status),
			 qpio_cm_event_str(type));
		die(e, what, why);
	}
	return ev;
}

/* The next connection event event_taken() leaves, of type type. */
static struct qpio_cm_event
wait_event(struct end *e, enum qpio_cm_event_type type, const char *what)
{
	return wait_event2(e, type, type, what);
}

/* Until every connection's DISCONNECTED came (event_taken() counts
 * them); any other event ends the program. */
static void
wait_disconnects(struct end *e, const char *what)
{
	struct qpio_cm_event ev;
	char why[96];
	int ret;

	e->deadline_ns = now_ns() + (uint64_t)e->o.timeout_s * 1000000000u;
	while (e->disconnected < e->o.conns) {
		ret = qpio_cm_poll(e->ch, &ev);
		if (ret < 0)
			die(e, what, strerror(-ret));
		if (ret == 0) {
			check_deadline(e, what);
			continue;
		}
		if (!event_taken(e, &ev)) {
			snprintf(why, sizeof(why), "%s (%s), expected "
				 "DISCONNECTED", qpio_cm_event_str(ev.type),
				 strerror(-ev.status));
			die(e, what, why);
		}
	}
}

static void
server(struct end *e)
{
	struct qpio_cm_qp_params qp;
	struct qpio_cm_conn_param cp;
	struct qpio_cm_event ev;
	struct qpio_cm_id *lid;
	struct node *nd;
	uint32_t i;

	printf("qpio-cmatose: starting server\n");
	lid = qpio_cm_listen(e->ch, e->dev, e->o.bind, e->o.port, NULL);
	if (lid == NULL)
		die(e, "listen", rte_strerror(rte_errno));
	printf("qpio-cmatose: listening on port %u\n", qpio_cm_id_port(lid));
	fflush(stdout);
	qpio_cm_qp_params_init(&qp);
	if (e->o.ud)
		qp.qkey = RDMA_UDP_QKEY;
	memset(&cp, 0, sizeof(cp));
	cp.qp_params = &qp;
	/* every connection up before any data moves, as the tools do */
	while (e->established < e->o.conns) {
		/* (a request beyond -c is refused in event_taken()) */
		ev = wait_event2(e, QPIO_CM_EVENT_CONNECT_REQUEST,
				 QPIO_CM_EVENT_ESTABLISHED, "accept");
		if (ev.type == QPIO_CM_EVENT_CONNECT_REQUEST) {
			nd = &e->nodes[e->nodes_used++];
			nd->id = ev.id;
			if (qpio_cm_accept(nd->id, nd->qp, &cp) != 0)
				die(e, "accept", "refused (see the log)");
			/* in RTS now; nothing is received before the next
			 * poll */
			post_recvs(e, nd);
		} else {
			nd = node_of(e, ev.id);
			if (nd == NULL || nd->established)
				die(e, "accept", "ESTABLISHED of no request");
			nd->established = 1;
			e->established++;
		}
	}
	if (e->o.ud) {
		printf("receiving data transfers\n");
		for (i = 0; i < e->o.conns; i++)
			poll_until(e, &e->nodes[i], 0, e->o.count,
				   "messages from the client");
		printf("sending replies\n");
		for (i = 0; i < e->o.conns; i++)
			post_sends(e, &e->nodes[i]);
		for (i = 0; i < e->o.conns; i++)
			poll_until(e, &e->nodes[i], e->o.count, e->o.count,
				   "the replies' sends");
		printf("data transfers complete\n");
	} else {
		printf("initiating data transfers\n");
		for (i = 0; i < e->o.conns; i++)
			post_sends(e, &e->nodes[i]);
		printf("completing sends\n");
		for (i = 0; i < e->o.conns; i++)
			poll_until(e, &e->nodes[i], e->o.count, 0,
				   "the sends' completions");
		printf("receiving data transfers\n");
		for (i = 0; i < e->o.conns; i++)
			poll_until(e, &e->nodes[i], e->o.count, e->o.count,
				   "messages from the client");
		printf("data transfers complete\n");
		printf("qpio-cmatose: disconnecting\n");
		for (i = 0; i < e->o.conns; i++)
			if (qpio_cm_disconnect(e->nodes[i].id) != 0)
				die(e, "disconnect", "refused");
		wait_disconnects(e, "disconnect");
		printf("disconnected\n");
	}
	qpio_cm_id_destroy(lid);
}

static void
client(struct end *e)
{
	struct qpio_cm_qp_params qp;
	struct qpio_cm_conn_param cp;
	struct qpio_cm_event ev;
	struct node *nd;
	uint32_t i;

	printf("qpio-cmatose: starting client\n");
	qpio_cm_qp_params_init(&qp);
	if (e->o.ud)
		qp.qkey = RDMA_UDP_QKEY;
	memset(&cp, 0, sizeof(cp));
	cp.qp_params = &qp;
	cp.timeout_ms = e->o.timeout_s * 1000u;
	printf("qpio-cmatose: connecting\n");
	for (i = 0; i < e->o.conns; i++) {
		nd = &e->nodes[i];
		nd->id = qpio_cm_connect(e->ch, nd->qp, e->o.server,
					 e->o.port, &cp, NULL);
		if (nd->id == NULL)
			die(e, "connect", rte_strerror(rte_errno));
	}
	while (e->established < e->o.conns) {
		ev = wait_event(e, QPIO_CM_EVENT_ESTABLISHED, "connect");
		nd = node_of(e, ev.id);
		if (nd == NULL || nd->established)
			die(e, "connect", "ESTABLISHED of no request");
		nd->established = 1;
		e->established++;
		/* in RTS now; nothing is received before the next poll */
		post_recvs(e, nd);
		if (e->o.ud) {
			nd->ah = ev.ah;
			nd->peer_qpn = ev.peer.qpn;
			nd->peer_qkey = ev.peer.qkey;
		}
	}
	if (e->o.ud) {
		printf("initiating data transfers\n");
		for (i = 0; i < e->o.conns; i++)
			post_sends(e, &e->nodes[i]);
		printf("receiving data transfers\n");
		for (i = 0; i < e->o.conns; i++) {
			poll_until(e, &e->nodes[i], e->o.count, e->o.count,
				   "the server's replies");
			e->nodes[i].ah = NULL;   /* the id's */
		}
		printf("data transfers complete\n");
	} else {
		printf("receiving data transfers\n");
		for (i = 0; i < e->o.conns; i++)
			poll_until(e, &e->nodes[i], 0, e->o.count,
				   "messages from the server");
		printf("sending replies\n");
		for (i = 0; i < e->o.conns; i++)
			post_sends(e, &e->nodes[i]);
		for (i = 0; i < e->o.conns; i++)
			poll_until(e, &e->nodes[i], e->o.count, e->o.count,
				   "the replies' sends");
		printf("data transfers complete\n");
		wait_disconnects(e, "the server's disconnect");
		printf("disconnected\n");
	}
}

int
main(int argc, char **argv)
{
	static struct end e;
	char *prog = (char *)"qpio-cmatose";
	int n, dd = 1;

	/* The options after "--" first: a refused line sets up nothing. */
	while (dd < argc && strcmp(argv[dd], "--") != 0)
		dd++;
	if (dd < argc) {
		char *saved = argv[dd];

		argv[dd] = prog;
		n = parse(argc - dd, argv + dd, &e.o);
		argv[dd] = saved;
	} else {
		n = parse(1, &prog, &e.o);
	}
	if (n < 0)
		return 2;
	optind = 1;
	n = rte_eal_init(argc, argv);
	if (n < 0) {
		n = rte_errno;
		qpio_eal_init_failed();
		die(NULL, "EAL", rte_strerror(n));
	}
	e.role = e.o.server != NULL ? "client" : "server";
	live = &e;
	setup(&e);
	if (e.o.server != NULL)
		client(&e);
	else
		server(&e);
	if (e.o.conns == 1)
		printf("qpio-cmatose: %s: %u messages of %u bytes each way "
		       "over %s, every completion a success\n", e.role,
		       e.o.count, e.o.size, e.o.ud ? "UD" : "RC");
	else
		printf("qpio-cmatose: %s: %u connections, %u messages of %u "
		       "bytes each way on each over %s, every completion a "
		       "success\n", e.role, e.o.conns, e.o.count, e.o.size,
		       e.o.ud ? "UD" : "RC");
	fflush(stdout);
	teardown(&e);
	return 0;
}
