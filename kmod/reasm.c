// SPDX-License-Identifier: GPL-2.0
/*
 * Reassembly of fragmented messages, per peer, under peer->lock. The link
 * hands fragments over in order, but the code does not depend on it: each
 * partial message keeps its fragments sorted by offset, rejects overlaps, and
 * completes when it holds msg_len bytes. The whole message is then one skb:
 * the first fragment with the others chained on its frag_list, no copy.
 *
 * A sender interleaves at most one message per channel, so a peer has at
 * most ICS_CHANNELS partial messages (more evicts the oldest, counted: only a
 * broken sender does that). Partial messages of a peer silent for
 * ics_reasm_timeout_ms are dropped, and so is a large one that got no
 * fragment for that long while another peer's waits for its memory
 * (ics_reasm_stale()); a new session or incarnation drops them at once
 * (the sender resends or fails them). Every drop is counted.
 *
 * Memory, and why one peer's flood cannot wedge the others. Frames are
 * taken in order, so a refused fragment stalls its peer's whole link, and
 * the fragments behind it, of that peer's other partial messages, with it:
 * refusing a fragment of a message begun could leave every peer stalled
 * behind memory that only their own stalled messages would free. So a
 * message is admitted whole at its first fragment, or not at all:
 *  - a large message (over ICS_LARGE_MSG) reserves its estimated truesize
 *    (its fragments times the first one's) from the binding's
 *    reasm_mem_max; one that does not fit is refused while any other is
 *    reserved (one always fits into an empty pool). A sender cuts one large
 *    message at a time per link (link_tx.c), so a peer stalled at a
 *    large message's first fragment has only small ones partial behind it,
 *    and every reserved message can finish and give its memory back.
 *    The estimate holds for a sender that cuts its fragments alike (all
 *    of one length but the last, shorter): the first fragment is copied
 *    into an skb of its size, and a later one in a buffer larger than
 *    that is copied too, into one no larger. One that still costs more
 *    (longer than the first) grows the reservation, within reasm_mem_max
 *    (or alone in the pool, up to its cap); if it cannot, the message is
 *    overrun: its fragments, acknowledged, cannot be refused until room
 *    comes (that could stall several peers behind one another), so the
 *    peer's session is dropped and the sender resends its incomplete
 *    messages in a new one. No sender that cuts alike gets there.
 *  - small messages are never refused for memory (refusing one could stall
 *    the peer's other partial small messages behind it for good): a peer
 *    has at most one per channel, each bounded by ics_reasm_cap().
 * A sender that breaks the rules (a second large message at once) is
 * refused and stalls itself alone. Any message whose fragments cost more
 * than ics_reasm_cap() (rx.c refuses fragments shorter than the least MTU
 * carries but the last, so only a broken NIC or sender gets there) is
 * dropped as broken, and the link goes on.
 * A refused fragment is not acknowledged; the ACK says "busy" (link_rx.c),
 * so that the sender, which resends it later, does not take the wait for
 * a failed link.
 */
#include <linux/sizes.h>
#include <linux/slab.h>

#include "ics.h"

#define ICS_REASM_PER_PEER	ICS_CHANNELS

/*
 * The most a message of @len bytes may cost in fragments' truesize: eight
 * times its length (a 528-byte fragment in a 4 KiB page is that), and
 * 64 KiB for short ones.
 */
static unsigned long ics_reasm_cap(u32 len)
{
	return 8UL * len + SZ_64K;
}

struct ics_reasm {
	struct list_head list;
	u32 msg_id;
	u32 msg_len;
	u32 have;		/* payload bytes held */
	u8 channel;
	bool large;		/* msg_len > ICS_LARGE_MSG: resv reserved */
	unsigned long resv;
	unsigned long per;	/* large: the first fragment's truesize */
	unsigned long truesize;
	struct sk_buff_head frags;	/* sorted by offset */
};

struct ics_frag_cb {
	u32 off;
};

#define ICS_CB(skb) ((struct ics_frag_cb *)(skb)->cb)

