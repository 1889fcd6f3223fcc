// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the icsnl helpers that need no kernel: count and time
 * formatting, size/number/channel/priority parsing, histogram labels, the
 * JSON writer, and the decoding of replies built here from synthetic
 * attributes (a link, both families' generator replies, the instance and
 * its counters, the test service's state).
 * Output is TAP: "ok N name" or "not ok N name", then the plan.
 */
#include <ctype.h>
#include <inttypes.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <netlink/msg.h>

#include "blake2s.h"
#include "hist.h"
#include "icsconf.h"
#include "icsnl.h"

static int tests, failed;

static void result(bool ok, const char *name)
{
	tests++;
	if (!ok)
		failed++;
	printf("%sok %d %s\n", ok ? "" : "not ", tests, name);
}

static void count(uint64_t v, bool raw, const char *want)
{
	char buf[ICS_NUMBUF], name[96];

	icsnl_fmt_count(buf, v, raw);
	snprintf(name, sizeof(name), "count %llu%s -> \"%s\"", (unsigned long long)v,
		 raw ? " raw" : "", want);
	if (strcmp(buf, want))
		printf("# got \"%s\"\n", buf);
	result(!strcmp(buf, want), name);
}

/* want < 0: must be rejected */
static void size(const char *s, long long want)
{
	char name[96];
	uint32_t v = 0;
	int err = icsnl_parse_size(s, &v);

	snprintf(name, sizeof(name), "size \"%s\" -> %lld", s, want);
	result(want < 0 ? err != 0 : !err && v == want, name);
}

static void u32(const char *s, long long want)
{
	char name[96];
	uint32_t v = 0;
	int err = icsnl_parse_u32(s, &v);

	snprintf(name, sizeof(name), "u32 \"%s\" -> %lld", s, want);
	result(want < 0 ? err != 0 : !err && v == want, name);
}

static void channel(const char *s, int want)
{
	char name[96];

	snprintf(name, sizeof(name), "channel \"%s\" -> %d", s, want);
	result(icsnl_parse_channel(s) == want, name);
}

static void prio(const char *s, int want)
{
	char name[96];

	snprintf(name, sizeof(name), "prio \"%s\" -> %d", s, want);
	result(icsnl_parse_prio(s) == want, name);
}

/* The same check for the strings of the other formatters. */
static void str_eq(const char *got, const char *want, const char *name)
{
	if (strcmp(got, want))
		printf("# got \"%s\"\n", got);
	result(!strcmp(got, want), name);
}

static void us(uint64_t ns, const char *want)
{
	char buf[ICS_NUMBUF], name[96];

	snprintf(name, sizeof(name), "us %llu ns -> \"%s\"", (unsigned long long)ns, want);
	str_eq(icsnl_fmt_us(buf, ns), want, name);
}

static void rate(double v, bool raw, const char *want)
{
	char buf[ICS_NUMBUF], name[96];

	snprintf(name, sizeof(name), "rate %g%s -> \"%s\"", v, raw ? " raw" : "", want);
	str_eq(icsnl_fmt_rate(buf, v, raw), want, name);
}

static void iso8601(const char *tz, time_t t, long ns, int digits, const char *want)
{
	struct timespec ts = { .tv_sec = t, .tv_nsec = ns };
	char buf[40], name[96];

	setenv("TZ", tz, 1);
	tzset();
	snprintf(name, sizeof(name), "ISO 8601 of %lld.%09ld in %s -> \"%s\"", (long long)t, ns,
		 tz, want);
	str_eq(icsnl_fmt_iso8601(buf, sizeof(buf), &ts, digits), want, name);
}

static void errno_name(int err, const char *want)
{
	char buf[ICS_NUMBUF], name[96];

	snprintf(name, sizeof(name), "errno %d -> \"%s\"", err, want);
	str_eq(icsnl_errno_name(buf, err), want, name);
}

static void hist_labels(void)
{
	bool ok = !strcmp(ics_hist_labels[0], "0") && ics_hist_row(0) == 0 &&
		  !strcmp(ics_hist_labels[ICS_HIST_ROW_MORE], "more") &&
		  ics_hist_row(ICS_MSG_MAX + 1) == ICS_HIST_ROW_MORE &&
		  ics_hist_row(UINT32_MAX) == ICS_HIST_ROW_MORE;
	uint32_t n;
	int r;

	/* row r's label is 2^(r-1), the largest size that counts in row r */
	for (r = 1; r < ICS_HIST_ROW_MORE; r++) {
		ok &= !icsnl_parse_size(ics_hist_labels[r], &n) && n == 1U << (r - 1);
		ok &= ics_hist_row(n) == (unsigned int)r;
		ok &= ics_hist_row(n + 1) == (unsigned int)r + 1;
	}
	result(ok, "histogram labels match ics_hist_row()");

	/* icstat prometheus's le: the largest size of the row, and no more */
	ok = true;
	for (r = 0; r < ICS_HIST_ROW_MORE; r++)
		ok &= ics_hist_row(ics_hist_row_max(r)) == (unsigned int)r &&
		      ics_hist_row(ics_hist_row_max(r) + 1) == (unsigned int)r + 1;
	result(ok, "ics_hist_row_max(r) is the largest size of row r");
}

static void json(bool pretty, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	struct json j;
	FILE *f = open_memstream(&buf, &len);

	json_init(&j, f, pretty);
	json_obj_begin(&j, NULL);
	json_u64(&j, "a", UINT64_MAX);
	json_arr_begin(&j, "b");
	json_bool(&j, NULL, true);
	json_str(&j, NULL, "q\"\\\n\x01");
	json_arr_end(&j);
	json_obj_begin(&j, "c");
	json_obj_end(&j);
	json_arr_begin(&j, "d");
	json_arr_end(&j);
	json_obj_end(&j);
	fclose(f);
	if (strcmp(buf, want))
		printf("# got %s", buf);
	result(!strcmp(buf, want), pretty ? "json pretty" : "json compact");
	free(buf);
}

/* JSON written by fn(j, arg) into a string the caller frees. */
static char *json_capture(void (*fn)(struct json *j, const void *arg), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	struct json j;
	FILE *f = open_memstream(&buf, &len);

	json_init(&j, f, false);
	fn(&j, arg);
	fclose(f);
	return buf;
}

static void expect_json(char *got, const char *want, const char *name)
{
	if (strcmp(got, want))
		printf("# got  %s# want %s", got, want);
	result(!strcmp(got, want), name);
	free(got);
}

/* The attributes put into msg, parsed as a reply's top level. */
static void msg_parse(struct nl_msg *msg, struct nlattr **tb, int max)
{
	struct nlmsghdr *h = nlmsg_hdr(msg);

	memset(tb, 0, (max + 1) * sizeof(*tb));
	if (nla_parse(tb, max, nlmsg_attrdata(h, 0), nlmsg_attrlen(h, 0), NULL) < 0)
		printf("# nla_parse failed\n");
}

/* "TX_FRAMES" -> "tx_frames": how every JSON key derives from a header name */
static const char *lower(char *buf, size_t size, const char *s)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < size; i++)
		buf[i] = tolower((unsigned char)s[i]);
	buf[i] = '\0';
	return buf;
}

#define NAMED(prefix, x)	{ prefix##x, #x }

