// SPDX-License-Identifier: GPL-2.0
/*
 * Hello: how members learn each other's MAC. A binding broadcasts a hello at
 * bind and every hello_ms; a node heard for the first time (or with a new
 * incarnation) is answered at once with a unicast hello, so two members know
 * each other one round trip after the second one binds. Hellos are messages
 * on the CNX channel and count in its statistics. The membership protocol
 * (heartbeat, failure detection) grows out of this.
 */
#include "ics.h"

static int ics_fill_hello(const struct ics_txmsg *m, void *to, u32 off, u32 n)
{
	return ics_fill_buf(m, to, off, n);
}

void ics_hello_send(struct ics_bind *b, u8 node, u32 flags, gfp_t gfp)
{
	struct ics_wire_hello hello = {
		.incarnation = htonl(b->incarnation),
		.mtu = htonl(READ_ONCE(b->dev->mtu)),
		.hello_ms = htonl(ics_hello_ms),
		.flags = htonl(flags),
	};
	struct ics_txmsg m = {
		.node = node,
		.channel = ICS_CH_CNX,
		.type = ICS_FT_HELLO,
		.len = sizeof(hello),
		.fill = ics_fill_hello,
		.data = &hello,
	};

	if (!ics_xmit(b->in, &m, gfp))
		ics_count(b->in, ICS_STAT_HELLO_TX);
}

void ics_hello_rcv(struct ics_bind *b, struct ics_peer *p, bool created, struct sk_buff *skb,
		   u32 frame_len)
{
	struct ics_wire_hello hello;
	bool fresh, restarted;
	u32 inc;

	if (skb_copy_bits(skb, 0, &hello, sizeof(hello))) {
		ics_count(b->in, ICS_STAT_RX_BAD_LEN);
		kfree_skb(skb);
		return;
	}
	ics_count_rx_frame(b->in, frame_len);
	ics_count(b->in, ICS_STAT_HELLO_RX);
	ics_count_dir(&b->in->stats->chan[ICS_CH_CNX].rx, sizeof(hello));
	consume_skb(skb);

	/*
	 * Incarnation 0 means "no hello yet" (a peer can be learned from a data
	 * frame first); bind never picks 0.
	 */
	inc = ntohl(hello.incarnation);
	spin_lock(&p->lock);
	restarted = p->incarnation && p->incarnation != inc;
	fresh = created || p->incarnation != inc;
	p->incarnation = inc;
	spin_unlock(&p->lock);

	/* A restarted peer's partial messages will never complete. */
	if (restarted)
		ics_reasm_flush(b, p, ICS_REASM_ALL);
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
