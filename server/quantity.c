/*
 * quantity.c -- kube's resource.Quantity as exact decimals: a port of
 * apimachinery v0.33's ParseQuantity (quantity.go, suffix.go), the
 * int64Amount arithmetic (amount.go, math.go) and the inf.Dec arithmetic
 * it falls back to (gopkg.in/inf.v0), step for step where the step shows
 * in a result. See quantity.h.
 */
#include "quantity.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXD SRV_QTY_DIGITS

/* Go's int32 arithmetic wraps; so does this (two's complement). */
static int32_t wrap32(int64_t v)
{
	return (int32_t)(uint32_t)(uint64_t)v;
}

static void norm(struct srv_qty *q)
{
	while (q->nd && !q->d[q->nd - 1])
		q->nd--;
	if (!q->nd)
		q->neg = false;
}

static void set_i64(struct srv_qty *q, int64_t v, int64_t exp, bool dec)
{
	uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	q->exp = exp;
	q->neg = v < 0;
	q->dec = dec;
	for (q->nd = 0; m; m /= 10)
		q->d[q->nd++] = (uint8_t)(m % 10);
}

/* The signed coefficient; only called on what fits (int64Amount forms). */
static int64_t get_i64(const struct srv_qty *q)
{
	uint64_t m = 0;

	for (int i = q->nd; i-- > 0;)
		m = m * 10 + q->d[i];
	return q->neg ? (int64_t)(0 - m) : (int64_t)m;
}

/* Coefficient times 10^k. */
static bool shl(struct srv_qty *q, int64_t k)
{
	if (!q->nd || !k)
		return true;
	if (k > MAXD - q->nd)
		return false;
	memmove(q->d + k, q->d, q->nd);
	memset(q->d, 0, (size_t)k);
	q->nd += (uint8_t)k;
	return true;
}

/* Magnitude plus one. */
static bool inc(struct srv_qty *q)
{
	int i = 0;

	while (i < q->nd && q->d[i] == 9)
		q->d[i++] = 0;
	if (i == q->nd) {
		if (q->nd == MAXD)
			return false;
		q->d[q->nd++] = 0;
	}
	q->d[i]++;
	return true;
}

/* Drop k low digits, rounding the magnitude up (inf.RoundUp: away from
   zero) if any was not 0. */
static bool drop_up(struct srv_qty *q, int64_t k)
{
	bool sticky = false;
	int64_t n = k < q->nd ? k : q->nd;

	for (int64_t i = 0; i < n; i++)
		sticky |= q->d[i] != 0;
	memmove(q->d, q->d + n, (size_t)(q->nd - n));
	q->nd -= (uint8_t)n;
	return !sticky || inc(q);
}

/* Magnitude times 2^k. */
static bool mul2k(struct srv_qty *q, int k)
{
	while (k-- > 0) {
		int c = 0;
		for (int i = 0; i < q->nd; i++) {
			int v = q->d[i] * 2 + c;
			q->d[i] = (uint8_t)(v % 10);
			c = v / 10;
		}
		if (c) {
			if (q->nd == MAXD)
				return false;
			q->d[q->nd++] = (uint8_t)c;
		}
	}
	return true;
}

static int digit_at(const struct srv_qty *q, int64_t p)
{
	return p >= q->exp && p < q->exp + q->nd ? q->d[p - q->exp] : 0;
}

static int cmp_mag(const struct srv_qty *a, const struct srv_qty *b)
{
	if (!a->nd || !b->nd)
		return (a->nd != 0) - (b->nd != 0);
	int64_t ta = a->exp + a->nd, tb = b->exp + b->nd;
	if (ta != tb)
		return ta > tb ? 1 : -1;
	int64_t lo = a->exp < b->exp ? a->exp : b->exp;
	for (int64_t p = ta - 1; p >= lo; p--) {
		int x = digit_at(a, p), y = digit_at(b, p);
		if (x != y)
			return x > y ? 1 : -1;
	}
	return 0;
}

