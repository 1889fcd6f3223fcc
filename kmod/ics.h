/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ics internals. Object model and lifetimes (Documentation/design.rst has
 * the long form):
 *
 *   struct ics_net     one per network namespace, from netns creation (or
 *                      module load) to netns exit (or unload). Owns the
 *                      counters, channel handlers and priorities, and the
 *                      wait queues of blocked senders, so all survive binding
 *                      and unbinding; what costs memory (counters, event
 *                      ring, wait queues) is allocated when the instance is
 *                      first used (ics_net_use()), not with the netns.
 *   struct ics_bind    exists while the instance is bound to a NIC. Published
 *                      in ics_net.bind under RTNL, read under RCU. Unbinding
 *                      unpublishes it, waits for every reader (dev_remove_pack()
 *                      and synchronize_net()), stops its timers, fails what
 *                      its links still hold, then frees it and its peers.
 *   struct ics_peer    a node heard on the bound NIC, its membership state
 *                      and the link to it (both directions, struct
 *                      ics_link). Created by the receive path, lives until
 *                      unbind, whatever its state (down and left included);
 *                      a node that comes back from a new MAC keeps its peer.
 *   struct ics_msg     a message on a link's send side, from ics_send_msg()
 *                      until the peer's handler took it (every frame
 *                      acknowledged, then an ACK says so) or it fails; then
 *                      its sender is told, exactly once, and it is freed.
 *
 * Locks, outermost first:
 *   RTNL               bind/unbind, the netdev notifier
 *   stats_lock         the reset baseline (taken under RTNL)
 *   reg_lock           handler registration
 *   member_lock        the membership view of an instance (member.c): every
 *                      peer's state and heartbeat fields, the generation,
 *                      quorum, the event queue. Taken per heartbeat, per
 *                      timer tick and per view change, never per data frame.
 *   peer->lock         the receive side of a link: rcv_nxt, the out-of-order
 *                      queue, reassembly; incarnation and state are written
 *                      under it too (and member_lock), so a frame checked
 *                      under it belongs to the peer as it is now. Held while
 *                      a message is delivered, which keeps delivery in order.
 *   link->tx_lock      the send side of a link: queues, window, RTT. May be
 *                      taken under any peer->lock (a handler that replies
 *                      from its rcv()), never the other way round.
 *   bind->peers_lock   peer creation (leaf; the reset of the tables of a
 *                      node without a peer, under RTNL)
 * The data path takes one peer's locks and nothing global.
 */
#ifndef _ICS_INTERNAL_H
#define _ICS_INTERNAL_H

#include <linux/etherdevice.h>
#include <linux/log2.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/notifier.h>
#include <linux/percpu.h>
#include <linux/siphash.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/u64_stats_sync.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <net/ics.h>

#include "compat.h"

#define ICS_HDR_LEN	sizeof(struct ics_wire_hdr)
#define ICS_HELLO_LEN	sizeof(struct ics_wire_hello)
#define ICS_ACK_LEN	sizeof(struct ics_wire_ack)
#define ICS_RX_WINDOW	ICS_SACK_BITS	/* frames a receiver holds past a gap */
#define ICS_WINDOW_MAX	ICS_SACK_BITS	/* frames in flight per link, at most */
#define ICS_EVENT_RING	128		/* membership events waiting for the worker */

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
};

struct ics_node_stats {
	u64 tx_msgs;
	u64 tx_bytes;
	u64 rx_msgs;
	u64 rx_bytes;
};

/*
 * Data messages per node and channel (GET_PEER_CHANNELS; summed over the
 * channels, the node counters of GET_NODES), counted where the peer's lock
 * is held anyway: sends under link.tx_lock (ics_enqueue()), receptions
 * under peer->lock (ics_deliver()). One writer per direction, so
 * u64_stats_t (a plain add on 64-bit) needs no seqcount there; netlink
 * reads without a lock (32-bit could tear a count, as stats.c says); a
 * reset takes the writer's lock (ics_node_chans_reset()). A direction of
 * a channel has a cache line of its own (232 bytes, padded to 256), a
 * direction of all channels one 4 KiB allocation, made with the node's
 * first peer and kept until netns exit, so the counts survive unbind.
 */
struct ics_node_dir {
	u64_stats_t msgs;
	u64_stats_t bytes;
	u64_stats_t hist[ICS_HIST_ROWS];
} ____cacheline_aligned;

struct ics_node_chans {
	struct ics_node_dir ch[ICS_CHANNELS];
};

enum { ICS_TX, ICS_RX };

static_assert(sizeof(struct ics_node_chans) == 4096);

/* A node's tables, by direction; each set once (cmpxchg), NULL before. */
struct ics_node_tables {
	struct ics_node_chans *dir[2];
};

struct ics_stats {
	struct ics_chan_stats chan[ICS_CHANNELS];
	u64 ctr[__ICS_STAT_LAST];
};

