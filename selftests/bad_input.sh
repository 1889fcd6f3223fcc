#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bad_input.sh - every refusal is exact: module parameters, icsctl/icstat
# errors (exit code and the one stderr line of the CLI contract), malformed
# frames from ics_inject (each bumps exactly its rx_bad_* counter and
# delivers nothing), the reliable link's receive side (duplicate, out of
# order, over the window, unknown session, corrupt CRC32C: each counted by
# exactly its counter), and a NIC deleted under a bound instance.
#
#   init netns: icsb0 <-- veth --> icsb1      (insmod ifname=... cases)
#
#   netns ics$$-a                         netns ics$$-b
#   +-------------------------+           +-------------------------+
#   | ics node 1 (receiver)   |           | ics node 2              |
#   | veth0 02:00:00:00:00:01 +---veth----+ veth0 02:00:00:00:00:02 |
#   |                         |           |  ^ ics_inject sends     |
#   +-------------------------+           +--|----------------------+
#                                            crafted frames, src MAC of
#                                            veth0 unless a case says
#   netns ics$$-c: ics instance never bound ("unused")
#
# For the frame cases node 2's own instance is unbound and ics_inject plays
# node 2: a hello with its incarnation, then data frames of one send
# session, numbered from 1, each made for node 1's binding (dst_inc, node
# 1's incarnation) and with a valid CRC32C unless the case is about the
# dst_inc or the CRC (so every other bad field reaches its own check). Each case
# is followed by a valid "fence" frame (channel DLM, 1 byte, the next
# sequence number). Once the fence is delivered, the frames before it have
# been handled (veth keeps order), so the case checks the counters without
# sleeping, and also that node 1's link expects the sequence number after
# the fence (a bad frame refused before the link must not use one up).
#
# The test service (ics_test.ko) is loaded, for icsctl send, and attached
# to no channel (ICS_ATTACH=none): every message a frame delivers, the
# fence on DLM too, is counted unclaimed on its channel.

ICS_ATTACH=none
. "$(dirname "$0")/lib.sh"

NS_C=$ICS_PFX-c
MAC_X=02:00:00:00:00:99		# nobody's
MAC_Y=02:00:00:00:00:98		# nobody's either
NOT_LOADED='ics module not loaded \(no generic netlink family "ics"\)'
UNUSED='icstat: no ics instance in this network namespace \(bind one with icsctl bind\)'
VALID_CH="BOOT PRI0 PRI1 CFS NET CLSM DRD TUNL CLUA KEVM CFSR RBLD KCH DLM TEST CNX"
INJ_ID=100000
INJ_SEQ=1		# next sequence number of the injected send session
INJ_SESS=0x1c5c0001	# ics_inject's default session
INC_A=0			# node 1's incarnation, the dst_inc of every frame to it (impersonate)
EINVAL_RE='Invalid (argument|parameters)'
HDR=$ICS_HDR

ics_init ics_inject setpriv

# ------------------------------------------------ no module / parameters --

no_module_icstat()
{
	ics_loaded && { fail "ics is loaded"; return 1; }
	expect_err 1 "icstat: $NOT_LOADED" icstat show || return 1
	expect_err 1 "icstat: $NOT_LOADED" icstat -j chanhisttot
}

no_module_icsctl()
{
	expect_err 1 "icsctl: $NOT_LOADED" icsctl show
}

init_veth()
{
	ip link add icsb0 type veth peer name icsb1 || return 1
	ICS_INIT_LINKS+=(icsb0)
	ip link set icsb0 up && ip link set icsb1 up
}

# insmod_fails REGEX PARAMS...: insmod fails with that error and leaves
# no module behind.
insmod_fails()
{
	local want=$1 out
	shift
	if out=$(insmod "$ICS_KO" "$@" 2>&1); then
		fail "insmod $* succeeded, want failure '$want'"
		ics_unload
		return 1
	fi
	# kmod's insmod says "Invalid parameters" for EINVAL.
	if ! echo "$out" | grep -Eq "$want"; then
		fail "insmod $*: want /$want/, got: $out"
		return 1
	fi
	! ics_loaded || fail "ics loaded after a failed insmod $*"
}

insmod_nodev()
{
	local line='ics: no such device "nope0"'
	insmod_fails "No such device" ifname=nope0 node_id=1 || return 1
	ics_dmesg | grep -qF "$line" || fail "no kernel log line '$line'"
}

insmod_node_range()
{
	insmod_fails "$EINVAL_RE" ifname=icsb0 node_id=0 &&
	insmod_fails "$EINVAL_RE" ifname=icsb0 node_id=65
}

# handler_wait_ms past 10 minutes: a channel would hold its peers that long
insmod_wait_range()
{
	insmod_fails "$EINVAL_RE" handler_wait_ms=600001 &&
	ics_dmesg | grep -qF "handler_wait_ms must be 0..600000" ||
		fail "no kernel log line for handler_wait_ms=600001"
}

insmod_half()
{
	insmod_fails "$EINVAL_RE" ifname=icsb0 &&
	insmod_fails "$EINVAL_RE" node_id=1
}

insmod_membership_range()
{
	insmod_fails "$EINVAL_RE" heartbeat_ms=9 &&
	insmod_fails "$EINVAL_RE" heartbeat_ms=3600001 &&
	insmod_fails "$EINVAL_RE" heartbeat_misses=0 &&
	insmod_fails "$EINVAL_RE" heartbeat_misses=101 &&
	insmod_fails "$EINVAL_RE" votes=2 &&
	insmod_fails "$EINVAL_RE" expected_votes=65
}

setup()
{
	ics_load heartbeat_ms=$ICS_HB_LONG && pair_add || return 1
	ns_add "$NS_C" || return 1
	ip -n "$NS_C" link add dummy0 type veth peer name dummy1 && ip -n "$NS_C" link set dummy0 up
}

