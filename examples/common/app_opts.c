/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The examples' option rules (app_opts.h).
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_common.h>

#include "qpio_devargs.h"
#include "app_opts.h"

int
example_args_split(int argc, char **argv, int *app_argc, char ***app_argv)
{
	static char *no_args[2];
	int sep;

	for (sep = 1; sep < argc; sep++)
		if (strcmp(argv[sep], "--") == 0)
			break;
	if (sep < argc) {
		argv[sep] = argv[0];
		*app_argv = &argv[sep];
		*app_argc = argc - sep;
	} else {
		no_args[0] = argv[0];
		*app_argv = no_args;
		*app_argc = 1;
	}
	return sep;
}

int
example_opt_once(const char *prog, const struct option *longopts, int c,
		 unsigned char seen[256])
{
	const struct option *l;

	if (c < 0 || c > 255)
		return 0;
	if (!seen[c]) {
		seen[c] = 1;
		return 0;
	}
	for (l = longopts; l->name != NULL && l->val != c; l++)
		;
	if (l->name != NULL)
		fprintf(stderr, "%s: --%s given twice: give each option once\n",
			prog, l->name);
	else
		fprintf(stderr, "%s: -%c given twice: give each option once\n",
			prog, c);
	return -EINVAL;
}

int
example_opt_u32(const char *prog, const char *opt, const char *s,
		uint32_t lo, uint32_t hi, uint32_t *v)
{
	if (qpio_devargs_parse_u32(s, lo, hi, v) == 0)
		return 0;
	fprintf(stderr, "%s: %s=%s: want a decimal number in [%u, %u] "
		"(decimal digits only: no sign, no space, no 0x)\n", prog, opt,
		s, lo, hi);
	return -EINVAL;
}

int
example_opt_u64(const char *prog, const char *opt, const char *s,
		uint64_t lo, uint64_t hi, uint64_t *v)
{
	if (qpio_devargs_parse_u64(s, lo, hi, v) == 0)
		return 0;
	fprintf(stderr, "%s: %s=%s: want a decimal number in [%" PRIu64 ", %"
		PRIu64 "] (decimal digits only: no sign, no space, no 0x)\n",
		prog, opt, s, lo, hi);
	return -EINVAL;
}

int
example_opt_seconds(const char *prog, const char *opt, const char *s,
		    double max, double *v)
{
	if (qpio_devargs_parse_decimal(s, 0, max, v) == 0)
		return 0;
	fprintf(stderr, "%s: %s=%s: want seconds in [0, %.0f], decimal digits "
		"with at most one point (0.5)\n", prog, opt, s, max);
	return -EINVAL;
}

int
example_opt_text(const char *prog, const char *opt, const char *s,
		 const char *what)
{
	if (s[0] != '\0')
		return 0;
	fprintf(stderr, "%s: %s: give %s (the value is empty)\n", prog, opt,
		what);
	return -EINVAL;
}

