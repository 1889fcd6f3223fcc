// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/ics: the message API for user space (Documentation/user-api.rst).
 *
 * One misc device for every namespace: a file belongs to the instance of
 * the network namespace its opener was in (like /dev/net/tun), and holds a
 * reference on that namespace until it is closed. ICS_IOC_BIND makes it the
 * channel's receiver through the in-kernel API (ics_register_handler()), so
 * a file is just another in-kernel user of ics, and one per channel.
 *
 * Lifetimes. struct ics_file lives from open() until both the file is
 * released and every message it sent has been reported done (each holds a
 * reference, dropped by ics_file_sent(), which may run in softirq long after
 * close()). The handler is unregistered at release, which waits for any
 * ics_file_rcv() in flight (synchronize_net()); the queued messages are
 * freed then, and counted as ICS_STAT_DEV_CLOSE_DROPS.
 *
 * Locks: bind_lock orders ICS_IOC_BIND against release; rxq.lock (taken in
 * softirq, so _bh in process context) protects the read queue, rx_mem and
 * paused (flow control, ics_file_flow()); room_lock the room waiter's
 * node (the wait queue's own lock, its place there). Counters are
 * atomics: a file is one reader's and writer's, not a hot shared
 * structure.
 *
 * Memory a writer causes (its messages, up to 16 MiB each) is charged to
 * its memory cgroup and may fail (ENOMEM) rather than invoke the OOM
 * killer; a writer waiting for room holds none (ics_link_send_iter()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/ioctl.h>
#include <asm/ioctls.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/nsproxy.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/uaccess.h>

#include "ics.h"

/* Who may bind which channel without CAP_NET_ADMIN. */
static unsigned long ics_user_channels = BIT(ICS_CH_TEST);
module_param_named(user_channels, ics_user_channels, ulong, 0644);
MODULE_PARM_DESC(user_channels,
		 "bit mask of channels that members of user_gid may bind on /dev/ics (default: TEST)");

static int ics_user_gid = -1;
module_param_named(user_gid, ics_user_gid, int, 0644);
MODULE_PARM_DESC(user_gid, "group whose members may bind user_channels (default -1: none)");

static unsigned int ics_rcvbuf_max = ICS_DEV_RCVBUF_DEFAULT;
module_param_named(rcvbuf_max, ics_rcvbuf_max, uint, 0644);
MODULE_PARM_DESC(rcvbuf_max,
		 "largest ICS_IOC_SET_RCVBUF a non-administrator may set (default 32 MiB)");

struct ics_file {
	refcount_t ref;			/* the open file + messages in flight */
	struct net *net;		/* held from open to release */
	struct ics_handler h;
	struct mutex bind_lock;		/* channel: set once, under it */
	int channel;			/* -1 until bound */
	bool batch;			/* ICS_DEV_BIND_BATCH, set with channel */
	bool closing;			/* release started: bind no more */
	struct sk_buff_head rxq;	/* messages to read; its lock: rx_mem */
	u32 rx_mem;			/* truesize queued */
	u32 rcvbuf;			/* READ_ONCE: limit of rx_mem */
	bool paused;			/* we paused the channel (flow.c) */
	wait_queue_head_t wq;		/* readers and pollers */
	/* the last message refused for a full queue, for poll(): */
	u8 blocked_node;		/* 0: none */
	u32 blocked_len;
	long sndtimeo;			/* jiffies a write waits for room */
	/*
	 * Armed on blocked_node's wait queue by a write refused for room, so
	 * that a poller learns of room there (ics_file_room_wake()), epoll
	 * too, which looks at the file's queue only: one shot.
	 */
	spinlock_t room_lock;
	wait_queue_entry_t room;
	u8 room_node;			/* room_lock: where room is armed, 0 */
	atomic64_t tx_msgs, tx_bytes, tx_done, tx_failed, rx_msgs, rx_bytes;
	atomic_t last_error;
};

/* skb->cb while a message waits in rxq (the handler owns cb) */
struct ics_file_cb {
	u8 src;
};

#define ICS_FILE_CB(skb) ((struct ics_file_cb *)(skb)->cb)

static void ics_file_put(struct ics_file *f)
{
	if (refcount_dec_and_test(&f->ref))
		kfree(f);
}

/*
 * Flow control (flow.c): the channel is paused while the queue holds more
 * than half of rcvbuf, and resumed once the reader brought it down to a
 * quarter; the other half is room for what the peers have in flight when
 * they learn it. Under rxq.lock, so that pausing and resuming follow the
 * queue in order. @ch is the file's channel (the receive path passes it:
 * f->channel is set only after the handler is registered).
 */
static void ics_file_flow(struct ics_file *f, unsigned int ch)
{
	u32 rcvbuf = READ_ONCE(f->rcvbuf);

	lockdep_assert_held(&f->rxq.lock);
	if (!f->paused && f->rx_mem > rcvbuf / 2)
		f->paused = true;
	else if (f->paused && f->rx_mem <= rcvbuf / 4)
		f->paused = false;
	else
		return;
	__ics_channel_pause(ics_net(f->net), ch, f->paused);
}

/*
 * In softirq under the sending peer's lock: queue it, or refuse it for now
 * (ics holds it and offers it again once we resume the channel).
 */
static int ics_file_rcv(struct ics_handler *h, struct net *net, u8 src, unsigned int channel,
			struct sk_buff *skb)
{
	struct ics_file *f = container_of(h, struct ics_file, h);

	spin_lock(&f->rxq.lock);
	/*
	 * A queue below its buffer takes any message (an empty one too, so no
	 * rcvbuf makes one unreadable): what the peers had in flight when we
	 * paused, a message they had begun included (up to 16 MiB each), may
	 * take it past rcvbuf by a message. Over it, the message waits in ics
	 * until the reader brought us down to a quarter (ics_file_flow()).
	 */
	if (!skb_queue_empty(&f->rxq) && f->rx_mem >= READ_ONCE(f->rcvbuf)) {
		spin_unlock(&f->rxq.lock);
		return -EAGAIN;
	}
	ICS_FILE_CB(skb)->src = src;
	f->rx_mem += skb->truesize;
	__skb_queue_tail(&f->rxq, skb);
	ics_file_flow(f, channel);
	spin_unlock(&f->rxq.lock);
	wake_up_interruptible_poll(&f->wq, EPOLLIN | EPOLLRDNORM);
	return 0;
}

/* Room on the link of a refused write: once, then the writer or poller looks again. */
static int ics_file_room_wake(struct wait_queue_entry *w, unsigned int mode, int sync, void *key)
{
	struct ics_file *f = container_of(w, struct ics_file, room);

	list_del_init(&w->entry);	/* under the wait queue's lock */
	wake_up_interruptible_poll(&f->wq, EPOLLOUT | EPOLLWRNORM);
	return 0;
}

/* Take @f->room off the wait queue of @node (room_lock). */
static void ics_file_room_disarm(struct ics_file *f, struct ics_net *in)
{
	wait_queue_head_t *q;
	unsigned long flags;

	lockdep_assert_held(&f->room_lock);
	if (!f->room_node)
		return;
	q = &in->tx_wq[f->room_node];
	spin_lock_irqsave(&q->lock, flags);
	if (!list_empty(&f->room.entry))
		list_del_init(&f->room.entry);
	spin_unlock_irqrestore(&q->lock, flags);
	f->room_node = 0;
}

/* A write to @node found no room: be woken (poll) when there is. */
static void ics_file_room_arm(struct ics_file *f, u8 node)
{
	struct ics_net *in = ics_net(f->net);
	wait_queue_head_t *q = &in->tx_wq[node];
	unsigned long flags;

	spin_lock(&f->room_lock);
	if (f->room_node != node)
		ics_file_room_disarm(f, in);
	f->room_node = node;
	spin_lock_irqsave(&q->lock, flags);
	if (list_empty(&f->room.entry))
		__add_wait_queue(q, &f->room);
	spin_unlock_irqrestore(&q->lock, flags);
	spin_unlock(&f->room_lock);
}

static int ics_file_open(struct inode *inode, struct file *file)
{
	struct ics_file *f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);

	if (!f)
		return -ENOMEM;
	refcount_set(&f->ref, 1);
	f->net = get_net(current->nsproxy->net_ns);
	f->h.rcv = ics_file_rcv;
	mutex_init(&f->bind_lock);
	f->channel = -1;
	skb_queue_head_init(&f->rxq);
	f->rcvbuf = ICS_DEV_RCVBUF_DEFAULT;
	f->sndtimeo = MAX_SCHEDULE_TIMEOUT;
	init_waitqueue_head(&f->wq);
	spin_lock_init(&f->room_lock);
	init_waitqueue_func_entry(&f->room, ics_file_room_wake);
	INIT_LIST_HEAD(&f->room.entry);	/* not on a queue: the one above leaves it */
	file->private_data = f;
	return stream_open(inode, file);
}

static int ics_file_release(struct inode *inode, struct file *file)
{
	struct ics_file *f = file->private_data;
	u32 n;

	mutex_lock(&f->bind_lock);
	f->closing = true;
	if (f->channel >= 0)
		ics_unregister_handler(f->net, f->channel, &f->h);	/* waits for rcv() */
	mutex_unlock(&f->bind_lock);
	spin_lock(&f->room_lock);
	ics_file_room_disarm(f, ics_net(f->net));
	spin_unlock(&f->room_lock);
	n = skb_queue_len(&f->rxq);
	if (n)
		ics_stat_add(ics_net(f->net)->stats->ctr[ICS_STAT_DEV_CLOSE_DROPS], n);
	skb_queue_purge(&f->rxq);
	put_net(f->net);
	ics_file_put(f);
	return 0;
}

/*
 * Who may do what is decided by the credentials the file was opened with,
 * as for a socket, not by whoever calls ioctl() on it later: a file passed
 * to a more privileged process does not gain its rights. An administrator
 * has CAP_NET_ADMIN over the instance's network namespace (its owner's
 * user namespace), as the netlink family's configuration commands ask.
 */
static bool ics_file_admin(const struct file *file, const struct ics_file *f)
{
	return file_ns_capable(file, f->net->user_ns, CAP_NET_ADMIN);
}

/* Is the opener in group user_gid (its file-system gid or a supplementary one)? */
static bool ics_file_user(const struct file *file)
{
	const struct cred *cred = file->f_cred;
	int id = READ_ONCE(ics_user_gid);
	kgid_t gid;
	int i;

	if (id < 0)
		return false;
	gid = make_kgid(&init_user_ns, id);
	if (gid_eq(cred->fsgid, gid))
		return true;
	for (i = 0; i < cred->group_info->ngroups; i++)
		if (gid_eq(cred->group_info->gid[i], gid))
			return true;
	return false;
}

static bool ics_may_bind(const struct file *file, const struct ics_file *f, u32 channel)
{
	if (ics_file_admin(file, f))
		return true;
	return (READ_ONCE(ics_user_channels) & BIT(channel)) && ics_file_user(file);
}

static long ics_file_bind(struct file *file, struct ics_file *f, const void __user *arg)
{
	struct ics_dev_bind b;
	int err;

	if (copy_from_user(&b, arg, sizeof(b)))
		return -EFAULT;
	if (b.channel >= ICS_CHANNELS || (b.flags & ~ICS_DEV_BIND_ALL))
		return -EINVAL;
	if (!ics_may_bind(file, f, b.channel))
		return -EPERM;
	mutex_lock(&f->bind_lock);
	if (f->channel >= 0 || f->closing) {
		err = -EALREADY;
	} else {
		err = ics_register_handler(f->net, b.channel, &f->h);
		if (!err) {
			f->batch = b.flags & ICS_DEV_BIND_BATCH;
			/* pairs with read's acquire: batch is set when channel is */
			smp_store_release(&f->channel, b.channel);
		}
	}
	mutex_unlock(&f->bind_lock);
	return err == -EBUSY ? -EADDRINUSE : err;
}

static long ics_file_stats(struct ics_file *f, void __user *arg)
{
	struct ics_dev_stats s = {
		.tx_msgs = atomic64_read(&f->tx_msgs),
		.tx_bytes = atomic64_read(&f->tx_bytes),
		.tx_done = atomic64_read(&f->tx_done),
		.tx_failed = atomic64_read(&f->tx_failed),
		.rx_msgs = atomic64_read(&f->rx_msgs),
		.rx_bytes = atomic64_read(&f->rx_bytes),
		.rx_dropped = 0,	/* a full queue refuses: ics holds the message */
		.last_error = atomic_read(&f->last_error),
		.rx_queued = skb_queue_len(&f->rxq),
	};

	return copy_to_user(arg, &s, sizeof(s)) ? -EFAULT : 0;
}

static long ics_file_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct ics_file *f = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct sk_buff *skb;
	u32 v;

	switch (cmd) {
	case ICS_IOC_BIND:
		return ics_file_bind(file, f, uarg);
	case ICS_IOC_STATS:
		return ics_file_stats(f, uarg);
	case ICS_IOC_SET_RCVBUF:
		if (get_user(v, (u32 __user *)uarg))
			return -EFAULT;
		if (v > ICS_DEV_RCVBUF_MAX)
			return -EINVAL;
		if (v > READ_ONCE(ics_rcvbuf_max) && !ics_file_admin(file, f))
			return -EPERM;
		spin_lock_bh(&f->rxq.lock);
		WRITE_ONCE(f->rcvbuf, v);
		if (smp_load_acquire(&f->channel) >= 0)	/* see bind */
			ics_file_flow(f, f->channel);	/* the new size may pause or resume */
		spin_unlock_bh(&f->rxq.lock);
		return 0;
	case ICS_IOC_SET_SNDTIMEO:
		if (get_user(v, (u32 __user *)uarg))
			return -EFAULT;
		WRITE_ONCE(f->sndtimeo, v ? (long)msecs_to_jiffies(v) : MAX_SCHEDULE_TIMEOUT);
		return 0;
	case FIONREAD:
		/* the next read()'s size: header and payload */
		spin_lock_bh(&f->rxq.lock);
		skb = skb_peek(&f->rxq);
		v = skb ? sizeof(struct ics_dev_hdr) + skb->len : 0;
		spin_unlock_bh(&f->rxq.lock);
		return put_user(v, (int __user *)uarg);
	}
	return -ENOTTY;
}

