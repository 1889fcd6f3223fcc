// SPDX-License-Identifier: GPL-2.0
/*
 * icsctl - configure ics (bind, unbind, reset counters, channel priorities,
 * membership tunables); with `send` and the `test` commands, drive the test
 * service ics_test.ko (its own generic netlink family, "ics_test"): attach
 * it to channels, send from its generator, show and reset its counters and
 * hashes. Changes need CAP_NET_ADMIN.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <net/if.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include "icsconf.h"
#include "icsnl.h"
#include "nicview.h"

#define ICS_KEYDIR	"/etc/ics/keys"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: icsctl COMMAND\n"
		"       icsctl --version\n"
		"\n"
		"Commands:\n"
		"  bind dev DEV node N [cluster C]  bind this network namespace's ics to DEV\n"
		"  unbind                           unbind it (counters survive)\n"
		"  reset                            zero every counter\n"
		"  show [-j] [-p] [-n]              instance state and counters, as icstat show\n"
		"  send node N channel NAME size BYTES count K [OPTIONS]\n"
		"                                   send K test messages of BYTES bytes from\n"
		"                                   the test service ics_test.ko (test send)\n"
		"                                   (suffix k or m: 1k = 1024, 16m = 16777216)\n"
		"      --wait         wait until each message is acknowledged or failed\n"
		"      --nonblock     stop at the first full queue instead of waiting\n"
		"      --mixed        sizes spread over 0..BYTES (log-uniform)\n"
		"      --ping         one at a time, each answered: round-trip times\n"
		"      --timeout MS   longest wait for queue space (kernel default 10000)\n"
		"      -j, -p         the reply as JSON, pretty-printed with -p\n"
		"  prio CHANNEL LEVEL               send priority of CHANNEL: 0 (first) to %d\n"
		"  set [heartbeat MS] [misses N] [votes V] [expected N] [auth MODE]\n"
		"                                   membership tunables: heartbeat interval\n"
		"                                   %u..%u ms, a node silent for N intervals\n"
		"                                   (1..%u) is down, our votes 0 or 1, expected\n"
		"                                   votes 0..%u (0: the most seen at once);\n"
		"                                   authentication: off, accept or require\n"
		"  key gen                          print a new random key (base64)\n"
		"  key add ID FILE                  install the key in FILE (as key gen prints\n"
		"                                   it; mode 600) under ID 1..255\n"
		"  key use ID                       sign frames with key ID (0: none)\n"
		"  key del ID                       remove key ID (not the one in use)\n"
		"  showconf [keydir DIR]            the configuration as a file for setconf;\n"
		"                                   key files are looked up by fingerprint in\n"
		"                                   DIR (default " ICS_KEYDIR ")\n"
		"  setconf [--check] [-v] FILE      apply the configuration in FILE (- for\n"
		"                                   stdin), binding last if unbound; a bad\n"
		"                                   line is named and nothing changes;\n"
		"                                   --check: read FILE only; -v: print\n"
		"                                   each change made\n"
		"  test attach CHANNEL... | all | none\n"
		"                                   channels the test service ics_test.ko\n"
		"                                   receives on from now on (all: but CNX)\n"
		"  test send node N channel NAME size BYTES count K [OPTIONS]\n"
		"                                   the same as send\n"
		"  test show [-j] [-p] [-n]         ics_test's channels, counters and hashes\n"
		"  test reset                       zero ics_test's counters and hashes\n"
		"  nic attach DEV                   count every frame DEV sends and receives,\n"
		"                                   by class, with a tc BPF program (icstat nic)\n"
		"  nic detach DEV                   remove that program and its counters\n"
		"  help                             this text\n"
		"\n"
		"Channels: BOOT PRI0 PRI1 CFS NET CLSM DRD TUNL CLUA KEVM CFSR RBLD KCH DLM TEST\n"
		"CNX (case-insensitive), or their ids 0..15.\n", ICS_PRIO_LEVELS - 1,
		ICS_HEARTBEAT_MS_MIN, ICS_HEARTBEAT_MS_MAX, ICS_HEARTBEAT_MISSES_MAX, ICS_MAX_NODES);
}

/*
 * "KEY VALUE ..." arguments: vals[k] gets the value of keys[k]; unknown keys,
 * missing values and repeated keys are usage errors.
 */
static void parse_keys(const char *cmd, int argc, char **argv, const char *const *keys,
		       const char **vals)
{
	int i, k;

	for (i = 0; i < argc; i += 2) {
		for (k = 0; keys[k] && strcmp(argv[i], keys[k]); k++)
			;
		if (!keys[k])
			icsnl_usage_err("%s: unknown argument \"%s\" (try \"icsctl help\")", cmd,
					argv[i]);
		if (i + 1 >= argc)
			icsnl_usage_err("%s: missing value after \"%s\"", cmd, argv[i]);
		if (vals[k])
			icsnl_usage_err("%s: \"%s\" given twice", cmd, argv[i]);
		vals[k] = argv[i + 1];
	}
}

static void need(const char *cmd, const char *val, const char *what)
{
	if (!val)
		icsnl_usage_err("%s: missing \"%s\"", cmd, what);
}

static void no_args(const char *cmd, int argc, char **argv)
{
	if (argc > 0)
		icsnl_usage_err("%s: unexpected argument \"%s\"", cmd, argv[0]);
}

/*
 * Opened by each command once its arguments are known to be good, on the
 * "ics" family (icsnl_open) or, for `test`, on "ics_test" (icsnl_open_test).
 */
static struct icsnl nl;

typedef int (*open_fn)(struct icsnl *nl);

static void nl_open(open_fn fam_open)
{
	if (fam_open(&nl))
		exit(1);
}

static struct nl_msg *family_msg(open_fn fam_open, uint8_t cmd)
{
	nl_open(fam_open);
	return icsnl_msg(&nl, cmd, 0);
}

static struct nl_msg *new_msg(uint8_t cmd)
{
	return family_msg(icsnl_open, cmd);
}

static struct nl_msg *new_test_msg(uint8_t cmd)
{
	return family_msg(icsnl_open_test, cmd);
}

