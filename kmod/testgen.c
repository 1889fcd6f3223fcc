// SPDX-License-Identifier: GPL-2.0
/*
 * The traffic generator behind ICS_CMD_SEND_TEST and its test pattern.
 *
 * A generator message carries ICS_WF_TESTPAT; its bytes are a function of the
 * sender's node id, the channel, the message id, the length and the offset,
 * so a receiver can check every byte without state, and a fragment put at the
 * wrong offset or into the wrong message does not verify.
 */
#include <linux/jhash.h>
#include <linux/sched/signal.h>

#include "ics.h"

u32 ics_pattern_seed(u8 src, u8 channel, u32 msg_id, u32 len)
{
	return jhash_3words(msg_id, len, (u32)src << 8 | channel, 0x1c5);
}

static inline u8 ics_pattern_byte(u32 seed, u32 i)
{
	return ((i / 4 + 1) * 0x9E3779B1u ^ seed) >> (8 * (i % 4));
}

static int ics_fill_pattern(const struct ics_txmsg *m, void *to, u32 off, u32 n)
{
	u32 seed = ics_pattern_seed(m->src, m->channel, m->msg_id, m->len);
	u8 *p = to;
	u32 i;

	for (i = 0; i < n; i++)
		p[i] = ics_pattern_byte(seed, off + i);
	return 0;
}

bool ics_pattern_check(struct sk_buff *skb, u32 seed)
{
	u8 buf[256];
	u32 off, n, i;

	for (off = 0; off < skb->len; off += n) {
		n = min_t(u32, sizeof(buf), skb->len - off);
		if (skb_copy_bits(skb, off, buf, n))
			return false;
		for (i = 0; i < n; i++)
			if (buf[i] != ics_pattern_byte(seed, off + i))
				return false;
	}
	return true;
}

int ics_testgen(struct ics_net *in, u8 node, u8 channel, u32 size, u32 count, u32 *sent)
{
	struct ics_txmsg m = {
		.node = node,
		.channel = channel,
		.type = ICS_FT_DATA,
		.flags = ICS_WF_TESTPAT,
		.len = size,
		.fill = ics_fill_pattern,
	};
	int err = 0;

	for (*sent = 0; *sent < count; (*sent)++) {
		if (signal_pending(current))
			return -EINTR;
		err = ics_xmit(in, &m, GFP_KERNEL);
		if (err)
			return err;
		cond_resched();
	}
	return 0;
}
