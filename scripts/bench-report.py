#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The transports' report of `make bench` (run on the host by scripts/bench.sh
after the VM, on the JSON lines scripts/bench-transports.sh wrote).

  bench-report.py [--layout a|b] [--kver K] [--date D] [--rev R] [--accel A]
                  [--wall S] [--out DIR] TRANSPORTS.jsonl

Layout a: one VM, two namespaces, one veth; b: two VMs, one virtio NIC.
Writes DIR/DATE-KVER-a.csv (one row per mtu, transport, test, size and
rate: the median, min and max over the repetitions of p50, p90, p99,
msgs/s, MB/s and CPU per message), DATE-KVER-a.md (tables per MTU, each
figure also as a ratio to the raw-frame floor and to TIPC, and whether the
targets below are met), DATE-KVER-a.jsonl (the raw lines) and, with
matplotlib, DATE-KVER-a-{rtt-vs-size,throughput-vs-size,latency-vs-load}.png
(-b- for layout b).
A transport that did not run shows as "—". Prints the Markdown.
"""
import argparse
import csv
import json
import os
import shutil
import socket
import statistics
import sys
import time

LAYOUT = "a"
TRANSPORTS = ["packet", "udp", "tcp", "tipc", "ics-user", "ics-kernel"]
LABEL = {
    "packet": "packet (floor)",
    "udp": "UDP",
    "tcp": "TCP",
    "tipc": "TIPC same-host",
    "ics-user": "ics-user",
    "ics-kernel": "ics-kernel",
    "ics-user-nostats": "ics-user, statistics compiled out",
    "ics-kernel-nostats": "ics-kernel, statistics compiled out",
    "ics-kernel-auth": "ics-kernel, cluster key required",
    "ics-kernel-authoff": "ics-kernel, the same boot, authentication off",
    "ics-kernel-nic": "ics-kernel, icsctl nic's program on both veths",
    "ics-kernel-nonic": "ics-kernel, the same boot, without it",
}
METRICS = ["p50_us", "p90_us", "p99_us", "msgs_s", "mb_s", "cpu_us_per_msg", "send_lag_p99_us"]

# Targets: (text, test, metric, transport, against, factor, sizes or None
# for every size both have, "le" (A <= factor * B) or "ge"). Decided on the
# spreads: met if every repetition of A beats every one of B (scaled);
# not met if none does; otherwise the spreads overlap and it is not decided.
TARGETS_A = [
    ("ics-user 64 B round trip p50 ≤ 1.10 × the raw-frame floor",
     "rr", "p50_us", "ics-user", "packet", 1.10, [64], "le"),
    ("ics-user 64 B round trip p50 ≤ 0.90 × UDP",
     "rr", "p50_us", "ics-user", "udp", 0.90, [64], "le"),
    ("ics-user round trip p50 ≤ TCP at every size",
     "rr", "p50_us", "ics-user", "tcp", 1.00, None, "le"),
    ("ics-user 64 KiB stream ≥ 0.9 × TCP (the target is for two VMs, layout b)",
     "stream", "mb_s", "ics-user", "tcp", 0.90, [65536], "ge"),
    ("statistics cost ≤ 2 % of the ics-user 64 KiB stream",
     "stream", "mb_s", "ics-user", "ics-user-nostats", 0.98, [65536], "ge"),
    ("statistics cost ≤ 2 % of the ics-kernel 64 KiB stream",
     "stream", "mb_s", "ics-kernel", "ics-kernel-nostats", 0.98, [65536], "ge"),
    ("a cluster key costs ≤ 10 % of the ics-kernel 64 B round trip p50",
     "rr", "p50_us", "ics-kernel-auth", "ics-kernel-authoff", 1.10, [64], "le"),
    ("a cluster key costs ≤ 15 % of the ics-kernel 64 KiB stream",
     "stream", "mb_s", "ics-kernel-auth", "ics-kernel-authoff", 0.85, [65536], "ge"),
    ("the NIC view costs ≤ 5 % of the ics-kernel 64 B round trip p50",
     "rr", "p50_us", "ics-kernel-nic", "ics-kernel-nonic", 1.05, [64], "le"),
    ("the NIC view costs ≤ 5 % of the ics-kernel 64 KiB stream",
     "stream", "mb_s", "ics-kernel-nic", "ics-kernel-nonic", 0.95, [65536], "ge"),
]
TARGETS_B = [
    ("ics-user round trip p50 ≤ TCP at every size",
     "rr", "p50_us", "ics-user", "tcp", 1.00, None, "le"),
    ("ics-user 64 KiB stream ≥ 0.9 × TCP",
     "stream", "mb_s", "ics-user", "tcp", 0.90, [65536], "ge"),
    ("ics-user 64 KiB stream ≥ 1.2 × TIPC",
     "stream", "mb_s", "ics-user", "tipc", 1.20, [65536], "ge"),
]
TARGETS = TARGETS_A
# Layout b: the round trip time ics adds above the raw-frame floor at most
# 0.75 x what TIPC adds above it, per repetition (the transports of one
# repetition ran back to back), at these sizes.
ADDED_FACTOR = 0.75
ADDED_SIZES = [64]


def load(path):
    meta, frames, runs, errors = {}, [], {}, []
    for line in open(path):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except ValueError:
            errors.append("unparsable line: %s" % line[:120])
            continue
        if r.get("test") == "meta":
            meta.update(r.get("data") or {})
        elif r.get("test") == "veth-frames":
            frames.append(r)
        elif r.get("data") is None:
            errors.append("MTU %s, %s %s, rep %s: %s" % (r.get("mtu"), r.get("transport"),
                          r.get("test"), r.get("rep"), (r.get("error") or "").strip()[:300]))
        else:
            runs.setdefault((r["mtu"], r["transport"], r["test"]), []).append(r)
    return meta, frames, runs, errors


def aggregate(runs):
    """(mtu, transport, test, size, rate) -> {metric: (median, min, max)},
    with "reps", "lost" (sum) and "msgs" (median)."""
    per = {}
    for (mtu, t, test), lines in runs.items():
        for line in lines:
            for res in line["data"].get("results") or []:
                key = (mtu, t, test, res.get("size"), res.get("rate") or 0)
                per.setdefault(key, []).append(res)
    agg = {}
    for key, rs in per.items():
        a = {"reps": len(rs), "lost": sum(r.get("lost") or 0 for r in rs)}
        msgs = [r["msgs"] for r in rs if r.get("msgs") is not None]
        a["msgs"] = statistics.median(msgs) if msgs else None
        for m in METRICS:
            v = [r[m] for r in rs if r.get(m) is not None]
            a[m] = (statistics.median(v), min(v), max(v)) if v else None
        agg[key] = a
    return agg


def fmt(v):
    if v is None:
        return "—"
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def cell(a):
    """median (min–max)"""
    if a is None:
        return "—"
    med, lo, hi = a
    if lo == hi:
        return fmt(med)
    return "%s (%s–%s)" % (fmt(med), fmt(lo), fmt(hi))


def ratio(a, b):
    if a is None or b is None or not b[0]:
        return "—"
    r = a[0] / b[0]
    return "%.2f" % r if r >= 0.1 else "%.3f" % r


def size_label(s):
    if s >= 1024 and s % 1024 == 0:
        return "%d KiB" % (s // 1024)
    return "%d B" % s


def decide(a, b, factor, how):
    """'met', 'not met' or 'undecided' for one size, from the spreads."""
    if how == "le":
        if a[2] <= factor * b[1]:
            return "met"
        if a[1] > factor * b[2]:
            return "not met"
    else:
        if a[1] >= factor * b[2]:
            return "met"
        if a[2] < factor * b[1]:
            return "not met"
    return "undecided"


def target_lines(agg, mtu, sizes_of):
    out = []
    for text, test, metric, t, against, factor, sizes, how in TARGETS:
        checked = []
        for s in (sizes or sizes_of(test)):
            a = (agg.get((mtu, t, test, s, 0)) or {}).get(metric)
            b = (agg.get((mtu, against, test, s, 0)) or {}).get(metric)
            if a and b:
                checked.append((s, decide(a, b, factor, how), a, b))
        if not checked:
            verdict, detail = "not measured", "%s or %s did not run" % (LABEL[t], LABEL[against])
        else:
            vs = [c[1] for c in checked]
            if "not met" in vs:
                verdict = "not met"
            elif "undecided" in vs:
                verdict = "not decided (spreads overlap)"
            else:
                verdict = "met"
            bad = sorted((c for c in checked if c[1] != "met"), key=lambda c: c[1] != "not met")
            show = bad[:4] if bad else checked[:1]
            detail = "; ".join("%s: %s %s vs %s %s (%s)" % (
                size_label(s), LABEL[t], cell(a), LABEL[against], cell(b),
                {"met": "met", "not met": "not met", "undecided": "overlap"}[d])
                for s, d, a, b in show)
            if bad and len(bad) > len(show):
                detail += "; and %d more sizes" % (len(bad) - len(show))
        out.append("- %s: **%s** — %s" % (text, verdict, detail))
    return out


def per_rep(runs, mtu, t, test, size, metric):
    """{rep: value} of METRIC at SIZE over the repetitions of one transport."""
    out = {}
    for line in runs.get((mtu, t, test)) or []:
        for res in line["data"].get("results") or []:
            if res.get("size") == size and res.get(metric) is not None:
                out[line["rep"]] = res[metric]
    return out


def added_lines(runs, mtu):
    """Layout b: what ics adds to the floor's round trip against what TIPC adds."""
    out = []
    for t in ("ics-user", "ics-kernel"):
        for s in ADDED_SIZES:
            f, a, b = (per_rep(runs, mtu, x, "rr", s, "p50_us") for x in ("packet", t, "tipc"))
            reps = sorted(set(f) & set(a) & set(b))
            text = ("%s round trip p50 above the raw-frame floor ≤ %.2f × TIPC's, %s"
                    % (LABEL[t], ADDED_FACTOR, size_label(s)))
            if not reps:
                out.append("- %s: **not measured** — the floor, %s or TIPC did not run"
                           % (text, LABEL[t]))
                continue
            ai = [a[r] - f[r] for r in reps]
            at = [b[r] - f[r] for r in reps]
            if max(ai) <= ADDED_FACTOR * min(at):
                verdict = "met"
            elif min(ai) > ADDED_FACTOR * max(at):
                verdict = "not met"
            else:
                verdict = "not decided (spreads overlap)"
            med = lambda v: statistics.median(v)
            out.append("- %s%s: **%s** — per repetition, %s adds %s (%s–%s) µs, TIPC %s (%s–%s) "
                       "µs; ratio of the medians %.2f" % (
                           text, "" if t == "ics-user" else " (for reference)", verdict,
                           LABEL[t], fmt(med(ai)), fmt(min(ai)), fmt(max(ai)),
                           fmt(med(at)), fmt(min(at)), fmt(max(at)),
                           med(ai) / med(at) if med(at) else float("nan")))
    return out


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if i else "---" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines


RATIO_COLS = [("ics-user", "packet"), ("ics-user", "tipc"), ("ics-kernel", "packet"),
              ("ics-kernel", "tipc"), ("ics-user", "udp"), ("ics-user", "tcp"),
              ("udp", "packet"), ("tcp", "packet"), ("tipc", "packet"),
              ("udp", "tipc"), ("tcp", "tipc")]


def short(t):
    return {"packet": "floor", "tipc": "TIPC", "udp": "UDP", "tcp": "TCP"}.get(t, t)


def section(agg, mtu, test, metric, title, present, sizes):
    """An absolute table and a ratio table of METRIC for TEST."""
    out = ["", "#### %s" % title, ""]
    ts = [t for t in TRANSPORTS if t in present]
    rows = []
    for s in sizes:
        rows.append([size_label(s)] + [cell((agg.get((mtu, t, test, s, 0)) or {}).get(metric))
                                       for t in TRANSPORTS])
    out += table(["size"] + [LABEL[t] for t in TRANSPORTS], rows)
    cols = [(a, b) for a, b in RATIO_COLS if a in ts and b in ts]
    if cols:
        out += ["", "Ratios of the medians (%s):" % ("> 1: slower" if metric.endswith("_us")
                                                     else "> 1: more throughput"), ""]
        rows = []
        for s in sizes:
            rows.append([size_label(s)] + [
                ratio((agg.get((mtu, a, test, s, 0)) or {}).get(metric),
                      (agg.get((mtu, b, test, s, 0)) or {}).get(metric)) for a, b in cols])
        out += table(["size"] + ["%s / %s" % (short(a), short(b)) for a, b in cols], rows)
    return out


