# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers for the ics selftests (sourced, not run).
#
# Environment:
#   ICS_KO     path of ics.ko to insmod (default ../build/$(uname -r)/kmod/ics.ko)
#   ICS_TEST_KO  path of ics_test.ko, the test service (default: beside ICS_KO)
#   ICS_WITH_TEST  1 (default): ics_load loads ics_test.ko too, and ics_bind
#              attaches it to ICS_ATTACH (default: all 16 channels), so that
#              generator traffic (icsctl send) is checked and counted; 0:
#              ics.ko alone (a test sets it before ics_init)
#   PATH       must hold icstat and icsctl (default: ../user is appended)
#   KSFT_DIR   tools/testing/selftests of a kernel tree, for ktap_helpers.sh
#   ICS_TIMEOUT_SCALE  multiply every wait deadline (default 1; TCG: the
#              harness sets it)
#
# Conventions: every test prints KTAP through ktap_helpers.sh, runs its cases
# through ics_case (pass/fail/skip per case), polls with a deadline instead of
# sleeping, and leaves through ics_cleanup (trap): netns deleted, init-netns
# links deleted, module removed.

ICS_SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ICS_LOGICAL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ICS_TOP=$(cd "$ICS_SRC_DIR/.." && pwd -P)
ICS_TEST=$(basename "$0" .sh)

for _d in "${KSFT_DIR:-}/kselftest" "$ICS_LOGICAL_DIR/../kselftest" \
	  "$ICS_TOP/build/ksft/tools/testing/selftests/kselftest"; do
	if [ -r "$_d/ktap_helpers.sh" ]; then
		# shellcheck source=/dev/null
		. "$_d/ktap_helpers.sh"
		break
	fi
done
unset _d
if ! command -v ktap_print_header >/dev/null; then
	echo "TAP version 13"
	echo "1..0 # SKIP ktap_helpers.sh not found (run scripts/ksft-extract.sh or set KSFT_DIR)"
	exit 4
fi

ICS_CHANNELS=(BOOT PRI0 PRI1 CFS NET CLSM DRD TUNL CLUA KEVM CFSR RBLD KCH DLM TEST CNX)
ICS_CH_TEST=14
ICS_CH_CNX=15
ICS_HB_LONG=3600000	# heartbeat_ms that keeps periodic heartbeats out of a test
: "${ICS_INJECT:=$ICS_SRC_DIR/ics_inject}"	# another build's, to run against its module
ICS_FUZZ=$ICS_SRC_DIR/ics_fuzz
# sizeof(struct ics_wire_hdr), from the UAPI header through ics_inject.
ICS_HDR=$("$ICS_INJECT" --hdr-size 2>/dev/null || echo 84)
# sizeof(struct ics_wire_hello), for ics_model.py's accounting of CNX.
ICS_HELLO_LEN=$("$ICS_INJECT" --hello-size 2>/dev/null || echo 176)
export ICS_HELLO_LEN
ICS_HIST_LABELS="0 1 2 4 8 16 32 64 128 256 512 1k 2k 4k 8k 16k 32k 64k 128k 256k 512k 1m 2m 4m 8m 16m more"
ICS_STAT_KEYS="tx_frames tx_bytes tx_errors rx_frames rx_bytes rx_bad_len rx_bad_version rx_bad_cluster rx_bad_node rx_bad_channel rx_bad_type rx_bad_frag rx_dup_frag rx_node_conflict reasm_timeout reasm_evicted reasm_nomem hello_tx hello_rx rx_bad_check rx_bad_session tx_retransmits rx_dup_frames rx_ooo_frames rx_over_window tx_acks rx_acks tx_resets rx_resets link_resets msgs_done msgs_failed rx_dup_msgs tx_eagain rx_peer_down tx_hostdown hb_late events_lost rx_bad_hello hb_deferred dev_rx_drops dev_close_drops tx_bundles tx_bundled rx_bundles rx_bundled rx_pauses tx_pauses rx_held rx_held_full rx_held_drops rx_unconfirmed rx_auth_bad rx_no_key rx_replay tx_auth_errors reasm_overrun"
ICS_BAD_KEYS="rx_bad_len rx_bad_version rx_bad_cluster rx_bad_node rx_bad_channel rx_bad_type rx_bad_frag rx_dup_frag rx_node_conflict rx_bad_check rx_bad_hello rx_peer_down rx_auth_bad rx_no_key"
# Kernel log lines that fail a test run (also used by scripts/vmtest.sh).
ICS_DMESG_BAD='WARNING:|BUG:|Oops|cut here|KASAN|possible recursive locking|lockdep|kmemleak|sleeping function called from invalid context|general protection fault|Call Trace'
ICS_DMESG_OK='loading out-of-tree module taints kernel|module verification failed|ics-selftest: '

