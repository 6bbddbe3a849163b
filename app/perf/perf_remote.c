/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-perf across two processes (--server, --connect): what the two ends
 * tell each other over the TCP channel of perf_net.c, one text line each.
 *
 *   HELLO  the options both sides must agree on, the device name and
 *          driver, the port's LID, GID and active MTU, the largest MR
 *   QPS    the buffer layout, its rkey, address and length, each QP's
 *          number and first PSN
 *   READY  before each message size (the start barrier)
 *   DONE   after each size: the requester's time, peak rate and send
 *          completions per QP (the receiver's lost count, the responder's
 *          WRITE check and the server's bandwidth row come from them)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "qpio_devargs.h"
#include "qpio_soft.h"
#include "perf_run.h"

#define LINE_MAX_LEN 4096

/* One HELLO key that must match and the option that sets it. */
static const struct {
	const char *key;
	const char *opt;
} agree[] = {
	{ "test", "--test" }, { "mode", "--mode" }, { "size", "-s" },
	{ "all", "-a" }, { "iters", "-n" }, { "duration", "-D" },
	{ "transport", "-c" }, { "qps", "-q" }, { "bidir", "-b" },
	{ "validate", "--validate" }, { "atomic", "-A" },
};

static const char *
peer_name(const struct perf_ctx *x)
{
	return x->o->role == PERF_ROLE_SERVER ? "the client" : "the server";
}

/* Value of key in a "K=V K=V" line, copied into v; 0 if present. */
static int
kv(const char *line, const char *key, char *v, size_t len)
{
	size_t kl = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key)) != NULL) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=') {
			size_t n = strcspn(p + kl + 1, " ");

			if (n >= len)
				return -1;
			memcpy(v, p + kl + 1, n);
			v[n] = '\0';
			return 0;
		}
		p += kl;
	}
	return -1;
}

/* Value of key as a decimal integer in [min, max] (lib/devargs' rule);
 * 0, or -1 when absent or not such a number. */
static int
kv_u64(const char *line, const char *key, uint64_t min, uint64_t max,
       uint64_t *val)
{
	char v[32];

	if (kv(line, key, v, sizeof(v)) < 0 ||
	    qpio_devargs_parse_u64(v, min, max, val) < 0)
		return -1;
	return 0;
}

static int
kv_u32(const char *line, const char *key, uint32_t max, uint32_t *val)
{
	uint64_t v;

	if (kv_u64(line, key, 0, max, &v) < 0)
		return -1;
	*val = (uint32_t)v;
	return 0;
}

/* The comma list of decimal integers of at most max that key holds,
 * into out[0..n-1]. @return how many were read before the first that is
 * not such a number (n when all are). */
static unsigned int
kv_list(const char *line, const char *key, uint64_t max, uint64_t *out,
	unsigned int n)
{
	char v[PERF_MAX_QPS * 21], *p = v;
	unsigned int i;

	if (kv(line, key, v, sizeof(v)) < 0)
		return 0;
	for (i = 0; i < n; i++) {
		char *comma = strchr(p, ',');

		if (comma != NULL)
			*comma = '\0';
		if (qpio_devargs_parse_u64(p, 0, max, &out[i]) < 0)
			return i;
		if (comma == NULL)
			return i + 1;
		p = comma + 1;
	}
	return i;
}

static int
send_line(struct perf_ctx *x, const char *line)
{
	int ret = perf_net_send(x->net, line);

	if (ret < 0) {
		fprintf(stderr, "qpio-perf: sending to %s: %s\n", peer_name(x),
			perf_net_strerror(ret));
		return PERF_EXIT_FAIL;
	}
	return 0;
}

static int
recv_line(struct perf_ctx *x, const char *what, char *line, size_t len)
{
	int ret = perf_net_recv(x->net, line, len, x->o->timeout);

	if (ret < 0) {
		fprintf(stderr, "qpio-perf: waiting for %s's %s: %s\n",
			peer_name(x), what, perf_net_strerror(ret));
		return PERF_EXIT_FAIL;
	}
	if (strncmp(line, what, strlen(what)) != 0) {
		fprintf(stderr, "qpio-perf: %s sent '%.40s' where %s was expected: "
			"not a qpio-perf peer of this version\n", peer_name(x),
			line, what);
		return PERF_EXIT_FAIL;
	}
	return 0;
}

