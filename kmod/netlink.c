// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink family "ics"; the UAPI header's top comment is its spec.
 *
 * The family runs with parallel_ops: no genl_mutex is held, so a dump
 * does not stall every other family. Configuration takes
 * RTNL, statistics take only ics_net.stats_lock, the membership view
 * member_lock. Membership events go to the "events" multicast group from
 * member.c's worker (ics_nl_event()).
 */
#include <linux/mutex.h>
#include <linux/rtnetlink.h>
#include <net/genetlink.h>
#include <net/sock.h>

#include "ics.h"

static struct genl_family ics_family;

/* Events may be emitted only while the family is registered. */
static DEFINE_MUTEX(ics_nl_ev_lock);
static bool ics_nl_up;	/* ics_nl_ev_lock */

enum { ICS_MCGRP_EVENTS_IDX };

static const struct genl_multicast_group ics_mcgrps[] = {
	[ICS_MCGRP_EVENTS_IDX] = { .name = ICS_GENL_MCGRP_EVENTS },
};

static const char * const ics_channel_names[ICS_CHANNELS] = ICS_CHANNEL_NAMES;

static const struct nla_policy ics_chan_policy[ICS_CHAN_A_MAX + 1] = {
	[ICS_CHAN_A_ID] = NLA_POLICY_MAX(NLA_U32, ICS_CHANNELS - 1),
	[ICS_CHAN_A_PRIO] = NLA_POLICY_MAX(NLA_U8, ICS_PRIO_LEVELS - 1),
};

/* Not const: 6.1's nla_policy points to a non-const range. */
static struct netlink_range_validation ics_hb_ms_range __ro_after_init = {
	.min = ICS_HEARTBEAT_MS_MIN,
	.max = ICS_HEARTBEAT_MS_MAX,
};

