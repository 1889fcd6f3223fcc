#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# reset.sh - `icsctl reset` zeroes every counter of its own netns instance
# (channels, histograms, nodes, stats; not the links' counters, which count
# since the peer was first heard) and nothing else: not the other netns's,
# nor the test service's counters and hashes (ics_test's own, zeroed by
# `icsctl test reset` only); an unprivileged user can read every statistic
# but can neither reset, bind nor send.
#
#   netns ics$$-a                         netns ics$$-b
#   +-------------------------+           +-------------------------+
#   | ics node 1              |           | ics node 2              |
#   | veth0 02:00:00:00:00:01 +---veth----+ veth0 02:00:00:00:00:02 |
#   +-------------------------+           +-------------------------+
#   root and uid 65534 (setpriv --reuid=65534 --regid=65534 --clear-groups)
#   run icstat/icsctl in netns a.
#
# The traffic goes on BOOT, CFS, TEST and CNX both ways. The test service
# checks CFS, TEST and CNX; BOOT has no receiver, so what arrives there is
# counted unclaimed (rx_unclaimed), a counter the reset must zero too.

. "$(dirname "$0")/lib.sh"

ICS_ATTACH="CFS TEST CNX"

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
EPERM_RE='icsctl: [a-z]+: Operation not permitted \(need CAP_NET_ADMIN\)'

ics_init setpriv
ktap_set_plan 8

# counters_zero SNAP BEFORE: print every non-zero counter; exit 1 if any.
# Link counters count since the peer was first heard (UAPI, enum
# ics_link_attr): the reset leaves them as they were in BEFORE.
counters_zero()
{
	python3 - "$1" "$2" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
before = json.load(open(sys.argv[2]))
bad = []
for k, v in s["show"]["stats"].items():
    if v != 0:
        bad.append("stats %s = %d" % (k, v))
for c in s["chan"]["channels"]:
    for d in ("tx", "rx"):
        for k in ("msgs", "bytes"):
            if c[d][k]:
                bad.append("%s %s %s = %d" % (c["name"], d, k, c[d][k]))
        for r, v in enumerate(c[d]["hist"]):
            if v:
                bad.append("%s %s hist row %s = %d" % (c["name"], d, s["chan"]["rows"][r], v))
    if c["rx_unclaimed"]:
        bad.append("%s rx_unclaimed = %d" % (c["name"], c["rx_unclaimed"]))
for n in s["nodes"]["nodes"]:
    for k in ("tx_msgs", "tx_bytes", "rx_msgs", "rx_bytes"):
        if n[k]:
            bad.append("node %d %s = %d" % (n["node_id"], k, n[k]))
LINK_COUNTERS = ("tx_frames retransmits fast_retransmits timeouts rx_frames duplicates "
                 "out_of_order crc_errors tx_acks rx_acks resets msgs_done msgs_failed").split()
was = {l["node"]: l for l in before["links"]["links"]}
for l in s["links"]["links"]:
    for k in LINK_COUNTERS:
        if l.get(k) != was.get(l["node"], {}).get(k):
            bad.append("link to node %d %s %s -> %s: the reset changed it"
                       % (l["node"], k, was.get(l["node"], {}).get(k), l.get(k)))
if not any(l["tx_frames"] for l in s["links"]["links"]):
    bad.append("no link counted a data frame before the reset: the check proves nothing")
for b in bad[:40]:
    print("# FAIL: not zero: " + b)
sys.exit(1 if bad else 0)
EOF
}

