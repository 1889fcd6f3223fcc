#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# overload.sh - what overload may cost, and what it may not: a message a
# sender saw done was taken by its reader, memory stays within the limits
# whoever causes it, and one peer's flood does not fail another's messages.
#
#                 netns ics$$-br: bridge br0
#       +-----------+-----------+-----------+-----------+
#       p1          p2          p3          p4          p5
#       |           |           |           |           |
#   ics$$-m1    ics$$-m2    ics$$-m3    ics$$-m4    ics$$-m5
#   node 1      node 2      node 3      node 4      node 5
#   (eth0, MTU 1500; ics_dev.py drives /dev/ics in each)

. "$(dirname "$0")/lib.sh"

# ics.ko alone: every message here is a /dev/ics file's, and the files take
# any channel (no test service holds one).
ICS_WITH_TEST=0
ics_init setpriv python3 tc
DEV="python3 $ICS_SRC_DIR/ics_dev.py"
PARAMS=/sys/module/ics/parameters
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
M=("")

dev_in() { local ns=$1; shift; in_ns "$ns" $DEV "$@"; }

# The parameter that bounds receive memory (its name, for older modules too).
rx_mem_param() { modinfo -p "$ICS_KO" | sed -n 's/^\(rx_mem_max\|reasm_mem_max\):.*/\1/p'; }

# percpu KiB now (/proc/meminfo Percpu).
percpu() { sed -n 's/^Percpu: *\([0-9]*\) kB/\1/p' /proc/meminfo; }

# netns_percpu N: percpu KiB that N new network namespaces took.
netns_percpu()
{
	local n=$1 i p0 p1
	p0=$(percpu)
	for ((i = 0; i < n; i++)); do
		ip netns add "$ICS_PFX-pc$i" || return 1
	done
	p1=$(percpu)
	for ((i = 0; i < n; i++)); do
		ip netns del "$ICS_PFX-pc$i"
	done
	echo $((p1 - p0))
}

# An instance that is never bound costs no per-CPU memory: 64 namespaces
# take as much percpu memory with ics loaded as without (within 128 KiB,
# the allocator's granularity), where a 10 KiB per-CPU table each would
# be 640 KiB per possible CPU.
percpu_unbound()
{
	local without with
	ics_loaded && { ics_unload || return 1; }
	without=$(netns_percpu 64) || return 1
	ics_load heartbeat_ms=$ICS_HB_LONG || return 1
	with=$(netns_percpu 64) || return 1
	echo "# 64 namespaces: percpu +$without KiB without ics, +$with KiB with it" \
		"($(cat /sys/devices/system/cpu/possible) possible CPUs)"
	[ $((with - without)) -le 128 ] ||
		fail "64 unbound instances took $((with - without)) KiB of percpu memory"
}

setup()
{
	local n
	ics_loaded && { ics_unload || return 1; }
	# On a kernel ICS_TIMEOUT_SCALE calls slow (KASAN and lockdep under
	# TCG, 10), one vCPU serving five members stalls longer than the
	# default link_timeout_ms (1.5 s): that is the machine, not the link.
	ics_load heartbeat_ms=$ICS_HB_LONG user_gid=65534 "$(rx_mem_param)=$((64 << 20))" \
		link_timeout_ms="$(ics_slow_ms 1500)" &&
		bridge_add 5 && bridge_bind 5 || return 1
	for ((n = 1; n <= 5; n++)); do
		M[n]=${ICS_MEMBER_NS[n]}
	done
}

