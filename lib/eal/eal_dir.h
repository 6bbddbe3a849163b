/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EAL_DIR_H
#define EAL_DIR_H

/*
 * The removal of a DPDK runtime directory (not installed; eal_dir.c is
 * compiled into the unit tests too). Plain POSIX: no DPDK call, no log;
 * the caller logs the reason it is given.
 */
#include <stddef.h>

/* The caller holds a shared flock() on fbarray_memzone that it cannot
 * drop (DPDK 22.11's rte_eal_cleanup() leaves the memzone table
 * attached): that file's lock is not checked. */
#define EAL_DIR_OWN_MEMZONE 0x1u

/*
 * Remove the DPDK runtime directory dir, and the DPDK files in it, when
 * no other process uses it (the rules of qpio_eal_cleanup(), qpio_eal.h):
 *  1. dir is opened without following a symbolic link and flock()ed
 *     LOCK_EX | LOCK_NB (DPDK takes that lock to add a multi-process
 *     socket and shares it to send to them);
 *  2. every entry is read: each must be one of DPDK's files by name and
 *     type (fstatat() without following a link); each fbarray_* file is
 *     opened (O_NOFOLLOW) and flock()ed LOCK_EX | LOCK_NB, and the lock
 *     is kept until the end (an entry unlinked between readdir() and
 *     its fstatat() or open(), as an exiting secondary's own
 *     fbarray_*_<pid> copies are, is free); an mp_socket_<pid>_* names no live process
 *     other than this one; a telemetry socket does not answer a connect()
 *     from another process (SO_PEERCRED);
 *  3. only then, the entries read in 2 are unlinkat()ed and dir is
 *     removed.
 * Nothing is removed when 1 or 2 fails.
 *
 * Return 0 (removed, or dir did not exist), -EBUSY (another process uses
 * dir: kept), -ENOTEMPTY (an entry that is not DPDK's: kept), -ELOOP
 * (dir is a symbolic link: kept), or another -errno (dir could not be
 * read, or an unlink or the rmdir failed: what was unlinked before it
 * stays unlinked). why (why_len bytes, may be NULL) receives a one-line
 * reason for any value but 0.
 */
int eal_dir_remove(const char *dir, unsigned int flags, char *why,
		   size_t why_len);

#endif /* EAL_DIR_H */
