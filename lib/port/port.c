/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/port: registry of port drivers and ports, life cycle checks,
 * statistics and extended statistics.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_random.h>

#include "port_driver.h"
#include "qpio_devargs.h"
#include "qpio_mbuf.h"
#include "port_private.h"

RTE_LOG_REGISTER(qpio_port_logtype, qpio.lib.port, INFO);

struct qpio_port_fp qpio_port_fp_ops[QPIO_MAX_PORTS];

static TAILQ_HEAD(, qpio_port_driver) drivers =
	TAILQ_HEAD_INITIALIZER(drivers);
static struct qpio_port *ports[QPIO_MAX_PORTS];
static uint16_t nb_ports;

/* Burst functions of a stopped port (or of a slot with no port). */
static uint16_t
port_dummy_burst(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	RTE_SET_USED(queue);
	RTE_SET_USED(pkts);
	RTE_SET_USED(nb_pkts);
	return 0;
}

static void
fp_reset(uint16_t port_id)
{
	struct qpio_port_fp *fp = &qpio_port_fp_ops[port_id];

	memset(fp, 0, sizeof(*fp));
	fp->rx_burst = port_dummy_burst;
	fp->tx_burst = port_dummy_burst;
}

RTE_INIT(qpio_port_fp_init)
{
	uint16_t i;

	for (i = 0; i < QPIO_MAX_PORTS; i++)
		fp_reset(i);
}

void
qpio_port_driver_register(struct qpio_port_driver *drv)
{
	TAILQ_INSERT_TAIL(&drivers, drv, next);
}

/* Longest driver name that prefixes the port name and is followed by
 * digits only ("pcap0" -> pcap; "qp1" -> qp). */
static const struct qpio_port_driver *
driver_for_name(const char *name)
{
	const struct qpio_port_driver *drv, *best = NULL;
	size_t best_len = 0;

	TAILQ_FOREACH(drv, &drivers, next) {
		size_t len = strlen(drv->name);
		const char *p = name + len;

		if (strncmp(name, drv->name, len) != 0 || *p == '\0')
			continue;
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p != '\0' || len <= best_len)
			continue;
		best = drv;
		best_len = len;
	}
	return best;
}

/* "eth, ibv, pcap, ..." into buf: the registered driver names. */
static void
drivers_list(char *buf, size_t size)
{
	const struct qpio_port_driver *drv;
	size_t off = 0;
	int len;

	buf[0] = '\0';
	TAILQ_FOREACH(drv, &drivers, next) {
		len = snprintf(buf + off, size - off, "%s%s",
			       off > 0 ? ", " : "", drv->name);
		if (len < 0 || (size_t)len >= size - off)
			break;
		off += (size_t)len;
	}
	if (off == 0)
		snprintf(buf, size, "(none registered)");
}

struct qpio_port *
qpio_port_get(uint16_t port_id)
{
	return port_id < QPIO_MAX_PORTS ? ports[port_id] : NULL;
}

int
qpio_port_is_valid(uint16_t port_id)
{
	return qpio_port_get(port_id) != NULL;
}

uint16_t
qpio_port_count(void)
{
	return nb_ports;
}

int
qpio_port_get_by_name(const char *name)
{
	uint16_t i;

	if (name == NULL)
		return -EINVAL;
	for (i = 0; i < QPIO_MAX_PORTS; i++)
		if (ports[i] != NULL && strcmp(ports[i]->name, name) == 0)
			return i;
	return -ENODEV;
}

void
qpio_port_default_mac(uint16_t port_id, struct rte_ether_addr *mac)
{
	/* 02:71:70:69:00:<id>: locally administered, unicast ("qpi"). */
	mac->addr_bytes[0] = 0x02;
	mac->addr_bytes[1] = 0x71;
	mac->addr_bytes[2] = 0x70;
	mac->addr_bytes[3] = 0x69;
	mac->addr_bytes[4] = (uint8_t)(port_id >> 8);
	mac->addr_bytes[5] = (uint8_t)port_id;
}

int
qpio_port_kvargs_u32(const struct qpio_port *port,
		     const struct rte_kvargs *kvlist, const char *key,
		     uint32_t min, uint32_t max, uint32_t *val)
{
	return qpio_devargs_u32(port->name, kvlist, key, min, max, val);
}