/* An installed cluster key (key.c): RTNL to change, RCU to read. */
struct ics_key {
	u64 gen;			/* ics_net.key_gen when it was added */
	u8 id;
	u8 fpr[ICS_KEY_FPR_LEN];
	u8 key[ICS_KEY_LEN];
};

/* The sender key of key @id (@gen) for our binding (@inc, @salt) (auth.c). */
struct ics_txkey {
	struct rcu_head rcu;
	u64 gen, salt;
	u32 inc;
	u8 id;
	u8 sk[ICS_KEY_LEN];
};

struct ics_net {
	struct net *net;
	struct ics_bind __rcu *bind;	/* RTNL */
	u8 state;			/* enum ics_state, RTNL */
	u32 bind_seq;			/* RTNL: numbers each binding */
	atomic_t gen;			/* bumps on bind, unbind, reset: dumps */

	/*
	 * From the first bind or handler registration (ics_net_use(), under
	 * stats_lock) to netns exit; NULL before. Only code that runs for a
	 * bound instance or a registered handler touches them unlocked.
	 */
	struct ics_stats __percpu *stats;	/* only ever grow */
	struct ics_node_tables *nodes;	/* [node id] */
	wait_queue_head_t *tx_wq;	/* [node]: senders waiting for room to it */
	struct mutex stats_lock;	/* the above's allocation, base, reset_time */
	struct ics_stats *base;		/* values at the last reset */
	u64 reset_time;			/* ktime_get_ns() of load or reset */

	struct mutex reg_lock;		/* handler registration */
	struct ics_handler __rcu *handlers[ICS_CHANNELS];

	u8 prio[ICS_CHANNELS];		/* send priority: READ_ONCE; genl writes */

	/* membership (member.c); member_lock unless said otherwise */
	spinlock_t member_lock;
	u32 hb_ms, hb_misses, votes, expected_cfg;	/* tunables: READ_ONCE to read */
	u32 generation;			/* +1 per view change; never goes back */
	u32 last_incarnation;		/* RTNL: the last one we bound with */
	u32 peak_votes;			/* most votes present at once since bind */
	u32 cur_votes, expected, quorum;
	bool has_quorum;
	struct ics_event *ev_ring;	/* ICS_EVENT_RING entries */
	u32 ev_head, ev_tail, ev_lost;
	struct work_struct ev_work;	/* emits the queued events, in order */
	struct blocking_notifier_head notifier;	/* in-kernel event listeners */

	/* flow control (flow.c) */
	/* gen << 48 | held << 32 | waiting << 16 | paused (flow.c) */
	atomic64_t pause;
	atomic_t resumes[ICS_CHANNELS];	/* resume calls per channel (flow.c) */
	/* held_lock: peers holding messages on the channel (flow.c) */
	spinlock_t held_lock;
	u8 held_peers[ICS_CHANNELS];
	/* tells the peers of a resume, offers held messages again (flow.c) */
	struct work_struct pause_work;
	bool pause_tick;		/* xchg: pause_work queued by a heartbeat */
	/* reg_lock: when a channel its handler left stops waiting (flow.c) */
	unsigned long gone_until[ICS_CHANNELS];
	struct delayed_work gone_work;	/* resumes those channels then */

	/* cluster keys (key.c): RTNL to change; READ_ONCE, RCU to read */
	struct ics_key __rcu *keys[ICS_KEYS_MAX];
	struct ics_txkey __rcu *txk;	/* key_tx's sender key: RTNL, RCU to read */
	u64 key_gen;			/* keys added so far, RTNL */
	u8 key_tx;			/* the id of the key we sign with, 0: none */
	u8 auth_mode;			/* enum ics_auth_mode */
};

/*
 * Our receive path on one CPU (member.c): the marker frame that a failure
 * check has a timer put on that CPU's receive queue, to see whether the
 * queue holds frames. Per binding, freed at unbind once the probe timers
 * are shut down and ics_rcv() cannot run.
 */
