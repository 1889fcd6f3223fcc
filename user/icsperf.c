// SPDX-License-Identifier: GPL-2.0
/*
 * icsperf - netperf-style benchmark of ics (Documentation/man/icsperf.8).
 *
 *   icsperf [options] server                  user echo server on -c CHANNEL
 *   icsperf [options] lat|stream|bistream|rr-load NODE
 *
 * User<->user (default): messages go through /dev/ics on both ends; the
 * responder is an `icsperf server` on NODE (--peer user, the default) or
 * that member's test service, ics_test.ko (--peer kernel). Kernel<->kernel
 * (-k): ics_test's generator (ICS_TEST_CMD_SEND over netlink) against the
 * peer's ics_test, which separates the system calls' cost from the
 * protocol's.
 *
 * Toward an icsperf server, the first bytes of each message say what to do
 * (struct perf_req); messages shorter than it are echoed whole. The test
 * service is asked in its own header (struct ics_test_hdr), followed by its
 * pattern: built once per size and channel, since only the header changes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <netlink/genl/genl.h>

#include "icsnl.h"

#define PERF_MAGIC	0x69637370u	/* "icsp" */
#define MAX_STREAMS	ICS_CHANNELS

enum perf_kind { REQ_ECHO, REQ_ACK, REQ_SINK, REQ_CPU, REQ_COUNT };

struct perf_req {
	uint32_t magic;
	uint32_t kind;		/* enum perf_kind */
};

/* REQ_COUNT: the request's token after the perf_req; the answer's layout. */
struct perf_count {
	uint32_t token;		/* the request's */
	uint32_t pad;
	uint64_t sunk;		/* REQ_SINK messages read since the server started */
};

enum test { T_LAT, T_STREAM, T_BISTREAM, T_RRLOAD };
static const char *const test_names[] = { "lat", "stream", "bistream", "rr-load" };

static struct {
	int channel;
	uint32_t sizes[64];
	int nsizes;
	uint32_t rates[64];
	int nrates;
	double secs, interim;
	uint32_t window;
	int streams;
	bool kernel, peer_kernel, json, csv;
	uint8_t node, self;	/* self: our node id, for the test service's pattern */
	enum test test;
} o = { .channel = ICS_CH_TEST, .secs = 1.0, .window = 16, .streams = 1 };

struct result {
	uint32_t size, rate;
	uint64_t msgs, bytes, lost;
	double secs;
	bool have_rtt;
	double p50, p90, p99, max;	/* µs */
	double cpu_local, cpu_remote;	/* µs per message; < 0: not measured */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * Non-idle CPU time of the whole machine since boot, µs: CPUs x time since
 * boot - idle - iowait. The kernel measures idle time exactly (NOHZ), where
 * the busy fields of /proc/stat are sampled at the tick, which misses most
 * of a round trip's short busy spells.
 */
static double cpu_busy_us(void)
{
	unsigned long long v[8] = { 0 };
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN), hz = sysconf(_SC_CLK_TCK);
	struct timespec ts;
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 8 || ncpu < 1 || hz < 1 || clock_gettime(CLOCK_BOOTTIME, &ts))
		return -1;
	/* user nice system idle iowait irq softirq steal */
	return ncpu * (ts.tv_sec * 1e6 + ts.tv_nsec / 1e3) - (v[3] + v[4] + v[7]) * 1e6 / hz;
}

static void die_errno(const char *what, int err)
{
	icsnl_err("%s: %s", what, strerror(err));
	exit(1);
}

/* /dev/ics */

static int dev_open(int channel, uint32_t flags)
{
	struct ics_dev_bind b = { .channel = channel, .flags = flags };
	int fd = open("/dev/" ICS_DEV_NAME, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT)
			icsnl_err("/dev/%s: no such device (is the ics module loaded?)", ICS_DEV_NAME);
		else
			icsnl_err("/dev/%s: %s", ICS_DEV_NAME, strerror(errno));
		exit(1);
	}
	if (ioctl(fd, ICS_IOC_BIND, &b) < 0) {
		int err = errno;

		icsnl_err("bind channel %s: %s%s", ics_channel_names[channel], strerror(err),
			  err == EPERM ? " (needs CAP_NET_ADMIN, or user_gid and user_channels)" :
			  err == EADDRINUSE ? " (another file or module receives on it)" : "");
		exit(1);
	}
	return fd;
}

/*
 * user_lat() waits in a blocking read, as a TCP client would, rather than
 * poll() then read(): one system call fewer per round trip. Its bound on a
 * round trip is this alarm, re-armed as the run goes: a read it interrupts
 * (no SA_RESTART) returns EINTR with lat_expired set.
 */
#define LAT_TIMEOUT_S	10

static volatile sig_atomic_t lat_expired;

static void lat_alarm(int sig)
{
	(void)sig;
	lat_expired = 1;
}

/* One message: header then payload, one write. 0 or -errno (-EAGAIN on a full queue). */
static int msg_try_send(int fd, uint8_t node, int channel, uint16_t flags, const void *buf,
			uint32_t len)
{
	struct ics_dev_hdr h = { .len = len, .node = node, .channel = channel, .flags = flags };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)buf, len } };

	for (;;) {
		ssize_t n = writev(fd, iov, 2);

		if (n >= 0)
			return 0;
		if (errno != EINTR)
			return -errno;
		if (lat_expired)
			return -ETIMEDOUT;
	}
}

