/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/eal's runtime directory removal (eal_dir_remove(), compiled in):
 * DPDK's files in a directory no other process uses are removed with
 * it; a lock, a live secondary's socket, another process's telemetry
 * socket, an unknown entry or a symbolic link keep it whole. Each case
 * builds its directory under /tmp; no EAL.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "eal_dir.h"

TestSuite(eal_dir);

/* The directory of a case and the reason eal_dir_remove() gives. */
static char dir[64];
static char why[512];

static void
mk_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/qpio-eal-dir.XXXXXX");
	cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
}

static void
path_of(char *buf, size_t size, const char *name)
{
	cr_assert_lt(snprintf(buf, size, "%s/%s", dir, name), (int)size);
}

static void
mk_file(const char *name)
{
	char p[PATH_MAX];
	int fd;

	path_of(p, sizeof(p), name);
	fd = open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0, "create %s: %s", p, strerror(errno));
	cr_assert_eq(write(fd, "qpio", 4), 4);
	close(fd);
}

/* A unix socket bound at name: listening (SOCK_SEQPACKET, as DPDK's
 * telemetry) when listen_it, else a datagram one (as the multi-process
 * sockets). Returns its fd; closing it leaves the file, stale. */
static int
mk_sock(const char *name, int listen_it)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	path_of(sun.sun_path, sizeof(sun.sun_path), name);
	fd = socket(AF_UNIX, (listen_it ? SOCK_SEQPACKET : SOCK_DGRAM) |
		    SOCK_CLOEXEC, 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0,
		     "bind %s: %s", sun.sun_path, strerror(errno));
	if (listen_it)
		cr_assert_eq(listen(fd, 1), 0);
	return fd;
}

static int
present(const char *name)
{
	char p[PATH_MAX];
	struct stat st;

	path_of(p, sizeof(p), name);
	return lstat(p, &st) == 0;
}

static int
dir_present(void)
{
	struct stat st;

	return lstat(dir, &st) == 0;
}

/* Remove what a case left (the directory when it was kept). */
static void
rm_dir(void)
{
	char cmd[128];

	if (dir_present()) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		cr_expect_eq(system(cmd), 0);
	}
}

/* The files of a primary with shared config (a --no-huge one, and a
 * hugepage one's segment lists and hugepage_info). */
static const char *const primary_files[] = {
	"config", "hugepage_info", "fbarray_memzone", "fbarray_nohugemem",
	"fbarray_memseg-2048k-0-0",
};

static void
mk_primary_files(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(primary_files) / sizeof(primary_files[0]); i++)
		mk_file(primary_files[i]);
}

static void
expect_primary_files(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(primary_files) / sizeof(primary_files[0]); i++)
		cr_expect(present(primary_files[i]), "%s removed from a kept "
			  "directory", primary_files[i]);
}

/* A child that runs what(arg) in its own process, tells the parent it
 * did, and holds on until child_end(). */
struct child {
	pid_t pid;
	int go;		/* parent's read end: one byte when ready */
	int hold;	/* parent's write end: the child ends at its EOF */
};

static void
child_start(struct child *c, void (*what)(const char *), const char *arg)
{
	int ready[2], hold[2];
	char b = 1;

	cr_assert_eq(pipe(ready), 0);
	cr_assert_eq(pipe(hold), 0);
	c->pid = fork();
	cr_assert_geq(c->pid, 0);
	if (c->pid == 0) {
		close(ready[0]);
		close(hold[1]);
		what(arg);
		if (write(ready[1], &b, 1) != 1)
			_exit(1);
		while (read(hold[0], &b, 1) > 0)
			;
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	c->go = ready[0];
	c->hold = hold[1];
	cr_assert_eq(read(c->go, &b, 1), 1, "the child did not start");
}

static void
child_end(struct child *c)
{
	int st;

	close(c->hold);
	close(c->go);
	cr_assert_eq(waitpid(c->pid, &st, 0), c->pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* In the child: a shared flock() on a file of dir, as a process attached
 * to an fbarray holds it. */
static void
child_lock_sh(const char *name)
{
	char p[PATH_MAX];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_RDWR);
	if (fd < 0 || flock(fd, LOCK_SH | LOCK_NB) != 0)
		_exit(1);
}

/* In the child: nothing; its pid is alive until child_end(). */
static void
child_idle(const char *name)
{
	(void)name;
}

/* In the child: a telemetry socket of its own, listening. */
static void
child_listen(const char *name)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/%s", dir, name);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0 ||
	    listen(fd, 4) != 0)
		_exit(1);
}

