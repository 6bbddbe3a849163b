/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-perf options: perftest's short options where perftest has them,
 * long options for the rest (getopt_long). Every refusal names the rule
 * it enforces and how to fix the command line.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpio_devargs.h"
#include "qpio_rdma.h"
#include "perf.h"

enum {
	OPT_TEST = 256, OPT_MODE, OPT_DEV, OPT_SGE, OPT_VALIDATE, OPT_RATE,
	OPT_STRICT, OPT_JSON, OPT_CSV, OPT_EXPECT, OPT_GBITS, OPT_CORRUPT,
	OPT_RUN_INF, OPT_SERVER, OPT_CONNECT, OPT_TIMEOUT, OPT_PERFTEST,
	OPT_END,
};

static const struct option longopts[] = {
	{ "test", required_argument, NULL, OPT_TEST },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "dev", required_argument, NULL, OPT_DEV },
	{ "connection", required_argument, NULL, 'c' },
	{ "size", required_argument, NULL, 's' },
	{ "all", no_argument, NULL, 'a' },
	{ "iters", required_argument, NULL, 'n' },
	{ "duration", required_argument, NULL, 'D' },
	{ "inline_size", required_argument, NULL, 'I' },
	{ "post_list", required_argument, NULL, 'l' },
	{ "cq-mod", required_argument, NULL, 'Q' },
	{ "qp", required_argument, NULL, 'q' },
	{ "tx-depth", required_argument, NULL, 't' },
	{ "rx-depth", required_argument, NULL, 'r' },
	{ "bidirectional", no_argument, NULL, 'b' },
	{ "atomic_type", required_argument, NULL, 'A' },
	{ "report_gbits", no_argument, NULL, OPT_GBITS },
	{ "sge", required_argument, NULL, OPT_SGE },
	{ "validate", no_argument, NULL, OPT_VALIDATE },
	{ "corrupt-at", required_argument, NULL, OPT_CORRUPT },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "strict", no_argument, NULL, OPT_STRICT },
	{ "run_infinitely", no_argument, NULL, OPT_RUN_INF },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "expect", required_argument, NULL, OPT_EXPECT },
	{ "server", no_argument, NULL, OPT_SERVER },
	{ "connect", required_argument, NULL, OPT_CONNECT },
	{ "port", required_argument, NULL, 'p' },
	{ "mtu", required_argument, NULL, 'm' },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "perftest", no_argument, NULL, OPT_PERFTEST },
	{ "rdma_cm", no_argument, NULL, 'R' },
	{ "gid-index", required_argument, NULL, 'x' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void
perf_usage(FILE *f)
{
	fprintf(f,
"usage: qpio-perf [EAL options] -- --test TEST [--mode lat|bw] [options]\n"
"  --test send|write|read|atomic, or a perftest name (ib_send_lat, ib_write_bw, ...)\n"
"  --mode lat|bw          latency (ping-pong) or bandwidth (streaming)\n"
"  --dev DEVARGS          device of the client end (default soft0); give it\n"
"                         twice for a separate server device\n"
"  -c, --connection RC|UC|UD   transport (default RC)\n"
"  -s, --size BYTES       message size (default 2 for lat, 65536 for bw)\n"
"  -a, --all              every size 2..2^23, capped by the device\n"
"  -n, --iters N          messages per QP (default 1000 lat, 5000 bw)\n"
"  -D, --duration SEC     run for SEC seconds instead of -n\n"
"  --run_infinitely       bw: run until SIGINT, a row every -D seconds (default 5)\n"
"  -I, --inline_size B    largest inline message (default 236, capped by the device)\n"
"  -l, --post_list N      WRs per doorbell (bw, default 1)\n"
"  -Q, --cq-mod N         one signaled WR in N (bw, default 100, at most -t)\n"
"  -q, --qp N             QPs (bw, default 1)\n"
"  -t, --tx-depth N       send queue depth (default 128 bw, 1 lat)\n"
"  -r, --rx-depth N       receive queue depth (default 512)\n"
"  -b, --bidirectional    both ends send (bw)\n"
"  -A, --atomic_type CMP_AND_SWP|FETCH_AND_ADD   (default FETCH_AND_ADD)\n"
"  --report_gbits         bandwidth in Gb/s instead of MiB/s\n"
"  --sge N                scatter/gather entries per message (default 1)\n"
"  --validate             check every payload and atomic result\n"
"  --rate PPS             open-loop load, latency from the scheduled time (bw)\n"
"  --json FILE, --csv FILE  machine-readable results (schema " PERF_SCHEMA ")\n"
"  --strict               a capability the device cut is an error\n"
"  --expect GATES         e.g. 'p99<=2.5us,mpps>=10': exit 3 when one fails\n"
"  --server               run the server end here; the client is another process\n"
"  --connect HOST         run the client end here, connecting to HOST's --server\n"
"  -p, --port PORT        TCP port of the --server/--connect exchange (default 18515)\n"
"  --timeout SEC          wait at most SEC s for the peer and each exchange (default 30)\n"
"  --perftest             the peer is a perftest tool (ib_send_bw, ...): speak its\n"
"                         TCP exchange; both sides need the same -s and -n\n"
"  -R, --rdma_cm          with --perftest: the peer runs with -R (its exchange on\n"
"                         an RC QP, the test QP connected by rdma_cm; RC only)\n"
"  -x, --gid-index N      source GID of the paths (default 0; with --perftest the\n"
"                         first IPv4-mapped GID, as perftest chooses)\n"
"  -m, --mtu BYTES        path MTU at most: 256, 512, 1024, 2048 or 4096 (default\n"
"                         the ports' active MTU; the smaller of both ends is used)\n"
"  --corrupt-at N         test hook: corrupt message N of QP 0 (--validate catches it)\n"
"  -h, --help             this text\n"
"numbers are decimal digits (SEC, PPS and gate values with at most one point);\n"
"--dev (twice at most) and --expect may be repeated, any other option is given once\n"
"exit status: 0 pass, 1 run failed or --validate mismatch, 2 usage, 3 --expect failed\n");
}

const char *
perf_test_name(enum perf_test t)
{
	static const char *const n[] = { "send", "write", "read", "atomic" };

	return n[t];
}

const char *
perf_mode_name(enum perf_mode m)
{
	return m == PERF_LAT ? "lat" : "bw";
}

const char *
perf_role_name(enum perf_role r)
{
	return r == PERF_ROLE_SERVER ? "server" :
		r == PERF_ROLE_CLIENT ? "client" : "local";
}

const char *
perf_transport_name(int qpt)
{
	return qpt == QPIO_QPT_RC ? "RC" : qpt == QPIO_QPT_UC ? "UC" : "UD";
}

static int
refuse(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Decimal unsigned integer in [lo, hi], lib/devargs' rule (decimal
 * digits only: no sign, no space, no 0x); 0 on success. */
static int
parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
	uint32_t v32 = 0;
	uint64_t x = 0;
	int ret;

	if (hi <= UINT32_MAX) {
		ret = qpio_devargs_parse_u32(s, (uint32_t)lo, (uint32_t)hi, &v32);
		x = v32;
	} else {
		ret = qpio_devargs_parse_u64(s, lo, hi, &x);
	}
	if (ret < 0)
		return -1;
	*v = x;
	return 0;
}