struct ics_rx_cpu {
	/* the marker's state: the arming check, the probe, ics_rx_marker() */
	spinlock_t lock;
	struct ics_bind *b;
	unsigned long due;		/* when the marker's timer expires */
	unsigned long late;		/* how late the last marker arrived, in jiffies */
	u32 gen;			/* the check episode it was sent in */
	u32 seq;			/* the marker under way, or the last */
	u32 cpu;			/* this one: its timer may run elsewhere */
	bool armed;			/* under way, not arrived */
	struct timer_list probe;	/* puts the marker on this CPU's queue */
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
	struct timer_list timer;	/* heartbeats, failure detection, reassembly expiry */
	struct timer_list check_timer;	/* a failure detection deferred (member.c) */
	u64 defer_ns;			/* member_lock: since when it is deferred, or 0 */
	u32 defer_gen;			/* member_lock: deferral episodes, for the markers */
	bool defer_held;		/* member_lock: this one counted in hb_deferred */
	struct ics_rx_cpu __percpu *rx_cpu;	/* member.c: markers through our receive path */
	u64 rx_cookie;			/* marks our marker frames (random) */
	siphash_key_t hello_key;	/* our heartbeats' nonces (member.c) */
	u64 salt;			/* auth.c: in every signed frame (random) */
	atomic64_t bcast_ctr;		/* auth.c: counter of signed broadcasts */
	u32 hb_seq;			/* member_lock: our last periodic heartbeat */
	u8 echo_next;			/* member_lock: round robin of heartbeat echoes */
	u64 conflict_ns;		/* member_lock: last conflict event for our id */
	u64 bound_ns;			/* when bound (CLOCK_MONOTONIC) */
	atomic_long_t reasm_mem;	/* truesize held in reassembly */
	/* of which large messages' (reasm.c), reserved at their first fragment */
	atomic_long_t reasm_large;
	u64 reasm_wanted_ns;		/* a large message last refused memory; racy */
	spinlock_t peers_lock;		/* creating peers */
	struct ics_peer __rcu *peers[ICS_MAX_NODES + 1];
};

/* A frame sent and not yet acknowledged: where its bytes come from. */
struct ics_txframe {
	struct ics_msg *msg;		/* a bundle's first message */
	u32 off;
	u16 len;
	u16 bundle;			/* messages in a bundle (from msg on in link.sent); 0 */
	u8 sacked:1;		/* the receiver holds it (SACK) */
	u8 rexmit:1;		/* sent more than once: see ics_frame_rtt() */
	u8 last:1;		/* the message's last frame */
	u64 sent_ns;		/* last transmission */
};

struct ics_chanq {
	struct list_head pending;	/* messages not yet cut into frames */
	/*
	 * Acknowledged, but the peer's handler has not taken them yet (it
	 * holds them, link_rx.c): still charged, in msg_id order.
	 */
	struct list_head landed;
	u64 bytes;			/* queued + unacknowledged + landed bytes */
};

/*
 * The link to one peer. Send side under tx_lock; receive side under the
 * peer's lock. Fields one side reads of the other use READ_ONCE/WRITE_ONCE.
 */
struct ics_link {
	spinlock_t tx_lock;
	struct ics_chanq q[ICS_CHANNELS];
	struct list_head sent;		/* cut, not acknowledged, in seq order */
	u32 tx_sess;			/* 0 until the first frame */
	u32 tx_dst_inc;			/* the peer's incarnation when tx_sess began */
	u32 snd_una, snd_nxt;		/* [snd_una, snd_nxt) in flight */
	u32 recover;			/* in loss recovery until snd_una passes it */
	u32 cwnd, ssthresh;
	u32 round_end;			/* a round trip ends when snd_una passes it */
	u32 round_sum_us, round_n;	/* RTT samples in this round */
	u32 round_base_us;		/* sum of those samples' min_rtt_us */
	u32 delivered;			/* frames acknowledged or SACKed, ever */
	u32 round_delivered;		/* delivered when this round began, */
	u64 round_start_ns;		/* and when */
	/* least RTT sample of small and of big frames, renewed every 10 s */
	u32 min_rtt_us[2];
	unsigned long min_rtt_stamp[2];
	u32 srtt_us, rttvar_us, rto_ms;
	u32 peer_mtu;			/* from its hello; 0 = unknown */
	/* the channels it paused, from its ACKs and heartbeats (flow.c) */
	u16 peer_paused, peer_pause_gen;
	bool peer_pause_known;		/* false: take the next word, whatever its gen */
	unsigned long pause_taken;	/* jiffies: the last word taken */
	u32 next_msg_id[ICS_CHANNELS];	/* per channel: ids are in order there */
	u32 queued_msgs;
	u64 queued_bytes;
	u16 big;			/* largest frame payload in flight */
	/* the large message being cut (reasm.c): one at a time; NULL */
	const struct ics_msg *large;
	bool reorder;			/* rtx_timer runs as reorder timer */
	bool cwnd_limited;		/* the window held frames back this round */
	bool slow_path;			/* too slow for the least window (link_tx.c) */
	u8 fast_rounds;			/* rounds in a row that said it is not */
	u8 rr[ICS_PRIO_LEVELS];		/* round robin within a level */
	u8 starve[ICS_PRIO_LEVELS];	/* frames a waiting level was passed over */
	unsigned long progress;		/* jiffies of the last ack progress */
	struct ics_txframe *ring;	/* in flight, by seq & ring_mask */
	u32 ring_mask;			/* window frames, a power of 2, - 1 */
	struct timer_list rtx_timer;
	/*
	 * Bulk pushes stay on the CPU of the last task that queued a message
	 * on a channel below level 0 (push_cpu, -1: none; a hint, read and
	 * written racily): an ack taken on another CPU pushes urgent frames
	 * itself but hands the rest to push_work there (ics_link_ack_rcv()).
	 */
	int push_cpu;
	struct work_struct push_work;

