// SPDX-License-Identifier: GPL-2.0
/*
 * bench-peer: the baselines `make bench` (scripts/bench.sh) sets ics
 * against, on the same veth in the same VM boot: TCP, UDP, TIPC and raw
 * AF_PACKET frames (the floor of the path: what any protocol over this
 * link pays at least).
 *
 * Per-size runs (scripts/bench-transports.sh), one JSON object with -j,
 * the same schema as ics's icsperf:
 *
 *   bench-peer server T [-p PORT] [-i IFACE]
 *       serve forever (the caller kills it)
 *   bench-peer rr T TARGET [-s SIZES] [-l SECS] [-t TIMEOUT_MS] [-j]
 *       synchronous request/response: one SIZE-byte message, answered by
 *       one of the same size, for SECS seconds per size
 *   bench-peer stream T TARGET [-s SIZES] [-l SECS] [-j]
 *       SIZE-byte messages as fast as the sender can for SECS; the
 *       receiver's count and timing make the figures
 *   bench-peer rr-load udp TARGET -s SIZE -r RATES [-l SECS] [-j]
 *       open loop: requests sent on a fixed schedule at each RATE per
 *       second; each round trip is timed from its scheduled send time,
 *       so a sender running late counts against the round trip, as a
 *       client waiting to send would see it ("send_lag_*_us": how late)
 *
 *   T is tcp, udp, tipc or packet. TARGET: -H ADDR -p PORT (tcp, udp;
 *   port 5201 by default), -p INSTANCE (tipc, of service types 18888
 *   and 18889; default 1), -i IFACE -m PEER_MAC (packet, ethertype
 *   0x88B6: ics uses 0x88B5). SIZES: a comma list (default 64 to 131072
 *   by powers of two); SECS: a float (default 1).
 *
 * Older whole-run commands (scripts/bench-guest.sh), TCP and TIPC only:
 *
 *   bench-peer server tcp|tipc PORT
 *   bench-peer ping tcp|tipc HOST PORT SIZE COUNT
 *       COUNT round trips of SIZE bytes; JSON {count,min_ns,p50_ns,...}
 *   bench-peer bulk tcp|tipc HOST PORT BYTES [CHUNK] [SECS]
 *       send BYTES (or for SECS seconds if BYTES is 0) in CHUNK-byte
 *       writes, wait for the receiver's count; JSON {bytes,secs,mb_s}
 *
 * How each transport carries a message (also in the JSON's "notes"):
 *   tcp     rr: TCP_NODELAY, the server reads SIZE bytes and writes them
 *           back. stream: Nagle left on (the default a bulk sender has),
 *           one write() per message, the receiver reads up to 1 MiB at a
 *           time and finds the message boundaries in what it read.
 *   udp     one datagram per message (so no size above 65507); a 24-byte
 *           header inside the message's SIZE bytes carries the run's
 *           session and the sequence number. A request or reply not back
 *           within the timeout (1 s) is counted as lost.
 *   tipc    rr: SOCK_SEQPACKET (one message per send, connection
 *           oriented) up to TIPC's 66000-byte message limit, SOCK_STREAM
 *           above it (each result says which: "sock"). stream:
 *           SOCK_STREAM, as tcp.
 *   packet  AF_PACKET SOCK_DGRAM, ethertype 0x88B6; a message is a train
 *           of ceil(SIZE / (MTU - 24)) frames, each with a 24-byte header
 *           (session, message id, offset, total); the server answers once
 *           the whole message arrived. A lost frame makes the round trip
 *           time out (counted in "lost"); nothing is retransmitted.
 *
 * Figures: rr percentiles from every round trip's time (CLOCK_MONOTONIC,
 * in user space: two system calls per side per round trip are included,
 * as they are for any user-space application); stream figures are the
 * receiver's: messages and bytes it got, over the time from its first to
 * its last arrival. cpu_us_per_msg: the non-idle CPU time of the whole
 * machine (every CPU, so both ends in a one-VM layout) during the run,
 * per message (per round trip for rr, per message received for stream):
 * netperf's service demand. It is the online CPUs times the wall time
 * less /proc/stat's idle, iowait and steal, not the sum of its busy fields
 * (user+nice+system+irq+softirq): see cpu_now() for why.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/tipc.h>
#include <math.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TIPC_BENCH_TYPE 18888		/* SOCK_STREAM service */
#define TIPC_BENCH_SEQ_TYPE 18889	/* SOCK_SEQPACKET service */
#define BENCH_ETH_P 0x88B6
#define DEFAULT_PORT 5201
#define MAGIC 0x42503031u		/* "BP01" */
#define UDP_MAX 65507u
#define MAX_SIZE (16u << 20)
#define WARMUP 10			/* untimed round trips before each size */
#define SOCKBUF (4 << 20)
#define CPU_METHOD "CPUs x wall - (idle+iowait+steal), /proc/stat"

enum transport { T_TCP, T_UDP, T_TIPC, T_PACKET };
static const char *const tname[] = { "tcp", "udp", "tipc", "packet" };

/* Message types, in struct bhdr. */
enum { M_REQ = 1, M_RESP, M_DATA, M_END, M_REPORT };

/*
 * Header of a UDP datagram (inside the message's SIZE bytes) and of an
 * AF_PACKET frame (before the frame's slice of the message).
 */
struct bhdr {
	uint32_t magic;
	uint8_t type;
	uint8_t pad[3];
	uint32_t session;
	uint32_t msg;		/* message id (rr: the round trip's number) */
	uint32_t off;		/* packet: this frame's offset in the message */
	uint32_t total;		/* packet: the message's size */
};

/* The receiver's count at the end of a stream. */
struct report {
	uint64_t msgs;
	uint64_t bytes;
	uint64_t first_ns;	/* first arrival */
	uint64_t last_ns;	/* last arrival */
};

struct opts {
	enum transport t;
	const char *host;
	int port;
	const char *ifname;
	unsigned char mac[ETH_ALEN];
	int have_mac;
	uint32_t sizes[64];
	int nsizes;
	double rates[64];
	int nrates;
	double secs;
	int timeout_ms;
	int json;
};