/* Run a request: 0, or 1 after printing the error. */
static int run(const char *ctx, struct nl_msg *msg, icsnl_cb_t cb, void *arg)
{
	int err = icsnl_do(&nl, msg, cb, arg);

	if (err)
		icsnl_perror(&nl, ctx, err);
	return err ? 1 : 0;
}

static int cmd_bind(int argc, char **argv)
{
	static const char *const keys[] = { "dev", "node", "cluster", NULL };
	const char *vals[3] = { NULL };
	uint32_t node, cluster = 0;
	struct nl_msg *msg;

	parse_keys("bind", argc, argv, keys, vals);
	need("bind", vals[0], "dev DEV");
	need("bind", vals[1], "node N");
	if (!vals[0][0] || strlen(vals[0]) >= IFNAMSIZ)
		icsnl_usage_err("invalid device name \"%s\" (1 to %d characters)", vals[0],
				IFNAMSIZ - 1);
	node = icsnl_arg_u32("node", vals[1]);
	if (vals[2])
		cluster = icsnl_arg_u32("cluster", vals[2]);

	msg = new_msg(ICS_CMD_BIND);
	if (nla_put_string(msg, ICS_A_IFNAME, vals[0]) ||
	    nla_put_u32(msg, ICS_A_NODE_ID, node) ||
	    (vals[2] && nla_put_u32(msg, ICS_A_CLUSTER_ID, cluster))) {
		nlmsg_free(msg);
		icsnl_perror(NULL, "bind", -ENOMEM);
		return 1;
	}
	return run("bind", msg, NULL, NULL);
}

static int cmd_unbind(int argc, char **argv)
{
	no_args("unbind", argc, argv);
	return run("unbind", new_msg(ICS_CMD_UNBIND), NULL, NULL);
}

static int cmd_reset(int argc, char **argv)
{
	no_args("reset", argc, argv);
	return run("reset", new_msg(ICS_CMD_RESET_STATS), NULL, NULL);
}

/* -j, -p (show, send and their test ones), -n (the shows): before the command or after it */
static struct icsnl_fmt out_fmt;

static bool fmt_opt(const char *arg)
{
	if (!strcmp(arg, "-j"))
		out_fmt.json = true;
	else if (!strcmp(arg, "-p"))
		out_fmt.json = out_fmt.pretty = true;
	else if (!strcmp(arg, "-n"))
		out_fmt.raw = true;
	else
		return false;
	return true;
}

static int cmd_show(int argc, char **argv)
{
	struct ics_instance in;
	int err, i;

	for (i = 0; i < argc; i++)
		if (!fmt_opt(argv[i]))
			icsnl_usage_err("show: unexpected argument \"%s\"", argv[i]);

	nl_open(icsnl_open);
	err = ics_get_instance(&nl, &in);
	if (err) {
		icsnl_perror(&nl, "show", err);
		return 1;
	}
	ics_print_show(&in, &out_fmt);
	return 0;
}

/*
 * send's options, anywhere among its KEY VALUE arguments, which are moved to
 * the front of argv in their order; returns their number.
 */
static int send_opts(const char *name, int argc, char **argv, uint32_t *flags,
		     const char **timeout)
{
	/* a flag option returns 0x100 | its ICS_TEST_F_* bit */
	static const struct option long_opts[] = {
		{ "wait", no_argument, NULL, 0x100 | ICS_TEST_F_WAIT },
		{ "nonblock", no_argument, NULL, 0x100 | ICS_TEST_F_NONBLOCK },
		{ "mixed", no_argument, NULL, 0x100 | ICS_TEST_F_MIXED },
		{ "ping", no_argument, NULL, 0x100 | ICS_TEST_F_PING },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	char prefix[32];
	int c, n = 0;

	/* argv[-1] is "send", getopt's program name; "-" returns the others as 1 */
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc + 1, argv - 1, "-:jp", long_opts, NULL)) != -1) {
		switch (c) {
		case 1:
			argv[n++] = optarg;
			break;
		case 'j':
			fmt_opt("-j");
			break;
		case 'p':
			fmt_opt("-p");
			break;
		case 't':
			*timeout = optarg;
			break;
		default:
			if (c & 0x100) {
				*flags |= c & ICS_TEST_F_ALL;
			} else {
				snprintf(prefix, sizeof(prefix), "%s: ", name);
				icsnl_opt_err(prefix, c, argv - 1);
			}
		}
	}
	while (optind <= argc)	/* what followed "--" */
		argv[n++] = argv[optind++ - 1];
	return n;
}

/* The text report; the JSON one is ics_test_json(). */
static void send_print(const struct ics_test_result *r, uint32_t flags, uint32_t count,
		       uint32_t size, uint32_t node, unsigned int chan)
{
	char buf[ICS_NUMBUF];
	int i;

	printf("sent %" PRIu32, r->sent);
	if (r->sent != count)
		printf(" of %" PRIu32, count);
	printf(" messages of %s%" PRIu32 " bytes to node %" PRIu32 " on channel %s\n",
	       flags & ICS_TEST_F_MIXED ? "0.." : "", size, node, ics_channel_names[chan]);
	/* without WAIT or PING, done counts only what was acknowledged by then */
	if (flags & (ICS_TEST_F_WAIT | ICS_TEST_F_PING) || r->failed)
		printf("done %" PRIu32 ", failed %" PRIu32 "\n", r->done, r->failed);
	if (!r->have_rtt)
		return;
	printf("rtt count %" PRIu32, r->rtt_count);
	for (i = 0; i < ICS_RTT_STATS; i++)
		printf(", %s %s us", ics_rtt_names[i], icsnl_fmt_us(buf, r->rtt_ns[i]));
	putchar('\n');
}

/*
 * ics_test's generator (ICS_TEST_CMD_SEND): `test send`, and `send` for
 * short. @name prefixes its messages.
 */
