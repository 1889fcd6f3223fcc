#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ics_dev.py - drive /dev/ics (include/uapi/linux/ics.h, part 4) for dev_api.sh.

Each subcommand checks one behaviour of the message device from inside the
calling network namespace and exits 0, or prints "# FAIL: ..." lines and
exits 1. The structures are packed here by hand from the UAPI header, so a
change there that breaks user space breaks this too.

errors, poll, fill, batch and queue ask PEER's test service (ics_test.ko,
attached to TEST there) for answers and sinks in its own protocol: struct
ics_test_hdr and the pattern (ics_testmsg.py), sequence numbers from 1.
The /dev/ics write flags that once asked ics.ko for them (1, 2, 4) are
refused (EINVAL).

  errors PEER UNKNOWN     every refused call and its errno (the former
                          ECHO, ECHO_LEN and SINK flags too), nothing sent;
                          an answer too big for the read stays queued; a
                          16 MiB SINK, synchronous
  bind CHANNEL ERRNO      bind, expecting ERRNO (0: success), then exit
  poll PEER               POLLIN only with a message (an answer) queued
  fill PEER               O_NONBLOCK SINK writes until EAGAIN; POLLOUT off
                          then; wait (stdin line "go") for it to come back
  queue PEER N MARK       have N answers (REPLY, 1000 + i bytes) queued,
                          touch MARK, wait for stdin "read" (all N read
                          back whole, verified) or "close"
  data-send PEER N SET    N messages of SET's sizes (cycled; SET "mixed":
                          DATA_SIZES, "small": SMALL_SIZES, "big": 6 MiB)
                          whose bytes are
                          data_bytes(i, size)
  data-recv PEER N SET MARK  bind TEST, touch MARK, read N messages from PEER:
                          each must be, byte for byte, what data-send sent
  batch PEER              ICS_DEV_BIND_BATCH: reads take every queued answer
                          that fits, aligned, in order, padding zero
  hold PEER N SET RCVBUF MARK  bind TEST with RCVBUF, touch MARK, read nothing
                          until stdin says "read" (flow control holds the
                          sender); then as data-recv, and nothing dropped;
                          or "close": say how many were queued, and exit;
                          or "part": read 70 % of them first
  data-next PEER N SET MARK GO  touch MARK; when GO appears, bind TEST and
                          read what is left of data-send's N messages:
                          say which came first, then each one after it
                          must be, byte for byte, what data-send sent
  flood PEER CH OUT GO    bind CH, O_NONBLOCK writes of 64 KiB until EAGAIN,
                          their number into OUT; when GO appears, wait for
                          every one to be acknowledged
  stall PEER CH RCVBUF MARK GO  bind CH with RCVBUF, touch MARK, read nothing
                          until GO appears; then read the number of 64 KiB
                          messages from PEER it holds, and as many more from
                          other nodes as a second number there says (any
                          size, in any order among them), nothing dropped
  seqsend PEER CH N OUT   N numbered messages (SEQ_SIZES) to PEER on CH;
                          then their fate (sent, done, failed) into OUT
  slowread CH RCVBUF DELAY_MS OUT MARK GO  a slow reader: what it read of
                          each node's seqsend messages, in order, into OUT
  memwriters PEER CH THREADS SIZE OUT  THREADS threads writing SIZE-byte
                          messages to PEER for ever; OUT: writes returned
  memcg PEER CH SIZE READY GO OUT  non-blocking SIZE-byte writes once GO
                          appears, until one fails; OUT: how many, errno
  rcvbuf VALUE ERRNO      ICS_IOC_SET_RCVBUF VALUE: expect ERRNO (0: success)
  chanflood PEER COUNT SIZE OUT  COUNT messages of SIZE bytes on every
                          channel but CNX, a file and thread each; OUT:
                          per channel sent, done, failed
  passfd OPENER CH ERRNO  one process opens (OPENER: nobody or root), the
                          other binds CH: expect ERRNO (0: success)
  sink CH RCVBUF MARK GO   bind CH with RCVBUF, touch MARK, read nothing
                          until GO appears; then read as many messages
                          (any sender, any bytes) as the number there says
  big PEER CH SIZE OUT     one message of SIZE bytes to PEER on CH, with
                          ICS_DEV_F_SYNC; its fate into OUT ("done" or
                          the errno's name)
  syncsig PEER N SET MS MARK OUT  N-1 messages as data-send's, then the
                          N-th with ICS_DEV_F_SYNC through libc's write()
                          (no retry on EINTR), with a send timeout of MS
                          (0: none); our pid into MARK just before it;
                          what that write returned into OUT ("EINTR",
                          "EINPROGRESS", "done" or an errno name)
"""
import errno
import fcntl
import hashlib
import json
import os
import select
import socket
import struct
import sys
import threading
import time

ICS_CH_TEST, ICS_CH_CFS = 14, 3
ICS_MSG_MAX = 16 << 20
# waits for a whole exchange to end, longer on a slow kernel (lib.sh's ICS_SCALE)
SCALE = int(os.environ.get("ICS_TIMEOUT_SCALE") or 1)
LONG = 120 * SCALE
F_SYNC = 8
# Write flags that asked ics.ko's own test service for an echo (ECHO,
# ECHO_LEN) or a sink (SINK); that service is gone and they are refused.
F_GONE = {"ECHO": 1, "ECHO_LEN": 2, "SINK": 4}
BIND_BATCH, DEV_ALIGN = 1, 8
HDR = struct.Struct("=IBBH")          # struct ics_dev_hdr
BIND = struct.Struct("=II")           # struct ics_dev_bind
STATS = struct.Struct("=7QiI")        # struct ics_dev_stats


def _ioc(d, nr, size):
    return (d << 30) | (size << 16) | (0xB5 << 8) | nr


IOC_BIND = _ioc(1, 1, BIND.size)      # _IOW
IOC_STATS = _ioc(2, 2, STATS.size)    # _IOR
IOC_SET_RCVBUF = _ioc(1, 3, 4)
IOC_SET_SNDTIMEO = _ioc(1, 4, 4)
FIONREAD = 0x541B

failed = False


def fail(msg):
    global failed
    print("# FAIL: " + msg, flush=True)
    failed = True


def dev(flags=0):
    return os.open("/dev/ics", os.O_RDWR | flags)


def bind(fd, ch, flags=0):
    fcntl.ioctl(fd, IOC_BIND, BIND.pack(ch, flags))


def stats(fd):
    return dict(zip(("tx_msgs", "tx_bytes", "tx_done", "tx_failed", "rx_msgs", "rx_bytes",
                     "rx_dropped", "last_error", "rx_queued"),
                    STATS.unpack(fcntl.ioctl(fd, IOC_STATS, bytes(STATS.size)))))


def send(fd, node, payload=b"", flags=0, ch=ICS_CH_TEST, length=None):
    n = len(payload) if length is None else length
    return os.write(fd, HDR.pack(n, node, ch, flags) + payload)


def recv(fd, room=ICS_MSG_MAX + HDR.size):
    data = os.read(fd, room)
    n, node, ch, flags = HDR.unpack_from(data)
    return n, node, ch, data[HDR.size:]


def expect(what, err, fn, *args):
    """fn(*args) must fail with errno err."""
    try:
        fn(*args)
    except OSError as e:
        if e.errno != err:
            fail("%s: want %s, got %s" % (what, errno.errorcode[err], errno.errorcode.get(e.errno)))
        return
    fail("%s: want %s, it succeeded" % (what, errno.errorcode[err]))


def wait_readable(fd, secs):
    return bool(select.select([fd], [], [], secs)[0])


class Asker:
    """
    Requests from us to PEER's test service on channel CH through the
    file fd, in ics_test's protocol (ics_testmsg.py); sequence numbers
    from 1, as ics_test's own sender counts them.
    """

    def __init__(self, fd, peer, ch=ICS_CH_TEST):
        import ics_testmsg              # it imports this module: not at the top
        self.tm, self.fd, self.peer, self.ch = ics_testmsg, fd, peer, ch
        self.src, self.seq = ics_testmsg.self_id(), 0

    def msg(self, length, op, arg=0):
        """The next request of LENGTH bytes: op (a name of ics_testmsg.OPS), arg."""
        if length >= self.tm.HDR.size:
            self.seq += 1
        return self.tm.build(self.src, self.ch, self.seq, length, self.tm.OPS[op], arg)

    def send(self, length, op, arg=0, flags=0):
        return send(self.fd, self.peer, self.msg(length, op, arg), flags, self.ch)

    def check(self, what, node, ch, data, length):
        """Fail unless data is the test service's REPLY of length bytes from PEER on CH."""
        ok, op, seq, _ = self.tm.verify(data, node, ch)
        if (node, ch, len(data), ok, op, seq) != \
                (self.peer, self.ch, length, True, self.tm.OPS["reply"], 0):
            fail("%s: %d bytes from node %d on channel %d, verified %s, op %s, seq %s; want "
                 "a REPLY (seq 0) of %d bytes from node %d on %d" %
                 (what, len(data), node, ch, ok, op, seq, length, self.peer, self.ch))


def cmd_errors(peer, unknown):
    fd = dev()
    expect("write before bind", errno.EBADFD, send, fd, peer, b"x")
    expect("read before bind", errno.EBADFD, os.read, fd, 100)
    expect("bind channel 16", errno.EINVAL, bind, fd, 16)
    expect("bind with an unknown flag", errno.EINVAL, bind, fd, ICS_CH_TEST, 2)
    expect("unknown ioctl", errno.ENOTTY, fcntl.ioctl, fd, _ioc(0, 99, 0))
    bind(fd, ICS_CH_TEST)
    expect("bind twice", errno.EALREADY, bind, fd, ICS_CH_TEST)
    fd2 = dev()
    expect("second file on TEST", errno.EADDRINUSE, bind, fd2, ICS_CH_TEST)
    os.close(fd2)

    expect("header only half written", errno.EINVAL, os.write, fd, b"\0" * 4)
    expect("len over 16 MiB", errno.EMSGSIZE, send, fd, peer, b"", 0, ICS_CH_TEST, ICS_MSG_MAX + 1)
    expect("len != bytes written", errno.EINVAL, send, fd, peer, b"abc", 0, ICS_CH_TEST, 4)
    expect("node 0", errno.EINVAL, send, fd, 0, b"x")
    expect("node 65", errno.EINVAL, send, fd, 65, b"x")
    expect("unknown node", errno.EHOSTUNREACH, send, fd, unknown, b"x")
    expect("our own node", errno.EINVAL, send, fd, 1, b"x")
    expect("another channel than the bound one", errno.EINVAL, send, fd, peer, b"x", 0, ICS_CH_CFS)
    expect("unknown flag", errno.EINVAL, send, fd, peer, b"x", 0x80)
    # The flags that asked ics.ko's test service are refused, alone and
    # with SYNC, even on a message the peer's test service would take.
    ask = Asker(fd, peer)
    req = ask.msg(64, "echo", 64)
    for name, f in F_GONE.items():
        for g in (f, f | F_SYNC):
            expect("former flag %s (%#x)" % (name, g), errno.EINVAL, send, fd, peer, req, g)
    # A synchronous write waits for its message's fate: not on a
    # non-blocking file.
    fl = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, fl | os.O_NONBLOCK)
    expect("synchronous write on a non-blocking file", errno.EINVAL, send, fd, peer, req, F_SYNC)
    fcntl.fcntl(fd, fcntl.F_SETFL, fl)
    expect("rcvbuf over the limit", errno.EINVAL, fcntl.ioctl, fd, IOC_SET_RCVBUF,
           struct.pack("I", (1 << 30) + 1))
    s = stats(fd)
    if s["tx_msgs"] or s["tx_bytes"]:
        fail("refused writes were counted as sent: %s" % s)

    # An answer too big for the buffer stays queued: nothing is lost. The
    # request is a bare header: ECHO, answer 100 bytes.
    ask.send(16, "echo", 100)
    if not wait_readable(fd, 10):
        fail("no answer in 10 s")
        return
    expect("read into a small buffer", errno.EMSGSIZE, os.read, fd, HDR.size + 99)
    want = HDR.size + 100
    got = struct.unpack("i", fcntl.ioctl(fd, FIONREAD, b"\0" * 4))[0]
    if got != want:
        fail("FIONREAD: want %d, got %d" % (want, got))
    n, node, ch, data = recv(fd, HDR.size + 100)
    if n != 100:
        fail("answer: header says %d bytes, want 100" % n)
    ask.check("answer", node, ch, data, 100)
    # A synchronous write returns once the peer has it; 16 MiB is allowed.
    t = ask.send(ICS_MSG_MAX, "sink", 0, F_SYNC)
    if t != HDR.size + ICS_MSG_MAX:
        fail("16 MiB synchronous write returned %d" % t)
    s = stats(fd)
    want = {"tx_msgs": 2, "tx_bytes": 16 + ICS_MSG_MAX, "tx_failed": 0, "rx_msgs": 1,
            "rx_bytes": 100, "rx_queued": 0}
    if any(s[k] != v for k, v in want.items()) or s["tx_done"] < 1:
        fail("file stats: want %s (tx_done >= 1), got %s" % (want, s))
    os.set_blocking(fd, False)
    expect("non-blocking read, nothing queued", errno.EAGAIN, os.read, fd, 100)


