/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: qpio-testpmd's application options, parsed by
 * testpmd_parse_args() and checked by testpmd_check_ports() as functions
 * (they return, they do not exit). The
 * input is the option words separated by newlines or NULs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testpmd.h"
#include "testpmd_app.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_WORDS 64

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct testpmd_opts opts;
	char *argv[MAX_WORDS + 2], *words[MAX_WORDS + 2];
	char *s = fuzz_str(data, size), *p = s;
	int argc = 0, r[2], i;

	argv[argc++] = "qpio-testpmd";
	while (argc <= MAX_WORDS && p < s + size) {
		size_t n = strcspn(p, "\n");

		p[n] = '\0';
		argv[argc++] = p;
		p += n + 1;
	}
	argv[argc] = NULL;
	/* Parsed twice, from the same words: a parse must not depend on
	 * what an earlier parse left behind (getopt's state). */
	for (i = 0; i < 2; i++) {
		memcpy(words, argv, sizeof(argv));
		memset(&opts, 0, sizeof(opts));
		fwd_config_init();
		r[i] = testpmd_parse_args(argc, words, &opts);
		if (r[i] == 0)
			r[i] = testpmd_check_ports(&opts, 2);
		if (r[i] != 0 && r[i] != 1 && r[i] != -EINVAL)
			FUZZ_FAIL("the options' parse returned %d", r[i]);
	}
	if (r[0] != r[1])
		FUZZ_FAIL("the same options parsed twice gave %d, then %d",
			  r[0], r[1]);
	free(s);
	return 0;
}
