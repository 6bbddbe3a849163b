/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-verbs-pingpong: ibverbs-utils' ibv_rc_pingpong, ibv_uc_pingpong
 * and ibv_ud_pingpong on a qpio device (-c RC, UC or UD), so that either
 * end of a ping-pong may be the unmodified tool on a kernel RDMA device
 * (Soft-RoCE, a RoCE NIC) and the other a qpio device, a soft one on the
 * wire among them (doc/guides/sample_app_ug/verbs_pingpong.rst).
 *
 * It speaks the tools' exchange (libibverbs/examples/rc_pingpong.c,
 * uc_pingpong.c and ud_pingpong.c of
 * rdma-core): over TCP (port 18515), each side sends its address as the
 * 52-byte string "LLLL:QQQQQQ:PPPPPP:<32 hex digits of the GID>" with its
 * NUL (the client first, then the server, which connects its QP before it
 * answers); the client then writes "done". Then the client sends first,
 * and each side sends its next message once its last send and its next
 * receive have completed, iters times. Messages are size bytes of 0x7b
 * (UD: from offset 40 of a buffer of size + 40, the GRH space first);
 * --validate checks every received one.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "qpio_eal.h"
#include "qpio_rdma.h"
#include "qpio_soft.h"

#include "app_opts.h"

#define PROG "qpio-verbs-pingpong"

#define QKEY       0x11111111u
#define RECV_WRID  1u
#define SEND_WRID  2u
#define MSG_LEN    52   /* sizeof "0000:000000:000000:" + 32 hex + NUL */

struct opts {
	const char *dev;
	enum qpio_qp_type type;  /* -c: RC (the default), UC or UD */
	uint32_t mtu;            /* -m: RC and UC path MTU, bytes */
	const char *server;      /* client mode when set */
	uint32_t port;
	uint32_t size;
	uint32_t rx_depth;
	uint32_t iters;
	uint32_t sl;
	int32_t gidx;
	uint32_t timeout_s;
	uint32_t comp_vector;
	int validate;
	int events;
	uint32_t gap_ms;         /* --gap: the client's pause before a SEND */
};

struct dest {
	uint32_t lid, qpn, psn;
	uint8_t gid[16];
};

static void
usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [EAL options] -- --dev DEVARGS [options] [server]\n"
		"  ibv_rc_pingpong's, ibv_uc_pingpong's or ibv_ud_pingpong's\n"
		"  exchange and traffic on a qpio device; with a server name,\n"
		"  the client (as ibv_rc_pingpong <host>)\n"
		"  --dev DEVARGS        the qpio device (soft0,wire=...,ip=...)\n"
		"  -c, --connection=T   RC (ibv_rc_pingpong), UC or UD (RC)\n"
		"  -p, --port=N         TCP port of the exchange (18515)\n"
		"  -s, --size=N         message bytes (RC, UC 4096, up to 1048576;\n"
		"                       UD 2048, at most the port's path MTU)\n"
		"  -m, --mtu=N          RC, UC: path MTU 256..4096 (1024)\n"
		"  -r, --rx-depth=N     receives posted at a time (500)\n"
		"  -n, --iters=N        exchanges (1000)\n"
		"  -l, --sl=N           service level (0)\n"
		"  -g, --gid-idx=N      local GID index; RoCE needs one (none)\n"
		"  --validate           check every message is size bytes of 0x7b\n"
		"  --timeout=SEC        give up after SEC seconds, 1..86400 (30)\n"
		"  --comp-vector=N      the CQ's completion vector: on a wire\n"
		"                       device of queues=Q, its queue 0..Q-1 (0)\n"
		"  -e, --events         sleep until work comes (ibv_rc_pingpong -e):\n"
		"                       on the CQ's event fd; on a wire device, in\n"
		"                       its interrupt mode (devargs rx_intr=1)\n"
		"  --gap=MS             the client waits MS ms, 1..60000, before\n"
		"                       each SEND after the first (the server\n"
		"                       answers at once) and prints each SEND's\n"
		"                       round trip to the answer (p50, p99,\n"
		"                       p99.9, max); -n at most 1000000\n"
		"  -h, --help           this text\n"
		"  Numbers are decimal digits only; each option is given once.\n",
		prog);
}

/* A number option: lib/devargs' rule (decimal digits only, no sign, no
 * 0x) within [lo, hi]. */
static int
parse_num(const char *opt, const char *s, uint32_t lo, uint32_t hi,
	  uint32_t *v)
{
	return example_opt_u32(PROG, opt, s, lo, hi, v) < 0 ? -1 : 0;
}

