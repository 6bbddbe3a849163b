/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-gateway: an L3 gateway between two sites over an RC link.
 *
 *   qpio-gateway [EAL args] -- --conf FILE --iface-a IF --iface-b IF
 *                [--pmd auto|af_xdp|af_packet] [--queues N]
 *                [--duration SECONDS]
 *
 * Site a and site b are each a router half: an eth port over a DPDK PMD
 * on the site's interface (net_af_xdp, or net_af_packet where AF_XDP
 * cannot be set up; chosen at start and printed) and one end of an RC
 * link of two soft-NIC qp ports (qp0 for a, qp1 for b). Routes come from
 * the configuration file (gw_conf.c). With --queues N each port has N
 * queues (net_af_packet's qpairs: the kernel spreads flows by their
 * hash; the link: one RC QP per queue) and each site N contexts, one per
 * queue; contexts run on the worker lcores, queue by queue (l3fwd's
 * shape: an lcore polls queue q of every port), or on the main lcore
 * without workers. SIGINT/SIGTERM or --duration end the run; counters and the
 * mbuf accounting are printed at exit.
 */

#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_random.h>
#include <rte_telemetry.h>

#include "qpio_devargs.h"
#include "qpio_eal.h"
#include "qpio_eth.h"
#include "qpio_port.h"
#include "app_opts.h"
#include "gw.h"
#include "gw_site.h"

#define NB_MBUFS 16383u
/* Jumbo pools hold NB_MBUFS_JUMBO mbufs (101 MB at MTU 9000), fewer
 * where that passes POOL_JUMBO_BYTES, never below NB_MBUFS_MIN (the two
 * link RQs' 2 x 512, two lcore caches of 256 and what waits in the tx
 * buffers and neighbor queues). At the largest MTU, 61360, that is 3264
 * mbufs of 61664 bytes: 192 MB, which --no-huge -m 512 holds. */
#define NB_MBUFS_JUMBO 8191u
#define NB_MBUFS_MIN 2047u
#define POOL_JUMBO_BYTES (192u << 20)
#define ETH_DESC 4096u
#define LINK_DESC 512u
/* Receive descriptors of each link queue, at least: with N queues each
 * gets LINK_DESC / N (the link holds as many receive buffers whatever N,
 * so the pool need not grow by them). */
#define LINK_DESC_MIN 64u
/* The pool's per-lcore cache: full size for standard mbufs, small for
 * jumbo ones, whose caches would otherwise hold tens of MB. */
#define POOL_CACHE 256u
#define POOL_CACHE_JUMBO 32u
/* net_af_packet's default ring frame (DPDK 22.11) receives frames of up
 * to 2048 - 66 bytes, and default mbufs hold them: larger MTUs are
 * jumbo, with larger ring frames and mbufs (frame_plan(); the geometry
 * is the eth port driver's, qpio_eth.h). */
/* net_af_packet ring frames, each rx and tx ring of a port: DPDK's
 * default of 512 overran by the thousand under one TCP flow (the eth
 * port's missed count); jumbo frames, whose slots also carry the small
 * frames, get half as many (24 MB a ring at MTU 9000). */
#define AFP_FRAMECNT 4096u
#define AFP_FRAMECNT_JUMBO 2048u
/* ... and a jumbo ring stays within 24 MB, down to 512 frames (DPDK's
 * default count): 546 frames of 61440 bytes at MTU 61360. */
#define AFP_RING_JUMBO_BYTES (24u << 20)
#define AFP_FRAMECNT_MIN 512u

static volatile int quit;

struct gw_opts {
	const char *conf;
	const char *iface[GW_NB_SITES];
	const char *pmd;          /* "auto", "af_xdp", "af_packet" */
	unsigned int queues;      /* per port, 1..GW_MAX_QUEUES */
	double duration;          /* 0: until a signal */
};

static struct gw_conf conf;
/* Context q of site s. */
static struct gw_site sites[GW_NB_SITES][GW_MAX_QUEUES];
static struct gw_site *lcore_sites[RTE_MAX_LCORE][GW_NB_SITES * GW_MAX_QUEUES];
static unsigned int lcore_nb_sites[RTE_MAX_LCORE];
static unsigned int site_lcore_of[GW_NB_SITES][GW_MAX_QUEUES];

static void
on_signal(int sig)
{
	RTE_SET_USED(sig);
	quit = 1;
}

