#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the ics selftests in a virtme-ng VM, once per kernel.
#
# Usage: scripts/vmtest.sh [-t TEST.sh]... [KVER | NAME=TREE]...
#   KVER      kernel releases with /boot/vmlinuz-KVER and build/KVER/kmod/ics.ko
#             (default: the installed 6.1.0-*-amd64 and 6.12.* kernels)
#   NAME=TREE a built kernel tree (vng --run TREE), with the module in
#             build/NAME/kmod/ics.ko and results in build/vmtest/NAME; e.g.
#             debug=/var/cache/ics/linux-debug (make vmtest-debug)
#   -t TEST   run only this test (repeatable; default: all TEST_PROGS)
#
# Environment:
#   VMTEST_TIMEOUT         seconds per VM before it is killed (default 5400)
#   VMTEST_TEST_TIMEOUT    seconds per test in the guest (default: selftests/
#                          settings; make vmtest-debug raises it)
#   VMTEST_ALLOW_MISSING_KO=1  boot even without build/KVER/kmod/ics.ko
#                          (the tests then skip; still reported as failure)
#   ICS_TIMEOUT_SCALE      wait-deadline multiplier inside the guest (default 3;
#                          make vmtest-debug uses 10)
#   ICS_*                  every other ICS_ variable (ICS_STRESS_COUNT,
#                          ICS_SOAK_SECS, ...) is passed to the guest's tests;
#                          e.g. ICS_CASES=10 ICS_CASE_REPEAT=8 -t dev_api.sh
#                          runs that file's case 10 eight times, and
#                          ICS_CASES=overload:7/auth:7,9 -t overload.sh
#                          -t auth.sh -t nic.sh those cases and all of
#                          nic.sh (lib.sh)
#   VMTEST_OUT             results directory (default build/vmtest); give
#                          concurrent runs different ones
#   VMTEST_PARALLEL=1      boot every kernel's VM at once (make check does)
#   VMTEST_CPUS            vCPUs per VM (default 2; 1 with VMTEST_PARALLEL)
#
# The modules (build/KVER/kmod/ics.ko and ics_test.ko, build/KVER/selftests/*/*.ko) and
# the tools (user/icstat, user/icsctl) are copied to build/vmtest/KVER/stage
# first, and the guest uses the copies.
#
# Each kernel boots with TCG (these distro kernels cannot use KVM here),
# 2 CPUs (1 with VMTEST_PARALLEL), 2 GiB, and the CPU model
# scripts/qemu-cpu.sh picks. Results go to build/vmtest/KVER/: console.log
# (vng output), ktap.log, dmesg.log, kmemleak.log (kernels with kmemleak),
# emulator.log, done. The run fails (exit 1) on any "not ok" line, a guest
# that did not finish, a kernel log line with a warning, bug, oops,
# lockdep, KASAN or UBSAN report, a kmemleak object allocated by ics (see
# below), or an emulator that corrupts EFLAGS after cmpxchg16b
# (emulator.log, scripts/qemu-cx16-flags.c). The last line is "N passed,
# N failed, N skipped" over all kernels.
#
# kmemleak (the debug kernel): the guest turns off the automatic scan, scans
# and clears before the tests (boot-time suspects are not ours), and scans
# twice after them. Every reported object is listed; the run fails on those
# whose allocation backtrace has an ics module frame ([ics], [ics_echo]) or
# a frame kallsyms cannot name outside the modules still loaded at the end
# (module frames often print as bare addresses in kmemleak's report, and
# ics is unloaded by then; in the guest only ics modules come and go).
# Other objects are reported as
# warnings only: kmemleak has false positives in the kernel's own code
# (virtme's 9p root, netns teardown), which we cannot fix and which would
# make the gate flaky.

set -u
root=$(cd "$(dirname "$0")/.." && pwd -P)
# shellcheck source=scripts/qemu-cpu.sh
. "$root/scripts/qemu-cpu.sh"
ICS_QEMU_CPU=$(ics_qemu_cpu 1)
tests=()
while getopts "t:h" opt; do
	case $opt in
	t) tests+=("$OPTARG") ;;
	h) awk 'NR > 3 && !/^#/ { exit } NR > 3 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))

