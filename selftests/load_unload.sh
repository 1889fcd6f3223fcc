#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# load_unload.sh - ics.ko (with its client ics_test.ko, the test service)
# survives repeated load/unload, with and without bound instances, and
# leaves no warning in the kernel log.
#
#   init netns                                netns ics$$-b
#   +---------------------------+             +---------------------------+
#   | ics: insmod ifname=icsl0  |             | ics: icsctl bind          |
#   |      node_id=1            |             |      dev icsl1 node 2     |
#   |   icsl0 02:00:00:00:0a:01 +---- veth ---+ icsl1 02:00:00:00:0a:02   |
#   +---------------------------+             +---------------------------+
#
#   netns ics$$-x (node 1) x0 ---- veth ---- x1 (node 2) netns ics$$-y
#   (re-created per cycle and deleted while bound)
#
# Cases:
#   1. 10 x insmod / rmmod without parameters (instance "unused")
#   2. 10 x insmod ifname=icsl0 node_id=1 / rmmod (instance bound at load)
#   3. 5 x load bound, bind the peer, the test service's traffic both ways
#      (icsctl send --wait), rmmod ics_test, then /dev/ics traffic both
#      ways and at once rmmod ics while both instances are bound and
#      messages may be in flight (ics_test cannot go while messages it sent
#      are pending, so the in-flight ones are a /dev/ics writer's)
#   4. 5 x bind two netns, traffic, delete both netns while bound, rmmod
#   5. no WARN/BUG/lockdep in the kernel log
# The test service in netns b is attached to TEST only, so that a /dev/ics
# file there can take KCH.

. "$(dirname "$0")/lib.sh"

CYCLES=${ICS_LOAD_CYCLES:-10}
CYCLES_TRAFFIC=${ICS_LOAD_CYCLES_TRAFFIC:-5}
NS_B=$ICS_PFX-b
NS_X=$ICS_PFX-x
NS_Y=$ICS_PFX-y
UNUSED_RE='icstat: no ics instance in this network namespace \(bind one with icsctl bind\)'
ICS_ATTACH=TEST

ics_init
ktap_set_plan 5

setup()
{
	ns_add "$NS_B" || return 1
	ip link add icsl0 address 02:00:00:00:0a:01 type veth \
		peer name icsl1 address 02:00:00:00:0a:02 netns "$NS_B" || return 1
	ICS_INIT_LINKS+=(icsl0)
	ip link set icsl0 up && ip -n "$NS_B" link set icsl1 up
}

cycle_plain()
{
	local i
	ics_unload || return 1
	for ((i = 1; i <= CYCLES; i++)); do
		ics_load || { fail "cycle $i: insmod"; return 1; }
		# The family is there and the init-netns instance is unused.
		expect_err 1 "$UNUSED_RE" icstat show || return 1
		ics_unload || { fail "cycle $i: rmmod"; return 1; }
	done
	info "$CYCLES plain load/unload cycles"
}

cycle_bound()
{
	local i out line
	ics_unload || return 1
	for ((i = 1; i <= CYCLES; i++)); do
		ics_load ifname=icsl0 node_id=1 || { fail "cycle $i: insmod ifname=icsl0 node_id=1"; return 1; }
		out=$(icstat -j show | jget '"%s %s %s" % (j["state"], j["ifname"], j["node_id"])')
		assert_eq "cycle $i: state ifname node_id" "bound icsl0 1" "$out" || return 1
		ics_unload || { fail "cycle $i: rmmod"; return 1; }
	done
	line='ics: bound to icsl0 as node 1 of cluster 0 (mtu 1500, incarnation '
	ics_dmesg | grep -qF "$line" || fail "no kernel log line '$line'" || return 1
	info "$CYCLES bound load/unload cycles"
}

# dev_send NS NODE CHANNEL SIZE COUNT: COUNT messages of SIZE bytes to NODE
# written to /dev/ics; returns once they are queued, not delivered.
dev_send()
{
	in_ns "$1" python3 -c '
import fcntl, os, struct, sys
node, ch, size, count = map(int, sys.argv[1:5])
fd = os.open("/dev/ics", os.O_RDWR)
fcntl.ioctl(fd, (1 << 30) | (8 << 16) | (0xB5 << 8) | 1, struct.pack("=II", ch, 0))  # ICS_IOC_BIND
for i in range(count):
    msg = struct.pack("=IBBH", size, node, ch, 0) + bytes(size)  # struct ics_dev_hdr
    n = os.write(fd, msg)
    if n != len(msg):
        sys.exit("# /dev/ics write: %d of %d bytes" % (n, len(msg)))
' "$2" "$(ch_id "$3")" "$4" "$5" || fail "$1: /dev/ics: $5 x $4 bytes to node $2 on $3"
}

cycle_traffic()
{
	local i rc=0 p1 p2
	ics_unload || return 1
	for ((i = 1; i <= CYCLES_TRAFFIC; i++)); do
		ics_load ifname=icsl0 node_id=1 heartbeat_ms=100 || return 1
		ics_bind "$NS_B" icsl1 2 || return 1
		wait_reachable "$NS_B" 1 || return 1
		icsctl send node 2 channel TEST size 100000 count 3 --wait >/dev/null & p1=$!
		in_ns "$NS_B" icsctl send node 1 channel DLM size 50000 count 3 --wait >/dev/null & p2=$!
		wait $p1 || rc=1
		wait $p2 || rc=1
		[ $rc = 0 ] || { fail "cycle $i: icsctl send --wait failed"; return 1; }
		rmmod ics_test || { fail "cycle $i: rmmod ics_test after its sends were done"; return 1; }
		dev_send "" 2 CFS 100000 3 & p1=$!
		dev_send "$NS_B" 1 KCH 50000 3 & p2=$!
		wait $p1 || rc=1
		wait $p2 || rc=1
		[ $rc = 0 ] || return 1
		# Unload at once: reassembly may hold partial messages.
		ics_unload || { fail "cycle $i: rmmod with bound instances"; return 1; }
	done
	info "$CYCLES_TRAFFIC load/traffic/unload cycles"
}

cycle_netns()
{
	local i
	ics_unload || return 1
	for ((i = 1; i <= CYCLES_TRAFFIC; i++)); do
		ics_load heartbeat_ms=100 || return 1
		ns_add "$NS_X" && ns_add "$NS_Y" || return 1
		veth_add "$NS_X" x0 02:00:00:00:0b:01 "$NS_Y" x1 02:00:00:00:0b:02 || return 1
		ics_bind "$NS_X" x0 1 && ics_bind "$NS_Y" x1 2 || return 1
		wait_reachable "$NS_X" 2 || return 1
		in_ns "$NS_X" icsctl send node 2 channel TEST size 20000 count 5 >/dev/null || return 1
		ns_del "$NS_X" && ns_del "$NS_Y" || return 1
		ics_unload || { fail "cycle $i: rmmod after netns deletion"; return 1; }
	done
	info "$CYCLES_TRAFFIC netns-deleted-while-bound cycles"
}

setup || ics_bail "setup failed"
ics_case "load/unload $CYCLES times without parameters" cycle_plain
ics_case "load/unload $CYCLES times with ifname=icsl0 node_id=1" cycle_bound
ics_case "unload with two bound instances and traffic, $CYCLES_TRAFFIC times" cycle_traffic
ics_case "delete bound netns then unload, $CYCLES_TRAFFIC times" cycle_netns
ics_case "teardown: netns deleted, module removed, kernel log clean" ics_teardown_check
ktap_finished
