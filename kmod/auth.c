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
#include <crypto/algapi.h>	/* crypto_memneq() on 6.1 and 6.12 */
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/string.h>

#include "ics.h"

static struct crypto_shash *ics_poly_tfm __read_mostly;

static int ics_auth_tag_tfm(struct crypto_shash *tfm, const u8 key[ICS_AUTH_KEY_LEN], u32 dst,
			    u64 ctr, const u8 *hdr, unsigned int hdr_len,
			    const struct sk_buff *skb, unsigned int off, unsigned int len,
			    u8 tag[ICS_AUTH_TAG_LEN])
{
	static const u8 zero[POLY1305_BLOCK_SIZE];
	SHASH_DESC_ON_STACK(desc, tfm);
	u32 state[CHACHA_STATE_WORDS], k[CHACHA_KEY_SIZE / sizeof(u32)];
	u8 block[CHACHA_BLOCK_SIZE], iv[CHACHA_IV_SIZE];
	struct skb_seq_state st;
	unsigned int n, done = 0, ad = hdr_len + len;
	const u8 *data;
	__le64 lens[2];
	int i, err;

	for (i = 0; i < ARRAY_SIZE(k); i++)
		k[i] = get_unaligned_le32(key + i * sizeof(u32));
	/* Block counter 0, then the 96-bit nonce: destination, counter. */
	put_unaligned_le32(0, iv);
	put_unaligned_le32(dst, iv + 4);
	put_unaligned_le64(ctr, iv + 8);
	chacha_init_generic(state, k, iv);
	chacha20_block(state, block);

	desc->tfm = tfm;
	/* poly1305 has no setkey: its first 32 bytes of input are the key. */
	err = crypto_shash_init(desc) ?:
	      crypto_shash_update(desc, block, POLY1305_KEY_SIZE) ?:
	      crypto_shash_update(desc, hdr, hdr_len);
	if (!err && len) {
		/* Maps each page in turn; a chunk may run past the end. */
		skb_prepare_seq_read((struct sk_buff *)skb, off, off + len, &st);
		for (; !err && done < len && (n = skb_seq_read(done, &data, &st)); done += n) {
			n = min(n, len - done);
			err = crypto_shash_update(desc, data, n);
		}
		skb_abort_seq_read(&st);
		/* A short skb, or a fragment we may not read: no tag. */
		if (!err && done != len)
			err = -EFAULT;
	}
	lens[0] = cpu_to_le64(ad);
	lens[1] = 0;	/* no ciphertext */
	if (!err)
		err = crypto_shash_update(desc, zero, -ad & (POLY1305_BLOCK_SIZE - 1)) ?:
		      crypto_shash_update(desc, (const u8 *)lens, sizeof(lens)) ?:
		      crypto_shash_final(desc, tag);

	memzero_explicit(block, sizeof(block));
	memzero_explicit(state, sizeof(state));
	memzero_explicit(k, sizeof(k));
	shash_desc_zero(desc);
	return err;
}

/*
 * The tag over @hdr (@hdr_len linear bytes) and then @len bytes of @skb
 * from @off (any of them in page fragments), under @key, for @dst and
 * @ctr: 0, or an error (no transform, or @skb shorter than @off + @len),
 * and then no tag. @skb may be NULL when @len is 0.
 */
int ics_auth_tag(const u8 key[ICS_AUTH_KEY_LEN], u32 dst, u64 ctr, const u8 *hdr,
		 unsigned int hdr_len, const struct sk_buff *skb, unsigned int off,
		 unsigned int len, u8 tag[ICS_AUTH_TAG_LEN])
{
	if (!ics_poly_tfm)
		return -EOPNOTSUPP;
	return ics_auth_tag_tfm(ics_poly_tfm, key, dst, ctr, hdr, hdr_len, skb, off, len, tag);
}