static void
usage(FILE *f, const char *prog)
{
	fprintf(f, "Usage: %s [EAL args] -- --conf FILE --iface-a IF --iface-b IF\n"
		"       [--pmd auto|af_xdp|af_packet] [--queues N] "
		"[--duration SECONDS]\n"
		"  --conf FILE      routes and addresses (doc/guides/sample_app_ug/"
		"gateway.rst)\n"
		"  --iface-a IF     interface of site a (a veth end)\n"
		"  --iface-b IF     interface of site b, not site a's\n"
		"  --pmd P          auto: net_af_xdp, else net_af_packet [auto]\n"
		"  --queues N       queues per port, 1..8; N > 1: net_af_packet\n"
		"                   (qpairs=N), flows spread by the kernel [1]\n"
		"  --duration S     stop after S seconds, 0..10000000 (0.5 too)\n"
		"                   [0: until SIGINT/SIGTERM]\n"
		"  -h, --help       this text\n"
		"Each option is given once; numbers are decimal digits.\n",
		prog);
}

static int
parse_args(int argc, char **argv, struct gw_opts *o)
{
	static const struct option longopts[] = {
		{ "conf", required_argument, NULL, 'c' },
		{ "iface-a", required_argument, NULL, 'a' },
		{ "iface-b", required_argument, NULL, 'b' },
		{ "pmd", required_argument, NULL, 'p' },
		{ "queues", required_argument, NULL, 'q' },
		{ "duration", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned char seen[256] = { 0 };
	int c;

	memset(o, 0, sizeof(*o));
	o->pmd = "auto";
	o->queues = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		/* A second value would replace the first without a word. */
		if (c != '?' && c != 'h' &&
		    example_opt_once("gateway", longopts, c, seen) < 0)
			return -1;
		switch (c) {
		case 'c':
			if (example_opt_text("gateway", "--conf", optarg,
					     "a file name") < 0)
				return -1;
			o->conf = optarg;
			break;
		case 'a':
		case 'b':
			if (example_opt_text("gateway", c == 'a' ? "--iface-a" :
					     "--iface-b", optarg,
					     "an interface name") < 0)
				return -1;
			o->iface[c == 'a' ? 0 : 1] = optarg;
			break;
		case 'p': o->pmd = optarg; break;
		case 'q': {
			uint32_t v;

			if (qpio_devargs_parse_u32(optarg, 1, GW_MAX_QUEUES,
						   &v) < 0) {
				fprintf(stderr, "gateway: --queues=%s: want 1..%u "
					"in decimal digits\n", optarg,
					GW_MAX_QUEUES);
				return -1;
			}
			o->queues = v;
			break;
		}
		case 'd':
			if (example_opt_seconds("gateway", "--duration", optarg,
						1e7, &o->duration) < 0)
				return -1;
			break;
		case 'h': usage(stdout, argv[0]); return 1;
		default: usage(stderr, argv[0]); return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "gateway: unexpected argument '%s' (options "
			"start with --; see --help)\n", argv[optind]);
		return -1;
	}
	if (o->conf == NULL || o->iface[0] == NULL || o->iface[1] == NULL) {
		fprintf(stderr, "gateway: --conf, --iface-a and --iface-b are "
			"required (see --help)\n");
		return -1;
	}
	if (strcmp(o->iface[0], o->iface[1]) == 0) {
		fprintf(stderr, "gateway: --iface-a %s and --iface-b %s: one "
			"interface for both sites; give each its own\n",
			o->iface[0], o->iface[1]);
		return -1;
	}
	if (strcmp(o->pmd, "auto") != 0 && strcmp(o->pmd, "af_xdp") != 0 &&
	    strcmp(o->pmd, "af_packet") != 0) {
		fprintf(stderr, "gateway: --pmd=%s: want auto, af_xdp or "
			"af_packet\n", o->pmd);
		return -1;
	}
	if (o->queues > 1 && strcmp(o->pmd, "af_xdp") == 0) {
		fprintf(stderr, "gateway: --pmd af_xdp --queues %u: several "
			"queues are net_af_packet's (qpairs=); use --pmd "
			"af_packet or auto\n", o->queues);
		return -1;
	}
	return 0;
}

/* Frame sizes of a run: the largest interface MTU decides the mbufs
 * and net_af_packet's ring frames. */
struct frame_plan {
	uint32_t mtu[GW_NB_SITES];  /* of each site's interface */
	uint32_t max_mtu;
	uint32_t framesz;           /* net_af_packet framesz=, 0: default */
	uint32_t framecnt;          /* net_af_packet framecnt= */
	uint16_t data_room;         /* of gw_pool's mbufs */
	unsigned int nb_mbufs;
};

/* The MTU of interface name (SIOCGIFMTU), or -errno. */
static int
iface_mtu(const char *name)
{
	struct ifreq ifr;
	int fd, ret;

	if (strlen(name) >= sizeof(ifr.ifr_name))
		return -ENAMETOOLONG;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, name, strlen(name));
	ret = ioctl(fd, SIOCGIFMTU, &ifr) < 0 ? -errno : ifr.ifr_mtu;
	close(fd);
	return ret;
}

