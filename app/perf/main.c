/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-perf: a perftest-style RDMA benchmark on any qpio device.
 *
 *   qpio-perf -l 0-1 --no-huge --no-shconf --no-pci -- --test ib_send_lat -s 64
 *
 * The two ends run on two lcores of this process (the client on the main
 * lcore, the server on the next one), or, with --server and --connect, in
 * two processes (two hosts, or a DPDK primary and secondary sharing the
 * soft NIC's fabric) that exchange their QPs over TCP. The options are parsed
 * before EAL starts, so a refused command line costs no EAL start.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "qpio_devargs.h"
#include "qpio_eal.h"
#include "perf.h"
#include "perf_net.h"

static void
on_signal(int sig)
{
	(void)sig;
	perf_stop_requested = 1;
}


int
main(int argc, char **argv)
{
	static struct perf_opts o;
	struct perf_caps caps;
	struct perf_result *res = NULL;
	unsigned int nres = 0, i;
	char err[512];
	double hz = 0;
	int sep, ret, rc;
	char **app_argv;
	int app_argc;

	for (sep = 1; sep < argc; sep++)
		if (strcmp(argv[sep], "--") == 0)
			break;
	/* -h or --help and no "--": the application's usage, without
	 * setting up EAL (as qpio-testpmd does). Before a "--", --help is
	 * EAL's and prints EAL's usage. */
	if (sep == argc)
		for (i = 1; (int)i < argc; i++)
			if (strcmp(argv[i], "--help") == 0 ||
			    strcmp(argv[i], "-h") == 0) {
				char *help_argv[] = { argv[0], (char *)"--help", NULL };

				return perf_opts_parse(2, help_argv, &o, err,
						       sizeof(err)) == 1 ?
					PERF_EXIT_OK : PERF_EXIT_USAGE;
			}
	/* getopt wants argv[0] in front of the application options. */
	app_argc = argc - sep;
	app_argv = calloc((size_t)app_argc + 1, sizeof(*app_argv));
	if (app_argv == NULL)
		return PERF_EXIT_FAIL;
	app_argv[0] = argv[0];
	for (i = 1; (int)i < app_argc; i++)
		app_argv[i] = argv[sep + (int)i];
	if (sep == argc)
		app_argc = 1;
	ret = perf_opts_parse(app_argc, app_argv, &o, err, sizeof(err));
	free(app_argv);
	if (ret == 1)
		return PERF_EXIT_OK;
	if (ret < 0) {
		fprintf(stderr, "qpio-perf: %s\n", err);
		fprintf(stderr, "qpio-perf: usage: qpio-perf [EAL options] -- --test "
			"TEST [--mode lat|bw] [options]; see --help\n");
		return PERF_EXIT_USAGE;
	}
	/* Each output its own file: the second would overwrite the first. */
	if (o.json[0] != '\0' && o.csv[0] != '\0' && qpio_devargs_same_file(o.json, o.csv)) {
		fprintf(stderr, "qpio-perf: --json %s and --csv %s: one file for "
			"two outputs, which would overwrite each other; give each "
			"its own\n", o.json, o.csv);
		return PERF_EXIT_USAGE;
	}
	/* Refuse an output file that cannot be written before the run. */
	for (i = 0; i < 2; i++) {
		const char *path = i == 0 ? o.json : o.csv;
		FILE *f;

		if (path[0] == '\0')
			continue;
		f = fopen(path, "w");
		if (f == NULL) {
			fprintf(stderr, "qpio-perf: --%s %s: cannot write it: %s\n",
				i == 0 ? "json" : "csv", path, strerror(errno));
			return PERF_EXIT_USAGE;
		}
		fclose(f);
	}
	ret = rte_eal_init(sep, argv);
	if (ret < 0) {
		fprintf(stderr, "qpio-perf: rte_eal_init: %s\n", rte_strerror(rte_errno));
		qpio_eal_init_failed();
		return PERF_EXIT_FAIL;
	}
	/* SIGINT/SIGTERM end the run early (the last WRs in flight
	 * complete), with the report of what was measured. */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	memset(&caps, 0, sizeof(caps));
	rc = perf_run(&o, &caps, &res, &nres, &hz);
	if (rc == PERF_EXIT_OK && o.validate)
		for (i = 0; i < nres; i++)
			if (res[i].mismatches > 0) {
				fprintf(stderr, "qpio-perf: --validate: %lu mismatches "
					"at %u bytes\n", (unsigned long)res[i].mismatches,
					res[i].bytes);
				rc = PERF_EXIT_FAIL;
			}
	if (rc == PERF_EXIT_OK && o.ngates > 0 &&
	    !perf_gates_check(&o, res, nres, hz))
		rc = PERF_EXIT_EXPECT;
	if (nres > 0 || rc == PERF_EXIT_OK) {
		const char *st = rc == PERF_EXIT_OK ? "pass" :
			rc == PERF_EXIT_EXPECT ? "expect-failed" : "failed";

		if (o.json[0] != '\0' &&
		    perf_report_json(&o, &caps, res, nres, hz, st) < 0)
			rc = PERF_EXIT_FAIL;
		if (o.csv[0] != '\0' && perf_report_csv(&o, &caps, res, nres, hz) < 0)
			rc = PERF_EXIT_FAIL;
	}
	for (i = 0; i < nres; i++)
		free(res[i].hist);
	free(res);
	qpio_eal_cleanup();
	if (o.role != PERF_ROLE_LOCAL)
		perf_net_watchdog(0);
	return rc;
}
