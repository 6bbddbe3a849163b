/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * qpio-pcapcmp: compare two pcap captures record by record.
 *
 * Usage: qpio-pcapcmp [--ignore-len] A.pcap B.pcap
 *        qpio-pcapcmp --help
 *
 * --ignore-len: do not compare the original length (len). Frames that
 * crossed a link carry only their captured bytes, so a record snapped at
 * capture time (caplen < len) comes back with len == caplen; such records
 * are counted on a "note:" line after "identical: N packets".
 *
 * Records are compared in order on their captured length (caplen), their
 * original length (len) and their captured bytes; timestamps are not
 * compared. The link types of the two files must match too.
 *
 * Output and exit status:
 *  - 0: "identical: N packets" on stdout.
 *  - 1: the first difference on stdout, one line, for example:
 *       differ: record 3: bytes differ at offset 20 (0x45 vs 0x46)
 *       differ: record 3: caplen 60 vs 64, the first 60 bytes are equal
 *       differ: record 3: caplen 60 vs 64, bytes differ at offset 12 (0x08 vs 0x86)
 *       differ: record 3: len 1514 vs 60
 *       differ: record 246: only in B.pcap (A.pcap has 245 records)
 *    Bytes are compared before len, so a len line means equal bytes.
 *    Record numbers count from 1, byte offsets from 0 (the first byte of
 *    the frame).
 *  - 2: wrong arguments (an unknown option, --ignore-len given twice or
 *    with a value, not two file names, an empty one), or a file libpcap
 *    cannot open or read (the message names the file and gives
 *    libpcap's reason).
 *  --help prints the usage on stdout and exits 0.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <pcap/pcap.h>

#define EXIT_SAME 0
#define EXIT_DIFFER 1
#define EXIT_TROUBLE 2

struct cap {
	const char *path;
	pcap_t *p;
	uint64_t nrec;          /* records read so far */
};

static int
cap_open(struct cap *c, const char *path)
{
	char err[PCAP_ERRBUF_SIZE] = "";

	c->path = path;
	c->nrec = 0;
	c->p = pcap_open_offline(path, err);
	if (c->p == NULL) {
		fprintf(stderr, "qpio-pcapcmp: %s: %s\n", path, err);
		return -1;
	}
	return 0;
}

/* 1: a record, 0: end of file, -1: read error (reported). */
static int
cap_next(struct cap *c, struct pcap_pkthdr **h, const u_char **d)
{
	int r = pcap_next_ex(c->p, h, d);

	if (r == 1) {
		c->nrec++;
		return 1;
	}
	if (r == PCAP_ERROR_BREAK)
		return 0;
	fprintf(stderr, "qpio-pcapcmp: %s: record %llu: %s\n", c->path,
		(unsigned long long)c->nrec + 1, pcap_geterr(c->p));
	return -1;
}

/* Offset of the first byte that differs in a[0..n) and b[0..n), or n. */
static uint32_t
first_diff(const u_char *a, const u_char *b, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n && a[i] == b[i]; i++)
		;
	return i;
}

static int
compare(struct cap *a, struct cap *b, int ignore_len)
{
	struct pcap_pkthdr *ha, *hb;
	const u_char *da, *db;
	uint64_t rec, nlen = 0;

	if (pcap_datalink(a->p) != pcap_datalink(b->p)) {
		printf("differ: link type %d vs %d\n", pcap_datalink(a->p),
		       pcap_datalink(b->p));
		return EXIT_DIFFER;
	}
	for (rec = 1;; rec++) {
		int ra = cap_next(a, &ha, &da);
		int rb;
		uint32_t i;

		if (ra < 0)
			return EXIT_TROUBLE;
		rb = cap_next(b, &hb, &db);
		if (rb < 0)
			return EXIT_TROUBLE;
		if (ra == 0 && rb == 0) {
			printf("identical: %llu packets\n",
			       (unsigned long long)(rec - 1));
			if (nlen > 0)
				printf("note: %llu records differ only in "
				       "original length (not compared)\n",
				       (unsigned long long)nlen);
			return EXIT_SAME;
		}
		if (ra == 0 || rb == 0) {
			const struct cap *has = ra ? a : b;
			const struct cap *lacks = ra ? b : a;

			printf("differ: record %llu: only in %s (%s has %llu "
			       "records)\n", (unsigned long long)rec, has->path,
			       lacks->path, (unsigned long long)(rec - 1));
			return EXIT_DIFFER;
		}
		if (ha->caplen != hb->caplen) {
			uint32_t n = ha->caplen < hb->caplen ? ha->caplen :
							       hb->caplen;

			i = first_diff(da, db, n);
			printf("differ: record %llu: caplen %u vs %u, ",
			       (unsigned long long)rec, ha->caplen, hb->caplen);
			if (i < n)
				printf("bytes differ at offset %u (0x%02x vs "
				       "0x%02x)\n", i, da[i], db[i]);
			else
				printf("the first %u bytes are equal\n", n);
			return EXIT_DIFFER;
		}
		i = first_diff(da, db, ha->caplen);
		if (i < ha->caplen) {
			printf("differ: record %llu: bytes differ at offset %u "
			       "(0x%02x vs 0x%02x)\n", (unsigned long long)rec,
			       i, da[i], db[i]);
			return EXIT_DIFFER;
		}
		if (ha->len != hb->len && ignore_len) {
			nlen++;
		} else if (ha->len != hb->len) {
			printf("differ: record %llu: len %u vs %u\n",
			       (unsigned long long)rec, ha->len, hb->len);
			return EXIT_DIFFER;
		}
	}
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: qpio-pcapcmp [--ignore-len] A.pcap B.pcap\n"
		"Compare two captures record by record (caplen, len unless "
		"--ignore-len, bytes; not timestamps).\n"
		"  --ignore-len  do not compare the original length\n"
		"  -h, --help    this text\n"
		"Exit 0 identical, 1 different (first difference printed), 2 "
		"wrong arguments or an unreadable file.\n");
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "ignore-len", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cap a, b;
	int ret, ignore_len = 0, c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'L':
			if (ignore_len) {
				fprintf(stderr, "qpio-pcapcmp: --ignore-len given "
					"twice: give it once\n");
				return EXIT_TROUBLE;
			}
			ignore_len = 1;
			break;
		case 'h':
			usage(stdout);
			return EXIT_SAME;
		default:
			fprintf(stderr, "qpio-pcapcmp: %s: unknown option, or a "
				"value where none is allowed (options: "
				"--ignore-len, --help)\n", argv[optind - 1]);
			return EXIT_TROUBLE;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "qpio-pcapcmp: give two captures, A.pcap and "
			"B.pcap (%d given; see --help)\n", argc - optind);
		return EXIT_TROUBLE;
	}
	if (argv[optind][0] == '\0' || argv[optind + 1][0] == '\0') {
		fprintf(stderr, "qpio-pcapcmp: an empty file name: give two "
			"captures, A.pcap and B.pcap\n");
		return EXIT_TROUBLE;
	}
	if (cap_open(&a, argv[optind]) < 0)
		return EXIT_TROUBLE;
	if (cap_open(&b, argv[optind + 1]) < 0) {
		pcap_close(a.p);
		return EXIT_TROUBLE;
	}
	ret = compare(&a, &b, ignore_len);
	pcap_close(a.p);
	pcap_close(b.p);
	return ret;
}