struct result {
	uint32_t size;
	double rate;		/* rr-load: offered requests/s; else 0 */
	uint64_t msgs;
	double secs;
	int has_lat;
	double p50, p90, p99, max, min, mean;	/* µs */
	double msgs_s, mb_s, cpu;
	uint64_t lost;
	uint64_t sent;		/* stream, rr-load: messages sent */
	double lag_p50, lag_p99, lag_max;	/* rr-load: send time - scheduled, µs */
	const char *sock;
};

static struct opts o = { .port = -1, .secs = 1, .timeout_ms = 1000 };
static struct result *results;
static int nresults;
static char skipped[4096];
static uint32_t session;

static void die(const char *what)
{
	fprintf(stderr, "bench-peer: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void fail(const char *fmt, ...)
{
	va_list ap;

	fputs("bench-peer: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * The whole machine's CPU time, for the CPU figure of a run: the online
 * CPUs times the wall time, less what /proc/stat counts as idle, iowait
 * and steal. Not the sum of its busy fields: those are sampled at the tick,
 * which misses the short busy spells of a round trip between two idle ones
 * (measured: a tenth of the time or less under TCG), while idle time is
 * measured exactly (NO_HZ) and only printed in 10 ms units.
 */
struct cpu {
	double idle;		/* idle+iowait+steal, µs */
	uint64_t t;		/* CLOCK_MONOTONIC, ns */
	int ncpu;
};

static struct cpu cpu_now(void)
{
	unsigned long long user, nice, sys, idle, iowait, irq, softirq, steal;
	struct cpu c = { .idle = NAN, .t = now_ns() };
	double hz = sysconf(_SC_CLK_TCK);
	char line[512];
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return c;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "cpu ", 4) &&
		    sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu",
			   &user, &nice, &sys, &idle, &iowait, &irq, &softirq, &steal) == 8)
			c.idle = (idle + iowait + steal) * 1e6 / hz;
		else if (!strncmp(line, "cpu", 3) && line[3] >= '0' && line[3] <= '9')
			c.ncpu++;
	}
	fclose(f);
	return c;
}

/* Non-idle CPU time from A to B, µs. */
static double cpu_used(struct cpu a, struct cpu b)
{
	return a.ncpu * (b.t - a.t) / 1e3 - (b.idle - a.idle);
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);

	if (!p)
		die("calloc");
	return p;
}

/* ---- sockets ---- */

static int sock_stream(void)
{
	int fd = socket(o.t == T_TIPC ? AF_TIPC : AF_INET, SOCK_STREAM, 0);
	int one = 1;

	if (fd < 0)
		die("socket");
	if (o.t == T_TCP)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	return fd;
}

static void nodelay(int fd)
{
	int one = 1;

	if (o.t == T_TCP)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void bigbufs(int fd)
{
	int n = SOCKBUF;

	/* FORCE: root may pass net.core.[rw]mem_max. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &n, sizeof(n)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &n, sizeof(n));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &n, sizeof(n)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &n, sizeof(n));
}

static struct sockaddr_in inet_addr_of(const char *host, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	if (!host || inet_pton(AF_INET, host, &a.sin_addr) != 1)
		fail("bad or missing address %s (-H)", host ? host : "");
	return a;
}

/* Connect a TIPC socket of TYPE (SOCK_STREAM or SOCK_SEQPACKET). */
static int dial_tipc(int type, int port)
{
	struct sockaddr_tipc a = {
		.family = AF_TIPC,
		.addrtype = TIPC_SERVICE_ADDR,
		.addr.name.name.type = type == SOCK_STREAM ? TIPC_BENCH_TYPE : TIPC_BENCH_SEQ_TYPE,
		.addr.name.name.instance = port,
	};
	int fd, i;

	/* The service appears once the name table has spread. */
	for (i = 0;; i++) {
		fd = socket(AF_TIPC, type, 0);
		if (fd < 0)
			die("socket (tipc)");
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			return fd;
		if (i == 100)
			die("connect (tipc)");
		close(fd);
		usleep(100000);
	}
}

static int dial(const char *host, int port)
{
	struct sockaddr_in a;
	int fd;

	if (o.t == T_TIPC)
		return dial_tipc(SOCK_STREAM, port);
	a = inet_addr_of(host, port);
	fd = sock_stream();
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("connect");
	return fd;
}

static void rd(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n) {
		ssize_t r = read(fd, p, n);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			if (r == 0)
				errno = EPIPE;
			die("read");
		}
		p += r;
		n -= r;
	}
}

static void wr(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t r = write(fd, p, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			die("write");
		}
		p += r;
		n -= r;
	}
}

/* Wait up to TIMEOUT_NS for FD to be readable; 0 on timeout. */
static int wait_readable(int fd, int64_t timeout_ns)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct timespec ts;
	int r;

	if (timeout_ns < 0)
		timeout_ns = 0;
	ts.tv_sec = timeout_ns / 1000000000;
	ts.tv_nsec = timeout_ns % 1000000000;
	r = ppoll(&p, 1, &ts, NULL);
	if (r < 0 && errno != EINTR)
		die("ppoll");
	return r > 0;
}

/* ---- AF_PACKET ---- */

struct pkt {
	int fd;
	int ifindex;
	uint32_t payload;	/* message bytes per frame: MTU - header */
	struct sockaddr_ll peer;
};

