/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pcap port driver: hostile captures, round trips of real captures,
 * infinite_rx, the out-of-mbufs path, devargs and the tx file.
 *
 * The captures are read from QPIO_PCAP_DATA_DIR (../shared/data/pcap
 * next to the repository); tests that need them skip when it is absent.
 * Expected values come from reading the same files with libpcap directly.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "qpio_port.h"
#include "test_common.h"

#ifndef QPIO_PCAP_DATA_DIR
#define QPIO_PCAP_DATA_DIR "../shared/data/pcap"
#endif

#define HOSTILE QPIO_PCAP_DATA_DIR "/hostile/"
#define REAL QPIO_PCAP_DATA_DIR "/real/"
#define BIG_LEN 262144u      /* the pcap port's max_rx_pkt_len */
#define ROOM 2048u           /* data bytes per mbuf of the test pools */

TestSuite(pcap_port, .init = qt_eal_init, .fini = qt_eal_fini);

/* One record read with libpcap directly. */
struct rec {
	uint32_t caplen;
	uint32_t len;
	uint8_t *data;
};

static void
need_data(void)
{
	struct stat st;

	if (stat(QPIO_PCAP_DATA_DIR, &st) != 0 || !S_ISDIR(st.st_mode))
		qt_skip_test("capture folder %s is absent (the tests read the "
			     "shared captures from ../shared/data/pcap)",
			     QPIO_PCAP_DATA_DIR);
}

/* Every record of path; *n is the count. Asserts the file reads to its
 * end without error. */
static struct rec *
recs_load(const char *path, unsigned int *n)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	struct rec *r = NULL;
	unsigned int cnt = 0;
	pcap_t *p;
	int ret;

	p = pcap_open_offline(path, err);
	cr_assert_not_null(p, "%s: %s", path, err);
	while ((ret = pcap_next_ex(p, &h, &d)) == 1) {
		r = realloc(r, (cnt + 1) * sizeof(*r));
		cr_assert_not_null(r);
		r[cnt].caplen = h->caplen;
		r[cnt].len = h->len;
		r[cnt].data = malloc(h->caplen + 1);
		cr_assert_not_null(r[cnt].data);
		memcpy(r[cnt].data, d, h->caplen);
		cnt++;
	}
	cr_assert_eq(ret, PCAP_ERROR_BREAK, "%s: %s", path, pcap_geterr(p));
	pcap_close(p);
	*n = cnt;
	return r;
}

static void
recs_free(struct rec *r, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		free(r[i].data);
	free(r);
}

static struct rte_mempool *
pool(unsigned int n)
{
	static unsigned int seq;
	struct rte_mempool *mp;
	char name[32];

	snprintf(name, sizeof(name), "pcap_test_%u", seq++);
	mp = rte_pktmbuf_pool_create(name, n, 0, 0,
				     ROOM + RTE_PKTMBUF_HEADROOM, SOCKET_ID_ANY);
	cr_assert_not_null(mp);
	return mp;
}

/* Create, configure, set up and start a port. */
static uint16_t
port_up(const char *devargs, uint16_t nrx, uint16_t ntx, uint32_t max_len,
	struct rte_mempool *mp)
{
	struct qpio_port_conf conf = { .max_rx_pkt_len = max_len };
	int id;

	id = qpio_port_create(devargs);
	cr_assert_geq(id, 0, "create %s: %d", devargs, id);
	cr_assert_eq(qpio_port_configure(id, nrx, ntx, &conf), 0);
	if (nrx)
		cr_assert_eq(qpio_port_rx_queue_setup(id, 0, 512, SOCKET_ID_ANY,
						      mp), 0);
	if (ntx)
		cr_assert_eq(qpio_port_tx_queue_setup(id, 0, 512,
						      SOCKET_ID_ANY), 0);
	cr_assert_eq(qpio_port_start(id), 0);
	return (uint16_t)id;
}

static uint64_t
xstat(uint16_t id, const char *name)
{
	uint64_t v = UINT64_MAX;

	cr_assert_eq(qpio_port_xstat_get_by_name(id, name, &v), 0, "%s", name);
	return v;
}

static struct qpio_port_stats
stats(uint16_t id)
{
	struct qpio_port_stats st;

	cr_assert_eq(qpio_port_stats_get(id, &st), 0);
	return st;
}

/* Assert m carries exactly r's captured bytes. */
static void
assert_frame(const struct rte_mbuf *m, const struct rec *r, unsigned int i)
{
	static uint8_t buf[BIG_LEN];
	const uint8_t *d;

	cr_assert_eq(rte_pktmbuf_pkt_len(m), r->caplen, "record %u length", i);
	d = rte_pktmbuf_read(m, 0, r->caplen, buf);
	cr_assert_not_null(d);
	cr_assert_eq(memcmp(d, r->data, r->caplen), 0, "record %u bytes", i);
}

static char *
tmp_dir(void)
{
	static char dir[] = "/tmp/qpio-pcap-XXXXXX";

	cr_assert_not_null(mkdtemp(dir));
	return dir;
}

/* Read every frame of port id in bursts of burst (<= 32) until a burst
 * returns 0, checking each against recs; frees them.
 * @return the number of frames. */
static unsigned int
drain_check(uint16_t id, const struct rec *recs, unsigned int nrecs,
	    uint16_t burst)
{
	struct rte_mbuf *pkts[32];
	unsigned int got = 0;
	uint16_t n, i;

	while ((n = qpio_port_rx_burst(id, 0, pkts, burst)) > 0) {
		for (i = 0; i < n; i++) {
			cr_assert_lt(got, nrecs);
			assert_frame(pkts[i], &recs[got], got);
			rte_pktmbuf_free(pkts[i]);
			got++;
		}
	}
	return got;
}

