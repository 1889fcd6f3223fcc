// SPDX-License-Identifier: GPL-2.0
/*
 * icsctl - configure ics (bind, unbind, reset counters) and drive its
 * in-kernel traffic generator. Changes need CAP_NET_ADMIN.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <net/if.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include "icsnl.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: icsctl COMMAND\n"
		"\n"
		"Commands:\n"
		"  bind dev DEV node N [cluster C]  bind this network namespace's ics to DEV\n"
		"  unbind                           unbind it (counters survive)\n"
		"  reset                            zero every counter\n"
		"  show [-j] [-p] [-n]              instance state and counters, as icstat show\n"
		"  send node N channel NAME size BYTES count K\n"
		"                                   send K test messages of BYTES bytes\n"
		"                                   (suffix k or m: 1k = 1024, 16m = 16777216)\n"
		"  help                             this text\n"
		"\n"
		"Channels: BOOT PRI0 PRI1 CFS NET CLSM DRD TUNL CLUA KEVM CFSR RBLD KCH DLM TEST\n"
		"CNX (case-insensitive), or their ids 0..15.\n");
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

/* Opened by each command once its arguments are known to be good. */
static struct icsnl nl;

static void nl_open(void)
{
	if (icsnl_open(&nl))
		exit(1);
}

static struct nl_msg *new_msg(uint8_t cmd)
{
	nl_open();
	return icsnl_msg(&nl, cmd, 0);
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

static struct icsnl_fmt show_fmt;

static int cmd_show(int argc, char **argv)
{
	struct ics_instance in;
	int err, i;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "-j"))
			show_fmt.json = true;
		else if (!strcmp(argv[i], "-p"))
			show_fmt.json = show_fmt.pretty = true;
		else if (!strcmp(argv[i], "-n"))
			show_fmt.raw = true;
		else
			icsnl_usage_err("show: unexpected argument \"%s\"", argv[i]);
	}

	nl_open();
	err = ics_get_instance(&nl, &in);
	if (err) {
		icsnl_perror(&nl, "show", err);
		return 1;
	}
	ics_print_show(&in, &show_fmt);
	return 0;
}

static int sent_cb(struct nlattr **tb, void *arg)
{
	if (tb[ICS_A_TEST_SENT])
		*(uint32_t *)arg = nla_get_u32(tb[ICS_A_TEST_SENT]);
	return 0;
}

static int cmd_send(int argc, char **argv)
{
	static const char *const keys[] = { "node", "channel", "size", "count", NULL };
	const char *vals[4] = { NULL };
	uint32_t node, size, count, sent;
	unsigned int chan;
	struct nl_msg *msg;

	parse_keys("send", argc, argv, keys, vals);
	need("send", vals[0], "node N");
	need("send", vals[1], "channel NAME");
	need("send", vals[2], "size BYTES");
	need("send", vals[3], "count K");
	node = icsnl_arg_u32("node", vals[0]);
	chan = icsnl_arg_channel(vals[1]);
	size = icsnl_arg_size("size", vals[2]);
	count = icsnl_arg_u32("count", vals[3]);

	msg = new_msg(ICS_CMD_SEND_TEST);
	if (nla_put_u32(msg, ICS_A_NODE_ID, node) ||
	    nla_put_u32(msg, ICS_A_TEST_CHANNEL, chan) ||
	    nla_put_u32(msg, ICS_A_TEST_SIZE, size) ||
	    nla_put_u32(msg, ICS_A_TEST_COUNT, count)) {
		nlmsg_free(msg);
		icsnl_perror(NULL, "send", -ENOMEM);
		return 1;
	}
	sent = count;
	if (run("send", msg, sent_cb, &sent))
		return 1;
	printf("sent %u messages of %u bytes to node %u on channel %s\n", sent, size, node,
	       ics_channel_names[chan]);
	return 0;
}

/*
 * A command checks all its arguments before it opens the netlink socket, so
 * that usage errors exit 2 whether or not the module is loaded.
 */
static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "bind", cmd_bind },
	{ "unbind", cmd_unbind },
	{ "reset", cmd_reset },
	{ "show", cmd_show },
	{ "send", cmd_send },
};

int main(int argc, char **argv)
{
	const struct command *cmd = NULL;
	size_t k;
	int i, ret;

	icsnl_prog = "icsctl";
	/* Options before the command are show's: "icsctl -j show" */
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "-j")) {
			show_fmt.json = true;
		} else if (!strcmp(argv[i], "-p")) {
			show_fmt.json = show_fmt.pretty = true;
		} else if (!strcmp(argv[i], "-n")) {
			show_fmt.raw = true;
		} else {
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
	if (cmd->fn != cmd_show && (show_fmt.json || show_fmt.raw))
		icsnl_usage_err("%s: options -j, -p and -n are for show only", cmd->name);

	ret = cmd->fn(argc - i - 1, argv + i + 1);
	icsnl_close(&nl);
	if (icsnl_flush_stdout())
		ret = 1;
	return ret;
}
