#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside each VM of `make vmtest-cluster` (scripts/vmtest-cluster.sh).
# The VM's only NIC is the dedicated interconnect, a virtio NIC whose MAC
# ends in the node id; the two VMs reach each other only through it.
#
# Usage: cluster-guest.sh RESDIR NODE PEER COUNT
#   1. insmod ics.ko ifname=<that NIC> node_id=NODE cluster_id=7, then the
#      test service, ics_test.ko, attached to all 16 channels
#   2. wait until PEER is a member here (icstat members)
#   3. send COUNT test messages (mixed sizes up to 64 KiB) to PEER on each
#      of the 16 channels from the test service, --wait: every one
#      acknowledged
#   4. wait until PEER's COUNT messages per channel arrived here, every one
#      verified by the test service (rx_ok; rx_bad 0)
#   5. write its view, counters and the test service's counters and hashes
#      (test.json) to RESDIR, then "ready"
#   node 1 then waits for node 2 to be declared down (the host kills node
#   2's VM once both are ready) and records how long it took.
# Every step appends one line to RESDIR/steps: "ok NAME ..." or
# "not ok NAME ..."; RESDIR/done gets "ICS-CLUSTER-END" last.
set -u
res=$1 node=$2 peer=$3 count=$4
stage=$res/../stage
export PATH=$stage:$PATH
: > "$res/steps"

step() { echo "$1 $2${3:+ # $3}" >> "$res/steps"; echo "cluster-guest: $1 $2 ${3:-}"; }
finish()
{
	dmesg > "$res/dmesg.log"
	echo ICS-CLUSTER-END > "$res/done"
	sync
	exit 0
}
members() { icstat -j members 2>/dev/null; }
tsvc() { icsctl test show -j 2>/dev/null; }
CHANNELS="BOOT PRI0 PRI1 CFS NET CLSM DRD TUNL CLUA KEVM CFSR RBLD KCH DLM TEST CNX"

mac=52:54:00:1c:5c:0$node
dev=""
for d in /sys/class/net/*; do
	[ "$(cat "$d/address" 2>/dev/null)" = "$mac" ] && dev=$(basename "$d")
done
if [ -z "$dev" ]; then
	step "not ok" nic "no NIC with MAC $mac: $(cat /sys/class/net/*/address | tr '\n' ' ')"
	finish
fi
ip link set "$dev" up
uname -r > "$res/kernel"

# The test service receives on every channel, CNX too (ics's own frames
# there are not messages: they never reach a receiver).
# shellcheck disable=SC2086  # the channel names
if out=$(insmod "$stage/ics.ko" ifname="$dev" node_id="$node" cluster_id=7 2>&1 &&
	 insmod "$stage/ics_test.ko" 2>&1 && icsctl test attach $CHANNELS 2>&1); then
	step ok insmod "ifname=$dev node_id=$node on $(uname -r); ics_test attached to all 16 channels"
else
	step "not ok" insmod "$out"
	finish
fi

# 2. membership
t0=$SECONDS
until members | python3 -c '
import json, sys
j = json.load(sys.stdin)
sys.exit(not any(m["node"] == int(sys.argv[1]) and m["state"] == "member" for m in j["members"]))
' "$peer"; do
	if [ $((SECONDS - t0)) -gt 120 ]; then
		step "not ok" member "node $peer not a member after 120 s: $(icstat members 2>&1 | tr '\n' '|')"
		finish
	fi
	sleep 0.2
done
step ok member "node $peer a member after $((SECONDS - t0)) s"
icstat members

# 3. traffic on every channel
rc=0
for ch in $CHANNELS; do
	out=$(icsctl send node "$peer" channel $ch size 64k count "$count" --mixed --wait \
		--timeout 60000 -j 2>&1) || { rc=1; echo "send $ch: $out"; }
done
if [ $rc = 0 ]; then
	step ok send "$count mixed messages on each of 16 channels, every one acknowledged"
else
	step "not ok" send "some sends failed"
fi

# 4. the peer's messages here, verified by the test service (all taken are
# counted once "queued" is 0)
t0=$SECONDS
until tsvc | python3 -c '
import json, sys
j = json.load(sys.stdin)
c = [j["channels"].get(ch, {"rx_ok": 0, "rx_bad": 0}) for ch in sys.argv[2:]]
sys.exit(not (j["queued"] == 0 and all(x["rx_ok"] + x["rx_bad"] >= int(sys.argv[1]) for x in c)))
' "$count" $CHANNELS; do
	if [ $((SECONDS - t0)) -gt 300 ]; then
		break
	fi
	sleep 0.5
done
if tsvc | python3 -c '
import json, sys
j = json.load(sys.stdin)
c = {ch: j["channels"].get(ch, {"rx_ok": 0, "rx_bad": 0}) for ch in sys.argv[2:]}
bad = [ch for ch, x in c.items() if x["rx_ok"] != int(sys.argv[1]) or x["rx_bad"]]
print(" ".join(bad))
sys.exit(1 if bad else 0)
' "$count" $CHANNELS > "$res/rx_bad"; then
	step ok receive "$count verified messages from node $peer on each of 16 channels"
else
	step "not ok" receive "channels short or corrupt: $(cat "$res/rx_bad")"
fi

members > "$res/members.json"
icstat -j nodes > "$res/nodes.json"
tsvc > "$res/test.json"
icstat -j show > "$res/show.json"
icstat -j links > "$res/links.json"
dmesg > "$res/dmesg.log"
echo ready > "$res/ready"
sync

# 5. node 1 watches node 2 die (the host kills node 2's VM when both are ready)
if [ "$node" = 1 ]; then
	t0=$SECONDS
	until members | python3 -c '
import json, sys
j = json.load(sys.stdin)
sys.exit(not any(m["node"] == int(sys.argv[1]) and m["state"] == "down" for m in j["members"]))
' "$peer"; do
		if [ $((SECONDS - t0)) -gt 600 ]; then
			step "not ok" down "node $peer not declared down after 600 s"
			finish
		fi
		sleep 0.05
	done
	members > "$res/members-after.json"
	icstat -j show > "$res/show-after.json"
	step ok down "node $peer declared down"
	finish
fi
# node 2: keep running until the host kills this VM
dmesg > "$res/dmesg.log"
echo ICS-CLUSTER-END > "$res/done"
sync
sleep 100000
