// SPDX-License-Identifier: GPL-2.0
/*
 * ics_nic: count every frame that crosses a device, by class (../nic.h).
 *
 * Two tc programs, one per clsact hook, that only read: each frame is
 * counted in one class and passed on with TC_ACT_UNSPEC, so that the filters
 * after this one (a firewall, a shaper) still decide its fate as they would
 * without it. Reads only the frame's bytes and stable __sk_buff fields.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "../nic.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ICS_NIC_STATS_KEYS);
	__type(key, __u32);
	__type(value, struct ics_nic_ctr);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, ICS_NIC_ETYPES);
	__type(key, __u32);
	__type(value, struct ics_nic_ctr);
} etypes SEC(".maps");

/* A new ethertype's first value (read-only data, not zeroed on the stack per frame). */
static const struct ics_nic_ctr zero;

/* ics_hist_row() without a loop: row 0 for 0, else min(fls(n - 1) + 1, 26). */
static __always_inline __u32 hist_row(__u32 n)
{
	__u32 r = 1;

	if (!n)
		return 0;
	n--;
	if (n >> 16) {
		n >>= 16;
		r += 16;
	}
	if (n >> 8) {
		n >>= 8;
		r += 8;
	}
	if (n >> 4) {
		n >>= 4;
		r += 4;
	}
	if (n >> 2) {
		n >>= 2;
		r += 2;
	}
	if (n >> 1) {
		n >>= 1;
		r += 1;
	}
	r += n;
	return r < ICS_HIST_ROW_MORE ? r : ICS_HIST_ROW_MORE;
}

static __always_inline void hist_add(struct ics_nic_ctr *c, __u32 len, __u32 n)
{
	__u32 row = hist_row(len);

	/*
	 * row < ICS_HIST_ROWS, but the verifier cannot follow hist_row(): mask
	 * it, and keep clang from dropping the mask it knows is redundant.
	 */
	asm volatile("" : "+r"(row));
	c->hist[row & (ICS_NIC_HIST_SLOTS - 1)] += n;
}

/*
 * One frame as the wire sees it. skb->len includes the Ethernet header
 * (cls_bpf pushes it back at ingress) but not a VLAN tag held in the skb
 * (taken out at ingress before the hook): add it. A GSO skb (TCP's always
 * are, the device segments them after the hook if it cannot) or a GRO one
 * becomes gso_segs frames on the wire, each with the headers @hlen:
 * frames, bytes and the histogram count those, so that they add up to the
 * counters of a device that counts the frames it sends; skbs counts skbs.
 * Where the headers were not parsed (@hlen 0: a VLAN tag in the frame, a
 * tunnel), the frames are still counted, their bytes without the repeats.
 */
static __always_inline void count(struct ics_nic_ctr *c, struct __sk_buff *skb, __u32 hlen)
{
	__u32 len = skb->len + (skb->vlan_present ? 4 : 0);
	__u32 segs = skb->gso_segs, gso = skb->gso_size, full;

	/* an skb from an untrusted source (tap, virtio: SKB_GSO_DODGY) has none yet */
	if (!segs && gso && hlen && len > hlen)
		segs = (len - hlen + gso - 1) / gso;
	c->skbs++;
	if (segs <= 1) {
		c->frames++;
		c->bytes += len;
		hist_add(c, len, 1);
		return;
	}
	if (!hlen || !gso) {
		/* headers not parsed (VLAN, tunnels): segs frames, their bytes short */
		c->frames += segs;
		c->bytes += len;
		hist_add(c, len / segs, segs);
		return;
	}
	/* segs - 1 segments of gso_size payload, and the rest in the last one */
	full = gso + hlen;
	len += (segs - 1) * hlen;
	c->frames += segs;
	c->bytes += len;
	hist_add(c, full, segs - 1);
	hist_add(c, len > (segs - 1) * full ? len - (segs - 1) * full : 0, 1);
}

/* An ics frame's class from its first bytes: version, type, flags, channel. */
static __always_inline __u32 ics_class(struct __sk_buff *skb)
{
	__u8 h[4];

	if (skb->len < ETH_HLEN + sizeof(struct ics_wire_hdr) ||
	    bpf_skb_load_bytes(skb, ETH_HLEN, h, sizeof(h)) || h[0] != ICS_WIRE_VERSION)
		return ICS_NIC_ICS_BAD;
	switch (h[1]) {
	case ICS_FT_DATA:
		return h[3] < ICS_CHANNELS ? ICS_NIC_DATA + h[3] : ICS_NIC_ICS_BAD;
	case ICS_FT_HELLO:
		return ICS_NIC_HELLO;
	case ICS_FT_ACK:
		return ICS_NIC_ACK;
	case ICS_FT_RESET:
		return ICS_NIC_RESET;
	}
	return ICS_NIC_ICS_BAD;
}

