// SPDX-License-Identifier: GPL-2.0
/*
 * The send side of a link (Documentation/wire-format.rst has the protocol).
 *
 * Messages wait in per-channel queues. Whenever the window has room, the
 * scheduler picks the channel to serve by priority (round robin within a
 * level, and a level passed over ICS_STARVE times gets the next frame) and
 * cuts one frame from the head message of that channel; so a large message's
 * fragments interleave with every other channel's traffic, and an urgent
 * message waits for at most the frames already in flight.
 *
 * Frames are numbered from 1 in a session. A frame in flight is remembered
 * by (message, offset, length) only; a retransmission builds it again from
 * the message, with fresh acknowledgement fields. A message is complete when
 * its last frame is acknowledged: it leaves the link in send order and its
 * sender is told.
 *
 * Starting a new session ("rewind") puts every incomplete message back at
 * the head of its queue to be sent again from offset 0; the receiver drops
 * whole messages it has already delivered (by message id), so nothing is
 * lost or duplicated. It is how the link survives its peer losing session
 * state (a RESET) and the MTU shrinking under frames already numbered.
 * Failing ("fail") reports every message to its sender with an error: on
 * unbind, when the peer restarts, and when the link makes no progress for
 * link_timeout_ms.
 *
 * Everything here runs under link->tx_lock, in process or softirq context.
 * Frames go to the NIC under the lock, so the wire sees them in seq order;
 * senders' completion callbacks run after it is dropped.
 */
#include <linux/mm.h>
#include <linux/pkt_sched.h>
#include <linux/random.h>
#include <linux/sizes.h>
#include <linux/sched/signal.h>
#include <linux/uio.h>

#include "ics.h"

#define ICS_RTO_INIT_MS		200
#define ICS_RTO_MIN_MS		8
#define ICS_RTO_MAX_MS		1000
#define ICS_CWND_MIN		16	/* where the window starts, and its least */
#define ICS_CWND_MIN_BYTES	SZ_64K	/* and a 64 KiB message in one window */
#define ICS_CWND_LOSS		2	/* after an RTO, on a slow path the least */
#define ICS_FAST_ROUNDS		4	/* rounds in a row that find a slow path fast */
#define ICS_VEGAS_ALPHA		1	/* frames queued in the path: grow below */
#define ICS_VEGAS_BETA		3	/* shrink above */
#define ICS_DUPTHRESH		3	/* later frames SACKed before a hole is lost */
#define ICS_STARVE		32	/* frames a waiting level may be passed over */
#define ICS_RTO_BURST		32	/* frames resent at once when the RTO fires */
#define ICS_URGENT_RESERVE	2	/* frames level 0 may send beyond cwnd */
#define ICS_RTT_BIG		2048	/* frames above: the big class of min_rtt */
#define ICS_SEQ_LAST		(U32_MAX - ICS_WINDOW_MAX)	/* then a new session */
#define ICS_SEND_TIMEOUT	(10 * HZ)

/*
 * The least congestion window, in frames: ICS_CWND_MIN, or as many as a
 * 64 KiB message takes at the link's MTU if more (45 at 1500), never more
 * than the ring. Vegas shrinks the window to keep the queue it builds for
 * an urgent frame short; below this, on a virtual NIC (make bench layout
 * b), it cost a round trip per 12 KiB at MTU 1500 (8 frames): a 64 KiB
 * stream at 0.41 of TCP's rate, a 64 KiB round trip at twice TCP's.
 */
static u32 ics_cwnd_min(const struct ics_peer *p)
{
	u32 n = DIV_ROUND_UP(ICS_CWND_MIN_BYTES, ics_link_mtu(p) - ICS_HDR_LEN);

	return min(max_t(u32, n, ICS_CWND_MIN), p->link.ring_mask + 1);
}

/*
 * The least the window goes to: ics_cwnd_min(), unless the path is too
 * slow for it (slow_path, see ics_round_end()): there 64 KiB would queue
 * for longer than the RTO can wait (at 1 Mbit/s, 550 ms), every frame
 * would be sent again before its ACK could come, and the copies would
 * queue behind the originals.
 */
static u32 ics_cwnd_least(const struct ics_peer *p)
{
	return p->link.slow_path ? ICS_CWND_LOSS : ics_cwnd_min(p);
}

/* Frames the window lets in flight now (the MTU may have fallen since). */
u32 ics_window(const struct ics_peer *p)
{
	return min(max(p->link.cwnd, ics_cwnd_least(p)), p->link.ring_mask + 1);
}

static struct ics_txframe *ics_fr(struct ics_link *l, u32 seq)
{
	return &l->ring[seq & l->ring_mask];
}

static u32 ics_inflight(const struct ics_link *l)
{
	return l->snd_nxt - l->snd_una;
}

static u32 ics_prio_tc(u8 level)
{
	if (level <= 1)
		return TC_PRIO_INTERACTIVE;
	return level <= 4 ? TC_PRIO_BESTEFFORT : TC_PRIO_BULK;
}

/* The longest retransmission timeout, in ms: backoff stops there. */
u32 ics_rto_max(void)
{
	return clamp_t(u32, ics_link_timeout_ms / 4, ICS_RTO_MIN_MS, ICS_RTO_MAX_MS);
}

static void ics_push_work(struct work_struct *work);

void ics_link_init(struct ics_peer *p)
{
	struct ics_link *l = &p->link;
	int ch;

	spin_lock_init(&l->tx_lock);
	for (ch = 0; ch < ICS_CHANNELS; ch++) {
		INIT_LIST_HEAD(&l->q[ch].pending);
		INIT_LIST_HEAD(&l->q[ch].landed);
		skb_queue_head_init(&l->held[ch]);
	}
	INIT_LIST_HEAD(&l->sent);
	l->snd_una = 1;
	l->snd_nxt = 1;
	l->cwnd = ICS_CWND_MIN;
	l->ssthresh = l->ring_mask + 1;
	l->round_end = 1;
	l->rto_ms = min_t(u32, ICS_RTO_INIT_MS, ics_rto_max());
	l->progress = jiffies;
	skb_queue_head_init(&l->ooo);
	timer_setup(&l->rtx_timer, ics_rtx_timer, 0);
	timer_setup(&l->ack_timer, ics_ack_timer, 0);
	l->push_cpu = -1;
	INIT_WORK(&l->push_work, ics_push_work);
}

/* A round's rate (ics_round_end()) is measured from here. */
static void ics_round_begin(struct ics_link *l, u64 now)
{
	l->round_delivered = l->delivered;
	l->round_start_ns = now;
}

/* A new session: numbering restarts at 1, the receiver starts afresh. */
static void ics_new_session(struct ics_link *l)
{
	/* Its frames are for the peer's binding of now (dst_inc), retransmissions too. */
	l->tx_dst_inc = READ_ONCE(container_of(l, struct ics_peer, link)->incarnation);
	if (l->tx_sess)
		l->tx_sess = l->tx_sess + 1 ?: 1;
	else
		l->tx_sess = get_random_u32() | 1;
	l->snd_una = 1;
	l->snd_nxt = 1;
	l->recover = 1;
	l->big = 0;
	l->reorder = false;
	l->round_end = 1;
	ics_round_begin(l, ktime_get_ns());
	l->round_sum_us = 0;
	l->round_base_us = 0;
	l->round_n = 0;
	l->cwnd_limited = false;
	l->cwnd = ICS_CWND_MIN;
}

