// SPDX-License-Identifier: GPL-2.0
/*
 * Flow control from a channel's receiver back to its senders
 * (Documentation/design.rst, "Flow control").
 *
 * A link's window keeps the wire and the receiving CPU from being flooded,
 * but not a receiver that takes messages slower than they come: a /dev/ics
 * reader, say. Without more, its queue overflows and messages the link
 * delivered are dropped after all, while the receiving CPU spends itself
 * taking apart frames for nobody (a single-vCPU guest then starved even its
 * heartbeats). So a channel's handler that cannot keep up pauses the
 * channel, and every peer cuts no new frame of it until it is resumed;
 * its messages wait in the sender's channel queue, whose limit blocks or
 * refuses (EAGAIN) the writers. Frames in flight still arrive and are
 * taken, so the handler must have room for a window's worth past the point
 * where it pauses (dev.c pauses at half its queue). Other channels go on.
 *
 * The paused channels are one word per instance, in->pause, in three sets
 * of bits: those the handlers paused, those paused while waiting for a
 * handler (see below), and those that hold messages their handler refused
 * (ics_pause_held()); a channel with any bit is paused. Above them a
 * generation, + 1 at every change of the paused channels, and all of it
 * changed by cmpxchg so that a mask is never read with another change's
 * generation. Every ACK and every heartbeat carries the generation and
 * the paused channels (ics_pause_word()). A peer takes a word
 * whose generation is not older than the last one it took (ACKs and
 * heartbeats may pass each other), or any word a second or more after the
 * last it took (ics_flow_take()); a new incarnation starts afresh.
 *
 * Pausing is said by the next ACK to each sending peer: link_rx.c acks at
 * once when the word changed since its last ACK to that peer (a /dev/ics
 * reader pauses as data arrives). Resuming happens when the reader reads,
 * with nothing arriving: pause_work sends at once an ACK to every live
 * peer whose last ACK carried another word, even one without a session
 * to acknowledge, and the next heartbeat repeats the word for everyone (a
 * resume whose ACK is lost costs one heartbeat interval). A sender whose
 * link fails (the peer down, restarted, or stuck) takes the next word
 * whatever its generation, so a long silence cannot leave it behind.
 *
 * A paused channel's head message, if its first frames went already, is
 * finished (link_tx.c): a partial message holds reassembly memory shared
 * by every peer, which must not wait on one reader. And a paused
 * channel's queue does not count against the link's room for the other
 * channels (ics_room()).
 *
 * Only the channel's registered handler pauses or resumes its channel, or
 * ics on its behalf when it refuses a message (ics_pause_refused(); the
 * message is held, link_rx.c, and offered again from pause_work once the
 * handler resumes; the channel itself stays paused until every peer's
 * held messages are taken, ics_pause_held()), or ics between two
 * handlers. A handler that leaves (a
 * /dev/ics reader that exits, a client module unloaded) is replaced, in
 * one store, by a stand-in, ics_waiting, that refuses every message as a
 * handler that cannot keep up does, and its channel is paused once no
 * call of the handler can be in flight. So what was held for it and not
 * yet taken, and what is in flight, waits for the next handler (a
 * restarted reader) for handler_wait_ms instead of going to nobody. The
 * next handler replaces the stand-in and resumes the channel, and each
 * peer's held messages are offered to it before that peer's newer ones
 * (a peer with nothing held may deliver at once); if none comes in time,
 * gone_work removes the stand-in and resumes the channel, and the
 * messages go unclaimed, as on a channel that has no handler. All three
 * run under reg_lock; a registration where no stand-in was leaves the
 * pause word alone. The pause between two handlers has its own bit
 * (ICS_PAUSE_WAIT): the stand-in's refusals set it, the leaving handler's
 * own bit is cleared with the same change, and the next registration
 * clears only it. So a pause the next handler makes in its first rcv(),
 * before its registration has resumed the channel, stays (a refusal there
 * may be undone once by that resume, as below, and its message is offered
 * again). A refusal by
 * the stand-in that sees a resume since the offer read the resume count
 * undoes its pause (ics_pause_refused()), so a late one cannot leave the
 * next handler paused.
 */
#include <linux/export.h>

#include "ics.h"

#define ICS_PAUSE_RESYNC	HZ	/* only older words for this long: take them */

static void ics_pause_work(struct work_struct *w);
static void ics_gone_work(struct work_struct *w);