/* Take the next message if @room bytes hold it; -EMSGSIZE leaves it queued. */
static struct sk_buff *ics_file_dequeue(struct ics_file *f, size_t room)
{
	struct sk_buff *skb;

	spin_lock_bh(&f->rxq.lock);
	skb = skb_peek(&f->rxq);
	if (!skb) {
		skb = ERR_PTR(-EAGAIN);
	} else if (room < sizeof(struct ics_dev_hdr) + skb->len) {
		skb = ERR_PTR(-EMSGSIZE);
	} else {
		__skb_unlink(skb, &f->rxq);
		f->rx_mem -= skb->truesize;
		ics_file_flow(f, f->channel);	/* bound: read checked */
	}
	spin_unlock_bh(&f->rxq.lock);
	return skb;
}

static void ics_file_requeue(struct ics_file *f, struct sk_buff *skb)
{
	spin_lock_bh(&f->rxq.lock);
	__skb_queue_head(&f->rxq, skb);
	f->rx_mem += skb->truesize;
	ics_file_flow(f, f->channel);
	spin_unlock_bh(&f->rxq.lock);
}

/* Copy @skb out as a record, with @pad zero bytes before it; a fault requeues it. */
static int ics_file_copy_out(struct ics_file *f, struct sk_buff *skb, struct iov_iter *to,
			     size_t pad)
{
	static const u8 zero[ICS_DEV_ALIGN];
	struct ics_dev_hdr hdr = {
		.len = skb->len,
		.node = ICS_FILE_CB(skb)->src,
		.channel = f->channel,
	};

	if (copy_to_iter(zero, pad, to) != pad ||
	    copy_to_iter(&hdr, sizeof(hdr), to) != sizeof(hdr) ||
	    skb_copy_datagram_iter(skb, 0, to, skb->len)) {
		ics_file_requeue(f, skb);
		return -EFAULT;
	}
	atomic64_inc(&f->rx_msgs);
	atomic64_add(skb->len, &f->rx_bytes);
	consume_skb(skb);
	return 0;
}

