// SPDX-License-Identifier: GPL-2.0
/*
 * Receiving: the CRC32C first, then every field of a frame is checked before
 * anything is believed; a frame that fails a check is dropped and counted
 * under that check's ICS_STAT_RX_BAD_* counter. Then acknowledgements go to
 * the send side of the link (link_tx.c), data to its receive side
 * (link_rx.c). Runs in softirq context under rcu_read_lock(),
 * on any CPU; the binding stays alive until dev_remove_pack() has waited for
 * us (see ics_unbind()).
 */
#include <linux/if_ether.h>

#include "ics.h"

static enum ics_stat ics_check(const struct ics_bind *b, const struct ics_wire_hdr *h,
			       unsigned int payload)
{
	u32 msg_len = ntohl(h->msg_len), off = ntohl(h->frag_off);
	u16 frag_len = ntohs(h->frag_len);

	if (h->version != ICS_WIRE_VERSION)
		return ICS_STAT_RX_BAD_VERSION;
	if (ntohl(h->cluster_id) != b->cluster_id)
		return ICS_STAT_RX_BAD_CLUSTER;
	if (h->type < ICS_FT_DATA || h->type > ICS_FT_RESET || (h->flags & ~ICS_WF_ALL) ||
	    (h->flags && h->type != ICS_FT_DATA))
		return ICS_STAT_RX_BAD_TYPE;
	if (h->channel >= ICS_CHANNELS)
		return ICS_STAT_RX_BAD_CHANNEL;
	if (h->src_node < 1 || h->src_node > ICS_MAX_NODES)
		return ICS_STAT_RX_BAD_NODE;
	if (h->dst_node != b->node_id &&
	    !(h->dst_node == ICS_NODE_BROADCAST && h->type == ICS_FT_HELLO))
		return ICS_STAT_RX_BAD_NODE;
	if (frag_len > payload || msg_len > ICS_MSG_MAX)
		return ICS_STAT_RX_BAD_LEN;
	if ((u64)off + frag_len > msg_len || (frag_len == 0 && msg_len != 0))
		return ICS_STAT_RX_BAD_FRAG;
	/*
	 * A sender cuts full frames but the last: at least what the least MTU
	 * carries. Tiny fragments would make a message's reassembly cost its
	 * length many times over (skb overhead per fragment).
	 */
	if (off + frag_len < msg_len && frag_len < ICS_MIN_MTU - ICS_HDR_LEN)
		return ICS_STAT_RX_BAD_FRAG;
	switch (h->type) {
	case ICS_FT_DATA:
		if (!h->sess || !h->seq)
			return ICS_STAT_RX_BAD_SESSION;
		if ((h->flags & ICS_WF_BUNDLE) && (off || frag_len != msg_len))
			return ICS_STAT_RX_BAD_FRAG;
		break;
	case ICS_FT_HELLO:
		if (h->channel != ICS_CH_CNX)
			return ICS_STAT_RX_BAD_CHANNEL;
		if (msg_len != ICS_HELLO_LEN || frag_len != msg_len)
			return ICS_STAT_RX_BAD_LEN;
		break;
	case ICS_FT_ACK:
		/* the held channels' taken[] are checked against held later */
		if (h->channel != ICS_CH_CNX)
			return ICS_STAT_RX_BAD_CHANNEL;
		if (msg_len < ICS_ACK_LEN || msg_len > ICS_ACK_LEN + 4 * ICS_CHANNELS ||
		    (msg_len - ICS_ACK_LEN) % 4 || frag_len != msg_len)
			return ICS_STAT_RX_BAD_LEN;
		break;
	case ICS_FT_RESET:
		if (msg_len)
			return ICS_STAT_RX_BAD_LEN;
		break;
	}
	/* Made for this binding of ours (a unicast), or for anyone (a broadcast)? */
	if (ntohl(h->dst_inc) != (h->dst_node == ICS_NODE_BROADCAST ? 0 : b->incarnation))
		return ICS_STAT_RX_BAD_SESSION;
	if (h->src_node == b->node_id)
		return ICS_STAT_RX_NODE_CONFLICT;	/* someone else uses our id */
	return 0;
}

/*
 * Do the records of the bundle @skb (header still on) tile its @len payload
 * bytes exactly, at least two of them, each with flags and reserved 0?
 * Then link_rx.c takes them apart without checking again.
 */