/* The coefficient of the digits num then den, leading zeros skipped,
   but for the last drop ones, which only set *sticky if not 0. */
static bool build(struct srv_qty *q, const char *num, int64_t nn,
		  const char *den, int64_t dn, int64_t drop, bool *sticky)
{
	int64_t j = 0, t = nn + dn;

#define AT(j) ((j) < nn ? num[j] : den[(j)-nn])
	while (j < t && AT(j) == '0')
		j++;
	int64_t k = t - j - drop;
	if (k < 0)
		k = 0;
	if (k > MAXD)
		return false;
	q->nd = (uint8_t)k;
	*sticky = false;
	for (int64_t i = 0; j < t; i++, j++) {
		if (i < k)
			q->d[k - 1 - i] = (uint8_t)(AT(j) - '0');
		else
			*sticky |= AT(j) != '0';
	}
#undef AT
	return true;
}

static bool isdig(char c)
{
	return c >= '0' && c <= '9';
}

/* strconv.ParseInt(s, 10, 64). */
static bool parse_i64(const char *s, size_t n, int64_t *out)
{
	size_t i = 0;
	bool neg = false;
	uint64_t m = 0, lim;

	if (n && (s[0] == '+' || s[0] == '-'))
		neg = s[i++] == '-';
	if (i == n)
		return false;
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < n; i++) {
		if (!isdig(s[i]) || m > (lim - (uint64_t)(s[i] - '0')) / 10)
			return false;
		m = m * 10 + (uint64_t)(s[i] - '0');
	}
	*out = neg ? (int64_t)(0 - m) : (int64_t)m;
	return true;
}

/* suffixer.interpret: base 10, base 2 (BinarySI) or 0 for no suffix. */
static int interpret(const char *s, size_t n, int32_t *exp)
{
	static const char dec[] = "num kMGTPE", bins[] = "KMGTPE";
	const char *p;
	int64_t v;

	if (n == 0) {
		*exp = 0;
		return 10;
	}
	if (n == 1 && s[0] != ' ' && (p = memchr(dec, s[0], 10))) {
		*exp = (int32_t)(p - dec - 3) * 3;
		return 10;
	}
	if (n == 2 && s[1] == 'i' && (p = memchr(bins, s[0], 6))) {
		*exp = (int32_t)(p - bins + 1) * 10;
		return 2;
	}
	if (n > 1 && (s[0] == 'e' || s[0] == 'E') &&
	    parse_i64(s + 1, n - 1, &v)) {
		*exp = wrap32(v); /* Go: int32(parsed) */
		return 10;
	}
	return 0;
}

