/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qp port driver: devargs and probe, the port's description (info,
 * configure), close, and the ops table that ties the driver's files
 * together.
 *
 * Probe checks the devargs, finds or creates the rdma device (a device the
 * driver created is closed by the last port using it), queries it, and
 * allocates the port's PD and credit MR (qp_credit.c). Queue set-up and
 * release are in qp_queue.c, start, stop and the link to the peer in
 * qp_link.c (qp_cm.c for listen= and connect=), the bursts in qp_rx.c and
 * qp_tx.c, statistics in qp_stats.c.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "qp_private.h"

RTE_LOG_REGISTER(qp_logtype, qpio.net.qp, INFO);

static const char *const qp_port_keys[] = {
	"dev", "qp", "peer", "inline", "mac", "timeout", "retry_cnt",
	"mcast", "mlid", "listen", "connect", "reconnect", NULL,
};

/* Keys that belong to one transport, and why. Given on the other one they
 * are refused, never ignored. */
static const struct {
	const char *key;
	enum qp_port_transport transport;
	const char *why;
} qp_transport_keys[] = {
	/* IBA 9.7.6.1.3: the ACK timeout and the retries after it. */
	{ "timeout", QP_PORT_RC, "only RC QPs wait for ACKs" },
	{ "retry_cnt", QP_PORT_RC, "only RC QPs retransmit" },
	{ "mcast", QP_PORT_UD, "only UD QPs join multicast groups" },
};

/* Refuse a key of qp_transport_keys given to a port of the other
 * transport. */
static int
transport_keys_check(const struct qpio_port *port,
		     const struct rte_kvargs *kv, enum qp_port_transport t)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(qp_transport_keys); i++)
		if (qp_transport_keys[i].transport != t &&
		    rte_kvargs_count(kv, qp_transport_keys[i].key) > 0) {
			QP_LOG(ERR, "port %s: %s= needs qp=%s (%s; this port "
			       "is qp=%s)", port->name, qp_transport_keys[i].key,
			       qp_transport_name(
				       qp_transport_keys[i].transport),
			       qp_transport_keys[i].why, qp_transport_name(t));
			return -EINVAL;
		}
	return 0;
}

/* Devices this driver created, so the last port using one closes it. */
static struct {
	struct qpio_device *dev;
	uint32_t users;
} own_devs[QPIO_MAX_DEVICES];

/* The rdma device named name: the application's, or one this driver
 * created (then *own is 1 and a user is counted). */
static struct qpio_device *
dev_get(const char *name, int *own)
{
	struct qpio_device *dev = qpio_rdma_dev_get_by_name(name);
	unsigned int i;

	*own = 0;
	if (dev != NULL) {
		for (i = 0; i < QPIO_MAX_DEVICES; i++)
			if (own_devs[i].dev == dev) {
				own_devs[i].users++;
				*own = 1;
			}
		return dev;   /* the application's, or one we created */
	}
	for (i = 0; i < QPIO_MAX_DEVICES; i++)
		if (own_devs[i].dev == NULL)
			break;
	if (i == QPIO_MAX_DEVICES) {
		rte_errno = ENOSPC;
		return NULL;
	}
	dev = qpio_rdma_dev_create(name);
	if (dev == NULL)
		return NULL;
	own_devs[i].dev = dev;
	own_devs[i].users = 1;
	*own = 1;
	return dev;
}

/* A port no longer uses a device this driver created: the last closes
 * it. */
static void
dev_put(struct qpio_device *dev)
{
	unsigned int i;

	for (i = 0; i < QPIO_MAX_DEVICES; i++)
		if (own_devs[i].dev == dev) {
			if (--own_devs[i].users == 0) {
				own_devs[i].dev = NULL;
				qpio_rdma_dev_close(dev);
			}
			return;
		}
}