int
qpio_port_kvargs_str(const struct qpio_port *port,
		     const struct rte_kvargs *kvlist, const char *key,
		     const char **val)
{
	return qpio_devargs_str(port->name, kvlist, key, val);
}

/* Create a port; owned: at the highest free id (a device's own port). */
static int
port_create(const char *devargs, bool owned)
{
	const struct qpio_port_driver *drv;
	struct rte_kvargs *kvlist = NULL;
	char name[QPIO_PORT_NAME_LEN], doc[64];
	struct qpio_port *port;
	const char *args;
	uint16_t id;
	int ret;

	if (devargs == NULL)
		return -EINVAL;
	if (qpio_devargs_split(devargs, name, sizeof(name), &args) < 0)
		return -EINVAL;
	drv = driver_for_name(name);
	if (drv == NULL) {
		char list[256];

		drivers_list(list, sizeof(list));
		PORT_LOG(ERR, "devargs '%s': no port driver for '%s': want "
			 "<driver><number> with driver one of: %s (keys in "
			 "doc/guides/nics/<driver>.rst; a driver is there only "
			 "when the application links its library with "
			 "-Wl,--no-as-needed, as pkg-config libqpio does)",
			 devargs, name, list);
		return -ENODEV;
	}
	if (qpio_port_get_by_name(name) >= 0) {
		PORT_LOG(ERR, "port %s exists already", name);
		return -EEXIST;
	}
	for (id = 0; id < QPIO_MAX_PORTS; id++)
		if (ports[owned ? QPIO_MAX_PORTS - 1 - id : id] == NULL)
			break;
	if (id < QPIO_MAX_PORTS && owned)
		id = (uint16_t)(QPIO_MAX_PORTS - 1 - id);
	if (id == QPIO_MAX_PORTS) {
		PORT_LOG(ERR, "port %s: QPIO_MAX_PORTS (%u) reached", name,
			 QPIO_MAX_PORTS);
		return -ENOSPC;
	}
	snprintf(doc, sizeof(doc), "doc/guides/nics/%s.rst", drv->name);
	ret = qpio_devargs_parse(name, args,
				 (const char *const *)drv->valid_keys, doc,
				 &kvlist);
	if (ret < 0)
		return ret;
	port = rte_zmalloc("qpio_port", sizeof(*port), RTE_CACHE_LINE_SIZE);
	if (port == NULL) {
		rte_kvargs_free(kvlist);
		return -ENOMEM;
	}
	strcpy(port->name, name);
	port->port_id = id;
	port->drv = drv;
	qpio_port_default_mac(id, &port->mac);
	ports[id] = port;   /* visible to probe (peer lookups by name) */
	ret = drv->probe(port, kvlist);
	rte_kvargs_free(kvlist);
	if (ret < 0) {
		ports[id] = NULL;
		rte_free(port);
		return ret;
	}
	nb_ports++;
	fp_reset(id);
	PORT_LOG(INFO, "port %u: %s created (driver %s)", id, name, drv->name);
	return id;
}

int
qpio_port_create(const char *devargs)
{
	return port_create(devargs, false);
}

int
qpio_port_create_owned(const char *devargs)
{
	return port_create(devargs, true);
}

#define PORT_GET_OR_RET(p, id) do { \
	(p) = qpio_port_get(id); \
	if ((p) == NULL) \
		return -ENODEV; \
} while (0)

int
qpio_port_name_get(uint16_t port_id, char *buf, size_t size)
{
	struct qpio_port *p;

	PORT_GET_OR_RET(p, port_id);
	if (buf == NULL || size == 0)
		return -EINVAL;
	snprintf(buf, size, "%s", p->name);
	return 0;
}

