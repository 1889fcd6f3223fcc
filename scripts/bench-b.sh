#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Layout (b) of `make bench` (called by scripts/bench.sh after layout a):
# two VMs joined by one dedicated virtio NIC, as in `make vmtest-cluster`,
# but the NIC's backend is qemu's dgram (each frame one UDP datagram
# between the two qemus on 127.0.0.1), not the stream one: the stream
# backend's TCP connection runs Nagle's algorithm, which holds a second
# small frame sent in a row until the first is acknowledged, up to the
# host's 40 ms delayed ACK (measured: ics user round trips of 45 ms there,
# 1.7 ms over dgram; a protocol that answers with an ack frame and then a
# data frame pays it, one that sends one frame each way does not). Like a
# real wire, the dgram backend drops a frame when the receiving qemu's
# socket buffer is full. For each MTU of BENCH_MTUS a fresh pair boots: VM 2 serves
# every transport, VM 1 runs scripts/bench-transports.sh against it
# (scripts/bench-b-guest.sh). Here TIPC's peer is another kernel, so its
# figures are a wire protocol's, the comparison with ics that counts.
#
# Usage: bench-b.sh RESDIR KVER. RESDIR/stage as scripts/bench.sh stages it.
# Writes RESDIR/b<MTU>/ (each VM's log, console, dmesg) and
# RESDIR/transports-b.jsonl, which scripts/bench-report.py turns into
# bench/results/DATE-KVER-b.*. Each VM: 1 vCPU, 1 GiB (the host's two
# cores run one VM each).
#
# Environment: BENCH_MTUS, BENCH_TIMEOUT_B seconds per MTU (default 3600),
# ICS_KVM=1, BENCH_APPEND (kernel command line words for both VMs, e.g.
# "slub_debug=FZPU kfence.sample_interval=10 init_on_free=1" to catch a
# use after free at its first bad access), and bench-transports.sh's
# variables (staged in RESDIR/stage/env).
set -u
res=$1 kver=$2
root=$(cd "$(dirname "$0")/.." && pwd -P)
# shellcheck source=scripts/qemu-cpu.sh
. "$root/scripts/qemu-cpu.sh"
limit=${BENCH_TIMEOUT_B:-3600}
accel=--disable-kvm
[ "${ICS_KVM:-0}" = 1 ] && accel=
ICS_QEMU_CPU=$(ics_qemu_cpu $([ -n "$accel" ] && echo 1 || echo 0))
out=$res/transports-b.jsonl
: > "$out"
rc=0

for mtu in ${BENCH_MTUS:-9000 1500}; do
	sh=$res/b$mtu
	rm -rf "$sh"
	mkdir -p "$sh"
	cp -r "$res/stage" "$sh/stage"
	# Two free UDP ports on the loopback address, one per qemu.
	read -r p1 p2 < <(python3 -c '
import socket
s = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in (1, 2)]
for x in s:
    x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')
	boot()	# NODE ROLE LOCAL-PORT REMOTE-PORT
	{
		timeout --foreground -k 10 "$limit" \
			vng --run "/boot/vmlinuz-$kver" $accel --verbose --user root --cpus 1 --memory 1G \
			--rwdir "$sh" ${BENCH_APPEND:+--append "$BENCH_APPEND"} \
			--qemu-opts="$ICS_QEMU_CPU -netdev dgram,id=ics0,local.type=inet,local.host=127.0.0.1,local.port=$3,remote.type=inet,remote.host=127.0.0.1,remote.port=$4 -device virtio-net-pci,netdev=ics0,mac=52:54:00:1c:5c:0$1" \
			-- bash "$root/scripts/bench-b-guest.sh" "$sh" "$2" "$mtu" \
			> "$sh/console-$2.log" 2>&1 < /dev/null &
	}
	echo "bench: layout b, MTU $mtu: booting two VMs ($kver, ${accel:-KVM}${ICS_QEMU_CPU:+ $ICS_QEMU_CPU}, 1 vCPU each)"
	t0=$SECONDS
	boot 2 server "$p2" "$p1"
	vm2=$!
	boot 1 client "$p1" "$p2"
	vm1=$!
	# The client's progress lines, as they come.
	tail -n +1 -F "$sh/console-client.log" 2>/dev/null | grep --line-buffered '^bench: ' &
	tailer=$!
	wait $vm1
	vrc=$?
	kill $tailer 2>/dev/null
	wait $tailer 2>/dev/null
	# The server notices client-done and saves its log; then the power cut.
	for i in $(seq 30); do
		[ -e "$sh/server-done" ] && break
		sleep 1
	done
	for qpid in $(pgrep -f 'qemu-system.*mac=52:54:00:1c:5c:02'); do
		tr '\0' ' ' < "/proc/$qpid/cmdline" 2>/dev/null | grep -qF "$sh" && kill -KILL "$qpid"
	done
	wait $vm2 2>/dev/null
	echo "bench: layout b, MTU $mtu: done after $((SECONDS - t0)) s"
	if ! grep -q 'ICS-BENCH-END rc=0' "$sh/client-done" 2>/dev/null; then
		echo "bench: layout b, MTU $mtu: the client did not finish (its VM ended with status $vrc; ${sh#$root/}/console-client.log)" >&2
		rc=1
	fi
	cat "$sh/transports.jsonl" >> "$out" 2>/dev/null
done
exit $rc
