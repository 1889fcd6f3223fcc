#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# auth.sh - a cluster key: members 1 and 2 sign every frame with key 1 and
# require it; member 3 (and a raw socket in its netns) tries to get in
# without it, forges frames and replays captured ones; then all three take
# the key and rotate it to a new one under traffic.
#
#                        netns ics$$-br
#              +-----------------------------------+
#              |               br0                 |
#              |   p1           p2           p3    |  captures on p2,
#              +---+------------+------------+-----+  replays out of p1
#                  |            |            |
#   +--------------+--+ +-------+---------+ ++----------------+
#   | ics node 1      | | ics node 2      | | ics node 3, or  |
#   | key 1, require  | | key 1, require  | | ics_inject      |
#   +-----------------+ +-----------------+ +-----------------+
#
# Every case asserts on counters and views, exactly: what an attacker's
# frame may change is one counter per frame, nothing else (no member row,
# no event, no generation, no message).

. "$(dirname "$0")/lib.sh"

ics_init timeout

NS=()
KEY1=$ICS_TMP/key1
KEY2=$ICS_TMP/key2
WRONG=$ICS_TMP/wrong

# keys_add N ID FILE...: member N installs key ID from FILE (more pairs may follow)
keys_add()
{
	local n=$1 out
	shift
	while [ $# -ge 2 ]; do
		out=$(in_ns "${NS[n]}" icsctl key add "$1" "$2" 2>&1) ||
			{ fail "node $n: key add $1: $out"; return 1; }
		shift 2
	done
}

# auth N ID MODE: member N signs with key ID, mode MODE
auth()
{
	local out
	out=$(in_ns "${NS[$1]}" icsctl key use "$2" 2>&1 && in_ns "${NS[$1]}" icsctl set auth "$3" 2>&1) ||
		{ fail "node $1: key use $2, auth $3: $out"; return 1; }
}

setup()
{
	(umask 077 && icsctl key gen > "$KEY1" && icsctl key gen > "$KEY2" &&
		icsctl key gen > "$WRONG") || { fail "icsctl key gen"; return 1; }
	ics_load && bridge_add 3 || return 1
	NS=("${ICS_MEMBER_NS[@]}")
	keys_add 1 1 "$KEY1" && keys_add 2 1 "$KEY1" || return 1
	# The migration: sign and accept, then require, member by member.
	auth 1 1 accept && auth 2 1 accept && auth 1 1 require && auth 2 1 require || return 1
	ics_bind "${NS[1]}" eth0 1 && ics_bind "${NS[2]}" eth0 2 || return 1
	ics_model reachable 30 "${NS[1]}:2" "${NS[2]}:1" || return 1
	wait_eq 10 1 "node 1 checked node 2's tags with key 1" node_get "${NS[1]}" 2 rx_key
}

# refused TEXT CMD...: CMD fails, saying TEXT
refused()
{
	local text=$1 out
	shift
	out=$("$@" 2>&1) && { fail "'$*' worked"; return 1; }
	[[ $out == *"$text"* ]] || { fail "'$*': '$out', want '$text'"; return 1; }
}

# The key commands: errors, what is shown, and to whom.
commands()
{
	local f1 f2 out
	refused "a key with this id is installed" in_ns "${NS[1]}" icsctl key add 1 "$KEY2" &&
	refused "the key in use" in_ns "${NS[1]}" icsctl key del 1 &&
	refused "no key with this id" in_ns "${NS[1]}" icsctl key use 9 &&
	refused "authentication is on" in_ns "${NS[1]}" icsctl key use 0 || return 1
	cp "$KEY2" "$ICS_TMP/open" && chmod 644 "$ICS_TMP/open"
	out=$(in_ns "${NS[1]}" icsctl key add 2 "$ICS_TMP/open" 2>&1) &&
		{ fail "key add of a world-readable file worked"; return 1; }
	[[ $out == *"chmod 600"* ]] || { fail "key add of a world-readable file: $out"; return 1; }
	assert_eq "node 1 mode" require "$(show_get "${NS[1]}" auth)" || return 1
	assert_eq "node 1 key in use" 1 "$(show_get "${NS[1]}" key_tx)" || return 1
	f1=$(in_ns "${NS[1]}" icstat -j show | jget 'j["keys"][0]["fingerprint"]')
	f2=$(in_ns "${NS[2]}" icstat -j show | jget 'j["keys"][0]["fingerprint"]')
	[ ${#f1} = 16 ] && [ "$f1" = "$f2" ] ||
		{ fail "fingerprints of the same key: '$f1' and '$f2'"; return 1; }
	# Not for others: a fingerprint would test guesses of a weak key.
	out=$(in_ns "${NS[1]}" setpriv --reuid=65534 --regid=65534 --clear-groups icstat -j show |
		jget '"keys" in j')
	assert_eq "keys shown to uid 65534" false "$out" || return 1
	if in_ns "${NS[1]}" icstat -j show | grep -q "$(tr -d '\n' < "$KEY1" | cut -c1-12)"; then
		fail "icstat shows the key"
		return 1
	fi
}

# snap_all TAG: counters and views of members 1 and 2 (heartbeats go on:
# not ics_model snap, which waits for quiet hello counters)
snap_all()
{
	local n
	for n in 1 2; do
		{
			echo '{"show":'
			in_ns "${NS[n]}" icstat -j show || return 1
			echo ', "nodes":'
			in_ns "${NS[n]}" icstat -j nodes || return 1
			echo '}'
		} > "$ICS_TMP/$1.$n" || { fail "icstat in ${NS[n]}"; return 1; }
	done
}

# only_counted BEFORE AFTER NODE COUNTER=DELTA...: between the snapshots of
# member NODE nothing changed but those counters, by exactly those deltas
# (membership generation, member rows, every other counter).
only_counted()
{
	python3 -S - "$ICS_TMP/$1.$3" "$ICS_TMP/$2.$3" "${@:4}" <<'EOF'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
want = dict((kv.split("=")[0], int(kv.split("=")[1])) for kv in sys.argv[3:])
errs = []
sa, sb = a["show"]["stats"], b["show"]["stats"]
skip = {"tx_frames", "tx_bytes", "rx_frames", "rx_bytes", "hello_tx", "hello_rx", "tx_acks",
        "rx_acks", "hb_deferred", "hb_late"}
for k in sorted(sb):
    d = sb[k] - sa.get(k, 0)
    if k in want:
        if d != want[k]:
            errs.append("%s grew by %d, want %d" % (k, d, want[k]))
    elif d and k not in skip:
        errs.append("%s grew by %d, want 0" % (k, d))
for k in ("generation",):
    if a["show"][k] != b["show"][k]:
        errs.append("%s went %d -> %d" % (k, a["show"][k], b["show"][k]))
nodes = lambda s: sorted(n["node_id"] for n in s["nodes"]["nodes"] if n["reachable"])
if nodes(a) != nodes(b):
    errs.append("reachable nodes went %s -> %s" % (nodes(a), nodes(b)))
for e in errs:
    print("# FAIL: " + e)
sys.exit(1 if errs else 0)
EOF
}

# members_of N: the node ids in member N's view, but itself
members_of()
{
	in_ns "${NS[$1]}" icstat -j members | jget '" ".join(str(m["node"]) for m in j["members"] if not m.get("self"))'
}

# stranger KEYFILE|none MODE: node 3 binds with the wrong key (or none);
# it is never heard: no row in 1's or 2's view, no event, no vote; only
# their rx_auth_bad (or rx_no_key) grows, and node 3 hears nobody.
stranger()
{
	local key=$1 mode=$2 counter hb n1 n2
	snap_all before || return 1
	if [ "$key" != none ]; then
		keys_add 3 1 "$key" && auth 3 1 "$mode" || { stranger_end; return 1; }
		counter=rx_auth_bad
	else
		counter=rx_no_key
	fi
	ics_bind "${NS[3]}" eth0 3 || { stranger_end; return 1; }
	# Its heartbeats arrive and are refused, a few intervals' worth.
	wait_counter "${NS[1]}" $counter 5 || { stranger_end; return 1; }
	stranger_end || return 1
	hb=$(in_ns "${NS[3]}" icstat -j show | jget 'j["stats"]["hello_tx"]')
	snap_all after || return 1
	assert_eq "node 1's view" 2 "$(members_of 1)" || return 1
	assert_eq "node 2's view" 1 "$(members_of 2)" || return 1
	n1=$(grown 1 $counter) || return 1
	[ "$n1" -ge 5 ] && [ "$n1" -le "$hb" ] ||
		{ fail "node 1 counted $n1 of node 3's $hb heartbeats in $counter"; return 1; }
	only_counted before after 1 "$counter=$n1" || return 1
	n2=$(grown 2 $counter) || return 1
	only_counted before after 2 "$counter=$n2"
}

# grown NODE COUNTER: how much member NODE's COUNTER grew from snapshot
# before to snapshot after
grown()
{
	python3 -S -c 'import json, sys
a, b = (json.load(open(f))["show"]["stats"][sys.argv[3]] for f in sys.argv[1:3])
print(b - a)' "$ICS_TMP/before.$1" "$ICS_TMP/after.$1" "$2"
}

# stranger_end: node 3 unbound, without keys, mode off
stranger_end()
{
	in_ns "${NS[3]}" icsctl unbind >/dev/null 2>&1
	in_ns "${NS[3]}" icsctl set auth off >/dev/null &&
		in_ns "${NS[3]}" icsctl key use 0 >/dev/null || { fail "node 3: auth off, key use 0"; return 1; }
	in_ns "${NS[3]}" icsctl key del 1 >/dev/null 2>&1
	return 0
}

# Node 3 holds the key and binds as node 1: a station given node 1's id,
# signing with its own MAC. Node 1 counts its heartbeats as a conflict
# (rx_node_conflict), not as its own frames come back (rx_replay), and
# node 2 keeps node 1 at its MAC.
impostor()
{
	local n1
	snap_all before || return 1
	keys_add 3 1 "$KEY1" && auth 3 1 require || { stranger_end; return 1; }
	ics_bind "${NS[3]}" eth0 1 || { stranger_end; return 1; }
	wait_grown 1 before rx_node_conflict 3 || { stranger_end; return 1; }
	stranger_end || return 1
	snap_all after || return 1
	n1=$(grown 1 rx_node_conflict) || return 1
	only_counted before after 1 rx_node_conflict="$n1" || return 1
	assert_eq "node 2's view" 1 "$(members_of 2)" &&
		assert_eq "node 1's MAC at node 2" "$(mac_of "${NS[1]}" eth0)" \
			"$(icstat_get "${NS[2]}" members 'next(m for m in j["members"] if m["node"] == 1)' address)"
}

# wait_grown NODE TAG COUNTER DELTA: until member NODE's COUNTER is DELTA
# above its value in snapshot TAG (then the snapshot after shows whether
# it went further)
wait_grown()
{
	local base
	base=$(python3 -S -c 'import json, sys; print(json.load(open(sys.argv[1]))["show"]["stats"][sys.argv[2]])' \
		"$ICS_TMP/$2.$1" "$3") || return 1
	wait_counter "${NS[$1]}" "$3" $((base + $4))
}

# Forged frames from a raw socket in node 3's netns: a heartbeat, data, an
# ack and a reset claiming to be node 2, signed with key 1 but a made-up
# tag (rx_auth_bad), and an unsigned heartbeat as node 3 (rx_no_key).
forged()
{
	local m1 i=${NS[3]} m hb uc inc1
	m1=$(mac_of "${NS[1]}" eth0) && inc1=$(ics_incarnation "${NS[1]}") || return 1
	snap_all before || return 1
	hb=(--src-node 2 --key-id 1 --incarnation "$(icstat_get "${NS[1]}" members \
		'next(m for m in j["members"] if m["node"] == 2)' incarnation)")
	in_ns "$i" "$ICS_INJECT" -i eth0 --hello "${hb[@]}" || return 1
	uc=(-d "$m1" --dst-node 1 --dst-inc "$inc1")	# for node 1's binding
	in_ns "$i" "$ICS_INJECT" -i eth0 "${uc[@]}" --len 100 "${hb[@]}" || return 1
	in_ns "$i" "$ICS_INJECT" -i eth0 "${uc[@]}" --ack-frame "${hb[@]}" || return 1
	in_ns "$i" "$ICS_INJECT" -i eth0 "${uc[@]}" --type 4 "${hb[@]}" || return 1
	in_ns "$i" "$ICS_INJECT" -i eth0 --hello --src-node 3 || return 1
	wait_grown 1 before rx_auth_bad 4 && wait_grown 1 before rx_no_key 1 &&
		wait_grown 2 before rx_auth_bad 1 && wait_grown 2 before rx_no_key 1 || return 1
	snap_all after || return 1
	only_counted before after 1 rx_auth_bad=4 rx_no_key=1 || return 1
	only_counted before after 2 rx_auth_bad=1 rx_no_key=1
}

# capture SECS FILE: node 2's frames to node 1 (unicast and broadcast) as
# they leave it, while node 2 sends node 1 some messages; and in FILE.own
# node 1's heartbeats (its broadcasts) as they leave it.
capture()
{
	local m1 m2 pid
	m1=$(mac_of "${NS[1]}" eth0) && m2=$(mac_of "${NS[2]}" eth0) || return 1
	rm -f "$2.ready"	# a case repeated captures into the same file
	in_ns "$NS_BR" python3 -S -c '
import binascii, select, socket, sys, time
m1, m2 = (bytes.fromhex(m.replace(":", "")) for m in sys.argv[1:3])
bc = b"\xff" * 6
# Taps (ETH_P_ALL) see the frames of a bridge port before the bridge takes
# them. Protocol 0 until bound: a socket made with a protocol hears every
# device of the netns from the start, the bridge itself among them.
taps = {}
for port, src, dsts, out in (("p2", m2, (m1, bc), sys.argv[4]),
                             ("p1", m1, (bc,), sys.argv[4] + ".own")):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.bind((port, 3))
    taps[s] = (port, src, dsts, open(out, "w"))
end = time.monotonic() + float(sys.argv[3])
open(sys.argv[4] + ".ready", "w").close()
while time.monotonic() < end:
    for s in select.select(list(taps), [], [], 0.1)[0]:
        port, src, dsts, f = taps[s]
        fr, addr = s.recvfrom(65536)
        if (addr[0] == port and addr[2] != socket.PACKET_OUTGOING and fr[0:6] in dsts and
                fr[6:12] == src and fr[12:14] == b"\x88\xb5"):
            f.write(binascii.hexlify(fr).decode() + "\n")
for port, src, dsts, f in taps.values():
    f.close()
' "$m1" "$m2" "$1" "$2" &
	pid=$!
	wait_file 10 "capture ready" "$2.ready" || { kill $pid; return 1; }
	ics_send "${NS[2]}" 2 1 TEST 3000 5 || { kill $pid; return 1; }
	wait $pid
	[ "$(wc -l < "$2")" -ge 5 ] || { fail "captured $(wc -l < "$2") frames"; return 1; }
}

# frames_info FILE...: one line per captured frame, for a failure's report
frames_info()
{
	python3 -S - "$@" <<'EOF'
import fileinput
for i, l in enumerate(fileinput.input()):
    f = bytes.fromhex(l.strip())
    h = f[14:]
    print("# frame %d: %s type %d src %d dst %d dst_inc %d inc %d key %d ctr %d" % (
        i, "bcast" if f[0:6] == b"\xff" * 6 else "ucast", h[1], h[8], h[9],
        int.from_bytes(h[48:52], "big"), int.from_bytes(h[40:44], "big"), h[52],
        int.from_bytes(h[54:60], "big")))
EOF
}

# replay FILE: send the captured frames to node 1 again, out of p1
replay()
{
	in_ns "$NS_BR" python3 -S -c '
import binascii, os, socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("p1", 0))
open(sys.argv[1] + ".pid", "w").write(str(os.getpid()))
for l in open(sys.argv[1]):
    s.send(binascii.unhexlify(l.strip()))
    open(sys.argv[1] + ".sent", "w").close()
    time.sleep(float(sys.argv[2]))
open(sys.argv[1] + ".done", "w").close()
' "$1" "${2:-0}"
}

# A capture of node 2's traffic to node 1, replayed: each frame counted
# once in rx_replay, no message delivered twice, nothing else changed.
replayed()
{
	local n
	capture 3 "$ICS_TMP/cap" || return 1
	n=$(wc -l < "$ICS_TMP/cap")
	info "replaying $n frames of node 2 to node 1"
	snap_all before || return 1
	replay "$ICS_TMP/cap" || return 1
	wait_grown 1 before rx_replay "$n" || return 1
	snap_all after || return 1
	only_counted before after 1 rx_replay="$n"
}

# Node 2 restarts (unbind, bind: a new incarnation) and is admitted again;
# the frames of its old incarnation, replayed, are refused as leftovers
# (rx_bad_session), whose heartbeats cannot make a claim.
restarted()
{
	local n inc0 inc1
	capture 3 "$ICS_TMP/old" || return 1
	n=$(wc -l < "$ICS_TMP/old")
	inc0=$(icstat_get "${NS[1]}" members 'next(m for m in j["members"] if m["node"] == 2)' incarnation)
	in_ns "${NS[2]}" icsctl unbind && ics_bind "${NS[2]}" eth0 2 || return 1
	wait_eq 30 member "node 2 a member of node 1's view again" icstat_get "${NS[1]}" members \
		'next(m for m in j["members"] if m["node"] == 2)' state || return 1
	ics_model reachable 30 "${NS[1]}:2" "${NS[2]}:1" || return 1
	inc1=$(icstat_get "${NS[1]}" members 'next(m for m in j["members"] if m["node"] == 2)' incarnation)
	[ "$inc1" != "$inc0" ] || { fail "node 2's incarnation did not change"; return 1; }
	snap_all before || return 1
	replay "$ICS_TMP/old" || return 1
	wait_grown 1 before rx_bad_session "$n" || return 1
	snap_all after || return 1
	only_counted before after 1 rx_bad_session="$n" || return 1
	assert_eq "node 2's incarnation at node 1" "$inc1" "$(icstat_get "${NS[1]}" members \
		'next(m for m in j["members"] if m["node"] == 2)' incarnation)"
}

node2_at_1() { icstat_get "${NS[1]}" members 'next(m for m in j["members"] if m["node"] == 2)' "$1"; }

# Node 2 restarts twice; while it restarts the second time, heartbeats of
# its binding before last, recorded, are replayed every 0.5 s. The first
# takes the claim (node 2 has just left) before node 2 binds again; the
# others are fresh in the claim's window, yet none extends its hold, so
# node 2's new binding is a member again well before the replay ends (with
# a hold each replayed heartbeat extended, not before).
restart_under_replay()
{
	local n pid inc1 inc state=
	capture 3 "$ICS_TMP/b0" || return 1
	grep '^ffffffffffff' "$ICS_TMP/b0" > "$ICS_TMP/b0.hb"
	n=$(wc -l < "$ICS_TMP/b0.hb")
	[ "$n" -ge 20 ] || { fail "only $n heartbeats of node 2 captured"; return 1; }
	in_ns "${NS[2]}" icsctl unbind && ics_bind "${NS[2]}" eth0 2 || return 1
	wait_eq 30 member "node 2 a member of node 1's view again" node2_at_1 state || return 1
	inc1=$(node2_at_1 incarnation) || return 1
	info "replaying $n heartbeats of node 2's binding before last, one every 0.5 s, while it restarts"
	in_ns "${NS[2]}" icsctl unbind || return 1
	rm -f "$ICS_TMP/b0.hb".{pid,sent,done}
	replay "$ICS_TMP/b0.hb" 0.5 &
	pid=$!
	if wait_file 30 "the first replayed heartbeat sent" "$ICS_TMP/b0.hb.sent" &&
	   ics_bind "${NS[2]}" eth0 2; then
		while [ ! -e "$ICS_TMP/b0.hb.done" ]; do
			state=$(node2_at_1 state) && inc=$(node2_at_1 incarnation) &&
				[ "$state" = member ] && [ "$inc" != "$inc1" ] && break
			state=
			sleep 0.2
		done
	fi
	kill "$(cat "$ICS_TMP/b0.hb.pid" 2>/dev/null)" 2>/dev/null
	wait $pid
	[ -n "$state" ] ||
		{ fail "node 2 not a member again while its older binding's heartbeats were replayed"; return 1; }
	ics_model reachable 30 "${NS[1]}:2" "${NS[2]}:1"
}

# Node 1 restarts: node 2's frames to its previous binding, recorded and
# replayed into the new one, are refused. The unicast ones name that
# binding (rx_bad_session); the heartbeats come before anything the new
# binding heard from node 2 (rx_replay). Node 1's own heartbeats of that
# binding, replayed to it, are its own come back (rx_replay), not another
# station claiming its node id.
receiver_restarted()
{
	local n u o rc
	capture 3 "$ICS_TMP/prev" || return 1
	n=$(wc -l < "$ICS_TMP/prev")
	u=$(grep -vc '^ffffffffffff' "$ICS_TMP/prev")
	o=$(wc -l < "$ICS_TMP/prev.own")
	[ "$o" -ge 5 ] || { fail "only $o heartbeats of node 1 captured"; return 1; }
	info "replaying $u unicast frames and $((n - u)) heartbeats of node 2, $o of node 1, to node 1 rebound"
	in_ns "${NS[1]}" icsctl unbind && ics_bind "${NS[1]}" eth0 1 || return 1
	wait_eq 30 member "node 2 a member of node 1's view again" icstat_get "${NS[1]}" members \
		'next(m for m in j["members"] if m["node"] == 2)' state || return 1
	ics_model reachable 30 "${NS[1]}:2" "${NS[2]}:1" || return 1
	snap_all before || return 1
	replay "$ICS_TMP/prev" && replay "$ICS_TMP/prev.own" || return 1
	# On a timeout, still name every counter that moved.
	wait_grown 1 before rx_bad_session "$u" && wait_grown 1 before rx_replay $((n - u + o))
	rc=$?
	snap_all after || return 1
	[ $rc = 0 ] || frames_info "$ICS_TMP/prev" "$ICS_TMP/prev.own"
	only_counted before after 1 rx_bad_session="$u" rx_replay=$((n - u + o)) && return $rc
}

# hb_all MS: every member's heartbeat interval
hb_all()
{
	local n
	for n in 1 2 3; do
		in_ns "${NS[n]}" icsctl set heartbeat "$1" >/dev/null ||
			{ fail "node $n: set heartbeat $1"; return 1; }
	done
}

# Node 3 joins with the key; then key 2 replaces key 1 under traffic from
# nodes 1 and 2 to node 3, following the admin guide: add key 2
# everywhere, use it on each member, wait until every member checks key 2
# from every peer, remove key 1. The stress check fails on any message
# lost or failed, and on any rx_auth_bad, rx_no_key or tx_auth_errors.
join3()
{
	keys_add 3 1 "$KEY1" && auth 3 1 accept && auth 3 1 require || return 1
	ics_bind "${NS[3]}" eth0 3 || return 1
	ics_model reachable 30 "${NS[1]}:3" "${NS[2]}:3" "${NS[3]}:1" "${NS[3]}:2"
}

# Repeatable (ICS_CASE_REPEAT): from the key in use, 1 or 2, to the other
# one, a new key each time.
rotation()
{
	local n m cur new tag=rot$SECONDS
	cur=$(show_get "${NS[1]}" key_tx)
	new=$((3 - cur))
	(umask 077 && icsctl key gen > "$ICS_TMP/key.$tag") || { fail "icsctl key gen"; return 1; }
	info "key $cur to key $new"
	# Quiet heartbeats for the model's snapshots (hb_all).
	hb_all "$ICS_HB_LONG" || return 1
	sleep 1
	ics_model snap "${NS[1]}" "$ICS_TMP/before.1" "${NS[2]}" "$ICS_TMP/before.2" \
		"${NS[3]}" "$ICS_TMP/before.3" || return 1
	stress_start $tag 3 16k 400 "TEST CFS DLM" 1:"${NS[1]}" 2:"${NS[2]}" || return 1
	for n in 1 2 3; do
		keys_add $n $new "$ICS_TMP/key.$tag" || return 1
	done
	for n in 1 2 3; do
		in_ns "${NS[n]}" icsctl key use $new >/dev/null ||
			{ fail "node $n: key use $new"; return 1; }
		sleep 0.5
	done
	# Heartbeats again, as a cluster has them, to show every peer's key.
	hb_all 100 || return 1
	for n in 1 2 3; do
		for m in 1 2 3; do
			[ $n = $m ] && continue
			wait_eq 20 $new "node $n checks key $new from node $m" \
				node_get "${NS[n]}" $m rx_key || return 1
		done
	done
	hb_all "$ICS_HB_LONG" || return 1
	for n in 1 2 3; do
		in_ns "${NS[n]}" icsctl key del $cur >/dev/null ||
			{ fail "node $n: key del $cur"; return 1; }
	done
	if stress_running; then
		info "key $cur removed everywhere while the traffic still ran"
	else
		info "the traffic ended before key $cur was removed everywhere"
	fi
	stress_wait || return 1
	ics_model stress-check --count TEST:400 --count CFS:400 --count DLM:400 \
		--send "1:${NS[1]}:$ICS_TMP/before.1:$ICS_TMP/$tag.now1:$ICS_TMP/$tag/s1.*" \
		--send "2:${NS[2]}:$ICS_TMP/before.2:$ICS_TMP/$tag.now2:$ICS_TMP/$tag/s2.*" \
		--recv "3:${NS[3]}:$ICS_TMP/before.3:$ICS_TMP/$tag.now3" || return 1
	hb_all 100
}

step_add setup
case_add "key add, use, del: errors; fingerprints for the admin only, never the key" commands
case_add "a member with the wrong key is never heard: no row, no event, rx_auth_bad only" \
	stranger "$WRONG" require
case_add "a member without a key is never heard: no row, no event, rx_no_key only" \
	stranger none off
case_add "forged heartbeat, data, ack and reset change nothing but the counters" forged
case_add "a capture replayed changes nothing but rx_replay, once per frame" replayed
case_add "a restarted member is admitted; its old incarnation's frames are refused" restarted
case_add "a member restarted: what was sent to its previous binding is refused" \
	receiver_restarted
case_add "a member restarts while its binding before last is replayed: admitted before the replay ends" \
	restart_under_replay
case_add "a keyed station given node 1's id is a conflict there, not a replay" impostor
step_add join3
case_add "key rotation under traffic to a third member: nothing lost, no failure" rotation
case_once "teardown: netns deleted, module removed, kernel log clean" ics_teardown_check
cases_run
