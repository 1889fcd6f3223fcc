#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the virtme-ng guest started by scripts/vmtest.sh: runs the ics
# selftests through the kselftest runner, then leaves in RESDIR (a --rwdir
# shared with the host):
#   ktap.log   the runner's KTAP output (also printed on stdout)
#   dmesg.log  the guest kernel log after the tests
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
export ICS_TIMEOUT_SCALE=${ICS_TIMEOUT_SCALE:-3}

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

dmesg > "$res/dmesg.log"
sync
echo "ICS-VMTEST-END rc=$rc" > "$res/done"
sync
