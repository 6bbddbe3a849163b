#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Record a small Ethernet (DLT_EN10MB) capture of real Linux network stack
# traffic, for use as parser and replay input (data/linux-stack.pcap).
#
#   usertools/qpio-record-capture.sh [OUT.pcap]    (default: data/linux-stack.pcap)
#
# Needs root and the packages from `usertools/install-deps.sh --record`.
#
# Two network namespaces, A (client) and B (server), are joined by a veth
# pair with fixed MAC addresses and documentation-range addresses
# (192.0.2.0/24, 2001:db8::/64). tcpdump listens on A's end while A sends, in
# this order:
#   1. ping 192.0.2.2 twice     ARP request + reply, 2 ICMP echo pairs
#   2. ping 2001:db8::2 twice   NDP solicitation + advertisement, 2 echo pairs
#   3. DNS A and AAAA queries for host.qpio.test, answered by dnsmasq in B
#   4. one TCP connection to B port 7070: A sends a request line, B answers
#      with 2000 bytes (two segments), B closes, then A closes
# Offloads are turned off on both veth ends so every frame is at most 1514
# bytes and carries a correct checksum. Router solicitation, DAD and
# link-local addresses are off and the capture filter keeps only the
# protocols above, so the packet list is the same on every run; only
# timestamps, ICMP identifiers, ephemeral ports, TCP sequence numbers and
# TCP timestamps change. The namespaces and every process started here are
# removed on exit, also on failure.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(dirname "$here")/data/linux-stack.pcap}
python=${PYTHON:-python3}

ns_a=qpio-rec-a-$$
ns_b=qpio-rec-b-$$
veth_a=qra$$
veth_b=qrb$$
mac_a=02:00:00:00:00:0a
mac_b=02:00:00:00:00:0b
ip4_a=192.0.2.1
ip4_b=192.0.2.2
ip6_a=2001:db8::1
ip6_b=2001:db8::2
tcp_port=7070
dns_name=host.qpio.test
filter="arp or icmp or icmp6 or udp port 53 or tcp port $tcp_port"

