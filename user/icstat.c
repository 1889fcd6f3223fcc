// SPDX-License-Identifier: GPL-2.0
/*
 * icstat - ics statistics: per-channel message-size histograms (in the style
 * of TruCluster's cfsstat), channel, node and link counters, instance state.
 * Read-only; works for any user.
 */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <netlink/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>

#include "icsnl.h"

enum { TX, RX, DIRS };

static const char *const dir_key[DIRS] = { "tx", "rx" };
static const char *const dir_title[DIRS] = { "Sent:", "Received:" };

struct opts {
	struct icsnl_fmt fmt;
	bool dir[DIRS];		/* --tx / --rx; both by default */
	uint32_t interval;	/* chanhist -i */
	uint32_t count;		/* chanhist -c, 0: until interrupted */
	uint32_t node;		/* links -N, 0: every link */
};

struct ics_dir {
	uint64_t msgs, bytes, hist[ICS_HIST_ROWS];
};

struct ics_chan {
	bool handler, has_prio;
	uint8_t prio;
	struct ics_dir dir[DIRS];
	uint64_t rx_unclaimed;
};

struct ics_chans {
	struct ics_chan ch[ICS_CHANNELS];
};

struct ics_node {
	bool present, reachable, has_addr, has_last, has_key;
	uint8_t addr[6], rx_key;
	uint64_t last_heard_ms;
	uint64_t msgs[DIRS], bytes[DIRS];
};

struct ics_nodes {
	struct ics_node node[ICS_MAX_NODES + 1];	/* by node id */
};

struct ics_links {
	bool present[ICS_MAX_NODES + 1];
	struct ics_link link[ICS_MAX_NODES + 1];	/* by peer node id */
};

/* Text tables: first column left-aligned, the others right-aligned. */

#define TABLE_ROWS	(1 + ICS_MAX_NODES)
#define TABLE_COLS	24	/* >= 1 + ICS_CHANNELS and the links columns */

struct table {
	int rows, cols, col;
	char cell[TABLE_ROWS][TABLE_COLS][ICS_NUMBUF];
};

static char *table_next(struct table *t)
{
	assert(t->rows < TABLE_ROWS && t->col < TABLE_COLS);
	if (++t->col > t->cols)
		t->cols = t->col;
	return t->cell[t->rows][t->col - 1];
}

static void table_str(struct table *t, const char *s)
{
	snprintf(table_next(t), ICS_NUMBUF, "%s", s);
}

static void table_count(struct table *t, uint64_t v, const struct opts *o)
{
	icsnl_fmt_count(table_next(t), v, o->fmt.raw);
}

static void table_u64(struct table *t, uint64_t v)
{
	icsnl_fmt_count(table_next(t), v, true);
}

static void table_end_row(struct table *t)
{
	t->rows++;
	t->col = 0;
}

static void table_print(const struct table *t)
{
	int width[TABLE_COLS] = { 0 }, r, c, len;

	for (r = 0; r < t->rows; r++)
		for (c = 0; c < t->cols; c++) {
			len = strlen(t->cell[r][c]);
			if (len > width[c])
				width[c] = len;
		}
	for (r = 0; r < t->rows; r++) {
		printf("%-*s", width[0], t->cell[r][0]);
		for (c = 1; c < t->cols; c++)
			printf("  %*s", width[c], t->cell[r][c]);
		putchar('\n');
	}
}

/* A list report: {"KEY": [...]} with -j, else a table the caller heads and fills. */
static void list_begin(struct json *j, struct table *t, const struct opts *o, const char *key)
{
	memset(t, 0, sizeof(*t));
	if (!o->fmt.json)
		return;
	json_init(j, stdout, o->fmt.pretty);
	json_obj_begin(j, NULL);
	json_arr_begin(j, key);
}

static void list_end(struct json *j, const struct table *t, const struct opts *o)
{
	if (o->fmt.json) {
		json_arr_end(j);
		json_obj_end(j);
	} else {
		table_print(t);
	}
}

/* Dump cmd into arg: 0, or the error after printing it with context ctx. */
static int dump(struct icsnl *nl, uint8_t cmd, icsnl_cb_t cb, void *arg, size_t len,
		const char *ctx)
{
	int err = icsnl_dump(nl, cmd, cb, arg, len);

	if (err)
		icsnl_perror(nl, ctx, err);
	return err;
}

/* ICS_CMD_GET_CHANNELS */

static const struct nla_policy chan_policy[ICS_CHAN_A_MAX + 1] = {
	[ICS_CHAN_A_ID]			= { .type = NLA_U32 },
	[ICS_CHAN_A_NAME]		= { .type = NLA_STRING },
	[ICS_CHAN_A_HANDLER]		= { .type = NLA_U8 },
	[ICS_CHAN_A_TX]			= { .type = NLA_NESTED },
	[ICS_CHAN_A_RX]			= { .type = NLA_NESTED },
	[ICS_CHAN_A_RX_UNCLAIMED]	= { .type = NLA_U64 },
	[ICS_CHAN_A_PRIO]		= { .type = NLA_U8 },
};

