// SPDX-License-Identifier: GPL-2.0
/* Round trip histograms (hist.h). */
#include <errno.h>
#include <string.h>

#include "hist.h"

#define SUB	ICS_RTT_HIST_SUB

unsigned int hist_bucket(uint64_t v)
{
	int k;

	if (v < (1u << SUB))
		return v;
	k = 63 - __builtin_clzll(v);
	return ((k - SUB) << SUB) + (unsigned int)(v >> (k - SUB));
}

uint64_t hist_low(unsigned int b)
{
	int e;

	if (b < (2u << SUB))	/* below 256: one value each */
		return b;
	e = (b >> SUB) - 1;	/* k - SUB */
	return (uint64_t)((b & ((1u << SUB) - 1)) | (1u << SUB)) << e;
}

void hist_reset(struct hist *h)
{
	memset(h, 0, sizeof(*h));
}

void hist_add_n(struct hist *h, unsigned int b, uint64_t count)
{
	uint64_t lo = hist_low(b), hi = b + 1 < ICS_RTT_HIST_BUCKETS ? hist_low(b + 1) - 1 :
				       UINT64_MAX;

	if (!count)
		return;
	h->b[b] += count;
	if (!h->n || lo < h->min)
		h->min = lo;
	if (hi > h->max)
		h->max = hi;
	h->n += count;
	h->sum += count * (lo + (hi - lo) / 2);
}

void hist_add(struct hist *h, uint64_t v)
{
	h->b[hist_bucket(v)]++;
	if (!h->n || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->n++;
	h->sum += v;
}

void hist_merge(struct hist *to, const struct hist *from)
{
	unsigned int i;

	if (!from->n)
		return;
	for (i = 0; i < ICS_RTT_HIST_BUCKETS; i++)
		to->b[i] += from->b[i];
	if (!to->n || from->min < to->min)
		to->min = from->min;
	if (from->max > to->max)
		to->max = from->max;
	to->n += from->n;
	to->sum += from->sum;
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	uint64_t rank, seen = 0, lo, hi, v;
	unsigned int i;

	if (!h->n)
		return 0;
	if (q >= 1)
		return h->max;
	rank = (uint64_t)(h->n * q);
	for (i = 0; i < ICS_RTT_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen > rank)
			break;
	}
	if (i == ICS_RTT_HIST_BUCKETS)
		return h->max;
	lo = hist_low(i);
	hi = i + 1 < ICS_RTT_HIST_BUCKETS ? hist_low(i + 1) - 1 : UINT64_MAX;
	v = lo + (hi - lo) / 2;
	return v < h->min ? h->min : v > h->max ? h->max : v;
}

int hist_add_pairs(struct hist *h, const void *pairs, int len)
{
	const uint8_t *p = pairs;
	uint32_t pr[2];
	int i;

	if (len < 0 || len % sizeof(pr))
		return -EPROTO;
	for (i = 0; i < len; i += sizeof(pr)) {
		memcpy(pr, p + i, sizeof(pr));
		if (pr[0] >= ICS_RTT_HIST_BUCKETS)
			return -EPROTO;
	}
	for (i = 0; i < len; i += sizeof(pr)) {
		memcpy(pr, p + i, sizeof(pr));
		hist_add_n(h, pr[0], pr[1]);
	}
	return 0;
}
