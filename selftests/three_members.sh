#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# three_members.sh - three cluster members on one bridge: each sends to both
# others on every channel; every message arrives at the right node, whole
# (checked by its test service, ics_test, attached to all 16 channels),
# and all channel, histogram, per-node and per-peer counters are exact.
#
#                        netns ics$$-br
#              +-----------------------------------+
#              |               br0                 |
#              |   p1           p2           p3    |
#              +---+------------+------------+-----+
#                  |            |            |
#   +--------------+--+ +-------+---------+ ++----------------+
#   | eth0 ..:00:01   | | eth0 ..:00:02   | | eth0 ..:00:03   |
#   | ics node 1      | | ics node 2      | | ics node 3      |
#   | netns ics$$-m1  | | netns ics$$-m2  | | netns ics$$-m3  |
#   +-----------------+ +-----------------+ +-----------------+
#
# Module loaded with heartbeat_ms=3600000 (hellos accounted on channel CNX).

. "$(dirname "$0")/lib.sh"

ics_init timeout

setup()
{
	ics_load heartbeat_ms=$ICS_HB_LONG && bridge_add 3 || return 1
	NS=("${ICS_MEMBER_NS[@]}")	# index = node id
}

# After bridge_bind 3 (a setup step).
bound()
{
	local n m
	for n in 1 2 3; do
		for m in 1 2 3; do
			[ $n = $m ] && continue
			assert_eq "node $n: address of node $m" 02:00:00:00:00:0$m \
				"$(node_get "${NS[$n]}" $m address)" || return 1
		done
	done
	for n in 1 2 3; do
		ics_snap "${NS[$n]}" "$ICS_TMP/base$n" || return 1
	done
	echo MARK >> "$ICS_TMP/sends"
}

check_all()
{
	local n args=()
	for n in 1 2 3; do
		args+=(--wait-rx "${NS[$n]}:$(sends_to $n):120")
	done
	for n in 1 2 3; do
		args+=("$n:${NS[$n]}:$ICS_TMP/now$n:$ICS_TMP/base$n")
	done
	ics_model check "$ICS_TMP/sends" "${args[@]}"
}

# Sizes and counts differ per (source, destination, channel), so a message
# counted at the wrong node or channel shows in the totals.
mesh()
{
	local s d c size count
	for s in 1 2 3; do
		for d in 1 2 3; do
			[ $s = $d ] && continue
			for c in "${!ICS_CHANNELS[@]}"; do
				size=$((s * 1000 + d * 100 + c * 37))
				count=$((1 + (s + d + c) % 3))
				ics_send "${NS[$s]}" $s $d "${ICS_CHANNELS[$c]}" $size $count || return 1
			done
		done
	done
	check_all
}

# All three send to both others at the same time.
concurrent()
{
	local s pids=() rc=0 p
	for s in 1 2 3; do
		(
			d1=$((s % 3 + 1)); d2=$(((s + 1) % 3 + 1))
			for i in 1 2 3 4; do
				ics_send "${NS[$s]}" $s $d1 TEST $((4000 + s)) 5 || exit 1
				ics_send "${NS[$s]}" $s $d2 DLM $((9000 + s)) 3 || exit 1
			done
		) &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || rc=1
	done
	[ $rc = 0 ] || fail "a sender failed" || return 1
	check_all
}

# A resumed channel is told to a sender that never sent to the reader:
# node 3 binds again (a new incarnation, which has sent node 2 nothing);
# node 2's TEST reader stops while node 1 floods it; node 3 learns of the
# pause from node 2's heartbeats only, and holds the message it then sends.
# All three beat every 500 ms meanwhile (a silent member with an hour's
# interval is declared down by one with a short interval, which trusts no
# interval over 4 of its own: kmod/member.c), then every hour again, node
# 2 last, so that when the reader reads, the one word node 2 can send
# node 3 is the ACK that says the channel resumed, with no session of
# node 3's to acknowledge (kmod/flow.c): node 3's message must arrive on
# it, and no heartbeat from node 2 in between. Node 2's reader and node
# 1's writer are /dev/ics files bound to TEST, so the test service leaves
# TEST to them there.
# The same traffic per peer: every member's tables of each other (icstat -N
# PEER chanhisttot, peerhisttot, nodes) are exactly what the generator
# sent each way, hellos aside.
per_peer()
{
	ics_model peers "$ICS_TMP/sends" 1:"${NS[1]}" 2:"${NS[2]}" 3:"${NS[3]}"
}