/*
 * One message; with ICS_DEV_BIND_BATCH, then every next one that fits,
 * aligned, without waiting. A fault loses nothing: the message goes back
 * to the head; after the first, the read returns what it has.
 */
static ssize_t ics_file_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct ics_file *f = iocb->ki_filp->private_data;
	size_t room = iov_iter_count(to), done, pad, len;
	struct sk_buff *skb;
	int err;

	/* pairs with bind's release: batch is read after channel */
	if (smp_load_acquire(&f->channel) < 0)
		return -EBADFD;
	for (;;) {
		skb = ics_file_dequeue(f, room);
		if (!IS_ERR(skb))
			break;
		if (PTR_ERR(skb) != -EAGAIN)
			return PTR_ERR(skb);
		if ((iocb->ki_filp->f_flags & O_NONBLOCK) || (iocb->ki_flags & IOCB_NOWAIT))
			return -EAGAIN;
		err = wait_event_interruptible(f->wq, !skb_queue_empty_lockless(&f->rxq));
		if (err)
			return err;
	}
	done = sizeof(struct ics_dev_hdr) + skb->len;
	err = ics_file_copy_out(f, skb, to, 0);
	if (err)
		return err;
	while (f->batch) {
		pad = ALIGN(done, ICS_DEV_ALIGN) - done;
		room = iov_iter_count(to);
		if (room <= pad)
			break;
		skb = ics_file_dequeue(f, room - pad);
		if (IS_ERR(skb))
			break;	/* none left, or the next does not fit */
		len = skb->len;	/* the copy consumes the skb */
		if (ics_file_copy_out(f, skb, to, pad))
			break;
		done += pad + sizeof(struct ics_dev_hdr) + len;
		cond_resched();	/* a large buffer may take many small messages */
	}
	return done;
}

