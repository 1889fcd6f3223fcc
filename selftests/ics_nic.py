#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""nic.sh's helper: frames of any kind, and the NIC view checked against the
device's own counters.

  ics_nic.py send DEV DSTMAC KIND COUNT [LEN]
      COUNT frames of LEN bytes (default 100) on DEV (AF_PACKET) to DSTMAC:
      KIND is an ethertype (0x88b6), "llc" (an 802.3 length field) or
      "vlan" (802.1Q, VID 7, over ethertype 0x88b6).
  ics_nic.py snap DEV FILE [--matchall]
      one reading of DEV's counters (ip -s -j link) and its NIC view
      (icstat -j nic DEV), taken so that nothing crossed DEV between them:
      the device's counters are read before and after the NIC view, and
      the reading is taken again until both agree; --matchall: and the
      packets the matchall filters on DEV's hooks passed.
  ics_nic.py check [--skbs] BEFORE AFTER [EXPECT...]
      what changed from reading BEFORE to AFTER: the NIC view's classes
      together equal the device's packets and bytes, in each direction
      (veth counts a frame it could not
      hand to its peer as dropped, after the tc hook saw it: none may be);
      the matchall filters of a third party after ours, if read, passed as
      many (tc's packets count GSO segments); with --skbs, the classes'
      skbs equal the device's packets (a device that counts what it is
      handed, veth with TSO on); and each EXPECT, "DIR CLASS METRIC OP N" (e.g. "tx IPv4/UDP frames == 20";
      OP ==, >=, <=; CLASS "ics" is every ics class together).
Exit 0 if all holds, else 1 with a line per failure.
"""

import json
import socket
import struct
import subprocess
import sys


def send(dev, dst, kind, count, length=100):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((dev, 0))
    src = s.getsockname()[4]
    dmac = bytes(int(x, 16) for x in dst.split(":"))
    if kind == "llc":
        body = b"\x42\x42\x03" + bytes(length - 17)  # STP-like LLC PDU
        frame = dmac + src + struct.pack("!H", len(body)) + body
    elif kind == "vlan":
        frame = dmac + src + struct.pack("!HHH", 0x8100, 7, 0x88b6) + bytes(length - 18)
    else:
        frame = dmac + src + struct.pack("!H", int(kind, 0)) + bytes(length - 14)
    for _ in range(count):
        s.send(frame)


def ip_stats(dev):
    out = subprocess.run(["ip", "-s", "-j", "link", "show", "dev", dev],
                         check=True, capture_output=True, text=True).stdout
    st = json.loads(out)[0]["stats64"]
    return {d: {k: st[d][k] for k in ("packets", "bytes", "dropped")} for d in ("rx", "tx")}


def matchall(dev):
    """Packets the matchall filters (a third party's) on DEV's hooks passed."""
    res = {}
    for d, hook in (("rx", "ingress"), ("tx", "egress")):
        out = subprocess.run(["tc", "-s", "-j", "filter", "show", "dev", dev, hook],
                             check=True, capture_output=True, text=True).stdout
        f = [f for f in json.loads(out or "[]") if f.get("kind") == "matchall" and "options" in f]
        res[d] = f[0]["options"]["actions"][0]["stats"]["packets"] if f else None
    return res


def snap(dev, path, third_party=False):
    for _ in range(50):
        before = ip_stats(dev)
        out = subprocess.run(["icstat", "-j", "nic", dev], capture_output=True, text=True)
        if out.returncode:
            sys.exit("icstat nic %s: %s" % (dev, out.stderr.strip()))
        tc = matchall(dev) if third_party else None
        after = ip_stats(dev)
        if before == after:
            r = {"ip": after, "nic": json.loads(out.stdout)["nic"]}
            if third_party:
                r["matchall"] = tc
            with open(path, "w") as f:
                json.dump(r, f)
            return
    sys.exit("%s: frames crossed it during every one of 50 readings" % dev)


def classes(s):
    return {c["class"]: c for c in s["nic"]["classes"]}


def value(s, d, cls, metric):
    if cls == "ics":
        return sum(c[d][metric] for c in s["nic"]["classes"] if c["ics"])
    c = classes(s).get(cls)
    return c[d][metric] if c else 0


def check(before, after, expects, unit="frames"):
    b = json.load(open(before))
    a = json.load(open(after))
    ok = True
    for d in ("rx", "tx"):
        if unit == "skbs":
            # a device that counts what the stack hands it (veth with TSO on)
            skbs = sum(c[d]["skbs"] for c in a["nic"]["classes"]) - \
                sum(c[d]["skbs"] for c in b["nic"]["classes"])
            got = a["ip"][d]["packets"] - b["ip"][d]["packets"]
            print("# %s: NIC view %d skbs; device %d packets" % (d, skbs, got))
            if skbs != got:
                print("# FAIL: %s: the classes' skbs are not the device's packets" % d)
                ok = False
            continue
        ipd = {k: a["ip"][d][k] - b["ip"][d][k] for k in ("packets", "bytes", "dropped")}
        frames = sum(c[d]["frames"] for c in a["nic"]["classes"]) - \
            sum(c[d]["frames"] for c in b["nic"]["classes"])
        nbytes = sum(c[d]["bytes"] for c in a["nic"]["classes"]) - \
            sum(c[d]["bytes"] for c in b["nic"]["classes"])
        print("# %s: NIC view %d frames on the wire, %d bytes; device %d packets %d bytes %d dropped"
              % (d, frames, nbytes, ipd["packets"], ipd["bytes"], ipd["dropped"]))
        if d == "tx" and ipd["dropped"]:
            print("# FAIL: tx: the device dropped frames after the hook: no exact count")
            ok = False
        elif frames != ipd["packets"] or nbytes != ipd["bytes"]:
            print("# FAIL: %s: the classes' sum is not the device's count" % d)
            ok = False
        if "matchall" in a:
            if a["matchall"][d] is None or b["matchall"][d] is None:
                print("# FAIL: %s: no matchall filter's count" % d)
                ok = False
                continue
            tp = a["matchall"][d] - b["matchall"][d]
            print("# %s: the matchall filter after ours passed %d" % (d, tp))
            if tp != frames:
                print("# FAIL: %s: the filter after ours saw %d, ours %d" % (d, tp, frames))
                ok = False
    for e in expects:
        d, cls, metric, op, n = e.split()
        got = value(a, d, cls, metric) - value(b, d, cls, metric)
        n = int(n)
        if not {"==": got == n, ">=": got >= n, "<=": got <= n}[op]:
            print("# FAIL: %s %s %s grew by %d, want %s %d" % (d, cls, metric, got, op, n))
            ok = False
    return ok


def main():
    cmd = sys.argv[1]
    if cmd == "send":
        send(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]),
             *(int(x) for x in sys.argv[6:7]))
    elif cmd == "snap":
        snap(sys.argv[2], sys.argv[3], "--matchall" in sys.argv[4:])
    elif cmd == "check":
        unit = "frames"
        args = sys.argv[2:]
        if args[0] == "--skbs":
            unit = "skbs"
            args = args[1:]
        sys.exit(0 if check(args[0], args[1], args[2:], unit) else 1)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