Test(eal_dir, known_files_removed)
{
	char name[64];
	pid_t dead;
	int st;

	mk_dir();
	mk_primary_files();
	mk_file("hugepage_data");
	/* sockets left by processes gone: stale, as after a crash */
	close(mk_sock("mp_socket", 0));
	dead = fork();
	cr_assert_geq(dead, 0);
	if (dead == 0)
		_exit(0);
	cr_assert_eq(waitpid(dead, &st, 0), dead);
	snprintf(name, sizeof(name), "mp_socket_%d_1a2b3c4d5e", (int)dead);
	close(mk_sock(name, 0));
	close(mk_sock("dpdk_telemetry.v2", 1));
	close(mk_sock("dpdk_telemetry.v2:1", 1));

	cr_expect_eq(eal_dir_remove(dir, 0, why, sizeof(why)), 0, "%s", why);
	cr_expect(!dir_present(), "%s still there", dir);
	rm_dir();
}

Test(eal_dir, empty_removed)
{
	/* --no-shconf --no-telemetry: EAL made the directory, nothing in it */
	mk_dir();
	cr_expect_eq(eal_dir_remove(dir, 0, why, sizeof(why)), 0, "%s", why);
	cr_expect(!dir_present());
	rm_dir();
}

Test(eal_dir, absent_is_not_an_error)
{
	mk_dir();
	cr_assert_eq(rmdir(dir), 0);
	cr_expect_eq(eal_dir_remove(dir, 0, why, sizeof(why)), 0);
	cr_expect_eq(eal_dir_remove(dir, 0, NULL, 0), 0);
}

Test(eal_dir, fbarray_locked_by_another_fd)
{
	char p[PATH_MAX];
	int fd, ret;

	mk_dir();
	mk_primary_files();
	path_of(p, sizeof(p), "fbarray_memseg-2048k-0-0");
	fd = open(p, O_RDWR);
	cr_assert_geq(fd, 0);
	cr_assert_eq(flock(fd, LOCK_SH | LOCK_NB), 0);

	ret = eal_dir_remove(dir, 0, why, sizeof(why));
	cr_expect_eq(ret, -EBUSY, "ret %d: %s", ret, why);
	cr_expect(dir_present());
	expect_primary_files();
	cr_expect_not_null(strstr(why, "fbarray_memseg-2048k-0-0"), "%s", why);
	/* the check took no lock that stays */
	cr_expect_eq(flock(fd, LOCK_EX | LOCK_NB), 0, "a lock left: %s",
		     strerror(errno));

	close(fd);
	cr_expect_eq(eal_dir_remove(dir, 0, why, sizeof(why)), 0, "%s", why);
	cr_expect(!dir_present());
	rm_dir();
}

/* The file that __wrap_openat() unlinks before it opens it (relative to
 * the directory fd, as eal_dir.c names it), or "" for none. */
static char vanish[64];
static unsigned int vanished;

int __real_openat(int dfd, const char *name, int flags, ...);
int __real_openat64(int dfd, const char *name, int flags, ...);
int __wrap_openat(int dfd, const char *name, int flags, ...);
int __wrap_openat64(int dfd, const char *name, int flags, ...);

/* The mode argument of an open that creates, else 0. */
#define OPEN_MODE(flags, mode) do {					\
	(mode) = 0;							\
	if ((flags) & (O_CREAT | O_TMPFILE)) {				\
		va_list ap;						\
									\
		va_start(ap, flags);					\
		(mode) = va_arg(ap, mode_t);				\
		va_end(ap);						\
	}								\
} while (0)

static void
vanish_before_open(int dfd, const char *name)
{
	if (vanish[0] != '\0' && strcmp(name, vanish) == 0 &&
	    unlinkat(dfd, name, 0) == 0)
		vanished++;
}

/* Linked with -Wl,--wrap=openat,--wrap=openat64 (test/unit/meson.build;
 * with _FILE_OFFSET_BITS=64 glibc's header names openat64): the open of
 * vanish finds it unlinked, as when a secondary's rte_eal_cleanup()
 * removes its own fbarray copy between readdir() and open(). */
#define WRAP_OPENAT(fn)							\
int									\
__wrap_##fn(int dfd, const char *name, int flags, ...)			\
{									\
	mode_t mode;							\
									\
	OPEN_MODE(flags, mode);						\
	vanish_before_open(dfd, name);					\
	return __real_##fn(dfd, name, flags, mode);			\
}
WRAP_OPENAT(openat)
WRAP_OPENAT(openat64)

