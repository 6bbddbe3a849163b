/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-ud-pingpong: ibverbs-utils' ibv_ud_pingpong on a qpio device, so
 * that either end of a UD ping-pong may be the unmodified tool on a kernel
 * RDMA device (Soft-RoCE, a RoCE NIC) and the other a qpio soft device on
 * the wire (doc/guides/sample_app_ug/ud_pingpong.rst).
 *
 * It speaks the tool's exchange (libibverbs/examples/ud_pingpong.c of
 * rdma-core): over TCP (port 18515), each side sends its address as the
 * 52-byte string "LLLL:QQQQQQ:PPPPPP:<32 hex digits of the GID>" with its
 * NUL (the client first, then the server); the client then writes
 * "done". Then the client sends first, and each side sends its next
 * message once its last send and its next receive have completed, iters
 * times. Messages are size bytes of 0x7b from offset 40 of a buffer of
 * size + 40 bytes; --validate checks every received one is 0x7b bytes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "qpio_devargs.h"
#include "qpio_rdma.h"
#include "qpio_soft.h"

#define QKEY       0x11111111u
#define RECV_WRID  1u
#define SEND_WRID  2u
#define MSG_LEN    52   /* sizeof "0000:000000:000000:" + 32 hex + NUL */

struct opts {
	const char *dev;
	const char *server;      /* client mode when set */
	uint32_t port;
	uint32_t size;
	uint32_t rx_depth;
	uint32_t iters;
	uint32_t sl;
	int32_t gidx;
	uint32_t timeout_s;
	int validate;
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
		"  ibv_ud_pingpong's exchange and traffic on a qpio device;\n"
		"  with a server name, the client (as ibv_ud_pingpong <host>)\n"
		"  --dev DEVARGS        the qpio device (soft0,wire=...,ip=...)\n"
		"  -p, --port=N         TCP port of the exchange (18515)\n"
		"  -s, --size=N         message bytes (2048; at most the path MTU)\n"
		"  -r, --rx-depth=N     receives posted at a time (500)\n"
		"  -n, --iters=N        exchanges (1000)\n"
		"  -l, --sl=N           service level (0)\n"
		"  -g, --gid-idx=N      local GID index; RoCE needs one (none)\n"
		"  --validate           check every message is size bytes of 0x7b\n"
		"  --timeout=SEC        give up after SEC seconds (30)\n",
		prog);
}

/* A number option: lib/devargs' rule (decimal digits only, no sign, no
 * 0x) within [lo, hi]. */
static int
parse_num(const char *opt, const char *s, uint32_t lo, uint32_t hi,
	  uint32_t *v)
{
	if (qpio_devargs_parse_u32(s, lo, hi, v) != 0) {
		fprintf(stderr, "qpio-ud-pingpong: %s=%s: want a decimal number "
			"in [%u, %u]\n", opt, s, lo, hi);
		return -1;
	}
	return 0;
}

