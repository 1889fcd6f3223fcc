/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * ics - internode communication subsystem: UAPI.
 *
 * This header is the one contract between ics.ko, its tools (icstat, icsctl)
 * and anything else that speaks to it. It defines five things:
 *
 *   1. the channels and the message-size histogram rows,
 *   2. the wire format (raw Ethernet, ethertype ICS_ETH_P),
 *   3. the generic netlink family "ics",
 *   4. the message device /dev/ics,
 *   5. the test service's generic netlink family "ics_test" (ics_test.ko).
 *
 * Generic netlink family "ics", version ICS_GENL_VERSION
 * ======================================================
 *
 * Every command works on the ics instance of the caller's network namespace
 * (one per netns). Commands that change state need CAP_NET_ADMIN
 * (GENL_ADMIN_PERM); reading works for any user, like `ip -s link`.
 * Counters are u64 (padded with ICS_A_PAD), and are totals since the module
 * was loaded into the namespace or since the last ICS_CMD_RESET_STATS.
 *
 * ICS_CMD_GET_INSTANCE (doit)
 *   Request: nothing.
 *   Reply:
 *     ICS_A_STATE: u8, enum ics_state
 *     ICS_A_IFINDEX: u32 \
 *     ICS_A_IFNAME: string |
 *     ICS_A_ADDRESS: 6 bytes, the NIC's MAC   > only when bound
 *     ICS_A_NODE_ID: u32 |
 *     ICS_A_CLUSTER_ID: u32 |
 *     ICS_A_MTU: u32, the NIC's MTU now /
 *     ICS_A_MSG_MAX: u32, largest message (ICS_MSG_MAX)
 *     ICS_A_CRC32C_DRIVER: string, the crypto driver computing the frame
 *       CRC32C (the fastest at load: "crc32c-intel", "crc32c-generic", ...)
 *     ICS_A_HEARTBEAT_MS: u32, heartbeat (HELLO) interval in ms
 *     ICS_A_HEARTBEAT_MISSES: u32, a member silent for this many of its
 *       heartbeat intervals is declared down
 *     ICS_A_VOTES: u32, this member's quorum votes (0 or 1)
 *     ICS_A_EXPECTED_VOTES_CFG: u32, expected votes as configured (SET_INSTANCE;
 *       0: only what was seen)
 *     ICS_A_EXPECTED_VOTES: u32, expected votes now: the configured  \
 *       value, raised to the most votes present at once since bind    |
 *     ICS_A_CURRENT_VOTES: u32, votes of the members present (ours   |
 *       included)                                                    > when
 *     ICS_A_QUORUM: u32, votes needed: (expected + 2) / 2            | bound
 *     ICS_A_HAS_QUORUM: u8, 1 when current >= quorum                 |
 *     ICS_A_GENERATION: u32, membership generation (see GET_MEMBERS) |
 *     ICS_A_INCARNATION: u32, ours                                   |
 *     ICS_A_REASM_MEM: u64, bytes (truesize) held in partial messages |
 *     ICS_A_REASM_RESERVED: u64, bytes reserved by large partial     |
 *       messages (over 256 KiB): at most ICS_A_REASM_MEM_MAX, or one |
 *       message's cap when it is alone (design.rst)                  |
 *     ICS_A_REASM_MEM_MAX: u64, the module's reasm_mem_max           /
 *     ICS_A_LINK_TIMEOUT_MS: u32, a link that makes no progress this long
 *       fails its messages (ETIMEDOUT)
 *     ICS_A_LINK_WINDOW: u32, most frames in flight per link
 *     ICS_A_RESET_AGE_MS: u64, ms since load or the last reset
 *     ICS_A_STATS: nest
 *       ICS_STAT_*: u64, one attribute per instance counter
 *
 * ICS_CMD_BIND (doit, admin)
 *   Bind this netns's instance to a NIC, with a node id and cluster id.
 *   Request:
 *     ICS_A_IFINDEX: u32 or ICS_A_IFNAME: string (one of them)
 *     ICS_A_NODE_ID: u32, 1..ICS_MAX_NODES
 *     ICS_A_CLUSTER_ID: u32, optional, default 0
 *   Errors: ENODEV (no such device), EINVAL (node id out of range, not an
 *   Ethernet device, MTU below ICS_MIN_MTU), EBUSY (already bound).
 *
 * ICS_CMD_UNBIND (doit, admin)
 *   Request: nothing. Errors: ENOTCONN (not bound). Counters survive.
 *
 * ICS_CMD_RESET_STATS (doit, admin)
 *   Request: nothing. Zeroes the instance, channel, node and peer-channel
 *   counters; link counters count since the peer was first heard.
 *
 * ICS_CMD_GET_CHANNELS (dump)
 *   One message per channel, in channel-id order:
 *     ICS_A_CHANNEL: nest
 *       ICS_CHAN_A_ID: u32
 *       ICS_CHAN_A_NAME: string
 *       ICS_CHAN_A_HANDLER: u8, 1 when a kernel client receives on it here
 *       ICS_CHAN_A_TX: nest, messages sent
 *       ICS_CHAN_A_RX: nest, messages received (delivered or unclaimed)
 *         ICS_DIR_A_MSGS: u64
 *         ICS_DIR_A_BYTES: u64, message payload bytes
 *         ICS_DIR_A_HIST: nest, ICS_HIST_ROWS u64 attributes; the
 *           attribute type of row r is r + 1 (see "Histogram rows")
 *       ICS_CHAN_A_RX_UNCLAIMED: u64, received with no handler, freed
 *       ICS_CHAN_A_PRIO: u8, send priority (0 first)
 *   The dump is interrupted (NLM_F_DUMP_INTR) if a reset, bind or unbind
 *   happened while it ran.
 *
 * ICS_CMD_GET_NODES (dump)
 *   One message per node that is reachable now or has non-zero counters:
 *     ICS_A_NODE: nest
 *       ICS_NODE_A_ID: u32
 *       ICS_NODE_A_REACHABLE: u8, 1 when messages may be sent to it: heard
 *         on the bound NIC, and joining or member (GET_MEMBERS)
 *       ICS_NODE_A_ADDRESS: 6 bytes, only when reachable
 *       ICS_NODE_A_LAST_HEARD_MS: u64, ms since its last frame, when reachable
 *       ICS_NODE_A_RX_KEY: u8, when reachable: the key id of its last frame
 *         whose tag we checked, 0 = none yet (it signs nothing, or we do not
 *         hold its key)
 *       ICS_NODE_A_TX_MSGS, ICS_NODE_A_TX_BYTES: u64, sent to it
 *       ICS_NODE_A_RX_MSGS, ICS_NODE_A_RX_BYTES: u64, received from it
 *   Node counters count data messages; ics's own hellos count only in the
 *   CNX channel and in ICS_STAT_HELLO_TX/RX.
 *
 * ICS_CMD_GET_LINKS (dump)
 *   One message per known peer: ICS_A_LINK: nest of enum ics_link_attr.
 *
 * ICS_CMD_GET_PEER_CHANNELS (dump)
 *   The channels' counters per peer: one message per (node, channel) with
 *   messages sent or received, by node id, then channel id:
 *     ICS_A_NODE_ID: u32
 *     ICS_A_CHANNEL: nest
 *       ICS_CHAN_A_ID: u32
 *       ICS_CHAN_A_TX, ICS_CHAN_A_RX: nests, as in GET_CHANNELS
 *   Data messages only: a node's sums over its channels are its GET_NODES
 *   counters. Counted from when the node was first heard in this netns, or
 *   the last reset; they survive unbind. Each counter is read whole, not
 *   all of them at one instant. Interrupted (NLM_F_DUMP_INTR) as
 *   GET_CHANNELS.
 *
 * ICS_CMD_SET_CHANNEL (doit, admin)
 *   Request: ICS_A_CHANNEL: nest { ICS_CHAN_A_ID: u32, ICS_CHAN_A_PRIO: u8 }
 *   Errors: EINVAL (channel or priority out of range). The priority holds
 *   for this netns's instance until the module is unloaded.
 *
 * ICS_CMD_SET_INSTANCE (doit, admin)
 *   Membership tunables of this netns's instance; each is optional, each
 *   holds until the module is unloaded (binding and unbinding keep it).
 *   Request:
 *     ICS_A_HEARTBEAT_MS: u32, ICS_HEARTBEAT_MS_MIN..ICS_HEARTBEAT_MS_MAX;
 *       takes effect at the next heartbeat
 *     ICS_A_HEARTBEAT_MISSES: u32, 1..ICS_HEARTBEAT_MISSES_MAX
 *     ICS_A_VOTES: u32, 0 or 1
 *     ICS_A_EXPECTED_VOTES: u32, 0..ICS_MAX_NODES (0: only what was seen)
 *   Errors: EINVAL (out of range; nothing is changed).
 *
 * ICS_CMD_GET_MEMBERS (dump)
 *   The membership view: this member first, then every node heard since
 *   bind, in node order. Errors: ENOTCONN (not bound).
 *     ICS_A_MEMBER: nest
 *       ICS_MEMBER_A_NODE: u32
 *       ICS_MEMBER_A_SELF: u8, 1 for this member
 *       ICS_MEMBER_A_STATE: u8, enum ics_member_state
 *       ICS_MEMBER_A_REASON: u8, enum ics_reason of the last change
 *       ICS_MEMBER_A_INCARNATION: u32
 *       ICS_MEMBER_A_VOTES: u32, as its heartbeats announce
 *       ICS_MEMBER_A_ADDRESS: 6 bytes, its MAC
 *       ICS_MEMBER_A_SINCE_NS: u64, CLOCK_MONOTONIC of the last change
 *         (for this member: of the bind)
 *       ICS_MEMBER_A_LAST_HEARD_NS: u64, CLOCK_MONOTONIC of its last frame
 *       ICS_MEMBER_A_HEARTBEAT_MS: u32, its heartbeat interval
 *       ICS_MEMBER_A_HB_RX: u64, its heartbeats received
 *       ICS_MEMBER_A_HB_MISSED: u64, its heartbeats never received (gaps
 *         in their numbers)
 *       ICS_MEMBER_A_HB_RTT_US: u32, last heartbeat round trip, 0 = none yet
 *       ICS_MEMBER_A_SEES_US: u8, 1 when its last heartbeat listed us
 *       ICS_MEMBER_A_CONFLICTS: u64, frames from another MAC claiming its
 *         node id (never merged: dropped)
 *       ICS_MEMBER_A_CONFLICT_ADDRESS: 6 bytes, the last such MAC
 *   ICS_A_GENERATION of GET_INSTANCE numbers views: it grows by one at every
 *   change of any member's state (and at bind and unbind). The dump is
 *   interrupted (NLM_F_DUMP_INTR) if it changed meanwhile.
 *
 * Cluster keys (Documentation/design.rst, "Cluster keys"): GET_INSTANCE
 * also carries ICS_A_AUTH_MODE (u8, enum ics_auth_mode) and ICS_A_KEY_TX
 * (u8, the key id we sign with, 0: none), and, for a caller with
 * CAP_NET_ADMIN in the namespace only, ICS_A_KEYS: a nest of ICS_KEY_A_KEY
 * nests { ICS_KEY_A_ID: u8, ICS_KEY_A_FINGERPRINT: ICS_KEY_FPR_LEN bytes }.
 * No reply ever carries a key. Keys and mode hold until the module is
 * unloaded or the namespace goes, across unbind and bind.
 *
 * ICS_CMD_KEY_ADD (doit, admin)
 *   Request: ICS_A_KEY_ID: u8, 1..255; ICS_A_KEY: ICS_KEY_LEN bytes.
 *   Errors: EINVAL (id 0, key of another length), EEXIST (id installed),
 *   ENOSPC (ICS_KEYS_MAX installed), EOPNOTSUPP (no Poly1305 here: fips=1).
 *
 * ICS_CMD_KEY_DEL (doit, admin)
 *   Request: ICS_A_KEY_ID. Errors: ENOENT (not installed), EBUSY (in use).
 *
 * ICS_CMD_KEY_USE (doit, admin)
 *   Sign what we send with a key from now on. Request: ICS_A_KEY_ID, 0 for
 *   none. Errors: ENOENT (not installed), EBUSY (0 while the mode is not off).
 *
 * ICS_CMD_SET_INSTANCE also takes ICS_A_AUTH_MODE: u8, enum ics_auth_mode;
 * accept and require need a key in use (ENOKEY).
 *
 * Multicast group ICS_GENL_MCGRP_EVENTS ("events"): ICS_CMD_EVENT
 *   One message per membership event, in the order the instance saw them,
 *   to listeners in the instance's network namespace (any user may listen):
 *     ICS_A_EVENT: nest
 *       ICS_EVENT_A_TYPE: u8, enum ics_event_type
 *       ICS_EVENT_A_TIME_NS: u64, CLOCK_MONOTONIC when it happened
 *       ICS_EVENT_A_REALTIME_NS: u64, CLOCK_REALTIME, for people
 *       ICS_EVENT_A_GENERATION: u32, the view it made (or was seen in)
 *       ICS_EVENT_A_NODE: u32, the node (QUORUM, BOUND, UNBOUND: ours)
 *       ICS_EVENT_A_OLD_STATE: u8          (NODE)
 *       ICS_EVENT_A_STATE: u8              (NODE)
 *       ICS_EVENT_A_REASON: u8             (NODE)
 *       ICS_EVENT_A_INCARNATION: u32       (NODE, BOUND)
 *       ICS_EVENT_A_SILENT_MS: u32, time since its last frame (NODE)
 *       ICS_EVENT_A_ADDRESS: 6 bytes       (NODE; CONFLICT: the claimant)
 *       ICS_EVENT_A_CURRENT_VOTES, ICS_EVENT_A_EXPECTED_VOTES,
 *       ICS_EVENT_A_QUORUM: u32, ICS_EVENT_A_HAS_QUORUM: u8  (every type)
 *       ICS_EVENT_A_LOST: u32, events dropped before this one (queue full)
 *
 * Wire format
 * ===========
 *
 * Every frame is an Ethernet II frame with ethertype ICS_ETH_P (0x88B5,
 * IEEE 802 "local experimental ethertype 1") followed by struct ics_wire_hdr
 * (all fields big-endian) and frag_len bytes of payload. A message of
 * msg_len bytes (0..ICS_MSG_MAX) is cut into fragments of at most
 * link MTU - sizeof(struct ics_wire_hdr) bytes; every fragment carries msg_id,
 * msg_len and its own frag_off. Fragments travel as numbered DATA frames on
 * the link from sender to receiver, which acknowledges them (cumulatively,
 * and selectively with ICS_FT_ACK) and delivers them once, in order;
 * Documentation/wire-format.rst describes the protocol. A receiver drops and
 * counts (ICS_STAT_RX_BAD_*) every frame whose checksum, version, cluster
 * id, node ids, channel, type, lengths or fragment fields do not hold;
 * nothing from the wire is trusted.
 */
