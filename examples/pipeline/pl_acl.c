/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-pipeline classification: rules file loader, rte_acl context,
 * 5-tuple extraction.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_acl.h>
#include <rte_ether.h>
#include <rte_ip.h>

#include "conf_file.h"
#include "pl_acl.h"
#include "qpio_devargs.h"

enum { F_PROTO, F_SRC, F_DST, F_SPORT, F_DPORT, NB_FIELDS };

RTE_ACL_RULE_DEF(pl_acl_rule, NB_FIELDS);

static const struct rte_acl_field_def pl_field_defs[NB_FIELDS] = {
	{ .type = RTE_ACL_FIELD_TYPE_BITMASK, .size = sizeof(uint8_t),
	  .field_index = F_PROTO, .input_index = 0,
	  .offset = offsetof(struct pl_key, proto) },
	{ .type = RTE_ACL_FIELD_TYPE_MASK, .size = sizeof(uint32_t),
	  .field_index = F_SRC, .input_index = 1,
	  .offset = offsetof(struct pl_key, src) },
	{ .type = RTE_ACL_FIELD_TYPE_MASK, .size = sizeof(uint32_t),
	  .field_index = F_DST, .input_index = 2,
	  .offset = offsetof(struct pl_key, dst) },
	{ .type = RTE_ACL_FIELD_TYPE_RANGE, .size = sizeof(uint16_t),
	  .field_index = F_SPORT, .input_index = 3,
	  .offset = offsetof(struct pl_key, sport) },
	{ .type = RTE_ACL_FIELD_TYPE_RANGE, .size = sizeof(uint16_t),
	  .field_index = F_DPORT, .input_index = 3,
	  .offset = offsetof(struct pl_key, dport) },
};

static int
proto_parse(struct conf_file *l, const char *t, struct pl_rule *r)
{
	static const struct { const char *name; uint8_t p; } names[] = {
		{ "tcp", IPPROTO_TCP }, { "udp", IPPROTO_UDP },
		{ "icmp", IPPROTO_ICMP }, { "sctp", IPPROTO_SCTP },
	};
	unsigned int i;
	uint32_t v;

	if (strcmp(t, "any") == 0) {
		r->proto_any = 1;
		return 0;
	}
	for (i = 0; i < RTE_DIM(names); i++)
		if (strcmp(t, names[i].name) == 0) {
			r->proto = names[i].p;
			return 0;
		}
	if (qpio_devargs_parse_u32(t, 0, 255, &v) < 0)
		return conf_refuse(l, "protocol '%s' unknown (tcp, udp, icmp, "
				   "sctp, 0..255 in decimal digits, or any)",
				   t);
	r->proto = (uint8_t)v;
	return 0;
}

/* The protocols whose first fragment pl_key_get() reads ports from. */
static int
proto_has_ports(uint8_t proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP ||
	       proto == IPPROTO_SCTP;
}

static int
addr_parse(struct conf_file *l, const char *what, char *t, uint32_t *addr,
	   uint8_t *depth)
{
	struct in_addr a;
	char *slash;
	uint32_t d;

	if (strcmp(t, "any") == 0) {
		*addr = 0;
		*depth = 0;
		return 0;
	}
	slash = strchr(t, '/');
	if (slash == NULL)
		return conf_refuse(l, "%s '%s' needs a length (a.b.c.d/len) "
				   "or any", what, t);
	*slash = '\0';
	if (inet_pton(AF_INET, t, &a) != 1)
		return conf_refuse(l, "%s '%s' is not an IPv4 address", what,
				   t);
	if (qpio_devargs_parse_u32(slash + 1, 0, 32, &d) < 0)
		return conf_refuse(l, "%s length '%s' must be 0..32 in decimal "
				   "digits", what, slash + 1);
	*addr = ntohl(a.s_addr);
	*depth = (uint8_t)d;
	if (d < 32 && (*addr & (UINT32_MAX >> d)) != 0)
		return conf_refuse(l, "%s %s/%u has host bits set (give the "
				   "network address)", what, t, d);
	if (d == 0)
		*addr = 0;
	return 0;
}

static int
port_parse(struct conf_file *l, const char *what, char *t, uint16_t *lo,
	   uint16_t *hi)
{
	char *dash;
	uint32_t a, b;
	int ok;

	if (strcmp(t, "any") == 0) {
		*lo = 0;
		*hi = UINT16_MAX;
		return 0;
	}
	dash = strchr(t, '-');
	if (dash != NULL)
		*dash = '\0';
	ok = qpio_devargs_parse_u32(t, 0, UINT16_MAX, &a) == 0 &&
	     (dash == NULL ? (b = a, 1) :
	      qpio_devargs_parse_u32(dash + 1, 0, UINT16_MAX, &b) == 0);
	if (dash != NULL)
		*dash = '-';
	if (!ok)
		return conf_refuse(l, "%s '%s' must be N, LO-HI (0..65535 in "
				   "decimal digits) or any", what, t);
	if (a > b)
		return conf_refuse(l, "%s range '%s' has LO > HI", what, t);
	*lo = (uint16_t)a;
	*hi = (uint16_t)b;
	return 0;
}

