/* SPDX-License-Identifier: GPL-2.0 */
/* The NIC view in icsctl and icstat (nic.c): pins, attachment, reading. */
#ifndef ICS_NICVIEW_H
#define ICS_NICVIEW_H

#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "nic.h"

#define ICS_NIC_BPFFS		"/sys/fs/bpf"
#define ICS_NIC_PIN_ROOT	ICS_NIC_BPFFS "/ics"
#define ICS_NIC_DIR_MAX		64	/* ICS_NIC_PIN_ROOT/NETNS/IFINDEX */

struct ics_nic_etype {
	uint16_t type;
	uint8_t dir;
	struct ics_nic_ctr c;
};

/* One reading of a device's counters, summed over the CPUs. */
struct ics_nic_snap {
	char ifname[IF_NAMESIZE];
	unsigned int ifindex;
	bool attached[ICS_NIC_DIRS];		/* the filters are on the hooks */
	uint64_t age_ms;			/* since the counters were pinned */
	struct timespec pinned;			/* when: another value, another attach */
	struct ics_nic_ctr c[ICS_NIC_DIRS][ICS_NIC_CLASSES];
	int n_etypes;
	struct ics_nic_etype et[ICS_NIC_ETYPES];
};

/* @sum += @c, field by field */
static inline void ics_nic_ctr_add(struct ics_nic_ctr *sum, const struct ics_nic_ctr *c)
{
	int r;

	sum->frames += c->frames;
	sum->bytes += c->bytes;
	sum->skbs += c->skbs;
	for (r = 0; r < ICS_NIC_HIST_SLOTS; r++)
		sum->hist[r] += c->hist[r];
}

const char *ics_nic_class_name(int class, char *buf, size_t len);
const char *ics_nic_etype_name(uint16_t type, char *buf, size_t len);
int ics_nic_pin_dir(char *buf, size_t len, unsigned int ifindex);
int ics_nic_have_bpffs(void);
int ics_nic_bpffs(const char *ctx);
int ics_nic_query(unsigned int ifindex, int dir, uint32_t *prog_id);
int ics_nic_cmd(int argc, char **argv);	/* icsctl nic, nicload.c */
int ics_nic_read(const char *ifname, struct ics_nic_snap *s);	/* 0 or -errno, said */

#endif
