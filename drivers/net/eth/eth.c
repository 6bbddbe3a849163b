/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Eth port driver: probe and close, configure (RSS across several rx
 * queues where the PMD hashes), queue setup, start and stop, statistics,
 * extended statistics, link, registration.
 *
 * The ethdev comes from a vdev the port creates (vdev=, removed again at
 * close) or from a device EAL probed (port=, name=). Either way the
 * port owns the ethdev while it exists and closes it at close, which
 * frees the receive buffers the PMD still holds.
 */

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_devargs.h>
#include <rte_errno.h>
#include <rte_kvargs.h>
#include <rte_malloc.h>

#include "eth_private.h"
#include "qpio_eth.h"

RTE_LOG_REGISTER(eth_logtype, qpio.net.eth, NOTICE);

#define ETH_DRV_NAME "eth"
/* Before the ethdev's own extended statistic names (doc/guides/nics/eth.rst). */
#define ETH_XSTAT_PREFIX "ethdev_"

/* RSS hash types asked for when there are several rx queues; cut down to
 * what the PMD offers. */
#define ETH_RSS_WANTED (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP)

static struct qpio_port_driver eth_driver;

static inline struct eth_port *
to_eport(const struct qpio_port *port)
{
	return port->priv;
}

/* Bytes ethdev adds to the MTU to get the frame size it checks against
 * max_rx_pktlen, computed as rte_ethdev does: the PMD's own difference
 * when it gives a max_mtu, else the Ethernet header and CRC. */
static uint32_t
eth_overhead(const struct rte_eth_dev_info *di)
{
	if (di->max_mtu != UINT16_MAX && di->max_rx_pktlen > di->max_mtu)
		return di->max_rx_pktlen - di->max_mtu;
	return RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;
}

/* net_af_packet's ring frame size when the PMD gives none (DPDK 22.11
 * drivers/net/af_packet: DFLT_FRAME_SIZE). */
#define AFP_FRAMESZ_DEFAULT QPIO_ETH_AFP_FRAMESZ_DEFAULT
/* Where the kernel puts a received frame in a TPACKET_V2 ring frame:
 * TPACKET_ALIGN(TPACKET2_HDRLEN (52) + 16) - ETH_HLEN = 66
 * (net/packet/af_packet.c, tpacket_rcv()); what passes the frame's end
 * is cut. */
#define AFP_RX_MAC_OFFSET 66u
/* TPACKET2_HDRLEN - sizeof(struct sockaddr_ll): where the PMD's frames
 * start for tx, and what its rx queue set-up takes off framesz. */
#define AFP_TX_HDR 32u

/* The ring frame size (framesz devarg) of an ethdev of DPDK 22.11's
 * net_af_packet, or 0 for another PMD. */
static uint32_t
afp_framesz(const struct rte_eth_dev_info *di)
{
	static const char *const keys[] = { "iface", "qpairs", "blocksz",
		"framesz", "framecnt", "qdisc_bypass", NULL };
	const struct rte_devargs *da;
	struct rte_kvargs *kv = NULL;
	const char *v;
	uint32_t framesz = AFP_FRAMESZ_DEFAULT;

	if (di->driver_name == NULL ||
	    strcmp(di->driver_name, "net_af_packet") != 0)
		return 0;
	da = di->device != NULL ? rte_dev_devargs(di->device) : NULL;
	if (da != NULL && da->args != NULL)
		kv = rte_kvargs_parse(da->args, keys);
	v = kv != NULL ? rte_kvargs_get(kv, "framesz") : NULL;
	if (v != NULL && atoi(v) > (int)AFP_RX_MAC_OFFSET)
		framesz = (uint32_t)atoi(v);
	rte_kvargs_free(kv);
	return framesz;
}

