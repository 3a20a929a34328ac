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
#include <stdio.h>
#include <string.h>

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

const char *srv_go_parse_int(const char *s, int64_t *out)
{
	if (!srv_parse_int(s, INT64_MIN, INT64_MAX, out))
		return NULL;
	const char *d = s ? s + (*s == '+' || *s == '-') : "";
	if (*d && strspn(d, "0123456789") == strlen(d))
		return "value out of range";
	return "invalid syntax";
}

/* Go's duration units (time.ParseDuration), micro in both spellings. */
static const struct {
	const char *name;
	int64_t ns;
} dur_units[] = {
    {"ns", 1},
    {"us", 1000},
    {"\xc2\xb5s", 1000},
    {"\xce\xbcs", 1000},
    {"ms", 1000000},
    {"s", 1000000000},
    {"m", 60000000000LL},
    {"h", 3600000000000LL},
};

static bool is_dec(char c)
{
	return c >= '0' && c <= '9';
}

lp_err srv_parse_duration(const char *s, int64_t *ns, char *msg, size_t cap)
{
	const char *p = s;
	bool neg = false;
	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (!strcmp(p, "0")) {
		*ns = 0;
		return LP_OK;
	}
	if (!*p)
		goto invalid;
	uint64_t total = 0;
	while (*p) {
		if (!is_dec(*p) && *p != '.')
			goto invalid;
		uint64_t whole = 0;
		bool digits = false, over = false;
		for (; is_dec(*p); p++, digits = true) {
			if (whole > (UINT64_MAX - 9) / 10)
				over = true;
			else
				whole = whole * 10 + (uint64_t)(*p - '0');
		}
		double frac = 0, scale = 1;
		if (*p == '.')
			for (p++; is_dec(*p); p++, digits = true)
				if (scale < 1e18) {
					frac = frac * 10 + (*p - '0');
					scale *= 10;
				}
		if (!digits || over)
			goto invalid;
		const char *u = p;
		while (*p && *p != '.' && !is_dec(*p))
			p++;
		size_t ul = (size_t)(p - u);
		if (!ul) {
			snprintf(msg, cap,
				 "time: missing unit in duration \"%s\"", s);
			return LP_E_BADREQUEST;
		}
		int64_t unit = 0;
		for (size_t i = 0; i < sizeof dur_units / sizeof dur_units[0];
		     i++)
			if (strlen(dur_units[i].name) == ul &&
			    !strncmp(dur_units[i].name, u, ul))
				unit = dur_units[i].ns;
		if (!unit) {
			snprintf(
			    msg, cap,
			    "time: unknown unit \"%.*s\" in duration \"%s\"",
			    (int)ul, u, s);
			return LP_E_BADREQUEST;
		}
		if (whole > (uint64_t)INT64_MAX / (uint64_t)unit)
			goto invalid;
		uint64_t v = whole * (uint64_t)unit +
			     (uint64_t)(frac / scale * (double)unit);
		if (v > (uint64_t)INT64_MAX - total)
			goto invalid;
		total += v;
	}
	*ns = neg ? -(int64_t)total : (int64_t)total;
	return LP_OK;
invalid:
	snprintf(msg, cap, "time: invalid duration \"%s\"", s);
	return LP_E_BADREQUEST;
}