/*
 * At the RTO, but never after the link's deadline (link_timeout_ms). The
 * timer is the RTO from now on, not the reorder timer of ics_sack().
 */
static void ics_rtx_arm(struct ics_link *l)
{
	unsigned long when = jiffies + max(msecs_to_jiffies(l->rto_ms), 2UL);
	unsigned long deadline = l->progress + msecs_to_jiffies(ics_link_timeout_ms) + 1;

	l->reorder = false;
	mod_timer(&l->rtx_timer, time_before(deadline, when) ? deadline : when);
}

static void ics_msg_free(struct ics_msg *m)
{
	u32 i;

	if (m->paged)
		for (i = 0; i < DIV_ROUND_UP(m->len, PAGE_SIZE); i++)
			put_page(m->pages[i]);	/* frames in flight hold their own */
	kvfree(m);
}

/* Take @m off the link's books and onto @out, to be finished. */
static void ics_msg_retire(struct ics_link *l, struct ics_msg *m, struct list_head *out)
{
	u64 cost = ics_msg_cost(m->len);

	l->q[m->channel].bytes -= cost;
	l->queued_bytes -= cost;
	l->queued_msgs--;
	list_move_tail(&m->list, out);
}

/*
 * Tell senders, outside every lock; then the senders waiting for room on
 * those links, and only those: a completion wakes nobody blocked on
 * another node.
 */
static void ics_msgs_finish(struct ics_net *in, struct list_head *list, int err)
{
	DECLARE_BITMAP(nodes, ICS_MAX_NODES + 1);
	struct ics_msg *m, *tmp;
	unsigned int node;

	bitmap_zero(nodes, ICS_MAX_NODES + 1);
	list_for_each_entry_safe(m, tmp, list, list) {
		list_del(&m->list);
		ics_count(in, err ? ICS_STAT_MSGS_FAILED : ICS_STAT_MSGS_DONE);
		if (m->done)
			m->done(m->ctx, err);
		module_put(m->owner);
		__set_bit(m->node, nodes);
		ics_msg_free(m);
	}
	for_each_set_bit(node, nodes, ICS_MAX_NODES + 1)
		wake_up(&in->tx_wq[node]);
}

/*
 * Every message on the link to @out, and a new session for the next ones;
 * with @landed those landed too: the peer went down, restarted or we
 * unbind, and it can no longer tell us it took them. A link that only
 * timed out keeps them: the peer holds them whole, and may still take them.
 */
static void ics_fail_locked(struct ics_net *in, struct ics_link *l, bool landed,
			    struct list_head *out)
{
	struct ics_msg *m, *tmp;
	int ch;

	list_for_each_entry_safe(m, tmp, &l->sent, list) {
		ics_msg_retire(l, m, out);
		l->msgs_failed++;
	}
	for (ch = 0; ch < ICS_CHANNELS; ch++) {
		list_for_each_entry_safe(m, tmp, &l->q[ch].landed, list) {
			if (!landed)
				break;
			ics_msg_retire(l, m, out);
			l->msgs_failed++;
		}
		list_for_each_entry_safe(m, tmp, &l->q[ch].pending, list) {
			ics_msg_retire(l, m, out);
			l->msgs_failed++;
		}
	}
	l->large = NULL;
	if (l->tx_sess) {
		ics_new_session(l);
		l->resets++;
		ics_count(in, ICS_STAT_LINK_RESETS);
	}
	/* Down, restarted or stuck: take its next pause word, however old. */
	l->peer_pause_known = false;
}

/*
 * Every incomplete message back to the head of its queue; a new session.
 * Landed messages stay: the peer holds them whole, and says when they are
 * taken in the new session's ACKs.
 */
static void ics_rewind_locked(struct ics_net *in, struct ics_link *l)
{
	struct ics_msg *m, *tmp;
	int ch;

	for (ch = 0; ch < ICS_CHANNELS; ch++) {
		m = list_first_entry_or_null(&l->q[ch].pending, struct ics_msg, list);
		if (m)
			m->next_off = 0;	/* possibly cut in part */
	}
	list_for_each_entry_safe_reverse(m, tmp, &l->sent, list) {
		m->next_off = 0;
		m->cut = false;
		list_move(&m->list, &l->q[m->channel].pending);
	}
	l->large = NULL;	/* every message starts over */
	ics_new_session(l);
	l->resets++;
	ics_count(in, ICS_STAT_LINK_RESETS);
}

/*
 * @ch has a message to cut, and the peer did not pause it (flow.c); or
 * its head message is cut in part, which is finished anyway: its first
 * frames hold reassembly memory on the peer, which must not wait on a
 * reader.
 */
static bool ics_ready(const struct ics_link *l, int ch)
{
	const struct list_head *q = &l->q[ch].pending;
	const struct ics_msg *m;

	if (list_empty(q))
		return false;
	m = list_first_entry(q, const struct ics_msg, list);
	if (m->next_off)
		return true;
	/* one large message at a time (reasm.c): the peer reserves it whole */
	if (m->len > ICS_LARGE_MSG && l->large)
		return false;
	return !(l->peer_paused & BIT(ch));
}

/* The channel to serve next, or -1. */
static int ics_pick(struct ics_link *l, const struct ics_net *in)
{
	unsigned int mask = 0, lvl, i;
	u8 prio[ICS_CHANNELS];
	int ch;

	for (ch = 0; ch < ICS_CHANNELS; ch++) {
		prio[ch] = READ_ONCE(in->prio[ch]);
		if (ics_ready(l, ch))
			mask |= BIT(prio[ch]);
	}
	if (!mask)
		return -1;
	lvl = __ffs(mask);
	for (i = lvl + 1; i < ICS_PRIO_LEVELS; i++) {
		if ((mask & BIT(i)) && l->starve[i] >= ICS_STARVE) {
			lvl = i;
			break;
		}
	}
	for (i = 0; i < ICS_PRIO_LEVELS; i++)
		if ((mask & BIT(i)) && i != lvl)
			l->starve[i] += l->starve[i] < U8_MAX;
	l->starve[lvl] = 0;

	for (i = 1; i <= ICS_CHANNELS; i++) {
		ch = (l->rr[lvl] + i) % ICS_CHANNELS;
		if (prio[ch] == lvl && ics_ready(l, ch)) {
			l->rr[lvl] = ch;
			return ch;
		}
	}
	return -1;	/* not reached: mask said the level has a queue */
}

/* A level-0 channel with a message waiting, round robin; or -1. */
static int ics_pick_urgent(struct ics_link *l, const struct ics_net *in)
{
	unsigned int i;
	int ch;

	for (i = 1; i <= ICS_CHANNELS; i++) {
		ch = (l->rr[0] + i) % ICS_CHANNELS;
		if (!READ_ONCE(in->prio[ch]) && ics_ready(l, ch)) {
			l->rr[0] = ch;
			return ch;
		}
	}
	return -1;
}