/* As msg_try_send(), waiting up to 60 s for room on a non-blocking file. */
static int msg_send(int fd, uint8_t node, int channel, uint16_t flags, const void *buf,
		    uint32_t len)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int err;

	while ((err = msg_try_send(fd, node, channel, flags, buf, len)) == -EAGAIN)
		if (poll(&p, 1, 60000) == 0)
			return -ETIMEDOUT;
	return err;
}

/* Read one message into @buf (@cap bytes); its header in @h. */
static int msg_recv(int fd, struct ics_dev_hdr *h, void *buf, uint32_t cap, int timeout_ms)
{
	struct iovec iov[2] = { { h, sizeof(*h) }, { buf, cap } };
	struct pollfd p = { .fd = fd, .events = POLLIN };

	for (;;) {
		ssize_t n;

		if (timeout_ms >= 0) {
			int r = poll(&p, 1, timeout_ms);

			if (r == 0)
				return -ETIMEDOUT;
			if (r < 0 && errno != EINTR)
				return -errno;
		}
		n = readv(fd, iov, 2);
		if (n >= 0)
			return 0;
		if (errno != EINTR)
			return -errno;
		if (lat_expired)
			return -ETIMEDOUT;
	}
}

#define TEST_HDR	((uint32_t)sizeof(struct ics_test_hdr))

/*
 * A send buffer of @size bytes (+ 8) for @channel; against the test
 * service, its pattern, so that ask() need only write the header.
 */
static uint8_t *send_buf(uint32_t size, int channel)
{
	uint8_t *buf = calloc(1, size + 8);

	if (!buf)
		die_errno("buffers", ENOMEM);
	if (o.peer_kernel)
		ics_test_msg_build(buf, o.self, channel, size, ICS_TEST_OP_DATA, 1, 0);
	return buf;
}

/*
 * What to ask of the responder, for a message of @size bytes in @buf (from
 * send_buf()). The test service answers an ECHO with a REPLY of arg bytes
 * (at least its header); it answers nothing shorter than its header.
 */
static void ask(uint8_t *buf, uint32_t size, enum perf_kind kind)
{
	struct perf_req r = { .magic = PERF_MAGIC, .kind = kind };

	if (o.peer_kernel) {
		if (size >= TEST_HDR)
			ics_test_hdr_put(buf, kind == REQ_SINK ? ICS_TEST_OP_SINK : ICS_TEST_OP_ECHO,
					 1, kind == REQ_ECHO ? size : 0);
		return;
	}
	if (size >= sizeof(r))
		memcpy(buf, &r, sizeof(r));
}

/* Answer one request (@h, @payload) as the user responder. */
static void serve(int fd, const struct ics_dev_hdr *h, uint8_t *payload, struct perf_count *c)
{
	struct perf_req r = { .kind = REQ_ECHO };
	const void *reply = payload;
	uint32_t len;
	double us;
	int err;

	if (h->len >= sizeof(r))
		memcpy(&r, payload, sizeof(r));
	if (h->len >= sizeof(r) && r.magic != PERF_MAGIC)
		r.kind = REQ_ECHO;
	switch (r.kind) {
	case REQ_SINK:
		c->sunk++;
		return;
	case REQ_ACK:
		len = 0;
		break;
	case REQ_COUNT:
		c->token = 0;
		if (h->len >= sizeof(r) + sizeof(c->token))
			memcpy(&c->token, payload + sizeof(r), sizeof(c->token));
		reply = c;
		len = sizeof(*c);
		break;
	case REQ_CPU:
		us = cpu_busy_us();
		reply = &us;
		len = sizeof(us);
		break;
	default:
		len = h->len;
	}
	err = msg_send(fd, h->node, o.channel, 0, reply, len);
	if (err && err != -EHOSTDOWN && err != -EHOSTUNREACH)
		die_errno("write", -err);
}

/*
 * The user responder: echo, ack, sink or report its CPU time, forever.
 * It reads in batches (ICS_DEV_BIND_BATCH): every message queued, up to
 * the buffer, in one read().
 */
static int __attribute__((noreturn)) run_server(void)
{
	size_t cap = sizeof(struct ics_dev_hdr) + ICS_MSG_MAX + (1 << 20);
	uint8_t *buf = malloc(cap);
	struct perf_count c = { 0 };
	struct ics_dev_hdr h;
	int fd = dev_open(o.channel, ICS_DEV_BIND_BATCH);
	uint64_t off;
	ssize_t n;

	if (!buf)
		die_errno("server", ENOMEM);
	if (!o.json)
		printf("icsperf server: channel %s, waiting for messages\n",
		       ics_channel_names[o.channel]);
	fflush(stdout);
	for (;;) {
		n = read(fd, buf, cap);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die_errno("read", errno);
		for (off = 0; off < (uint64_t)n; off = ICS_DEV_NEXT(off, h.len)) {
			memcpy(&h, buf + off, sizeof(h));
			serve(fd, &h, buf + off + sizeof(h), &c);
		}
	}
}

