# SPDX-License-Identifier: GPL-2.0
#
# Helpers shared by the guest halves of `make bench` (scripts/bench-guest.sh,
# scripts/bench-transports.sh and scripts/bench-b-guest.sh), sourced, not
# run. They expect PATH to hold the staged icsctl, icstat and bench-peer.

log() { echo "bench: $*"; }

# ics's module parameters for the transport runs: the sender's queue per
# channel at 4 MiB, the default largest send buffer of TCP (tcp_wmem), so
# that a stream's data waits in comparable buffers. The default (32 MiB,
# made to take 16 MiB messages) holds 262144 64-byte messages, whose
# draining at the end of a run would outlast the run.
ICS_PARAMS="chan_queue_max=$((4 << 20))"

# The test service, ics_test.ko (staged beside ics.ko), generates the ics
# traffic of `icsctl send` and `icsperf -k`, checks it and answers pings.
# ics-kernel (icsperf -k) runs on a channel of its own, at TEST's priority
# level: TEST is the icsperf server's (a channel has one receiver), and
# the test service is attached to this one at both ends (the PONGs of a
# ping come back to the pinger's test service).
ICS_KERNEL_CH=RBLD

# ics_load KO [PARAMS...]: ics.ko KO with PARAMS, then the test service
# built with it (ics_test.ko beside KO; for ics-nostats.ko,
# ics_test-nostats.ko).
ics_load()
{
	local ko=$1 tko
	shift
	tko=${ko%/*}/ics_test${ko##*/ics}
	insmod "$ko" "$@" || return 1
	insmod "$tko" || { log "insmod $tko failed"; return 1; }
}

# ics_unload: the test service, then ics; the test service refuses to go
# (EBUSY) while messages it sent are still pending in ics, so retry a while.
ics_unload()
{
	local m i
	for m in ics_test ics; do
		for i in $(seq 100); do
			[ -d "/sys/module/$m" ] || break
			rmmod "$m" 2>/dev/null && break
			sleep 0.1
		done
		[ ! -d "/sys/module/$m" ] || { log "rmmod $m failed"; return 1; }
	done
}

# tsvc_attach NS CHANNEL...: NS's test service receives on these channels
# (NS "-": this namespace).
tsvc_attach()
{
	local ns=$1
	shift
	if [ "$ns" = - ]; then
		icsctl test attach "$@"
	else
		ip netns exec "$ns" icsctl test attach "$@"
	fi
}

# ns_pair NS_A NS_B DEV_A DEV_B MTU: two network namespaces joined by one
# veth pair, 10.77.0.1 on DEV_A and 10.77.0.2 on DEV_B.
ns_pair()
{
	local a=$1 b=$2 da=$3 db=$4 mtu=$5
	ip netns add "$a" && ip netns add "$b" || return 1
	ip -n "$a" link set lo up
	ip -n "$b" link set lo up
	ip -n "$a" link add "$da" mtu "$mtu" type veth peer name "$db" mtu "$mtu" netns "$b" || return 1
	ip -n "$a" addr add 10.77.0.1/24 dev "$da"
	ip -n "$b" addr add 10.77.0.2/24 dev "$db"
	ip -n "$a" link set "$da" up
	ip -n "$b" link set "$db" up
}

# node2_reachable < `icstat -j nodes`: is node 2 reachable in that view?
node2_reachable()
{
	python3 -c '
import json, sys
sys.exit(not any(n["node_id"] == 2 and n["reachable"] for n in json.load(sys.stdin)["nodes"]))'
}

# ics_pair NS_A NS_B DEV_A DEV_B: ics node 1 on DEV_A, node 2 on DEV_B,
# cluster 7; returns once node 1 reaches node 2 (or after 30 s, failing).
ics_pair()
{
	local a=$1 b=$2 da=$3 db=$4 i
	ip netns exec "$a" icsctl bind dev "$da" node 1 cluster 7 >/dev/null || return 1
	ip netns exec "$b" icsctl bind dev "$db" node 2 cluster 7 >/dev/null || return 1
	for i in $(seq 300); do
		ip netns exec "$a" icstat -j nodes | node2_reachable && return 0
		sleep 0.1
	done
	log "ics: node 2 not reachable from node 1 after 30 s"
	return 1
}

# tipc_pair NS_A NS_B DEV_A DEV_B TAG: a TIPC Ethernet bearer on each end,
# node identities TAG-a and TAG-b (an identity is per namespace and must
# be set before the first bearer); returns once the link is up (or after
# 10 s, failing).
tipc_pair()
{
	local a=$1 b=$2 da=$3 db=$4 tag=$5 i
	ip netns exec "$a" tipc node set identity "$tag-a" &&
		ip netns exec "$b" tipc node set identity "$tag-b" &&
		ip netns exec "$a" tipc bearer enable media eth device "$da" &&
		ip netns exec "$b" tipc bearer enable media eth device "$db" || return 1
	for i in $(seq 100); do
		if ip netns exec "$a" tipc link list | grep -v broadcast | grep -q ': up'; then
			ip netns exec "$a" tipc link list | sed 's/^/bench: tipc link: /'
			return 0
		fi
		sleep 0.1
	done
	log "tipc: no link up after 10 s"
	return 1
}
