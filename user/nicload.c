// SPDX-License-Identifier: GPL-2.0
/*
 * icsctl nic attach|detach DEV: load ics_nic.bpf.c (its skeleton is built
 * into icsctl), put its two programs on DEV's clsact ingress and egress as
 * filter ICS_NIC_TC_HANDLE at priority ICS_NIC_TC_PRIO, and pin its maps so
 * that the counters outlive icsctl (the filters hold the programs, the
 * programs and the pins hold the maps). Detach removes those two filters,
 * if they are ours, and the pins; never the clsact qdisc, which other
 * filters may use, nor any other filter.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <net/if_arp.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "icsnl.h"
#include "nicview.h"
#include "ics_nic.skel.h"

static const char *const map_names[] = { "stats", "etypes" };
static const char *const prog_names[ICS_NIC_DIRS] = { "ics_nic_rx", "ics_nic_tx" };
static const char *const hook_names[ICS_NIC_DIRS] = { "ingress", "egress" };

/*
 * libbpf's messages: kept, and shown only when loading fails (the verifier's
 * verdict is the end of its log); a missing filter is no news.
 */
static char libbpf_log[4096];

static int libbpf_keep(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	size_t len = strlen(libbpf_log);
	char line[1024];

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	if (len + strlen(line) >= sizeof(libbpf_log)) {
		/* keep the newest: drop the older half */
		memmove(libbpf_log, libbpf_log + len / 2, len - len / 2 + 1);
		len = strlen(libbpf_log);
	}
	snprintf(libbpf_log + len, sizeof(libbpf_log) - len, "%s", line);
	return 0;
}

static void hook_init(struct bpf_tc_hook *hook, unsigned int ifindex, int dir)
{
	memset(hook, 0, sizeof(*hook));
	hook->sz = sizeof(*hook);
	hook->ifindex = ifindex;
	hook->attach_point = dir == ICS_NIC_RX ? BPF_TC_INGRESS : BPF_TC_EGRESS;
}

static int detach_dir(unsigned int ifindex, int dir)
{
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = ICS_NIC_TC_HANDLE, .priority = ICS_NIC_TC_PRIO);
	struct bpf_tc_hook hook;

	hook_init(&hook, ifindex, dir);
	return bpf_tc_detach(&hook, &opts);
}

/* Remove the pins of @dir and @dir itself; 1 if there were any. */
static int unpin(const char *dir)
{
	char path[PATH_MAX];
	int any = 0;
	size_t k;

	for (k = 0; k < ARRAY_SIZE(map_names); k++) {
		snprintf(path, sizeof(path), "%s/%s", dir, map_names[k]);
		if (!unlink(path))
			any = 1;
	}
	if (!rmdir(dir))
		any = 1;
	/* the namespace's directory, once its last device is gone */
	snprintf(path, sizeof(path), "%s", dir);
	*strrchr(path, '/') = '\0';
	rmdir(path);
	return any;
}

/*
 * bpffs on /sys/fs/bpf, mounted if the system has none (as systemd would,
 * but 0755); refused in a private mount namespace, where a mount would
 * vanish with icsctl.
 */
static int bpffs_ready(void)
{
	int err = ics_nic_bpffs("nic attach");

	if (err <= 0)
		return err;
	if (mount("bpf", ICS_NIC_BPFFS, "bpf", 0, "mode=0755")) {
		icsnl_err("nic attach: mounting bpffs on %s: %s", ICS_NIC_BPFFS, strerror(errno));
		return -1;
	}
	return 0;
}

/* @dir and its parents under bpffs, mode 0755 (whatever the umask) where created. */
static int mkdirs(const char *ctx, const char *dir)
{
	char path[PATH_MAX], *p;

	snprintf(path, sizeof(path), "%s", dir);
	for (p = path + strlen(ICS_NIC_BPFFS) + 1; ; p++) {
		if (*p && *p != '/')
			continue;
		char c = *p;

		*p = '\0';
		if (!mkdir(path, 0755) ? chmod(path, 0755) : errno != EEXIST) {
			icsnl_err("%s: mkdir %s: %s", ctx, path, strerror(errno));
			return -1;
		}
		if (!c)
			return 0;
		*p = c;
	}
}

