// SPDX-License-Identifier: GPL-2.0
/*
 * The receive side of a link. Data frames are taken strictly in seq order:
 * the one at rcv_nxt goes to reassembly (and, once whole, to delivery), one
 * ahead of a gap waits in the out-of-order queue (at most ICS_RX_WINDOW
 * frames past rcv_nxt), one already taken is a duplicate. Out-of-order and
 * duplicate arrivals are acknowledged at once, with the SACK map, so that
 * the sender repairs the gap without waiting for its timer (a run of
 * frames that bring nothing, duplicates or past the window, only now and
 * then: ics_oow_ack()); in-order data is
 * acknowledged every ICS_ACK_EVERY frames, by any frame going back, or by
 * the delayed-ack timer; and at once when our paused channels changed since
 * the last ACK (flow.c), which every ACK reports.
 *
 * A frame of a newer session than ours (the sender started over) resets the
 * receive side if it is one of the session's first ICS_RX_WINDOW frames, else
 * we missed the session's start and say so with a RESET. Frames of older
 * sessions are stale duplicates; unless frames of one older session kept
 * coming (three at least, over ICS_SESS_RESYNC) while ours took nothing for
 * as long: then the session we joined was not the sender's (a stray or
 * corrupted frame that passed the checks, with a session number ahead of
 * the sender's), and would hold the link until the sender's numbers caught
 * up, which may be never. An older session is then joined at its first
 * frame (others get a RESET, so that the sender starts over from 1), and
 * the message ids delivered in ours are forgotten (they were not the
 * sender's either). A single late frame of an old session stays stale.
 *
 * A message a handler refuses (it cannot take more now), or the stand-in
 * for a handler that left refuses (flow.c), is held here, with every later
 * one of that peer's on the channel, until its handler resumes (flow.c
 * offers them again; the channel stays paused on the wire until they are
 * all taken, ics_pause_held()); until then our ACKs tell the
 * sender, by channel, the last message taken, and its messages held are
 * not done for it. A channel holds at most what an honest sender may still
 * send once it is paused (a receive window of frames and the rest of the
 * message it had begun): past that, the channel's next message is not
 * taken, and the sender resends it later.
 *
 * Everything runs under peer->lock, which also keeps deliveries in order.
 */
#include "ics.h"

#define ICS_ACK_EVERY	4
#define ICS_SESS_RESYNC	HZ	/* our session idle this long: older ones may come back */
#define ICS_OOW_ACK_GAP	(HZ / 10)	/* ics_oow_ack(), at most */

/*
 * A frame that brings nothing new (a duplicate, or past the window) is
 * answered at once: the sender may have lost our last ACK, and resends
 * until it has one. But without a key anyone can send such frames, and an
 * ACK may be larger than the frame: so of a run of them, with nothing
 * taken in between, only the 1st, 2nd, 4th, 8th... draw an ACK, and any
 * at least ICS_OOW_ACK_GAP after the last that did (as TCP rate-limits
 * its answers to out-of-window segments); or half the longest RTO, if
 * that is shorter (a short link_timeout_ms, which members share): a
 * sender whose timer has backed off to it then has an answer every
 * round. Under @l's peer's lock.
 */
static bool ics_oow_ack(struct ics_link *l)
{
	unsigned long gap = msecs_to_jiffies(ics_rto_max() / 2);
	u32 n = ++l->oow_run;

	gap = min_t(unsigned long, gap, ICS_OOW_ACK_GAP);
	if (!is_power_of_2(n) && time_before(jiffies, l->oow_acked + gap))
		return false;
	l->oow_acked = jiffies;
	return true;
}

/*
 * Forget the peer's session: partial messages and held frames go. The ids of
 * the last messages delivered stay, so whole messages the sender resends in
 * its next session are recognised; unless the peer @restart-ed, when its
 * message ids start over.
 */
