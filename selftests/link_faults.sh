#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# link_faults.sh - the link under faults while `icsctl send --wait` runs:
# nothing is lost, or the sender is told; nothing hangs.
#
#                 netns ics$$-br
#            +-----------------------+
#            |         br0           |
#            |   p1 (MTU 9000)  p2   |   p2 goes down and up
#            +---+--------------+----+
#                |              |
#   +------------+----+  +------+----------+
#   | eth0 ..:00:01   |  | eth0 ..:00:02   |   MTU 1500 <-> 9000
#   | ics node 1      |  | ics node 2      |
#   | sender          |  | receiver        |
#   | netns ics$$-m1  |  | netns ics$$-m2  |
#   +-----------------+  +-----------------+
#
# Module loaded with link_timeout_ms=$LT (4 s, see LT): a link with unacknowledged
# data and no progress that long fails its messages with ETIMEDOUT; and
# link_window=32, so that the frames in flight at MTU 9000 (288 KB) drain in
# well under a second at the 8 Mbit/s node 1 sends with (netem rate on its
# eth0): the rate makes a stream last long enough for the faults to hit it
# whatever the speed of the machine.
#
# Node 2's test service (ics_test) checks and counts what node 1's
# generator sends. Cases, each while node 1 sends to node 2:
#   - MTU 1500 -> 9000 -> 1500 on both ends: every message delivered once,
#     in order (the test service's hashes equal), none failed;
#   - p2 down for 1 s (< link_timeout_ms) and up: the same;
#   - 16 MiB messages under 10% loss both ways (MTU 9000, no rate limit):
#     delivered intact;
#   - p2 down for 2.5 x link_timeout_ms: messages fail with ETIMEDOUT,
#     counted in msgs_failed; every message is done or failed, none
#     delivered twice or corrupt; the link works again afterwards;
#   - node 2 unbound: its LEAVING heartbeat fails the sender's messages with
#     EHOSTDOWN, the call returns;
#   - node 2 unbound with its NIC down (no goodbye) and bound again (a
#     restart): ECONNRESET, from its new incarnation;
#   - node 1 (the sender) unbound: ENETDOWN.
# Every icsctl send runs under `timeout`: a hang fails its case.
#
# ICS_FAULT_COUNT scales the streams (default 1; ICS_TIMEOUT_SCALE above
# 3: that scale), ICS_BIG_COUNT is the
# number of 16 MiB messages (default 1: two took 416 s in a TCG guest on
# 6.12, at about 80 KB/s under the loss), ICS_BIG_MTU their MTU (9000).

. "$(dirname "$0")/lib.sh"

# link_timeout_ms: 4 s, longer where every wait is (ICS_TIMEOUT_SCALE above
# vmtest's 3, the debug kernel's 10). An outage as the link sees it lasts
# from the port going down until frames pass again: the 1 s sleep, plus
# the time ip(8) and linkwatch take to bring the port back, plus a
# retransmission timeout (at most LT / 4), plus a round trip; on a
# KASAN/lockdep kernel under TCG those grow tenfold, and a 1 s outage
# then outlasted 4 s.
LT=$(ics_slow_ms 4000)
# The streams run at $RATE whatever the kernel's speed while the faults'
# steps (ip(8), the waits) slow down with it: streams ICS_SCALE times as
# long beyond vmtest's 3, or a fault lands after the stream ended.
SCALE_COUNT=${ICS_FAULT_COUNT:-$((ICS_SCALE > 3 ? ICS_SCALE : 1))}
BIG_COUNT=${ICS_BIG_COUNT:-1}
BIG_MTU=${ICS_BIG_MTU:-9000}
RATE=8mbit
N1=""
N2=""

ics_init tc timeout

setup()
{
	ics_load heartbeat_ms=$ICS_HB_LONG link_timeout_ms=$LT link_window=32 &&
		bridge_add 2 && bridge_bind 2 || return 1
	N1=${ICS_MEMBER_NS[1]}
	N2=${ICS_MEMBER_NS[2]}
	throttle
}

# Node 1 sends at $RATE.
throttle()
{
	tc -n "$N1" qdisc replace dev eth0 root netem rate $RATE limit 100000 ||
		fail "tc netem rate $RATE"
}