static const struct named {
	int attr;
	const char *name;
} link_names[] = {
	NAMED(ICS_LINK_A_, NODE), NAMED(ICS_LINK_A_, TX_SESSION), NAMED(ICS_LINK_A_, RX_SESSION),
	NAMED(ICS_LINK_A_, SND_UNA), NAMED(ICS_LINK_A_, SND_NXT), NAMED(ICS_LINK_A_, RCV_NXT),
	NAMED(ICS_LINK_A_, CWND), NAMED(ICS_LINK_A_, SSTHRESH), NAMED(ICS_LINK_A_, INFLIGHT),
	NAMED(ICS_LINK_A_, SRTT_US), NAMED(ICS_LINK_A_, RTTVAR_US), NAMED(ICS_LINK_A_, RTO_MS),
	NAMED(ICS_LINK_A_, MTU), NAMED(ICS_LINK_A_, QUEUED_MSGS),
	NAMED(ICS_LINK_A_, QUEUED_BYTES), NAMED(ICS_LINK_A_, QUEUE),
	NAMED(ICS_LINK_A_, OOO_QUEUED), NAMED(ICS_LINK_A_, TX_FRAMES),
	NAMED(ICS_LINK_A_, RETRANSMITS), NAMED(ICS_LINK_A_, FAST_RETRANSMITS),
	NAMED(ICS_LINK_A_, TIMEOUTS), NAMED(ICS_LINK_A_, RX_FRAMES),
	NAMED(ICS_LINK_A_, DUPLICATES), NAMED(ICS_LINK_A_, OUT_OF_ORDER),
	NAMED(ICS_LINK_A_, CRC_ERRORS), NAMED(ICS_LINK_A_, TX_ACKS), NAMED(ICS_LINK_A_, RX_ACKS),
	NAMED(ICS_LINK_A_, RESETS), NAMED(ICS_LINK_A_, MSGS_DONE),
	NAMED(ICS_LINK_A_, MSGS_FAILED), NAMED(ICS_LINK_A_, PEER_PAUSED),
}, stat_names[] = {
	NAMED(ICS_STAT_, TX_FRAMES), NAMED(ICS_STAT_, TX_BYTES), NAMED(ICS_STAT_, TX_ERRORS),
	NAMED(ICS_STAT_, RX_FRAMES), NAMED(ICS_STAT_, RX_BYTES), NAMED(ICS_STAT_, RX_BAD_LEN),
	NAMED(ICS_STAT_, RX_BAD_VERSION), NAMED(ICS_STAT_, RX_BAD_CLUSTER),
	NAMED(ICS_STAT_, RX_BAD_NODE), NAMED(ICS_STAT_, RX_BAD_CHANNEL),
	NAMED(ICS_STAT_, RX_BAD_TYPE), NAMED(ICS_STAT_, RX_BAD_FRAG),
	NAMED(ICS_STAT_, RX_DUP_FRAG), NAMED(ICS_STAT_, RX_NODE_CONFLICT),
	NAMED(ICS_STAT_, REASM_TIMEOUT), NAMED(ICS_STAT_, REASM_EVICTED),
	NAMED(ICS_STAT_, REASM_NOMEM), NAMED(ICS_STAT_, HELLO_TX), NAMED(ICS_STAT_, HELLO_RX),
	NAMED(ICS_STAT_, RX_BAD_CHECK), NAMED(ICS_STAT_, RX_BAD_SESSION),
	NAMED(ICS_STAT_, TX_RETRANSMITS), NAMED(ICS_STAT_, RX_DUP_FRAMES),
	NAMED(ICS_STAT_, RX_OOO_FRAMES), NAMED(ICS_STAT_, RX_OVER_WINDOW),
	NAMED(ICS_STAT_, TX_ACKS), NAMED(ICS_STAT_, RX_ACKS), NAMED(ICS_STAT_, TX_RESETS),
	NAMED(ICS_STAT_, RX_RESETS), NAMED(ICS_STAT_, LINK_RESETS), NAMED(ICS_STAT_, MSGS_DONE),
	NAMED(ICS_STAT_, MSGS_FAILED), NAMED(ICS_STAT_, RX_DUP_MSGS), NAMED(ICS_STAT_, TX_EAGAIN),
	NAMED(ICS_STAT_, RX_PEER_DOWN), NAMED(ICS_STAT_, TX_HOSTDOWN), NAMED(ICS_STAT_, HB_LATE),
	NAMED(ICS_STAT_, EVENTS_LOST), NAMED(ICS_STAT_, RX_BAD_HELLO), NAMED(ICS_STAT_, HB_DEFERRED),
	NAMED(ICS_STAT_, DEV_RX_DROPS),
	NAMED(ICS_STAT_, DEV_CLOSE_DROPS),
	NAMED(ICS_STAT_, TX_BUNDLES),
	NAMED(ICS_STAT_, TX_BUNDLED),
	NAMED(ICS_STAT_, RX_BUNDLES),
	NAMED(ICS_STAT_, RX_BUNDLED),
	NAMED(ICS_STAT_, RX_PAUSES),
	NAMED(ICS_STAT_, TX_PAUSES),
	NAMED(ICS_STAT_, RX_HELD),
	NAMED(ICS_STAT_, RX_HELD_FULL),
	NAMED(ICS_STAT_, RX_HELD_DROPS),
	NAMED(ICS_STAT_, RX_UNCONFIRMED),
	NAMED(ICS_STAT_, RX_AUTH_BAD),
	NAMED(ICS_STAT_, RX_NO_KEY),
	NAMED(ICS_STAT_, RX_REPLAY),
	NAMED(ICS_STAT_, TX_AUTH_ERRORS),
	NAMED(ICS_STAT_, REASM_OVERRUN),
};

/* Every ICS_LINK_A_* but UNSPEC and PAD has the header's name as its key. */
static void link_keys(void)
{
	bool ok = ARRAY_SIZE(link_names) == ICS_LINK_A_MAX - ICS_LINK_A_PAD &&
		  !ics_link_key(ICS_LINK_A_UNSPEC) && !ics_link_key(ICS_LINK_A_PAD) &&
		  !ics_link_key(ICS_LINK_A_MAX + 1);
	char want[32];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(link_names); i++) {
		const char *key = ics_link_key(link_names[i].attr);

		lower(want, sizeof(want), link_names[i].name);
		if (!key || strcmp(key, want)) {
			printf("# ICS_LINK_A_%s: key \"%s\"\n", link_names[i].name,
			       key ? key : "(none)");
			ok = false;
		}
	}
	result(ok, "link keys are the ICS_LINK_A_* names in lower case");
}

static void link_json_fn(struct json *j, const void *l)
{
	ics_link_json(j, l, 0);
}

/*
 * A link nest as the kernel would send it, with padding, an attribute newer
 * than this tool and a sparse per-channel queue; then two malformed ones.
 */
static void link_decode(void)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nlattr *tb[ICS_A_MAX + 1], *nest, *q;
	struct ics_link l;
	int err;

	nest = nla_nest_start(msg, ICS_A_LINK);
	nla_put_u32(msg, ICS_LINK_A_NODE, 3);
	nla_put_u32(msg, ICS_LINK_A_CWND, 10);
	nla_put_u32(msg, ICS_LINK_A_SRTT_US, 125);
	nla_put_u64(msg, ICS_LINK_A_PAD, 0);
	nla_put_u64(msg, ICS_LINK_A_QUEUED_BYTES, 5000000000ULL);
	q = nla_nest_start(msg, ICS_LINK_A_QUEUE);
	nla_put_u64(msg, ICS_CH_BOOT + 1, 7);
	nla_put_u64(msg, ICS_CH_CNX + 1, 48);
	nla_put_u64(msg, ICS_CHANNELS + 1, 99);	/* a 17th channel: ignored */
	nla_nest_end(msg, q);
	nla_put_u64(msg, ICS_LINK_A_FAST_RETRANSMITS, UINT64_MAX);
	nla_put_u64(msg, ICS_LINK_A_MSGS_FAILED, 2);
	nla_put_u32(msg, ICS_LINK_A_MAX + 1, 1);	/* newer than this tool */
	nla_nest_end(msg, nest);
	msg_parse(msg, tb, ICS_A_MAX);
	err = ics_link_parse(tb[ICS_A_LINK], &l);
	result(!err && l.have[ICS_LINK_A_NODE] && !l.have[ICS_LINK_A_MTU] &&
	       !l.have[ICS_LINK_A_PAD], "link nest parses");
	expect_json(json_capture(link_json_fn, &l),
		    "{\"node\": 3, \"cwnd\": 10, \"srtt_us\": 125, "
		    "\"queued_bytes\": 5000000000, \"queue\": {\"BOOT\": 7, \"PRI0\": 0, "
		    "\"PRI1\": 0, \"CFS\": 0, \"NET\": 0, \"CLSM\": 0, \"DRD\": 0, "
		    "\"TUNL\": 0, \"CLUA\": 0, \"KEVM\": 0, \"CFSR\": 0, \"RBLD\": 0, "
		    "\"KCH\": 0, \"DLM\": 0, \"TEST\": 0, \"CNX\": 48}, "
		    "\"fast_retransmits\": 18446744073709551615, \"msgs_failed\": 2}\n",
		    "link JSON: present attributes only, queue by channel name");
	nlmsg_free(msg);

	msg = nlmsg_alloc();
	nest = nla_nest_start(msg, ICS_A_LINK);
	nla_put_u32(msg, ICS_LINK_A_CWND, 10);
	nla_nest_end(msg, nest);
	msg_parse(msg, tb, ICS_A_MAX);
	result(ics_link_parse(tb[ICS_A_LINK], &l) == -EPROTO, "link without a node: EPROTO");
	nlmsg_free(msg);

	msg = nlmsg_alloc();
	nest = nla_nest_start(msg, ICS_A_LINK);
	nla_put_u32(msg, ICS_LINK_A_NODE, 3);
	nla_put_u32(msg, ICS_LINK_A_TX_FRAMES, 1);	/* a u64 */
	nla_nest_end(msg, nest);
	msg_parse(msg, tb, ICS_A_MAX);
	result(ics_link_parse(tb[ICS_A_LINK], &l) == -EPROTO, "link with a short u64: EPROTO");
	nlmsg_free(msg);
}

