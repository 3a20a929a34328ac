/*
 * test_quantity.c -- tests of server/quantity.c: kube's resource.Quantity.
 * The cases come from apiserver v0.33's pkg/cel/library/quantity_test.go
 * and its doc comments, and from apimachinery v0.33's quantity_test.go
 * (TestQuantityParse); the representation and float cases were checked
 * against the Go code.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../server/quantity.h"

static struct srv_qty P(const char *s) {
	struct srv_qty q;
	const char *e = srv_qty_parse(s, strlen(s), &q);
	cr_assert_null(e, "%s: %s", s, e);
	return q;
}

static void
bad(const char *s, const char *want)
{
	struct srv_qty q;
	const char *e = srv_qty_parse(s, strlen(s), &q);
	cr_assert_not_null(e, "%s should not parse", s);
	cr_assert_str_eq(e, want, "%s", s);
}

static int cmp(const char *a, const char *b)
{
	struct srv_qty x = P(a), y = P(b);
	return srv_qty_cmp(&x, &y);
}

/* a.add(b) or a.sub(b) (b a quantity) compared with c. */
static int addcmp(const char *a, const char *b, bool sub, const char *c)
{
	struct srv_qty x = P(a), y = P(b), z = P(c), r;
	cr_assert(srv_qty_add(&x, &y, sub, &r));
	return srv_qty_cmp(&r, &z);
}

static bool as_int(const char *s, int64_t *v)
{
	struct srv_qty q = P(s);
	return srv_qty_to_int(&q, v);
}

static double as_float(const char *s)
{
	struct srv_qty q = P(s);
	return srv_qty_to_double(&q);
}

static uint64_t bits(double d)
{
	uint64_t b;
	memcpy(&b, &d, sizeof b);
	return b;
}

