/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-gateway route configuration: the file loader with its refusals,
 * and the rte_lpm / rte_lpm6 tables built from it.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>

#include "conf_file.h"
#include "gw.h"
#include "qpio_devargs.h"

/* "10.1.0.0/24" or "fd00:1::/64" into p; text is modified. */
static int
prefix_parse(struct conf_file *l, char *text, struct gw_prefix *p)
{
	char *slash = strchr(text, '/');
	uint32_t depth, max;

	if (slash == NULL)
		return conf_refuse(l, "'%s' needs a prefix length "
				   "(address/len)", text);
	*slash = '\0';
	memset(p, 0, sizeof(*p));
	if (inet_pton(AF_INET, text, &p->ip4) == 1) {
		p->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, text, p->ip6) == 1) {
		p->family = AF_INET6;
		max = 128;
	} else {
		return conf_refuse(l, "'%s' is not an IPv4 or IPv6 address",
				   text);
	}
	if (qpio_devargs_parse_u32(slash + 1, 0, max, &depth) < 0)
		return conf_refuse(l, "prefix length '%s' must be 0..%u in "
				   "decimal digits", slash + 1, max);
	p->depth = (uint8_t)depth;
	return 0;
}

/* 1 when p has bits set beyond its length. */
static int
host_bits_set(const struct gw_prefix *p)
{
	unsigned int i, bits;

	if (p->family == AF_INET)
		return p->depth < 32 &&
			(ntohl(p->ip4) & (UINT32_MAX >> p->depth)) != 0;
	for (i = 0; i < 16; i++) {
		bits = p->depth > 8 * i ? p->depth - 8 * i : 0;
		if (bits >= 8)
			continue;
		if ((p->ip6[i] & (0xffu >> bits)) != 0)
			return 1;
	}
	return 0;
}

/* Clear the host bits of p. */
static void
host_bits_clear(struct gw_prefix *p)
{
	unsigned int i, bits;

	if (p->family == AF_INET) {
		if (p->depth < 32)
			p->ip4 = htonl(ntohl(p->ip4) &
				       ~(UINT32_MAX >> p->depth));
		if (p->depth == 0)
			p->ip4 = 0;
		return;
	}
	for (i = 0; i < 16; i++) {
		bits = p->depth > 8 * i ? p->depth - 8 * i : 0;
		if (bits < 8)
			p->ip6[i] &= (uint8_t)~(0xffu >> bits);
	}
}

static int
prefix_same(const struct gw_prefix *a, const struct gw_prefix *b)
{
	if (a->family != b->family || a->depth != b->depth)
		return 0;
	if (a->family == AF_INET)
		return a->ip4 == b->ip4;
	return memcmp(a->ip6, b->ip6, 16) == 0;
}

static int
route_add(struct conf_file *l, struct gw_site_conf *sc,
	  const struct gw_prefix *r)
{
	struct gw_prefix *tab = r->family == AF_INET ? sc->route4 : sc->route6;
	unsigned int *nb = r->family == AF_INET ? &sc->nb_route4 :
		&sc->nb_route6;
	char txt[INET6_ADDRSTRLEN];
	unsigned int i;

	for (i = 0; i < *nb; i++)
		if (prefix_same(&tab[i], r)) {
			inet_ntop(r->family, r->family == AF_INET ?
				  (const void *)&r->ip4 : r->ip6, txt,
				  sizeof(txt));
			return conf_refuse(l, "route %s/%u given twice (an "
					   "addr line adds its on-link prefix "
					   "itself)", txt, r->depth);
		}
	if (*nb == GW_MAX_ROUTES)
		return conf_refuse(l, "more than %u IPv%c routes for this "
				   "site", GW_MAX_ROUTES,
				   r->family == AF_INET ? '4' : '6');
	tab[(*nb)++] = *r;
	return 0;
}