/*
 * A sent message's fate (struct ics_send_args.done, @ctx the file): softirq,
 * or process context under RTNL at unbind. Drops the message's reference.
 */
static void ics_file_sent(void *ctx, int err)
{
	struct ics_file *f = ctx;

	if (err) {
		atomic64_inc(&f->tx_failed);
		atomic_set(&f->last_error, err);
	} else {
		atomic64_inc(&f->tx_done);
	}
	/* Room may have opened on the link: writers polling for it look again. */
	wake_up_interruptible_poll(&f->wq, EPOLLOUT | EPOLLWRNORM);
	ics_file_put(f);
}

/*
 * A synchronous write's wait, shared with its completion and refcounted
 * (the writer may be interrupted and leave first). Only ICS_DEV_F_SYNC
 * writes allocate one; the others pass the file itself as the context.
 */
struct ics_file_sync {
	refcount_t ref;
	int err;
	bool done;
	wait_queue_head_t wq;
	struct ics_file *f;
};

static void ics_sync_put(struct ics_file_sync *s)
{
	if (refcount_dec_and_test(&s->ref))
		kfree(s);
}

static void ics_file_sent_sync(void *ctx, int err)
{
	struct ics_file_sync *s = ctx;

	s->err = err;
	/* pairs with the writer's smp_load_acquire(): err is read after done */
	smp_store_release(&s->done, true);
	wake_up(&s->wq);
	ics_file_sent(s->f, err);
	ics_sync_put(s);
}

