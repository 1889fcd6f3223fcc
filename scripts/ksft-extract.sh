#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Extract the kselftest framework (and checkpatch) from the installed kernel
# source tarball into build/ksft/, keeping the kernel tree's layout:
#
#   build/ksft/tools/testing/selftests/{lib.mk,kselftest.h,kselftest_harness.h}
#   build/ksft/tools/testing/selftests/kselftest/{ktap_helpers.sh,runner.sh,prefix.pl}
#   build/ksft/tools/testing/selftests/net/lib.sh
#   build/ksft/tools/testing/selftests/ics -> ../../../../../selftests
#   build/ksft/scripts/{checkpatch.pl,spelling.txt,const_structs.checkpatch}
#   build/ksft/tools/net/ynl/{cli.py,lib/{__init__,nlspec,ynl}.py}   (YNL CLI)
#   build/ksft/Documentation/netlink/genetlink*.yaml                (its schemas)
#
# The "ics" symlink puts our selftests where the kselftest runner expects a
# test directory (BASE_DIR/<dir>/settings), so the runner reads our settings.
#
# Usage: scripts/ksft-extract.sh [TARBALL]   (default /usr/src/linux-source-6.12.tar.xz)
# Environment: KSFT_OUT (default <repo>/build/ksft). Cached: does nothing
# when every file is already there.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tarball=${1:-/usr/src/linux-source-6.12.tar.xz}
out=${KSFT_OUT:-$root/build/ksft}

members=(
	tools/testing/selftests/lib.mk
	tools/testing/selftests/kselftest.h
	tools/testing/selftests/kselftest_harness.h
	tools/testing/selftests/kselftest/ktap_helpers.sh
	tools/testing/selftests/kselftest/runner.sh
	tools/testing/selftests/kselftest/prefix.pl
	tools/testing/selftests/net/lib.sh
	scripts/checkpatch.pl
	scripts/spelling.txt
	scripts/const_structs.checkpatch
	tools/net/ynl/cli.py
	tools/net/ynl/lib/__init__.py
	tools/net/ynl/lib/nlspec.py
	tools/net/ynl/lib/ynl.py
	Documentation/netlink/genetlink.yaml
	Documentation/netlink/genetlink-c.yaml
	Documentation/netlink/genetlink-legacy.yaml
)

link_ics() {
	local l=$out/tools/testing/selftests/ics
	if [ ! -L "$l" ]; then
		rm -rf "$l"
		ln -s ../../../../../selftests "$l"
	fi
}

missing=0
for m in "${members[@]}"; do
	[ -s "$out/$m" ] || missing=1
done
if [ $missing = 0 ]; then
	# The relative symlink is only right when out is <repo>/build/ksft.
	[ "$out" = "$root/build/ksft" ] && link_ics
	exit 0
fi

if [ ! -r "$tarball" ]; then
	echo "ksft-extract: $tarball not found (apt-get install linux-source-6.12)" >&2
	exit 1
fi

# The tarball's top directory (linux-source-6.12/) is read, not guessed.
top=$(tar -tJf "$tarball" 2>/dev/null | head -n1 || true)
top=${top%%/*}
if [ -z "$top" ]; then
	echo "ksft-extract: cannot list $tarball" >&2
	exit 1
fi

mkdir -p "$(dirname "$out")"
tmp=$(mktemp -d "$(dirname "$out")/.ksft.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

paths=()
for m in "${members[@]}"; do
	paths+=("$top/$m")
done
echo "ksft-extract: extracting ${#members[@]} files from $tarball ($top/) into $out" >&2
tar -xJf "$tarball" -C "$tmp" --strip-components=1 --wildcards "${paths[@]}"

for m in "${members[@]}"; do
	if [ ! -s "$tmp/$m" ]; then
		echo "ksft-extract: $top/$m missing from $tarball" >&2
		exit 1
	fi
done

mkdir -p "$out"
cp -a "$tmp"/. "$out"/
chmod +x "$out/tools/testing/selftests/kselftest/prefix.pl" "$out/scripts/checkpatch.pl" \
	"$out/tools/net/ynl/cli.py"
[ "$out" = "$root/build/ksft" ] && link_ics
echo "ksft-extract: done" >&2