/*
 * One attach or detach at a time on this host: an exclusive flock on a
 * file outside bpffs (which an attach may have to mount), held until
 * icsctl exits, so that two of them cannot mount twice or remove each
 * other's pins between a query and a pin.
 */
#define ICS_NIC_LOCK	"/run/ics-nic.lock"

static int lock_nic(const char *ctx)
{
	int fd = open(ICS_NIC_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0 || flock(fd, LOCK_EX)) {
		icsnl_err("%s: locking %s: %s", ctx, ICS_NIC_LOCK, strerror(errno));
		return -1;
	}
	return 0;
}

/* 1 if the program with id @id is ours for direction @dir, 0 if not, or -errno. */
static int ours(uint32_t id, int dir)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	int fd, ret;

	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	ret = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : !strcmp(info.name, prog_names[dir]);
	close(fd);
	return ret;
}

/*
 * The ids of the maps that loaded ics_nic programs use, into @ids (room
 * for @max); their number, or -1 if the walk did not finish.
 */
static int live_maps(uint32_t *ids, int max)
{
	uint32_t id = 0, mids[4];
	int n = 0, fd;
	uint32_t k;

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);

		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue;	/* gone meanwhile */
		memset(&info, 0, sizeof(info));
		info.nr_map_ids = ARRAY_SIZE(mids);
		info.map_ids = (uintptr_t)mids;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    (!strcmp(info.name, prog_names[0]) || !strcmp(info.name, prog_names[1])))
			for (k = 0; k < info.nr_map_ids && k < ARRAY_SIZE(mids) && n < max; k++)
				ids[n++] = mids[k];
		close(fd);
	}
	return errno == ENOENT && n < max ? n : -1;
}

/*
 * Pins no loaded program counts into any more: those of a device that was
 * deleted or moved, of a namespace that is gone (its cookie is never seen
 * again), of a filter someone else removed. Called under the lock, so no
 * attach is between pinning and attaching.
 */
static void unpin_orphans(void)
{
	char ns[PATH_MAX], dev[PATH_MAX + NAME_MAX + 2], path[PATH_MAX + NAME_MAX + 10];
	uint32_t ids[1024];
	struct dirent *e, *f;
	DIR *dp, *dq;
	int n, i, fd;

	n = live_maps(ids, ARRAY_SIZE(ids));
	dp = n < 0 ? NULL : opendir(ICS_NIC_PIN_ROOT);
	if (!dp)
		return;
	while ((e = readdir(dp))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(ns, sizeof(ns), "%s/%s", ICS_NIC_PIN_ROOT, e->d_name);
		dq = opendir(ns);
		if (!dq)
			continue;
		while ((f = readdir(dq))) {
			struct bpf_map_info info;
			uint32_t len = sizeof(info);
			bool live = false;

			if (f->d_name[0] == '.')
				continue;
			snprintf(dev, sizeof(dev), "%s/%s", ns, f->d_name);
			snprintf(path, sizeof(path), "%s/stats", dev);
			fd = bpf_obj_get(path);
			memset(&info, 0, sizeof(info));
			if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
				for (i = 0; i < n && !live; i++)
					live = ids[i] == info.id;
			if (fd >= 0)
				close(fd);
			if (!live)
				unpin(dev);
		}
		closedir(dq);
		rmdir(ns);	/* if it is empty now */
	}
	closedir(dp);
}

/* An Ethernet header at offset 0: Ethernet devices and loopback. */
static int is_ether(const char *ifname)
{
	struct ifreq ifr = { 0 };
	int fd, ret;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 1;	/* let the attach itself say what is wrong */
	ret = ioctl(fd, SIOCGIFHWADDR, &ifr) || ifr.ifr_hwaddr.sa_family == ARPHRD_ETHER ||
	      ifr.ifr_hwaddr.sa_family == ARPHRD_LOOPBACK;
	close(fd);
	return ret;
}

