/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Round trip times in a log-linear histogram of fixed size: the buckets of
 * ICS_RTT_A_HIST (uapi/linux/ics.h), exact below 256 ns and within 1/128
 * above, so memory does not grow with the number of samples and the
 * histograms of several runs, threads or the kernel's add up.
 */
#ifndef ICS_HIST_H
#define ICS_HIST_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/ics.h>

struct hist {
	/*
	 * ns. From hist_add(), min, max and sum are exact; hist_add_n() can
	 * only take its bucket's bounds and middle, which its caller may
	 * correct (icsperf does, from ics_test's exact min, max and mean).
	 */
	uint64_t n, sum, min, max;
	uint64_t b[ICS_RTT_HIST_BUCKETS];
};

unsigned int hist_bucket(uint64_t ns);
uint64_t hist_low(unsigned int bucket);	/* the bucket's least value */
void hist_reset(struct hist *h);
void hist_add(struct hist *h, uint64_t ns);
void hist_add_n(struct hist *h, unsigned int bucket, uint64_t count);
void hist_merge(struct hist *to, const struct hist *from);
/*
 * The value of rank floor(n * @q) (0-based) of the samples in order, as
 * the middle of its bucket (exact below 256 ns), within [min, max]; @q = 1:
 * the largest. 0 when empty.
 */
uint64_t hist_quantile(const struct hist *h, double q);
/* Add ICS_RTT_A_HIST's pairs (@len bytes): 0, or -EPROTO if malformed. */
int hist_add_pairs(struct hist *h, const void *pairs, int len);

#endif
