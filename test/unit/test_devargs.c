/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One devargs rule set for RDMA devices (--rdma-dev) and packet ports
 * (--dev): duplicate keys, empty items, items without a value, unknown
 * keys and non-decimal numbers are refused by both, with EINVAL.
 */
#include <rte_errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "qpio_devargs.h"
#include "qpio_port.h"
#include "test_common.h"

TestSuite(devargs, .init = qt_eal_init, .fini = qt_eal_fini);

/* Strings both kinds must refuse, after a valid name. */
static const char *const bad_tails[] = {
	",",                     /* trailing comma: an empty item */
	",,",
	",%s=1,,%s=1",
	",%s",                   /* no '=' */
	",%s=",                  /* empty value */
	",=1",                   /* empty key */
	",nosuchkey=1",
	",%s=1,%s=2",            /* duplicate key */
	",%s=2,%s=2",            /* duplicate key, same value */
	",%s=[1,2",              /* unbalanced bracket */
};

static void
devargs_of(char *buf, size_t size, const char *name, const char *tail,
	   const char *key)
{
	char fmt[128];

	snprintf(fmt, sizeof(fmt), "%s%s", name, tail);
	snprintf(buf, size, fmt, key, key);
}

Test(devargs, rdma_dev_refuses_what_ports_refuse)
{
	char s[128];
	unsigned int i;
	int id;

	for (i = 0; i < RTE_DIM(bad_tails); i++) {
		devargs_of(s, sizeof(s), "soft0", bad_tails[i], "max_qp");
		rte_errno = 0;
		cr_assert_null(qpio_rdma_dev_create(s), "accepted '%s'", s);
		cr_assert_eq(rte_errno, EINVAL, "'%s': %d", s, rte_errno);
		cr_assert_eq(qpio_rdma_dev_count(), 0);
		devargs_of(s, sizeof(s), "ring0", bad_tails[i], "peer");
		id = qpio_port_create(s);
		cr_assert_eq(id, -EINVAL, "'%s': %d", s, id);
		cr_assert_eq(qpio_port_count(), 0);
	}
}

Test(devargs, duplicate_key_refused_by_rdma_dev)
{
	rte_errno = 0;
	cr_assert_null(qpio_rdma_dev_create("soft0,max_qp=16,max_qp=32"));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_eq(qpio_rdma_dev_count(), 0);
}