/* The port's limits, from the device's attributes. */
static void
qp_info_get(struct qpio_port *port, struct qpio_port_info *info)
{
	struct qp_port *qport = qp_priv(port);
	const struct qpio_device_attr *a = &qport->dattr;

	info->max_rx_queues = (uint16_t)RTE_MIN(a->max_qp,
						(uint32_t)QPIO_PORT_MAX_QUEUES);
	info->max_tx_queues = info->max_rx_queues;
	info->min_desc = 16;
	info->max_desc = (uint16_t)RTE_MIN(a->max_qp_wr, 32768u);
	info->max_tx_segs = (uint16_t)RTE_MIN(a->max_sge, QP_PORT_MAX_SEGS);
	info->max_rx_segs = info->max_tx_segs;
	/* RC carries messages of any size; UD one message of the device
	 * port's active MTU (IBA 9.7.4: a UD message is one packet), 1024
	 * bytes on a soft device on a 1500-byte wire. */
	info->max_rx_pkt_len = qport->transport == QP_PORT_UD ?
			       qport->mtu_len : 262144;
	/* Inline frames go back to their pool at post (qp.rst). */
	info->tx_offload_capa = QPIO_PORT_TX_OFFLOAD_MBUF_FAST_FREE;
}

/* Check the port's configuration: queue i is QP i. */
static int
qp_configure(struct qpio_port *port)
{
	if (port->nb_rxq != port->nb_txq) {
		QP_LOG(ERR, "port %s: queue i is QP i, so nb_rxq (%u) must "
		       "equal nb_txq (%u)", port->name, port->nb_rxq,
		       port->nb_txq);
		return -EINVAL;
	}
	return 0;
}

/* Free what probe allocated; close the device when the port created it
 * and was its last user. */
static void
qp_close(struct qpio_port *port)
{
	struct qp_port *qport = qp_priv(port);

	qp_cm_free(qport);
	qp_credit_fini(qport);
	if (qport->pd != NULL && qpio_pd_free(qport->pd) < 0)
		QP_LOG(ERR, "port %s: PD still in use at close", port->name);
	if (qport->own_dev)
		dev_put(qport->dev);
	rte_free(qport);
	port->priv = NULL;
}

static const struct qpio_port_ops qp_port_ops = {
	.info_get = qp_info_get,
	.configure = qp_configure,
	.rx_queue_setup = qp_rx_queue_setup,
	.tx_queue_setup = qp_tx_queue_setup,
	.rx_queue_release = qp_rx_queue_release,
	.tx_queue_release = qp_tx_queue_release,
	.start = qp_start,
	.stop = qp_stop,
	.close = qp_close,
	.stats_get = qp_stats_get,
	.stats_reset = qp_stats_reset,
	.xstats_names = qp_xstats_names,
	.xstats_values = qp_xstats_values,
	.link_get = qp_link_get,
	.tx_done_cleanup = qp_tx_done_cleanup,
};

/* Probe a qp port: devargs, the rdma device, its PD and the credit
 * words. */
