/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-testpmd command line: the options after EAL's "--".
 */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "qpio_devargs.h"
#include "testpmd_app.h"

#define DEF_DESC 1024
#define DEF_MBCACHE 250

enum {
	OPT_DEV = 256, OPT_RDMA_DEV, OPT_FWD_MODE, OPT_NB_CORES, OPT_RXQ,
	OPT_TXQ, OPT_RXD, OPT_TXD, OPT_BURST, OPT_TXPKTS, OPT_TOPOLOGY,
	OPT_TX_FIRST, OPT_TOTAL_MBUFS, OPT_MBCACHE, OPT_MBUF_SIZE,
	OPT_MAX_PKT_LEN, OPT_STATS_PERIOD, OPT_DURATION, OPT_MAX_PACKETS,
	OPT_ETH_PEER, OPT_TX_IP, OPT_TX_UDP, OPT_FLOWS, OPT_SHOW_XSTATS,
	OPT_STATS_XSTATS, OPT_TX_RETRY, OPT_JSON, OPT_CAPTURE, OPT_CSV,
	OPT_LINK_WAIT, OPT_TX_OFFLOADS, OPT_END,
};

static const struct option long_opts[] = {
	{ "dev", required_argument, NULL, OPT_DEV },
	{ "rdma-dev", required_argument, NULL, OPT_RDMA_DEV },
	{ "forward-mode", required_argument, NULL, OPT_FWD_MODE },
	{ "nb-cores", required_argument, NULL, OPT_NB_CORES },
	{ "rxq", required_argument, NULL, OPT_RXQ },
	{ "txq", required_argument, NULL, OPT_TXQ },
	{ "rxd", required_argument, NULL, OPT_RXD },
	{ "txd", required_argument, NULL, OPT_TXD },
	{ "burst", required_argument, NULL, OPT_BURST },
	{ "txpkts", required_argument, NULL, OPT_TXPKTS },
	{ "port-topology", required_argument, NULL, OPT_TOPOLOGY },
	{ "tx-first", no_argument, NULL, OPT_TX_FIRST },
	{ "total-num-mbufs", required_argument, NULL, OPT_TOTAL_MBUFS },
	{ "mbcache", required_argument, NULL, OPT_MBCACHE },
	{ "mbuf-size", required_argument, NULL, OPT_MBUF_SIZE },
	{ "max-pkt-len", required_argument, NULL, OPT_MAX_PKT_LEN },
	{ "tx-offloads", required_argument, NULL, OPT_TX_OFFLOADS },
	{ "stats-period", required_argument, NULL, OPT_STATS_PERIOD },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "max-packets", required_argument, NULL, OPT_MAX_PACKETS },
	{ "link-wait", required_argument, NULL, OPT_LINK_WAIT },
	{ "eth-peer", required_argument, NULL, OPT_ETH_PEER },
	{ "tx-ip", required_argument, NULL, OPT_TX_IP },
	{ "tx-udp", required_argument, NULL, OPT_TX_UDP },
	{ "flowgen-flows", required_argument, NULL, OPT_FLOWS },
	{ "show-xstats", no_argument, NULL, OPT_SHOW_XSTATS },
	{ "stats-xstats", no_argument, NULL, OPT_STATS_XSTATS },
	{ "tx-retry", required_argument, NULL, OPT_TX_RETRY },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "capture", required_argument, NULL, OPT_CAPTURE },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "interactive", no_argument, NULL, 'i' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void
