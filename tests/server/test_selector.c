/*
 * test_selector.c -- tests of server/selector.c: label selectors (every
 * operator, the parser's edge cases, key and value validation with kube's
 * messages) and field selectors (terms, escapes, order), plus inputs of a
 * mebibyte that must stay linear and never overflow the stack.
 *
 * Expected messages are the text apimachinery v0.33 produces for the same
 * input; the vectors are our own.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/selector.h"
#include "support.h"

/* The texts kube appends to key and value errors. */
#define QNAME_MSG                                                             \
	"must consist of alphanumeric characters, '-', '_' or '.', and must "  \
	"start and end with an alphanumeric character (e.g. 'MyName',  or "    \
	"'my.name',  or '123-abc', regex used for validation is "              \
	"'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define SUBDOMAIN_MSG                                                          \
	"a lowercase RFC 1123 subdomain must consist of lower case "           \
	"alphanumeric characters, '-' or '.', and must start and end with an " \
	"alphanumeric character (e.g. 'example.com', regex used for "         \
	"validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"  \
	"[a-z0-9])?)*')"
#define VALUE_MSG                                                              \
	"a valid label must be an empty string or consist of alphanumeric "    \
	"characters, '-', '_' or '.', and must start and end with an "         \
	"alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "         \
	"'12345', regex used for validation is "                               \
	"'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
#define REQ "unable to parse requirement: "
#define GTLT_MSG "for 'Gt', 'Lt' operators, the value must be an integer"

/* Large inputs must finish well inside this (seconds, before the
   sanitizer factor): a quadratic parser would not. A safety net only. */
#define BIG_TIMEOUT 20
#define MIB (1024 * 1024)

/* ---- helpers ------------------------------------------------------------ */

static srv_lsel *lparse(const char *s)
{
	struct srv_error err = {0};
	srv_lsel *sel = NULL;
	lp_err rc = srv_lsel_parse(s, &sel, &err);
	cr_assert_eq(rc, LP_OK, "parse of '%s': %s: %s", s ? s : "(null)",
		     lp_errname(rc), err.message);
	cr_assert_not_null(sel);
	return sel;
}

/* The message must be valid UTF-8 that fits, as a Status needs it. */
static void assert_message_sane(const struct srv_error *err)
{
	cr_assert_lt(strlen(err->message), sizeof err->message);
	json_t *j = json_string(err->message);
	cr_assert_not_null(j, "message is not valid UTF-8");
	json_decref(j);
}

static void lerr(const char *s, const char *want)
{
	struct srv_error err = {0};
	srv_lsel *sentinel = (srv_lsel *)&err, *sel = sentinel;
	lp_err rc = srv_lsel_parse(s, &sel, &err);
	cr_assert_eq(rc, LP_E_BADREQUEST, "'%s' parsed: %s", s,
		     lp_errname(rc));
	cr_assert_eq(err.code, LP_E_BADREQUEST);
	cr_assert(sel == sentinel, "out written on failure");
	cr_assert_str_eq(err.message, want, "input '%s'", s);
	assert_message_sane(&err);
}

static bool lmatch(const char *sel_s, const char *labels_json)
{
	srv_lsel *sel = lparse(sel_s);
	json_t *labels = NULL;
	if (labels_json) {
		json_error_t je;
		labels = json_loads(labels_json, JSON_DECODE_ANY, &je);
		cr_assert_not_null(labels, "%s", je.text);
	}
	bool m = srv_lsel_match(sel, labels);
	json_decref(labels);
	srv_lsel_free(sel);
	return m;
}

static srv_fsel *fparse(const char *s)
{
	struct srv_error err = {0};
	srv_fsel *sel = NULL;
	lp_err rc = srv_fsel_parse(s, &sel, &err);
	cr_assert_eq(rc, LP_OK, "parse of '%s': %s: %s", s ? s : "(null)",
		     lp_errname(rc), err.message);
	cr_assert_not_null(sel);
	return sel;
}

static void ferr(const char *s, const char *want)
{
	struct srv_error err = {0};
	srv_fsel *sentinel = (srv_fsel *)&err, *sel = sentinel;
	lp_err rc = srv_fsel_parse(s, &sel, &err);
	cr_assert_eq(rc, LP_E_BADREQUEST, "'%s' parsed: %s", s,
		     lp_errname(rc));
	cr_assert(sel == sentinel, "out written on failure");
	cr_assert_str_eq(err.message, want, "input '%s'", s);
	assert_message_sane(&err);
}

/* Field getter over a JSON object of strings; absent -> NULL. */
static const char *jget(void *ud, const char *field)
{
	return json_string_value(json_object_get(ud, field));
}

static bool fmatch(const char *sel_s, const char *fields_json)
{
	srv_fsel *sel = fparse(sel_s);
	json_error_t je;
	json_t *f = json_loads(fields_json, 0, &je);
	cr_assert_not_null(f, "%s", je.text);
	bool m = srv_fsel_match(sel, jget, f);
	json_decref(f);
	srv_fsel_free(sel);
	return m;
}

static char *repeat(const char *unit, size_t n, const char *head,
		    const char *tail)
{
	size_t ul = strlen(unit), hl = strlen(head), tl = strlen(tail);
	char *s = malloc(hl + ul * n + tl + 1);
	cr_assert_not_null(s);
	memcpy(s, head, hl);
	for (size_t i = 0; i < n; i++)
		memcpy(s + hl + i * ul, unit, ul);
	memcpy(s + hl + ul * n, tail, tl + 1);
	return s;
}

/* ---- label selectors: empty -------------------------------------------- */