ICS_PFX="ics$$"
ICS_BG_PIDS=()		# background helpers (monitors) to kill on exit
ICS_NS=()		# netns to delete on exit
ICS_INIT_LINKS=()	# init-netns links to delete on exit
ICS_TMP=""
ICS_SCALE=${ICS_TIMEOUT_SCALE:-1}
ICS_DMESG_MARK=""

info() { echo "# $*"; }
fail() { echo "# FAIL: $*"; return 1; }

# -------------------------------------------------------------- setup ----

# ics_init [needs...]: KTAP header, prerequisites (skip with a reason when
# missing), traps, a clean start (no ics module loaded). "needs" may name
# extra commands: ics_inject, ics_fuzz, tc, setpriv, bridge.
ics_init()
{
	ktap_print_header

	[ "$(id -u)" = 0 ] || ics_skip_all "must run as root"
	local c
	for c in ip python3 insmod rmmod "$@"; do
		case $c in
		ics_inject | ics_fuzz)
			[ -x "$ICS_SRC_DIR/$c" ] ||
				ics_skip_all "$c not built (make -C selftests)"
			;;
		*)
			command -v "$c" >/dev/null || ics_skip_all "$c not installed"
			;;
		esac
	done

	: "${ICS_KO:=$ICS_TOP/build/$(uname -r)/kmod/ics.ko}"
	[ -r "$ICS_KO" ] || ics_skip_all "ics.ko not found: $ICS_KO (make modules, or set ICS_KO)"
	case ":$PATH:" in
	*":$ICS_TOP/user:"*) ;;
	*) PATH=$PATH:$ICS_TOP/user ;;
	esac
	: "${ICS_TEST_KO:=$(dirname "$ICS_KO")/ics_test.ko}"
	: "${ICS_WITH_TEST:=1}"
	if [ "$ICS_WITH_TEST" = 1 ] && [ ! -r "$ICS_TEST_KO" ]; then
		ics_skip_all "ics_test.ko not found: $ICS_TEST_KO (make modules, or set ICS_TEST_KO)"
	fi
	export PATH ICS_KO ICS_TEST_KO ICS_WITH_TEST
	for c in icstat icsctl; do
		command -v $c >/dev/null || ics_skip_all "$c not in PATH (make -C user)"
	done

	ICS_TMP=$(mktemp -d /tmp/ics-selftest.XXXXXX)
	trap ics_cleanup EXIT
	trap 'exit 143' TERM INT HUP

	if ics_loaded; then
		info "ics already loaded; removing it first"
		ics_unload || ics_bail "cannot remove a previously loaded ics module"
	fi
	ics_dmesg_mark
}

ics_skip_all()
{
	ktap_skip_all "$*"
	exit "$KSFT_SKIP"
}

ics_bail()
{
	ktap_exit_fail_msg "$*"
}

ics_cleanup()
{
	local ns l
	set +e
	stress_kill
	for l in "${ICS_BG_PIDS[@]}"; do
		kill -TERM "$l" 2>/dev/null && wait "$l" 2>/dev/null
	done
	ICS_BG_PIDS=()
	for ns in "${ICS_NS[@]}"; do
		ip netns del "$ns" 2>/dev/null
	done
	ICS_NS=()
	for l in "${ICS_INIT_LINKS[@]}"; do
		ip link del "$l" 2>/dev/null
	done
	ICS_INIT_LINKS=()
	if ics_loaded; then
		ics_unload || echo "# cleanup: rmmod ics failed" >&2
	fi
	[ -n "$ICS_TMP" ] && rm -rf "$ICS_TMP"
	echo "# $ICS_TEST: ${SECONDS}s"
}

