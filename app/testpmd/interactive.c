/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-testpmd -i: the command prompt, on DPDK's cmdline library, with
 * the commands of DPDK testpmd that a forwarding run needs.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cmdline.h>
#include <cmdline_parse.h>
#include <cmdline_parse_num.h>
#include <cmdline_parse_string.h>
#include <cmdline_socket.h>

#include "testpmd_app.h"

static struct testpmd *tp;

struct res_word {
	cmdline_fixed_string_t w;
};

struct res_3 {
	cmdline_fixed_string_t a, b, c;
};

struct res_port {
	cmdline_fixed_string_t a, b, c;
	uint16_t port;
};

struct res_set_fwd {
	cmdline_fixed_string_t set, fwd, mode;
};

/* start / stop / quit / help */

static void
cmd_start_cb(void *res, struct cmdline *cl, void *data)
{
	RTE_SET_USED(res);
	RTE_SET_USED(cl);
	RTE_SET_USED(data);
	if (tp->running) {
		printf("Forwarding already started\n");
		return;
	}
	if (testpmd_fwd_start(tp) == 0)
		printf("Forwarding started.\n");
	fflush(stdout);
}

static void
cmd_stop_cb(void *res, struct cmdline *cl, void *data)
{
	RTE_SET_USED(res);
	RTE_SET_USED(cl);
	RTE_SET_USED(data);
	if (!tp->running) {
		printf("Forwarding not started\n");
		fflush(stdout);
		return;
	}
	testpmd_fwd_stop(tp, 0);
}

static void
cmd_quit_cb(void *res, struct cmdline *cl, void *data)
{
	RTE_SET_USED(res);
	RTE_SET_USED(data);
	testpmd_fwd_stop(tp, 0);
	cmdline_quit(cl);
}

static void
cmd_help_cb(void *res, struct cmdline *cl, void *data)
{
	RTE_SET_USED(res);
	RTE_SET_USED(cl);
	RTE_SET_USED(data);
	printf("Commands:\n"
	       "  start                      start forwarding\n"
	       "  stop                       stop forwarding, print forward "
	       "statistics\n"
	       "  show port stats all|N      port counters and rates since "
	       "the last show\n"
	       "  show port xstats all|N     extended statistics\n"
	       "  clear port stats all       reset the port counters\n"
	       "  set fwd MODE[,MODE...]     forwarding modes (%s)\n"
	       "  show config fwd            streams and lcores\n"
	       "  quit                       stop and exit\n",
	       fwd_engine_names());
	fflush(stdout);
}

#define WORD_CMD(name, word, help) \
static cmdline_parse_token_string_t tok_ ## name = \
	TOKEN_STRING_INITIALIZER(struct res_word, w, word); \
static cmdline_parse_inst_t cmd_ ## name = { \
	.f = cmd_ ## name ## _cb, \
	.help_str = help, \
	.tokens = { (void *)&tok_ ## name, NULL }, \
}

WORD_CMD(start, "start", "start: start forwarding");
WORD_CMD(stop, "stop", "stop: stop forwarding");
WORD_CMD(quit, "quit", "quit: stop forwarding and exit");
WORD_CMD(help, "help", "help: list the commands");

/* show port stats|xstats all, clear port stats all, show config fwd */

static void
show_xstats(uint16_t port)
{
	struct stats_xstats x;

	if (stats_xstats_get(port, &x) < 0) {
		printf("port %u: cannot read extended statistics\n", port);
		return;
	}
	stats_xstats_print(port, &x, 1);
	stats_xstats_free(&x);
}

static void
clear_stats(void)
{
	uint16_t p;
	int ret;

	for (p = 0; p < tp->nb_ports; p++) {
		ret = qpio_port_stats_reset(p);
		if (ret < 0)
			printf("port %u: reset: %s\n", p,
			       testpmd_strerror(-ret));
		else
			printf("  NIC statistics for port %u cleared\n", p);
	}
	stats_snapshot(tp->snap, tp->nb_ports);
}

/* The token strings are checked by the parser: "stats" and "xstats"
 * differ in their first letter. */
static int
is_xstats(const char *kind)
{
	return kind[0] == 'x';
}

static void
cmd_show_port_all_cb(void *res, struct cmdline *cl, void *data)
{
	const struct res_3 *r = res;
	uint16_t p;

	RTE_SET_USED(cl);
	RTE_SET_USED(data);
	if (!is_xstats(r->c))
		testpmd_show_stats(tp);
	else
		for (p = 0; p < tp->nb_ports; p++)
			show_xstats(p);
	fflush(stdout);
}

static void
cmd_clear_cb(void *res, struct cmdline *cl, void *data)
{
	RTE_SET_USED(res);
	RTE_SET_USED(cl);
	RTE_SET_USED(data);
	clear_stats();
	fflush(stdout);
}

static void
cmd_show_config_cb(void *res, struct cmdline *cl, void *data)
{
	RTE_SET_USED(res);
	RTE_SET_USED(cl);
	RTE_SET_USED(data);
	testpmd_print_config(tp);
}

static cmdline_parse_token_string_t tok_show =
	TOKEN_STRING_INITIALIZER(struct res_3, a, "show");
