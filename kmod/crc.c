// SPDX-License-Identifier: GPL-2.0
/*
 * Frame integrity: the CRC32C of a frame (wire-format.rst, "Integrity").
 *
 * Every byte of every frame passes through here twice (sender and
 * receiver), so it goes through the crypto API's "crc32c", which picks the
 * fastest implementation the CPU has (crc32c-intel: the SSE4.2 CRC32
 * instruction, PCLMULQDQ for long buffers; ARMv8's CRC instructions), and
 * loads it on first use. On 6.1 and 6.12 the library's __crc32c_le() is
 * the table-driven software loop only, several times slower. The transform
 * is allocated once at module load and shared: a shash tfm is reentrant,
 * each call keeps its state in a descriptor on its own stack.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/hash.h>

#include "ics.h"

static struct crypto_shash *ics_crc_tfm __read_mostly;

int __init ics_crc_init(void)
{
	struct crypto_shash *tfm = crypto_alloc_shash("crc32c", 0, 0);

	if (IS_ERR(tfm)) {
		pr_err("no crc32c transform (CONFIG_CRYPTO_CRC32C): %ld\n", PTR_ERR(tfm));
		return PTR_ERR(tfm);
	}
	if (crypto_shash_digestsize(tfm) != sizeof(u32)) {
		crypto_free_shash(tfm);
		return -EINVAL;
	}
	ics_crc_tfm = tfm;
	pr_debug("crc32c by %s\n", crypto_shash_driver_name(tfm));
	return 0;
}

void ics_crc_exit(void)
{
	crypto_free_shash(ics_crc_tfm);
}

/*
 * CRC32C of the header with its check field taken as 0, then @len payload
 * bytes at @payload: the value for ics_wire_hdr.check (host order).
 */
u32 ics_frame_crc(const struct ics_wire_hdr *h, const void *payload, unsigned int len)
{
	static const u8 zero[sizeof(h->check)];
	SHASH_DESC_ON_STACK(desc, ics_crc_tfm);
	__le32 crc;

	desc->tfm = ics_crc_tfm;
	/* crc32c cannot fail: no keys, no allocation, synchronous. */
	crypto_shash_init(desc);
	crypto_shash_update(desc, (const u8 *)h, offsetof(struct ics_wire_hdr, check));
	crypto_shash_update(desc, zero, sizeof(zero));
	crypto_shash_update(desc, payload, len);
	crypto_shash_final(desc, (u8 *)&crc);
	return le32_to_cpu(crc);
}
