/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-perf exchange channel between a --server and a --connect process:
 * one TCP connection (getaddrinfo, IPv4 or IPv6) carrying text lines,
 * "KEY value ...\n". Every wait is bounded by a timeout; a peer that
 * closes the connection or dies is seen as end of file, a peer host that
 * vanishes by TCP keepalive.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "perf_net.h"

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
keepalive(int fd)
{
	int on = 1, idle = 5, intvl = 1, cnt = 5;

	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

/* Listen on port for one address family; -1 with err filled if not. */
static int
listen_family(int family, uint16_t port, char *err, size_t errlen)
{
	struct addrinfo hints, *ai, *p;
	char serv[8];
	int fd = -1, on = 1, ret;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = family;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	snprintf(serv, sizeof(serv), "%u", port);
	ret = getaddrinfo(NULL, serv, &hints, &ai);
	if (ret != 0) {
		snprintf(err, errlen, "getaddrinfo(port %u): %s", port,
			 gai_strerror(ret));
		return -1;
	}
	for (p = ai; p != NULL; p = p->ai_next) {
		int off = 0;

		fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC,
			    p->ai_protocol);
		if (fd < 0) {
			snprintf(err, errlen, "socket: %s", strerror(errno));
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
		if (p->ai_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
		if (bind(fd, p->ai_addr, p->ai_addrlen) == 0 && listen(fd, 1) == 0)
			break;
		snprintf(err, errlen, "cannot listen on TCP port %u: %s; pick "
			 "another with -p", port, strerror(errno));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

/* An IPv6 socket with IPV6_V6ONLY off takes IPv4 clients too; a host
 * without IPv6 falls back to IPv4. */
static int
listen_any(uint16_t port, char *err, size_t errlen)
{
	int fd = listen_family(AF_INET6, port, err, errlen);

	if (fd < 0)
		fd = listen_family(AF_INET, port, err, errlen);
	return fd;
}

int
perf_net_listen(uint16_t port, uint16_t *bound, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd = listen_any(port, err, errlen);

	if (fd < 0)
		return -1;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		*bound = ntohs(ss.ss_family == AF_INET6 ?
			       ((struct sockaddr_in6 *)&ss)->sin6_port :
			       ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

int
perf_net_accept(int lfd, struct perf_net *n, double timeout,
		char *err, size_t errlen)
{
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };
	int ret, fd;

	memset(n, 0, sizeof(*n));
	n->fd = -1;
	ret = poll(&pfd, 1, (int)(timeout * 1000));
	if (ret <= 0) {
		snprintf(err, errlen, "no client connected within %.1f s "
			 "(--timeout): start the client with --connect THIS_HOST",
			 timeout);
		return -1;
	}
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "accept: %s", strerror(errno));
		return -1;
	}
	keepalive(fd);
	n->fd = fd;
	return 0;
}

/* connect() that gives up at time end (a host that never answers would
 * otherwise hold a blocking connect for the kernel's SYN retries).
 * @return 0, or -1 with errno set. */
static int
connect_within(int fd, const struct sockaddr *sa, socklen_t len, double end)
{
	int fl = fcntl(fd, F_GETFL), err = 0;
	socklen_t el = sizeof(err);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -1;
	if (connect(fd, sa, len) != 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		double left = end - now_s();

		if (errno != EINPROGRESS)
			return -1;
		if (left < 0.1)
			left = 0.1;
		if (poll(&pfd, 1, (int)(left * 1000)) <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
			return -1;
		if (err != 0) {
			errno = err;
			return -1;
		}
	}
	return fcntl(fd, F_SETFL, fl);
}

int
perf_net_connect(const char *host, uint16_t port, struct perf_net *n,
		 double timeout, char *err, size_t errlen)
{
	struct addrinfo hints, *ai, *p;
	double end = now_s() + timeout;
	char serv[8];
	int ret, last = 0;

	memset(n, 0, sizeof(*n));
	n->fd = -1;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(serv, sizeof(serv), "%u", port);
	ret = getaddrinfo(host, serv, &hints, &ai);
	if (ret != 0) {
		snprintf(err, errlen, "--connect %s: %s", host, gai_strerror(ret));
		return -1;
	}
	/* The server may still be starting: retry every 100 ms. */
	do {
		for (p = ai; p != NULL; p = p->ai_next) {
			int fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC,
					p->ai_protocol);

			if (fd < 0)
				continue;
			if (connect_within(fd, p->ai_addr, p->ai_addrlen, end) == 0) {
				keepalive(fd);
				n->fd = fd;
				freeaddrinfo(ai);
				return 0;
			}
			last = errno;
			close(fd);
		}
		usleep(100 * 1000);
	} while (now_s() < end);
	freeaddrinfo(ai);
	snprintf(err, errlen, "no qpio-perf server at %s port %u within %.1f s "
		 "(--timeout): %s; start it there with --server -p %u", host, port,
		 timeout, strerror(last), port);
	return -1;
}

void
perf_net_close(struct perf_net *n)
{
	if (n->fd >= 0)
		close(n->fd);
	n->fd = -1;
}

int
perf_net_send(struct perf_net *n, const char *line)
{
	return perf_net_send_bytes(n, line, strlen(line));
}

/* Take one complete line out of the buffer; 1 if there was one. */
static int
take_line(struct perf_net *n, char *line, size_t len)
{
	char *nl = memchr(n->buf, '\n', n->len);
	size_t l;

	if (nl == NULL)
		return 0;
	l = (size_t)(nl - n->buf);
	if (l >= len)
		l = len - 1;
	memcpy(line, n->buf, l);
	line[l] = '\0';
	l = (size_t)(nl - n->buf) + 1;
	memmove(n->buf, n->buf + l, n->len - l);
	n->len -= l;
	return 1;
}

int
perf_net_recv(struct perf_net *n, char *line, size_t len, double timeout)
{
	double end = timeout >= 0 ? now_s() + timeout : 0;

	for (;;) {
		struct pollfd pfd = { .fd = n->fd, .events = POLLIN };
		int ms = 0, ret;
		ssize_t k;

		if (take_line(n, line, len))
			return 0;
		if (n->len == sizeof(n->buf))
			return -EPROTO;
		if (timeout > 0) {
			double left = end - now_s();

			if (left <= 0)
				return -ETIMEDOUT;
			ms = (int)(left * 1000) + 1;
		} else if (timeout < 0) {
			ms = -1;
		}
		ret = poll(&pfd, 1, ms);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return -errno;
		if (ret == 0)
			return timeout == 0 ? -EAGAIN : -ETIMEDOUT;
		k = recv(n->fd, n->buf + n->len, sizeof(n->buf) - n->len, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -ECONNRESET;
		n->len += (size_t)k;
	}
}

int
perf_net_send_bytes(struct perf_net *n, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t off = 0;

	while (off < len) {
		ssize_t k = send(n->fd, p + off, len - off, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -(k < 0 ? errno : EPIPE);
		off += (size_t)k;
	}
	return 0;
}

int
perf_net_recv_bytes(struct perf_net *n, void *buf, size_t len, size_t *got)
{
	uint8_t *p = buf;

	for (;;) {
		struct pollfd pfd = { .fd = n->fd, .events = POLLIN };
		size_t take = n->len < len - *got ? n->len : len - *got;
		ssize_t k;
		int ret;

		if (take > 0) {
			memcpy(p + *got, n->buf, take);
			memmove(n->buf, n->buf + take, n->len - take);
			n->len -= take;
			*got += take;
		}
		if (*got == len)
			return 0;
		ret = poll(&pfd, 1, 0);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return -errno;
		if (ret == 0)
			return -EAGAIN;
		k = recv(n->fd, n->buf, sizeof(n->buf), 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -ECONNRESET;
		n->len = (size_t)k;
	}
}

const char *
perf_net_strerror(int err)
{
	switch (err) {
	case -ECONNRESET:
		return "the peer closed the connection (it exited or died)";
	case -ETIMEDOUT:
		return "timed out waiting for the peer (--timeout)";
	case -EPROTO:
		return "the peer sent a line longer than the protocol allows";
	default:
		return strerror(-err);
	}
}

static void
on_watchdog(int sig)
{
	static const char msg[] = "qpio-perf: teardown did not finish within "
		"--timeout: a peer process probably died holding a lock of "
		"DPDK's shared memory; exiting\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

void
perf_net_watchdog(double sec)
{
	struct sigaction sa;

	if (sec <= 0) {
		alarm(0);
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_watchdog;
	sigaction(SIGALRM, &sa, NULL);
	alarm((unsigned int)sec + 1);
}
