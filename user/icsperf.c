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
 *
 * Round trips go into a histogram of fixed size (hist.h), so memory does
 * not grow with the length of a run; -D prints what moved in each interval.
 * The first SIGINT or SIGTERM ends the run where it is, and the results so
 * far are printed; a second one kills.
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
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <netlink/genl/genl.h>

#include "hist.h"
#include "icsnl.h"

#define PERF_MAGIC	0x69637371u	/* "icsq" */
#define MAX_STREAMS	ICS_CHANNELS
#define EXIT_STOPPED	130		/* ended by SIGINT or SIGTERM, results printed */

enum perf_kind { REQ_ECHO, REQ_ACK, REQ_SINK, REQ_CPU, REQ_COUNT };

struct perf_req {
	uint32_t magic;
	uint16_t kind;		/* enum perf_kind */
	uint16_t stream;	/* REQ_SINK: the stream it counts for, < MAX_STREAMS */
	uint32_t arg;		/* REQ_ECHO: the answer's length */
	uint32_t pad;
};

/*
 * REQ_COUNT: a request as long as this answer, its token after the
 * perf_req; the answer's layout.
 */
struct perf_count {
	uint32_t token;		/* the request's */
	uint32_t pad;
	uint64_t sunk[MAX_STREAMS];	/* REQ_SINK messages read since the server started */
};

enum test { T_LAT, T_STREAM, T_BISTREAM, T_RRLOAD };
static const char *const test_names[] = { "lat", "stream", "bistream", "rr-load" };

static struct {
	int channel;
	uint32_t sizes[64];
	int nsizes;
	uint32_t rates[64];
	int nrates;
	uint32_t rsize;		/* -R: the answers' size; 0: as the message's */
	double secs, interim;
	uint32_t window;
	int streams;
	int ci_level, iter_max, iter_min;	/* -I, -i; ci_level 0: one run */
	double ci_width;	/* -I: the interval's width, % of the mean */
	bool kernel, peer_kernel, json, csv;
	uint8_t node, self;	/* self: our node id, for the test service's pattern */
	enum test test;
} o = { .channel = ICS_CH_TEST, .secs = 1.0, .window = 16, .streams = 1 };

struct stream_res {
	uint64_t msgs;
	double secs;
	double p50, mean;	/* µs, < 0: no round trips */
};

struct result {
	uint32_t size, rate;
	int runs;
	uint64_t msgs, lost, bytes_out, bytes_in;
	double secs;
	struct hist *h;		/* a run's round trips; NULL: not measured */
	struct hist *sh[MAX_STREAMS];	/* -P lat: each stream's, over the runs */
	bool have_rtt;		/* a point's round trips, µs: */
	double p50, p90, p99, max, mean;
	double cpu_local, cpu_remote;	/* µs per message; < 0: not measured */
	struct stream_res st[MAX_STREAMS];	/* -P: by stream, over every run */
	double metric;		/* -I: the runs' mean of what the interval is about */
	double ci_half;		/* -I: its half width, % of the mean; < 0: not computed */
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

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		die_errno("memory", ENOMEM);
	return p;
}

/*
 * Signals. SIGINT and SIGTERM set stop_sig (once: SA_RESETHAND, a second
 * one kills) and interrupt the system call under way (no SA_RESTART),
 * which then returns -EINTR; the run ends there and reports. SIGALRM
 * bounds user_lat()'s blocking read.
 */
static volatile sig_atomic_t stop_sig, lat_expired;

/*
 * The server's file and a /dev/null one (-1 until it runs). A signal that
 * lands after the server checked stop_sig, before its read() blocks, would
 * not interrupt that read: the handler puts /dev/null in the file's place
 * instead (dup2 is async-signal-safe), so the read returns 0 and any
 * answer still to write goes nowhere, and the loop sees stop_sig.
 */
static int server_fd = -1, server_null = -1;

static void on_stop(int sig)
{
	stop_sig = sig;
	if (server_fd >= 0 && server_null >= 0) {
		int e = errno;

		dup2(server_null, server_fd);
		errno = e;
	}
}

static void lat_alarm(int sig)
{
	(void)sig;
	lat_expired = 1;
}

/* Threads other than the main one take none of them. */
static void signals_block(sigset_t *old)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGINT);
	sigaddset(&s, SIGTERM);
	sigaddset(&s, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &s, old);
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

/* user_lat()'s bound on a round trip, re-armed as the run goes. */
#define LAT_TIMEOUT_S	10

/*
 * One message: header then payload, one write. 0 or -errno: -EAGAIN on a
 * full queue, -EINTR when a stop signal interrupted it.
 */
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
		if (stop_sig)
			return -EINTR;
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

/*
 * Read the next message from the peer under test (o.node) into @buf (@cap
 * bytes); its header in @h. Messages from other nodes on the channel are
 * read and dropped: they are no answer of this run's. -ETIMEDOUT after
 * @timeout_ms (< 0: none), -EINTR when a stop signal interrupted it.
 */
static int msg_recv(int fd, struct ics_dev_hdr *h, void *buf, uint32_t cap, int timeout_ms)
{
	struct iovec iov[2] = { { h, sizeof(*h) }, { buf, cap } };
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t end = now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000;

	for (;;) {
		ssize_t n;

		if (timeout_ms >= 0) {
			uint64_t t = now_ns();
			int r = poll(&p, 1, t < end ? (int)((end - t + 999999) / 1000000) : 0);

			if (r == 0)
				return -ETIMEDOUT;
			if (r < 0 && errno != EINTR)
				return -errno;
			if (r < 0 && stop_sig)
				return -EINTR;
			if (r < 0)
				continue;
		}
		n = readv(fd, iov, 2);
		if (n >= 0 && h->node != o.node)
			continue;
		if (n >= 0)
			return 0;
		if (errno != EINTR)
			return -errno;
		if (lat_expired)
			return -ETIMEDOUT;
		if (stop_sig)
			return -EINTR;
	}
}

#define TEST_HDR	((uint32_t)sizeof(struct ics_test_hdr))
#define REQ_LEN		((uint32_t)sizeof(struct perf_req))

/* The answers' size to a message of @size bytes: -R, or as the message's. */
static uint32_t answer_size(uint32_t size)
{
	return o.rsize ? o.rsize : size;
}

/* The bytes counted in for each message of @size: a stream's answers carry none. */
static uint32_t in_size(uint32_t size)
{
	return o.test == T_STREAM ? 0 : answer_size(size);
}

/*
 * A send buffer of @size bytes (+ 8) for @channel; against the test
 * service, its pattern, so that ask() need only write the header.
 */
static uint8_t *send_buf(uint32_t size, int channel)
{
	uint8_t *buf = xcalloc(1, size + 8);

	if (o.peer_kernel)
		ics_test_msg_build(buf, o.self, channel, size, ICS_TEST_OP_DATA, 1, 0);
	return buf;
}

/*
 * What to ask of the responder, for a message of @size bytes in @buf (from
 * send_buf()), for stream @stream. The test service answers an ECHO with a
 * REPLY of arg bytes (at least its header) and nothing shorter than its
 * header.
 */
static void ask(uint8_t *buf, uint32_t size, enum perf_kind kind, int stream)
{
	struct perf_req r = { .magic = PERF_MAGIC, .kind = kind, .stream = stream,
			      .arg = answer_size(size) };

	if (o.peer_kernel) {
		if (size >= TEST_HDR)
			ics_test_hdr_put(buf, kind == REQ_SINK ? ICS_TEST_OP_SINK : ICS_TEST_OP_ECHO,
					 1, kind == REQ_ECHO ? r.arg : 0);
		return;
	}
	if (size >= REQ_LEN)
		memcpy(buf, &r, sizeof(r));
}

/* The server. */

struct server {
	int fd;
	struct perf_count count;
	uint8_t *zeros;		/* answers longer than their request: ICS_MSG_MAX, lazily */
};

/* Answer one request (@h, @payload) as the user responder. */
static void serve(struct server *s, const struct ics_dev_hdr *h, uint8_t *payload)
{
	struct perf_req r = { .kind = REQ_ECHO, .arg = h->len };
	const void *reply = payload;
	uint32_t len;
	double us;
	int err;

	if (h->len >= REQ_LEN)
		memcpy(&r, payload, sizeof(r));
	if (h->len >= REQ_LEN && r.magic != PERF_MAGIC) {
		r.kind = REQ_ECHO;
		r.arg = h->len;
	}
	switch (r.kind) {
	case REQ_SINK:
		if (r.stream < MAX_STREAMS)
			s->count.sunk[r.stream]++;
		return;
	case REQ_ACK:
		len = 0;
		break;
	case REQ_COUNT:
		if (h->len < sizeof(s->count))	/* no answer larger than its request */
			return;
		memcpy(&s->count.token, payload + REQ_LEN, sizeof(s->count.token));
		reply = &s->count;
		len = sizeof(s->count);
		break;
	case REQ_CPU:
		us = cpu_busy_us();
		reply = &us;
		len = sizeof(us);
		break;
	default:
		len = r.arg > ICS_MSG_MAX ? h->len : r.arg;
		if (len > h->len) {
			if (!s->zeros)
				s->zeros = xcalloc(1, ICS_MSG_MAX);
			memcpy(s->zeros, payload, h->len);
			reply = s->zeros;
		}
	}
	err = msg_send(s->fd, h->node, o.channel, 0, reply, len);
	if (err && err != -EHOSTDOWN && err != -EHOSTUNREACH && !(err == -EINTR && stop_sig))
		die_errno("write", -err);
}

