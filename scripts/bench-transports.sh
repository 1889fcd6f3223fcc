#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every transport, at the same sizes and for the same time, back to back in
# one VM boot. Layout "a" (run inside the VM by scripts/bench-guest.sh): two
# network namespaces of one kernel joined by one veth pair. Layout "b"
# (BENCH_LAYOUT=b, run in the client VM by scripts/bench-b-guest.sh, which
# has set up the link and the servers in the other VM): the client's root
# namespace, the dedicated NIC BENCH_DEV, the transports BENCH_AVAIL:
#
#   packet      raw AF_PACKET frames (ethertype 0x88B6): the path's floor
#   udp, tcp    bench-peer over IPv4 on the veth
#   tipc        AF_TIPC over an Ethernet bearer on the veth. Between two
#               namespaces of one kernel TIPC hands messages across
#               directly, past the bearer (the "veth-frames" lines below
#               count it): the report calls it "TIPC same-host"
#   ics-user    icsperf, user client <-> user server (/dev/ics), channel TEST
#   ics-kernel  icsperf -k, the test service's generator <-> the test
#               service (ics_test.ko) at the other end, on channel
#               ICS_KERNEL_CH (bench-lib.sh), where both ends' test
#               services are attached
#
# For each MTU of BENCH_MTUS the namespaces are built afresh, every server
# starts in bt-b pinned to vCPU 1 (BENCH_PIN), and then, BENCH_REPS times, each
# transport in turn (A B C ... A B C ...: a slow spell of the emulator hits
# every transport alike rather than one) runs, from bt-a pinned to vCPU 0:
# rr (request/response) over BENCH_SIZES, stream over BENCH_STREAM_SIZES,
# and, for udp and ics-user, rr-load (open-loop request rate sweep) at
# BENCH_LOAD_SIZE over BENCH_RATES. Each run is BENCH_SECS per size (or
# rate). Client and server on different vCPUs cost each round trip two
# cross-CPU wakeups: ~0.1 ms under TCG on an otherwise idle 2-core host,
# but ~5 ms while another VM competes for the host's cores (measured), so
# run nothing else meanwhile (scripts/bench.sh warns).
#
# Usage: bench-transports.sh RESDIR (RESDIR/stage as for bench-guest.sh).
# Output: one JSON line per (mtu, transport, test, rep) in
# RESDIR/transports.jsonl: {"layout": "a" or "b", "mtu", "transport", "test",
# "rep", "data": the tool's JSON object (null on failure, with "error")};
# plus "veth-frames" lines (rep 0) and "meta" lines.
#
# Environment (defaults):
#   BENCH_MTUS            "9000 1500"
#   BENCH_REPS            5
#   BENCH_SECS            0.5 (per size, per rate)
#   BENCH_SIZES           64,128,...,131072 (powers of two)
#   BENCH_STREAM_SIZES    BENCH_SIZES
#   BENCH_RATES           offered requests/s for rr-load (empty: no rr-load)
#   BENCH_LOAD_SIZE       8192
#   BENCH_TRANSPORT_LIST  "packet udp tcp tipc ics-user ics-kernel" (layout b
#                         loads TIPC, ics only when it names them)
#   BENCH_PIN             "0 1": the client's vCPU, the server's
#   BENCH_STATS_SIZE      65536: the streams that measure what statistics cost
#   BENCH_COSTS           "stats auth nic": what statistics, a cluster key
#                         and icsctl nic's program cost (stats_cost,
#                         auth_cost, nic_cost below); "": none
set -u
res=$1
stage=$res/stage
# shellcheck source=/dev/null
[ -r "$stage/env" ] && . "$stage/env"
# Layout b: one MTU per boot of the VM pair; the client alone in its VM.
[ "${BENCH_LAYOUT:-a}" = b ] && BENCH_MTUS=$BENCH_B_MTU BENCH_PIN="0 0"
export PATH=$stage:$PATH
# shellcheck source=bench-lib.sh
. "$stage/bench-lib.sh"