/* Seconds or a rate: decimal digits with at most one point, in [lo, hi],
 * and above lo when lo_open. */
static int
parse_decimal(const char *s, double lo, double hi, int lo_open, double *v)
{
	double x = 0;

	if (qpio_devargs_parse_decimal(s, lo, hi, &x) < 0 ||
	    (lo_open && x == lo))
		return -1;
	*v = x;
	return 0;
}

/* The option as the command line wrote it: "--size" when the long name
 * was given, "-s" for the short one. */
static const char *
opt_written(int c, int li, char *buf, size_t len)
{
	if (li >= 0)
		snprintf(buf, len, "--%s", longopts[li].name);
	else
		snprintf(buf, len, "-%c", c);
	return buf;
}

static int
parse_test(const char *s, struct perf_opts *o, int *mode_from_name)
{
	static const char *const base[] = { "send", "write", "read", "atomic" };
	char name[32];
	unsigned int i;

	for (i = 0; i < 4; i++)
		if (strcmp(s, base[i]) == 0) {
			o->test = (enum perf_test)i;
			*mode_from_name = -1;
			return 0;
		}
	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "ib_%s_lat", base[i]);
		if (strcmp(s, name) == 0) {
			o->test = (enum perf_test)i;
			*mode_from_name = PERF_LAT;
			return 0;
		}
		snprintf(name, sizeof(name), "ib_%s_bw", base[i]);
		if (strcmp(s, name) == 0) {
			o->test = (enum perf_test)i;
			*mode_from_name = PERF_BW;
			return 0;
		}
	}
	return -1;
}

