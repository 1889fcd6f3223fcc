#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# api.sh - the in-kernel API (include/net/ics.h) through a real client
# module, ics_echo: it registers a handler on CLSM in every netns (through
# its own pernet ops) and sends every message it gets back to the sender on
# CFSR with ics_send() from a workqueue, pausing CLSM when it falls behind.
#
#   netns ics$$-a                          netns ics$$-b
#   +--------------------------+           +--------------------------+
#   | ics node 1   ics_echo    |           | ics node 2   ics_echo    |
#   |  CLSM handler            |           |  CLSM handler            |
#   |  veth0                   +---veth----+  veth0                   |
#   +--------------------------+           +--------------------------+
#
#   node 1 --CLSM (generator, pattern)--> node 2's handler
#   node 1 <--CFSR (ics_send, same bytes)-- node 2's echo worker
#
# The generator is the test service's (ics_test.ko, icsctl send), attached
# to no channel (ICS_ATTACH=none): CLSM is ics_echo's, and CFSR has no
# handler on node 1 but where a case binds a /dev/ics reader there.

ICS_ATTACH=none
. "$(dirname "$0")/lib.sh"

SIZES="0 1 100 1464 1465 5000 65536 1048576"

# Node 1's reader of the echoes (SRC_DIR MARK SIZES): bind CFSR, touch
# MARK, then read one message per size of SIZES, in order: each from node
# 2, of that size, byte for byte node 1's test message on CLSM (header
# and pattern, ics_testmsg.py: a DATA message, sequence numbers rising).
ECHO_READER='
import select, sys
sys.path.insert(0, sys.argv[1])
import ics_dev
import ics_testmsg as tm
CLSM, CFSR = 5, 10
fd = ics_dev.dev()
ics_dev.bind(fd, CFSR)
open(sys.argv[2], "w").close()
last = 0
for want in (int(w) for w in sys.argv[3].split()):
    if not select.select([fd], [], [], 120)[0]:
        ics_dev.fail("no echo of %d bytes within 120 s" % want)
        break
    n, node, ch, data = ics_dev.recv(fd)
    ok, op, seq, _ = tm.verify(data, 1, CLSM)
    good = (node, ch, n, len(data), ok) == (2, CFSR, want, want, True)
    if want >= tm.HDR.size:
        good = good and op == tm.OPS["data"] and seq > last
        last = seq
    if not good:
        ics_dev.fail("echo of %d bytes: %d bytes (%d read) from node %d on %d, node 1 CLSM "
                     "test message: %s, op %s, seq %d after %d" %
                     (want, n, len(data), node, ch, ok, op, seq, last))
sys.exit(1 if ics_dev.failed else 0)
'

ics_init
: "${ICS_ECHO_KO:=$(dirname "$ICS_KO")/../selftests/ics_echo/ics_echo.ko}"
[ -r "$ICS_ECHO_KO" ] || ics_skip_all "ics_echo.ko not found: $ICS_ECHO_KO (make modules)"
ktap_set_plan 9

echo_loaded() { grep -q '^ics_echo ' /proc/modules; }

# Loading the client registers its handler in every existing netns; ics
# cannot be removed while a client uses it.
register()
{
	local out
	out=$(insmod "$ICS_ECHO_KO" 2>&1) || { fail "insmod ics_echo: $out"; return 1; }
	assert_eq "CLSM handler on node 1" true "$(chan_get "$NS_A" CLSM handler)" || return 1
	assert_eq "CLSM handler on node 2" true "$(chan_get "$NS_B" CLSM handler)" || return 1
	assert_eq "CFSR handler on node 2" false "$(chan_get "$NS_B" CFSR handler)" || return 1
	if rmmod ics 2>/dev/null; then
		fail "rmmod ics succeeded while ics_echo uses it"
		return 1
	fi
	ics_loaded || fail "ics gone while ics_echo is loaded"
}

