#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# two_members.sh - two cluster members over a veth pair: messages on all 16
# channels in both directions arrive whole, each checked intact by the
# receiver's test service (ics_test, attached to all 16 channels: rx_ok,
# none rx_bad), and every channel, histogram and per-node counter is exact;
# a stream's window and its receiver's acknowledgements are as
# wire-format.rst says.
#
#   netns ics$$-a                             netns ics$$-b
#   +-----------------------------+           +-----------------------------+
#   | ics node 1, cluster 0       |           | ics node 2, cluster 0       |
#   |  veth0 02:00:00:00:00:01    +---veth----+  veth0 02:00:00:00:00:02    |
#   |  (netem reorder, case 7)    |           |                             |
#   +-----------------------------+           +-----------------------------+
#
# Module loaded with heartbeat_ms=3600000: only the bind-time hellos and the
# replies happen; they are accounted for on channel CNX.

. "$(dirname "$0")/lib.sh"

ics_init tc
ktap_set_plan 8

setup()
{
	ics_load heartbeat_ms=$ICS_HB_LONG && pair_add
}

bind_both()
{
	local out
	pair_bind || return 1
	assert_eq "address of node 2 seen by node 1" $MAC_B "$(node_get "$NS_A" 2 address)" || return 1
	assert_eq "address of node 1 seen by node 2" $MAC_A "$(node_get "$NS_B" 1 address)" || return 1
	out=$(in_ns "$NS_A" icstat -j show |
		jget '"%s %s %s %s %s %s" % (j["state"], j["ifname"], j["address"], j["node_id"], j["cluster_id"], j["mtu"])')
	assert_eq "node 1 show" "bound veth0 $MAC_A 1 0 1500" "$out" || return 1
	# Baseline for the per-node deltas: everything after MARK.
	ics_snap "$NS_A" "$ICS_TMP/a0" && ics_snap "$NS_B" "$ICS_TMP/b0" || return 1
	echo MARK >> "$ICS_TMP/sends"
}

# The success line of icsctl send (CLI contract).
send_output()
{
	local out
	out=$(in_ns "$NS_A" icsctl send node 2 channel test size 10 count 3 2>&1) ||
		{ fail "icsctl send: $out"; return 1; }
	echo "1 2 $ICS_CH_TEST 10 3" >> "$ICS_TMP/sends"
	assert_eq "icsctl send output" "sent 3 messages of 10 bytes to node 2 on channel TEST" "$out"
}

# all_channels NS SRC DST: on every channel, 2 messages each of 0 bytes, a
# small size, 1469 bytes (two fragments at MTU 1500) and a few fragments.
all_channels()
{
	local ns=$1 src=$2 dst=$3 c
	for c in "${!ICS_CHANNELS[@]}"; do
		ics_send "$ns" "$src" "$dst" "${ICS_CHANNELS[$c]}" 0 2 || return 1
		ics_send "$ns" "$src" "$dst" "${ICS_CHANNELS[$c]}" $((64 + c)) 2 || return 1
		ics_send "$ns" "$src" "$dst" "${ICS_CHANNELS[$c]}" 1469 2 || return 1
		ics_send "$ns" "$src" "$dst" "${ICS_CHANNELS[$c]}" $((3000 + 111 * c)) 2 || return 1
	done
}

check_both()
{
	ics_model check "$ICS_TMP/sends" \
		--wait-rx "$NS_B:$(sends_to 2):60" --wait-rx "$NS_A:$(sends_to 1):60" \
		"1:$NS_A:$ICS_TMP/a1:$ICS_TMP/a0" "2:$NS_B:$ICS_TMP/b1:$ICS_TMP/b0"
}

a_to_b() { all_channels "$NS_A" 1 2 && check_both; }
b_to_a() { all_channels "$NS_B" 2 1 && check_both; }

both_at_once()
{
	local ra rb
	( for i in 1 2 3 4 5; do ics_send "$NS_A" 1 2 TEST 5000 10 || exit 1; done ) &
	ra=$!
	( for i in 1 2 3 4 5; do ics_send "$NS_B" 2 1 DLM 7001 10 || exit 1; done ) &
	rb=$!
	wait $ra || fail "sender node 1 failed"
	wait $rb || fail "sender node 2 failed"
	check_both
}

