// SPDX-License-Identifier: GPL-2.0
/*
 * icsnl - code shared by icstat, icsctl and icsperf (see icsnl.h).
 */
#define _GNU_SOURCE		/* strerrorname_np() */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include <linux/netlink.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/family.h>

#include "icsnl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK	270
#endif

const char *icsnl_prog = "ics";

const char *const ics_channel_names[ICS_CHANNELS] = ICS_CHANNEL_NAMES;

/* Row r holds messages of n bytes, label(r - 1) < n <= label(r); see ics_hist_row(). */
const char *const ics_hist_labels[ICS_HIST_ROWS] = {
	"0", "1", "2", "4", "8", "16", "32", "64", "128", "256", "512",
	"1k", "2k", "4k", "8k", "16k", "32k", "64k", "128k", "256k", "512k",
	"1m", "2m", "4m", "8m", "16m", "more",
};

uint64_t ics_hist_row_max(int r)
{
	return r ? 1ULL << (r - 1) : 0;
}

/* Messages: one line each, "PROG: ...". */

static void vwarn(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", icsnl_prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void icsnl_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
}

void icsnl_usage_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	exit(EXIT_USAGE);
}

void icsnl_opt_err(const char *prefix, int c, char **argv)
{
	if (c == ':')
		icsnl_usage_err("%soption \"%s\" needs a value", prefix, argv[optind - 1]);
	if (optopt)
		icsnl_usage_err("%sunknown option \"-%c\" (try \"%s help\")", prefix, optopt,
				icsnl_prog);
	icsnl_usage_err("%sunknown option \"%s\" (try \"%s help\")", prefix, argv[optind - 1],
			icsnl_prog);
}

/* Report a failed write to stdout (full disk, closed pipe): 0 or -1. */
int icsnl_flush_stdout(void)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	icsnl_err("write error: %s", strerror(errno ? errno : EIO));
	return -1;
}

/* Arguments */

static int parse_num(const char *s, uint32_t *v, bool suffix)
{
	unsigned long long n, mult = 1;
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return -1;	/* no sign, space or empty string */
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (suffix && (*end == 'k' || *end == 'K'))
		mult = 1024, end++;
	else if (suffix && (*end == 'm' || *end == 'M'))
		mult = 1024 * 1024, end++;
	if (*end || n > UINT32_MAX / mult)
		return -1;
	*v = n * mult;
	return 0;
}

int icsnl_parse_u32(const char *s, uint32_t *v)
{
	return parse_num(s, v, false);
}

int icsnl_parse_size(const char *s, uint32_t *v)
{
	return parse_num(s, v, true);
}

int icsnl_parse_channel(const char *s)
{
	uint32_t id;
	int i;

	for (i = 0; i < ICS_CHANNELS; i++)
		if (!strcasecmp(s, ics_channel_names[i]))
			return i;
	if (!icsnl_parse_u32(s, &id) && id < ICS_CHANNELS)
		return id;
	return -1;
}

int icsnl_parse_prio(const char *s)
{
	uint32_t v;

	if (icsnl_parse_u32(s, &v) || v >= ICS_PRIO_LEVELS)
		return -1;
	return v;
}

uint32_t icsnl_arg_u32(const char *what, const char *s)
{
	uint32_t v;

	if (icsnl_parse_u32(s, &v))
		icsnl_usage_err("invalid %s \"%s\" (a decimal number, 0..4294967295)", what, s);
	return v;
}

uint32_t icsnl_arg_size(const char *what, const char *s)
{
	uint32_t v;

	if (icsnl_parse_size(s, &v))
		icsnl_usage_err("invalid %s \"%s\" (%s)", what, s,
				"bytes up to 4294967295, or with suffix k or m for KiB or MiB");
	return v;
}

unsigned int icsnl_arg_channel(const char *s)
{
	char list[ICS_CHANNELS * 6] = "";
	int id = icsnl_parse_channel(s), i;

	if (id >= 0)
		return id;
	for (i = 0; i < ICS_CHANNELS; i++) {
		strcat(list, " ");
		strcat(list, ics_channel_names[i]);
	}
	icsnl_usage_err("unknown channel \"%s\"; valid channels:%s", s, list);
}

unsigned int icsnl_arg_prio(const char *s)
{
	int prio = icsnl_parse_prio(s);

	if (prio < 0)
		icsnl_usage_err("invalid priority \"%s\" (0..%d, 0 is served first)", s,
				ICS_PRIO_LEVELS - 1);
	return prio;
}

/* Counts: 999 -> "999", 1999 -> "1k", 183456789 -> "183m"; raw: plain decimal. */
const char *icsnl_fmt_count(char *buf, uint64_t v, bool raw)
{
	static const char suffix[] = "kmgt";
	int i;

	for (i = 0; !raw && v >= 1000 && i < 4; i++)
		v /= 1000;
	if (i)
		snprintf(buf, ICS_NUMBUF, "%" PRIu64 "%c", v, suffix[i - 1]);
	else
		snprintf(buf, ICS_NUMBUF, "%" PRIu64, v);
	return buf;
}

const char *icsnl_fmt_rate(char *buf, double v, bool raw)
{
	static const char suffix[] = "kmgt";
	int i;

	if (v == 0) {
		snprintf(buf, ICS_NUMBUF, "0");	/* nothing moved: as the counts say it */
		return buf;
	}
	for (i = 0; !raw && v >= 999.95 && i < 4; i++)
		v /= 1000;
	if (i)
		snprintf(buf, ICS_NUMBUF, "%.1f%c", v, suffix[i - 1]);
	else
		snprintf(buf, ICS_NUMBUF, "%.1f", v);
	return buf;
}

const char *icsnl_fmt_iso8601(char *buf, size_t len, const struct timespec *ts, int digits)
{
	static const long div[] = { 1000000000, 100000000, 10000000, 1000000, 100000, 10000,
				    1000, 100, 10, 1 };
	struct tm tm;
	char z[8];
	size_t n;

	if (digits < 0 || digits > 9)
		digits = 0;
	if (!len)
		return buf;
	buf[0] = 0;
	if (!localtime_r(&ts->tv_sec, &tm))
		return buf;
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!n) {			/* too small: nothing rather than a part */
		buf[0] = 0;
		return buf;
	}
	if (digits && n < len)
		n += snprintf(buf + n, len - n, ".%0*ld", digits, ts->tv_nsec / div[digits]);
	/* %z is +hhmm; ISO 8601's extended form (RFC 3339) is +hh:mm */
	if (n < len && strftime(z, sizeof(z), "%z", &tm) == 5)
		snprintf(buf + n, len - n, "%.3s:%s", z, z + 3);
	return buf;
}

const char *icsnl_fmt_us(char *buf, uint64_t ns)
{
	uint64_t tenths = ns / 100 + (ns % 100 >= 50);

	snprintf(buf, ICS_NUMBUF, "%" PRIu64 ".%" PRIu64, tenths / 10, tenths % 10);
	return buf;
}

const char *icsnl_errno_name(char *buf, int err)
{
	const char *name;

	if (err < 0 && err != INT32_MIN)
		err = -err;
	name = strerrorname_np(err);
	if (name)
		return name;
	snprintf(buf, ICS_NUMBUF, "errno %d", err);
	return buf;
}

/* JSON */