/* ---- hostile captures refused at create ---- */

static void
assert_refused(const char *file, int expect)
{
	char devargs[512];

	need_data();
	snprintf(devargs, sizeof(devargs), "pcap0,rx_pcap=" HOSTILE "%s", file);
	cr_assert_eq(qpio_port_create(devargs), expect, "%s", file);
	cr_assert_eq(qpio_port_count(), 0);
	cr_assert_eq(qpio_port_get_by_name("pcap0"), -ENODEV);
}

Test(pcap_port, zero_bytes_refused_at_create)
{
	assert_refused("zero-bytes.pcap", -EINVAL);
}

Test(pcap_port, short_header_refused_at_create)
{
	assert_refused("short-header.pcap", -EINVAL);
}

Test(pcap_port, bad_magic_refused_at_create)
{
	assert_refused("bad-magic.pcap", -EINVAL);
}

Test(pcap_port, linktype_ipv4_refused_at_create)
{
	assert_refused("LINKTYPE_IPV4.pcap", -EINVAL);
}

Test(pcap_port, raw_linktype_with_flag_bits_refused_at_create)
{
	assert_refused("heap-overflow-1.pcap", -EINVAL);
}

Test(pcap_port, ethernet_linktype_with_flag_bits_refused_at_create)
{
	assert_refused("aarp-heapoverflow-1.pcap", -EINVAL);
	assert_refused("esp_truncated.pcap", -EINVAL);
}

/* ---- hostile captures that open: read, then end of input ---- */

struct run {
	unsigned int frames;
	struct qpio_port_stats st;
	uint64_t records, eof, read_errors, oversize, truncated;
};

/* Read file through an rx-only port until a burst returns 0, twice more
 * to check nothing comes after the end. */
static struct run
run_file(const char *path, uint32_t max_len, struct rte_mbuf **keep)
{
	struct rte_mempool *mp = pool(256);
	struct rte_mbuf *pkts[32];
	char devargs[512];
	struct run r;
	uint16_t id, n, i;
	int again;

	memset(&r, 0, sizeof(r));
	snprintf(devargs, sizeof(devargs), "pcap0,rx_pcap=%s", path);
	id = port_up(devargs, 1, 0, max_len, mp);
	for (again = 0; again < 3; ) {
		n = qpio_port_rx_burst(id, 0, pkts, 32);
		if (n == 0) {
			again++;
			continue;
		}
		for (i = 0; i < n; i++) {
			if (keep != NULL && r.frames == 0)
				*keep = pkts[i];
			else
				rte_pktmbuf_free(pkts[i]);
			r.frames++;
		}
	}
	r.st = stats(id);
	r.records = xstat(id, "rx_records_read");
	r.eof = xstat(id, "rx_eof");
	r.read_errors = xstat(id, "rx_read_errors");
	r.oversize = xstat(id, "rx_oversize");
	r.truncated = xstat(id, "rx_truncated_records");
	cr_assert_eq(qpio_port_close(id), 0);
	return r;
}

Test(pcap_port, empty_capture_is_a_clean_empty_run)
{
	struct run r;

	need_data();
	r = run_file(HOSTILE "empty.pcap", 0, NULL);
	cr_assert_eq(r.frames, 0);
	cr_assert_eq(r.records, 0);
	cr_assert_eq(r.st.ipackets, 0);
	cr_assert_eq(r.st.ierrors, 0);
	cr_assert_eq(r.read_errors, 0);
	cr_assert_eq(r.eof, 1);
}

/* The only record is cut short at the end of the file. */
Test(pcap_port, truncated_record_ends_input_with_one_error)
{
	struct run r;

	need_data();
	r = run_file(HOSTILE "truncated-mid-record.pcap", 0, NULL);
	cr_assert_eq(r.frames, 0);
	cr_assert_eq(r.records, 0);
	cr_assert_eq(r.st.ierrors, 1);
	cr_assert_eq(r.st.q_errors[0], 1);
	cr_assert_eq(r.read_errors, 1);
	cr_assert_eq(r.eof, 1);
}

/* A capture of two 64-byte records written by the test, the second cut
 * short by exactly one byte: of its data (63 of 64 bytes) or of its
 * record header (15 of 16 bytes). The first frame is read whole; the
 * second is one read error and the end of input, never a short frame. */
static void
write_cut_by_one(const char *path, int in_header)
{
	uint32_t ghdr[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1 };
	uint32_t rhdr[4] = { 1, 0, 64, 64 };
	uint8_t buf[24 + 2 * (16 + 64)], *p = buf;
	unsigned int i;
	size_t len;

	memcpy(p, ghdr, sizeof(ghdr));
	p += sizeof(ghdr);
	for (i = 0; i < 2; i++) {
		memcpy(p, rhdr, sizeof(rhdr));
		p += sizeof(rhdr);
		memset(p, 0x40 + i, 64);
		p += 64;
	}
	len = in_header ? 24 + 16 + 64 + 15 : sizeof(buf) - 1;
	qt_file_write(path, buf, len);
}