Test(lsel, empty_null_and_blank_select_everything)
{
	const char *in[] = {"", NULL, "   ", " \t\r\n "};
	for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
		srv_lsel *sel = lparse(in[i]);
		cr_assert(srv_lsel_empty(sel));
		cr_assert(srv_lsel_match(sel, NULL));
		json_t *l = json_pack("{s:s}", "a", "b");
		cr_assert(srv_lsel_match(sel, l));
		json_decref(l);
		srv_lsel_free(sel);
	}
	cr_assert(srv_lsel_empty(NULL));
	cr_assert(srv_lsel_match(NULL, NULL));
	srv_lsel_free(NULL);
}

Test(lsel, non_empty_selector_is_not_empty)
{
	srv_lsel *sel = lparse("x");
	cr_assert_not(srv_lsel_empty(sel));
	srv_lsel_free(sel);
}

/* ---- label selectors: operators ----------------------------------------- */

Test(lsel, exists_needs_the_key)
{
	cr_assert(lmatch("x", "{\"x\":\"\"}"));
	cr_assert(lmatch("x", "{\"x\":\"a\",\"y\":\"b\"}"));
	cr_assert_not(lmatch("x", "{\"y\":\"b\"}"));
	cr_assert_not(lmatch("x", "{}"));
	cr_assert_not(lmatch("x", NULL));
}

Test(lsel, not_exists_needs_the_key_absent)
{
	cr_assert(lmatch("!x", "{\"y\":\"b\"}"));
	cr_assert(lmatch("!x", NULL));
	cr_assert(lmatch("! x", "{}"));
	cr_assert_not(lmatch("!x", "{\"x\":\"\"}"));
}

Test(lsel, equals_and_double_equals_need_the_value)
{
	cr_assert(lmatch("x=a", "{\"x\":\"a\"}"));
	cr_assert(lmatch("x==a", "{\"x\":\"a\"}"));
	cr_assert_not(lmatch("x=a", "{\"x\":\"b\"}"));
	cr_assert_not(lmatch("x==a", "{\"x\":\"ab\"}"));
	cr_assert_not(lmatch("x=a", "{\"y\":\"a\"}"));
	cr_assert_not(lmatch("x=a", NULL));
}

Test(lsel, not_equals_matches_a_missing_key)
{
	cr_assert(lmatch("x!=a", "{\"x\":\"b\"}"));
	cr_assert(lmatch("x!=a", "{\"y\":\"a\"}"));
	cr_assert(lmatch("x!=a", NULL));
	cr_assert_not(lmatch("x!=a", "{\"x\":\"a\"}"));
}

Test(lsel, in_needs_one_of_the_values)
{
	cr_assert(lmatch("x in (a,b)", "{\"x\":\"a\"}"));
	cr_assert(lmatch("x in (a,b)", "{\"x\":\"b\"}"));
	cr_assert_not(lmatch("x in (a,b)", "{\"x\":\"c\"}"));
	cr_assert_not(lmatch("x in (a,b)", "{}"));
	cr_assert_not(lmatch("x in (a,b)", NULL));
}

Test(lsel, notin_matches_a_missing_key)
{
	cr_assert(lmatch("x notin (a,b)", "{\"x\":\"c\"}"));
	cr_assert(lmatch("x notin (a,b)", "{}"));
	cr_assert(lmatch("x notin (a,b)", NULL));
	cr_assert_not(lmatch("x notin (a,b)", "{\"x\":\"b\"}"));
}

Test(lsel, gt_and_lt_compare_integers)
{
	cr_assert(lmatch("x>1", "{\"x\":\"2\"}"));
	cr_assert_not(lmatch("x>1", "{\"x\":\"1\"}"));
	cr_assert(lmatch("x<1", "{\"x\":\"0\"}"));
	cr_assert(lmatch("x<1", "{\"x\":\"-5\"}"));
	cr_assert_not(lmatch("x<1", "{\"x\":\"1\"}"));
	/* Numeric, not lexical: 10 > 9. */
	cr_assert(lmatch("x>9", "{\"x\":\"10\"}"));
	/* Go's ParseInt: a sign and leading zeros are fine. */
	cr_assert(lmatch("x>4", "{\"x\":\"+5\"}"));
	cr_assert(lmatch("x>4", "{\"x\":\"007\"}"));
	cr_assert(lmatch("x > 0", "{\"x\":\"9223372036854775807\"}"));
	cr_assert(lmatch("x<0", "{\"x\":\"-9223372036854775808\"}"));
	cr_assert(lmatch("x>9223372036854775806",
			 "{\"x\":\"9223372036854775807\"}"));
}

Test(lsel, gt_and_lt_need_a_present_integer_label)
{
	cr_assert_not(lmatch("x>1", "{}"));
	cr_assert_not(lmatch("x<1", NULL));
	cr_assert_not(lmatch("x>1", "{\"x\":\"abc\"}"));
	cr_assert_not(lmatch("x<1", "{\"x\":\"\"}"));
	cr_assert_not(lmatch("x<1", "{\"x\":\"-\"}"));
	cr_assert_not(lmatch("x<1", "{\"x\":\"1.5\"}"));
	cr_assert_not(lmatch("x<1", "{\"x\":\" 0\"}"));
	cr_assert_not(lmatch("x>1", "{\"x\":\"9223372036854775808\"}"));
	cr_assert_not(lmatch("x<1", "{\"x\":\"-9223372036854775809\"}"));
}

