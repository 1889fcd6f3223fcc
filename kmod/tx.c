// SPDX-License-Identifier: GPL-2.0
/*
 * Frames: building one (header, payload room, CRC32C) and handing it to the
 * NIC. The link (link_tx.c) decides what to send; heartbeats (member.c
 * builds their payload), acks and resets are single unnumbered frames
 * built here too.
 *
 * Callers hold rcu_read_lock() or otherwise keep the binding alive (timers
 * are stopped before it is freed, see ics_unbind()).
 */
#include <linux/if_ether.h>
#include <linux/pkt_sched.h>

#include "ics.h"

/*
 * Header for @n payload bytes, with linear room for @room of them (@n, or 0
 * for a payload in page fragments), which the caller adds.
 */
struct sk_buff *ics_frame_alloc(struct ics_bind *b, const struct ics_hdr_args *a, u32 n,
				u32 room, gfp_t gfp)
{
	struct net_device *dev = b->dev;
	struct ics_wire_hdr *h;
	struct sk_buff *skb;

	skb = alloc_skb(LL_RESERVED_SPACE(dev) + ICS_HDR_LEN + room + dev->needed_tailroom, gfp);
	if (!skb) {
		ics_count(b->in, ICS_STAT_TX_ERRORS);
		return NULL;
	}
	skb_reserve(skb, LL_RESERVED_SPACE(dev));
	skb_reset_network_header(skb);
	h = skb_put_zero(skb, ICS_HDR_LEN);
	h->version = ICS_WIRE_VERSION;
	h->type = a->type;
	h->flags = a->flags;
	h->channel = a->channel;
	h->cluster_id = htonl(b->cluster_id);
	h->src_node = b->node_id;
	h->dst_node = a->dst;
	h->frag_len = htons(n);
	h->sess = htonl(a->sess);
	h->seq = htonl(a->seq);
	h->ack_sess = htonl(a->ack_sess);
	h->ack = htonl(a->ack);
	h->msg_id = htonl(a->msg_id);
	h->msg_len = htonl(a->msg_len);
	h->frag_off = htonl(a->off);
	h->incarnation = htonl(b->incarnation);
	h->dst_inc = a->dst == ICS_NODE_BROADCAST ? 0 : htonl(a->dst_inc);
	put_unaligned_be64(b->salt, h->salt);
	return skb;
}

/*
 * Seal (a tag if we sign, auth.c; CRC32C over the source address, header
 * and payload; the header linear, the payload linear or in page
 * fragments) and send. The source address is read once, so that the tag,
 * the CRC and the Ethernet header agree while it changes. Consumes @skb.
 * @prio is an skb priority (TC_PRIO_*), so that a priority qdisc on the
 * NIC keeps urgent frames ahead of bulk ones too.
 */
int ics_frame_xmit(struct ics_bind *b, struct sk_buff *skb, const u8 *addr, u32 prio)
{
	struct ics_wire_hdr *h = (struct ics_wire_hdr *)skb_network_header(skb);
	unsigned int len = skb->len;
	u8 src[ETH_ALEN] __aligned(2);
	int err;

	/* unlocked: it may tear while the address changes, but all three agree */
	ether_addr_copy(src, b->dev->dev_addr);
	h->check = 0;
	err = ics_auth_sign(b, skb, src);
	if (err) {
		kfree_skb(skb);
		ics_count(b->in, ICS_STAT_TX_AUTH_ERRORS);
		ics_count(b->in, ICS_STAT_TX_ERRORS);
		return err;
	}
	h->check = htonl(ics_frame_crc(skb, src, len - ICS_HDR_LEN));
	skb->dev = b->dev;
	skb->protocol = htons(ICS_ETH_P);
	skb->priority = prio;
	err = dev_hard_header(skb, b->dev, ICS_ETH_P, addr, src, len);
	if (err < 0) {
		kfree_skb(skb);
		err = -EINVAL;
	} else {
		/* net_xmit_eval() evaluates its argument twice */
		err = dev_queue_xmit(skb);
		err = net_xmit_eval(err);
	}
	if (err) {
		ics_count(b->in, ICS_STAT_TX_ERRORS);
		return err < 0 ? err : -ENOBUFS;
	}
	ics_stat_inc(b->in->stats->ctr[ICS_STAT_TX_FRAMES]);
	ics_stat_add(b->in->stats->ctr[ICS_STAT_TX_BYTES], len);
	return 0;
}

/*
 * The largest frame (header included) both ends of the link take now:
 * never more than ETH_MAX_MTU, as frame lengths are 16 bits (a dummy
 * device takes any MTU).
 */
u32 ics_link_mtu(const struct ics_peer *p)
{
	u32 mtu = READ_ONCE(p->b->dev->mtu), peer = READ_ONCE(p->link.peer_mtu);

	if (peer && peer < mtu)
		mtu = peer;
	return clamp_t(u32, mtu, ICS_MIN_MTU, ETH_MAX_MTU);
}

/*
 * Send heartbeat @h (member.c built it) to @node, incarnation @dst_inc, at
 * @to (NULL: the MAC we know it at), or broadcast.
 */
void ics_hello_xmit(struct ics_bind *b, u8 node, u32 dst_inc, const u8 *to,
		    const struct ics_wire_hello *h, gfp_t gfp)
{
	struct ics_hdr_args a = {
		.type = ICS_FT_HELLO,
		.channel = ICS_CH_CNX,
		.dst = node,
		.dst_inc = dst_inc,
		.msg_len = ICS_HELLO_LEN,
	};
	u8 addr[ETH_ALEN] __aligned(2);	/* ether_addr_copy() */
	struct ics_peer *p;
	struct sk_buff *skb;

	if (node == ICS_NODE_BROADCAST) {
		eth_broadcast_addr(addr);
	} else if (to) {
		ether_addr_copy(addr, to);
	} else {
		rcu_read_lock();
		p = rcu_dereference(b->peers[node]);
		if (p)
			ether_addr_copy(addr, p->addr);
		rcu_read_unlock();
		if (!p)
			return;
	}
	skb = ics_frame_alloc(b, &a, ICS_HELLO_LEN, ICS_HELLO_LEN, gfp);
	if (!skb)
		return;
	skb_put_data(skb, h, ICS_HELLO_LEN);
	if (!ics_frame_xmit(b, skb, addr, TC_PRIO_CONTROL)) {
		ics_count(b->in, ICS_STAT_HELLO_TX);
		ics_count_dir(&b->in->stats->chan[ICS_CH_CNX].tx, ICS_HELLO_LEN);
	}
}

/* Tell @node (incarnation @dst_inc) that we hold no state for its session @sess. */
void ics_reset_send(struct ics_bind *b, u8 node, const u8 *addr, u32 dst_inc, u32 sess)
{
	struct ics_hdr_args a = {
		.type = ICS_FT_RESET,
		.channel = ICS_CH_CNX,
		.dst = node,
		.dst_inc = dst_inc,
		.sess = sess,
	};
	struct sk_buff *skb = ics_frame_alloc(b, &a, 0, 0, GFP_ATOMIC);

	if (skb && !ics_frame_xmit(b, skb, addr, TC_PRIO_CONTROL))
		ics_count(b->in, ICS_STAT_TX_RESETS);
}
