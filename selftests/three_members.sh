#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# three_members.sh - three cluster members on one bridge: each sends to both
# others on every channel; every message arrives at the right node, whole,
# and all channel, histogram and per-node counters are exact.
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

ics_init
ktap_set_plan 4

setup()
{
	ics_load heartbeat_ms=$ICS_HB_LONG && bridge_add 3 || return 1
	NS=("${ICS_MEMBER_NS[@]}")	# index = node id
}

bind_all()
{
	local n m
	bridge_bind 3 || return 1
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

setup || ics_bail "setup failed"
ics_case "bind three members on a bridge, all six pairs reachable" bind_all ||
	ics_bail "members cannot see each other"
ics_case "each member to both others on all 16 channels: delivery and counters exact" mesh
ics_case "all three sending at once: delivery and counters exact" concurrent
ics_case "teardown: netns deleted, module removed, kernel log clean" ics_teardown_check
ktap_finished
