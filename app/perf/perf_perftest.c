/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-perf --perftest: perftest's own out-of-band TCP exchange (the one
 * its tools use without -R), so that an unmodified ib_send_bw,
 * ib_write_lat, ... of perftest 4.5 is the peer of a qpio-perf --server or
 * --connect. The facts come from perftest 4.5-0.17's
 * perftest_communication.c and the tools' main(); the layout:
 *
 *   every exchange is symmetric and fixed-size: the client writes its
 *   message, then reads the server's; the server reads, then writes.
 *
 *   hello    16 bytes: the version string (NUL-padded; perftest refuses
 *            a peer below 5.70); 4 bytes: the page size, big-endian (the
 *            larger of both is the buffer unit); 4 bytes: the cache-line
 *            size, big-endian; 2 bytes: the MTU as one decimal digit of
 *            enum ibv_mtu and a NUL (the smaller of both is used).
 *   key      108 bytes of text:
 *            "LID:OUT_READS:QPN:PSN:RKEY:VADDR:G0:...:G15:SRQN:\0", each
 *            field lower-case hex of 4, 4, 6, 6, 8, 16, 2 x 16 and 8
 *            digits.
 *   report   five 8-byte big-endian values: size, iterations, peak and
 *            average bandwidth (doubles, MB/s of 2^20 bytes, or Gb/s
 *            with --report_gbits) and the message rate (double, Mpps).
 *   close    one key exchange, then "done\0" each way and the end of
 *            the connection.
 *
 * How many key exchanges come where depends on the tool (all with one
 * QP): send_bw and send_lat 1 before the QPs connect, 2 after, 1 to
 * start; write_bw, read_bw and atomic_bw 1, 1 and 1, then after the run
 * one more key exchange, the reports and the close; write_lat, read_lat
 * and atomic_lat 2, 1 and 1; write_lat ends without a close.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_cycles.h>

#include "perf_run.h"

#define PT_VERSION "6.06"          /* the exchange of perftest 4.5-0.17 */
#define PT_VERSION_MIN 5.70        /* perftest refuses a peer below it */
#define PT_VERSION_LEN 16
#define PT_KEY_LEN 108
#define PT_KEY_TEXT 107            /* the text before its NUL */
#define PT_DONE "done"             /* 5 bytes with its NUL */
#define PT_KEY_BIN_LEN 56          /* -R: struct pingpong_dest */

const char *
perf_pt_tool(const struct perf_opts *o)
{
	static char name[32];

	snprintf(name, sizeof(name), "ib_%s_%s", perf_test_name(o->test),
		 perf_mode_name(o->mode));
	return name;
}

/* The tool's key exchanges before the QPs connect, after (but the start
 * one), and whether the write/read/atomic bandwidth tail follows. */
static unsigned int
keys_before(const struct perf_opts *o)
{
	return o->mode == PERF_LAT && o->test != PERF_SEND ? 2 : 1;
}

static unsigned int
keys_after(const struct perf_opts *o)
{
	return o->test == PERF_SEND ? 2 : 1;
}

/*
 * Exchange len bytes: the client sends first, the server receives first.
 * While it waits, the CQ of this end is polled (a soft device on the wire
 * answers ARP and the peer's packets from there). timeout: seconds, or
 * < 0 for no limit (the peer is running its test meanwhile).
 */
