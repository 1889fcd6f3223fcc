#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# conf.sh - lasting configuration: `icsctl showconf` prints an instance's
# configuration (binding, tunables, keys by their files, key in use,
# authentication, channel priorities) as a file `icsctl setconf` applies;
# what showconf prints, setconf gives back, to a fresh instance or to one
# unbound; a bad file is refused naming its line, and nothing changes, also
# when the kernel refuses a step the checks could not foresee; the systemd
# unit that applies /etc/ics/ics.conf at boot passes systemd-analyze verify.
#
#   netns ics$$-a  node 1  veth0 ======= veth0  node 2  netns ics$$-b
#   netns ics$$-c  fresh, never bound (lo and c0, one end of a veth pair)
#
# Both members sign with key 2 of two (files in a key directory) and
# require signatures, with their own tunables and priorities.

. "$(dirname "$0")/lib.sh"

ics_init
NS_C=$ICS_PFX-c
KEYS=$ICS_TMP/keys

showconf() { in_ns "$1" icsctl showconf keydir "$KEYS"; }

# conf_same WHAT NS FILE: NS's showconf is FILE's text.
conf_same()
{
	showconf "$2" > "$ICS_TMP/now" || { fail "$1: showconf failed"; return 1; }
	cmp -s "$3" "$ICS_TMP/now" && return 0
	fail "$1: showconf changed:"
	diff "$3" "$ICS_TMP/now" | sed 's/^/#   /' | head -n 20
	return 1
}

# Two members configured by hand: two keys, key 2 signs, signatures required.
setup()
{
	local ns
	pair_setup || return 1
	mkdir -m 700 "$KEYS" && (umask 077 && icsctl key gen > "$KEYS/one.key" &&
		icsctl key gen > "$KEYS/two.key" && icsctl key gen > "$KEYS/three.key") || return 1
	for ns in "$NS_A" "$NS_B"; do
		in_ns "$ns" icsctl key add 1 "$KEYS/one.key" &&
			in_ns "$ns" icsctl key add 2 "$KEYS/two.key" &&
			in_ns "$ns" icsctl key use 2 && in_ns "$ns" icsctl set auth require &&
			in_ns "$ns" icsctl set misses 5 expected 1 &&
			in_ns "$ns" icsctl prio CFS 6 && in_ns "$ns" icsctl prio DLM 0 || return 1
	done
	in_ns "$NS_A" icsctl set heartbeat 250000 || return 1
	ns_add "$NS_C" && ip -n "$NS_C" link add c0 type veth peer name c1 && ip -n "$NS_C" link set c0 up
}

