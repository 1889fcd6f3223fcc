#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# nic.sh - icsctl nic / icstat nic: a tc BPF program counts every frame on
# the interconnect NIC by class, ics's and what bypasses ics, and nothing
# else changes.
#
#   netns ics$$-a                            netns ics$$-b
#   +----------------------------+           +----------------------------+
#   | ics node 1, 10.99.0.1      |           | ics node 2, 10.99.0.2      |
#   | veth0 02:00:00:00:00:01    +---veth----+ veth0 02:00:00:00:00:02    |
#   | clsact: ics_nic (prio 1),  |           |                            |
#   |   a matchall filter (10)   |           |                            |
#   +----------------------------+           +----------------------------+
#
# Offloads are off on both ends, so that a frame is a packet to veth's own
# counters. Cases:
#   - attach: the program counts from then on, after icsctl exited; a
#     second attach is refused, saying why;
#   - a mix of ics traffic on every channel, ARP, ping, ping6, UDP, TCP, a
#     foreign ethertype, 802.3 LLC and VLAN frames, both ways: the classes
#     together equal veth's packet and byte counts exactly in each
#     direction, and each kind is in its class and direction;
#   - ics's classes equal what ics counted itself: frames sent (tx_frames),
#     every frame received (accepted or counted as dropped), heartbeats,
#     acknowledgements, and data frames per channel (a message of S bytes
#     is ceil(S / (MTU - header)) frames, sent with --wait so none share a
#     frame, plus the link's retransmissions);
#   - a frame ics drops (bad CRC32C) is still counted;
#   - the matchall filter after ours still sees every frame we count, on
#     both hooks (ours passes each on with TC_ACT_UNSPEC);
#   - the output forms: table and share line, -j, --csv, -i, prometheus
#     (promtool check metrics);
#   - an unprivileged reader reads the pins (mode 0644); where bpffs is
#     root's only, one line says so;
#   - the program's cost: bpftool's run count equals the frames counted,
#     and an ics stream's throughput with and without it, alternated,
#     reported (not asserted: TCG);
#   - TSO on: a 64 KB TCP skb counts as the frames it becomes on the wire,
#     and as one skb, which is what veth counts;
#   - detach removes our two filters and pins only: the matchall filter
#     and the clsact qdisc stay; detach of nothing says so; a non-Ethernet
#     device, a private mount namespace (ip netns exec) and a slot taken
#     by another filter are refused.

. "$(dirname "$0")/lib.sh"

NIC=$ICS_SRC_DIR/ics_nic.py
MTU=1500
SIZE=3000		# 3 frames of ics data at MTU 1500
PER_CH=2		# messages per channel
FOREIGN=0x88b6		# IEEE local experimental ethertype 2

ics_init ics_inject tc ethtool bpftool

nic() { python3 -S "$NIC" "$@"; }

setup()
{
	local ns addr
	ics_load heartbeat_ms=$ICS_HB_LONG && pair_add $MTU || return 1
	for ns in "$NS_A" "$NS_B"; do
		in_ns "$ns" ethtool -K veth0 tso off gso off gro off tx off rx off >/dev/null ||
			return 1
	done
	ip -n "$NS_A" addr add 10.99.0.1/24 dev veth0 && ip -n "$NS_B" addr add 10.99.0.2/24 dev veth0 &&
		ip -n "$NS_A" addr add fd99::1/64 dev veth0 nodad &&
		ip -n "$NS_B" addr add fd99::2/64 dev veth0 nodad || return 1
	# a third party's filters, before ours: they must see what we see
	tc -n "$NS_A" qdisc add dev veth0 clsact &&
		tc -n "$NS_A" filter add dev veth0 ingress pref 10 matchall action pass &&
		tc -n "$NS_A" filter add dev veth0 egress pref 10 matchall action pass || return 1
	pair_bind
}

# third_party HOOK: whether the matchall filter is still on HOOK
third_party()
{
	tc -n "$NS_A" -j filter show dev veth0 "$1" | python3 -S -c '
import json, sys
print(any(f.get("kind") == "matchall" for f in json.load(sys.stdin)))'
}