# ------------------------------------------------------ icsctl / icstat --

unused_netns()
{
	expect_err 1 "$UNUSED" in_ns "$NS_C" icstat show || return 1
	expect_err 1 "$UNUSED" in_ns "$NS_C" icstat -j chanhisttot
}

# Several icstat commands in one call: each report as its own call gives it
# (one JSON object per line, text tables a blank line apart); the ones that
# run until stopped run alone, and an option needs a command it is for.
icstat_commands()
{
	local keys
	keys=$(in_ns "$NS_A" icstat -j show links nodes show |
		python3 -S -c 'import json, sys
print(" ".join(",".join(sorted(json.loads(l))) for l in sys.stdin))') || return 1
	assert_eq "keys of the 4 objects of icstat -j show links nodes show" \
		"$(for c in show links nodes show; do
			in_ns "$NS_A" icstat -j $c | jget '",".join(sorted(j))'
		done | tr '\n' ' ' | sed 's/ $//')" "$keys" || return 1
	# reports without a clock in them (show has reset_age_ms) are equal
	in_ns "$NS_A" icstat -n chanhisttot channels > "$ICS_TMP/two" || return 1
	{ in_ns "$NS_A" icstat -n chanhisttot && echo && in_ns "$NS_A" icstat -n channels; } \
		> "$ICS_TMP/apart" || return 1
	diff -u "$ICS_TMP/apart" "$ICS_TMP/two" | sed 's/^/# /' | head -n 20
	cmp -s "$ICS_TMP/apart" "$ICS_TMP/two" ||
		{ fail "icstat -n chanhisttot channels differs"; return 1; }
	expect_err 2 'icstat: help: runs alone, not with show' icstat show help || return 1
	expect_err 2 'icstat: chanhist: runs alone, not with monitor' icstat chanhist monitor || return 1
	expect_err 2 'icstat: monitor: runs alone, not with show' icstat show monitor || return 1
	expect_err 2 'icstat: show: option -N is for links, chanhisttot and chanhist' icstat -N 2 show nodes ||
		return 1
	# --tx/--rx where nothing has a direction: refused, not ignored
	for c in links members show monitor; do
		expect_err 2 "icstat: $c: no --tx or --rx \\(they select the direction of chanhisttot, chanhist, peerhisttot, peerhist, channels, nodes and nic\\)" \
			icstat --tx $c || return 1
	done
	in_ns "$NS_A" icstat --rx links channels > /dev/null ||
		{ fail "icstat --rx links channels: refused"; return 1; }
	expect_err 2 'icstat: unknown command "bogus" \(try "icstat help"\)' icstat show bogus
}

bind_nodev()
{
	expect_err 1 'icsctl: bind: No such device(: .*)?' in_ns "$NS_C" icsctl bind dev nope0 node 1 || return 1
	# Still never bound.
	expect_err 1 "$UNUSED" in_ns "$NS_C" icstat show
}

bind_twice()
{
	expect_err 1 'icsctl: bind: Device or resource busy(: .*)?' in_ns "$NS_A" icsctl bind dev veth0 node 3 || return 1
	assert_eq "node id after the refused bind" 1 "$(show_get "$NS_A" node_id)"
}

send_unreach()
{
	expect_err 1 'icsctl: send: No route to host(: .*)?' \
		in_ns "$NS_A" icsctl send node 9 channel TEST size 10 count 1
}

send_too_big()
{
	local before
	before=$(chan_get "$NS_A" TEST tx msgs)
	expect_err 1 'icsctl: send: Message too long(: .*)?' \
		in_ns "$NS_A" icsctl send node 2 channel TEST size 16777217 count 1 || return 1
	assert_eq "TEST tx msgs after the refused send" "$before" "$(chan_get "$NS_A" TEST tx msgs)"
}

send_self()
{
	expect_err 1 'icsctl: send: Invalid argument(: .*)?' \
		in_ns "$NS_A" icsctl send node 1 channel TEST size 10 count 1
}

send_unbound()
{
	expect_err 1 'icsctl: send: Transport endpoint is not connected(: .*)?' \
		in_ns "$NS_C" icsctl send node 1 channel TEST size 10 count 1
}

unknown_channel()
{
	expect_err 2 "icsctl: unknown channel \"FOO\"; valid channels: $VALID_CH" \
		in_ns "$NS_A" icsctl send node 2 channel FOO size 10 count 1
}

nobody_bind()
{
	expect_err 1 'icsctl: bind: Operation not permitted \(need CAP_NET_ADMIN\)' \
		in_ns "$NS_C" setpriv --reuid=65534 --regid=65534 --clear-groups icsctl bind dev dummy0 node 1
}

# ------------------------------------------------------------- frames ----

# inject ARGS...: one frame from netns b to node 1's MAC, as node 2, for
# node 1's binding (INC_A), with a fresh msg_id; later options override
# these defaults.
inject()
{
	INJ_ID=$((INJ_ID + 1))
	in_ns "$NS_B" "$ICS_INJECT" -i veth0 -d $MAC_A --src-node 2 --dst-node 1 \
		--dst-inc "$INC_A" --msg-id $INJ_ID "$@" || fail "ics_inject $*"
}

# From here on ics_inject is node 2: unbind node 2's instance and announce
# ics_inject's incarnation (its default, in every frame it sends) with a
# hello that answers node 1's challenge, as a restarted node 2 would.
impersonate()
{
	local h out
	out=$(in_ns "$NS_B" icsctl unbind 2>&1) || { fail "unbind node 2: $out"; return 1; }
	INC_A=$(ics_incarnation "$NS_A") || return 1
	h=$(stat_get "$NS_A" hello_rx)
	inject --hello --answer || return 1
	wait_eq 10 $((h + 1)) "node 1 hello_rx after the hello of ics_inject as node 2" \
		stat_get "$NS_A" hello_rx
}