def errno_of(call):
    """0 if CALL() returns, else the errno of the OSError it raises."""
    try:
        call()
        return 0
    except OSError as e:
        return e.errno


def want_errno(what, want, got):
    """Fail unless GOT is errno WANT (0: success); WHAT names the call."""
    if got != want:
        fail("%s: want %s, got %s" % (what, errno.errorcode.get(want, "success"),
                                      errno.errorcode.get(got, "success")))


def cmd_bind(ch, want):
    fd = dev()
    want_errno("bind channel %d as uid %d" % (ch, os.getuid()), want,
               errno_of(lambda: bind(fd, ch)))


def poll_mask(fd):
    p = select.poll()
    p.register(fd, select.POLLIN | select.POLLOUT)
    r = p.poll(0)
    return r[0][1] if r else 0


def cmd_poll(peer):
    fd = dev()
    m = poll_mask(fd)
    if m & (select.POLLIN | select.POLLOUT):
        fail("unbound file polls %#x, want neither POLLIN nor POLLOUT" % m)
    bind(fd, ICS_CH_TEST)
    m = poll_mask(fd)
    if m != select.POLLOUT:
        fail("bound, idle: poll %#x, want POLLOUT only" % m)
    ep = select.epoll()
    ep.register(fd, select.EPOLLIN)
    ask = Asker(fd, peer)
    ask.send(64, "echo", 64)
    ev = ep.poll(10)
    if not ev or not ev[0][1] & select.EPOLLIN:
        fail("epoll: no EPOLLIN within 10 s of an ECHO request")
    if not poll_mask(fd) & select.POLLIN:
        fail("poll: no POLLIN with an answer queued")
    _, node, ch, data = recv(fd)
    ask.check("answer", node, ch, data, 64)
    if poll_mask(fd) & select.POLLIN:
        fail("poll: POLLIN after the only message was read")
    ep.close()