void ics_flow_init(struct ics_net *in)
{
	atomic64_set(&in->pause, 0);
	spin_lock_init(&in->held_lock);
	INIT_WORK(&in->pause_work, ics_pause_work);
	INIT_DELAYED_WORK(&in->gone_work, ics_gone_work);
}

/* Nothing can pause or resume any more (every handler is gone). */
void ics_flow_exit(struct ics_net *in)
{
	cancel_delayed_work_sync(&in->gone_work);	/* it may resume: first */
	cancel_work_sync(&in->pause_work);
}

/*
 * Set the bits @set and clear the bits @clear of the pause word (any of
 * the three sets); true if it changed. The generation grows by one
 * (modulo 2^16 on the wire) when the paused channels change.
 */
static bool ics_pause_change(struct ics_net *in, u64 set, u64 clear)
{
	s64 old = atomic64_read(&in->pause);
	u64 new;

	do {
		new = ((u64)old & ~clear) | set;
		if (new == (u64)old)
			return false;
		if (ics_pause_mask(new) != ics_pause_mask(old))
			new += ICS_PAUSE_GEN_ONE;
	} while (!atomic64_try_cmpxchg(&in->pause, &old, (s64)new));
	return true;
}

/* Set @ch's bit in the set @shift (0, ICS_PAUSE_WAIT or ICS_PAUSE_HELD) to @pause. */
static bool ics_pause_set(struct ics_net *in, unsigned int ch, unsigned int shift, bool pause)
{
	u64 bit = BIT_ULL(ch + shift);

	return ics_pause_change(in, pause ? bit : 0, pause ? 0 : bit);
}

/*
 * Resume @ch's set @shift: the resume counts before it clears the bit
 * (see ics_pause_refused()); what was held is offered again.
 */
static void ics_resume(struct ics_net *in, unsigned int ch, unsigned int shift)
{
	atomic_inc(&in->resumes[ch]);
	smp_mb__after_atomic();	/* the count before the bit */
	if (ics_pause_set(in, ch, shift, false))
		queue_work(system_highpri_wq, &in->pause_work);
}

/*
 * The handler of @ch refused a message (@waiting: the stand-in did, for
 * the next one): pause the channel on its behalf, unless it was paused
 * already; and if a resume came since @resumes was read, before the
 * refusal (the handler has room again, or the next handler came, and the
 * held message is offered once more, ics_hold()), resume it again. A
 * resume counts before it clears the bit, and we set the bit before we
 * look at the count: either we see the resume and undo our pause, or the
 * resume comes after our pause and clears it.
 */
void ics_pause_refused(struct ics_net *in, unsigned int ch, int resumes, bool waiting)
{
	unsigned int shift = waiting ? ICS_PAUSE_WAIT : 0;

	if (!ics_pause_set(in, ch, shift, true))
		return;
	if (!waiting)	/* a reader fell behind; the stand-in's is no such pause */
		ics_count(in, ICS_STAT_RX_PAUSES);
	smp_mb__after_atomic();		/* the bit before the count, see above */
	if (atomic_read(&in->resumes[ch]) != resumes)
		ics_resume(in, ch, shift);
}

/*
 * A peer's messages held for @ch's handler began (@held) or all went
 * (link_rx.c). While any peer's are held the channel is paused for every
 * peer, in the set ICS_PAUSE_HELD: its handler is behind, and what it has
 * not taken must not grow by a window at each of its resumes. The last
 * peer's held taken resumes it. held_lock orders the count with the bit.
 */
void ics_pause_held(struct ics_net *in, unsigned int ch, bool held)
{
	bool resumed = false;

	BUILD_BUG_ON(ICS_MAX_NODES > U8_MAX);	/* held_peers[] */
	spin_lock_bh(&in->held_lock);
	if (held) {
		if (!in->held_peers[ch]++)
			ics_pause_set(in, ch, ICS_PAUSE_HELD, true);
	} else if (!WARN_ON_ONCE(!in->held_peers[ch]) && !--in->held_peers[ch]) {
		resumed = ics_pause_set(in, ch, ICS_PAUSE_HELD, false);
	}
	spin_unlock_bh(&in->held_lock);
	if (resumed)	/* to tell the peers */
		queue_work(system_highpri_wq, &in->pause_work);
}

/* The handler of @ch pauses or resumes it. */
void __ics_channel_pause(struct ics_net *in, unsigned int ch, bool pause)
{
	if (!pause)
		ics_resume(in, ch, 0);
	else if (ics_pause_set(in, ch, 0, true))
		ics_count(in, ICS_STAT_RX_PAUSES);
}

