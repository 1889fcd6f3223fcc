// SPDX-License-Identifier: GPL-2.0
/*
 * Statistics: per-CPU u64 counters that only grow, updated with this_cpu_*()
 * from any context (process-context senders and softirq receivers share a
 * CPU's copy; this_cpu ops are safe against each other there). No lock on
 * the data path.
 *
 * A reset does not write other CPUs' counters (that would race with their
 * writers); it records the current sums as a baseline that every read
 * subtracts. On 32-bit kernels a read can see a torn u64 from another CPU;
 * the counters are for people and tests, not for control decisions.
 */
#include <linux/ktime.h>
#include <linux/slab.h>

#include "ics.h"

#define ICS_NR_U64	(sizeof(struct ics_stats) / sizeof(u64))
static_assert(sizeof(struct ics_stats) % sizeof(u64) == 0);

/*
 * At the instance's first use (ics_net_use(), stats_lock held). Published
 * only whole: in->nodes is read without that lock (netlink dumps, a
 * reset under RTNL), so a half-done attempt must never be seen there.
 */
int ics_stats_alloc(struct ics_net *in)
{
	struct ics_node_tables *nodes;
	struct ics_stats __percpu *stats;
	struct ics_stats *base;

	lockdep_assert_held(&in->stats_lock);
	base = kzalloc(sizeof(*base), GFP_KERNEL_ACCOUNT);
	stats = alloc_percpu_gfp(struct ics_stats, GFP_KERNEL_ACCOUNT);
	nodes = kcalloc(ICS_MAX_NODES + 1, sizeof(*nodes), GFP_KERNEL_ACCOUNT);
	if (!stats || !base || !nodes) {
		kfree(nodes);
		free_percpu(stats);
		kfree(base);
		return -ENOMEM;
	}
	in->base = base;
	in->stats = stats;
	smp_store_release(&in->nodes, nodes);	/* its zeroes before the pointer */
	return 0;
}

/* At netns exit (unbound: no writer left). */
void ics_stats_free(struct ics_net *in)
{
	int node;

	for (node = 0; in->nodes && node <= ICS_MAX_NODES; node++) {
		kfree(in->nodes[node].dir[ICS_TX]);
		kfree(in->nodes[node].dir[ICS_RX]);
	}
	kfree(in->nodes);
	in->nodes = NULL;
	free_percpu(in->stats);
	kfree(in->base);
	in->stats = NULL;
	in->base = NULL;
}

static void ics_stats_raw(struct ics_net *in, size_t off, size_t n, u64 *out)
{
	size_t i;
	int cpu;

	memset(out, 0, n * sizeof(u64));
	for_each_possible_cpu(cpu) {
		const u64 *c = (const u64 *)((const u8 *)per_cpu_ptr(in->stats, cpu) + off);

		for (i = 0; i < n; i++)
			out[i] += READ_ONCE(c[i]);
	}
}

/*
 * @n u64 counters at byte offset @off of struct ics_stats, since the reset;
 * zeroes for an instance never used.
 */
void ics_stats_sum(struct ics_net *in, size_t off, size_t n, u64 *out)
{
	const u64 *base;
	size_t i;

	mutex_lock(&in->stats_lock);
	if (!in->stats) {
		memset(out, 0, n * sizeof(u64));
		goto out;
	}
	base = (const u64 *)((const u8 *)in->base + off);
	ics_stats_raw(in, off, n, out);
	for (i = 0; i < n; i++)
		out[i] -= base[i];
out:
	mutex_unlock(&in->stats_lock);
}

void ics_stats_reset(struct ics_net *in)
{
	mutex_lock(&in->stats_lock);
	if (in->stats)
		ics_stats_raw(in, 0, ICS_NR_U64, (u64 *)in->base);
	in->reset_time = ktime_get_ns();
	atomic_inc(&in->gen);
	mutex_unlock(&in->stats_lock);
}
