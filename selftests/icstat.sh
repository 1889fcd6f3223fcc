#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# icstat.sh - icstat as an operator logs it over days: every report carries
# its time and node; -i gives the totals, then each interval's change, and
# the changes add up to the counters exactly, for every view; -r gives them
# per second; --csv writes one line per non-zero value that says the same
# as -j; --share gives each size's and each channel's share of the
# messages, with a bar; `icstat prometheus` passes promtool and Debian's
# node exporter serves it from its textfile collector, whose systemd units
# pass systemd-analyze verify; usage errors are one line and exit 2.
#
#   netns ics$$-a  node 1  veth0 ======= veth0  node 2  netns ics$$-b
#
# Module loaded with heartbeat_ms=3600000, so only the generator's
# messages (node 1 to node 2, on CFS and DLM) move the counters between
# reports.

. "$(dirname "$0")/lib.sh"

ics_init

ISO_RE='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[+-][0-9]{2}:[0-9]{2}'
VIEWS="channels nodes links members"

setup()
{
	pair_setup || return 1
	ics_send "$NS_A" 1 2 CFS 100 30 --wait && ics_send "$NS_A" 1 2 DLM 5000 10 --wait
}

# Every -j report object says when it was read and on which node.
json_time_node()
{
	in_ns "$NS_A" icstat -j chanhisttot $VIEWS > "$ICS_TMP/j" || return 1
	python3 -S - "$ICS_TMP/j" "$ISO_RE" <<'EOF' || { fail "$(cat "$ICS_TMP/j")"; return 1; }
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 5, "%d objects, not 5" % len(lines)
for l in lines:
    j = json.loads(l)
    assert re.fullmatch(sys.argv[2], j["time"]), "time %r" % j["time"]
    assert j["node_id"] == 1, "node_id %r" % j.get("node_id")
    assert "interval" not in j, "one report has no interval"
EOF
}

# interval_run FILE LINES OPTIONS...: icstat OPTIONS (an endless -i 1 run,
# LINES lines a reading; 0: CSV, whose readings each have a "reading"
# line) on node 1 into FILE while node 1 sends 20 messages of 100 bytes
# on CFS; stopped (SIGTERM: icstat ends after the report it is writing,
# with status 0) once two readings began after the sends completed.
interval_run()
{
	local out=$1 lines=$2 pid n count
	shift 2
	count="wc -l < $out"
	[ "$lines" = 0 ] && { count="grep -c ,reading, $out"; lines=1; }
	nsenter --net="$ICS_NETNS_DIR/$NS_A" icstat -i 1 "$@" > "$out" 2> "$out.err" &
	pid=$!
	wait_eq 30 yes "icstat $*: its first report" \
		sh -c "[ -s $out ] && echo yes" || { kill $pid; return 1; }
	ics_send "$NS_A" 1 2 CFS 100 20 --wait || { kill $pid; return 1; }
	n=$(sh -c "$count")
	wait_eq 30 yes "icstat $*: two more reports" \
		sh -c "[ \$($count) -ge $((n + 2 * lines)) ] && echo yes" ||
		{ kill $pid; return 1; }
	kill $pid
	wait $pid || { fail "icstat $*: exit $? on SIGTERM"; return 1; }
	[ ! -s "$out.err" ] || { fail "icstat $*: $(cat "$out.err")"; return 1; }
}

