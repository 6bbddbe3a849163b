/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-perf reports: perftest's table (same headers, extra columns on the
 * right), the JSON and CSV records of schema "qpio-perf/1", and the
 * --expect gates.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpio_devargs.h"
#include "qpio_rdma.h"
#include "perf.h"

#define LINE "---------------------------------------------------------------------------------------\n"

enum perf_metric {
	M_P50, M_P90, M_P99, M_P999, M_P9999, M_P99999, M_TMIN, M_TMAX,
	M_TTYP, M_TAVG, M_TSTDEV, M_MAX, M_MPPS, M_BW, M_GBITS, M_MISMATCH,
	M_LOST, M_COUNT,
};

static const struct {
	const char *name;
	int latency;            /* takes ns/us/ms, compared in us */
	double pct;
} metrics[M_COUNT] = {
	[M_P50] = { "p50", 1, 50 }, [M_P90] = { "p90", 1, 90 },
	[M_P99] = { "p99", 1, 99 }, [M_P999] = { "p99.9", 1, 99.9 },
	[M_P9999] = { "p99.99", 1, 99.99 }, [M_P99999] = { "p99.999", 1, 99.999 },
	[M_TMIN] = { "t_min", 1, 0 }, [M_TMAX] = { "t_max", 1, 100 },
	[M_TTYP] = { "t_typical", 1, 50 }, [M_TAVG] = { "t_avg", 1, -1 },
	[M_TSTDEV] = { "t_stdev", 1, -1 }, [M_MAX] = { "max", 1, 100 },
	[M_MPPS] = { "mpps", 0, 0 }, [M_BW] = { "bw_mib", 0, 0 },
	[M_GBITS] = { "gbits", 0, 0 }, [M_MISMATCH] = { "mismatches", 0, 0 },
	[M_LOST] = { "lost", 0, 0 },
};

static double
us(double cycles, double hz)
{
	return cycles * 1e6 / hz;
}

static double
metric_value(int m, const struct perf_result *r, double hz)
{
	switch (m) {
	case M_TAVG:
		return us(perf_hist_mean(r->hist), hz);
	case M_TSTDEV:
		return us(perf_hist_stdev(r->hist), hz);
	case M_TMIN:
		return us((double)r->hist->min * (r->hist->count > 0), hz);
	case M_TMAX:
	case M_MAX:
		return us((double)r->hist->max, hz);
	case M_MPPS:
		return r->msg_rate_mpps;
	case M_BW:
		return r->bw_avg_mib;
	case M_GBITS:
		return r->bw_avg_mib * 1048576.0 * 8 / 1e9;
	case M_MISMATCH:
		return (double)r->mismatches;
	case M_LOST:
		return (double)r->lost;
	default:
		return us((double)perf_hist_percentile(r->hist, metrics[m].pct), hz);
	}
}

