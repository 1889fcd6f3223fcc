#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# flow_control.sh - a peer that stops acknowledging cannot make memory grow
# without bound: the send queues stop at their limits (EAGAIN for a
# non-blocking sender, ETIMEDOUT for a blocking one that waited long
# enough), and once link_timeout_ms passes without progress every queued
# message fails and the queues are empty again.
#
#   netns ics$$-a                             netns ics$$-b
#   +-----------------------------+           +-----------------------------+
#   | ics node 1 (sender)         |           | ics node 2 (gone silent)    |
#   |  veth0: netem loss 100%     +---veth----+  veth0: netem loss 100%     |
#   +-----------------------------+           +-----------------------------+
#
# Module parameters: link_queue_max=$LINK_MAX (16 MiB) per peer,
# chan_queue_max=$CHAN_MAX (4 MiB) per peer and channel, link_timeout_ms=
# $LT (long enough to fill the queues first). Messages are 256 KiB; a
# message is charged its length + 64 bytes (ICS_MSG_COST in kmod/link_tx.c),
# as `icstat links` shows in queued_bytes and queue.

. "$(dirname "$0")/lib.sh"

LINK_MAX=$((16 << 20))	# the smallest the module takes: ICS_MSG_MAX
CHAN_MAX=$((4 << 20))
LT=$((20000 * ICS_SCALE))	# ms: in a TCG guest filling the queues takes a while
SIZE=262144
COST=$((SIZE + 64))
FILL=(PRI1 NET CLSM DRD TUNL CLUA KEVM)	# channels after CFS, until the link is full

ics_init tc timeout
ktap_set_plan 7

setup()
{
	pair_setup heartbeat_ms=$ICS_HB_LONG link_queue_max=$LINK_MAX chan_queue_max=$CHAN_MAX \
		link_timeout_ms=$LT || return 1
	ics_snap "$NS_A" "$ICS_TMP/base" || return 1
	tc -n "$NS_A" qdisc add dev veth0 root netem loss 100% &&
	tc -n "$NS_B" qdisc add dev veth0 root netem loss 100% || { fail "tc netem"; return 1; }
	: > "$ICS_TMP/queued"
}

# nonblock CHANNEL: icsctl send --nonblock of 1000 messages on CHANNEL must
# stop with EAGAIN (exit 1: not all sent); its sent count goes to
# $ICS_TMP/queued. A send that queued nothing fails with EAGAIN before any
# reply (one stderr line).
nonblock()
{
	local ch=$1 rc out
	send_json "$NS_A" 2 "$ch" $SIZE 1000 "$ICS_TMP/nb.$ch" --nonblock
	rc=$?
	if [ ! -s "$ICS_TMP/nb.$ch" ]; then
		if grep -qx 'icsctl: send: Resource temporarily unavailable.*' "$ICS_TMP/nb.$ch.err"; then
			info "$ch: nothing queued (EAGAIN)"
			echo "$ch 0" >> "$ICS_TMP/queued"
			return 0
		fi
		fail "icsctl send --nonblock on $ch: exit $rc, no reply: $(cat "$ICS_TMP/nb.$ch.err")"
		return 1
	fi
	out=$(jget '"%d %s %d" % (j["sent"], j["error"], j["failed"])' < "$ICS_TMP/nb.$ch")
	info "$ch: exit $rc; sent, first error, failed: $out"
	# shellcheck disable=SC2086
	set -- $out
	echo "$ch $1" >> "$ICS_TMP/queued"
	[ "$2" = EAGAIN ] && [ "$1" -lt 1000 ] && [ "$3" = 0 ] && [ $rc = 1 ] ||
		fail "$ch: want exit 1, fewer than 1000 sent, error EAGAIN, 0 failed; got exit $rc, $out"
}