# ics_case DESCRIPTION CMD [ARGS...]: run one KTAP test case; exit 4 from
# CMD means skip.
ics_case()
{
	local desc=$1 rc
	shift
	# Mark the kernel log, so a warning can be matched to its case.
	echo "ics-selftest: $ICS_TEST case $KTAP_TESTNO: $desc" > /dev/kmsg 2>/dev/null
	"$@"
	rc=$?
	if [ $rc = 0 ]; then
		ktap_test_pass "$desc"
	elif [ $rc = "$KSFT_SKIP" ]; then
		ktap_test_skip "$desc"
	else
		ktap_test_fail "$desc"
	fi
	return $rc
}

# Table-driven tests: case_add DESCRIPTION CMD [ARGS...] adds a KTAP case,
# step_add CMD [ARGS...] a setup step between cases (bail out on failure);
# cases_run sets the plan from the table, runs it and finishes. To chase
# one case, ICS_CASES=3,10 runs only those (numbered as in the KTAP
# output; the setup steps all run) and skips the others (in a run of
# several files, ICS_CASES=overload:7/auth:7,9 selects in those files
# and leaves the others whole), and
# ICS_CASE_REPEAT=N runs each selected case N times (stopping at its
# first failure): only cases that leave the set-up as they found it can
# repeat (not, say, dev_api.sh's peer_left, which unbinds node 2).
# case_once adds a case that runs once whatever ICS_CASE_REPEAT says (a
# teardown: its second run would find nothing to tear down).
ICS_CASE_DESC=()
ICS_CASE_CMD=()
ICS_CASE_ONCE=()
case_add()
{
	ICS_CASE_DESC+=("$1")
	ICS_CASE_ONCE+=(0)
	shift
	ICS_CASE_CMD+=("$(printf '%q ' "$@")")
}

case_once()
{
	case_add "$@"
	ICS_CASE_ONCE[-1]=1
}

step_add()
{
	ICS_CASE_DESC+=("")
	ICS_CASE_ONCE+=(1)
	ICS_CASE_CMD+=("$(printf '%q ' "$@")")
}

# The cases ICS_CASES selects in this file, comma-separated; empty: all.
# Groups are separated by slashes: "3,10" for every file, "auth:7,9" for
# auth.sh alone.
cases_selected()
{
	local g grp=() own=()
	IFS=/ read -ra grp <<< "${ICS_CASES:-}"
	for g in "${grp[@]}"; do
		case $g in
		"$ICS_TEST":*) own+=("${g#*:}") ;;
		*:*) ;;
		*) own+=("$g") ;;
		esac
	done
	(IFS=,; echo "${own[*]}")
}

cases_run()
{
	local i n=0 sel
	sel=$(cases_selected)
	for i in "${!ICS_CASE_DESC[@]}"; do
		[ -n "${ICS_CASE_DESC[$i]}" ] && n=$((n + 1))
	done
	ktap_set_plan $n
	n=0
	for i in "${!ICS_CASE_DESC[@]}"; do
		if [ -z "${ICS_CASE_DESC[$i]}" ]; then
			eval "${ICS_CASE_CMD[$i]}" || ics_bail "setup step failed: ${ICS_CASE_CMD[$i]}"
			continue
		fi
		n=$((n + 1))
		if [ -n "$sel" ] && [[ ",$sel," != *",$n,"* ]]; then
			ktap_test_skip "${ICS_CASE_DESC[$i]} (not in ICS_CASES=$ICS_CASES)"
			continue
		fi
		if [ "${ICS_CASE_ONCE[$i]}" = 1 ]; then
			ics_case "${ICS_CASE_DESC[$i]}" eval "${ICS_CASE_CMD[$i]}"
		else
			ics_case "${ICS_CASE_DESC[$i]}" case_repeat "${ICS_CASE_CMD[$i]}"
		fi
	done
	ktap_finished
}

case_repeat()
{
	local k
	for ((k = 1; k < ${ICS_CASE_REPEAT:-1}; k++)); do
		echo "# repetition $k of $ICS_CASE_REPEAT"
		eval "$1" || return
	done
	eval "$1"
}

# Deadline in seconds, scaled for slow (TCG) guests.
ics_deadline() { echo $((SECONDS + $1 * ICS_SCALE)); }

# ics_slow_ms MS: a module timeout of MS milliseconds as it must be on a
# kernel ICS_TIMEOUT_SCALE calls slower than vmtest's TCG guests (3), the
# KASAN/lockdep kernel's 10: MS there, MS * scale / 3 beyond. What a slow
# kernel stretches is the machine's pauses, not the link's.
ics_slow_ms() { echo $((ICS_SCALE > 3 ? $1 * ICS_SCALE / 3 : $1)); }

