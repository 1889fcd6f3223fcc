// SPDX-License-Identifier: GPL-2.0
/*
 * ics_test: the test and benchmark service of ics, an ordinary client of the
 * in-kernel API (include/net/ics.h) with its own generic netlink family,
 * "ics_test" (include/uapi/linux/ics.h, part 5). Load it only where tests or
 * benchmarks run: a member that has it attached to a channel answers ECHO
 * and PING messages from any peer on it.
 *
 * Receiving: one handler, registered on the channels a netns admin attached
 * (ICS_TEST_CMD_ATTACH). A message is checked (header and every pattern
 * byte), counted, chained into the source's rx hash for its channel and,
 * if it asks, answered. Small messages are handled in the handler when
 * nothing waits before them; the rest, in order, by a worker, so that no
 * softirq scans megabytes. The worker's queue holds at most queue_max
 * bytes of skb memory (or one message): past that the handler refuses
 * (-EAGAIN), ics pauses the channel and holds the message, and the worker
 * resumes the channels it refused once the queue is down to a quarter.
 * Answers never wait for queue room: one that finds the queue full is
 * counted as dropped, the asker's timeout covers it.
 *
 * Sending (ICS_TEST_CMD_SEND): a run fills one buffer per message with the
 * header and the pattern and queues it with ics_send_msg(); completions are
 * counted. A PING run sends one message at a time and waits for its PONG.
 *
 * Locking: ict_net.lock (mutex) serialises attach and detach;
 * ping_lock one PING run per netns; queue.lock the worker's queue, its
 * busy flag and the refused mask; st_lock the counters, hashes and send
 * sequence numbers. The handler runs in softirq (or with BHs off), so the
 * spinlocks are taken with BHs off elsewhere.
 */
#include <linux/jhash.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>
#include <net/ics.h>
#include <net/netns/generic.h>

#define ICT_HDR_LEN	sizeof(struct ics_test_hdr)
#define ICT_INLINE_MAX	2048		/* handled in the handler when nothing waits */

static unsigned int queue_max = 64U << 20;
module_param(queue_max, uint, 0644);
MODULE_PARM_DESC(queue_max,
		 "bytes of skb memory waiting to be checked, past which messages are refused (default 64 MiB)");

struct ict_chan {
	u64 rx_msgs, rx_bytes, rx_ok, rx_bad, sinked, answers, answer_drops, refused;
};

struct ict_ping {
	u8 node, channel;
	u32 token;			/* the PING's arg, which its PONG returns */
	bool answered;
};

struct ict_net {
	struct net *net;
	u32 ping_token;			/* ping_wq.lock: the last PING's arg */
	struct ics_handler h;		/* on every attached channel */
	struct mutex lock;		/* attached */
	u32 attached;

	struct sk_buff_head queue;	/* for the worker; source, channel in cb[0..1] */
	u32 queued;			/* queue.lock: skb memory taken, not counted yet */
	u32 refused;			/* queue.lock: channels refused since resumed */
	bool busy;			/* queue.lock: the worker has one in hand */
	struct work_struct work;

	spinlock_t st_lock;
	struct ict_chan chan[ICS_CHANNELS];
	u32 tx_seq[ICS_MAX_NODES + 1][ICS_CHANNELS];
	u32 tx_hash[ICS_MAX_NODES + 1][ICS_CHANNELS];
	u32 rx_hash[ICS_MAX_NODES + 1][ICS_CHANNELS];

	struct mutex ping_lock;		/* one PING run at a time */
	wait_queue_head_t ping_wq;	/* its lock guards ping */
	struct ict_ping *ping;
};

static unsigned int ict_net_id;

/* What the handler keeps in a queued skb's cb[] for the worker. */
struct ict_cb {
	u8 src, channel;
	u32 truesize;		/* as it was counted in queued */
};

#define ICT_CB(skb) ((struct ict_cb *)(skb)->cb)

static struct ict_net *ict_net(struct net *net)
{
	return net_generic(net, ict_net_id);
}

static u32 ict_seed(u8 src, u8 channel, u32 seq, u32 len)
{
	return jhash_3words(seq, len, (u32)src << 8 | channel, 0x1c5);
}

static u32 ict_hash(u32 prev, u32 seq, u32 len, bool ok)
{
	return jhash_3words(seq, len, ok, prev);
}

/* Pattern word k covers message bytes 4k..4k+3, little-endian. */
static u32 ict_word(u32 seed, u32 k)
{
	return (k + 1) * 0x9E3779B1u ^ seed;
}

static u8 ict_byte(u32 seed, u32 i)
{
	return ict_word(seed, i / 4) >> (8 * (i % 4));
}

static void ict_fill(u32 seed, u8 *to, u32 off, u32 n)
{
	u32 i = 0;
	__le32 w;

	for (; i < n && (off + i) % 4; i++)
		to[i] = ict_byte(seed, off + i);
	for (; i + 4 <= n; i += 4) {
		w = cpu_to_le32(ict_word(seed, (off + i) / 4));
		memcpy(to + i, &w, 4);
	}
	for (; i < n; i++)
		to[i] = ict_byte(seed, off + i);
}