static const struct nla_policy ics_policy[ICS_A_MAX + 1] = {
	[ICS_A_IFINDEX] = { .type = NLA_U32 },
	[ICS_A_IFNAME] = { .type = NLA_NUL_STRING, .len = IFNAMSIZ - 1 },
	[ICS_A_NODE_ID] = { .type = NLA_U32 },
	[ICS_A_CLUSTER_ID] = { .type = NLA_U32 },
	[ICS_A_CHANNEL] = NLA_POLICY_NESTED(ics_chan_policy),
	[ICS_A_HEARTBEAT_MS] = NLA_POLICY_FULL_RANGE(NLA_U32, &ics_hb_ms_range),
	[ICS_A_HEARTBEAT_MISSES] = NLA_POLICY_RANGE(NLA_U32, 1, ICS_HEARTBEAT_MISSES_MAX),
	[ICS_A_VOTES] = NLA_POLICY_MAX(NLA_U32, 1),
	[ICS_A_EXPECTED_VOTES] = NLA_POLICY_MAX(NLA_U32, ICS_MAX_NODES),
	[ICS_A_KEY_ID] = { .type = NLA_U8 },
	[ICS_A_KEY] = NLA_POLICY_EXACT_LEN(ICS_KEY_LEN),
	[ICS_A_AUTH_MODE] = NLA_POLICY_MAX(NLA_U8, ICS_AUTH_MODE_MAX),
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
	    nla_put_u32(skb, ICS_A_MTU, READ_ONCE(dev->mtu)) ||
	    nla_put_u64_64bit(skb, ICS_A_REASM_MEM, atomic_long_read(&b->reasm_mem), ICS_A_PAD) ||
	    nla_put_u64_64bit(skb, ICS_A_REASM_RESERVED, atomic_long_read(&b->reasm_large),
			      ICS_A_PAD) ||
	    nla_put_u64_64bit(skb, ICS_A_REASM_MEM_MAX, ics_reasm_mem_max, ICS_A_PAD))
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
	for (s = ICS_STAT_PAD + 1; s < __ICS_STAT_LAST; s++) {
		if (s >= ICS_STAT_RESERVED_42 && s <= ICS_STAT_RESERVED_44)
			continue;	/* retired numbers */
		if (nla_put_u64_64bit(skb, s, ctr[s], ICS_STAT_PAD))
			return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* Quorum and generation, as one consistent reading (member_lock). */
static int ics_nl_put_view(struct sk_buff *skb, struct ics_net *in, const struct ics_bind *b)
{
	u32 gen, cur, expected, quorum;
	bool has;

	spin_lock_bh(&in->member_lock);
	gen = in->generation;
	cur = in->cur_votes;
	expected = in->expected;
	quorum = in->quorum;
	has = in->has_quorum;
	spin_unlock_bh(&in->member_lock);
	if (nla_put_u32(skb, ICS_A_INCARNATION, b->incarnation) ||
	    nla_put_u32(skb, ICS_A_GENERATION, gen) ||
	    nla_put_u32(skb, ICS_A_CURRENT_VOTES, cur) ||
	    nla_put_u32(skb, ICS_A_EXPECTED_VOTES, expected) ||
	    nla_put_u32(skb, ICS_A_QUORUM, quorum) ||
	    nla_put_u8(skb, ICS_A_HAS_QUORUM, has))
		return -EMSGSIZE;
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
	if (nla_put_u8(msg, ICS_A_STATE, in->state) || (b && ics_nl_put_bind(msg, b)) ||
	    (b && ics_nl_put_view(msg, in, b)) ||
	    ics_key_put(msg, in, netlink_ns_capable(skb, in->net->user_ns, CAP_NET_ADMIN))) {
		rtnl_unlock();
		goto err;
	}
	rtnl_unlock();

	if (nla_put_u32(msg, ICS_A_MSG_MAX, ICS_MSG_MAX) ||
	    nla_put_string(msg, ICS_A_CRC32C_DRIVER, ics_crc_driver()) ||
	    nla_put_u32(msg, ICS_A_HEARTBEAT_MS, READ_ONCE(in->hb_ms)) ||
	    nla_put_u32(msg, ICS_A_HEARTBEAT_MISSES, READ_ONCE(in->hb_misses)) ||
	    nla_put_u32(msg, ICS_A_VOTES, READ_ONCE(in->votes)) ||
	    nla_put_u32(msg, ICS_A_EXPECTED_VOTES_CFG, READ_ONCE(in->expected_cfg)) ||
	    nla_put_u32(msg, ICS_A_LINK_TIMEOUT_MS, ics_link_timeout_ms) ||
	    nla_put_u32(msg, ICS_A_LINK_WINDOW, ics_window_frames()) ||
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
	struct ics_net *in = ics_nl_net(info);

	/* the tables first: a dump that read them before sees the generation move */
	rtnl_lock();
	ics_node_chans_reset(in);
	ics_stats_reset(in);
	rtnl_unlock();
	return 0;
}

static const u32 *ics_nl_u32(struct nlattr **a, int type, u32 *v)
{
	if (!a[type])
		return NULL;
	*v = nla_get_u32(a[type]);
	return v;
}

static int ics_nl_set_instance(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	u32 hb, misses, votes, expected;
	int err = 0;

	if (!a[ICS_A_HEARTBEAT_MS] && !a[ICS_A_HEARTBEAT_MISSES] && !a[ICS_A_VOTES] &&
	    !a[ICS_A_EXPECTED_VOTES] && !a[ICS_A_AUTH_MODE]) {
		NL_SET_ERR_MSG_MOD(info->extack, "nothing to set");
		return -EINVAL;
	}
	rtnl_lock();
	/* The mode first: when it is refused, nothing changes. */
	if (a[ICS_A_AUTH_MODE])
		err = ics_auth_set_mode(ics_nl_net(info), nla_get_u8(a[ICS_A_AUTH_MODE]),
					info->extack);
	if (err) {
		rtnl_unlock();
		return err;
	}
	ics_member_set_tunables(ics_nl_net(info), ics_nl_u32(a, ICS_A_HEARTBEAT_MS, &hb),
				ics_nl_u32(a, ICS_A_HEARTBEAT_MISSES, &misses),
				ics_nl_u32(a, ICS_A_VOTES, &votes),
				ics_nl_u32(a, ICS_A_EXPECTED_VOTES, &expected));
	rtnl_unlock();
	return 0;
}

/*
 * KEY_ADD: the key's bytes are wiped from the request once copied (the
 * request skb may be freed without that, as any other).
 */
static int ics_nl_key_add(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	int err = -EINVAL;

	if (!GENL_REQ_ATTR_CHECK(info, ICS_A_KEY_ID) && !GENL_REQ_ATTR_CHECK(info, ICS_A_KEY)) {
		rtnl_lock();
		err = ics_key_add(ics_nl_net(info), nla_get_u8(a[ICS_A_KEY_ID]),
				  nla_data(a[ICS_A_KEY]), info->extack);
		rtnl_unlock();
	}
	if (a[ICS_A_KEY])
		memzero_explicit(nla_data(a[ICS_A_KEY]), nla_len(a[ICS_A_KEY]));
	return err;
}

static int ics_nl_key_del(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ICS_A_KEY_ID))
		return -EINVAL;
	rtnl_lock();
	err = ics_key_del(ics_nl_net(info), nla_get_u8(info->attrs[ICS_A_KEY_ID]), info->extack);
	rtnl_unlock();
	return err;
}