static int
opts_parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "dev", 1, NULL, 'D' }, { "port", 1, NULL, 'p' },
		{ "connection", 1, NULL, 'c' }, { "mtu", 1, NULL, 'm' },
		{ "size", 1, NULL, 's' }, { "rx-depth", 1, NULL, 'r' },
		{ "iters", 1, NULL, 'n' }, { "sl", 1, NULL, 'l' },
		{ "gid-idx", 1, NULL, 'g' }, { "validate", 0, NULL, 'V' },
		{ "timeout", 1, NULL, 'T' }, { "help", 0, NULL, 'h' },
		{ "comp-vector", 1, NULL, 'v' }, { "events", 0, NULL, 'e' },
		{ "gap", 1, NULL, 'G' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned char seen[256] = { 0 };
	int c, size_given = 0;
	uint32_t g;

	memset(o, 0, sizeof(*o));
	o->type = QPIO_QPT_RC;
	o->mtu = 1024;
	o->port = 18515;
	o->size = 4096;
	o->rx_depth = 500;
	o->iters = 1000;
	o->gidx = -1;
	o->timeout_s = 30;
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:m:p:s:r:n:l:g:eh", lo, NULL)) != -1) {
		/* A second value would replace the first without a word. */
		if (c != '?' && c != 'h' && example_opt_once(PROG, lo, c, seen) < 0)
			return -1;
		switch (c) {
		case 'D':
			if (example_opt_text(PROG, "--dev", optarg,
					     "DEVARGS (soft0,wire=...)") < 0)
				return -1;
			o->dev = optarg;
			break;
		case 'c':
			if (strcasecmp(optarg, "RC") == 0)
				o->type = QPIO_QPT_RC;
			else if (strcasecmp(optarg, "UC") == 0)
				o->type = QPIO_QPT_UC;
			else if (strcasecmp(optarg, "UD") == 0)
				o->type = QPIO_QPT_UD;
			else {
				fprintf(stderr, "qpio-verbs-pingpong: "
					"--connection=%s: want RC, UC or UD\n",
					optarg);
				return -1;
			}
			break;
		case 'm':
			if (parse_num("--mtu", optarg, 256, 4096, &o->mtu))
				return -1;
			if ((o->mtu & (o->mtu - 1)) != 0) {
				fprintf(stderr, "qpio-verbs-pingpong: --mtu=%u: "
					"want 256, 512, 1024, 2048 or 4096\n",
					o->mtu);
				return -1;
			}
			break;
		case 'p': if (parse_num("--port", optarg, 1, 65535, &o->port)) return -1; break;
		case 's':
			if (parse_num("--size", optarg, 0, 1048576, &o->size))
				return -1;
			size_given = 1;
			break;
		case 'r': if (parse_num("--rx-depth", optarg, 2, 8192, &o->rx_depth)) return -1; break;
		case 'n': if (parse_num("--iters", optarg, 1, 1000000000, &o->iters)) return -1; break;
		case 'l': if (parse_num("--sl", optarg, 0, 15, &o->sl)) return -1; break;
		case 'g':
			if (parse_num("--gid-idx", optarg, 0, 255, &g))
				return -1;
			o->gidx = (int32_t)g;
			break;
		case 'V': o->validate = 1; break;
		case 'e': o->events = 1; break;
		case 'T': if (parse_num("--timeout", optarg, 1, 86400, &o->timeout_s)) return -1; break;
		case 'v': if (parse_num("--comp-vector", optarg, 0, 1023, &o->comp_vector)) return -1; break;
		case 'G': if (parse_num("--gap", optarg, 1, 60000, &o->gap_ms)) return -1; break;
		case 'h': usage(stdout, argv[0]); exit(0);
		default: usage(stderr, argv[0]); return -1;
		}
	}
	if (optind == argc - 1)
		o->server = argv[optind];
	else if (optind < argc) {
		fprintf(stderr, "qpio-verbs-pingpong: one server name at most, "
			"got '%s' and '%s'\n", argv[optind], argv[optind + 1]);
		return -1;
	}
	if (o->gap_ms != 0 && o->server == NULL) {
		fprintf(stderr, "qpio-verbs-pingpong: --gap is the client's "
			"(it paces the SENDs the server answers): give it with "
			"a server name\n");
		return -1;
	}
	if (o->gap_ms != 0 && o->iters > 1000000) {
		fprintf(stderr, "qpio-verbs-pingpong: --gap keeps each "
			"exchange's round trip (8 bytes each): -n at most "
			"1000000 with it, got %u\n", o->iters);
		return -1;
	}
	/* the client's pauses alone take (iters - 1) x gap: a --timeout
	 * that cannot be met is refused here, not after it ran out */
	if (o->gap_ms != 0 && (uint64_t)o->gap_ms * (o->iters - 1) >=
	    (uint64_t)o->timeout_s * 1000) {
		fprintf(stderr, "qpio-verbs-pingpong: --gap=%u with -n %u "
			"pauses %" PRIu64 " ms, not less than --timeout=%u s: "
			"give a longer --timeout (the server's too)\n",
			o->gap_ms, o->iters,
			(uint64_t)o->gap_ms * (o->iters - 1), o->timeout_s);
		return -1;
	}
	if (o->type == QPIO_QPT_UD && !size_given)
		o->size = 2048;   /* ibv_ud_pingpong's */
	if (o->dev == NULL) {
		fprintf(stderr, "qpio-verbs-pingpong: --dev DEVARGS is required "
			"(soft0,wire=<ethdev>,ip=<IPv4>)\n");
		return -1;
	}
	return 0;
}

/* The tool's wire form of an address. */
static void
dest_format(const struct dest *d, char msg[MSG_LEN])
{
	char gid[33];
	unsigned int i;

	for (i = 0; i < 16; i++)
		snprintf(gid + 2 * i, 3, "%02x", d->gid[i]);
	snprintf(msg, MSG_LEN, "%04x:%06x:%06x:%s", d->lid, d->qpn, d->psn, gid);
}