static bool ict_cmp(u32 seed, const u8 *p, u32 off, u32 n)
{
	u32 i = 0;
	__le32 w;

	for (; i < n && (off + i) % 4; i++)
		if (p[i] != ict_byte(seed, off + i))
			return false;
	for (; i + 4 <= n; i += 4) {
		memcpy(&w, p + i, 4);
		if (le32_to_cpu(w) != ict_word(seed, (off + i) / 4))
			return false;
	}
	for (; i < n; i++)
		if (p[i] != ict_byte(seed, off + i))
			return false;
	return true;
}

/* Bytes @from.. of @skb against the pattern, in place. */
static bool ict_check(struct sk_buff *skb, u32 seed, u32 from)
{
	struct skb_seq_state st;
	const u8 *p;
	u32 off = from, n;
	bool ok = true;

	skb_prepare_seq_read(skb, from, skb->len, &st);
	while ((n = skb_seq_read(off - from, &p, &st)) != 0) {
		if (!ict_cmp(seed, p, off, n)) {
			ok = false;
			break;
		}
		off += n;
	}
	skb_abort_seq_read(&st);
	return ok && off == skb->len;
}

/*
 * A whole message of @len bytes from us (@src) to a node on @channel:
 * header (when it fits) and pattern into @buf.
 */
static void ict_build(u8 *buf, u8 src, u8 channel, u32 len, u8 op, u32 seq, u32 arg)
{
	struct ics_test_hdr h = {
		.magic = htonl(ICS_TEST_MAGIC),
		.op = op,
		.seq = htonl(seq),
		.arg = htonl(arg),
	};

	if (len < ICT_HDR_LEN) {
		ict_fill(ict_seed(src, channel, 0, len), buf, 0, len);
		return;
	}
	memcpy(buf, &h, sizeof(h));
	ict_fill(ict_seed(src, channel, seq, len), buf + ICT_HDR_LEN, ICT_HDR_LEN,
		 len - ICT_HDR_LEN);
}

/* Answers are outside the sequence and the hashes: they interleave with runs. */
static bool ict_answer_op(u8 op)
{
	return op == ICS_TEST_OP_REPLY || op == ICS_TEST_OP_PONG;
}

/* Next sequence number to @node on @channel; chained into its tx hash once queued. */
static u32 ict_tx_seq(struct ict_net *tn, u8 node, u8 channel, u32 len, u8 op)
{
	u32 seq;

	if (len < ICT_HDR_LEN || ict_answer_op(op))
		return 0;
	spin_lock_bh(&tn->st_lock);
	seq = ++tn->tx_seq[node][channel];
	spin_unlock_bh(&tn->st_lock);
	return seq;
}

static void ict_tx_hash(struct ict_net *tn, u8 node, u8 channel, u32 seq, u32 len)
{
	spin_lock_bh(&tn->st_lock);
	tn->tx_hash[node][channel] = ict_hash(tn->tx_hash[node][channel], seq, len, true);
	spin_unlock_bh(&tn->st_lock);
}

/* Queue one message; @buf holds at least @len bytes. */
static int ict_send(struct ict_net *tn, u8 node, u8 channel, u32 len, u8 op, u32 arg,
		    u8 *buf, const struct ics_send_args *args, gfp_t gfp)
{
	u8 self = ics_node_id(tn->net);
	u32 seq;
	int err;

	if (!self)
		return -ENOTCONN;
	seq = ict_tx_seq(tn, node, channel, len, op);
	ict_build(buf, self, channel, len, op, seq, arg);
	err = ics_send_msg(tn->net, node, channel, buf, len, args, gfp);
	if (!err && !ict_answer_op(op))
		ict_tx_hash(tn, node, channel, seq, len);
	return err;
}

/*
 * Answer @src's ECHO or PING, without waiting for room. An answer carries
 * the header (an ECHO for less gets that much).
 */
static void ict_answer(struct ict_net *tn, u8 src, u8 channel, u8 op, u32 len, u32 arg,
		       gfp_t gfp)
{
	struct ics_send_args nb = { .flags = ICS_SEND_NONBLOCK };
	u8 *buf = NULL;
	bool ok = false;

	len = max_t(u32, len, ICT_HDR_LEN);
	if (len <= ICS_MSG_MAX)
		buf = kvmalloc(len, gfp | __GFP_NOWARN);
	if (buf)
		ok = !ict_send(tn, src, channel, len, op, arg, buf, &nb, gfp);
	kvfree(buf);
	spin_lock_bh(&tn->st_lock);
	if (ok)
		tn->chan[channel].answers++;
	else
		tn->chan[channel].answer_drops++;
	spin_unlock_bh(&tn->st_lock);
}

static void ict_pong(struct ict_net *tn, u8 src, u8 channel, u32 token)
{
	unsigned long flags;

	spin_lock_irqsave(&tn->ping_wq.lock, flags);
	if (tn->ping && tn->ping->node == src && tn->ping->channel == channel &&
	    tn->ping->token == token) {
		tn->ping->answered = true;
		wake_up_locked(&tn->ping_wq);
	}
	spin_unlock_irqrestore(&tn->ping_wq.lock, flags);
}