/* The largest frame the ring frames of a net_af_packet ethdev carry
 * (framesz from afp_framesz(), not 0). DPDK 22.11's PMD reports
 * max_rx_pktlen 1518 whatever its framesz devarg, while its rings carry
 * frames up to framesz - 66 in and framesz - 32 out; later DPDK reports
 * the frame size itself ("net/af_packet: support jumbo frames"). */
static uint32_t
afp_max_frame(uint32_t framesz)
{
	return RTE_MIN(framesz - AFP_RX_MAC_OFFSET, (uint32_t)UINT16_MAX);
}

uint32_t
qpio_eth_afp_max_frame(uint32_t framesz)
{
	return framesz <= AFP_RX_MAC_OFFSET ? 0 : afp_max_frame(framesz);
}

uint32_t
qpio_eth_afp_rx_buf(uint32_t framesz)
{
	return framesz <= AFP_TX_HDR ? 0 : framesz - AFP_TX_HDR;
}

uint32_t
qpio_eth_afp_framesz(uint32_t max_frame, uint32_t page)
{
	uint64_t f;

	if ((uint64_t)max_frame + AFP_RX_MAC_OFFSET <= AFP_FRAMESZ_DEFAULT)
		return AFP_FRAMESZ_DEFAULT;
	f = RTE_ALIGN_CEIL((uint64_t)max_frame + AFP_RX_MAC_OFFSET,
			   (uint64_t)page);
	if (RTE_PKTMBUF_HEADROOM + f - AFP_TX_HDR > UINT16_MAX)
		return 0;
	return (uint32_t)f;
}

uint32_t
qpio_eth_afp_frame_limit(uint32_t page)
{
	uint32_t f = RTE_ALIGN_FLOOR(UINT16_MAX - RTE_PKTMBUF_HEADROOM +
				     AFP_TX_HDR, page);

	return afp_max_frame(f);
}

static void
eth_info_get(struct qpio_port *port, struct qpio_port_info *info)
{
	const struct eth_port *ep = to_eport(port);
	struct rte_eth_dev_info di;
	uint32_t max_len, framesz;

	if (rte_eth_dev_info_get(ep->eth_id, &di) != 0) {
		memset(info, 0, sizeof(*info));
		info->socket_id = SOCKET_ID_ANY;
		return;
	}
	info->max_rx_queues = RTE_MIN(di.max_rx_queues,
				      (uint16_t)QPIO_PORT_MAX_QUEUES);
	info->max_tx_queues = RTE_MIN(di.max_tx_queues,
				      (uint16_t)QPIO_PORT_MAX_QUEUES);
	info->min_desc = RTE_MAX(RTE_MAX(di.rx_desc_lim.nb_min,
					 di.tx_desc_lim.nb_min), (uint16_t)1);
	info->max_desc = RTE_MIN(di.rx_desc_lim.nb_max, di.tx_desc_lim.nb_max);
	/* The frame size (header, no CRC) is bounded by the PMD's MTU limit
	 * and by its receive limit less the overhead ethdev adds to the MTU
	 * beyond the Ethernet header. */
	max_len = RTE_MIN(di.max_rx_pktlen - eth_overhead(&di) +
			  RTE_ETHER_HDR_LEN,
			  (uint32_t)di.max_mtu + RTE_ETHER_HDR_LEN);
	info->max_rx_pkt_len = RTE_MIN(max_len, (uint32_t)UINT16_MAX);
	framesz = afp_framesz(&di);
	if (framesz != 0) {
		info->max_rx_pkt_len = afp_max_frame(framesz);
		/* its rx queue set-up wants a ring frame's data in one mbuf */
		info->min_rx_buf = framesz - AFP_TX_HDR;
	}
	info->max_tx_segs = di.tx_desc_lim.nb_mtu_seg_max != 0 ?
		di.tx_desc_lim.nb_mtu_seg_max : RTE_MBUF_MAX_NB_SEGS;
	info->max_rx_segs = (di.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER) ?
		RTE_MBUF_MAX_NB_SEGS : 1;
	info->socket_id = rte_eth_dev_socket_id(ep->eth_id);
	/* The PMD's own fast free, passed through (same bit). */
	info->tx_offload_capa = di.tx_offload_capa &
		RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
}