# snaps TAG: snapshots of both members, the base of a case.
snaps()
{
	ics_model snap "$N1" "$ICS_TMP/$1.base1" "$N2" "$ICS_TMP/$1.base2"
}

# started TAG: wait until node 2's test service checked something of the
# run TAG started. One Python, which reads the base from the snapshot in
# its expression: under the stream's load a TCG guest takes seconds to
# start each, and the stream must still run when the fault comes.
started()
{
	local base="sum(c['rx_ok'] + c['rx_bad'] for c in
		__import__('json').load(open('$ICS_TMP/$1.base2'))['test']['channels'].values())"
	ics_model wait "$N2" test "$ICS_RX_GEN > $base" true 60 "node 2 receiving the stream"
}

# still_running WHAT: the stream must still run, or the fault missed it.
still_running()
{
	stress_running ||
		fail "the stream ended before $1; the case proved nothing (raise ICS_FAULT_COUNT)"
}

# delivered TAG [--saw COUNTER]...: every message of the run delivered once,
# in order, intact (node 2's test service: rx_ok, rx_bad, its rx_hash equal
# to node 1's tx_hash); none failed (ics_model.py stress-check).
delivered()
{
	local tag=$1 args=()
	shift
	for ch in "${ICS_CHANNELS[@]}"; do
		[ -e "$ICS_TMP/$tag/s1.$ch" ] && args+=(--count "$ch:$(sed -n 1p "$ICS_TMP/$tag/count.$ch")")
	done
	ics_model stress-check "${args[@]}" "$@" \
		--send "1:$N1:$ICS_TMP/$tag.base1:$ICS_TMP/$tag.now1:$ICS_TMP/$tag/s1.*" \
		--recv "2:$N2:$ICS_TMP/$tag.base2:$ICS_TMP/$tag.now2"
}

# stream TAG CHANNEL SIZE COUNT [OPTIONS]: one more run of TAG, from node 1.
stream()
{
	local tag=$1 ch=$2 size=$3 count=$4
	shift 4
	mkdir -p "$ICS_TMP/$tag"
	echo "$count" > "$ICS_TMP/$tag/count.$ch"
	stress_start "$tag" 2 "$size" "$count" "$ch" "1:$N1" -- "$@"
}

set_mtu()	# MTU: node 1 first, then node 2
{
	ip -n "$N1" link set eth0 mtu "$1" && ip -n "$N2" link set eth0 mtu "$1"
}

link_mtu_is()	# MTU: both links use it
{
	wait_eq 30 "$1" "node 1's link MTU" link_get "$N1" 2 mtu &&
	wait_eq 30 "$1" "node 2's link MTU" link_get "$N2" 1 mtu
}

# node1_link_mtu MTU: node 1's link to node 2 uses MTU, the smaller of node
# 1's and the one node 2's last hello announced (one Python, fast enough to
# catch a running stream).
node1_link_mtu()
{
	ics_model wait "$N1" links "next(l for l in j['links'] if l['node'] == 2)['mtu']" \
		"$1" 30 "node 1's link MTU"
}

mtu_change()
{
	local rc=0
	snaps mtu || return 1
	# About 25 MB: 25 s at 8 Mbit/s.
	stream mtu PRI0 1m $((2000 * SCALE_COUNT)) --mixed
	stream mtu TEST 1m $((2000 * SCALE_COUNT)) --mixed
	stream mtu CFS 64k $((150 * SCALE_COUNT))
	stream mtu DRD 1m $((8 * SCALE_COUNT))
	started mtu || rc=1
	set_mtu 9000 || rc=1
	node1_link_mtu 9000 || rc=1
	sleep 2		# frames of the larger MTU in flight
	set_mtu 1500 || rc=1
	node1_link_mtu 1500 || rc=1
	still_running "the MTU went down again" || rc=1
	stress_wait
	link_mtu_is 1500 || rc=1
	info "node 1: link_resets $(stat_get "$N1" link_resets), node 2: rx_dup_msgs $(stat_get "$N2" rx_dup_msgs)"
	delivered mtu || rc=1
	return $rc
}