static void pkt_open(struct pkt *p, const char *ifname)
{
	struct sockaddr_ll a = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(BENCH_ETH_P),
	};
	struct ifreq ifr = { 0 };

	if (!ifname)
		fail("packet needs -i IFACE");
	p->fd = socket(AF_PACKET, SOCK_DGRAM, htons(BENCH_ETH_P));
	if (p->fd < 0)
		die("socket (AF_PACKET)");
	p->ifindex = if_nametoindex(ifname);
	if (!p->ifindex)
		die(ifname);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(p->fd, SIOCGIFMTU, &ifr) < 0)
		die("SIOCGIFMTU");
	if (ifr.ifr_mtu <= (int)sizeof(struct bhdr))
		fail("%s: MTU %d too small", ifname, ifr.ifr_mtu);
	p->payload = ifr.ifr_mtu - sizeof(struct bhdr);
	a.sll_ifindex = p->ifindex;
	if (bind(p->fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("bind (AF_PACKET)");
	bigbufs(p->fd);
	p->peer = a;
	p->peer.sll_halen = ETH_ALEN;
}

/*
 * Send a SIZE-byte message as a train of frames; the sender blocks only
 * while the socket's send buffer is full.
 */
static void pkt_send_msg(struct pkt *p, char *frame, uint8_t type, uint32_t msg, uint32_t size)
{
	struct bhdr *h = (struct bhdr *)frame;
	uint32_t off = 0, n;

	*h = (struct bhdr){ .magic = MAGIC, .type = type, .session = session,
			    .msg = msg, .total = size };
	do {
		n = size - off < p->payload ? size - off : p->payload;
		h->off = off;
		while (sendto(p->fd, frame, sizeof(*h) + n, 0,
			      (struct sockaddr *)&p->peer, sizeof(p->peer)) < 0) {
			if (errno == ENOBUFS) {	/* a full device queue: retry */
				usleep(50);
				continue;
			}
			if (errno != EINTR)
				die("sendto (AF_PACKET)");
		}
		off += n;
	} while (off < size);
}

/* ---- results ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of N sorted values, in µs. */
static double pct(const uint64_t *v, uint64_t n, double p)
{
	uint64_t k = (uint64_t)ceil(p / 100.0 * n);

	return v[k ? k - 1 : 0] / 1e3;
}

static struct result *new_result(uint32_t size)
{
	struct result *r;

	results = realloc(results, (nresults + 1) * sizeof(*results));
	if (!results)
		die("realloc");
	r = &results[nresults++];
	*r = (struct result){ .size = size, .p50 = NAN, .p90 = NAN, .p99 = NAN,
			      .max = NAN, .min = NAN, .mean = NAN, .cpu = NAN,
			      .lag_p50 = NAN, .lag_p99 = NAN, .lag_max = NAN };
	return r;
}

static void skip(uint32_t size, const char *why)
{
	size_t n = strlen(skipped);

	snprintf(skipped + n, sizeof(skipped) - n, "%s{\"size\": %u, \"why\": \"%s\"}",
		 n ? ", " : "", size, why);
	if (!o.json)
		printf("%8u  skipped: %s\n", size, why);
}

/* Fill R's latency figures from N round-trip times (sorted here). */
static void latencies(struct result *r, uint64_t *rtt, uint64_t n)
{
	uint64_t i, sum = 0;

	if (!n)
		return;
	qsort(rtt, n, sizeof(*rtt), cmp_u64);
	for (i = 0; i < n; i++)
		sum += rtt[i];
	r->has_lat = 1;
	r->p50 = pct(rtt, n, 50);
	r->p90 = pct(rtt, n, 90);
	r->p99 = pct(rtt, n, 99);
	r->max = rtt[n - 1] / 1e3;
	r->min = rtt[0] / 1e3;
	r->mean = sum / 1e3 / n;
}

static void jnum(const char *key, double v, int last)
{
	if (isnan(v))
		printf("\"%s\": null%s", key, last ? "" : ", ");
	else
		printf("\"%s\": %.3f%s", key, v, last ? "" : ", ");
}

static void print_human(const char *test, const struct result *r)
{
	if (r == results)
		printf("%s %s\n%8s %8s %9s %9s %9s %9s %10s %9s %8s\n", tname[o.t], test,
		       r->rate ? "rate" : "size", "msgs", "p50_us", "p99_us", "max_us",
		       "msgs_s", "MB_s", "cpu_us", "lost");
	printf("%8.0f %8llu %9.1f %9.1f %9.1f %9.0f %10.2f %9.1f %8llu%s%s\n",
	       r->rate ? r->rate : r->size, (unsigned long long)r->msgs, r->p50, r->p99,
	       r->max, r->msgs_s, r->mb_s, r->cpu, (unsigned long long)r->lost,
	       r->sock ? "  " : "", r->sock ? r->sock : "");
}

static const char *notes(const char *test)
{
	switch (o.t) {
	case T_TCP:
		return !strcmp(test, "rr") ?
			"TCP_NODELAY; the server reads SIZE bytes and writes them back" :
			"one write() per message, Nagle on; receiver reads up to 1 MiB per read()";
	case T_UDP:
		return "one datagram per message (24-byte header inside it); no size above 65507; "
		       "a round trip not back within the timeout counts as lost";
	case T_TIPC:
		return !strcmp(test, "rr") ?
			"SOCK_SEQPACKET up to 66000 B (TIPC's message limit), SOCK_STREAM above; "
			"see each result's sock" :
			"SOCK_STREAM, one write() per message";
	case T_PACKET:
		return "AF_PACKET SOCK_DGRAM, ethertype 0x88B6; a message is ceil(SIZE/(MTU-24)) "
		       "frames with a 24-byte header; lost frames are not retransmitted "
		       "(rr: the round trip times out and counts as lost)";
	}
	return "";
}

static void print_json(const char *test)
{
	int i;

	printf("{\"tool\": \"bench-peer\", \"transport\": \"%s\", \"test\": \"%s\", "
	       "\"secs_per_size\": %.3f, \"timeout_ms\": %d, \"cpu_method\": \"%s\", "
	       "\"notes\": \"%s\", \"results\": [",
	       tname[o.t], test, o.secs, o.timeout_ms, CPU_METHOD, notes(test));
	for (i = 0; i < nresults; i++) {
		const struct result *r = &results[i];

		printf("%s{\"size\": %u, ", i ? ", " : "", r->size);
		if (r->rate)
			printf("\"rate\": %.3f, ", r->rate);
		printf("\"msgs\": %llu, ", (unsigned long long)r->msgs);
		jnum("secs", r->secs, 0);
		jnum("p50_us", r->p50, 0);
		jnum("p90_us", r->p90, 0);
		jnum("p99_us", r->p99, 0);
		jnum("max_us", r->max, 0);
		jnum("min_us", r->min, 0);
		jnum("mean_us", r->mean, 0);
		jnum("msgs_s", r->msgs_s, 0);
		jnum("mb_s", r->mb_s, 0);
		jnum("cpu_us_per_msg", r->cpu, 0);
		if (r->sent)
			printf("\"sent\": %llu, ", (unsigned long long)r->sent);
		if (r->rate) {
			jnum("send_lag_p50_us", r->lag_p50, 0);
			jnum("send_lag_p99_us", r->lag_p99, 0);
			jnum("send_lag_max_us", r->lag_max, 0);
		}
		if (r->sock)
			printf("\"sock\": \"%s\", ", r->sock);
		printf("\"lost\": %llu}", (unsigned long long)r->lost);
	}
	printf("], \"skipped\": [%s]}\n", skipped);
}

/* ---- request/response ---- */

/* One client endpoint for a run of round trips of one size. */
struct rr {
	int fd;
	int tipc_seq;		/* TIPC over SOCK_SEQPACKET */
	uint32_t size;
	char *buf;
	struct pkt p;
	uint32_t msg;
};

/* UDP and packet: is BUF (LEN bytes) the answer to the current request? */
static int is_answer(const struct rr *c, const struct bhdr *h, ssize_t len)
{
	return len >= (ssize_t)sizeof(*h) && h->magic == MAGIC && h->type == M_RESP &&
	       h->session == session && h->msg == c->msg;
}

/*
 * One round trip. 0: answered; 1: timed out (lost; only UDP and packet,
 * which carry no retransmission).
 */
static int rr_once(struct rr *c)
{
	uint64_t deadline;
	struct bhdr *h;
	uint32_t got = 0;
	ssize_t r;

	c->msg++;
	switch (o.t) {
	case T_TCP:
	case T_TIPC:
		if (c->tipc_seq) {
			if (send(c->fd, c->buf, c->size, 0) != (ssize_t)c->size)
				die("send (tipc)");
			r = recv(c->fd, c->buf, c->size, 0);
			if (r != (ssize_t)c->size)
				die("recv (tipc)");
			return 0;
		}
		wr(c->fd, c->buf, c->size);
		rd(c->fd, c->buf, c->size);
		return 0;
	case T_UDP:
		h = (struct bhdr *)c->buf;
		*h = (struct bhdr){ .magic = MAGIC, .type = M_REQ, .session = session,
				    .msg = c->msg, .total = c->size };
		if (send(c->fd, c->buf, c->size, 0) < 0 && errno != ECONNREFUSED)
			die("send (udp)");
		deadline = now_ns() + o.timeout_ms * 1000000ull;
		for (;;) {
			if (!wait_readable(c->fd, deadline - now_ns()))
				return 1;
			r = recv(c->fd, c->buf, c->size, MSG_DONTWAIT);
			if (is_answer(c, h, r))
				return 0;
		}
	case T_PACKET:
		pkt_send_msg(&c->p, c->buf, M_REQ, c->msg, c->size);
		h = (struct bhdr *)c->buf;
		deadline = now_ns() + o.timeout_ms * 1000000ull;
		for (;;) {
			if (!wait_readable(c->p.fd, deadline - now_ns()))
				return 1;
			r = recv(c->p.fd, c->buf, sizeof(*h) + c->p.payload, MSG_DONTWAIT);
			if (!is_answer(c, h, r))
				continue;
			got += r - sizeof(*h);
			if (got >= h->total)
				return 0;
		}
	}
	return 1;
}

static void rr_open(struct rr *c, uint32_t size)
{
	struct sockaddr_in a;

	memset(c, 0, sizeof(*c));
	c->size = size;
	c->buf = xcalloc(1, size + sizeof(struct bhdr) + 65536);
	switch (o.t) {
	case T_TCP:
	case T_TIPC:
		if (o.t == T_TIPC && size <= TIPC_MAX_USER_MSG_SIZE) {
			c->fd = dial_tipc(SOCK_SEQPACKET, o.port);
			c->tipc_seq = 1;
			break;
		}
		c->fd = dial(o.host, o.port);
		nodelay(c->fd);
		wr(c->fd, "P", 1);
		wr(c->fd, &size, sizeof(size));
		break;
	case T_UDP:
		a = inet_addr_of(o.host, o.port);
		c->fd = socket(AF_INET, SOCK_DGRAM, 0);
		if (c->fd < 0)
			die("socket (udp)");
		bigbufs(c->fd);
		if (connect(c->fd, (struct sockaddr *)&a, sizeof(a)) < 0)
			die("connect (udp)");
		break;
	case T_PACKET:
		pkt_open(&c->p, o.ifname);
		memcpy(c->p.peer.sll_addr, o.mac, ETH_ALEN);
		c->fd = c->p.fd;
		break;
	}
}

static void rr_close(struct rr *c)
{
	close(c->fd);
	free(c->buf);
}

static const char *sock_name(const struct rr *c)
{
	if (o.t == T_TIPC)
		return c->tipc_seq ? "SOCK_SEQPACKET" : "SOCK_STREAM";
	return NULL;
}

static void run_rr(void)
{
	int i;

	for (i = 0; i < o.nsizes; i++) {
		uint32_t size = o.sizes[i];
		uint64_t cap = 1024, n = 0, lost = 0, t0, t1, t, stop, *rtt;
		struct cpu c0, c1;
		struct result *r;
		struct rr c;
		int k;

		if (o.t == T_UDP && size > UDP_MAX) {
			skip(size, "larger than a UDP datagram (65507 B)");
			continue;
		}
		if (o.t == T_UDP && size < sizeof(struct bhdr)) {
			skip(size, "smaller than the 24-byte header");
			continue;
		}
		rtt = xcalloc(cap, sizeof(*rtt));
		session = (uint32_t)(now_ns() ^ getpid() ^ (size << 8));
		rr_open(&c, size);
		for (k = 0; k < WARMUP; k++)
			rr_once(&c);
		c0 = cpu_now();
		t0 = now_ns();
		stop = t0 + (uint64_t)(o.secs * 1e9);
		do {
			t = now_ns();
			if (rr_once(&c)) {
				lost++;
				continue;
			}
			if (n == cap) {
				cap *= 2;
				rtt = realloc(rtt, cap * sizeof(*rtt));
				if (!rtt)
					die("realloc");
			}
			rtt[n++] = now_ns() - t;
		} while (now_ns() < stop);
		t1 = now_ns();
		c1 = cpu_now();
		r = new_result(size);
		r->sock = sock_name(&c);
		rr_close(&c);
		r->msgs = n;
		r->lost = lost;
		r->secs = (t1 - t0) / 1e9;
		latencies(r, rtt, n);
		r->msgs_s = n / r->secs;
		r->mb_s = (double)n * size / r->secs / 1e6;
		r->cpu = n ? cpu_used(c0, c1) / n : NAN;
		free(rtt);
		if (!o.json)
			print_human("rr", r);
	}
}

/* ---- open-loop request/response (UDP) ---- */

static void run_rr_load(void)
{
	uint32_t size = o.sizes[0];
	int i;

	if (o.t != T_UDP)
		fail("rr-load: udp only");
	if (size > UDP_MAX || size < sizeof(struct bhdr))
		fail("rr-load: size %u out of 24..65507", size);
	for (i = 0; i < o.nrates; i++) {
		double rate = o.rates[i];
		uint64_t want = (uint64_t)ceil(rate * o.secs), sent = 0, n = 0, k;
		uint64_t *sched = xcalloc(want, sizeof(*sched));
		uint64_t *rtt = xcalloc(want, sizeof(*rtt));
		uint64_t *lag = xcalloc(want, sizeof(*lag));
		char *seen = xcalloc(want, 1);
		uint64_t t0, t, next, deadline, last_rx = 0;
		struct bhdr *h;
		struct result *r;
		struct cpu c0, c1;
		struct rr c;
		ssize_t len;

		session = (uint32_t)(now_ns() ^ getpid() ^ i);
		rr_open(&c, size);
		for (k = 0; k < WARMUP; k++)
			rr_once(&c);
		h = (struct bhdr *)c.buf;
		c0 = cpu_now();
		t0 = now_ns();
		deadline = UINT64_MAX;
		while (n < want) {
			t = now_ns();
			if (sent < want) {
				/* Request k is due at t0 + k / rate, whatever the
				 * answers do: a late sender sends at once, and
				 * the wait counts in the round trip. */
				next = t0 + (uint64_t)(sent * 1e9 / rate);
				if (t >= next) {
					*h = (struct bhdr){ .magic = MAGIC, .type = M_REQ,
							    .session = session, .msg = sent,
							    .total = size };
					lag[sent] = now_ns() - next;
					sched[sent++] = next;
					if (send(c.fd, c.buf, size, 0) < 0 && errno != ECONNREFUSED &&
					    errno != ENOBUFS)
						die("send (udp)");
					if (sent == want)
						deadline = now_ns() + o.timeout_ms * 1000000ull;
					continue;
				}
			} else {
				next = deadline;
				if (t >= deadline)
					break;
			}
			if (!wait_readable(c.fd, next - t))
				continue;
			while ((len = recv(c.fd, c.buf, size, MSG_DONTWAIT)) > 0) {
				t = now_ns();
				if (len < (ssize_t)sizeof(*h) || h->magic != MAGIC ||
				    h->type != M_RESP || h->session != session ||
				    h->msg >= sent || seen[h->msg])
					continue;
				seen[h->msg] = 1;
				rtt[n++] = t - sched[h->msg];
				last_rx = t;
			}
		}
		c1 = cpu_now();
		rr_close(&c);
		r = new_result(size);
		r->rate = rate;
		r->msgs = n;
		r->sent = sent;
		r->lost = sent - n;
		if (sent) {
			qsort(lag, sent, sizeof(*lag), cmp_u64);
			r->lag_p50 = pct(lag, sent, 50);
			r->lag_p99 = pct(lag, sent, 99);
			r->lag_max = lag[sent - 1] / 1e3;
		}
		r->secs = ((last_rx > t0 ? last_rx : now_ns()) - t0) / 1e9;
		latencies(r, rtt, n);
		r->msgs_s = n / r->secs;
		r->mb_s = (double)n * size / r->secs / 1e6;
		r->cpu = n ? cpu_used(c0, c1) / n : NAN;
		free(sched);
		free(rtt);
		free(seen);
		free(lag);
		if (!o.json)
			print_human("rr-load", r);
	}
}

/* ---- stream ---- */

/* UDP and packet: send END until the receiver's report comes back. */
static int datagram_end(int fd, struct pkt *p, char *buf, uint32_t bufsz, struct report *rep)
{
	struct bhdr *h = (struct bhdr *)buf;
	uint64_t deadline;
	ssize_t len;
	int i;

	for (i = 0; i < 25; i++) {
		*h = (struct bhdr){ .magic = MAGIC, .type = M_END, .session = session };
		if (p) {
			if (sendto(p->fd, buf, sizeof(*h), 0, (struct sockaddr *)&p->peer,
				   sizeof(p->peer)) < 0 && errno != ENOBUFS)
				die("sendto (AF_PACKET)");
		} else if (send(fd, buf, sizeof(*h), 0) < 0 && errno != ECONNREFUSED &&
			   errno != ENOBUFS) {
			die("send (udp)");
		}
		deadline = now_ns() + 200000000ull;
		while (wait_readable(fd, deadline - now_ns())) {
			len = recv(fd, buf, bufsz, MSG_DONTWAIT);
			if (len >= (ssize_t)(sizeof(*h) + sizeof(*rep)) && h->magic == MAGIC &&
			    h->type == M_REPORT && h->session == session) {
				memcpy(rep, buf + sizeof(*h), sizeof(*rep));
				return 0;
			}
		}
	}
	return -1;
}

static void run_stream(void)
{
	int i;

	for (i = 0; i < o.nsizes; i++) {
		uint32_t size = o.sizes[i], bufsz;
		uint64_t sent = 0, t0, stop;
		struct report rep = { 0 };
		struct sockaddr_in a;
		struct bhdr *h;
		struct result *r;
		struct pkt p;
		struct cpu c0, c1;
		double span;
		char *buf;
		int fd = -1;

		if (o.t == T_UDP && size > UDP_MAX) {
			skip(size, "larger than a UDP datagram (65507 B)");
			continue;
		}
		if (o.t != T_PACKET && size < sizeof(struct bhdr)) {
			skip(size, "smaller than the 24-byte header");
			continue;
		}
		bufsz = size + sizeof(struct bhdr) + 65536;
		buf = xcalloc(1, bufsz);
		h = (struct bhdr *)buf;
		session = (uint32_t)(now_ns() ^ getpid() ^ (size << 8));
		switch (o.t) {
		case T_TCP:
		case T_TIPC:
			fd = dial(o.host, o.port);
			wr(fd, "T", 1);
			wr(fd, &size, sizeof(size));
			break;
		case T_UDP:
			a = inet_addr_of(o.host, o.port);
			fd = socket(AF_INET, SOCK_DGRAM, 0);
			if (fd < 0)
				die("socket (udp)");
			bigbufs(fd);
			if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
				die("connect (udp)");
			break;
		case T_PACKET:
			pkt_open(&p, o.ifname);
			memcpy(p.peer.sll_addr, o.mac, ETH_ALEN);
			fd = p.fd;
			break;
		}
		c0 = cpu_now();
		t0 = now_ns();
		stop = t0 + (uint64_t)(o.secs * 1e9);
		while (now_ns() < stop) {
			switch (o.t) {
			case T_TCP:
			case T_TIPC:
				*h = (struct bhdr){ .magic = MAGIC, .type = M_DATA,
						    .session = session, .msg = sent };
				wr(fd, buf, size);
				break;
			case T_UDP:
				*h = (struct bhdr){ .magic = MAGIC, .type = M_DATA,
						    .session = session, .msg = sent, .total = size };
				/* A full queue drops the datagram, as the
				 * receiver's would: it is sent, not received. */
				if (send(fd, buf, size, 0) < 0 && errno != ECONNREFUSED &&
				    errno != ENOBUFS)
					die("send (udp)");
				break;
			case T_PACKET:
				pkt_send_msg(&p, buf, M_DATA, sent, size);
				break;
			}
			sent++;
		}
		if (o.t == T_TCP || o.t == T_TIPC) {
			*h = (struct bhdr){ .magic = MAGIC, .type = M_END, .session = session };
			wr(fd, buf, size);
			rd(fd, &rep, sizeof(rep));
		} else if (datagram_end(fd, o.t == T_PACKET ? &p : NULL, buf, bufsz, &rep) < 0) {
			fprintf(stderr, "bench-peer: no report from the receiver (size %u)\n", size);
			rep = (struct report){ 0 };
		}
		c1 = cpu_now();
		close(fd);
		free(buf);
		r = new_result(size);
		r->msgs = rep.msgs;
		r->sent = sent;
		r->lost = sent > rep.msgs ? sent - rep.msgs : 0;
		/*
		 * The receiver's rate: from its first arrival to its last, so
		 * what the sender left queued counts only once it arrived.
		 * The first message opens the interval, so it is not in it.
		 */
		span = (rep.last_ns - rep.first_ns) / 1e9;
		if (rep.msgs >= 2 && span > 0) {
			r->secs = span;
			r->msgs_s = (rep.msgs - 1) / span;
			r->mb_s = rep.bytes * (rep.msgs - 1.0) / rep.msgs / span / 1e6;
		} else {
			r->secs = (now_ns() - t0) / 1e9;
			r->msgs_s = rep.msgs / r->secs;
			r->mb_s = rep.bytes / r->secs / 1e6;
		}
		r->cpu = rep.msgs ? cpu_used(c0, c1) / rep.msgs : NAN;
		if (!o.json)
			print_human("stream", r);
	}
}

/* ---- servers ---- */

/*
 * A stream connection's "T" run: SIZE-byte messages, each starting with
 * a struct bhdr, until one of type M_END; answer a struct report. Reads
 * up to 1 MiB at a time, as a bulk receiver would, and finds the message
 * boundaries in what it read.
 */
static void serve_stream_msgs(int fd, uint32_t size)
{
	static char buf[1 << 20];
	struct bhdr h;
	struct report rep = { 0 };
	uint32_t off = 0;	/* in the current message */
	ssize_t n, i, k;

	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			exit(0);
		if (!rep.first_ns)
			rep.first_ns = now_ns();
		for (i = 0; i < n; i += k) {
			/* Copy the header's bytes as they come by. */
			if (off < sizeof(h)) {
				k = (ssize_t)sizeof(h) - off < n - i ? (ssize_t)sizeof(h) - off : n - i;
				memcpy((char *)&h + off, buf + i, k);
			} else {
				k = size - off < n - i ? size - off : n - i;
			}
			off += k;
			if (off < size)
				continue;
			off = 0;
			if (h.magic != MAGIC)
				exit(1);
			if (h.type == M_END) {
				wr(fd, &rep, sizeof(rep));
				exit(0);
			}
			rep.msgs++;
			rep.bytes += size;
			rep.last_ns = now_ns();
		}
	}
}

