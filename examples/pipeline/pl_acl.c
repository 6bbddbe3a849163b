/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-pipeline classification: rules file loader, rte_acl contexts
 * (IPv4, IPv6), 5-tuple extraction.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_acl.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ip.h>

#include "conf_file.h"
#include "pl_acl.h"
#include "qpio_devargs.h"

/* IPv4: the protocol, the two addresses, the two ports (one input
 * group). */
enum { F_PROTO, F_SRC, F_DST, F_SPORT, F_DPORT, NB_FIELDS };
/* IPv6: the protocol, each address as four 4-byte fields, the ports. */
enum { F6_PROTO, F6_SRC, F6_DST = F6_SRC + 4, F6_SPORT = F6_DST + 4, F6_DPORT,
       NB_FIELDS6 };

RTE_ACL_RULE_DEF(pl_acl_rule6, NB_FIELDS6);

#define FIELD(t, sz, f, in, st, m) \
	{ .type = RTE_ACL_FIELD_TYPE_##t, .size = (sz), .field_index = (f), \
	  .input_index = (in), .offset = offsetof(struct st, m) }
#define FIELD6_ADDR(f, in, m, k) \
	{ .type = RTE_ACL_FIELD_TYPE_MASK, .size = sizeof(uint32_t), \
	  .field_index = (f) + (k), .input_index = (in) + (k), \
	  .offset = offsetof(struct pl_key6, m) + 4 * (k) }

static const struct rte_acl_field_def pl_field_defs[NB_FIELDS] = {
	FIELD(BITMASK, sizeof(uint8_t), F_PROTO, 0, pl_key, proto),
	FIELD(MASK, sizeof(uint32_t), F_SRC, 1, pl_key, src),
	FIELD(MASK, sizeof(uint32_t), F_DST, 2, pl_key, dst),
	FIELD(RANGE, sizeof(uint16_t), F_SPORT, 3, pl_key, sport),
	FIELD(RANGE, sizeof(uint16_t), F_DPORT, 3, pl_key, dport),
};

static const struct rte_acl_field_def pl_field_defs6[NB_FIELDS6] = {
	FIELD(BITMASK, sizeof(uint8_t), F6_PROTO, 0, pl_key6, proto),
	FIELD6_ADDR(F6_SRC, 1, src, 0), FIELD6_ADDR(F6_SRC, 1, src, 1),
	FIELD6_ADDR(F6_SRC, 1, src, 2), FIELD6_ADDR(F6_SRC, 1, src, 3),
	FIELD6_ADDR(F6_DST, 5, dst, 0), FIELD6_ADDR(F6_DST, 5, dst, 1),
	FIELD6_ADDR(F6_DST, 5, dst, 2), FIELD6_ADDR(F6_DST, 5, dst, 3),
	FIELD(RANGE, sizeof(uint16_t), F6_SPORT, 9, pl_key6, sport),
	FIELD(RANGE, sizeof(uint16_t), F6_DPORT, 9, pl_key6, dport),
};

