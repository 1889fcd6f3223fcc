#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ics selftest helper: snapshots, polling and exact model checks.

Python starts slowly in a TCG guest (about a second), so every check that
would take many small JSON reads runs here, in one process, reading
`icstat -j` through `ip netns exec` (about 0.1 s each).

  ics_model.py snap NS OUT
      One consistent snapshot {"show", "chan", "nodes"} of the instance of
      NS into OUT (re-read until no hello was counted while reading).

  ics_model.py wait NS SOURCE EXPR WANT SECONDS [WHAT]
      Poll `icstat -j SOURCE` until the Python expression EXPR over it (as
      j) prints as WANT. On timeout print the last value and exit 1.

  ics_model.py check SENDS [--wait-rx NS:COUNT:SECONDS]...
                 [--frames NODE:DIR:COUNT:SIZE:PAYLOAD:PREV]... NODE:NS:OUT[:BASE]...
      Wait for the receivers, snapshot every member into OUT, then check
      every member exactly against the model computed from SENDS (every
      generator send since load: lines "SRC DST CHANNEL SIZE COUNT"; a line
      "MARK" starts the part that BASE snapshots cover):
        - per channel, tx and rx: msgs, bytes and all 27 histogram rows
          (row rule of ics_hist_row()); CNX also carries hello_tx/hello_rx
          hellos of 16 bytes;
        - rx_pattern_ok = generator messages received, rx_pattern_bad = 0,
          rx_unclaimed = rx msgs on channels without a handler (not CNX);
        - no rx_bad_*/dup/conflict count, tx_errors = 0;
        - with BASE: per-node tx/rx msgs and bytes grew by the traffic
          after MARK, and no hello was counted meanwhile;
        - --frames: DIR (tx|rx)_frames of NODE grew since PREV by
          COUNT * max(1, ceil(SIZE / PAYLOAD)), hellos excluded (PAYLOAD =
          MTU - sizeof(struct ics_wire_hdr)).

  ics_model.py inj-check NS BASE OUT COUNTER VALID [CHAN.FIELD=DELTA]...
      For bad_input.sh: wait until channel DLM rx msgs is BASE's + 1 (the
      fence frame), snapshot into OUT, then: stats COUNTER grew by 1 (none:
      no counter), every other rx_bad_*/dup/conflict counter by 0, rx_frames
      by VALID + 1, and per channel rx.msgs, rx.bytes, rx_unclaimed,
      rx_pattern_ok, rx_pattern_bad by 0, except the fence (DLM: 1 msg,
      1 byte, unclaimed) and the deltas given.