Test(pcap_port, record_cut_short_by_one_byte_is_a_read_error)
{
	struct rte_mbuf *m = NULL;
	char path[64];
	struct run r;
	int in_header;

	for (in_header = 0; in_header < 2; in_header++) {
		snprintf(path, sizeof(path), "/tmp/qpio-cut1-%d.pcap",
			 (int)getpid());
		write_cut_by_one(path, in_header);
		r = run_file(path, 0, &m);
		unlink(path);
		cr_assert_eq(r.frames, 1, "in_header %d", in_header);
		cr_assert_eq(r.records, 1);
		cr_assert_eq(r.st.ipackets, 1);
		cr_assert_eq(r.st.ibytes, 64);
		cr_assert_eq(r.st.ierrors, 1);
		cr_assert_eq(r.read_errors, 1);
		cr_assert_eq(r.truncated, 0);
		cr_assert_eq(r.eof, 1);
		cr_assert_not_null(m);
		cr_assert_eq(rte_pktmbuf_pkt_len(m), 64);
		cr_assert_eq(rte_pktmbuf_mtod(m, uint8_t *)[0], 0x40);
		cr_assert_eq(rte_pktmbuf_mtod(m, uint8_t *)[63], 0x40);
		rte_pktmbuf_free(m);
		m = NULL;
	}
}

/* libpcap refuses the record but would return the bytes after it as a
 * record on the next call: the port must not read on. */
Test(pcap_port, caplen_huge_stops_at_the_bad_record)
{
	struct run r;

	need_data();
	r = run_file(HOSTILE "caplen-huge.pcap", BIG_LEN, NULL);
	cr_assert_eq(r.frames, 0);
	cr_assert_eq(r.records, 0);
	cr_assert_eq(r.st.ipackets, 0);
	cr_assert_eq(r.st.ierrors, 1);
	cr_assert_eq(r.read_errors, 1);
	cr_assert_eq(r.eof, 1);
}

Test(pcap_port, caplen_over_snaplen_stops_at_the_bad_record)
{
	struct run r;

	need_data();
	r = run_file(HOSTILE "caplen-over-snaplen.pcap", BIG_LEN, NULL);
	cr_assert_eq(r.frames, 0);
	cr_assert_eq(r.records, 0);
	cr_assert_eq(r.st.ierrors, 1);
	cr_assert_eq(r.read_errors, 1);
	cr_assert_eq(r.eof, 1);
}

/* A snapped record (caplen 64, len 262144) of valid Ethernet: forwarded
 * as captured, byte for byte. */