/* Check, count and answer one message from @src; consumes @skb. */
static void ict_take(struct ict_net *tn, u8 src, u8 channel, struct sk_buff *skb, gfp_t gfp)
{
	struct ics_test_hdr h = {};
	u32 len = skb->len, seq = 0;
	bool ok, hdr_ok = true;
	struct ict_chan *c;

	if (len >= ICT_HDR_LEN) {
		hdr_ok = !skb_copy_bits(skb, 0, &h, sizeof(h)) &&
			 ntohl(h.magic) == ICS_TEST_MAGIC && h.op < __ICS_TEST_OP_MAX &&
			 !h.pad[0] && !h.pad[1] && !h.pad[2];
		seq = ntohl(h.seq);
	}
	ok = hdr_ok && ict_check(skb, ict_seed(src, channel, seq, len),
				 len < ICT_HDR_LEN ? 0 : ICT_HDR_LEN);
	consume_skb(skb);

	spin_lock_bh(&tn->st_lock);
	c = &tn->chan[channel];
	c->rx_msgs++;
	c->rx_bytes += len;
	if (ok)
		c->rx_ok++;
	else
		c->rx_bad++;
	if (ok && h.op == ICS_TEST_OP_SINK)
		c->sinked++;
	if (!ok || !ict_answer_op(h.op))
		tn->rx_hash[src][channel] = ict_hash(tn->rx_hash[src][channel], seq, len, ok);
	spin_unlock_bh(&tn->st_lock);

	if (!ok || len < ICT_HDR_LEN)
		return;
	switch (h.op) {
	case ICS_TEST_OP_ECHO:
		ict_answer(tn, src, channel, ICS_TEST_OP_REPLY, ntohl(h.arg), 0, gfp);
		break;
	case ICS_TEST_OP_PING:
		ict_answer(tn, src, channel, ICS_TEST_OP_PONG, len, ntohl(h.arg), gfp);
		break;
	case ICS_TEST_OP_PONG:
		ict_pong(tn, src, channel, ntohl(h.arg));
		break;
	}
}

/* Small, and asking for no large answer: handled in softirq. */
static bool ict_small(const struct sk_buff *skb)
{
	struct ics_test_hdr h;

	if (skb->len > ICT_INLINE_MAX)
		return false;
	return skb->len < ICT_HDR_LEN || skb_copy_bits(skb, 0, &h, sizeof(h)) ||
	       h.op != ICS_TEST_OP_ECHO || ntohl(h.arg) <= ICT_INLINE_MAX;
}

static int ict_rcv(struct ics_handler *h, struct net *net, u8 src, unsigned int channel,
		   struct sk_buff *skb)
{
	struct ict_net *tn = container_of(h, struct ict_net, h);

	spin_lock(&tn->queue.lock);
	if (skb_queue_empty(&tn->queue) && !tn->busy && ict_small(skb)) {
		/*
		 * Every earlier message of @src is done (the worker is idle)
		 * and its next one cannot come before we return (ics calls us
		 * under @src's lock): in order without the worker.
		 */
		spin_unlock(&tn->queue.lock);
		ict_take(tn, src, channel, skb, GFP_ATOMIC);
		return 0;
	}
	if (tn->queued && (u64)tn->queued + skb->truesize > READ_ONCE(queue_max)) {
		/* untouched: ics holds it and pauses the channel until we resume it */
		tn->refused |= BIT(channel);
		spin_unlock(&tn->queue.lock);
		spin_lock(&tn->st_lock);
		tn->chan[channel].refused++;
		spin_unlock(&tn->st_lock);
		return -EAGAIN;
	}
	ICT_CB(skb)->src = src;
	ICT_CB(skb)->channel = channel;
	ICT_CB(skb)->truesize = skb->truesize;
	WRITE_ONCE(tn->queued, tn->queued + skb->truesize);
	__skb_queue_tail(&tn->queue, skb);
	queue_work(system_unbound_wq, &tn->work);
	spin_unlock(&tn->queue.lock);
	return 0;
}

/*
 * The worker's next message, or NULL, after the one of @done bytes it
 * finished (0: none): a message counts in queued until it is counted, so
 * that queued 0 means every message taken was checked. Resumes the
 * refused channels once there is room, under the lock that decides
 * refusals, so that a resume cannot undo a newer refusal's pause.
 */
static struct sk_buff *ict_next(struct ict_net *tn, u32 done)
{
	unsigned long resume;
	struct sk_buff *skb;
	int ch;

	spin_lock_bh(&tn->queue.lock);
	WRITE_ONCE(tn->queued, tn->queued - done);
	skb = __skb_dequeue(&tn->queue);
	tn->busy = skb != NULL;
	if (tn->refused && tn->queued <= READ_ONCE(queue_max) / 4) {
		resume = tn->refused;
		tn->refused = 0;
		for_each_set_bit(ch, &resume, ICS_CHANNELS)
			ics_channel_pause(tn->net, ch, &tn->h, false);
	}
	spin_unlock_bh(&tn->queue.lock);
	return skb;
}