static const struct nla_policy dir_policy[ICS_DIR_A_MAX + 1] = {
	[ICS_DIR_A_MSGS]	= { .type = NLA_U64 },
	[ICS_DIR_A_BYTES]	= { .type = NLA_U64 },
	[ICS_DIR_A_HIST]	= { .type = NLA_NESTED },
};

static int parse_dir(struct nlattr *nest, struct ics_dir *d)
{
	struct nlattr *tb[ICS_DIR_A_MAX + 1];

	if (!nest)
		return 0;
	if (nla_parse_nested(tb, ICS_DIR_A_MAX, nest, dir_policy) < 0)
		return -EPROTO;
	d->msgs = icsnl_get_u64(tb[ICS_DIR_A_MSGS]);
	d->bytes = icsnl_get_u64(tb[ICS_DIR_A_BYTES]);
	icsnl_parse_indexed(tb[ICS_DIR_A_HIST], d->hist, ICS_HIST_ROWS, 8);
	return 0;
}

static int chan_cb(struct nlattr **tb, void *arg)
{
	struct nlattr *t[ICS_CHAN_A_MAX + 1];
	struct ics_chans *cs = arg;
	struct ics_chan *c;
	uint32_t id;

	if (!tb[ICS_A_CHANNEL] ||
	    nla_parse_nested(t, ICS_CHAN_A_MAX, tb[ICS_A_CHANNEL], chan_policy) < 0 ||
	    !t[ICS_CHAN_A_ID])
		return -EPROTO;
	id = nla_get_u32(t[ICS_CHAN_A_ID]);
	if (id >= ICS_CHANNELS)
		return 0;	/* a channel newer than this tool */
	c = &cs->ch[id];
	c->handler = t[ICS_CHAN_A_HANDLER] && nla_get_u8(t[ICS_CHAN_A_HANDLER]);
	c->has_prio = t[ICS_CHAN_A_PRIO];
	c->prio = c->has_prio ? nla_get_u8(t[ICS_CHAN_A_PRIO]) : 0;
	c->rx_unclaimed = icsnl_get_u64(t[ICS_CHAN_A_RX_UNCLAIMED]);
	if (parse_dir(t[ICS_CHAN_A_TX], &c->dir[TX]) || parse_dir(t[ICS_CHAN_A_RX], &c->dir[RX]))
		return -EPROTO;
	return 0;
}

static int get_chans(struct icsnl *nl, struct ics_chans *cs, const char *ctx)
{
	return dump(nl, ICS_CMD_GET_CHANNELS, chan_cb, cs, sizeof(*cs), ctx);
}

/* Counters that went down were reset in between: then the new value is the delta. */
static uint64_t delta(uint64_t now, uint64_t then)
{
	return now >= then ? now - then : now;
}

static void chans_delta(struct ics_chans *out, const struct ics_chans *now,
			const struct ics_chans *then)
{
	int i, d, r;

	for (i = 0; i < ICS_CHANNELS; i++) {
		const struct ics_chan *n = &now->ch[i], *t = &then->ch[i];
		struct ics_chan *o = &out->ch[i];

		o->handler = n->handler;
		o->has_prio = n->has_prio;
		o->prio = n->prio;
		o->rx_unclaimed = delta(n->rx_unclaimed, t->rx_unclaimed);
		for (d = 0; d < DIRS; d++) {
			o->dir[d].msgs = delta(n->dir[d].msgs, t->dir[d].msgs);
			o->dir[d].bytes = delta(n->dir[d].bytes, t->dir[d].bytes);
			for (r = 0; r < ICS_HIST_ROWS; r++)
				o->dir[d].hist[r] = delta(n->dir[d].hist[r], t->dir[d].hist[r]);
		}
	}
}