static void ics_reasm_free(struct ics_bind *b, struct ics_peer *p, struct ics_reasm *r)
{
	list_del(&r->list);
	p->nr_reasm--;
	atomic_long_sub(r->truesize, &b->reasm_mem);
	if (r->large) {
		atomic_long_sub(max(r->resv, r->truesize), &b->reasm_large);
		p->reasm_large = false;
	}
	__skb_queue_purge(&r->frags);
	kfree(r);
}

/*
 * Reserve @more bytes for a large message that holds @own already: if
 * they fit within reasm_mem_max, or if it holds all there is (a message
 * alone always fits). Nothing is added unless it fits.
 */
static bool ics_reasm_reserve(struct ics_bind *b, unsigned long more, unsigned long own)
{
	long held = atomic_long_read(&b->reasm_large);

	do {
		if ((unsigned long)held != own && held + more > ics_reasm_mem_max)
			return false;
	} while (!atomic_long_try_cmpxchg(&b->reasm_large, &held, held + more));
	return true;
}

/*
 * May a message whose fragment @skb comes first begin (see above)? 0, or
 * -EAGAIN: not now (refused, the sender resends it), or -EINVAL: a large
 * message begun anywhere but at its start, as no sender does (taken and
 * dropped). For a large one, its reservation is taken into *@resv.
 */
static int ics_reasm_admit(struct ics_bind *b, struct ics_peer *p, const struct ics_frag *f,
			   const struct sk_buff *skb, unsigned long *resv)
{
	unsigned long est;

	*resv = 0;
	if (f->msg_len <= ICS_LARGE_MSG)
		return 0;
	if (f->off)
		return -EINVAL;
	if (p->reasm_large)
		return -EAGAIN;
	est = min_t(u64, (u64)DIV_ROUND_UP(f->msg_len, max(skb->len, 1U)) * skb->truesize,
		    ics_reasm_cap(f->msg_len));
	if (!ics_reasm_reserve(b, est, 0)) {
		WRITE_ONCE(b->reasm_wanted_ns, ktime_get_ns());	/* see ics_reasm_stale() */
		return -EAGAIN;
	}
	*resv = est;
	return 0;
}

/* @f's partial message, or a new one: ERR_PTR -EAGAIN (not now), -EINVAL (broken). */
static struct ics_reasm *ics_reasm_find(struct ics_bind *b, struct ics_peer *p,
					const struct ics_frag *f, const struct sk_buff *skb)
{
	unsigned long resv;
	struct ics_reasm *r;
	int err;

	list_for_each_entry(r, &p->reasm, list)
		if (r->msg_id == f->msg_id && r->channel == f->channel)
			return r;

	if (p->nr_reasm >= ICS_REASM_PER_PEER) {
		/* The list is in creation order: the first is the oldest. */
		ics_reasm_free(b, p, list_first_entry(&p->reasm, struct ics_reasm, list));
		ics_count(b->in, ICS_STAT_REASM_EVICTED);
	}
	err = ics_reasm_admit(b, p, f, skb, &resv);
	if (err)
		return ERR_PTR(err);
	r = kzalloc(sizeof(*r), GFP_ATOMIC);
	if (!r) {
		atomic_long_sub(resv, &b->reasm_large);
		return ERR_PTR(-EAGAIN);
	}
	if (f->msg_len > ICS_LARGE_MSG) {
		r->large = true;
		r->resv = resv;
		r->per = skb->truesize;
		p->reasm_large = true;
	}
	r->msg_id = f->msg_id;
	r->msg_len = f->msg_len;
	r->channel = f->channel;
	__skb_queue_head_init(&r->frags);
	list_add_tail(&r->list, &p->reasm);
	p->nr_reasm++;
	return r;
}

/*
 * Where @skb goes, by its offset: after the fragment returned (or the
 * list head); NULL if it overlaps a fragment already held.
 */
static struct sk_buff *ics_reasm_where(struct ics_reasm *r, const struct sk_buff *skb)
{
	u32 off = ICS_CB(skb)->off, end = off + skb->len;
	struct sk_buff *prev, *next;

	/* Fragments usually arrive in order: search from the tail. */
	skb_queue_reverse_walk(&r->frags, prev)
		if (ICS_CB(prev)->off < off)
			break;

