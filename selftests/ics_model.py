#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ics selftest helper: snapshots, polling and exact model checks.

Python starts slowly in a TCG guest (about a second), so every check that
would take many small JSON reads runs here, in one process, reading
`icstat -j` through nsenter (about 0.1 s each; ip netns exec costs more).

  ics_model.py snap NS OUT [NS OUT]...
      One consistent snapshot {"show", "chan", "nodes", "links", "test"} of
      the instance of NS into OUT (re-read until no hello was counted while
      reading; "test": `icsctl test show` once every message the test
      service took is counted, {} without ics_test), for each NS.

  ics_model.py reachable SECONDS NS:NODE...
      Wait until the instance of each NS sees NODE reachable.

  ics_model.py wait NS SOURCE EXPR WANT SECONDS [WHAT]
      Poll `icstat -j SOURCE` (SOURCE test: `icsctl -j test show`) until
      the Python expression EXPR over it (as j) prints as WANT. On timeout
      print the last value and exit 1.

  ics_model.py check SENDS [--wait-rx NS:COUNT:SECONDS]...
                 [--frames NODE:DIR:COUNT:SIZE:PAYLOAD:PREV]... NODE:NS:OUT[:BASE]...
      Wait for the receivers, snapshot every member into OUT, then check
      every member exactly against the model computed from SENDS (every
      generator send since load: lines "SRC DST CHANNEL SIZE COUNT"; a line
      "MARK" starts the part that BASE snapshots cover):
        - per channel, tx and rx: msgs, bytes and all 27 histogram rows
          (row rule of ics_hist_row()); CNX also carries hello_tx/hello_rx
          hellos of 16 bytes;
        - the test service's rx_ok = generator messages received, rx_bad
          = 0, rx_unclaimed = rx msgs on channels without a handler (not
          CNX);
        - no rx_bad_*/dup/conflict count, tx_errors = 0;
        - with BASE: per-node tx/rx msgs and bytes grew by the traffic
          after MARK, and no hello was counted meanwhile;
        - no frame failed its CRC32C (rx_bad_check), no message failed
          (msgs_failed);
        - --frames NODE:PEER:DIR:COUNT:SIZE:PAYLOAD:PREV: the data frames
          of NODE's link to PEER (icstat links: tx_frames = sent the first
          time, rx_frames = accepted; acks, hellos and retransmits are not
          in them) grew since PREV by COUNT * max(1, ceil(SIZE / PAYLOAD))
          (PAYLOAD = MTU - sizeof(struct ics_wire_hdr)), less one frame
          for each message that shared a frame with the one before it
          (tx/rx_bundled - tx/rx_bundles: NODE must have this one peer).

  ics_model.py peers SENDS NODE:NS...
      The channels' counters per peer of every member (icstat -N PEER
      chanhisttot, peerhisttot) against the model from SENDS (all of it:
      per-peer tables count data messages since the node was first heard),
      exactly: per (peer, channel, direction) msgs, bytes and the 27 rows;
      peerhisttot is their sum over channels, and each peer's sums are its
      icstat nodes counters.

  ics_model.py inj-check NS BASE OUT COUNTER VALID [CHAN.FIELD=DELTA]...
                 [rcv_nxt=PEER:SEQ]
      For bad_input.sh: wait until channel DLM rx msgs is BASE's + 1 (the
      fence frame), snapshot into OUT, then: stats COUNTER grew by 1 (none:
      no counter; COUNTER+COUNTER2 for two), every other rx_bad_*/dup/
      conflict/session/window counter by 0, rx_frames by VALID + 1, and per
      channel rx.msgs, rx.bytes, rx_unclaimed and the test service's
      test.rx_ok, test.rx_bad by 0, except the fence (DLM: 1 msg, 1 byte,
      unclaimed: the test service must not be attached to DLM) and the
      deltas given; with rcv_nxt, the link to PEER
      expects SEQ next, its rx_frames grew as much as its rcv_nxt, and
      its duplicates, out_of_order and crc_errors by 0 unless given as
      link.PEER.FIELD=DELTA.

  ics_model.py stress-check [--count CH:N]... [--saw COUNTER]... [--secs S]
                 --send NODE:NS:BASE:OUT:RESULTS_GLOB... --recv NODE:NS:BASE:OUT
      For reliable.sh and link_faults.sh: snapshot every member into OUT,
      then per sender and channel: every icsctl send -j reply in
      RESULTS_GLOB (files named *.CHANNEL) says sent = done = the count
      asked (--count CH:N, default: as many as sent), failed 0; the
      receiver's test service's rx_hash for the sender equals the sender's
      tx_hash for the receiver; per channel the receiver's test rx_ok grew
      by the messages sent to it and rx_bad by 0; no member's msgs_failed,
      rx_auth_bad, rx_no_key or tx_auth_errors grew. --saw COUNTER: the
      stats COUNTER, summed over all members, grew (> 0): the impairment
      really happened.