testpmd_usage(FILE *f, const char *prog)
{
	fprintf(f, "Usage: %s [EAL args] -- --dev DEVARGS [--dev ...] [options]\n"
	       "\n"
	       "Ports and devices:\n"
	       "  --dev DEVARGS            create a port (repeatable; ids follow\n"
	       "                           the ethdevs of EAL --vdev/-a, eth<N>),\n"
	       "                           e.g. ring0,peer=ring1 or pcap0,rx_pcap=F\n"
	       "  --rdma-dev DEVARGS       create an rdma device first (repeatable)\n"
	       "Forwarding:\n"
	       "  --forward-mode=M[,M...]  %s;\n"
	       "                           stream i gets mode i, the last repeats [io]\n"
	       "  --nb-cores=N             forwarding lcores [all worker lcores]\n"
	       "  --rxq=N --txq=N          queues per port, txq >= rxq [1]\n"
	       "  --rxd=N --txd=N          descriptors per queue [%u]\n"
	       "  --burst=N                frames per burst, 1..%u [%u]\n"
	       "  --tx-retry=N             offer frames a tx burst did not take\n"
	       "                           again, up to N more bursts [0: drop]\n"
	       "  --txpkts=S[,S...]        txonly/flowgen segment sizes [64]\n"
	       "  --port-topology=T        paired, chained or loop [paired]\n"
	       "  --tx-first               send a burst on every stream first\n"
	       "  --eth-peer=PORT,MAC      destination MAC for frames sent on PORT\n"
	       "  --tx-ip=SRC,DST          IPv4 addresses of generated frames\n"
	       "  --tx-udp=SRC[,DST]       UDP ports of generated frames [9,9]\n"
	       "  --flowgen-flows=N        flows of flowgen [16]\n"
	       "Memory:\n"
	       "  --total-num-mbufs=N      mbufs per pool [computed]\n"
	       "  --mbcache=N              mempool cache per lcore, 0..%u [%u]\n"
	       "  --mbuf-size=N            mbuf data room incl. headroom [%u]\n"
	       "  --max-pkt-len=N          largest frame of the ports [port default]\n"
	       "  --tx-offloads=0xMASK     tx offloads of every port (QPIO_PORT_TX_\n"
	       "                           OFFLOAD_* bits) [mbuf fast free where\n"
	       "                           the port has it, with one mbuf pool]\n"
	       "Run and statistics:\n"
	       "  -i, --interactive        command prompt (type help); forwarding\n"
	       "                           starts with 'start'\n"
	       "  --stats-period=SECONDS   print port statistics periodically\n"
	       "  --stats-xstats           add nonzero extended statistics to them\n"
	       "  --show-xstats            print nonzero extended statistics at exit\n"
	       "  --json=FILE              write the statistics as JSON records,\n"
	       "                           schema " TESTPMD_JSON_SCHEMA "\n"
	       "  --csv=FILE               periodic statistics as CSV, a row per\n"
	       "                           port and period\n"
	       "  --capture=PORT[/rx|/tx]=FILE.pcapng[,snaplen=N,max-mb=N]\n"
	       "                           write what PORT receives and/or sends\n"
	       "                           to pcapng (repeatable); max-mb rotates\n"
	       "  --duration=SECONDS       stop after this forwarding time\n"
	       "  --max-packets=N          stop when all ports received N frames\n"
	       "  --link-wait=SECONDS      before forwarding, wait until every\n"
	       "                           port's link is up (fail if not)\n"
	       "  -h, --help               this text\n"
	       "\n"
	       "EAL args (before --), the usual ones: -l 0-1 (lcores: main +\n"
	       "workers), --no-huge -m MB (no hugepages needed), --no-pci,\n"
	       "--file-prefix=NAME (one per process), --no-telemetry; the full\n"
	       "list: %s --help-eal.\n",
	       prog, fwd_engine_names(), DEF_DESC, TESTPMD_MAX_BURST,
	       TESTPMD_DEF_BURST, RTE_MEMPOOL_CACHE_MAX_SIZE, DEF_MBCACHE,
	       RTE_MBUF_DEFAULT_BUF_SIZE, prog);
}

#define BAD(...) do { \
	fprintf(stderr, "qpio-testpmd: " __VA_ARGS__); \
	fputc('\n', stderr); \
	return -EINVAL; \
} while (0)

/* Decimal integer in [min, max], lib/devargs' rule (decimal digits
 * only: no sign, no space, no 0x). */