/* What the options were given as, beyond their values in perf_opts. */
struct opts_seen {
	int have_test;
	int mode_set;      /* --mode: enum perf_mode, -1 when not given */
	int name_mode;     /* mode a perftest name implies, -1 for none */
	int A_set, I_set, l_set, q_set, b_set;
	int net_set;       /* -p or --timeout */
	int perftest_set;
};

static void
opts_defaults(struct perf_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->transport = QPIO_QPT_RC;
	o->post_list = 1;
	o->qps = 1;
	o->sge = 1;
	o->corrupt_at = -1;
	o->atomic_op = PERF_FETCH_AND_ADD;
	o->port = PERF_DEFAULT_PORT;
	o->timeout = PERF_DEFAULT_TIMEOUT;
	o->gid_index = -1;
}

/* --expect G[,G...]: the gates, appended to o->gates. */
static int
opt_expect(struct perf_opts *o, const char *optarg, char *err,
	   size_t errlen)
{
	char buf[512], *tok, *save = NULL;

	if (strlen(optarg) >= sizeof(buf))
		return refuse(err, errlen, "--expect: at most %zu "
			      "characters", sizeof(buf) - 1);
	/* strtok_r() would skip an empty gate silently. */
	if (optarg[0] == ',' || strstr(optarg, ",,") != NULL ||
	    (optarg[0] != '\0' &&
	     optarg[strlen(optarg) - 1] == ','))
		return refuse(err, errlen, "--expect '%s': an empty "
			      "gate in the list", optarg);
	strcpy(buf, optarg);
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		if (o->ngates == PERF_MAX_GATES)
			return refuse(err, errlen, "--expect: at most "
				      "%u gates", PERF_MAX_GATES);
		if (perf_gate_parse(tok, &o->gates[o->ngates],
				    err, errlen) < 0)
			return -EINVAL;
		o->ngates++;
	}
	if (o->ngates == 0)
		return refuse(err, errlen, "--expect: give at least one "
			      "gate, e.g. 'p99<=2.5us,mpps>=10'");
	return 0;
}

/* Take option c (getopt_long's return; opt as written, optarg its
 * value) into o and st. @return 0, 1 for --help (usage printed), or
 * -EINVAL with err set. */