void json_init(struct json *j, FILE *f, bool pretty)
{
	j->f = f;
	j->pretty = pretty;
	j->first = true;
	j->depth = 0;
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_newline(struct json *j)
{
	fprintf(j->f, "\n%*s", 2 * j->depth, "");
}

/* Start a member: separator, indentation and "key": */
static void json_member(struct json *j, const char *key)
{
	if (j->depth > 0) {
		if (!j->first)
			fputs(j->pretty ? "," : ", ", j->f);
		if (j->pretty)
			json_newline(j);
	}
	j->first = false;
	if (key) {
		json_string(j->f, key);
		fputs(": ", j->f);
	}
}

static void json_begin(struct json *j, const char *key, char open)
{
	json_member(j, key);
	fputc(open, j->f);
	j->depth++;
	j->first = true;
}

static void json_end(struct json *j, char close)
{
	j->depth--;
	if (j->pretty && !j->first)
		json_newline(j);
	fputc(close, j->f);
	j->first = false;
	if (!j->depth)
		fputc('\n', j->f);
}

void json_obj_begin(struct json *j, const char *key)
{
	json_begin(j, key, '{');
}

void json_obj_end(struct json *j)
{
	json_end(j, '}');
}

void json_arr_begin(struct json *j, const char *key)
{
	json_begin(j, key, '[');
}

void json_arr_end(struct json *j)
{
	json_end(j, ']');
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	json_member(j, key);
	fprintf(j->f, "%" PRIu64, v);
}

void json_bool(struct json *j, const char *key, bool v)
{
	json_member(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json_str(struct json *j, const char *key, const char *s)
{
	json_member(j, key);
	json_string(j->f, s);
}

void json_null(struct json *j, const char *key)
{
	json_member(j, key);
	fputs("null", j->f);
}

void json_fixed(struct json *j, const char *key, double v, int decimals)
{
	json_member(j, key);
	fprintf(j->f, "%.*f", decimals, v);
}

void json_rate(struct json *j, const char *key, double v)
{
	json_member(j, key);
	fprintf(j->f, "%.9g", v);
}

void json_chan_values(struct json *j, const char *key, const uint64_t *v)
{
	int i;

	json_obj_begin(j, key);
	for (i = 0; i < ICS_CHANNELS; i++)
		json_u64(j, ics_channel_names[i], v[i]);
	json_obj_end(j);
}

/* Netlink */

static const struct nla_policy ics_policy[ICS_A_MAX + 1] = {
	[ICS_A_STATE]		= { .type = NLA_U8 },
	[ICS_A_IFINDEX]		= { .type = NLA_U32 },
	[ICS_A_IFNAME]		= { .type = NLA_STRING },
	[ICS_A_ADDRESS]		= { .minlen = 6 },
	[ICS_A_NODE_ID]		= { .type = NLA_U32 },
	[ICS_A_CLUSTER_ID]	= { .type = NLA_U32 },
	[ICS_A_MTU]		= { .type = NLA_U32 },
	[ICS_A_MSG_MAX]		= { .type = NLA_U32 },
	[ICS_A_HEARTBEAT_MS]	= { .type = NLA_U32 },
	[ICS_A_RESET_AGE_MS]	= { .type = NLA_U64 },
	[ICS_A_STATS]		= { .type = NLA_NESTED },
	[ICS_A_CHANNEL]		= { .type = NLA_NESTED },
	[ICS_A_NODE]		= { .type = NLA_NESTED },
	[ICS_A_LINK]		= { .type = NLA_NESTED },
	[ICS_A_LINK_TIMEOUT_MS]	= { .type = NLA_U32 },
	[ICS_A_LINK_WINDOW]	= { .type = NLA_U32 },
	[ICS_A_HEARTBEAT_MISSES] = { .type = NLA_U32 },
	[ICS_A_VOTES]		= { .type = NLA_U32 },
	[ICS_A_EXPECTED_VOTES]	= { .type = NLA_U32 },
	[ICS_A_EXPECTED_VOTES_CFG] = { .type = NLA_U32 },
	[ICS_A_CURRENT_VOTES]	= { .type = NLA_U32 },
	[ICS_A_QUORUM]		= { .type = NLA_U32 },
	[ICS_A_HAS_QUORUM]	= { .type = NLA_U8 },
	[ICS_A_AUTH_MODE]	= { .type = NLA_U8 },
	[ICS_A_KEY_TX]		= { .type = NLA_U8 },
	[ICS_A_KEYS]		= { .type = NLA_NESTED },
	[ICS_A_GENERATION]	= { .type = NLA_U32 },
	[ICS_A_INCARNATION]	= { .type = NLA_U32 },
	[ICS_A_MEMBER]		= { .type = NLA_NESTED },
	[ICS_A_EVENT]		= { .type = NLA_NESTED },
	[ICS_A_CRC32C_DRIVER]	= { .type = NLA_STRING },
	[ICS_A_REASM_MEM]	= { .type = NLA_U64 },
	[ICS_A_REASM_RESERVED]	= { .type = NLA_U64 },
	[ICS_A_REASM_MEM_MAX]	= { .type = NLA_U64 },
};

/*
 * ics_test's replies. Requests are checked by the kernel; this is what
 * libnl checks of a reply before a callback reads it (sizes, nests).
 */
static const struct nla_policy ics_test_policy[ICS_TEST_A_MAX + 1] = {
	[ICS_TEST_A_NODE]		= { .type = NLA_U32 },
	[ICS_TEST_A_CHANNEL]		= { .type = NLA_U32 },
	[ICS_TEST_A_SIZE]		= { .type = NLA_U32 },
	[ICS_TEST_A_COUNT]		= { .type = NLA_U32 },
	[ICS_TEST_A_FLAGS]		= { .type = NLA_U32 },
	[ICS_TEST_A_TIMEOUT_MS]		= { .type = NLA_U32 },
	[ICS_TEST_A_SENT]		= { .type = NLA_U32 },
	[ICS_TEST_A_DONE]		= { .type = NLA_U32 },
	[ICS_TEST_A_FAILED]		= { .type = NLA_U32 },
	[ICS_TEST_A_ERROR]		= { .type = NLA_U32 },
	[ICS_TEST_A_RTT]		= { .type = NLA_NESTED },
	[ICS_TEST_A_CHANNELS]		= { .type = NLA_U32 },
	[ICS_TEST_A_QUEUED]		= { .type = NLA_U32 },
	[ICS_TEST_A_CHANNEL_STATS]	= { .type = NLA_NESTED },
	[ICS_TEST_A_NODE_HASHES]	= { .type = NLA_NESTED },
};

/* valid_cb's tb[] has room for either family's attributes. */
#define TB_MAX	(ICS_A_MAX > ICS_TEST_A_MAX ? ICS_A_MAX : ICS_TEST_A_MAX)

/*
 * Connect and resolve @name. @missing is printed when the family is not
 * registered: its module is not loaded (module and family share the name).
 */
static int open_family(struct icsnl *nl, const char *name, uint8_t version, int maxattr,
		       const struct nla_policy *policy, const char *missing)
{
	struct genl_family *fam;
	struct nl_cache *cache;
	int one = 1, err;
	unsigned int have;

	memset(nl, 0, sizeof(*nl));
	nl->version = version;
	nl->maxattr = maxattr;
	nl->policy = policy;
	nl->sk = nl_socket_alloc();
	if (!nl->sk) {
		icsnl_err("netlink: %s", strerror(ENOMEM));
		return -1;
	}
	err = genl_connect(nl->sk);
	if (err < 0) {
		icsnl_err("netlink: %s", nl_geterror(err));
		goto fail;
	}
	/* Best effort: without them errors simply come without a message. */
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));

	err = genl_ctrl_alloc_cache(nl->sk, &cache);
	if (err < 0) {
		icsnl_err("netlink: resolving family \"%s\": %s", name, nl_geterror(err));
		goto fail;
	}
	fam = genl_ctrl_search_by_name(cache, name);
	nl_cache_free(cache);
	if (!fam) {
		icsnl_err("%s", missing);
		goto fail;
	}
	nl->family = genl_family_get_id(fam);
	have = genl_family_get_version(fam);
	genl_family_put(fam);
	/* Attribute numbers differ between versions: refuse rather than misread. */
	if (have != version) {
		icsnl_err("the loaded %s module speaks version %u of its netlink family, these tools "
			  "version %u: install tools and module from one release", name, have,
			  version);
		goto fail;
	}
	return 0;
fail:
	nl_socket_free(nl->sk);
	nl->sk = NULL;
	return -1;
}

int icsnl_open(struct icsnl *nl)
{
	return open_family(nl, ICS_GENL_NAME, ICS_GENL_VERSION, ICS_A_MAX, ics_policy,
			   "ics module not loaded (no generic netlink family \"" ICS_GENL_NAME
			   "\")");
}

/* ics_test.ko is loaded only where tests run: say how to get it. */
int icsnl_open_test(struct icsnl *nl)
{
	return open_family(nl, ICS_TEST_GENL_NAME, ICS_TEST_GENL_VERSION, ICS_TEST_A_MAX,
			   ics_test_policy,
			   ICS_TEST_GENL_NAME " module not loaded (no generic netlink family \""
			   ICS_TEST_GENL_NAME "\"; modprobe " ICS_TEST_GENL_NAME ")");
}

void icsnl_close(struct icsnl *nl)
{
	nl_socket_free(nl->sk);
	nl->sk = NULL;
}

struct nl_msg *icsnl_msg(struct icsnl *nl, uint8_t cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0, flags, cmd,
				 nl->version)) {
		icsnl_err("netlink: %s", strerror(ENOMEM));
		exit(1);
	}
	return msg;
}

uint64_t icsnl_get_u64(const struct nlattr *a)
{
	return a ? nla_get_u64((struct nlattr *)a) : 0;
}

void icsnl_parse_indexed(const struct nlattr *nest, uint64_t *v, int n, int size)
{
	struct nlattr *a;
	int rem, i;

	if (!nest)
		return;
	nla_for_each_nested(a, (struct nlattr *)nest, rem) {
		i = nla_type(a) - 1;	/* padding falls outside */
		if (i < 0 || i >= n || nla_len(a) < size)
			continue;
		v[i] = size == 8 ? nla_get_u64(a) : nla_get_u32(a);
	}
}

struct request {
	struct icsnl *nl;
	icsnl_cb_t cb;
	icsnl_raw_cb_t raw_cb;	/* instead of cb */
	void *arg;
	int err;		/* -errno from the kernel or from cb */
	bool done;
};

/*
 * Keep the NLMSGERR_ATTR_MSG of an error or DONE message whose payload starts
 * with hlen bytes of header (struct nlmsgerr and the request, or the int).
 */
static void extack_parse(struct icsnl *nl, struct nlmsghdr *nlh, size_t hlen)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	long len = (long)nlh->nlmsg_len - NLMSG_HDRLEN - (long)NLMSG_ALIGN(hlen);
	struct nlattr *a;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || len <= 0)
		return;
	a = (struct nlattr *)((char *)NLMSG_DATA(nlh) + NLMSG_ALIGN(hlen));
	if (nla_parse(tb, NLMSGERR_ATTR_MAX, a, len, NULL) < 0 || !tb[NLMSGERR_ATTR_MSG])
		return;
	a = tb[NLMSGERR_ATTR_MSG];
	snprintf(nl->extack, sizeof(nl->extack), "%.*s",
		 (int)strnlen(nla_data(a), nla_len(a)), (char *)nla_data(a));
}

static int valid_cb(struct nl_msg *msg, void *arg)
{
	struct request *r = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct nlattr *tb[TB_MAX + 1];
	int err = 0;

	/* Also with raw_cb: this checks every attribute against the policy. */
	if (genlmsg_parse(nlh, 0, tb, r->nl->maxattr, r->nl->policy) < 0) {
		r->err = -EPROTO;	/* malformed reply */
		return NL_STOP;
	}
	if (r->raw_cb)
		err = r->raw_cb(genlmsg_attrdata(genlmsg_hdr(nlh), 0),
				genlmsg_attrlen(genlmsg_hdr(nlh), 0), r->arg);
	else if (r->cb)
		err = r->cb(tb, r->arg);
	if (err < 0) {
		r->err = err;
		return NL_STOP;
	}
	return NL_OK;
}

static int ack_cb(struct nl_msg *msg, void *arg)
{
	struct request *r = arg;

	(void)msg;
	r->done = true;
	return NL_STOP;
}

