// SPDX-License-Identifier: GPL-2.0
/*
 * icstat - ics statistics: per-channel message-size histograms (in the style
 * of TruCluster's cfsstat), channel, node and link counters, instance state,
 * once or every few seconds, as text, JSON or CSV. Read-only; works for any
 * user.
 */
#include <assert.h>
#include <dirent.h>
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
#include "nicview.h"

enum { TX, RX, DIRS };

static const char *const dir_key[DIRS] = { "tx", "rx" };
static const char *const dir_title[DIRS] = { "Sent:", "Received:" };

/*
 * -N with chanhisttot or chanhist: their channels are those of the traffic
 * with this node (GET_PEER_CHANNELS), not all of it; 0: all of it.
 */
static uint32_t hist_node;

/*
 * nic DEV: the device (NULL: the one ics is bound to); nic_only: no other
 * command, and a device named, so ics itself is not read (nor needed).
 */
static const char *nic_dev;
static bool nic_only;

/* A histogram's title: "Sent:", or with -N "Sent to node 2:" */
static void print_dir_title(int d)
{
	if (hist_node)
		printf("%s node %u:", d == TX ? "Sent to" : "Received from", hist_node);
	else
		fputs(dir_title[d], stdout);
}

struct opts {
	struct icsnl_fmt fmt;
	bool dir[DIRS];		/* --tx / --rx; both by default */
	bool csv;		/* --csv: one line per non-zero value */
	bool rate;		/* -r: counters per second */
	bool share;		/* --share: histograms as shares of the messages */
	bool no_totals;		/* -y, and chanhist: no report of the totals first */
	uint32_t interval;	/* -i: seconds between reports, 0: one report */
	uint32_t count;		/* -c: reports, 0: until interrupted */
	uint32_t node;		/* -N: links, chanhisttot, chanhist of node N; 0: all */
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

/* GET_PEER_CHANNELS: each node's sizes, all channels, and each channel's counts. */
struct ics_peers {
	bool present[ICS_MAX_NODES + 1];
	struct ics_dir dir[ICS_MAX_NODES + 1][DIRS];	/* by node id */
	bool chan[ICS_MAX_NODES + 1][ICS_CHANNELS];	/* a message for the channel */
	uint64_t msgs[ICS_MAX_NODES + 1][ICS_CHANNELS][DIRS];
	uint64_t bytes[ICS_MAX_NODES + 1][ICS_CHANNELS][DIRS];
};

struct ics_members {
	int n;
	struct ics_member m[1 + ICS_MAX_NODES];	/* in dump order: us first */
};

/* One reading of the counters the commands need, and when it was taken. */
enum { NEED_CHANS = 1, NEED_NODES = 2, NEED_LINKS = 4, NEED_MEMBERS = 8, NEED_PEERS = 16,
       NEED_NIC = 32 };

/* nic: a device's counters and the classes that counted since attach */
struct nic_view {
	struct ics_nic_snap n;
	bool seen[ICS_NIC_CLASSES];
};


struct snap {
	uint64_t mono_before_ns;	/* CLOCK_MONOTONIC before the instance was read */
	uint64_t mono_ns;		/* and after */
	struct timespec real;		/* CLOCK_REALTIME */
	struct ics_instance in;
	struct ics_instance in_after;	/* read again after the dumps, for a later show */
	struct ics_chans cs;
	struct ics_nodes ns;
	struct ics_links ls;
	struct ics_members ms;
	struct ics_peers ps;
	struct nic_view nic;
};

/* One report: the values it shows (totals, or one interval's change) and when. */
struct rep {
	const struct opts *o;
	const struct snap *s;
	uint64_t n;		/* 0: totals since load or reset, else the interval's number */
	bool after_dumps;	/* a command before this one dumped channels, nodes... */
	uint64_t shown;		/* readings reported so far */
	double secs;		/* the interval's length, as measured */
	double elapsed;		/* seconds from the first reading to this one */
	char time[40];		/* this reading's wall-clock time, ISO 8601 */
};

/* Counters per second, when asked; the totals report has no period to divide by. */
static bool per_second(const struct rep *r)
{
	return r->o->rate && r->n;
}

/* Text tables: first column left-aligned, the others right-aligned. */

#define TABLE_ROWS	(1 + ICS_MAX_NODES)
#define TABLE_COLS	(1 + ICS_MAX_NODES)	/* peerhisttot's; the others have fewer */

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

/* A counter: its value as a count (k, m, ... unless -n), or per second. */
static void table_ctr(struct table *t, const struct rep *r, uint64_t v)
{
	if (per_second(r))
		icsnl_fmt_rate(table_next(t), v / r->secs, r->o->fmt.raw);
	else
		icsnl_fmt_count(table_next(t), v, r->o->fmt.raw);
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

/* JSON: every report object starts with when, where and over what period. */
static void json_head(struct json *j, const struct rep *r)
{
	json_init(j, stdout, r->o->fmt.pretty);
	json_obj_begin(j, NULL);
	json_str(j, "time", r->time);
	if (r->s->in.state == ICS_STATE_BOUND)
		json_u64(j, "node_id", r->s->in.node_id);
	if (!r->o->interval)
		return;
	json_u64(j, "interval", r->n);
	json_fixed(j, "elapsed_s", r->elapsed, 6);
	if (r->n)
		json_fixed(j, "seconds", r->secs, 6);
	json_bool(j, "per_second", per_second(r));
}

static void json_ctr(struct json *j, const char *key, const struct rep *r, uint64_t v)
{
	if (per_second(r))
		json_rate(j, key, v / r->secs);
	else
		json_u64(j, key, v);
}

/*
 * CSV: under the header csv_header, one line per counter that is not zero
 * and per state (zero or not). Empty fields do not apply to the value (no
 * channel for a link's counters).
 */
static const char csv_header[] =
	"time,elapsed_s,node,interval,report,channel,peer,dir,row,metric,value\n";

static void csv_begin(const struct rep *r, const char *report, const char *chan,
		      uint32_t peer, int dir, const char *row)
{
	printf("%s,%.3f,", r->time, r->elapsed);
	if (r->s->in.state == ICS_STATE_BOUND)
		printf("%u", r->s->in.node_id);
	printf(",%" PRIu64 ",%s,%s,", r->n, report, chan ? chan : "");
	if (peer)
		printf("%u", peer);
	printf(",%s,%s,", dir >= 0 ? dir_key[dir] : "", row ? row : "");
}

/* A counter (per second with -r), or with !ctr a state such as a window. */
static void csv_val(const struct rep *r, const char *report, const char *chan, uint32_t peer,
		    int dir, const char *row, const char *metric, uint64_t v, bool ctr)
{
	if (ctr && !v)
		return;
	csv_begin(r, report, chan, peer, dir, row);
	if (ctr && per_second(r))
		printf("%s_per_s,%.9g\n", metric, v / r->secs);
	else
		printf("%s,%" PRIu64 "\n", metric, v);
}

static void csv_str(const struct rep *r, const char *report, uint32_t peer,
		    const char *metric, const char *v)
{
	csv_begin(r, report, NULL, peer, -1, NULL);
	printf("%s,%s\n", metric, v);
}

/* Counters that went down were reset in between: then the new value is the delta. */
static uint64_t delta(uint64_t now, uint64_t then)
{
	return now >= then ? now - then : now;
}

/*
 * An error of a request: ics sends no ENOENT, genetlink does for a family
 * id it no longer has, so then the module went away after icstat found it.
 */
static void request_err(const struct icsnl *nl, const char *ctx, int err)
{
	if (err == -ENOENT)
		icsnl_err("%s: the ics module went away (unloaded)", ctx);
	else
		icsnl_perror(nl, ctx, err);
}

/* Dump cmd into arg: 0, or the error after printing it with context ctx. */
static int dump(struct icsnl *nl, uint8_t cmd, icsnl_cb_t cb, void *arg, size_t len,
		const char *ctx)
{
	int err = icsnl_dump(nl, cmd, cb, arg, len);

	if (err)
		request_err(nl, ctx, err);
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
	/* GET_PEER_CHANNELS: the channels of node hist_node's traffic only */
	if (tb[ICS_A_NODE_ID] && nla_get_u32(tb[ICS_A_NODE_ID]) != hist_node)
		return 0;
	c = &cs->ch[id];
	c->handler = t[ICS_CHAN_A_HANDLER] && nla_get_u8(t[ICS_CHAN_A_HANDLER]);
	c->has_prio = t[ICS_CHAN_A_PRIO];
	c->prio = c->has_prio ? nla_get_u8(t[ICS_CHAN_A_PRIO]) : 0;
	c->rx_unclaimed = icsnl_get_u64(t[ICS_CHAN_A_RX_UNCLAIMED]);
	if (parse_dir(t[ICS_CHAN_A_TX], &c->dir[TX]) || parse_dir(t[ICS_CHAN_A_RX], &c->dir[RX]))
		return -EPROTO;
	return 0;
}

/* GET_PEER_CHANNELS into struct ics_peers: each node's sizes, all channels. */
static int peer_cb(struct nlattr **tb, void *arg)
{
	struct nlattr *t[ICS_CHAN_A_MAX + 1];
	struct ics_peers *ps = arg;
	struct ics_dir d;
	uint32_t node, ch;
	int dir, r, a;

	if (!tb[ICS_A_NODE_ID] || !tb[ICS_A_CHANNEL] ||
	    nla_parse_nested(t, ICS_CHAN_A_MAX, tb[ICS_A_CHANNEL], chan_policy) < 0 ||
	    !t[ICS_CHAN_A_ID])
		return -EPROTO;
	node = nla_get_u32(tb[ICS_A_NODE_ID]);
	ch = nla_get_u32(t[ICS_CHAN_A_ID]);
	if (!node || node > ICS_MAX_NODES)
		return -EPROTO;
	if (ch >= ICS_CHANNELS)
		return 0;	/* a channel newer than this tool */
	ps->present[node] = true;
	ps->chan[node][ch] = true;
	for (dir = 0; dir < DIRS; dir++) {
		a = dir == TX ? ICS_CHAN_A_TX : ICS_CHAN_A_RX;
		memset(&d, 0, sizeof(d));
		if (parse_dir(t[a], &d))
			return -EPROTO;
		ps->msgs[node][ch][dir] = d.msgs;
		ps->bytes[node][ch][dir] = d.bytes;
		ps->dir[node][dir].msgs += d.msgs;
		ps->dir[node][dir].bytes += d.bytes;
		for (r = 0; r < ICS_HIST_ROWS; r++)
			ps->dir[node][dir].hist[r] += d.hist[r];
	}
	return 0;
}

static void dir_delta(struct ics_dir *d, const struct ics_dir *then)
{
	int r;

	d->msgs = delta(d->msgs, then->msgs);
	d->bytes = delta(d->bytes, then->bytes);
	for (r = 0; r < ICS_HIST_ROWS; r++)
		d->hist[r] = delta(d->hist[r], then->hist[r]);
}

static void peers_delta(struct ics_peers *ps, const struct ics_peers *then)
{
	int n, c, d;

	for (n = 1; n <= ICS_MAX_NODES; n++) {
		for (d = 0; d < DIRS; d++)
			dir_delta(&ps->dir[n][d], &then->dir[n][d]);
		for (c = 0; c < ICS_CHANNELS; c++) {
			for (d = 0; d < DIRS; d++) {
				ps->msgs[n][c][d] = delta(ps->msgs[n][c][d], then->msgs[n][c][d]);
				ps->bytes[n][c][d] = delta(ps->bytes[n][c][d], then->bytes[n][c][d]);
			}
		}
	}
}

static void chans_delta(struct ics_chans *cs, const struct ics_chans *then)
{
	int i, d;

	for (i = 0; i < ICS_CHANNELS; i++) {
		const struct ics_chan *t = &then->ch[i];
		struct ics_chan *c = &cs->ch[i];

		c->rx_unclaimed = delta(c->rx_unclaimed, t->rx_unclaimed);
		for (d = 0; d < DIRS; d++)
			dir_delta(&c->dir[d], &t->dir[d]);
	}
}

/* The "rows" array: the histogram rows' labels. */
static void json_rows(struct json *j)
{
	int r;

	json_arr_begin(j, "rows");
	for (r = 0; r < ICS_HIST_ROWS; r++)
		json_str(j, NULL, ics_hist_labels[r]);
	json_arr_end(j);
}

/* The "tx" and "rx" objects of a channel or a peer, those asked for. */
static void json_dirs(struct json *j, const struct rep *rp, const struct ics_dir *dir)
{
	int d, r;

	for (d = 0; d < DIRS; d++) {
		if (!rp->o->dir[d])
			continue;
		json_obj_begin(j, dir_key[d]);
		json_ctr(j, "msgs", rp, dir[d].msgs);
		json_ctr(j, "bytes", rp, dir[d].bytes);
		json_arr_begin(j, "hist");
		for (r = 0; r < ICS_HIST_ROWS; r++)
			json_ctr(j, NULL, rp, dir[d].hist[r]);
		json_arr_end(j);
		json_obj_end(j);
	}
}

/* The "channels" array of chanhisttot, chanhist and channels. */
static void json_chans(struct json *j, const struct rep *rp)
{
	const struct ics_chans *cs = &rp->s->cs;
	int i;

	json_arr_begin(j, "channels");
	for (i = 0; i < ICS_CHANNELS; i++) {
		const struct ics_chan *c = &cs->ch[i];

		json_obj_begin(j, NULL);
		json_u64(j, "id", i);
		json_str(j, "name", ics_channel_names[i]);
		if (!hist_node)		/* the channel's, not the traffic with a node's */
			json_bool(j, "handler", c->handler);
		if (c->has_prio)
			json_u64(j, "prio", c->prio);
		json_dirs(j, rp, c->dir);
		if (!hist_node)
			json_ctr(j, "rx_unclaimed", rp, c->rx_unclaimed);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/*
 * --share: the messages of one direction by size row and by channel, each
 * in percent of them all, with a bar (50 characters for 100 %): cfsstat's
 * workflow's Figures 15 and 16. Rows and channels without messages are left
 * out.
 */
static void share_part(struct json *j, const struct rep *r, const char *what,
		       const char *const *names, const uint64_t *v, int n, uint64_t total)
{
	char buf[ICS_NUMBUF], bar[51];
	double pct;
	int i, w;

	if (j)
		json_arr_begin(j, what);
	else
		printf("%-8s %9s %6s\n", what, per_second(r) ? "msgs/s" : "messages", "share");
	for (i = 0; i < n; i++) {
		if (!v[i])
			continue;
		pct = 100.0 * v[i] / total;
		if (j) {
			json_obj_begin(j, NULL);
			json_str(j, !strcmp(what, "size") ? "row" : "channel", names[i]);
			json_ctr(j, "msgs", r, v[i]);
			json_fixed(j, "percent", pct, 3);
			json_obj_end(j);
			continue;
		}
		w = (int)(pct / 2 + 0.5);
		memset(bar, '#', w);
		bar[w] = '\0';
		if (per_second(r))
			icsnl_fmt_rate(buf, v[i] / r->secs, r->o->fmt.raw);
		else
			icsnl_fmt_count(buf, v[i], r->o->fmt.raw);
		printf("%-8s %9s %5.1f%%  %s\n", names[i], buf, pct, bar);
	}
	if (j)
		json_arr_end(j);
}

static void print_share(const struct rep *r)
{
	const struct ics_chans *cs = &r->s->cs;
	uint64_t rows[ICS_HIST_ROWS], chans[ICS_CHANNELS], total;
	char buf[ICS_NUMBUF];
	struct json j, *jp = NULL;
	bool first = true;
	int d, i, k;

	if (r->o->fmt.json) {
		jp = &j;
		json_head(jp, r);
		if (hist_node)
			json_u64(jp, "peer", hist_node);
		json_obj_begin(jp, "share");
	}
	for (d = 0; d < DIRS; d++) {
		if (!r->o->dir[d])
			continue;
		memset(rows, 0, sizeof(rows));
		total = 0;
		for (i = 0; i < ICS_CHANNELS; i++) {
			chans[i] = 0;
			for (k = 0; k < ICS_HIST_ROWS; k++)
				chans[i] += cs->ch[i].dir[d].hist[k];
			for (k = 0; k < ICS_HIST_ROWS; k++)
				rows[k] += cs->ch[i].dir[d].hist[k];
			total += chans[i];
		}
		if (jp) {
			json_obj_begin(jp, dir_key[d]);
			json_ctr(jp, "msgs", r, total);
		} else {
			if (!first)
				putchar('\n');
			if (per_second(r))
				icsnl_fmt_rate(buf, total / r->secs, r->o->fmt.raw);
			else
				icsnl_fmt_count(buf, total, r->o->fmt.raw);
			print_dir_title(d);
			printf(" %s messages%s\n", buf, per_second(r) ? " per second" : "");
		}
		first = false;
		if (total || jp) {	/* JSON: empty arrays when nothing moved */
			share_part(jp, r, "size", ics_hist_labels, rows, ICS_HIST_ROWS, total);
			if (!jp)
				putchar('\n');
			share_part(jp, r, "channel", ics_channel_names, chans, ICS_CHANNELS,
				   total);
		}
		if (jp)
			json_obj_end(jp);
	}
	if (jp) {
		json_obj_end(jp);
		json_obj_end(jp);
	}
}

/* chanhisttot and chanhist: the histograms, or their shares. */
static void rep_hist(const struct rep *rp)
{
	const struct ics_chans *cs = &rp->s->cs;
	const struct opts *o = rp->o;
	struct table t;
	struct json j;
	bool first = true;
	int d, r, i;

	if (o->share) {
		print_share(rp);
		return;
	}
	if (o->csv) {
		for (i = 0; i < ICS_CHANNELS; i++)
			for (d = 0; d < DIRS; d++)
				for (r = 0; o->dir[d] && r < ICS_HIST_ROWS; r++)
					csv_val(rp, "chanhist", ics_channel_names[i], hist_node, d,
						ics_hist_labels[r], "msgs", cs->ch[i].dir[d].hist[r],
						true);
		return;
	}
	if (o->fmt.json) {
		json_head(&j, rp);
		if (hist_node)
			json_u64(&j, "peer", hist_node);
		json_rows(&j);
		json_chans(&j, rp);
		json_obj_end(&j);
		return;
	}
	for (d = 0; d < DIRS; d++) {
		if (!o->dir[d])
			continue;
		if (!first)
			putchar('\n');
		first = false;
		print_dir_title(d);
		putchar('\n');
		memset(&t, 0, sizeof(t));
		table_str(&t, "");
		for (i = 0; i < ICS_CHANNELS; i++)
			table_str(&t, ics_channel_names[i]);
		table_end_row(&t);
		for (r = 0; r < ICS_HIST_ROWS; r++) {
			table_str(&t, ics_hist_labels[r]);
			for (i = 0; i < ICS_CHANNELS; i++)
				table_ctr(&t, rp, cs->ch[i].dir[d].hist[r]);
			table_end_row(&t);
		}
		table_print(&t);
	}
}

/*
 * peerhisttot and peerhist: the sizes of the messages sent to and received
 * from each node, all channels together; a column per node with messages.
 */
static void rep_peerhist(const struct rep *rp)
{
	const struct ics_peers *ps = &rp->s->ps;
	const struct opts *o = rp->o;
	char name[ICS_NUMBUF];
	struct table *t;
	struct json j;
	bool first = true;
	int d, r, n;

	if (o->csv) {
		for (n = 1; n <= ICS_MAX_NODES; n++)
			for (d = 0; ps->present[n] && d < DIRS; d++)
				for (r = 0; o->dir[d] && r < ICS_HIST_ROWS; r++)
					csv_val(rp, "peerhist", NULL, n, d, ics_hist_labels[r],
						"msgs", ps->dir[n][d].hist[r], true);
		return;
	}
	if (o->fmt.json) {
		json_head(&j, rp);
		json_rows(&j);
		json_arr_begin(&j, "peers");
		for (n = 1; n <= ICS_MAX_NODES; n++) {
			if (!ps->present[n])
				continue;
			json_obj_begin(&j, NULL);
			json_u64(&j, "node", n);
			json_dirs(&j, rp, ps->dir[n]);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_obj_end(&j);
		return;
	}
	t = malloc(sizeof(*t));
	if (!t) {
		icsnl_err("%s", strerror(ENOMEM));
		return;
	}
	for (d = 0; d < DIRS; d++) {
		if (!o->dir[d])
			continue;
		if (!first)
			putchar('\n');
		first = false;
		printf("%s\n", d == TX ? "Sent, by node:" : "Received, by node:");
		memset(t, 0, sizeof(*t));
		table_str(t, "");
		for (n = 1; n <= ICS_MAX_NODES; n++) {
			if (!ps->present[n])
				continue;
			snprintf(name, sizeof(name), "%d", n);
			table_str(t, name);
		}
		table_end_row(t);
		for (r = 0; r < ICS_HIST_ROWS; r++) {
			table_str(t, ics_hist_labels[r]);
			for (n = 1; n <= ICS_MAX_NODES; n++)
				if (ps->present[n])
					table_ctr(t, rp, ps->dir[n][d].hist[r]);
			table_end_row(t);
		}
		table_print(t);
	}
	free(t);
}

static void rep_channels(const struct rep *r)
{
	const struct opts *o = r->o;
	struct table t;
	struct json j;
	int i, d;

	if (o->csv) {
		for (i = 0; i < ICS_CHANNELS; i++) {
			const struct ics_chan *c = &r->s->cs.ch[i];
			const char *name = ics_channel_names[i];

			for (d = 0; d < DIRS; d++) {
				if (!o->dir[d])
					continue;
				csv_val(r, "channels", name, 0, d, NULL, "msgs", c->dir[d].msgs, true);
				csv_val(r, "channels", name, 0, d, NULL, "bytes", c->dir[d].bytes,
					true);
			}
			if (o->dir[RX])
				csv_val(r, "channels", name, 0, RX, NULL, "unclaimed",
					c->rx_unclaimed, true);
		}
		return;
	}
	if (o->fmt.json) {
		json_head(&j, r);
		json_chans(&j, r);
		json_obj_end(&j);
		return;
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
		const struct ics_chan *c = &r->s->cs.ch[i];

		table_str(&t, ics_channel_names[i]);
		for (d = 0; d < DIRS; d++) {
			if (!o->dir[d])
				continue;
			table_ctr(&t, r, c->dir[d].msgs);
			table_ctr(&t, r, c->dir[d].bytes);
		}
		table_ctr(&t, r, c->rx_unclaimed);
		table_str(&t, c->handler ? "yes" : "no");
		if (c->has_prio)
			table_u64(&t, c->prio);
		else
			table_str(&t, "-");
		table_end_row(&t);
	}
	table_print(&t);
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

static void nodes_delta(struct ics_nodes *ns, const struct ics_nodes *then)
{
	int id, d;

	for (id = 1; id <= ICS_MAX_NODES; id++) {
		struct ics_node *n = &ns->node[id];
		const struct ics_node *t = &then->node[id];

		for (d = 0; d < DIRS; d++) {
			n->msgs[d] = delta(n->msgs[d], t->msgs[d]);
			n->bytes[d] = delta(n->bytes[d], t->bytes[d]);
		}
	}
}

static void rep_nodes(const struct rep *r)
{
	static const char *const msgs_key[DIRS] = { "tx_msgs", "rx_msgs" };
	static const char *const bytes_key[DIRS] = { "tx_bytes", "rx_bytes" };
	const struct opts *o = r->o;
	char mac[18], buf[ICS_NUMBUF];
	struct table t;
	struct json j;
	int id, d;

	memset(&t, 0, sizeof(t));
	if (o->fmt.json) {
		json_head(&j, r);
		json_arr_begin(&j, "nodes");
	} else if (!o->csv) {
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
		const struct ics_node *n = &r->s->ns.node[id];
		bool addr = n->reachable && n->has_addr, last = n->reachable && n->has_last;

		if (!n->present)
			continue;
		icsnl_fmt_mac(mac, n->addr);
		if (o->csv) {
			csv_val(r, "nodes", NULL, id, -1, NULL, "reachable", n->reachable, false);
			for (d = 0; d < DIRS; d++) {
				if (!o->dir[d])
					continue;
				csv_val(r, "nodes", NULL, id, d, NULL, "msgs", n->msgs[d], true);
				csv_val(r, "nodes", NULL, id, d, NULL, "bytes", n->bytes[d], true);
			}
			continue;
		}
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
					json_ctr(&j, msgs_key[d], r, n->msgs[d]);
					json_ctr(&j, bytes_key[d], r, n->bytes[d]);
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
				table_ctr(&t, r, n->msgs[d]);
				table_ctr(&t, r, n->bytes[d]);
			}
		}
		table_end_row(&t);
	}
	if (o->fmt.json) {
		json_arr_end(&j);
		json_obj_end(&j);
	} else if (!o->csv) {
		table_print(&t);
	}
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

/* Counters change by the interval; states (window, queue, rtt) are as read. */
static void links_delta(struct ics_links *ls, const struct ics_links *then)
{
	int id, a;

	for (id = 1; id <= ICS_MAX_NODES; id++) {
		if (!ls->present[id] || !then->present[id])
			continue;
		for (a = 0; a <= ICS_LINK_A_MAX; a++)
			if (ics_link_counter(a))
				ls->link[id].v[a] = delta(ls->link[id].v[a], then->link[id].v[a]);
	}
}

/*
 * A link's counters and states; not its sessions and sequence numbers
 * (-j has them), and of the per-channel queue only the channels with bytes
 * queued.
 */
static void csv_link(const struct rep *r, uint32_t id, const struct ics_link *l)
{
	int a, i;

	for (a = 0; a <= ICS_LINK_A_MAX; a++) {
		switch (a) {
		case ICS_LINK_A_NODE:
		case ICS_LINK_A_TX_SESSION:
		case ICS_LINK_A_RX_SESSION:
		case ICS_LINK_A_SND_UNA:
		case ICS_LINK_A_SND_NXT:
		case ICS_LINK_A_RCV_NXT:
			continue;
		}
		if (!l->have[a])
			continue;
		if (a != ICS_LINK_A_QUEUE) {
			csv_val(r, "links", NULL, id, -1, NULL, ics_link_key(a), l->v[a],
				ics_link_counter(a));
			continue;
		}
		for (i = 0; i < ICS_CHANNELS; i++)
			if (l->queue[i])
				csv_val(r, "links", ics_channel_names[i], id, TX, NULL, "queue",
					l->queue[i], false);
	}
}

static void rep_links(const struct rep *r)
{
	const struct opts *o = r->o;
	struct table t;
	struct json j;
	size_t c;
	int id;

	memset(&t, 0, sizeof(t));
	if (o->fmt.json) {
		json_head(&j, r);
		json_arr_begin(&j, "links");
	} else if (!o->csv) {
		for (c = 0; c < ARRAY_SIZE(link_cols); c++)
			table_str(&t, link_cols[c].head);
		table_end_row(&t);
	}
	for (id = 1; id <= ICS_MAX_NODES; id++) {
		const struct ics_link *l = &r->s->ls.link[id];

		if (!r->s->ls.present[id] || (o->node && (uint32_t)id != o->node))
			continue;
		if (o->csv) {
			csv_link(r, id, l);
			continue;
		}
		if (o->fmt.json) {
			ics_link_json(&j, l, per_second(r) ? r->secs : 0);
			continue;
		}
		for (c = 0; c < ARRAY_SIZE(link_cols); c++) {
			int a = link_cols[c].attr;

			if (!l->have[a])
				table_str(&t, "-");
			else if (ics_link_counter(a))
				table_ctr(&t, r, l->v[a]);
			else if (link_cols[c].count)
				icsnl_fmt_count(table_next(&t), l->v[a], o->fmt.raw);
			else
				table_u64(&t, l->v[a]);
		}
		table_end_row(&t);
	}
	if (o->fmt.json) {
		json_arr_end(&j);
		json_obj_end(&j);
	} else if (!o->csv) {
		table_print(&t);
	}
}

/* ICS_CMD_GET_MEMBERS */

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

static void members_delta(struct ics_members *ms, const struct ics_members *then)
{
	static const int ctrs[] = {
		ICS_MEMBER_A_HB_RX, ICS_MEMBER_A_HB_MISSED, ICS_MEMBER_A_CONFLICTS,
	};
	size_t c;
	int i, k;

	for (i = 0; i < ms->n; i++) {
		uint64_t *v = ms->m[i].v;

		for (k = 0; k < then->n; k++)
			if (then->m[k].v[ICS_MEMBER_A_NODE] == v[ICS_MEMBER_A_NODE])
				break;
		if (k == then->n)
			continue;	/* new: its counters are all this interval's */
		for (c = 0; c < ARRAY_SIZE(ctrs); c++)
			v[ctrs[c]] = delta(v[ctrs[c]], then->m[k].v[ctrs[c]]);
	}
}

static const char *const member_heads[] = {
	"node", "state", "since", "reason", "last_heard", "hb_rtt", "hb_rx", "missed",
	"votes", "incarnation", "address",
};

static void csv_members(const struct rep *r)
{
	const struct ics_instance *in = &r->s->in;
	int i;

	csv_val(r, "members", NULL, 0, -1, NULL, "generation", in->generation, false);
	csv_val(r, "members", NULL, 0, -1, NULL, "current_votes", in->current_votes, false);
	csv_val(r, "members", NULL, 0, -1, NULL, "expected_votes", in->expected_votes, false);
	csv_val(r, "members", NULL, 0, -1, NULL, "quorum", in->quorum, false);
	csv_val(r, "members", NULL, 0, -1, NULL, "has_quorum", in->has_quorum, false);
	for (i = 0; i < r->s->ms.n; i++) {
		const struct ics_member *m = &r->s->ms.m[i];
		uint32_t id = m->v[ICS_MEMBER_A_NODE];

		csv_str(r, "members", id, "state", ics_member_state_name(m->v[ICS_MEMBER_A_STATE]));
		csv_val(r, "members", NULL, id, -1, NULL, "votes", m->v[ICS_MEMBER_A_VOTES], false);
		csv_val(r, "members", NULL, id, -1, NULL, "hb_rtt_us",
			m->v[ICS_MEMBER_A_HB_RTT_US], false);
		csv_val(r, "members", NULL, id, -1, NULL, "hb_rx", m->v[ICS_MEMBER_A_HB_RX], true);
		csv_val(r, "members", NULL, id, -1, NULL, "hb_missed",
			m->v[ICS_MEMBER_A_HB_MISSED], true);
		csv_val(r, "members", NULL, id, -1, NULL, "conflicts",
			m->v[ICS_MEMBER_A_CONFLICTS], true);
	}
}

static void rep_members(const struct rep *r)
{
	const struct ics_instance *in = &r->s->in;
	const struct ics_members *ms = &r->s->ms;
	char buf[ICS_NUMBUF], mac[18];
	uint64_t now = r->s->mono_ns;
	struct table t;
	struct json j;
	size_t c;
	int i;

	if (r->o->csv) {
		csv_members(r);
		return;
	}
	if (r->o->fmt.json) {
		json_head(&j, r);
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
			ics_member_json(&j, &ms->m[i], now, per_second(r) ? r->secs : 0);
		json_arr_end(&j);
		json_obj_end(&j);
		return;
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
			table_ctr(&t, r, v[ICS_MEMBER_A_HB_RX]);
			table_ctr(&t, r, v[ICS_MEMBER_A_HB_MISSED]);
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

/*
 * icstat prometheus: every counter and state in the Prometheus text
 * exposition format (0.0.4), for node_exporter's textfile collector. Names
 * are stable: ics_ and the object, counters end in _total, times are in
 * seconds. Labels: peer (the other end of a link, another node), member
 * (a member of the view, this node too); this node's id is ics_info's
 * node_id.
 */
static void prom_head(const char *name, const char *type, const char *help)
{
	printf("# HELP ics_%s %s\n# TYPE ics_%s %s\n", name, help, name, type);
}

/* A label value: backslash, double quote and newline escaped. */
static void prom_label(const char *key, const char *v, bool last)
{
	printf("%s=\"", key);
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			putchar('\\');
		if (*v == '\n')
			fputs("\\n", stdout);
		else
			putchar(*v);
	}
	printf("\"%s", last ? "}" : ",");
}

static void prom_chans(const struct ics_chans *cs)
{
	static const char *const what[] = { "messages", "bytes" };
	uint64_t cum;
	int w, i, d, r;

	for (w = 0; w < 2; w++) {
		char name[40], help[80];

		snprintf(name, sizeof(name), "channel_%s_total", what[w]);
		snprintf(help, sizeof(help), "Message %s sent (tx) or received (rx) on the channel",
			 w ? "bytes" : "count");
		prom_head(name, "counter", help);
		for (i = 0; i < ICS_CHANNELS; i++)
			for (d = 0; d < DIRS; d++)
				printf("ics_%s{channel=\"%s\",direction=\"%s\"} %" PRIu64 "\n", name,
				       ics_channel_names[i], dir_key[d],
				       w ? cs->ch[i].dir[d].bytes : cs->ch[i].dir[d].msgs);
	}
	prom_head("channel_rx_unclaimed_total", "counter",
		  "Messages received on the channel with no receiver to take them");
	for (i = 0; i < ICS_CHANNELS; i++)
		printf("ics_channel_rx_unclaimed_total{channel=\"%s\"} %" PRIu64 "\n",
		       ics_channel_names[i], cs->ch[i].rx_unclaimed);
	/* chanhist's rows as buckets: le is the largest size of the row */
	prom_head("channel_message_size_bytes", "histogram",
		  "Messages by size in bytes, sent (tx) or received (rx) on the channel");
	for (i = 0; i < ICS_CHANNELS; i++)
		for (d = 0; d < DIRS; d++) {
			const struct ics_dir *dd = &cs->ch[i].dir[d];
			const char *c = ics_channel_names[i];

			for (cum = 0, r = 0; r < ICS_HIST_ROW_MORE; r++) {
				cum += dd->hist[r];
				printf("ics_channel_message_size_bytes_bucket{channel=\"%s\","
				       "direction=\"%s\",le=\"%" PRIu64 "\"} %" PRIu64 "\n", c,
				       dir_key[d], ics_hist_row_max(r), cum);
			}
			cum += dd->hist[ICS_HIST_ROW_MORE];
			printf("ics_channel_message_size_bytes_bucket{channel=\"%s\",direction=\"%s\","
			       "le=\"+Inf\"} %" PRIu64 "\n", c, dir_key[d], cum);
			printf("ics_channel_message_size_bytes_sum{channel=\"%s\",direction=\"%s\"} %"
			       PRIu64 "\n", c, dir_key[d], dd->bytes);
			printf("ics_channel_message_size_bytes_count{channel=\"%s\",direction=\"%s\"} %"
			       PRIu64 "\n", c, dir_key[d], cum);
		}
}

static const struct {
	int attr;
	const char *name, *help;
	double scale;	/* to seconds; 0: as it is */
} prom_link_metrics[] = {
	{ ICS_LINK_A_MTU, "link_mtu_bytes", "Largest frame on the link", 0 },
	{ ICS_LINK_A_CWND, "link_cwnd_frames", "Congestion window", 0 },
	{ ICS_LINK_A_INFLIGHT, "link_inflight_frames", "Data frames sent, not acknowledged", 0 },
	{ ICS_LINK_A_SRTT_US, "link_srtt_seconds", "Smoothed round-trip time", 1e-6 },
	{ ICS_LINK_A_RTTVAR_US, "link_rttvar_seconds", "Round-trip time variation", 1e-6 },
	{ ICS_LINK_A_RTO_MS, "link_rto_seconds", "Retransmission timeout", 1e-3 },
	{ ICS_LINK_A_QUEUED_MSGS, "link_queued_messages", "Messages waiting to be sent", 0 },
	{ ICS_LINK_A_QUEUED_BYTES, "link_queued_bytes", "Bytes waiting to be sent", 0 },
	{ ICS_LINK_A_TX_FRAMES, "link_tx_frames_total", "Data frames sent the first time", 0 },
	{ ICS_LINK_A_RETRANSMITS, "link_retransmits_total", "Data frames sent again", 0 },
	{ ICS_LINK_A_FAST_RETRANSMITS, "link_fast_retransmits_total",
	  "Data frames sent again on SACK evidence, before a timeout", 0 },
	{ ICS_LINK_A_TIMEOUTS, "link_timeouts_total", "Retransmission timeouts", 0 },
	{ ICS_LINK_A_RX_FRAMES, "link_rx_frames_total", "Data frames received", 0 },
	{ ICS_LINK_A_DUPLICATES, "link_duplicates_total", "Data frames received twice", 0 },
	{ ICS_LINK_A_OUT_OF_ORDER, "link_out_of_order_total",
	  "Data frames received ahead of a gap", 0 },
	{ ICS_LINK_A_CRC_ERRORS, "link_crc_errors_total", "Frames dropped: CRC32C mismatch", 0 },
	{ ICS_LINK_A_TX_ACKS, "link_tx_acks_total", "ACK frames sent", 0 },
	{ ICS_LINK_A_RX_ACKS, "link_rx_acks_total", "ACK frames received", 0 },
	{ ICS_LINK_A_RESETS, "link_resets_total", "Send sessions restarted", 0 },
	{ ICS_LINK_A_MSGS_DONE, "link_messages_done_total",
	  "Messages delivered and acknowledged", 0 },
	{ ICS_LINK_A_MSGS_FAILED, "link_messages_failed_total",
	  "Messages reported failed to their sender", 0 },
};

static void prom_links(const struct ics_links *ls)
{
	size_t m;
	int id;

	for (m = 0; m < ARRAY_SIZE(prom_link_metrics); m++) {
		int a = prom_link_metrics[m].attr;
		const char *name = prom_link_metrics[m].name;

		prom_head(name, ics_link_counter(a) ? "counter" : "gauge",
			  prom_link_metrics[m].help);
		for (id = 1; id <= ICS_MAX_NODES; id++) {
			const struct ics_link *l = &ls->link[id];

			if (!ls->present[id] || !l->have[a])
				continue;
			if (prom_link_metrics[m].scale)
				printf("ics_%s{peer=\"%d\"} %.6f\n", name, id,
				       l->v[a] * prom_link_metrics[m].scale);
			else
				printf("ics_%s{peer=\"%d\"} %" PRIu64 "\n", name, id, l->v[a]);
		}
	}
}

static void prom_nodes(const struct ics_nodes *ns)
{
	static const char *const what[] = { "messages", "bytes" };
	int w, id, d;

	prom_head("node_reachable", "gauge", "1 if messages may be sent to the node, else 0");
	for (id = 1; id <= ICS_MAX_NODES; id++)
		if (ns->node[id].present)
			printf("ics_node_reachable{peer=\"%d\"} %d\n", id, ns->node[id].reachable);
	for (w = 0; w < 2; w++) {
		printf("# HELP ics_node_%s_total Message %s sent to (tx) or received from (rx) "
		       "the node\n# TYPE ics_node_%s_total counter\n", what[w],
		       w ? "bytes" : "count", what[w]);
		for (id = 1; id <= ICS_MAX_NODES; id++)
			for (d = 0; ns->node[id].present && d < DIRS; d++)
				printf("ics_node_%s_total{peer=\"%d\",direction=\"%s\"} %" PRIu64 "\n",
				       what[w], id, dir_key[d],
				       w ? ns->node[id].bytes[d] : ns->node[id].msgs[d]);
	}
}

/* Each node's messages and bytes per channel: the channels it had traffic on. */
static void prom_peers(const struct ics_peers *ps)
{
	static const char *const what[] = { "messages", "bytes" };
	int w, id, ch, d;

	for (w = 0; w < 2; w++) {
		printf("# HELP ics_peer_channel_%s_total Data message %s sent to (tx) or "
		       "received from (rx) the node on the channel\n"
		       "# TYPE ics_peer_channel_%s_total counter\n", what[w],
		       w ? "bytes" : "count", what[w]);
		for (id = 1; id <= ICS_MAX_NODES; id++)
			for (ch = 0; ch < ICS_CHANNELS; ch++)
				for (d = 0; ps->chan[id][ch] && d < DIRS; d++)
					printf("ics_peer_channel_%s_total{peer=\"%d\",channel=\"%s\","
					       "direction=\"%s\"} %" PRIu64 "\n", what[w], id,
					       ics_channel_names[ch], dir_key[d],
					       w ? ps->bytes[id][ch][d] : ps->msgs[id][ch][d]);
	}
}

/* A monotonic time in ns as wall-clock seconds, by this reading's two clocks. */
static double prom_walltime(const struct snap *s, uint64_t mono_ns)
{
	return s->real.tv_sec + s->real.tv_nsec / 1e9 - ((double)s->mono_ns - mono_ns) / 1e9;
}

static void prom_members(const struct snap *s)
{
	static const uint8_t states[] = {
		ICS_MEMBER_JOINING, ICS_MEMBER_UP, ICS_MEMBER_DOWN, ICS_MEMBER_LEFT,
	};
	const struct ics_instance *in = &s->in;
	const struct ics_members *ms = &s->ms;
	size_t k;
	int i;

	prom_head("membership_generation", "gauge", "Membership generation: +1 at each change");
	printf("ics_membership_generation %u\n", in->generation);
	prom_head("votes_current", "gauge", "Votes of the members");
	printf("ics_votes_current %u\n", in->current_votes);
	prom_head("votes_expected", "gauge", "Votes the cluster expects");
	printf("ics_votes_expected %u\n", in->expected_votes);
	prom_head("votes_quorum", "gauge", "Votes needed for quorum");
	printf("ics_votes_quorum %u\n", in->quorum);
	prom_head("has_quorum", "gauge", "1 if the members have quorum, else 0");
	printf("ics_has_quorum %d\n", in->has_quorum);

	prom_head("member_state", "gauge", "1 for the node's membership state, 0 for the others");
	for (i = 0; i < ms->n; i++)
		for (k = 0; k < ARRAY_SIZE(states); k++)
			printf("ics_member_state{member=\"%llu\",state=\"%s\"} %d\n",
			       (unsigned long long)ms->m[i].v[ICS_MEMBER_A_NODE],
			       ics_member_state_name(states[k]),
			       ms->m[i].v[ICS_MEMBER_A_STATE] == states[k]);
	prom_head("member_votes", "gauge", "Votes the node brings");
	for (i = 0; i < ms->n; i++)
		printf("ics_member_votes{member=\"%llu\"} %llu\n",
		       (unsigned long long)ms->m[i].v[ICS_MEMBER_A_NODE],
		       (unsigned long long)ms->m[i].v[ICS_MEMBER_A_VOTES]);
	prom_head("member_last_heard_time_seconds", "gauge",
		  "When the node was last heard, in seconds since the epoch");
	for (i = 0; i < ms->n; i++)
		if (!ms->m[i].v[ICS_MEMBER_A_SELF] && ms->m[i].have[ICS_MEMBER_A_LAST_HEARD_NS])
			printf("ics_member_last_heard_time_seconds{member=\"%llu\"} %.3f\n",
			       (unsigned long long)ms->m[i].v[ICS_MEMBER_A_NODE],
			       prom_walltime(s, ms->m[i].v[ICS_MEMBER_A_LAST_HEARD_NS]));
	prom_head("member_heartbeat_rtt_seconds", "gauge", "Round-trip time of the heartbeats");
	for (i = 0; i < ms->n; i++)
		if (ms->m[i].v[ICS_MEMBER_A_HB_RTT_US])
			printf("ics_member_heartbeat_rtt_seconds{member=\"%llu\"} %.6f\n",
			       (unsigned long long)ms->m[i].v[ICS_MEMBER_A_NODE],
			       ms->m[i].v[ICS_MEMBER_A_HB_RTT_US] / 1e6);
	prom_head("member_heartbeats_received_total", "counter", "Heartbeats received");
	for (i = 0; i < ms->n; i++)
		if (!ms->m[i].v[ICS_MEMBER_A_SELF])
			printf("ics_member_heartbeats_received_total{member=\"%llu\"} %llu\n",
			       (unsigned long long)ms->m[i].v[ICS_MEMBER_A_NODE],
			       (unsigned long long)ms->m[i].v[ICS_MEMBER_A_HB_RX]);
	prom_head("member_heartbeats_missed_total", "counter", "Heartbeat intervals missed");
	for (i = 0; i < ms->n; i++)
		if (!ms->m[i].v[ICS_MEMBER_A_SELF])
			printf("ics_member_heartbeats_missed_total{member=\"%llu\"} %llu\n",
			       (unsigned long long)ms->m[i].v[ICS_MEMBER_A_NODE],
			       (unsigned long long)ms->m[i].v[ICS_MEMBER_A_HB_MISSED]);
}

/*
 * nic: the NIC view (icsctl nic attach), every frame on a device by class.
 * Directions are the device's: rx what it received, tx what it sent.
 */

/* struct ics_nic_snap's direction for icstat's TX and RX */
static const int nic_dir[DIRS] = { [TX] = ICS_NIC_TX, [RX] = ICS_NIC_RX };

#define NIC_TOP_ETYPES	5	/* the table's ethertypes, by bytes; the rest in one row */

static void nic_ctr_delta(struct ics_nic_ctr *c, const struct ics_nic_ctr *then)
{
	int r;

	c->frames = delta(c->frames, then->frames);
	c->bytes = delta(c->bytes, then->bytes);
	c->skbs = delta(c->skbs, then->skbs);
	for (r = 0; r < ICS_HIST_ROWS; r++)
		c->hist[r] = delta(c->hist[r], then->hist[r]);
}

/* Which classes have counted a frame since attach: the rows of a report. */
static void nic_seen(struct nic_view *v)
{
	int c;

	for (c = 0; c < ICS_NIC_CLASSES; c++)
		v->seen[c] = v->n.c[ICS_NIC_RX][c].frames || v->n.c[ICS_NIC_TX][c].frames;
}

/*
 * @v becomes its change since @then. Counters of a program attached again
 * in between (its pins are newer) are all change. The rows stay those
 * seen since attach, so that an interval log keeps a row once it appeared.
 */
static void nic_delta(struct nic_view *v, const struct nic_view *then)
{
	int d, c, k, i;

	if (v->n.pinned.tv_sec != then->n.pinned.tv_sec ||
	    v->n.pinned.tv_nsec != then->n.pinned.tv_nsec)
		return;		/* attached again meanwhile: all it counted is new */

	for (d = 0; d < ICS_NIC_DIRS; d++)
		for (c = 0; c < ICS_NIC_CLASSES; c++)
			nic_ctr_delta(&v->n.c[d][c], &then->n.c[d][c]);
	for (k = 0; k < v->n.n_etypes; k++)
		for (i = 0; i < then->n.n_etypes; i++)
			if (then->n.et[i].type == v->n.et[k].type &&
			    then->n.et[i].dir == v->n.et[k].dir) {
				nic_ctr_delta(&v->n.et[k].c, &then->n.et[i].c);
				break;
			}
}

/* A report's row: a class, an ethertype of the map, or several folded. */
struct nic_row {
	char name[ICS_NUMBUF];
	bool ics;
	int type;		/* the ethertype's, -1 for a class */
	struct ics_nic_ctr c[ICS_NIC_DIRS];
};

#define NIC_ROWS	(ICS_NIC_CLASSES + ICS_NIC_ETYPES)

static int nic_row_cmp(const void *a, const void *b)
{
	const struct nic_row *x = a, *y = b;
	uint64_t bx = x->c[0].bytes + x->c[1].bytes, by = y->c[0].bytes + y->c[1].bytes;

	return bx < by ? 1 : bx > by ? -1 : x->type - y->type;
}

/*
 * @rows (room for NIC_ROWS) gets the classes seen, in their order, then the
 * ethertypes of the map by bytes, biggest first; returns their number. With
 * @top, only that many ethertypes: the others and the map's overflow are
 * folded into one row, "ethertype/other"; without, the overflow is a row
 * of its own, "ethertype/more", if it counted anything.
 */
static int nic_rows(const struct nic_view *v, struct nic_row *rows, int top)
{
	struct nic_row *et, *other;
	int n = 0, ne = 0, c, k, i;

	for (c = 0; c < ICS_NIC_CLASSES; c++) {
		if (c == ICS_NIC_ETYPE_MORE || !v->seen[c])
			continue;
		memset(&rows[n], 0, sizeof(rows[n]));
		ics_nic_class_name(c, rows[n].name, sizeof(rows[n].name));
		rows[n].ics = c < ICS_NIC_ICS_CLASSES;
		rows[n].type = -1;
		rows[n].c[ICS_NIC_RX] = v->n.c[ICS_NIC_RX][c];
		rows[n].c[ICS_NIC_TX] = v->n.c[ICS_NIC_TX][c];
		n++;
	}
	/* an ethertype's two directions are two keys of the map: one row */
	et = &rows[n];
	for (k = 0; k < v->n.n_etypes; k++) {
		for (i = 0; i < ne && et[i].type != v->n.et[k].type; i++)
			;
		if (i == ne) {
			memset(&et[ne], 0, sizeof(et[ne]));
			et[ne].type = v->n.et[k].type;
			ics_nic_etype_name(et[ne].type, et[ne].name, sizeof(et[ne].name));
			ne++;
		}
		et[i].c[v->n.et[k].dir & 1] = v->n.et[k].c;
	}
	qsort(et, ne, sizeof(et[0]), nic_row_cmp);
	if (!(top && ne > top) && !v->seen[ICS_NIC_ETYPE_MORE])
		return n + ne;
	if (!top || ne <= top) {
		other = &et[ne];
		memset(other, 0, sizeof(*other));
	} else {
		other = &et[top];
		for (k = top + 1; k < ne; k++) {
			ics_nic_ctr_add(&other->c[0], &et[k].c[0]);
			ics_nic_ctr_add(&other->c[1], &et[k].c[1]);
		}
		ne = top;
	}
	snprintf(other->name, sizeof(other->name), top ? "ethertype/other" : "ethertype/more");
	other->type = -1;
	ics_nic_ctr_add(&other->c[ICS_NIC_RX], &v->n.c[ICS_NIC_RX][ICS_NIC_ETYPE_MORE]);
	ics_nic_ctr_add(&other->c[ICS_NIC_TX], &v->n.c[ICS_NIC_TX][ICS_NIC_ETYPE_MORE]);
	return n + ne + 1;
}

/* Bytes in the directions shown */
static uint64_t nic_row_bytes(const struct rep *r, const struct nic_row *row)
{
	uint64_t b = 0;
	int d;

	for (d = 0; d < DIRS; d++)
		if (r->o->dir[d])
			b += row->c[nic_dir[d]].bytes;
	return b;
}

/*
 * The shares of the bytes: every ics class together as "ics", the others
 * each, biggest first: what crossed the NIC without ics.
 */
static int nic_shares(const struct rep *r, const struct nic_row *rows, int n,
		      struct nic_row *sh, uint64_t *total)
{
	int k, m = 1;

	memset(&sh[0], 0, sizeof(sh[0]));
	snprintf(sh[0].name, sizeof(sh[0].name), "ics");
	*total = 0;
	for (k = 0; k < n; k++) {
		uint64_t b = nic_row_bytes(r, &rows[k]);

		*total += b;
		if (rows[k].ics) {
			sh[0].c[0].bytes += b;
			continue;
		}
		if (!b)
			continue;
		sh[m] = rows[k];
		sh[m].c[0].bytes = b;
		sh[m].c[1].bytes = 0;
		m++;
	}
	qsort(sh + 1, m - 1, sizeof(sh[0]), nic_row_cmp);
	return m;
}

static void nic_share_line(const struct rep *r, const struct nic_row *rows, int n)
{
	struct nic_row sh[NIC_ROWS + 1];
	uint64_t total;
	int m = nic_shares(r, rows, n, sh, &total), k;
	double p;

	fputs("Share of the bytes:", stdout);
	if (!total) {
		puts(" none counted");
		return;
	}
	for (k = 0; k < m; k++) {
		p = 100.0 * sh[k].c[0].bytes / total;
		printf("%s %s ", k ? "," : "", sh[k].name);
		if (p >= 1 || p == 0)
			printf("%.1f %%", p);
		else if (p >= 0.01)
			printf("%.2f %%", p);
		else
			printf("<0.01 %%");
	}
	putchar('\n');
}

static void rep_nic(const struct rep *r)
{
	const struct opts *o = r->o;
	const struct ics_nic_snap *s = &r->s->nic.n;
	struct nic_row rows[NIC_ROWS], sum;
	char report[8 + 2 * IF_NAMESIZE];
	int n, k, d, h;
	struct table *t;
	struct json j;

	if (o->csv) {
		n = nic_rows(&r->s->nic, rows, 0);
		/* a device's name may hold a comma or a quote: CSV-quote it then */
		if (strpbrk(s->ifname, ",\"")) {
			char *o = report + snprintf(report, sizeof(report), "\"nic:");
			const char *i;

			for (i = s->ifname; *i; i++) {
				if (*i == '"')
					*o++ = '"';
				*o++ = *i;
			}
			strcpy(o, "\"");
		} else {
			snprintf(report, sizeof(report), "nic:%s", s->ifname);
		}
		for (k = 0; k < n; k++)
			for (d = 0; d < DIRS; d++) {
				const struct ics_nic_ctr *c = &rows[k].c[nic_dir[d]];

				if (!o->dir[d])
					continue;
				csv_val(r, report, rows[k].name, 0, d, NULL, "frames", c->frames, true);
				csv_val(r, report, rows[k].name, 0, d, NULL, "bytes", c->bytes, true);
				csv_val(r, report, rows[k].name, 0, d, NULL, "skbs", c->skbs, true);
				for (h = 0; h < ICS_HIST_ROWS; h++)
					csv_val(r, report, rows[k].name, 0, d, ics_hist_labels[h],
						"frames", c->hist[h], true);
			}
		for (d = 0; d < DIRS; d++)
			if (o->dir[d])
				csv_val(r, report, NULL, 0, d, NULL, "attached",
					s->attached[nic_dir[d]], false);
		return;
	}
	if (o->fmt.json) {
		struct nic_row sh[NIC_ROWS + 1];
		uint64_t total;
		int m;

		n = nic_rows(&r->s->nic, rows, 0);
		json_head(&j, r);
		json_obj_begin(&j, "nic");
		json_str(&j, "ifname", s->ifname);
		json_u64(&j, "ifindex", s->ifindex);
		json_obj_begin(&j, "attached");
		for (d = 0; d < DIRS; d++)
			if (o->dir[d])
				json_bool(&j, dir_key[d], s->attached[nic_dir[d]]);
		json_obj_end(&j);
		json_rows(&j);
		json_arr_begin(&j, "classes");
		for (k = 0; k < n; k++) {
			json_obj_begin(&j, NULL);
			json_str(&j, "class", rows[k].name);
			if (rows[k].type >= 0)
				json_u64(&j, "ethertype", rows[k].type);
			json_bool(&j, "ics", rows[k].ics);
			for (d = 0; d < DIRS; d++) {
				const struct ics_nic_ctr *c = &rows[k].c[nic_dir[d]];

				if (!o->dir[d])
					continue;
				json_obj_begin(&j, dir_key[d]);
				json_ctr(&j, "frames", r, c->frames);
				json_ctr(&j, "bytes", r, c->bytes);
				json_ctr(&j, "skbs", r, c->skbs);
				json_arr_begin(&j, "hist");
				for (h = 0; h < ICS_HIST_ROWS; h++)
					json_ctr(&j, NULL, r, c->hist[h]);
				json_arr_end(&j);
				json_obj_end(&j);
			}
			json_obj_end(&j);
		}
		json_arr_end(&j);
		/* shares of the bytes in percent, as the table's last line */
		m = nic_shares(r, rows, n, sh, &total);
		json_obj_begin(&j, "share");
		for (k = 0; total && k < m; k++)
			json_fixed(&j, sh[k].name, 100.0 * sh[k].c[0].bytes / total, 4);
		json_obj_end(&j);
		json_obj_end(&j);
		json_obj_end(&j);
		return;
	}
	n = nic_rows(&r->s->nic, rows, NIC_TOP_ETYPES);
	printf("nic %s: ", s->ifname);
	if (s->attached[ICS_NIC_RX] && s->attached[ICS_NIC_TX])
		puts("counting every frame received (rx) and sent (tx)");
	else if (!s->attached[ICS_NIC_RX] && !s->attached[ICS_NIC_TX])
		puts("not attached any more: these counters stopped (icsctl nic detach, attach)");
	else
		printf("only the %s filter is attached: %s frames are not counted\n",
		       s->attached[ICS_NIC_RX] ? "ingress" : "egress",
		       s->attached[ICS_NIC_RX] ? "sent" : "received");
	t = calloc(1, sizeof(*t));
	if (!t) {
		icsnl_err("nic: %s", strerror(ENOMEM));
		return;
	}
	table_str(t, "class");
	for (d = 0; d < DIRS; d++) {
		if (!o->dir[d])
			continue;
		table_str(t, d == TX ? "tx_frames" : "rx_frames");
		table_str(t, d == TX ? "tx_bytes" : "rx_bytes");
	}
	table_end_row(t);
	memset(&sum, 0, sizeof(sum));
	for (k = 0; k <= n; k++) {
		const struct nic_row *row = k < n ? &rows[k] : &sum;

		table_str(t, k < n ? row->name : "total");
		for (d = 0; d < DIRS; d++) {
			if (!o->dir[d])
				continue;
			table_ctr(t, r, row->c[nic_dir[d]].frames);
			table_ctr(t, r, row->c[nic_dir[d]].bytes);
			if (k < n)
				ics_nic_ctr_add(&sum.c[nic_dir[d]], &row->c[nic_dir[d]]);
		}
		table_end_row(t);
	}
	table_print(t);
	free(t);
	nic_share_line(r, rows, n);
}

/* The labels of a NIC row: ifname, class and direction. */
static void prom_nic_labels(const struct ics_nic_snap *s, const char *class, int d, bool last)
{
	putchar('{');
	prom_label("ifname", s->ifname, false);
	prom_label("class", class, false);
	prom_label("direction", dir_key[d], last);
}

/*
 * Every device of this namespace with NIC counters (icsctl nic attach), a
 * metric family at a time across the devices. A device that cannot be
 * read is said in a comment (and on stderr), not as a metric.
 */
static void prom_nics(void)
{
	static const char *const what[] = { "frames", "bytes", "skbs" };
	char dir[ICS_NIC_DIR_MAX], name[IF_NAMESIZE];
	struct nic_row rows[NIC_ROWS];
	struct ics_nic_snap *s = NULL, *t;
	int n = 0, i, k, d, w, h, nr;
	struct nic_view *v;
	struct dirent *e;
	uint64_t cum;
	DIR *dp;

	if (ics_nic_pin_dir(dir, sizeof(dir), 0))
		return;
	*strrchr(dir, '/') = '\0';
	dp = opendir(dir);
	if (!dp)
		return;		/* none attached in this namespace */
	while ((e = readdir(dp))) {
		unsigned long ifindex = strtoul(e->d_name, NULL, 10);

		if (!ifindex || !if_indextoname(ifindex, name))
			continue;	/* not a device, or one that is gone */
		t = realloc(s, (n + 1) * sizeof(*s));
		if (!t)
			break;
		s = t;
		if (ics_nic_read(name, &s[n])) {
			printf("# ics_nic: %s: not readable by icstat (see its stderr)\n", name);
			continue;
		}
		n++;
	}
	closedir(dp);
	v = calloc(1, sizeof(*v));
	if (!n || !v)
		goto out;
	prom_head("nic_attached", "gauge",
		  "1: icsctl nic's program counts the device's frames in that direction");
	for (i = 0; i < n; i++)
		for (d = 0; d < DIRS; d++) {
			fputs("ics_nic_attached{", stdout);
			prom_label("ifname", s[i].ifname, false);
			prom_label("direction", dir_key[d], true);
			printf(" %d\n", s[i].attached[nic_dir[d]]);
		}
	for (w = 0; w <= 3; w++) {
		char metric[40], help[160];

		if (w < 3) {
			snprintf(metric, sizeof(metric), "nic_%s_total", what[w]);
			snprintf(help, sizeof(help),
				 "%s the device sent (tx) or received (rx), by class (ics/CHANNEL: ics data)",
				 w == 0 ? "Frames" : w == 1 ? "Bytes of the frames" :
				 "Socket buffers, a GSO or GRO one several frames,");
			prom_head(metric, "counter", help);
		} else {
			prom_head("nic_frame_size_bytes", "histogram",
				  "Frames by length in bytes (Ethernet header included), by class");
		}
		for (i = 0; i < n; i++) {
			v->n = s[i];
			nic_seen(v);
			nr = nic_rows(v, rows, 0);
			for (k = 0; k < nr; k++)
				for (d = 0; d < DIRS; d++) {
					const struct ics_nic_ctr *c = &rows[k].c[nic_dir[d]];

					if (w < 3) {
						printf("ics_%s", metric);
						prom_nic_labels(&s[i], rows[k].name, d, true);
						printf(" %" PRIu64 "\n", (uint64_t)(w == 0 ? c->frames :
						       w == 1 ? c->bytes : c->skbs));
						continue;
					}
					for (cum = 0, h = 0; h < ICS_HIST_ROWS; h++) {
						cum += c->hist[h];
						fputs("ics_nic_frame_size_bytes_bucket", stdout);
						prom_nic_labels(&s[i], rows[k].name, d, false);
						if (h < ICS_HIST_ROW_MORE)
							printf("le=\"%" PRIu64 "\"} %" PRIu64 "\n",
							       ics_hist_row_max(h), cum);
						else
							printf("le=\"+Inf\"} %" PRIu64 "\n", cum);
					}
					fputs("ics_nic_frame_size_bytes_sum", stdout);
					prom_nic_labels(&s[i], rows[k].name, d, true);
					printf(" %" PRIu64 "\n", (uint64_t)c->bytes);
					fputs("ics_nic_frame_size_bytes_count", stdout);
					prom_nic_labels(&s[i], rows[k].name, d, true);
					printf(" %" PRIu64 "\n", cum);
				}
		}
	}
out:
	free(v);
	free(s);
}

/* Reassembly memory (bound only): gauges in bytes. */
static void prom_reasm(const struct ics_instance *in)
{
	const struct {
		int attr;
		const char *name, *help;
		uint64_t v;
	} g[] = {
		{ ICS_A_REASM_MEM, "reasm_mem_bytes",
		  "Bytes (skb truesize) held in partial messages", in->reasm_mem },
		{ ICS_A_REASM_RESERVED, "reasm_reserved_bytes",
		  "Bytes reserved by large partial messages against reasm_mem_max",
		  in->reasm_reserved },
		{ ICS_A_REASM_MEM_MAX, "reasm_mem_max_bytes",
		  "The bound on reassembly reservations (module parameter reasm_mem_max)",
		  in->reasm_mem_max },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(g); i++) {
		if (!(in->have & 1ULL << g[i].attr))
			continue;
		prom_head(g[i].name, "gauge", g[i].help);
		printf("ics_%s %" PRIu64 "\n", g[i].name, g[i].v);
	}
}

static void rep_prometheus(const struct rep *r)
{
	const struct snap *s = r->s;
	const struct ics_instance *in = &s->in;
	bool bound = in->state == ICS_STATE_BOUND;
	char buf[16];
	int i;

	prom_head("up", "gauge", "1: icstat read the ics instance");
	puts("ics_up 1");
	prom_head("info", "gauge", "The instance: interface, node and cluster ids, state, auth");
	fputs("ics_info{", stdout);
	prom_label("ifname", in->ifname, false);
	snprintf(buf, sizeof(buf), "%u", bound ? in->node_id : 0);
	prom_label("node_id", buf, false);
	snprintf(buf, sizeof(buf), "%u", in->cluster_id);
	prom_label("cluster_id", buf, false);
	prom_label("state", ics_state_name(in->state), false);
	prom_label("auth", ics_auth_mode_name(in->auth_mode), true);
	puts(" 1");
	prom_head("counters_reset_time_seconds", "gauge",
		  "When the module was loaded or the counters reset, in seconds since the epoch");
	printf("ics_counters_reset_time_seconds %.3f\n",
	       prom_walltime(s, s->mono_ns - in->reset_age_ms * 1000000));
	for (i = 0; i < ICS_STATS_SLOTS; i++) {
		if (!in->stat_have[i] || !ics_stat_name(i))
			continue;	/* absent, or newer than this tool: no stable name */
		printf("# HELP ics_stat_%s_total %s\n# TYPE ics_stat_%s_total counter\n"
		       "ics_stat_%s_total %" PRIu64 "\n", ics_stat_name(i), ics_stat_help(i),
		       ics_stat_name(i), ics_stat_name(i), in->stats[i]);
	}
	prom_reasm(in);
	prom_chans(&s->cs);
	prom_nodes(&s->ns);
	prom_peers(&s->ps);
	prom_links(&s->ls);
	if (bound)
		prom_members(s);
	prom_nics();
}

/*
 * show after a command that dumped shows the instance as read after the
 * dumps: "show chanhisttot show" brackets the histograms with the
 * instance's counters, which tells whether they moved meanwhile.
 */
static void rep_show(const struct rep *r)
{
	ics_print_show(r->after_dumps ? &r->s->in_after : &r->s->in, &r->o->fmt);
}

static const struct command {
	const char *name;
	unsigned int need;		/* NEED_*: what its reading dumps */
	void (*report)(const struct rep *r);	/* NULL: monitor */
	bool dirs;			/* --tx / --rx select what it shows */
} commands[] = {
	{ "chanhisttot", NEED_CHANS, rep_hist, true },
	{ "chanhist", NEED_CHANS, rep_hist, true },
	{ "peerhisttot", NEED_PEERS, rep_peerhist, true },
	{ "peerhist", NEED_PEERS, rep_peerhist, true },
	{ "channels", NEED_CHANS, rep_channels, true },
	{ "nodes", NEED_NODES, rep_nodes, true },
	{ "links", NEED_LINKS, rep_links, false },
	{ "members", NEED_MEMBERS, rep_members, false },
	{ "monitor", 0, NULL, false },
	{ "show", 0, rep_show, false },
	{ "nic", NEED_NIC, rep_nic, true },
	{ "prometheus", NEED_CHANS | NEED_NODES | NEED_LINKS | NEED_MEMBERS | NEED_PEERS,
	  rep_prometheus, false },
};

static bool is_cmd(const struct command *c, const char *name)
{
	return !strcmp(c->name, name);
}

/*
 * One reading: the instance, then what the commands need, in their order
 * (an error names the first command that needed the part that failed).
 */
static int snap_read(struct icsnl *nl, const struct command **cmds, int n, struct snap *s)
{
	unsigned int done = 0, need;
	int err, k;

	s->mono_before_ns = icsnl_monotonic_ns();
	if (nic_only) {
		memset(&s->in, 0, sizeof(s->in));	/* no ics needed: not read */
	} else {
		err = ics_get_instance(nl, &s->in);
		if (err) {
			request_err(nl, cmds[0]->name, err);
			return -1;
		}
		if (s->in.state == ICS_STATE_UNUSED) {
			icsnl_err("no ics instance in this network namespace (bind one with icsctl bind)");
			return -1;
		}
	}
	clock_gettime(CLOCK_REALTIME, &s->real);
	s->mono_ns = icsnl_monotonic_ns();
	for (k = 0; k < n; k++) {
		need = cmds[k]->need & ~done;
		done |= need;
		if (need & NEED_NIC) {
			const char *dev = nic_dev ? nic_dev : s->in.ifname;

			if (!dev[0]) {
				icsnl_err("nic: ics is bound to no device: name one (icstat nic DEV)");
				return -1;
			}
			if (ics_nic_read(dev, &s->nic.n))
				return -1;
			nic_seen(&s->nic);
		}
		if ((need & NEED_CHANS) &&
		    dump(nl, hist_node ? ICS_CMD_GET_PEER_CHANNELS : ICS_CMD_GET_CHANNELS,
			 chan_cb, &s->cs, sizeof(s->cs), cmds[k]->name))
			return -1;
		if ((need & NEED_PEERS) &&
		    dump(nl, ICS_CMD_GET_PEER_CHANNELS, peer_cb, &s->ps, sizeof(s->ps),
			 cmds[k]->name))
			return -1;
		if ((need & NEED_NODES) &&
		    dump(nl, ICS_CMD_GET_NODES, node_cb, &s->ns, sizeof(s->ns), cmds[k]->name))
			return -1;
		if ((need & NEED_LINKS) &&
		    dump(nl, ICS_CMD_GET_LINKS, link_cb, &s->ls, sizeof(s->ls), cmds[k]->name))
			return -1;
		if (!(need & NEED_MEMBERS))
			continue;
		if (s->in.state != ICS_STATE_BOUND && cmds[k]->report == rep_prometheus) {
			s->ms.n = 0;	/* no membership to show */
			continue;
		}
		if (s->in.state != ICS_STATE_BOUND) {
			icsnl_err("%s: instance is %s, not bound (icsctl bind)", cmds[k]->name,
				  ics_state_name(s->in.state));
			return -1;
		}
		if (dump(nl, ICS_CMD_GET_MEMBERS, member_cb, &s->ms, sizeof(s->ms),
			 cmds[k]->name))
			return -1;
	}
	for (done = 0, k = 0; k < n; k++) {
		if (cmds[k]->report != rep_show || !done) {
			done |= cmds[k]->need;
			continue;
		}
		err = ics_get_instance(nl, &s->in_after);
		if (err) {
			request_err(nl, cmds[k]->name, err);
			return -1;
		}
		break;
	}
	return 0;
}

/*
 * @d becomes @now with its counters' change since @then. A reset (icsctl
 * reset) in between zeroed the instance's counters, channels' and nodes':
 * then their values now are the change. Without one, the counters' age
 * grew by at least the time from the end of the instance's first reading
 * to the start of its second (ages are whole ms: 2 ms of slack); less
 * means a reset. Links and members keep their counters; one of theirs
 * that went down belongs to a link or member that began again.
 */
static void snap_delta(struct snap *d, const struct snap *now, const struct snap *then)
{
	uint64_t apart_ms = now->mono_before_ns > then->mono_ns ?
			    (now->mono_before_ns - then->mono_ns) / 1000000 : 0;
	bool reset = now->in.reset_age_ms + 2 < then->in.reset_age_ms + apart_ms;

	*d = *now;
	if (!reset) {
		chans_delta(&d->cs, &then->cs);
		nodes_delta(&d->ns, &then->ns);
		peers_delta(&d->ps, &then->ps);
	}
	links_delta(&d->ls, &then->ls);
	members_delta(&d->ms, &then->ms);
	nic_delta(&d->nic, &then->nic);
}

static void print_reports(struct rep *r, const struct command **cmds, int n, uint64_t t0)
{
	const struct opts *o = r->o;
	char age[ICS_NUMBUF];
	int k;

	r->elapsed = (r->s->mono_ns - t0) / 1e9;
	icsnl_fmt_iso8601(r->time, sizeof(r->time), &r->s->real, 0);
	if (o->interval && !o->fmt.json && !o->csv) {
		/* vmstat's layout: a heading per report, a blank line between them */
		if (r->shown)
			putchar('\n');
		if (!r->n && nic_only)
			printf("Totals since attach (%s ago) at %s",
			       icsnl_fmt_ago(age, r->s->nic.n.age_ms * 1000000), r->time);
		else if (!r->n)
			printf("Totals since load or reset (%s ago) at %s",
			       icsnl_fmt_ago(age, r->s->in.reset_age_ms * 1000000), r->time);
		else
			printf("Interval %" PRIu64 " (%.1f s) at %s", r->n, r->secs, r->time);
		if (r->s->in.state == ICS_STATE_BOUND)
			printf(", node %u", r->s->in.node_id);
		printf("%s:\n", per_second(r) ? ", per second" : "");
	}
	/* CSV: every reading has a line, the span its values cover */
	if (o->csv) {
		csv_begin(r, "reading", NULL, 0, -1, NULL);
		printf("seconds,%.6f\n", r->n ? r->secs :
		       (nic_only ? r->s->nic.n.age_ms : r->s->in.reset_age_ms) / 1e3);
	}
	r->after_dumps = false;
	for (k = 0; k < n; k++) {
		if (k && !o->fmt.json && !o->csv)
			putchar('\n');
		cmds[k]->report(r);
		r->after_dumps |= cmds[k]->need != 0;
	}
	r->shown++;
}

/*
 * The interval readings' slots: t0 + n intervals, on the monotonic clock,
 * so that reports do not drift however long each takes. The next slot is
 * the first still ahead: after a stall (a stopped process, a busy machine)
 * the missed slots are skipped, not read back to back. Returns its number,
 * after sleeping until it (or until a signal asked to stop).
 */
static uint64_t sleep_next(uint64_t t0, uint64_t n, uint32_t interval)
{
	uint64_t step = interval * 1000000000ULL, now = icsnl_monotonic_ns(), at;
	struct timespec ts;

	if (now >= t0 + (n + 1) * step)
		n = (now - t0) / step;
	at = t0 + ++n * step;
	ts.tv_sec = at / 1000000000ULL;
	ts.tv_nsec = at % 1000000000ULL;
	while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	return n;
}

/*
 * The reports: once, or every o->interval seconds, the first (unless -y or
 * -r) of the totals, the others of what changed since the reading before.
 * A reading that fails after the first is reported and skipped: the next
 * one, on a new netlink socket (the module may have been loaded again), is
 * compared with the last that worked (and says how long that was).
 * SIGINT and SIGTERM end the run after the report being written; the exit
 * status is 1 if a reading failed.
 */
static int run_reports(struct icsnl *nl, const struct command **cmds, int n,
		       const struct opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */
	struct snap *then, *now, *d, *tmp;
	struct rep r = { .o = o };
	uint64_t t0, i = 0, printed = 0;
	int ret = 1, failed = 0;

	then = calloc(1, sizeof(*then));
	now = calloc(1, sizeof(*now));
	d = calloc(1, sizeof(*d));
	if (!then || !now || !d) {
		icsnl_err("%s", strerror(ENOMEM));
		goto out;
	}
	if (snap_read(nl, cmds, n, now))
		goto out;
	t0 = now->mono_ns;
	if (o->interval) {
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	if (o->csv)
		fputs(csv_header, stdout);
	if (!o->no_totals) {
		r.s = now;
		print_reports(&r, cmds, n, t0);
		printed++;
		if (icsnl_flush_stdout())
			goto out;
	}
	while (o->interval && !stop && (!o->count || printed < o->count)) {
		i = sleep_next(t0, i, o->interval);
		if (stop)
			break;
		tmp = then;
		then = now;
		now = tmp;
		if ((!nic_only && !nl->sk && icsnl_open(nl)) || snap_read(nl, cmds, n, now)) {
			/* keep the last reading that worked; this slot has no report */
			tmp = then;
			then = now;
			now = tmp;
			failed = 1;
			printed++;
			/* a module loaded again has its family anew: look it up again */
			icsnl_close(nl);
			continue;
		}
		snap_delta(d, now, then);
		r.s = d;
		r.n = i;
		r.secs = (now->mono_ns - then->mono_ns) / 1e9;
		print_reports(&r, cmds, n, t0);
		printed++;
		if (icsnl_flush_stdout())
			goto out;
	}
	ret = failed;
out:
	free(then);
	free(now);
	free(d);
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: icstat [-j | -p | --csv] [-n] [--tx | --rx] [-i SECS [-c COUNT] [-y] [-r]]\n"
		"              COMMAND [COMMAND...]\n"
		"\n"
		"Commands:\n"
		"  chanhisttot     message-size histograms since load or reset\n"
		"  chanhist        the histograms' change every SECS seconds (chanhisttot -y)\n"
		"  peerhisttot     message-size histograms per node, all channels together\n"
		"  peerhist        their change every SECS seconds (peerhisttot -y)\n"
		"  channels        per-channel message and byte counters\n"
		"  nodes           per-node reachability and counters\n"
		"  links           per-peer reliable link state and counters\n"
		"  members         the membership view: states, heartbeats, quorum\n"
		"  monitor         one line per membership event, until interrupted\n"
		"  show            instance state and counters\n"
		"  nic [DEV]       every frame on DEV (default: ics's device) by class,\n"
		"                  ics's and the rest (icsctl nic attach DEV first)\n"
		"  prometheus      all of them in Prometheus's text format\n"
		"  help            this text\n"
		"\n"
		"Options:\n"
		"  -j         JSON output, one object per report and line\n"
		"  -p         pretty-printed JSON (implies -j)\n"
		"  --csv      CSV: one line per non-zero value, with time and node\n"
		"  -n         counts as plain numbers (default: 1k = 1000, 1m = 10^6, ...)\n"
		"  --tx, --rx sent or received messages only (default: both); not for\n"
		"             links, members, show, monitor\n"
		"  -i SECS    a report every SECS seconds: the first of the totals since\n"
		"             load or reset, then what changed in each interval\n"
		"  -c COUNT   stop after COUNT reports (default: until interrupted)\n"
		"  -y         no report of the totals first\n"
		"  -r         counters per second (with -i; implies -y)\n"
		"  --share    chanhisttot, chanhist: each size and each channel's share\n"
		"             of the messages, in percent, with a bar\n"
		"  -N NODE    links: only the link to node NODE (or --node NODE);\n"
		"             chanhisttot, chanhist: the traffic with node NODE only\n"
		"  -h, --help this text\n"
		"  --version  icstat's version\n"
		"\n"
		"Several of chanhisttot, peerhisttot, channels, nodes, links, members, nic\n"
		"and show run one after another in one call, from one reading of the\n"
		"counters; all but show take -i. chanhist, peerhist, monitor, prometheus\n"
		"and help run alone.\n");
}

/* argv's commands into @cmds (room for argc); their number. */
static int parse_args(int argc, char **argv, struct opts *o, const struct command **cmds)
{
	enum { OPT_SHARE = 256, OPT_CSV, OPT_VERSION };
	static const struct option long_opts[] = {
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "tx", no_argument, NULL, 't' },
		{ "rx", no_argument, NULL, 'R' },
		{ "node", required_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ "rate", no_argument, NULL, 'r' },
		{ "share", no_argument, NULL, OPT_SHARE },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ NULL, 0, NULL, 0 },
	};
	bool tx = false, rx = false, have_c = false, have_n = false, have_y = false;
	bool alone = false, chanhist = false, hist = false, links = false, show = false;
	bool channels = false, dirs = false;
	const char *first;
	size_t k;
	int c, n = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jpnhi:c:N:yr", long_opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->fmt.json = true;
			break;
		case 'p':
			o->fmt.json = o->fmt.pretty = true;
			break;
		case OPT_VERSION:
			printf("icstat %s\n", ICS_VERSION);
			exit(0);
		case OPT_CSV:
			o->csv = true;
			break;
		case 'n':
			o->fmt.raw = true;
			break;
		case 't':
			tx = true;
			break;
		case 'R':
			rx = true;
			break;
		case 'r':
			o->rate = true;
			break;
		case 'y':
			have_y = true;
			break;
		case OPT_SHARE:
			o->share = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'i':
			if (icsnl_parse_u32(optarg, &o->interval) || !o->interval)
				icsnl_usage_err("invalid interval \"%s\" (seconds, >= 1)",
						optarg);
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
	first = argv[optind];
	for (; optind < argc; optind++) {
		const struct command *cmd;

		if (!strcmp(argv[optind], "help"))
			icsnl_usage_err("help: runs alone, not with %s", argv[optind - 1]);
		for (k = 0; k < ARRAY_SIZE(commands); k++)
			if (!strcmp(argv[optind], commands[k].name))
				break;
		if (k == ARRAY_SIZE(commands))
			icsnl_usage_err("unknown command \"%s\" (try \"icstat help\")",
					argv[optind]);
		cmd = &commands[k];
		/* nic's device: an argument that is no command */
		if (is_cmd(cmd, "nic") && optind + 1 < argc) {
			for (k = 0; k < ARRAY_SIZE(commands); k++)
				if (!strcmp(argv[optind + 1], commands[k].name))
					break;
			if (k == ARRAY_SIZE(commands) && strcmp(argv[optind + 1], "help")) {
				if (strlen(argv[++optind]) >= IF_NAMESIZE)
					icsnl_usage_err("nic: invalid device name \"%s\"",
							argv[optind]);
				nic_dev = argv[optind];
			}
		}
		if (n && (alone || is_cmd(cmd, "chanhist") || is_cmd(cmd, "peerhist") ||
			  is_cmd(cmd, "monitor") || is_cmd(cmd, "prometheus")))
			icsnl_usage_err("%s: runs alone, not with %s",
					alone ? cmds[0]->name : cmd->name,
					alone ? cmd->name : cmds[0]->name);
		alone = is_cmd(cmd, "chanhist") || is_cmd(cmd, "peerhist") ||
			is_cmd(cmd, "monitor") || is_cmd(cmd, "prometheus");
		chanhist |= is_cmd(cmd, "chanhist") || is_cmd(cmd, "peerhist");
		channels |= is_cmd(cmd, "channels");
		hist |= is_cmd(cmd, "chanhist") || is_cmd(cmd, "chanhisttot");
		links |= is_cmd(cmd, "links");
		show |= is_cmd(cmd, "show");
		dirs |= cmd->dirs;
		cmds[n++] = cmd;
	}
	if (o->csv && o->fmt.json)
		icsnl_usage_err("--csv and -j or -p: one output format at a time");
	if (chanhist && !o->interval)
		icsnl_usage_err("%s: missing \"-i SECONDS\"", first);
	if (!strcmp(first, "monitor") && (o->interval || o->csv || o->share))
		icsnl_usage_err("monitor: takes none of -i, --csv, --share");
	if (!strcmp(first, "prometheus") &&
	    (o->interval || o->csv || o->share || o->fmt.json || o->fmt.raw || tx || rx || have_n))
		icsnl_usage_err("prometheus: takes none of -i, -j, -n, -N, --tx, --rx, --csv, --share");
	if ((tx || rx) && !dirs)
		icsnl_usage_err("%s: no --tx or --rx (they select the direction of chanhisttot, "
				"chanhist, peerhisttot, peerhist, channels, nodes and nic)", first);
	if (show && (o->interval || o->csv))
		icsnl_usage_err("show: no %s form (use channels, nodes, links or members)",
				o->csv ? "CSV" : "interval");
	if (!o->interval && (have_c || have_y || o->rate))
		icsnl_usage_err("%s: options -c, -y and -r need -i SECONDS", first);
	if (o->share && !hist)
		icsnl_usage_err("%s: option --share is for chanhisttot and chanhist", first);
	if (o->share && o->csv)
		icsnl_usage_err("--share has no CSV form (the CSV log has the counts)");
	if (!links && !hist && have_n)
		icsnl_usage_err("%s: option -N is for links, chanhisttot and chanhist", first);
	if (hist && have_n && channels)
		icsnl_usage_err("channels: not with -N (chanhisttot -N: the channels of the traffic with a node)");
	if (hist)
		hist_node = o->node;
	nic_only = nic_dev != NULL;
	for (k = 0; k < (size_t)n; k++)
		nic_only &= is_cmd(cmds[k], "nic");
	o->no_totals = have_y || o->rate || chanhist;
	return n;
}

int main(int argc, char **argv)
{
	const struct command **cmds;
	struct ics_instance in;
	struct opts o = { 0 };
	struct icsnl nl;
	int err, ret, n;

	icsnl_prog = "icstat";
	cmds = calloc(argc, sizeof(*cmds));
	if (!cmds) {
		icsnl_err("out of memory");
		return 1;
	}
	n = parse_args(argc, argv, &o, cmds);

	memset(&nl, 0, sizeof(nl));
	if (!nic_only && icsnl_open(&nl)) {
		free(cmds);
		return 1;
	}
	if (cmds[0]->report) {
		ret = run_reports(&nl, cmds, n, &o);
	} else {
		err = ics_get_instance(&nl, &in);
		if (err)
			icsnl_perror(&nl, cmds[0]->name, err);
		ret = err ? 1 : cmd_monitor(&nl, &in, &o);
	}
	icsnl_close(&nl);
	free(cmds);
	if (icsnl_flush_stdout())
		ret = 1;
	return ret;
}
