#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the demo VM: a three-member cluster, one member per netns, on
# a bridge that stands in for the interconnect switch:
#
#   [ns m1: node 1] --veth-- +--------+ --veth-- [ns m2: node 2]
#                            | br-ics |
#   [ns m3: node 3] --veth-- +--------+
#
# The members find each other (icstat members), send a traffic mix shaped
# like the seed paper's NFS-server cluster (small CFS and PRI0 messages,
# DLM and KCH chatter, some bulk CFS/DRD) from the test service,
# ics_test.ko, loaded and attached to every channel but CNX on every
# member, so that each receiver checks every byte it gets; member 1 prints
# `icstat chanhisttot`, and every histogram row of every member, every
# test service's counts and the test hashes of every sender and receiver
# are checked against what was sent. Then member 3 dies (its netns
# deleted) while member 1 runs `icstat monitor`: it is declared down
# within 400 ms.
#
# Usage: demo-guest.sh ICS_KO (ics_test.ko beside it).
set -eu
ko=$1
test_ko=$(dirname "$ko")/ics_test.ko
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH=$root/user:$PATH

ip link add br-ics type bridge
ip link set br-ics up
for n in 1 2 3; do
	ip netns add m$n
	ip link add ics$n netns m$n type veth peer name br$n
	ip link set br$n master br-ics up
	ip -n m$n link set ics$n up
done
# Membership at its defaults: a heartbeat every 100 ms, down after 3 missed.
insmod "$ko"
insmod "$test_ko"
for n in 1 2 3; do
	ip netns exec m$n icsctl bind dev ics$n node $n cluster 7 >/dev/null
	ip netns exec m$n icsctl test attach all
done
for n in 1 2 3; do
	for i in $(seq 100); do
		r=$(ip netns exec m$n icstat -j members | python3 -c \
			'import json,sys; print(sum(m["state"] == "member" for m in json.load(sys.stdin)["members"]))')
		[ "$r" = 3 ] && break
		sleep 0.1
	done
	[ "$r" = 3 ] || { echo "demo: member $n sees $r of 3 members" >&2; exit 1; }
done
echo "demo: three members; member 1's view:"
echo
ip netns exec m1 icstat members
echo

# src dst channel size count
plan="
2 1 CFS   200   400
3 1 CFS   256   300
2 1 CFS   8k    40
3 1 CFS   64k   6
2 1 PRI0  100   300
3 1 PRI0  4k    30
2 1 DLM   256   200
3 1 DLM   256   120
2 1 KCH   48    150
3 1 KCH   1000  60
2 1 TUNL  64    100
3 1 TUNL  1400  40
2 1 DRD   32k   8
3 1 DRD   1m    2
2 1 CLUA  120   25
3 1 KEVM  12    10
2 1 NET   1500  30
1 2 CFS   300   200
1 3 CFS   4k    50
1 2 DLM   256   150
1 3 PRI0  128   100
1 2 DRD   16m   1
"
echo "$plan" | while read -r src dst ch size count; do
	[ -n "$src" ] || continue
	ip netns exec m$src icsctl send node "$dst" channel "$ch" size "$size" count "$count" >/dev/null
done

# Until every receiver's test service has taken and checked what was sent
# to it (it checks large messages in a worker, after delivery).
python3 - "$plan" <<'PY'
import json, subprocess, sys, time

plan = [l.split() for l in sys.argv[1].splitlines() if l.split()]
want = {n: sum(int(c) for s, d, ch, sz, c in plan if int(d) == n) for n in (1, 2, 3)}
def checked(n):
    j = json.loads(subprocess.run(["ip", "netns", "exec", f"m{n}", "icsctl", "test", "show", "-j"],
                                  check=True, capture_output=True, text=True).stdout)
    return sum(c["rx_ok"] + c["rx_bad"] for c in j["channels"].values()), j["queued"]
deadline = time.time() + 120
while True:
    got = {n: checked(n) for n in (1, 2, 3)}
    if all(got[n][0] >= want[n] and got[n][1] == 0 for n in got) or time.time() > deadline:
        break
    time.sleep(0.2)
for n in (1, 2, 3):
    if got[n][0] < want[n]:
        print(f"demo: member {n}'s test service checked {got[n][0]} of {want[n]} messages after 120 s")
PY

# Heartbeats count on CNX too: slow them down to one an hour, so that the
# counters hold still while they are checked (the next beat of each
# member's timer announces the new interval; wait for it).
for n in 1 2 3; do
	ip netns exec m$n icsctl set heartbeat 3600000
done
sleep 0.5

expect_total=$(echo "$plan" | awk 'NF {s += $5} END {print s}')
echo "demo: sent $expect_total messages over 3 members; member 1's view:"
echo
ip netns exec m1 icstat chanhisttot
echo
echo "demo: what member 1's test service checked of the messages sent to it:"
echo
ip netns exec m1 icsctl test show
echo

# Check: every member's tx and rx histogram equals the plan plus its hellos;
# every member's test service verified exactly the messages sent to it on
# each channel; each sender's test hash for a receiver and channel equals
# the receiver's for that sender: the same messages, once each, in order.
python3 - "$plan" <<'PY'
import json, subprocess, sys