#ifndef _UAPI_LINUX_ICS_H
#define _UAPI_LINUX_ICS_H

#include <linux/types.h>

#define ICS_GENL_NAME		"ics"
#define ICS_GENL_VERSION	1

#define ICS_GENL_MCGRP_EVENTS	"events"

#define ICS_ETH_P		0x88B5	/* IEEE local experimental ethertype 1 */
#define ICS_WIRE_VERSION	8

#define ICS_MAX_NODES		64	/* node ids are 1..ICS_MAX_NODES */
#define ICS_NODE_BROADCAST	0	/* dst_node of a frame to every member */
#define ICS_MSG_MAX		(16U << 20)	/* largest message: 16 MiB */
#define ICS_MIN_MTU		576	/* a NIC must carry at least this */

/* Membership tunables (module parameters and ICS_CMD_SET_INSTANCE). */
#define ICS_HEARTBEAT_MS_MIN	10
#define ICS_HEARTBEAT_MS_MAX	3600000
#define ICS_HEARTBEAT_MISSES_MAX	100

/*
 * Channels. The ids are part of the wire format and never change.
 * CNX carries membership (HELLO frames: the heartbeats) and link
 * acknowledgements.
 */
enum ics_channel {
	ICS_CH_BOOT,
	ICS_CH_PRI0,
	ICS_CH_PRI1,
	ICS_CH_CFS,
	ICS_CH_NET,
	ICS_CH_CLSM,
	ICS_CH_DRD,
	ICS_CH_TUNL,
	ICS_CH_CLUA,
	ICS_CH_KEVM,
	ICS_CH_CFSR,
	ICS_CH_RBLD,
	ICS_CH_KCH,
	ICS_CH_DLM,
	ICS_CH_TEST,
	ICS_CH_CNX,
	ICS_CHANNELS
};