static const char *parse(const char *s, size_t n, struct srv_qty *out)
{
	size_t pos = 0, ns, ne, ds = 0, de = 0, vend, ss;
	bool positive = true;

	if (n == 0)
		return SRV_QTY_ERR_FORMAT;
	/* parseQuantityString */
	if (s[0] == '-' || s[0] == '+')
		positive = s[pos++] == '+';
	while (pos < n && s[pos] == '0')
		pos++;
	if (pos == n) { /* all zeros: value "0" */
		set_i64(out, 0, 0, false);
		return NULL;
	}
	for (ns = pos; pos < n && isdig(s[pos]);)
		pos++;
	ne = pos;
	if (pos < n && s[pos] == '.') {
		for (ds = ++pos; pos < n && isdig(s[pos]);)
			pos++;
		de = pos;
	}
	vend = ss = pos;
	while (pos < n && memchr("eEinumkKMGTP", s[pos], 12))
		pos++;
	if (pos < n && (s[pos] == '-' || s[pos] == '+'))
		pos++;
	while (pos < n && isdig(s[pos]))
		pos++;
	if (pos < n)
		return SRV_QTY_ERR_FORMAT;

	/* ParseQuantity; an empty numerator stands for "0" */
	int32_t exponent;
	int base = interpret(s + ss, n - ss, &exponent);
	if (!base)
		return SRV_QTY_ERR_SUFFIX;
	int64_t nlen = ne > ns ? (int64_t)(ne - ns) : 1;
	int64_t dlen = (int64_t)(de - ds), prec, scale = 0;
	int64_t mant = 1;
	if (base == 10) {
		scale = exponent;
		prec = 18 - (nlen + dlen);
	} else if (dlen == 0) {
		mant = (int64_t)1 << exponent;
		prec = 15 - nlen - exponent * 3 / 10 - 1;
	} else {
		prec = -1;
	}
	if (prec >= 0 && (scale = wrap32(scale - dlen)) >= -9) {
		int64_t v = 0, r;
		for (size_t i = ns; i < ne; i++)
			v = v * 10 + (s[i] - '0');
		for (size_t i = ds; i < de; i++)
			v = v * 10 + (s[i] - '0');
		if (!__builtin_mul_overflow(v, mant, &r)) {
			set_i64(out, positive ? r : -r, scale, false);
			return NULL;
		}
	}

	/* inf.Dec: SetString(value) wants a digit */
	size_t i = 0;
	while (i < vend && !isdig(s[i]))
		i++;
	if (i == vend)
		return SRV_QTY_ERR_NUMERIC;
	/* unscaled num+den at scale dlen; base 10 moves the scale, and a
	   non-zero value rounds up to scale 9 (1n) */
	int64_t sc = base == 10 ? wrap32(dlen - (int64_t)exponent) : dlen;
	int64_t drop = base == 10 && sc > 9 ? sc - 9 : 0;
	bool sticky;
	if (!build(out, s + ns, (int64_t)(ne - ns), s + ds, dlen, drop,
		   &sticky))
		return SRV_QTY_ERR_DIGITS;
	out->neg = false;
	out->dec = true;
	out->exp = -sc;
	if (!mul2k(out, base == 2 ? exponent : 0))
		return SRV_QTY_ERR_DIGITS;
	if (out->nd || sticky) {
		out->exp = -9;
		if (sc <= 9	? !shl(out, 9 - sc)
		    : base == 2 ? !drop_up(out, sc - 9)
				: sticky && !inc(out))
			return SRV_QTY_ERR_DIGITS;
	}
	if (base == 2) { /* capped at maxAllowed, 2^63-1 */
		struct srv_qty max;
		set_i64(&max, INT64_MAX, 0, true);
		if (cmp_mag(out, &max) > 0)
			*out = max;
	}
	out->neg = !positive && out->nd;
	return NULL;
}

const char *srv_qty_parse(const char *s, size_t n, struct srv_qty *out)
{
	struct srv_qty q;
	const char *why = parse(s, n, &q);

	if (!why)
		*out = q;
	return why;
}

void srv_qty_from_int(int64_t i, struct srv_qty *out)
{
	set_i64(out, i, 0, false);
}

int srv_qty_sign(const struct srv_qty *q)
{
	return q->nd ? (q->neg ? -1 : 1) : 0;
}

int srv_qty_cmp(const struct srv_qty *a, const struct srv_qty *b)
{
	int sa = srv_qty_sign(a), sb = srv_qty_sign(b);

	if (sa != sb)
		return sa < sb ? -1 : 1;
	return sa < 0 ? -cmp_mag(a, b) : cmp_mag(a, b);
}

/* positiveScaleInt64: a negative (wrapped) scale multiplies by nothing. */
static bool pos_scale(int64_t v, int32_t scale, int64_t *out)
{
	for (int32_t i = 0; v && i < scale; i++)
		if (__builtin_mul_overflow(v, 10, &v))
			return false;
	*out = v;
	return true;
}