static ssize_t ics_file_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct ics_file *f = iocb->ki_filp->private_data;
	size_t count = iov_iter_count(from);
	struct ics_send_args args = { .timeout = READ_ONCE(f->sndtimeo), .done = ics_file_sent };
	unsigned long start = jiffies;
	struct ics_file_sync *sync = NULL;
	struct ics_dev_hdr hdr;
	int channel = READ_ONCE(f->channel);
	int err;

	if (channel < 0)
		return -EBADFD;
	if (count < sizeof(hdr))
		return -EINVAL;
	if (copy_from_iter(&hdr, sizeof(hdr), from) != sizeof(hdr))
		return -EFAULT;
	if (hdr.len > ICS_MSG_MAX)
		return -EMSGSIZE;
	if (hdr.len != count - sizeof(hdr) || hdr.channel != channel ||
	    (hdr.flags & ~ICS_DEV_F_WRITE))
		return -EINVAL;
	if (hdr.node < 1 || hdr.node > ICS_MAX_NODES)
		return -EINVAL;

	if ((iocb->ki_filp->f_flags & O_NONBLOCK) || (iocb->ki_flags & IOCB_NOWAIT)) {
		/* it would wait for the message's fate: no, or not now */
		if (hdr.flags & ICS_DEV_F_SYNC)
			return iocb->ki_filp->f_flags & O_NONBLOCK ? -EINVAL : -EAGAIN;
		args.flags |= ICS_SEND_NONBLOCK;
	}
	args.ctx = f;
	if (hdr.flags & ICS_DEV_F_SYNC) {
		sync = kmalloc(sizeof(*sync), GFP_KERNEL_ACCOUNT);
		if (!sync)
			return -ENOMEM;
		refcount_set(&sync->ref, 2);	/* this write and the completion */
		sync->done = false;
		sync->err = 0;
		init_waitqueue_head(&sync->wq);
		sync->f = f;
		args.done = ics_file_sent_sync;
		args.ctx = sync;
	}
	refcount_inc(&f->ref);
	/* the writer's memory: charged to it, and it fails rather than the OOM killer */
	err = ics_link_send_iter(ics_net(f->net), hdr.node, channel, NULL, from, hdr.len, &args,
				 GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
	if (err == -ETIMEDOUT)
		err = -EAGAIN;	/* sndtimeo ran out, as SO_SNDTIMEO says it */
	if (err) {
		if (err == -EAGAIN) {
			WRITE_ONCE(f->blocked_len, hdr.len);
			WRITE_ONCE(f->blocked_node, hdr.node);
			ics_file_room_arm(f, hdr.node);
		}
		ics_file_put(f);
		kfree(sync);
		return err;
	}
	WRITE_ONCE(f->blocked_node, 0);
	atomic64_inc(&f->tx_msgs);
	atomic64_add(hdr.len, &f->tx_bytes);
	if (sync) {
		long t = args.timeout;

		/* the send timeout counts from the call: what the room took is gone */
		if (t != MAX_SCHEDULE_TIMEOUT)
			t = max_t(long, t - (long)(jiffies - start), 0);
		/* done pairs with the completion's smp_store_release(): err first */
		t = wait_event_interruptible_timeout(sync->wq, smp_load_acquire(&sync->done), t);
		/*
		 * The message is queued however the wait ends, and may still be
		 * delivered: a restarted write would queue it again. So neither
		 * a signal (even one that runs no handler: a stop, the freezer)
		 * nor the send timeout restarts it; both end the call with
		 * EINPROGRESS, where EINTR would say nothing was queued.
		 */
		err = t > 0 ? sync->err : -EINPROGRESS;
		ics_sync_put(sync);
		if (err)
			return err;
	}
	return count;
}

