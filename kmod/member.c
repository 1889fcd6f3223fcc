// SPDX-License-Identifier: GPL-2.0
/*
 * Membership (Documentation/design.rst, "Membership"): heartbeats, the view
 * of the other nodes, quorum, and the events that report every change.
 *
 * Every instance broadcasts a heartbeat (a HELLO frame on CNX) every
 * heartbeat_ms: its incarnation, MTU, interval, votes, the nodes it hears,
 * its paused channels (flow.c), and echoes of others' heartbeats for
 * round-trip times. Broadcast, so the traffic grows with the number of
 * members, not with its square. A node heard, once it answered our
 * challenge (ics_claim()), is JOINING; it becomes a MEMBER once its
 * heartbeats list us too (both directions work); it is DOWN when nothing
 * at all (heartbeat or data) came from it for heartbeat_misses of its
 * intervals (each at most ICS_HB_TRUST of ours), and LEFT when it
 * announced that it unbinds. A node that does not know yet that we hear
 * it, or whose claim is not confirmed, gets a unicast answer at once, so
 * two nodes join in two round trips instead of an interval.
 *
 * The timer that sends heartbeats also declares the silent nodes down, so
 * a node with our interval is declared down at most heartbeat_ms *
 * (heartbeat_misses + 1) after its last frame; except that a tick that
 * runs a whole interval late (this machine stalled: frames from the others
 * may still wait in our queues) declares nobody down and leaves it to the
 * next (ICS_STAT_HB_LATE).
 *
 * Going down or leaving fails the node's messages at once (EHOSTDOWN) and
 * refuses new ones; its frames are dropped until it is heard again and
 * confirmed, so a node declared down cannot slip a message in before it
 * rejoins. A new incarnation (a restart) resets the node's link first
 * (ECONNRESET).
 * Incarnations grow: a heartbeat of an older incarnation than the one we
 * know, from a node we hold alive, is a leftover and is dropped.
 *
 * Events (a node's state changed, quorum gained or lost, a node id
 * conflict, bind, unbind) are queued under member_lock, numbered by the
 * view generation, and emitted in order from process context by ev_work:
 * to the in-kernel notifier chain, then to the "events" multicast group.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/export.h>
#include <linux/ktime.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>

#include "ics.h"

#define ICS_CONFLICT_EVENT_NS	(1ULL * NSEC_PER_SEC)	/* one event a second per node */
#define ICS_RTT_MAX_US		(10U * USEC_PER_SEC)	/* larger: a bogus echo */
#define ICS_HB_TRUST		4	/* a node's interval counts up to 4 of ours */
#define ICS_CLAIM_NS		(10ULL * NSEC_PER_SEC)	/* a claim's life (ics_claim()) */

static void ics_event_work(struct work_struct *w);

void ics_member_init(struct ics_net *in)
{
	spin_lock_init(&in->member_lock);
	in->hb_ms = ics_heartbeat_ms;
	in->hb_misses = ics_heartbeat_misses;
	in->votes = ics_votes;
	in->expected_cfg = ics_expected_votes;
	BLOCKING_INIT_NOTIFIER_HEAD(&in->notifier);
	INIT_WORK(&in->ev_work, ics_event_work);
}

/* The event ring, at the instance's first use (ics_net_use()). */
int ics_member_alloc(struct ics_net *in)
{
	in->ev_ring = kcalloc(ICS_EVENT_RING, sizeof(*in->ev_ring), GFP_KERNEL_ACCOUNT);
	return in->ev_ring ? 0 : -ENOMEM;
}

/* After the last unbind: emit what is queued, then free the queue. */
void ics_member_exit(struct ics_net *in)
{
	flush_work(&in->ev_work);
	kfree(in->ev_ring);
	in->ev_ring = NULL;
}

/*
 * Incarnations grow with the real-time clock, in units of 2^20 ns (about
 * 1 ms; a u32 of them wraps every 52 days, compared as serial numbers),
 * and always past the last one this instance used: a restart or a
 * re-bind is always a newer incarnation. RTNL.
 */
u32 ics_member_incarnation(struct ics_net *in)
{
	u32 inc = ktime_get_real_ns() >> 20;

	ASSERT_RTNL();
	if (in->last_incarnation && !ics_before(in->last_incarnation, inc))
		inc = in->last_incarnation + 1;
	if (!inc)
		inc = 1;
	in->last_incarnation = inc;
	return inc;
}

/* ------------------------------------------------------------- events --- */

/* Queue @ev (member_lock held): quorum figures and times filled in here. */
static void ics_event_queue(struct ics_net *in, struct ics_event *ev)
{
	lockdep_assert_held(&in->member_lock);
	ev->time_ns = ktime_get_ns();
	ev->real_ns = ktime_get_real_ns();
	ev->generation = in->generation;
	ev->current_votes = in->cur_votes;
	ev->expected_votes = in->expected;
	ev->quorum = in->quorum;
	ev->has_quorum = in->has_quorum;
	if (in->ev_head - in->ev_tail >= ICS_EVENT_RING) {
		in->ev_lost++;
		ics_count(in, ICS_STAT_EVENTS_LOST);
		return;
	}
	ev->lost = in->ev_lost;
	in->ev_lost = 0;
	in->ev_ring[in->ev_head++ % ICS_EVENT_RING] = *ev;
	queue_work(system_highpri_wq, &in->ev_work);
}

/* One event at a time, in queue order, outside member_lock. */
static void ics_event_work(struct work_struct *w)
{
	struct ics_net *in = container_of(w, struct ics_net, ev_work);
	struct ics_event ev;

	for (;;) {
		spin_lock_bh(&in->member_lock);
		if (in->ev_tail == in->ev_head) {
			spin_unlock_bh(&in->member_lock);
			return;
		}
		ev = in->ev_ring[in->ev_tail++ % ICS_EVENT_RING];
		spin_unlock_bh(&in->member_lock);

		blocking_notifier_call_chain(&in->notifier, ev.type, &ev);
		ics_nl_event(in, &ev);
		cond_resched();
	}
}

/* --------------------------------------------------------------- view --- */

