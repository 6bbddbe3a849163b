/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-rping: the ping of rdmacm-utils' rping on any qpio device,
 * connected by lib/cm, with rping's options, port and messages, so that
 * either end can be the unmodified rping on a RoCE host and the other a
 * qpio soft device on the wire (the IB CM), or both qpio.
 *
 * One ping (rdma-core librdmacm/examples/rping.c): the client fills its
 * start buffer ("rdma-ping-N: " and letters) and SENDs its address, rkey
 * and length (16 bytes, big-endian: u64 address, u32 rkey, u32 length);
 * the server RDMA READs that buffer, SENDs a go-ahead, the client SENDs
 * the same for its sink buffer, the server RDMA WRITEs what it read there
 * and SENDs a go-ahead again. With -V the client checks that the sink
 * holds its start buffer to the byte. After -C pings the client
 * disconnects; the server serves one client until it does.
 *
 *   qpio-rping -l 0 --vdev net_af_packet0,iface=eth1 -- \
 *       --dev soft0,wire=net_af_packet0,ip=10.0.0.2 -c -a 10.0.0.1 -C 10 -V
 *   rping -s -a 10.0.0.1 -V      (the unmodified server on the peer)
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_byteorder.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include <qpio_cm.h>
#include <qpio_devargs.h>
#include <qpio_eal.h>
#include <qpio_rdma.h>

#include "app_opts.h"

#define PROG "qpio-rping"
#define INFO_LEN 16u            /* rping's struct rping_rdma_info */
#define MIN_SIZE 23u            /* rping's -S range */
#define MAX_SIZE 65535u

struct opts {
	const char *dev, *addr, *port;
	int server, client, validate, verbose;
	uint32_t count, size, timeout_s;
};

/* The one MR holds, in order: the receive and send slots of 16 bytes,
 * then the start and the RDMA buffers of size bytes. */
struct ping {
	struct opts o;
	struct qpio_device *dev;
	struct qpio_pd *pd;
	struct qpio_cq *cq;
	struct qpio_qp *qp;
	struct qpio_mr *mr;
	uint8_t *mem, *recv_buf, *send_buf, *start_buf, *rdma_buf;
	struct qpio_cm_channel *ch;
	struct qpio_cm_id *id;
	int disconnected;
	uint64_t deadline_ns;
	uint32_t pings;
	const char *role;
};

/* What is set up after the EAL's start: die() takes it down too. */
static struct ping *live;

/* Release what p holds, in reverse order of setup, then the EAL and its
 * runtime directory. The channel goes first: an id still connected
 * tells its peer (a DREQ on the IB CM), so a peer does not wait for its
 * timeout when this end gives up. */
static void
teardown(struct ping *p)
{
	if (p->ch != NULL)
		qpio_cm_channel_destroy(p->ch);
	if (p->qp != NULL)
		qpio_qp_destroy(p->qp);
	if (p->mr != NULL)
		qpio_mr_dereg(p->mr);
	if (p->cq != NULL)
		qpio_cq_destroy(p->cq);
	if (p->pd != NULL)
		qpio_pd_free(p->pd);
	if (p->dev != NULL)
		qpio_rdma_dev_close(p->dev);
	rte_free(p->mem);
	qpio_eal_cleanup();
}