/* NLMSG_DONE ends a dump; its payload is an int, the dump's error if < 0. */
static int finish_cb(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct request *r = arg;
	int err;

	if (nlmsg_datalen(nlh) >= (int)sizeof(err)) {
		memcpy(&err, nlmsg_data(nlh), sizeof(err));
		if (err < 0) {
			r->err = err;
			extack_parse(r->nl, nlh, sizeof(err));
		}
	}
	r->done = true;
	return NL_STOP;
}

static int error_cb(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct request *r = arg;
	size_t hlen = sizeof(*e);

	(void)nla;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED) && e->msg.nlmsg_len > NLMSG_HDRLEN)
		hlen += e->msg.nlmsg_len - NLMSG_HDRLEN;
	r->err = e->error < 0 ? e->error : -e->error;
	extack_parse(r->nl, nlh, hlen);
	r->done = true;
	return NL_STOP;
}

/* libnl's own errors (socket, sequence, parsing) as -errno */
static int nlerr_to_errno(int nlerr)
{
	switch (nlerr) {
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_PERM:
		return -EPERM;
	case NLE_MSG_TRUNC:
	case NLE_MSG_OVERFLOW:
		return -ENOBUFS;
	default:
		return -EPROTO;
	}
}

/* Send msg (freed) and wait for its replies: 0, -errno, or 1 if NLM_F_DUMP_INTR. */
static int request(struct icsnl *nl, struct nl_msg *msg, icsnl_cb_t cb, icsnl_raw_cb_t raw_cb,
		   void *arg)
{
	struct request r = { .nl = nl, .cb = cb, .raw_cb = raw_cb, .arg = arg };
	struct nl_cb *c = nl_cb_alloc(NL_CB_DEFAULT);
	int ret;

	nl->extack[0] = '\0';
	if (!c) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_cb_set(c, NL_CB_VALID, NL_CB_CUSTOM, valid_cb, &r);
	nl_cb_set(c, NL_CB_ACK, NL_CB_CUSTOM, ack_cb, &r);
	nl_cb_set(c, NL_CB_FINISH, NL_CB_CUSTOM, finish_cb, &r);
	nl_cb_err(c, NL_CB_CUSTOM, error_cb, &r);

	ret = nl_send_auto(nl->sk, msg);
	nlmsg_free(msg);
	while (ret >= 0 && !r.done && !r.err)
		ret = nl_recvmsgs(nl->sk, c);
	nl_cb_put(c);

	if (r.err)
		return r.err;
	if (ret == -NLE_DUMP_INTR)
		return 1;
	return ret < 0 ? nlerr_to_errno(-ret) : 0;
}

int icsnl_do(struct icsnl *nl, struct nl_msg *msg, icsnl_cb_t cb, void *arg)
{
	int err = request(nl, msg, cb, NULL, arg);

	return err > 0 ? -EINTR : err;
}

int icsnl_do_raw(struct icsnl *nl, struct nl_msg *msg, icsnl_raw_cb_t cb, void *arg)
{
	int err = request(nl, msg, NULL, cb, arg);

	return err > 0 ? -EINTR : err;
}

/*
 * Dump cmd, calling cb for every message. arg points to the caller's result
 * buffer of arg_len bytes, zeroed before each attempt: a dump that a reset,
 * bind or unbind interrupted (NLM_F_DUMP_INTR) is retried up to 3 times.
 */
int icsnl_dump(struct icsnl *nl, uint8_t cmd, icsnl_cb_t cb, void *arg, size_t arg_len)
{
	int tries = 0, err;

	do {
		memset(arg, 0, arg_len);
		err = request(nl, icsnl_msg(nl, cmd, NLM_F_DUMP), cb, NULL, arg);
	} while (err > 0 && ++tries <= 3);
	if (err > 0) {
		snprintf(nl->extack, sizeof(nl->extack),
			 "dump interrupted by changes 4 times in a row (NLM_F_DUMP_INTR)");
		return -EINTR;
	}
	return err;
}

/* "PROG: CTX: strerror[ (need CAP_NET_ADMIN)][: extack]" */
void icsnl_perror(const struct icsnl *nl, const char *ctx, int err)
{
	icsnl_err("%s: %s%s%s%s", ctx, strerror(-err),
		  err == -EPERM ? " (need CAP_NET_ADMIN)" : "",
		  nl && nl->extack[0] ? ": " : "", nl ? nl->extack : "");
}

/* ICS_CMD_GET_INSTANCE and `show` */

static void get_u32(const struct nlattr *a, uint32_t *v)
{
	if (a)
		*v = nla_get_u32((struct nlattr *)a);
}

_Static_assert(ICS_A_MAX < 64, "ics_instance.have: a bit per ICS_A_*");
_Static_assert(ICS_STAT_MAX < ICS_STATS_SLOTS, "ics_instance.stats: a slot per ICS_STAT_*");

int ics_instance_parse(struct nlattr **tb, void *arg)
{
	struct ics_instance *in = arg;
	struct nlattr *a;
	int i, rem;

	for (i = 0; i <= ICS_A_MAX; i++)
		if (tb[i])
			in->have |= 1ULL << i;
	if (tb[ICS_A_STATE])
		in->state = nla_get_u8(tb[ICS_A_STATE]);
	if (tb[ICS_A_IFNAME])
		snprintf(in->ifname, sizeof(in->ifname), "%s", nla_get_string(tb[ICS_A_IFNAME]));
	if (tb[ICS_A_CRC32C_DRIVER])
		snprintf(in->crc32c, sizeof(in->crc32c), "%s",
			 nla_get_string(tb[ICS_A_CRC32C_DRIVER]));
	if (tb[ICS_A_ADDRESS])
		memcpy(in->addr, nla_data(tb[ICS_A_ADDRESS]), sizeof(in->addr));
	get_u32(tb[ICS_A_IFINDEX], &in->ifindex);
	get_u32(tb[ICS_A_NODE_ID], &in->node_id);
	get_u32(tb[ICS_A_CLUSTER_ID], &in->cluster_id);
	get_u32(tb[ICS_A_MTU], &in->mtu);
	get_u32(tb[ICS_A_MSG_MAX], &in->msg_max);
	get_u32(tb[ICS_A_HEARTBEAT_MS], &in->heartbeat_ms);
	get_u32(tb[ICS_A_HEARTBEAT_MISSES], &in->heartbeat_misses);
	get_u32(tb[ICS_A_VOTES], &in->votes);
	get_u32(tb[ICS_A_EXPECTED_VOTES], &in->expected_votes);
	get_u32(tb[ICS_A_EXPECTED_VOTES_CFG], &in->expected_votes_cfg);
	get_u32(tb[ICS_A_CURRENT_VOTES], &in->current_votes);
	get_u32(tb[ICS_A_QUORUM], &in->quorum);
	get_u32(tb[ICS_A_GENERATION], &in->generation);
	get_u32(tb[ICS_A_INCARNATION], &in->incarnation);
	in->has_quorum = tb[ICS_A_HAS_QUORUM] && nla_get_u8(tb[ICS_A_HAS_QUORUM]);
	if (tb[ICS_A_AUTH_MODE])
		in->auth_mode = nla_get_u8(tb[ICS_A_AUTH_MODE]);
	if (tb[ICS_A_KEY_TX])
		in->key_tx = nla_get_u8(tb[ICS_A_KEY_TX]);
	in->nkeys = 0;
	if (tb[ICS_A_KEYS]) {
		nla_for_each_nested(a, tb[ICS_A_KEYS], rem) {
			struct nlattr *kb[ICS_KEY_A_MAX + 1] = {}, *ka;
			int krem;

			if (nla_type(a) != ICS_KEY_A_KEY || in->nkeys == ICS_KEYS_MAX)
				continue;
			nla_for_each_nested(ka, a, krem)
				if (nla_type(ka) <= ICS_KEY_A_MAX)
					kb[nla_type(ka)] = ka;
			if (!kb[ICS_KEY_A_ID] || nla_len(kb[ICS_KEY_A_ID]) < 1 ||
			    !kb[ICS_KEY_A_FINGERPRINT] ||
			    nla_len(kb[ICS_KEY_A_FINGERPRINT]) != ICS_KEY_FPR_LEN)
				return -EPROTO;
			in->keys[in->nkeys].id = nla_get_u8(kb[ICS_KEY_A_ID]);
			memcpy(in->keys[in->nkeys].fpr, nla_data(kb[ICS_KEY_A_FINGERPRINT]),
			       ICS_KEY_FPR_LEN);
			in->nkeys++;
		}
	}
	get_u32(tb[ICS_A_LINK_TIMEOUT_MS], &in->link_timeout_ms);
	get_u32(tb[ICS_A_LINK_WINDOW], &in->link_window);
	in->reset_age_ms = icsnl_get_u64(tb[ICS_A_RESET_AGE_MS]);
	in->reasm_mem = icsnl_get_u64(tb[ICS_A_REASM_MEM]);
	in->reasm_reserved = icsnl_get_u64(tb[ICS_A_REASM_RESERVED]);
	in->reasm_mem_max = icsnl_get_u64(tb[ICS_A_REASM_MEM_MAX]);
	if (tb[ICS_A_STATS]) {
		nla_for_each_nested(a, tb[ICS_A_STATS], rem) {
			i = nla_type(a);
			if (i > ICS_STAT_PAD && i < ICS_STATS_SLOTS && nla_len(a) >= 8) {
				in->stats[i] = nla_get_u64(a);
				in->stat_have[i] = true;
			}
		}
	}
	return 0;
}

int ics_get_instance(struct icsnl *nl, struct ics_instance *in)
{
	memset(in, 0, sizeof(*in));
	return icsnl_do(nl, icsnl_msg(nl, ICS_CMD_GET_INSTANCE, 0), ics_instance_parse, in);
}

const char *ics_auth_mode_name(uint8_t mode)
{
	switch (mode) {
	case ICS_AUTH_OFF:
		return "off";
	case ICS_AUTH_ACCEPT:
		return "accept";
	case ICS_AUTH_REQUIRE:
		return "require";
	default:
		return "unknown";
	}
}