static bool ics_bundle_ok(const struct sk_buff *skb, u32 len)
{
	struct ics_wire_brec r;
	u32 off = 0, n = 0;

	while (off < len) {
		if (len - off < sizeof(r) ||
		    skb_copy_bits(skb, ICS_HDR_LEN + off, &r, sizeof(r)) ||
		    r.flags || r.reserved)
			return false;
		off += sizeof(r) + ntohs(r.len);
		n++;
	}
	return off == len && n >= 2;
}

/*
 * Message @msg_id of @len bytes on @channel is received: count it, and
 * remember it; false if it was already (resent after a session restart,
 * but delivered before: once only). Under peer->lock, in order.
 */
bool ics_deliver_note(struct ics_peer *p, u8 channel, u32 msg_id, u32 len)
{
	struct ics_net *in = p->b->in;
	struct ics_chan_stats __percpu *cs = &in->stats->chan[channel];
	struct ics_link *l = &p->link;

	lockdep_assert_held(&p->lock);
	if ((l->rx_last_valid & BIT(channel)) && !ics_before(l->rx_last_msg[channel], msg_id)) {
		ics_count(in, ICS_STAT_RX_DUP_MSGS);
		return false;
	}
	l->rx_last_valid |= BIT(channel);
	l->rx_last_msg[channel] = msg_id;

	ics_count_dir(&cs->rx, len);
	ics_count_node(&p->rx_chans->ch[channel], len);
	return true;
}

/* Called under peer->lock, in order (link_rx.c); consumes @skb. */
void ics_deliver(struct ics_peer *p, u8 channel, u32 msg_id, struct sk_buff *skb)
{
	if (!ics_deliver_note(p, channel, msg_id, skb->len)) {
		consume_skb(skb);
		return;
	}
	/* After the messages held before it, or if its handler (or the stand-in) refuses it. */
	if (!skb_queue_empty(&p->link.held[channel]) || ics_offer(p, channel, skb))
		ics_hold(p, channel, msg_id, skb);
}

/*
 * Give @skb to @channel's handler, or count it unclaimed if there is none;
 * the stand-in for a handler that left (flow.c) refuses it. Under
 * rcu_read_lock() and @p's lock. 0: consumed; -EAGAIN: refused, it is
 * still ours.
 */
int ics_offer(struct ics_peer *p, u8 channel, struct sk_buff *skb)
{
	struct ics_net *in = p->b->in;
	struct ics_handler *h;
	int resumes, ret;

	resumes = atomic_read(&in->resumes[channel]);
	smp_rmb();	/* a resume seen, its handler seen: ics_handler_came() */
	h = rcu_dereference(in->handlers[channel]);
	if (!h) {
		ics_stat_inc(in->stats->chan[channel].rx_unclaimed);
		consume_skb(skb);
		return 0;
	}
	if (h == &ics_waiting) {
		ics_pause_refused(in, channel, resumes, true);
		return -EAGAIN;
	}
	ret = h->rcv(h, in->net, p->node_id, channel, skb);
	if (!ret)
		return 0;
	WARN_ONCE(ret != -EAGAIN, "ics: channel %u handler returned %d\n", channel, ret);
	/* A refusal pauses the channel, unless the handler resumed since. */
	ics_pause_refused(in, channel, resumes, false);
	return -EAGAIN;
}

/*
 * The taken[] of the ACK @skb (header pulled) by channel, for the channels
 * in w->held | w->told: false unless there is exactly one for each.
 */
static bool ics_ack_taken(const struct sk_buff *skb, const struct ics_wire_ack *w,
			  u32 *taken)
{
	unsigned long held = ntohs(w->held) | ntohs(w->told);
	u32 off = ICS_ACK_LEN;
	__be32 v;
	int ch;

	if (skb->len != ICS_ACK_LEN + 4 * hweight16(held))
		return false;
	for_each_set_bit(ch, &held, ICS_CHANNELS) {
		if (skb_copy_bits(skb, off, &v, sizeof(v)))
			return false;
		taken[ch] = ntohl(v);
		off += sizeof(v);
	}
	return true;
}

/* CRC32C of source address, header (check taken as 0) and payload. */
static bool ics_check_ok(struct sk_buff *skb, u16 frag_len)
{
	const struct ics_wire_hdr *h = (const struct ics_wire_hdr *)skb->data;

	return ics_frame_crc(skb, eth_hdr(skb)->h_source, frag_len) == ntohl(h->check);
}