static int
eth_configure(struct qpio_port *port)
{
	struct eth_port *ep = to_eport(port);
	struct rte_eth_dev_info di;
	struct rte_eth_conf conf;
	uint32_t mtu;
	int ret;

	ret = rte_eth_dev_info_get(ep->eth_id, &di);
	if (ret != 0)
		return ret;
	memset(&conf, 0, sizeof(conf));
	mtu = port->conf.max_rx_pkt_len - RTE_ETHER_HDR_LEN;
	if (mtu < di.min_mtu)
		mtu = di.min_mtu;
	/* net_af_packet carries more than the MTU its max_rx_pktlen lets
	 * ethdev accept (afp_max_frame()); its MTU is not enforced. */
	if (afp_framesz(&di) != 0)
		mtu = RTE_MIN(mtu, di.max_rx_pktlen - eth_overhead(&di));
	conf.rxmode.mtu = mtu;
	static_assert(QPIO_PORT_TX_OFFLOAD_MBUF_FAST_FREE ==
		      RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE,
		      "qpio's tx offload bits are ethdev's");
	conf.txmode.offloads = port->conf.tx_offloads;
	conf.intr_conf.rxq = port->conf.rx_intr;
	if (port->nb_rxq > 1 && (di.flow_type_rss_offloads & ETH_RSS_WANTED)) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf =
			di.flow_type_rss_offloads & ETH_RSS_WANTED;
	} else if (port->nb_rxq > 1) {
		ETH_LOG(NOTICE, "port %s: %s has no RSS; the PMD spreads frames "
			"over %u rx queues its own way", port->name,
			ep->dev_name, port->nb_rxq);
	}
	ret = rte_eth_dev_configure(ep->eth_id, port->nb_rxq, port->nb_txq,
				    &conf);
	if (ret != 0) {
		ETH_LOG(ERR, "port %s: rte_eth_dev_configure(%s, %u rx, %u tx, "
			"mtu %u) failed: %s", port->name, ep->dev_name,
			port->nb_rxq, port->nb_txq, mtu, rte_strerror(-ret));
		return ret;
	}
	ep->eth_configured = 1;
	return 0;
}

static int
eth_queue_new(struct qpio_port *port, uint16_t qid, int socket_id,
	      struct eth_queue **out)
{
	struct eth_queue *q;

	q = rte_zmalloc_socket("eth_queue", sizeof(*q), RTE_CACHE_LINE_SIZE,
			       socket_id);
	if (q == NULL)
		return -ENOMEM;
	q->eth_id = to_eport(port)->eth_id;
	q->qid = qid;
	q->epfd = -1;
	q->wakefd = -1;
	*out = q;
	return 0;
}

static int
eth_rx_queue_setup(struct qpio_port *port, uint16_t qid, uint16_t nb_desc,
		   int socket_id, struct rte_mempool *mp)
{
	struct eth_port *ep = to_eport(port);
	uint16_t nb_rxd = nb_desc, nb_txd = nb_desc;
	struct eth_queue *q;
	int ret;

	rte_eth_dev_adjust_nb_rx_tx_desc(ep->eth_id, &nb_rxd, &nb_txd);
	ret = rte_eth_rx_queue_setup(ep->eth_id, qid, nb_rxd, socket_id, NULL,
				     mp);
	if (ret != 0) {
		ETH_LOG(ERR, "port %s: rx queue %u of %s (%u descriptors): %s",
			port->name, qid, ep->dev_name, nb_rxd,
			rte_strerror(-ret));
		return ret;
	}
	ret = eth_queue_new(port, qid, socket_id, &q);
	if (ret == 0)
		port->rxq[qid] = q;
	return ret;
}