static void test_json_fn(struct json *j, const void *r)
{
	ics_test_json(j, r);
}

/* The generator's reply attributes and their parser. */
#define REPLY_MAX	ICS_TEST_A_MAX

struct reply_family {
	const char *name;	/* prefix of the test names */
	int sent, done, failed, error, rtt;
	icsnl_cb_t parse;
	int maxattr;
};

static const struct reply_family ics_test_replies = {
	"ics_test", ICS_TEST_A_SENT, ICS_TEST_A_DONE, ICS_TEST_A_FAILED, ICS_TEST_A_ERROR,
	ICS_TEST_A_RTT, ics_test_parse, ICS_TEST_A_MAX,
};

static const char *fam_name(char *buf, size_t size, const struct reply_family *f,
			    const char *what)
{
	snprintf(buf, size, "%s: %s", f->name, what);
	return buf;
}

/* ICS_TEST_CMD_SEND replies: sent/done/failed/error, with and without RTT. */
static void test_reply(const struct reply_family *f)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nlattr *tb[REPLY_MAX + 1], *rtt;
	struct ics_test_result r = { .sent = 5 };
	char name[96];

	nla_put_u32(msg, f->sent, 4);
	nla_put_u32(msg, f->done, 3);
	nla_put_u32(msg, f->failed, 1);
	nla_put_u32(msg, f->error, -ETIMEDOUT);	/* either sign */
	msg_parse(msg, tb, f->maxattr);
	result(!f->parse(tb, &r) && r.sent == 4 && r.done == 3 && r.failed == 1 &&
	       r.error == ETIMEDOUT && !r.have_rtt,
	       fam_name(name, sizeof(name), f, "generator reply with an error parses"));
	result(!ics_test_ok(&r, 5), fam_name(name, sizeof(name), f,
					     "4 of 5 sent, 1 failed: not a success"));
	result(!ics_test_ok(&(struct ics_test_result){ .sent = 5, .done = 5, .error = EINTR }, 5),
	       fam_name(name, sizeof(name), f, "all sent and done but an error: not a success"));
	expect_json(json_capture(test_json_fn, &r),
		    "{\"sent\": 4, \"done\": 3, \"failed\": 1, \"error\": \"ETIMEDOUT\", "
		    "\"errno\": 110}\n", fam_name(name, sizeof(name), f,
						   "generator JSON with an error"));
	nlmsg_free(msg);

	msg = nlmsg_alloc();
	memset(&r, 0, sizeof(r));
	r.sent = 9;
	nla_put_u32(msg, f->sent, 2);
	nla_put_u32(msg, f->done, 2);
	nla_put_u32(msg, f->failed, 0);
	nla_put_u32(msg, f->error, 0);
	rtt = nla_nest_start(msg, f->rtt);
	nla_put_u32(msg, ICS_RTT_A_COUNT, 2);
	nla_put_u64(msg, ICS_RTT_A_MIN_NS, 9000);
	nla_put_u64(msg, ICS_RTT_A_P50_NS, 9500);
	nla_put_u64(msg, ICS_RTT_A_P99_NS, 11000);
	nla_put_u64(msg, ICS_RTT_A_MAX_NS, 11000);
	nla_put_u64(msg, ICS_RTT_A_MEAN_NS, 10000);
	nla_put_u64(msg, ICS_RTT_A_P90_NS, 10500);
	nla_nest_end(msg, rtt);
	msg_parse(msg, tb, f->maxattr);
	result(!f->parse(tb, &r) && r.have_rtt && ics_test_ok(&r, 2) && !ics_test_ok(&r, 3),
	       fam_name(name, sizeof(name), f, "ping reply parses; ok only for the count sent"));
	expect_json(json_capture(test_json_fn, &r),
		    "{\"sent\": 2, \"done\": 2, \"failed\": 0, \"error\": null, \"errno\": 0, "
		    "\"rtt\": {\"count\": 2, \"min_ns\": 9000, \"p50_ns\": 9500, "
		    "\"p99_ns\": 11000, \"max_ns\": 11000, \"mean_ns\": 10000, "
		    "\"p90_ns\": 10500}}\n",
		    fam_name(name, sizeof(name), f, "generator JSON with round trips"));
	nlmsg_free(msg);

	/* A kernel that replies with nothing: the caller's preset count stands. */
	msg = nlmsg_alloc();
	memset(&r, 0, sizeof(r));
	r.sent = 7;
	msg_parse(msg, tb, f->maxattr);
	result(!f->parse(tb, &r) && r.sent == 7 && ics_test_ok(&r, 7),
	       fam_name(name, sizeof(name), f, "empty generator reply keeps the count"));
	nlmsg_free(msg);
}

static const struct named test_chan_names[] = {
	NAMED(ICS_TEST_C_, RX_MSGS), NAMED(ICS_TEST_C_, RX_BYTES), NAMED(ICS_TEST_C_, RX_OK),
	NAMED(ICS_TEST_C_, RX_BAD), NAMED(ICS_TEST_C_, SINKED), NAMED(ICS_TEST_C_, ANSWERS),
	NAMED(ICS_TEST_C_, ANSWER_DROPS), NAMED(ICS_TEST_C_, REFUSED),
};

/* Every ICS_TEST_C_* counter has the header's name as its key; ID and PAD none. */
static void test_chan_keys(void)
{
	bool ok = ARRAY_SIZE(test_chan_names) == ICS_TEST_C_MAX - ICS_TEST_C_ID &&
		  !ics_test_chan_key(ICS_TEST_C_UNSPEC) && !ics_test_chan_key(ICS_TEST_C_PAD) &&
		  !ics_test_chan_key(ICS_TEST_C_ID) && !ics_test_chan_key(ICS_TEST_C_MAX + 1);
	char want[32];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(test_chan_names); i++) {
		const char *key = ics_test_chan_key(test_chan_names[i].attr);

		lower(want, sizeof(want), test_chan_names[i].name);
		if (!key || strcmp(key, want)) {
			printf("# ICS_TEST_C_%s: key \"%s\"\n", test_chan_names[i].name,
			       key ? key : "(none)");
			ok = false;
		}
	}
	result(ok, "ics_test channel keys are the ICS_TEST_C_* names in lower case");
}

/* The attributes put into msg, through the GET decoder. */
static int status_parse(struct nl_msg *msg, struct ics_test_status *st)
{
	struct nlmsghdr *h = nlmsg_hdr(msg);

	memset(st, 0, sizeof(*st));
	return ics_test_status_parse(nlmsg_attrdata(h, 0), nlmsg_attrlen(h, 0), st);
}

/* ics_test_status_print() into a string the caller frees. */
static char *status_print(const struct ics_test_status *st, const struct icsnl_fmt *fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ics_test_status_print(f, st, fmt);
	fclose(f);
	return buf;
}

static void put_chan_stats(struct nl_msg *msg, int ch, uint64_t base)
{
	struct nlattr *nest = nla_nest_start(msg, ICS_TEST_A_CHANNEL_STATS);
	int i;

	nla_put_u32(msg, ICS_TEST_C_ID, ch);
	nla_put_u64(msg, ICS_TEST_C_PAD, 0);
	for (i = ICS_TEST_C_RX_MSGS; i <= ICS_TEST_C_REFUSED; i++)
		nla_put_u64(msg, i, base + i);
	nla_put_u64(msg, ICS_TEST_C_MAX + 1, 99);	/* newer than this tool */
	nla_nest_end(msg, nest);
}

