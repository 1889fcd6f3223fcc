#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_service.sh - ics_test.ko, the test service, as an ordinary client of
# ics: it receives only on the channels it is attached to, checks every
# byte of what it gets, answers ECHO and PING, and its generator's messages
# arrive once, whole and in order (the hashes of both ends agree).
#
#   netns ics$$-a                          netns ics$$-b
#   +--------------------------+           +--------------------------+
#   | ics node 1   ics_test    +---veth----+ ics node 2   ics_test    |
#   |  attached: TEST CFS      |           |  attached: TEST CFS KCH  |
#   +--------------------------+           +--------------------------+

. "$(dirname "$0")/lib.sh"

# ics.ko alone at first: the load case inserts the test service itself and
# attaches it where each case says (nothing at bind).
ICS_WITH_TEST=0
ics_init setpriv
[ -r "$ICS_TEST_KO" ] || ics_skip_all "ics_test.ko not found: $ICS_TEST_KO (make modules, or set ICS_TEST_KO)"

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
TMSG=$ICS_SRC_DIR/ics_testmsg.py
: "${ICS_YNL_DIR:=$ICS_TOP/build/ksft/tools/net/ynl}"
YNL=$ICS_YNL_DIR
YSPEC=$ICS_TOP/Documentation/netlink/specs/ics_test.yaml
SIZES="0 1 15 16 17 100 1464 1465 5000 65536 1048576"

tmsg() { in_ns "$1" python3 "$TMSG" "${@:2}"; }
# NS CHANNEL KEY: a channel's counter (0 while the channel counted nothing)
tchan() { tsvc_get "$1" "j[\"channels\"].get(\"$2\", {}).get(\"$3\", 0)"; }
thash() { tsvc_get "$1" "j[\"nodes\"][\"$2\"][\"$3\"][\"$4\"]"; }	# NS NODE tx_hash|rx_hash CH

# settled NS: every message NS's test service took is counted.
settled() { wait_eq 60 0 "$1: messages taken, not counted yet" tsvc_get "$1" 'j["queued"]'; }

# Node 1's tx hash for node 2 on CH equals node 2's rx hash for node 1
# (and the other way with "back"), and is not the empty hash.
hashes_agree()	# CH [back]
{
	local s=$NS_A r=$NS_B sn=1 rn=2 tx rx
	[ "${2:-}" = back ] && { s=$NS_B r=$NS_A sn=2 rn=1; }
	settled "$r" || return 1
	tx=$(thash "$s" $rn tx_hash "$1")
	rx=$(thash "$r" $sn rx_hash "$1")
	assert_eq "node $sn -> $rn $1: sender's tx hash = receiver's rx hash" "$tx" "$rx" || return 1
	[ "$tx" != 0 ] && [ "$tx" != none ] || fail "node $sn -> $rn $1: no hash ($tx)"
}

# ics.ko cannot go while its client is loaded; nothing is attached at first.
load()
{
	ics_test_load || return 1
	assert_eq "attached at load, node 1" "[]" "$(tsvc_get "$NS_A" 'j["attached"]')" || return 1
	assert_eq "TEST handler before attach" false "$(chan_get "$NS_B" TEST handler)" || return 1
	if rmmod ics 2>/dev/null; then
		fail "rmmod ics succeeded while ics_test uses it"
		return 1
	fi
}

# Attach is a netns admin's; all or nothing: a channel another client has
# (a /dev/ics file on CLSM) fails the whole request and changes nothing.
attach()
{
	local mark=$ICS_TMP/clsm-bound pid rc=0
	expect_err 1 "icsctl: test attach: .*(not permitted|EPERM).*" \
		in_ns "$NS_B" "${NOBODY[@]}" icsctl test attach TEST || return 1
	in_ns "$NS_A" icsctl test attach TEST CFS || return 1
	in_ns "$NS_B" icsctl test attach TEST CFS KCH || return 1
	assert_eq "node 2 attached" '["CFS", "KCH", "TEST"]' \
		"$(in_ns "$NS_B" "${NOBODY[@]}" icsctl test show -j | jget 'j["attached"]')" || return 1
	assert_eq "TEST handler after attach" true "$(chan_get "$NS_B" TEST handler)" || return 1
	# nsenter execs python: $! is the process that holds the file
	nsenter --net="$ICS_NETNS_DIR/$NS_B" python3 -c '
import os, sys, time
sys.path.insert(0, sys.argv[1])
import ics_dev
fd = ics_dev.dev()
ics_dev.bind(fd, 5)
open(sys.argv[2], "w").close()
time.sleep(600)
' "$ICS_SRC_DIR" "$mark" &
	pid=$!
	ICS_BG_PIDS+=("$pid")
	wait_file 30 "/dev/ics bound on CLSM" "$mark" || rc=1
	expect_err 1 "icsctl: test attach: .*another client receives on a channel.*" \
		in_ns "$NS_B" icsctl test attach TEST CFS KCH DLM CLSM || rc=1
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	assert_eq "node 2 attached after the refused attach" '["CFS", "KCH", "TEST"]' \
		"$(tsvc_get "$NS_B" 'j["attached"]')" || rc=1
	assert_eq "DLM handler after the refused attach" false "$(chan_get "$NS_B" DLM handler)" ||
		rc=1
	return $rc
}