MTUS=${BENCH_MTUS:-9000 1500}
[ "$MTUS" = none ] && MTUS="9000 1500"
REPS=${BENCH_REPS:-5}
SECS=${BENCH_SECS:-0.5}
SIZES=${BENCH_SIZES:-64,128,256,512,1024,2048,4096,8192,16384,32768,65536,131072}
STREAM_SIZES=${BENCH_STREAM_SIZES:-$SIZES}
RATES=${BENCH_RATES-500,1000,2000,4000,8000,16000}
STATS_SIZE=${BENCH_STATS_SIZE:-65536}
AUTH_SIZES=${BENCH_AUTH_SIZES:-64,1024,8192,65536}
LOAD_SIZE=${BENCH_LOAD_SIZE:-8192}
ORDER=${BENCH_TRANSPORT_LIST:-packet udp tcp tipc ics-user ics-kernel}
# Client's and server's vCPU: different ones, so that each message crosses
# CPUs as it does between two real processes.
read -r CCPU SCPU <<< "${BENCH_PIN:-0 1}"
LAYOUT=${BENCH_LAYOUT:-a}
A=bt-a B=bt-b DEV_A=va
[ "$LAYOUT" = b ] && DEV_A=$BENCH_DEV
out=$res/transports.jsonl
tmp=$res/transports.tmp
servers=()
t_start=$SECONDS

# "${IN_A[@]}" CMD...: CMD on the client's side (layout a: in namespace
# bt-a). An array, not a function, so that timeout can run it.
IN_A=(ip netns exec $A)
[ "$LAYOUT" = b ] && IN_A=()
in_a() { "${IN_A[@]}" "$@"; }

# A JSON list of the numbers in a comma list.
jlist() { echo "[$1]"; }
count() { local IFS=,; set -- $1; echo $#; }

# meta JSON: a "meta" line (run parameters, availability, time).
meta()
{
	jq -nc --argjson d "$1" --arg l "$LAYOUT" '{layout: $l, test: "meta", data: $d}' >> "$out"
}

# record MTU TRANSPORT TEST REP RC: the run's JSON (in $tmp.out) as a line.
record()
{
	local mtu=$1 t=$2 test=$3 rep=$4 rc=$5 line
	if [ "$rc" = 0 ] && line=$(jq -ce --argjson mtu "$mtu" --arg t "$t" --arg test "$test" \
		--argjson rep "$rep" --arg l "$LAYOUT" '{layout: $l, mtu: $mtu, transport: $t, test: $test,
		rep: $rep, data: .}' "$tmp.out" 2>/dev/null); then
		echo "$line" >> "$out"
		summary "$mtu" "$t" "$test" "$rep"
		return 0
	fi
	jq -nc --argjson mtu "$mtu" --arg t "$t" --arg test "$test" --argjson rep "$rep" \
		--arg err "rc $rc: $(tail -c 600 "$tmp.err")" --arg l "$LAYOUT" \
		'{layout: $l, mtu: $mtu, transport: $t, test: $test, rep: $rep, data: null,
		error: $err}' >> "$out"
	log "$t $test (mtu $mtu, rep $rep) failed, rc $rc: $(tail -n 3 "$tmp.err" | tr '\n' ' ')"
}

