#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# icsperf.sh - icsperf for long runs and fair comparisons
# (Documentation/man/icsperf.8): the start-up probe, interim results of
# each interval, a stop signal's summary, -P streams on one channel, each
# direction of a bistream, confidence intervals, and what -j says the
# numbers were taken on. Every count icsperf reports is checked against
# the kernel's channel counters.
#
#   netns ics$$-a                          netns ics$$-b
#   +--------------------------+           +--------------------------+
#   | ics node 1               |           | ics node 2               |
#   |  icsperf lat|stream|...  |           |  `icsperf server` on TEST|
#   |  test service on CFSR    |           |  test service on KCH,    |
#   |                          |           |  CFSR                    |
#   |  veth0                   +---veth----+  veth0                   |
#   +--------------------------+           +--------------------------+
#
# Control messages on TEST besides the measured ones, per icsperf call:
# one probe (16 bytes each way) and, per run, two requests for the
# server's CPU time (16 bytes out, 8 back).

ICS_ATTACH=none
. "$(dirname "$0")/lib.sh"

ics_init
command -v icsperf >/dev/null || ics_skip_all "icsperf not in PATH (make -C user)"

setup() { pair_setup; }

# bg NS CMD...: CMD in NS, in the background, as $! itself (not a subshell
# of in_ns), so that a signal sent to $! reaches it.
bg_in() { local ns=$1; shift; nsenter --net="$ICS_NETNS_DIR/$ns" "$@" & }

# snap NS...: note the TEST counters of each NS; delta NS DIR FIELD: since
snap()
{
	local ns d f
	for ns in "$@"; do
		for d in tx rx; do
			for f in msgs bytes; do
				chan_get "$ns" TEST $d $f > "$ICS_TMP/$ns.$d.$f" || return 1
			done
		done
	done
}
delta() { echo $(($(chan_get "$1" TEST "$2" "$3") - $(cat "$ICS_TMP/$1.$2.$3"))); }

# res FILE EXPR: EXPR over the last line of an icsperf -j output (j)
res() { tail -n 1 "$1" | jget "$2"; }

server_start()
{
	bg_in "$NS_B" icsperf server > "$ICS_TMP/server.out" 2>&1
	ICS_BG_PIDS+=($!)
	SERVER=$!
	wait_eq 30 true "icsperf server bound to TEST" chan_get "$NS_B" TEST handler
}

server_stop()
{
	kill -TERM "$SERVER" && wait "$SERVER"
	local rc=$?
	assert_eq "the server's exit on SIGTERM" 0 $rc &&
		wait_eq 30 false "TEST free on node 2" chan_get "$NS_B" TEST handler
}

# A server ends on SIGTERM with exit 0; another takes its place.
server_restart() { server_stop && server_start; }

# With no responder the probe says so in one line, within a second, and
# what to do; so for a node that is not a member, and no test service.
probe()
{
	local t0=$SECONDS
	expect_err 1 'icsperf: no icsperf server answers on node 2, channel TEST, in 1 s \(start one there: icsperf server -c TEST; or use its test service: --peer kernel\)' \
		in_ns "$NS_A" icsperf lat 2 -s 64 || return 1
	info "no server: told after $((SECONDS - t0)) s"
	expect_err 1 "icsperf: no answer from node 2's test service on PRI1 in 1 s \(icsctl test attach PRI1 there\)" \
		in_ns "$NS_A" icsperf stream 2 -c PRI1 --peer kernel -s 64 || return 1
	expect_err 1 'icsperf: node 7 is not a member now \(icstat members\)' \
		in_ns "$NS_A" icsperf lat 7 || return 1
	expect_err 1 "icsperf: no answer from node 2's test service on PRI1 in 1 s \(icsctl test attach PRI1, there and here\)" \
		in_ns "$NS_A" icsperf lat 2 -k -c PRI1 -s 64 || return 1
	expect_err 2 'icsperf: -P takes 1\.\.16' icsperf lat 2 -P 17 || return 1
	expect_err 2 'icsperf: -R is for user lat, bistream and rr-load' icsperf stream 2 -R 64 ||
		return 1
	expect_err 2 'icsperf: bistream needs a window: -w 1 or more' icsperf bistream 2 -w 0 ||
		return 1
	expect_err 2 'icsperf: -w 0: size 8 is under the 16 bytes that ask the server to sink and count' \
		icsperf stream 2 -w 0 -s 8-64 || return 1
	expect_err 2 'icsperf: unknown option "-x" \(try "icsperf --help"\)' icsperf -x lat 2
}

