// SPDX-License-Identifier: GPL-2.0
/*
 * ics: module parameters, per-netns instances, the netdev notifier, and
 * bring-up/tear-down in order.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "ics.h"

static char *ifname;
module_param(ifname, charp, 0444);
MODULE_PARM_DESC(ifname, "NIC to bind the initial netns's instance to (with node_id)");

static unsigned int node_id;
module_param(node_id, uint, 0444);
MODULE_PARM_DESC(node_id, "this member's node id, 1..64 (with ifname)");

static unsigned int cluster_id;
module_param(cluster_id, uint, 0444);
MODULE_PARM_DESC(cluster_id, "cluster id; frames of other clusters are dropped (default 0)");

unsigned int ics_heartbeat_ms = 100;
module_param_named(heartbeat_ms, ics_heartbeat_ms, uint, 0444);
MODULE_PARM_DESC(heartbeat_ms, "heartbeat interval in ms, 10..3600000 (default 100)");

unsigned int ics_heartbeat_misses = 3;
module_param_named(heartbeat_misses, ics_heartbeat_misses, uint, 0444);
MODULE_PARM_DESC(heartbeat_misses,
		 "a node silent for this many heartbeat intervals is down, 1..100 (default 3)");

unsigned int ics_votes = 1;
module_param_named(votes, ics_votes, uint, 0444);
MODULE_PARM_DESC(votes, "this member's quorum votes, 0 or 1 (default 1)");

unsigned int ics_expected_votes;
module_param_named(expected_votes, ics_expected_votes, uint, 0444);
MODULE_PARM_DESC(expected_votes,
		 "expected votes in the cluster, 0..64 (default 0: the most seen at once)");

unsigned int ics_reasm_timeout_ms = 3000;
module_param_named(reasm_timeout_ms, ics_reasm_timeout_ms, uint, 0444);
MODULE_PARM_DESC(reasm_timeout_ms,
		 "drop a silent peer's partial messages after this many ms (default 3000)");

unsigned long ics_reasm_mem_max = 256UL << 20;
module_param_named(reasm_mem_max, ics_reasm_mem_max, ulong, 0444);
MODULE_PARM_DESC(reasm_mem_max,
		 "bytes of partial large messages (over 256 KiB) one instance reserves (default 256 MiB)");

unsigned int ics_link_timeout_ms = 1500;
module_param_named(link_timeout_ms, ics_link_timeout_ms, uint, 0444);
MODULE_PARM_DESC(link_timeout_ms,
		 "fail a link's messages after this many ms without progress (default 1500)");

unsigned int ics_link_window = 128;
module_param_named(link_window, ics_link_window, uint, 0444);
MODULE_PARM_DESC(link_window, "frames in flight per link, 4..512, rounded up to a power of 2 (default 128)");

unsigned long ics_link_queue_max = 64UL << 20;
module_param_named(link_queue_max, ics_link_queue_max, ulong, 0444);
MODULE_PARM_DESC(link_queue_max, "bytes queued or unacknowledged per peer (default 64 MiB)");

unsigned long ics_chan_queue_max = 32UL << 20;
module_param_named(chan_queue_max, ics_chan_queue_max, ulong, 0444);
MODULE_PARM_DESC(chan_queue_max,
		 "bytes queued or unacknowledged per peer and channel (default 32 MiB)");

unsigned int ics_handler_wait_ms = 3000;
module_param_named(handler_wait_ms, ics_handler_wait_ms, uint, 0444);
MODULE_PARM_DESC(handler_wait_ms,
		 "hold a channel's messages this many ms for its next handler once one left, 0..600000 (default 3000)");

static const u8 ics_default_prio[ICS_CHANNELS] = ICS_CHANNEL_PRIOS;

static unsigned int ics_net_id __read_mostly;

struct ics_net *ics_net(const struct net *net)
{
	return net_generic(net, ics_net_id);
}

/*
 * A new netns's instance allocates nothing: most namespaces never use ics,
 * and a failure here would fail every unshare(CLONE_NEWNET) on the system.
 */
