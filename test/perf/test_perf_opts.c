/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-perf option parsing: what is accepted (perftest names, defaults)
 * and every refusal, each with the message naming its rule.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include <criterion/criterion.h>

#include "qpio_rdma.h"
#include "perf.h"

static struct perf_opts o;
static char err[512];

static int
parse(const char *first, ...)
{
	char *argv[64];
	const char *a;
	va_list ap;
	int argc = 0;

	argv[argc++] = (char *)"qpio-perf";
	va_start(ap, first);
	for (a = first; a != NULL; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	return perf_opts_parse(argc, argv, &o, err, sizeof(err));
}

#define REFUSED(msg, ...) do { \
	cr_assert_eq(parse(__VA_ARGS__, NULL), -EINVAL, "accepted, wanted '%s'", msg); \
	cr_assert_not_null(strstr(err, msg), "message '%s' lacks '%s'", err, msg); \
	} while (0)

Test(perf_opts, perftest_name_sets_test_and_mode)
{
	cr_assert_eq(parse("--test", "ib_write_bw", NULL), 0, "%s", err);
	cr_assert_eq(o.test, PERF_WRITE);
	cr_assert_eq(o.mode, PERF_BW);
	cr_assert_eq(o.size, 65536);
	cr_assert_eq(o.iters, 5000);
	cr_assert_eq(o.tx_depth, 128);
	cr_assert_eq(o.cq_mod, 100);
	cr_assert_eq(o.transport, QPIO_QPT_RC);
	cr_assert_str_eq(o.dev[0], "soft0");
	cr_assert_eq(parse("--test", "ib_atomic_lat", NULL), 0, "%s", err);
	cr_assert_eq(o.test, PERF_ATOMIC);
	cr_assert_eq(o.mode, PERF_LAT);
	cr_assert_eq(o.size, 8);
	cr_assert_eq(o.iters, 1000);
	cr_assert_eq(o.tx_depth, 1);
}

Test(perf_opts, short_options)
{
	cr_assert_eq(parse("--test", "send", "--mode", "bw", "-s", "300", "-n", "77",
			   "-I", "128", "-l", "8", "-Q", "16", "-q", "4", "-t", "64",
			   "-r", "256", "-b", "-c", "UC", "--sge", "3", "--validate",
			   "--report_gbits", "--dev", "soft3", "--dev", "soft4",
			   "--json", "/tmp/x.json", "--csv", "/tmp/x.csv",
			   "--expect", "p99<=2.5us,mpps>=10", NULL), 0, "%s", err);
	cr_assert_eq(o.size, 300);
	cr_assert_eq(o.iters, 77);
	cr_assert_eq(o.inline_size, 128);
	cr_assert_eq(o.post_list, 8);
	cr_assert_eq(o.cq_mod, 16);
	cr_assert_eq(o.qps, 4);
	cr_assert_eq(o.tx_depth, 64);
	cr_assert_eq(o.rx_depth, 256);
	cr_assert_eq(o.bidir, 1);
	cr_assert_eq(o.transport, QPIO_QPT_UC);
	cr_assert_eq(o.sge, 3);
	cr_assert_eq(o.validate, 1);
	cr_assert_eq(o.report_gbits, 1);
	cr_assert_eq(o.ndev, 2);
	cr_assert_str_eq(o.dev[1], "soft4");
	cr_assert_eq(o.ngates, 2);
	cr_assert_eq(o.gates[0].op, 0);
	cr_assert_float_eq(o.gates[0].value, 2.5, 1e-9);
	cr_assert_eq(o.gates[1].op, 1);
	cr_assert_float_eq(o.gates[1].value, 10, 1e-9);
}

Test(perf_opts, gate_units)
{
	cr_assert_eq(parse("--test", "ib_send_lat", "--expect",
			   "p99.9<800ns,max<2ms,t_typical>0.1,lost<=0", NULL), 0, "%s", err);
	cr_assert_eq(o.ngates, 4);
	cr_assert_float_eq(o.gates[0].value, 0.8, 1e-9);
	cr_assert_eq(o.gates[0].op, 2);
	cr_assert_float_eq(o.gates[1].value, 2000, 1e-9);
	cr_assert_eq(o.gates[2].op, 3);
	cr_assert_eq(o.gates[3].op, 0);
}

