/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ics internals. Object model and lifetimes (Documentation/design.rst has
 * the long form):
 *
 *   struct ics_net     one per network namespace, from netns creation (or
 *                      module load) to netns exit (or unload). Owns the
 *                      counters and the channel handlers, so both survive
 *                      binding and unbinding.
 *   struct ics_bind    exists while the instance is bound to a NIC. Published
 *                      in ics_net.bind under RTNL, read under RCU. Unbinding
 *                      unpublishes it, waits for every reader (dev_remove_pack()
 *                      and synchronize_net()), stops its timer, then frees it
 *                      and its peers directly: nothing can reach them any more.
 *   struct ics_peer    a node heard on the bound NIC: node id -> MAC. Created
 *                      by the receive path, immutable after publication but
 *                      for last_heard and its reassembly list (peer->lock).
 *                      Replaced (kfree_rcu) when a silent node reappears with
 *                      a new MAC.
 *
 * Locks: RTNL serialises bind/unbind and the netdev notifier; stats_lock
 * the reset baseline; reg_lock handler registration; bind->peers_lock peer
 * creation; peer->lock a peer's reassembly list. No lock is nested in another
 * except RTNL -> stats_lock. The data path takes only peer->lock, and only for
 * fragmented messages.
 */
#ifndef _ICS_INTERNAL_H
#define _ICS_INTERNAL_H

#include <linux/etherdevice.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <net/ics.h>

#include "compat.h"

#define ICS_HDR_LEN	sizeof(struct ics_wire_hdr)
#define ICS_HELLO_LEN	sizeof(struct ics_wire_hello)

/* Every counter is a u64 so that summing and resetting are one loop. */
struct ics_dir_stats {
	u64 msgs;
	u64 bytes;
	u64 hist[ICS_HIST_ROWS];
};

struct ics_chan_stats {
	struct ics_dir_stats tx;
	struct ics_dir_stats rx;
	u64 rx_unclaimed;
	u64 rx_pattern_ok;
	u64 rx_pattern_bad;
};

struct ics_node_stats {
	u64 tx_msgs;
	u64 tx_bytes;
	u64 rx_msgs;
	u64 rx_bytes;
};

struct ics_stats {
	struct ics_chan_stats chan[ICS_CHANNELS];
	struct ics_node_stats node[ICS_MAX_NODES + 1];
	u64 ctr[__ICS_STAT_LAST];
};

struct ics_net {
	struct net *net;
	struct ics_bind __rcu *bind;	/* RTNL */
	u8 state;			/* enum ics_state, RTNL */
	u32 bind_seq;			/* RTNL: numbers each binding */
	atomic_t gen;			/* bumps on bind, unbind, reset: dumps */

	struct ics_stats __percpu *stats;	/* only ever grow */
	struct mutex stats_lock;	/* protects base and reset_time */
	struct ics_stats *base;		/* values at the last reset */
	u64 reset_time;			/* ktime_get_ns() of load or reset */

	struct mutex reg_lock;		/* handler registration */
	struct ics_handler __rcu *handlers[ICS_CHANNELS];
};

struct ics_bind {
	struct ics_net *in;
	struct net_device *dev;
	netdevice_tracker dev_tracker;
	struct packet_type pt;
	u32 seq;			/* ics_net.bind_seq at bind */
	u8 node_id;
	u32 cluster_id;
	u32 incarnation;
	atomic_t bcast_msg_id;
	struct timer_list timer;	/* hello and reassembly expiry */
	atomic_long_t reasm_mem;	/* truesize held in reassembly */
	spinlock_t peers_lock;		/* creating/replacing peers */
	struct ics_peer __rcu *peers[ICS_MAX_NODES + 1];
};

struct ics_peer {
	u8 node_id;
	u8 addr[ETH_ALEN];
	unsigned long last_heard;	/* jiffies; READ_ONCE/WRITE_ONCE */
	u32 incarnation;		/* under lock */
	atomic_t tx_msg_id;
	spinlock_t lock;		/* reasm, nr_reasm, incarnation, dead */
	struct list_head reasm;
	unsigned int nr_reasm;
	bool dead;			/* replaced or unbound: no new reassembly */
	struct rcu_head rcu;
};

