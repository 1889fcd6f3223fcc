// SPDX-License-Identifier: GPL-2.0
/*
 * The traffic generator behind ICS_CMD_SEND_TEST, its test pattern, and
 * round-trip measurement (ICS_TEST_F_PING).
 *
 * A generator message carries ICS_WF_TESTPAT; its bytes are a function of the
 * sender's node id, the channel, the message id, the length and the offset,
 * so a receiver can check every byte without state, and a fragment put at the
 * wrong offset or into the wrong message does not verify.
 *
 * The generator is an ordinary in-kernel sender: it queues through the link
 * and counts completions, which is how the tests see that every message was
 * acknowledged or failed.
 */
#include <linux/ktime.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "ics.h"

u32 ics_pattern_seed(u8 src, u8 channel, u32 msg_id, u32 len)
{
	return jhash_3words(msg_id, len, (u32)src << 8 | channel, 0x1c5);
}

/*
 * The pattern is a stream of little-endian u32 words: word k (bytes 4k to
 * 4k + 3 of the message) is (k + 1) * 0x9E3779B1 ^ seed. Fill and check
 * work a word at a time; they run for every generator byte, in the
 * receive path too.
 */
static inline u32 ics_pattern_word(u32 seed, u32 k)
{
	return (k + 1) * 0x9E3779B1u ^ seed;
}

static inline u8 ics_pattern_byte(u32 seed, u32 i)
{
	return ics_pattern_word(seed, i / 4) >> (8 * (i % 4));
}

/* memcpy() of 4 bytes: an unaligned load or store, on any kernel version. */
static inline u32 ics_load_le32(const u8 *p)
{
	__le32 w;

	memcpy(&w, p, sizeof(w));
	return le32_to_cpu(w);
}

static inline void ics_store_le32(u8 *p, u32 v)
{
	__le32 w = cpu_to_le32(v);

	memcpy(p, &w, sizeof(w));
}

void ics_pattern_fill(u32 seed, u8 *to, u32 off, u32 n)
{
	u32 i = 0;

	for (; i < n && (off + i) % 4; i++)
		to[i] = ics_pattern_byte(seed, off + i);
	for (; i + 4 <= n; i += 4)
		ics_store_le32(to + i, ics_pattern_word(seed, (off + i) / 4));
	for (; i < n; i++)
		to[i] = ics_pattern_byte(seed, off + i);
}

/* Do the @n bytes at @p hold the pattern from message offset @off? */
static bool ics_pattern_cmp(u32 seed, const u8 *p, u32 off, u32 n)
{
	u32 i = 0;

	for (; i < n && (off + i) % 4; i++)
		if (p[i] != ics_pattern_byte(seed, off + i))
			return false;
	for (; i + 4 <= n; i += 4)
		if (ics_load_le32(p + i) != ics_pattern_word(seed, (off + i) / 4))
			return false;
	for (; i < n; i++)
		if (p[i] != ics_pattern_byte(seed, off + i))
			return false;
	return true;
}

/*
 * Every byte of @skb (linear part, pages, frag_list), in place, as the
 * message's bytes from offset @msg_off: a whole message (0), or one
 * fragment as reassembly takes it.
 */
bool ics_pattern_check(struct sk_buff *skb, u32 seed, u32 msg_off)
{
	struct skb_seq_state st;
	const u8 *p;
	u32 off = 0, n;
	bool ok = true;

	skb_prepare_seq_read(skb, 0, skb->len, &st);
	while ((n = skb_seq_read(off, &p, &st)) != 0) {
		if (!ics_pattern_cmp(seed, p, msg_off + off, n)) {
			ok = false;
			break;
		}
		off += n;
	}
	skb_abort_seq_read(&st);
	return ok && off == skb->len;
}

/* The first (up to 16) of @own bytes of @skb, linear or not, at @off. */
static bool ics_pattern_check_start(const struct sk_buff *skb, u32 own, u32 seed, u32 off)
{
	u8 buf[16];
	u32 n = min_t(u32, own, sizeof(buf));

	return !skb_copy_bits(skb, 0, buf, n) && ics_pattern_cmp(seed, buf, off, n);
}

/*
 * A reassembled message whose fragments each verified as they came: check
 * that the join put them in order, by the first bytes of each piece (the
 * head's own data, then each skb on its frag_list) at its offset.
 */
bool ics_pattern_check_joined(struct sk_buff *skb, u32 seed)
{
	struct sk_buff *frag;
	u32 off = skb->len;

	skb_walk_frags(skb, frag)
		off -= frag->len;	/* the head's own bytes */
	if (!ics_pattern_check_start(skb, off, seed, 0))
		return false;
	skb_walk_frags(skb, frag) {
		if (!ics_pattern_check_start(frag, frag->len, seed, off))
			return false;
		off += frag->len;
	}
	return off == skb->len;
}

/*
 * ICS_TEST_F_MIXED: message @i's size in 0..@max. Each power-of-two band is
 * 1/sqrt(2) as likely as the one below it, so most messages are small and a
 * few are large, like the traffic in Figure 14 of the white paper.
 */
static u32 ics_mixed_size(u32 max, u8 channel, u32 i)
{
	u32 x = jhash_2words(i, channel, 0x5eed) | 1, band = 0, top = fls(max), len;

	while (band < top) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		if ((x & 0xffff) >= 46341)	/* 65536 / sqrt(2) */
			break;
		band++;
	}
	if (!band)
		return 0;
	len = (1U << (band - 1)) + (x >> 16) % (1U << (band - 1));
	return min(len, max);
}