static int gen_send(const char *name, int argc, char **argv)
{
	static const char *const keys[] = { "node", "channel", "size", "count", NULL };
	const char *vals[4] = { NULL }, *timeout_arg = NULL;
	uint32_t node, size, count, flags = 0, timeout = 0;
	struct ics_test_result r = { 0 };
	unsigned int chan;
	struct nl_msg *msg;
	struct json j;

	argc = send_opts(name, argc, argv, &flags, &timeout_arg);
	if (out_fmt.raw)
		icsnl_usage_err("%s: option -n is for show only", name);
	parse_keys(name, argc, argv, keys, vals);
	need(name, vals[0], "node N");
	need(name, vals[1], "channel NAME");
	need(name, vals[2], "size BYTES");
	need(name, vals[3], "count K");
	node = icsnl_arg_u32("node", vals[0]);
	chan = icsnl_arg_channel(vals[1]);
	size = icsnl_arg_size("size", vals[2]);
	count = icsnl_arg_u32("count", vals[3]);
	if (timeout_arg)
		timeout = icsnl_arg_u32("timeout", timeout_arg);

	msg = new_test_msg(ICS_TEST_CMD_SEND);
	if (nla_put_u32(msg, ICS_TEST_A_NODE, node) ||
	    nla_put_u32(msg, ICS_TEST_A_CHANNEL, chan) ||
	    nla_put_u32(msg, ICS_TEST_A_SIZE, size) ||
	    nla_put_u32(msg, ICS_TEST_A_COUNT, count) ||
	    (flags && nla_put_u32(msg, ICS_TEST_A_FLAGS, flags)) ||
	    (timeout_arg && nla_put_u32(msg, ICS_TEST_A_TIMEOUT_MS, timeout))) {
		nlmsg_free(msg);
		icsnl_perror(NULL, name, -ENOMEM);
		return 1;
	}
	if (run(name, msg, ics_test_parse, &r))
		return 1;
	if (out_fmt.json) {
		json_init(&j, stdout, out_fmt.pretty);
		ics_test_json(&j, &r);
	} else {
		send_print(&r, flags, count, size, node, chan);
	}
	if (ics_test_ok(&r, count))
		return 0;
	/* Counts are on stdout; the error line is the usual one. */
	if (r.error)
		icsnl_perror(&nl, name, -r.error);
	else
		icsnl_err("%s: %" PRIu32 " of %" PRIu32 " messages sent, %" PRIu32 " failed",
			  name, r.sent, count, r.failed);
	return 1;
}

static int cmd_send(int argc, char **argv)
{
	return gen_send("send", argc, argv);
}

static int cmd_prio(int argc, char **argv)
{
	unsigned int chan, prio;
	struct nl_msg *msg;
	struct nlattr *nest;

	if (argc < 1)
		icsnl_usage_err("prio: missing CHANNEL");
	if (argc < 2)
		icsnl_usage_err("prio: missing LEVEL (0..%d)", ICS_PRIO_LEVELS - 1);
	no_args("prio", argc - 2, argv + 2);
	chan = icsnl_arg_channel(argv[0]);
	prio = icsnl_arg_prio(argv[1]);

	msg = new_msg(ICS_CMD_SET_CHANNEL);
	nest = nla_nest_start(msg, ICS_A_CHANNEL);
	if (!nest || nla_put_u32(msg, ICS_CHAN_A_ID, chan) ||
	    nla_put_u8(msg, ICS_CHAN_A_PRIO, prio) || nla_nest_end(msg, nest)) {
		nlmsg_free(msg);
		icsnl_perror(NULL, "prio", -ENOMEM);
		return 1;
	}
	return run("prio", msg, NULL, NULL);
}

static int cmd_set(int argc, char **argv)
{
	static const char *const keys[] = { "heartbeat", "misses", "votes", "expected", "auth",
					    NULL };
	static const int attrs[] = { ICS_A_HEARTBEAT_MS, ICS_A_HEARTBEAT_MISSES, ICS_A_VOTES,
				     ICS_A_EXPECTED_VOTES };
	static const uint32_t lo[] = { ICS_HEARTBEAT_MS_MIN, 1, 0, 0 };
	static const uint32_t hi[] = { ICS_HEARTBEAT_MS_MAX, ICS_HEARTBEAT_MISSES_MAX, 1,
				       ICS_MAX_NODES };
	const char *vals[5] = { NULL };
	int mode = -1;
	uint32_t v[4];
	struct nl_msg *msg;
	int k;

	parse_keys("set", argc, argv, keys, vals);
	if (!vals[0] && !vals[1] && !vals[2] && !vals[3] && !vals[4])
		icsnl_usage_err("set: nothing to set (heartbeat MS, misses N, votes V, expected N, auth MODE)");
	if (vals[4]) {
		for (k = 0; k < (int)ARRAY_SIZE(ics_auth_modes); k++)
			if (!strcmp(vals[4], ics_auth_modes[k]))
				mode = k;
		if (mode < 0)
			icsnl_usage_err("set: auth \"%s\": off, accept or require", vals[4]);
	}
	for (k = 0; k < 4; k++) {
		if (!vals[k])
			continue;
		v[k] = icsnl_arg_u32(keys[k], vals[k]);
		if (v[k] < lo[k] || v[k] > hi[k])
			icsnl_usage_err("set: %s %u out of range %u..%u", keys[k], v[k], lo[k],
					hi[k]);
	}
	msg = new_msg(ICS_CMD_SET_INSTANCE);
	for (k = 0; k < 4; k++) {
		if (vals[k] && nla_put_u32(msg, attrs[k], v[k])) {
			nlmsg_free(msg);
			icsnl_perror(NULL, "set", -ENOMEM);
			return 1;
		}
	}
	if (mode >= 0 && nla_put_u8(msg, ICS_A_AUTH_MODE, mode)) {
		nlmsg_free(msg);
		icsnl_perror(NULL, "set", -ENOMEM);
		return 1;
	}
	return run("set", msg, NULL, NULL);
}

/* Cluster keys. */

static uint8_t arg_key_id(const char *cmd, const char *s, unsigned int lo)
{
	uint32_t id = icsnl_arg_u32("key id", s);

	if (id < lo || id > 255)
		icsnl_usage_err("%s: key id %u out of range %u..255", cmd, id, lo);
	return id;
}

