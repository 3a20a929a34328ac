/*
 * semver.c -- blang/semver v4's Parse and Compare, and kube's
 * normalization in front of it, for the CEL semver library. See semver.h.
 */
#include "semver.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fields.h"

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/* blang's alphanum: ASCII letters, digits and '-'. */
static bool is_alnum(char ch)
{
	return is_digit(ch) || (ch >= 'a' && ch <= 'z') ||
	       (ch >= 'A' && ch <= 'Z') || ch == '-';
}

static bool only_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_digit(s[i]))
			return false;
	return true;
}

static bool only_alnum(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(s[i]))
			return false;
	return true;
}

/* Go's %q of n bytes (cut at a NUL, and to what a message shows). */
static void quote(const char *s, size_t n, char *out, size_t size)
{
	char buf[96];
	if (n >= sizeof buf)
		n = sizeof buf - 1;
	memcpy(buf, s, n);
	buf[n] = 0;
	srv_go_quote(buf, out, size);
}

static const char *fail(char *why, size_t size, const char *what, const char *s,
			size_t n)
{
	char q[128];
	quote(s, n, q, sizeof q);
	snprintf(why, size, "%s %s", what, q);
	return why;
}

/* strconv.ParseUint(s, 10, 64) of digits only. */
static const char *parse_u64(const char *s, size_t n, uint64_t *out, char *why,
			     size_t size)
{
	char q[128];
	uint64_t v = 0;
	if (!n) {
		quote(s, n, q, sizeof q);
		snprintf(why, size,
			 "strconv.ParseUint: parsing %s: invalid syntax", q);
		return why;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10) {
			quote(s, n, q, sizeof q);
			snprintf(
			    why, size,
			    "strconv.ParseUint: parsing %s: value out of range",
			    q);
			return why;
		}
		v = v * 10 + d;
	}
	*out = v;
	return NULL;
}

static bool leading_zero(const char *s, size_t n)
{
	return n > 1 && s[0] == '0';
}

/* One numeric part: major, minor or patch. */
static const char *number(const char *s, size_t n, const char *name,
			  uint64_t *out, char *why, size_t size)
{
	char what[64];
	if (!only_digits(s, n)) {
		snprintf(what, sizeof what,
			 "Invalid character(s) found in %s number", name);
		return fail(why, size, what, s, n);
	}
	if (leading_zero(s, n)) {
		snprintf(what, sizeof what,
			 "%c%s number must not contain leading zeroes",
			 name[0] - 'a' + 'A', name + 1);
		return fail(why, size, what, s, n);
	}
	return parse_u64(s, n, out, why, size);
}

static const char *find(const char *s, size_t n, char ch)
{
	return n ? memchr(s, ch, n) : NULL;
}

/* NewPRVersion of each dot-separated identifier. */
static const char *check_pre(const char *s, size_t n, char *why, size_t size)
{
	for (size_t i = 0;;) {
		const char *dot = find(s + i, n - i, '.');
		size_t len = dot ? (size_t)(dot - (s + i)) : n - i;
		const char *id = s + i;
		uint64_t num;
		if (!len) {
			snprintf(why, size, "Prerelease is empty");
			return why;
		}
		if (only_digits(id, len)) {
			if (leading_zero(id, len))
				return fail(why, size,
					    "Numeric PreRelease version must "
					    "not contain leading zeroes",
					    id, len);
			if (parse_u64(id, len, &num, why, size))
				return why;
		} else if (!only_alnum(id, len)) {
			return fail(why, size,
				    "Invalid character(s) found in prerelease",
				    id, len);
		}
		if (!dot)
			return NULL;
		i += len + 1;
	}
}

static const char *check_build(const char *s, size_t n, char *why, size_t size)
{
	for (size_t i = 0;;) {
		const char *dot = find(s + i, n - i, '.');
		size_t len = dot ? (size_t)(dot - (s + i)) : n - i;
		if (!len) {
			snprintf(why, size, "Build meta data is empty");
			return why;
		}
		if (!only_alnum(s + i, len))
			return fail(
			    why, size,
			    "Invalid character(s) found in build meta data",
			    s + i, len);
		if (!dot)
			return NULL;
		i += len + 1;
	}
}

