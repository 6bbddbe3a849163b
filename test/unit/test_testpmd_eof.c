/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-testpmd end-of-input watch, against a port driver of this test
 * ("eoft") whose only extended statistic is rx_eof.
 */
#include <errno.h>
#include <string.h>

#include "port_driver.h"
#include "qpio_port.h"
#include "test_common.h"
#include "testpmd.h"

static uint64_t eoft_value;

static void
eoft_info_get(struct qpio_port *port, struct qpio_port_info *info)
{
	RTE_SET_USED(port);
	info->max_rx_queues = 1;
	info->max_tx_queues = 1;
	info->min_desc = 1;
	info->max_desc = 64;
	info->max_rx_pkt_len = 1518;
}

static void
eoft_close(struct qpio_port *port)
{
	RTE_SET_USED(port);
}

static void
eoft_stats_get(struct qpio_port *port, struct qpio_port_stats *st)
{
	RTE_SET_USED(port);
	RTE_SET_USED(st);
}

static void
eoft_stats_reset(struct qpio_port *port)
{
	RTE_SET_USED(port);
}

static int
eoft_xstats_names(struct qpio_port *port, struct qpio_port_xstat_name *names,
		  unsigned int n)
{
	RTE_SET_USED(port);
	if (names != NULL && n >= 1)
		snprintf(names[0].name, sizeof(names[0].name), "rx_eof");
	return 1;
}

static int
eoft_xstats_values(struct qpio_port *port, uint64_t *values, unsigned int n)
{
	RTE_SET_USED(port);
	if (n >= 1)
		values[0] = eoft_value;
	return 1;
}

static const struct qpio_port_ops eoft_ops = {
	.info_get = eoft_info_get,
	.close = eoft_close,
	.stats_get = eoft_stats_get,
	.stats_reset = eoft_stats_reset,
	.xstats_names = eoft_xstats_names,
	.xstats_values = eoft_xstats_values,
};

static int
eoft_probe(struct qpio_port *port, const struct rte_kvargs *kvlist)
{
	RTE_SET_USED(kvlist);
	port->ops = &eoft_ops;
	return 0;
}

static const char *const eoft_keys[] = { NULL };

static struct qpio_port_driver eoft_driver = {
	.name = "eoft",
	.valid_keys = eoft_keys,
	.probe = eoft_probe,
};

QPIO_PORT_DRIVER_REGISTER(eoft_driver);

TestSuite(testpmd_eof, .init = qt_eal_init, .fini = qt_eal_fini);

Test(testpmd_eof, driver_xstat_follows_the_generic_ones)
{
	struct qpio_port_xstat_name names[9];
	struct qpio_port_xstat vals[9];
	uint64_t v = 0;

	cr_assert_eq(qpio_port_create("eoft0"), 0);
	eoft_value = 1;
	cr_assert_eq(qpio_port_xstats_names_get(0, NULL, 0), 9);
	cr_assert_eq(qpio_port_xstats_names_get(0, names, 9), 9);
	cr_assert_str_eq(names[0].name, "rx_good_packets");
	cr_assert_str_eq(names[8].name, "rx_eof");
	cr_assert_eq(qpio_port_xstats_get(0, vals, 8), 9);   /* too small */
	cr_assert_eq(qpio_port_xstats_get(0, vals, 9), 9);
	cr_assert_eq(vals[8].id, 8);
	cr_assert_eq(vals[8].value, 1);
	cr_assert_eq(qpio_port_xstat_get_by_name(0, "rx_eof", &v), 0);
	cr_assert_eq(v, 1);
	cr_assert_eq(qpio_port_xstat_get_by_name(0, "rx_nope", &v), -ENOENT);
	cr_assert_eq(qpio_port_close(0), 0);
}

Test(testpmd_eof, stops_when_every_input_ended_and_nothing_moved)
{
	struct fwd_eof_watch w;

	eoft_value = 0;
	cr_assert_eq(qpio_port_create("ring0"), 0);
	cr_assert_eq(qpio_port_create("eoft1"), 1);
	cr_assert_eq(fwd_eof_watch_init(&w, 2), 1);
	cr_assert_eq(w.has_eof[0], 0);
	cr_assert_eq(w.has_eof[1], 1);
	cr_assert_eq(fwd_eof_watch_check(&w, 0, 1000, 100), 0);   /* primes */
	cr_assert_eq(fwd_eof_watch_check(&w, 0, 1099, 100), 0);   /* too soon */
	cr_assert_eq(fwd_eof_watch_check(&w, 0, 1100, 100), 0);   /* no eof */
	eoft_value = 1;
	cr_assert_eq(fwd_eof_watch_check(&w, 0, 1100, 100), 1);
	/* Frames moved again: another full quiet period is needed. */
	cr_assert_eq(fwd_eof_watch_check(&w, 7, 1150, 100), 0);
	cr_assert_eq(fwd_eof_watch_check(&w, 7, 1249, 100), 0);
	cr_assert_eq(fwd_eof_watch_check(&w, 7, 1250, 100), 1);
	cr_assert_eq(qpio_port_close(0), 0);
	cr_assert_eq(qpio_port_close(1), 0);
}

/* A port at its end before forwarding starts (a pcap port with only
 * tx_pcap) is no input: beside a live input (ring0 here, a qp port in
 * the qp_connect receiver) the run must wait for that input, not stop
 * after the first quiet period. */
Test(testpmd_eof, a_port_ended_at_start_is_no_input)
{
	struct fwd_eof_watch w;

	eoft_value = 1;
	cr_assert_eq(qpio_port_create("ring0"), 0);
	cr_assert_eq(qpio_port_create("eoft1"), 1);
	cr_assert_eq(fwd_eof_watch_init(&w, 2), 0);
	cr_assert_eq(w.has_eof[1], 0);
	cr_assert_eq(fwd_eof_watch_check(&w, 0, 0, 100), 0);
	cr_assert_eq(fwd_eof_watch_check(&w, 0, 1000000, 100), 0);
	cr_assert_eq(qpio_port_close(0), 0);
	cr_assert_eq(qpio_port_close(1), 0);
}

Test(testpmd_eof, never_stops_without_an_eof_port)
{
	struct fwd_eof_watch w;

	cr_assert_eq(qpio_port_create("ring0"), 0);
	cr_assert_eq(fwd_eof_watch_init(&w, 1), 0);
	cr_assert_eq(fwd_eof_watch_check(&w, 0, 0, 100), 0);
	cr_assert_eq(fwd_eof_watch_check(&w, 0, 1000000, 100), 0);
	cr_assert_eq(qpio_port_close(0), 0);
}

Test(testpmd_eof, moved_sums_every_stream_counter)
{
	struct fwd_stream s[2];

	memset(s, 0, sizeof(s));
	s[0].rx_packets = 1;
	s[0].tx_packets = 20;
	s[1].fwd_dropped = 300;
	s[1].idle_polls = 4000;   /* not a frame */
	cr_assert_eq(fwd_streams_moved(s, 2), 321);
}