/* The key in @path (ics_key_file_read()), or -1 after saying why. */
static int key_read(const char *path, uint8_t *key)
{
	char why[PATH_MAX + 128];

	if (!ics_key_file_read(path, key, why, sizeof(why)))
		return 0;
	icsnl_err("key add: %s", why);
	return -1;
}

static int key_gen(int argc, char **argv)
{
	uint8_t key[ICS_KEY_LEN];
	struct stat st;
	char text[64];

	no_args("key gen", argc, argv);
	/* As wg genkey: a key written where others may read it is no secret. */
	if (!fstat(STDOUT_FILENO, &st) && S_ISREG(st.st_mode) && (st.st_mode & 077))
		fprintf(stderr, "icsctl: key gen: warning: writing to a file group or others may access (umask 077 first)\n");
	if (getrandom(key, sizeof(key), 0) != sizeof(key)) {
		fprintf(stderr, "icsctl: key gen: getrandom: %s\n", strerror(errno));
		return 1;
	}
	icsnl_key_to_b64(key, text);
	printf("%s\n", text);
	explicit_bzero(key, sizeof(key));
	explicit_bzero(text, sizeof(text));
	return 0;
}

static int key_add(int argc, char **argv)
{
	uint8_t key[ICS_KEY_LEN], id;
	struct nl_msg *msg;
	int err;

	if (argc < 2)
		icsnl_usage_err("key add: missing %s", argc < 1 ? "ID" : "FILE");
	no_args("key add", argc - 2, argv + 2);
	id = arg_key_id("key add", argv[0], 1);
	if (key_read(argv[1], key))
		return 1;
	msg = new_msg(ICS_CMD_KEY_ADD);
	err = nla_put_u8(msg, ICS_A_KEY_ID, id) || nla_put(msg, ICS_A_KEY, sizeof(key), key);
	explicit_bzero(key, sizeof(key));
	if (err) {
		nlmsg_free(msg);
		icsnl_perror(NULL, "key add", -ENOMEM);
		return 1;
	}
	return run("key add", msg, NULL, NULL);
}

static int key_id_cmd(const char *name, uint8_t cmd, unsigned int lo, int argc, char **argv)
{
	struct nl_msg *msg;
	uint8_t id;

	if (argc < 1)
		icsnl_usage_err("%s: missing ID", name);
	no_args(name, argc - 1, argv + 1);
	id = arg_key_id(name, argv[0], lo);
	msg = new_msg(cmd);
	if (nla_put_u8(msg, ICS_A_KEY_ID, id)) {
		nlmsg_free(msg);
		icsnl_perror(NULL, name, -ENOMEM);
		return 1;
	}
	return run(name, msg, NULL, NULL);
}

static int key_use(int argc, char **argv)
{
	return key_id_cmd("key use", ICS_CMD_KEY_USE, 0, argc, argv);
}

static int key_del(int argc, char **argv)
{
	return key_id_cmd("key del", ICS_CMD_KEY_DEL, 1, argc, argv);
}

static int cmd_key(int argc, char **argv)
{
	static const struct { const char *name; int (*fn)(int argc, char **argv); } sub[] = {
		{ "gen", key_gen }, { "add", key_add }, { "use", key_use }, { "del", key_del },
	};
	size_t k;

	if (argc < 1)
		icsnl_usage_err("key: missing command: gen, add, use or del");
	for (k = 0; k < ARRAY_SIZE(sub); k++)
		if (!strcmp(argv[0], sub[k].name))
			return sub[k].fn(argc - 1, argv + 1);
	icsnl_usage_err("key: unknown command \"%s\" (try \"icsctl help\")", argv[0]);
}

/* Lasting configuration: showconf and setconf (icsctl(8), CONFIGURATION FILE). */

/* Each channel's send priority, from ICS_CMD_GET_CHANNELS. */
struct chan_prios {
	bool have[ICS_CHANNELS];
	uint8_t prio[ICS_CHANNELS];
};

static int prio_cb(struct nlattr **tb, void *arg)
{
	struct nlattr *t[ICS_CHAN_A_MAX + 1];
	struct chan_prios *cp = arg;
	uint32_t id;

	if (!tb[ICS_A_CHANNEL] ||
	    nla_parse_nested(t, ICS_CHAN_A_MAX, tb[ICS_A_CHANNEL], NULL) < 0 ||
	    !t[ICS_CHAN_A_ID] || nla_len(t[ICS_CHAN_A_ID]) < 4)
		return -EPROTO;
	id = nla_get_u32(t[ICS_CHAN_A_ID]);
	if (id < ICS_CHANNELS && t[ICS_CHAN_A_PRIO] && nla_len(t[ICS_CHAN_A_PRIO]) >= 1) {
		cp->have[id] = true;
		cp->prio[id] = nla_get_u8(t[ICS_CHAN_A_PRIO]);
	}
	return 0;
}

/* The instance and its channels' priorities: 0, or 1 after saying why. */
static int conf_get(const char *name, struct ics_instance *in, struct chan_prios *cp)
{
	int err, i;

	nl_open(icsnl_open);
	err = ics_get_instance(&nl, in);
	if (!err)
		err = icsnl_dump(&nl, ICS_CMD_GET_CHANNELS, prio_cb, cp, sizeof(*cp));
	if (err) {
		icsnl_perror(&nl, name, err);
		return 1;
	}
	for (i = 0; i < ICS_CHANNELS; i++) {
		if (!cp->have[i]) {
			icsnl_err("%s: the kernel gave no priority for channel %s", name,
				  ics_channel_names[i]);
			return 1;
		}
	}
	if (!(in->have & 1ULL << ICS_A_EXPECTED_VOTES_CFG)) {
		icsnl_err("%s: the loaded ics.ko is older than icsctl (it does not report the configured expected votes)",
			  name);
		return 1;
	}
	if (!(in->have & 1ULL << ICS_A_KEYS)) {
		icsnl_err("%s: the instance's keys are shown to its netns admin only (need CAP_NET_ADMIN)",
			  name);
		return 1;
	}
	return 0;
}

