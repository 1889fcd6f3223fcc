#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench-quick` (a step of make check): make bench's deterministic
# mode (BENCH_ICOUNT=1: the guest's clock counts instructions, see
# scripts/bench.sh) on a few points, in one boot of about three minutes:
# 64 B round trips of ics (user<->user and kernel<->kernel), UDP and TCP,
# and 64 KiB streams of ics and TCP (a UDP datagram holds at most 65507
# bytes), on one veth at MTU 9000, three repetitions, medians. It fails
# when ics costs more than its margin over bench/baseline-icount.json: a
# round trip 3 % more instructions, a stream 10 % more per byte.
#
# A round trip repeats from boot to boot within 0.05 %, a stream within
# about 5 % (its two ends' progress interleaves differently). Instruction
# counts depend on the guest kernel and on qemu's emulated CPU: where
# either differs from the baseline's, what is compared is ics's cost
# against TCP's in the same boot, with margins of 10 % and 20 %, and the
# step says so.
#
#   bench-quick.sh             run and compare
#   bench-quick.sh --update    three boots, their medians written as the
#                              baseline (commit it, saying why the cost
#                              changed)
#
# Environment: BENCH_QUICK_BASELINE, another baseline file.
set -u
root=$(cd "$(dirname "$0")/.." && pwd -P)
base=${BENCH_QUICK_BASELINE:-$root/bench/baseline-icount.json}
out=$root/build/bench-quick
update=0 boots=1
[ "${1:-}" = --update ] && update=1 boots=3

# The baseline's kernel when it is installed and ics is built for it;
# else the newest 6.12.
kver=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["env"]["kernel"])' \
	"$base" 2>/dev/null)
if [ "$update" = 1 ] || [ -z "$kver" ] || [ ! -r "/boot/vmlinuz-$kver" ] ||
	[ ! -r "$root/build/$kver/kmod/ics.ko" ]; then
	kver=$(cd /lib/modules && ls -d 6.12.*-amd64 2>/dev/null | sort -V | tail -n1)
fi
# shellcheck source=scripts/qemu-cpu.sh
. "$root/scripts/qemu-cpu.sh"
ICS_QEMU_CPU=$(ics_qemu_cpu 1)	# BENCH_ICOUNT needs TCG
qemu="$(qemu-system-x86_64 --version 2>/dev/null | head -n1)${ICS_QEMU_CPU:+ $ICS_QEMU_CPU}"

mkdir -p "$root/build"
rm -f "$out".*.jsonl
# One boot of make bench's transport runs in this mode: the points above.
quick_run()
{
	BENCH_KVER=$kver BENCH_ICOUNT=1 BENCH_LAYOUTS=a BENCH_PARTS=transports BENCH_MTUS=9000 \
		BENCH_TRANSPORT_LIST="udp tcp ics-user ics-kernel" BENCH_SIZES=64 \
		BENCH_STREAM_SIZES=65536 BENCH_REPS=3 BENCH_SECS=0.5 BENCH_RATES= BENCH_COSTS= \
		BENCH_OUT=$out BENCH_RESULTS_DIR=$out/results BENCH_TIMEOUT=420 \
		bash "$root/scripts/bench.sh" > "$out.log" 2>&1
	local rc=$?
	grep '^bench: ' "$out.log" | grep -v 'transport report'
	return $rc
}

for n in $(seq $boots); do
	quick_run
	rc=$?
	# A guest lost mid-run: one boot more, said aloud. (Two long runs
	# lost theirs, with no kernel message, before scripts/qemu-cpu.sh kept
	# QEMU 7.2's cmpxchg16b from the guests.)
	if [ $rc != 0 ] && grep -q 'the guest did not finish' "$out.log" && [ -z "${retried:-}" ]; then
		retried=1
		echo "bench-quick: the guest ended before the run did; booting once more"
		cp "$out.log" "$out.lost.log"
		quick_run
		rc=$?
	fi
	[ $rc = 0 ] || { echo "bench-quick: make bench failed (rc $rc; build/bench-quick.log)"; exit 1; }
	cp "$out/transports.jsonl" "$out.$n.jsonl" || exit 1
done

python3 - "$base" "$update" "$kver" "$qemu" "$out".*.jsonl <<'EOF'
import json, statistics, sys
base_path, update, kver, qemu, files = (sys.argv[1], sys.argv[2] == "1", sys.argv[3],
                                        sys.argv[4], sys.argv[5:])
