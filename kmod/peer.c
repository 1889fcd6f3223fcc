// SPDX-License-Identifier: GPL-2.0
/*
 * Peers: the node id -> MAC table of a binding, learned from received frames.
 * Readers use RCU; creation and replacement take bind->peers_lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "ics.h"

static struct ics_peer *ics_peer_new(u8 node, const u8 *addr)
{
	struct ics_peer *p = kzalloc(sizeof(*p), GFP_ATOMIC);

	if (!p)
		return NULL;
	p->node_id = node;
	ether_addr_copy(p->addr, addr);
	p->last_heard = jiffies;
	spin_lock_init(&p->lock);
	INIT_LIST_HEAD(&p->reasm);
	return p;
}

/*
 * A node id heard from a second MAC is a conflict and the frame is dropped,
 * unless the known MAC has been silent for three hello intervals: then the
 * node is taken to have moved to a new NIC and the peer is replaced.
 */
static bool ics_peer_stale(const struct ics_peer *p)
{
	return time_after(jiffies, READ_ONCE(p->last_heard) +
				   3 * msecs_to_jiffies(ics_hello_ms));
}

/* Called from the receive path under rcu_read_lock(). */
struct ics_peer *ics_peer_lookup(struct ics_bind *b, u8 node, const u8 *addr, bool *created)
{
	struct ics_peer *p = rcu_dereference(b->peers[node]);
	struct ics_peer *old, *fresh;

	*created = false;
	if (likely(p && ether_addr_equal(p->addr, addr)))
		return p;
	if (p && !ics_peer_stale(p))
		goto conflict;

	fresh = ics_peer_new(node, addr);
	if (!fresh)
		return NULL;

	spin_lock_bh(&b->peers_lock);
	old = rcu_dereference_protected(b->peers[node], lockdep_is_held(&b->peers_lock));
	if (old != p) {
		/* Lost a race with another CPU creating or replacing it. */
		spin_unlock_bh(&b->peers_lock);
		kfree(fresh);
		if (old && ether_addr_equal(old->addr, addr))
			return old;
		goto conflict;
	}
	rcu_assign_pointer(b->peers[node], fresh);
	spin_unlock_bh(&b->peers_lock);

	if (old) {
		pr_info("node %u moved from %pM to %pM\n", node, old->addr, addr);
		ics_reasm_flush(b, old, ICS_REASM_CLOSE);
		kfree_rcu(old, rcu);
	}
	*created = true;
	return fresh;

conflict:
	ics_count(b->in, ICS_STAT_RX_NODE_CONFLICT);
	net_warn_ratelimited("%s: node %u claimed by %pM, known as %pM; frame dropped\n",
			     b->dev->name, node, addr, p ? p->addr : addr);
	return NULL;
}

/* Unbind: no reader is left (see ics_unbind()). */
void ics_peers_free(struct ics_bind *b)
{
	struct ics_peer *p;
	int node;

	for (node = 1; node <= ICS_MAX_NODES; node++) {
		p = rcu_dereference_protected(b->peers[node], true);
		if (!p)
			continue;
		RCU_INIT_POINTER(b->peers[node], NULL);
		ics_reasm_flush(b, p, ICS_REASM_CLOSE);
		kfree(p);
	}
}
