// SPDX-License-Identifier: GPL-2.0
/*
 * bench-peer: the TCP and TIPC baselines of `make bench` (scripts/bench.sh),
 * measured the way ics's generator is: round trips of one message at a time,
 * and the wall-clock time to move N bytes until the receiver has them all.
 *
 *   bench-peer server tcp|tipc PORT
 *       serve connections forever: "P" + SIZE(u32) = echo SIZE-byte
 *       messages until EOF; "S" + BYTES(u64) = read BYTES (or to EOF),
 *       then answer the byte count (no half-close: TIPC has none)
 *   bench-peer ping tcp|tipc HOST PORT SIZE COUNT
 *       COUNT round trips of SIZE bytes; JSON {count,min_ns,p50_ns,...}
 *   bench-peer stream tcp|tipc HOST PORT BYTES [CHUNK] [SECS]
 *       send BYTES (or for SECS seconds if BYTES is 0) in CHUNK-byte
 *       writes, wait for the receiver's count; JSON {bytes,secs,mb_s}
 *
 * TIPC: HOST is ignored; PORT is the instance of service type 18888 (the
 * server binds it cluster-wide). Timing is CLOCK_MONOTONIC in user space,
 * so each round trip also pays two system calls per side, which ics's
 * in-kernel generator does not.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/tipc.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TIPC_BENCH_TYPE 18888

static int use_tipc;

static void die(const char *what)
{
	fprintf(stderr, "bench-peer: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int sock_new(void)
{
	int fd = socket(use_tipc ? AF_TIPC : AF_INET, SOCK_STREAM, 0);
	int one = 1;

	if (fd < 0)
		die("socket");
	if (!use_tipc) {
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	}
	return fd;
}

static int dial(const char *host, int port)
{
	int fd = sock_new();

	if (use_tipc) {
		struct sockaddr_tipc a = {
			.family = AF_TIPC,
			.addrtype = TIPC_SERVICE_ADDR,
			.addr.name.name.type = TIPC_BENCH_TYPE,
			.addr.name.name.instance = port,
		};
		int i;

		/* The service appears once the name table has spread. */
		for (i = 0; connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0; i++) {
			if (i == 100)
				die("connect (tipc)");
			close(fd);
			usleep(100000);
			fd = sock_new();
		}
	} else {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

		if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
			fprintf(stderr, "bench-peer: bad address %s\n", host);
			exit(2);
		}
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
			die("connect");
	}
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

static void serve_one(int fd)
{
	static char buf[1 << 20];
	uint64_t total = 0, want;
	uint32_t size;
	char op;
	ssize_t r;

	rd(fd, &op, 1);
	if (op == 'P') {
		rd(fd, &size, sizeof(size));
		if (size > sizeof(buf))
			exit(1);
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

static void __attribute__((noreturn)) server(int port)
{
	int fd = sock_new(), c;

	if (use_tipc) {
		struct sockaddr_tipc a = {
			.family = AF_TIPC,
			.addrtype = TIPC_SERVICE_RANGE,
			.scope = TIPC_CLUSTER_SCOPE,
			.addr.nameseq = { TIPC_BENCH_TYPE, port, port },
		};

		if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
			die("bind (tipc)");
	} else {
		struct sockaddr_in a = {
			.sin_family = AF_INET,
			.sin_port = htons(port),
			.sin_addr.s_addr = htonl(INADDR_ANY),
		};

		if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
			die("bind");
	}
	if (listen(fd, 16) < 0)
		die("listen");
	signal(SIGCHLD, SIG_IGN);
	for (;;) {
		c = accept(fd, NULL, NULL);
		if (c < 0) {
			if (errno == EINTR)
				continue;
			die("accept");
		}
		if (fork() == 0) {
			close(fd);
			serve_one(c);
		}
		close(c);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int ping(const char *host, int port, uint32_t size, int count)
{
	uint64_t *rtt = calloc(count, sizeof(*rtt)), sum = 0;
	char *buf = calloc(1, size + 1);
	int fd = dial(host, port), i;

	if (!rtt || !buf)
		die("calloc");
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

static int stream(const char *host, int port, uint64_t bytes, size_t chunk, double secs)
{
	char *buf = calloc(1, chunk);
	uint64_t sent = 0, got, t0, stop;
	int fd;

	if (!buf)
		die("calloc");
	fd = dial(host, port);
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

int main(int argc, char **argv)
{
	if (argc < 4)
		goto usage;
	if (!strcmp(argv[2], "tipc"))
		use_tipc = 1;
	else if (strcmp(argv[2], "tcp"))
		goto usage;
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(argv[1], "server"))
		server(atoi(argv[3]));
	if (!strcmp(argv[1], "ping") && argc == 7 && atoi(argv[6]) > 0)
		return ping(argv[3], atoi(argv[4]), strtoul(argv[5], NULL, 0), atoi(argv[6]));
	if (!strcmp(argv[1], "stream") && argc >= 6)
		return stream(argv[3], atoi(argv[4]), strtoull(argv[5], NULL, 0),
			      argc > 6 ? strtoul(argv[6], NULL, 0) : 1 << 20,
			      argc > 7 ? atof(argv[7]) : 0);
usage:
	fprintf(stderr, "usage: bench-peer server tcp|tipc PORT\n"
		"       bench-peer ping tcp|tipc HOST PORT SIZE COUNT\n"
		"       bench-peer stream tcp|tipc HOST PORT BYTES [CHUNK] [SECS]\n");
	return 2;
}
