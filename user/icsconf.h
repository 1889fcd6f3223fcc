/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The configuration file of an instance (icsctl showconf and setconf,
 * icsctl(8) "CONFIGURATION FILE"): icsctl's own commands, one per line,
 * read as a whole and applied in an order of icsctl's choosing.
 */
#ifndef ICSCONF_H
#define ICSCONF_H

#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/ics.h>

/* The `set` keys, in the order they are printed. */
enum { CONF_HEARTBEAT, CONF_MISSES, CONF_VOTES, CONF_EXPECTED, CONF_AUTH, CONF_SETS };

struct ics_conf_key {
	int line;
	uint8_t id;
	uint8_t key[ICS_KEY_LEN];
	uint8_t fpr[ICS_KEY_FPR_LEN];
	char path[PATH_MAX];
};

/* A file: each item with the line that gave it, 0 when none did. */
struct ics_conf {
	int bind_line;
	char dev[IFNAMSIZ];
	uint32_t node, cluster;
	int set_line[CONF_SETS];
	uint32_t set[CONF_SETS];		/* CONF_AUTH: enum ics_auth_mode */
	int prio_line[ICS_CHANNELS];
	uint8_t prio[ICS_CHANNELS];
	int key_lines;				/* the first `key add` line */
	unsigned int nkeys;
	struct ics_conf_key keys[ICS_KEYS_MAX];
	int use_line;
	uint8_t use;
};

extern const char *const ics_conf_set_keys[CONF_SETS];	/* "heartbeat", ... */
extern const char *const ics_auth_modes[3];		/* "off", "accept", "require" */

/*
 * Read @f (named @name in messages) into @c, key files included. 0, or -1
 * with "NAME:LINE: what is wrong" in @err. Checks everything that can be
 * checked without the kernel: syntax, ranges, repeats, key files, and that
 * `key use` names a key of the file when the file has keys.
 */
int ics_conf_read(FILE *f, const char *name, struct ics_conf *c, char *err, size_t errlen);

/*
 * The key in @path, as `icsctl key gen` prints it, into @key; a file that
 * group or others may access, or that is not a regular file, is refused.
 * 0, or -1 with the reason in @err.
 */
int ics_key_file_read(const char *path, uint8_t *key, char *err, size_t errlen);

/* ics.ko's fingerprint of @key (key.c): keyed BLAKE2s of a constant. */
void ics_key_fingerprint(const uint8_t *key, uint8_t *fpr);
void ics_key_fpr_hex(const uint8_t *fpr, char *hex);	/* 2 * ICS_KEY_FPR_LEN + 1 */

#endif
