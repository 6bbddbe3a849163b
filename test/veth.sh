# SPDX-License-Identifier: BSD-3-Clause
#
# Sourced by the tests that put soft wire devices on a veth pair through
# DPDK's net_af_packet. Root only; the caller deletes the pair.
#
#   . "$(dirname "$0")/../veth.sh"
#   veth_up A B || skip "cannot create a veth pair"

# veth_up A B: creates the veth pair A <-> B in this network namespace and
# sets both ends up, with the kernel's own IPv6 off (no router
# solicitations or MLD on the link) and transmit checksum offload off (the
# frames the PMD reads carry their checksums). Returns ip's status.
veth_up() {
	ip link add "$1" type veth peer name "$2" || return 1
	local i
	for i in "$1" "$2"; do
		sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1" 2>/dev/null
		ethtool -K "$i" tx off >/dev/null 2>&1
		ip link set "$i" up || return 1
	done
}

# af_packet_fanout_clash LOG: true when LOG holds net_af_packet's refusal
# to join its PACKET_FANOUT group. DPDK 22.11 numbers a port's group
# (pid ^ ifindex) & 0xffff, and the groups of one network namespace share
# one space: a second process whose number comes out the same as a group
# another process holds on another interface gets EINVAL, and its EAL
# finds no such port. The same program started again has another pid,
# so another number.
af_packet_fanout_clash() {
	grep -q "could not set PACKET_FANOUT" "$1"
}

# listen_port LOG PID: the port a qpio-pingpong --listen 0 running as PID
# prints to LOG ("... listening on port N"), waited for 10 s at most while
# PID runs. Prints N; returns 1 (printing nothing) when it never comes.
listen_port() {
	local p _
	for _ in $(seq 100); do
		p=$(sed -n 's/.* listening on port \([0-9]*\)$/\1/p' "$1")
		[ -n "$p" ] && { echo "$p"; return 0; }
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	return 1
}