/* Outstanding messages of one run; freed by whoever drops the last ref. */
struct ics_gen {
	refcount_t ref;
	wait_queue_head_t wq;
	atomic_t done, failed, error;
};

static void ics_gen_put(struct ics_gen *g)
{
	if (refcount_dec_and_test(&g->ref))
		kfree(g);
}

static void ics_gen_done(void *ctx, int err)
{
	struct ics_gen *g = ctx;

	if (err) {
		atomic_cmpxchg(&g->error, 0, err);
		atomic_inc(&g->failed);
	} else {
		atomic_inc(&g->done);
	}
	wake_up(&g->wq);
	ics_gen_put(g);
}

void ics_pong_rcv(struct ics_net *in, u8 src, u8 channel)
{
	unsigned long flags;

	spin_lock_irqsave(&in->ping_wq.lock, flags);
	if (in->ping && in->ping->node == src && in->ping->channel == channel) {
		in->ping->answered = true;
		wake_up_locked(&in->ping_wq);
	}
	spin_unlock_irqrestore(&in->ping_wq.lock, flags);
}

static void ics_ping_set(struct ics_net *in, struct ics_ping *ping)
{
	spin_lock_irq(&in->ping_wq.lock);
	in->ping = ping;
	spin_unlock_irq(&in->ping_wq.lock);
}

static int ics_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* One message at a time, each answered by the peer (ICS_WF_PONG). */
static int ics_ping_run(struct ics_net *in, u8 node, u8 channel, u32 size, u32 count,
			long timeout, struct ics_test_result *r)
{
	struct ics_ping ping = { .node = node, .channel = channel };
	u64 *rtt, t0, sum = 0;
	int err = 0;
	long left;
	u32 i;

	rtt = kvmalloc_array(count, sizeof(*rtt), GFP_KERNEL);
	if (!rtt)
		return -ENOMEM;
	mutex_lock(&in->ping_lock);
	ics_ping_set(in, &ping);
	for (i = 0; i < count; i++) {
		ping.answered = false;
		t0 = ktime_get_ns();
		err = ics_link_send(in, node, channel, ICS_WF_PING | ICS_WF_TESTPAT, NULL, size,
				    NULL, GFP_KERNEL);
		if (err)
			break;
		r->sent++;
		left = wait_event_interruptible_timeout(in->ping_wq, READ_ONCE(ping.answered),
							timeout);
		if (left < 0) {
			err = -EINTR;
			break;
		}
		if (!left) {
			r->failed++;
			err = -ETIMEDOUT;
			break;
		}
		rtt[r->rtt_count] = ktime_get_ns() - t0;
		sum += rtt[r->rtt_count++];
		r->done++;
	}
	ics_ping_set(in, NULL);
	mutex_unlock(&in->ping_lock);

	if (r->rtt_count) {
		sort(rtt, r->rtt_count, sizeof(*rtt), ics_cmp_u64, NULL);
		r->rtt_min = rtt[0];
		r->rtt_p50 = rtt[r->rtt_count / 2];
		r->rtt_p90 = rtt[min(r->rtt_count - 1, r->rtt_count * 90 / 100)];
		r->rtt_p99 = rtt[min(r->rtt_count - 1, r->rtt_count * 99 / 100)];
		r->rtt_max = rtt[r->rtt_count - 1];
		r->rtt_mean = div_u64(sum, r->rtt_count);
	}
	kvfree(rtt);
	return err;
}

int ics_testgen(struct ics_net *in, u8 node, u8 channel, u32 size, u32 count, u32 flags,
		u32 timeout_ms, struct ics_test_result *r)
{
	long timeout = msecs_to_jiffies(timeout_ms ?: 10000);
	struct ics_send_args args = {
		.flags = flags & ICS_TEST_F_NONBLOCK ? ICS_SEND_NONBLOCK : 0,
		.timeout = timeout,
		.done = ics_gen_done,
	};
	struct ics_gen *g;
	int err = 0;
	u32 len;

	memset(r, 0, sizeof(*r));
	if (flags & ICS_TEST_F_PING)
		return ics_ping_run(in, node, channel, size, count, timeout, r);

	g = kzalloc(sizeof(*g), GFP_KERNEL);
	if (!g)
		return -ENOMEM;
	refcount_set(&g->ref, 1);
	init_waitqueue_head(&g->wq);
	args.ctx = g;

	for (; r->sent < count; r->sent++) {
		if (signal_pending(current)) {
			err = -EINTR;
			break;
		}
		len = flags & ICS_TEST_F_MIXED ? ics_mixed_size(size, channel, r->sent) : size;
		refcount_inc(&g->ref);
		err = ics_link_send(in, node, channel, ICS_WF_TESTPAT, NULL, len, &args,
				    GFP_KERNEL);
		if (err) {
			ics_gen_put(g);
			break;
		}
		cond_resched();
	}
	if ((flags & ICS_TEST_F_WAIT) &&
	    wait_event_interruptible(g->wq, atomic_read(&g->done) + atomic_read(&g->failed) ==
					    r->sent) && !err)
		err = -EINTR;
	r->done = atomic_read(&g->done);
	r->failed = atomic_read(&g->failed);
	r->error = atomic_read(&g->error);
	ics_gen_put(g);
	return err;
}