resume_unsent_run()
{
	local d=$ICS_TMP/resume bit rc=0 pids=() i hb
	local who=("node 2's reader" "node 1's writer" "node 3's sender")
	bit=$((1 << $(ch_id TEST)))
	rm -rf "$d" && mkdir "$d" || return 1
	# shellcheck disable=SC2046  # channel names
	tsvc_attach "${NS[1]}" $(no_test) && tsvc_attach "${NS[2]}" $(no_test) || return 1
	in_ns "${NS[3]}" icsctl unbind && ics_bind "${NS[3]}" eth0 3 || return 1
	ics_model reachable 30 "${NS[2]}:3" "${NS[3]}:2" "${NS[1]}:3" "${NS[3]}:1" || return 1
	in_ns "${NS[2]}" python3 "$ICS_SRC_DIR/ics_dev.py" stall 1 "$(ch_id TEST)" $((4 << 20)) \
		"$d/mark" "$d/go" &
	pids+=($!)
	wait_file 30 "node 2's reader bound" "$d/mark" || return 1
	for i in 1 3 2; do
		in_ns "${NS[i]}" icsctl set heartbeat 500 || return 1
	done
	in_ns "${NS[1]}" python3 "$ICS_SRC_DIR/ics_dev.py" flood 2 "$(ch_id TEST)" "$d/n" "$d/go" &
	pids+=($!)
	wait_file 60 "node 1's TEST queue full" "$d/n" || return 1
	wait_eq 60 $bit "node 2's paused channels, as node 3 hears them" \
		link_get "${NS[3]}" 2 peer_paused || return 1
	for i in 1 3 2; do
		in_ns "${NS[i]}" icsctl set heartbeat $ICS_HB_LONG || return 1
	done
	sleep 1.5	# the ticks the 500 ms interval set, and their heartbeats
	hb=$(stat_get "${NS[2]}" hello_tx)
	# --wait waits as long as the channel is held: bounded here
	in_ns "${NS[3]}" timeout $((90 * ICS_SCALE)) icsctl send node 2 channel TEST size 3000 \
		count 1 --wait -j > "$d/s3.json" 2> "$d/s3.json.err" &
	pids+=($!)
	wait_eq 30 1 "messages node 3 holds for node 2" link_get "${NS[3]}" 2 queued_msgs || return 1
	assert_eq "frames node 3 has in flight to node 2" 0 "$(link_get "${NS[3]}" 2 inflight)" ||
		return 1
	assert_eq "node 3's session, as node 2 knows it" 0 "$(link_get "${NS[2]}" 3 rx_session)" ||
		return 1
	assert_eq "node 3 reachable from node 2" true "$(node_get "${NS[2]}" 3 reachable)" || return 1
	echo "$(cat "$d/n") 1" > "$d/go.tmp" && mv "$d/go.tmp" "$d/go"
	for i in 0 1 2; do
		wait "${pids[i]}" || { fail "${who[i]}: exit $? (124: timed out)"; rc=1; }
	done
	if [ $rc != 0 ]; then
		# where nodes 2 and 3 stand with each other
		info "node 2: $(in_ns "${NS[2]}" icstat -j nodes links -N 3)"
		info "node 3: $(in_ns "${NS[3]}" icstat -j nodes links -N 2)"
		return 1
	fi
	assert_eq "node 3's message acknowledged" 1 "$(jget 'j["done"]' < "$d/s3.json")" || return 1
	assert_eq "heartbeats node 2 sent meanwhile" "$hb" "$(stat_get "${NS[2]}" hello_tx)"
}