static int
proto_parse(struct conf_file *l, const char *t, struct pl_rule *r)
{
	static const struct { const char *name; uint8_t p; } names[] = {
		{ "tcp", IPPROTO_TCP }, { "udp", IPPROTO_UDP },
		{ "icmp", IPPROTO_ICMP }, { "icmpv6", IPPROTO_ICMPV6 },
		{ "sctp", IPPROTO_SCTP },
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
				   "icmpv6, sctp, 0..255 in decimal digits, or any)",
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

/* The host bits of a prefix are 0. */
static int
host_bits_clear(const uint8_t *a, unsigned int nbytes, unsigned int depth)
{
	unsigned int i;

	for (i = depth / 8; i < nbytes; i++) {
		uint8_t host = i == depth / 8 ? (uint8_t)(0xff >> (depth % 8)) :
				0xff;

		if (a[i] & host)
			return 0;
	}
	return 1;
}

/* any, a.b.c.d/len or IPV6/len: the family, the address (IPv4 in host
 * order to addr, IPv6 in network order to addr6) and the length. */
static int
addr_parse(struct conf_file *l, const char *what, char *t, uint8_t *family,
	   uint32_t *addr, uint8_t *addr6, uint8_t *depth)
{
	uint8_t bytes[16];
	int v6;
	char *slash;
	uint32_t d;

	*family = PL_FAMILY_ANY;
	*addr = 0;
	memset(addr6, 0, 16);
	*depth = 0;
	if (strcmp(t, "any") == 0)
		return 0;
	slash = strchr(t, '/');
	if (slash == NULL)
		return conf_refuse(l, "%s '%s' needs a length (a.b.c.d/len, "
				   "x:y::/len) or any", what, t);
	*slash = '\0';
	v6 = strchr(t, ':') != NULL;
	if (inet_pton(v6 ? AF_INET6 : AF_INET, t, bytes) != 1)
		return conf_refuse(l, "%s '%s' is not an IPv%c address", what,
				   t, v6 ? '6' : '4');
	if (qpio_devargs_parse_u32(slash + 1, 0, v6 ? 128 : 32, &d) < 0)
		return conf_refuse(l, "%s length '%s' must be 0..%u in decimal "
				   "digits", what, slash + 1, v6 ? 128 : 32);
	if (!host_bits_clear(bytes, v6 ? 16 : 4, d))
		return conf_refuse(l, "%s %s/%u has host bits set (give the "
				   "network address)", what, t, d);
	*depth = (uint8_t)d;
	if (v6) {
		*family = PL_FAMILY_IPV6;
		memcpy(addr6, bytes, 16);
	} else {
		*family = PL_FAMILY_IPV4;
		memcpy(addr, bytes, 4);
		*addr = ntohl(*addr);
	}
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
	uint8_t sfam, dfam;
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
		ret = addr_parse(l, "source", f[2], &sfam, &r.src, r.src6,
				 &r.src_depth);
	if (ret == 0)
		ret = addr_parse(l, "destination", f[3], &dfam, &r.dst, r.dst6,
				 &r.dst_depth);
	if (ret == 0 && sfam != PL_FAMILY_ANY && dfam != PL_FAMILY_ANY &&
	    sfam != dfam)
		return conf_refuse(l, "source is IPv%u and destination IPv%u (a "
				   "rule is of one family: write a rule for "
				   "each)", sfam, dfam);
	if (ret == 0)
		ret = port_parse(l, "source port", f[4], &r.sport_lo,
				 &r.sport_hi);
	if (ret == 0)
		ret = port_parse(l, "destination port", f[5], &r.dport_lo,
				 &r.dport_hi);
	if (ret < 0)
		return ret;
	r.family = sfam != PL_FAMILY_ANY ? sfam : dfam;
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

/* The prefix length of 32-bit group k of an address of depth bits. */
static uint32_t
group_depth(unsigned int depth, unsigned int k)
{
	return depth <= 32 * k ? 0 : RTE_MIN(depth - 32 * k, 32u);
}

/* The rte_acl rule of a rules-file rule, for the family's context. */
static void
acl_rule_fill(const struct pl_rule *r, unsigned int i, int family,
	      struct pl_acl_rule6 *ar)
{
	struct rte_acl_field *f = ar->field;
	unsigned int k, n = 0;
	uint32_t w;

	memset(ar, 0, sizeof(*ar));
	ar->data.category_mask = 1;
	ar->data.priority = RTE_ACL_MAX_PRIORITY - (int32_t)i;
	ar->data.userdata = i + 1;
	f[n].value.u8 = r->proto;
	f[n++].mask_range.u8 = r->proto_any ? 0 : 0xff;
	if (family == PL_FAMILY_IPV4) {
		f[n].value.u32 = r->src;
		f[n++].mask_range.u32 = r->src_depth;
		f[n].value.u32 = r->dst;
		f[n++].mask_range.u32 = r->dst_depth;
	} else {
		for (k = 0; k < 4; k++, n++) {
			memcpy(&w, r->src6 + 4 * k, 4);
			f[n].value.u32 = ntohl(w);
			f[n].mask_range.u32 = group_depth(r->src_depth, k);
		}
		for (k = 0; k < 4; k++, n++) {
			memcpy(&w, r->dst6 + 4 * k, 4);
			f[n].value.u32 = ntohl(w);
			f[n].mask_range.u32 = group_depth(r->dst_depth, k);
		}
	}
	f[n].value.u16 = r->sport_lo;
	f[n++].mask_range.u16 = r->sport_hi;
	f[n].value.u16 = r->dport_lo;
	f[n].mask_range.u16 = r->dport_hi;
}

/* The context of one family, or NULL in *out when no rule is of it. */
static int
acl_family_build(const struct pl_rules *rules, const char *name,
		 int socket_id, int family, struct rte_acl_ctx **out)
{
	unsigned int nb_fields = family == PL_FAMILY_IPV4 ? NB_FIELDS :
				 NB_FIELDS6;
	char cname[RTE_ACL_NAMESIZE];
	struct rte_acl_param prm = {
		.name = cname,
		.socket_id = socket_id,
		.rule_size = RTE_ACL_RULE_SZ(nb_fields),
		.max_rule_num = PL_MAX_RULES,
	};
	struct rte_acl_config cfg;
	struct pl_acl_rule6 ar;
	struct rte_acl_ctx *ctx;
	unsigned int i, nb = 0;
	int ret;

	*out = NULL;
	for (i = 0; i < rules->nb; i++)
		nb += rules->rule[i].family == PL_FAMILY_ANY ||
		      rules->rule[i].family == family;
	if (nb == 0)
		return 0;
	snprintf(cname, sizeof(cname), "%s_v%d", name, family);
	ctx = rte_acl_create(&prm);
	if (ctx == NULL) {
		fprintf(stderr, "pipeline: rte_acl_create(%s): %s\n", cname,
			strerror(rte_errno));
		return -rte_errno;
	}
	for (i = 0; i < rules->nb; i++) {
		const struct pl_rule *r = &rules->rule[i];

		if (r->family != PL_FAMILY_ANY && r->family != family)
			continue;
		/* ar has room for the IPv6 fields; an IPv4 context reads
		 * the first NB_FIELDS of them (its rule_size). */
		acl_rule_fill(r, i, family, &ar);
		ret = rte_acl_add_rules(ctx, (struct rte_acl_rule *)&ar, 1);
		if (ret != 0) {
			fprintf(stderr, "pipeline: rte_acl_add_rules (line %u): "
				"%s\n", r->line, strerror(-ret));
			rte_acl_free(ctx);
			return ret;
		}
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.num_categories = 1;
	cfg.num_fields = nb_fields;
	if (family == PL_FAMILY_IPV4)
		memcpy(cfg.defs, pl_field_defs, sizeof(pl_field_defs));
	else
		memcpy(cfg.defs, pl_field_defs6, sizeof(pl_field_defs6));
	ret = rte_acl_build(ctx, &cfg);
	if (ret != 0) {
		fprintf(stderr, "pipeline: rte_acl_build(%s): %s\n", cname,
			strerror(-ret));
		rte_acl_free(ctx);
		return ret;
	}
	*out = ctx;
	return 0;
}

int
pl_acl_build(const struct pl_rules *rules, const char *name, int socket_id,
	      struct pl_acl *acl)
{
	int ret;

	if (acl != NULL)
		acl->v4 = acl->v6 = NULL;
	if (rules == NULL || name == NULL || acl == NULL ||
	    strlen(name) > RTE_ACL_NAMESIZE - 4 - 8)
		return -EINVAL;
	ret = acl_family_build(rules, name, socket_id, PL_FAMILY_IPV4,
			       &acl->v4);
	if (ret == 0)
		ret = acl_family_build(rules, name, socket_id, PL_FAMILY_IPV6,
				       &acl->v6);
	if (ret != 0)
		pl_acl_free(acl);
	return ret;
}

void
pl_acl_free(struct pl_acl *acl)
{
	if (acl == NULL)
		return;
	rte_acl_free(acl->v4);
	rte_acl_free(acl->v6);
	acl->v4 = acl->v6 = NULL;
}

/* The ports of TCP, UDP or SCTP at p + off when the frame holds them. */
static void
ports_get(const uint8_t *p, uint32_t len, uint32_t off, uint8_t proto,
	  uint16_t *sport, uint16_t *dport)
{
	if (len >= off + 4 && proto_has_ports(proto)) {
		memcpy(sport, p + off, 2);
		memcpy(dport, p + off + 2, 2);
	}
}

static enum pl_parse
key4_get(const uint8_t *p, uint32_t len, uint32_t off, struct pl_key *key)
{
	const struct rte_ipv4_hdr *ip;
	uint16_t frag;
	uint32_t ihl;

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
	if (frag == 0)
		ports_get(p, len, off + ihl, key->proto, &key->sport,
			  &key->dport);
	return PL_IPV4;
}

/* The extension headers pl_key_get() walks. */
static int
ext_hdr(uint8_t nh)
{
	return nh == IPPROTO_HOPOPTS || nh == IPPROTO_ROUTING ||
	       nh == IPPROTO_DSTOPTS || nh == IPPROTO_FRAGMENT ||
	       nh == IPPROTO_AH;
}

/* The fixed header, then the extension headers the kernel's
 * ipv6_skip_exthdr() skips (RFC 8200 section 4). */
static enum pl_parse
key6_get(const uint8_t *p, uint32_t len, uint32_t off, struct pl_key6 *key)
{
	const struct rte_ipv6_hdr *ip;
	uint32_t hlen;
	unsigned int n;
	uint8_t nh;

	if (len < off + sizeof(*ip))
		return PL_BAD;
	ip = (const struct rte_ipv6_hdr *)(p + off);
	if ((p[off] >> 4) != 6)
		return PL_BAD;
	memset(key, 0, sizeof(*key));
	memcpy(key->src, ip->src_addr, 16);
	memcpy(key->dst, ip->dst_addr, 16);
	nh = ip->proto;
	off += sizeof(*ip);
	for (n = 0; ext_hdr(nh); n++) {
		if (n == PL_MAX_EXT_HDRS || len < off + 8)
			return PL_BAD;
		if (nh == IPPROTO_FRAGMENT) {
			/* offset (13 bits), 2 reserved bits, M */
			if ((p[off + 2] << 8 | p[off + 3]) & 0xfff8) {
				/* A later fragment: its Next Header names the
				 * first header of the fragmentable part (RFC
				 * 8200 4.5), the upper layer when no extension
				 * header comes first; else the upper layer is
				 * out of reach, and the protocol is 44. */
				key->proto = ext_hdr(p[off]) ? IPPROTO_FRAGMENT :
					     p[off];
				return PL_IPV6;
			}
			hlen = 8;
		} else if (nh == IPPROTO_AH) {
			hlen = (p[off + 1] + 2u) * 4;
		} else {
			hlen = (p[off + 1] + 1u) * 8;
		}
		if (len < off + hlen)
			return PL_BAD;
		nh = p[off];
		off += hlen;
	}
	key->proto = nh;
	ports_get(p, len, off, nh, &key->sport, &key->dport);
	return PL_IPV6;
}

enum pl_parse
pl_key_get(const struct rte_mbuf *m, union pl_keys *key)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), off = RTE_ETHER_HDR_LEN;
	uint16_t type;

	if (len < RTE_ETHER_HDR_LEN)
		return PL_NOT_IP;
	type = (uint16_t)(p[12] << 8 | p[13]);
	if (type == RTE_ETHER_TYPE_VLAN) {
		if (len < RTE_ETHER_HDR_LEN + 4)
			return PL_NOT_IP;
		type = (uint16_t)(p[16] << 8 | p[17]);
		off += 4;
	}
	if (type == RTE_ETHER_TYPE_IPV4)
		return key4_get(p, len, off, &key->v4);
	if (type == RTE_ETHER_TYPE_IPV6)
		return key6_get(p, len, off, &key->v6);
	return PL_NOT_IP;
}

int
pl_classify(const struct pl_acl *acl, const struct pl_rules *rules,
	    struct rte_mbuf **pkts, unsigned int n, struct rte_mbuf **keep,
	    struct pl_classify_stats *st)
{
	union pl_keys keys[PL_CLASSIFY_BURST];
	const uint8_t *d4[PL_CLASSIFY_BURST], *d6[PL_CLASSIFY_BURST];
	uint32_t r4[PL_CLASSIFY_BURST], r6[PL_CLASSIFY_BURST], res;
	struct rte_mbuf *ip[PL_CLASSIFY_BURST];
	uint8_t is6[PL_CLASSIFY_BURST];
	unsigned int i, nk = 0, nip = 0, n4 = 0, n6 = 0;

	if (n > PL_CLASSIFY_BURST ||
	    (n > 0 && (acl == NULL || rules == NULL || pkts == NULL ||
		       keep == NULL || st == NULL)))
		return -EINVAL;
	if (n == 0)
		return 0;
	st->in += n;
	for (i = 0; i < n; i++) {
		switch (pl_key_get(pkts[i], &keys[nip])) {
		case PL_IPV4:
			d4[n4++] = (const uint8_t *)&keys[nip].v4;
			is6[nip] = 0;
			ip[nip++] = pkts[i];
			break;
		case PL_IPV6:
			st->ipv6++;
			d6[n6++] = (const uint8_t *)&keys[nip].v6;
			is6[nip] = 1;
			ip[nip++] = pkts[i];
			break;
		case PL_NOT_IP:
			st->not_ip++;
			rte_pktmbuf_free(pkts[i]);
			break;
		default:
			st->bad++;
			rte_pktmbuf_free(pkts[i]);
		}
	}
	/* A family without a context has no rule: 0 is no match. */
	memset(r4, 0, sizeof(r4[0]) * n4);
	memset(r6, 0, sizeof(r6[0]) * n6);
	if (n4 > 0 && acl->v4 != NULL)
		rte_acl_classify(acl->v4, d4, r4, n4, 1);
	if (n6 > 0 && acl->v6 != NULL)
		rte_acl_classify(acl->v6, d6, r6, n6, 1);
	n4 = n6 = 0;
	for (i = 0; i < nip; i++) {
		res = is6[i] ? r6[n6++] : r4[n4++];
		if (res == 0 || res > rules->nb) {
			st->no_match++;
			rte_pktmbuf_free(ip[i]);
		} else if (rules->rule[res - 1].action == PL_DENY) {
			st->denied++;
			rte_pktmbuf_free(ip[i]);
		} else {
			ip[i]->hash.usr = res;
			keep[nk++] = ip[i];
		}
	}
	st->permitted += nk;
	return (int)nk;
}