Test(quantity, cel_parse)
{
	struct srv_qty q = P("12Mi"), i;
	srv_qty_from_int(12 * 1024 * 1024, &i);
	cr_assert_eq(srv_qty_cmp(&q, &i), 0);
	bad("10Mo", SRV_QTY_ERR_FORMAT);
	bad("10Mm", SRV_QTY_ERR_SUFFIX);
	cr_assert_str_eq(SRV_QTY_ERR_FORMAT,
			 "quantities must match the regular expression "
			 "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
	/* isQuantity */
	P("20");
	P("20M");
	P("20Mi");
	bad("20Mo", SRV_QTY_ERR_FORMAT);
	/* the library's doc comments */
	P("1.5G");
	P("200k");
	P("1.3G");
	P("1.3Gi");
	P("10000k");
	bad("200K", SRV_QTY_ERR_SUFFIX);
	bad("Three", SRV_QTY_ERR_FORMAT);
	bad("1,3G", SRV_QTY_ERR_FORMAT);
	bad("", SRV_QTY_ERR_FORMAT);
	/* the doc says quantity('Mi') fails; Go's parser takes it as 0 */
	cr_assert_eq(cmp("Mi", "0"), 0);
}

Test(quantity, cel_equality_and_compare)
{
	cr_assert_eq(cmp("200M", "200M"), 0);
	cr_assert_eq(cmp("200M", "0.2G"), 0);
	cr_assert_eq(cmp("0.2G", "200M"), 0);
	cr_assert_eq(cmp("2M", "0.002G"), 0);
	cr_assert_eq(cmp("2000k", "2M"), 0);
	cr_assert_eq(cmp("0.002G", "2000k"), 0);
	cr_assert_neq(cmp("200M", "0.3G"), 0);
	cr_assert_eq(cmp("50M", "50Mi"), -1);
	cr_assert_eq(cmp("50M", "100M"), -1);
	cr_assert_eq(cmp("100M", "50M"), 1);
	cr_assert_eq(cmp("50Mi", "50M"), 1);
	cr_assert_eq(cmp("150Mi", "100Mi"), 1);
	cr_assert_eq(cmp("50M", "100M"), -1);
	cr_assert_eq(cmp("-1", "1n"), -1);
	cr_assert_eq(cmp("-2", "-1"), -1);
	cr_assert_eq(cmp("-0", "0.0"), 0);
	cr_assert_eq(cmp("1e3", "1k"), 0);
	cr_assert_eq(cmp("1E-3", "1m"), 0);
	cr_assert_eq(cmp("9999999999999999999999999999999999999G", "1e46"), -1);
}

Test(quantity, cel_arithmetic)
{
	struct srv_qty q = P("50k"), i, r, z;
	int64_t v;

	cr_assert_eq(addcmp("50k", "20", false, "50.02k"), 0);
	cr_assert_eq(addcmp("50k", "20", true, "49.98k"), 0);
	cr_assert_eq(addcmp("50k", "20k", false, "70k"), 0);
	cr_assert_eq(addcmp("50k", "20k", true, "30k"), 0);
	/* 50k.add(20) is not less than 50020 */
	srv_qty_from_int(20, &i);
	cr_assert(srv_qty_add(&q, &i, false, &r));
	z = P("50020");
	cr_assert_eq(srv_qty_cmp(&r, &z), 0);
	/* 50k.sub(20) == 49980 */
	cr_assert(srv_qty_add(&q, &i, true, &r));
	z = P("49980");
	cr_assert_eq(srv_qty_cmp(&r, &z), 0);
	/* 50k.add(20).sub(quantity("100k")) then .sub(-50000) */
	cr_assert(srv_qty_add(&q, &i, false, &r));
	z = P("100k");
	cr_assert(srv_qty_add(&r, &z, true, &r));
	cr_assert(srv_qty_to_int(&r, &v));
	cr_assert_eq(v, -49980);
	srv_qty_from_int(-50000, &i);
	cr_assert(srv_qty_add(&r, &i, true, &r));
	cr_assert(srv_qty_to_int(&r, &v));
	cr_assert_eq(v, 20);
	/* 50k.sub(20000).asApproximateFloat() == 30000 */
	srv_qty_from_int(20000, &i);
	cr_assert(srv_qty_add(&q, &i, true, &r));
	cr_assert_eq(srv_qty_to_double(&r), 30000.0);
	/* sign */
	cr_assert_eq(srv_qty_sign(&q), 1);
	z = P("-1n");
	cr_assert_eq(srv_qty_sign(&z), -1);
	z = P("-0");
	cr_assert_eq(srv_qty_sign(&z), 0);
}

Test(quantity, cel_integer_and_float)
{
	int64_t v;

	cr_assert(as_int("50k", &v));
	cr_assert_eq(v, 50000);
	cr_assert(as_int("50", &v));
	cr_assert_eq(v, 50);
	cr_assert(as_int("50000000G", &v));
	cr_assert_eq(v, 50000000000000000);
	cr_assert_not(as_int("9999999999999999999999999999999999999G", &v));
	cr_assert_eq(as_float("50.703k"), 50703.0);
	/* Go's AsInt64 answers only for its int64Amount form, whole */
	cr_assert(as_int("5.", &v));
	cr_assert(as_int("1Ti", &v));
	cr_assert_eq(v, (int64_t)1 << 40);
	cr_assert(as_int("0e100", &v));
	cr_assert_eq(v, 0);
	cr_assert(as_int("922337203685477580", &v));
	cr_assert(as_int("-9223372036854775.80k", &v));
	cr_assert_eq(v, -9223372036854775800);
	cr_assert_not(as_int("1.0", &v)); /* 10 * 10^-1 */
	cr_assert_not(as_int("0.0", &v));
	cr_assert_not(as_int("1.5Gi", &v)); /* an inf.Dec */
	cr_assert_not(as_int("1Ei", &v));
	cr_assert_not(as_int("9Ei", &v));
	cr_assert_not(as_int("9223372036854775807", &v)); /* 19 digits */
	cr_assert_not(as_int("1e19", &v));
	cr_assert_not(as_int("1m", &v));
}

Test(quantity, apimachinery_parse_table)
{
	static const char *const t[][2] = {
	    {"0", "0"},
	    {"0n", "0"},
	    {"0Ki", "0"},
	    {"0Ti", "0"},
	    {"1", "1"},
	    {"1Ki", "1024"},
	    {"8Ki", "8192"},
	    {"7Mi", "7340032"},
	    {"6Gi", "6442450944"},
	    {"5Ti", "5497558138880"},
	    {"4Pi", "4503599627370496"},
	    {"3Ei", "3458764513820540928"},
	    {"10Ti", "10995116277760"},
	    {"100Ti", "109951162777600"},
	    {"5n", "5e-9"},
	    {"4u", "4e-6"},
	    {"3m", "3e-3"},
	    {"8k", "8e3"},
	    {"50k", "5e4"},
	    {"7M", "7e6"},
	    {"6G", "6e9"},
	    {"5T", "5e12"},
	    {"40T", "4e13"},
	    {"300T", "3e14"},
	    {"2P", "2e15"},
	    {"1E", "1e18"},
	    {"1E-3", "1e-3"},
	    {"1E6", "1e6"},
	    {"1e9", "1e9"},
	    {"1E12", "1e12"},
	    {"1e15", "1e15"},
	    {"1E18", "1e18"},
	    {"100.035k", "100035"},
	    {"0.001", "1e-3"},
	    {"0.0005k", "5e-1"},
	    {"0.00050k", "5e-1"},
	    {"0.05000", "5e-2"},
	    {"0.5e-2", "5e-3"},
	    {"10.035M", "10035e3"},
	    {"1.2e3", "12e2"},
	    {"1.3E+6", "13e5"},
	    {"1.40e9", "14e8"},
	    {"1.53E12", "153e10"},
	    {"1.7E18", "17e17"},
	    {"9.01", "901e-2"},
	    {"6.987654321G", "6987654321"},
	    {"5.444T", "5444e9"},
	    {"1.01E", "101e16"},
	    {"3.001n", "4e-9"},
	    {"1.1E-9", "2e-9"},
	    {"0.0000000001", "1e-9"},
	    {"0.00000000050", "1e-9"},
	    {"0.5e-9", "1e-9"},
	    {"0.9n", "1e-9"},
	    {"0.00000012345", "124e-9"},
	    {"0.00000012354", "124e-9"},
	    {"9Ei", "9223372036854775807"},
	    {"9223372036854775807Ki", "9223372036854775807"},
	    {"12E", "12e18"},
	    {"100.035Ki", "10243584e-2"},
	    {"0.5Mi", "524288"},
	    {"0.05Gi", "536870912e-1"},
	    {"0.025Ti", "274877906944e-1"},
	    {"0.000000000001Ki", "2e-9"},
	    {".001", "1e-3"},
	    {".0001k", "100e-3"},
	    {"1.", "1"},
	    {"1.G", "1e9"},
	};
	char buf[64];

	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		cr_assert_eq(cmp(t[i][0], t[i][1]), 0, "%s", t[i][0]);
		snprintf(buf, sizeof buf, "+%s", t[i][0]);
		cr_assert_eq(cmp(buf, t[i][1]), 0, "%s", buf);
		snprintf(buf, sizeof buf, "-%s", t[i][0]);
		struct srv_qty n = P(buf), e = P(t[i][1]), z, s;
		srv_qty_from_int(0, &z);
		cr_assert(srv_qty_add(&n, &e, false, &s));
		cr_assert_eq(srv_qty_cmp(&s, &z), 0, "%s", buf);
	}
}

