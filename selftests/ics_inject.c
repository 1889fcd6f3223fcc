// SPDX-License-Identifier: GPL-2.0
/*
 * ics_inject - send one hand-crafted ics frame through an AF_PACKET socket.
 *
 * The selftests use it to put frames on the wire that ics.ko itself never
 * sends (bad version, bad cluster, bad node ids, truncated headers, broken
 * fragments, ...) and check that the receiver drops and counts each one.
 *
 * Every field of struct ics_wire_hdr can be set; fields not given get the
 * value of a well-formed single-fragment DATA message, the first frame of a
 * send session:
 *
 *   version=ICS_WIRE_VERSION type=DATA flags=0 channel=TEST cluster=0
 *   src-node=1 dst-node=0 frag-len=LEN sess=0x1c5c0001 seq=1 ack-sess=0
 *   ack=0 msg-id=1 msg-len=LEN frag-off=0 incarnation=0x1c5c0de5
 *   check=CRC32C dst-inc=0 key-id=0 (unsigned: counter, salt and tag 0)
 *
 * where LEN is the payload length (--len, default 0). --hello builds a
 * struct ics_wire_hello payload instead (type HELLO on channel CNX, sess and
 * seq 0), --ack-frame a struct ics_wire_ack (type ACK on channel CNX, sess and
 * seq 0).
 *
 * dst_inc (--dst-inc) names the binding of the receiver a frame is made
 * for: a unicast frame (dst-node not ICS_NODE_BROADCAST) must carry the
 * receiver's current incarnation (icstat show; new at every bind), a
 * broadcast 0; the receiver drops any other as rx_bad_session. The default
 * is 0, right for a broadcast only: a test that sends unicast frames
 * passes the receiver's incarnation.
 *
 * check is computed last, like the kernel does: CRC32C (Castagnoli,
 * reflected polynomial 0x82F63B78, initial value ~0, final complement) over
 * the whole header (sizeof(struct ics_wire_hdr), every field set, check = 0)
 * followed by frag_len payload bytes, i.e.
 * cpu_to_be32(~__crc32c_le(~0, hdr, sizeof(*hdr) + frag_len)). --check N
 * stores N instead; --bad-check stores the right CRC with its lowest bit
 * flipped; --flip OFF flips the lowest bit of byte OFF (from the start of the ics
 * header) after the CRC was computed, as a bit error on the wire would.
 * --crc HEXBYTES prints the CRC32C of the given bytes and exits (a self-test
 * against the published check value: --crc 313233343536373839 = e3069283).
 *
 * --answer (with --hello) plays a node that hears the receiver: after each
 * heartbeat it waits for a heartbeat sent to its source MAC (the unicast
 * answer to a claim), sending its own again every 500 ms for up to 3 s, then sends
 * it once more echoing that one's timestamp, which confirms a claim
 * (design.rst, "Admission"). A unicast answer takes as dst_inc the
 * incarnation in the header of the heartbeat it answers (the receiver's),
 * unless --dst-inc was given; its CRC32C is computed again. (The heartbeats
 * before that answer carry --dst-inc, default 0, which a receiver drops
 * from a unicast one: a unicast claim needs --dst-inc.)
 *
 * The Ethernet frame is dst MAC, src MAC (default: the interface's own),
 * ethertype (default ICS_ETH_P), header, payload. --truncate N sends only
 * the first N bytes after the Ethernet header (header + payload), to make
 * frames shorter than their header or than their frag_len says.
 *
 * Example:
 *   ics_inject -i veth0 -d 02:00:00:00:00:01 --src-node 2 --dst-node 1 \
 *              --dst-inc INC --len 100 --byte 0x5a
 * where INC is node 1's incarnation ("incarnation" in its icstat -j show).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/ics.h>

#define FRAME_MAX	65536

static const char *prog = "ics_inject";

static void usage(FILE *f)
{
	fprintf(f,
"usage: %s -i IFNAME [options]\n"
"  -i, --dev IFNAME        interface to send on (required)\n"
"  -d, --dst MAC           Ethernet destination (default ff:ff:ff:ff:ff:ff)\n"
"  -s, --src MAC           Ethernet source (default: the interface's MAC)\n"
"  -e, --ethertype N       ethertype (default 0x%04x)\n"
"  header fields (numbers in decimal, 0x hex or 0 octal):\n"
"      --version N  --type N  --flags N  --channel N  --cluster N\n"
"      --src-node N  --dst-node N  --frag-len N  --sess N  --seq N\n"
"      --ack-sess N  --ack N  --msg-id N  --msg-len N  --frag-off N\n"
"      --incarnation N (default 0x1c5c0de5, as --hello-incarnation)\n"
"      --check N (default: the CRC32C of the frame)\n"
"      --dst-inc N         the receiver's incarnation (default 0; with\n"
"                          --answer, a unicast answer takes that of the\n"
"                          heartbeat it answers)\n"
"      --key-id N          a signed-looking frame: key id N, counter 1,\n"
"                          salt 1, a tag of 16 bytes 0x5a (forged)\n"
"      --bad-check         store the CRC32C with its lowest bit flipped\n"
"      --flip OFF          after the CRC32C, flip bit 0 of byte OFF of the\n"
"                          frame (from the ics header on)\n"
"  -l, --len N             payload bytes (default 0)\n"
"  -b, --byte N            payload fill byte (default 0xa5)\n"
"      --payload HEX       the payload starts with these bytes (at most 64),\n"
"                          the fill byte after them\n"
"      --hello             payload is a struct ics_wire_hello; defaults\n"
"                          become type=HELLO channel=CNX len=%zu\n"
"      --hello-incarnation N  --hello-mtu N  --hello-ms N (default 1000)\n"
"      --hello-flags N  --hello-seq N  --hello-seen MASK (bit n-1: node n)\n"
"      --hello-votes N (default 1)\n"
"      --answer            after each heartbeat, wait for one sent to us\n"
"                          and send ours again echoing it\n"
"      --ack-frame           payload is a struct ics_wire_ack; defaults\n"
"                          become type=ACK channel=CNX len=%zu sess=seq=0\n"
"      --ack-window N  --sack-bits N  --sack HEXBYTES\n"
"      --paused MASK  --pause-gen N   the pause word (ACK or heartbeat)\n"
"  -t, --truncate N        send only the first N bytes after the Ethernet header\n"
"  -c, --count N           send the frame N times (default 1)\n"
"      --alt-src MAC       every second frame of --count from this MAC\n"
"      --next              each frame of --count after the first is the\n"
"                          next fragment of the message: seq + 1,\n"
"                          frag-off + frag-len\n"
"      --msg-step N        with --next, the next message instead: msg-id\n"
"                          + N (a bundle of N records), frag-off as is\n"
"  -v, --verbose           print the frame in hex on stderr\n"
"      --hdr-size          print sizeof(struct ics_wire_hdr) and exit\n"
"      --hello-size        print sizeof(struct ics_wire_hello) and exit\n"
"      --crc HEXBYTES      print the CRC32C of these bytes and exit\n"
"  -h, --help\n", prog, ICS_ETH_P, sizeof(struct ics_wire_hello),
		sizeof(struct ics_wire_ack));
}

static unsigned long long num(const char *opt, const char *s,
			      unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || v > max) {
		fprintf(stderr, "%s: bad value \"%s\" for --%s (0..%llu)\n",
			prog, s, opt, max);
		exit(2);
	}
	return v;
}

static void parse_mac(const char *opt, const char *s, unsigned char *mac)
{
	unsigned int b[ETH_ALEN];
	char tail;
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5], &tail) != ETH_ALEN) {
		fprintf(stderr, "%s: bad MAC \"%s\" for --%s\n", prog, s, opt);
		exit(2);
	}
	for (i = 0; i < ETH_ALEN; i++) {
		if (b[i] > 0xff) {
			fprintf(stderr, "%s: bad MAC \"%s\" for --%s\n",
				prog, s, opt);
			exit(2);
		}
		mac[i] = b[i];
	}
}

/* CRC32C, bitwise: reflected polynomial 0x82F63B78; crc32c(~0, ...) with ~ after. */
static uint32_t crc32c_update(uint32_t crc, const unsigned char *p, size_t n)
{
	int k;

	while (n--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78U & -(crc & 1));
	}
	return crc;
}