/*
 * The user responder: echo, ack, sink or report its CPU time, until a
 * signal (on_stop() ends a read it would otherwise miss). It reads in
 * batches (ICS_DEV_BIND_BATCH): every message queued, up to the buffer,
 * in one read().
 */
static int run_server(void)
{
	size_t cap = sizeof(struct ics_dev_hdr) + ICS_MSG_MAX + (1 << 20);
	uint8_t *buf = xcalloc(1, cap);
	struct server s = { .fd = dev_open(o.channel, ICS_DEV_BIND_BATCH) };
	struct ics_dev_hdr h;
	uint64_t off;
	ssize_t n;

	server_null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (server_null < 0)
		die_errno("/dev/null", errno);
	server_fd = s.fd;
	if (!o.json)
		printf("icsperf server: channel %s, waiting for messages\n",
		       ics_channel_names[o.channel]);
	fflush(stdout);
	while (!stop_sig) {
		n = read(s.fd, buf, cap);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die_errno("read", errno);
		for (off = 0; off < (uint64_t)n && !stop_sig; off = ICS_DEV_NEXT(off, h.len)) {
			memcpy(&h, buf + off, sizeof(h));
			serve(&s, &h, buf + off + sizeof(h));
		}
	}
	return 0;
}

/* The responder's CPU time, µs, or -1 when it cannot say (the test service). */
static double remote_cpu(int fd)
{
	struct ics_dev_hdr h;
	uint8_t buf[64];
	double us;

	if (o.peer_kernel || stop_sig)
		return -1;
	ask(buf, REQ_LEN, REQ_CPU, 0);
	if (msg_send(fd, o.node, o.channel, 0, buf, REQ_LEN) ||
	    msg_recv(fd, &h, buf, sizeof(buf), 5000) || h.len != sizeof(us))
		return -1;
	memcpy(&us, buf, sizeof(us));
	return us;
}

/*
 * -D: what moved in each interval of o.interim seconds, with the time of
 * day, as text or (-j) one JSON line each.
 */
struct meter {
	uint64_t t0, last, next;
	uint64_t msgs, bytes;		/* at the last report */
	uint64_t smsgs[MAX_STREAMS];
	struct hist *ih;		/* round trips since the last report; NULL: none */
};

static void meter_start(struct meter *m, bool rtt)
{
	memset(m, 0, sizeof(*m));
	m->t0 = m->last = now_ns();
	m->next = m->t0 + o.interim * 1e9;
	if (rtt && o.interim)
		m->ih = xcalloc(1, sizeof(*m->ih));
}

static void meter_end(struct meter *m)
{
	free(m->ih);
	m->ih = NULL;
}

static void wall_clock(char *buf, size_t len)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	icsnl_fmt_iso8601(buf, len, &ts, 3);
}

static void json_us(struct json *j, const char *key, bool have, double us)
{
	if (have)
		json_fixed(j, key, us, 3);
	else
		json_null(j, key);
}

/*
 * If an interval ended, report it: @msgs and @bytes are the run's totals so
 * far, @smsgs each stream's (NULL: one stream). @rate: rr-load's.
 */
static void meter_tick(struct meter *m, uint32_t size, uint32_t rate, uint64_t msgs,
		       uint64_t bytes, const uint64_t *smsgs)
{
	uint64_t t;
	double s, p50 = 0, p99 = 0;
	bool rtt = m->ih && m->ih->n;
	char when[48];
	int i;

	if (!o.interim)		/* no clock read per message without -D */
		return;
	t = now_ns();
	if (t < m->next)
		return;
	s = (t - m->last) / 1e9;
	m->next += o.interim * 1e9;
	if (m->next < t)	/* a late tick: the next interval is whole */
		m->next = t + o.interim * 1e9;
	wall_clock(when, sizeof(when));
	if (rtt) {
		p50 = hist_quantile(m->ih, 0.5) / 1e3;
		p99 = hist_quantile(m->ih, 0.99) / 1e3;
	}
	if (o.json) {
		struct json j;

		json_init(&j, stdout, false);
		json_obj_begin(&j, NULL);
		json_bool(&j, "interim", true);
		json_str(&j, "time", when);
		json_fixed(&j, "elapsed", (t - m->t0) / 1e9, 3);
		json_u64(&j, "size", size);
		if (o.test == T_RRLOAD)
			json_u64(&j, "rate", rate);
		json_fixed(&j, "secs", s, 6);
		json_u64(&j, "msgs", msgs - m->msgs);
		json_fixed(&j, "msgs_s", (msgs - m->msgs) / s, 3);
		json_fixed(&j, "mb_s", (bytes - m->bytes) / s / 1e6, 6);
		json_us(&j, "p50_us", rtt, p50);
		json_us(&j, "p99_us", rtt, p99);
		if (smsgs) {
			json_arr_begin(&j, "stream_msgs");
			for (i = 0; i < o.streams; i++)
				json_u64(&j, NULL, smsgs[i] - m->smsgs[i]);
			json_arr_end(&j);
		}
		json_obj_end(&j);
		fflush(stdout);
	} else {
		FILE *f = o.csv ? stderr : stdout;

		fprintf(f, "%s %8.1f s  size %u", when, (t - m->t0) / 1e9, size);
		if (o.test == T_RRLOAD)
			fprintf(f, "  rate %u", rate);
		fprintf(f, "  %.0f msgs/s  %.2f MB/s", (msgs - m->msgs) / s,
			(bytes - m->bytes) / s / 1e6);
		if (rtt)
			fprintf(f, "  p50 %.1f us  p99 %.1f us", p50, p99);
		fputc('\n', f);
		fflush(f);
	}
	m->last = t;
	m->msgs = msgs;
	m->bytes = bytes;
	if (smsgs)
		memcpy(m->smsgs, smsgs, sizeof(m->smsgs));
	if (m->ih)
		hist_reset(m->ih);
}

static void rtt_add(struct hist *h, struct meter *m, uint64_t ns)
{
	hist_add(h, ns);
	if (m->ih)
		hist_add(m->ih, ns);
}

/*
 * Synchronous round trips for o.secs: a blocking write, a blocking read
 * into @rbuf (ICS_MSG_MAX bytes), as a TCP client would, rather than
 * poll() then read(): one system call fewer per round trip. Its bound on
 * a round trip is an alarm, re-armed as the run goes: a read it
 * interrupts returns -ETIMEDOUT.
 */
static void user_lat(int fd, uint8_t *buf, uint8_t *rbuf, uint32_t size, struct result *r)
{
	uint64_t n = 0, t, armed = 0, t0 = now_ns(), end = t0 + o.secs * 1e9;
	struct sigaction sa = { .sa_handler = lat_alarm }, old;	/* no SA_RESTART */
	uint32_t rsize = answer_size(size);
	struct ics_dev_hdr h;
	struct meter m;
	int err;

	meter_start(&m, true);
	lat_expired = 0;
	sigaction(SIGALRM, &sa, &old);
	ask(buf, size, REQ_ECHO, 0);
	while (!stop_sig) {
		t = now_ns();
		if (t - armed > 1000000000ull) {	/* a system call a second */
			alarm(LAT_TIMEOUT_S);
			lat_expired = 0;
			armed = t;
		}
		err = msg_try_send(fd, o.node, o.channel, 0, buf, size);
		if (!err)
			err = msg_recv(fd, &h, rbuf, ICS_MSG_MAX, -1);
		if (err == -EINTR)	/* stopped: an answer still coming is not read */
			break;
		if (err == -ETIMEDOUT) {
			icsnl_err("round trip: no answer from node %u in %d s", o.node,
				  LAT_TIMEOUT_S);
			exit(1);
		}
		if (err)
			die_errno("round trip", -err);
		rtt_add(r->h, &m, now_ns() - t);
		n++;
		meter_tick(&m, size, 0, n, n * (size + rsize), NULL);
		if (now_ns() >= end)
			break;
	}
	alarm(0);
	sigaction(SIGALRM, &old, NULL);
	meter_end(&m);
	r->secs = (now_ns() - t0) / 1e9;
	r->msgs = n;
	r->bytes_out = n * size;
	r->bytes_in = n * rsize;
}