traffic()
{
	local c
	for c in BOOT CFS TEST CNX; do
		ics_send "$NS_A" 1 2 $c 3000 4 || return 1
		ics_send "$NS_B" 2 1 $c 100 2 || return 1
	done
	# 2 x 3 checked by node 1's test service, 4 x 3 by node 2's; BOOT's
	# messages unclaimed.
	ics_wait_rx "$NS_A" 1 6 60 && ics_wait_rx "$NS_B" 2 12 60 || return 1
	ics_model wait "$NS_A" channels 'j["channels"][0]["rx_unclaimed"]' 2 60 "node 1 BOOT rx_unclaimed" &&
	ics_model wait "$NS_B" channels 'j["channels"][0]["rx_unclaimed"]' 4 60 "node 2 BOOT rx_unclaimed" ||
		return 1
	ics_snap "$NS_A" "$ICS_TMP/a-before" || return 1
	# Every kind of counter must be non-zero before the reset, or the reset
	# case below proves nothing.
	python3 - "$ICS_TMP/a-before" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
ch = {c["name"]: c for c in s["chan"]["channels"]}
st = s["show"]["stats"]
node2 = [n for n in s["nodes"]["nodes"] if n["node_id"] == 2]
checks = {
    "TEST tx msgs": ch["TEST"]["tx"]["msgs"], "TEST rx bytes": ch["TEST"]["rx"]["bytes"],
    "TEST tx hist row 4k": ch["TEST"]["tx"]["hist"][13],
    "BOOT rx_unclaimed": ch["BOOT"]["rx_unclaimed"],
    "test service TEST rx_ok": s["test"]["channels"]["TEST"]["rx_ok"],
    "stats tx_frames": st["tx_frames"], "stats rx_frames": st["rx_frames"],
    "stats hello_tx": st["hello_tx"], "stats hello_rx": st["hello_rx"],
    "node 2 tx_msgs": node2[0]["tx_msgs"] if node2 else 0,
    "node 2 rx_bytes": node2[0]["rx_bytes"] if node2 else 0,
}
zero = [k for k, v in checks.items() if not v]
for k in zero:
    print("# FAIL: %s is 0 after traffic" % k)
sys.exit(1 if zero else 0)
EOF
}

# Unprivileged reads work and show the same counters as root's.
nobody_reads()
{
	local cmd rc=0
	for cmd in "show" "channels" "nodes" "chanhisttot" "links" "-j show" "-j channels" "-j nodes" "-j chanhisttot" "-j links"; do
		# shellcheck disable=SC2086
		if ! in_ns "$NS_A" "${NOBODY[@]}" icstat $cmd > "$ICS_TMP/nobody" 2> "$ICS_TMP/nobody.err"; then
			fail "uid 65534: icstat $cmd: $(cat "$ICS_TMP/nobody.err")"
			rc=1
		fi
	done
	# the channels, not the reports' times, which may differ by a second
	in_ns "$NS_A" "${NOBODY[@]}" icstat -j channels | jget 'j["channels"]' > "$ICS_TMP/nobody" &&
		in_ns "$NS_A" icstat -j channels | jget 'j["channels"]' > "$ICS_TMP/root" || return 1
	cmp -s "$ICS_TMP/nobody" "$ICS_TMP/root" || fail "uid 65534 and root see different channel counters" || rc=1
	return $rc
}

nobody_reset()
{
	local before after
	before=$(chan_get "$NS_A" TEST tx msgs)
	expect_err 1 "$EPERM_RE" in_ns "$NS_A" "${NOBODY[@]}" icsctl reset || return 1
	after=$(chan_get "$NS_A" TEST tx msgs)
	assert_eq "TEST tx msgs after the refused reset" "$before" "$after"
}

nobody_bind()
{
	expect_err 1 'icsctl: bind: Operation not permitted \(need CAP_NET_ADMIN\)' \
		in_ns "$NS_A" "${NOBODY[@]}" icsctl bind dev veth0 node 5
}

nobody_send()
{
	local before after
	before=$(chan_get "$NS_A" TEST tx msgs)
	expect_err 1 "$EPERM_RE" \
		in_ns "$NS_A" "${NOBODY[@]}" icsctl send node 2 channel TEST size 10 count 1 || return 1
	after=$(chan_get "$NS_A" TEST tx msgs)
	assert_eq "TEST tx msgs after the refused send" "$before" "$after"
}

