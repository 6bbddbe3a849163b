/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capture tap (qpio_port_capture.h): lcores copy frames with
 * rte_pcapng_copy() onto a ring; a writer thread writes them with
 * rte_pcapng_write_packets() and rotates files.
 *
 * DPDK 22.11's rte_pcapng_fdopen() describes only ethdev ports, and its
 * rte_pcapng_write_packets() takes each block's interface id from a
 * table of ethdev ports that is left unset for any other port. So the
 * writer adds the interface description block of the qpio port itself
 * (pcapng, section 4.2: LINKTYPE_ETHERNET, if_name, if_tsresol 9 for
 * the nanosecond times rte_pcapng_copy() records) and writes the
 * enhanced packet blocks of the copies itself, with interface id 0.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pcapng.h>
#include <rte_ring.h>

#include "port_driver.h"
#include "qpio_port_capture.h"
#include "port_private.h"

#define CAP_LOG(level, ...) \
	QPIO_LOG_LINE(level, qpio_port_logtype, "qpio.lib.port: capture", \
		      __VA_ARGS__)

#define CAP_DEF_RING 1024u
#define CAP_MAX_SNAPLEN 65535u
#define CAP_MIN_ROTATE (64u * 1024u)
#define CAP_BURST 64u
#define CAP_IDLE_US 200u

struct qpio_port_capture {
	uint16_t port_id;
	uint32_t snaplen;
	uint64_t max_bytes;
	char path[PATH_MAX];
	char port_name[QPIO_PORT_NAME_LEN];
	struct rte_mempool *mp;
	struct rte_ring *ring;
	rte_pcapng_t *pcapng;          /* the open file (SHB written) */
	int fd;                        /* its descriptor */
	uint64_t file_bytes;           /* writer only */
	pthread_t writer;
	int stop;                      /* atomic */
	int err;                       /* last write error, writer only */
	/* counters: tapped/dropped by lcores (atomic), the rest by the
	 * writer (atomic stores) */
	uint64_t tapped;
	uint64_t dropped;
	uint64_t written;
	uint64_t bytes;
	uint32_t files;
};

static uint32_t cap_seq;           /* unique pool and ring names */

/* Largest snaplen whose copy fits an mbuf (data room is 16 bits). */
static uint32_t
cap_max_snaplen(void)
{
	uint32_t s = CAP_MAX_SNAPLEN;

	while (s > 64 && rte_pcapng_mbuf_size(s) > UINT16_MAX)
		s -= 64;
	return s;
}

/* Whole frames: the port's largest frame (its configured or default
 * max_rx_pkt_len), so that the pool holds ring_size frames of it. */
static uint32_t
cap_default_snaplen(uint16_t port_id)
{
	const struct qpio_port *p = qpio_port_get(port_id);
	uint32_t len = p != NULL && p->conf.max_rx_pkt_len != 0 ?
		       p->conf.max_rx_pkt_len : QPIO_PORT_DEFAULT_MAX_PKT_LEN;

	return RTE_MIN(len, cap_max_snaplen());
}

/* Name of file number k: path itself, then BASE.k.pcapng. */
static void
file_name(const struct qpio_port_capture *cap, uint32_t k, char *buf,
	  size_t size)
{
	const char *sfx = ".pcapng";
	size_t len = strlen(cap->path), sl = strlen(sfx);

	if (k == 0)
		snprintf(buf, size, "%s", cap->path);
	else if (len > sl && strcmp(cap->path + len - sl, sfx) == 0)
		snprintf(buf, size, "%.*s.%u%s", (int)(len - sl), cap->path, k,
			 sfx);
	else
		snprintf(buf, size, "%s.%u", cap->path, k);
}