/* Stands in for a handler that left, until the next (see above). */
static int ics_waiting_rcv(struct ics_handler *h, struct net *net, u8 src, unsigned int ch,
			   struct sk_buff *skb)
{
	WARN_ON_ONCE(1);	/* ics_offer() refuses for it without a call */
	return -EAGAIN;
}

struct ics_handler ics_waiting = { .rcv = ics_waiting_rcv };

/*
 * @ch's handler, registered, leaves (reg_lock held). Returns once no call
 * of it is in flight. With handler_wait_ms, the stand-in takes its place
 * and the channel is paused until the next handler comes or the time is
 * over (see above); without, the channel resumes at once and what was
 * held is offered again, to nobody: unclaimed. Not counted as a pause:
 * no reader fell behind.
 */
void ics_handler_left(struct ics_net *in, unsigned int ch)
{
	unsigned long wait = msecs_to_jiffies(ics_handler_wait_ms);

	lockdep_assert_held(&in->reg_lock);
	if (!wait) {
		RCU_INIT_POINTER(in->handlers[ch], NULL);
		synchronize_net();
		ics_resume(in, ch, 0);
		queue_work(system_highpri_wq, &in->pause_work);
		return;
	}
	/* one store: an offer sees the handler, or the stand-in, which refuses */
	rcu_assign_pointer(in->handlers[ch], &ics_waiting);
	synchronize_net();
	/* its pause, if any, is the stand-in's now: the channel stays paused */
	ics_pause_change(in, BIT_ULL(ch + ICS_PAUSE_WAIT), BIT_ULL(ch));
	in->gone_until[ch] = (jiffies + wait) ?: 1;
	queue_delayed_work(system_wq, &in->gone_work, wait);
}

/*
 * A handler replaced the stand-in on @ch (reg_lock held): resume the
 * channel, and offer it what was held. An offer that read the stand-in
 * and pauses after this resume must see the resume count grown
 * (ics_pause_refused()); one that reads the count after it must see the
 * handler: hence the handler, then a full barrier, then the resume (whose
 * count comes before the bit), paired with ics_offer()'s count, smp_rmb(),
 * handler.
 */
void ics_handler_came(struct ics_net *in, unsigned int ch)
{
	lockdep_assert_held(&in->reg_lock);
	in->gone_until[ch] = 0;
	smp_mb();	/* the handler before the resume: pairs with ics_offer() */
	ics_resume(in, ch, ICS_PAUSE_WAIT);
	queue_work(system_highpri_wq, &in->pause_work);
}

/*
 * Remove the stand-ins whose next handler did not come in time, and
 * resume their channels (ordered as in ics_handler_came()); requeued,
 * under reg_lock so that a handler leaving meanwhile cannot push it back,
 * for the next one.
 */
static void ics_gone_work(struct work_struct *w)
{
	struct ics_net *in = container_of(to_delayed_work(w), struct ics_net, gone_work);
	unsigned long now, next = 0;
	unsigned int ch;

	mutex_lock(&in->reg_lock);
	now = jiffies;	/* not before: ics_handler_left() sleeps under reg_lock */
	for (ch = 0; ch < ICS_CHANNELS; ch++) {
		unsigned long until = in->gone_until[ch];

		if (rcu_access_pointer(in->handlers[ch]) != &ics_waiting)
			continue;
		if (until && time_before(now, until)) {
			if (!next || time_before(until, now + next))
				next = until - now;
			continue;
		}
		in->gone_until[ch] = 0;
		RCU_INIT_POINTER(in->handlers[ch], NULL);
		smp_mb();	/* no handler before the resume: pairs with ics_offer() */
		ics_resume(in, ch, ICS_PAUSE_WAIT);
		queue_work(system_highpri_wq, &in->pause_work);
	}
	if (next)
		mod_delayed_work(system_wq, &in->gone_work, next);
	mutex_unlock(&in->reg_lock);
}

/**
 * ics_channel_pause - hold or release the peers' traffic on a channel
 * @net: network namespace of the instance
 * @channel: enum ics_channel
 * @h: the handler registered on it: a call by any other is ignored
 * @pause: true to hold, false to release
 *
 * See include/net/ics.h. Idempotent; any context. A call that sees @h
 * registered completes inside an RCU section, which the unregistering
 * synchronize_net() waits for: after ics_unregister_handler() returns, no
 * call of @h's changes the channel. One that resumed it just before lets
 * held messages be offered again, to the stand-in, which refuses them.
 */