Test(lsel, requirements_are_anded)
{
	const char *s = "x in (a,b), y!=c, !z, w";
	cr_assert(lmatch(s, "{\"x\":\"a\",\"w\":\"\"}"));
	cr_assert(lmatch(s, "{\"x\":\"b\",\"y\":\"d\",\"w\":\"q\"}"));
	cr_assert_not(lmatch(s, "{\"x\":\"b\",\"y\":\"c\",\"w\":\"q\"}"));
	cr_assert_not(lmatch(s, "{\"x\":\"b\",\"z\":\"\",\"w\":\"q\"}"));
	cr_assert_not(lmatch(s, "{\"x\":\"b\"}"));
	/* Contradictions parse and match nothing. */
	cr_assert_not(lmatch("x=a,x=b", "{\"x\":\"a\"}"));
	cr_assert_not(lmatch("x,!x", "{\"x\":\"a\"}"));
	cr_assert_not(lmatch("x,!x", "{}"));
}

Test(lsel, empty_values_are_values)
{
	cr_assert(lmatch("x=", "{\"x\":\"\"}"));
	cr_assert_not(lmatch("x=", "{}"));
	cr_assert_not(lmatch("x==", "{\"x\":\"a\"}"));
	cr_assert(lmatch("x!=", "{\"x\":\"a\"}"));
	cr_assert(lmatch("x!=", "{}"));
	cr_assert_not(lmatch("x!=", "{\"x\":\"\"}"));
	cr_assert(lmatch("x=,y", "{\"x\":\"\",\"y\":\"1\"}"));
	cr_assert(lmatch("x in ()", "{\"x\":\"\"}"));
	cr_assert_not(lmatch("x in ()", "{\"x\":\"a\"}"));
	cr_assert(lmatch("x notin ()", "{\"x\":\"a\"}"));
	cr_assert_not(lmatch("x notin ()", "{\"x\":\"\"}"));
}

Test(lsel, value_lists_with_empty_members)
{
	const char *with_empty[] = {"x in (,)", "x in (a,)", "x in (,a)",
				    "x in (a,,b)", "x in (a,,,)", "x in (,,,)",
				    "x in (a,,,b)", "x in ( , )"};
	for (size_t i = 0; i < sizeof with_empty / sizeof with_empty[0]; i++)
		cr_assert(lmatch(with_empty[i], "{\"x\":\"\"}"), "%s",
			  with_empty[i]);
	cr_assert(lmatch("x in (a,,b)", "{\"x\":\"b\"}"));
	cr_assert(lmatch("x in (a,)", "{\"x\":\"a\"}"));
	cr_assert_not(lmatch("x in (a,b)", "{\"x\":\"\"}"));
	cr_assert(lmatch("x in (a,a,a)", "{\"x\":\"a\"}"));
}

Test(lsel, two_commas_before_a_paren_fail_as_in_kube_1_33)
{
	/* parseIdentifiersList takes the second comma of ",,", so an even
	   run of commas before ')' meets ')' where a value is expected. */
	lerr("x in (a,,)", REQ "found ')', expected: ',', or identifier");
	lerr("x in (,,)", REQ "found ')', expected: ',', or identifier");
	lerr("x notin (a,,,,)", REQ "found ')', expected: ',', or identifier");
}

Test(lsel, keywords_are_identifiers_where_values_are_expected)
{
	cr_assert(lmatch("x in (in,notin)", "{\"x\":\"notin\"}"));
	cr_assert(lmatch("x=in", "{\"x\":\"in\"}"));
	cr_assert(lmatch("x!=notin", "{\"x\":\"in\"}"));
	cr_assert(lmatch("in in (in)", "{\"in\":\"in\"}"));
	cr_assert(lmatch("notin notin (a)", "{\"notin\":\"b\"}"));
	cr_assert(lmatch("in", "{\"in\":\"\"}"));
	cr_assert(lmatch("!notin", "{}"));
	cr_assert(lmatch("a,in", "{\"a\":\"\",\"in\":\"\"}"));
}

Test(lsel, whitespace_around_every_token)
{
	const char *s = " \tx\nin\r( a ,\tb ) ,\n y  !=  c , ! z ,w  ==  1 , "
			"v > 3 , u<4 ";
	const char *l = "{\"x\":\"a\",\"w\":\"1\",\"v\":\"4\",\"u\":\"3\"}";
	cr_assert(lmatch(s, l));
	cr_assert(lmatch("x notin(a)", "{\"x\":\"b\"}"));
	cr_assert(lmatch("x in(a)", "{\"x\":\"a\"}"));
	cr_assert(lmatch("x=a,y=b", "{\"x\":\"a\",\"y\":\"b\"}"));
}

Test(lsel, qualified_keys)
{
	cr_assert(lmatch("example.com/x=y", "{\"example.com/x\":\"y\"}"));
	cr_assert(lmatch("app.kubernetes.io/name in (web)",
			 "{\"app.kubernetes.io/name\":\"web\"}"));
	cr_assert(lmatch("A_b.C-d", "{\"A_b.C-d\":\"\"}"));
	cr_assert(lmatch("1", "{\"1\":\"\"}"));
	cr_assert(lmatch("x=A.b_c-D", "{\"x\":\"A.b_c-D\"}"));
}

Test(lsel, longest_valid_key_and_value)
{
	char key[254 + 64 + 1], sel[1024], labels[1024];
	memset(key, 'a', 253);
	key[253] = '/';
	memset(key + 254, 'b', 63);
	key[254 + 63] = '\0';
	char val[64];
	memset(val, 'c', 63);
	val[63] = '\0';
	snprintf(sel, sizeof sel, "%s=%s", key, val);
	snprintf(labels, sizeof labels, "{\"%s\":\"%s\"}", key, val);
	cr_assert(lmatch(sel, labels));
}

Test(lsel, non_string_label_values_never_equal)
{
	cr_assert_not(lmatch("x=1", "{\"x\":1}"));
	cr_assert(lmatch("x!=1", "{\"x\":1}"));
	cr_assert(lmatch("x", "{\"x\":null}"));
	cr_assert_not(lmatch("x>0", "{\"x\":1}"));
	cr_assert_not(lmatch("x", "[\"x\"]"));
	cr_assert(lmatch("x!=a", "\"x\""));
}

