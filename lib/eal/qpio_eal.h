/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The end of a qpio program's EAL: rte_eal_cleanup(), then, in a primary
 * process, the removal of its runtime directory, which DPDK 22.11's
 * rte_eal_cleanup() leaves behind; and the same directory's removal
 * after a failed rte_eal_init().
 */
#ifndef QPIO_EAL_H
#define QPIO_EAL_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Release the EAL as rte_eal_cleanup() does and, in a primary process,
 * remove its runtime directory (rte_eal_get_runtime_dir(): under
 * /var/run/dpdk/<file-prefix> as root, else $XDG_RUNTIME_DIR/dpdk or
 * /tmp/dpdk) when no other process uses it. The call a program makes
 * instead of rte_eal_cleanup().
 *
 * What is removed: the files DPDK 22.11 puts there, known by name and
 * type: config, hugepage_info and hugepage_data (regular files);
 * fbarray_* (regular files: the memory segment lists and the memzone
 * table); mp_socket and mp_socket_<pid>_<tsc> (the multi-process
 * sockets); dpdk_telemetry.v2, dpdk_telemetry.v2:<n> and telemetry (the
 * telemetry sockets); then the directory itself. With --no-shconf the
 * directory is empty but for the telemetry sockets.
 *
 * When the directory is kept, whole (nothing in it removed), with the
 * reason logged at DEBUG on qpio.lib.eal
 * (--log-level=qpio.lib.eal:debug):
 *  - in a secondary process (its primary owns the directory): only
 *    rte_eal_cleanup() is done;
 *  - another process uses it: an fbarray_* file is flock()ed by another
 *    process (each process attached to a segment list holds a shared
 *    lock on its file; the exclusive non-blocking lock taken to check is
 *    refused), a multi-process socket mp_socket_<pid>_* names a live
 *    process other than this one (a secondary attached), a telemetry
 *    socket answers from another process, or the directory itself is
 *    flock()ed (a DPDK process starting or sending a multi-process
 *    message);
 *  - the directory holds an entry that is not one of DPDK's files above
 *    (an unknown name, or a known name of another type: a symbolic link,
 *    a directory): nothing is removed, no link is followed;
 *  - rte_eal_cleanup() failed.
 * While another process uses the directory it is looked at again every
 * 10 ms for up to 1 s: a secondary that ends with its primary (a client
 * and its server done with one exchange) detaches in that time. A
 * primary that leaves a secondary running waits that second at its end.
 *
 * The memzone table fbarray_memzone is not checked by its lock: DPDK
 * 22.11's rte_eal_cleanup() leaves this process attached to it (a
 * shared lock it still holds); a process attached to the memzone table
 * is attached to the segment lists and holds a multi-process socket
 * too, which are checked. After a crash the directory stays; a primary
 * started again on the same --file-prefix clears its stale fbarray_* and
 * mp_socket_* files, and `rm -rf /var/run/dpdk/<prefix>` removes it.
 *
 * A failure to remove (a permission, a file gone meanwhile) is no error
 * of the call: it is logged at INFO and the directory may be left
 * partly removed.
 *
 * Call it once, from the main lcore, after every other lcore has
 * returned (rte_eal_mp_wait_lcore()) and every port and device is
 * closed, as rte_eal_cleanup(); no DPDK call is allowed after it. Not
 * thread-safe.
 *
 * @return rte_eal_cleanup()'s value: 0, or a negative value with
 *   rte_errno set: -1 with rte_errno EALREADY when the EAL was cleaned
 *   up already (DPDK 22.11.1 and later check it; the directory is then
 *   left alone). The directory's removal does not change it.
 */
int qpio_eal_cleanup(void);

/**
 * After rte_eal_init() failed: remove the runtime directory it made
 * (rte_eal_get_runtime_dir()) when it is empty, as it is when the
 * failure came before anything was put there (a hugepage directory that
 * cannot be used, a bad option found late); DPDK 22.11 leaves it behind.
 * A directory holding anything (another process's files, a config file)
 * is kept: rmdir() removes only an empty one. The call a program makes
 * on its rte_eal_init() failure path, before it exits; no DPDK call is
 * allowed after it. Not thread-safe.
 *
 * @return 0 (removed, or none was made), or -errno of rmdir() (ENOTEMPTY:
 *   kept), logged at DEBUG on qpio.lib.eal.
 */
int qpio_eal_init_failed(void);

#ifdef __cplusplus
}
#endif

#endif /* QPIO_EAL_H */