# -i: one report per view and interval, numbered from 0 (the totals); the
# totals plus every interval's change equal the counters read afterwards,
# counter by counter, for every view; states (mtu, votes) as they are.
interval_adds_up()
{
	# shellcheck disable=SC2086  # the views, one word each
	interval_run "$ICS_TMP/iv" 4 -j -n $VIEWS || return 1
	# shellcheck disable=SC2086
	in_ns "$NS_A" icstat -j $VIEWS > "$ICS_TMP/after" || return 1
	python3 -S - "$ICS_TMP/iv" "$ICS_TMP/after" <<'EOF' || { fail "see above"; return 1; }
import json, sys
reps = [json.loads(l) for l in open(sys.argv[1])]
after = [json.loads(l) for l in open(sys.argv[2])]
kinds = ("channels", "nodes", "links", "members")
n = len(reps) // 4
assert n >= 3 and len(reps) == 4 * n, "%d reports" % len(reps)
for i, r in enumerate(reps):
    kind = kinds[i % 4]
    assert kind in r, "report %d: no %s" % (i, kind)
    assert r["interval"] == i // 4, "report %d: interval %r" % (i, r["interval"])
    assert r["per_second"] is False
    assert r["node_id"] == 1
    if r["interval"]:
        assert r["seconds"] > 0 and r["elapsed_s"] >= r["interval"], r
def add(total, d, path=""):
    # total + d, recursively; lists by position, numbers added
    if isinstance(d, dict):
        return {k: add(total[k], d[k], path + "." + k) for k in d}
    if isinstance(d, list):
        return [add(a, b, path) for a, b in zip(total, d)]
    return total + d if isinstance(d, int) and not isinstance(d, bool) else d
def check(kind, key, counters, states):
    tot = None
    for r in reps[kinds.index(kind)::4]:
        items = {x[key]: x for x in r[kind]}
        if tot is None:
            tot = items
            continue
        for k, x in items.items():
            for c in counters:
                if c in x:
                    tot[k][c] = add(tot[k][c], x[c])
            for s in states:
                assert x.get(s) == tot[k].get(s), (kind, k, s, x.get(s), tot[k].get(s))
    fin = {x[key]: x for x in after[kinds.index(kind)][kind]}
    for k in fin:
        for c in counters:
            assert tot[k].get(c) == fin[k].get(c), "%s %s %s: totals + changes %r, counters %r" % (
                kind, k, c, tot[k].get(c), fin[k].get(c))
    return tot
first = next(c for c in reps[0]["channels"] if c["name"] == "CFS")["tx"]["msgs"]
ch = check("channels", "name", ("tx", "rx", "rx_unclaimed"), ("handler",))
moved = ch["CFS"]["tx"]["msgs"] - first
assert moved == 20, "CFS tx msgs moved by %d in the intervals, 20 sent" % moved
check("nodes", "node_id", ("tx_msgs", "tx_bytes", "rx_msgs", "rx_bytes"), ("reachable",))
ctr = ("tx_frames", "retransmits", "fast_retransmits", "timeouts", "rx_frames",
       "duplicates", "out_of_order", "crc_errors", "tx_acks", "rx_acks", "resets",
       "msgs_done", "msgs_failed")
check("links", "node", ctr, ("mtu", "tx_session"))
check("members", "node", ("hb_rx", "hb_missed"), ("state", "votes", "incarnation"))
EOF
}

# -r: no totals report; counters per second, which times the interval's
# length give whole messages: 20 on CFS in all.
rate_per_second()
{
	interval_run "$ICS_TMP/rate" 1 -j -r channels || return 1
	python3 -S - "$ICS_TMP/rate" <<'EOF' || { fail "see above"; return 1; }
import json, sys
reps = [json.loads(l) for l in open(sys.argv[1])]
assert len(reps) >= 2, "%d reports" % len(reps)
total = 0
for i, r in enumerate(reps):
    assert r["interval"] == i + 1 and r["per_second"] is True, r
    cfs = next(c for c in r["channels"] if c["name"] == "CFS")
    msgs = cfs["tx"]["msgs"] * r["seconds"]
    assert abs(msgs - round(msgs)) < 0.01, "%r msgs/s over %r s" % (cfs["tx"]["msgs"], r["seconds"])
    assert abs(cfs["tx"]["bytes"] * r["seconds"] - 100 * round(msgs)) < 0.5
    total += round(msgs)
assert total == 20, "%d messages from the rates, 20 sent" % total
EOF
	in_ns "$NS_A" icstat -r -i 1 -c 1 channels > "$ICS_TMP/rate.txt" || return 1
	grep -Eqx "Interval 1 \([0-9.]+ s\) at $ISO_RE, node 1, per second:" "$ICS_TMP/rate.txt" ||
		{ fail "text heading: $(head -n 1 "$ICS_TMP/rate.txt")"; return 1; }
}