# Every size around the header and the fragment boundaries, 3 of each (one
# of 16 MiB):
# each one verified at node 2 and taken by the handler (none unclaimed),
# in order.
exact()
{
	local s k n=0 ok0 out
	ok0=$(tchan "$NS_B" TEST rx_ok)
	for s in $SIZES 16777216; do
		k=3
		[ $s -gt 1048576 ] && k=1	# one will do, and 16 MiB is slow under TCG
		out=$(in_ns "$NS_A" icsctl test send node 2 channel TEST size $s count $k --wait \
			2>&1) || { fail "size $s: $out"; return 1; }
		n=$((n + k))
	done
	settled "$NS_B" || return 1
	assert_eq "node 2 TEST rx_ok" $((ok0 + n)) "$(tchan "$NS_B" TEST rx_ok)" || return 1
	assert_eq "node 2 TEST rx_bad" 0 "$(tchan "$NS_B" TEST rx_bad)" || return 1
	assert_eq "node 2 TEST rx_unclaimed" 0 "$(chan_get "$NS_B" TEST rx_unclaimed)" || return 1
	hashes_agree TEST
}

# Both ways at once, log-uniform sizes up to 64 KiB on CFS.
both_ways()
{
	local rc=0 a b
	in_ns "$NS_A" icsctl test send node 2 channel CFS size 64k count 300 --mixed --wait \
		> "$ICS_TMP/ab" 2>&1 &
	a=$!
	in_ns "$NS_B" icsctl test send node 1 channel CFS size 64k count 300 --mixed --wait \
		> "$ICS_TMP/ba" 2>&1 &
	b=$!
	wait $a || { fail "node 1 -> 2: $(cat "$ICS_TMP/ab")"; rc=1; }
	wait $b || { fail "node 2 -> 1: $(cat "$ICS_TMP/ba")"; rc=1; }
	[ $rc = 0 ] || return 1
	settled "$NS_A" && settled "$NS_B" || return 1
	assert_eq "node 2 CFS rx_ok" 300 "$(tchan "$NS_B" CFS rx_ok)" || return 1
	assert_eq "node 1 CFS rx_ok" 300 "$(tchan "$NS_A" CFS rx_ok)" || return 1
	hashes_agree CFS && hashes_agree CFS back
}