/*
 * Recompute the votes present (ours and every member's), expected votes
 * and quorum (the TruCluster rule: (expected + 2) / 2). Expected votes are
 * the configured value or, when more, the most votes ever present at once
 * since bind: a member going down does not lower what is expected.
 * True when the verdict changed. member_lock.
 */
static bool ics_quorum_update(struct ics_net *in, struct ics_bind *b)
{
	u32 cur = 0;
	struct ics_peer *p;
	bool has;
	int node;

	lockdep_assert_held(&in->member_lock);
	if (b) {
		cur = READ_ONCE(in->votes);
		for (node = 1; node <= ICS_MAX_NODES; node++) {
			p = rcu_dereference_check(b->peers[node], lockdep_is_held(&in->member_lock));
			if (p && p->state == ICS_MEMBER_UP)
				cur += p->votes;
		}
	}
	in->peak_votes = max(in->peak_votes, cur);
	in->cur_votes = cur;
	in->expected = max(READ_ONCE(in->expected_cfg), in->peak_votes);
	in->quorum = (in->expected + 2) / 2;
	has = b && cur >= in->quorum;
	if (has == in->has_quorum)
		return false;
	WRITE_ONCE(in->has_quorum, has);
	return true;
}

/*
 * The view changed (member_lock): a new generation if @gen, quorum
 * recomputed, then @ev (if any) and a QUORUM event if the verdict changed,
 * in that order.
 */
static void ics_view_changed(struct ics_net *in, struct ics_bind *b, struct ics_event *ev,
			     bool gen)
{
	struct ics_event q = { .type = ICS_EVENT_QUORUM, .node = b ? b->node_id : 0 };
	bool flipped;

	if (gen)
		in->generation++;
	flipped = ics_quorum_update(in, b);
	if (ev)
		ics_event_queue(in, ev);
	if (flipped)
		ics_event_queue(in, &q);
}

/*
 * @p enters @state for @reason (member_lock held). The receive side of its
 * link changes under its lock at the same time: a node that is not alive
 * any more loses its partial messages and out-of-order frames, and its
 * session is refused (it must start a new one, see link_rx.c); one that
 * left also loses the ids of the messages it delivered and those held for
 * our handlers, as its next incarnation numbers from 1. Held messages of
 * a node that is only down stay: it may not have declared us down, and
 * would take the next ACK's word that they were taken. Its send
 * side's messages go onto @fail, for the caller to report (EHOSTDOWN) once
 * every lock is dropped.
 */
static void ics_member_set(struct ics_net *in, struct ics_peer *p, u8 state, u8 reason,
			   u64 now, struct list_head *fail)
{
	struct ics_event ev = {
		.type = ICS_EVENT_NODE,
		.node = p->node_id,
		.old_state = p->state,
		.state = state,
		.reason = reason,
		.incarnation = p->incarnation,
		.silent_ms = div_u64(ics_silent_ns(p, now), NSEC_PER_MSEC),
	};
	u32 sess;

	lockdep_assert_held(&in->member_lock);
	ether_addr_copy(ev.addr, p->addr);
	spin_lock(&p->lock);
	WRITE_ONCE(p->state, state);
	if (!ics_live(state) && ics_live(ev.old_state)) {
		sess = p->link.rx_sess;
		__ics_link_rx_reset(p, state == ICS_MEMBER_LEFT);
		if (state == ICS_MEMBER_DOWN && sess)
			p->link.rx_refuse = sess;
	}
	spin_unlock(&p->lock);
	if (!ics_live(state) && ics_live(ev.old_state))
		ics_link_fail_take(p, fail);
	p->reason = reason;
	p->since_ns = now;
	if (!ics_live(state)) {
		p->told = false;
		p->sees_us = false;
		p->echo_pending = false;
	}
	ics_view_changed(in, p->b, &ev, true);
}

/* ---------------------------------------------------------- heartbeats --- */

static void ics_echo_put(struct ics_wire_echo *e, struct ics_peer *p, u64 now)
{
	e->node = p->node_id;
	e->ts_us = htonl(p->echo_ts_us);
	e->nonce = htonl(p->echo_nonce);
	e->held_us = htonl((u32)div_u64(now - p->echo_rx_ns, NSEC_PER_USEC));
	p->echo_pending = false;
}

/*
 * The nonce of our heartbeat sent at @us (microseconds of the monotonic
 * clock, all 64 bits): a keyed hash, so that an echo of it is an echo of
 * that heartbeat of this binding and no other (ics_claim()).
 */
static u32 ics_hello_nonce(const struct ics_bind *b, u64 us)
{
	return (u32)siphash_1u64(us, &b->hello_key);
}

/*
 * Our heartbeat as it stands (member_lock held): the nodes we hear, and
 * echoes of up to ICS_HB_ECHOES heartbeats not echoed yet, @to's first.
 * Every node it lists (@to only, for a unicast answer) is told we hear it.
 */
static void ics_hello_build(struct ics_bind *b, struct ics_wire_hello *h, u32 flags,
			    struct ics_peer *to)
{
	struct ics_net *in = b->in;
	u64 now = ktime_get_ns(), seen = 0, us = div_u64(now, NSEC_PER_USEC);
	unsigned int n = 0, i, node, start = b->echo_next;
	struct ics_peer *p;

	lockdep_assert_held(&in->member_lock);
	memset(h, 0, sizeof(*h));
	h->incarnation = htonl(b->incarnation);
	h->mtu = htonl(READ_ONCE(b->dev->mtu));
	h->hello_ms = htonl(READ_ONCE(in->hb_ms));
	h->flags = htonl(flags);
	h->seq = htonl(b->hb_seq);
	h->ts_us = htonl((u32)us);
	h->nonce = htonl(ics_hello_nonce(b, us));
	h->votes = READ_ONCE(in->votes);
	ics_pause_put(ics_pause_word(in), &h->paused, &h->pause_gen);
	if (to && to->echo_pending)
		ics_echo_put(&h->echo[n++], to, now);
	for (i = 0; i < ICS_MAX_NODES; i++) {
		node = (start + i) % ICS_MAX_NODES + 1;
		p = rcu_dereference_check(b->peers[node], lockdep_is_held(&in->member_lock));
		if (!p || !ics_live(p->state))
			continue;
		seen |= BIT_ULL(node - 1);
		if (!to)
			p->told = true;
		/* An answer goes to @to alone: it carries only @to's echo. */
		if (!to && p->echo_pending && n < ICS_HB_ECHOES) {
			ics_echo_put(&h->echo[n++], p, now);
			b->echo_next = node % ICS_MAX_NODES;
		}
	}
	if (to && ics_live(to->state))
		to->told = true;
	h->seen = cpu_to_be64(flags & ICS_HF_LEAVING ? 0 : seen);
}

