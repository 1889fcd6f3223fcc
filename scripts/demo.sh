#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make demo`: boot the newest supported kernel in a VM (virtme-ng; TCG,
# since KVM here cannot run a stock kernel) and run scripts/demo-guest.sh.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/qemu-cpu.sh
. "$root/scripts/qemu-cpu.sh"
# (ls sorts its arguments: one ls per series, the newest first)
kver=${DEMO_KVER:-$(cd /lib/modules && { ls -d 6.12.*-amd64; ls -d 6.1.*-amd64; } 2>/dev/null | head -n1)}
[ -n "$kver" ] || { echo "demo: no supported kernel installed (make deps)" >&2; exit 1; }
ko=$root/build/$kver/kmod/ics.ko
for m in "$ko" "${ko%/*}/ics_test.ko"; do
	[ -f "$m" ] || { echo "demo: $m missing (make modules)" >&2; exit 1; }
done
accel=--disable-kvm
[ "${ICS_KVM:-0}" = 1 ] && accel=
ICS_QEMU_CPU=$(ics_qemu_cpu $([ -n "$accel" ] && echo 1 || echo 0))
echo "demo: booting $kver"
cd "$root"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
vng --run "/boot/vmlinuz-$kver" $accel ${ICS_QEMU_CPU:+--qemu-opts="$ICS_QEMU_CPU"} \
	--user root --cpus 2 --memory 2G \
	-- bash "$root/scripts/demo-guest.sh" "$ko" 2>&1 | tee "$out"
grep -q '^demo: every histogram row on every member matches' "$out" &&
	grep -q '^demo: member 3 declared down' "$out"