def cmd_fill(peer):
    fd = dev(os.O_NONBLOCK)
    bind(fd, ICS_CH_TEST)
    # One SINK request of 64 KiB, written again and again: the test service
    # takes each (its sequence number is the sender's business) and answers
    # none.
    sink = Asker(fd, peer).msg(65536, "sink")
    n = 0
    while True:
        try:
            send(fd, peer, sink)
            n += 1
        except OSError as e:
            if e.errno != errno.EAGAIN:
                fail("non-blocking write: %s" % errno.errorcode.get(e.errno))
                return
            break
        if n > 100000:
            fail("never EAGAIN: the link drained while it should hold")
            return
    if poll_mask(fd) & select.POLLOUT:
        fail("POLLOUT after EAGAIN with the link stalled")
    print("# %d messages queued before EAGAIN" % n, flush=True)
    print("filled", flush=True)
    sys.stdin.readline()                # the caller repairs the link
    p = select.poll()
    p.register(fd, select.POLLOUT)
    if not p.poll(30000):
        fail("no POLLOUT within 30 s of the link coming back")
    try:
        send(fd, peer, sink)
    except OSError as e:
        fail("write after POLLOUT: %s" % errno.errorcode.get(e.errno))


def records(data):
    """A batched read's records: (len, node, channel, flags, padding, payload)."""
    out, off = [], 0
    while off < len(data):
        n, node, ch, flags = HDR.unpack_from(data, off)
        end = off + HDR.size + n
        nxt = (end + DEV_ALIGN - 1) & ~(DEV_ALIGN - 1)
        out.append((n, node, ch, flags, data[end:nxt], data[off + HDR.size:end]))
        off = nxt
    return out