static void ics_count_crc_error(struct ics_bind *b, struct sk_buff *skb)
{
	const struct ics_wire_hdr *h = (const struct ics_wire_hdr *)skb->data;
	struct ics_peer *p;

	/* Nothing in the frame is trusted; a known peer's MAC is. */
	if (h->src_node < 1 || h->src_node > ICS_MAX_NODES)
		return;
	p = rcu_dereference(b->peers[h->src_node]);
	if (p && ether_addr_equal(p->addr, eth_hdr(skb)->h_source)) {
		spin_lock(&p->lock);
		p->link.crc_errors++;
		spin_unlock(&p->lock);
	}
}

int ics_rcv(struct sk_buff *skb, struct net_device *dev, struct packet_type *pt,
	    struct net_device *orig_dev)
{
	struct ics_bind *b = container_of(pt, struct ics_bind, pt);
	struct ics_net *in = b->in;
	const struct ics_wire_hdr *h;
	struct ics_wire_ack ackbuf;
	const struct ics_wire_ack *w = NULL;
	u32 taken[ICS_CHANNELS];
	u32 sess, seq, ack_sess, ack, inc;
	struct ics_peer *p;
	u64 salt;
	enum ics_stat bad;
	bool checked = false;
	u16 frag_len;
	u8 type;