int
perf_remote_open(struct perf_ctx *x, struct perf_net *n)
{
	const struct perf_opts *o = x->o;
	char err[512];
	uint16_t port = o->port;
	int lfd, ret;

	x->net = n;
	if (o->rdma_cm)
		return perf_cm_open(x);   /* perftest -R: no TCP at all */
	if (o->role == PERF_ROLE_CLIENT) {
		if (perf_net_connect(o->host, o->port, n, o->timeout, err,
				     sizeof(err)) < 0) {
			fprintf(stderr, "qpio-perf: %s\n", err);
			return PERF_EXIT_FAIL;
		}
		return 0;
	}
	lfd = perf_net_listen(o->port, &port, err, sizeof(err));
	if (lfd < 0) {
		fprintf(stderr, "qpio-perf: %s\n", err);
		return PERF_EXIT_FAIL;
	}
	printf(" qpio-perf server listening on TCP port %u\n", port);
	fflush(stdout);
	ret = perf_net_accept(lfd, n, o->timeout, err, sizeof(err));
	close(lfd);
	if (ret < 0) {
		fprintf(stderr, "qpio-perf: %s\n", err);
		return PERF_EXIT_FAIL;
	}
	return 0;
}

static void
gid_hex(const union qpio_gid *g, char *s)
{
	unsigned int i;

	for (i = 0; i < 16; i++)
		sprintf(s + 2 * i, "%02x", g->raw[i]);
}

static int
hex_gid(const char *s, union qpio_gid *g)
{
	unsigned int i, b;

	if (strlen(s) != 32)
		return -1;
	for (i = 0; i < 16; i++) {
		if (sscanf(s + 2 * i, "%2x", &b) != 1)
			return -1;
		g->raw[i] = (uint8_t)b;
	}
	return 0;
}

/* dev is a soft device bound to an ethdev (devargs wire=). */
static bool
perf_soft_on_wire(const struct qpio_device *dev)
{
	struct qpio_soft_wire_stats st;

	return qpio_soft_wire_stats_get(dev, &st) == 0;
}