static void serve_conn(int fd)
{
	static char buf[1 << 20];
	uint64_t total = 0, want;
	uint32_t size;
	char op;
	ssize_t r;

	rd(fd, &op, 1);
	if (op == 'P') {	/* echo SIZE-byte messages */
		rd(fd, &size, sizeof(size));
		if (size > sizeof(buf))
			exit(1);
		nodelay(fd);
		for (;;) {
			char *p = buf;
			size_t n = size;

			while (n) {
				r = read(fd, p, n);
				if (r <= 0)
					exit(0);
				p += r;
				n -= r;
			}
			wr(fd, buf, size);
		}
	}
	if (op == 'T') {	/* timed stream of messages */
		rd(fd, &size, sizeof(size));
		if (size < sizeof(struct bhdr) || size > MAX_SIZE)
			exit(1);
		serve_stream_msgs(fd, size);
	}
	/* 'S': read BYTES (or to EOF), then answer the byte count */
	rd(fd, &want, sizeof(want));
	while (total < want) {
		r = read(fd, buf, want - total < sizeof(buf) ? want - total : sizeof(buf));
		if (r <= 0)
			exit(0);
		total += r;
	}
	wr(fd, &total, sizeof(total));
	exit(0);
}

/* TIPC SOCK_SEQPACKET: answer each message with one of the same size. */
static void serve_seqpacket(int fd)
{
	static char buf[TIPC_MAX_USER_MSG_SIZE];
	ssize_t r;

	for (;;) {
		r = recv(fd, buf, sizeof(buf), 0);
		if (r <= 0)
			exit(0);
		if (send(fd, buf, r, 0) != r)
			exit(1);
	}
}

