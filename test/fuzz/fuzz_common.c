/* SPDX-License-Identifier: BSD-3-Clause */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>

#include "fuzz_common.h"

/* At the end of a run (libFuzzer exits): the runtime directory of the
 * target's EAL, empty with --no-shconf and --no-telemetry, goes. */
static void
fuzz_eal_dir_remove(void)
{
	rmdir(rte_eal_get_runtime_dir());
}

void
fuzz_eal_init(void)
{
	static int done;
	char prefix[64];
	char *argv[] = {
		"qpio-fuzz", "--no-huge", "--no-shconf", "--no-pci",
		"--no-telemetry", "-m", "256", "-l", "0",
		"--log-level=lib.eal:error", prefix, NULL,
	};

	if (done)
		return;
	snprintf(prefix, sizeof(prefix), "--file-prefix=qpio-fuzz-%d",
		 (int)getpid());
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0) {
		fprintf(stderr, "fuzz: rte_eal_init: %s\n",
			rte_strerror(rte_errno));
		fuzz_eal_dir_remove();
		exit(1);
	}
	atexit(fuzz_eal_dir_remove);
	/* Every refused input logs its reason; that is the expected path
	 * and would drown the run. */
	if (getenv("QPIO_FUZZ_LOG") == NULL)
		rte_log_set_level_pattern("qpio.*", RTE_LOG_EMERG);
	done = 1;
}

char *
fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s == NULL)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

static char tmp_dir[] = "/tmp/qpio-fuzz-XXXXXX";

/* Remove the directory's files (the targets create no subdirectory). */
static void
tmp_remove(void)
{
	struct dirent *e;
	DIR *d = opendir(tmp_dir);

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	if (chdir("/") == 0)
		rmdir(tmp_dir);
}

void
fuzz_chdir_tmp(void)
{
	if (mkdtemp(tmp_dir) == NULL || chdir(tmp_dir) != 0) {
		perror("fuzz: temporary directory");
		exit(1);
	}
	atexit(tmp_remove);
}