static int ics_nl_key_use(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ICS_A_KEY_ID))
		return -EINVAL;
	rtnl_lock();
	err = ics_key_use(ics_nl_net(info), nla_get_u8(info->attrs[ICS_A_KEY_ID]), info->extack);
	rtnl_unlock();
	return err;
}

static int ics_nl_set_channel(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[ICS_CHAN_A_MAX + 1];
	struct ics_net *in = ics_nl_net(info);
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ICS_A_CHANNEL))
		return -EINVAL;
	err = nla_parse_nested(tb, ICS_CHAN_A_MAX, info->attrs[ICS_A_CHANNEL], ics_chan_policy,
			       info->extack);
	if (err)
		return err;
	if (!tb[ICS_CHAN_A_ID] || !tb[ICS_CHAN_A_PRIO]) {
		NL_SET_ERR_MSG_MOD(info->extack, "give the channel id and its priority");
		return -EINVAL;
	}
	WRITE_ONCE(in->prio[nla_get_u32(tb[ICS_CHAN_A_ID])], nla_get_u8(tb[ICS_CHAN_A_PRIO]));
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
	    nla_put_u8(skb, ICS_CHAN_A_HANDLER, ics_handler_present(in, ch)) ||
	    ics_nl_put_dir(skb, ICS_CHAN_A_TX, &cs.tx) ||
	    ics_nl_put_dir(skb, ICS_CHAN_A_RX, &cs.rx) ||
	    nla_put_u64_64bit(skb, ICS_CHAN_A_RX_UNCLAIMED, cs.rx_unclaimed, ICS_CHAN_A_PAD) ||
	    nla_put_u8(skb, ICS_CHAN_A_PRIO, READ_ONCE(in->prio[ch])))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static void ics_node_dir_read(struct ics_dir_stats *to, const struct ics_node_dir *from)
{
	int r;

	to->msgs = u64_stats_read(&from->msgs);
	to->bytes = u64_stats_read(&from->bytes);
	for (r = 0; r < ICS_HIST_ROWS; r++)
		to->hist[r] = u64_stats_read(&from->hist[r]);
}

/* Node @id's tables of direction @dir, or NULL: nothing counted yet. */
static const struct ics_node_chans *ics_node_chans(struct ics_net *in, unsigned int id, int dir)
{
	struct ics_node_tables *nodes = READ_ONCE(in->nodes);	/* set once, freed at exit */

	return nodes ? READ_ONCE(nodes[id].dir[dir]) : NULL;
}

/*
 * Item @i of GET_PEER_CHANNELS: node i / ICS_CHANNELS, channel i %
 * ICS_CHANNELS, when it has messages. Read without the writers' locks
 * (struct ics_node_dir): each counter is whole, the row sums and msgs may
 * be one message apart.
 */