static int
opt_take(int c, const char *opt, char **argv, struct perf_opts *o,
	 struct opts_seen *st, char *err, size_t errlen)
{
	uint64_t v;

#define NUM(lo, hi) do { \
	if (parse_u64(optarg, lo, hi, &v) < 0) \
		return refuse(err, errlen, "%s '%s': must be a decimal integer in " \
			      "%" PRIu64 "..%" PRIu64, opt, optarg, \
			      (uint64_t)(lo), (uint64_t)(hi)); \
	} while (0)

	switch (c) {
	case OPT_TEST:
		if (parse_test(optarg, o, &st->name_mode) < 0)
			return refuse(err, errlen, "--test '%s': not a test; use "
				      "send, write, read, atomic or a perftest "
				      "name such as ib_send_lat or ib_write_bw",
				      optarg);
		st->have_test = 1;
		break;
	case OPT_MODE:
		if (strcmp(optarg, "lat") == 0)
			st->mode_set = PERF_LAT;
		else if (strcmp(optarg, "bw") == 0)
			st->mode_set = PERF_BW;
		else
			return refuse(err, errlen, "%s '%s': use lat or bw",
				      opt, optarg);
		break;
	case OPT_DEV:
		if (o->ndev == 2)
			return refuse(err, errlen, "--dev given more than twice: "
				      "one device for the client end and "
				      "optionally one for the server end");
		if (optarg[0] == '\0' ||
		    strlen(optarg) >= sizeof(o->dev[0]))
			return refuse(err, errlen, "--dev: devargs must be 1..%zu "
				      "characters, e.g. soft0 or ibv0,dev=rxe0",
				      sizeof(o->dev[0]) - 1);
		strcpy(o->dev[o->ndev++], optarg);
		break;
	case 'c':
		if (strcmp(optarg, "RC") == 0)
			o->transport = QPIO_QPT_RC;
		else if (strcmp(optarg, "UC") == 0)
			o->transport = QPIO_QPT_UC;
		else if (strcmp(optarg, "UD") == 0)
			o->transport = QPIO_QPT_UD;
		else
			return refuse(err, errlen, "%s '%s': the transport is "
				      "RC, UC or UD", opt, optarg);
		break;
	case 's':
		NUM(1, 1u << 31);
		o->size = (uint32_t)v;
		o->size_set = 1;
		break;
	case 'a':
		o->all_sizes = 1;
		break;
	case 'n':
		NUM(1, 1000000000000ull);
		o->iters = v;
		o->iters_set = 1;
		break;
	case 'D':
		if (parse_decimal(optarg, 0, 86400, 1, &o->duration) < 0)
			return refuse(err, errlen, "%s '%s': the duration is "
				      "seconds in (0, 86400], decimal digits "
				      "with at most one point", opt, optarg);
		break;
	case 'I':
		NUM(0, 4096);
		o->inline_size = (uint32_t)v;
		st->I_set = 1;
		break;
	case 'l':
		NUM(1, PERF_MAX_POST_LIST);
		o->post_list = (uint32_t)v;
		st->l_set = 1;
		break;
	case 'Q':
		NUM(1, PERF_MAX_DEPTH);
		o->cq_mod = (uint32_t)v;
		o->cq_mod_set = 1;
		break;
	case 'q':
		NUM(1, PERF_MAX_QPS);
		o->qps = (uint32_t)v;
		st->q_set = 1;
		break;
	case 't':
		NUM(1, PERF_MAX_DEPTH);
		o->tx_depth = (uint32_t)v;
		o->tx_set = 1;
		break;
	case 'r':
		NUM(1, PERF_MAX_DEPTH);
		o->rx_depth = (uint32_t)v;
		o->rx_set = 1;
		break;
	case 'b':
		o->bidir = 1;
		st->b_set = 1;
		break;
	case 'A':
		if (strcmp(optarg, "CMP_AND_SWP") == 0)
			o->atomic_op = PERF_CMP_AND_SWP;
		else if (strcmp(optarg, "FETCH_AND_ADD") == 0)
			o->atomic_op = PERF_FETCH_AND_ADD;
		else
			return refuse(err, errlen, "%s '%s': the atomic "
				      "operation is CMP_AND_SWP or FETCH_AND_ADD",
				      opt, optarg);
		st->A_set = 1;
		break;
	case OPT_GBITS:
		o->report_gbits = 1;
		break;
	case OPT_SGE:
		NUM(1, PERF_MAX_SGE);
		o->sge = (uint32_t)v;
		break;
	case OPT_VALIDATE:
		o->validate = 1;
		break;
	case OPT_CORRUPT:
		NUM(0, 1000000000000ull);
		o->corrupt_at = (int64_t)v;
		break;
	case OPT_RATE:
		if (parse_decimal(optarg, 1, 1e9, 0, &o->rate) < 0)
			return refuse(err, errlen, "--rate '%s': messages per "
				      "second in [1, 1000000000], decimal digits "
				      "with at most one point", optarg);
		break;
	case OPT_STRICT:
		o->strict = 1;
		break;
	case OPT_RUN_INF:
		o->run_inf = 1;
		break;
	case OPT_SERVER:
		if (o->role == PERF_ROLE_CLIENT)
			return refuse(err, errlen, "--server and --connect are "
				      "exclusive: one process listens, the other "
				      "connects");
		o->role = PERF_ROLE_SERVER;
		break;
	case OPT_CONNECT:
		if (o->role == PERF_ROLE_SERVER)
			return refuse(err, errlen, "--server and --connect are "
				      "exclusive: one process listens, the other "
				      "connects");
		if (optarg[0] == '\0' || strlen(optarg) >= sizeof(o->host))
			return refuse(err, errlen, "--connect: HOST must be 1..%zu "
				      "characters (a name, IPv4 or IPv6 address)",
				      sizeof(o->host) - 1);
		strcpy(o->host, optarg);
		o->role = PERF_ROLE_CLIENT;
		break;
	case 'p':
		NUM(0, 65535);
		o->port = (uint16_t)v;
		st->net_set = 1;
		break;
	case OPT_PERFTEST:
		o->perftest = 1;
		st->perftest_set = 1;
		break;
	case 'R':
		o->rdma_cm = 1;
		break;
	case 'x':
		NUM(0, 255);
		o->gid_index = (int)v;
		break;
	case 'm':
		NUM(256, 4096);
		if ((v & (v - 1)) != 0)
			return refuse(err, errlen, "%s '%s': an IB MTU, "
				      "256, 512, 1024, 2048 or 4096", opt,
				      optarg);
		o->mtu = (uint32_t)v;
		break;
	case OPT_TIMEOUT:
		if (parse_decimal(optarg, 0, 86400, 1, &o->timeout) < 0)
			return refuse(err, errlen, "--timeout '%s': seconds, "
				      "a number in (0, 86400], decimal digits "
				      "with at most one point", optarg);
		st->net_set = 1;
		break;
	case OPT_JSON:
	case OPT_CSV:
		if (optarg[0] == '\0' || strlen(optarg) >= sizeof(o->json))
			return refuse(err, errlen, "--%s: the file name must be "
				      "1..%zu characters",
				      c == OPT_JSON ? "json" : "csv",
				      sizeof(o->json) - 1);
		strcpy(c == OPT_JSON ? o->json : o->csv, optarg);
		break;
	case OPT_EXPECT:
		return opt_expect(o, optarg, err, errlen);
	case 'h':
		perf_usage(stdout);
		return 1;
	case ':':
		return refuse(err, errlen, "option '%s' needs a value",
			      argv[optind - 1]);
	default:
		return refuse(err, errlen, "unknown option '%s' (see --help)",
			      argv[optind - 1]);
	}
