// SPDX-License-Identifier: GPL-2.0
/*
 * Reading an ics configuration file (icsconf.h); applying it is icsctl's
 * setconf, which talks to the kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "blake2s.h"
#include "icsconf.h"
#include "icsnl.h"

const char *const ics_conf_set_keys[CONF_SETS] = {
	"heartbeat", "misses", "votes", "expected", "auth",
};

const char *const ics_auth_modes[3] = { "off", "accept", "require" };

/* `set` ranges, by CONF_*; auth is checked by name */
static const uint32_t set_lo[CONF_AUTH] = { ICS_HEARTBEAT_MS_MIN, 1, 0, 0 };
static const uint32_t set_hi[CONF_AUTH] = { ICS_HEARTBEAT_MS_MAX, ICS_HEARTBEAT_MISSES_MAX, 1,
					    ICS_MAX_NODES };

void ics_key_fingerprint(const uint8_t *key, uint8_t *fpr)
{
	static const char label[] = "ics key fingerprint";
	uint8_t out[BLAKE2S_OUT_MAX];

	blake2s(out, sizeof(out), label, sizeof(label) - 1, key, ICS_KEY_LEN);
	memcpy(fpr, out, ICS_KEY_FPR_LEN);
	explicit_bzero(out, sizeof(out));
}

void ics_key_fpr_hex(const uint8_t *fpr, char *hex)
{
	int k;

	for (k = 0; k < ICS_KEY_FPR_LEN; k++)
		snprintf(hex + 2 * k, 3, "%02x", fpr[k]);
}

int ics_key_file_read(const char *path, uint8_t *key, char *err, size_t errlen)
{
	char buf[64];
	struct stat st;
	ssize_t n;
	int fd, ret = -1;

	/* not to block on a FIFO, nor to take a terminal: regular files only */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if (st.st_mode & 077) {
		snprintf(err, errlen, "%s: group or others may access it (chmod 600)", path);
		goto out;
	}
	n = read(fd, buf, sizeof(buf));
	if (n < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	ret = icsnl_key_from_b64(buf, n, key);
	if (ret)
		snprintf(err, errlen, "%s: not a key (the base64 of %d bytes, as key gen prints)",
			 path, ICS_KEY_LEN);
out:
	explicit_bzero(buf, sizeof(buf));
	close(fd);
	return ret;
}

/* The state of one ics_conf_read(): where it is, for messages. */
struct reader {
	const char *name;
	int line;
	char *err;
	size_t errlen;
};

static int __attribute__((format(printf, 2, 3))) bad(struct reader *r, const char *fmt, ...)
{
	int n = snprintf(r->err, r->errlen, "%s:%d: ", r->name, r->line);
	va_list ap;

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < r->errlen)
		vsnprintf(r->err + n, r->errlen - n, fmt, ap);
	va_end(ap);
	return -1;
}

static int num(struct reader *r, const char *what, const char *s, uint32_t lo, uint32_t hi,
	       uint32_t *v)
{
	if (!s)
		return bad(r, "missing value after \"%s\"", what);
	if (icsnl_parse_u32(s, v))
		return bad(r, "%s: \"%s\" is not a number", what, s);
	if (*v < lo || *v > hi)
		return bad(r, "%s %u out of range %u..%u", what, *v, lo, hi);
	return 0;
}

static int extra(struct reader *r, char **tok, int n, int want)
{
	if (n > want)
		return bad(r, "unexpected \"%s\"", tok[want]);
	return 0;
}

static int once(struct reader *r, int *line, const char *what)
{
	if (*line)
		return bad(r, "%s given twice (line %d first)", what, *line);
	*line = r->line;
	return 0;
}

