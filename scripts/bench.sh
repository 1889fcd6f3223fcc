#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: ics latency and throughput against TCP (and TIPC) on the
# same veth, in one VM boot (scripts/bench-guest.sh). Prints a Markdown
# table and writes it, with the command, kernel and date, to
# build/bench/results.md (raw results: build/bench/results.jsonl).
#
# In the same boot, every transport (raw AF_PACKET frames, UDP, TCP, TIPC,
# ics user<->user and kernel<->kernel through user/icsperf) at every size,
# interleaved and repeated (scripts/bench-transports.sh); scripts/
# bench-report.py turns those into bench/results/DATE-KVER-a.{md,csv,jsonl}
# and PNG plots next to them. Without user/icsperf the ics transports are
# skipped (and shown as "—").
#
# Then layout b (scripts/bench-b.sh): the same transport runs between two
# VMs joined by one virtio NIC, where TIPC's peer is another kernel; the
# report goes to bench/results/DATE-KVER-b.*.
#
# Environment:
#   BENCH_KVER        kernel (default: the installed 6.12.*-amd64)
#   BENCH_MTUS        veth MTUs, one run each (default "9000 1500")
#   BENCH_PINGS       round trips per latency measurement (default 2000)
#   BENCH_BULK_MSGS   1 MiB messages per throughput run (default 256)
#   BENCH_KILLS       member kills per failure-detection setting (default 20)
#   BENCH_DETECT      "HB_MS:MISSES ..." settings to measure (default
#                     "100:3 25:3": the defaults, and a 100 ms bound)
#   BENCH_FORM        cluster sizes to time formation for (default "8 16 32")
#   BENCH_PARTS       what runs (default "veth transports members")
#   BENCH_REPS, BENCH_SECS, BENCH_SIZES, BENCH_STREAM_SIZES, BENCH_RATES,
#   BENCH_LOAD_SIZE, BENCH_TRANSPORT_LIST, BENCH_PIN, BENCH_STATS_SIZE, BENCH_AUTH_SIZES
#                     the transport runs (see scripts/bench-transports.sh;
#                     5 repetitions of 0.5 s per point by default)
#   BENCH_LAYOUTS     "a b" (default): (a) one VM, two namespaces, one veth;
#                     (b) two VMs, one dedicated virtio NIC (scripts/bench-b.sh)
#   BENCH_RESULTS_DIR where the transport report goes (default bench/results)
#   BENCH_OUT         the run's directory (default build/bench), emptied first
#   BENCH_TIMEOUT     seconds before the VM is killed (default 5400)
#   BENCH_COSTS       "stats auth nic" (default): the transport runs that
#                     measure what statistics, a cluster key and the NIC
#                     view (icsctl nic) cost
#   BENCH_ICOUNT=1    the deterministic mode, layout a only: qemu
#                     -icount shift=0,sleep=off (below)
#   BENCH_VERBOSE=1   the guest kernel's messages in console.log
#   ICS_KVM=1         use KVM instead of TCG, where KVM works
#
# The VM runs under TCG by default (KVM cannot boot a stock kernel on the
# machines this was written on): absolute numbers are those of an emulated
# CPU and mean little; the ratios between ics and TCP, measured on the same
# link in the same boot, are the figures to read.
#
# BENCH_ICOUNT=1: the guest's clock counts instructions instead (qemu's
# -icount shift=0,sleep=off: one instruction a nanosecond, idle time
# skipped), so a figure is the work done on the path: a round trip repeats
# from boot to boot within 0.05 %, a stream within about 5 % (its two
# ends' progress interleaves differently). It is not a wall time on
# hardware: every instruction costs the
# same, caches, memory and a real NIC (its DMA, its interrupt coalescing)
# are not modelled. Two VMs keep two such clocks, which do not agree:
# layout b does not run in this mode.
set -u
root=$(cd "$(dirname "$0")/.." && pwd -P)
# shellcheck source=scripts/qemu-cpu.sh
. "$root/scripts/qemu-cpu.sh"
kver=${BENCH_KVER:-$(cd /lib/modules && ls -d 6.12.*-amd64 2>/dev/null | sort -V | tail -n1)}
[ -n "$kver" ] || { echo "bench: no 6.12 kernel installed (make deps)" >&2; exit 1; }
ko=$root/build/$kver/kmod/ics.ko
# ics's traffic (icsctl send, icsperf -k) comes from the test service.
for m in "$ko" "${ko%/*}/ics_test.ko"; do
	[ -r "$m" ] || { echo "bench: $m missing (make modules)" >&2; exit 1; }