/* Read the interfaces' MTUs and size frames for the largest: up to
 * 1500 + 14 + 66 <= 2048 the defaults; above, ring frames of whole
 * pages that hold a frame after the kernel's 66 bytes, and mbufs that
 * hold a ring frame. Returns 0 or -1 (printed). */
static int
frame_plan_make(const struct gw_opts *o, const struct gw_conf *c,
		struct frame_plan *fp)
{
	unsigned int s;
	uint32_t room, elt, page, framesz;
	int mtu;

	memset(fp, 0, sizeof(*fp));
	for (s = 0; s < GW_NB_SITES; s++) {
		mtu = iface_mtu(o->iface[s]);
		if (mtu < 0) {
			fprintf(stderr, "gateway: site %c: interface %s: cannot "
				"read its MTU: %s\n", 'a' + s, o->iface[s],
				strerror(-mtu));
			return -1;
		}
		if (mtu < GW_IPV4_MIN_MTU) {
			fprintf(stderr, "gateway: site %c: interface %s: MTU %d "
				"is below IPv4's 68 (RFC 791): raise it\n",
				'a' + s, o->iface[s], mtu);
			return -1;
		}
		/* Linux too keeps IPv6 off such an interface. */
		if (mtu < GW_IPV6_MIN_MTU &&
		    (c->site[s].nb_addr6 != 0 || c->site[s].nb_route6 != 0)) {
			fprintf(stderr, "gateway: site %c: interface %s: MTU %d "
				"is below IPv6's 1280 (RFC 8200 5) and the "
				"site has IPv6 addresses or routes: raise the "
				"MTU to 1280 or more, or take site %c's IPv6 "
				"lines out of the route file\n", 'a' + s,
				o->iface[s], mtu, 'a' + s);
			return -1;
		}
		fp->mtu[s] = (uint32_t)mtu;
		fp->max_mtu = RTE_MAX(fp->max_mtu, (uint32_t)mtu);
	}
	fp->nb_mbufs = NB_MBUFS;
	fp->framecnt = AFP_FRAMECNT;
	fp->data_room = RTE_MBUF_DEFAULT_BUF_SIZE;
	page = (uint32_t)sysconf(_SC_PAGESIZE);
	framesz = qpio_eth_afp_framesz(fp->max_mtu + RTE_ETHER_HDR_LEN, page);
	if (framesz == 0) {
		fprintf(stderr, "gateway: MTU %u needs mbufs above DPDK's 65535 "
			"bytes: lower the interfaces' MTU to at most %u\n",
			fp->max_mtu,
			qpio_eth_afp_frame_limit(page) - RTE_ETHER_HDR_LEN);
		return -1;
	}
	if (framesz == QPIO_ETH_AFP_FRAMESZ_DEFAULT)
		return 0;
	fp->framesz = framesz;
	room = RTE_PKTMBUF_HEADROOM + qpio_eth_afp_rx_buf(framesz);
	fp->data_room = (uint16_t)room;
	elt = room + (uint32_t)sizeof(struct rte_mbuf);
	fp->nb_mbufs = RTE_MAX(RTE_MIN(NB_MBUFS_JUMBO, POOL_JUMBO_BYTES / elt),
			       NB_MBUFS_MIN);
	fp->framecnt = RTE_MAX(RTE_MIN(AFP_FRAMECNT_JUMBO,
				       AFP_RING_JUMBO_BYTES / fp->framesz),
			       AFP_FRAMECNT_MIN);
	return 0;
}

/* Configure nq queues each way for frames of up to max_len bytes and
 * set them up. A port that cannot carry them is refused, naming both. */
