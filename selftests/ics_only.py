#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ics_only.py - every frame type with every flag value at a member, and
what the member sends back (only_ics.sh).

  ics_only.py sweep IFNAME DST_MAC SRC_NODE DST_NODE INCARNATION DST_INC SEQ
      As node SRC_NODE (from IFNAME's MAC), send node DST_NODE at DST_MAC
      a frame of each type 0..5 and 255 with each flags value 0..255 (DATA
      frames of one send session on channel TEST, numbered from SEQ in
      the order sent, with message ids equal to their numbers, 64-byte
      messages whose first 4 bytes ask for a 64-byte answer where the
      flags meant that), then DATA frames with flags 0 again for every
      number used, so that the receiver's link holds no gap; then listen
      until the member has been quiet for a second (at most 20 s).
      Prints JSON: {"sent": frames, "sent_bytes", "next_seq": the next
      sequence number of the session, "back": {frame type: frames the
      member sent to us}, "back_bytes"}.
  ics_only.py echo IFNAME DST_MAC SRC_NODE DST_NODE INCARNATION DST_INC SEQ
      One DATA frame numbered SEQ (message id SEQ) on channel TEST: an
      ECHO for ics_test (include/uapi/linux/ics.h, part 5) asking for a
      64-byte answer; then listen as sweep does. Prints the same JSON.
  ics_only.py dups IFNAME DST_MAC SRC_NODE DST_NODE INCARNATION DST_INC SEQ
      One DATA frame numbered SEQ (message id SEQ) on channel TEST, then
      1000 copies of it and 1000 frames numbered 1000 past it, beyond
      any receive window: frames that bring the member nothing; then
      listen as sweep does; then one more copy, and listen again. Prints
      the same JSON (that copy included), with "span": seconds from the
      first copy sent to the end of the first listening, and "after":
      the ACKs the last copy drew.
  ics_only.py paced IFNAME DST_MAC SRC_NODE DST_NODE INCARNATION DST_INC SEQ
      One DATA frame numbered SEQ (message id SEQ) on channel TEST, then
      PACED_COPIES copies of it (default 40), one every PACED_MS ms
      (default 40), as a sender resending on a short timer does; listen
      as sweep does; then 64 more copies back to back, and listen again.
      Prints the same JSON, counting from the first copy, with "copies",
      "acks": the ACKs the paced copies drew, "burst": 64, "burst_acks":
      the ACKs the others drew, and "burst_span": seconds their sending
      took.

INCARNATION is ours, in every frame's incarnation; DST_INC the member's
(icstat show), in every frame's dst_inc: the member drops a frame made
for another binding of it (rx_bad_session).

The frame format comes from include/uapi/linux/ics.h (ICS_UAPI overrides
its path): the wire version and the ethertype are read from it.
"""
import json
import os
import re
import select
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ics_testmsg  # noqa: E402

HDR = struct.Struct(">BBBBIBBH10I32x")	# struct ics_wire_hdr, 84 bytes, unsigned
FT_DATA, FT_HELLO, FT_ACK, FT_RESET = 1, 2, 3, 4
CH_TEST, CH_CNX = 14, 15
SESS = 0x1c5c0001
PACKET_OUTGOING = 4
BURST = 64		# paced's copies back to back


def uapi(name):
    path = os.environ.get("ICS_UAPI") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "include", "uapi", "linux", "ics.h")
    m = re.search(r"#define\s+%s\s+(0x[0-9a-fA-F]+|\d+)" % name, open(path).read())
    if not m:
        sys.exit("ics_only.py: %s not found in %s" % (name, path))
    return int(m.group(1), 0)


def crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


TABLE = crc32c_table()


def crc32c(data):
    c = 0xffffffff
    for b in data:
        c = TABLE[(c ^ b) & 0xff] ^ (c >> 8)
    return c ^ 0xffffffff


class Member:
    def __init__(self, ifname, dst_mac, src, dst, inc, dst_inc):
        self.ver, self.etype = uapi("ICS_WIRE_VERSION"), uapi("ICS_ETH_P")
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(self.etype))
        self.s.bind((ifname, self.etype))
        self.mac = self.s.getsockname()[4]
        self.dst_mac = bytes.fromhex(dst_mac.replace(":", ""))
        self.src, self.dst, self.inc, self.dst_inc = src, dst, inc, dst_inc
        self.sent = self.sent_bytes = self.back_bytes = 0
        self.back = {}

    def frame(self, ftype, flags, channel, payload, sess=0, seq=0, msg_id=0):
        n = len(payload)
        h = [self.ver, ftype, flags, channel, 0, self.src, self.dst, n, sess, seq, 0, 0,
             msg_id, n, 0, self.inc, 0, self.dst_inc]
        h[16] = crc32c(self.mac + HDR.pack(*h) + payload)	# check: source, header, payload
        return self.dst_mac + self.mac + struct.pack(">H", self.etype) + HDR.pack(*h) + payload

    def send(self, f):
        self.s.send(f)
        self.sent += 1
        self.sent_bytes += len(f)
        self.take(0)

    def take(self, timeout):
        """Frames the member sent us, for up to timeout s: True if one came."""
        got = False
        while select.select([self.s], [], [], timeout)[0]:
            f, addr = self.s.recvfrom(65536)
            timeout = 0
            if addr[2] == PACKET_OUTGOING or f[6:12] != self.dst_mac or len(f) < 14 + HDR.size:
                continue
            t = f[15]
            self.back[t] = self.back.get(t, 0) + 1
            self.back_bytes += len(f)
            got = True
        return got

    def listen(self):
        end = time.monotonic() + 20
        quiet = time.monotonic() + 1
        while time.monotonic() < min(end, quiet):
            if self.take(0.1):
                quiet = time.monotonic() + 1

    def report(self, **extra):
        r = {"sent": self.sent, "sent_bytes": self.sent_bytes, "back_bytes": self.back_bytes,
             "back": {str(k): v for k, v in sorted(self.back.items())}}
        r.update(extra)
        print(json.dumps(r))


def sweep(m, seq0):
    hello = bytes(int(os.environ.get("ICS_HELLO_LEN") or 176))
    ack = struct.pack(">H", 512) + bytes(78)	# a window open to 512 frames
    echo_req = struct.pack(">I", 64) + bytes(60)	# the former ECHO_LEN's size word
    seq = seq0 - 1
    for ftype in (0, FT_DATA, FT_HELLO, FT_ACK, FT_RESET, 5, 255):
        for flags in range(256):
            if ftype == FT_DATA:
                seq += 1
                f = m.frame(ftype, flags, CH_TEST, echo_req, SESS, seq, seq)
            elif ftype == FT_HELLO:
                f = m.frame(ftype, flags, CH_CNX, hello)
            elif ftype == FT_ACK:
                f = m.frame(ftype, flags, CH_CNX, ack)
            elif ftype == FT_RESET:
                f = m.frame(ftype, flags, CH_TEST, b"", sess=0x7777)
            else:
                f = m.frame(ftype, flags, CH_TEST, echo_req, SESS, 1, 1)
            m.send(f)
    # Fill every gap the refused frames left, in order: the link goes on.
    for k in range(seq0, seq + 1):
        m.send(m.frame(FT_DATA, 0, CH_TEST, echo_req, SESS, k, k))
    m.listen()
    m.report(next_seq=seq + 1)


def echo(m, seq):
    req = ics_testmsg.build(m.src, CH_TEST, 1, 64, ics_testmsg.OPS["echo"], 64)
    m.send(m.frame(FT_DATA, 0, CH_TEST, req, SESS, seq, seq))
    m.listen()
    m.report(next_seq=seq + 1)


def taken(m, seq):
    """Frame SEQ taken and its delayed ACK heard; then counting starts
    over. Returns the frame, whose copies bring the member nothing."""
    f = m.frame(FT_DATA, 0, CH_TEST, bytes(64), SESS, seq, seq)
    m.send(f)
    m.listen()
    m.back.clear()
    m.sent = m.sent_bytes = m.back_bytes = 0
    return f


def dups(m, seq):
    copy = taken(m, seq)
    t0 = time.monotonic()
    for _ in range(1000):
        m.send(copy)
    for k in range(1000):
        m.send(m.frame(FT_DATA, 0, CH_TEST, bytes(64), SESS, seq + 1000, seq + 1000 + k))
    m.listen()
    span = time.monotonic() - t0
    # a second after the last ACK (listen), one more copy: answered
    acks = m.back.get(FT_ACK, 0)
    m.send(copy)
    m.listen()
    m.report(next_seq=seq + 1, span=span, after=m.back.get(FT_ACK, 0) - acks)


def paced(m, seq):
    copies = int(os.environ.get("PACED_COPIES") or 40)
    gap = float(os.environ.get("PACED_MS") or 40) / 1000
    copy = taken(m, seq)
    for _ in range(copies):
        m.send(copy)
        end = time.monotonic() + gap
        while time.monotonic() < end:
            m.take(max(0, end - time.monotonic()))
    m.listen()
    acks = m.back.get(FT_ACK, 0)
    # the same run goes on, back to back
    t0 = time.monotonic()
    for _ in range(BURST):
        m.send(copy)
    span = time.monotonic() - t0
    m.listen()
    m.report(next_seq=seq + 1, copies=copies, acks=acks, burst=BURST,
             burst_acks=m.back.get(FT_ACK, 0) - acks, burst_span=span)


def main():
    cmds = {"sweep": sweep, "echo": echo, "dups": dups, "paced": paced}
    if len(sys.argv) != 9 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    m = Member(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]),
               int(sys.argv[6], 0), int(sys.argv[7], 0))
    cmds[sys.argv[1]](m, int(sys.argv[8]))


if __name__ == "__main__":
    main()