# What is judged: ics's work per round trip (p50 µs = 1000 instructions)
# and per byte (MB/s = bytes per 1000 instructions), in percent more.
JUDGED = ("ics-user rr 64", "ics-user stream 65536", "ics-kernel rr 64",
          "ics-kernel stream 65536")
MARGIN = {"rr": 3.0, "stream": 10.0}
MARGIN_VS_TCP = {"rr": 10.0, "stream": 20.0}


def work(key, v):
    """Work of a point, larger is costlier: a round trip's p50, a stream's 1 / MB/s."""
    return v if key.split()[1] == "rr" else 1.0 / v


boots = []
for f in files:
    reps = {}
    for line in open(f):
        r = json.loads(line)
        if r.get("test") not in ("rr", "stream") or not r.get("data"):
            continue
        for p in r["data"].get("results", []):
            v = p["p50_us"] if r["test"] == "rr" else p["mb_s"]
            if v:
                reps.setdefault("%s %s %d" % (r["transport"], r["test"], p["size"]), []).append(v)
    boots.append({k: statistics.median(v) for k, v in reps.items()})
got = {k: statistics.median(b[k] for b in boots) for k in boots[0] if all(k in b for b in boots)}
missing = [k for k in JUDGED + ("tcp rr 64", "tcp stream 65536") if k not in got]
if missing:
    print("bench-quick: no result for %s (see build/bench-quick.log)" % ", ".join(missing))
    sys.exit(1)
env = {"kernel": kver, "qemu": qemu}
if update:
    json.dump({"env": env, "margin_pct": MARGIN, "margin_vs_tcp_pct": MARGIN_VS_TCP,
               "boots": len(boots), "reps": 3,
               "units": "rr: p50 round trip, us of guest time = 1000 instructions; "
                        "stream: MB/s of guest time = bytes per 1000 instructions",
               "points": got,
               "spread": {k: [min(b[k] for b in boots), max(b[k] for b in boots)] for k in got}},
              open(base_path, "w"), indent=1, sort_keys=True)
    for k in sorted(got):
        lo, hi = min(b[k] for b in boots), max(b[k] for b in boots)
        print("%-26s median %10.3f  boots %.3f-%.3f (%.2f %%)" % (k, got[k], lo, hi,
                                                               (hi - lo) / got[k] * 100))
    print("bench-quick: baseline (medians of %d boots) written to %s" % (len(boots), base_path))
    sys.exit(0)

base = json.load(open(base_path))
same = base["env"] == env
if not same:
    print("bench-quick: the baseline was taken on %s, %s; this is %s, %s: comparing ics's "
          "cost against TCP's in this boot with the baseline's, margins %s" % (
              base["env"]["kernel"], base["env"]["qemu"], kver, qemu,
              ", ".join("%s %g %%" % kv for kv in sorted(MARGIN_VS_TCP.items()))))
bad = 0
print("%-26s %12s %12s %8s %8s" % ("point", "baseline", "now", "cost", "vs TCP"))
for k in sorted(got):
    t, test, size = k.split()
    b, v = base["points"].get(k), got[k]
    tcp, btcp = got.get("tcp %s %s" % (test, size)), base["points"].get("tcp %s %s" % (test, size))
    vs_tcp = work(k, v) / work(k, tcp) if tcp else None
    if same:
        cost, margin = (work(k, v) / work(k, b) if b else None), MARGIN[test]
    else:
        cost = vs_tcp / (work(k, b) / work(k, btcp)) if b and btcp and vs_tcp else None
        margin = MARGIN_VS_TCP[test]
    flag = ""
    if k in JUDGED and cost is None:
        bad += 1
        flag = "  not in the baseline (--update)"
    elif k in JUDGED and cost > 1 + margin / 100:
        bad += 1
        flag = "  REGRESSION (margin %g %%)" % margin
    elif k in JUDGED and cost < 1 - margin / 100:
        flag = "  cheaper: if that is meant, --update"
    print("%-26s %12s %12.3f %8s %8s%s" % (k, "-" if b is None else "%.3f" % b, v,
          "-" if cost is None else "%.3f" % cost, "-" if vs_tcp is None else "%.2f" % vs_tcp,
          flag))
print("bench-quick: cost: work now / the baseline's (rr: p50; stream: per byte)%s; vs TCP: "
      "work of this point / TCP's, this boot" % ("" if same else ", each against TCP's"))
sys.exit(1 if bad else 0)
EOF