/*
 * Send priority of a channel: 0 is served first, ICS_PRIO_LEVELS - 1 last.
 * Defaults (ICS_CHANNEL_PRIOS, in channel order), changeable per instance
 * with ICS_CMD_SET_CHANNEL:
 *   0  CNX PRI0            membership, urgent kernel messages
 *   1  DLM                 lock manager
 *   2  PRI1
 *   3  KCH CLSM BOOT KEVM CLUA
 *   4  NET CFSR RBLD TEST
 *   5  CFS DRD TUNL        bulk transfers
 */
#define ICS_PRIO_LEVELS		8
#define ICS_CHANNEL_PRIOS { 3, 0, 2, 5, 4, 3, 5, 5, 3, 3, 4, 4, 3, 1, 4, 0 }

#define ICS_CHANNEL_NAMES { \
	"BOOT", "PRI0", "PRI1", "CFS", "NET", "CLSM", "DRD", "TUNL", \
	"CLUA", "KEVM", "CFSR", "RBLD", "KCH", "DLM", "TEST", "CNX" }

/*
 * Histogram rows. Row 0 counts messages of 0 bytes; row r (1..25) counts
 * messages of n bytes with 2^(r-2) < n <= 2^(r-1), i.e. a message counts in
 * the smallest row whose label is >= n: rows are labelled
 * 0 1 2 4 8 ... 8m 16m more, where "more" (row 26) is n > 16 MiB.
 * Equivalently: r = 0 for n = 0, else min(fls(n - 1) + 1, 26).
 */
#define ICS_HIST_ROWS		27
#define ICS_HIST_ROW_MORE	(ICS_HIST_ROWS - 1)
#define ICS_HIST_A_PAD		(ICS_HIST_ROWS + 1)	/* padding in ICS_DIR_A_HIST */

static inline unsigned int ics_hist_row(__u32 n)
{
	unsigned int r = 1;

	if (n == 0)
		return 0;
	n -= 1;
	while (n) {		/* fls(n - 1) + 1 without kernel helpers */
		n >>= 1;
		r++;
	}
	return r < ICS_HIST_ROW_MORE ? r : ICS_HIST_ROW_MORE;
}

/*
 * Frame header on the wire (84 bytes); multi-byte fields are big-endian.
 *
 * Every unicast frame belongs to the link between src_node and dst_node,
 * and names the binding of dst_node it was made for: dst_inc, the
 * receiver's incarnation as the sender knows it (0 in a broadcast). A
 * receiver drops a unicast frame made for an earlier binding of its own.
 * DATA frames are numbered: seq counts frames from 1 within the sender's
 * session sess (a random non-zero id the sender picks whenever it starts its
 * side of the link afresh). Any frame may carry an acknowledgement: ack_sess
 * names the receiver's own session and ack the highest seq of it received in
 * order; ack_sess 0 means "no acknowledgement". incarnation and salt tell a
 * restarted sender from the old one in every frame. check is the CRC32C
 * (Castagnoli) of the Ethernet source address, the header with check 0,
 * and the frag_len payload bytes.
 *
 * Authentication (a cluster key, see "Cluster keys" below): a signed frame
 * names the key in key_id, carries the sender's counter, and tag: the
 * RFC 8439 ChaCha20-Poly1305 tag, with an empty plaintext, of the
 * associated data "the Ethernet source address, 10 zero bytes, the
 * header's first ICS_AUTH_AD_HDR bytes (check 0), the payload", under the
 * sender's key for (key, src_node, incarnation, salt) and the nonce
 * le32 0 | le32 dst_node | le64 counter. An unsigned frame has key_id 0,
 * and zeroes in auth_flags, the counter and the tag.
 */
struct ics_wire_hdr {
	__u8	version;	/* ICS_WIRE_VERSION */
	__u8	type;		/* enum ics_frame_type */
	__u8	flags;		/* ICS_WF_* */
	__u8	channel;	/* enum ics_channel */
	__be32	cluster_id;	/* must equal the receiver's */
	__u8	src_node;	/* 1..ICS_MAX_NODES */
	__u8	dst_node;	/* 1..ICS_MAX_NODES or ICS_NODE_BROADCAST */
	__be16	frag_len;	/* payload bytes in this frame */
	__be32	sess;		/* DATA: sender's session; RESET: the refused one */
	__be32	seq;		/* DATA: frame number in sess, from 1 */
	__be32	ack_sess;	/* receiver's session acknowledged, 0 = none */
	__be32	ack;		/* highest seq of ack_sess received in order */
	__be32	msg_id;		/* per sender, destination and channel, +1 per message */
	__be32	msg_len;	/* whole message, 0..ICS_MSG_MAX */
	__be32	frag_off;	/* offset of this payload in the message */
	__be32	incarnation;	/* sender's, new and larger at every bind */
	__be32	check;		/* CRC32C of source MAC, header (check = 0), payload */
	__be32	dst_inc;	/* unicast: the receiver's incarnation; broadcast: 0 */
	__u8	key_id;		/* cluster key that signed the frame, 0: unsigned */
	__u8	auth_flags;	/* 0; a receiver drops a frame with any other */
	__be16	ctr_hi;		/* sender's counter for dst_node, 48 bits: */
	__be32	ctr_lo;		/*   never 0, never repeated under one key */
	__u8	salt[8];	/* sender's, random at every bind (big-endian) */
	__u8	tag[16];	/* Poly1305 tag */
};
#define ICS_AUTH_AD_HDR		68	/* header bytes the tag covers: all but tag */

enum ics_frame_type {
	ICS_FT_DATA = 1,	/* a message, or a fragment of one; numbered */
	ICS_FT_HELLO = 2,	/* struct ics_wire_hello on channel CNX */
	ICS_FT_ACK = 3,		/* struct ics_wire_ack on channel CNX */
	ICS_FT_RESET = 4,	/* "I have no state for your session sess" */
};

/*
 * Flags, DATA frames only. Unknown flags make a receiver drop the frame
 * (ICS_STAT_RX_BAD_TYPE); 0x01 to 0x40 but ICS_WF_ACKREQ are retired and
 * never reused, so that an older member's frame cannot take a new meaning.
 * A message carries no flags of its own: what an application or a test
 * needs travels in its payload.
 */
#define ICS_WF_ACKREQ	0x08	/* acknowledge at once, the sender waits */
/*
 * DATA: the payload is a bundle of whole messages of the frame's channel,
 * each a struct ics_wire_brec and its bytes, back to back; their msg_ids
 * are the header's msg_id, + 1, + 2, ... The header's msg_len and frag_len
 * are the payload's length, frag_off 0. A sender bundles small messages
 * that are already queued when a frame is cut (it never waits to fill one).
 */
#define ICS_WF_BUNDLE	0x80
#define ICS_WF_ALL	(ICS_WF_ACKREQ | ICS_WF_BUNDLE)

/*
 * One message in an ICS_WF_BUNDLE frame; its len bytes follow. flags and
 * reserved are 0, or the frame is dropped (ICS_STAT_RX_BAD_FRAG).
 */
struct ics_wire_brec {
	__be16	len;		/* the message's bytes */
	__u8	flags;		/* 0: messages carry no flags */
	__u8	reserved;
};