# --csv: the header, then one line per non-zero value; its histogram
# cells, channel and node counters are exactly -j's non-zero ones.
csv_matches_json()
{
	in_ns "$NS_A" icstat --csv chanhisttot $VIEWS > "$ICS_TMP/csv" &&
		in_ns "$NS_A" icstat -j chanhisttot nodes > "$ICS_TMP/csvj" || return 1
	python3 -S - "$ICS_TMP/csv" "$ICS_TMP/csvj" "$ISO_RE" <<'EOF' || { fail "see above"; return 1; }
import json, re, sys
COUNTERS = {"msgs", "bytes", "unclaimed", "tx_frames", "retransmits", "fast_retransmits",
            "timeouts", "rx_frames", "duplicates", "out_of_order", "crc_errors", "tx_acks",
            "rx_acks", "resets", "msgs_done", "msgs_failed", "hb_rx", "hb_missed", "conflicts"}
lines = open(sys.argv[1]).read().splitlines()
hist, nodes = [json.loads(l) for l in open(sys.argv[2])]
assert lines[0] == "time,elapsed_s,node,interval,report,channel,peer,dir,row,metric,value", lines[0]
got = {}
for l in lines[1:]:
    f = l.split(",")
    assert len(f) == 11, l
    assert re.fullmatch(sys.argv[3], f[0]) and f[1] == "0.000" and f[2] == "1" and f[3] == "0", l
    assert f[10] != "" and (f[10] != "0" or f[9] not in COUNTERS), l
    got.setdefault(f[4], {})[tuple(f[5:10])] = f[10]
want = {}
for c in hist["channels"]:
    for d in ("tx", "rx"):
        for row, v in zip(hist["rows"], c[d]["hist"]):
            if v:
                want[(c["name"], "", d, row, "msgs")] = str(v)
assert got["chanhist"] == want, (got["chanhist"], want)
want = {}
for n in nodes["nodes"]:
    for d in ("tx", "rx"):
        for m in ("msgs", "bytes"):
            if n[d + "_" + m]:
                want[("", str(n["node_id"]), d, "", m)] = str(n[d + "_" + m])
    want[("", str(n["node_id"]), "", "", "reachable")] = "1"
assert got["nodes"] == want, (got["nodes"], want)
cfs = next(c for c in hist["channels"] if c["name"] == "CFS")
assert got["channels"][("CFS", "", "tx", "", "msgs")] == str(cfs["tx"]["msgs"])
assert got["channels"][("CFS", "", "tx", "", "bytes")] == str(cfs["tx"]["bytes"])
assert got["links"][("", "2", "", "", "mtu")] == "1500"
assert got["links"][("", "2", "", "", "inflight")] == "0", "a state is logged at 0 too"
assert ("", "2", "", "", "snd_nxt") not in got["links"], "no sequence numbers"
assert got["members"][("", "2", "", "", "state")] == "member"
EOF
	# links: their states (mtu, window) are in every interval's lines
	in_ns "$NS_A" icstat --csv -i 1 -c 2 links > "$ICS_TMP/csv2" || return 1
	assert_eq "header lines, intervals, in an -i 1 -c 2 CSV log" "1 0,1" \
		"$(awk -F, '$1 == "time" { h++ } NR > 1 && !seen[$4]++ { l = l sep $4; sep = "," }
			END { print h, l }' "$ICS_TMP/csv2")"
}

# --share: per direction, each size row's and each channel's messages in
# percent of all of them (the rows and the channels of chanhisttot -j
# summed), in JSON, and in text with a bar of one # per 2 %.
share_matches_counts()
{
	in_ns "$NS_A" icstat -j chanhisttot > "$ICS_TMP/h" &&
		in_ns "$NS_A" icstat -j --share chanhisttot > "$ICS_TMP/s" &&
		in_ns "$NS_A" icstat -n --tx --share chanhisttot > "$ICS_TMP/st" || return 1
	python3 -S - "$ICS_TMP/h" "$ICS_TMP/s" "$ICS_TMP/st" <<'EOF' || { fail "see above"; return 1; }
import json, sys
h = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))["share"]
text = open(sys.argv[3]).read().splitlines()
for d in ("tx", "rx"):
    rows = [sum(c[d]["hist"][i] for c in h["channels"]) for i in range(len(h["rows"]))]
    chans = {c["name"]: sum(c[d]["hist"]) for c in h["channels"]}
    total = sum(rows)
    assert s[d]["msgs"] == total, (d, s[d]["msgs"], total)
    want = [(h["rows"][i], v, round(100 * v / total, 3)) for i, v in enumerate(rows) if v]
    got = [(x["row"], x["msgs"], x["percent"]) for x in s[d]["size"]]
    assert got == want, (d, got, want)
    want = [(n, v, round(100 * v / total, 3)) for n, v in chans.items() if v]
    got = [(x["channel"], x["msgs"], x["percent"]) for x in s[d]["channel"]]
    assert got == want, (d, got, want)