	/* receive side: peer->lock */
	u32 rx_sess, rcv_nxt;
	u32 rx_refuse;			/* a session whose state we dropped: RESET it */
	u32 rx_unacked;			/* in-order frames not yet acknowledged */
	/* frames that brought nothing since the last that did (link_rx.c) */
	u32 oow_run;
	unsigned long oow_acked;	/* jiffies: the last ACK such a frame drew */
	u32 rx_last_msg[ICS_CHANNELS];	/* last message delivered per channel */
	u16 rx_last_valid;		/* bit per channel */
	/* the two above as they were when the session was joined */
	u32 rx_join_msg[ICS_CHANNELS];
	u16 rx_join_valid;
	unsigned long rx_progress;	/* jiffies: session joined, or a frame taken */
	/* an older session's frames coming since (link_rx.c) */
	u32 rx_stale_sess, rx_stale_n;
	unsigned long rx_stale_since;
	bool rx_resync;			/* ours was not the sender's: join its next */
	struct sk_buff_head ooo;	/* ahead of a gap, by seq */
	struct timer_list ack_timer;	/* delayed acknowledgement */
	u32 pause_sent;			/* the pause word our last ACK carried */
	/*
	 * Messages a handler refused, in order, per channel (link_rx.c); their
	 * charge as the sender counts it (the rest of a bundle: its bytes or
	 * its truesize); the channels with any (READ_ONCE
	 * outside the lock), and of those the ones they keep paused for every
	 * peer (flow.c, ics_pause_held()); those whose held messages were all
	 * taken lately, which ACKs tell; ACKs still to repeat after some were
	 * taken.
	 */
	struct sk_buff_head held[ICS_CHANNELS];
	u64 held_bytes[ICS_CHANNELS];
	u16 rx_held;
	u16 held_pausing;
	u16 told;
	u8 held_echo;
	bool rx_busy;			/* a frame refused for memory: say BUSY */

	/* counters: these under tx_lock, */
	u64 tx_frames, retransmits, fast_retransmits, timeouts, resets;
	u64 msgs_done, msgs_failed, rx_acks;
	/* these under peer->lock (ACK frames are built by the receive side) */
	u64 tx_acks, rx_frames, duplicates, out_of_order, crc_errors;
};

#define ICS_AUTH_KEY_LEN	ICS_KEY_LEN
#define ICS_AUTH_TAG_LEN	16
#define ICS_AUTH_CTR_LIMIT	(1ULL << 48)	/* counters are 48 bits on the wire */
#define ICS_REPLAY_BITS		2048
#define ICS_REPLAY_WINDOW	(ICS_REPLAY_BITS - BITS_PER_LONG)

/* Counters seen from one sender (RFC 6479): the highest, and a ring of bits. */
struct ics_replay {
	u64 top;
	unsigned long bits[ICS_REPLAY_BITS / BITS_PER_LONG];
};

/* The counters of one binding of a sender (its incarnation and salt). */
struct ics_replay_ctx {
	u64 salt;
	u64 since_ns;			/* a claim's: when it took rp_claim */
	u32 inc;
	struct ics_replay uni, bcast;	/* its frames to us, its broadcasts */
};

struct ics_peer {
	struct ics_bind *b;
	u8 node_id;
	u8 addr[ETH_ALEN];		/* changes only when the node moves */
	u64 last_heard_ns;		/* its last frame taken; READ_ONCE/WRITE_ONCE */
	u32 incarnation;		/* written under member_lock, lock, link.tx_lock */
	u8 state;			/* enum ics_member_state, written likewise */
	spinlock_t lock;		/* receive side, see struct ics_link */
	/* b->in->nodes[node_id]'s tables, for ics_count_node() */
	struct ics_node_chans *tx_chans, *rx_chans;
	struct list_head reasm;
	unsigned int nr_reasm;
	bool reasm_large;		/* it has a partial large message */
	u64 data_ns;			/* its last DATA frame of this incarnation; lock */
	bool dead;			/* unbinding: take nothing more */
	/*
	 * Authentication (auth.c): the counter of our signed frames to it,
	 * and the counters seen in its signed frames, under replay_lock: of
	 * the binding membership confirmed (rp_cur), and of the last other
	 * one that sent a heartbeat (rp_claim: a claim, member.c).
	 */
	atomic64_t tx_ctr;
	u8 rx_key;			/* key id of its last frame checked; READ_ONCE */
	spinlock_t replay_lock;
	struct ics_replay_ctx rp_cur, rp_claim;
	struct {			/* its sender key, as last checked */
		u64 gen, salt;		/* gen 0: none */
		u32 inc;
		u8 sk[ICS_KEY_LEN];
	} rxk;

