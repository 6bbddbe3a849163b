#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The bench scripts' and qpio-bench-cacheline's refusals of bad options,
# each with its exit status (2, a usage error) and the first words of its
# message; they come before any tool is looked for or any process starts.
#
#   bench/usage_test.sh SOURCE_ROOT QPIO_BENCH_CACHELINE
set -u
root=$1
cacheline=$2
fails=0

# want RC TEXT CMD...: CMD exits RC and its stderr holds TEXT.
want() {
	local rc=$1 text=$2 got err
	shift 2
	err=$("$@" 2>&1 >/dev/null)
	got=$?
	if [ "$got" != "$rc" ] || [[ "$err" != *"$text"* ]]; then
		echo "FAIL: $*: exit $got (want $rc), stderr: $err (want: $text)"
		fails=$((fails + 1))
	else
		echo "ok: $*: exit $got, $text"
	fi
}

m=$root/bench/memif-vs-qpio.sh
# bash arithmetic would read 08 as octal: refused, not run
want 2 "-t wants whole seconds from 1 to 999999999, no leading 0, got '08'" "$m" -t 08
want 2 "-p wants whole pairs from 1 to 999999999, no leading 0, got '00'" "$m" -p 00
want 2 "-p wants whole pairs from 1 to 999999999, no leading 0, got '0'" "$m" -p 0
want 2 "-t wants whole seconds from 1 to 999999999, no leading 0, got '1000000000'" "$m" -t 1000000000
want 2 "-p needs a value" "$m" -p
want 2 "-s needs a value" "$m" -s ''
want 2 "-s sizes must be 64..1518" "$m" -s 63
want 2 "unknown option '--bogus'" "$m" --bogus

l=$root/bench/latency-vs-memif.sh
want 2 "-n wants whole orders from 1 to 999999999, no leading 0, got '010'" "$l" -n 010
want 2 "-d does not apply with -w (the two soft wire devices are set by -w)" "$l" -w -d soft0
want 2 "-d wants a value" "$l" -d

a=$root/bench/qp-rxe-ab.sh
want 2 "-o OTHER_BUILDDIR is required" "$a"
want 2 "unexpected argument 'extra'" "$a" -o /nonexistent extra
want 2 "-t wants whole seconds from 1 to 999999999, no leading 0, got '08'" "$a" -o /nonexistent -t 08
want 2 "-s must be 64..1518, got 1" "$a" -o /nonexistent -s 1
want 2 "-p is at most 100 pairs, -t at most 600 s" "$a" -o /nonexistent -p 101
want 2 "/nonexistent/app/testpmd/qpio-testpmd is not built" "$a" -o /nonexistent

i=$root/bench/instructions.sh
want 2 "-l -s: message sizes of 8..256 bytes, got '7'" "$i" -l -s 7
want 2 "-l -s: message sizes of 8..256 bytes, got '08'" "$i" -l -s 08
want 2 "-l: -a and -m do not apply" "$i" -l -m

w=$root/bench/wire-vs-rxe.sh
want 2 "unexpected argument 'extra'" "$w" extra
want 2 "-s wants whole bytes from 1 to 999999999, no leading 0, got '0'" "$w" -s 0
want 2 "-s must be 1..1024, got 1025" "$w" -s 1025
want 2 "-n wants whole iterations from 1 to 999999999, no leading 0, got '08'" "$w" -n 08
want 2 "-n and -N are at most 1000000 iterations" "$w" -N 1000001
want 2 "-r wants whole rounds from 1 to 999999999, no leading 0, got ''" "$w" -r ''
want 2 "-r is at most 20 rounds, got 21" "$w" -r 21
want 2 "/nonexistent/app/perf/qpio-perf is not built" "$w" -b /nonexistent

v=$root/bench/wire-vs-memif.sh
want 2 "-p wants whole pairs from 1 to 999999999, no leading 0, got '0'" "$v" -p 0
want 2 "-s wants 8..1024 bytes (one packet at path MTU 1024), got 1025" "$v" -s 1025
want 2 "-s wants whole bytes from 1 to 999999999, no leading 0, got '064'" "$v" -s 064
want 2 "-n SHORT,LONG: two message counts, multiples of 16, LONG > SHORT" "$v" -n 100,50
want 2 "-n SHORT,LONG: two message counts, multiples of 16, LONG > SHORT" "$v" -n 20000,30001
want 2 "-t needs a value" "$v" -t
want 2 "-l wants 1..128 WRs, got 129" "$v" -l "129"
want 2 "-q wants 32..4096 entries, got 16" "$v" -q 16
want 2 "-d wants devargs to append, starting with a comma (-d ,ack_coalesce=0), got 'ack_coalesce=0'" "$v" -d ack_coalesce=0
want 2 "unknown option '--bogus'" "$v" --bogus

want 2 "--lines takes 1" "$cacheline" --lines 3
want 2 "--lines takes 1" "$cacheline" --lines 2x
want 2 "--lines takes 1" "$cacheline" --lines ''

g=$root/bench/gateway-vs-testpmd.sh
want 2 "--queues wants 2..8, got '9'" "$g" --queues 9
want 2 "--queues wants 2..8, got '1'" "$g" --queues 1
want 2 "-P wants whole streams from 1 to 999999999, no leading 0, got '08'" "$g" -P 08
want 2 "-P wants 1..128 streams (iperf3's limit), got 129" "$g" -P 129
want 2 "-t needs a value" "$g" -t
want 2 "--pmd wants af_xdp or af_packet, got 'tap'" "$g" --pmd tap
want 2 "unknown option '--bogus'" "$g" --bogus
want 2 "--mtu wants 1280..9000 bytes, got 9001" "$g" --mtu 9001
want 2 "--mtu 9000 is jumbo: give --pmd af_packet" "$g" --mtu 9000

e=$root/bench/events-vs-polling.sh
want 2 "-g wants whole milliseconds 0..60000, no leading 0, got '60001'" "$e" -g 60001
want 2 "-g wants whole milliseconds 0..60000, no leading 0, got '01'" "$e" -g 01
want 2 "-g 60000 with -n 2000 pauses too long for one run (a day at most): give fewer exchanges" "$e" -g 60000
want 2 "-n is at most 1000000 with a pause (-g), got 1000001" "$e" -n 1000001
want 2 "-s wants 1..4096 bytes, got 4097" "$e" -s 4097
want 2 "-p is at most 100 pairs, got 101" "$e" -p 101
want 2 "-n needs a value" "$e" -n
want 2 "-S wants whole microseconds 0..1000000, no leading 0, got '1000001'" "$e" -S 1000001
want 2 "-S wants whole microseconds 0..1000000, no leading 0, got '-1'" "$e" -S -1
want 2 "unknown option '--bogus'" "$e" --bogus

if [ "$fails" != 0 ]; then
	echo "bench-usage: $fails case(s) failed"
	exit 1
fi
echo "bench-usage: all cases refused as documented"
