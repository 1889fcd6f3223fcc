// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink family "ics"; the UAPI header's top comment is its spec.
 *
 * The family runs with parallel_ops: no genl_mutex is held, so a long
 * ICS_CMD_SEND_TEST does not stall every other family. Configuration takes
 * RTNL, statistics take only ics_net.stats_lock.
 */
#include <linux/rtnetlink.h>
#include <net/genetlink.h>
#include <net/sock.h>

#include "ics.h"

static struct genl_family ics_family;

static const char * const ics_channel_names[ICS_CHANNELS] = ICS_CHANNEL_NAMES;

static const struct nla_policy ics_policy[ICS_A_MAX + 1] = {
	[ICS_A_IFINDEX] = { .type = NLA_U32 },
	[ICS_A_IFNAME] = { .type = NLA_NUL_STRING, .len = IFNAMSIZ - 1 },
	[ICS_A_NODE_ID] = { .type = NLA_U32 },
	[ICS_A_CLUSTER_ID] = { .type = NLA_U32 },
	[ICS_A_TEST_CHANNEL] = { .type = NLA_U32 },
	[ICS_A_TEST_SIZE] = { .type = NLA_U32 },
	[ICS_A_TEST_COUNT] = { .type = NLA_U32 },
};

static struct ics_net *ics_nl_net(struct genl_info *info)
{
	return ics_net(genl_info_net(info));
}

static u64 ics_ms_since(u64 ns)
{
	return div_u64(ktime_get_ns() - ns, NSEC_PER_MSEC);
}

static int ics_nl_put_bind(struct sk_buff *skb, const struct ics_bind *b)
{
	const struct net_device *dev = b->dev;

	if (nla_put_u32(skb, ICS_A_IFINDEX, dev->ifindex) ||
	    nla_put_string(skb, ICS_A_IFNAME, dev->name) ||
	    nla_put(skb, ICS_A_ADDRESS, ETH_ALEN, dev->dev_addr) ||
	    nla_put_u32(skb, ICS_A_NODE_ID, b->node_id) ||
	    nla_put_u32(skb, ICS_A_CLUSTER_ID, b->cluster_id) ||
	    nla_put_u32(skb, ICS_A_MTU, READ_ONCE(dev->mtu)))
		return -EMSGSIZE;
	return 0;
}

static int ics_nl_put_stats(struct sk_buff *skb, struct ics_net *in)
{
	u64 ctr[__ICS_STAT_LAST];
	struct nlattr *nest;
	int s;

	ics_stats_get(in, ctr, &ctr);
	nest = nla_nest_start(skb, ICS_A_STATS);
	if (!nest)
		return -EMSGSIZE;
	for (s = ICS_STAT_PAD + 1; s < __ICS_STAT_LAST; s++)
		if (nla_put_u64_64bit(skb, s, ctr[s], ICS_STAT_PAD))
			return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int ics_nl_get_instance(struct sk_buff *skb, struct genl_info *info)
{
	struct ics_net *in = ics_nl_net(info);
	struct ics_bind *b;
	struct sk_buff *msg;
	void *hdr;
	int err = -EMSGSIZE;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &ics_family, 0, ICS_CMD_GET_INSTANCE);
	if (!hdr)
		goto err;

	rtnl_lock();
	b = rtnl_dereference(in->bind);
	if (nla_put_u8(msg, ICS_A_STATE, in->state) || (b && ics_nl_put_bind(msg, b))) {
		rtnl_unlock();
		goto err;
	}
	rtnl_unlock();

	if (nla_put_u32(msg, ICS_A_MSG_MAX, ICS_MSG_MAX) ||
	    nla_put_u32(msg, ICS_A_HELLO_MS, ics_hello_ms) ||
	    nla_put_u64_64bit(msg, ICS_A_RESET_AGE_MS, ics_ms_since(READ_ONCE(in->reset_time)),
			      ICS_A_PAD) ||
	    ics_nl_put_stats(msg, in))
		goto err;

	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
err:
	nlmsg_free(msg);
	return err;
}