def cmd_batch(peer):
    # answers of these lengths (the test service's answer carries its
    # 16-byte header at least)
    sizes = [16, 17, 23, 24, 25, 100, 1000, 19, 4096, 21]
    fd = dev(os.O_NONBLOCK)
    bind(fd, ICS_CH_TEST, BIND_BATCH)
    ask = Asker(fd, peer)
    for n in sizes:
        ask.send(16, "echo", n)
    deadline = time.time() + 30 * SCALE
    while stats(fd)["rx_queued"] < len(sizes) and time.time() < deadline:
        time.sleep(0.05)
    if stats(fd)["rx_queued"] != len(sizes):
        fail("only %d of %d answers queued" % (stats(fd)["rx_queued"], len(sizes)))
        return
    got = []

    def take(room, want):
        data = os.read(fd, room)
        recs = records(data)
        if [r[0] for r in recs] != want or any(r[1] != peer or r[2] != ICS_CH_TEST
                                               for r in recs):
            fail("read(%d): records %s, want lengths %s from node %d" %
                 (room, [r[:3] for r in recs], want, peer))
        if any(r[4].strip(b"\0") for r in recs):
            fail("read(%d): padding not zero" % room)
        for r in recs:
            ask.check("read(%d): answer %d" % (room, len(got)), r[1], r[2], r[5], r[0])
            got.append(r[0])
        return len(data)

    # the first alone, its buffer exact: 24 bytes
    if take(HDR.size + 16, [16]) != HDR.size + 16:
        fail("one answer of 16 bytes: not 24 bytes")
    # 17 (25 bytes, then 7 of padding) but not 23, which needs 32 + 31 > 62
    if take(62, [17]) != 25:
        fail("one record of 17 bytes: not 25 bytes")
    # 23 (31 bytes, 1 of padding) and 24 (32 + 32 = 64 exactly); 25 would need 64 + 33
    if take(64, [23, 24]) != 64:
        fail("two records: not 64 bytes")
    expect("read too small for the next message", errno.EMSGSIZE, os.read, fd, HDR.size + 24)
    # everything else, the last unpadded
    n = take(1 << 20, sizes[4:])
    if n != sum(((HDR.size + k + 7) & ~7) for k in sizes[4:-1]) + HDR.size + sizes[-1]:
        fail("read of %d records returned %d bytes" % (len(sizes) - 4, n))
    expect("read with nothing queued", errno.EAGAIN, os.read, fd, 1 << 20)
    s = stats(fd)
    if got != sizes or s["rx_msgs"] != len(sizes) or s["rx_queued"] or \
            s["rx_bytes"] != sum(sizes):
        fail("read %s, stats %s" % (got, s))


