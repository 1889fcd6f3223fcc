#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# histogram.sh - per-channel message-size histograms are exact.
#
# For every size in the list (0, 1, 2, each 2^k and 2^k+1 up to 2^24,
# MTU - HDR +-1 and MTU +-1 around the fragment and frame boundaries, 16 MiB;
# HDR = sizeof(struct ics_wire_hdr)) node 1 sends
# to node 2, then every tx and rx histogram row of every channel on both
# nodes must equal the rows computed from the sizes sent (rule of
# ics_hist_row() in include/uapi/linux/ics.h), msgs and bytes too, and the
# link's data-frame counters (icstat links: tx_frames on the sender,
# rx_frames on the receiver; acks, hellos and retransmits are not in them)
# must show exactly max(1, ceil(size / (MTU - HDR))) frames per message,
# and the receiver's test service (ics_test, attached to all 16 channels)
# must have checked every message intact (rx_ok, none rx_bad).
# Once more at MTU 9000. Last, `icstat -n chanhisttot` text must show the
# same numbers as `icstat -j chanhisttot`, in the documented shape.
#
#   netns ics$$-a  node 1  veth0 ==== MTU 1500 ==== veth0  node 2  netns ics$$-b
#   netns ics$$-c  node 3  veth0 ==== MTU 9000 ==== veth0  node 4  netns ics$$-d
#                  (sender)                                (receiver)
#
# Module loaded with heartbeat_ms=3600000: hellos only at bind (and the
# replies), counted on CNX row "16" through hello_tx / hello_rx.

. "$(dirname "$0")/lib.sh"

NS_C=$ICS_PFX-c
NS_D=$ICS_PFX-d
HDR=$ICS_HDR
MSG_MAX=16777216

sizes_for_mtu()		# MTU -> the size list
{
	local mtu=$1 k
	{
		echo 0
		for ((k = 0; k <= 24; k++)); do
			echo $((1 << k))
			[ $k -lt 24 ] && echo $(((1 << k) + 1))
		done
		echo $((mtu - HDR - 1)) $((mtu - HDR)) $((mtu - HDR + 1))
		echo $((mtu - 1)) $mtu $((mtu + 1))
		echo $MSG_MAX
	} | tr ' ' '\n' | sort -n -u
}

SIZES=$(sizes_for_mtu 1500)
J=$((9000 - HDR))
SIZES_JUMBO="$(for s in $((J - 1)) $J $((J + 1)) 8999 9000 9001 $((2 * J)) $((2 * J + 1)) 65536 $MSG_MAX; do
	echo $s; done | sort -n -u)"
N_SIZES=$(echo "$SIZES" | wc -l)
N_JUMBO=$(echo "$SIZES_JUMBO" | wc -l)

ics_init ics_inject
ktap_set_plan $((1 + N_SIZES + 1 + N_JUMBO + 2 + 1))

count_for()	# SIZE -> messages to send
{
	if [ "$1" -le 65537 ]; then echo 3
	elif [ "$1" -le 1048577 ]; then echo 2
	else echo 1
	fi
}

setup()
{
	ics_load heartbeat_ms=$ICS_HB_LONG && pair_add
}

# bind_pair NSX NODEX NSY NODEY MTU TAG
bind_pair()
{
	local out
	ics_bind "$1" veth0 "$2" && ics_bind "$3" veth0 "$4" || return 1
	wait_reachable "$1" "$4" && wait_reachable "$3" "$2" || return 1
	out=$(in_ns "$1" icstat -j show | jget '"%s %s" % (j["mtu"], j["msg_max"])')
	assert_eq "node $2 mtu msg_max" "$5 $MSG_MAX" "$out" || return 1
	out=$(in_ns "$1" icstat -j chanhisttot | jget '" ".join(j["rows"])')
	assert_eq "row labels" "$ICS_HIST_LABELS" "$out" || return 1
	# Nothing sent yet: every row zero but the hellos on CNX.
	ics_model check "$ICS_TMP/sends" "$2:$1:$ICS_TMP/$6-tx.prev" "$4:$3:$ICS_TMP/$6-rx.prev"
}

# one_size NSX NODEX NSY NODEY MTU TAG SIZE CHANNEL: send, wait for the
# receiver, then the model check on both nodes plus the frame counts
# (the link's tx_frames on the sender, rx_frames on the receiver grew by
# COUNT * max(1, ceil(SIZE / (MTU - HDR)))).
one_size()
{
	local nsx=$1 x=$2 nsy=$3 y=$4 mtu=$5 tag=$6 size=$7 ch=$8 count rc=0
	count=$(count_for "$size")
	ics_send "$nsx" "$x" "$y" "$ch" "$size" "$count" || return 1
	ics_model check "$ICS_TMP/sends" \
		--wait-rx "$nsy:$(sends_to "$y"):$((30 + size / 200000))" \
		--frames "$x:$y:tx:$count:$size:$((mtu - HDR)):$ICS_TMP/$tag-tx.prev" \
		--frames "$y:$x:rx:$count:$size:$((mtu - HDR)):$ICS_TMP/$tag-rx.prev" \
		"$x:$nsx:$ICS_TMP/$tag-tx.now" "$y:$nsy:$ICS_TMP/$tag-rx.now" || rc=1
	# The next size compares with this state (even after a failure).
	[ -s "$ICS_TMP/$tag-tx.now" ] && mv "$ICS_TMP/$tag-tx.now" "$ICS_TMP/$tag-tx.prev"
	[ -s "$ICS_TMP/$tag-rx.now" ] && mv "$ICS_TMP/$tag-rx.now" "$ICS_TMP/$tag-rx.prev"
	return $rc
}