static void ict_work(struct work_struct *work)
{
	struct ict_net *tn = container_of(work, struct ict_net, work);
	struct sk_buff *skb;
	u32 done = 0;

	while ((skb = ict_next(tn, done))) {
		done = ICT_CB(skb)->truesize;
		ict_take(tn, ICT_CB(skb)->src, ICT_CB(skb)->channel, skb, GFP_KERNEL);
		cond_resched();
	}
}

/* Make the attached channels @want; all or nothing. Under tn->lock. */
static int ict_attach(struct ict_net *tn, u32 want, struct netlink_ext_ack *extack)
{
	unsigned long add = want & ~tn->attached, del = tn->attached & ~want, done = 0;
	int ch, err;

	for_each_set_bit(ch, &add, ICS_CHANNELS) {
		err = ics_register_handler(tn->net, ch, &tn->h);
		if (err) {
			if (err == -EBUSY)
				NL_SET_ERR_MSG_MOD(extack, "another client receives on a channel");
			for_each_set_bit(ch, &done, ICS_CHANNELS)
				ics_unregister_handler(tn->net, ch, &tn->h);
			return err;
		}
		done |= BIT(ch);
	}
	for_each_set_bit(ch, &del, ICS_CHANNELS)
		ics_unregister_handler(tn->net, ch, &tn->h);	/* no rcv() after */
	WRITE_ONCE(tn->attached, want);
	return 0;
}

/* Outstanding messages of one run; freed by whoever drops the last ref. */
struct ict_run {
	refcount_t ref;
	wait_queue_head_t wq;
	atomic_t done, failed, error;
};

struct ict_result {
	u32 sent, done, failed;
	int error;
	u32 rtt_count;
	u64 rtt_min, rtt_p50, rtt_p90, rtt_p99, rtt_max, rtt_mean;
	u32 *hist;		/* ICS_RTT_A_HIST's pairs, hist_n of them; kvfree() */
	u32 hist_n;
};

static void ict_run_put(struct ict_run *r)
{
	if (refcount_dec_and_test(&r->ref))
		kfree(r);
}

/*
 * ics calls this once per message, maybe after the run returned; it holds
 * a reference on this module until the call returned (args.owner).
 */
static void ict_run_done(void *ctx, int err)
{
	struct ict_run *r = ctx;

	if (err) {
		atomic_cmpxchg(&r->error, 0, err);
		atomic_inc(&r->failed);
	} else {
		atomic_inc(&r->done);
	}
	wake_up(&r->wq);
	ict_run_put(r);
}

/*
 * ICS_TEST_F_MIXED: message @i's size in 0..@max. Each power-of-two band is
 * 1/sqrt(2) as likely as the one below it, so most messages are small and a
 * few are large, like the traffic in Figure 14 of the white paper.
 */
static u32 ict_mixed_size(u32 max, u8 channel, u32 i)
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

static int ict_gen(struct ict_net *tn, u8 node, u8 channel, u32 size, u32 count, u32 flags,
		   long timeout, struct ict_result *res)
{
	struct ics_send_args args = {
		.flags = flags & ICS_TEST_F_NONBLOCK ? ICS_SEND_NONBLOCK : 0,
		.timeout = timeout,
		.done = ict_run_done,
		.owner = THIS_MODULE,
	};
	struct ict_run *r;
	int err = 0;
	u8 *buf;
	u32 len;

	buf = kvmalloc(max_t(u32, size, 1), GFP_KERNEL_ACCOUNT);
	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!buf || !r) {
		kvfree(buf);
		kfree(r);
		return -ENOMEM;
	}
	refcount_set(&r->ref, 1);
	init_waitqueue_head(&r->wq);
	args.ctx = r;

	for (; res->sent < count; res->sent++) {
		if (signal_pending(current)) {
			err = -EINTR;
			break;
		}
		len = flags & ICS_TEST_F_MIXED ? ict_mixed_size(size, channel, res->sent) : size;
		refcount_inc(&r->ref);
		err = ict_send(tn, node, channel, len, ICS_TEST_OP_DATA, 0, buf, &args,
			       GFP_KERNEL_ACCOUNT);
		if (err) {
			ict_run_put(r);
			break;
		}
		cond_resched();
	}
	kvfree(buf);
	if ((flags & ICS_TEST_F_WAIT) &&
	    wait_event_interruptible(r->wq, atomic_read(&r->done) + atomic_read(&r->failed) ==
					    res->sent) && !err)
		err = -EINTR;
	res->done = atomic_read(&r->done);
	res->failed = atomic_read(&r->failed);
	res->error = atomic_read(&r->error);
	ict_run_put(r);
	return err;
}

static void ict_ping_set(struct ict_net *tn, struct ict_ping *ping)
{
	spin_lock_irq(&tn->ping_wq.lock);
	tn->ping = ping;
	spin_unlock_irq(&tn->ping_wq.lock);
}

