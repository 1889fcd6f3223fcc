/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The NIC view: what the tc program ics_nic.bpf.c counts and how its maps
 * are laid out. Shared by that program (compiled to BPF), icsctl (which
 * loads and attaches it) and icstat (which reads the pinned maps).
 *
 * The program sits on a device's clsact ingress and egress hooks and
 * counts every frame there, once, in exactly one class: frames and bytes
 * on the wire (Ethernet header included, as the device's own counters
 * count them), skbs (the sk_buffs the hook saw: a GSO or GRO skb is
 * several frames) and a histogram of the frames' lengths in the rows of
 * the message-size histograms (ics_hist_row()).
 */
#ifndef ICS_NIC_H
#define ICS_NIC_H

#include <linux/types.h>
#include <linux/ics.h>

enum ics_nic_class {
	ICS_NIC_DATA = 0,			/* + channel: ics DATA frames */
	ICS_NIC_HELLO = ICS_CHANNELS,		/* ics heartbeats */
	ICS_NIC_ACK,				/* ics acknowledgements */
	ICS_NIC_RESET,				/* ics RESET frames */
	ICS_NIC_ICS_BAD,	/* ics ethertype, not a frame ics would parse */
	ICS_NIC_ARP,
	ICS_NIC_IP4_TCP,
	ICS_NIC_IP4_UDP,
	ICS_NIC_IP4_ICMP,
	ICS_NIC_IP4_OTHER,
	ICS_NIC_IP6_TCP,
	ICS_NIC_IP6_UDP,
	ICS_NIC_IP6_ICMP,
	ICS_NIC_IP6_OTHER,
	ICS_NIC_VLAN,		/* 802.1Q or 802.1ad tagged, in the frame or the skb */
	ICS_NIC_LLC,		/* 802.3 length field instead of an ethertype */
	ICS_NIC_ETYPE_MORE,	/* other ethertypes once the ethertype map is full */
	ICS_NIC_CLASSES
};

#define ICS_NIC_ICS_CLASSES	(ICS_NIC_ICS_BAD + 1)	/* the classes of ics frames */

enum { ICS_NIC_RX, ICS_NIC_TX, ICS_NIC_DIRS };		/* ingress, egress */

/*
 * hist: ICS_HIST_ROWS rows used, rounded up to a power of two so that the
 * program can index it with a mask the verifier understands.
 */
#define ICS_NIC_HIST_SLOTS	32

struct ics_nic_ctr {
	__u64 frames;		/* on the wire */
	__u64 bytes;		/* on the wire */
	__u64 skbs;		/* as the hook saw them */
	__u64 hist[ICS_NIC_HIST_SLOTS];
};

/* Map "stats": a per-CPU array, key dir * ICS_NIC_CLASSES + class. */
#define ICS_NIC_STATS_KEYS	(ICS_NIC_DIRS * ICS_NIC_CLASSES)

/*
 * Map "etypes": a per-CPU hash of the ethertypes of no class above (other
 * than IPv4, IPv6, ARP, VLAN and ics), key ICS_NIC_ETYPE_KEY(dir, type);
 * at most ICS_NIC_ETYPES of them, the rest count in ICS_NIC_ETYPE_MORE.
 */
#define ICS_NIC_ETYPES		64
#define ICS_NIC_ETYPE_KEY(dir, type)	((__u32)(dir) << 16 | (type))

/* tc filter identity: handle 0x1c5 at priority 1 (first) on each hook. */
#define ICS_NIC_TC_HANDLE	0x1c5
#define ICS_NIC_TC_PRIO		1

#endif
