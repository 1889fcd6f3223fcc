#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make vmtest-cluster`: a two-VM, mixed-kernel cluster. VM 1 boots
# Debian's 6.1, VM 2 the 6.12 from bookworm-backports; each has one NIC, a
# virtio NIC joined to the other's by qemu's socket backend on 127.0.0.1
# (VM 1 listens, VM 2 connects): the dedicated interconnect, and nothing
# else. In each, scripts/cluster-guest.sh loads ics.ko with insmod
# ifname=<that NIC> and the test service ics_test.ko, waits for the other
# to be a member, sends test messages on all 16 channels from the test
# service and has it check what the other sent. Then this
# script kills VM 2 (SIGKILL to its qemu: a power cut), and VM 1 must
# declare node 2 down within heartbeat_ms * (heartbeat_misses + 1) of its
# last frame (hence of the kill) plus SLACK_MS.
#
# Prints KTAP; exits non-zero on any failure, and on a warning, bug, oops
# or lockdep line in either guest's kernel log. Results in
# build/vmtest-cluster/ (console logs, each guest's steps and JSON).
#
# Environment: CLUSTER_COUNT messages per channel and direction (default
# 20), CLUSTER_TIMEOUT seconds for the whole run (default 1200),
# CLUSTER_SLACK_MS (default 100), CLUSTER_KVER1/CLUSTER_KVER2 (defaults:
# the installed 6.1 and 6.12 kernels).
set -u
root=$(cd "$(dirname "$0")/.." && pwd -P)
# shellcheck source=scripts/qemu-cpu.sh
. "$root/scripts/qemu-cpu.sh"
ICS_QEMU_CPU=$(ics_qemu_cpu 1)
res=${CLUSTER_OUT:-$root/build/vmtest-cluster}
count=${CLUSTER_COUNT:-20}
slack=${CLUSTER_SLACK_MS:-100}
limit=${CLUSTER_TIMEOUT:-1200}
k1=${CLUSTER_KVER1:-$(cd /lib/modules && ls -d 6.1.0-*-amd64 2>/dev/null | head -n1)}
k2=${CLUSTER_KVER2:-$(cd /lib/modules && ls -d 6.12.*-amd64 2>/dev/null | head -n1)}
DMESG_BAD='WARNING:|BUG:|Oops|cut here|KASAN|UBSAN|lockdep|general protection fault|Call Trace'
DMESG_OK='loading out-of-tree module taints kernel|module verification failed'

echo "TAP version 13"
echo "1..7"
n=0
failed=0
tap()	# ok|"not ok" DESCRIPTION [DETAIL]
{
	n=$((n + 1))
	[ "$1" = ok ] || failed=1
	echo "$1 $n $2${3:+ # $3}"
}
bail()
{
	echo "Bail out! $*"
	exit 1
}

for k in "$k1" "$k2"; do
	[ -n "$k" ] && [ -e "/boot/vmlinuz-$k" ] || bail "kernel ${k:-?} not installed (make deps)"
	for m in ics ics_test; do
		[ -r "$root/build/$k/kmod/$m.ko" ] || bail "build/$k/kmod/$m.ko missing (make modules)"
	done
done
for t in icstat icsctl; do
	[ -x "$root/user/$t" ] || bail "user/$t missing (make user)"
done
command -v vng >/dev/null || bail "vng not installed (make deps)"

rm -rf "$res"
for i in 1 2; do
	k=$([ $i = 1 ] && echo "$k1" || echo "$k2")
	mkdir -p "$res/vm$i/stage" "$res/vm$i/out"
	cp "$root/build/$k/kmod/ics.ko" "$root/build/$k/kmod/ics_test.ko" "$root/user/icstat" \
		"$root/user/icsctl" "$res/vm$i/stage/"
done

# A free port on the loopback address for VM 1 to listen on.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

boot()	# I KVER NETDEV-OPTION
{
	local i=$1 k=$2 nd=$3
	timeout --foreground -k 10 "$limit" \
		vng --run "/boot/vmlinuz-$k" --disable-kvm --user root --cpus 1 --memory 1G \
		--rwdir "$res/vm$i" \
		--qemu-opts="$ICS_QEMU_CPU -netdev socket,id=ics0,$nd -device virtio-net-pci,netdev=ics0,mac=52:54:00:1c:5c:0$i" \
		-- "$root/scripts/cluster-guest.sh $res/vm$i/out $i $((3 - i)) $count" \
		> "$res/vm$i/console.log" 2>&1 < /dev/null &
}

t0=$SECONDS
boot 1 "$k1" "listen=127.0.0.1:$port"
vm1=$!
# VM 2 connects once VM 1's qemu listens (a probe connection would take
# the one connection qemu accepts, so look, do not touch).
for i in $(seq 300); do
	ss -ltn "sport = :$port" 2>/dev/null | grep -q LISTEN && break
	kill -0 $vm1 2>/dev/null || break
	sleep 0.1