Test(pcap_port, arp_too_long_tha_forwarded_as_captured)
{
	struct rte_mbuf *m = NULL;
	unsigned int n;
	struct rec *recs;
	struct run r;

	need_data();
	recs = recs_load(HOSTILE "arp-too-long-tha.pcap", &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(recs[0].caplen, 64);
	cr_assert_eq(recs[0].len, 262144);
	r = run_file(HOSTILE "arp-too-long-tha.pcap", 0, &m);
	cr_assert_eq(r.frames, 1);
	cr_assert_not_null(m);
	cr_assert_eq(m->nb_segs, 1);
	assert_frame(m, &recs[0], 0);
	cr_assert_eq(r.st.ipackets, 1);
	cr_assert_eq(r.st.ibytes, 64);
	cr_assert_eq(r.st.ierrors, 0);
	cr_assert_eq(r.truncated, 1);
	cr_assert_eq(r.records, 1);
	cr_assert_eq(r.eof, 1);
	rte_pktmbuf_free(m);
	recs_free(recs, n);
}

/* One 65,590-byte frame (65,606 bytes with its record header). */
Test(pcap_port, jumbogram_carried_in_a_chain_when_allowed)
{
	struct rte_mbuf *m = NULL;
	unsigned int n;
	struct rec *recs;
	struct run r;

	need_data();
	recs = recs_load(HOSTILE "ipv6_jumbogram_1.pcap", &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(recs[0].caplen, 65590);
	r = run_file(HOSTILE "ipv6_jumbogram_1.pcap", BIG_LEN, &m);
	cr_assert_eq(r.frames, 1);
	cr_assert_eq(m->nb_segs, (65590 + ROOM - 1) / ROOM);   /* 33 */
	cr_assert_eq(m->pkt_len, 65590);
	assert_frame(m, &recs[0], 0);
	cr_assert_eq(r.st.ibytes, 65590);
	cr_assert_eq(r.st.ierrors, 0);
	cr_assert_eq(r.oversize, 0);
	cr_assert_eq(r.eof, 1);
	rte_pktmbuf_free(m);
	recs_free(recs, n);
}

Test(pcap_port, jumbogram_dropped_and_counted_over_max_len)
{
	struct run r;

	need_data();
	r = run_file(HOSTILE "ipv6_jumbogram_1.pcap", 65589, NULL);
	cr_assert_eq(r.frames, 0);
	cr_assert_eq(r.records, 1);
	cr_assert_eq(r.st.ipackets, 0);
	cr_assert_eq(r.st.ierrors, 1);
	cr_assert_eq(r.oversize, 1);
	cr_assert_eq(r.read_errors, 0);
	cr_assert_eq(r.eof, 1);
	/* The default max_rx_pkt_len (1518) drops it the same way. */
	r = run_file(HOSTILE "ipv6_jumbogram_1.pcap", 0, NULL);
	cr_assert_eq(r.frames, 0);
	cr_assert_eq(r.st.ierrors, 1);
	cr_assert_eq(r.oversize, 1);
}

/* The first records of a real capture cut at every byte offset: below
 * the 24-byte file header the port is refused; above, every complete
 * record comes out and a cut inside a record (header or data) ends the
 * input with exactly one read error. */
Test(pcap_port, capture_cut_at_every_offset_reads_complete_records_only)
{
	struct rte_mempool *mp = pool(64);
	struct rte_mbuf *pkts[8];
	unsigned int n, i, nb = 5, bound[6];
	char path[256], devargs[300];
	size_t end, k;
	uint8_t *file;
	struct rec *recs;
	FILE *f;

	need_data();
	recs = recs_load(REAL "ptp_ethernet.pcap", &n);
	bound[0] = 24;
	for (i = 0; i < nb; i++)
		bound[i + 1] = bound[i] + 16 + recs[i].caplen;
	end = bound[nb];
	file = malloc(end);
	cr_assert_not_null(file);
	f = fopen(REAL "ptp_ethernet.pcap", "rb");
	cr_assert_not_null(f);
	cr_assert_eq(fread(file, 1, end, f), end);
	fclose(f);
	snprintf(path, sizeof(path), "%s/cut.pcap", tmp_dir());
	snprintf(devargs, sizeof(devargs), "pcap0,rx_pcap=%s", path);
	for (k = 0; k <= end; k++) {
		struct qpio_port_conf conf = { .max_rx_pkt_len = 0 };
		unsigned int complete = 0, got = 0;
		uint16_t m, j;
		int id;

		f = fopen(path, "wb");
		cr_assert_not_null(f);
		cr_assert_eq(fwrite(file, 1, k, f), k);
		fclose(f);
		id = qpio_port_create(devargs);
		if (k < 24) {
			cr_assert_eq(id, -EINVAL, "cut at %zu", k);
			continue;
		}
		cr_assert_geq(id, 0, "cut at %zu", k);
		while (complete < nb && bound[complete + 1] <= k)
			complete++;
		cr_assert_eq(qpio_port_configure(id, 1, 0, &conf), 0);
		cr_assert_eq(qpio_port_rx_queue_setup(id, 0, 64, SOCKET_ID_ANY,
						      mp), 0);
		cr_assert_eq(qpio_port_start(id), 0);
		while ((m = qpio_port_rx_burst(id, 0, pkts, 8)) > 0) {
			for (j = 0; j < m; j++) {
				assert_frame(pkts[j], &recs[got], got);
				got++;
			}
			rte_pktmbuf_free_bulk(pkts, m);
		}
		cr_assert_eq(got, complete, "cut at %zu", k);
		cr_assert_eq(xstat(id, "rx_read_errors"), k != bound[complete],
			     "cut at %zu", k);
		cr_assert_eq(stats(id).ierrors, k != bound[complete]);
		cr_assert_eq(xstat(id, "rx_eof"), 1);
		cr_assert_eq(qpio_port_close(id), 0);
	}
	cr_assert_eq(rte_mempool_avail_count(mp), 64);
	unlink(path);
	*strrchr(path, '/') = '\0';
	rmdir(path);
	free(file);
	recs_free(recs, n);
}

/* ---- real captures ---- */

/* Every real capture through an rx port and a tx port, compared with the
 * input record by record: same count, order, caplen and bytes; the
 * output's len is its caplen (the tx side writes what it carries). */
static void
round_trip(const char *in, const char *out)
{
	struct rte_mempool *mp = pool(4096);
	struct rte_mbuf *pkts[32];
	struct rec *a, *b;
	unsigned int na, nb, i;
	char devargs[1100];
	uint16_t rx, tx, n;
	uint64_t bytes = 0;

	a = recs_load(in, &na);
	snprintf(devargs, sizeof(devargs), "pcap0,rx_pcap=%s", in);
	rx = port_up(devargs, 1, 0, BIG_LEN, mp);
	snprintf(devargs, sizeof(devargs), "pcap1,tx_pcap=%s", out);
	tx = port_up(devargs, 0, 1, BIG_LEN, mp);
	while ((n = qpio_port_rx_burst(rx, 0, pkts, 32)) > 0)
		cr_assert_eq(qpio_port_tx_burst(tx, 0, pkts, n), n);
	cr_assert_eq(xstat(rx, "rx_eof"), 1, "%s", in);
	cr_assert_eq(qpio_port_stop(tx), 0);
	b = recs_load(out, &nb);
	cr_assert_eq(nb, na, "%s: %u records out, %u in", in, nb, na);
	for (i = 0; i < na; i++) {
		cr_assert_eq(b[i].caplen, a[i].caplen, "%s: record %u", in, i);
		cr_assert_eq(b[i].len, a[i].caplen, "%s: record %u", in, i);
		cr_assert_eq(memcmp(a[i].data, b[i].data, a[i].caplen), 0,
			     "%s: record %u bytes", in, i);
		bytes += a[i].caplen;
	}
	cr_assert_eq(stats(rx).ipackets, na);
	cr_assert_eq(stats(rx).ibytes, bytes);
	cr_assert_eq(stats(rx).ierrors, 0);
	cr_assert_eq(stats(tx).opackets, na);
	cr_assert_eq(stats(tx).obytes, bytes);
	cr_assert_eq(stats(tx).oerrors, 0);
	cr_assert_eq(rte_mempool_avail_count(mp), 4096);
	cr_assert_eq(qpio_port_close(rx), 0);
	cr_assert_eq(qpio_port_close(tx), 0);
	rte_mempool_free(mp);
	recs_free(a, na);
	recs_free(b, nb);
}

Test(pcap_port, real_captures_round_trip_record_by_record)
{
	char in[1024], out[1024];
	struct dirent *de;
	unsigned int files = 0;
	char *dir;
	DIR *d;

	need_data();
	dir = tmp_dir();
	d = opendir(REAL);
	cr_assert_not_null(d);
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);

		if (l < 6 || strcmp(de->d_name + l - 5, ".pcap") != 0)
			continue;
		snprintf(in, sizeof(in), REAL "%s", de->d_name);
		snprintf(out, sizeof(out), "%s/%s", dir, de->d_name);
		round_trip(in, out);
		unlink(out);
		files++;
	}
	closedir(d);
	rmdir(dir);
	cr_assert_eq(files, 12);
}

