/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * ics - internode communication subsystem: UAPI.
 *
 * This header is the one contract between ics.ko, its tools (icstat, icsctl)
 * and anything else that speaks to it. It defines three things:
 *
 *   1. the channels and the message-size histogram rows,
 *   2. the wire format (raw Ethernet, ethertype ICS_ETH_P),
 *   3. the generic netlink family "ics".
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
 *     ICS_A_HELLO_MS: u32, hello interval in ms
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
 *   Request: nothing. Zeroes every counter this family reports.
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
 *       ICS_CHAN_A_RX_PATTERN_OK: u64, test-pattern messages that verified
 *       ICS_CHAN_A_RX_PATTERN_BAD: u64, test-pattern messages that did not
 *   The dump is interrupted (NLM_F_DUMP_INTR) if a reset, bind or unbind
 *   happened while it ran.
 *
 * ICS_CMD_GET_NODES (dump)
 *   One message per node that is known now or has non-zero counters:
 *     ICS_A_NODE: nest
 *       ICS_NODE_A_ID: u32
 *       ICS_NODE_A_REACHABLE: u8, 1 when its MAC is known on the bound NIC
 *       ICS_NODE_A_ADDRESS: 6 bytes, only when reachable
 *       ICS_NODE_A_LAST_HEARD_MS: u64, ms since its last frame, when reachable
 *       ICS_NODE_A_TX_MSGS, ICS_NODE_A_TX_BYTES: u64, sent to it
 *       ICS_NODE_A_RX_MSGS, ICS_NODE_A_RX_BYTES: u64, received from it
 *   Node counters count data messages; ics's own hellos count only in the
 *   CNX channel and in ICS_STAT_HELLO_TX/RX.
 *
 * ICS_CMD_SEND_TEST (doit, admin)
 *   The in-kernel traffic generator: send COUNT messages of SIZE bytes to a
 *   node on a channel, each filled with a test pattern the receiver checks
 *   (ICS_CHAN_A_RX_PATTERN_OK/BAD). Returns when all were handed to the NIC,
 *   on the first error, or when the caller gets a fatal signal.
 *   Request:
 *     ICS_A_NODE_ID: u32
 *     ICS_A_TEST_CHANNEL: u32, an enum ics_channel
 *     ICS_A_TEST_SIZE: u32, 0..ICS_MSG_MAX
 *     ICS_A_TEST_COUNT: u32, >= 1
 *   Reply: ICS_A_TEST_SENT: u32, messages sent
 *   Errors: ENOTCONN (not bound), EINVAL (node id or channel out of range,
 *   count 0, sending to our own node id), EHOSTUNREACH (node never heard
 *   from), EMSGSIZE (size > ICS_MSG_MAX), ENETDOWN (NIC unbound meanwhile),
 *   ENOBUFS (the NIC dropped a frame), EINTR (signal).
 *
 * Wire format
 * ===========
 *
 * Every frame is an Ethernet II frame with ethertype ICS_ETH_P (0x88B5,
 * IEEE 802 "local experimental ethertype 1") followed by struct ics_wire_hdr
 * (all fields big-endian) and frag_len bytes of payload. A message of
 * msg_len bytes (0..ICS_MSG_MAX) is cut into fragments of at most
 * MTU - sizeof(struct ics_wire_hdr) bytes; every fragment carries msg_id,
 * msg_len and its own frag_off, so the receiver can reassemble in any order.
 * A receiver drops and counts (ICS_STAT_RX_BAD_*) every frame whose version,
 * cluster id, node ids, channel, type, lengths or fragment fields do not
 * hold; nothing from the wire is trusted.
 */
#ifndef _UAPI_LINUX_ICS_H
#define _UAPI_LINUX_ICS_H

#include <linux/types.h>

#define ICS_GENL_NAME		"ics"
#define ICS_GENL_VERSION	1

#define ICS_ETH_P		0x88B5	/* IEEE local experimental ethertype 1 */
#define ICS_WIRE_VERSION	1

#define ICS_MAX_NODES		64	/* node ids are 1..ICS_MAX_NODES */
#define ICS_NODE_BROADCAST	0	/* dst_node of a frame to every member */
#define ICS_MSG_MAX		(16U << 20)	/* largest message: 16 MiB */
#define ICS_MIN_MTU		576	/* a NIC must carry at least this */