void __ics_link_rx_reset(struct ics_peer *p, bool restart)
{
	struct ics_link *l = &p->link;

	lockdep_assert_held(&p->lock);
	l->rx_sess = 0;
	l->rcv_nxt = 0;
	l->rx_unacked = 0;
	l->oow_run = 0;
	if (restart) {
		/* a new incarnation's msg_ids start over: the old ones' held go */
		ics_link_held_purge(p);
		l->rx_last_valid = 0;
		l->rx_refuse = 0;
	}
	__skb_queue_purge(&l->ooo);
	__ics_reasm_flush(p->b, p, ICS_REASM_ALL);
}

/* The most a channel holds for its handler from one peer: see above. */
static u64 ics_held_max(const struct ics_peer *p)
{
	return (u64)ICS_RX_WINDOW * ics_link_mtu(p) + ics_msg_cost(ICS_MSG_MAX);
}

/* Messages offered again per peer and run of pause_work: BHs are off meanwhile. */
#define ICS_OFFER_BUDGET	64

/*
 * @skb waits for @channel's handler, after what is held already: @n
 * messages, charged @charge bytes. Under @p's lock.
 */
static void __ics_hold(struct ics_peer *p, u8 channel, struct sk_buff *skb, u32 charge, u32 n)
{
	struct ics_link *l = &p->link;
	struct ics_net *in = p->b->in;

	__skb_queue_tail(&l->held[channel], skb);
	l->held_bytes[channel] += charge;
	if (!(l->rx_held & BIT(channel))) {
		WRITE_ONCE(l->rx_held, l->rx_held | BIT(channel));
		l->held_pausing |= BIT(channel);
		ics_pause_held(in, channel, true);
	}
	ics_stat_add(in->stats->ctr[ICS_STAT_RX_HELD], n);
	/*
	 * A refusal leaves the channel paused (ics_offer()); if it is not, it
	 * was resumed since, and what is held is offered again now (and once
	 * a heartbeat, ics_timer(), while anything is held). Either we see
	 * the resume, or its pause_work sees our rx_held: the store before
	 * the load, as the resume's bit goes before its queue_work().
	 */
	smp_mb();
	if (!(ics_pause_handlers(in) & BIT(channel)))
		queue_work(system_highpri_wq, &in->pause_work);
}

/*
 * @skb, message @msg_id of @channel, waits for the channel's handler: after
 * those held already, or refused by it. Under @p's lock.
 */
void ics_hold(struct ics_peer *p, u8 channel, u32 msg_id, struct sk_buff *skb)
{
	struct ics_frag *f = &ICS_RXCB(skb)->f;

	lockdep_assert_held(&p->lock);
	f->msg_id = msg_id;
	f->bundle = false;
	__ics_hold(p, channel, skb, ics_msg_cost(skb->len), 1);
}

/*
 * The rest of the bundle @skb, from its record at @off (message @msg_id)
 * on, waits behind the messages held on its channel: as one skb, charged
 * its bytes left and one message's overhead, or its truesize if more, and
 * not as an skb per message (an empty one takes some 768 bytes: a window
 * of bundles would take sixteen times its size). Its messages count as
 * received now, as ics_deliver() counts them. In its cb: f.bundle set;
 * f.off, the next record; f.msg_id, its message; f.frame_len, the
 * records left; f.msg_len, the charge. Under @p's lock; consumes @skb.
 * Returns the records from @off on.
 */