static int
eth_tx_queue_setup(struct qpio_port *port, uint16_t qid, uint16_t nb_desc,
		   int socket_id)
{
	struct eth_port *ep = to_eport(port);
	uint16_t nb_rxd = nb_desc, nb_txd = nb_desc;
	struct eth_queue *q;
	int ret;

	rte_eth_dev_adjust_nb_rx_tx_desc(ep->eth_id, &nb_rxd, &nb_txd);
	ret = rte_eth_tx_queue_setup(ep->eth_id, qid, nb_txd, socket_id, NULL);
	if (ret != 0) {
		ETH_LOG(ERR, "port %s: tx queue %u of %s (%u descriptors): %s",
			port->name, qid, ep->dev_name, nb_txd,
			rte_strerror(-ret));
		return ret;
	}
	ret = eth_queue_new(port, qid, socket_id, &q);
	if (ret == 0)
		port->txq[qid] = q;
	return ret;
}

/* The ethdev queue itself (and the receive buffers it holds) is freed by
 * the PMD when the queue is set up again or the ethdev is closed. */
static void
eth_rx_queue_release(struct qpio_port *port, uint16_t qid)
{
	rte_free(port->rxq[qid]);
	port->rxq[qid] = NULL;
}

static void
eth_tx_queue_release(struct qpio_port *port, uint16_t qid)
{
	rte_free(port->txq[qid]);
	port->txq[qid] = NULL;
}

/* ---- rx queue interrupts (conf.rx_intr) ---- */

/* The wake eventfd's callback in ethdev's epoll: its count consumed. */
static void
eth_wake_drain(int fd, void *arg __rte_unused)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0)
		return; /* EAGAIN: consumed already */
}

static void
eth_intr_fini(struct qpio_port *port)
{
	struct eth_port *ep = to_eport(port);
	uint16_t qid;

	for (qid = 0; qid < port->nb_rxq; qid++) {
		struct eth_queue *q = port->rxq[qid];

		if (q == NULL || q->epfd < 0)
			continue;
		(void)rte_eth_dev_rx_intr_ctl_q(ep->eth_id, qid, q->epfd,
						RTE_INTR_EVENT_DEL, NULL);
		if (q->wakefd >= 0) {
			(void)rte_epoll_ctl(q->epfd, EPOLL_CTL_DEL, q->wakefd,
					    &q->wake_ev);
			close(q->wakefd);
		}
		close(q->epfd);
		q->epfd = q->wakefd = -1;
	}
}

/* After rte_eth_dev_start (a PMD sets its queue vectors up there, as
 * net_tap does): each rx queue's interrupt in an epoll instance of its
 * own, with a wake eventfd. @return 0 or -errno (logged). */
static int
eth_intr_init(struct qpio_port *port)
{
	struct eth_port *ep = to_eport(port);
	uint16_t qid;
	int ret;

	for (qid = 0; qid < port->nb_rxq; qid++) {
		struct eth_queue *q = port->rxq[qid];

		q->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (q->epfd < 0) {
			ret = -errno;
			goto fail;
		}
		ret = rte_eth_dev_rx_intr_ctl_q(ep->eth_id, qid, q->epfd,
						RTE_INTR_EVENT_ADD, NULL);
		if (ret != 0) {
			ETH_LOG(ERR, "port %s: rx_intr: %s gives no interrupt "
				"for rx queue %u (%s); poll the port (rx_intr "
				"off) or use a PMD with rx queue interrupts "
				"(net_vhost, net_virtio_user, virtio)", port->name,
				ep->dev_name, qid, rte_strerror(-ret));
			close(q->epfd);
			q->epfd = -1;
			ret = -EOPNOTSUPP;
			goto fail;
		}
		q->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (q->wakefd < 0) {
			ret = -errno;
			goto fail;
		}
		memset(&q->wake_ev, 0, sizeof(q->wake_ev));
		q->wake_ev.epdata.event = EPOLLIN | EPOLLET;
		q->wake_ev.epdata.cb_fun = eth_wake_drain;
		if (rte_epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->wakefd,
				  &q->wake_ev) != 0) {
			close(q->wakefd);
			q->wakefd = -1;
			ret = -EIO;
			goto fail;
		}
	}
	return 0;