/*
 * Channels. The ids are part of the wire format and never change.
 * CNX carries membership (hello frames today).
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

/* Frame header on the wire (36 bytes); multi-byte fields are big-endian. */
struct ics_wire_hdr {
	__u8	version;	/* ICS_WIRE_VERSION */
	__u8	type;		/* enum ics_frame_type */
	__u8	flags;		/* ICS_WF_* */
	__u8	channel;	/* enum ics_channel */
	__be32	cluster_id;	/* must equal the receiver's */
	__u8	src_node;	/* 1..ICS_MAX_NODES */
	__u8	dst_node;	/* 1..ICS_MAX_NODES or ICS_NODE_BROADCAST */
	__be16	frag_len;	/* payload bytes in this frame */
	__be32	msg_id;		/* per sender and destination, +1 per message */
	__be32	msg_len;	/* whole message, 0..ICS_MSG_MAX */
	__be32	frag_off;	/* offset of this payload in the message */
	__be32	seq;		/* reserved for reliable delivery: send 0 */
	__be32	ack;		/* reserved for reliable delivery: send 0 */
	__be32	check;		/* reserved for an integrity check: send 0 */
};

enum ics_frame_type {
	ICS_FT_DATA = 1,	/* a message, or a fragment of one */
	ICS_FT_HELLO = 2,	/* struct ics_wire_hello on channel CNX */
};

/* Flags. Unknown flags make a receiver drop the frame (ICS_STAT_RX_BAD_TYPE). */
#define ICS_WF_TESTPAT	0x01	/* payload is the generator's test pattern */
#define ICS_WF_ALL	ICS_WF_TESTPAT

/* Payload of an ICS_FT_HELLO frame. */
struct ics_wire_hello {
	__be32	incarnation;	/* random per bind: a new one means a restart */
	__be32	mtu;		/* sender's MTU now */
	__be32	hello_ms;	/* sender's hello interval */
	__be32	flags;		/* ICS_HF_* */
};

#define ICS_HF_REPLY	0x01	/* unicast answer to a hello from a new node */

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
	ICS_CMD_SEND_TEST,
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
	ICS_A_HELLO_MS,		/* u32 */
	ICS_A_RESET_AGE_MS,	/* u64 */
	ICS_A_STATS,		/* nest: enum ics_stat */
	ICS_A_CHANNEL,		/* nest: enum ics_chan_attr */
	ICS_A_NODE,		/* nest: enum ics_node_attr */
	ICS_A_TEST_CHANNEL,	/* u32 */
	ICS_A_TEST_SIZE,	/* u32 */
	ICS_A_TEST_COUNT,	/* u32 */
	ICS_A_TEST_SENT,	/* u32 */
	__ICS_A_LAST
};
#define ICS_A_MAX (__ICS_A_LAST - 1)

enum ics_chan_attr {
	ICS_CHAN_A_UNSPEC,
	ICS_CHAN_A_PAD,
	ICS_CHAN_A_ID,		/* u32 */
	ICS_CHAN_A_NAME,	/* string */
	ICS_CHAN_A_HANDLER,	/* u8 */
	ICS_CHAN_A_TX,		/* nest: enum ics_dir_attr */
	ICS_CHAN_A_RX,		/* nest: enum ics_dir_attr */
	ICS_CHAN_A_RX_UNCLAIMED,	/* u64 */
	ICS_CHAN_A_RX_PATTERN_OK,	/* u64 */
	ICS_CHAN_A_RX_PATTERN_BAD,	/* u64 */
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
	ICS_STAT_RX_BAD_NODE,		/* src/dst node out of range or not us */
	ICS_STAT_RX_BAD_CHANNEL,	/* channel >= ICS_CHANNELS */
	ICS_STAT_RX_BAD_TYPE,		/* unknown frame type or flags */
	ICS_STAT_RX_BAD_FRAG,		/* fragment fields inconsistent */
	ICS_STAT_RX_DUP_FRAG,		/* fragment overlapping one we hold */
	ICS_STAT_RX_NODE_CONFLICT,	/* a node id claimed by a second MAC */
	ICS_STAT_REASM_TIMEOUT,		/* partial messages expired */
	ICS_STAT_REASM_EVICTED,		/* partial messages pushed out by newer */
	ICS_STAT_REASM_NOMEM,		/* fragments over the reassembly bound */
	ICS_STAT_HELLO_TX,		/* hello frames sent */
	ICS_STAT_HELLO_RX,		/* hello frames received */
	__ICS_STAT_LAST
};
#define ICS_STAT_MAX (__ICS_STAT_LAST - 1)

#endif /* _UAPI_LINUX_ICS_H */