static int
line_parse(struct conf_file *l, char *line, void *arg)
{
	struct gw_conf *conf = arg;
	char *f[5], *save = NULL, *tok;
	struct gw_site_conf *sc;
	struct gw_prefix p;
	unsigned int n = 0;
	char *hash;
	int ret;

	hash = strchr(line, '#');
	if (hash != NULL)
		*hash = '\0';
	for (tok = strtok_r(line, " \t\r\n", &save); tok != NULL;
	     tok = strtok_r(NULL, " \t\r\n", &save)) {
		if (n == RTE_DIM(f))
			return conf_refuse(l, "too many fields (want '<site> "
					   "addr <addr>/<len>' or '<site> route "
					   "<prefix>/<len> eth|link')");
		f[n++] = tok;
	}
	if (n == 0)
		return 0;
	if (strcmp(f[0], "a") != 0 && strcmp(f[0], "b") != 0)
		return conf_refuse(l, "site '%s' unknown (sites are a and b)",
				   f[0]);
	sc = &conf->site[f[0][0] - 'a'];
	if (n < 2)
		return conf_refuse(l, "missing kind (addr or route)");
	if (strcmp(f[1], "addr") == 0) {
		struct gw_prefix *tab;
		unsigned int *nb;

		if (n != 3)
			return conf_refuse(l, "addr takes one field, "
					   "<address>/<len>");
		ret = prefix_parse(l, f[2], &p);
		if (ret < 0)
			return ret;
		if (p.depth == 0 || p.depth >= (p.family == AF_INET ? 32 : 128))
			return conf_refuse(l, "interface address needs a "
					   "length in 1..%u (the on-link "
					   "prefix)",
					   p.family == AF_INET ? 31 : 127);
		tab = p.family == AF_INET ? sc->addr4 : sc->addr6;
		nb = p.family == AF_INET ? &sc->nb_addr4 : &sc->nb_addr6;
		if (*nb == GW_MAX_ADDRS)
			return conf_refuse(l, "more than %u addresses of one "
					   "family", GW_MAX_ADDRS);
		tab[(*nb)++] = p;
		host_bits_clear(&p);
		p.nh = GW_NH_ETH;
		return route_add(l, sc, &p);
	}
	if (strcmp(f[1], "route") != 0)
		return conf_refuse(l, "kind '%s' unknown (addr or route)",
				   f[1]);
	if (n != 4)
		return conf_refuse(l, "route takes two fields, <prefix>/<len> "
				   "eth|link");
	ret = prefix_parse(l, f[2], &p);
	if (ret < 0)
		return ret;
	if (host_bits_set(&p))
		return conf_refuse(l, "route prefix has host bits set beyond "
				   "/%u (give the network address)", p.depth);
	if (strcmp(f[3], "eth") == 0)
		p.nh = GW_NH_ETH;
	else if (strcmp(f[3], "link") == 0)
		p.nh = GW_NH_LINK;
	else
		return conf_refuse(l, "next hop '%s' unknown (eth: on-link on "
				   "the site interface; link: the RC link)",
				   f[3]);
	return route_add(l, sc, &p);
}

int
gw_conf_load(const char *path, struct gw_conf *conf, char *err,
	     size_t errlen)
{
	unsigned int s;
	int ret;

	memset(conf, 0, sizeof(*conf));
	ret = conf_file_read(path, line_parse, conf, err, errlen);
	if (ret < 0)
		return ret;
	for (s = 0; s < GW_NB_SITES; s++)
		if (conf->site[s].nb_addr4 == 0) {
			snprintf(err, errlen, "%s: site %c has no IPv4 address "
				 "(add '%c addr <address>/<len>')", path,
				 'a' + s, 'a' + s);
			return -EINVAL;
		}
	return 0;
}

int
gw_lpm_build(const struct gw_site_conf *sc, const char *prefix,
	     int socket_id, struct rte_lpm **lpm4, struct rte_lpm6 **lpm6)
{
	struct rte_lpm_config c4 = {
		.max_rules = GW_MAX_ROUTES * 2, .number_tbl8s = 256,
	};
	struct rte_lpm6_config c6 = {
		.max_rules = GW_MAX_ROUTES, .number_tbl8s = 1024,
	};
	char name[64];
	unsigned int i;
	int ret;

	snprintf(name, sizeof(name), "%s_lpm4", prefix);
	*lpm4 = rte_lpm_create(name, socket_id, &c4);
	snprintf(name, sizeof(name), "%s_lpm6", prefix);
	*lpm6 = rte_lpm6_create(name, socket_id, &c6);
	if (*lpm4 == NULL || *lpm6 == NULL) {
		fprintf(stderr, "gateway: %s: rte_lpm create: %s\n", prefix,
			rte_strerror(rte_errno));
		goto fail;
	}
	for (i = 0; i < sc->nb_route4; i++) {
		const struct gw_prefix *r = &sc->route4[i];

		/* rte_lpm has no /0: a default route is two /1 halves. */
		if (r->depth == 0)
			ret = rte_lpm_add(*lpm4, 0, 1, r->nh) |
				rte_lpm_add(*lpm4, 0x80000000u, 1, r->nh);
		else
			ret = rte_lpm_add(*lpm4, ntohl(r->ip4), r->depth, r->nh);
		if (ret < 0)
			goto add_fail;
	}
	for (i = 0; i < sc->nb_route6; i++) {
		const struct gw_prefix *r = &sc->route6[i];
		uint8_t ip[16] = { 0 };

		if (r->depth == 0) {
			ret = rte_lpm6_add(*lpm6, ip, 1, r->nh);
			ip[0] = 0x80;
			ret |= rte_lpm6_add(*lpm6, ip, 1, r->nh);
		} else {
			memcpy(ip, r->ip6, 16);
			ret = rte_lpm6_add(*lpm6, ip, r->depth, r->nh);
		}
		if (ret < 0)
			goto add_fail;
	}
	return 0;
add_fail:
	fprintf(stderr, "gateway: %s: rte_lpm add failed: %s\n", prefix,
		strerror(-ret));
fail:
	rte_lpm_free(*lpm4);
	rte_lpm6_free(*lpm6);
	*lpm4 = NULL;
	*lpm6 = NULL;
	return -ENOMEM;
}