int
perf_gate_parse(const char *s, struct perf_gate *g, char *err, size_t errlen)
{
	static const char *const ops[] = { "<=", ">=", "<", ">" };
	const char *p = NULL, *end;
	char name[16], num[40];
	size_t nlen, vlen;
	int m, op, ret;

	memset(g, 0, sizeof(*g));
	for (op = 0; op < 4 && p == NULL; op++)
		p = strstr(s, ops[op]);
	op--;
	/* "<=" must win over "<" at the same place. */
	if (p != NULL && (op == 2 || op == 3) && p[1] == '=')
		op -= 2;
	if (p == NULL || p == s) {
		snprintf(err, errlen, "--expect '%s': a gate is METRIC OP VALUE, "
			 "e.g. p99<=2.5us or mpps>=10 (OP is <=, >=, < or >)", s);
		return -EINVAL;
	}
	nlen = (size_t)(p - s);
	if (nlen >= sizeof(name)) {
		snprintf(err, errlen, "--expect '%s': unknown metric", s);
		return -EINVAL;
	}
	memcpy(name, s, nlen);
	name[nlen] = '\0';
	for (m = 0; m < M_COUNT; m++)
		if (strcmp(name, metrics[m].name) == 0)
			break;
	if (m == M_COUNT) {
		snprintf(err, errlen, "--expect '%s': unknown metric '%s'; use p50, "
			 "p90, p99, p99.9, p99.99, p99.999, t_min, t_max, t_typical, "
			 "t_avg, t_stdev, max, mpps, bw_mib, gbits, mismatches or lost",
			 s, name);
		return -EINVAL;
	}
	p += op < 2 ? 2 : 1;
	/* The number by lib/devargs' rule (digits, at most one point: no
	 * sign, space, exponent or hex), then the unit. */
	vlen = strspn(p, "0123456789.");
	ret = -EINVAL;
	if (vlen < sizeof(num)) {
		memcpy(num, p, vlen);
		num[vlen] = '\0';
		ret = qpio_devargs_parse_decimal(num, 0, 1e18, &g->value);
	}
	if (ret < 0) {
		snprintf(err, errlen, "--expect '%s': '%s' is not a number "
			 "(decimal digits with at most one point, then the "
			 "unit)", s, p);
		return -EINVAL;
	}
	end = p + vlen;
	if (metrics[m].latency) {
		if (strcmp(end, "ns") == 0)
			g->value /= 1000;
		else if (strcmp(end, "ms") == 0)
			g->value *= 1000;
		else if (strcmp(end, "us") != 0 && *end != '\0')
			end = NULL;
	} else if (*end != '\0') {
		end = NULL;
	}
	if (end == NULL) {
		snprintf(err, errlen, "--expect '%s': bad unit; latencies take ns, "
			 "us (the default) or ms, rates no unit", s);
		return -EINVAL;
	}
	g->metric = m;
	g->op = op;
	snprintf(g->text, sizeof(g->text), "%s", s);
	return 0;
}

static int
gate_pass(const struct perf_gate *g, double v)
{
	switch (g->op) {
	case 0: return v <= g->value;
	case 1: return v >= g->value;
	case 2: return v < g->value;
	default: return v > g->value;
	}
}

int
perf_gates_check(const struct perf_opts *o, const struct perf_result *r,
		 unsigned int nres, double hz)
{
	unsigned int i, k;
	int all = 1;

	for (i = 0; i < o->ngates; i++)
		for (k = 0; k < nres; k++) {
			double v = metric_value(o->gates[i].metric, &r[k], hz);
			int ok = gate_pass(&o->gates[i], v);

			printf(" expect %-20s #bytes %-8u value %-12.3f %s\n",
			       o->gates[i].text, r[k].bytes, v, ok ? "PASS" : "FAIL");
			all &= ok;
		}
	return all;
}

void
perf_report_header(const struct perf_opts *o, const struct perf_caps *c)
{
	printf(LINE);
	printf("                    %s %s test (qpio-perf)\n",
	       o->test == PERF_SEND ? "Send" : o->test == PERF_WRITE ? "RDMA_Write" :
	       o->test == PERF_READ ? "RDMA_Read" : "Atomic",
	       o->mode == PERF_LAT ? "Latency" : "BW");
	printf(" Device         : %s (%s)\n", c->device, c->driver);
	printf(" Number of qps  : %u\t\tTransport type : %s\n", o->qps,
	       perf_transport_name(o->transport));
	printf(" Connection type: %s\t\tUsing SRQ      : OFF\n",
	       perf_transport_name(o->transport));
	printf(" TX depth       : %u\t\tCQ Moderation  : %u\n", c->cap[0].granted,
	       o->cq_mod);
	if (o->test == PERF_SEND)
		printf(" RX depth       : %u\n", c->cap[1].granted);
	printf(" Mtu            : %u[B]\t\tPost List      : %u\n", c->path_mtu,
	       o->post_list);
	printf(" Max inline data: %u[B]\t\tSGEs           : %u\n",
	       c->cap[4].granted, c->cap[2].granted);
	if (o->test == PERF_ATOMIC)
		printf(" Atomic type    : %s\n", o->atomic_op == PERF_CMP_AND_SWP ?
		       "CMP_AND_SWP" : "FETCH_AND_ADD");
	if (o->rate > 0)
		printf(" Rate           : %.0f msg/s open loop\n", o->rate);
	if (o->validate)
		printf(" Validate       : every payload%s\n",
		       o->test == PERF_ATOMIC ? " (returned values)" : "");
	printf(LINE);
	if (o->mode == PERF_LAT)
		printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]"
		       "    t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   "
		       "99.9%% percentile[usec]   99.99%% percentile[usec]   "
		       "99.999%% percentile[usec]   max[usec]\n");
	else
		printf(" #bytes     #iterations    BW peak[%s]    BW average[%s]   "
		       "MsgRate[Mpps]   t_typical[usec]   99%% percentile[usec]   "
		       "99.99%% percentile[usec]   max[usec]\n",
		       o->report_gbits ? "Gb/sec" : "MiB/sec",
		       o->report_gbits ? "Gb/sec" : "MiB/sec");
	fflush(stdout);  /* a peer process or a pipe sees it before the run */
}

