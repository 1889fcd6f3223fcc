#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms add + build of this tree for every supported kernel, in private
# source/dkms trees so the machine's DKMS state is untouched: both modules,
# ics.ko and the test service ics_test.ko (dkms.conf). KTAP output.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(cat "$root/VERSION")
kvers=${KVERS:-$(cd /lib/modules && ls -d 6.1.*-amd64 6.12.*-amd64 2>/dev/null)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

grep -q "^PACKAGE_VERSION=\"$version\"" "$root/dkms.conf" || {
	echo "dkms.conf PACKAGE_VERSION does not match VERSION ($version)" >&2
	exit 1
}

src=$tmp/src/ics-$version
mkdir -p "$src" "$tmp/tree"
(cd "$root" && cp -r dkms.conf VERSION kmod include "$src/")
rm -rf "$src"/kmod/*.o "$src"/kmod/*.ko "$src"/kmod/.*.cmd

n=$(echo "$kvers" | wc -w)
k61=$(echo "$kvers" | tr ' ' '\n' | grep '^6\.1\.' | head -n 1)
echo "TAP version 13"
echo "1..$((n + 1 + ${k61:+1} + 0))"
i=1
if dkms add --sourcetree "$tmp/src" --dkmstree "$tmp/tree" "ics/$version" >"$tmp/add.log" 2>&1; then
	echo "ok $i dkms add ics/$version"
else
	sed 's/^/# /' "$tmp/add.log"
	echo "not ok $i dkms add ics/$version"
	exit 1
fi
fail=0
for k in $kvers; do
	i=$((i + 1))
	if dkms build --sourcetree "$tmp/src" --dkmstree "$tmp/tree" -k "$k" "ics/$version" \
		>"$tmp/build.log" 2>&1 &&
	   modinfo "$tmp/tree/ics/$version/$k/x86_64/module/ics.ko"* 2>/dev/null | grep -q "^vermagic: *$k " &&
	   modinfo "$tmp/tree/ics/$version/$k/x86_64/module/ics_test.ko"* 2>/dev/null |
		grep -q "^vermagic: *$k "; then
		echo "ok $i dkms build for $k"
	else
		sed 's/^/# /' "$tmp/build.log" | tail -30
		find "$tmp/tree" -name make.log -exec sed 's/^/# /' {} \; | tail -30
		echo "not ok $i dkms build for $k"
		fail=1
	fi
done

# The first bookworm kernels' headers have no timer_shutdown_sync() (it
# came to 6.1 with a stable update): a copy of the 6.1 headers without it
# must still build the module (kmod/Kbuild notices, compat.h falls back).
old_headers_build()
{
	local h=$tmp/h61 common
	common=$(sed -n 's/^include \(.*\)\/Makefile$/\1/p' "/usr/src/linux-headers-$k61/Makefile")
	[ -d "$common" ] || { echo "# no common headers for $k61"; return 1; }
	mkdir -p "$h" && cp -a "/usr/src/linux-headers-$k61" "$h/arch" && cp -a "$common" "$h/common" ||
		return 1
	# their symlinks are relative to /usr/src
	for d in arch common; do
		for l in scripts tools; do
			[ -L "$h/$d/$l" ] && ln -sfn "$(readlink -f "/usr/src/linux-headers-$k61/$l")" "$h/$d/$l"
		done
	done
	sed -i "s#^include .*/Makefile\$#include $h/common/Makefile#" "$h/arch/Makefile"
	sed -i '/timer_shutdown/d' "$h/common/include/linux/timer.h"
	cp -r "$root/kmod" "$root/include" "$h/" && rm -f "$h"/kmod/*.o "$h"/kmod/*.ko "$h"/kmod/.*.cmd
	make -s -C "$h/arch" M="$h/kmod" modules 2>&1 | grep -v 'Skipping BTF' | sed 's/^/# /'
	grep -q ICS_NO_TIMER_SHUTDOWN "$h/kmod/.main.o.cmd" 2>/dev/null ||
		{ echo "# the fallback was not chosen"; return 1; }
	modinfo "$h/kmod/ics.ko" | grep -q "^vermagic: *$k61 " &&
		modinfo "$h/kmod/ics_test.ko" | grep -q "^vermagic: *$k61 "
}
if [ -n "$k61" ]; then
	i=$((i + 1))
	if old_headers_build; then
		echo "ok $i build for $k61 headers without timer_shutdown_sync()"
	else
		echo "not ok $i build for $k61 headers without timer_shutdown_sync()"
		fail=1
	fi
fi
exit $fail