CH = "BOOT PRI0 PRI1 CFS NET CLSM DRD TUNL CLUA KEVM CFSR RBLD KCH DLM TEST CNX".split()
HELLO = 136     # sizeof(struct ics_wire_hello): a heartbeat on CNX
def size(s):
    m = {"k": 1 << 10, "m": 1 << 20}
    return int(s[:-1]) * m[s[-1]] if s[-1] in m else int(s)
def row(n):
    return 0 if n == 0 else min((n - 1).bit_length() + 1, 26)
def run_j(n, *cmd):
    out = subprocess.run(["ip", "netns", "exec", f"m{n}", *cmd],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)
def icstat(n, *args):
    return run_j(n, "icstat", "-j", *args)

plan = [l.split() for l in sys.argv[1].splitlines() if l.split()]
bad = 0
for n in (1, 2, 3):
    want = {d: [[0] * 27 for _ in CH] for d in ("tx", "rx")}
    for src, dst, ch, sz, cnt in plan:
        for d, who in (("tx", src), ("rx", dst)):
            if int(who) == n:
                want[d][CH.index(ch)][row(size(sz))] += int(cnt)
    stats = icstat(n, "show")["stats"]
    want["tx"][CH.index("CNX")][row(HELLO)] += stats["hello_tx"]
    want["rx"][CH.index("CNX")][row(HELLO)] += stats["hello_rx"]
    got = icstat(n, "chanhisttot")["channels"]
    for c in got:
        for d in ("tx", "rx"):
            if c[d]["hist"] != want[d][c["id"]]:
                bad += 1
                print(f"demo: member {n} {d} {c['name']}: got {c[d]['hist']} want {want[d][c['id']]}")
tsvc = {n: run_j(n, "icsctl", "test", "show", "-j") for n in (1, 2, 3)}
for n in (1, 2, 3):
    for ch in CH:
        sent = sum(int(cnt) for src, dst, c, sz, cnt in plan if int(dst) == n and c == ch)
        c = tsvc[n]["channels"].get(ch, {"rx_ok": 0, "rx_bad": 0})
        if c["rx_ok"] != sent or c["rx_bad"]:
            bad += 1
            print(f"demo: member {n} {ch}: test service verified {c['rx_ok']} of {sent}, "
                  f"{c['rx_bad']} corrupt")
for src, dst, ch in sorted({(int(s), int(d), c) for s, d, c, sz, cnt in plan}):
    tx = tsvc[src]["nodes"].get(str(dst), {}).get("tx_hash", {}).get(ch)
    rx = tsvc[dst]["nodes"].get(str(src), {}).get("rx_hash", {}).get(ch)
    if not tx or tx != rx:
        bad += 1
        print(f"demo: {ch} from member {src} to {dst}: sender's hash {tx}, receiver's {rx}")
if bad:
    sys.exit(f"demo: {bad} mismatches")
print("demo: every histogram row on every member matches what was sent; "
      "every message verified, in order, by its receiver's test service")
PY

# A member dies: member 1 reports it down within 400 ms of its last frame.
for n in 1 2 3; do
	ip netns exec m$n icsctl set heartbeat 100
done
sleep 0.5
ip netns exec m1 icstat monitor > /tmp/demo-monitor 2>&1 &
mon=$!
sleep 0.5
echo
echo "demo: member 3 dies (its network namespace is deleted); member 1's monitor:"
ip netns del m3
for i in $(seq 100); do
	grep -q "node 3 member -> down" /tmp/demo-monitor && break
	sleep 0.1
done
kill -INT $mon; wait $mon || true
echo
sed 's/^/    /' /tmp/demo-monitor
echo
ip netns exec m1 icstat members
grep -q "node 3 member -> down" /tmp/demo-monitor || { echo "demo: member 3 was not declared down" >&2; exit 1; }
ip netns exec m1 icstat -j members | python3 -c '
import json, sys
j = json.load(sys.stdin)
m = next(m for m in j["members"] if m["node"] == 3)
d = (m["since_ns"] - m["last_heard_ns"]) / 1e6
print("demo: member 3 declared down %.0f ms after its last frame (bound: %d ms)"
      % (d, j["heartbeat_ms"] * (j["heartbeat_misses"] + 1)))
sys.exit(d > j["heartbeat_ms"] * (j["heartbeat_misses"] + 1) + 100)'
ip netns del m1
ip netns del m2
# ics_test first (it uses ics); namespaces go away in the background.
for mod in ics_test ics; do
	for i in $(seq 100); do
		rmmod $mod 2>/dev/null && break
		sleep 0.1
	done
	! grep -q "^$mod " /proc/modules || { echo "demo: rmmod $mod failed" >&2; exit 1; }
done
if dmesg | grep -E 'WARNING:|BUG:|Oops|cut here|Call Trace' >/dev/null; then
	echo "demo: the kernel log has a warning:" >&2
	dmesg | grep -E -A20 'WARNING:|BUG:|Oops|cut here' >&2
	exit 1
fi
