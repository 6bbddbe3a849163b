#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Runs inside the rxe VM (see test/rxe/run.sh), chrooted into the host's
# read-only root with tmpfs on /tmp, /run and /dev/shm and the results
# share on /tmp/out. Writes the exit status of the whole run to
# /tmp/out/rc: 0 every step passed, 1 a step failed.
set -u
. /tmp/out/env
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp
rc=0
t0=$(date +%s)
step() { echo "== rxe-vm [$(( $(date +%s) - t0 ))s] $*"; }
fail() { echo "== rxe-vm: FAIL: $*"; rc=1; }

step "kernel $(uname -r), $(nproc) CPUs"
# The runner shares the tree and build where the guest's tmpfs would hide
# them; if they are still not here, every step would fail for that reason.
for d in "$QPIO_ROOT" "$QPIO_BUILD"; do
	if [ ! -d "$d" ]; then
		fail "$d is not visible in the VM (test/rxe/run.sh shares paths under /tmp, /run and /dev/shm; is it on another file system?)"
		echo "$rc" > /tmp/out/rc
		exit 0
	fi
done
# rxe0 on a veth end (test/rxe/rxe_up.sh); the steps below check it.
. "$QPIO_ROOT/test/rxe/rxe_up.sh"
rxe_up fail
ibv_devinfo -d rxe0 | grep -E "hca_id|transport|state|active_mtu|link_layer" || fail "ibv_devinfo"
ibv_devinfo -v -d rxe0 | grep -E "max_qp:|max_qp_wr|max_sge:|max_cqe|max_mr:|max_srq:|atomic_cap|GID\[" |
	sed 's/^[[:space:]]*/   /'

step "(c) ibv_rc_pingpong over rxe0 loopback"
# Bounded: a server whose client never connects would wait forever. The
# client retries while the server is still starting.
timeout 60 ibv_rc_pingpong -d rxe0 -g 0 -n 100 > /tmp/pp-server.log 2>&1 &
srv=$!
ok=0
for try in 1 2 3 4 5; do
	sleep 1
	if timeout 30 ibv_rc_pingpong -d rxe0 -g 0 -n 100 127.0.0.1 \
		> /tmp/pp-client.log 2>&1; then
		ok=1
		break
	fi
	grep -q "Couldn't connect" /tmp/pp-client.log || break
done
if [ "$ok" = 1 ] && wait "$srv"; then
	grep -h "iters" /tmp/pp-client.log
	echo "== rxe-vm: (c) PASS"
else
	kill "$srv" 2>/dev/null
	wait "$srv"
	cat /tmp/pp-server.log /tmp/pp-client.log
	fail "(c) ibv_rc_pingpong"
fi

step "(e) rping over rxe0 loopback (rdma_cm)"
if ! command -v rping >/dev/null; then
	echo "== rxe-vm: (e) SKIP: rping not found (package rdmacm-utils)"
else
	timeout 60 rping -s -a 10.0.77.1 -p 7174 -C 10 > /tmp/rping-s.log 2>&1 &
	srv=$!
	ok=0
	for try in 1 2 3 4 5; do
		sleep 1
		if timeout 30 rping -c -a 10.0.77.1 -p 7174 -C 10 -S 64 -v \
			> /tmp/rping-c.log 2>&1; then
			ok=1
			break
		fi
	done
	if [ "$ok" = 1 ] && wait "$srv"; then
		echo "== rxe-vm: (e) PASS ($(grep -c 'ping data' /tmp/rping-c.log) pings checked)"
	else
		kill "$srv" 2>/dev/null
		wait "$srv"
		cat /tmp/rping-s.log /tmp/rping-c.log
		fail "(e) rping"
	fi
fi

step "(a) unit tests against ibv0,dev=rxe0 (filter $QPIO_FILTER)"
export QPIO_TEST_DEV_A="ibv0,dev=rxe0" QPIO_TEST_DEV_B="ibv0,dev=rxe0" QPIO_TEST_EAL_MEM=128 QPIO_TEST_POLL_MS=5000
export QPIO_TEST_CM_ADDR=10.0.77.1
# cm_wire_rxe: a soft wire device on veth1 (net_af_packet) connects to
# and from rxe0 through the kernel's IB CM; veth checksum offload off, as
# on a real wire (rxe-wire does the same).
export QPIO_TEST_WIRE_IFACE=veth1 QPIO_TEST_WIRE_ADDR=10.0.77.2
ethtool -K veth0 tx off >/dev/null 2>&1
ethtool -K veth1 tx off >/dev/null 2>&1
# Criterion's per-test lines stream to the console as they finish.
"$QPIO_BUILD/test/unit/qpio-unit-tests" --jobs 2 --filter "$QPIO_FILTER" \
	--timeout "${QPIO_TEST_TIMEOUT:-60}" --verbose 2>&1 | tee /tmp/unit.log |
	grep --line-buffered -E "^\[(PASS|FAIL|SKIP|ERR|WARN)|Synthesis|Crash|crash|Timed out|Assertion" |
	grep --line-buffered -v "Test is disabled"
urc=${PIPESTATUS[0]}
cp /tmp/unit.log /tmp/out/unit.log
# A sanitizer build reports after a test has passed: that fails the step.
if grep -Eq "ERROR: (Address|Leak)Sanitizer|runtime error:" /tmp/unit.log; then
	grep -E -A12 "ERROR: (Address|Leak)Sanitizer|runtime error:" /tmp/unit.log | head -60
	urc=1
fi
if [ "$urc" = 0 ]; then echo "== rxe-vm: (a) PASS"; else fail "(a) unit tests"; fi

