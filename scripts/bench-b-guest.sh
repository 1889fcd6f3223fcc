#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Layout (b) of `make bench`: runs inside each of the two VMs that
# scripts/bench-b.sh starts, joined by one dedicated virtio NIC (qemu's
# dgram backend on 127.0.0.1; see there why not the stream one) and
# nothing else. Node 2 serves, node 1 measures:
#
#   server  sets the NIC's MTU, 10.77.0.2, starts every server of
#           scripts/bench-transports.sh on it (bench-peer packet, udp, tcp,
#           tipc; ics bound as node 2 with `icsperf server` on TEST and the
#           test service, ics_test.ko, attached to ICS_KERNEL_CH; TIPC and
#           ics only when BENCH_TRANSPORT_LIST names them), then writes
#           the transports it serves to SHARED/server-ready and waits to be
#           killed.
#   client  sets the NIC's MTU, 10.77.0.1, waits for SHARED/server-ready,
#           brings up its ends (a TIPC bearer and link, ics node 1 reaching
#           node 2, its test service attached to ICS_KERNEL_CH), and runs
#           scripts/bench-transports.sh with
#           BENCH_LAYOUT=b: the same runs, sizes and repetitions as layout
#           (a), from this VM's root namespace, into SHARED/transports.jsonl.
#           Writes ICS-BENCH-END to SHARED/client-done last.
#
# Usage: bench-b-guest.sh SHARED ROLE MTU. SHARED is a host directory both
# VMs mount (--rwdir); SHARED/stage holds what bench-transports.sh needs and
# env. Each VM's NIC is the one whose MAC ends in its node id.
set -u
res=$1 role=$2 mtu=$3
stage=$res/stage
# shellcheck source=/dev/null
[ -r "$stage/env" ] && . "$stage/env"
export PATH=$stage:$PATH
# shellcheck source=bench-lib.sh
. "$stage/bench-lib.sh"
# This wire drops frames when a burst overruns the receiving qemu's socket
# buffer (a request-rate sweep does that on purpose): give ics the failure
# detection TIPC has by default here, 1.5 s ((14 + 1) x 100 ms), not its
# own 400 ms, so that the comparison is of messaging, not of tolerance.
ICS_PARAMS+=" heartbeat_misses=14"
node=1
[ "$role" = server ] && node=2
mac_of() { echo "52:54:00:1c:5c:0$1"; }
# Output goes to the console only, which the host keeps (console-ROLE.log):
# a tee into the shared directory would take the script down with it
# (SIGPIPE) if a write there ever failed.

fail()
{
	log "layout b $role: $*"
	echo "ICS-BENCH-END rc=1 $*" > "$res/$role-done"
	sync
	exit 1
}