root_reset()
{
	local age_before age_after out rc=0
	age_before=$(show_get "$NS_A" reset_age_ms)
	ics_model snap "$NS_B" "$ICS_TMP/b-before" "$NS_A" "$ICS_TMP/a-before" || return 1
	out=$(in_ns "$NS_A" icsctl reset 2>&1) || { fail "icsctl reset: $out"; return 1; }
	ics_snap "$NS_A" "$ICS_TMP/a-after" || return 1
	counters_zero "$ICS_TMP/a-after" "$ICS_TMP/a-before" || rc=1
	age_after=$(jget 'j["show"]["reset_age_ms"]' < "$ICS_TMP/a-after")
	[ "$age_after" -lt "$age_before" ] ||
		fail "reset_age_ms $age_after after the reset, was $age_before before" || rc=1
	# The peer stays known and reachable; the other netns is untouched.
	assert_eq "node 2 reachable after reset" true "$(node_get "$NS_A" 2 reachable)" || rc=1
	ics_snap "$NS_B" "$ICS_TMP/b-after" || return 1
	python3 - "$ICS_TMP/b-before" "$ICS_TMP/b-after" "$ICS_TMP/a-before" "$ICS_TMP/a-after" <<'EOF' || rc=1
import json, sys
a, b, aa, ab = (json.load(open(f)) for f in sys.argv[1:5])
errs = []
if a["chan"]["channels"] != b["chan"]["channels"] or a["show"]["stats"] != b["show"]["stats"]:
    errs.append("reset in netns a changed the counters of netns b")
# The test service's counters and hashes are ics_test's, not the instance's.
for ns, x, y in (("a", aa, ab), ("b", a, b)):
    if x["test"] != y["test"]:
        errs.append("reset in netns a changed the test service's counters or hashes in "
                    "netns %s: %s -> %s" % (ns, json.dumps(x["test"]), json.dumps(y["test"])))
if not aa["test"].get("nodes", {}).get("2", {}).get("tx_hash"):
    errs.append("node 1's test service has no hashes for node 2: the check proves nothing")
for e in errs:
    print("# FAIL: " + e)
sys.exit(1 if errs else 0)
EOF
	return $rc
}

# After the reset, counting starts again from zero.
after_reset()
{
	local out b_ok f0 ok='j["channels"]["TEST"]["rx_ok"]'
	b_ok=$(tsvc_get "$NS_B" "$ok")
	f0=$(link_get "$NS_A" 2 tx_frames)
	ics_send "$NS_A" 1 2 TEST 1000 4 || return 1
	ics_model wait "$NS_B" test "$ok" $((b_ok + 4)) 30 "node 2's test service: TEST rx_ok" &&
	assert_eq "node 2's test service: TEST rx_bad" 0 \
		"$(tsvc_get "$NS_B" 'j["channels"]["TEST"]["rx_bad"]')" || return 1
	out=$(in_ns "$NS_A" icstat -j chanhisttot |
		jget '"%d %d %d" % (j["channels"][14]["tx"]["msgs"], j["channels"][14]["tx"]["bytes"], j["channels"][14]["tx"]["hist"][11])')
	assert_eq "node 1 TEST tx msgs, bytes, row 1k" "4 4000 4" "$out" || return 1
	assert_eq "node 1: node 2 tx_msgs" 4 "$(node_get "$NS_A" 2 tx_msgs)" || return 1
	assert_eq "node 1 link to node 2: data frames sent" 4 $(($(link_get "$NS_A" 2 tx_frames) - f0)) || return 1
	# Every frame node 1 handed to the NIC since the reset: those 4, and
	# whatever retransmits, hellos, acks and resets it counted.
	out=$(in_ns "$NS_A" icstat -j show | jget 'j["stats"]["tx_frames"] - sum(j["stats"][k]
		for k in ("tx_retransmits", "hello_tx", "tx_acks", "tx_resets"))')
	assert_eq "node 1 stats tx_frames - retransmits - hellos - acks - resets" 4 "$out"
}

pair_setup || ics_bail "setup failed"
ics_case "traffic makes every kind of counter non-zero" traffic
ics_case "uid 65534 can read icstat show/channels/nodes/chanhisttot/links, text and JSON" nobody_reads
ics_case "uid 65534: icsctl reset refused with EPERM, counters unchanged" nobody_reset
ics_case "uid 65534: icsctl bind refused with EPERM" nobody_bind
ics_case "uid 65534: icsctl send refused with EPERM, nothing sent" nobody_send
ics_case "icsctl reset zeroes every channel, histogram, node and stats counter of its netns only; link and test-service counters stay" root_reset
ics_case "after reset, counting starts from zero" after_reset
ics_case "teardown: netns deleted, module removed, kernel log clean" ics_teardown_check
ktap_finished