static int
line_parse(struct conf_file *l, char *line, void *arg)
{
	struct pl_rules *rules = arg;
	char *f[7], *save = NULL, *tok, *hash;
	struct pl_rule r;
	unsigned int n = 0;
	int ret;

	hash = strchr(line, '#');
	if (hash != NULL)
		*hash = '\0';
	for (tok = strtok_r(line, " \t\r\n", &save); tok != NULL && n < 7;
	     tok = strtok_r(NULL, " \t\r\n", &save))
		f[n++] = tok;
	if (n == 0)
		return 0;
	if (n != 6)
		return conf_refuse(l, "want 6 fields: <permit|deny> <proto> "
				   "<src> <dst> <sport> <dport>");
	memset(&r, 0, sizeof(r));
	r.line = l->line;
	if (strcmp(f[0], "permit") == 0)
		r.action = PL_PERMIT;
	else if (strcmp(f[0], "deny") == 0)
		r.action = PL_DENY;
	else
		return conf_refuse(l, "action '%s' unknown (permit or deny)",
				   f[0]);
	ret = proto_parse(l, f[1], &r);
	if (ret == 0)
		ret = addr_parse(l, "source", f[2], &r.src, &r.src_depth);
	if (ret == 0)
		ret = addr_parse(l, "destination", f[3], &r.dst, &r.dst_depth);
	if (ret == 0)
		ret = port_parse(l, "source port", f[4], &r.sport_lo,
				 &r.sport_hi);
	if (ret == 0)
		ret = port_parse(l, "destination port", f[5], &r.dport_lo,
				 &r.dport_hi);
	if (ret < 0)
		return ret;
	if (!r.proto_any && !proto_has_ports(r.proto) &&
	    (r.sport_lo != 0 || r.sport_hi != UINT16_MAX ||
	     r.dport_lo != 0 || r.dport_hi != UINT16_MAX))
		return conf_refuse(l, "protocol '%s' has no ports (only tcp, "
				   "udp and sctp have them: write any any)",
				   f[1]);
	if (rules->nb == PL_MAX_RULES)
		return conf_refuse(l, "more than %u rules", PL_MAX_RULES);
	rules->rule[rules->nb++] = r;
	return 0;
}

int
pl_rules_load(const char *path, struct pl_rules *rules, char *err,
	      size_t errlen)
{
	int ret;

	memset(rules, 0, sizeof(*rules));
	ret = conf_file_read(path, line_parse, rules, err, errlen);
	if (ret == 0 && rules->nb == 0) {
		snprintf(err, errlen, "%s: no rule (every packet would be "
			 "dropped; add 'permit any any any any any')", path);
		ret = -EINVAL;
	}
	return ret;
}