static bool bound(const struct ics_instance *in)
{
	return in->have & 1ULL << ICS_A_IFNAME;
}

/*
 * The first file in @dir (by name) holding the key of fingerprint @fpr;
 * not one whose name a configuration line cannot hold (a blank, a '#').
 * -1 when @dir cannot be read.
 */
static int key_file_find(const char *dir, const uint8_t *fpr, char *path, size_t len)
{
	uint8_t key[ICS_KEY_LEN], kfpr[ICS_KEY_FPR_LEN];
	struct dirent **ents;
	char why[PATH_MAX + 128];
	bool found = false;
	int i, n;

	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (!found && ents[i]->d_name[0] != '.' && !strpbrk(ents[i]->d_name, " \t#") &&
		    snprintf(path, len, "%s/%s", dir, ents[i]->d_name) < (int)len &&
		    !ics_key_file_read(path, key, why, sizeof(why))) {
			ics_key_fingerprint(key, kfpr);
			found = !memcmp(kfpr, fpr, sizeof(kfpr));
		}
		free(ents[i]);
	}
	free(ents);
	explicit_bzero(key, sizeof(key));
	return found;
}

/*
 * The configuration as a file setconf reads, in setconf's order, which also
 * works line by line as icsctl commands: a key before its use, the key in
 * use before an authentication mode that needs it, the binding last. A key
 * no file holds gets a line setconf refuses ("?" for its file), so that a
 * file saved regardless cannot delete it.
 */
static int cmd_showconf(int argc, char **argv)
{
	static const char *const keys[] = { "keydir", NULL };
	const char *vals[1] = { NULL };
	char dir[PATH_MAX], path[PATH_MAX], hex[2 * ICS_KEY_FPR_LEN + 1];
	struct ics_instance in;
	struct chan_prios cp;
	unsigned int i, missing = 0;
	int found;

	parse_keys("showconf", argc, argv, keys, vals);
	if (conf_get("showconf", &in, &cp))
		return 1;
	/* the file names keys by absolute paths */
	if (in.nkeys && !realpath(vals[0] ? vals[0] : ICS_KEYDIR, dir)) {
		icsnl_err("showconf: key directory %s: %s", vals[0] ? vals[0] : ICS_KEYDIR,
			  strerror(errno));
		return 1;
	}

	printf("# ics configuration: icsctl showconf prints it, icsctl setconf applies it\n");
	printf("set heartbeat %u misses %u votes %u expected %u\n", in.heartbeat_ms,
	       in.heartbeat_misses, in.votes, in.expected_votes_cfg);
	for (i = 0; i < in.nkeys; i++) {
		ics_key_fpr_hex(in.keys[i].fpr, hex);
		found = key_file_find(dir, in.keys[i].fpr, path, sizeof(path));
		if (found < 0) {
			icsnl_err("showconf: key directory %s: %s", dir, strerror(errno));
			return 1;
		}
		if (found) {
			printf("key add %u %s\t# fingerprint %s\n", in.keys[i].id, path, hex);
		} else {
			printf("key add %u ?\t# no file in %s holds the key of fingerprint %s\n",
			       in.keys[i].id, dir, hex);
			missing++;
		}
	}
	printf("key use %u\n", in.key_tx);
	printf("set auth %s\n", ics_auth_mode_name(in.auth_mode));
	for (i = 0; i < ICS_CHANNELS; i++)
		printf("prio %s %u\n", ics_channel_names[i], cp.prio[i]);
	if (bound(&in))
		printf("bind dev %s node %u cluster %u\n", in.ifname, in.node_id, in.cluster_id);
	else
		printf("# not bound\n");
	if (!missing)
		return 0;
	icsnl_err("showconf: %u of %u keys in no file of %s (mode 600 files only; keydir DIR to look elsewhere)",
		  missing, in.nkeys, dir);
	return 1;
}

/* One change setconf makes, and the one that undoes it. */
enum conf_op { OP_NONE, OP_BIND, OP_UNBIND, OP_KEY_ADD, OP_KEY_DEL, OP_KEY_USE, OP_SET, OP_PRIO };

struct change {
	enum conf_op op;
	int line;			/* of the file, for messages */
	uint32_t a, b;			/* node, cluster; key id; channel, priority */
	const char *dev;
	const uint8_t *key;
	unsigned int mask;		/* OP_SET: bit CONF_x set */
	uint32_t set[CONF_SETS];
};

static struct nl_msg *change_msg(const struct change *c)
{
	static const int set_attr[CONF_AUTH] = { ICS_A_HEARTBEAT_MS, ICS_A_HEARTBEAT_MISSES,
						 ICS_A_VOTES, ICS_A_EXPECTED_VOTES };
	static const uint8_t cmd[] = {
		[OP_BIND] = ICS_CMD_BIND, [OP_UNBIND] = ICS_CMD_UNBIND,
		[OP_KEY_ADD] = ICS_CMD_KEY_ADD, [OP_KEY_DEL] = ICS_CMD_KEY_DEL,
		[OP_KEY_USE] = ICS_CMD_KEY_USE, [OP_SET] = ICS_CMD_SET_INSTANCE,
		[OP_PRIO] = ICS_CMD_SET_CHANNEL,
	};
	struct nl_msg *msg = icsnl_msg(&nl, cmd[c->op], 0);
	struct nlattr *nest;
	int err = 0, k;

