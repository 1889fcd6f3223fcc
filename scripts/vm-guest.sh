#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the virtme-ng guest started by scripts/vmtest.sh: runs the ics
# selftests through the kselftest runner, then leaves in RESDIR (a --rwdir
# shared with the host):
#   ktap.log   the runner's KTAP output (also printed on stdout)
#   dmesg.log  the guest kernel log after the tests
#   kmemleak.log  kmemleak's suspects after the tests (kernels with kmemleak;
#              scripts/vmtest.sh judges them)
#   emulator.log  scripts/qemu-cx16-flags's verdict on the emulator
#   done       "ICS-VMTEST-END rc=N" once everything above is written
#
# Usage: vm-guest.sh RESDIR [TEST.sh...]   (default: TEST_PROGS of selftests/Makefile)

res=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd -P)
kver=$(uname -r)
base=$root/build/ksft/tools/testing/selftests

# scripts/vmtest.sh stages copies of the module and tools in RESDIR/stage.
stage=$res/stage
[ -d "$stage/kmod" ] || stage=$root/build/$kver
export ICS_KO=${ICS_KO:-$stage/kmod/ics.ko}
[ -x "$res/stage/user/icstat" ] && PATH=$res/stage/user:$PATH
export PATH=$PATH:$root/user
# Settings from the host (scripts/vmtest.sh): ICS_TIMEOUT_SCALE, and
# VMTEST_TEST_TIMEOUT, which overrides the per-test limit of our "settings".
# shellcheck source=/dev/null
[ -r "$res/stage/env" ] && . "$res/stage/env"
export ICS_TIMEOUT_SCALE=${ICS_TIMEOUT_SCALE:-3}
if [ -n "${VMTEST_TEST_TIMEOUT:-}" ]; then
	export kselftest_override_timeout=$VMTEST_TEST_TIMEOUT
fi

# kmemleak (debug kernels): no automatic scan while the tests run (its log
# lines would land in a test's kernel log); scan once now and forget what
# boot left behind, so the scan after the tests shows only their suspects.
kmemleak=/sys/kernel/debug/kmemleak
if [ ! -e /sys/kernel/debug/kmemleak ] && grep -q debugfs /proc/filesystems; then
	mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
fi
if [ -w $kmemleak ]; then
	echo "# kmemleak: scan=off, scan and clear before the tests"
	echo scan=off > $kmemleak
	echo scan > $kmemleak
	echo clear > $kmemleak
else
	kmemleak=
fi

# A kernel that reported a bug before any test ran would fail the run
# (and may have turned lockdep off): tell scripts/vmtest.sh to boot again.
if [ -r "$res/stage/dmesg-patterns" ]; then
	bad_re=$(sed -n 1p "$res/stage/dmesg-patterns")
	ok_re=$(sed -n 2p "$res/stage/dmesg-patterns")
	if dmesg | grep -E "$bad_re" | grep -qvE "$ok_re"; then
		echo "# the kernel reported a bug during boot:"
		dmesg | grep -E "$bad_re" | grep -vE "$ok_re" | head -n 5 | sed 's/^/#   /'
		dmesg > "$res/dmesg-boot.log"
		echo "ICS-VMTEST-BOOTBAD" > "$res/done"
		sync
		exit 0
	fi
fi

# The emulator's cmpxchg16b (scripts/qemu-cpu.sh): scripts/vmtest.sh fails
# the run unless it is right or absent; where it is wrong, no test runs
# (any could die of it).
if [ -x "$res/stage/qemu-cx16-flags" ]; then
	{ "$res/stage/qemu-cx16-flags"; echo "rc=$?"; } > "$res/emulator.log" 2>&1
	sed 's/^/# /' "$res/emulator.log"
	if ! grep -qx 'rc=0' "$res/emulator.log"; then
		echo "# the emulator corrupts EFLAGS after cmpxchg16b: no tests run"
		dmesg > "$res/dmesg.log"
		echo "ICS-VMTEST-END rc=1" > "$res/done"
		sync
		exit 0
	fi
fi

tests=("$@")
if [ ${#tests[@]} = 0 ]; then
	mapfile -t tests < <(make -s --no-print-directory -C "$root/selftests" emit_tests | sed 's/^.*://')
fi
progs=()
for t in "${tests[@]}"; do
	progs+=("./$t")
done

echo "# ics vmtest guest: kernel $kver, $(nproc) cpus, ICS_KO=$ICS_KO"
echo "# tests: ${tests[*]}"
[ -r "$ICS_KO" ] || echo "# WARNING: $ICS_KO missing; tests will skip"

# The runner looks for our settings at $BASE_DIR/<dir>/settings; build/ksft
# links selftests/ in as "ics" (scripts/ksft-extract.sh).
cd "$base/ics" || exit 1
(
	BASE_DIR=$base
	. "$base/kselftest/runner.sh"
	# runner.sh logs to /dev/stdout, which virtme links to its console
	# port, not to our pipe.
	logfile=/proc/self/fd/1
	run_many "${progs[@]}"
) 2>&1 | tee "$res/ktap.log"
rc=${PIPESTATUS[0]}

# kmemleak reports objects older than 5 s that stayed unreferenced over two
# scans.
if [ -n "$kmemleak" ]; then
	t0=$SECONDS
	sleep 6
	echo scan > $kmemleak
	sleep 5
	echo scan > $kmemleak
	cat $kmemleak > "$res/kmemleak.log"
	cat /proc/modules > "$res/modules.log"
	echo "# kmemleak: $(grep -c '^unreferenced object' "$res/kmemleak.log") suspect(s) after the tests; scans took $((SECONDS - t0))s"
fi

dmesg > "$res/dmesg.log"
sync
echo "ICS-VMTEST-END rc=$rc" > "$res/done"
sync