/* Our own echo in @h: a round-trip sample. member_lock. */
static void ics_hello_rtt(struct ics_bind *b, struct ics_peer *p, const struct ics_wire_hello *h,
			  u64 now)
{
	u32 rtt;
	int i;

	for (i = 0; i < ICS_HB_ECHOES; i++) {
		if (h->echo[i].node != b->node_id)
			continue;
		rtt = (u32)div_u64(now, NSEC_PER_USEC) - ntohl(h->echo[i].ts_us) -
		      ntohl(h->echo[i].held_us);
		if (rtt < ICS_RTT_MAX_US)
			p->hb_rtt_us = max(rtt, 1U);
		return;
	}
}

/* Fields rx.c could not check; reserved ones are ignored, for later versions. */
static bool ics_hello_valid(const struct ics_wire_hello *h)
{
	/* The same size on every ABI (seen is a __be64): no implicit padding. */
	BUILD_BUG_ON(sizeof(struct ics_wire_hello) != 176);
	u32 ms = ntohl(h->hello_ms);
	int i;

	if ((ntohl(h->flags) & ~ICS_HF_ALL) || h->votes > 1 ||
	    ms < ICS_HEARTBEAT_MS_MIN || ms > ICS_HEARTBEAT_MS_MAX)
		return false;
	for (i = 0; i < ICS_HB_ECHOES; i++)
		if (h->echo[i].node > ICS_MAX_NODES)
			return false;
	return true;
}

/*
 * Admission (design.rst, "Admission"). A heartbeat that would make @p
 * alive, or give it another MAC or incarnation, is a claim: it takes
 * effect only once a heartbeat of the same MAC and incarnation echoes one
 * of ours sent since the claim was first heard (its time, and the nonce of
 * this binding: a heartbeat recorded while we were bound before cannot
 * echo it). So the node hears us now,
 * from that MAC, and a stray, corrupted or recorded frame makes no member,
 * moves no node and replaces no incarnation. A different claim replaces
 * the one in progress (which its node's next heartbeat makes again), and
 * a claim lives ICS_CLAIM_NS at most: an older one starts again, so an
 * echo's age (32-bit microseconds) is always compared with a short span.
 * member_lock. True if @h confirms the claim.
 */
static bool ics_claim(struct ics_bind *b, struct ics_peer *p, const u8 *src, u32 inc,
		      const struct ics_wire_hello *h, u64 now)
{
	u64 now_us = div_u64(now, NSEC_PER_USEC);
	u32 age;
	int i;

	if (p->claim_ns && inc == p->claim_inc && ether_addr_equal(src, p->claim_addr) &&
	    now - p->claim_ns < ICS_CLAIM_NS) {
		for (i = 0; i < ICS_HB_ECHOES; i++) {
			if (h->echo[i].node != b->node_id)
				continue;
			/* sent since the claim began: not longer ago than it */
			age = (u32)now_us - ntohl(h->echo[i].ts_us);
			if (age > now_us - div_u64(p->claim_ns, NSEC_PER_USEC))
				return false;
			/* and that very heartbeat of this binding of ours */
			return ntohl(h->echo[i].nonce) == ics_hello_nonce(b, now_us - age);
		}
		return false;
	}
	ether_addr_copy(p->claim_addr, src);
	p->claim_inc = inc;
	p->claim_ns = now;
	p->claim_answered = false;
	return false;
}

/* A confirmed claim from another MAC: the peer follows it. member_lock. */
static void ics_peer_set_addr(struct ics_peer *p, const u8 *addr)
{
	lockdep_assert_held(&p->b->in->member_lock);
	if (p->incarnation)
		net_info_ratelimited("%s: node %u moved from %pM to %pM\n", p->b->dev->name,
				     p->node_id, p->addr, addr);
	/* Senders read addr under tx_lock; the receive path compares it racily. */
	spin_lock(&p->lock);
	spin_lock(&p->link.tx_lock);
	ether_addr_copy(p->addr, addr);
	spin_unlock(&p->link.tx_lock);
	spin_unlock(&p->lock);
}

/*
 * The interval @p announced, as far as we believe it: at most
 * ICS_HB_TRUST times ours, so a node cannot make us wait for its failure
 * longer than our own tunables allow.
 */
static u64 ics_peer_hb_ns(const struct ics_net *in, const struct ics_peer *p)
{
	return (u64)min(p->hb_ms, READ_ONCE(in->hb_ms) * ICS_HB_TRUST) * NSEC_PER_MSEC;
}

/*
 * A heartbeat from @p, from MAC @src, incarnation @inc and salt @salt
 * (rx.c checked the frame). Updates the view; answers a node that does not
 * know yet that we hear it, and challenges a claim.
 */
void ics_hello_rcv(struct ics_bind *b, struct ics_peer *p, const u8 *src, u64 salt,
		   struct sk_buff *skb, u32 frame_len, u32 inc)
{
	struct ics_net *in = b->in;
	u64 now = ktime_get_ns(), gap;
	struct ics_wire_hello h, ans;
	bool restart = false, reply = false, fresh = false, moved = false, sees_us, changed;
	u32 flags, seq, mtu;
	u8 old, state, reason = ICS_REASON_NONE, votes;
	u8 from[ETH_ALEN] __aligned(2);
	LIST_HEAD(fail);
	int err = 0;
	s32 ahead;