dev=
for d in /sys/class/net/*; do
	[ "$(cat "$d/address" 2>/dev/null)" = "$(mac_of $node)" ] && dev=$(basename "$d")
done
[ -n "$dev" ] || fail "no NIC with MAC $(mac_of $node)"
# Kernel warnings and oopses on the console (console-ROLE.log on the host).
dmesg -n 7
ip link set lo up
ip link set "$dev" mtu "$mtu" || fail "cannot set MTU $mtu on $dev"
ip addr add "10.77.0.$node/24" dev "$dev"
ip link set "$dev" up
log "layout b $role: $(uname -r), $dev MTU $mtu, $(nproc) vCPU"

# ics_state ROLE: ics's counters and link state at the end, to explain
# the figures (retransmissions, drops, CRC errors, the link's RTT), and
# what the test service checked.
ics_state()
{
	[ -d /sys/module/ics ] || return 0
	icstat show > "$res/$1-icstat-show.txt" 2>&1
	icstat links > "$res/$1-icstat-links.txt" 2>&1
	icsctl test show > "$res/$1-icsctl-test-show.txt" 2>&1
	ip -s link show "$dev" > "$res/$1-nic.txt" 2>&1
}

tipc_up()	# IDENTITY
{
	modprobe tipc 2>/dev/null && command -v tipc >/dev/null &&
		tipc node set identity "$1" && tipc bearer enable media eth device "$dev"
}

transports=${BENCH_TRANSPORT_LIST:-packet udp tcp tipc ics-user ics-kernel}

# wanted KIND: whether BENCH_TRANSPORT_LIST names KIND (tipc; ics for
# ics-user or ics-kernel). The server loads and binds only those, as the
# client does: a run that leaves TIPC or ics out has that module in
# neither VM, so such an experiment is a command line, not an edit.
wanted()
{
	local t
	for t in $transports; do
		[ "${t%-*}" = "$1" ] && return 0
	done
	return 1
}

if [ "$role" = server ]; then
	served=
	bench-peer server packet -i "$dev" > "$res/server-packet.log" 2>&1 &
	served+=" packet"
	bench-peer server udp -p 5201 > "$res/server-udp.log" 2>&1 &
	bench-peer server tcp -p 5201 > "$res/server-tcp.log" 2>&1 &
	served+=" udp tcp"
	if ! wanted tipc; then
		log "layout b server: TIPC not in BENCH_TRANSPORT_LIST, not loaded"
	elif tipc_up "bt-b$mtu"; then
		bench-peer server tipc -p 1 > "$res/server-tipc.log" 2>&1 &
		served+=" tipc"
	else
		log "layout b server: no TIPC bearer on $dev"
	fi
	if ! wanted ics; then
		log "layout b server: ics not in BENCH_TRANSPORT_LIST, not loaded"
	elif command -v icsperf >/dev/null && ics_load "$stage/ics.ko" $ICS_PARAMS &&
		icsctl bind dev "$dev" node 2 cluster 7 >/dev/null &&
		tsvc_attach - "$ICS_KERNEL_CH"; then
		icsperf server > "$res/server-ics.log" 2>&1 &
		served+=" ics"
	else
		log "layout b server: no ics (icsperf missing, or insmod, bind or test attach failed)"
	fi
	sleep 1
	echo "$served" > "$res/server-ready.tmp"
	mv "$res/server-ready.tmp" "$res/server-ready"
	sync
	log "layout b server: serving$served"
	# Until the host kills this VM (after the client is done).
	while [ ! -e "$res/client-done" ]; do
		sleep 1
	done
	ics_state server
	dmesg > "$res/server-dmesg.log"
	echo ICS-BENCH-END > "$res/server-done"
	sync
	sleep 100000
fi

# The client: the server first (up to 5 min: both VMs boot under TCG).
for i in $(seq 300); do
	[ -s "$res/server-ready" ] && break
	sleep 1
done
[ -s "$res/server-ready" ] || fail "the server did not become ready in 300 s"
served=$(cat "$res/server-ready")
avail=
for t in $transports; do
	case " $served " in *" ${t%-*} "*) ;; *) continue ;; esac
	case $t in
	tipc)
		if [ -z "${tipc_ok:-}" ]; then
			tipc_up "bt-a$mtu" || { log "layout b client: no TIPC bearer"; continue; }
			for i in $(seq 100); do
				tipc link list 2>/dev/null | grep -v broadcast | grep -q ': up' && break
				sleep 0.1
			done
			tipc link list | sed 's/^/bench: tipc link: /'
			tipc link list | grep -v broadcast | grep -q ': up' ||
				{ log "layout b client: no TIPC link up after 10 s"; continue; }
			tipc_ok=1
		fi
		;;
	ics-*)
		if [ -z "${ics_ok:-}" ]; then
			ics_load "$stage/ics.ko" $ICS_PARAMS &&
				icsctl bind dev "$dev" node 1 cluster 7 >/dev/null &&
				tsvc_attach - "$ICS_KERNEL_CH" ||
				{ log "layout b client: insmod, bind or test attach failed"; continue; }
			for i in $(seq 300); do
				icstat -j nodes | node2_reachable && break
				sleep 0.1
			done
			icstat -j nodes | node2_reachable ||
				{ log "layout b client: ics node 2 unreachable after 30 s"; continue; }
			ics_ok=1
		fi
		;;
	esac
	avail+=" $t"
done
# Wait for ARP once, so the first UDP/TCP run does not time it.
ping -c 1 -W 5 10.77.0.2 >/dev/null 2>&1 || log "layout b client: 10.77.0.2 does not answer ping"

BENCH_LAYOUT=b BENCH_B_MTU=$mtu BENCH_DEV=$dev BENCH_PEER_MAC=$(mac_of 2) BENCH_AVAIL=$avail \
	bash "$stage/bench-transports.sh" "$res" || log "bench-transports.sh failed (rc $?)"
ics_state client
dmesg > "$res/client-dmesg.log"
echo "ICS-BENCH-END rc=0" > "$res/client-done"
sync