static int ict_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* The bucket of a round trip of @v ns in ICS_RTT_A_HIST (uapi/linux/ics.h). */
static u32 ict_rtt_bucket(u64 v)
{
	int k;

	if (v < (1U << ICS_RTT_HIST_SUB))
		return v;
	k = fls64(v) - 1;
	return ((k - ICS_RTT_HIST_SUB) << ICS_RTT_HIST_SUB) + (u32)(v >> (k - ICS_RTT_HIST_SUB));
}

/*
 * The sorted round trips @rtt (@n) become ICS_RTT_A_HIST's (bucket, count)
 * pairs, in place: pair j takes the bytes of sample j, and is written only
 * once sample j was read. Returns the number of pairs.
 */
static u32 ict_rtt_hist(u64 *rtt, u32 n)
{
	u32 *h = (u32 *)rtt, pairs = 0, i, b;

	for (i = 0; i < n; i++) {
		b = ict_rtt_bucket(rtt[i]);
		if (pairs && h[2 * pairs - 2] == b) {
			h[2 * pairs - 1]++;
			continue;
		}
		h[2 * pairs] = b;
		h[2 * pairs + 1] = 1;
		pairs++;
	}
	return pairs;
}

/* One message at a time, each answered by the peer's PONG. */
static int ict_ping_run(struct ict_net *tn, u8 node, u8 channel, u32 size, u32 count,
			long timeout, struct ict_result *res)
{
	struct ict_ping ping = { .node = node, .channel = channel };
	struct ics_send_args args = { .timeout = timeout };
	u64 *rtt, t0, sum = 0;
	int err = 0;
	long left;
	u8 *buf;

	size = max_t(u32, size, ICT_HDR_LEN);
	if (!mutex_trylock(&tn->ping_lock))
		return -EBUSY;
	rtt = kvmalloc_array(count, sizeof(*rtt), GFP_KERNEL_ACCOUNT);
	buf = kvmalloc(size, GFP_KERNEL_ACCOUNT);
	if (!rtt || !buf) {
		err = -ENOMEM;
		goto out;
	}
	ict_ping_set(tn, &ping);
	while (res->sent < count) {
		spin_lock_irq(&tn->ping_wq.lock);
		ping.answered = false;
		ping.token = ++tn->ping_token;	/* a late PONG of an earlier run is not ours */
		spin_unlock_irq(&tn->ping_wq.lock);
		t0 = ktime_get_ns();
		err = ict_send(tn, node, channel, size, ICS_TEST_OP_PING, ping.token, buf, &args,
			       GFP_KERNEL_ACCOUNT);
		if (err)
			break;
		res->sent++;
		left = wait_event_interruptible_timeout(tn->ping_wq, READ_ONCE(ping.answered),
							timeout);
		if (left < 0) {
			err = -EINTR;
			break;
		}
		if (!left) {
			res->failed++;
			err = -ETIMEDOUT;
			break;
		}
		rtt[res->rtt_count] = ktime_get_ns() - t0;
		sum += rtt[res->rtt_count++];
		res->done++;
	}
	ict_ping_set(tn, NULL);
	if (res->rtt_count) {
		sort(rtt, res->rtt_count, sizeof(*rtt), ict_cmp_u64, NULL);
		res->rtt_min = rtt[0];
		res->rtt_p50 = rtt[res->rtt_count / 2];
		res->rtt_p90 = rtt[min(res->rtt_count - 1, res->rtt_count * 90 / 100)];
		res->rtt_p99 = rtt[min(res->rtt_count - 1, res->rtt_count * 99 / 100)];
		res->rtt_max = rtt[res->rtt_count - 1];
		res->rtt_mean = div_u64(sum, res->rtt_count);
		res->hist_n = ict_rtt_hist(rtt, res->rtt_count);
		res->hist = (u32 *)rtt;
		rtt = NULL;
	}
out:
	kvfree(buf);
	kvfree(rtt);
	mutex_unlock(&tn->ping_lock);
	return err;
}

static struct genl_family ict_family;

static const struct nla_policy ict_policy[ICS_TEST_A_MAX + 1] = {
	[ICS_TEST_A_NODE] = NLA_POLICY_RANGE(NLA_U32, 1, ICS_MAX_NODES),
	[ICS_TEST_A_CHANNEL] = NLA_POLICY_MAX(NLA_U32, ICS_CHANNELS - 1),
	[ICS_TEST_A_SIZE] = { .type = NLA_U32 },	/* wider than a policy's s16 */
	[ICS_TEST_A_COUNT] = NLA_POLICY_MIN(NLA_U32, 1),
	[ICS_TEST_A_FLAGS] = NLA_POLICY_MASK(NLA_U32, ICS_TEST_F_ALL),
	[ICS_TEST_A_TIMEOUT_MS] = { .type = NLA_U32 },
	[ICS_TEST_A_CHANNELS] = NLA_POLICY_MASK(NLA_U32, (1U << ICS_CHANNELS) - 1),
};

