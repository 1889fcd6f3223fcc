// SPDX-License-Identifier: GPL-2.0
/*
 * Frame authentication with a cluster key: the primitives.
 *
 * The tag of a frame is that of the RFC 8439 AEAD (ChaCha20-Poly1305)
 * with the frame as associated data and an empty plaintext: the one-time
 * Poly1305 key is the first half of ChaCha20 block 0 under the sender's
 * key and the nonce (destination node, counter), and Poly1305 runs over
 * the associated data, its padding to 16 bytes and the two lengths. Any
 * RFC 8439 implementation gives the same tag, which is what the known
 * answers below check. Nothing is encrypted, so a frame's payload stays
 * where it is (a message's pages, a NIC's fragments) and is read once,
 * without a copy, like the CRC (crc.c).
 *
 * Built from parts rather than with the AEAD of the crypto API or of
 * lib/crypto: the library's associated data must be one linear buffer,
 * and both AEADs write into the data they cover. ChaCha20's block
 * function is in every kernel image (chacha_block_generic()); Poly1305
 * comes from the crypto API ("poly1305", the x86 SIMD code where loaded),
 * loaded at first use as crc32c is, so ics.ko needs no symbol of a module
 * that insmod would not resolve. A shash tfm is reentrant: each call keeps
 * its state on its own stack, so a tag can be made in any context.
 *
 * Sender keys are derived from the cluster key with keyed BLAKE2s (a PRF,
 * sound as a KDF for a uniformly random 32-byte key), and a receiver
 * drops a counter it has seen, or one too old to tell, with a sliding
 * window after RFC 6479 (as WireGuard's counter_validate()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/blake2s.h>
#include <crypto/chacha.h>
#include <crypto/hash.h>
#include <crypto/poly1305.h>
#include <linux/skbuff.h>
#include <linux/string.h>

#include "ics.h"

static struct crypto_shash *ics_poly_tfm __read_mostly;

/*
 * The tag over @hdr (@hdr_len linear bytes) and then @len bytes of @skb
 * from @off (any of them in page fragments), under @key, for @dst and
 * @ctr. @skb may be NULL when @len is 0.
 */
void ics_auth_tag(const u8 key[ICS_AUTH_KEY_LEN], u32 dst, u64 ctr, const u8 *hdr,
		  unsigned int hdr_len, const struct sk_buff *skb, unsigned int off,
		  unsigned int len, u8 tag[ICS_AUTH_TAG_LEN])
{
	static const u8 zero[POLY1305_BLOCK_SIZE];
	SHASH_DESC_ON_STACK(desc, ics_poly_tfm);
	u32 state[CHACHA_STATE_WORDS], k[CHACHA_KEY_SIZE / sizeof(u32)];
	u8 block[CHACHA_BLOCK_SIZE], iv[CHACHA_IV_SIZE];
	struct skb_seq_state st;
	unsigned int n, done, ad = hdr_len + len;
	const u8 *data;
	__le64 lens[2];
	int i;

	for (i = 0; i < ARRAY_SIZE(k); i++)
		k[i] = get_unaligned_le32(key + i * sizeof(u32));
	/* Block counter 0, then the 96-bit nonce: destination, counter. */
	put_unaligned_le32(0, iv);
	put_unaligned_le32(dst, iv + 4);
	put_unaligned_le64(ctr, iv + 8);
	chacha_init_generic(state, k, iv);
	chacha20_block(state, block);

	desc->tfm = ics_poly_tfm;
	/* poly1305 has no setkey: its first 32 bytes of input are the key. */
	crypto_shash_init(desc);
	crypto_shash_update(desc, block, POLY1305_KEY_SIZE);
	crypto_shash_update(desc, hdr, hdr_len);
	if (len) {
		skb_prepare_seq_read((struct sk_buff *)skb, off, off + len, &st);
		for (done = 0; done < len && (n = skb_seq_read(done, &data, &st)); done += n) {
			n = min(n, len - done);
			crypto_shash_update(desc, data, n);
		}
		skb_abort_seq_read(&st);
	}
	crypto_shash_update(desc, zero, -ad & (POLY1305_BLOCK_SIZE - 1));
	lens[0] = cpu_to_le64(ad);
	lens[1] = 0;	/* no ciphertext */
	crypto_shash_update(desc, (const u8 *)lens, sizeof(lens));
	crypto_shash_final(desc, tag);

	memzero_explicit(block, sizeof(block));
	memzero_explicit(state, sizeof(state));
	memzero_explicit(k, sizeof(k));
	shash_desc_zero(desc);
}