# ----------------------------------------------------------- module -----

ics_loaded() { grep -q '^ics ' /proc/modules; }
ics_test_loaded() { grep -q '^ics_test ' /proc/modules; }

# ics_test_load [PARAMS...]: the test service (ics.ko loaded first).
ics_test_load()
{
	local out
	[ -r "$ICS_TEST_KO" ] || { fail "ics_test.ko not found: $ICS_TEST_KO (make modules)"; return 1; }
	out=$(insmod "$ICS_TEST_KO" "$@" 2>&1) || { fail "insmod $ICS_TEST_KO $*: $out"; return 1; }
}

# tsvc_get NS EXPR: EXPR over `icsctl test show -j` (j), e.g.
# tsvc_get A 'j["channels"]["TEST"]["rx_ok"]'
tsvc_get() { in_ns "$1" icsctl test show -j | jget "$2"; }

# ics_load [PARAMS...]: ics.ko with PARAMS, and the test service unless
# ICS_WITH_TEST=0.
ics_load()
{
	local out
	if ! out=$(insmod "$ICS_KO" "$@" 2>&1); then
		echo "# insmod $ICS_KO $*: $out"
		return 1
	fi
	ics_loaded || { fail "insmod $* succeeded but ics is not in /proc/modules"; return 1; }
	[ "$ICS_WITH_TEST" = 1 ] || return 0
	ics_test_load
}

# tsvc_attach NS CHANNEL...|all|none: the channels NS's test service
# receives on from now on.
tsvc_attach()
{
	local ns=$1 out
	shift
	out=$(in_ns "$ns" icsctl test attach "$@" 2>&1) ||
		fail "$ns: icsctl test attach $*: $out"
}

# rmmod ics_test, then ics, retrying while namespaces are still being torn
# down (and, for ics_test, while a run still pins it).
ics_unload()
{
	local deadline out mod
	deadline=$(ics_deadline 30)
	for mod in ics_test ics; do
		while grep -q "^$mod " /proc/modules; do
			out=$(rmmod $mod 2>&1) && break
			if [ $SECONDS -ge "$deadline" ]; then
				echo "# rmmod $mod: $out"
				return 1
			fi
			sleep 0.1
		done
	done
	! ics_loaded || fail "ics still loaded after rmmod"
}

# ---------------------------------------------------------- netns --------

ns_add()	# NAME
{
	ip netns add "$1" || return 1
	ICS_NS+=("$1")
	ip -n "$1" link set lo up
}

ns_del()	# NAME
{
	local ns i keep=()
	ip netns del "$1" || return 1
	for ns in "${ICS_NS[@]}"; do
		[ "$ns" = "$1" ] || keep+=("$ns")
	done
	ICS_NS=("${keep[@]}")
}

# in_ns NS CMD...: run CMD in netns NS ("" = the init netns). CMD may be
# any program (ns_cmd NS prefixes one, for `timeout` and the like). nsenter
# enters only the network namespace; ip netns exec also makes a mount
# namespace and remounts /sys, which costs most of a second in a TCG guest.
in_ns()
{
	local ns=$1
	shift
	if [ -z "$ns" ]; then
		"$@"
	else
		nsenter --net="$ICS_NETNS_DIR/$ns" "$@"
	fi
}
ICS_NETNS_DIR=/run/netns
[ -d $ICS_NETNS_DIR ] || ICS_NETNS_DIR=/var/run/netns

# veth_add NS1 DEV1 MAC1 NS2 DEV2 MAC2 [MTU]: a veth pair between two netns,
# up, with fixed MACs.
veth_add()
{
	local ns1=$1 d1=$2 m1=$3 ns2=$4 d2=$5 m2=$6 mtu=${7:-1500}
	ip -n "$ns1" link add "$d1" address "$m1" mtu "$mtu" type veth \
		peer name "$d2" address "$m2" mtu "$mtu" netns "$ns2" || return 1
	ip -n "$ns1" link set "$d1" up && ip -n "$ns2" link set "$d2" up
}

mac_of() { ip -n "$1" -j link show dev "$2" | python3 -S -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])'; }

# Two members, the commonest topology: NS_A (node 1, veth0 MAC_A) and NS_B
# (node 2, veth0 MAC_B) on one veth pair.
NS_A=$ICS_PFX-a
NS_B=$ICS_PFX-b
MAC_A=02:00:00:00:00:01
MAC_B=02:00:00:00:00:02

