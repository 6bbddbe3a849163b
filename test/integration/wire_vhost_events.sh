#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Interrupt mode of soft wire devices (devargs rx_intr=1): two
# qpio-verbs-pingpong processes with --events (ibv_rc_pingpong -e), their
# devices on the two ends of a vhost-user link (net_vhost in one process,
# net_virtio_user in the other, both PMDs with rx queue interrupts). Each
# lcore sleeps whenever its CQ is empty and is woken by the port queue's
# interrupt; RC at path MTU 1024, 2100-byte messages (FIRST, MIDDLE, LAST
# and an ACK), every message checked (--validate), both sides slept, and
# nothing lost on the link: each side received exactly what the other
# sent, no bad ICRC, no frame for no QP. Then --gap runs (the client
# pausing before each SEND) polling, sleeping and sleeping after a spin
# (rx_intr_spin), each with its sleeps and spin takes counted as the mode
# says. Then the refusals: --events on a
# wire device without rx_intr=1 (it would never wake), rx_intr=1 on a PMD
# without rx queue interrupts (net_ring).
#
#   wire_vhost_events.sh PINGPONG_BINARY
set -u
pp=$1
work=$(mktemp -d /tmp/qpio-wire-events.XXXXXX)
sock=$work/vhost.sock
srv=
cleanup() {
	# the server's subshell, and the timeout and program under it
	[ -n "$srv" ] && { pkill -TERM -P "$srv"; kill "$srv"; } 2>/dev/null
	rm -rf "$work" "/var/run/dpdk/we-s-$$" "/var/run/dpdk/we-c-$$" \
		"/var/run/dpdk/we-x-$$" "/var/run/dpdk/we-r-$$"
}
trap cleanup EXIT
fail() { echo "wire-vhost-events: FAIL: $*"; exit 1; }
n=300
port=$((20000 + $$ % 20000))
run() {
	local prefix=$1 lcore=$2 vdev=$3 dev=$4
	shift 4
	timeout 60 "$pp" -l "$lcore" --no-huge --no-shconf --no-pci -m 256 \
		--file-prefix="$prefix" --log-level=lib.eal:error \
		--vdev="$vdev" -- --dev "$dev" -c RC -g 1 -s 2100 -n "$n" \
		-m 1024 -p "$port" --validate --timeout "${to:-30}" "$@"
}
run "we-s-$$" 0 "net_vhost0,iface=$sock,queues=1" \
	"soft0,wire=net_vhost0,ip=10.0.0.1,rx_intr=1" --events \
	> "$work/server.log" 2>&1 &
srv=$!
for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] || { cat "$work/server.log"; fail "net_vhost made no socket"; }
sleep 0.5   # the server's TCP listen follows its device
run "we-c-$$" 1 "net_virtio_user0,path=$sock,queues=1" \
	"soft1,wire=net_virtio_user0,ip=10.0.0.2,rx_intr=1" --events \
	127.0.0.1 > "$work/client.log" 2>&1
crc=$?
wait "$srv"
src=$?
srv=
for side in server client; do
	log=$work/$side.log
	rc=$crc
	[ "$side" = server ] && rc=$src
	[ "$rc" = 0 ] || { cat "$log"; fail "$side exited $rc"; }
	grep -q "^validate: 0 of $n messages wrong$" "$log" ||
		{ cat "$log"; fail "$side: messages not all right"; }
	sl=$(sed -n 's/^wire: .* intr_sleeps \([0-9]*\) intr_spin_takes 0$/\1/p' "$log")
	[ -n "$sl" ] && [ "$sl" -ge 1 ] ||
		{ cat "$log"; fail "$side never slept (intr_sleeps '$sl')"; }
	grep -q "^events: waited [1-9][0-9]* times$" "$log" ||
		{ cat "$log"; fail "$side: no events line"; }
	grep -q "^wire: rx_packets [0-9]* tx_packets [0-9]* arp_rx [12] arp_tx [12] rx_bad_icrc 0 rx_no_qp 0 rx_not_roce 0 tx_no_neigh 0 tx_dropped 0 " "$log" ||
		{ cat "$log"; fail "$side: counters"; }
	echo "wire-vhost-events: $side: slept $sl times; $(grep '^wire:' "$log" | cut -d' ' -f2-5)"
done
s=$(sed -n 's/^wire: rx_packets \([0-9]*\) tx_packets \([0-9]*\) .*/\1 \2/p' "$work/server.log")
c=$(sed -n 's/^wire: rx_packets \([0-9]*\) tx_packets \([0-9]*\) .*/\1 \2/p' "$work/client.log")
set -- $s $c
# server rx == client tx, client rx == server tx; RC: 3 packets a
# message each way at least
[ "$1" = "$4" ] && [ "$3" = "$2" ] ||
	fail "frames lost on the link: server rx/tx $1/$2, client rx/tx $3/$4"
[ "$2" -ge $((3 * n)) ] && [ "$4" -ge $((3 * n)) ] ||
	fail "fewer than 3 packets a message: server tx $2, client tx $4"