# interim_check FILE MIN: at least MIN interim lines before the result,
# each an interval's own count (they add up to no more than the total),
# with an RFC 3339 time.
interim_check()
{
	python3 - "$1" "$2" <<'EOF'
import json, re, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
res, ivs = lines[-1], lines[:-1]
total = sum(r["msgs"] for r in res["results"])
ok = len(ivs) >= int(sys.argv[2])
ok &= all(i.get("interim") is True and i["msgs"] > 0 and
          re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d", i["time"])
          for i in ivs)
ok &= sum(i["msgs"] for i in ivs) <= total
ok &= all(a["elapsed"] < b["elapsed"] for a, b in zip(ivs, ivs[1:]))
print("# %d intervals: %s; total %d" % (len(ivs), [i["msgs"] for i in ivs], total))
sys.exit(0 if ok else 1)
EOF
}

# -D: each line what moved in its interval, for lat (and its round trips),
# a stream, rr-load and -k; the totals equal the kernel's counts.
interim()
{
	local out=$ICS_TMP/d.json n t
	snap "$NS_A" "$NS_B" || return 1
	in_ns "$NS_A" icsperf lat 2 -s 64 -l 2 -D 0.5 -j > "$out" ||
		{ fail "icsperf lat -D: $(cat "$out")"; return 1; }
	interim_check "$out" 2 || { fail "lat -D: intervals"; return 1; }
	n=$(res "$out" 'j["results"][0]["msgs"]')
	assert_eq "node 1 TEST tx = round trips + probe + 2 CPU requests" $((n + 3)) \
		"$(delta "$NS_A" tx msgs)" || return 1
	[ "$(head -n 1 "$out" | jget 'j["p50_us"] > 0')" = true ] ||
		{ fail "no round trips in an interval: $(head -n 1 "$out")"; return 1; }
	for t in "stream 2 -s 1k -w 8" "rr-load 2 -s 64 -r 200" "stream 2 -k -c CFSR -s 4k" \
		 "lat 2 -k -c CFSR -s 64"; do
		# shellcheck disable=SC2086
		in_ns "$NS_A" icsperf $t -l 2 -D 0.5 -j > "$out" ||
			{ fail "icsperf $t -D: $(cat "$out")"; return 1; }
		interim_check "$out" 2 || { fail "$t -D: intervals"; return 1; }
	done
	# -k lat: chunks of the generator, each one's round trips in the histogram
	[ "$(res "$out" '(lambda r: 0 < r["p50_us"] <= r["max_us"])(j["results"][0])')" = true ] ||
		fail "-k lat: round trips: $(tail -n 1 "$out")"
}

# The first SIGINT ends the run where it is and prints what was measured;
# exit 130. Sent mid-round-trip, at most one request is left unanswered.
stop()
{
	local out=$ICS_TMP/stop.json pid rc n tx
	snap "$NS_A" || return 1
	bg_in "$NS_A" icsperf lat 2 -s 64 -l 60 -D 0.3 -j > "$out" 2>"$ICS_TMP/stop.err"
	pid=$!
	wait_eq 60 yes "an interim line" sh -c "grep -q interim $out && echo yes" || return 1
	kill -INT $pid
	wait $pid
	rc=$?
	assert_eq "exit after SIGINT" 130 $rc || { cat "$ICS_TMP/stop.err"; return 1; }
	[ "$(res "$out" 'j["interrupted"] and j["results"][0]["msgs"] > 0')" = true ] ||
		{ fail "no summary: $(tail -n 1 "$out")"; return 1; }
	interim_check "$out" 1 || return 1
	n=$(res "$out" 'j["results"][0]["msgs"]')
	tx=$(delta "$NS_A" tx msgs)
	# the probe, one CPU request, the round trips, maybe one unanswered
	[ $((tx - n - 2)) -ge 0 ] && [ $((tx - n - 2)) -le 1 ] ||
		fail "node 1 sent $tx TEST messages for $n round trips"
	# -k: the generator's run under way ends too
	bg_in "$NS_A" icsperf lat 2 -k -c CFSR -s 64 -l 60 -D 0.3 -j > "$out" 2>&1
	pid=$!
	wait_eq 60 yes "an interim line (-k)" sh -c "grep -q interim $out && echo yes" || return 1
	kill -INT $pid
	wait $pid
	assert_eq "exit after SIGINT (-k)" 130 $? || { cat "$out"; return 1; }
	[ "$(res "$out" 'j["interrupted"] and j["results"][0]["msgs"] > 0')" = true ] ||
		fail "-k: no summary: $(tail -n 1 "$out")"
}

