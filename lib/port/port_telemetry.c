/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Telemetry commands of lib/port, registered once when the library is
 * loaded, so that any application linking qpio answers them on EAL's
 * telemetry socket (dpdk-telemetry.py, no plugin):
 *
 *   /qpio/port/list          port ids
 *   /qpio/port/info,ID       name, driver, state, queues, MAC, limits
 *   /qpio/port/stats,ID      basic counters (as qpio_port_stats_get())
 *   /qpio/port/xstats,ID     extended counters by name
 *   /qpio/port/link,ID       link status, speed, duplex
 *
 * The callbacks run on the telemetry thread and read counters as
 * qpio_port_stats_get() does while the lcores forward; they take no lock
 * against qpio_port_create()/qpio_port_close() of other threads, as
 * ethdev's telemetry does not either.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_telemetry.h>

#include "port_driver.h"
#include "qpio_devargs.h"

/* "ID" of a command's parameters: a decimal port id of a live port. */
static int
tel_port_id(const char *params, uint16_t *port_id)
{
	uint32_t v;

	if (qpio_devargs_parse_u32(params, 0, QPIO_MAX_PORTS - 1, &v) < 0 ||
	    !qpio_port_is_valid((uint16_t)v))
		return -EINVAL;
	*port_id = (uint16_t)v;
	return 0;
}

static int
tel_port_list(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint16_t p;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (p = 0; p < QPIO_MAX_PORTS; p++)
		if (qpio_port_is_valid(p))
			rte_tel_data_add_array_int(d, p);
	return 0;
}

static int
tel_port_info(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char mac[RTE_ETHER_ADDR_FMT_SIZE];
	struct qpio_port_info info;
	struct qpio_port *port;
	uint16_t id;

	RTE_SET_USED(cmd);
	if (tel_port_id(params, &id) < 0 || qpio_port_info_get(id, &info) < 0)
		return -EINVAL;
	port = qpio_port_get(id);
	rte_ether_format_addr(mac, sizeof(mac), &port->mac);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "port_id", id);
	rte_tel_data_add_dict_string(d, "name", info.name);
	rte_tel_data_add_dict_string(d, "driver", info.driver);
	rte_tel_data_add_dict_string(d, "state", port->started ? "started" :
				     port->configured ? "configured" :
				     "created");
	rte_tel_data_add_dict_int(d, "nb_rx_queues", port->nb_rxq);
	rte_tel_data_add_dict_int(d, "nb_tx_queues", port->nb_txq);
	rte_tel_data_add_dict_string(d, "mac_addr", mac);
	rte_tel_data_add_dict_u64(d, "max_rx_pkt_len", info.max_rx_pkt_len);
	rte_tel_data_add_dict_int(d, "socket_id", info.socket_id);
	return 0;
}

static int
tel_port_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct qpio_port_stats st;
	uint16_t id;

	RTE_SET_USED(cmd);
	if (tel_port_id(params, &id) < 0 || qpio_port_stats_get(id, &st) < 0)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "ipackets", st.ipackets);
	rte_tel_data_add_dict_u64(d, "opackets", st.opackets);
	rte_tel_data_add_dict_u64(d, "ibytes", st.ibytes);
	rte_tel_data_add_dict_u64(d, "obytes", st.obytes);
	rte_tel_data_add_dict_u64(d, "imissed", st.imissed);
	rte_tel_data_add_dict_u64(d, "ierrors", st.ierrors);
	rte_tel_data_add_dict_u64(d, "oerrors", st.oerrors);
	rte_tel_data_add_dict_u64(d, "rx_nombuf", st.rx_nombuf);
	return 0;
}

static int
tel_port_xstats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct qpio_port_xstat_name *names = NULL;
	struct qpio_port_xstat *vals = NULL;
	int n, i, ret = -EINVAL;
	uint16_t id;

	RTE_SET_USED(cmd);
	if (tel_port_id(params, &id) < 0)
		return -EINVAL;
	n = qpio_port_xstats_names_get(id, NULL, 0);
	if (n < 0)
		return -EINVAL;
	names = calloc(n + 1, sizeof(*names));
	vals = calloc(n + 1, sizeof(*vals));
	if (names == NULL || vals == NULL ||
	    qpio_port_xstats_names_get(id, names, n) != n ||
	    qpio_port_xstats_get(id, vals, n) != n)
		goto out;
	rte_tel_data_start_dict(d);
	for (i = 0; i < n; i++)
		rte_tel_data_add_dict_u64(d, names[i].name, vals[i].value);
	ret = 0;
out:
	free(names);
	free(vals);
	return ret;
}

static int
tel_port_link(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct qpio_port_link link;
	uint16_t id;

	RTE_SET_USED(cmd);
	if (tel_port_id(params, &id) < 0 || qpio_port_link_get(id, &link) < 0)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "status", link.up ? "UP" : "DOWN");
	if (link.up) {
		rte_tel_data_add_dict_u64(d, "speed", link.speed_mbps);
		rte_tel_data_add_dict_string(d, "duplex", link.full_duplex ?
					     "full-duplex" : "half-duplex");
	}
	return 0;
}

RTE_INIT(qpio_port_telemetry_init)
{
	rte_telemetry_register_cmd("/qpio/port/list", tel_port_list,
		"Returns the qpio port ids. Takes no parameters");
	rte_telemetry_register_cmd("/qpio/port/info", tel_port_info,
		"Returns name, driver, state, queues and MAC of a qpio port. "
		"Parameters: int port_id");
	rte_telemetry_register_cmd("/qpio/port/stats", tel_port_stats,
		"Returns the basic counters of a qpio port. "
		"Parameters: int port_id");
	rte_telemetry_register_cmd("/qpio/port/xstats", tel_port_xstats,
		"Returns the extended counters of a qpio port. "
		"Parameters: int port_id");
	rte_telemetry_register_cmd("/qpio/port/link", tel_port_link,
		"Returns the link status of a qpio port. "
		"Parameters: int port_id");
}
