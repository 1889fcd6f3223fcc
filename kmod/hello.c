// SPDX-License-Identifier: GPL-2.0
/*
 * Hello: how members learn each other's MAC and MTU. A binding broadcasts a
 * hello at bind, every hello_ms and when its MTU changes; a node heard for
 * the first time (or with a new incarnation) is answered at once with a
 * unicast hello, so two members know each other one round trip after the
 * second one binds. Hellos are messages on the CNX channel and count in its
 * statistics; they are not numbered (the link carries data only). The
 * membership protocol (heartbeat, failure detection) grows out of this.
 */
#include "ics.h"

void ics_hello_rcv(struct ics_bind *b, struct ics_peer *p, bool fresh, struct sk_buff *skb,
		   u32 frame_len)
{
	struct ics_wire_hello hello;
	u32 mtu;

	if (skb_copy_bits(skb, 0, &hello, sizeof(hello))) {
		ics_count(b->in, ICS_STAT_RX_BAD_LEN);
		kfree_skb(skb);
		return;
	}
	ics_count_rx_frame(b->in, frame_len);
	ics_count(b->in, ICS_STAT_HELLO_RX);
	ics_count_dir(&b->in->stats->chan[ICS_CH_CNX].rx, sizeof(hello));
	consume_skb(skb);

	mtu = ntohl(hello.mtu);
	if (mtu >= ICS_MIN_MTU && mtu != READ_ONCE(p->link.peer_mtu)) {
		WRITE_ONCE(p->link.peer_mtu, mtu);
		ics_link_push(p);	/* frames in flight may be too big now */
	}
	if (fresh && !(ntohl(hello.flags) & ICS_HF_REPLY))
		ics_hello_send(b, p->node_id, ICS_HF_REPLY, GFP_ATOMIC);
}

void ics_timer(struct timer_list *t)
{
	struct ics_bind *b = from_timer(b, t, timer);
	struct ics_peer *p;
	int node;

	ics_hello_send(b, ICS_NODE_BROADCAST, 0, GFP_ATOMIC);

	rcu_read_lock();
	for (node = 1; node <= ICS_MAX_NODES; node++) {
		p = rcu_dereference(b->peers[node]);
		if (p && !list_empty_careful(&p->reasm))
			ics_reasm_flush(b, p, ICS_REASM_IDLE);
	}
	rcu_read_unlock();

	mod_timer(&b->timer, jiffies + msecs_to_jiffies(ics_hello_ms));
}