# --gap: the client pauses 2 ms before each SEND after the first, polling,
# sleeping, and sleeping after 100 ms of polling (rx_intr_spin); the run
# then holds 39 pauses (its wall time per exchange
# is at least 39 x 2000 / 40 = 1950 usec), every message is checked, and
# the client reports the round trip of each of its SENDs
gn=40
for mode in poll events spin; do
	ev=()
	sp=
	[ "$mode" != poll ] && ev=(--events)
	[ "$mode" = spin ] && sp=,rx_intr_spin=100000
	rm -f "$sock"
	n=$gn run "we-s-$$" 0 "net_vhost0,iface=$sock,queues=1" \
		"soft0,wire=net_vhost0,ip=10.0.0.1,rx_intr=1$sp" "${ev[@]}" \
		> "$work/gap-server.log" 2>&1 &
	srv=$!
	for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done
	[ -S "$sock" ] || { cat "$work/gap-server.log"; fail "--gap ($mode): net_vhost made no socket"; }
	n=$gn run "we-c-$$" 1 "net_virtio_user0,path=$sock,queues=1" \
		"soft1,wire=net_virtio_user0,ip=10.0.0.2,rx_intr=1$sp" "${ev[@]}" \
		--gap 2 127.0.0.1 > "$work/gap-client.log" 2>&1
	crc=$?
	wait "$srv"
	src=$?
	srv=
	[ "$crc" = 0 ] && [ "$src" = 0 ] ||
		{ cat "$work/gap-server.log" "$work/gap-client.log"; fail "--gap ($mode): exits $src/$crc"; }
	for side in server client; do
		grep -q "^validate: 0 of $gn messages wrong$" "$work/gap-$side.log" ||
			{ cat "$work/gap-$side.log"; fail "--gap ($mode): $side's messages"; }
	done
	us=$(sed -n 's/^[0-9]* iters in [0-9.]* seconds = \([0-9]*\)\.[0-9]* usec\/iter$/\1/p' "$work/gap-client.log")
	[ -n "$us" ] && [ "$us" -ge $(((gn - 1) * 2000 / gn)) ] ||
		{ cat "$work/gap-client.log"; fail "--gap ($mode): $us usec an exchange, under the $(((gn - 1) * 2000 / gn)) of its pauses"; }
	grep -q "^rtt: p50 [0-9.]* usec, p99 [0-9.]*, p99.9 [0-9.]*, max [0-9.]* over $gn exchanges$" "$work/gap-client.log" ||
		{ cat "$work/gap-client.log"; fail "--gap ($mode): no rtt line of $gn exchanges"; }
	! grep -q "^rtt:" "$work/gap-server.log" ||
		fail "--gap ($mode): the server printed round trips it did not time"
	for side in server client; do
		sl=$(sed -n 's/^wire: .* intr_sleeps \([0-9]*\) intr_spin_takes \([0-9]*\)$/\1 \2/p' "$work/gap-$side.log")
		[ -n "$sl" ] || { cat "$work/gap-$side.log"; fail "--gap ($mode): $side: no intr_ counters"; }
		set -- $sl
		case $mode in
		poll) [ "$1" = 0 ] && [ "$2" = 0 ] ;;
		events) [ "$1" -ge 1 ] && [ "$2" = 0 ] ;;
		# rx_intr_spin=100000: a wait polls up to 100 ms, longer
		# than any pause or answer here, so the frames of most
		# messages are taken while the other side's wait polls (a
		# frame that comes between a post and the wait is taken by
		# the CQ poll's step instead)
		spin) [ "$2" -ge $((gn / 2)) ] ;;
		esac || { cat "$work/gap-$side.log"; fail "--gap ($mode): $side: intr_sleeps $1 intr_spin_takes $2"; }
	done
	echo "wire-vhost-events: --gap 2 ($mode): $us usec an exchange; $(grep '^rtt:' "$work/gap-client.log")"
done

# --events where the device cannot wake: refused before the exchange
# (no peer needed), with the rule
rm -f "$sock"
to=2 run "we-x-$$" 0 "net_vhost0,iface=$sock,queues=1" \
	"soft0,wire=net_vhost0,ip=10.0.0.1" --events \
	> "$work/x-server.log" 2>&1
xrc=$?
[ "$xrc" = 1 ] && grep -q "events on a soft wire device needs its devargs rx_intr=1" "$work/x-server.log" ||
	{ cat "$work/x-server.log"; fail "--events without rx_intr=1: exit $xrc"; }
timeout 30 "$pp" -l 0 --no-huge --no-shconf --no-pci -m 256 \
	--file-prefix="we-r-$$" --log-level=lib.eal:error --vdev=net_ring0 -- \
	--dev soft0,wire=net_ring0,ip=10.0.0.1,rx_intr=1 -c RC -g 1 \
	-p "$port" > "$work/ring.log" 2>&1
rrc=$?
[ "$rrc" = 1 ] && grep -q "rx_intr: net_ring0 gives no interrupt for rx queue 0" "$work/ring.log" ||
	{ cat "$work/ring.log"; fail "rx_intr=1 on net_ring: exit $rrc"; }
echo "wire-vhost-events: refusals: --events without rx_intr=1, rx_intr=1 on net_ring"
echo "wire-vhost-events: PASS"