/*
 * Payload of an ICS_FT_ACK frame: a cumulative ack is in the header; sack
 * bit i (bit i % 8 of byte i / 8) set means seq ack + 2 + i was received.
 * Sent at once for data out of order, duplicate or beyond the window, for
 * data carrying ICS_WF_ACKREQ or leaving a gap, for every second frame
 * taken in order, else by the delayed-ack timer (an acknowledgement
 * piggybacked on data does not replace it).
 *
 * A message is done for its sender only once the receiver's handler took
 * it. Every message in the frames up to ack was taken, except on the
 * channels in held: there the receiver holds messages its handler refused
 * (they wait for it). For each channel in held or told, from the lowest,
 * taken[] gives the last msg_id taken there (before those held): every
 * message of the channel up to it was taken, whatever the session. The
 * frame is sizeof(struct ics_wire_ack) + 4 bytes per bit set in
 * held | told long.
 */
#define ICS_SACK_BITS	512
/*
 * The receiver had no memory for frame ack + 1 (reassembly): it is not
 * lost, the sender resends it later, and the link is not failing.
 */
#define ICS_ACK_BUSY	0x01
struct ics_wire_ack {
	__be16	window;		/* frames the receiver accepts past ack */
	__be16	sack_bits;	/* valid bits in sack, 0..ICS_SACK_BITS */
	__be16	paused;		/* ICS_PAUSE: channels the sender must hold */
	__be16	pause_gen;	/* ICS_PAUSE: + 1 at every change of paused */
	__be16	held;		/* channels with messages waiting for their handler */
	__be16	told;		/* channels whose held messages were taken lately */
	__u8	flags;		/* ICS_ACK_*; unknown bits are ignored */
	__u8	reserved[3];	/* 0 */
	__u8	sack[ICS_SACK_BITS / 8];
	__be32	taken[];	/* one per bit of held | told */
};

/*
 * Flow control (ICS_PAUSE, in every ACK and heartbeat): bit c of paused set
 * means the receiver of channel c cannot keep up; a sender cuts no new frame
 * of that channel for this node (frames in flight still go) until a word
 * with a newer pause_gen clears the bit. pause_gen grows by one at every
 * change, so a word older than the last one taken (compared as 16-bit
 * serial numbers) is stale and ignored, unless it comes a second or more
 * after the last one taken (the word taken was not the sender's); a new
 * incarnation starts afresh.
 */

/*
 * Payload of an ICS_FT_HELLO frame: the heartbeat. Broadcast every
 * heartbeat_ms, unicast as an answer to a node that does not know yet that
 * we hear it or whose heartbeat is a claim not yet confirmed (a node, a MAC
 * or an incarnation new to us: confirmed by a heartbeat that echoes one of
 * ours sent since), broadcast with ICS_HF_LEAVING when the sender unbinds.
 *
 * seen has bit n - 1 set for every node n the sender hears (joining or
 * member in its view): a node becomes a member when it hears the other's
 * heartbeats and they list it (both directions work).
 *
 * seq numbers the periodic heartbeats; unicast answers and announcements
 * (an MTU change, leaving) repeat the last number.
 *
 * echo[] returns other nodes' heartbeats for round-trip times: an entry
 * names a node whose heartbeat (ts_us) the sender received held_us before
 * sending this one; that node's RTT is its clock now - ts_us - held_us.
 */
#define ICS_HB_ECHOES	8
struct ics_wire_echo {
	__u8	node;		/* 0: unused entry */
	__u8	reserved[3];
	__be32	ts_us;		/* the echoed heartbeat's ts_us */
	__be32	held_us;	/* from its arrival to this heartbeat's departure */
	__be32	nonce;		/* the echoed heartbeat's nonce */
};

struct ics_wire_hello {
	__be32	incarnation;	/* as in the header */
	__be32	mtu;		/* sender's MTU now */
	__be32	hello_ms;	/* sender's heartbeat interval */
	__be32	flags;		/* ICS_HF_* */
	__be32	seq;		/* periodic heartbeats: 1, 2, ... per incarnation */
	__be32	ts_us;		/* sender's monotonic clock, microseconds, low 32 bits */
	__be64	seen;		/* bit n - 1: the sender hears node n */
	__u8	votes;		/* sender's quorum votes, 0 or 1 */
	__u8	reserved;
	__be16	paused;		/* ICS_PAUSE, as in struct ics_wire_ack */
	__be16	pause_gen;
	__u8	reserved2[2];
	__be32	nonce;		/* keyed hash of the sender's clock: admission */
	struct ics_wire_echo echo[ICS_HB_ECHOES];
	__u8	reserved3[4];	/* explicit: 176 bytes on every ABI */
};

#define ICS_HF_REPLY	0x01	/* unicast answer: we hear you, or a challenge */
#define ICS_HF_LEAVING	0x02	/* the sender unbinds: it leaves the membership now */
#define ICS_HF_ALL	(ICS_HF_REPLY | ICS_HF_LEAVING)

/*
 * Membership: the state of a node in an instance's view. A node heard for
 * the first time (or again after DOWN or LEFT), once confirmed, is
 * JOINING; it is a MEMBER
 * once its heartbeats list us too; DOWN when it has been silent for
 * heartbeat_misses of its heartbeat intervals; LEFT when it announced that
 * it unbinds. The instance itself is always MEMBER in its own view.
 */
enum ics_member_state {
	ICS_MEMBER_NONE,	/* never heard (events only) */
	ICS_MEMBER_JOINING,
	ICS_MEMBER_UP,		/* "member" */
	ICS_MEMBER_DOWN,
	ICS_MEMBER_LEFT,
};

/* Why a node's state changed. */
enum ics_reason {
	ICS_REASON_NONE,
	ICS_REASON_HEARD,	/* a heartbeat from a node not heard, down or left */
	ICS_REASON_TWO_WAY,	/* its heartbeats list us: both directions work */
	ICS_REASON_ONE_WAY,	/* its heartbeats stopped listing us */
	ICS_REASON_SILENT,	/* nothing heard for heartbeat_misses intervals */
	ICS_REASON_LEAVING,	/* it announced it unbinds */
	ICS_REASON_RESTART,	/* a new incarnation: it restarted */
	ICS_REASON_MOVED,	/* a down or left node came back from another MAC */
};

enum ics_event_type {
	ICS_EVENT_NONE,
	ICS_EVENT_NODE,		/* a node's state changed */
	ICS_EVENT_QUORUM,	/* the instance gained or lost quorum */
	ICS_EVENT_CONFLICT,	/* a second MAC claims a node id (ours, or a live node's) */
	ICS_EVENT_BOUND,	/* the instance bound (ICS_EVENT_A_NODE: our id) */
	ICS_EVENT_UNBOUND,	/* the instance unbound: every node is forgotten */
};

/*
 * Instance state. Every netns has an instance while the module is loaded;
 * it is UNUSED until first bound, and its counters survive an unbind.
 */
enum ics_state {
	ICS_STATE_UNUSED,	/* never bound since load */
	ICS_STATE_BOUND,	/* bound to a NIC */
	ICS_STATE_UNBOUND,	/* was bound; unbound or its NIC went away */
};

/* Generic netlink. */
enum ics_cmd {
	ICS_CMD_UNSPEC,
	ICS_CMD_GET_INSTANCE,
	ICS_CMD_BIND,
	ICS_CMD_UNBIND,
	ICS_CMD_RESET_STATS,
	ICS_CMD_GET_CHANNELS,
	ICS_CMD_GET_NODES,
	ICS_CMD_RESERVED_7,	/* retired: never reused */
	ICS_CMD_GET_LINKS,
	ICS_CMD_SET_CHANNEL,
	ICS_CMD_SET_INSTANCE,
	ICS_CMD_GET_MEMBERS,
	ICS_CMD_EVENT,		/* notification on ICS_GENL_MCGRP_EVENTS */
	ICS_CMD_KEY_ADD,
	ICS_CMD_KEY_DEL,
	ICS_CMD_KEY_USE,
	ICS_CMD_GET_PEER_CHANNELS,
	__ICS_CMD_MAX
};
#define ICS_CMD_MAX (__ICS_CMD_MAX - 1)