Test(perf_opts, duration_and_rate)
{
	cr_assert_eq(parse("--test", "send", "--mode", "bw", "-D", "2.5", "--rate",
			   "100000", NULL), 0, "%s", err);
	cr_assert_float_eq(o.duration, 2.5, 1e-9);
	cr_assert_float_eq(o.rate, 100000, 1e-9);
	cr_assert_eq(o.cq_mod, 1, "open loop times every message by default");
}

Test(perf_opts, refusals_test_and_mode)
{
	REFUSED("--test is required", "--mode", "lat");
	REFUSED("--test 'foo': not a test", "--test", "foo");
	REFUSED("--mode lat|bw is required", "--test", "send");
	REFUSED("--mode 'x': use lat or bw", "--test", "send", "--mode", "x");
	REFUSED("names the lat mode but --mode is bw", "--test", "ib_send_lat",
		"--mode", "bw");
	REFUSED("unknown option '--bogus'", "--test", "send", "--mode", "lat",
		"--bogus");
	REFUSED("option '-s' needs a value", "--test", "send", "--mode", "lat", "-s");
	REFUSED("unexpected argument 'extra'", "--test", "send", "--mode", "lat",
		"extra");
}

Test(perf_opts, refusals_transport)
{
	REFUSED("UD carries SEND only", "--test", "ib_write_bw", "-c", "UD");
	REFUSED("UD carries SEND only", "--test", "ib_read_lat", "-c", "UD");
	REFUSED("UD carries SEND only", "--test", "ib_atomic_bw", "-c", "UD");
	REFUSED("UC has no RDMA READ or atomics", "--test", "ib_read_bw", "-c", "UC");
	REFUSED("UC has no RDMA READ or atomics", "--test", "ib_atomic_lat", "-c", "UC");
	REFUSED("the transport is RC, UC or UD", "--test", "ib_send_lat", "-c", "XRC");
}

Test(perf_opts, refusals_numbers)
{
	REFUSED("-s '0': must be a decimal integer in 1..", "--test", "ib_send_lat",
		"-s", "0");
	REFUSED("-s '12k'", "--test", "ib_send_lat", "-s", "12k");
	REFUSED("-n '0'", "--test", "ib_send_lat", "-n", "0");
	REFUSED("-q '65'", "--test", "ib_send_bw", "-q", "65");
	REFUSED("-t '0'", "--test", "ib_send_bw", "-t", "0");
	REFUSED("-l '257'", "--test", "ib_send_bw", "-l", "257");
	REFUSED("-I '4097'", "--test", "ib_send_bw", "-I", "4097");
	REFUSED("--sge '17'", "--test", "ib_send_bw", "--sge", "17");
	REFUSED("-D '0': the duration is seconds", "--test", "ib_send_bw", "-D", "0");
	REFUSED("--rate '0'", "--test", "ib_send_bw", "--rate", "0");
	REFUSED("-A 'XOR'", "--test", "ib_atomic_bw", "-A", "XOR");
}

Test(perf_opts, refusals_numbers_by_the_devargs_rule)
{
	REFUSED("-s '+64': must be a decimal integer", "--test", "ib_send_bw",
		"-s", "+64");
	REFUSED("-s ' 64'", "--test", "ib_send_bw", "-s", " 64");
	REFUSED("-n '0x10'", "--test", "ib_send_bw", "-n", "0x10");
	REFUSED("-n '99999999999999999999'", "--test", "ib_send_bw", "-n",
		"99999999999999999999");
	REFUSED("-D '+1': the duration is seconds", "--test", "ib_send_bw",
		"-D", "+1");
	REFUSED("-D '1e1'", "--test", "ib_send_bw", "-D", "1e1");
	REFUSED("-D '0x10'", "--test", "ib_send_bw", "-D", "0x10");
	REFUSED("-D '.5'", "--test", "ib_send_bw", "-D", ".5");
	REFUSED("--rate ' 1000'", "--test", "ib_send_bw", "--rate", " 1000");
	REFUSED("--timeout 'inf'", "--test", "ib_send_lat", "--connect", "h",
		"--timeout", "inf");
	cr_assert_eq(parse("--test", "send", "--mode", "bw", "-D", "007.50",
			   NULL), 0, "%s", err);
	cr_assert_float_eq(o.duration, 7.5, 1e-9, "leading zeros are decimal");
}

