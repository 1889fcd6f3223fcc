/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ics in-kernel API, for modules that send and receive on ics channels.
 * See Documentation/kernel-api.rst.
 */
#ifndef _NET_ICS_H
#define _NET_ICS_H

#include <linux/skbuff.h>
#include <linux/types.h>
#include <linux/gfp.h>
#include <linux/notifier.h>
#include <net/net_namespace.h>
#include <uapi/linux/ics.h>

/**
 * struct ics_handler - a receiver of one channel in one network namespace
 * @rcv: called for every whole message on the channel, in softirq context
 *	(or with bottom halves disabled) under rcu_read_lock() and the sending
 *	peer's lock: one message at a time per peer, in the order the peer sent
 *	them on the channel (different peers' messages may arrive on several
 *	CPUs at once; held messages, below, let other channels' pass).
 *	@skb holds exactly the message (skb->len bytes, possibly non-linear and
 *	with a frag_list: read it with skb_copy_bits() or skb_header_pointer()).
 *	It must not sleep; defer work to a workqueue. Returns 0 when the
 *	handler took @skb (it owns it, skb->cb included, and must free it), or
 *	-EAGAIN to refuse it for now: @skb stays ics's and must be left as it
 *	came (cb included), the channel is paused as by ics_channel_pause()
 *	(unless the handler paused or resumed it meanwhile), and ics holds
 *	this message and every later one from that peer on the channel until
 *	the handler resumes the channel; then it offers them again, in order,
 *	before anything newer. While any peer's messages are held, the
 *	channel stays paused for every peer, whatever the handler says: a
 *	handler must take them as it has room, not wait for another peer's.
 *	A sender's message is done only once a handler took it (or it
 *	arrived when no handler was registered: then it is counted as
 *	unclaimed; but for handler_wait_ms after a handler unregisters its
 *	channel stays paused, and what is held or arrives waits for the next
 *	handler). Messages held from a node stay held when it is declared
 *	down (it may not have declared us down, and still count on them):
 *	they may be offered after its down event.
 *
 * Embed it in your own structure and use container_of() in @rcv.
 */
struct ics_handler {
	int (*rcv)(struct ics_handler *h, struct net *net, u8 src_node,
		   unsigned int channel, struct sk_buff *skb);
};

/**
 * struct ics_send_args - how ics_send_msg() queues a message and reports it
 * @flags: ICS_SEND_NONBLOCK: fail with -EAGAIN instead of waiting when the
 *	link's or channel's queue is full
 * @timeout: jiffies to wait for queue room before -ETIMEDOUT; 0 means
 *	the default (10 s). Waiting needs a gfp that may sleep.
 * @done: optional; called exactly once when ics_send_msg() returned 0:
 *	with 0 once the peer's handler took the message (struct
 *	ics_handler), or with -ETIMEDOUT (the link made no progress for
 *	link_timeout_ms), -ECONNRESET (the peer restarted), -EHOSTDOWN (the
 *	peer went down or left) or -ENETDOWN (we unbound). A failed message
 *	may still have been delivered if only its acknowledgement was lost.
 *	Runs in softirq or process context (at unbind: under RTNL) with no
 *	ics lock held; it must not sleep.
 * @ctx: passed to @done
 * @owner: the module @done belongs to (THIS_MODULE): ics holds a reference
 *	on it from ics_send_msg() until @done has returned, so that the module
 *	cannot be unloaded while ics may still call it. Without it (NULL) the
 *	client must itself outlive every message it queued.
 */
struct ics_send_args {
	unsigned int flags;
	long timeout;
	void (*done)(void *ctx, int err);
	void *ctx;
	struct module *owner;
};

#define ICS_SEND_NONBLOCK	0x1

/**
 * struct ics_event - a membership event, as listeners get it
 * @type: enum ics_event_type (also the notifier's action)
 * @node: the node it is about (NODE, CONFLICT; BOUND, UNBOUND: our id)
 * @old_state: its state before (NODE), enum ics_member_state
 * @state: its state now (NODE)
 * @reason: why (NODE), enum ics_reason
 * @incarnation: its incarnation (NODE; BOUND: ours)
 * @silent_ms: time since its last frame when the event happened (NODE)
 * @addr: its MAC (NODE); the MAC claiming its id (CONFLICT)
 * @generation: the membership view this event made, or was seen in
 * @current_votes: votes present now, ours included
 * @expected_votes: expected votes now
 * @quorum: votes needed, (@expected_votes + 2) / 2
 * @has_quorum: @current_votes >= @quorum
 * @lost: events dropped before this one because the queue was full
 * @time_ns: CLOCK_MONOTONIC when it happened
 * @real_ns: CLOCK_REALTIME when it happened
 */
struct ics_event {
	u8 type;
	u8 node;
	u8 old_state;
	u8 state;
	u8 reason;
	bool has_quorum;
	u8 addr[6];
	u32 incarnation;
	u32 silent_ms;
	u32 generation;
	u32 current_votes;
	u32 expected_votes;
	u32 quorum;
	u32 lost;
	u64 time_ns;
	u64 real_ns;
};

int ics_register_handler(struct net *net, unsigned int channel, struct ics_handler *h);
void ics_unregister_handler(struct net *net, unsigned int channel, struct ics_handler *h);
int ics_send(struct net *net, u8 node, unsigned int channel, const void *data, size_t len,
	     gfp_t gfp);
int ics_send_msg(struct net *net, u8 node, unsigned int channel, const void *data, size_t len,
		 const struct ics_send_args *args, gfp_t gfp);
u8 ics_node_id(struct net *net);

/*
 * Flow control. A channel's handler that cannot keep up pauses its channel:
 * every peer then holds that channel's messages (they wait in its send
 * queue, whose limit blocks or refuses their senders) until the handler
 * resumes it; the frames already in flight still arrive: what the handler
 * cannot take then it refuses (-EAGAIN from @rcv), and ics holds it until
 * the channel is resumed (and the channel stays paused until what is held
 * is taken). Other channels go on. A message whose first
 * frames went already is finished. Only the channel's registered handler
 * @h may pause it (a call with another is ignored). Unregistering keeps
 * the channel paused for handler_wait_ms (unless it is 0): the messages
 * held wait for the next handler, whose registration resumes it; if none
 * comes, the channel resumes and they are counted unclaimed. Idempotent;
 * any context.
 */
void ics_channel_pause(struct net *net, unsigned int channel, struct ics_handler *h,
		       bool pause);

/*
 * Membership. A notifier registered on a netns's instance is called for every
 * membership event of that instance, in order, in process context (it may
 * sleep), with the event type as action and a const struct ics_event * as
 * data; it must be unregistered before the netns goes away (a pernet exit
 * method does it in time). ics_member_state() returns a node's enum
 * ics_member_state (ICS_MEMBER_UP for our own id), ICS_MEMBER_NONE for a
 * node never heard, or -ENOTCONN when the instance is not bound, -EINVAL
 * for an id out of range. Sends to a node that is down or left fail with
 * -EHOSTDOWN at once, and its messages in flight fail with -EHOSTDOWN when
 * it goes down.
 */
int ics_register_notifier(struct net *net, struct notifier_block *nb);
int ics_unregister_notifier(struct net *net, struct notifier_block *nb);
int ics_member_state(struct net *net, u8 node);
bool ics_has_quorum(struct net *net);

#endif /* _NET_ICS_H */