static int
port_setup(uint16_t id, uint16_t nb_desc, struct rte_mempool *mp,
	   uint32_t max_len, unsigned int nq)
{
	const struct qpio_port_conf pc = { .max_rx_pkt_len = max_len };
	struct qpio_port_info info;
	unsigned int q;
	int ret;

	ret = qpio_port_info_get(id, &info);
	if (ret == 0 && info.max_rx_pkt_len < max_len) {
		printf("port %s (%s) carries frames of at most %u bytes; the "
		       "MTU needs %u\n", info.name, info.driver,
		       info.max_rx_pkt_len, max_len);
		return -EMSGSIZE;
	}
	if (ret == 0 && (info.max_rx_queues < nq || info.max_tx_queues < nq)) {
		printf("port %s (%s) has at most %u rx and %u tx queues; "
		       "--queues asks %u\n", info.name, info.driver,
		       info.max_rx_queues, info.max_tx_queues, nq);
		return -EINVAL;
	}
	if (ret == 0)
		ret = qpio_port_configure(id, (uint16_t)nq, (uint16_t)nq, &pc);
	nb_desc = RTE_MAX(RTE_MIN(nb_desc, info.max_desc), info.min_desc);
	for (q = 0; ret == 0 && q < nq; q++) {
		ret = qpio_port_rx_queue_setup(id, (uint16_t)q, nb_desc,
					       SOCKET_ID_ANY, mp);
		if (ret == 0)
			ret = qpio_port_tx_queue_setup(id, (uint16_t)q, nb_desc,
						       SOCKET_ID_ANY);
	}
	return ret;
}

/* The eth port of site s on its interface, set up and started, through
 * the PMD chosen: with --pmd auto net_af_xdp first, then net_af_packet
 * when AF_XDP cannot be created, cannot carry the MTU's frames (jumbo:
 * not tried) or does not start; the reason is printed. */
static int
eth_port_up(unsigned int s, const struct gw_opts *o,
	    const struct frame_plan *fp, struct rte_mempool *mp)
{
	static const char *const pmds[] = { "af_xdp", "af_packet" };
	int is_auto = strcmp(o->pmd, "auto") == 0;
	char devargs[256], extra[64];
	unsigned int i;
	int id = -ENODEV, ret;

	for (i = 0; i < RTE_DIM(pmds); i++) {
		const char *why;

		if (!is_auto && strcmp(o->pmd, pmds[i]) != 0)
			continue;
		extra[0] = '\0';
		if (i == 0 && o->queues > 1) {
			printf("site %c: net_af_xdp not used: --queues %u is "
			       "net_af_packet's qpairs (the kernel spreads "
			       "flows by their hash)%s\n", 'a' + s, o->queues,
			       is_auto ? ", trying net_af_packet" : "");
			id = -EINVAL;
			continue;
		}
		if (i == 0 && fp->framesz != 0) {
			printf("site %c: net_af_xdp not used: MTU %u needs "
			       "mbufs above the %u bytes it can share with "
			       "gw_pool (MTU %u at most)%s\n", 'a' + s,
			       fp->max_mtu, QPIO_ETH_AFP_FRAMESZ_DEFAULT,
			       qpio_eth_afp_max_frame(
					QPIO_ETH_AFP_FRAMESZ_DEFAULT) -
			       RTE_ETHER_HDR_LEN,
			       is_auto ? ", trying net_af_packet" :
			       ": use --pmd af_packet or auto");
			id = -EMSGSIZE;
			continue;
		}
		if (i == 1 && fp->framesz == 0)
			snprintf(extra, sizeof(extra), ",framecnt=%u,qpairs=%u",
				 fp->framecnt, o->queues);
		else if (i == 1)
			snprintf(extra, sizeof(extra), ",framecnt=%u,framesz=%u,"
				 "blocksz=%u,qpairs=%u", fp->framecnt,
				 fp->framesz, fp->framesz, o->queues);
		snprintf(devargs, sizeof(devargs),
			 "eth%u,vdev=net_%s%u,iface=%s%s", s, pmds[i], s,
			 o->iface[s], extra);
		id = qpio_port_create(devargs);
		if (id < 0) {
			why = "not created";
			ret = id;
		} else if ((ret = port_setup((uint16_t)id, ETH_DESC, mp,
					     fp->mtu[s] + RTE_ETHER_HDR_LEN,
					     o->queues)) < 0) {
			why = "not set up";
		} else if ((ret = qpio_port_start((uint16_t)id)) < 0) {
			why = "did not start";
		} else {
			printf("site %c: port eth%u on %s through net_%s, MTU "
			       "%u", 'a' + s, s, o->iface[s], pmds[i],
			       fp->mtu[s]);
			if (o->queues > 1)
				printf(", %u queues", o->queues);
			printf("\n");
			return id;
		}
		printf("site %c: net_%s on %s %s (%s)%s\n", 'a' + s, pmds[i],
		       o->iface[s], why, strerror(-ret),
		       i + 1 < RTE_DIM(pmds) && is_auto ?
		       ", trying net_af_packet" : "");
		if (id >= 0)
			qpio_port_close((uint16_t)id);
		id = ret;
	}
	return id < 0 ? id : -ENODEV;
}