"""
import json
import os
import subprocess
import sys
import time

ROWS = 27
CNX = 15
DLM = 13
HELLO_LEN = 16
BAD_KEYS = ("rx_bad_len rx_bad_version rx_bad_cluster rx_bad_node rx_bad_channel "
            "rx_bad_type rx_bad_frag rx_dup_frag rx_node_conflict").split()
SCALE = int(os.environ.get("ICS_TIMEOUT_SCALE", "1") or 1)


class Fail(Exception):
    pass


def row(n):
    return 0 if n == 0 else min((n - 1).bit_length() + 1, ROWS - 1)


def icstat(ns, *args):
    cmd = (["ip", "netns", "exec", ns] if ns else []) + ["icstat", "-j"] + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise Fail("icstat -j %s in %s: exit %d: %s"
                   % (" ".join(args), ns or "init netns", r.returncode, r.stderr.strip()))
    try:
        return json.loads(r.stdout)
    except ValueError as e:
        raise Fail("icstat -j %s in %s: bad JSON (%s): %r"
                   % (" ".join(args), ns, e, r.stdout[:200]))


def snap(ns, out=None):
    h = lambda s: (s["stats"]["hello_tx"], s["stats"]["hello_rx"])
    for _ in range(20):
        s1 = icstat(ns, "show")
        chan = icstat(ns, "chanhisttot")
        nodes = icstat(ns, "nodes")
        s2 = icstat(ns, "show")
        if h(s1) == h(s2):
            break
    else:
        raise Fail("hello counters kept changing while reading %s" % ns)
    s = {"show": s2, "chan": chan, "nodes": nodes}
    if out:
        with open(out, "w") as f:
            json.dump(s, f)
    return s


def load(path):
    with open(path) as f:
        return json.load(f)


def fmt(v):
    return json.dumps(v) if isinstance(v, (dict, list, bool)) or v is None else str(v)


def wait(ns, source, expr, want, seconds, what=None):
    deadline = time.monotonic() + float(seconds) * SCALE
    last = None
    while True:
        try:
            j = icstat(ns, source)
            last = fmt(eval(expr, {"j": j}))
        except Fail as e:
            last = str(e)
        except (KeyError, IndexError, TypeError, StopIteration) as e:
            last = "none (%s)" % type(e).__name__
        if last == str(want):
            return
        if time.monotonic() >= deadline:
            raise Fail("%s: expected %s, got %s after %ss"
                       % (what or expr, want, last, float(seconds) * SCALE))
        time.sleep(0.05)


RX_GEN = 'sum(c["rx_pattern_ok"] + c["rx_pattern_bad"] for c in j["channels"])'


def read_sends(path):
    sends, after = [], []
    marked = False
    for line in open(path):
        if line.strip() == "MARK":
            marked = True
            continue
        if not line.strip():
            continue
        s, d, c, size, cnt = map(int, line.split())
        sends.append((s, d, c, size, cnt))
        if marked:
            after.append((s, d, c, size, cnt))
    return sends, after


def model_errors(node, snap, base, sends, after):
    errs = []
    err = errs.append

    def zero():
        return {"msgs": 0, "bytes": 0, "hist": [0] * ROWS}

    def add(d, size, cnt):
        d["msgs"] += cnt
        d["bytes"] += size * cnt
        d["hist"][row(size)] += cnt

    st = snap["show"]["stats"]
    exp = [{"tx": zero(), "rx": zero(), "gen_rx": 0} for _ in range(16)]
    for s, d, c, size, cnt in sends:
        if s == node:
            add(exp[c]["tx"], size, cnt)
        if d == node:
            add(exp[c]["rx"], size, cnt)
            exp[c]["gen_rx"] += cnt
    add(exp[CNX]["tx"], HELLO_LEN, st["hello_tx"])
    add(exp[CNX]["rx"], HELLO_LEN, st["hello_rx"])
    chans = snap["chan"]["channels"]
    labels = snap["chan"].get("rows", [str(r) for r in range(ROWS)])
    if len(chans) != 16:
        return ["node %d: %d channels in chanhisttot, want 16" % (node, len(chans))]
    for c in range(16):
        ch, e = chans[c], exp[c]
        name = "node %d %s" % (node, ch.get("name"))
        if ch.get("id") != c:
            err("%s: id %s at index %d" % (name, ch.get("id"), c))
        for d in ("tx", "rx"):
            for k in ("msgs", "bytes"):
                if ch[d][k] != e[d][k]:
                    err("%s %s %s = %d, want %d" % (name, d, k, ch[d][k], e[d][k]))
            if len(ch[d]["hist"]) != ROWS:
                err("%s %s hist has %d rows, want %d" % (name, d, len(ch[d]["hist"]), ROWS))
                continue
            for r in range(ROWS):
                if ch[d]["hist"][r] != e[d]["hist"][r]:
                    err("%s %s hist row %s = %d, want %d"
                        % (name, d, labels[r], ch[d]["hist"][r], e[d]["hist"][r]))
        if ch["rx_pattern_ok"] != e["gen_rx"]:
            err("%s rx_pattern_ok = %d, want %d" % (name, ch["rx_pattern_ok"], e["gen_rx"]))
        if ch["rx_pattern_bad"] != 0:
            err("%s rx_pattern_bad = %d, want 0" % (name, ch["rx_pattern_bad"]))
        if c != CNX and not ch["handler"] and ch["rx_unclaimed"] != e["rx"]["msgs"]:
            err("%s rx_unclaimed = %d, want %d (no handler)"
                % (name, ch["rx_unclaimed"], e["rx"]["msgs"]))
    for k in BAD_KEYS + ["tx_errors"]:
        if st[k] != 0:
            err("node %d stats %s = %d, want 0" % (node, k, st[k]))
    if base is None:
        return errs
    bst = base["show"]["stats"]
    for k in ("hello_tx", "hello_rx"):
        if st[k] != bst[k]:
            err("node %d: %s went %d -> %d during the traffic (per-node counters "
                "would include it)" % (node, k, bst[k], st[k]))

    def nodes(s):
        return {n["node_id"]: n for n in s["nodes"]["nodes"]}
    now, was = nodes(snap), nodes(base)
    peers = {d for s, d, _, _, _ in after if s == node} | \
            {s for s, d, _, _, _ in after if d == node}
    for p in sorted(peers | set(now)):
        if p == node:
            err("node %d lists itself in icstat nodes" % node)
            continue
        want = {"tx_msgs": 0, "tx_bytes": 0, "rx_msgs": 0, "rx_bytes": 0}
        for s, d, c, size, cnt in after:
            if s == node and d == p:
                want["tx_msgs"] += cnt
                want["tx_bytes"] += size * cnt
            if d == node and s == p:
                want["rx_msgs"] += cnt
                want["rx_bytes"] += size * cnt
        if p not in now:
            err("node %d: peer %d missing from icstat nodes" % (node, p))
            continue
        for k, v in want.items():
            got = now[p][k] - was.get(p, {}).get(k, 0)
            if got != v:
                err("node %d: peer %d %s grew by %d, want %d" % (node, p, k, got, v))
        if not now[p]["reachable"]:
            err("node %d: peer %d not reachable" % (node, p))
    return errs


def frames_errors(node, d, count, size, payload, prev, now):
    a, b = prev["show"]["stats"], now["show"]["stats"]
    per = max(1, -(-size // payload))
    want = count * per
    got = (b[d + "_frames"] - a[d + "_frames"]) - (b["hello_" + d] - a["hello_" + d])
    if got != want:
        return ["node %d %s_frames grew by %d (hellos excluded), want %d x %d = %d"
                % (node, d, got, count, per, want)]
    return []


def stats_brief(ns):
    """Non-zero stats of an instance, for failure reports."""
    try:
        st = icstat(ns, "show")["stats"]
        return " ".join("%s=%d" % (k, v) for k, v in st.items() if v)
    except Fail as e:
        return str(e)


def cmd_check(args):
    sends_file = args.pop(0)
    waits, frames, members = [], [], []
    while args:
        a = args.pop(0)
        if a == "--wait-rx":
            waits.append(args.pop(0))
        elif a == "--frames":
            frames.append(args.pop(0))
        else:
            members.append(a)
    for w in waits:
        ns, count, secs = w.split(":")
        try:
            wait(ns, "channels", RX_GEN, count, secs,
                 "%s: generator messages received" % ns)
        except Fail as e:
            msg = str(e)
            for m in members:
                mns = m.split(":")[1]
                msg += "\n# FAIL:   stats of %s: %s" % (mns, stats_brief(mns))
            raise Fail(msg)
    sends, after = read_sends(sends_file)
    errs, snaps = [], {}
    for m in members:
        p = m.split(":")
        node, ns, out = int(p[0]), p[1], p[2]
        s = snap(ns, out)
        snaps[node] = s
        base = load(p[3]) if len(p) > 3 and p[3] else None
        errs += model_errors(node, s, base, sends, after)
    for f in frames:
        node, d, count, size, payload, prev = f.split(":", 5)
        errs += frames_errors(int(node), d, int(count), int(size), int(payload),
                              load(prev), snaps[int(node)])
    return errs


def cmd_inj_check(args):
    ns, base_file, out, counter, valid = args[:5]
    valid = int(valid)
    spec = args[5:]
    a = load(base_file)
    dlm = a["chan"]["channels"][DLM]["rx"]["msgs"]
    wait(ns, "channels", 'j["channels"][%d]["rx"]["msgs"]' % DLM, dlm + 1, 10,
         "fence frame delivered on DLM (rx msgs)")
    b = snap(ns, out)
    names = [c["name"] for c in b["chan"]["channels"]]
    fields = ["rx.msgs", "rx.bytes", "rx_unclaimed", "rx_pattern_ok", "rx_pattern_bad"]
    want = {(n, f): 0 for n in names for f in fields}
    want[("DLM", "rx.msgs")] = 1
    want[("DLM", "rx.bytes")] = 1
    if not b["chan"]["channels"][DLM]["handler"]:
        want[("DLM", "rx_unclaimed")] = 1
    for s in spec:
        k, v = s.split("=")
        n, f = k.split(".", 1)
        want[(n, f)] = want.get((n, f), 0) + int(v)

    def get(snap, n, f):
        c = snap["chan"]["channels"][names.index(n)]
        return c["rx"][f[3:]] if f.startswith("rx.") else c[f]
    errs = []
    sa, sb = a["show"]["stats"], b["show"]["stats"]
    for k in BAD_KEYS:
        w = 1 if k == counter else 0
        if sb[k] - sa[k] != w:
            errs.append("stats %s grew by %d, want %d" % (k, sb[k] - sa[k], w))
    if counter != "none" and counter not in BAD_KEYS and sb[counter] - sa[counter] != 1:
        errs.append("stats %s grew by %d, want 1" % (counter, sb[counter] - sa[counter]))
    if sb["rx_frames"] - sa["rx_frames"] != valid + 1:
        errs.append("stats rx_frames grew by %d, want %d (%d valid + the fence)"
                    % (sb["rx_frames"] - sa["rx_frames"], valid + 1, valid))
    for (n, f), w in sorted(want.items()):
        d = get(b, n, f) - get(a, n, f)
        if d != w:
            errs.append("%s %s grew by %d, want %d" % (n, f, d, w))
    return errs


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv[1], argv[2:]
    try:
        if cmd == "snap":
            snap(args[0], args[1])
            errs = []
        elif cmd == "wait":
            wait(*args)
            errs = []
        elif cmd == "check":
            errs = cmd_check(args)
        elif cmd == "inj-check":
            errs = cmd_inj_check(args)
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except Fail as e:
        print("# FAIL: %s" % e)
        return 1
    for e in errs[:40]:
        print("# FAIL: " + e)
    if len(errs) > 40:
        print("# FAIL: ... and %d more mismatches" % (len(errs) - 40))
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