static int ics_nl_bind(struct sk_buff *skb, struct genl_info *info)
{
	struct ics_net *in = ics_nl_net(info);
	struct nlattr **a = info->attrs;
	struct net_device *dev;
	u32 cluster_id = 0;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ICS_A_NODE_ID))
		return -EINVAL;
	if (!a[ICS_A_IFINDEX] == !a[ICS_A_IFNAME]) {
		NL_SET_ERR_MSG_MOD(info->extack, "give exactly one of ifindex and ifname");
		return -EINVAL;
	}
	if (a[ICS_A_CLUSTER_ID])
		cluster_id = nla_get_u32(a[ICS_A_CLUSTER_ID]);

	rtnl_lock();
	if (a[ICS_A_IFINDEX])
		dev = __dev_get_by_index(in->net, nla_get_u32(a[ICS_A_IFINDEX]));
	else
		dev = __dev_get_by_name(in->net, nla_data(a[ICS_A_IFNAME]));
	if (dev) {
		err = ics_bind(in, dev, nla_get_u32(a[ICS_A_NODE_ID]), cluster_id, info->extack);
	} else {
		NL_SET_ERR_MSG_MOD(info->extack, "no such network device in this namespace");
		err = -ENODEV;
	}
	rtnl_unlock();
	return err;
}

static int ics_nl_unbind(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	rtnl_lock();
	err = ics_unbind(ics_nl_net(info), "released by request");
	rtnl_unlock();
	if (err)
		NL_SET_ERR_MSG_MOD(info->extack, "instance is not bound");
	return err;
}

static int ics_nl_reset(struct sk_buff *skb, struct genl_info *info)
{
	ics_stats_reset(ics_nl_net(info));
	return 0;
}

static int ics_nl_put_dir(struct sk_buff *skb, int type, const struct ics_dir_stats *d)
{
	struct nlattr *dir, *hist;
	int r;

	dir = nla_nest_start(skb, type);
	if (!dir ||
	    nla_put_u64_64bit(skb, ICS_DIR_A_MSGS, d->msgs, ICS_DIR_A_PAD) ||
	    nla_put_u64_64bit(skb, ICS_DIR_A_BYTES, d->bytes, ICS_DIR_A_PAD))
		return -EMSGSIZE;
	hist = nla_nest_start(skb, ICS_DIR_A_HIST);
	if (!hist)
		return -EMSGSIZE;
	for (r = 0; r < ICS_HIST_ROWS; r++)
		if (nla_put_u64_64bit(skb, r + 1, d->hist[r], ICS_HIST_A_PAD))
			return -EMSGSIZE;
	nla_nest_end(skb, hist);
	nla_nest_end(skb, dir);
	return 0;
}