int
qpio_port_info_get(uint16_t port_id, struct qpio_port_info *info)
{
	struct qpio_port *p;

	PORT_GET_OR_RET(p, port_id);
	if (info == NULL)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	info->socket_id = SOCKET_ID_ANY;
	p->ops->info_get(p, info);
	if (info->max_rx_queues > QPIO_PORT_MAX_QUEUES)
		info->max_rx_queues = QPIO_PORT_MAX_QUEUES;
	if (info->max_tx_queues > QPIO_PORT_MAX_QUEUES)
		info->max_tx_queues = QPIO_PORT_MAX_QUEUES;
	snprintf(info->name, sizeof(info->name), "%s", p->name);
	snprintf(info->driver, sizeof(info->driver), "%s", p->drv->name);
	return 0;
}

static void
queues_release(struct qpio_port *p)
{
	uint16_t q;

	for (q = 0; q < QPIO_PORT_MAX_QUEUES; q++) {
		if (p->rxq[q] != NULL)
			p->ops->rx_queue_release(p, q);
		if (p->txq[q] != NULL)
			p->ops->tx_queue_release(p, q);
		p->rxq[q] = NULL;
		p->txq[q] = NULL;
	}
}

int
qpio_port_configure(uint16_t port_id, uint16_t nb_rxq, uint16_t nb_txq,
		    const struct qpio_port_conf *conf)
{
	struct qpio_port_info info;
	struct qpio_port *p;
	uint64_t tx_offloads;
	uint32_t max_len;
	int ret;

	PORT_GET_OR_RET(p, port_id);
	if (p->started) {
		PORT_LOG(ERR, "port %s: configure needs a stopped port", p->name);
		return -EBUSY;
	}
	qpio_port_info_get(port_id, &info);
	if (nb_rxq > info.max_rx_queues || nb_txq > info.max_tx_queues ||
	    nb_rxq + nb_txq == 0) {
		PORT_LOG(ERR, "port %s: %u rx / %u tx queues; allowed 0..%u rx, "
			 "0..%u tx, not both 0", p->name, nb_rxq, nb_txq,
			 info.max_rx_queues, info.max_tx_queues);
		return -EINVAL;
	}
	max_len = conf != NULL ? conf->max_rx_pkt_len : 0;
	if (max_len == 0)
		max_len = RTE_MIN(QPIO_PORT_DEFAULT_MAX_PKT_LEN,
				  info.max_rx_pkt_len);
	if (max_len < RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN ||
	    max_len > info.max_rx_pkt_len) {
		PORT_LOG(ERR, "port %s: max_rx_pkt_len %u outside [%u, %u]",
			 p->name, max_len, RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN,
			 info.max_rx_pkt_len);
		return -EINVAL;
	}
	tx_offloads = conf != NULL ? conf->tx_offloads : 0;
	if (tx_offloads & ~info.tx_offload_capa) {
		PORT_LOG(ERR, "port %s: tx offloads 0x%" PRIx64 " not supported "
			 "(the port's tx_offload_capa is 0x%" PRIx64 "): ask "
			 "only for offloads qpio_port_info_get() reports",
			 p->name, tx_offloads & ~info.tx_offload_capa,
			 info.tx_offload_capa);
		return -EINVAL;
	}
	queues_release(p);
	p->nb_rxq = nb_rxq;
	p->nb_txq = nb_txq;
	p->conf.max_rx_pkt_len = max_len;
	p->conf.tx_offloads = tx_offloads;
	p->conf.rx_intr = conf != NULL && conf->rx_intr != 0;
	if (p->conf.rx_intr && p->ops->rx_intr_wait == NULL) {
		PORT_LOG(ERR, "port %s: rx_intr: driver %s raises no rx queue "
			 "interrupts; poll the port (rx_intr 0) or use an eth "
			 "port on a PMD that has them (net_vhost, "
			 "net_virtio_user, virtio)",
			 p->name, p->drv->name);
		p->conf.rx_intr = 0;
		return -EOPNOTSUPP;
	}
	if (p->ops->configure != NULL) {
		ret = p->ops->configure(p);
		if (ret < 0) {
			p->configured = 0;
			return ret;
		}
	}
	p->configured = 1;
	return 0;
}