# The kernel's YNL CLI, driven by Documentation/netlink/specs/ics_test.yaml,
# reads the same as icsctl test show, field by field, and its send works.
ynl_reads()
{
	local ns
	[ -r "$YNL/cli.py" ] || { echo "# no YNL CLI at $YNL"; return "$KSFT_SKIP"; }
	for ns in "$NS_A" "$NS_B"; do
		in_ns "$ns" python3 "$YNL/cli.py" --spec "$YSPEC" --no-schema --output-json \
			--do get > "$ICS_TMP/y" && in_ns "$ns" icsctl test show -j > "$ICS_TMP/i" ||
			{ fail "a reader failed in $ns"; return 1; }
		python3 - "$ICS_TMP" <<'PY' || return 1
import json, sys
d = sys.argv[1]
y, i = (json.load(open(f"{d}/{n}")) for n in ("y", "i"))
names = ["BOOT", "PRI0", "PRI1", "CFS", "NET", "CLSM", "DRD", "TUNL", "CLUA", "KEVM",
         "CFSR", "RBLD", "KCH", "DLM", "TEST", "CNX"]
errs = []
def eq(what, a, b):
    if a != b:
        errs.append(f"{what}: ynl {a!r} != icsctl {b!r}")
eq("attached", [names[c] for c in range(16) if y["channels"] >> c & 1], i["attached"])
eq("queued", y["queued"], i["queued"])
yc = {names[c["id"]]: c for c in y.get("channel-stats", [])}
eq("channels", sorted(yc), sorted(i["channels"]))
for n, c in yc.items():
    for k, v in c.items():
        if k != "id":
            eq(f"{n} {k}", v, i["channels"][n][k.replace("-", "_")])
yh = {str(h["node"]): h for h in y.get("node-hashes", [])}
eq("nodes", sorted(yh), sorted(i["nodes"]))
for n, h in yh.items():
    for k in ("tx", "rx"):
        eq(f"node {n} {k}", h[k], [i["nodes"][n][k + "_hash"][c] for c in names])
if not yh:
    errs.append("no hashes: the comparison proves nothing")
for e in errs:
    print("# FAIL: " + e)
sys.exit(1 if errs else 0)
PY
	done
	in_ns "$NS_A" python3 "$YNL/cli.py" --spec "$YSPEC" --no-schema --output-json --do send \
		--json '{"node": 2, "channel": 3, "size": 100, "count": 5, "flags": ["wait"]}' \
		> "$ICS_TMP/ys" || { fail "ynl send: $(cat "$ICS_TMP/ys")"; return 1; }
	assert_eq "ynl send: sent done failed" "5 5 0" \
		"$(jget '"%d %d %d" % (j["sent"], j["done"], j["failed"])' < "$ICS_TMP/ys")" || return 1
	hashes_agree CFS
}

# PING: one at a time, each answered; a ping run takes no MIXED; to a
# channel node 2 is not attached to nothing answers (the message is
# unclaimed there) and the run times out.
ping()
{
	local a0 out u0
	a0=$(tchan "$NS_B" TEST answers)
	in_ns "$NS_A" icsctl test send node 2 channel TEST size 64 count 50 --ping -j \
		> "$ICS_TMP/ping" || { fail "ping: $(cat "$ICS_TMP/ping")"; return 1; }
	assert_eq "pings done" 50 "$(jget 'j["done"]' < "$ICS_TMP/ping")" || return 1
	assert_eq "round trips measured" 50 "$(jget 'j["rtt"]["count"]' < "$ICS_TMP/ping")" || return 1
	wait_eq 30 $((a0 + 50)) "node 2 answers" tchan "$NS_B" TEST answers || return 1
	expect_err 1 "icsctl: test send: .*neither MIXED nor NONBLOCK.*" \
		in_ns "$NS_A" icsctl test send node 2 channel TEST size 64 count 5 --ping --mixed ||
		return 1
	u0=$(chan_get "$NS_B" DLM rx_unclaimed)
	out=$(in_ns "$NS_A" icsctl test send node 2 channel DLM size 64 count 3 --ping \
		--timeout 500 2>&1) && { fail "ping on DLM answered: $out"; return 1; }
	echo "# $out"
	assert_eq "node 2 DLM unclaimed" $((u0 + 1)) "$(chan_get "$NS_B" DLM rx_unclaimed)"
}

# ECHO from a /dev/ics application on node 1 (KCH): every answer comes back
# with the length asked for and verifies as node 2's; a length over
# ICS_MSG_MAX is not answered, only counted.
echo_answers()
{
	local got d0
	got=$(tmsg "$NS_A" answers 2 12 20 3000 $((30 * ICS_SCALE))) || return 1
	assert_eq "answers read by node 1" 20 "$got" || return 1
	wait_eq 30 20 "node 2 KCH answers" tchan "$NS_B" KCH answers || return 1
	d0=$(tchan "$NS_B" KCH answer_drops)
	tmsg "$NS_A" ask 2 12 echo $((16 * 1024 * 1024 + 1)) 64 || return 1
	wait_eq 30 $((d0 + 1)) "node 2 KCH answer_drops" tchan "$NS_B" KCH answer_drops
}

# A byte off the pattern, in a message with a header and in a short one, is
# counted bad and not answered; SINK is counted only.
bad_and_sink()
{
	local b0 s0 ok0 a0
	b0=$(tchan "$NS_B" KCH rx_bad)
	s0=$(tchan "$NS_B" KCH sinked)
	ok0=$(tchan "$NS_B" KCH rx_ok)
	a0=$(tchan "$NS_B" KCH answers)
	tmsg "$NS_A" bad 2 12 100 && tmsg "$NS_A" bad 2 12 5 || return 1
	tmsg "$NS_A" ask 2 12 sink 0 64 5 || return 1
	assert_eq "node 2 KCH rx_bad" $((b0 + 2)) "$(tchan "$NS_B" KCH rx_bad)" || return 1
	assert_eq "node 2 KCH sinked" $((s0 + 5)) "$(tchan "$NS_B" KCH sinked)" || return 1
	assert_eq "node 2 KCH rx_ok" $((ok0 + 5)) "$(tchan "$NS_B" KCH rx_ok)" || return 1
	assert_eq "node 2 KCH answers" "$a0" "$(tchan "$NS_B" KCH answers)"
}

