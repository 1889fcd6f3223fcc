// SPDX-License-Identifier: GPL-2.0
/* BLAKE2s, RFC 7693 section 3 and appendix D, one call for the whole input. */
#include <string.h>

#include "blake2s.h"

static const uint32_t iv[8] = {
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

static const uint8_t sigma[10][16] = {
	{ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 },
	{ 14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3 },
	{ 11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4 },
	{ 7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8 },
	{ 9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13 },
	{ 2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9 },
	{ 12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11 },
	{ 13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10 },
	{ 6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5 },
	{ 10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0 },
};

static uint32_t ror32(uint32_t x, int n)
{
	return x >> n | x << (32 - n);
}

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

#define G(a, b, c, d, x, y) do {					\
	v[a] += v[b] + (x); v[d] = ror32(v[d] ^ v[a], 16);		\
	v[c] += v[d]; v[b] = ror32(v[b] ^ v[c], 12);			\
	v[a] += v[b] + (y); v[d] = ror32(v[d] ^ v[a], 8);		\
	v[c] += v[d]; v[b] = ror32(v[b] ^ v[c], 7);			\
} while (0)

/* One 64-byte block; @t bytes hashed so far, this one included. */
static void compress(uint32_t h[8], const uint8_t block[64], uint64_t t, int last)
{
	uint32_t m[16], v[16];
	int i, r;

	for (i = 0; i < 16; i++)
		m[i] = le32(block + 4 * i);
	memcpy(v, h, 32);
	memcpy(v + 8, iv, 32);
	v[12] ^= (uint32_t)t;
	v[13] ^= (uint32_t)(t >> 32);
	if (last)
		v[14] = ~v[14];
	for (r = 0; r < 10; r++) {
		const uint8_t *s = sigma[r];

		G(0, 4, 8, 12, m[s[0]], m[s[1]]);
		G(1, 5, 9, 13, m[s[2]], m[s[3]]);
		G(2, 6, 10, 14, m[s[4]], m[s[5]]);
		G(3, 7, 11, 15, m[s[6]], m[s[7]]);
		G(0, 5, 10, 15, m[s[8]], m[s[9]]);
		G(1, 6, 11, 12, m[s[10]], m[s[11]]);
		G(2, 7, 8, 13, m[s[12]], m[s[13]]);
		G(3, 4, 9, 14, m[s[14]], m[s[15]]);
	}
	for (i = 0; i < 8; i++)
		h[i] ^= v[i] ^ v[i + 8];
	explicit_bzero(m, sizeof(m));
	explicit_bzero(v, sizeof(v));
}

void blake2s(uint8_t *out, size_t outlen, const void *in, size_t inlen, const uint8_t *key,
	     size_t keylen)
{
	/* the key, padded to a block, is the first block of the input */
	size_t pre = keylen ? 64 : 0, total = pre + inlen, done = 0, n;
	uint8_t block[64], digest[32];
	uint32_t h[8];
	int i;

	memcpy(h, iv, sizeof(h));
	h[0] ^= 0x01010000 | keylen << 8 | outlen;
	do {
		memset(block, 0, sizeof(block));
		if (done < pre) {
			memcpy(block, key, keylen);
			n = 64;
		} else {
			n = total - done < 64 ? total - done : 64;
			memcpy(block, (const uint8_t *)in + done - pre, n);
		}
		done += n;
		compress(h, block, done, done == total);
	} while (done < total);
	for (i = 0; i < 8; i++) {
		digest[4 * i] = h[i];
		digest[4 * i + 1] = h[i] >> 8;
		digest[4 * i + 2] = h[i] >> 16;
		digest[4 * i + 3] = h[i] >> 24;
	}
	memcpy(out, digest, outlen);
	explicit_bzero(digest, sizeof(digest));
	explicit_bzero(block, sizeof(block));
	explicit_bzero(h, sizeof(h));
}