fail:
	if (ret != -EOPNOTSUPP)
		ETH_LOG(ERR, "port %s: rx_intr: rx queue %u: %s", port->name,
			qid, strerror(-ret));
	eth_intr_fini(port);
	return ret;
}

static int
eth_rx_intr_enable(struct qpio_port *port, uint16_t qid)
{
	int ret = rte_eth_dev_rx_intr_enable(to_eport(port)->eth_id, qid);

	/* -ENOTSUP: the PMD's queue interrupt is always armed (net_tap) */
	return ret == -ENOTSUP ? 0 : ret;
}

static int
eth_rx_intr_disable(struct qpio_port *port, uint16_t qid)
{
	int ret = rte_eth_dev_rx_intr_disable(to_eport(port)->eth_id, qid);

	return ret == -ENOTSUP ? 0 : ret;
}

static int
eth_rx_intr_wait(struct qpio_port *port, uint16_t qid, int timeout_ms)
{
	struct eth_queue *q = port->rxq[qid];
	struct rte_epoll_event ev[2];
	int n;

	/* ethdev's own wait, which consumes each event as the PMD's
	 * interrupt type says (an eventfd's count read, a queue fd left
	 * alone) and calls eth_wake_drain() for the wake */
	n = rte_epoll_wait_interruptible(q->epfd, ev, RTE_DIM(ev), timeout_ms);
	if (n < 0)
		return errno == EINTR ? -EINTR : -EIO;
	return n > 0 ? 1 : 0;
}

