/*
 * qparse.c -- query integers with Go's strconv rules (see qparse.h).
 *
 * Pure, any thread. Invariants:
 *   1. No locale: only the bytes '0'..'9', '+' and '-' are ever accepted,
 *      so isdigit()'s locale and strtoll()'s leading blanks play no part.
 *   2. Overflow is found before it happens: the magnitude is accumulated
 *      as uint64_t and checked against its limit before each step.
 */
#include <stdbool.h>
#include <stddef.h>

#include "qparse.h"

/* Read the digits of s (at least one, nothing else) into *mag, refusing a
   magnitude above lim. */
static bool digits(const char *s, uint64_t lim, uint64_t *mag)
{
	uint64_t v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		unsigned d = (unsigned)(*s - '0');
		if (v > (lim - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*mag = v;
	return true;
}

lp_err srv_parse_rv(const char *s, int64_t *out)
{
	uint64_t v;

	if (!s || !*s) {
		*out = SRV_RV_UNSET;
		return LP_OK;
	}
	if (!digits(s, INT64_MAX, &v))
		return LP_ERR(LP_E_BADREQUEST);
	*out = (int64_t)v;
	return LP_OK;
}

lp_err srv_parse_int(const char *s, int64_t min, int64_t max, int64_t *out)
{
	bool neg = false;
	uint64_t v;
	int64_t r;

	if (!s)
		return LP_ERR(LP_E_BADREQUEST);
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	/* -INT64_MIN is INT64_MAX + 1, which a uint64_t holds */
	if (!digits(s, neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, &v))
		return LP_ERR(LP_E_BADREQUEST);
	if (neg)
		r = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	else
		r = (int64_t)v;
	if (r < min || r > max)
		return LP_ERR(LP_E_BADREQUEST);
	*out = r;
	return LP_OK;
}