void
perf_report_row(const struct perf_opts *o, const struct perf_result *r, double hz)
{
	const struct perf_hist *h = r->hist;
	double scale = o->report_gbits ? 1048576.0 * 8 / 1e9 : 1;

	if (o->mode == PERF_LAT)
		printf(" %-7u %-10" PRIu64 "   %-7.2f        %-7.2f      %-7.2f  "
		       "        %-7.2f        %-7.2f          %-7.2f                %-7.2f"
		       "                  %-7.2f                   %-7.2f"
		       "                 %-7.2f\n",
		       r->bytes, r->iterations, us((double)h->min * (h->count > 0), hz),
		       us((double)h->max, hz),
		       us((double)perf_hist_percentile(h, 50), hz),
		       us(perf_hist_mean(h), hz), us(perf_hist_stdev(h), hz),
		       us((double)perf_hist_percentile(h, 99), hz),
		       us((double)perf_hist_percentile(h, 99.9), hz),
		       us((double)perf_hist_percentile(h, 99.99), hz),
		       us((double)perf_hist_percentile(h, 99.999), hz),
		       us((double)h->max, hz));
	else
		printf(" %-10u %-10" PRIu64 "     %-10.2f         %-10.2f           "
		       "%-10.6f      %-10.2f        %-10.2f             %-10.2f"
		       "               %-10.2f\n",
		       r->bytes, r->iterations, r->bw_peak_mib * scale,
		       r->bw_avg_mib * scale, r->msg_rate_mpps,
		       us((double)perf_hist_percentile(h, 50), hz),
		       us((double)perf_hist_percentile(h, 99), hz),
		       us((double)perf_hist_percentile(h, 99.99), hz),
		       us((double)h->max, hz));
	if (o->mode == PERF_LAT && h->count > 0)
		printf("  worst: message %" PRIu64 " of %" PRIu64 ", posted %.3f ms "
		       "after the run began, %.2f usec\n", h->max_index, h->count,
		       (double)h->max_at * 1e3 / hz, us((double)h->max, hz));
	if (o->validate)
		printf("  validate: %" PRIu64 " checked, %" PRIu64 " mismatches, %"
		       PRIu64 " lost\n", r->checked, r->mismatches, r->lost);
	else if (r->lost > 0)
		printf("  lost: %" PRIu64 " messages never arrived (%s)\n", r->lost,
		       perf_transport_name(o->transport));
	if (o->rate > 0 && r->seconds > 0)
		printf("  rate: target %.0f msg/s, achieved %.0f msg/s\n",
		       r->rate_target_pps, (double)r->iterations / r->seconds);
}

void
perf_report_footer(const struct perf_opts *o)
{
	(void)o;
	printf(LINE);
	fflush(stdout);
}