def cmd_queue(peer, n, mark):
    fd = dev()
    bind(fd, ICS_CH_TEST)
    ask = Asker(fd, peer)
    for i in range(n):
        ask.send(16, "echo", 1000 + i)
    deadline = time.time() + 30 * SCALE
    while stats(fd)["rx_queued"] < n and time.time() < deadline:
        time.sleep(0.05)
    if stats(fd)["rx_queued"] != n:
        fail("only %d of %d answers queued" % (stats(fd)["rx_queued"], n))
        return
    open(mark, "w").close()
    what = sys.stdin.readline().strip()
    if what == "close":
        os.close(fd)
        return
    for i in range(n):
        ln, node, ch, data = recv(fd)
        if ln != 1000 + i:
            fail("answer %d: header says %d bytes, want %d" % (i, ln, 1000 + i))
        ask.check("answer %d" % i, node, ch, data, 1000 + i)
    expect("write to the departed peer", errno.EHOSTDOWN, send, fd, peer, b"x")


# Sizes either side of the copybreak (2048: data inside the message) and of
# page and frame boundaries (the frames of larger messages reference the
# message's pages), up to 1 MiB.
DATA_SIZES = [0, 1, 255, 256, 257, 2047, 2048, 2049, 4095, 4096, 4097, 8191, 8192, 8193,
              1400, 1401, 9000, 12289, 65535, 65536, 65537, 200003, 1 << 20]

# Sizes that bundle (up to ICS_BUNDLE_MSG_MAX, 2048, the copybreak too:
# data inside the message) and a few over it (which end a bundle, paged),
# in an order that mixes them.
SMALL_SIZES = [(i * 37) % 258 for i in range(258)] + [(i * 389) % 2050 for i in range(64)] + \
    [2049, 3000]
SIZE_SETS = {"mixed": DATA_SIZES, "small": SMALL_SIZES, "big": [6 << 20]}


def data_bytes(i, size):
    """Message i's bytes: SHAKE-128 of its number, so every byte differs."""
    return hashlib.shake_128(b"ics-data-%d" % i).digest(size) if size else b""


def cmd_data_send(peer, n, sizes):
    fd = dev()
    bind(fd, ICS_CH_TEST)
    sizes = SIZE_SETS[sizes]
    for i in range(n):
        send(fd, peer, data_bytes(i, sizes[i % len(sizes)]))


def cmd_data_recv(peer, n, sizes, mark):
    fd = dev()
    bind(fd, ICS_CH_TEST)
    fcntl.ioctl(fd, IOC_SET_RCVBUF, struct.pack("=I", 64 << 20))
    open(mark, "w").close()
    read_data(fd, peer, n, sizes)


def cmd_hold(peer, n, sizes, rcvbuf, mark):
    fd = dev()
    bind(fd, ICS_CH_TEST)
    fcntl.ioctl(fd, IOC_SET_RCVBUF, struct.pack("=I", rcvbuf))
    open(mark, "w").close()
    cmd = sys.stdin.readline().strip()
    s = stats(fd)
    if cmd in ("close", "part"):
        # part: read 70 % of what is queued, which resumes the channel,
        # and close at once, while the held messages are being offered
        r = s["rx_queued"] * 7 // 10 if cmd == "part" else 0
        read_data(fd, peer, r, sizes)
        print("# closed: %d messages read, %d queued on the reader" % (r, stats(fd)["rx_queued"]),
              flush=True)
        os.close(fd)
        return
    print("# held: %d messages queued on the reader, %d dropped" % (s["rx_queued"],
                                                                    s["rx_dropped"]), flush=True)
    if s["rx_queued"] >= n:
        fail("all %d messages reached the reader's queue: nothing was held" % n)
    read_data(fd, peer, n, sizes)
    if stats(fd)["rx_dropped"]:
        fail("%d messages dropped by the reader's full queue" % stats(fd)["rx_dropped"])


FLOOD = 65536


def wait_file(path, secs=None):
    """The numbers in PATH once it appears (written whole, then renamed)."""
    secs = secs or 2.5 * LONG
    end = time.monotonic() + secs
    while not os.path.exists(path):
        if time.monotonic() > end:
            fail("%s did not appear within %d s" % (path, secs))
            return None
        time.sleep(0.05)
    return [int(w) for w in open(path).read().split()]