Test(lsel, a_selector_is_reusable)
{
	srv_lsel *sel = lparse("x in (a,b),y");
	json_t *yes = json_pack("{s:s,s:s}", "x", "b", "y", "");
	json_t *no = json_pack("{s:s}", "x", "b");
	for (int i = 0; i < 3; i++) {
		cr_assert(srv_lsel_match(sel, yes));
		cr_assert_not(srv_lsel_match(sel, no));
	}
	json_decref(yes);
	json_decref(no);
	srv_lsel_free(sel);
}

/* ---- label selectors: syntax errors ------------------------------------- */

Test(lsel, error_where_a_requirement_should_start)
{
	lerr(",", "found ',', expected: !, identifier, or 'end of string'");
	lerr("=a", "found '=', expected: !, identifier, or 'end of string'");
	lerr("(x)", "found '(', expected: !, identifier, or 'end of string'");
	lerr(" != a", "found '!=', expected: !, identifier, or 'end of string'");
}

Test(lsel, error_after_a_comma)
{
	lerr("x,", "found '', expected: identifier after ','");
	lerr("x, ", "found '', expected: identifier after ','");
	lerr("x,,y", "found ',', expected: identifier after ','");
	lerr("x,=", "found '=', expected: identifier after ','");
	lerr("x,(", "found '(', expected: identifier after ','");
}

Test(lsel, error_after_a_requirement)
{
	lerr("x=a b", "found 'b', expected: ',' or 'end of string'");
	lerr("x=a=b", "found '=', expected: ',' or 'end of string'");
	lerr("x in (a) b", "found 'b', expected: ',' or 'end of string'");
	lerr("x in (a)(", "found '(', expected: ',' or 'end of string'");
	lerr("x in (a))", "found ')', expected: ',' or 'end of string'");
	/* "!key" ends the requirement whatever follows. */
	lerr("!x=a", "found '=', expected: ',' or 'end of string'");
	lerr("!x y", "found 'y', expected: ',' or 'end of string'");
	lerr("!x in (a)", "found 'in', expected: ',' or 'end of string'");
}

Test(lsel, error_where_a_key_is_expected)
{
	lerr("!", REQ "found '', expected: identifier");
	lerr("!!x", REQ "found '!', expected: identifier");
	lerr("!=x", "found '!=', expected: !, identifier, or 'end of string'");
	lerr("! (", REQ "found '(', expected: identifier");
	lerr("x,!", REQ "found '', expected: identifier");
}