/* A message being sent: ics_xmit() cuts it into frames. */
struct ics_txmsg {
	u8 node;		/* destination or ICS_NODE_BROADCAST */
	u8 channel;
	u8 type;		/* enum ics_frame_type */
	u8 flags;		/* ICS_WF_* */
	u32 len;
	/* set by ics_xmit() before the first fill() */
	u8 src;
	u32 msg_id;
	/* copies [off, off + n) of the message to @to */
	int (*fill)(const struct ics_txmsg *m, void *to, u32 off, u32 n);
	const void *data;	/* for ics_fill_buf() */
};

/* Module parameters (main.c). */
extern unsigned int ics_hello_ms;
extern unsigned int ics_reasm_timeout_ms;
extern unsigned long ics_reasm_mem_max;

/* main.c */
struct ics_net *ics_net(const struct net *net);

/* bind.c */
int ics_bind(struct ics_net *in, struct net_device *dev, u32 node_id, u32 cluster_id,
	     struct netlink_ext_ack *extack);
int ics_unbind(struct ics_net *in, const char *why);

/* stats.c */
int ics_stats_init(struct ics_net *in);
void ics_stats_free(struct ics_net *in);
void ics_stats_sum(struct ics_net *in, size_t off, size_t n, u64 *out);
void ics_stats_reset(struct ics_net *in);

#define ics_stats_get(in, field, out)					\
	ics_stats_sum(in, offsetof(struct ics_stats, field),		\
		      sizeof(*(out)) / sizeof(u64), (u64 *)(out))

static inline void ics_count(struct ics_net *in, enum ics_stat s)
{
	this_cpu_inc(in->stats->ctr[s]);
}

/* A frame is counted once it is accepted: delivered, held or a hello. */
static inline void ics_count_rx_frame(struct ics_net *in, u32 frame_len)
{
	this_cpu_inc(in->stats->ctr[ICS_STAT_RX_FRAMES]);
	this_cpu_add(in->stats->ctr[ICS_STAT_RX_BYTES], frame_len);
}

static inline unsigned int ics_row(u32 n)
{
	return n ? min_t(unsigned int, fls(n - 1) + 1, ICS_HIST_ROW_MORE) : 0;
}

static inline void ics_count_dir(struct ics_dir_stats __percpu *d, u32 len)
{
	this_cpu_inc(d->msgs);
	this_cpu_add(d->bytes, len);
	this_cpu_inc(d->hist[ics_row(len)]);
}

/* tx.c */
int ics_xmit(struct ics_net *in, struct ics_txmsg *m, gfp_t gfp);
int ics_fill_buf(const struct ics_txmsg *m, void *to, u32 off, u32 n);

/* rx.c */
int ics_rcv(struct sk_buff *skb, struct net_device *dev, struct packet_type *pt,
	    struct net_device *orig_dev);
void ics_deliver(struct ics_net *in, u8 src, u8 channel, u8 flags, u32 msg_id,
		 struct sk_buff *skb);

/* peer.c */
struct ics_peer *ics_peer_lookup(struct ics_bind *b, u8 node, const u8 *addr, bool *created);
void ics_peers_free(struct ics_bind *b);

/* reasm.c */
struct ics_frag {
	u32 frame_len;		/* ics header + payload, for rx_bytes */
	u32 msg_id;
	u32 msg_len;
	u32 off;
	u8 channel;
	u8 flags;
};

void ics_reasm_rcv(struct ics_bind *b, struct ics_peer *p, struct sk_buff *skb,
		   const struct ics_frag *f);
enum ics_reasm_flush {
	ICS_REASM_IDLE,		/* drop partial messages idle past the timeout */
	ICS_REASM_ALL,		/* drop all: the peer restarted */
	ICS_REASM_CLOSE,	/* drop all and take no more: the peer is going */
};

void ics_reasm_flush(struct ics_bind *b, struct ics_peer *p, enum ics_reasm_flush how);

/* hello.c */
void ics_hello_send(struct ics_bind *b, u8 node, u32 flags, gfp_t gfp);
void ics_hello_rcv(struct ics_bind *b, struct ics_peer *p, bool created, struct sk_buff *skb,
		   u32 frame_len);
void ics_timer(struct timer_list *t);

/* testgen.c */
u32 ics_pattern_seed(u8 src, u8 channel, u32 msg_id, u32 len);
bool ics_pattern_check(struct sk_buff *skb, u32 seed);
int ics_testgen(struct ics_net *in, u8 node, u8 channel, u32 size, u32 count, u32 *sent);

/* netlink.c */
int ics_genl_init(void);
void ics_genl_exit(void);

#endif /* _ICS_INTERNAL_H */