# A reader that takes a message every 2 ms with a 64 KiB buffer, and three
# members writing 200 messages each (8 B to 64 KiB) at it: they pause its
# channel, and the messages in flight when they learn it overflow the
# buffer. Every message a sender saw done must be read, once, in order,
# whole, and nothing dropped; none may fail.
slow_reader()
{
	local d=$ICS_TMP/slow n pids=() p done=0 drops0 held0 held rc=0
	rm -rf "$d" && mkdir "$d" || return 1
	drops0=$(stat_get "${M[1]}" dev_rx_drops)
	held0=$(stat_get "${M[1]}" rx_held 2>/dev/null || echo 0)
	dev_in "${M[1]}" slowread "$(ch_id TEST)" $((64 << 10)) 2 "$d/read" "$d/mark" "$d/go" &
	local reader=$!
	wait_file 30 "reader bound" "$d/mark" || { bg_stop $reader; return 1; }
	for n in 2 3 4; do
		dev_in "${M[n]}" seqsend 1 "$(ch_id TEST)" 200 "$d/sent.$n" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || rc=1
	done
	for n in 2 3 4; do
		done=$((done + $(jget 'j["done"]' < "$d/sent.$n")))
	done
	echo $done > "$d/go"
	wait $reader || rc=1
	python3 - "$d" <<'EOF' || rc=1
import json, sys
d = sys.argv[1]
r = json.load(open(d + "/read"))
errs = list(r["bad"])
for n in (2, 3, 4):
    s = json.load(open("%s/sent.%d" % (d, n)))
    got = r["got"].get(str(n), [])
    print("# node %d: %d sent, %d done, %d failed; the reader read %d"
          % (n, s["sent"], s["done"], s["failed"], len(got)))
    if s["failed"] or s["done"] != s["sent"]:
        errs.append("node %d: %d of %d done, %d failed (error %d)"
                    % (n, s["done"], s["sent"], s["failed"], s["last_error"]))
    if got[:s["done"]] != list(range(s["done"])):
        miss = sorted(set(range(s["done"])) - set(got))
        errs.append("node %d: read %d messages, not 0..%d in order once each; missing %s"
                    % (n, len(got), s["done"] - 1, miss[:10]))
if r["stats"]["rx_dropped"]:
    errs.append("the reader's file dropped %d messages" % r["stats"]["rx_dropped"])
for e in errs:
    print("# FAIL: " + e)
sys.exit(1 if errs else 0)
EOF
	assert_eq "node 1 dev_rx_drops" "$drops0" "$(stat_get "${M[1]}" dev_rx_drops)" || rc=1
	# the case is about messages past the buffer: there must have been some
	held=$(($(stat_get "${M[1]}" rx_held) - held0))
	echo "# node 1 held $held messages its reader refused"
	[ $held -gt 0 ] || { fail "the reader never refused a message"; rc=1; }
	return $rc
}

# mem_avail: MemAvailable in KiB.
mem_avail() { sed -n 's/^MemAvailable: *\([0-9]*\) kB/\1/p' /proc/meminfo; }

# rss PID...: their resident memory, KiB.
rss()
{
	local p v s=0
	for p in "$@"; do
		v=$(awk '/^VmRSS:/ {print $2}' /proc/"$p"/status 2>/dev/null)
		s=$((s + ${v:-0}))
	done
	echo $s
}

# Thirty-two threads of a member of user_gid (not root) write 16 MiB
# messages at a reader that reads nothing: two fill the channel's queue,
# and the other writers wait for room. Waiting must cost nothing: the
# kernel's memory grows by at most the channel's queue (32 MiB) and the
# messages the reader holds or ics holds for it (two, 32 MiB), plus
# 32 MiB; not by a message per waiting writer.
stopped_reader()
{
	# the writers are not root: a directory of their own, open to them
	local d=/tmp/$ICS_PFX-stop avail0 avail1 kib w r rc=0
	rm -rf "$d" && mkdir -m 777 "$d" || return 1
	dev_in "${M[2]}" stall 1 "$(ch_id TEST)" $((1 << 20)) "$d/mark" "$d/never" &
	r=$!
	wait_file 30 "reader bound" "$d/mark" || { bg_stop $r; return 1; }
	sync
	avail0=$(mem_avail)
	in_ns "${M[1]}" "${NOBODY[@]}" $DEV memwriters 2 "$(ch_id TEST)" 32 $((16 << 20)) "$d/w" &
	w=$!
	# the queue is full once the returned writes stop growing for 5 s
	wait_file 60 "writers started" "$d/w" || rc=1
	local last=-1 now same=0 deadline
	deadline=$(ics_deadline 120)
	while [ $rc = 0 ] && [ $same -lt 50 ] && [ $SECONDS -lt "$deadline" ]; do
		now=$(jget 'j["returned"]' < "$d/w" 2>/dev/null)
		[ "$now" = "$last" ] && same=$((same + 1)) || same=0
		last=$now
		sleep 0.1
	done
	avail1=$(mem_avail)
	kib=$((avail0 - avail1 - $(rss $(pgrep -f "ics_dev.py memwriters") $(pgrep -f "ics_dev.py stall"))))
	echo "# $last writes returned; kernel memory +$((kib >> 10)) MiB with 32 writers waiting"
	bg_stop $w $r
	rm -rf "$d"
	[ $rc = 0 ] || return 1
	[ "$last" -ge 2 ] || { fail "only $last writes returned"; return 1; }
	[ $kib -le $((96 << 10)) ] || fail "waiting writers hold $((kib >> 10)) MiB of kernel memory"
}