attach()
{
	local out
	# a repetition (ICS_CASE_REPEAT) starts from a detached device again
	if [ -n "$(tc -n "$NS_A" filter show dev veth0 ingress pref 1)" ]; then
		in_ns "$NS_A" icsctl nic detach veth0 >/dev/null || return 1
	fi
	out=$(in_ns "$NS_A" icsctl nic attach veth0 2>&1) || { fail "nic attach: $out"; return 1; }
	[[ $out == "nic: veth0: counting every frame"* ]] || { fail "nic attach said: $out"; return 1; }
	expect_err 1 "icsctl: nic attach: veth0: already attached \(icsctl nic detach veth0 first\)" \
		in_ns "$NS_A" icsctl nic attach veth0 || return 1
	# the loader is gone; its program counts (a heartbeat each way, an ACK)
	in_ns "$NS_A" python3 -S "$NIC" snap veth0 "$ICS_TMP/n0" --matchall || return 1
	in_ns "$NS_A" icsctl send node 2 channel TEST size 10 count 1 --wait >/dev/null || return 1
	in_ns "$NS_A" python3 -S "$NIC" snap veth0 "$ICS_TMP/n1" --matchall || return 1
	nic check "$ICS_TMP/n0" "$ICS_TMP/n1" "tx ics/TEST frames >= 1" "rx ics frames >= 1" &&
		assert_eq "attached (rx, tx)" "True True" \
			"$(in_ns "$NS_A" icstat -j nic veth0 | jget '"%s %s" % (j["nic"]["attached"]["rx"], j["nic"]["attached"]["tx"])')"
}

# An ics message of SIZE bytes on every channel, PER_CH times, each on its own.
ics_mix()
{
	local ch
	for ch in "${ICS_CHANNELS[@]}"; do
		send_wait_ok "$NS_A" 2 "$ch" $SIZE $PER_CH || return 1
	done
}

# Everything else: ARP (the neighbour entry flushed first), ping, ping6,
# UDP to a listener, a TCP transfer, and raw frames both ways.
other_mix()
{
	ip -n "$NS_A" neigh flush dev veth0 && ip -n "$NS_B" neigh flush dev veth0 || return 1
	in_ns "$NS_A" ping -q -c 3 -i 0.2 10.99.0.2 >/dev/null || { fail "ping"; return 1; }
	in_ns "$NS_A" ping -q -6 -c 3 -i 0.2 fd99::2 >/dev/null || { fail "ping6"; return 1; }
	in_ns "$NS_B" python3 -S -c '
import socket, sys
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("10.99.0.2", 9999))
t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("10.99.0.2", 9998)); t.listen(1)
print("ready", flush=True)
c, _ = t.accept()
n = 0
while True:
    b = c.recv(65536)
    if not b: break
    n += len(b)
c.close()
u.settimeout(5)
got = 0
try:
    while got < 20:
        u.recv(2000); got += 1
except socket.timeout:
    pass
print(n, got)' > "$ICS_TMP/sink" &
	local sink=$!
	wait_eq 30 ready "UDP/TCP sink" head -n 1 "$ICS_TMP/sink" || return 1
	in_ns "$NS_A" python3 -S -c '
import socket
t = socket.create_connection(("10.99.0.2", 9998)); t.sendall(bytes(100000)); t.close()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(20): u.sendto(bytes(500), ("10.99.0.2", 9999))' || return 1
	wait $sink
	assert_eq "sink: TCP bytes, UDP datagrams" "100000 20" "$(tail -n 1 "$ICS_TMP/sink")" ||
		return 1
	in_ns "$NS_A" python3 -S "$NIC" send veth0 $MAC_B $FOREIGN 7 &&
		in_ns "$NS_B" python3 -S "$NIC" send veth0 $MAC_A $FOREIGN 5 300 &&
		in_ns "$NS_A" python3 -S "$NIC" send veth0 $MAC_B llc 4 &&
		in_ns "$NS_B" python3 -S "$NIC" send veth0 $MAC_A vlan 3
}