# member_count NS NODE: rows of NODE in NS's members view (0 or 1)
member_count()
{
	icstat_get "$1" members "sum(1 for m in j[\"members\"] if m[\"node\"] == $2)"
}

# Node 7, never heard, from nobody's MAC, a heartbeat listing us with a
# vote: a stray frame (nothing there answers a challenge). Node 1 answers
# it at most once (none if it answered node 7 within the last 250 ms) and
# admits nothing: no row, no vote, expected votes as before.
stray_new_node()
{
	local tx ev
	tx=$(stat_get "$NS_A" hello_tx)
	ev=$(icstat_get "$NS_A" members 'j["expected_votes"]')
	frame_case rx_unconfirmed 0 -- --hello --src-node 7 --dst-node 0 --dst-inc 0 -d ff:ff:ff:ff:ff:ff \
		-s $MAC_X --hello-seen 1 --hello-votes 1 || return 1
	assert_eq "rows of node 7 in node 1's view" 0 "$(member_count "$NS_A" 7)" &&
	assert_eq "node 1's expected votes" "$ev" "$(icstat_get "$NS_A" members 'j["expected_votes"]')" &&
	tx=$(($(stat_get "$NS_A" hello_tx) - tx))
	[ $tx -le 1 ] || fail "node 1 answered one frame with $tx heartbeats"
}

# Node 7 again, now answering node 1's challenge (ics_inject --answer): it
# becomes a member (it lists us), reason "heard"; then it leaves.
answered_new_node()
{
	local bc=(--src-node 7 --dst-node 0 --dst-inc 0 -d ff:ff:ff:ff:ff:ff -s $MAC_X --hello --hello-votes 0)
	inject "${bc[@]}" --hello-seen 1 --answer || return 1
	wait_eq 10 member "node 7's state in node 1's view" member_get "$NS_A" 7 state || return 1
	assert_eq "node 7's reason and address" "heard $MAC_X" \
		"$(member_get "$NS_A" 7 reason address)" || return 1
	inject "${bc[@]}" --hello-flags 2 || return 1
	wait_eq 10 left "node 7's state after its leaving heartbeat" member_get "$NS_A" 7 state || return 1
	rm -f "$ICS_TMP/inj.base"	# the next frame case counts from here
}

# A heartbeat of node 2 (alive, ics_inject) from its MAC with a newer
# incarnation, which nothing answers: node 2 keeps its incarnation and its
# link (the fence, in the old incarnation, is delivered in sequence).
stray_restart()
{
	frame_case rx_unconfirmed 0 -- --hello --hello-incarnation 0x2c5c0de5 \
		--incarnation 0x2c5c0de5 || return 1
	assert_eq "node 2's incarnation" $((0x1c5c0de5)) "$(member_get "$NS_A" 2 incarnation)"
}

# Node 5 (nobody) joins from MAC_X, answering, and leaves. Then 199 of its
# heartbeats alternate MAC_Y and MAC_X, answering nothing: claims, none
# confirmed, so node 5 stays where it was and nothing is logged; node 1's
# challenges are rate-limited (4 per second per node with a long
# interval, however many frames come: at most one per 250 ms, and one
# more for the start). Then it answers from MAC_Y: it moves there, one
# log line; and leaves again.
mac_flap()
{
	local bc=(--src-node 5 --dst-node 0 --dst-inc 0 -d ff:ff:ff:ff:ff:ff --hello) u tx n0 n t0 ms
	inject "${bc[@]}" -s $MAC_X --answer || return 1
	wait_eq 10 "joining $MAC_X" "node 5's state and address" member_get "$NS_A" 5 state address ||
		return 1
	inject "${bc[@]}" -s $MAC_X --hello-flags 2 || return 1
	wait_eq 10 left "node 5's state after it left" member_get "$NS_A" 5 state || return 1
	n0=$(dmesg | grep -c "node 5 moved from")
	u=$(stat_get "$NS_A" rx_unconfirmed)
	tx=$(stat_get "$NS_A" hello_tx)
	t0=$(date +%s%N)
	inject "${bc[@]}" -s $MAC_Y --alt-src $MAC_X --count 199 || return 1
	wait_eq 20 $((u + 199)) "node 1 rx_unconfirmed after 199 heartbeats of node 5" \
		stat_get "$NS_A" rx_unconfirmed || return 1
	ms=$((($(date +%s%N) - t0) / 1000000))
	assert_eq "node 5's state and address after 199 unanswered claims" "left $MAC_X" \
		"$(member_get "$NS_A" 5 state address)" || return 1
	n=$(($(stat_get "$NS_A" hello_tx) - tx))
	echo "# 199 claims in $ms ms: $n challenges"
	[ "$n" -ge 1 ] && [ "$n" -le $((ms / 250 + 2)) ] ||
		fail "$n challenges for 199 claims in $ms ms" || return 1
	assert_eq "lines logged for node 5 moving" 0 $(($(dmesg | grep -c "node 5 moved from") - n0)) ||
		return 1
	inject "${bc[@]}" -s $MAC_Y --answer || return 1
	wait_eq 10 "joining moved $MAC_Y" "node 5 after it answered from $MAC_Y" \
		member_get "$NS_A" 5 state reason address || return 1
	assert_eq "lines logged for node 5 moving" 1 $(($(dmesg | grep -c "node 5 moved from") - n0)) &&
	inject "${bc[@]}" -s $MAC_Y --hello-flags 2 &&
	wait_eq 10 left "node 5's state after it left again" member_get "$NS_A" 5 state
}

