// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the icsnl helpers that need no kernel: count formatting,
 * size/number/channel parsing, histogram labels and the JSON writer.
 * Output is TAP: "ok N name" or "not ok N name", then the plan.
 */
#include <stdlib.h>
#include <string.h>

#include "icsnl.h"

static int tests, failed;

static void result(bool ok, const char *name)
{
	tests++;
	if (!ok)
		failed++;
	printf("%sok %d %s\n", ok ? "" : "not ", tests, name);
}

static void count(uint64_t v, bool raw, const char *want)
{
	char buf[ICS_NUMBUF], name[96];

	icsnl_fmt_count(buf, v, raw);
	snprintf(name, sizeof(name), "count %llu%s -> \"%s\"", (unsigned long long)v,
		 raw ? " raw" : "", want);
	if (strcmp(buf, want))
		printf("# got \"%s\"\n", buf);
	result(!strcmp(buf, want), name);
}

/* want < 0: must be rejected */
static void size(const char *s, long long want)
{
	char name[96];
	uint32_t v = 0;
	int err = icsnl_parse_size(s, &v);

	snprintf(name, sizeof(name), "size \"%s\" -> %lld", s, want);
	result(want < 0 ? err != 0 : !err && v == want, name);
}

static void u32(const char *s, long long want)
{
	char name[96];
	uint32_t v = 0;
	int err = icsnl_parse_u32(s, &v);

	snprintf(name, sizeof(name), "u32 \"%s\" -> %lld", s, want);
	result(want < 0 ? err != 0 : !err && v == want, name);
}

static void channel(const char *s, int want)
{
	char name[96];

	snprintf(name, sizeof(name), "channel \"%s\" -> %d", s, want);
	result(icsnl_parse_channel(s) == want, name);
}

static void hist_labels(void)
{
	bool ok = !strcmp(ics_hist_labels[0], "0") && ics_hist_row(0) == 0 &&
		  !strcmp(ics_hist_labels[ICS_HIST_ROW_MORE], "more") &&
		  ics_hist_row(ICS_MSG_MAX + 1) == ICS_HIST_ROW_MORE &&
		  ics_hist_row(UINT32_MAX) == ICS_HIST_ROW_MORE;
	uint32_t n;
	int r;

	/* row r's label is 2^(r-1), the largest size that counts in row r */
	for (r = 1; r < ICS_HIST_ROW_MORE; r++) {
		ok &= !icsnl_parse_size(ics_hist_labels[r], &n) && n == 1U << (r - 1);
		ok &= ics_hist_row(n) == (unsigned int)r;
		ok &= ics_hist_row(n + 1) == (unsigned int)r + 1;
	}
	result(ok, "histogram labels match ics_hist_row()");
}

static void json(bool pretty, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	struct json j;
	FILE *f = open_memstream(&buf, &len);

	json_init(&j, f, pretty);
	json_obj_begin(&j, NULL);
	json_u64(&j, "a", UINT64_MAX);
	json_arr_begin(&j, "b");
	json_bool(&j, NULL, true);
	json_str(&j, NULL, "q\"\\\n\x01");
	json_arr_end(&j);
	json_obj_begin(&j, "c");
	json_obj_end(&j);
	json_arr_begin(&j, "d");
	json_arr_end(&j);
	json_obj_end(&j);
	fclose(f);
	if (strcmp(buf, want))
		printf("# got %s", buf);
	result(!strcmp(buf, want), pretty ? "json pretty" : "json compact");
	free(buf);
}

int main(void)
{
	printf("TAP version 13\n");

	count(0, false, "0");
	count(999, false, "999");
	count(1000, false, "1k");
	count(1999, false, "1k");
	count(999999, false, "999k");
	count(1000000, false, "1m");
	count(183456789, false, "183m");
	count(1000000000ULL, false, "1g");
	count(1000000000000ULL, false, "1t");
	count(1000000000000000ULL, false, "1000t");
	count(UINT64_MAX, false, "18446744t");
	count(1000, true, "1000");
	count(183456789, true, "183456789");
	count(UINT64_MAX, true, "18446744073709551615");

	size("0", 0);
	size("1", 1);
	size("1k", 1024);
	size("16m", 16777216);
	size("16M", 16777216);
	size("4095k", 4193280);
	size("4294967295", 4294967295LL);
	size("4194303k", 4294966272LL);
	size("4294967296", -1);
	size("4194304k", -1);
	size("4096m", -1);
	size("99999999999999999999999", -1);
	size("", -1);
	size("k", -1);
	size("-1", -1);
	size("+1", -1);
	size(" 1", -1);
	size("1 ", -1);
	size("1.5k", -1);
	size("12x", -1);
	size("1kk", -1);
	size("1g", -1);
	size("0x10", -1);

	u32("0", 0);
	u32("42", 42);
	u32("4294967295", 4294967295LL);
	u32("4294967296", -1);
	u32("1k", -1);
	u32("", -1);
	u32("-0", -1);
	u32("two", -1);

	channel("BOOT", 0);
	channel("boot", 0);
	channel("Test", 14);
	channel("CNX", 15);
	channel("0", 0);
	channel("15", 15);
	channel("16", -1);
	channel("-1", -1);
	channel("FOO", -1);
	channel("", -1);
	channel("BOOTX", -1);

	hist_labels();

	json(false, "{\"a\": 18446744073709551615, \"b\": [true, \"q\\\"\\\\\\n\\u0001\"], "
	     "\"c\": {}, \"d\": []}\n");
	json(true, "{\n  \"a\": 18446744073709551615,\n  \"b\": [\n    true,\n"
	     "    \"q\\\"\\\\\\n\\u0001\"\n  ],\n  \"c\": {},\n  \"d\": []\n}\n");

	printf("1..%d\n", tests);
	if (failed)
		printf("# %d of %d failed\n", failed, tests);
	return failed ? 1 : 0;
}