static int
dest_parse(const char *msg, struct dest *d)
{
	char gid[33];
	unsigned int i;

	if (memchr(msg, '\0', MSG_LEN) == NULL ||
	    sscanf(msg, "%x:%x:%x:%32s", &d->lid, &d->qpn, &d->psn, gid) != 4 ||
	    strlen(gid) != 32) {
		fprintf(stderr, "qpio-verbs-pingpong: the peer's address '%.*s' is "
			"not LLLL:QQQQQQ:PPPPPP:<32 hex digits>\n", MSG_LEN, msg);
		return -1;
	}
	for (i = 0; i < 16; i++) {
		unsigned int b;

		if (sscanf(gid + 2 * i, "%2x", &b) != 1)
			return -1;
		d->gid[i] = (uint8_t)b;
	}
	return 0;
}

/* What the exchange waits with: the device, whose progress step keeps
 * running (a wire device answers the peer's ARP while the exchange
 * waits: the peer's address handle may need it before it answers), and
 * the TSC deadline of the whole exchange. */
struct waiter {
	struct qpio_device *dev;
	uint64_t deadline;
};

/* Wait until fd is ready for events. @return 0, or -1 at the deadline. */
static int
fd_wait(const struct waiter *w, int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	for (;;) {
		int n = poll(&p, 1, 1);

		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -1;
		qpio_soft_wire_progress(w->dev);
		if (rte_get_tsc_cycles() > w->deadline) {
			fprintf(stderr, "qpio-verbs-pingpong: the peer did not "
				"answer in time\n");
			return -1;
		}
	}
}

static int
full_io(const struct waiter *w, int fd, void *buf, size_t len, int wr)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n;

		if (fd_wait(w, fd, wr ? POLLOUT : POLLIN) != 0)
			return -1;
		n = wr ? write(fd, (char *)buf + off, len - off) :
			read(fd, (char *)buf + off, len - off);
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

struct ctx;
static int ctx_connect(struct ctx *c, const struct dest *rem);

/* The exchange: @return 0 and *rem, or -1 (said why). A server connects
 * its QP to the client's before it answers (the client sends as soon as
 * it has the answer), as the tools' servers do. */