# snap_a NAME: a reading of node 1's veth0 and its ics counters
snap_a()
{
	in_ns "$NS_A" python3 -S "$NIC" snap veth0 "$ICS_TMP/$1.nic" --matchall &&
		in_ns "$NS_A" icstat -j show > "$ICS_TMP/$1.show" &&
		in_ns "$NS_A" icstat -j links > "$ICS_TMP/$1.links"
}

mix_exact()
{
	local frames=$(((SIZE + MTU - ICS_HDR - 1) / (MTU - ICS_HDR) * PER_CH)) ch want=()
	snap_a m0 || return 1
	ics_mix && other_mix || return 1
	snap_a m1 || return 1
	for ch in "${ICS_CHANNELS[@]}"; do
		want+=("tx ics/$ch frames >= $frames")
	done
	nic check "$ICS_TMP/m0.nic" "$ICS_TMP/m1.nic" "${want[@]}" \
		"tx ARP frames >= 1" "rx ARP frames >= 1" \
		"tx IPv4/ICMP frames == 3" "rx IPv4/ICMP frames == 3" \
		"tx IPv6/ICMPv6 frames >= 3" "rx IPv6/ICMPv6 frames >= 3" \
		"tx IPv4/UDP frames == 20" "rx IPv4/UDP frames == 0" \
		"tx IPv4/TCP bytes >= 100000" "rx IPv4/TCP frames >= 1" \
		"tx $FOREIGN frames == 7" "rx $FOREIGN frames == 5" "rx $FOREIGN bytes == 1500" \
		"tx 802.3/LLC frames == 4" "rx 802.3/LLC frames == 0" \
		"rx VLAN frames == 3" "rx VLAN bytes == 300" "tx VLAN frames == 0" \
		"tx ics/malformed frames == 0" "rx ics/malformed frames == 0"
}

# ics's own counters over the same span (mix_exact's readings m0 and m1)
ics_exact()
{
	python3 -S - "$ICS_TMP" "$((MTU - ICS_HDR))" "$SIZE" "$PER_CH" <<'EOF'
import json, sys
d, pay, size, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
nic = [json.load(open("%s/m%d.nic" % (d, i))) for i in (0, 1)]
show = [json.load(open("%s/m%d.show" % (d, i)))["stats"] for i in (0, 1)]
links = [json.load(open("%s/m%d.links" % (d, i)))["links"] for i in (0, 1)]

def cls(i, name, dr):
    c = [c for c in nic[i]["nic"]["classes"] if c["class"] == name]
    return c[0][dr]["frames"] if c else 0

def grew(name, dr):
    return cls(1, name, dr) - cls(0, name, dr)

def ics(dr):
    return sum(grew(c["class"], dr) for c in nic[1]["nic"]["classes"] if c["ics"])

def stat(k):
    return show[1][k] - show[0][k]

rx_keys = ("rx_frames rx_bad_len rx_bad_version rx_bad_cluster rx_bad_node rx_bad_channel "
           "rx_bad_type rx_bad_frag rx_dup_frag rx_node_conflict rx_bad_check rx_bad_hello "
           "rx_peer_down rx_bad_session rx_dup_frames rx_ooo_frames rx_over_window "
           "rx_unconfirmed reasm_nomem reasm_overrun rx_auth_bad rx_no_key rx_replay").split()
retx = sum(l["retransmits"] for l in links[1]) - sum(l["retransmits"] for l in links[0])
data = sum(grew("ics/" + c, "tx") for c in
           "BOOT PRI0 PRI1 CFS NET CLSM DRD TUNL CLUA KEVM CFSR RBLD KCH DLM TEST CNX".split())
per_msg = (size + pay - 1) // pay
checks = [
    ("tx: every ics class (ics tx_frames)", ics("tx"), stat("tx_frames")),
    ("rx: every ics class (ics: accepted or counted dropped)", ics("rx"),
     sum(stat(k) for k in rx_keys)),
    ("tx ics/hello (hello_tx)", grew("ics/hello", "tx"), stat("hello_tx")),
    ("rx ics/hello (hello_rx + rx_bad_hello)", grew("ics/hello", "rx"),
     stat("hello_rx") + stat("rx_bad_hello")),
    ("tx ics/ack (tx_acks)", grew("ics/ack", "tx"), stat("tx_acks")),
    ("tx ics/reset (tx_resets)", grew("ics/reset", "tx"), stat("tx_resets")),
    ("tx data frames (16 x %d messages x %d frames + %d retransmitted)" % (per, per_msg, retx),
     data, 16 * per * per_msg + retx),
]
ok = True
for what, got, want in checks:
    print("# %s: %d, want %d" % (what, got, want))
    if got != want:
        print("# FAIL: %s: %d != %d" % (what, got, want))
        ok = False
sys.exit(0 if ok else 1)
EOF
}

