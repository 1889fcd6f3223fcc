// SPDX-License-Identifier: GPL-2.0
/*
 * ics_echo: a test client of the ics in-kernel API. In every network
 * namespace it registers a handler on channel `rx_channel` and sends every
 * message it receives back to its sender, unchanged, on `tx_channel` (a
 * different channel, so two echo members do not ping-pong forever). Replies
 * are sent from a workqueue with GFP_KERNEL, as a client that may sleep.
 * Flow control (ics_channel_pause()): past `pause_at` messages waiting for
 * the worker it pauses rx_channel, and resumes it once the worker brought
 * them down to a quarter of that; `hold` stops the worker (it looks again
 * every 20 ms), as a client that falls behind. Each pause also asks, with
 * the same handler, to pause tx_channel, where it is not registered: ics
 * must ignore that call. Past `refuse_at` messages waiting it refuses more
 * (rcv() returns -EAGAIN) without pausing, which ics then does for it; it
 * resumes once the worker brought them down to a quarter of that, and ics
 * offers it what it held meanwhile.
 * It also listens to membership events (ics_register_notifier()) and logs
 * each, with what ics_member_state() and ics_has_quorum() say at the time:
 *   ics_echo: node N sees node M: OLD -> NEW (REASON), state now S, quorum Q
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <net/ics.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

static unsigned int rx_channel = ICS_CH_CLSM;
module_param(rx_channel, uint, 0444);
MODULE_PARM_DESC(rx_channel, "channel to receive on (default CLSM)");

static unsigned int tx_channel = ICS_CH_CFSR;
module_param(tx_channel, uint, 0444);
MODULE_PARM_DESC(tx_channel, "channel to echo on (default CFSR)");

static unsigned int pause_at;
module_param(pause_at, uint, 0644);
MODULE_PARM_DESC(pause_at, "pause rx_channel past this many messages queued (default 0: never)");

static unsigned int refuse_at;
module_param(refuse_at, uint, 0644);
MODULE_PARM_DESC(refuse_at,
		 "refuse messages past this many queued, without pausing (default 0: never)");

static bool hold;
module_param(hold, bool, 0644);
MODULE_PARM_DESC(hold, "hold received messages, do not echo them (default no)");

struct echo_net {
	struct ics_handler h;
	struct notifier_block nb;
	struct net *net;
	struct sk_buff_head queue;	/* received, waiting for the worker */
	struct delayed_work work;
	bool paused;			/* queue.lock */
	bool refused;			/* queue.lock: a message since the last resume */
};

static unsigned int echo_net_id;

/*
 * Pause past pause_at messages queued, resume at a quarter of it (and
 * whenever pause_at is 0). Under queue.lock, so that pauses and resumes
 * follow the queue in order; ics_channel_pause() may be called so.
 */
static void echo_flow(struct echo_net *en)
{
	unsigned int at = READ_ONCE(pause_at), n = skb_queue_len(&en->queue);

	lockdep_assert_held(&en->queue.lock);
	if (!en->paused && at && n > at) {
		en->paused = true;
		ics_channel_pause(en->net, rx_channel, &en->h, true);
		ics_channel_pause(en->net, tx_channel, &en->h, true);	/* ignored */
	} else if (en->paused && (!at || n <= at / 4)) {
		en->paused = false;
		ics_channel_pause(en->net, rx_channel, &en->h, false);
	}
	/* ics paused the channel when we refused: resume it once there is room */
	at = READ_ONCE(refuse_at);
	if (en->refused && n <= at / 4) {
		en->refused = false;
		ics_channel_pause(en->net, rx_channel, &en->h, false);
	}
}

static int echo_rcv(struct ics_handler *h, struct net *net, u8 src, unsigned int ch,
		    struct sk_buff *skb)
{
	struct echo_net *en = container_of(h, struct echo_net, h);
	unsigned int at = READ_ONCE(refuse_at);
	unsigned long flags;