static int ict_put_rtt(struct sk_buff *msg, const struct ict_result *r)
{
	struct nlattr *nest = nla_nest_start(msg, ICS_TEST_A_RTT);

	if (!nest ||
	    nla_put_u32(msg, ICS_RTT_A_COUNT, r->rtt_count) ||
	    nla_put_u64_64bit(msg, ICS_RTT_A_MIN_NS, r->rtt_min, ICS_RTT_A_PAD) ||
	    nla_put_u64_64bit(msg, ICS_RTT_A_P50_NS, r->rtt_p50, ICS_RTT_A_PAD) ||
	    nla_put_u64_64bit(msg, ICS_RTT_A_P90_NS, r->rtt_p90, ICS_RTT_A_PAD) ||
	    nla_put_u64_64bit(msg, ICS_RTT_A_P99_NS, r->rtt_p99, ICS_RTT_A_PAD) ||
	    nla_put_u64_64bit(msg, ICS_RTT_A_MAX_NS, r->rtt_max, ICS_RTT_A_PAD) ||
	    nla_put_u64_64bit(msg, ICS_RTT_A_MEAN_NS, r->rtt_mean, ICS_RTT_A_PAD) ||
	    (r->hist_n && nla_put(msg, ICS_RTT_A_HIST, r->hist_n * 2 * sizeof(u32), r->hist)))
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int ict_nl_send(struct sk_buff *skb, struct genl_info *info)
{
	struct ict_net *tn = ict_net(genl_info_net(info));
	struct nlattr **a = info->attrs;
	u32 node, ch, size, count, flags = 0, timeout_ms = 10000;
	struct ict_result r = {};
	struct sk_buff *msg;
	long timeout;
	void *hdr;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ICS_TEST_A_NODE) ||
	    GENL_REQ_ATTR_CHECK(info, ICS_TEST_A_CHANNEL) ||
	    GENL_REQ_ATTR_CHECK(info, ICS_TEST_A_SIZE) ||
	    GENL_REQ_ATTR_CHECK(info, ICS_TEST_A_COUNT))
		return -EINVAL;
	node = nla_get_u32(a[ICS_TEST_A_NODE]);
	ch = nla_get_u32(a[ICS_TEST_A_CHANNEL]);
	size = nla_get_u32(a[ICS_TEST_A_SIZE]);
	count = nla_get_u32(a[ICS_TEST_A_COUNT]);
	if (a[ICS_TEST_A_FLAGS])
		flags = nla_get_u32(a[ICS_TEST_A_FLAGS]);
	if (a[ICS_TEST_A_TIMEOUT_MS])
		timeout_ms = nla_get_u32(a[ICS_TEST_A_TIMEOUT_MS]) ?: 10000;
	timeout = msecs_to_jiffies(timeout_ms);
	if (size > ICS_MSG_MAX) {
		NL_SET_ERR_MSG_ATTR(info->extack, a[ICS_TEST_A_SIZE], "larger than ICS_MSG_MAX");
		return -EMSGSIZE;
	}
	if ((flags & ICS_TEST_F_PING) && (flags & (ICS_TEST_F_MIXED | ICS_TEST_F_NONBLOCK))) {
		NL_SET_ERR_MSG_ATTR(info->extack, a[ICS_TEST_A_FLAGS],
				    "a ping run takes neither MIXED nor NONBLOCK");
		return -EINVAL;
	}
	if ((flags & ICS_TEST_F_PING) && count > ICS_TEST_PING_MAX) {
		NL_SET_ERR_MSG_ATTR(info->extack, a[ICS_TEST_A_COUNT],
				    "at most ICS_TEST_PING_MAX round trips per run");
		return -EINVAL;
	}
	/*
	 * A run may take long: while it goes the module stays (rmmod fails
	 * with EBUSY) instead of its unload waiting, with genetlink's lock
	 * taken, for the run to end.
	 */
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	if (flags & ICS_TEST_F_PING)
		err = ict_ping_run(tn, node, ch, size, count, timeout, &r);
	else
		err = ict_gen(tn, node, ch, size, count, flags, timeout, &r);
	module_put(THIS_MODULE);	/* our caller, genl_rcv(), keeps the family */
	if (err && !r.sent)
		goto out;
	if (err && !r.error)
		r.error = err;

	/*
	 * The histogram takes at most ICS_RTT_HIST_BUCKETS pairs, 58 KiB:
	 * within an attribute's u16 length. Where memory is too fragmented
	 * for it, the reply goes without (the caller sees it missing).
	 */
	BUILD_BUG_ON(NLA_HDRLEN + ICS_RTT_HIST_BUCKETS * 2 * sizeof(u32) +
		     ICS_RTT_A_MAX * 2 * (NLA_HDRLEN + sizeof(u64)) > U16_MAX);
	msg = genlmsg_new(GENLMSG_DEFAULT_SIZE + nla_total_size(r.hist_n * 2 * sizeof(u32)),
			  GFP_KERNEL | __GFP_NOWARN);
	if (!msg) {
		r.hist_n = 0;
		msg = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	}
	err = -ENOMEM;
	if (!msg)
		goto out;
	hdr = genlmsg_put_reply(msg, info, &ict_family, 0, ICS_TEST_CMD_SEND);
	if (!hdr || nla_put_u32(msg, ICS_TEST_A_SENT, r.sent) ||
	    nla_put_u32(msg, ICS_TEST_A_DONE, r.done) ||
	    nla_put_u32(msg, ICS_TEST_A_FAILED, r.failed) ||
	    nla_put_u32(msg, ICS_TEST_A_ERROR, -r.error) ||
	    ((flags & ICS_TEST_F_PING) && ict_put_rtt(msg, &r))) {
		nlmsg_free(msg);
		err = -EMSGSIZE;
		goto out;
	}
	genlmsg_end(msg, hdr);
	err = genlmsg_reply(msg, info);