static int
opts_parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "dev", 1, NULL, 'D' }, { "port", 1, NULL, 'p' },
		{ "size", 1, NULL, 's' }, { "rx-depth", 1, NULL, 'r' },
		{ "iters", 1, NULL, 'n' }, { "sl", 1, NULL, 'l' },
		{ "gid-idx", 1, NULL, 'g' }, { "validate", 0, NULL, 'V' },
		{ "timeout", 1, NULL, 'T' }, { "help", 0, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t g;
	int c;

	memset(o, 0, sizeof(*o));
	o->port = 18515;
	o->size = 2048;
	o->rx_depth = 500;
	o->iters = 1000;
	o->gidx = -1;
	o->timeout_s = 30;
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:s:r:n:l:g:h", lo, NULL)) != -1) {
		switch (c) {
		case 'D': o->dev = optarg; break;
		case 'p': if (parse_num("--port", optarg, 1, 65535, &o->port)) return -1; break;
		case 's': if (parse_num("--size", optarg, 0, 4096, &o->size)) return -1; break;
		case 'r': if (parse_num("--rx-depth", optarg, 2, 8192, &o->rx_depth)) return -1; break;
		case 'n': if (parse_num("--iters", optarg, 1, 1000000000, &o->iters)) return -1; break;
		case 'l': if (parse_num("--sl", optarg, 0, 15, &o->sl)) return -1; break;
		case 'g':
			if (parse_num("--gid-idx", optarg, 0, 255, &g))
				return -1;
			o->gidx = (int32_t)g;
			break;
		case 'V': o->validate = 1; break;
		case 'T': if (parse_num("--timeout", optarg, 1, 86400, &o->timeout_s)) return -1; break;
		case 'h': usage(stdout, argv[0]); exit(0);
		default: usage(stderr, argv[0]); return -1;
		}
	}
	if (optind == argc - 1)
		o->server = argv[optind];
	else if (optind < argc) {
		fprintf(stderr, "qpio-ud-pingpong: one server name at most, "
			"got '%s' and '%s'\n", argv[optind], argv[optind + 1]);
		return -1;
	}
	if (o->dev == NULL) {
		fprintf(stderr, "qpio-ud-pingpong: --dev DEVARGS is required "
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
		fprintf(stderr, "qpio-ud-pingpong: the peer's address '%.*s' is "
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
			fprintf(stderr, "qpio-ud-pingpong: the peer did not "
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

/* The exchange: @return 0 and *rem, or -1 (said why). */
static int
exchange(const struct opts *o, struct qpio_device *dev, const struct dest *me,
	 struct dest *rem)
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
		fprintf(stderr, "qpio-ud-pingpong: cannot resolve %s:%u\n",
			o->server != NULL ? o->server : "*", o->port);
		return -1;
	}
	for (t = res; t != NULL; t = t->ai_next) {
		fd = socket(t->ai_family, t->ai_socktype, t->ai_protocol);
		if (fd < 0)
			continue;
		if (o->server != NULL) {
			if (connect(fd, t->ai_addr, t->ai_addrlen) == 0)
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
		fprintf(stderr, "qpio-ud-pingpong: cannot %s port %u: %s\n",
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
		    full_io(&w, fd, msg, MSG_LEN, 1))
			goto out;
		/* the client's "done" (or its close) */
		if (fd_wait(&w, fd, POLLIN) != 0 || read(fd, msg, MSG_LEN) < 0)
			goto out;
	}
	ret = 0;
out:
	if (ret != 0)
		fprintf(stderr, "qpio-ud-pingpong: the address exchange "
			"failed\n");
	close(fd);
	return ret;
}

/* A soft wire device's counters, one line (nothing for other devices). */
static void
wire_stats_print(const struct qpio_device *dev)
{
	struct qpio_soft_wire_stats w;

	if (qpio_soft_wire_stats_get(dev, &w) != 0)
		return;
	printf("wire: rx_packets %" PRIu64 " tx_packets %" PRIu64
	       " arp_rx %" PRIu64 " arp_tx %" PRIu64 " rx_bad_icrc %" PRIu64
	       " rx_no_qp %" PRIu64 " rx_not_roce %" PRIu64 " tx_no_neigh %"
	       PRIu64 " tx_dropped %" PRIu64 "\n", w.rx_packets, w.tx_packets,
	       w.arp_rx, w.arp_tx, w.rx_bad_icrc, w.rx_no_qp, w.rx_not_roce,
	       w.tx_no_neigh, w.tx_dropped);
}

int
main(int argc, char **argv)
{
	struct qpio_device *dev;
	struct qpio_pd *pd;
	struct qpio_mr *mr;
	struct qpio_cq *cq;
	struct qpio_qp *qp;
	struct qpio_ah *ah = NULL;
	struct qpio_qp_init_attr ia;
	struct qpio_qp_attr qa;
	struct qpio_port_attr pa;
	struct qpio_ah_attr aa;
	struct qpio_sge rsge, ssge;
	struct qpio_recv_wr rwr;
	struct qpio_send_wr swr;
	struct dest me, rem;
	struct opts o;
	struct timeval t0, t1;
	uint8_t *buf;
	uint32_t routs = 0, rcnt = 0, scnt = 0, pending, i, bad = 0;
	uint64_t deadline;
	char gs[INET6_ADDRSTRLEN];
	int ret, err;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "qpio-ud-pingpong: EAL: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	argc -= ret;
	argv += ret;
	argv[0] = (char *)"qpio-ud-pingpong";
	if (opts_parse(argc, argv, &o) != 0)
		goto fail_eal;
	dev = qpio_rdma_dev_create(o.dev);
	if (dev == NULL) {
		fprintf(stderr, "qpio-ud-pingpong: --dev %s: %s\n", o.dev,
			rte_strerror(rte_errno));
		goto fail_eal;
	}
	if (qpio_rdma_port_query(dev, 1, &pa) != 0 ||
	    o.size > (256u << (pa.active_mtu - 1))) {
		fprintf(stderr, "qpio-ud-pingpong: --size %u is larger than the "
			"port's path MTU (%u)\n", o.size,
			256u << (pa.active_mtu - 1));
		goto fail_dev;
	}
	buf = rte_zmalloc("ud_pingpong", o.size + 40, 64);
	pd = qpio_pd_alloc(dev);
	if (buf == NULL || pd == NULL)
		goto fail_dev;
	memset(buf, 0x7b, o.size + 40);
	mr = qpio_mr_reg(pd, buf, o.size + 40, QPIO_ACCESS_LOCAL_WRITE);
	cq = qpio_cq_create(dev, o.rx_depth + 1, SOCKET_ID_ANY);
	if (mr == NULL || cq == NULL)
		goto fail_dev;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = QPIO_QPT_UD;
	ia.cap.max_send_wr = 1;
	ia.cap.max_recv_wr = o.rx_depth;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	qp = qpio_qp_create(pd, &ia);
	if (qp == NULL) {
		fprintf(stderr, "qpio-ud-pingpong: qp: %s\n",
			rte_strerror(rte_errno));
		goto fail_dev;
	}
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = QPIO_QPS_INIT;
	qa.port_num = 1;
	qa.qkey = QKEY;
	if (qpio_qp_modify(qp, &qa, QPIO_QP_STATE | QPIO_QP_PKEY_INDEX |
			   QPIO_QP_PORT | QPIO_QP_QKEY) != 0)
		goto fail_dev;

	rsge.addr = (uintptr_t)buf;
	rsge.length = o.size + 40;
	rsge.lkey = qpio_mr_lkey(mr);
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = RECV_WRID;
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	for (routs = 0; routs < o.rx_depth; routs++)
		if (qpio_qp_post_recv(qp, &rwr, 1, &err) != 1)
			break;

	memset(&me, 0, sizeof(me));
	me.lid = pa.lid;
	me.qpn = qpio_qp_num(qp);
	me.psn = (uint32_t)(rte_rdtsc() & 0xffffff);
	if (o.gidx >= 0 &&
	    qpio_rdma_gid_query(dev, 1, (unsigned int)o.gidx,
				(union qpio_gid *)me.gid) != 0) {
		fprintf(stderr, "qpio-ud-pingpong: no GID at index %d\n", o.gidx);
		goto fail_dev;
	}
	/* UD needs nothing of the peer to reach RTS: before the exchange,
	 * so that the peer's first datagram, sent as soon as it has our
	 * address, finds the QP receiving. */
	qa.qp_state = QPIO_QPS_RTR;
	if (qpio_qp_modify(qp, &qa, QPIO_QP_STATE) != 0)
		goto fail_dev;
	qa.qp_state = QPIO_QPS_RTS;
	qa.sq_psn = me.psn;
	if (qpio_qp_modify(qp, &qa, QPIO_QP_STATE | QPIO_QP_SQ_PSN) != 0)
		goto fail_dev;
	inet_ntop(AF_INET6, me.gid, gs, sizeof(gs));
	printf("  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x: GID %s\n",
	       me.lid, me.qpn, me.psn, gs);
	fflush(stdout);
	if (exchange(&o, dev, &me, &rem) != 0)
		goto fail_dev;
	inet_ntop(AF_INET6, rem.gid, gs, sizeof(gs));
	printf("  remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n",
	       rem.lid, rem.qpn, rem.psn, gs);
	fflush(stdout);

	memset(&aa, 0, sizeof(aa));
	aa.dlid = (uint16_t)rem.lid;
	aa.sl = (uint8_t)o.sl;
	aa.port_num = 1;
	for (i = 8; i < 16 && rem.gid[i] == 0; i++)
		;
	if (i < 16) {   /* the tool's rule: a GID whose interface id is set */
		aa.is_global = 1;
		aa.grh.hop_limit = 1;
		memcpy(aa.grh.dgid.raw, rem.gid, 16);
		aa.grh.sgid_index = (uint8_t)(o.gidx >= 0 ? o.gidx : 0);
	}
	ah = qpio_ah_create(pd, &aa);
	if (ah == NULL) {
		fprintf(stderr, "qpio-ud-pingpong: ah: %s\n",
			rte_strerror(rte_errno));
		goto fail_dev;
	}
	ssge.addr = (uintptr_t)buf + 40;
	ssge.length = o.size;
	ssge.lkey = qpio_mr_lkey(mr);
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = SEND_WRID;
	swr.sg_list = &ssge;
	swr.num_sge = 1;
	swr.opcode = QPIO_WR_SEND;
	swr.send_flags = QPIO_SEND_SIGNALED;
	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = rem.qpn;
	swr.wr.ud.remote_qkey = QKEY;

	pending = RECV_WRID;
	if (o.server != NULL) {
		if (qpio_qp_post_send(qp, &swr, 1, &err) != 1)
			goto fail_dev;
		pending |= SEND_WRID;
	}
	gettimeofday(&t0, NULL);
	deadline = rte_get_tsc_cycles() + (uint64_t)o.timeout_s * rte_get_tsc_hz();
	while (rcnt < o.iters || scnt < o.iters) {
		struct qpio_wc wc[2];
		uint16_t ne = qpio_cq_poll(cq, wc, 2);

		if (ne == 0 && rte_get_tsc_cycles() > deadline) {
			fprintf(stderr, "qpio-ud-pingpong: timeout after %u s: "
				"%u of %u received, %u sent\n", o.timeout_s,
				rcnt, o.iters, scnt);
			goto fail_dev;
		}
		for (i = 0; i < ne; i++) {
			if (wc[i].status != QPIO_WC_SUCCESS) {
				fprintf(stderr, "Failed status %s (%d) for "
					"wr_id %d\n",
					qpio_wc_status_str(wc[i].status),
					(int)wc[i].status, (int)wc[i].wr_id);
				goto fail_dev;
			}
			if (wc[i].wr_id == SEND_WRID) {
				scnt++;
			} else {
				if (o.validate) {
					uint32_t k;

					if (wc[i].byte_len != o.size + 40)
						bad++;
					for (k = 40; k < o.size + 40; k++)
						if (buf[k] != 0x7b) {
							bad++;
							break;
						}
				}
				if (--routs <= 1) {
					while (routs < o.rx_depth &&
					       qpio_qp_post_recv(qp, &rwr, 1,
								 &err) == 1)
						routs++;
				}
				rcnt++;
			}
			pending &= ~(uint32_t)wc[i].wr_id;
			if (scnt < o.iters && pending == 0) {
				if (qpio_qp_post_send(qp, &swr, 1, &err) != 1)
					goto fail_dev;
				pending = RECV_WRID | SEND_WRID;
			}
		}
	}
	gettimeofday(&t1, NULL);
	{
		double usec = (double)(t1.tv_sec - t0.tv_sec) * 1e6 +
			(double)(t1.tv_usec - t0.tv_usec);
		long long bytes = (long long)o.size * o.iters * 2;

		printf("%lld bytes in %.2f seconds = %.2f Mbit/sec\n", bytes,
		       usec / 1e6, (double)bytes * 8. / usec);
		printf("%u iters in %.2f seconds = %.2f usec/iter\n", o.iters,
		       usec / 1e6, usec / o.iters);
	}
	wire_stats_print(dev);
	if (o.validate) {
		printf("validate: %u of %u messages wrong\n", bad, rcnt);
		if (bad != 0)
			goto fail_dev;
	}
	qpio_ah_destroy(ah);
	qpio_qp_destroy(qp);
	qpio_cq_destroy(cq);
	qpio_mr_dereg(mr);
	qpio_pd_free(pd);
	rte_free(buf);
	qpio_rdma_dev_close(dev);
	rte_eal_cleanup();
	return 0;
fail_dev:
	/* the process ends: the device's objects go with it */
	rte_eal_cleanup();
	return 1;
fail_eal:
	rte_eal_cleanup();
	return 2;
}