/* The PIM capture has nine frames over 1518 bytes (the largest 65,535
 * captured bytes of 65,589): with the default frame size they are
 * dropped and counted, the others come out in order. */
Test(pcap_port, real_capture_frames_over_max_len_are_dropped_and_counted)
{
	struct rte_mempool *mp = pool(512);
	struct rte_mbuf *pkts[32];
	unsigned int n, i, got = 0, want = 0;
	struct rec *recs;
	uint16_t id, k, j;

	need_data();
	recs = recs_load(REAL "pim-packet-assortment.pcap", &n);
	cr_assert_eq(n, 245);
	id = port_up("pcap0,rx_pcap=" REAL "pim-packet-assortment.pcap",
		     1, 0, 1518, mp);
	i = 0;
	while ((k = qpio_port_rx_burst(id, 0, pkts, 32)) > 0) {
		for (j = 0; j < k; j++) {
			while (recs[i].caplen > 1518)
				i++;
			assert_frame(pkts[j], &recs[i], i);
			rte_pktmbuf_free(pkts[j]);
			i++;
			got++;
		}
	}
	for (i = 0; i < n; i++)
		want += recs[i].caplen <= 1518;
	cr_assert_eq(want, 236);
	cr_assert_eq(got, 236);
	cr_assert_eq(stats(id).ierrors, 9);
	cr_assert_eq(xstat(id, "rx_oversize"), 9);
	cr_assert_eq(xstat(id, "rx_truncated_records"), 0);
	cr_assert_eq(xstat(id, "rx_records_read"), 245);
	cr_assert_eq(xstat(id, "rx_eof"), 1);
	cr_assert_eq(qpio_port_close(id), 0);
	recs_free(recs, n);
}

Test(pcap_port, infinite_rx_replays_in_order_and_wraps)
{
	struct rte_mempool *mp = pool(256);
	struct rte_mbuf *pkts[32];
	unsigned int n, got = 0, total;
	struct rec *recs;
	uint16_t id, k, j;

	need_data();
	recs = recs_load(REAL "ptp_ethernet.pcap", &n);
	cr_assert_eq(n, 205);
	total = 2 * n + 7;
	id = port_up("pcap0,rx_pcap=" REAL "ptp_ethernet.pcap,infinite_rx=1",
		     1, 0, 0, mp);
	while (got < total) {
		uint16_t want = (uint16_t)RTE_MIN(32u, total - got);

		k = qpio_port_rx_burst(id, 0, pkts, want);
		cr_assert_eq(k, want);
		for (j = 0; j < k; j++) {
			assert_frame(pkts[j], &recs[got % n], got);
			rte_pktmbuf_free(pkts[j]);
			got++;
		}
	}
	cr_assert_eq(stats(id).ipackets, total);
	cr_assert_eq(xstat(id, "rx_records_read"), total);
	cr_assert_eq(xstat(id, "rx_eof"), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), 256);
	cr_assert_eq(qpio_port_close(id), 0);
	recs_free(recs, n);
}

Test(pcap_port, infinite_rx_of_an_empty_capture_fails_at_start)
{
	struct rte_mempool *mp = pool(64);
	int id;

	need_data();
	id = qpio_port_create("pcap0,rx_pcap=" HOSTILE "empty.pcap,infinite_rx=1");
	cr_assert_geq(id, 0);
	cr_assert_eq(qpio_port_configure(id, 1, 0, NULL), 0);
	cr_assert_eq(qpio_port_rx_queue_setup(id, 0, 64, SOCKET_ID_ANY, mp), 0);
	cr_assert_eq(qpio_port_start(id), -EINVAL);
	cr_assert_eq(qpio_port_start(id), -EINVAL);
	cr_assert_eq(qpio_port_close(id), 0);
}

Test(pcap_port, infinite_rx_of_a_damaged_capture_fails_at_start)
{
	struct rte_mempool *mp = pool(64);
	int id;

	need_data();
	id = qpio_port_create("pcap0,rx_pcap=" HOSTILE
			      "truncated-mid-record.pcap,infinite_rx=1");
	cr_assert_geq(id, 0);
	cr_assert_eq(qpio_port_configure(id, 1, 0, NULL), 0);
	cr_assert_eq(qpio_port_rx_queue_setup(id, 0, 64, SOCKET_ID_ANY, mp), 0);
	cr_assert_eq(qpio_port_start(id), -EINVAL);
	cr_assert_eq(qpio_port_close(id), 0);
}

/* Out of mbufs: the burst returns what it has, rx_nombuf counts the
 * failed allocation, and the record comes out once mbufs are back. */
Test(pcap_port, rx_nombuf_keeps_the_record)
{
	struct rte_mempool *mp = pool(8);
	struct rte_mbuf *held[8], *pkts[4];
	unsigned int n, got;
	struct rec *recs;
	uint16_t id;

	need_data();
	recs = recs_load(REAL "ptp_ethernet.pcap", &n);
	id = port_up("pcap0,rx_pcap=" REAL "ptp_ethernet.pcap", 1, 0, 0, mp);
	cr_assert_eq(rte_pktmbuf_alloc_bulk(mp, held, 8), 0);
	cr_assert_eq(qpio_port_rx_burst(id, 0, pkts, 4), 0);
	cr_assert_eq(qpio_port_rx_burst(id, 0, pkts, 4), 0);
	cr_assert_eq(stats(id).rx_nombuf, 2);
	cr_assert_eq(stats(id).ipackets, 0);
	cr_assert_eq(xstat(id, "rx_records_read"), 1);
	cr_assert_eq(xstat(id, "rx_eof"), 0);
	/* Three mbufs back: three frames, then out of mbufs again. */
	rte_pktmbuf_free_bulk(held, 3);
	cr_assert_eq(qpio_port_rx_burst(id, 0, pkts, 4), 3);
	cr_assert_eq(stats(id).rx_nombuf, 3);
	assert_frame(pkts[0], &recs[0], 0);
	assert_frame(pkts[1], &recs[1], 1);
	assert_frame(pkts[2], &recs[2], 2);
	rte_pktmbuf_free_bulk(pkts, 3);
	rte_pktmbuf_free_bulk(held + 3, 5);
	/* Bursts of 8 from a pool of 8 never run out again. */
	got = 3 + drain_check(id, recs + 3, n - 3, 8);
	cr_assert_eq(got, n);
	cr_assert_eq(stats(id).ipackets, n);
	cr_assert_eq(stats(id).rx_nombuf, 3);
	cr_assert_eq(xstat(id, "rx_records_read"), n);
	cr_assert_eq(xstat(id, "rx_eof"), 1);
	cr_assert_eq(rte_mempool_avail_count(mp), 8);
	cr_assert_eq(qpio_port_close(id), 0);
	recs_free(recs, n);
}

