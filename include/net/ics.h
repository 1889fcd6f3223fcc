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
#include <net/net_namespace.h>
#include <uapi/linux/ics.h>

/**
 * struct ics_handler - a receiver of one channel in one network namespace
 * @rcv: called for every whole message on the channel, in softirq context
 *	under rcu_read_lock() and the sending peer's lock: one message at a
 *	time per peer, in the order the peer sent them (different peers'
 *	messages may arrive on several CPUs at once). @skb holds
 *	exactly the message (skb->len bytes, possibly non-linear and with a
 *	frag_list: read it with skb_copy_bits() or skb_header_pointer()); the
 *	handler owns @skb and must free it. skb->cb is free for its use. It must
 *	not sleep; defer work to a workqueue.
 *
 * Embed it in your own structure and use container_of() in @rcv.
 */
struct ics_handler {
	void (*rcv)(struct ics_handler *h, struct net *net, u8 src_node,
		    unsigned int channel, struct sk_buff *skb);
};

/**
 * struct ics_send_args - how ics_send_msg() queues a message and reports it
 * @flags: ICS_SEND_NONBLOCK: fail with -EAGAIN instead of waiting when the
 *	link's or channel's queue is full
 * @timeout: jiffies to wait for queue room before -ETIMEDOUT; 0 means
 *	the default (10 s). Waiting needs a gfp that may sleep.
 * @done: optional; called exactly once when ics_send_msg() returned 0:
 *	with 0 once the peer has acknowledged every byte (it has delivered the
 *	message), or with -ETIMEDOUT (the link made no progress for
 *	link_timeout_ms), -ECONNRESET (the peer restarted) or -ENETDOWN (we
 *	unbound). A failed message may still have been delivered if only its
 *	acknowledgement was lost. Runs in softirq or process context (at
 *	unbind: under RTNL) with no ics lock held; it must not sleep.
 * @ctx: passed to @done
 */
struct ics_send_args {
	unsigned int flags;
	long timeout;
	void (*done)(void *ctx, int err);
	void *ctx;
};

#define ICS_SEND_NONBLOCK	0x1

int ics_register_handler(struct net *net, unsigned int channel, struct ics_handler *h);
void ics_unregister_handler(struct net *net, unsigned int channel, struct ics_handler *h);
int ics_send(struct net *net, u8 node, unsigned int channel, const void *data, size_t len,
	     gfp_t gfp);
int ics_send_msg(struct net *net, u8 node, unsigned int channel, const void *data, size_t len,
		 const struct ics_send_args *args, gfp_t gfp);
u8 ics_node_id(struct net *net);

#endif /* _NET_ICS_H */