int
perf_remote_hello(struct perf_ctx *x, enum qpio_mtu *mtu, uint64_t *max_mr)
{
	const struct perf_opts *o = x->o;
	struct perf_end *e = &x->end[x->local], *peer = e->peer;
	struct qpio_device_attr da;
	char line[LINE_MAX_LEN], pl[LINE_MAX_LEN], a[64], b[64], gid[40];
	char dev[64], driver[32];
	uint64_t v;
	uint32_t lid;
	unsigned int i;
	int ret;

	qpio_rdma_dev_query(e->dev, &da);
	gid_hex(&e->gid, gid);
	snprintf(line, sizeof(line), "HELLO schema=%s role=%s test=%s mode=%s "
		 "size=%u all=%d iters=%" PRIu64 " duration=%g transport=%s qps=%u "
		 "bidir=%d validate=%d atomic=%d dev=%s driver=%s lid=%u gid=%s "
		 "mtu=%d maxmr=%" PRIu64 "\n", PERF_SCHEMA, perf_role_name(o->role),
		 perf_test_name(o->test), perf_mode_name(o->mode), o->size,
		 o->all_sizes, o->iters, o->duration,
		 perf_transport_name(o->transport), o->qps, o->bidir, o->validate,
		 (int)o->atomic_op, da.name, da.driver, e->lid, gid, (int)*mtu,
		 *max_mr);
	ret = send_line(x, line);
	if (ret == 0)
		ret = recv_line(x, "HELLO", pl, sizeof(pl));
	if (ret != 0)
		return ret;
	if (kv(pl, "schema", a, sizeof(a)) < 0 || strcmp(a, PERF_SCHEMA) != 0 ||
	    kv(pl, "role", a, sizeof(a)) < 0 ||
	    strcmp(a, o->role == PERF_ROLE_SERVER ? "client" : "server") != 0) {
		fprintf(stderr, "qpio-perf: %s is not a qpio-perf %s of schema %s: "
			"run one side with --server and the other with --connect\n",
			peer_name(x), o->role == PERF_ROLE_SERVER ? "client" : "server",
			PERF_SCHEMA);
		return PERF_EXIT_USAGE;
	}
	for (i = 0; i < RTE_DIM(agree); i++) {
		if (kv(line, agree[i].key, a, sizeof(a)) < 0 ||
		    kv(pl, agree[i].key, b, sizeof(b)) < 0) {
			fprintf(stderr, "qpio-perf: %s did not send %s\n",
				peer_name(x), agree[i].key);
			return PERF_EXIT_FAIL;
		}
		if (strcmp(a, b) != 0) {
			fprintf(stderr, "qpio-perf: option mismatch: %s is %s here and "
				"%s at %s; both sides must run with the same %s\n",
				agree[i].opt, a, b, peer_name(x), agree[i].opt);
			return PERF_EXIT_USAGE;
		}
	}
	if (kv(pl, "dev", dev, sizeof(dev)) < 0 ||
	    kv(pl, "driver", driver, sizeof(driver)) < 0 ||
	    kv_u32(pl, "lid", UINT16_MAX, &lid) < 0 ||
	    kv(pl, "gid", gid, sizeof(gid)) < 0 ||
	    hex_gid(gid, &peer->gid) < 0) {
		fprintf(stderr, "qpio-perf: %s sent no device, LID or GID\n",
			peer_name(x));
		return PERF_EXIT_FAIL;
	}
	peer->lid = (uint16_t)lid;
	if (kv(pl, "mtu", a, sizeof(a)) == 0) {
		if (qpio_devargs_parse_u64(a, QPIO_MTU_256, QPIO_MTU_4096,
					   &v) < 0) {
			fprintf(stderr, "qpio-perf: %s sent mtu=%s, not an MTU "
				"code %d..%d\n", peer_name(x), a, QPIO_MTU_256,
				QPIO_MTU_4096);
			return PERF_EXIT_FAIL;
		}
		if ((enum qpio_mtu)v < *mtu)
			*mtu = (enum qpio_mtu)v;
	}
	if (kv(pl, "maxmr", a, sizeof(a)) == 0) {
		if (qpio_devargs_parse_u64(a, 0, UINT64_MAX, &v) < 0) {
			fprintf(stderr, "qpio-perf: %s sent maxmr=%s, not a "
				"byte count\n", peer_name(x), a);
			return PERF_EXIT_FAIL;
		}
		if (v < *max_mr)
			*max_mr = v;
	}
	/* Over the soft NIC's fabric both ends must be on one soft fabric:
	 * the client is a DPDK secondary of the server's primary. Find the
	 * server's device by name there. A soft device on the wire (wire=)
	 * reaches its peer over the network, by the GID it sent, as any
	 * RoCE device. */
	if (strcmp(da.driver, "soft") == 0 && !perf_soft_on_wire(e->dev)) {
		uint16_t lid;
		union qpio_gid g;

		if (strcmp(driver, "soft") != 0 ||
		    qpio_soft_dev_find(dev, &lid, &g) != 0) {
			fprintf(stderr, "qpio-perf: %s's device %s (%s) is not on this "
				"process's soft fabric, or %s has exited: run the "
				"client as a DPDK "
				"secondary of the server (--proc-type=secondary with "
				"the server's --file-prefix) and give it another "
				"--dev, e.g. soft1\n", peer_name(x), dev, driver,
				peer_name(x));
			return PERF_EXIT_FAIL;
		}
		peer->lid = lid;
		peer->gid = g;
	}
	return 0;
}

/* Read the comma list of key into the qps' peer_qpn (which 0) or
 * peer_psn (1): QPNs and PSNs are 24-bit. @return how many were read. */
static unsigned int
list_u32(const char *line, const char *key, unsigned int nqp,
	 struct perf_qp *qp, int which)
{
	uint64_t v[PERF_MAX_QPS];
	unsigned int i, n;

	n = kv_list(line, key, 0xffffff, v, RTE_MIN(nqp, PERF_MAX_QPS));
	for (i = 0; i < n; i++) {
		if (which == 0)
			qp[i].peer_qpn = (uint32_t)v[i];
		else
			qp[i].peer_psn = (uint32_t)v[i];
	}
	return n;
}

