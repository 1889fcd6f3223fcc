#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ics_fuzz.py - random calls into ics from user space, for fuzz.sh.

  genl N SEED   N random generic netlink messages to the "ics" family:
                every command number (and a few past the last), as a
                request, a dump or with an ACK asked, with 0 to 6 random
                attributes (types 0..40, lengths 0..70, some nested, some
                with a bad length field), a short or an empty header now
                and then; replies are read and dropped.
  tgenl N SEED  the same to the test service's family, "ics_test"
                (ics_test.ko: its generator, attach, get, reset).
  dev N SEED    N random operations on /dev/ics files (at most 4 open):
                open, close, ICS_IOC_* with good and random arguments and
                random ioctl numbers of ics's magic, read and write of
                random sizes (headers random, or valid for a random node
                and channel), poll.

Each prints how many calls ended in which errno (0: success) as one line
"NAME: errno=count ...", and exit 1 if the kernel let an unprivileged
caller do what only an administrator may (an administrative command that
did not fail; a channel other than TEST bound), 0 otherwise. A call that
hangs is caught by fuzz.sh's timeout, a crash by its kernel log check.
"""
import collections
import errno
import fcntl
import os
import random
import select
import socket
import struct
import sys

NETLINK_GENERIC = 16
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 0x1, 0x4, 0x300
NLMSG_ERROR = 2
# family: (its last command, the commands only an administrator may run)
FAMILIES = {
    # ICS_CMD_EVENT; BIND UNBIND RESET_STATS, 7 (once SEND_TEST, reserved:
    # refused to anyone), SET_CHANNEL SET_INSTANCE
    "ics": (12, (2, 3, 4, 7, 9, 10)),
    "ics_test": (4, (1, 2, 4)),         # ICS_TEST_CMD_RESET; SEND ATTACH RESET
}
ICS_CH_TEST = 14
IOC_MAGIC = 0xB5
bad = []


def nla(t, data):
    pad = (4 - len(data) % 4) % 4
    return struct.pack("=HH", 4 + len(data), t) + data + b"\0" * pad


def family_id(s, name):
    msg = struct.pack("=BBH", CTRL_CMD_GETFAMILY, 1, 0) + \
        nla(CTRL_ATTR_FAMILY_NAME, name.encode() + b"\0")
    s.send(struct.pack("=IHHII", 16 + len(msg), GENL_ID_CTRL, NLM_F_REQUEST, 1, 0) + msg)
    r = s.recv(65536)
    ln, typ = struct.unpack_from("=IH", r)
    if typ == NLMSG_ERROR:
        sys.exit("ics_fuzz.py: no generic netlink family \"%s\"" % name)
    off = 20
    while off + 4 <= ln:
        al, at = struct.unpack_from("=HH", r, off)
        if at == CTRL_ATTR_FAMILY_ID:
            return struct.unpack_from("=H", r, off + 4)[0]
        off += (al + 3) & ~3
    sys.exit("ics_fuzz.py: no family id in the reply")


def rand_attrs(rng, depth=0):
    out = b""
    for _ in range(rng.randrange(7)):
        t = rng.randrange(41)
        r = rng.random()
        if r < 0.1 and depth < 2:
            data = rand_attrs(rng, depth + 1)
            t |= 0x8000		# NLA_F_NESTED
        elif r < 0.5:
            data = struct.pack("=I", rng.choice((0, 1, 2, 15, 16, 64, 65, 255, 0xffffffff,
                                                 rng.getrandbits(32))))
        elif r < 0.6:
            data = struct.pack("=Q", rng.getrandbits(64))
        else:
            data = bytes(rng.getrandbits(8) for _ in range(rng.randrange(71)))
        a = nla(t, data)
        if rng.random() < 0.05:		# a length field that lies
            a = struct.pack("=H", rng.randrange(65536)) + a[2:]
        out += a
    return out


def cmd_genl(n, rng, name="ics"):
    last, admin_cmds = FAMILIES[name]
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    fam = family_id(s, name)
    s.setblocking(False)
    res = collections.Counter()
    for seq in range(2, n + 2):
        cmd = rng.randrange(last + 4)
        flags = NLM_F_REQUEST | rng.choice((0, NLM_F_ACK, NLM_F_DUMP, NLM_F_DUMP | NLM_F_ACK))
        r = rng.random()
        if r < 0.03:
            body = b""					# no genl header at all
        elif r < 0.06:
            body = bytes([cmd])				# half a genl header
        else:
            body = struct.pack("=BBH", cmd, rng.choice((0, 1, 2, 255)), 0) + rand_attrs(rng)
        msg = struct.pack("=IHHII", 16 + len(body), fam, flags, seq, 0) + body
        try:
            s.send(msg)
        except OSError as e:
            res[errno.errorcode.get(e.errno, e.errno)] += 1
            continue
        # Drain what came back: errors and replies, until nothing more.
        got = None
        for _ in range(64):
            if not select.select([s], [], [], 0.02 if got is None else 0)[0]:
                break
            try:
                r = s.recv(1 << 20)
            except BlockingIOError:
                break
            off = 0
            while off + 16 <= len(r):
                ln, typ = struct.unpack_from("=IH", r, off)
                if typ == NLMSG_ERROR and got is None:
                    e = -struct.unpack_from("=i", r, off + 16)[0]
                    got = errno.errorcode.get(e, str(e)) if e else 0
                if ln < 16:
                    break
                off += (ln + 3) & ~3
            if got is None:
                got = "reply"
        res[got if got is not None else "none"] += 1
        # not an error: an ACK (0), a reply, or nothing at all
        if os.geteuid() and cmd in admin_cmds and got in (0, "reply", None):
            bad.append("%s: administrative command %d as uid %d: %s" %
                       (name, cmd, os.geteuid(), got))
    return res


def cmd_dev(n, rng):
    files = []
    res = collections.Counter()
    bufs = [bytearray(64), bytearray(8), bytearray(4)]

    def call(name, fn):
        try:
            fn()
            res[name + ":0"] += 1
        except OSError as e:
            res[name + ":" + errno.errorcode.get(e.errno, str(e.errno))] += 1

    for _ in range(n):
        op = rng.randrange(10)
        if op == 0 or not files:
            if len(files) < 4:
                def op_open():
                    fd = os.open("/dev/ics", os.O_RDWR | os.O_NONBLOCK)
                    files.append(fd)
                    if rng.random() < 0.7:	# bound to TEST, so writes get far
                        fcntl.ioctl(fd, (1 << 30) | (8 << 16) | (IOC_MAGIC << 8) | 1,
                                    struct.pack("=II", 14, 0))
                call("open", op_open)
            continue
        fd = rng.choice(files)
        if op == 1:
            files.remove(fd)
            call("close", lambda: os.close(fd))
        elif op in (2, 3):
            ok_before = res.get("ioctl:0", 0)
            nr = rng.choice((1, 2, 3, 4, rng.randrange(256)))
            size = rng.choice((8, 64, 4, rng.randrange(1 << 14)))
            d = rng.choice((1, 2, 3))			# _IOC_WRITE, _IOC_READ, both
            req = (d << 30) | (size << 16) | (IOC_MAGIC << 8) | nr
            ch = None
            if nr == 1 and rng.random() < 0.5:		# a plausible bind
                ch = rng.randrange(17)
                arg = struct.pack("=II", ch, rng.choice((0, 1, 2)))
                req = (1 << 30) | (8 << 16) | (IOC_MAGIC << 8) | 1
            elif nr in (3, 4) and rng.random() < 0.5:
                arg = struct.pack("=I", rng.choice((0, 1, 4096, 1 << 20, 1 << 30,
                                                    0xffffffff, rng.getrandbits(32))))
                req = (1 << 30) | (4 << 16) | (IOC_MAGIC << 8) | nr
            else:
                arg = bytes(rng.getrandbits(8) for _ in range(min(size, 64)))
                arg = arg.ljust(size, b"\0") if size <= 4096 else arg
            call("ioctl", lambda: fcntl.ioctl(fd, req, arg if len(arg) <= 1024 else arg[:1024]))
            if ch is not None and ch != ICS_CH_TEST and os.geteuid() and \
                    res.get("ioctl:0", 0) > ok_before:
                bad.append("channel %d bound as uid %d" % (ch, os.geteuid()))
        elif op in (4, 5, 6):
            ln = rng.choice((0, 1, 7, 8, 100, 4096, 70000, rng.randrange(20000)))
            if rng.random() < 0.6:
                hdr = struct.pack("=IBBH", max(ln - 8, 0), rng.choice((1, 2, 3, 9, 0, 255)),
                                  rng.choice((14, 14, 14, rng.randrange(17))),	# TEST, mostly
                                  rng.choice((0, 0, 1, 2, 4, 8, 0xffff)))
                data = (hdr + bytes(max(ln - 8, 0)))[:ln] if ln else b""
            else:
                data = bytes(rng.getrandbits(8) for _ in range(min(ln, 64))).ljust(ln, b"\x5a")
            call("write", lambda: os.write(fd, data))
        elif op in (7, 8):
            ln = rng.choice((0, 1, 8, 64, 4096, 1 << 20))
            call("read", lambda: os.read(fd, ln))
        else:
            def op_poll():
                p = select.poll()
                p.register(fd, select.POLLIN | select.POLLOUT)
                p.poll(0)
            call("poll", op_poll)
    for fd in files:
        os.close(fd)
    return res


def main():
    kinds = {"genl": cmd_genl, "tgenl": lambda n, rng: cmd_genl(n, rng, "ics_test"),
             "dev": cmd_dev}
    if len(sys.argv) != 4 or sys.argv[1] not in kinds:
        sys.exit(__doc__)
    n, rng = int(sys.argv[2]), random.Random(int(sys.argv[3]))
    res = kinds[sys.argv[1]](n, rng)
    print("%s: %s" % (sys.argv[1], " ".join("%s=%d" % (k, v) for k, v in sorted(
        res.items(), key=lambda kv: str(kv[0])))))
    for b in bad[:10]:
        print("FAIL: " + b)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
