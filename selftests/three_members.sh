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
#   | netns ics$$-a   | | netns ics$$-b   | | netns ics$$-c   |
#   +-----------------+ +-----------------+ +-----------------+
#
# Module loaded with hello_ms=3600000 (hellos accounted on channel CNX).

. "$(dirname "$0")/lib.sh"

NS_BR=$ICS_PFX-br
NS=("" "$ICS_PFX-a" "$ICS_PFX-b" "$ICS_PFX-c")	# index = node id

ics_init
ktap_set_plan 4

setup()
{
	local n
	ics_load hello_ms=$ICS_HELLO_LONG || return 1
	ns_add "$NS_BR" || return 1
	ip -n "$NS_BR" link add br0 type bridge || return 1
	ip -n "$NS_BR" link set br0 up || return 1
	for n in 1 2 3; do
		ns_add "${NS[$n]}" || return 1
		veth_add "${NS[$n]}" eth0 02:00:00:00:00:0$n "$NS_BR" p$n 02:00:00:00:01:0$n || return 1
		ip -n "$NS_BR" link set p$n master br0 || return 1
	done
	: > "$ICS_TMP/sends"
}

bind_all()
{
	local n m
	for n in 1 2 3; do
		ics_bind "${NS[$n]}" eth0 $n || return 1
	done
	for n in 1 2 3; do
		for m in 1 2 3; do
			[ $n = $m ] && continue
			wait_reachable "${NS[$n]}" $m || return 1
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
