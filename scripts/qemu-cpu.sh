# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by the scripts that boot VMs: ics_qemu_cpu TCG prints the qemu
# -cpu option for a guest (nothing when none is needed); TCG is 1 when the
# guest runs under TCG, 0 under KVM.
#
# QEMU before 8.0 computes cmpxchg16b's flags under TCG from condition
# codes the translator has not brought up to date: in a block entered right
# after popf or an interrupt's iret, the guest continues with EFLAGS taken
# from the last arithmetic operand (IOPL, NT, TF, DF, AC and reserved bits
# set). scripts/qemu-cx16-flags.c shows it. The kernel's SLUB fast path
# does a this_cpu cmpxchg16b on every allocation, and guests under
# interrupt load died of double faults with such flags saved (Debian 12's
# QEMU 7.2; long benchmark runs). Without CX16 the kernel takes its own
# correct emulation of the instruction. QEMU 8.0 and later translate it
# inline and need nothing; KVM runs it natively.
ics_qemu_cpu()
{
	local major

	[ "$1" = 1 ] || return 0
	major=$(qemu-system-x86_64 --version 2>/dev/null |
		sed -n '1s/^QEMU emulator version \([0-9][0-9]*\)\..*/\1/p')
	if [ -n "$major" ] && [ "$major" -lt 8 ]; then
		echo "-cpu max,-cx16"
	fi
	return 0
}