assert "rx" not in text[0] and text[0] == "Sent: %d messages" % s["tx"]["msgs"], text[0]
bars = {l.split()[0]: l for l in text[2:] if l and not l.startswith(("size", "channel"))}
for x in s["tx"]["size"] + s["tx"]["channel"]:
    key = x.get("row", x.get("channel"))
    f = bars[key].split()
    assert f[1] == str(x["msgs"]) and f[2] == "%.1f%%" % x["percent"], bars[key]
    assert (f[3] if len(f) > 3 else "") == "#" * int(x["percent"] / 2 + 0.5), bars[key]
EOF
}

# icstat-plot on a real CSV log (icstat --csv -i 1 chanhisttot while 20
# messages go out): three PNGs, and the shares it prints are of what the
# log's intervals add up to, i.e. the counters after it minus its totals.
plot_dump()
{
	sed 's/^/#   /' "$ICS_TMP/plot.out"
	grep -E ',(reading|chanhist),' "$ICS_TMP/log.csv" | sed 's/^/#   log: /'
}

plot_from_log()
{
	command -v gnuplot >/dev/null || { echo "# gnuplot not installed (gnuplot-nox)"; return 4; }
	interval_run "$ICS_TMP/log.csv" 0 --csv chanhisttot || return 1
	in_ns "$NS_A" icstat -j chanhisttot > "$ICS_TMP/log.after" &&
		"$ICS_TOP/user/icstat-plot" -o "$ICS_TMP/plot" "$ICS_TMP/log.csv" > "$ICS_TMP/plot.out" ||
		return 1
	python3 -S - "$ICS_TMP/log.csv" "$ICS_TMP/log.after" "$ICS_TMP/plot.out" "$ICS_TMP/plot" \
		<<'EOF2' || { fail "see above"; plot_dump; return 1; }
import json, sys
log = [l.split(",") for l in open(sys.argv[1]).read().splitlines()[1:]]
after = json.load(open(sys.argv[2]))
out = open(sys.argv[3]).read().splitlines()
rows, chans = {}, {}
for c in after["channels"]:
    for i, v in enumerate(c["tx"]["hist"]):
        rows[after["rows"][i]] = rows.get(after["rows"][i], 0) + v
        chans[c["name"]] = chans.get(c["name"], 0) + v
for f in log:
    if f[4] == "chanhist" and f[3] == "0" and f[7] == "tx":
        rows[f[8]] -= int(f[10])
        chans[f[5]] -= int(f[10])
total = sum(rows.values())
assert total == 20 and chans["CFS"] == 20, (total, chans)
assert out[0] == "Sent: %d messages" % total, out[0]
got = {l.split()[0]: int(l.split()[1]) for l in out[2:] if l and l.split()[0] not in ("size", "channel")}
want = {k: v for k, v in list(rows.items()) + list(chans.items()) if v}
assert got == want, (got, want)
for p in ("sizes", "channels", "rate"):
    b = open("%s-%s.png" % (sys.argv[4], p), "rb").read()
    assert b[:8] == b"\x89PNG\r\n\x1a\n" and len(b) > 10000, (p, len(b))
EOF2
}