	switch (c->op) {
	case OP_BIND:
		err = nla_put_string(msg, ICS_A_IFNAME, c->dev) ||
		      nla_put_u32(msg, ICS_A_NODE_ID, c->a) ||
		      nla_put_u32(msg, ICS_A_CLUSTER_ID, c->b);
		break;
	case OP_KEY_ADD:
		err = nla_put(msg, ICS_A_KEY, ICS_KEY_LEN, c->key);
		/* fall through */
	case OP_KEY_DEL:
	case OP_KEY_USE:
		err = err || nla_put_u8(msg, ICS_A_KEY_ID, c->a);
		break;
	case OP_SET:
		for (k = 0; k < CONF_AUTH; k++)
			if (c->mask & 1U << k)
				err = err || nla_put_u32(msg, set_attr[k], c->set[k]);
		if (c->mask & 1U << CONF_AUTH)
			err = err || nla_put_u8(msg, ICS_A_AUTH_MODE, c->set[CONF_AUTH]);
		break;
	case OP_PRIO:
		nest = nla_nest_start(msg, ICS_A_CHANNEL);
		err = !nest || nla_put_u32(msg, ICS_CHAN_A_ID, c->a) ||
		      nla_put_u8(msg, ICS_CHAN_A_PRIO, c->b) || nla_nest_end(msg, nest);
		break;
	default:
		break;
	}
	if (err) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static int change_run(const struct change *c)
{
	struct nl_msg *msg = change_msg(c);

	return msg ? icsnl_do(&nl, msg, NULL, NULL) : -ENOMEM;
}

/* Every change of a file is at most: bind, keys, 3 for keys and auth, set, prios, deletions. */
#define CHANGES_MAX	(1 + ICS_KEYS_MAX + 3 + 1 + ICS_CHANNELS + ICS_KEYS_MAX)

struct plan {
	const char *file;
	unsigned int n;
	struct change todo[CHANGES_MAX], undo[CHANGES_MAX];
};

static struct change *plan_add(struct plan *p, enum conf_op op, int line, enum conf_op undo)
{
	struct change *c = &p->todo[p->n];