kvers=("$@")
if [ ${#kvers[@]} = 0 ]; then
	for f in /boot/vmlinuz-6.1.0-*-amd64 /boot/vmlinuz-6.12.*; do
		[ -e "$f" ] && kvers+=("${f#/boot/vmlinuz-}")
	done
fi
if [ ${#kvers[@]} = 0 ]; then
	echo "vmtest: no kernel given and none of 6.1.0-*-amd64, 6.12.* in /boot" >&2
	exit 1
fi
for c in vng qemu-system-x86_64 python3; do
	command -v $c >/dev/null || { echo "vmtest: $c not installed (scripts/install-deps.sh)" >&2; exit 1; }
done

# Host-side preparation: kselftest framework, ics_inject, tools.
"$root/scripts/ksft-extract.sh" || exit 1
make -s -C "$root/selftests" || { echo "vmtest: building selftests failed" >&2; exit 1; }
if [ -f "$root/user/Makefile" ]; then
	make -s -C "$root/user" || { echo "vmtest: building user/ failed" >&2; exit 1; }
fi
for t in icstat icsctl icsperf; do
	[ -x "$root/user/$t" ] || echo "vmtest: WARNING: user/$t missing; tests will skip" >&2
done
# The guest first checks the emulator's cmpxchg16b (scripts/qemu-cpu.sh).
mkdir -p "$root/build"
gcc -O2 -Wall -Wextra -Werror -mcx16 -mno-red-zone -o "$root/build/qemu-cx16-flags" \
	"$root/scripts/qemu-cx16-flags.c" || { echo "vmtest: building qemu-cx16-flags failed" >&2; exit 1; }

DMESG_BAD='WARNING:|BUG:|Oops|cut here|KASAN|UBSAN|possible recursive locking|possible circular locking|suspicious RCU|inconsistent lock state|lockdep|kmemleak|sleeping function called from invalid context|general protection fault|Call Trace'
# kmemleak's own notices: its verdict comes from kmemleak.log, not the log.
DMESG_OK='loading out-of-tree module taints kernel|module verification failed|ics-selftest: |RCU lockdep checking is enabled|kmemleak: (Kernel memory leak detector initialized|Automatic memory scanning thread|[0-9]+ new suspected memory leaks)'

total_pass=0 total_fail=0 total_skip=0 bad=0
summary=()
run_kver=() run_res=() run_missing=() run_ko=() pids=()
# VMTEST_PARALLEL=1: boot the kernels' VMs at once (2 vCPUs each on the
# host's cores): the tests wait on the clock as much as on the CPU, so
# the pair takes much less than the sum.
parallel=${VMTEST_PARALLEL:-0}
# vCPUs per VM (VMTEST_CPUS): 2, or 1 when the VMs run at once, so that
# the emulator's vCPU threads do not outnumber the host's cores (which
# under TCG costs far more than the cores it shares).
cpus=${VMTEST_CPUS:-$([ "$parallel" = 1 ] && echo 1 || echo 2)}

# boot_vm IMAGE RESDIR: the guest run; exit code and seconds in RESDIR.
# A guest whose kernel reported a bug before any test ran (the emulator
# can deliver an interrupt the debug kernel's early boot trips over, and
# the report turns lockdep off for the whole run) says so in RESDIR/done
# and is booted again, up to 3 times; its console log is kept as
# console.log.bootN and the retry is reported.
boot_vm()
{
	local image=$1 res=$2 t0=$SECONDS rc n
	for n in 1 2 3; do
		rm -f "$res/done"
		timeout --foreground -k 30 "${VMTEST_TIMEOUT:-5400}" \
			vng --run "$image" --disable-kvm --user root \
			--cpus "$cpus" --memory 2G --verbose --rwdir "$res" \
			${ICS_QEMU_CPU:+--qemu-opts="$ICS_QEMU_CPU"} \
			-- "$root/scripts/vm-guest.sh $res ${tests[*]}" \
			> "$res/console.log" 2>&1 < /dev/null
		rc=$?
		grep -q '^ICS-VMTEST-BOOTBAD' "$res/done" 2>/dev/null || break
		mv "$res/console.log" "$res/console.log.boot$n"
		echo "boot $n: the kernel reported a bug before the tests; see console.log.boot$n" >> "$res/bootbad"
	done
	echo $rc > "$res/vrc"
	echo $((SECONDS - t0)) > "$res/wall"
}

for kver in "${kvers[@]}"; do
	# KVER (an installed kernel) or NAME=TREE (a built kernel tree).
	case $kver in
	*=*)
		image=${kver#*=}
		kver=${kver%%=*}
		image_ok=$image/arch/x86/boot/bzImage
		;;
	*)
		image=/boot/vmlinuz-$kver
		image_ok=$image
		;;
	esac
	res=$(realpath -m "${VMTEST_OUT:-$root/build/vmtest}")/$kver
	ko=$root/build/$kver/kmod/ics.ko
	echo "=== $kver ==="
	if [ ! -e "$image_ok" ]; then
		echo "vmtest: $image_ok missing" >&2
		summary+=("$kver: no kernel image: FAIL")
		bad=1
		total_fail=$((total_fail + 1))
		continue
	fi
	if [ ! -r "$ko" ] && [ "${VMTEST_ALLOW_MISSING_KO:-0}" != 1 ]; then
		echo "vmtest: $ko missing (make modules)" >&2
		summary+=("$kver: no ics.ko: FAIL")
		bad=1
		total_fail=$((total_fail + 1))
		continue
	fi
	missing_ko=0
	[ -r "$ko" ] || missing_ko=1
	rm -rf "$res"
	mkdir -p "$res/stage/kmod" "$res/stage/user"
	# Run on copies: the module and tools may be rebuilt while the VM runs.
	# The guest refuses a kernel that already reported a bug at boot.
	printf '%s\n%s\n' "$DMESG_BAD" "$DMESG_OK" > "$res/stage/dmesg-patterns"
	[ -r "$ko" ] && cp "$ko" "$res/stage/kmod/"
	[ -r "${ko%/*}/ics_test.ko" ] && cp "${ko%/*}/ics_test.ko" "$res/stage/kmod/"
	for f in "$root/build/$kver"/selftests/*/*.ko; do
		[ -e "$f" ] || continue
		mkdir -p "$res/stage/selftests/$(basename "$(dirname "$f")")"
		cp "$f" "$res/stage/selftests/$(basename "$(dirname "$f")")/"
	done
	for t in icstat icsctl icsperf; do
		[ -x "$root/user/$t" ] && cp "$root/user/$t" "$res/stage/user/"
	done
	cp "$root/build/qemu-cx16-flags" "$res/stage/"
	{
		echo "ICS_TIMEOUT_SCALE=${ICS_TIMEOUT_SCALE:-3}"
		echo "VMTEST_TEST_TIMEOUT=${VMTEST_TEST_TIMEOUT:-}"
		# The tests' own knobs (ICS_STRESS_COUNT, ICS_SOAK_SECS, ...).
		env | grep -E '^ICS_[A-Z0-9_]+=[A-Za-z0-9_.:/,-]*$' | grep -v '^ICS_TIMEOUT_SCALE=' |
			sed 's/^/export /'
	} > "$res/stage/env"
	# A value the guest's shell would need quoted is not passed: say so.
	env | grep -E '^ICS_[A-Z0-9_]+=' | grep -vE '^ICS_[A-Z0-9_]+=[A-Za-z0-9_.:/,-]*$' |
		sed 's/^\(ICS_[A-Z0-9_]*\)=.*/vmtest: \1 not passed to the guest: only letters, digits and _.:\/,- allowed/' >&2
	if [ "$parallel" = 1 ]; then
		boot_vm "$image" "$res" &
		pids+=($!)
	else
		boot_vm "$image" "$res"
	fi
	run_kver+=("$kver")
	run_res+=("$res")
	run_missing+=("$missing_ko")
	run_ko+=("$ko")
done
for p in "${pids[@]}"; do
	wait "$p"
done

for i in "${!run_kver[@]}"; do
	kver=${run_kver[i]} res=${run_res[i]} missing_ko=${run_missing[i]} ko=${run_ko[i]}
	vrc=$(cat "$res/vrc" 2>/dev/null || echo 255)
	wall=$(cat "$res/wall" 2>/dev/null || echo 0)
	echo "=== $kver: results ==="
	[ -f "$res/bootbad" ] && sed 's/^/  /' "$res/bootbad"
	[ -f "$res/ktap.log" ] && cat "$res/ktap.log"

	# Verdict for this kernel, in Python: counts, not-ok lines, kernel log.
	out=$(python3 - "$res" "$DMESG_BAD" "$DMESG_OK" <<'EOF'
import os, re, sys
res, bad_re, ok_re = sys.argv[1], re.compile(sys.argv[2]), re.compile(sys.argv[3])
def read(name):
    try:
        return open(os.path.join(res, name), errors="replace").read().splitlines()
    except OSError:
        return None
problems = []
ktap = read("ktap.log") or []
done = read("done")
if not done or not any(l.startswith("ICS-VMTEST-END") for l in done):
    problems.append("guest did not finish (no end marker in %s/done)" % res)
npass = nfail = nskip = 0
top = re.compile(r"^(not ok|ok) \d+ selftests: \S+: (\S+)(.*)$")
sub = re.compile(r"^# (not ok|ok) \d+ (.*?)(\s+# SKIP.*)?$")
cur = {"pass": 0, "fail": 0, "skip": 0}
for line in ktap:
    m = sub.match(line)
    if m:
        k = "fail" if m.group(1) == "not ok" else ("skip" if m.group(3) else "pass")
        cur[k] += 1
        if k == "fail":
            problems.append("not ok: %s" % m.group(2))
        continue
    m = top.match(line)
    if m:
        name, rest = m.group(2), m.group(3)
        if sum(cur.values()) == 0:
            if m.group(1) == "not ok":
                cur["fail"] = 1
            elif "# SKIP" in rest:
                cur["skip"] = 1
            else:
                cur["pass"] = 1
        elif m.group(1) == "not ok" and cur["fail"] == 0:
            cur["fail"] += 1      # bail out, timeout, crash after its cases
        if m.group(1) == "not ok":
            problems.append("not ok: %s%s" % (name, rest))
        npass += cur["pass"]; nfail += cur["fail"]; nskip += cur["skip"]
        cur = {"pass": 0, "fail": 0, "skip": 0}
dmesg = read("dmesg.log")
if dmesg is None:
    problems.append("no guest kernel log (%s/dmesg.log)" % res)
    dmesg = []
hits = [l for l in dmesg if bad_re.search(l) and not ok_re.search(l)]
for l in hits[:20]:
    problems.append("kernel log: " + l.strip())
if hits and nfail == 0:
    nfail += 1
# kmemleak.log: "unreferenced object ..." blocks, each with a backtrace.
leaks = read("kmemleak.log")
notes = []
if leaks is not None:
    objs, cur = [], None
    for l in leaks:
        if l.startswith("unreferenced object"):
            cur = [l]
            objs.append(cur)
        elif cur is not None:
            cur.append(l)
    # A frame kallsyms did not name is module code: ics's, unless it lies
    # in a module still loaded at the end that is not ics.
    others = []
    for l in read("modules.log") or []:
        f = l.split()
        if len(f) >= 6 and not f[0].startswith("ics") and f[-1].startswith("0x"):
            others.append((int(f[-1], 16), int(f[-1], 16) + int(f[1])))
    def ours_frame(l):
        if re.search(r"\[ics(_\w+)?\]", l):
            return True
        m = re.match(r"\s+0x([0-9a-f]+)$", l)
        return bool(m) and not any(a <= int(m.group(1), 16) < b for a, b in others)
    ours = [o for o in objs if any(ours_frame(l) for l in o)]
    for o in objs:
        tag = "ics" if o in ours else "other"
        notes.append("kmemleak (%s): %s" % (tag, " | ".join(x.strip() for x in o
                     if not re.match(r"\s+[0-9a-f]{2} [0-9a-f]{2} ", x) and "hex dump" not in x)))
    if ours:
        problems.append("kmemleak: %d leaked object(s) allocated by ics (%s/kmemleak.log)"
                        % (len(ours), res))
        if nfail == 0:
            nfail += 1
    notes.insert(0, "kmemleak: %d object(s) reported, %d by ics, %d elsewhere (warnings only)"
                 % (len(objs), len(ours), len(objs) - len(ours)))
# emulator.log: scripts/qemu-cx16-flags's line and exit status, in the guest
emu = read("emulator.log")
if not emu or not any(l.startswith("rc=") for l in emu):
    if done and any(l.startswith("ICS-VMTEST-END") for l in done):
        problems.append("no emulator check (%s/emulator.log)" % res)
        if nfail == 0:
            nfail += 1
elif "rc=0" not in emu:
    problems.append("emulator: %s (scripts/qemu-cpu.sh)" % " ".join(emu))
    if nfail == 0:
        nfail += 1
if not ktap:
    problems.append("no KTAP output")
if not done or not any(l.startswith("ICS-VMTEST-END") for l in done):
    nfail += 1      # the unfinished run counts as one failure
print("COUNTS %d %d %d" % (npass, nfail, nskip))
for p in problems:
    print("PROBLEM " + p)
for n in notes:
    print("NOTE " + n)
EOF
)
	read -r _ p f s <<< "$(echo "$out" | grep '^COUNTS')"
	problems=$(echo "$out" | sed -n 's/^PROBLEM //p')
	echo "$out" | sed -n 's/^NOTE /  /p'
	if [ $missing_ko = 1 ]; then
		problems="${problems:+$problems
}$ko missing: the tests could only skip"
	fi
	if [ $vrc != 0 ] && ! grep -q ICS-VMTEST-END "$res/done" 2>/dev/null; then
		problems="${problems:+$problems
}vng exited $vrc; last console lines:
$(tail -n 40 "$res/console.log" | sed 's/^/    /')"
	fi
	if [ -n "$problems" ]; then
		bad=1
		echo "--- $kver: FAILED"
		echo "$problems" | sed 's/^/  /'
		if grep -qE "$DMESG_BAD" "$res/dmesg.log" 2>/dev/null; then
			echo "  kernel log context:"
			grep -E -B 2 -A 25 "$DMESG_BAD" "$res/dmesg.log" | grep -Ev "$DMESG_OK" | head -n 80 | sed 's/^/    /'
		fi
		verdict=FAIL
	else
		verdict=ok
	fi
	total_pass=$((total_pass + p)) total_fail=$((total_fail + f)) total_skip=$((total_skip + s))
	summary+=("$kver: ${wall}s wall, $p passed, $f failed, $s skipped: $verdict (results in ${res#$root/})")
done

echo "=== summary ==="
for l in "${summary[@]}"; do
	echo "$l"
done
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
exit $bad
