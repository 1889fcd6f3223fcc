#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ics_testmsg.py - ics_test's messages (include/uapi/linux/ics.h, part 5),
built and checked here from the header's definition, over /dev/ics.

  ask PEER CH OP ARG LEN [COUNT]  bind CH, send COUNT (default 1) messages
                          of LEN bytes with op OP (data, sink, echo, ping,
                          pong, or a number) and ARG, a valid pattern;
                          SEQ counts from 1 (as ics_test's sender does)
  bad PEER CH LEN         bind CH, send one LEN-byte ECHO request (for
                          100 bytes) whose last byte is off the pattern
  answers PEER CH N LEN TIMEOUT  bind CH, send N ECHO requests for LEN
                          bytes, then read the answers for TIMEOUT seconds:
                          prints how many came, all must verify as REPLY
                          messages (seq 0) from PEER of LEN bytes (at least
                          the header)

Exits 0, or prints "# FAIL: ..." and exits 1.
"""
import os
import select
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ics_dev  # noqa: E402

MAGIC = 0x49435354
HDR = struct.Struct(">IB3xII")          # struct ics_test_hdr
OPS = {"data": 0, "sink": 1, "echo": 2, "ping": 3, "pong": 4, "reply": 5}
M32 = 0xffffffff


def rol32(x, k):
    return ((x << k) | (x >> (32 - k))) & M32


def jhash_3words(a, b, c, initval):
    """The kernel's jhash_3words() (include/linux/jhash.h)."""
    iv = (initval + 0xdeadbeef + (3 << 2)) & M32
    a, b, c = (a + iv) & M32, (b + iv) & M32, (c + iv) & M32
    c ^= b; c = (c - rol32(b, 14)) & M32  # noqa: E702
    a ^= c; a = (a - rol32(c, 11)) & M32  # noqa: E702
    b ^= a; b = (b - rol32(a, 25)) & M32  # noqa: E702
    c ^= b; c = (c - rol32(b, 16)) & M32  # noqa: E702
    a ^= c; a = (a - rol32(c, 4)) & M32   # noqa: E702
    b ^= a; b = (b - rol32(a, 14)) & M32  # noqa: E702
    c ^= b; c = (c - rol32(b, 24)) & M32  # noqa: E702
    return c


GOLDEN = 0x9E3779B1
_base = b""


def base_words(n):
    """
    Pattern words 0..n-1 before the seed, (k + 1) * GOLDEN mod 2^32,
    little-endian; built by doubling in 64-bit lanes (no carry between
    them), cached: a word at a time takes seconds for 16 MiB.
    """
    global _base
    if len(_base) < 4 * n:
        q, m = struct.pack("<Q", GOLDEN), 1
        while m < n:
            ones = int.from_bytes(struct.pack("<Q", 1) * m, "little")
            q += (int.from_bytes(q, "little") + m * GOLDEN * ones).to_bytes(8 * m, "little")
            m *= 2
        w = bytearray(4 * m)
        for i in range(4):
            w[i::4] = q[i::8]
        _base = bytes(w)
    return _base


def pattern(src, ch, seq, length, start):
    """Bytes start..length-1 of the message's pattern."""
    seed = jhash_3words(seq, length, src << 8 | ch, 0x1c5)
    first, last = start // 4, (length + 3) // 4
    n = last - first
    if n <= 0:
        return b""
    words = int.from_bytes(base_words(last)[4 * first:4 * last], "little") ^ \
        int.from_bytes(struct.pack("<I", seed) * n, "little")
    return words.to_bytes(4 * n, "little")[start - 4 * first:length - 4 * first]


def build(src, ch, seq, length, op=0, arg=0):
    if length < HDR.size:
        return pattern(src, ch, 0, length, 0)
    return HDR.pack(MAGIC, op, seq, arg) + pattern(src, ch, seq, length, HDR.size)


def verify(data, src, ch):
    """(ok, op, seq, arg) of a message from node src on channel ch."""
    if len(data) < HDR.size:
        return data == pattern(src, ch, 0, len(data), 0), None, 0, 0
    magic, op, seq, arg = HDR.unpack_from(data)
    ok = magic == MAGIC and data[5:8] == b"\0\0\0" and \
        data[HDR.size:] == pattern(src, ch, seq, len(data), HDR.size)
    return ok, op, seq, arg


def self_id():
    """Our node id, from the instance (icsctl show -j)."""
    import json
    import subprocess
    return json.loads(subprocess.check_output(["icsctl", "-j", "show"]))["node_id"]


def opened(ch):
    fd = ics_dev.dev()
    ics_dev.bind(fd, ch)
    return fd


def cmd_ask(peer, ch, op, arg, length, count=1):
    src, fd = self_id(), opened(ch)
    op = OPS[op] if op in OPS else int(op)
    for seq in range(1, count + 1):
        ics_dev.send(fd, peer, build(src, ch, seq, length, op, arg), ics_dev.F_SYNC, ch)


def cmd_bad(peer, ch, length):
    src, fd = self_id(), opened(ch)
    msg = bytearray(build(src, ch, 1, length, OPS["echo"], 100))
    msg[-1] ^= 0xff
    ics_dev.send(fd, peer, bytes(msg), ics_dev.F_SYNC, ch)


def cmd_answers(peer, ch, n, length, timeout):
    src, fd = self_id(), opened(ch)
    for seq in range(1, n + 1):
        ics_dev.send(fd, peer, build(src, ch, seq, 64, OPS["echo"], length), 0, ch)
    got = 0
    while got < n and select.select([fd], [], [], timeout)[0]:
        size, node, _, data = ics_dev.recv(fd)
        ok, op, seq, _ = verify(data, node, ch)
        if node != peer or size != max(length, HDR.size) or not ok or op != OPS["reply"] or seq:
            ics_dev.fail("answer %d: node %d, %d bytes, ok %s, op %s" % (got, node, size, ok, op))
        got += 1
    print(got)


def main():
    cmds = {"ask": cmd_ask, "bad": cmd_bad, "answers": cmd_answers}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    args = [a if a in OPS else int(a) for a in sys.argv[2:]]
    cmds[sys.argv[1]](*args)
    sys.exit(1 if ics_dev.failed else 0)


if __name__ == "__main__":
    main()