# -P 3: three threads on TEST, which no other channel sees; each stream is
# reported and they add up to the total and the kernel's count.
streams_check()
{
	python3 - "$1" <<'EOF'
import json, sys
j = json.loads(open(sys.argv[1]).readlines()[-1])
ok = j["streams"] == 3
for r in j["results"]:
    st = r["streams"]
    ok &= len(st) == 3 and all(s["msgs"] > 0 for s in st)
    ok &= sum(s["msgs"] for s in st) == r["msgs"]
    ok &= r["stream_mean"] > 0 and r["stream_sd"] >= 0
    print("# %s: %s, mean %.3f, sd %.3f" % (r["size"], [s["msgs"] for s in st],
                                         r["stream_mean"], r["stream_sd"]))
sys.exit(0 if ok else 1)
EOF
}

parallel()
{
	local out=$ICS_TMP/p.json t n others0 others1
	others0=$(icstat_get "$NS_A" channels 'sum(c["tx"]["msgs"] for c in j["channels"] if c["name"] != "TEST")')
	for t in "stream 2 -s 1k -w 8" "lat 2 -s 64" "bistream 2 -s 2k -w 4" "stream 2 -s 64 -w 0"; do
		snap "$NS_A" "$NS_B" || return 1
		# shellcheck disable=SC2086
		in_ns "$NS_A" icsperf $t -P 3 -l 1 -j > "$out" ||
			{ fail "icsperf $t -P 3: $(cat "$out")"; return 1; }
		streams_check "$out" || { fail "$t -P 3: $(cat "$out")"; return 1; }
		n=$(res "$out" 'j["results"][0]["msgs"]')
		if [[ $t == *"-w 0"* ]]; then
			# what the server read, by stream; it read every message sent
			# (flow control) and the requests: the probe, 2 CPU, 2+ counts
			assert_eq "node 1 TEST tx = node 2 TEST rx" "$(delta "$NS_A" tx msgs)" \
				"$(delta "$NS_B" rx msgs)" || return 1
			[ $(($(delta "$NS_B" rx msgs) - n)) -ge 5 ] &&
				[ $(($(delta "$NS_B" rx msgs) - n)) -le 16 ] ||
				{ fail "node 2 took $(delta "$NS_B" rx msgs) for $n sunk"; return 1; }
		else
			assert_eq "$t: node 1 TEST tx = answered + probe + 2 CPU" $((n + 3)) \
				"$(delta "$NS_A" tx msgs)" || return 1
		fi
	done
	others1=$(icstat_get "$NS_A" channels 'sum(c["tx"]["msgs"] for c in j["channels"] if c["name"] != "TEST")')
	assert_eq "messages on other channels" "$others0" "$others1"
}

# bistream -R: each direction on its own, and on the wire: node 2 sent
# the answers of 256 bytes (and the probe's and CPU answers, 16 + 2 x 8).
directions()
{
	local out=$ICS_TMP/bi.json n
	snap "$NS_B" || return 1
	in_ns "$NS_A" icsperf bistream 2 -s 4k -R 256 -w 8 -l 1 -j > "$out" ||
		{ fail "icsperf bistream -R: $(cat "$out")"; return 1; }
	n=$(res "$out" 'j["results"][0]["msgs"]')
	[ "$n" -gt 8 ] || { fail "bistream moved $n"; return 1; }
	assert_eq "node 2 TEST tx bytes" $((n * 256 + 32)) "$(delta "$NS_B" tx bytes)" || return 1
	assert_eq "node 2 TEST rx bytes" $((n * 4096 + 48)) "$(delta "$NS_B" rx bytes)" || return 1
	assert_eq "out/in MB/s" true \
		"$(res "$out" 'abs(j["results"][0]["out_mb_s"] - 16 * j["results"][0]["in_mb_s"]) < 1e-3 * j["results"][0]["out_mb_s"]')" || return 1
	in_ns "$NS_A" icsperf bistream 2 -s 4k -R 256 -w 8 -l 0.5 | grep -Eq 'out [0-9.]+ MB/s, in [0-9.]+ MB/s' ||
		fail "no directions in the text output"
}