# Every message reaches the handler whole (none unclaimed) and ics_send()
# carries the same bytes back: CFSR's histograms on both ends equal
# CLSM's, and (a reader on node 1's CFSR, one message of each size) each
# echo is byte for byte the test message node 1 sent.
echo_roundtrip()
{
	local s n=0 bytes=0 mark=$ICS_TMP/reader.bound pid
	for s in $SIZES; do
		ics_send "$NS_A" 1 2 CLSM "$s" 3 || return 1
		n=$((n + 3))
		bytes=$((bytes + 3 * s))
	done
	wait_eq 120 $n "echoes received by node 1" chan_get "$NS_A" CFSR rx msgs || return 1
	assert_eq "node 2 CLSM rx msgs" $n "$(chan_get "$NS_B" CLSM rx msgs)" || return 1
	assert_eq "node 2 CLSM unclaimed (handler)" 0 "$(chan_get "$NS_B" CLSM rx_unclaimed)" || return 1
	assert_eq "node 2 CFSR tx bytes" $bytes "$(chan_get "$NS_B" CFSR tx bytes)" || return 1
	assert_eq "node 1 CFSR rx bytes" $bytes "$(chan_get "$NS_A" CFSR rx bytes)" || return 1
	assert_eq "node 2 CFSR tx hist = CLSM rx hist" \
		"$(chan_get "$NS_B" CLSM rx hist)" "$(chan_get "$NS_B" CFSR tx hist)" || return 1
	assert_eq "node 1 CFSR rx hist = CLSM tx hist" \
		"$(chan_get "$NS_A" CLSM tx hist)" "$(chan_get "$NS_A" CFSR rx hist)" || return 1
	assert_eq "node 1 CFSR unclaimed (no handler)" $n "$(chan_get "$NS_A" CFSR rx_unclaimed)" ||
		return 1
	rm -f "$mark"
	in_ns "$NS_A" python3 -c "$ECHO_READER" "$ICS_SRC_DIR" "$mark" "$SIZES" &
	pid=$!
	wait_file 30 "node 1's reader bound to CFSR" "$mark" || { kill $pid; return 1; }
	for s in $SIZES; do
		ics_send "$NS_A" 1 2 CLSM "$s" 1 || { kill $pid; return 1; }
	done
	wait $pid || { fail "node 1's reader of the echoes"; return 1; }
	assert_eq "node 1 CFSR unclaimed after the reader" $n "$(chan_get "$NS_A" CFSR rx_unclaimed)"
}

# A client that falls behind pauses its channel (ics_channel_pause()):
# with node 2's worker held, past pause_at messages queued its handler
# pauses CLSM, and asks, with the same handler, to pause CFSR, where it is
# not registered: ics ignores that. Node 1 holds the rest with nothing in
# flight; then the worker runs, every echo arrives and the pause clears.
echo_paused()
{
	local p=/sys/module/ics_echo/parameters n=400 bit rc=0 e0 s0 q
	bit=$((1 << $(ch_id CLSM)))
	e0=$(chan_get "$NS_A" CFSR rx msgs)
	s0=$(stat_get "$NS_B" rx_pauses)
	echo 32 > $p/pause_at && echo Y > $p/hold || return 1
	ics_send "$NS_A" 1 2 CLSM 1000 $n || rc=1
	wait_eq 30 $bit "channels node 2 paused, as node 1 sees it: CLSM alone" \
		link_get "$NS_A" 2 peer_paused || rc=1
	wait_eq 30 0 "frames in flight to node 2" link_get "$NS_A" 2 inflight || rc=1
	q=$(link_get "$NS_A" 2 queued_msgs)
	echo "# node 1 holds $q of $n CLSM messages"
	[ "$q" -gt 0 ] || { fail "node 1 holds nothing"; rc=1; }
	assert_eq "pauses node 2 counted" $((s0 + 1)) "$(stat_get "$NS_B" rx_pauses)" || rc=1
	echo N > $p/hold
	wait_eq 60 $((e0 + n)) "echoes received by node 1" chan_get "$NS_A" CFSR rx msgs || rc=1
	wait_eq 30 0 "channels node 2 paused" link_get "$NS_A" 2 peer_paused || rc=1
	echo 0 > $p/pause_at
	return $rc
}

# A client that refuses (rcv() returns -EAGAIN past refuse_at messages
# queued) without pausing: ics holds what it refused, pauses the channel
# for it, and once the client resumes offers it every held message, in
# order. Every message node 1 sent is echoed, once, and done for it; none
# failed, and nothing stays held.
echo_refused()
{
	local p=/sys/module/ics_echo/parameters n=300 bit rc=0 e0 h0 d0 f0
	bit=$((1 << $(ch_id CLSM)))
	e0=$(chan_get "$NS_A" CFSR rx msgs)
	h0=$(stat_get "$NS_B" rx_held)
	d0=$(link_get "$NS_A" 2 msgs_done)
	f0=$(link_get "$NS_A" 2 msgs_failed)
	echo 16 > $p/refuse_at && echo Y > $p/hold || return 1
	ics_send "$NS_A" 1 2 CLSM 1000 $n || rc=1
	wait_eq 30 $bit "channels node 2 paused, as node 1 sees it: CLSM, by ics" \
		link_get "$NS_A" 2 peer_paused || rc=1
	wait_eq 30 0 "frames in flight to node 2" link_get "$NS_A" 2 inflight || rc=1
	echo "# node 2 held $(($(stat_get "$NS_B" rx_held) - h0)) refused messages"
	[ "$(stat_get "$NS_B" rx_held)" -gt "$h0" ] || { fail "node 2 held nothing"; rc=1; }
	echo N > $p/hold
	wait_eq 60 $((e0 + n)) "echoes received by node 1" chan_get "$NS_A" CFSR rx msgs || rc=1
	wait_eq 30 $((d0 + n)) "CLSM messages done for node 1" link_get "$NS_A" 2 msgs_done || rc=1
	assert_eq "messages failed for node 1" "$f0" "$(link_get "$NS_A" 2 msgs_failed)" || rc=1
	wait_eq 30 0 "channels node 2 paused" link_get "$NS_A" 2 peer_paused || rc=1
	echo 0 > $p/refuse_at
	return $rc
}

