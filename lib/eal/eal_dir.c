/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The removal of a DPDK runtime directory (eal_dir.h): the entries are
 * read and checked first, by name inside the directory (openat, fstatat,
 * connect on the socket's path), then unlinkat()ed, then the directory
 * is removed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include "eal_dir.h"

/* What an entry of the directory is, by its name (DPDK 22.11's names:
 * lib/eal/common/eal_filesystem.h, eal_common_proc.c, lib/telemetry). */
enum dir_kind {
	DIR_UNKNOWN,
	DIR_FILE,	/* config, hugepage_info, hugepage_data */
	DIR_FBARRAY,	/* fbarray_<name>: flock()ed by its users */
	DIR_MP_PRIMARY,	/* mp_socket: the primary's own socket */
	DIR_MP_PEER,	/* mp_socket_<pid>_<tsc>: a secondary's socket */
	DIR_TELEMETRY,	/* dpdk_telemetry.v2[:<n>], telemetry */
};

/* One pass over the directory: what to unlink, and the fbarray locks
 * held until the end. */
struct dir_scan {
	const char *dir;
	int dfd;
	unsigned int flags;
	char **names;
	unsigned int nb_names;
	unsigned int max_names;
	int *fds;
	unsigned int nb_fds;
	unsigned int max_fds;
	char *why;
	size_t why_len;
};

static void
dir_why(struct dir_scan *s, const char *fmt, ...)
{
	va_list ap;

	if (s->why == NULL || s->why_len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(s->why, s->why_len, fmt, ap);
	va_end(ap);
}

/* Digits of base 10 (hex 0) or 16 (hex 1) from *p, at least one: the
 * value, *p past them; -1 when there are none or more than max. */
static long long
dir_number(const char **p, int hex, unsigned int max)
{
	long long v = 0;
	unsigned int n = 0;
	const char *c = *p;

	for (;; c++, n++) {
		int d;

		if (*c >= '0' && *c <= '9')
			d = *c - '0';
		else if (hex && *c >= 'a' && *c <= 'f')
			d = *c - 'a' + 10;
		else
			break;
		if (n == max)
			return -1;
		v = v * (hex ? 16 : 10) + d;
	}
	if (n == 0)
		return -1;
	*p = c;
	return v;
}

/* The kind of an entry by its name; *pid for DIR_MP_PEER. */
static enum dir_kind
dir_kind(const char *name, pid_t *pid)
{
	static const char * const files[] = {
		"config", "hugepage_info", "hugepage_data",
	};
	static const char mp[] = "mp_socket";
	static const char tel[] = "dpdk_telemetry.v2";
	const char *p;
	long long v;
	unsigned int i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (strcmp(name, files[i]) == 0)
			return DIR_FILE;
	if (strncmp(name, "fbarray_", 8) == 0 && name[8] != '\0')
		return DIR_FBARRAY;
	if (strcmp(name, mp) == 0)
		return DIR_MP_PRIMARY;
	if (strncmp(name, mp, sizeof(mp) - 1) == 0 &&
	    name[sizeof(mp) - 1] == '_') {
		/* "%d_%" PRIx64: the secondary's pid and a TSC value */
		p = name + sizeof(mp);
		v = dir_number(&p, 0, 10);
		if (v <= 0 || v > (long long)INT32_MAX || *p++ != '_' ||
		    dir_number(&p, 1, 16) < 0 || *p != '\0')
			return DIR_UNKNOWN;
		*pid = (pid_t)v;
		return DIR_MP_PEER;
	}
	if (strcmp(name, "telemetry") == 0 || strcmp(name, tel) == 0)
		return DIR_TELEMETRY;
	if (strncmp(name, tel, sizeof(tel) - 1) == 0 &&
	    name[sizeof(tel) - 1] == ':') {
		p = name + sizeof(tel);
		if (dir_number(&p, 0, 5) < 0 || *p != '\0')
			return DIR_UNKNOWN;
		return DIR_TELEMETRY;
	}
	return DIR_UNKNOWN;
}

static int
dir_add_name(struct dir_scan *s, const char *name)
{
	if (s->nb_names == s->max_names) {
		unsigned int n = s->max_names ? 2 * s->max_names : 16;
		char **a = realloc(s->names, n * sizeof(*a));

		if (a == NULL)
			return -ENOMEM;
		s->names = a;
		s->max_names = n;
	}
	s->names[s->nb_names] = strdup(name);
	if (s->names[s->nb_names] == NULL)
		return -ENOMEM;
	s->nb_names++;
	return 0;
}

/* Take an exclusive flock() on fbarray file name and keep it: refused
 * while another open file (another process's, or another of this one)
 * holds a shared one. */
static int
dir_lock_fbarray(struct dir_scan *s, const char *name)
{
	int fd;

	if (s->nb_fds == s->max_fds) {
		unsigned int n = s->max_fds ? 2 * s->max_fds : 16;
		int *a = realloc(s->fds, n * sizeof(*a));

		if (a == NULL)
			return -ENOMEM;
		s->fds = a;
		s->max_fds = n;
	}
	fd = openat(s->dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int err = errno;

		/* Unlinked since readdir(): a secondary's own copy
		 * (fbarray_*_<pid>) goes with that process's
		 * rte_eal_cleanup(), so no process holds it any more. */
		if (err == ENOENT)
			return 0;
		dir_why(s, "%s: cannot open %s to check its lock: %s", s->dir,
			name, strerror(err));
		return -err;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno;

		close(fd);
		if (err == EWOULDBLOCK) {
			dir_why(s, "%s: %s is locked by another process "
				"(attached to this runtime directory)", s->dir,
				name);
			return -EBUSY;
		}
		dir_why(s, "%s: cannot lock %s: %s", s->dir, name,
			strerror(err));
		return -err;
	}
	s->fds[s->nb_fds++] = fd;
	return 0;
}

/* 1 when a live process other than this one has pid (kill(pid, 0)
 * succeeds, or is refused for permission), else 0. */
static int
dir_pid_other_alive(pid_t pid)
{
	if (pid == getpid())
		return 0;
	return kill(pid, 0) == 0 || errno == EPERM;
}

/* 0 when the telemetry socket name is stale or this process's own (a
 * connect() refused, or accepted by this process: SO_PEERCRED gives the
 * pid that listens), -EBUSY when another process listens on it or the
 * socket cannot be checked. The connection is closed without a word:
 * DPDK's telemetry sockets are SOCK_SEQPACKET, whose listener's greeting
 * to a closed peer fails with EPIPE and raises no SIGPIPE (Linux raises
 * it for SOCK_STREAM only); its client thread then ends. */
static int
dir_telemetry_free(struct dir_scan *s, const char *name)
{
	struct sockaddr_un sun;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd, n, ret;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	n = snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/%s", s->dir, name);
	if (n < 0 || (size_t)n >= sizeof(sun.sun_path)) {
		dir_why(s, "%s: %s: the path is too long for a socket address "
			"(%zu bytes): cannot check whether a process listens on "
			"it", s->dir, name, sizeof(sun.sun_path));
		return -EBUSY;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int err = errno;

		dir_why(s, "%s: %s: socket: %s", s->dir, name, strerror(err));
		return -EBUSY;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int err = errno;

		close(fd);
		if (err == ECONNREFUSED || err == ENOENT)
			return 0;
		dir_why(s, "%s: %s: connect: %s: cannot tell whether another "
			"process listens on it", s->dir, name, strerror(err));
		return -EBUSY;
	}
	ret = 0;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		dir_why(s, "%s: %s: SO_PEERCRED: %s", s->dir, name,
			strerror(errno));
		ret = -EBUSY;
	} else if (cred.pid != getpid()) {
		dir_why(s, "%s: %s: process %d listens on it (telemetry of "
			"another process on this runtime directory)", s->dir,
			name, (int)cred.pid);
		ret = -EBUSY;
	}
	close(fd);
	return ret;
}

/* Check one entry; add it to the names to unlink when it is DPDK's and
 * free. */
static int
dir_check(struct dir_scan *s, const char *name)
{
	struct stat st;
	enum dir_kind kind;
	pid_t pid = 0;
	int sock, ret;

	kind = dir_kind(name, &pid);
	if (kind == DIR_UNKNOWN) {
		dir_why(s, "%s: %s is not a file of DPDK's runtime directory: "
			"nothing removed", s->dir, name);
		return -ENOTEMPTY;
	}
	if (fstatat(s->dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		int err = errno;

		if (err == ENOENT)
			return 0;
		dir_why(s, "%s: %s: %s", s->dir, name, strerror(err));
		return -err;
	}
	sock = kind == DIR_MP_PRIMARY || kind == DIR_MP_PEER ||
	       kind == DIR_TELEMETRY;
	if (sock ? !S_ISSOCK(st.st_mode) : !S_ISREG(st.st_mode)) {
		dir_why(s, "%s: %s is a %s, not the %s DPDK makes: nothing "
			"removed", s->dir, name,
			S_ISLNK(st.st_mode) ? "symbolic link" :
			S_ISDIR(st.st_mode) ? "directory" :
			S_ISSOCK(st.st_mode) ? "socket" :
			S_ISREG(st.st_mode) ? "regular file" : "special file",
			sock ? "socket" : "regular file");
		return -ENOTEMPTY;
	}
	switch (kind) {
	case DIR_FBARRAY:
		if ((s->flags & EAL_DIR_OWN_MEMZONE) &&
		    strcmp(name, "fbarray_memzone") == 0)
			break;
		ret = dir_lock_fbarray(s, name);
		if (ret < 0)
			return ret;
		break;
	case DIR_MP_PEER:
		if (dir_pid_other_alive(pid)) {
			dir_why(s, "%s: %s: process %d is alive (a secondary "
				"process attached)", s->dir, name, (int)pid);
			return -EBUSY;
		}
		break;
	case DIR_TELEMETRY:
		ret = dir_telemetry_free(s, name);
		if (ret < 0)
			return ret;
		break;
	default:
		break;
	}
	return dir_add_name(s, name);
}

static int
dir_scan_all(struct dir_scan *s, DIR *d)
{
	struct dirent *de;
	int ret;

	for (;;) {
		errno = 0;
		de = readdir(d);
		if (de == NULL) {
			int err = errno;

			if (err != 0) {
				dir_why(s, "%s: readdir: %s", s->dir,
					strerror(err));
				return -err;
			}
			return 0;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		ret = dir_check(s, de->d_name);
		if (ret < 0)
			return ret;
	}
}

int
eal_dir_remove(const char *dir, unsigned int flags, char *why,
	       size_t why_len)
{
	struct dir_scan s;
	unsigned int i;
	DIR *d;
	int ret;

	memset(&s, 0, sizeof(s));
	s.dir = dir;
	s.flags = flags;
	s.why = why;
	s.why_len = why_len;
	if (why != NULL && why_len > 0)
		why[0] = '\0';

	s.dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s.dfd < 0) {
		struct stat st;

		if (errno == ENOENT)
			return 0;
		ret = -errno;
		/* O_DIRECTORY | O_NOFOLLOW on a link to a directory: ENOTDIR */
		if ((ret == -ENOTDIR || ret == -ELOOP) &&
		    lstat(dir, &st) == 0 && S_ISLNK(st.st_mode)) {
			dir_why(&s, "%s is a symbolic link, which is not "
				"followed: nothing removed", dir);
			return -ELOOP;
		}
		dir_why(&s, "%s: cannot open the directory: %s", dir,
			strerror(-ret));
		return ret;
	}
	d = fdopendir(s.dfd);
	if (d == NULL) {
		ret = -errno;
		dir_why(&s, "%s: fdopendir: %s", dir, strerror(-ret));
		close(s.dfd);
		return ret;
	}
	/* DPDK holds this lock while a process adds its multi-process
	 * socket (LOCK_EX) and while it sends to them (LOCK_SH). */
	if (flock(s.dfd, LOCK_EX | LOCK_NB) < 0) {
		ret = errno == EWOULDBLOCK ? -EBUSY : -errno;
		dir_why(&s, "%s: the directory is locked by another process "
			"(starting, or sending a multi-process message)%s%s", dir,
			ret == -EBUSY ? "" : ": ",
			ret == -EBUSY ? "" : strerror(-ret));
		closedir(d);
		return ret;
	}

	ret = dir_scan_all(&s, d);
	for (i = 0; ret == 0 && i < s.nb_names; i++) {
		if (unlinkat(s.dfd, s.names[i], 0) < 0 && errno != ENOENT) {
			ret = -errno;
			dir_why(&s, "%s: cannot remove %s: %s", dir,
				s.names[i], strerror(-ret));
		}
	}
	for (i = 0; i < s.nb_fds; i++)
		close(s.fds[i]);
	if (ret == 0 && rmdir(dir) < 0 && errno != ENOENT) {
		ret = -errno;
		dir_why(&s, "%s: cannot remove the directory: %s", dir,
			strerror(-ret));
	}
	for (i = 0; i < s.nb_names; i++)
		free(s.names[i]);
	free(s.names);
	free(s.fds);
	closedir(d);
	return ret;
}
