// SPDX-License-Identifier: GPL-2.0
/*
 * Does the emulator compute cmpxchg16b's flags from stale state?
 *
 * QEMU before 8.0 implements cmpxchg16b under TCG as a helper that starts
 * from the condition codes in the CPU state, which the translator has not
 * brought up to date: in a block entered with them in "EFLAGS" form (after
 * popf, or after iret when an interrupt returns), the helper takes the
 * last arithmetic operand for EFLAGS and the guest continues with IOPL,
 * NT, TF, DF, AC and reserved bits set from it. The kernel's SLUB fast
 * path (this_cpu_cmpxchg16b after an interrupt) then runs with garbage
 * flags until the next double fault. Debian 12 ships QEMU 7.2.
 *
 * Run in a TCG guest: prints one line, exits 0 when the flags after
 * cmpxchg16b are right or the CPU has no cmpxchg16b (-cpu ...,-cx16),
 * 1 when they carry the operand's bits.
 */
#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>

#define OPERAND	0xc5007c00ull	/* DF OF IOPL=3 NT and reserved bits 24, 26, 30, 31 */
#define ROUNDS	1000

int main(void)
{
	static uint64_t mem[2] __attribute__((aligned(16))) = { 1, 2 };
	unsigned int a, b, c, d;
	uint64_t flags = 0;
	int i, bad = 0;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_CMPXCHG16B)) {
		printf("cmpxchg16b: not offered by this CPU, no stale flags possible\n");
		return 0;
	}
	for (i = 0; i < ROUNDS; i++) {
		asm volatile("pushfq\n\t"
			     "popfq\n\t"		/* ends the emulator's block */
			     "mov %[v], %%rdi\n\t"
			     "mov $0, %%eax\n\t"
			     "mov $0, %%edx\n\t"
			     "mov $1, %%ebx\n\t"
			     "mov $0, %%ecx\n\t"
			     "add %%rdi, %%rax\n\t"	/* the last flags before it: rdi's */
			     "cmpxchg16b (%[m])\n\t"	/* fails: ZF clear, nothing else changes */
			     "pushfq\n\t"
			     "pop %[f]\n\t"
			     : [f] "=r"(flags)
			     : [v] "r"(OPERAND), [m] "r"(mem)
			     : "rax", "rbx", "rcx", "rdx", "rdi", "memory", "cc");
		bad += !!(flags & OPERAND);
	}
	printf("cmpxchg16b: flags %#llx after it, %d of %d rounds with the operand's bits%s\n",
	       (unsigned long long)flags, bad, ROUNDS,
	       bad ? ": the emulator corrupts EFLAGS (QEMU < 8.0 TCG)" : "");
	return bad ? 1 : 0;
}