const char *ics_state_name(uint8_t state)
{
	switch (state) {
	case ICS_STATE_UNUSED:
		return "unused";
	case ICS_STATE_BOUND:
		return "bound";
	case ICS_STATE_UNBOUND:
		return "unbound";
	default:
		return "unknown";
	}
}

/* Instance counters: their names (as in JSON) and what they count. */
static const struct {
	const char *name, *help;
} stats_info[ICS_STATS_SLOTS] = {
	[ICS_STAT_TX_FRAMES] = { "tx_frames",
		"Frames handed to the NIC" },
	[ICS_STAT_TX_BYTES] = { "tx_bytes",
		"Bytes of the frames handed to the NIC, ics header included" },
	[ICS_STAT_TX_ERRORS] = { "tx_errors",
		"Frames the NIC refused or we could not build" },
	[ICS_STAT_RX_FRAMES] = { "rx_frames",
		"Frames that passed every check" },
	[ICS_STAT_RX_BYTES] = { "rx_bytes",
		"Bytes of the frames that passed every check, ics header included" },
	[ICS_STAT_RX_BAD_LEN] = { "rx_bad_len",
		"Frames dropped: shorter than the header or their fragment length" },
	[ICS_STAT_RX_BAD_VERSION] = { "rx_bad_version",
		"Frames dropped: another wire format version" },
	[ICS_STAT_RX_BAD_CLUSTER] = { "rx_bad_cluster",
		"Frames dropped: another cluster id" },
	[ICS_STAT_RX_BAD_NODE] = { "rx_bad_node",
		"Frames dropped: node out of range or not us, or a bad source MAC" },
	[ICS_STAT_RX_BAD_CHANNEL] = { "rx_bad_channel",
		"Frames dropped: channel out of range" },
	[ICS_STAT_RX_BAD_TYPE] = { "rx_bad_type",
		"Frames dropped: unknown frame type or flags" },
	[ICS_STAT_RX_BAD_FRAG] = { "rx_bad_frag",
		"Frames dropped: fragment fields inconsistent" },
	[ICS_STAT_RX_DUP_FRAG] = { "rx_dup_frag",
		"Fragments dropped: overlapping one held" },
	[ICS_STAT_RX_NODE_CONFLICT] = { "rx_node_conflict",
		"Frames dropped: a node id claimed by a second MAC" },
	[ICS_STAT_REASM_TIMEOUT] = { "reasm_timeout",
		"Partial messages dropped (silence, new session...)" },
	[ICS_STAT_REASM_EVICTED] = { "reasm_evicted",
		"Partial messages pushed out by newer" },
	[ICS_STAT_REASM_NOMEM] = { "reasm_nomem",
		"Fragments dropped: over the reassembly bound" },
	[ICS_STAT_HELLO_TX] = { "hello_tx",
		"Heartbeat (hello) frames sent" },
	[ICS_STAT_HELLO_RX] = { "hello_rx",
		"Heartbeat (hello) frames received" },
	[ICS_STAT_RX_BAD_CHECK] = { "rx_bad_check",
		"Frames dropped: CRC32C mismatch" },
	[ICS_STAT_RX_BAD_SESSION] = { "rx_bad_session",
		"Frames dropped: a session or incarnation not taken" },
	[ICS_STAT_TX_RETRANSMITS] = { "tx_retransmits",
		"Data frames sent again" },
	[ICS_STAT_RX_DUP_FRAMES] = { "rx_dup_frames",
		"Data frames received twice" },
	[ICS_STAT_RX_OOO_FRAMES] = { "rx_ooo_frames",
		"Data frames received ahead of a gap" },
	[ICS_STAT_RX_OVER_WINDOW] = { "rx_over_window",
		"Data frames beyond the receive window" },
	[ICS_STAT_TX_ACKS] = { "tx_acks",
		"ACK frames sent" },
	[ICS_STAT_RX_ACKS] = { "rx_acks",
		"ACK frames received" },
	[ICS_STAT_TX_RESETS] = { "tx_resets",
		"RESET frames sent" },
	[ICS_STAT_RX_RESETS] = { "rx_resets",
		"RESET frames received" },
	[ICS_STAT_LINK_RESETS] = { "link_resets",
		"Send sessions restarted" },
	[ICS_STAT_MSGS_DONE] = { "msgs_done",
		"Messages delivered and acknowledged" },
	[ICS_STAT_MSGS_FAILED] = { "msgs_failed",
		"Messages reported failed to the sender" },
	[ICS_STAT_RX_DUP_MSGS] = { "rx_dup_msgs",
		"Whole messages received again after a reset" },
	[ICS_STAT_TX_EAGAIN] = { "tx_eagain",
		"Sends refused: queue limit" },
	[ICS_STAT_RX_PEER_DOWN] = { "rx_peer_down",
		"Frames dropped: from a node held down or left" },
	[ICS_STAT_TX_HOSTDOWN] = { "tx_hostdown",
		"Sends refused: the node is down or left" },
	[ICS_STAT_HB_LATE] = { "hb_late",
		"Heartbeat timer runs an interval late" },
	[ICS_STAT_EVENTS_LOST] = { "events_lost",
		"Membership events dropped: queue full, no memory" },
	[ICS_STAT_RX_BAD_HELLO] = { "rx_bad_hello",
		"Heartbeats with a field out of range, or out of order" },
	[ICS_STAT_HB_DEFERRED] = { "hb_deferred",
		"Failure decisions deferred: the receive queue busy" },
	[ICS_STAT_DEV_RX_DROPS] = { "dev_rx_drops",
		"/dev/ics messages dropped at a reader (0: a full reader refuses, see rx_held)" },
	[ICS_STAT_DEV_CLOSE_DROPS] = { "dev_close_drops",
		"/dev/ics: messages unread when their file closed" },
	[ICS_STAT_TX_BUNDLES] = { "tx_bundles",
		"Data frames sent carrying several messages" },
	[ICS_STAT_TX_BUNDLED] = { "tx_bundled",
		"Messages sent in bundles" },
	[ICS_STAT_RX_BUNDLES] = { "rx_bundles",
		"Bundles received in order" },
	[ICS_STAT_RX_BUNDLED] = { "rx_bundled",
		"Messages received in bundles" },
	[ICS_STAT_RX_PAUSES] = { "rx_pauses",
		"Channels our receivers paused (flow control)" },
	[ICS_STAT_RX_HELD] = { "rx_held",
		"Messages a handler refused, held for it" },
	[ICS_STAT_RX_HELD_FULL] = { "rx_held_full",
		"Data frames not taken: too much held for the channel" },
	[ICS_STAT_RX_HELD_DROPS] = { "rx_held_drops",
		"Held messages dropped: their sender restarted, unbind" },
	[ICS_STAT_RX_UNCONFIRMED] = { "rx_unconfirmed",
		"Heartbeats of a claim not confirmed yet" },
	[ICS_STAT_RX_AUTH_BAD] = { "rx_auth_bad",
		"Signed frames dropped: the tag did not check" },
	[ICS_STAT_RX_NO_KEY] = { "rx_no_key",
		"Frames dropped: unsigned where a key is required, or under a key not held" },
	[ICS_STAT_RX_REPLAY] = { "rx_replay",
		"Signed frames dropped: the counter was seen or is too old" },
	[ICS_STAT_TX_AUTH_ERRORS] = { "tx_auth_errors",
		"Frames not sent: no tag (key gone, counter spent)" },
	[ICS_STAT_REASM_OVERRUN] = { "reasm_overrun",
		"Large messages dropped past reasm_mem_max: their session reset, resent" },
	[ICS_STAT_TX_PAUSES] = { "tx_pauses",
		"Peers paused a channel for us" },
};

/* One `show` line or JSON member; count selects the k/m/g/t formatting. */
static void show_u64(struct json *j, const struct icsnl_fmt *fmt, const char *key,
		     uint64_t v, bool count)
{
	char buf[ICS_NUMBUF];

	if (j)
		json_u64(j, key, v);
	else
		printf("%s %s\n", key, icsnl_fmt_count(buf, v, !count || fmt->raw));
}

static void show_str(struct json *j, const char *key, const char *s)
{
	if (j)
		json_str(j, key, s);
	else
		printf("%s %s\n", key, s);
}

const char *ics_stat_name(int i)
{
	return i >= 0 && i < ICS_STATS_SLOTS ? stats_info[i].name : NULL;
}

const char *ics_stat_help(int i)
{
	return i >= 0 && i < ICS_STATS_SLOTS ? stats_info[i].help : NULL;
}

static bool have(const struct ics_instance *in, int attr)
{
	return in->have & (1ULL << attr);
}

/* Installed keys: ids and fingerprints (hex), never the keys. */
static void show_keys(struct json *j, const struct ics_instance *in)
{
	char hex[2 * ICS_KEY_FPR_LEN + 1];
	unsigned int i, k;

	if (j)
		json_arr_begin(j, "keys");
	else
		printf("keys");
	for (i = 0; i < in->nkeys; i++) {
		for (k = 0; k < ICS_KEY_FPR_LEN; k++)
			snprintf(hex + 2 * k, 3, "%02x", in->keys[i].fpr[k]);
		if (j) {
			json_obj_begin(j, NULL);
			json_u64(j, "id", in->keys[i].id);
			json_str(j, "fingerprint", hex);
			json_obj_end(j);
		} else {
			printf(" %u:%s", in->keys[i].id, hex);
		}
	}
	if (j)
		json_arr_end(j);
	else
		printf("%s\n", in->nkeys ? "" : " none");
}

