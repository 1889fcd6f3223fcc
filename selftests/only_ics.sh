#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# only_ics.sh - with ics.ko alone, nothing a remote node sends makes a
# member send more than acknowledgements, heartbeats and resets: every
# frame type (0..5, 255) with every flags value (0..255), the former test
# flags among them, draws no data frame, no more frames and bytes than it
# came in, and the link takes each valid message once. The same with the
# test service loaded but attached nowhere; attached to TEST, it answers
# an ECHO there (so the capture does see data frames when there are some).
#
#   netns ics$$-a                         netns ics$$-b
#   +-------------------------+           +-------------------------+
#   | ics node 1              |           | no ics instance bound:  |
#   | veth0 02:00:00:00:00:01 +---veth----+ ics_only.py plays node 2|
#   +-------------------------+           | and captures what comes |
#                                         +-------------------------+

ICS_WITH_TEST=0		# ics.ko alone until a case loads the test service
. "$(dirname "$0")/lib.sh"

ONLY=$ICS_SRC_DIR/ics_only.py
INC=0x1c5c0de5		# ics_inject's incarnation, which the sweep also uses
SEQ=1			# next number of the sweep's send session

ics_init ics_inject

setup()
{
	ics_load heartbeat_ms=$ICS_HB_LONG && pair_add && node2_join
}

# node 1 bound, and ics_inject admitted as node 2
node2_join()
{
	local h
	ics_bind "$NS_A" veth0 1 || return 1
	INC_A=$(ics_incarnation "$NS_A") || return 1
	# node 2 is ics_inject, answering node 1's challenge (design.rst, Admission)
	h=$(stat_get "$NS_A" hello_rx)
	in_ns "$NS_B" "$ICS_INJECT" -i veth0 -d $MAC_A --src-node 2 --dst-node 1 \
		--dst-inc "$INC_A" --hello --answer || return 1
	wait_eq 10 $((h + 1)) "node 1 hello_rx after node 2's heartbeats" stat_get "$NS_A" hello_rx ||
		return 1
	wait_reachable "$NS_A" 2
}

# only_run CMD: ics_only.py CMD as node 2, its JSON in $ICS_TMP/CMD.json;
# the next frames are numbered after its last.
only_run()
{
	local out=$ICS_TMP/$1.json
	in_ns "$NS_B" python3 "$ONLY" "$1" veth0 $MAC_A 2 1 $INC "$INC_A" $SEQ > "$out" ||
		{ fail "ics_only.py $1: $(cat "$out")"; return 1; }
	info "$1: $(cat "$out")"
	SEQ=$(jget 'j["next_seq"]' < "$out")
}

# Every frame the NIC took is counted: accepted (rx_frames), or under a
# counter that says why not.
RX_KEYS="rx_frames rx_bad_len rx_bad_version rx_bad_cluster rx_bad_node rx_bad_channel rx_bad_type rx_bad_frag rx_dup_frag rx_node_conflict rx_bad_check rx_bad_hello rx_peer_down rx_bad_session rx_dup_frames rx_ooo_frames rx_over_window rx_unconfirmed reasm_nomem reasm_overrun rx_auth_bad rx_no_key rx_replay"

rx_sum()	# NS
{
	in_ns "$1" icstat -j show | python3 -c '
import json, sys
s = json.load(sys.stdin)["stats"]
print(sum(s[k] for k in sys.argv[1].split()))' "$RX_KEYS"
}