def flood_fill(fd, peer, ch, n):
    """Write FLOOD-byte messages until EAGAIN; the count so far, or None."""
    while True:
        try:
            send(fd, peer, b"\x5a" * FLOOD, 0, ch)
            n += 1
        except OSError as e:
            if e.errno != errno.EAGAIN:
                fail("write %d on channel %d: %s" % (n, ch, errno.errorcode.get(e.errno)))
                return None
            return n


def cmd_flood(peer, ch, out, go):
    """Fill channel CH's queue to PEER, write the count to OUT; when OUT.top
    appears (the channel is paused by then), fill it again, to the brim this
    time, and write the count to OUT.topped; when GO appears, wait for every
    message to be acknowledged."""
    fd = dev(os.O_NONBLOCK)
    bind(fd, ch)
    n = flood_fill(fd, peer, ch, 0)
    if n is None:
        return
    with open(out + ".tmp", "w") as f:
        f.write("%d\n" % n)
    os.rename(out + ".tmp", out)
    print("# channel %d: %d messages of %d B queued before EAGAIN" % (ch, n, FLOOD), flush=True)
    end = time.monotonic() + 2.5 * LONG
    while not os.path.exists(go):
        if os.path.exists(out + ".top") and not os.path.exists(out + ".topped"):
            n = flood_fill(fd, peer, ch, n)
            if n is None:
                return
            with open(out + ".tmp", "w") as f:
                f.write("%d\n" % n)
            os.rename(out + ".tmp", out + ".topped")
            print("# channel %d: %d messages in all, topped up while paused" % (ch, n),
                  flush=True)
        if time.monotonic() > end:
            fail("%s did not appear within %d s" % (go, 2.5 * LONG))
            return
        time.sleep(0.05)
    end = time.monotonic() + LONG
    while stats(fd)["tx_done"] < n:
        if time.monotonic() > end:
            fail("channel %d: %d of %d messages acknowledged within %d s" %
                 (ch, stats(fd)["tx_done"], n, LONG))
            return
        time.sleep(0.05)


def stopped_reader(ch, rcvbuf, mark, go):
    """Bind CH with RCVBUF, touch MARK, read nothing until GO appears: the
    file and GO's numbers (None if it never came)."""
    fd = dev()
    bind(fd, ch)
    fcntl.ioctl(fd, IOC_SET_RCVBUF, struct.pack("=I", rcvbuf))
    open(mark, "w").close()
    return fd, wait_file(go)


def cmd_stall(peer, ch, rcvbuf, mark, go):
    fd, go = stopped_reader(ch, rcvbuf, mark, go)
    if go is None:
        return
    n, others = go[0], sum(go[1:])
    i = k = 0
    while i < n or k < others:
        if not wait_readable(fd, LONG):
            fail("channel %d: %d of %d messages from node %d and %d of %d from others "
                 "within %d s" % (ch, i, n, peer, k, others, LONG))
            return
        ln, node, c, data = recv(fd)
        if node != peer and c == ch and k < others:
            print("# channel %d: %d bytes from node %d" % (ch, ln, node), flush=True)
            k += 1
            continue
        if node != peer or c != ch or data != b"\x5a" * FLOOD:
            fail("channel %d: message %d: %d bytes on channel %d from node %d" % (ch, i, ln, c, node))
            return
        i += 1
    if stats(fd)["rx_dropped"]:
        fail("channel %d: %d messages dropped" % (ch, stats(fd)["rx_dropped"]))


def write_json(out, obj):
    """OUT, whole: written to OUT.tmp, then renamed."""
    with open(out + ".tmp", "w") as f:
        json.dump(obj, f)
    os.rename(out + ".tmp", out)


def wait_sent(fd, n, secs):
    """Until every one of the file's n messages is done or failed."""
    end = time.monotonic() + secs
    while True:
        s = stats(fd)
        if s["tx_done"] + s["tx_failed"] >= n or time.monotonic() > end:
            return s
        time.sleep(0.05)


# Sizes of seqsend's messages (cycled): from the 8-byte header it starts
# with to 64 KiB, in single frames and in many.
SEQ_SIZES = [8, 100, 1000, 1500, 4096, 9000, 20000, 65536, 33333, 2048, 12, 60000]
SEQ = struct.Struct(">II")            # seqsend's header: number, size


def seq_message(i):
    size = SEQ_SIZES[i % len(SEQ_SIZES)]
    return SEQ.pack(i, size) + data_bytes(i, size - SEQ.size)


def cmd_seqsend(peer, ch, n, out):
    """N numbered messages to PEER on CH, blocking; then wait for their fate."""
    fd = dev()
    bind(fd, ch)
    for i in range(n):
        send(fd, peer, seq_message(i), 0, ch)
    s = wait_sent(fd, n, 2.5 * LONG)
    write_json(out, {"sent": s["tx_msgs"], "done": s["tx_done"], "failed": s["tx_failed"],
                     "last_error": s["last_error"]})


