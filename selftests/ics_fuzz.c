// SPDX-License-Identifier: GPL-2.0
/*
 * ics_fuzz - capture real ics frames, then send mutated copies of them.
 *
 *   ics_fuzz capture -i IFNAME -o FILE [-n MAX] [-t SECS]
 *	keep up to MAX (default 4096) ics frames seen on IFNAME, both
 *	directions (a socket of every protocol: one bound to ics's ethertype
 *	sees no outgoing frame), for up to SECS (default 10) seconds, in
 *	FILE (each frame as a 16-bit length in host order and its bytes,
 *	Ethernet header on).
 *
 *   ics_fuzz send -i IFNAME -f FILE -d MAC [-n COUNT] [-s SEED]
 *	send COUNT (default 1000000) frames, each a random frame of FILE,
 *	addressed to MAC (broadcast frames stay broadcast), mutated 1 to 3
 *	times: a bit flipped, a byte set (random, 0 or 0xff), a header
 *	field set to a boundary value (0, 1, its maximum, its value +- 1,
 *	random), the frame cut short, or the source MAC changed to a random
 *	station's; then the CRC32C recomputed (as ics_inject does), except
 *	for 1 frame in 64, so that most frames reach the parser's later
 *	checks. Prints "sent N frames (seed S)". Same SEED, same frames.
 *
 * The selftests (fuzz.sh) run it at a live member and check that the
 * member still works and counted what it dropped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/ics.h>

#define FRAME_MAX	9216
#define BATCH		64
/* The bytes most mutations go to: the header and a heartbeat or ACK body. */
#define HOT		(sizeof(struct ics_wire_hdr) + sizeof(struct ics_wire_hello))

static const char *prog = "ics_fuzz";

static void usage(void)
{
	fprintf(stderr,
		"usage: %s capture -i IFNAME -o FILE [-n MAX] [-t SECS]\n"
		"       %s send -i IFNAME -f FILE -d MAC [-n COUNT] [-s SEED]\n", prog, prog);
	exit(2);
}

static uint64_t rng;

/* xorshift64*: reproducible from the seed, good enough to pick mutations */
static uint32_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (rng * 0x2545F4914F6CDD1DULL) >> 32;
}

static uint32_t crc_table[256];

/* CRC32C (Castagnoli, reflected 0x82F63B78), a byte at a time */
static uint32_t crc32c_update(uint32_t crc, const unsigned char *p, size_t n)
{
	uint32_t c;
	int i, k;

	if (!crc_table[1])
		for (i = 0; i < 256; i++) {
			for (c = i, k = 0; k < 8; k++)
				c = (c >> 1) ^ (0x82F63B78U & -(c & 1));
			crc_table[i] = c;
		}
	while (n--)
		crc = (crc >> 8) ^ crc_table[(crc ^ *p++) & 0xff];
	return crc;
}

/* A frame's check: its Ethernet source (at @frame + 6), then @n bytes at @h. */
static uint32_t frame_crc(const unsigned char *frame, const void *h, size_t n)
{
	return ~crc32c_update(crc32c_update(~0U, frame + ETH_ALEN, ETH_ALEN), h, n);
}

/* A packet socket on @ifname: @proto 0 sends only, ETH_P_ALL sees both ways. */
static int open_socket(const char *ifname, int proto, int *ifindex)
{
	struct sockaddr_ll a = { .sll_family = AF_PACKET, .sll_protocol = htons(proto) };
	int fd = socket(AF_PACKET, SOCK_RAW, htons(proto));

	if (fd < 0) {
		fprintf(stderr, "%s: socket(AF_PACKET): %s\n", prog, strerror(errno));
		exit(1);
	}
	a.sll_ifindex = if_nametoindex(ifname);
	if (!a.sll_ifindex || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, ifname, strerror(errno));
		exit(1);
	}
	*ifindex = a.sll_ifindex;
	return fd;
}

static int parse_mac(const char *s, unsigned char *mac)
{
	unsigned int b[ETH_ALEN];
	char tail;
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != ETH_ALEN)
		return -1;
	for (i = 0; i < ETH_ALEN; i++) {
		if (b[i] > 0xff)
			return -1;
		mac[i] = b[i];
	}
	return 0;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int capture(const char *ifname, const char *out, unsigned long max, double secs)
{
	static unsigned char buf[FRAME_MAX];
	struct pollfd pfd;
	unsigned long n = 0;
	double end = now_s() + secs;
	int ifindex;
	uint16_t len;
	ssize_t r;
	FILE *f;

	pfd.fd = open_socket(ifname, ETH_P_ALL, &ifindex);
	pfd.events = POLLIN;
	f = fopen(out, "w");
	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", prog, out, strerror(errno));
		return 1;
	}
	while (n < max && now_s() < end) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		r = recv(pfd.fd, buf, sizeof(buf), 0);
		if (r < (ssize_t)(ETH_HLEN + sizeof(struct ics_wire_hdr)) ||
		    ((struct ether_header *)buf)->ether_type != htons(ICS_ETH_P))
			continue;
		len = r;
		if (fwrite(&len, sizeof(len), 1, f) != 1 || fwrite(buf, len, 1, f) != 1) {
			fprintf(stderr, "%s: %s: write failed\n", prog, out);
			return 1;
		}
		n++;
	}
	if (fclose(f)) {
		fprintf(stderr, "%s: %s: %s\n", prog, out, strerror(errno));
		return 1;
	}
	printf("captured %lu frames\n", n);
	return n ? 0 : 1;
}