# A data frame of node 2 (ics_inject) in a session far ahead of its own,
# with a message id far ahead too (a corrupted frame that passed the
# checks): node 1 joins that session and delivers the message. Node 2's
# own session goes on: its frames are stale for node 1 (one late frame of
# an old session is), until three came over a second while node 1's
# session took nothing; then one past its first frame gets a RESET, and
# node 2's next session (one up from its own, still behind the forged
# one) is taken from its first frame, with a message whose id is below
# the forged one's: delivered, not a duplicate.
dup_resets() { echo "$(stat_get "$NS_A" rx_dup_frames) $(stat_get "$NS_A" tx_resets)"; }

session_resync()
{
	local m d r
	m=$(chan_get "$NS_A" DLM rx msgs)
	inject --sess $((INJ_SESS + 100000)) --seq 1 --channel 13 --len 1 \
		--msg-id $((INJ_ID + (1 << 30))) || return 1
	wait_eq 10 $((m + 1)) "node 1: DLM messages after the forged session's" \
		chan_get "$NS_A" DLM rx msgs || return 1
	d=$(stat_get "$NS_A" rx_dup_frames)
	inject --seq $INJ_SEQ --channel 13 --len 1 || return 1
	wait_eq 10 $((d + 1)) "node 1: rx_dup_frames after a frame of node 2's own session" \
		stat_get "$NS_A" rx_dup_frames || return 1
	sleep 1.2	# the forged session idle, node 2's frames coming, for a second
	r=$(stat_get "$NS_A" tx_resets)
	inject --seq $((INJ_SEQ + 1)) --channel 13 --len 1 &&
		inject --seq $((INJ_SEQ + 2)) --channel 13 --len 1 || return 1
	wait_eq 10 "$((d + 2)) $((r + 1))" \
		"node 1: rx_dup_frames, RESETs sent after two more frames of node 2's session" \
		dup_resets || return 1
	inject --sess $((INJ_SESS + 1)) --seq 1 --channel 13 --len 1 || return 1
	wait_eq 10 $((m + 2)) "node 1: DLM messages after node 2's next session's first" \
		chan_get "$NS_A" DLM rx msgs
}

# ics_inject's node 2 leaves (a LEAVING heartbeat, numbered as its last,
# or 2 ahead of it if the cases before did not run): its data frames are
# dropped from then on (rx_peer_down), and node 2's own instance rejoins
# (a newer incarnation) for the cases after the frames.
node2_back()
{
	local d
	d=$(stat_get "$NS_A" rx_peer_down)
	inject --hello --hello-seq 2 --hello-flags 2 || return 1
	inject --seq $INJ_SEQ --channel 13 --len 1 || return 1
	wait_eq 10 $((d + 1)) "node 1 rx_peer_down after a data frame of node 2 that left" \
		stat_get "$NS_A" rx_peer_down || return 1
	assert_eq "node 2 reachable after it left" false "$(node_get "$NS_A" 2 reachable)" || return 1
	ics_bind "$NS_B" veth0 2 || return 1
	wait_reachable "$NS_A" 2 && wait_reachable "$NS_B" 1
}

# Node 9 (nobody, from MAC_X) joins announcing a one-hour interval, then
# falls silent. Its word does not stretch failure detection past 4 of our
# intervals per miss: with a heartbeat of 100 ms on node 1, node 9 is down
# (silent) within 1.2 s and a tick, not in hours. Node 2 (real again)
# beats every 100 ms meanwhile, and both go back to the long interval.
long_interval()
{
	local bc=(--src-node 9 --dst-node 0 --dst-inc 0 -d ff:ff:ff:ff:ff:ff -s $MAC_X --hello --hello-votes 0)
	in_ns "$NS_B" icsctl set heartbeat 100 && in_ns "$NS_A" icsctl set heartbeat 100 || return 1
	inject "${bc[@]}" --hello-ms 3600000 --hello-seen 1 --answer || return 1
	wait_eq 20 "down silent" "node 9 after it fell silent" member_get "$NS_A" 9 state reason || return 1
	in_ns "$NS_A" icsctl set heartbeat $ICS_HB_LONG && in_ns "$NS_B" icsctl set heartbeat $ICS_HB_LONG
}

inj_begin()
{
	[ -s "$ICS_TMP/inj.base" ] || ics_snap "$NS_A" "$ICS_TMP/inj.base"
}

# inj_end COUNTER VALID_FRAMES [CHAN.FIELD=DELTA...]: send the fence, wait
# for it, then COUNTER (an ICS_STAT key, or "none") must have grown by
# exactly 1, every other rx_bad_*/dup/conflict counter not at all, rx_frames
# by VALID_FRAMES + 1 (the fence), and per channel rx.msgs, rx.bytes,
# rx_unclaimed and the test service's test.rx_ok, test.rx_bad by 0 except
# the fence on DLM and the CHAN.FIELD=DELTA given (ics_model.py
# inj-check). The state after is the next case's base.
inj_end()
{
	local counter=$1 valid=$2 rc=0
	shift 2
	inject --seq $INJ_SEQ --channel 13 --len 1 --byte 0x42 || return 1
	INJ_SEQ=$((INJ_SEQ + 1))
	ics_model inj-check "$NS_A" "$ICS_TMP/inj.base" "$ICS_TMP/inj.now" "$counter" "$valid" \
		"$@" "rcv_nxt=2:$INJ_SEQ" || rc=1
	if [ -s "$ICS_TMP/inj.now" ]; then
		mv "$ICS_TMP/inj.now" "$ICS_TMP/inj.base"
		# After a failure, go on from where node 1's link really is.
		[ $rc = 0 ] || INJ_SEQ=$(jget 'next(l for l in j["links"]["links"] if l["node"] == 2)["rcv_nxt"]' \
			< "$ICS_TMP/inj.base")
	else
		rm -f "$ICS_TMP/inj.base"
	fi
	return $rc
}