# text_matches_json NS NODE: `icstat -n chanhisttot` shows the numbers of
# `icstat -j chanhisttot`: "Sent:" and "Received:" tables, a header of the
# 16 channel names, 27 rows labelled 0 1 2 4 ... 16m more, numbers
# right-aligned under their channel name.
text_matches_json()
{
	local ns=$1
	in_ns "$ns" icstat -n chanhisttot > "$ICS_TMP/text" || { fail "icstat -n chanhisttot"; return 1; }
	in_ns "$ns" icstat -j chanhisttot > "$ICS_TMP/json" || { fail "icstat -j chanhisttot"; return 1; }
	python3 - "$ICS_TMP/text" "$ICS_TMP/json" "$ICS_HIST_LABELS" "${ICS_CHANNELS[*]}" <<'EOF'
import json, re, sys
text = open(sys.argv[1]).read().splitlines()
j = json.load(open(sys.argv[2]))
labels, names = sys.argv[3].split(), sys.argv[4].split()
errs = []
lines = [l for l in text if l.strip()]
for title, d in (("Sent:", "tx"), ("Received:", "rx")):
    if title not in [l.strip() for l in lines]:
        errs.append("no line %r" % title)
        continue
    i = [l.strip() for l in lines].index(title)
    header, rows = lines[i + 1], lines[i + 2:i + 2 + 27]
    if header.split() != names:
        errs.append("%s header %r, want the 16 channel names in id order" % (title, header))
        continue
    ends = [m.end() for m in re.finditer(r"\S+", header)]
    for r, line in enumerate(rows):
        toks = line.split()
        if not toks or toks[0] != labels[r]:
            errs.append("%s row %d label %r, want %r" % (title, r, toks[0] if toks else "", labels[r]))
            continue
        if len(toks) != 17:
            errs.append("%s row %s has %d columns, want 17: %r" % (title, labels[r], len(toks), line))
            continue
        for c in range(16):
            want = j["channels"][c][d]["hist"][r]
            if toks[c + 1] != str(want):
                errs.append("%s row %s %s: text %r, json %d" % (title, labels[r], names[c], toks[c + 1], want))
        tends = [m.end() for m in re.finditer(r"\S+", line)][1:]
        if tends != ends:
            errs.append("%s row %s not right-aligned under the header: %r" % (title, labels[r], line))
for e in errs[:30]:
    print("# FAIL: " + e)
if errs:
    print("# text was:")
    for l in text[:70]:
        print("#   " + l)
sys.exit(1 if errs else 0)
EOF
}

setup || ics_bail "setup failed"
ics_case "MTU 1500: bind, rows labelled 0..16m more, all zero but the hellos" \
	bind_pair "$NS_A" 1 "$NS_B" 2 1500 std || ics_bail "members cannot see each other"

# size_cases NSX NODEX NSY NODEY MTU TAG SIZES: a case per size, channels
# in turn (i counts on across calls).
i=0
size_cases()
{
	local size ch
	for size in $7; do
		ch=${ICS_CHANNELS[$((i % 16))]}
		ics_case "MTU $5: size $size x$(count_for "$size") on $ch: tx/rx rows, msgs, bytes and frames exact" \
			one_size "$1" "$2" "$3" "$4" "$5" "$6" "$size" "$ch"
		i=$((i + 1))
	done
}

size_cases "$NS_A" 1 "$NS_B" 2 1500 std "$SIZES"

setup_jumbo()
{
	ns_add "$NS_C" && ns_add "$NS_D" || return 1
	veth_add "$NS_C" veth0 02:00:00:00:00:03 "$NS_D" veth0 02:00:00:00:00:04 9000 || return 1
	bind_pair "$NS_C" 3 "$NS_D" 4 9000 jumbo
}
ics_case "MTU 9000: bind, rows all zero but the hellos" setup_jumbo ||
	ics_bail "jumbo members cannot see each other"
size_cases "$NS_C" 3 "$NS_D" 4 9000 jumbo "$SIZES_JUMBO"

ics_case "icstat -n chanhisttot text equals the JSON on the sender" text_matches_json "$NS_A" 1
ics_case "icstat -n chanhisttot text equals the JSON on the receiver" text_matches_json "$NS_B" 2
ics_case "teardown: netns deleted, module removed, kernel log clean" ics_teardown_check
ktap_finished