struct frame {
	uint16_t len;
	unsigned char *b;
};

static struct frame *load(const char *file, size_t *count)
{
	struct frame *v = NULL;
	size_t n = 0, cap = 0;
	uint16_t len;
	FILE *f = fopen(file, "r");

	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", prog, file, strerror(errno));
		exit(1);
	}
	while (fread(&len, sizeof(len), 1, f) == 1) {
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				exit(1);
		}
		if (len < ETH_HLEN + sizeof(struct ics_wire_hdr) || len > FRAME_MAX) {
			fprintf(stderr, "%s: %s: a frame of %u bytes\n", prog, file, len);
			exit(1);
		}
		v[n].len = len;
		v[n].b = malloc(len);
		if (!v[n].b || fread(v[n].b, len, 1, f) != 1) {
			fprintf(stderr, "%s: %s: truncated\n", prog, file);
			exit(1);
		}
		n++;
	}
	fclose(f);
	if (!n) {
		fprintf(stderr, "%s: %s: no frames\n", prog, file);
		exit(1);
	}
	*count = n;
	return v;
}

/* Header fields a mutation may set: offset and size. */
static const struct { unsigned int off, size; } fields[] = {
	{ offsetof(struct ics_wire_hdr, version), 1 },
	{ offsetof(struct ics_wire_hdr, type), 1 },
	{ offsetof(struct ics_wire_hdr, flags), 1 },
	{ offsetof(struct ics_wire_hdr, channel), 1 },
	{ offsetof(struct ics_wire_hdr, src_node), 1 },
	{ offsetof(struct ics_wire_hdr, dst_node), 1 },
	{ offsetof(struct ics_wire_hdr, frag_len), 2 },
	{ offsetof(struct ics_wire_hdr, sess), 4 },
	{ offsetof(struct ics_wire_hdr, seq), 4 },
	{ offsetof(struct ics_wire_hdr, ack_sess), 4 },
	{ offsetof(struct ics_wire_hdr, ack), 4 },
	{ offsetof(struct ics_wire_hdr, msg_id), 4 },
	{ offsetof(struct ics_wire_hdr, msg_len), 4 },
	{ offsetof(struct ics_wire_hdr, frag_off), 4 },
	{ offsetof(struct ics_wire_hdr, incarnation), 4 },
	{ offsetof(struct ics_wire_hdr, dst_inc), 4 },
};

static uint32_t get_be(const unsigned char *p, unsigned int size)
{
	uint32_t v = 0;

	while (size--)
		v = v << 8 | *p++;
	return v;
}

static void put_be(unsigned char *p, unsigned int size, uint32_t v)
{
	while (size--) {
		p[size] = v;
		v >>= 8;
	}
}

/* One mutation of the @len bytes at @f (Ethernet header on); returns the new length. */
static size_t mutate(unsigned char *f, size_t len)
{
	unsigned char *h = f + ETH_HLEN;
	size_t body = len - ETH_HLEN, at;
	unsigned int k, sz;
	uint32_t v, max;

	switch (rnd() % 8) {
	case 0:
	case 1:	/* a bit, mostly in the header and the heartbeat or ACK body */
		k = rnd() % 2;
		at = k ? rnd() % (body < HOT ? body : HOT) : rnd() % body;
		h[at] ^= 1 << (rnd() % 8);
		break;
	case 2:	/* a byte */
		k = rnd() % 2;
		at = k ? rnd() % (body < HOT ? body : HOT) : rnd() % body;
		v = rnd();
		h[at] = (const unsigned char[]){ 0, 0xff, v }[v % 3];
		break;
	case 3:
	case 4:
	case 5:	/* a header field, to a boundary */
		k = rnd() % (sizeof(fields) / sizeof(fields[0]));
		sz = fields[k].size;
		if (fields[k].off + sz > body)
			break;
		max = sz == 4 ? UINT32_MAX : (1U << (8 * sz)) - 1;
		v = get_be(h + fields[k].off, sz);
		switch (rnd() % 6) {
		case 0: v = 0; break;
		case 1: v = 1; break;
		case 2: v = max; break;
		case 3: v++; break;
		case 4: v--; break;
		default: v = rnd(); break;
		}
		put_be(h + fields[k].off, sz, v & max);
		break;
	case 6:	/* cut short */
		if (body > 1)
			len = ETH_HLEN + rnd() % body + 1;
		break;
	default: /* another station's source MAC (locally administered, unicast) */
		for (k = 0; k < ETH_ALEN; k++)
			f[ETH_ALEN + k] = rnd();
		f[ETH_ALEN] = (f[ETH_ALEN] & 0xfc) | 0x02;
		break;
	}
	return len;
}

