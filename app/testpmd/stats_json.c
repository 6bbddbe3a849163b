/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-testpmd --json: one JSON object per line (JSON Lines), each with
 * "schema": "qpio-testpmd/1" and "record": "periodic", "final" or
 * "exit". The values are those the text statistics print (stats.c).
 * --csv: a row per port and period. A write, flush or close that fails
 * is printed once, naming the option and the file, and fails the run.
 * Layout and rules: doc/guides/testpmd_app_ug/index.rst and
 * doc/guides/tools/json.rst.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>

#include "testpmd_app.h"

/* The first error of an output, printed once with the option and file. */
static void
stats_out_fail(struct stats_out *o, int err)
{
	if (o->err != 0)
		return;
	o->err = err != 0 ? err : EIO;
	fprintf(stderr, "qpio-testpmd: %s %s: cannot write: %s\n", o->opt,
		o->path, testpmd_strerror(o->err));
}

int
stats_out_open(struct stats_out *o, const char *opt, const char *path)
{
	memset(o, 0, sizeof(*o));
	o->opt = opt;
	o->path = path;
	if (path == NULL)
		return 0;
	o->f = fopen(path, "w");
	if (o->f == NULL) {
		fprintf(stderr, "qpio-testpmd: %s %s: %s\n", opt, path,
			testpmd_strerror(errno));
		return -1;
	}
	setvbuf(o->f, NULL, _IOLBF, 0);   /* whole records for readers */
	return 0;
}

/* The stream for a record, or NULL when o takes none (not asked for, or
 * failed before). errno is cleared, so that a write failing inside the
 * record's fprintf() calls leaves its own for stats_out_flush(). */
static FILE *
stats_out_begin(struct stats_out *o)
{
	if (o->f == NULL || o->err != 0)
		return NULL;
	errno = 0;
	return o->f;
}

int
stats_out_flush(struct stats_out *o)
{
	int err = errno;

	if (o->f != NULL && o->err == 0) {
		if (ferror(o->f))
			stats_out_fail(o, err);
		else if (fflush(o->f) != 0)
			stats_out_fail(o, errno);
	}
	return o->err != 0 ? -1 : 0;
}

int
stats_out_close(struct stats_out *o)
{
	if (o->f == NULL)
		return o->err != 0 ? -1 : 0;
	stats_out_flush(o);
	/* fclose() flushes what a full buffer still holds. */
	if (fclose(o->f) != 0)
		stats_out_fail(o, errno);
	o->f = NULL;
	return o->err != 0 ? -1 : 0;
}

/* A JSON string; xstat names and port names are ASCII without quotes,
 * but escape anyway. */
static void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void
json_head(FILE *f, const char *record)
{
	fprintf(f, "{\"schema\":\"" TESTPMD_JSON_SCHEMA "\",\"record\":");
	json_str(f, record);
}

static void
json_xstats(FILE *f, const struct stats_xstats *x)
{
	unsigned int i;

	fprintf(f, ",\"xstats\":{");
	for (i = 0; i < x->n; i++) {
		if (i > 0)
			fputc(',', f);
		json_str(f, x->names[i].name);
		fprintf(f, ":%" PRIu64, x->values[i].value);
	}
	fputc('}', f);
}

void
stats_json_periodic(struct stats_out *o, double secs,
		    const struct stats_period *p,
		    const struct stats_xstats *xs, uint16_t nb)
{
	FILE *f = stats_out_begin(o);
	uint16_t i;

	if (f == NULL)
		return;
	json_head(f, "periodic");
	fprintf(f, ",\"time_s\":%.6f,\"ports\":[", secs);
	for (i = 0; i < nb; i++) {
		const struct stats_period *s = &p[i];

		fprintf(f, "%s{\"port\":%u,\"rx_packets\":%" PRIu64
			",\"rx_bytes\":%" PRIu64 ",\"rx_missed\":%" PRIu64
			",\"rx_errors\":%" PRIu64 ",\"rx_nombuf\":%" PRIu64
			",\"tx_packets\":%" PRIu64 ",\"tx_bytes\":%" PRIu64
			",\"tx_errors\":%" PRIu64 ",\"rx_pps\":%" PRIu64
			",\"tx_pps\":%" PRIu64 ",\"rx_bps\":%" PRIu64
			",\"tx_bps\":%" PRIu64, i > 0 ? "," : "", s->port,
			s->rx_packets, s->rx_bytes, s->rx_missed, s->rx_errors,
			s->rx_nombuf, s->tx_packets, s->tx_bytes, s->tx_errors,
			s->rx_pps, s->tx_pps, s->rx_bps, s->tx_bps);
		if (xs != NULL)
			json_xstats(f, &xs[i]);
		fputc('}', f);
	}
	fprintf(f, "]}\n");
	stats_out_flush(o);
}