static int
queue_setup_check(struct qpio_port *p, const char *dir, uint16_t qid,
		  uint16_t nb_q, uint16_t nb_desc)
{
	struct qpio_port_info info;

	if (p->started) {
		PORT_LOG(ERR, "port %s: %s queue setup needs a stopped port",
			 p->name, dir);
		return -EBUSY;
	}
	if (!p->configured || qid >= nb_q) {
		PORT_LOG(ERR, "port %s: %s queue %u not configured (%u queues)",
			 p->name, dir, qid, p->configured ? nb_q : 0);
		return -EINVAL;
	}
	qpio_port_info_get(p->port_id, &info);
	if (nb_desc < info.min_desc || nb_desc > info.max_desc) {
		PORT_LOG(ERR, "port %s: %s queue %u: %u descriptors outside "
			 "[%u, %u]", p->name, dir, qid, nb_desc, info.min_desc,
			 info.max_desc);
		return -EINVAL;
	}
	return 0;
}

int
qpio_port_rx_queue_setup(uint16_t port_id, uint16_t queue_id,
			 uint16_t nb_desc, int socket_id,
			 struct rte_mempool *mp)
{
	struct qpio_port_info info;
	struct qpio_port *p;
	int ret;

	PORT_GET_OR_RET(p, port_id);
	ret = queue_setup_check(p, "rx", queue_id, p->nb_rxq, nb_desc);
	if (ret < 0)
		return ret;
	/* A pool whose private area promises more data room than its
	 * elements hold would have every driver write past its buffers. */
	if (mp != NULL && qpio_mbuf_pool_check(mp) < 0) {
		PORT_LOG(ERR, "port %s: rx queue %u: mempool %s refused (its "
			 "private area must describe its buffers)", p->name,
			 queue_id, mp->name);
		return -EINVAL;
	}
	if (mp == NULL ||
	    rte_pktmbuf_data_room_size(mp) < RTE_PKTMBUF_HEADROOM + 64) {
		PORT_LOG(ERR, "port %s: rx queue %u needs a packet mbuf pool "
			 "with at least %u bytes of data room", p->name,
			 queue_id, RTE_PKTMBUF_HEADROOM + 64);
		return -EINVAL;
	}
	memset(&info, 0, sizeof(info));
	p->ops->info_get(p, &info);
	if (info.min_rx_buf != 0 && rte_pktmbuf_data_room_size(mp) <
	    RTE_PKTMBUF_HEADROOM + info.min_rx_buf) {
		PORT_LOG(ERR, "port %s: rx queue %u: mempool %s has %u bytes of "
			 "data room, the port's frames need %u "
			 "(RTE_PKTMBUF_HEADROOM %u + min_rx_buf %u): make the "
			 "pool's data room that large", p->name, queue_id,
			 mp->name, rte_pktmbuf_data_room_size(mp),
			 RTE_PKTMBUF_HEADROOM + info.min_rx_buf,
			 RTE_PKTMBUF_HEADROOM, info.min_rx_buf);
		return -EINVAL;
	}
	if (p->rxq[queue_id] != NULL) {
		p->ops->rx_queue_release(p, queue_id);
		p->rxq[queue_id] = NULL;
	}
	return p->ops->rx_queue_setup(p, queue_id, nb_desc, socket_id, mp);
}

int
qpio_port_tx_queue_setup(uint16_t port_id, uint16_t queue_id,
			 uint16_t nb_desc, int socket_id)
{
	struct qpio_port *p;
	int ret;

	PORT_GET_OR_RET(p, port_id);
	ret = queue_setup_check(p, "tx", queue_id, p->nb_txq, nb_desc);
	if (ret < 0)
		return ret;
	if (p->txq[queue_id] != NULL) {
		p->ops->tx_queue_release(p, queue_id);
		p->txq[queue_id] = NULL;
	}
	return p->ops->tx_queue_setup(p, queue_id, nb_desc, socket_id);
}

/* Release rx (is_rx) or tx queue qid of a stopped port. */
static int
queue_release(uint16_t port_id, uint16_t qid, int is_rx)
{
	const char *dir = is_rx ? "rx" : "tx";
	struct qpio_port *p;
	void **q;

	PORT_GET_OR_RET(p, port_id);
	if (p->started) {
		PORT_LOG(ERR, "port %s: %s queue release needs a stopped port",
			 p->name, dir);
		return -EBUSY;
	}
	if (qid >= (is_rx ? p->nb_rxq : p->nb_txq)) {
		PORT_LOG(ERR, "port %s: %s queue %u not configured", p->name,
			 dir, qid);
		return -EINVAL;
	}
	q = is_rx ? &p->rxq[qid] : &p->txq[qid];
	if (*q != NULL) {
		if (is_rx)
			p->ops->rx_queue_release(p, qid);
		else
			p->ops->tx_queue_release(p, qid);
	}
	*q = NULL;
	return 0;
}