static uint32_t crc32c(const unsigned char *p, size_t n)
{
	return ~crc32c_update(~0U, p, n);
}

/* A frame's check: the CRC32C of its Ethernet source, then @n bytes at @h. */
static uint32_t frame_crc(const unsigned char *src, const void *h, size_t n)
{
	return ~crc32c_update(crc32c_update(~0U, src, ETH_ALEN), h, n);
}

/*
 * The check of the frame (@eh, then @h and its payload, @crc_len bytes
 * covered): @check if given (>= 0), else the CRC32C, its lowest bit
 * flipped with @bad_check; then bit 0 of byte @flip (>= 0) of @h flipped.
 */
static void seal(const struct ether_header *eh, struct ics_wire_hdr *h, size_t crc_len,
		 long long check, int bad_check, long long flip)
{
	h->check = 0;
	if (check >= 0)
		h->check = htonl(check);
	else
		h->check = htonl(frame_crc(eh->ether_shost, h, crc_len) ^ (bad_check ? 1 : 0));
	if (flip >= 0)
		((unsigned char *)h)[flip] ^= 1;
}

/* "0a1b2c..." into buf; returns the byte count. */
static size_t parse_hex(const char *opt, const char *s, unsigned char *buf, size_t max)
{
	size_t n = 0;
	unsigned int b;

	if (strlen(s) % 2)
		goto bad;
	for (; s[0] && s[1]; s += 2) {
		if (n >= max || sscanf(s, "%2x", &b) != 1 ||
		    !strchr("0123456789abcdefABCDEF", s[0]) ||
		    !strchr("0123456789abcdefABCDEF", s[1]))
			goto bad;
		buf[n++] = b;
	}
	return n;
bad:
	fprintf(stderr, "%s: bad hex bytes \"%s\" for --%s (at most %zu)\n", prog, s, opt, max);
	exit(2);
}