static int nic_attach(const char *ifname, unsigned int ifindex)
{
	struct bpf_program *progs[ICS_NIC_DIRS];
	struct bpf_map *maps[2];
	char dir[ICS_NIC_DIR_MAX], path[PATH_MAX];
	struct ics_nic *skel;
	int d, k, err, done = 0;
	uint32_t id;

	if (geteuid() != 0) {
		icsnl_err("nic attach: needs root (CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN)");
		return 1;
	}
	if (!is_ether(ifname)) {
		icsnl_err("nic attach: %s: not an Ethernet device: its frames have no Ethernet header to classify",
			  ifname);
		return 1;
	}
	err = ics_nic_pin_dir(dir, sizeof(dir), ifindex);
	if (err) {
		icsnl_err("nic attach: the network namespace's cookie: %s", strerror(-err));
		return 1;
	}
	if (lock_nic("nic attach") || bpffs_ready())
		return 1;
	for (d = 0; d < ICS_NIC_DIRS; d++) {
		err = ics_nic_query(ifindex, d, &id);
		if (err > 0)
			err = ours(id, d);
		if (err < 0) {
			icsnl_err("nic attach: %s: reading its %s filters: %s", ifname,
				  hook_names[d], strerror(-err));
			return 1;
		}
		if (err > 0) {
			icsnl_err("nic attach: %s: already attached (icsctl nic detach %s first)",
				  ifname, ifname);
			return 1;
		}
		if (ics_nic_query(ifindex, d, &id) > 0) {
			icsnl_err("nic attach: %s: its %s filter at handle 0x%x, priority %d is another program's (id %u): not attaching",
				  ifname, hook_names[d], ICS_NIC_TC_HANDLE, ICS_NIC_TC_PRIO, id);
			return 1;
		}
	}
	unpin_orphans();
	unpin(dir);		/* a detached or lost program's: not counting any more */
	if (mkdirs("nic attach", dir))
		return 1;

	libbpf_log[0] = '\0';
	skel = ics_nic__open_and_load();
	if (!skel) {
		err = errno;
		if (err != EPERM)
			fputs(libbpf_log, stderr);
		icsnl_err("nic attach: loading the BPF program: %s%s", strerror(err),
			  err == EPERM ? " (needs root: CAP_BPF, CAP_NET_ADMIN)" : "");
		unpin(dir);
		return 1;
	}
	progs[ICS_NIC_RX] = skel->progs.ics_nic_rx;
	progs[ICS_NIC_TX] = skel->progs.ics_nic_tx;
	maps[0] = skel->maps.stats;
	maps[1] = skel->maps.etypes;
	for (k = 0; k < 2; k++) {
		snprintf(path, sizeof(path), "%s/%s", dir, map_names[k]);
		err = bpf_map__pin(maps[k], path);
		if (err || chmod(path, 0644)) {
			icsnl_err("nic attach: pinning %s: %s", path,
				  strerror(err ? -err : errno));
			goto fail;
		}
	}
	for (d = 0; d < ICS_NIC_DIRS; d++) {
		LIBBPF_OPTS(bpf_tc_opts, opts, .handle = ICS_NIC_TC_HANDLE,
			    .priority = ICS_NIC_TC_PRIO, .prog_fd = bpf_program__fd(progs[d]));
		struct bpf_tc_hook hook;

		hook_init(&hook, ifindex, d);
		err = bpf_tc_hook_create(&hook);	/* the clsact qdisc, if missing */
		if (err && err != -EEXIST) {
			icsnl_err("nic attach: %s: adding the clsact qdisc: %s%s", ifname,
				  strerror(-err), err == -EINVAL ?
				  " (is another ingress or root qdisc in the way?)" : "");
			goto fail;
		}
		err = bpf_tc_attach(&hook, &opts);
		if (err) {
			icsnl_err("nic attach: %s: adding the %s filter (handle 0x%x, priority %d): %s%s",
				  ifname, hook_names[d], ICS_NIC_TC_HANDLE, ICS_NIC_TC_PRIO,
				  strerror(-err),
				  err == -EINVAL ? " (is priority 1 taken by a filter of another kind?)" :
				  "");
			goto fail;
		}
		done |= 1 << d;
	}
	printf("nic: %s: counting every frame on ingress and egress (counters in %s)\n",
	       ifname, dir);
	ics_nic__destroy(skel);		/* the filters keep the programs */
	return 0;
fail:
	for (d = 0; d < ICS_NIC_DIRS; d++)
		if (done & 1 << d)
			detach_dir(ifindex, d);
	ics_nic__destroy(skel);
	unpin(dir);		/* under the lock: only ours can be there */
	return 1;
}

