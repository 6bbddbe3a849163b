/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_FUZZ_COMMON_H
#define QPIO_FUZZ_COMMON_H

/*
 * Shared by the libFuzzer targets: EAL started once per process
 * (--no-huge --no-shconf --no-pci, its own --file-prefix, qpio logs off
 * unless QPIO_FUZZ_LOG is set), and a failure that stops the run with a
 * message (libFuzzer saves the input as a crash).
 */
#include <stddef.h>
#include <stdint.h>

/** Start EAL once; exits the process when EAL does not start. */
void fuzz_eal_init(void);

/** A NUL-terminated copy of data[0..size) (free() it). */
char *fuzz_str(const uint8_t *data, size_t size);

/** chdir into a fresh empty directory of this process (files a target
 *  creates stay there); exits on failure. */
void fuzz_chdir_tmp(void);

/** Stop the run: a broken rule, named. */
#define FUZZ_FAIL(...) do { \
		fprintf(stderr, "fuzz: " __VA_ARGS__); \
		fputc('\n', stderr); \
		abort(); \
	} while (0)

#endif
