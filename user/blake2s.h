/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BLAKE2s (RFC 7693), keyed or not: as the kernel's blake2s(), so that
 * icsctl computes a cluster key's fingerprint as ics.ko does (key.c).
 */
#ifndef ICS_BLAKE2S_H
#define ICS_BLAKE2S_H

#include <stddef.h>
#include <stdint.h>

#define BLAKE2S_OUT_MAX	32
#define BLAKE2S_KEY_MAX	32

/* @out (@outlen 1..32 bytes) = BLAKE2s-@outlen(@in) keyed with @key (@keylen 0..32). */
void blake2s(uint8_t *out, size_t outlen, const void *in, size_t inlen, const uint8_t *key,
	     size_t keylen);

#endif
