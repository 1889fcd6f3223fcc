#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install everything `make check`, `make demo` and `make vmtest` need on a
# Debian 12 (bookworm) machine: build tools, libnl, sparse, dkms, qemu,
# virtme-ng, promtool, the node exporter, gnuplot and tshark, clang, libbpf
# and bpftool (icsctl nic's tc program), both supported kernels
# (bookworm's 6.1 and bookworm-backports' 6.12, image + headers) and both
# kernels' source tarballs (for the kselftest framework and checkpatch).
# Idempotent: a second run only checks.
#
# The backports suite is added by deriving the mirror from the apt sources
# already configured; no package host is written in this file.
set -euo pipefail

stamp=/var/lib/ics-deps.stamp
want_rev=10
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want_rev" ] && command -v vng >/dev/null; then
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: must run as root (apt-get, pip)" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive

# Derive the Debian mirror URI from the configured sources.
mirror=""
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	# deb822: a stanza whose Suites has "bookworm" and URIs line
	m=$(awk '/^URIs:/{u=$2} /^Suites:/{ for (i=2;i<=NF;i++) if ($i=="bookworm") print u }' "$f" | head -n1)
	if [ -n "$m" ]; then mirror=$m; break; fi
done
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
	mirror=$(awk '$1=="deb" && $3=="bookworm" {print $2; exit}' /etc/apt/sources.list)
fi
if [ -z "$mirror" ]; then
	echo "install-deps: no bookworm apt source configured; cannot derive a mirror for bookworm-backports" >&2
	exit 1
fi
bpo=/etc/apt/sources.list.d/ics-bookworm-backports.list
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	echo "deb $mirror bookworm-backports main" > "$bpo"
fi

apt-get update -qq

# Versioned kernel packages that the two meta-packages point at.
k61=$(apt-cache depends linux-image-amd64/bookworm 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
k612=$(apt-cache depends linux-image-amd64/bookworm-backports 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
if [ -z "$k61" ] || [ -z "$k612" ]; then
	echo "install-deps: cannot resolve kernel packages (6.1: '$k61', 6.12: '$k612')" >&2
	exit 1
fi
h61=${k61/linux-image/linux-headers}
h612=${k612/linux-image/linux-headers}
src612=$(apt-cache depends linux-source/bookworm-backports 2>/dev/null | awk '/Depends: linux-source-[0-9]/{print $2; exit}')

apt-get install -y -qq --no-install-recommends \
	build-essential bc bison flex libelf-dev libssl-dev kmod cpio xz-utils \
	pkg-config libnl-3-dev libnl-genl-3-dev \
	sparse dkms \
	qemu-system-x86 qemu-utils busybox-static udev \
	iproute2 ethtool iputils-ping procps jq python3-yaml python3-jsonschema python3-matplotlib \
	curl gnuplot-nox tshark \
	clang llvm libbpf-dev bpftool \
	python3-docutils groff-base \
	perl python3 python3-pip \
	linux-source-6.1 \
	"$k61" "$h61"
# promtool (package prometheus) and the node exporter, for the tests of
# icstat's Prometheus output. Their daemons are neither started nor, when
# this installs them, enabled: the tests run the exporter themselves, on
# 127.0.0.1 in a VM.
prom_new=""
for p in prometheus prometheus-node-exporter; do
	dpkg -s "$p" >/dev/null 2>&1 || prom_new="$prom_new $p"
done
if [ -n "$prom_new" ]; then
	policy=/usr/sbin/policy-rc.d
	if [ -e "$policy" ]; then
		# shellcheck disable=SC2086  # package names
		apt-get install -y -qq --no-install-recommends $prom_new
	else
		printf '#!/bin/sh\nexit 101\n' > "$policy"
		chmod 755 "$policy"
		trap 'rm -f "$policy"' EXIT
		# shellcheck disable=SC2086
		apt-get install -y -qq --no-install-recommends $prom_new
		rm -f "$policy"
		trap - EXIT
	fi
	for p in $prom_new; do
		systemctl disable --quiet "$p.service" 2>/dev/null || true
	done
fi
apt-get install -y -qq --no-install-recommends -t bookworm-backports \
	"$k612" "$h612" ${src612:+"$src612"}

# virtme-ng boots the host's kernels with the host's root file system.
if ! command -v vng >/dev/null; then
	pip install -q virtme-ng || pip install -q --break-system-packages virtme-ng
fi
# make style parses Documentation/ with docutils, under whichever python3 is
# first in PATH (not always Debian's).
if ! python3 -c 'import docutils' 2>/dev/null; then
	pip install -q docutils || pip install -q --break-system-packages docutils
fi

echo "$want_rev" > "$stamp"