/* A node's hashes: every channel's u32, zero but for the ones given. */
static void put_hashes(struct nl_msg *msg, int node, int ch, uint32_t tx, uint32_t rx)
{
	struct nlattr *nest = nla_nest_start(msg, ICS_TEST_A_NODE_HASHES), *h;
	int c;

	nla_put_u32(msg, ICS_TEST_H_NODE, node);
	h = nla_nest_start(msg, ICS_TEST_H_TX);
	for (c = 0; c < ICS_CHANNELS; c++)
		nla_put_u32(msg, c + 1, c == ch ? tx : 0);
	nla_nest_end(msg, h);
	h = nla_nest_start(msg, ICS_TEST_H_RX);
	for (c = 0; c < ICS_CHANNELS; c++)
		nla_put_u32(msg, c + 1, c == ch ? rx : 0);
	nla_nest_end(msg, h);
	nla_nest_end(msg, nest);
}

#define ZERO_CHANS(first) "{\"BOOT\": " first ", \"PRI0\": 0, \"PRI1\": 0, \"CFS\": 0, " \
	"\"NET\": 0, \"CLSM\": 0, \"DRD\": 0, \"TUNL\": 0, \"CLUA\": 0, \"KEVM\": 0, " \
	"\"CFSR\": 0, \"RBLD\": 0, \"KCH\": 0, \"DLM\": 0"

/*
 * ICS_TEST_CMD_GET: repeated channel and node nests (with padding and an
 * attribute newer than this tool), as JSON and text; then malformed ones.
 */
static void test_status(void)
{
	struct icsnl_fmt json_fmt = { .json = true }, text = { 0 }, raw = { .raw = true };
	struct ics_test_status st;
	struct nl_msg *msg;
	struct nlattr *nest;

	msg = nlmsg_alloc();
	nla_put_u32(msg, ICS_TEST_A_CHANNELS, 1U << ICS_CH_CFS | 1U << ICS_CH_KCH |
		    1U << ICS_CH_TEST);
	nla_put_u32(msg, ICS_TEST_A_QUEUED, 123456);
	put_chan_stats(msg, ICS_CH_TEST, 1000000);
	put_chan_stats(msg, ICS_CH_CFS, 0);
	put_hashes(msg, 2, ICS_CH_TEST, 0xdeadbeef, 0x1234);
	put_hashes(msg, 17, ICS_CH_BOOT, 0, 7);
	nla_put_u32(msg, ICS_TEST_A_MAX + 1, 1);		/* newer than this tool */
	result(!status_parse(msg, &st) && st.attached == (1U << 3 | 1U << 12 | 1U << 14) &&
	       st.queued == 123456 && st.chan_have[ICS_CH_TEST] && st.chan_have[ICS_CH_CFS] &&
	       !st.chan_have[ICS_CH_KCH] && st.chan[ICS_CH_CFS].v[ICS_TEST_C_REFUSED] == 10 &&
	       st.node_have[2] && st.node_have[17] && !st.node_have[1] &&
	       st.tx_hash[2][ICS_CH_TEST] == 0xdeadbeef && st.rx_hash[17][ICS_CH_BOOT] == 7,
	       "ics_test GET reply parses: every channel and node nest");
	expect_json(status_print(&st, &json_fmt),
		    "{\"attached\": [\"CFS\", \"KCH\", \"TEST\"], \"queued\": 123456, "
		    "\"channels\": {\"CFS\": {\"rx_msgs\": 3, \"rx_bytes\": 4, \"rx_ok\": 5, "
		    "\"rx_bad\": 6, \"sinked\": 7, \"answers\": 8, \"answer_drops\": 9, "
		    "\"refused\": 10}, \"TEST\": {\"rx_msgs\": 1000003, \"rx_bytes\": 1000004, "
		    "\"rx_ok\": 1000005, \"rx_bad\": 1000006, \"sinked\": 1000007, "
		    "\"answers\": 1000008, \"answer_drops\": 1000009, \"refused\": 1000010}}, "
		    "\"nodes\": {\"2\": {\"tx_hash\": " ZERO_CHANS("0") ", \"TEST\": 3735928559, "
		    "\"CNX\": 0}, \"rx_hash\": " ZERO_CHANS("0") ", \"TEST\": 4660, \"CNX\": 0}}, "
		    "\"17\": {\"tx_hash\": " ZERO_CHANS("0") ", \"TEST\": 0, \"CNX\": 0}, "
		    "\"rx_hash\": " ZERO_CHANS("7") ", \"TEST\": 0, \"CNX\": 0}}}}\n",
		    "ics_test GET JSON: attached by name, counters, hashes as integers");
	expect_json(status_print(&st, &text),
		    "attached: CFS KCH TEST\n"
		    "queued: 123k bytes\n"
		    "channel  rx_msgs  rx_bytes  rx_ok  rx_bad  sinked  answers  "
		    "answer_drops  refused\n"
		    "CFS            3         4      5       6       7        8  "
		    "           9       10\n"
		    "TEST          1m        1m     1m      1m      1m       1m  "
		    "          1m       1m\n"
		    "node 2 tx TEST=deadbeef\n"
		    "node 2 rx TEST=00001234\n"
		    "node 17 rx BOOT=00000007\n",
		    "ics_test GET text: table of counters, non-zero hashes only");
	nlmsg_free(msg);

	/* Nothing attached, nothing counted: the lines that are always there. */
	msg = nlmsg_alloc();
	nla_put_u32(msg, ICS_TEST_A_CHANNELS, 0);
	nla_put_u32(msg, ICS_TEST_A_QUEUED, 1500);
	result(!status_parse(msg, &st), "ics_test GET reply without nests parses");
	expect_json(status_print(&st, &raw), "attached: none\nqueued: 1500 bytes\n",
		    "ics_test GET text when idle, raw counts");
	expect_json(status_print(&st, &json_fmt),
		    "{\"attached\": [], \"queued\": 1500, \"channels\": {}, \"nodes\": {}}\n",
		    "ics_test GET JSON when idle");
	nlmsg_free(msg);

	msg = nlmsg_alloc();
	nest = nla_nest_start(msg, ICS_TEST_A_CHANNEL_STATS);
	nla_put_u64(msg, ICS_TEST_C_RX_MSGS, 1);
	nla_nest_end(msg, nest);
	result(status_parse(msg, &st) == -EPROTO, "ics_test channel stats without an id: EPROTO");
	nlmsg_free(msg);

	msg = nlmsg_alloc();
	put_chan_stats(msg, ICS_CHANNELS, 0);
	result(status_parse(msg, &st) == -EPROTO, "ics_test channel id out of range: EPROTO");
	nlmsg_free(msg);

	msg = nlmsg_alloc();
	put_chan_stats(msg, ICS_CH_TEST, 0);
	put_chan_stats(msg, ICS_CH_TEST, 0);
	result(status_parse(msg, &st) == -EPROTO, "ics_test channel twice: EPROTO");
	nlmsg_free(msg);

	msg = nlmsg_alloc();
	nest = nla_nest_start(msg, ICS_TEST_A_CHANNEL_STATS);
	nla_put_u32(msg, ICS_TEST_C_ID, ICS_CH_TEST);
	nla_put_u32(msg, ICS_TEST_C_RX_OK, 1);		/* a u64 */
	nla_nest_end(msg, nest);
	result(status_parse(msg, &st) == -EPROTO, "ics_test channel with a short u64: EPROTO");
	nlmsg_free(msg);

	msg = nlmsg_alloc();
	put_hashes(msg, 0, ICS_CH_TEST, 1, 1);
	result(status_parse(msg, &st) == -EPROTO, "ics_test hashes of node 0: EPROTO");
	nlmsg_free(msg);

	msg = nlmsg_alloc();
	put_hashes(msg, ICS_MAX_NODES, ICS_CH_TEST, 1, 1);
	put_hashes(msg, ICS_MAX_NODES, ICS_CH_TEST, 1, 1);
	result(status_parse(msg, &st) == -EPROTO, "ics_test hashes of a node twice: EPROTO");
	nlmsg_free(msg);

	msg = nlmsg_alloc();
	nest = nla_nest_start(msg, ICS_TEST_A_NODE_HASHES);
	nla_put_u32(msg, ICS_TEST_H_TX, 1);
	nla_nest_end(msg, nest);
	result(status_parse(msg, &st) == -EPROTO, "ics_test hashes without a node: EPROTO");
	nlmsg_free(msg);
}

