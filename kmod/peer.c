// SPDX-License-Identifier: GPL-2.0
/*
 * Peers: the node id -> MAC table of a binding, learned from received frames,
 * each with its membership state and its link. Readers use RCU; creation
 * takes bind->peers_lock. Peers live until unbind, whatever their state.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/rtnetlink.h>
#include <linux/slab.h>

#include "ics.h"

/*
 * One direction of a node's per-channel counters (struct ics_node_chans):
 * the table of an earlier peer of the node (an earlier binding), or a new
 * one. Set once; two CPUs creating the node's first peer keep one table.
 */
static struct ics_node_chans *ics_node_chans_get(struct ics_node_chans **slot)
{
	struct ics_node_chans *t = READ_ONCE(*slot), *old;

	if (t)
		return t;
	t = kzalloc(sizeof(*t), GFP_ATOMIC);
	if (!t)
		return NULL;
	old = cmpxchg(slot, NULL, t);
	if (old) {
		kfree(t);
		return old;
	}
	return t;
}

/* Bound, so the instance is in use: in->nodes is there (ics_net_use()). */
static struct ics_peer *ics_peer_new(struct ics_bind *b, u8 node, const u8 *addr)
{
	struct ics_node_tables *nt = &b->in->nodes[node];
	struct ics_node_chans *tx = ics_node_chans_get(&nt->dir[ICS_TX]);
	struct ics_node_chans *rx = ics_node_chans_get(&nt->dir[ICS_RX]);
	u32 ring = ics_window_frames();
	struct ics_peer *p;

	/* like the peer and its ring: the next frame from the node tries again */
	if (!tx || !rx)
		return NULL;
	p = kzalloc(sizeof(*p), GFP_ATOMIC);
	if (!p)
		return NULL;
	p->link.ring = kcalloc(ring, sizeof(*p->link.ring), GFP_ATOMIC);
	if (!p->link.ring) {
		kfree(p);
		return NULL;
	}
	p->link.ring_mask = ring - 1;
	p->b = b;
	p->node_id = node;
	p->tx_chans = tx;
	p->rx_chans = rx;
	ether_addr_copy(p->addr, addr);
	p->last_heard_ns = ktime_get_ns();
	p->state = ICS_MEMBER_NONE;
	spin_lock_init(&p->lock);
	spin_lock_init(&p->replay_lock);
	INIT_LIST_HEAD(&p->reasm);
	ics_link_init(p);
	return p;
}

static void ics_peer_free(struct ics_peer *p)
{
	kfree(p->link.ring);
	kfree_sensitive(p);	/* a derived key (auth.c) */
}

/*
 * A node id heard from a second MAC is a conflict while the node is alive
 * (joining or member): the frame is dropped, counted and reported, never
 * merged. A node that is down, left, or not heard yet may come back from a
 * new MAC: its peer is returned as it is, and only a heartbeat of the new
 * MAC that answers our challenge moves it (member.c, ics_claim()); its
 * other frames are dropped as those of a node not alive (rx.c).
 * Called from the receive path under rcu_read_lock().
 */
struct ics_peer *ics_peer_lookup(struct ics_bind *b, u8 node, const u8 *addr)
{
	struct ics_peer *p = rcu_dereference(b->peers[node]);
	struct ics_peer *old, *fresh;

	if (likely(p && ether_addr_equal(p->addr, addr)))
		return p;
	if (p) {
		if (ics_live(READ_ONCE(p->state)))
			goto conflict;
		return p;
	}

	fresh = ics_peer_new(b, node, addr);
	if (!fresh)
		return NULL;

	spin_lock_bh(&b->peers_lock);
	old = rcu_dereference_protected(b->peers[node], lockdep_is_held(&b->peers_lock));
	if (old) {
		/* Lost a race with another CPU creating it. */
		spin_unlock_bh(&b->peers_lock);
		ics_peer_free(fresh);
		p = old;
		if (!ether_addr_equal(p->addr, addr) && ics_live(READ_ONCE(p->state)))
			goto conflict;
		return p;
	}
	rcu_assign_pointer(b->peers[node], fresh);
	spin_unlock_bh(&b->peers_lock);
	return fresh;

conflict:
	ics_member_conflict(b, p, node, addr);
	return NULL;
}

/* Unbind: no reader or sender is left (see ics_unbind()). */
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
		ics_link_destroy(p);
		ics_peer_free(p);
	}
}

static void ics_node_chans_zero(struct ics_node_chans *t)
{
	int ch, r;

	for (ch = 0; t && ch < ICS_CHANNELS; ch++) {
		u64_stats_set(&t->ch[ch].msgs, 0);
		u64_stats_set(&t->ch[ch].bytes, 0);
		for (r = 0; r < ICS_HIST_ROWS; r++)
			u64_stats_set(&t->ch[ch].hist[r], 0);
	}
}

/*
 * icsctl reset: zero every node's tables, each direction under its
 * writer's lock. RTNL keeps the binding and its peers as they are; a node
 * without a peer gets none while peers_lock is held, so it has no writer.
 */
void ics_node_chans_reset(struct ics_net *in)
{
	struct ics_bind *b = rtnl_dereference(in->bind);
	struct ics_node_tables *nt;
	struct ics_peer *p;
	int node;

	ASSERT_RTNL();
	if (!in->nodes)
		return;		/* never used */
	for (node = 1; node <= ICS_MAX_NODES; node++) {
		nt = &in->nodes[node];
		p = b ? rtnl_dereference(b->peers[node]) : NULL;
		if (!p && b) {
			spin_lock_bh(&b->peers_lock);
			p = rcu_dereference_protected(b->peers[node],
						      lockdep_is_held(&b->peers_lock));
			if (!p) {
				ics_node_chans_zero(nt->dir[ICS_TX]);
				ics_node_chans_zero(nt->dir[ICS_RX]);
			}
			spin_unlock_bh(&b->peers_lock);
		} else if (!p) {
			ics_node_chans_zero(nt->dir[ICS_TX]);	/* unbound: no writer */
			ics_node_chans_zero(nt->dir[ICS_RX]);
		}
		if (!p)
			continue;
		spin_lock_bh(&p->link.tx_lock);
		ics_node_chans_zero(p->tx_chans);
		spin_unlock_bh(&p->link.tx_lock);
		spin_lock_bh(&p->lock);
		ics_node_chans_zero(p->rx_chans);
		spin_unlock_bh(&p->lock);
	}
}