int
qpio_port_rx_queue_release(uint16_t port_id, uint16_t queue_id)
{
	return queue_release(port_id, queue_id, 1);
}

int
qpio_port_tx_queue_release(uint16_t port_id, uint16_t queue_id)
{
	return queue_release(port_id, queue_id, 0);
}

int
qpio_port_start(uint16_t port_id)
{
	struct qpio_port_fp *fp;
	struct qpio_port *p;
	uint16_t q;
	int ret;

	PORT_GET_OR_RET(p, port_id);
	if (p->started)
		return 0;
	if (!p->configured) {
		PORT_LOG(ERR, "port %s: start needs qpio_port_configure() first",
			 p->name);
		return -EINVAL;
	}
	for (q = 0; q < p->nb_rxq; q++)
		if (p->rxq[q] == NULL) {
			PORT_LOG(ERR, "port %s: rx queue %u not set up", p->name, q);
			return -EINVAL;
		}
	for (q = 0; q < p->nb_txq; q++)
		if (p->txq[q] == NULL) {
			PORT_LOG(ERR, "port %s: tx queue %u not set up", p->name, q);
			return -EINVAL;
		}
	p->rx_burst = port_dummy_burst;
	p->tx_burst = port_dummy_burst;
	ret = p->ops->start(p);
	if (ret < 0)
		return ret;
	fp = &qpio_port_fp_ops[port_id];
	fp->nb_rxq = p->nb_rxq;
	fp->nb_txq = p->nb_txq;
	for (q = 0; q < QPIO_PORT_MAX_QUEUES; q++) {
		fp->rxq[q] = q < p->nb_rxq ? p->rxq[q] : NULL;
		fp->txq[q] = q < p->nb_txq ? p->txq[q] : NULL;
	}
	fp->rx_burst = p->nb_rxq > 0 ? p->rx_burst : port_dummy_burst;
	fp->tx_burst = p->nb_txq > 0 ? p->tx_burst : port_dummy_burst;
	p->started = 1;
	return 0;
}

int
qpio_port_stop(uint16_t port_id)
{
	struct qpio_port *p;

	PORT_GET_OR_RET(p, port_id);
	if (!p->started)
		return 0;
	fp_reset(port_id);
	p->started = 0;
	return p->ops->stop(p);
}

int
qpio_port_close(uint16_t port_id)
{
	struct qpio_port *p;
	int ret;

	PORT_GET_OR_RET(p, port_id);
	ret = qpio_port_stop(port_id);
	if (ret < 0)
		return ret;
	queues_release(p);
	p->ops->close(p);
	ports[port_id] = NULL;
	nb_ports--;
	PORT_LOG(INFO, "port %u: %s closed", port_id, p->name);
	rte_free(p);
	return 0;
}

int
qpio_port_stats_get(uint16_t port_id, struct qpio_port_stats *stats)
{
	struct qpio_port *p;

	PORT_GET_OR_RET(p, port_id);
	if (stats == NULL)
		return -EINVAL;
	memset(stats, 0, sizeof(*stats));
	p->ops->stats_get(p, stats);
	return 0;
}

int
qpio_port_stats_reset(uint16_t port_id)
{
	struct qpio_port *p;

	PORT_GET_OR_RET(p, port_id);
	p->ops->stats_reset(p);
	return 0;
}

/* Generic xstats: the basic counters, then per-queue counters. */
static const char *const basic_names[] = {
	"rx_good_packets", "tx_good_packets", "rx_good_bytes",
	"tx_good_bytes", "rx_missed_errors", "rx_errors", "tx_errors",
	"rx_mbuf_allocation_errors",
};
#define NB_BASIC RTE_DIM(basic_names)
#define NB_RXQ_XSTATS 3u   /* packets, bytes, errors */
#define NB_TXQ_XSTATS 2u   /* packets, bytes */