static void
json_port_final(FILE *f, const struct stats_port_final *p)
{
	fprintf(f, "\"rx_packets\":%" PRIu64 ",\"rx_dropped\":%" PRIu64
		",\"rx_total\":%" PRIu64 ",\"rx_nombuf\":%" PRIu64
		",\"rx_bytes\":%" PRIu64 ",\"tx_packets\":%" PRIu64
		",\"tx_dropped\":%" PRIu64 ",\"tx_total\":%" PRIu64
		",\"tx_retries\":%" PRIu64 ",\"tx_bytes\":%" PRIu64
		",\"rx_bps\":%" PRIu64 ",\"tx_bps\":%" PRIu64,
		p->rx_packets, p->rx_dropped, p->rx_packets + p->rx_dropped,
		p->rx_nombuf, p->rx_bytes, p->tx_packets, p->tx_dropped,
		p->tx_packets + p->tx_dropped, p->tx_retries, p->tx_bytes,
		p->rx_bps, p->tx_bps);
}

void
stats_json_final(struct stats_out *o, const struct stats_final *fin,
		 const struct stats_xstats *xs)
{
	FILE *f = stats_out_begin(o);
	uint16_t i;

	if (f == NULL)
		return;
	json_head(f, "final");
	fprintf(f, ",\"time_s\":%.6f,\"ports\":[", fin->secs);
	for (i = 0; i < fin->nb_ports; i++) {
		fprintf(f, "%s{\"port\":%u,", i > 0 ? "," : "", i);
		json_port_final(f, &fin->port[i]);
		if (xs != NULL)
			json_xstats(f, &xs[i]);
		fputc('}', f);
	}
	fprintf(f, "],\"total\":{");
	json_port_final(f, &fin->total);
	fprintf(f, "},\"throughput_mpps\":%.6f}\n", fin->mpps);
	stats_out_flush(o);
}

void
stats_csv_header(struct stats_out *o)
{
	FILE *f = stats_out_begin(o);

	if (f == NULL)
		return;
	fprintf(f, "schema,time_s,port,rx_packets,rx_bytes,rx_missed,"
		"rx_errors,rx_nombuf,tx_packets,tx_bytes,tx_errors,rx_pps,"
		"tx_pps,rx_bps,tx_bps\n");
	stats_out_flush(o);
}

void
stats_csv_periodic(struct stats_out *o, double secs,
		   const struct stats_period *p, uint16_t nb)
{
	FILE *f = stats_out_begin(o);
	uint16_t i;

	if (f == NULL)
		return;
	for (i = 0; i < nb; i++) {
		const struct stats_period *s = &p[i];

		fprintf(f, TESTPMD_JSON_SCHEMA ",%.6f,%u,%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%"
			PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 "\n", secs, s->port, s->rx_packets,
			s->rx_bytes, s->rx_missed, s->rx_errors, s->rx_nombuf,
			s->tx_packets, s->tx_bytes, s->tx_errors, s->rx_pps,
			s->tx_pps, s->rx_bps, s->tx_bps);
	}
	stats_out_flush(o);
}

void
stats_json_exit(struct stats_out *o, uint64_t mbufs_not_returned, int status)
{
	FILE *f = stats_out_begin(o);

	if (f == NULL)
		return;
	json_head(f, "exit");
	fprintf(f, ",\"mbufs_not_returned\":%" PRIu64 ",\"exit_status\":%d}\n",
		mbufs_not_returned, status);
	stats_out_flush(o);
}

const char *
testpmd_strerror(int err)
{
	static __thread char buf[128];
	const char *name = err > 0 ? strerrorname_np(err) : NULL;

	if (name == NULL)
		return rte_strerror(err);
	snprintf(buf, sizeof(buf), "%s (%s)", rte_strerror(err), name);
	return buf;
}