static int
parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max,
	  uint64_t *out)
{
	uint32_t v32 = 0;
	uint64_t v = 0;
	int ret;

	if (max <= UINT32_MAX) {
		ret = qpio_devargs_parse_u32(s, (uint32_t)min, (uint32_t)max,
					     &v32);
		v = v32;
	} else {
		ret = qpio_devargs_parse_u64(s, min, max, &v);
	}
	if (ret < 0)
		BAD("--%s=%s: must be a decimal integer in [%" PRIu64 ", %"
		    PRIu64 "]", opt, s, min, max);
	*out = v;
	return 0;
}

/* A bit mask written in hexadecimal, "0x" first (as dpdk-testpmd's
 * --tx-offloads). */
static int
parse_hex_u64(const char *opt, const char *s, uint64_t *out)
{
	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || s[2] == '\0')
		BAD("--%s=%s: must be a hexadecimal mask, 0x first "
		    "(e.g. 0x10000)", opt, s);
	if (qpio_devargs_parse_hex(s, 0, UINT64_MAX, out) < 0)
		BAD("--%s=%s: must be a hexadecimal mask of at most 64 bits "
		    "(e.g. 0x10000)", opt, s);
	return 0;
}

#define PARSE_INTO(opt, min, max, dst) do { \
	uint64_t v_; \
	if (parse_u64(opt, optarg, min, max, &v_) < 0) \
		return -EINVAL; \
	(dst) = v_; \
} while (0)

/* 1 when a comma-separated list has an empty item ("a,,b", ",a", "a,"),
 * which strtok_r would skip silently. */
static int
list_has_empty(const char *arg)
{
	size_t n = strlen(arg);

	return n == 0 || arg[0] == ',' || arg[n - 1] == ',' ||
	       strstr(arg, ",,") != NULL;
}

int
testpmd_parse_modes(const char *arg, struct testpmd_opts *o)
{
	char buf[512], *tok, *save = NULL;

	if (list_has_empty(arg))
		BAD("--forward-mode=%s: empty item in the list", arg);

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		BAD("--forward-mode: list longer than %zu characters",
		    sizeof(buf) - 1);
	o->nb_modes = 0;
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		const struct fwd_engine *e = fwd_engine_find(tok);

		if (e == NULL)
			BAD("--forward-mode: unknown mode '%s' (modes: %s)", tok,
			    fwd_engine_names());
		if (o->nb_modes == TESTPMD_MAX_MODES)
			BAD("--forward-mode: at most %u modes",
			    TESTPMD_MAX_MODES);
		o->modes[o->nb_modes++] = e;
	}
	if (o->nb_modes == 0)
		BAD("--forward-mode: give at least one mode (%s)",
		    fwd_engine_names());
	return 0;
}

static int
parse_txpkts(const char *arg, uint32_t mbuf_size)
{
	char buf[256], *tok, *save = NULL;
	uint16_t nb = 0, len[TESTPMD_MAX_TX_SEGS];
	uint32_t total = 0, room = mbuf_size - RTE_PKTMBUF_HEADROOM;
	uint64_t v;

	if (list_has_empty(arg))
		BAD("--txpkts=%s: empty item in the list", arg);
	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		if (nb == TESTPMD_MAX_TX_SEGS)
			BAD("--txpkts=%s: at most %u segments", arg,
			    TESTPMD_MAX_TX_SEGS);
		if (parse_u64("txpkts", tok, 1, room, &v) < 0)
			BAD("--txpkts=%s: a segment holds 1..%u bytes "
			    "(--mbuf-size minus %u of headroom)", arg, room,
			    RTE_PKTMBUF_HEADROOM);
		len[nb++] = (uint16_t)v;
		total += (uint32_t)v;
	}
	if (nb == 0)
		BAD("--txpkts: give at least one segment size");
	if (len[0] < TESTPMD_TX_HDR_LEN)
		BAD("--txpkts=%s: the first segment must hold the %u-byte "
		    "Ethernet/IPv4/UDP header", arg, TESTPMD_TX_HDR_LEN);
	if (total > UINT16_MAX)
		BAD("--txpkts=%s: a frame is at most %u bytes", arg, UINT16_MAX);
	fwd_cfg.tx_nb_segs = nb;
	memcpy(fwd_cfg.tx_seg_len, len, nb * sizeof(len[0]));
	fwd_cfg.tx_pkt_len = total;
	return 0;
}