/* ics_print_show() into a string the caller frees. */
static char *show_capture(const struct ics_instance *in, const struct icsnl_fmt *fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = stdout, *f;

	fflush(stdout);
	f = open_memstream(&buf, &len);
	stdout = f;		/* ics_print_show() writes to stdout */
	ics_print_show(in, fmt);
	stdout = out;
	fclose(f);
	return buf;
}

/*
 * `show -j` has every ICS_STAT_* under its lower-case name, the link
 * settings and the reassembly memory.
 */
static void show_keys(void)
{
	struct icsnl_fmt fmt = { .json = true };
	struct ics_instance in = { .state = ICS_STATE_BOUND };
	char *buf, want[64], name[32];
	size_t i;
	bool ok;

	in.have = 1ULL << ICS_A_LINK_TIMEOUT_MS | 1ULL << ICS_A_LINK_WINDOW |
		  1ULL << ICS_A_REASM_MEM | 1ULL << ICS_A_REASM_RESERVED |
		  1ULL << ICS_A_REASM_MEM_MAX;
	in.link_timeout_ms = 5000;
	in.link_window = 256;
	in.reasm_mem = 1258291;
	in.reasm_reserved = 27262976;
	in.reasm_mem_max = 268435456;
	for (i = 0; i < ARRAY_SIZE(stat_names); i++) {
		in.stats[stat_names[i].attr] = 1000 + i;
		in.stat_have[stat_names[i].attr] = true;
	}
	buf = show_capture(&in, &fmt);
	ok = ARRAY_SIZE(stat_names) == ICS_STAT_MAX - ICS_STAT_PAD - 3 &&	/* 3 retired */
	     strstr(buf, "\"link_timeout_ms\": 5000, \"link_window\": 256, "
		    "\"reasm_mem\": 1258291, \"reasm_reserved\": 27262976, "
		    "\"reasm_mem_max\": 268435456, \"stats\": {") && !strstr(buf, "stat_");
	for (i = 0; i < ARRAY_SIZE(stat_names); i++) {
		snprintf(want, sizeof(want), "\"%s\": %zu",
			 lower(name, sizeof(name), stat_names[i].name), 1000 + i);
		if (!strstr(buf, want)) {
			printf("# missing %s\n", want);
			ok = false;
		}
	}
	if (!ok)
		printf("# got %s", buf);
	result(ok, "show JSON: every ICS_STAT_* by name, link timeout and window, reassembly");
	free(buf);

	/* icstat prometheus's HELP lines: one line of text for each */
	ok = true;
	for (i = 0; i < ARRAY_SIZE(stat_names); i++) {
		const char *help = ics_stat_help(stat_names[i].attr);

		if (!help || strlen(help) < 8 || strpbrk(help, "\\\n")) {
			printf("# ICS_STAT_%s: help \"%s\"\n", stat_names[i].name,
			       help ? help : "(none)");
			ok = false;
		}
	}
	result(ok, "every ICS_STAT_* has a one-line help text");
}

/*
 * An instance reply as the kernel sends it when bound (u64s after padding):
 * decoded, and show's text and JSON of the reassembly memory and counters.
 */
static void instance_decode(void)
{
	struct icsnl_fmt text = { .json = false }, json = { .json = true };
	struct nlattr *tb[ICS_A_MAX + 1], *stats;
	struct nl_msg *msg = nlmsg_alloc();
	struct ics_instance in = {};
	char *buf;

	nla_put_u8(msg, ICS_A_STATE, ICS_STATE_BOUND);
	nla_put_u32(msg, ICS_A_LINK_WINDOW, 128);
	nla_put_u64(msg, ICS_A_PAD, 0);
	nla_put_u64(msg, ICS_A_REASM_MEM, 1258291);
	nla_put_u64(msg, ICS_A_REASM_RESERVED, 0);
	nla_put_u64(msg, ICS_A_REASM_MEM_MAX, 268435456);
	nla_put_u64(msg, ICS_A_RESET_AGE_MS, 1234);
	stats = nla_nest_start(msg, ICS_A_STATS);
	nla_put_u64(msg, ICS_STAT_REASM_NOMEM, 12345);
	nla_put_u64(msg, ICS_STAT_REASM_OVERRUN, 2);
	nla_nest_end(msg, stats);
	msg_parse(msg, tb, ICS_A_MAX);
	result(!ics_instance_parse(tb, &in) &&
	       in.have == (1ULL << ICS_A_STATE | 1ULL << ICS_A_LINK_WINDOW | 1ULL << ICS_A_PAD |
			   1ULL << ICS_A_REASM_MEM | 1ULL << ICS_A_REASM_RESERVED |
			   1ULL << ICS_A_REASM_MEM_MAX | 1ULL << ICS_A_RESET_AGE_MS |
			   1ULL << ICS_A_STATS) &&
	       in.reasm_mem == 1258291 && !in.reasm_reserved && in.reasm_mem_max == 268435456 &&
	       in.stat_have[ICS_STAT_REASM_OVERRUN] && in.stats[ICS_STAT_REASM_OVERRUN] == 2,
	       "instance reply parses: reassembly memory and reasm_overrun");
	nlmsg_free(msg);

	buf = show_capture(&in, &text);
	str_eq(buf, "state bound\nlink_window 128\nreasm_mem 1258291\nreasm_reserved 0\n"
	       "reasm_mem_max 268435456\nreset_age_ms 1234\nreasm_nomem 12k\nreasm_overrun 2\n",
	       "show text: reassembly memory in bytes, in full; counters shortened");
	free(buf);
	buf = show_capture(&in, &json);
	str_eq(buf, "{\"state\": \"bound\", \"link_window\": 128, \"reasm_mem\": 1258291, "
	       "\"reasm_reserved\": 0, \"reasm_mem_max\": 268435456, \"reset_age_ms\": 1234, "
	       "\"stats\": {\"reasm_nomem\": 12345, \"reasm_overrun\": 2}}\n",
	       "show JSON: reassembly memory in bytes, reasm_overrun");
	free(buf);
}

static void member_json_fn(struct json *j, const void *m)
{
	ics_member_json(j, m, 5000000000ULL, 0);
}

static void event_json_fn(struct json *j, const void *e)
{
	ics_event_json(j, e);
}

/*
 * A member and an event as the kernel sends them (padding, an attribute
 * newer than this tool): decoded, as JSON, and the monitor's line.
 */
