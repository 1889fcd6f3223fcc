// SPDX-License-Identifier: GPL-2.0
/*
 * Sending: a message is cut into frames of at most MTU - header bytes, each
 * carrying msg_id, msg_len and its offset, and handed to the NIC in order.
 *
 * The binding is looked up under RCU once per frame and never held across a
 * sleep, so an unbind (or the NIC going away) mid-message is noticed at the
 * next frame: the message fails with ENETDOWN and the device is never pinned
 * by a sender. bind->seq tells a new binding from the one we started on.
 */
#include <linux/if_ether.h>
#include <linux/string.h>

#include "ics.h"

int ics_fill_buf(const struct ics_txmsg *m, void *to, u32 off, u32 n)
{
	memcpy(to, (const u8 *)m->data + off, n);
	return 0;
}

static void ics_count_tx(struct ics_net *in, const struct ics_txmsg *m)
{
	ics_count_dir(&in->stats->chan[m->channel].tx, m->len);
	if (m->type == ICS_FT_DATA) {
		this_cpu_inc(in->stats->node[m->node].tx_msgs);
		this_cpu_add(in->stats->node[m->node].tx_bytes, m->len);
	}
}

static void ics_put_hdr(struct sk_buff *skb, const struct ics_txmsg *m, u32 cluster_id,
			u32 off, u32 n)
{
	struct ics_wire_hdr *h = skb_put_zero(skb, ICS_HDR_LEN);

	h->version = ICS_WIRE_VERSION;
	h->type = m->type;
	h->flags = m->flags;
	h->channel = m->channel;
	h->cluster_id = htonl(cluster_id);
	h->src_node = m->src;
	h->dst_node = m->node;
	h->frag_len = htons(n);
	h->msg_id = htonl(m->msg_id);
	h->msg_len = htonl(m->len);
	h->frag_off = htonl(off);
}

/*
 * Resolve the destination: fills @addr, m->src and m->msg_id, returns the
 * binding's seq or a negative errno.
 */
static long ics_xmit_start(struct ics_net *in, struct ics_txmsg *m, u8 *addr)
{
	struct ics_bind *b;
	struct ics_peer *p;
	long ret;

	rcu_read_lock();
	b = rcu_dereference(in->bind);
	if (!b) {
		ret = -ENOTCONN;
	} else if (m->node == b->node_id) {
		ret = -EINVAL;
	} else if (m->node == ICS_NODE_BROADCAST) {
		eth_broadcast_addr(addr);
		m->msg_id = atomic_inc_return(&b->bcast_msg_id);
		ret = b->seq;
	} else {
		p = rcu_dereference(b->peers[m->node]);
		if (p) {
			ether_addr_copy(addr, p->addr);
			m->msg_id = atomic_inc_return(&p->tx_msg_id);
			ret = b->seq;
		} else {
			ret = -EHOSTUNREACH;
		}
	}
	if (b)
		m->src = b->node_id;
	rcu_read_unlock();
	return ret;
}

int ics_xmit(struct ics_net *in, struct ics_txmsg *m, gfp_t gfp)
{
	u8 addr[ETH_ALEN];
	struct ics_bind *b;
	struct sk_buff *skb;
	u32 off = 0, n, mtu, cluster_id;
	int hlen, tlen, len, err;
	long seq;

	seq = ics_xmit_start(in, m, addr);
	if (seq < 0)
		return seq;

	do {
		rcu_read_lock();
		b = rcu_dereference(in->bind);
		if (!b || b->seq != seq) {
			rcu_read_unlock();
			return -ENETDOWN;
		}
		mtu = READ_ONCE(b->dev->mtu);
		hlen = LL_RESERVED_SPACE(b->dev);
		tlen = b->dev->needed_tailroom;
		cluster_id = b->cluster_id;
		rcu_read_unlock();

		if (mtu < ICS_MIN_MTU)
			return -EMSGSIZE;
		n = min3(m->len - off, mtu - (u32)ICS_HDR_LEN, (u32)U16_MAX);

		skb = alloc_skb(hlen + ICS_HDR_LEN + n + tlen, gfp);
		if (!skb) {
			ics_count(in, ICS_STAT_TX_ERRORS);
			return -ENOBUFS;
		}
		skb_reserve(skb, hlen);
		skb_reset_network_header(skb);
		ics_put_hdr(skb, m, cluster_id, off, n);
		if (n) {
			err = m->fill(m, skb_put(skb, n), off, n);
			if (err) {
				kfree_skb(skb);
				return err;
			}
		}
		len = skb->len;

		rcu_read_lock();
		b = rcu_dereference(in->bind);
		if (!b || b->seq != seq) {
			rcu_read_unlock();
			kfree_skb(skb);
			return -ENETDOWN;
		}
		skb->dev = b->dev;
		skb->protocol = htons(ICS_ETH_P);
		err = dev_hard_header(skb, b->dev, ICS_ETH_P, addr, NULL, skb->len);
		if (err >= 0) {
			/* net_xmit_eval() evaluates its argument twice */
			err = dev_queue_xmit(skb);
			err = net_xmit_eval(err);
		} else {
			kfree_skb(skb);
		}
		rcu_read_unlock();
		if (err) {
			ics_count(in, ICS_STAT_TX_ERRORS);
			return err < 0 ? err : -ENOBUFS;
		}
		this_cpu_inc(in->stats->ctr[ICS_STAT_TX_FRAMES]);
		this_cpu_add(in->stats->ctr[ICS_STAT_TX_BYTES], len);

		off += n;
		if (off < m->len && gfpflags_allow_blocking(gfp))
			cond_resched();
	} while (off < m->len);

	ics_count_tx(in, m);
	return 0;
}