	if (skb_copy_bits(skb, 0, &h, sizeof(h))) {
		ics_count(in, ICS_STAT_RX_BAD_LEN);
		kfree_skb(skb);
		return;
	}
	ether_addr_copy(from, src);	/* @src is in @skb */
	src = from;
	consume_skb(skb);
	if (!ics_hello_valid(&h)) {
		ics_count(in, ICS_STAT_RX_BAD_HELLO);
		return;
	}
	flags = ntohl(h.flags);
	seq = ntohl(h.seq);
	votes = h.votes;
	sees_us = be64_to_cpu(h.seen) & BIT_ULL(b->node_id - 1);
	/* Answers: at most 4 per interval (per second if longer) unless its state changed. */
	gap = (u64)min(READ_ONCE(in->hb_ms), 1000U) * NSEC_PER_MSEC / 4;

	spin_lock_bh(&in->member_lock);
	old = p->state;
	if (ics_live(old) && inc == p->incarnation && ether_addr_equal(src, p->addr)) {
		/*
		 * The node we hold alive. Its heartbeats count 1, 2, ...: one
		 * older than the last is a leftover, a stray copy or a
		 * recording (not a sign of life: a recording would keep a dead
		 * node alive); one further ahead than it could have counted
		 * since its last (at the shortest interval) is corrupted.
		 */
		ahead = seq - p->hb_seq;
		if (ahead < 0 || (u64)ahead > 2 + div_u64(now - p->hb_rx_ns,
							  ICS_HEARTBEAT_MS_MIN * NSEC_PER_MSEC)) {
			spin_unlock_bh(&in->member_lock);
			ics_count(in, ICS_STAT_RX_BAD_HELLO);
			return;
		}
		p->claim_ns = 0;	/* a claim on it was not its own */
	} else if (ics_live(old) && ics_before(inc, p->incarnation)) {
		/* A leftover of an incarnation that restarted since. */
		spin_unlock_bh(&in->member_lock);
		ics_count(in, ICS_STAT_RX_BAD_SESSION);
		return;
	} else if (ics_live(old) && !ether_addr_equal(src, p->addr)) {
		/* It came alive at its MAC since rx.c looked: a conflict. */
		spin_unlock_bh(&in->member_lock);
		ics_count(in, ICS_STAT_RX_NODE_CONFLICT);
		return;
	} else if (!(flags & ICS_HF_LEAVING) && ics_claim(b, p, src, inc, &h, now)) {
		/* Confirmed: the node as it is now; tell it we hear it. */
		ics_auth_confirm(p, inc, salt);
		p->claim_ns = 0;
		p->told = false;
		moved = p->incarnation && !ether_addr_equal(src, p->addr);
		restart = p->incarnation && inc != p->incarnation;
		fresh = restart || !p->incarnation;
		if (!ether_addr_equal(src, p->addr))
			ics_peer_set_addr(p, src);
	} else {
		/*
		 * Not confirmed: challenge it with a heartbeat of ours, from
		 * now. Rate-limited; but its own first challenge is answered at
		 * once (claims made at the same time on both sides would wait
		 * for the next beat), once per claim: no ping-pong; and once
		 * per gap for the node id, as a claim is new at each MAC or
		 * incarnation, which a forger may change at every frame.
		 */
		bool quick = (flags & ICS_HF_REPLY) && !p->claim_answered &&
			     (s64)(now - p->quick_ns) >= (s64)gap;

		if (!(flags & ICS_HF_LEAVING) &&
		    ((s64)(now - p->reply_ns) >= (s64)gap || quick)) {
			if (flags & ICS_HF_REPLY) {
				p->claim_answered = true;
				p->quick_ns = now;
			}
			p->echo_ts_us = ntohl(h.ts_us);
			p->echo_nonce = ntohl(h.nonce);
			p->echo_rx_ns = now;
			p->echo_pending = true;
			p->reply_ns = now;
			ics_hello_build(b, &ans, ICS_HF_REPLY, p);
			reply = true;
		}
		spin_unlock_bh(&in->member_lock);
		ics_count(in, ICS_STAT_RX_UNCONFIRMED);
		if (reply)
			ics_hello_xmit(b, p->node_id, inc, from, &ans, GFP_ATOMIC);
		return;
	}
	ics_count_rx_frame(in, frame_len);
	ics_count(in, ICS_STAT_HELLO_RX);
	ics_count_dir(&in->stats->chan[ICS_CH_CNX].rx, sizeof(h));

	if (fresh) {
		spin_lock(&p->lock);
		if (restart)
			__ics_link_rx_reset(p, true);
		/* What was sent to the old incarnation fails, now. */
		ics_link_rebind(p, inc, restart && ics_live(old) ? &fail : NULL);
		spin_unlock(&p->lock);
		if (restart && ics_live(old))
			err = -ECONNRESET;
		p->hb_seq = seq;
		p->hb_rtt_us = 0;
		p->told = false;
		p->echo_pending = false;
	} else if ((s32)(seq - p->hb_seq) > 0) {
		/* A gap, but no more than it could have sent since we heard it. */
		p->hb_missed += min_t(u64, seq - p->hb_seq - 1,
				      div64_u64(ics_silent_ns(p, now), ics_peer_hb_ns(in, p)) + 1);
		p->hb_seq = seq;
	}
	p->hb_rx++;
	p->hb_rx_ns = now;
	ics_heard(p, now);
	p->hb_ms = ntohl(h.hello_ms);
	p->sees_us = sees_us;
	p->echo_ts_us = ntohl(h.ts_us);
	p->echo_nonce = ntohl(h.nonce);
	p->echo_rx_ns = now;
	p->echo_pending = !(flags & ICS_HF_LEAVING);
	ics_hello_rtt(b, p, &h, now);