static void membership(void)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 3 };
	struct nlattr *tb[ICS_A_MAX + 1], *nest;
	struct ics_event_msg e;
	struct ics_member m;
	struct nl_msg *msg;
	char line[256], buf[ICS_NUMBUF];

	msg = nlmsg_alloc();
	nest = nla_nest_start(msg, ICS_A_MEMBER);
	nla_put_u32(msg, ICS_MEMBER_A_NODE, 3);
	nla_put_u8(msg, ICS_MEMBER_A_SELF, 0);
	nla_put_u8(msg, ICS_MEMBER_A_STATE, ICS_MEMBER_DOWN);
	nla_put_u8(msg, ICS_MEMBER_A_REASON, ICS_REASON_SILENT);
	nla_put_u32(msg, ICS_MEMBER_A_INCARNATION, 77);
	nla_put(msg, ICS_MEMBER_A_ADDRESS, 6, mac);
	nla_put_u64(msg, ICS_MEMBER_A_SINCE_NS, 3000000000ULL);
	nla_put_u64(msg, ICS_MEMBER_A_LAST_HEARD_NS, 2600000000ULL);
	nla_put_u32(msg, ICS_MEMBER_A_HB_RTT_US, 120);
	nla_put_u8(msg, ICS_MEMBER_A_SEES_US, 0);
	nla_put_u32(msg, ICS_MEMBER_A_MAX + 1, 9);	/* newer than us */
	nla_nest_end(msg, nest);
	msg_parse(msg, tb, ICS_A_MAX);
	result(!ics_member_parse(tb[ICS_A_MEMBER], &m) && m.v[ICS_MEMBER_A_NODE] == 3,
	       "member nest parses");
	expect_json(json_capture(member_json_fn, &m),
		    "{\"node\": 3, \"self\": false, \"state\": \"down\", \"reason\": \"silent\", "
		    "\"incarnation\": 77, \"address\": \"02:00:00:00:00:03\", "
		    "\"since_ns\": 3000000000, \"last_heard_ns\": 2600000000, \"hb_rtt_us\": 120, "
		    "\"sees_us\": false, \"since_ago_ms\": 2000, \"last_heard_ago_ms\": 2400}\n",
		    "member JSON: names, MAC, ages from now");
	nlmsg_free(msg);

	msg = nlmsg_alloc();
	nest = nla_nest_start(msg, ICS_A_MEMBER);
	nla_put_u32(msg, ICS_MEMBER_A_NODE, 3);
	nla_put_u8(msg, ICS_MEMBER_A_STATE, 1);
	nla_put(msg, ICS_MEMBER_A_INCARNATION, 2, mac);	/* too short */
	nla_nest_end(msg, nest);
	msg_parse(msg, tb, ICS_A_MAX);
	result(ics_member_parse(tb[ICS_A_MEMBER], &m) == -EPROTO, "short member attribute: EPROTO");
	nlmsg_free(msg);

	msg = nlmsg_alloc();
	nest = nla_nest_start(msg, ICS_A_EVENT);
	nla_put_u8(msg, ICS_EVENT_A_TYPE, ICS_EVENT_NODE);
	nla_put_u64(msg, ICS_EVENT_A_REALTIME_NS, 1795000000123456789ULL);
	nla_put_u32(msg, ICS_EVENT_A_GENERATION, 12);
	nla_put_u32(msg, ICS_EVENT_A_NODE, 3);
	nla_put_u8(msg, ICS_EVENT_A_OLD_STATE, ICS_MEMBER_UP);
	nla_put_u8(msg, ICS_EVENT_A_STATE, ICS_MEMBER_DOWN);
	nla_put_u8(msg, ICS_EVENT_A_REASON, ICS_REASON_SILENT);
	nla_put_u32(msg, ICS_EVENT_A_INCARNATION, 77);
	nla_put_u32(msg, ICS_EVENT_A_SILENT_MS, 402);
	nla_put_u32(msg, ICS_EVENT_A_CURRENT_VOTES, 2);
	nla_put_u32(msg, ICS_EVENT_A_EXPECTED_VOTES, 3);
	nla_put_u32(msg, ICS_EVENT_A_QUORUM, 2);
	nla_put_u8(msg, ICS_EVENT_A_HAS_QUORUM, 1);
	nla_put_u32(msg, ICS_EVENT_A_LOST, 0);
	nla_nest_end(msg, nest);
	msg_parse(msg, tb, ICS_A_MAX);
	result(!ics_event_parse(tb[ICS_A_EVENT], &e), "event nest parses");
	ics_event_format(line, sizeof(line), &e);
	str_eq(line, "2026-11-18T11:06:40.123456+00:00 gen 12: node 3 member -> down (silent 402 ms), "
	       "incarnation 77; votes 2 of 3 expected, quorum 2: yes", "monitor line: node down");
	expect_json(json_capture(event_json_fn, &e),
		    "{\"type\": \"node\", \"realtime_ns\": 1795000000123456789, \"generation\": 12, "
		    "\"node\": 3, \"old_state\": \"member\", \"state\": \"down\", "
		    "\"reason\": \"silent\", \"incarnation\": 77, \"silent_ms\": 402, "
		    "\"current_votes\": 2, \"expected_votes\": 3, \"quorum\": 2, "
		    "\"has_quorum\": true, \"lost\": 0}\n", "event JSON");
	nlmsg_free(msg);

	str_eq(icsnl_fmt_ago(buf, 850000), "850us", "ago 850 us");
	str_eq(icsnl_fmt_ago(buf, 12345678), "12ms", "ago 12 ms");
	str_eq(icsnl_fmt_ago(buf, 3250000000ULL), "3.2s", "ago 3.2 s");
	str_eq(icsnl_fmt_ago(buf, 312000000000ULL), "5m12s", "ago 5 min 12 s");
	str_eq(icsnl_fmt_ago(buf, 7500000000000ULL), "2h05m", "ago 2 h 5 min");
}

/*
 * Test-service messages as the kernel's ics_test builds them: the vectors
 * come from selftests/ics_testmsg.py, which the selftests check against
 * the module (its jhash against the kernel's).
 */
static void msg_eq(uint8_t src, uint8_t ch, uint32_t len, uint8_t op, uint32_t seq, uint32_t arg,
		   const char *want, const char *name)
{
	uint8_t buf[64];
	char hex[2 * sizeof(buf) + 1];
	uint32_t i;

	ics_test_msg_build(buf, src, ch, len, op, seq, arg);
	for (i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", buf[i]);
	hex[2 * len] = 0;
	str_eq(hex, want, name);
}

/* Keys in base64: a known vector, round trips, and what must be refused. */
static void test_keys(void)
{
	static const char zero_to_31[] = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
	static const struct { const char *text, *why; } bad[] = {
		{ "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", "no '=' at the end" },
		{ "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh==", "31 bytes" },
		{ "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh9=", "non-zero bits left over" },
		{ "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdH*8=", "a character not of base64" },
		{ "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=A", "too long" },
		{ "", "empty" },
	};
	uint8_t key[ICS_KEY_LEN], back[ICS_KEY_LEN];
	char text[ICS_KEY_B64_LEN + 1];
	bool ok = true;
	size_t i;
	int r;

	ok = !icsnl_key_from_b64(zero_to_31, strlen(zero_to_31), key);
	for (i = 0; ok && i < ICS_KEY_LEN; i++)
		ok = key[i] == i;
	result(ok, "key: base64 of bytes 0..31 decodes to them");
	icsnl_key_to_b64(key, text);
	result(!strcmp(text, zero_to_31), "key: bytes 0..31 encode to their base64");
	ok = true;
	srand(1);
	for (r = 0; r < 1000 && ok; r++) {
		for (i = 0; i < ICS_KEY_LEN; i++)
			key[i] = rand();
		icsnl_key_to_b64(key, text);
		ok = strlen(text) == ICS_KEY_B64_LEN &&
		     !icsnl_key_from_b64(text, strlen(text), back) && !memcmp(key, back, sizeof(key));
	}
	result(ok, "key: 1000 random keys encode and decode to themselves");
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		char name[96];

		snprintf(name, sizeof(name), "key: base64 refused: %s", bad[i].why);
		result(icsnl_key_from_b64(bad[i].text, strlen(bad[i].text), key) != 0, name);
	}
}