static int
site_lcore(void *arg)
{
	unsigned int lc = rte_lcore_id(), i;

	RTE_SET_USED(arg);
	while (!quit)
		for (i = 0; i < lcore_nb_sites[lc]; i++)
			gw_site_poll(lcore_sites[lc][i]);
	return 0;
}

/* The kernel's rx_dropped of interface name (sysfs), or 0. */
static uint64_t
iface_rx_dropped(const char *name)
{
	char path[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/rx_dropped",
		 name);
	f = fopen(path, "re");
	if (f == NULL)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* Interface rx_dropped at start, per site. */
static uint64_t if_dropped0[GW_NB_SITES];

static_assert(sizeof(struct gw_site_stats) % sizeof(uint64_t) == 0,
	      "every counter of a site is a uint64_t");

/* The names of struct gw_site_stats's counters, in its order (the
 * telemetry keys). */
static const char *const stat_names[] = {
	"eth_rx", "link_rx", "eth_tx", "link_tx", "fwd4", "fwd6",
	"arp_replies", "arp_requests", "nd_adverts", "nd_solicits",
	"ttl_drops", "bad_drops", "no_route", "local", "other",
	"neigh_drops", "tx_drops", "neigh_held", "mtu_drops", "frag4",
	"frags", "icmp_time_exceeded", "icmp_unreach", "icmp_too_big",
	"icmp_limited", "icmp_barred",
};
static_assert(RTE_DIM(stat_names) ==
	      sizeof(struct gw_site_stats) / sizeof(uint64_t),
	      "a name for every counter");

/* The counters of site s: the sum over its nq contexts. */
static void
stats_sum(unsigned int s, unsigned int nq, struct gw_site_stats *sum)
{
	unsigned int q, i;

	memset(sum, 0, sizeof(*sum));
	for (q = 0; q < nq; q++) {
		const uint64_t *v = (const uint64_t *)&sites[s][q].st;

		for (i = 0; i < sizeof(*sum) / sizeof(uint64_t); i++)
			((uint64_t *)sum)[i] += v[i];
	}
}

/* The queues of the run (0 until the sites are set up) and the sites'
 * interfaces, for the counters at exit and the telemetry command. */
static unsigned int run_nq;
static const char *site_iface[GW_NB_SITES];

/* What never reached site s: its eth port's counters into ps, and its
 * interface's drops since start (the return). */
static uint64_t
site_losses(unsigned int s, struct qpio_port_stats *ps)
{
	memset(ps, 0, sizeof(*ps));
	qpio_port_stats_get(sites[s][0].eth_port, ps);
	return iface_rx_dropped(site_iface[s]) - if_dropped0[s];
}

/*
 * /qpio/gateway/stats,SITE (SITE a or b): the site's counters summed
 * over its queues (the names of struct gw_site_stats's fields), then
 * what never reached it: the eth port's missed, ierrors and rx_nombuf,
 * the interface's rx_dropped since start, and the number of queues. The
 * lcores keep counting while it reads: a running gateway's figures are
 * each a moment's, not one snapshot; after the traffic stops they are
 * exact. -EINVAL for another parameter, -EAGAIN before the sites run.
 */
static int
tel_gw_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct gw_site_stats sum;
	struct qpio_port_stats ps;
	const uint64_t *v = (const uint64_t *)&sum;
	unsigned int s, i;
	uint64_t dropped;

	RTE_SET_USED(cmd);
	if (params == NULL || (strcmp(params, "a") != 0 &&
			       strcmp(params, "b") != 0))
		return -EINVAL;
	if (run_nq == 0)
		return -EAGAIN;
	s = (unsigned int)(params[0] - 'a');
	stats_sum(s, run_nq, &sum);
	dropped = site_losses(s, &ps);
	rte_tel_data_start_dict(d);
	for (i = 0; i < RTE_DIM(stat_names); i++)
		rte_tel_data_add_dict_u64(d, stat_names[i], v[i]);
	rte_tel_data_add_dict_u64(d, "missed", ps.imissed);
	rte_tel_data_add_dict_u64(d, "ierrors", ps.ierrors);
	rte_tel_data_add_dict_u64(d, "rx_nombuf", ps.rx_nombuf);
	rte_tel_data_add_dict_u64(d, "rx_dropped", dropped);
	rte_tel_data_add_dict_u64(d, "queues", run_nq);
	return 0;
}

