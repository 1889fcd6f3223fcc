// SPDX-License-Identifier: GPL-2.0
/*
 * Frame integrity: the CRC32C of a frame (wire-format.rst, "Integrity").
 *
 * Every byte of every frame passes through here twice (sender and
 * receiver), so it goes through the crypto API's "crc32c", whose
 * implementations use the CPU's instructions where it has them
 * (crc32c-intel: SSE4.2's CRC32, PCLMULQDQ for long buffers; ARMv8's CRC
 * instructions), loaded on first use; on 6.1 and 6.12 the library's
 * __crc32c_le() is the table-driven software loop only.
 *
 * The crypto API ranks implementations by a static priority, which is
 * right on hardware but not always on what runs us: under an emulator
 * (qemu's TCG) the "fast" instructions are emulated, and the software loop
 * is faster. So at load, like the RAID6 and XOR code, we time each
 * implementation on a few kilobytes and keep the fastest; the log says
 * which. The transform is shared: a shash tfm is reentrant, each call
 * keeps its state in a descriptor on its own stack.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/hash.h>
#include <linux/ktime.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

#include "ics.h"

#define ICS_CRC_TEST_LEN	4096
#define ICS_CRC_TEST_ROUNDS	16

static struct crypto_shash *ics_crc_tfm __read_mostly;

/* Nanoseconds @tfm takes for ICS_CRC_TEST_ROUNDS CRCs of @buf. */
static u64 ics_crc_time(struct crypto_shash *tfm, const u8 *buf)
{
	SHASH_DESC_ON_STACK(desc, tfm);
	u64 t0, best = U64_MAX;
	__le32 out;
	int i, run;

	desc->tfm = tfm;
	for (run = 0; run < 2; run++) {		/* the first run warms up */
		t0 = ktime_get_ns();
		for (i = 0; i < ICS_CRC_TEST_ROUNDS; i++)
			crypto_shash_digest(desc, buf, ICS_CRC_TEST_LEN, (u8 *)&out);
		best = min(best, ktime_get_ns() - t0);
	}
	return best ?: 1;
}

int __init ics_crc_init(void)
{
	/* The default (highest priority) first, then the software loop. */
	static const char * const names[] = { "crc32c", "crc32c-generic" };
	struct crypto_shash *tfm, *best = NULL;
	u64 t, best_t = U64_MAX, first_t = 0;
	u8 *buf;
	int i;

	buf = kmalloc(ICS_CRC_TEST_LEN, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < ICS_CRC_TEST_LEN; i++)
		buf[i] = i * 31 + 7;
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		tfm = crypto_alloc_shash(names[i], 0, 0);
		if (IS_ERR(tfm))
			continue;
		if (crypto_shash_digestsize(tfm) != sizeof(u32)) {
			crypto_free_shash(tfm);
			continue;
		}
		if (best && !strcmp(crypto_shash_driver_name(tfm),
				    crypto_shash_driver_name(best))) {
			crypto_free_shash(tfm);	/* the default was this one */
			continue;
		}
		t = ics_crc_time(tfm, buf);
		if (!first_t)
			first_t = t;
		if (t < best_t) {
			if (best)
				crypto_free_shash(best);
			best = tfm;
			best_t = t;
		} else {
			crypto_free_shash(tfm);
		}
	}
	kfree(buf);
	if (!best) {
		pr_err("no crc32c transform (CONFIG_CRYPTO_CRC32C)\n");
		return -ENOENT;
	}
	ics_crc_tfm = best;
	pr_info("crc32c by %s, %llu MB/s (the default measured %llu MB/s)\n",
		crypto_shash_driver_name(best),
		div64_u64((u64)ICS_CRC_TEST_LEN * ICS_CRC_TEST_ROUNDS * 1000, best_t),
		div64_u64((u64)ICS_CRC_TEST_LEN * ICS_CRC_TEST_ROUNDS * 1000, first_t));
	return 0;
}

void ics_crc_exit(void)
{
	crypto_free_shash(ics_crc_tfm);
}

/* The implementation in use, for ICS_CMD_GET_INSTANCE. */
const char *ics_crc_driver(void)
{
	return crypto_shash_driver_name(ics_crc_tfm);
}

/*
 * CRC32C of the frame at @skb->data from Ethernet source @src: @src, the
 * header with its check field taken as 0, then @len payload bytes; the
 * value for ics_wire_hdr.check (host order). The source is covered so that
 * a bit flipped in it (a NIC or software path past the FCS) is a corrupt
 * frame, not a frame from another station. The header must be linear; the
 * payload may be in page fragments (a frame built on a message's pages, or
 * one a NIC or veth delivered so), which are read where they are, not
 * copied.
 */
u32 ics_frame_crc(struct sk_buff *skb, const u8 *src, unsigned int len)
{
	static const u8 zero[sizeof_field(struct ics_wire_hdr, check)];
	SHASH_DESC_ON_STACK(desc, ics_crc_tfm);
	struct skb_seq_state st;
	unsigned int n, done;
	const u8 *data;
	__le32 crc;

	desc->tfm = ics_crc_tfm;
	/* crc32c cannot fail: no keys, no allocation, synchronous. */
	crypto_shash_init(desc);
	crypto_shash_update(desc, src, ETH_ALEN);
	crypto_shash_update(desc, skb->data, offsetof(struct ics_wire_hdr, check));
	crypto_shash_update(desc, zero, sizeof(zero));
	crypto_shash_update(desc, skb->data + offsetofend(struct ics_wire_hdr, check),
			    ICS_HDR_LEN - offsetofend(struct ics_wire_hdr, check));
	if (skb_headlen(skb) >= ICS_HDR_LEN + len) {
		crypto_shash_update(desc, skb->data + ICS_HDR_LEN, len);
	} else {
		/* Maps each page in turn; a block may run past the end. */
		skb_prepare_seq_read(skb, ICS_HDR_LEN, ICS_HDR_LEN + len, &st);
		for (done = 0; done < len && (n = skb_seq_read(done, &data, &st)); done += n) {
			n = min(n, len - done);
			crypto_shash_update(desc, data, n);
		}
		skb_abort_seq_read(&st);
	}
	crypto_shash_final(desc, (u8 *)&crc);
	return le32_to_cpu(crc);
}