static int
parse_eth_peer(const char *arg, struct testpmd_opts *o)
{
	const char *comma = strchr(arg, ',');
	char num[16];
	uint32_t port;

	if (comma == NULL || comma == arg ||
	    (size_t)(comma - arg) >= sizeof(num))
		BAD("--eth-peer=%s: want PORT,MAC", arg);
	memcpy(num, arg, comma - arg);
	num[comma - arg] = '\0';
	if (qpio_devargs_parse_u32(num, 0, QPIO_MAX_PORTS - 1, &port) < 0)
		BAD("--eth-peer=%s: port '%s' must be a decimal integer in "
		    "[0, %u]", arg, num, QPIO_MAX_PORTS - 1);
	if (o->peer_set[port])
		BAD("--eth-peer=%s: port %u given twice: give each port's "
		    "peer once", arg, port);
	if (rte_ether_unformat_addr(comma + 1, &o->peer_mac[port]) != 0)
		BAD("--eth-peer=%s: '%s' is not a MAC address "
		    "(XX:XX:XX:XX:XX:XX)", arg, comma + 1);
	o->peer_set[port] = 1;
	return 0;
}

static int
parse_tx_ip(const char *arg)
{
	char buf[64], *dst;
	struct in_addr s, d;

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		BAD("--tx-ip=%s: want SRC,DST IPv4 addresses (a.b.c.d)", arg);
	dst = strchr(buf, ',');
	if (dst == NULL)
		BAD("--tx-ip=%s: want SRC,DST IPv4 addresses", arg);
	*dst++ = '\0';
	if (inet_pton(AF_INET, buf, &s) != 1 || inet_pton(AF_INET, dst, &d) != 1)
		BAD("--tx-ip=%s: want SRC,DST IPv4 addresses (a.b.c.d)", arg);
	fwd_cfg.tx_ip_src = ntohl(s.s_addr);
	fwd_cfg.tx_ip_dst = ntohl(d.s_addr);
	return 0;
}

static int
parse_tx_udp(const char *arg)
{
	char buf[32], *dst;
	uint64_t sp, dp;

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		BAD("--tx-udp=%s: want SRC[,DST], UDP ports in [0, %u]", arg,
		    UINT16_MAX);
	dst = strchr(buf, ',');
	if (dst != NULL)
		*dst++ = '\0';
	if (parse_u64("tx-udp", buf, 0, UINT16_MAX, &sp) < 0)
		return -EINVAL;
	dp = sp;
	if (dst != NULL && parse_u64("tx-udp", dst, 0, UINT16_MAX, &dp) < 0)
		return -EINVAL;
	fwd_cfg.tx_udp_src = (uint16_t)sp;
	fwd_cfg.tx_udp_dst = (uint16_t)dp;
	return 0;
}

static int
parse_duration(const char *arg, double *out)
{
	double v;

	if (qpio_devargs_parse_decimal(arg, 0, 1e7, &v) < 0 || v == 0)
		BAD("--duration=%s: must be a number of seconds above 0 and "
		    "at most 10000000, decimal digits with at most one point "
		    "(0.5)", arg);
	*out = v;
	return 0;
}

static void
opts_defaults(struct testpmd_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->nb_rxq = 1;
	o->nb_txq = 1;
	o->nb_rxd = DEF_DESC;
	o->nb_txd = DEF_DESC;
	o->topology = TOPO_PAIRED;
	o->mbcache = DEF_MBCACHE;
	o->mbuf_size = RTE_MBUF_DEFAULT_BUF_SIZE;
	o->modes[0] = &fwd_io_engine;
	o->nb_modes = 1;
	fwd_config_init();
}


/* Every file the run writes (--capture, --json, --csv) is its own: two
 * outputs in one file would overwrite each other, and an output in a
 * port's file would overwrite what the port reads or writes. */