static int
eth_rx_intr_wake(struct qpio_port *port, uint16_t qid)
{
	struct eth_queue *q = port->rxq[qid];
	uint64_t one = 1;

	/* EAGAIN: the count is at its limit, a wake is pending anyway */
	if (write(q->wakefd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

static int
eth_rx_intr_fd(struct qpio_port *port, uint16_t qid)
{
	return ((struct eth_queue *)port->rxq[qid])->epfd;
}

static int
eth_start(struct qpio_port *port)
{
	struct eth_port *ep = to_eport(port);
	int ret;

	ret = rte_eth_dev_start(ep->eth_id);
	if (ret != 0) {
		ETH_LOG(ERR, "port %s: rte_eth_dev_start(%s): %s", port->name,
			ep->dev_name, rte_strerror(-ret));
		return ret;
	}
	ep->eth_started = 1;
	if (port->conf.rx_intr) {
		ret = eth_intr_init(port);
		if (ret != 0) {
			(void)rte_eth_dev_stop(ep->eth_id);
			ep->eth_started = 0;
			return ret;
		}
	}
	/* the kernel's drops in front of the PMD count from here on */
	eth_kdrops_find(ep);
	eth_kdrops_reset(ep);
	ret = ep->promisc ? rte_eth_promiscuous_enable(ep->eth_id) :
		rte_eth_promiscuous_disable(ep->eth_id);
	/* -ENOTSUP: DPDK's name for a PMD without the mode */
	if (ret != 0 && ret != -ENOTSUP)
		ETH_LOG(WARNING, "port %s: promiscuous mode %s on %s: %s",
			port->name, ep->promisc ? "on" : "off", ep->dev_name,
			rte_strerror(-ret));
	port->rx_burst = eth_rx_burst;
	port->tx_burst = eth_tx_burst;
	return 0;
}

static int
eth_stop(struct qpio_port *port)
{
	struct eth_port *ep = to_eport(port);
	uint16_t q;
	int ret;

	if (!ep->eth_started)
		return 0;
	/* Hand back what the PMD still holds for transmission, where it
	 * can say so; the others free sent frames in the burst itself. */
	for (q = 0; q < port->nb_txq; q++)
		(void)rte_eth_tx_done_cleanup(ep->eth_id, q, 0);
	eth_intr_fini(port);
	ret = rte_eth_dev_stop(ep->eth_id);
	if (ret != 0) {
		ETH_LOG(ERR, "port %s: rte_eth_dev_stop(%s): %s", port->name,
			ep->dev_name, rte_strerror(-ret));
		return ret;
	}
	ep->eth_started = 0;
	return 0;
}

static void
eth_close(struct qpio_port *port)
{
	struct eth_port *ep = to_eport(port);
	int ret;

	/* An ethdev the application made and this port never configured
	 * (a user that gave up before set-up: a soft wire device that
	 * refused its devargs) stays the application's, usable again. */
	if (!ep->own_vdev && !ep->eth_configured) {
		rte_free(ep);
		port->priv = NULL;
		return;
	}
	ret = rte_eth_dev_close(ep->eth_id);
	if (ret != 0)
		ETH_LOG(WARNING, "port %s: rte_eth_dev_close(%s): %s",
			port->name, ep->dev_name, rte_strerror(-ret));
	if (ep->own_vdev) {
		ret = rte_vdev_uninit(ep->dev_name);
		/* A PMD whose close released the device already says
		 * -ENOENT here: nothing is left to remove. */
		if (ret != 0 && ret != -ENOENT)
			ETH_LOG(WARNING, "port %s: rte_vdev_uninit(%s): %s",
				port->name, ep->dev_name, rte_strerror(-ret));
	}
	rte_free(ep);
	port->priv = NULL;
}

static void
eth_stats_get(struct qpio_port *port, struct qpio_port_stats *st)
{
	struct eth_port *ep = to_eport(port);
	struct rte_eth_stats es;
	unsigned int q, nq;

	if (rte_eth_stats_get(ep->eth_id, &es) != 0)
		return;
	st->ipackets = es.ipackets;
	st->opackets = es.opackets;
	st->ibytes = es.ibytes;
	st->obytes = es.obytes;
	/* a ring the kernel found full is a missed frame, as DPDK means
	 * imissed, also where the PMD does not count it (eth_kdrops.c) */
	st->imissed = es.imissed + eth_kdrops_get(ep);
	st->ierrors = es.ierrors;
	st->oerrors = es.oerrors;
	st->rx_nombuf = es.rx_nombuf;
	nq = RTE_MIN(RTE_ETHDEV_QUEUE_STAT_CNTRS, QPIO_PORT_MAX_QUEUES);
	for (q = 0; q < nq; q++) {
		st->q_ipackets[q] = es.q_ipackets[q];
		st->q_opackets[q] = es.q_opackets[q];
		st->q_ibytes[q] = es.q_ibytes[q];
		st->q_obytes[q] = es.q_obytes[q];
		st->q_errors[q] = es.q_errors[q];
	}
}

static void
eth_stats_reset(struct qpio_port *port)
{
	struct eth_port *ep = to_eport(port);

	eth_kdrops_reset(ep);
	(void)rte_eth_stats_reset(ep->eth_id);
	(void)rte_eth_xstats_reset(ep->eth_id);
}

/* The ethdev's own xstats, each under "ethdev_<name>" so that they never
 * clash with the generic names lib/port puts first. */
static int
eth_xstats_names(struct qpio_port *port, struct qpio_port_xstat_name *names,
		 unsigned int n)
{
	const struct eth_port *ep = to_eport(port);
	struct rte_eth_xstat_name *en;
	int cnt, i;

	cnt = rte_eth_xstats_get_names(ep->eth_id, NULL, 0);
	if (cnt < 0 || names == NULL || cnt == 0)
		return cnt;
	en = calloc(cnt, sizeof(*en));
	if (en == NULL)
		return -ENOMEM;
	cnt = rte_eth_xstats_get_names(ep->eth_id, en, cnt);
	/* Every ethdev name fits whole after the prefix: none is cut, so
	 * no two names become one. */
	static_assert(sizeof(ETH_XSTAT_PREFIX) - 1 + RTE_ETH_XSTATS_NAME_SIZE <=
		      QPIO_PORT_XSTAT_NAME_LEN, "ethdev xstat names fit");
	for (i = 0; i < cnt && (unsigned int)i < n; i++)
		snprintf(names[i].name, sizeof(names[i].name),
			 ETH_XSTAT_PREFIX "%s", en[i].name);
	free(en);
	return cnt;
}

static int
eth_xstats_values(struct qpio_port *port, uint64_t *values, unsigned int n)
{
	const struct eth_port *ep = to_eport(port);
	struct rte_eth_xstat *xs;
	int cnt, i;

	cnt = rte_eth_xstats_get(ep->eth_id, NULL, 0);
	if (cnt <= 0)
		return cnt;
	xs = calloc(cnt, sizeof(*xs));
	if (xs == NULL)
		return -ENOMEM;
	cnt = rte_eth_xstats_get(ep->eth_id, xs, cnt);
	for (i = 0; i < cnt && (unsigned int)i < n; i++)
		values[i] = xs[i].value;
	free(xs);
	return cnt;
}

static void
eth_link_get(struct qpio_port *port, struct qpio_port_link *link)
{
	const struct eth_port *ep = to_eport(port);
	struct rte_eth_link el;

	memset(link, 0, sizeof(*link));
	if (rte_eth_link_get_nowait(ep->eth_id, &el) != 0)
		return;
	link->up = el.link_status == RTE_ETH_LINK_UP;
	link->full_duplex = el.link_duplex == RTE_ETH_LINK_FULL_DUPLEX;
	link->speed_mbps = el.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ?
		0 : el.link_speed;
}

static int
eth_tx_done_cleanup(struct qpio_port *port, uint16_t qid, uint32_t free_cnt)
{
	return rte_eth_tx_done_cleanup(to_eport(port)->eth_id, qid, free_cnt);
}

static const struct qpio_port_ops eth_ops = {
	.info_get = eth_info_get,
	.configure = eth_configure,
	.rx_queue_setup = eth_rx_queue_setup,
	.tx_queue_setup = eth_tx_queue_setup,
	.rx_queue_release = eth_rx_queue_release,
	.tx_queue_release = eth_tx_queue_release,
	.start = eth_start,
	.stop = eth_stop,
	.close = eth_close,
	.stats_get = eth_stats_get,
	.stats_reset = eth_stats_reset,
	.xstats_names = eth_xstats_names,
	.xstats_values = eth_xstats_values,
	.link_get = eth_link_get,
	.tx_done_cleanup = eth_tx_done_cleanup,
	.rx_intr_enable = eth_rx_intr_enable,
	.rx_intr_disable = eth_rx_intr_disable,
	.rx_intr_wait = eth_rx_intr_wait,
	.rx_intr_wake = eth_rx_intr_wake,
	.rx_intr_fd = eth_rx_intr_fd,
};

/* Find the ethdev the arguments name; create the vdev for vdev=. */
static int
eth_dev_find(struct qpio_port *port, const struct eth_args *a,
	     struct eth_port *ep)
{
	uint16_t id;
	int ret;

	if (a->vdev != NULL) {
		if (rte_eth_dev_get_port_by_name(a->vdev, &id) == 0) {
			ETH_LOG(ERR, "port %s: ethdev %s exists already (from "
				"EAL --vdev?): use name=%s instead of vdev=",
				port->name, a->vdev, a->vdev);
			return -EEXIST;
		}
		ret = rte_vdev_init(a->vdev, a->vdev_args);
		if (ret != 0) {
			ETH_LOG(ERR, "port %s: rte_vdev_init(%s, \"%s\") failed: "
				"%s (is the PMD's shared object loaded? EAL -d; "
				"are its keys right?)", port->name, a->vdev,
				a->vdev_args, rte_strerror(ret < 0 ? -ret : ret));
			return ret < 0 ? ret : -ENODEV;
		}
		if (rte_eth_dev_get_port_by_name(a->vdev, &id) != 0) {
			ETH_LOG(ERR, "port %s: vdev %s made no ethdev of that "
				"name", port->name, a->vdev);
			rte_vdev_uninit(a->vdev);
			return -ENODEV;
		}
		ep->own_vdev = 1;
	} else if (a->name != NULL) {
		if (rte_eth_dev_get_port_by_name(a->name, &id) != 0) {
			ETH_LOG(ERR, "port %s: name=%s: no such ethdev (%u "
				"exist; EAL creates them from --vdev and -a, and "
				"not one whose probe failed: see the PMD's "
				"message above)",
				port->name, a->name, rte_eth_dev_count_avail());
			return -ENODEV;
		}
	} else {
		id = (uint16_t)a->port;
		if (!rte_eth_dev_is_valid_port(id)) {
			ETH_LOG(ERR, "port %s: port=%u: no such ethdev (%u "
				"exist; EAL creates them from --vdev and -a, and "
				"not one whose probe failed: see the PMD's "
				"message above)",
				port->name, id, rte_eth_dev_count_avail());
			return -ENODEV;
		}
	}
	ep->eth_id = id;
	ret = rte_eth_dev_get_name_by_port(id, ep->dev_name);
	if (ret != 0)
		snprintf(ep->dev_name, sizeof(ep->dev_name), "ethdev%u", id);
	return 0;
}

/* An ethdev carries at most one eth port. */
static int
eth_dev_taken(const struct qpio_port *port, uint16_t eth_id)
{
	struct qpio_port *other;
	uint16_t id;

	for (id = 0; id < QPIO_MAX_PORTS; id++) {
		other = qpio_port_get(id);
		if (other == NULL || other == port ||
		    other->drv != &eth_driver || other->priv == NULL ||
		    to_eport(other)->eth_id != eth_id)
			continue;
		ETH_LOG(ERR, "port %s: ethdev %u is port %s already", port->name,
			eth_id, other->name);
		return 1;
	}
	return 0;
}

static int
eth_probe(struct qpio_port *port, const struct rte_kvargs *kvlist)
{
	struct eth_args a;
	struct eth_port *ep;
	int ret;

	ret = eth_args_parse(port, kvlist, &a);
	if (ret < 0)
		return ret;
	ep = rte_zmalloc("eth_port", sizeof(*ep), RTE_CACHE_LINE_SIZE);
	if (ep == NULL)
		return -ENOMEM;
	ep->promisc = (uint8_t)a.promisc;
	if (a.vdev == NULL) {
		uint16_t id;

		if (a.name != NULL &&
		    rte_eth_dev_get_port_by_name(a.name, &id) == 0 &&
		    eth_dev_taken(port, id))
			goto busy;
		if (a.name == NULL && eth_dev_taken(port, (uint16_t)a.port))
			goto busy;
	}
	ret = eth_dev_find(port, &a, ep);
	if (ret < 0) {
		rte_free(ep);
		return ret;
	}
	ret = rte_eth_macaddr_get(ep->eth_id, &port->mac);
	if (ret != 0)
		qpio_port_default_mac(port->port_id, &port->mac);
	port->priv = ep;
	port->ops = &eth_ops;
	ETH_LOG(INFO, "port %s: ethdev %u (%s)%s", port->name, ep->eth_id,
		ep->dev_name, ep->own_vdev ? ", created" : "");
	return 0;
busy:
	rte_free(ep);
	return -EBUSY;
}

static struct qpio_port_driver eth_driver = {
	.name = ETH_DRV_NAME,
	.valid_keys = eth_valid_keys,
	.probe = eth_probe,
};

QPIO_PORT_DRIVER_REGISTER(eth_driver);