/*
 * A sender's key: keyed BLAKE2s of the cluster key @ck (slot @id) over
 * the sender's node id, incarnation and per-binding @salt, so that no two
 * bindings, before or after a restart, share a key and so a nonce.
 */
void ics_auth_derive(const u8 ck[ICS_AUTH_KEY_LEN], u8 id, u32 node, u32 inc, u64 salt,
		     u8 out[ICS_AUTH_KEY_LEN])
{
	static const char label[] = "ics frame key";
	u8 msg[sizeof(label) - 1 + 1 + 4 + 4 + 8], *p = msg;

	memcpy(p, label, sizeof(label) - 1);
	p += sizeof(label) - 1;
	*p++ = id;
	put_unaligned_le32(node, p);
	put_unaligned_le32(inc, p + 4);
	put_unaligned_le64(salt, p + 8);
	blake2s(out, msg, ck, ICS_AUTH_KEY_LEN, sizeof(msg), ICS_AUTH_KEY_LEN);
}

/*
 * Whether counter @ctr is new to @r (and now seen): not 0, not seen
 * before, not more than ICS_REPLAY_WINDOW behind the highest seen. The
 * caller holds the lock of what @r belongs to, and calls this only for a
 * frame whose tag checked, so a forged frame cannot move the window.
 */
bool ics_replay_check(struct ics_replay *r, u64 ctr)
{
	const unsigned long words = ARRAY_SIZE(r->bits);
	unsigned long index, cur, i, n;

	if (!ctr || ctr >= ICS_AUTH_CTR_LIMIT || ctr + ICS_REPLAY_WINDOW < r->top)
		return false;
	index = ctr / BITS_PER_LONG;
	if (ctr > r->top) {
		/* Clear the words between the old top and the new one. */
		cur = r->top / BITS_PER_LONG;
		n = min(index - cur, words);
		for (i = 1; i <= n; i++)
			r->bits[(cur + i) & (words - 1)] = 0;
		r->top = ctr;
	}
	return !__test_and_set_bit(ctr & (BITS_PER_LONG - 1), &r->bits[index & (words - 1)]);
}

/*
 * Known answers at load. The tags are those of RFC 8439's AEAD with an
 * empty plaintext (computed with an independent implementation, OpenSSL's
 * through python3-cryptography): RFC 8439 section 2.8.2's key, nonce and
 * associated data; and 100 bytes 0..99 for node 2, counter 1, the first
 * 56 linear (a header) and the rest split over the skb's head and two page
 * fragments, one ending a page. BLAKE2s: keyed, key 0..31, input 0..15.
 */
