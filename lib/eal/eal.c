/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio_eal_cleanup() (qpio_eal.h): rte_eal_cleanup(), then, in a primary
 * process, the runtime directory's removal by eal_dir_remove().
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_log.h>
#include <rte_string_fns.h>

#include "eal_dir.h"
#include "qpio_eal.h"
#include "qpio_log.h"

RTE_LOG_REGISTER(qpio_eal_logtype, qpio.lib.eal, NOTICE);
#define EAL_LOG(level, ...) \
	QPIO_LOG_LINE(level, qpio_eal_logtype, "qpio.lib.eal", __VA_ARGS__)

/* A secondary that ends with its primary (a client and its server done
 * with one exchange) detaches in its own rte_eal_cleanup(), a moment
 * after the primary may look: while another process uses the directory
 * it is looked at again every EAL_DIR_RETRY_MS, for EAL_DIR_WAIT_MS. */
#define EAL_DIR_RETRY_MS 10
#define EAL_DIR_WAIT_MS 1000

int
qpio_eal_cleanup(void)
{
	char dir[PATH_MAX], why[PATH_MAX + 256];
	unsigned int waited;
	int primary, ret, r;

	/* Both are read before rte_eal_cleanup(), which releases what they
	 * come from. */
	primary = rte_eal_process_type() == RTE_PROC_PRIMARY;
	if (strlcpy(dir, rte_eal_get_runtime_dir(), sizeof(dir)) >= sizeof(dir))
		dir[0] = '\0';

	ret = rte_eal_cleanup();
	if (!primary || ret != 0 || dir[0] == '\0')
		return ret;

	/* The memzone table stays attached after rte_eal_cleanup() (DPDK
	 * 22.11 detaches the segment lists only): this process's own shared
	 * lock on fbarray_memzone is not another process's. */
	for (waited = 0;; waited += EAL_DIR_RETRY_MS) {
		const struct timespec ts = {
			.tv_nsec = EAL_DIR_RETRY_MS * 1000000L,
		};

		r = eal_dir_remove(dir, EAL_DIR_OWN_MEMZONE, why, sizeof(why));
		if (r != -EBUSY || waited >= EAL_DIR_WAIT_MS)
			break;
		nanosleep(&ts, NULL);
	}
	if (r == -EBUSY)
		EAL_LOG(DEBUG, "runtime directory kept (still in use after "
			"%u ms): %s", EAL_DIR_WAIT_MS, why);
	else if (r == -ENOTEMPTY || r == -ELOOP)
		EAL_LOG(DEBUG, "runtime directory kept: %s", why);
	else if (r < 0)
		EAL_LOG(INFO, "runtime directory not removed (%s): %s; remove "
			"it with rm -rf %s once no DPDK process uses its "
			"--file-prefix", strerror(-r), why, dir);
	else if (waited > 0)
		EAL_LOG(DEBUG, "runtime directory %s removed after %u ms (the "
			"other process detached)", dir, waited);
	else
		EAL_LOG(DEBUG, "runtime directory %s removed", dir);
	return ret;
}

int
qpio_eal_init_failed(void)
{
	const char *dir = rte_eal_get_runtime_dir();

	if (dir == NULL || dir[0] == '\0')
		return 0;
	if (rmdir(dir) == 0) {
		EAL_LOG(DEBUG, "runtime directory %s of the failed EAL removed",
			dir);
		return 0;
	}
	if (errno == ENOENT)
		return 0;
	EAL_LOG(DEBUG, "runtime directory %s of the failed EAL kept: %s",
		dir, strerror(errno));
	return -errno;
}