# frame_case COUNTER VALID [seqs=N] [CHAN.FIELD=DELTA...] -- FRAME1
# [-- FRAME2...]: inject each frame (ics_inject options), then inj_end.
# Data frame k (from 0) of the case gets sequence number INJ_SEQ + k, or
# INJ_SEQ + N with a token @N among its options; hellos and acks none.
# The case uses up seqs=N sequence numbers (default VALID: the frames the
# link accepts), so the fence gets INJ_SEQ + N.
frame_case()
{
	local counter=$1 valid=$2 seqs=$2 spec=() frame=() k=0 seq
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		case $1 in
		seqs=*) seqs=${1#seqs=} ;;
		*) spec+=("$1") ;;
		esac
		shift
	done
	inj_begin || return 1
	while [ $# -gt 0 ]; do
		shift	# the "--"
		frame=()
		seq=$((INJ_SEQ + k))
		while [ $# -gt 0 ] && [ "$1" != -- ]; do
			case $1 in
			@*) seq=$((INJ_SEQ + ${1#@})) ;;
			*) frame+=("$1") ;;
			esac
			shift
		done
		case " ${frame[*]} " in
		*" --hello "* | *" --ack-frame "*) inject "${frame[@]}" ;;
		*) inject --seq $seq "${frame[@]}" ;;
		esac || return 1
		k=$((k + 1))
	done
	INJ_SEQ=$((INJ_SEQ + seqs))
	inj_end "$counter" "$valid" "${spec[@]}"
}

# bundle_case ARGS...: frame_case ARGS for one bundle frame (ICS_WF_BUNDLE;
# with --byte 0 its records are empty messages, 4 zero bytes each); the
# frame's messages take msg_ids from the injected one on, which the next
# frames must not reuse.
bundle_case()
{
	local rc
	frame_case "$@"
	rc=$?
	INJ_ID=$((INJ_ID + 8))
	return $rc
}

# A message in two fragments, sent in reverse order, with one msg_id.
two_frags_reversed()
{
	local id=$((INJ_ID + 1))
	INJ_ID=$id
	frame_case none 2 TEST.rx.msgs=1 TEST.rx.bytes=2000 TEST.rx_unclaimed=1 \
		-- --msg-id $id --msg-len 2000 --frag-off 1000 --len 1000 \
		-- --msg-id $id --msg-len 2000 --frag-off 0 --len 1000
}

# Three fragments of one message, the second with ACKREQ (acknowledge at
# once), a flag of its frame, not of the message (which has none): the
# fragments need not agree on it, and the message is reassembled once.
frags_ackreq()
{
	local id=$((INJ_ID + 1))
	INJ_ID=$id
	frame_case none 3 TEST.rx.msgs=1 TEST.rx.bytes=3000 TEST.rx_unclaimed=1 \
		-- --msg-id $id --msg-len 3000 --frag-off 0 --len 1000 \
		-- --msg-id $id --msg-len 3000 --frag-off 1000 --len 1000 --flags 0x08 \
		-- --msg-id $id --msg-len 3000 --frag-off 2000 --len 1000
}

# A valid first fragment, then a second carrying a flag that asked ics.ko's
# test service once (TESTPAT): refused before the link (it uses up no
# sequence number); the first stays held.
frag_then_flag()
{
	local id=$((INJ_ID + 1))
	INJ_ID=$id
	frame_case rx_bad_type 1 \
		-- --msg-id $id --msg-len 3000 --frag-off 0 --len 1000 \
		-- --msg-id $id --flags 0x01 --msg-len 3000 --frag-off 1000 --len 1000
}

# Two frames with one msg_id: a valid first fragment, then FRAME2 ARGS.
# The second is refused by reassembly, after the link took it in order:
# both use up a sequence number.
held_then()
{
	local counter=$1 id=$((INJ_ID + 1))
	shift
	INJ_ID=$id
	frame_case "$counter" 1 seqs=2 \
		-- --msg-id $id --msg-len 3000 --frag-off 0 --len 1000 \
		-- --msg-id $id "$@"
}

# Two one-frame messages, the second (seq + 1, msg_id + 1) sent first: it
# waits for the first, then both are delivered, in order.
ooo_pair()
{
	local id=$((INJ_ID + 1))
	INJ_ID=$((id + 1))
	frame_case rx_ooo_frames 2 TEST.rx.msgs=2 TEST.rx.bytes=50 TEST.rx_unclaimed=2 \
		link.2.out_of_order=1 \
		-- @1 --msg-id $((id + 1)) --len 20 \
		-- @0 --msg-id $id --len 30
}

# ------------------------------------------------------- NIC goes away ---