/* Interface description block of the port. */
static int
write_idb(int fd, const struct qpio_port_capture *cap, uint64_t *bytes)
{
	uint8_t blk[128];
	uint32_t len = 0, name_len = (uint32_t)strlen(cap->port_name), v32;
	uint16_t v16;

#define PUT(p, n) do { memcpy(blk + len, (p), (n)); len += (n); } while (0)
#define PAD() do { while (len % 4) blk[len++] = 0; } while (0)
	v32 = 1;                                   /* block type: IDB */
	PUT(&v32, 4);
	len += 4;                                  /* total length, below */
	v16 = 1;                                   /* LINKTYPE_ETHERNET */
	PUT(&v16, 2);
	v16 = 0;
	PUT(&v16, 2);
	v32 = cap->snaplen;
	PUT(&v32, 4);
	v16 = 2;                                   /* if_name */
	PUT(&v16, 2);
	v16 = (uint16_t)name_len;
	PUT(&v16, 2);
	PUT(cap->port_name, name_len);
	PAD();
	v16 = 9;                                   /* if_tsresol */
	PUT(&v16, 2);
	v16 = 1;
	PUT(&v16, 2);
	blk[len++] = 9;                            /* 10^-9 s */
	PAD();
	v32 = 0;                                   /* opt_endofopt */
	PUT(&v32, 4);
	len += 4;
	memcpy(blk + 4, &len, 4);
	memcpy(blk + len - 4, &len, 4);
#undef PUT
#undef PAD
	if (write(fd, blk, len) != (ssize_t)len)
		return -errno;
	*bytes += len;
	return 0;
}

/* Open file number k (cap->files) and write its headers. */
static int
file_open(struct qpio_port_capture *cap)
{
	char name[PATH_MAX + 16];
	off_t shb;
	int fd, ret;

	file_name(cap, cap->files, name, sizeof(name));
	fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		CAP_LOG(ERR, "%s: %s", name, strerror(-ret));
		return ret;
	}
	cap->pcapng = rte_pcapng_fdopen(fd, NULL, NULL, "qpio", NULL);
	if (cap->pcapng == NULL) {
		ret = -rte_errno;
		CAP_LOG(ERR, "%s: rte_pcapng_fdopen: %s", name,
			rte_strerror(rte_errno));
		close(fd);
		return ret;
	}
	cap->fd = fd;
	shb = lseek(fd, 0, SEEK_CUR);
	cap->file_bytes = shb > 0 ? (uint64_t)shb : 0;
	ret = write_idb(fd, cap, &cap->file_bytes);
	if (ret < 0) {
		CAP_LOG(ERR, "%s: %s", name, strerror(-ret));
		rte_pcapng_close(cap->pcapng);
		cap->pcapng = NULL;
		return ret;
	}
	__atomic_fetch_add(&cap->bytes, cap->file_bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&cap->files, cap->files + 1, __ATOMIC_RELAXED);
	return 0;
}

/* Write the enhanced packet blocks of n copies (each starts with its
 * block header, rte_pcapng_copy()) with interface id 0.
 * @return bytes written or -1 with errno. */
static ssize_t
write_blocks(int fd, struct rte_mbuf **m, unsigned int n)
{
	struct iovec iov[IOV_MAX];
	unsigned int i, cnt = 0;
	ssize_t w, total = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *s = m[i];
		uint32_t *epb = rte_pktmbuf_mtod(s, uint32_t *);

		epb[2] = 0;                        /* interface_id */
		if (cnt + s->nb_segs >= IOV_MAX) {
			w = writev(fd, iov, cnt);
			if (w < 0)
				return -1;
			total += w;
			cnt = 0;
		}
		for (; s != NULL; s = s->next) {
			iov[cnt].iov_base = rte_pktmbuf_mtod(s, void *);
			iov[cnt].iov_len = rte_pktmbuf_data_len(s);
			cnt++;
		}
	}
	if (cnt > 0) {
		w = writev(fd, iov, cnt);
		if (w < 0)
			return -1;
		total += w;
	}
	return total;
}