# sweep_only_acks: the sweep draws only ACK (3), HELLO (2) and RESET (4)
# frames, no more frames or bytes than it sent; node 1 counted every frame,
# took each of the sweep's 256 messages once (unclaimed: no handler on
# TEST) and still has node 2 as a member.
sweep_only_acks()
{
	local out=$ICS_TMP/sweep.json rx0 un0 r
	rx0=$(rx_sum "$NS_A")
	un0=$(chan_get "$NS_A" TEST rx_unclaimed)
	only_run sweep || return 1
	r=$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
bad = {t: n for t, n in j["back"].items() if t not in ("2", "3", "4")}
if bad:
    print("node 1 sent frames of type %s (2 HELLO, 3 ACK, 4 RESET only)" % bad)
elif sum(j["back"].values()) > j["sent"] or j["back_bytes"] > j["sent_bytes"]:
    print("node 1 sent %d frames, %d bytes for %d frames, %d bytes"
          % (sum(j["back"].values()), j["back_bytes"], j["sent"], j["sent_bytes"]))' "$out")
	[ -z "$r" ] || { fail "$r"; return 1; }
	# 7 types x 256 flags, then the 256 data frames again with flags 0
	assert_eq "frames sent" $((8 * 256)) "$(jget 'j["sent"]' < "$out")" || return 1
	r=$(( $(rx_sum "$NS_A") - rx0 ))
	[ "$r" -ge $((8 * 256)) ] ||
		{ fail "node 1 counted $r of $((8 * 256)) frames (rx_frames and rx_bad_* ...)"; return 1; }
	wait_eq 10 $((un0 + 256)) "node 1 TEST rx_unclaimed: the sweep's messages, once each" \
		chan_get "$NS_A" TEST rx_unclaimed || return 1
	assert_eq "node 1 rx_dup_msgs" 0 "$(stat_get "$NS_A" rx_dup_msgs)" || return 1
	assert_eq "node 2 at node 1" true "$(node_get "$NS_A" 2 reachable)"
}