	p->undo[p->n] = (struct change){ .op = undo, .line = line };
	*c = (struct change){ .op = op, .line = line };
	return &p->todo[p->n++];
}

static int __attribute__((format(printf, 3, 4)))
conf_err(const struct plan *p, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	icsnl_err("setconf: %s:%d: %s (nothing changed)", p->file, line, msg);
	return 1;
}

static int plan_keys(struct plan *p, const struct ics_conf *c, const struct ics_instance *in)
{
	char have[2 * ICS_KEY_FPR_LEN + 1], want[2 * ICS_KEY_FPR_LEN + 1];
	unsigned int i, k, fresh = 0;
	struct change *ch;

	for (i = 0; i < c->nkeys; i++) {
		for (k = 0; k < in->nkeys && in->keys[k].id != c->keys[i].id; k++)
			;
		if (k < in->nkeys) {
			if (!memcmp(in->keys[k].fpr, c->keys[i].fpr, ICS_KEY_FPR_LEN))
				continue;
			ics_key_fpr_hex(in->keys[k].fpr, have);
			ics_key_fpr_hex(c->keys[i].fpr, want);
			return conf_err(p, c->keys[i].line,
					"key %u is installed with another key (fingerprint %s, the file's %s): delete it first (icsctl key del %u) or give the new key a new id",
					c->keys[i].id, have, want, c->keys[i].id);
		}
		fresh++;
		ch = plan_add(p, OP_KEY_ADD, c->keys[i].line, OP_KEY_DEL);
		ch->a = p->undo[p->n - 1].a = c->keys[i].id;
		ch->key = c->keys[i].key;
	}
	if (fresh && in->nkeys + fresh > ICS_KEYS_MAX)
		return conf_err(p, c->key_lines,
				"%u new keys and %u installed: at most %d (delete one with icsctl key del first)",
				fresh, in->nkeys, ICS_KEYS_MAX);
	return 0;
}

/* Authentication mode and key in use, in an order the kernel accepts. */
static int plan_auth(struct plan *p, const struct ics_conf *c, const struct ics_instance *in)
{
	uint32_t use = c->use_line ? c->use : in->key_tx;
	uint32_t mode = c->set_line[CONF_AUTH] ? c->set[CONF_AUTH] : in->auth_mode;
	int use_line = c->use_line ? c->use_line : c->key_lines;
	unsigned int k;
	struct change *ch;

	if (c->nkeys && use) {
		for (k = 0; k < c->nkeys && c->keys[k].id != use; k++)
			;
		if (k == c->nkeys)
			return conf_err(p, c->key_lines,
					"the key in use, %u, is not among the file's keys: add it or a key use line",
					use);
	} else if (use) {
		for (k = 0; k < in->nkeys && in->keys[k].id != use; k++)
			;
		if (k == in->nkeys)
			return conf_err(p, c->use_line, "key use %u: no key %u is installed", use,
					use);
	}
	if (mode != ICS_AUTH_OFF && !use)
		return conf_err(p, c->set_line[CONF_AUTH] ? c->set_line[CONF_AUTH] : use_line,
				"auth %s needs a key in use", ics_auth_modes[mode]);
	/* off goes before the key it no longer needs; others after their key */
	if (mode != in->auth_mode && mode == ICS_AUTH_OFF) {
		ch = plan_add(p, OP_SET, c->set_line[CONF_AUTH], OP_SET);
		ch->mask = p->undo[p->n - 1].mask = 1U << CONF_AUTH;
		p->undo[p->n - 1].set[CONF_AUTH] = in->auth_mode;
	}
	if (use != in->key_tx) {
		ch = plan_add(p, OP_KEY_USE, use_line, OP_KEY_USE);
		ch->a = use;
		p->undo[p->n - 1].a = in->key_tx;
	}
	if (mode != in->auth_mode && mode != ICS_AUTH_OFF) {
		ch = plan_add(p, OP_SET, c->set_line[CONF_AUTH], OP_SET);
		ch->mask = p->undo[p->n - 1].mask = 1U << CONF_AUTH;
		ch->set[CONF_AUTH] = mode;
		p->undo[p->n - 1].set[CONF_AUTH] = in->auth_mode;
	}
	return 0;
}

/*
 * What it takes to make the instance what file @c says, and how to undo
 * each step; 0, or 1 after naming the line that cannot be applied. The
 * bind comes after the rest, so that the instance joins with its keys,
 * mode and tunables in place; keys the file does not name are deleted
 * last, when it names keys.
 */
static int conf_plan(struct plan *p, const struct ics_conf *c, const struct ics_instance *in,
		     const struct chan_prios *cp)
{
	const uint32_t cur[CONF_AUTH] = { in->heartbeat_ms, in->heartbeat_misses, in->votes,
					  in->expected_votes_cfg };
	struct change *ch = NULL;
	unsigned int i, k;

	if (c->bind_line && bound(in)) {
		if (strcmp(in->ifname, c->dev) || in->node_id != c->node ||
		    in->cluster_id != c->cluster)
			return conf_err(p, c->bind_line,
					"the instance is bound to %s as node %u of cluster %u: icsctl unbind first",
					in->ifname, in->node_id, in->cluster_id);
	} else if (c->bind_line && !if_nametoindex(c->dev)) {
		return conf_err(p, c->bind_line, "no network device \"%s\" here", c->dev);
	}
	if (plan_keys(p, c, in) || plan_auth(p, c, in))
		return 1;
	for (k = 0; k < CONF_AUTH; k++) {
		if (!c->set_line[k] || c->set[k] == cur[k])
			continue;
		if (!ch)
			ch = plan_add(p, OP_SET, c->set_line[k], OP_SET);
		ch->mask |= 1U << k;
		ch->set[k] = c->set[k];
		p->undo[p->n - 1].mask |= 1U << k;
		p->undo[p->n - 1].set[k] = cur[k];
	}
	for (i = 0; i < ICS_CHANNELS; i++) {
		if (!c->prio_line[i] || c->prio[i] == cp->prio[i])
			continue;
		ch = plan_add(p, OP_PRIO, c->prio_line[i], OP_PRIO);
		ch->a = p->undo[p->n - 1].a = i;
		ch->b = c->prio[i];
		p->undo[p->n - 1].b = cp->prio[i];
	}
	if (c->bind_line && !bound(in)) {
		ch = plan_add(p, OP_BIND, c->bind_line, OP_UNBIND);
		ch->dev = c->dev;
		ch->a = c->node;
		ch->b = c->cluster;
	}
	if (!c->nkeys)
		return 0;
	for (k = 0; k < in->nkeys; k++) {
		for (i = 0; i < c->nkeys && c->keys[i].id != in->keys[k].id; i++)
			;
		if (i == c->nkeys)
			plan_add(p, OP_KEY_DEL, c->key_lines, OP_NONE)->a = in->keys[k].id;
	}
	return 0;
}

static const char *const op_names[] = {
	[OP_BIND] = "bind", [OP_UNBIND] = "unbind", [OP_KEY_ADD] = "key add",
	[OP_KEY_DEL] = "key del", [OP_KEY_USE] = "key use", [OP_SET] = "set",
	[OP_PRIO] = "prio",
};

/* --verbose: a change as the icsctl command that makes it */
static void change_print(const struct change *c)
{
	int k;

	printf("%s", op_names[c->op]);
	switch (c->op) {
	case OP_BIND:
		printf(" dev %s node %u cluster %u", c->dev, c->a, c->b);
		break;
	case OP_KEY_ADD:
	case OP_KEY_DEL:
	case OP_KEY_USE:
		printf(" %u", c->a);
		break;
	case OP_SET:
		for (k = 0; k < CONF_AUTH; k++)
			if (c->mask & 1U << k)
				printf(" %s %u", ics_conf_set_keys[k], c->set[k]);
		if (c->mask & 1U << CONF_AUTH)
			printf(" auth %s", ics_auth_modes[c->set[CONF_AUTH]]);
		break;
	case OP_PRIO:
		printf(" %s %u", ics_channel_names[c->a], c->b);
		break;
	default:
		break;
	}
	putchar('\n');
}

/*
 * The plan, in order. When the kernel refuses a step (what the checks
 * before could not foresee), the steps before it are undone, last first;
 * only keys deleted (the last steps) cannot come back.
 */
static int conf_apply(struct plan *p, bool verbose)
{
	unsigned int i, j;
	int err;

	for (i = 0; i < p->n; i++) {
		err = change_run(&p->todo[i]);
		if (!err) {
			if (verbose)
				change_print(&p->todo[i]);
			continue;
		}
		icsnl_err("setconf: %s:%d: %s%s: %s%s%s", p->file, p->todo[i].line,
			  op_names[p->todo[i].op], p->todo[i].op == OP_KEY_DEL ? " of a key not in it" : "",
			  strerror(-err), nl.extack[0] ? ": " : "", nl.extack);
		/* the deletions come last: the rest of the file holds, keep it */
		if (p->todo[i].op == OP_KEY_DEL) {
			icsnl_err("setconf: the rest of the file was applied; key %u is still installed",
				  p->todo[i].a);
			return 1;
		}
		for (j = i; j-- > 0;) {
			if (p->undo[j].op == OP_NONE)
				continue;
			err = change_run(&p->undo[j]);
			if (err) {
				icsnl_err("setconf: undoing %s (line %d): %s%s%s; the instance is left half changed",
					  op_names[p->undo[j].op], p->undo[j].line, strerror(-err),
					  nl.extack[0] ? ": " : "", nl.extack);
				return 1;
			}
		}
		if (i)
			icsnl_err("setconf: the %u changes before it were undone", i);
		return 1;
	}
	return 0;
}

static int cmd_setconf(int argc, char **argv)
{
	static struct ics_conf conf;
	static struct plan plan;
	char err[PATH_MAX + 512];
	struct ics_instance in;
	struct chan_prios cp;
	bool check = false, verbose = false;
	FILE *f;
	int ret;

	for (; argc > 0 && argv[0][0] == '-' && argv[0][1]; argc--, argv++) {
		if (!strcmp(argv[0], "--check"))
			check = true;
		else if (!strcmp(argv[0], "-v") || !strcmp(argv[0], "--verbose"))
			verbose = true;
		else
			icsnl_usage_err("setconf: unknown option \"%s\" (--check, -v)", argv[0]);
	}
	if (argc < 1)
		icsnl_usage_err("setconf: missing FILE");
	no_args("setconf", argc - 1, argv + 1);
	plan.file = strcmp(argv[0], "-") ? argv[0] : "<stdin>";
	f = strcmp(argv[0], "-") ? fopen(argv[0], "re") : stdin;
	if (!f) {
		icsnl_err("setconf: %s: %s", argv[0], strerror(errno));
		return 1;
	}
	ret = ics_conf_read(f, plan.file, &conf, err, sizeof(err));
	if (f != stdin)
		fclose(f);
	if (ret) {
		icsnl_err("setconf: %s (nothing changed)", err);
		return 1;
	}
	if (check)
		ret = 0;
	else if (conf_get("setconf", &in, &cp))
		ret = 1;
	else
		ret = conf_plan(&plan, &conf, &in, &cp) || conf_apply(&plan, verbose);
	explicit_bzero(conf.keys, sizeof(conf.keys));
	return ret;
}

/* The test service, ics_test.ko: the "ics_test" family. */

static int test_send(int argc, char **argv)
{
	return gen_send("test send", argc, argv);
}

/* "all" is every channel but CNX, which carries ics's own frames. */
#define TEST_ALL	(((1U << ICS_CHANNELS) - 1) & ~(1U << ICS_CH_CNX))

/* The whole new set: the kernel attaches and detaches to make it so. */
static int test_attach(int argc, char **argv)
{
	struct nl_msg *msg;
	uint32_t mask = 0;
	int i;

	if (argc < 1)
		icsnl_usage_err("test attach: missing CHANNEL (names or ids, or all, or none)");
	for (i = 0; i < argc; i++) {
		bool all = !strcasecmp(argv[i], "all");

		if (all || !strcasecmp(argv[i], "none")) {
			if (argc > 1)
				icsnl_usage_err("test attach: \"%s\" goes alone", argv[i]);
			mask = all ? TEST_ALL : 0;
		} else {
			mask |= 1U << icsnl_arg_channel(argv[i]);
		}
	}

	msg = new_test_msg(ICS_TEST_CMD_ATTACH);
	if (nla_put_u32(msg, ICS_TEST_A_CHANNELS, mask)) {
		nlmsg_free(msg);
		icsnl_perror(NULL, "test attach", -ENOMEM);
		return 1;
	}
	return run("test attach", msg, NULL, NULL);
}

static int test_show(int argc, char **argv)
{
	struct ics_test_status st;
	int err, i;

	for (i = 0; i < argc; i++)
		if (!fmt_opt(argv[i]))
			icsnl_usage_err("test show: unexpected argument \"%s\"", argv[i]);

	memset(&st, 0, sizeof(st));
	err = icsnl_do_raw(&nl, new_test_msg(ICS_TEST_CMD_GET), ics_test_status_parse, &st);
	if (err) {
		icsnl_perror(&nl, "test show", err);
		return 1;
	}
	ics_test_status_print(stdout, &st, &out_fmt);
	return 0;
}

static int test_reset(int argc, char **argv)
{
	no_args("test reset", argc, argv);
	return run("test reset", new_test_msg(ICS_TEST_CMD_RESET), NULL, NULL);
}

/*
 * A command checks all its arguments before it opens the netlink socket, so
 * that usage errors exit 2 whether or not the module is loaded.
 */
struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	bool json;		/* takes -j and -p */
	bool raw;		/* takes -n */
};