static u32 ics_hold_rest(struct ics_peer *p, struct sk_buff *skb, u8 channel, u32 off,
			 u32 msg_id)
{
	struct ics_frag *f = &ICS_RXCB(skb)->f;
	struct ics_wire_brec r;
	u32 o, n = 0, all = 0;

	/* resent messages are the first ones, if any: their ids only grow */
	for (o = off; o < skb->len; o += sizeof(r) + ntohs(r.len), msg_id++, all++) {
		skb_copy_bits(skb, o, &r, sizeof(r));	/* rx.c checked */
		if (!ics_deliver_note(p, channel, msg_id, ntohs(r.len)))
			continue;
		if (!n++) {
			off = o;
			f->msg_id = msg_id;
		}
	}
	if (!n) {
		consume_skb(skb);
		return all;
	}
	/* a frame in a buffer far larger than itself is copied, as reasm.c does */
	if (skb->truesize > 3 * SKB_TRUESIZE(skb->len - off)) {
		struct sk_buff *c = alloc_skb(skb->len - off, GFP_ATOMIC);

		if (c) {
			skb_copy_bits(skb, off, skb_put(c, skb->len - off), skb->len - off);
			memcpy(c->cb, skb->cb, sizeof(c->cb));
			consume_skb(skb);
			skb = c;
			f = &ICS_RXCB(skb)->f;
			off = 0;
		}
	}
	f->bundle = true;
	f->off = off;
	f->frame_len = n;
	f->msg_len = max_t(u64, ics_msg_cost(skb->len - off), skb->truesize);
	__ics_hold(p, channel, skb, f->msg_len, n);
	return all;
}

/*
 * Offer the next message of the rest of a bundle @skb held on @ch: false
 * if it was refused, or memory ran out (offered again later). True if it
 * was taken: then, if it was the last, @skb is unlinked and freed.
 */
static bool ics_rest_offer(struct ics_peer *p, u8 ch, struct sk_buff *skb)
{
	struct ics_frag *f = &ICS_RXCB(skb)->f;
	struct ics_wire_brec r;
	struct sk_buff *m;
	u32 len;

	skb_copy_bits(skb, f->off, &r, sizeof(r));
	len = ntohs(r.len);
	m = alloc_skb(len, GFP_ATOMIC);
	if (!m)
		return false;
	skb_copy_bits(skb, f->off + sizeof(r), skb_put(m, len), len);
	if (ics_offer(p, ch, m)) {
		consume_skb(m);
		return false;
	}
	f->off += sizeof(r) + len;
	f->msg_id++;
	if (!--f->frame_len) {
		__skb_unlink(skb, &p->link.held[ch]);
		p->link.held_bytes[ch] -= f->msg_len;
		consume_skb(skb);
	}
	return true;
}

/*
 * Offer the held messages to their handlers again, in order, on every
 * channel whose handler is not paused now, until one is refused, at most ICS_OFFER_BUDGET
 * of them (*@again set if some were left for another run); true if any
 * was taken. Process context, under rcu_read_lock() (flow.c).
 */
bool ics_link_held_offer(struct ics_peer *p, bool *again)
{
	unsigned long chans = READ_ONCE(p->link.rx_held);
	struct ics_link *l = &p->link;
	struct ics_net *in = p->b->in;
	unsigned int budget = ICS_OFFER_BUDGET;
	struct sk_buff *skb;
	bool taken = false;
	u32 id, len;
	int ch;

	chans &= ~(unsigned long)ics_pause_handlers(in);
	if (!chans)
		return false;
	spin_lock_bh(&p->lock);
	chans &= l->rx_held;	/* a purge may have come before the lock */
	for_each_set_bit(ch, &chans, ICS_CHANNELS) {
		while ((skb = skb_peek(&l->held[ch]))) {
			if (!budget) {
				*again = true;
				break;
			}
			budget--;
			if (ICS_RXCB(skb)->f.bundle) {
				if (!ics_rest_offer(p, ch, skb))
					break;
				taken = true;
				continue;
			}
			/* the handler owns cb while it looks: what we keep there goes first */
			id = ICS_RXCB(skb)->f.msg_id;
			len = skb->len;
			__skb_unlink(skb, &l->held[ch]);
			if (ics_offer(p, ch, skb)) {
				/* it must leave a message it refuses as it was */
				WARN_ON_ONCE(skb->len != len);
				ICS_RXCB(skb)->f.msg_id = id;
				ICS_RXCB(skb)->f.bundle = false;
				__skb_queue_head(&l->held[ch], skb);
				break;
			}
			l->held_bytes[ch] -= ics_msg_cost(len);
			taken = true;
		}
		if (skb_queue_empty(&l->held[ch])) {
			WRITE_ONCE(l->rx_held, l->rx_held & ~BIT(ch));
			l->told |= BIT(ch);	/* until the repeats went */
			if (l->held_pausing & BIT(ch)) {
				l->held_pausing &= ~BIT(ch);
				ics_pause_held(in, ch, false);
			}
		}
	}
	if (taken)
		WRITE_ONCE(l->held_echo, 2);	/* repeated by the next heartbeats */
	spin_unlock_bh(&p->lock);
	return taken;
}