enum ics_attr {
	ICS_A_UNSPEC,
	ICS_A_PAD,
	ICS_A_STATE,		/* u8: enum ics_state */
	ICS_A_IFINDEX,		/* u32 */
	ICS_A_IFNAME,		/* string */
	ICS_A_ADDRESS,		/* binary, 6 bytes */
	ICS_A_NODE_ID,		/* u32 */
	ICS_A_CLUSTER_ID,	/* u32 */
	ICS_A_MTU,		/* u32 */
	ICS_A_MSG_MAX,		/* u32 */
	ICS_A_HEARTBEAT_MS,	/* u32 */
	ICS_A_RESET_AGE_MS,	/* u64 */
	ICS_A_STATS,		/* nest: enum ics_stat */
	ICS_A_CHANNEL,		/* nest: enum ics_chan_attr */
	ICS_A_NODE,		/* nest: enum ics_node_attr */
	ICS_A_RESERVED_15,	/* 15-18 and 20-25: retired, never reused */
	ICS_A_RESERVED_16,
	ICS_A_RESERVED_17,
	ICS_A_RESERVED_18,
	ICS_A_LINK,		/* nest: enum ics_link_attr */
	ICS_A_RESERVED_20,
	ICS_A_RESERVED_21,
	ICS_A_RESERVED_22,
	ICS_A_RESERVED_23,
	ICS_A_RESERVED_24,
	ICS_A_RESERVED_25,
	ICS_A_LINK_TIMEOUT_MS,	/* u32 */
	ICS_A_LINK_WINDOW,	/* u32 */
	ICS_A_HEARTBEAT_MISSES,	/* u32 */
	ICS_A_VOTES,		/* u32 */
	ICS_A_EXPECTED_VOTES,	/* u32 */
	ICS_A_CURRENT_VOTES,	/* u32 */
	ICS_A_QUORUM,		/* u32 */
	ICS_A_HAS_QUORUM,	/* u8 */
	ICS_A_GENERATION,	/* u32 */
	ICS_A_INCARNATION,	/* u32 */
	ICS_A_MEMBER,		/* nest: enum ics_member_attr */
	ICS_A_EVENT,		/* nest: enum ics_event_attr */
	ICS_A_CRC32C_DRIVER,	/* string */
	ICS_A_KEY_ID,		/* u8: 1..255 (0: none, KEY_USE only) */
	ICS_A_KEY,		/* binary, ICS_KEY_LEN bytes; never sent by the kernel */
	ICS_A_KEY_TX,		/* u8: the id of the key we sign with, 0: none */
	ICS_A_AUTH_MODE,	/* u8: enum ics_auth_mode */
	ICS_A_KEYS,		/* nest of ICS_KEY_A_KEY: enum ics_key_attr */
	ICS_A_EXPECTED_VOTES_CFG,	/* u32 */
	ICS_A_REASM_MEM,	/* u64 */
	ICS_A_REASM_RESERVED,	/* u64 */
	ICS_A_REASM_MEM_MAX,	/* u64 */
	__ICS_A_LAST
};
#define ICS_A_MAX (__ICS_A_LAST - 1)

/* Cluster keys (ICS_CMD_KEY_*, design.rst "Cluster key"). */
#define ICS_KEY_LEN		32
#define ICS_KEYS_MAX		4	/* installed at once */
#define ICS_KEY_FPR_LEN		8

/* What an instance signs and accepts (ICS_A_AUTH_MODE). */
enum ics_auth_mode {
	ICS_AUTH_OFF,		/* sign nothing; frames with a key id checked if we hold it */
	ICS_AUTH_ACCEPT,	/* sign everything; accept unsigned frames too */
	ICS_AUTH_REQUIRE,	/* sign everything; drop unsigned frames */
	__ICS_AUTH_MODE_LAST
};
#define ICS_AUTH_MODE_MAX (__ICS_AUTH_MODE_LAST - 1)

enum ics_key_attr {
	ICS_KEY_A_UNSPEC,
	ICS_KEY_A_KEY,		/* nest: one key */
	ICS_KEY_A_ID,		/* u8 */
	ICS_KEY_A_FINGERPRINT,	/* binary, ICS_KEY_FPR_LEN bytes */
	__ICS_KEY_A_LAST
};
#define ICS_KEY_A_MAX (__ICS_KEY_A_LAST - 1)

enum ics_chan_attr {
	ICS_CHAN_A_UNSPEC,
	ICS_CHAN_A_PAD,
	ICS_CHAN_A_ID,		/* u32 */
	ICS_CHAN_A_NAME,	/* string */
	ICS_CHAN_A_HANDLER,	/* u8 */
	ICS_CHAN_A_TX,		/* nest: enum ics_dir_attr */
	ICS_CHAN_A_RX,		/* nest: enum ics_dir_attr */
	ICS_CHAN_A_RX_UNCLAIMED,	/* u64 */
	ICS_CHAN_A_RESERVED_8,	/* 8, 9: retired, never reused */
	ICS_CHAN_A_RESERVED_9,
	ICS_CHAN_A_PRIO,	/* u8: 0..ICS_PRIO_LEVELS - 1 */
	__ICS_CHAN_A_LAST
};
#define ICS_CHAN_A_MAX (__ICS_CHAN_A_LAST - 1)

enum ics_dir_attr {
	ICS_DIR_A_UNSPEC,
	ICS_DIR_A_PAD,
	ICS_DIR_A_MSGS,		/* u64 */
	ICS_DIR_A_BYTES,	/* u64 */
	ICS_DIR_A_HIST,		/* nest: u64 per row, type = row + 1 */
	__ICS_DIR_A_LAST
};
#define ICS_DIR_A_MAX (__ICS_DIR_A_LAST - 1)

enum ics_node_attr {
	ICS_NODE_A_UNSPEC,
	ICS_NODE_A_PAD,
	ICS_NODE_A_ID,		/* u32 */
	ICS_NODE_A_REACHABLE,	/* u8 */
	ICS_NODE_A_ADDRESS,	/* binary, 6 bytes */
	ICS_NODE_A_LAST_HEARD_MS,	/* u64 */
	ICS_NODE_A_TX_MSGS,	/* u64 */
	ICS_NODE_A_TX_BYTES,	/* u64 */
	ICS_NODE_A_RX_MSGS,	/* u64 */
	ICS_NODE_A_RX_BYTES,	/* u64 */
	ICS_NODE_A_RESERVED_10,	/* 10, 11: retired, never reused */
	ICS_NODE_A_RESERVED_11,
	ICS_NODE_A_RX_KEY,	/* u8 */
	__ICS_NODE_A_LAST
};
#define ICS_NODE_A_MAX (__ICS_NODE_A_LAST - 1)

/*
 * Instance counters, in ICS_A_STATS; the attribute type is the enum value.
 * ICS_STAT_RX_BAD_* count frames dropped because a field did not hold.
 */
