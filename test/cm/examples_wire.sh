#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# qpio-cmatose and qpio-rping between two processes whose soft devices
# are on the wire (net_af_packet on the two ends of a veth pair): lib/cm's
# IB CM on QP1 both ways, ucmatose's exchange over RC and udaddy's over UD
# (one connection, and eight at once),
# rping's READs and WRITEs checked to the byte, then two refusals: a port
# nobody listens on (REJ "invalid service ID"), and a REQ above the
# listener port's MTU (REJ "invalid MTU", the listener's log naming both
# MTUs); an rping server that gives up tells its client (DREQ); every
# run, an error exit's too, removes its DPDK runtime directory. The same
# programs against the unmodified tools on Soft-RoCE:
# test/rxe/cm_guest.sh.
#
#   examples_wire.sh QPIO_CMATOSE QPIO_RPING
#
# Root only (veth); exits 77 (skipped) with the reason otherwise.
set -u
cm=$1
rp=$2
skip() { echo "cm-examples-wire: SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root for a veth pair"
command -v ip >/dev/null || skip "ip (iproute2) not installed"
a=qcw$$a
b=qcw$$b
port=$((20000 + ($$ + 11) % 20000))
work=$(mktemp -d /tmp/qpio-cmatose-wire.XXXXXX)
cleanup() {
	ip link del "$a" 2>/dev/null
	rm -rf "$work" /var/run/dpdk/cw-s-$$-* /var/run/dpdk/cw-c-$$-*
}
trap cleanup EXIT
. "$(dirname "$0")/../veth.sh"
veth_up "$a" "$b" || skip "cannot create a veth pair"
rc=0
common=(--no-huge --no-shconf --no-pci -m 256 --log-level=lib.eal:error)
# server NAME [ARGS...] / client NAME DEVARGS_MORE [ARGS...]
server() {
	local name=$1
	shift
	timeout 60 "$cm" -l 0 "${common[@]}" --file-prefix="cw-s-$$-$name" \
		--vdev="net_af_packet0,iface=$a" -- \
		--dev soft0,wire=net_af_packet0,ip=10.0.0.1 -p "$port" \
		--timeout "${TMO:-20}" "$@" > "$work/$name.server" 2>&1
}
client() {
	local name=$1 pmd=$2 dev=$3
	shift 3
	timeout 60 "$cm" -l 1 "${common[@]}" --file-prefix="cw-c-$$-$name" \
		--vdev="net_af_packet1,iface=$b$pmd" -- \
		--dev "soft1,wire=net_af_packet1,ip=10.0.0.2$dev" -s 10.0.0.1 \
		-p "${CPORT:-$port}" --timeout 20 "$@" > "$work/$name.client" 2>&1
}
wait_listening() {
	local _
	for _ in $(seq 1 100); do
		grep -q "listening on port" "$1" && return 0
		sleep 0.1
	done
	return 1
}
report() {
	local name=$1 ok=$2 d
	# every exit, an error's too, removes its DPDK runtime directory
	for d in "/var/run/dpdk/cw-s-$$-$name" "/var/run/dpdk/cw-c-$$-$name"; do
		if [ -e "$d" ]; then
			echo "cm-examples-wire: $name: $d left behind"
			ok=0
		fi
	done
	if [ "$ok" = 1 ]; then
		echo "cm-examples-wire: $name: PASS"
	else
		echo "cm-examples-wire: $name: FAIL"
		sed 's/^/  server: /' "$work/$name.server" 2>/dev/null
		sed 's/^/  client: /' "$work/$name.client" 2>/dev/null
		rc=1
	fi
}

# NAME TRANSPORT COUNT SIZE [CONNECTIONS]
while read -r name tr count size conns; do
	ud=
	[ "$tr" = UD ] && ud=--ud
	conns=${conns:-1}
	ok=0
	for _ in 1 2 3; do
		server "$name" $ud -c "$conns" -C "$count" -S "$size" &
		srv=$!
		wait_listening "$work/$name.server"
		client "$name" "" "" $ud -c "$conns" -C "$count" -S "$size"
		crc=$?
		wait "$srv"
		src=$?
		# again when the client's af_packet port drew the server's
		# fanout group number (test/veth.sh)
		af_packet_fanout_clash "$work/$name.client" && continue
		[ "$crc" = 0 ] && [ "$src" = 0 ] && ok=1
		break
	done
	for role in server client; do
		if [ "$conns" = 1 ]; then
			want="$count messages of $size bytes each way over $tr"
		else
			want="$conns connections, $count messages of $size bytes each way on each over $tr"
		fi
		grep -q "^qpio-cmatose: $role: $want, every completion a success$" \
			"$work/$name.$role" || ok=0
	done
	report "$name" "$ok"
done <<'ROWS'
rc-default RC 10 100
rc-300x5000 RC 300 5000
ud-default UD 10 100
ud-200x1024 UD 200 1024
rc-8-connections RC 50 2000 8
ud-8-connections UD 50 1000 8
ROWS

# rping's ping: COUNT SIZE, every byte checked by the client (-V)
while read -r count size; do
	name=rping-$count-$size
	ok=0
	for _ in 1 2 3; do
		timeout 60 "$rp" -l 0 "${common[@]}" --file-prefix="cw-s-$$-$name" \
			--vdev="net_af_packet0,iface=$a" -- \
			--dev soft0,wire=net_af_packet0,ip=10.0.0.1 -s -p "$port" \
			-S "$size" --timeout 20 > "$work/$name.server" 2>&1 &
		srv=$!
		wait_listening "$work/$name.server"
		timeout 60 "$rp" -l 1 "${common[@]}" --file-prefix="cw-c-$$-$name" \
			--vdev="net_af_packet1,iface=$b" -- \
			--dev soft1,wire=net_af_packet1,ip=10.0.0.2 -c -a 10.0.0.1 \
			-p "$port" -C "$count" -S "$size" -V --timeout 20 \
			> "$work/$name.client" 2>&1
		crc=$?
		wait "$srv"
		src=$?
		af_packet_fanout_clash "$work/$name.client" && continue
		[ "$crc" = 0 ] && [ "$src" = 0 ] && ok=1
		break
	done
	grep -qx "qpio-rping: client: $count pings of $size bytes, every byte written back as it was read" \
		"$work/$name.client" || ok=0
	grep -qx "qpio-rping: server: $count pings served, the client disconnected" \
		"$work/$name.server" || ok=0
	report "$name" "$ok"
done <<'ROWS'
100 64
200 65535
ROWS

# A listener on one port, the request to the next: the agent's REJ
# "invalid service ID", at once.
ok=0
for _ in 1 2 3; do
	TMO=5 server no-listener &
	srv=$!
	wait_listening "$work/no-listener.server"
	CPORT=$((port + 1)) client no-listener "" ""
	crc=$?
	wait "$srv"
	af_packet_fanout_clash "$work/no-listener.client" && continue
	[ "$crc" != 0 ] && grep -q "connect: UNREACHABLE (Connection refused), expected ESTABLISHED" \
		"$work/no-listener.client" && ok=1
	break
done
report no-listener "$ok"

# A REQ at path MTU 4096 (the client's device at mtu=9000 with 12288-byte
# ring frames) to a listener whose port takes 1024.
ok=0
for _ in 1 2 3; do
	TMO=5 server mtu &
	srv=$!
	wait_listening "$work/mtu.server"
	client mtu ",framesz=12288,blocksz=12288" ",mtu=9000"
	crc=$?
	wait "$srv"
	af_packet_fanout_clash "$work/mtu.client" && continue
	[ "$crc" != 0 ] &&
		grep -q "connect: UNREACHABLE (Connection refused), expected ESTABLISHED" "$work/mtu.client" &&
		grep -q "REQ at path MTU 4096 bytes, above the port's active MTU (1024 bytes): refused (REJ invalid MTU)" \
			"$work/mtu.server" && ok=1
	break
done
report mtu-refused "$ok"

# The rping server refuses the client's buffer (above its -S) and exits
# 1: its channel goes with it and tells the client (a DREQ), which ends
# at once with "the server disconnected", not at its --timeout.
name=rping-server-gives-up
ok=0
for _ in 1 2 3; do
	timeout 60 "$rp" -l 0 "${common[@]}" --file-prefix="cw-s-$$-$name" \
		--vdev="net_af_packet0,iface=$a" -- \
		--dev soft0,wire=net_af_packet0,ip=10.0.0.1 -s -p "$port" \
		-S 100 --timeout 20 > "$work/$name.server" 2>&1 &
	srv=$!
	wait_listening "$work/$name.server"
	timeout 60 "$rp" -l 1 "${common[@]}" --file-prefix="cw-c-$$-$name" \
		--vdev="net_af_packet1,iface=$b" -- \
		--dev soft1,wire=net_af_packet1,ip=10.0.0.2 -c -a 10.0.0.1 \
		-p "$port" -C 5 -S 1000 --timeout 20 > "$work/$name.client" 2>&1
	crc=$?
	wait "$srv"
	src=$?
	af_packet_fanout_clash "$work/$name.client" && continue
	[ "$crc" = 1 ] && [ "$src" = 1 ] &&
		grep -qx "qpio-rping: server: the client's buffer: 1000 bytes, above this server's -S 100" \
			"$work/$name.server" &&
		grep -qx "qpio-rping: client: ping: the server disconnected" \
			"$work/$name.client" && ok=1
	break
done
report "$name" "$ok"
exit "$rc"
