// SPDX-License-Identifier: GPL-2.0
/*
 * The NIC view's userspace half, for icsctl and icstat: where a device's
 * maps are pinned, whether the program is attached, and reading the maps.
 *
 * Pins live under /sys/fs/bpf/ics/NETNS/IFINDEX/ (NETNS: the network
 * namespace's cookie, so that eth0 in two namespaces are two devices and a
 * new namespace never finds a dead one's; IFINDEX, not the name, so that a
 * rename keeps them): "stats"
 * and "etypes", readable by everyone (like /proc/net/dev) where the
 * kernel and bpffs's own mode allow it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "icsnl.h"
#include "nic.h"
#include "nicview.h"

static const char *const class_names[ICS_NIC_CLASSES] = {
	[ICS_NIC_HELLO] = "ics/hello",
	[ICS_NIC_ACK] = "ics/ack",
	[ICS_NIC_RESET] = "ics/reset",
	[ICS_NIC_ICS_BAD] = "ics/malformed",
	[ICS_NIC_ARP] = "ARP",
	[ICS_NIC_IP4_TCP] = "IPv4/TCP",
	[ICS_NIC_IP4_UDP] = "IPv4/UDP",
	[ICS_NIC_IP4_ICMP] = "IPv4/ICMP",
	[ICS_NIC_IP4_OTHER] = "IPv4/other",
	[ICS_NIC_IP6_TCP] = "IPv6/TCP",
	[ICS_NIC_IP6_UDP] = "IPv6/UDP",
	[ICS_NIC_IP6_ICMP] = "IPv6/ICMPv6",
	[ICS_NIC_IP6_OTHER] = "IPv6/other",
	[ICS_NIC_VLAN] = "VLAN",
	[ICS_NIC_LLC] = "802.3/LLC",
	[ICS_NIC_ETYPE_MORE] = "ethertype/more",
};

const char *ics_nic_class_name(int class, char *buf, size_t len)
{
	if (class < ICS_CHANNELS)
		snprintf(buf, len, "ics/%s", ics_channel_names[class]);
	else
		snprintf(buf, len, "%s", class_names[class]);
	return buf;
}

static const struct {
	uint16_t type;
	const char *name;
} etype_names[] = {
	{ 0x22f0, "AVTP" }, { 0x22f3, "TRILL" }, { 0x8035, "RARP" }, { 0x8808, "PAUSE" },
	{ 0x8809, "LACP" }, { 0x8847, "MPLS" }, { 0x8848, "MPLS" }, { 0x8863, "PPPoE" },
	{ 0x8864, "PPPoE" }, { 0x888e, "EAPOL" }, { 0x88ca, "TIPC" }, { 0x88cc, "LLDP" },
	{ 0x88e5, "MACsec" }, { 0x88f7, "PTP" }, { 0x8902, "CFM" }, { 0x8906, "FCoE" },
	{ 0x8914, "FIP" }, { 0x8915, "RoCE" }, { 0x9000, "loopback" },
};

const char *ics_nic_etype_name(uint16_t type, char *buf, size_t len)
{
	size_t k;

	for (k = 0; k < ARRAY_SIZE(etype_names); k++)
		if (etype_names[k].type == type) {
			snprintf(buf, len, "0x%04x/%s", type, etype_names[k].name);
			return buf;
		}
	snprintf(buf, len, "0x%04x", type);
	return buf;
}

int ics_nic_pin_dir(char *buf, size_t len, unsigned int ifindex)
{
	socklen_t olen = sizeof(uint64_t);
	uint64_t cookie;
	int fd, err = 0;

	/* the namespace's cookie: unlike its inode number, never reused */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &olen))
		err = -errno;
	if (fd >= 0)
		close(fd);
	if (err)
		return err;
	snprintf(buf, len, "%s/%" PRIu64 "/%u", ICS_NIC_PIN_ROOT, cookie, ifindex);
	return 0;
}

/* bpffs is mounted on /sys/fs/bpf: 1 if so, 0 if not. */
int ics_nic_have_bpffs(void)
{
	struct statfs fs;

	return !statfs(ICS_NIC_BPFFS, &fs) && fs.f_type == BPF_FS_MAGIC;
}

/*
 * bpffs on /sys/fs/bpf: 0; 1 if there is none but this is the system's own
 * mount namespace (pid 1's), where the caller may mount it; or -ENOENT
 * after saying why not. A private one (ip netns exec mounts a fresh /sys),
 * or one that cannot be told from pid 1's, would lose a mount with the
 * process.
 */
int ics_nic_bpffs(const char *ctx)
{
	struct stat self, init;

	if (ics_nic_have_bpffs())
		return 0;
	if (!stat("/proc/self/ns/mnt", &self) && !stat("/proc/1/ns/mnt", &init) &&
	    self.st_dev == init.st_dev && self.st_ino == init.st_ino)
		return 1;
	icsnl_err("%s: no bpffs on %s in this mount namespace (ip netns exec mounts a fresh /sys): use nsenter --net=/run/netns/NAME, or mount bpffs there",
		  ctx, ICS_NIC_BPFFS);
	return -ENOENT;
}

/*
 * Is our program on @ifindex's hook? 1 with its id in @prog_id, 0 if not
 * (no clsact, or no filter of ours), or -errno.
 */
