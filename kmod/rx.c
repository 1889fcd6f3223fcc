// SPDX-License-Identifier: GPL-2.0
/*
 * Receiving: every field of a frame is checked before anything is believed;
 * a frame that fails a check is dropped and counted under that check's
 * ICS_STAT_RX_BAD_* counter. Runs in softirq context under rcu_read_lock(),
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
	if ((h->type != ICS_FT_DATA && h->type != ICS_FT_HELLO) || (h->flags & ~ICS_WF_ALL))
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
	if (h->type == ICS_FT_HELLO) {
		if (h->channel != ICS_CH_CNX)
			return ICS_STAT_RX_BAD_CHANNEL;
		if (msg_len != ICS_HELLO_LEN || frag_len != msg_len)
			return ICS_STAT_RX_BAD_LEN;
	}
	if (h->src_node == b->node_id)
		return ICS_STAT_RX_NODE_CONFLICT;	/* someone else uses our id */
	return 0;
}

void ics_deliver(struct ics_net *in, u8 src, u8 channel, u8 flags, u32 msg_id,
		 struct sk_buff *skb)
{
	struct ics_chan_stats __percpu *cs = &in->stats->chan[channel];
	struct ics_handler *h;
	u32 len = skb->len;

	ics_count_dir(&cs->rx, len);
	this_cpu_inc(in->stats->node[src].rx_msgs);
	this_cpu_add(in->stats->node[src].rx_bytes, len);

	if (flags & ICS_WF_TESTPAT) {
		if (ics_pattern_check(skb, ics_pattern_seed(src, channel, msg_id, len)))
			this_cpu_inc(cs->rx_pattern_ok);
		else
			this_cpu_inc(cs->rx_pattern_bad);
	}

	h = rcu_dereference(in->handlers[channel]);
	if (h) {
		h->rcv(h, in->net, src, channel, skb);
	} else {
		this_cpu_inc(cs->rx_unclaimed);
		consume_skb(skb);
	}
}

int ics_rcv(struct sk_buff *skb, struct net_device *dev, struct packet_type *pt,
	    struct net_device *orig_dev)
{
	struct ics_bind *b = container_of(pt, struct ics_bind, pt);
	struct ics_net *in = b->in;
	const struct ics_wire_hdr *h;
	struct ics_frag f;
	struct ics_peer *p;
	enum ics_stat bad;
	u8 type, src;
	u16 frag_len;
	bool created;

	if (skb->pkt_type == PACKET_OTHERHOST || skb->pkt_type == PACKET_LOOPBACK)
		goto drop;
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
	bad = ics_check(b, h, skb->len - ICS_HDR_LEN);
	if (bad)
		goto bad;

	type = h->type;
	src = h->src_node;
	frag_len = ntohs(h->frag_len);
	f.frame_len = ICS_HDR_LEN + frag_len;
	f.msg_id = ntohl(h->msg_id);
	f.msg_len = ntohl(h->msg_len);
	f.off = ntohl(h->frag_off);
	f.channel = h->channel;
	f.flags = h->flags;

	/* Ethernet pads short frames: the payload is frag_len, not the rest. */
	__skb_pull(skb, ICS_HDR_LEN);
	if (pskb_trim_rcsum(skb, frag_len))
		goto drop;

	p = ics_peer_lookup(b, src, eth_hdr(skb)->h_source, &created);
	if (!p)
		goto drop;
	WRITE_ONCE(p->last_heard, jiffies);

	if (type == ICS_FT_HELLO) {
		ics_hello_rcv(b, p, created, skb, f.frame_len);
	} else if (frag_len == f.msg_len) {
		ics_count_rx_frame(in, f.frame_len);
		ics_deliver(in, src, f.channel, f.flags, f.msg_id, skb);
	} else {
		ics_reasm_rcv(b, p, skb, &f);
	}
	return NET_RX_SUCCESS;

bad:
	ics_count(in, bad);
drop:
	kfree_skb(skb);
	return NET_RX_DROP;
}