Test(lsel, error_where_an_operator_is_expected)
{
	const char *exp = "', expected: in, notin, =, ==, !=, gt, lt";
	char want[256];
	const char *cases[][2] = {
		{"x y", "y"}, {"x !", "!"}, {"x (a)", "("}, {"x )", ")"},
		{"xin (a)", "("}, {"x y=z", "y"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(want, sizeof want, REQ "found '%s%s", cases[i][1], exp);
		lerr(cases[i][0], want);
	}
}

Test(lsel, error_in_a_value_set)
{
	lerr("x in", REQ "found '' expected: '('");
	lerr("x notin a", REQ "found 'a' expected: '('");
	lerr("x in =", REQ "found '=' expected: '('");
	lerr("x in (", REQ "found '', expected: ',', ')' or identifier");
	lerr("x in (=)", REQ "found '=', expected: ',', ')' or identifier");
	lerr("x in ((", REQ "found '(', expected: ',', ')' or identifier");
	lerr("x in (a", REQ "found '', expected: ',' or ')'");
	lerr("x in (a b)", REQ "found 'b', expected: ',' or ')'");
	lerr("x in (a=b)", REQ "found '=', expected: ',' or ')'");
	lerr("x in (a,", REQ "found '', expected: ',', or identifier");
	lerr("x in (a,=)", REQ "found '=', expected: ',', or identifier");
	lerr("x in (a,(", REQ "found '(', expected: ',', or identifier");
}

Test(lsel, error_where_a_single_value_is_expected)
{
	lerr("x===a", REQ "found '=', expected: identifier");
	lerr("x>=1", REQ "found '=', expected: identifier");
	lerr("x<=1", REQ "found '=', expected: identifier");
	lerr("x=(a)", REQ "found '(', expected: identifier");
	lerr("x!=!a", REQ "found '!', expected: identifier");
	lerr("x= )", REQ "found ')', expected: identifier");
}

/* ---- label selectors: validation ---------------------------------------- */

Test(lsel, invalid_key_name_part)
{
	lerr("-x", REQ "<nil>: Invalid value: \"-x\": name part " QNAME_MSG);
	lerr("x- in (a)",
	     REQ "<nil>: Invalid value: \"x-\": name part " QNAME_MSG);
	lerr("!x.", REQ "<nil>: Invalid value: \"x.\": name part " QNAME_MSG);
	lerr("a:b=c", REQ "<nil>: Invalid value: \"a:b\": name part " QNAME_MSG);
	lerr("x/", REQ "<nil>: Invalid value: \"x/\": name part must be "
		       "non-empty; name part " QNAME_MSG);
}

Test(lsel, invalid_key_prefix)
{
	lerr("/x", REQ "<nil>: Invalid value: \"/x\": prefix part must be "
		       "non-empty");
	lerr("Example.com/x",
	     REQ "<nil>: Invalid value: \"Example.com/x\": prefix part "
		 SUBDOMAIN_MSG);
	lerr("a..b/x", REQ "<nil>: Invalid value: \"a..b/x\": prefix part "
			   SUBDOMAIN_MSG);
	lerr("-a/x", REQ "<nil>: Invalid value: \"-a/x\": prefix part "
			 SUBDOMAIN_MSG);
	lerr("a_b/-x", REQ "<nil>: Invalid value: \"a_b/-x\": prefix part "
			   SUBDOMAIN_MSG "; name part " QNAME_MSG);
	lerr("a/b/c",
	     REQ "<nil>: Invalid value: \"a/b/c\": a qualified name " QNAME_MSG
		 " with an optional DNS subdomain prefix and '/' (e.g. "
		 "'example.com/MyName')");
}

Test(lsel, key_length_limits)
{
	char sel[400], want[2048];
	memset(sel, 'k', 64);
	sel[64] = '\0';
	snprintf(want, sizeof want,
		 REQ "<nil>: Invalid value: \"%s\": name part must be no more "
		     "than 63 characters",
		 sel);
	lerr(sel, want);

	/* A 254-byte prefix: too long, and still a valid subdomain. */
	memset(sel, 'p', 254);
	strcpy(sel + 254, "/x");
	snprintf(want, sizeof want,
		 REQ "<nil>: Invalid value: \"%s\": prefix part must be no more "
		     "than 253 characters",
		 sel);
	lerr(sel, want);

	/* Too long and ending badly: both reasons, kube's order. */
	memset(sel, 'k', 63);
	strcpy(sel + 63, "-");
	snprintf(want, sizeof want,
		 REQ "<nil>: Invalid value: \"%s\": name part must be no more "
		     "than 63 characters; name part " QNAME_MSG,
		 sel);
	lerr(sel, want);
}

Test(lsel, invalid_values_are_indexed_by_sorted_position)
{
	lerr("x=-a", REQ "values[0][x]: Invalid value: \"-a\": " VALUE_MSG);
	lerr("x!=a.", REQ "values[0][x]: Invalid value: \"a.\": " VALUE_MSG);
	lerr("x in (a;b)",
	     REQ "values[0][x]: Invalid value: \"a;b\": " VALUE_MSG);
	/* Sorted: "-a" < "b" < "c_". */
	lerr("x notin (b,c_,-a)",
	     REQ "[values[0][x]: Invalid value: \"-a\": " VALUE_MSG
		 ", values[2][x]: Invalid value: \"c_\": " VALUE_MSG "]");
	lerr("example.com/k in (ok,_bad)",
	     REQ "values[0][example.com/k]: Invalid value: \"_bad\": "
		 VALUE_MSG);
}

Test(lsel, value_length_limit)
{
	char sel[128], want[2048], v[80];
	memset(v, 'v', 64);
	v[64] = '\0';
	snprintf(sel, sizeof sel, "x=%s", v);
	snprintf(want, sizeof want,
		 REQ "values[0][x]: Invalid value: \"%s\": must be no more "
		     "than 63 characters",
		 v);
	lerr(sel, want);
	v[63] = '-';
	snprintf(sel, sizeof sel, "x in (%s)", v);
	snprintf(want, sizeof want,
		 REQ "values[0][x]: Invalid value: \"%s\": must be no more "
		     "than 63 characters; " VALUE_MSG,
		 v);
	lerr(sel, want);
}

Test(lsel, gt_lt_bound_must_be_an_integer)
{
	lerr("x>a", REQ "values[0]: Invalid value: \"a\": " GTLT_MSG);
	lerr("x<", REQ "values[0]: Invalid value: \"\": " GTLT_MSG);
	lerr("x>1.5", REQ "values[0]: Invalid value: \"1.5\": " GTLT_MSG);
	lerr("x>9223372036854775808",
	     REQ "values[0]: Invalid value: \"9223372036854775808\": " GTLT_MSG);
	lerr("x>1_000", REQ "values[0]: Invalid value: \"1_000\": " GTLT_MSG);
	/* An integer, but not a label value. */
	lerr("x<-1", REQ "values[0][x]: Invalid value: \"-1\": " VALUE_MSG);
	lerr("x>+1", REQ "values[0][x]: Invalid value: \"+1\": " VALUE_MSG);
	/* Neither: two errors in kube's list form. */
	lerr("x>-a", REQ "[values[0]: Invalid value: \"-a\": " GTLT_MSG
			 ", values[0][x]: Invalid value: \"-a\": " VALUE_MSG "]");
}

Test(lsel, messages_quote_as_go_does)
{
	lerr("a\"b", REQ "<nil>: Invalid value: \"a\\\"b\": name part "
			 QNAME_MSG);
	lerr("a\\b", REQ "<nil>: Invalid value: \"a\\\\b\": name part "
			 QNAME_MSG);
	lerr("a\x01", REQ "<nil>: Invalid value: \"a\\x01\": name part "
			  QNAME_MSG);
	lerr("a\x7f", REQ "<nil>: Invalid value: \"a\\x7f\": name part "
			  QNAME_MSG);
	lerr("a\x0b", REQ "<nil>: Invalid value: \"a\\v\": name part "
			  QNAME_MSG);
	lerr("x=\xc3\xa9", REQ "values[0][x]: Invalid value: \"\xc3\xa9\": "
			       VALUE_MSG);
	lerr("x=a\xc2\xa0", REQ "values[0][x]: Invalid value: \"a\\u00a0\": "
				VALUE_MSG);
	lerr("x=\xee\x80\x80", REQ "values[0][x]: Invalid value: \"\\ue000\": "
				   VALUE_MSG);
	lerr("x=\xf4\x8f\xbf\xbf",
	     REQ "values[0][x]: Invalid value: \"\\U0010ffff\": " VALUE_MSG);
	lerr("x=\xff\xc3", REQ "values[0][x]: Invalid value: \"\\xff\\xc3\": "
			       VALUE_MSG);
	lerr("x=\xf0\x9f\x98\x80",
	     REQ "values[0][x]: Invalid value: \"\xf0\x9f\x98\x80\": "
		 VALUE_MSG);
}

Test(lsel, raw_literals_in_messages_are_valid_utf8)
{
	/* %s in Go keeps the bytes; JSON then shows U+FFFD for each bad
	   one. The message carries that already. */
	lerr("x \xff", REQ "found '\xef\xbf\xbd', expected: in, notin, =, ==, "
			   "!=, gt, lt");
	lerr("x=a \xe2\x82", "found '\xef\xbf\xbd\xef\xbf\xbd', expected: ',' "
			     "or 'end of string'");
	lerr("x=a \xc3\xa9", "found '\xc3\xa9', expected: ',' or 'end of "
			     "string'");
}

/* ---- label selectors: large inputs -------------------------------------- */

Test(lsel, mebibyte_of_requirements, .timeout = BIG_TIMEOUT * 4)
{
	/* 262144 requirements "k=v" joined by commas, all on one key. */
	char *s = repeat("k=v,", MIB / 4, "", "k=v");
	srv_lsel *sel = lparse(s);
	json_t *l = json_pack("{s:s}", "k", "v");
	cr_assert(srv_lsel_match(sel, l));
	json_object_set_new(l, "k", json_string("w"));
	cr_assert_not(srv_lsel_match(sel, l));
	json_decref(l);
	srv_lsel_free(sel);
	free(s);
}

Test(lsel, mebibyte_value_set, .timeout = BIG_TIMEOUT * 4)
{
	/* 131072 distinct values in one set, then the sorted lookup. */
	size_t n = MIB / 8;
	char *s = malloc(n * 8 + 32);
	cr_assert_not_null(s);
	size_t len = (size_t)sprintf(s, "x in (");
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(s + len, "%s%06zx", i ? "," : "",
				       (i * 7919) % n);
	strcpy(s + len, ")");
	srv_lsel *sel = lparse(s);
	json_t *l = json_pack("{s:s}", "x", "01e240");
	cr_assert(srv_lsel_match(sel, l));
	json_object_set_new(l, "x", json_string("fffffff"));
	cr_assert_not(srv_lsel_match(sel, l));
	json_decref(l);
	srv_lsel_free(sel);
	free(s);
}

Test(lsel, mebibyte_of_empty_values, .timeout = BIG_TIMEOUT * 4)
{
	/* An odd run of commas before ')' is fine in kube 1.33. */
	char *s = repeat(",", MIB + 1, "x in (", ")");
	srv_lsel *sel = lparse(s);
	json_t *l = json_pack("{s:s}", "x", "");
	cr_assert(srv_lsel_match(sel, l));
	json_decref(l);
	srv_lsel_free(sel);
	free(s);
}

Test(lsel, mebibyte_blank_and_mebibyte_key, .timeout = BIG_TIMEOUT * 4)
{
	char *s = repeat(" ", MIB, "", "");
	srv_lsel *sel = lparse(s);
	cr_assert(srv_lsel_empty(sel));
	srv_lsel_free(sel);
	free(s);

	/* A key of a mebibyte: refused, the message cut to fit. */
	s = repeat("k", MIB, "", "=v");
	struct srv_error err = {0};
	sel = NULL;
	cr_assert_eq(srv_lsel_parse(s, &sel, &err), LP_E_BADREQUEST);
	cr_assert_null(sel);
	cr_assert(strncmp(err.message, REQ "<nil>: Invalid value: \"kkk",
			  strlen(REQ) + 25) == 0, "%s", err.message);
	assert_message_sane(&err);
	free(s);

	/* A mebibyte of multi-byte characters: the cut is at a boundary. */
	s = repeat("\xc3\xa9", MIB / 2, "x ", "");
	err = (struct srv_error){0};
	cr_assert_eq(srv_lsel_parse(s, &sel, &err), LP_E_BADREQUEST);
	assert_message_sane(&err);
	free(s);
}

Test(lsel, mebibyte_of_nesting_characters, .timeout = BIG_TIMEOUT * 4)
{
	/* Nothing nests: deep parentheses are just a syntax error. */
	char *s = repeat("(", MIB, "x in ", "");
	lerr(s, REQ "found '(', expected: ',', ')' or identifier");
	free(s);
	s = repeat("!", MIB, "", "x");
	lerr(s, REQ "found '!', expected: identifier");
	free(s);
}

Test(lsel, mebibyte_of_pseudorandom_tokens_never_crashes,
     .timeout = BIG_TIMEOUT * 4)
{
	static const char *toks[] = {"in", "notin", "!", "=", "==", "!=",
				     "(", ")", ",", ">", "<", "a", "b.c/d",
				     "7", " ", "-", "\xff", "example.com/x"};
	uint64_t st = ts_seed("lsel_random", 0x5e1ec7);
	for (int round = 0; round < 64; round++) {
		size_t cap = round == 63 ? MIB : 256, len = 0;
		char *s = malloc(cap + 16);
		cr_assert_not_null(s);
		while (len < cap) {
			const char *t = toks[ts_rand(&st) % (sizeof toks /
							   sizeof toks[0])];
			size_t tl = strlen(t);
			memcpy(s + len, t, tl);
			len += tl;
		}
		s[len] = '\0';
		struct srv_error err = {0};
		srv_lsel *sel = NULL;
		lp_err rc = srv_lsel_parse(s, &sel, &err);
		cr_assert(rc == LP_OK || rc == LP_E_BADREQUEST);
		if (rc == LP_OK) {
			json_t *l = json_pack("{s:s,s:s}", "a", "7", "in", "");
			srv_lsel_match(sel, l);
			json_decref(l);
			srv_lsel_free(sel);
		} else {
			assert_message_sane(&err);
		}
		free(s);
	}
}

/* ---- field selectors ---------------------------------------------------- */

Test(fsel, empty_inputs_select_everything)
{
	const char *in[] = {"", NULL, ",", ",,,"};
	for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
		srv_fsel *sel = fparse(in[i]);
		cr_assert(srv_fsel_empty(sel));
		cr_assert_eq(srv_fsel_count(sel), 0);
		cr_assert_null(srv_fsel_field(sel, 0));
		cr_assert(srv_fsel_match(sel, jget, NULL));
		srv_fsel_free(sel);
	}
	cr_assert(srv_fsel_empty(NULL));
	cr_assert(srv_fsel_match(NULL, jget, NULL));
	srv_fsel_free(NULL);
}