"""
import os
import select
import signal
import sys
import time

ROWS = 27
CNX = 15
DLM = 13
# sizeof(struct ics_wire_hello), from the UAPI header through ics_inject (lib.sh).
HELLO_LEN = int(os.environ.get("ICS_HELLO_LEN") or 176)
BAD_KEYS = ("rx_bad_len rx_bad_version rx_bad_cluster rx_bad_node rx_bad_channel "
            "rx_bad_type rx_bad_frag rx_dup_frag rx_node_conflict rx_bad_check "
            "rx_bad_hello rx_peer_down rx_auth_bad rx_no_key").split()
# Counters of the reliable link a frame can bump instead of a rx_bad_* one.
LINK_KEYS = ("rx_bad_session rx_dup_frames rx_ooo_frames rx_over_window "
             "rx_dup_msgs rx_resets").split()
LINK_RX_KEYS = ("duplicates", "out_of_order", "crc_errors")
CHANNELS = ("BOOT PRI0 PRI1 CFS NET CLSM DRD TUNL CLUA KEVM CFSR RBLD KCH DLM "
            "TEST CNX").split()
SCALE = int(os.environ.get("ICS_TIMEOUT_SCALE", "1") or 1)
NETNS_DIR = "/run/netns" if os.path.isdir("/run/netns") else "/var/run/netns"


class Fail(Exception):
    pass


def row(n):
    return 0 if n == 0 else min((n - 1).bit_length() + 1, ROWS - 1)


def run(cmd):
    """Run cmd: (exit status, stdout, stderr) as text.

    Not subprocess: importing it costs a third of a second in a TCG guest,
    and this script runs hundreds of times per test run."""
    fds = []
    pid = None
    try:
        for _ in range(2):
            fds += os.pipe()	# non-inheritable; DUP2 makes the copies inheritable
        try:
            pid = os.posix_spawnp(cmd[0], cmd, os.environ, setsigdef=(signal.SIGPIPE,),
                                  file_actions=[(os.POSIX_SPAWN_DUP2, fds[1], 1),
                                                (os.POSIX_SPAWN_DUP2, fds[3], 2)])
        except OSError as e:
            return 127, "", "%s: %s" % (cmd[0], e.strerror)
        os.close(fds.pop(3))
        os.close(fds.pop(1))
        data = {fds[0]: [], fds[1]: []}
        p = select.poll()
        for fd in data:
            p.register(fd, select.POLLIN)
        open_fds = len(data)
        while open_fds:
            for fd, _ in p.poll():
                b = os.read(fd, 65536)
                if b:
                    data[fd].append(b)
                else:
                    p.unregister(fd)
                    open_fds -= 1
        status = os.waitpid(pid, 0)[1]
        pid = None
        out, err = (b"".join(data[fd]).decode(errors="replace") for fd in fds)
        return os.waitstatus_to_exitcode(status), out, err
    finally:
        for fd in fds:
            os.close(fd)
        if pid:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


ICSTAT_CMDS = ("chanhisttot", "peerhisttot", "channels", "nodes", "links", "members", "show")


def loads(text):
    """JSON from our tools, read as the Python literal it is (true, false
    and null bound): the json module's import of re costs 0.3 s a start in
    a TCG guest, and the suite starts this thousands of times. Whatever
    does not parse raises ValueError, as json.loads would."""
    try:
        return eval(text, {"__builtins__": {}, "true": True, "false": False, "null": None})
    except (SyntaxError, NameError, TypeError) as e:
        raise ValueError("not JSON: %s" % e) from None


def icstat(ns, *args):
    cmd = (["nsenter", "--net=%s/%s" % (NETNS_DIR, ns)] if ns else []) + ["icstat", "-j"] + list(args)
    rc, out, err = run(cmd)
    if rc:
        raise Fail("icstat -j %s in %s: exit %d: %s"
                   % (" ".join(args), ns or "init netns", rc, err.strip()))
    try:
        # several commands: one object per line, in order
        js = [loads(line) for line in out.splitlines()]
        if len(js) != sum(a in ICSTAT_CMDS for a in args):
            raise ValueError("%d objects" % len(js))
        return js[0] if len(js) == 1 else js
    except ValueError as e:
        raise Fail("icstat -j %s in %s: bad JSON (%s): %r"
                   % (" ".join(args), ns, e, out[:200]))


def test_loaded():
    with open("/proc/modules") as f:
        return any(line.startswith("ics_test ") for line in f)


def test_show(ns):
    """`icsctl -j test show` in ns: the test service's channels, counters, hashes."""
    cmd = (["nsenter", "--net=%s/%s" % (NETNS_DIR, ns)] if ns else []) + \
        ["icsctl", "-j", "test", "show"]
    rc, out, err = run(cmd)
    if rc:
        raise Fail("icsctl -j test show in %s: exit %d: %s"
                   % (ns or "init netns", rc, err.strip()))
    try:
        return loads(out)
    except ValueError as e:
        raise Fail("icsctl -j test show in %s: bad JSON (%s): %r" % (ns, e, out[:200]))