# icstat prometheus: promtool (Debian's prometheus package) finds nothing
# to say, and the numbers are icstat -j's: channels' counts and size
# histograms (cumulative buckets from the chanhist rows; and, from the
# sizes sent, CFS's 100-byte messages are above le 64 and within le 128,
# DLM's 5000-byte ones above 4096 and within 8192), links, members,
# instance counters.
prometheus_metrics()
{
	command -v promtool >/dev/null || { echo "# promtool not installed (package prometheus)"; return 4; }
	in_ns "$NS_A" icstat prometheus > "$ICS_TMP/prom" &&
		in_ns "$NS_A" icstat -j chanhisttot links show > "$ICS_TMP/promj" || return 1
	promtool check metrics < "$ICS_TMP/prom" > "$ICS_TMP/promtool" 2>&1 ||
		{ fail "promtool check metrics: $(head -n 5 "$ICS_TMP/promtool")"; return 1; }
	python3 -S - "$ICS_TMP/prom" "$ICS_TMP/promj" <<'EOF2' || { fail "see above"; return 1; }
import json, sys
prom = {}
for l in open(sys.argv[1]):
    if not l.startswith("#"):
        k, v = l.rsplit(" ", 1)
        prom[k] = float(v)
hist, links, show = [json.loads(l) for l in open(sys.argv[2])]
def g(k):
    assert k in prom, "no %s" % k
    return prom[k]
for c in hist["channels"]:
    for d in ("tx", "rx"):
        lab = 'channel="%s",direction="%s"' % (c["name"], d)
        assert g("ics_channel_messages_total{%s}" % lab) == c[d]["msgs"], lab
        assert g("ics_channel_bytes_total{%s}" % lab) == c[d]["bytes"], lab
        cum = 0
        for r, v in enumerate(c[d]["hist"][:-1]):
            cum += v
            le = 0 if r == 0 else 1 << (r - 1)
            assert g('ics_channel_message_size_bytes_bucket{%s,le="%d"}' % (lab, le)) == cum, (lab, le)
        cum += c[d]["hist"][-1]
        assert g('ics_channel_message_size_bytes_bucket{%s,le="+Inf"}' % lab) == cum
        assert g("ics_channel_message_size_bytes_count{%s}" % lab) == cum
        assert g("ics_channel_message_size_bytes_sum{%s}" % lab) == c[d]["bytes"]
cfs = next(c for c in hist["channels"] if c["name"] == "CFS")["tx"]["msgs"]
b = 'ics_channel_message_size_bytes_bucket{channel="%s",direction="tx",le="%s"}'
assert cfs >= 30 and g(b % ("CFS", 64)) == 0 and g(b % ("CFS", 128)) == cfs, cfs
assert g(b % ("DLM", 4096)) == 0 and g(b % ("DLM", 8192)) == 10
l = links["links"][0]
assert g('ics_link_messages_done_total{peer="2"}') == l["msgs_done"]
assert g('ics_link_tx_frames_total{peer="2"}') == l["tx_frames"]
assert g('ics_link_mtu_bytes{peer="2"}') == l["mtu"] == 1500
assert g('ics_node_reachable{peer="2"}') == 1
p = 'ics_peer_channel_%s_total{peer="2",channel="%s",direction="%s"}'
assert g(p % ("messages", "CFS", "tx")) == cfs and g(p % ("messages", "DLM", "tx")) == 10
assert g(p % ("bytes", "DLM", "tx")) == 50000 and g(p % ("messages", "CFS", "rx")) == 0
assert not any(k.startswith("ics_peer_channel_") and 'channel="CNX"' in k for k in prom)
assert g('ics_member_state{member="2",state="member"}') == 1
assert g('ics_member_state{member="2",state="down"}') == 0
assert g('ics_member_state{member="1",state="member"}') == 1
assert g("ics_has_quorum") == 1 and g("ics_up") == 1
assert g("ics_reasm_mem_max_bytes") == show["reasm_mem_max"] > 0
assert g("ics_reasm_mem_bytes") >= 0 and g("ics_reasm_reserved_bytes") >= 0
assert g('ics_info{ifname="veth0",node_id="1",cluster_id="%d",state="bound",auth="%s"}' % (
    show["cluster_id"], show["auth"])) == 1
for k, v in show["stats"].items():
    assert g("ics_stat_%s_total" % k) == v, k
EOF2
}