static void
writer_burst(struct qpio_port_capture *cap, struct rte_mbuf **m, unsigned int n)
{
	ssize_t w;

	if (cap->pcapng == NULL) {
		rte_pktmbuf_free_bulk(m, n);
		__atomic_fetch_add(&cap->dropped, n, __ATOMIC_RELAXED);
		return;
	}
	w = write_blocks(cap->fd, m, n);
	rte_pktmbuf_free_bulk(m, n);
	if (w < 0) {
		cap->err = -errno;
		__atomic_fetch_add(&cap->dropped, n, __ATOMIC_RELAXED);
		return;
	}
	cap->file_bytes += (uint64_t)w;
	__atomic_fetch_add(&cap->bytes, (uint64_t)w, __ATOMIC_RELAXED);
	__atomic_fetch_add(&cap->written, n, __ATOMIC_RELAXED);
	if (cap->max_bytes != 0 && cap->file_bytes >= cap->max_bytes) {
		rte_pcapng_close(cap->pcapng);
		cap->pcapng = NULL;
		cap->err = file_open(cap);
	}
}

static void *
writer_main(void *arg)
{
	struct qpio_port_capture *cap = arg;
	struct rte_mbuf *m[CAP_BURST];
	unsigned int n;

	for (;;) {
		n = rte_ring_dequeue_burst(cap->ring, (void **)m, CAP_BURST,
					   NULL);
		if (n > 0) {
			writer_burst(cap, m, n);
			continue;
		}
		/* Stop only once the ring is empty after the stop flag: the
		 * lcores stopped tapping before it was set. */
		if (__atomic_load_n(&cap->stop, __ATOMIC_ACQUIRE) &&
		    rte_ring_empty(cap->ring))
			break;
		usleep(CAP_IDLE_US);
	}
	return NULL;
}

static void
cap_free(struct qpio_port_capture *cap)
{
	rte_ring_free(cap->ring);
	rte_mempool_free(cap->mp);
	rte_free(cap);
}