nic_gone()
{
	local rc=0 line n
	# Acknowledged before the NIC goes: none is failed by the unbind.
	ics_send "$NS_A" 1 2 TEST 5000 3 --wait >/dev/null || return 1
	ics_snap "$NS_A" "$ICS_TMP/gone0" || return 1
	ip -n "$NS_B" link del veth0 || return 1
	wait_eq 10 unbound "node 1 state after its veth was deleted" show_get "$NS_A" state || return 1
	for n in 1 2; do
		line="ics: veth0 went away; unbound node $n"
		ics_dmesg | grep -qF "$line" || fail "no kernel log line '$line'" || rc=1
	done
	in_ns "$NS_A" icstat show > "$ICS_TMP/show" 2>&1 || fail "icstat show on the unbound instance: $(cat "$ICS_TMP/show")" || rc=1
	grep -qw unbound "$ICS_TMP/show" || fail "icstat show does not say unbound" || rc=1
	ics_snap "$NS_A" "$ICS_TMP/gone1" || return 1
	# Partial messages dropped with the binding may be counted (reasm_*),
	# and so may the send session that ends with it (link_resets, one per
	# peer).
	python3 - "$ICS_TMP/gone0" "$ICS_TMP/gone1" <<'EOF' || rc=1
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
errs = []
if a["chan"]["channels"] != b["chan"]["channels"]:
    errs.append("channel counters changed when the NIC went away")
for k, v in a["show"]["stats"].items():
    w = b["show"]["stats"].get(k)
    if k.startswith("reasm_") and w is not None and w >= v:
        if w != v:
            print("# %s %d -> %d (partial messages dropped with the binding)" % (k, v, w))
        continue
    if k == "link_resets" and w is not None and v <= w <= v + 1:
        if w != v:
            print("# %s %d -> %d (the send session to node 2 ended)" % (k, v, w))
        continue
    if w != v:
        errs.append("stats %s %s -> %s" % (k, v, w))
na = {n["node_id"]: n for n in a["nodes"]["nodes"]}
nb = {n["node_id"]: n for n in b["nodes"]["nodes"]}
for i, n in na.items():
    for k in ("tx_msgs", "tx_bytes", "rx_msgs", "rx_bytes"):
        if i not in nb or nb[i][k] != n[k]:
            errs.append("node %d %s %s -> %s" % (i, k, n[k], nb.get(i, {}).get(k)))
if a["chan"]["channels"][14]["tx"]["msgs"] < 3:
    errs.append("TEST tx msgs %d before, want >= 3" % a["chan"]["channels"][14]["tx"]["msgs"])
for e in errs[:30]:
    print("# FAIL: " + e)
sys.exit(1 if errs else 0)
EOF
	return $rc
}

send_after_gone()
{
	expect_err 1 'icsctl: send: Transport endpoint is not connected(: .*)?' \
		in_ns "$NS_A" icsctl send node 2 channel TEST size 10 count 1
}

# The control case's frame, but made for an earlier binding of node 1
# (dst_inc its incarnation - 1), or for none (dst_inc 0): each counted
# rx_bad_session once, nothing delivered, no sequence number used up. And
# a heartbeat broadcast with a dst_inc (a broadcast carries 0): the same.
stale_binding()
{
	frame_case rx_bad_session 0 -- --len 64 --dst-inc $(((INC_A - 1) & 0xffffffff)) &&
	frame_case rx_bad_session 0 -- --len 64 --dst-inc 0 &&
	frame_case rx_bad_session 0 -- --hello --dst-node 0 -d ff:ff:ff:ff:ff:ff --dst-inc "$INC_A"
}

rebind()
{
	local before
	before=$(chan_get "$NS_A" TEST tx msgs)
	veth_add "$NS_A" veth1 $MAC_A "$NS_B" veth1 $MAC_B || return 1
	ics_bind "$NS_A" veth1 1 && ics_bind "$NS_B" veth1 2 || return 1
	wait_reachable "$NS_A" 2 || return 1
	assert_eq "state" bound "$(show_get "$NS_A" state)" || return 1
	assert_eq "TEST tx msgs kept across unbind and bind" "$before" "$(chan_get "$NS_A" TEST tx msgs)" || return 1
	ics_send "$NS_A" 1 2 TEST 10 1
}

# ----------------------------------------------------------------- plan --

F=frame_case
case_add "icstat without the module: one line, exit 1" no_module_icstat
case_add "icsctl without the module: one line, exit 1" no_module_icsctl
step_add init_veth
case_add "insmod ifname=nope0 node_id=1: ENODEV and the log line" insmod_nodev
case_add "insmod node_id=0 and node_id=65: EINVAL" insmod_node_range
case_add "insmod ifname without node_id and node_id without ifname: EINVAL" insmod_half
case_add "insmod heartbeat_ms=9, =3600001, heartbeat_misses=0, =101, votes=2, expected_votes=65: EINVAL" \
	insmod_membership_range
case_add "insmod handler_wait_ms=600001: EINVAL and the log line" insmod_wait_range
step_add setup
case_add "icstat in a netns never bound: one line, exit 1" unused_netns
case_add "bind to an unknown device: ENODEV" bind_nodev
step_add pair_bind
case_add "bind an already bound instance: EBUSY" bind_twice
case_add "send to a node never heard from: EHOSTUNREACH" send_unreach
case_add "send 16 MiB + 1: EMSGSIZE, nothing sent" send_too_big
case_add "send to our own node id: EINVAL" send_self
case_add "send from an unbound instance: ENOTCONN" send_unbound
case_add "unknown channel name: usage error listing the valid names, exit 2" unknown_channel
case_add "bind as uid 65534: EPERM with the CAP_NET_ADMIN hint" nobody_bind
case_add "icstat with several commands: each report as its own call prints it; usage errors" \
	icstat_commands
step_add impersonate
case_add "control: a valid injected frame is delivered" \
	$F none 1 TEST.rx.msgs=1 TEST.rx.bytes=64 TEST.rx_unclaimed=1 -- --len 64
case_add "rx_bad_session: a unicast frame for an earlier binding is dropped (dst_inc - 1, 0)" \
	stale_binding
case_add "control: two fragments in reverse order are reassembled once" two_frags_reversed
case_add "frame to another node's MAC: ignored, no counter moves" \
	$F none 0 -- -d $MAC_X --len 10
case_add "rx_bad_len: frame of 20 bytes, shorter than the header" \
	$F rx_bad_len 0 -- --len 100 --truncate 20