/* bind dev DEV node N [cluster C] */
static int read_bind(struct reader *r, struct ics_conf *c, char **tok, int n)
{
	bool have_dev = false, have_node = false, have_cluster = false;
	int i;

	if (once(r, &c->bind_line, "bind"))
		return -1;
	for (i = 1; i < n; i += 2) {
		const char *v = i + 1 < n ? tok[i + 1] : NULL;
		bool *seen;

		if (!strcmp(tok[i], "dev"))
			seen = &have_dev;
		else if (!strcmp(tok[i], "node"))
			seen = &have_node;
		else if (!strcmp(tok[i], "cluster"))
			seen = &have_cluster;
		else
			return bad(r, "bind: unknown argument \"%s\" (dev, node, cluster)", tok[i]);
		if (*seen)
			return bad(r, "bind: \"%s\" given twice", tok[i]);
		*seen = true;
		if (!v)
			return bad(r, "missing value after \"%s\"", tok[i]);
		if (seen == &have_dev) {
			if (strlen(v) >= IFNAMSIZ)
				return bad(r, "bind: device name \"%s\" longer than %d characters",
					   v, IFNAMSIZ - 1);
			strcpy(c->dev, v);
		} else if (seen == &have_node) {
			if (num(r, "node", v, 1, ICS_MAX_NODES, &c->node))
				return -1;
		} else if (num(r, "cluster", v, 0, UINT32_MAX, &c->cluster)) {
			return -1;
		}
	}
	if (!have_dev || !have_node)
		return bad(r, "bind: missing \"%s\"", have_dev ? "node N" : "dev DEV");
	return 0;
}

/* set KEY VALUE ... */
static int read_set(struct reader *r, struct ics_conf *c, char **tok, int n)
{
	int i, k, m;

	if (n < 2)
		return bad(r, "set: nothing to set (heartbeat, misses, votes, expected, auth)");
	for (i = 1; i < n; i += 2) {
		for (k = 0; k < CONF_SETS && strcmp(tok[i], ics_conf_set_keys[k]); k++)
			;
		if (k == CONF_SETS)
			return bad(r, "set: unknown argument \"%s\" (heartbeat, misses, votes, expected, auth)",
				   tok[i]);
		if (once(r, &c->set_line[k], ics_conf_set_keys[k]))
			return -1;
		if (k < CONF_AUTH) {
			if (num(r, tok[i], i + 1 < n ? tok[i + 1] : NULL, set_lo[k], set_hi[k],
				&c->set[k]))
				return -1;
			continue;
		}
		if (i + 1 >= n)
			return bad(r, "missing value after \"auth\"");
		for (m = 0; m < (int)ARRAY_SIZE(ics_auth_modes); m++)
			if (!strcmp(tok[i + 1], ics_auth_modes[m]))
				break;
		if (m == (int)ARRAY_SIZE(ics_auth_modes))
			return bad(r, "auth \"%s\": off, accept or require", tok[i + 1]);
		c->set[k] = m;
	}
	return 0;
}

/* prio CHANNEL LEVEL */
static int read_prio(struct reader *r, struct ics_conf *c, char **tok, int n)
{
	int ch, prio;

	if (n < 3)
		return bad(r, "prio: missing %s", n < 2 ? "CHANNEL" : "LEVEL");
	if (extra(r, tok, n, 3))
		return -1;
	ch = icsnl_parse_channel(tok[1]);
	if (ch < 0)
		return bad(r, "prio: unknown channel \"%s\"", tok[1]);
	prio = icsnl_parse_prio(tok[2]);
	if (prio < 0)
		return bad(r, "prio: invalid priority \"%s\" (0..%d, 0 is served first)", tok[2],
			   ICS_PRIO_LEVELS - 1);
	if (c->prio_line[ch])
		return bad(r, "prio of %s given twice (line %d first)", ics_channel_names[ch],
			   c->prio_line[ch]);
	c->prio_line[ch] = r->line;
	c->prio[ch] = prio;
	return 0;
}

