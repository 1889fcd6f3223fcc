#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the VM started by scripts/bench.sh. For each MTU: two network
# namespaces joined by one veth pair, ics bound on both ends (node 1 in
# bench-a sends, node 2 in bench-b receives) with the test service,
# ics_test.ko, attached to every channel but CNX at both ends (its
# generator sends, node 2's checks every message and answers the pings),
# and, on the same veth, TCP (and TIPC when its module loads) as the
# baseline:
#
#   ics_ping_idle     64-byte PRI0 round trips, one at a time, idle link
#   ics_ping_loaded   the same while 1 MiB CFS messages stream from node 1,
#                     the stream's sender on the pinger's vCPU (0)
#   ics_ping_loaded_cpu1  the same, the stream's sender on vCPU 1
#   ics_bulk          N 1 MiB CFS messages, --wait: wall clock -> MB/s
#   ics_bulk_loss     the same with netem loss 1% on bench-a's veth
#   ics_test_b        node 2's test service at the end (icsctl test show)
#   tcp_ping_idle, tcp_ping_loaded, tcp_bulk, tcp_bulk_loss: the same for TCP
#   tipc_ping_idle, tipc_bulk: TIPC (SOCK_STREAM) when available
#
# Then every transport at every size, interleaved and repeated
# (scripts/bench-transports.sh, into RESDIR/transports.jsonl), and
# membership (scripts/bench-members.py, recorded with "mtu" 0):
#   detect_HB_MISSES  failure detection over BENCH_KILLS kills of one of
#                     three members, at each "HB:MISSES" of BENCH_DETECT
#   form_N            time for N members to form a full view, for each N
#                     of BENCH_FORM
#
# Usage: bench-guest.sh RESDIR. RESDIR/stage holds ics.ko, ics_test.ko
# (and ics-nostats.ko, ics_test-nostats.ko when they built), icsctl, icstat,
# icsperf (when built), bench-peer, bench-lib.sh, bench-transports.sh,
# bench-members.py, ics_members.py and env (BENCH_MTUS, "none" for no veth
# runs, BENCH_PINGS, BENCH_BULK_MSGS, BENCH_KILLS, BENCH_DETECT, BENCH_FORM,
# BENCH_PARTS, and bench-transports.sh's variables). Each result
# is a JSON line in RESDIR/results.jsonl; "ICS-BENCH-END" goes to
# RESDIR/done at the end.
set -u
res=$1
stage=$res/stage
# shellcheck source=/dev/null
. "$stage/env"
export PATH=$stage:$PATH
MTUS=${BENCH_MTUS:-9000 1500}
PINGS=${BENCH_PINGS:-2000}
BULK=${BENCH_BULK_MSGS:-256}
KILLS=${BENCH_KILLS:-20}
DETECT=${BENCH_DETECT:-100:3 25:3}
FORM=${BENCH_FORM:-8 16 32}
# Which parts run: veth (the ics/TCP/TIPC runs above), transports
# (scripts/bench-transports.sh), members (detection and formation).
PARTS=${BENCH_PARTS:-veth transports members}
has_part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
MIB=1048576
A=bench-a B=bench-b
out=$res/results.jsonl
: > "$out"

# shellcheck source=bench-lib.sh
. "$stage/bench-lib.sh"

# record MTU NAME JSON: one result line.
record()
{
	python3 -c '
import json, sys
print(json.dumps({"mtu": int(sys.argv[1]), "test": sys.argv[2], "data": json.loads(sys.argv[3])}))
' "$1" "$2" "$3" >> "$out" || log "cannot record $2: $3"
	log "$2 (mtu $1): $3"
}