static int
qp_probe(struct qpio_port *port, const struct rte_kvargs *kv)
{
	const char *dev_name = NULL, *transport = "rc", *peer = NULL;
	const char *mac = NULL, *mgid = NULL, *mlid = NULL;
	const char *listen = NULL, *connect = NULL;
	struct qpio_port_attr pa;
	struct qp_port *qport;
	uint32_t inl = UINT32_MAX, timeout = 14, retry_cnt = 7;
	uint32_t reconnect = UINT32_MAX;
	int ret = 0;

	ret |= qpio_port_kvargs_str(port, kv, "dev", &dev_name);
	ret |= qpio_port_kvargs_str(port, kv, "qp", &transport);
	ret |= qpio_port_kvargs_str(port, kv, "peer", &peer);
	ret |= qpio_port_kvargs_str(port, kv, "mac", &mac);
	ret |= qpio_port_kvargs_str(port, kv, "mcast", &mgid);
	ret |= qpio_port_kvargs_str(port, kv, "mlid", &mlid);
	ret |= qpio_port_kvargs_u32(port, kv, "inline", 0, UINT16_MAX, &inl);
	/* IBA 9.7.6.1.3: 5 bits of 4.096 us x 2^timeout (0: for ever);
	 * 3 bits of retries after a lost packet. */
	ret |= qpio_port_kvargs_u32(port, kv, "timeout", 0, 31, &timeout);
	ret |= qpio_port_kvargs_u32(port, kv, "retry_cnt", 0, 7, &retry_cnt);
	ret |= qpio_port_kvargs_str(port, kv, "listen", &listen);
	ret |= qpio_port_kvargs_str(port, kv, "connect", &connect);
	ret |= qpio_port_kvargs_u32(port, kv, "reconnect", 0, 1, &reconnect);
	if (ret != 0)
		return -EINVAL;
	if (dev_name == NULL) {
		QP_LOG(ERR, "port %s: devargs need dev=<rdma device>, e.g. "
		       "dev=soft0", port->name);
		return -EINVAL;
	}
	if (strcmp(transport, "rc") != 0 && strcmp(transport, "ud") != 0) {
		QP_LOG(ERR, "port %s: qp=%s: the transport is rc or ud",
		       port->name, transport);
		return -EINVAL;
	}
	ret = transport_keys_check(port, kv, strcmp(transport, "ud") == 0 ?
				   QP_PORT_UD : QP_PORT_RC);
	if (ret < 0)
		return ret;
	if (peer != NULL && (strlen(peer) >= QPIO_PORT_NAME_LEN ||
			     strcmp(peer, port->name) == 0)) {
		QP_LOG(ERR, "port %s: peer=%s must name another port",
		       port->name, peer);
		return -EINVAL;
	}
	if (mac != NULL && (rte_ether_unformat_addr(mac, &port->mac) < 0 ||
			    !rte_is_valid_assigned_ether_addr(&port->mac))) {
		QP_LOG(ERR, "port %s: mac=%s must be a unicast, non-zero "
		       "XX:XX:XX:XX:XX:XX address", port->name, mac);
		return -EINVAL;
	}
	qport = rte_zmalloc("qp_port", sizeof(*qport), RTE_CACHE_LINE_SIZE);
	if (qport == NULL)
		return -ENOMEM;
	qport->port = port;
	qport->transport = strcmp(transport, "ud") == 0 ? QP_PORT_UD :
			   QP_PORT_RC;
	qport->qkey = QP_PORT_QKEY;
	qport->timeout = (uint8_t)timeout;
	qport->retry_cnt = (uint8_t)retry_cnt;
	if (peer != NULL)
		snprintf(qport->peer, sizeof(qport->peer), "%s", peer);
	ret = qp_cm_parse(qport, listen, connect, reconnect);
	if (ret < 0) {
		rte_free(qport);
		return ret;
	}
	ret = qp_mcast_parse(qport, mgid, mlid);
	if (ret < 0)
		goto fail;
	qport->dev = dev_get(dev_name, &qport->own_dev);
	if (qport->dev == NULL) {
		ret = -rte_errno;
		QP_LOG(ERR, "port %s: rdma device %s: %s", port->name,
		       dev_name, rte_strerror(-ret));
		goto fail;
	}
	qpio_rdma_dev_query(qport->dev, &qport->dattr);
	if (inl == UINT32_MAX)
		inl = qport->dattr.max_inline_data;
	if (inl > qport->dattr.max_inline_data) {
		QP_LOG(ERR, "port %s: inline=%u above the device's "
		       "max_inline_data %u", port->name, inl,
		       qport->dattr.max_inline_data);
		ret = -EINVAL;
		goto fail;
	}
	qport->inline_max = inl;
	ret = qpio_rdma_port_query(qport->dev, 1, &pa);
	if (ret == 0)
		ret = qpio_rdma_gid_query(qport->dev, 1, 0, &qport->gid);
	if (ret < 0)
		goto fail;
	qport->lid = pa.lid;
	qport->mtu_len = pa.active_mtu >= QPIO_MTU_256 &&
			 pa.active_mtu <= QPIO_MTU_4096 ?
			 128u << pa.active_mtu : 4096u;
	qport->pd = qpio_pd_alloc(qport->dev);
	if (qport->pd == NULL) {
		ret = -rte_errno;
		goto fail;
	}
	if (qport->transport == QP_PORT_RC &&
	    qport->dattr.max_qp_rd_atom == 0) {
		QP_LOG(ERR, "port %s: qp=rc reads the peer's credits with an "
		       "RDMA READ; device %s allows none (max_qp_rd_atom 0)",
		       port->name, dev_name);
		ret = -EOPNOTSUPP;
		goto fail;
	}
	ret = qp_credit_init(qport);
	if (ret < 0)
		goto fail;
	port->ops = &qp_port_ops;
	port->priv = qport;
	return 0;
fail:
	qp_cm_free(qport);
	if (qport->pd != NULL)
		qpio_pd_free(qport->pd);
	if (qport->dev != NULL && qport->own_dev)
		dev_put(qport->dev);
	rte_free(qport);
	return ret;
}

static struct qpio_port_driver qp_port_driver = {
	.name = "qp",
	.valid_keys = qp_port_keys,
	.probe = qp_probe,
};

QPIO_PORT_DRIVER_REGISTER(qp_port_driver);