/* int64Amount.Add */
static bool i64_add(int64_t *av, int32_t *as, int64_t bv, int32_t bs)
{
	int64_t c;

	if (bv == 0)
		return true;
	if (*av == 0) {
		*av = bv;
		*as = bs;
	} else if (*as == bs) {
		if (__builtin_add_overflow(*av, bv, av))
			return false;
	} else if (*as > bs) {
		if (!pos_scale(*av, wrap32((int64_t)*as - bs), &c) ||
		    __builtin_add_overflow(c, bv, av))
			return false;
		*as = bs;
	} else {
		if (!pos_scale(bv, wrap32((int64_t)bs - *as), &c) ||
		    __builtin_add_overflow(*av, c, av))
			return false;
	}
	return true;
}

bool srv_qty_add(const struct srv_qty *a, const struct srv_qty *b, bool sub,
		 struct srv_qty *out)
{
	if (!a->dec && !b->dec) {
		int64_t av = get_i64(a), bv = get_i64(b);
		int32_t as = (int32_t)a->exp;
		if (sub && bv != INT64_MIN) /* Go's -b.value wraps */
			bv = -bv;
		if (i64_add(&av, &as, bv, (int32_t)b->exp)) {
			set_i64(out, av, as, false);
			return true;
		}
	}
	/* inf.Dec.Add: at the larger scale (smaller exp) of the two */
	struct srv_qty x = *a, y = *b;
	int64_t e = x.exp < y.exp ? x.exp : y.exp;
	y.neg ^= sub && y.nd;
	if (!shl(&x, x.exp - e) || !shl(&y, y.exp - e))
		return false;
	x.exp = y.exp = e;
	if (x.neg != y.neg && cmp_mag(&x, &y) < 0) {
		struct srv_qty t = x;
		x = y;
		y = t;
	}
	int c = 0, n = x.nd > y.nd ? x.nd : y.nd;
	for (int i = 0; i < n; i++) {
		int v = (i < x.nd ? x.d[i] : 0) +
			(x.neg == y.neg ? 1 : -1) * (i < y.nd ? y.d[i] : 0) + c;
		c = v < 0 ? -1 : v / 10;
		x.d[i] = (uint8_t)(v - 10 * c);
	}
	x.nd = (uint8_t)n;
	if (c > 0) {
		if (n == MAXD)
			return false;
		x.d[x.nd++] = (uint8_t)c;
	}
	x.dec = true;
	norm(&x);
	*out = x;
	return true;
}

bool srv_qty_to_int(const struct srv_qty *q, int64_t *out)
{
	if (q->dec || q->exp < 0)
		return false;
	return pos_scale(get_i64(q), (int32_t)q->exp, out);
}

/* Go's math.Pow10 */
static double go_pow10(int64_t n)
{
	static const double tab[32] = {
	    1e00, 1e01, 1e02, 1e03, 1e04, 1e05, 1e06, 1e07, 1e08, 1e09, 1e10,
	    1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21,
	    1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31};
	static const double pos32[] = {1e00,  1e32,  1e64,  1e96,  1e128,
				       1e160, 1e192, 1e224, 1e256, 1e288};
	static const double neg32[] = {1e-00,  1e-32,  1e-64,  1e-96,
				       1e-128, 1e-160, 1e-192, 1e-224,
				       1e-256, 1e-288, 1e-320};

	if (n >= 0 && n <= 308)
		return pos32[n / 32] * tab[n % 32];
	if (n >= -323 && n <= 0)
		return neg32[-n / 32] / tab[-n % 32];
	return n > 0 ? HUGE_VAL : 0;
}

double srv_qty_to_double(const struct srv_qty *q)
{
	char buf[MAXD + 3];
	int k = 0;

	/* big.Float's Float64 and float64(int64) round to nearest even, as
	   strtod does */
	if (q->neg)
		buf[k++] = '-';
	if (!q->nd)
		buf[k++] = '0';
	for (int i = q->nd; i-- > 0;)
		buf[k++] = (char)('0' + q->d[i]);
	buf[k] = 0;
	double base = strtod(buf, NULL);
	return q->exp ? base * go_pow10(q->exp) : base;
}