def cmd_slowread(ch, rcvbuf, delay_ms, out, mark, go):
    """
    Bind CH with RCVBUF, touch MARK, read a message every DELAY_MS ms until
    GO (the number of messages the senders saw done) is read and nothing
    more came for 2 s; each message must be the next seqsend message of
    its node, whole. OUT: per node the numbers read, in order.
    """
    fd = dev()
    bind(fd, ch)
    fcntl.ioctl(fd, IOC_SET_RCVBUF, struct.pack("=I", rcvbuf))
    open(mark, "w").close()
    got, bad, want = {}, [], None
    total, idle = 0, 0
    while True:
        if want is None and os.path.exists(go):
            want = wait_file(go)[0]
        if want is not None and total >= want and not wait_readable(fd, 2):
            break
        # GO comes when the senders are done, perhaps after the last read
        if not wait_readable(fd, 1):
            idle += 1
            if idle >= (300 if want is None else 30) * SCALE:
                bad.append("nothing more after %d messages (%s done)" % (total, want))
                break
            continue
        idle = 0
        ln, node, c, data = recv(fd)
        total += 1
        if len(data) < SEQ.size:
            bad.append("a message of %d bytes from node %d" % (ln, node))
            continue
        i, size = SEQ.unpack_from(data)
        if data != seq_message(i):
            bad.append("message %d from node %d: %d bytes, not what was sent" % (i, node, ln))
        got.setdefault(str(node), []).append(i)
        time.sleep(delay_ms / 1000.0)
    write_json(out, {"got": got, "bad": bad[:20], "stats": stats(fd)})


def cmd_memwriters(peer, ch, threads, size, out):
    """
    THREADS threads on one file bound to CH write messages of SIZE bytes to
    PEER, blocking, for ever (until killed); OUT has the number of writes
    returned so far, rewritten as they return.
    """
    fd = dev()
    bind(fd, ch)
    payload = b"\x3c" * size        # one buffer, shared by every write
    hdr = HDR.pack(size, peer, ch, 0)
    lock = threading.Lock()
    done = [0]

    def writer():
        while True:
            try:
                os.writev(fd, [hdr, payload])
            except OSError as e:
                fail("write: %s" % errno.errorcode.get(e.errno))
                return
            with lock:
                done[0] += 1
                write_json(out, {"returned": done[0]})

    write_json(out, {"returned": 0})
    ts = [threading.Thread(target=writer, daemon=True) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def cmd_chanflood(peer, count, size, out):
    """
    One file per channel but CNX, each writing COUNT messages of SIZE bytes
    to PEER, blocking, in a thread each; then wait for their fate. OUT: per
    channel sent, done, failed.
    """
    payload = b"\xa5" * size
    res = {}

    def flood(ch):
        fd = dev()
        bind(fd, ch)
        for _ in range(count):
            os.writev(fd, [HDR.pack(size, peer, ch, 0), payload])
        s = wait_sent(fd, count, 600)
        res[str(ch)] = {"sent": s["tx_msgs"], "done": s["tx_done"], "failed": s["tx_failed"]}

    ts = [threading.Thread(target=flood, args=(ch,)) for ch in range(15)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    write_json(out, res)


def cmd_memcg(peer, ch, size, ready, go, out):
    """
    Bind CH, allocate SIZE bytes of payload, touch READY and wait for GO
    (the caller limits our memory cgroup meanwhile); then write messages of
    SIZE bytes, non-blocking, until one fails. OUT: how many were taken
    and the failing errno's name.
    """
    fd = dev(os.O_NONBLOCK)
    bind(fd, ch)
    payload = bytes(size)
    hdr = HDR.pack(size, peer, ch, 0)
    open(ready, "w").close()
    if wait_file(go) is None:
        return
    n, err = 0, None
    while n < 64:
        try:
            os.writev(fd, [hdr, payload])
            n += 1
        except OSError as e:
            err = errno.errorcode.get(e.errno, str(e.errno))
            break
    write_json(out, {"taken": n, "errno": err})


def cmd_rcvbuf(value, want):
    """ICS_IOC_SET_RCVBUF to VALUE on a file bound to TEST: errno WANT (0: success)."""
    fd = dev()
    bind(fd, ICS_CH_TEST)
    want_errno("rcvbuf %d as uid %d" % (value, os.getuid()), want,
               errno_of(lambda: fcntl.ioctl(fd, IOC_SET_RCVBUF, struct.pack("=I", value))))


def cmd_passfd(opener, ch, want):
    """
    One process opens /dev/ics, another binds it to CH: OPENER "nobody"
    opens as uid 65534 and root binds, "root" the other way round. The
    bind must give errno WANT (0: success): the opener's rights count.
    """
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
        if opener == "nobody":
            fd = dev()
            socket.send_fds(b, [b"x"], [fd])
            os._exit(0)
        fd = socket.recv_fds(b, 1, 1)[1][0]
        os._exit(errno_of(lambda: bind(fd, ch)))
    if opener == "nobody":
        fd = socket.recv_fds(a, 1, 1)[1][0]
        os.waitpid(pid, 0)
        got = errno_of(lambda: bind(fd, ch))
    else:
        fd = dev()
        socket.send_fds(a, [b"x"], [fd])
        got = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    want_errno("opened by %s, bound by the other: channel %d" % (opener, ch), want, got)


def cmd_sink(ch, rcvbuf, mark, go):
    fd, go = stopped_reader(ch, rcvbuf, mark, go)
    if go is None:
        return
    for i in range(go[0]):
        if not wait_readable(fd, LONG):
            fail("channel %d: message %d of %d: nothing within %d s" % (ch, i, go[0], LONG))
            return
        recv(fd)


def cmd_big(peer, ch, size, out):
    fd = dev()
    bind(fd, ch)
    try:
        send(fd, peer, bytes(size), F_SYNC, ch)
        r = "done"
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e.errno))
    write_text(out, r + "\n")


