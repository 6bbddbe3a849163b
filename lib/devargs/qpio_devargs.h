/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_DEVARGS_H
#define QPIO_DEVARGS_H

/**
 * @file
 * The one devargs parser of qpio, used for RDMA devices (`--rdma-dev`,
 * qpio_rdma_dev_create()) and packet ports (`--dev`, qpio_port_create()),
 * so both follow one rule set:
 *
 * - the string is `<name>[,<key>=<value>[,...]]`; the name is 1..name_size-1
 *   characters;
 * - no empty item (no `,,`, no leading or trailing comma), every item is
 *   `key=value` with a non-empty key and a non-empty value; a value may be
 *   a bracketed list (`key=[a,b]`, as rte_kvargs reads it);
 * - every key is one of the driver's keys, and is given at most once
 *   (a duplicate is refused, it is not "last wins");
 * - integer values are decimal digits only (no sign, no `0x` hex, no
 *   octal), inside the range the key documents.
 *
 * Each refusal is -EINVAL with one log line naming the owner, the item and
 * the rule. Control path; the functions keep no state and may be called
 * from any thread.
 */

#include <stddef.h>
#include <stdint.h>

#include <rte_kvargs.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Split a devargs string into its name and the key=value part.
 *
 * @param devargs    NUL-terminated string.
 * @param name       receives the name, NUL-terminated.
 * @param name_size  bytes of name (the name may be name_size - 1 long).
 * @param args       receives a pointer into devargs just past the first
 *   comma, or NULL when there is none.
 * @return 0; -EINVAL (NULL argument, empty or too long name; logged).
 */
int qpio_devargs_split(const char *devargs, char *name, size_t name_size,
		       const char **args);

/**
 * Check the key=value part against the rules above, then parse it.
 *
 * @param owner       names the device or port in log lines ("soft0").
 * @param args        key=value part (after the name's comma); NULL or
 *   empty is an empty list only when empty_ok, else it is "an empty item".
 * @param valid_keys  NULL-terminated list of the driver's keys.
 * @param doc         where the keys are documented, for the log line
 *   ("doc/guides/nics/soft.rst"); may be NULL.
 * @param out         receives the list (free with rte_kvargs_free()), or
 *   NULL when args is NULL.
 * @return 0; -EINVAL (rule broken; logged); -ENOMEM.
 */
int qpio_devargs_parse(const char *owner, const char *args,
		       const char *const *valid_keys, const char *doc,
		       struct rte_kvargs **out);

/**
 * Read key as a string. *val points into kvlist (valid until it is freed)
 * and is left untouched when the key is absent or kvlist is NULL.
 * @return 0; -EINVAL (given twice or empty: only for lists not made by
 *   qpio_devargs_parse(); logged).
 */
int qpio_devargs_str(const char *owner, const struct rte_kvargs *kvlist,
		     const char *key, const char **val);

/**
 * Read a string as a decimal unsigned integer in [min, max], by the rule
 * above: 1..10 decimal digits and nothing else (no sign, no space, no
 * `0x` hex; leading zeros are decimal, not octal). The number parser of
 * qpio_devargs_u32(), for numbers outside a key=value list (a port in
 * `ADDR:PORT`, a field of a configuration file). Logs nothing: the caller
 * names the item and the range in its own message.
 *
 * @param s    NUL-terminated string.
 * @param min  smallest value accepted.
 * @param max  largest value accepted.
 * @param val  receives the value; untouched on error.
 * @return 0; -EINVAL (s NULL, empty, or not only decimal digits, or
 *   longer than 10 digits); -ERANGE (decimal digits, but outside
 *   [min, max]). Any thread.
 */
int qpio_devargs_parse_u32(const char *s, uint32_t min, uint32_t max,
			   uint32_t *val);

/**
 * Read a string as a decimal unsigned 64-bit integer in [min, max]: the
 * rule of qpio_devargs_parse_u32() with 1..20 digits, for counts that
 * pass 2^32 (packets, iterations). Logs nothing.
 *
 * @param s    NUL-terminated string.
 * @param min  smallest value accepted.
 * @param max  largest value accepted.
 * @param val  receives the value; untouched on error.
 * @return 0; -EINVAL (s NULL, empty, or not only decimal digits, or
 *   longer than 20 digits); -ERANGE (decimal digits, but above
 *   UINT64_MAX or outside [min, max]). Any thread.
 */
