# SPDX-License-Identifier: GPL-2.0
#
# ics top-level Makefile. The README's two commands are `make demo` and
# `make check`; both install what they need first (scripts/install-deps.sh).
#
#   make                 module for the running kernel (or KDIR=) + tools
#   make modules         module for every supported kernel: build/<kver>/kmod/ics.ko
#   make user            user/icstat, user/icsctl
#   make check           everything: W=1 builds, style, sparse, userspace tests,
#                        dkms, and the selftests in VMs on both kernels
#   make vmtest          selftests in a VM per supported kernel
#   make vmtest-cluster  two VMs, 6.1 and 6.12, joined by a dedicated virtio
#                        NIC: membership, traffic, one VM killed
#   make vmtest-debug    selftests on a KASAN/lockdep/kmemleak/UBSAN kernel
#                        (built once by scripts/debug-kernel.sh, ~20 min; the
#                        run takes hours under TCG; VMTEST_FLAGS="-t T.sh")
#   make bench           latency and throughput, side by side with TCP/TIPC
#   make bench-quick     the deterministic mode (qemu -icount) on a few points,
#                        against bench/baseline-icount.json (in make check)
#   make demo            a 3-member cluster in a VM, traffic, icstat chanhisttot
#   make install         install module (running kernel) and tools

TOP := $(CURDIR)
VERSION := $(shell cat VERSION)
# Supported kernels: Debian bookworm's 6.1 and bookworm-backports' 6.12.
KVERS ?= $(notdir $(wildcard /lib/modules/6.1.*-amd64 /lib/modules/6.12.*-amd64))
KDIR ?=

.PHONY: all module modules user selftests check deps vmtest vmtest-cluster vmtest-debug \
	debug-kernel modules-debug bench bench-quick demo dkms-test style sparse w1 install clean

all: module user

deps:
	@bash scripts/install-deps.sh