# With a queue of one message the handler refuses what comes while one
# waits: ics holds it and pauses TEST, the worker resumes it; every message
# still arrives once, in order, and is done for the sender.
refused()
{
	local p=/sys/module/ics_test/parameters/queue_max q0 ok0 r0 out rc=0
	q0=$(cat $p)
	ok0=$(tchan "$NS_B" TEST rx_ok)
	r0=$(tchan "$NS_B" TEST refused)
	echo 1 > $p
	out=$(in_ns "$NS_A" icsctl test send node 2 channel TEST size 256k count 40 --wait 2>&1) ||
		{ fail "send: $out"; rc=1; }
	echo "$q0" > $p
	[ $rc = 0 ] || return 1
	settled "$NS_B" || return 1
	echo "# refused $(($(tchan "$NS_B" TEST refused) - r0)) times"
	assert_eq "node 2 TEST rx_ok" $((ok0 + 40)) "$(tchan "$NS_B" TEST rx_ok)" || return 1
	hashes_agree TEST
}

reset()
{
	in_ns "$NS_B" icsctl test reset || return 1
	assert_eq "node 2 channels after reset" "{}" "$(tsvc_get "$NS_B" 'j["channels"]')" || return 1
	assert_eq "node 2 hashes after reset" "{}" "$(tsvc_get "$NS_B" 'j["nodes"]')"
}

# Unloading while a run goes: refused (EBUSY), not waited for with
# genetlink's lock held; a ping to a channel node 2 is not attached to
# keeps a run going until its timeout. Then it goes, the handlers with it,
# and a reload works.
unload()
{
	local pid u0 out busy=0 deadline
	u0=$(chan_get "$NS_B" DLM rx_unclaimed)
	in_ns "$NS_A" icsctl test send node 2 channel DLM size 64 count 1 --ping \
		--timeout $((5000 * ICS_SCALE)) > "$ICS_TMP/unl" 2>&1 &
	pid=$!
	wait_eq 30 $((u0 + 1)) "the ping at node 2" chan_get "$NS_B" DLM rx_unclaimed || return 1
	deadline=$(ics_deadline 60)
	until out=$(rmmod ics_test 2>&1); do
		busy=$((busy + 1))
		[ $SECONDS -lt "$deadline" ] || { fail "rmmod ics_test: $out"; return 1; }
		sleep 0.2
	done
	wait $pid
	echo "# rmmod refused $busy times while the run waited; run: $(cat "$ICS_TMP/unl")"
	[ $busy -gt 0 ] || { fail "rmmod went through while a run was going"; return 1; }
	assert_eq "TEST handler after unload" false "$(chan_get "$NS_B" TEST handler)" || return 1
	ics_test_load || return 1
	in_ns "$NS_B" icsctl test attach TEST || return 1
	in_ns "$NS_A" icsctl test send node 2 channel TEST size 1000 count 10 --wait >/dev/null ||
		return 1
	settled "$NS_B" || return 1
	assert_eq "node 2 TEST rx_ok after reload" 10 "$(tchan "$NS_B" TEST rx_ok)"
}

step_add pair_setup
case_add "load: nothing attached; ics pinned while ics_test is loaded" load
case_add "attach: netns admin only, all or nothing" attach
case_add "exact: every size to 16 MiB verified, in order" exact
case_add "both_ways: mixed sizes both ways, hashes agree" both_ways
case_add "ynl_reads: the kernel's YNL CLI reads and sends as icsctl does" ynl_reads
case_add "ping: each answered; unattached channel times out" ping
case_add "echo_answers: answers of the length asked; over the maximum dropped" echo_answers
case_add "bad_and_sink: off-pattern bytes counted bad, sink counted" bad_and_sink
case_add "refused: a full queue refuses, nothing lost" refused
case_add "reset: counters and hashes zero" reset
case_once "unload: refused while a run goes, then reload" unload
step_add ics_teardown_check
cases_run
