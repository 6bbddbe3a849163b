/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pcap port driver: probe, devargs, queue setup, life cycle, statistics.
 *
 * Devargs: rx_pcap=FILE, tx_pcap=FILE, infinite_rx=0|1, mac=MAC
 * (doc/guides/nics/pcap.rst). The rx file is opened and checked at
 * create time; the tx file is created (truncated) at the first tx queue
 * setup and stays open until close.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_malloc.h>

#include "pcap_private.h"

RTE_LOG_REGISTER(pcap_logtype, qpio.net.pcap, NOTICE);

static const char *const pcap_valid_keys[] = {
	"rx_pcap", "tx_pcap", "infinite_rx", "mac", NULL,
};

/* Driver xstats, after the generic ones. rx_eof is a state, the others
 * are counters zeroed by stats_reset. */
static const char *const pcap_xstat_names[] = {
	"rx_records_read", "rx_oversize", "rx_truncated_records",
	"rx_read_errors", "rx_eof", "tx_oversize",
};
#define PCAP_NB_XSTATS RTE_DIM(pcap_xstat_names)

static struct pcap_port *
to_pp(struct qpio_port *port)
{
	return port->priv;
}

static void
pcap_info_get(struct qpio_port *port, struct qpio_port_info *info)
{
	RTE_SET_USED(port);
	info->max_rx_queues = 1;
	info->max_tx_queues = 1;
	info->min_desc = 1;
	info->max_desc = UINT16_MAX;
	info->max_rx_pkt_len = PCAP_MAX_FRAME;
	info->max_rx_segs = UINT16_MAX;
	info->max_tx_segs = UINT16_MAX;
}

static int
pcap_rx_queue_setup(struct qpio_port *port, uint16_t qid, uint16_t nb_desc,
		    int socket_id, struct rte_mempool *mp)
{
	struct pcap_port *pp = to_pp(port);
	struct pcap_rx_queue *rxq = &pp->rxq;
	uint32_t room, nseg;

	RTE_SET_USED(nb_desc);
	room = rte_pktmbuf_data_room_size(mp) - RTE_PKTMBUF_HEADROOM;
	nseg = (port->conf.max_rx_pkt_len + room - 1) / room;
	if (nseg > UINT16_MAX) {
		PCAP_LOG(ERR, "port %s: rx queue %u: %u-byte mbufs would need "
			 "%u segments for a %u-byte frame (max %u)", port->name,
			 qid, room, nseg, port->conf.max_rx_pkt_len, UINT16_MAX);
		return -EINVAL;
	}
	rxq->segs = rte_zmalloc_socket("pcap_rx_segs",
				       RTE_MAX(nseg, 1u) * sizeof(*rxq->segs),
				       RTE_CACHE_LINE_SIZE, socket_id);
	if (rxq->segs == NULL)
		return -ENOMEM;
	rxq->mp = mp;
	rxq->seg_room = room;
	rxq->max_len = port->conf.max_rx_pkt_len;
	rxq->port_id = port->port_id;
	rxq->socket_id = socket_id;
	rxq->setup = 1;
	port->rxq[qid] = rxq;
	return 0;
}

static void
pcap_rx_queue_release(struct qpio_port *port, uint16_t qid)
{
	struct pcap_rx_queue *rxq = &to_pp(port)->rxq;

	RTE_SET_USED(qid);
	/* The queue holds no mbufs between bursts: a record waiting for
	 * mbufs stays in libpcap's buffer and is delivered after setup. */
	rte_free(rxq->segs);
	rxq->segs = NULL;
	rxq->mp = NULL;
	rxq->setup = 0;
}

/* Create (or truncate) the tx file: once per port, at the first setup. */
static int
pcap_tx_open(struct qpio_port *port, struct pcap_port *pp)
{
	int err;

	pp->tx_dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB,
			PCAP_TX_SNAPLEN, PCAP_TSTAMP_PRECISION_MICRO);
	if (pp->tx_dead == NULL)
		return -ENOMEM;
	errno = 0;
	pp->txq.dumper = pcap_dump_open(pp->tx_dead, pp->tx_path);
	if (pp->txq.dumper == NULL) {
		err = errno != 0 ? errno : EIO;
		PCAP_LOG(ERR, "port %s: cannot create the tx file: %s",
			 port->name, pcap_geterr(pp->tx_dead));
		pcap_close(pp->tx_dead);
		pp->tx_dead = NULL;
		return -err;
	}
	return 0;
}

