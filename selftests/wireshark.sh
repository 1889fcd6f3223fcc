#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# wireshark.sh - the Wireshark dissector (user/ics.lua), run by Debian's
# tshark on a capture of a real run: single-frame and fragmented messages,
# bundles, heartbeats, acknowledgements and signed frames. Every CRC32C
# checks and no frame is flagged; the fields say what was sent (sizes,
# channels, nodes, fragment offsets tiling the message, as many bundles
# and bundled messages as the kernel counted, heartbeat MTU and interval,
# key ids and counters rising); a frame corrupted in the capture is
# flagged, and only it.
#
#   netns ics$$-a  node 1  veth0 ======= veth0  node 2  netns ics$$-b
#                                          dumpcap -i veth0 (node 2's side)

. "$(dirname "$0")/lib.sh"

ics_init tshark dumpcap
LUA=$ICS_TOP/user/ics.lua
CAP=$ICS_TMP/cap.pcap
KEYF=$ICS_TMP/cluster.key

# tshark with the dissector; its own warning about running as root aside.
tsh() { tshark -X lua_script:"$LUA" "$@" 2> >(grep -v '^Running as user' >&2); }

stat_of() { stat_get "$NS_A" "$1"; }
hellos_reach() { [ "$(stat_of hello_tx)" -ge "$1" ] && echo yes; }	# N

setup()
{
	pair_setup || return 1
	in_ns "$NS_B" dumpcap -q -P -i veth0 -f "ether proto 0x88b5" -w "$CAP" 2> "$ICS_TMP/dumpcap.err" &
	DUMPCAP=$!
	wait_file 30 "dumpcap's capture file" "$CAP"
}

# Traffic of every kind, what the kernel counted of it kept for the checks.
traffic()
{
	local b0 r0 ns
	ics_send "$NS_A" 1 2 CFS 300 3 --wait && ics_send "$NS_A" 1 2 DLM 70000 1 --wait || return 1
	b0=$(stat_of tx_bundles) r0=$(stat_of tx_bundled)
	# queued faster than a 50 ms wire takes them: once the window is full,
	# the frames cut carry several (bundles)
	tc -n "$NS_A" qdisc add dev veth0 root netem delay 50ms &&
		ics_send "$NS_A" 1 2 TEST 100 300 --wait && tc -n "$NS_A" qdisc del dev veth0 root ||
		return 1
	echo "$(($(stat_of tx_bundles) - b0)) $(($(stat_of tx_bundled) - r0))" > "$ICS_TMP/bundles"
	# heartbeats: a 100 ms interval for a few of them, then the long one again
	r0=$(stat_of hello_tx)
	in_ns "$NS_A" icsctl set heartbeat 100 || return 1
	wait_eq 30 yes "three heartbeats of node 1" hellos_reach $((r0 + 3)) || return 1
	in_ns "$NS_A" icsctl set heartbeat $ICS_HB_LONG || return 1
	# signed: one key on both, accept mode
	(umask 077 && icsctl key gen > "$KEYF") || return 1
	for ns in "$NS_A" "$NS_B"; do
		in_ns "$ns" icsctl key add 1 "$KEYF" && in_ns "$ns" icsctl key use 1 &&
			in_ns "$ns" icsctl set auth accept || return 1
	done
	ics_send "$NS_A" 1 2 CFS 200 2 --wait || return 1
	# SIGTERM: a background job of a script ignores SIGINT; dumpcap ends the file
	kill -TERM $DUMPCAP
	wait $DUMPCAP
	[ -s "$CAP" ] || { fail "nothing captured: $(cat "$ICS_TMP/dumpcap.err")"; return 1; }
}