int
perf_remote_qps(struct perf_ctx *x)
{
	const struct perf_opts *o = x->o;
	struct perf_end *e = &x->end[x->local], *peer = e->peer;
	char line[LINE_MAX_LEN], pl[LINE_MAX_LEN], a[64];
	uint64_t addr;
	uint32_t ns, st;
	unsigned int i, n;
	size_t off;
	int ret;

	off = (size_t)snprintf(line, sizeof(line), "QPS nslots=%u stride=%u "
			       "rkey=%u addr=%" PRIxPTR " len=%zu qpn=", x->nslots,
			       x->stride, qpio_mr_rkey(e->mr), (uintptr_t)e->buf,
			       e->buf_len);
	for (i = 0; i < o->qps; i++) {
		e->qp[i].psn = (uint32_t)lrand48() & 0xffffff;
		off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%u",
					i ? "," : "", qpio_qp_num(e->qp[i].qp));
	}
	off += (size_t)snprintf(line + off, sizeof(line) - off, " psn=");
	for (i = 0; i < o->qps; i++)
		off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%u",
					i ? "," : "", e->qp[i].psn);
	snprintf(line + off, sizeof(line) - off, "\n");
	ret = send_line(x, line);
	if (ret == 0)
		ret = recv_line(x, "QPS", pl, sizeof(pl));
	if (ret != 0)
		return ret;
	/* addr is hex without "0x" (PRIxPTR) */
	a[0] = '0';
	a[1] = 'x';
	if (kv_u32(pl, "nslots", UINT32_MAX, &ns) < 0 ||
	    kv_u32(pl, "stride", UINT32_MAX, &st) < 0 ||
	    kv_u32(pl, "rkey", UINT32_MAX, &peer->peer_rkey) < 0 ||
	    kv(pl, "addr", a + 2, sizeof(a) - 2) < 0 ||
	    qpio_devargs_parse_hex(a, 0, UINTPTR_MAX, &addr) < 0) {
		fprintf(stderr, "qpio-perf: %s sent an incomplete QPS line\n",
			peer_name(x));
		return PERF_EXIT_FAIL;
	}
	if (ns != x->nslots || st != x->stride) {
		fprintf(stderr, "qpio-perf: the two devices granted different "
			"queue depths (%u message slots here, %u at %s): give "
			"-t and -r that both devices grant\n", x->nslots, ns,
			peer_name(x));
		return PERF_EXIT_USAGE;
	}
	e->peer_rkey = peer->peer_rkey;
	n = list_u32(pl, "qpn", o->qps, e->qp, 0) +
		list_u32(pl, "psn", o->qps, e->qp, 1);
	if (n != 2 * o->qps) {
		fprintf(stderr, "qpio-perf: %s sent fewer than %u QPNs and PSNs\n",
			peer_name(x), o->qps);
		return PERF_EXIT_FAIL;
	}
	for (i = 0; i < o->qps; i++) {
		e->qp[i].peer_base = (uint8_t *)(uintptr_t)(addr + i * x->qp_len);
		peer->qp[i].peer_qpn = qpio_qp_num(e->qp[i].qp);
	}
	return 0;
}

int
perf_remote_done_send(struct perf_ctx *x)
{
	const struct perf_end *e = &x->end[x->local];
	char line[LINE_MAX_LEN];
	size_t off;
	unsigned int i;
	double ns = (double)(e->t_end - e->t_start) * 1e9 / (double)x->hz;

	if (x->done_sent)
		return 0;
	x->done_sent = 1;
	if (e->t_end < e->t_start)
		ns = 0;
	off = (size_t)snprintf(line, sizeof(line), "DONE size=%u ns=%.0f "
			       "peak=%.0f completed=", x->size,
			       e->requester ? ns : 0, e->peak_bps);
	for (i = 0; i < x->o->qps; i++)
		off += (size_t)snprintf(line + off, sizeof(line) - off,
					"%s%" PRIu64, i ? "," : "",
					e->requester ? e->qp[i].completed : 0);
	snprintf(line + off, sizeof(line) - off, "\n");
	return perf_net_send(x->net, line);
}

int
perf_remote_done_parse(struct perf_ctx *x, const char *line)
{
	struct perf_end *peer = x->end[x->local].peer;
	uint64_t completed[PERF_MAX_QPS];
	double ns, peak;
	unsigned int size, i;

	if (sscanf(line, "DONE size=%u ns=%lf peak=%lf", &size, &ns, &peak) != 3 ||
	    size != x->size)
		return -EPROTO;
	if (kv_list(line, "completed", UINT64_MAX, completed,
		    x->o->qps) != x->o->qps)
		return -EPROTO;
	for (i = 0; i < x->o->qps; i++)
		peer->qp[i].completed = completed[i];
	peer->t_start = 0;
	peer->t_end = (uint64_t)(ns * (double)x->hz / 1e9);
	peer->peak_bps = peak;
	x->peer_done = 1;
	__atomic_store_n(&peer->req_done, 1, __ATOMIC_RELEASE);
	x->stop = 1;
	return 0;
}
