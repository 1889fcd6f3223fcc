#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dev_api.sh - the user message API, /dev/ics (Documentation/user-api.rst),
# asking a peer's test service (ics_test.ko) for answers and sinks in its
# protocol through it, and icsperf, whose counts must equal the kernel's
# counters and the test service's.
#
#   netns ics$$-a                          netns ics$$-b
#   +--------------------------+           +--------------------------+
#   | ics node 1               |           | ics node 2               |
#   |  /dev/ics files          |           |  test service (ics_test) |
#   |  (ics_dev.py, icsperf)   |           |  on TEST, /dev/ics       |
#   |                          |           |  readers, or an          |
#   |                          |           |  `icsperf server`        |
#   |  veth0                   +---veth----+  veth0                   |
#   +--------------------------+           +--------------------------+
#
# A channel has one receiver: the test service is attached to no channel
# at bind (ICS_ATTACH=none), and the steps between the groups of cases
# attach it where they need it: on node 2's TEST for the requests of the
# first cases, nowhere for the /dev/ics readers of node 2 after them, on
# TEST again for icsperf --peer kernel, then on KCH and CFSR (node 1:
# CFSR) for icsperf --peer kernel -P 2 (both streams on KCH) and -k while
# an icsperf server holds node 2's TEST.

ICS_ATTACH=none
. "$(dirname "$0")/lib.sh"

ics_init tc setpriv
command -v icsperf >/dev/null || ics_skip_all "icsperf not in PATH (make -C user)"
DEV="python3 $ICS_SRC_DIR/ics_dev.py"
PARAMS=/sys/module/ics/parameters

dev_in() { local ns=$1; shift; in_ns "$ns" $DEV "$@"; }

# handler_wait_ms: the default, scaled on a slow kernel, where a next
# reader takes longer to bind
WAIT_MS=$((3000 * ICS_SCALE))

setup()
{
	pair_setup heartbeat_ms=$ICS_HB_LONG handler_wait_ms=$WAIT_MS && [ -c /dev/ics ] ||
		{ fail "/dev/ics missing after loading ics"; return 1; }
}

# tsvc_mark CH: note node 2's test-service counters on channel CH;
# tsvc_grew CH KEY=N...: once every message node 2's test service took is
# counted, each KEY (rx_msgs, rx_ok, rx_bad, sinked, answers, answer_drops,
# refused) grew by exactly N since the mark.
tsvc_mark() { tsvc_get "$NS_B" "j[\"channels\"].get(\"$1\", {})" > "$ICS_TMP/tsvc.$1"; }