static int __net_init ics_net_init(struct net *net)
{
	struct ics_net *in = ics_net(net);

	in->net = net;
	in->state = ICS_STATE_UNUSED;
	mutex_init(&in->stats_lock);
	mutex_init(&in->reg_lock);
	memcpy(in->prio, ics_default_prio, sizeof(in->prio));
	in->reset_time = ktime_get_ns();
	ics_flow_init(in);
	ics_member_init(in);
	return 0;
}

/*
 * The instance is used (bound, or a handler registered): what it needs from
 * now on until its netns goes, allocated once. About 10 KiB of counters per
 * possible CPU, the event ring and a wait queue per node, charged to the
 * memory cgroup of whoever used it first.
 */
int ics_net_use(struct ics_net *in)
{
	wait_queue_head_t *wq;
	int err = 0, node;

	mutex_lock(&in->stats_lock);
	if (in->stats)
		goto out;
	wq = kcalloc(ICS_MAX_NODES + 1, sizeof(*wq), GFP_KERNEL_ACCOUNT);
	if (!wq) {
		err = -ENOMEM;
		goto out;
	}
	for (node = 0; node <= ICS_MAX_NODES; node++)
		init_waitqueue_head(&wq[node]);
	err = ics_member_alloc(in);
	if (!err)
		err = ics_stats_alloc(in);
	if (err) {
		kfree(in->ev_ring);
		in->ev_ring = NULL;
		kfree(wq);
		goto out;
	}
	in->tx_wq = wq;
out:
	mutex_unlock(&in->stats_lock);
	return err;
}

static void __net_exit ics_net_exit(struct net *net)
{
	struct ics_net *in = ics_net(net);
	int ch;

	/* Devices left this netns before subsys exits run; this is for unload. */
	rtnl_lock();
	ics_unbind(in, "instance removed");
	rtnl_unlock();

	for (ch = 0; ch < ICS_CHANNELS; ch++)
		if (ics_handler_present(in, ch))
			pr_warn("channel %d handler still registered at netns exit\n", ch);
	ics_flow_exit(in);
	ics_member_exit(in);	/* the events of the unbind go out first */
	ics_key_exit(in);
	ics_stats_free(in);
	kfree(in->tx_wq);
}

static struct pernet_operations ics_net_ops = {
	.init = ics_net_init,
	.exit = ics_net_exit,
	.id = &ics_net_id,
	.size = sizeof(struct ics_net),
};

/* A bound NIC that leaves its netns (deleted, or moved) unbinds the instance. */
static int ics_netdev_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct ics_net *in = ics_net(dev_net(dev));
	struct ics_bind *b = rtnl_dereference(in->bind);

	if (!b || b->dev != dev)
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_UNREGISTER:
		ics_unbind(in, "went away");
		break;
	case NETDEV_CHANGEMTU:
		if (dev->mtu < ICS_MIN_MTU)
			pr_warn("%s: mtu %u is below %u; frames stall until it is raised\n",
				dev->name, dev->mtu, ICS_MIN_MTU);
		ics_bind_mtu_changed(in);
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block ics_netdev_nb = {
	.notifier_call = ics_netdev_event,
};

static int __init ics_bind_param(void)
{
	struct net_device *dev;
	int err;

	rtnl_lock();
	dev = __dev_get_by_name(&init_net, ifname);
	if (!dev) {
		pr_err("no such device \"%s\"\n", ifname);
		err = -ENODEV;
	} else {
		err = ics_bind(ics_net(&init_net), dev, node_id, cluster_id, NULL);
	}
	rtnl_unlock();
	return err;
}

