#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fuzz.sh - a live member under mutated copies of real traffic.
#
#   m1 (node 1, the target)  m2 (node 2)  m3 (node 3)  m4 (ics_fuzz)
#          \                     |             |             /
#           +------------------ br0 (p4 learns no MAC) -----+
#
# ics_fuzz captures what m1's NIC sends and receives while the three
# members exchange messages of many sizes on several channels (heartbeats,
# data fragments, bundles, acknowledgements), then sends ICS_FUZZ_FRAMES
# (default 10^6) mutated copies at node 1: bits flipped, bytes set, header fields set to
# boundary values, frames cut short, other source MACs; the CRC32C (which
# covers the source MAC) recomputed for 63 frames in 64, so most reach the
# checks after it.
# Port p4 learns no MAC: frames claiming the members' MACs do not steer
# the bridge (what they do to ics is the point); p1 floods no unknown
# unicast, so node 1's NIC receives only frames for node 1.
#
# Before that, a forged pause word (an ACK from node 2's MAC, a
# generation ahead of node 2's) holds node 1's channel for about a second.
#
# Then random generic netlink messages for every command of ics's family
# and of the test service's (ics_test.ko: its generator, attach, reset), as
# nobody in node 1's netns and as root in a netns of its own
# (ICS_FUZZ_CALLS each, default 2000), and random /dev/ics calls by nobody
# (a user_gid member) in node 1's netns.
#
# The test service is attached to every channel on nodes 2 and 3 (the
# /dev/ics calls' writes reach it there) and to every one but TEST on node
# 1, whose TEST the /dev/ics calls bind.
#
# Then: node 1 still sees exactly nodes 2 and 3 as members (no phantom
# node, expected votes 3, quorum), every pair carries messages (what each
# receiver took is reported), every frame node 1's NIC took (IPv6 is off: all
# are ics frames) is counted by one of its receive counters (the table of
# them is printed), and the kernel log is clean (teardown).

. "$(dirname "$0")/lib.sh"

FRAMES=${ICS_FUZZ_FRAMES:-1000000}
SEED=${ICS_FUZZ_SEED:-1}
CALLS=${ICS_FUZZ_CALLS:-2000}
NS_FZ=$ICS_PFX-fz
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
# Every counter a frame node 1 received can end in (a frame may count in
# two: held out of order, then taken).
RX_KEYS="rx_frames rx_bad_len rx_bad_version rx_bad_cluster rx_bad_node rx_bad_channel
rx_bad_type rx_bad_frag rx_dup_frag rx_node_conflict rx_bad_check rx_bad_session
rx_dup_frames rx_ooo_frames rx_over_window rx_peer_down rx_bad_hello rx_unconfirmed
rx_held_full reasm_nomem reasm_overrun rx_auth_bad rx_no_key rx_replay"

ics_init ics_fuzz ics_inject bridge timeout setpriv

setup()
{
	local n
	ics_load user_gid=65534 && bridge_add 4 || return 1
	bridge -n "$NS_BR" link set dev p4 learning off || return 1
	# m1 gets what is addressed to it and broadcasts, not the others'
	# answers to unknown MACs (what NIC counters would count, not ics)
	bridge -n "$NS_BR" link set dev p1 flood off || return 1
	# no IPv6 chatter (router/neighbour solicitations) in the counts;
	# a kernel built without IPv6 has none to turn off
	for n in 1 2 3 4; do
		[ -d /proc/sys/net/ipv6 ] || break
		ip netns exec "${ICS_MEMBER_NS[n]}" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.eth0.disable_ipv6=1 || return 1
	done
	ns_add "$NS_FZ" &&
		veth_add "$NS_FZ" v0 02:00:00:00:02:01 "$NS_FZ" v1 02:00:00:00:02:02 1500 || return 1
	NS=("${ICS_MEMBER_NS[@]}")	# index = node id
}

# Node 1's test service off TEST, for the /dev/ics calls (bridge_bind
# attached it everywhere).
M1_ATTACH=()
for _c in "${ICS_CHANNELS[@]}"; do
	[ "$_c" = TEST ] || M1_ATTACH+=("$_c")
done
unset _c