#undef NUM
	return 0;
}

/* Two processes (--server, --connect) and --perftest's peer: what one end of a pair may be given. @return 0, or -EINVAL with err set. */
static int
opts_check_roles(struct perf_opts *o, const struct opts_seen *st, char *err,
		 size_t errlen)
{
	if (st->net_set && o->role == PERF_ROLE_LOCAL)
		return refuse(err, errlen, "-p and --timeout are for two processes: "
			      "add --server on one and --connect HOST on the other");
	/* Two processes: each has one end and one device. */
	if (o->role != PERF_ROLE_LOCAL) {
		const char *r = o->role == PERF_ROLE_SERVER ? "--server" : "--connect";

		if (o->ndev > 1)
			return refuse(err, errlen, "%s: this process runs one end, on one "
				      "device; give --dev once", r);
		if (o->role == PERF_ROLE_CLIENT && o->port == 0)
			return refuse(err, errlen, "-p 0: the client needs the server's "
				      "port; give -p PORT");
		if (o->run_inf)
			return refuse(err, errlen, "--run_infinitely runs in one process "
				      "only; drop it or %s", r);
		if (o->corrupt_at >= 0 &&
		    (o->role != PERF_ROLE_CLIENT ||
		     (o->test != PERF_SEND && o->test != PERF_WRITE)))
			return refuse(err, errlen, "--corrupt-at across processes "
				      "flips a byte of a SEND or WRITE the client "
				      "sends (the server's --validate catches it): "
				      "give it to the --connect end of a send or "
				      "write test, or drop it");
	}

	/* --perftest: what perftest's exchange carries is one QP, one size a
	 * run and one direction (perftest 4.5-0.17: perftest_communication.c
	 * and the tools' main()). */
	if (st->perftest_set && o->role == PERF_ROLE_LOCAL)
		return refuse(err, errlen, "--perftest: the peer is a perftest "
			      "process; add --server (it runs the client) or "
			      "--connect HOST (it runs the server)");
	/* -R: perftest's -R (perftest 4.5-0.17 create_comm_struct() and
	 * create_rdma_cm_connection()): its exchange rides an RC QP of its
	 * own and the test QP is connected by rdma_cm. */
	if (o->rdma_cm && !st->perftest_set)
		return refuse(err, errlen, "-R: the rdma_cm exchange is perftest's "
			      "-R; add --perftest (the peer runs ib_*_* -R)");
	if (o->rdma_cm && o->transport != QPIO_QPT_RC)
		return refuse(err, errlen, "-R: RC only (perftest refuses UC with "
			      "rdma_cm; its UD over rdma_cm is not spoken here); "
			      "drop -c or -R");
	if (st->perftest_set && st->q_set && o->qps > 1)
		return refuse(err, errlen, "--perftest: one QP; drop -q");
	/* perftest's ib_write_bw and ib_read_bw sweep without a word
	 * between sizes (their server is passive); the other tools
	 * synchronise each size, which is not spoken. */
	if (st->perftest_set && o->all_sizes &&
	    !(o->mode == PERF_BW &&
	      (o->test == PERF_WRITE || o->test == PERF_READ)))
		return refuse(err, errlen, "--perftest -a: ib_write_bw and "
			      "ib_read_bw only (the others synchronise each "
			      "size); give -s instead");
	if (st->perftest_set && st->b_set)
		return refuse(err, errlen, "--perftest: one direction; drop -b");
	if (st->perftest_set && (o->duration > 0 || o->rate > 0))
		return refuse(err, errlen, "--perftest: a run is -n messages at "
			      "full speed; drop -D and --rate");
	if (o->role == PERF_ROLE_SERVER && o->mode == PERF_LAT && o->ngates > 0)
		return refuse(err, errlen, "--expect with --server in lat mode: the "
			      "client measures the latency; give --expect to the "
			      "--connect side");
	return 0;
}