void ics_print_show(const struct ics_instance *in, const struct icsnl_fmt *fmt)
{
	struct json json, *j = NULL;
	char key[24], mac[18];
	int i;

	if (fmt->json) {
		j = &json;
		json_init(j, stdout, fmt->pretty);
		json_obj_begin(j, NULL);
	}
	show_str(j, "state", ics_state_name(in->state));
	if (have(in, ICS_A_IFNAME))
		show_str(j, "ifname", in->ifname);
	if (have(in, ICS_A_IFINDEX))
		show_u64(j, fmt, "ifindex", in->ifindex, false);
	if (have(in, ICS_A_ADDRESS)) {
		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", in->addr[0],
			 in->addr[1], in->addr[2], in->addr[3], in->addr[4], in->addr[5]);
		show_str(j, "address", mac);
	}
	if (have(in, ICS_A_NODE_ID))
		show_u64(j, fmt, "node_id", in->node_id, false);
	if (have(in, ICS_A_CLUSTER_ID))
		show_u64(j, fmt, "cluster_id", in->cluster_id, false);
	if (have(in, ICS_A_MTU))
		show_u64(j, fmt, "mtu", in->mtu, false);
	if (have(in, ICS_A_MSG_MAX))
		show_u64(j, fmt, "msg_max", in->msg_max, false);
	if (have(in, ICS_A_CRC32C_DRIVER))
		show_str(j, "crc32c_driver", in->crc32c);
	if (have(in, ICS_A_INCARNATION))
		show_u64(j, fmt, "incarnation", in->incarnation, false);
	if (have(in, ICS_A_HEARTBEAT_MS))
		show_u64(j, fmt, "heartbeat_ms", in->heartbeat_ms, false);
	if (have(in, ICS_A_HEARTBEAT_MISSES))
		show_u64(j, fmt, "heartbeat_misses", in->heartbeat_misses, false);
	if (have(in, ICS_A_VOTES))
		show_u64(j, fmt, "votes", in->votes, false);
	if (have(in, ICS_A_EXPECTED_VOTES_CFG))
		show_u64(j, fmt, "expected_votes_cfg", in->expected_votes_cfg, false);
	if (have(in, ICS_A_GENERATION))
		show_u64(j, fmt, "generation", in->generation, false);
	if (have(in, ICS_A_CURRENT_VOTES))
		show_u64(j, fmt, "current_votes", in->current_votes, false);
	if (have(in, ICS_A_EXPECTED_VOTES))
		show_u64(j, fmt, "expected_votes", in->expected_votes, false);
	if (have(in, ICS_A_QUORUM))
		show_u64(j, fmt, "quorum", in->quorum, false);
	if (have(in, ICS_A_HAS_QUORUM)) {
		if (j)
			json_bool(j, "has_quorum", in->has_quorum);
		else
			show_str(j, "has_quorum", in->has_quorum ? "yes" : "no");
	}
	if (have(in, ICS_A_AUTH_MODE))
		show_str(j, "auth", ics_auth_mode_name(in->auth_mode));
	if (have(in, ICS_A_KEY_TX))
		show_u64(j, fmt, "key_tx", in->key_tx, false);
	if (have(in, ICS_A_KEYS))
		show_keys(j, in);
	if (have(in, ICS_A_LINK_TIMEOUT_MS))
		show_u64(j, fmt, "link_timeout_ms", in->link_timeout_ms, false);
	if (have(in, ICS_A_LINK_WINDOW))
		show_u64(j, fmt, "link_window", in->link_window, false);
	if (have(in, ICS_A_REASM_MEM))
		show_u64(j, fmt, "reasm_mem", in->reasm_mem, false);
	if (have(in, ICS_A_REASM_RESERVED))
		show_u64(j, fmt, "reasm_reserved", in->reasm_reserved, false);
	if (have(in, ICS_A_REASM_MEM_MAX))
		show_u64(j, fmt, "reasm_mem_max", in->reasm_mem_max, false);
	if (have(in, ICS_A_RESET_AGE_MS))
		show_u64(j, fmt, "reset_age_ms", in->reset_age_ms, false);
	if (j)
		json_obj_begin(j, "stats");
	for (i = 0; i < ICS_STATS_SLOTS; i++) {
		if (!in->stat_have[i])
			continue;
		if (!stats_info[i].name)	/* a counter newer than this tool */
			snprintf(key, sizeof(key), "stat_%d", i);
		show_u64(j, fmt, stats_info[i].name ? stats_info[i].name : key, in->stats[i],
			 true);
	}
	if (j) {
		json_obj_end(j);
		json_obj_end(j);
	}
}

/* ICS_CMD_GET_LINKS */

/* Key (the ICS_LINK_A_* name in lower case) and width: 4, 8, or 0 for the nest. */
static const struct {
	const char *key;
	int size;
} link_attrs[ICS_LINK_A_MAX + 1] = {
	[ICS_LINK_A_NODE]		= { "node", 4 },
	[ICS_LINK_A_TX_SESSION]		= { "tx_session", 4 },
	[ICS_LINK_A_RX_SESSION]		= { "rx_session", 4 },
	[ICS_LINK_A_SND_UNA]		= { "snd_una", 4 },
	[ICS_LINK_A_SND_NXT]		= { "snd_nxt", 4 },
	[ICS_LINK_A_RCV_NXT]		= { "rcv_nxt", 4 },
	[ICS_LINK_A_CWND]		= { "cwnd", 4 },
	[ICS_LINK_A_SSTHRESH]		= { "ssthresh", 4 },
	[ICS_LINK_A_INFLIGHT]		= { "inflight", 4 },
	[ICS_LINK_A_SRTT_US]		= { "srtt_us", 4 },
	[ICS_LINK_A_RTTVAR_US]		= { "rttvar_us", 4 },
	[ICS_LINK_A_RTO_MS]		= { "rto_ms", 4 },
	[ICS_LINK_A_MTU]		= { "mtu", 4 },
	[ICS_LINK_A_QUEUED_MSGS]	= { "queued_msgs", 4 },
	[ICS_LINK_A_QUEUED_BYTES]	= { "queued_bytes", 8 },
	[ICS_LINK_A_QUEUE]		= { "queue", 0 },
	[ICS_LINK_A_OOO_QUEUED]		= { "ooo_queued", 4 },
	[ICS_LINK_A_TX_FRAMES]		= { "tx_frames", 8 },
	[ICS_LINK_A_RETRANSMITS]	= { "retransmits", 8 },
	[ICS_LINK_A_FAST_RETRANSMITS]	= { "fast_retransmits", 8 },
	[ICS_LINK_A_TIMEOUTS]		= { "timeouts", 8 },
	[ICS_LINK_A_RX_FRAMES]		= { "rx_frames", 8 },
	[ICS_LINK_A_DUPLICATES]		= { "duplicates", 8 },
	[ICS_LINK_A_OUT_OF_ORDER]	= { "out_of_order", 8 },
	[ICS_LINK_A_CRC_ERRORS]		= { "crc_errors", 8 },
	[ICS_LINK_A_TX_ACKS]		= { "tx_acks", 8 },
	[ICS_LINK_A_RX_ACKS]		= { "rx_acks", 8 },
	[ICS_LINK_A_RESETS]		= { "resets", 8 },
	[ICS_LINK_A_MSGS_DONE]		= { "msgs_done", 8 },
	[ICS_LINK_A_MSGS_FAILED]	= { "msgs_failed", 8 },
	[ICS_LINK_A_PEER_PAUSED]	= { "peer_paused", 4 },
};

const char *ics_link_key(int attr)
{
	return attr >= 0 && attr <= ICS_LINK_A_MAX ? link_attrs[attr].key : NULL;
}

bool ics_link_counter(int attr)
{
	return attr >= ICS_LINK_A_TX_FRAMES && attr <= ICS_LINK_A_MSGS_FAILED;
}

int ics_link_parse(const struct nlattr *nest, struct ics_link *l)
{
	struct nlattr *tb[ICS_LINK_A_MAX + 1], *a;
	int i;

	memset(l, 0, sizeof(*l));
	if (!nest || nla_parse_nested(tb, ICS_LINK_A_MAX, (struct nlattr *)nest, NULL) < 0 ||
	    !tb[ICS_LINK_A_NODE])
		return -EPROTO;
	for (i = 0; i <= ICS_LINK_A_MAX; i++) {
		a = tb[i];
		if (!a || !link_attrs[i].key)
			continue;	/* absent, or padding */
		if (nla_len(a) < link_attrs[i].size)
			return -EPROTO;
		if (link_attrs[i].size == 8)
			l->v[i] = nla_get_u64(a);
		else if (link_attrs[i].size == 4)
			l->v[i] = nla_get_u32(a);
		else
			icsnl_parse_indexed(a, l->queue, ICS_CHANNELS, 8);
		l->have[i] = true;
	}
	return 0;
}

void ics_link_json(struct json *j, const struct ics_link *l, double secs)
{
	int i;

	json_obj_begin(j, NULL);
	for (i = 0; i <= ICS_LINK_A_MAX; i++) {
		if (!l->have[i])
			continue;
		if (i == ICS_LINK_A_QUEUE)
			json_chan_values(j, link_attrs[i].key, l->queue);
		else if (secs > 0 && ics_link_counter(i))
			json_rate(j, link_attrs[i].key, l->v[i] / secs);
		else
			json_u64(j, link_attrs[i].key, l->v[i]);
	}
	json_obj_end(j);
}

/* ics_test's generator (ICS_TEST_CMD_SEND) */

const char *const ics_rtt_names[ICS_RTT_STATS] = { "min", "p50", "p99", "max", "mean", "p90" };

static const int rtt_attrs[ICS_RTT_STATS] = {
	ICS_RTT_A_MIN_NS, ICS_RTT_A_P50_NS, ICS_RTT_A_P99_NS, ICS_RTT_A_MAX_NS, ICS_RTT_A_MEAN_NS,
	ICS_RTT_A_P90_NS,
};