static void
json_caps(FILE *f, const struct perf_caps *c)
{
	unsigned int i;
	int first = 1;

	fprintf(f, "{\"device\": \"%s\", \"driver\": \"%s\", \"path_mtu\": %u, "
		"\"requested\": {", c->device, c->driver, c->path_mtu);
	for (i = 0; i < PERF_NCAPS; i++)
		fprintf(f, "%s\"%s\": %u", i ? ", " : "", c->cap[i].name,
			c->cap[i].requested);
	fprintf(f, "}, \"granted\": {");
	for (i = 0; i < PERF_NCAPS; i++)
		fprintf(f, "%s\"%s\": %u", i ? ", " : "", c->cap[i].name,
			c->cap[i].granted);
	fprintf(f, "}, \"cut\": [");
	for (i = 0; i < PERF_NCAPS; i++)
		if (c->cap[i].cut != NULL) {
			fprintf(f, "%s{\"cap\": \"%s\", \"requested\": %u, \"granted\": "
				"%u, \"reason\": \"%s\"}", first ? "" : ", ",
				c->cap[i].name, c->cap[i].requested, c->cap[i].granted,
				c->cap[i].cut);
			first = 0;
		}
	fprintf(f, "]}");
}

/* Open a record file, or print why not naming the option and the file. */
static FILE *
report_open(const char *opt, const char *path, int *err)
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		*err = errno;
		fprintf(stderr, "qpio-perf: %s %s: cannot write it: %s\n", opt,
			path, strerror(*err));
	}
	return f;
}

/* Close a record file: a write, flush or close error (a full disk) is
 * printed once, naming the option and the file, and fails the run. */
static int
report_close(FILE *f, const char *opt, const char *path)
{
	int bad = ferror(f), err;

	if (fclose(f) == 0 && !bad)
		return 0;
	err = errno != 0 ? errno : EIO;
	fprintf(stderr, "qpio-perf: %s %s: cannot write: %s\n", opt, path,
		strerror(err));
	return -err;
}

int
perf_report_json(const struct perf_opts *o, const struct perf_caps *c,
		 const struct perf_result *r, unsigned int nres, double hz,
		 const char *exit_status)
{
	unsigned int k, i;
	int err = 0;
	FILE *f = report_open("--json", o->json, &err);

	if (f == NULL)
		return -err;
	fprintf(f, "{\n  \"schema\": \"%s\",\n  \"test\": \"%s\",\n  \"mode\": \"%s\",\n"
		"  \"transport\": \"%s\",\n  \"role\": \"%s\",\n  \"tsc_hz\": %.0f,\n",
		PERF_SCHEMA, perf_test_name(o->test), perf_mode_name(o->mode),
		perf_transport_name(o->transport), perf_role_name(o->role), hz);
	fprintf(f, "  \"options\": {\"iterations\": %" PRIu64 ", \"duration_s\": %g, "
		"\"qps\": %u, \"tx_depth\": %u, \"rx_depth\": %u, \"post_list\": %u, "
		"\"cq_mod\": %u, \"inline\": %u, \"sge\": %u, \"bidirectional\": %s, "
		"\"atomic_op\": \"%s\", \"rate_pps\": %g, \"validate\": %s, "
		"\"strict\": %s, \"run_infinitely\": %s},\n",
		o->duration > 0 ? 0 : o->iters, o->duration, o->qps, o->tx_depth,
		o->rx_depth, o->post_list, o->cq_mod, o->inline_size, o->sge,
		o->bidir ? "true" : "false",
		o->atomic_op == PERF_CMP_AND_SWP ? "CMP_AND_SWP" : "FETCH_AND_ADD",
		o->rate, o->validate ? "true" : "false", o->strict ? "true" : "false",
		o->run_inf ? "true" : "false");
	fprintf(f, "  \"results\": [");
	for (k = 0; k < nres; k++) {
		const struct perf_result *x = &r[k];

		fprintf(f, "%s\n    {\"bytes\": %u, \"iterations\": %" PRIu64
			", \"seconds\": %.6f, \"bw_peak_mib_s\": %.3f, "
			"\"bw_avg_mib_s\": %.3f, \"bw_avg_gbit_s\": %.6f, "
			"\"msg_rate_mpps\": %.6f, \"rate_target_pps\": %g, "
			"\"rate_achieved_pps\": %.1f,\n     \"latency_us\": {\"count\": %"
			PRIu64, k ? "," : "", x->bytes, x->iterations, x->seconds,
			x->bw_peak_mib, x->bw_avg_mib,
			x->bw_avg_mib * 1048576.0 * 8 / 1e9, x->msg_rate_mpps,
			x->rate_target_pps,
			x->seconds > 0 ? (double)x->iterations / x->seconds : 0.0,
			x->hist->count);
		for (i = M_P50; i <= M_MAX; i++)
			fprintf(f, ", \"%s\": %.4f", metrics[i].name,
				metric_value((int)i, x, hz));
		fprintf(f, "},\n     \"validate\": {\"enabled\": %s, \"checked\": %"
			PRIu64 ", \"mismatches\": %" PRIu64 ", \"lost\": %" PRIu64
			"},\n     \"caps\": ", o->validate ? "true" : "false",
			x->checked, x->mismatches, x->lost);
		json_caps(f, c);
		fprintf(f, "}");
	}
	fprintf(f, "\n  ],\n  \"expect\": [");
	for (i = 0; i < o->ngates; i++)
		for (k = 0; k < nres; k++) {
			double v = metric_value(o->gates[i].metric, &r[k], hz);

			fprintf(f, "%s{\"gate\": \"%s\", \"bytes\": %u, \"value\": %.4f, "
				"\"pass\": %s}", i || k ? ", " : "", o->gates[i].text,
				r[k].bytes, v, gate_pass(&o->gates[i], v) ? "true" : "false");
		}
	fprintf(f, "],\n  \"status\": \"%s\"\n}\n", exit_status);
	return report_close(f, "--json", o->json);
}