/*
 * The @len bytes at @off of paged message @m as @skb's page fragments: a
 * reference to each page, no copy. A frame's payload is under 64 KiB
 * (frag_len is 16 bits), so it spans at most 17 pages, and MAX_SKB_FRAGS
 * is at least 17. A NIC without scatter-gather gets the frame linearized
 * by the core (validate_xmit_skb()).
 *
 * The pages are the message's, and the message may be freed while the
 * frame lives on (in a qdisc; on veth, in the receiver's reassembly):
 * SKBFL_SHARED_FRAG says that the data is not the skb's own to write
 * (skb_has_shared_frag()). truesize grows by the bytes carried, as
 * skb_splice_from_iter() charges spliced pages: the pages are charged
 * whole to the message (its queue cost, the writer's memory cgroup), and
 * a page shared by three frames charged whole to each would make a
 * receiver on veth count a 16 MiB message as some 75 MiB of reassembly.
 */
static void ics_frame_attach(struct sk_buff *skb, const struct ics_msg *m, u32 off, u32 len)
{
	int i = 0;
	u32 n;

	BUILD_BUG_ON(DIV_ROUND_UP(U16_MAX, PAGE_SIZE) + 1 > MAX_SKB_FRAGS);
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	for (; len; off += n, len -= n) {
		struct page *page = m->pages[off / PAGE_SIZE];

		n = min_t(u32, len, PAGE_SIZE - offset_in_page(off));
		get_page(page);
		skb_fill_page_desc(skb, i++, page, offset_in_page(off), n);
		skb->len += n;
		skb->data_len += n;
		skb->truesize += n;
	}
}

/*
 * An unpaged message's @n bytes from @off into @to. Paged messages are
 * never copied: their frames reference the pages, and no bundle holds one
 * (the copybreak is the bundle's limit).
 */
static void ics_msg_copy(const struct ics_msg *m, u8 *to, u32 off, u32 n)
{
	BUILD_BUG_ON(ICS_BUNDLE_MSG_MAX > ICS_COPYBREAK);
	memcpy(to, m->data + off, n);
}

/* The payload of a bundle: @k messages from @m on, as link.sent holds them. */
static void ics_bundle_fill(u8 *to, const struct ics_msg *m, u16 k)
{
	struct ics_wire_brec *r;

	for (; k; k--, m = list_next_entry(m, list)) {
		r = (struct ics_wire_brec *)to;
		r->len = htons(m->len);
		r->flags = 0;
		r->reserved = 0;
		to += sizeof(*r);
		ics_msg_copy(m, to, 0, m->len);
		to += m->len;
	}
}

/* Build the data frame for @f (seq @seq), acknowledging what we received. */
static struct sk_buff *ics_data_frame(struct ics_peer *p, const struct ics_txframe *f, u32 seq,
				      u8 flags)
{
	const struct ics_msg *m = f->msg;
	struct ics_link *l = &p->link;
	struct ics_hdr_args a = {
		.type = ICS_FT_DATA,
		.flags = flags,
		.channel = m->channel,
		.dst = p->node_id,
		.dst_inc = l->tx_dst_inc,
		.sess = l->tx_sess,
		.seq = seq,
		.msg_id = m->msg_id,
		.msg_len = m->len,
		.off = f->off,
	};
	struct sk_buff *skb;

	/*
	 * Racy read of the receive side: at worst an older ack. The receive
	 * side still sends its own (the two sides share no lock).
	 */
	a.ack_sess = READ_ONCE(l->rx_sess);
	if (a.ack_sess)
		a.ack = READ_ONCE(l->rcv_nxt) - 1;
	if (f->bundle) {
		a.flags = ICS_WF_BUNDLE | flags;
		a.msg_len = f->len;
	}
	/* Linear room for what is copied: a bundle, or a message's inline data. */
	skb = ics_frame_alloc(p->b, &a, f->len, f->bundle || !m->paged ? f->len : 0, GFP_ATOMIC);
	if (!skb)
		return NULL;
	if (f->bundle)
		ics_bundle_fill(skb_put(skb, f->len), m, f->bundle);
	else if (m->paged)
		ics_frame_attach(skb, m, f->off, f->len);
	else
		ics_msg_copy(m, skb_put(skb, f->len), f->off, f->len);
	skb->priority = ics_prio_tc(READ_ONCE(p->b->in->prio[m->channel]));
	return skb;
}

static void ics_send_frame(struct ics_peer *p, u32 seq, u8 flags)
{
	struct ics_txframe *f = ics_fr(&p->link, seq);
	struct sk_buff *skb = ics_data_frame(p, f, seq, flags);

	f->sent_ns = ktime_get_ns();
	if (skb)
		ics_frame_xmit(p->b, skb, p->addr, skb->priority);
}

static void ics_retransmit(struct ics_peer *p, u32 seq)
{
	ics_fr(&p->link, seq)->rexmit = 1;
	p->link.retransmits++;
	ics_count(p->b->in, ICS_STAT_TX_RETRANSMITS);
	ics_send_frame(p, seq, ICS_WF_ACKREQ);	/* repairs are acknowledged at once */
}

static bool ics_any_pending(const struct ics_link *l)
{
	int ch;

	for (ch = 0; ch < ICS_CHANNELS; ch++)
		if (ics_ready(l, ch))
			return true;
	return false;
}

/*
 * How many of @ch's queued messages, from the head @m on, fit in one
 * bundle of at most @room bytes (their length in *@len); 0 if fewer than
 * two. Only whole small messages, and only those already queued: a frame
 * never waits for company. Their msg_ids follow one another (assigned in
 * queue order), which the bundle's header relies on; checked all the same.
 */
static u16 ics_bundle_count(struct ics_link *l, int ch, struct ics_msg *m, u32 room, u32 *len)
{
	struct ics_msg *n = m;
	u32 used = 0, need;
	u16 k = 0;

	if (m->next_off || m->len > ICS_BUNDLE_MSG_MAX)
		return 0;
	list_for_each_entry_from(n, &l->q[ch].pending, list) {
		need = sizeof(struct ics_wire_brec) + n->len;
		/* k fits ics_txframe.bundle: a record is >= 4 of room's < 64 KiB. */
		if (n->len > ICS_BUNDLE_MSG_MAX || used + need > room ||
		    n->msg_id != m->msg_id + k)
			break;
		used += need;
		k++;
	}
	*len = used;
	return k >= 2 ? k : 0;
}