Test(perf_opts, refusal_names_the_option_as_written)
{
	REFUSED("--size '+64': must be a decimal integer", "--test",
		"ib_send_bw", "--size", "+64");
	REFUSED("--duration '1e1': the duration is seconds", "--test",
		"ib_send_bw", "--duration", "1e1");
	REFUSED("--connection 'rc': the transport is RC", "--test",
		"ib_send_bw", "--connection", "rc");
	REFUSED("-c 'rc': the transport is RC", "--test", "ib_send_bw", "-c",
		"rc");
}

Test(perf_opts, an_option_given_twice_refused)
{
	REFUSED("-s given twice: give each option once", "--test",
		"ib_send_bw", "-s", "64", "-s", "64");
	REFUSED("--size given twice", "--test", "ib_send_bw", "-s", "64",
		"--size", "128");
	REFUSED("--test given twice", "--test", "ib_send_bw", "--test",
		"ib_send_bw");
	REFUSED("--validate given twice", "--test", "ib_send_bw", "--validate",
		"--validate");
	cr_assert_eq(parse("--test", "ib_send_bw", "--dev", "soft0", "--dev",
			   "soft1", "--expect", "mpps>=0.001", "--expect",
			   "p99<=1ms", NULL), 0, "--dev and --expect repeat: %s",
		     err);
	cr_assert_eq(o.ngates, 2);
}

Test(perf_opts, refusals_rules)
{
	REFUSED("atomics operate on 8 bytes", "--test", "ib_atomic_lat", "-s", "64");
	REFUSED("-a: atomics have one size", "--test", "ib_atomic_bw", "-a");
	REFUSED("-I: atomics are never inline", "--test", "ib_atomic_bw", "-I", "8");
	REFUSED("an atomic WR has exactly one 8-byte SGE", "--test", "ib_atomic_bw",
		"--sge", "2");
	REFUSED("-A selects the atomic operation", "--test", "ib_send_bw", "-A",
		"CMP_AND_SWP");
	REFUSED("RDMA READ is never inline", "--test", "ib_read_lat", "-I", "64");
	REFUSED("-a and -s", "--test", "ib_send_bw", "-a", "-s", "64");
	REFUSED("needs -s >= 4", "--test", "ib_send_bw", "-s", "2", "--sge", "4");
	REFUSED("the smallest size (2)", "--test", "ib_send_bw", "-a", "--sge", "3");
	REFUSED("-n and -D are exclusive", "--test", "ib_send_bw", "-n", "10", "-D", "1");
	REFUSED("-q 2: a latency test has one message in flight", "--test",
		"ib_send_lat", "-q", "2");
	REFUSED("-b: a latency test is already a ping-pong", "--test", "ib_send_lat",
		"-b");
	REFUSED("-l is for --mode bw", "--test", "ib_write_lat", "-l", "4");
	REFUSED("-Q is for --mode bw", "--test", "ib_write_lat", "-Q", "4");
	REFUSED("--rate is open-loop load: it needs --mode bw", "--test",
		"ib_send_lat", "--rate", "1000");
	REFUSED("-Q 200 > -t 128", "--test", "ib_send_bw", "-Q", "200");
	REFUSED("-l 64 > -t 32", "--test", "ib_send_bw", "-t", "32", "-Q", "8",
		"-l", "64");
	REFUSED("-r 1: a send latency test keeps at least 2", "--test",
		"ib_send_lat", "-r", "1");
	REFUSED("--corrupt-at with a WRITE latency test needs -s >= 2", "--test",
		"ib_write_lat", "-s", "1", "--corrupt-at", "3");
	REFUSED("--corrupt-at 300: beyond the run, whose QP 0 sends messages "
		"0..299 (-n 300); give N below 300", "--test", "ib_send_bw",
		"-n", "300", "--validate", "--corrupt-at", "300");
	REFUSED("--corrupt-at 1000: beyond the run, whose QP 0 sends messages "
		"0..999 (-n 1000, the default); give N below 1000", "--test",
		"ib_send_lat", "--validate", "--corrupt-at", "1000");
	REFUSED("-n and --run_infinitely are exclusive", "--test", "ib_send_bw",
		"-n", "10", "--run_infinitely");
	REFUSED("--run_infinitely needs --mode bw", "--test", "ib_send_lat",
		"--run_infinitely");
	REFUSED("--run_infinitely runs one size", "--test", "ib_send_bw", "-a",
		"--run_infinitely");
	REFUSED("--dev given more than twice", "--test", "ib_send_lat", "--dev",
		"soft0", "--dev", "soft1", "--dev", "soft2");
}

