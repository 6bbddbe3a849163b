/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frames the kernel drops in front of net_af_packet, read from the PMD's
 * own sockets. DPDK 22.11's net_af_packet reports no imissed at all: a
 * ring the application does not empty in time loses frames without a
 * trace. The kernel counts them per socket (PACKET_STATISTICS tp_drops,
 * cleared by each read); the sockets are this process's own file
 * descriptors, found by family and bound interface (getsockname()).
 *
 * net_af_xdp needs none of this: its imissed has XDP_STATISTICS
 * rx_dropped, and the frames an XDP program cannot redirect into a full
 * AF_XDP ring are counted by the interface's driver in its rx_dropped
 * (veth does), where the kernel shows them (ip -s link).
 */

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/if_packet.h>

#include "eth_private.h"

#ifndef SOL_PACKET
#define SOL_PACKET 263
#endif

/* The interface an AF_PACKET socket fd is bound to, or -1 when fd is not
 * one. */
static int
afp_ifindex(int fd)
{
	struct sockaddr_ll ll;
	socklen_t len = sizeof(int);
	int dom = -1;

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) != 0 ||
	    dom != AF_PACKET)
		return -1;
	len = sizeof(ll);
	memset(&ll, 0, sizeof(ll));
	if (getsockname(fd, (struct sockaddr *)&ll, &len) != 0)
		return -1;
	return ll.sll_ifindex;
}

void
eth_kdrops_find(struct eth_port *ep)
{
	struct rte_eth_dev_info di;
	struct dirent *de;
	DIR *d;

	ep->nb_ksock = 0;
	if (rte_eth_dev_info_get(ep->eth_id, &di) != 0 ||
	    di.driver_name == NULL || di.if_index == 0 ||
	    strcmp(di.driver_name, "net_af_packet") != 0)
		return;
	ep->ksock_ifindex = (int)di.if_index;
	d = opendir("/proc/self/fd");
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL && ep->nb_ksock < ETH_MAX_KSOCKS) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);

		if (*end != '\0' || end == de->d_name || fd == dirfd(d))
			continue;
		if (afp_ifindex((int)fd) == ep->ksock_ifindex)
			ep->ksock[ep->nb_ksock++] = (int)fd;
	}
	closedir(d);
	ETH_LOG(DEBUG, "%s: %u AF_PACKET sockets for its drop counters",
		ep->dev_name, ep->nb_ksock);
}

uint64_t
eth_kdrops_get(struct eth_port *ep)
{
	struct tpacket_stats ts;
	socklen_t len;
	unsigned int i;

	for (i = 0; i < ep->nb_ksock; i++) {
		/* a closed and reused descriptor is no longer the PMD's */
		if (afp_ifindex(ep->ksock[i]) != ep->ksock_ifindex)
			continue;
		len = sizeof(ts);
		if (getsockopt(ep->ksock[i], SOL_PACKET, PACKET_STATISTICS, &ts,
			       &len) == 0)
			ep->kdrops += ts.tp_drops;
	}
	return ep->kdrops;
}

void
eth_kdrops_reset(struct eth_port *ep)
{
	(void)eth_kdrops_get(ep);
	ep->kdrops = 0;
}