# A frame from node 2's MAC, of its incarnation, carrying a pause word a
# hundred generations ahead of node 2's with CFS paused, as a corrupted
# ACK can: node 1 holds CFS for node 2 (tx_pauses + 1) until nothing but
# node 2's own, older words came for a second (its heartbeats carry them),
# then takes them again and the messages go.
forged_pause()
{
	local inc inc1 p0
	inc=$(icstat_get "${NS[1]}" members 'next(m for m in j["members"] if m["node"] == 2)' \
		incarnation)
	inc1=$(ics_incarnation "${NS[1]}") || return 1
	p0=$(stat_get "${NS[1]}" tx_pauses)
	in_ns "${NS[4]}" "$ICS_INJECT" -i eth0 -s 02:00:00:00:00:02 -d 02:00:00:00:00:01 \
		--src-node 2 --dst-node 1 --dst-inc "$inc1" --ack-frame --incarnation "$inc" \
		--paused 8 --pause-gen 100 || return 1
	send_wait_ok "${NS[1]}" 2 CFS 100 5 || return 1
	assert_eq "node 1: tx_pauses" $((p0 + 1)) "$(stat_get "${NS[1]}" tx_pauses)" &&
	assert_eq "node 1: channels node 2 paused" 0 "$(link_get "${NS[1]}" 2 peer_paused)"
}

# Traffic among the three while m1's NIC is captured (3000 frames, or
# what came in 60 s).
capture()
{
	local pid n s rc=0
	in_ns "${NS[1]}" "$ICS_FUZZ" capture -i eth0 -o "$ICS_TMP/capture" -n 3000 -t 60 \
		> "$ICS_TMP/capture.out" 2>&1 &
	pid=$!
	sleep 0.5
	while [ $rc = 0 ] && kill -0 $pid 2>/dev/null; do
		for s in 0 1 100 1400 1500 3000 9000 70000; do
			for n in 2 3; do
				send_wait_ok "${NS[$n]}" 1 CFS $s 5 && send_wait_ok "${NS[1]}" $n DLM $s 5 ||
					{ rc=1; break 2; }
			done
		done
		[ $rc = 0 ] && { send_wait_ok "${NS[2]}" 1 TEST 100 200 || rc=1; }
	done
	wait $pid || { fail "ics_fuzz capture: $(cat "$ICS_TMP/capture.out")"; return 1; }
	info "$(cat "$ICS_TMP/capture.out")"
	return $rc
}

# nic_rx NS: frames NS's eth0 received
nic_rx() { ip -n "$1" -s -j link show dev eth0 | jget 'j[0]["stats64"]["rx"]["packets"]'; }

# Every frame node 1's NIC received meanwhile (all ics frames: the fuzzer's
# and the other members' heartbeats and answers) is counted at least once
# by one of node 1's receive counters (twice if held out of order and then
# taken).
fuzz()
{
	local r0 r1 start deadline rc
	in_ns "${NS[1]}" icstat -j show > "$ICS_TMP/before" || return 1
	r0=$(nic_rx "${NS[1]}")
	start=$SECONDS
	timeout $((900 * ICS_SCALE)) nsenter --net="$ICS_NETNS_DIR/${NS[4]}" "$ICS_FUZZ" send \
		-i eth0 -f "$ICS_TMP/capture" -d 02:00:00:00:00:01 -n "$FRAMES" -s "$SEED" \
		> "$ICS_TMP/fuzz.out" 2>&1 || { fail "ics_fuzz send: $(cat "$ICS_TMP/fuzz.out")"; return 1; }
	info "$(cat "$ICS_TMP/fuzz.out") in $((SECONDS - start)) s"
	# The last frames may still be on their way through the bridge: until
	# every frame the NIC received is counted, or 30 s.
	deadline=$(ics_deadline 30)
	while :; do
		r1=$(nic_rx "${NS[1]}")
		in_ns "${NS[1]}" icstat -j show > "$ICS_TMP/after" || return 1
		python3 - "$ICS_TMP/before" "$ICS_TMP/after" "$FRAMES" $((r1 - r0)) \
			$([ $SECONDS -lt "$deadline" ] || echo last) $RX_KEYS <<'EOF'
import json, sys
a, b = (json.load(open(f))["stats"] for f in sys.argv[1:3])
sent, nic, last = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "last"
keys = sys.argv[6 if last else 5:]
total = sum(b[k] - a[k] for k in keys)
if total < nic and not last:
    sys.exit(2)
for k in keys:
    if b[k] - a[k]:
        print("#   %-18s %9d" % (k, b[k] - a[k]))
print("#   %-18s %9d (sent %d; node 1's NIC received %d)" % ("counted", total, sent, nic))
if nic < sent:
    print("# FAIL: node 1's NIC received %d of %d frames sent" % (nic, sent))
    sys.exit(1)
if total < nic:
    print("# FAIL: %d frames reached node 1 and %d were counted" % (nic, total))
    sys.exit(1)
EOF
		rc=$?
		[ $rc = 2 ] || return $rc
		sleep 0.5
	done
}