/*
 * Drop every held message: its sender restarted or left (its message ids
 * start over), or we unbind; under @p's lock, or at its end.
 */
void ics_link_held_purge(struct ics_peer *p)
{
	struct ics_link *l = &p->link;
	struct sk_buff *skb;
	u32 n = 0;
	int ch;

	for (ch = 0; ch < ICS_CHANNELS; ch++) {
		skb_queue_walk(&l->held[ch], skb)
			n += ICS_RXCB(skb)->f.bundle ? ICS_RXCB(skb)->f.frame_len : 1;
		__skb_queue_purge(&l->held[ch]);
		l->held_bytes[ch] = 0;
		if (l->held_pausing & BIT(ch))
			ics_pause_held(p->b->in, ch, false);
	}
	l->held_pausing = 0;
	WRITE_ONCE(l->rx_held, 0);
	l->told = 0;
	WRITE_ONCE(l->held_echo, 0);	/* nothing left to repeat */
	if (n)
		ics_stat_add(p->b->in->stats->ctr[ICS_STAT_RX_HELD_DROPS], n);
}

/*
 * Deliver the messages of the bundle @skb (rx.c checked that its records
 * tile it), each copied into an skb of its own: they are small, and a
 * reader may keep one long after the others; once its channel holds
 * messages (its handler refused one), the rest waits as one skb
 * (ics_hold_rest()). False, @skb consumed, if memory runs out on the way
 * (counted as reasm_nomem): the frame is not taken, the sender resends
 * it, and the messages delivered already are then recognised by msg_id.
 */
static bool ics_bundle_rcv(struct ics_peer *p, struct sk_buff *skb, const struct ics_frag *f)
{
	struct ics_net *in = p->b->in;
	struct ics_wire_brec r;
	struct sk_buff *m;
	u32 off, k = 0, len;

	for (off = 0; off < skb->len; off += len, k++) {
		if (!skb_queue_empty(&p->link.held[f->channel])) {
			k += ics_hold_rest(p, skb, f->channel, off, f->msg_id + k);
			skb = NULL;
			break;
		}
		skb_copy_bits(skb, off, &r, sizeof(r));	/* rx.c checked */
		len = ntohs(r.len);
		off += sizeof(r);
		m = alloc_skb(len, GFP_ATOMIC);
		if (!m)
			goto fail;
		skb_copy_bits(skb, off, skb_put(m, len), len);
		ics_deliver(p, f->channel, f->msg_id + k, m);
	}
	ics_count_rx_frame(in, f->frame_len);
	ics_count(in, ICS_STAT_RX_BUNDLES);
	ics_stat_add(in->stats->ctr[ICS_STAT_RX_BUNDLED], k);
	consume_skb(skb);
	return true;
fail:
	ics_count(in, ICS_STAT_REASM_NOMEM);
	kfree_skb(skb);
	return false;
}

/*
 * Take the in-order frame @skb: 0, or -ENOMEM if reassembly has no room
 * for it or its channel holds too much for its handler (refused for now),
 * or -EOVERFLOW if the session must go (reasm.c).
 */