	next = prev->next;
	if (prev != (struct sk_buff *)&r->frags && ICS_CB(prev)->off + prev->len > off)
		return NULL;
	if (next != (struct sk_buff *)&r->frags && ICS_CB(next)->off < end)
		return NULL;
	return prev;
}

/* Chain the sorted fragments into one skb: the head's frag_list, no copy. */
static struct sk_buff *ics_reasm_join(struct ics_reasm *r)
{
	struct sk_buff *head = __skb_dequeue(&r->frags), *skb, **tail;

	/* ics_reasm_rcv() uncloned the head; nothing here can fail. */
	tail = &skb_shinfo(head)->frag_list;
	while ((skb = __skb_dequeue(&r->frags))) {
		*tail = skb;
		tail = &skb->next;
		head->len += skb->len;
		head->data_len += skb->len;
		head->truesize += skb->truesize;
	}
	return head;
}

/* Replace *@pskb by a copy in a buffer of its size; false if out of memory. */
static bool ics_reasm_copy(struct sk_buff **pskb)
{
	struct sk_buff *skb = *pskb, *c;

	c = alloc_skb(skb->len, GFP_ATOMIC);
	if (!c)
		return false;
	skb_copy_bits(skb, 0, skb_put(c, skb->len), skb->len);
	consume_skb(skb);
	*pskb = c;
	return true;
}

/*
 * Charge @r's large message @add more bytes of truesize: past its
 * reservation, grow that within reasm_mem_max, or past it if @r holds all
 * there is (see above). False if it cannot.
 */
static bool ics_reasm_grow(struct ics_bind *b, struct ics_reasm *r, unsigned long add)
{
	unsigned long charged = max(r->resv, r->truesize);

	return r->truesize + add <= charged ||
	       ics_reasm_reserve(b, r->truesize + add - charged, charged);
}

/*
 * Called under peer->lock; consumes @skb. 0 if it was taken (or dropped
 * as a duplicate or broken), -ENOMEM if it was refused for now, or
 * -EOVERFLOW if its message was overrun (see above): the caller must drop
 * the peer's session.
 */
int ics_reasm_rcv(struct ics_bind *b, struct ics_peer *p, struct sk_buff *skb,
		  const struct ics_frag *f)
{
	struct ics_net *in = b->in;
	struct sk_buff *msg, *prev;
	struct ics_reasm *r;

	lockdep_assert_held(&p->lock);
	/* A fragment must not bring its own frag_list into ours. */
	if (skb_has_frag_list(skb) && skb_linearize(skb))
		goto nomem;
	/*
	 * A fragment in a buffer far larger than itself (a small frame in a
	 * page) is copied into one of its size, so that what a partial
	 * message holds follows its length (ics_reasm_cap()). So is a large
	 * message's first, whose truesize its estimate multiplies (see
	 * above): a later one of its length or shorter, copied likewise when
	 * it costs more, then never costs more.
	 */
	if ((skb->truesize > 3 * SKB_TRUESIZE(skb->len) ||
	     (!f->off && f->msg_len > ICS_LARGE_MSG)) && !ics_reasm_copy(&skb))
		goto nomem;

	r = ics_reasm_find(b, p, f, skb);
	if (IS_ERR(r)) {
		if (PTR_ERR(r) == -EAGAIN)
			goto nomem;
		ics_count(in, ICS_STAT_RX_BAD_FRAG);
		goto drop;
	}
	if (r->msg_len != f->msg_len) {
		ics_count(in, ICS_STAT_RX_BAD_FRAG);
		goto drop;
	}
	/*
	 * The join chains onto the head: make it ours now, while we may
	 * refuse, and before charging it (unclone may change its truesize;
	 * what is charged here is exactly what ics_reasm_free() returns).
	 */
	if (f->off == 0 && skb_unclone(skb, GFP_ATOMIC))
		goto refuse;
	ICS_CB(skb)->off = f->off;
	prev = ics_reasm_where(r, skb);
	if (!prev) {
		ics_count(in, ICS_STAT_RX_DUP_FRAG);
		goto drop;
	}
	/* a later fragment of a large one costs what the first did, at most */
	if (r->large && r->have && skb->truesize > r->per) {
		if (!ics_reasm_copy(&skb))
			goto nomem;
		ICS_CB(skb)->off = f->off;
	}
	if (r->truesize + skb->truesize > ics_reasm_cap(r->msg_len)) {
		/* taken, and the message dropped: the link goes on */
		ics_count(in, ICS_STAT_RX_BAD_FRAG);
		ics_reasm_free(b, p, r);
		goto drop;
	}
	if (r->large && !ics_reasm_grow(b, r, skb->truesize)) {
		ics_count(in, ICS_STAT_REASM_OVERRUN);
		ics_reasm_free(b, p, r);	/* counted here, not as dropped */
		kfree_skb(skb);
		return -EOVERFLOW;
	}
	__skb_queue_after(&r->frags, prev, skb);
	ics_count_rx_frame(in, f->frame_len);	/* only frames that passed */
	atomic_long_add(skb->truesize, &b->reasm_mem);
	r->truesize += skb->truesize;
	r->have += skb->len;
	if (r->have == r->msg_len) {
		msg = ics_reasm_join(r);
		ics_reasm_free(b, p, r);	/* frags is empty now */
		ics_deliver(p, f->channel, f->msg_id, msg);
	}
	return 0;

drop:
	kfree_skb(skb);
	return 0;	/* taken: a duplicate or a broken sender's frame */
refuse:
	if (!r->have)
		ics_reasm_free(b, p, r);
nomem:
	ics_count(in, ICS_STAT_REASM_NOMEM);
	kfree_skb(skb);
	return -ENOMEM;
}