# A DATA frame with a bad CRC32C from node 2: ics drops and counts it
# (rx_bad_check), the NIC view counts it as ics/TEST.
bad_check()
{
	local inc
	inc=$(ics_incarnation "$NS_A") || return 1
	snap_a b0 || return 1
	in_ns "$NS_B" "$ICS_INJECT" -i veth0 -d $MAC_A --src-node 2 --dst-node 1 \
		--dst-inc "$inc" --len 64 --bad-check || return 1
	wait_eq 10 "$(($(jget 'j["stats"]["rx_bad_check"]' < "$ICS_TMP/b0.show") + 1))" \
		"node 1 rx_bad_check" stat_get "$NS_A" rx_bad_check || return 1
	snap_a b1 || return 1
	nic check "$ICS_TMP/b0.nic" "$ICS_TMP/b1.nic" "rx ics/TEST frames == 1" \
		"rx ics/TEST bytes == $((14 + ICS_HDR + 64))"
}

# The matchall filters (pref 10) passed every frame ours (pref 1) counted,
# on both hooks (ics_nic.py check compares them in every reading).
third_party_sees()
{
	snap_a t0 || return 1
	in_ns "$NS_A" ping -q -c 5 -i 0.2 10.99.0.2 >/dev/null || return 1
	send_wait_ok "$NS_A" 2 CFS 5000 3 || return 1
	snap_a t1 || return 1
	nic check "$ICS_TMP/t0.nic" "$ICS_TMP/t1.nic" "tx IPv4/ICMP frames == 5" \
		"rx IPv4/ICMP frames == 5" "tx ics/CFS frames >= 12"
}

forms()
{
	local out
	out=$(in_ns "$NS_A" icstat nic veth0) || { fail "icstat nic: $out"; return 1; }
	echo "$out" | sed 's/^/#   /'
	[[ $out == *"counting every frame received (rx) and sent (tx)"* ]] &&
		echo "$out" | grep -Eq '^ics/TEST +[0-9]' &&
		echo "$out" | grep -Eq '^total +[0-9]' &&
		echo "$out" | grep -Eq '^Share of the bytes: ics [0-9.]+ %, ' ||
		{ fail "icstat nic: table or share line missing"; return 1; }
	# the default device is ics's own
	assert_eq "icstat nic (no device): ifname" veth0 \
		"$(in_ns "$NS_A" icstat -j nic | jget 'j["nic"]["ifname"]')" || return 1
	out=$(in_ns "$NS_A" icstat --csv -i 1 -c 2 nic veth0) || { fail "icstat --csv: $out"; return 1; }
	echo "$out" | grep -q '^time,elapsed_s,node,interval,report,channel,peer,dir,row,metric,value$' &&
		echo "$out" | grep -Eq ',0,nic:veth0,ics/TEST,,tx,,frames,[0-9]+$' &&
		echo "$out" | grep -Eq ',0,nic:veth0,,,rx,,attached,1$' ||
		{ fail "icstat --csv nic"; echo "$out" | head -n 5 | sed 's/^/#   /'; return 1; }
	out=$(in_ns "$NS_A" icstat -i 1 -c 2 -r nic veth0) &&
		[[ $out == *"Interval 1"*"per second"* ]] ||
		{ fail "icstat -i 1 -c 2 -r nic: $out"; return 1; }
	in_ns "$NS_A" icstat prometheus > "$ICS_TMP/prom" || { fail "icstat prometheus"; return 1; }
	grep -q '^ics_nic_frames_total{ifname="veth0",class="ics/TEST",direction="tx"} [1-9]' \
		"$ICS_TMP/prom" || { fail "prometheus: no ics_nic_frames_total for ics/TEST"; return 1; }
	if command -v promtool >/dev/null; then
		out=$(promtool check metrics < "$ICS_TMP/prom" 2>&1) ||
			{ fail "promtool check metrics: $out"; return 1; }
	else
		info "promtool not installed: prometheus output not linted"
	fi
	expect_err 1 "icstat: nic: lo: no counters \(attach them with icsctl nic attach lo\)" \
		in_ns "$NS_A" icstat nic lo
}