/* Cut the next frame off the head message(s) of @ch and send it. */
static void ics_cut(struct ics_peer *p, int ch, u32 mtu)
{
	struct ics_link *l = &p->link;
	struct ics_msg *m = list_first_entry(&l->q[ch].pending, struct ics_msg, list);
	u32 seq, n = min_t(u32, m->len - m->next_off, mtu - ICS_HDR_LEN);
	struct ics_txframe *f;
	u32 blen;
	u16 k;

	/*
	 * A session is for one binding of the peer (dst_inc): one begun
	 * before the peer came back as another (its old binding went down or
	 * left, which failed what was in flight) gives way to a new one.
	 */
	if (!l->tx_sess) {
		ics_new_session(l);
	} else if (!ics_inflight(l) && l->tx_dst_inc != READ_ONCE(p->incarnation)) {
		/* ics_link_rebind() or the peer's failure took every message */
		DEBUG_NET_WARN_ON_ONCE(m->next_off);
		ics_new_session(l);
	}
	seq = l->snd_nxt;
	f = ics_fr(l, seq);
	if (!ics_inflight(l)) {
		/* from idle: the round (ics_round_end()) begins now */
		l->progress = jiffies;
		ics_round_begin(l, ktime_get_ns());
	}
	k = ics_bundle_count(l, ch, m, mtu - ICS_HDR_LEN, &blen);
	if (k) {
		*f = (struct ics_txframe){ .msg = m, .len = blen, .bundle = k };
		n = blen;
		ics_count(p->b->in, ICS_STAT_TX_BUNDLES);
		ics_stat_add(p->b->in->stats->ctr[ICS_STAT_TX_BUNDLED], k);
		/* In order onto the tail of sent: f->msg and the k - 1 after it. */
		while (k--) {
			m = list_first_entry(&l->q[ch].pending, struct ics_msg, list);
			m->next_off = m->len;
			m->cut = true;
			list_move_tail(&m->list, &l->sent);
		}
		goto send;
	}
	*f = (struct ics_txframe){ .msg = m, .off = m->next_off, .len = n };
	if (!m->next_off && m->len > ICS_LARGE_MSG)
		l->large = m;
	m->next_off += n;
	if (m->next_off == m->len) {
		f->last = 1;
		m->cut = true;
		list_move_tail(&m->list, &l->sent);
		if (l->large == m)
			l->large = NULL;
	}
send:
	l->snd_nxt++;
	l->big = max_t(u16, l->big, n);
	l->tx_frames++;
	/*
	 * The last frame queued asks for an acknowledgement at once instead of
	 * a delayed one: nothing after it would bring one. A full window needs
	 * no request: the receiver acknowledges every ICS_ACK_EVERY (4)
	 * frames, at most half of the least window, so acks keep coming while
	 * it is full; asking there made one ack per burst, a burst being what
	 * one ack let go.
	 */
	ics_send_frame(p, seq, !ics_any_pending(l) ? ICS_WF_ACKREQ : 0);
}

/* Send what the window allows; with !@bulk, only level-0 channels' frames. */
static void ics_push_some(struct ics_peer *p, bool bulk)
{
	struct ics_link *l = &p->link;
	u32 mtu = ics_link_mtu(p), window = ics_window(p);
	int ch;

	/*
	 * Frames numbered for a larger MTU can never arrive, and seq must not
	 * wrap to 0 (a receiver refuses it): start over in a new session.
	 */
	if ((ics_inflight(l) && l->big + ICS_HDR_LEN > mtu) || l->snd_nxt >= ICS_SEQ_LAST)
		ics_rewind_locked(p->b->in, l);

	while (bulk && ics_inflight(l) < window && (ch = ics_pick(l, p->b->in)) >= 0)
		ics_cut(p, ch, mtu);
	if (bulk && ics_inflight(l) >= window && ics_any_pending(l))
		l->cwnd_limited = true;
	/*
	 * Urgent messages do not wait for bulk frames to be acknowledged: the
	 * level-0 channels (CNX, PRI0 by default) may have ICS_URGENT_RESERVE
	 * frames in flight beyond the congestion window (never beyond the
	 * ring). They still queue behind the frames in flight on the path,
	 * which the delay-based window keeps few.
	 */
	while (ics_inflight(l) < min(window + ICS_URGENT_RESERVE, l->ring_mask + 1) &&
	       (ch = ics_pick_urgent(l, p->b->in)) >= 0)
		ics_cut(p, ch, mtu);
	if (ics_inflight(l) && !timer_pending(&l->rtx_timer))
		ics_rtx_arm(l);
}

static void ics_push_locked(struct ics_peer *p)
{
	ics_push_some(p, true);
}

void ics_link_push(struct ics_peer *p)
{
	spin_lock_bh(&p->link.tx_lock);
	ics_push_locked(p);
	spin_unlock_bh(&p->link.tx_lock);
}

static void ics_push_work(struct work_struct *work)
{
	struct ics_link *l = container_of(work, struct ics_link, push_work);

	ics_link_push(container_of(l, struct ics_peer, link));
}

/*
 * After an ack: push from here, or, if a task queued bulk messages on
 * another CPU, hand the bulk frames to that CPU. An ack-clocked stream
 * sends its next frames from the CPU that took the ack, in softirq; on
 * veth (and a NIC steering acks elsewhere) the receiver's processing of
 * those frames, and its acks, then run there too, and the stream moves
 * for good onto whichever CPU took one ack: a ping's reply, which carries
 * acks, drags it onto the pinger's CPU, whose softirq it then fills. Only
 * level-0 frames go from here at once.
 */
static void ics_push_after_ack(struct ics_peer *p)
{
	struct ics_link *l = &p->link;
	int cpu = READ_ONCE(l->push_cpu);

	if (cpu < 0 || cpu == smp_processor_id() || !cpu_online(cpu)) {
		ics_push_locked(p);
		return;
	}
	ics_push_some(p, false);
	if (ics_inflight(l) < ics_window(p) && ics_any_pending(l))
		queue_work_on(cpu, system_highpri_wq, &l->push_work);
}

/*
 * Room for a message of @len bytes on @ch (racy reads: a hint for waiters,
 * exact under tx_lock). Channels the peer paused hold their messages for
 * as long as its reader takes: they do not count against the link's room
 * for the others, so a stopped reader cannot block other channels. They
 * have a link_queue_max of their own, and the whole link holds at most
 * twice link_queue_max: channels filled while flowing and paused
 * afterwards, one after another, cannot pile up more than that; but the
 * flowing channels, their queues empty, still take one message (so the
 * bound is twice link_queue_max and a message).
 */
static bool ics_room(const struct ics_link *l, u8 ch, u32 len)
{
	u64 cq = READ_ONCE(l->q[ch].bytes), all = READ_ONCE(l->queued_bytes);
	unsigned long paused = READ_ONCE(l->peer_paused);
	u64 cost = ics_msg_cost(len), pq = 0, b;
	int c;

	for_each_set_bit(c, &paused, ICS_CHANNELS) {
		b = READ_ONCE(l->q[c].bytes);
		pq += c == ch ? 0 : b;
	}
	/* flowing: all but the other paused channels; paused: all paused ones */
	b = paused & BIT(ch) ? pq + cq : all - min(all, pq);
	return (!cq || cq + cost <= ics_chan_queue_max) &&
	       (!b || b + cost <= ics_link_queue_max) &&
	       (!all || all + cost <= 2 * (u64)ics_link_queue_max ||
		(!b && !(paused & BIT(ch))));
}

/*
 * Room taken for a message before it exists (ics_reserve()): its cost is
 * charged to its channel's and its link's queues, in the binding
 * @bind_seq, until the message is queued on it or it is given back.
 */
struct ics_resv {
	u32 bind_seq;
	u64 cost;
};

/*
 * @node's peer for sending, under rcu_read_lock(): the binding in *@bp;
 * ERR_PTR -ENOTCONN (unbound), -EINVAL (our own id), -EHOSTUNREACH (never
 * heard).
 */
static struct ics_peer *ics_send_peer(struct ics_net *in, u8 node, struct ics_bind **bp)
{
	struct ics_bind *b = rcu_dereference(in->bind);
	struct ics_peer *p;