static void
die(const struct ping *p, const char *what, const char *why)
{
	fprintf(stderr, PROG ": %s%s%s: %s\n", p != NULL ? p->role : "",
		p != NULL ? ": " : "", what, why);
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
usage(FILE *f)
{
	fprintf(f,
"usage: qpio-rping [EAL options] -- --dev DEVARGS (-s | -c) -a ADDR [options]\n"
"  --dev DEVARGS        the qpio device (soft0,wire=PORT,ip=ADDR; ...)\n"
"  -s, --server         serve one client (rping -s)\n"
"  -c, --client         ping the server at -a (rping -c)\n"
"  -a, --addr ADDR      server: listen on ADDR; client: the server's\n"
"  -p, --port PORT      1..65535 (default 7174, rping's)\n"
"  -C, --count N        client: pings, 1..100000000 (default 1000)\n"
"  -S, --size BYTES     ping buffer, 23..65535 (default 64); the server's\n"
"                       must hold the client's\n"
"  -V, --validate       client: every sink byte equal to the start buffer\n"
"  -v, --verbose        print each ping's data, as rping -v\n"
"  --timeout SEC        give up after SEC s without progress, 1..3600\n"
"                       (default 30)\n"
"  -h, --help           this text\n"
"  Numbers are decimal digits only; each option is given once.\n");
}

static int
parse(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "server", no_argument, NULL, 's' },
		{ "client", no_argument, NULL, 'c' },
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'C' },
		{ "size", required_argument, NULL, 'S' },
		{ "validate", no_argument, NULL, 'V' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned char seen[256] = { 0 };
	uint32_t port;
	int c;

	memset(o, 0, sizeof(*o));
	o->port = "7174";
	o->count = 1000;
	o->size = 64;
	o->timeout_s = 30;
	optind = 1;
	while ((c = getopt_long(argc, argv, "sca:p:C:S:Vvh", longopts,
				NULL)) != -1) {
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
		case 's': o->server = 1; break;
		case 'c': o->client = 1; break;
		case 'a':
			if (example_opt_text(PROG, "--addr", optarg,
					     "an address") < 0)
				return -1;
			o->addr = optarg;
			break;
		case 'p':
			if (example_opt_u32(PROG, "--port", optarg, 1, 65535,
					    &port) < 0)
				return -1;
			o->port = optarg;
			break;
		case 'C':
			if (example_opt_u32(PROG, "--count", optarg, 1,
					    100000000, &o->count) < 0)
				return -1;
			break;
		case 'S':
			if (example_opt_u32(PROG, "--size", optarg, MIN_SIZE,
					    MAX_SIZE, &o->size) < 0)
				return -1;
			break;
		case 'V': o->validate = 1; break;
		case 'v': o->verbose = 1; break;
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
		fprintf(stderr, PROG ": '%s': not an option (see --help)\n",
			argv[optind]);
		return -1;
	}
	if (o->dev == NULL) {
		fprintf(stderr, PROG ": --dev DEVARGS is required "
			"(soft0,wire=<ethdev>,ip=<address>)\n");
		return -1;
	}
	if (o->server == o->client) {
		fprintf(stderr, PROG ": --server and --client: give one of "
			"the two\n");
		return -1;
	}
	if (o->client && o->addr == NULL) {
		fprintf(stderr, PROG ": --client needs --addr, the server's "
			"address\n");
		return -1;
	}
	return 0;
}

static void
setup(struct ping *p)
{
	struct qpio_qp_init_attr ia;
	size_t len = 2 * INFO_LEN + 2 * (size_t)p->o.size;

	p->dev = qpio_rdma_dev_create(p->o.dev);
	if (p->dev == NULL)
		die(p, p->o.dev, rte_strerror(rte_errno));
	p->pd = qpio_pd_alloc(p->dev);
	p->cq = qpio_cq_create(p->dev, 32, SOCKET_ID_ANY);
	p->mem = rte_zmalloc("qpio_rping", len, 64);
	if (p->pd == NULL || p->cq == NULL || p->mem == NULL)
		die(p, "setup", rte_strerror(rte_errno));
	p->recv_buf = p->mem;
	p->send_buf = p->mem + INFO_LEN;
	p->start_buf = p->mem + 2 * INFO_LEN;
	p->rdma_buf = p->start_buf + p->o.size;
	/* rping's: the peer reads the start buffer and writes the sink */
	p->mr = qpio_mr_reg(p->pd, p->mem, len, QPIO_ACCESS_LOCAL_WRITE |
			    QPIO_ACCESS_REMOTE_READ | QPIO_ACCESS_REMOTE_WRITE);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = QPIO_QPT_RC;
	ia.send_cq = p->cq;
	ia.recv_cq = p->cq;
	ia.cap.max_send_wr = 16;       /* rping's RPING_SQ_DEPTH */
	ia.cap.max_recv_wr = 2;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.sq_sig_all = 1;
	p->qp = p->mr != NULL ? qpio_qp_create(p->pd, &ia) : NULL;
	p->ch = qpio_cm_channel_create();
	if (p->mr == NULL || p->qp == NULL || p->ch == NULL)
		die(p, "setup", rte_strerror(rte_errno));
}