now() { date +%s.%N; }
elapsed() { python3 -c 'import sys; print("%.6f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$1" "$2"; }

# Round trips run on CPU 0, both ends: under TCG a wakeup on the other vCPU
# costs milliseconds, which would measure the emulator, not the protocol.
# (node 2's test service answers a 64-byte ping in softirq, which veth
# runs on the sending CPU; the TCP and TIPC servers are pinned to the same
# CPU as their client.) They run SCHED_FIFO
# (every transport alike), so that a bulk stream sharing their vCPU
# delays them by the work it does in softirq, which nothing preempts, not
# by the scheduler's time slices. The loaded round trips are measured with
# the stream's sender on the pinger's vCPU and on the other one: veth
# hands a frame to the receiver on the CPU that sent it, so the stream's
# receive and acknowledgement processing runs on the vCPU of whoever
# pushes its frames, and may land on the pinger's.
pin=(taskset -c 0 chrt -f 50)
# No measurement may hang the run: each gets at most 10 minutes.
lim() { timeout -k 10 600 "$@"; }
ics_ping() { lim "${pin[@]}" ip netns exec $A icsctl send node 2 channel PRI0 size 64 count "$PINGS" --ping --timeout 10000 -j; }
peer_ping() { lim "${pin[@]}" ip netns exec $A bench-peer ping "$1" "$2" "$3" 64 "$PINGS"; }

cfs_rx() { ip netns exec $B icstat -j channels | python3 -c 'import json,sys; print(json.load(sys.stdin)["channels"][3]["rx"]["msgs"])'; }

# Wait until node 2 has received no CFS message for 2 s: a stopped bulk
# sender may leave messages queued in the kernel.
quiesce()
{
	local prev=-1 cur i
	for i in $(seq 300); do
		cur=$(cfs_rx)
		[ "$cur" = "$prev" ] && return 0
		prev=$cur
		sleep 2
	done
	log "CFS traffic did not stop"
}

setup()		# MTU
{
	local mtu=$1
	ns_pair $A $B va vb "$mtu" || return 1
	ics_pair $A $B va vb || return 1
	tsvc_attach $A all && tsvc_attach $B all || return 1
	"${pin[@]}" ip netns exec $B bench-peer server tcp 5201 & peers+=($!)
	tipc=0
	if [ "$tipc_ok" = 1 ] && tipc_pair $A $B va vb "bench$mtu"; then
		tipc=1
		"${pin[@]}" ip netns exec $B bench-peer server tipc 1 & peers+=($!)
	fi
	sleep 1
}

teardown()
{
	local p
	for p in "${peers[@]}"; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	peers=()
	ip netns del $A
	ip netns del $B
}

# ics: a bulk run of BULK messages with --wait, timed; checks delivery.
ics_bulk()	# MTU NAME
{
	local rx0 rx1 t0 t1 j secs
	rx0=$(cfs_rx)
	t0=$(now)
	j=$(lim ip netns exec $A icsctl send node 2 channel CFS size $MIB count "$BULK" \
		--wait --timeout 60000 -j)
	t1=$(now)
	quiesce
	rx1=$(cfs_rx)
	secs=$(elapsed "$t0" "$t1")
	record "$1" "$2" "$(python3 -c '
import json, sys
j = json.loads(sys.argv[1]) if sys.argv[1] else {}
n, secs, rx = int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
ok = j.get("done") == n and not j.get("failed") and rx == n
print(json.dumps({"msgs": n, "bytes": n * 1048576, "secs": secs,
                  "mb_s": n * 1048576 / secs / 1e6 if ok else None,
                  "received": rx, "reply": j, "ok": ok}))
' "$j" "$BULK" "$secs" "$((rx1 - rx0))")"
}

# Start a background 1 MiB CFS stream and wait until it flows.
ics_stream_start()	# CPU
{
	local rx0 i
	rx0=$(cfs_rx)
	# A simple command, so that $! is icsctl itself (taskset and ip netns
	# exec exec it).
	taskset -c "$1" ip netns exec $A icsctl send node 2 channel CFS size $MIB count 1000000 \
		--wait --timeout 60000 > /dev/null 2>&1 &
	stream_pid=$!
	for i in $(seq 300); do
		[ "$(cfs_rx)" -gt "$((rx0 + 2))" ] && return 0
		sleep 0.1
	done
	log "the background CFS stream did not start"
}

# stop_bg PID: TERM (a non-interactive shell's background jobs ignore INT),
# then KILL if it lingers.
stop_bg()
{
	local i
	kill -TERM "$1" 2>/dev/null
	for i in $(seq 300); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

ics_stream_stop()
{
	stop_bg "$stream_pid"
	quiesce
}

tcp_stream_start()	# CPU
{
	taskset -c "$1" ip netns exec $A bench-peer bulk tcp 10.77.0.2 5201 0 $MIB 3600 \
		> /dev/null 2>&1 &
	stream_pid=$!
	sleep 2
}

tcp_stream_stop()
{
	stop_bg "$stream_pid"
	sleep 1
}

va_tx_bytes() { ip -n $A -s -j link show dev va | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["bytes"])'; }

# bulk_loaded_rate T0 RX0: MB/s the background ics stream made meanwhile.
stream_rate() { python3 -c 'import sys; print("%.1f" % (int(sys.argv[1]) * 1048576 / float(sys.argv[2]) / 1e6))' "$1" "$2"; }

bench_mtu()
{
	local mtu=$1 j rx0 t0 t1
	log "=== MTU $mtu ==="
	setup "$mtu" || { log "setup failed for MTU $mtu"; teardown; return 1; }

	# (a) idle round trips
	j=$(ics_ping)
	record "$mtu" ics_ping_idle "${j:-null}"
	j=$(peer_ping tcp 10.77.0.2 5201)
	record "$mtu" tcp_ping_idle "${j:-null}"
	if [ "$tipc" = 1 ]; then
		j=$(peer_ping tipc - 1)
		record "$mtu" tipc_ping_idle "${j:-null}"
	fi

	# (b) round trips behind a bulk stream from the same sender, the
	# stream's sender on vCPU 0 (with the pinger), then on vCPU 1
	for cpu in 0 1; do
		sfx=$([ $cpu = 0 ] || echo _cpu$cpu)
		ics_stream_start $cpu
		rx0=$(cfs_rx)
		t0=$(now)
		j=$(ics_ping)
		t1=$(now)
		record "$mtu" ics_ping_loaded$sfx "${j:-null}"
		record "$mtu" ics_stream_during_ping$sfx "{\"mb_s\": $(stream_rate "$(($(cfs_rx) - rx0))" "$(elapsed "$t0" "$t1")")}"
		ics_stream_stop
		tcp_stream_start $cpu
		j=$(peer_ping tcp 10.77.0.2 5201)
		record "$mtu" tcp_ping_loaded$sfx "${j:-null}"
		tcp_stream_stop
	done

	# (c) bulk throughput, then with 1% loss on the sender's side
	ics_bulk "$mtu" ics_bulk
	j=$(lim ip netns exec $A bench-peer bulk tcp 10.77.0.2 5201 $((BULK * MIB)))
	record "$mtu" tcp_bulk "${j:-null}"
	if [ "$tipc" = 1 ]; then
		# TIPC may hand data between namespaces of one kernel directly,
		# past the veth: record how many bytes the veth carried meanwhile.
		rx0=$(va_tx_bytes)
		j=$(lim ip netns exec $A bench-peer bulk tipc - 1 $((BULK * MIB)))
		record "$mtu" tipc_bulk "${j:-null}"
		record "$mtu" tipc_bulk_veth "{\"tx_bytes\": $(($(va_tx_bytes) - rx0))}"
	fi
	if ip netns exec $A tc qdisc add dev va root netem loss 1%; then
		ics_bulk "$mtu" ics_bulk_loss
		j=$(lim ip netns exec $A bench-peer bulk tcp 10.77.0.2 5201 $((BULK * MIB)))
		record "$mtu" tcp_bulk_loss "${j:-null}"
		record "$mtu" netem_stats "{\"text\": $(ip netns exec $A tc -s qdisc show dev va | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')}"
		ip netns exec $A tc qdisc del dev va root
	else
		log "netem unavailable: no loss runs"
	fi
	record "$mtu" ics_links "$(ip netns exec $A icstat -j links 2>/dev/null || echo null)"
	record "$mtu" ics_show_a "$(ip netns exec $A icstat -j show 2>/dev/null || echo null)"
	record "$mtu" ics_test_b "$(ip netns exec $B icsctl test show -j 2>/dev/null || echo null)"
	teardown
}

log "kernel $(uname -r), $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "{\"kernel\": \"$(uname -r)\", \"cpus\": $(nproc)}" > "$res/guest.json"
tipc_ok=0
if modprobe tipc 2>/dev/null && command -v tipc >/dev/null; then
	tipc_ok=1
else
	log "TIPC unavailable (modprobe tipc or the tipc tool failed): no TIPC baseline"
fi
ics_load "$stage/ics.ko" || { log "insmod failed"; echo "ICS-BENCH-END rc=1" > "$res/done"; exit 1; }
peers=()
[ "$MTUS" = none ] && MTUS=
if has_part veth; then
	for mtu in $MTUS; do
		bench_mtu "$mtu"
	done
fi

# Every transport at every size (layout a), in its own namespaces; it
# writes RESDIR/transports.jsonl. Not bounded by lim: it is long by design
# and bounds each of its own runs.
if has_part transports; then
	bash "$stage/bench-transports.sh" "$res" || log "bench-transports.sh failed (rc $?)"
fi

# Membership, at the module's defaults but for the tunables under test.
has_part members || DETECT= FORM=
for s in $DETECT; do
	log "=== failure detection, heartbeat ${s%%:*} ms, misses ${s##*:}, $KILLS kills ==="
	j=$(lim python3 "$stage/bench-members.py" detect "${s%%:*}" "${s##*:}" "$KILLS")
	record 0 "detect_${s%%:*}_${s##*:}" "${j:-null}"
done
for n in $FORM; do
	log "=== formation, $n members ==="
	j=$(lim python3 "$stage/bench-members.py" form "$n")
	record 0 "form_$n" "${j:-null}"
done
ics_unload
dmesg > "$res/dmesg.log"
echo "ICS-BENCH-END rc=0" > "$res/done"
sync