def load_section(agg, mtu):
    keys = sorted({(t, k[4]) for k in agg for t in [k[1]]
                   if k[0] == mtu and k[2] == "rr-load"}, key=lambda x: x[1])
    if not keys:
        return []
    rates = sorted({r for _, r in keys})
    ts = [t for t in TRANSPORTS if any(k[0] == t for k in keys)]
    size = next(k[3] for k in agg if k[0] == mtu and k[2] == "rr-load")
    out = ["", "#### Latency under offered load (open loop, %s requests, µs from each "
           "request's scheduled send time)" % size_label(size), "",
           "A round trip counts from when its request was due, so a sender running late adds "
           "to it; \"send lag\" (where the tool reports it) is how late the requests went "
           "out.", ""]
    lagged = {k[1] for k, a in agg.items() if k[0] == mtu and k[2] == "rr-load"
              and a.get("send_lag_p99_us")}
    header = ["offered /s"]
    for t in ts:
        header += ["%s p50" % LABEL[t], "%s p99" % LABEL[t], "%s achieved /s" % LABEL[t],
                   "%s lost" % LABEL[t]]
        if t in lagged:
            header.append("%s send lag p99" % LABEL[t])
    rows = []
    for r in rates:
        row = ["%g" % r]
        for t in ts:
            k = next((k for k in agg if k[0] == mtu and k[1] == t and k[2] == "rr-load"
                      and k[4] == r), None)
            a = agg.get(k) or {}
            row += [cell(a.get("p50_us")), cell(a.get("p99_us")), cell(a.get("msgs_s")),
                    str(a["lost"]) if a else "—"]
            if t in lagged:
                row.append(cell(a.get("send_lag_p99_us")))
        rows.append(row)
    return out + table(header, rows)