# Every channel but TEST.
no_test() { printf '%s\n' "${ICS_CHANNELS[@]}" | grep -vx TEST; }

resume_unsent()
{
	local rc=0
	resume_unsent_run || rc=1
	# after a failure, no reader, writer or sender left for the teardown
	reap "ics_dev.py (stall|flood)|icsctl [s]end"
	tsvc_attach "${NS[1]}" "${ICS_CHANNELS[@]}" && tsvc_attach "${NS[2]}" "${ICS_CHANNELS[@]}" || rc=1
	return $rc
}

# icsperf on node 1 times round trips with node 2's server while node 3
# sends 50 messages to node 1 on the same channel. Those are no answers:
# each one taken for an answer would leave one of node 2's answers unread
# when icsperf closes its file (dev_close_drops). A stop signal mid-round
# trip may leave one.
perf_stray()
{
	local d=$ICS_TMP/stray srv pid rc=0 drops out
	command -v icsperf >/dev/null || { echo "# icsperf not in PATH (make -C user)"; return "$KSFT_SKIP"; }
	mkdir -p "$d"
	# shellcheck disable=SC2046  # a list of channel names
	tsvc_attach "${NS[1]}" $(no_test) && tsvc_attach "${NS[2]}" $(no_test) || return 1
	nsenter --net="$ICS_NETNS_DIR/${NS[2]}" icsperf server > "$d/server.out" 2>&1 &
	srv=$!
	ICS_BG_PIDS+=($srv)
	wait_eq 30 true "icsperf server bound to TEST on node 2" chan_get "${NS[2]}" TEST handler || rc=1
	drops=$(stat_get "${NS[1]}" dev_close_drops)
	if [ $rc = 0 ]; then
		nsenter --net="$ICS_NETNS_DIR/${NS[1]}" icsperf lat 2 -s 64 -l 600 -D 0.3 -j \
			> "$d/lat.json" 2> "$d/lat.err" &
		pid=$!
		wait_eq 60 yes "an interim line" sh -c "grep -q interim $d/lat.json && echo yes" || rc=1
		if [ $rc = 0 ]; then
			out=$(in_ns "${NS[3]}" icsctl send node 1 channel TEST size 64 count 50 --wait -j 2>&1)
			assert_eq "node 3's messages taken by node 1's reader" 50 \
				"$(echo "$out" | jget 'j["done"]')" || { info "$out"; rc=1; }
		fi
		kill -INT $pid
		wait $pid
		assert_eq "icsperf's exit after SIGINT" 130 $? || { cat "$d/lat.err"; rc=1; }
		[ "$(tail -n 1 "$d/lat.json" | jget 'j["results"][0]["msgs"] > 0')" = true ] ||
			{ fail "no round trips: $(tail -n 1 "$d/lat.json")"; rc=1; }
		drops=$(($(stat_get "${NS[1]}" dev_close_drops) - drops))
		info "answers left unread when icsperf closed: $drops"
		[ $drops -le 1 ] || fail "$drops answers left unread: stray messages taken for answers" ||
			rc=1
	fi
	kill -TERM $srv && wait $srv
	assert_eq "the server's exit on SIGTERM" 0 $? || rc=1
	tsvc_attach "${NS[1]}" "${ICS_CHANNELS[@]}" && tsvc_attach "${NS[2]}" "${ICS_CHANNELS[@]}" || rc=1
	return $rc
}

step_add setup
step_add bridge_bind 3
case_add "bind three members on a bridge, all six pairs reachable" bound
case_add "each member to both others on all 16 channels: delivery and counters exact" mesh
case_add "all three sending at once: delivery and counters exact" concurrent
case_add "per peer: each member's channels and sizes to and from each other exact" per_peer
case_add "a resumed channel: its ACK reaches a sender without a session" resume_unsent
case_add "icsperf: another node's messages on the channel are no answers" perf_stray
case_once "teardown: netns deleted, module removed, kernel log clean" ics_teardown_check
cases_run