# Reading needs no privilege on 6.1 and 6.12 (since 5.19 the sysctl
# kernel.unprivileged_bpf_disabled refuses only map creation and program
# loading): the pins are 0644. Where bpffs itself is root's only (systemd
# mounts it 0700), one line says so.
unprivileged()
{
	local out rc mode
	mode=$(stat -c %a /sys/fs/bpf) || return 1
	chmod 0755 /sys/fs/bpf || return 1
	out=$(in_ns "$NS_A" setpriv --reuid=65534 --regid=65534 --clear-groups icstat nic veth0 2>&1)
	rc=$?
	chmod "$mode" /sys/fs/bpf
	[ $rc = 0 ] && [[ $out == *"ics/TEST"* ]] ||
		{ fail "as nobody, exit $rc: $out"; return 1; }
	chmod 0700 /sys/fs/bpf || return 1
	out=$(in_ns "$NS_A" setpriv --reuid=65534 --regid=65534 --clear-groups icstat nic veth0 2>&1)
	rc=$?
	chmod "$mode" /sys/fs/bpf
	[ $rc = 1 ] && [[ $out =~ ^"icstat: nic: /sys/fs/bpf/ics/"[0-9]+/[0-9]+"/stats: Permission denied (bpffs is mounted for root only: run as root)"$ ]] ||
		{ fail "as nobody, bpffs 0700, exit $rc: $out"; return 1; }
}

cost()
{
	local id_rx id_tx
	sysctl -qw kernel.bpf_stats_enabled=1 || return 1
	bpftool -j prog show > "$ICS_TMP/p0" || return 1
	snap_a c0 || return 1
	send_wait_ok "$NS_A" 2 CFS 20000 5 || return 1
	snap_a c1 || return 1
	bpftool -j prog show > "$ICS_TMP/p1" || return 1
	sysctl -qw kernel.bpf_stats_enabled=0
	python3 -S - "$ICS_TMP" <<'EOF' || return 1
import json, sys
d = sys.argv[1]
def progs(f):
    return {p["name"]: p for p in json.load(open(f)) if p.get("name") in ("ics_nic_rx", "ics_nic_tx")}
p0, p1 = progs(d + "/p0"), progs(d + "/p1")
n0, n1 = (json.load(open("%s/c%d.nic" % (d, i)))["nic"] for i in (0, 1))
ok = True
for name, dr in (("ics_nic_rx", "rx"), ("ics_nic_tx", "tx")):
    runs = p1[name].get("run_cnt", 0) - p0[name].get("run_cnt", 0)
    ns = p1[name].get("run_time_ns", 0) - p0[name].get("run_time_ns", 0)
    skbs = sum(c[dr]["skbs"] for c in n1["classes"]) - sum(c[dr]["skbs"] for c in n0["classes"])
    print("# %s: %d runs, %d skbs counted, %.0f ns per run (TCG)" % (name, runs, skbs, ns / max(runs, 1)))
    # bpftool's readings bracket the counters': runs >= skbs; only what
    # crossed between a bpftool and a counters' reading (a late ACK) is more
    if not skbs <= runs <= skbs + 10 or skbs < 5:
        print("# FAIL: %s ran %d times for %d skbs" % (name, runs, skbs))
        ok = False
sys.exit(0 if ok else 1)
EOF
	command -v icsperf >/dev/null || { info "icsperf not in PATH: no throughput comparison"; return 0; }
	icsperf_cmp
}