/* A chained frame needs all its segments at once. */
Test(pcap_port, rx_nombuf_for_a_chain_keeps_the_record)
{
	struct rte_mempool *mp = pool(40);
	struct rte_mbuf *held[10], *m;
	unsigned int n;
	struct rec *recs;
	uint16_t id;

	need_data();
	recs = recs_load(HOSTILE "ipv6_jumbogram_1.pcap", &n);
	id = port_up("pcap0,rx_pcap=" HOSTILE "ipv6_jumbogram_1.pcap", 1, 0,
		     BIG_LEN, mp);
	cr_assert_eq(rte_pktmbuf_alloc_bulk(mp, held, 10), 0);
	cr_assert_eq(qpio_port_rx_burst(id, 0, &m, 1), 0);
	cr_assert_eq(stats(id).rx_nombuf, 1);
	cr_assert_eq(rte_mempool_avail_count(mp), 30);
	rte_pktmbuf_free_bulk(held, 10);
	cr_assert_eq(qpio_port_rx_burst(id, 0, &m, 1), 1);
	assert_frame(m, &recs[0], 0);
	cr_assert_eq(m->nb_segs, 33);
	cr_assert_eq(rte_mempool_avail_count(mp), 7);
	rte_pktmbuf_free(m);
	cr_assert_eq(qpio_port_rx_burst(id, 0, &m, 1), 0);
	cr_assert_eq(xstat(id, "rx_eof"), 1);
	cr_assert_eq(stats(id).rx_nombuf, 1);
	cr_assert_eq(qpio_port_close(id), 0);
	recs_free(recs, n);
}

/* Stop and start resume the file where it stopped; releasing the rx
 * queue frees no mbuf the application holds. */
Test(pcap_port, stop_start_resumes_and_release_keeps_app_mbufs)
{
	struct rte_mempool *mp = pool(64);
	struct rte_mbuf *pkts[10];
	struct qpio_port_link link;
	unsigned int n, i;
	struct rec *recs;
	uint16_t id;

	need_data();
	recs = recs_load(REAL "vrrp.pcap", &n);
	id = port_up("pcap0,rx_pcap=" REAL "vrrp.pcap", 1, 0, 0, mp);
	cr_assert_eq(qpio_port_link_get(id, &link), 0);
	cr_assert_eq(link.up, 1);
	cr_assert_eq(qpio_port_rx_burst(id, 0, pkts, 10), 10);
	cr_assert_eq(qpio_port_stop(id), 0);
	cr_assert_eq(qpio_port_link_get(id, &link), 0);
	cr_assert_eq(link.up, 0);
	cr_assert_eq(qpio_port_rx_burst(id, 0, pkts, 10), 0);
	cr_assert_eq(qpio_port_rx_queue_release(id, 0), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), 54);
	for (i = 0; i < 10; i++)
		assert_frame(pkts[i], &recs[i], i);
	rte_pktmbuf_free_bulk(pkts, 10);
	cr_assert_eq(rte_mempool_avail_count(mp), 64);
	cr_assert_eq(qpio_port_rx_queue_setup(id, 0, 64, SOCKET_ID_ANY, mp), 0);
	cr_assert_eq(qpio_port_start(id), 0);
	cr_assert_eq(drain_check(id, recs + 10, n - 10, 32), n - 10);
	cr_assert_eq(stats(id).ipackets, n);
	cr_assert_eq(qpio_port_close(id), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), 64);
	recs_free(recs, n);
}

Test(pcap_port, stats_reset_zeroes_counters_and_keeps_rx_eof)
{
	struct rte_mempool *mp = pool(64);
	struct rte_mbuf *m;
	uint16_t id;

	need_data();
	id = port_up("pcap0,rx_pcap=" HOSTILE "arp-too-long-tha.pcap", 1, 0, 0,
		     mp);
	cr_assert_eq(qpio_port_rx_burst(id, 0, &m, 1), 1);
	rte_pktmbuf_free(m);
	cr_assert_eq(qpio_port_rx_burst(id, 0, &m, 1), 0);
	cr_assert_eq(stats(id).ipackets, 1);
	cr_assert_eq(xstat(id, "rx_truncated_records"), 1);
	cr_assert_eq(qpio_port_stats_reset(id), 0);
	cr_assert_eq(stats(id).ipackets, 0);
	cr_assert_eq(stats(id).ibytes, 0);
	cr_assert_eq(xstat(id, "rx_truncated_records"), 0);
	cr_assert_eq(xstat(id, "rx_records_read"), 0);
	cr_assert_eq(xstat(id, "rx_eof"), 1);
	cr_assert_eq(qpio_port_close(id), 0);
}

