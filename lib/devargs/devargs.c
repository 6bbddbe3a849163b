/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The devargs rules of qpio_devargs.h: one pass over the key=value items
 * that names the first bad item, then rte_kvargs for the list itself.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_common.h>
#include <rte_log.h>

#include "qpio_devargs.h"
#include "qpio_log.h"

RTE_LOG_REGISTER(qpio_devargs_logtype, qpio.lib.devargs, NOTICE);

#define DEVARGS_LOG(level, ...) \
	QPIO_LOG_LINE(level, qpio_devargs_logtype, "qpio.lib.devargs", __VA_ARGS__)

int
qpio_devargs_split(const char *devargs, char *name, size_t name_size,
		   const char **args)
{
	const char *comma;
	size_t len;

	if (devargs == NULL || name == NULL || name_size == 0 || args == NULL)
		return -EINVAL;
	comma = strchr(devargs, ',');
	len = comma != NULL ? (size_t)(comma - devargs) : strlen(devargs);
	if (len == 0 || len >= name_size) {
		DEVARGS_LOG(ERR, "'%s': the name before the first comma must be "
			    "1..%zu characters", devargs, name_size - 1);
		return -EINVAL;
	}
	memcpy(name, devargs, len);
	name[len] = '\0';
	*args = comma != NULL ? comma + 1 : NULL;
	return 0;
}

static int
key_valid(const char *key, size_t len, const char *const *valid_keys)
{
	unsigned int i;

	for (i = 0; valid_keys != NULL && valid_keys[i] != NULL; i++)
		if (strlen(valid_keys[i]) == len &&
		    strncmp(valid_keys[i], key, len) == 0)
			return 1;
	return 0;
}

/* The driver's keys as "a, b, c" for a log line. */
static void
keys_list(const char *const *valid_keys, char *buf, size_t size)
{
	size_t off = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; valid_keys != NULL && valid_keys[i] != NULL; i++) {
		int n = snprintf(buf + off, size - off, "%s%s",
				 i == 0 ? "" : ", ", valid_keys[i]);

		if (n < 0 || (size_t)n >= size - off)
			break;
		off += (size_t)n;
	}
}

/* End of the item starting at p: the next comma outside brackets, or the
 * NUL. -1 in *depth_err for unbalanced brackets. */
static const char *
item_end(const char *p, int *bad)
{
	int depth = 0;

	for (; *p != '\0'; p++) {
		if (*p == '[')
			depth++;
		else if (*p == ']' && --depth < 0)
			break;
		else if (*p == ',' && depth == 0)
			return p;
	}
	*bad = depth != 0;
	return p;
}

int
qpio_devargs_parse(const char *owner, const char *args,
		   const char *const *valid_keys, const char *doc,
		   struct rte_kvargs **out)
{
	char keys[256];
	const char *p;
	struct rte_kvargs *kv;
	unsigned int i, j;

	if (out == NULL)
		return -EINVAL;
	*out = NULL;
	if (owner == NULL)
		owner = "devargs";
	if (args == NULL)
		return 0;
	keys_list(valid_keys, keys, sizeof(keys));
	for (p = args;; p++) {
		const char *end, *eq;
		int bad = 0;

		end = item_end(p, &bad);
		if (bad) {
			DEVARGS_LOG(ERR, "%s: '%s': unbalanced brackets", owner,
				    p);
			return -EINVAL;
		}
		if (end == p) {
			DEVARGS_LOG(ERR, "%s: empty key=value item in '%s' (no "
				    "',,' and no comma at either end)", owner,
				    args);
			return -EINVAL;
		}
		eq = memchr(p, '=', (size_t)(end - p));
		if (eq == NULL || eq == p || eq + 1 == end) {
			DEVARGS_LOG(ERR, "%s: item '%.*s' is not key=value with "
				    "a non-empty key and value", owner,
				    (int)(end - p), p);
			return -EINVAL;
		}
		if (!key_valid(p, (size_t)(eq - p), valid_keys)) {
			DEVARGS_LOG(ERR, "%s: unknown key '%.*s' (keys: %s%s%s)",
				    owner, (int)(eq - p), p, keys,
				    doc != NULL ? "; see " : "",
				    doc != NULL ? doc : "");
			return -EINVAL;
		}
		if (*end == '\0')
			break;
		p = end;
	}
	kv = rte_kvargs_parse(args, (const char **)(uintptr_t)valid_keys);
	if (kv == NULL) {
		DEVARGS_LOG(ERR, "%s: '%s': bad key=value syntax", owner, args);
		return -EINVAL;
	}
	for (i = 0; i < kv->count; i++)
		for (j = i + 1; j < kv->count; j++)
			if (strcmp(kv->pairs[i].key, kv->pairs[j].key) == 0) {
				DEVARGS_LOG(ERR, "%s: key '%s' given twice (each "
					    "key at most once)", owner,
					    kv->pairs[i].key);
				rte_kvargs_free(kv);
				return -EINVAL;
			}
	*out = kv;
	return 0;
}

int
qpio_devargs_str(const char *owner, const struct rte_kvargs *kvlist,
		 const char *key, const char **val)
{
	const struct rte_kvargs_pair *pair = NULL;
	unsigned int i, n = 0;

	if (kvlist == NULL || key == NULL)
		return 0;
	for (i = 0; i < kvlist->count; i++)
		if (strcmp(kvlist->pairs[i].key, key) == 0) {
			pair = &kvlist->pairs[i];
			n++;
		}
	if (n == 0)
		return 0;
	if (n > 1 || pair->value == NULL || pair->value[0] == '\0') {
		DEVARGS_LOG(ERR, "%s: key %s must be given once, with a value",
			    owner != NULL ? owner : "devargs", key);
		return -EINVAL;
	}
	*val = pair->value;
	return 0;
}