# fuzz_py NS WHO KIND: ics_fuzz.py KIND as WHO (root, nobody) in NS
fuzz_py()
{
	local ns=$1 who=$2 kind=$3 out pre=()
	[ "$who" = nobody ] && pre=("${NOBODY[@]}")
	out=$(timeout $((120 * ICS_SCALE)) nsenter --net="$ICS_NETNS_DIR/$ns" "${pre[@]}" \
		python3 "$ICS_SRC_DIR/ics_fuzz.py" "$kind" "$CALLS" "$SEED" 2>&1) ||
		{ fail "ics_fuzz.py $kind as $who: $out"; return 1; }
	info "$who: $out"
}

# After the storm: node 1's view is nodes 1-3, all members, with quorum.
view_after()
{
	local want="2 member;3 member;votes 3 of 3, quorum True" got deadline
	deadline=$(ics_deadline 30)
	while :; do
		got=$(in_ns "${NS[1]}" icstat -j members | jget '";".join(["%d %s" % (m["node"],
			m["state"]) for m in j["members"] if not m.get("self")] + ["votes %d of %d, quorum %s"
			% (j["current_votes"], j["expected_votes"], j["has_quorum"])])')
		[ "$got" = "$want" ] && return 0
		[ $SECONDS -lt "$deadline" ] || break
		sleep 0.2
	done
	fail "node 1's view after the fuzzing: '$got', want '$want'"
}

# Every member sends 20 messages to every other: all done, none failed
# or timed out (no link wedged). What each receiver took is reported, not
# asserted: a forged frame that passed every check and landed in sequence
# may have moved a channel's last message id ahead, and then the sender's
# next messages are taken as duplicates (rx_dup_msgs); until frames are
# authenticated (design.rst, "What a hostile node can still do").
traffic_after()
{
	local n m r0=() d0=()
	for n in 1 2 3; do
		r0[n]=$(chan_get "${NS[$n]}" CFS rx msgs)
		d0[n]=$(stat_get "${NS[$n]}" rx_dup_msgs)
	done
	for n in 1 2 3; do
		for m in 1 2 3; do
			[ $n = $m ] && continue
			send_wait_ok "${NS[$n]}" $m CFS 3000 20 && continue
			info "node $n's link to node $m: $(in_ns "${NS[$n]}" icstat -j links |
				jget 'next(l for l in j["links"] if l["node"] == '$m')')"
			return 1
		done
	done
	for n in 1 2 3; do
		info "node $n took $(($(chan_get "${NS[$n]}" CFS rx msgs) - r0[n])) of 40 CFS" \
			"messages, $(($(stat_get "${NS[$n]}" rx_dup_msgs) - d0[n])) as duplicates"
	done
}

step_add setup
step_add bridge_bind 3
step_add tsvc_attach "${ICS_PFX}-m1" "${M1_ATTACH[@]}"
case_add "a forged pause word ahead of the peer's holds a channel for a second, not for ever" \
	forged_pause
case_add "capture: members exchange messages of 0 B to 70 KB on two channels" capture
case_add "$FRAMES mutated frames at node 1: each counted by a receive counter" fuzz
case_add "$CALLS random generic netlink messages as nobody in node 1's netns" \
	fuzz_py "${ICS_PFX}-m1" nobody genl
case_add "$CALLS random generic netlink messages as root in a netns of their own" \
	fuzz_py "$NS_FZ" root genl
case_add "$CALLS random ics_test generic netlink messages as nobody in node 1's netns" \
	fuzz_py "${ICS_PFX}-m1" nobody tgenl
case_add "$CALLS random ics_test generic netlink messages as root in a netns of their own" \
	fuzz_py "$NS_FZ" root tgenl
case_add "$CALLS random /dev/ics calls as a user_gid member in node 1's netns" \
	fuzz_py "${ICS_PFX}-m1" nobody dev
case_add "node 1's view: nodes 2 and 3 members, no other node, 3 votes, quorum" view_after
case_add "every member sends to every other: all done, no link wedged" traffic_after
case_once "teardown: netns deleted, module removed, kernel log clean" ics_teardown_check
cases_run
