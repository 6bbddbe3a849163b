/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ports for the ethdevs EAL created from --vdev and -a, as dpdk-testpmd
 * users expect: ethdev N becomes eth port "ethN" (devargs
 * "ethN,port=N"), placed before the --dev ports so that it keeps the port
 * id it has in DPDK when it is the only source. An ethdev that a
 * --rdma-dev names as its wire= is that soft device's, not a port.
 */

#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_kvargs.h>

#include "testpmd_app.h"

/* Devargs strings of the ethdev ports; opts->devs points into them. */
static char ethdev_devargs[QPIO_MAX_PORTS][32];

/* The --rdma-dev whose wire= names ethdev name (soft.rst: "wire=<ethdev
 * name>"), else NULL. */
static const char *
wire_owner(const struct testpmd_opts *o, const char *name)
{
	struct rte_kvargs *kv;
	const char *comma, *wire;
	uint16_t i;
	int match;

	for (i = 0; i < o->nb_rdma_devs; i++) {
		comma = strchr(o->rdma_devs[i], ',');
		if (comma == NULL)
			continue;
		kv = rte_kvargs_parse(comma + 1, NULL);
		if (kv == NULL)
			continue;   /* the device's own create names the error */
		wire = rte_kvargs_get(kv, "wire");
		match = wire != NULL && strcmp(wire, name) == 0;
		rte_kvargs_free(kv);
		if (match)
			return o->rdma_devs[i];
	}
	return NULL;
}

int
testpmd_ethdev_ports_add(struct testpmd_opts *o)
{
	const char *owner;
	const char *devs[QPIO_MAX_PORTS];
	char name[RTE_ETH_NAME_MAX_LEN];
	uint16_t eid, n = 0, i;

	RTE_ETH_FOREACH_DEV(eid) {
		if (n + o->nb_devs >= QPIO_MAX_PORTS) {
			fprintf(stderr, "qpio-testpmd: %u ethdevs and %u --dev "
				"ports exceed QPIO_MAX_PORTS (%u)\n",
				rte_eth_dev_count_avail(), o->nb_devs,
				QPIO_MAX_PORTS);
			return -1;
		}
		if (rte_eth_dev_get_name_by_port(eid, name) != 0)
			snprintf(name, sizeof(name), "?");
		owner = wire_owner(o, name);
		if (owner != NULL) {
			printf("qpio-testpmd: ethdev %u (%s) is the wire of "
			       "--rdma-dev %s, not a port\n", eid, name, owner);
			continue;
		}
		snprintf(ethdev_devargs[n], sizeof(ethdev_devargs[n]),
			 "eth%u,port=%u", eid, eid);
		printf("qpio-testpmd: ethdev %u (%s) is port eth%u\n", eid,
		       name, eid);
		devs[n] = ethdev_devargs[n];
		n++;
	}
	if (n == 0)
		return 0;
	for (i = 0; i < o->nb_devs; i++)
		devs[n + i] = o->devs[i];
	memcpy(o->devs, devs, (n + o->nb_devs) * sizeof(devs[0]));
	o->nb_devs += n;
	return 0;
}