Test(perf_opts, refusals_expect)
{
	REFUSED("a gate is METRIC OP VALUE", "--test", "ib_send_lat", "--expect",
		"p99");
	REFUSED("unknown metric 'p98'", "--test", "ib_send_lat", "--expect",
		"p99<=1us,p98<=1us");
	REFUSED("is not a number", "--test", "ib_send_lat", "--expect", "p99<=fast");
	REFUSED("bad unit", "--test", "ib_send_lat", "--expect", "p99<=1s");
	REFUSED("bad unit", "--test", "ib_send_lat", "--expect", "mpps>=1us");
	REFUSED("give at least one gate", "--test", "ib_send_lat", "--expect", "");
	REFUSED("--expect ',': an empty gate in the list", "--test",
		"ib_send_lat", "--expect", ",");
	REFUSED("--expect 'p99<=1us,': an empty gate", "--test", "ib_send_lat",
		"--expect", "p99<=1us,");
	REFUSED("--expect ',p99<=1us': an empty gate", "--test", "ib_send_lat",
		"--expect", ",p99<=1us");
	REFUSED("'+1us' is not a number", "--test", "ib_send_lat", "--expect",
		"p99<=+1us");
	REFUSED("--expect 'p99<=1e3us': bad unit", "--test", "ib_send_lat",
		"--expect", "p99<=1e3us");
	REFUSED("' 1us' is not a number", "--test", "ib_send_lat", "--expect",
		"p99<= 1us");
}

Test(perf_opts, corrupt_at_within_the_run)
{
	cr_assert_eq(parse("--test", "ib_send_bw", "-n", "300", "--validate",
			   "--corrupt-at", "299", NULL), 0, "%s", err);
	cr_assert_eq(o.corrupt_at, 299);
	/* A timed run has no last message: any N may come. */
	cr_assert_eq(parse("--test", "ib_send_bw", "-D", "1", "--validate",
			   "--corrupt-at", "100000", NULL), 0, "%s", err);
	cr_assert_eq(o.corrupt_at, 100000);
}

Test(perf_opts, run_infinitely_interval)
{
	cr_assert_eq(parse("--test", "ib_send_bw", "--run_infinitely", NULL), 0, "%s", err);
	cr_assert_eq(o.run_inf, 1);
	cr_assert_float_eq(o.duration, 5, 1e-9, "default interval 5 s");
	cr_assert_eq(parse("--test", "ib_send_bw", "--run_infinitely", "-D", "2", NULL),
		     0, "%s", err);
	cr_assert_float_eq(o.duration, 2, 1e-9);
}

Test(perf_opts, help)
{
	cr_assert_eq(parse("--help", NULL), 1);
}