Test(eal_dir, fbarray_unlinked_before_its_open)
{
	static const char *const left[] = {
		"config", "fbarray_memseg-2048k-0-0",
		"fbarray_memseg-2048k-0-0_4242", "fbarray_memzone",
		"hugepage_info",
	};
	unsigned int i;
	int ret;

	mk_dir();
	for (i = 0; i < sizeof(left) / sizeof(left[0]); i++)
		mk_file(left[i]);
	snprintf(vanish, sizeof(vanish), "fbarray_memseg-2048k-0-0_4242");
	vanished = 0;

	ret = eal_dir_remove(dir, 0, why, sizeof(why));
	vanish[0] = '\0';
	cr_expect_eq(vanished, 1);
	cr_expect_eq(ret, 0, "ret %d: %s", ret, why);
	cr_expect_str_empty(why);
	cr_expect(!dir_present());
	rm_dir();
}

Test(eal_dir, fbarray_locked_by_another_process)
{
	struct child c;
	int ret;

	mk_dir();
	mk_primary_files();
	child_start(&c, child_lock_sh, "fbarray_nohugemem");

	ret = eal_dir_remove(dir, 0, why, sizeof(why));
	cr_expect_eq(ret, -EBUSY, "ret %d: %s", ret, why);
	cr_expect(dir_present());
	expect_primary_files();
	cr_expect_not_null(strstr(why, "fbarray_nohugemem"), "%s", why);

	child_end(&c);
	cr_expect_eq(eal_dir_remove(dir, 0, why, sizeof(why)), 0, "%s", why);
	cr_expect(!dir_present());
	rm_dir();
}

Test(eal_dir, own_memzone_lock)
{
	char p[PATH_MAX];
	int fd, ret;

	/* the caller's shared lock on the memzone table, which DPDK 22.11
	 * keeps after rte_eal_cleanup(): busy unless the caller says it is
	 * its own */
	mk_dir();
	mk_primary_files();
	path_of(p, sizeof(p), "fbarray_memzone");
	fd = open(p, O_RDWR);
	cr_assert_geq(fd, 0);
	cr_assert_eq(flock(fd, LOCK_SH | LOCK_NB), 0);

	ret = eal_dir_remove(dir, 0, why, sizeof(why));
	cr_expect_eq(ret, -EBUSY, "ret %d: %s", ret, why);
	expect_primary_files();

	ret = eal_dir_remove(dir, EAL_DIR_OWN_MEMZONE, why, sizeof(why));
	cr_expect_eq(ret, 0, "ret %d: %s", ret, why);
	cr_expect(!dir_present());
	close(fd);
	rm_dir();
}

Test(eal_dir, own_memzone_flag_checks_the_others)
{
	struct child c;
	int ret;

	/* the flag leaves out fbarray_memzone only */
	mk_dir();
	mk_primary_files();
	child_start(&c, child_lock_sh, "fbarray_memseg-2048k-0-0");
	ret = eal_dir_remove(dir, EAL_DIR_OWN_MEMZONE, why, sizeof(why));
	cr_expect_eq(ret, -EBUSY, "ret %d: %s", ret, why);
	expect_primary_files();
	child_end(&c);
	rm_dir();
}

Test(eal_dir, live_secondary_socket)
{
	char name[64];
	struct child c;
	int ret;

	mk_dir();
	mk_primary_files();
	child_start(&c, child_idle, NULL);
	snprintf(name, sizeof(name), "mp_socket_%d_5f3e2a1b9c", (int)c.pid);
	close(mk_sock(name, 0));

	ret = eal_dir_remove(dir, 0, why, sizeof(why));
	cr_expect_eq(ret, -EBUSY, "ret %d: %s", ret, why);
	expect_primary_files();
	cr_expect(present(name));
	cr_expect_not_null(strstr(why, name), "%s", why);

	child_end(&c);
	cr_expect_eq(eal_dir_remove(dir, 0, why, sizeof(why)), 0, "%s", why);
	cr_expect(!dir_present());
	rm_dir();
}

Test(eal_dir, telemetry_of_another_process)
{
	struct child c;
	int own, ret;

	mk_dir();
	own = mk_sock("dpdk_telemetry.v2", 1);
	child_start(&c, child_listen, "dpdk_telemetry.v2:1");

	ret = eal_dir_remove(dir, 0, why, sizeof(why));
	cr_expect_eq(ret, -EBUSY, "ret %d: %s", ret, why);
	cr_expect(present("dpdk_telemetry.v2"));
	cr_expect(present("dpdk_telemetry.v2:1"));
	cr_expect_not_null(strstr(why, "dpdk_telemetry.v2:1"), "%s", why);

	/* this process's own listening socket does not keep it */
	child_end(&c);
	ret = eal_dir_remove(dir, 0, why, sizeof(why));
	cr_expect_eq(ret, 0, "ret %d: %s", ret, why);
	cr_expect(!dir_present());
	close(own);
	rm_dir();
}