enum ics_stat {
	ICS_STAT_UNSPEC,
	ICS_STAT_PAD,
	ICS_STAT_TX_FRAMES,		/* frames handed to the NIC */
	ICS_STAT_TX_BYTES,		/* their bytes, ics header included */
	ICS_STAT_TX_ERRORS,		/* frames the NIC refused or we could not build */
	ICS_STAT_RX_FRAMES,		/* frames that passed every check */
	ICS_STAT_RX_BYTES,		/* their bytes, ics header included */
	ICS_STAT_RX_BAD_LEN,		/* shorter than the header or frag_len */
	ICS_STAT_RX_BAD_VERSION,	/* version != ICS_WIRE_VERSION */
	ICS_STAT_RX_BAD_CLUSTER,	/* another cluster id */
	ICS_STAT_RX_BAD_NODE,		/* src/dst node out of range or not us, bad source MAC */
	ICS_STAT_RX_BAD_CHANNEL,	/* channel >= ICS_CHANNELS */
	ICS_STAT_RX_BAD_TYPE,		/* unknown frame type or flags */
	ICS_STAT_RX_BAD_FRAG,		/* fragment fields inconsistent */
	ICS_STAT_RX_DUP_FRAG,		/* fragment overlapping one we hold */
	ICS_STAT_RX_NODE_CONFLICT,	/* a node id claimed by a second MAC */
	ICS_STAT_REASM_TIMEOUT,		/* partial messages dropped (silence, new session...) */
	ICS_STAT_REASM_EVICTED,		/* partial messages pushed out by newer */
	ICS_STAT_REASM_NOMEM,		/* fragments over the reassembly bound */
	ICS_STAT_HELLO_TX,		/* hello frames sent */
	ICS_STAT_HELLO_RX,		/* hello frames received */
	ICS_STAT_RX_BAD_CHECK,		/* CRC32C mismatch */
	ICS_STAT_RX_BAD_SESSION,	/* a session or incarnation we cannot take */
	ICS_STAT_TX_RETRANSMITS,	/* data frames sent again */
	ICS_STAT_RX_DUP_FRAMES,		/* data frames received twice */
	ICS_STAT_RX_OOO_FRAMES,		/* data frames received ahead of a gap */
	ICS_STAT_RX_OVER_WINDOW,	/* data frames beyond the receive window */
	ICS_STAT_TX_ACKS,		/* ACK frames sent */
	ICS_STAT_RX_ACKS,		/* ACK frames received */
	ICS_STAT_TX_RESETS,		/* RESET frames sent */
	ICS_STAT_RX_RESETS,		/* RESET frames received */
	ICS_STAT_LINK_RESETS,		/* send sessions restarted */
	ICS_STAT_MSGS_DONE,		/* messages delivered and acknowledged */
	ICS_STAT_MSGS_FAILED,		/* messages reported failed to the sender */
	ICS_STAT_RX_DUP_MSGS,		/* whole messages received again after a reset */
	ICS_STAT_TX_EAGAIN,		/* sends refused: queue limit */
	ICS_STAT_RX_PEER_DOWN,		/* frames of a node held down or left, dropped */
	ICS_STAT_TX_HOSTDOWN,		/* sends refused: the node is down or left */
	ICS_STAT_HB_LATE,		/* our heartbeat timer ran an interval late */
	ICS_STAT_EVENTS_LOST,		/* membership events dropped: queue full, no memory */
	ICS_STAT_RX_BAD_HELLO,		/* heartbeats with a field out of range, or out of order */
	ICS_STAT_HB_DEFERRED,		/* failure decisions deferred: our receive queue busy */
	ICS_STAT_RESERVED_42,		/* 42-44: retired, never reused nor sent */
	ICS_STAT_RESERVED_43,
	ICS_STAT_RESERVED_44,
	ICS_STAT_DEV_RX_DROPS,		/* /dev/ics: not counted (a full reader refuses: RX_HELD) */
	ICS_STAT_DEV_CLOSE_DROPS,	/* /dev/ics: messages unread when their file closed */
	ICS_STAT_TX_BUNDLES,		/* data frames sent carrying several messages */
	ICS_STAT_TX_BUNDLED,		/* the messages in them */
	ICS_STAT_RX_BUNDLES,		/* such frames received in order */
	ICS_STAT_RX_BUNDLED,		/* the messages in them */
	ICS_STAT_RX_PAUSES,		/* our receivers paused their channel (flow control) */
	ICS_STAT_TX_PAUSES,		/* peers paused a channel for us */
	ICS_STAT_RX_HELD,		/* messages a handler refused, held for it */
	ICS_STAT_RX_HELD_FULL,		/* data frames not taken: too much held for the channel */
	ICS_STAT_RX_HELD_DROPS,		/* held messages dropped: their sender restarted, unbind */
	ICS_STAT_RX_UNCONFIRMED,	/* heartbeats of a claim not confirmed yet */
	ICS_STAT_RX_AUTH_BAD,		/* signed frames whose tag did not check */
	ICS_STAT_RX_NO_KEY,		/* unsigned where required, or a key we lack */
	ICS_STAT_RX_REPLAY,		/* signed frames whose counter was seen or too old */
	ICS_STAT_TX_AUTH_ERRORS,	/* frames not sent: no tag (key gone, counter spent) */
	ICS_STAT_REASM_OVERRUN,		/* large messages dropped past reasm_mem_max: resent */
	__ICS_STAT_LAST
};
#define ICS_STAT_MAX (__ICS_STAT_LAST - 1)

/*
 * Links, in ICS_CMD_GET_LINKS: one per known peer. Counters count since the
 * peer was first heard on this binding.
 */
enum ics_link_attr {
	ICS_LINK_A_UNSPEC,
	ICS_LINK_A_PAD,
	ICS_LINK_A_NODE,	/* u32: peer node id */
	ICS_LINK_A_TX_SESSION,	/* u32: our send session, 0 before the first */
	ICS_LINK_A_RX_SESSION,	/* u32: the peer's session we receive, 0 = none */
	ICS_LINK_A_SND_UNA,	/* u32: oldest unacknowledged seq */
	ICS_LINK_A_SND_NXT,	/* u32: next seq to send */
	ICS_LINK_A_RCV_NXT,	/* u32: next seq expected */
	ICS_LINK_A_CWND,	/* u32: congestion window, frames (at least 64 KiB) */
	ICS_LINK_A_SSTHRESH,	/* u32: frames */
	ICS_LINK_A_INFLIGHT,	/* u32: frames sent, not acknowledged */
	ICS_LINK_A_SRTT_US,	/* u32: smoothed round-trip time */
	ICS_LINK_A_RTTVAR_US,	/* u32 */
	ICS_LINK_A_RTO_MS,	/* u32: retransmission timeout now */
	ICS_LINK_A_MTU,		/* u32: min(our MTU, the peer's) */
	ICS_LINK_A_QUEUED_MSGS,	/* u32: messages queued or unacknowledged */
	ICS_LINK_A_QUEUED_BYTES,	/* u64: their charge: bytes + 64 per message */
	ICS_LINK_A_QUEUE,	/* nest: u64 charge per channel, type = channel + 1 */
	ICS_LINK_A_OOO_QUEUED,	/* u32: frames held ahead of a gap */
	ICS_LINK_A_TX_FRAMES,	/* u64: data frames sent the first time */
	ICS_LINK_A_RETRANSMITS,	/* u64: data frames sent again */
	ICS_LINK_A_FAST_RETRANSMITS,	/* u64: of those, on SACK evidence */
	ICS_LINK_A_TIMEOUTS,	/* u64: retransmission timer expiries */
	ICS_LINK_A_RX_FRAMES,	/* u64: data frames accepted */
	ICS_LINK_A_DUPLICATES,	/* u64: data frames received twice */
	ICS_LINK_A_OUT_OF_ORDER,	/* u64: data frames received ahead of a gap */
	ICS_LINK_A_CRC_ERRORS,	/* u64: frames from its MAC failing CRC32C */
	ICS_LINK_A_TX_ACKS,	/* u64 */
	ICS_LINK_A_RX_ACKS,	/* u64 */
	ICS_LINK_A_RESETS,	/* u64: send sessions restarted */
	ICS_LINK_A_MSGS_DONE,	/* u64 */
	ICS_LINK_A_MSGS_FAILED,	/* u64 */
	ICS_LINK_A_PEER_PAUSED,	/* u32: channels the peer paused (bit per channel) */
	__ICS_LINK_A_LAST
};
#define ICS_LINK_A_MAX (__ICS_LINK_A_LAST - 1)

enum ics_member_attr {
	ICS_MEMBER_A_UNSPEC,
	ICS_MEMBER_A_PAD,
	ICS_MEMBER_A_NODE,		/* u32 */
	ICS_MEMBER_A_SELF,		/* u8 */
	ICS_MEMBER_A_STATE,		/* u8: enum ics_member_state */
	ICS_MEMBER_A_REASON,		/* u8: enum ics_reason */
	ICS_MEMBER_A_INCARNATION,	/* u32 */
	ICS_MEMBER_A_VOTES,		/* u32 */
	ICS_MEMBER_A_ADDRESS,		/* binary, 6 bytes */
	ICS_MEMBER_A_SINCE_NS,		/* u64 */
	ICS_MEMBER_A_LAST_HEARD_NS,	/* u64 */
	ICS_MEMBER_A_HEARTBEAT_MS,	/* u32 */
	ICS_MEMBER_A_HB_RX,		/* u64 */
	ICS_MEMBER_A_HB_MISSED,		/* u64 */
	ICS_MEMBER_A_HB_RTT_US,		/* u32 */
	ICS_MEMBER_A_SEES_US,		/* u8 */
	ICS_MEMBER_A_CONFLICTS,		/* u64 */
	ICS_MEMBER_A_CONFLICT_ADDRESS,	/* binary, 6 bytes */
	__ICS_MEMBER_A_LAST
};
#define ICS_MEMBER_A_MAX (__ICS_MEMBER_A_LAST - 1)