static unsigned int
generic_xstats_count(const struct qpio_port *p)
{
	return NB_BASIC + p->nb_rxq * NB_RXQ_XSTATS + p->nb_txq * NB_TXQ_XSTATS;
}

static int
driver_xstats_count(struct qpio_port *p)
{
	if (p->ops->xstats_names == NULL)
		return 0;
	return p->ops->xstats_names(p, NULL, 0);
}

int
qpio_port_xstats_names_get(uint16_t port_id,
			   struct qpio_port_xstat_name *names, unsigned int n)
{
	unsigned int i = 0, q, ng;
	struct qpio_port *p;
	int nd;

	PORT_GET_OR_RET(p, port_id);
	ng = generic_xstats_count(p);
	nd = driver_xstats_count(p);
	if (nd < 0)
		return nd;
	if (names == NULL)
		return (int)(ng + nd);
#define XNAME(...) do { \
	if (i < n) \
		snprintf(names[i].name, sizeof(names[i].name), __VA_ARGS__); \
	i++; \
} while (0)
	for (q = 0; q < NB_BASIC; q++)
		XNAME("%s", basic_names[q]);
	for (q = 0; q < p->nb_rxq; q++) {
		XNAME("rx_q%u_packets", q);
		XNAME("rx_q%u_bytes", q);
		XNAME("rx_q%u_errors", q);
	}
	for (q = 0; q < p->nb_txq; q++) {
		XNAME("tx_q%u_packets", q);
		XNAME("tx_q%u_bytes", q);
	}
#undef XNAME
	if (nd > 0 && n > ng) {
		struct qpio_port_xstat_name *tmp;

		tmp = calloc(nd, sizeof(*tmp));
		if (tmp == NULL)
			return -ENOMEM;
		p->ops->xstats_names(p, tmp, nd);
		memcpy(&names[ng], tmp,
		       RTE_MIN((unsigned int)nd, n - ng) * sizeof(*tmp));
		free(tmp);
	}
	return (int)(ng + nd);
}

int
qpio_port_xstats_get(uint16_t port_id, struct qpio_port_xstat *xstats,
		     unsigned int n)
{
	struct qpio_port_stats st;
	unsigned int i = 0, q, ng;
	struct qpio_port *p;
	uint64_t *dv;
	int nd;

	PORT_GET_OR_RET(p, port_id);
	ng = generic_xstats_count(p);
	nd = driver_xstats_count(p);
	if (nd < 0)
		return nd;
	if (xstats == NULL || n < ng + nd)
		return (int)(ng + nd);
	qpio_port_stats_get(port_id, &st);
#define XVAL(v) do { xstats[i].id = i; xstats[i].value = (v); i++; } while (0)
	XVAL(st.ipackets);
	XVAL(st.opackets);
	XVAL(st.ibytes);
	XVAL(st.obytes);
	XVAL(st.imissed);
	XVAL(st.ierrors);
	XVAL(st.oerrors);
	XVAL(st.rx_nombuf);
	for (q = 0; q < p->nb_rxq; q++) {
		XVAL(st.q_ipackets[q]);
		XVAL(st.q_ibytes[q]);
		XVAL(st.q_errors[q]);
	}
	for (q = 0; q < p->nb_txq; q++) {
		XVAL(st.q_opackets[q]);
		XVAL(st.q_obytes[q]);
	}
#undef XVAL
	if (nd > 0) {
		int r;

		dv = calloc(nd, sizeof(*dv));
		if (dv == NULL)
			return -ENOMEM;
		r = p->ops->xstats_values(p, dv, nd);
		for (q = 0; q < (unsigned int)nd; q++) {
			xstats[ng + q].id = ng + q;
			xstats[ng + q].value = r < 0 ? 0 : dv[q];
		}
		free(dv);
	}
	return (int)(ng + nd);
}

