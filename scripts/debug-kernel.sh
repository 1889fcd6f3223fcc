#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build, once, a small debug kernel from Debian's linux-source-6.12 for the
# VM tests: virtme-ng's minimal config plus KASAN, lockdep, kmemleak,
# sleep-in-atomic checks and what the selftests need (IPv6, BPF and tc's
# clsact, cls_bpf and matchall for nic.sh, the memory controller for
# overload.sh's cgroup case), built in; TIPC as a
# module, so that layout b of `make bench` can be run on it by hand with
# TIPC beside ics (insmod net/ipv4/udp_tunnel.ko and net/tipc/tipc.ko
# from the tree: vng's modules directory does not match the kernel's
# release). Cached outside the tree
# (ICS_DEBUG_KERNEL, default /var/cache/ics/linux-debug); prints the
# tree's path. Takes ~20 min on 2 cores the first time.
set -euo pipefail
rev=6
tree=${ICS_DEBUG_KERNEL:-/var/cache/ics/linux-debug}
if [ -f "$tree/.ics-debug-$rev" ] && [ -f "$tree/arch/x86/boot/bzImage" ]; then
	echo "$tree"
	exit 0
fi
# One build at a time: a second caller waits for the first, then uses it.
mkdir -p "$(dirname "$tree")"
exec 9>"$tree.lock"
if ! flock -n 9; then
	echo "debug-kernel: another build of $tree is running; waiting for it" >&2
	flock 9
fi
if [ -f "$tree/.ics-debug-$rev" ] && [ -f "$tree/arch/x86/boot/bzImage" ]; then
	echo "$tree"
	exit 0
fi
echo "debug-kernel: building $tree (once; ~20 min on 2 cores)" >&2
tarball=/usr/src/linux-source-6.12.tar.xz
[ -f "$tarball" ] || { echo "debug-kernel: $tarball missing (make deps)" >&2; exit 1; }
rm -rf "$tree"
mkdir -p "$tree"
tar -xJf "$tarball" -C "$tree" --strip-components=1
cd "$tree"
vng --kconfig >/dev/null
./scripts/config \
	-e KASAN -e KASAN_GENERIC -e KASAN_INLINE \
	-e PROVE_LOCKING -e DEBUG_LOCKDEP -e DEBUG_ATOMIC_SLEEP -e DEBUG_SPINLOCK \
	-e DEBUG_KMEMLEAK -d DEBUG_KMEMLEAK_DEFAULT_OFF -e DEBUG_KMEMLEAK_AUTO_SCAN \
	-e PROVE_RCU -e DEBUG_OBJECTS -e DEBUG_OBJECTS_TIMERS -e DEBUG_OBJECTS_RCU_HEAD \
	-e REFCOUNT_FULL -e DEBUG_LIST -e UBSAN -e UBSAN_BOUNDS \
	-e MODULES -e MODULE_UNLOAD \
	-e NET -e INET -e PACKET -e NET_NS -e VETH -e BRIDGE -e NET_SCH_NETEM \
	-e NET_SCHED -e UNIX -e TMPFS -e CRYPTO_CRC32C -e LIBCRC32C -m TIPC \
	-e CRYPTO_POLY1305 -e USER_NS -e IPV6 -e CGROUPS -e MEMCG \
	-e BPF_SYSCALL -e BPF_JIT -e NET_CLS_ACT -e NET_SCH_INGRESS -e NET_CLS_BPF \
	-e NET_CLS_MATCHALL -e NET_ACT_GACT \
	-d DEBUG_INFO_BTF -d DEBUG_INFO -d DEBUG_INFO_DWARF5 -e DEBUG_INFO_NONE
make olddefconfig >/dev/null
# olddefconfig drops an option whose dependencies are missing, silently.
for o in KASAN PROVE_LOCKING DEBUG_KMEMLEAK MEMCG NET_CLS_BPF USER_NS; do
	grep -q "^CONFIG_$o=y" .config || { echo "debug-kernel: CONFIG_$o did not survive olddefconfig" >&2; exit 1; }
done
make -j"$(nproc)" bzImage modules >build.log 2>&1 || { tail -40 build.log >&2; exit 1; }
touch ".ics-debug-$rev"
echo "$tree"