# dup_acks: 1000 copies of a frame node 1 took, and 1000 frames past its
# receive window, bring it nothing; they draw ACKs only at the 1st, 2nd,
# 4th... of the run and once per 100 ms (ics_oow_ack()), so fewer
# bytes than came in (the old code answered every one). A copy sent a
# second after the run still draws its ACK: a sender that lost ours is
# answered.
dup_acks()
{
	local out=$ICS_TMP/dups.json d0 w0 r
	d0=$(stat_get "$NS_A" rx_dup_frames) && w0=$(stat_get "$NS_A" rx_over_window) || return 1
	only_run dups || return 1
	assert_eq "node 1 rx_dup_frames" $((d0 + 1001)) "$(stat_get "$NS_A" rx_dup_frames)" ||
		return 1
	assert_eq "node 1 rx_over_window" $((w0 + 1000)) "$(stat_get "$NS_A" rx_over_window)" ||
		return 1
	r=$(python3 -c '
import json, math, sys
j = json.load(open(sys.argv[1]))
acks = j["back"].get("3", 0)
# powers of two up to 2000, one per 100 ms of the run, one for a run
# straddling a tick, and the copy after it
most = 11 + math.ceil(j["span"] / 0.1) + 1 + 1
if not 2 <= acks <= most:
    print("node 1 sent %d ACKs for 2001 frames that brought nothing in %.1f s: want 2..%d"
          % (acks, j["span"], most))
elif j["after"] != 1:
    print("node 1 answered the copy a second after the run with %d ACKs, want 1" % j["after"])
elif j["back_bytes"] > j["sent_bytes"]:
    print("node 1 sent %d bytes for %d" % (j["back_bytes"], j["sent_bytes"]))' "$out")
	[ -z "$r" ] || fail "$r"
}

# claim_answers: 1000 heartbeats for node 3 that ask for an answer at
# once (ICS_HF_REPLY), alternately from two MACs of nobody's, so that each
# is a new claim. Node 1 answers a claim's challenge at once only once
# per quarter interval of the node id (250 ms here), and its other
# answers at that rate too: at most one per 250 ms, not one per frame.
claim_answers()
{
	local h0 u0 t0 t1 n most
	h0=$(stat_get "$NS_A" hello_tx) && u0=$(stat_get "$NS_A" rx_unconfirmed) || return 1
	t0=$(date +%s%N)
	in_ns "$NS_B" "$ICS_INJECT" -i veth0 -d $MAC_A -s 02:00:00:00:00:34 --alt-src 02:00:00:00:00:33 \
		--src-node 3 --dst-node 1 --dst-inc "$INC_A" --hello --hello-flags 1 -c 1000 || return 1
	wait_eq 30 $((u0 + 1000)) "node 1 rx_unconfirmed: every claim taken" \
		stat_get "$NS_A" rx_unconfirmed || return 1
	t1=$(date +%s%N)
	n=$(( $(stat_get "$NS_A" hello_tx) - h0 ))
	most=$(( (t1 - t0) / 250000000 + 1 ))
	info "node 1 answered $n of 1000 claims in $(( (t1 - t0) / 1000000 )) ms"
	[ "$n" -ge 1 ] && [ "$n" -le "$most" ] ||
		fail "node 1 answered $n of 1000 claims for node 3: want 1..$most"
}

# paced_acks: with link_timeout_ms=80 a sender's retransmission timeout
# backs off to 20 ms (a quarter of it), and a sender that lost our ACK
# resends that often; answering its copies only 100 ms apart would leave
# most unanswered, on a link that fails at 80 ms without progress. The
# gap between answers to a run is then half that
# longest timeout (10 ms): copies 40 ms apart each draw an ACK (the old
# fixed 100 ms answered 16 of 40). The limit still holds: 64 more copies
# back to back draw at most the powers of two of the run among them, one
# per 10 ms of their sending, and one for a run straddling a tick.
# The module stays loaded with link_timeout_ms=80 and without ics_test:
# a case added after this one reloads it.
paced_acks()
{
	local out=$ICS_TMP/paced.json r
	ics_unload && ics_load heartbeat_ms=$ICS_HB_LONG link_timeout_ms=80 && node2_join ||
		return 1
	SEQ=1		# node 1 starts over: a session from its start
	only_run paced || return 1
	r=$(python3 -c '
import json, math, sys
j = json.load(open(sys.argv[1]))
c, b = j["copies"], j["burst"]
pow2 = sum(1 for n in range(c + 1, c + b + 1) if n & (n - 1) == 0)
most = pow2 + math.ceil(j["burst_span"] / 0.010) + 1
# a copy may reach node 1 within 10 ms of the last if the guest stalls
if c != 40 or j["sent"] != c + b:
    print("ics_only.py sent %d frames, %d copies 40 ms apart: want 40 + %d" % (j["sent"], c, b))
elif not 36 <= j["acks"] <= 40:
    print("node 1 answered %d of 40 copies 40 ms apart (link_timeout_ms=80): want 36..40"
          % j["acks"])
elif not 1 <= j["burst_acks"] <= most:
    print("node 1 answered %d of %d copies sent back to back in %.3f s: want 1..%d"
          % (j["burst_acks"], b, j["burst_span"], most))' "$out")
	[ -z "$r" ] || fail "$r"
}

# The test service loaded registers nothing until it is attached.
test_loaded_idle()
{
	ics_test_load || return 1
	sweep_only_acks
}

# Attached to TEST, it answers an ECHO: data comes back, which the capture
# sees (the sweeps above could have seen it too).
test_attached_answers()
{
	local out=$ICS_TMP/echo.json
	tsvc_attach "$NS_A" TEST || return 1
	only_run echo || return 1
	[ "$(jget 'j["back"].get("1", 0)' < "$out")" -ge 1 ] ||
		{ fail "no data frame came back for an ECHO to the attached test service"; return 1; }
	assert_eq "node 1 test service: answers on TEST" 1 \
		"$(tsvc_get "$NS_A" 'j["channels"]["TEST"]["answers"]')"
}

# overrun: nodes 2 and 3 (ics_inject) each begin a large message with a
# 9000-byte frame, which makes node 1 reserve little for it (its
# fragments times that frame's truesize), and go on with frames of
# 492 bytes, the least a fragment may carry, each in a buffer of its own
# (some 2.6 times its length). Node 2's message is 8 MiB; node 3's as
# long as node 1 admits next to it with a tenth of reasm_mem_max
# (32 MiB) to spare, as measured, and that alone would fit: together
# they would cost more than reasm_mem_max. Node 1 must keep reassembly within it: the message that
# runs past is overrun, its sender's session reset. Neither message is
# finished (their last 1000 bytes are never sent).
overrun_one()	# NODE MSG_LEN ICS_INJECT_ARGS...: frames of NODE's message
{
	local node=$1 len=$2
	shift 2
	in_ns "$NS_B" "$ICS_INJECT" -i veth0 -d $MAC_A --src-node "$node" --dst-node 1 \
		--dst-inc "$INC_A" --msg-len "$len" "$@"
}

# overrun_frames: data frames node 1 dealt with (taken, refused after a
# reset, overrun, refused for memory)
overrun_frames()
{
	in_ns "$NS_A" icstat -j show | python3 -c '
import json, sys
s = json.load(sys.stdin)["stats"]
print(s["rx_frames"] + s["rx_bad_session"] + s["reasm_overrun"] + s["reasm_nomem"])'
}

reasm_get() { in_ns "$NS_A" icstat -j show | jget "j[\"$1\"]"; }

overrun()
{
	local first=8916 len=492 big=$((8 << 20)) max=$((32 << 20)) f0 o0 r0 e m0 t l3 n2 n3 j rc=0
	ics_unload || return 1
	ip -n "$NS_A" link set veth0 mtu 9000 && ip -n "$NS_B" link set veth0 mtu 9000 || return 1
	ics_load heartbeat_ms=$ICS_HB_LONG reasm_mem_max=$max && node2_join || return 1
	in_ns "$NS_B" "$ICS_INJECT" -i veth0 -d $MAC_A --src-node 3 --dst-node 1 \
		--dst-inc "$INC_A" --hello --answer && wait_reachable "$NS_A" 3 || return 1
	f0=$(overrun_frames) && o0=$(stat_get "$NS_A" reasm_overrun) &&
		r0=$(stat_get "$NS_A" tx_resets) || return 1
	# node 2's first frame, and 1000 short ones: what node 1 reserves, and
	# what a short one costs it
	overrun_one 2 $big --len $first --seq 1 --frag-off 0 &&
		wait_eq 30 $((f0 + 1)) "node 1 took node 2's first frame" overrun_frames || return 1
	e=$(reasm_get reasm_reserved) && m0=$(reasm_get reasm_mem) || return 1
	overrun_one 2 $big --len $len --seq 2 --frag-off $first --next -c 1000 &&
		wait_eq 30 $((f0 + 1001)) "node 1 took 1000 frames of node 2's" overrun_frames ||
		return 1
	t=$(( ($(reasm_get reasm_mem) - m0) / 1000 ))
	l3=$(( (max * 9 / 10 - e) / (e / (big >> 10)) << 10 ))
	# and no more than fits alone (after node 2's overrun, it is)
	[ $l3 -le $((max * 8 / 10 / t * len)) ] || l3=$((max * 8 / 10 / t * len))
	info "node 1 reserves $e B for 8 MiB; a fragment of $len B costs it $t B; node 3's message: $l3 B"
	[ $((t * (big + l3) / len)) -gt $((max * 11 / 10)) ] ||
		{ fail "premise: the two messages would cost $((t * (big + l3) / len)) B, not over reasm_mem_max"; return 1; }
	n2=$(( (big - first - 1000 * len - 1000) / len ))
	n3=$(( (l3 - first - 1000) / len ))
	overrun_one 3 "$l3" --len $first --seq 1 --frag-off 0 &&
		wait_eq 30 $((f0 + 1002)) "node 1 took node 3's first frame" overrun_frames || return 1
	assert_eq "node 1 reasm_nomem: both admitted" 0 "$(stat_get "$NS_A" reasm_nomem)" || return 1
	overrun_one 2 $big --len $len --seq 1002 --frag-off $((first + 1000 * len)) --next -c $n2 &&
		overrun_one 3 "$l3" --len $len --seq 2 --frag-off $first --next -c $n3 || return 1
	wait_eq 60 $((f0 + 1002 + n2 + n3)) "node 1 dealt with every data frame" overrun_frames ||
		rc=1
	j=$(in_ns "$NS_A" icstat -j show) || return 1
	info "$(python3 -c '
import json, sys
j = json.loads(sys.argv[1])
print("node 1: reassembly holds %d B, reserves %d B of %d;" % (j["reasm_mem"], j["reasm_reserved"],
      j["reasm_mem_max"]), " ".join("%s %d" % (k, j["stats"][k]) for k in
      ("rx_frames", "rx_ooo_frames", "rx_over_window", "rx_bad_frag", "rx_bad_session",
       "reasm_nomem", "reasm_overrun")))' "$j")"
	python3 -c '
import json, sys
j = json.loads(sys.argv[1])
for k in ("reasm_reserved", "reasm_mem"):
    if j[k] > j["reasm_mem_max"]:
        print("# FAIL: node 1 %s %d, over reasm_mem_max %d" % (k, j[k], j["reasm_mem_max"]))
        sys.exit(1)' "$j" || rc=1
	assert_eq "node 1 reasm_overrun" $((o0 + 1)) "$(stat_get "$NS_A" reasm_overrun)" || rc=1
	[ "$(stat_get "$NS_A" tx_resets)" -gt "$r0" ] ||
		{ fail "node 1 sent the overrun message's sender no RESET"; rc=1; }
	return $rc
}

# held_bundles: node 2 (ics_inject) sends a window of bundle frames on
# TEST, 511 of 9000 bytes with 2229 empty messages each, at node 1's
# reader there, which has a 4 KiB buffer and reads nothing; then a
# message on DLM, whose reader takes it. Past what the reader's buffer
# took, the rest of each bundle waits as its frame, charged its size or
# truesize: a window of them is within what a channel may hold, so no
# frame is refused for that bound (rx_held_full) and the DLM message
# behind them is read. An skb per empty message, charged 64 bytes each,
# would pass the bound at the 150th frame (and take some 250 MiB).
held_bundles()
{
	local d=$ICS_TMP/bundles dev="python3 $ICS_SRC_DIR/ics_dev.py" full0 held0 slow fast ch
	local rc=0
	rm -rf "$d" && mkdir "$d" || return 1
	ics_unload || return 1
	ip -n "$NS_A" link set veth0 mtu 9000 && ip -n "$NS_B" link set veth0 mtu 9000 || return 1
	ics_load heartbeat_ms=$ICS_HB_LONG && node2_join || return 1
	in_ns "$NS_A" $dev sink "$(ch_id TEST)" 4096 "$d/mark.TEST" "$d/go.TEST" &
	slow=$!
	echo 1 > "$d/go.DLM"
	in_ns "$NS_A" $dev sink "$(ch_id DLM)" 65536 "$d/mark.DLM" "$d/go.DLM" &
	fast=$!
	for ch in TEST DLM; do
		wait_file 30 "$ch reader bound" "$d/mark.$ch" || { bg_stop $slow $fast; return 1; }
	done
	full0=$(stat_get "$NS_A" rx_held_full) && held0=$(stat_get "$NS_A" rx_held) || return 1
	in_ns "$NS_B" "$ICS_INJECT" -i veth0 -d $MAC_A --src-node 2 --dst-node 1 \
		--dst-inc "$INC_A" --sess 0x1c5c0002 --flags 0x80 --channel "$(ch_id TEST)" \
		--len 8916 --byte 0 --msg-len 8916 --msg-id 1 --seq 1 --next --msg-step 2229 \
		-c 511 &&
		in_ns "$NS_B" "$ICS_INJECT" -i veth0 -d $MAC_A --src-node 2 --dst-node 1 \
			--dst-inc "$INC_A" --sess 0x1c5c0002 --channel "$(ch_id DLM)" --len 8 \
			--msg-len 8 --msg-id 1 --seq 512 || rc=1
	wait $fast || { fail "node 1's DLM reader did not read the message behind the bundles"; rc=1; }
	info "node 1: rx_held +$(($(stat_get "$NS_A" rx_held) - held0))," \
		"rx_held_full +$(($(stat_get "$NS_A" rx_held_full) - full0)), rx_bundles" \
		"$(stat_get "$NS_A" rx_bundles), rx_ooo_frames $(stat_get "$NS_A" rx_ooo_frames)"
	[ $(($(stat_get "$NS_A" rx_held) - held0)) -gt 100000 ] ||
		{ fail "premise: node 1's TEST reader refused too few messages"; rc=1; }
	assert_eq "node 1 rx_held_full" "$full0" "$(stat_get "$NS_A" rx_held_full)" || rc=1
	bg_stop $slow
	return $rc
}

step_add setup
case_add "ics.ko alone: every frame type and flags value draws only ACK, HELLO, RESET" \
	sweep_only_acks
case_add "duplicates and frames past the window: ACKs at the 1st, 2nd, 4th... and 10/s, fewer bytes" \
	dup_acks
case_add "a claim per frame for one node id: its challenges answered at most once per 250 ms" \
	claim_answers
case_add "ics_test loaded, attached nowhere: the same" test_loaded_idle
case_add "ics_test attached to TEST: it answers an ECHO with data" test_attached_answers
case_add "link_timeout_ms=80: copies 40 ms apart each draw an ACK, back to back few do" paced_acks
case_add "fragments that cost more than their first: reassembly stays within reasm_mem_max" overrun
case_add "a window of bundles of empty messages for a stopped reader: held as frames, DLM flows" \
	held_bundles
case_once "teardown: netns, module, kernel log" ics_teardown_check
cases_run