Test(fsel, equals_and_double_equals)
{
	cr_assert(fmatch("metadata.name=foo", "{\"metadata.name\":\"foo\"}"));
	cr_assert(fmatch("metadata.name==foo", "{\"metadata.name\":\"foo\"}"));
	cr_assert_not(fmatch("metadata.name=foo",
			     "{\"metadata.name\":\"bar\"}"));
	cr_assert_not(fmatch("metadata.name=foo", "{}"));
}

Test(fsel, not_equals_matches_a_missing_field)
{
	cr_assert(fmatch("spec.color!=red", "{\"spec.color\":\"blue\"}"));
	cr_assert(fmatch("spec.color!=red", "{}"));
	cr_assert_not(fmatch("spec.color!=red", "{\"spec.color\":\"red\"}"));
}

Test(fsel, empty_value_equals_a_missing_field)
{
	cr_assert(fmatch("metadata.name=", "{}"));
	cr_assert(fmatch("metadata.name=", "{\"metadata.name\":\"\"}"));
	cr_assert_not(fmatch("metadata.name=", "{\"metadata.name\":\"x\"}"));
	cr_assert(fmatch("a!=", "{\"a\":\"x\"}"));
	cr_assert_not(fmatch("a!=", "{}"));
}

Test(fsel, terms_are_anded_and_sorted)
{
	const char *f = "{\"a\":\"1\",\"b\":\"2\"}";
	cr_assert(fmatch("b=2,a=1", f));
	cr_assert(fmatch("a=1,b!=3", f));
	cr_assert_not(fmatch("a=1,b=3", f));
	srv_fsel *sel = fparse("zeta=1,alpha!=2,,mid==3");
	cr_assert_eq(srv_fsel_count(sel), 3);
	cr_assert_not(srv_fsel_empty(sel));
	cr_assert_str_eq(srv_fsel_field(sel, 0), "alpha");
	cr_assert_str_eq(srv_fsel_field(sel, 1), "mid");
	cr_assert_str_eq(srv_fsel_field(sel, 2), "zeta");
	cr_assert_null(srv_fsel_field(sel, 3));
	srv_fsel_free(sel);
}