int qpio_devargs_parse_u64(const char *s, uint64_t min, uint64_t max,
			   uint64_t *val);

/**
 * Read a string as an unsigned 64-bit integer in [min, max] written in
 * hexadecimal: "0x" or "0X", then 1..16 hexadecimal digits, and nothing
 * else (no sign, no space, no second prefix). For masks and identifiers
 * that are written in hex by convention (offload masks, multicast LIDs,
 * P_Keys). Logs nothing.
 *
 * @param s    NUL-terminated string.
 * @param min  smallest value accepted.
 * @param max  largest value accepted.
 * @param val  receives the value; untouched on error.
 * @return 0; -EINVAL (s NULL, no "0x" prefix, no digit after it, a
 *   character that is not a hex digit, or more than 16 digits);
 *   -ERANGE (of the form, but outside [min, max]). Any thread.
 */
int qpio_devargs_parse_hex(const char *s, uint64_t min, uint64_t max,
			   uint64_t *val);

/**
 * Read a string as an unsigned 64-bit integer in [min, max], decimal
 * (qpio_devargs_parse_u64()) or, after "0x", hexadecimal
 * (qpio_devargs_parse_hex()). A leading zero without "x" is decimal, not
 * octal: "010" is ten. Logs nothing.
 *
 * @return 0; -EINVAL (neither form); -ERANGE (outside [min, max]). Any
 *   thread.
 */
int qpio_devargs_parse_uint(const char *s, uint64_t min, uint64_t max,
			    uint64_t *val);

/**
 * Read a string as a decimal number in [min, max], for quantities with a
 * fraction (seconds, rates): decimal digits, then optionally a point and
 * more decimal digits ("2", "0.25"), and nothing else: no sign, no space,
 * no exponent, no hex, no "inf" or "nan", no point without digits on
 * both sides. At most 32 characters. Logs nothing: the caller names the
 * item and the range in its own message.
 *
 * @param s    NUL-terminated string.
 * @param min  smallest value accepted.
 * @param max  largest value accepted.
 * @param val  receives the value; untouched on error.
 * @return 0; -EINVAL (s NULL, empty, not of the form above, or longer
 *   than 32 characters); -ERANGE (of the form, but outside [min, max]).
 *   Any thread (strtod() in the "C" locale's decimal point, which the
 *   form requires).
 */
int qpio_devargs_parse_decimal(const char *s, double min, double max,
			       double *val);

/**
 * Read key as a decimal unsigned integer in [min, max] (the rule of
 * qpio_devargs_parse_u32()); *val is left untouched when the key is
 * absent or kvlist is NULL.
 * @return 0; -EINVAL (not decimal digits, out of range, or as
 *   qpio_devargs_str(); logged naming the key and the range).
 */
int qpio_devargs_u32(const char *owner, const struct rte_kvargs *kvlist,
		     const char *key, uint32_t min, uint32_t max,
		     uint32_t *val);

/**
 * Whether two paths a tool writes to (or reads from) name one file: by
 * device and inode where both exist, else by the path with its directory
 * resolved (realpath(); "x", "./x" and "dir/../x" are one file). A
 * character device (/dev/null) is never one file with another path, so it
 * may take several outputs. The rule of the tools' "two outputs in one
 * file" refusal (qpio-testpmd, qpio-perf, the examples).
 *
 * @param a, b  NUL-terminated paths, not NULL.
 * @return 1 (one file) or 0. Any thread; reads the file system (stat(),
 *   realpath()), writes nothing.
 */
int qpio_devargs_same_file(const char *a, const char *b);

/**
 * Whether the devargs of a port name path as a file the port reads or
 * writes: the rx_pcap= and tx_pcap= items of a pcap port, and of net_pcap
 * through an eth port's vdev= (by qpio_devargs_same_file()).
 *
 * @param devargs  the port's devargs, NUL-terminated, not NULL.
 * @param path     the file, not NULL.
 * @return 1 or 0. Any thread.
 */
int qpio_devargs_names_file(const char *devargs, const char *path);

#ifdef __cplusplus
}
#endif

#endif /* QPIO_DEVARGS_H */