	if (!b)
		return ERR_PTR(-ENOTCONN);
	if (node == b->node_id)
		return ERR_PTR(-EINVAL);
	p = rcu_dereference(b->peers[node]);
	if (!p || READ_ONCE(p->state) == ICS_MEMBER_NONE)
		return ERR_PTR(-EHOSTUNREACH);
	*bp = b;
	return p;
}

/*
 * Room for a message of @len bytes on @ch to @node, taken now, before the
 * message is allocated: a sender waiting for room holds no memory, and one
 * that has room keeps it while it copies. 0, -EAGAIN when full, or why it
 * cannot be sent.
 */
static int ics_reserve(struct ics_net *in, u8 node, u8 ch, u32 len, struct ics_resv *r)
{
	struct ics_bind *b;
	struct ics_peer *p;
	struct ics_link *l;
	int err = 0;

	rcu_read_lock();
	p = ics_send_peer(in, node, &b);
	if (IS_ERR(p)) {
		err = PTR_ERR(p);
		goto out;
	}
	l = &p->link;
	spin_lock_bh(&l->tx_lock);
	if (!ics_live(READ_ONCE(p->state))) {
		err = -EHOSTDOWN;
		ics_count(in, ICS_STAT_TX_HOSTDOWN);
	} else if (!ics_room(l, ch, len)) {
		err = -EAGAIN;
	} else {
		r->bind_seq = b->seq;
		r->cost = ics_msg_cost(len);
		l->q[ch].bytes += r->cost;
		l->queued_bytes += r->cost;
	}
	spin_unlock_bh(&l->tx_lock);
out:
	rcu_read_unlock();
	return err;
}

/* Give @r back to @l (tx_lock held) and tell those waiting for room. */
static void ics_unreserve_locked(struct ics_net *in, struct ics_link *l, u8 node, u8 ch,
				 const struct ics_resv *r)
{
	lockdep_assert_held(&l->tx_lock);
	l->q[ch].bytes -= r->cost;
	l->queued_bytes -= r->cost;
	wake_up(&in->tx_wq[node]);
}

/*
 * Queue @m on its reservation @r: 0, or why it cannot be sent now (the
 * reservation is given back). Peers live as long as their binding, so the
 * binding that took @r still has @m->node's peer; a new binding has fresh
 * links, which owe @r nothing.
 */
static int ics_enqueue(struct ics_net *in, struct ics_msg *m, const struct ics_resv *r)
{
	struct ics_bind *b;
	struct ics_peer *p;
	struct ics_link *l;
	u8 node = m->node;
	int err = 0;

	rcu_read_lock();
	b = rcu_dereference(in->bind);
	if (!b || b->seq != r->bind_seq) {
		err = -ENOTCONN;
		goto out;
	}
	p = rcu_dereference(b->peers[node]);
	l = &p->link;
	spin_lock_bh(&l->tx_lock);
	/*
	 * Read under tx_lock: a node going down is marked before its link is
	 * failed (under this lock), so a message is either refused here or
	 * queued in time to be failed with the others.
	 */
	if (!ics_live(READ_ONCE(p->state))) {
		err = -EHOSTDOWN;
		ics_count(in, ICS_STAT_TX_HOSTDOWN);
		ics_unreserve_locked(in, l, node, m->channel, r);
	} else {
		m->msg_id = ++l->next_msg_id[m->channel];
		list_add_tail(&m->list, &l->q[m->channel].pending);
		l->queued_msgs++;
		ics_count_dir(&in->stats->chan[m->channel].tx, m->len);
		ics_count_node(&p->tx_chans->ch[m->channel], m->len);
		if (in_task() && READ_ONCE(in->prio[m->channel]))
			WRITE_ONCE(l->push_cpu, raw_smp_processor_id());
		ics_push_locked(p);
	}
	spin_unlock_bh(&l->tx_lock);
out:
	rcu_read_unlock();
	return err;
}

/* A reservation whose message could not be made. */
static void ics_unreserve(struct ics_net *in, u8 node, u8 ch, const struct ics_resv *r)
{
	struct ics_bind *b;
	struct ics_link *l;

	rcu_read_lock();
	b = rcu_dereference(in->bind);
	if (b && b->seq == r->bind_seq) {
		l = &rcu_dereference(b->peers[node])->link;
		spin_lock_bh(&l->tx_lock);
		ics_unreserve_locked(in, l, node, ch, r);
		spin_unlock_bh(&l->tx_lock);
	}
	rcu_read_unlock();
}

/* Would a message of @len bytes to @node on @ch be queued now (or fail otherwise)? */
bool ics_link_room(struct ics_net *in, u8 node, u8 ch, u32 len)
{
	struct ics_bind *b;
	struct ics_peer *p;
	bool ok = true;		/* anything but "full" ends the wait */

	rcu_read_lock();
	b = rcu_dereference(in->bind);
	p = b ? rcu_dereference(b->peers[node]) : NULL;
	if (p)
		ok = ics_room(&p->link, ch, len);
	rcu_read_unlock();
	return ok;
}

/*
 * A message holding @len bytes from @data or @from: up to ICS_COPYBREAK
 * inline, beyond in pages of its own.
 * This is the send side's one copy; the frames reference these pages.
 */
static struct ics_msg *ics_msg_alloc(u32 len, const void *data, struct iov_iter *from,
				     gfp_t gfp)
{
	u32 i, n, npages = len > ICS_COPYBREAK ? DIV_ROUND_UP(len, PAGE_SIZE) : 0;
	struct ics_msg *m;

	m = kvmalloc(npages ? struct_size(m, pages, npages) : struct_size(m, data, len), gfp);
	if (!m)
		return ERR_PTR(-ENOMEM);
	memset(m, 0, sizeof(*m));
	m->len = len;		/* for ics_msg_free() on the way out */
	if (!npages) {
		if (from && !copy_from_iter_full(m->data, len, from))
			goto fault;
		if (!from && len)
			memcpy(m->data, data, len);
		return m;
	}
	m->paged = true;
	for (i = 0; i < npages; i++) {
		m->pages[i] = alloc_page(gfp);
		if (!m->pages[i]) {
			m->len = i * PAGE_SIZE;
			ics_msg_free(m);
			return ERR_PTR(-ENOMEM);
		}
	}
	for (i = 0; i < npages; i++) {
		n = min_t(u32, len - i * PAGE_SIZE, PAGE_SIZE);
		if (!from)
			memcpy(page_address(m->pages[i]), data + i * PAGE_SIZE, n);
		else if (copy_page_from_iter(m->pages[i], 0, n, from) != n)
			goto fault;
	}
	return m;
fault:
	ics_msg_free(m);
	return ERR_PTR(-EFAULT);
}

/*
 * Queue a message whose @len bytes come from @data or from @from (a user
 * buffer, copied straight into the message).
 */