# -I/-i: runs until the interval is met, between MIN and MAX of them; an
# interval too narrow to meet stops at MAX and says so. Every run's
# messages are counted.
confidence()
{
	local out=$ICS_TMP/ci.json n runs
	snap "$NS_A" || return 1
	in_ns "$NS_A" icsperf lat 2 -s 64 -l 0.3 -I 95,5 -i 3,3 -j > "$out" ||
		{ fail "icsperf -I: $(cat "$out")"; return 1; }
	assert_eq "runs" 3 "$(res "$out" 'j["results"][0]["runs"]')" || return 1
	n=$(res "$out" 'j["results"][0]["msgs"]')
	assert_eq "node 1 TEST tx = round trips + probe + 2 CPU per run" $((n + 1 + 6)) \
		"$(delta "$NS_A" tx msgs)" || return 1
	# no two runs' throughput is the same to 10^-6
	in_ns "$NS_A" icsperf stream 2 -s 1k -l 0.3 -I 95,0.000001 -i 3,2 -j > "$out" ||
		{ fail "icsperf -I: $(cat "$out")"; return 1; }
	assert_eq "runs, ci_met" "3 False" "$(res "$out" '"%d %s" % (j["results"][0]["runs"], j["results"][0]["ci_met"])')" || return 1
	in_ns "$NS_A" icsperf stream 2 -s 1k -l 0.3 -I 99,80 -i 6,2 -j > "$out" ||
		{ fail "icsperf -I: $(cat "$out")"; return 1; }
	runs=$(res "$out" 'j["results"][0]["runs"]')
	[ "$runs" -ge 2 ] && [ "$runs" -le 6 ] || { fail "runs $runs, not 2..6"; return 1; }
	[ "$(res "$out" '(lambda r: r["ci_met"] == (2 * r["ci_half_pct"] <= 80) and (r["ci_met"] or r["runs"] == 6))(j["results"][0])')" = true ] ||
		fail "interval: $(tail -n 1 "$out")"
	info "stream -I 99,80: $runs runs, +/- $(res "$out" 'j["results"][0]["ci_half_pct"]') %"
}

# -j says what the numbers were taken on; each tool says its version.
metadata()
{
	local out=$ICS_TMP/m.json v tool
	v=$(cat "$ICS_TOP/VERSION")
	in_ns "$NS_A" icsperf lat 2 -s 64 -l 0.2 -j > "$out" || { fail "$(cat "$out")"; return 1; }
	assert_eq "version host kernel mtu ifname" \
		"$v $(uname -n) $(uname -r) 1500 veth0" \
		"$(res "$out" '" ".join(str(j[k]) for k in ("version", "host", "kernel", "mtu", "ifname"))')" || return 1
	assert_eq "chan_queue_max, link_window" \
		"$(cat /sys/module/ics/parameters/chan_queue_max) $(show_get "$NS_A" link_window)" \
		"$(res "$out" '"%d %d" % (j["params"]["chan_queue_max"], j["params"]["link_window"])')" || return 1
	for tool in icsperf icstat icsctl; do
		assert_eq "$tool --version" "$tool $v" "$($tool --version)" || return 1
	done
}

step_add setup
step_add tsvc_attach "$NS_B" KCH CFSR
step_add tsvc_attach "$NS_A" CFSR
case_add "probe: no responder, a node not a member: one line within a second, what to do" probe
step_add server_start
case_add "-D: each interval's own counts and time, for lat, stream, rr-load and -k" interim
case_add "SIGINT: the summary so far, exit 130, counts equal the kernel's (and -k)" stop
case_add "-P 3: equal streams on one channel, each reported, adding up to the kernel's count" \
	parallel
case_add "bistream -R: each direction, as the wire carried it" directions
case_add "-I/-i: runs until the interval is met or MAX ran, every run counted" confidence
case_add "-j metadata: version, host, kernel, MTU, parameters; --version of each tool" metadata
case_add "the server ends on SIGTERM, exit 0" server_restart
cases_run