const char *srv_semver_parse(const char *s, size_t n, struct srv_semver *out,
			     char *why, size_t why_size)
{
	struct srv_semver v = {0};
	if (!n) {
		snprintf(why, why_size, "Version string empty");
		return why;
	}
	const char *d1 = find(s, n, '.');
	const char *d2 =
	    d1 ? find(d1 + 1, n - (size_t)(d1 + 1 - s), '.') : NULL;
	if (!d2) {
		snprintf(why, why_size, "No Major.Minor.Patch elements found");
		return why;
	}
	if (number(s, (size_t)(d1 - s), "major", &v.major, why, why_size) ||
	    number(d1 + 1, (size_t)(d2 - d1 - 1), "minor", &v.minor, why,
		   why_size))
		return why;
	const char *p = d2 + 1;
	size_t pn = n - (size_t)(p - s);
	const char *plus = find(p, pn, '+');
	const char *build = NULL;
	size_t build_n = 0;
	if (plus) {
		build = plus + 1;
		build_n = pn - (size_t)(build - p);
		pn = (size_t)(plus - p);
	}
	const char *minus = find(p, pn, '-');
	if (minus) {
		v.pre = minus + 1;
		v.pre_len = pn - (size_t)(v.pre - p);
		pn = (size_t)(minus - p);
	}
	if (number(p, pn, "patch", &v.patch, why, why_size))
		return why;
	if (minus && check_pre(v.pre, v.pre_len, why, why_size))
		return why;
	if (plus && check_build(build, build_n, why, why_size))
		return why;
	if (!v.pre_len)
		v.pre = NULL;
	*out = v;
	return NULL;
}

const char *srv_semver_parse_normalized(const char *s, size_t n, char *text,
					size_t *text_len,
					struct srv_semver *out, char *why,
					size_t why_size)
{
	if (n && s[0] == 'v')
		s++, n--;
	size_t o = 0, parts = 0;
	const char *last = s;
	size_t last_n = n;
	for (size_t i = 0; parts < 3;) {
		/* the third part runs to the end */
		const char *dot = parts < 2 ? find(s + i, n - i, '.') : NULL;
		size_t len = dot ? (size_t)(dot - (s + i)) : n - i;
		const char *p = s + i;
		last = p;
		last_n = len;
		if (parts)
			text[o++] = '.';
		if (len > 1) {
			size_t z = 0;
			while (z < len && p[z] == '0')
				z++;
			if (z == len || !is_digit(p[z]))
				text[o++] = '0';
			memcpy(text + o, p + z, len - z);
			o += len - z;
		} else {
			memcpy(text + o, p, len);
			o += len;
		}
		parts++;
		if (!dot)
			break;
		i += len + 1;
	}
	if (parts < 3) {
		if (find(last, last_n, '+') || find(last, last_n, '-')) {
			snprintf(why, why_size,
				 "short version cannot contain "
				 "PreRelease/Build meta data");
			return why;
		}
		for (; parts < 3; parts++) {
			text[o++] = '.';
			text[o++] = '0';
		}
	}
	*text_len = o;
	return srv_semver_parse(text, o, out, why, why_size);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a == b ? 0 : a > b ? 1 : -1;
}

/* The next identifier of a pre-release list at *p (n bytes left). */
static size_t next_id(const char **p, size_t *n, const char **id)
{
	const char *dot = find(*p, *n, '.');
	size_t len = dot ? (size_t)(dot - *p) : *n;
	*id = *p;
	*p += dot ? len + 1 : len;
	*n -= dot ? len + 1 : len;
	return len;
}

/* PRVersion.Compare: numbers before words, numbers by value, words as Go
   compares strings. */
static int cmp_id(const char *a, size_t an, const char *b, size_t bn)
{
	bool anum = only_digits(a, an), bnum = only_digits(b, bn);
	if (anum != bnum)
		return anum ? -1 : 1;
	if (anum) {
		/* no leading zeros, so the longer is the larger */
		if (an != bn)
			return an > bn ? 1 : -1;
		int c = memcmp(a, b, an);
		return c ? (c > 0 ? 1 : -1) : 0;
	}
	int c = memcmp(a, b, an < bn ? an : bn);
	if (c)
		return c > 0 ? 1 : -1;
	return cmp_u64(an, bn);
}

int srv_semver_cmp(const struct srv_semver *a, const struct srv_semver *b)
{
	int c = cmp_u64(a->major, b->major);
	if (!c)
		c = cmp_u64(a->minor, b->minor);
	if (!c)
		c = cmp_u64(a->patch, b->patch);
	if (c)
		return c;
	if (!a->pre_len || !b->pre_len)
		return a->pre_len ? -1 : b->pre_len ? 1 : 0;
	const char *pa = a->pre, *pb = b->pre;
	size_t na = a->pre_len, nb = b->pre_len;
	bool more_a = true, more_b = true;
	while (more_a && more_b) {
		const char *ia, *ib;
		size_t la = next_id(&pa, &na, &ia), lb = next_id(&pb, &nb, &ib);
		if ((c = cmp_id(ia, la, ib, lb)))
			return c;
		/* a trailing identifier ends the list when no dot follows */
		more_a = pa != ia + la;
		more_b = pb != ib + lb;
	}
	return more_a ? 1 : more_b ? -1 : 0;
}