Test(devargs, integers_are_decimal_only)
{
	static const char *const bad[] = {
		"0x10", "010x", "+16", "-1", " 16", "16 ", "1e3", "",
		"99999999999", "4294967296",
	};
	struct qpio_device_attr a;
	struct qpio_device *d;
	char s[64];
	unsigned int i;

	for (i = 0; i < RTE_DIM(bad); i++) {
		snprintf(s, sizeof(s), "soft0,max_qp=%s", bad[i]);
		rte_errno = 0;
		cr_assert_null(qpio_rdma_dev_create(s), "accepted '%s'", s);
		cr_assert_eq(rte_errno, EINVAL, "'%s'", s);
	}
	/* A leading zero is decimal, not octal. */
	d = qpio_rdma_dev_create("soft0,max_qp=010");
	cr_assert_not_null(d);
	cr_assert_eq(qpio_rdma_dev_query(d, &a), 0);
	cr_assert_eq(a.max_qp, 10);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

Test(devargs, parser_rules_direct)
{
	static const char *const keys[] = { "a", "b", NULL };
	struct rte_kvargs *kv = NULL;
	const char *args = NULL;
	uint32_t v = 7;
	char name[8];

	cr_assert_eq(qpio_devargs_split("dev0,a=1", name, sizeof(name), &args), 0);
	cr_assert_str_eq(name, "dev0");
	cr_assert_str_eq(args, "a=1");
	cr_assert_eq(qpio_devargs_split("dev0", name, sizeof(name), &args), 0);
	cr_assert_null(args);
	cr_assert_eq(qpio_devargs_split(",a=1", name, sizeof(name), &args), -EINVAL);
	cr_assert_eq(qpio_devargs_split("longername0", name, sizeof(name), &args),
		     -EINVAL);
	cr_assert_eq(qpio_devargs_parse("t", NULL, keys, NULL, &kv), 0);
	cr_assert_null(kv);
	cr_assert_eq(qpio_devargs_parse("t", "a=[1,2],b=3", keys, NULL, &kv), 0);
	cr_assert_not_null(kv);
	cr_assert_eq(kv->count, 2);
	cr_assert_eq(qpio_devargs_u32("t", kv, "b", 0, 10, &v), 0);
	cr_assert_eq(v, 3);
	cr_assert_eq(qpio_devargs_u32("t", kv, "b", 4, 10, &v), -EINVAL);
	cr_assert_eq(v, 3);
	rte_kvargs_free(kv);
	cr_assert_eq(qpio_devargs_parse("t", "a=1]", keys, NULL, &kv), -EINVAL);
	cr_assert_eq(qpio_devargs_parse("t", "a=1,A=2", keys, NULL, &kv), -EINVAL);
	cr_assert_null(kv);
}

Test(devargs, parse_u32_takes_decimal_digits_in_range_only)
{
	static const char *const bad[] = {
		"+16", "-1", " 16", "16 ", "0x10", "1e3", "", "16-", "99999999999",
	};
	uint32_t v = 7;
	unsigned int i;

	for (i = 0; i < RTE_DIM(bad); i++) {
		cr_assert_eq(qpio_devargs_parse_u32(bad[i], 0, UINT32_MAX, &v),
			     -EINVAL, "accepted '%s'", bad[i]);
		cr_assert_eq(v, 7, "'%s' wrote the value", bad[i]);
	}
	cr_assert_eq(qpio_devargs_parse_u32(NULL, 0, 10, &v), -EINVAL);
	cr_assert_eq(qpio_devargs_parse_u32("4294967296", 0, UINT32_MAX, &v),
		     -ERANGE);
	cr_assert_eq(qpio_devargs_parse_u32("0", 1, 65535, &v), -ERANGE);
	cr_assert_eq(qpio_devargs_parse_u32("65536", 1, 65535, &v), -ERANGE);
	cr_assert_eq(v, 7);
	cr_assert_eq(qpio_devargs_parse_u32("65535", 1, 65535, &v), 0);
	cr_assert_eq(v, 65535);
	cr_assert_eq(qpio_devargs_parse_u32("010", 0, 100, &v), 0);
	cr_assert_eq(v, 10, "a leading zero is decimal, not octal");
	cr_assert_eq(qpio_devargs_parse_u32("4294967295", 0, UINT32_MAX, &v), 0);
	cr_assert_eq(v, UINT32_MAX);
}

Test(devargs, parse_hex_takes_0x_and_hex_digits_in_range_only)
{
	static const char *const bad[] = {
		"10", "0x", "0X", "x10", "0x-1", "-0x1", "+0x1", " 0x1", "0x1 ",
		"0x0x1", "0x1g", "0x10000000000000000", "0x00000000000000001", "",
	};
	uint64_t v = 7;
	unsigned int i;

	for (i = 0; i < RTE_DIM(bad); i++) {
		cr_assert_eq(qpio_devargs_parse_hex(bad[i], 0, UINT64_MAX, &v),
			     -EINVAL, "accepted '%s'", bad[i]);
		cr_assert_eq(v, 7, "'%s' wrote the value", bad[i]);
	}
	cr_assert_eq(qpio_devargs_parse_hex(NULL, 0, 10, &v), -EINVAL);
	cr_assert_eq(qpio_devargs_parse_hex("0xc000", 0xc001, 0xfffe, &v),
		     -ERANGE);
	cr_assert_eq(qpio_devargs_parse_hex("0xFFFF", 0xc001, 0xfffe, &v),
		     -ERANGE);
	cr_assert_eq(v, 7);
	cr_assert_eq(qpio_devargs_parse_hex("0XfFfE", 0xc001, 0xfffe, &v), 0);
	cr_assert_eq(v, 0xfffe);
	cr_assert_eq(qpio_devargs_parse_hex("0xffffffffffffffff", 0,
					    UINT64_MAX, &v), 0);
	cr_assert_eq(v, UINT64_MAX);
	cr_assert_eq(qpio_devargs_parse_hex("0x0000000000000001", 0, 1, &v), 0);
	cr_assert_eq(v, 1);
}

Test(devargs, parse_uint_takes_decimal_or_0x_hex)
{
	static const char *const bad[] = {
		"", "0x", "-1", "+1", " 1", "1 ", "1e3", "0b1", "010x", "0x1.0",
	};
	uint64_t v = 7;
	unsigned int i;

	for (i = 0; i < RTE_DIM(bad); i++) {
		cr_assert_eq(qpio_devargs_parse_uint(bad[i], 0, UINT64_MAX, &v),
			     -EINVAL, "accepted '%s'", bad[i]);
		cr_assert_eq(v, 7, "'%s' wrote the value", bad[i]);
	}
	cr_assert_eq(qpio_devargs_parse_uint("0x10000", 0, 0xffff, &v),
		     -ERANGE);
	cr_assert_eq(qpio_devargs_parse_uint("65536", 0, 0xffff, &v), -ERANGE);
	cr_assert_eq(v, 7);
	/* a leading zero is decimal, not octal */
	cr_assert_eq(qpio_devargs_parse_uint("010", 0, 0xffff, &v), 0);
	cr_assert_eq(v, 10);
	cr_assert_eq(qpio_devargs_parse_uint("0x10", 0, 0xffff, &v), 0);
	cr_assert_eq(v, 16);
	cr_assert_eq(qpio_devargs_parse_uint("0", 0, 0xffff, &v), 0);
	cr_assert_eq(v, 0);
}

Test(devargs, parse_u64_takes_decimal_digits_in_range_only)
{
	static const char *const bad[] = {
		"+16", "-1", " 16", "16 ", "0x10", "1e3", "", "1.5",
		"000000000000000000016",
	};
	uint64_t v = 7;
	unsigned int i;

	for (i = 0; i < RTE_DIM(bad); i++) {
		cr_assert_eq(qpio_devargs_parse_u64(bad[i], 0, UINT64_MAX, &v),
			     -EINVAL, "accepted '%s'", bad[i]);
		cr_assert_eq(v, 7, "'%s' wrote the value", bad[i]);
	}
	cr_assert_eq(qpio_devargs_parse_u64(NULL, 0, 10, &v), -EINVAL);
	cr_assert_eq(qpio_devargs_parse_u64("18446744073709551616", 0,
					    UINT64_MAX, &v), -ERANGE);
	cr_assert_eq(qpio_devargs_parse_u64("99999999999999999999", 0,
					    UINT64_MAX, &v), -ERANGE);
	cr_assert_eq(qpio_devargs_parse_u64("0", 1, 10, &v), -ERANGE);
	cr_assert_eq(qpio_devargs_parse_u64("11", 1, 10, &v), -ERANGE);
	cr_assert_eq(v, 7);
	cr_assert_eq(qpio_devargs_parse_u64("18446744073709551615", 0,
					    UINT64_MAX, &v), 0);
	cr_assert_eq(v, UINT64_MAX);
	cr_assert_eq(qpio_devargs_parse_u64("010", 0, 100, &v), 0);
	cr_assert_eq(v, 10, "a leading zero is decimal, not octal");
}

Test(devargs, parse_decimal_takes_digits_and_one_point_only)
{
	static const char *const bad[] = {
		"+1", "-1", " 1", "1 ", "0x10", "1e3", "", ".5", "1.", "1..5",
		"1.5.2", "inf", "nan", "abc", "1,5",
		"123456789012345678901234567890123",
	};
	double v = 7;
	unsigned int i;

	for (i = 0; i < RTE_DIM(bad); i++) {
		cr_assert_eq(qpio_devargs_parse_decimal(bad[i], 0, 1e40, &v),
			     -EINVAL, "accepted '%s'", bad[i]);
		cr_assert_eq(v, 7, "'%s' wrote the value", bad[i]);
	}
	cr_assert_eq(qpio_devargs_parse_decimal(NULL, 0, 10, &v), -EINVAL);
	cr_assert_eq(qpio_devargs_parse_decimal("10.5", 0, 10, &v), -ERANGE);
	cr_assert_eq(qpio_devargs_parse_decimal("0.5", 1, 10, &v), -ERANGE);
	cr_assert_eq(v, 7);
	cr_assert_eq(qpio_devargs_parse_decimal("0.25", 0, 10, &v), 0);
	cr_assert_float_eq(v, 0.25, 1e-12);
	cr_assert_eq(qpio_devargs_parse_decimal("10", 0, 10, &v), 0);
	cr_assert_float_eq(v, 10, 1e-12);
	cr_assert_eq(qpio_devargs_parse_decimal("007.50", 0, 10, &v), 0);
	cr_assert_float_eq(v, 7.5, 1e-12, "leading zeros are decimal");
}

/* One file by device and inode, or by the path with its directory
 * resolved; a character device never; a port's pcap items. */
Test(devargs, same_file_and_names_file)
{
	char dir[] = "/tmp/qpio-sf.XXXXXX", a[64], a2[80], b[64], dv[256];

	cr_assert_not_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(a2, sizeof(a2), "%s/./../%s/a", dir, strrchr(dir, '/') + 1);
	snprintf(b, sizeof(b), "%s/b", dir);
	/* neither exists: by the resolved path */
	cr_assert_eq(qpio_devargs_same_file(a, a2), 1);
	cr_assert_eq(qpio_devargs_same_file(a, b), 0);
	/* one exists, the other not */
	qt_file_write(a, "x", 1);
	cr_assert_eq(qpio_devargs_same_file(a, b), 0);
	/* both exist: by inode, a link too */
	cr_assert_eq(qpio_devargs_same_file(a, a2), 1);
	cr_assert_eq(link(a, b), 0);
	cr_assert_eq(qpio_devargs_same_file(a, b), 1);
	unlink(b);
	qt_file_write(b, "y", 1);
	cr_assert_eq(qpio_devargs_same_file(a, b), 0);
	cr_assert_eq(qpio_devargs_same_file("/dev/null", "/dev/null"), 0);
	snprintf(dv, sizeof(dv), "pcap0,rx_pcap=%s,tx_pcap=%s", b, a2);
	cr_assert_eq(qpio_devargs_names_file(dv, a), 1);
	cr_assert_eq(qpio_devargs_names_file(dv, b), 1);
	snprintf(dv, sizeof(dv), "eth0,vdev=net_pcap0,rx_pcap=%s", a);
	cr_assert_eq(qpio_devargs_names_file(dv, a2), 1);
	cr_assert_eq(qpio_devargs_names_file("ring0,peer=ring1", a), 0);
	cr_assert_eq(qpio_devargs_names_file("pcap0,rx_pcap=", a), 0);
	unlink(a);
	unlink(b);
	rmdir(dir);
}