# cgroup2 with the memory controller at /sys/fs/cgroup, or skip.
cgroup_mem()
{
	local cg=/sys/fs/cgroup
	[ -e $cg/cgroup.controllers ] || mount -t cgroup2 none $cg 2>/dev/null ||
		{ echo "# cannot mount cgroup2"; return 4; }
	grep -qw memory $cg/cgroup.controllers || { echo "# no memory controller"; return 4; }
	echo +memory > $cg/cgroup.subtree_control 2>/dev/null
	grep -qw memory $cg/cgroup.subtree_control || { echo "# cannot enable the memory controller"; return 4; }
}

# A writer in a memory cgroup with room for 8 MiB more: a 16 MiB message
# is charged to it, and the write fails with ENOMEM (the writer is not
# OOM-killed, and the message is not sent).
memcg_write()
{
	local d=$ICS_TMP/cg cg=/sys/fs/cgroup/$ICS_PFX r w cur rc=0
	cgroup_mem || return
	rm -rf "$d" && mkdir "$d" && mkdir $cg || return 1
	dev_in "${M[3]}" stall 1 "$(ch_id TEST)" $((1 << 20)) "$d/mark" "$d/never" &
	r=$!
	wait_file 30 "reader bound" "$d/mark" || { bg_stop $r; rmdir $cg; return 1; }
	sh -c "echo \$\$ > $cg/cgroup.procs && exec nsenter --net=$ICS_NETNS_DIR/${M[1]} $DEV memcg 3 $(ch_id TEST) $((16 << 20)) $d/ready $d/go $d/out" &
	w=$!
	wait_file 30 "writer ready" "$d/ready" || rc=1
	cur=$(cat $cg/memory.current)
	echo $((cur + (8 << 20))) > $cg/memory.max || rc=1
	echo 0 > "$d/go"
	wait $w || rc=1
	bg_stop $r
	echo "# writer in a cgroup of $((cur >> 20)) + 8 MiB: $(cat "$d/out" 2>/dev/null); $(tr '\n' ' ' < $cg/memory.events)"
	[ $rc = 0 ] || { rmdir $cg; return 1; }
	assert_eq "16 MiB writes taken, errno" "0 ENOMEM" \
		"$(jget '"%d %s" % (j["taken"], j["errno"])' < "$d/out")" || rc=1
	assert_eq "OOM kills in the writer's cgroup" 0 "$(sed -n 's/^oom_kill //p' $cg/memory.events)" || rc=1
	rmdir $cg
	return $rc
}

# ICS_IOC_SET_RCVBUF: a member of user_gid may not raise its buffer past
# the default (32 MiB), as net.core.rmem_max bounds sockets; an
# administrator may, up to 1 GiB.
rcvbuf_cap()
{
	in_ns "${M[1]}" "${NOBODY[@]}" $DEV rcvbuf $((1 << 20)) 0 || return 1
	in_ns "${M[1]}" "${NOBODY[@]}" $DEV rcvbuf $((32 << 20)) 0 || return 1
	in_ns "${M[1]}" "${NOBODY[@]}" $DEV rcvbuf $((32 << 20 | 1)) 1 || return 1	# EPERM
	in_ns "${M[1]}" "${NOBODY[@]}" $DEV rcvbuf $((1 << 30)) 1 || return 1
	dev_in "${M[1]}" rcvbuf $((1 << 30)) 0
}

# Two members write 16 MiB messages to node 1 on every channel but CNX,
# more than node 1 may hold in partial messages at once (64 MiB). A third
# member writes 300 messages (up to 64 KiB, 45 frames each) meanwhile:
# every one must be done, none failed. The flood waits for room; it must
# not fail either, every message done.
flood()
{
	local d=$ICS_TMP/flood pids=() p n rc=0
	rm -rf "$d" && mkdir "$d" || return 1
	for n in 2 3; do
		dev_in "${M[n]}" chanflood 1 1 $((16 << 20)) "$d/flood.$n" &
		pids+=($!)
	done
	sleep 1
	dev_in "${M[4]}" seqsend 1 "$(ch_id DLM)" 300 "$d/innocent" || rc=1
	for p in "${pids[@]}"; do
		wait "$p" || rc=1
	done
	[ $rc = 0 ] || return 1
	python3 - "$d" <<'EOF2' || rc=1
import json, sys
d = sys.argv[1]
errs = []
s = json.load(open(d + "/innocent"))
print("# node 4: %d sent, %d done, %d failed during the flood" % (s["sent"], s["done"], s["failed"]))
if s["failed"] or s["done"] != s["sent"]:
    errs.append("node 4: %d of %d done, %d failed (error %d)"
                % (s["done"], s["sent"], s["failed"], s["last_error"]))
for n in (2, 3):
    f = json.load(open("%s/flood.%d" % (d, n)))
    sent = sum(c["sent"] for c in f.values())
    done = sum(c["done"] for c in f.values())
    failed = sum(c["failed"] for c in f.values())
    print("# node %d: %d messages of 16 MiB sent, %d done, %d failed" % (n, sent, done, failed))
    if failed or done != sent:
        errs.append("node %d: flood %d of %d done, %d failed" % (n, done, sent, failed))
for e in errs:
    print("# FAIL: " + e)
sys.exit(1 if errs else 0)
EOF2
	assert_eq "node 4's link at node 1: messages failed" 0 "$(link_get "${M[4]}" 1 msgs_failed)" || rc=1
	return $rc
}

