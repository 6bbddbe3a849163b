/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capture tap of lib/port: files read back with libpcap, rotation at an
 * exact frame count, the drop counter's accounting, API misuse.
 */
#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_mbuf.h>

#include "qpio_port.h"
#include "qpio_port_capture.h"
#include "test_common.h"

#define FRAME 64u
#define BURST 32u

static struct rte_mempool *mp;
static char dir[64];

static void
cap_init(void)
{
	qt_eal_init();
	mp = rte_pktmbuf_pool_create("cap_test", 4095, 0, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	cr_assert_not_null(mp);
	cr_assert_eq(qpio_port_create("ring0"), 0);
	snprintf(dir, sizeof(dir), "/tmp/qpio-cap-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void
cap_fini(void)
{
	char cmd[128];

	qpio_port_close(0);
	rte_mempool_free(mp);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
	qt_eal_fini();
}

TestSuite(port_capture, .init = cap_init, .fini = cap_fini);

/* n frames; frame k is FRAME bytes of qt_fill(seed k). */
static void
frames(struct rte_mbuf **m, unsigned int n, unsigned int first)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		m[i] = rte_pktmbuf_alloc(mp);
		cr_assert_not_null(m[i]);
		qt_fill(rte_pktmbuf_mtod(m[i], uint8_t *), FRAME, first + i);
		m[i]->data_len = FRAME;
		m[i]->pkt_len = FRAME;
	}
}

/* Wait (bounded) until the writer has written want frames. */
static void
wait_written(struct qpio_port_capture *cap, uint64_t want)
{
	struct qpio_port_capture_stats st;
	int i;

	for (i = 0; i < 20000; i++) {
		cr_assert_eq(qpio_port_capture_stats_get(cap, &st), 0);
		if (st.written + st.dropped >= want)
			break;
		usleep(500);
	}
	cr_assert_eq(st.written, want, "written %lu, dropped %lu",
		     (unsigned long)st.written, (unsigned long)st.dropped);
}

/* Packets of a file; with seeds, packet k must hold the bytes of seed
 * first_seed + k. */
static unsigned int
file_check_seeds(const char *path, unsigned int first_seed, int seeds)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	uint8_t want[FRAME];
	unsigned int n = 0;
	pcap_t *p;

	p = pcap_open_offline(path, err);
	cr_assert_not_null(p, "%s: %s", path, err);
	cr_assert_eq(pcap_datalink(p), DLT_EN10MB);
	while (pcap_next_ex(p, &h, &d) == 1) {
		qt_fill(want, FRAME, first_seed + n);
		if (h->caplen != FRAME || h->len != FRAME ||
		    (seeds && memcmp(d, want, FRAME) != 0))
			break;
		n++;
	}
	pcap_close(p);
	return n;
}

static unsigned int
file_check(const char *path, unsigned int first_seed)
{
	return file_check_seeds(path, first_seed, 1);
}

/*
 * Each burst of 32 is written before the next is tapped, so the files
 * grow by 32 blocks of 112 bytes (28 header + 64 frame + 16 options +
 * 4 trailer) after 84 bytes of section and interface headers. A file
 * reaches 64 KiB after 19 bursts (84 + 19 * 3584 = 68180): 608 frames
 * per file, and 2016 frames make files of 608, 608, 608 and 192.
 */
Test(port_capture, rotates_at_max_bytes_with_exact_frame_counts)
{
	struct qpio_port_capture_conf conf = { .max_bytes = 64 * 1024 };
	struct qpio_port_capture_stats st;
	struct qpio_port_capture *cap;
	struct rte_mbuf *m[BURST];
	char path[128], name[160];
	unsigned int b, f;
	const unsigned int want[] = { 608, 608, 608, 192 };

	snprintf(path, sizeof(path), "%s/rot.pcapng", dir);
	conf.path = path;
	cap = qpio_port_capture_start(0, &conf);
	cr_assert_not_null(cap, "%s", rte_strerror(rte_errno));
	for (b = 0; b < 63; b++) {
		frames(m, BURST, b * BURST);
		qpio_port_capture_tap(cap, 0, m, BURST, QPIO_PORT_CAPTURE_RX);
		rte_pktmbuf_free_bulk(m, BURST);
		wait_written(cap, (b + 1) * BURST);
	}
	cr_assert_eq(qpio_port_capture_stop(cap, &st), 0);
	cr_assert_eq(st.tapped, 2016);
	cr_assert_eq(st.written, 2016);
	cr_assert_eq(st.dropped, 0);
	cr_assert_eq(st.files, 4);
	cr_assert_eq(st.bytes, 4 * 84 + 2016 * 112);
	for (f = 0, b = 0; f < 4; f++) {
		if (f == 0)
			snprintf(name, sizeof(name), "%s", path);
		else
			snprintf(name, sizeof(name), "%s/rot.%u.pcapng", dir, f);
		cr_assert_eq(file_check(name, b), want[f], "file %s", name);
		b += want[f];
	}
	snprintf(name, sizeof(name), "%s/rot.4.pcapng", dir);
	cr_assert_neq(access(name, F_OK), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), 4095);
}

/* A writer that falls behind: whatever is not written is counted. */
Test(port_capture, frames_not_written_are_counted_as_dropped)
{
	struct qpio_port_capture_conf conf = { .ring_size = 64 };
	struct qpio_port_capture_stats st;
	struct qpio_port_capture *cap;
	struct rte_mbuf *m[2048];
	char path[128];

	snprintf(path, sizeof(path), "%s/drop.pcapng", dir);
	conf.path = path;
	cap = qpio_port_capture_start(0, &conf);
	cr_assert_not_null(cap);
	frames(m, 2048, 0);
	qpio_port_capture_tap(cap, 0, m, 2048, QPIO_PORT_CAPTURE_TX);
	rte_pktmbuf_free_bulk(m, 2048);
	cr_assert_eq(qpio_port_capture_stop(cap, &st), 0);
	cr_assert_eq(st.tapped, 2048);
	cr_assert_eq(st.written + st.dropped, 2048);
	/* Which frames were dropped depends on the writer's pace: count. */
	cr_assert_eq(file_check_seeds(path, 0, 0), st.written);
	cr_assert_eq(st.files, 1);
	cr_assert_eq(rte_mempool_avail_count(mp), 4095);
}

Test(port_capture, bad_arguments_are_refused)
{
	struct qpio_port_capture_conf conf = { .path = "/tmp/x.pcapng" };

	rte_errno = 0;
	cr_assert_null(qpio_port_capture_start(0, NULL));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_port_capture_start(7, &conf));
	cr_assert_eq(rte_errno, EINVAL);
	conf.ring_size = 1000;
	cr_assert_null(qpio_port_capture_start(0, &conf));
	cr_assert_eq(rte_errno, EINVAL);
	conf.ring_size = 0;
	conf.snaplen = 70000;
	cr_assert_null(qpio_port_capture_start(0, &conf));
	cr_assert_eq(rte_errno, EINVAL);
	conf.snaplen = 0;
	conf.max_bytes = 1000;
	cr_assert_null(qpio_port_capture_start(0, &conf));
	cr_assert_eq(rte_errno, EINVAL);
	conf.max_bytes = 0;
	conf.path = "/nonexistent-qpio/x.pcapng";
	cr_assert_null(qpio_port_capture_start(0, &conf));
	cr_assert_eq(rte_errno, ENOENT);
	cr_assert_eq(qpio_port_capture_stop(NULL, NULL), -EINVAL);
	cr_assert_eq(qpio_port_capture_stats_get(NULL, NULL), -EINVAL);
}
