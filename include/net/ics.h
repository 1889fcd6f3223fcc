/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ics in-kernel API, for modules that send and receive on ics channels.
 * See Documentation/kernel-api.rst.
 */
#ifndef _NET_ICS_H
#define _NET_ICS_H

#include <linux/skbuff.h>
#include <linux/types.h>
#include <net/net_namespace.h>
#include <uapi/linux/ics.h>

/**
 * struct ics_handler - a receiver of one channel in one network namespace
 * @rcv: called for every whole message on the channel, in softirq context
 *	under rcu_read_lock(), possibly on several CPUs at once. @skb holds
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

int ics_register_handler(struct net *net, unsigned int channel, struct ics_handler *h);
void ics_unregister_handler(struct net *net, unsigned int channel, struct ics_handler *h);
int ics_send(struct net *net, u8 node, unsigned int channel, const void *data, size_t len,
	     gfp_t gfp);
u8 ics_node_id(struct net *net);

#endif /* _NET_ICS_H */