case_add "rx_bad_len: frame one byte shorter than the header" \
	$F rx_bad_len 0 -- --len 0 --truncate $((HDR - 1))
case_add "rx_bad_len: frag_len beyond the end of the frame" \
	$F rx_bad_len 0 -- --len 100 --frag-len 200 --msg-len 300
case_add "rx_bad_len: msg_len 16 MiB + 1" \
	$F rx_bad_len 0 -- --len 100 --msg-len 16777217
case_add "rx_bad_version: version 1 (the 36-byte header of wire v1)" $F rx_bad_version 0 -- --version 1 --len 10
case_add "rx_bad_version: version 2 (wire v2, before membership)" $F rx_bad_version 0 -- --version 2 --len 10
case_add "rx_bad_version: version 3 (wire v3, before bundles)" $F rx_bad_version 0 -- --version 3 --len 10
case_add "rx_bad_version: version 4 (wire v4, before flow control)" $F rx_bad_version 0 -- --version 4 --len 10
case_add "rx_bad_version: version 5 (wire v5, before held messages)" $F rx_bad_version 0 -- --version 5 --len 10
case_add "rx_bad_version: version 6 (wire v6, before the test flags left the frame)" \
	$F rx_bad_version 0 -- --version 6 --len 10
case_add "rx_bad_version: version 7 (wire v7, before authentication)" \
	$F rx_bad_version 0 -- --version 7 --len 10
case_add "rx_bad_version: version 9" $F rx_bad_version 0 -- --version 9 --len 10
case_add "rx_bad_version: version 0" $F rx_bad_version 0 -- --version 0 --len 10
case_add "rx_bad_cluster: cluster id 7" $F rx_bad_cluster 0 -- --cluster 7 --len 10
case_add "rx_bad_node: src_node 0" $F rx_bad_node 0 -- --src-node 0 --len 10
case_add "rx_bad_node: src_node 65" $F rx_bad_node 0 -- --src-node 65 --len 10
case_add "rx_bad_node: dst_node 3 (not us, not broadcast)" $F rx_bad_node 0 -- --dst-node 3 --len 10
case_add "rx_bad_channel: channel 16" $F rx_bad_channel 0 -- --channel 16 --len 10
case_add "rx_bad_channel: channel 255" $F rx_bad_channel 0 -- --channel 255 --len 10
case_add "rx_bad_type: type 0" $F rx_bad_type 0 -- --type 0 --len 10
case_add "rx_bad_type: type 5" $F rx_bad_type 0 -- --type 5 --len 10
case_add "rx_bad_type: type 255" $F rx_bad_type 0 -- --type 255 --len 10
case_add "rx_bad_type: a flag on a RESET frame (flags are for data frames)" \
	$F rx_bad_type 0 -- --type 4 --flags 0x80
# The flags of ics.ko's own test service, gone with it: unknown now.
case_add "rx_bad_type: a data frame with flag 0x01 (TESTPAT once)" $F rx_bad_type 0 -- --flags 0x01 --len 64
case_add "rx_bad_type: a data frame with flag 0x02 (PING once)" $F rx_bad_type 0 -- --flags 0x02 --len 64
case_add "rx_bad_type: a data frame with flag 0x04 (PONG once)" $F rx_bad_type 0 -- --flags 0x04 --len 64
case_add "rx_bad_type: a data frame with flag 0x10 (ECHO once)" $F rx_bad_type 0 -- --flags 0x10 --len 64
case_add "rx_bad_type: a data frame with flag 0x20 (ECHO_LEN once)" \
	$F rx_bad_type 0 -- --flags 0x20 --len 64
case_add "rx_bad_type: a data frame with flag 0x40 (SINK once)" $F rx_bad_type 0 -- --flags 0x40 --len 64
case_add "a bundle of two empty messages delivers both (rx_bundles)" \
	bundle_case rx_bundles 1 TEST.rx.msgs=2 TEST.rx_unclaimed=2 -- --flags 0x80 --len 8 --byte 0
case_add "rx_bad_frag: a bundle of one message" \
	bundle_case rx_bad_frag 0 -- --flags 0x80 --len 4 --byte 0
case_add "rx_bad_frag: a bundle whose records do not tile its payload" \
	bundle_case rx_bad_frag 0 -- --flags 0x80 --len 10 --byte 0
case_add "rx_bad_frag: a bundle record running past the payload" \
	bundle_case rx_bad_frag 0 -- --flags 0x80 --len 10
case_add "rx_bad_frag: a bundle at frag_off 8 of 16" \
	bundle_case rx_bad_frag 0 -- --flags 0x80 --len 8 --byte 0 --msg-len 16 --frag-off 8
# Two empty messages, as above, but for one byte of one record: its flags
# byte (messages carry no flags), or its reserved byte.
case_add "rx_bad_frag: a bundle record whose flags byte is not 0" \
	bundle_case rx_bad_frag 0 -- --flags 0x80 --len 8 --byte 0 --payload 0000000000000100
case_add "rx_bad_frag: a bundle record whose reserved byte is not 0" \
	bundle_case rx_bad_frag 0 -- --flags 0x80 --len 8 --byte 0 --payload 0000000100000000
case_add "rx_bad_frag: frag_off + frag_len > msg_len" \
	$F rx_bad_frag 0 -- --len 100 --msg-len 150 --frag-off 100
case_add "rx_bad_frag: frag_off near 2^32 (no u32 wrap-around)" \
	$F rx_bad_frag 0 -- --len 512 --msg-len 1000 --frag-off 0xffffff00
case_add "rx_bad_frag: frag_len 0 with msg_len 100" \
	$F rx_bad_frag 0 -- --len 0 --msg-len 100
case_add "rx_bad_frag: a first fragment of 100 bytes (every fragment but the last carries 528)" \
	$F rx_bad_frag 0 -- --len 100 --msg-len 1000 --frag-off 0