/* "LABEL: eth rx N tx N, link rx N tx N, routed ipv4 N ipv6 N" */
static void
traffic_print(const char *label, const struct gw_site_stats *st)
{
	printf("%s: eth rx %lu tx %lu, link rx %lu tx %lu, routed ipv4 %lu "
	       "ipv6 %lu\n", label, st->eth_rx, st->eth_tx, st->link_rx,
	       st->link_tx, st->fwd4, st->fwd6);
}

static void
stats_print(unsigned int site)
{
	const struct gw_site *s = &sites[site][0];
	struct gw_site_stats sum, *st = &sum;
	struct qpio_port_stats ps;
	char label[48];
	uint64_t dropped;
	unsigned int q;

	stats_sum(site, run_nq, &sum);
	snprintf(label, sizeof(label), "site %c", s->name);
	traffic_print(label, st);
	/* Each context's share, which shows how the flows spread. */
	for (q = 0; run_nq > 1 && q < run_nq; q++) {
		snprintf(label, sizeof(label), "site %c queue %u (lcore %u)",
			 s->name, q, site_lcore_of[site][q]);
		traffic_print(label, &sites[site][q].st);
	}
	printf("site %c: arp replies %lu requests %lu, nd adverts %lu "
	       "solicits %lu\n", s->name, st->arp_replies, st->arp_requests,
	       st->nd_adverts, st->nd_solicits);
	printf("site %c: drops ttl %lu bad %lu no_route %lu neigh %lu tx %lu "
	       "mtu %lu; local %lu other %lu\n", s->name, st->ttl_drops,
	       st->bad_drops, st->no_route, st->neigh_drops, st->tx_drops,
	       st->mtu_drops, st->local, st->other);
	printf("site %c: held for a neighbor at exit %lu\n", s->name,
	       st->neigh_held);
	printf("site %c: ipv4 fragmented %lu into %lu fragments\n", s->name,
	       st->frag4, st->frags);
	printf("site %c: icmp errors sent: time exceeded %lu unreachable %lu "
	       "too big %lu; not sent: rate %lu barred %lu\n", s->name,
	       st->icmp_time_exceeded, st->icmp_unreach, st->icmp_too_big,
	       st->icmp_limited, st->icmp_barred);
	/* What never reached the site: the PMD's missed frames (a full
	 * ring: net_af_packet's through the eth port, nics/eth.rst) and
	 * errors, and the kernel's drops on the interface (net_af_xdp's
	 * full ring on veth lands there). */
	dropped = site_losses(site, &ps);
	printf("site %c: before the site: eth port missed %lu errors %lu "
	       "nombuf %lu; %s rx_dropped %lu\n", s->name, ps.imissed,
	       ps.ierrors, ps.rx_nombuf, site_iface[site], dropped);
}

/* Wait until both link ends report up (the RC connection is made when
 * both have started). */
static int
link_wait(uint16_t a, uint16_t b)
{
	struct qpio_port_link la, lb;
	unsigned int i;

	for (i = 0; i < 5000; i++) {
		qpio_port_link_get(a, &la);
		qpio_port_link_get(b, &lb);
		if (la.up && lb.up)
			return 0;
		rte_delay_us_sleep(1000);
	}
	return -ETIMEDOUT;
}