static int ics_link_take(struct ics_peer *p, struct sk_buff *skb)
{
	struct ics_frag f = ICS_RXCB(skb)->f;	/* reassembly reuses the cb */
	struct ics_net *in = p->b->in;
	int err;

	/* a message begun is finished: only a new one waits */
	if (!f.off && p->link.held_bytes[f.channel] > ics_held_max(p)) {
		ics_count(in, ICS_STAT_RX_HELD_FULL);
		/*
		 * No sender that heeds pauses gets here: its held messages
		 * no longer keep the channel paused for the other peers.
		 */
		if (p->link.held_pausing & BIT(f.channel)) {
			p->link.held_pausing &= ~BIT(f.channel);
			ics_pause_held(in, f.channel, false);
		}
		kfree_skb(skb);
		return -ENOMEM;
	}

	if (f.bundle) {
		if (!ics_bundle_rcv(p, skb, &f))
			return -ENOMEM;
	} else if (f.off == 0 && skb->len == f.msg_len) {
		ics_count_rx_frame(in, f.frame_len);
		ics_deliver(p, f.channel, f.msg_id, skb);
	} else {
		err = ics_reasm_rcv(p->b, p, skb, &f);
		if (err)
			return err;
	}
	p->link.rx_frames++;
	return 0;
}

/* Insert @skb into the out-of-order queue; false if it is there already. */
static bool ics_ooo_insert(struct sk_buff_head *q, struct sk_buff *skb)
{
	u32 seq = ICS_RXCB(skb)->seq;
	struct sk_buff *prev;

	skb_queue_reverse_walk(q, prev) {
		if (ICS_RXCB(prev)->seq == seq)
			return false;
		if (ics_before(ICS_RXCB(prev)->seq, seq))
			break;
	}
	__skb_queue_after(q, prev, skb);
	return true;
}

/*
 * A frame of @sess, older than the session we hold (peer->lock): true if
 * ours was not the sender's after all (see the head of this file), and
 * stays so until a session is joined or ours takes a frame.
 */
static bool ics_rx_resync(struct ics_link *l, u32 sess)
{
	unsigned long now = jiffies;

	if (l->rx_resync)
		return true;
	if (sess != l->rx_stale_sess) {
		l->rx_stale_sess = sess;
		l->rx_stale_since = now;
		l->rx_stale_n = 0;
	}
	if (l->rx_stale_n < 3)
		l->rx_stale_n++;
	l->rx_resync = l->rx_stale_n >= 3 &&
		       !time_before(now, l->rx_stale_since + ICS_SESS_RESYNC) &&
		       !time_before(now, l->rx_progress + ICS_SESS_RESYNC);
	return l->rx_resync;
}