/*
 * The user server's counts of messages it sank (read and dropped), by
 * stream, in @sunk. A server slower than the wire pauses the channel (flow
 * control) and loses nothing; the request is still asked again every 5 s
 * (a server that was restarted lost its count's asker), up to @budget_s,
 * and an answer to any of the attempts will do (the server's counts are
 * cumulative and each answer follows every sink sent before its request,
 * in order on the channel). Answers to the other attempts are read and
 * dropped, so they cannot pass for a later answer.
 */
static int sink_count(int fd, int channel, uint8_t *rbuf, int budget_s, uint64_t *sunk)
{
	static uint32_t token;
	struct perf_req r = { .magic = PERF_MAGIC, .kind = REQ_COUNT };
	uint32_t first = token + 1, got = 0;
	uint8_t q[sizeof(struct perf_count)] = { 0 };
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
	memcpy(sunk, c.sunk, sizeof(c.sunk));
	/* Later attempts' answers, unless those requests were dropped. */
	while (got != token && !msg_recv(fd, &h, rbuf, ICS_MSG_MAX, 2000)) {
		memcpy(&c, rbuf, sizeof(c));
		if (h.len == sizeof(c))
			got = c.token;
	}
	return 0;
}

/*
 * The closing exchange of a -w 0 stream: each stream's messages the peer
 * took, in @done (@sent: each stream's sent). After a stop signal, a
 * peer that does not answer leaves them all unknown: 0, and lost.
 */
static void sink_close(int fd, int channel, uint8_t *rbuf, const uint64_t *sunk0,
		       const uint64_t *sent, uint64_t *done, uint64_t *lost)
{
	uint64_t sunk[MAX_STREAMS];
	struct ics_dev_hdr h;
	uint8_t *buf;
	int err, i;

	if (!o.peer_kernel) {
		/* Behind everything queued (up to chan_queue_max): up to 60 s. */
		err = sink_count(fd, channel, rbuf, 60, sunk);
		for (i = 0; i < o.streams && !err; i++)
			done[i] = sunk[i] - sunk0[i];
	} else {
		/*
		 * The test service checks and counts as messages arrive and
		 * drops none: one round trip, which comes after every sink (in
		 * order).
		 */
		buf = send_buf(TEST_HDR, channel);
		ask(buf, TEST_HDR, REQ_ACK, 0);
		err = msg_send(fd, o.node, channel, 0, buf, TEST_HDR);
		if (!err)
			err = msg_recv(fd, &h, rbuf, ICS_MSG_MAX, 60000);
		free(buf);
		for (i = 0; i < o.streams && !err; i++)
			done[i] = sent[i];
	}
	if (err && !stop_sig)
		die_errno(o.peer_kernel ? "stream" : "stream: the server's count", -err);
	for (i = 0; i < o.streams && err; i++) {
		done[i] = 0;
		*lost += sent[i];
	}
}

/*
 * One stream message; while the queue is full, take the answers to the
 * @out in flight as they come (each one done).
 */