def test_settled(ns):
    """The test service of ns once every message it took is counted; {} without it."""
    if not test_loaded():
        return {}
    return wait(ns, "test", 'j["queued"]', 0, 60, "%s: messages the test service took, "
                "not counted yet" % (ns or "init netns"))


def test_chan(snap, name, key):
    """A test-service counter of channel name (0 while it counted nothing)."""
    return snap.get("test", {}).get("channels", {}).get(name, {}).get(key, 0)


def snap(ns, out=None):
    h = lambda s: (s["stats"]["hello_tx"], s["stats"]["hello_rx"])
    test = test_settled(ns)
    for _ in range(20):
        s1, chan, nodes, links, s2 = icstat(ns, "show", "chanhisttot", "nodes", "links", "show")
        if h(s1) == h(s2):
            break
    else:
        raise Fail("hello counters kept changing while reading %s" % ns)
    s = {"show": s2, "chan": chan, "nodes": nodes, "links": links, "test": test}
    if out:
        import json
        with open(out, "w") as f:
            json.dump(s, f)
    return s


def load(path):
    with open(path) as f:
        return loads(f.read())


def fmt(v):
    if isinstance(v, (dict, list, bool)) or v is None:
        import json
        return json.dumps(v)
    return str(v)


def wait(ns, source, expr, want, seconds, what=None):
    deadline = time.monotonic() + float(seconds) * SCALE
    last = None
    while True:
        try:
            j = test_show(ns) if source == "test" else icstat(ns, source)
            last = fmt(eval(expr, {"j": j}))
        except Fail as e:
            last = str(e)
        except (KeyError, IndexError, TypeError, StopIteration) as e:
            last = "none (%s)" % type(e).__name__
        if last == str(want):
            return j
        if time.monotonic() >= deadline:
            raise Fail("%s: expected %s, got %s after %ss"
                       % (what or expr, want, last, float(seconds) * SCALE))
        time.sleep(0.05)


RX_GEN = 'sum(c["rx_ok"] + c["rx_bad"] for c in j["channels"].values())'


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
        ok, bad = test_chan(snap, ch.get("name"), "rx_ok"), test_chan(snap, ch.get("name"), "rx_bad")
        if ok != e["gen_rx"]:
            err("%s test service rx_ok = %d, want %d" % (name, ok, e["gen_rx"]))
        if bad != 0:
            err("%s test service rx_bad = %d, want 0" % (name, bad))
        if c != CNX and not ch["handler"] and ch["rx_unclaimed"] != e["rx"]["msgs"]:
            err("%s rx_unclaimed = %d, want %d (no handler)"
                % (name, ch["rx_unclaimed"], e["rx"]["msgs"]))
    for k in BAD_KEYS + ["tx_errors", "msgs_failed"]:
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


def link_of(snap, peer):
    """NODE's link to peer from a snapshot (or an icstat -j links reply)."""
    links = snap["links"] if "links" in snap and isinstance(snap["links"], dict) else snap
    for l in links["links"]:
        if l["node"] == peer:
            return l
    return None