void ics_link_data_rcv(struct ics_peer *p, struct sk_buff *skb, u32 inc, u32 sess, u32 seq)
{
	struct ics_link *l = &p->link;
	struct ics_net *in = p->b->in;
	bool ack_now = false, reset = false;
	struct sk_buff *next;
	int err;

	bool ackreq = ICS_RXCB(skb)->ackreq;

	ICS_RXCB(skb)->seq = seq;
	spin_lock(&p->lock);
	/* As rx.c checked, now that it cannot change (member.c). */
	if (p->dead || !ics_live(p->state)) {
		ics_count(in, ICS_STAT_RX_PEER_DOWN);
		goto drop;
	}
	if (inc != p->incarnation) {
		ics_count(in, ICS_STAT_RX_BAD_SESSION);
		goto drop;
	}
	p->data_ns = ktime_get_ns();	/* whatever becomes of it: ics_reasm_stale() */
	if (sess != l->rx_sess) {
		if (sess == l->rx_refuse) {
			reset = true;
			ics_count(in, ICS_STAT_RX_BAD_SESSION);
			goto drop;
		}
		if (l->rx_sess && ics_before(sess, l->rx_sess)) {
			if (!ics_rx_resync(l, sess)) {
				l->duplicates++;	/* from a session the sender left */
				ics_count(in, ICS_STAT_RX_DUP_FRAMES);
				goto drop;
			}
			if (seq != 1) {
				reset = true;	/* start over, from 1 */
				ics_count(in, ICS_STAT_RX_BAD_SESSION);
				goto drop;
			}
			/* ours was not the sender's: neither were its messages */
			memcpy(l->rx_last_msg, l->rx_join_msg, sizeof(l->rx_last_msg));
			l->rx_last_valid = l->rx_join_valid;
		}
		if (seq < 1 || seq > ICS_RX_WINDOW) {
			reset = true;
			ics_count(in, ICS_STAT_RX_BAD_SESSION);
			goto drop;
		}
		__ics_link_rx_reset(p, false);
		l->rx_sess = sess;
		l->rcv_nxt = 1;
		l->rx_progress = jiffies;
		l->rx_stale_sess = 0;
		l->rx_resync = false;
		memcpy(l->rx_join_msg, l->rx_last_msg, sizeof(l->rx_join_msg));
		l->rx_join_valid = l->rx_last_valid;
	}
	if (ics_before(seq, l->rcv_nxt)) {
		l->duplicates++;
		ics_count(in, ICS_STAT_RX_DUP_FRAMES);
		ack_now = ics_oow_ack(l);
		goto drop;
	}
	if (seq - l->rcv_nxt >= ICS_RX_WINDOW) {
		ics_count(in, ICS_STAT_RX_OVER_WINDOW);
		ack_now = ics_oow_ack(l);
		goto drop;
	}
	if (seq != l->rcv_nxt) {
		if (!ics_ooo_insert(&l->ooo, skb)) {
			l->duplicates++;
			ics_count(in, ICS_STAT_RX_DUP_FRAMES);
			ack_now = ics_oow_ack(l);
			goto drop;
		}
		l->oow_run = 0;
		l->out_of_order++;
		ics_count(in, ICS_STAT_RX_OOO_FRAMES);
		spin_unlock(&p->lock);
		ics_link_ack_send(p);
		return;
	}

	err = ics_link_take(p, skb);
	if (err == -EOVERFLOW)
		goto overrun;
	if (err) {
		l->rx_busy = true;	/* no memory for it now: say so */
		ack_now = true;
		goto unlock;
	}
	l->rcv_nxt++;
	l->rx_unacked++;
	l->oow_run = 0;
	l->rx_progress = jiffies;
	l->rx_stale_sess = 0;
	l->rx_resync = false;
	while ((next = skb_peek(&l->ooo)) && ICS_RXCB(next)->seq == l->rcv_nxt) {
		__skb_unlink(next, &l->ooo);
		err = ics_link_take(p, next);
		if (err == -EOVERFLOW)
			goto overrun;
		if (err) {
			l->rx_busy = true;	/* dropped: the sender resends it */
			break;
		}
		l->rcv_nxt++;
		l->rx_unacked++;
	}
	/* and at once if a channel paused or resumed since the last ACK (flow.c) */
	ack_now = l->rx_unacked >= ICS_ACK_EVERY || !skb_queue_empty(&l->ooo) ||
		  ackreq || l->pause_sent != ics_pause_word(in);
unlock:
	spin_unlock(&p->lock);
	if (ack_now)
		ics_link_ack_send(p);
	else if (!timer_pending(&l->ack_timer))
		mod_timer(&l->ack_timer, jiffies + 1);
	return;

overrun:
	/*
	 * A large message ran past reassembly's bound, and its fragments
	 * were acknowledged: drop the session (that message, and what else
	 * it had partial), and tell the sender now. It resends its
	 * incomplete messages in a new session.
	 */
	__ics_link_rx_reset(p, false);
	l->rx_refuse = sess;
	spin_unlock(&p->lock);
	ics_reset_send(p->b, p->node_id, p->addr, inc, sess);
	return;

drop:
	spin_unlock(&p->lock);
	kfree_skb(skb);
	if (reset)
		ics_reset_send(p->b, p->node_id, p->addr, inc, sess);
	if (ack_now)
		ics_link_ack_send(p);
}