static int nic_detach(const char *ifname, unsigned int ifindex)
{
	char dir[ICS_NIC_DIR_MAX];
	int d, err, found = 0, left = 0, foreign = 0;
	uint32_t id;

	if (geteuid() != 0) {
		icsnl_err("nic detach: needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN)");
		return 1;
	}
	err = ics_nic_pin_dir(dir, sizeof(dir), ifindex);
	if (err) {
		icsnl_err("nic detach: the network namespace's cookie: %s", strerror(-err));
		return 1;
	}
	if (lock_nic("nic detach"))
		return 1;
	for (d = 0; d < ICS_NIC_DIRS; d++) {
		err = ics_nic_query(ifindex, d, &id);
		if (!err)
			continue;		/* no filter there */
		if (err > 0) {
			err = ours(id, d);
			if (!err) {
				icsnl_err("nic detach: %s: the %s filter at handle 0x%x, priority %d is not ics_nic's (program id %u): left alone",
					  ifname, hook_names[d], ICS_NIC_TC_HANDLE,
					  ICS_NIC_TC_PRIO, id);
				foreign = 1;
				continue;
			}
		}
		if (err < 0) {
			icsnl_err("nic detach: %s: reading its %s filter: %s", ifname,
				  hook_names[d], strerror(-err));
			left = 1;
			continue;
		}
		err = detach_dir(ifindex, d);
		if (err) {
			icsnl_err("nic detach: %s: removing the %s filter: %s", ifname,
				  hook_names[d], strerror(-err));
			left = 1;
			continue;
		}
		found = 1;
	}
	if (left)	/* a filter of ours may still count: keep its counters */
		return 1;
	if (!ics_nic_have_bpffs()) {
		/* a private mount namespace (ip netns exec): the pins are not here */
		if (found && !foreign)
			printf("nic: %s: detached; its counters go at the next nic attach on this host\n",
			       ifname);
		else if (!foreign)
			icsnl_err("nic detach: %s: not attached", ifname);
		return !found || foreign;
	}
	if (unpin(dir))
		found = 1;
	if (foreign)
		return 1;
	if (!found) {
		icsnl_err("nic detach: %s: not attached", ifname);
		return 1;
	}
	printf("nic: %s: detached; its counters are gone\n", ifname);
	return 0;
}
int ics_nic_cmd(int argc, char **argv)
{
	unsigned int ifindex;

	if (argc < 1)
		icsnl_usage_err("nic: missing command: attach or detach");
	if (strcmp(argv[0], "attach") && strcmp(argv[0], "detach"))
		icsnl_usage_err("nic: unknown command \"%s\" (attach or detach)", argv[0]);
	if (argc != 2)
		icsnl_usage_err("nic %s: %s", argv[0],
				argc < 2 ? "missing device (nic attach DEV)" : "one device only");
	libbpf_set_print(libbpf_keep);
	ifindex = if_nametoindex(argv[1]);
	if (!ifindex) {
		icsnl_err("nic %s: %s: no such device", argv[0], argv[1]);
		return 1;
	}
	return argv[0][0] == 'a' ? nic_attach(argv[1], ifindex) : nic_detach(argv[1], ifindex);
}