	/* membership: member_lock */
	u8 reason;			/* enum ics_reason of the last change */
	u8 votes;
	bool sees_us;			/* its last heartbeat listed us */
	bool told;			/* we sent it a heartbeat listing it */
	bool echo_pending;		/* its last heartbeat is not echoed yet */
	u32 hb_ms;			/* its heartbeat interval */
	u32 hb_seq;			/* its last periodic heartbeat's number */
	u32 hb_rtt_us;
	u32 echo_ts_us;			/* its last heartbeat's clock */
	u32 echo_nonce;			/* and nonce */
	u64 echo_rx_ns;			/* when that heartbeat arrived */
	u64 since_ns;			/* last state change */
	u64 hb_rx_ns;			/* its last heartbeat taken */
	u64 reply_ns;			/* our last answer to it */
	u64 quick_ns;			/* our last answer at once to a claim's challenge */
	u64 hb_rx, hb_missed;
	u64 conflicts;			/* frames of another MAC claiming its id */
	u8 conflict_addr[ETH_ALEN];
	u64 conflict_ns;		/* last conflict event for it */
	/*
	 * A claim (member.c, ics_claim()): a heartbeat that would make the
	 * node alive or give it another MAC or incarnation, not confirmed yet.
	 */
	u8 claim_addr[ETH_ALEN];
	u32 claim_inc;
	u64 claim_ns;			/* when first heard; 0: none */
	bool claim_answered;		/* we answered its challenge at once */

	struct ics_link link;
};

/*
 * Messages up to this size that are queued behind one another on a channel
 * travel together in one frame (ICS_WF_BUNDLE) when a frame is cut; both
 * ends copy them (link_tx.c, link_rx.c): worth it while a frame's fixed
 * costs (header, CRC setup, qdisc, NIC, an ack's share) are much larger
 * than copying 2 KiB.
 */
#define ICS_BUNDLE_MSG_MAX	2048

/*
 * A message on a link's send side. Up to ICS_COPYBREAK bytes of data follow
 * it and each frame copies its part; a larger message's data is in pages of
 * its own (one per PAGE_SIZE bytes, @paged), and its frames carry
 * references to them instead of copies (link_tx.c). The pages are
 * refcounted, so a frame may outlive the message (in a qdisc, or on veth in
 * the receiver's reassembly) and a retransmission may build it again.
 *
 * The copybreak is the bundle's limit: a bundle copies its messages into
 * the frame anyway, so a page would only cost, the more so as kernels
 * built with init_on_alloc (Debian's) clear every page allocated: 4 KiB
 * cleared and charged for a 1 KiB message. At 256 bytes, a 512 B stream
 * ran at 0.57 of the rate it has now, a 1 KiB stream at 0.70 (user to
 * user, veth at MTU 9000, same boot, 6 alternations).
 */
#define ICS_COPYBREAK	ICS_BUNDLE_MSG_MAX

struct ics_msg {
	struct list_head list;		/* chanq.pending, link.sent, chanq.landed */
	u8 channel;
	u8 node;			/* where it goes */
	bool cut;			/* every frame built once */
	bool paged;			/* data in pages[], not data[] */
	u32 len;
	u32 msg_id;
	u32 next_off;			/* next byte to cut */
	void (*done)(void *ctx, int err);
	void *ctx;
	struct module *owner;		/* @done's, pinned until it returned */
	union {
		DECLARE_FLEX_ARRAY(u8, data);
		DECLARE_FLEX_ARRAY(struct page *, pages);
	};
};

/* Header fields of a frame being built (tx.c). */
struct ics_hdr_args {
	u8 type, flags, channel, dst;
	u32 sess, seq, ack_sess, ack;
	u32 msg_id, msg_len, off;
	u32 dst_inc;			/* unicast: the receiver's incarnation */
};

/* Module parameters (main.c): defaults of every new instance. */
extern unsigned int ics_heartbeat_ms;
extern unsigned int ics_heartbeat_misses;
extern unsigned int ics_votes;
extern unsigned int ics_expected_votes;
extern unsigned int ics_reasm_timeout_ms;
extern unsigned long ics_reasm_mem_max;
extern unsigned int ics_link_timeout_ms;
extern unsigned int ics_handler_wait_ms;
extern unsigned int ics_link_window;
extern unsigned long ics_link_queue_max;
extern unsigned long ics_chan_queue_max;

/* main.c */
struct ics_net *ics_net(const struct net *net);
int ics_net_use(struct ics_net *in);

/* Frames in flight per link: link_window (checked at load) to a power of 2. */
static inline u32 ics_window_frames(void)
{
	return roundup_pow_of_two(ics_link_window);
}

/* bind.c */
int ics_bind(struct ics_net *in, struct net_device *dev, u32 node_id, u32 cluster_id,
	     struct netlink_ext_ack *extack);
int ics_unbind(struct ics_net *in, const char *why);
void ics_bind_mtu_changed(struct ics_net *in);

/*
 * A message longer than this is large: a sender cuts one at a time per
 * link, and a receiver reserves its reassembly memory at its first
 * fragment (reasm.c). Smaller ones interleave freely, one per channel.
 */