/* Whether this kernel can authenticate frames (a poly1305 transform). */
bool ics_auth_available(void)
{
	return ics_poly_tfm;
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
 * first counter a window sees stands for all those before it: a receiver
 * that starts listening late (a new binding of ours, a sender's claim)
 * cannot tell which of them it missed and which a recording replays. The
 * caller holds the lock of what @r belongs to, and calls this only for a
 * frame whose tag checked, so a forged frame cannot move the window.
 */
bool ics_replay_check(struct ics_replay *r, u64 ctr)
{
	const unsigned long words = ARRAY_SIZE(r->bits);
	u64 index, cur, i, n;

	BUILD_BUG_ON(!is_power_of_2(ARRAY_SIZE(r->bits)));
	if (!ctr || ctr >= ICS_AUTH_CTR_LIMIT || ctr + ICS_REPLAY_WINDOW < r->top)
		return false;
	index = ctr / BITS_PER_LONG;
	if (!r->top) {
		memset(r->bits, 0xff, sizeof(r->bits));
		r->bits[index & (words - 1)] = GENMASK(ctr & (BITS_PER_LONG - 1), 0);
		r->top = ctr;
		return true;
	}
	if (ctr > r->top) {
		/* Clear the words between the old top and the new one. */
		cur = r->top / BITS_PER_LONG;
		n = min_t(u64, index - cur, words);
		for (i = 1; i <= n; i++)
			r->bits[(cur + i) & (words - 1)] = 0;
		r->top = ctr;
	}
	return !__test_and_set_bit(ctr & (BITS_PER_LONG - 1), &r->bits[index & (words - 1)]);
}

/* RCU: installed key @id of @in, or NULL. */
static const struct ics_key *ics_key_find(struct ics_net *in, u8 id)
{
	const struct ics_key *k;
	int i;

	for (i = 0; i < ICS_KEYS_MAX; i++) {
		k = rcu_dereference(in->keys[i]);
		if (k && k->id == id)
			return k;
	}
	return NULL;
}

static u64 ics_hdr_ctr(const struct ics_wire_hdr *h)
{
	return (u64)ntohs(h->ctr_hi) << 32 | ntohl(h->ctr_lo);
}

/*
 * The associated data's linear part: the Ethernet source @src (so that a
 * frame replayed from another station does not check), zeroes to a
 * Poly1305 block, and the header up to the tag with check 0.
 */
#define ICS_AUTH_AD_PRE		16
#define ICS_AUTH_AD_LEN		(ICS_AUTH_AD_PRE + ICS_AUTH_AD_HDR)

static void ics_auth_ad(u8 ad[ICS_AUTH_AD_LEN], const u8 *src, const struct ics_wire_hdr *h)
{
	memset(ad, 0, ICS_AUTH_AD_PRE);
	ether_addr_copy(ad, src);
	memcpy(ad + ICS_AUTH_AD_PRE, h, ICS_AUTH_AD_HDR);
	((struct ics_wire_hdr *)(ad + ICS_AUTH_AD_PRE))->check = 0;
}

static void ics_txkey_free_rcu(struct rcu_head *head)
{
	kfree_sensitive(container_of(head, struct ics_txkey, rcu));
}

/*
 * Derive the sender key of key_tx for our binding @b (NULL: unbound) once,
 * rather than for every frame; a frame signed while it is replaced, or
 * without one (no memory), derives its own. RTNL.
 */
void ics_auth_txkey_update(struct ics_net *in, const struct ics_bind *b)
{
	struct ics_txkey *t = NULL, *old;
	const struct ics_key *k;

	ASSERT_RTNL();
	if (in->key_tx && b)
		t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	if (t) {
		rcu_read_lock();
		k = ics_key_find(in, in->key_tx);
		if (k) {
			ics_auth_derive(k->key, k->id, b->node_id, b->incarnation, b->salt, t->sk);
			t->gen = k->gen;
		}
		rcu_read_unlock();
		t->id = in->key_tx;
		t->inc = b->incarnation;
		t->salt = b->salt;
		if (!k) {
			kfree_sensitive(t);
			t = NULL;
		}
	}
	old = rtnl_dereference(in->txk);
	rcu_assign_pointer(in->txk, t);
	if (old)
		call_rcu(&old->rcu, ics_txkey_free_rcu);
}

/*
 * Sign the frame @skb (its header at skb->data, check 0, the payload
 * after it), to be sent from @src, with the key in use, if the mode says
 * so: key id, counter and tag into the header (ics_frame_alloc() wrote
 * the salt). The counter is per destination (each peer's, or the
 * broadcast one), so a receiver's window sees every value meant for it,
 * in the order sent. 0, or an error: the frame must not go.
 */
int ics_auth_sign(struct ics_bind *b, struct sk_buff *skb, const u8 *src)
{
	struct ics_wire_hdr *h = (struct ics_wire_hdr *)skb->data;
	u8 id, sk[ICS_AUTH_KEY_LEN], ad[ICS_AUTH_AD_LEN] __aligned(8);
	struct ics_net *in = b->in;
	const struct ics_txkey *t;
	const struct ics_key *k;
	struct ics_peer *p;
	atomic64_t *ctr;
	u64 c;
	int err = -ENOKEY;

	if (READ_ONCE(in->auth_mode) == ICS_AUTH_OFF)
		return 0;
	rcu_read_lock();
	id = READ_ONCE(in->key_tx);
	if (!id) {
		rcu_read_unlock();
		return 0;
	}
	k = ics_key_find(in, id);
	if (!k) {
		/* KEY_USE then KEY_DEL of the old key since we read key_tx */
		id = READ_ONCE(in->key_tx);
		k = id ? ics_key_find(in, id) : NULL;
	}
	if (h->dst_node == ICS_NODE_BROADCAST) {
		ctr = &b->bcast_ctr;
	} else {
		p = rcu_dereference(b->peers[h->dst_node]);
		ctr = p ? &p->tx_ctr : NULL;
	}
	if (k && ctr) {
		c = atomic64_inc_return(ctr);
		if (c < ICS_AUTH_CTR_LIMIT) {
			h->key_id = id;
			h->ctr_hi = htons(c >> 32);
			h->ctr_lo = htonl((u32)c);
			ics_auth_ad(ad, src, h);
			t = rcu_dereference(in->txk);
			if (t && t->id == id && t->gen == k->gen && t->inc == b->incarnation &&
			    t->salt == b->salt)
				memcpy(sk, t->sk, sizeof(sk));
			else
				ics_auth_derive(k->key, id, b->node_id, b->incarnation, b->salt,
						sk);
			err = ics_auth_tag(sk, h->dst_node, c, ad, sizeof(ad), skb,
					   ICS_HDR_LEN, skb->len - ICS_HDR_LEN, h->tag);
			memzero_explicit(sk, sizeof(sk));
		} else {
			atomic64_set(ctr, ICS_AUTH_CTR_LIMIT);	/* spent: stays so */
		}
	}
	rcu_read_unlock();
	return err;
}

/*
 * The sender key of @p's binding (@inc, @salt) under @k: copied from the
 * cache into @sk if it holds it (true), or stored from @sk (@store), once
 * a tag checked and only for the binding membership confirmed: neither a
 * forgery nor a replay of another binding evicts it (a claim's frames
 * derive their key until it is confirmed). Takes replay_lock; the peer is
 * only read, never created.
 */
static bool ics_auth_rxkey(struct ics_peer *p, const struct ics_key *k, u32 inc, u64 salt,
			   u8 sk[ICS_AUTH_KEY_LEN], bool store)
{
	bool hit = false;

	spin_lock(&p->replay_lock);
	if (store) {
		if (inc != p->rp_cur.inc || salt != p->rp_cur.salt)
			goto out;
		p->rxk.gen = k->gen;
		p->rxk.inc = inc;
		p->rxk.salt = salt;
		memcpy(p->rxk.sk, sk, ICS_AUTH_KEY_LEN);
	} else if (p->rxk.gen == k->gen && p->rxk.inc == inc && p->rxk.salt == salt) {
		memcpy(sk, p->rxk.sk, ICS_AUTH_KEY_LEN);
		hit = true;
	}
out:
	spin_unlock(&p->replay_lock);
	return hit;
}

/*
 * Key @gen was deleted: wipe the peers' sender keys derived from it (they
 * could not match again, but a deleted key leaves nothing behind). RTNL,
 * after a grace period since it was unpublished.
 */
void ics_auth_forget(struct ics_net *in, u64 gen)
{
	struct ics_bind *b = rtnl_dereference(in->bind);
	struct ics_peer *p;
	int node;

	if (!b)
		return;
	rcu_read_lock();
	for (node = 1; node <= ICS_MAX_NODES; node++) {
		p = rcu_dereference(b->peers[node]);
		if (!p)
			continue;
		spin_lock_bh(&p->replay_lock);
		if (p->rxk.gen == gen)
			memzero_explicit(&p->rxk, sizeof(p->rxk));
		spin_unlock_bh(&p->replay_lock);
	}
	rcu_read_unlock();
}

/*
 * Receive, before anything but the frame's length, checksum and the
 * stateless header checks believes the header: whether the frame (header
 * at skb->data, linear, @frag_len payload bytes after it) may go on, or
 * what to count. A signed frame is checked with the key it names if we
 * hold it (in any mode: a key we hold is never ignored); one we cannot
 * check, or an unsigned one, passes only while the mode allows it.
 * *@checked: the frame passed with a tag we checked (its counter then
 * goes through ics_auth_fresh()).
 */
enum ics_stat ics_auth_check(struct ics_bind *b, const struct sk_buff *skb, u32 frag_len,
			     bool *checked)
{
	const struct ics_wire_hdr *h = (const struct ics_wire_hdr *)skb->data;
	u8 mode = READ_ONCE(b->in->auth_mode), sk[ICS_AUTH_KEY_LEN], tag[ICS_AUTH_TAG_LEN];
	u8 ad[ICS_AUTH_AD_LEN] __aligned(8);
	u64 salt = get_unaligned_be64(h->salt);
	u32 inc = ntohl(h->incarnation);
	const struct ics_key *k;
	enum ics_stat bad = 0;
	struct ics_peer *p;
	bool cached;

	BUILD_BUG_ON(offsetof(struct ics_wire_hdr, tag) != ICS_AUTH_AD_HDR);
	BUILD_BUG_ON(sizeof_field(struct ics_wire_hdr, tag) != ICS_AUTH_TAG_LEN);
	/* It follows a 14-byte Ethernet header: 4-byte fields at most. */
	BUILD_BUG_ON(__alignof__(struct ics_wire_hdr) > 4);
	*checked = false;
	if (!h->key_id) {
		if (h->auth_flags || h->ctr_hi || h->ctr_lo || memchr_inv(h->tag, 0, sizeof(h->tag)))
			return ICS_STAT_RX_AUTH_BAD;
		return mode == ICS_AUTH_REQUIRE ? ICS_STAT_RX_NO_KEY : 0;
	}
	if (h->auth_flags)
		return ICS_STAT_RX_AUTH_BAD;
	rcu_read_lock();
	k = ics_key_find(b->in, h->key_id);
	if (!k) {
		bad = mode == ICS_AUTH_OFF ? 0 : ICS_STAT_RX_NO_KEY;
	} else {
		ics_auth_ad(ad, eth_hdr(skb)->h_source, h);
		p = rcu_dereference(b->peers[h->src_node]);
		cached = p && ics_auth_rxkey(p, k, inc, salt, sk, false);
		if (!cached)
			ics_auth_derive(k->key, h->key_id, h->src_node, inc, salt, sk);
		if (ics_auth_tag(sk, h->dst_node, ics_hdr_ctr(h), ad, sizeof(ad), skb,
				 ICS_HDR_LEN, frag_len, tag) ||
		    crypto_memneq(tag, h->tag, sizeof(tag))) {
			bad = ICS_STAT_RX_AUTH_BAD;
		} else {
			*checked = true;
			/* only a key that checked (see ics_auth_rxkey()) */
			if (p && !cached)
				ics_auth_rxkey(p, k, inc, salt, sk, true);
		}
		memzero_explicit(sk, sizeof(sk));
	}
	rcu_read_unlock();
	return bad;
}

#define ICS_AUTH_CLAIM_HOLD_NS	(2ULL * NSEC_PER_SEC)	/* ics_auth_fresh() */

/*
 * After ics_auth_check() passed a frame signed with a key we hold, and
 * the frame's peer @p is known: 0 if its counter is new, else what to
 * count. Counters belong to one binding of the sender (its incarnation
 * and salt). Those of the binding membership confirmed are checked in
 * rp_cur; a heartbeat of another binding (a claim, or a replay of an
 * older one: membership tells them apart, member.c) in rp_claim, which
 * starts afresh for each new one and becomes rp_cur when membership
 * confirms it (ics_auth_confirm()). Any other frame of another binding is
 * a leftover, or a frame of a node that is not a member yet. No confirmed
 * binding is preferred for its incarnation, so a node restarted with its
 * clock set back is not locked out; a claim is not replaced in its first
 * ICS_AUTH_CLAIM_HOLD_NS. replay_lock; the receive path.
 */
enum ics_stat ics_auth_fresh(struct ics_peer *p, const struct ics_wire_hdr *h)
{
	u32 inc = ntohl(h->incarnation);
	u64 salt = get_unaligned_be64(h->salt);
	struct ics_replay_ctx *r = &p->rp_cur;
	u64 now = ktime_get_ns();
	enum ics_stat bad = 0;

	spin_lock(&p->replay_lock);
	if (inc != r->inc || salt != r->salt) {
		if (h->type != ICS_FT_HELLO) {
			spin_unlock(&p->replay_lock);
			return ics_live(READ_ONCE(p->state)) ? ICS_STAT_RX_BAD_SESSION :
							       ICS_STAT_RX_PEER_DOWN;
		}
		r = &p->rp_claim;
		if (inc != r->inc || salt != r->salt) {
			/*
			 * A claim keeps its place for the hold from when it
			 * took it: a recording cannot displace the claim of
			 * the node as it is now, whose challenge and answer
			 * take a round trip, well within the hold. Its own
			 * frames do not extend it, so neither can a
			 * recording's: after the hold any claim gives way.
			 */
			if (r->inc && now - r->since_ns < ICS_AUTH_CLAIM_HOLD_NS) {
				spin_unlock(&p->replay_lock);
				return ICS_STAT_RX_BAD_SESSION;
			}
			memset(r, 0, sizeof(*r));
			r->inc = inc;
			r->salt = salt;
			r->since_ns = now;
		}
	}
	if (!ics_replay_check(h->dst_node == ICS_NODE_BROADCAST ? &r->bcast : &r->uni,
			      ics_hdr_ctr(h)))
		bad = ICS_STAT_RX_REPLAY;
	else if (r == &p->rp_cur && p->rx_key != h->key_id)
		WRITE_ONCE(p->rx_key, h->key_id);
	spin_unlock(&p->replay_lock);
	return bad;
}

/*
 * Membership confirmed binding (@inc, @salt) of @p (member.c): its
 * counters seen so far, if it signs, are those of the claim.
 */
void ics_auth_confirm(struct ics_peer *p, u32 inc, u64 salt)
{
	spin_lock(&p->replay_lock);
	if (p->rp_claim.inc == inc && p->rp_claim.salt == salt) {
		p->rp_cur = p->rp_claim;
	} else if (p->rp_cur.inc != inc || p->rp_cur.salt != salt) {
		memset(&p->rp_cur, 0, sizeof(p->rp_cur));
		p->rp_cur.inc = inc;
		p->rp_cur.salt = salt;
	}
	memset(&p->rp_claim, 0, sizeof(p->rp_claim));
	spin_unlock(&p->replay_lock);
}

/*
 * Known answers at load, for each poly1305 driver there is. The tags are
 * those of RFC 8439's AEAD with an empty plaintext (computed with an
 * independent implementation, OpenSSL's through python3-cryptography):
 * 1. RFC 8439 section 2.8.2's key, nonce and associated data;
 * 2. 100 bytes 0..99 for node 2, counter 1, the first 56 linear (a
 *    header), the rest over an skb's head and two page fragments, one
 *    ending a page;
 * 3. key bytes 7i+3, for node 5, counter 0x0102030405, over a 64-byte
 *    header and 1500 bytes (13i+5 from the header's first on) read from
 *    offset 20 of an skb that holds more after them: long enough for the
 *    x86 SIMD code's path (288 bytes or more in one update);
 * 4. the same with 1440 bytes: no padding (64 + 1440 = 94 x 16).
 * BLAKE2s: keyed, key 0..31, input 0..15.
 */
struct ics_auth_kat {
	u8 key[ICS_AUTH_KEY_LEN];
	u8 small[100];
	u8 big[64 + 1500];
};

static int __init ics_auth_kat_tfm(struct crypto_shash *tfm, struct ics_auth_kat *t)
{
	static const u8 ad1[] = { 0x50, 0x51, 0x52, 0x53, 0xc0, 0xc1, 0xc2, 0xc3,
				  0xc4, 0xc5, 0xc6, 0xc7 };
	static const u8 want[4][ICS_AUTH_TAG_LEN] = {
		{ 0xe6, 0x22, 0xe5, 0x64, 0x7a, 0x38, 0xd9, 0x67,
		  0xa7, 0xec, 0xbc, 0xb4, 0x6c, 0x7f, 0x67, 0x5c },
		{ 0x5f, 0x18, 0x3e, 0x56, 0x67, 0xb7, 0xd2, 0x35,
		  0xcb, 0x35, 0x58, 0x87, 0x76, 0x20, 0xe6, 0x6d },
		{ 0x38, 0xd3, 0x2b, 0x93, 0x4d, 0x6d, 0x98, 0x97,
		  0x35, 0x27, 0xa4, 0x6a, 0xb3, 0x85, 0xfe, 0xd1 },
		{ 0x36, 0x8f, 0x35, 0x3d, 0xb1, 0x51, 0x6e, 0x85,
		  0x5f, 0x0c, 0x83, 0x95, 0xa4, 0x53, 0xcf, 0x99 } };
	struct page *pg[2] = {};
	u8 tag[4][ICS_AUTH_TAG_LEN];
	struct sk_buff *skb;
	int i, err = -ENOMEM;

	for (i = 0; i < sizeof(t->key); i++)
		t->key[i] = 0x80 + i;
	/* nonce 07000000 4041424344454647: node 7, counter 0x4746454443424140 */
	err = ics_auth_tag_tfm(tfm, t->key, 7, 0x4746454443424140ULL, ad1, sizeof(ad1), NULL,
			       0, 0, tag[0]);
	if (err)
		return err;

	skb = alloc_skb(256, GFP_KERNEL);
	pg[0] = alloc_page(GFP_KERNEL);
	pg[1] = alloc_page(GFP_KERNEL);
	if (!skb || !pg[0] || !pg[1])
		goto out;
	skb_put_data(skb, t->small + 56, 10);
	memcpy(page_address(pg[0]) + PAGE_SIZE - 14, t->small + 66, 14);
	memcpy(page_address(pg[1]), t->small + 80, 20);
	skb_fill_page_desc(skb, 0, pg[0], PAGE_SIZE - 14, 14);
	skb_fill_page_desc(skb, 1, pg[1], 0, 20);
	skb->len += 34;
	skb->data_len += 34;
	err = ics_auth_tag_tfm(tfm, t->key, 2, 1, t->small, 56, skb, 0, 44, tag[1]);
	if (err)
		goto out;

	/* 20 bytes before, 1500 over head (200) and two fragments, 30 after */
	for (i = 0; i < sizeof(t->key); i++)
		t->key[i] = i * 7 + 3;
	skb_shinfo(skb)->nr_frags = 0;	/* the pages stay ours until the end */
	skb->len = skb->data_len = 0;
	skb_reset_tail_pointer(skb);
	memset(skb_put(skb, 20), 0xee, 20);
	skb_put_data(skb, t->big + 64, 200);
	memcpy(page_address(pg[0]) + 100, t->big + 264, 800);
	memcpy(page_address(pg[1]), t->big + 1064, 500);
	memset(page_address(pg[1]) + 500, 0xee, 30);
	skb_fill_page_desc(skb, 0, pg[0], 100, 800);
	skb_fill_page_desc(skb, 1, pg[1], 0, 530);
	skb->len += 1330;
	skb->data_len += 1330;
	err = ics_auth_tag_tfm(tfm, t->key, 5, 0x0102030405ULL, t->big, 64, skb, 20, 1500,
			       tag[2]) ?:
	      ics_auth_tag_tfm(tfm, t->key, 5, 0x0102030405ULL, t->big, 64, skb, 20, 1440,
			       tag[3]);
	/* 1530 bytes from offset 20: one more is past the end, and must fail */
	if (!err && !ics_auth_tag_tfm(tfm, t->key, 5, 1, t->big, 64, skb, 20, 1531, tag[3])) {
		pr_err("auth: %s: a tag past the skb's end did not fail\n",
		       crypto_shash_driver_name(tfm));
		err = -EINVAL;
	}
	if (err)
		goto out;
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		if (memcmp(tag[i], want[i], ICS_AUTH_TAG_LEN)) {
			pr_err("auth: %s: tag %d differs from its known answer\n",
			       crypto_shash_driver_name(tfm), i + 1);
			err = -EINVAL;
		}
	}
out:
	if (skb)
		skb_shinfo(skb)->nr_frags = 0;
	consume_skb(skb);
	if (pg[0])
		__free_page(pg[0]);
	if (pg[1])
		__free_page(pg[1]);
	return err;
}

static int __init ics_auth_selftest_tags(void)
{
	/* The default (highest priority) first, then each implementation. */
	static const char * const names[] = { "poly1305", "poly1305-generic", "poly1305-simd" };
	static const u8 b2s[BLAKE2S_HASH_SIZE] = {
		0x19, 0xba, 0x23, 0x4f, 0x0a, 0x4f, 0x38, 0x63,
		0x7d, 0x18, 0x39, 0xf9, 0xd9, 0xf7, 0x6a, 0xd9,
		0x1c, 0x85, 0x22, 0x30, 0x71, 0x43, 0xc9, 0x7d,
		0x5f, 0x93, 0xf6, 0x92, 0x74, 0xce, 0xc9, 0xa7 };
	u8 key[ICS_AUTH_KEY_LEN], out[BLAKE2S_HASH_SIZE];
	struct crypto_shash *tfm;
	struct ics_auth_kat *t;
	int i, err = 0;

	t = kmalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	for (i = 0; i < sizeof(t->small); i++)
		t->small[i] = i;
	for (i = 0; i < sizeof(t->big); i++)
		t->big[i] = i * 13 + 5;
	for (i = 0; i < ARRAY_SIZE(names) && !err; i++) {
		tfm = i ? crypto_alloc_shash(names[i], 0, 0) : ics_poly_tfm;
		if (IS_ERR(tfm))
			continue;	/* not on this machine */
		err = ics_auth_kat_tfm(tfm, t);
		if (i)
			crypto_free_shash(tfm);
	}
	kfree(t);
	if (err)
		return err;

	for (i = 0; i < sizeof(key); i++)
		key[i] = i;
	for (i = 0; i < 16; i++)
		out[i] = i;
	blake2s(out, out, key, sizeof(out), 16, sizeof(key));
	if (memcmp(out, b2s, sizeof(out))) {
		pr_err("auth: keyed BLAKE2s differs from its known answer\n");
		return -EINVAL;
	}
	return 0;
}

/* The replay window against a script: each counter, and whether it passes. */
static int __init ics_auth_selftest_replay(void)
{
	static const struct { u64 ctr; bool ok; } script[] = {
		{ 0, false }, { 5, true }, { 4, false }, { 1, false }, { 5, false },
		{ 7, true }, { 6, true }, { 6, false }, { 7, false },
		{ 64, true }, { 63, true }, { 63, false }, { 65, true },
		{ 100, true }, { 99, true }, { 100, false },
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

/*
 * No poly1305 (a kernel booted with fips=1 refuses it, or the module is
 * missing): ics runs without authentication, and says so; a known answer
 * that differs stops the load.
 */
int __init ics_auth_init(void)
{
	int err;

	ics_poly_tfm = crypto_alloc_shash("poly1305", 0, 0);
	if (IS_ERR(ics_poly_tfm)) {
		pr_warn("no poly1305 transform (%ld): frames cannot be authenticated\n",
			PTR_ERR(ics_poly_tfm));
		ics_poly_tfm = NULL;
		return ics_auth_selftest_replay();
	}
	err = ics_auth_selftest_tags() ?: ics_auth_selftest_replay();
	if (err) {
		crypto_free_shash(ics_poly_tfm);
		ics_poly_tfm = NULL;
	}
	return err;
}

void ics_auth_exit(void)
{
	crypto_free_shash(ics_poly_tfm);	/* NULL-safe */
}