# ics stream throughput (icsperf -k: ics_test's generator) with and without the program,
# alternated three times in this boot; reported, not asserted.
icsperf_cmp()
{
	local i on off r
	for i in 1 2 3; do
		for r in off on; do
			if [ $r = off ]; then
				in_ns "$NS_A" icsctl nic detach veth0 >/dev/null || return 1
			else
				in_ns "$NS_A" icsctl nic attach veth0 >/dev/null || return 1
			fi
			if ! in_ns "$NS_A" icsperf stream 2 -k -c CFS -s 64k -l 2 -j \
				> "$ICS_TMP/perf-$r-$i" 2>&1; then
				info "icsperf: $(tail -n 1 "$ICS_TMP/perf-$r-$i")"
				[ $r = on ] || in_ns "$NS_A" icsctl nic attach veth0 >/dev/null
				return 0
			fi
		done
	done
	python3 -S - "$ICS_TMP" <<'EOF'
import json, sys
d = sys.argv[1]
def mbs(r, i):
    return json.load(open("%s/perf-%s-%d" % (d, r, i)))["results"][0]["mb_s"]
on = [mbs("on", i) for i in (1, 2, 3)]
off = [mbs("off", i) for i in (1, 2, 3)]
print("# ics stream 64 KiB, MB/s without the program %s, with it %s" % (off, on))
if all(off) and all(on):
    print("# ratio with/without (medians): %.3f" % (sorted(on)[1] / sorted(off)[1]))
EOF
}

detach()
{
	local out
	out=$(in_ns "$NS_A" icsctl nic detach veth0 2>&1) || { fail "detach: $out"; return 1; }
	assert_eq "detach said" "nic: veth0: detached; its counters are gone" "$out" || return 1
	tc -n "$NS_A" filter show dev veth0 ingress | grep -q ics_nic &&
		{ fail "ingress filter still there"; return 1; }
	tc -n "$NS_A" filter show dev veth0 egress | grep -q ics_nic &&
		{ fail "egress filter still there"; return 1; }
	[ "$(third_party ingress) $(third_party egress)" = "True True" ] ||
		{ fail "the matchall filters went with ours"; return 1; }
	tc -n "$NS_A" qdisc show dev veth0 | grep -q clsact || { fail "clsact went"; return 1; }
	expect_err 1 "icsctl: nic detach: veth0: not attached" in_ns "$NS_A" icsctl nic detach veth0 &&
		expect_err 1 "icstat: nic: veth0: no counters \(attach them with icsctl nic attach veth0\)" \
			in_ns "$NS_A" icstat nic veth0 &&
		expect_err 1 "icsctl: nic attach: nosuch: no such device" in_ns "$NS_A" icsctl nic attach nosuch &&
		ip -n "$NS_A" link add sit9 type sit local 10.99.0.1 remote 10.99.0.2 &&
		expect_err 1 "icsctl: nic attach: sit9: not an Ethernet device: its frames have no Ethernet header to classify" \
			in_ns "$NS_A" icsctl nic attach sit9 &&
		expect_err 1 "icsctl: nic attach: no bpffs on /sys/fs/bpf in this mount namespace \(ip netns exec mounts a fresh /sys\): use nsenter --net=/run/netns/NAME, or mount bpffs there" \
			ip netns exec "$NS_A" icsctl nic attach veth0 &&
		detach_foreign
}

# Priority 1 of the egress hook taken by another filter (a matchall): the
# attach fails in one line, and leaves no filter of its own on ingress.
detach_foreign()
{
	local rc=0
	tc -n "$NS_A" filter add dev veth0 egress pref 1 handle 0x1c5 protocol all matchall action pass ||
		return 1
	expect_err 1 "icsctl: nic attach: veth0: .*egress filter.*" in_ns "$NS_A" icsctl nic attach veth0 || rc=1
	if tc -n "$NS_A" filter show dev veth0 ingress | grep -q ics_nic; then
		fail "a failed attach left its ingress filter"
		rc=1
	fi
	tc -n "$NS_A" filter del dev veth0 egress pref 1 handle 0x1c5 matchall
	return $rc
}