int ics_link_send_iter(struct ics_net *in, u8 node, u8 channel, const void *data,
		       struct iov_iter *from, u32 len, const struct ics_send_args *args,
		       gfp_t gfp)
{
	long timeout = args && args->timeout ? args->timeout : ICS_SEND_TIMEOUT;
	bool block = gfpflags_allow_blocking(gfp) && !(args && args->flags & ICS_SEND_NONBLOCK);
	struct ics_resv r;
	struct ics_msg *m;
	int err;

	for (;;) {
		err = ics_reserve(in, node, channel, len, &r);
		if (err != -EAGAIN)
			break;
		if (!block) {
			ics_count(in, ICS_STAT_TX_EAGAIN);
			break;
		}
		/* a binding exists (it said EAGAIN): so does tx_wq */
		timeout = wait_event_interruptible_timeout(in->tx_wq[node],
							   ics_link_room(in, node, channel, len),
							   timeout);
		if (timeout < 0) {
			err = -EINTR;
			break;
		}
		if (!timeout) {
			err = -ETIMEDOUT;
			break;
		}
	}
	if (err)
		return err;
	/* done() may run as soon as it is queued: pin its module first */
	if (args && args->done && !try_module_get(args->owner)) {
		ics_unreserve(in, node, channel, &r);
		return -ENODEV;
	}

	m = ics_msg_alloc(len, data, from, gfp);
	if (IS_ERR(m)) {
		ics_unreserve(in, node, channel, &r);
		err = PTR_ERR(m);
		goto put;
	}
	m->channel = channel;
	m->node = node;
	m->len = len;
	if (args && args->done) {
		m->done = args->done;
		m->ctx = args->ctx;
		m->owner = args->owner;
	}
	err = ics_enqueue(in, m, &r);
	if (!err)
		return 0;
	ics_msg_free(m);
put:
	if (args && args->done)
		module_put(args->owner);
	return err;
}

int ics_link_send(struct ics_net *in, u8 node, u8 channel, const void *data,
		  u32 len, const struct ics_send_args *args, gfp_t gfp)
{
	return ics_link_send_iter(in, node, channel, data, NULL, len, args, gfp);
}

static void ics_rto_update(struct ics_link *l)
{
	if (l->srtt_us)
		l->rto_ms = clamp_t(u32, DIV_ROUND_UP(l->srtt_us + 4 * l->rttvar_us,
						      USEC_PER_MSEC),
				    ICS_RTO_MIN_MS, ics_rto_max());
}

/*
 * RFC 6298, in microseconds; and, for ics_round_end(), the sample with the
 * least RTT seen for a frame of its size class (@len payload bytes up to
 * ICS_RTT_BIG or more): a 9000-byte frame's RTT includes its transmission
 * and checksum time on both ends, so measured against a small frame's it
 * would always look queued.
 */
static void ics_rtt_sample(struct ics_link *l, u64 ns, u32 len)
{
	u32 r = max_t(u32, div_u64(ns, NSEC_PER_USEC), 1);
	int c = len > ICS_RTT_BIG;

	if (!l->min_rtt_us[c] || r <= l->min_rtt_us[c] ||
	    time_after(jiffies, l->min_rtt_stamp[c] + 10 * HZ)) {
		l->min_rtt_us[c] = r;
		l->min_rtt_stamp[c] = jiffies;
	}
	l->round_sum_us += r;
	l->round_base_us += l->min_rtt_us[c];
	l->round_n++;

	if (!l->srtt_us) {
		l->srtt_us = r;
		l->rttvar_us = r / 2;
	} else {
		l->rttvar_us = (3 * l->rttvar_us + abs((s32)(l->srtt_us - r))) / 4;
		l->srtt_us = (7 * l->srtt_us + r) / 8;
	}
	ics_rto_update(l);
}

/*
 * Once per round trip, outside loss recovery: the congestion window follows
 * Vegas, with rtt the round's mean sample (its least one hides the queue when
 * the receiver takes frames in batches) and min_rtt the mean of those
 * samples' least RTTs (each of its size class). cwnd * (rtt - min_rtt) / rtt
 * frames are sitting in queues on the
 * path (the NIC's, the receiver's backlog); keep that between
 * ICS_VEGAS_ALPHA and ICS_VEGAS_BETA, so that a bulk transfer keeps the
 * path busy without building the queue an urgent frame would wait behind.
 * Below ssthresh the window doubles per round while the queue stays short.
 */
static void ics_round_end(struct ics_peer *p)
{
	struct ics_link *l = &p->link;
	u32 rtt = 0, base = 0, max = l->ring_mask + 1, queued, w = ics_window(p);
	u64 now = ktime_get_ns(), dur_us = div_u64(now - l->round_start_ns, NSEC_PER_USEC);
	u32 d = l->delivered - l->round_delivered;

	if (l->round_n) {
		rtt = l->round_sum_us / l->round_n;
		base = l->round_base_us / l->round_n;
	}
	if (rtt) {
		/*
		 * The path delivered d frames in this round (all it could, if
		 * the window, not the writer, limited it): would the least
		 * window queue there for more than a quarter of the largest
		 * RTO? Then it is too slow for it (ics_cwnd_least()); a
		 * receiver's batching adds a few ms at most (a 64 KiB round
		 * trip over a TCG guest's virtio NIC takes 7 ms). The frames
		 * it delivered and the round's length,
		 * not its RTT samples, give the rate: frames that overtook a
		 * queue (netem reordering at 1 Mbit/s) gave samples of 1 ms
		 * for the queue's 550 ms. Each frame counts once, when first
		 * SACKed or acknowledged: a hole repaired acknowledges at once
		 * the frames held past it, delivered rounds before. A slow
		 * path is fast again after ICS_FAST_ROUNDS rounds in a row say
		 * so: a round of two or three frames that all overtook the
		 * queue says so too.
		 */
		if (l->cwnd_limited && d) {
			if (div_u64(ics_cwnd_min(p) * dur_us, d) >
			    base + ics_rto_max() * (USEC_PER_MSEC / 4)) {
				l->slow_path = true;
				l->fast_rounds = 0;
			} else if (++l->fast_rounds >= ICS_FAST_ROUNDS) {
				l->slow_path = false;
				l->fast_rounds = 0;
			}
		}
		queued = div_u64((u64)w * (rtt - min(rtt, base)), rtt);
		if (queued > ICS_VEGAS_BETA) {
			l->cwnd = max(w - (queued - ICS_VEGAS_BETA), ics_cwnd_least(p));
			l->ssthresh = min(l->ssthresh, l->cwnd);
		} else if (queued < ICS_VEGAS_ALPHA && l->cwnd_limited) {
			l->cwnd = w < l->ssthresh ? 2 * w : w + 1;
		}
		l->cwnd = min(l->cwnd, max);
	}
	l->round_end = l->snd_nxt;
	ics_round_begin(l, now);
	l->round_sum_us = 0;
	l->round_base_us = 0;
	l->round_n = 0;
	l->cwnd_limited = false;
}

/*
 * An RTT sample from @f, acknowledged or SACKed for the first time by an
 * ACK that arrived @now. A frame sent once gives one. A resent frame
 * gives one if the ACK came at least a least round trip (min_rtt) after
 * its last copy went, as RACK tells an ACK that may be the last copy's
 * from one that cannot be: whichever copy arrived, the time since the
 * last one is the round trip's lower bound. Karn's rule alone took none
 * from a resent frame, and on a path that queued longer than the estimate
 * every frame was resent before its ACK came: no sample ever again, the
 * estimate stuck (netem at 1 Mbit/s: srtt 6.4 ms, round trips up to
 * 550 ms) and every frame resent again and again.
 */