# pair_add [MTU]: the two netns and their veth pair (module loaded already).
# shellcheck disable=SC2120  # MTU is optional
pair_add()
{
	ns_add "$NS_A" && ns_add "$NS_B" || return 1
	veth_add "$NS_A" veth0 $MAC_A "$NS_B" veth0 $MAC_B "${1:-1500}" || return 1
	: > "$ICS_TMP/sends"
}

# pair_bind: bind node 1 and node 2, each reachable by the other.
pair_bind()
{
	ics_bind "$NS_A" veth0 1 && ics_bind "$NS_B" veth0 2 || return 1
	ics_model reachable 30 "$NS_A:2" "$NS_B:1"
}

# pair_setup [INSMOD PARAMS...]: load the module (default heartbeat_ms long, so
# periodic hellos stay out of the counters), two bound members.
pair_setup()
{
	ics_load "${@:-heartbeat_ms=$ICS_HB_LONG}" && pair_add && pair_bind
}

# Members on one bridge (netns NS_BR, br0): member n (1..) in netns
# ${ICS_MEMBER_NS[n]}, eth0 02:00:00:00:00:0n, bridge port pn. Bridge ports
# get MTU 9000 so members can change theirs; members start at 1500.
NS_BR=$ICS_PFX-br
ICS_MEMBER_NS=("")

# bridge_add N: the bridge and N members (module loaded already).
bridge_add()
{
	local n
	ns_add "$NS_BR" || return 1
	ip -n "$NS_BR" link add br0 type bridge || return 1
	ip -n "$NS_BR" link set br0 up || return 1
	for ((n = 1; n <= $1; n++)); do
		ICS_MEMBER_NS[n]=$ICS_PFX-m$n
		ns_add "${ICS_MEMBER_NS[n]}" || return 1
		veth_add "${ICS_MEMBER_NS[n]}" eth0 02:00:00:00:00:0$n \
			"$NS_BR" p$n 02:00:00:00:01:0$n 9000 || return 1
		ip -n "${ICS_MEMBER_NS[n]}" link set eth0 mtu 1500 || return 1
		ip -n "$NS_BR" link set p$n master br0 || return 1
	done
	: > "$ICS_TMP/sends"
}

# bridge_bind N: bind members 1..N as nodes 1..N; every pair reachable.
bridge_bind()
{
	local n m pairs=()
	for ((n = 1; n <= $1; n++)); do
		ics_bind "${ICS_MEMBER_NS[n]}" eth0 $n || return 1
		for ((m = 1; m <= $1; m++)); do
			[ $n = $m ] || pairs+=("${ICS_MEMBER_NS[n]}:$m")
		done
	done
	ics_model reachable 30 "${pairs[@]}"
}

# ------------------------------------------------------ ics commands ------

# ics_bind NS DEV NODE [CLUSTER]: bind; with the test service loaded and
# nothing attached in NS yet, attach it to ICS_ATTACH (default: all 16
# channels, CNX too, where ics's own frames are not messages).
ics_bind()
{
	local out
	out=$(in_ns "$1" icsctl bind dev "$2" node "$3" ${4:+cluster "$4"} 2>&1) ||
		{ fail "bind $2 node $3 in $1: $out"; return 1; }
	ics_test_loaded || return 0
	out=$(in_ns "$1" icsctl test show 2>&1) || { fail "$1: icsctl test show: $out"; return 1; }
	[[ $out == *"attached: none"* ]] || return 0
	# shellcheck disable=SC2086  # a list of channel names
	tsvc_attach "$1" ${ICS_ATTACH:-${ICS_CHANNELS[*]}}
}

ch_id()		# NAME -> id
{
	local i
	for i in "${!ICS_CHANNELS[@]}"; do
		[ "${ICS_CHANNELS[$i]}" = "$1" ] && { echo "$i"; return 0; }
	done
	return 1
}

# ics_send NS SRCNODE DSTNODE CHANNEL SIZE COUNT [OPTIONS...]: generator
# traffic, from the test service (OPTIONS: icsctl send's, e.g. --wait);
# each successful send is logged for the model checks (ics_model check).
ics_send()
{
	local ns=$1 src=$2 dst=$3 ch=$4 size=$5 count=$6 out
	shift 6
	out=$(in_ns "$ns" icsctl send node "$dst" channel "$ch" size "$size" count "$count" "$@" 2>&1) ||
		{ fail "node $src: icsctl send node $dst channel $ch size $size count $count $*: $out"; return 1; }
	echo "$src $dst $(ch_id "$ch") $size $count" >> "$ICS_TMP/sends"
}