static int
pcap_tx_queue_setup(struct qpio_port *port, uint16_t qid, uint16_t nb_desc,
		    int socket_id)
{
	struct pcap_port *pp = to_pp(port);
	struct pcap_tx_queue *txq = &pp->txq;
	int ret;

	RTE_SET_USED(nb_desc);
	if (pp->tx_path != NULL && txq->dumper == NULL) {
		ret = pcap_tx_open(port, pp);
		if (ret < 0)
			return ret;
	}
	if (pp->tx_path != NULL) {
		txq->scratch = rte_malloc_socket("pcap_tx_scratch",
						 port->conf.max_rx_pkt_len, 0,
						 socket_id);
		if (txq->scratch == NULL)
			return -ENOMEM;
	}
	txq->max_len = port->conf.max_rx_pkt_len;
	txq->setup = 1;
	port->txq[qid] = txq;
	return 0;
}

static void
pcap_tx_queue_release(struct qpio_port *port, uint16_t qid)
{
	struct pcap_tx_queue *txq = &to_pp(port)->txq;

	RTE_SET_USED(qid);
	/* Frames are written and freed within the burst: no mbufs here. */
	rte_free(txq->scratch);
	txq->scratch = NULL;
	txq->setup = 0;
}

static int
pcap_start(struct qpio_port *port)
{
	struct pcap_port *pp = to_pp(port);
	int ret;

	/* infinite_rx: read the whole file once, at the first start. */
	if (pp->infinite && port->nb_rxq > 0) {
		ret = pcap_rx_load(pp, pp->rxq.socket_id);
		if (ret < 0)
			return ret;
	}
	if (pp->rx_path == NULL)
		port->rx_burst = pcap_rx_burst_none;
	else if (pp->infinite)
		port->rx_burst = pcap_rx_burst_replay;
	else
		port->rx_burst = pcap_rx_burst_file;
	port->tx_burst = pp->txq.dumper != NULL ? pcap_tx_burst_file :
						  pcap_tx_burst_sink;
	return 0;
}

/* Push the buffered records to the file. @return 0 or -EIO (logged). */
static int
pcap_tx_flush(struct qpio_port *port, struct pcap_port *pp)
{
	if (pp->txq.dumper == NULL)
		return 0;
	if (pcap_dump_flush(pp->txq.dumper) != 0 ||
	    ferror(pcap_dump_file(pp->txq.dumper))) {
		PCAP_LOG(ERR, "port %s: tx file %s: write failed; the file "
			 "is incomplete", port->name, pp->tx_path);
		return -EIO;
	}
	return 0;
}

static int
pcap_stop(struct qpio_port *port)
{
	return pcap_tx_flush(port, to_pp(port));
}

static void
pcap_port_close(struct qpio_port *port)
{
	struct pcap_port *pp = to_pp(port);

	if (pp == NULL)
		return;
	if (pp->txq.dumper != NULL) {
		pcap_tx_flush(port, pp);
		pcap_dump_close(pp->txq.dumper);
	}
	if (pp->tx_dead != NULL)
		pcap_close(pp->tx_dead);
	if (pp->rxq.pcap != NULL)
		pcap_close(pp->rxq.pcap);
	rte_free(pp->replay_data);
	rte_free(pp->replay);
	free(pp->rx_path);
	free(pp->tx_path);
	rte_free(pp);
	port->priv = NULL;
}

static void
pcap_port_stats_get(struct qpio_port *port, struct qpio_port_stats *st)
{
	const struct pcap_port *pp = to_pp(port);
	const struct pcap_rx_queue *rxq = &pp->rxq;
	const struct pcap_tx_queue *txq = &pp->txq;

	st->ipackets = rxq->packets;
	st->ibytes = rxq->bytes;
	st->ierrors = rxq->errors;
	st->rx_nombuf = rxq->nombuf;
	st->opackets = txq->packets;
	st->obytes = txq->bytes;
	st->oerrors = txq->errors;
	st->q_ipackets[0] = rxq->packets;
	st->q_ibytes[0] = rxq->bytes;
	st->q_errors[0] = rxq->errors;
	st->q_opackets[0] = txq->packets;
	st->q_obytes[0] = txq->bytes;
}

static void
pcap_port_stats_reset(struct qpio_port *port)
{
	struct pcap_port *pp = to_pp(port);
	struct pcap_rx_queue *rxq = &pp->rxq;
	struct pcap_tx_queue *txq = &pp->txq;

	rxq->packets = 0;
	rxq->bytes = 0;
	rxq->errors = 0;
	rxq->nombuf = 0;
	rxq->oversize = 0;
	rxq->truncated = 0;
	rxq->records = 0;
	rxq->read_errors = 0;
	txq->packets = 0;
	txq->bytes = 0;
	txq->errors = 0;
	txq->oversize = 0;
}