done
boot 2 "$k2" "connect=127.0.0.1:$port"
vm2=$!

# Both guests ready (or finished early with a failure), or the time limit.
ready() { [ -e "$res/vm$1/out/ready" ] || [ -e "$res/vm$1/out/done" ]; }
while ! { ready 1 && ready 2; }; do
	if ! kill -0 $vm1 2>/dev/null || ! kill -0 $vm2 2>/dev/null ||
	   [ $((SECONDS - t0)) -gt "$limit" ]; then
		break
	fi
	sleep 1
done
# The power cut: SIGKILL to VM 2's qemu, not to the vng wrapper: the one
# sharing $res/vm2 (other VMs may run on this host).
qpid=
for p in $(pgrep -f 'qemu-system'); do
	tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null |
		grep -qF -e "$res/vm2," -e "$res/vm2 " && qpid=$p
done
[ -n "$qpid" ] && kill -KILL "$qpid"
wait $vm2 2>/dev/null
for i in $(seq "$limit"); do
	[ -e "$res/vm1/out/done" ] && break
	kill -0 $vm1 2>/dev/null || break
	sleep 1
done
kill $vm1 2>/dev/null
wait $vm1 2>/dev/null
echo "# both VMs done after $((SECONDS - t0)) s"

for i in 1 2; do
	k=$(cat "$res/vm$i/out/kernel" 2>/dev/null || echo "?")
	while read -r line; do
		echo "# vm$i ($k): $line"
	done < <(cat "$res/vm$i/out/steps" 2>/dev/null)
done

step_ok()	# VM STEP
{
	grep -q "^ok $2\b" "$res/vm$1/out/steps" 2>/dev/null
}

if step_ok 1 insmod && step_ok 2 insmod; then
	tap ok "insmod ifname=<interconnect NIC>, and ics_test, on $(cat "$res/vm1/out/kernel") and $(cat "$res/vm2/out/kernel")"
else
	tap "not ok" "insmod on both VMs" "see $res/vm*/console.log"
fi
if step_ok 1 member && step_ok 2 member; then
	tap ok "each VM holds the other as a member"
else
	tap "not ok" "each VM holds the other as a member"
fi
if step_ok 1 send && step_ok 2 send && step_ok 1 receive && step_ok 2 receive; then
	tap ok "$count messages per channel each way on all 16 channels, acknowledged and verified"
else
	tap "not ok" "messages on all 16 channels each way"
fi
# The receiver's test hash per channel equals the sender's (the test
# service's, icsctl test show): same messages, same order, none lost or
# duplicated.
if python3 - "$res" <<'EOF'
import json, sys
res = sys.argv[1]
n = {i: json.load(open("%s/vm%d/out/test.json" % (res, i)))["nodes"] for i in (1, 2)}
errs = []
for s, r in ((1, 2), (2, 1)):
    tx, rx = n[s][str(r)]["tx_hash"], n[r][str(s)]["rx_hash"]
    if len(tx) != 16:
        errs.append("node %d: %d channels in its test hashes" % (s, len(tx)))
    for ch in tx:
        if not tx[ch] or tx[ch] != rx.get(ch):
            errs.append("%s: node %d sent hash %08x, node %d received %08x"
                        % (ch, s, tx[ch], r, rx.get(ch, 0)))
for e in errs:
    print("# " + e)
sys.exit(1 if errs else 0)
EOF
then
	tap ok "test hashes equal per channel and direction: nothing lost, duplicated or reordered"
else
	tap "not ok" "test hashes per channel and direction"
fi
if step_ok 1 down && python3 - "$res" "$slack" <<'EOF'
import json, sys
res, slack = sys.argv[1], int(sys.argv[2])
j = json.load(open("%s/vm1/out/members-after.json" % res))
m = next(m for m in j["members"] if m["node"] == 2)
bound = j["heartbeat_ms"] * (j["heartbeat_misses"] + 1)
d = (m["since_ns"] - m["last_heard_ns"]) / 1e6
print("# node 2 declared down (%s) %.1f ms after its last frame; bound %d + %d ms"
      % (m["reason"], d, bound, slack))
sys.exit(0 if m["state"] == "down" and d <= bound + slack else 1)
EOF
then
	tap ok "VM 2 killed: VM 1 declares node 2 down within heartbeat_ms * (misses + 1) + ${slack} ms"
else
	tap "not ok" "VM 2 killed: node 2 down at VM 1 within the bound"
fi
for i in 1 2; do
	bad=$(grep -E "$DMESG_BAD" "$res/vm$i/out/dmesg.log" 2>/dev/null | grep -Ev "$DMESG_OK")
	if [ -r "$res/vm$i/out/dmesg.log" ] && [ -z "$bad" ]; then
		tap ok "vm$i kernel log clean"
	else
		tap "not ok" "vm$i kernel log clean" "$(echo "$bad" | head -n 3 | tr '\n' '|')"
	fi
done
exit $failed