	state = old;
	if (flags & ICS_HF_LEAVING) {
		state = ICS_MEMBER_LEFT;
		reason = ICS_REASON_LEAVING;
	} else if (restart || !ics_live(old)) {
		state = sees_us ? ICS_MEMBER_UP : ICS_MEMBER_JOINING;
		reason = restart ? ICS_REASON_RESTART :
			 moved ? ICS_REASON_MOVED : ICS_REASON_HEARD;
	} else if (old == ICS_MEMBER_JOINING && sees_us) {
		state = ICS_MEMBER_UP;
		reason = ICS_REASON_TWO_WAY;
	} else if (old == ICS_MEMBER_UP && !sees_us) {
		state = ICS_MEMBER_JOINING;
		reason = ICS_REASON_ONE_WAY;
	}
	changed = state != old || restart;
	if (state == ICS_MEMBER_LEFT && ics_live(old) && !err)
		err = -EHOSTDOWN;
	if (changed) {
		p->votes = votes;
		ics_member_set(in, p, state, reason, now, &fail);
	} else if (votes != p->votes) {
		p->votes = votes;
		ics_view_changed(in, b, NULL, false);
	}

	/* Answer at once if it does not know we hear it. */
	if (ics_live(state) && (!sees_us || !p->told) &&
	    (changed || (s64)(now - p->reply_ns) >= (s64)gap)) {
		p->reply_ns = now;
		ics_hello_build(b, &ans, ICS_HF_REPLY, p);
		reply = true;
	}
	spin_unlock_bh(&in->member_lock);

	ics_link_fail_report(in, &fail, err);
	ics_link_pause_rcv(p, ntohs(h.paused), ntohs(h.pause_gen), fresh);
	mtu = ntohl(h.mtu);
	if (mtu >= ICS_MIN_MTU && mtu != READ_ONCE(p->link.peer_mtu)) {
		WRITE_ONCE(p->link.peer_mtu, mtu);
		ics_link_push(p);	/* frames in flight may be too big now */
	}
	if (reply)
		ics_hello_xmit(b, p->node_id, inc, NULL, &ans, GFP_ATOMIC);
}

/*
 * A node silent past its deadline may be one whose heartbeats wait in our
 * own receive queues: a CPU whose softirqs are held off (ksoftirqd behind
 * busy tasks, a CPU taken by interrupts) or whose NET_RX is behind its
 * budget takes nothing from its backlog meanwhile. A timer does not see
 * that (timers run before NET_RX, and on time while NET_RX falls behind),
 * so before declaring anyone down we send a frame of our own through the
 * receive path of every online CPU: a timer on that CPU, due at the next
 * tick, hands a marker frame to its receive path (netif_rx(), as a driver
 * does with a frame it received); the marker waits behind whatever that
 * CPU's backlog holds, and ics_rcv() takes it (ics_rx_marker()). While a
 * marker is under way, or the last one came ICS_RX_LATE or more late,
 * that CPU's receive path holds frames, and the decision waits
 * (ics_rx_waiting()).
 *
 * The marker is addressed from and to the bound device's own address and
 * carries a random cookie of this binding, so no frame from the wire can
 * pass for one. What the device's receive path runs (a packet capture, a
 * tc or XDP program) sees it like any received frame. A marker the queue
 * refused (backlog full), or one we could not allocate, counts as one that
 * came late; one lost otherwise (a filter dropped it) as one still under
 * way, until the decision's own bound (ics_member_check()) runs out.
 */
#define ICS_RX_LATE	2	/* jiffies: a marker this late found frames queued */
#define ICS_RX_NOW	ULONG_MAX	/* ics_rx_mark_end(): late as of now */

struct ics_rx_mark {
	u64 cookie;
	u32 cpu;
	u32 seq;
} __packed;	/* read where eth_type_trans() left skb->data */

/* What ics_rx_waiting() found: the receive path clear, not known yet, held. */
enum { ICS_RX_CLEAR, ICS_RX_UNKNOWN, ICS_RX_HELD };

/* @c's marker @seq arrived, or will not, @late jiffies late: none under way. */
static void ics_rx_mark_end(struct ics_rx_cpu *c, u32 seq, unsigned long late)
{
	unsigned long now = jiffies;

	spin_lock_bh(&c->lock);
	if (c->armed && c->seq == seq) {
		if (late == ICS_RX_NOW)
			late = time_after(now, c->due) ? now - c->due : 0;
		c->late = late;
		c->armed = false;
	}
	spin_unlock_bh(&c->lock);
}

/* The timer on this CPU: the marker onto its receive queue. */
static void ics_rx_probe(struct timer_list *t)
{
	struct ics_rx_cpu *c = from_timer(c, t, probe);
	struct ics_bind *b = c->b;
	struct net_device *dev = b->dev;
	struct ics_rx_mark *m;
	struct sk_buff *skb;
	struct ethhdr *eth;
	u32 seq;

	spin_lock_bh(&c->lock);
	seq = c->seq;
	spin_unlock_bh(&c->lock);
	/* A device down refuses frames: no wait of ours. */
	if (!netif_running(dev)) {
		ics_rx_mark_end(c, seq, 0);
		return;
	}
	skb = netdev_alloc_skb(dev, ETH_HLEN + sizeof(*m));
	if (!skb) {
		ics_rx_mark_end(c, seq, ICS_RX_LATE);	/* short of memory: held up */
		return;
	}
	eth = skb_put(skb, ETH_HLEN);
	ether_addr_copy(eth->h_dest, dev->dev_addr);
	ether_addr_copy(eth->h_source, dev->dev_addr);
	eth->h_proto = htons(ICS_ETH_P);
	m = skb_put(skb, sizeof(*m));
	m->cookie = b->rx_cookie;
	m->cpu = c->cpu;	/* not smp_processor_id(): hotplug moves timers */
	m->seq = seq;
	skb->protocol = eth_type_trans(skb, dev);
	if (netif_rx(skb) == NET_RX_DROP)
		ics_rx_mark_end(c, seq, ICS_RX_LATE);	/* a full queue: held up */
}

/*
 * ics_rcv(), for a frame from our own address: true if it was one of our
 * markers (consumed); false for any other frame, which takes the usual
 * path (a clone of this member, same address and node id, is a conflict).
 */