int
qpio_port_xstat_get_by_name(uint16_t port_id, const char *name,
			    uint64_t *value)
{
	struct qpio_port_xstat_name *names = NULL;
	struct qpio_port_xstat *vals = NULL;
	int n, i, ret = -ENOENT;

	if (name == NULL || value == NULL)
		return -EINVAL;
	n = qpio_port_xstats_names_get(port_id, NULL, 0);
	if (n < 0)
		return n;
	names = calloc(n, sizeof(*names));
	vals = calloc(n, sizeof(*vals));
	if (names == NULL || vals == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	if (qpio_port_xstats_names_get(port_id, names, n) != n ||
	    qpio_port_xstats_get(port_id, vals, n) != n) {
		ret = -EAGAIN;
		goto out;
	}
	for (i = 0; i < n; i++)
		if (strcmp(names[i].name, name) == 0) {
			*value = vals[i].value;
			ret = 0;
			break;
		}
out:
	free(names);
	free(vals);
	return ret;
}

int
qpio_port_macaddr_get(uint16_t port_id, struct rte_ether_addr *mac)
{
	struct qpio_port *p;

	PORT_GET_OR_RET(p, port_id);
	if (mac == NULL)
		return -EINVAL;
	rte_ether_addr_copy(&p->mac, mac);
	return 0;
}

int
qpio_port_link_get(uint16_t port_id, struct qpio_port_link *link)
{
	struct qpio_port *p;

	PORT_GET_OR_RET(p, port_id);
	if (link == NULL)
		return -EINVAL;
	memset(link, 0, sizeof(*link));
	if (!p->started)
		return 0;
	link->up = 1;
	link->full_duplex = 1;
	if (p->ops->link_get != NULL)
		p->ops->link_get(p, link);
	return 0;
}

int
qpio_port_tx_done_cleanup(uint16_t port_id, uint16_t queue_id,
			  uint32_t free_cnt)
{
	struct qpio_port *p;

	PORT_GET_OR_RET(p, port_id);
	if (queue_id >= p->nb_txq || p->txq[queue_id] == NULL)
		return -EINVAL;
	if (p->ops->tx_done_cleanup == NULL)
		return -EOPNOTSUPP;
	return p->ops->tx_done_cleanup(p, queue_id, free_cnt);
}

/* The port of an rx interrupt call, after the checks every one makes:
 * the port exists, the ops are there and were asked for, the port runs,
 * the queue is set up. @return 0 or the call's error. */
static int
rx_intr_port(uint16_t port_id, uint16_t queue_id, struct qpio_port **out)
{
	struct qpio_port *p;

	PORT_GET_OR_RET(p, port_id);
	if (!p->conf.rx_intr || p->ops->rx_intr_wait == NULL)
		return -EOPNOTSUPP;
	if (!p->started || queue_id >= p->nb_rxq || p->rxq[queue_id] == NULL)
		return -EINVAL;
	*out = p;
	return 0;
}

int
qpio_port_rx_intr_enable(uint16_t port_id, uint16_t queue_id)
{
	struct qpio_port *p;
	int ret = rx_intr_port(port_id, queue_id, &p);

	return ret != 0 ? ret : p->ops->rx_intr_enable(p, queue_id);
}

int
qpio_port_rx_intr_disable(uint16_t port_id, uint16_t queue_id)
{
	struct qpio_port *p;
	int ret = rx_intr_port(port_id, queue_id, &p);

	return ret != 0 ? ret : p->ops->rx_intr_disable(p, queue_id);
}

int
qpio_port_rx_intr_wait(uint16_t port_id, uint16_t queue_id, int timeout_ms)
{
	struct qpio_port *p;
	int ret = rx_intr_port(port_id, queue_id, &p);

	return ret != 0 ? ret : p->ops->rx_intr_wait(p, queue_id,
						      timeout_ms < -1 ? -1 :
						      timeout_ms);
}

int
qpio_port_rx_intr_wake(uint16_t port_id, uint16_t queue_id)
{
	struct qpio_port *p;
	int ret = rx_intr_port(port_id, queue_id, &p);

	return ret != 0 ? ret : p->ops->rx_intr_wake(p, queue_id);
}

int
qpio_port_rx_intr_fd(uint16_t port_id, uint16_t queue_id)
{
	struct qpio_port *p;
	int ret = rx_intr_port(port_id, queue_id, &p);

	return ret != 0 ? ret : p->ops->rx_intr_fd(p, queue_id);
}
