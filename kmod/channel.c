// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel API (include/net/ics.h): receive handlers per channel and
 * netns, and sending. Handlers are published with RCU and called from the
 * receive path; unregistering waits until no call is in flight. Between
 * two handlers a channel may hold a stand-in, ics_waiting (flow.c).
 */
#include <linux/export.h>
#include <linux/rtnetlink.h>

#include "ics.h"

int ics_register_handler(struct net *net, unsigned int channel, struct ics_handler *h)
{
	struct ics_net *in = ics_net(net);
	struct ics_handler *old;
	int err = 0;

	if (channel >= ICS_CHANNELS || !h || !h->rcv)
		return -EINVAL;
	/* its calls count, pause channels and wake senders: all need these */
	if (ics_net_use(in))
		return -ENOMEM;
	mutex_lock(&in->reg_lock);
	old = rcu_dereference_protected(in->handlers[channel], lockdep_is_held(&in->reg_lock));
	if (old && old != &ics_waiting) {
		err = -EBUSY;
	} else {
		rcu_assign_pointer(in->handlers[channel], h);
		if (old)	/* messages wait for us (flow.c) */
			ics_handler_came(in, channel);
	}
	mutex_unlock(&in->reg_lock);
	return err;
}
EXPORT_SYMBOL_GPL(ics_register_handler);

void ics_unregister_handler(struct net *net, unsigned int channel, struct ics_handler *h)
{
	struct ics_net *in = ics_net(net);

	if (channel >= ICS_CHANNELS)
		return;
	mutex_lock(&in->reg_lock);
	if (rcu_access_pointer(in->handlers[channel]) == h)
		ics_handler_left(in, channel);	/* no h->rcv() in flight after it */
	mutex_unlock(&in->reg_lock);
}
EXPORT_SYMBOL_GPL(ics_unregister_handler);

/**
 * ics_send_msg - queue a message to a node on a channel
 * @net: network namespace whose instance sends
 * @node: destination node id, 1..ICS_MAX_NODES, not our own
 * @channel: enum ics_channel
 * @data: the message; copied, the caller may reuse it on return
 * @len: its length, 0..ICS_MSG_MAX
 * @args: queueing and completion options, or NULL for the defaults
 * @gfp: allocation flags; a gfp that may sleep may also wait for queue room
 *
 * The link delivers the message exactly once and in order (per peer, hence
 * per channel), or reports it failed through @args->done. Returns 0 once it
 * is queued, or -EINVAL, -EMSGSIZE, -ENOTCONN (not bound), -EHOSTUNREACH
 * (node never heard from), -ENOMEM, -EAGAIN (queue full and
 * ICS_SEND_NONBLOCK or an atomic @gfp), -ETIMEDOUT (queue stayed full),
 * -EINTR (signal while waiting), -ENODEV (@args->owner is being unloaded).
 * See struct ics_send_args.
 */
int ics_send_msg(struct net *net, u8 node, unsigned int channel, const void *data, size_t len,
		 const struct ics_send_args *args, gfp_t gfp)
{
	if (channel >= ICS_CHANNELS || node < 1 || node > ICS_MAX_NODES)
		return -EINVAL;
	if (len > ICS_MSG_MAX)
		return -EMSGSIZE;
	return ics_link_send(ics_net(net), node, channel, data, len, args, gfp);
}
EXPORT_SYMBOL_GPL(ics_send_msg);

/**
 * ics_send - queue a message, with the default options
 * @net: network namespace whose instance sends
 * @node: destination node id
 * @channel: enum ics_channel
 * @data: the message, copied
 * @len: its length
 * @gfp: allocation flags; one that may sleep waits up to 10 s for room
 *
 * ics_send_msg() without a completion: errors after queueing are counted
 * (ICS_STAT_MSGS_FAILED) but not reported.
 */
int ics_send(struct net *net, u8 node, unsigned int channel, const void *data, size_t len,
	     gfp_t gfp)
{
	return ics_send_msg(net, node, channel, data, len, NULL, gfp);
}
EXPORT_SYMBOL_GPL(ics_send);

/**
 * ics_node_id - this netns's node id, or 0 when its instance is not bound
 * @net: network namespace
 */
u8 ics_node_id(struct net *net)
{
	struct ics_bind *b;
	u8 id = 0;

	rcu_read_lock();
	b = rcu_dereference(ics_net(net)->bind);
	if (b)
		id = b->node_id;
	rcu_read_unlock();
	return id;
}
EXPORT_SYMBOL_GPL(ics_node_id);