bool ics_rx_marker(struct ics_bind *b, struct sk_buff *skb)
{
	const struct ics_rx_mark *m;

	if (skb->len != sizeof(*m) || skb_headlen(skb) < sizeof(*m))
		return false;
	m = (const struct ics_rx_mark *)skb->data;
	if (m->cookie != b->rx_cookie || m->cpu >= nr_cpu_ids || !cpu_possible(m->cpu))
		return false;
	ics_rx_mark_end(per_cpu_ptr(b->rx_cpu, m->cpu), m->seq, ICS_RX_NOW);
	consume_skb(skb);
	return true;
}

int ics_rx_cpu_init(struct ics_bind *b)
{
	int cpu;

	b->rx_cpu = alloc_percpu_gfp(struct ics_rx_cpu, GFP_KERNEL_ACCOUNT);
	if (!b->rx_cpu)
		return -ENOMEM;
	b->rx_cookie = get_random_u64();
	for_each_possible_cpu(cpu) {
		struct ics_rx_cpu *c = per_cpu_ptr(b->rx_cpu, cpu);

		spin_lock_init(&c->lock);
		c->b = b;
		c->cpu = cpu;
		timer_setup(&c->probe, ics_rx_probe, 0);
	}
	return 0;
}

/*
 * Unbinding, once the timers that arm the probes are stopped and ics_rcv()
 * can no longer run (dev_remove_pack()). A marker still queued is dropped
 * by the stack (no handler), or by the device's unregistering.
 */
void ics_rx_cpu_exit(struct ics_bind *b)
{
	int cpu;

	for_each_possible_cpu(cpu)
		timer_shutdown_sync(&per_cpu_ptr(b->rx_cpu, cpu)->probe);
	free_percpu(b->rx_cpu);
}

/*
 * Whether our receive path holds frames, as far as the markers of check
 * episode @gen tell: ICS_RX_HELD if a CPU's marker is overdue or came
 * late (or was lost: under way for @lost jiffies), ICS_RX_UNKNOWN while
 * one is under way, ICS_RX_CLEAR once every online CPU passed one on
 * time. A CPU without a marker of @gen on time gets a new one.
 *
 * Under member_lock (one caller at a time). A marker ends (armed false)
 * only once its probe ran, and we arm a probe only with armed false, so
 * add_timer_on() finds no probe pending (it would WARN); timer_pending()
 * guards that anyway.
 *
 * CPU hotplug: we cannot hold it off here. A probe queued on a CPU that
 * then goes down is moved to a live CPU (timers_dead_cpu()) and runs
 * there. But where softirqs are preemptible (PREEMPT_RT) a CPU may go down
 * between cpu_online() and add_timer_on(), after its timers were moved:
 * the probe would then sit on the dead CPU's base. A probe still armed on
 * an offline CPU is taken off here (a del_timer() that finds it pending
 * owns it; one that does not raced with the probe, which ends the marker).
 * del_timer(): the first 6.1 kernels of bookworm lack timer_delete().
 */
static int ics_rx_waiting(struct ics_bind *b, u32 gen, unsigned long lost)
{
	unsigned long now = jiffies;
	int state = ICS_RX_CLEAR;
	int cpu;

	lockdep_assert_held(&b->in->member_lock);
	for_each_possible_cpu(cpu) {
		struct ics_rx_cpu *c = per_cpu_ptr(b->rx_cpu, cpu);

		spin_lock_bh(&c->lock);
		if (!cpu_online(cpu)) {
			if (c->armed && del_timer(&c->probe))
				c->armed = false;
			goto next;
		}
		if (c->armed) {
			if (time_after(now, c->due + lost) && !timer_pending(&c->probe)) {
				c->armed = false;	/* lost: a late one */
				c->late = lost;
			} else {
				state = max(state, time_after(now, c->due + 1) ?
						   ICS_RX_HELD : ICS_RX_UNKNOWN);
				goto next;
			}
		}
		if (c->gen == gen) {
			if (c->late < ICS_RX_LATE)
				goto next;	/* passed on time */
			state = ICS_RX_HELD;
		} else {
			state = max(state, ICS_RX_UNKNOWN);
		}
		if (timer_pending(&c->probe))
			goto next;
		c->seq++;
		c->gen = gen;
		c->due = now + 1;
		c->armed = true;
		c->probe.expires = now + 1;
		add_timer_on(&c->probe, cpu);
next:
		spin_unlock_bh(&c->lock);
	}
	return state;
}

/*
 * Declare down every alive node silent for more than heartbeat_misses of
 * its intervals; unless our receive path may hold frames (ics_rx_waiting():
 * one may be the node's heartbeat), then look again one tick later, for
 * at most another heartbeat_misses of our intervals or half the link
 * timeout, whichever is longer (hb_deferred, once an episode, when a
 * marker showed frames held): a backlog that many senders fill on a
 * starved CPU holds frames for hundreds of ms, and a node silent by our
 * own fault is reported before its link times out.
 * rcu_read_lock() held; messages of the nodes declared down go to @fail.
 */
static void ics_member_check(struct ics_bind *b, u64 now, struct list_head *fail)
{
	struct ics_net *in = b->in;
	u32 misses = READ_ONCE(in->hb_misses);
	u64 grace = max_t(u64, (u64)READ_ONCE(in->hb_ms) * misses, ics_link_timeout_ms / 2) *
		    NSEC_PER_MSEC;
	int rx = -1;	/* not looked yet */
	struct ics_peer *p;
	int node;

	spin_lock_bh(&in->member_lock);
	for (node = 1; node <= ICS_MAX_NODES; node++) {
		p = rcu_dereference(b->peers[node]);
		if (!p || !ics_live(p->state) ||
		    ics_silent_ns(p, now) <= ics_peer_hb_ns(in, p) * misses)
			continue;
		if (rx < 0) {
			if (!b->defer_ns)
				b->defer_gen++;	/* a new episode: new markers */
			rx = ics_rx_waiting(b, b->defer_gen, nsecs_to_jiffies(grace) + 1);
		}
		if (rx != ICS_RX_CLEAR && (!b->defer_ns || (s64)(now - b->defer_ns) < (s64)grace)) {
			if (!b->defer_ns)
				b->defer_ns = now;
			if (rx == ICS_RX_HELD && !b->defer_held) {
				b->defer_held = true;
				ics_count(in, ICS_STAT_HB_DEFERRED);
			}
			mod_timer(&b->check_timer, jiffies + 1);
			continue;
		}
		ics_member_set(in, p, ICS_MEMBER_DOWN, ICS_REASON_SILENT, now, fail);
		net_info_ratelimited("%s: node %u down: silent for %llu ms\n", b->dev->name,
				     node, div_u64(ics_silent_ns(p, now), NSEC_PER_MSEC));
	}
	if (rx <= ICS_RX_CLEAR) {
		b->defer_ns = 0;	/* nothing deferred any more */
		b->defer_held = false;
	}
	spin_unlock_bh(&in->member_lock);
}