static int
check_outputs(const struct testpmd_opts *o)
{
	struct {
		const char *opt, *arg, *path;
	} out[TESTPMD_MAX_CAPTURES + 2];
	unsigned int n = 0, i, j;

	for (i = 0; i < o->nb_captures; i++) {
		out[n].opt = "--capture";
		out[n].arg = o->captures[i].spec;
		out[n++].path = o->captures[i].path;
	}
	if (o->json_path != NULL) {
		out[n].opt = "--json";
		out[n].arg = out[n].path = o->json_path;
		n++;
	}
	if (o->csv_path != NULL) {
		out[n].opt = "--csv";
		out[n].arg = out[n].path = o->csv_path;
		n++;
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			if (qpio_devargs_same_file(out[j].path, out[i].path))
				BAD("%s %s and %s %s: one file for two outputs, "
				    "which would overwrite each other; give each "
				    "its own", out[j].opt, out[j].arg,
				    out[i].opt, out[i].arg);
	for (i = 0; i < o->nb_devs; i++)
		for (j = 0; j < n; j++)
			if (qpio_devargs_names_file(o->devs[i], out[j].path))
				BAD("%s %s and --dev %s: the port reads or writes "
				    "that file, which the output would overwrite; "
				    "give the output its own", out[j].opt,
				    out[j].arg, o->devs[i]);
	return 0;
}

/* Rules between options, checked once all are read. */
static int
check_opts(struct testpmd_opts *o, const char *txpkts)
{
	uint32_t max_len;
	unsigned int c;

	for (c = 0; c < o->nb_captures; c++) {
		const struct testpmd_capture *a = &o->captures[c];
		unsigned int d;

		for (d = 0; d < c; d++)
			if (o->captures[d].port == a->port &&
			    (o->captures[d].dirs & a->dirs))
				BAD("--capture: port %u %s is captured twice",
				    a->port, (o->captures[d].dirs & a->dirs) ==
				    QPIO_PORT_CAPTURE_RX ? "rx" : "tx");
	}
	if (check_outputs(o) < 0)
		return -EINVAL;
	if (o->nb_txq < o->nb_rxq)
		BAD("--txq=%u: must be >= --rxq=%u (stream i transmits on tx "
		    "queue i)", o->nb_txq, o->nb_rxq);
	if (txpkts != NULL && parse_txpkts(txpkts, o->mbuf_size) < 0)
		return -EINVAL;
	max_len = o->max_pkt_len != 0 ? o->max_pkt_len :
		  QPIO_PORT_DEFAULT_MAX_PKT_LEN;
	if (fwd_cfg.tx_pkt_len > max_len)
		BAD("--txpkts: frames of %u bytes exceed --max-pkt-len %u",
		    fwd_cfg.tx_pkt_len, max_len);
	if (o->total_mbufs != 0 && o->mbcache * 3 / 2 > o->total_mbufs)
		BAD("--mbcache=%u: must be at most 2/3 of --total-num-mbufs=%u",
		    o->mbcache, o->total_mbufs);
	return 0;
}

int
testpmd_check_ports(struct testpmd_opts *o, unsigned int nb_workers)
{
	unsigned int c;

	if (testpmd_ethdev_ports_add(o) < 0)
		return -EINVAL;
	if (o->nb_devs == 0)
		BAD("no port: give at least one --dev DEVARGS, or an ethdev "
		    "with EAL --vdev or -a (see --help)");
	if (nb_workers == 0)
		BAD("no worker lcore: give EAL at least two lcores (-l 0-1)");
	if (o->nb_cores > nb_workers)
		BAD("--nb-cores=%u: only %u worker lcores (EAL -l)",
		    o->nb_cores, nb_workers);
	for (c = o->nb_devs; c < QPIO_MAX_PORTS; c++)
		if (o->peer_set[c])
			BAD("--eth-peer=%u,...: port %u does not exist (%u "
			    "--dev given)", c, c, o->nb_devs);
	for (c = 0; c < o->nb_captures; c++) {
		const struct testpmd_capture *a = &o->captures[c];

		if (a->port >= o->nb_devs)
			BAD("--capture %u...: port %u does not exist (%u --dev "
			    "given)", a->port, a->port, o->nb_devs);
	}
	return 0;
}

/* Long name of the option whose getopt value is c. */
static const char *
opt_name(int c)
{
	const struct option *l;

	for (l = long_opts; l->name != NULL; l++)
		if (l->val == c)
			return l->name;
	return "?";
}

/* Options that may be given several times: each adds one more. */
static int
opt_repeats(int c)
{
	return c == OPT_DEV || c == OPT_RDMA_DEV || c == OPT_CAPTURE ||
	       c == OPT_ETH_PEER;
}

/* Take option c (getopt_long's return, optarg its value) into o; the
 * --txpkts text into *txpkts, which check_opts() reads against
 * --mbuf-size. @return 0, 1 for --help (usage printed), or -EINVAL
 * (printed). */
static int
take_opt(int c, char **argv, struct testpmd_opts *o, const char **txpkts)
{
	switch (c) {
	case OPT_DEV:
		if (optarg[0] == '\0')
			BAD("--dev: give DEVARGS, a port name first "
			    "(ring0,peer=ring1)");
		if (o->nb_devs == QPIO_MAX_PORTS)
			BAD("--dev: at most %u ports", QPIO_MAX_PORTS);
		o->devs[o->nb_devs++] = optarg;
		break;
	case OPT_RDMA_DEV:
		if (optarg[0] == '\0')
			BAD("--rdma-dev: give DEVARGS, a device name first "
			    "(soft0)");
		if (o->nb_rdma_devs == QPIO_MAX_DEVICES)
			BAD("--rdma-dev: at most %u devices",
			    QPIO_MAX_DEVICES);
		o->rdma_devs[o->nb_rdma_devs++] = optarg;
		break;
	case OPT_FWD_MODE:
		if (testpmd_parse_modes(optarg, o) < 0)
			return -EINVAL;
		break;
	case OPT_NB_CORES:
		PARSE_INTO("nb-cores", 1, RTE_MAX_LCORE, o->nb_cores);
		break;
	case OPT_RXQ:
		PARSE_INTO("rxq", 1, QPIO_PORT_MAX_QUEUES, o->nb_rxq);
		break;
	case OPT_TXQ:
		PARSE_INTO("txq", 1, QPIO_PORT_MAX_QUEUES, o->nb_txq);
		break;
	case OPT_RXD:
		PARSE_INTO("rxd", 1, UINT16_MAX, o->nb_rxd);
		break;
	case OPT_TXD:
		PARSE_INTO("txd", 1, UINT16_MAX, o->nb_txd);
		break;
	case OPT_BURST:
		PARSE_INTO("burst", 1, TESTPMD_MAX_BURST, fwd_cfg.burst);
		break;
	case OPT_TXPKTS:
		*txpkts = optarg;   /* checked against --mbuf-size */
		break;
	case OPT_TOPOLOGY:
		if (strcmp(optarg, "paired") == 0)
			o->topology = TOPO_PAIRED;
		else if (strcmp(optarg, "chained") == 0)
			o->topology = TOPO_CHAINED;
		else if (strcmp(optarg, "loop") == 0)
			o->topology = TOPO_LOOP;
		else
			BAD("--port-topology=%s: must be paired, "
			    "chained or loop", optarg);
		break;
	case OPT_TX_FIRST:
		o->tx_first = 1;
		break;
	case OPT_TOTAL_MBUFS:
		PARSE_INTO("total-num-mbufs", 64, UINT32_MAX / 2,
			   o->total_mbufs);
		break;
	case OPT_MBCACHE:
		PARSE_INTO("mbcache", 0, RTE_MEMPOOL_CACHE_MAX_SIZE,
			   o->mbcache);
		break;
	case OPT_MBUF_SIZE:
		PARSE_INTO("mbuf-size", RTE_PKTMBUF_HEADROOM + 64u,
			   UINT16_MAX, o->mbuf_size);
		break;
	case OPT_MAX_PKT_LEN:
		PARSE_INTO("max-pkt-len", RTE_ETHER_MIN_LEN -
			   RTE_ETHER_CRC_LEN, 262144,
			   o->max_pkt_len);
		break;
	case OPT_TX_OFFLOADS:
		if (parse_hex_u64("tx-offloads", optarg,
				  &o->tx_offloads) < 0)
			return -EINVAL;
		o->tx_offloads_set = 1;
		break;
	case OPT_STATS_PERIOD:
		PARSE_INTO("stats-period", 1, 86400, o->stats_period);
		break;
	case OPT_DURATION:
		if (parse_duration(optarg, &o->duration) < 0)
			return -EINVAL;
		break;
	case OPT_MAX_PACKETS:
		PARSE_INTO("max-packets", 1, UINT64_MAX, o->max_packets);
		break;
	case OPT_LINK_WAIT:
		PARSE_INTO("link-wait", 1, 3600, o->link_wait);
		break;
	case OPT_ETH_PEER:
		if (parse_eth_peer(optarg, o) < 0)
			return -EINVAL;
		break;
	case OPT_TX_IP:
		if (parse_tx_ip(optarg) < 0)
			return -EINVAL;
		break;
	case OPT_TX_UDP:
		if (parse_tx_udp(optarg) < 0)
			return -EINVAL;
		break;
	case OPT_FLOWS:
		PARSE_INTO("flowgen-flows", 1, 65536,
			   fwd_cfg.flowgen_flows);
		break;
	case OPT_SHOW_XSTATS:
		o->show_xstats = 1;
		break;
	case OPT_STATS_XSTATS:
		o->stats_xstats = 1;
		break;
	case OPT_TX_RETRY:
		PARSE_INTO("tx-retry", 0, 1000000, fwd_cfg.tx_retry);
		break;
	case OPT_JSON:
		if (optarg[0] == '\0')
			BAD("--json: give a file name");
		o->json_path = optarg;
		break;
	case 'i':
		o->interactive = 1;
		break;
	case OPT_CSV:
		if (optarg[0] == '\0')
			BAD("--csv: give a file name");
		o->csv_path = optarg;
		break;
	case OPT_CAPTURE:
		if (o->nb_captures == TESTPMD_MAX_CAPTURES)
			BAD("--capture: at most %u", TESTPMD_MAX_CAPTURES);
		if (testpmd_capture_parse(optarg,
				&o->captures[o->nb_captures]) < 0)
			return -EINVAL;
		o->nb_captures++;
		break;
	case 'h':
		testpmd_usage(stdout, argv[0]);
		return 1;
	case ':':
		if (optopt > 0 && optopt < OPT_DEV &&
		    strncmp(argv[optind - 1], "--", 2) != 0)
			BAD("-%c: needs a value (see --help)", optopt);
		BAD("%s: needs a value (see --help)", argv[optind - 1]);
	default:
		/* A short option, or a long one with a short value
		 * (--interactive=1): name it as it was written. */
		if (optopt > 0 && optopt < OPT_DEV &&
		    strncmp(argv[optind - 1], "--", 2) != 0)
			BAD("-%c: unknown option (see --help)", optopt);
		BAD("%s: unknown option, or a value where none is "
		    "allowed (see --help)", argv[optind - 1]);
	}
	return 0;
}

int
testpmd_parse_args(int argc, char **argv, struct testpmd_opts *o)
{
	unsigned char seen[OPT_END] = { 0 };
	const char *txpkts = NULL;
	int c, ret;

	opts_defaults(o);
	/* 0, not 1: glibc then forgets where an earlier parse stopped inside
	 * a word ("-hx" stops after 'h'), so each parse starts clean. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hi", long_opts, NULL)) != -1) {
		/* A second value would replace the first without a word. */
		if (c > 0 && c < OPT_END && c != '?' && c != ':' &&
		    !opt_repeats(c)) {
			if (seen[c])
				BAD("--%s given twice: give each option once",
				    opt_name(c));
			seen[c] = 1;
		}
		ret = take_opt(c, argv, o, &txpkts);
		if (ret != 0)
			return ret;
	}
	if (optind < argc)
		BAD("%s: unexpected argument (options start with --)",
		    argv[optind]);
	return check_opts(o, txpkts);
}