int ics_nic_query(unsigned int ifindex, int dir, uint32_t *prog_id)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
		    .attach_point = dir == ICS_NIC_RX ? BPF_TC_INGRESS : BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = ICS_NIC_TC_HANDLE, .priority = ICS_NIC_TC_PRIO);
	int err = bpf_tc_query(&hook, &opts);

	if (err == -ENOENT || err == -EINVAL)	/* no such filter; no clsact qdisc */
		return 0;
	if (err)
		return err;
	*prog_id = opts.prog_id;
	return 1;
}

/* The per-CPU values of one key, summed; 0, or -errno. */
static int lookup_sum(int fd, const void *key, struct ics_nic_ctr *sum, struct ics_nic_ctr *buf,
		      int ncpu)
{
	int i;

	if (bpf_map_lookup_elem(fd, key, buf))
		return -errno;
	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < ncpu; i++)
		ics_nic_ctr_add(sum, &buf[i]);
	return 0;
}

static int open_map(const char *dir, const char *name, const char *ifname)
{
	LIBBPF_OPTS(bpf_obj_get_opts, opts, .file_flags = BPF_F_RDONLY);
	char path[PATH_MAX];
	int fd, err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = bpf_obj_get_opts(path, &opts);
	if (fd >= 0)
		return fd;
	err = -errno;
	if (err == -ENOENT)
		icsnl_err("nic: %s: no counters (attach them with icsctl nic attach %s)",
			  ifname, ifname);
	else if (err == -EPERM)	/* before 5.19, kernel.unprivileged_bpf_disabled */
		icsnl_err("nic: this kernel lets only root (CAP_BPF) read BPF maps: run as root");
	else if (err == -EACCES)
		icsnl_err("nic: %s: %s (bpffs is mounted for root only: run as root)",
			  path, strerror(EACCES));
	else
		icsnl_err("nic: %s: %s", path, strerror(-err));
	return err;
}

int ics_nic_read(const char *ifname, struct ics_nic_snap *s)
{
	int ncpu = libbpf_num_possible_cpus(), fd_stats, fd_et, err, d, c;
	struct ics_nic_ctr *buf;
	char dir[ICS_NIC_DIR_MAX], path[PATH_MAX];
	uint32_t key, next, id;
	struct timespec now;
	struct stat st;
	uint32_t *prev = NULL;

	libbpf_set_print(NULL);		/* errors are said here, in one line */
	memset(s, 0, sizeof(*s));
	snprintf(s->ifname, sizeof(s->ifname), "%s", ifname);
	s->ifindex = if_nametoindex(ifname);
	if (!s->ifindex) {
		icsnl_err("nic: %s: no such device", ifname);
		return -ENODEV;
	}
	if (ncpu < 0) {
		icsnl_err("nic: cannot count the CPUs: %s", strerror(-ncpu));
		return ncpu;
	}
	err = ics_nic_pin_dir(dir, sizeof(dir), s->ifindex);
	if (err) {
		icsnl_err("nic: the network namespace's cookie: %s", strerror(-err));
		return err;
	}
	err = ics_nic_bpffs("nic");
	if (err < 0)
		return err;
	buf = calloc(ncpu, sizeof(*buf));
	if (!buf) {
		icsnl_err("nic: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	fd_stats = open_map(dir, "stats", ifname);
	if (fd_stats < 0) {
		free(buf);
		return fd_stats;
	}
	fd_et = open_map(dir, "etypes", ifname);
	if (fd_et < 0) {
		err = fd_et;
		goto out;
	}
	for (d = 0; d < ICS_NIC_DIRS; d++)
		for (c = 0; c < ICS_NIC_CLASSES; c++) {
			key = d * ICS_NIC_CLASSES + c;
			err = lookup_sum(fd_stats, &key, &s->c[d][c], buf, ncpu);
			if (err)
				goto read_err;
		}
	/* etypes: the keys in the map's order, which bpf_map_get_next_key gives */
	while (s->n_etypes < ICS_NIC_ETYPES && !bpf_map_get_next_key(fd_et, prev, &next)) {
		key = next;
		prev = &key;
		err = lookup_sum(fd_et, &key, &s->et[s->n_etypes].c, buf, ncpu);
		if (err == -ENOENT)
			continue;	/* gone meanwhile: there is no deleting, but be safe */
		if (err)
			goto read_err;
		s->et[s->n_etypes].dir = key >> 16;
		s->et[s->n_etypes].type = key & 0xffff;
		s->n_etypes++;
	}
	snprintf(path, sizeof(path), "%s/stats", dir);
	if (!stat(path, &st) && !clock_gettime(CLOCK_REALTIME, &now)) {
		s->pinned = st.st_mtim;
		s->age_ms = ((now.tv_sec - st.st_mtim.tv_sec) * 1000000000LL +
			     now.tv_nsec - st.st_mtim.tv_nsec) / 1000000;
	}
	for (d = 0; d < ICS_NIC_DIRS; d++) {
		err = ics_nic_query(s->ifindex, d, &id);
		s->attached[d] = err > 0;
	}
	err = 0;
	goto out;
read_err:
	icsnl_err("nic: %s: reading the counters: %s", ifname, strerror(-err));
out:
	if (fd_et >= 0)
		close(fd_et);
	close(fd_stats);
	free(buf);
	return err;
}