# The file is the commands that made the configuration, in an order that
# works line by line, and each key by its file and fingerprint.
showconf_prints()
{
	local f1 f2
	showconf "$NS_A" > "$ICS_TMP/a.conf" || return 1
	f1=$(in_ns "$NS_A" icstat -j show | jget 'j["keys"][0]["fingerprint"]')
	f2=$(in_ns "$NS_A" icstat -j show | jget 'j["keys"][1]["fingerprint"]')
	printf '%s\n' "# ics configuration: icsctl showconf prints it, icsctl setconf applies it" \
		"set heartbeat 250000 misses 5 votes 1 expected 1" \
		"key add 1 $KEYS/one.key	# fingerprint $f1" \
		"key add 2 $KEYS/two.key	# fingerprint $f2" \
		"key use 2" "set auth require" > "$ICS_TMP/want"
	local i prios=(3 0 2 6 4 3 5 5 3 3 4 4 3 0 4 0)
	for i in "${!ICS_CHANNELS[@]}"; do
		echo "prio ${ICS_CHANNELS[i]} ${prios[i]}"
	done >> "$ICS_TMP/want"
	echo "bind dev veth0 node 1 cluster 0" >> "$ICS_TMP/want"
	diff "$ICS_TMP/want" "$ICS_TMP/a.conf" | sed 's/^/#   /' | head -n 30
	cmp -s "$ICS_TMP/want" "$ICS_TMP/a.conf" || { fail "showconf is not the configuration"; return 1; }
	showconf "$NS_B" > "$ICS_TMP/b.conf" && showconf "$NS_C" > "$ICS_TMP/c.conf" || return 1
	grep -qx '# not bound' "$ICS_TMP/c.conf" || { fail "fresh instance: no '# not bound'"; return 1; }
	# A key no file holds: said, in a line setconf refuses, so that a file
	# saved regardless cannot delete the key; the exit status says so too.
	mkdir -m 700 "$ICS_TMP/other" && cp -p "$KEYS/two.key" "$ICS_TMP/other/" || return 1
	expect_err 1 "icsctl: showconf: 1 of 2 keys in no file of $ICS_TMP/other \(mode 600 files only; keydir DIR to look elsewhere\)" \
		in_ns "$NS_A" icsctl showconf keydir "$ICS_TMP/other" || return 1
	grep -qx "key add 1 ?	# no file in $ICS_TMP/other holds the key of fingerprint $f1" "$ICS_TMP/out" ||
		{ fail "no refusable line for the missing key file: $(grep 'key add 1' "$ICS_TMP/out")"; return 1; }
	cp "$ICS_TMP/out" "$ICS_TMP/short.conf"
	expect_err 1 "icsctl: setconf: $ICS_TMP/short.conf:3: key add 1: no file for this key \(showconf found none\) \(nothing changed\)" \
		in_ns "$NS_A" icsctl setconf "$ICS_TMP/short.conf" || return 1
	expect_err 1 "icsctl: showconf: key directory /nonexistent: No such file or directory" \
		in_ns "$NS_A" icsctl showconf keydir /nonexistent || return 1
	expect_err 1 "icsctl: showconf: the instance's keys are shown to its netns admin only \(need CAP_NET_ADMIN\)" \
		in_ns "$NS_A" setpriv --reuid=65534 --regid=65534 --clear-groups icsctl showconf
}

# A member's netns goes (its veth pair with it) and comes back: setconf of
# what showconf printed makes both members what they were, and they talk,
# signed. Node 2's instance was left unbound with its configuration.
setconf_restores()
{
	local s
	ns_del "$NS_A" && ns_add "$NS_A" &&
		veth_add "$NS_A" veth0 $MAC_A "$NS_B" veth0 $MAC_B || return 1
	s=$(show_get "$NS_B" state)
	assert_eq "node 2 after its NIC went" unbound "$s" || return 1
	in_ns "$NS_A" icsctl setconf "$ICS_TMP/a.conf" && in_ns "$NS_B" icsctl setconf "$ICS_TMP/b.conf" ||
		return 1
	ics_model reachable 30 "$NS_A:2" "$NS_B:1" || return 1
	conf_same "node 1, a fresh instance" "$NS_A" "$ICS_TMP/a.conf" &&
		conf_same "node 2, unbound" "$NS_B" "$ICS_TMP/b.conf" || return 1
	ics_send "$NS_A" 1 2 CFS 3000 5 --wait || return 1
	s=$(stat_get "$NS_B" rx_auth_bad)
	assert_eq "frames failing authentication at node 2" 0 "$s"
}

# Applying the file again changes nothing (-v prints each change made); a
# changed line changes that alone.
setconf_again()
{
	local out
	out=$(in_ns "$NS_A" icsctl setconf -v "$ICS_TMP/a.conf") || return 1
	assert_eq "changes made by setconf of the same file" "" "$out" &&
		conf_same "setconf twice" "$NS_A" "$ICS_TMP/a.conf" || return 1
	sed 's/^prio CFS 6$/prio CFS 2/; s/ misses 5 / misses 4 /' "$ICS_TMP/a.conf" > "$ICS_TMP/a2.conf" &&
		out=$(in_ns "$NS_A" icsctl setconf -v "$ICS_TMP/a2.conf") || return 1
	assert_eq "changes made by setconf of two changed lines" "set misses 4
prio CFS 2" "$out" && out=$(in_ns "$NS_A" icsctl setconf -v "$ICS_TMP/a.conf") &&
		conf_same "setconf back" "$NS_A" "$ICS_TMP/a.conf"
}