# One line of progress: the first and last size's figure.
summary()
{
	local s
	s=$(jq -r 'def f: if . == null then "-" else (. * 10 | round / 10 | tostring) end;
		[.results[] | if .p50_us != null
			then "\(.rate // .size)\(if .rate then "/s" else " B" end) p50 \(.p50_us | f) us"
			else "\(.size) B \(.mb_s | f) MB/s" end] | [first, last] | unique | join(", ")' \
		"$tmp.out" 2>/dev/null)
	log "[mtu $1 rep $4/$REPS, $((SECONDS - t_start)) s] $2 $3: $s"
}

# run MTU REP TRANSPORT TEST: one client run, on the client's vCPU.
run()
{
	local mtu=$1 rep=$2 t=$3 test=$4 label=${5:-$3} sizes cmd n rc
	case $test in
	rr) sizes=$SIZES ;;
	stream) sizes=$STREAM_SIZES ;;
	rr-load) sizes=$LOAD_SIZE ;;
	esac
	case $t/$test in
	packet/*) cmd=(bench-peer "$test" packet -i "$DEV_A" -m "$mac_b") ;;
	udp/* | tcp/*) cmd=(bench-peer "$test" "$t" -H 10.77.0.2) ;;
	tipc/*) cmd=(bench-peer "$test" tipc -p 1) ;;
	ics-user/rr) cmd=(icsperf lat 2) ;;
	# -w 0: no answer per message, as the other streams have none (the
	# server sinks; one round trip at the end closes the run)
	ics-user/stream) cmd=(icsperf stream 2 -w 0) ;;
	ics-user/rr-load) cmd=(icsperf rr-load 2) ;;
	ics-kernel/rr) cmd=(icsperf lat 2 -k -c "$ICS_KERNEL_CH") ;;
	ics-kernel/stream) cmd=(icsperf stream 2 -k -c "$ICS_KERNEL_CH") ;;
	*) return 0 ;;
	esac
	cmd+=(-s "$sizes" -l "$SECS" -j)
	n=$(count "$sizes")
	[ "$test" = rr-load ] && { cmd+=(-r "$RATES"); n=$(count "$RATES"); }
	# Generous: a lost round trip waits 1 s, a stream's end up to 5 s.
	timeout -k 5 $((n * 8 + 60)) "${IN_A[@]}" taskset -c "$CCPU" "${cmd[@]}" \
		> "$tmp.out" 2> "$tmp.err"
	rc=$?
	record "$mtu" "$label" "$test" "$rep" "$rc"
}

veth_frames() { in_a ip -s -j link show "$DEV_A" | jq '.[0].stats64 | .tx.packets + .rx.packets'; }

# count_frames MTU TRANSPORT TEST SIZE: how many frames the veth carried
# during one short run, against the messages the run moved; and, as the
# background to subtract (heartbeats, link probes), how many it carried
# in as long again with nothing running.
count_frames()
{
	local mtu=$1 t=$2 test=$3 size=$4 f0 f1 f2 t0 t1 line
	f0=$(veth_frames)
	t0=$(date +%s.%N)
	SIZES=$size STREAM_SIZES=$size SECS=0.3 run_quiet "$t" "$test"
	t1=$(date +%s.%N)
	f1=$(veth_frames)
	sleep "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
	f2=$(veth_frames)
	line=$(jq -c --argjson mtu "$mtu" --arg t "$t" --arg test "$test" --argjson f $((f1 - f0)) \
		--argjson idle $((f2 - f1)) --arg l "$LAYOUT" \
		'{layout: $l, mtu: $mtu, transport: $t, test: "veth-frames", rep: 0,
		data: {of_test: $test, size: .results[0].size, msgs: .results[0].msgs,
		veth_frames: $f, idle_frames: $idle,
		frames_per_msg: ($f / ([.results[0].msgs, 1] | max))}}' \
		"$tmp.out" 2>/dev/null) || { log "frame count of $t $test failed"; return; }
	echo "$line" >> "$out"
	log "veth frames, $t $test $size B (mtu $mtu): $(jq -r '.data | "\(.veth_frames) frames for \(.msgs) messages (\(.idle_frames) in as long idle)"' <<< "$line")"
}

run_quiet()
{
	local sizes=$SIZES cmd
	[ "$2" = stream ] && sizes=$STREAM_SIZES
	case $1 in
	udp) cmd=(bench-peer "$2" udp -H 10.77.0.2) ;;
	tcp) cmd=(bench-peer "$2" tcp -H 10.77.0.2) ;;
	tipc) cmd=(bench-peer "$2" tipc -p 1) ;;
	esac
	timeout -k 5 60 "${IN_A[@]}" taskset -c "$CCPU" "${cmd[@]}" -s "$sizes" -l "$SECS" -j \
		> "$tmp.out" 2> "$tmp.err"
}

# start_server NAME CMD...: in bt-b, on the server's vCPU. A simple command, so
# that $! is the server itself (taskset and ip netns exec exec it).
start_server()
{
	local name=$1
	shift
	ip netns exec $B taskset -c "$SCPU" "$@" > "$res/server-$name.log" 2>&1 &
	servers+=($!)
}

teardown()
{
	local p
	for p in "${servers[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${servers[@]}"; do
		wait "$p" 2>/dev/null
	done
	servers=()
	[ "$LAYOUT" = a ] || return 0
	ip netns del $A 2>/dev/null
	ip netns del $B 2>/dev/null
}

# setup MTU: namespaces, bearers, servers; sets $avail (transports to run).
setup()
{
	local mtu=$1 t
	if [ "$LAYOUT" = b ]; then
		# The other VM serves (scripts/bench-b-guest.sh set both ends up).
		mac_b=$BENCH_PEER_MAC
		avail=$BENCH_AVAIL
		case " $avail " in *" ics-"*)
			log "ics crc32c driver: $(icsctl show -j | jq -r .crc32c_driver)" ;;
		esac
		return 0
	fi
	ns_pair $A $B va vb "$mtu" || return 1
	mac_b=$(ip -n $B -j link show vb | jq -r '.[0].address')
	avail=
	for t in $ORDER; do
		case $t in
		packet) start_server packet bench-peer server packet -i vb ;;
		udp) start_server udp bench-peer server udp -p 5201 ;;
		tcp) start_server tcp bench-peer server tcp -p 5201 ;;
		tipc)
			[ -z "$no_tipc" ] || continue
			tipc_pair $A $B va vb "bt$mtu" || { why_tipc="no TIPC link on the veth"; continue; }
			start_server tipc bench-peer server tipc -p 1
			;;
		ics-user | ics-kernel)
			[ -z "$no_ics" ] || continue
			if [ -z "${ics_bound:-}" ]; then
				ics_pair $A $B va vb || { why_ics="ics: node 2 unreachable"; continue; }
				tsvc_attach $A "$ICS_KERNEL_CH" && tsvc_attach $B "$ICS_KERNEL_CH" ||
					{ why_ics="ics: cannot attach the test service"; continue; }
				# every frame's CRC32C: the CPU's instruction or the table
				log "ics crc32c driver: $(ip netns exec $A icsctl show -j | jq -r .crc32c_driver)"
				start_server ics icsperf server
				ics_server=$!
				ics_bound=1
			fi
			;;
		*) log "unknown transport $t"; continue ;;
		esac
		avail+=" $t"
	done
	unset ics_bound
	sleep 1
}

# A rough duration, to print before starting: each size or rate costs
# BENCH_SECS plus set-up, each run a process start under emulation.
estimate()
{
	local n=0 runs=0 t per
	for t in $ORDER; do
		n=$((n + $(count "$SIZES") + $(count "$STREAM_SIZES")))
		runs=$((runs + 2))
		case $t in udp | ics-user) [ -n "$RATES" ] && n=$((n + $(count "$RATES"))) runs=$((runs + 1)) ;; esac
	done
	per=$(awk -v n=$n -v r=$runs -v s="$SECS" 'BEGIN { printf "%d", n * (s + 0.05) + r * 1.2 }')
	echo $(((per * REPS + 20) * $(wc -w <<< "$MTUS")))
}

# What cannot run, and why (recorded in the meta line).
no_tipc= why_tipc= no_ics= why_ics=
if [ "$LAYOUT" = a ] && { ! modprobe tipc 2>/dev/null || ! command -v tipc >/dev/null; }; then
	no_tipc=1 why_tipc="modprobe tipc or the tipc tool failed"
fi
if ! command -v icsperf >/dev/null; then
	no_ics=1 why_ics="icsperf not built (user/icsperf)"
elif [ "$LAYOUT" = a ] && { ! ics_unload || ! ics_load "$stage/ics.ko" $ICS_PARAMS; }; then
	no_ics=1 why_ics="insmod ics.ko or ics_test.ko failed"
fi
if [ "$LAYOUT" = b ]; then
	case " $BENCH_AVAIL " in *" tipc "*) ;; *) why_tipc="no TIPC link between the VMs" ;; esac
	case " $BENCH_AVAIL " in *" ics-"*) ;; *) why_ics="ics not up between the VMs" ;; esac
	pin="client VM vCPU $CCPU, servers in the other VM"
else
	pin="client taskset -c $CCPU, server taskset -c $SCPU"
fi
[ -n "$no_tipc" ] && log "transports: no TIPC: $why_tipc"
[ -n "$no_ics" ] && log "transports: no ics: $why_ics"

est=$(estimate)
log "=== transports: MTUs $MTUS, $REPS reps, ${SECS} s per point, order: $ORDER;" \
	"about $(((est + 59) / 60)) min ==="
meta "$(jq -nc --arg mtus "$MTUS" --argjson reps "$REPS" --argjson secs "$SECS" \
	--argjson sizes "$(jlist "$SIZES")" --argjson ss "$(jlist "$STREAM_SIZES")" \
	--argjson rates "$(jlist "$RATES")" --argjson ls "$LOAD_SIZE" --arg order "$ORDER" \
	--arg kernel "$(uname -r)" --argjson cpus "$(nproc)" --argjson est "$est" \
	--arg no_tipc "$why_tipc" --arg no_ics "$why_ics" \
	--arg pin "$pin" --arg icsp "$ICS_PARAMS" \
	'{mtus: ($mtus | split(" ") | map(select(. != "") | tonumber)), reps: $reps, secs: $secs,
	sizes: $sizes, stream_sizes: $ss, rates: $rates, load_size: $ls,
	order: ($order | split(" ") | map(select(. != ""))), kernel: $kernel, cpus: $cpus,
	pinning: $pin, estimated_s: $est, ics_params: $icsp,
	unavailable: {tipc: $no_tipc, ics: $no_ics}}')"

# ics_swap KO: unbind both members, replace the module and its test
# service, bind and attach again, and restart the icsperf server.
ics_swap()
{
	ip netns exec $A icsctl unbind >/dev/null
	ip netns exec $B icsctl unbind >/dev/null
	kill "$ics_server" 2>/dev/null
	wait "$ics_server" 2>/dev/null
	ics_unload && ics_load "$1" $ICS_PARAMS && ics_pair $A $B va vb &&
		tsvc_attach $A "$ICS_KERNEL_CH" && tsvc_attach $B "$ICS_KERNEL_CH" || return 1
	start_server ics icsperf server
	ics_server=$!
	sleep 1
}

# stats_cost MTU: what the statistics cost a stream (at most 2 % is the target).
# The module as built and one with ICS_NO_STATS=y alternate REPS times;
# each time the user and the kernel stream of BENCH_STATS_SIZE run, and
# the runs of the second are recorded as "ics-user-nostats" and
# "ics-kernel-nostats".
stats_cost()
{
	local mtu=$1 rep ko tag t
	[ -r "$stage/ics-nostats.ko" ] && [ -r "$stage/ics_test-nostats.ko" ] ||
		{ log "no ics-nostats.ko: accounting cost not measured"; return; }
	# Swapping modules in both VMs is not worth it: layout a measures it.
	[ "$LAYOUT" = a ] || return 0
	case " $avail " in *" ics-user "*) ;; *) return ;; esac
	log "accounting cost at MTU $mtu: streams of $STATS_SIZE B, with and without statistics"
	for rep in $(seq "$REPS"); do
		for ko in ics-nostats.ko ics.ko; do
			ics_swap "$stage/$ko" || { log "module swap to $ko failed"; return; }
			tag=; [ $ko = ics-nostats.ko ] && tag=-nostats
			for t in ics-user ics-kernel; do
				STREAM_SIZES=$STATS_SIZE run "$mtu" "$rep" "$t" stream "$t$tag"
			done
		done
	done
}

# auth_set MODE: authentication MODE (off, require) on both members, by
# way of accept on both, as an administrator switches a cluster.
auth_set()
{
	local ns
	for ns in $A $B; do
		ip netns exec $ns icsctl set auth accept >/dev/null || return 1
	done
	for ns in $A $B; do
		ip netns exec $ns icsctl set auth "$1" >/dev/null || return 1
	done
}

# auth_cost MTU: what a cluster key costs: ics-kernel round trips and
# streams of AUTH_SIZES with authentication required on both members and
# off, alternating REPS times, recorded as "ics-kernel-auth" and
# "ics-kernel-authoff" (the kernel client: no system call in the way).
auth_cost()
{
	local mtu=$1 rep mode tag ns
	[ "$LAYOUT" = a ] || return 0
	case " $avail " in *" ics-kernel "*) ;; *) return ;; esac
	(umask 077 && icsctl key gen > "$tmp.key") || { log "icsctl key gen failed"; return; }
	for ns in $A $B; do
		ip netns exec $ns icsctl key add 1 "$tmp.key" >/dev/null &&
			ip netns exec $ns icsctl key use 1 >/dev/null ||
			{ log "no cluster key (icsctl key add): authentication cost not measured"; return; }
	done
	log "authentication cost at MTU $mtu: ics-kernel, cluster key required and off"
	for rep in $(seq "$REPS"); do
		for mode in off require; do
			auth_set $mode || { log "icsctl set auth $mode failed"; return; }
			tag=-auth
			[ $mode = off ] && tag=-authoff
			SIZES=$AUTH_SIZES run "$mtu" "$rep" ics-kernel rr "ics-kernel$tag"
			STREAM_SIZES=$AUTH_SIZES run "$mtu" "$rep" ics-kernel stream "ics-kernel$tag"
		done
	done
	auth_set off
	rm -f "$tmp.key"
}

# nic_cost MTU: what the NIC view costs: ics-kernel round trips and
# streams with icsctl nic's program attached to both members' veths and
# not, alternating REPS times, recorded as "ics-kernel-nic" and
# "ics-kernel-nonic".
nic_cost()
{
	local mtu=$1 rep on tag ns dev
	[ "$LAYOUT" = a ] || return 0
	case " $avail " in *" ics-kernel "*) ;; *) return ;; esac
	log "NIC view cost at MTU $mtu: ics-kernel, icsctl nic attached to both veths and not"
	for rep in $(seq "$REPS"); do
		for on in 0 1; do
			for ns in $A $B; do
				dev=va
				[ "$ns" = "$B" ] && dev=vb
				# nsenter, not ip netns exec: the pins live in the host's bpffs
				if [ $on = 1 ]; then
					nsenter --net="/run/netns/$ns" icsctl nic attach $dev >/dev/null
				else
					nsenter --net="/run/netns/$ns" icsctl nic detach $dev >/dev/null 2>&1
					true
				fi || { log "icsctl nic attach $dev failed: NIC view cost not measured"; return; }
			done
			tag=-nonic
			[ $on = 1 ] && tag=-nic
			SIZES=64 run "$mtu" "$rep" ics-kernel rr "ics-kernel$tag"
			STREAM_SIZES=65536 run "$mtu" "$rep" ics-kernel stream "ics-kernel$tag"
		done
	done
	nsenter --net="/run/netns/$A" icsctl nic detach va >/dev/null
	nsenter --net="/run/netns/$B" icsctl nic detach vb >/dev/null
}

for mtu in $MTUS; do
	log "=== transports, MTU $mtu ==="
	if ! setup "$mtu"; then
		log "setup failed for MTU $mtu"
		teardown
		continue
	fi
	log "transports at MTU $mtu:$avail"
	# The same-host fact: frames on the veth per message, TIPC against UDP
	# (and TCP, whose stream the veth carries as GSO segments).
	for t in udp tcp tipc; do
		case " $avail " in *" $t "*)
			count_frames "$mtu" "$t" rr 1024
			count_frames "$mtu" "$t" stream 8192
			;;
		esac
	done
	for rep in $(seq "$REPS"); do
		for t in $avail; do
			run "$mtu" "$rep" "$t" rr
			run "$mtu" "$rep" "$t" stream
			case $t in udp | ics-user)
				[ -n "$RATES" ] && run "$mtu" "$rep" "$t" rr-load ;;
			esac
		done
	done
	case " ${BENCH_COSTS-stats auth nic} " in *" stats "*) stats_cost "$mtu" ;; esac
	case " ${BENCH_COSTS-stats auth nic} " in *" auth "*) auth_cost "$mtu" ;; esac
	case " ${BENCH_COSTS-stats auth nic} " in *" nic "*) nic_cost "$mtu" ;; esac
	teardown
done
rm -f "$tmp.out" "$tmp.err"
elapsed=$((SECONDS - t_start))
meta "{\"elapsed_s\": $elapsed}"
log "=== transports done in $((elapsed / 60)) min $((elapsed % 60)) s (estimated $(((est + 59) / 60)) min) ==="