/* The "channels" array of chanhisttot, chanhist and channels. */
static void json_chans(struct json *j, const struct ics_chans *cs, const struct opts *o)
{
	int i, d, r;

	json_arr_begin(j, "channels");
	for (i = 0; i < ICS_CHANNELS; i++) {
		const struct ics_chan *c = &cs->ch[i];

		json_obj_begin(j, NULL);
		json_u64(j, "id", i);
		json_str(j, "name", ics_channel_names[i]);
		json_bool(j, "handler", c->handler);
		if (c->has_prio)
			json_u64(j, "prio", c->prio);
		for (d = 0; d < DIRS; d++) {
			if (!o->dir[d])
				continue;
			json_obj_begin(j, dir_key[d]);
			json_u64(j, "msgs", c->dir[d].msgs);
			json_u64(j, "bytes", c->dir[d].bytes);
			json_arr_begin(j, "hist");
			for (r = 0; r < ICS_HIST_ROWS; r++)
				json_u64(j, NULL, c->dir[d].hist[r]);
			json_arr_end(j);
			json_obj_end(j);
		}
		json_u64(j, "rx_unclaimed", c->rx_unclaimed);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* One histogram report; interval > 0 adds the chanhist header. */
static void print_hist(const struct ics_chans *cs, const struct opts *o, uint64_t interval)
{
	struct table t;
	struct json j;
	bool first = true;
	int d, r, i;

	if (o->fmt.json) {
		json_init(&j, stdout, o->fmt.pretty);
		json_obj_begin(&j, NULL);
		if (interval) {
			json_u64(&j, "interval", interval);
			json_u64(&j, "seconds", o->interval);
		}
		json_arr_begin(&j, "rows");
		for (r = 0; r < ICS_HIST_ROWS; r++)
			json_str(&j, NULL, ics_hist_labels[r]);
		json_arr_end(&j);
		json_chans(&j, cs, o);
		json_obj_end(&j);
		return;
	}
	if (interval) {
		char now[16];
		time_t tm = time(NULL);

		strftime(now, sizeof(now), "%H:%M:%S", localtime(&tm));
		printf("Interval %" PRIu64 " (%u s) at %s:\n", interval, o->interval, now);
	}
	for (d = 0; d < DIRS; d++) {
		if (!o->dir[d])
			continue;
		if (!first)
			putchar('\n');
		first = false;
		puts(dir_title[d]);
		memset(&t, 0, sizeof(t));
		table_str(&t, "");
		for (i = 0; i < ICS_CHANNELS; i++)
			table_str(&t, ics_channel_names[i]);
		table_end_row(&t);
		for (r = 0; r < ICS_HIST_ROWS; r++) {
			table_str(&t, ics_hist_labels[r]);
			for (i = 0; i < ICS_CHANNELS; i++)
				table_count(&t, cs->ch[i].dir[d].hist[r], o);
			table_end_row(&t);
		}
		table_print(&t);
	}
}

static int cmd_chanhisttot(struct icsnl *nl, const struct ics_instance *in,
			   const struct opts *o)
{
	struct ics_chans cs;

	(void)in;
	if (get_chans(nl, &cs, "chanhisttot"))
		return 1;
	print_hist(&cs, o, 0);
	return 0;
}

static int cmd_chanhist(struct icsnl *nl, const struct ics_instance *in, const struct opts *o)
{
	struct ics_chans then, now, diff;
	uint64_t n;

	(void)in;
	if (get_chans(nl, &then, "chanhist"))
		return 1;
	for (n = 1; !o->count || n <= o->count; n++) {
		sleep(o->interval);
		if (get_chans(nl, &now, "chanhist"))
			return 1;
		chans_delta(&diff, &now, &then);
		then = now;
		if (n > 1 && !o->fmt.json)
			putchar('\n');
		print_hist(&diff, o, n);
		if (icsnl_flush_stdout())
			return 1;
	}
	return 0;
}

static int cmd_channels(struct icsnl *nl, const struct ics_instance *in, const struct opts *o)
{
	struct ics_chans cs;
	struct table t;
	struct json j;
	int i, d;

	(void)in;
	if (get_chans(nl, &cs, "channels"))
		return 1;
	if (o->fmt.json) {
		json_init(&j, stdout, o->fmt.pretty);
		json_obj_begin(&j, NULL);
		json_chans(&j, &cs, o);
		json_obj_end(&j);
		return 0;
	}
	memset(&t, 0, sizeof(t));
	table_str(&t, "channel");
	if (o->dir[TX]) {
		table_str(&t, "tx_msgs");
		table_str(&t, "tx_bytes");
	}
	if (o->dir[RX]) {
		table_str(&t, "rx_msgs");
		table_str(&t, "rx_bytes");
	}
	table_str(&t, "unclaimed");
	table_str(&t, "handler");
	table_str(&t, "prio");
	table_end_row(&t);
	for (i = 0; i < ICS_CHANNELS; i++) {
		const struct ics_chan *c = &cs.ch[i];

		table_str(&t, ics_channel_names[i]);
		for (d = 0; d < DIRS; d++) {
			if (!o->dir[d])
				continue;
			table_count(&t, c->dir[d].msgs, o);
			table_count(&t, c->dir[d].bytes, o);
		}
		table_count(&t, c->rx_unclaimed, o);
		table_str(&t, c->handler ? "yes" : "no");
		if (c->has_prio)
			table_u64(&t, c->prio);
		else
			table_str(&t, "-");
		table_end_row(&t);
	}
	table_print(&t);
	return 0;
}

/* ICS_CMD_GET_NODES */

static const struct nla_policy node_policy[ICS_NODE_A_MAX + 1] = {
	[ICS_NODE_A_ID]			= { .type = NLA_U32 },
	[ICS_NODE_A_REACHABLE]		= { .type = NLA_U8 },
	[ICS_NODE_A_ADDRESS]		= { .minlen = 6 },
	[ICS_NODE_A_LAST_HEARD_MS]	= { .type = NLA_U64 },
	[ICS_NODE_A_TX_MSGS]		= { .type = NLA_U64 },
	[ICS_NODE_A_TX_BYTES]		= { .type = NLA_U64 },
	[ICS_NODE_A_RX_MSGS]		= { .type = NLA_U64 },
	[ICS_NODE_A_RX_BYTES]		= { .type = NLA_U64 },
	[ICS_NODE_A_RX_KEY]		= { .type = NLA_U8 },
};

static int node_cb(struct nlattr **tb, void *arg)
{
	struct nlattr *t[ICS_NODE_A_MAX + 1];
	struct ics_nodes *ns = arg;
	struct ics_node *n;
	uint32_t id;

	if (!tb[ICS_A_NODE] ||
	    nla_parse_nested(t, ICS_NODE_A_MAX, tb[ICS_A_NODE], node_policy) < 0 ||
	    !t[ICS_NODE_A_ID])
		return -EPROTO;
	id = nla_get_u32(t[ICS_NODE_A_ID]);
	if (id < 1 || id > ICS_MAX_NODES)
		return 0;
	n = &ns->node[id];
	n->present = true;
	n->reachable = t[ICS_NODE_A_REACHABLE] && nla_get_u8(t[ICS_NODE_A_REACHABLE]);
	if (t[ICS_NODE_A_ADDRESS]) {
		n->has_addr = true;
		memcpy(n->addr, nla_data(t[ICS_NODE_A_ADDRESS]), sizeof(n->addr));
	}
	n->has_last = t[ICS_NODE_A_LAST_HEARD_MS];
	n->last_heard_ms = icsnl_get_u64(t[ICS_NODE_A_LAST_HEARD_MS]);
	n->has_key = t[ICS_NODE_A_RX_KEY];
	n->rx_key = n->has_key ? nla_get_u8(t[ICS_NODE_A_RX_KEY]) : 0;
	n->msgs[TX] = icsnl_get_u64(t[ICS_NODE_A_TX_MSGS]);
	n->bytes[TX] = icsnl_get_u64(t[ICS_NODE_A_TX_BYTES]);
	n->msgs[RX] = icsnl_get_u64(t[ICS_NODE_A_RX_MSGS]);
	n->bytes[RX] = icsnl_get_u64(t[ICS_NODE_A_RX_BYTES]);
	return 0;
}

static int cmd_nodes(struct icsnl *nl, const struct ics_instance *in, const struct opts *o)
{
	static const char *const msgs_key[DIRS] = { "tx_msgs", "rx_msgs" };
	static const char *const bytes_key[DIRS] = { "tx_bytes", "rx_bytes" };
	struct ics_nodes ns;
	char mac[18], buf[ICS_NUMBUF];
	struct table t;
	struct json j;
	int id, d;

	(void)in;
	if (dump(nl, ICS_CMD_GET_NODES, node_cb, &ns, sizeof(ns), "nodes"))
		return 1;
	list_begin(&j, &t, o, "nodes");
	if (!o->fmt.json) {
		table_str(&t, "node");
		table_str(&t, "reachable");
		table_str(&t, "address");
		table_str(&t, "last_heard_ms");
		table_str(&t, "key");
		for (d = 0; d < DIRS; d++) {
			if (o->dir[d]) {
				table_str(&t, msgs_key[d]);
				table_str(&t, bytes_key[d]);
			}
		}
		table_end_row(&t);
	}
	for (id = 1; id <= ICS_MAX_NODES; id++) {
		const struct ics_node *n = &ns.node[id];
		bool addr = n->reachable && n->has_addr, last = n->reachable && n->has_last;

		if (!n->present)
			continue;
		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", n->addr[0],
			 n->addr[1], n->addr[2], n->addr[3], n->addr[4], n->addr[5]);
		if (o->fmt.json) {
			json_obj_begin(&j, NULL);
			json_u64(&j, "node_id", id);
			json_bool(&j, "reachable", n->reachable);
			if (addr)
				json_str(&j, "address", mac);
			if (last)
				json_u64(&j, "last_heard_ms", n->last_heard_ms);
			if (n->reachable && n->has_key)
				json_u64(&j, "rx_key", n->rx_key);
			for (d = 0; d < DIRS; d++) {
				if (o->dir[d]) {
					json_u64(&j, msgs_key[d], n->msgs[d]);
					json_u64(&j, bytes_key[d], n->bytes[d]);
				}
			}
			json_obj_end(&j);
			continue;
		}
		snprintf(buf, sizeof(buf), "%d", id);
		table_str(&t, buf);
		table_str(&t, n->reachable ? "yes" : "no");
		table_str(&t, addr ? mac : "-");
		snprintf(buf, sizeof(buf), "%" PRIu64, n->last_heard_ms);
		table_str(&t, last ? buf : "-");
		snprintf(buf, sizeof(buf), "%u", n->rx_key);
		table_str(&t, n->reachable && n->has_key && n->rx_key ? buf : "-");
		for (d = 0; d < DIRS; d++) {
			if (o->dir[d]) {
				table_count(&t, n->msgs[d], o);
				table_count(&t, n->bytes[d], o);
			}
		}
		table_end_row(&t);
	}
	list_end(&j, &t, o);
	return 0;
}

/* ICS_CMD_GET_LINKS */

static int link_cb(struct nlattr **tb, void *arg)
{
	struct ics_links *ls = arg;
	struct ics_link l;
	uint32_t id;

	if (ics_link_parse(tb[ICS_A_LINK], &l))
		return -EPROTO;
	id = l.v[ICS_LINK_A_NODE];
	if (id < 1 || id > ICS_MAX_NODES)
		return 0;
	ls->present[id] = true;
	ls->link[id] = l;
	return 0;
}

/* The text table's columns: heading, attribute, and whether it is a count. */
static const struct {
	const char *head;
	int attr;
	bool count;
} link_cols[] = {
	{ "node", ICS_LINK_A_NODE, false },
	{ "mtu", ICS_LINK_A_MTU, false },
	{ "cwnd", ICS_LINK_A_CWND, false },
	{ "inflight", ICS_LINK_A_INFLIGHT, false },
	{ "srtt_us", ICS_LINK_A_SRTT_US, false },
	{ "rto_ms", ICS_LINK_A_RTO_MS, false },
	{ "q_msgs", ICS_LINK_A_QUEUED_MSGS, true },
	{ "q_bytes", ICS_LINK_A_QUEUED_BYTES, true },
	{ "tx_frames", ICS_LINK_A_TX_FRAMES, true },
	{ "retrans", ICS_LINK_A_RETRANSMITS, true },
	{ "fast", ICS_LINK_A_FAST_RETRANSMITS, true },
	{ "timeouts", ICS_LINK_A_TIMEOUTS, true },
	{ "rx_frames", ICS_LINK_A_RX_FRAMES, true },
	{ "dups", ICS_LINK_A_DUPLICATES, true },
	{ "ooo", ICS_LINK_A_OUT_OF_ORDER, true },
	{ "crc_err", ICS_LINK_A_CRC_ERRORS, true },
	{ "tx_acks", ICS_LINK_A_TX_ACKS, true },
	{ "rx_acks", ICS_LINK_A_RX_ACKS, true },
	{ "resets", ICS_LINK_A_RESETS, true },
	{ "done", ICS_LINK_A_MSGS_DONE, true },
	{ "failed", ICS_LINK_A_MSGS_FAILED, true },
};

_Static_assert(ARRAY_SIZE(link_cols) <= TABLE_COLS, "TABLE_COLS too small for links");
_Static_assert(1 + ICS_CHANNELS <= TABLE_COLS, "TABLE_COLS too small for channels");

static int cmd_links(struct icsnl *nl, const struct ics_instance *in, const struct opts *o)
{
	struct ics_links ls;
	struct table t;
	struct json j;
	size_t c;
	int id;

	(void)in;
	if (dump(nl, ICS_CMD_GET_LINKS, link_cb, &ls, sizeof(ls), "links"))
		return 1;
	list_begin(&j, &t, o, "links");
	if (!o->fmt.json) {
		for (c = 0; c < ARRAY_SIZE(link_cols); c++)
			table_str(&t, link_cols[c].head);
		table_end_row(&t);
	}
	for (id = 1; id <= ICS_MAX_NODES; id++) {
		const struct ics_link *l = &ls.link[id];

		if (!ls.present[id] || (o->node && (uint32_t)id != o->node))
			continue;
		if (o->fmt.json) {
			ics_link_json(&j, l);
			continue;
		}
		for (c = 0; c < ARRAY_SIZE(link_cols); c++) {
			int a = link_cols[c].attr;

			if (!l->have[a])
				table_str(&t, "-");
			else if (link_cols[c].count)
				table_count(&t, l->v[a], o);
			else
				table_u64(&t, l->v[a]);
		}
		table_end_row(&t);
	}
	list_end(&j, &t, o);
	return 0;
}

/* ICS_CMD_GET_MEMBERS */

struct ics_members {
	int n;
	struct ics_member m[1 + ICS_MAX_NODES];	/* in dump order: us first */
};

static int member_cb(struct nlattr **tb, void *arg)
{
	struct ics_members *ms = arg;

	if (ms->n >= (int)ARRAY_SIZE(ms->m))
		return 0;
	if (ics_member_parse(tb[ICS_A_MEMBER], &ms->m[ms->n]))
		return -EPROTO;
	ms->n++;
	return 0;
}

/* The view's summary: the line under the table, or the JSON members. */
static void quorum_line(const struct ics_instance *in)
{
	printf("generation %u; votes %u of %u expected, quorum %u: %s\n", in->generation,
	       in->current_votes, in->expected_votes, in->quorum,
	       in->has_quorum ? "has quorum" : "NO QUORUM");
}

static const char *const member_heads[] = {
	"node", "state", "since", "reason", "last_heard", "hb_rtt", "hb_rx", "missed",
	"votes", "incarnation", "address",
};

static int cmd_members(struct icsnl *nl, const struct ics_instance *in, const struct opts *o)
{
	struct ics_members *ms;
	char buf[ICS_NUMBUF], mac[18];
	uint64_t now;
	struct table t;
	struct json j;
	size_t c;
	int i;

	if (in->state != ICS_STATE_BOUND) {
		icsnl_err("members: instance is %s, not bound (icsctl bind)",
			  ics_state_name(in->state));
		return 1;
	}
	ms = calloc(1, sizeof(*ms));
	if (!ms) {
		icsnl_err("members: %s", strerror(ENOMEM));
		return 1;
	}
	if (dump(nl, ICS_CMD_GET_MEMBERS, member_cb, ms, sizeof(*ms), "members")) {
		free(ms);
		return 1;
	}
	now = icsnl_monotonic_ns();
	if (o->fmt.json) {
		json_init(&j, stdout, o->fmt.pretty);
		json_obj_begin(&j, NULL);
		json_u64(&j, "generation", in->generation);
		json_u64(&j, "current_votes", in->current_votes);
		json_u64(&j, "expected_votes", in->expected_votes);
		json_u64(&j, "quorum", in->quorum);
		json_bool(&j, "has_quorum", in->has_quorum);
		json_u64(&j, "heartbeat_ms", in->heartbeat_ms);
		json_u64(&j, "heartbeat_misses", in->heartbeat_misses);
		json_u64(&j, "now_ns", now);
		json_arr_begin(&j, "members");
		for (i = 0; i < ms->n; i++)
			ics_member_json(&j, &ms->m[i], now);
		json_arr_end(&j);
		json_obj_end(&j);
		free(ms);
		return 0;
	}
	memset(&t, 0, sizeof(t));
	for (c = 0; c < ARRAY_SIZE(member_heads); c++)
		table_str(&t, member_heads[c]);
	table_end_row(&t);
	for (i = 0; i < ms->n; i++) {
		const struct ics_member *m = &ms->m[i];
		const uint64_t *v = m->v;
		bool self = v[ICS_MEMBER_A_SELF];

		snprintf(table_next(&t), ICS_NUMBUF, "%llu%s",
			 (unsigned long long)v[ICS_MEMBER_A_NODE], self ? "*" : "");
		table_str(&t, ics_member_state_name(v[ICS_MEMBER_A_STATE]));
		if (!m->have[ICS_MEMBER_A_SINCE_NS] || now < v[ICS_MEMBER_A_SINCE_NS])
			table_str(&t, "-");
		else
			table_str(&t, icsnl_fmt_ago(buf, now - v[ICS_MEMBER_A_SINCE_NS]));
		table_str(&t, self ? "-" : ics_reason_name(v[ICS_MEMBER_A_REASON]));
		if (self || !m->have[ICS_MEMBER_A_LAST_HEARD_NS] ||
		    now < v[ICS_MEMBER_A_LAST_HEARD_NS])
			table_str(&t, "-");
		else
			table_str(&t, icsnl_fmt_ago(buf, now - v[ICS_MEMBER_A_LAST_HEARD_NS]));
		if (!v[ICS_MEMBER_A_HB_RTT_US])
			table_str(&t, "-");
		else
			table_str(&t, icsnl_fmt_ago(buf, v[ICS_MEMBER_A_HB_RTT_US] * 1000));
		if (self) {
			table_str(&t, "-");
			table_str(&t, "-");
		} else {
			table_count(&t, v[ICS_MEMBER_A_HB_RX], o);
			table_count(&t, v[ICS_MEMBER_A_HB_MISSED], o);
		}
		table_u64(&t, v[ICS_MEMBER_A_VOTES]);
		table_u64(&t, v[ICS_MEMBER_A_INCARNATION]);
		table_str(&t, icsnl_fmt_mac(mac, m->addr));
		table_end_row(&t);
	}
	table_print(&t);
	quorum_line(in);
	for (i = 0; i < ms->n; i++)
		if (ms->m[i].v[ICS_MEMBER_A_CONFLICTS])
			printf("node %llu: %llu frames from %s claimed its id (conflict, dropped)\n",
			       (unsigned long long)ms->m[i].v[ICS_MEMBER_A_NODE],
			       (unsigned long long)ms->m[i].v[ICS_MEMBER_A_CONFLICTS],
			       icsnl_fmt_mac(mac, ms->m[i].conflict_addr));
	free(ms);
	return 0;
}

/* icstat monitor: one line (or JSON object) per membership event. */
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int event_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[ICS_A_MAX + 1];
	const struct opts *o = arg;
	struct ics_event_msg e;
	char line[256];
	struct json j;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, ICS_A_MAX, NULL) < 0 ||
	    ics_event_parse(tb[ICS_A_EVENT], &e)) {
		icsnl_err("monitor: malformed event ignored");
		return NL_SKIP;
	}
	if (o->fmt.json) {
		json_init(&j, stdout, false);
		ics_event_json(&j, &e);	/* one line, newline included */
	} else {
		ics_event_format(line, sizeof(line), &e);
		puts(line);
	}
	fflush(stdout);
	return NL_OK;
}