down_short()
{
	local rc=0
	snaps short || return 1
	# About 10 MB: 10 s at 8 Mbit/s.
	stream short KCH 1m $((2000 * SCALE_COUNT)) --mixed
	stream short CFS 64k $((100 * SCALE_COUNT))
	started short || rc=1
	ip -n "$NS_BR" link set p2 down || rc=1
	sleep 1
	ip -n "$NS_BR" link set p2 up || rc=1
	still_running "p2 came back" || rc=1
	stress_wait
	delivered short || rc=1
	return $rc
}

big_lossy()
{
	local rc=0
	snaps big || return 1
	set_mtu "$BIG_MTU" && link_mtu_is "$BIG_MTU" || rc=1
	tc -n "$N1" qdisc replace dev eth0 root netem loss 10% limit 100000 &&
	tc -n "$NS_BR" qdisc replace dev p1 root netem loss 10% limit 100000 || { fail "tc netem"; rc=1; }
	stream big CFS 16m "$BIG_COUNT"
	stress_wait
	tc -n "$NS_BR" qdisc del dev p1 root
	throttle || rc=1
	set_mtu 1500 && link_mtu_is 1500 || rc=1
	delivered big --saw tx_retransmits || rc=1
	return $rc
}

# failed TAG ERROR: the run TAG of one channel reported failures with
# ERROR first; every message done or failed; the sender counted exactly
# those in msgs_done/msgs_failed; the receiver's test service got every
# message that was done, none twice (rx_ok), none corrupt (rx_bad).
failed()
{
	local tag=$1 want=$2
	ics_model snap "$N1" "$ICS_TMP/$tag.now1" "$N2" "$ICS_TMP/$tag.now2" || return 1
	python3 - "$ICS_TMP" "$tag" "$want" <<'EOF'
import glob, json, sys
d, tag, want = sys.argv[1:4]
L = lambda n: json.load(open("%s/%s" % (d, n)))
errs = []
files = [f for f in glob.glob("%s/%s/s1.*" % (d, tag)) if f.rsplit(".", 1)[1].isupper()]
if len(files) != 1:
    sys.exit("# FAIL: %d replies for %s" % (len(files), tag))
ch = files[0].rsplit(".", 1)[1]
rc = open(files[0] + ".rc").read().strip()
try:
    r = json.load(open(files[0]))
except ValueError:
    sys.exit("# FAIL: icsctl send exit %s, no JSON reply: %s"
             % (rc, open(files[0] + ".err").read().strip()))
count = int(open("%s/%s/count.%s" % (d, tag, ch)).read())
print("# %s: icsctl send exit %s: %s" % (tag, rc, json.dumps(r)))
if rc == "124":
    errs.append("icsctl send did not return: it hung until `timeout` killed it")
if r["failed"] < 1:
    errs.append("no message failed")
if r.get("error") != want:
    errs.append("first error %s, want %s" % (r.get("error"), want))
if r["done"] + r["failed"] != r["sent"]:
    errs.append("done %d + failed %d != sent %d: a message was neither"
                % (r["done"], r["failed"], r["sent"]))
a1, b1 = L(tag + ".base1")["show"]["stats"], L(tag + ".now1")["show"]["stats"]
for k, v in (("msgs_failed", r["failed"]), ("msgs_done", r["done"])):
    if b1[k] - a1[k] != v:
        errs.append("node 1 %s grew by %d, want %d" % (k, b1[k] - a1[k], v))
T = lambda n, k: L(n)["test"].get("channels", {}).get(ch, {}).get(k, 0)
ok, bad = (T(tag + ".now2", k) - T(tag + ".base2", k) for k in ("rx_ok", "rx_bad"))
print("# node 2 delivered %d of the %d sent (%d done, %d failed)" % (ok, r["sent"], r["done"], r["failed"]))
if bad:
    errs.append("node 2's test service rx_bad grew by %d" % bad)
if not r["done"] <= ok <= r["sent"]:
    errs.append("node 2 delivered %d, want between done %d and sent %d (none twice)"
                % (ok, r["done"], r["sent"]))
for e in errs:
    print("# FAIL: " + e)
sys.exit(1 if errs else 0)
EOF
}