Test(fsel, first_operator_wins)
{
	/* "a=!b": '=' comes first, the value is "!b". */
	cr_assert(fmatch("a=!b", "{\"a\":\"!b\"}"));
	/* No escaping on the left: the field is "a\". */
	srv_fsel *sel = fparse("a\\=b");
	cr_assert_str_eq(srv_fsel_field(sel, 0), "a\\");
	cr_assert_str_eq(srv_fsel_exact(sel, "a\\"), "b");
	srv_fsel_free(sel);
	/* Spaces belong to names and values. */
	cr_assert(fmatch(" a = b", "{\" a \":\" b\"}"));
}

Test(fsel, escapes_in_values)
{
	cr_assert(fmatch("a=x\\,y", "{\"a\":\"x,y\"}"));
	cr_assert(fmatch("a=x\\=y", "{\"a\":\"x=y\"}"));
	cr_assert(fmatch("a=x\\\\y", "{\"a\":\"x\\\\y\"}"));
	cr_assert(fmatch("a!=x\\,y", "{\"a\":\"x\"}"));
	/* "\\," is an escaped backslash, then a separator. */
	srv_fsel *sel = fparse("a=x\\\\,b=c");
	cr_assert_eq(srv_fsel_count(sel), 2);
	cr_assert_str_eq(srv_fsel_exact(sel, "a"), "x\\");
	cr_assert_str_eq(srv_fsel_exact(sel, "b"), "c");
	srv_fsel_free(sel);
}

Test(fsel, invalid_escapes_and_bare_specials)
{
	ferr("a=x\\!", "invalid field selector: invalid escape sequence: \\!");
	ferr("a!=\\n", "invalid field selector: invalid escape sequence: \\n");
	ferr("a=x\\", "invalid field selector: invalid escape sequence: \\");
	ferr("a=\\\xc3\xa9",
	     "invalid field selector: invalid escape sequence: \\\xc3\xa9");
	ferr("a=\\\xff",
	     "invalid field selector: invalid escape sequence: \\\xef\xbf\xbd");
	ferr("a=b=c", "invalid field selector: unescaped character in value: "
		      "61");
	ferr("a===b", "invalid field selector: unescaped character in value: "
		      "61");
	ferr("a!==b", "invalid field selector: unescaped character in value: "
		      "61");
}

Test(fsel, terms_without_an_operator)
{
	ferr("a!b", "invalid selector: 'a!b'; can't understand 'a!b'");
	ferr("x=1,zz", "invalid selector: 'x=1,zz'; can't understand 'zz'");
	/* Sorted terms: the first bad one in byte order is reported. */
	ferr("b!,a!", "invalid selector: 'b!,a!'; can't understand 'a!'");
	ferr("a=\\", "invalid field selector: invalid escape sequence: \\");
	ferr("b=\\q,a", "invalid selector: 'b=\\q,a'; can't understand 'a'");
	ferr("\xff", "invalid selector: '\xef\xbf\xbd'; can't understand "
		     "'\xef\xbf\xbd'");
}