static int cmd_monitor(struct icsnl *nl, const struct ics_instance *in, const struct opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct pollfd pfd;
	struct json j;
	int grp, err;

	grp = genl_ctrl_resolve_grp(nl->sk, ICS_GENL_NAME, ICS_GENL_MCGRP_EVENTS);
	if (grp < 0) {
		icsnl_err("monitor: no \"%s\" group in the ics family: %s", ICS_GENL_MCGRP_EVENTS,
			  nl_geterror(grp));
		return 1;
	}
	err = nl_socket_add_membership(nl->sk, grp);
	if (err < 0) {
		icsnl_err("monitor: joining the events group: %s", nl_geterror(err));
		return 1;
	}
	nl_socket_disable_seq_check(nl->sk);
	nl_socket_set_buffer_size(nl->sk, 1 << 20, 0);
	nl_socket_modify_cb(nl->sk, NL_CB_VALID, NL_CB_CUSTOM, event_cb, (void *)o);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	/* The view we start from: events are changes to it. */
	if (o->fmt.json) {
		json_init(&j, stdout, false);
		json_obj_begin(&j, NULL);
		json_str(&j, "type", "start");
		json_str(&j, "state", ics_state_name(in->state));
		if (in->state == ICS_STATE_BOUND) {
			json_u64(&j, "node", in->node_id);
			json_u64(&j, "generation", in->generation);
			json_bool(&j, "has_quorum", in->has_quorum);
		}
		json_obj_end(&j);
	} else if (in->state == ICS_STATE_BOUND) {
		printf("# monitoring node %u: ", in->node_id);
		quorum_line(in);
	} else {
		printf("# monitoring: instance %s\n", ics_state_name(in->state));
	}
	fflush(stdout);

	/* libnl retries a recvmsg() a signal interrupted: wait in poll() instead. */
	pfd.fd = nl_socket_get_fd(nl->sk);
	pfd.events = POLLIN;
	while (!stop) {
		if (poll(&pfd, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			icsnl_err("monitor: poll: %s", strerror(errno));
			return 1;
		}
		err = nl_recvmsgs_default(nl->sk);
		if (err == -NLE_NOMEM) {
			/* ENOBUFS: the socket overflowed; say so, go on. */
			icsnl_err("monitor: events lost: the receive buffer overflowed");
		} else if (err < 0 && err != -NLE_INTR) {
			icsnl_err("monitor: %s", nl_geterror(err));
			return 1;
		}
	}
	return 0;
}

static int cmd_show(struct icsnl *nl, const struct ics_instance *in, const struct opts *o)
{
	(void)nl;
	ics_print_show(in, &o->fmt);
	return 0;
}

static const struct command {
	const char *name;
	int (*fn)(struct icsnl *nl, const struct ics_instance *in, const struct opts *o);
} commands[] = {
	{ "chanhisttot", cmd_chanhisttot },
	{ "chanhist", cmd_chanhist },
	{ "channels", cmd_channels },
	{ "nodes", cmd_nodes },
	{ "links", cmd_links },
	{ "members", cmd_members },
	{ "monitor", cmd_monitor },
	{ "show", cmd_show },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: icstat [-j] [-p] [-n] [--tx | --rx] COMMAND [COMMAND...]\n"
		"\n"
		"Commands:\n"
		"  chanhisttot                  message-size histograms since load or reset\n"
		"  chanhist -i SECS [-c COUNT]  the histograms' deltas every SECS seconds\n"
		"  channels                     per-channel message and byte counters\n"
		"  nodes                        per-node reachability and counters\n"
		"  links [-N NODE]              per-peer reliable link state and counters\n"
		"  members                      the membership view: states, heartbeats, quorum\n"
		"  monitor                      one line per membership event, until interrupted\n"
		"  show                         instance state and counters\n"
		"  help                         this text\n"
		"\n"
		"Options:\n"
		"  -j         JSON output (chanhist: one object per line)\n"
		"  -p         pretty-printed JSON (implies -j)\n"
		"  -n         counts as plain numbers (default: 1k = 1000, 1m = 10^6, ...)\n"
		"  --tx, --rx sent or received messages only (default: both)\n"
		"  -i SECS    chanhist: interval in seconds\n"
		"  -c COUNT   chanhist: number of reports (default: until interrupted)\n"
		"  -N NODE    links: only the link to node NODE (or --node NODE)\n"
		"  -h, --help this text\n"
		"\n"
		"Several of chanhisttot, channels, nodes, links, members and show run\n"
		"one after another in one call (with -j and without -p, one JSON object\n"
		"per line); the first that fails stops the rest.\n");
}