static void
post_recv(struct ping *p)
{
	struct qpio_sge sge = { (uintptr_t)p->recv_buf, INFO_LEN,
				qpio_mr_lkey(p->mr) };
	struct qpio_recv_wr wr = { .wr_id = 1, .sg_list = &sge,
				   .num_sge = 1 };
	int err;

	if (qpio_qp_post_recv(p->qp, &wr, 1, &err) != 1)
		die(p, "post_recv", strerror(-err));
}

/* SEND the 16-byte send slot: buf's address, rkey and len (big-endian),
 * or zeros for a go-ahead (buf NULL). */
static void
post_info(struct ping *p, const uint8_t *buf, uint32_t len)
{
	struct qpio_sge sge = { (uintptr_t)p->send_buf, INFO_LEN,
				qpio_mr_lkey(p->mr) };
	struct qpio_send_wr wr;
	uint64_t a = rte_cpu_to_be_64(buf != NULL ? (uintptr_t)buf : 0);
	uint32_t k = rte_cpu_to_be_32(buf != NULL ? qpio_mr_rkey(p->mr) : 0);
	uint32_t l = rte_cpu_to_be_32(buf != NULL ? len : 0);
	int err;

	memcpy(p->send_buf, &a, 8);
	memcpy(p->send_buf + 8, &k, 4);
	memcpy(p->send_buf + 12, &l, 4);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 2;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = QPIO_WR_SEND;
	wr.send_flags = QPIO_SEND_SIGNALED;
	if (qpio_qp_post_send(p->qp, &wr, 1, &err) != 1)
		die(p, "post_send", strerror(-err));
}

static void
post_rdma(struct ping *p, enum qpio_wr_opcode op, uint64_t raddr,
	  uint32_t rkey, uint32_t len)
{
	struct qpio_sge sge = { (uintptr_t)p->rdma_buf, len,
				qpio_mr_lkey(p->mr) };
	struct qpio_send_wr wr;
	int err;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 3;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = QPIO_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (qpio_qp_post_send(p->qp, &wr, 1, &err) != 1)
		die(p, "post_send", strerror(-err));
}

/* Poll until a completion of opcode want (its receive reposted); the
 * completions of our SENDs pass by. 0, or -1 when the peer disconnected
 * (a server's end of the run). */
/* A request for another connection while this one runs (one at a
 * time, as the tools serve): refused with a consumer REJ, the run goes
 * on. 1 when ev was one. */
static int
refuse_other(const struct ping *x, const struct qpio_cm_event *ev)
{
	if (ev->type != QPIO_CM_EVENT_CONNECT_REQUEST || ev->id == x->id)
		return 0;
	fprintf(stderr, PROG ": another connect request while one is "
		"served: rejected\n");
	qpio_cm_reject(ev->id, NULL, 0);
	return 1;
}

static int
wait_wc(struct ping *p, enum qpio_wc_opcode want, const char *what)
{
	struct qpio_cm_event ev;
	struct qpio_wc wc;
	unsigned int idle = 0;
	char why[160];

	p->deadline_ns = now_ns() + (uint64_t)p->o.timeout_s * 1000000000u;
	for (;;) {
		if (qpio_cq_poll(p->cq, &wc, 1) == 0) {
			if (++idle % 1024 != 0)
				continue;
			if (qpio_cm_poll(p->ch, &ev) == 1 &&
			    !refuse_other(p, &ev)) {
				if (ev.type == QPIO_CM_EVENT_DISCONNECTED) {
					p->disconnected = 1;
					return -1;
				}
				die(p, what, qpio_cm_event_str(ev.type));
			}
			if (now_ns() >= p->deadline_ns) {
				snprintf(why, sizeof(why), "nothing within "
					 "--timeout %u s (after %u pings)",
					 p->o.timeout_s, p->pings);
				die(p, what, why);
			}
			continue;
		}
		if (wc.status != QPIO_WC_SUCCESS) {
			if (wc.status == QPIO_WC_WR_FLUSH_ERR && p->o.server)
				continue;       /* the disconnect's flush */
			die(p, what, qpio_wc_status_str(wc.status));
		}
		if (wc.opcode == QPIO_WC_RECV) {
			if (wc.byte_len != INFO_LEN) {
				snprintf(why, sizeof(why), "a message of %u "
					 "bytes, rping's are %u",
					 wc.byte_len, INFO_LEN);
				die(p, what, why);
			}
			if (want == QPIO_WC_RECV)
				return 0;
			die(p, what, "a message before the RDMA completion");
		}
		if (wc.opcode == want)
			return 0;
	}
}