/*
 * The class of an IP packet's upper layer @proto at @l4 (base: the
 * family's TCP class, UDP, ICMP and other follow it), and in @hlen the
 * headers up to and including TCP's or UDP's, which every GSO segment
 * repeats (0 if unknown).
 */
static __always_inline __u32 l4_class(struct __sk_buff *skb, __u8 proto, __u32 l4, __u32 base,
				      __u32 *hlen)
{
	__u8 doff;

	switch (proto) {
	case IPPROTO_TCP:
		if (!bpf_skb_load_bytes(skb, l4 + 12, &doff, 1))
			*hlen = l4 + (doff >> 4) * 4;
		return base;
	case IPPROTO_UDP:
		*hlen = l4 + 8;
		return base + 1;
	case IPPROTO_ICMP:
		return base == ICS_NIC_IP4_TCP ? base + 2 : base + 3;
	case IPPROTO_ICMPV6:
		return base == ICS_NIC_IP6_TCP ? base + 2 : base + 3;
	}
	return base + 3;
}

static __always_inline __u32 ip4_class(struct __sk_buff *skb, __u32 *hlen)
{
	__u8 h[10];

	if (bpf_skb_load_bytes(skb, ETH_HLEN, h, sizeof(h)))
		return ICS_NIC_IP4_OTHER;
	return l4_class(skb, h[9], ETH_HLEN + (h[0] & 0xf) * 4, ICS_NIC_IP4_TCP, hlen);
}

/* IPv6: the upper layer after at most four extension headers. */
static __always_inline __u32 ip6_class(struct __sk_buff *skb, __u32 *hlen)
{
	__u32 off = ETH_HLEN + 40;
	__u8 nh, ext[2];
	int i;

	if (bpf_skb_load_bytes(skb, ETH_HLEN + 6, &nh, 1))
		return ICS_NIC_IP6_OTHER;
#pragma unroll
	for (i = 0; i < 4; i++) {
		if (nh != IPPROTO_HOPOPTS && nh != IPPROTO_ROUTING && nh != IPPROTO_DSTOPTS &&
		    nh != IPPROTO_FRAGMENT)
			break;
		if (bpf_skb_load_bytes(skb, off, ext, sizeof(ext)))
			return ICS_NIC_IP6_OTHER;
		off += nh == IPPROTO_FRAGMENT ? 8 : (ext[1] + 1) * 8;
		nh = ext[0];
	}
	return l4_class(skb, nh, off, ICS_NIC_IP6_TCP, hlen);
}

static __always_inline int account(struct __sk_buff *skb, __u32 dir)
{
	struct ics_nic_ctr *c;
	__u32 class, key, hlen = 0;
	__be16 be;
	__u16 type;

	if (skb->vlan_present) {
		class = ICS_NIC_VLAN;
		goto out;
	}
	if (bpf_skb_load_bytes(skb, 12, &be, sizeof(be))) {
		class = ICS_NIC_ETYPE_MORE;	/* shorter than an Ethernet header */
		goto out;
	}
	type = bpf_ntohs(be);
	switch (type) {
	case ICS_ETH_P:
		class = ics_class(skb);
		break;
	case ETH_P_ARP:
		class = ICS_NIC_ARP;
		break;
	case ETH_P_IP:
		class = ip4_class(skb, &hlen);
		break;
	case ETH_P_IPV6:
		class = ip6_class(skb, &hlen);
		break;
	case ETH_P_8021Q:
	case ETH_P_8021AD:
		class = ICS_NIC_VLAN;
		break;
	default:
		if (type < ETH_P_802_3_MIN) {
			class = ICS_NIC_LLC;
			break;
		}
		key = ICS_NIC_ETYPE_KEY(dir, type);
		c = bpf_map_lookup_elem(&etypes, &key);
		if (!c) {
			bpf_map_update_elem(&etypes, &key, &zero, BPF_NOEXIST);
			c = bpf_map_lookup_elem(&etypes, &key);
		}
		if (c) {
			count(c, skb, 0);
			return TC_ACT_UNSPEC;
		}
		class = ICS_NIC_ETYPE_MORE;	/* the map is full */
	}
out:
	key = dir * ICS_NIC_CLASSES + class;
	c = bpf_map_lookup_elem(&stats, &key);
	if (c)
		count(c, skb, hlen);
	return TC_ACT_UNSPEC;
}

SEC("tc")
int ics_nic_rx(struct __sk_buff *skb)
{
	return account(skb, ICS_NIC_RX);
}

SEC("tc")
int ics_nic_tx(struct __sk_buff *skb)
{
	return account(skb, ICS_NIC_TX);
}