tsvc_grew()
{
	local ch=$1 got
	shift
	wait_eq 60 0 "node 2: messages the test service took, not counted yet" \
		tsvc_get "$NS_B" 'j["queued"]' || return 1
	got=$(tsvc_get "$NS_B" "j[\"channels\"].get(\"$ch\", {})" | python3 -c '
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(sys.stdin)
print(" ".join("%s=%d" % (k, b.get(k, 0) - a.get(k, 0)) for k in
               (kv.split("=")[0] for kv in sys.argv[2:])))' "$ICS_TMP/tsvc.$ch" "$@")
	assert_eq "node 2's test service on $ch: counters grew by" "$*" "$got"
}

# Every refused call is refused before anything is sent: node 2's test
# service took exactly the two requests that went, an ECHO it answered and
# a 16 MiB SINK.
errors()
{
	tsvc_mark TEST || return 1
	dev_in "$NS_A" errors 2 9 || return 1
	tsvc_grew TEST rx_msgs=2 rx_ok=2 rx_bad=0 sinked=1 answers=1 answer_drops=0
}

# TEST opens to the group user_gid; other channels stay CAP_NET_ADMIN's,
# judged by the credentials the file was opened with.
perms()
{
	local nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
	local tryas=(in_ns "$NS_A" "${nobody[@]}" $DEV bind)
	assert_eq "user_gid default" -1 "$(cat $PARAMS/user_gid)" || return 1
	"${tryas[@]}" 14 1 || return 1			# EPERM: no group configured
	echo 65534 > $PARAMS/user_gid || return 1
	"${tryas[@]}" 14 0 || { echo -1 > $PARAMS/user_gid; return 1; }
	"${tryas[@]}" 3 1 || { echo -1 > $PARAMS/user_gid; return 1; }	# CFS
	echo -1 > $PARAMS/user_gid
	"${tryas[@]}" 14 1 || return 1
	dev_in "$NS_A" bind 3 0	|| return 1		# root: any channel
	# the opener's rights count, not the binder's: a file nobody opened
	# stays nobody's in root's hands (EPERM on CFS), one root opened may
	# be bound by nobody
	dev_in "$NS_A" passfd nobody 3 1 || return 1
	dev_in "$NS_A" passfd root 3 0
}

# POLLIN with the answer of node 2's test service to an ECHO queued.
polls()
{
	tsvc_mark TEST || return 1
	dev_in "$NS_A" poll 2 || return 1
	tsvc_grew TEST rx_msgs=1 rx_ok=1 rx_bad=0 answers=1
}

# ICS_DEV_BIND_BATCH: one read takes every queued message (ten answers of
# node 2's test service, 16 to 4096 bytes) that fits, each record aligned
# to 8 bytes with zero padding, in order; the first must fit (EMSGSIZE),
# and nothing queued is EAGAIN.
batch()
{
	tsvc_mark TEST || return 1
	dev_in "$NS_A" batch 2 || return 1
	tsvc_grew TEST rx_msgs=10 rx_ok=10 rx_bad=0 answers=10 answer_drops=0
}

# Frames lost (netem loss 100%): SINK requests to node 2's test service
# queue up to chan_queue_max, then EAGAIN and no POLLOUT; once frames flow
# again, POLLOUT. Whatever node 2 took verified and was sinked, unanswered.
fill()
{
	local rc took queued=0
	tsvc_mark TEST || return 1
	tc -n "$NS_A" qdisc add dev veth0 root netem loss 100% || return 1
	local out="" pid
	coproc FILL { in_ns "$NS_A" $DEV fill 2 2>&1; }
	pid=$FILL_PID	# bash unsets FILL_PID when the coprocess ends
	while read -r -t 120 -u "${FILL[0]}" out; do
		echo "$out"
		case $out in "# "*" messages queued before EAGAIN") queued=${out#\# } queued=${queued%% *} ;; esac
		[ "$out" = filled ] && break
	done
	tc -n "$NS_A" qdisc del dev veth0 root
	[ "$out" = filled ] || { fail "no EAGAIN reported"; kill "$pid"; return 1; }
	echo go >&"${FILL[1]}"
	while read -r -u "${FILL[0]}" out; do echo "$out"; done
	wait "$pid"
	rc=$?
	assert_eq "fill exit" 0 $rc || return 1
	# Every message queued was delivered (retransmitted) or failed, none lost.
	wait_eq 60 0 "messages still queued to node 2" link_get "$NS_A" 2 queued_msgs || return 1
	wait_eq 60 0 "node 2: messages the test service took, not counted yet" \
		tsvc_get "$NS_B" 'j["queued"]' || return 1
	took=$(($(tsvc_get "$NS_B" 'j["channels"].get("TEST", {}).get("rx_msgs", 0)') - \
		$(jget 'j.get("rx_msgs", 0)' < "$ICS_TMP/tsvc.TEST")))
	echo "# node 2's test service took $took of the $((queued + 1)) SINK requests written"
	[ "$took" -gt 0 ] && [ "$took" -le $((queued + 1)) ] ||
		{ fail "node 2's test service took $took of $((queued + 1))"; return 1; }
	tsvc_grew TEST rx_msgs="$took" rx_ok="$took" rx_bad=0 sinked="$took" answers=0
}

# queue_run MODE: three answers of node 2's test service wait on a file;
# then MODE happens.
queue_run()
{
	local mode=$1 mark=$ICS_TMP/queued out pid
	tsvc_mark TEST || return 1
	rm -f "$mark"
	coproc Q { in_ns "$NS_A" $DEV queue 2 3 "$mark" 2>&1; }
	pid=$Q_PID
	wait_file 60 "three answers queued" $mark ||
		{ kill "$pid"; return 1; }
	tsvc_grew TEST rx_msgs=3 rx_ok=3 rx_bad=0 answers=3 || { kill "$pid"; return 1; }
	if [ "$mode" = read ]; then
		# The peer leaves before they are read: what arrived stays.
		out=$(in_ns "$NS_B" icsctl unbind 2>&1) || { fail "unbind node 2: $out"; return 1; }
		wait_eq 30 left "node 2 as node 1 sees it" icstat_get "$NS_A" members \
			'next(m for m in j["members"] if m["node"] == 2)' state || return 1
	fi
	echo "$mode" >&"${Q[1]}"
	while read -r -u "${Q[0]}" out; do echo "$out"; done
	wait "$pid"
}

peer_left() { queue_run read; }

closed()
{
	local before
	ics_bind "$NS_B" veth0 2 && ics_model reachable 30 "$NS_A:2" "$NS_B:1" || return 1
	before=$(stat_get "$NS_A" dev_close_drops)
	queue_run close || return 1
	assert_eq "dev_close_drops" $((before + 3)) "$(stat_get "$NS_A" dev_close_drops)"
}

# data_through_netem SET N NETEM...: N messages of ics_dev.py's size SET
# from node 1 to node 2 through netem NETEM on node 1's veth; fails unless
# every one arrives, byte for byte and in order. NETEM_DROPS: the frames
# netem dropped (its loss, and its queue when full).
data_through_netem()
{
	local set=$1 n=$2 mark=$ICS_TMP/data.ready pid rc
	shift 2
	rm -f "$mark"
	in_ns "$NS_B" $DEV data-recv 1 "$n" "$set" "$mark" &
	pid=$!
	wait_file 30 "receiver bound" $mark || { kill "$pid"; return 1; }
	tc -n "$NS_A" qdisc add dev veth0 root netem "$@" || { kill "$pid"; return 1; }
	dev_in "$NS_A" data-send 2 "$n" "$set"
	rc=$?
	wait "$pid" || rc=1
	NETEM_DROPS=$(tc -n "$NS_A" -s qdisc show dev veth0 | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p')
	if [ $rc != 0 ]; then
		# Where the link stood when it failed: both ends' state.
		echo "# netem $*: $NETEM_DROPS dropped; links at the failure:"
		in_ns "$NS_A" icstat -j links 2>&1 | sed 's/^/# node 1: /'
		in_ns "$NS_B" icstat -j links 2>&1 | sed 's/^/# node 2: /'
	fi
	tc -n "$NS_A" qdisc del dev veth0 root
	return $rc
}

# A user's bytes (not the test pattern) at every size either side of the
# copybreak and of page and frame boundaries, up to 1 MiB, arrive exactly,
# in order, through loss, reordering, duplication and corruption on the
# wire: the frames of messages over 2 KiB carry the message's pages,
# and both ends checksum them where they lie.
data_exact()
{
	local bad rtx
	bad=$(stat_get "$NS_B" rx_bad_check)
	rtx=$(stat_get "$NS_A" tx_retransmits)
	data_through_netem mixed 60 delay 1ms reorder 25% 50% loss 5% duplicate 5% corrupt 1% ||
		return 1
	# The faults happened: corrupt frames refused by the CRC, losses repaired.
	[ "$(stat_get "$NS_B" rx_bad_check)" -gt "$bad" ] || { fail "no frame failed its CRC"; return 1; }
	[ "$(stat_get "$NS_A" tx_retransmits)" -gt "$rtx" ] || fail "nothing was retransmitted"
}

# Small messages written faster than a delayed, lossy wire takes them
# queue up and travel several to a frame (bundles): they still arrive
# exactly and in order, through loss, reordering and duplication; bundles
# were sent, each carries at least two messages, and the receiver took
# exactly the bundled messages the sender sent (each bundle once). The
# delay (200 ms) lets a window (64 KiB, 46 frames at MTU 1500) carry 230
# frames a second: a writer slower than that never queues, and with 5 ms
# none bundled under the debug kernel.
bundle()
{
	local tb0 tm0 rb0 rm0 tb tm rb rmsgs
	tb0=$(stat_get "$NS_A" tx_bundles)
	tm0=$(stat_get "$NS_A" tx_bundled)
	rb0=$(stat_get "$NS_B" rx_bundles)
	rm0=$(stat_get "$NS_B" rx_bundled)
	data_through_netem small 1000 delay 200ms reorder 25% 50% loss 3% duplicate 3% || return 1
	tb=$(($(stat_get "$NS_A" tx_bundles) - tb0))
	tm=$(($(stat_get "$NS_A" tx_bundled) - tm0))
	rb=$(($(stat_get "$NS_B" rx_bundles) - rb0))
	rmsgs=$(($(stat_get "$NS_B" rx_bundled) - rm0))
	echo "# bundles: $tb sent carrying $tm messages, $rb received carrying $rmsgs"
	[ "$tb" -gt 0 ] || { fail "no bundle was sent"; return 1; }
	[ "$tm" -ge $((2 * tb)) ] || { fail "$tb bundles carry only $tm messages"; return 1; }
	assert_eq "bundles and their messages received = sent" "$tb $tm" "$rb $rmsgs"
}

# A path of 1 Mbit/s (netem rate): 64 KiB, the least window on a fast
# path, would queue there for half a second, longer than the RTO waits.
# Small messages still arrive exactly, and most frames go once (at most
# one resent for five sent): through loss alone, and with reordering and
# duplication too, where netem's reordered frames skip its queue and
# arrive in a fraction of the others' time; netem's queue (1000 frames)
# never fills: it drops no more than its 3 % loss explains (at most one
# frame in ten). Before the window left its least on such a path and the
# repairs took RTT samples and kept to what the ACKs said arrived, the
# first run resent 1654 frames of 1659 and stalled, the second resent
# 45 000 for 5 600 sent and netem dropped 41 000. Before the path's speed
# was judged by what it delivered, not by the RTT samples of frames that
# overtook the queue, and a hole went fast only once, the second run
# resent up to 507 of 832 frames, and in 2 runs of 16 the holes' copies
# queued behind each other past link_timeout_ms: every message failed.
slow_path_run()
{
	local f0 r0
	f0=$(stat_get "$NS_A" tx_frames)
	r0=$(stat_get "$NS_A" tx_retransmits)
	data_through_netem small 1000 "$@" || return 1
	frames=$(($(stat_get "$NS_A" tx_frames) - f0))
	rtx=$(($(stat_get "$NS_A" tx_retransmits) - r0))
	echo "# netem $*: $frames frames sent, $rtx resent, ${NETEM_DROPS:-?} dropped by netem"
	[ -n "$NETEM_DROPS" ] || { fail "no drop count from tc -s"; return 1; }
}

slow_path()
{
	local frames rtx
	slow_path_run delay 5ms rate 1mbit loss 3% || return 1
	[ $((5 * rtx)) -le "$frames" ] || { fail "$rtx of $frames frames resent"; return 1; }
	slow_path_run delay 5ms rate 1mbit reorder 25% 50% loss 3% duplicate 3% || return 1
	[ $((5 * rtx)) -le "$frames" ] || { fail "$rtx of $frames frames resent"; return 1; }
	[ $((10 * NETEM_DROPS)) -le "$frames" ] ||
		{ fail "netem dropped $NETEM_DROPS of $frames frames"; return 1; }
}

# The reader of held and held_big (ics_dev.py hold) on node 2. hold_start
# N SET RCVBUF binds it (HOLD_P its pid) and notes node 2's dev_rx_drops;
# hold_read has it read everything, echoes its output (the "# held:" line
# also into HELD_LINE) and checks that node 2 dropped nothing.
hold_start()
{
	local mark=$ICS_TMP/hold.ready
	HOLD_D0=$(stat_get "$NS_B" dev_rx_drops)
	rm -f "$mark"
	coproc HOLD { in_ns "$NS_B" $DEV hold 1 "$1" "$2" "$3" "$mark" 2>&1; }
	HOLD_P=$HOLD_PID	# bash unsets HOLD_PID when the coprocess ends
	wait_file 30 "reader bound" "$mark" || { kill "$HOLD_P"; return 1; }
}

hold_read()
{
	local out
	HELD_LINE=
	echo read >&"${HOLD[1]}"
	while read -r -u "${HOLD[0]}" out; do
		echo "$out"
		case $out in "# held:"*) HELD_LINE=$out ;; esac
	done
	wait "$HOLD_P" || return 1
	assert_eq "messages dropped on node 2" "$HOLD_D0" "$(stat_get "$NS_B" dev_rx_drops)"
}

# Flow control: a reader that stops reading pauses TEST once half its
# rcvbuf (8 MiB) is queued. Node 1 then holds the rest: its link shows TEST
# paused, messages queued and none in flight, while another channel still
# gets through. Nothing is dropped; once the reader reads (the file still
# open: the held messages come only if reading resumed the channel), every
# message arrives, exactly and in order, and node 1's queue empties.
held()
{
	local n=6000 bit pid spid p0 t0 q
	bit=$((1 << $(ch_id TEST)))
	p0=$(stat_get "$NS_B" rx_pauses)
	t0=$(stat_get "$NS_A" tx_pauses)
	hold_start $n small $((8 << 20)) || return 1
	pid=$HOLD_P
	dev_in "$NS_A" data-send 2 $n small &
	spid=$!
	wait_eq 60 $bit "channels node 2 paused, as node 1 sees them" \
		link_get "$NS_A" 2 peer_paused || { kill "$pid" "$spid"; return 1; }
	wait "$spid" || { fail "data-send: every write should be queued"; kill "$pid"; return 1; }
	wait_eq 30 0 "frames in flight to node 2 while TEST is paused" \
		link_get "$NS_A" 2 inflight || { kill "$pid"; return 1; }
	q=$(link_get "$NS_A" 2 queued_msgs)
	echo "# node 1 holds $q of $n messages"
	[ "$q" -gt 0 ] || { fail "node 1 holds nothing"; kill "$pid"; return 1; }
	send_json "$NS_A" 2 CFS 1000 50 "$ICS_TMP/cfs.json" --wait ||
		{ fail "CFS while TEST is paused: $(cat "$ICS_TMP/cfs.json.err")"; kill "$pid"; return 1; }
	assert_eq "CFS messages done while TEST is paused" 50 "$(jget 'j["done"]' < "$ICS_TMP/cfs.json")" ||
		{ kill "$pid"; return 1; }
	assert_eq "TEST still held" "$q" "$(link_get "$NS_A" 2 queued_msgs)" || { kill "$pid"; return 1; }
	hold_read || return 1
	wait_eq 60 0 "messages queued to node 2" link_get "$NS_A" 2 queued_msgs || return 1
	wait_eq 30 0 "channels node 2 paused" link_get "$NS_A" 2 peer_paused || return 1
	[ "$(stat_get "$NS_B" rx_pauses)" -gt "$p0" ] || { fail "node 2 counted no pause"; return 1; }
	[ "$(stat_get "$NS_A" tx_pauses)" -gt "$t0" ] || { fail "node 1 counted no pause"; return 1; }
}

# hold_close close|part: the reader of hold_start exits, its messages
# unread, or after it read 70 % of them; HELD_K: how many it took (read,
# or queued and dropped with it, dev_close_drops).
hold_close()
{
	local out r= c0
	c0=$(stat_get "$NS_B" dev_close_drops)
	echo "$1" >&"${HOLD[1]}"
	while read -r -u "${HOLD[0]}" out; do
		echo "$out"
		case $out in "# closed: "*) r=${out#"# closed: "}; r=${r%% *} ;; esac
	done
	wait "$HOLD_P" && [ -n "$r" ] || { fail "the reader did not close as asked"; return 1; }
	HELD_K=$((r + $(stat_get "$NS_B" dev_close_drops) - c0))
}

# reader_left NEXT HOW: a stopped reader exits with messages held for it
# (TEST paused): HOW close, unread; part, once it read enough to resume the
# channel, while what was held is being offered. The channel waits
# handler_wait_ms for the next reader (NEXT 1), which takes every message
# after those the first one took, exactly and in order; none goes
# unclaimed. With no next reader (NEXT 0), once handler_wait_ms is over,
# the channel resumes and the rest is counted unclaimed, every message
# once: the sender is not held for good.
reader_left_run()
{
	local n=6000 d=$ICS_TMP/left next=$1 bit u0 spid np first
	bit=$((1 << $(ch_id TEST)))
	rm -rf "$d" && mkdir "$d" || return 1
	u0=$(chan_get "$NS_B" TEST rx_unclaimed)
	hold_start $n small $((8 << 20)) || return 1
	if [ "$next" = 1 ]; then
		dev_in "$NS_B" data-next 1 $n small "$d/mark" "$d/go" > "$d/next.out" 2>&1 &
		np=$!
		wait_file 30 "the next reader started" "$d/mark" || return 1
	fi
	dev_in "$NS_A" data-send 2 $n small &
	spid=$!
	wait_eq 60 $bit "channels node 2 paused, as node 1 sees them" \
		link_get "$NS_A" 2 peer_paused || return 1
	wait "$spid" || { fail "data-send: every write should be queued"; return 1; }
	hold_close "$2" || return 1
	if [ "$next" = 1 ]; then
		touch "$d/go"
		wait "$np" || {
			cat "$d/next.out"
			echo "# node 2 TEST unclaimed grew by $(( $(chan_get "$NS_B" TEST rx_unclaimed) - u0 ))"
			fail "the next reader"
			return 1
		}
		first=$(sed -n 's/^# next: first message \([0-9]*\)$/\1/p' "$d/next.out")
		echo "# the next reader's first message: $first"
		assert_eq "the next reader's first message: the first one the closed reader had not taken" \
			"$HELD_K" "$first" || return 1
		assert_eq "node 2 TEST unclaimed" "$u0" "$(chan_get "$NS_B" TEST rx_unclaimed)" ||
			return 1
	else
		wait_eq 60 $((u0 + n - HELD_K)) "node 2 TEST unclaimed: every message the reader had not taken" \
			chan_get "$NS_B" TEST rx_unclaimed || return 1
	fi
	wait_eq 60 0 "messages queued to node 2" link_get "$NS_A" 2 queued_msgs || return 1
	# none counted twice after all
	[ "$next" = 1 ] || assert_eq "node 2 TEST unclaimed, the sender's queue empty" \
		$((u0 + n - HELD_K)) "$(chan_get "$NS_B" TEST rx_unclaimed)" || return 1
	wait_eq 30 0 "channels node 2 paused" link_get "$NS_A" 2 peer_paused
}

# reload [PARAMS...]: ics.ko and the test service loaded again with PARAMS
# (default: WAIT_MS) and the long heartbeat, both nodes bound, the test
# service attached nowhere.
reload()
{
	ics_unload && ics_load heartbeat_ms=$ICS_HB_LONG "${@:-handler_wait_ms=$WAIT_MS}" &&
		pair_bind
}

# The icsperf server holds /dev/ics open: it goes first.
reload_nowait()
{
	pkill -x icsperf
	reload handler_wait_ms=0
}

# With handler_wait_ms=0 a channel does not wait for a next handler: what
# the reader had not taken is offered to nobody at once, and counted
# unclaimed, each message once.
reader_left_nowait()
{
	assert_eq "handler_wait_ms" 0 "$(cat $PARAMS/handler_wait_ms)" || return 1
	reader_left 0 close
}

reader_left()
{
	local rc=0
	reader_left_run "$@" || rc=1
	reap "ics_dev.py (hold|data-send|data-next)"
	return $rc
}

# A channel the peer paused while nothing of ours was queued on it, with
# the paused channels holding a link_queue_max already (TEST and DLM, as
# in held_run): a writer on it waits for room, and once the peer resumes
# it, gets room at once, though nothing completes meanwhile (the other
# paused channels' readers are stopped); its message is taken.
resume_room_run()
{
	local d=$ICS_TMP/resume k bit q0 sink wp rc=0
	rm -rf "$d" && mkdir "$d" || return 1
	k=$(ch_id KCH)
	bit=$((1 << k))
	paused_fill "$d" TEST DLM || return 1
	# KCH's reader: 64 KiB, so that one message of 48 KiB, taken, pauses it
	dev_in "$NS_B" sink "$k" $((64 << 10)) "$d/mark.K" "$d/go.K" &
	sink=$!
	wait_file 30 "KCH reader bound" "$d/mark.K" || return 1
	dev_in "$NS_A" big 2 "$k" $((48 << 10)) "$d/k1" || return 1
	assert_eq "KCH's first message" done "$(cat "$d/k1")" || return 1
	wait_eq 60 $bit "node 2 paused KCH, as node 1 sees it" paused_of "$NS_A" 2 $bit || return 1
	q0=$(link_get "$NS_A" 2 queued_bytes)
	timeout $((60 * ICS_SCALE)) nsenter --net="$ICS_NETNS_DIR/$NS_A" \
		$DEV big 2 "$k" $((1 << 20)) "$d/k2" &
	wp=$!
	wait_eq 30 1 "the 1 MiB writer in write(2)" \
		sh -c "cut -d' ' -f1 /proc/\$(pgrep -n -f '^python3 .*ics_dev.py big 2 $k 1048576')/syscall" || rc=1
	assert_eq "bytes node 1 holds for node 2, the writer waiting for room" "$q0" \
		"$(link_get "$NS_A" 2 queued_bytes)" || rc=1
	# the reader takes both: KCH resumes after the first
	echo 2 > "$d/go.K.tmp" && mv "$d/go.K.tmp" "$d/go.K"
	wait "$wp"
	assert_eq "KCH's 1 MiB message, once the channel resumed" done "$(cat "$d/k2" 2>/dev/null)" ||
		rc=1
	wait "$sink" || rc=1
	paused_release "$d" TEST DLM || rc=1
	return $rc
}

resume_room()
{
	local rc=0
	resume_room_run || rc=1
	# after a failure, no reader or writer left bound for the cases after
	reap "ics_dev.py (stall|flood|sink|big)"
	return $rc
}

# A synchronous write waiting for a stopped reader, stopped and continued
# itself (SIGSTOP, SIGCONT: no handler runs) returns EINPROGRESS, its
# message still queued, and that message arrives once: a write the kernel
# restarted would queue it again as a new message. With a send timeout
# (MS), the same when it runs out.
sync_wait()
{
	local n=300 ms=$1 want=$2 rc=0 mark=$ICS_TMP/syncsig.pid out=$ICS_TMP/syncsig.out r0 wpid p
	r0=$(chan_get "$NS_B" TEST rx msgs)
	rm -f "$mark" "$out"
	hold_start $n small $((64 << 10)) || return 1
	dev_in "$NS_A" syncsig 2 $n small "$ms" "$mark" "$out" &
	wpid=$!
	wait_file 60 "the synchronous write begun" "$mark" || rc=1
	p=$(cat "$mark" 2>/dev/null)
	# 1: write(2), where the writer waits for its message's fate
	[ $rc = 0 ] && [ "$ms" = 0 ] && { wait_eq 60 1 "the writer blocked in write(2)" \
		sh -c "cut -d' ' -f1 /proc/$p/syscall" || rc=1; }
	if [ $rc = 0 ] && [ "$ms" = 0 ]; then
		kill -STOP "$p"
		wait_eq 30 T "the writer stopped" sh -c "cut -d' ' -f3 /proc/$p/stat" || rc=1
		kill -CONT "$p"
	fi
	# with a send timeout, the write's end before the reader reads
	[ $rc = 0 ] && [ "$ms" != 0 ] && { wait_file 60 "the synchronous write returned" "$out" ||
		rc=1; }
	hold_read || rc=1
	wait "$wpid" || rc=1
	wait_eq 60 0 "messages queued to node 2" link_get "$NS_A" 2 queued_msgs || rc=1
	assert_eq "what the synchronous write returned" "$want" "$(cat "$out" 2>/dev/null)" || rc=1
	assert_eq "TEST messages node 2 received" $((r0 + n)) "$(chan_get "$NS_B" TEST rx msgs)" ||
		rc=1
	return $rc
}

# What was held for a reader, taken while its sender is down here: node 1
# holds node 2 alive and waits for its word that the messages were taken.
# A reader with a 1-byte buffer queues the first of four messages and
# refuses the rest, the synchronous one last, which node 2 holds (node 2's
# frames are delayed 1 s meanwhile, so that node 1 sends all four before
# it learns of the pause). Then node 1's frames are lost, and node 2 beats
# every 100 ms: it declares node 1 down (node 1 beats hourly, as in the
# whole file, and expects node 2's beats every 100 ms, which still reach
# it). The reader takes the messages while node 1 is down on node 2. Node
# 1 then beats every 100 ms too, its frames pass again, node 2 holds it
# alive again, and the repeated ACK says the messages were taken: the
# synchronous write returns done, with no data frame sent meanwhile.
held_down()
{
	local rc=0 misses
	misses=$(show_get "$NS_B" heartbeat_misses) || return 1
	held_down_run || rc=1
	tc -n "$NS_A" qdisc del dev veth0 root 2>/dev/null
	tc -n "$NS_B" qdisc del dev veth0 root 2>/dev/null
	reap "ics_dev.py (hold|syncsig)"
	pair_heartbeat $ICS_HB_LONG "$misses" || rc=1
	return $rc
}

# pair_heartbeat MS MISSES: both nodes beat every 100 ms until each holds
# the other a member (a node down on the other comes back at once), then
# every MS, allowing MISSES. Meanwhile each allows 100 misses, lest it
# declare the other down while that one's announced interval is not yet
# its new one.
pair_heartbeat()
{
	local ns ms
	for ns in "$NS_A" "$NS_B"; do
		in_ns "$ns" icsctl set misses 100 || return 1
	done
	for ms in 100 "$1"; do
		for ns in "$NS_A" "$NS_B"; do
			in_ns "$ns" icsctl set heartbeat "$ms" || return 1
		done
		wait_eq 60 member "node 1 on node 2" member_get "$NS_B" 1 state &&
			wait_eq 60 member "node 2 on node 1" member_get "$NS_A" 2 state || return 1
	done
	for ns in "$NS_A" "$NS_B"; do
		in_ns "$ns" icsctl set misses "$2" || return 1
	done
}

held_down_state()
{
	info "writer: '$(cat "$1" 2>/dev/null)'; node 1 to 2: queued $(link_get "$NS_A" 2 \
		queued_msgs), failed $(link_get "$NS_A" 2 msgs_failed); node 2: TEST rx" \
		"$(chan_get "$NS_B" TEST rx msgs), rx_held $(stat_get "$NS_B" rx_held)," \
		"node 1 $(member_get "$NS_B" 1 state)"
}

held_down_run()
{
	local n=4 mark=$ICS_TMP/syncsig.pid out=$ICS_TMP/syncsig.out h0 b0 r0 f0 t0 x0 wpid rc=0
	rm -f "$mark" "$out"
	h0=$(stat_get "$NS_B" rx_held)
	r0=$(chan_get "$NS_B" TEST rx msgs)
	f0=$(link_get "$NS_A" 2 msgs_failed)
	hold_start $n small 1 || return 1
	# 1 s, however slow the kernel: under link_timeout_ms (1.5 s), past
	# which node 1 would fail the messages that wait for an ACK
	tc -n "$NS_B" qdisc add dev veth0 root netem delay 1000ms || return 1
	dev_in "$NS_A" syncsig 2 $n small 0 "$mark" "$out" &
	wpid=$!
	wait_eq 60 $((h0 + n - 1)) "messages node 2 holds for the reader" \
		stat_get "$NS_B" rx_held || { held_down_state "$out"; return 1; }
	tc -n "$NS_B" qdisc del dev veth0 root || return 1
	wait_eq 60 0 "frames in flight to node 2" link_get "$NS_A" 2 inflight || return 1
	assert_eq "node 1's messages to node 2 not done (landed)" $((n - 1)) \
		"$(link_get "$NS_A" 2 queued_msgs)" || return 1
	t0=$(link_get "$NS_A" 2 tx_frames)
	x0=$(link_get "$NS_A" 2 retransmits)
	tc -n "$NS_A" qdisc add dev veth0 root netem loss 100% &&
		in_ns "$NS_B" icsctl set heartbeat 100 || return 1
	wait_eq 60 down "node 1 on node 2, its frames lost" member_get "$NS_B" 1 state ||
		return 1
	hold_read || return 1
	# node 2's heartbeats go on meanwhile: a repeat counted while node 1
	# is down would be spent here, unsent
	b0=$(stat_get "$NS_B" hello_tx)
	wait_counter "$NS_B" hello_tx $((b0 + 5)) || return 1
	in_ns "$NS_A" icsctl set heartbeat 100 && tc -n "$NS_A" qdisc del dev veth0 root || return 1
	wait_eq 60 member "node 1 on node 2, heard again" member_get "$NS_B" 1 state || rc=1
	# the writer, blocked for good without the word, is reaped by held_down
	wait_file 60 "the synchronous write returned" "$out" || { held_down_state "$out"; return 1; }
	assert_eq "what the synchronous write returned" done "$(cat "$out" 2>/dev/null)" || rc=1
	wait "$wpid" || rc=1
	assert_eq "node 1's messages to node 2 not done" 0 "$(link_get "$NS_A" 2 queued_msgs)" ||
		rc=1
	assert_eq "node 1's messages to node 2 failed" "$f0" "$(link_get "$NS_A" 2 msgs_failed)" ||
		rc=1
	assert_eq "data frames node 1 sent node 2 since" "$t0" "$(link_get "$NS_A" 2 tx_frames)" ||
		rc=1
	assert_eq "data frames node 1 resent node 2 since" "$x0" "$(link_get "$NS_A" 2 retransmits)" ||
		rc=1
	assert_eq "TEST messages node 2 received" $((r0 + n)) "$(chan_get "$NS_B" TEST rx msgs)" ||
		rc=1
	return $rc
}

# Three messages of 6 MiB to a reader that does not read, with a 16 MiB
# rcvbuf: the first (about 10 MiB of skb memory in 1500-byte frames) pauses
# TEST; the second, begun before node 1 learnt of the pause (frames to
# node 2 are delayed 100 ms, so the first takes long enough for the second
# to be queued behind it), is finished and taken past the buffer; the
# third is held. Then all three, exactly, none dropped.
held_big()
{
	local rc=0
	tc -n "$NS_A" qdisc add dev veth0 root netem delay 100ms || return 1
	held_big_run || rc=1
	tc -n "$NS_A" qdisc del dev veth0 root
	return $rc
}

held_big_run()
{
	local n=3 bit pid
	bit=$((1 << $(ch_id TEST)))
	hold_start $n big $((16 << 20)) || return 1
	pid=$HOLD_P
	# all three fit chan_queue_max: the writes return at once
	dev_in "$NS_A" data-send 2 $n big || { fail "data-send"; kill "$pid"; return 1; }
	wait_eq 60 $bit "channels node 2 paused, as node 1 sees it" \
		link_get "$NS_A" 2 peer_paused || { kill "$pid"; return 1; }
	wait_eq 60 0 "frames in flight to node 2 while TEST is paused" \
		link_get "$NS_A" 2 inflight || { kill "$pid"; return 1; }
	assert_eq "messages node 1 holds" 1 "$(link_get "$NS_A" 2 queued_msgs)" ||
		{ kill "$pid"; return 1; }
	hold_read || return 1
	assert_eq "reader's queue at the pause" \
		"# held: 2 messages queued on the reader, 0 dropped" "$HELD_LINE"
}

# Readers that stop, each on its own channel, hold each channel's queue on
# the sender at chan_queue_max (filled again once paused, so what the
# readers took before the pause does not matter). Two (TEST, DLM): together
# more than link_queue_max leaves for a 256 KiB message, were paused
# channels counted against the link; CFS still flows. Five: the queues
# filled while their channels flowed, then paused, one after another, hold
# no more than twice link_queue_max, what a link may hold; a channel that
# finds no room gets none. Then every reader reads everything, nothing
# dropped, every message acknowledged.
paused_of() { echo $(($(link_get "$1" "$2" peer_paused) & $3)); }	# NS NODE MASK

# paused_fill DIR CHANNEL...: on each channel a reader on node 2 that
# stops (ics_dev.py stall, 4 MiB) and node 1 flooding it: its queue full,
# the channel paused, then topped up. PAUSED_BITS: the channels paused;
# PAUSED_PIDS: the readers and writers, which paused_release lets go.
paused_fill()
{
	local d=$1 ch n
	shift
	PAUSED_BITS=0
	PAUSED_PIDS=()
	for ch in "$@"; do
		dev_in "$NS_B" stall 1 "$(ch_id $ch)" $((4 << 20)) "$d/mark.$ch" "$d/go.$ch" &
		PAUSED_PIDS+=($!)
	done
	for ch in "$@"; do
		wait_file 30 "$ch reader bound" $d/mark.$ch ||
			return 1
		dev_in "$NS_A" flood 2 "$(ch_id $ch)" "$d/n.$ch" "$d/go.$ch" &
		PAUSED_PIDS+=($!)
		wait_file 60 "channel $ch queue full on node 1" $d/n.$ch ||
			return 1
		n=$(cat $d/n.$ch)
		# what its reader's 4 MiB can take pauses nothing: the link had
		# (almost) no room left for the channel
		if [ $((n * ((64 << 10) + 64))) -lt $((2 << 20)) ]; then
			echo "# channel $ch: room on the link for $n messages only"
			mv $d/n.$ch $d/n.$ch.topped
			continue
		fi
		PAUSED_BITS=$((PAUSED_BITS | 1 << $(ch_id $ch)))
		wait_eq 60 $((1 << $(ch_id $ch))) "node 2 paused $ch, as node 1 sees it" \
			paused_of "$NS_A" 2 $((1 << $(ch_id $ch))) || return 1
		touch "$d/n.$ch.top" && wait_file 60 "channel $ch topped up" "$d/n.$ch.topped" ||
			return 1
	done
}

# paused_release DIR CHANNEL...: the readers read everything, every
# message is acknowledged.
paused_release()
{
	local d=$1 ch p rc=0
	shift
	for ch in "$@"; do
		mv "$d/n.$ch.topped" "$d/go.$ch"
	done
	for p in "${PAUSED_PIDS[@]}"; do
		wait "$p" || rc=1
	done
	return $rc
}

held_run()
{
	local d=$ICS_TMP/held q max
	rm -rf "$d" && mkdir "$d" || return 1
	paused_fill "$d" "$@" || return 1
	q=$(link_get "$NS_A" 2 queued_bytes)
	max=$(cat $PARAMS/link_queue_max)
	echo "# node 1 holds $q bytes for $*; link_queue_max $max"
	assert_eq "channels paused" $PAUSED_BITS "$(paused_of "$NS_A" 2 $PAUSED_BITS)" || return 1
	if [ $# -gt 2 ]; then
		[ "$q" -le $((2 * max)) ] ||
			{ fail "the link holds $q bytes, over twice link_queue_max"; return 1; }
	else
		[ $((q + (256 << 10) + 64)) -gt "$max" ] ||
			{ fail "held $q only: a 256 KiB message fits even counting them"; return 1; }
		send_json "$NS_A" 2 CFS 256k 8 "$ICS_TMP/cfs2.json" --wait --timeout 30000 ||
			{ fail "CFS past two paused channels: $(cat "$ICS_TMP/cfs2.json.err")"; return 1; }
		assert_eq "CFS messages done" 8 "$(jget 'j["done"]' < "$ICS_TMP/cfs2.json")" || return 1
	fi
	paused_release "$d" "$@" || return 1
	wait_eq 30 0 "channels node 2 paused" link_get "$NS_A" 2 peer_paused
}

held_many()
{
	local rc=0
	held_run "$@" || rc=$?
	[ $rc = 4 ] || [ $rc = 0 ] || rc=1
	# after a failure, no reader or writer left bound for the cases after
	reap "ics_dev.py (stall|flood)"
	return $rc
}

# perf_sum FILE KEY: the sum of KEY over an icsperf -j result's sizes
perf_sum() { jget "sum(r[\"$2\"] for r in j[\"results\"])" < "$1"; }

# chan_delta NS DIR: TEST messages in DIR since the snapshot in $ICS_TMP/NS.DIR
chan_snap() { chan_get "$1" TEST "$2" msgs > "$ICS_TMP/$1.$2"; }
chan_delta() { echo $(($(chan_get "$1" TEST "$2" msgs) - $(cat "$ICS_TMP/$1.$2"))); }

# Against node 2's test service (attached to TEST): every round trip is
# one message each way, an ECHO that verified and the answer to it.
perf_kernel_peer()
{
	local out=$ICS_TMP/lat.json n
	chan_snap "$NS_A" tx && chan_snap "$NS_A" rx && chan_snap "$NS_B" rx || return 1
	tsvc_mark TEST || return 1
	in_ns "$NS_A" icsperf lat 2 --peer kernel -s 64,4k -l 0.5 -j > "$out" ||
		{ fail "icsperf lat: $(cat "$out")"; return 1; }
	n=$(perf_sum "$out" msgs)
	[ "$n" -gt 0 ] || { fail "no round trips"; return 1; }
	# and its probe, one more round trip
	assert_eq "node 1 TEST tx msgs = icsperf's + 1" $((n + 1)) "$(chan_delta "$NS_A" tx)" || return 1
	assert_eq "node 2 TEST rx msgs = icsperf's + 1" $((n + 1)) "$(chan_delta "$NS_B" rx)" || return 1
	tsvc_grew TEST rx_msgs=$((n + 1)) rx_ok=$((n + 1)) rx_bad=0 answers=$((n + 1)) \
		answer_drops=0 || return 1
	assert_eq "node 1 TEST rx msgs = icsperf's + 1" $((n + 1)) "$(chan_delta "$NS_A" rx)" || return 1
	jget '"%s %s" % (j["results"][0]["size"], j["results"][1]["size"])' < "$out" |
		{ read -r a; assert_eq "sizes" "64 4096" "$a"; }
}

# Against an icsperf server: a window of 16, each answered with 0 bytes;
# three more messages each way: the probe, and two that ask the server for
# its CPU time.
perf_user_peer()
{
	local out=$ICS_TMP/stream.json n
	in_ns "$NS_B" icsperf server > "$ICS_TMP/server.out" 2>&1 &
	ICS_BG_PIDS+=($!)
	wait_eq 30 true "icsperf server bound to TEST" chan_get "$NS_B" TEST handler || return 1
	chan_snap "$NS_A" tx && chan_snap "$NS_A" rx && chan_snap "$NS_B" rx || return 1
	in_ns "$NS_A" icsperf stream 2 -w 16 -s 1k -l 0.5 -j > "$out" ||
		{ fail "icsperf stream: $(cat "$out")"; return 1; }
	n=$(perf_sum "$out" msgs)
	[ "$n" -gt 16 ] || { fail "stream moved only $n messages"; return 1; }
	assert_eq "node 1 TEST tx msgs = icsperf's + 3" $((n + 3)) "$(chan_delta "$NS_A" tx)" || return 1
	assert_eq "node 2 TEST rx msgs = icsperf's + 3" $((n + 3)) "$(chan_delta "$NS_B" rx)" || return 1
	assert_eq "node 1 TEST rx msgs = icsperf's + 3" $((n + 3)) "$(chan_delta "$NS_A" rx)" || return 1
	[ "$(jget 'j["results"][0]["cpu_us_per_msg_remote"] is not None' < "$out")" = true ] ||
		fail "no CPU time from the server: $(cat "$out")" || return 1
	perf_user_sink
}

# Without a window (-w 0) the server sinks, and icsperf counts what the
# server read (its count, asked before and after): node 2 received those
# and the requests (the probe, two counts, possibly asked again, and the
# CPU time),
# and dropped none (flow control holds a sender faster than the reader);
# node 1 sent at least as many as the server read.
perf_user_sink()
{
	local out=$ICS_TMP/sink.json n drops0 other
	drops0=$(stat_get "$NS_B" dev_rx_drops)
	chan_snap "$NS_A" tx && chan_snap "$NS_B" rx || return 1
	in_ns "$NS_A" icsperf stream 2 -w 0 -s 64 -l 0.5 -j > "$out" ||
		{ fail "icsperf stream -w 0: $(cat "$out")"; return 1; }
	n=$(perf_sum "$out" msgs)
	[ "$n" -gt 16 ] || { fail "stream -w 0 moved only $n messages"; return 1; }
	[ "$(chan_delta "$NS_A" tx)" -ge "$n" ] ||
		{ fail "node 1 sent $(chan_delta "$NS_A" tx) TEST messages, the server read $n"; return 1; }
	other=$(($(chan_delta "$NS_B" rx) - n))
	echo "# -w 0: the server read $n messages; $other more arrived (requests)"
	assert_eq "messages dropped on node 2" "$drops0" "$(stat_get "$NS_B" dev_rx_drops)" ||
		return 1
	[ "$other" -ge 5 ] && [ "$other" -le 16 ] ||
		fail "node 2: TEST messages received - read = $other, want the 5..16 requests read"
}

# The other modes run and report: bistream, rr-load (against the icsperf
# server on TEST), -P 2 against node 2's test service (both streams on
# KCH, adding up to the total), -k
# (kernel<->kernel: the test services of both nodes, on CFSR). A bistream
# of 16 x 4 MiB each way can overrun half of either reader's buffer: then
# both sides pause the other, and icsperf must keep reading while its
# writes wait, or the two deadlock. Every message a test service took
# verified.
perf_modes()
{
	local out=$ICS_TMP/m.json t bad
	for t in "bistream 2 -s 2k" "bistream 2 -s 4m -w 16" "rr-load 2 -s 256 -r 50,100" \
		 "stream 2 -c KCH -P 2 --peer kernel -s 8k" \
		 "lat 2 -k -c CFSR -s 64" "stream 2 -k -c CFSR -s 64k"; do
		# shellcheck disable=SC2086
		in_ns "$NS_A" icsperf $t -l 0.3 -j > "$out" 2>&1 ||
			{ fail "icsperf $t: $(cat "$out")"; return 1; }
		[ "$(jget 'all(r["msgs"] > 0 for r in j["results"])' < "$out")" = true ] ||
			{ fail "icsperf $t: a point with no messages: $(cat "$out")"; return 1; }
		[ "$(jget 'all(r["msgs"] == sum(s["msgs"] for s in r.get("streams", [r])) for r in j["results"])' < "$out")" = true ] ||
			{ fail "icsperf $t: streams do not add up: $(cat "$out")"; return 1; }
	done
	for t in "$NS_A" "$NS_B"; do
		wait_eq 60 0 "$t: messages the test service took, not counted yet" \
			tsvc_get "$t" 'j["queued"]' || return 1
		bad=$(tsvc_get "$t" 'sum(c["rx_bad"] for c in j["channels"].values())')
		assert_eq "$t: test messages that did not verify" 0 "$bad" || return 1
	done
}

# Without the module, one line and a non-zero exit.
not_loaded()
{
	pkill -x icsperf
	pkill -f ics_dev.py
	ics_unload || return 1
	expect_err 1 'icsperf: /dev/ics: no such device \(is the ics module loaded\?\)' icsperf lat 2
}

step_add setup
# node 2's test service answers node 1's requests on TEST
step_add tsvc_attach "$NS_B" TEST
case_add "/dev/ics: every bad call (the former ECHO/SINK flags too) refused with its errno, nothing lost" \
	errors
case_add "binding: TEST to the group user_gid, other channels CAP_NET_ADMIN only, as opened" perms
case_add "poll/epoll: POLLIN only with an answer queued, POLLOUT when idle" polls
case_add "batched reads: every queued answer that fits, aligned, in order" batch
case_add "non-blocking writes: EAGAIN and no POLLOUT on a full link, POLLOUT after" fill
case_add "test-service answers queued on a file survive the peer leaving; then EHOSTDOWN" peer_left
case_add "close with messages queued: freed and counted" closed
# node 2's /dev/ics readers take TEST
step_add tsvc_attach "$NS_B" none
case_add "user bytes of 0 B..1 MiB arrive exactly through loss, reordering, corruption" data_exact
case_add "small messages queued together travel in bundles, exactly and in order" bundle
case_add "a 1 Mbit/s path: exactly, in order; few frames resent, its queue never overflows" slow_path
case_add "a reader that stops pauses its channel: sender holds, others flow, none lost" held
case_add "two stopped readers holding a link's worth: a third channel still flows" \
	held_many TEST DLM
case_add "five stopped readers: their channels hold at most twice link_queue_max" \
	held_many TEST DLM KCH RBLD CFSR
case_add "a stopped reader exits: what was held for it goes to the next reader, none unclaimed" \
	reader_left 1 close
case_add "a reader exits as what was held for it is offered: the next reader gets the rest" \
	reader_left 1 part
case_add "a stopped reader exits, none follows: after handler_wait_ms the rest is unclaimed, once" \
	reader_left 0 close
case_add "messages over half the buffer to a reader that stops: the one begun at the pause is taken" held_big
case_add "a channel resumed frees room: its waiting writer goes on while the others stay paused" \
	resume_room
case_add "a synchronous write stopped and continued: EINPROGRESS, its message delivered once" \
	sync_wait 0 EINPROGRESS
case_add "a synchronous write past its send timeout: EINPROGRESS, its message delivered once" \
	sync_wait 300 EINPROGRESS
case_add "what was held, taken while its sender is down here: its synchronous write completes once heard" \
	held_down
step_add tsvc_attach "$NS_B" TEST
case_add "icsperf lat against node 2's test service: counts equal the kernel's and its answers" \
	perf_kernel_peer
# an icsperf server takes node 2's TEST; -P 2 --peer kernel and -k use the
# test services on other channels
step_add tsvc_attach "$NS_B" KCH CFSR
step_add tsvc_attach "$NS_A" CFSR
case_add "icsperf stream against icsperf server: counts equal the kernel's" perf_user_peer
case_add "icsperf bistream, rr-load, -P 2 and -k against test services run and report every point" \
	perf_modes
# last, as it needs the module loaded with other parameters
step_add reload_nowait
case_add "handler_wait_ms=0: a stopped reader exits: the rest is unclaimed at once, once" \
	reader_left_nowait
case_add "icsperf without the module: one line, exit 1" not_loaded
cases_run