# bounds [FULL_CHANNEL...]: queued_bytes <= link_queue_max + one message;
# each channel's queue <= chan_queue_max + one message; the channels named
# are full (one more message would not fit); queued bytes and messages are
# those the sends queued.
bounds()
{
	in_ns "$NS_A" icstat -j links > "$ICS_TMP/links" || return 1
	python3 - "$ICS_TMP/links" "$ICS_TMP/queued" $LINK_MAX $CHAN_MAX $COST "$@" <<'EOF'
import json, sys
links, queued, link_max, chan_max, cost = sys.argv[1:6]
full = sys.argv[6:]
link_max, chan_max, cost = int(link_max), int(chan_max), int(cost)
l = next(l for l in json.load(open(links))["links"] if l["node"] == 2)
sent = {}
for line in open(queued):
    ch, n = line.split()
    sent[ch] = sent.get(ch, 0) + int(n)
errs = []
q, qm = l["queued_bytes"], l["queued_msgs"]
print("# queued_bytes %d (link_queue_max %d), queued_msgs %d, inflight %s" % (q, link_max, qm, l.get("inflight")))
if q > link_max + cost:
    errs.append("queued_bytes %d > link_queue_max %d + one message %d" % (q, link_max, cost))
if q != sum(sent.values()) * cost:
    errs.append("queued_bytes %d, want %d messages x %d" % (q, sum(sent.values()), cost))
if qm != sum(sent.values()):
    errs.append("queued_msgs %d, want %d" % (qm, sum(sent.values())))
if sum(l["queue"].values()) != q:
    errs.append("per-channel queues add up to %d, not queued_bytes %d" % (sum(l["queue"].values()), q))
for ch, b in l["queue"].items():
    if b > chan_max + cost:
        errs.append("%s queue %d > chan_queue_max %d + one message" % (ch, b, chan_max))
    if b != sent.get(ch, 0) * cost:
        errs.append("%s queue %d, want %d messages x %d" % (ch, b, sent.get(ch, 0), cost))
for ch in full:
    if ch == "LINK":
        if q + cost <= link_max:
            errs.append("the link took less than it may: %d + %d <= %d" % (q, cost, link_max))
    elif l["queue"][ch] + cost <= chan_max:
        errs.append("%s stopped early: %d + %d <= %d" % (ch, l["queue"][ch], cost, chan_max))
for e in errs:
    print("# FAIL: " + e)
sys.exit(1 if errs else 0)
EOF
}

chan_limit()
{
	local e0
	e0=$(stat_get "$NS_A" tx_eagain)
	nonblock CFS || return 1
	bounds CFS || return 1
	assert_eq "tx_eagain grew by" 1 $(($(stat_get "$NS_A" tx_eagain) - e0))
}

link_limit()
{
	local ch rc=0
	for ch in "${FILL[@]}"; do
		nonblock "$ch" || rc=1
		bounds || rc=1
	done
	bounds LINK || rc=1
	return $rc
}

# A blocking send to a full queue waits --timeout ms, then ETIMEDOUT.
blocking()
{
	local t0 secs
	t0=$(date +%s%N)
	expect_err 1 'icsctl: send: Connection timed out(: .*)?' timeout $((30 * ICS_SCALE)) \
		nsenter --net="$ICS_NETNS_DIR/$NS_A" icsctl send node 2 channel CFS size $SIZE count 1 \
		--timeout 1000 || return 1
	secs=$((($(date +%s%N) - t0) / 1000000))
	info "the blocking send returned after ${secs} ms"
	[ $secs -ge 1000 ] || fail "returned after $secs ms, before its 1000 ms timeout"
}

# After link_timeout_ms without progress every message fails: the queue is
# empty and msgs_failed counts them all.
timed_out()
{
	local n
	n=$(awk '{ s += $2 } END { print s }' "$ICS_TMP/queued")
	wait_eq $((LT / 1000 * 3)) 0 "node 1 queued_bytes after link_timeout_ms" link_get "$NS_A" 2 queued_bytes || return 1
	assert_eq "queued_msgs" 0 "$(link_get "$NS_A" 2 queued_msgs)" || return 1
	assert_eq "inflight" 0 "$(link_get "$NS_A" 2 inflight)" || return 1
	assert_eq "msgs_failed grew by the $n queued" "$n" \
		$(($(stat_get "$NS_A" msgs_failed) - $(jget 'j["show"]["stats"]["msgs_failed"]' < "$ICS_TMP/base")))
}

works_again()
{
	tc -n "$NS_A" qdisc del dev veth0 root && tc -n "$NS_B" qdisc del dev veth0 root || return 1
	send_wait_ok "$NS_A" 2 CFS $SIZE 20
}

ics_case "two members, both directions at netem loss 100%" setup || ics_bail "setup failed"
ics_case "--nonblock stops with EAGAIN once a channel queue holds chan_queue_max" chan_limit
ics_case "more channels: queued_bytes stops within link_queue_max + one message" link_limit
ics_case "a blocking send to a full queue gives up with ETIMEDOUT after --timeout" blocking
ics_case "after link_timeout_ms every queued message fails; queues empty" timed_out
ics_case "without the loss the link carries messages again" works_again
ics_case "teardown: netns deleted, module removed, kernel log clean" ics_teardown_check
ktap_finished