/* An empty field name with a value parses (the resource's field label
   conversion refuses it, in its own words); syntax errors anywhere come
   first. */
Test(fsel, empty_field_name_parses)
{
	static const char *const ok[] = {"=x", "!=x", "a=1,=x"};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		struct srv_error err = {0};
		srv_fsel *sel = NULL;
		cr_assert_eq(srv_fsel_parse(ok[i], &sel, &err), LP_OK, "%s",
			     ok[i]);
		bool empty = false;
		for (size_t j = 0; j < srv_fsel_count(sel); j++)
			empty = empty || !*srv_fsel_field(sel, j);
		cr_expect(empty, "%s: no empty field", ok[i]);
		srv_fsel_free(sel);
	}
	ferr("zz,=x", "invalid selector: 'zz,=x'; can't understand 'zz'");
}

/* A term with neither field nor value selects everything: kube's parser
   makes it Everything() and the and of the terms drops it. */
Test(fsel, a_term_with_neither_field_nor_value_is_dropped)
{
	static const struct {
		const char *in;
		size_t n;
	} c[] = {{"=", 0}, {"==", 0}, {"!=", 0}, {"a=1,==", 1}, {"!=,b!=2", 1}};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		struct srv_error err = {0};
		srv_fsel *sel = NULL;
		cr_assert_eq(srv_fsel_parse(c[i].in, &sel, &err), LP_OK, "%s",
			     c[i].in);
		cr_expect_eq(srv_fsel_count(sel), c[i].n, "%s: %zu terms",
			     c[i].in, srv_fsel_count(sel));
		for (size_t j = 0; j < srv_fsel_count(sel); j++)
			cr_expect(*srv_fsel_field(sel, j), "%s: an empty field",
				  c[i].in);
		srv_fsel_free(sel);
	}
}

Test(fsel, invalid_utf8_in_values)
{
	/* Kept as is when nothing needs unescaping... */
	srv_fsel *sel = fparse("a=\xff");
	cr_assert_str_eq(srv_fsel_exact(sel, "a"), "\xff");
	srv_fsel_free(sel);
	/* ...and turned into U+FFFD when something does, as in Go. */
	sel = fparse("a=\xff\\,");
	cr_assert_str_eq(srv_fsel_exact(sel, "a"), "\xef\xbf\xbd,");
	srv_fsel_free(sel);
	sel = fparse("a=\xc3\xa9\\=");
	cr_assert_str_eq(srv_fsel_exact(sel, "a"), "\xc3\xa9=");
	srv_fsel_free(sel);
}

Test(fsel, exact_match_lookup)
{
	srv_fsel *sel = fparse("metadata.name=b,metadata.namespace!=x,"
			       "metadata.name=a");
	/* The first "=" term in sorted order, as kube's RequiresExactMatch. */
	cr_assert_str_eq(srv_fsel_exact(sel, "metadata.name"), "a");
	cr_assert_null(srv_fsel_exact(sel, "metadata.namespace"));
	cr_assert_null(srv_fsel_exact(sel, "spec.x"));
	cr_assert_null(srv_fsel_exact(sel, NULL));
	cr_assert_null(srv_fsel_exact(NULL, "metadata.name"));
	srv_fsel_free(sel);
	sel = fparse("metadata.name==");
	cr_assert_str_eq(srv_fsel_exact(sel, "metadata.name"), "");
	srv_fsel_free(sel);
}

Test(fsel, mebibyte_of_terms, .timeout = BIG_TIMEOUT * 4)
{
	char *s = repeat("f=v,", MIB / 4, "", "g!=w");
	srv_fsel *sel = fparse(s);
	cr_assert_eq(srv_fsel_count(sel), MIB / 4 + 1);
	cr_assert(fmatch("f=v,g!=w", "{\"f\":\"v\"}"));
	cr_assert(srv_fsel_match(sel, jget, NULL) == false);
	srv_fsel_free(sel);
	free(s);
}

Test(fsel, mebibyte_escaped_value, .timeout = BIG_TIMEOUT * 4)
{
	char *s = repeat("\\,", MIB / 2, "a=", "");
	srv_fsel *sel = fparse(s);
	cr_assert_eq(srv_fsel_count(sel), 1);
	const char *v = srv_fsel_exact(sel, "a");
	cr_assert_eq(strlen(v), MIB / 2);
	cr_assert_eq(strspn(v, ","), MIB / 2);
	srv_fsel_free(sel);
	free(s);

	/* Invalid bytes triple in size once unescaped. */
	s = repeat("\xff", MIB, "a=\\=", "");
	sel = fparse(s);
	cr_assert_eq(strlen(srv_fsel_exact(sel, "a")), 3 * (size_t)MIB + 1);
	srv_fsel_free(sel);
	free(s);
}

Test(fsel, mebibyte_errors_fit_the_message, .timeout = BIG_TIMEOUT * 4)
{
	char *s = repeat("x", MIB, "", "");
	struct srv_error err = {0};
	srv_fsel *sel = NULL;
	cr_assert_eq(srv_fsel_parse(s, &sel, &err), LP_E_BADREQUEST);
	cr_assert_null(sel);
	cr_assert(strncmp(err.message, "invalid selector: 'xxx", 22) == 0);
	assert_message_sane(&err);
	free(s);

	s = repeat("\\\\", MIB / 2, "a=", "\\");
	err = (struct srv_error){0};
	cr_assert_eq(srv_fsel_parse(s, &sel, &err), LP_E_BADREQUEST);
	cr_assert_str_eq(err.message,
			 "invalid field selector: invalid escape sequence: \\");
	free(s);
}
