/* SPDX-License-Identifier: GPL-2.0 */
/*
 * icsnl - code shared by icstat, icsctl and icsperf: generic netlink requests
 * to the "ics" and "ics_test" families, error reporting, argument parsing,
 * number formatting, a tiny JSON writer, the `show` output, and the decoding
 * of links, generator replies and the test service's state (here, not in
 * the tools, so that test_format can check them).
 */
#ifndef ICSNL_H
#define ICSNL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <netlink/attr.h>
#include <linux/ics.h>

#define EXIT_USAGE	2	/* bad syntax, unknown command, channel or number */
#define ICS_NUMBUF	24	/* fits any u64 in decimal plus a suffix and NUL */
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Program name, set by main(): every message starts with it. */
extern const char *icsnl_prog;

void icsnl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void icsnl_usage_err(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
/* After getopt returned ':' or '?': "PROG: PREFIXunknown option ..."; exits 2. */
void icsnl_opt_err(const char *prefix, int c, char **argv) __attribute__((noreturn));
int icsnl_flush_stdout(void);

/* Arguments. All return 0 or -1 (not a number, or out of u32 range). */
int icsnl_parse_u32(const char *s, uint32_t *v);	/* plain decimal */
int icsnl_parse_size(const char *s, uint32_t *v);	/* bytes, or with k/m (1024) */
int icsnl_parse_channel(const char *s);			/* id, or -1 */
int icsnl_parse_prio(const char *s);	/* 0..ICS_PRIO_LEVELS - 1, or -1 */
uint32_t icsnl_arg_u32(const char *what, const char *s);	/* exits 2 when bad */
/* A cluster key and its base64 (ICS_KEY_B64_LEN characters and a NUL). */
#define ICS_KEY_B64_LEN	(4 * ((ICS_KEY_LEN + 2) / 3))
int icsnl_key_from_b64(const char *in, size_t len, uint8_t *key);	/* 0 or -1 */
void icsnl_key_to_b64(const uint8_t *key, char *out);
uint32_t icsnl_arg_size(const char *what, const char *s);
unsigned int icsnl_arg_channel(const char *s);
unsigned int icsnl_arg_prio(const char *s);

extern const char *const ics_channel_names[ICS_CHANNELS];
extern const char *const ics_hist_labels[ICS_HIST_ROWS];
/* The largest message size that ics_hist_row() puts in row @r < ICS_HIST_ROW_MORE. */
uint64_t ics_hist_row_max(int r);

/* Counts: raw decimal, or truncated to powers of 1000 with k/m/g/t. */
const char *icsnl_fmt_count(char *buf, uint64_t v, bool raw);
/* A rate with one decimal ("0" for none): raw, or from 1000 with k/m/g/t: "12.3k". */
const char *icsnl_fmt_rate(char *buf, double v, bool raw);
/*
 * A wall-clock time in ISO 8601 (RFC 3339) with @digits (0-9) of the second
 * and the offset: "2026-11-27T08:30:05+01:00", "2026-11-27T08:30:05.123+01:00".
 */
const char *icsnl_fmt_iso8601(char *buf, size_t len, const struct timespec *ts, int digits);
/* Nanoseconds as microseconds with one decimal, rounded: 12350 -> "12.4". */
const char *icsnl_fmt_us(char *buf, uint64_t ns);
/* errno (either sign) as its symbol: 110 -> "ETIMEDOUT"; unknown: "errno N". */
const char *icsnl_errno_name(char *buf, int err);

/* Output options shared by both tools. */
struct icsnl_fmt {
	bool json;
	bool pretty;		/* implies json */
	bool raw;		/* -n: counts as plain decimal */
};

/* A tiny JSON writer: ", " and ": " separators, or two-space indentation. */
struct json {
	FILE *f;
	bool pretty;
	bool first;		/* nothing written yet in the open container */
	int depth;
};

void json_init(struct json *j, FILE *f, bool pretty);
void json_obj_begin(struct json *j, const char *key);	/* key NULL in arrays */
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_bool(struct json *j, const char *key, bool v);
void json_str(struct json *j, const char *key, const char *s);
void json_null(struct json *j, const char *key);
void json_fixed(struct json *j, const char *key, double v, int decimals);
void json_rate(struct json *j, const char *key, double v);	/* 9 significant digits */
/* {"BOOT": v[0], ..., "CNX": v[15]}: one value per channel, by name. */
void json_chan_values(struct json *j, const char *key, const uint64_t *v);

/*
 * Netlink. Requests return 0 or -errno; icsnl_perror() reports that errno.
 * A struct icsnl speaks to one family, "ics" or "ics_test": it keeps what
 * requests and replies differ in, so that the calls below serve both.
 */
struct nl_sock;
struct nl_msg;

struct icsnl {
	struct nl_sock *sk;
	int family;
	uint8_t version;			/* genl header version of requests */
	int maxattr;				/* top-level attributes of replies */
	const struct nla_policy *policy;	/* maxattr + 1 entries */
	char extack[256];	/* the kernel's message for the last error, or "" */
};

/*
 * Called once per reply message with its top-level attributes: ICS_A_* or
 * ICS_TEST_A_*, as the family the struct icsnl was opened on.
 */
typedef int (*icsnl_cb_t)(struct nlattr **tb, void *arg);
/*
 * The same with the message's whole attribute stream, for replies that
 * repeat a top-level attribute (where tb[] keeps only the last one).
 */
typedef int (*icsnl_raw_cb_t)(const struct nlattr *attrs, int len, void *arg);

/* Both print the error themselves ("... module not loaded") and return -1. */
int icsnl_open(struct icsnl *nl);	/* the "ics" family */
int icsnl_open_test(struct icsnl *nl);	/* the "ics_test" family (ics_test.ko) */
void icsnl_close(struct icsnl *nl);
struct nl_msg *icsnl_msg(struct icsnl *nl, uint8_t cmd, int flags);
int icsnl_do(struct icsnl *nl, struct nl_msg *msg, icsnl_cb_t cb, void *arg);
int icsnl_do_raw(struct icsnl *nl, struct nl_msg *msg, icsnl_raw_cb_t cb, void *arg);
int icsnl_dump(struct icsnl *nl, uint8_t cmd, icsnl_cb_t cb, void *arg, size_t arg_len);
void icsnl_perror(const struct icsnl *nl, const char *ctx, int err);

uint64_t icsnl_get_u64(const struct nlattr *a);	/* 0 when absent */
/*
 * A nest of one value per index with attribute type index + 1 (histogram
 * rows, per-channel values): v[i] gets the u32 or u64 (size 4 or 8) of type
 * i + 1 for i < n. Shorter attributes and other types are ignored.
 */
void icsnl_parse_indexed(const struct nlattr *nest, uint64_t *v, int n, int size);

/* ICS_CMD_GET_INSTANCE and the `show` output of both tools. */
#define ICS_STATS_SLOTS	64

struct ics_instance {
	uint64_t have;		/* bit ICS_A_x: attribute x was in the reply */
	uint8_t state;
	char ifname[16];
	char crc32c[64];		/* ICS_A_CRC32C_DRIVER */
	uint8_t addr[6];
	uint32_t ifindex, node_id, cluster_id, mtu, msg_max, heartbeat_ms, heartbeat_misses;
	uint32_t link_timeout_ms, link_window;
	uint32_t votes, expected_votes, current_votes, quorum, generation, incarnation;
	uint32_t expected_votes_cfg;	/* ICS_A_EXPECTED_VOTES_CFG: as set, 0: the most seen */
	bool has_quorum;
	uint8_t auth_mode, key_tx;	/* ICS_A_AUTH_MODE, ICS_A_KEY_TX */
	unsigned int nkeys;		/* ICS_A_KEYS: only for a netns admin */
	struct {
		uint8_t id;
		uint8_t fpr[ICS_KEY_FPR_LEN];
	} keys[ICS_KEYS_MAX];
	uint64_t reset_age_ms;
	/* ICS_A_REASM_*: bytes (skb truesize) held, reserved by large messages, the bound */
	uint64_t reasm_mem, reasm_reserved, reasm_mem_max;
	uint64_t stats[ICS_STATS_SLOTS];
	bool stat_have[ICS_STATS_SLOTS];
};

int ics_get_instance(struct icsnl *nl, struct ics_instance *in);
/* An icsnl_cb_t into a zeroed struct ics_instance: 0 or -EPROTO. */
int ics_instance_parse(struct nlattr **tb, void *instance);
const char *ics_state_name(uint8_t state);
const char *ics_auth_mode_name(uint8_t mode);
void ics_print_show(const struct ics_instance *in, const struct icsnl_fmt *fmt);
/* Instance counter @i (ICS_STAT_*): its name ("rx_replay"), what it counts; NULL: none. */
const char *ics_stat_name(int i);
const char *ics_stat_help(int i);

/* ICS_CMD_GET_LINKS: one link's ICS_A_LINK nest. */
struct ics_link {
	bool have[ICS_LINK_A_MAX + 1];	/* attribute x was in the nest */
	uint64_t v[ICS_LINK_A_MAX + 1];	/* its value, for the u32 and u64 ones */
	uint64_t queue[ICS_CHANNELS];	/* ICS_LINK_A_QUEUE: bytes queued per channel */
};

int ics_link_parse(const struct nlattr *nest, struct ics_link *l);	/* 0 or -EPROTO */
const char *ics_link_key(int attr);	/* "fast_retransmits"; NULL: none */
bool ics_link_counter(int attr);	/* a count since the link began, not a state */
/*
 * One object of the "links" array: every attribute present, by
 * ics_link_key(); with @secs > 0 the counters are per second over @secs.
 */
void ics_link_json(struct json *j, const struct ics_link *l, double secs);

/* ics_test's ICS_TEST_CMD_SEND reply. */
enum { ICS_RTT_MIN, ICS_RTT_P50, ICS_RTT_P99, ICS_RTT_MAX, ICS_RTT_MEAN, ICS_RTT_P90, ICS_RTT_STATS };

struct ics_test_result {
	uint32_t sent, done, failed;
	int error;			/* positive errno of the first failure, 0: none */
	bool have_rtt;			/* ICS_TEST_A_RTT was in the reply */
	uint32_t rtt_count;
	uint64_t rtt_ns[ICS_RTT_STATS];	/* by ICS_RTT_* */
};

extern const char *const ics_rtt_names[ICS_RTT_STATS];	/* "min", "p50", ... */
int ics_test_parse(struct nlattr **tb, void *result);	/* an icsnl_cb_t */
bool ics_test_ok(const struct ics_test_result *r, uint32_t count);
void ics_test_json(struct json *j, const struct ics_test_result *r);

/*
 * A message for the test service (include/uapi/linux/ics.h, part 5) of
 * @len bytes from node @src on @channel: the header, when it fits, and the
 * pattern, which the receiver checks byte by byte.
 */
void ics_test_msg_build(uint8_t *buf, uint8_t src, uint8_t channel, uint32_t len, uint8_t op,
			uint32_t seq, uint32_t arg);
/* Rewrite the header of such a message (@seq, and so the pattern, unchanged). */
void ics_test_hdr_put(uint8_t *buf, uint8_t op, uint32_t seq, uint32_t arg);

/* ics_test's ICS_TEST_CMD_GET reply. */
struct ics_test_chan {
	bool have[ICS_TEST_C_MAX + 1];
	uint64_t v[ICS_TEST_C_MAX + 1];		/* by ICS_TEST_C_* */
};

struct ics_test_status {
	uint32_t attached;			/* bit per channel */
	uint32_t queued;			/* bytes waiting to be checked */
	bool chan_have[ICS_CHANNELS];		/* a ICS_TEST_A_CHANNEL_STATS for it */
	struct ics_test_chan chan[ICS_CHANNELS];
	bool node_have[ICS_MAX_NODES + 1];	/* a ICS_TEST_A_NODE_HASHES for it */
	uint64_t tx_hash[ICS_MAX_NODES + 1][ICS_CHANNELS];	/* by node id, channel */
	uint64_t rx_hash[ICS_MAX_NODES + 1][ICS_CHANNELS];
};

/* An icsnl_raw_cb_t into a zeroed struct ics_test_status: 0 or -EPROTO. */
int ics_test_status_parse(const struct nlattr *attrs, int len, void *status);
const char *ics_test_chan_key(int attr);	/* "answer_drops"; NULL: none */
/* `icsctl test show`: text (counts by fmt->raw) or JSON (fmt->json) to f. */
void ics_test_status_print(FILE *f, const struct ics_test_status *st,
			   const struct icsnl_fmt *fmt);

/* Membership: names of states and reasons, the view, events. */
const char *ics_member_state_name(uint8_t state);	/* "member", "down", ... */
const char *ics_reason_name(uint8_t reason);		/* "silent", "two-way", ... */
const char *icsnl_fmt_mac(char *buf, const uint8_t *mac);	/* buf: 18 bytes */
/* Nanoseconds as a short duration: "850us", "12ms", "3.2s", "5m12s", "2h05m". */
const char *icsnl_fmt_ago(char *buf, uint64_t ns);
uint64_t icsnl_monotonic_ns(void);	/* CLOCK_MONOTONIC, the kernel's ktime_get_ns() */

/* ICS_CMD_GET_MEMBERS: one ICS_A_MEMBER nest. */
struct ics_member {
	bool have[ICS_MEMBER_A_MAX + 1];
	uint64_t v[ICS_MEMBER_A_MAX + 1];	/* u8, u32 and u64 attributes */
	uint8_t addr[6], conflict_addr[6];
};

int ics_member_parse(const struct nlattr *nest, struct ics_member *m);	/* 0 or -EPROTO */
bool ics_member_counter(int attr);	/* hb_rx, hb_missed, conflicts */
/*
 * One object of the "members" array; @now_ns gives the *_ago_ms keys; with
 * @secs > 0 the counters are per second over @secs.
 */
void ics_member_json(struct json *j, const struct ics_member *m, uint64_t now_ns, double secs);

/* ICS_CMD_EVENT: one ICS_A_EVENT nest. */
struct ics_event_msg {
	bool have[ICS_EVENT_A_MAX + 1];
	uint64_t v[ICS_EVENT_A_MAX + 1];
	uint8_t addr[6];
};

int ics_event_parse(const struct nlattr *nest, struct ics_event_msg *e);	/* 0 or -EPROTO */
/* The text line of icstat monitor (no newline), or its JSON object. */
void ics_event_format(char *buf, size_t len, const struct ics_event_msg *e);
void ics_event_json(struct json *j, const struct ics_event_msg *e);

#endif /* ICSNL_H */
