/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-testpmd --capture PORT[/rx|/tx]=FILE[,snaplen=N,max-mb=N]: a
 * qpio_port_capture (lib/port) per option, tapped by the streams.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include "qpio_devargs.h"
#include "testpmd_app.h"

#define BAD(...) do { \
	fprintf(stderr, "qpio-testpmd: " __VA_ARGS__); \
	fputc('\n', stderr); \
	return -EINVAL; \
} while (0)

/* lib/devargs' rule: decimal digits only, in [0, max]. */
static int
parse_num(const char *spec, const char *key, const char *s, uint32_t max,
	  uint32_t *out)
{
	if (qpio_devargs_parse_u32(s, 0, max, out) < 0)
		BAD("--capture %s: %s=%s must be a decimal integer in [0, %u]",
		    spec, key, s, max);
	return 0;
}

int
testpmd_capture_parse(const char *spec, struct testpmd_capture *c)
{
	char buf[PATH_MAX + 64], *eq, *slash, *opt, *save = NULL;
	size_t n;
	uint32_t v;

	memset(c, 0, sizeof(*c));
	c->spec = spec;
	if (snprintf(buf, sizeof(buf), "%s", spec) >= (int)sizeof(buf))
		BAD("--capture: longer than %zu characters", sizeof(buf) - 1);
	eq = strchr(buf, '=');
	if (eq == NULL || eq == buf || eq[1] == '\0' || eq[1] == ',')
		BAD("--capture %s: want PORT[/rx|/tx]=FILE.pcapng"
		    "[,snaplen=N,max-mb=N]", spec);
	*eq++ = '\0';
	/* strtok_r() would skip an empty item silently. */
	n = strlen(eq);
	if (eq[n - 1] == ',' || strstr(eq, ",,") != NULL)
		BAD("--capture %s: empty item in the list", spec);
	slash = strchr(buf, '/');
	c->dirs = QPIO_PORT_CAPTURE_RX | QPIO_PORT_CAPTURE_TX;
	if (slash != NULL) {
		*slash++ = '\0';
		if (strcmp(slash, "rx") == 0)
			c->dirs = QPIO_PORT_CAPTURE_RX;
		else if (strcmp(slash, "tx") == 0)
			c->dirs = QPIO_PORT_CAPTURE_TX;
		else
			BAD("--capture %s: direction '%s' must be rx or tx "
			    "(or none: both)", spec, slash);
	}
	if (qpio_devargs_parse_u32(buf, 0, QPIO_MAX_PORTS - 1, &v) < 0)
		BAD("--capture %s: port '%s' must be a port id below %u", spec,
		    buf, QPIO_MAX_PORTS);
	c->port = (uint16_t)v;
	opt = strtok_r(eq, ",", &save);
	snprintf(c->path, sizeof(c->path), "%s", opt);
	while ((opt = strtok_r(NULL, ",", &save)) != NULL) {
		if (strncmp(opt, "snaplen=", 8) == 0) {
			if (parse_num(spec, "snaplen", opt + 8, 65000, &v) < 0)
				return -EINVAL;
			c->snaplen = v;
		} else if (strncmp(opt, "max-mb=", 7) == 0) {
			if (parse_num(spec, "max-mb", opt + 7, 1u << 20, &v) < 0)
				return -EINVAL;
			c->max_bytes = (uint64_t)v << 20;
		} else {
			BAD("--capture %s: unknown key '%s' (snaplen=N, "
			    "max-mb=N)", spec, opt);
		}
	}
	return 0;
}

int
testpmd_captures_start(struct testpmd *t)
{
	unsigned int i;

	for (i = 0; i < t->o.nb_captures; i++) {
		struct testpmd_capture *c = &t->o.captures[i];
		struct qpio_port_capture_conf conf = {
			.path = c->path,
			.snaplen = c->snaplen,
			.max_bytes = c->max_bytes,
		};

		c->cap = qpio_port_capture_start(c->port, &conf);
		if (c->cap == NULL) {
			fprintf(stderr, "qpio-testpmd: --capture %u -> %s: %s\n",
				c->port, c->path,
				testpmd_strerror(rte_errno));
			return -1;
		}
		printf("Capturing port %u%s to %s\n", c->port,
		       c->dirs == QPIO_PORT_CAPTURE_RX ? " rx" :
		       c->dirs == QPIO_PORT_CAPTURE_TX ? " tx" : "", c->path);
	}
	testpmd_captures_attach(t);
	return 0;
}

void
testpmd_captures_attach(struct testpmd *t)
{
	unsigned int i, s;

	for (s = 0; s < t->nb_streams; s++) {
		struct fwd_stream *fs = &t->streams[s];

		fs->cap_rx = NULL;
		fs->cap_tx = NULL;
		for (i = 0; i < t->o.nb_captures; i++) {
			const struct testpmd_capture *c = &t->o.captures[i];

			if (c->cap == NULL)
				continue;
			if ((c->dirs & QPIO_PORT_CAPTURE_RX) &&
			    c->port == fs->rx_port && !fs->engine->generator)
				fs->cap_rx = c->cap;
			if ((c->dirs & QPIO_PORT_CAPTURE_TX) &&
			    c->port == fs->tx_port && !fs->engine->no_tx)
				fs->cap_tx = c->cap;
		}
	}
}

int
testpmd_captures_stop(struct testpmd *t)
{
	struct qpio_port_capture_stats st;
	unsigned int i;
	int ret, status = 0;

	for (i = 0; i < t->o.nb_captures; i++) {
		struct testpmd_capture *c = &t->o.captures[i];

		if (c->cap == NULL)
			continue;
		ret = qpio_port_capture_stop(c->cap, &st);
		c->cap = NULL;
		printf("Capture port %u -> %s: %" PRIu64 " frames tapped, %"
		       PRIu64 " written, %" PRIu64 " dropped, %u files, %"
		       PRIu64 " bytes\n", c->port, c->path, st.tapped,
		       st.written, st.dropped, st.files, st.bytes);
		if (ret < 0) {
			fprintf(stderr, "qpio-testpmd: capture %s: %s\n",
				c->path, testpmd_strerror(-ret));
			status = -1;
		}
	}
	fflush(stdout);
	return status;
}
