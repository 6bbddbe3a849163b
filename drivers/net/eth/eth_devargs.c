/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Eth port devargs: where the ethdev comes from (vdev=, port=, name=) and
 * the PMD keys handed on to rte_vdev_init().
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_kvargs.h>

#include "eth_private.h"

/* Keys of the eth driver itself. */
static const char *const eth_own_keys[] = {
	"vdev", "port", "name", "promisc", NULL,
};

/*
 * Our keys, then the keys of the virtual PMDs this driver was tried with
 * (DPDK 22.11): net_af_packet, net_af_xdp, net_null, net_ring, net_pcap,
 * net_tap, net_memif. Each PMD checks its own keys again at rte_vdev_init.
 */
const char *const eth_valid_keys[] = {
	"vdev", "port", "name", "promisc",
	/* net_af_packet, net_af_xdp, net_tap, net_pcap */
	"iface", "qpairs", "blocksz", "framesz", "framecnt", "qdisc_bypass",
	"start_queue", "queue_count", "shared_umem", "xdp_prog",
	"busy_budget", "force_copy",
	/* net_null */
	"size", "copy", "no-rx",
	/* net_ring */
	"nodeaction",
	/* net_pcap */
	"rx_pcap", "tx_pcap", "rx_iface", "rx_iface_in", "tx_iface",
	"phy_mac", "infinite_rx",
	/* net_tap, net_memif */
	"mac", "remote", "persist", "id", "role", "bsize", "rsize",
	"socket", "socket-abstract", "secret", "zero-copy",
	NULL,
};

static int
eth_own_key(const char *key)
{
	unsigned int i;

	for (i = 0; eth_own_keys[i] != NULL; i++)
		if (strcmp(key, eth_own_keys[i]) == 0)
			return 1;
	return 0;
}

/* Append the PMD keys of kvlist, in their order, to args->vdev_args. */
static int
eth_vdev_args_build(const struct qpio_port *port,
		    const struct rte_kvargs *kvlist, struct eth_args *args,
		    const char **first_pmd_key)
{
	size_t off = 0;
	unsigned int i;
	int len;

	args->vdev_args[0] = '\0';
	*first_pmd_key = NULL;
	for (i = 0; kvlist != NULL && i < kvlist->count; i++) {
		const struct rte_kvargs_pair *kv = &kvlist->pairs[i];

		if (eth_own_key(kv->key))
			continue;
		if (*first_pmd_key == NULL)
			*first_pmd_key = kv->key;
		len = snprintf(args->vdev_args + off,
			       sizeof(args->vdev_args) - off, "%s%s=%s",
			       off > 0 ? "," : "", kv->key,
			       kv->value != NULL ? kv->value : "");
		if (len < 0 || (size_t)len >= sizeof(args->vdev_args) - off) {
			ETH_LOG(ERR, "port %s: PMD arguments longer than %u "
				"characters", port->name, ETH_VDEV_ARGS_LEN - 1);
			return -EINVAL;
		}
		off += (size_t)len;
	}
	return 0;
}

int
eth_args_parse(const struct qpio_port *port, const struct rte_kvargs *kvlist,
	       struct eth_args *args)
{
	const char *pmd_key;
	unsigned int nb_src;

	memset(args, 0, sizeof(*args));
	args->promisc = 1;
	if (kvlist == NULL) {
		ETH_LOG(ERR, "port %s: give the ethdev: vdev=net_<pmd><n>[,PMD "
			"keys], port=<ethdev port id> or name=<ethdev name> "
			"(doc/guides/nics/eth.rst)", port->name);
		return -EINVAL;
	}
	if (qpio_port_kvargs_str(port, kvlist, "vdev", &args->vdev) < 0 ||
	    qpio_port_kvargs_str(port, kvlist, "name", &args->name) < 0 ||
	    qpio_port_kvargs_u32(port, kvlist, "port", 0, RTE_MAX_ETHPORTS - 1,
				 &args->port) < 0 ||
	    qpio_port_kvargs_u32(port, kvlist, "promisc", 0, 1,
				 &args->promisc) < 0)
		return -EINVAL;
	args->has_port = rte_kvargs_count(kvlist, "port") > 0;
	if (eth_vdev_args_build(port, kvlist, args, &pmd_key) < 0)
		return -EINVAL;
	if (pmd_key != NULL && args->vdev == NULL) {
		ETH_LOG(ERR, "port %s: %s= is a PMD key: it needs vdev= (a "
			"device EAL probed got its keys from --vdev/-a)",
			port->name, pmd_key);
		return -EINVAL;
	}
	nb_src = (args->vdev != NULL) + (args->name != NULL) + args->has_port;
	if (nb_src != 1) {
		ETH_LOG(ERR, "port %s: give exactly one of vdev=, port=, name= "
			"(%u given)", port->name, nb_src);
		return -EINVAL;
	}
	if (args->vdev != NULL && strncmp(args->vdev, "net_", 4) != 0) {
		ETH_LOG(ERR, "port %s: vdev=%s must name a virtual ethdev "
			"(net_<pmd><n>, e.g. net_af_packet0)", port->name,
			args->vdev);
		return -EINVAL;
	}
	return 0;
}
