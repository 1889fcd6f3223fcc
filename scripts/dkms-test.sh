#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms add + build of this tree for every supported kernel, in private
# source/dkms trees so the machine's DKMS state is untouched. KTAP output.
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
echo "TAP version 13"
echo "1..$((n + 1))"
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
	   modinfo "$tmp/tree/ics/$version/$k/x86_64/module/ics.ko"* 2>/dev/null | grep -q "^vermagic: *$k "; then
		echo "ok $i dkms build for $k"
	else
		sed 's/^/# /' "$tmp/build.log" | tail -30
		find "$tmp/tree" -name make.log -exec sed 's/^/# /' {} \; | tail -30
		echo "not ok $i dkms build for $k"
		fail=1
	fi
done
exit $fail