	spin_lock_irqsave(&en->queue.lock, flags);
	if (at && skb_queue_len(&en->queue) >= at) {
		/* not now, and the skb untouched: ics holds it and pauses for us */
		en->refused = true;
		spin_unlock_irqrestore(&en->queue.lock, flags);
		return -EAGAIN;
	}
	*(u8 *)skb->cb = src;
	__skb_queue_tail(&en->queue, skb);
	echo_flow(en);
	spin_unlock_irqrestore(&en->queue.lock, flags);
	schedule_delayed_work(&en->work, 0);
	return 0;
}

static struct sk_buff *echo_next(struct echo_net *en)
{
	struct sk_buff *skb;

	spin_lock_irq(&en->queue.lock);
	skb = __skb_dequeue(&en->queue);
	echo_flow(en);
	spin_unlock_irq(&en->queue.lock);
	return skb;
}

static void echo_work(struct work_struct *work)
{
	struct echo_net *en = container_of(to_delayed_work(work), struct echo_net, work);
	struct sk_buff *skb;
	void *buf;
	int err;

	if (READ_ONCE(hold)) {
		schedule_delayed_work(&en->work, msecs_to_jiffies(20));
		return;
	}
	while ((skb = echo_next(en))) {
		buf = kvmalloc(skb->len ?: 1, GFP_KERNEL);
		err = -ENOMEM;
		if (buf && !skb_copy_bits(skb, 0, buf, skb->len))
			err = ics_send(en->net, *(u8 *)skb->cb, tx_channel, buf, skb->len,
				       GFP_KERNEL);
		if (err)
			pr_warn("echo of %u bytes to node %u failed: %d\n", skb->len,
				*(u8 *)skb->cb, err);
		kvfree(buf);
		consume_skb(skb);
		cond_resched();
	}
}

/* Process context, in the order ics saw the events: may sleep. */
static int echo_event(struct notifier_block *nb, unsigned long type, void *data)
{
	struct echo_net *en = container_of(nb, struct echo_net, nb);
	const struct ics_event *ev = data;

	might_sleep();
	if (type == ICS_EVENT_NODE)
		pr_info("node %u sees node %u: %u -> %u (reason %u), state now %d, quorum %d, gen %u\n",
			ics_node_id(en->net), ev->node, ev->old_state, ev->state, ev->reason,
			ics_member_state(en->net, ev->node), ics_has_quorum(en->net),
			ev->generation);
	else if (type == ICS_EVENT_QUORUM)
		pr_info("node %u: quorum %s (%u of %u votes, %u needed), gen %u\n",
			ics_node_id(en->net), ev->has_quorum ? "gained" : "lost",
			ev->current_votes, ev->expected_votes, ev->quorum, ev->generation);
	return NOTIFY_OK;
}

static int __net_init echo_net_init(struct net *net)
{
	struct echo_net *en = net_generic(net, echo_net_id);
	int err;

	en->net = net;
	en->h.rcv = echo_rcv;
	en->nb.notifier_call = echo_event;
	skb_queue_head_init(&en->queue);
	INIT_DELAYED_WORK(&en->work, echo_work);
	err = ics_register_notifier(net, &en->nb);
	if (err)
		return err;
	err = ics_register_handler(net, rx_channel, &en->h);
	if (err)
		ics_unregister_notifier(net, &en->nb);
	return err;
}

static void __net_exit echo_net_exit(struct net *net)
{
	struct echo_net *en = net_generic(net, echo_net_id);

	ics_unregister_notifier(net, &en->nb);
	ics_unregister_handler(net, rx_channel, &en->h);	/* no rcv after this */
	cancel_delayed_work_sync(&en->work);
	skb_queue_purge(&en->queue);
}

static struct pernet_operations echo_net_ops = {
	.init = echo_net_init,
	.exit = echo_net_exit,
	.id = &echo_net_id,
	.size = sizeof(struct echo_net),
};

static int __init echo_init(void)
{
	if (rx_channel >= ICS_CHANNELS || tx_channel >= ICS_CHANNELS || rx_channel == tx_channel)
		return -EINVAL;
	return register_pernet_subsys(&echo_net_ops);
}

static void __exit echo_exit(void)
{
	unregister_pernet_subsys(&echo_net_ops);
}

module_init(echo_init);
module_exit(echo_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ics selftest client: echo a channel's messages on another channel");