def frames_errors(node, peer, d, count, size, payload, prev, now):
    a, b = link_of(prev, peer), link_of(now, peer)
    if b is None:
        return ["node %d has no link to node %d" % (node, peer)]
    per = max(1, -(-size // payload))
    # Small messages queued together share a frame (a bundle): each bundle
    # of k messages is k - 1 frames fewer. From the instance's counters,
    # exact while NODE has this one peer (histogram.sh).
    sa, sb = prev.get("show", {}).get("stats", {}), now["show"]["stats"]
    saved = ((sb[d + "_bundled"] - sa.get(d + "_bundled", 0)) -
             (sb[d + "_bundles"] - sa.get(d + "_bundles", 0)))
    want = count * per - saved
    got = b[d + "_frames"] - (a[d + "_frames"] if a else 0)
    if got != want:
        return ["node %d link to %d: %s_frames grew by %d, want %d x %d - %d bundled = %d"
                % (node, peer, d, got, count, per, saved, want)]
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
            wait(ns, "test", RX_GEN, count, secs,
                 "%s: test messages checked" % ns)
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
        node, peer, d, count, size, payload, prev = f.split(":", 6)
        errs += frames_errors(int(node), int(peer), d, int(count), int(size), int(payload),
                              load(prev), snaps[int(node)])
    return errs


def peers_errors(args):
    sends, _ = read_sends(args.pop(0))
    members = dict((int(n), ns) for n, ns in (a.split(":", 1) for a in args))
    errs = []
    err = errs.append

    def zero():
        return {"msgs": 0, "bytes": 0, "hist": [0] * ROWS}

    for node, ns in members.items():
        exp = {}	# (peer, channel, dir) -> counts
        for s, d, c, size, cnt in sends:
            for peer, dr in ((d, "tx"), (s, "rx")) if node in (s, d) else ():
                if peer == node:
                    continue
                e = exp.setdefault((peer, c, dr), zero())
                e["msgs"] += cnt
                e["bytes"] += size * cnt
                e["hist"][row(size)] += cnt
        for peer in members:
            if peer == node:
                continue
            chan, ph, nodes = icstat(ns, "-N", str(peer), "chanhisttot", "peerhisttot", "nodes")
            if chan.get("peer") != peer:
                err("node %d: icstat -N %d chanhisttot: peer %r" % (node, peer, chan.get("peer")))
            tot = {"tx": zero(), "rx": zero()}
            for ch in chan["channels"]:
                for dr in ("tx", "rx"):
                    got, want = ch[dr], exp.get((peer, ch["id"], dr), zero())
                    if got != want:
                        err("node %d, peer %d, %s %s: %s, want %s"
                            % (node, peer, ch["name"], dr, got, want))
                    for k in ("msgs", "bytes"):
                        tot[dr][k] += got[k]
                    tot[dr]["hist"] = [a + b for a, b in zip(tot[dr]["hist"], got["hist"])]
            p = next((x for x in ph["peers"] if x["node"] == peer), None)
            n = next((x for x in nodes["nodes"] if x["node_id"] == peer), {})
            for dr in ("tx", "rx"):
                if p is None or p[dr] != tot[dr]:
                    err("node %d: peerhisttot of node %d %s: %s, the channels' sum %s"
                        % (node, peer, dr, p and p[dr], tot[dr]))
                for k in ("msgs", "bytes"):
                    if n.get(dr + "_" + k) != tot[dr][k]:
                        err("node %d: nodes says %s_%s %s to/from node %d, its channels %d"
                            % (node, dr, k, n.get(dr + "_" + k), peer, tot[dr][k]))
    return errs


def cmd_inj_check(args):
    ns, base_file, out, counter, valid = args[:5]
    valid = int(valid)
    spec = [a for a in args[5:] if not a.startswith(("rcv_nxt=", "link."))]
    rcv = [a.split("=", 1)[1] for a in args[5:] if a.startswith("rcv_nxt=")]
    link_want = {}
    for a in args[5:]:
        if a.startswith("link."):
            k, v = a.split("=")
            _, peer, f = k.split(".")
            link_want[(int(peer), f)] = int(v)
    counters = set(counter.split("+")) - {"none"}
    a = load(base_file)
    dlm = a["chan"]["channels"][DLM]["rx"]["msgs"]
    wait(ns, "channels", 'j["channels"][%d]["rx"]["msgs"]' % DLM, dlm + 1, 10,
         "fence frame delivered on DLM (rx msgs)")
    b = snap(ns, out)
    names = [c["name"] for c in b["chan"]["channels"]]
    fields = ["rx.msgs", "rx.bytes", "rx_unclaimed", "test.rx_ok", "test.rx_bad"]
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
        if f.startswith("test."):
            return test_chan(snap, n, f[5:])
        return c["rx"][f[3:]] if f.startswith("rx.") else c[f]
    errs = []
    sa, sb = a["show"]["stats"], b["show"]["stats"]
    # rx_unconfirmed: claims, which joins make too, but no injected frame should
    for k in sorted(set(BAD_KEYS + LINK_KEYS + ["rx_unconfirmed"]) | counters):
        w = 1 if k in counters else 0
        if sb[k] - sa[k] != w:
            errs.append("stats %s grew by %d, want %d" % (k, sb[k] - sa[k], w))
    for r in rcv:
        peer, seq = map(int, r.split(":"))
        l, la = link_of(b, peer), link_of(a, peer)
        if l is None:
            errs.append("no link to node %d" % peer)
            continue
        if l["rcv_nxt"] != seq:
            errs.append("link to node %d: rcv_nxt %s, want %d" % (peer, l["rcv_nxt"], seq))
        # Frames the link took in sequence: as many as rcv_nxt moved on.
        d = l["rx_frames"] - (la["rx_frames"] if la else 0)
        # A session joined meanwhile started at 1.
        same = la and la["rx_session"] == l["rx_session"] and la["rcv_nxt"]
        dn = l["rcv_nxt"] - (la["rcv_nxt"] if same else 1)
        if d != dn:
            errs.append("link to node %d: rx_frames grew by %d, rcv_nxt by %d" % (peer, d, dn))
        for f in LINK_RX_KEYS:
            link_want.setdefault((peer, f), 0)
    for (peer, f), w in sorted(link_want.items()):
        l, la = link_of(b, peer), link_of(a, peer)
        d = (l[f] if l else 0) - (la[f] if la else 0)
        if d != w:
            errs.append("link to node %d: %s grew by %d, want %d" % (peer, f, d, w))
    if sb["rx_frames"] - sa["rx_frames"] != valid + 1:
        errs.append("stats rx_frames grew by %d, want %d (%d valid + the fence)"
                    % (sb["rx_frames"] - sa["rx_frames"], valid + 1, valid))
    for (n, f), w in sorted(want.items()):
        d = get(b, n, f) - get(a, n, f)
        if d != w:
            errs.append("%s %s grew by %d, want %d" % (n, f, d, w))
    return errs


def errno_name(r):
    e = r.get("error")
    return e if e else "none"


def stress_errors(args):
    counts, saw, sends, recv, secs = {}, [], [], None, None
    while args:
        a = args.pop(0)
        if a == "--secs":
            secs = int(args.pop(0))
        elif a == "--count":
            ch, n = args.pop(0).split(":")
            counts[ch] = int(n)
        elif a == "--saw":
            saw.append(args.pop(0))
        elif a == "--send":
            sends.append(args.pop(0).split(":", 4))
        elif a == "--recv":
            recv = args.pop(0).split(":")
        else:
            raise Fail("stress-check: unknown argument %r" % a)
    import glob
    errs = []
    err = errs.append
    rnode, rns, rbase, rout = int(recv[0]), recv[1], load(recv[2]), recv[3]
    r_now = snap(rns, rout)
    members = [(rnode, rns, rbase, r_now)]
    sent_to_r = [0] * 16
    done = frames = rexmit = fast = tmo = 0
    r_hash = r_now["test"].get("nodes", {})
    for node, ns, base, out, pattern in sends:
        node = int(node)
        now = snap(ns, out)
        members.append((node, ns, load(base), now))
        files = sorted(f for f in glob.glob(pattern) if not f.endswith((".err", ".rc")))
        if not files:
            err("node %d: no icsctl send replies in %s" % (node, pattern))
        for f in files:
            ch = f.rsplit(".", 1)[1]
            try:
                r = load(f)
            except (OSError, ValueError) as e:
                why = ""
                for ext in (".rc", ".err"):
                    try:
                        with open(f + ext) as fe:
                            why += " %s: %s" % (ext[1:], fe.read().strip())
                    except OSError:
                        pass
                err("node %d %s: no JSON reply (%s);%s" % (node, ch, e, why))
                continue
            want = counts.get(ch, r["sent"])
            if not (r["sent"] == r["done"] == want and r["failed"] == 0):
                err("node %d %s: sent %d done %d failed %d (first error %s), want %d sent "
                    "and done, 0 failed" % (node, ch, r["sent"], r["done"], r["failed"],
                                            errno_name(r), want))
            sent_to_r[CHANNELS.index(ch)] += r["sent"]
            done += r["done"]
        la, lb = link_of(load(base), rnode), link_of(now, rnode)
        if lb:
            frames += lb["tx_frames"] - (la["tx_frames"] if la else 0)
            rexmit += lb["retransmits"] - (la["retransmits"] if la else 0)
            fast += lb["fast_retransmits"] - (la["fast_retransmits"] if la else 0)
            tmo += lb["timeouts"] - (la["timeouts"] if la else 0)
        tx = now["test"].get("nodes", {}).get(str(rnode), {}).get("tx_hash")
        rx = r_hash.get(str(node), {}).get("rx_hash")
        if tx is None or rx is None:
            err("node %d -> %d: test hashes missing (tx %s, rx %s)" % (node, rnode, tx, rx))
        else:
            for ch in CHANNELS:
                if tx[ch] != rx[ch]:
                    err("node %d -> %d %s: sender tx_hash %08x != receiver rx_hash "
                        "%08x (lost, duplicated or reordered)" % (node, rnode, ch, tx[ch], rx[ch]))
    for c, ch in enumerate(CHANNELS):
        ok = test_chan(r_now, ch, "rx_ok") - test_chan(rbase, ch, "rx_ok")
        bad = test_chan(r_now, ch, "rx_bad") - test_chan(rbase, ch, "rx_bad")
        if ok != sent_to_r[c] or bad:
            err("node %d %s: test rx_ok grew by %d, want %d; rx_bad by %d, want 0"
                % (rnode, ch, ok, sent_to_r[c], bad))
    total = {}
    for node, ns, base, now in members:
        st, bst = now["show"]["stats"], base["show"]["stats"]
        for k in st:
            total[k] = total.get(k, 0) + st[k] - bst.get(k, 0)
        for k in ("msgs_failed", "rx_auth_bad", "rx_no_key", "tx_auth_errors"):
            if st.get(k, 0) != bst.get(k, 0):
                err("node %d: %s grew by %d, want 0" % (node, k, st[k] - bst.get(k, 0)))
    info = " ".join("%s=%d" % (k, total[k]) for k in (
        "tx_retransmits", "rx_dup_frames", "rx_ooo_frames", "rx_bad_check", "rx_over_window",
        "link_resets", "rx_dup_msgs", "msgs_done", "tx_acks", "tx_errors", "rx_replay")
        if k in total)
    print("# counters grew (all members): " + info)
    if secs is not None:
        print("# %d messages done in %ds (%.0f msg/s): %d data frames sent to node %d (%.0f/s), "
              "%d sent again (%d on SACK evidence, %d timer expiries)"
              % (done, secs, done / max(secs, 1), frames, rnode, frames / max(secs, 1), rexmit,
                 fast, tmo))
    for k in saw:
        if total.get(k, 0) <= 0:
            err("%s did not grow on any member: the impairment was not seen" % k)
    return errs


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv[1], argv[2:]
    try:
        if cmd == "snap":
            for ns, out in zip(args[::2], args[1::2]):
                snap(ns, out)
            errs = []
        elif cmd == "reachable":
            for a in args[1:]:
                ns, node = a.rsplit(":", 1)
                wait(ns, "nodes", "next(n for n in j['nodes'] if n['node_id'] == %s)['reachable']"
                     % node, "true", args[0], "node %s reachable in %s" % (node, ns or "init netns"))
            errs = []
        elif cmd == "wait":
            wait(*args)
            errs = []
        elif cmd == "check":
            errs = cmd_check(args)
        elif cmd == "inj-check":
            errs = cmd_inj_check(args)
        elif cmd == "peers":
            errs = peers_errors(args)
        elif cmd == "stress-check":
            errs = stress_errors(args)
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
