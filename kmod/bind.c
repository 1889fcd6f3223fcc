// SPDX-License-Identifier: GPL-2.0
/*
 * Binding an instance to its NIC, and unbinding it. Both run under RTNL, which
 * is what keeps the device, the binding pointer and the state consistent.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_arp.h>
#include <linux/random.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>

#include "ics.h"

int ics_bind(struct ics_net *in, struct net_device *dev, u32 node_id, u32 cluster_id,
	     struct netlink_ext_ack *extack)
{
	struct ics_bind *b = rtnl_dereference(in->bind);

	ASSERT_RTNL();
	if (b) {
		NL_SET_ERR_MSG_MOD(extack, "instance already bound; unbind first");
		return -EBUSY;
	}
	if (node_id < 1 || node_id > ICS_MAX_NODES) {
		NL_SET_ERR_MSG_MOD(extack, "node id out of range 1..64");
		pr_err("node id %u out of range 1..%u\n", node_id, ICS_MAX_NODES);
		return -EINVAL;
	}
	if (dev->type != ARPHRD_ETHER || dev->addr_len != ETH_ALEN ||
	    (dev->flags & IFF_LOOPBACK)) {
		NL_SET_ERR_MSG_MOD(extack, "not an Ethernet device");
		pr_err("%s is not an Ethernet device\n", dev->name);
		return -EINVAL;
	}
	if (dev->mtu < ICS_MIN_MTU) {
		NL_SET_ERR_MSG_MOD(extack, "device MTU below 576");
		pr_err("%s: mtu %u is below %u\n", dev->name, dev->mtu, ICS_MIN_MTU);
		return -EINVAL;
	}
	if (ics_net_use(in))
		return -ENOMEM;

	b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		return -ENOMEM;
	b->in = in;
	if (ics_rx_cpu_init(b)) {
		kfree(b);
		return -ENOMEM;
	}
	b->dev = dev;
	netdev_hold(dev, &b->dev_tracker, GFP_KERNEL);
	b->seq = ++in->bind_seq;
	b->node_id = node_id;
	b->cluster_id = cluster_id;
	b->incarnation = ics_member_incarnation(in);
	b->salt = get_random_u64();	/* with the incarnation, our sender keys (auth.c) */
	get_random_bytes(&b->hello_key, sizeof(b->hello_key));	/* admission (member.c) */
	ics_auth_txkey_update(in, b);
	spin_lock_init(&b->peers_lock);
	timer_setup(&b->timer, ics_timer, 0);
	timer_setup(&b->check_timer, ics_check_timer, 0);
	b->pt.type = htons(ICS_ETH_P);
	b->pt.dev = dev;
	b->pt.func = ics_rcv;

	ics_member_bind(b);	/* the first view, before anything is heard */
	rcu_assign_pointer(in->bind, b);
	in->state = ICS_STATE_BOUND;
	atomic_inc(&in->gen);
	dev_add_pack(&b->pt);

	pr_info("bound to %s as node %u of cluster %u (mtu %u, incarnation %u)\n",
		dev->name, node_id, cluster_id, dev->mtu, b->incarnation);
	ics_member_start(b);	/* the first heartbeat, and the timer */
	return 0;
}

/* The NIC's MTU changed: tell the peers, and resend what no longer fits. */
void ics_bind_mtu_changed(struct ics_net *in)
{
	struct ics_bind *b = rtnl_dereference(in->bind);
	struct ics_peer *p;
	int node;

	ASSERT_RTNL();
	if (!b)
		return;
	ics_member_announce(b);
	for (node = 1; node <= ICS_MAX_NODES; node++) {
		p = rtnl_dereference(b->peers[node]);
		if (p)
			ics_link_push(p);	/* resends what no longer fits */
	}
}

/*
 * Unpublish, then wait: dev_remove_pack() waits for receivers in flight and
 * synchronize_net() for senders (they use the binding only inside RCU
 * read-side sections, see ics_link_send()). After that only the timers can
 * reach the binding; they are stopped, a LEAVING heartbeat tells the others
 * not to wait for us to fall silent, the peers' links fail what they hold
 * (ENETDOWN) and everything is freed.
 */
int ics_unbind(struct ics_net *in, const char *why)
{
	struct ics_bind *b = rtnl_dereference(in->bind);
	int node;

	ASSERT_RTNL();
	if (!b)
		return -ENOTCONN;

	RCU_INIT_POINTER(in->bind, NULL);
	in->state = ICS_STATE_UNBOUND;
	atomic_inc(&in->gen);
	dev_remove_pack(&b->pt);
	synchronize_net();
	timer_shutdown_sync(&b->timer);
	timer_shutdown_sync(&b->check_timer);
	ics_rx_cpu_exit(b);	/* the timers above armed the probes */
	if (netif_running(b->dev))
		ics_member_leave(b);	/* after the last heartbeat of the timer */
	/* blocked senders see the instance unbound */
	for (node = 1; node <= ICS_MAX_NODES; node++)
		wake_up_all(&in->tx_wq[node]);

	pr_info("%s %s; unbound node %u\n", b->dev->name, why, b->node_id);
	ics_peers_free(b);
	ics_member_unbind(in, b);
	ics_auth_txkey_update(in, NULL);	/* after the LEAVING heartbeat */
	WARN_ON_ONCE(atomic_long_read(&b->reasm_mem) || atomic_long_read(&b->reasm_large));
	netdev_put(b->dev, &b->dev_tracker);
	memzero_explicit(&b->hello_key, sizeof(b->hello_key));
	kfree(b);
	return 0;
}