static const struct nla_policy rtt_policy[ICS_RTT_A_MAX + 1] = {
	[ICS_RTT_A_COUNT]	= { .type = NLA_U32 },
	[ICS_RTT_A_MIN_NS]	= { .type = NLA_U64 },
	[ICS_RTT_A_P50_NS]	= { .type = NLA_U64 },
	[ICS_RTT_A_P99_NS]	= { .type = NLA_U64 },
	[ICS_RTT_A_MAX_NS]	= { .type = NLA_U64 },
	[ICS_RTT_A_MEAN_NS]	= { .type = NLA_U64 },
	[ICS_RTT_A_P90_NS]	= { .type = NLA_U64 },
};

/* ics_test's ICS_TEST_CMD_SEND reply. */
int ics_test_parse(struct nlattr **tb, void *result)
{
	struct ics_test_result *r = result;
	struct nlattr *t[ICS_RTT_A_MAX + 1];
	int i;

	get_u32(tb[ICS_TEST_A_SENT], &r->sent);
	get_u32(tb[ICS_TEST_A_DONE], &r->done);
	get_u32(tb[ICS_TEST_A_FAILED], &r->failed);
	if (tb[ICS_TEST_A_ERROR]) {
		uint32_t e = nla_get_u32(tb[ICS_TEST_A_ERROR]);

		if (e > INT32_MAX)	/* either sign means the same errno */
			e = -e;
		r->error = e <= INT32_MAX ? (int)e : EPROTO;
	}
	if (!tb[ICS_TEST_A_RTT])
		return 0;
	if (nla_parse_nested(t, ICS_RTT_A_MAX, tb[ICS_TEST_A_RTT], rtt_policy) < 0)
		return -EPROTO;
	r->have_rtt = true;
	get_u32(t[ICS_RTT_A_COUNT], &r->rtt_count);
	for (i = 0; i < ICS_RTT_STATS; i++)
		r->rtt_ns[i] = icsnl_get_u64(t[rtt_attrs[i]]);
	return 0;
}

/* The kernel's jhash_3words() (include/linux/jhash.h). */
static uint32_t rol32(uint32_t x, int k)
{
	return x << k | x >> (32 - k);
}

static uint32_t jhash_3words(uint32_t a, uint32_t b, uint32_t c, uint32_t initval)
{
	uint32_t iv = initval + 0xdeadbeef + (3 << 2);

	a += iv;
	b += iv;
	c += iv;
	c ^= b; c -= rol32(b, 14);
	a ^= c; a -= rol32(c, 11);
	b ^= a; b -= rol32(a, 25);
	c ^= b; c -= rol32(b, 16);
	a ^= c; a -= rol32(c, 4);
	b ^= a; b -= rol32(a, 14);
	c ^= b; c -= rol32(b, 24);
	return c;
}

void ics_test_hdr_put(uint8_t *buf, uint8_t op, uint32_t seq, uint32_t arg)
{
	struct ics_test_hdr h = {
		.magic = htonl(ICS_TEST_MAGIC),
		.op = op,
		.seq = htonl(seq),
		.arg = htonl(arg),
	};

	memcpy(buf, &h, sizeof(h));
}

void ics_test_msg_build(uint8_t *buf, uint8_t src, uint8_t channel, uint32_t len, uint8_t op,
			uint32_t seq, uint32_t arg)
{
	uint32_t i = 0, seed, w;

	if (len < sizeof(struct ics_test_hdr)) {
		seq = 0;	/* pattern only */
	} else {
		ics_test_hdr_put(buf, op, seq, arg);
		i = sizeof(struct ics_test_hdr);
	}
	/* byte i is byte i % 4 of little-endian word i / 4 */
	seed = jhash_3words(seq, len, (uint32_t)src << 8 | channel, 0x1c5);
	for (; i < len; i++) {
		w = (i / 4 + 1) * 0x9E3779B1u ^ seed;
		buf[i] = w >> (8 * (i % 4));
	}
}

/* Every message asked for was queued, none failed, no error. */
bool ics_test_ok(const struct ics_test_result *r, uint32_t count)
{
	return r->sent == count && !r->failed && !r->error;
}

void ics_test_json(struct json *j, const struct ics_test_result *r)
{
	char buf[ICS_NUMBUF], key[16];
	int i;

	json_obj_begin(j, NULL);
	json_u64(j, "sent", r->sent);
	json_u64(j, "done", r->done);
	json_u64(j, "failed", r->failed);
	if (r->error)
		json_str(j, "error", icsnl_errno_name(buf, r->error));
	else
		json_null(j, "error");
	json_u64(j, "errno", r->error);
	if (r->have_rtt) {
		json_obj_begin(j, "rtt");
		json_u64(j, "count", r->rtt_count);
		for (i = 0; i < ICS_RTT_STATS; i++) {
			snprintf(key, sizeof(key), "%s_ns", ics_rtt_names[i]);
			json_u64(j, key, r->rtt_ns[i]);
		}
		json_obj_end(j);
	}
	json_obj_end(j);
}

/* Membership */

const char *ics_member_state_name(uint8_t state)
{
	switch (state) {
	case ICS_MEMBER_NONE:
		return "none";
	case ICS_MEMBER_JOINING:
		return "joining";
	case ICS_MEMBER_UP:
		return "member";
	case ICS_MEMBER_DOWN:
		return "down";
	case ICS_MEMBER_LEFT:
		return "left";
	default:
		return "unknown";
	}
}

const char *ics_reason_name(uint8_t reason)
{
	static const char *const names[] = {
		[ICS_REASON_NONE] = "-",
		[ICS_REASON_HEARD] = "heard",
		[ICS_REASON_TWO_WAY] = "two-way",
		[ICS_REASON_ONE_WAY] = "one-way",
		[ICS_REASON_SILENT] = "silent",
		[ICS_REASON_LEAVING] = "leaving",
		[ICS_REASON_RESTART] = "restart",
		[ICS_REASON_MOVED] = "moved",
	};

	return reason < ARRAY_SIZE(names) && names[reason] ? names[reason] : "unknown";
}

const char *icsnl_fmt_mac(char *buf, const uint8_t *m)
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return buf;
}

const char *icsnl_fmt_ago(char *buf, uint64_t ns)
{
	uint64_t us = ns / 1000, ms = ns / 1000000, s = ns / 1000000000ULL;

	if (us < 1000)
		snprintf(buf, ICS_NUMBUF, "%lluus", (unsigned long long)us);
	else if (ms < 1000)
		snprintf(buf, ICS_NUMBUF, "%llums", (unsigned long long)ms);
	else if (s < 60)
		snprintf(buf, ICS_NUMBUF, "%llu.%llus", (unsigned long long)s,
			 (unsigned long long)(ms % 1000 / 100));
	else if (s < 3600)
		snprintf(buf, ICS_NUMBUF, "%llum%02llus", (unsigned long long)(s / 60),
			 (unsigned long long)(s % 60));
	else
		snprintf(buf, ICS_NUMBUF, "%lluh%02llum", (unsigned long long)(s / 3600),
			 (unsigned long long)(s / 60 % 60));
	return buf;
}

uint64_t icsnl_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Size of each attribute (1, 4, 8; 6 for a MAC), to check and to read. */
static const struct {
	const char *key;
	int size;
} member_attrs[ICS_MEMBER_A_MAX + 1] = {
	[ICS_MEMBER_A_NODE]		= { "node", 4 },
	[ICS_MEMBER_A_SELF]		= { "self", 1 },
	[ICS_MEMBER_A_STATE]		= { "state", 1 },
	[ICS_MEMBER_A_REASON]		= { "reason", 1 },
	[ICS_MEMBER_A_INCARNATION]	= { "incarnation", 4 },
	[ICS_MEMBER_A_VOTES]		= { "votes", 4 },
	[ICS_MEMBER_A_ADDRESS]		= { "address", 6 },
	[ICS_MEMBER_A_SINCE_NS]		= { "since_ns", 8 },
	[ICS_MEMBER_A_LAST_HEARD_NS]	= { "last_heard_ns", 8 },
	[ICS_MEMBER_A_HEARTBEAT_MS]	= { "heartbeat_ms", 4 },
	[ICS_MEMBER_A_HB_RX]		= { "hb_rx", 8 },
	[ICS_MEMBER_A_HB_MISSED]	= { "hb_missed", 8 },
	[ICS_MEMBER_A_HB_RTT_US]	= { "hb_rtt_us", 4 },
	[ICS_MEMBER_A_SEES_US]		= { "sees_us", 1 },
	[ICS_MEMBER_A_CONFLICTS]	= { "conflicts", 8 },
	[ICS_MEMBER_A_CONFLICT_ADDRESS]	= { "conflict_address", 6 },
};

static const struct {
	const char *key;
	int size;
} event_attrs[ICS_EVENT_A_MAX + 1] = {
	[ICS_EVENT_A_TYPE]		= { "type", 1 },
	[ICS_EVENT_A_TIME_NS]		= { "time_ns", 8 },
	[ICS_EVENT_A_REALTIME_NS]	= { "realtime_ns", 8 },
	[ICS_EVENT_A_GENERATION]	= { "generation", 4 },
	[ICS_EVENT_A_NODE]		= { "node", 4 },
	[ICS_EVENT_A_OLD_STATE]		= { "old_state", 1 },
	[ICS_EVENT_A_STATE]		= { "state", 1 },
	[ICS_EVENT_A_REASON]		= { "reason", 1 },
	[ICS_EVENT_A_INCARNATION]	= { "incarnation", 4 },
	[ICS_EVENT_A_SILENT_MS]		= { "silent_ms", 4 },
	[ICS_EVENT_A_ADDRESS]		= { "address", 6 },
	[ICS_EVENT_A_CURRENT_VOTES]	= { "current_votes", 4 },
	[ICS_EVENT_A_EXPECTED_VOTES]	= { "expected_votes", 4 },
	[ICS_EVENT_A_QUORUM]		= { "quorum", 4 },
	[ICS_EVENT_A_HAS_QUORUM]	= { "has_quorum", 1 },
	[ICS_EVENT_A_LOST]		= { "lost", 4 },
};