enum ics_event_attr {
	ICS_EVENT_A_UNSPEC,
	ICS_EVENT_A_PAD,
	ICS_EVENT_A_TYPE,		/* u8: enum ics_event_type */
	ICS_EVENT_A_TIME_NS,		/* u64 */
	ICS_EVENT_A_REALTIME_NS,	/* u64 */
	ICS_EVENT_A_GENERATION,		/* u32 */
	ICS_EVENT_A_NODE,		/* u32 */
	ICS_EVENT_A_OLD_STATE,		/* u8: enum ics_member_state */
	ICS_EVENT_A_STATE,		/* u8: enum ics_member_state */
	ICS_EVENT_A_REASON,		/* u8: enum ics_reason */
	ICS_EVENT_A_INCARNATION,	/* u32 */
	ICS_EVENT_A_SILENT_MS,		/* u32 */
	ICS_EVENT_A_ADDRESS,		/* binary, 6 bytes */
	ICS_EVENT_A_CURRENT_VOTES,	/* u32 */
	ICS_EVENT_A_EXPECTED_VOTES,	/* u32 */
	ICS_EVENT_A_QUORUM,		/* u32 */
	ICS_EVENT_A_HAS_QUORUM,		/* u8 */
	ICS_EVENT_A_LOST,		/* u32 */
	__ICS_EVENT_A_LAST
};
#define ICS_EVENT_A_MAX (__ICS_EVENT_A_LAST - 1)

/*
 * 4. The message device, /dev/ics (Documentation/user-api.rst).
 *
 * A file opened on /dev/ics belongs to the instance of the opener's network
 * namespace. ICS_IOC_BIND ties it to one channel (one file per channel and
 * instance); from then on each write() sends one message and each read()
 * returns one (several with ICS_DEV_BIND_BATCH), both as a struct
 * ics_dev_hdr followed by hdr.len payload bytes (readv/writev may split
 * them). Channels in the module parameter
 * user_channels (default: TEST) may be bound by members of the group
 * user_gid (default -1: nobody); the others, and those to anyone, need
 * CAP_NET_ADMIN.
 */
#define ICS_DEV_NAME	"ics"

struct ics_dev_hdr {
	__u32	len;		/* payload bytes that follow, 0..ICS_MSG_MAX */
	__u8	node;		/* write: the destination; read: the source */
	__u8	channel;	/* the bound channel */
	__u16	flags;		/* ICS_DEV_F_* */
};

/*
 * write(): return once the peer's receiver took the message, with its fate;
 * EINPROGRESS if a signal or the send timeout ended the wait first, the
 * message still queued (EINTR: nothing was queued). Refused (EINVAL) on a
 * non-blocking file. Other bits are refused (EINVAL); 0x01, 0x02 and 0x04
 * are retired and never reused.
 */
#define ICS_DEV_F_SYNC		0x08
#define ICS_DEV_F_WRITE		ICS_DEV_F_SYNC

struct ics_dev_bind {
	__u32	channel;	/* enum ics_channel */
	__u32	flags;		/* ICS_DEV_BIND_* */
};

/*
 * ICS_DEV_BIND_BATCH: each read() returns as many whole queued messages as
 * fit (at least the first, which must fit as ever), each a struct
 * ics_dev_hdr and its payload, the next one starting at the next multiple
 * of ICS_DEV_ALIGN bytes (the padding is zero); the count returned is the
 * end of the last one. ICS_DEV_NEXT(off, len) is the offset of the record
 * after the one at off with len payload bytes.
 */
#define ICS_DEV_BIND_BATCH	0x01
#define ICS_DEV_BIND_ALL	0x01
#define ICS_DEV_ALIGN		8
#define ICS_DEV_NEXT(off, len) \
	(((__u64)(off) + sizeof(struct ics_dev_hdr) + (len) + ICS_DEV_ALIGN - 1) & \
	 ~(__u64)(ICS_DEV_ALIGN - 1))

/* ICS_IOC_STATS: this file's counters since open */
struct ics_dev_stats {
	__u64	tx_msgs;	/* messages queued by write() */
	__u64	tx_bytes;
	__u64	tx_done;	/* acknowledged by the peer: delivered */
	__u64	tx_failed;	/* reported failed (last_error says why) */
	__u64	rx_msgs;	/* messages read */
	__u64	rx_bytes;
	__u64	rx_dropped;	/* 0: a full queue refuses, ics holds the message */
	__s32	last_error;	/* -errno of the last failed message, or 0 */
	__u32	rx_queued;	/* messages waiting to be read */
};

#define ICS_IOC_MAGIC		0xB5
#define ICS_IOC_BIND		_IOW(ICS_IOC_MAGIC, 1, struct ics_dev_bind)
#define ICS_IOC_STATS		_IOR(ICS_IOC_MAGIC, 2, struct ics_dev_stats)
/*
 * Bytes of queued messages (their memory): past half of it the channel is
 * paused (flow control); a queue already past all of it refuses arrivals,
 * which the sender's member holds until the reader catches up.
 */
#define ICS_IOC_SET_RCVBUF	_IOW(ICS_IOC_MAGIC, 3, __u32)
#define ICS_DEV_RCVBUF_DEFAULT	(32U << 20)
#define ICS_DEV_RCVBUF_MAX	(1U << 30)
/*
 * Milliseconds a blocking write() waits for room in the link's queues
 * before it fails with EAGAIN, as a socket's SO_SNDTIMEO, and an
 * ICS_DEV_F_SYNC write for its message's fate (EINPROGRESS); 0 (the
 * default) waits until there is room (the fate comes) or a signal comes.
 */
#define ICS_IOC_SET_SNDTIMEO	_IOW(ICS_IOC_MAGIC, 4, __u32)

/*
 * 5. The test service, ics_test.ko: generic netlink family "ics_test",
 * version ICS_TEST_GENL_VERSION (Documentation/test-service.rst).
 *
 * ics_test is an ordinary client of the in-kernel API, loaded only where
 * tests or benchmarks run; ics.ko knows nothing of it. In each network
 * namespace it receives on the channels it is attached to, checks every
 * message it gets and answers the ones that ask (ECHO, PING), and it
 * sends generated messages. What a test needs travels in the message: a
 * message of at least sizeof(struct ics_test_hdr) bytes starts with that
 * header and goes on with the pattern below; a shorter one is pattern
 * only, with seq 0. Byte i of a message of len bytes sent by node src on
 * channel ch, i >= the header, is byte i % 4 of the little-endian u32
 *   ((i / 4) + 1) * 0x9E3779B1 ^ jhash_3words(seq, len, src << 8 | ch, 0x1c5)
 * (the kernel's jhash), so a receiver checks every byte without state and
 * a fragment put at the wrong offset or into the wrong message does not
 * verify. The hashes chain (seq, len, verdict) over every message sent to /
 * taken from a node on a channel, in order, answers (REPLY, PONG: seq 0)
 * left out: equal hashes on both sides mean nothing was lost, duplicated or
 * reordered (one generator at a time per node and channel; a hash counts
 * sends once queued).
 *
 * ICS_TEST_CMD_SEND (doit, netns admin)
 *   Request:
 *     ICS_TEST_A_NODE: u32, 1..ICS_MAX_NODES
 *     ICS_TEST_A_CHANNEL: u32, an enum ics_channel
 *     ICS_TEST_A_SIZE: u32, 0..ICS_MSG_MAX (the largest, with MIXED;
 *       PING messages are at least the header)
 *     ICS_TEST_A_COUNT: u32, >= 1 (PING: at most ICS_TEST_PING_MAX)
 *     ICS_TEST_A_FLAGS: u32, ICS_TEST_F_*, optional
 *     ICS_TEST_A_TIMEOUT_MS: u32, optional, default 10000: the wait for
 *       queue room per message (with PING: for each answer)
 *   Reply: ICS_TEST_A_SENT, _DONE, _FAILED (u32), ICS_TEST_A_ERROR (u32,
 *   errno of the first failure), ICS_TEST_A_RTT (nest of enum
 *   ics_rtt_attr, with PING).
 *   Errors: those of ics_send_msg() (ENOTCONN, EINVAL, EHOSTUNREACH,
 *   EHOSTDOWN, EMSGSIZE, EAGAIN, ETIMEDOUT, EINTR, ENOMEM) for the first
 *   message, EBUSY (a PING run is going on), EINVAL (PING with MIXED or
 *   NONBLOCK). Once one message is queued the
 *   reply is a success that reports the counts and the first error.
 *
 * ICS_TEST_CMD_ATTACH (doit, netns admin)
 *   Request: ICS_TEST_A_CHANNELS: u32, bit mask of the channels to receive
 *   on from now on (0: none). Errors: EBUSY (another client receives on
 *   one of them; nothing changed).
 *
 * ICS_TEST_CMD_GET (doit)
 *   Reply:
 *     ICS_TEST_A_CHANNELS: u32, the channels attached
 *     ICS_TEST_A_QUEUED: u32, skb memory of the messages taken and not
 *       counted yet (0: everything taken is in the counters)
 *     ICS_TEST_A_CHANNEL_STATS: nest per channel that counted anything:
 *       ICS_TEST_C_* (ICS_TEST_C_ID u32, the rest u64)
 *     ICS_TEST_A_NODE_HASHES: nest per node with a hash:
 *       ICS_TEST_H_NODE: u32
 *       ICS_TEST_H_TX, ICS_TEST_H_RX: nest of 16 u32, type = channel + 1
 *
 * ICS_TEST_CMD_RESET (doit, netns admin): zeroes counters, hashes and the
 * send sequence numbers.
 */