static int listen_tipc(int type, int port)
{
	struct sockaddr_tipc a = {
		.family = AF_TIPC,
		.addrtype = TIPC_SERVICE_RANGE,
		.scope = TIPC_CLUSTER_SCOPE,
		.addr.nameseq = { type == SOCK_STREAM ? TIPC_BENCH_TYPE : TIPC_BENCH_SEQ_TYPE,
				  port, port },
	};
	int fd = socket(AF_TIPC, type, 0);

	if (fd < 0)
		die("socket (tipc)");
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("bind (tipc)");
	if (listen(fd, 16) < 0)
		die("listen (tipc)");
	return fd;
}

/* TCP and TIPC: a child per connection. */
static void __attribute__((noreturn)) serve_connections(int port)
{
	struct pollfd l[2] = { { .fd = -1, .events = POLLIN }, { .fd = -1, .events = POLLIN } };
	int i, c;

	if (o.t == T_TIPC) {
		l[0].fd = listen_tipc(SOCK_STREAM, port);
		l[1].fd = listen_tipc(SOCK_SEQPACKET, port);
	} else {
		struct sockaddr_in a = {
			.sin_family = AF_INET,
			.sin_port = htons(port),
			.sin_addr.s_addr = htonl(INADDR_ANY),
		};

		l[0].fd = sock_stream();
		if (bind(l[0].fd, (struct sockaddr *)&a, sizeof(a)) < 0)
			die("bind");
		if (listen(l[0].fd, 16) < 0)
			die("listen");
	}
	signal(SIGCHLD, SIG_IGN);
	for (;;) {
		if (poll(l, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		for (i = 0; i < 2; i++) {
			if (l[i].fd < 0 || !(l[i].revents & POLLIN))
				continue;
			c = accept(l[i].fd, NULL, NULL);
			if (c < 0) {
				if (errno == EINTR || errno == EAGAIN)
					continue;
				die("accept");
			}
			if (fork() == 0) {
				close(l[0].fd);
				if (l[1].fd >= 0)
					close(l[1].fd);
				if (i == 1)
					serve_seqpacket(c);
				serve_conn(c);
			}
			close(c);
		}
	}
}

/* UDP and packet: the receiver's count of the current stream session. */
struct counter {
	uint32_t session;
	uint32_t msg;		/* packet: message being reassembled */
	uint32_t got;		/* packet: its bytes so far */
	struct report rep;
};

static void count(struct counter *c, const struct bhdr *h, uint32_t bytes, int packet)
{
	uint64_t t = now_ns();

	if (h->session != c->session) {
		memset(c, 0, sizeof(*c));
		c->session = h->session;
		c->rep.first_ns = t;
		c->msg = h->msg + 1;	/* none yet */
	}
	c->rep.bytes += bytes;
	c->rep.last_ns = t;
	if (!packet) {
		c->rep.msgs++;
		return;
	}
	if (h->msg != c->msg) {
		c->msg = h->msg;
		c->got = 0;
	}
	c->got += bytes;
	if (c->got == h->total)	/* the message's last byte arrived */
		c->rep.msgs++;
}

static void __attribute__((noreturn)) serve_datagrams(void)
{
	uint32_t bufsz = 2 * 65536, rx_msg = 0, rx_got = 0, rx_session = 0;
	struct sockaddr_storage from;
	struct counter cnt = { 0 };
	char *buf = xcalloc(1, bufsz), *out = xcalloc(1, bufsz);
	struct bhdr *h = (struct bhdr *)buf;
	socklen_t flen;
	struct pkt p;
	ssize_t n;
	int fd;

	if (o.t == T_UDP) {
		struct sockaddr_in a = {
			.sin_family = AF_INET,
			.sin_port = htons(o.port),
			.sin_addr.s_addr = htonl(INADDR_ANY),
		};

		fd = socket(AF_INET, SOCK_DGRAM, 0);
		if (fd < 0)
			die("socket (udp)");
		bigbufs(fd);
		if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
			die("bind (udp)");
	} else {
		pkt_open(&p, o.ifname);
		fd = p.fd;
	}
	for (;;) {
		flen = sizeof(from);
		n = recvfrom(fd, buf, bufsz, 0, (struct sockaddr *)&from, &flen);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("recvfrom");
		}
		if (n < (ssize_t)sizeof(*h) || h->magic != MAGIC)
			continue;
		if (o.t == T_PACKET) {
			struct sockaddr_ll *ll = (struct sockaddr_ll *)&from;

			if (ll->sll_pkttype == PACKET_OUTGOING)
				continue;
			memcpy(p.peer.sll_addr, ll->sll_addr, ETH_ALEN);
		}
		switch (h->type) {
		case M_REQ:
			if (o.t == T_UDP) {
				h->type = M_RESP;
				sendto(fd, buf, n, 0, (struct sockaddr *)&from, flen);
				break;
			}
			/* Answer once every byte of the request arrived. */
			if (h->session != rx_session || h->msg != rx_msg) {
				rx_session = h->session;
				rx_msg = h->msg;
				rx_got = 0;
			}
			rx_got += n - sizeof(*h);
			if (rx_got == h->total) {
				session = h->session;
				pkt_send_msg(&p, out, M_RESP, h->msg, h->total);
			}
			break;
		case M_DATA:
			count(&cnt, h, o.t == T_UDP ? n : n - (ssize_t)sizeof(*h), o.t == T_PACKET);
			break;
		case M_END:
			if (h->session != cnt.session) {
				memset(&cnt, 0, sizeof(cnt));
				cnt.session = h->session;
			}
			h->type = M_REPORT;
			memcpy(buf + sizeof(*h), &cnt.rep, sizeof(cnt.rep));
			n = sizeof(*h) + sizeof(cnt.rep);
			if (o.t == T_UDP)
				sendto(fd, buf, n, 0, (struct sockaddr *)&from, flen);
			else
				sendto(fd, buf, n, 0, (struct sockaddr *)&p.peer, sizeof(p.peer));
			break;
		}
	}
}

/* ---- the older whole-run commands ---- */

static int ping(const char *host, int port, uint32_t size, int count)
{
	uint64_t *rtt = xcalloc(count, sizeof(*rtt)), sum = 0;
	char *buf = xcalloc(1, size + 1);
	int fd = dial(host, port), i;

	nodelay(fd);
	wr(fd, "P", 1);
	wr(fd, &size, sizeof(size));
	for (i = 0; i < count; i++) {
		uint64_t t0 = now_ns();

		wr(fd, buf, size);
		rd(fd, buf, size);
		rtt[i] = now_ns() - t0;
		sum += rtt[i];
	}
	close(fd);
	qsort(rtt, count, sizeof(*rtt), cmp_u64);
	printf("{\"count\": %d, \"min_ns\": %llu, \"p50_ns\": %llu, \"p99_ns\": %llu, "
	       "\"max_ns\": %llu, \"mean_ns\": %llu}\n", count,
	       (unsigned long long)rtt[0],
	       (unsigned long long)rtt[(count - 1) / 2],
	       (unsigned long long)rtt[(count * 99 + 99) / 100 - 1],
	       (unsigned long long)rtt[count - 1],
	       (unsigned long long)(sum / count));
	return 0;
}

static int bulk(const char *host, int port, uint64_t bytes, size_t chunk, double secs)
{
	char *buf = xcalloc(1, chunk);
	uint64_t sent = 0, got, t0, stop;
	int fd;

	fd = dial(host, port);
	nodelay(fd);
	wr(fd, "S", 1);
	got = bytes ? bytes : UINT64_MAX;	/* a timed stream ends by EOF */
	wr(fd, &got, sizeof(got));
	t0 = now_ns();
	stop = t0 + (uint64_t)(secs * 1e9);
	while (bytes ? sent < bytes : now_ns() < stop) {
		size_t n = bytes && bytes - sent < chunk ? bytes - sent : chunk;

		wr(fd, buf, n);
		sent += n;
	}
	if (!bytes) {
		close(fd);
		printf("{\"bytes\": %llu}\n", (unsigned long long)sent);
		return 0;
	}
	rd(fd, &got, sizeof(got));
	secs = (now_ns() - t0) / 1e9;
	close(fd);
	if (got != sent) {
		fprintf(stderr, "bench-peer: receiver counted %llu of %llu bytes\n",
			(unsigned long long)got, (unsigned long long)sent);
		return 1;
	}
	printf("{\"bytes\": %llu, \"secs\": %.6f, \"mb_s\": %.2f}\n",
	       (unsigned long long)sent, secs, sent / secs / 1e6);
	return 0;
}

/* ---- command line ---- */

static void usage(void)
{
	fprintf(stderr,
		"usage: bench-peer server tcp|udp|tipc|packet [-p PORT] [-i IFACE]\n"
		"       bench-peer rr|stream tcp|udp|tipc|packet TARGET [-s SIZES] [-l SECS]\n"
		"                  [-t TIMEOUT_MS] [-j]\n"
		"       bench-peer rr-load udp TARGET -s SIZE -r RATES [-l SECS] [-j]\n"
		"         TARGET: -H ADDR [-p PORT] (tcp, udp), [-p INSTANCE] (tipc),\n"
		"                 -i IFACE -m PEER_MAC (packet)\n"
		"       bench-peer server tcp|tipc PORT\n"
		"       bench-peer ping tcp|tipc HOST PORT SIZE COUNT\n"
		"       bench-peer bulk tcp|tipc HOST PORT BYTES [CHUNK] [SECS]\n");
	exit(2);
}

static void parse_sizes(char *s)
{
	char *tok, *save = NULL;

	o.nsizes = 0;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long v = strtoul(tok, NULL, 0);

		if (o.nsizes == 64 || v < 1 || v > MAX_SIZE)
			fail("bad size list (1..%u, at most 64)", MAX_SIZE);
		o.sizes[o.nsizes++] = v;
	}
}