done
for t in icsctl icstat; do
	[ -x "$root/user/$t" ] || { echo "bench: user/$t missing (make user)" >&2; exit 1; }
done
command -v vng >/dev/null || { echo "bench: vng not installed (make deps)" >&2; exit 1; }

# The run's directory is emptied: only one that a run made (its marker) or
# an empty one.
res=$(realpath -m "${BENCH_OUT:-$root/build/bench}")
if [ -d "$res" ] && [ ! -e "$res/.ics-bench" ] && [ -n "$(ls -A "$res")" ]; then
	echo "bench: $res is not empty and not a bench run's directory: not emptying it" >&2
	exit 1
fi
rm -rf "$res"
mkdir -p "$res/stage"
: > "$res/.ics-bench"
cp "$ko" "${ko%/*}/ics_test.ko" "$root/user/icsctl" "$root/user/icstat" "$root/scripts/bench-members.py" \
	"$root/selftests/ics_members.py" "$root/scripts/bench-lib.sh" \
	"$root/scripts/bench-transports.sh" "$res/stage/"
if [ -x "$root/user/icsperf" ]; then
	cp "$root/user/icsperf" "$res/stage/"
else
	echo "bench: user/icsperf not built: the ics transports (ics-user, ics-kernel) are skipped"
fi
# The accounting's cost: the same module with ICS_NO_STATS=y
# (every counter and histogram update compiled out), built beside it with
# its own test service.
nostats=$res/nostats
case " ${BENCH_COSTS-stats auth} " in
*" stats "*)
mkdir -p "$nostats/kmod"
ln -s "$root"/kmod/*.c "$root"/kmod/*.h "$root/kmod/Kbuild" "$nostats/kmod/"
ln -s "$root/include" "$nostats/include"
if make -s -C "/lib/modules/$kver/build" M="$nostats/kmod" ICS_NO_STATS=y modules \
	> "$res/nostats.log" 2>&1; then
	cp "$nostats/kmod/ics.ko" "$res/stage/ics-nostats.ko"
	cp "$nostats/kmod/ics_test.ko" "$res/stage/ics_test-nostats.ko"
else
	echo "bench: building ics without statistics failed (${res#$root/}/nostats.log); its runs are skipped"
fi
;;
esac
gcc -O2 -Wall -Wextra -Werror -o "$res/stage/bench-peer" "$root/scripts/bench-peer.c" -lm ||
	{ echo "bench: building bench-peer failed" >&2; exit 1; }
{
	echo "BENCH_MTUS='${BENCH_MTUS:-9000 1500}'"
	echo "BENCH_PINGS=${BENCH_PINGS:-2000}"
	echo "BENCH_BULK_MSGS=${BENCH_BULK_MSGS:-256}"
	echo "BENCH_KILLS=${BENCH_KILLS:-20}"
	echo "BENCH_DETECT='${BENCH_DETECT:-100:3 25:3}'"
	echo "BENCH_FORM='${BENCH_FORM:-8 16 32}'"
	# The rest only when set (an empty BENCH_RATES means no rr-load).
	for v in BENCH_PARTS BENCH_REPS BENCH_SECS BENCH_SIZES BENCH_STREAM_SIZES \
		BENCH_RATES BENCH_LOAD_SIZE BENCH_TRANSPORT_LIST BENCH_PIN BENCH_STATS_SIZE \
		BENCH_AUTH_SIZES BENCH_COSTS; do
		[ -n "${!v+x}" ] && printf '%s=%q\n' "$v" "${!v}"
	done
} > "$res/stage/env"

# Two cores run this VM's two vCPUs: another VM meanwhile steals them and
# the figures with them (round trips of milliseconds instead of ~100 µs).
if pgrep -f '(^|/)qemu-system-' >/dev/null; then
	echo "bench: WARNING: another VM is running (qemu pids $(pgrep -f '(^|/)qemu-system-' | tr '\n' ' '));" \
		"it competes for the host's CPUs and distorts the figures" >&2
fi

accel=--disable-kvm
[ "${ICS_KVM:-0}" = 1 ] && accel=
ICS_QEMU_CPU=$(ics_qemu_cpu $([ -n "$accel" ] && echo 1 || echo 0))
date_utc=$(date -u '+%Y-%m-%d %H:%M UTC')
rev=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
LAYOUTS=${BENCH_LAYOUTS:-a b}
qopts=() mode=wall accel_label=${accel:-KVM}
if [ -n "$ICS_QEMU_CPU" ]; then
	qopts=(--qemu-opts="$ICS_QEMU_CPU")	# "=": vng would take "-cpu" for an option
	accel_label+=", $ICS_QEMU_CPU"
fi
if [ "${BENCH_ICOUNT:-0}" = 1 ]; then
	[ -z "$accel" ] && { echo "bench: BENCH_ICOUNT=1 needs TCG, not ICS_KVM=1" >&2; exit 1; }
	qopts=(--qemu-opts="$ICS_QEMU_CPU -icount shift=0,sleep=off")
	mode=icount accel_label="TCG, -icount shift=0,sleep=off${ICS_QEMU_CPU:+, $ICS_QEMU_CPU}"
	if [[ " $LAYOUTS " == *" b "* ]]; then
		echo "bench: BENCH_ICOUNT=1: layout a only (two VMs' instruction clocks do not agree)"
		LAYOUTS=a
	fi
fi
# BENCH_VERBOSE=1: the guest kernel's messages in console.log too
[ "${BENCH_VERBOSE:-0}" = 1 ] && qopts+=(--verbose)
py=python3
if ! python3 -c 'import matplotlib' 2>/dev/null && /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
	py=/usr/bin/python3
fi
if [[ " $LAYOUTS " == *" a "* ]]; then
echo "bench: layout a: booting $kver ($accel_label), results in ${res#$root/}"
t0=$SECONDS
timeout --foreground -k 30 "${BENCH_TIMEOUT:-5400}" \
	vng --run "/boot/vmlinuz-$kver" $accel "${qopts[@]}" --user root --cpus 2 --memory 2G \
	--rwdir "$res" -- bash "$root/scripts/bench-guest.sh" "$res" \
	< /dev/null 2>&1 | tee "$res/console.log" | grep --line-buffered '^bench: '
wall=$((SECONDS - t0))
if ! grep -q ICS-BENCH-END "$res/done" 2>/dev/null; then
	echo "bench: the guest did not finish (see ${res#$root/}/console.log)" >&2
	exit 1
fi

BENCH_ENV=$(env | grep -E '^(BENCH_[A-Z_]+|ICS_KVM)=' | sort | tr '\n' ' ')
export BENCH_ENV
python3 - "$res" "$kver" "$date_utc" "$rev" "$accel_label" "$wall" \
	"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')" <<'PYEOF'
import json, os, sys
res, kver, date, rev, accel, wall, cpu = sys.argv[1:]
rows = [json.loads(l) for l in open(os.path.join(res, "results.jsonl")) if l.strip()]
R = {}
for r in rows:
    R[(r["mtu"], r["test"])] = r["data"]
mtus = sorted({m for m, _ in R if m}, reverse=True)

def us(d, k):
    try:
        return d[k] / 1000.0
    except (TypeError, KeyError):
        return None
def rtt(d):
    # icsctl -j puts the percentiles in "rtt"; bench-peer at the top level.
    return d.get("rtt", d) if isinstance(d, dict) else None
def fmt(v, unit=""):
    return "—" if v is None else ("%.0f%s" % (v, unit) if v >= 100 else "%.1f%s" % (v, unit))
def ratio(a, b):
    return "—" if a is None or b in (None, 0) else "%.2f" % (a / b)
def mbs(d):
    if not isinstance(d, dict) or d.get("ok") is False:
        return None
    return d.get("mb_s")

lines = []
if mtus:
    lines.append("| MTU | measurement | ics | TCP | TIPC | ics/TCP |")
    lines.append("|----:|-------------|----:|----:|-----:|--------:|")
notes = []
for m in mtus:
    g = lambda t: R.get((m, t))
    for label, key in (("p50", "p50_ns"), ("p99", "p99_ns")):
        i, t, p = (us(rtt(g(x)), key) for x in ("ics_ping_idle", "tcp_ping_idle", "tipc_ping_idle"))
        lines.append("| %d | 64 B round trip %s, idle (µs) | %s | %s | %s | %s |"
                     % (m, label, fmt(i), fmt(t), fmt(p), ratio(i, t)))
    for sfx, where in (("", "stream on the pinger's vCPU"), ("_cpu1", "stream on the other vCPU")):
        for label, key in (("p50", "p50_ns"), ("p99", "p99_ns")):
            i, t = us(rtt(g("ics_ping_loaded" + sfx)), key), us(rtt(g("tcp_ping_loaded" + sfx)), key)
            lines.append("| %d | 64 B round trip %s behind a 1 MiB bulk stream, %s (µs) | %s | %s | — | %s |"
                         % (m, label, where, fmt(i), fmt(t), ratio(i, t)))
        for label, key in (("p50", "p50_ns"), ("p99", "p99_ns")):
            li, ii = us(rtt(g("ics_ping_loaded" + sfx)), key), us(rtt(g("ics_ping_idle")), key)
            lt, it = us(rtt(g("tcp_ping_loaded" + sfx)), key), us(rtt(g("tcp_ping_idle")), key)
            lines.append("| %d | loaded/idle round trip %s, %s (goal for ics ≤ 2) | %s | %s | — | |"
                         % (m, label, where, ratio(li, ii), ratio(lt, it)))
        s = g("ics_stream_during_ping" + sfx)
        if s:
            notes.append("MTU %d, %s: the background ics stream moved %s MB/s while the loaded pings ran."
                         % (m, where, fmt(s.get("mb_s"))))
    i, t, p = mbs(g("ics_bulk")), mbs(g("tcp_bulk")), mbs(g("tipc_bulk"))
    lines.append("| %d | 1 MiB messages, throughput (MB/s) | %s | %s | %s | %s |"
                 % (m, fmt(i), fmt(t), fmt(p), ratio(i, t)))
    v = g("tipc_bulk_veth")
    if v and mbs(g("tipc_bulk")):
        notes.append("MTU %d: during the TIPC bulk run the veth carried %.0f%% of the bytes sent%s."
                     % (m, 100.0 * v["tx_bytes"] / max(1, g("tipc_bulk")["bytes"]),
                        "" if v["tx_bytes"] >= g("tipc_bulk")["bytes"] else
                        ": TIPC passed the rest between the namespaces directly, so its figure is not a veth figure"))
    i, t = mbs(g("ics_bulk_loss")), mbs(g("tcp_bulk_loss"))
    lines.append("| %d | the same, netem loss 1%% on the sender (MB/s) | %s | %s | — | %s |"
                 % (m, fmt(i), fmt(t), ratio(i, t)))
    for name in ("ics_bulk", "ics_bulk_loss"):
        d = g(name)
        if isinstance(d, dict) and not d.get("ok"):
            notes.append("MTU %d: %s did not deliver every message (received %s of %s; reply %s)."
                         % (m, name, d.get("received"), d.get("msgs"), json.dumps(d.get("reply"))))
    for name in ("ics_ping_idle", "ics_ping_loaded", "ics_ping_loaded_cpu1"):
        d = g(name)
        if isinstance(d, dict) and (d.get("failed") or d.get("errno")):
            notes.append("MTU %d: %s: %d failed, errno %s." % (m, name, d.get("failed", 0), d.get("errno")))
        if d is None:
            notes.append("MTU %d: %s: no result (see console.log)." % (m, name))
    d = g("ics_test_b")
    if isinstance(d, dict):
        bad = sum(c.get("rx_bad", 0) for c in d.get("channels", {}).values())
        if bad:
            notes.append("MTU %d: node 2's test service found %d messages that did not verify."
                         % (m, bad))

mem = []
dets = sorted((k for (m, k) in R if m == 0 and k.startswith("detect_")),
              key=lambda k: -int(k.split("_")[1]))
if dets:
    mem += ["", "| failure detection (3 members, one killed by its bridge port going down) "
            "| kills × survivors | median (ms) | max (ms) | bound (ms) | false downs |",
            "|---|--:|--:|--:|--:|--:|"]
for k in dets:
    d = R[(0, k)]
    if not isinstance(d, dict):
        notes.append("%s: no result (see console.log)." % k)
        continue
    for label, key in (("after the victim's last frame (kernel clock)", "from_last_frame"),
                       ("after the kill command started", "from_kill_command")):
        mem.append("| heartbeat %d ms, %d misses: %s | %d × 2 | %s | %s | %d | %d |"
                   % (d["heartbeat_ms"], d["misses"], label, d["kills"],
                      fmt(d[key]["median_ms"]), fmt(d[key]["max_ms"]), d["bound_ms"],
                      d["false_downs"]))
forms = sorted((k for (m, k) in R if m == 0 and k.startswith("form_")),
               key=lambda k: int(k.split("_")[1]))
if forms:
    mem += ["", "| formation (members on one bridge, bound at once) | full view after the last bind (ms) "
            "| after the first bind (ms) |", "|---|--:|--:|"]
for k in forms:
    d = R[(0, k)]
    if not isinstance(d, dict):
        notes.append("%s: no result (see console.log)." % k)
        continue
    mem.append("| %d members | %s | %s |" % (d["members"], fmt(d["after_last_bind_ms"]),
                                              fmt(d["after_first_bind_ms"])))
lines += mem

head = """# ics benchmark

- command: `make bench` (scripts/bench.sh%s)
- date: %s; tree: %s
- guest kernel: %s, 2 vCPUs, 2 GiB, %s (virtme-ng); host CPU: %s, %s cores
- VM wall time: %s s
- one VM boot; two network namespaces joined by one veth pair per MTU; ics
  node 1 sends to node 2, from the test service (ics_test.ko, attached to
  every channel but CNX at both ends, which checks every message it
  receives); TCP and TIPC use the same veth. Round trips: ics
  `icsctl send --ping` (the test service's generator, timed in the kernel,
  each PING answered by node 2's test service), TCP/TIPC
  scripts/bench-peer.c (user space, two system calls per side per round
  trip); every pinger and TCP/TIPC server on vCPU 0, SCHED_FIFO. Loaded:
  the bulk stream's sender pinned to vCPU 0 (with the pinger) or to vCPU 1.
  Throughput: wall clock of `icsctl send --wait` of the 1 MiB
  messages until every one is acknowledged, and of bench-peer sending the
  same bytes until the receiver has counted them all.
- membership (scripts/bench-members.py): detection is timed by each
  survivor's kernel, from the last frame it heard from the victim to the
  transition to down (an upper bound of the time from the kill, which
  comes at or after that frame); the time from the start of the
  `ip link set down` command adds the emulated guest's process start-up.
  Formation: from the last instance's bind to the last transition that
  completed every member's view.
""" % ("".join(" " + e for e in os.environ.get("BENCH_ENV", "").split()), date, rev,
       kver, accel, cpu, os.cpu_count(), wall)
if "icount" in accel:
    head += ("- deterministic mode (qemu -icount shift=0,sleep=off): the guest's clock counted\n"
             "  instructions, 1 µs = 1000 of them; \"wall clock\" above is that clock\n")
text = head + "\n" + "\n".join(lines) + "\n"
if notes:
    text += "\n" + "\n".join("- " + n for n in notes) + "\n"
open(os.path.join(res, "results.md"), "w").write(text)
print(text)
PYEOF

# The transports' report: tables, ratios, targets and plots. Debian's
# python3-matplotlib serves /usr/bin/python3, which need not be the
# python3 first on PATH.
if [ -s "$res/transports.jsonl" ]; then
	"$py" "$root/scripts/bench-report.py" --kver "$kver" --accel="$accel_label" \
		--mode "$mode" --rev "$rev" --date "$date_utc" --wall "$wall" \
		--out "${BENCH_RESULTS_DIR:-$root/bench/results}" "$res/transports.jsonl" ||
		{ echo "bench: bench-report.py failed" >&2; exit 1; }
fi
fi	# layout a

# Layout b: two VMs, one dedicated virtio NIC (scripts/bench-b.sh).
if [[ " $LAYOUTS " == *" b "* ]]; then
	t0=$SECONDS
	BENCH_MTUS=${BENCH_MTUS:-9000 1500} bash "$root/scripts/bench-b.sh" "$res" "$kver"
	brc=$?
	wall=$((SECONDS - t0))
	if [ -s "$res/transports-b.jsonl" ]; then
		"$py" "$root/scripts/bench-report.py" --layout b --kver "$kver" \
			--accel="${accel:-KVM}${ICS_QEMU_CPU:+, $ICS_QEMU_CPU}" --rev "$rev" --date "$date_utc" --wall "$wall" \
			--out "${BENCH_RESULTS_DIR:-$root/bench/results}" "$res/transports-b.jsonl" ||
			{ echo "bench: bench-report.py (layout b) failed" >&2; exit 1; }
	fi
	[ $brc = 0 ] || { echo "bench: layout b did not complete" >&2; exit 1; }
fi