int
perf_report_csv(const struct perf_opts *o, const struct perf_caps *c,
		const struct perf_result *r, unsigned int nres, double hz)
{
	unsigned int k, i;
	int err = 0;
	FILE *f = report_open("--csv", o->csv, &err);

	if (f == NULL)
		return -err;
	fprintf(f, "schema,test,mode,transport,device,driver,bytes,iterations,seconds,"
		"bw_peak_mib_s,bw_avg_mib_s,msg_rate_mpps,rate_target_pps");
	for (i = M_P50; i <= M_MAX; i++)
		fprintf(f, ",%s_us", metrics[i].name);
	fprintf(f, ",checked,mismatches,lost");
	for (i = 0; i < PERF_NCAPS; i++)
		fprintf(f, ",granted_%s", c->cap[i].name);
	fprintf(f, ",cut,role\n");
	for (k = 0; k < nres; k++) {
		fprintf(f, "%s,%s,%s,%s,%s,%s,%u,%" PRIu64 ",%.6f,%.3f,%.3f,%.6f,%g",
			PERF_SCHEMA, perf_test_name(o->test), perf_mode_name(o->mode),
			perf_transport_name(o->transport), c->device, c->driver,
			r[k].bytes, r[k].iterations, r[k].seconds, r[k].bw_peak_mib,
			r[k].bw_avg_mib, r[k].msg_rate_mpps, r[k].rate_target_pps);
		for (i = M_P50; i <= M_MAX; i++)
			fprintf(f, ",%.4f", metric_value((int)i, &r[k], hz));
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, r[k].checked,
			r[k].mismatches, r[k].lost);
		for (i = 0; i < PERF_NCAPS; i++)
			fprintf(f, ",%u", c->cap[i].granted);
		fprintf(f, ",");
		for (i = 0; i < PERF_NCAPS; i++)
			if (c->cap[i].cut != NULL)
				fprintf(f, "%s:%u->%u;", c->cap[i].name,
					c->cap[i].requested, c->cap[i].granted);
		fprintf(f, ",%s\n", perf_role_name(o->role));
	}
	return report_close(f, "--csv", o->csv);
}