void ics_channel_pause(struct net *net, unsigned int channel, struct ics_handler *h,
		       bool pause)
{
	struct ics_net *in = ics_net(net);

	if (channel >= ICS_CHANNELS || !h)
		return;
	rcu_read_lock();
	if (rcu_access_pointer(in->handlers[channel]) == h)
		__ics_channel_pause(in, channel, pause);
	rcu_read_unlock();
}
EXPORT_SYMBOL_GPL(ics_channel_pause);

/*
 * Offer the messages held for handlers whose channel is not paused (any
 * more) again (link_rx.c), and tell every live peer whose held messages
 * were taken, or whose last ACK carried another word (a resume), with an
 * ACK even if it has no session of ours to acknowledge; an ACK saying
 * held messages were taken is repeated on the next two heartbeats
 * (ics_timer() queues us) at which the peer is alive and the ACK goes
 * out, as it may be lost with nothing else to say it again. A peer we
 * hold down gets no ACK, yet it may still hold us alive and wait for that
 * word: its repeats wait until it is back. ics_unbind() waits for this
 * RCU section.
 */
static void ics_pause_work(struct work_struct *w)
{
	struct ics_net *in = container_of(w, struct ics_net, pause_work);
	bool echo, repeat, again = false, tick = xchg(&in->pause_tick, false);
	struct ics_bind *b;
	struct ics_peer *p;
	int node;

	rcu_read_lock();
	b = rcu_dereference(in->bind);
	for (node = 1; b && node <= ICS_MAX_NODES; node++) {
		p = rcu_dereference(b->peers[node]);
		if (!p)
			continue;
		echo = ics_link_held_offer(p, &again);
		repeat = !echo && tick && READ_ONCE(p->link.held_echo);
		if (!ics_live(READ_ONCE(p->state)) ||
		    !(echo || repeat || READ_ONCE(p->link.pause_sent) != ics_pause_word(in)))
			continue;
		if (!ics_link_ack_send(p) || !repeat)
			continue;
		/* a repeat went; after the last, the channels taken are told */
		spin_lock_bh(&p->lock);
		if (p->link.held_echo) {
			WRITE_ONCE(p->link.held_echo, p->link.held_echo - 1);
			if (!p->link.held_echo)
				p->link.told = 0;
		}
		spin_unlock_bh(&p->lock);
	}
	rcu_read_unlock();
	if (again)	/* a budget ran out: the rest in another run */
		queue_work(system_highpri_wq, w);
}

/*
 * A pause word from @p (an ACK or a heartbeat; @fresh: its first of a new
 * incarnation), under its link's tx_lock. True if a channel with messages
 * waiting was resumed: the caller pushes.
 *
 * A word older than the one we hold is a late one, and dropped; but one
 * that comes ICS_PAUSE_RESYNC or more after the last word we took means
 * that the peer's words have been older than ours for that long: the word
 * we hold was not the peer's (a stray or corrupted frame that passed the
 * checks, with a generation ahead of the peer's), and the peer's current
 * word is taken again. Otherwise such a word could hold a channel until
 * the peer's generation caught up, which may be never.
 */
bool ics_flow_take(struct ics_peer *p, u16 paused, u16 gen, bool fresh)
{
	struct ics_link *l = &p->link;
	unsigned long now = jiffies;
	u16 resumed, newly;
	int ch;

	lockdep_assert_held(&l->tx_lock);
	if (!fresh && l->peer_pause_known && (s16)(gen - l->peer_pause_gen) < 0 &&
	    time_before(now, l->pause_taken + ICS_PAUSE_RESYNC))
		return false;	/* older than what we have */
	l->pause_taken = now;
	newly = paused & ~l->peer_paused;
	resumed = l->peer_paused & ~paused;
	l->peer_paused = paused;
	l->peer_pause_gen = gen;
	l->peer_pause_known = true;
	if (newly)
		ics_stat_add(p->b->in->stats->ctr[ICS_STAT_TX_PAUSES], hweight16(newly));
	/*
	 * Either way the room moves (ics_room()): a channel paused stops
	 * counting against the flowing ones', one resumed leaves the paused
	 * ones' room, and its own writers join the flowing ones.
	 */
	if (newly | resumed)
		wake_up(&p->b->in->tx_wq[p->node_id]);
	for (ch = 0; resumed && ch < ICS_CHANNELS; ch++)
		if ((resumed & BIT(ch)) && !list_empty(&l->q[ch].pending))
			return true;
	return false;
}