/* Transport rules (IBA 9.8, table 'Service types and operations'). @return 0, or -EINVAL with err set. */
static int
opts_check_transport(struct perf_opts *o, char *err, size_t errlen)
{
	if (o->transport == QPIO_QPT_UD && o->test != PERF_SEND)
		return refuse(err, errlen, "UD carries SEND only: RDMA WRITE, READ "
			      "and atomics need a connected QP (IBA 9.8); use -c RC%s",
			      o->test == PERF_WRITE ? " or UC" : "");
	if (o->transport == QPIO_QPT_UC &&
	    (o->test == PERF_READ || o->test == PERF_ATOMIC))
		return refuse(err, errlen, "UC has no RDMA READ or atomics, which "
			      "need a reliable responder (IBA 9.8); use -c RC");
	return 0;
}

/* Sizes. @return 0, or -EINVAL with err set. */
static int
opts_check_sizes(struct perf_opts *o, const struct opts_seen *st, char *err,
		 size_t errlen)
{
	if (o->all_sizes && o->size_set)
		return refuse(err, errlen, "-a and -s are exclusive: -a runs every size "
			      "2..2^23; drop -s or -a");
	if (o->test == PERF_ATOMIC) {
		if (o->size_set && o->size != 8)
			return refuse(err, errlen, "-s %u: atomics operate on 8 bytes "
				      "(IBA 9.4.5); drop -s or use -s 8", o->size);
		if (o->all_sizes)
			return refuse(err, errlen, "-a: atomics have one size, 8 bytes; "
				      "drop -a");
		if (st->I_set)
			return refuse(err, errlen, "-I: atomics are never inline "
				      "(their SGE receives the original value)");
		if (o->sge > 1)
			return refuse(err, errlen, "--sge %u: an atomic WR has exactly "
				      "one 8-byte SGE; drop --sge", o->sge);
		o->size = 8;
	} else if (st->A_set) {
		return refuse(err, errlen, "-A selects the atomic operation; it needs "
			      "--test atomic");
	}
	if (o->test == PERF_READ && st->I_set)
		return refuse(err, errlen, "-I: RDMA READ is never inline (the data "
			      "comes back from the responder); drop -I");
	if (!o->size_set && o->test != PERF_ATOMIC)
		o->size = o->mode == PERF_LAT ? 2 : 65536;
	if (!o->all_sizes && o->sge > o->size)
		return refuse(err, errlen, "--sge %u splits each message into %u "
			      "SGEs: needs -s >= %u", o->sge, o->sge, o->sge);
	if (o->all_sizes && o->sge > PERF_ALL_MIN_SIZE)
		return refuse(err, errlen, "--sge %u with -a: the smallest size (2) "
			      "cannot be split into %u SGEs; use --sge 1 or 2",
			      o->sge, o->sge);
	if (o->corrupt_at >= 0 && o->test == PERF_WRITE && o->mode == PERF_LAT &&
	    o->size < 2 && !o->all_sizes)
		return refuse(err, errlen, "--corrupt-at with a WRITE latency test "
			      "needs -s >= 2: the last byte tells the responder "
			      "the message has arrived, the first one is corrupted");
	o->inline_set = st->I_set;
	if (!st->I_set)
		o->inline_size = 236;
	return 0;
}