/*
 * Has @p given up its large partial message: no data frame at all from it
 * (not even one resent, refused or out of order) for @timeout ns, while
 * another peer's large message waited for reassembly memory? Its sender
 * may have failed the message and begun a new session it has sent nothing
 * in yet, while it keeps talking (heartbeats, ACKs), so it never falls
 * silent; its reservation would stall the waiting peer's link for as
 * long. A sender still at it resends within its largest RTO (a quarter of
 * link_timeout_ms, which members share), so its silence must last that
 * long too (and so has its large message had no fragment for @timeout).
 * Under @p's lock; the times are compared signed, as another CPU may note
 * one a little after our @now.
 */
static bool ics_reasm_stale(struct ics_bind *b, struct ics_peer *p, u64 now, u64 timeout)
{
	s64 quiet = max_t(s64, timeout, (u64)ics_link_timeout_ms * NSEC_PER_MSEC);

	return p->reasm_large && (s64)(now - READ_ONCE(b->reasm_wanted_ns)) <= (s64)timeout &&
	       (s64)(now - p->data_ns) > quiet;
}

void __ics_reasm_flush(struct ics_bind *b, struct ics_peer *p, enum ics_reasm_flush how)
{
	u64 timeout = (u64)ics_reasm_timeout_ms * NSEC_PER_MSEC, now;
	struct ics_reasm *r, *tmp;

	lockdep_assert_held(&p->lock);
	if (how == ICS_REASM_CLOSE)
		p->dead = true;
	if (how == ICS_REASM_IDLE) {
		now = ktime_get_ns();
		if (list_empty(&p->reasm) ||
		    (ics_silent_ns(p, now) <= timeout && !ics_reasm_stale(b, p, now, timeout)))
			return;
		/*
		 * The fragments we drop were acknowledged: the sender must not
		 * go on in this session. Forget it (which flushes us with
		 * ICS_REASM_ALL); its next frame gets a RESET, and it resends
		 * the incomplete messages in a new one.
		 */
		u32 sess = p->link.rx_sess;

		__ics_link_rx_reset(p, false);
		p->link.rx_refuse = sess;
		return;
	}
	list_for_each_entry_safe(r, tmp, &p->reasm, list) {
		ics_reasm_free(b, p, r);
		ics_count(b->in, ICS_STAT_REASM_TIMEOUT);
	}
}

void ics_reasm_flush(struct ics_bind *b, struct ics_peer *p, enum ics_reasm_flush how)
{
	spin_lock_bh(&p->lock);
	__ics_reasm_flush(b, p, how);
	spin_unlock_bh(&p->lock);
}