step "(b) qpio-testpmd forwarding captures over an RC link on rxe0"
# (no process substitution: the VM's /dev has no /dev/fd)
caps=()
while read -r c; do
	[ -n "$c" ] && caps+=("$c")
done < /tmp/out/captures
if [ ! -x "$QPIO_BUILD/app/testpmd/qpio-testpmd" ]; then
	echo "== rxe-vm: (b) SKIP: $QPIO_BUILD/app/testpmd/qpio-testpmd is not built in this tree"
elif [ ${#caps[@]} -eq 0 ]; then
	echo "== rxe-vm: (b) SKIP: no capture found (give one with -c)"
else
	brc=0
	for cap in "${caps[@]}"; do
		echo "== rxe-vm: (b) $cap ($(stat -c %s "$cap") bytes)"
		if ! "$QPIO_ROOT/usertools/qpio-forward-capture.sh" -b "$QPIO_BUILD" \
			-d "ibv0,dev=rxe0" "$cap" "/tmp/fwd-$(basename "$cap")"; then
			fail "(b) forward $cap"
			brc=1
		fi
	done
	[ "$brc" = 0 ] && echo "== rxe-vm: (b) PASS (${#caps[@]} captures byte-identical)"
fi

step "(f) qp ports connected through librdmacm: two qpio-testpmd processes on rxe0"
# qp0,listen= in one process, qp1,connect= in another, each with its own
# ibv device: the captures byte-identical over qp=rc (IB CM) and one over
# qp=ud (SIDR), then a sender killed mid-transfer (link down counted,
# receives flushed once, mbufs back, reconnect=1).
if [ ! -x "$QPIO_BUILD/app/testpmd/qpio-testpmd" ] || ! command -v python3 >/dev/null; then
	echo "== rxe-vm: (f) SKIP: qpio-testpmd or python3 missing"
else
	frc=0
	for c in forward peer-kill; do
		if QPIO_CONNECT_RDMA_DEV="ibv0,dev=rxe0" QPIO_CONNECT_ADDR=10.0.77.1 \
			timeout 300 python3 "$QPIO_ROOT/test/integration/qp_connect.py" \
			"$QPIO_BUILD/app/testpmd/qpio-testpmd" \
			"$QPIO_BUILD/app/pcapcmp/qpio-pcapcmp" "$QPIO_ROOT" "$c" \
			> "/tmp/connect-$c.log" 2>&1; then
			grep -E "^ok:" "/tmp/connect-$c.log" | sed 's/^/   /'
		else
			grep -E "^(ok|FAIL):" "/tmp/connect-$c.log" | sed 's/^/   /'
			tail -60 "/tmp/connect-$c.log"
			fail "(f) qp_connect.py $c"
			frc=1
		fi
		cp "/tmp/connect-$c.log" /tmp/out/ 2>/dev/null
	done
	[ "$frc" = 0 ] && echo "== rxe-vm: (f) PASS (captures byte-identical across two processes over RC and UD, peer kill)"
fi

step "(d) qpio-perf send/write/read/atomic, lat and bw, --validate on ibv0,dev=rxe0"
perf="$QPIO_BUILD/app/perf/qpio-perf"
if [ ! -x "$perf" ]; then
	echo "== rxe-vm: (d) SKIP: $perf is not built in this tree"
else
	drc=0
	for t in send write read atomic; do
		for m in lat bw; do
			n=200
			[ "$m" = bw ] && n=2000
			args=(--dev ibv0,dev=rxe0 --test "$t" --mode "$m" -n "$n" --validate)
			[ "$t" = atomic ] || args+=(-s 64)
			if "$perf" -l 0-1 --no-huge --no-shconf --no-pci --no-telemetry \
				--log-level=lib.eal:error --file-prefix="rxe-perf-$t-$m" -- \
				"${args[@]}" > /tmp/perf.log 2>&1; then
				echo "== rxe-vm: (d) $t $m: $(grep -A1 '#bytes' /tmp/perf.log | tail -1 | tr -s ' ' | cut -c1-80)"
				grep "validate:" /tmp/perf.log
			else
				cat /tmp/perf.log
				fail "(d) qpio-perf $t $m"
				drc=1
			fi
		done
	done
	[ "$drc" = 0 ] && echo "== rxe-vm: (d) PASS (8 runs, every payload checked)"
fi

step "(g) qpio-pingpong: flat-burst SENDs and acks on ibv0,dev=rxe0"
# The example posts with qpio_qp_post_send_sge() (the ibv driver's flat
# burst, as its last line must say); every ack must match its order, or it
# exits 1.
pp="$QPIO_BUILD/examples/pingpong/qpio-pingpong"
if [ ! -x "$pp" ]; then
	echo "== rxe-vm: (g) SKIP: $pp is not built in this tree"
elif timeout 120 "$pp" -l 0-1 --no-huge --no-shconf --no-pci --no-telemetry \
	--log-level=lib.eal:error --file-prefix=rxe-pingpong -- \
	--dev ibv0,dev=rxe0 --count 500 --warmup 50 --size 64 \
	> /tmp/pingpong.log 2>&1 &&
	grep -q "^half round trip over 500 orders" /tmp/pingpong.log &&
	grep -qx "posted with: qpio_qp_post_send_sge() (the flat burst)" \
		/tmp/pingpong.log; then
	echo "== rxe-vm: (g) PASS ($(grep '^half round trip' /tmp/pingpong.log | cut -c1-80))"
else
	tail -20 /tmp/pingpong.log
	fail "(g) qpio-pingpong on rxe0"
fi

step "done, status $rc"
echo "$rc" > /tmp/out/rc
sync