#define ICS_LARGE_MSG		(256U << 10)

/* What a message of @len bytes holds of memory: its queues' charge. */
static inline u64 ics_msg_cost(u32 len)
{
	return (len > ICS_COPYBREAK ? PAGE_ALIGN((u64)len) : len) + 64;
}

/* stats.c */
int ics_stats_alloc(struct ics_net *in);
void ics_stats_free(struct ics_net *in);
void ics_stats_sum(struct ics_net *in, size_t off, size_t n, u64 *out);
void ics_stats_reset(struct ics_net *in);

#define ics_stats_get(in, field, out)					\
	ics_stats_sum(in, offsetof(struct ics_stats, field),		\
		      sizeof(*(out)) / sizeof(u64), (u64 *)(out))

/*
 * Every statistics update goes through these two. ICS_NO_STATS (make bench
 * builds a second module with it) compiles them out, to measure what the
 * accounting costs; it is not a supported configuration.
 */
#ifdef ICS_NO_STATS
#define ics_stat_inc(pcp)	((void)&(pcp))
#define ics_stat_add(pcp, v)	((void)&(pcp), (void)(v))
#else
#define ics_stat_inc(pcp)	this_cpu_inc(pcp)
#define ics_stat_add(pcp, v)	this_cpu_add(pcp, v)
#endif

static inline void ics_count(struct ics_net *in, enum ics_stat s)
{
	ics_stat_inc(in->stats->ctr[s]);
}

/* A frame is counted once it is accepted. */
static inline void ics_count_rx_frame(struct ics_net *in, u32 frame_len)
{
	ics_stat_inc(in->stats->ctr[ICS_STAT_RX_FRAMES]);
	ics_stat_add(in->stats->ctr[ICS_STAT_RX_BYTES], frame_len);
}

static inline unsigned int ics_row(u32 n)
{
	return n ? min_t(unsigned int, fls(n - 1) + 1, ICS_HIST_ROW_MORE) : 0;
}

static inline void ics_count_dir(struct ics_dir_stats __percpu *d, u32 len)
{
	ics_stat_inc(d->msgs);
	ics_stat_add(d->bytes, len);
	ics_stat_inc(d->hist[ics_row(len)]);
}

/* A data message to or from a node: under the writer's lock (struct ics_node_dir). */
static inline void ics_count_node(struct ics_node_dir *d, u32 len)
{
#ifndef ICS_NO_STATS
	u64_stats_inc(&d->msgs);
	u64_stats_add(&d->bytes, len);
	u64_stats_inc(&d->hist[ics_row(len)]);
#endif
}