static int
xchg(struct perf_ctx *x, const char *what, const void *mine, void *peers,
     size_t len, double timeout)
{
	struct perf_end *e = &x->end[x->local];
	uint64_t end = timeout >= 0 ?
		rte_rdtsc() + (uint64_t)(timeout * (double)x->hz) : 0;
	int client = x->o->role == PERF_ROLE_CLIENT;
	size_t got = 0;
	int ret = 0;

	if (x->cm != NULL) {
		ret = perf_cm_xchg(x, mine, peers, len, timeout);
		if (ret == -ECANCELED)
			return PERF_EXIT_FAIL;  /* the run said why */
		if (ret < 0) {
			fprintf(stderr, "qpio-perf: --perftest -R: %s with %s "
				"(%s): %s\n", what, perf_pt_tool(x->o),
				client ? "the server" : "the client",
				perf_cm_strerror(x, ret));
			return PERF_EXIT_FAIL;
		}
		return 0;
	}
	if (client)
		ret = perf_net_send_bytes(x->net, mine, len);
	while (ret == 0) {
		ret = perf_net_recv_bytes(x->net, peers, len, &got);
		if (ret != -EAGAIN)
			break;
		ret = 0;
		if (timeout >= 0 && rte_rdtsc() > end) {
			ret = -ETIMEDOUT;
			break;
		}
		if (e->cq != NULL) {
			if (perf_end_poll(e) < 0)
				return PERF_EXIT_FAIL;
		} else {
			usleep(1000);
		}
	}
	if (ret == 0 && !client)
		ret = perf_net_send_bytes(x->net, mine, len);
	if (ret < 0) {
		fprintf(stderr, "qpio-perf: --perftest: %s with %s (%s): %s\n",
			what, perf_pt_tool(x->o),
			client ? "the server" : "the client",
			perf_net_strerror(ret));
		return PERF_EXIT_FAIL;
	}
	return 0;
}

int
perf_pt_hello(struct perf_ctx *x, enum qpio_mtu *mtu)
{
	char v[PT_VERSION_LEN] = PT_VERSION, pv[PT_VERSION_LEN + 1];
	uint32_t mine, peer, page = 4096, line = 64;
	char m[2], pm[2];
	long sys;
	int ret;

	ret = xchg(x, "the version exchange", v, pv, PT_VERSION_LEN,
		   x->o->timeout);
	if (ret != 0)
		return ret;
	pv[PT_VERSION_LEN] = '\0';
	if (memchr(pv, '\0', PT_VERSION_LEN) == NULL ||
	    !(atof(pv) >= PT_VERSION_MIN)) {
		fprintf(stderr, "qpio-perf: --perftest: the peer's version "
			"'%.16s' is not perftest %.2f or later (is it a "
			"perftest tool? a qpio-perf peer runs without "
			"--perftest)\n", pv, PT_VERSION_MIN);
		return PERF_EXIT_FAIL;
	}
	sys = sysconf(_SC_PAGESIZE);
	if (sys > 0)
		page = (uint32_t)sys;
	mine = rte_cpu_to_be_32(page);
	ret = xchg(x, "the page size exchange", &mine, &peer, 4,
		   x->o->timeout);
	if (ret != 0)
		return ret;
	peer = rte_be_to_cpu_32(peer);
	if (peer == 0 || !rte_is_power_of_2(peer) || peer > (1u << 30)) {
		fprintf(stderr, "qpio-perf: --perftest: the peer's page size "
			"%u is not a power of two up to 1 GiB\n", peer);
		return PERF_EXIT_FAIL;
	}
	mine = rte_cpu_to_be_32(line);
	ret = xchg(x, "the cache-line size exchange", &mine, &peer, 4,
		   x->o->timeout);
	if (ret != 0)
		return ret;
	m[0] = (char)('0' + (int)*mtu);
	m[1] = '\0';
	ret = xchg(x, "the MTU exchange", m, pm, 2, x->o->timeout);
	if (ret != 0)
		return ret;
	/* perftest takes the smaller of both and ignores a value out of
	 * range; so does this end. */
	if (pm[1] == '\0' && pm[0] >= '1' && pm[0] <= '5' &&
	    pm[0] - '0' < (int)*mtu)
		*mtu = (enum qpio_mtu)(pm[0] - '0');
	return 0;
}

static void
key_write(const struct perf_ctx *x, char *k)
{
	const struct perf_end *e = &x->end[x->local];
	const struct perf_qp *q = &e->qp[0];
	uintptr_t vaddr = (uintptr_t)q->base + (size_t)x->nslots * x->stride;
	size_t off;
	unsigned int i;

	memset(k, 0, PT_KEY_LEN);
	off = (size_t)snprintf(k, PT_KEY_LEN, "%04x:%04x:%06x:%06x:%08x:"
			       "%016" PRIx64 ":", e->lid, e->out_reads,
			       qpio_qp_num(q->qp) & 0xffffff, q->psn & 0xffffff,
			       qpio_mr_rkey(e->mr), (uint64_t)vaddr);
	for (i = 0; i < 16; i++)
		off += (size_t)snprintf(k + off, PT_KEY_LEN - off, "%02x:",
					e->gid.raw[i]);
	snprintf(k + off, PT_KEY_LEN - off, "%08x:", 0u);
}