# A member that gave up a large message half sent (its link to node 1
# timed out: it failed the message, began a new session and has nothing
# more to send) and goes on with its heartbeats. With reasm_mem_max at its
# least (32 MiB: one 16 MiB message at MTU 1500, not two), the partial
# message's reservation must not hold another member's 16 MiB message
# back for good: it goes once it has had no fragment for
# reasm_timeout_ms while the other's waits. Module reloaded with the
# default heartbeat, which runs that check.
frames_from() { [ "$(link_get "${M[1]}" "$1" rx_frames)" -ge "$2" ] && echo yes; }

abandoned()
{
	local d=$ICS_TMP/abandoned rc=0 t0 pid ch
	rm -rf "$d" && mkdir "$d" || return 1
	ch=$(ch_id TEST)
	ics_unload || return 1
	ics_load "$(rx_mem_param)=$((32 << 20))" link_timeout_ms="$(ics_slow_ms 1500)" &&
		bridge_bind 3 || return 1
	t0=$(stat_get "${M[1]}" reasm_timeout)
	# node 2's frames slowed, so that its message is cut mid-way however
	# slowly the steps below go: 16 MiB take over a minute at 2 Mbit/s
	tc -n "${M[2]}" qdisc add dev eth0 root netem rate 2mbit || return 1
	dev_in "${M[2]}" big 1 "$ch" $((16 << 20)) "$d/s" &
	pid=$!
	wait_eq 60 yes "100 frames of node 2's at node 1" frames_from 2 100 || rc=1
	# then its DATA frames no more: its link times out. Classic BPF
	# (cls_bpf is in every kernel the suite runs on): ethertype 0x88b5
	# at byte 12, frame type 1 (ICS_FT_DATA) at 15; -1 matches.
	tc -n "${M[2]}" qdisc add dev eth0 clsact &&
		tc -n "${M[2]}" filter add dev eth0 egress pref 1 bpf bytecode \
			"6,40 0 0 12,21 0 3 34997,48 0 0 15,21 0 1 1,6 0 0 4294967295,6 0 0 0" \
			action drop || rc=1
	wait "$pid"
	assert_eq "node 2's message, its DATA frames dropped" ETIMEDOUT "$(cat "$d/s" 2>/dev/null)" ||
		rc=1
	tc -n "${M[2]}" qdisc del dev eth0 clsact
	tc -n "${M[2]}" qdisc del dev eth0 root
	if [ $rc = 0 ]; then
		timeout $((120 * ICS_SCALE)) nsenter --net="$ICS_NETNS_DIR/${M[3]}" \
			$DEV big 1 "$ch" $((16 << 20)) "$d/q"
		assert_eq "node 3's 16 MiB message" done "$(cat "$d/q" 2>/dev/null)" || rc=1
	fi
	echo "# node 1: reasm_timeout +$(($(stat_get "${M[1]}" reasm_timeout) - t0))," \
		"reasm_nomem $(stat_get "${M[1]}" reasm_nomem)"
	return $rc
}

case_add "64 unbound instances take no per-CPU memory" percpu_unbound
step_add setup
case_add "a slow reader, a small buffer, three writers: every message done is read once, in order" \
	slow_reader
case_add "32 writers of 16 MiB waiting for room hold no memory" stopped_reader
case_add "a writer over its memory cgroup's limit gets ENOMEM, not the OOM killer" memcg_write
case_add "rcvbuf: user_gid members up to 32 MiB, administrators up to 1 GiB" rcvbuf_cap
case_add "two members flood 16 MiB messages on every channel: a third's messages flow" flood
case_add "a large message its sender gave up half sent does not hold another's back" abandoned
case_once "teardown: netns deleted, module removed, kernel log clean" ics_teardown_check
cases_run