/* A deferred decision of ics_member_check(), one tick later. */
void ics_check_timer(struct timer_list *t)
{
	struct ics_bind *b = from_timer(b, t, check_timer);
	LIST_HEAD(fail);

	rcu_read_lock();
	ics_member_check(b, ktime_get_ns(), &fail);
	rcu_read_unlock();
	ics_link_fail_report(b->in, &fail, -EHOSTDOWN);
}

/*
 * The instance timer, every heartbeat_ms: declare silent nodes down,
 * broadcast our heartbeat, expire a silent peer's partial messages.
 */
void ics_timer(struct timer_list *t)
{
	struct ics_bind *b = from_timer(b, t, timer);
	struct ics_net *in = b->in;
	unsigned long iv = msecs_to_jiffies(READ_ONCE(in->hb_ms)), due = t->expires;
	bool late = time_after(jiffies, due + iv);
	struct ics_wire_hello h;
	struct ics_peer *p;
	bool held = false;
	LIST_HEAD(fail);
	int node;

	rcu_read_lock();
	if (late)
		ics_count(in, ICS_STAT_HB_LATE);
	else
		ics_member_check(b, ktime_get_ns(), &fail);
	spin_lock_bh(&in->member_lock);
	b->hb_seq++;
	ics_hello_build(b, &h, 0, NULL);
	spin_unlock_bh(&in->member_lock);

	for (node = 1; node <= ICS_MAX_NODES; node++) {
		p = rcu_dereference(b->peers[node]);
		if (!p)
			continue;
		if (!list_empty_careful(&p->reasm))
			ics_reasm_flush(b, p, ICS_REASM_IDLE);
		/* held messages to offer again, or their taking to repeat (to the live) */
		if (READ_ONCE(p->link.rx_held) ||
		    (READ_ONCE(p->link.held_echo) && ics_live(READ_ONCE(p->state))))
			held = true;
	}
	rcu_read_unlock();
	if (held) {
		WRITE_ONCE(in->pause_tick, true);
		queue_work(system_highpri_wq, &in->pause_work);
	}
	ics_link_fail_report(in, &fail, -EHOSTDOWN);
	ics_hello_xmit(b, ICS_NODE_BROADCAST, 0, NULL, &h, GFP_ATOMIC);

	/* On the beat, unless we are a whole interval behind it. */
	mod_timer(&b->timer, late ? jiffies + iv : due + iv);
}

/*
 * Binding (RTNL), before the binding is published: the first view (a new
 * generation, the BOUND event), so that no heartbeat heard can come first.
 */
void ics_member_bind(struct ics_bind *b)
{
	struct ics_net *in = b->in;
	struct ics_event ev = {
		.type = ICS_EVENT_BOUND,
		.node = b->node_id,
		.state = ICS_MEMBER_UP,
		.incarnation = b->incarnation,
	};

	ASSERT_RTNL();
	ether_addr_copy(ev.addr, b->dev->dev_addr);
	b->bound_ns = ktime_get_ns();
	spin_lock_bh(&in->member_lock);
	in->peak_votes = 0;
	ics_view_changed(in, b, &ev, true);
	b->hb_seq = 1;
	spin_unlock_bh(&in->member_lock);
}

/* Bound and receiving (RTNL): the first heartbeat, and the timer. */
void ics_member_start(struct ics_bind *b)
{
	struct ics_net *in = b->in;
	struct ics_wire_hello h;

	spin_lock_bh(&in->member_lock);
	ics_hello_build(b, &h, 0, NULL);
	spin_unlock_bh(&in->member_lock);
	ics_hello_xmit(b, ICS_NODE_BROADCAST, 0, NULL, &h, GFP_KERNEL);
	mod_timer(&b->timer, jiffies + msecs_to_jiffies(READ_ONCE(in->hb_ms)));
}

/* Unbinding, still able to send (RTNL): tell the others we leave. */
void ics_member_leave(struct ics_bind *b)
{
	struct ics_wire_hello h;

	spin_lock_bh(&b->in->member_lock);
	ics_hello_build(b, &h, ICS_HF_LEAVING, NULL);
	spin_unlock_bh(&b->in->member_lock);
	ics_hello_xmit(b, ICS_NODE_BROADCAST, 0, NULL, &h, GFP_KERNEL);
}

/* Unbound (RTNL; @b unpublished, no reader left): the view is gone. */
void ics_member_unbind(struct ics_net *in, struct ics_bind *b)
{
	struct ics_event ev = {
		.type = ICS_EVENT_UNBOUND,
		.node = b->node_id,
		.incarnation = b->incarnation,
	};

	spin_lock_bh(&in->member_lock);
	ics_view_changed(in, NULL, &ev, true);
	spin_unlock_bh(&in->member_lock);
}

/* An MTU change (RTNL): say so now, not at the next beat. */
void ics_member_announce(struct ics_bind *b)
{
	struct ics_wire_hello h;

	spin_lock_bh(&b->in->member_lock);
	ics_hello_build(b, &h, 0, NULL);
	spin_unlock_bh(&b->in->member_lock);
	ics_hello_xmit(b, ICS_NODE_BROADCAST, 0, NULL, &h, GFP_KERNEL);
}