/* Iterations or duration. @return 0, or -EINVAL with err set. */
static int
opts_check_iters(struct perf_opts *o, char *err, size_t errlen)
{
	if (o->iters_set && o->duration > 0)
		return refuse(err, errlen, "-n and -D are exclusive: a run is "
			      "either N iterations or SEC seconds");
	if (!o->iters_set)     /* perftest's: 1000, ib_write_bw 5000 */
		o->iters = o->mode == PERF_LAT ||
			(o->perftest && o->test != PERF_WRITE) ? 1000 : 5000;
	if (o->run_inf) {
		if (o->iters_set)
			return refuse(err, errlen, "-n and --run_infinitely are "
				      "exclusive: the run ends on SIGINT; -D sets "
				      "the report interval");
		if (o->mode != PERF_BW)
			return refuse(err, errlen, "--run_infinitely needs --mode bw: "
				      "it prints the stream's rate every -D seconds");
		if (o->all_sizes)
			return refuse(err, errlen, "--run_infinitely runs one size: "
				      "drop -a");
		if (o->duration == 0)
			o->duration = 5;
	}
	/* A run of N iterations sends messages 0..N-1 on each QP; one of -D
	 * or --run_infinitely has no last message. */
	if (o->corrupt_at >= 0 && o->duration == 0 &&
	    (uint64_t)o->corrupt_at >= o->iters)
		return refuse(err, errlen, "--corrupt-at %" PRId64 ": beyond the "
			      "run, whose QP 0 sends messages 0..%" PRIu64
			      " (-n %" PRIu64 "%s); give N below %" PRIu64,
			      o->corrupt_at, o->iters - 1, o->iters,
			      o->iters_set ? "" : ", the default", o->iters);
	return 0;
}