static void ics_frame_rtt(struct ics_link *l, const struct ics_txframe *f, u64 now)
{
	u64 ns = now - f->sent_ns;

	if (f->rexmit && ns < (u64)l->min_rtt_us[f->len > ICS_RTT_BIG] * NSEC_PER_USEC)
		return;
	ics_rtt_sample(l, ns, f->len);
}

/*
 * Frames up to @ack arrived: retire them; the messages they finish have
 * landed, and are done once the peer's handler took them (ics_landed()).
 * Returns how many had not been SACKed: the frames this ACK says arrived.
 */
static u32 ics_ack_advance(struct ics_peer *p, u32 ack)
{
	struct ics_link *l = &p->link;
	struct ics_txframe *f, *last = NULL;
	struct ics_msg *m, *next;
	u32 seq, arrived = 0;
	u16 k;

	for (seq = l->snd_una; seq != ack + 1; seq++) {
		f = ics_fr(l, seq);
		if (!f->sacked) {
			last = f;
			arrived++;
		}
		if (f->bundle) {
			for (m = f->msg, k = f->bundle; k; k--, m = next) {
				next = list_next_entry(m, list);
				list_move_tail(&m->list, &l->q[m->channel].landed);
			}
		} else if (f->last) {
			list_move_tail(&f->msg->list, &l->q[f->msg->channel].landed);
		}
		f->msg = NULL;
	}
	/*
	 * The sample: the newest frame not SACKed before, the one whose
	 * arrival sent this ACK; a frame held past a hole is acknowledged
	 * late, not slowly (it gave its sample when SACKed, ics_sack()).
	 * The RTO's backoff stays until a sample: an ACK says the path works,
	 * not how slow it is.
	 */
	if (last)
		ics_frame_rtt(l, last, ktime_get_ns());
	l->delivered += arrived;
	l->snd_una = ack + 1;
	l->progress = jiffies;
	if (!ics_before(l->snd_una, l->recover) && !ics_before(l->snd_una, l->round_end))
		ics_round_end(p);
	if (!ics_inflight(l)) {
		l->big = 0;
		l->reorder = false;
		del_timer(&l->rtx_timer);
	} else {
		ics_rtx_arm(l);
	}
	return arrived;
}

/* One window reduction per loss episode. */
static void ics_loss_episode(struct ics_peer *p)
{
	struct ics_link *l = &p->link;

	if (ics_before(l->snd_una, l->recover))
		return;
	l->ssthresh = max(ics_inflight(l) / 2, ics_cwnd_least(p));
	l->cwnd = l->ssthresh;
	l->recover = l->snd_nxt;
}

/*
 * Resend the holes below @high, the highest frame the receiver holds, that
 * are lost: ICS_DUPTHRESH later frames arrived and half a round trip passed,
 * or a round trip and a quarter passed since the hole was sent (RACK's rule;
 * @force: the reorder timer says it has); at most @budget of them. Returns
 * how many were resent; *@wait is set if a hole is not lost yet, or is but
 * over the budget.
 *
 * A hole resent before goes again only at the RTO: on a path whose queue
 * outlasts the RTT estimate (frames that overtake it give samples of a
 * millisecond, netem reordering at 1 Mbit/s), a copy judged lost by the
 * clock was resent again and again, its copies filled the queue, and the
 * hole's own ACK came after link_timeout_ms: every message failed.
 * So each hole gets one fast repair at most, as in RFC 6675; a repair
 * that is lost too costs an RTO.
 */
static u32 ics_repair(struct ics_peer *p, u32 high, bool force, u32 budget, bool *wait)
{
	struct ics_link *l = &p->link;
	u64 now = ktime_get_ns(), rtt = (u64)max(l->srtt_us, 100U) * NSEC_PER_USEC;
	u32 seq, n = 0;

	for (seq = l->snd_una; ics_before(seq, high); seq++) {
		struct ics_txframe *f = ics_fr(l, seq);
		u64 age = now - f->sent_ns;

		if (f->sacked || f->rexmit || age < rtt / 2)
			continue;
		if (!force && high - seq < ICS_DUPTHRESH && age < rtt + rtt / 4) {
			*wait = true;
			continue;
		}
		if (n == budget) {
			*wait = true;
			break;
		}
		l->fast_retransmits++;
		ics_retransmit(p, seq);
		n++;
	}
	return n;
}

/* The highest SACKed frame in flight, or snd_una if none. */
static u32 ics_high_sacked(struct ics_link *l)
{
	u32 seq;

	for (seq = l->snd_nxt - 1; ics_before(l->snd_una, seq); seq--)
		if (ics_fr(l, seq)->sacked)
			return seq;
	return l->snd_una;
}

/*
 * SACK: mark what the receiver holds and repair the holes below it. As
 * many frames go again as this ACK says arrived (@arrived, those it
 * acknowledged, and those it SACKs first), the conservation of packets:
 * frames resent whenever a hole looked lost, whatever was in flight,
 * filled the queue of a slow path they had mistaken for a loss (netem at
 * 1 Mbit/s whose reordered frames skip its queue: 45 000 frames resent
 * for 5 600 sent, 41 000 dropped by netem).
 */
static void ics_sack(struct ics_peer *p, u32 ack, const struct ics_wire_ack *w, u32 arrived)
{
	struct ics_link *l = &p->link;
	u32 bits = min_t(u32, ntohs(w->sack_bits), ICS_SACK_BITS), i, seq, high = 0;
	struct ics_txframe *f, *fresh = NULL;
	bool wait = false;

	for (i = 0; i < bits; i++) {
		seq = ack + 2 + i;
		if (!ics_before(seq, l->snd_nxt))
			break;
		if (w->sack[i / 8] & BIT(i % 8)) {
			f = ics_fr(l, seq);
			if (!f->sacked) {
				fresh = f;
				arrived++;
				l->delivered++;
			}
			f->sacked = 1;
			high = seq;
		}
	}
	if (!high)
		return;
	/*
	 * A frame held past a hole is acknowledged at once (link_rx.c): the
	 * newest one newly SACKed is the sample. Without it a path that keeps
	 * losing frames (a hole always open) gives none, and the estimate the
	 * repairs and the RTO go by grows stale.
	 */
	if (fresh)
		ics_frame_rtt(l, fresh, ktime_get_ns());
	if (ics_repair(p, high, false, arrived, &wait))
		ics_loss_episode(p);
	/* Not yet lost, and perhaps nothing more will come to tell: time it. */
	if (wait) {
		unsigned long when = jiffies + 1 + usecs_to_jiffies(l->srtt_us + l->srtt_us / 4);
		unsigned long deadline = l->progress + msecs_to_jiffies(ics_link_timeout_ms) + 1;

		l->reorder = true;
		mod_timer(&l->rtx_timer, time_before(deadline, when) ? deadline : when);
	}
}

/*
 * An ACK frame @w said which landed messages its sender's handlers took:
 * on the channels in held or told those up to @taken[channel], whatever
 * the ACK's session (ids are the incarnation's); on the others, if the ACK
 * is of our session and not older than those that landed them (@ours),
 * every one. Done.
 */