/* Serial-number arithmetic on u32 sequence numbers. */
static inline bool ics_before(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

/* crc.c */
int ics_crc_init(void);
void ics_crc_exit(void);
u32 ics_frame_crc(struct sk_buff *skb, const u8 *src, unsigned int len);
const char *ics_crc_driver(void);

/* auth.c: frame authentication (design.rst, "Cluster key") */


int ics_auth_init(void);
void ics_auth_exit(void);
int ics_auth_tag(const u8 key[ICS_AUTH_KEY_LEN], u32 dst, u64 ctr, const u8 *hdr,
		 unsigned int hdr_len, const struct sk_buff *skb, unsigned int off,
		 unsigned int len, u8 tag[ICS_AUTH_TAG_LEN]);
bool ics_auth_available(void);
void ics_auth_derive(const u8 ck[ICS_AUTH_KEY_LEN], u8 id, u32 node, u32 inc, u64 salt,
		     u8 out[ICS_AUTH_KEY_LEN]);
bool ics_replay_check(struct ics_replay *r, u64 ctr);
int ics_auth_sign(struct ics_bind *b, struct sk_buff *skb, const u8 *src);
enum ics_stat ics_auth_check(struct ics_bind *b, const struct sk_buff *skb, u32 frag_len,
			     bool *checked);
enum ics_stat ics_auth_fresh(struct ics_peer *p, const struct ics_wire_hdr *h);
void ics_auth_confirm(struct ics_peer *p, u32 inc, u64 salt);
void ics_auth_txkey_update(struct ics_net *in, const struct ics_bind *b);
void ics_auth_forget(struct ics_net *in, u64 gen);

/* key.c: the cluster keys of an instance */
int ics_key_add(struct ics_net *in, u8 id, const u8 *key, struct netlink_ext_ack *extack);
int ics_key_del(struct ics_net *in, u8 id, struct netlink_ext_ack *extack);
int ics_key_use(struct ics_net *in, u8 id, struct netlink_ext_ack *extack);
int ics_auth_set_mode(struct ics_net *in, u8 mode, struct netlink_ext_ack *extack);
int ics_key_put(struct sk_buff *skb, struct ics_net *in, bool admin);
void ics_key_exit(struct ics_net *in);

/* tx.c: building and sending single frames */
struct sk_buff *ics_frame_alloc(struct ics_bind *b, const struct ics_hdr_args *a, u32 n,
				u32 room, gfp_t gfp);
int ics_frame_xmit(struct ics_bind *b, struct sk_buff *skb, const u8 *addr, u32 prio);
u32 ics_link_mtu(const struct ics_peer *p);
void ics_hello_xmit(struct ics_bind *b, u8 node, u32 dst_inc, const u8 *to,
		    const struct ics_wire_hello *h, gfp_t gfp);
void ics_reset_send(struct ics_bind *b, u8 node, const u8 *addr, u32 dst_inc, u32 sess);

/* link_tx.c: the send side of a link */
u32 ics_window(const struct ics_peer *p);
u32 ics_rto_max(void);
void ics_link_init(struct ics_peer *p);
int ics_link_send(struct ics_net *in, u8 node, u8 channel, const void *data,
		  u32 len, const struct ics_send_args *args, gfp_t gfp);
int ics_link_send_iter(struct ics_net *in, u8 node, u8 channel, const void *data,
		       struct iov_iter *from, u32 len, const struct ics_send_args *args,
		       gfp_t gfp);
bool ics_link_room(struct ics_net *in, u8 node, u8 ch, u32 len);
void ics_link_push(struct ics_peer *p);
void ics_link_ack_rcv(struct ics_peer *p, u32 ack_sess, u32 ack,
		      const struct ics_wire_ack *w, const u32 *taken);
void ics_link_reset_rcv(struct ics_peer *p, u32 sess);
void ics_link_pause_rcv(struct ics_peer *p, u16 paused, u16 gen, bool fresh);
void ics_link_fail(struct ics_peer *p, int err);
void ics_link_fail_take(struct ics_peer *p, struct list_head *out);
void ics_link_rebind(struct ics_peer *p, u32 inc, struct list_head *out);
void ics_link_fail_report(struct ics_net *in, struct list_head *out, int err);
void ics_link_destroy(struct ics_peer *p);
void ics_rtx_timer(struct timer_list *t);

/* link_rx.c: the receive side of a link */
void ics_link_data_rcv(struct ics_peer *p, struct sk_buff *skb, u32 inc, u32 sess, u32 seq);
bool ics_link_ack_send(struct ics_peer *p);
void __ics_link_rx_reset(struct ics_peer *p, bool restart);
void ics_ack_timer(struct timer_list *t);
void ics_hold(struct ics_peer *p, u8 channel, u32 msg_id, struct sk_buff *skb);
bool ics_link_held_offer(struct ics_peer *p, bool *again);
void ics_link_held_purge(struct ics_peer *p);

/* rx.c */
int ics_rcv(struct sk_buff *skb, struct net_device *dev, struct packet_type *pt,
	    struct net_device *orig_dev);
bool ics_deliver_note(struct ics_peer *p, u8 channel, u32 msg_id, u32 len);
void ics_deliver(struct ics_peer *p, u8 channel, u32 msg_id, struct sk_buff *skb);
int ics_offer(struct ics_peer *p, u8 channel, struct sk_buff *skb);

/* peer.c */
struct ics_peer *ics_peer_lookup(struct ics_bind *b, u8 node, const u8 *addr);
void ics_peers_free(struct ics_bind *b);
void ics_node_chans_reset(struct ics_net *in);

/* reasm.c */
/* A held bundle's rest reuses all but channel (link_rx.c, ics_hold_rest()). */
struct ics_frag {
	u32 frame_len;		/* ics header + payload, for rx_bytes */
	u32 msg_id;
	u32 msg_len;
	u32 off;
	u8 channel;
	bool bundle;		/* ICS_WF_BUNDLE */
};

/* skb->cb of a received data frame until reassembly takes it over */
struct ics_rx_cb {
	struct ics_frag f;
	u32 seq;
	bool ackreq;
};

#define ICS_RXCB(skb) ((struct ics_rx_cb *)(skb)->cb)

int ics_reasm_rcv(struct ics_bind *b, struct ics_peer *p, struct sk_buff *skb,
		  const struct ics_frag *f);
enum ics_reasm_flush {
	ICS_REASM_IDLE,		/* drop partial messages of a silent peer */
	ICS_REASM_ALL,		/* drop all: new session or restart */
	ICS_REASM_CLOSE,	/* drop all and take no more: unbinding */
};

void __ics_reasm_flush(struct ics_bind *b, struct ics_peer *p, enum ics_reasm_flush how);
void ics_reasm_flush(struct ics_bind *b, struct ics_peer *p, enum ics_reasm_flush how);

/*
 * Nanoseconds since @p's last frame, as of @now; 0 when a frame taken on
 * another CPU after @now was read made it newer (a plain u64 difference
 * would then wrap to "silent for centuries").
 */
static inline u64 ics_silent_ns(const struct ics_peer *p, u64 now)
{
	s64 d = now - READ_ONCE(p->last_heard_ns);

	return d > 0 ? d : 0;
}

/* @p was heard at @now: last_heard_ns only moves forward. */
static inline void ics_heard(struct ics_peer *p, u64 now)
{
	if ((s64)(now - READ_ONCE(p->last_heard_ns)) > 0)
		WRITE_ONCE(p->last_heard_ns, now);
}

/* flow.c: flow control, receiver to senders */
void ics_flow_init(struct ics_net *in);
void ics_flow_exit(struct ics_net *in);
void __ics_channel_pause(struct ics_net *in, unsigned int ch, bool pause);
void ics_pause_refused(struct ics_net *in, unsigned int ch, int resumes, bool waiting);
void ics_pause_held(struct ics_net *in, unsigned int ch, bool held);
extern struct ics_handler ics_waiting;
void ics_handler_left(struct ics_net *in, unsigned int ch);
void ics_handler_came(struct ics_net *in, unsigned int ch);
bool ics_flow_take(struct ics_peer *p, u16 paused, u16 gen, bool fresh);

/* A handler receives on @ch: not none, nor the stand-in between two (flow.c). */
static inline bool ics_handler_present(struct ics_net *in, unsigned int ch)
{
	struct ics_handler *h = rcu_access_pointer(in->handlers[ch]);

	return h && h != &ics_waiting;
}

/*
 * in->pause: the generation from bit 48, the channels paused while
 * messages are held for their handler from bit ICS_PAUSE_HELD, while
 * waiting for a handler from bit ICS_PAUSE_WAIT, those their handlers
 * paused from 0.
 */
#define ICS_PAUSE_WAIT		16
#define ICS_PAUSE_HELD		32
#define ICS_PAUSE_GEN_ONE	BIT_ULL(48)

/* The paused channels of in->pause's value @v. */
static inline u16 ics_pause_mask(u64 v)
{
	return (u16)(v | v >> ICS_PAUSE_WAIT | v >> ICS_PAUSE_HELD);
}

/* The paused channels now, as the wire has them: gen << 16 | mask. */
static inline u32 ics_pause_word(struct ics_net *in)
{
	u64 v = atomic64_read(&in->pause);

	return (u32)(v >> 48) << 16 | ics_pause_mask(v);
}

/*
 * The channels whose handler does not take messages now: paused by it, or
 * waiting for one. Held messages are offered to the others.
 */
static inline u16 ics_pause_handlers(struct ics_net *in)
{
	u64 v = atomic64_read(&in->pause);

	return (u16)(v | v >> ICS_PAUSE_WAIT);
}

/* A pause word as an ACK or a heartbeat carries it. */
static inline void ics_pause_put(u32 word, __be16 *paused, __be16 *gen)
{
	*paused = htons(word & 0xffff);
	*gen = htons(word >> 16);
}

/* member.c */
static inline bool ics_live(u8 state)
{
	return state == ICS_MEMBER_JOINING || state == ICS_MEMBER_UP;
}

void ics_member_init(struct ics_net *in);
int ics_member_alloc(struct ics_net *in);
void ics_member_exit(struct ics_net *in);
u32 ics_member_incarnation(struct ics_net *in);
void ics_member_bind(struct ics_bind *b);
void ics_member_start(struct ics_bind *b);
void ics_member_leave(struct ics_bind *b);
void ics_member_unbind(struct ics_net *in, struct ics_bind *b);
void ics_member_announce(struct ics_bind *b);
void ics_member_set_tunables(struct ics_net *in, const u32 *hb_ms, const u32 *misses,
			     const u32 *votes, const u32 *expected);
void ics_member_conflict(struct ics_bind *b, struct ics_peer *p, u8 node, const u8 *addr);
void ics_hello_rcv(struct ics_bind *b, struct ics_peer *p, const u8 *src, u64 salt,
		   struct sk_buff *skb, u32 frame_len, u32 inc);
void ics_timer(struct timer_list *t);
void ics_check_timer(struct timer_list *t);
int ics_rx_cpu_init(struct ics_bind *b);
void ics_rx_cpu_exit(struct ics_bind *b);
bool ics_rx_marker(struct ics_bind *b, struct sk_buff *skb);

/* A copy of one member's view entry (netlink.c), taken under member_lock. */
struct ics_member_info {
	u8 node, state, reason, votes;
	bool self, sees_us, reachable;
	u8 addr[ETH_ALEN], conflict_addr[ETH_ALEN];
	u32 incarnation, hb_ms, hb_rtt_us;
	u64 since_ns, last_heard_ns, hb_rx, hb_missed, conflicts;
};

bool ics_member_info(struct ics_net *in, unsigned int idx, struct ics_member_info *mi);

/* dev.c */
int ics_dev_init(void);
void ics_dev_exit(void);

/* netlink.c */
int ics_genl_init(void);
void ics_genl_exit(void);
void ics_nl_event(struct ics_net *in, const struct ics_event *ev);

#endif /* _ICS_INTERNAL_H */