# A file that lists keys: the others are deleted (after the key in use is
# one of its), which retires a key by deleting its line; then back.
keys_retired()
{
	grep -v '^key add 1 ' "$ICS_TMP/b.conf" > "$ICS_TMP/b1.conf" &&
		in_ns "$NS_B" icsctl setconf "$ICS_TMP/b1.conf" || return 1
	assert_eq "node 2's keys" "[2]" "$(in_ns "$NS_B" icstat -j show | jget '[k["id"] for k in j["keys"]]')" &&
		conf_same "key 1 retired" "$NS_B" "$ICS_TMP/b1.conf" || return 1
	ics_send "$NS_A" 1 2 CFS 100 3 --wait && in_ns "$NS_B" icsctl setconf "$ICS_TMP/b.conf" &&
		conf_same "key 1 back" "$NS_B" "$ICS_TMP/b.conf"
}

# bad_file NS LINE-REGEX TEXT: setconf of TEXT is refused, naming its line,
# and NS's configuration stays what it was.
bad_file()
{
	local ns=$1 re=$2 before=$ICS_TMP/before
	printf '%s\n' "$3" > "$ICS_TMP/bad.conf"
	showconf "$ns" > "$before" || return 1
	expect_err 1 "icsctl: setconf: $ICS_TMP/bad.conf:$re" \
		in_ns "$ns" icsctl setconf "$ICS_TMP/bad.conf" || return 1
	conf_same "after refusing '$3'" "$ns" "$before"
}

# Each check, after lines that alone would change something.
bad_files_refused()
{
	local pre="prio CFS 1
set heartbeat 1000"
	bad_file "$NS_A" '3: unknown command "frob" \(bind, set, prio, key add, key use\) \(nothing changed\)' \
		"$pre
frob" || return 1
	bad_file "$NS_A" '3: the instance is bound to veth0 as node 1 of cluster 0: icsctl unbind first \(nothing changed\)' \
		"$pre
bind dev veth0 node 3" || return 1
	bad_file "$NS_A" "3: key 1 is installed with another key \(fingerprint [0-9a-f]{16}, the file's [0-9a-f]{16}\): delete it first \(icsctl key del 1\) or give the new key a new id \(nothing changed\)" \
		"$pre
key add 1 $KEYS/three.key
key add 2 $KEYS/two.key" || return 1
	bad_file "$NS_A" "3: the key in use, 2, is not among the file's keys: add it or a key use line \(nothing changed\)" \
		"$pre
key add 1 $KEYS/one.key" || return 1
	bad_file "$NS_A" "3: key use 3: no key 3 is installed \(nothing changed\)" \
		"$pre
key use 3" || return 1
	bad_file "$NS_A" "3: key add: $KEYS/none.key: No such file or directory \(nothing changed\)" \
		"$pre
key add 3 $KEYS/none.key" || return 1
	bad_file "$NS_A" "4: auth require needs a key in use, and line 3 says key use 0 \(nothing changed\)" \
		"$pre
key use 0
set auth require" || return 1
	bad_file "$NS_C" '3: no network device "eth9" here \(nothing changed\)' \
		"$pre
bind dev eth9 node 3" || return 1
	bad_file "$NS_C" '3: auth accept needs a key in use \(nothing changed\)' \
		"$pre
set auth accept"
}