struct rte_acl_ctx *
pl_acl_build(const struct pl_rules *rules, const char *name, int socket_id)
{
	struct rte_acl_param prm = {
		.name = name,
		.socket_id = socket_id,
		.rule_size = RTE_ACL_RULE_SZ(NB_FIELDS),
		.max_rule_num = PL_MAX_RULES,
	};
	struct rte_acl_config cfg;
	struct rte_acl_ctx *ctx;
	unsigned int i;
	int ret;

	ctx = rte_acl_create(&prm);
	if (ctx == NULL) {
		fprintf(stderr, "pipeline: rte_acl_create(%s) failed\n", name);
		return NULL;
	}
	for (i = 0; i < rules->nb; i++) {
		const struct pl_rule *r = &rules->rule[i];
		struct pl_acl_rule ar;

		memset(&ar, 0, sizeof(ar));
		ar.data.category_mask = 1;
		ar.data.priority = RTE_ACL_MAX_PRIORITY - (int32_t)i;
		ar.data.userdata = i + 1;
		ar.field[F_PROTO].value.u8 = r->proto;
		ar.field[F_PROTO].mask_range.u8 = r->proto_any ? 0 : 0xff;
		ar.field[F_SRC].value.u32 = r->src;
		ar.field[F_SRC].mask_range.u32 = r->src_depth;
		ar.field[F_DST].value.u32 = r->dst;
		ar.field[F_DST].mask_range.u32 = r->dst_depth;
		ar.field[F_SPORT].value.u16 = r->sport_lo;
		ar.field[F_SPORT].mask_range.u16 = r->sport_hi;
		ar.field[F_DPORT].value.u16 = r->dport_lo;
		ar.field[F_DPORT].mask_range.u16 = r->dport_hi;
		ret = rte_acl_add_rules(ctx, (struct rte_acl_rule *)&ar, 1);
		if (ret != 0) {
			fprintf(stderr, "pipeline: rte_acl_add_rules (line %u): "
				"%s\n", r->line, strerror(-ret));
			rte_acl_free(ctx);
			return NULL;
		}
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.num_categories = 1;
	cfg.num_fields = NB_FIELDS;
	memcpy(cfg.defs, pl_field_defs, sizeof(pl_field_defs));
	ret = rte_acl_build(ctx, &cfg);
	if (ret != 0) {
		fprintf(stderr, "pipeline: rte_acl_build: %s\n", strerror(-ret));
		rte_acl_free(ctx);
		return NULL;
	}
	return ctx;
}

enum pl_parse
pl_key_get(const struct rte_mbuf *m, struct pl_key *key)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), off = RTE_ETHER_HDR_LEN;
	const struct rte_ipv4_hdr *ip;
	uint16_t type, frag;
	uint32_t ihl;

	if (len < RTE_ETHER_HDR_LEN)
		return PL_NOT_IPV4;
	type = (uint16_t)(p[12] << 8 | p[13]);
	if (type == RTE_ETHER_TYPE_VLAN) {
		if (len < RTE_ETHER_HDR_LEN + 4)
			return PL_NOT_IPV4;
		type = (uint16_t)(p[16] << 8 | p[17]);
		off += 4;
	}
	if (type != RTE_ETHER_TYPE_IPV4)
		return PL_NOT_IPV4;
	if (len < off + sizeof(*ip))
		return PL_BAD;
	ip = (const struct rte_ipv4_hdr *)(p + off);
	ihl = (ip->version_ihl & 0x0f) * 4u;
	if ((ip->version_ihl >> 4) != 4 || ihl < sizeof(*ip) ||
	    len < off + ihl)
		return PL_BAD;
	memset(key, 0, sizeof(*key));
	key->proto = ip->next_proto_id;
	key->src = ip->src_addr;
	key->dst = ip->dst_addr;
	frag = rte_be_to_cpu_16(ip->fragment_offset) & RTE_IPV4_HDR_OFFSET_MASK;
	if (frag == 0 && len >= off + ihl + 4 && proto_has_ports(key->proto)) {
		memcpy(&key->sport, p + off + ihl, 2);
		memcpy(&key->dport, p + off + ihl + 2, 2);
	}
	return PL_IPV4;
}

int
pl_classify(const struct rte_acl_ctx *ctx, const struct pl_rules *rules,
	    struct rte_mbuf **pkts, unsigned int n, struct rte_mbuf **keep,
	    struct pl_classify_stats *st)
{
	struct pl_key keys[PL_CLASSIFY_BURST];
	const uint8_t *data[PL_CLASSIFY_BURST];
	struct rte_mbuf *ipv4[PL_CLASSIFY_BURST];
	uint32_t res[PL_CLASSIFY_BURST];
	unsigned int i, nk = 0, nv = 0;

	if (n > PL_CLASSIFY_BURST ||
	    (n > 0 && (ctx == NULL || rules == NULL || pkts == NULL ||
		       keep == NULL || st == NULL)))
		return -EINVAL;
	if (n == 0)
		return 0;
	st->in += n;
	for (i = 0; i < n; i++) {
		switch (pl_key_get(pkts[i], &keys[nv])) {
		case PL_IPV4:
			data[nv] = (const uint8_t *)&keys[nv];
			ipv4[nv++] = pkts[i];
			break;
		case PL_NOT_IPV4:
			st->not_ipv4++;
			rte_pktmbuf_free(pkts[i]);
			break;
		default:
			st->bad++;
			rte_pktmbuf_free(pkts[i]);
		}
	}
	if (nv > 0)
		rte_acl_classify(ctx, data, res, nv, 1);
	for (i = 0; i < nv; i++) {
		if (res[i] == 0 || res[i] > rules->nb) {
			st->no_match++;
			rte_pktmbuf_free(ipv4[i]);
		} else if (rules->rule[res[i] - 1].action == PL_DENY) {
			st->denied++;
			rte_pktmbuf_free(ipv4[i]);
		} else {
			ipv4[i]->hash.usr = res[i];
			keep[nk++] = ipv4[i];
		}
	}
	st->permitted += nk;
	return (int)nk;
}