Test(eal_dir, unknown_file_keeps_all)
{
	int ret;

	mk_dir();
	mk_primary_files();
	mk_file("notes.txt");
	ret = eal_dir_remove(dir, 0, why, sizeof(why));
	cr_expect_eq(ret, -ENOTEMPTY, "ret %d: %s", ret, why);
	cr_expect(present("notes.txt"));
	expect_primary_files();
	cr_expect_not_null(strstr(why, "notes.txt"), "%s", why);
	rm_dir();
}

Test(eal_dir, unknown_names_near_dpdk_ones)
{
	static const char *const names[] = {
		"fbarray_", "mp_socket_", "mp_socket_12_", "mp_socket_x_1",
		"mp_socket_12_1G", "dpdk_telemetry.v2:", "dpdk_telemetry.v2:x",
		"config.bak", "dpdk_telemetry.v3",
	};
	unsigned int i;
	int ret;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		mk_dir();
		mk_file("config");
		mk_file(names[i]);
		ret = eal_dir_remove(dir, 0, why, sizeof(why));
		cr_expect_eq(ret, -ENOTEMPTY, "%s: ret %d: %s", names[i], ret,
			     why);
		cr_expect(present(names[i]) && present("config"), "%s",
			  names[i]);
		rm_dir();
	}
}

Test(eal_dir, known_name_of_another_type)
{
	char p[PATH_MAX];
	int ret;

	/* a directory named config, a regular file named mp_socket */
	mk_dir();
	path_of(p, sizeof(p), "config");
	cr_assert_eq(mkdir(p, 0700), 0);
	ret = eal_dir_remove(dir, 0, why, sizeof(why));
	cr_expect_eq(ret, -ENOTEMPTY, "ret %d: %s", ret, why);
	cr_expect(present("config"));
	rm_dir();

	mk_dir();
	mk_file("mp_socket");
	ret = eal_dir_remove(dir, 0, why, sizeof(why));
	cr_expect_eq(ret, -ENOTEMPTY, "ret %d: %s", ret, why);
	cr_expect(present("mp_socket"));
	rm_dir();
}

Test(eal_dir, symlink_not_followed)
{
	char outside[64], target[PATH_MAX], link[PATH_MAX], buf[8];
	struct stat st;
	int fd, ret;

	/* fbarray_memseg-... is a link to a file outside the directory */
	snprintf(outside, sizeof(outside), "/tmp/qpio-eal-out.XXXXXX");
	cr_assert_not_null(mkdtemp(outside));
	snprintf(target, sizeof(target), "%s/precious", outside);
	fd = open(target, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "keep", 4), 4);
	close(fd);

	mk_dir();
	mk_file("config");
	path_of(link, sizeof(link), "fbarray_memseg-2048k-0-0");
	cr_assert_eq(symlink(target, link), 0);
	ret = eal_dir_remove(dir, 0, why, sizeof(why));
	cr_expect_eq(ret, -ENOTEMPTY, "ret %d: %s", ret, why);
	cr_expect(lstat(link, &st) == 0 && S_ISLNK(st.st_mode),
		  "the link is gone");
	cr_expect(present("config"));
	cr_expect_not_null(strstr(why, "symbolic link"), "%s", why);
	fd = open(target, O_RDONLY);
	cr_assert_geq(fd, 0, "the link's target is gone");
	cr_expect(read(fd, buf, sizeof(buf)) == 4 &&
		  memcmp(buf, "keep", 4) == 0);
	/* nobody took a lock on the target either */
	cr_expect_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
	close(fd);
	rm_dir();

	/* the directory itself a link to a directory of DPDK's files */
	mk_dir();
	mk_primary_files();
	snprintf(link, sizeof(link), "%s/rundir", outside);
	cr_assert_eq(symlink(dir, link), 0);
	ret = eal_dir_remove(link, 0, why, sizeof(why));
	cr_expect_eq(ret, -ELOOP, "ret %d: %s", ret, why);
	cr_expect(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
	expect_primary_files();
	rm_dir();
	cr_expect_eq(unlink(link), 0);
	cr_expect_eq(unlink(target), 0);
	cr_expect_eq(rmdir(outside), 0);
}

Test(eal_dir, directory_locked)
{
	int fd, ret;

	/* a DPDK process holds the directory's lock while it adds its
	 * multi-process socket */
	mk_dir();
	mk_primary_files();
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(flock(fd, LOCK_SH), 0);
	ret = eal_dir_remove(dir, 0, why, sizeof(why));
	cr_expect_eq(ret, -EBUSY, "ret %d: %s", ret, why);
	expect_primary_files();
	close(fd);
	cr_expect_eq(eal_dir_remove(dir, 0, why, sizeof(why)), 0, "%s", why);
	cr_expect(!dir_present());
	rm_dir();
}