static struct qpio_cm_event
wait_event(struct ping *p, enum qpio_cm_event_type type, const char *what)
{
	struct qpio_cm_event ev;
	char why[96];
	int ret;

	p->deadline_ns = now_ns() + (uint64_t)p->o.timeout_s * 1000000000u;
	while ((ret = qpio_cm_poll(p->ch, &ev)) == 0 ||
	       (ret == 1 && p->id != NULL && refuse_other(p, &ev)))
		if (now_ns() >= p->deadline_ns)
			die(p, what, "no connection event within --timeout");
	if (ret < 0)
		die(p, what, strerror(-ret));
	if (ev.type != type) {
		snprintf(why, sizeof(why), "%s (%s), expected %s",
			 qpio_cm_event_str(ev.type), strerror(-ev.status),
			 qpio_cm_event_str(type));
		die(p, what, why);
	}
	return ev;
}

/* The recv slot's address, rkey and length. */
static void
read_info(const struct ping *p, uint64_t *addr, uint32_t *rkey,
	  uint32_t *len)
{
	uint64_t a;
	uint32_t k, l;

	memcpy(&a, p->recv_buf, 8);
	memcpy(&k, p->recv_buf + 8, 4);
	memcpy(&l, p->recv_buf + 12, 4);
	*addr = rte_be_to_cpu_64(a);
	*rkey = rte_be_to_cpu_32(k);
	*len = rte_be_to_cpu_32(l);
}

static void
server(struct ping *p)
{
	struct qpio_cm_event ev;
	struct qpio_cm_id *lid;
	uint64_t raddr;
	uint32_t rkey, rlen, wlen;
	char why[128];

	lid = qpio_cm_listen(p->ch, p->dev, p->o.addr, p->o.port, NULL);
	if (lid == NULL)
		die(p, "listen", rte_strerror(rte_errno));
	printf(PROG ": listening on port %u\n", qpio_cm_id_port(lid));
	fflush(stdout);
	ev = wait_event(p, QPIO_CM_EVENT_CONNECT_REQUEST, "connect request");
	p->id = ev.id;
	if (qpio_cm_accept(p->id, p->qp, NULL) != 0)
		die(p, "accept", "refused (see the log)");
	post_recv(p);   /* in RTS now; nothing arrives before the next poll */
	wait_event(p, QPIO_CM_EVENT_ESTABLISHED, "accept");
	for (;;) {
		/* the client's start buffer */
		p->deadline_ns = 0;
		if (wait_wc(p, QPIO_WC_RECV, "the start buffer's address") < 0)
			break;
		read_info(p, &raddr, &rkey, &rlen);
		post_recv(p);
		if (rlen > p->o.size) {
			snprintf(why, sizeof(why), "%u bytes, above this "
				 "server's -S %u", rlen, p->o.size);
			die(p, "the client's buffer", why);
		}
		post_rdma(p, QPIO_WR_RDMA_READ, raddr, rkey, rlen);
		if (wait_wc(p, QPIO_WC_RDMA_READ, "the RDMA READ") < 0)
			die(p, "the RDMA READ", "the client disconnected");
		if (p->o.verbose)
			printf("server ping data: %.*s\n", (int)rlen,
			       (const char *)p->rdma_buf);
		post_info(p, NULL, 0);                  /* go ahead */
		if (wait_wc(p, QPIO_WC_RECV, "the sink's address") < 0)
			die(p, "the sink's address", "the client disconnected");
		read_info(p, &raddr, &rkey, &rlen);
		post_recv(p);
		/* rping writes the string it read and its NUL */
		wlen = (uint32_t)strnlen((const char *)p->rdma_buf,
					 p->o.size - 1) + 1;
		if (wlen > rlen)
			wlen = rlen;
		post_rdma(p, QPIO_WR_RDMA_WRITE, raddr, rkey, wlen);
		if (wait_wc(p, QPIO_WC_RDMA_WRITE, "the RDMA WRITE") < 0)
			die(p, "the RDMA WRITE", "the client disconnected");
		post_info(p, NULL, 0);                  /* go ahead again */
		p->pings++;
	}
	printf(PROG ": server: %u pings served, the client disconnected\n",
	       p->pings);
	qpio_cm_id_destroy(lid);
}