Test(pcap_port, xstat_names_are_fixed)
{
	static const char *const want[] = {
		"rx_good_packets", "tx_good_packets", "rx_good_bytes",
		"tx_good_bytes", "rx_missed_errors", "rx_errors", "tx_errors",
		"rx_mbuf_allocation_errors", "rx_q0_packets", "rx_q0_bytes",
		"rx_q0_errors", "tx_q0_packets", "tx_q0_bytes",
		"rx_records_read", "rx_oversize", "rx_truncated_records",
		"rx_read_errors", "rx_eof", "tx_oversize",
	};
	struct qpio_port_xstat_name names[32];
	struct rte_mempool *mp = pool(64);
	unsigned int i;
	uint16_t id;

	need_data();
	id = port_up("pcap0,rx_pcap=" HOSTILE "empty.pcap", 1, 1, 0, mp);
	cr_assert_eq(qpio_port_xstats_names_get(id, names, 32), RTE_DIM(want));
	for (i = 0; i < RTE_DIM(want); i++)
		cr_assert_str_eq(names[i].name, want[i]);
	cr_assert_eq(qpio_port_close(id), 0);
}

/* ---- transmit ---- */

/* A frame of len bytes in segments of at most seg bytes, filled with
 * the pattern of seed. */
static struct rte_mbuf *
frame(struct rte_mempool *mp, uint32_t len, uint32_t seg, uint32_t seed)
{
	static uint8_t buf[BIG_LEN];
	struct rte_mbuf *head = NULL;
	uint32_t off = 0;

	qt_fill(buf, len, seed);
	do {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		uint32_t n = RTE_MIN(seg, len - off);

		cr_assert_not_null(m);
		memcpy(rte_pktmbuf_append(m, n), buf + off, n);
		off += n;
		if (head == NULL)
			head = m;
		else
			cr_assert_eq(rte_pktmbuf_chain(head, m), 0);
	} while (off < len);
	return head;
}

Test(pcap_port, tx_file_is_complete_after_stop)
{
	static const uint32_t lens[] = { 60, 1514, 3000, 9000, 9001, 64 };
	struct rte_mempool *mp = pool(64);
	struct rte_mbuf *pkts[RTE_DIM(lens)];
	char devargs[300], path[256];
	unsigned int i, n, k;
	struct rec *recs;
	uint16_t id;

	snprintf(path, sizeof(path), "%s/out.pcap", tmp_dir());
	snprintf(devargs, sizeof(devargs), "pcap0,tx_pcap=%s", path);
	id = port_up(devargs, 0, 1, 9000, mp);
	for (i = 0; i < RTE_DIM(lens); i++)
		pkts[i] = frame(mp, lens[i], i == 2 ? 1000 : ROOM, i);
	cr_assert_eq(pkts[2]->nb_segs, 3);
	cr_assert_eq(pkts[3]->nb_segs, 5);
	cr_assert_eq(qpio_port_tx_burst(id, 0, pkts, RTE_DIM(lens)),
		     RTE_DIM(lens));
	cr_assert_eq(rte_mempool_avail_count(mp), 64);
	cr_assert_eq(qpio_port_stop(id), 0);
	recs = recs_load(path, &n);
	cr_assert_eq(n, 5);
	for (i = 0, k = 0; i < RTE_DIM(lens); i++) {
		if (lens[i] > 9000)
			continue;
		cr_assert_eq(recs[k].caplen, lens[i]);
		cr_assert_eq(recs[k].len, lens[i]);
		cr_assert(qt_check(recs[k].data, lens[i], i), "frame %u", i);
		k++;
	}
	cr_assert_eq(stats(id).opackets, 5);
	cr_assert_eq(stats(id).obytes, 60 + 1514 + 3000 + 9000 + 64);
	cr_assert_eq(stats(id).oerrors, 1);
	cr_assert_eq(xstat(id, "tx_oversize"), 1);
	/* Started again, the port appends to the same file. */
	cr_assert_eq(qpio_port_start(id), 0);
	pkts[0] = frame(mp, 100, ROOM, 77);
	cr_assert_eq(qpio_port_tx_burst(id, 0, pkts, 1), 1);
	cr_assert_eq(qpio_port_close(id), 0);
	recs_free(recs, n);
	recs = recs_load(path, &n);
	cr_assert_eq(n, 6);
	cr_assert_eq(recs[5].caplen, 100);
	cr_assert(qt_check(recs[5].data, 100, 77));
	recs_free(recs, n);
	unlink(path);
	*strrchr(path, '/') = '\0';
	rmdir(path);
}

/* Without tx_pcap, tx frees the frames and counts them as sent (as the
 * DPDK pcap driver's drop mode); without rx_pcap, rx returns 0 and the
 * port reports rx_eof 1. */
Test(pcap_port, ports_without_a_file_sink_or_return_nothing)
{
	struct rte_mempool *mp = pool(64);
	struct rte_mbuf *pkts[3];
	char devargs[300], path[256];
	uint16_t rx, tx;

	need_data();
	rx = port_up("pcap0,rx_pcap=" HOSTILE "empty.pcap", 1, 1, 0, mp);
	pkts[0] = frame(mp, 60, ROOM, 1);
	pkts[1] = frame(mp, 1518, ROOM, 2);
	pkts[2] = frame(mp, 1519, ROOM, 3);
	cr_assert_eq(qpio_port_tx_burst(rx, 0, pkts, 3), 3);
	cr_assert_eq(rte_mempool_avail_count(mp), 64);
	cr_assert_eq(stats(rx).opackets, 2);
	cr_assert_eq(stats(rx).obytes, 60 + 1518);
	cr_assert_eq(stats(rx).oerrors, 1);
	cr_assert_eq(xstat(rx, "tx_oversize"), 1);

	snprintf(path, sizeof(path), "%s/out.pcap", tmp_dir());
	snprintf(devargs, sizeof(devargs), "pcap1,tx_pcap=%s", path);
	tx = port_up(devargs, 1, 1, 0, mp);
	cr_assert_eq(qpio_port_rx_burst(tx, 0, pkts, 3), 0);
	cr_assert_eq(xstat(tx, "rx_eof"), 1);
	cr_assert_eq(stats(tx).ipackets, 0);
	cr_assert_eq(qpio_port_close(rx), 0);
	cr_assert_eq(qpio_port_close(tx), 0);
	unlink(path);
	*strrchr(path, '/') = '\0';
	rmdir(path);
}