struct qpio_port_capture *
qpio_port_capture_start(uint16_t port_id,
			const struct qpio_port_capture_conf *conf)
{
	struct qpio_port_capture *cap;
	char name[RTE_MEMPOOL_NAMESIZE];
	uint32_t ring_size, seq;
	int ret;

	if (conf == NULL || conf->path == NULL || conf->path[0] == '\0' ||
	    !qpio_port_is_valid(port_id)) {
		CAP_LOG(ERR, "port %u: want a port and a file", port_id);
		rte_errno = EINVAL;
		return NULL;
	}
	ring_size = conf->ring_size != 0 ? conf->ring_size : CAP_DEF_RING;
	if (!rte_is_power_of_2(ring_size) || ring_size < 2 ||
	    conf->snaplen > cap_max_snaplen() ||
	    (conf->max_bytes != 0 && conf->max_bytes < CAP_MIN_ROTATE) ||
	    strlen(conf->path) >= PATH_MAX) {
		CAP_LOG(ERR, "port %u: ring_size %u must be a power of 2, "
			"snaplen %u at most %u, max_bytes 0 or at least %u",
			port_id, ring_size, conf->snaplen, cap_max_snaplen(),
			CAP_MIN_ROTATE);
		rte_errno = EINVAL;
		return NULL;
	}
	cap = rte_zmalloc("qpio_port_capture", sizeof(*cap), 0);
	if (cap == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	cap->port_id = port_id;
	cap->snaplen = conf->snaplen != 0 ? conf->snaplen :
		       cap_default_snaplen(port_id);
	cap->max_bytes = conf->max_bytes;
	snprintf(cap->path, sizeof(cap->path), "%s", conf->path);
	qpio_port_name_get(port_id, cap->port_name, sizeof(cap->port_name));
	seq = __atomic_fetch_add(&cap_seq, 1, __ATOMIC_RELAXED);
	snprintf(name, sizeof(name), "qcap_mp_%u", seq);
	/* One copy per ring slot, plus the writer's burst. */
	cap->mp = rte_pktmbuf_pool_create(name, ring_size + CAP_BURST, 0, 0,
			rte_pcapng_mbuf_size(cap->snaplen), SOCKET_ID_ANY);
	snprintf(name, sizeof(name), "qcap_r_%u", seq);
	cap->ring = rte_ring_create(name, ring_size, SOCKET_ID_ANY,
				    RING_F_SC_DEQ);
	if (cap->mp == NULL || cap->ring == NULL) {
		CAP_LOG(ERR, "port %u: pool or ring of %u: %s", port_id,
			ring_size, rte_strerror(rte_errno));
		cap_free(cap);
		rte_errno = ENOMEM;
		return NULL;
	}
	ret = file_open(cap);
	if (ret == 0)
		ret = -rte_ctrl_thread_create(&cap->writer, "qpio-capture",
					      NULL, writer_main, cap);
	if (ret < 0) {
		if (cap->pcapng != NULL)
			rte_pcapng_close(cap->pcapng);
		cap_free(cap);
		rte_errno = -ret;
		return NULL;
	}
	return cap;
}


void
qpio_port_capture_tap(struct qpio_port_capture *cap, uint16_t queue,
		      struct rte_mbuf *const *pkts, uint16_t n,
		      enum qpio_port_capture_dir dir)
{
	struct rte_mbuf *c[CAP_BURST];
	uint64_t tsc = rte_get_tsc_cycles();
	unsigned int i, k, q;
	uint64_t lost = 0;

	__atomic_fetch_add(&cap->tapped, n, __ATOMIC_RELAXED);
	for (i = 0; i < n; i += CAP_BURST) {
		unsigned int m = RTE_MIN((unsigned int)n - i, CAP_BURST);

		for (k = 0, q = 0; k < m; k++) {
			c[q] = rte_pcapng_copy(cap->port_id, queue, pkts[i + k],
				cap->mp, cap->snaplen, tsc,
				dir == QPIO_PORT_CAPTURE_RX ?
				RTE_PCAPNG_DIRECTION_IN :
				RTE_PCAPNG_DIRECTION_OUT);
			if (c[q] != NULL)
				q++;
		}
		lost += m - q;
		k = rte_ring_enqueue_burst(cap->ring, (void **)c, q, NULL);
		if (k < q) {
			rte_pktmbuf_free_bulk(&c[k], q - k);
			lost += q - k;
		}
	}
	if (lost != 0)
		__atomic_fetch_add(&cap->dropped, lost, __ATOMIC_RELAXED);
}

int
qpio_port_capture_stats_get(const struct qpio_port_capture *cap,
			    struct qpio_port_capture_stats *st)
{
	if (cap == NULL || st == NULL)
		return -EINVAL;
	st->tapped = __atomic_load_n(&cap->tapped, __ATOMIC_RELAXED);
	st->written = __atomic_load_n(&cap->written, __ATOMIC_RELAXED);
	st->dropped = __atomic_load_n(&cap->dropped, __ATOMIC_RELAXED);
	st->bytes = __atomic_load_n(&cap->bytes, __ATOMIC_RELAXED);
	st->files = __atomic_load_n(&cap->files, __ATOMIC_RELAXED);
	return 0;
}

int
qpio_port_capture_stop(struct qpio_port_capture *cap,
		       struct qpio_port_capture_stats *stats)
{
	int err;

	if (cap == NULL)
		return -EINVAL;
	__atomic_store_n(&cap->stop, 1, __ATOMIC_RELEASE);
	pthread_join(cap->writer, NULL);
	if (cap->pcapng != NULL)
		rte_pcapng_close(cap->pcapng);
	err = cap->err;
	if (stats != NULL)
		qpio_port_capture_stats_get(cap, stats);
	cap_free(cap);
	return err;
}