static void ics_landed(struct ics_link *l, const struct ics_wire_ack *w, const u32 *taken,
		       bool ours, struct list_head *done)
{
	unsigned long said = ntohs(w->held) | ntohs(w->told);
	struct ics_msg *m, *tmp;
	int ch;

	for (ch = 0; ch < ICS_CHANNELS; ch++) {
		if (!(said & BIT(ch)) && !ours)
			continue;
		list_for_each_entry_safe(m, tmp, &l->q[ch].landed, list) {
			if ((said & BIT(ch)) && ics_before(taken[ch], m->msg_id))
				break;
			ics_msg_retire(l, m, done);
			l->msgs_done++;
		}
	}
}

void ics_link_ack_rcv(struct ics_peer *p, u32 ack_sess, u32 ack,
		      const struct ics_wire_ack *w, const u32 *taken)
{
	struct ics_link *l = &p->link;
	bool resumed = false;
	u32 arrived = 0;
	LIST_HEAD(done);

	spin_lock_bh(&l->tx_lock);
	if (w) {
		l->rx_acks++;
		/* whatever it acknowledges: the incarnation is the one we know */
		if (ics_flow_take(p, ntohs(w->paused), ntohs(w->pause_gen), false))
			resumed = true;
	}
	/* Only acks for our session, within what we sent, count. */
	if (!l->tx_sess || ack_sess != l->tx_sess || ics_before(ack + 1, l->snd_una) ||
	    !ics_before(ack, l->snd_nxt)) {
		if (w)	/* what its handlers took counts anyway */
			ics_landed(l, w, taken, false, &done);
		if (resumed)
			ics_push_locked(p);
		goto out;
	}
	if (ack + 1 != l->snd_una)
		arrived = ics_ack_advance(p, ack);
	/* short of memory for the next frame, not lost: the link is not stuck */
	if (w && (w->flags & ICS_ACK_BUSY))
		l->progress = jiffies;
	if (w) {
		ics_sack(p, ack, w, arrived);
		ics_landed(l, w, taken, true, &done);
	}
	ics_push_after_ack(p);
out:
	spin_unlock_bh(&l->tx_lock);
	ics_msgs_finish(p->b->in, &done, 0);
}

/* The pause word of @p's heartbeat (@fresh: of a new incarnation). */
void ics_link_pause_rcv(struct ics_peer *p, u16 paused, u16 gen, bool fresh)
{
	struct ics_link *l = &p->link;

	spin_lock_bh(&l->tx_lock);
	if (ics_flow_take(p, paused, gen, fresh))
		ics_push_locked(p);
	spin_unlock_bh(&l->tx_lock);
}

void ics_link_reset_rcv(struct ics_peer *p, u32 sess)
{
	struct ics_link *l = &p->link;

	spin_lock_bh(&l->tx_lock);
	if (l->tx_sess && sess == l->tx_sess) {
		ics_rewind_locked(p->b->in, l);
		ics_push_locked(p);
	}
	spin_unlock_bh(&l->tx_lock);
}

/*
 * Failing a link in two steps, so that membership can take the messages
 * off the link under member_lock, at the moment it changes the node's
 * state (a message queued after that is not failed with the others), and
 * tell their senders once every lock is dropped.
 */
void ics_link_fail_take(struct ics_peer *p, struct list_head *out)
{
	struct ics_link *l = &p->link;

	spin_lock_bh(&l->tx_lock);
	ics_fail_locked(p->b->in, l, true, out);
	spin_unlock_bh(&l->tx_lock);
}

/*
 * The peer is binding @inc now (membership confirmed it). Senders read
 * the incarnation under tx_lock (ics_cut()), so none sees the new one
 * before what was sent to the old one is failed onto @out (NULL: the link
 * holds nothing for it, the peer was down). p->lock, under member_lock.
 */
void ics_link_rebind(struct ics_peer *p, u32 inc, struct list_head *out)
{
	struct ics_link *l = &p->link;

	lockdep_assert_held(&p->b->in->member_lock);
	lockdep_assert_held(&p->lock);
	spin_lock(&l->tx_lock);		/* bh off: member_lock */
	WRITE_ONCE(p->incarnation, inc);
	if (out)
		ics_fail_locked(p->b->in, l, true, out);
	spin_unlock(&l->tx_lock);
}

void ics_link_fail_report(struct ics_net *in, struct list_head *out, int err)
{
	ics_msgs_finish(in, out, err);
}

void ics_link_fail(struct ics_peer *p, int err)
{
	LIST_HEAD(out);

	ics_link_fail_take(p, &out);
	ics_msgs_finish(p->b->in, &out, err);
}

void ics_rtx_timer(struct timer_list *t)
{
	struct ics_link *l = from_timer(l, t, rtx_timer);
	struct ics_peer *p = container_of(l, struct ics_peer, link);
	LIST_HEAD(out);
	u32 seq, n, burst;

	spin_lock_bh(&l->tx_lock);
	if (!ics_inflight(l))
		goto out;
	if (time_after(jiffies, l->progress + msecs_to_jiffies(ics_link_timeout_ms))) {
		ics_fail_locked(p->b->in, l, false, &out);
		goto out;
	}
	if (l->reorder) {
		/* The reorder timer of ics_sack(): the holes are lost now. */
		bool wait = false;

		l->reorder = false;
		if (ics_repair(p, ics_high_sacked(l), true,
			       min_t(u32, ICS_RTO_BURST, ics_window(p)), &wait))
			ics_loss_episode(p);
		ics_rtx_arm(l);		/* the RTO again, from now */
		goto out;
	}
	l->timeouts++;
	if (!ics_before(l->snd_una, l->recover))
		l->ssthresh = max(ics_inflight(l) / 2, 2U);
	l->cwnd = ICS_CWND_LOSS;	/* ics_window(): the least, unless slow_path */
	l->recover = l->snd_nxt;
	/* kept until the next RTT sample (ics_frame_rtt()) */
	l->rto_ms = min(l->rto_ms * 2, ics_rto_max());
	/* the round's rate (ics_round_end()) is the path's, not the wait's */
	ics_round_begin(l, ktime_get_ns());
	/*
	 * The oldest frame goes again even if it was SACKed: a receiver short
	 * of reassembly memory may drop a held frame, and only ever the one at
	 * the head of its queue (link_rx.c). Nothing was heard for an RTO, so
	 * the other unSACKed frames are probably lost too (a tail loss leaves
	 * no SACK to say so): resend up to ICS_RTO_BURST of them now, as many
	 * as the window takes.
	 */
	burst = min_t(u32, ICS_RTO_BURST, ics_window(p));
	ics_retransmit(p, l->snd_una);
	for (seq = l->snd_una + 1, n = 1; seq != l->snd_nxt && n < burst; seq++) {
		if (!ics_fr(l, seq)->sacked) {
			ics_retransmit(p, seq);
			n++;
		}
	}
	ics_rtx_arm(l);
out:
	spin_unlock_bh(&l->tx_lock);
	ics_msgs_finish(p->b->in, &out, -ETIMEDOUT);
}

/* Unbind: the receive path and senders are gone (see ics_unbind()). */
void ics_link_destroy(struct ics_peer *p)
{
	cancel_work_sync(&p->link.push_work);	/* only acks queue it */
	timer_shutdown_sync(&p->link.rtx_timer);
	timer_shutdown_sync(&p->link.ack_timer);
	ics_link_fail(p, -ENETDOWN);
	skb_queue_purge(&p->link.ooo);
	ics_link_held_purge(p);
}