/*
 * Readable with a message queued; writable unless the last write refused
 * for room would still be refused. A refused write armed f->room on its
 * link's wait queue, which wakes f->wq when room comes.
 */
static __poll_t ics_file_poll(struct file *file, poll_table *wait)
{
	struct ics_file *f = file->private_data;
	struct ics_net *in = ics_net(f->net);
	__poll_t mask = 0;
	u8 node;

	poll_wait(file, &f->wq, wait);
	if (READ_ONCE(f->channel) < 0)
		return 0;
	if (!skb_queue_empty_lockless(&f->rxq))
		mask |= EPOLLIN | EPOLLRDNORM;
	/*
	 * Writable unless the last message refused would still be refused;
	 * armed again first, as the room it was woken for may be gone.
	 */
	node = READ_ONCE(f->blocked_node);
	if (node)
		ics_file_room_arm(f, node);
	if (!node || ics_link_room(in, node, f->channel, READ_ONCE(f->blocked_len)))
		mask |= EPOLLOUT | EPOLLWRNORM;
	return mask;
}

static const struct file_operations ics_fops = {
	.owner = THIS_MODULE,
	.open = ics_file_open,
	.release = ics_file_release,
	.read_iter = ics_file_read_iter,
	.write_iter = ics_file_write_iter,
	.poll = ics_file_poll,
	.unlocked_ioctl = ics_file_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice ics_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = ICS_DEV_NAME,
	.fops = &ics_fops,
	.mode = 0666,	/* opening is harmless; ICS_IOC_BIND checks who may bind what */
};

int ics_dev_init(void)
{
	return misc_register(&ics_miscdev);
}

void ics_dev_exit(void)
{
	misc_deregister(&ics_miscdev);
}