static void hex_of(const uint8_t *b, int len, char *hex)
{
	int i;

	for (i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", b[i]);
	hex[2 * len] = 0;
}

static bool memchr_inv(const uint8_t *b, int c, size_t len)
{
	while (len--)
		if (*b++ != c)
			return true;
	return false;
}

/* BLAKE2s against RFC 7693 appendix B and Python's hashlib; the key fingerprint as ics.ko's. */
static void test_blake2s(void)
{
	uint8_t out[32], key[ICS_KEY_LEN], fpr[ICS_KEY_FPR_LEN];
	char hex[65];
	int i;

	blake2s(out, 32, "abc", 3, NULL, 0);
	hex_of(out, 32, hex);
	str_eq(hex, "508c5e8c327c14e2e1a72ba34eeb452f37458b209ed63a294d999b4c86675982",
	       "blake2s: \"abc\" (RFC 7693 appendix B)");
	blake2s(out, 32, "", 0, NULL, 0);
	hex_of(out, 32, hex);
	str_eq(hex, "69217a3079908094e11121d042354a7c1f55b6482ca1a51e1b250dfd1ed0eef9",
	       "blake2s: empty input");
	for (i = 0; i < ICS_KEY_LEN; i++)
		key[i] = i;
	ics_key_fingerprint(key, fpr);
	ics_key_fpr_hex(fpr, hex);
	str_eq(hex, "19767845cf97cbd3", "key fingerprint of bytes 0..31, as ics.ko computes it");
}

static char conf_dir[64];

/* A mode-@mode key file @name in conf_dir holding bytes @first.. */
static void conf_key_file(const char *name, int first, mode_t mode)
{
	char path[128], text[ICS_KEY_B64_LEN + 1];
	uint8_t key[ICS_KEY_LEN];
	FILE *f;
	int i;

	for (i = 0; i < ICS_KEY_LEN; i++)
		key[i] = first + i;
	icsnl_key_to_b64(key, text);
	snprintf(path, sizeof(path), "%s/%s", conf_dir, name);
	f = fopen(path, "w");
	if (!f || fprintf(f, "%s\n", text) < 0 || fclose(f) || chmod(path, mode)) {
		perror(path);
		exit(1);
	}
}

/* Read @text as a file; @want NULL: accepted, else the start of the error. */
static int conf_try(const char *text, const char *want, const char *name, struct ics_conf *c)
{
	char buf[2048], err[PATH_MAX + 256] = "";
	size_t i;
	FILE *f;
	int ret;

	/* @text's "%s" is conf_dir */
	snprintf(buf, sizeof(buf), text, conf_dir, conf_dir, conf_dir, conf_dir, conf_dir);
	f = fmemopen(buf, strlen(buf) + 1, "r");	/* not 0 bytes; a NUL ends a line */
	if (!f) {
		perror("fmemopen");
		exit(1);
	}
	ret = ics_conf_read(f, "t.conf", c, err, sizeof(err));
	fclose(f);
	if (want ? ret == 0 || strncmp(err, want, strlen(want)) : ret != 0)
		printf("# got %d \"%s\"\n", ret, err);
	/* a refused file leaves no key material behind */
	for (i = 0; ret && i < ARRAY_SIZE(c->keys); i++)
		if (memchr_inv(c->keys[i].key, 0, ICS_KEY_LEN))
			ret = 0;
	result(want ? ret != 0 && !strncmp(err, want, strlen(want)) : ret == 0, name);
	return ret;
}

static void test_conf(void)
{
	static const struct { const char *text, *want, *why; } bad[] = {
		{ "bind dev veth0 node 1\nfrob 3\n", "t.conf:2: unknown command \"frob\"",
		  "an unknown command" },
		{ "set heartbeat 5\n", "t.conf:1: heartbeat 5 out of range", "heartbeat too short" },
		{ "set misses\n", "t.conf:1: missing value after \"misses\"", "a missing value" },
		{ "set votes 2\n", "t.conf:1: votes 2 out of range 0..1", "votes out of range" },
		{ "set expected 3\n\nset expected 3\n",
		  "t.conf:3: expected given twice (line 1 first)", "a repeated setting" },
		{ "set auth maybe\n", "t.conf:1: auth \"maybe\": off, accept or require",
		  "an unknown mode" },
		{ "bind dev veth0\n", "t.conf:1: bind: missing \"node N\"", "bind without node" },
		{ "bind node 1 dev veth0\nbind node 2 dev veth0\n",
		  "t.conf:2: bind given twice (line 1 first)", "two binds" },
		{ "bind dev veth0 node 65\n", "t.conf:1: node 65 out of range 1..64",
		  "node out of range" },
		{ "prio CFS 8\n", "t.conf:1: prio: invalid priority \"8\"", "priority out of range" },
		{ "prio FOO 1\n", "t.conf:1: prio: unknown channel \"FOO\"", "unknown channel" },
		{ "prio cfs 1 # ok\nprio 3 2\n", "t.conf:2: prio of CFS given twice (line 1 first)",
		  "a channel's priority twice, by name and id" },
		{ "key add 1 %s/k1\nkey add 1 %s/k2\n", "t.conf:2: key 1 added twice (line 1 first)",
		  "a key id twice" },
		{ "key add 1 k1\n", "t.conf:1: key add: \"k1\": give the key file's absolute path",
		  "a relative key path" },
		{ "key add 1 %s/none\n", "t.conf:1: key add: ", "a missing key file" },
		{ "key add 1 %s/open\n", "t.conf:1: key add: ", "a key file others may read" },
		{ "key add 0 %s/k1\n", "t.conf:1: key id 0 out of range 1..255", "key id 0" },
		{ "key add 1 %s/k1\nkey use 2\n", "t.conf:2: key use 2: the file adds no key 2",
		  "key use of a key not in the file" },
		{ "key use 0\nset auth require\n",
		  "t.conf:2: auth require needs a key in use, and line 1 says key use 0",
		  "auth on with no key in use" },
		{ "key add 1 %s/k1\nkey add 2 %s/k2\nkey add 3 %s/k1\nkey add 4 %s/k2\nkey add 5 %s/k1\n",
		  "t.conf:5: more than 4 keys", "five keys" },
		{ "key del 1\n", "t.conf:1: key: \"add ID FILE\" or \"use ID\"", "key del" },
		{ "prio CFS 1 2\n", "t.conf:1: unexpected \"2\"", "a word too many" },
		{ "key add 1 %s/k1\nkey add 2 ?\n",
		  "t.conf:2: key add 2: no file for this key (showconf found none)",
		  "a key showconf found no file for" },
		{ "key add 1 %s/k1\nset a b c d e f g h i j k l m n o p q\n",
		  "t.conf:2: more than 16 words", "17 words, after a key" },
	};
	static struct ics_conf c;
	char name[128], long_line[1100], text[1200];
	size_t i;

	snprintf(conf_dir, sizeof(conf_dir), "/tmp/ics-conf-XXXXXX");
	if (!mkdtemp(conf_dir)) {
		perror("mkdtemp");
		exit(1);
	}
	conf_key_file("k1", 0, 0600);
	conf_key_file("k2", 100, 0600);
	conf_key_file("open", 0, 0644);

	if (!conf_try("# a whole file\n"
		      "bind dev veth0 node 3 cluster 7\n"
		      "set heartbeat 100 misses 4 votes 1 expected 3\n"
		      "  key add 2 %s/k2\t# comment\n"
		      "key add 1 %s/k1\n"
		      "key use 2\n"
		      "set auth require\n"
		      "prio CFS 7\n"
		      "prio 0 1\n", NULL, "conf: a whole file is read", &c)) {
		char hex[2 * ICS_KEY_FPR_LEN + 1];

		ics_key_fpr_hex(c.keys[1].fpr, hex);
		result(c.bind_line == 2 && !strcmp(c.dev, "veth0") && c.node == 3 &&
		       c.cluster == 7 && c.set[CONF_HEARTBEAT] == 100 && c.set[CONF_MISSES] == 4 &&
		       c.set[CONF_VOTES] == 1 && c.set[CONF_EXPECTED] == 3 &&
		       c.set[CONF_AUTH] == ICS_AUTH_REQUIRE && c.set_line[CONF_AUTH] == 7 &&
		       c.nkeys == 2 && c.keys[0].id == 2 && c.keys[0].line == 4 &&
		       c.key_lines == 4 && c.use == 2 && c.use_line == 6 &&
		       !strcmp(hex, "19767845cf97cbd3") && c.prio[ICS_CH_CFS] == 7 &&
		       c.prio_line[ICS_CH_CFS] == 8 && c.prio[0] == 1 && !c.prio_line[1],
		       "conf: a whole file: every value and line, key 1's fingerprint");
	}
	conf_try("", NULL, "conf: an empty file is read", &c);
	result(!c.bind_line && !c.nkeys && !c.use_line, "conf: an empty file sets nothing");
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(name, sizeof(name), "conf: refused with its line, no key kept: %s",
			 bad[i].why);
		conf_try(bad[i].text, bad[i].want, name, &c);
	}
	memset(long_line, 'x', sizeof(long_line) - 1);
	long_line[sizeof(long_line) - 1] = '\0';
	snprintf(text, sizeof(text), "key add 1 %%s/k1\n# %s\n", long_line);
	conf_try(text, "t.conf:2: line longer than 1024 characters",
		 "conf: refused with its line, no key kept: a line too long, after a key", &c);
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "%s/%s", conf_dir, (const char *[]){ "k1", "k2", "open" }[i]);
		unlink(name);
	}
	rmdir(conf_dir);
}

