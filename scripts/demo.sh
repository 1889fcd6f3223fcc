#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make demo`: boot the newest supported kernel in a VM (virtme-ng; TCG,
# since KVM here cannot run a stock kernel) and run scripts/demo-guest.sh.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
kver=${DEMO_KVER:-$(cd /lib/modules && ls -d 6.12.*-amd64 6.1.*-amd64 2>/dev/null | head -n1)}
[ -n "$kver" ] || { echo "demo: no supported kernel installed (make deps)" >&2; exit 1; }
ko=$root/build/$kver/kmod/ics.ko
[ -f "$ko" ] || { echo "demo: $ko missing (make modules)" >&2; exit 1; }
accel=--disable-kvm
[ "${ICS_KVM:-0}" = 1 ] && accel=
echo "demo: booting $kver"
cd "$root"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
vng --run "/boot/vmlinuz-$kver" $accel --user root --cpus 2 --memory 2G \
	-- bash "$root/scripts/demo-guest.sh" "$ko" 2>&1 | tee "$out"
grep -q '^demo: every histogram row on every member matches' "$out" &&
	grep -q '^demo: member 3 declared down' "$out"