static int ics_nl_put_channel(struct sk_buff *skb, struct ics_net *in, unsigned int ch)
{
	struct ics_chan_stats cs;
	struct nlattr *nest;

	ics_stats_get(in, chan[ch], &cs);
	nest = nla_nest_start(skb, ICS_A_CHANNEL);
	if (!nest ||
	    nla_put_u32(skb, ICS_CHAN_A_ID, ch) ||
	    nla_put_string(skb, ICS_CHAN_A_NAME, ics_channel_names[ch]) ||
	    nla_put_u8(skb, ICS_CHAN_A_HANDLER, !!rcu_access_pointer(in->handlers[ch])) ||
	    ics_nl_put_dir(skb, ICS_CHAN_A_TX, &cs.tx) ||
	    ics_nl_put_dir(skb, ICS_CHAN_A_RX, &cs.rx) ||
	    nla_put_u64_64bit(skb, ICS_CHAN_A_RX_UNCLAIMED, cs.rx_unclaimed, ICS_CHAN_A_PAD) ||
	    nla_put_u64_64bit(skb, ICS_CHAN_A_RX_PATTERN_OK, cs.rx_pattern_ok, ICS_CHAN_A_PAD) ||
	    nla_put_u64_64bit(skb, ICS_CHAN_A_RX_PATTERN_BAD, cs.rx_pattern_bad,
			      ICS_CHAN_A_PAD))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/*
 * A node is dumped while it is reachable, or while it has counters: they
 * survive unbinding, like the channels'.
 */
static int ics_nl_put_node(struct sk_buff *skb, struct ics_net *in, unsigned int id,
			   bool *skip)
{
	struct ics_node_stats ns;
	struct nlattr *nest;
	struct ics_bind *b;
	struct ics_peer *p;
	u8 addr[ETH_ALEN];
	u64 heard = 0;

	ics_stats_get(in, node[id], &ns);
	rcu_read_lock();
	b = rcu_dereference(in->bind);
	p = b ? rcu_dereference(b->peers[id]) : NULL;
	if (p) {
		ether_addr_copy(addr, p->addr);
		heard = jiffies_to_msecs(jiffies - READ_ONCE(p->last_heard));
	}
	rcu_read_unlock();

	*skip = !p && !(ns.tx_msgs | ns.rx_msgs);
	if (*skip)
		return 0;
	nest = nla_nest_start(skb, ICS_A_NODE);
	if (!nest ||
	    nla_put_u32(skb, ICS_NODE_A_ID, id) ||
	    nla_put_u8(skb, ICS_NODE_A_REACHABLE, !!p) ||
	    (p && nla_put(skb, ICS_NODE_A_ADDRESS, ETH_ALEN, addr)) ||
	    (p && nla_put_u64_64bit(skb, ICS_NODE_A_LAST_HEARD_MS, heard, ICS_NODE_A_PAD)) ||
	    nla_put_u64_64bit(skb, ICS_NODE_A_TX_MSGS, ns.tx_msgs, ICS_NODE_A_PAD) ||
	    nla_put_u64_64bit(skb, ICS_NODE_A_TX_BYTES, ns.tx_bytes, ICS_NODE_A_PAD) ||
	    nla_put_u64_64bit(skb, ICS_NODE_A_RX_MSGS, ns.rx_msgs, ICS_NODE_A_PAD) ||
	    nla_put_u64_64bit(skb, ICS_NODE_A_RX_BYTES, ns.rx_bytes, ICS_NODE_A_PAD))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/*
 * Dumps: cb->args[0] is the next channel or node; cb->seq the instance's
 * generation, so a reset, bind or unbind during the dump sets NLM_F_DUMP_INTR.
 */
static int ics_nl_dump(struct sk_buff *skb, struct netlink_callback *cb, u8 cmd,
		       unsigned int first, unsigned int last)
{
	struct ics_net *in = ics_net(sock_net(skb->sk));
	unsigned long i = max_t(unsigned long, cb->args[0], first);
	bool skip = false;
	void *hdr;
	int err;

	cb->seq = atomic_read(&in->gen);
	for (; i <= last; i++) {
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				  &ics_family, NLM_F_MULTI, cmd);
		if (!hdr)
			break;
		genl_dump_check_consistent(cb, hdr);
		if (cmd == ICS_CMD_GET_CHANNELS)
			err = ics_nl_put_channel(skb, in, i);
		else
			err = ics_nl_put_node(skb, in, i, &skip);
		if (err || skip) {
			genlmsg_cancel(skb, hdr);
			if (err)
				break;
			continue;
		}
		genlmsg_end(skb, hdr);
	}
	cb->args[0] = i;
	return skb->len;
}

static int ics_nl_dump_channels(struct sk_buff *skb, struct netlink_callback *cb)
{
	return ics_nl_dump(skb, cb, ICS_CMD_GET_CHANNELS, 0, ICS_CHANNELS - 1);
}

static int ics_nl_dump_nodes(struct sk_buff *skb, struct netlink_callback *cb)
{
	return ics_nl_dump(skb, cb, ICS_CMD_GET_NODES, 1, ICS_MAX_NODES);
}

static int ics_nl_send_test(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	u32 node, ch, size, count, sent = 0;
	struct sk_buff *msg;
	void *hdr;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ICS_A_NODE_ID) ||
	    GENL_REQ_ATTR_CHECK(info, ICS_A_TEST_CHANNEL) ||
	    GENL_REQ_ATTR_CHECK(info, ICS_A_TEST_SIZE) ||
	    GENL_REQ_ATTR_CHECK(info, ICS_A_TEST_COUNT))
		return -EINVAL;
	node = nla_get_u32(a[ICS_A_NODE_ID]);
	ch = nla_get_u32(a[ICS_A_TEST_CHANNEL]);
	size = nla_get_u32(a[ICS_A_TEST_SIZE]);
	count = nla_get_u32(a[ICS_A_TEST_COUNT]);

	if (node < 1 || node > ICS_MAX_NODES) {
		NL_SET_ERR_MSG_ATTR(info->extack, a[ICS_A_NODE_ID], "node id out of range 1..64");
		return -EINVAL;
	}
	if (ch >= ICS_CHANNELS) {
		NL_SET_ERR_MSG_ATTR(info->extack, a[ICS_A_TEST_CHANNEL], "no such channel");
		return -EINVAL;
	}
	if (size > ICS_MSG_MAX) {
		NL_SET_ERR_MSG_ATTR(info->extack, a[ICS_A_TEST_SIZE],
				    "message larger than 16 MiB");
		return -EMSGSIZE;
	}
	if (!count) {
		NL_SET_ERR_MSG_ATTR(info->extack, a[ICS_A_TEST_COUNT], "count must be >= 1");
		return -EINVAL;
	}

	err = ics_testgen(ics_nl_net(info), node, ch, size, count, &sent);
	switch (err) {
	case 0:
		break;
	case -ENOTCONN:
		NL_SET_ERR_MSG_MOD(info->extack, "instance is not bound");
		return err;
	case -EHOSTUNREACH:
		NL_SET_ERR_MSG_MOD(info->extack, "node never heard from on this NIC");
		return err;
	case -EINVAL:
		NL_SET_ERR_MSG_MOD(info->extack, "cannot send to our own node id");
		return err;
	default:
		ics_extack(info->extack, "failed after some messages were sent",
			   "failed after %u of %u messages were sent", sent, count);
		return err;
	}

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &ics_family, 0, ICS_CMD_SEND_TEST);
	if (!hdr || nla_put_u32(msg, ICS_A_TEST_SENT, sent)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static const struct genl_small_ops ics_ops[] = {
	{ .cmd = ICS_CMD_GET_INSTANCE, .doit = ics_nl_get_instance },
	{ .cmd = ICS_CMD_BIND, .doit = ics_nl_bind, .flags = GENL_ADMIN_PERM },
	{ .cmd = ICS_CMD_UNBIND, .doit = ics_nl_unbind, .flags = GENL_ADMIN_PERM },
	{ .cmd = ICS_CMD_RESET_STATS, .doit = ics_nl_reset, .flags = GENL_ADMIN_PERM },
	{ .cmd = ICS_CMD_GET_CHANNELS, .dumpit = ics_nl_dump_channels },
	{ .cmd = ICS_CMD_GET_NODES, .dumpit = ics_nl_dump_nodes },
	{ .cmd = ICS_CMD_SEND_TEST, .doit = ics_nl_send_test, .flags = GENL_ADMIN_PERM },
};

static struct genl_family ics_family __ro_after_init = {
	.name = ICS_GENL_NAME,
	.version = ICS_GENL_VERSION,
	.maxattr = ICS_A_MAX,
	.policy = ics_policy,
	.netnsok = true,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.small_ops = ics_ops,
	.n_small_ops = ARRAY_SIZE(ics_ops),
	.resv_start_op = ICS_CMD_GET_INSTANCE,	/* strict validation everywhere */
};

int __init ics_genl_init(void)
{
	return genl_register_family(&ics_family);
}

void ics_genl_exit(void)
{
	genl_unregister_family(&ics_family);
}