static int
pcap_xstats_names(struct qpio_port *port, struct qpio_port_xstat_name *names,
		  unsigned int n)
{
	unsigned int i;

	RTE_SET_USED(port);
	if (names != NULL)
		for (i = 0; i < RTE_MIN(n, (unsigned int)PCAP_NB_XSTATS); i++)
			snprintf(names[i].name, sizeof(names[i].name), "%s",
				 pcap_xstat_names[i]);
	return PCAP_NB_XSTATS;
}

static int
pcap_xstats_values(struct qpio_port *port, uint64_t *values, unsigned int n)
{
	const struct pcap_port *pp = to_pp(port);
	const struct pcap_rx_queue *rxq = &pp->rxq;
	uint64_t v[PCAP_NB_XSTATS];

	v[0] = rxq->records;
	v[1] = rxq->oversize;
	v[2] = rxq->truncated;
	v[3] = rxq->read_errors;
	/* A port without rx_pcap has no input, so it is at its end. */
	v[4] = pp->rx_path == NULL || rxq->eof;
	v[5] = pp->txq.oversize;
	memcpy(values, v, RTE_MIN(n, (unsigned int)PCAP_NB_XSTATS) * sizeof(*v));
	return PCAP_NB_XSTATS;
}

static const struct qpio_port_ops pcap_ops = {
	.info_get = pcap_info_get,
	.rx_queue_setup = pcap_rx_queue_setup,
	.tx_queue_setup = pcap_tx_queue_setup,
	.rx_queue_release = pcap_rx_queue_release,
	.tx_queue_release = pcap_tx_queue_release,
	.start = pcap_start,
	.stop = pcap_stop,
	.close = pcap_port_close,
	.stats_get = pcap_port_stats_get,
	.stats_reset = pcap_port_stats_reset,
	.xstats_names = pcap_xstats_names,
	.xstats_values = pcap_xstats_values,
};

/*
 * Open the rx file and check it: it must exist (-ENOENT), be readable
 * (-EACCES), not be a directory (-EISDIR), be a pcap file libpcap reads
 * (-EINVAL) with link type Ethernet and no link-type flag bits (-EINVAL).
 */
static int
pcap_rx_open(struct qpio_port *port, struct pcap_port *pp)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	const char *path = pp->rx_path;
	unsigned int ext;
	struct stat st;
	pcap_t *p;
	int dlt;

	if (stat(path, &st) != 0 || access(path, R_OK) != 0) {
		int err = errno;

		PCAP_LOG(ERR, "port %s: rx file %s: %s", port->name, path,
			 strerror(err));
		return -err;
	}
	if (S_ISDIR(st.st_mode)) {
		PCAP_LOG(ERR, "port %s: rx file %s is a directory", port->name,
			 path);
		return -EISDIR;
	}
	p = pcap_open_offline_with_tstamp_precision(path,
			PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (p == NULL) {
		PCAP_LOG(ERR, "port %s: rx file %s is not a readable pcap "
			 "file: %s", port->name, path, errbuf);
		return -EINVAL;
	}
	dlt = pcap_datalink(p);
	/* The upper 16 bits of the file's link type field (FCS length,
	 * reserved bits); some libpcap versions return the link type itself
	 * when they are 0, hence the mask. */
	ext = (unsigned int)pcap_datalink_ext(p) & 0xffff0000u;
	if (dlt != DLT_EN10MB || ext != 0) {
		const char *name = pcap_datalink_val_to_name(dlt);

		if (ext != 0)
			PCAP_LOG(ERR, "port %s: rx file %s: link type %s (DLT "
				 "%d) with flag bits 0x%08x (FCS length or "
				 "reserved bits) is not supported: only EN10MB "
				 "(Ethernet, DLT 1) without flag bits",
				 port->name, path, name != NULL ? name : "unknown",
				 dlt, ext);
		else
			PCAP_LOG(ERR, "port %s: rx file %s: link type %s (DLT "
				 "%d) is not supported: only EN10MB (Ethernet, "
				 "DLT 1)", port->name, path,
				 name != NULL ? name : "unknown", dlt);
		pcap_close(p);
		return -EINVAL;
	}
	pp->rxq.pcap = p;
	return 0;
}

/* Refuse a tx file that is the rx file: truncating it would lose it. */
static int
pcap_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (strcmp(a, b) == 0)
		return 1;
	if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
		return 0;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static struct qpio_port_driver pcap_driver;

