#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench-quick` (a step of make check): make bench's deterministic
# mode (BENCH_ICOUNT=1: the guest's clock counts instructions, see
# scripts/bench.sh) on a few points, in one boot of about two minutes:
# 64 B round trips and 64 KiB streams of ics (user<->user and
# kernel<->kernel), UDP and TCP on one veth at MTU 9000. It fails when a
# point of ics costs more than its margin over bench/baseline-icount.json:
# a round trip's p50 grew by more than 3 %, a stream's throughput fell by
# more than 10 % (more instructions per byte). A round trip's figure
# repeats from boot to boot within 0.05 %, a stream's within about 5 %
# (its two ends' progress interleaves differently). UDP and TCP are
# printed beside it, as ratios.
#
#   bench-quick.sh             run and compare
#   bench-quick.sh --update    three runs, their medians written as the
#                              baseline (commit it, saying why the cost
#                              changed)
#
# The baseline holds for the kernel it was taken on; on another, the
# comparison is skipped (exit 4) and says so.
#
# Environment: BENCH_KVER; BENCH_QUICK_BASELINE, another baseline file.
set -u
root=$(cd "$(dirname "$0")/.." && pwd -P)
base=${BENCH_QUICK_BASELINE:-$root/bench/baseline-icount.json}
out=$root/build/bench-quick
update=0 runs=1
[ "${1:-}" = --update ] && update=1 runs=3
rm -f "$out".*.jsonl
for n in $(seq $runs); do
BENCH_ICOUNT=1 BENCH_LAYOUTS=a BENCH_PARTS=transports BENCH_MTUS=9000 \
	BENCH_TRANSPORT_LIST="udp tcp ics-user ics-kernel" BENCH_SIZES=64 \
	BENCH_STREAM_SIZES=65536 BENCH_REPS=1 BENCH_SECS=0.5 BENCH_RATES= BENCH_COSTS= \
	BENCH_OUT=$out BENCH_RESULTS_DIR=$out/results BENCH_TIMEOUT=900 \
	bash "$root/scripts/bench.sh" > "$out.log" 2>&1
rc=$?
grep '^bench: ' "$out.log" | grep -v 'transport report'
[ $rc = 0 ] || { echo "bench-quick: make bench failed (rc $rc; $out.log)"; exit 1; }
cp "$out/transports.jsonl" "$out.$n.jsonl"
done

python3 - "$base" "$update" "$out".*.jsonl <<'EOF'
import json, statistics, sys
base_path, update, files = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
MARGIN = {"rr": 3.0, "stream": 10.0}	# percent
runs, kernel = [], None
for f in files:
    got = {}
    for line in open(f):
        r = json.loads(line)
        if r.get("test") == "meta":
            kernel = r["data"].get("kernel", kernel)
            continue
        if r.get("test") not in ("rr", "stream") or not r.get("data"):
            continue
        for p in r["data"].get("results", []):
            key = "%s %s %d" % (r["transport"], r["test"], p["size"])
            got[key] = p["p50_us"] if r["test"] == "rr" else p["mb_s"]
    runs.append(got)
got = {k: statistics.median(g[k] for g in runs if g.get(k) is not None)
       for k in runs[0] if all(g.get(k) is not None for g in runs)}
# What is judged: ics's cost per round trip (µs = 1000 instructions) and
# per byte (MB/s = bytes per 1000 instructions).
judged = {"ics-user rr 64": "rr", "ics-user stream 65536": "stream",
          "ics-kernel rr 64": "rr", "ics-kernel stream 65536": "stream"}
missing = [k for k in judged if got.get(k) is None]
if missing:
    print("bench-quick: no result for %s (see build/bench-quick.log)" % ", ".join(missing))
    sys.exit(1)
if update:
    json.dump({"kernel": kernel, "margin_pct": MARGIN, "boots": len(runs),
               "units": "rr: p50 round trip, us of guest time = 1000 instructions; "
                        "stream: MB/s of guest time = bytes per 1000 instructions",
               "points": got,
               "spread": {k: [min(g[k] for g in runs), max(g[k] for g in runs)] for k in got}},
              open(base_path, "w"), indent=1, sort_keys=True)
    for k in sorted(got):
        lo, hi = min(g[k] for g in runs), max(g[k] for g in runs)
        print("%-26s median %10.3f  spread %.3f-%.3f (%.2f %%)" % (k, got[k], lo, hi,
                                                                (hi - lo) / got[k] * 100))
    print("bench-quick: baseline (medians of %d boots) written to %s" % (len(runs), base_path))
    sys.exit(0)
base = json.load(open(base_path))
if base["kernel"] != kernel:
    print("bench-quick: SKIP: the baseline was taken on %s, this is %s "
          "(scripts/bench-quick.sh --update)" % (base["kernel"], kernel))
    sys.exit(4)
bad = 0
print("%-26s %12s %12s %8s %8s %8s" % ("point", "baseline", "now", "cost", "vs UDP", "vs TCP"))
for k in sorted(got):
    b, v = base["points"].get(k), got[k]
    if v is None:
        continue
    # cost: now / baseline in work (a stream's work per byte is 1 / MB/s)
    cost = None if not b else (v / b if k.split()[1] == "rr" else b / v)
    t, test, size = k.split()
    ref = lambda o: got.get("%s %s %s" % (o, test, size))
    rel = lambda o: ("%.2f" % (v / ref(o) if test == "rr" else ref(o) / v)) if ref(o) else "-"
    flag = ""
    if k in judged and (cost is None or cost > 1 + MARGIN[test] / 100):
        bad += 1
        flag = "  REGRESSION (margin %g %%)" % MARGIN[test]
    print("%-26s %12s %12.3f %8s %8s %8s%s" % (k, "-" if b is None else "%.3f" % b, v,
          "-" if cost is None else "%.3f" % cost, rel("udp"), rel("tcp"), flag))
print("bench-quick: cost = work now / baseline (rr: p50 ratio; stream: MB/s inverted); "
      "vs UDP/TCP: work of ics / of that transport, same point, same boot")
sys.exit(1 if bad else 0)
EOF