enum {
	O_VERSION = 256, O_ALT_SRC, O_TYPE, O_FLAGS, O_CHANNEL, O_CLUSTER, O_SRC_NODE,
	O_DST_NODE, O_FRAG_LEN, O_MSG_ID, O_MSG_LEN, O_FRAG_OFF, O_SESS, O_SEQ,
	O_ACK_SESS, O_ACK, O_INC, O_CHECK, O_BAD_CHECK, O_HELLO, O_H_INC,
	O_H_MTU, O_H_MS, O_H_FLAGS, O_ACK_FRAME, O_ACK_WINDOW, O_SACK_BITS,
	O_SACK, O_HDR_SIZE, O_CRC, O_FLIP, O_H_SEQ, O_H_SEEN, O_H_VOTES, O_HELLO_SIZE,
	O_ANSWER, O_PAUSED, O_PAUSE_GEN, O_PAYLOAD, O_KEY_ID, O_DST_INC, O_NEXT,
	O_MSG_STEP,
};

static const struct option longopts[] = {
	{ "dev",		required_argument, NULL, 'i' },
	{ "dst",		required_argument, NULL, 'd' },
	{ "src",		required_argument, NULL, 's' },
	{ "ethertype",		required_argument, NULL, 'e' },
	{ "len",		required_argument, NULL, 'l' },
	{ "byte",		required_argument, NULL, 'b' },
	{ "truncate",		required_argument, NULL, 't' },
	{ "count",		required_argument, NULL, 'c' },
	{ "alt-src",		required_argument, NULL, O_ALT_SRC },
	{ "next",		no_argument,       NULL, O_NEXT },
	{ "msg-step",		required_argument, NULL, O_MSG_STEP },
	{ "verbose",		no_argument,       NULL, 'v' },
	{ "help",		no_argument,       NULL, 'h' },
	{ "version",		required_argument, NULL, O_VERSION },
	{ "type",		required_argument, NULL, O_TYPE },
	{ "flags",		required_argument, NULL, O_FLAGS },
	{ "channel",		required_argument, NULL, O_CHANNEL },
	{ "cluster",		required_argument, NULL, O_CLUSTER },
	{ "src-node",		required_argument, NULL, O_SRC_NODE },
	{ "dst-node",		required_argument, NULL, O_DST_NODE },
	{ "frag-len",		required_argument, NULL, O_FRAG_LEN },
	{ "msg-id",		required_argument, NULL, O_MSG_ID },
	{ "msg-len",		required_argument, NULL, O_MSG_LEN },
	{ "frag-off",		required_argument, NULL, O_FRAG_OFF },
	{ "sess",		required_argument, NULL, O_SESS },
	{ "seq",		required_argument, NULL, O_SEQ },
	{ "ack-sess",		required_argument, NULL, O_ACK_SESS },
	{ "ack",		required_argument, NULL, O_ACK },
	{ "incarnation",	required_argument, NULL, O_INC },
	{ "check",		required_argument, NULL, O_CHECK },
	{ "bad-check",		no_argument,       NULL, O_BAD_CHECK },
	{ "hello",		no_argument,       NULL, O_HELLO },
	{ "hello-incarnation",	required_argument, NULL, O_H_INC },
	{ "hello-mtu",		required_argument, NULL, O_H_MTU },
	{ "hello-ms",		required_argument, NULL, O_H_MS },
	{ "hello-flags",	required_argument, NULL, O_H_FLAGS },
	{ "ack-frame",		no_argument,       NULL, O_ACK_FRAME },
	{ "ack-window",		required_argument, NULL, O_ACK_WINDOW },
	{ "sack-bits",		required_argument, NULL, O_SACK_BITS },
	{ "sack",		required_argument, NULL, O_SACK },
	{ "hdr-size",		no_argument,       NULL, O_HDR_SIZE },
	{ "key-id",		required_argument, NULL, O_KEY_ID },
	{ "dst-inc",		required_argument, NULL, O_DST_INC },
	{ "hello-size",		no_argument,       NULL, O_HELLO_SIZE },
	{ "hello-seq",		required_argument, NULL, O_H_SEQ },
	{ "hello-seen",		required_argument, NULL, O_H_SEEN },
	{ "hello-votes",	required_argument, NULL, O_H_VOTES },
	{ "crc",		required_argument, NULL, O_CRC },
	{ "flip",		required_argument, NULL, O_FLIP },
	{ "answer",		no_argument,       NULL, O_ANSWER },
	{ "paused",		required_argument, NULL, O_PAUSED },
	{ "pause-gen",		required_argument, NULL, O_PAUSE_GEN },
	{ "payload",		required_argument, NULL, O_PAYLOAD },
	{ NULL, 0, NULL, 0 },
};