out:
	kvfree(r.hist);
	return err;
}

static int ict_nl_attach(struct sk_buff *skb, struct genl_info *info)
{
	struct ict_net *tn = ict_net(genl_info_net(info));
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ICS_TEST_A_CHANNELS))
		return -EINVAL;
	mutex_lock(&tn->lock);
	err = ict_attach(tn, nla_get_u32(info->attrs[ICS_TEST_A_CHANNELS]), info->extack);
	mutex_unlock(&tn->lock);
	return err;
}

static int ict_put_hashes(struct sk_buff *msg, int type, const u32 *hash)
{
	struct nlattr *nest = nla_nest_start(msg, type);
	int ch;

	if (!nest)
		return -EMSGSIZE;
	for (ch = 0; ch < ICS_CHANNELS; ch++)
		if (nla_put_u32(msg, ch + 1, hash[ch]))
			return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static bool ict_any(const u32 *v, int n)
{
	while (n--)
		if (v[n])
			return true;
	return false;
}

/* A copy of the counters, taken under st_lock: the reply is built unlocked. */
struct ict_snap {
	struct ict_chan chan[ICS_CHANNELS];
	u32 tx_hash[ICS_MAX_NODES + 1][ICS_CHANNELS];
	u32 rx_hash[ICS_MAX_NODES + 1][ICS_CHANNELS];
};

static int ict_fill_get(struct sk_buff *msg, struct ict_net *tn, const struct ict_snap *sn)
{
	struct nlattr *nest;
	int ch, node;

	if (nla_put_u32(msg, ICS_TEST_A_CHANNELS, READ_ONCE(tn->attached)) ||
	    nla_put_u32(msg, ICS_TEST_A_QUEUED, READ_ONCE(tn->queued)))
		return -EMSGSIZE;
	for (ch = 0; ch < ICS_CHANNELS; ch++) {
		const struct ict_chan *c = &sn->chan[ch];

		if (!c->rx_msgs && !c->answers && !c->answer_drops && !c->refused)
			continue;
		nest = nla_nest_start(msg, ICS_TEST_A_CHANNEL_STATS);
		if (!nest || nla_put_u32(msg, ICS_TEST_C_ID, ch) ||
		    nla_put_u64_64bit(msg, ICS_TEST_C_RX_MSGS, c->rx_msgs, ICS_TEST_C_PAD) ||
		    nla_put_u64_64bit(msg, ICS_TEST_C_RX_BYTES, c->rx_bytes, ICS_TEST_C_PAD) ||
		    nla_put_u64_64bit(msg, ICS_TEST_C_RX_OK, c->rx_ok, ICS_TEST_C_PAD) ||
		    nla_put_u64_64bit(msg, ICS_TEST_C_RX_BAD, c->rx_bad, ICS_TEST_C_PAD) ||
		    nla_put_u64_64bit(msg, ICS_TEST_C_SINKED, c->sinked, ICS_TEST_C_PAD) ||
		    nla_put_u64_64bit(msg, ICS_TEST_C_ANSWERS, c->answers, ICS_TEST_C_PAD) ||
		    nla_put_u64_64bit(msg, ICS_TEST_C_ANSWER_DROPS, c->answer_drops,
				      ICS_TEST_C_PAD) ||
		    nla_put_u64_64bit(msg, ICS_TEST_C_REFUSED, c->refused, ICS_TEST_C_PAD))
			return -EMSGSIZE;
		nla_nest_end(msg, nest);
	}
	for (node = 1; node <= ICS_MAX_NODES; node++) {
		if (!ict_any(sn->tx_hash[node], ICS_CHANNELS) &&
		    !ict_any(sn->rx_hash[node], ICS_CHANNELS))
			continue;
		nest = nla_nest_start(msg, ICS_TEST_A_NODE_HASHES);
		if (!nest || nla_put_u32(msg, ICS_TEST_H_NODE, node) ||
		    ict_put_hashes(msg, ICS_TEST_H_TX, sn->tx_hash[node]) ||
		    ict_put_hashes(msg, ICS_TEST_H_RX, sn->rx_hash[node]))
			return -EMSGSIZE;
		nla_nest_end(msg, nest);
	}
	return 0;
}

/* The largest GET reply: every channel and every node present. */
static size_t ict_get_size(void)
{
	size_t chan = nla_total_size(0) + nla_total_size(sizeof(u32)) +
		      (ICS_TEST_C_MAX - ICS_TEST_C_ID) * nla_total_size_64bit(sizeof(u64));
	size_t hashes = nla_total_size(0) + ICS_CHANNELS * nla_total_size(sizeof(u32));
	size_t node = nla_total_size(0) + nla_total_size(sizeof(u32)) + 2 * hashes;

	return 2 * nla_total_size(sizeof(u32)) + ICS_CHANNELS * chan + ICS_MAX_NODES * node;
}

static int ict_nl_get(struct sk_buff *skb, struct genl_info *info)
{
	struct ict_net *tn = ict_net(genl_info_net(info));
	struct ict_snap *sn;
	struct sk_buff *msg;
	void *hdr;
	int err = -ENOMEM;

	sn = kmalloc(sizeof(*sn), GFP_KERNEL_ACCOUNT);
	msg = genlmsg_new(ict_get_size(), GFP_KERNEL);
	if (!sn || !msg)
		goto out;
	spin_lock_bh(&tn->st_lock);
	memcpy(sn->chan, tn->chan, sizeof(sn->chan));
	memcpy(sn->tx_hash, tn->tx_hash, sizeof(sn->tx_hash));
	memcpy(sn->rx_hash, tn->rx_hash, sizeof(sn->rx_hash));
	spin_unlock_bh(&tn->st_lock);
	err = -EMSGSIZE;
	hdr = genlmsg_put_reply(msg, info, &ict_family, 0, ICS_TEST_CMD_GET);
	if (!hdr || ict_fill_get(msg, tn, sn))
		goto out;
	genlmsg_end(msg, hdr);
	kfree(sn);
	return genlmsg_reply(msg, info);
out:
	nlmsg_free(msg);
	kfree(sn);
	return err;
}

static int ict_nl_reset(struct sk_buff *skb, struct genl_info *info)
{
	struct ict_net *tn = ict_net(genl_info_net(info));

	spin_lock_bh(&tn->st_lock);
	memset(tn->chan, 0, sizeof(tn->chan));
	memset(tn->tx_seq, 0, sizeof(tn->tx_seq));
	memset(tn->tx_hash, 0, sizeof(tn->tx_hash));
	memset(tn->rx_hash, 0, sizeof(tn->rx_hash));
	spin_unlock_bh(&tn->st_lock);
	return 0;
}

static const struct genl_small_ops ict_ops[] = {
	{ .cmd = ICS_TEST_CMD_SEND, .doit = ict_nl_send, .flags = GENL_UNS_ADMIN_PERM },
	{ .cmd = ICS_TEST_CMD_ATTACH, .doit = ict_nl_attach, .flags = GENL_UNS_ADMIN_PERM },
	{ .cmd = ICS_TEST_CMD_GET, .doit = ict_nl_get },
	{ .cmd = ICS_TEST_CMD_RESET, .doit = ict_nl_reset, .flags = GENL_UNS_ADMIN_PERM },
};

/* parallel_ops: a long SEND holds no lock that GET or another SEND needs. */
static struct genl_family ict_family __ro_after_init = {
	.name = ICS_TEST_GENL_NAME,
	.version = ICS_TEST_GENL_VERSION,
	.maxattr = ICS_TEST_A_MAX,
	.policy = ict_policy,
	.netnsok = true,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.small_ops = ict_ops,
	.n_small_ops = ARRAY_SIZE(ict_ops),
	.resv_start_op = ICS_TEST_CMD_SEND,	/* reserved header fields checked everywhere */
};

static int __net_init ict_net_init(struct net *net)
{
	struct ict_net *tn = ict_net(net);

	tn->net = net;
	tn->h.rcv = ict_rcv;
	mutex_init(&tn->lock);
	mutex_init(&tn->ping_lock);
	skb_queue_head_init(&tn->queue);
	INIT_WORK(&tn->work, ict_work);
	spin_lock_init(&tn->st_lock);
	init_waitqueue_head(&tn->ping_wq);
	return 0;
}

static void __net_exit ict_net_exit(struct net *net)
{
	struct ict_net *tn = ict_net(net);

	mutex_lock(&tn->lock);
	ict_attach(tn, 0, NULL);	/* no rcv() after this */
	mutex_unlock(&tn->lock);
	cancel_work_sync(&tn->work);
	skb_queue_purge(&tn->queue);
}

static struct pernet_operations ict_net_ops = {
	.init = ict_net_init,
	.exit = ict_net_exit,
	.id = &ict_net_id,
	.size = sizeof(struct ict_net),
};

static int __init ict_init(void)
{
	int err;

	BUILD_BUG_ON(sizeof(struct ict_cb) > sizeof_field(struct sk_buff, cb));
	err = register_pernet_subsys(&ict_net_ops);

	if (err)
		return err;
	err = genl_register_family(&ict_family);
	if (err)
		unregister_pernet_subsys(&ict_net_ops);
	return err;
}

/* The family first: no command runs, then no netns has us attached. */
static void __exit ict_exit(void)
{
	genl_unregister_family(&ict_family);
	unregister_pernet_subsys(&ict_net_ops);
}

module_init(ict_init);
module_exit(ict_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ics test service: pattern traffic, echo and round trips over ics channels");