int
main(int argc, char **argv)
{
	struct rte_mempool *mp = NULL;
	char err[512], name[32];
	struct gw_opts o;
	struct frame_plan fp;
	unsigned int s, q, nq, lc, nb_workers = 0, k = 0, cache, link_desc;
	unsigned int workers[RTE_MAX_LCORE];
	uint64_t t_end;
	int ret, sep, app_argc, status = 1, link[GW_NB_SITES] = { -1, -1 };
	char **app_argv;
	int eth[GW_NB_SITES] = { -1, -1 };

	/* The options and the routes are read before EAL starts, so a
	 * refused line or file sets up nothing. */
	/* Lines in order with stderr's when both go to one log. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	sep = example_args_split(argc, argv, &app_argc, &app_argv);
	ret = parse_args(app_argc, app_argv, &o);
	if (ret != 0)
		return ret > 0 ? 0 : 2;
	ret = gw_conf_load(o.conf, &conf, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "gateway: --conf %s\n", err);
		return 2;
	}
	ret = rte_eal_init(sep, argv);
	if (ret < 0) {
		fprintf(stderr, "gateway: EAL init failed: %s\n",
			rte_strerror(rte_errno));
		qpio_eal_init_failed();
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	nq = o.queues;
	if (frame_plan_make(&o, &conf, &fp) < 0)
		goto out;
	/* Each further queue: one more lcore's cache (a cache may hold up
	 * to 1.5 times its size); the link queues share LINK_DESC. */
	cache = fp.framesz != 0 ? POOL_CACHE_JUMBO : POOL_CACHE;
	fp.nb_mbufs += (nq - 1) * (cache + cache / 2);
	link_desc = RTE_MAX(LINK_DESC / nq, LINK_DESC_MIN);

	mp = rte_pktmbuf_pool_create("gw_pool", fp.nb_mbufs, cache, 0,
				     fp.data_room, rte_socket_id());
	if (mp == NULL) {
		fprintf(stderr, "gateway: mbuf pool of %u mbufs of %u bytes "
			"(%zu MB): %s%s\n", fp.nb_mbufs, fp.data_room,
			((size_t)fp.nb_mbufs * (fp.data_room +
			 sizeof(struct rte_mbuf)) + (1u << 20) - 1) >> 20,
			rte_strerror(rte_errno),
			rte_errno == ENOMEM ? ": give EAL more memory (-m, "
			"or more hugepages) or lower the interfaces' MTU" : "");
		goto out;
	}
	for (s = 0; s < GW_NB_SITES; s++) {
		struct gw_site *site = &sites[s][0];

		eth[s] = eth_port_up(s, &o, &fp, mp);
		if (eth[s] < 0) {
			fprintf(stderr, "gateway: site %c: no eth port on %s "
				"(see above)\n", 'a' + s, o.iface[s]);
			goto out;
		}
		snprintf(name, sizeof(name), "qp%u,dev=soft0,qp=rc,peer=qp%u", s,
			 s ^ 1u);
		link[s] = qpio_port_create(name);
		if (link[s] < 0) {
			fprintf(stderr, "gateway: link port qp%u: %s\n", s,
				strerror(-link[s]));
			goto out;
		}
		/* The link carries the largest MTU, so it is never the
		 * narrow hop. */
		if (port_setup(link[s], (uint16_t)link_desc, mp,
			       fp.max_mtu + RTE_ETHER_HDR_LEN, nq) < 0) {
			fprintf(stderr, "gateway: site %c: link port qp%u setup "
				"failed (see above)\n", 'a' + s, s);
			goto out;
		}
		site->name = (char)('a' + s);
		site->eth_port = (uint16_t)eth[s];
		site->link_port = (uint16_t)link[s];
		site->conf = &conf.site[s];
		site->mp = mp;
		site->eth_mtu = fp.mtu[s];
		site->link_mtu = fp.max_mtu;
		site->resolve_gap = rte_get_tsc_hz() / 10;
		/* ICMP errors: at most GW_ICMP_PER_S a second, in bursts of
		 * up to GW_ICMP_BURST (Linux's icmp_msgs_per_sec and
		 * icmp_msgs_burst defaults). */
		site->icmp_gap = rte_get_tsc_hz() / GW_ICMP_PER_S;
		site->icmp_burst = GW_ICMP_BURST;
		site->icmp_tokens = GW_ICMP_BURST;
		site->icmp_ip_id = (uint16_t)rte_rand();
		qpio_port_macaddr_get(site->eth_port, &site->mac);
		snprintf(name, sizeof(name), "gw_%c", site->name);
		if (gw_lpm_build(site->conf, name, rte_socket_id(),
				 &site->lpm4, &site->lpm6) < 0)
			goto out;
		/* The other queues' contexts: the same site, their own
		 * queue, tx buffers, neighbor table and counters; queue 0's
		 * ICMP bucket. */
		for (q = 1; q < nq; q++) {
			sites[s][q] = *site;
			sites[s][q].queue = (uint16_t)q;
			sites[s][q].icmp_from = site;
			sites[s][q].icmp_ip_id = (uint16_t)rte_rand();
		}
		for (q = 0; nq > 1 && q < nq; q++) {
			snprintf(name, sizeof(name), "gw_learn_%c%u", 'a' + s,
				 q);
			sites[s][q].learn_in = rte_ring_create_elem(name,
				sizeof(struct gw_learned), GW_LEARN_RING,
				rte_socket_id(), RING_F_SC_DEQ);
			if (sites[s][q].learn_in == NULL) {
				fprintf(stderr, "gateway: ring %s: %s\n", name,
					rte_strerror(rte_errno));
				goto out;
			}
		}
		for (q = 0; nq > 1 && q < nq; q++)
			for (k = 0; k < nq; k++)
				if (k != q)
					sites[s][q].learn_to[
						sites[s][q].nb_learn_to++] =
						sites[s][k].learn_in;
	}
	for (s = 0; s < GW_NB_SITES; s++)
		for (q = 0; q < nq; q++)
			qpio_port_macaddr_get(sites[s ^ 1][0].link_port,
					      &sites[s][q].link_mac);
	for (s = 0; s < GW_NB_SITES; s++)
		if (qpio_port_start(link[s]) < 0) {
			fprintf(stderr, "gateway: site %c: start failed\n",
				'a' + s);
			goto out;
		}
	if (link_wait(link[0], link[1]) < 0) {
		fprintf(stderr, "gateway: RC link qp0 <-> qp1 did not come up\n");
		goto out;
	}
	printf("RC link qp0 <-> qp1 up (soft0)\n");

	RTE_LCORE_FOREACH_WORKER(lc)
		workers[nb_workers++] = lc;
	/* One queue: the sites go to the workers in turn (a on the first,
	 * b on the second when there are two). Several: queue q of both
	 * sites goes to worker q mod workers, so an lcore polls queue q of
	 * every port (l3fwd's shape); workers beyond the queues idle. */
	for (q = 0; q < nq; q++)
		for (s = 0; s < GW_NB_SITES; s++) {
			k = nq == 1 ? s : q;
			lc = nb_workers > 0 ? workers[k % nb_workers] :
				rte_get_main_lcore();
			lcore_sites[lc][lcore_nb_sites[lc]++] = &sites[s][q];
			site_lcore_of[s][q] = lc;
			if (nq == 1)
				printf("site %c on lcore %u\n", 'a' + s, lc);
			else
				printf("site %c queue %u on lcore %u\n", 'a' + s,
				       q, lc);
		}
	for (k = 0; k < nb_workers; k++)
		if (lcore_nb_sites[workers[k]] == 0)
			printf("lcore %u idle: more worker lcores than "
			       "--queues %u\n", workers[k], nq);
	for (s = 0; s < GW_NB_SITES; s++) {
		if_dropped0[s] = iface_rx_dropped(o.iface[s]);
		site_iface[s] = o.iface[s];
	}
	run_nq = nq;
	rte_telemetry_register_cmd("/qpio/gateway/stats", tel_gw_stats,
				   "A site's counters, summed over its queues, "
				   "and its drops before the site. Parameter: "
				   "a or b");
	printf("gateway running\n");
	fflush(stdout);
	for (k = 0; k < nb_workers; k++)
		if (lcore_nb_sites[workers[k]] > 0)
			rte_eal_remote_launch(site_lcore, NULL, workers[k]);
	t_end = o.duration > 0 ?
		rte_get_tsc_cycles() + (uint64_t)(o.duration * rte_get_tsc_hz()) :
		UINT64_MAX;
	if (nb_workers == 0) {
		lc = rte_get_main_lcore();
		while (!quit && rte_get_tsc_cycles() < t_end)
			for (s = 0; s < lcore_nb_sites[lc]; s++)
				gw_site_poll(lcore_sites[lc][s]);
	} else {
		while (!quit && rte_get_tsc_cycles() < t_end)
			rte_delay_us_sleep(10000);
	}
	quit = 1;
	rte_eal_mp_wait_lcore();
	for (s = 0; s < GW_NB_SITES; s++) {
		for (q = 0; q < nq; q++)      /* counts what still waits */
			gw_site_release(&sites[s][q]);
		stats_print(s);
	}
	status = 0;
out:
	for (s = 0; s < GW_NB_SITES; s++) {
		for (q = 0; q < GW_MAX_QUEUES; q++) {
			gw_site_release(&sites[s][q]);
			rte_ring_free(sites[s][q].learn_in);
		}
		if (eth[s] >= 0)
			qpio_port_close(eth[s]);
		if (link[s] >= 0)
			qpio_port_close(link[s]);
		rte_lpm_free(sites[s][0].lpm4);
		rte_lpm6_free(sites[s][0].lpm6);
	}
	if (mp != NULL) {
		printf("mbufs not returned to gw_pool: %u\n",
		       rte_mempool_in_use_count(mp));
		rte_mempool_free(mp);
	}
	fflush(stdout);
	qpio_eal_cleanup();
	return status;
}
