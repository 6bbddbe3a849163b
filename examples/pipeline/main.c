/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-pipeline: an NFV chain on EAL lcores joined by rte_ring.
 *
 *   qpio-pipeline [EAL args] -- --in DEVARGS --rules FILE
 *                 [--out DEVARGS] [--flows FILE] [--duration SECONDS]
 *                 [--packets N]
 *
 *   rx (--in port) -> ring -> classify (rte_acl, IPv4 and IPv6 5-tuple
 *      rules)
 *      -> ring -> flows (per-flow counters in rte_hash) -> qp0 ==RC==> qp1
 *      -> sink (--out port, or freed)
 *
 * Stages run on the worker lcores in turn (several on one lcore when
 * there are fewer workers than stages). An input that reports the end of
 * its data (a pcap port's rx_eof) ends the run once every stage has
 * drained; so does the N-th frame of --packets N (a live interface has
 * no end). --duration or SIGINT/SIGTERM end it otherwise. Per-stage
 * counters, the flows (--flows, CSV) and the mbufs not returned to the
 * pool are printed at exit.
 */

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_acl.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "qpio_devargs.h"
#include "qpio_eal.h"
#include "qpio_port.h"
#include "app_opts.h"
#include "pl_acl.h"

#define BURST 32
static_assert(BURST <= PL_CLASSIFY_BURST, "one burst is one pl_classify()");
#define NB_MBUFS 8191u
#define RING_SIZE 1024u
#define MAX_FLOWS 65536u
#define NB_STAGES 4
#define LINK_A "qp0,dev=soft0,qp=rc,peer=qp1"
#define LINK_B "qp1,dev=soft0,qp=rc,peer=qp0"

static volatile int quit;

struct pl_opts {
	const char *in;
	const char *out;
	const char *rules;
	const char *flows;
	double duration;
	uint64_t packets;         /* 0: no limit */
};

/* Flow key of the stateful stage: the family and the 5-tuple, padding
 * zeroed; an IPv4 address fills the first 4 bytes of its 16. */
struct flow_key {
	uint8_t family;           /* 4 or 6 */
	uint8_t proto;
	uint16_t sport, dport;    /* network order */
	uint8_t pad[2];
	uint8_t src[16], dst[16]; /* network order */
};

struct flow {
	struct flow_key key;
	uint64_t packets;
	uint64_t bytes;
	uint32_t rule;            /* 1-based line index of the permit rule */
};

/* Counters; each stage writes only its own. */
struct stats {
	uint64_t rx, rx_ring_full;
	struct pl_classify_stats cls;
	uint64_t cls_ring_full;
	uint64_t flow_in, new_flows, table_full, link_tx, link_drops;
	uint64_t sink_rx, out_tx, out_drops;
};

struct pipeline {
	uint16_t in_port, out_port, link_a, link_b;
	int has_out;
	int in_has_eof;
	uint64_t max_rx;             /* --packets; 0: no limit */
	struct rte_ring *r_cls, *r_flow;
	struct pl_acl acl;
	const struct pl_rules *rules;
	struct rte_hash *flows_h;
	struct flow *flows;
	struct stats st;
	volatile int done[NB_STAGES];
	uint64_t drain_deadline;     /* TSC; 0 until quit */
};

static struct pipeline pl;
static struct pl_rules rules;
typedef int (*stage_fn)(struct pipeline *p);
static stage_fn lcore_stages[RTE_MAX_LCORE][NB_STAGES];
static unsigned int lcore_nb[RTE_MAX_LCORE];

static void
on_signal(int sig)
{
	RTE_SET_USED(sig);
	quit = 1;
}

/* Enqueue what fits; free and count the rest. */
static void
ring_put(struct rte_ring *r, struct rte_mbuf **pkts, unsigned int n,
	 uint64_t *full)
{
	unsigned int k = rte_ring_enqueue_burst(r, (void **)pkts, n, NULL);

	if (k < n) {
		*full += n - k;
		rte_pktmbuf_free_bulk(pkts + k, n - k);
	}
}

static int
input_at_eof(struct pipeline *p)
{
	uint64_t eof = 0;

	if (!p->in_has_eof)
		return 0;
	qpio_port_xstat_get_by_name(p->in_port, "rx_eof", &eof);
	return eof != 0;
}

static int
stage_rx(struct pipeline *p)
{
	struct rte_mbuf *pkts[BURST];
	uint16_t n, want = BURST;

	if (p->done[0])
		return 1;
	/* A live input never runs dry: look at the stop before polling. */
	if (quit || (p->max_rx != 0 && p->st.rx >= p->max_rx)) {
		p->done[0] = 1;
		return 1;
	}
	if (p->max_rx != 0 && p->max_rx - p->st.rx < BURST)
		want = (uint16_t)(p->max_rx - p->st.rx);
	n = qpio_port_rx_burst(p->in_port, 0, pkts, want);
	if (n > 0) {
		p->st.rx += n;
		ring_put(p->r_cls, pkts, n, &p->st.rx_ring_full);
		return 0;
	}
	if (quit || input_at_eof(p))
		p->done[0] = 1;
	return p->done[0];
}

static int
stage_classify(struct pipeline *p)
{
	struct rte_mbuf *pkts[BURST], *keep[BURST];
	unsigned int n;
	int up_done = p->done[0], nk;

	if (p->done[1])
		return 1;
	n = rte_ring_dequeue_burst(p->r_cls, (void **)pkts, BURST, NULL);
	if (n == 0) {
		if (up_done)
			p->done[1] = 1;
		return p->done[1];
	}
	/* The rule travels with each kept frame to the next stage. */
	nk = pl_classify(&p->acl, p->rules, pkts, n, keep, &p->st.cls);
	if (nk > 0)
		ring_put(p->r_flow, keep, (unsigned int)nk,
			 &p->st.cls_ring_full);
	return 0;
}

static void
flow_count(struct pipeline *p, struct rte_mbuf *m)
{
	union pl_keys key;
	struct flow_key k;
	int32_t pos;

	/* Classify kept IPv4 and IPv6 frames only. */
	memset(&k, 0, sizeof(k));
	if (pl_key_get(m, &key) == PL_IPV4) {
		k.family = 4;
		k.proto = key.v4.proto;
		memcpy(k.src, &key.v4.src, 4);
		memcpy(k.dst, &key.v4.dst, 4);
		k.sport = key.v4.sport;
		k.dport = key.v4.dport;
	} else {
		k.family = 6;
		k.proto = key.v6.proto;
		memcpy(k.src, key.v6.src, 16);
		memcpy(k.dst, key.v6.dst, 16);
		k.sport = key.v6.sport;
		k.dport = key.v6.dport;
	}
	pos = rte_hash_lookup(p->flows_h, &k);
	if (pos < 0) {
		pos = rte_hash_add_key(p->flows_h, &k);
		if (pos < 0) {
			p->st.table_full++;
			return;
		}
		p->st.new_flows++;
		p->flows[pos].key = k;
		p->flows[pos].rule = m->hash.usr;
	}
	p->flows[pos].packets++;
	p->flows[pos].bytes += rte_pktmbuf_pkt_len(m);
}

static int
stage_flows(struct pipeline *p)
{
	struct rte_mbuf *pkts[BURST];
	unsigned int n, i, sent = 0, tries;
	int up_done = p->done[1];

	if (p->done[2]) {
		/* The soft NIC makes progress (RNR retries) only while the
		 * sender polls: keep polling until the sink has it all. */
		qpio_port_tx_burst(p->link_a, 0, NULL, 0);
		return p->done[3];
	}
	n = rte_ring_dequeue_burst(p->r_flow, (void **)pkts, BURST, NULL);
	if (n == 0) {
		qpio_port_tx_burst(p->link_a, 0, NULL, 0);
		if (up_done)
			p->done[2] = 1;
		return 0;
	}
	p->st.flow_in += n;
	for (i = 0; i < n; i++)
		flow_count(p, pkts[i]);
	/* RC gives back-pressure: retry, bounded, then count the rest. */
	for (tries = 0; tries < 100000 && sent < n && !p->drain_deadline;
	     tries++)
		sent += qpio_port_tx_burst(p->link_a, 0, pkts + sent, n - sent);
	p->st.link_tx += sent;
	if (sent < n) {
		p->st.link_drops += n - sent;
		rte_pktmbuf_free_bulk(pkts + sent, n - sent);
	}
	return 0;
}

static int
stage_sink(struct pipeline *p)
{
	struct rte_mbuf *pkts[BURST];
	uint16_t n, sent;

	if (p->done[3])
		return 1;
	n = qpio_port_rx_burst(p->link_b, 0, pkts, BURST);
	if (n == 0) {
		/* Everything sent on the link has arrived. */
		if (p->done[2] && p->st.sink_rx == p->st.link_tx)
			p->done[3] = 1;
		if (p->drain_deadline != 0 &&
		    rte_get_tsc_cycles() > p->drain_deadline)
			p->done[3] = 1;
		return p->done[3];
	}
	p->st.sink_rx += n;
	if (!p->has_out) {
		rte_pktmbuf_free_bulk(pkts, n);
		return 0;
	}
	sent = qpio_port_tx_burst(p->out_port, 0, pkts, n);
	p->st.out_tx += sent;
	if (sent < n) {
		p->st.out_drops += n - sent;
		rte_pktmbuf_free_bulk(pkts + sent, n - sent);
	}
	return 0;
}

static const stage_fn stages[NB_STAGES] = {
	stage_rx, stage_classify, stage_flows, stage_sink,
};
static const char *const stage_names[NB_STAGES] = {
	"rx", "classify", "flows", "sink",
};

static int
stage_lcore(void *arg)
{
	unsigned int lc = rte_lcore_id(), i, left;

	RTE_SET_USED(arg);
	do {
		left = 0;
		for (i = 0; i < lcore_nb[lc]; i++)
			left += !lcore_stages[lc][i](&pl);
	} while (left > 0);
	return 0;
}

static int
port_setup(uint16_t id, struct rte_mempool *mp)
{
	struct qpio_port_info info;
	uint16_t nb;
	int ret;

	ret = qpio_port_info_get(id, &info);
	if (ret == 0)
		ret = qpio_port_configure(id, 1, 1, NULL);
	nb = RTE_MAX(RTE_MIN(512, info.max_desc), info.min_desc);
	if (ret == 0)
		ret = qpio_port_rx_queue_setup(id, 0, nb, SOCKET_ID_ANY, mp);
	if (ret == 0)
		ret = qpio_port_tx_queue_setup(id, 0, nb, SOCKET_ID_ANY);
	if (ret == 0)
		ret = qpio_port_start(id);
	return ret;
}

static int
port_make(const char *devargs)
{
	int id = qpio_port_create(devargs);

	if (id < 0)
		fprintf(stderr, "pipeline: port %s: %s\n", devargs,
			strerror(-id));
	return id;
}

static int
port_start(int id, const char *devargs, struct rte_mempool *mp)
{
	if (port_setup((uint16_t)id, mp) < 0) {
		fprintf(stderr, "pipeline: port %s: setup failed\n", devargs);
		return -EINVAL;
	}
	return 0;
}

static int
port_open(const char *devargs, struct rte_mempool *mp)
{
	int id = port_make(devargs);

	if (id < 0)
		return id;
	if (port_start(id, devargs, mp) < 0) {
		qpio_port_close((uint16_t)id);
		return -EINVAL;
	}
	return id;
}

static int
flow_cmp(const void *a, const void *b)
{
	const struct flow *x = *(const struct flow *const *)a;
	const struct flow *y = *(const struct flow *const *)b;
	int c;

	/* IPv4 first; addresses in network order compare as numbers. */
	if (x->key.family != y->key.family)
		return x->key.family < y->key.family ? -1 : 1;
	if (x->key.proto != y->key.proto)
		return x->key.proto < y->key.proto ? -1 : 1;
	c = memcmp(x->key.src, y->key.src, 16);
	if (c != 0)
		return c;
	if (x->key.sport != y->key.sport)
		return ntohs(x->key.sport) < ntohs(y->key.sport) ? -1 : 1;
	c = memcmp(x->key.dst, y->key.dst, 16);
	if (c != 0)
		return c;
	if (x->key.dport != y->key.dport)
		return ntohs(x->key.dport) < ntohs(y->key.dport) ? -1 : 1;
	return 0;
}

/* CSV, IPv4 flows then IPv6 flows, each sorted by the 5-tuple:
 * proto,src,sport,dst,dport,packets,bytes,rule_line */
static int
flows_write(const struct pipeline *p, const char *path)
{
	const struct flow **v;
	const void *key;
	void *data;
	uint32_t it = 0;
	int32_t pos;
	unsigned int n = 0, i;
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	FILE *f = fopen(path, "w");
	int bad;

	if (f == NULL) {
		fprintf(stderr, "pipeline: --flows %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	v = calloc(MAX_FLOWS, sizeof(*v));
	if (v == NULL) {
		fclose(f);
		return -1;
	}
	while ((pos = rte_hash_iterate(p->flows_h, &key, &data, &it)) >= 0)
		v[n++] = &p->flows[pos];
	qsort(v, n, sizeof(*v), flow_cmp);
	fprintf(f, "proto,src,sport,dst,dport,packets,bytes,rule_line\n");
	for (i = 0; i < n; i++) {
		int af = v[i]->key.family == 6 ? AF_INET6 : AF_INET;

		inet_ntop(af, v[i]->key.src, s, sizeof(s));
		inet_ntop(af, v[i]->key.dst, d, sizeof(d));
		fprintf(f, "%u,%s,%u,%s,%u,%lu,%lu,%u\n", v[i]->key.proto, s,
			ntohs(v[i]->key.sport), d, ntohs(v[i]->key.dport),
			v[i]->packets, v[i]->bytes,
			p->rules->rule[v[i]->rule - 1].line);
	}
	free(v);
	/* A write, flush or close that fails (a full disk) fails the run. */
	bad = ferror(f);
	if (fclose(f) != 0 || bad) {
		fprintf(stderr, "pipeline: --flows %s: cannot write: %s\n", path,
			strerror(errno != 0 ? errno : EIO));
		return -1;
	}
	return 0;
}

static void
stats_print(const struct pipeline *p)
{
	const struct stats *st = &p->st;
	struct qpio_port_stats ps;

	printf("rx: %lu frames, ring full %lu\n", st->rx, st->rx_ring_full);
	/* What never reached rx: the input port's own drops (a full PMD
	 * ring; a frame above its max_rx_pkt_len, which a pcap port counts
	 * in errors). */
	memset(&ps, 0, sizeof(ps));
	qpio_port_stats_get(p->in_port, &ps);
	printf("before the pipeline: in port missed %lu errors %lu nombuf "
	       "%lu\n", ps.imissed, ps.ierrors, ps.rx_nombuf);
	printf("classify: in %lu, permitted %lu, denied %lu, no_match %lu, "
	       "not_ip %lu, bad %lu, ring full %lu; ipv6 in %lu\n",
	       st->cls.in, st->cls.permitted, st->cls.denied,
	       st->cls.no_match, st->cls.not_ip, st->cls.bad,
	       st->cls_ring_full, st->cls.ipv6);
	printf("flows: in %lu, flows %lu, table full %lu, link tx %lu, link "
	       "drops %lu\n", st->flow_in, st->new_flows, st->table_full,
	       st->link_tx, st->link_drops);
	printf("sink: link rx %lu, out tx %lu, out drops %lu\n", st->sink_rx,
	       st->out_tx, st->out_drops);
}

static void
usage(FILE *f, const char *prog)
{
	fprintf(f, "Usage: %s [EAL args] -- --in DEVARGS --rules FILE "
		"[--out DEVARGS] [--flows FILE] [--duration S] [--packets N]\n"
		"  --in DEVARGS     the input port (eth0,vdev=..., pcap0,...)\n"
		"  --rules FILE     the classification rules\n"
		"  --out DEVARGS    the output port [none]\n"
		"  --flows FILE     write the flow table as CSV at exit\n"
		"  --duration S     stop after S seconds, 0..10000000 (0.5 too)\n"
		"                   [0: until the input ends or a signal]\n"
		"  --packets N      stop after N frames, N >= 1 [no limit]\n"
		"  -h, --help       this text\n"
		"Each option is given once; numbers are decimal digits.\n",
		prog);
}

static int
parse_args(int argc, char **argv, struct pl_opts *o)
{
	static const struct option longopts[] = {
		{ "in", required_argument, NULL, 'i' },
		{ "out", required_argument, NULL, 'o' },
		{ "rules", required_argument, NULL, 'r' },
		{ "flows", required_argument, NULL, 'f' },
		{ "duration", required_argument, NULL, 'd' },
		{ "packets", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned char seen[256] = { 0 };
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		/* A second value would replace the first without a word. */
		if (c != '?' && c != 'h' &&
		    example_opt_once("pipeline", longopts, c, seen) < 0)
			return -1;
		switch (c) {
		case 'i':
		case 'o':
			if (example_opt_text("pipeline", c == 'i' ? "--in" :
					     "--out", optarg, "DEVARGS") < 0)
				return -1;
			*(c == 'i' ? &o->in : &o->out) = optarg;
			break;
		case 'r':
		case 'f':
			if (example_opt_text("pipeline", c == 'r' ? "--rules" :
					     "--flows", optarg, "a file name") < 0)
				return -1;
			*(c == 'r' ? &o->rules : &o->flows) = optarg;
			break;
		case 'd':
			if (example_opt_seconds("pipeline", "--duration", optarg,
						1e7, &o->duration) < 0)
				return -1;
			break;
		case 'n':
			if (qpio_devargs_parse_u64(optarg, 1, UINT64_MAX,
						   &o->packets) < 0) {
				fprintf(stderr, "pipeline: --packets=%s: want a "
					"frame count >= 1 (decimal digits only: no "
					"sign, no space, no 0x)\n", optarg);
				return -1;
			}
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 1;
		default:
			usage(stderr, argv[0]);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pipeline: unexpected argument '%s' (options "
			"start with --; see --help)\n", argv[optind]);
		return -1;
	}
	if (o->in == NULL || o->rules == NULL) {
		fprintf(stderr, "pipeline: --in and --rules are required "
			"(--help)\n");
		return -1;
	}
	return 0;
}

/* The --flows file, written at exit: not the --rules file nor a file
 * the --in or --out port reads or writes (it would be overwritten), and
 * writable now, so that the run does not fail at its end. It is opened
 * to append: an existing file keeps its bytes until the run writes it. */
static int
flows_check(const struct pl_opts *o)
{
	const char *opt = NULL, *dev = NULL;
	FILE *f;

	if (o->flows == NULL)
		return 0;
	if (qpio_devargs_same_file(o->rules, o->flows)) {
		fprintf(stderr, "pipeline: --rules %s and --flows %s: one file; "
			"the flows would overwrite the rules, give --flows a file "
			"of its own\n", o->rules, o->flows);
		return -1;
	}
	if (qpio_devargs_names_file(o->in, o->flows)) {
		opt = "--in";
		dev = o->in;
	} else if (o->out != NULL &&
		   qpio_devargs_names_file(o->out, o->flows)) {
		opt = "--out";
		dev = o->out;
	}
	if (opt != NULL) {
		fprintf(stderr, "pipeline: --flows %s and %s %s: the port reads "
			"or writes that file, which the flows would overwrite; "
			"give --flows a file of its own\n", o->flows, opt, dev);
		return -1;
	}
	f = fopen(o->flows, "a");
	if (f == NULL) {
		fprintf(stderr, "pipeline: --flows %s: cannot write it: %s\n",
			o->flows, strerror(errno));
		return -1;
	}
	fclose(f);
	return 0;
}

int
main(int argc, char **argv)
{
	struct rte_hash_parameters hp = {
		.name = "pl_flows", .entries = MAX_FLOWS,
		.key_len = sizeof(struct flow_key), .hash_func = rte_jhash,
		.socket_id = SOCKET_ID_ANY,
	};
	struct rte_mempool *mp = NULL;
	unsigned int workers[RTE_MAX_LCORE], nb_workers = 0, i, lc;
	int in = -1, out = -1, la = -1, lb = -1, ret, status = 1;
	int sep, app_argc;
	char **app_argv;
	struct pl_opts o;
	uint64_t t_end, v;
	char err[512];

	/* The options and the rules are read before EAL starts, so a
	 * refused line or file sets up nothing. */
	sep = example_args_split(argc, argv, &app_argc, &app_argv);
	ret = parse_args(app_argc, app_argv, &o);
	if (ret != 0)
		return ret > 0 ? 0 : 2;
	if (pl_rules_load(o.rules, &rules, err, sizeof(err)) < 0) {
		fprintf(stderr, "pipeline: --rules %s\n", err);
		return 2;
	}
	if (flows_check(&o) < 0)
		return 2;
	ret = rte_eal_init(sep, argv);
	if (ret < 0) {
		fprintf(stderr, "pipeline: EAL init: %s\n",
			rte_strerror(rte_errno));
		qpio_eal_init_failed();
		return 1;
	}
	RTE_LCORE_FOREACH_WORKER(lc)
		workers[nb_workers++] = lc;
	if (nb_workers == 0) {
		fprintf(stderr, "pipeline: give EAL at least one worker lcore "
			"(-l 0-1)\n");
		qpio_eal_cleanup();
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	pl.rules = &rules;
	pl.max_rx = o.packets;
	mp = rte_pktmbuf_pool_create("pl_pool", NB_MBUFS, 256, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	pl.r_cls = rte_ring_create("pl_cls", RING_SIZE, rte_socket_id(),
				   RING_F_SP_ENQ | RING_F_SC_DEQ);
	pl.r_flow = rte_ring_create("pl_flow", RING_SIZE, rte_socket_id(),
				    RING_F_SP_ENQ | RING_F_SC_DEQ);
	pl.flows_h = rte_hash_create(&hp);
	pl.flows = calloc(MAX_FLOWS, sizeof(*pl.flows));
	ret = pl_acl_build(&rules, "pl_acl", rte_socket_id(), &pl.acl);
	if (mp == NULL || pl.r_cls == NULL || pl.r_flow == NULL ||
	    pl.flows_h == NULL || pl.flows == NULL || ret != 0) {
		fprintf(stderr, "pipeline: setup: %s\n",
			rte_strerror(rte_errno));
		goto out;
	}
	in = port_open(o.in, mp);
	if (in < 0)
		goto out;
	pl.in_port = (uint16_t)in;
	pl.in_has_eof = qpio_port_xstat_get_by_name(in, "rx_eof", &v) == 0;
	if (o.out != NULL) {
		out = port_open(o.out, mp);
		if (out < 0)
			goto out;
		pl.out_port = (uint16_t)out;
		pl.has_out = 1;
	}
	/* Both ends of the link exist before either starts: a qp port
	 * refuses to start while its peer= names no port. */
	la = port_make(LINK_A);
	lb = la < 0 ? -1 : port_make(LINK_B);
	if (la < 0 || lb < 0 || port_start(la, LINK_A, mp) < 0 ||
	    port_start(lb, LINK_B, mp) < 0)
		goto out;
	pl.link_a = (uint16_t)la;
	pl.link_b = (uint16_t)lb;
	printf("pipeline: %u rules; in %s; RC link qp0 -> qp1%s%s\n",
	       rules.nb, o.in, o.out ? "; out " : "", o.out ? o.out : "");
	for (i = 0; i < NB_STAGES; i++) {
		lc = workers[i % nb_workers];
		lcore_stages[lc][lcore_nb[lc]++] = stages[i];
		printf("stage %s on lcore %u\n", stage_names[i], lc);
	}
	fflush(stdout);
	for (i = 0; i < nb_workers && i < NB_STAGES; i++)
		rte_eal_remote_launch(stage_lcore, NULL, workers[i]);
	t_end = o.duration > 0 ? rte_get_tsc_cycles() +
		(uint64_t)(o.duration * rte_get_tsc_hz()) : UINT64_MAX;
	while (!pl.done[NB_STAGES - 1]) {
		if (!quit && rte_get_tsc_cycles() >= t_end)
			quit = 1;
		/* After a stop, the link gets two seconds to drain. */
		if (quit && pl.drain_deadline == 0)
			pl.drain_deadline = rte_get_tsc_cycles() +
				2 * rte_get_tsc_hz();
		rte_delay_us_sleep(1000);
	}
	rte_eal_mp_wait_lcore();
	if (pl.max_rx != 0 && pl.st.rx < pl.max_rx)
		printf("pipeline: stopped after %lu of --packets %lu frames\n",
		       pl.st.rx, pl.max_rx);
	stats_print(&pl);
	if (o.flows != NULL && flows_write(&pl, o.flows) < 0)
		goto out;
	status = 0;
out:
	if (in >= 0)
		qpio_port_close((uint16_t)in);
	if (out >= 0)
		qpio_port_close((uint16_t)out);
	if (la >= 0)
		qpio_port_close((uint16_t)la);
	if (lb >= 0)
		qpio_port_close((uint16_t)lb);
	if (pl.r_cls != NULL) {
		struct rte_mbuf *m = NULL;

		while (rte_ring_dequeue(pl.r_cls, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		while (rte_ring_dequeue(pl.r_flow, (void **)&m) == 0)
			rte_pktmbuf_free(m);
	}
	rte_ring_free(pl.r_cls);
	rte_ring_free(pl.r_flow);
	rte_hash_free(pl.flows_h);
	free(pl.flows);
	pl_acl_free(&pl.acl);
	if (mp != NULL) {
		printf("mbufs not returned to pl_pool: %u\n",
		       rte_mempool_in_use_count(mp));
		rte_mempool_free(mp);
	}
	fflush(stdout);
	qpio_eal_cleanup();
	return status;
}
