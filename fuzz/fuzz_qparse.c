/*
 * fuzz_qparse.c -- the query integers and booleans of list and watch
 * (server/qparse.h srv_parse_rv and srv_parse_int, server/reqinfo.h
 * srv_query_bool) against a model written here from kube's rules.
 *
 * Input: a query string. Each '&'-separated part, taken whole and also
 * after its first '=' (its value), is one text checked against the model;
 * so is the whole input. The model reads digits as a string (leading zeros
 * stripped, then compared with INT64_MAX's digits), unlike the code under
 * test, which accumulates; a mistake in either shows as a disagreement.
 *
 * Invariants:
 *   1. Each function accepts exactly what the model accepts and gives the
 *      model's value; on failure *out is untouched.
 *   2. Printing an accepted value with %PRId64 and parsing it again gives
 *      the same value.
 *   3. srv_query_bool is false only for "0" and "false" in any case.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <strings.h>

#include "fuzz.h"
#include "qparse.h"
#include "reqinfo.h"

#define SENTINEL INT64_C(0x5a5a5a5a5a5a5a5a)

/* Model: s holds digits only (at least one); their value, if it fits in
   the magnitude whose decimal text is lim. */
static bool model_digits(const char *s, const char *lim, uint64_t *mag)
{
	if (!*s)
		return false;
	for (const char *p = s; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	while (*s == '0' && s[1])
		s++;
	size_t n = strlen(s), ln = strlen(lim);
	if (n > ln || (n == ln && strcmp(s, lim) > 0))
		return false;
	uint64_t v = 0;
	for (; *s; s++)
		v = v * 10 + (uint64_t)(*s - '0');
	*mag = v;
	return true;
}

static void check_rv(const char *s)
{
	int64_t got = SENTINEL, want = SRV_RV_UNSET;
	uint64_t mag;
	bool ok = true;
	if (*s) {
		ok = model_digits(s, "9223372036854775807", &mag);
		want = (int64_t)mag;
	}
	lp_err rc = srv_parse_rv(s, &got);
	FUZZ_CHECK((rc == LP_OK) == ok, "srv_parse_rv(\"%s\") gave %s",
		   s, lp_errname(rc));
	if (!ok) {
		FUZZ_CHECK(rc == LP_E_BADREQUEST && got == SENTINEL,
			   "srv_parse_rv(\"%s\") failed badly", s);
		return;
	}
	FUZZ_CHECK(got == want, "srv_parse_rv(\"%s\") = %" PRId64
		   ", want %" PRId64, s, got, want);
	if (got >= 0) {
		char txt[32];
		int64_t again = SENTINEL;
		snprintf(txt, sizeof txt, "%" PRId64, got);
		FUZZ_CHECK(srv_parse_rv(txt, &again) == LP_OK && again == got,
			   "srv_parse_rv(\"%s\") does not round-trip", txt);
	}
}

static const struct {
	int64_t min, max;
} bounds[] = {
	{INT64_MIN, INT64_MAX}, /* any int64 */
	{0, INT64_MAX},		/* limit, timeoutSeconds */
	{1, 3600},
	{-1, 0},
	{INT64_MIN, INT64_MIN},
	{INT64_MAX, INT64_MAX},
};

static void check_int(const char *s)
{
	const char *d = s;
	bool neg = false;
	if (*d == '+' || *d == '-')
		neg = *d++ == '-';
	uint64_t mag = 0;
	bool syntax = model_digits(d, neg ? "9223372036854775808"
					  : "9223372036854775807",
				   &mag);
	int64_t want = 0;
	if (syntax)
		want = !neg ? (int64_t)mag
			    : mag == UINT64_C(9223372036854775808)
				      ? INT64_MIN
				      : -(int64_t)mag;
	for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
		bool ok = syntax && want >= bounds[i].min &&
			  want <= bounds[i].max;
		int64_t got = SENTINEL;
		lp_err rc = srv_parse_int(s, bounds[i].min, bounds[i].max,
					  &got);
		FUZZ_CHECK((rc == LP_OK) == ok,
			   "srv_parse_int(\"%s\", %" PRId64 ", %" PRId64
			   ") gave %s",
			   s, bounds[i].min, bounds[i].max, lp_errname(rc));
		if (!ok) {
			FUZZ_CHECK(rc == LP_E_BADREQUEST && got == SENTINEL,
				   "srv_parse_int(\"%s\") failed badly", s);
			continue;
		}
		FUZZ_CHECK(got == want,
			   "srv_parse_int(\"%s\") = %" PRId64 ", want %" PRId64,
			   s, got, want);
		char txt[32];
		int64_t again = SENTINEL;
		snprintf(txt, sizeof txt, "%" PRId64, got);
		FUZZ_CHECK(srv_parse_int(txt, got, got, &again) == LP_OK &&
				   again == got,
			   "srv_parse_int(\"%s\") does not round-trip", txt);
	}
}

static void check_bool(const char *s)
{
	bool want = !(strcmp(s, "0") == 0 || strcasecmp(s, "false") == 0);
	FUZZ_CHECK(srv_query_bool(s) == want, "srv_query_bool(\"%s\")", s);
}

static void check_all(const char *s)
{
	check_rv(s);
	check_int(s);
	check_bool(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_strndup(data, size);
	if (!s)
		return 0;
	check_all(s);
	FUZZ_CHECK(!srv_query_bool(NULL), "an absent boolean is false");
	int64_t v = SENTINEL;
	FUZZ_CHECK(srv_parse_rv(NULL, &v) == LP_OK && v == SRV_RV_UNSET,
		   "an absent resourceVersion is unset");
	FUZZ_CHECK(srv_parse_int(NULL, INT64_MIN, INT64_MAX, &v) ==
			   LP_E_BADREQUEST,
		   "an absent integer is an error");
	/* The query's parts and their values: strsep cuts s in place. */
	char *rest = s, *part;
	while ((part = strsep(&rest, "&"))) {
		check_all(part);
		char *eq = strchr(part, '=');
		if (eq)
			check_all(eq + 1);
	}
	free(s);
	return 0;
}