Test(quantity, apimachinery_invalid)
{
	static const char *const t[] = {"1.1.M",   "1+1.0M", "0.1mi", "0.1am",
					"aoeu",	   ".5i",    "1i",    "-3.01i",
					"-3.01e-", " 1",     "1 ",    "1e",
					"e",	   "1 k",    "1Kib",  "\0"};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct srv_qty q;
		cr_assert_not_null(srv_qty_parse(t[i], strlen(t[i]), &q), "%s",
				   t[i]);
	}
	bad("1.1.M", SRV_QTY_ERR_FORMAT);
	bad("0.1mi", SRV_QTY_ERR_SUFFIX);
	bad("-3.01e-", SRV_QTY_ERR_SUFFIX);
	bad("1e99999999999999999999", SRV_QTY_ERR_SUFFIX);
	/* a value part with no digit, where the inf.Dec path reads it */
	bad("+Ei", SRV_QTY_ERR_NUMERIC);
	bad("-.e-10", SRV_QTY_ERR_NUMERIC);
	/* the int64 path takes the same */
	cr_assert_eq(cmp("+k", "0"), 0);
	cr_assert_eq(cmp(".", "0"), 0);
	cr_assert_eq(cmp("-", "0"), 0);
	/* a NUL inside the string */
	struct srv_qty q;
	cr_assert_not_null(srv_qty_parse("1\0k", 3, &q));
}