/*
 * An ACK frame with our cumulative ack, the SACK map of held frames and our
 * pause word; without a session of the peer's to acknowledge, only when
 * that word changed since the last one it was sent, or to say what its
 * handlers took (ack_sess 0). False if the ACK it had to send was lost
 * here (no memory, the NIC refused it).
 */
bool ics_link_ack_send(struct ics_peer *p)
{
	struct ics_hdr_args a = {
		.type = ICS_FT_ACK,
		.channel = ICS_CH_CNX,
		.dst = p->node_id,
		.dst_inc = READ_ONCE(p->incarnation),
		.msg_len = ICS_ACK_LEN,
	};
	struct ics_link *l = &p->link;
	struct ics_wire_hdr *hdr;
	struct ics_wire_ack *w;
	struct sk_buff *skb, *s;
	u32 bits = 0, d, pause, len;
	unsigned long held, told, all;
	__be32 *taken;
	bool busy;
	u32 id;
	int ch;

	/* room for every channel's taken[]; the frame is cut to those held */
	skb = ics_frame_alloc(p->b, &a, ICS_ACK_LEN + 4 * ICS_CHANNELS,
			      ICS_ACK_LEN + 4 * ICS_CHANNELS, GFP_ATOMIC);
	if (!skb)
		return false;

	spin_lock_bh(&p->lock);
	pause = ics_pause_word(p->b->in);
	/*
	 * Without a session of the peer's, only to say a pause word (flow.c)
	 * or what its handlers took (held, told).
	 */
	if (!l->rx_sess && l->pause_sent == pause && !l->rx_held && !l->told) {
		spin_unlock_bh(&p->lock);
		kfree_skb(skb);
		return true;	/* nothing to say */
	}
	held = l->rx_held;
	told = l->told & ~held;
	busy = l->rx_busy;
	l->rx_busy = false;
	len = ICS_ACK_LEN + 4 * hweight16(held | told);
	w = skb_put_zero(skb, len);
	taken = w->taken;
	all = held | told;
	for_each_set_bit(ch, &all, ICS_CHANNELS) {
		if (held & BIT(ch))
			id = ICS_RXCB(skb_peek(&l->held[ch]))->f.msg_id - 1;
		else
			id = l->rx_last_msg[ch];
		*taken++ = htonl(id);
	}
	a.ack_sess = l->rx_sess;
	a.ack = l->rx_sess ? l->rcv_nxt - 1 : 0;
	skb_queue_walk(&l->ooo, s) {
		d = ICS_RXCB(s)->seq - (l->rcv_nxt + 1);
		if (d >= ICS_SACK_BITS)
			break;
		w->sack[d / 8] |= BIT(d % 8);
		bits = d + 1;
	}
	l->rx_unacked = 0;
	l->tx_acks++;
	WRITE_ONCE(l->pause_sent, pause);	/* flow.c reads it racily */
	spin_unlock_bh(&p->lock);

	w->window = htons(ICS_RX_WINDOW);
	w->sack_bits = htons(bits);
	w->held = htons(held);
	w->told = htons(told);
	w->flags = busy ? ICS_ACK_BUSY : 0;
	ics_pause_put(pause, &w->paused, &w->pause_gen);
	hdr = (struct ics_wire_hdr *)skb_network_header(skb);
	hdr->ack_sess = htonl(a.ack_sess);
	hdr->ack = htonl(a.ack);
	hdr->frag_len = htons(len);
	hdr->msg_len = htonl(len);
	if (ics_frame_xmit(p->b, skb, p->addr, TC_PRIO_CONTROL))
		return false;
	ics_count(p->b->in, ICS_STAT_TX_ACKS);
	return true;
}

void ics_ack_timer(struct timer_list *t)
{
	struct ics_link *l = from_timer(l, t, ack_timer);

	if (READ_ONCE(l->rx_unacked))
		ics_link_ack_send(container_of(l, struct ics_peer, link));
}