static void parse_rates(char *s)
{
	char *tok, *save = NULL;

	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		double v = atof(tok);

		if (o.nrates == 64 || v <= 0)
			fail("bad rate list");
		o.rates[o.nrates++] = v;
	}
}

static void parse_mac(const char *s)
{
	unsigned int m[ETH_ALEN];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6)
		fail("bad MAC address %s", s);
	for (i = 0; i < ETH_ALEN; i++)
		o.mac[i] = m[i];
	o.have_mac = 1;
}

int main(int argc, char **argv)
{
	const char *cmd;
	int c;

	if (argc < 3)
		usage();
	cmd = argv[1];
	for (c = 0; c < 4 && strcmp(argv[2], tname[c]); c++)
		;
	if (c == 4)
		usage();
	o.t = c;
	signal(SIGPIPE, SIG_IGN);

	/* The older commands, positional. */
	if (o.t == T_TCP || o.t == T_TIPC) {
		if (!strcmp(cmd, "server") && argc == 4 && argv[3][0] != '-') {
			o.port = atoi(argv[3]);
			serve_connections(o.port);
		}
		if (!strcmp(cmd, "ping") && argc == 7 && atoi(argv[6]) > 0)
			return ping(argv[3], atoi(argv[4]), strtoul(argv[5], NULL, 0),
				    atoi(argv[6]));
		if (!strcmp(cmd, "bulk") && argc >= 6)
			return bulk(argv[3], atoi(argv[4]), strtoull(argv[5], NULL, 0),
				    argc > 6 ? strtoul(argv[6], NULL, 0) : 1 << 20,
				    argc > 7 ? atof(argv[7]) : 0);
	}

	parse_sizes((char[]){ "64,128,256,512,1024,2048,4096,8192,16384,32768,65536,131072" });
	optind = 3;
	while ((c = getopt(argc, argv, "H:p:i:m:s:l:r:t:j")) != -1) {
		switch (c) {
		case 'H': o.host = optarg; break;
		case 'p': o.port = atoi(optarg); break;
		case 'i': o.ifname = optarg; break;
		case 'm': parse_mac(optarg); break;
		case 's': parse_sizes(optarg); break;
		case 'l': o.secs = atof(optarg); break;
		case 'r': parse_rates(optarg); break;
		case 't': o.timeout_ms = atoi(optarg); break;
		case 'j': o.json = 1; break;
		default: usage();
		}
	}
	if (optind != argc || o.secs <= 0 || o.timeout_ms <= 0)
		usage();
	if (o.port < 0)
		o.port = o.t == T_TIPC ? 1 : DEFAULT_PORT;
	if (!strcmp(cmd, "server")) {
		if (o.t == T_TCP || o.t == T_TIPC)
			serve_connections(o.port);
		serve_datagrams();
	}
	if (o.t == T_PACKET && !o.have_mac)
		fail("packet needs -m PEER_MAC");
	if (!strcmp(cmd, "rr"))
		run_rr();
	else if (!strcmp(cmd, "stream"))
		run_stream();
	else if (!strcmp(cmd, "rr-load")) {
		if (!o.nrates)
			fail("rr-load needs -r RATES");
		run_rr_load();
	} else {
		usage();
	}
	if (o.json)
		print_json(cmd);
	return 0;
}
