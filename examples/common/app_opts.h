/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_EXAMPLE_APP_OPTS_H
#define QPIO_EXAMPLE_APP_OPTS_H

/*
 * The rules every example's options follow, so that nothing is accepted
 * silently: the options after "--" are read before EAL starts (a refused
 * line sets up nothing), numbers by lib/devargs' rule (decimal digits
 * only: no sign, no space, no 0x; seconds with at most one point), no
 * empty text, and an option given twice refused rather than read as the
 * last one. Each refusal prints one line to stderr, "PROG: " first,
 * naming the option, the value and the rule. Control path: call from the
 * main thread before EAL starts (getopt's state is global).
 */

#include <getopt.h>
#include <stdint.h>

/**
 * Split argv at the first "--": the words before it are EAL's, the ones
 * after it the application's. argv[sep] (the "--") is overwritten with
 * argv[0], so that *app_argv is an argv of its own whose [0] is the
 * program name; without "--", *app_argv is a one-word argv of argv[0] (a
 * static array: one call per process).
 *
 * @param argc      main()'s argc.
 * @param argv      main()'s argv; argv[sep] is written.
 * @param app_argc  receives the application's argc (1 without options).
 * @param app_argv  receives the application's argv (points into argv).
 * @return the number of EAL's words, argv[0] included: the argc to give
 *   rte_eal_init() with argv.
 */
int example_args_split(int argc, char **argv, int *app_argc,
		       char ***app_argv);

/**
 * Refuse an option met a second time in one parse.
 *
 * @param prog      message prefix ("qpio-rc-msg").
 * @param longopts  the getopt table (names the option by its value c).
 * @param c         getopt_long()'s return for the option; values above
 *   255 are not tracked.
 * @param seen      256 flags, all 0 before the parse's first option.
 * @return 0 the first time; -EINVAL the second, after printing
 *   "PROG: --NAME given twice: give each option once".
 */
int example_opt_once(const char *prog, const struct option *longopts, int c,
		     unsigned char seen[256]);

/**
 * Read an option's value as a whole number in [lo, hi]
 * (qpio_devargs_parse_u32()).
 *
 * @param prog  message prefix.
 * @param opt   the option as written in messages ("--size").
 * @param s     the value (optarg).
 * @param lo    smallest value accepted.
 * @param hi    largest value accepted.
 * @param v     receives the value; untouched on error.
 * @return 0; -EINVAL after printing "PROG: OPT=S: want a decimal number
 *   in [LO, HI] (decimal digits only: no sign, no space, no 0x)".
 */
int example_opt_u32(const char *prog, const char *opt, const char *s,
		    uint32_t lo, uint32_t hi, uint32_t *v);

/**
 * example_opt_u32() for counts past 2^32 (qpio_devargs_parse_u64()).
 * @return 0; -EINVAL after printing the same message.
 */
int example_opt_u64(const char *prog, const char *opt, const char *s,
		    uint64_t lo, uint64_t hi, uint64_t *v);

/**
 * Read an option's value as seconds in [0, max]: decimal digits with at
 * most one point between digits (qpio_devargs_parse_decimal()).
 *
 * @param v  receives the seconds; untouched on error.
 * @return 0; -EINVAL after printing "PROG: OPT=S: want seconds in
 *   [0, MAX], decimal digits with at most one point (0.5)".
 */
int example_opt_seconds(const char *prog, const char *opt, const char *s,
			double max, double *v);

/**
 * Refuse an empty text value (a file, an interface, devargs).
 *
 * @param what  what the value is, for the message ("a file name").
 * @return 0 when s is not empty; -EINVAL after printing "PROG: OPT: give
 *   WHAT (the value is empty)".
 */
int example_opt_text(const char *prog, const char *opt, const char *s,
		     const char *what);


#endif /* QPIO_EXAMPLE_APP_OPTS_H */