static int ics_nl_put_peer_channel(struct sk_buff *skb, struct ics_net *in, unsigned long i,
				   bool *skip)
{
	unsigned int node = i / ICS_CHANNELS, ch = i % ICS_CHANNELS;
	const struct ics_node_chans *t[2] = { ics_node_chans(in, node, ICS_TX),
					      ics_node_chans(in, node, ICS_RX) };
	struct ics_dir_stats d[2] = {};
	struct nlattr *nest;
	int dir;

	for (dir = ICS_TX; dir <= ICS_RX; dir++)
		if (t[dir])
			ics_node_dir_read(&d[dir], &t[dir]->ch[ch]);
	*skip = !(d[ICS_TX].msgs | d[ICS_RX].msgs);
	if (*skip)
		return 0;
	if (nla_put_u32(skb, ICS_A_NODE_ID, node))
		return -EMSGSIZE;
	nest = nla_nest_start(skb, ICS_A_CHANNEL);
	if (!nest ||
	    nla_put_u32(skb, ICS_CHAN_A_ID, ch) ||
	    ics_nl_put_dir(skb, ICS_CHAN_A_TX, &d[ICS_TX]) ||
	    ics_nl_put_dir(skb, ICS_CHAN_A_RX, &d[ICS_RX]))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/* A node's data messages and bytes each way: its channels' sums. */
static void ics_node_totals(struct ics_net *in, unsigned int id, struct ics_node_stats *ns)
{
	const struct ics_node_chans *tx = ics_node_chans(in, id, ICS_TX);
	const struct ics_node_chans *rx = ics_node_chans(in, id, ICS_RX);
	int ch;

	memset(ns, 0, sizeof(*ns));
	for (ch = 0; ch < ICS_CHANNELS; ch++) {
		if (tx) {
			ns->tx_msgs += u64_stats_read(&tx->ch[ch].msgs);
			ns->tx_bytes += u64_stats_read(&tx->ch[ch].bytes);
		}
		if (rx) {
			ns->rx_msgs += u64_stats_read(&rx->ch[ch].msgs);
			ns->rx_bytes += u64_stats_read(&rx->ch[ch].bytes);
		}
	}
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
	u8 addr[ETH_ALEN] __aligned(2);
	u64 heard = 0;
	u8 rx_key = 0;

	ics_node_totals(in, id, &ns);
	rcu_read_lock();
	b = rcu_dereference(in->bind);
	p = b ? rcu_dereference(b->peers[id]) : NULL;
	/* Reachable: messages may be sent to it (heard, not down or left). */
	if (p && !ics_live(READ_ONCE(p->state)))
		p = NULL;
	if (p) {
		ether_addr_copy(addr, p->addr);
		heard = div_u64(ics_silent_ns(p, ktime_get_ns()), NSEC_PER_MSEC);
		rx_key = READ_ONCE(p->rx_key);
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
	    (p && nla_put_u8(skb, ICS_NODE_A_RX_KEY, rx_key)) ||
	    nla_put_u64_64bit(skb, ICS_NODE_A_TX_MSGS, ns.tx_msgs, ICS_NODE_A_PAD) ||
	    nla_put_u64_64bit(skb, ICS_NODE_A_TX_BYTES, ns.tx_bytes, ICS_NODE_A_PAD) ||
	    nla_put_u64_64bit(skb, ICS_NODE_A_RX_MSGS, ns.rx_msgs, ICS_NODE_A_PAD) ||
	    nla_put_u64_64bit(skb, ICS_NODE_A_RX_BYTES, ns.rx_bytes, ICS_NODE_A_PAD))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/* A snapshot of a link, taken under its locks, put without them. */
struct ics_link_info {
	u32 tx_sess, rx_sess, snd_una, snd_nxt, rcv_nxt, cwnd, ssthresh, srtt_us, rttvar_us;
	u32 rto_ms, mtu, queued_msgs, ooo, peer_paused;
	u64 queued_bytes, chan_bytes[ICS_CHANNELS];
	u64 tx_frames, retransmits, fast_retransmits, timeouts, rx_frames, duplicates;
	u64 out_of_order, crc_errors, tx_acks, rx_acks, resets, msgs_done, msgs_failed;
};

static void ics_link_snapshot(struct ics_peer *p, struct ics_link_info *li)
{
	struct ics_link *l = &p->link;
	int ch;

	spin_lock_bh(&l->tx_lock);
	li->tx_sess = l->tx_sess;
	li->snd_una = l->snd_una;
	li->snd_nxt = l->snd_nxt;
	li->cwnd = ics_window(p);
	li->ssthresh = l->ssthresh;
	li->srtt_us = l->srtt_us;
	li->rttvar_us = l->rttvar_us;
	li->rto_ms = l->rto_ms;
	li->queued_msgs = l->queued_msgs;
	li->queued_bytes = l->queued_bytes;
	for (ch = 0; ch < ICS_CHANNELS; ch++)
		li->chan_bytes[ch] = l->q[ch].bytes;
	li->tx_frames = l->tx_frames;
	li->retransmits = l->retransmits;
	li->fast_retransmits = l->fast_retransmits;
	li->timeouts = l->timeouts;
	li->rx_acks = l->rx_acks;
	li->resets = l->resets;
	li->msgs_done = l->msgs_done;
	li->msgs_failed = l->msgs_failed;
	li->peer_paused = l->peer_paused;
	spin_unlock_bh(&l->tx_lock);

	spin_lock_bh(&p->lock);
	li->rx_sess = l->rx_sess;
	li->rcv_nxt = l->rcv_nxt;
	li->ooo = skb_queue_len(&l->ooo);
	li->rx_frames = l->rx_frames;
	li->duplicates = l->duplicates;
	li->out_of_order = l->out_of_order;
	li->crc_errors = l->crc_errors;
	li->tx_acks = l->tx_acks;
	spin_unlock_bh(&p->lock);
	li->mtu = ics_link_mtu(p);
}

#define ICS_PUT_LINK_U32(attr, v) nla_put_u32(skb, ICS_LINK_A_##attr, li->v)
#define ICS_PUT_LINK_U64(attr, v) nla_put_u64_64bit(skb, ICS_LINK_A_##attr, li->v, ICS_LINK_A_PAD)

static int ics_nl_put_link(struct sk_buff *skb, struct ics_net *in, unsigned int id,
			   bool *skip)
{
	struct ics_link_info info, *li = &info;
	struct nlattr *nest, *q;
	struct ics_bind *b;
	struct ics_peer *p;
	int ch;

	/* Peers are freed only after an RCU grace period (ics_unbind()). */
	rcu_read_lock();
	b = rcu_dereference(in->bind);
	p = b ? rcu_dereference(b->peers[id]) : NULL;
	if (p)
		ics_link_snapshot(p, li);
	rcu_read_unlock();
	*skip = !p;
	if (!p)
		return 0;

	nest = nla_nest_start(skb, ICS_A_LINK);
	if (!nest ||
	    nla_put_u32(skb, ICS_LINK_A_NODE, id) ||
	    ICS_PUT_LINK_U32(TX_SESSION, tx_sess) ||
	    ICS_PUT_LINK_U32(RX_SESSION, rx_sess) ||
	    ICS_PUT_LINK_U32(SND_UNA, snd_una) ||
	    ICS_PUT_LINK_U32(SND_NXT, snd_nxt) ||
	    ICS_PUT_LINK_U32(RCV_NXT, rcv_nxt) ||
	    ICS_PUT_LINK_U32(CWND, cwnd) ||
	    ICS_PUT_LINK_U32(SSTHRESH, ssthresh) ||
	    nla_put_u32(skb, ICS_LINK_A_INFLIGHT, li->snd_nxt - li->snd_una) ||
	    ICS_PUT_LINK_U32(SRTT_US, srtt_us) ||
	    ICS_PUT_LINK_U32(RTTVAR_US, rttvar_us) ||
	    ICS_PUT_LINK_U32(RTO_MS, rto_ms) ||
	    ICS_PUT_LINK_U32(MTU, mtu) ||
	    ICS_PUT_LINK_U32(QUEUED_MSGS, queued_msgs) ||
	    ICS_PUT_LINK_U64(QUEUED_BYTES, queued_bytes) ||
	    ICS_PUT_LINK_U32(PEER_PAUSED, peer_paused))
		return -EMSGSIZE;
	q = nla_nest_start(skb, ICS_LINK_A_QUEUE);
	if (!q)
		return -EMSGSIZE;
	for (ch = 0; ch < ICS_CHANNELS; ch++)
		if (nla_put_u64_64bit(skb, ch + 1, li->chan_bytes[ch], ICS_CHANNELS + 1))
			return -EMSGSIZE;
	nla_nest_end(skb, q);
	if (ICS_PUT_LINK_U32(OOO_QUEUED, ooo) ||
	    ICS_PUT_LINK_U64(TX_FRAMES, tx_frames) ||
	    ICS_PUT_LINK_U64(RETRANSMITS, retransmits) ||
	    ICS_PUT_LINK_U64(FAST_RETRANSMITS, fast_retransmits) ||
	    ICS_PUT_LINK_U64(TIMEOUTS, timeouts) ||
	    ICS_PUT_LINK_U64(RX_FRAMES, rx_frames) ||
	    ICS_PUT_LINK_U64(DUPLICATES, duplicates) ||
	    ICS_PUT_LINK_U64(OUT_OF_ORDER, out_of_order) ||
	    ICS_PUT_LINK_U64(CRC_ERRORS, crc_errors) ||
	    ICS_PUT_LINK_U64(TX_ACKS, tx_acks) ||
	    ICS_PUT_LINK_U64(RX_ACKS, rx_acks) ||
	    ICS_PUT_LINK_U64(RESETS, resets) ||
	    ICS_PUT_LINK_U64(MSGS_DONE, msgs_done) ||
	    ICS_PUT_LINK_U64(MSGS_FAILED, msgs_failed))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

#define ICS_PUT_MEMBER_U32(attr, v) nla_put_u32(skb, ICS_MEMBER_A_##attr, mi.v)
#define ICS_PUT_MEMBER_U64(attr, v) \
	nla_put_u64_64bit(skb, ICS_MEMBER_A_##attr, mi.v, ICS_MEMBER_A_PAD)

/* Entry @idx of the view (0: us); skipped when there is none. */
static int ics_nl_put_member(struct sk_buff *skb, struct ics_net *in, unsigned int idx,
			     bool *skip)
{
	struct ics_member_info mi;
	struct nlattr *nest;

	*skip = !ics_member_info(in, idx, &mi);
	if (*skip)
		return 0;
	nest = nla_nest_start(skb, ICS_A_MEMBER);
	if (!nest ||
	    ICS_PUT_MEMBER_U32(NODE, node) ||
	    nla_put_u8(skb, ICS_MEMBER_A_SELF, mi.self) ||
	    nla_put_u8(skb, ICS_MEMBER_A_STATE, mi.state) ||
	    nla_put_u8(skb, ICS_MEMBER_A_REASON, mi.reason) ||
	    ICS_PUT_MEMBER_U32(INCARNATION, incarnation) ||
	    ICS_PUT_MEMBER_U32(VOTES, votes) ||
	    nla_put(skb, ICS_MEMBER_A_ADDRESS, ETH_ALEN, mi.addr) ||
	    ICS_PUT_MEMBER_U32(HEARTBEAT_MS, hb_ms) ||
	    ICS_PUT_MEMBER_U64(SINCE_NS, since_ns))
		return -EMSGSIZE;
	if (!mi.self &&
	    (ICS_PUT_MEMBER_U64(LAST_HEARD_NS, last_heard_ns) ||
	     ICS_PUT_MEMBER_U64(HB_RX, hb_rx) ||
	     ICS_PUT_MEMBER_U64(HB_MISSED, hb_missed) ||
	     ICS_PUT_MEMBER_U32(HB_RTT_US, hb_rtt_us) ||
	     nla_put_u8(skb, ICS_MEMBER_A_SEES_US, mi.sees_us) ||
	     ICS_PUT_MEMBER_U64(CONFLICTS, conflicts) ||
	     (mi.conflicts &&
	      nla_put(skb, ICS_MEMBER_A_CONFLICT_ADDRESS, ETH_ALEN, mi.conflict_addr))))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/*
 * Dumps: cb->args[0] is the next channel, node, or node * ICS_CHANNELS +
 * channel (GET_PEER_CHANNELS); cb->seq the instance's
 * generation, so a reset, bind or unbind during the dump sets NLM_F_DUMP_INTR
 * (for the members: a change of the view).
 */
static int ics_nl_dump(struct sk_buff *skb, struct netlink_callback *cb, u8 cmd,
		       unsigned int first, unsigned int last)
{
	struct ics_net *in = ics_net(sock_net(skb->sk));
	unsigned long i = max_t(unsigned long, cb->args[0], first);
	bool skip = false;
	void *hdr;
	int err;

	cb->seq = cmd == ICS_CMD_GET_MEMBERS ? READ_ONCE(in->generation) : atomic_read(&in->gen);
	if (!cb->seq)
		cb->seq = 1;	/* 0 would turn the consistency check off */
	for (; i <= last; i++) {
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				  &ics_family, NLM_F_MULTI, cmd);
		if (!hdr)
			break;
		genl_dump_check_consistent(cb, hdr);
		if (cmd == ICS_CMD_GET_CHANNELS)
			err = ics_nl_put_channel(skb, in, i);
		else if (cmd == ICS_CMD_GET_NODES)
			err = ics_nl_put_node(skb, in, i, &skip);
		else if (cmd == ICS_CMD_GET_MEMBERS)
			err = ics_nl_put_member(skb, in, i, &skip);
		else if (cmd == ICS_CMD_GET_PEER_CHANNELS)
			err = ics_nl_put_peer_channel(skb, in, i, &skip);
		else
			err = ics_nl_put_link(skb, in, i, &skip);
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

static int ics_nl_dump_links(struct sk_buff *skb, struct netlink_callback *cb)
{
	return ics_nl_dump(skb, cb, ICS_CMD_GET_LINKS, 1, ICS_MAX_NODES);
}

static int ics_nl_dump_peer_channels(struct sk_buff *skb, struct netlink_callback *cb)
{
	return ics_nl_dump(skb, cb, ICS_CMD_GET_PEER_CHANNELS, ICS_CHANNELS,
			   (ICS_MAX_NODES + 1) * ICS_CHANNELS - 1);
}

static int ics_nl_dump_members(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct ics_net *in = ics_net(sock_net(skb->sk));

	if (!cb->args[0] && !rcu_access_pointer(in->bind)) {
		NL_SET_ERR_MSG_MOD(cb->extack, "instance is not bound");
		return -ENOTCONN;
	}
	return ics_nl_dump(skb, cb, ICS_CMD_GET_MEMBERS, 0, ICS_MAX_NODES);
}

/* A membership event to the "events" group of the instance's netns. */
void ics_nl_event(struct ics_net *in, const struct ics_event *ev)
{
	struct sk_buff *msg;
	struct nlattr *nest;
	void *hdr;

	mutex_lock(&ics_nl_ev_lock);
	if (!ics_nl_up || !genl_has_listeners(&ics_family, in->net, ICS_MCGRP_EVENTS_IDX))
		goto out;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		goto lost;
	hdr = genlmsg_put(msg, 0, 0, &ics_family, 0, ICS_CMD_EVENT);
	nest = hdr ? nla_nest_start(msg, ICS_A_EVENT) : NULL;
	if (!nest ||
	    nla_put_u8(msg, ICS_EVENT_A_TYPE, ev->type) ||
	    nla_put_u64_64bit(msg, ICS_EVENT_A_TIME_NS, ev->time_ns, ICS_EVENT_A_PAD) ||
	    nla_put_u64_64bit(msg, ICS_EVENT_A_REALTIME_NS, ev->real_ns, ICS_EVENT_A_PAD) ||
	    nla_put_u32(msg, ICS_EVENT_A_GENERATION, ev->generation) ||
	    nla_put_u32(msg, ICS_EVENT_A_NODE, ev->node) ||
	    nla_put_u32(msg, ICS_EVENT_A_CURRENT_VOTES, ev->current_votes) ||
	    nla_put_u32(msg, ICS_EVENT_A_EXPECTED_VOTES, ev->expected_votes) ||
	    nla_put_u32(msg, ICS_EVENT_A_QUORUM, ev->quorum) ||
	    nla_put_u8(msg, ICS_EVENT_A_HAS_QUORUM, ev->has_quorum) ||
	    nla_put_u32(msg, ICS_EVENT_A_LOST, ev->lost))
		goto free;
	if ((ev->type == ICS_EVENT_NODE &&
	     (nla_put_u8(msg, ICS_EVENT_A_OLD_STATE, ev->old_state) ||
	      nla_put_u8(msg, ICS_EVENT_A_STATE, ev->state) ||
	      nla_put_u8(msg, ICS_EVENT_A_REASON, ev->reason) ||
	      nla_put_u32(msg, ICS_EVENT_A_SILENT_MS, ev->silent_ms))) ||
	    ((ev->type == ICS_EVENT_NODE || ev->type == ICS_EVENT_BOUND) &&
	     nla_put_u32(msg, ICS_EVENT_A_INCARNATION, ev->incarnation)) ||
	    ((ev->type == ICS_EVENT_NODE || ev->type == ICS_EVENT_CONFLICT) &&
	     nla_put(msg, ICS_EVENT_A_ADDRESS, ETH_ALEN, ev->addr)))
		goto free;
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	genlmsg_multicast_netns(&ics_family, in->net, msg, 0, ICS_MCGRP_EVENTS_IDX, GFP_KERNEL);
	goto out;
free:
	nlmsg_free(msg);
lost:
	ics_count(in, ICS_STAT_EVENTS_LOST);
out:
	mutex_unlock(&ics_nl_ev_lock);
}

static const struct genl_small_ops ics_ops[] = {
	{ .cmd = ICS_CMD_GET_INSTANCE, .doit = ics_nl_get_instance },
	{ .cmd = ICS_CMD_BIND, .doit = ics_nl_bind, .flags = GENL_UNS_ADMIN_PERM },
	{ .cmd = ICS_CMD_UNBIND, .doit = ics_nl_unbind, .flags = GENL_UNS_ADMIN_PERM },
	{ .cmd = ICS_CMD_RESET_STATS, .doit = ics_nl_reset, .flags = GENL_UNS_ADMIN_PERM },
	{ .cmd = ICS_CMD_GET_CHANNELS, .dumpit = ics_nl_dump_channels },
	{ .cmd = ICS_CMD_GET_NODES, .dumpit = ics_nl_dump_nodes },
	{ .cmd = ICS_CMD_GET_LINKS, .dumpit = ics_nl_dump_links },
	{ .cmd = ICS_CMD_SET_CHANNEL, .doit = ics_nl_set_channel, .flags = GENL_UNS_ADMIN_PERM },
	{ .cmd = ICS_CMD_SET_INSTANCE, .doit = ics_nl_set_instance, .flags = GENL_UNS_ADMIN_PERM },
	{ .cmd = ICS_CMD_GET_MEMBERS, .dumpit = ics_nl_dump_members },
	{ .cmd = ICS_CMD_KEY_ADD, .doit = ics_nl_key_add, .flags = GENL_UNS_ADMIN_PERM },
	{ .cmd = ICS_CMD_KEY_DEL, .doit = ics_nl_key_del, .flags = GENL_UNS_ADMIN_PERM },
	{ .cmd = ICS_CMD_KEY_USE, .doit = ics_nl_key_use, .flags = GENL_UNS_ADMIN_PERM },
	{ .cmd = ICS_CMD_GET_PEER_CHANNELS, .dumpit = ics_nl_dump_peer_channels },
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
	.mcgrps = ics_mcgrps,
	.n_mcgrps = ARRAY_SIZE(ics_mcgrps),
	.resv_start_op = ICS_CMD_GET_INSTANCE,	/* strict validation everywhere */
};

int __init ics_genl_init(void)
{
	int err = genl_register_family(&ics_family);

	if (!err) {
		mutex_lock(&ics_nl_ev_lock);
		ics_nl_up = true;
		mutex_unlock(&ics_nl_ev_lock);
	}
	return err;
}

void ics_genl_exit(void)
{
	mutex_lock(&ics_nl_ev_lock);
	ics_nl_up = false;
	mutex_unlock(&ics_nl_ev_lock);
	genl_unregister_family(&ics_family);
}