static int stream_send(int fd, int channel, uint8_t *buf, uint32_t size, enum perf_kind kind,
		       uint8_t *rbuf, uint32_t *out, uint64_t *done)
{
	struct pollfd p = { .fd = fd };
	struct ics_dev_hdr h;
	int err;

	ask(buf, size, kind, 0);
	while ((err = msg_try_send(fd, o.node, channel, 0, buf, size)) == -EAGAIN) {
		p.events = POLLOUT | (o.window && *out ? POLLIN : 0);
		if (poll(&p, 1, 60000) == 0)
			return -ETIMEDOUT;
		if (stop_sig)
			return -EINTR;
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

/*
 * A window of o.window messages in flight, each answered (stream: with
 * 0 bytes; bistream: with -R bytes, as many as it carried by default).
 * o.window 0: no window, the peer sinks every message; see sink_close().
 */
static void user_stream(int fd, int channel, uint8_t *buf, uint8_t *rbuf, uint32_t size,
			struct result *r)
{
	bool bi = o.test == T_BISTREAM;
	enum perf_kind kind = !o.window ? REQ_SINK : bi ? REQ_ECHO : REQ_ACK;
	uint64_t t0, end, sent = 0, done = 0, sunk0[MAX_STREAMS] = { 0 };
	uint32_t rsize = in_size(size);
	int fl = fcntl(fd, F_GETFL), err;
	uint32_t out = 0;
	struct ics_dev_hdr h;
	struct meter m;

	/*
	 * Writes do not block: while the queue is full the answers that come
	 * are taken. A blocked writer would read nothing, and with flow
	 * control a responder whose answers pile up here is held back, stops
	 * reading, and holds us back in turn: a deadlock, with large messages.
	 */
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		die_errno("stream: fcntl", errno);
	if (!o.window && !o.peer_kernel) {
		err = sink_count(fd, channel, rbuf, 60, sunk0);
		if (err == -EINTR && stop_sig)
			goto out;
		if (err)
			die_errno("stream: the server's count", -err);
	}
	meter_start(&m, false);
	t0 = m.t0;
	end = t0 + o.secs * 1e9;
	while (now_ns() < end && !stop_sig) {
		if (o.window && out == o.window) {
			err = msg_recv(fd, &h, rbuf, ICS_MSG_MAX, 10000);
			if (err == -EINTR)
				break;
			if (err)
				die_errno("stream", -err);
			out--;
			done++;
			continue;
		}
		err = stream_send(fd, channel, buf, size, kind, rbuf, &out, &done);
		if (err == -EINTR)
			break;
		if (err)
			die_errno("stream", -err);
		sent++;
		if (o.window)
			out++;
		meter_tick(&m, size, 0, o.window ? done : sent,
			   (o.window ? done : sent) * (size + rsize), NULL);
	}
	meter_end(&m);
	if (!o.window)
		sink_close(fd, channel, rbuf, sunk0, &sent, &done, &r->lost);
	/*
	 * The answers still to come; with a window they come within the
	 * responder's reach of the queue, 10 s (after a stop signal, those
	 * that do not are lost).
	 */
	for (; out; out--) {
		err = msg_recv(fd, &h, rbuf, ICS_MSG_MAX, 10000);
		if (err && stop_sig) {
			r->lost += out;
			break;
		}
		if (err)
			die_errno("stream", -err);
		done++;
	}
	r->secs = (now_ns() - t0) / 1e9;
	r->msgs = done;
	r->bytes_out = done * size;
	r->bytes_in = done * rsize;
out:
	fcntl(fd, F_SETFL, fl);
}

struct rrload {
	int fd;			/* non-blocking */
	uint8_t *buf;
	uint32_t size;
	uint64_t t0, gap, n;	/* request i is due at t0 + i * gap */
	volatile uint64_t sent;
	volatile bool stop, exited;
};

/*
 * Open loop: requests leave on schedule whether or not answers came, and
 * each round trip counts from when its request was due.
 */
static void *rrload_sender(void *arg)
{
	struct rrload *l = arg;
	struct pollfd p = { .fd = l->fd, .events = POLLOUT };
	struct timespec ts;
	uint64_t i, at;
	int err;

	ask(l->buf, l->size, REQ_ECHO, 0);
	for (i = 0; i < l->n && !l->stop; i++) {
		at = l->t0 + i * l->gap;
		ts.tv_sec = at / 1000000000ull;
		ts.tv_nsec = at % 1000000000ull;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		if (l->stop)
			break;
		/* counted before it leaves: its answer may come before we return */
		__atomic_store_n(&l->sent, i + 1, __ATOMIC_RELEASE);
		while ((err = msg_try_send(l->fd, o.node, o.channel, 0, l->buf, l->size)) ==
		       -EAGAIN && !l->stop)
			poll(&p, 1, 100);
		if (err) {
			__atomic_store_n(&l->sent, i, __ATOMIC_RELEASE);
			break;
		}
	}
	__atomic_store_n(&l->exited, true, __ATOMIC_RELEASE);
	return NULL;
}

static void user_rrload(int fd, uint8_t *buf, uint8_t *rbuf, uint32_t size, uint32_t rate,
			struct result *r)
{
	struct rrload l = { .fd = fd, .buf = buf, .size = size };
	uint32_t rsize = answer_size(size);
	int fl = fcntl(fd, F_GETFL), err;
	uint64_t got = 0, sent;
	struct ics_dev_hdr h;
	struct meter m;
	sigset_t old;
	pthread_t th;

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		die_errno("rr-load: fcntl", errno);
	l.gap = 1e9 / (rate ? rate : 1);
	l.n = (uint64_t)(rate * o.secs);
	if (!l.n)
		l.n = 1;
	meter_start(&m, true);
	l.t0 = m.t0;
	signals_block(&old);
	err = pthread_create(&th, NULL, rrload_sender, &l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		die_errno("rr-load", err);
	/*
	 * Answers come in order (one channel, one peer): the i-th is request
	 * i's. Stopped, the answers to what was sent are still taken.
	 */
	while (got < l.n) {
		err = msg_recv(fd, &h, rbuf, ICS_MSG_MAX, 2000);
		if (err == -EINTR && !l.stop) {
			l.stop = true;
			pthread_join(th, NULL);
			l.n = l.sent;
			continue;
		}
		if (err)
			break;
		/* the answer overtook the sender's note: nanoseconds */
		while (__atomic_load_n(&l.sent, __ATOMIC_ACQUIRE) <= got &&
		       !__atomic_load_n(&l.exited, __ATOMIC_ACQUIRE))
			;
		if (l.sent <= got)	/* an answer to nothing sent: not ours */
			continue;
		rtt_add(r->h, &m, now_ns() - (l.t0 + got * l.gap));
		got++;
		meter_tick(&m, size, rate, got, got * (size + rsize), NULL);
	}
	if (!l.stop) {
		l.stop = true;
		pthread_join(th, NULL);
	}
	sent = l.sent;
	meter_end(&m);
	r->rate = rate;
	r->secs = (now_ns() - l.t0) / 1e9;
	r->msgs = got;
	r->bytes_out = got * size;
	r->bytes_in = got * rsize;
	r->lost = sent - got;
	fcntl(fd, F_SETFL, fl);
}

/*
 * -P N: N equal streams on one channel, one file, one thread each. Each
 * keeps its window (lat: 1) of requests in flight; the main thread reads
 * every answer and, as a channel delivers in order and the responder
 * answers in order, the oldest request in flight is the one answered.
 * Writers and reader share the queue of requests in flight under lock;
 * a write and its entry in that queue are made under it together, so the
 * queue's order is the wire's.
 */
struct par_stream {
	struct par *p;
	int idx;
	pthread_cond_t room;
	uint32_t out;		/* in flight */
	uint64_t sent, done;
	struct hist *h;		/* its round trips (lat) */
};

struct par {
	pthread_mutex_t lock;
	int fd;
	uint32_t size, window;
	enum perf_kind kind;
	bool stop;		/* no more requests */
	int err;		/* a writer's, -errno */
	struct {
		uint8_t s;
		uint64_t t;
	} *fifo;
	uint32_t cap, head, n;
	struct par_stream st[MAX_STREAMS];
};

static void *par_writer(void *arg)
{
	struct par_stream *s = arg;
	struct par *p = s->p;
	uint8_t *buf = send_buf(p->size, o.channel);
	struct pollfd pf = { .fd = p->fd, .events = POLLOUT };
	uint64_t t;
	int err;

	ask(buf, p->size, p->kind, s->idx);
	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		if (p->window && s->out == p->window) {
			pthread_cond_wait(&s->room, &p->lock);
			continue;
		}
		t = now_ns();
		err = msg_try_send(p->fd, o.node, o.channel, 0, buf, p->size);
		if (err == -EAGAIN) {
			pthread_mutex_unlock(&p->lock);
			poll(&pf, 1, 100);
			pthread_mutex_lock(&p->lock);
			continue;
		}
		if (err) {
			p->err = p->err ?: err;
			p->stop = true;
			break;
		}
		s->sent++;
		if (p->window) {
			p->fifo[(p->head + p->n) % p->cap].s = s->idx;
			p->fifo[(p->head + p->n++) % p->cap].t = t;
			s->out++;
		}
		/* the others' turn */
		pthread_mutex_unlock(&p->lock);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	free(buf);
	return NULL;
}

static void par_stop(struct par *p)
{
	int i;

	pthread_mutex_lock(&p->lock);
	p->stop = true;
	for (i = 0; i < o.streams; i++)
		pthread_cond_signal(&p->st[i].room);
	pthread_mutex_unlock(&p->lock);
}

static void par_run(int fd, uint8_t *rbuf, uint32_t size, struct result *r)
{
	bool lat = o.test == T_LAT, bi = o.test == T_BISTREAM;
	struct par p = { .fd = fd, .size = size, .window = lat ? 1 : o.window };
	uint32_t rsize = in_size(size);
	uint64_t sunk0[MAX_STREAMS] = { 0 }, done[MAX_STREAMS] = { 0 }, sent[MAX_STREAMS];
	uint64_t total = 0, t0, stopped = 0, t;
	int fl = fcntl(fd, F_GETFL), err, i, s;
	pthread_t th[MAX_STREAMS];
	struct ics_dev_hdr h;
	struct meter m;
	sigset_t old;

	p.kind = lat || bi ? REQ_ECHO : o.window ? REQ_ACK : REQ_SINK;
	p.cap = o.streams * (p.window ? p.window : 1);
	p.fifo = xcalloc(p.cap, sizeof(*p.fifo));
	pthread_mutex_init(&p.lock, NULL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		die_errno("stream: fcntl", errno);
	if (!p.window && !o.peer_kernel) {
		err = sink_count(fd, o.channel, rbuf, 60, sunk0);
		if (err == -EINTR && stop_sig)
			goto out;
		if (err)
			die_errno("stream: the server's count", -err);
	}
	meter_start(&m, lat);
	t0 = m.t0;
	signals_block(&old);
	for (i = 0; i < o.streams; i++) {
		p.st[i].p = &p;
		p.st[i].idx = i;
		p.st[i].h = r->sh[i];
		pthread_cond_init(&p.st[i].room, NULL);
		err = pthread_create(&th[i], NULL, par_writer, &p.st[i]);
		if (err)
			die_errno("-P", err);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (;;) {
		t = now_ns();
		if (!stopped && (t >= t0 + o.secs * 1e9 || stop_sig)) {
			par_stop(&p);
			stopped = t;
		}
		pthread_mutex_lock(&p.lock);
		i = p.n;
		if (p.stop && !stopped) {	/* a writer failed */
			pthread_mutex_unlock(&p.lock);
			break;
		}
		pthread_mutex_unlock(&p.lock);
		if (stopped && !i)
			break;
		if (!p.window) {
			poll(NULL, 0, 100);
			pthread_mutex_lock(&p.lock);
			for (s = 0, total = 0; s < o.streams; s++)
				total += done[s] = p.st[s].sent;
			pthread_mutex_unlock(&p.lock);
			meter_tick(&m, size, 0, total, total * size, done);
			continue;
		}
		err = msg_recv(fd, &h, rbuf, ICS_MSG_MAX, 100);
		if (err == -ETIMEDOUT || err == -EINTR) {
			/* the answers still to come: 10 s, as a single stream's */
			if (stopped && t - stopped > 10000000000ull) {
				if (!stop_sig)
					die_errno("-P: answers", ETIMEDOUT);
				r->lost += i;
				break;
			}
			continue;
		}
		if (err)
			die_errno("-P", -err);
		t = now_ns();
		pthread_mutex_lock(&p.lock);
		if (!p.n) {
			pthread_mutex_unlock(&p.lock);
			icsnl_err("-P: an answer to no request in flight");
			exit(1);
		}
		s = p.fifo[p.head].s;
		if (lat) {
			rtt_add(p.st[s].h, &m, t - p.fifo[p.head].t);
			hist_add(r->h, t - p.fifo[p.head].t);
		}
		p.head = (p.head + 1) % p.cap;
		p.n--;
		p.st[s].out--;
		p.st[s].done++;
		pthread_cond_signal(&p.st[s].room);
		for (i = 0, total = 0; i < o.streams; i++)
			total += done[i] = p.st[i].done;
		pthread_mutex_unlock(&p.lock);
		meter_tick(&m, size, 0, total, total * (size + rsize), done);
	}
	par_stop(&p);
	for (i = 0; i < o.streams; i++) {
		pthread_join(th[i], NULL);
		sent[i] = p.st[i].sent;
		done[i] = p.st[i].done;
	}
	meter_end(&m);
	if (p.err)
		die_errno("-P", -p.err);
	if (!p.window)
		sink_close(fd, o.channel, rbuf, sunk0, sent, done, &r->lost);
	r->secs = (now_ns() - t0) / 1e9;
	for (i = 0; i < o.streams; i++) {
		r->st[i].msgs = done[i];
		r->st[i].secs = r->secs;
		r->msgs += done[i];
	}
	r->bytes_out = r->msgs * size;
	r->bytes_in = r->msgs * rsize;
out:
	free(p.fifo);
	fcntl(fd, F_SETFL, fl);
}

/* Kernel<->kernel: ics_test's generator, over netlink. */
struct ktest {
	struct ics_test_result t;
	struct hist *h;		/* the run's round trips, from ICS_RTT_A_HIST */
	bool bad_hist;
};

static int ktest_parse(struct nlattr **tb, void *arg)
{
	static const struct nla_policy pol[ICS_RTT_A_MAX + 1] = {
		[ICS_RTT_A_HIST] = { .type = NLA_UNSPEC },
	};
	struct nlattr *t[ICS_RTT_A_MAX + 1];
	struct ktest *k = arg;
	int err = ics_test_parse(tb, &k->t);

	if (err || !tb[ICS_TEST_A_RTT] || !k->h)
		return err;
	if (nla_parse_nested(t, ICS_RTT_A_MAX, tb[ICS_TEST_A_RTT], (struct nla_policy *)pol) < 0)
		return -EPROTO;
	/* an older ics_test.ko sends none: no percentiles then */
	if (!t[ICS_RTT_A_HIST] ||
	    hist_add_pairs(k->h, nla_data(t[ICS_RTT_A_HIST]), nla_len(t[ICS_RTT_A_HIST])) ||
	    k->h->n != k->t.rtt_count)
		k->bad_hist = k->t.rtt_count > 0;
	/* min and max exact, from the kernel */
	if (k->h->n && k->t.rtt_count) {
		k->h->min = k->t.rtt_ns[ICS_RTT_MIN];
		k->h->max = k->t.rtt_ns[ICS_RTT_MAX];
		k->h->sum = k->t.rtt_ns[ICS_RTT_MEAN] * k->t.rtt_count;
	}
	return 0;
}

/* One generator run; 0, -EINTR if a stop signal ended it (@k partial), or -errno. */
static int kernel_test(struct icsnl *nl, uint32_t size, uint32_t count, uint32_t flags,
		       uint32_t timeout_ms, struct ktest *k)
{
	struct nl_msg *msg = icsnl_msg(nl, ICS_TEST_CMD_SEND, 0);
	int err;

	if (!msg || nla_put_u32(msg, ICS_TEST_A_NODE, o.node) ||
	    nla_put_u32(msg, ICS_TEST_A_CHANNEL, o.channel) ||
	    nla_put_u32(msg, ICS_TEST_A_SIZE, size) || nla_put_u32(msg, ICS_TEST_A_COUNT, count) ||
	    nla_put_u32(msg, ICS_TEST_A_FLAGS, flags) ||
	    nla_put_u32(msg, ICS_TEST_A_TIMEOUT_MS, timeout_ms))
		die_errno("netlink", ENOMEM);
	memset(&k->t, 0, sizeof(k->t));
	k->bad_hist = false;
	if (k->h)
		hist_reset(k->h);
	err = icsnl_do(nl, msg, ktest_parse, k);
	if (!err && k->t.error)
		err = -k->t.error;
	if (err == -EINTR && stop_sig)
		return -EINTR;
	if (!err && k->bad_hist) {
		icsnl_err("kernel test: no round-trip histogram from ics_test.ko, or a wrong one "
			  "(an ics_test.ko older than icsperf?)");
		exit(1);
	}
	if (!err && !ics_test_ok(&k->t, count))
		err = -EIO;
	return err;
}

static void kernel_fail(struct icsnl *nl, int err)
{
	icsnl_perror(nl, "kernel test", err);
	exit(1);
}

/*
 * The generator runs in chunks of about a second (-D: of the interval),
 * each sized from the last one's pace, until o.secs have passed: no
 * count to reach, and a stop signal ends the chunk under way. The first,
 * short, chunk finds the pace and is not counted.
 */
static void kernel_run(struct icsnl *nl, uint32_t size, struct result *r)
{
	bool lat = o.test == T_LAT;
	uint32_t flags = lat ? ICS_TEST_F_PING : ICS_TEST_F_WAIT, n;
	double per, chunk = o.interim ? o.interim : 1.0, left;
	struct ktest k = { .h = lat ? xcalloc(1, sizeof(struct hist)) : NULL };
	uint64_t t0, t, max = lat ? ICS_TEST_PING_MAX : UINT32_MAX;
	struct meter m;
	int err;

	n = lat ? 20 : 64;
	t0 = now_ns();
	err = kernel_test(nl, size, n, flags, 10000, &k);
	if (err && err != -EINTR)
		kernel_fail(nl, err);
	per = (now_ns() - t0) / 1e9 / n;
	meter_start(&m, lat);
	t0 = m.t0;
	for (t = t0; !stop_sig && (left = o.secs - (t - t0) / 1e9) > 0; t = now_ns()) {
		n = per > 0 ? (uint32_t)fmin(fmin(left, chunk) / per, max) : 1000;
		if (n < 1)
			n = 1;
		err = kernel_test(nl, size, n, flags, 10000, &k);
		if (err && err != -EINTR)
			kernel_fail(nl, err);
		r->msgs += k.t.done;
		if (lat) {
			hist_merge(r->h, k.h);
			if (m.ih)
				hist_merge(m.ih, k.h);
		}
		if (k.t.done)
			per = (now_ns() - t) / 1e9 / k.t.done;
		meter_tick(&m, size, 0, r->msgs, r->msgs * size * (lat ? 2 : 1), NULL);
		if (err)
			break;
	}
	meter_end(&m);
	free(k.h);
	r->secs = (now_ns() - t0) / 1e9;
	r->bytes_out = r->msgs * size;
	r->bytes_in = lat ? r->msgs * size : 0;
}

/*
 * Before measuring, one round trip with a second to answer: a missing
 * responder is told in one line, with what to do.
 */
static void probe(int fd, struct icsnl *nl)
{
	uint32_t size = o.peer_kernel ? TEST_HDR : REQ_LEN;
	uint8_t *buf, rbuf[256];
	struct ics_dev_hdr h;
	struct ktest k = { 0 };
	int err;

	if (o.kernel) {
		if (o.test != T_LAT)	/* a stream needs no answers */
			return;
		err = kernel_test(nl, TEST_HDR, 1, ICS_TEST_F_PING, 1000, &k);
		if (err == -ETIMEDOUT) {
			icsnl_err("no answer from node %u's test service on %s in 1 s (icsctl test "
				  "attach %s, there and here)", o.node, ics_channel_names[o.channel],
				  ics_channel_names[o.channel]);
			exit(1);
		}
		if (err && err != -EINTR)
			kernel_fail(nl, err);
		return;
	}
	buf = send_buf(size, o.channel);
	ask(buf, size, REQ_ECHO, 0);
	if (o.peer_kernel)
		ics_test_hdr_put(buf, ICS_TEST_OP_ECHO, 1, TEST_HDR);
	else
		((struct perf_req *)buf)->arg = size;
	err = msg_send(fd, o.node, o.channel, 0, buf, size);
	free(buf);
	if (err == -EHOSTUNREACH || err == -EHOSTDOWN) {
		icsnl_err("node %u is not a member now (icstat members)", o.node);
		exit(1);
	}
	if (err == -ENOTCONN) {
		icsnl_err("ics is not bound to a NIC here (icsctl bind)");
		exit(1);
	}
	if (err == -EINVAL) {
		icsnl_err("node %u is this member", o.node);
		exit(1);
	}
	if (!err)
		err = msg_recv(fd, &h, rbuf, sizeof(rbuf), 1000);
	if (err == -ETIMEDOUT && o.peer_kernel) {
		icsnl_err("no answer from node %u's test service on %s in 1 s (icsctl test attach "
			  "%s there)", o.node, ics_channel_names[o.channel],
			  ics_channel_names[o.channel]);
		exit(1);
	}
	if (err == -ETIMEDOUT) {
		icsnl_err("no icsperf server answers on node %u, channel %s, in 1 s (start one "
			  "there: icsperf server -c %s; or use its test service: --peer kernel)",
			  o.node, ics_channel_names[o.channel], ics_channel_names[o.channel]);
		exit(1);
	}
	if (err == -EINTR)
		exit(EXIT_STOPPED);
	if (err)
		die_errno("probe", -err);
}

/* One run of a point. */
static void measure(int fd, struct icsnl *nl, uint32_t size, uint32_t rate, struct result *r)
{
	double c0 = cpu_busy_us(), rc0 = -1, rc1;
	uint8_t *buf, *rbuf;

	r->size = size;
	r->rate = rate;
	if (!o.kernel)
		rc0 = remote_cpu(fd);
	if (o.kernel) {
		kernel_run(nl, size, r);
	} else if (o.streams > 1) {
		rbuf = xcalloc(1, ICS_MSG_MAX);
		par_run(fd, rbuf, size, r);
		free(rbuf);
	} else {
		buf = send_buf(size, o.channel);
		rbuf = xcalloc(1, ICS_MSG_MAX);
		if (o.test == T_LAT)
			user_lat(fd, buf, rbuf, size, r);
		else if (o.test == T_RRLOAD)
			user_rrload(fd, buf, rbuf, size, rate, r);
		else
			user_stream(fd, o.channel, buf, rbuf, size, r);
		free(buf);
		free(rbuf);
	}
	r->cpu_local = r->cpu_remote = -1;
	if (c0 >= 0 && r->msgs)
		r->cpu_local = (cpu_busy_us() - c0) / r->msgs;
	if (rc0 >= 0 && (rc1 = remote_cpu(fd)) >= 0 && r->msgs)
		r->cpu_remote = (rc1 - rc0) / r->msgs;
}

/*
 * -I: Student's t for a two-sided interval at 95 or 99 % with 1..29
 * degrees of freedom (-i allows 30 runs at most).
 */
static const double t95[] = {
	12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
	2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
	2.060, 2.056, 2.052, 2.048, 2.045,
};

static const double t99[] = {
	63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169, 3.106, 3.055,
	3.012, 2.977, 2.947, 2.921, 2.898, 2.878, 2.861, 2.845, 2.831, 2.819, 2.807, 2.797,
	2.787, 2.779, 2.771, 2.763, 2.756,
};

/*
 * What the interval is about: the median round trip for lat and rr-load,
 * throughput for the streams.
 */
static double run_metric(const struct result *r)
{
	if (o.test == T_LAT || o.test == T_RRLOAD)
		return r->h ? hist_quantile(r->h, 0.5) / 1e3 : 0;
	return r->secs ? (r->bytes_out + r->bytes_in) / r->secs / 1e6 : 0;
}

/* Half the interval of @n values @x, % of their mean. */
static double ci_half(const double *x, int n, double *mean)
{
	double m = 0, v = 0;
	int i;

	for (i = 0; i < n; i++)
		m += x[i];
	m /= n;
	*mean = m;
	if (n < 2 || m <= 0)
		return -1;
	for (i = 0; i < n; i++)
		v += (x[i] - m) * (x[i] - m);
	v /= n - 1;
	return (o.ci_level == 95 ? t95 : t99)[n - 2] * sqrt(v / n) / m * 100;
}

static bool has_rtt(void)
{
	return o.test == T_LAT || o.test == T_RRLOAD;
}

/*
 * A point: one run, or with -I runs until the interval is as narrow as
 * asked (at least o.iter_min of them) or o.iter_max ran. The result adds
 * the runs up.
 */
static void point(int fd, struct icsnl *nl, uint32_t size, uint32_t rate, struct result *r)
{
	double x[30], cl = 0, cr = 0, ncl = 0, ncr = 0;
	int runs = o.ci_level ? o.iter_max : 1, i, s;
	struct result one;

	memset(r, 0, sizeof(*r));
	r->size = size;
	r->rate = rate;
	r->ci_half = -1;
	if (has_rtt())
		r->h = xcalloc(1, sizeof(*r->h));
	for (s = 0; s < o.streams && o.streams > 1; s++)
		r->sh[s] = xcalloc(1, sizeof(struct hist));
	for (i = 0; i < runs && !stop_sig; i++) {
		memset(&one, 0, sizeof(one));
		if (r->h)
			one.h = xcalloc(1, sizeof(*one.h));
		memcpy(one.sh, r->sh, sizeof(one.sh));	/* a stream's over every run */
		measure(fd, nl, size, rate, &one);
		x[i] = run_metric(&one);
		r->runs++;
		r->msgs += one.msgs;
		r->lost += one.lost;
		r->bytes_out += one.bytes_out;
		r->bytes_in += one.bytes_in;
		r->secs += one.secs;
		if (one.cpu_local >= 0) {
			cl += one.cpu_local * one.msgs;
			ncl += one.msgs;
		}
		if (one.cpu_remote >= 0) {
			cr += one.cpu_remote * one.msgs;
			ncr += one.msgs;
		}
		for (s = 0; s < o.streams; s++) {
			r->st[s].msgs += one.st[s].msgs;
			r->st[s].secs += one.st[s].secs;
		}
		if (r->h) {
			hist_merge(r->h, one.h);
			free(one.h);
		}
		if (o.ci_level && i + 1 >= o.iter_min) {
			r->ci_half = ci_half(x, i + 1, &r->metric);
			if (r->ci_half >= 0 && 2 * r->ci_half <= o.ci_width)
				break;
		}
	}
	if (o.ci_level && r->runs && r->ci_half < 0)
		r->ci_half = ci_half(x, r->runs, &r->metric);
	for (s = 0; s < o.streams && o.streams > 1; s++) {
		const struct hist *h = r->sh[s];

		r->st[s].p50 = h->n ? hist_quantile(h, 0.5) / 1e3 : -1;
		r->st[s].mean = h->n ? h->sum / 1e3 / h->n : -1;
		free(r->sh[s]);
		r->sh[s] = NULL;
	}
	/* The point's round trips, and its histogram no longer kept */
	if (r->h && r->h->n) {
		r->have_rtt = true;
		r->p50 = hist_quantile(r->h, 0.5) / 1e3;
		r->p90 = hist_quantile(r->h, 0.9) / 1e3;
		r->p99 = hist_quantile(r->h, 0.99) / 1e3;
		r->max = r->h->max / 1e3;
		r->mean = r->h->sum / 1e3 / r->h->n;
	}
	free(r->h);
	r->h = NULL;
	r->cpu_local = ncl ? cl / ncl : -1;
	r->cpu_remote = ncr ? cr / ncr : -1;
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
		return o.streams > 1 ? "-P streams on one channel, each one request in flight "
				       "through one /dev/ics file, timed from its write to its answer" :
				       "one write() and one blocking read() per round trip through "
				       "/dev/ics";
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
		       "answered with -R bytes (as many as it carried by default): both "
		       "directions counted";
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
	if (o.rsize && o.rsize < TEST_HDR)
		icsnl_usage_err("--peer kernel: -R %u is under the test service's header (%u bytes),"
				" the least it answers", o.rsize, TEST_HDR);
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

/* -j: what the numbers were taken on. */
static void json_meta(struct json *j)
{
	static const char *const params[] = { "link_queue_max", "chan_queue_max", "reasm_mem_max",
					      "rcvbuf_max" };
	struct ics_instance in;
	struct utsname u;
	struct icsnl nl;
	char when[48], path[128], v[64];
	unsigned int i;
	FILE *f;

	wall_clock(when, sizeof(when));
	uname(&u);
	json_str(j, "version", ICS_VERSION);
	json_str(j, "time", when);
	json_str(j, "host", u.nodename);
	json_str(j, "kernel", u.release);
	if (icsnl_open(&nl) || ics_get_instance(&nl, &in)) {
		json_null(j, "mtu");
	} else {
		json_str(j, "ifname", in.ifname);
		json_u64(j, "mtu", in.mtu);
		json_str(j, "auth", ics_auth_mode_name(in.auth_mode));
		json_obj_begin(j, "params");
		json_u64(j, "link_window", in.link_window);
		json_u64(j, "link_timeout_ms", in.link_timeout_ms);
		json_u64(j, "heartbeat_ms", in.heartbeat_ms);
		for (i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
			snprintf(path, sizeof(path), "/sys/module/ics/parameters/%s", params[i]);
			f = fopen(path, "r");
			if (f && fgets(v, sizeof(v), f))
				json_u64(j, params[i], strtoull(v, NULL, 10));
			if (f)
				fclose(f);
		}
		json_obj_end(j);
	}
	if (nl.sk)
		icsnl_close(&nl);
}

/* Each stream's share: mean and standard deviation of @v over the streams. */
static void stream_stats(const struct result *r, bool lat, double *mean, double *sd)
{
	double v[MAX_STREAMS], m = 0, s = 0;
	int i;

	for (i = 0; i < o.streams; i++) {
		const struct stream_res *st = &r->st[i];

		v[i] = lat ? st->mean : st->secs ? st->msgs * (r->size + in_size(r->size)) / st->secs /
							 1e6 : 0;
		m += v[i];
	}
	m /= o.streams;
	for (i = 0; i < o.streams; i++)
		s += (v[i] - m) * (v[i] - m);
	*mean = m;
	*sd = o.streams > 1 ? sqrt(s / (o.streams - 1)) : 0;
}

static void json_opt(struct json *j, const char *key, double v, int decimals)
{
	if (v >= 0)
		json_fixed(j, key, v, decimals);
	else
		json_null(j, key);
}

static double mb_s(uint64_t bytes, double secs)
{
	return secs ? bytes / secs / 1e6 : 0;
}

static void output_json(const struct result *res, int n)
{
	const char *peer = o.kernel || o.peer_kernel ? "kernel" : "user";
	bool lat = o.test == T_LAT;
	double mean, sd;
	struct json j;
	int i, s;

	json_init(&j, stdout, false);
	json_obj_begin(&j, NULL);
	json_str(&j, "tool", "icsperf");
	json_meta(&j);
	json_str(&j, "transport", transport());
	json_str(&j, "test", test_names[o.test]);
	json_str(&j, "peer", peer);
	json_u64(&j, "node", o.node);
	json_str(&j, "channel", ics_channel_names[o.channel]);
	json_u64(&j, "window", o.window);
	json_u64(&j, "streams", o.streams);
	if (o.ci_level) {
		json_obj_begin(&j, "confidence");
		json_u64(&j, "level", o.ci_level);
		json_fixed(&j, "width_pct", o.ci_width, 3);
		json_u64(&j, "iterations_max", o.iter_max);
		json_u64(&j, "iterations_min", o.iter_min);
		json_str(&j, "of", has_rtt() ? "p50_us" : "mb_s");
		json_obj_end(&j);
	}
	json_bool(&j, "interrupted", stop_sig != 0);
	json_str(&j, "cpu_method", "CPUs x wall - (idle+iowait+steal), /proc/stat");
	json_str(&j, "notes", notes());
	json_arr_begin(&j, "results");
	for (i = 0; i < n; i++) {
		const struct result *r = &res[i];
		bool rtt = r->have_rtt;

		json_obj_begin(&j, NULL);
		json_u64(&j, "size", r->size);
		if (o.test == T_RRLOAD)
			json_u64(&j, "rate", r->rate);
		json_u64(&j, "runs", r->runs);
		json_u64(&j, "msgs", r->msgs);
		json_fixed(&j, "secs", r->secs, 6);
		json_us(&j, "p50_us", rtt, r->p50);
		json_us(&j, "p90_us", rtt, r->p90);
		json_us(&j, "p99_us", rtt, r->p99);
		json_us(&j, "max_us", rtt, r->max);
		json_us(&j, "mean_us", rtt, r->mean);
		json_fixed(&j, "msgs_s", r->secs ? r->msgs / r->secs : 0, 3);
		json_fixed(&j, "mb_s", mb_s(r->bytes_out + r->bytes_in, r->secs), 6);
		json_fixed(&j, "out_mb_s", mb_s(r->bytes_out, r->secs), 6);
		json_fixed(&j, "in_mb_s", mb_s(r->bytes_in, r->secs), 6);
		json_opt(&j, "cpu_us_per_msg", r->cpu_local, 3);
		json_opt(&j, "cpu_us_per_msg_remote", r->cpu_remote, 3);
		json_u64(&j, "lost", r->lost);
		if (o.ci_level) {
			json_fixed(&j, "ci_mean", r->metric, 6);
			json_opt(&j, "ci_half_pct", r->ci_half, 3);
			json_bool(&j, "ci_met", r->ci_half >= 0 && 2 * r->ci_half <= o.ci_width);
		}
		if (o.streams > 1) {
			json_arr_begin(&j, "streams");
			for (s = 0; s < o.streams; s++) {
				const struct stream_res *st = &r->st[s];

				json_obj_begin(&j, NULL);
				json_u64(&j, "stream", s);
				json_u64(&j, "msgs", st->msgs);
				json_fixed(&j, "msgs_s", st->secs ? st->msgs / st->secs : 0, 3);
				json_fixed(&j, "mb_s", mb_s(st->msgs * (r->size + in_size(r->size)),
							    st->secs), 6);
				json_opt(&j, "p50_us", st->p50, 3);
				json_opt(&j, "mean_us", st->mean, 3);
				json_obj_end(&j);
			}
			json_arr_end(&j);
			stream_stats(r, lat, &mean, &sd);
			json_str(&j, "stream_of", lat ? "mean_us" : "mb_s");
			json_fixed(&j, "stream_mean", mean, 6);
			json_fixed(&j, "stream_sd", sd, 6);
		}
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
}

static void output_csv(const struct result *res, int n)
{
	const char *peer = o.kernel || o.peer_kernel ? "kernel" : "user";
	int i;

	printf("transport,test,peer,size,rate,msgs,secs,p50_us,p90_us,p99_us,max_us,msgs_s,"
	       "mb_s,cpu_us_per_msg,cpu_us_per_msg_remote,lost,out_mb_s,in_mb_s,runs,ci_half_pct\n");
	for (i = 0; i < n; i++) {
		const struct result *r = &res[i];

		printf("%s,%s,%s,%u,%u,%" PRIu64 ",%.6f,", transport(), test_names[o.test], peer,
		       r->size, r->rate, r->msgs, r->secs);
		if (r->have_rtt)
			printf("%.3f,%.3f,%.3f,%.3f,", r->p50, r->p90, r->p99, r->max);
		else
			printf(",,,,");
		printf("%.3f,%.6f,", r->secs ? r->msgs / r->secs : 0,
		       mb_s(r->bytes_out + r->bytes_in, r->secs));
		if (r->cpu_local >= 0)
			printf("%.3f", r->cpu_local);
		printf(",");
		if (r->cpu_remote >= 0)
			printf("%.3f", r->cpu_remote);
		printf(",%" PRIu64 ",%.6f,%.6f,%d,", r->lost, mb_s(r->bytes_out, r->secs),
		       mb_s(r->bytes_in, r->secs), r->runs);
		if (r->ci_half >= 0)
			printf("%.3f", r->ci_half);
		printf("\n");
	}
}

static void output_text(const struct result *res, int n)
{
	const char *peer = o.kernel || o.peer_kernel ? "kernel" : "user";
	bool lat = o.test == T_LAT;
	double mean, sd;
	int i, s, k;

	printf("icsperf %s to node %u, channel %s, %s (responder: %s), %.1f s per %s", test_names[o.test],
	       o.node, ics_channel_names[o.channel], o.kernel ? "kernel<->kernel" : "user<->user",
	       peer, o.secs, o.ci_level ? "run" : "point");
	if (o.streams > 1)
		printf(", %d streams", o.streams);
	printf("\n%9s %7s %9s %9s %9s %9s %9s %10s %9s %9s %9s\n", "size",
	       o.test == T_RRLOAD ? "rate" : "", "msgs", "p50 us", "p90 us", "p99 us", "max us",
	       "msgs/s", "MB/s", "cpu us/m", "rcpu us/m");
	for (i = 0; i < n; i++) {
		const struct result *r = &res[i];
		const double q[4] = { r->p50, r->p90, r->p99, r->max };
		char p[4][16], c[2][16], rate[16] = "";

		for (k = 0; k < 4; k++)
			snprintf(p[k], sizeof(p[k]), r->have_rtt ? "%.1f" : "-", q[k]);
		snprintf(c[0], sizeof(c[0]), r->cpu_local >= 0 ? "%.1f" : "-", r->cpu_local);
		snprintf(c[1], sizeof(c[1]), r->cpu_remote >= 0 ? "%.1f" : "-", r->cpu_remote);
		if (o.test == T_RRLOAD)
			snprintf(rate, sizeof(rate), "%u", r->rate);
		printf("%9u %7s %9" PRIu64 " %9s %9s %9s %9s %10.0f %9.2f %9s %9s\n", r->size, rate,
		       r->msgs, p[0], p[1], p[2], p[3], r->secs ? r->msgs / r->secs : 0,
		       mb_s(r->bytes_out + r->bytes_in, r->secs), c[0], c[1]);
		if (o.test == T_BISTREAM)
			printf("%9s out %.2f MB/s, in %.2f MB/s\n", "", mb_s(r->bytes_out, r->secs),
			       mb_s(r->bytes_in, r->secs));
		if (r->lost)
			printf("%9s lost: %" PRIu64 " requests unanswered\n", "", r->lost);
		if (o.ci_level)
			printf("%9s %s %s: %.6g, +/- %.2f %% at %d %% confidence after %d runs%s\n", "",
			       has_rtt() ? "p50 us" : "MB/s", r->runs > 1 ? "mean of runs" : "run",
			       r->metric, r->ci_half >= 0 ? r->ci_half : 0, o.ci_level, r->runs,
			       r->ci_half >= 0 && 2 * r->ci_half <= o.ci_width ? "" :
			       " (interval not met)");
		if (o.streams < 2)
			continue;
		for (s = 0; s < o.streams; s++) {
			const struct stream_res *st = &r->st[s];

			printf("%9s stream %2d: %9" PRIu64 " msgs %10.0f msgs/s %9.2f MB/s", "", s,
			       st->msgs, st->secs ? st->msgs / st->secs : 0,
			       mb_s(st->msgs * (r->size + in_size(r->size)), st->secs));
			if (st->mean >= 0)
				printf("  p50 %.1f us  mean %.1f us", st->p50, st->mean);
			printf("\n");
		}
		stream_stats(r, lat, &mean, &sd);
		printf("%9s per stream: mean %.2f %s, sd %.2f (%.1f %%)\n", "", mean,
		       lat ? "us" : "MB/s", sd, mean ? sd / mean * 100 : 0);
	}
	if (stop_sig)
		printf("interrupted: the last point is partial\n");
}

/* "64,1k,4096" or "64-128k" (powers of two). */
static int parse_list(const char *s, uint32_t *v, int max, bool sizes)
{
	char *copy = strdup(s), *tok, *save = NULL, *dash;
	uint32_t a, b;
	int n = 0;

	if (!copy)
		die_errno("memory", ENOMEM);
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

/* -I LEVEL[,WIDTH], -i MAX[,MIN] */
static void parse_ci(int c, const char *arg)
{
	char extra;
	double a, b = -1;
	int n = sscanf(arg, "%lf,%lf%c", &a, &b, &extra);

	if (n < 1 || n > 2)
		icsnl_usage_err("-%c takes two numbers, comma separated: %s", c, arg);
	if (c == 'I') {
		if (a != 95 && a != 99)
			icsnl_usage_err("-I: the confidence level is 95 or 99, not %s", arg);
		if (n == 2 && (b <= 0 || b > 100))
			icsnl_usage_err("-I: the interval's width is a percentage, over 0: %s", arg);
		o.ci_level = a;
		if (n == 2)
			o.ci_width = b;
		return;
	}
	if (a != (int)a || a < 2 || a > 30 || (n == 2 && (b != (int)b || b < 2 || b > a)))
		icsnl_usage_err("-i MAX,MIN: runs, 2 <= MIN <= MAX <= 30: %s", arg);
	o.iter_max = a;
	if (n == 2)
		o.iter_min = b;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: icsperf [options] server\n"
		"       icsperf [options] lat|stream|bistream|rr-load NODE\n"
		"       icsperf --version\n"
		"  -c CHANNEL    channel (default TEST)\n"
		"  -s SIZES      list (64,1k) or range (64-128k, powers of two); default 64-128k\n"
		"  -R SIZE       lat, bistream, rr-load: the answers' size (default: as sent)\n"
		"  -l SECS       duration per size or rate (default 1)\n"
		"  -D SECS       interim results: what moved in each interval of SECS\n"
		"  -w N          stream/bistream: messages in flight (default 16; 0: none, sink)\n"
		"  -P N          lat/stream/bistream: N equal streams on CHANNEL, one thread each\n"
		"  -r RATES      rr-load: offered requests/s, list (default 100,200,400,...,6400)\n"
		"  -I LVL[,W]    repeat each point until the LVL %% (95, 99) confidence interval\n"
		"                is W %% of the mean wide (default 99,10)\n"
		"  -i MAX[,MIN]  with -I: at most MAX runs, at least MIN (default 10,3)\n"
		"  -k            kernel<->kernel: ics_test.ko's generator (lat, stream; needs\n"
		"                CAP_NET_ADMIN, and ics_test attached to CHANNEL on NODE, and\n"
		"                here too for lat, whose answers it takes)\n"
		"  --peer user|kernel  the responder: an icsperf server (default) or NODE's\n"
		"                test service, ics_test.ko, attached to CHANNEL there\n"
		"  -j            JSON (with -D: one line per interval, then the results);\n"
		"  --csv         CSV\n");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "peer", required_argument, NULL, 'p' },
		{ "csv", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct sigaction sa = { .sa_handler = on_stop, .sa_flags = SA_RESETHAND };
	struct result *res;
	struct icsnl nl = { 0 };
	int fd = -1, c, i, n, npoints;
	const char *cmd;
	uint32_t v;

	icsnl_prog = "icsperf";
	o.nsizes = parse_list("64-128k", o.sizes, 64, true);
	o.nrates = parse_list("100,200,400,800,1600,3200,6400", o.rates, 64, false);
	opterr = 0;	/* our messages, "icsperf: ..." */
	while ((c = getopt_long(argc, argv, ":c:s:R:l:D:w:P:r:I:i:kjh", lopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o.channel = icsnl_parse_channel(optarg);
			if (o.channel < 0)
				icsnl_usage_err("unknown channel: %s", optarg);
			break;
		case 's':
			o.nsizes = parse_list(optarg, o.sizes, 64, true);
			break;
		case 'R':
			if (icsnl_parse_size(optarg, &o.rsize) || !o.rsize || o.rsize > ICS_MSG_MAX)
				icsnl_usage_err("-R takes a size of 1..%u bytes: %s", ICS_MSG_MAX,
						optarg);
			break;
		case 'r':
			o.nrates = parse_list(optarg, o.rates, 64, false);
			break;
		case 'l':
		case 'D':
			if (sscanf(optarg, "%lf", c == 'l' ? &o.secs : &o.interim) != 1 ||
			    (c == 'l' ? o.secs : o.interim) < 0 || o.secs <= 0 ||
			    (c == 'D' && o.interim > 0 && o.interim < 0.01))
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
		case 'I':
		case 'i':
			parse_ci(c, optarg);
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
		case 'V':
			printf("icsperf %s\n", ICS_VERSION);
			return 0;
		case ':':
			icsnl_usage_err("option \"%s\" needs a value", argv[optind - 1]);
			break;
		default:
			if (optopt)
				icsnl_usage_err("unknown option \"-%c\" (try \"icsperf --help\")",
						optopt);
			icsnl_usage_err("unknown option \"%s\" (try \"icsperf --help\")",
					argv[optind - 1]);
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	cmd = argv[optind++];
	if ((o.ci_level || o.iter_max) && !o.ci_level)
		o.ci_level = 99;
	if (o.ci_level && !o.ci_width)
		o.ci_width = 10;
	if (o.ci_level && !o.iter_max)
		o.iter_max = 10;
	if (o.ci_level && !o.iter_min)
		o.iter_min = o.iter_max < 3 ? o.iter_max : 3;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(cmd, "server")) {
		if (optind != argc)
			icsnl_usage_err("server takes no operand");
		if (o.streams > 1)
			icsnl_usage_err("server: -P streams share one channel, which one server "
					"serves");
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
	if (o.streams > 1 && (o.test == T_RRLOAD || o.kernel))
		icsnl_usage_err("-P is for user lat, stream and bistream");
	if (o.kernel && (o.test == T_BISTREAM || o.test == T_RRLOAD))
		icsnl_usage_err("-k runs lat and stream");
	if (o.rsize && (o.kernel || o.test == T_STREAM))
		icsnl_usage_err("-R is for user lat, bistream and rr-load");
	if (o.test == T_BISTREAM && !o.window)
		icsnl_usage_err("bistream needs a window: -w 1 or more");
	if (o.streams > 1 && o.window > 65536)
		icsnl_usage_err("-P: a window of at most 65536 per stream");
	for (i = 0; i < o.nsizes && o.test == T_STREAM && !o.window && !o.kernel &&
	     !o.peer_kernel; i++)
		if (o.sizes[i] < REQ_LEN)
			icsnl_usage_err("-w 0: size %u is under the %u bytes that ask the server to "
					"sink and count", o.sizes[i], REQ_LEN);
	if (o.peer_kernel && !o.kernel)
		check_peer_kernel();
	if (o.kernel) {
		if (icsnl_open_test(&nl))
			return 1;
		/*
		 * libnl's buffer for a reply, which ICS_RTT_A_HIST makes up to
		 * 58 KiB (libnl before 3.2.28 does not peek at the size)
		 */
		nl_socket_set_msg_buf_size(nl.sk, 128 << 10);
	} else {
		fd = dev_open(o.channel, 0);
	}
	probe(fd, &nl);

	npoints = o.test == T_RRLOAD ? o.nsizes * o.nrates : o.nsizes;
	res = xcalloc(npoints, sizeof(*res));
	n = 0;
	for (i = 0; i < o.nsizes && !stop_sig; i++) {
		if (o.test == T_RRLOAD) {
			int k;

			for (k = 0; k < o.nrates && !stop_sig; k++)
				point(fd, &nl, o.sizes[i], o.rates[k], &res[n++]);
		} else {
			point(fd, &nl, o.sizes[i], 0, &res[n++]);
		}
	}
	if (o.json)
		output_json(res, n);
	else if (o.csv)
		output_csv(res, n);
	else
		output_text(res, n);
	if (o.kernel)
		icsnl_close(&nl);
	free(res);
	i = icsnl_flush_stdout();
	return i ? i : stop_sig ? EXIT_STOPPED : 0;
}