/*
 * Every attribute of @nest whose type has a size in @sizes (by index):
 * numbers into v[], 6-byte ones into @mac (the attribute @mac_type) or
 * @mac2. Too short: -EPROTO. Unknown types are skipped (newer kernels).
 */
static int parse_flat(const struct nlattr *nest, int max, const int *sizes, bool *have,
		      uint64_t *v, int mac_type, uint8_t *mac, uint8_t *mac2)
{
	struct nlattr *a;
	int rem, t;

	nla_for_each_nested(a, (struct nlattr *)nest, rem) {
		t = nla_type(a);
		if (t < 0 || t > max || !sizes[t])
			continue;
		if (nla_len(a) < sizes[t])
			return -EPROTO;
		have[t] = true;
		switch (sizes[t]) {
		case 1:
			v[t] = nla_get_u8(a);
			break;
		case 4:
			v[t] = nla_get_u32(a);
			break;
		case 8:
			v[t] = nla_get_u64(a);
			break;
		case 6:
			memcpy(t == mac_type ? mac : mac2, nla_data(a), 6);
			break;
		}
	}
	return 0;
}

int ics_member_parse(const struct nlattr *nest, struct ics_member *m)
{
	int sizes[ICS_MEMBER_A_MAX + 1], i;

	memset(m, 0, sizeof(*m));
	for (i = 0; i <= ICS_MEMBER_A_MAX; i++)
		sizes[i] = member_attrs[i].size;
	if (!nest || parse_flat(nest, ICS_MEMBER_A_MAX, sizes, m->have, m->v,
				ICS_MEMBER_A_ADDRESS, m->addr, m->conflict_addr))
		return -EPROTO;
	return m->have[ICS_MEMBER_A_NODE] && m->have[ICS_MEMBER_A_STATE] ? 0 : -EPROTO;
}

bool ics_member_counter(int attr)
{
	return attr == ICS_MEMBER_A_HB_RX || attr == ICS_MEMBER_A_HB_MISSED ||
	       attr == ICS_MEMBER_A_CONFLICTS;
}

void ics_member_json(struct json *j, const struct ics_member *m, uint64_t now_ns, double secs)
{
	char mac[18];
	int i;

	json_obj_begin(j, NULL);
	for (i = 0; i <= ICS_MEMBER_A_MAX; i++) {
		const char *key = member_attrs[i].key;

		if (!m->have[i] || !key)
			continue;
		switch (i) {
		case ICS_MEMBER_A_SELF:
		case ICS_MEMBER_A_SEES_US:
			json_bool(j, key, m->v[i]);
			break;
		case ICS_MEMBER_A_STATE:
			json_str(j, key, ics_member_state_name(m->v[i]));
			break;
		case ICS_MEMBER_A_REASON:
			json_str(j, key, ics_reason_name(m->v[i]));
			break;
		case ICS_MEMBER_A_ADDRESS:
			json_str(j, key, icsnl_fmt_mac(mac, m->addr));
			break;
		case ICS_MEMBER_A_CONFLICT_ADDRESS:
			json_str(j, key, icsnl_fmt_mac(mac, m->conflict_addr));
			break;
		default:
			if (secs > 0 && ics_member_counter(i))
				json_rate(j, key, m->v[i] / secs);
			else
				json_u64(j, key, m->v[i]);
		}
	}
	if (m->have[ICS_MEMBER_A_SINCE_NS] && now_ns >= m->v[ICS_MEMBER_A_SINCE_NS])
		json_u64(j, "since_ago_ms", (now_ns - m->v[ICS_MEMBER_A_SINCE_NS]) / 1000000);
	if (m->have[ICS_MEMBER_A_LAST_HEARD_NS] && now_ns >= m->v[ICS_MEMBER_A_LAST_HEARD_NS])
		json_u64(j, "last_heard_ago_ms",
			 (now_ns - m->v[ICS_MEMBER_A_LAST_HEARD_NS]) / 1000000);
	json_obj_end(j);
}

int ics_event_parse(const struct nlattr *nest, struct ics_event_msg *e)
{
	int sizes[ICS_EVENT_A_MAX + 1], i;

	memset(e, 0, sizeof(*e));
	for (i = 0; i <= ICS_EVENT_A_MAX; i++)
		sizes[i] = event_attrs[i].size;
	if (!nest || parse_flat(nest, ICS_EVENT_A_MAX, sizes, e->have, e->v, ICS_EVENT_A_ADDRESS,
				e->addr, e->addr))
		return -EPROTO;
	return e->have[ICS_EVENT_A_TYPE] ? 0 : -EPROTO;
}

static const char *event_type_name(uint64_t type)
{
	switch (type) {
	case ICS_EVENT_NODE:
		return "node";
	case ICS_EVENT_QUORUM:
		return "quorum";
	case ICS_EVENT_CONFLICT:
		return "conflict";
	case ICS_EVENT_BOUND:
		return "bound";
	case ICS_EVENT_UNBOUND:
		return "unbound";
	default:
		return "unknown";
	}
}

void ics_event_format(char *buf, size_t len, const struct ics_event_msg *e)
{
	const uint64_t *v = e->v;
	char ts[40] = "-", mac[18];
	size_t n = 0;

	if (e->have[ICS_EVENT_A_REALTIME_NS]) {
		struct timespec t = { .tv_sec = v[ICS_EVENT_A_REALTIME_NS] / 1000000000ULL,
				      .tv_nsec = v[ICS_EVENT_A_REALTIME_NS] % 1000000000ULL };

		icsnl_fmt_iso8601(ts, sizeof(ts), &t, 6);
	}
#define OUT(...) (n += snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__))
	OUT("%s gen %llu: ", ts, (unsigned long long)v[ICS_EVENT_A_GENERATION]);
	switch (v[ICS_EVENT_A_TYPE]) {
	case ICS_EVENT_NODE:
		OUT("node %llu %s -> %s (%s", (unsigned long long)v[ICS_EVENT_A_NODE],
		    ics_member_state_name(v[ICS_EVENT_A_OLD_STATE]),
		    ics_member_state_name(v[ICS_EVENT_A_STATE]),
		    ics_reason_name(v[ICS_EVENT_A_REASON]));
		if (v[ICS_EVENT_A_REASON] == ICS_REASON_SILENT)
			OUT(" %llu ms", (unsigned long long)v[ICS_EVENT_A_SILENT_MS]);
		OUT("), incarnation %llu", (unsigned long long)v[ICS_EVENT_A_INCARNATION]);
		break;
	case ICS_EVENT_QUORUM:
		OUT("quorum %s", v[ICS_EVENT_A_HAS_QUORUM] ? "gained" : "lost");
		break;
	case ICS_EVENT_CONFLICT:
		OUT("node %llu claimed by %s: conflict, its frames dropped",
		    (unsigned long long)v[ICS_EVENT_A_NODE], icsnl_fmt_mac(mac, e->addr));
		break;
	case ICS_EVENT_BOUND:
		OUT("bound as node %llu, incarnation %llu",
		    (unsigned long long)v[ICS_EVENT_A_NODE],
		    (unsigned long long)v[ICS_EVENT_A_INCARNATION]);
		break;
	case ICS_EVENT_UNBOUND:
		OUT("unbound");
		break;
	default:
		OUT("event type %llu", (unsigned long long)v[ICS_EVENT_A_TYPE]);
	}
	OUT("; votes %llu of %llu expected, quorum %llu: %s",
	    (unsigned long long)v[ICS_EVENT_A_CURRENT_VOTES],
	    (unsigned long long)v[ICS_EVENT_A_EXPECTED_VOTES],
	    (unsigned long long)v[ICS_EVENT_A_QUORUM],
	    v[ICS_EVENT_A_HAS_QUORUM] ? "yes" : "no");
	if (v[ICS_EVENT_A_LOST])
		OUT(" (%llu earlier events lost)", (unsigned long long)v[ICS_EVENT_A_LOST]);
#undef OUT
}

void ics_event_json(struct json *j, const struct ics_event_msg *e)
{
	char mac[18];
	int i;

	json_obj_begin(j, NULL);
	for (i = 0; i <= ICS_EVENT_A_MAX; i++) {
		const char *key = event_attrs[i].key;

		if (!e->have[i] || !key)
			continue;
		switch (i) {
		case ICS_EVENT_A_TYPE:
			json_str(j, key, event_type_name(e->v[i]));
			break;
		case ICS_EVENT_A_OLD_STATE:
		case ICS_EVENT_A_STATE:
			json_str(j, key, ics_member_state_name(e->v[i]));
			break;
		case ICS_EVENT_A_REASON:
			json_str(j, key, ics_reason_name(e->v[i]));
			break;
		case ICS_EVENT_A_HAS_QUORUM:
			json_bool(j, key, e->v[i]);
			break;
		case ICS_EVENT_A_ADDRESS:
			json_str(j, key, icsnl_fmt_mac(mac, e->addr));
			break;
		default:
			json_u64(j, key, e->v[i]);
		}
	}
	json_obj_end(j);
}

/* ics_test's ICS_TEST_CMD_GET */

/* Key (the ICS_TEST_C_* name in lower case) and width of a channel's counters. */
static const struct {
	const char *key;
	int size;
} test_chan_attrs[ICS_TEST_C_MAX + 1] = {
	[ICS_TEST_C_ID]			= { NULL, 4 },	/* the row, not a counter */
	[ICS_TEST_C_RX_MSGS]		= { "rx_msgs", 8 },
	[ICS_TEST_C_RX_BYTES]		= { "rx_bytes", 8 },
	[ICS_TEST_C_RX_OK]		= { "rx_ok", 8 },
	[ICS_TEST_C_RX_BAD]		= { "rx_bad", 8 },
	[ICS_TEST_C_SINKED]		= { "sinked", 8 },
	[ICS_TEST_C_ANSWERS]		= { "answers", 8 },
	[ICS_TEST_C_ANSWER_DROPS]	= { "answer_drops", 8 },
	[ICS_TEST_C_REFUSED]		= { "refused", 8 },
};