case_add "rx_bad_frag: second fragment disagrees on msg_len" \
	held_then rx_bad_frag --msg-len 4000 --frag-off 1000 --len 1000
case_add "fragments that differ in ACKREQ, a frame's own flag: the message is reassembled once" \
	frags_ackreq
case_add "rx_bad_type: a second fragment with flag 0x01 (TESTPAT once), the first held" \
	frag_then_flag
case_add "rx_dup_frag: the same fragment twice" \
	held_then rx_dup_frag --msg-len 3000 --frag-off 0 --len 1000
case_add "rx_dup_frag: fragment overlapping a held one" \
	held_then rx_dup_frag --msg-len 3000 --frag-off 500 --len 1000
case_add "rx_node_conflict: a data frame claiming our own node id" \
	$F rx_node_conflict 0 -- --src-node 1 --len 10
case_add "rx_node_conflict: a hello from another MAC claiming node 2" \
	$F rx_node_conflict 0 -- --hello -s $MAC_X --dst-node 0 --dst-inc 0 -d ff:ff:ff:ff:ff:ff
# The member's own address is also its receive-path markers' (design.rst):
# a frame from it that is no marker of ours takes the usual path; a clone
# of the member (same address, same node id) is a conflict.
case_add "rx_node_conflict: a data frame from the member's own address and node id" \
	$F rx_node_conflict 0 -- -s $MAC_A --src-node 1 --len 10
case_add "rx_bad_len: a marker-sized frame from the member's own address, wrong cookie" \
	$F rx_bad_len 0 -- -s $MAC_A --truncate 16
case_add "rx_bad_check: a data frame whose CRC32C is off by one bit, nothing else counted" \
	$F rx_bad_check 0 link.2.crc_errors=1 -- --len 64 --bad-check
case_add "rx_bad_check: check 0 (a sender that leaves it out)" \
	$F rx_bad_check 0 link.2.crc_errors=1 -- --len 64 --check 0
case_add "rx_bad_check: one payload bit flipped on the wire" \
	$F rx_bad_check 0 link.2.crc_errors=1 -- --len 64 --flip $((HDR + 12))
case_add "rx_bad_check: dst_node bit flipped on the wire: the CRC is checked before any field" \
	$F rx_bad_check 0 link.2.crc_errors=1 -- --len 64 --flip 9
case_add "rx_bad_check: the last payload byte is covered" \
	$F rx_bad_check 0 link.2.crc_errors=1 -- --len 1400 --flip $((HDR + 1399))
case_add "rx_dup_frames: the same data frame twice is delivered once" \
	$F rx_dup_frames 1 TEST.rx.msgs=1 TEST.rx.bytes=30 TEST.rx_unclaimed=1 link.2.duplicates=1 \
	-- --len 30 --count 2
case_add "rx_ooo_frames: a frame ahead of a gap is held, then both are delivered" ooo_pair
case_add "rx_over_window: a frame far beyond the receive window is dropped" \
	$F rx_over_window 0 -- @100000 --len 10
case_add "rx_bad_session: a data frame with seq 0" $F rx_bad_session 0 -- --seq 0 --len 10
case_add "rx_bad_session: a data frame with session 0" $F rx_bad_session 0 -- --sess 0 --len 10
case_add "rx_bad_session: a newer session seen past its start is refused with a RESET" \
	$F rx_bad_session+tx_resets 0 -- --sess $((INJ_SESS + 1)) --seq 1000 --len 10
case_add "rx_dup_frames: a frame of an older session is a stale duplicate" \
	$F rx_dup_frames 0 link.2.duplicates=1 -- --sess $((INJ_SESS - 1)) --seq 5 --len 10
case_add "rx_bad_hello: a heartbeat with an unknown flag" \
	$F rx_bad_hello 0 -- --hello --hello-flags 0x80
case_add "rx_bad_hello: a heartbeat with 2 votes" $F rx_bad_hello 0 -- --hello --hello-votes 2
case_add "rx_bad_hello: a heartbeat with an interval of 5 ms" $F rx_bad_hello 0 -- --hello --hello-ms 5
case_add "a stray heartbeat of a new node listing us: no member, no vote, one challenge" stray_new_node
case_add "a new node that answers the challenge joins" answered_new_node
case_add "a stray heartbeat with a newer incarnation: no restart, the link goes on" stray_restart
case_add "a heartbeat numbered 2 is taken" \
	$F none 1 seqs=0 CNX.rx.msgs=1 CNX.rx.bytes=$ICS_HELLO_LEN -- --hello --hello-seq 2
case_add "rx_bad_hello: a leaving heartbeat numbered 1, after 2: node 2 stays" \
	$F rx_bad_hello 0 -- --hello --hello-seq 1 --hello-flags 2
case_add "rx_bad_hello: a leaving heartbeat numbered 10^6, far ahead: node 2 stays" \
	$F rx_bad_hello 0 -- --hello --hello-seq 1000000 --hello-flags 2
case_add "a node id flapping between two MACs: only an answered claim moves it, logged once" mac_flap
case_add "a forged session ahead of the sender's holds its link for a second, not for ever" \
	session_resync
case_add "a node that left: its data frames dropped (rx_peer_down), then it rejoins" node2_back
case_add "a node announcing a 1-hour interval is still declared down within 4 of ours per miss" \
	long_interval
case_add "NIC deleted under bound instances: log line, state unbound, counters survive" nic_gone
case_add "send after the NIC went away: ENOTCONN" send_after_gone
case_add "bind again after the NIC went away: bound, counters kept" rebind
case_once "teardown: netns deleted, module removed, kernel log clean" ics_teardown_check
cases_run