# TSO on: TCP hands the device 64 KB skbs. The NIC view counts the frames
# they become on the wire (at least one per MSS of payload) and the skbs;
# veth, which passes an skb to its peer whole, counts skbs.
gso()
{
	local rc=0
	in_ns "$NS_A" ethtool -K veth0 tx on sg on tso on gso on >/dev/null || return 1
	snap_a g0 || rc=1
	in_ns "$NS_B" python3 -S -c '
import socket
t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("10.99.0.2", 9997)); t.listen(1)
print("ready", flush=True)
c, _ = t.accept()
while c.recv(1 << 20): pass' > "$ICS_TMP/gsink" &
	local sink=$!
	wait_eq 30 ready "TCP sink" head -n 1 "$ICS_TMP/gsink" || rc=1
	[ $rc = 0 ] && in_ns "$NS_A" python3 -S -c '
import socket
t = socket.create_connection(("10.99.0.2", 9997)); t.sendall(bytes(4 << 20)); t.close()' || rc=1
	[ $rc = 0 ] || kill $sink 2>/dev/null
	wait $sink
	[ $rc = 0 ] && snap_a g1 || rc=1
	in_ns "$NS_A" ethtool -K veth0 tso off gso off tx off >/dev/null || rc=1
	[ $rc = 0 ] || return 1
	nic check --skbs "$ICS_TMP/g0.nic" "$ICS_TMP/g1.nic" \
		"tx IPv4/TCP frames >= $(((4 << 20) / 1448))" "tx IPv4/TCP bytes >= $((4 << 20))" &&
		python3 -S - "$ICS_TMP" <<'EOF'
import json, sys
a, b = (json.load(open("%s/g%d.nic" % (sys.argv[1], i)))["nic"] for i in (0, 1))
def tcp(s, k):
    c = [c for c in s["classes"] if c["class"] == "IPv4/TCP"]
    return c[0]["tx"][k] if c else 0
frames, skbs = tcp(b, "frames") - tcp(a, "frames"), tcp(b, "skbs") - tcp(a, "skbs")
nbytes = tcp(b, "bytes") - tcp(a, "bytes")
print("# TCP, 4 MiB with TSO: %d skbs, %d frames on the wire, %d bytes" % (skbs, frames, nbytes))
# every frame on the wire carries Ethernet, IPv4 and TCP headers (66 bytes
# with timestamps): counted only if a GSO skb's headers were repeated
ok = 0 < skbs < frames and nbytes >= (4 << 20) + 66 * frames
sys.exit(0 if ok else 1)
EOF
}

# after a failed case, the pins too (the filters go with the namespace)
teardown()
{
	[ -n "$(tc -n "$NS_A" filter show dev veth0 ingress pref 1 2>/dev/null)" ] &&
		in_ns "$NS_A" icsctl nic detach veth0 >/dev/null
	ics_teardown_check
}

step_add setup
case_add "attach: counting after icsctl exits; a second attach refused" attach
case_add "ics on every channel, ARP, ping, ping6, UDP, TCP, raw, LLC, VLAN: the classes sum to veth's counts, each in its class" mix_exact
case_add "ics's classes equal ics's own counters: frames, heartbeats, ACKs, data per channel" ics_exact
case_add "a frame ics drops (bad CRC32C) is still counted" bad_check
case_add "a third-party filter after ours sees every frame ours counted" third_party_sees
case_add "icstat nic: table and share line, -j, --csv, -i -r, prometheus" forms
case_add "an unprivileged reader reads; where bpffs is root's only, one line says why not" unprivileged
case_add "cost: the programs ran once per frame counted; throughput with and without" cost
case_add "TSO on: 64 KB skbs counted as the frames they become, and as skbs" gso
case_add "detach removes only ours; detach of nothing says so" detach
case_once "teardown: netns deleted, module removed, kernel log clean" teardown
cases_run