/* Refuse files another pcap port uses in a way that would destroy data:
 * our tx file being its rx or tx file, or our rx file being its tx file. */
static int
pcap_files_clash(const struct qpio_port *port, const char *rx, const char *tx)
{
	uint16_t id;

	for (id = 0; id < QPIO_MAX_PORTS; id++) {
		const struct qpio_port *o = qpio_port_get(id);
		const struct pcap_port *op;
		const char *what = NULL;

		if (o == NULL || o == port || o->drv != &pcap_driver ||
		    o->priv == NULL)
			continue;
		op = o->priv;
		if (tx != NULL && op->rx_path != NULL &&
		    pcap_same_file(tx, op->rx_path))
			what = "tx_pcap is the rx_pcap file of";
		else if (tx != NULL && op->tx_path != NULL &&
			 pcap_same_file(tx, op->tx_path))
			what = "tx_pcap is the tx_pcap file of";
		else if (rx != NULL && op->tx_path != NULL &&
			 pcap_same_file(rx, op->tx_path))
			what = "rx_pcap is the tx_pcap file of";
		if (what != NULL) {
			PCAP_LOG(ERR, "port %s: %s port %s; writing would destroy "
				 "it", port->name, what, o->name);
			return 1;
		}
	}
	return 0;
}

static int
pcap_probe(struct qpio_port *port, const struct rte_kvargs *kvlist)
{
	const char *rx = NULL, *tx = NULL, *mac = NULL;
	struct rte_ether_addr ea;
	struct pcap_port *pp;
	uint32_t infinite = 0;
	int ret;

	if ((ret = qpio_port_kvargs_str(port, kvlist, "rx_pcap", &rx)) < 0 ||
	    (ret = qpio_port_kvargs_str(port, kvlist, "tx_pcap", &tx)) < 0 ||
	    (ret = qpio_port_kvargs_str(port, kvlist, "mac", &mac)) < 0 ||
	    (ret = qpio_port_kvargs_u32(port, kvlist, "infinite_rx", 0, 1,
					&infinite)) < 0)
		return ret;
	if (rx == NULL && tx == NULL) {
		PCAP_LOG(ERR, "port %s: needs rx_pcap=FILE, tx_pcap=FILE or "
			 "both", port->name);
		return -EINVAL;
	}
	if (infinite && rx == NULL) {
		PCAP_LOG(ERR, "port %s: infinite_rx=1 needs rx_pcap=FILE",
			 port->name);
		return -EINVAL;
	}
	if (rx != NULL && tx != NULL && pcap_same_file(rx, tx)) {
		PCAP_LOG(ERR, "port %s: tx_pcap %s is the rx_pcap file; "
			 "writing would destroy it", port->name, tx);
		return -EINVAL;
	}
	if (pcap_files_clash(port, rx, tx))
		return -EINVAL;
	if (mac != NULL) {
		if (rte_ether_unformat_addr(mac, &ea) != 0 ||
		    !rte_is_valid_assigned_ether_addr(&ea)) {
			PCAP_LOG(ERR, "port %s: mac=%s must be a unicast, "
				 "non-zero XX:XX:XX:XX:XX:XX address",
				 port->name, mac);
			return -EINVAL;
		}
	}
	pp = rte_zmalloc("pcap_port", sizeof(*pp), RTE_CACHE_LINE_SIZE);
	if (pp == NULL)
		return -ENOMEM;
	port->priv = pp;
	pp->infinite = (uint8_t)infinite;
	pp->rx_path = rx != NULL ? strdup(rx) : NULL;
	pp->tx_path = tx != NULL ? strdup(tx) : NULL;
	if ((rx != NULL && pp->rx_path == NULL) ||
	    (tx != NULL && pp->tx_path == NULL)) {
		ret = -ENOMEM;
		goto fail;
	}
	pp->rxq.path = pp->rx_path;
	pp->rxq.port_name = port->name;
	if (rx != NULL) {
		ret = pcap_rx_open(port, pp);
		if (ret < 0)
			goto fail;
	}
	if (mac != NULL)
		rte_ether_addr_copy(&ea, &port->mac);
	port->ops = &pcap_ops;
	return 0;
fail:
	pcap_port_close(port);
	return ret;
}

static struct qpio_port_driver pcap_driver = {
	.name = "pcap",
	.valid_keys = pcap_valid_keys,
	.probe = pcap_probe,
};

QPIO_PORT_DRIVER_REGISTER(pcap_driver);