Test(perf_opts, server_and_connect)
{
	cr_assert_eq(parse("--test", "ib_send_lat", NULL), 0, "%s", err);
	cr_assert_eq(o.role, PERF_ROLE_LOCAL);
	cr_assert_eq(o.port, 18515);
	cr_assert_float_eq(o.timeout, 30.0, 1e-9);
	cr_assert_eq(parse("--test", "ib_send_lat", "--server", "-p", "0",
			   "--timeout", "2.5", NULL), 0, "%s", err);
	cr_assert_eq(o.role, PERF_ROLE_SERVER);
	cr_assert_eq(o.port, 0);
	cr_assert_float_eq(o.timeout, 2.5, 1e-9);
	cr_assert_eq(parse("--test", "ib_write_bw", "--connect", "::1",
			   "--port", "20000", "--dev", "soft1", NULL), 0, "%s", err);
	cr_assert_eq(o.role, PERF_ROLE_CLIENT);
	cr_assert_str_eq(o.host, "::1");
	cr_assert_eq(o.port, 20000);
	cr_assert_str_eq(o.dev[0], "soft1");
	cr_assert_str_eq(perf_role_name(PERF_ROLE_SERVER), "server");
	cr_assert_str_eq(perf_role_name(PERF_ROLE_CLIENT), "client");
	cr_assert_str_eq(perf_role_name(PERF_ROLE_LOCAL), "local");
}

Test(perf_opts, refusals_server_and_connect)
{
	REFUSED("--server and --connect are exclusive",
		"--test", "ib_send_lat", "--server", "--connect", "h");
	REFUSED("--server and --connect are exclusive",
		"--test", "ib_send_lat", "--connect", "h", "--server");
	REFUSED("-p 0: the client needs the server's port",
		"--test", "ib_send_lat", "--connect", "h", "-p", "0");
	REFUSED("-p '65536': must be a decimal integer in 0..65535",
		"--test", "ib_send_lat", "--server", "-p", "65536");
	REFUSED("--timeout '0': seconds",
		"--test", "ib_send_lat", "--server", "--timeout", "0");
	REFUSED("--server: this process runs one end, on one device",
		"--test", "ib_send_lat", "--server", "--dev", "soft0", "--dev", "soft1");
	REFUSED("--run_infinitely runs in one process only; drop it or --connect",
		"--test", "ib_send_bw", "--connect", "h", "--run_infinitely");
	REFUSED("--corrupt-at across processes flips a byte of a SEND or "
		"WRITE the client sends",
		"--test", "ib_send_lat", "--server", "--corrupt-at", "3");
	REFUSED("--corrupt-at across processes flips a byte of a SEND or "
		"WRITE the client sends",
		"--test", "ib_read_lat", "--connect", "h", "--corrupt-at", "3");
	cr_assert_eq(parse("--test", "ib_write_lat", "--connect", "h",
			   "--validate", "--corrupt-at", "3", NULL), 0, "%s",
		     err);
	REFUSED("--expect with --server in lat mode: the client measures",
		"--test", "ib_send_lat", "--server", "--expect", "p99<=5us");
	cr_assert_eq(parse("--test", "ib_send_bw", "--server", "--expect",
			   "mpps>=0.001", NULL), 0, "%s", err);
	REFUSED("-p and --timeout are for two processes",
		"--test", "ib_send_lat", "-p", "18515");
	REFUSED("-p and --timeout are for two processes",
		"--test", "ib_send_lat", "--timeout", "5");
	REFUSED("--connect: HOST must be 1..255 characters",
		"--test", "ib_send_lat", "--connect", "");
}

/* --perftest: a perftest tool is the peer; what its exchange carries
 * (one QP, one size, one direction, -n messages) and perftest's default
 * -n; -x and -m. */