# fault TAG CHANNEL ERROR FAULT HEAL: node 1 streams on CHANNEL; once node 2
# receives, FAULT runs; the stream must end (under `timeout`) with failures,
# ERROR first (see failed); then HEAL, and a fresh run is delivered whole.
fault()
{
	local tag=$1 ch=$2 want=$3 rc=0 t0
	snaps "$tag" || return 1
	# About 15 MB: 15 s at 8 Mbit/s.
	stream "$tag" "$ch" 1m $((10000 * SCALE_COUNT)) --mixed
	started "$tag" || rc=1
	still_running "the fault" || rc=1
	t0=$SECONDS
	$4 || rc=1
	stress_wait
	info "icsctl send returned $((SECONDS - t0))s after the fault began"
	failed "$tag" "$want" || rc=1
	$5 || rc=1
	send_wait_ok "$N1" 2 DLM 3000 20 || rc=1
	return $rc
}

p2_down_long()
{
	ip -n "$NS_BR" link set p2 down || return 1
	sleep $((LT * 5 / 2000))
	ip -n "$NS_BR" link set p2 up
}

# Node 1 unbinds while its link to node 2 holds messages of the stream. A
# kernel whose generator does not outrun netem's rate (KASAN and lockdep
# under TCG) may have none in flight at a given moment: node 2's port goes
# down first, so that what node 1 sends next waits for an acknowledgement,
# and node 1 unbinds once its link holds some. No poll starts after a
# quarter of link_timeout_ms (one icstat may take seconds on such a
# kernel): the timeout must not fail the messages first. failed() then
# shows whether the unbind found some held (ENETDOWN).
held1()
{
	in_ns "$N1" icstat -j -N 2 links |
		python3 -S -c 'import json, sys; sys.exit(json.load(sys.stdin)["links"][0]["queued_msgs"] == 0)'
}

now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }

unbind1_held()
{
	local end

	ip -n "$NS_BR" link set p2 down || return 1
	end=$(($(now_ms) + LT / 4))
	until held1; do
		[ "$(now_ms)" -lt $end ] || { info "node 1's link to node 2 holds nothing yet"; break; }
		sleep 0.1
	done
	unbind 1
}

rebind1_p2() { ip -n "$NS_BR" link set p2 up && rebind1; }

unbind()	# NODE
{
	local out
	out=$(in_ns "${ICS_MEMBER_NS[$1]}" icsctl unbind 2>&1) || fail "unbind node $1: $out"
}

# A restart that says no goodbye: node 2's NIC is down while it unbinds
# (no LEAVING heartbeat goes out), so node 1 learns of the restart from
# the new incarnation in node 2's next heartbeat.
restart2()
{
	ip -n "$N2" link set eth0 down && unbind 2 && ip -n "$N2" link set eth0 up &&
		ics_bind "$N2" eth0 2
}
rebind1() { ics_bind "$N1" eth0 1 && both_reachable; }
rebind2() { ics_bind "$N2" eth0 2 && both_reachable; }
both_reachable() { wait_reachable "$N1" 2 && wait_reachable "$N2" 1; }

step_add setup
case_add "MTU 1500 -> 9000 -> 1500 on both ends mid-stream: nothing lost, duplicated or reordered" mtu_change
case_add "link down for 1 s (< link_timeout_ms) mid-stream: nothing lost, duplicated or reordered" down_short
case_add "$BIG_COUNT x 16 MiB at MTU $BIG_MTU under 10% loss both ways: delivered intact" big_lossy
case_add "link down for 2.5 x link_timeout_ms mid-stream: ETIMEDOUT failures counted, no hang, link recovers" \
	fault long CFSR ETIMEDOUT p2_down_long true
case_add "receiver unbound mid-stream: its LEAVING heartbeat fails the sender's messages with EHOSTDOWN" \
	fault unb RBLD EHOSTDOWN "unbind 2" rebind2
case_add "receiver restarted mid-stream, no goodbye: the sender gets ECONNRESET failures" \
	fault rst NET ECONNRESET restart2 both_reachable
case_add "sender unbound mid-stream: its messages fail with ENETDOWN" \
	fault snd CLUA ENETDOWN unbind1_held rebind1_p2
case_once "teardown: netns deleted, module removed, kernel log clean" ics_teardown_check
cases_run