/* -j, -p or -n given before the command: only for those that take them. */
static void check_fmt(const char *name, const struct command *cmd)
{
	if (out_fmt.raw && !cmd->raw)
		icsnl_usage_err("%s: option -n is for show only", name);
	if (out_fmt.json && !cmd->json)
		icsnl_usage_err("%s: options -j and -p are for show and send only", name);
}

static const struct command test_commands[] = {
	{ "attach", test_attach, false, false },
	{ "send", test_send, true, false },
	{ "show", test_show, true, true },
	{ "reset", test_reset, false, false },
};

static int cmd_test(int argc, char **argv)
{
	char name[32];
	size_t k;

	if (argc < 1)
		icsnl_usage_err("test: missing command: attach, send, show or reset");
	for (k = 0; k < ARRAY_SIZE(test_commands); k++) {
		if (strcmp(argv[0], test_commands[k].name))
			continue;
		snprintf(name, sizeof(name), "test %s", test_commands[k].name);
		check_fmt(name, &test_commands[k]);
		return test_commands[k].fn(argc - 1, argv + 1);
	}
	icsnl_usage_err("test: unknown command \"%s\" (try \"icsctl help\")", argv[0]);
}

static const struct command commands[] = {
	{ "bind", cmd_bind, false, false },
	{ "unbind", cmd_unbind, false, false },
	{ "reset", cmd_reset, false, false },
	{ "show", cmd_show, true, true },
	{ "send", cmd_send, true, false },
	{ "prio", cmd_prio, false, false },
	{ "set", cmd_set, false, false },
	{ "key", cmd_key, false, false },
	{ "showconf", cmd_showconf, false, false },
	{ "setconf", cmd_setconf, false, false },
	{ "test", cmd_test, true, true },	/* each subcommand checks its own */
	{ "nic", ics_nic_cmd, false, false },
};

int main(int argc, char **argv)
{
	const struct command *cmd = NULL;
	size_t k;
	int i, ret;

	icsnl_prog = "icsctl";
	/* Options before the command are show's or send's: "icsctl -j show", "-j test show" */
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--version")) {
			printf("icsctl %s\n", ICS_VERSION);
			return 0;
		} else if (!fmt_opt(argv[i])) {
			icsnl_usage_err("unknown option \"%s\" (try \"icsctl help\")", argv[i]);
		}
	}
	if (i >= argc)
		icsnl_usage_err("missing command (try \"icsctl help\")");
	if (!strcmp(argv[i], "help")) {
		usage(stdout);
		return 0;
	}
	for (k = 0; k < ARRAY_SIZE(commands); k++)
		if (!strcmp(argv[i], commands[k].name))
			cmd = &commands[k];
	if (!cmd)
		icsnl_usage_err("unknown command \"%s\" (try \"icsctl help\")", argv[i]);
	check_fmt(cmd->name, cmd);

	ret = cmd->fn(argc - i - 1, argv + i + 1);
	icsnl_close(&nl);
	if (icsnl_flush_stdout())
		ret = 1;
	return ret;
}