/* -R: perftest's struct pingpong_dest, each field big-endian
 * (rdma_write_keys()): LID, OUT_READS, QPN, PSN, RKEY, 4 bytes of
 * padding, VADDR, GID, SRQN, GID index. */
static void
key_write_bin(const struct perf_ctx *x, uint8_t *k)
{
	const struct perf_end *e = &x->end[x->local];
	const struct perf_qp *q = &e->qp[0];
	uint64_t vaddr = (uintptr_t)q->base + (size_t)x->nslots * x->stride;
	uint32_t w[5] = {
		e->lid, e->out_reads, qpio_qp_num(q->qp) & 0xffffff,
		q->psn & 0xffffff, qpio_mr_rkey(e->mr),
	};
	uint32_t be;
	uint64_t be64;
	unsigned int i;

	memset(k, 0, PT_KEY_BIN_LEN);
	if (q->qp == NULL)      /* before the QPs exist: perftest's are zero */
		return;
	for (i = 0; i < 5; i++) {
		be = rte_cpu_to_be_32(w[i]);
		memcpy(k + 4 * i, &be, 4);
	}
	be64 = rte_cpu_to_be_64(vaddr);
	memcpy(k + 24, &be64, 8);
	memcpy(k + 32, e->gid.raw, 16);
	be = rte_cpu_to_be_32(e->gid_index);
	memcpy(k + 52, &be, 4);
}

static uint32_t
be32_at(const uint8_t *p)
{
	uint32_t be;

	memcpy(&be, p, 4);
	return rte_be_to_cpu_32(be);
}

/* -R: the peer's struct pingpong_dest; perftest reads LID, OUT_READS,
 * QPN, PSN, RKEY, VADDR and the GID of it (rdma_read_keys()). */
static void
key_read_bin(struct perf_ctx *x, const uint8_t *k)
{
	struct perf_end *e = &x->end[x->local], *peer = e->peer;
	struct perf_qp *q = &e->qp[0];
	uint64_t be64;

	peer->lid = (uint16_t)be32_at(k);
	peer->out_reads = (uint8_t)RTE_MIN(be32_at(k + 4), 255u);
	q->peer_qpn = be32_at(k + 8) & 0xffffff;
	q->peer_psn = be32_at(k + 12) & 0xffffff;
	e->peer_rkey = be32_at(k + 16);
	memcpy(&be64, k + 24, 8);
	q->peer_vaddr = rte_be_to_cpu_64(be64);
	memcpy(peer->gid.raw, k + 32, 16);
}

/* Read n hex digits at *p followed by ':'; @return 0 or -1. */
static int
hex_field(const char **p, unsigned int n, uint64_t *v)
{
	unsigned int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		char c = (*p)[i];
		unsigned int d;

		if (c >= '0' && c <= '9')
			d = (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned int)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned int)(c - 'A' + 10);
		else
			return -1;
		*v = *v << 4 | d;
	}
	if ((*p)[n] != ':')
		return -1;
	*p += n + 1;
	return 0;
}