#define ICS_TEST_GENL_NAME	"ics_test"
#define ICS_TEST_GENL_VERSION	1

struct ics_test_hdr {
	__be32	magic;		/* ICS_TEST_MAGIC */
	__u8	op;		/* enum ics_test_op */
	__u8	pad[3];		/* 0 */
	__be32	seq;		/* sender's count of messages to that node and channel */
	__be32	arg;		/* ECHO: the answer's length; PING: any, its PONG returns it */
};

#define ICS_TEST_MAGIC		0x49435354	/* "ICST" */

enum ics_test_op {
	ICS_TEST_OP_DATA,	/* check and count */
	ICS_TEST_OP_SINK,	/* count only */
	ICS_TEST_OP_ECHO,	/* answer with a REPLY of arg bytes (at least the header) */
	ICS_TEST_OP_PING,	/* answer with a PONG of the same length */
	ICS_TEST_OP_PONG,
	ICS_TEST_OP_REPLY,	/* the answer to an ECHO */
	__ICS_TEST_OP_MAX
};

#define ICS_TEST_PING_MAX	(1U << 20)

/* ICS_TEST_A_RTT: round trips of ICS_TEST_F_PING, in nanoseconds. */
enum ics_rtt_attr {
	ICS_RTT_A_UNSPEC,
	ICS_RTT_A_PAD,
	ICS_RTT_A_COUNT,	/* u32 */
	ICS_RTT_A_MIN_NS,	/* u64 */
	ICS_RTT_A_P50_NS,	/* u64 */
	ICS_RTT_A_P99_NS,	/* u64 */
	ICS_RTT_A_MAX_NS,	/* u64 */
	ICS_RTT_A_MEAN_NS,	/* u64 */
	ICS_RTT_A_P90_NS,	/* u64 */
	ICS_RTT_A_HIST,		/* binary, see below */
	__ICS_RTT_A_LAST
};
#define ICS_RTT_A_MAX (__ICS_RTT_A_LAST - 1)

/*
 * ICS_RTT_A_HIST: every round trip of the run in a log-linear histogram,
 * as __u32 pairs (bucket, count), in bucket order, empty buckets left out.
 * A round trip of v ns is in bucket v if v < 2^ICS_RTT_HIST_SUB, else,
 * with k = floor(log2(v)), in
 *   ((k - ICS_RTT_HIST_SUB) << ICS_RTT_HIST_SUB) + (v >> (k - ICS_RTT_HIST_SUB))
 * which holds the 2^(k - ICS_RTT_HIST_SUB) values from
 * (v >> (k - ICS_RTT_HIST_SUB)) << (k - ICS_RTT_HIST_SUB) on: exact below
 * 256 ns, a bucket is at most 1/128 of its values above. Histograms of
 * several runs add up bucket by bucket.
 */
#define ICS_RTT_HIST_SUB	7
#define ICS_RTT_HIST_BUCKETS	((65 - ICS_RTT_HIST_SUB) << ICS_RTT_HIST_SUB)

/* ICS_TEST_A_FLAGS */
#define ICS_TEST_F_WAIT		0x01	/* wait until every message is done or failed */
#define ICS_TEST_F_NONBLOCK	0x02	/* stop at the first full queue (EAGAIN) */
#define ICS_TEST_F_MIXED	0x04	/* sizes spread over 0..SIZE, log-uniform */
#define ICS_TEST_F_PING		0x08	/* one at a time, each answered: round trips */
#define ICS_TEST_F_ALL		0x0f

enum ics_test_cmd {
	ICS_TEST_CMD_UNSPEC,
	ICS_TEST_CMD_SEND,
	ICS_TEST_CMD_ATTACH,
	ICS_TEST_CMD_GET,
	ICS_TEST_CMD_RESET,
	__ICS_TEST_CMD_MAX
};
#define ICS_TEST_CMD_MAX (__ICS_TEST_CMD_MAX - 1)

enum ics_test_attr {
	ICS_TEST_A_UNSPEC,
	ICS_TEST_A_PAD,
	ICS_TEST_A_NODE,		/* u32 */
	ICS_TEST_A_CHANNEL,		/* u32 */
	ICS_TEST_A_SIZE,		/* u32 */
	ICS_TEST_A_COUNT,		/* u32 */
	ICS_TEST_A_FLAGS,		/* u32: ICS_TEST_F_* */
	ICS_TEST_A_TIMEOUT_MS,		/* u32 */
	ICS_TEST_A_SENT,		/* u32 */
	ICS_TEST_A_DONE,		/* u32 */
	ICS_TEST_A_FAILED,		/* u32 */
	ICS_TEST_A_ERROR,		/* u32 */
	ICS_TEST_A_RTT,			/* nest: enum ics_rtt_attr */
	ICS_TEST_A_CHANNELS,		/* u32: bit mask */
	ICS_TEST_A_QUEUED,		/* u32 */
	ICS_TEST_A_CHANNEL_STATS,	/* nest: enum ics_test_chan_attr */
	ICS_TEST_A_NODE_HASHES,		/* nest: enum ics_test_hash_attr */
	__ICS_TEST_A_MAX
};
#define ICS_TEST_A_MAX (__ICS_TEST_A_MAX - 1)

enum ics_test_chan_attr {
	ICS_TEST_C_UNSPEC,
	ICS_TEST_C_PAD,
	ICS_TEST_C_ID,		/* u32 */
	ICS_TEST_C_RX_MSGS,	/* u64: messages taken */
	ICS_TEST_C_RX_BYTES,	/* u64 */
	ICS_TEST_C_RX_OK,	/* u64: header and pattern verified */
	ICS_TEST_C_RX_BAD,	/* u64: did not verify */
	ICS_TEST_C_SINKED,	/* u64: SINK messages, counted only */
	ICS_TEST_C_ANSWERS,	/* u64: ECHO and PING answers queued */
	ICS_TEST_C_ANSWER_DROPS, /* u64: answers not queued (queue full) */
	ICS_TEST_C_REFUSED,	/* u64: messages refused for now (-EAGAIN) */
	__ICS_TEST_C_MAX
};
#define ICS_TEST_C_MAX (__ICS_TEST_C_MAX - 1)

enum ics_test_hash_attr {
	ICS_TEST_H_UNSPEC,
	ICS_TEST_H_NODE,	/* u32 */
	ICS_TEST_H_TX,		/* nest: u32 per channel, type = channel + 1 */
	ICS_TEST_H_RX,		/* nest: u32 per channel, type = channel + 1 */
	__ICS_TEST_H_MAX
};
#define ICS_TEST_H_MAX (__ICS_TEST_H_MAX - 1)

#endif /* _UAPI_LINUX_ICS_H */