static int
exchange(const struct opts *o, struct qpio_device *dev, struct ctx *c,
	 const struct dest *me, struct dest *rem)
{
	struct waiter w = {
		.dev = dev,
		.deadline = rte_get_tsc_cycles() +
			(uint64_t)o->timeout_s * rte_get_tsc_hz(),
	};
	struct addrinfo hints, *res, *t;
	char svc[8], msg[MSG_LEN];
	int fd = -1, lfd, one = 1, ret = -1;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (o->server == NULL)
		hints.ai_flags = AI_PASSIVE;
	snprintf(svc, sizeof(svc), "%u", o->port);
	if (getaddrinfo(o->server, svc, &hints, &res) != 0) {
		fprintf(stderr, "qpio-verbs-pingpong: cannot resolve %s:%u\n",
			o->server != NULL ? o->server : "*", o->port);
		return -1;
	}
	for (t = res; t != NULL; t = t->ai_next) {
		fd = socket(t->ai_family, t->ai_socktype, t->ai_protocol);
		if (fd < 0)
			continue;
		if (o->server != NULL) {
			unsigned int refused = 0;
			int r;

			/* a server that is not listening yet (started just
			 * before): asked again every 10 ms until --timeout,
			 * said once at the first refusal and counted after */
			while ((r = connect(fd, t->ai_addr, t->ai_addrlen)) != 0 &&
			       errno == ECONNREFUSED && t->ai_next == NULL &&
			       rte_get_tsc_cycles() < w.deadline) {
				if (refused++ == 0) {
					printf("connect: %s:%u not listening yet; asking again every 10 ms for up to %u s\n",
					       o->server, o->port, o->timeout_s);
					fflush(stdout);
				}
				rte_delay_us_sleep(10000);
			}
			if (r == 0 && refused > 0) {
				printf("connect: connected after %u refusals\n",
				       refused);
				fflush(stdout);
			}
			if (r == 0)
				break;
		} else {
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (bind(fd, t->ai_addr, t->ai_addrlen) == 0)
				break;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		fprintf(stderr, "qpio-verbs-pingpong: cannot %s port %u: %s\n",
			o->server != NULL ? "connect to" : "listen on", o->port,
			strerror(errno));
		return -1;
	}
	if (o->server == NULL) {
		lfd = fd;
		listen(lfd, 1);
		if (fd_wait(&w, lfd, POLLIN) != 0) {
			close(lfd);
			return -1;
		}
		fd = accept(lfd, NULL, NULL);
		close(lfd);
		if (fd < 0)
			return -1;
	}
	dest_format(me, msg);
	if (o->server != NULL) {
		if (full_io(&w, fd, msg, MSG_LEN, 1) ||
		    full_io(&w, fd, msg, MSG_LEN, 0) || dest_parse(msg, rem) ||
		    full_io(&w, fd, (char *)"done", 5, 1))
			goto out;
	} else {
		char peer[MSG_LEN];

		if (full_io(&w, fd, peer, MSG_LEN, 0) || dest_parse(peer, rem) ||
		    ctx_connect(c, rem) != 0 || full_io(&w, fd, msg, MSG_LEN, 1))
			goto out;
		/* the client's "done" (or its close) */
		if (fd_wait(&w, fd, POLLIN) != 0 || read(fd, msg, MSG_LEN) < 0)
			goto out;
	}
	ret = 0;
out:
	if (ret != 0)
		fprintf(stderr, "qpio-verbs-pingpong: the address exchange "
			"failed\n");
	close(fd);
	return ret;
}

static int
cycles_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* --gap, client: the n round trips (TSC cycles from a SEND's post to the
 * completion of the answer's receive), sorted in place, as microseconds:
 * p50, p99, p99.9 (the nearest rank) and the worst. */
static void
rtt_print(uint64_t *rtt, uint32_t n)
{
	const double us = 1e6 / (double)rte_get_tsc_hz();

	if (n == 0)
		return;
	qsort(rtt, n, sizeof(*rtt), cycles_cmp);
#define RANK(p) rtt[(uint32_t)(((uint64_t)n * (p) + 999) / 1000) - 1]
	printf("rtt: p50 %.2f usec, p99 %.2f, p99.9 %.2f, max %.2f over %u "
	       "exchanges\n", (double)RANK(500) * us, (double)RANK(990) * us,
	       (double)RANK(999) * us, (double)rtt[n - 1] * us, n);
#undef RANK
}

/* Microseconds from a to b. */
static double
tv_usec_between(const struct timeval *a, const struct timeval *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e6 +
		(double)(b->tv_usec - a->tv_usec);
}

/* A soft wire device's counters, one line, and the QP's retries of the
 * transport (nothing for other devices). */
static void
wire_stats_print(const struct qpio_device *dev, const struct qpio_qp *qp)
{
	struct qpio_soft_wire_stats w;
	struct qpio_soft_qp_stats q;

	if (qpio_soft_wire_stats_get(dev, &w) != 0)
		return;
	if (qpio_soft_qp_stats(qp, &q) == 0)
		printf("qp: transport_retries %" PRIu64 " rnr_naks %" PRIu64
		       "\n", q.transport_retries, q.rnr_naks);
	printf("wire: rx_packets %" PRIu64 " tx_packets %" PRIu64
	       " arp_rx %" PRIu64 " arp_tx %" PRIu64 " rx_bad_icrc %" PRIu64
	       " rx_no_qp %" PRIu64 " rx_not_roce %" PRIu64 " tx_no_neigh %"
	       PRIu64 " tx_dropped %" PRIu64 " nd_rx %" PRIu64 " nd_tx %"
	       PRIu64 " tx_no_route %" PRIu64 " rx_other_vlan %" PRIu64
	       " rx_truncated %" PRIu64 " rx_oversize %" PRIu64 " rx_bad_ip %"
	       PRIu64 " rx_bad_udp %" PRIu64 " rx_not_mine %" PRIu64
	       " intr_sleeps %" PRIu64 " intr_spin_takes %" PRIu64 "\n",
	       w.rx_packets, w.tx_packets, w.arp_rx, w.arp_tx, w.rx_bad_icrc,
	       w.rx_no_qp, w.rx_not_roce, w.tx_no_neigh, w.tx_dropped,
	       w.nd_rx, w.nd_tx, w.tx_no_route, w.rx_other_vlan,
	       w.rx_truncated, w.rx_oversize, w.rx_bad_ip, w.rx_bad_udp,
	       w.rx_not_mine, w.intr_sleeps, w.intr_spin_takes);
	/* a device of several queues (queues=): each one's share */
	if (qpio_soft_wire_queue_stats_get(dev, 1, &w) != 0)
		return;
	for (unsigned int i = 0;
	     qpio_soft_wire_queue_stats_get(dev, i, &w) == 0; i++)
		printf("wire queue %u: rx_packets %" PRIu64 " tx_packets %"
		       PRIu64 " rx_steered %" PRIu64 " rx_steer_dropped %"
		       PRIu64 "\n", i, w.rx_packets, w.tx_packets,
		       w.rx_steered, w.rx_steer_dropped);
}

/* One end: its device, objects and the WRs it posts again and again. */
struct ctx {
	const struct opts *o;
	struct qpio_device *dev;
	struct qpio_pd *pd;
	struct qpio_mr *mr;
	struct qpio_cq *cq;
	struct qpio_qp *qp;
	struct qpio_ah *ah;
	uint8_t *buf;
	uint32_t grh;            /* 40 on UD: the receive's GRH space */
	uint32_t psn;
	struct qpio_sge rsge, ssge;
	struct qpio_recv_wr rwr;
	struct qpio_send_wr swr;
};

/*
 * The peer's last message may have landed here while the ACK of it was
 * lost on the wire: the peer sends it again after its ACK timeout, and
 * only a QP that is still there answers (a duplicate is ACKed again, IBA
 * 9.9.2). As TCP's TIME_WAIT, an RC QP on a wire device keeps answering
 * for LINGER_MS after the last message before it goes; without it the
 * peer retries into a destroyed QP until its retry count runs out.
 */
#define LINGER_MS 500
static void
linger(const struct ctx *c)
{
	struct qpio_soft_wire_stats w;
	uint64_t end;

	if (c->o->type != QPIO_QPT_RC ||
	    qpio_soft_wire_stats_get(c->dev, &w) != 0)
		return;
	end = rte_get_tsc_cycles() + rte_get_tsc_hz() * LINGER_MS / 1000;
	while (rte_get_tsc_cycles() < end)
		qpio_soft_wire_progress(c->dev);
}

/* The address handle attributes of the tools' pp_connect_ctx(): global
 * (hop limit 1, the local GID index) when the peer's GID has an
 * interface id. */
static void
ah_attr_of(const struct ctx *c, const struct dest *rem, struct qpio_ah_attr *aa)
{
	unsigned int i;

	memset(aa, 0, sizeof(*aa));
	aa->dlid = (uint16_t)rem->lid;
	aa->sl = (uint8_t)c->o->sl;
	aa->port_num = 1;
	for (i = 8; i < 16 && rem->gid[i] == 0; i++)
		;
	if (i < 16) {
		aa->is_global = 1;
		aa->grh.hop_limit = 1;
		memcpy(aa->grh.dgid.raw, rem->gid, 16);
		aa->grh.sgid_index = (uint8_t)(c->o->gidx >= 0 ? c->o->gidx : 0);
	}
}

/* To the peer rem: UD an address handle; RC and UC RTR and RTS with the
 * tools' attributes (rc_pingpong: min_rnr_timer 12, timeout 14,
 * retry_cnt 7, rnr_retry 7, one READ/atomic each way). */
static int
ctx_connect(struct ctx *c, const struct dest *rem)
{
	struct qpio_qp_attr qa;
	int rc = c->o->type == QPIO_QPT_RC;

	memset(&qa, 0, sizeof(qa));
	if (c->o->type == QPIO_QPT_UD) {
		ah_attr_of(c, rem, &qa.ah_attr);
		c->ah = qpio_ah_create(c->pd, &qa.ah_attr);
		if (c->ah == NULL) {
			fprintf(stderr, "qpio-verbs-pingpong: ah: %s\n",
				rte_strerror(rte_errno));
			return -1;
		}
		c->swr.wr.ud.ah = c->ah;
		c->swr.wr.ud.remote_qpn = rem->qpn;
		c->swr.wr.ud.remote_qkey = QKEY;
		return 0;
	}
	qa.qp_state = QPIO_QPS_RTR;
	qa.path_mtu = (enum qpio_mtu)(rte_log2_u32(c->o->mtu) - 7);
	qa.dest_qp_num = rem->qpn;
	qa.rq_psn = rem->psn;
	qa.max_dest_rd_atomic = 1;
	qa.min_rnr_timer = 12;
	ah_attr_of(c, rem, &qa.ah_attr);
	if (qpio_qp_modify(c->qp, &qa, QPIO_QP_STATE | QPIO_QP_AV |
			   QPIO_QP_PATH_MTU | QPIO_QP_DEST_QPN |
			   QPIO_QP_RQ_PSN | (rc ? QPIO_QP_MAX_DEST_RD_ATOMIC |
					     QPIO_QP_MIN_RNR_TIMER : 0)) != 0) {
		fprintf(stderr, "qpio-verbs-pingpong: Failed to modify QP to "
			"RTR\n");
		return -1;
	}
	qa.qp_state = QPIO_QPS_RTS;
	qa.sq_psn = c->psn;
	qa.timeout = 14;
	qa.retry_cnt = 7;
	qa.rnr_retry = 7;
	qa.max_rd_atomic = 1;
	if (qpio_qp_modify(c->qp, &qa, QPIO_QP_STATE | QPIO_QP_SQ_PSN |
			   (rc ? QPIO_QP_TIMEOUT | QPIO_QP_RETRY_CNT |
			    QPIO_QP_RNR_RETRY | QPIO_QP_MAX_QP_RD_ATOMIC : 0)) != 0) {
		fprintf(stderr, "qpio-verbs-pingpong: Failed to modify QP to "
			"RTS\n");
		return -1;
	}
	return 0;
}

/* Device, PD, buffer, MR, CQ, QP in INIT (UD: in RTS, which needs nothing
 * of the peer, so that the peer's first datagram finds it receiving).
 * @return 0 or -1 (said why). */
static int
ctx_init(struct ctx *c, const struct opts *o)
{
	struct qpio_qp_init_attr ia;
	struct qpio_qp_attr qa;
	struct qpio_port_attr pa;
	int ud = o->type == QPIO_QPT_UD;
	uint32_t len;

	memset(c, 0, sizeof(*c));
	c->o = o;
	c->grh = ud ? 40 : 0;
	len = o->size + c->grh;
	c->dev = qpio_rdma_dev_create(o->dev);
	if (c->dev == NULL) {
		fprintf(stderr, "qpio-verbs-pingpong: --dev %s: %s\n", o->dev,
			rte_strerror(rte_errno));
		return -1;
	}
	if (qpio_rdma_port_query(c->dev, 1, &pa) != 0)
		return -1;
	if (ud && o->size > (256u << (pa.active_mtu - 1))) {
		fprintf(stderr, "qpio-verbs-pingpong: --size %u is larger than "
			"the port's path MTU (%u)\n", o->size,
			256u << (pa.active_mtu - 1));
		return -1;
	}
	c->buf = rte_zmalloc("verbs_pingpong", RTE_MAX(len, 1u), 64);
	c->pd = qpio_pd_alloc(c->dev);
	if (c->buf == NULL || c->pd == NULL)
		return -1;
	memset(c->buf, 0x7b, len);
	c->mr = qpio_mr_reg(c->pd, c->buf, RTE_MAX(len, 1u),
			    QPIO_ACCESS_LOCAL_WRITE);
	{
		struct qpio_cq_init_attr ca = { .cqe = o->rx_depth + 1,
						.socket_id = SOCKET_ID_ANY,
						.comp_vector = o->comp_vector };

		c->cq = qpio_cq_create_ex(c->dev, &ca);
	}
	if (c->mr == NULL || c->cq == NULL) {
		fprintf(stderr, "qpio-verbs-pingpong: mr or cq: %s\n",
			rte_strerror(rte_errno));
		return -1;
	}
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = c->cq;
	ia.recv_cq = c->cq;
	ia.qp_type = o->type;
	ia.cap.max_send_wr = 1;
	ia.cap.max_recv_wr = o->rx_depth;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	c->qp = qpio_qp_create(c->pd, &ia);
	if (c->qp == NULL) {
		fprintf(stderr, "qpio-verbs-pingpong: qp: %s\n",
			rte_strerror(rte_errno));
		return -1;
	}
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = QPIO_QPS_INIT;
	qa.port_num = 1;
	qa.qkey = QKEY;
	if (qpio_qp_modify(c->qp, &qa, QPIO_QP_STATE | QPIO_QP_PKEY_INDEX |
			   QPIO_QP_PORT | (ud ? QPIO_QP_QKEY :
					   QPIO_QP_ACCESS_FLAGS)) != 0)
		return -1;
	c->psn = (uint32_t)(rte_rdtsc() & 0xffffff);
	if (ud) {
		qa.qp_state = QPIO_QPS_RTR;
		if (qpio_qp_modify(c->qp, &qa, QPIO_QP_STATE) != 0)
			return -1;
		qa.qp_state = QPIO_QPS_RTS;
		qa.sq_psn = c->psn;
		if (qpio_qp_modify(c->qp, &qa, QPIO_QP_STATE |
				   QPIO_QP_SQ_PSN) != 0)
			return -1;
	}
	c->rsge.addr = (uintptr_t)c->buf;
	c->rsge.length = len;
	c->rsge.lkey = qpio_mr_lkey(c->mr);
	c->rwr.wr_id = RECV_WRID;
	c->rwr.sg_list = &c->rsge;
	c->rwr.num_sge = 1;
	c->ssge.addr = (uintptr_t)c->buf + c->grh;
	c->ssge.length = o->size;
	c->ssge.lkey = qpio_mr_lkey(c->mr);
	c->swr.wr_id = SEND_WRID;
	c->swr.sg_list = &c->ssge;
	c->swr.num_sge = 1;
	c->swr.opcode = QPIO_WR_SEND;
	c->swr.send_flags = QPIO_SEND_SIGNALED;
	return 0;
}

static uint32_t
post_recvs(struct ctx *c, uint32_t n)
{
	uint32_t i;
	int err;

	for (i = 0; i < n; i++)
		if (qpio_qp_post_recv(c->qp, &c->rwr, 1, &err) != 1)
			break;
	return i;
}

/* Post the SEND; timed (--gap, client): its time in *t_post first, for
 * its round trip. @return 0, or -1 (said). */
static int
send_post(struct ctx *c, int timed, uint64_t *t_post)
{
	int err;

	if (timed)
		*t_post = rte_get_tsc_cycles();
	if (qpio_qp_post_send(c->qp, &c->swr, 1, &err) != 1) {
		fprintf(stderr, "Couldn't post send\n");
		return -1;
	}
	return 0;
}

/* --events: nothing polled, so sleep until work comes, at most ms.
 * A soft wire device (wire) sleeps in its interrupt mode (the frames
 * must be received to become completions; the caller polls after each
 * return); any other device on its CQ's event fd, as ibv_rc_pingpong -e
 * does, the CQ armed and polled once more by the caller first.
 * @return 0, or -1 (the error printed). */
static int
sleep_for_work(struct qpio_device *dev, struct qpio_cq *cq, uint32_t vector,
	       int wire, int ms, uint32_t *sleeps)
{
	struct pollfd pfd;
	int r;

	(*sleeps)++;
	if (wire) {
		r = qpio_soft_wire_queue_wait(dev, vector, ms);
		if (r < 0 && r != -EINTR) {
			fprintf(stderr, "qpio-verbs-pingpong: --events: %s\n",
				strerror(-r));
			return -1;
		}
		return 0;
	}
	pfd.fd = qpio_cq_event_fd(cq);
	if (pfd.fd < 0) {
		fprintf(stderr, "qpio-verbs-pingpong: --events: the device "
			"has no CQ events: %s\n", strerror(-pfd.fd));
		return -1;
	}
	pfd.events = POLLIN;
	if (poll(&pfd, 1, ms) > 0)
		(void)qpio_cq_ack_events(cq);
	return 0;
}

int
main(int argc, char **argv)
{
	struct dest me, rem;
	struct opts o;
	struct ctx c = { 0 };
	struct timeval t0, t1;
	struct rusage ru0, ru1;
	uint32_t routs, rcnt = 0, scnt = 0, pending, i, bad = 0, sleeps = 0;
	int last_unacked = 0, wire_events = 0;
	uint64_t deadline, post_at = 0, t_post = 0, gap_tsc = 0;
	uint64_t *rtt = NULL;   /* --gap, client: cycles of each round trip */
	char gs[INET6_ADDRSTRLEN];
	struct qpio_port_attr pa;
	int ret, sep, app_argc;
	char **app_argv;

	/* a peer that is gone (the TCP exchange's, a vhost-user backend's
	 * socket under net_virtio_user) is an error to report, not a
	 * signal that ends the process before its counters are printed */
	signal(SIGPIPE, SIG_IGN);
	/* The options after "--" are read before EAL starts, so a refused
	 * line sets up nothing. */
	sep = example_args_split(argc, argv, &app_argc, &app_argv);
	app_argv[0] = (char *)PROG;
	if (opts_parse(app_argc, app_argv, &o) != 0)
		return 2;
	ret = rte_eal_init(sep, argv);
	if (ret < 0) {
		fprintf(stderr, "qpio-verbs-pingpong: EAL: %s\n",
			rte_strerror(rte_errno));
		qpio_eal_init_failed();
		return 1;
	}
	if (ctx_init(&c, &o) != 0)
		goto fail;
	if (o.events) {
		struct qpio_device_attr da;
		int t = qpio_soft_wire_queue_timeout(c.dev, o.comp_vector);

		/* a soft wire device sleeps in its interrupt mode, which
		 * needs rx_intr=1; any other device on its CQ's event fd */
		wire_events = t != -EINVAL && t != -ENODEV;
		if (t == -EOPNOTSUPP) {
			fprintf(stderr, "qpio-verbs-pingpong: --events on a soft "
				"wire device needs its devargs rx_intr=1 (and a "
				"PMD with rx queue interrupts: net_vhost, "
				"net_virtio_user, virtio)\n");
			goto fail;
		}
		/* one lcore sleeps on one queue: the others' port queues
		 * would go unread (a soft wire device of queues=N needs an
		 * lcore on each) */
		if (wire_events && qpio_rdma_dev_query(c.dev, &da) == 0 &&
		    da.num_comp_vectors > 1) {
			fprintf(stderr, "qpio-verbs-pingpong: --events on a "
				"soft wire device of %d queues: this program "
				"has one lcore, and a sleeping lcore reads only "
				"its own queue; give queues=1\n",
				(int)da.num_comp_vectors);
			goto fail;
		}
	}
	routs = post_recvs(&c, o.rx_depth);
	if (routs < o.rx_depth) {
		fprintf(stderr, "Couldn't post receive (%u)\n", routs);
		goto fail;
	}
	memset(&me, 0, sizeof(me));
	if (qpio_rdma_port_query(c.dev, 1, &pa) != 0)
		goto fail;
	me.lid = pa.lid;
	me.qpn = qpio_qp_num(c.qp);
	me.psn = c.psn;
	if (o.gidx >= 0 &&
	    qpio_rdma_gid_query(c.dev, 1, (unsigned int)o.gidx,
				(union qpio_gid *)me.gid) != 0) {
		fprintf(stderr, "qpio-verbs-pingpong: no GID at index %d\n",
			o.gidx);
		goto fail;
	}
	inet_ntop(AF_INET6, me.gid, gs, sizeof(gs));
	printf("  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n",
	       me.lid, me.qpn, me.psn, gs);
	fflush(stdout);
	if (exchange(&o, c.dev, &c, &me, &rem) != 0)
		goto fail;
	inet_ntop(AF_INET6, rem.gid, gs, sizeof(gs));
	printf("  remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n",
	       rem.lid, rem.qpn, rem.psn, gs);
	fflush(stdout);
	if (o.server != NULL && ctx_connect(&c, &rem) != 0)
		goto fail;

	if (o.gap_ms != 0 && o.server != NULL) {
		gap_tsc = (uint64_t)o.gap_ms * rte_get_tsc_hz() / 1000;
		rtt = calloc(o.iters, sizeof(*rtt));
		if (rtt == NULL) {
			fprintf(stderr, "qpio-verbs-pingpong: --gap: no memory "
				"for %u round trips\n", o.iters);
			goto fail;
		}
	}
	pending = RECV_WRID;
	if (o.server != NULL) {
		if (send_post(&c, rtt != NULL, &t_post) != 0)
			goto fail;
		pending |= SEND_WRID;
	}
	getrusage(RUSAGE_SELF, &ru0);
	gettimeofday(&t0, NULL);
	deadline = rte_get_tsc_cycles() + (uint64_t)o.timeout_s * rte_get_tsc_hz();
	while (rcnt < o.iters || scnt < o.iters) {
		struct qpio_wc wc[2];
		uint16_t ne;

		/* --gap: the client's next SEND, once its pause is over */
		if (post_at != 0 && rte_get_tsc_cycles() >= post_at) {
			post_at = 0;
			if (send_post(&c, rtt != NULL, &t_post) != 0)
				goto fail;
			pending = RECV_WRID | SEND_WRID;
		}
		ne = qpio_cq_poll(c.cq, wc, 2);
		if (ne == 0 && o.events) {
			/* arm, look once more, sleep (ibv_req_notify_cq's
			 * rule): at most to the deadline, or (--gap) to the
			 * next SEND, rounded up to a whole ms */
			uint64_t now = rte_get_tsc_cycles();
			uint64_t hz = rte_get_tsc_hz();
			int ms = now >= deadline ? 0 : (int)((deadline - now) *
				1000 / hz) + 1;

			if (post_at != 0)
				ms = now >= post_at ? 0 : (int)RTE_MIN(
					(uint64_t)ms, ((post_at - now) * 1000 +
						       hz - 1) / hz);

			/* the CQ's event wakes a sleeper on its fd; a wire
			 * device's wait watches its port queue instead, and
			 * returns when its steps may have written completions:
			 * no arm there (an armed CQ costs an eventfd write a
			 * completion and a read a wait, the exchange's time
			 * twice over back to back) */
			if (!wire_events) {
				if (qpio_cq_req_notify(c.cq, 0) != 0) {
					fprintf(stderr, "Couldn't request CQ "
						"notification\n");
					goto fail;
				}
				ne = qpio_cq_poll(c.cq, wc, 2);
			}
			if (ne == 0 && sleep_for_work(c.dev, c.cq,
						      o.comp_vector,
						      wire_events, ms,
						      &sleeps) != 0)
				goto fail;
		}
		if (ne == 0 && rte_get_tsc_cycles() > deadline) {
			fprintf(stderr, "qpio-verbs-pingpong: timeout after %u "
				"s: %u of %u received, %u sent\n", o.timeout_s,
				rcnt, o.iters, scnt);
			goto fail;
		}
		for (i = 0; i < ne; i++) {
			/* The last SEND's ACK lost and the peer gone: the
			 * tools close at their last completion, so nobody
			 * answers it again (see the end) */
			if (wc[i].status == QPIO_WC_RETRY_EXC_ERR &&
			    wc[i].wr_id == SEND_WRID && scnt + 1 == o.iters &&
			    rcnt == o.iters) {
				last_unacked = 1;
				scnt++;
				break;  /* the rest: flushed receives */
			}
			if (wc[i].status != QPIO_WC_SUCCESS) {
				fprintf(stderr, "Failed status %s (%d) for "
					"wr_id %d\n",
					qpio_wc_status_str(wc[i].status),
					(int)wc[i].status, (int)wc[i].wr_id);
				goto fail;
			}
			if (wc[i].wr_id == SEND_WRID) {
				scnt++;
			} else if (wc[i].wr_id == RECV_WRID) {
				if (o.validate) {
					uint32_t k;

					if (wc[i].byte_len != o.size + c.grh)
						bad++;
					for (k = c.grh; k < o.size + c.grh; k++)
						if (c.buf[k] != 0x7b) {
							bad++;
							break;
						}
				}
				if (--routs <= 1)
					routs += post_recvs(&c, o.rx_depth - routs);
				if (rtt != NULL && rcnt < o.iters)
					rtt[rcnt] = rte_get_tsc_cycles() - t_post;
				rcnt++;
			} else {
				fprintf(stderr, "Completion for unknown wr_id "
					"%d\n", (int)wc[i].wr_id);
				goto fail;
			}
			pending &= ~(uint32_t)wc[i].wr_id;
			if (scnt < o.iters && pending == 0 && post_at == 0 &&
			    gap_tsc != 0) {
				/* --gap: pending stays 0 until post_at's SEND */
				post_at = rte_get_tsc_cycles() + gap_tsc;
			} else if (scnt < o.iters && pending == 0 &&
				   post_at == 0) {
				if (send_post(&c, rtt != NULL, &t_post) != 0)
					goto fail;
				pending = RECV_WRID | SEND_WRID;
			}
		}
	}
	gettimeofday(&t1, NULL);
	getrusage(RUSAGE_SELF, &ru1);
	{
		double usec = tv_usec_between(&t0, &t1);
		double user = tv_usec_between(&ru0.ru_utime, &ru1.ru_utime);
		double sys = tv_usec_between(&ru0.ru_stime, &ru1.ru_stime);
		long long bytes = (long long)o.size * o.iters * 2;

		printf("%lld bytes in %.2f seconds = %.2f Mbit/sec\n", bytes,
		       usec / 1e6, (double)bytes * 8. / usec);
		printf("%u iters in %.2f seconds = %.2f usec/iter\n", o.iters,
		       usec / 1e6, usec / o.iters);
		/* what the exchange cost the process's CPUs (every thread:
		 * the lcore, EAL's and the PMD's), beside its wall time */
		printf("cpu: %.3f s user, %.3f s sys = %.2f usec/iter, %.1f %% "
		       "of one CPU\n", user / 1e6, sys / 1e6,
		       (user + sys) / o.iters,
		       usec > 0 ? (user + sys) * 100. / usec : 0.);
	}
	linger(&c);
	if (o.events)
		printf("events: waited %u times\n", sleeps);
	if (rtt != NULL)
		rtt_print(rtt, rcnt);
	wire_stats_print(c.dev, c.qp);
	if (o.validate) {
		printf("validate: %u of %u messages wrong\n", bad, rcnt);
		if (bad != 0)
			goto fail;
	}
	/* The client's last SEND is the peer's cue for its last one: that
	 * one arrived, so ours did. The server's last SEND is the last
	 * message of all: only the peer knows (exit 3). */
	if (last_unacked && o.server != NULL)
		printf("last SEND: no ACK before the peer closed; the peer's "
		       "last message, sent only once ours arrived, says it "
		       "did\n");
	else if (last_unacked) {
		printf("last SEND: no ACK before the peer closed (it closes at "
		       "its last completion, so a lost ACK is not sent again); "
		       "whether it arrived, only the peer's output says\n");
		free(rtt);
		qpio_eal_cleanup();
		return 3;
	}
	if (c.ah != NULL)
		qpio_ah_destroy(c.ah);
	qpio_qp_destroy(c.qp);
	qpio_cq_destroy(c.cq);
	qpio_mr_dereg(c.mr);
	qpio_pd_free(c.pd);
	rte_free(c.buf);
	free(rtt);
	qpio_rdma_dev_close(c.dev);
	qpio_eal_cleanup();
	return 0;
fail:
	free(rtt);
	/* what the wire saw, to tell why */
	if (c.dev != NULL && c.qp != NULL)
		wire_stats_print(c.dev, c.qp);
	/* the process ends: the device's objects go with it */
	qpio_eal_cleanup();
	return 1;
}
