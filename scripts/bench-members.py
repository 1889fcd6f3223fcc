#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Membership figures for `make bench` (run in the VM by bench-guest.sh,
ics.ko loaded, ics_members.py from selftests/ next to this file).

  bench-members.py detect HB_MS MISSES KILLS
      Three members on a bridge, heartbeat HB_MS and MISSES set on each
      (icsctl set). KILLS times: take node 3's bridge port down, wait until
      nodes 1 and 2 both hold it down, bring the port up, wait until all
      three hold each other as members again. For every survivor and kill,
      the detection time is the kernel's own figure: when the node went
      down minus when its last frame was heard (both CLOCK_MONOTONIC, in
      the survivor's kernel). Nothing is heard after the kill, so this is
      at least the time from the kill itself. Also reported: the time from
      the start of the `ip link set down` command, which adds the emulated
      guest's slowness to start a process.
  bench-members.py form N
      N members on a bridge, bound all at once (one icsctl each, in
      parallel); the time from the last bind (the instance's own entry)
      to the last transition that completed every view, and from the
      first bind.

Prints one JSON object on stdout.
"""
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ics_members as im  # noqa: E402

PFX = "bm"
BR = PFX + "-br"


def sh(*cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise im.Fail("%s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))
    return r.stdout


def ns(n):
    return "%s-m%d" % (PFX, n)


def in_ns(n, *cmd):
    return sh("ip", "netns", "exec", ns(n), *cmd)


def topo(n):
    sh("ip", "netns", "add", BR)
    sh("ip", "-n", BR, "link", "add", "br0", "type", "bridge")
    sh("ip", "-n", BR, "link", "set", "br0", "up")
    for i in range(1, n + 1):
        sh("ip", "netns", "add", ns(i))
        sh("ip", "-n", ns(i), "link", "add", "eth0", "type", "veth",
           "peer", "name", "p%d" % i, "netns", BR)
        sh("ip", "-n", ns(i), "link", "set", "eth0", "up")
        sh("ip", "-n", BR, "link", "set", "p%d" % i, "master", "br0", "up")


def teardown(n):
    for i in range(1, n + 1):
        subprocess.run(["ip", "netns", "del", ns(i)], capture_output=True)
    subprocess.run(["ip", "netns", "del", BR], capture_output=True)


def full_view(n, secs):
    """Wait until every member holds every other as member; return
    (latest transition, earliest bind, latest bind) in ns."""
    def check():
        latest, binds, missing = 0, [], []
        for i in range(1, n + 1):
            m = im.by_node(im.members(ns(i)))
            binds.append(m[i]["since_ns"])
            for o in range(1, n + 1):
                if o == i:
                    continue
                e = m.get(o)
                if not e or e["state"] != "member":
                    missing.append("node %d holds %d as %s" % (i, o, e and e["state"]))
                else:
                    latest = max(latest, e["since_ns"])
        return not missing, ((latest, min(binds), max(binds)) if not missing
                             else "; ".join(missing[:4]))
    return im.poll(secs, check, "full view of %d members" % n)


def summary(xs):
    xs = sorted(xs)
    return {"n": len(xs), "median_ms": round(statistics.median(xs), 2),
            "min_ms": round(xs[0], 2), "max_ms": round(xs[-1], 2)}


def detect(hb, misses, kills):
    n, victim = 3, 3
    topo(n)
    try:
        for i in range(1, n + 1):
            in_ns(i, "icsctl", "bind", "dev", "eth0", "node", str(i))
            in_ns(i, "icsctl", "set", "heartbeat", str(hb), "misses", str(misses))
        full_view(n, 30)
        # Survivors 1 and 2 must never lose each other: their entries for
        # each other must not change (since_ns is the last transition).
        keep = {o: im.by_node(im.members(ns(o)))[3 - o]["since_ns"] for o in (1, 2)}
        from_frame, from_cmd, false_downs = [], [], 0
        for _ in range(kills):
            t0 = time.monotonic_ns()
            sh("ip", "-n", BR, "link", "set", "p%d" % victim, "down")
            for o in range(1, n):
                def check():
                    e = im.by_node(im.members(ns(o))).get(victim)
                    return e is not None and e["state"] == "down", e
                e = im.poll(10, check, "node %d holds node %d down" % (o, victim))
                from_frame.append((e["since_ns"] - e["last_heard_ns"]) / 1e6)
                from_cmd.append((e["since_ns"] - t0) / 1e6)
            sh("ip", "-n", BR, "link", "set", "p%d" % victim, "up")
            full_view(n, 30)
        for o in (1, 2):
            e = im.by_node(im.members(ns(o)))[3 - o]
            if e["state"] != "member" or e["since_ns"] != keep[o]:
                false_downs += 1
        return {"heartbeat_ms": hb, "misses": misses, "bound_ms": hb * (misses + 1),
                "kills": kills, "from_last_frame": summary(from_frame),
                "from_kill_command": summary(from_cmd), "false_downs": false_downs}
    finally:
        teardown(n)


def form(n):
    topo(n)
    try:
        procs = [subprocess.Popen(["ip", "netns", "exec", ns(i), "icsctl", "bind",
                                   "dev", "eth0", "node", str(i)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                 for i in range(1, n + 1)]
        for p in procs:
            if p.wait():
                raise im.Fail("bind: %s" % p.stderr.read().strip())
        latest, first, last = full_view(n, 120)
        return {"members": n, "after_last_bind_ms": round((latest - last) / 1e6, 2),
                "after_first_bind_ms": round((latest - first) / 1e6, 2),
                "binds_spread_ms": round((last - first) / 1e6, 2)}
    finally:
        teardown(n)


def main():
    try:
        if sys.argv[1] == "detect":
            r = detect(*(int(a) for a in sys.argv[2:5]))
        elif sys.argv[1] == "form":
            r = form(int(sys.argv[2]))
        else:
            raise im.Fail("unknown command %s" % sys.argv[1])
    except (im.Fail, IndexError, ValueError) as e:
        print("bench-members: %s" % e, file=sys.stderr)
        sys.exit(1)
    print(json.dumps(r))


if __name__ == "__main__":
    main()