/* Parse the peer's key message into the shadow end and QP 0. */
static int
key_read(struct perf_ctx *x, const char *k)
{
	struct perf_end *e = &x->end[x->local], *peer = e->peer;
	struct perf_qp *q = &e->qp[0];
	static const unsigned int w[6] = { 4, 4, 6, 6, 8, 16 };
	uint64_t v[6], b, srqn;
	union qpio_gid gid;
	const char *p = k;
	unsigned int i;

	for (i = 0; i < 6; i++)
		if (hex_field(&p, w[i], &v[i]) < 0)
			goto bad;
	for (i = 0; i < 16; i++) {
		if (hex_field(&p, 2, &b) < 0)
			goto bad;
		gid.raw[i] = (uint8_t)b;
	}
	if (hex_field(&p, 8, &srqn) < 0 || p != k + PT_KEY_TEXT ||
	    *p != '\0')
		goto bad;
	peer->lid = (uint16_t)v[0];
	peer->out_reads = (uint8_t)RTE_MIN(v[1], 255u);
	q->peer_qpn = (uint32_t)v[2];
	q->peer_psn = (uint32_t)v[3];
	e->peer_rkey = (uint32_t)v[4];
	q->peer_vaddr = v[5];
	peer->gid = gid;
	return 0;
bad:
	fprintf(stderr, "qpio-perf: --perftest: the peer's key message is "
		"not perftest's (108 bytes: LID:OUT:QPN:PSN:RKEY:VADDR:16 GID "
		"bytes:SRQN: in hex, then a NUL): '%.107s'\n", k);
	return PERF_EXIT_FAIL;
}

static int
keys(struct perf_ctx *x, unsigned int n, const char *what, double timeout)
{
	char mine[PT_KEY_LEN], peers[PT_KEY_LEN + 1];
	unsigned int i;
	int ret;

	if (x->cm != NULL) {
		uint8_t bm[PT_KEY_BIN_LEN], bp[PT_KEY_BIN_LEN];

		key_write_bin(x, bm);
		for (i = 0; i < n; i++) {
			ret = xchg(x, what, bm, bp, PT_KEY_BIN_LEN, timeout);
			if (ret != 0)
				return ret;
			key_read_bin(x, bp);
		}
		return 0;
	}
	key_write(x, mine);
	for (i = 0; i < n; i++) {
		ret = xchg(x, what, mine, peers, PT_KEY_LEN, timeout);
		if (ret != 0)
			return ret;
		peers[PT_KEY_LEN] = '\0';
		ret = key_read(x, peers);
		if (ret != 0)
			return ret;
	}
	return 0;
}

static int
gid_v4_mapped(const union qpio_gid *g)
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(g->raw, pfx, sizeof(pfx)) == 0;
}

int
perf_pt_keys_before(struct perf_ctx *x)
{
	struct perf_end *e = &x->end[x->local];
	int ret;

	e->qp[0].psn = (uint32_t)lrand48() & 0xffffff;
	ret = keys(x, keys_before(x->o), "the key exchange", x->o->timeout);
	if (ret != 0)
		return ret;
	/* perftest refuses a peer whose GID is of the other kind (it
	 * checks after the first key exchange, but with -R, where rdma_cm
	 * chose the GIDs): say why here too. */
	if (x->cm == NULL && gid_v4_mapped(&e->gid) != gid_v4_mapped(&e->peer->gid)) {
		fprintf(stderr, "qpio-perf: --perftest: GID index %u is %s but "
			"the peer's GID is %s: perftest needs both of one kind; "
			"choose the GID with -x\n", e->gid_index,
			gid_v4_mapped(&e->gid) ? "IPv4-mapped" : "not IPv4-mapped",
			gid_v4_mapped(&e->peer->gid) ? "IPv4-mapped" :
			"not IPv4-mapped");
		return PERF_EXIT_USAGE;
	}
	return 0;
}

int
perf_pt_keys_rdma_cm(struct perf_ctx *x)
{
	return keys(x, 1, "the key exchange around the rdma_cm connect",
		    x->o->timeout);
}

int
perf_pt_keys_after(struct perf_ctx *x)
{
	return keys(x, keys_after(x->o), "the key exchange after connecting",
		    x->o->timeout);
}

int
perf_pt_start(struct perf_end *e)
{
	return keys(e->ctx, 1, "the start exchange", e->ctx->o->timeout);
}

static uint64_t
be64_of_double(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return rte_cpu_to_be_64(u);
}