# The dissector's fields against what was sent and what the kernel counted.
fields_match()
{
	[ -s "$CAP" ] || { fail "nothing captured: $(cat "$ICS_TMP/dumpcap.err")"; return 1; }
	tsh -r "$CAP" -T fields -E separator=';' -e ics.type -e ics.src_node -e ics.dst_node \
		-e ics.channel -e ics.msg_len -e ics.frag_off -e ics.frag_len -e ics.flags.bundle \
		-e ics.check.status -e ics.key_id -e ics.ctr -e ics.hello.mtu -e ics.hello.hello_ms \
		-e ics.bundle.len > "$ICS_TMP/fields" || return 1
	python3 -S - "$ICS_TMP/fields" "$(cat "$ICS_TMP/bundles")" <<'EOF' || { fail "see above"; return 1; }
import sys
rows = [l.rstrip("\n").split(";") for l in open(sys.argv[1])]
want_bundles, want_bundled = map(int, sys.argv[2].split())
bad = []
def data(ch, ln, key="0"):
    return [r for r in rows if r[0] == "1" and r[1] == "1" and r[3] == ch and r[4] == ln and r[9] == key]
assert len(rows) > 50, "%d frames captured" % len(rows)
for i, r in enumerate(rows):
    if r[8] != "good":
        bad.append("frame %d: CRC32C %r" % (i + 1, r[8]))
if len(data("3", "300")) != 3:
    bad.append("%d single-frame CFS messages of 300 bytes, 3 sent" % len(data("3", "300")))
frags = data("13", "70000")
offs = sorted((int(r[5]), int(r[6])) for r in frags)
pos = 0
for off, ln in offs:
    if off != pos:
        bad.append("DLM 70000: fragment at %d, %d expected" % (off, pos))
    pos = off + ln
if pos != 70000 or len(frags) < 48:
    bad.append("DLM 70000: fragments cover %d bytes in %d frames" % (pos, len(frags)))
b = [r for r in rows if r[0] == "1" and r[1] == "1" and r[7] == "1"]
recs = sum(len(r[13].split(",")) for r in b)
if (len(b), recs) != (want_bundles, want_bundled) or not b:
    bad.append("bundles %d of %d messages in the capture; the kernel cut %d of %d"
               % (len(b), recs, want_bundles, want_bundled))
if any(l != "100" for r in b for l in r[13].split(",")):
    bad.append("bundled messages of other lengths than 100")
hellos = [r for r in rows if r[0] == "2" and r[1] == "1"]
if not any(r[11] == "1500" and r[12] == "100" for r in hellos):
    bad.append("no heartbeat of node 1 with MTU 1500 and interval 100: %s" % hellos[:3])
if not any(r[0] == "3" and r[1] == "2" for r in rows):
    bad.append("no ACK from node 2")
signed = data("3", "200", "1")
ctrs = [int(r[10]) for r in rows if r[9] == "1" and r[1] == "1" and r[2] == "2"]
if len(signed) != 2 or not ctrs or ctrs != sorted(set(ctrs)) or ctrs[0] < 1:
    bad.append("signed: %d CFS messages of 200 bytes with key 1, counters %s" % (len(signed), ctrs[:8]))
for b_ in bad:
    print("# FAIL: " + b_)
print("# %d frames: %d DATA, %d HELLO, %d ACK, %d bundles, %d signed" % (
    len(rows), sum(r[0] == "1" for r in rows), sum(r[0] == "2" for r in rows),
    sum(r[0] == "3" for r in rows), len(b), sum(r[9] != "0" for r in rows)))
sys.exit(1 if bad else 0)
EOF
}

# Valid traffic has no expert info at all; one byte flipped in a DATA
# frame's payload (its CRC32C left) is flagged, and only that frame.
corrupt_flagged()
{
	local out n
	out=$(tsh -r "$CAP" -q -z expert,note) || return 1
	[[ $out != *ICS* ]] || { fail "expert info on valid traffic: $out"; return 1; }
	n=$(tsh -r "$CAP" -T fields -e frame.number -Y "ics.channel == 3 && ics.msg_len == 300" |
		head -n 1)
	python3 -S - "$CAP" "$ICS_TMP/bad.pcap" "$n" <<'EOF' || return 1
import struct, sys
data = open(sys.argv[1], "rb").read()
out, off, i = bytearray(data[:24]), 24, 0
while off < len(data):
    caplen = struct.unpack_from("<I", data, off + 8)[0]
    rec = bytearray(data[off:off + 16 + caplen])
    i += 1
    if i == int(sys.argv[3]):
        rec[16 + 14 + 84 + 10] ^= 0x01	# a payload byte
    out += rec
    off += 16 + caplen
open(sys.argv[2], "wb").write(out)
EOF
	out=$(tsh -r "$ICS_TMP/bad.pcap" -T fields -e frame.number -Y "ics.check.status == \"bad\"")
	assert_eq "frames flagged with a bad CRC32C" "$n" "$out" || return 1
	out=$(tsh -r "$ICS_TMP/bad.pcap" -q -z expert,error | grep -c 'CRC32C')
	assert_eq "CRC32C errors in the expert info" 1 "$out"
}

step_add setup
step_add traffic
case_add "every field as sent: sizes, fragments, bundles, heartbeats, acks, signed frames" \
	fields_match
case_add "no expert info on valid traffic; a corrupted frame is flagged, alone" corrupt_flagged
case_once "teardown: netns deleted, module removed, kernel log clean" ics_teardown_check
cases_run