Test(perf_opts, perftest_peer)
{
	cr_assert_eq(parse("--test", "ib_send_bw", "--connect", "h",
			   "--perftest", NULL), 0, "%s", err);
	cr_assert_eq(o.perftest, 1);
	cr_assert_eq(o.iters, 1000, "perftest's ib_send_bw default");
	cr_assert_eq(o.gid_index, -1);
	cr_assert_eq(o.mtu, 0);
	cr_assert_eq(parse("--test", "ib_write_bw", "--server", "--perftest",
			   "-x", "3", "-m", "512", NULL), 0, "%s", err);
	cr_assert_eq(o.iters, 5000, "perftest's ib_write_bw default");
	cr_assert_eq(o.gid_index, 3);
	cr_assert_eq(o.mtu, 512);
	cr_assert_eq(parse("--test", "ib_read_lat", "--server", "--perftest",
			   NULL), 0, "%s", err);
	cr_assert_eq(o.iters, 1000);
	cr_assert_eq(parse("--test", "ib_atomic_lat", "--connect", "h",
			   "--perftest", NULL), 0, "%s", err);
	cr_assert_eq(o.iters, 1000);
	cr_assert_eq(o.size, 8);
	REFUSED("--perftest: the peer is a perftest process; add --server",
		"--test", "ib_send_bw", "--perftest");
	REFUSED("--perftest: one QP; drop -q",
		"--test", "ib_send_bw", "--server", "--perftest", "-q", "2");
	REFUSED("--perftest -a: ib_write_bw and ib_read_bw only",
		"--test", "ib_send_bw", "--server", "--perftest", "-a");
	REFUSED("--perftest -a: ib_write_bw and ib_read_bw only",
		"--test", "ib_write_lat", "--connect", "h", "--perftest", "-a");
	REFUSED("--perftest -a: ib_write_bw and ib_read_bw only",
		"--test", "ib_atomic_bw", "--connect", "h", "--perftest", "-a");
	cr_assert_eq(parse("--test", "ib_write_bw", "--server", "--perftest",
			   "-a", NULL), 0, "%s", err);
	cr_assert_eq(o.all_sizes, 1);
	cr_assert_eq(parse("--test", "ib_read_bw", "--connect", "h",
			   "--perftest", "-a", NULL), 0, "%s", err);
	REFUSED("--perftest: one direction; drop -b",
		"--test", "ib_send_bw", "--server", "--perftest", "-b");
	REFUSED("--perftest: a run is -n messages at full speed",
		"--test", "ib_send_bw", "--server", "--perftest", "-D", "2");
	REFUSED("-m '300': an IB MTU, 256, 512, 1024, 2048 or 4096",
		"--test", "ib_send_bw", "-m", "300");
	REFUSED("-m '8192': must be a decimal integer in 256..4096",
		"--test", "ib_send_bw", "-m", "8192");
	REFUSED("-x '256': must be a decimal integer in 0..255",
		"--test", "ib_send_bw", "-x", "256");
}

/* -R: perftest's rdma_cm mode, RC only, with --perftest. */
Test(perf_opts, perftest_rdma_cm)
{
	cr_assert_eq(parse("--test", "ib_send_bw", "--connect", "10.0.0.1",
			   "--perftest", "-R", NULL), 0, "%s", err);
	cr_assert_eq(o.rdma_cm, 1);
	cr_assert_eq(o.perftest, 1);
	cr_assert_eq(o.port, 18515, "perftest's port, the rdma_cm one too");
	cr_assert_eq(parse("--test", "ib_write_lat", "--server", "--perftest",
			   "--rdma_cm", NULL), 0, "%s", err);
	cr_assert_eq(o.rdma_cm, 1);
	cr_assert_eq(parse("--test", "ib_send_bw", "--server", "--perftest",
			   NULL), 0, "%s", err);
	cr_assert_eq(o.rdma_cm, 0);
	REFUSED("-R: the rdma_cm exchange is perftest's -R; add --perftest",
		"--test", "ib_send_bw", "--server", "-R");
	REFUSED("-R: RC only (perftest refuses UC with rdma_cm; its UD over "
		"rdma_cm is not spoken here); drop -c or -R",
		"--test", "ib_send_bw", "--server", "--perftest", "-R",
		"-c", "UD");
	REFUSED("-R: RC only",
		"--test", "ib_send_bw", "--connect", "h", "--perftest", "-R",
		"-c", "UC");
}