/* ---- devargs ---- */

Test(pcap_port, missing_rx_file_is_enoent)
{
	cr_assert_eq(qpio_port_create("pcap0,rx_pcap=/nonexistent/x.pcap"),
		     -ENOENT);
	cr_assert_eq(qpio_port_count(), 0);
}

Test(pcap_port, directory_as_rx_file_is_eisdir)
{
	cr_assert_eq(qpio_port_create("pcap0,rx_pcap=/tmp"), -EISDIR);
}

Test(pcap_port, devargs_errors_are_einval)
{
	need_data();
	cr_assert_eq(qpio_port_create("pcap0,rx_pcap=" HOSTILE "empty.pcap,"
				      "speed=10"), -EINVAL);
	cr_assert_eq(qpio_port_create("pcap0,rx_pcap=" HOSTILE "empty.pcap,"
				      "infinite_rx=2"), -EINVAL);
	cr_assert_eq(qpio_port_create("pcap0,rx_pcap=" HOSTILE "empty.pcap,"
				      "infinite_rx=yes"), -EINVAL);
	cr_assert_eq(qpio_port_create("pcap0"), -EINVAL);
	cr_assert_eq(qpio_port_create("pcap0,infinite_rx=1"), -EINVAL);
	cr_assert_eq(qpio_port_create("pcap0,tx_pcap=/tmp/a.pcap,"
				      "infinite_rx=1"), -EINVAL);
	cr_assert_eq(qpio_port_create("pcap0,rx_pcap=" HOSTILE "empty.pcap,"
				      "rx_pcap=" HOSTILE "empty.pcap"), -EINVAL);
	cr_assert_eq(qpio_port_create("pcap0,rx_pcap=" HOSTILE "empty.pcap,"
				      "mac=02:00:00:00:00"), -EINVAL);
	cr_assert_eq(qpio_port_create("pcap0,rx_pcap=" HOSTILE "empty.pcap,"
				      "mac=01:00:5e:00:00:01"), -EINVAL);
	cr_assert_eq(qpio_port_create("pcap0,rx_pcap=" HOSTILE "empty.pcap,"
				      "tx_pcap=" HOSTILE "empty.pcap"), -EINVAL);
	cr_assert_eq(qpio_port_count(), 0);
}

/* Another port's files are protected too: a tx file may not be any pcap
 * port's rx or tx file, and an rx file may not be another port's tx file. */
Test(pcap_port, tx_file_of_one_port_may_not_be_a_file_of_another)
{
	int a;

	need_data();
	a = qpio_port_create("pcap0,rx_pcap=" HOSTILE "empty.pcap,"
			     "tx_pcap=/tmp/qpio-clash-out.pcap");
	cr_assert_eq(a, 0);
	cr_assert_eq(qpio_port_create("pcap1,tx_pcap=" HOSTILE "empty.pcap"),
		     -EINVAL);
	cr_assert_eq(qpio_port_create("pcap1,tx_pcap=/tmp/qpio-clash-out.pcap"),
		     -EINVAL);
	cr_assert_eq(qpio_port_create("pcap1,rx_pcap=/tmp/qpio-clash-out.pcap"),
		     -EINVAL);
	cr_assert_eq(qpio_port_create("pcap1,rx_pcap=" HOSTILE "empty.pcap"), 1);
	cr_assert_eq(qpio_port_count(), 2);
	cr_assert_eq(qpio_port_close(1), 0);
	cr_assert_eq(qpio_port_close(a), 0);
	unlink("/tmp/qpio-clash-out.pcap");
}

Test(pcap_port, mac_devarg_sets_the_address)
{
	struct rte_ether_addr want = {{ 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 }};
	struct rte_ether_addr mac;
	int id;

	need_data();
	id = qpio_port_create("pcap0,rx_pcap=" HOSTILE "empty.pcap,"
			      "mac=02:11:22:33:44:55");
	cr_assert_geq(id, 0);
	cr_assert_eq(qpio_port_macaddr_get(id, &mac), 0);
	cr_assert(rte_is_same_ether_addr(&mac, &want));
	cr_assert_eq(qpio_port_close(id), 0);
}

/* The tx file is created at tx queue setup: an unwritable path fails
 * there with the errno of the open. */
Test(pcap_port, tx_file_in_a_missing_directory_fails_at_setup)
{
	int id;

	id = qpio_port_create("pcap0,tx_pcap=/nonexistent/dir/out.pcap");
	cr_assert_geq(id, 0);
	cr_assert_eq(qpio_port_configure(id, 0, 1, NULL), 0);
	cr_assert_eq(qpio_port_tx_queue_setup(id, 0, 64, SOCKET_ID_ANY),
		     -ENOENT);
	cr_assert_eq(qpio_port_start(id), -EINVAL);
	cr_assert_eq(qpio_port_close(id), 0);
}