const char *ics_test_chan_key(int attr)
{
	return attr >= 0 && attr <= ICS_TEST_C_MAX ? test_chan_attrs[attr].key : NULL;
}

/* One ICS_TEST_A_CHANNEL_STATS nest: the channel's row. */
static int test_chan_parse(const struct nlattr *nest, struct ics_test_status *st)
{
	struct ics_test_chan c = { 0 };
	int sizes[ICS_TEST_C_MAX + 1], i;
	uint64_t id;

	for (i = 0; i <= ICS_TEST_C_MAX; i++)
		sizes[i] = test_chan_attrs[i].size;
	if (parse_flat(nest, ICS_TEST_C_MAX, sizes, c.have, c.v, -1, NULL, NULL) ||
	    !c.have[ICS_TEST_C_ID])
		return -EPROTO;
	id = c.v[ICS_TEST_C_ID];
	if (id >= ICS_CHANNELS || st->chan_have[id])
		return -EPROTO;
	st->chan_have[id] = true;
	st->chan[id] = c;
	return 0;
}

/* One ICS_TEST_A_NODE_HASHES nest: a node's hashes per channel. */
static int test_hashes_parse(const struct nlattr *nest, struct ics_test_status *st)
{
	struct nlattr *tb[ICS_TEST_H_MAX + 1];
	uint32_t node;

	if (nla_parse_nested(tb, ICS_TEST_H_MAX, (struct nlattr *)nest, NULL) < 0 ||
	    !tb[ICS_TEST_H_NODE] || nla_len(tb[ICS_TEST_H_NODE]) < 4)
		return -EPROTO;
	node = nla_get_u32(tb[ICS_TEST_H_NODE]);
	if (node < 1 || node > ICS_MAX_NODES || st->node_have[node])
		return -EPROTO;
	st->node_have[node] = true;
	icsnl_parse_indexed(tb[ICS_TEST_H_TX], st->tx_hash[node], ICS_CHANNELS, 4);
	icsnl_parse_indexed(tb[ICS_TEST_H_RX], st->rx_hash[node], ICS_CHANNELS, 4);
	return 0;
}

/*
 * The reply repeats ICS_TEST_A_CHANNEL_STATS and ICS_TEST_A_NODE_HASHES,
 * one per channel and node: hence the walk over every attribute. A channel
 * or node out of range, or twice, is a malformed reply.
 */
int ics_test_status_parse(const struct nlattr *attrs, int len, void *status)
{
	struct ics_test_status *st = status;
	const struct nlattr *a;
	int rem, err = 0;

	nla_for_each_attr(a, (struct nlattr *)attrs, len, rem) {
		switch (nla_type(a)) {
		case ICS_TEST_A_CHANNELS:
			if (nla_len(a) < 4)
				return -EPROTO;
			st->attached = nla_get_u32((struct nlattr *)a);
			break;
		case ICS_TEST_A_QUEUED:
			if (nla_len(a) < 4)
				return -EPROTO;
			st->queued = nla_get_u32((struct nlattr *)a);
			break;
		case ICS_TEST_A_CHANNEL_STATS:
			err = test_chan_parse(a, st);
			break;
		case ICS_TEST_A_NODE_HASHES:
			err = test_hashes_parse(a, st);
			break;
		}
		if (err)
			return err;
	}
	return 0;
}

static bool any_u64(const uint64_t *v, int n)
{
	while (n--)
		if (v[n])
			return true;
	return false;
}

static void test_status_json(FILE *f, const struct ics_test_status *st, bool pretty)
{
	struct json json, *j = &json;
	char key[ICS_NUMBUF];
	int ch, i, node;

	json_init(j, f, pretty);
	json_obj_begin(j, NULL);
	json_arr_begin(j, "attached");
	for (ch = 0; ch < ICS_CHANNELS; ch++)
		if (st->attached & (1U << ch))
			json_str(j, NULL, ics_channel_names[ch]);
	json_arr_end(j);
	json_u64(j, "queued", st->queued);
	json_obj_begin(j, "channels");
	for (ch = 0; ch < ICS_CHANNELS; ch++) {
		if (!st->chan_have[ch])
			continue;
		json_obj_begin(j, ics_channel_names[ch]);
		/* every counter, 0 when absent: a fixed shape for scripts */
		for (i = 0; i <= ICS_TEST_C_MAX; i++)
			if (test_chan_attrs[i].key)
				json_u64(j, test_chan_attrs[i].key, st->chan[ch].v[i]);
		json_obj_end(j);
	}
	json_obj_end(j);
	json_obj_begin(j, "nodes");
	for (node = 1; node <= ICS_MAX_NODES; node++) {
		if (!st->node_have[node])
			continue;
		snprintf(key, sizeof(key), "%d", node);
		json_obj_begin(j, key);
		json_chan_values(j, "tx_hash", st->tx_hash[node]);
		json_chan_values(j, "rx_hash", st->rx_hash[node]);
		json_obj_end(j);
	}
	json_obj_end(j);
	json_obj_end(j);
}

/* "node 2 tx TEST=0123abcd CLSM=...": the non-zero hashes of one direction. */
static void test_hash_line(FILE *f, int node, const char *dir, const uint64_t *hash)
{
	int ch;

	if (!any_u64(hash, ICS_CHANNELS))
		return;
	fprintf(f, "node %d %s", node, dir);
	for (ch = 0; ch < ICS_CHANNELS; ch++)
		if (hash[ch])
			fprintf(f, " %s=%08" PRIx64, ics_channel_names[ch], hash[ch]);
	fputc('\n', f);
}

#define TEST_COLS	(ICS_TEST_C_MAX - ICS_TEST_C_ID + 1)	/* channel, counters */

void ics_test_status_print(FILE *f, const struct ics_test_status *st,
			   const struct icsnl_fmt *fmt)
{
	char cell[ICS_CHANNELS][TEST_COLS][ICS_NUMBUF], buf[ICS_NUMBUF];
	const char *head[TEST_COLS] = { "channel" };
	int width[TEST_COLS], rows = 0, ch, c, r, node;
	bool any = false;

	if (fmt->json) {
		test_status_json(f, st, fmt->pretty);
		return;
	}
	fputs("attached:", f);
	for (ch = 0; ch < ICS_CHANNELS; ch++) {
		if (st->attached & (1U << ch)) {
			fprintf(f, " %s", ics_channel_names[ch]);
			any = true;
		}
	}
	fprintf(f, "%s\nqueued: %s bytes\n", any ? "" : " none",
		icsnl_fmt_count(buf, st->queued, fmt->raw));

	/* columns: the channel, then ICS_TEST_C_RX_MSGS.. in the header's order */
	for (c = 1; c < TEST_COLS; c++)
		head[c] = test_chan_attrs[ICS_TEST_C_ID + c].key;
	for (ch = 0; ch < ICS_CHANNELS; ch++) {
		if (!st->chan_have[ch])
			continue;
		snprintf(cell[rows][0], ICS_NUMBUF, "%s", ics_channel_names[ch]);
		for (c = 1; c < TEST_COLS; c++)
			icsnl_fmt_count(cell[rows][c], st->chan[ch].v[ICS_TEST_C_ID + c], fmt->raw);
		rows++;
	}
	if (rows) {
		for (c = 0; c < TEST_COLS; c++) {
			width[c] = strlen(head[c]);
			for (r = 0; r < rows; r++)
				if ((int)strlen(cell[r][c]) > width[c])
					width[c] = strlen(cell[r][c]);
		}
		/* as icstat's tables: the name left-aligned, numbers right-aligned */
		fprintf(f, "%-*s", width[0], head[0]);
		for (c = 1; c < TEST_COLS; c++)
			fprintf(f, "  %*s", width[c], head[c]);
		fputc('\n', f);
		for (r = 0; r < rows; r++) {
			fprintf(f, "%-*s", width[0], cell[r][0]);
			for (c = 1; c < TEST_COLS; c++)
				fprintf(f, "  %*s", width[c], cell[r][c]);
			fputc('\n', f);
		}
	}
	for (node = 1; node <= ICS_MAX_NODES; node++) {
		if (!st->node_have[node])
			continue;
		test_hash_line(f, node, "tx", st->tx_hash[node]);
		test_hash_line(f, node, "rx", st->rx_hash[node]);
	}
}

/* Cluster keys in base64, as icsctl key gen prints them (wg's form). */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* @in (@len characters: 44 of base64, the last '=') to ICS_KEY_LEN bytes: 0, or -1. */
int icsnl_key_from_b64(const char *in, size_t len, uint8_t *out)
{
	uint32_t acc = 0;
	size_t i, n = 0;
	int bits = 0;
	const char *c;

	if (len != 4 * ((ICS_KEY_LEN + 2) / 3) || in[len - 1] != '=' || in[len - 2] == '=')
		return -1;
	for (i = 0; i < len - 1; i++) {
		c = in[i] ? strchr(b64, in[i]) : NULL;
		if (!c)
			return -1;
		acc = acc << 6 | (uint32_t)(c - b64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n == ICS_KEY_LEN)
				return -1;
			out[n++] = acc >> bits;
		}
	}
	/* The two bits left over must be zero: one encoding per key. */
	return n == ICS_KEY_LEN && !(acc & ((1U << bits) - 1)) ? 0 : -1;
}

void icsnl_key_to_b64(const uint8_t *key, char *out)
{
	uint32_t acc = 0;
	int i, bits = 0;
	char *p = out;

	for (i = 0; i < ICS_KEY_LEN; i++) {
		acc = acc << 8 | key[i];
		bits += 8;
		while (bits >= 6) {
			bits -= 6;
			*p++ = b64[(acc >> bits) & 63];
		}
	}
	*p++ = b64[(acc << (6 - bits)) & 63];
	*p++ = '=';
	*p = 0;
}