/* rping's start buffer of ping n: "rdma-ping-N: ", then letters from
 * 'A' + n % 58 on, 'A' after 'z', and a NUL in the last byte. */
static void
fill_start(struct ping *p, uint32_t n)
{
	uint32_t i, cc;
	unsigned char c = (unsigned char)(65 + n % 58);

	cc = (uint32_t)snprintf((char *)p->start_buf, p->o.size,
				"rdma-ping-%u: ", n);
	for (i = cc; i < p->o.size; i++) {
		p->start_buf[i] = c;
		if (++c > 122)
			c = 65;
	}
	p->start_buf[p->o.size - 1] = 0;
}

static void
client(struct ping *p)
{
	struct qpio_cm_conn_param cp;
	struct qpio_cm_event ev;
	uint32_t n, bad = 0;

	memset(&cp, 0, sizeof(cp));
	cp.timeout_ms = p->o.timeout_s * 1000u;
	p->id = qpio_cm_connect(p->ch, p->qp, p->o.addr, p->o.port, &cp,
				NULL);
	if (p->id == NULL)
		die(p, "connect", rte_strerror(rte_errno));
	ev = wait_event(p, QPIO_CM_EVENT_ESTABLISHED, "connect");
	RTE_SET_USED(ev);
	post_recv(p);   /* in RTS now; nothing arrives before the next poll */
	for (n = 0; n < p->o.count; n++) {
		fill_start(p, n);
		memset(p->rdma_buf, 0, p->o.size);
		post_info(p, p->start_buf, p->o.size);
		if (wait_wc(p, QPIO_WC_RECV, "the go-ahead after the READ") < 0)
			die(p, "ping", "the server disconnected");
		post_recv(p);
		post_info(p, p->rdma_buf, p->o.size);
		if (wait_wc(p, QPIO_WC_RECV, "the go-ahead after the WRITE") < 0)
			die(p, "ping", "the server disconnected");
		post_recv(p);
		if (p->o.validate &&
		    memcmp(p->start_buf, p->rdma_buf, p->o.size) != 0) {
			fprintf(stderr, PROG ": client: ping %u: data "
				"mismatch\n", n);
			bad++;
			break;
		}
		if (p->o.verbose)
			printf("ping data: %s\n", (const char *)p->rdma_buf);
		p->pings++;
	}
	if (qpio_cm_disconnect(p->id) != 0)
		die(p, "disconnect", "refused");
	wait_event(p, QPIO_CM_EVENT_DISCONNECTED, "disconnect");
	if (bad != 0) {
		fflush(stdout);
		teardown(p);
		exit(1);
	}
	printf(PROG ": client: %u pings of %u bytes%s\n", p->pings,
	       p->o.size, p->o.validate ?
	       ", every byte written back as it was read" : "");
}

int
main(int argc, char **argv)
{
	static struct ping p;
	char *prog = (char *)PROG;
	int n, dd = 1;

	/* The options after "--" first: a refused line sets up nothing. */
	while (dd < argc && strcmp(argv[dd], "--") != 0)
		dd++;
	if (dd < argc) {
		char *saved = argv[dd];

		argv[dd] = prog;
		n = parse(argc - dd, argv + dd, &p.o);
		argv[dd] = saved;
	} else {
		n = parse(1, &prog, &p.o);
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
	p.role = p.o.server ? "server" : "client";
	live = &p;
	setup(&p);
	if (p.o.server)
		server(&p);
	else
		client(&p);
	fflush(stdout);
	teardown(&p);
	return 0;
}