static void test_msgs(void)
{
	msg_eq(3, ICS_CH_TEST, 40, ICS_TEST_OP_ECHO, 7, 100,
	       "4943535402000000000000070000006419c2d0244a788986bbf14160e46f7ec255e536bc8662ef1d",
	       "test message: ECHO, 40 bytes");
	msg_eq(1, ICS_CH_CFS, 7, 0, 0, 0, "5928ace58aa2f5", "test message: 7 bytes, pattern only");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Round trip histograms (hist.c), against exact order statistics. */
static void test_rtt_hist(void)
{
	static struct hist a, b, ab;
	static uint64_t v[100000];
	const double q[] = { 0.5, 0.9, 0.99 };
	uint32_t pairs[4] = { 3, 1, ICS_RTT_HIST_BUCKETS, 1 };
	bool ok = true, lows = true;
	unsigned int i, k, bk;
	uint64_t x = 88172645463325252ull, e, got;
	char name[96];

	for (i = 0; i < 256; i++)
		ok &= hist_bucket(i) == i && hist_low(i) == i;
	result(ok, "hist: one bucket per value below 256 ns");
	for (i = 0, ok = true; i < 2000000 && lows; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		e = x >> (x & 63);	/* every magnitude */
		bk = hist_bucket(e);
		lows &= bk < ICS_RTT_HIST_BUCKETS && hist_low(bk) <= e &&
			(bk + 1 == ICS_RTT_HIST_BUCKETS || e < hist_low(bk + 1));
		/* a bucket holds at most 1/128 of its least value */
		lows &= bk < 256 || bk + 1 == ICS_RTT_HIST_BUCKETS ||
			(hist_low(bk + 1) - hist_low(bk)) * 128 <= hist_low(bk);
	}
	result(lows, "hist: every value in its bucket, buckets at most 1/128 wide");
	result(hist_bucket(UINT64_MAX) == ICS_RTT_HIST_BUCKETS - 1 && hist_bucket(255) == 255 &&
	       hist_bucket(256) == 256 && hist_bucket(257) == 256 && hist_bucket(258) == 257,
	       "hist: the first and last buckets");

	hist_reset(&a);
	hist_reset(&b);
	hist_reset(&ab);
	for (i = 0; i < 100000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v[i] = 1000 + x % 2000000 / (1 + (x >> 40) % 50);	/* 1 µs .. 2 ms, skewed */
		hist_add(i % 3 ? &a : &b, v[i]);
		hist_add(&ab, v[i]);
	}
	hist_merge(&a, &b);
	result(!memcmp(&a, &ab, sizeof(a)), "hist: merged halves equal the whole");
	qsort(v, 100000, sizeof(v[0]), cmp_u64);
	for (k = 0; k < 3; k++) {
		e = v[(uint64_t)(100000 * q[k])];
		got = hist_quantile(&ab, q[k]);
		snprintf(name, sizeof(name), "hist: p%g %" PRIu64 " ns within 1/256 of the exact %"
			 PRIu64, q[k] * 100, got, e);
		result((got > e ? got - e : e - got) * 256 <= e, name);
	}
	result(hist_quantile(&ab, 1) == v[99999] && ab.min == v[0] && ab.n == 100000,
	       "hist: max, min and count exact");
	hist_reset(&a);
	result(hist_add_pairs(&a, pairs, 12) == -EPROTO && hist_add_pairs(&a, pairs, 16) == -EPROTO &&
	       a.n == 0 && hist_add_pairs(&a, pairs, 8) == 0 && a.n == 1 && a.b[3] == 1 &&
	       hist_quantile(&a, 0.5) == 3, "hist: the kernel's pairs, malformed ones refused whole");
}

int main(void)
{
	printf("TAP version 13\n");

	test_keys();
	test_blake2s();
	test_conf();

	count(0, false, "0");
	count(999, false, "999");
	count(1000, false, "1k");
	count(1999, false, "1k");
	count(999999, false, "999k");
	count(1000000, false, "1m");
	count(183456789, false, "183m");
	count(1000000000ULL, false, "1g");
	count(1000000000000ULL, false, "1t");
	count(1000000000000000ULL, false, "1000t");
	count(UINT64_MAX, false, "18446744t");
	count(1000, true, "1000");
	count(183456789, true, "183456789");
	count(UINT64_MAX, true, "18446744073709551615");

	size("0", 0);
	size("1", 1);
	size("1k", 1024);
	size("16m", 16777216);
	size("16M", 16777216);
	size("4095k", 4193280);
	size("4294967295", 4294967295LL);
	size("4194303k", 4294966272LL);
	size("4294967296", -1);
	size("4194304k", -1);
	size("4096m", -1);
	size("99999999999999999999999", -1);
	size("", -1);
	size("k", -1);
	size("-1", -1);
	size("+1", -1);
	size(" 1", -1);
	size("1 ", -1);
	size("1.5k", -1);
	size("12x", -1);
	size("1kk", -1);
	size("1g", -1);
	size("0x10", -1);

	rate(0, false, "0");
	rate(0.04, false, "0.0");
	rate(12.34, false, "12.3");
	rate(999.9, false, "999.9");
	rate(999.96, false, "1.0k");
	rate(12345.6, false, "12.3k");
	rate(12345.6, true, "12345.6");
	rate(2.5e9, false, "2.5g");
	iso8601("UTC0", 0, 0, 0, "1970-01-01T00:00:00+00:00");
	iso8601("IST-5:30", 1795768205, 0, 0, "2026-11-27T14:00:05+05:30");
	iso8601("EST5", 1795768205, 999999999, 0, "2026-11-27T03:30:05-05:00");
	iso8601("EST5", 1795768205, 999999999, 3, "2026-11-27T03:30:05.999-05:00");
	iso8601("UTC0", 1795768205, 123456789, 6, "2026-11-27T08:30:05.123456+00:00");
	iso8601("UTC0", 1795768205, 5000, 9, "2026-11-27T08:30:05.000005000+00:00");
	{
		struct timespec ts = { .tv_sec = 1795768205 };
		char small[12] = "x";

		str_eq(icsnl_fmt_iso8601(small, sizeof(small), &ts, 3), "",
		       "ISO 8601 into 12 bytes: empty, not a fragment");
	}

	u32("0", 0);
	u32("42", 42);
	u32("4294967295", 4294967295LL);
	u32("4294967296", -1);
	u32("1k", -1);
	u32("", -1);
	u32("-0", -1);
	u32("two", -1);

	channel("BOOT", 0);
	channel("boot", 0);
	channel("Test", 14);
	channel("CNX", 15);
	channel("0", 0);
	channel("15", 15);
	channel("16", -1);
	channel("-1", -1);
	channel("FOO", -1);
	channel("", -1);
	channel("BOOTX", -1);
	channel("dLm", 13);
	channel("pri1", 2);
	channel("014", 14);
	channel("TEST ", -1);

	prio("0", 0);
	prio("7", ICS_PRIO_LEVELS - 1);
	prio("07", 7);
	prio("8", -1);
	prio("-1", -1);
	prio("", -1);
	prio("1k", -1);
	prio("4294967296", -1);

	us(0, "0.0");
	us(49, "0.0");
	us(50, "0.1");
	us(12345, "12.3");
	us(12350, "12.4");
	us(999950, "1000.0");
	us(UINT64_MAX, "18446744073709551.6");

	errno_name(ETIMEDOUT, "ETIMEDOUT");
	errno_name(-EAGAIN, "EAGAIN");
	errno_name(EHOSTUNREACH, "EHOSTUNREACH");
	errno_name(9999, "errno 9999");

	link_keys();
	link_decode();
	test_reply(&ics_test_replies);
	test_msgs();
	test_chan_keys();
	test_status();
	show_keys();
	instance_decode();
	setenv("TZ", "UTC", 1);
	tzset();
	membership();

	hist_labels();
	test_rtt_hist();

	json(false, "{\"a\": 18446744073709551615, \"b\": [true, \"q\\\"\\\\\\n\\u0001\"], "
	     "\"c\": {}, \"d\": []}\n");
	json(true, "{\n  \"a\": 18446744073709551615,\n  \"b\": [\n    true,\n"
	     "    \"q\\\"\\\\\\n\\u0001\"\n  ],\n  \"c\": {},\n  \"d\": []\n}\n");

	printf("1..%d\n", tests);
	if (failed)
		printf("# %d of %d failed\n", failed, tests);
	return failed ? 1 : 0;
}