/*
 * ICS_CMD_SET_INSTANCE (values checked by netlink.c); NULL: unchanged.
 * RTNL held: the binding cannot be unbound (and its timer shut down) under us.
 */
void ics_member_set_tunables(struct ics_net *in, const u32 *hb_ms, const u32 *misses,
			     const u32 *votes, const u32 *expected)
{
	struct ics_bind *b;

	ASSERT_RTNL();
	rcu_read_lock();
	b = rtnl_dereference(in->bind);
	spin_lock_bh(&in->member_lock);
	if (hb_ms)
		WRITE_ONCE(in->hb_ms, *hb_ms);
	if (misses)
		WRITE_ONCE(in->hb_misses, *misses);
	if (votes)
		WRITE_ONCE(in->votes, *votes);
	if (expected) {
		/* An administrator's word lowers what was seen, too. */
		WRITE_ONCE(in->expected_cfg, *expected);
		in->peak_votes = 0;
	}
	if (votes || expected)
		ics_view_changed(in, b, NULL, false);
	spin_unlock_bh(&in->member_lock);
	/*
	 * A shorter interval applies now: the next heartbeat (which tells the
	 * peers the new interval) goes within it, not at the tick the old
	 * interval set, which may be an hour away.
	 */
	if (hb_ms && b)
		timer_reduce(&b->timer, jiffies + msecs_to_jiffies(*hb_ms));
	rcu_read_unlock();
}

/*
 * A frame from @addr claims node id @node, which is ours (@p NULL) or a
 * live peer's (@p) known at another MAC: never merged, the frame is
 * dropped (rx.c, peer.c); counted, and reported at most once a second per
 * node. Receive path, under rcu_read_lock().
 */
void ics_member_conflict(struct ics_bind *b, struct ics_peer *p, u8 node, const u8 *addr)
{
	struct ics_net *in = b->in;
	struct ics_event ev = { .type = ICS_EVENT_CONFLICT, .node = node };
	u64 now = ktime_get_ns(), *last = p ? &p->conflict_ns : &b->conflict_ns;

	ics_count(in, ICS_STAT_RX_NODE_CONFLICT);
	ether_addr_copy(ev.addr, addr);
	spin_lock_bh(&in->member_lock);
	if (p) {
		p->conflicts++;
		ether_addr_copy(p->conflict_addr, addr);
	}
	if (!*last || now - *last >= ICS_CONFLICT_EVENT_NS) {
		*last = now;
		ics_event_queue(in, &ev);
		net_warn_ratelimited("%s: node %u claimed by %pM%s; frames dropped\n",
				     b->dev->name, node, addr, p ? " as well" : ", our own id");
	}
	spin_unlock_bh(&in->member_lock);
}

/* ------------------------------------------------------- netlink view --- */

/*
 * Entry @idx of the view: 0 is this instance, 1..ICS_MAX_NODES the peers.
 * False if there is none (not bound, or no such peer).
 */
bool ics_member_info(struct ics_net *in, unsigned int idx, struct ics_member_info *mi)
{
	struct ics_bind *b;
	struct ics_peer *p = NULL;
	bool ok = false;

	memset(mi, 0, sizeof(*mi));
	rcu_read_lock();
	b = rcu_dereference(in->bind);
	if (b && idx)
		p = rcu_dereference(b->peers[idx]);
	if (!b || (idx && (!p || p->state == ICS_MEMBER_NONE)))
		goto out;
	spin_lock_bh(&in->member_lock);
	if (!p) {
		mi->self = true;
		mi->node = b->node_id;
		mi->state = ICS_MEMBER_UP;
		mi->votes = READ_ONCE(in->votes);
		mi->incarnation = b->incarnation;
		mi->hb_ms = READ_ONCE(in->hb_ms);
		mi->since_ns = b->bound_ns;
		ether_addr_copy(mi->addr, b->dev->dev_addr);
	} else {
		mi->node = p->node_id;
		mi->state = p->state;
		mi->reason = p->reason;
		mi->votes = p->votes;
		mi->incarnation = p->incarnation;
		mi->hb_ms = p->hb_ms;
		mi->hb_rtt_us = p->hb_rtt_us;
		mi->sees_us = p->sees_us;
		mi->since_ns = p->since_ns;
		mi->last_heard_ns = READ_ONCE(p->last_heard_ns);
		mi->hb_rx = p->hb_rx;
		mi->hb_missed = p->hb_missed;
		mi->conflicts = p->conflicts;
		ether_addr_copy(mi->addr, p->addr);
		ether_addr_copy(mi->conflict_addr, p->conflict_addr);
	}
	spin_unlock_bh(&in->member_lock);
	ok = true;
out:
	rcu_read_unlock();
	return ok;
}

/* ------------------------------------------------------- in-kernel API --- */

int ics_register_notifier(struct net *net, struct notifier_block *nb)
{
	return blocking_notifier_chain_register(&ics_net(net)->notifier, nb);
}
EXPORT_SYMBOL_GPL(ics_register_notifier);

int ics_unregister_notifier(struct net *net, struct notifier_block *nb)
{
	return blocking_notifier_chain_unregister(&ics_net(net)->notifier, nb);
}
EXPORT_SYMBOL_GPL(ics_unregister_notifier);

int ics_member_state(struct net *net, u8 node)
{
	struct ics_net *in = ics_net(net);
	struct ics_bind *b;
	struct ics_peer *p;
	int state;

	if (node < 1 || node > ICS_MAX_NODES)
		return -EINVAL;
	rcu_read_lock();
	b = rcu_dereference(in->bind);
	if (!b) {
		state = -ENOTCONN;
	} else if (node == b->node_id) {
		state = ICS_MEMBER_UP;
	} else {
		p = rcu_dereference(b->peers[node]);
		state = p ? READ_ONCE(p->state) : ICS_MEMBER_NONE;
	}
	rcu_read_unlock();
	return state;
}
EXPORT_SYMBOL_GPL(ics_member_state);

bool ics_has_quorum(struct net *net)
{
	return READ_ONCE(ics_net(net)->has_quorum);
}
EXPORT_SYMBOL_GPL(ics_has_quorum);