static int __init ics_check_params(void)
{
	if (!!ifname != !!node_id) {
		pr_err("ifname and node_id go together\n");
		return -EINVAL;
	}
	if (node_id > ICS_MAX_NODES) {
		pr_err("node_id %u out of range 1..%u\n", node_id, ICS_MAX_NODES);
		return -EINVAL;
	}
	if (ics_heartbeat_ms < ICS_HEARTBEAT_MS_MIN || ics_heartbeat_ms > ICS_HEARTBEAT_MS_MAX) {
		pr_err("heartbeat_ms %u out of range %u..%u\n", ics_heartbeat_ms,
		       ICS_HEARTBEAT_MS_MIN, ICS_HEARTBEAT_MS_MAX);
		return -EINVAL;
	}
	if (ics_heartbeat_misses < 1 || ics_heartbeat_misses > ICS_HEARTBEAT_MISSES_MAX ||
	    ics_votes > 1 || ics_expected_votes > ICS_MAX_NODES) {
		pr_err("heartbeat_misses must be 1..%u, votes 0..1, expected_votes 0..%u\n",
		       ICS_HEARTBEAT_MISSES_MAX, ICS_MAX_NODES);
		return -EINVAL;
	}
	if (ics_link_timeout_ms < 10 || ics_link_window < 4 || ics_link_window > ICS_WINDOW_MAX) {
		pr_err("link_timeout_ms must be >= 10, link_window 4..%u\n", ICS_WINDOW_MAX);
		return -EINVAL;
	}
	if (ics_handler_wait_ms > 600000) {
		pr_err("handler_wait_ms must be 0..600000\n");
		return -EINVAL;
	}
	if (ics_link_queue_max < ICS_MSG_MAX || ics_chan_queue_max < 1) {
		pr_err("link_queue_max must be >= %u, chan_queue_max >= 1\n", ICS_MSG_MAX);
		return -EINVAL;
	}
	if (ics_reasm_timeout_ms < 10 || ics_reasm_mem_max < 2 * ICS_MSG_MAX) {
		pr_err("reasm_timeout_ms must be >= 10, reasm_mem_max >= %u\n", 2 * ICS_MSG_MAX);
		return -EINVAL;
	}
	return 0;
}

static int __init ics_init(void)
{
	int err;

	err = ics_check_params();
	if (err)
		return err;

	err = ics_crc_init();
	if (err)
		return err;

	err = ics_auth_init();
	if (err)
		goto err_crc;

	err = register_pernet_subsys(&ics_net_ops);
	if (err)
		goto err_auth;

	err = register_netdevice_notifier(&ics_netdev_nb);
	if (err)
		goto err_pernet;

	if (ifname) {
		err = ics_bind_param();
		if (err)
			goto err_notifier;
	}

	err = ics_genl_init();
	if (err)
		goto err_unbind;

	err = ics_dev_init();
	if (err)
		goto err_genl;

	pr_info("loaded: wire version %u, ethertype 0x%04x, version " ICS_VERSION "\n",
		ICS_WIRE_VERSION, ICS_ETH_P);
	return 0;

err_genl:
	ics_genl_exit();
err_unbind:
	rtnl_lock();
	ics_unbind(ics_net(&init_net), "module load failed");
	rtnl_unlock();
err_notifier:
	unregister_netdevice_notifier(&ics_netdev_nb);
err_pernet:
	unregister_pernet_subsys(&ics_net_ops);
err_auth:
	ics_auth_exit();
err_crc:
	ics_crc_exit();
	return err;
}

static void __exit ics_exit(void)
{
	ics_dev_exit();
	ics_genl_exit();
	unregister_netdevice_notifier(&ics_netdev_nb);
	unregister_pernet_subsys(&ics_net_ops);
	ics_auth_exit();
	ics_crc_exit();
}

module_init(ics_init);
module_exit(ics_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ics: internode communication subsystem over a dedicated NIC");
MODULE_AUTHOR("The ics developers");
MODULE_VERSION(ICS_VERSION);
MODULE_SOFTDEP("pre: crc32c poly1305");