/* Mode rules. @return 0, or -EINVAL with err set. */
static int
opts_check_mode(struct perf_opts *o, const struct opts_seen *st, char *err,
		size_t errlen)
{
	if (o->mode == PERF_LAT) {
		if (st->q_set && o->qps > 1)
			return refuse(err, errlen, "-q %u: a latency test has one "
				      "message in flight on one QP; use --mode bw "
				      "for several QPs", o->qps);
		if (st->b_set)
			return refuse(err, errlen, "-b: a latency test is already a "
				      "ping-pong between both ends; -b is for --mode bw");
		if (st->l_set)
			return refuse(err, errlen, "-l: a latency test posts one WR "
				      "at a time; -l is for --mode bw");
		if (o->cq_mod_set)
			return refuse(err, errlen, "-Q: a latency test signals every "
				      "WR; -Q is for --mode bw");
		if (o->rate > 0)
			return refuse(err, errlen, "--rate is open-loop load: it needs "
				      "--mode bw (lat is closed-loop by definition)");
		if (!o->tx_set)
			o->tx_depth = 1;
	} else if (!o->tx_set) {
		o->tx_depth = 128;
	}
	if (!o->rx_set)
		o->rx_depth = 512;
	if (!o->cq_mod_set)
		o->cq_mod = o->mode == PERF_LAT ? 1 :
			(o->rate > 0 ? 1 : (o->tx_depth < 100 ? o->tx_depth : 100));
	if (o->cq_mod > o->tx_depth)
		return refuse(err, errlen, "-Q %u > -t %u: one WR in %u is signaled, "
			      "so %u WRs must fit the send queue; lower -Q or raise -t",
			      o->cq_mod, o->tx_depth, o->cq_mod, o->cq_mod);
	if (o->post_list > o->tx_depth)
		return refuse(err, errlen, "-l %u > -t %u: a post list must fit the "
			      "send queue; lower -l or raise -t", o->post_list,
			      o->tx_depth);
	if (o->test == PERF_SEND && o->mode == PERF_LAT && o->rx_depth < 2)
		return refuse(err, errlen, "-r %u: a send latency test keeps at "
			      "least 2 receives posted", o->rx_depth);
	return 0;
}

int
perf_opts_parse(int argc, char **argv, struct perf_opts *o, char *err,
		size_t errlen)
{
	struct opts_seen st = { .mode_set = -1, .name_mode = -1 };
	unsigned char seen[OPT_END] = { 0 };
	char name[32];
	const char *opt;
	int c, li, ret;

	opts_defaults(o);
	err[0] = '\0';
	optind = 1;
	opterr = 0;
	for (;;) {
		li = -1;
		c = getopt_long(argc, argv, ":c:s:an:D:I:l:Q:q:t:r:bA:p:x:m:Rh",
				longopts, &li);
		if (c == -1)
			break;
		opt = opt_written(c, li, name, sizeof(name));
		/* A second value would replace the first without a word. */
		if (c > 0 && c < OPT_END && c != '?' && c != ':' &&
		    c != OPT_DEV && c != OPT_EXPECT) {
			if (seen[c])
				return refuse(err, errlen, "%s given twice: give each "
					      "option once (only --dev and --expect "
					      "repeat)", opt);
			seen[c] = 1;
		}
		ret = opt_take(c, opt, argv, o, &st, err, errlen);
		if (ret != 0)
			return ret;
	}
	if (optind < argc)
		return refuse(err, errlen, "unexpected argument '%s': options only "
			      "(see --help)", argv[optind]);
	if (!st.have_test)
		return refuse(err, errlen, "--test is required: send, write, read, "
			      "atomic, or a perftest name such as ib_send_lat");
	if (st.name_mode >= 0 && st.mode_set >= 0 && st.name_mode != st.mode_set)
		return refuse(err, errlen, "--test ib_%s_%s names the %s mode but "
			      "--mode is %s: drop --mode or use the matching name",
			      perf_test_name(o->test), perf_mode_name(st.name_mode),
			      perf_mode_name(st.name_mode), perf_mode_name(st.mode_set));
	if (st.name_mode < 0 && st.mode_set < 0)
		return refuse(err, errlen, "--mode lat|bw is required with --test %s",
			      perf_test_name(o->test));
	o->mode = (enum perf_mode)(st.name_mode >= 0 ? st.name_mode : st.mode_set);
	if (o->ndev == 0) {
		strcpy(o->dev[0], "soft0");
		o->ndev = 1;
	}
	ret = opts_check_roles(o, &st, err, errlen);
	if (ret == 0)
		ret = opts_check_transport(o, err, errlen);
	if (ret == 0)
		ret = opts_check_sizes(o, &st, err, errlen);
	if (ret == 0)
		ret = opts_check_iters(o, err, errlen);
	if (ret == 0)
		ret = opts_check_mode(o, &st, err, errlen);
	return ret;
}