# One build directory per kernel, with links to the sources, because kbuild
# writes objects next to them.
# A stamp, not the Kbuild link, is the target: the link's time is its
# target's, which a new source file need not be newer than.
# Sources only: an in-tree build (make module) leaves kmod/ics.mod.c, which
# is another kernel's.
KMOD_SRCS := $(filter-out %.mod.c,$(wildcard kmod/*.c)) $(wildcard kmod/*.h)
build/%/kmod/.links: kmod/Kbuild $(KMOD_SRCS)
	@mkdir -p build/$*/kmod
	@for f in $(KMOD_SRCS); do ln -sf $(TOP)/$$f build/$*/kmod/; done; ln -sf $(TOP)/kmod/Kbuild build/$*/kmod/Kbuild.tmp; mv -fT build/$*/kmod/Kbuild.tmp build/$*/kmod/Kbuild
	@ln -sfn $(TOP)/include build/$*/include
	@touch $@

module:
	$(MAKE) -C $(or $(KDIR),/lib/modules/$(shell uname -r)/build) M=$(TOP)/kmod \
		ICS_VERSION=$(VERSION) modules

# The selftests' client module (selftests/ics_echo) builds with ics.ko, against
# its Module.symvers.
build/%/selftests/ics_echo/Kbuild: selftests/ics_echo/Kbuild
	@mkdir -p build/$*/selftests/ics_echo
	@for f in selftests/ics_echo/*.c selftests/ics_echo/Kbuild; do \
		ln -sf $(TOP)/$$f build/$*/selftests/ics_echo/; done

modules: $(foreach k,$(KVERS),build/$(k)/kmod/.links build/$(k)/selftests/ics_echo/Kbuild)
	@test -n "$(KVERS)" || { echo "no supported kernel headers; run make deps" >&2; exit 1; }
	@for k in $(KVERS); do \
		$(MAKE) -C /lib/modules/$$k/build M=$(TOP)/build/$$k/kmod \
			ICS_VERSION=$(VERSION) W=$(W) C=$(C) modules || exit 1; \
		$(MAKE) -C /lib/modules/$$k/build M=$(TOP)/build/$$k/selftests/ics_echo \
			KBUILD_EXTRA_SYMBOLS=$(TOP)/build/$$k/kmod/Module.symvers \
			W=$(W) C=$(C) modules || exit 1; \
	done

user:
	$(MAKE) -C user

selftests:
	@bash scripts/ksft-extract.sh >/dev/null
	$(MAKE) -C selftests

check:
	@bash scripts/check.sh

vmtest: modules user selftests
	@bash scripts/vmtest.sh $(KVERS)

vmtest-cluster: modules user
	@bash scripts/vmtest-cluster.sh

# The debug kernel (scripts/debug-kernel.sh) lives outside the tree; its
# module builds go to build/debug/ like a Debian kernel's to build/KVER/.
DEBUG_KDIR ?= $(or $(ICS_DEBUG_KERNEL),/var/cache/ics/linux-debug)
export ICS_DEBUG_KERNEL := $(DEBUG_KDIR)

debug-kernel:
	@bash scripts/debug-kernel.sh

modules-debug: debug-kernel build/debug/kmod/.links build/debug/selftests/ics_echo/Kbuild
	$(MAKE) -C $(DEBUG_KDIR) M=$(TOP)/build/debug/kmod \
		ICS_VERSION=$(VERSION) W=$(W) C=$(C) modules
	$(MAKE) -C $(DEBUG_KDIR) M=$(TOP)/build/debug/selftests/ics_echo \
		KBUILD_EXTRA_SYMBOLS=$(TOP)/build/debug/kmod/Module.symvers \
		W=$(W) C=$(C) modules

# KASAN, lockdep and kmemleak under TCG run the suite about 3-6 times slower
# than vmtest (1.5-2.5 h): every wait deadline x10, 2 h per test, 5 h per VM.
# Not part of `make check` (CI allows 60 min for all of it).
vmtest-debug: modules-debug user selftests
	@ICS_TIMEOUT_SCALE=$${ICS_TIMEOUT_SCALE:-10} \
		VMTEST_TEST_TIMEOUT=$${VMTEST_TEST_TIMEOUT:-7200} \
		VMTEST_TIMEOUT=$${VMTEST_TIMEOUT:-18000} \
		bash scripts/vmtest.sh $(VMTEST_FLAGS) debug=$(DEBUG_KDIR)

bench: deps
	@$(MAKE) -s modules user
	@bash scripts/bench.sh

bench-quick: deps
	@$(MAKE) -s modules user
	@bash scripts/bench-quick.sh

demo: deps
	@$(MAKE) -s modules user
	@bash scripts/demo.sh

dkms-test:
	@bash scripts/dkms-test.sh

# checkpatch from the kernel source tarball (scripts/ksft-extract.sh); then
# Documentation/ must parse (scripts/check-docs.py); then every built
# ics.ko must not import the networking core's own per-CPU state
# (softnet_data: the receive backlogs), which a module does not own.
CHECKPATCH := build/ksft/scripts/checkpatch.pl
style:
	@bash scripts/ksft-extract.sh >/dev/null
	@perl $(CHECKPATCH) --no-tree --terse --show-types --ignore FILE_PATH_CHANGES \
		-f $(filter-out %.mod.c,$(wildcard kmod/*.c selftests/ics_echo/*.c)) kmod/*.h include/net/ics.h \
		include/uapi/linux/ics.h user/bpf/ics_nic.bpf.c user/nic.h | \
		grep -v '^total: 0 errors, 0 warnings' | { ! grep .; }
	@python3 scripts/check-docs.py
	@for m in $(wildcard build/*/kmod/ics.ko); do \
		if nm -u $$m | grep -qw softnet_data; then \
			echo "$$m: imports softnet_data (the core's receive backlogs)"; exit 1; \
		fi; \
	done

install:
	$(MAKE) -C $(or $(KDIR),/lib/modules/$(shell uname -r)/build) M=$(TOP)/kmod modules_install
	depmod -a
	$(MAKE) -C user install

clean:
	rm -rf build
	$(MAKE) -C kmod clean 2>/dev/null || true
	$(MAKE) -C user clean
	-$(MAKE) -C selftests clean