/* The responder's CPU time, µs, or -1 when it cannot say (the test service). */
static double remote_cpu(int fd)
{
	struct ics_dev_hdr h;
	uint8_t buf[64];
	double us;

	if (o.peer_kernel)
		return -1;
	ask(buf, sizeof(struct perf_req), REQ_CPU);
	if (msg_send(fd, o.node, o.channel, 0, buf, sizeof(struct perf_req)) ||
	    msg_recv(fd, &h, buf, sizeof(buf), 5000) || h.len != sizeof(us))
		return -1;
	memcpy(&us, buf, sizeof(us));
	return us;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void rtt_summary(struct result *r, uint64_t *rtt, uint64_t n)
{
	if (!n)
		return;
	qsort(rtt, n, sizeof(*rtt), cmp_u64);
	r->have_rtt = true;
	r->p50 = rtt[n / 2] / 1e3;
	r->p90 = rtt[n * 90 / 100] / 1e3;
	r->p99 = rtt[n * 99 / 100] / 1e3;
	r->max = rtt[n - 1] / 1e3;
}

static void interim(uint64_t t0, uint64_t *next, uint32_t size, uint64_t msgs, uint64_t bytes)
{
	uint64_t t = now_ns();
	double s = (t - t0) / 1e9;

	if (!o.interim || t < *next)
		return;
	*next = t + o.interim * 1e9;
	fprintf(o.json || o.csv ? stderr : stdout,
		"interim: size %u, %.1f s, %.0f msgs/s, %.2f MB/s\n", size, s, msgs / s,
		bytes / s / 1e6);
}

/*
 * Synchronous round trips for o.secs: a blocking write, a blocking read
 * into @rbuf (ICS_MSG_MAX bytes).
 */
static void user_lat(int fd, uint8_t *buf, uint8_t *rbuf, uint32_t size, struct result *r)
{
	uint64_t cap = 1 << 16, n = 0, *rtt = malloc(cap * sizeof(*rtt));
	uint64_t t0 = now_ns(), end = t0 + o.secs * 1e9, next = 0, t, armed = 0;
	struct sigaction sa = { .sa_handler = lat_alarm }, old;	/* no SA_RESTART */
	struct ics_dev_hdr h;
	int err;

	if (!rtt)
		die_errno("lat", ENOMEM);
	lat_expired = 0;
	sigaction(SIGALRM, &sa, &old);
	do {
		ask(buf, size, REQ_ECHO);
		t = now_ns();
		if (t - armed > 1000000000ull) {	/* a system call a second */
			alarm(LAT_TIMEOUT_S);
			lat_expired = 0;
			armed = t;
		}
		err = msg_send(fd, o.node, o.channel, 0, buf, size);
		if (!err)
			err = msg_recv(fd, &h, rbuf, ICS_MSG_MAX, -1);
		if (err == -ETIMEDOUT) {
			icsnl_err("round trip: no answer from node %u in %d s", o.node,
				  LAT_TIMEOUT_S);
			exit(1);
		}
		if (err)
			die_errno("round trip", -err);
		if (n == cap) {
			cap *= 2;
			rtt = realloc(rtt, cap * sizeof(*rtt));
			if (!rtt)
				die_errno("lat", ENOMEM);
		}
		rtt[n++] = now_ns() - t;
		interim(t0, &next, size, n, n * size * 2);
	} while (now_ns() < end);
	alarm(0);
	sigaction(SIGALRM, &old, NULL);
	r->secs = (now_ns() - t0) / 1e9;
	r->msgs = n;
	r->bytes = n * size * 2;
	rtt_summary(r, rtt, n);
	free(rtt);
}

/*
 * The user server's count of messages it sank (read and dropped), in *@sunk.
 * A server slower than the wire pauses the channel (flow control) and
 * loses nothing; the request is still asked again every 5 s (a server
 * that was restarted lost its count's asker), up to
 * @budget_s, and an answer to any of the attempts will do (the server's
 * count is cumulative and each answer follows every sink sent before its
 * request, in order on the channel). Answers to the other attempts are
 * read and dropped, so they cannot pass for a later answer.
 */
static int sink_count(int fd, int channel, uint8_t *rbuf, int budget_s, uint64_t *sunk)
{
	static uint32_t token;
	struct perf_req r = { .magic = PERF_MAGIC, .kind = REQ_COUNT };
	uint32_t first = token + 1, got = 0;
	uint8_t q[sizeof(r) + sizeof(token)];
	struct perf_count c;
	struct ics_dev_hdr h;
	int err, t;

	memcpy(q, &r, sizeof(r));
	for (t = 0; t < budget_s && !got; t += 5) {
		token++;
		memcpy(q + sizeof(r), &token, sizeof(token));
		err = msg_send(fd, o.node, channel, 0, q, sizeof(q));
		while (!err && !got) {
			err = msg_recv(fd, &h, rbuf, ICS_MSG_MAX, 5000);
			memcpy(&c, rbuf, sizeof(c));
			if (!err && h.len == sizeof(c) && c.token - first <= token - first)
				got = c.token;
		}
		if (err && err != -ETIMEDOUT)
			return err;
	}
	if (!got)
		return -ETIMEDOUT;
	*sunk = c.sunk;
	/* Later attempts' answers, unless those requests were dropped. */
	while (got != token && !msg_recv(fd, &h, rbuf, ICS_MSG_MAX, 2000)) {
		memcpy(&c, rbuf, sizeof(c));
		if (h.len == sizeof(c))
			got = c.token;
	}
	return 0;
}

/*
 * A window of o.window messages in flight, each answered (stream: with
 * 0 bytes; bistream: with as many as it carried). o.window 0: no window,
 * the peer sinks every message; at the end, against the TEST service one
 * echo (it sinks in the kernel as the messages arrive, and drops none),
 * against a user server its count of what it read, before and after.
 */
/*
 * One stream message; while the queue is full, take the answers to the
 * @out in flight as they come (each one done).
 */
static int stream_send(int fd, int channel, uint8_t *buf, uint32_t size, bool bi,
		       uint8_t *rbuf, uint32_t *out, uint64_t *done)
{
	struct pollfd p = { .fd = fd };
	struct ics_dev_hdr h;
	int err;

	ask(buf, size, !o.window ? REQ_SINK : bi ? REQ_ECHO : REQ_ACK);
	while ((err = msg_try_send(fd, o.node, channel, 0, buf, size)) == -EAGAIN) {
		p.events = POLLOUT | (o.window && *out ? POLLIN : 0);
		if (poll(&p, 1, 60000) == 0)
			return -ETIMEDOUT;
		if (!(p.revents & POLLIN) || !o.window || !*out)
			continue;
		err = msg_recv(fd, &h, rbuf, ICS_MSG_MAX, 0);
		if (err)
			return err;
		(*out)--;
		(*done)++;
	}
	return err;
}

static void user_stream(int fd, int channel, uint8_t *buf, uint8_t *rbuf, uint32_t size,
			bool bi, struct result *r)
{
	uint64_t t0, end, next = 0, sent = 0, done = 0, sunk0 = 0, sunk;
	/* A message too short for a request is echoed, not sunk: as before. */
	bool count = !o.window && !o.peer_kernel && size >= sizeof(struct perf_req);
	int fl = fcntl(fd, F_GETFL), err;
	uint32_t out = 0;
	struct ics_dev_hdr h;

	/*
	 * Writes do not block: while the queue is full the answers that come
	 * are taken. A blocked writer would read nothing, and with flow
	 * control a responder whose answers pile up here is held back, stops
	 * reading, and holds us back in turn: a deadlock, with large messages.
	 */
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		die_errno("stream: fcntl", errno);
	if (count) {
		err = sink_count(fd, channel, rbuf, 60, &sunk0);
		if (err)
			die_errno("stream: the server's count", -err);
	}
	t0 = now_ns();
	end = t0 + o.secs * 1e9;
	while (now_ns() < end) {
		if (o.window && out == o.window) {
			err = msg_recv(fd, &h, rbuf, ICS_MSG_MAX, 10000);
			if (err)
				die_errno("stream", -err);
			out--;
			done++;
			continue;
		}
		err = stream_send(fd, channel, buf, size, bi, rbuf, &out, &done);
		if (err)
			die_errno("stream", -err);
		sent++;
		out++;
		interim(t0, &next, size, done, done * size * (bi ? 2 : 1));
	}
	if (count) {
		/* Behind everything queued (up to chan_queue_max): up to 60 s. */
		err = sink_count(fd, channel, rbuf, 60, &sunk);
		if (err)
			die_errno("stream: the server's count", -err);
		done = sunk - sunk0;
		out = 0;
	} else if (!o.window) {	/* in order: its answer comes after every sink */
		uint32_t n = o.peer_kernel ? TEST_HDR : 0;

		ask(buf, n, REQ_ACK);
		err = msg_send(fd, o.node, channel, 0, buf, n);
		if (err)
			die_errno("stream", -err);
		out = 1;
		done = sent;
	}
	/*
	 * Without a window the closing answer waits behind everything queued
	 * (up to chan_queue_max), which a slow link takes long to drain.
	 */
	for (; out; out--) {
		err = msg_recv(fd, &h, rbuf, ICS_MSG_MAX, o.window ? 10000 : 60000);
		if (err)
			die_errno("stream", -err);
		if (o.window)
			done++;
	}
	r->secs = (now_ns() - t0) / 1e9;
	r->msgs = done;
	r->bytes = done * size * (bi ? 2 : 1);
	fcntl(fd, F_SETFL, fl);
}

struct rrload {
	int fd;
	uint8_t *buf;
	uint32_t size, rate;
	uint64_t *sent_at;
	uint64_t n;
	volatile uint64_t sent;
	volatile bool stop;
};

/*
 * Open loop: requests leave on schedule whether or not answers came, and
 * each round trip counts from when its request was due.
 */
static void *rrload_sender(void *arg)
{
	struct rrload *l = arg;
	uint64_t t0 = now_ns(), gap = 1e9 / l->rate, i;
	struct timespec ts;

	for (i = 0; i < l->n && !l->stop; i++) {
		uint64_t at = t0 + i * gap;

		ts.tv_sec = at / 1000000000ull;
		ts.tv_nsec = at % 1000000000ull;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		/* from when it was due: a sender that falls behind is latency too */
		l->sent_at[i] = at;
		__atomic_store_n(&l->sent, i + 1, __ATOMIC_RELEASE);
		ask(l->buf, l->size, REQ_ECHO);
		if (msg_send(l->fd, o.node, o.channel, 0, l->buf, l->size))
			break;
	}
	return NULL;
}

static void user_rrload(int fd, uint8_t *buf, uint8_t *rbuf, uint32_t size, uint32_t rate,
			struct result *r)
{
	struct rrload l = { .fd = fd, .buf = buf, .size = size, .rate = rate ? rate : 1 };
	uint64_t got = 0, *rtt, t0 = now_ns();
	struct ics_dev_hdr h;
	pthread_t th;

	l.n = (uint64_t)(rate * o.secs);
	if (!l.n)
		l.n = 1;
	l.sent_at = calloc(l.n, sizeof(uint64_t));
	rtt = calloc(l.n, sizeof(uint64_t));
	if (!l.sent_at || !rtt)
		die_errno("rr-load", ENOMEM);
	if (pthread_create(&th, NULL, rrload_sender, &l))
		die_errno("rr-load", EAGAIN);
	/* Answers come in order (one channel, one peer): the i-th is request i's. */
	while (got < l.n) {
		if (msg_recv(fd, &h, rbuf, ICS_MSG_MAX, 2000))
			break;
		while (__atomic_load_n(&l.sent, __ATOMIC_ACQUIRE) <= got)
			;	/* the answer overtook the sender's note: nanoseconds */
		rtt[got] = now_ns() - l.sent_at[got];
		got++;
	}
	l.stop = true;
	pthread_join(th, NULL);
	r->rate = rate;
	r->secs = (now_ns() - t0) / 1e9;
	r->msgs = got;
	r->bytes = got * size * 2;
	r->lost = l.sent - got;
	rtt_summary(r, rtt, got);
	free(rtt);
	free(l.sent_at);
}

/* Kernel<->kernel: ics_test's generator, over netlink. */
static int kernel_test(struct icsnl *nl, uint32_t size, uint32_t count, uint32_t flags,
		       struct ics_test_result *t)
{
	struct nl_msg *msg = icsnl_msg(nl, ICS_TEST_CMD_SEND, 0);
	int err;

	if (!msg || nla_put_u32(msg, ICS_TEST_A_NODE, o.node) ||
	    nla_put_u32(msg, ICS_TEST_A_CHANNEL, o.channel) ||
	    nla_put_u32(msg, ICS_TEST_A_SIZE, size) || nla_put_u32(msg, ICS_TEST_A_COUNT, count) ||
	    nla_put_u32(msg, ICS_TEST_A_FLAGS, flags) ||
	    nla_put_u32(msg, ICS_TEST_A_TIMEOUT_MS, 10000))
		die_errno("netlink", ENOMEM);
	memset(t, 0, sizeof(*t));
	err = icsnl_do(nl, msg, ics_test_parse, t);
	if (!err && t->error)
		err = -t->error;
	if (!err && !ics_test_ok(t, count))
		err = -EIO;
	if (err) {
		icsnl_perror(nl, "kernel test", err);
		exit(1);
	}
	return 0;
}

static void kernel_run(struct icsnl *nl, uint32_t size, struct result *r)
{
	uint32_t flags = o.test == T_LAT ? ICS_TEST_F_PING : ICS_TEST_F_WAIT;
	struct ics_test_result t;
	uint64_t t0;
	double per;
	uint32_t n;

	/* Calibrate: how many fit in o.secs. */
	n = o.test == T_LAT ? 20 : 64;
	t0 = now_ns();
	kernel_test(nl, size, n, flags, &t);
	per = (now_ns() - t0) / 1e9 / n;
	n = per > 0 ? (uint32_t)fmin(o.secs / per, 10000000) : 1000;
	if (n < 10)
		n = 10;
	t0 = now_ns();
	kernel_test(nl, size, n, flags, &t);
	r->secs = (now_ns() - t0) / 1e9;
	r->msgs = n;
	r->bytes = (uint64_t)n * size * (o.test == T_LAT ? 2 : 1);
	if (o.test == T_LAT && t.have_rtt) {
		r->have_rtt = true;
		r->p50 = t.rtt_ns[ICS_RTT_P50] / 1e3;
		r->p90 = t.rtt_ns[ICS_RTT_P90] / 1e3;
		r->p99 = t.rtt_ns[ICS_RTT_P99] / 1e3;
		r->max = t.rtt_ns[ICS_RTT_MAX] / 1e3;
	}
}

/* -P: one thread per stream, each with its own file on its own channel. */
struct stream_arg {
	int fd, channel;
	uint32_t size;
	struct result r;
};

static void *stream_thread(void *arg)
{
	struct stream_arg *a = arg;
	uint8_t *buf = send_buf(a->size, a->channel), *rbuf = malloc(ICS_MSG_MAX);

	if (!rbuf)
		die_errno("stream", ENOMEM);
	user_stream(a->fd, a->channel, buf, rbuf, a->size, o.test == T_BISTREAM, &a->r);
	free(buf);
	free(rbuf);
	return NULL;
}

static void measure(int *fds, struct icsnl *nl, uint32_t size, uint32_t rate, struct result *r)
{
	double c0 = cpu_busy_us(), rc0 = -1, rc1;
	uint8_t *buf, *rbuf;
	int i;

	memset(r, 0, sizeof(*r));
	r->size = size;
	if (!o.kernel)
		rc0 = remote_cpu(fds[0]);
	if (o.kernel) {
		kernel_run(nl, size, r);
	} else if (o.streams > 1) {
		struct stream_arg a[MAX_STREAMS];
		pthread_t th[MAX_STREAMS];

		for (i = 0; i < o.streams; i++) {
			a[i] = (struct stream_arg){ .fd = fds[i], .channel = o.channel + i,
						    .size = size };
			if (pthread_create(&th[i], NULL, stream_thread, &a[i]))
				die_errno("stream", EAGAIN);
		}
		for (i = 0; i < o.streams; i++) {
			pthread_join(th[i], NULL);
			r->msgs += a[i].r.msgs;
			r->bytes += a[i].r.bytes;
			if (a[i].r.secs > r->secs)
				r->secs = a[i].r.secs;
		}
	} else {
		buf = send_buf(size, o.channel);
		rbuf = malloc(ICS_MSG_MAX);
		if (!rbuf)
			die_errno("buffers", ENOMEM);
		if (o.test == T_LAT)
			user_lat(fds[0], buf, rbuf, size, r);
		else if (o.test == T_RRLOAD)
			user_rrload(fds[0], buf, rbuf, size, rate, r);
		else
			user_stream(fds[0], o.channel, buf, rbuf, size, o.test == T_BISTREAM, r);
		free(buf);
		free(rbuf);
	}
	r->rate = rate;
	r->cpu_local = r->cpu_remote = -1;
	if (c0 >= 0 && r->msgs)
		r->cpu_local = (cpu_busy_us() - c0) / r->msgs;
	if (rc0 >= 0 && (rc1 = remote_cpu(fds[0])) >= 0 && r->msgs)
		r->cpu_remote = (rc1 - rc0) / r->msgs;
}

static const char *transport(void)
{
	return o.kernel ? "ics-kernel" : "ics-user";
}

/* How the test measures, for -j (make bench's report prints it). */
static const char *notes(void)
{
	if (o.kernel && o.test == T_LAT)
		return "ics_test's generator: each round trip a PING of SIZE bytes answered by the "
		       "peer's ics_test with a PONG of as many, timed in the kernel";
	if (o.kernel)
		return "ics_test's generator queues every message (blocking while the channel's "
		       "queue is full) and the time runs until the last is acknowledged; it writes "
		       "every byte as a test pattern and the peer's ics_test checks every byte, a "
		       "per-byte cost at both ends that ics-user does not pay";
	switch (o.test) {
	case T_LAT:
		return "one write() and one blocking read() per round trip through /dev/ics";
	case T_STREAM:
		if (o.window)
			return "one write() per message through /dev/ics, -w messages in flight, "
			       "each answered with an empty message";
		return o.peer_kernel ? "one write() per message through /dev/ics, no window: the "
				       "peer's ics_test checks and counts each as it arrives" :
				       "one write() per message through /dev/ics, no window: the "
				       "server reads (in batches) and counts; throughput is what it read";
	case T_BISTREAM:
		return "one write() per message through /dev/ics, -w messages in flight, each "
		       "answered with as many bytes: both directions counted";
	default:
		return "open loop: requests leave on schedule through /dev/ics whether or not "
		       "answers came; each round trip counts from when its request was due";
	}
}

/*
 * --peer kernel: our node id for the pattern, and sizes the test service
 * answers (its header at least), unless it only sinks (-w 0 stream).
 */
static void check_peer_kernel(void)
{
	struct ics_instance in;
	struct icsnl nl;
	int i, err;

	for (i = 0; i < o.nsizes; i++)
		if (o.sizes[i] < TEST_HDR && !(o.test == T_STREAM && !o.window))
			icsnl_usage_err("--peer kernel: size %u is under the test service's header "
					"(%u bytes), which asks for an answer", o.sizes[i], TEST_HDR);
	if (icsnl_open(&nl))
		exit(1);
	err = ics_get_instance(&nl, &in);
	if (err) {
		icsnl_perror(&nl, "instance", err);
		exit(1);
	}
	icsnl_close(&nl);
	if (in.state != ICS_STATE_BOUND) {
		icsnl_err("not bound: no node id to send from");
		exit(1);
	}
	o.self = in.node_id;
}

static void output(const struct result *res, int n)
{
	const char *peer = o.kernel || o.peer_kernel ? "kernel" : "user";
	int i;

	if (o.json) {
		printf("{\"tool\":\"icsperf\",\"transport\":\"%s\",\"test\":\"%s\",\"peer\":\"%s\","
		       "\"node\":%u,\"channel\":\"%s\",\"window\":%u,\"streams\":%d,"
		       "\"cpu_method\":\"CPUs x wall - (idle+iowait+steal), /proc/stat\","
		       "\"notes\":\"%s\",\"results\":[",
		       transport(), test_names[o.test], peer, o.node, ics_channel_names[o.channel],
		       o.window, o.streams, notes());
		for (i = 0; i < n; i++) {
			const struct result *r = &res[i];

			printf("%s{\"size\":%u,", i ? "," : "", r->size);
			if (o.test == T_RRLOAD)
				printf("\"rate\":%u,", r->rate);
			printf("\"msgs\":%" PRIu64 ",\"secs\":%.6f,", r->msgs, r->secs);
			if (r->have_rtt)
				printf("\"p50_us\":%.3f,\"p90_us\":%.3f,\"p99_us\":%.3f,\"max_us\":%.3f,",
				       r->p50, r->p90, r->p99, r->max);
			else
				printf("\"p50_us\":null,\"p90_us\":null,\"p99_us\":null,\"max_us\":null,");
			printf("\"msgs_s\":%.3f,\"mb_s\":%.6f,", r->secs ? r->msgs / r->secs : 0,
			       r->secs ? r->bytes / r->secs / 1e6 : 0);
			if (r->cpu_local >= 0)
				printf("\"cpu_us_per_msg\":%.3f,", r->cpu_local);
			else
				printf("\"cpu_us_per_msg\":null,");
			if (r->cpu_remote >= 0)
				printf("\"cpu_us_per_msg_remote\":%.3f,", r->cpu_remote);
			else
				printf("\"cpu_us_per_msg_remote\":null,");
			printf("\"lost\":%" PRIu64 "}", r->lost);
		}
		printf("]}\n");
		return;
	}
	if (o.csv) {
		printf("transport,test,peer,size,rate,msgs,secs,p50_us,p90_us,p99_us,max_us,msgs_s,"
		       "mb_s,cpu_us_per_msg,cpu_us_per_msg_remote,lost\n");
		for (i = 0; i < n; i++) {
			const struct result *r = &res[i];

			printf("%s,%s,%s,%u,%u,%" PRIu64 ",%.6f,", transport(), test_names[o.test],
			       peer, r->size, r->rate, r->msgs, r->secs);
			if (r->have_rtt)
				printf("%.3f,%.3f,%.3f,%.3f,", r->p50, r->p90, r->p99, r->max);
			else
				printf(",,,,");
			printf("%.3f,%.6f,", r->secs ? r->msgs / r->secs : 0,
			       r->secs ? r->bytes / r->secs / 1e6 : 0);
			if (r->cpu_local >= 0)
				printf("%.3f", r->cpu_local);
			printf(",");
			if (r->cpu_remote >= 0)
				printf("%.3f", r->cpu_remote);
			printf(",%" PRIu64 "\n", r->lost);
		}
		return;
	}
	printf("icsperf %s to node %u, channel %s, %s (responder: %s), %.1f s per point\n",
	       test_names[o.test], o.node, ics_channel_names[o.channel],
	       o.kernel ? "kernel<->kernel" : "user<->user", peer, o.secs);
	printf("%9s %7s %9s %9s %9s %9s %9s %10s %9s %9s %9s\n", "size", o.test == T_RRLOAD ?
	       "rate" : "", "msgs", "p50 us", "p90 us", "p99 us", "max us", "msgs/s", "MB/s",
	       "cpu us/m", "rcpu us/m");
	for (i = 0; i < n; i++) {
		const struct result *r = &res[i];
		char p[4][16], c[2][16], rate[16] = "";
		int k;
		const double *pv[4] = { &r->p50, &r->p90, &r->p99, &r->max };

		for (k = 0; k < 4; k++)
			snprintf(p[k], sizeof(p[k]), r->have_rtt ? "%.1f" : "-", *pv[k]);
		snprintf(c[0], sizeof(c[0]), r->cpu_local >= 0 ? "%.1f" : "-", r->cpu_local);
		snprintf(c[1], sizeof(c[1]), r->cpu_remote >= 0 ? "%.1f" : "-", r->cpu_remote);
		if (o.test == T_RRLOAD)
			snprintf(rate, sizeof(rate), "%u", r->rate);
		printf("%9u %7s %9" PRIu64 " %9s %9s %9s %9s %10.0f %9.2f %9s %9s\n", r->size, rate,
		       r->msgs, p[0], p[1], p[2], p[3], r->secs ? r->msgs / r->secs : 0,
		       r->secs ? r->bytes / r->secs / 1e6 : 0, c[0], c[1]);
		if (r->lost)
			printf("%9s lost: %" PRIu64 " requests unanswered\n", "", r->lost);
	}
}

/* "64,1k,4096" or "64-128k" (powers of two). */
static int parse_list(const char *s, uint32_t *v, int max, bool sizes)
{
	char *copy = strdup(s), *tok, *save = NULL, *dash;
	uint32_t a, b;
	int n = 0;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		dash = sizes ? strchr(tok, '-') : NULL;
		if (dash)
			*dash = 0;
		if ((sizes ? icsnl_parse_size(tok, &a) : icsnl_parse_u32(tok, &a)) ||
		    (dash && icsnl_parse_size(dash + 1, &b)))
			icsnl_usage_err("bad %s: %s", sizes ? "size" : "rate", tok);
		if (!dash)
			b = a;
		if (sizes && b > ICS_MSG_MAX)
			icsnl_usage_err("size %u is over the largest message, %u", b, ICS_MSG_MAX);
		for (; a <= b && n < max; a = a ? a * 2 : 1) {
			v[n++] = a;
			if (a == b || a > UINT32_MAX / 2)
				break;
		}
	}
	free(copy);
	if (!n)
		icsnl_usage_err("empty list: %s", s);
	return n;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: icsperf [options] server\n"
		"       icsperf [options] lat|stream|bistream|rr-load NODE\n"
		"  -c CHANNEL    channel (default TEST)\n"
		"  -s SIZES      list (64,1k) or range (64-128k, powers of two); default 64-128k\n"
		"  -l SECS       duration per size or rate (default 1)\n"
		"  -D SECS       interim results every SECS\n"
		"  -w N          stream/bistream: messages in flight (default 16; 0: none, sink)\n"
		"  -P N          stream/bistream: N parallel streams, channels CHANNEL.. +N-1\n"
		"  -r RATES      rr-load: offered requests/s, list (default 100,200,400,...,6400)\n"
		"  -k            kernel<->kernel: ics_test.ko's generator (lat, stream; needs\n"
		"                CAP_NET_ADMIN, and ics_test attached to CHANNEL on NODE, and\n"
		"                here too for lat, whose answers it takes)\n"
		"  --peer user|kernel  the responder: an icsperf server (default) or NODE's\n"
		"                test service, ics_test.ko, attached to CHANNEL there\n"
		"  -j            JSON;  --csv  CSV\n");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "peer", required_argument, NULL, 'p' },
		{ "csv", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct result *res;
	struct icsnl nl;
	int fds[MAX_STREAMS], c, i, n, npoints;
	const char *cmd;
	uint32_t v;

	o.nsizes = parse_list("64-128k", o.sizes, 64, true);
	o.nrates = parse_list("100,200,400,800,1600,3200,6400", o.rates, 64, false);
	while ((c = getopt_long(argc, argv, "c:s:l:D:w:P:r:kjh", lopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o.channel = icsnl_parse_channel(optarg);
			if (o.channel < 0)
				icsnl_usage_err("unknown channel: %s", optarg);
			break;
		case 's':
			o.nsizes = parse_list(optarg, o.sizes, 64, true);
			break;
		case 'r':
			o.nrates = parse_list(optarg, o.rates, 64, false);
			break;
		case 'l':
		case 'D':
			if (sscanf(optarg, "%lf", c == 'l' ? &o.secs : &o.interim) != 1 ||
			    (c == 'l' ? o.secs : o.interim) < 0 || o.secs <= 0)
				icsnl_usage_err("bad duration: %s", optarg);
			break;
		case 'w':
			if (icsnl_parse_u32(optarg, &o.window) || o.window > 1 << 20)
				icsnl_usage_err("bad window: %s", optarg);
			break;
		case 'P':
			if (icsnl_parse_u32(optarg, &v) || v < 1 || v > MAX_STREAMS)
				icsnl_usage_err("-P takes 1..%d", MAX_STREAMS);
			o.streams = v;
			break;
		case 'k':
			o.kernel = true;
			break;
		case 'p':
			if (strcmp(optarg, "user") && strcmp(optarg, "kernel"))
				icsnl_usage_err("--peer takes user or kernel");
			o.peer_kernel = !strcmp(optarg, "kernel");
			break;
		case 'j':
			o.json = true;
			break;
		case 'C':
			o.csv = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	cmd = argv[optind++];
	if (o.channel + o.streams > ICS_CHANNELS)
		icsnl_usage_err("-P %d from channel %s runs past the last channel", o.streams,
				ics_channel_names[o.channel]);
	if (!strcmp(cmd, "server")) {
		if (optind != argc)
			icsnl_usage_err("server takes no operand");
		if (o.streams > 1) {	/* one process per channel */
			for (i = 1; i < o.streams; i++) {
				if (fork() == 0) {
					o.channel += i;
					return run_server();
				}
			}
		}
		return run_server();
	}
	for (i = 0; i < 4; i++)
		if (!strcmp(cmd, test_names[i]))
			break;
	if (i == 4)
		icsnl_usage_err("unknown test: %s (lat, stream, bistream, rr-load, server)", cmd);
	o.test = i;
	if (optind + 1 != argc)
		icsnl_usage_err("%s takes a node id", cmd);
	if (icsnl_parse_u32(argv[optind], &v) || v < 1 || v > ICS_MAX_NODES)
		icsnl_usage_err("node id out of range 1..%d: %s", ICS_MAX_NODES, argv[optind]);
	o.node = v;
	if (o.streams > 1 && (o.test == T_LAT || o.test == T_RRLOAD || o.kernel))
		icsnl_usage_err("-P is for user stream and bistream");
	if (o.kernel && (o.test == T_BISTREAM || o.test == T_RRLOAD))
		icsnl_usage_err("-k runs lat and stream");
	if (o.peer_kernel && !o.kernel)
		check_peer_kernel();
	if (o.kernel) {
		if (icsnl_open_test(&nl))
			return 1;
	} else {
		for (i = 0; i < o.streams; i++)
			fds[i] = dev_open(o.channel + i, 0);
	}
	signal(SIGPIPE, SIG_IGN);

	npoints = o.test == T_RRLOAD ? o.nsizes * o.nrates : o.nsizes;
	res = calloc(npoints, sizeof(*res));
	if (!res)
		die_errno("icsperf", ENOMEM);
	n = 0;
	for (i = 0; i < o.nsizes; i++) {
		if (o.test == T_RRLOAD) {
			int k;

			for (k = 0; k < o.nrates; k++)
				measure(fds, &nl, o.sizes[i], o.rates[k], &res[n++]);
		} else {
			measure(fds, &nl, o.sizes[i], 0, &res[n++]);
		}
	}
	output(res, n);
	if (o.kernel)
		icsnl_close(&nl);
	free(res);
	return icsnl_flush_stdout();
}
