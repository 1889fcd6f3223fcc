#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Membership checks for members.sh, one Python process per check (Python
starts slowly in a TCG guest). Times are CLOCK_MONOTONIC nanoseconds, the
clock of the kernel's ktime_get_ns() and of `icstat -j members` (since_ns,
last_heard_ns): a transition is timed by the kernel, not by how fast this
script polls.

  ics_members.py now
      Print CLOCK_MONOTONIC in ns.
  ics_members.py view SECS T0_NS WITHIN_MS NS:NODE...
      Wait until the instance of every NS (node NODE) holds every other
      listed node as a member; the view formed when the last of those
      transitions happened: print it in ms after the last of the binds
      (and after T0_NS), and fail if that is more than WITHIN_MS (0: no
      limit).
  ics_members.py kill [--async] WITHIN_MS STATES VICTIM NS... -- CMD...
      Run CMD (the kill); wait until every NS holds node VICTIM in one of
      STATES (comma-separated: down,left). A node down must have gone down
      at most WITHIN_MS after the last frame heard from it, and nothing
      must have been heard from it after CMD returned (unless --async: the
      kill completes after CMD returns, as `ip netns del` hands the
      namespace's teardown to a kernel worker). Nothing is heard
      after the kill, so its last frame came at or before the kill: the
      delay from the last frame is at least the delay from the kill, and
      is measured by the kernel alone (a TCG guest takes hundreds of ms to
      start the command that kills, which would blur a delay measured from
      a time the test takes). A node left must have left on its last frame
      (its LEAVING heartbeat). Prints every delay.
  ics_members.py state SECS NODE STATES NS...
      Wait until every NS holds NODE in one of STATES.
  ics_members.py quorum SECS yes|no NS...
      Wait until every NS has (or has not) quorum.
  ics_members.py get NS EXPR
      Evaluate EXPR over `icstat -j members` of NS (as j); print it.
  ics_members.py events FILE NODE...
      FILE holds `icstat -j monitor` output: a start line, then events.
      Checks: generations never go back; NODE events' old_state is the
      state the previous event left the node in; print a summary.
  ics_members.py soak FILE SECS
      FILE: monitor output over a soak: no node event that took a node
      out of the view (down, or member -> joining).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ics_model import loads, run  # noqa: E402

NETNS_DIR = "/run/netns" if os.path.isdir("/run/netns") else "/var/run/netns"
SCALE = int(os.environ.get("ICS_TIMEOUT_SCALE", "1") or 1)


class Fail(Exception):
    pass


def members(ns):
    cmd = (["nsenter", "--net=%s/%s" % (NETNS_DIR, ns)] if ns else []) + \
        ["icstat", "-j", "members"]
    rc, out, err = run(cmd)
    if rc:
        raise Fail("icstat -j members in %s: exit %d: %s" % (ns, rc, err.strip()))
    return loads(out)


def by_node(j):
    return {m["node"]: m for m in j["members"]}


def poll(secs, fn, what):
    deadline = time.monotonic() + secs * SCALE
    last = None
    while True:
        try:
            ok, last = fn()
        except Fail as e:
            ok, last = False, str(e)
        if ok:
            return last
        if time.monotonic() > deadline:
            raise Fail("%s: not after %ds: %s" % (what, secs * SCALE, last))
        time.sleep(0.02)


def view(args):
    secs, t0, within = int(args[0]), int(args[1]), int(args[2])
    pairs = [a.split(":") for a in args[3:]]
    nodes = [int(n) for _, n in pairs]

    def check():
        latest, missing, bound = 0, [], 0
        for ns, node in pairs:
            m = by_node(members(ns))
            bound = max(bound, m[int(node)]["since_ns"])
            for other in nodes:
                if other == int(node):
                    continue
                e = m.get(other)
                if not e or e["state"] != "member":
                    missing.append("node %s holds %d as %s" % (node, other, e and e["state"]))
                else:
                    latest = max(latest, e["since_ns"])
        return not missing, ((latest, bound) if not missing else "; ".join(missing[:4]))
    latest, bound = poll(secs, check, "full view of %d members" % len(pairs))
    ms = (latest - bound) / 1e6
    if t0:
        print("# full view of %d members formed %.1f ms after the last bind, %.1f ms after "
              "the first bind command started" % (len(pairs), ms, (latest - t0) / 1e6))
    else:
        print("# full view of %d members" % len(pairs))
    if within and ms > within:
        raise Fail("full view took %.1f ms after the last bind, want <= %d ms" % (ms, within))


def kill(args):
    late_ok = args[0] == "--async"
    if late_ok:
        args = args[1:]
    within, states, victim = int(args[0]), args[1].split(","), int(args[2])
    i = args.index("--")
    nss, cmd = args[3:i], args[i + 1:]
    t0 = time.monotonic_ns()
    rc, _, err = run(cmd)
    t1 = time.monotonic_ns()
    if rc:
        raise Fail("%s: exit %d: %s" % (" ".join(cmd), rc, err.strip()))
    errs = []
    for ns in nss:
        def check():
            e = by_node(members(ns)).get(victim)
            return e is not None and e["state"] in states, e
        e = poll(10, check, "%s holds node %d %s" % (ns, victim, "/".join(states)))
        d = (e["since_ns"] - e["last_heard_ns"]) / 1e6
        print("# %s: node %d %s (%s) %.1f ms after its last frame; the kill command ran "
              "%.1f to %.1f ms before" % (ns, victim, e["state"], e["reason"], d,
                                         (e["since_ns"] - t1) / 1e6, (e["since_ns"] - t0) / 1e6))
        if e["state"] == "left":
            # Its LEAVING heartbeat was the last frame heard: nobody waited
            # for silence. (Timed from the kill, a left node shows how slowly
            # the guest starts the unbinding command, not ics.)
            if e["reason"] != "leaving" or e["since_ns"] != e["last_heard_ns"]:
                errs.append("%s: node %d left (%s) %.1f ms after its last frame, want at it"
                            % (ns, victim, e["reason"], (e["since_ns"] - e["last_heard_ns"]) / 1e6))
        elif d > within:
            errs.append("%s: node %d %s %.1f ms after its last frame, want <= %d ms"
                        % (ns, victim, e["state"], d, within))
        elif e["last_heard_ns"] > t1 and not late_ok:
            errs.append("%s: node %d was heard %.1f ms after the kill command returned"
                        % (ns, victim, (e["last_heard_ns"] - t1) / 1e6))
    if errs:
        raise Fail("; ".join(errs))


def state(args):
    secs, node, states, nss = int(args[0]), int(args[1]), args[2].split(","), args[3:]
    for ns in nss:
        def check():
            e = by_node(members(ns)).get(node)
            return e is not None and e["state"] in states, e and e["state"]
        poll(secs, check, "%s holds node %d %s" % (ns, node, "/".join(states)))


def quorum(args):
    secs, want, nss = int(args[0]), args[1] == "yes", args[2:]
    for ns in nss:
        def check():
            j = members(ns)
            return j["has_quorum"] == want, "has_quorum %s, votes %d of %d, quorum %d" % (
                j["has_quorum"], j["current_votes"], j["expected_votes"], j["quorum"])
        poll(secs, check, "%s has_quorum %s" % (ns, want))


def read_events(path):
    lines = [loads(l) for l in open(path) if l.strip()]
    if not lines or lines[0].get("type") != "start":
        raise Fail("%s: no start line" % path)
    return lines[0], lines[1:]


def events(args):
    start, evs = read_events(args[0])
    watch = {int(n) for n in args[1:]}
    gen = start.get("generation", 0)
    state, counts, errs = {}, {}, []
    for e in evs:
        if e["generation"] < gen:
            errs.append("generation went back: %d after %d" % (e["generation"], gen))
        gen = e["generation"]
        t = e["type"]
        if t == "node":
            n = e["node"]
            if n in state and e["old_state"] != state[n]:
                errs.append("node %d: event from %s, but the last one left it %s"
                            % (n, e["old_state"], state[n]))
            state[n] = e["state"]
            if n in watch:
                k = "%s->%s(%s)" % (e["old_state"], e["state"], e["reason"])
                counts[k] = counts.get(k, 0) + 1
        elif t in ("quorum", "bound", "unbound", "conflict"):
            counts[t] = counts.get(t, 0) + 1
        if e.get("lost"):
            errs.append("%d events lost" % e["lost"])
    print("# events: %s" % ", ".join("%s x%d" % kv for kv in sorted(counts.items())))
    if errs:
        raise Fail("; ".join(errs[:5]))
    return counts


def soak(args):
    _, evs = read_events(args[0])
    bad = [e for e in evs if e["type"] == "node" and
           (e["state"] == "down" or (e["old_state"] == "member" and e["state"] != "member"))]
    print("# soak: %d events, %d took a node out of the view" % (len(evs), len(bad)))
    for e in bad[:10]:
        print("#   node %d %s -> %s (%s, silent %d ms)"
              % (e["node"], e["old_state"], e["state"], e["reason"], e.get("silent_ms", -1)))
    if bad:
        raise Fail("false failure detection during the soak")


def get(args):
    j = members(args[0])
    v = eval(args[1])
    if isinstance(v, (dict, list, bool)) or v is None:
        import json
        v = json.dumps(v)
    print(v)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    try:
        if cmd == "now":
            print(time.monotonic_ns())
        else:
            {"view": view, "kill": kill, "state": state, "quorum": quorum, "get": get,
             "events": events, "soak": soak}[cmd](args)
    except Fail as e:
        print("# FAIL: %s" % e)
        sys.exit(1)


if __name__ == "__main__":
    main()