def plots(agg, mtus, outdir, stem):
    """Three PNGs; returns their file names (empty without matplotlib)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return [], "matplotlib is not installed (python3-matplotlib): no plots"
    files = []

    def curve(ax, mtu, test, metric, xkey):
        drawn = False
        for t in TRANSPORTS:
            pts = sorted((k[xkey], a[metric]) for k, a in agg.items()
                         if k[0] == mtu and k[1] == t and k[2] == test and a.get(metric))
            if not pts:
                continue
            x = [p[0] for p in pts]
            med = [p[1][0] for p in pts]
            err = [[p[1][0] - p[1][1] for p in pts], [p[1][2] - p[1][0] for p in pts]]
            ax.errorbar(x, med, yerr=err, marker="o", ms=3, capsize=2, label=LABEL[t],
                        color="C%d" % TRANSPORTS.index(t))
            drawn = True
        return drawn

    def figure(name, test, metric, xkey, xlabel, ylabel, ylog):
        fig, axes = plt.subplots(1, len(mtus), figsize=(6 * len(mtus), 4.5), squeeze=False)
        drawn = False
        for ax, mtu in zip(axes[0], mtus):
            if curve(ax, mtu, test, metric, xkey):
                drawn = True
            ax.set_xscale("log", base=2 if xkey == 3 else 10)
            if ylog:
                ax.set_yscale("log")
            ax.set_title("MTU %d" % mtu)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            ax.grid(True, which="both", alpha=0.3)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=8)
        fig.suptitle("%s — median of the repetitions, bars: min..max" % name, fontsize=10)
        fig.tight_layout()
        if drawn:
            fn = "%s-%s.png" % (stem, name)
            fig.savefig(os.path.join(outdir, fn), dpi=110)
            files.append(fn)
        plt.close(fig)

    figure("rtt-vs-size", "rr", "p50_us", 3, "message size (bytes)", "round trip p50 (µs)", True)
    figure("throughput-vs-size", "stream", "mb_s", 3, "message size (bytes)",
           "receiver MB/s", True)
    if any(k[2] == "rr-load" for k in agg):
        fig, axes = plt.subplots(1, len(mtus), figsize=(6 * len(mtus), 4.5), squeeze=False)
        for ax, mtu in zip(axes[0], mtus):
            rates = set()
            for i, t in enumerate(TRANSPORTS):
                for metric, style in (("p50_us", "-o"), ("p99_us", "--^")):
                    pts = sorted((k[4], a[metric]) for k, a in agg.items()
                                 if k[0] == mtu and k[1] == t and k[2] == "rr-load"
                                 and a.get(metric))
                    if pts:
                        rates.update(p[0] for p in pts)
                        ax.errorbar([p[0] for p in pts], [p[1][0] for p in pts],
                                    yerr=[[p[1][0] - p[1][1] for p in pts],
                                          [p[1][2] - p[1][0] for p in pts]],
                                    fmt=style, ms=3, capsize=2, color="C%d" % i,
                                    label="%s %s" % (LABEL[t], metric[:3]))
            ax.set_xscale("log")
            if rates:
                ax.set_xticks(sorted(rates))
                ax.set_xticklabels(["%g" % r for r in sorted(rates)], fontsize=8)
                ax.minorticks_off()
            ax.set_yscale("log")
            ax.set_title("MTU %d" % mtu)
            ax.set_xlabel("offered requests/s")
            ax.set_ylabel("round trip (µs)")
            ax.grid(True, which="both", alpha=0.3)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=8)
        fig.suptitle("latency-vs-load — median of the repetitions, bars: min..max", fontsize=10)
        fig.tight_layout()
        fn = "%s-latency-vs-load.png" % stem
        fig.savefig(os.path.join(outdir, fn), dpi=110)
        files.append(fn)
        plt.close(fig)
    return files, None


def write_csv(agg, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        head = ["layout", "mtu", "transport", "test", "size", "rate", "reps", "msgs_median",
                "lost_total"]
        for m in METRICS:
            head += [m + "_median", m + "_min", m + "_max"]
        w.writerow(head)
        order = {t: i for i, t in enumerate(TRANSPORTS)}
        for k in sorted(agg, key=lambda k: (-k[0], order.get(k[1], 99), k[1], k[2], k[3], k[4])):
            a = agg[k]
            row = [LAYOUT, k[0], k[1], k[2], k[3], k[4] or "", a["reps"],
                   "" if a["msgs"] is None else a["msgs"], a["lost"]]
            for m in METRICS:
                row += ["", "", ""] if a[m] is None else ["%.3f" % v for v in a[m]]
            w.writerow(row)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("jsonl")
    ap.add_argument("--kver", default="unknown")
    ap.add_argument("--date", default=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    ap.add_argument("--rev", default="unknown")
    ap.add_argument("--accel", default="unknown")
    ap.add_argument("--wall", default=None)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "..", "bench", "results"))
    ap.add_argument("--layout", choices=["a", "b"], default="a")
    ap.add_argument("--mode", choices=["wall", "icount"], default="wall",
                    help="icount: the guest's clock counted instructions (bench.sh BENCH_ICOUNT=1)")
    args = ap.parse_args()
    global LAYOUT, TARGETS
    LAYOUT = args.layout
    if LAYOUT == "b":
        TARGETS = TARGETS_B
        LABEL["tipc"] = "TIPC"

    meta, frames, runs, errors = load(args.jsonl)
    agg = aggregate(runs)
    mtus = sorted({k[0] for k in agg}, reverse=True)
    present = {k[1] for k in agg}
    os.makedirs(args.out, exist_ok=True)
    stem = "%s-%s-%s%s" % (args.date[:10], args.kver, LAYOUT,
                           "-icount" if args.mode == "icount" else "")
    raw = os.path.join(args.out, stem + ".jsonl")
    if not (os.path.exists(raw) and os.path.samefile(args.jsonl, raw)):
        shutil.copyfile(args.jsonl, raw)
    write_csv(agg, os.path.join(args.out, stem + ".csv"))
    pngs, noplot = plots(agg, mtus, args.out, stem) if mtus else ([], "no results: no plots")

    def sizes_of(test, mtu=None):
        return sorted({k[3] for k in agg if k[2] == test and (mtu is None or k[0] == mtu)})

    notes, cpu_methods = {}, {}
    for (mtu, t, test), lines in runs.items():
        for line in lines:
            d = line["data"]
            cpu_methods.setdefault(d.get("tool", "?"), d.get("cpu_method") or "not stated")
            if d.get("notes"):
                notes.setdefault("%s %s" % (LABEL.get(t, t), test), d["notes"])
            for s in d.get("skipped") or []:
                notes.setdefault("%s %s: skipped %s" % (LABEL.get(t, t), test, size_label(s["size"])),
                                 s.get("why", ""))
    reps = meta.get("reps", max((a["reps"] for a in agg.values()), default=0))
    unavail = {k: v for k, v in (meta.get("unavailable") or {}).items() if v}

    if LAYOUT == "a":
        md = ["# Transports side by side, layout (a): one VM, two namespaces, one veth", ""]
    else:
        md = ["# Transports side by side, layout (b): two VMs, one dedicated virtio NIC", ""]
    md += [
        "- command: `make bench` (scripts/bench.sh; the transport part is "
        "scripts/bench-transports.sh, this report scripts/bench-report.py)",
        "- date: %s; tree: %s; host: %s, %d cores" % (args.date, args.rev,
                                                      cpu_model(), os.cpu_count()),
        "- guest kernel: %s, %s vCPUs, %s (virtme-ng)%s" % (
            meta.get("kernel", args.kver), meta.get("cpus", "?"), args.accel,
            "; VM wall time %s s" % args.wall if args.wall else ""),
        "- transport runs: %s s (estimated beforehand: %s s); ics module parameters: %s" % (
            meta.get("elapsed_s", "?"), meta.get("estimated_s", "?"),
            meta.get("ics_params") or "defaults"),
        "- %s repetitions, transports interleaved in each (%s); %s s per size (and per rate); "
        "%s (%s); every figure is the median "
        "over the repetitions, with the spread (min–max) in brackets" % (
            reps, " ".join(meta.get("order", TRANSPORTS)), meta.get("secs", "?"),
            meta.get("pinning", "pinning unknown"),
            "client in one namespace, server in the other" if LAYOUT == "a" else
            "client in one VM, servers in the other, each VM 1 vCPU; the NIC is qemu's "
            "virtio-net on its dgram backend (a UDP datagram per frame between the two qemus "
            "on 127.0.0.1: no offloads, and a frame is lost when the receiving qemu's socket "
            "buffer is full); one pair of VMs booted per MTU"),
        "- round trip: one SIZE-byte request answered by SIZE bytes, one at a time, timed in "
        "user space by the client (ics-kernel: in the kernel); p50/p99 over every round trip "
        "of the run. stream: SIZE-byte messages sent as fast as the sender can, counted by "
        "the receiver (MB/s of message payload received, over the receiver's first to last "
        "arrival). CPU per message: the whole VM's non-idle time (%s) over the "
        "messages; see the notes for how each tool measures it" % (
            "both ends" if LAYOUT == "a" else "the client's VM; icsperf adds its server's"),
    ]
    if args.mode == "icount":
        md.append("- deterministic mode (qemu -icount shift=0,sleep=off): the guest's clock "
                  "advances one nanosecond per instruction executed and skips idle time, so "
                  "1 µs is 1000 guest instructions and 1 MB/s is one byte per 1000 "
                  "instructions: a figure is the work done on the path, by every CPU; a "
                  "round trip repeats from boot to boot within 0.05 %, a stream within "
                  "about 5 %. It is not a wall time on hardware: every instruction costs "
                  "the same, and caches, memory latency and a real NIC (DMA, interrupt "
                  "coalescing) are not modelled; the targets below compare instructions")
    elif args.accel != "KVM":
        md.append("- the VM is emulated (TCG): absolute figures are the emulator's; the "
                  "ratios between transports measured in the same boot are the ones to read")
    for k, v in sorted(unavail.items()):
        md.append("- not measured: %s (%s)" % ({"ics": "ics-user, ics-kernel",
                                                "tipc": "TIPC"}.get(k, k), v))
    if frames and LAYOUT == "b":
        md += ["", "Here TIPC's peer is another kernel: every message crosses the NIC, as "
               "the packets it carried (both directions) during one short run each show:", ""]
    elif frames:
        md += ["", "TIPC between two namespaces of one kernel hands messages across directly "
               "instead of over its Ethernet bearer, so its figures are not veth figures "
               "(\"TIPC same-host\"). Packets the veth carried (both directions; a GSO "
               "segment counts once) during one short run each:", ""]
    if frames:
        rows = []
        for f in sorted(frames, key=lambda f: (-f["mtu"], f["data"]["of_test"], f["transport"])):
            d = f["data"]
            rows.append([str(f["mtu"]), LABEL.get(f["transport"], f["transport"]), d["of_test"],
                         size_label(d["size"]), str(d["msgs"]), str(d["veth_frames"]),
                         "%.2f" % d["frames_per_msg"], str(d.get("idle_frames", "—"))])
        md += table(["MTU", "transport", "test", "size", "messages (rr: round trips)",
                     "veth packets" if LAYOUT == "a" else "NIC packets", "per message",
                     "packets in as long idle"], rows)
        gso = [f for f in frames if f["transport"] == "tcp" and f["data"]["of_test"] == "stream"
               and f["data"]["frames_per_msg"] < f["data"]["size"] / f["mtu"]]
        if gso:
            md += ["", "The raw-frame floor is a floor for round trips. In a stream TCP put "
                   "fewer packets on the veth than its bytes need MTU-sized frames (%s): it "
                   "hands the veth GSO segments, one packet for several frames' worth, which "
                   "AF_PACKET frames cannot, so TCP may exceed the floor there." % ", ".join(
                       "MTU %d: %.2f per %s message" % (f["mtu"], f["data"]["frames_per_msg"],
                                                         size_label(f["data"]["size"]))
                       for f in gso)]
    if noplot:
        md += ["", "(%s)" % noplot]
    for mtu in mtus:
        md += ["", "## MTU %d" % mtu, "", "### Targets", ""]
        md += target_lines(agg, mtu, lambda test: sizes_of(test, mtu))
        if LAYOUT == "b":
            md += added_lines(runs, mtu)
        md += section(agg, mtu, "rr", "p50_us", "Round trip p50 (µs)", present,
                      sizes_of("rr", mtu))
        md += section(agg, mtu, "rr", "p99_us", "Round trip p99 (µs)", present,
                      sizes_of("rr", mtu))
        md += section(agg, mtu, "stream", "mb_s", "Stream throughput (MB/s received)", present,
                      sizes_of("stream", mtu))
        md += ["", "#### CPU per message (µs, whole VM), round trips / stream", ""]
        rows = []
        for s in sorted(set(sizes_of("rr", mtu)) | set(sizes_of("stream", mtu))):
            rows.append([size_label(s)] + [
                "%s / %s" % (fmt(((agg.get((mtu, t, "rr", s, 0)) or {}).get("cpu_us_per_msg")
                                  or [None])[0]),
                             fmt(((agg.get((mtu, t, "stream", s, 0)) or {}).get("cpu_us_per_msg")
                                  or [None])[0]))
                for t in TRANSPORTS])
        md += table(["size"] + [LABEL[t] for t in TRANSPORTS], rows)
        md += load_section(agg, mtu)
        lost = sorted((k, a["lost"]) for k, a in agg.items() if k[0] == mtu and a["lost"]
                      and k[2] != "stream")
        if lost:
            md += ["", "Round trips lost (summed over the repetitions): " + "; ".join(
                "%s %s %s%s: %d" % (LABEL.get(k[1], k[1]), k[2], size_label(k[3]),
                                    " at %g/s" % k[4] if k[4] else "", n) for k, n in lost)]
    if pngs:
        md += ["", "## Plots", ""] + ["![%s](%s)" % (p[len(stem) + 1:-4], p) for p in pngs]
    if cpu_methods:
        notes["CPU per message"] = "; ".join("%s: %s" % kv for kv in sorted(cpu_methods.items()))
        if len(set(cpu_methods.values())) > 1:
            notes["CPU per message"] += (" — the tools measure it differently, so their CPU "
                                         "figures are not comparable with each other")
    if notes or errors:
        md += ["", "## Notes", ""]
        md += ["- %s: %s" % (k, v) for k, v in sorted(notes.items())]
        md += ["- failed: %s" % e for e in errors]
    text = "\n".join(md) + "\n"
    with open(os.path.join(args.out, stem + ".md"), "w") as f:
        f.write(text)
    print(text)
    print("bench: transport report: %s.{md,csv,jsonl}%s" % (
        os.path.join(args.out, stem), ", " + ", ".join(pngs) if pngs else ""))


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return socket.gethostname()


if __name__ == "__main__":
    sys.exit(main())