static int send_frames(const char *ifname, const char *file, const unsigned char *dst,
		       unsigned long count, uint64_t seed)
{
	static unsigned char bufs[BATCH][FRAME_MAX];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_ll sll;
	unsigned long sent = 0;
	struct ics_wire_hdr *h;
	struct frame *fr;
	size_t nfr, len, crc_len;
	int fd, ifindex, i, m, k, n;

	fr = load(file, &nfr);
	fd = open_socket(ifname, 0, &ifindex);
	rng = seed ? seed : 1;
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = ifindex;
	sll.sll_protocol = htons(ICS_ETH_P);
	sll.sll_halen = ETH_ALEN;
	while (sent < count) {
		n = count - sent < BATCH ? count - sent : BATCH;
		for (i = 0; i < n; i++) {
			const struct frame *s = &fr[rnd() % nfr];

			/* zeroes past the frame: what a cut frame's CRC may cover */
			memset(bufs[i] + s->len, 0, FRAME_MAX - s->len);
			memcpy(bufs[i], s->b, s->len);
			len = s->len;
			if (bufs[i][0] != 0xff)	/* unicast: to the target */
				memcpy(bufs[i], dst, ETH_ALEN);
			m = 1 + rnd() % 3;
			for (k = 0; k < m; k++)
				len = mutate(bufs[i], len);
			h = (struct ics_wire_hdr *)(bufs[i] + ETH_HLEN);
			if (len >= ETH_HLEN + sizeof(*h) && rnd() % 64) {
				crc_len = sizeof(*h) + ntohs(h->frag_len);
				if (crc_len > FRAME_MAX - ETH_HLEN)
					crc_len = FRAME_MAX - ETH_HLEN;
				h->check = 0;
				h->check = htonl(frame_crc(bufs[i], h, crc_len));
			}
			if (len < ETH_ZLEN)
				len = ETH_ZLEN;	/* as a NIC pads it */
			iov[i].iov_base = bufs[i];
			iov[i].iov_len = len;
			memset(&msgs[i], 0, sizeof(msgs[i]));
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
			msgs[i].msg_hdr.msg_name = &sll;
			msgs[i].msg_hdr.msg_namelen = sizeof(sll);
		}
		for (i = 0; i < n; ) {
			k = sendmmsg(fd, msgs + i, n - i, 0);
			if (k < 0 && errno == ENOBUFS) {
				usleep(1000);
				continue;
			}
			if (k < 0) {
				fprintf(stderr, "%s: sendmmsg: %s\n", prog, strerror(errno));
				return 1;
			}
			i += k;
		}
		sent += n;
	}
	printf("sent %lu frames (seed %llu)\n", sent, (unsigned long long)seed);
	return 0;
}

int main(int argc, char **argv)
{
	const char *ifname = NULL, *file = NULL, *mode;
	unsigned long n = 0;
	unsigned long long seed = 1;
	double secs = 10;
	unsigned char dst[ETH_ALEN];
	int have_dst = 0, c;
	char *end;

	if (argc < 2)
		usage();
	mode = argv[1];
	optind = 2;
	while ((c = getopt(argc, argv, "i:o:f:n:t:d:s:")) != -1) {
		switch (c) {
		case 'i': ifname = optarg; break;
		case 'o':
		case 'f': file = optarg; break;
		case 'n': n = strtoul(optarg, &end, 0); if (*end) usage(); break;
		case 't': secs = strtod(optarg, &end); if (*end) usage(); break;
		case 's': seed = strtoull(optarg, &end, 0); if (*end) usage(); break;
		case 'd':
			if (parse_mac(optarg, dst))
				usage();
			have_dst = 1;
			break;
		default: usage();
		}
	}
	if (optind != argc || !ifname || !file)
		usage();
	if (!strcmp(mode, "capture"))
		return capture(ifname, file, n ? n : 4096, secs);
	if (!strcmp(mode, "send") && have_dst)
		return send_frames(ifname, file, dst, n ? n : 1000000, seed);
	usage();
	return 2;
}