Test(quantity, rounding_and_cap)
{
	/* a non-zero value rounds up to 1n, away from zero */
	cr_assert_eq(cmp("1e-100", "1n"), 0);
	cr_assert_eq(cmp("-1e-10", "-1n"), 0);
	cr_assert_eq(cmp("-3.001n", "-4n"), 0);
	cr_assert_eq(cmp("0e-100", "0"), 0);
	char s[400] = "0.";
	memset(s + 2, '0', 300);
	strcpy(s + 302, "1");
	cr_assert_eq(cmp(s, "1n"), 0);
	/* BinarySI only is capped at 2^63-1 */
	cr_assert_eq(cmp("-9Ei", "-9223372036854775807"), 0);
	cr_assert_eq(cmp("1e19", "10000000000000000000"), 0);
	cr_assert_eq(cmp("1e19", "9223372036854775807"), 1);
	/* exponents wrap as Go's int32 does */
	cr_assert_eq(cmp("1e4294967296", "1"), 0);
	/* beyond SRV_QTY_DIGITS */
	bad("12345678901234567890e200", SRV_QTY_ERR_DIGITS);
	P("1e400"); /* Go's int64Amount: 1 * 10^400 */
}

Test(quantity, add_forms)
{
	struct srv_qty a, b, r, e;
	int64_t v;

	/* int64 overflow moves to inf.Dec: exact, no longer an integer */
	srv_qty_from_int(INT64_MAX, &a);
	srv_qty_from_int(1, &b);
	cr_assert(srv_qty_add(&a, &b, false, &r));
	e = P("9223372036854775808");
	cr_assert_eq(srv_qty_cmp(&r, &e), 0);
	cr_assert_not(srv_qty_to_int(&r, &v));
	cr_assert_eq(srv_qty_to_double(&r), 9223372036854775808.0);
	/* 0.5 + 0.5 is 10 * 10^-1 to Go */
	a = P("0.5");
	cr_assert(srv_qty_add(&a, &a, false, &r));
	cr_assert_not(srv_qty_to_int(&r, &v));
	/* Go's int64Amount.Sub negates b.value, so INT64_MIN stays */
	srv_qty_from_int(0, &a);
	srv_qty_from_int(INT64_MIN, &b);
	cr_assert(srv_qty_add(&a, &b, true, &r));
	cr_assert(srv_qty_to_int(&r, &v));
	cr_assert_eq(v, INT64_MIN);
	/* Dec operands */
	cr_assert_eq(addcmp("1.5Gi", "1n", true, "1610612735.999999999"), 0);
	cr_assert_eq(addcmp("1n", "1.5Gi", true, "-1610612735.999999999"), 0);
	cr_assert_eq(addcmp("1e-10", "-1e-10", false, "0"), 0);
	cr_assert_eq(addcmp("9Ei", "9Ei", true, "0"), 0);
	/* a result past the storage */
	a = P("1e300");
	b = P("1n");
	cr_assert_not(srv_qty_add(&a, &b, false, &r));
}

Test(quantity, approximate_float)
{
	/* float64(unscaled) * math.Pow10(exp), as Go rounds it */
	cr_assert_eq(bits(as_float("1e-10")), 0x3e112e0be826d695);
	cr_assert_eq(bits(as_float("0.1Ki")), 0x405999999999999a);
	cr_assert_eq(bits(as_float("1E-3")), 0x3f50624dd2f1a9fc);
	cr_assert_eq(bits(as_float("-9Ei")), 0xc3e0000000000000);
	cr_assert_eq(bits(as_float("9999999999999999999999999999999999999G")),
		     0x497c06a5ec5433c7);
	cr_assert_eq(as_float("1e309"), HUGE_VAL);
	cr_assert_eq(as_float("-1e309"), -HUGE_VAL);
	cr_assert(isnan(as_float("0e400"))); /* 0 * +Inf, as in Go */
	cr_assert_eq(as_float("1e-400"), 1e-9);
	cr_assert_eq(as_float("-0"), 0.0);
}