int
qpio_devargs_parse_u32(const char *s, uint32_t min, uint32_t max,
		       uint32_t *val)
{
	uint64_t v;
	int ret;

	/* Ten digits at most, as the rule says (leading zeros count). */
	if (s != NULL && strnlen(s, 11) > 10)
		return -EINVAL;
	ret = qpio_devargs_parse_u64(s, min, max, &v);
	if (ret == 0)
		*val = (uint32_t)v;
	return ret;
}

int
qpio_devargs_parse_u64(const char *s, uint64_t min, uint64_t max,
		       uint64_t *val)
{
	unsigned long long v;
	size_t n;

	if (s == NULL)
		return -EINVAL;
	n = strspn(s, "0123456789");
	if (n == 0 || s[n] != '\0' || n > 20)
		return -EINVAL;
	errno = 0;
	v = strtoull(s, NULL, 10);
	if (errno != 0 || v < min || v > max)
		return -ERANGE;
	*val = v;
	return 0;
}

int
qpio_devargs_parse_hex(const char *s, uint64_t min, uint64_t max,
		       uint64_t *val)
{
	unsigned long long v;
	size_t n;

	if (s == NULL || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return -EINVAL;
	n = strspn(s + 2, "0123456789abcdefABCDEF");
	if (n == 0 || s[2 + n] != '\0' || n > 16)
		return -EINVAL;
	/* Sixteen digits at most: the value fits, strtoull() cannot fail. */
	v = strtoull(s + 2, NULL, 16);
	if (v < min || v > max)
		return -ERANGE;
	*val = v;
	return 0;
}

int
qpio_devargs_parse_uint(const char *s, uint64_t min, uint64_t max,
			uint64_t *val)
{
	if (s != NULL && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return qpio_devargs_parse_hex(s, min, max, val);
	return qpio_devargs_parse_u64(s, min, max, val);
}

int
qpio_devargs_parse_decimal(const char *s, double min, double max,
			   double *val)
{
	size_t n, f = 0;
	double v;

	if (s == NULL)
		return -EINVAL;
	n = strspn(s, "0123456789");
	if (n > 0 && s[n] == '.') {
		f = strspn(s + n + 1, "0123456789");
		if (f == 0)
			return -EINVAL;
		f++;
	}
	if (n == 0 || s[n + f] != '\0' || n + f > 32)
		return -EINVAL;
	/* Digits and one point: strtod() reads all of it, finite. */
	v = strtod(s, NULL);
	if (!(v >= min && v <= max))
		return -ERANGE;
	*val = v;
	return 0;
}

int
qpio_devargs_u32(const char *owner, const struct rte_kvargs *kvlist,
		 const char *key, uint32_t min, uint32_t max, uint32_t *val)
{
	const char *s = NULL;
	int ret;

	ret = qpio_devargs_str(owner, kvlist, key, &s);
	if (ret < 0 || s == NULL)
		return ret;
	if (qpio_devargs_parse_u32(s, min, max, val) < 0) {
		DEVARGS_LOG(ERR, "%s: %s=%s must be a decimal integer in "
			    "[%u, %u] (decimal digits only: no sign, no 0x)",
			    owner != NULL ? owner : "devargs", key, s, min,
			    max);
		return -EINVAL;
	}
	return 0;
}

/* path with its directory resolved into buf, for a file that may not
 * exist yet; the text as given when the directory does not resolve. */
static const char *
path_canonical(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash != NULL ? slash + 1 : path;
	char dir[PATH_MAX], real[PATH_MAX];

	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if (snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path),
			  path) >= (int)sizeof(dir))
		return path;
	if (realpath(dir, real) == NULL ||
	    snprintf(buf, size, "%s/%s", real, name) >= (int)size)
		return path;
	return buf;
}

int
qpio_devargs_same_file(const char *a, const char *b)
{
	char ca[PATH_MAX + NAME_MAX + 2], cb[PATH_MAX + NAME_MAX + 2];
	struct stat sa, sb;
	int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;

	if (ea && eb)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino &&
		       !S_ISCHR(sa.st_mode);
	if (ea || eb)
		return 0;
	return strcmp(path_canonical(a, ca, sizeof(ca)),
		      path_canonical(b, cb, sizeof(cb))) == 0;
}

int
qpio_devargs_names_file(const char *devargs, const char *path)
{
	static const char *const keys[] = { "rx_pcap=", "tx_pcap=" };
	const char *item = devargs, *comma;
	char file[PATH_MAX];
	unsigned int k;
	size_t len;

	for (; item != NULL; item = comma != NULL ? comma + 1 : NULL) {
		comma = strchr(item, ',');
		len = comma != NULL ? (size_t)(comma - item) : strlen(item);
		for (k = 0; k < RTE_DIM(keys); k++) {
			size_t kl = strlen(keys[k]);

			if (len <= kl || len - kl >= sizeof(file) ||
			    strncmp(item, keys[k], kl) != 0)
				continue;
			memcpy(file, item + kl, len - kl);
			file[len - kl] = '\0';
			if (qpio_devargs_same_file(file, path))
				return 1;
		}
	}
	return 0;
}