/* A socket that receives the interface's ics frames (for --answer). */
static int answer_socket(int ifindex, unsigned int ethertype)
{
	struct sockaddr_ll a = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ethertype),
		.sll_ifindex = ifindex,
	};
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ethertype));

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		fprintf(stderr, "%s: receive socket: %s\n", prog, strerror(errno));
		return -1;
	}
	return fd;
}

/*
 * --answer: wait for a heartbeat sent to the source MAC of @frame (our
 * heartbeat, just sent; again every 500 ms), then send @frame again with
 * echo[0] holding that heartbeat's node and timestamp, the CRC32C
 * recomputed; unless @keep_dst_inc, a unicast @frame now names the
 * incarnation of the heartbeat it answers.
 */
static int answer_hello(int rfd, int fd, const struct sockaddr_ll *to, unsigned char *frame,
			size_t frame_len, int keep_dst_inc)
{
	struct ether_header *eh = (struct ether_header *)frame;
	struct ics_wire_hdr *h = (struct ics_wire_hdr *)(eh + 1);
	struct ics_wire_hello *hw = (struct ics_wire_hello *)(h + 1);
	static unsigned char buf[FRAME_MAX];
	const struct ether_header *reh = (const struct ether_header *)buf;
	const struct ics_wire_hdr *rh = (const struct ics_wire_hdr *)(reh + 1);
	const struct ics_wire_hello *rhw = (const struct ics_wire_hello *)(rh + 1);
	struct pollfd pfd = { .fd = rfd, .events = POLLIN };
	struct sockaddr_ll from;
	socklen_t fl;
	struct timespec t0, t;
	long ms, next = 500;
	ssize_t n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (ms >= next && ms < 3000) {
			/* a receiver may hold back its answers (a few per interval) */
			if (sendto(fd, frame, frame_len, 0, (const struct sockaddr *)to,
				   sizeof(*to)) < 0) {
				fprintf(stderr, "%s: --answer: sendto: %s\n", prog, strerror(errno));
				return 1;
			}
			next += 500;
		}
		if (ms >= 3000 || poll(&pfd, 1, next - ms) < 0) {
			fprintf(stderr, "%s: --answer: no heartbeat to %02x:%02x:%02x:%02x:%02x:%02x within 3 s\n",
				prog, eh->ether_shost[0], eh->ether_shost[1], eh->ether_shost[2],
				eh->ether_shost[3], eh->ether_shost[4], eh->ether_shost[5]);
			return 1;
		}
		if (!(pfd.revents & POLLIN))
			continue;
		fl = sizeof(from);
		n = recvfrom(rfd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		if (n < (ssize_t)(sizeof(*reh) + sizeof(*rh) + sizeof(*rhw)) ||
		    from.sll_pkttype == PACKET_OUTGOING || rh->type != ICS_FT_HELLO)
			continue;
		if (memcmp(reh->ether_dhost, eh->ether_shost, ETH_ALEN))
			continue;
		break;
	}
	memset(hw->echo, 0, sizeof(hw->echo));
	hw->echo[0].node = rh->src_node;
	hw->echo[0].ts_us = rhw->ts_us;
	hw->echo[0].nonce = rhw->nonce;
	if (h->dst_node != ICS_NODE_BROADCAST && !keep_dst_inc)
		h->dst_inc = rh->incarnation;
	seal(eh, h, sizeof(*h) + ntohs(h->frag_len), -1, 0, -1);
	n = sendto(fd, frame, frame_len, 0, (const struct sockaddr *)to, sizeof(*to));
	if (n != (ssize_t)frame_len) {
		fprintf(stderr, "%s: --answer: sendto: %s\n", prog, n < 0 ? strerror(errno) : "short");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	/* Header fields as given; -1 = not given, use the default. */
	long long version = -1, type = -1, flags = -1, channel = -1, key_id = -1;
	long long cluster = -1, src_node = -1, dst_node = -1, frag_len = -1;
	long long msg_id = -1, msg_len = -1, frag_off = -1, sess = -1, seq = -1;
	long long ack_sess = -1, ack = -1, inc = -1, check = -1, dst_inc = -1;
	long long len = -1, truncate_to = -1, flip = -1;
	unsigned int fill = 0xa5, ethertype = ICS_ETH_P, count = 1;
	unsigned int h_inc = 0x1c5c0de5, h_mtu = 0, h_ms = 1000, h_flags = 0;
	unsigned int h_seq = 0, h_votes = 1;
	unsigned long long h_seen = 0;
	unsigned int a_window = 128, a_sack_bits = 0, paused = 0, pause_gen = 0;
	unsigned char sack[ICS_SACK_BITS / 8] = { 0 };
	unsigned char prefix[64];
	size_t prefix_len = 0;
	int hello = 0, ackf = 0, bad_check = 0, verbose = 0, have_src = 0, have_h_mtu = 0;
	unsigned char dst[ETH_ALEN] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	unsigned char src[ETH_ALEN], alt_src[ETH_ALEN];
	int have_alt = 0, answer = 0, rfd = -1, next = 0;
	unsigned int k = 0, sent = 0, msg_step = 0;
	static unsigned char frame[FRAME_MAX];
	const char *ifname = NULL;
	struct sockaddr_ll sll;
	struct ics_wire_hdr *h;
	struct ether_header *eh;
	struct ifreq ifr;
	size_t frame_len, crc_len, i;
	int fd, c, ifindex;

	while ((c = getopt_long(argc, argv, "i:d:s:e:l:b:t:c:vh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'i': ifname = optarg; break;
		case 'd': parse_mac("dst", optarg, dst); break;
		case 's': parse_mac("src", optarg, src); have_src = 1; break;
		case 'e': ethertype = num("ethertype", optarg, 0xffff); break;
		case 'l': len = num("len", optarg, FRAME_MAX - 14 - sizeof(*h)); break;
		case 'b': fill = num("byte", optarg, 0xff); break;
		case 't': truncate_to = num("truncate", optarg, FRAME_MAX); break;
		case 'c': count = num("count", optarg, 1000000); break;
		case O_ALT_SRC: parse_mac("alt-src", optarg, alt_src); have_alt = 1; break;
		case O_NEXT: next = 1; break;
		case O_MSG_STEP: msg_step = num("msg-step", optarg, UINT32_MAX); break;
		case 'v': verbose = 1; break;
		case 'h': usage(stdout); return 0;
		case O_VERSION: version = num("version", optarg, 0xff); break;
		case O_KEY_ID: key_id = num("key-id", optarg, 0xff); break;
		case O_DST_INC: dst_inc = num("dst-inc", optarg, UINT32_MAX); break;
		case O_TYPE: type = num("type", optarg, 0xff); break;
		case O_FLAGS: flags = num("flags", optarg, 0xff); break;
		case O_CHANNEL: channel = num("channel", optarg, 0xff); break;
		case O_CLUSTER: cluster = num("cluster", optarg, UINT32_MAX); break;
		case O_SRC_NODE: src_node = num("src-node", optarg, 0xff); break;
		case O_DST_NODE: dst_node = num("dst-node", optarg, 0xff); break;
		case O_FRAG_LEN: frag_len = num("frag-len", optarg, 0xffff); break;
		case O_MSG_ID: msg_id = num("msg-id", optarg, UINT32_MAX); break;
		case O_MSG_LEN: msg_len = num("msg-len", optarg, UINT32_MAX); break;
		case O_FRAG_OFF: frag_off = num("frag-off", optarg, UINT32_MAX); break;
		case O_SESS: sess = num("sess", optarg, UINT32_MAX); break;
		case O_SEQ: seq = num("seq", optarg, UINT32_MAX); break;
		case O_ACK_SESS: ack_sess = num("ack-sess", optarg, UINT32_MAX); break;
		case O_ACK: ack = num("ack", optarg, UINT32_MAX); break;
		case O_INC: inc = num("incarnation", optarg, UINT32_MAX); break;
		case O_CHECK: check = num("check", optarg, UINT32_MAX); break;
		case O_BAD_CHECK: bad_check = 1; break;
		case O_FLIP: flip = num("flip", optarg, FRAME_MAX - 14 - 1); break;
		case O_ANSWER: answer = 1; break;
		case O_PAUSED: paused = num("paused", optarg, 0xffff); break;
		case O_PAUSE_GEN: pause_gen = num("pause-gen", optarg, 0xffff); break;
		case O_PAYLOAD:
			prefix_len = parse_hex("payload", optarg, prefix, sizeof(prefix));
			break;
		case O_HELLO: hello = 1; break;
		case O_H_INC: h_inc = num("hello-incarnation", optarg, UINT32_MAX); break;
		case O_H_MTU: h_mtu = num("hello-mtu", optarg, UINT32_MAX); have_h_mtu = 1; break;
		case O_H_MS: h_ms = num("hello-ms", optarg, UINT32_MAX); break;
		case O_H_FLAGS: h_flags = num("hello-flags", optarg, UINT32_MAX); break;
		case O_ACK_FRAME: ackf = 1; break;
		case O_ACK_WINDOW: a_window = num("ack-window", optarg, 0xffff); break;
		case O_SACK_BITS: a_sack_bits = num("sack-bits", optarg, 0xffff); break;
		case O_SACK: parse_hex("sack", optarg, sack, sizeof(sack)); break;
		case O_HDR_SIZE: printf("%zu\n", sizeof(struct ics_wire_hdr)); return 0;
		case O_HELLO_SIZE: printf("%zu\n", sizeof(struct ics_wire_hello)); return 0;
		case O_H_SEQ: h_seq = num("hello-seq", optarg, UINT32_MAX); break;
		case O_H_SEEN: h_seen = num("hello-seen", optarg, UINT64_MAX); break;
		case O_H_VOTES: h_votes = num("hello-votes", optarg, 0xff); break;
		case O_CRC: {
			static unsigned char buf[FRAME_MAX];
			size_t n = parse_hex("crc", optarg, buf, sizeof(buf));

			printf("%08x\n", crc32c(buf, n));
			return 0;
		}
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || !ifname || (hello && ackf) || (answer && !hello)) {
		usage(stderr);
		return 2;
	}

	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0) {
		fprintf(stderr, "%s: socket(AF_PACKET): %s\n", prog, strerror(errno));
		return 1;
	}
	memset(&ifr, 0, sizeof(ifr));
	if (strlen(ifname) >= sizeof(ifr.ifr_name)) {
		fprintf(stderr, "%s: interface name too long: %s\n", prog, ifname);
		return 2;
	}
	strcpy(ifr.ifr_name, ifname);
	if (ioctl(fd, SIOCGIFINDEX, &ifr) < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, ifname, strerror(errno));
		return 1;
	}
	ifindex = ifr.ifr_ifindex;
	if (!have_src) {
		if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
			fprintf(stderr, "%s: %s: SIOCGIFHWADDR: %s\n", prog,
				ifname, strerror(errno));
			return 1;
		}
		memcpy(src, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	}
	if (!have_h_mtu) {
		if (ioctl(fd, SIOCGIFMTU, &ifr) < 0) {
			fprintf(stderr, "%s: %s: SIOCGIFMTU: %s\n", prog,
				ifname, strerror(errno));
			return 1;
		}
		h_mtu = ifr.ifr_mtu;
	}

	if (hello || ackf) {
		if (len < 0)
			len = hello ? sizeof(struct ics_wire_hello) : sizeof(struct ics_wire_ack);
		if (type < 0)
			type = hello ? ICS_FT_HELLO : ICS_FT_ACK;
		if (channel < 0)
			channel = ICS_CH_CNX;
		if (sess < 0)
			sess = 0;
		if (seq < 0)
			seq = 0;
	}
	if (len < 0)
		len = 0;

	memset(frame, 0, sizeof(frame));
	eh = (struct ether_header *)frame;
	memcpy(eh->ether_dhost, dst, ETH_ALEN);
	memcpy(eh->ether_shost, src, ETH_ALEN);
	eh->ether_type = htons(ethertype);

	h = (struct ics_wire_hdr *)(frame + sizeof(*eh));
	h->version = version < 0 ? ICS_WIRE_VERSION : version;
	h->type = type < 0 ? ICS_FT_DATA : type;
	h->flags = flags < 0 ? 0 : flags;
	h->channel = channel < 0 ? ICS_CH_TEST : channel;
	h->cluster_id = htonl(cluster < 0 ? 0 : cluster);
	h->src_node = src_node < 0 ? 1 : src_node;
	h->dst_node = dst_node < 0 ? ICS_NODE_BROADCAST : dst_node;
	h->frag_len = htons(frag_len < 0 ? len : frag_len);
	h->sess = htonl(sess < 0 ? 0x1c5c0001 : sess);
	h->seq = htonl(seq < 0 ? 1 : seq);
	h->ack_sess = htonl(ack_sess < 0 ? 0 : ack_sess);
	h->ack = htonl(ack < 0 ? 0 : ack);
	h->msg_id = htonl(msg_id < 0 ? 1 : msg_id);
	h->msg_len = htonl(msg_len < 0 ? len : msg_len);
	h->frag_off = htonl(frag_off < 0 ? 0 : frag_off);
	h->incarnation = htonl(inc < 0 ? h_inc : inc);
	h->dst_inc = htonl(dst_inc < 0 ? 0 : dst_inc);
	if (key_id >= 0) {
		h->key_id = key_id;
		h->ctr_lo = htonl(1);
		h->salt[7] = 1;
		memset(h->tag, 0x5a, sizeof(h->tag));
	}
	h->check = 0;

	memset(h + 1, fill, len);
	memcpy(h + 1, prefix, prefix_len < (size_t)len ? prefix_len : (size_t)len);
	if (hello) {
		struct ics_wire_hello hw = {
			.incarnation = htonl(h_inc),
			.mtu = htonl(h_mtu),
			.hello_ms = htonl(h_ms),
			.flags = htonl(h_flags),
			.seq = htonl(h_seq),
			.seen = htobe64(h_seen),
			.votes = h_votes,
			.paused = htons(paused),
			.pause_gen = htons(pause_gen),
		};

		memcpy(h + 1, &hw, len < (long long)sizeof(hw) ? (size_t)len : sizeof(hw));
	} else if (ackf) {
		struct ics_wire_ack aw = {
			.window = htons(a_window),
			.sack_bits = htons(a_sack_bits),
			.paused = htons(paused),
			.pause_gen = htons(pause_gen),
		};

		memcpy(aw.sack, sack, sizeof(aw.sack));
		memcpy(h + 1, &aw, len < (long long)sizeof(aw) ? (size_t)len : sizeof(aw));
	}

	/*
	 * The checksum covers the source MAC, the header and frag_len payload
	 * bytes, as the receiver computes it (a frag_len past the payload
	 * reads zeroes, up to the buffer's end; such a frame is too short for
	 * the receiver anyway).
	 */
	crc_len = sizeof(*h) + ntohs(h->frag_len);
	if (crc_len > FRAME_MAX - sizeof(*eh))
		crc_len = FRAME_MAX - sizeof(*eh);
	seal(eh, h, crc_len, check, bad_check, flip);

	frame_len = sizeof(*h) + len;
	if (truncate_to >= 0 && (size_t)truncate_to < frame_len)
		frame_len = truncate_to;
	frame_len += sizeof(*eh);

	if (verbose) {
		fprintf(stderr, "%s: %zu bytes on %s:", prog, frame_len, ifname);
		for (i = 0; i < frame_len && i < 128; i++)
			fprintf(stderr, "%s%02x", i % 16 ? " " : "\n  ", frame[i]);
		fprintf(stderr, "%s\n", frame_len > 128 ? " ..." : "");
	}

	if (answer) {
		rfd = answer_socket(ifindex, ethertype);
		if (rfd < 0)
			return 1;
	}

	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = ifindex;
	sll.sll_protocol = htons(ethertype);
	sll.sll_halen = ETH_ALEN;
	memcpy(sll.sll_addr, dst, ETH_ALEN);

	while (count--) {
		ssize_t n;

		/* the CRC32C covers the source: sealed again for each */
		if (have_alt) {
			memcpy(eh->ether_shost, k++ % 2 ? alt_src : src, ETH_ALEN);
			if (flip >= 0)
				((unsigned char *)h)[flip] ^= 1;	/* as it was sealed */
			seal(eh, h, crc_len, check, bad_check, flip);
		}
		if (next && sent++) {
			if (flip >= 0)
				((unsigned char *)h)[flip] ^= 1;
			h->seq = htonl(ntohl(h->seq) + 1);
			if (msg_step)
				h->msg_id = htonl(ntohl(h->msg_id) + msg_step);
			else
				h->frag_off = htonl(ntohl(h->frag_off) + ntohs(h->frag_len));
			seal(eh, h, crc_len, check, bad_check, flip);
		}
		n = sendto(fd, frame, frame_len, 0, (struct sockaddr *)&sll, sizeof(sll));

		if (n < 0) {
			fprintf(stderr, "%s: sendto %s: %s\n", prog, ifname,
				strerror(errno));
			return 1;
		}
		if ((size_t)n != frame_len) {
			fprintf(stderr, "%s: short send on %s: %zd of %zu\n",
				prog, ifname, n, frame_len);
			return 1;
		}
		if (answer && answer_hello(rfd, fd, &sll, frame, frame_len, dst_inc >= 0))
			return 1;
	}
	close(fd);
	return 0;
}