die() { echo "qpio-record-capture: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (network namespaces, tcpdump)"
for t in ip tcpdump dnsmasq ping ethtool "$python"; do
	command -v "$t" >/dev/null ||
		die "'$t' not found; run usertools/install-deps.sh --record"
done

tmp=$(mktemp -d)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	ip netns del "$ns_a" 2>/dev/null || true
	ip netns del "$ns_b" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

in_a() { ip netns exec "$ns_a" "$@"; }
in_b() { ip netns exec "$ns_b" "$@"; }

# wait_for SECONDS COMMAND...: poll until COMMAND succeeds.
wait_for() {
	local n=$(($1 * 20))
	shift
	while ! "$@" >/dev/null 2>&1; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.05
	done
}

# --- topology ---------------------------------------------------------------
ip netns add "$ns_a"
ip netns add "$ns_b"
ip link add "$veth_a" type veth peer name "$veth_b"
ip link set "$veth_a" netns "$ns_a"
ip link set "$veth_b" netns "$ns_b"

setup_end() {	# setup_end NS IFNAME MAC IPV4 IPV6
	local ns=$1 ifn=$2
	ip -n "$ns" link set "$ifn" name eth0
	ip -n "$ns" link set eth0 address "$3"
	ip netns exec "$ns" sysctl -qw \
		net.ipv6.conf.eth0.addr_gen_mode=1 \
		net.ipv6.conf.eth0.accept_dad=0 \
		net.ipv6.conf.eth0.router_solicitations=0
	# No segmentation offload (frames stay <= 1514 bytes) and no checksum
	# offload (the captured frames carry real checksums).
	ip netns exec "$ns" ethtool -K eth0 tx off rx off tso off gso off gro off \
		>/dev/null
	ip -n "$ns" addr add "$4/24" dev eth0
	ip -n "$ns" addr add "$5/64" dev eth0 nodad
	ip -n "$ns" link set lo up
	ip -n "$ns" link set eth0 up
}
setup_end "$ns_a" "$veth_a" "$mac_a" "$ip4_a" "$ip6_a"
setup_end "$ns_b" "$veth_b" "$mac_b" "$ip4_b" "$ip6_b"

# --- servers in B -------------------------------------------------------------
# Background processes are started with `ip netns exec` directly (not through
# in_a/in_b, which would fork a subshell) so that $! is the process itself.
ip netns exec "$ns_b" dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv \
	--no-hosts --bind-interfaces --interface=eth0 --except-interface=lo \
	--listen-address="$ip4_b" --user=root --group=root --pid-file= \
	--address="/$dns_name/$ip4_b" --address="/$dns_name/$ip6_b" \
	--log-facility=/dev/null 2>"$tmp/dnsmasq.err" &
pids+=($!)

ip netns exec "$ns_b" "$python" - "$ip4_b" "$tcp_port" \
	>"$tmp/tcp-server.log" 2>&1 <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(1)
c, _ = s.accept()
req = b""
while not req.endswith(b"\n"):
    d = c.recv(4096)
    if not d:
        break
    req += d
body = bytes((0x20 + i % 95) for i in range(2000 - 16))
c.sendall(b"qpio-reply 2000\n" + body)
c.shutdown(socket.SHUT_WR)
while c.recv(4096):
    pass
c.close()
print("served %d request bytes" % len(req))
EOF
pids+=($!)

wait_for 5 sh -c "ip netns exec $ns_b ss -Hlun 'sport = :53' | grep -q ." ||
	die "dnsmasq did not start: $(cat "$tmp/dnsmasq.err")"
wait_for 5 sh -c "ip netns exec $ns_b ss -Hltn 'sport = :$tcp_port' | grep -q ." ||
	die "TCP server did not start: $(cat "$tmp/tcp-server.log")"

# --- capture --------------------------------------------------------------------
ip netns exec "$ns_a" tcpdump -i eth0 -nn -s 1514 -U --immediate-mode -Z root \
	-w "$tmp/cap.pcap" "$filter" 2>"$tmp/tcpdump.err" &
tcpdump_pid=$!
pids+=("$tcpdump_pid")
wait_for 5 grep -q "listening on" "$tmp/tcpdump.err" ||
	die "tcpdump did not start: $(cat "$tmp/tcpdump.err")"
grep -q "EN10MB" "$tmp/tcpdump.err" ||
	die "tcpdump link type is not EN10MB: $(cat "$tmp/tcpdump.err")"

# --- traffic from A -----------------------------------------------------------
in_a ping -4 -n -q -c 2 -i 0.2 -W 2 "$ip4_b" >/dev/null
in_a ping -6 -n -q -c 2 -i 0.2 -W 2 "$ip6_b" >/dev/null

in_a "$python" - "$ip4_b" "$dns_name" <<'EOF'
import socket, struct, sys
server, name = sys.argv[1], sys.argv[2]
qname = b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0"
for qid, qtype in ((0x7101, 1), (0x7102, 28)):	# A, AAAA
    q = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0) + qname
    q += struct.pack("!HH", qtype, 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    s.sendto(q, (server, 53))
    r = s.recv(512)
    s.close()
    rid, flags, _, ancount = struct.unpack("!HHHH", r[:8])
    if rid != qid or flags & 0x000f or ancount < 1:
        sys.exit("DNS query type %d: bad answer id=%#x flags=%#x an=%d"
                 % (qtype, rid, flags, ancount))
EOF

in_a "$python" - "$ip4_b" "$tcp_port" <<'EOF'
import socket, sys
c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
c.sendall(b"GET /qpio HTTP/1.0 from netns A\n")
got = b""
while True:
    d = c.recv(4096)
    if not d:
        break
    got += d
c.close()
if len(got) != 2000:
    sys.exit("TCP: got %d reply bytes, want 2000" % len(got))
EOF

# Let the last ACK reach the capture, then stop tcpdump with SIGTERM (a
# background job of a script ignores SIGINT) so it writes out what it has.
sleep 0.3
kill -TERM "$tcpdump_pid"
wait "$tcpdump_pid" || true
grep -E "packets (captured|dropped)" "$tmp/tcpdump.err" >&2 || true

n=$(tcpdump -nn -r "$tmp/cap.pcap" 2>/dev/null | wc -l)
[ "$n" -gt 0 ] || die "capture is empty"
mkdir -p "$(dirname "$out")"
cp "$tmp/cap.pcap" "$out"
echo "qpio-record-capture: $n packets, $(stat -c %s "$out") bytes -> $out"