# A loss-free stream: 8 messages of 256 KiB from node 1 (at least 1448
# data frames at MTU 1500). Node 1's window holds a 64 KiB message
# (ceil(65536 / (1500 - header)) frames, icstat links cwnd; its least); node 2
# acknowledges in-order frames every ICS_ACK_EVERY (4), so its ACK frames
# grow by at most one per 3 data frames taken: the margin is the tail
# frames' acks (one per message at most, the sender asks) and delayed acks
# when the sender pauses. A sender asking for an ack whenever its window
# filled made 25 000 ACK frames for 31 000 data frames (make bench layout
# b, wire-format.rst).
acks_and_window()
{
	local f0 a0 f1 a1 cwnd want
	f0=$(link_get "$NS_B" 1 rx_frames) && a0=$(link_get "$NS_B" 1 tx_acks) || return 1
	ics_send "$NS_A" 1 2 TEST 262144 8 || return 1
	ics_wait_rx "$NS_B" 2 "$(sends_to 2)" 60 || return 1
	f1=$(link_get "$NS_B" 1 rx_frames) && a1=$(link_get "$NS_B" 1 tx_acks) || return 1
	info "node 2 took $((f1 - f0)) data frames and sent $((a1 - a0)) ACK frames"
	[ $((f1 - f0)) -ge 1448 ] || { fail "node 2 took $((f1 - f0)) data frames, expected >= 1448"; return 1; }
	[ $(((a1 - a0) * 3)) -le $((f1 - f0)) ] ||
		{ fail "node 2 sent $((a1 - a0)) ACK frames for $((f1 - f0)) data frames (> 1 per 3)"; return 1; }
	want=$(((65536 + 1500 - ICS_HDR - 1) / (1500 - ICS_HDR)))
	cwnd=$(link_get "$NS_A" 2 cwnd) || return 1
	[ "$cwnd" -ge "$want" ] ||
		{ fail "node 1's window to node 2 is $cwnd frames, less than 64 KiB ($want)"; return 1; }
	check_both
}

# capture_start NS DEV OUT: record (msg_id, frag_off) of every ics DATA
# frame arriving on DEV, until killed; OUT.ready appears once listening.
capture_start()
{
	in_ns "$1" python3 -c '
import socket, struct, sys, os, signal
dev, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88B5))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
s.bind((dev, 0x88B5))
f = open(out, "w", buffering=1)
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
open(out + ".ready", "w").close()
while True:
    fr, addr = s.recvfrom(65536)
    if addr[2] == socket.PACKET_OUTGOING or len(fr) < 14 + 48:
        continue
    (ver, typ, flags, ch, cl, src, dst, flen, sess, seq, ack_sess, ack, mid, mlen, off,
     inc, check) = struct.unpack("!BBBBIBBHIIIIIIIII", fr[14:14 + 48])
    if typ == 1:
        f.write("%d %d %d\n" % (mid, off, flen))
' "$2" "$3" &
	CAPTURE_PID=$!
	wait_eq 10 yes "capture ready" test_file "$3.ready"
}

test_file() { [ -e "$1" ] && echo yes || echo no; }

# Fragments arrive out of order: netem sends half the frames of node 1 at
# once and delays the other half by 10 ms. One message at a time (the next
# after the previous arrived). A packet capture on node 2 proves that
# fragments did arrive out of order, and node 2's link counted frames held
# ahead of a gap (rx_ooo_frames); the model check proves every message was
# delivered whole, once.
reorder()
{
	local late rc=0 i n ooo0 ooo1
	ooo0=$(stat_get "$NS_B" rx_ooo_frames)
	capture_start "$NS_B" veth0 "$ICS_TMP/cap" || return 1
	tc -n "$NS_A" qdisc add dev veth0 root netem delay 10ms reorder 50% 50% ||
		{ fail "tc netem"; kill $CAPTURE_PID; return 1; }
	n=$(sends_to 2)
	for i in $(seq 1 10); do
		ics_send "$NS_A" 1 2 KCH $((20000 + i)) 1 || { rc=1; break; }
		ics_send "$NS_A" 1 2 CFS $((4000 + i)) 1 || { rc=1; break; }
		n=$((n + 2))
		ics_wait_rx "$NS_B" 2 $n 30 || { rc=1; break; }
	done
	[ $rc = 0 ] && { check_both || rc=1; }
	kill $CAPTURE_PID; wait $CAPTURE_PID 2>/dev/null
	tc -n "$NS_A" qdisc del dev veth0 root
	late=$(awk '{ if (($1 in hi) && $2 < hi[$1]) n++; if (!($1 in hi) || $2 > hi[$1]) hi[$1] = $2 }
		END { print n + 0 }' "$ICS_TMP/cap")
	info "captured $(wc -l < "$ICS_TMP/cap") DATA frames on node 2, $late arrived after a later fragment of their message"
	[ "$late" -gt 0 ] || fail "no fragment arrived out of order; the case proved nothing" || rc=1
	ooo1=$(stat_get "$NS_B" rx_ooo_frames)
	info "node 2 rx_ooo_frames grew by $((ooo1 - ooo0))"
	[ "$ooo1" -gt "$ooo0" ] || fail "node 2 rx_ooo_frames did not grow" || rc=1
	return $rc
}

setup || ics_bail "setup failed"
ics_case "bind two members, each reachable with the other's MAC" bind_both ||
	ics_bail "members cannot see each other"
ics_case "icsctl send prints the contract line" send_output
ics_case "node 1 -> node 2 on all 16 channels: content, channel, histogram and node counters exact" a_to_b
ics_case "node 2 -> node 1 on all 16 channels: content, channel, histogram and node counters exact" b_to_a
ics_case "both directions at once: all messages whole, counters exact" both_at_once
ics_case "a loss-free stream: a window of 64 KiB, an ACK frame per 3 data frames at most" acks_and_window
ics_case "out-of-order frames (netem reorder) are held and delivered in order, counters exact" reorder
ics_case "teardown: netns deleted, module removed, kernel log clean" ics_teardown_check
ktap_finished