# send_json NS DST CHANNEL SIZE COUNT OUT [OPTIONS...]: icsctl send with
# OPTIONS (--wait, --mixed, --nonblock, --timeout MS), its JSON reply
# ({"sent", "done", "failed", "error", "errno"}) into OUT and its stderr
# into OUT.err; returns icsctl's exit code.
send_json()
{
	local ns=$1 dst=$2 ch=$3 size=$4 count=$5 out=$6
	shift 6
	in_ns "$ns" icsctl send node "$dst" channel "$ch" size "$size" count "$count" \
		"$@" -j > "$out" 2> "$out.err"
}

# Parallel generator runs (reliable.sh, link_faults.sh): one icsctl send
# --wait per sender and channel, in the background, each bounded by
# `timeout`. Replies go to $ICS_TMP/TAG/sNODE.CHANNEL (JSON), .err (stderr)
# and .rc (exit code).
STRESS_PIDS=()

# stress_start TAG DST SIZE COUNT "CHANNELS" NODE:NS... [-- OPTIONS...]:
# OPTIONS default to --mixed.
stress_start()
{
	local tag=$1 dst=$2 size=$3 count=$4 chans=$5 members=() opts=(--mixed) m ch out
	shift 5
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		members+=("$1")
		shift
	done
	[ "${1:-}" = -- ] && { shift; opts=("$@"); }
	mkdir -p "$ICS_TMP/$tag"
	for m in "${members[@]}"; do
		for ch in $chans; do
			out=$ICS_TMP/$tag/s${m%%:*}.$ch
			(
				timeout -k 10 $((ICS_STRESS_TIMEOUT * ICS_SCALE)) \
					nsenter --net="$ICS_NETNS_DIR/${m#*:}" icsctl send node "$dst" channel "$ch" \
					size "$size" count "$count" --wait --timeout 600000 "${opts[@]}" -j \
					> "$out" 2> "$out.err"
				echo $? > "$out.rc"
			) &
			STRESS_PIDS+=($!)
		done
	done
}
: "${ICS_STRESS_TIMEOUT:=300}"	# seconds one icsctl send may take (scaled)

# stress_running: 0 while a started run is still going.
stress_running()
{
	local p
	for p in "${STRESS_PIDS[@]}"; do
		kill -0 "$p" 2>/dev/null && return 0
	done
	return 1
}