/* Commands that report and return; chanhist and monitor run until stopped. */
static bool cmd_once(const struct command *c)
{
	return c->fn != cmd_chanhist && c->fn != cmd_monitor;
}

/* argv's commands into @cmds (room for argc); their number. */
static int parse_args(int argc, char **argv, struct opts *o, const struct command **cmds)
{
	static const struct option long_opts[] = {
		{ "tx", no_argument, NULL, 't' },
		{ "rx", no_argument, NULL, 'r' },
		{ "node", required_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool tx = false, rx = false, have_i = false, have_c = false, have_n = false;
	bool chanhist = false, links = false;
	size_t k;
	int c, n = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jpnhi:c:N:", long_opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->fmt.json = true;
			break;
		case 'p':
			o->fmt.json = o->fmt.pretty = true;
			break;
		case 'n':
			o->fmt.raw = true;
			break;
		case 't':
			tx = true;
			break;
		case 'r':
			rx = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'i':
			if (icsnl_parse_u32(optarg, &o->interval) || !o->interval)
				icsnl_usage_err("invalid interval \"%s\" (seconds, >= 1)",
						optarg);
			have_i = true;
			break;
		case 'c':
			if (icsnl_parse_u32(optarg, &o->count) || !o->count)
				icsnl_usage_err("invalid count \"%s\" (reports, >= 1)",
						optarg);
			have_c = true;
			break;
		case 'N':
			if (icsnl_parse_u32(optarg, &o->node) || !o->node ||
			    o->node > ICS_MAX_NODES)
				icsnl_usage_err("invalid node \"%s\" (1..%d)", optarg,
						ICS_MAX_NODES);
			have_n = true;
			break;
		default:
			icsnl_opt_err("", c, argv);
		}
	}
	o->dir[TX] = tx || !rx;
	o->dir[RX] = rx || !tx;

	if (optind >= argc)
		icsnl_usage_err("missing command (try \"icstat help\")");
	if (!strcmp(argv[optind], "help")) {
		if (optind + 1 < argc)
			icsnl_usage_err("help: runs alone, not with %s", argv[optind + 1]);
		usage(stdout);
		exit(0);
	}
	for (; optind < argc; optind++) {
		if (!strcmp(argv[optind], "help"))
			icsnl_usage_err("help: runs alone, not with %s", argv[optind - 1]);
		for (k = 0; k < ARRAY_SIZE(commands); k++)
			if (!strcmp(argv[optind], commands[k].name))
				break;
		if (k == ARRAY_SIZE(commands))
			icsnl_usage_err("unknown command \"%s\" (try \"icstat help\")",
					argv[optind]);
		if (n && !cmd_once(cmds[0]))
			icsnl_usage_err("%s: runs alone, not with %s", cmds[0]->name,
					commands[k].name);
		if (n && !cmd_once(&commands[k]))
			icsnl_usage_err("%s: runs alone, not with %s", commands[k].name,
					cmds[0]->name);
		if (commands[k].fn == cmd_chanhist)
			chanhist = true;
		if (commands[k].fn == cmd_links)
			links = true;
		cmds[n++] = &commands[k];
	}
	if (chanhist && !have_i)
		icsnl_usage_err("chanhist: missing \"-i SECONDS\"");
	if (!chanhist && (have_i || have_c))
		icsnl_usage_err("%s: options -i and -c are for chanhist only", cmds[0]->name);
	if (!links && have_n)
		icsnl_usage_err("%s: option -N is for links only", cmds[0]->name);
	return n;
}

int main(int argc, char **argv)
{
	const struct command **cmds;
	struct ics_instance in;
	struct opts o = { 0 };
	struct icsnl nl;
	int err, ret = 0, n, k;

	icsnl_prog = "icstat";
	cmds = calloc(argc, sizeof(*cmds));
	if (!cmds) {
		icsnl_err("out of memory");
		return 1;
	}
	n = parse_args(argc, argv, &o, cmds);

	if (icsnl_open(&nl)) {
		free(cmds);
		return 1;
	}
	for (k = 0; k < n && !ret; k++) {
		/* each command reports the instance as it is when it runs */
		err = ics_get_instance(&nl, &in);
		if (err) {
			icsnl_perror(&nl, cmds[k]->name, err);
			ret = 1;
			break;
		}
		if (in.state == ICS_STATE_UNUSED && cmds[k]->fn != cmd_monitor) {
			icsnl_err("no ics instance in this network namespace (bind one with icsctl bind)");
			ret = 1;
			break;
		}
		if (k && !o.fmt.json)
			putchar('\n');
		ret = cmds[k]->fn(&nl, &in, &o);
	}
	icsnl_close(&nl);
	free(cmds);
	if (icsnl_flush_stdout())
		ret = 1;
	return ret;
}