	if (skb->pkt_type == PACKET_OTHERHOST || skb->pkt_type == PACKET_LOOPBACK)
		goto drop;
	/* From our own address: our receive path's marker (member.c)? */
	if (unlikely(ether_addr_equal(eth_hdr(skb)->h_source, b->dev->dev_addr)) &&
	    ics_rx_marker(b, skb))
		return NET_RX_SUCCESS;
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb)
		return NET_RX_DROP;
	/*
	 * A frame from a local packet socket still charges that socket; we
	 * may hold it (reassembly, a handler's queue) and merge its truesize
	 * into another skb, so it must belong to nobody from here on.
	 */
	skb_orphan(skb);

	if (!pskb_may_pull(skb, ICS_HDR_LEN)) {
		bad = ICS_STAT_RX_BAD_LEN;
		goto bad;
	}
	h = (const struct ics_wire_hdr *)skb->data;
	frag_len = ntohs(h->frag_len);
	if (frag_len > skb->len - ICS_HDR_LEN) {
		bad = ICS_STAT_RX_BAD_LEN;
		goto bad;
	}
	/*
	 * The checksum first: no other field means anything before it holds.
	 * The payload stays where the NIC put it (page fragments are read in
	 * place): the only copy on receive is the reader's.
	 */
	if (!ics_check_ok(skb, frag_len)) {
		ics_count_crc_error(b, skb);
		bad = ICS_STAT_RX_BAD_CHECK;
		goto bad;
	}
	bad = ics_check(b, h, skb->len - ICS_HDR_LEN);
	/* Then the tag: what a frame we must not believe says changes nothing. */
	if (!bad || bad == ICS_STAT_RX_NODE_CONFLICT) {
		enum ics_stat a = ics_auth_check(b, skb, frag_len, &checked);

		if (a) {
			net_info_ratelimited("%s: frame from %pM (node %u): %s\n", b->dev->name,
					     eth_hdr(skb)->h_source, h->src_node,
					     a == ICS_STAT_RX_NO_KEY ? "unsigned or unknown key" :
					     "bad authentication tag");
			bad = a;
			goto bad;
		}
	}
	/*
	 * A signed frame of ours that came back (a loop, a replay): of this
	 * binding, or of an earlier one (an older incarnation) from our MAC.
	 * Not a conflict: the tag covers the source MAC, so another station
	 * given our id signs with its own; a clone of us (our MAC too) bound
	 * after us has a newer incarnation, and stays a conflict.
	 */
	if (bad == ICS_STAT_RX_NODE_CONFLICT && checked && h->src_node == b->node_id &&
	    ((ntohl(h->incarnation) == b->incarnation &&
	      get_unaligned_be64(h->salt) == b->salt) ||
	     (ics_before(ntohl(h->incarnation), b->incarnation) &&
	      ether_addr_equal(eth_hdr(skb)->h_source, b->dev->dev_addr)))) {
		bad = ICS_STAT_RX_REPLAY;
		goto bad;
	}
	if (bad == ICS_STAT_RX_NODE_CONFLICT) {
		ics_member_conflict(b, NULL, h->src_node, eth_hdr(skb)->h_source);
		goto drop;
	}
	if (!bad && h->type == ICS_FT_DATA && (h->flags & ICS_WF_BUNDLE) &&
	    !ics_bundle_ok(skb, frag_len))
		bad = ICS_STAT_RX_BAD_FRAG;
	if (bad)
		goto bad;

	type = h->type;
	sess = ntohl(h->sess);
	seq = ntohl(h->seq);
	ack_sess = ntohl(h->ack_sess);
	ack = ntohl(h->ack);
	inc = ntohl(h->incarnation);
	salt = get_unaligned_be64(h->salt);
	if (type == ICS_FT_DATA) {
		struct ics_frag *f = &ICS_RXCB(skb)->f;

		f->frame_len = ICS_HDR_LEN + frag_len;
		f->msg_id = ntohl(h->msg_id);
		f->msg_len = ntohl(h->msg_len);
		f->off = ntohl(h->frag_off);
		f->channel = h->channel;
		f->bundle = h->flags & ICS_WF_BUNDLE;
		ICS_RXCB(skb)->ackreq = h->flags & ICS_WF_ACKREQ;
	}

	/* Answers go to the source: it must be one station's. */
	if (!is_valid_ether_addr(eth_hdr(skb)->h_source)) {
		bad = ICS_STAT_RX_BAD_NODE;
		goto bad;
	}
	p = ics_peer_lookup(b, h->src_node, eth_hdr(skb)->h_source);
	if (!p)
		goto drop;
	if (checked) {
		bad = ics_auth_fresh(p, h);
		if (bad)
			goto bad;
	}

	/*
	 * Ethernet pads short frames: the payload is frag_len, not the rest.
	 * A checksum the NIC computed (CHECKSUM_COMPLETE) covered what we cut
	 * off: a client that hands the payload on must not trust it.
	 */
	__skb_pull(skb, ICS_HDR_LEN);
	skb->ip_summed = CHECKSUM_NONE;
	if (pskb_trim_rcsum(skb, frag_len))
		goto drop;

	/* Heartbeats make the view (member.c): incarnations, restarts, states. */
	if (type == ICS_FT_HELLO) {
		ics_hello_rcv(b, p, eth_hdr(skb)->h_source, salt, skb, ICS_HDR_LEN + frag_len, inc);
		return NET_RX_SUCCESS;
	}
	/*
	 * Anything else only from a node we hold alive (heard, not down or
	 * left), at the MAC and of the incarnation we know: an older
	 * incarnation's frames are leftovers, a newer one or a new MAC
	 * announces itself with heartbeats first (member.c, "claims").
	 * link_rx.c checks state and incarnation again under the peer's lock.
	 */
	if (!ics_live(READ_ONCE(p->state)) || !ether_addr_equal(p->addr, eth_hdr(skb)->h_source)) {
		bad = ICS_STAT_RX_PEER_DOWN;
		goto bad;
	}
	if (inc != READ_ONCE(p->incarnation)) {
		bad = ICS_STAT_RX_BAD_SESSION;
		goto bad;
	}
	ics_heard(p, ktime_get_ns());	/* any frame is a sign of life */

	if (type == ICS_FT_ACK) {
		if (skb_copy_bits(skb, 0, &ackbuf, sizeof(ackbuf)))
			goto drop;
		w = &ackbuf;
		if (!ics_ack_taken(skb, w, taken)) {
			bad = ICS_STAT_RX_BAD_LEN;
			goto bad;
		}
	}
	if (ack_sess || w)	/* an ACK without one still has a pause word */
		ics_link_ack_rcv(p, ack_sess, ack, w, w ? taken : NULL);

	switch (type) {
	case ICS_FT_DATA:
		ics_link_data_rcv(p, skb, inc, sess, seq);
		break;
	case ICS_FT_ACK:
		ics_count_rx_frame(in, ICS_HDR_LEN + frag_len);
		ics_count(in, ICS_STAT_RX_ACKS);
		consume_skb(skb);
		break;
	case ICS_FT_RESET:
		ics_count_rx_frame(in, ICS_HDR_LEN);
		ics_count(in, ICS_STAT_RX_RESETS);
		ics_link_reset_rcv(p, sess);
		consume_skb(skb);
		break;
	}
	return NET_RX_SUCCESS;

bad:
	ics_count(in, bad);
drop:
	kfree_skb(skb);
	return NET_RX_DROP;
}