# icstat-textfile and Debian's prometheus-node-exporter: the exporter's
# textfile collector serves ics's metrics on 127.0.0.1 in node 1's netns;
# and with the module unloadable or unbound, ics_up 0.
node_exporter_serves()
{
	local dir=$ICS_TMP/textfile port=9100 pid out
	command -v prometheus-node-exporter >/dev/null ||
		{ echo "# prometheus-node-exporter not installed"; return 4; }
	mkdir -p "$dir" && in_ns "$NS_A" "$ICS_TOP/user/icstat-textfile" "$dir" || return 1
	nsenter --net="$ICS_NETNS_DIR/$NS_A" prometheus-node-exporter \
		--collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$dir" \
		--web.listen-address=127.0.0.1:$port > "$ICS_TMP/ne.log" 2>&1 &
	pid=$!
	wait_eq 60 yes "node exporter listening" sh -c \
		"nsenter --net=$ICS_NETNS_DIR/$NS_A curl -sf http://127.0.0.1:$port/metrics >/dev/null && echo yes" ||
		{ kill $pid; sed 's/^/#   /' "$ICS_TMP/ne.log" | tail -n 5; return 1; }
	out=$(in_ns "$NS_A" curl -sf http://127.0.0.1:$port/metrics)
	kill $pid
	wait $pid 2>/dev/null
	assert_eq "the exporter's ics_link_messages_done_total" \
		"ics_link_messages_done_total{peer=\"2\"} $(link_get "$NS_A" 2 msgs_done)" \
		"$(echo "$out" | grep '^ics_link_messages_done_total')" || return 1
	assert_eq "the exporter's textfile errors" "node_textfile_scrape_error 0" \
		"$(echo "$out" | grep '^node_textfile_scrape_error')" || return 1
	# in a netns with no instance: ics_up 0, icstat's reason on stderr, exit 1
	out=$(in_ns "$NS_B" unshare -n "$ICS_TOP/user/icstat-textfile" "$dir" 2>&1)
	assert_eq "icstat-textfile without an instance: exit status" 1 $? || return 1
	assert_eq "icstat-textfile without an instance: temporary files left" "" \
		"$(ls -A "$dir" | grep -v '^ics.prom$')" || return 1
	assert_eq "icstat-textfile without an instance: the file" "ics_up 0" \
		"$(grep -v '^#' "$dir/ics.prom")" || return 1
	assert_eq "icstat-textfile without an instance: stderr" \
		"icstat: no ics instance in this network namespace (bind one with icsctl bind)" "$out"
}

# The systemd units of the recipe pass systemd-analyze verify (with the
# service's @SBINDIR@ set to the tree's user/).
systemd_units_verify()
{
	local d=$ICS_TMP/units out
	command -v systemd-analyze >/dev/null || { echo "# systemd-analyze not installed"; return 4; }
	mkdir -p "$d/man/man8" && ln -s "$ICS_TOP/Documentation/man/icstat.8" "$d/man/man8/" &&
		sed "s|@SBINDIR@|$ICS_TOP/user|g" "$ICS_TOP/user/systemd/ics-textfile.service.in" \
			> "$d/ics-textfile.service" &&
		cp "$ICS_TOP/user/systemd/ics-textfile.timer" "$d/" || return 1
	out=$(MANPATH=$d/man systemd-analyze verify "$d/ics-textfile.service" "$d/ics-textfile.timer" 2>&1) ||
		{ fail "systemd-analyze verify: $out"; return 1; }
	[ -z "$out" ] || { fail "systemd-analyze verify says: $out"; return 1; }
}

# Per peer: with one peer, node 2's channels (chanhisttot -N 2) are the
# channels' counters, CNX aside (hellos are not data); peerhisttot is their
# sum, and nodes' counters; intervals add up; --csv names the peer; a reset
# zeroes them, node 2's unbind keeps its tables of node 1.
peer_views()
{
	interval_run "$ICS_TMP/pv" 2 -j -n -N 2 chanhisttot peerhisttot || return 1
	in_ns "$NS_A" icstat -j -N 2 chanhisttot peerhisttot chanhisttot nodes > "$ICS_TMP/pa" &&
		in_ns "$NS_A" icstat --csv -N 2 chanhisttot > "$ICS_TMP/pcsv" || return 1
	python3 -S - "$ICS_TMP/pv" "$ICS_TMP/pa" "$ICS_TMP/pcsv" <<'EOF' || { fail "see above"; return 1; }
import json, sys
reps = [json.loads(l) for l in open(sys.argv[1])]
pch, ph, ch, nodes = [json.loads(l) for l in open(sys.argv[2])]
def zero():
    return {"msgs": 0, "bytes": 0, "hist": [0] * 27}
def add(a, b):
    return {"msgs": a["msgs"] + b["msgs"], "bytes": a["bytes"] + b["bytes"],
            "hist": [x + y for x, y in zip(a["hist"], b["hist"])]}
assert pch["peer"] == 2 and "handler" not in pch["channels"][0], pch
sums = {"tx": zero(), "rx": zero()}
for p, c in zip(pch["channels"], ch["channels"]):
    for d in ("tx", "rx"):
        want = zero() if c["name"] == "CNX" else {k: c[d][k] for k in ("msgs", "bytes", "hist")}
        assert p[d] == want, "%s %s: node 2's %s, the channel's %s" % (c["name"], d, p[d], want)
        sums[d] = add(sums[d], p[d])
assert sums["tx"]["msgs"] >= 40, "only %d messages to node 2" % sums["tx"]["msgs"]
peer = ph["peers"]
assert [p["node"] for p in peer] == [2], peer
n2 = next(n for n in nodes["nodes"] if n["node_id"] == 2)
for d in ("tx", "rx"):
    assert peer[0][d] == sums[d], (d, peer[0][d], sums[d])
    assert (n2[d + "_msgs"], n2[d + "_bytes"]) == (sums[d]["msgs"], sums[d]["bytes"]), (d, n2)
# intervals: totals + changes = the tables read afterwards
tot_c, tot_p = None, None
for r in reps:
    if "channels" in r:
        assert r["peer"] == 2, r
        cur = {c["name"]: {d: c[d] for d in ("tx", "rx")} for c in r["channels"]}
        tot_c = cur if tot_c is None else {
            k: {d: add(tot_c[k][d], v[d]) for d in v} for k, v in cur.items()}
    else:
        cur = {p["node"]: {d: p[d] for d in ("tx", "rx")} for p in r["peers"]}
        tot_p = cur if tot_p is None else {
            k: {d: add(tot_p.get(k, {"tx": zero(), "rx": zero()})[d], v[d]) for d in v}
            for k, v in cur.items()}
assert len(reps) >= 6 and reps[-1]["interval"] >= 2, "%d reports" % len(reps)
for c in pch["channels"]:
    for d in ("tx", "rx"):
        assert tot_c[c["name"]][d] == c[d], (c["name"], d, tot_c[c["name"]][d], c[d])
assert tot_p[2]["tx"] == sums["tx"] and tot_p[2]["rx"] == sums["rx"], tot_p
lines = [l.split(",") for l in open(sys.argv[3]) if ",chanhist," in l]
assert lines and all(l[6] == "2" for l in lines), lines[:3]
assert sum(int(l[10]) for l in lines if l[7] == "tx") == sums["tx"]["msgs"], lines
EOF
	in_ns "$NS_B" icstat -j -N 1 chanhisttot > "$ICS_TMP/b-before" &&
		in_ns "$NS_B" icsctl unbind && in_ns "$NS_B" icstat -j -N 1 chanhisttot > "$ICS_TMP/b-after" ||
		return 1
	ics_bind "$NS_B" veth0 2 && ics_model reachable 30 "$NS_A:2" "$NS_B:1" || return 1
	python3 -S - "$ICS_TMP/b-before" "$ICS_TMP/b-after" <<'EOF' || { fail "unbind changed node 2's tables"; return 1; }
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["channels"] == b["channels"] and any(c["rx"]["msgs"] for c in a["channels"]), (a, b)
EOF
	in_ns "$NS_A" icsctl reset || return 1
	assert_eq "node 1's messages with node 2 after a reset" "0 []" \
		"$(in_ns "$NS_A" icstat -j -N 2 chanhisttot peerhisttot | python3 -S -c '
import json, sys
c, p = (json.loads(l) for l in sys.stdin)
print(sum(x[d]["msgs"] for x in c["channels"] for d in ("tx", "rx")), p["peers"])')"
}

# -i across icsctl reset: the interval with the reset shows the counters
# since it whole (3 messages before it, 5 after: 8 in all, not 3 + (5 - 3)).
interval_across_reset()
{
	local out=$ICS_TMP/reset pid n
	in_ns "$NS_A" icsctl reset || return 1
	nsenter --net="$ICS_NETNS_DIR/$NS_A" icstat -j -i 1 channels > "$out" &
	pid=$!
	wait_eq 30 yes "first report" sh -c "[ -s $out ] && echo yes" &&
		ics_send "$NS_A" 1 2 CFS 100 3 --wait && n=$(wc -l < "$out") &&
		wait_eq 30 yes "a reading after 3 sent" sh -c "[ \$(wc -l < $out) -ge $((n + 2)) ] && echo yes" &&
		in_ns "$NS_A" icsctl reset && ics_send "$NS_A" 1 2 CFS 100 5 --wait &&
		n=$(wc -l < "$out") &&
		wait_eq 30 yes "a reading after 5 sent" sh -c "[ \$(wc -l < $out) -ge $((n + 2)) ] && echo yes" ||
		{ kill $pid; return 1; }
	kill $pid
	wait $pid || { fail "icstat: exit $? on SIGTERM"; return 1; }
	assert_eq "CFS messages sent in the intervals" 8 "$(python3 -S -c '
import json, sys
reps = [json.loads(l) for l in open(sys.argv[1])]
print(sum(next(c for c in r["channels"] if c["name"] == "CFS")["tx"]["msgs"]
          for r in reps if r["interval"]))' "$out")"
}

# -i across a module reload: the readings while ics is away fail (one
# line each on stderr, which the wait for the first of them requires), the log goes on once it is back and bound, the
# first interval after counts from the load, and the exit status says a
# reading failed.
interval_outlives_reload()
{
	local out=$ICS_TMP/reload pid n
	nsenter --net="$ICS_NETNS_DIR/$NS_A" icstat -j -i 1 channels > "$out" 2> "$out.err" &
	pid=$!
	wait_eq 30 yes "first report" sh -c "[ -s $out ] && echo yes" && ics_unload &&
		wait_eq 30 yes "a failed reading" sh -c "[ -s $out.err ] && echo yes" &&
		ics_load "heartbeat_ms=$ICS_HB_LONG" && pair_bind &&
		ics_send "$NS_A" 1 2 CFS 100 4 --wait && n=$(wc -l < "$out") &&
		wait_eq 30 yes "two readings after 4 sent" \
			sh -c "[ \$(wc -l < $out) -ge $((n + 2)) ] && echo yes" ||
		{ kill $pid; return 1; }
	kill $pid
	wait $pid
	assert_eq "icstat's exit status after failed readings" 1 $? || return 1
	# one line a failed reading: the request on the old family, then perhaps
	# "module not loaded" or "no ics instance" until it is back and bound
	grep -qv '^icstat: ' "$out.err" &&
		{ fail "stderr, not one line a failure: $(head -n 3 "$out.err")"; return 1; }
	assert_eq "the first failed reading" "icstat: channels: the ics module went away (unloaded)" \
		"$(head -n 1 "$out.err")"
	assert_eq "CFS messages sent in the intervals" 4 "$(python3 -S -c '
import json, sys
reps = [json.loads(l) for l in open(sys.argv[1])]
print(sum(next(c for c in r["channels"] if c["name"] == "CFS")["tx"]["msgs"]
          for r in reps if r["interval"]))' "$out")"
}

usage_errors()
{
	expect_err 2 'icstat: --csv and -j or -p: one output format at a time' \
		icstat --csv -j channels || return 1
	expect_err 2 'icstat: channels: options -c, -y and -r need -i SECONDS' \
		icstat -r channels || return 1
	expect_err 2 'icstat: channels: options -c, -y and -r need -i SECONDS' \
		icstat -c 3 channels || return 1
	expect_err 2 'icstat: show: no interval form \(use channels, nodes, links or members\)' \
		icstat -i 1 show || return 1
	expect_err 2 'icstat: show: no CSV form \(use channels, nodes, links or members\)' \
		icstat --csv channels show || return 1
	expect_err 2 'icstat: monitor: takes none of -i, --csv, --share' icstat --csv monitor ||
		return 1
	expect_err 2 'icstat: links: option --share is for chanhisttot and chanhist' \
		icstat --share links || return 1
	expect_err 2 'icstat: --share has no CSV form \(the CSV log has the counts\)' \
		icstat --csv --share chanhisttot || return 1
	expect_err 2 'icstat: prometheus: takes none of -i, -j, -n, -N, --tx, --rx, --csv, --share' \
		icstat -j prometheus || return 1
	expect_err 2 'icstat: prometheus: takes none of -i, -j, -n, -N, --tx, --rx, --csv, --share' \
		icstat --tx prometheus || return 1
	expect_err 2 'icstat: prometheus: runs alone, not with links' icstat links prometheus ||
		return 1
	expect_err 2 'icstat: invalid interval "0" \(seconds, >= 1\)' icstat -i 0 links
}

step_add setup
case_add "-j: every report carries its time (ISO 8601) and node id" json_time_node
case_add "-i: totals, then each interval's change, adding up to the counters, every view" \
	interval_adds_up
case_add "-r: counters per second over each measured interval" rate_per_second
case_add "--csv: one line per non-zero value, the same values as -j" csv_matches_json
case_add "--share: each size's and each channel's share of the messages, with bars" \
	share_matches_counts
case_add "icstat-plot: three PNGs from a real CSV log, of the shares its intervals add up to" \
	plot_from_log
case_add "prometheus: promtool finds nothing to say; the values are icstat -j's" \
	prometheus_metrics
case_add "the node exporter's textfile collector serves them on 127.0.0.1; ics_up 0 without ics" \
	node_exporter_serves
case_add "the textfile recipe's systemd units pass systemd-analyze verify" systemd_units_verify
case_add "per peer: -N chanhisttot, peerhisttot, their intervals and CSV; reset; unbind" \
	peer_views
case_add "-i across icsctl reset: the interval with the reset shows what moved since" \
	interval_across_reset
case_add "-i across a module reload: readings fail while it is away, the log goes on" \
	interval_outlives_reload
case_add "usage errors: one line, exit 2" usage_errors
case_once "teardown: netns deleted, module removed, kernel log clean" ics_teardown_check
cases_run