static cmdline_parse_token_string_t tok_clear =
	TOKEN_STRING_INITIALIZER(struct res_3, a, "clear");
static cmdline_parse_token_string_t tok_port =
	TOKEN_STRING_INITIALIZER(struct res_3, b, "port");
static cmdline_parse_token_string_t tok_config =
	TOKEN_STRING_INITIALIZER(struct res_3, b, "config");
static cmdline_parse_token_string_t tok_stats_kind =
	TOKEN_STRING_INITIALIZER(struct res_3, c, "stats#xstats");
static cmdline_parse_token_string_t tok_stats =
	TOKEN_STRING_INITIALIZER(struct res_3, c, "stats");
static cmdline_parse_token_string_t tok_fwd_word =
	TOKEN_STRING_INITIALIZER(struct res_3, c, "fwd");

/* The fourth token lands after the three strings. */
struct res_3all {
	cmdline_fixed_string_t a, b, c, all;
};
static cmdline_parse_token_string_t tok_all4 =
	TOKEN_STRING_INITIALIZER(struct res_3all, all, "all");

static cmdline_parse_inst_t cmd_show_port_all = {
	.f = cmd_show_port_all_cb,
	.help_str = "show port stats|xstats all",
	.tokens = { (void *)&tok_show, (void *)&tok_port,
		    (void *)&tok_stats_kind, (void *)&tok_all4, NULL },
};

static cmdline_parse_inst_t cmd_clear_port_all = {
	.f = cmd_clear_cb,
	.help_str = "clear port stats all",
	.tokens = { (void *)&tok_clear, (void *)&tok_port,
		    (void *)&tok_stats, (void *)&tok_all4, NULL },
};

static cmdline_parse_inst_t cmd_show_config_fwd = {
	.f = cmd_show_config_cb,
	.help_str = "show config fwd",
	.tokens = { (void *)&tok_show, (void *)&tok_config,
		    (void *)&tok_fwd_word, NULL },
};

/* show port stats|xstats N */

static void
cmd_show_port_n_cb(void *res, struct cmdline *cl, void *data)
{
	const struct res_port *r = res;
	struct stats_period s;

	RTE_SET_USED(cl);
	RTE_SET_USED(data);
	if (r->port >= tp->nb_ports) {
		printf("port %u: no such port (ports 0..%u)\n", r->port,
		       tp->nb_ports - 1u);
	} else if (is_xstats(r->c)) {
		show_xstats(r->port);
	} else if (stats_period_get(tp->snap, r->port, &s) == 0) {
		stats_period_print(&s);
	}
	fflush(stdout);
}

static cmdline_parse_token_num_t tok_port_id =
	TOKEN_NUM_INITIALIZER(struct res_port, port, RTE_UINT16);

static cmdline_parse_inst_t cmd_show_port_n = {
	.f = cmd_show_port_n_cb,
	.help_str = "show port stats|xstats <port_id>",
	.tokens = { (void *)&tok_show, (void *)&tok_port,
		    (void *)&tok_stats_kind, (void *)&tok_port_id, NULL },
};

/* set fwd MODE[,MODE...] */

static void
cmd_set_fwd_cb(void *res, struct cmdline *cl, void *data)
{
	const struct res_set_fwd *r = res;
	int ret;

	RTE_SET_USED(cl);
	RTE_SET_USED(data);
	ret = testpmd_set_modes(tp, r->mode);
	if (ret == -EBUSY)
		printf("Please stop forwarding first\n");
	else if (ret == 0)
		printf("Set %s packet forwarding mode\n", r->mode);
	fflush(stdout);
}

static cmdline_parse_token_string_t tok_set =
	TOKEN_STRING_INITIALIZER(struct res_set_fwd, set, "set");
static cmdline_parse_token_string_t tok_fwd =
	TOKEN_STRING_INITIALIZER(struct res_set_fwd, fwd, "fwd");
static cmdline_parse_token_string_t tok_mode =
	TOKEN_STRING_INITIALIZER(struct res_set_fwd, mode, NULL);

static cmdline_parse_inst_t cmd_set_fwd = {
	.f = cmd_set_fwd_cb,
	.help_str = "set fwd <mode>[,<mode>...]",
	.tokens = { (void *)&tok_set, (void *)&tok_fwd, (void *)&tok_mode,
		    NULL },
};

static cmdline_parse_ctx_t main_ctx[] = {
	&cmd_start, &cmd_stop, &cmd_quit, &cmd_help,
	&cmd_show_port_all, &cmd_show_port_n, &cmd_clear_port_all,
	&cmd_show_config_fwd, &cmd_set_fwd,
	NULL,
};

void
testpmd_prompt(struct testpmd *t)
{
	struct cmdline *cl;

	tp = t;
	printf("Interactive mode: type help for the commands.\n");
	fflush(stdout);
	cl = cmdline_stdin_new(main_ctx, "testpmd> ");
	if (cl == NULL) {
		fprintf(stderr, "qpio-testpmd: cannot open the prompt\n");
		return;
	}
	cmdline_interact(cl);
	cmdline_stdin_exit(cl);
	printf("\n");
	testpmd_fwd_stop(t, 0);
	tp = NULL;
}