/* key add ID FILE, key use ID */
static int read_key(struct reader *r, struct ics_conf *c, char **tok, int n)
{
	struct ics_conf_key *k;
	char why[PATH_MAX + 128];
	uint32_t id;
	unsigned int i;

	if (n >= 2 && !strcmp(tok[1], "use")) {
		if (extra(r, tok, n, 3) || once(r, &c->use_line, "key use") ||
		    num(r, "key use", n > 2 ? tok[2] : NULL, 0, 255, &id))
			return -1;
		c->use = id;
		return 0;
	}
	if (n < 2 || strcmp(tok[1], "add"))
		return bad(r, "key: \"add ID FILE\" or \"use ID\"");
	if (n < 4)
		return bad(r, "key add: missing %s", n < 3 ? "ID" : "FILE");
	if (extra(r, tok, n, 4) || num(r, "key id", tok[2], 1, 255, &id))
		return -1;
	for (i = 0; i < c->nkeys; i++)
		if (c->keys[i].id == id)
			return bad(r, "key %u added twice (line %d first)", id, c->keys[i].line);
	if (c->nkeys == ICS_KEYS_MAX)
		return bad(r, "more than %d keys", ICS_KEYS_MAX);
	if (!strcmp(tok[3], "?"))
		return bad(r, "key add %u: no file for this key (showconf found none)", id);
	if (tok[3][0] != '/')
		return bad(r, "key add: \"%s\": give the key file's absolute path", tok[3]);
	if (strlen(tok[3]) >= sizeof(k->path))
		return bad(r, "key add: file name too long");
	k = &c->keys[c->nkeys];
	if (ics_key_file_read(tok[3], k->key, why, sizeof(why)))
		return bad(r, "key add: %s", why);
	if (!c->nkeys)
		c->key_lines = r->line;
	k->line = r->line;
	k->id = id;
	strcpy(k->path, tok[3]);
	ics_key_fingerprint(k->key, k->fpr);
	c->nkeys++;
	return 0;
}

#define CONF_LINE_MAX	1024
#define CONF_TOKENS	16

int ics_conf_read(FILE *f, const char *name, struct ics_conf *c, char *err, size_t errlen)
{
	struct reader r = { .name = name, .err = err, .errlen = errlen };
	char buf[CONF_LINE_MAX + 2], *tok[CONF_TOKENS + 1], *p, *save;
	unsigned int i;
	int n, ret;

	memset(c, 0, sizeof(*c));
	while (fgets(buf, sizeof(buf), f)) {
		r.line++;
		if (!strchr(buf, '\n') && !feof(f)) {
			ret = bad(&r, "line longer than %d characters", CONF_LINE_MAX);
			goto fail;
		}
		p = strchr(buf, '#');
		if (p)
			*p = '\0';
		n = 0;
		for (p = strtok_r(buf, " \t\r\n", &save); p; p = strtok_r(NULL, " \t\r\n", &save)) {
			if (n == CONF_TOKENS) {
				ret = bad(&r, "more than %d words", CONF_TOKENS);
				goto fail;
			}
			tok[n++] = p;
		}
		if (!n)
			continue;
		if (!strcmp(tok[0], "bind"))
			ret = read_bind(&r, c, tok, n);
		else if (!strcmp(tok[0], "set"))
			ret = read_set(&r, c, tok, n);
		else if (!strcmp(tok[0], "prio"))
			ret = read_prio(&r, c, tok, n);
		else if (!strcmp(tok[0], "key"))
			ret = read_key(&r, c, tok, n);
		else
			ret = bad(&r, "unknown command \"%s\" (bind, set, prio, key add, key use)",
				  tok[0]);
		if (ret)
			goto fail;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error", name);
		goto fail;
	}
	if (c->use_line && c->use && c->nkeys) {
		for (i = 0; i < c->nkeys && c->keys[i].id != c->use; i++)
			;
		if (i == c->nkeys) {
			r.line = c->use_line;
			bad(&r, "key use %u: the file adds no key %u", c->use, c->use);
			goto fail;
		}
	}
	if (c->set_line[CONF_AUTH] && c->set[CONF_AUTH] != ICS_AUTH_OFF && c->use_line &&
	    !c->use) {
		r.line = c->set_line[CONF_AUTH];
		bad(&r, "auth %s needs a key in use, and line %d says key use 0",
		    ics_auth_modes[c->set[CONF_AUTH]], c->use_line);
		goto fail;
	}
	return 0;
fail:
	explicit_bzero(c->keys, sizeof(c->keys));
	return -1;
}