static double
double_of_be64(uint64_t be)
{
	uint64_t u = rte_be_to_cpu_64(be);
	double d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

/* The bandwidth reports: this end's numbers out, the peer's in. */
static int
reports(struct perf_end *e)
{
	struct perf_ctx *x = e->ctx;
	const struct perf_opts *o = x->o;
	double secs = (double)(e->t_end - e->t_start) / (double)x->hz;
	double unit = o->report_gbits ? 125e6 : 1048576.0;
	uint64_t iters = 0, mine[5], peers[5];
	unsigned int i;
	int ret;

	if (e->requester)
		for (i = 0; i < o->qps; i++)
			iters += e->qp[i].completed;
	mine[0] = rte_cpu_to_be_64(x->size);
	mine[1] = rte_cpu_to_be_64(iters);
	mine[2] = be64_of_double(e->requester ? e->peak_bps / unit : 0);
	mine[3] = be64_of_double(e->requester && secs > 0 ?
				 (double)iters * x->size / secs / unit : 0);
	mine[4] = be64_of_double(e->requester && secs > 0 ?
				 (double)iters / secs / 1e6 : 0);
	for (i = 0; i < 5; i++) {
		ret = xchg(x, "the report exchange", &mine[i], &peers[i], 8,
			   o->timeout);
		if (ret != 0)
			return ret;
	}
	x->pt_iters = rte_be_to_cpu_64(peers[1]);
	x->pt_peak = double_of_be64(peers[2]) * unit;
	x->pt_avg = double_of_be64(peers[3]) * unit;
	x->pt_mpps = double_of_be64(peers[4]);
	if (!isfinite(x->pt_peak) || !isfinite(x->pt_avg) ||
	    !isfinite(x->pt_mpps) || x->pt_avg < 0 || x->pt_mpps < 0) {
		fprintf(stderr, "qpio-perf: --perftest: the peer's report is not "
			"numbers\n");
		return PERF_EXIT_FAIL;
	}
	x->pt_report = 1;
	return 0;
}

/* The close: a key exchange, "done" each way, then the peer's end of the
 * connection (read to it, so that no byte of it is left unread). */
static int
pt_close(struct perf_end *e, double timeout)
{
	struct perf_ctx *x = e->ctx;
	uint64_t end;
	char buf[64];
	size_t got;
	int ret;

	ret = keys(x, 1, "the close exchange", timeout);
	if (ret != 0 || x->cm != NULL)
		return ret;     /* -R: the key exchange is the whole close */
	ret = perf_net_send_bytes(x->net, PT_DONE, sizeof(PT_DONE));
	if (ret < 0) {
		fprintf(stderr, "qpio-perf: --perftest: sending done to %s: %s\n",
			perf_pt_tool(x->o), perf_net_strerror(ret));
		return PERF_EXIT_FAIL;
	}
	end = rte_rdtsc() + (uint64_t)(x->o->timeout * (double)x->hz);
	for (;;) {
		got = 0;
		ret = perf_net_recv_bytes(x->net, buf, sizeof(buf), &got);
		if (ret == -ECONNRESET || (ret < 0 && ret != -EAGAIN))
			return 0;       /* the end (or a reset after it) */
		if (ret == -EAGAIN && got == 0 && rte_rdtsc() > end) {
			fprintf(stderr, "qpio-perf: --perftest: %s did not close "
				"the connection after done\n", perf_pt_tool(x->o));
			return PERF_EXIT_FAIL;
		}
		if (ret == -EAGAIN && got == 0)
			usleep(1000);
	}
}

int
perf_pt_finish(struct perf_end *e)
{
	struct perf_ctx *x = e->ctx;
	const struct perf_opts *o = x->o;
	int ret;

	if (o->mode == PERF_BW && o->test != PERF_SEND) {
		/* The server waits here while the client runs. */
		ret = keys(x, 1, "the exchange after the run", -1);
		if (ret == 0)
			ret = reports(e);
		if (ret == 0)
			ret = pt_close(e, o->timeout);
		return ret;
	}
	if (o->mode == PERF_LAT && o->test == PERF_WRITE)
		return 0;               /* ib_write_lat just exits */
	/* send_bw, send_lat; read_lat and atomic_lat, whose server waits
	 * here. */
	return pt_close(e, -1);
}