# The kernel refuses the bind (lo is no Ethernet NIC), which comes after
# the keys, the mode, the tunables and the priorities: all of them undone.
kernel_refusal_undone()
{
	local before=$ICS_TMP/c-before
	showconf "$NS_C" > "$before" || return 1
	printf '%s\n' "key add 7 $KEYS/three.key" "key use 7" "set auth accept heartbeat 500 votes 0" \
		"prio TEST 7" "prio BOOT 6" "bind dev lo node 9" > "$ICS_TMP/lo.conf"
	in_ns "$NS_C" icsctl setconf "$ICS_TMP/lo.conf" > "$ICS_TMP/out" 2> "$ICS_TMP/err"
	assert_eq "setconf exit status" 1 $? || return 1
	printf '%s\n' "icsctl: setconf: $ICS_TMP/lo.conf:6: bind: Invalid argument: ics: not an Ethernet device" \
		"icsctl: setconf: the 6 changes before it were undone" > "$ICS_TMP/want"
	cmp -s "$ICS_TMP/want" "$ICS_TMP/err" || { fail "stderr: $(cat "$ICS_TMP/err")"; return 1; }
	conf_same "after the refused bind" "$NS_C" "$before" || return 1
	# the same file with a NIC that takes it; then back to what it was
	sed -i 's/dev lo/dev c0/' "$ICS_TMP/lo.conf" && in_ns "$NS_C" icsctl setconf "$ICS_TMP/lo.conf" &&
		assert_eq "state after setconf with c0" bound "$(show_get "$NS_C" state)" || return 1
	in_ns "$NS_C" icsctl unbind && in_ns "$NS_C" icsctl setconf "$before" &&
		in_ns "$NS_C" icsctl key del 7 || return 1
	conf_same "unbound and set back" "$NS_C" "$before"
}

# ics@.service (its @SBINDIR@ set to the tree's user/), as ics@veth0.
systemd_unit_verify()
{
	local d=$ICS_TMP/units out
	command -v systemd-analyze >/dev/null || { echo "# systemd-analyze not installed"; return 4; }
	mkdir -p "$d/man/man8" && ln -s "$ICS_TOP/Documentation/man/icsctl.8" "$d/man/man8/" &&
		sed "s|@SBINDIR@|$ICS_TOP/user|g" "$ICS_TOP/user/systemd/ics@.service.in" \
			> "$d/ics@.service" || return 1
	out=$(MANPATH=$d/man systemd-analyze verify "$d/ics@veth0.service" 2>&1) ||
		{ fail "systemd-analyze verify: $out"; return 1; }
	[ -z "$out" ] || { fail "systemd-analyze verify says: $out"; return 1; }
	grep -q '^ExecStart=.*/icsctl setconf /etc/ics/ics.conf$' "$d/ics@.service" ||
		fail "the unit does not apply /etc/ics/ics.conf"
}

usage_errors()
{
	expect_err 2 'icsctl: setconf: missing FILE' icsctl setconf || return 1
	expect_err 2 'icsctl: setconf: unexpected argument "b"' icsctl setconf a b || return 1
	expect_err 2 'icsctl: setconf: unknown option "-x" \(--check, -v\)' icsctl setconf -x a ||
		return 1
	expect_err 1 'icsctl: setconf: /nonexistent.conf: No such file or directory' \
		icsctl setconf /nonexistent.conf || return 1
	expect_err 2 'icsctl: showconf: unknown argument "x" \(try "icsctl help"\)' icsctl showconf x ||
		return 1
	# --check reads the file only: no module needed, nothing applied
	icsctl setconf --check "$ICS_TMP/a.conf"
}

step_add setup
case_add "showconf: the configuration as commands, keys by their files; what it cannot say" \
	showconf_prints
case_add "setconf: a fresh instance and an unbound one become what showconf printed; signed traffic" \
	setconf_restores
case_add "setconf of the same file again changes nothing" setconf_again
case_add "a file that lists keys deletes the others" keys_retired
case_add "a bad file is refused naming its line, and nothing changes" bad_files_refused
case_add "a step the kernel refuses: every change before it is undone" kernel_refusal_undone
case_add "ics@.service passes systemd-analyze verify" systemd_unit_verify
case_add "usage errors" usage_errors
case_once "teardown: netns deleted, module removed, kernel log clean" ics_teardown_check
cases_run