# stress_kill: stop every started run (cleanup).
stress_kill()
{
	local p
	[ ${#STRESS_PIDS[@]} -gt 0 ] || return 0
	# One pkill for all of them: each scans /proc, which takes a while in a
	# busy TCG guest (80 of them took 20 s).
	pkill -TERM -P "$(IFS=,; echo "${STRESS_PIDS[*]}")" 2>/dev/null
	kill "${STRESS_PIDS[@]}" 2>/dev/null
	for p in "${STRESS_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	STRESS_PIDS=()
}

# stress_wait: wait for every started run.
stress_wait()
{
	local p
	for p in "${STRESS_PIDS[@]}"; do
		wait "$p"
	done
	STRESS_PIDS=()
}

# send_wait_ok NS DST CHANNEL SIZE COUNT: icsctl send --wait (under
# `timeout`) reports all COUNT messages sent and done, none failed.
send_wait_ok()
{
	local out got
	out=$(timeout $((60 * ICS_SCALE)) nsenter --net="$ICS_NETNS_DIR/$1" icsctl send node "$2" channel "$3" \
		size "$4" count "$5" --wait 2>&1)
	# "sent N[ of COUNT] messages ...\ndone D, failed F" (no python: fuzz.sh
	# calls this hundreds of times)
	if [[ $out =~ ^sent\ ([0-9]+)\ .*done\ ([0-9]+),\ failed\ ([0-9]+) ]]; then
		got="${BASH_REMATCH[1]} ${BASH_REMATCH[2]} ${BASH_REMATCH[3]}"
	else
		got=$out
	fi
	assert_eq "icsctl send node $2 channel $3 --wait: sent done failed" "$5 $5 0" "$got"
}

# ------------------------------------------------------------ JSON -------

# jget EXPR: evaluate a Python expression over the JSON on stdin (as "j");
# dicts/lists/booleans are printed as JSON, numbers and strings plainly.
# python3 -S here and for ics_model: the standard library is all they use,
# and without site-packages a start takes half as long (0.6 s instead of
# 1.3 s in a TCG guest, where the suite starts python thousands of times).
# The JSON is read as a Python literal (true, false and null bound to
# their values), not with the json module, whose import of re costs
# another 0.3 s a call there; the JSON of our tools, of ip -j and of the
# selftests' helpers is such a literal (icstat.sh still parses each of
# icstat's forms with json).
jget()
{
	python3 -S -c '
import sys
true, false, null = True, False, None
j = eval(sys.stdin.read())
try:
    v = eval(sys.argv[1])
except (KeyError, IndexError, TypeError, StopIteration):
    print("none"); sys.exit(0)
if isinstance(v, (dict, list, bool)) or v is None:
    import json
    v = json.dumps(v)
print(v)
' "$1"
}

show_get()	# NS KEY
{
	in_ns "$1" icstat -j show | jget "j[\"$2\"]"
}

stat_get()	# NS KEY
{
	in_ns "$1" icstat -j show | jget "j[\"stats\"][\"$2\"]"
}

# icstat_get NS COMMAND EXPR FIELD...: EXPR[FIELD]... over icstat -j COMMAND.
icstat_get()
{
	local ns=$1 cmd=$2 expr=$3 f
	shift 3
	for f in "$@"; do
		expr="${expr}[\"$f\"]"
	done
	in_ns "$ns" icstat -j "$cmd" | jget "$expr"
}

# ics_incarnation NS: the incarnation of NS's bound instance (icstat show),
# what every unicast frame to it must carry in dst_inc (a broadcast: 0).
# New at every bind: read it again after the instance was bound again.
ics_incarnation()
{
	local v
	v=$(show_get "$1" incarnation)
	[[ $v =~ ^[0-9]+$ ]] || { fail "$1: no incarnation (bound?): '$v'" >&2; return 1; }
	echo "$v"
}

# chan_get NS CHANNEL FIELD...: e.g. chan_get A TEST rx msgs
chan_get()
{
	local ns=$1 id
	id=$(ch_id "$2") || { echo none; return 1; }
	shift 2
	icstat_get "$ns" channels "j[\"channels\"][$id]" "$@"
}

node_get()	# NS NODE KEY
{
	icstat_get "$1" nodes "next(n for n in j[\"nodes\"] if n[\"node_id\"] == $2)" "$3"
}

# member_get NS NODE KEY...: fields of NODE's row in NS's members view,
# space-separated
member_get()
{
	local ns=$1 node=$2
	shift 2
	icstat_get "$ns" members "' '.join(str(m[k]) for m in j['members'] if m['node'] == $node
		for k in '$*'.split())"
}

# link_get NS NODE KEY...: a field of the link to NODE (icstat -j links),
# e.g. link_get A 2 queue CFS
link_get()
{
	local ns=$1 node=$2
	shift 2
	icstat_get "$ns" links "next(l for l in j[\"links\"] if l[\"node\"] == $node)" "$@"
}

# ------------------------------------------------------------ waits ------

# wait_eq SECONDS EXPECTED WHAT CMD...: poll CMD's output until it equals
# EXPECTED; on timeout say what was seen.
wait_eq()
{
	local secs=$1 want=$2 what=$3 deadline got
	shift 3
	deadline=$(ics_deadline "$secs")
	while :; do
		got=$("$@" 2>&1)
		[ "$got" = "$want" ] && return 0
		if [ $SECONDS -ge "$deadline" ]; then
			fail "$what: expected $want, got '$got' after $((secs * ICS_SCALE))s"
			return 1
		fi
		sleep 0.05
	done
}

# wait_file SECS DESC FILE: until FILE exists (an ics_dev.py mark).
# bg_stop PID...: kill background jobs started with & and what they run.
bg_stop()
{
	local p
	for p in "$@"; do
		pkill -9 -P "$p" 2>/dev/null
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	return 0
}

wait_file() { wait_eq "$1" yes "$2" sh -c "[ -e $3 ] && echo yes"; }

# wait_counter NS COUNTER MIN: until the instance counter reaches MIN
wait_counter()
{
	local deadline
	deadline=$(ics_deadline 20)
	while [ $SECONDS -lt "$deadline" ]; do
		[ "$(stat_get "$1" "$2")" -ge "$3" ] && return 0
		sleep 0.2
	done
	fail "$1: $2 = $(stat_get "$1" "$2"), want >= $3"
}

# reap PATTERN: kill the helpers whose command line matches PATTERN (pkill
# -f) and wait until they are gone; nothing if there are none.
reap()
{
	pkill -f "$1" || return 0
	wait_eq 10 0 "helpers matching '$1' gone" pgrep -cf "$1"
}

wait_reachable()	# NS NODE
{
	ics_model reachable 30 "$1:$2"
}

# ------------------------------------------------------- assertions ------

assert_eq()	# WHAT EXPECTED ACTUAL
{
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
}

# expect_err RC LINE-REGEX CMD...: CMD must exit RC and print exactly one
# line on stderr, matching the extended regex LINE-REGEX in full.
expect_err()
{
	local want_rc=$1 re=$2 rc n
	shift 2
	"$@" >"$ICS_TMP/out" 2>"$ICS_TMP/err"
	rc=$?
	n=$(wc -l < "$ICS_TMP/err")
	if [ "$rc" != "$want_rc" ] || [ "$n" != 1 ] || ! grep -Eqx -- "$re" "$ICS_TMP/err"; then
		fail "'$*': want exit $want_rc and one stderr line matching /$re/; got exit $rc, $n stderr line(s):"
		sed 's/^/#   stderr: /' "$ICS_TMP/err" | head -n 5
		sed 's/^/#   stdout: /' "$ICS_TMP/out" | head -n 5
		return 1
	fi
}

# ---------------------------------------------------------- kernel log ----

ics_dmesg_mark()
{
	ICS_DMESG_MARK="ics-selftest: $ICS_TEST start $$.$RANDOM"
	echo "$ICS_DMESG_MARK" > /dev/kmsg
}

# Kernel log since this test started.
ics_dmesg()
{
	dmesg | awk -v m="$ICS_DMESG_MARK" 'seen { print } index($0, m) { seen = 1 }'
}

# No warnings, bugs or lockdep reports in the kernel log since the start.
ics_dmesg_clean()
{
	local bad
	bad=$(ics_dmesg | grep -E "$ICS_DMESG_BAD" | grep -Ev "$ICS_DMESG_OK")
	if [ -n "$bad" ]; then
		fail "kernel log has warnings since the test started:"
		echo "$bad" | head -n 20 | sed 's/^/#   /'
		ics_dmesg | grep -E -A 30 "$ICS_DMESG_BAD" | head -n 60 | sed 's/^/#   /'
		return 1
	fi
}

# Final case of every test: delete the namespaces, remove the module, and
# check the kernel log.
ics_teardown_check()
{
	local ns ok=0
	for ns in "${ICS_NS[@]}"; do
		ns_del "$ns" || ok=1
	done
	ics_unload || ok=1
	ics_dmesg_clean || ok=1
	return $ok
}

# ------------------------------------------------------- model checks -----

# ics_model.py (see its help): snapshots, polling and exact model checks in
# one Python process each, since Python starts slowly in a TCG guest.
ics_model() { python3 -S "$ICS_SRC_DIR/ics_model.py" "$@"; }

ics_snap() { ics_model snap "$1" "$2"; }	# NS FILE

ICS_RX_GEN='sum(c["rx_ok"] + c["rx_bad"] for c in j["channels"].values())'

# Test messages the test service of NS checked: sum over all channels of
# rx_ok + rx_bad (icsctl test show).
rx_checked_total()	# NS
{
	tsvc_get "$1" "$ICS_RX_GEN"
}

# ics_wait_rx NS NODE COUNT SECONDS: poll until NODE's test service has
# checked COUNT test messages.
ics_wait_rx()
{
	ics_model wait "$1" test "$ICS_RX_GEN" "$3" "$4" "node $2: test messages checked" && return 0
	info "non-zero stats of node $2: $(in_ns "$1" icstat -j show |
		jget '" ".join("%s=%d" % kv for kv in j["stats"].items() if kv[1])')"
	return 1
}

# Expected generator messages received by NODE, from the sends log.
sends_to()
{
	awk -v n="$1" '$1 != "MARK" && $2 == n { s += $5 } END { print s + 0 }' "$ICS_TMP/sends"
}