static int __init ics_auth_selftest_tags(void)
{
	static const u8 ad1[] = { 0x50, 0x51, 0x52, 0x53, 0xc0, 0xc1, 0xc2, 0xc3,
				  0xc4, 0xc5, 0xc6, 0xc7 };
	static const u8 tag1[ICS_AUTH_TAG_LEN] = {
		0xe6, 0x22, 0xe5, 0x64, 0x7a, 0x38, 0xd9, 0x67,
		0xa7, 0xec, 0xbc, 0xb4, 0x6c, 0x7f, 0x67, 0x5c };
	static const u8 tag2[ICS_AUTH_TAG_LEN] = {
		0x5f, 0x18, 0x3e, 0x56, 0x67, 0xb7, 0xd2, 0x35,
		0xcb, 0x35, 0x58, 0x87, 0x76, 0x20, 0xe6, 0x6d };
	static const u8 b2s[BLAKE2S_HASH_SIZE] = {
		0x19, 0xba, 0x23, 0x4f, 0x0a, 0x4f, 0x38, 0x63,
		0x7d, 0x18, 0x39, 0xf9, 0xd9, 0xf7, 0x6a, 0xd9,
		0x1c, 0x85, 0x22, 0x30, 0x71, 0x43, 0xc9, 0x7d,
		0x5f, 0x93, 0xf6, 0x92, 0x74, 0xce, 0xc9, 0xa7 };
	u8 key[ICS_AUTH_KEY_LEN], bytes[100], tag[ICS_AUTH_TAG_LEN], out[BLAKE2S_HASH_SIZE];
	struct page *pg[2] = {};
	struct sk_buff *skb;
	int i, err = -EINVAL;

	for (i = 0; i < sizeof(key); i++)
		key[i] = 0x80 + i;
	for (i = 0; i < sizeof(bytes); i++)
		bytes[i] = i;
	/* nonce 07000000 4041424344454647: node 7, counter 0x4746454443424140 */
	ics_auth_tag(key, 7, 0x4746454443424140ULL, ad1, sizeof(ad1), NULL, 0, 0, tag);
	if (memcmp(tag, tag1, sizeof(tag))) {
		pr_err("auth: RFC 8439 2.8.2 tag differs\n");
		return -EINVAL;
	}

	skb = alloc_skb(64, GFP_KERNEL);
	pg[0] = alloc_page(GFP_KERNEL);
	pg[1] = alloc_page(GFP_KERNEL);
	if (!skb || !pg[0] || !pg[1]) {
		err = -ENOMEM;
		goto out;
	}
	skb_put_data(skb, bytes + 56, 10);
	memcpy(page_address(pg[0]) + PAGE_SIZE - 14, bytes + 66, 14);
	memcpy(page_address(pg[1]), bytes + 80, 20);
	skb_fill_page_desc(skb, 0, pg[0], PAGE_SIZE - 14, 14);
	skb_fill_page_desc(skb, 1, pg[1], 0, 20);
	pg[0] = pg[1] = NULL;	/* the skb's now */
	skb->len += 34;
	skb->data_len += 34;
	ics_auth_tag(key, 2, 1, bytes, 56, skb, 0, 44, tag);
	if (memcmp(tag, tag2, sizeof(tag))) {
		pr_err("auth: tag over page fragments differs\n");
		goto out;
	}

	for (i = 0; i < sizeof(key); i++)
		key[i] = i;
	blake2s(out, bytes, key, sizeof(out), 16, sizeof(key));
	if (memcmp(out, b2s, sizeof(out))) {
		pr_err("auth: keyed BLAKE2s differs\n");
		goto out;
	}
	err = 0;
out:
	kfree_skb(skb);
	if (pg[0])
		__free_page(pg[0]);
	if (pg[1])
		__free_page(pg[1]);
	return err;
}

/* The replay window against a script: each counter, and whether it passes. */
static int __init ics_auth_selftest_replay(void)
{
	static const struct { u64 ctr; bool ok; } script[] = {
		{ 0, false }, { 1, true }, { 1, false }, { 3, true }, { 2, true },
		{ 2, false }, { 3, false }, { 100, true }, { 99, true }, { 100, false },
		{ 100 + ICS_REPLAY_WINDOW, true }, { 99, false }, { 100, false },
		{ 101, true }, { 101, false },
		{ 100 + 3 * ICS_REPLAY_WINDOW, true }, { 99 + 2 * ICS_REPLAY_WINDOW, false },
		{ 100 + 2 * ICS_REPLAY_WINDOW, true }, { 99 + 3 * ICS_REPLAY_WINDOW, true },
		{ ICS_AUTH_CTR_LIMIT - 1, true }, { ICS_AUTH_CTR_LIMIT, false },
		{ ICS_AUTH_CTR_LIMIT - 1, false }, { ICS_AUTH_CTR_LIMIT - 2, true },
	};
	struct ics_replay *r;
	int i, err = 0;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	for (i = 0; i < ARRAY_SIZE(script); i++) {
		if (ics_replay_check(r, script[i].ctr) != script[i].ok) {
			pr_err("auth: replay window, step %d (counter %llu): %s\n", i,
			       script[i].ctr, script[i].ok ? "refused" : "passed");
			err = -EINVAL;
			break;
		}
	}
	kfree(r);
	return err;
}

int __init ics_auth_init(void)
{
	int err;

	ics_poly_tfm = crypto_alloc_shash("poly1305", 0, 0);
	if (IS_ERR(ics_poly_tfm)) {
		err = PTR_ERR(ics_poly_tfm);
		pr_err("no poly1305 transform (CONFIG_CRYPTO_POLY1305): %d\n", err);
		return err;
	}
	err = ics_auth_selftest_tags() ?: ics_auth_selftest_replay();
	if (err)
		crypto_free_shash(ics_poly_tfm);
	return err;
}

void ics_auth_exit(void)
{
	crypto_free_shash(ics_poly_tfm);
}
