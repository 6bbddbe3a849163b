/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_PERF_NET_H
#define QPIO_PERF_NET_H

/*
 * The TCP channel between a qpio-perf --server and its --connect client
 * (perf_net.c): text lines, each wait bounded. Not thread-safe: one
 * lcore uses a channel at a time.
 */

#include <stddef.h>
#include <stdint.h>

/** One connection and the bytes received after the last whole line. */
struct perf_net {
	int fd;
	size_t len;
	char buf[8192];
};

/**
 * Listen on TCP port (IPv6 and IPv4, any address).
 * @param port   0 picks a free port.
 * @param bound  out: the port bound.
 * @return the listening fd, or -1 with err filled.
 */
int perf_net_listen(uint16_t port, uint16_t *bound, char *err, size_t errlen);

/** Accept one client within timeout seconds. @return 0, or -1 with err. */
int perf_net_accept(int lfd, struct perf_net *n, double timeout,
		    char *err, size_t errlen);

/**
 * Connect to host:port (getaddrinfo: a name, IPv4 or IPv6), retrying
 * every 100 ms until timeout seconds have passed.
 * @return 0, or -1 with err naming the host, port and last error.
 */
int perf_net_connect(const char *host, uint16_t port, struct perf_net *n,
		     double timeout, char *err, size_t errlen);

/** Close the connection (idempotent). */
void perf_net_close(struct perf_net *n);

/** Send one line (it ends with '\n'). @return 0 or -errno. */
int perf_net_send(struct perf_net *n, const char *line);

/**
 * Receive one line, without its '\n'.
 * @param timeout  seconds; 0 = only what has arrived; < 0 = no limit.
 * @return 0; -EAGAIN (timeout 0, no whole line yet), -ETIMEDOUT,
 *   -ECONNRESET (the peer closed or died), -EPROTO (line too long),
 *   or another -errno of the socket.
 */
int perf_net_recv(struct perf_net *n, char *line, size_t len, double timeout);

/**
 * Send len bytes as they are (perftest's exchange: fixed-size messages,
 * no line ends), in one send() unless the socket takes less.
 * @return 0 or -errno (-EPIPE: the peer closed).
 */
int perf_net_send_bytes(struct perf_net *n, const void *buf, size_t len);

/**
 * Take what has arrived of a len-byte message without waiting: bytes
 * already buffered first, then what the socket holds.
 * @param got  in/out: bytes of buf filled so far (start at 0).
 * @return 0 (all len bytes there), -EAGAIN (not yet: call again),
 *   -ECONNRESET (the peer closed), or another -errno of the socket.
 */
int perf_net_recv_bytes(struct perf_net *n, void *buf, size_t len,
			size_t *got);

/** A sentence for a perf_net_recv()/perf_net_send() error. */
const char *perf_net_strerror(int err);

/**
 * Bound the teardown after a two-process run: unless disarmed (sec 0)
 * within sec seconds, print why and _exit(1). Over the soft NIC a DPDK
 * secondary killed while it held a lock of the shared memory (the malloc
 * heap's) would otherwise leave the primary waiting for it forever.
 */
void perf_net_watchdog(double sec);

#endif /* QPIO_PERF_NET_H */