def write_text(out, text):
    with open(out + ".tmp", "w") as f:
        f.write(text)
    os.rename(out + ".tmp", out)


def cmd_syncsig(peer, n, sizes, ms, mark, out):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    fd = dev()
    bind(fd, ICS_CH_TEST)
    sizes = SIZE_SETS[sizes]
    for i in range(n - 1):
        send(fd, peer, data_bytes(i, sizes[i % len(sizes)]))
    fcntl.ioctl(fd, IOC_SET_SNDTIMEO, struct.pack("=I", ms))
    data = data_bytes(n - 1, sizes[(n - 1) % len(sizes)])
    msg = HDR.pack(len(data), peer, ICS_CH_TEST, F_SYNC) + data
    write_text(mark, "%d\n" % os.getpid())
    r = libc.write(fd, msg, len(msg))
    e = ctypes.get_errno()
    write_text(out, "done\n" if r == len(msg) else "%s\n" % errno.errorcode.get(e, str(e)))


def cmd_data_next(peer, n, sizes, mark, go):
    fd = dev()
    open(mark, "w").close()
    if wait_file(go) is None:
        return
    bind(fd, ICS_CH_TEST)
    fcntl.ioctl(fd, IOC_SET_RCVBUF, struct.pack("=I", 64 << 20))
    if not wait_readable(fd, LONG):
        fail("no message within %d s" % LONG)
        return
    ln, node, ch, data = recv(fd)
    sz = SIZE_SETS[sizes]
    first = next((i for i in range(n) if len(data) == sz[i % len(sz)] and
                  data == data_bytes(i, len(data))), None)
    if node != peer or ch != ICS_CH_TEST or first is None:
        fail("the first message, %d bytes from node %d, is none of data-send's" % (len(data), node))
        return
    print("# next: first message %d" % first, flush=True)
    read_data(fd, peer, n, sizes, first + 1)


def read_data(fd, peer, n, sizes, start=0):
    for i in range(start, n):
        if not wait_readable(fd, LONG):
            fail("message %d of %d: nothing within %d s" % (i, n, LONG))
            return
        ln, node, ch, data = recv(fd)
        want = data_bytes(i, SIZE_SETS[sizes][i % len(SIZE_SETS[sizes])])
        if node != peer or ch != ICS_CH_TEST or data != want:
            at = next((k for k in range(min(len(data), len(want))) if data[k] != want[k]),
                      min(len(data), len(want)))
            fail("message %d from node %d: %d bytes, want %d from node %d; first "
                 "difference at byte %d" % (i, node, len(data), len(want), peer, at))
            return


def main():
    cmds = {"errors": (cmd_errors, 2), "bind": (cmd_bind, 2), "poll": (cmd_poll, 1),
            "fill": (cmd_fill, 1), "queue": (cmd_queue, 3), "data-send": (cmd_data_send, 3),
            "data-recv": (cmd_data_recv, 4), "hold": (cmd_hold, 5),
            "data-next": (cmd_data_next, 5),
            "batch": (cmd_batch, 1), "flood": (cmd_flood, 4), "stall": (cmd_stall, 5),
            "seqsend": (cmd_seqsend, 4), "slowread": (cmd_slowread, 6),
            "memwriters": (cmd_memwriters, 5), "memcg": (cmd_memcg, 6),
            "rcvbuf": (cmd_rcvbuf, 2), "chanflood": (cmd_chanflood, 4),
            "passfd": (cmd_passfd, 3), "syncsig": (cmd_syncsig, 6),
            "big": (cmd_big, 4), "sink": (cmd_sink, 4)}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds or len(sys.argv) != 2 + cmds[sys.argv[1]][1]:
        print(__doc__, file=sys.stderr)
        return 2
    fn, _ = cmds[sys.argv[1]]
    args = [int(a) if a.lstrip("-").isdigit() else a for a in sys.argv[2:]]
    fn(*args)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