# A netns created after the client loaded gets its handler too (registered
# at netns creation, before any bind: icstat needs a bound instance to
# report, so bind it), and one deleted under it goes cleanly (the client's
# pernet exit unregisters before ics's pernet exit).
netns_lifecycle()
{
	local ns=$ICS_PFX-c
	ns_add "$ns" || return 1
	ip -n "$ns" link add v0 type veth peer name v1 || return 1
	ip -n "$ns" link set v0 up || return 1
	ics_bind "$ns" v0 3 || return 1
	assert_eq "CLSM handler in a new netns" true "$(chan_get "$ns" CLSM handler)" || return 1
	ns_del "$ns"
}

# The membership notifier: node 2 leaves and comes back; ics_echo in node
# 1's netns logs both changes, in process context, and what
# ics_member_state() and ics_has_quorum() say as it runs (ICS_MEMBER_LEFT
# is 4, ICS_REASON_LEAVING 5, joining/member 1/2, reason heard 1 or
# restart 6, two-way 2; node 1 alone has 1 vote of 2: quorum lost).
notifier()
{
	local out
	out=$(in_ns "$NS_B" icsctl unbind 2>&1) || { fail "unbind node 2: $out"; return 1; }
	wait_eq 10 1 "ics_echo's line for node 2 leaving" \
		sh -c "dmesg | grep -c 'ics_echo: node 1 sees node 2: 2 -> 4 (reason 5), state now 4, quorum 0'" ||
		return 1
	ics_dmesg | grep -q 'ics_echo: node 1: quorum lost (1 of 2 votes, 2 needed)' ||
		{ fail "no ics_echo line for node 1 losing quorum"; return 1; }
	ics_bind "$NS_B" veth0 2 || return 1
	wait_reachable "$NS_A" 2 || return 1
	wait_eq 10 1 "ics_echo's line for node 2 back" \
		sh -c "dmesg | grep -cE 'ics_echo: node 1 sees node 2: 4 -> [12] \\(reason 6\\)'"
}

# Unregistering: after rmmod ics_echo, CLSM messages are unclaimed again
# (once handler_wait_ms is over: until then they wait for a next handler).
unregister()
{
	local before
	rmmod ics_echo || { fail "rmmod ics_echo"; return 1; }
	! echo_loaded || { fail "ics_echo still loaded"; return 1; }
	assert_eq "CLSM handler on node 2 after unregister" false \
		"$(chan_get "$NS_B" CLSM handler)" || return 1
	before=$(chan_get "$NS_B" CLSM rx_unclaimed)
	ics_send "$NS_A" 1 2 CLSM 64 5 || return 1
	wait_eq 30 $((before + 5)) "node 2 CLSM unclaimed" chan_get "$NS_B" CLSM rx_unclaimed
}

cleanup_echo() { echo_loaded && rmmod ics_echo; }
trap 'cleanup_echo; ics_cleanup' EXIT

pair_setup || ics_bail "setup failed"
ics_case "a client module registers a handler in every netns; ics is pinned" register ||
	ics_bail "client did not register"
ics_case "handler gets whole messages; ics_send() from a worker echoes the same bytes" echo_roundtrip
ics_case "a client that falls behind pauses its channel; another handler's call is ignored" echo_paused
ics_case "a client that refuses without pausing: ics holds, pauses, offers again; all done" echo_refused
ics_case "a netns created under the client gets its handler and is deleted cleanly" netns_lifecycle
ics_case "the membership notifier sees node 2 leave and come back, in order, and may query" notifier
ics_case "after unregistering, the channel's messages are counted unclaimed" unregister
ics_case "client unloaded" bash -c '! grep -q "^ics_echo " /proc/modules'
ics_case "teardown: netns deleted, module removed, kernel log clean" ics_teardown_check
ktap_finished
