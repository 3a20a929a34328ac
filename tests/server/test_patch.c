/*
 * test_patch.c -- tests of server/patch.c: JSON merge patch (the RFC 7386
 * appendix A examples, kube's departures from them, and the round trip of
 * srv_merge_patch_diff over random trees), JSON patch (the RFC 6902
 * appendix A examples, malformed documents, index rules, all-or-nothing,
 * the copy and depth bounds) and strategic merge patch (a Service-like
 * object with keyed and set lists, every directive, malformed patches).
 *
 * Every call also checks that its inputs were left as they were. The test
 * vectors are our own, written from the RFC texts and from the behaviour of
 * apimachinery's strategicpatch.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/patch.h"
#include "support.h"

#define MSG_422 "the server rejected our request due to an error in our request"

/* Big inputs must finish well inside this many seconds (before the
   sanitizer factor); a quadratic merge would not. A safety net only. */
#define BIG_TIMEOUT 60

/* ---- helpers ------------------------------------------------------------ */

static json_t *J(const char *s)
{
	json_error_t e;
	json_t *v = json_loads(s, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);

	cr_assert_not_null(v, "bad test JSON '%s': %s", s, e.text);
	return v;
}

static void assert_json_eq(const json_t *got, const json_t *want,
			   const char *what)
{
	if (!json_equal(got, want)) {
		char *g = json_dumps(got, JSON_SORT_KEYS | JSON_ENCODE_ANY);
		char *w = json_dumps(want, JSON_SORT_KEYS | JSON_ENCODE_ANY);
		cr_assert_fail("%s:\n  got  %s\n  want %s", what, g, w);
	}
}

/* A sentinel that no patch function may write over on failure. */
static json_t untouched_storage;
#define UNTOUCHED (&untouched_storage)

/* Out-of-memory injection (tests at the end): the countdown of jansson
   allocations to the one that fails, -1 for none; failures so far. */
static long oom_countdown = -1;
static long oom_failed;

typedef lp_err (*patch_fn)(const json_t *doc, const json_t *patch,
			   json_t **out, struct srv_error *err);

static lp_err smp_null_schema(const json_t *doc, const json_t *patch,
			      json_t **out, struct srv_error *err)
{
	return srv_strategic_merge_patch(doc, patch, NULL, out, err);
}

/* Run fn on doc and patch, check the inputs are unchanged, and return the
   code; *out gets the result (NULL on failure, after checking that the
   out-parameter was left alone). */
static lp_err run(patch_fn fn, json_t *doc, json_t *patch, json_t **out,
		  struct srv_error *err)
{
	long countdown = oom_countdown;
	json_t *doc0, *patch0, *res = UNTOUCHED;
	lp_err rc;

	/* our own copies are not the code under test: no failures here */
	oom_countdown = -1;
	doc0 = json_deep_copy(doc);
	patch0 = json_deep_copy(patch);
	cr_assert(doc0 && patch0);
	oom_countdown = countdown;
	memset(err, 0, sizeof *err);
	rc = fn(doc, patch, &res, err);
	countdown = oom_countdown;
	oom_countdown = -1;
	assert_json_eq(doc, doc0, "document changed");
	assert_json_eq(patch, patch0, "patch changed");
	json_decref(doc0);
	json_decref(patch0);
	oom_countdown = countdown;
	if (rc) {
		cr_assert_eq(res, UNTOUCHED, "out written on failure");
		cr_assert_eq(err->code, rc);
		cr_assert(err->message[0], "no message for %s", lp_errname(rc));
		*out = NULL;
	} else {
		cr_assert_neq(res, UNTOUCHED);
		cr_assert_not_null(res);
		*out = res;
	}
	return rc;
}

static void expect_ok(patch_fn fn, const char *doc, const char *patch,
		      const char *want)
{
	json_t *d = J(doc), *p = J(patch), *w = J(want), *out;
	struct srv_error err;
	lp_err rc = run(fn, d, p, &out, &err);

	cr_assert_eq(rc, LP_OK, "%s + %s: %s: %s", doc, patch, lp_errname(rc),
		     err.message);
	assert_json_eq(out, w, patch);
	/* the result shares nothing with the inputs */
	json_decref(d);
	json_decref(p);
	assert_json_eq(out, w, "result after the inputs were freed");
	json_decref(out);
	json_decref(w);
}

static void expect_err(patch_fn fn, const char *doc, const char *patch,
		       lp_err want)
{
	json_t *d = J(doc), *p = J(patch), *out;
	struct srv_error err;
	lp_err rc = run(fn, d, p, &out, &err);

	cr_assert_eq(rc, want, "%s + %s: got %s (%s), want %s", doc, patch,
		     lp_errname(rc), err.message, lp_errname(want));
	if (want == LP_E_INVALID && fn == srv_json_patch)
		cr_assert_str_eq(err.message, MSG_422);
	json_decref(d);
	json_decref(p);
}

/* n objects nested in each other: {"a":{"a":...{}}}. */
static json_t *deep_object(int n)
{
	json_t *v = json_object();
	int i;

	for (i = 1; i < n; i++) {
		json_t *o = json_object();
		cr_assert_eq(json_object_set_new(o, "a", v), 0);
		v = o;
	}
	return v;
}

/* ---- JSON merge patch --------------------------------------------------- */

Test(merge_patch, rfc7386_appendix_a_examples)
{
	static const char *const cases[][3] = {
		{ "{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}" },
		{ "{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}" },
		{ "{\"a\":\"b\"}", "{\"a\":null}", "{}" },
		{ "{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}" },
		{ "{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}" },
		{ "{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}" },
		{ "{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}",
		  "{\"a\":{\"b\":\"d\"}}" },
		{ "{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}" },
		{ "[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]" },
		{ "{\"a\":\"b\"}", "[\"c\"]", "[\"c\"]" },
		{ "{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}" },
		{ "[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}" },
		{ "{}", "{\"a\":{\"bb\":{\"ccc\":null}}}",
		  "{\"a\":{\"bb\":{}}}" },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof *cases; i++)
		expect_ok(srv_merge_patch, cases[i][0], cases[i][1],
			  cases[i][2]);
}

/* RFC 7386 lets null and "bar" replace the document; kube (evanphx v4)
   answers 400 Invalid JSON Patch to any patch that is neither an object
   nor an array. */
Test(merge_patch, scalar_or_null_patch_is_bad_request_as_in_kube)
{
	expect_err(srv_merge_patch, "{\"a\":\"foo\"}", "null",
		   LP_E_BADREQUEST);
	expect_err(srv_merge_patch, "{\"a\":\"foo\"}", "\"bar\"",
		   LP_E_BADREQUEST);
	expect_err(srv_merge_patch, "{\"a\":\"foo\"}", "42", LP_E_BADREQUEST);
	expect_err(srv_merge_patch, "{\"a\":\"foo\"}", "true",
		   LP_E_BADREQUEST);
}

Test(merge_patch, nulls_in_added_values_are_dropped_as_in_kube)
{
	expect_ok(srv_merge_patch, "{}",
		  "{\"a\":{\"b\":null,\"c\":[1,null,{\"d\":null}]}}",
		  "{\"a\":{\"c\":[1,{}]}}");
	expect_ok(srv_merge_patch, "{\"a\":5}", "{\"a\":[null,2]}",
		  "{\"a\":[2]}");
	expect_ok(srv_merge_patch, "{\"a\":null}", "{\"a\":{\"x\":null}}",
		  "{\"a\":{}}");
	/* a non-object replacing an object keeps its nulls (evanphx) */
	expect_ok(srv_merge_patch, "{\"a\":{\"x\":1}}", "{\"a\":[null]}",
		  "{\"a\":[null]}");
	expect_ok(srv_merge_patch, "{\"a\":1}", "[1,null,2]", "[1,2]");
}

Test(merge_patch, objects_merge_recursively_and_arrays_replace)
{
	expect_ok(srv_merge_patch,
		  "{\"metadata\":{\"name\":\"x\",\"labels\":{\"a\":\"1\","
		  "\"b\":\"2\"}},\"spec\":{\"list\":[1,2,3]}}",
		  "{\"metadata\":{\"labels\":{\"a\":null,\"c\":\"3\"}},"
		  "\"spec\":{\"list\":[4]}}",
		  "{\"metadata\":{\"name\":\"x\",\"labels\":{\"b\":\"2\","
		  "\"c\":\"3\"}},\"spec\":{\"list\":[4]}}");
	expect_ok(srv_merge_patch, "{\"a\":1}", "{}", "{\"a\":1}");
	expect_ok(srv_merge_patch, "{\"a\":1}", "{\"missing\":null}",
		  "{\"a\":1}");
}

Test(merge_patch, deep_nesting_is_refused_without_crashing)
{
	json_t *deep = deep_object(10000), *doc = J("{\"a\":1}"), *out;
	json_t *wrap = json_pack("{s:O}", "x", deep);
	struct srv_error err;

	cr_assert_eq(run(srv_merge_patch, doc, wrap, &out, &err),
		     LP_E_BADREQUEST);
	cr_assert_eq(run(srv_merge_patch, wrap, doc, &out, &err),
		     LP_E_INVALID);
	cr_assert_null(srv_merge_patch_diff(doc, wrap));
	cr_assert_null(srv_merge_patch_diff(wrap, doc));
	json_decref(wrap);
	json_decref(deep);
	json_decref(doc);
}

Test(merge_patch, depth_limit_is_one_thousand_levels)
{
	json_t *doc = J("{}"), *ok = deep_object(1000), *bad = deep_object(1001);
	json_t *out;
	struct srv_error err;

	cr_assert_eq(run(srv_merge_patch, doc, ok, &out, &err), LP_OK);
	json_decref(out);
	cr_assert_eq(run(srv_merge_patch, doc, bad, &out, &err),
		     LP_E_BADREQUEST);
	json_decref(doc);
	json_decref(ok);
	json_decref(bad);
}

/* ---- srv_merge_patch_diff ----------------------------------------------- */

static const char *const rkeys[] = { "a", "b", "c", "d", "e", "f" };

static json_t *rand_scalar(uint64_t *st)
{
	static const char *const strs[] = { "", "x", "y", "long string" };

	switch (ts_rand(st) % 4) {
	case 0:
		return json_integer((json_int_t)(ts_rand(st) % 5) - 2);
	case 1:
		return json_string(strs[ts_rand(st) % 4]);
	case 2:
		return json_boolean(ts_rand(st) % 2);
	default:
		return json_real((double)(ts_rand(st) % 8) / 4);
	}
}

static json_t *rand_obj(uint64_t *st, int depth);

static json_t *rand_value(uint64_t *st, int depth)
{
	uint64_t r = ts_rand(st) % (depth > 0 ? 7 : 5);
	json_t *a;
	size_t i, n;

	if (r < 3)
		return rand_scalar(st);
	if (r < 5) {
		a = json_array();
		n = ts_rand(st) % 4;
		for (i = 0; i < n; i++)
			json_array_append_new(a, ts_rand(st) % 3 || depth == 0
							 ? rand_scalar(st)
							 : rand_obj(st, depth - 1));
		return a;
	}
	return rand_obj(st, depth - 1);
}

static json_t *rand_obj(uint64_t *st, int depth)
{
	json_t *o = json_object();
	size_t i, n = ts_rand(st) % 5;

	for (i = 0; i < n; i++)
		json_object_set_new(o, rkeys[ts_rand(st) % 6],
				    rand_value(st, depth));
	return o;
}

/* A copy of a with some members removed, changed, added or recursed. */
static json_t *mutate(uint64_t *st, const json_t *a, int depth)
{
	json_t *b = json_deep_copy(a), *v;
	const char *k;
	void *tmp;

	json_object_foreach_safe(b, tmp, k, v) {
		switch (ts_rand(st) % 5) {
		case 0:
			json_object_del(b, k);
			break;
		case 1:
			json_object_set_new(b, k, rand_value(st, depth));
			break;
		case 2:
			if (json_is_object(v))
				json_object_set_new(b, k, mutate(st, v, depth - 1));
			break;
		default:
			break;
		}
	}
	if (ts_rand(st) % 2)
		json_object_set_new(b, rkeys[ts_rand(st) % 6],
				    rand_value(st, depth));
	return b;
}

Test(merge_patch_diff, applying_the_diff_of_a_and_b_to_a_gives_b)
{
	uint64_t st = ts_seed("merge_patch_diff", 0x7386);
	int i;

	for (i = 0; i < 2000; i++) {
		json_t *a = rand_obj(&st, 4);
		json_t *b = i % 2 ? rand_obj(&st, 4) : mutate(&st, a, 4);
		json_t *d = srv_merge_patch_diff(a, b), *out, *same;
		struct srv_error err;

		cr_assert_not_null(d);
		cr_assert_eq(run(srv_merge_patch, a, d, &out, &err), LP_OK,
			     "%s", err.message);
		if (!json_equal(out, b)) {
			char *sa = json_dumps(a, JSON_SORT_KEYS);
			char *sd = json_dumps(d, JSON_SORT_KEYS);
			cr_log_error("iteration %d: a=%s diff=%s", i, sa, sd);
			assert_json_eq(out, b, "patch(a, diff(a, b))");
		}
		same = srv_merge_patch_diff(a, a);
		cr_assert_eq(json_object_size(same), 0, "diff(a, a) not empty");
		json_decref(same);
		json_decref(out);
		json_decref(d);
		json_decref(a);
		json_decref(b);
	}
}

Test(merge_patch_diff, removed_members_become_null_and_arrays_go_whole)
{
	json_t *a = J("{\"x\":1,\"y\":{\"p\":[1,2],\"q\":\"s\"},\"z\":true}");
	json_t *b = J("{\"x\":1,\"y\":{\"p\":[1,3],\"q\":\"s\"},\"w\":{}}");
	json_t *want = J("{\"y\":{\"p\":[1,3]},\"z\":null,\"w\":{}}");
	json_t *d = srv_merge_patch_diff(a, b);

	assert_json_eq(d, want, "diff");
	json_t *one = json_integer(1);
	cr_assert_null(srv_merge_patch_diff(a, one));
	json_decref(one);
	json_decref(d);
	json_decref(want);
	json_decref(a);
	json_decref(b);
}

/* ---- JSON patch --------------------------------------------------------- */

Test(json_patch, rfc6902_appendix_a_examples)
{
	static const char *const ok[][3] = {
		/* A.1 adding an object member */
		{ "{\"foo\":\"bar\"}",
		  "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\"}]",
		  "{\"baz\":\"qux\",\"foo\":\"bar\"}" },
		/* A.2 adding an array element */
		{ "{\"foo\":[\"bar\",\"baz\"]}",
		  "[{\"op\":\"add\",\"path\":\"/foo/1\",\"value\":\"qux\"}]",
		  "{\"foo\":[\"bar\",\"qux\",\"baz\"]}" },
		/* A.3 removing an object member */
		{ "{\"baz\":\"qux\",\"foo\":\"bar\"}",
		  "[{\"op\":\"remove\",\"path\":\"/baz\"}]",
		  "{\"foo\":\"bar\"}" },
		/* A.4 removing an array element */
		{ "{\"foo\":[\"bar\",\"qux\",\"baz\"]}",
		  "[{\"op\":\"remove\",\"path\":\"/foo/1\"}]",
		  "{\"foo\":[\"bar\",\"baz\"]}" },
		/* A.5 replacing a value */
		{ "{\"baz\":\"qux\",\"foo\":\"bar\"}",
		  "[{\"op\":\"replace\",\"path\":\"/baz\",\"value\":\"boo\"}]",
		  "{\"baz\":\"boo\",\"foo\":\"bar\"}" },
		/* A.6 moving a value */
		{ "{\"foo\":{\"bar\":\"baz\",\"waldo\":\"fred\"},"
		  "\"qux\":{\"corge\":\"grault\"}}",
		  "[{\"op\":\"move\",\"from\":\"/foo/waldo\","
		  "\"path\":\"/qux/thud\"}]",
		  "{\"foo\":{\"bar\":\"baz\"},\"qux\":{\"corge\":\"grault\","
		  "\"thud\":\"fred\"}}" },
		/* A.7 moving an array element */
		{ "{\"foo\":[\"all\",\"grass\",\"cows\",\"eat\"]}",
		  "[{\"op\":\"move\",\"from\":\"/foo/1\",\"path\":\"/foo/3\"}]",
		  "{\"foo\":[\"all\",\"cows\",\"eat\",\"grass\"]}" },
		/* A.8 testing a value: success */
		{ "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}",
		  "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"qux\"},"
		  "{\"op\":\"test\",\"path\":\"/foo/1\",\"value\":2}]",
		  "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}" },
		/* A.10 adding a nested member object */
		{ "{\"foo\":\"bar\"}",
		  "[{\"op\":\"add\",\"path\":\"/child\","
		  "\"value\":{\"grandchild\":{}}}]",
		  "{\"foo\":\"bar\",\"child\":{\"grandchild\":{}}}" },
		/* A.11 ignoring unrecognized elements */
		{ "{\"foo\":\"bar\"}",
		  "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\","
		  "\"xyz\":123}]",
		  "{\"foo\":\"bar\",\"baz\":\"qux\"}" },
		/* A.14 ~ escape ordering */
		{ "{\"/\":9,\"~1\":10}",
		  "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":10}]",
		  "{\"/\":9,\"~1\":10}" },
		/* A.16 adding an array value */
		{ "{\"foo\":[\"bar\"]}",
		  "[{\"op\":\"add\",\"path\":\"/foo/-\","
		  "\"value\":[\"abc\",\"def\"]}]",
		  "{\"foo\":[\"bar\",[\"abc\",\"def\"]]}" },
	};
	static const char *const bad[][2] = {
		/* A.9 testing a value: error */
		{ "{\"baz\":\"qux\"}",
		  "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"bar\"}]" },
		/* A.12 adding to a nonexistent target */
		{ "{\"foo\":\"bar\"}",
		  "[{\"op\":\"add\",\"path\":\"/baz/bat\",\"value\":\"qux\"}]" },
		/* A.15 comparing strings and numbers */
		{ "{\"/\":9,\"~1\":10}",
		  "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":\"10\"}]" },
	};
	size_t i;

	/* A.13 (a duplicate "op" member) is the parser's to refuse: the
	   handler loads bodies with JSON_REJECT_DUPLICATES. */
	for (i = 0; i < sizeof ok / sizeof *ok; i++)
		expect_ok(srv_json_patch, ok[i][0], ok[i][1], ok[i][2]);
	for (i = 0; i < sizeof bad / sizeof *bad; i++)
		expect_err(srv_json_patch, bad[i][0], bad[i][1], LP_E_INVALID);
}

/* Each JSON patch in bad, on {"a":1}, fails with code. */
static void each_json_patch_fails(const char *const *bad, size_t n, lp_err code)
{
	for (size_t i = 0; i < n; i++)
		expect_err(srv_json_patch, "{\"a\":1}", bad[i], code);
}

/* What kube's strict decoding of the list into its jsonPatchOp refuses
   (not a list of objects; op, path or from not a string) is a 400 before
   anything applies. */
Test(json_patch, malformed_patch_documents_are_bad_requests)
{
	static const char *const bad[] = {
	    "{\"op\":\"add\",\"path\":\"/a\",\"value\":1}",
	    "\"add\"",
	    "[1]",
	    "[[]]",
	    "[{\"op\":7,\"path\":\"/a\"}]",
	    "[{\"op\":\"remove\",\"path\":5}]",
	    "[{\"op\":\"copy\",\"path\":\"/b\",\"from\":1}]",
	    /* all decoded first: a bad type after a failing test is
	       still the 400 */
	    "[{\"op\":\"test\",\"path\":\"/a\",\"value\":2},"
	    "{\"op\":\"add\",\"path\":[]}]",
	};
	each_json_patch_fails(bad, sizeof bad / sizeof *bad, LP_E_BADREQUEST);
}

/* null is no operations to Go: the object unchanged. */
Test(json_patch, null_is_no_operations)
{
	json_t *doc = J("{\"a\":1}"), *ops = json_null(), *out = NULL;
	struct srv_error err;
	cr_assert_eq(srv_json_patch(doc, ops, &out, &err), LP_OK);
	cr_assert(json_equal(out, doc));
	json_decref(out);
	json_decref(ops);
	json_decref(doc);
}

/* An operation evanphx/json-patch cannot apply (an unknown or missing op,
   a missing or bad pointer) is kube's generic 422, as a failing test. */
Test(json_patch, operations_that_cannot_apply_are_invalid)
{
	static const char *const bad[] = {
		"[{\"path\":\"/a\",\"value\":1}]",
		"[{\"op\":\"frobnicate\",\"path\":\"/a\"}]",
		"[{\"op\":null,\"path\":\"/a\"}]",
		"[{\"op\":\"remove\"}]",
		"[{\"op\":\"remove\",\"path\":\"a\"}]",
		"[{\"op\":\"remove\",\"path\":\"/a~2\"}]",
		"[{\"op\":\"remove\",\"path\":\"/a~\"}]",
		"[{\"op\":\"remove\",\"path\":\"/a\\u0000b\"}]",
		"[{\"op\":\"move\",\"path\":\"/b\"}]",
		"[{\"op\":\"move\",\"path\":\"/b\",\"from\":\"a\"}]",
		"[{\"op\":\"test\",\"path\":\"/a\",\"value\":2},"
		"{\"op\":\"add\"}]",
	};
	each_json_patch_fails(bad, sizeof bad / sizeof *bad, LP_E_INVALID);
}

Test(json_patch, more_than_ten_thousand_operations_is_too_large)
{
	json_t *ops = json_array(), *doc = J("{}"), *out;
	struct srv_error err;
	int i;

	for (i = 0; i < 10000; i++)
		json_array_append_new(ops, json_pack("{s:s,s:s,s:{}}", "op",
						     "test", "path", "",
						     "value"));
	cr_assert_eq(run(srv_json_patch, doc, ops, &out, &err), LP_OK, "%s",
		     err.message);
	json_decref(out);
	json_array_append_new(ops, json_pack("{s:s,s:s,s:{}}", "op", "test",
					     "path", "", "value"));
	cr_assert_eq(run(srv_json_patch, doc, ops, &out, &err),
		     LP_E_ENTITYTOOLARGE);
	cr_assert_str_eq(err.message, "Request entity too large: The allowed "
				      "maximum operations in a JSON patch is "
				      "10000, got 10001");
	json_decref(ops);
	json_decref(doc);
}

/* Indices as evanphx/json-patch v4 reads them, which kube applies with:
   Go's Atoi (a sign, leading zeros) and negative ones from the end. */
Test(json_patch, array_indices_follow_kubes_json_patch)
{
	const char *doc = "{\"a\":[\"x\",\"y\"]}";

	expect_ok(srv_json_patch, doc,
		  "[{\"op\":\"add\",\"path\":\"/a/2\",\"value\":\"z\"}]",
		  "{\"a\":[\"x\",\"y\",\"z\"]}");
	expect_ok(srv_json_patch, doc,
		  "[{\"op\":\"add\",\"path\":\"/a/0\",\"value\":\"z\"}]",
		  "{\"a\":[\"z\",\"x\",\"y\"]}");
	expect_ok(srv_json_patch, doc,
		  "[{\"op\":\"replace\",\"path\":\"/a/1\",\"value\":\"z\"}]",
		  "{\"a\":[\"x\",\"z\"]}");
	/* a digit string is a member name in an object */
	expect_ok(srv_json_patch, "{\"a\":{}}",
		  "[{\"op\":\"add\",\"path\":\"/a/01\",\"value\":1}]",
		  "{\"a\":{\"01\":1}}");
	static const char *const ok[][2] = {
		{ "[{\"op\":\"add\",\"path\":\"/a/01\",\"value\":\"z\"}]",
		  "{\"a\":[\"x\",\"z\",\"y\"]}" },
		{ "[{\"op\":\"add\",\"path\":\"/a/+1\",\"value\":\"z\"}]",
		  "{\"a\":[\"x\",\"z\",\"y\"]}" },
		/* an add's -1 is the position after the last item */
		{ "[{\"op\":\"add\",\"path\":\"/a/-1\",\"value\":\"z\"}]",
		  "{\"a\":[\"x\",\"y\",\"z\"]}" },
		{ "[{\"op\":\"add\",\"path\":\"/a/-3\",\"value\":\"z\"}]",
		  "{\"a\":[\"z\",\"x\",\"y\"]}" },
		{ "[{\"op\":\"remove\",\"path\":\"/a/-1\"}]",
		  "{\"a\":[\"x\"]}" },
		{ "[{\"op\":\"replace\",\"path\":\"/a/-2\",\"value\":1}]",
		  "{\"a\":[1,\"y\"]}" },
		{ "[{\"op\":\"test\",\"path\":\"/a/00\",\"value\":\"x\"}]",
		  "{\"a\":[\"x\",\"y\"]}" },
		{ "[{\"op\":\"copy\",\"from\":\"/a/-1\",\"path\":\"/b\"}]",
		  "{\"a\":[\"x\",\"y\"],\"b\":\"y\"}" },
	};
	size_t i;

	for (i = 0; i < sizeof ok / sizeof *ok; i++)
		expect_ok(srv_json_patch, doc, ok[i][0], ok[i][1]);
	static const char *const bad[] = {
	    "[{\"op\":\"add\",\"path\":\"/a/3\",\"value\":\"z\"}]",
	    "[{\"op\":\"add\",\"path\":\"/a/-4\",\"value\":\"z\"}]",
	    "[{\"op\":\"remove\",\"path\":\"/a/-3\"}]",
	    "[{\"op\":\"test\",\"path\":\"/a/-3\",\"value\":\"x\"}]",
	    "[{\"op\":\"add\",\"path\":\"/a/+\",\"value\":\"z\"}]",
	    "[{\"op\":\"add\",\"path\":\"/a/1_0\",\"value\":\"z\"}]",
	    "[{\"op\":\"add\",\"path\":\"/a/ 1\",\"value\":\"z\"}]",
	    "[{\"op\":\"add\",\"path\":\"/a/-9223372036854775809\","
	    "\"value\":\"z\"}]",
	    "[{\"op\":\"add\",\"path\":\"/a/\",\"value\":\"z\"}]",
	    "[{\"op\":\"add\",\"path\":\"/a/99999999999999999999999\","
	    "\"value\":\"z\"}]",
	    "[{\"op\":\"remove\",\"path\":\"/a/2\"}]",
	    "[{\"op\":\"remove\",\"path\":\"/a/-\"}]",
	    "[{\"op\":\"replace\",\"path\":\"/a/2\",\"value\":1}]",
	    "[{\"op\":\"replace\",\"path\":\"/a/-\",\"value\":1}]",
	    "[{\"op\":\"add\",\"path\":\"/a/0/x\",\"value\":1}]",
	    "[{\"op\":\"remove\",\"path\":\"/b\"}]",
	    "[{\"op\":\"remove\",\"path\":\"\"}]",
	};

	for (i = 0; i < sizeof bad / sizeof *bad; i++)
		expect_err(srv_json_patch, doc, bad[i], LP_E_INVALID);
}

/* evanphx/json-patch, which kube applies patches with, finds no container
   for the root: an add, replace, remove, move or copy naming it fails. */
Test(json_patch, add_replaces_an_existing_member_not_the_root)
{
	expect_ok(srv_json_patch, "{\"a\":{\"b\":1}}",
		  "[{\"op\":\"add\",\"path\":\"/a\",\"value\":2}]",
		  "{\"a\":2}");
	expect_err(srv_json_patch, "{\"a\":1}",
		   "[{\"op\":\"add\",\"path\":\"\",\"value\":{\"b\":2}}]",
		   LP_E_INVALID);
	/* but a replace of the root by an object or array is the new
	   document (v4's replace), by anything else no patch */
	expect_ok(srv_json_patch, "{\"a\":1}",
		  "[{\"op\":\"replace\",\"path\":\"\",\"value\":[1]}]", "[1]");
	expect_ok(srv_json_patch, "{\"a\":1}",
		  "[{\"op\":\"replace\",\"path\":\"\",\"value\":{\"b\":2}}]",
		  "{\"b\":2}");
	expect_err(srv_json_patch, "{\"a\":1}",
		   "[{\"op\":\"replace\",\"path\":\"\",\"value\":3}]",
		   LP_E_INVALID);
	expect_ok(srv_json_patch, "{\"a\":1}",
		  "[{\"op\":\"test\",\"path\":\"\",\"value\":{\"a\":1}}]",
		  "{\"a\":1}");
	expect_ok(srv_json_patch, "{\"a\":1}",
		  "[{\"op\":\"add\",\"path\":\"/n\",\"value\":null}]",
		  "{\"a\":1,\"n\":null}");
	expect_ok(srv_json_patch, "{\"a/b\":1,\"m~n\":2}",
		  "[{\"op\":\"remove\",\"path\":\"/a~1b\"},"
		  "{\"op\":\"replace\",\"path\":\"/m~0n\",\"value\":3}]",
		  "{\"m~n\":3}");
	expect_ok(srv_json_patch, "{\"\":{\"\":1}}",
		  "[{\"op\":\"replace\",\"path\":\"//\",\"value\":2}]",
		  "{\"\":{\"\":2}}");
	expect_ok(srv_json_patch, "{}", "[]", "{}");
}

Test(json_patch, move_and_copy)
{
	expect_ok(srv_json_patch, "{\"a\":{\"b\":1}}",
		  "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a\"}]",
		  "{\"a\":{\"b\":1}}");
	expect_ok(srv_json_patch, "{\"a\":{\"b\":1},\"ab\":2}",
		  "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/ab\"}]",
		  "{\"ab\":{\"b\":1}}");
	expect_err(srv_json_patch, "{\"a\":{\"b\":[1]}}",
		   "[{\"op\":\"move\",\"from\":\"/a/b\",\"path\":\"\"}]",
		   LP_E_INVALID);
	/* a copy is not shared with its source */
	expect_ok(srv_json_patch, "{\"a\":{\"b\":1}}",
		  "[{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/c\"},"
		  "{\"op\":\"add\",\"path\":\"/c/x\",\"value\":2}]",
		  "{\"a\":{\"b\":1},\"c\":{\"b\":1,\"x\":2}}");
	expect_ok(srv_json_patch, "{\"a\":[1,2]}",
		  "[{\"op\":\"copy\",\"from\":\"/a/1\",\"path\":\"/a/0\"}]",
		  "{\"a\":[2,1,2]}");
	expect_err(srv_json_patch, "{\"a\":{\"b\":1}}",
		   "[{\"op\":\"copy\",\"from\":\"\",\"path\":\"/a/c\"}]",
		   LP_E_INVALID);
	expect_err(srv_json_patch, "{\"a\":{\"b\":1}}",
		   "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a/b/c\"}]",
		   LP_E_INVALID);
	expect_err(srv_json_patch, "{\"a\":{\"b\":1}}",
		   "[{\"op\":\"move\",\"from\":\"\",\"path\":\"/x\"}]",
		   LP_E_INVALID);
	expect_err(srv_json_patch, "{\"a\":1}",
		   "[{\"op\":\"move\",\"from\":\"/b\",\"path\":\"/c\"}]",
		   LP_E_INVALID);
	/* v4 finds an object's missing member as null: copied as null */
	expect_ok(srv_json_patch, "{\"a\":1}",
		  "[{\"op\":\"copy\",\"from\":\"/b\",\"path\":\"/c\"}]",
		  "{\"a\":1,\"c\":null}");
	expect_err(srv_json_patch, "{\"a\":1}",
		   "[{\"op\":\"copy\",\"from\":\"/b/x\",\"path\":\"/c\"}]",
		   LP_E_INVALID);
	/* the source goes first, then the target must exist */
	expect_err(srv_json_patch, "{\"a\":{\"b\":1}}",
		   "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/x/y\"}]",
		   LP_E_INVALID);
}

Test(json_patch, test_compares_numbers_by_value_and_objects_unordered)
{
	expect_ok(srv_json_patch, "{\"a\":1,\"o\":{\"x\":1,\"y\":[true,null]}}",
		  "[{\"op\":\"test\",\"path\":\"/a\",\"value\":1.0},"
		  "{\"op\":\"test\",\"path\":\"/o\",\"value\":"
		  "{\"y\":[true,null],\"x\":1}}]",
		  "{\"a\":1,\"o\":{\"x\":1,\"y\":[true,null]}}");
	expect_err(srv_json_patch, "{\"o\":{\"x\":1}}",
		   "[{\"op\":\"test\",\"path\":\"/o\",\"value\":"
		   "{\"x\":1,\"y\":2}}]",
		   LP_E_INVALID);
	expect_err(srv_json_patch, "{\"a\":[1,2]}",
		   "[{\"op\":\"test\",\"path\":\"/a\",\"value\":[2,1]}]",
		   LP_E_INVALID);
	/* v4 finds an object's missing member as null */
	expect_ok(srv_json_patch, "{\"a\":null}",
		  "[{\"op\":\"test\",\"path\":\"/b\",\"value\":null}]",
		  "{\"a\":null}");
	expect_err(srv_json_patch, "{\"a\":null}",
		   "[{\"op\":\"test\",\"path\":\"/b\",\"value\":1}]",
		   LP_E_INVALID);
	expect_err(srv_json_patch, "{\"a\":[1]}",
		   "[{\"op\":\"test\",\"path\":\"/a/3\",\"value\":null}]",
		   LP_E_INVALID);
}

/* evanphx/json-patch v4, which kube 1.33 applies patches with: a replace
   of an object's missing member adds it (its partialDoc.get never fails),
   an array's element must exist; an add or replace without a value puts
   null, a test without one fails. */
Test(json_patch, v4_replace_adds_and_value_defaults_to_null)
{
	expect_ok(srv_json_patch, "{\"metadata\":{\"name\":\"x\"}}",
		  "[{\"op\":\"replace\",\"path\":\"/metadata/labels\","
		  "\"value\":{\"a\":\"b\"}}]",
		  "{\"metadata\":{\"name\":\"x\",\"labels\":{\"a\":\"b\"}}}");
	expect_err(srv_json_patch, "{\"a\":[1]}",
		   "[{\"op\":\"replace\",\"path\":\"/a/1\",\"value\":2}]",
		   LP_E_INVALID);
	expect_err(srv_json_patch, "{\"a\":1}",
		   "[{\"op\":\"replace\",\"path\":\"/b/c\",\"value\":2}]",
		   LP_E_INVALID);
	expect_ok(srv_json_patch, "{\"a\":1}",
		  "[{\"op\":\"add\",\"path\":\"/b\"},"
		  "{\"op\":\"replace\",\"path\":\"/a\"}]",
		  "{\"a\":null,\"b\":null}");
	expect_err(srv_json_patch, "{\"a\":1}",
		   "[{\"op\":\"test\",\"path\":\"/a\"}]", LP_E_INVALID);
	expect_err(srv_json_patch, "{\"a\":null}",
		   "[{\"op\":\"test\",\"path\":\"/a\"}]", LP_E_INVALID);
}

Test(json_patch, failing_test_leaves_result_unset_and_input_unchanged)
{
	json_t *doc = J("{\"a\":[1,2],\"b\":\"x\"}");
	json_t *ops = J("[{\"op\":\"remove\",\"path\":\"/a/0\"},"
			"{\"op\":\"add\",\"path\":\"/c\",\"value\":3},"
			"{\"op\":\"test\",\"path\":\"/b\",\"value\":\"y\"}]");
	json_t *doc0 = json_deep_copy(doc), *out = UNTOUCHED;
	struct srv_error err = { 0 };

	cr_assert_eq(srv_json_patch(doc, ops, &out, &err), LP_E_INVALID);
	cr_assert_eq(out, UNTOUCHED);
	cr_assert_str_eq(err.message, MSG_422);
	cr_assert_eq(err.n_causes, 0);
	assert_json_eq(doc, doc0, "input after a failed patch");
	json_decref(doc);
	json_decref(doc0);
	json_decref(ops);
}

Test(json_patch, copies_are_bounded_to_three_mebibytes, .timeout = BIG_TIMEOUT)
{
	/* each op copies /d into itself: without kube's copy limit, 40 of
	   them would ask for a terabyte */
	json_t *doc = json_object(), *d = json_object(), *ops = json_array(),
	       *out;
	char *big = malloc(4096);
	struct srv_error err;
	int i;

	memset(big, 'x', 4095);
	big[4095] = '\0';
	json_object_set_new(d, "a", json_string(big));
	json_object_set_new(doc, "d", d);
	for (i = 0; i < 40; i++) {
		char path[16];
		snprintf(path, sizeof path, "/d/k%d", i);
		json_array_append_new(ops, json_pack("{s:s,s:s,s:s}", "op",
						     "copy", "from", "/d", "path",
						     path));
	}
	cr_assert_eq(run(srv_json_patch, doc, ops, &out, &err), LP_E_INVALID);
	/* ten doublings of 4 KiB stay under the limit */
	while (json_array_size(ops) > 9)
		json_array_remove(ops, json_array_size(ops) - 1);
	cr_assert_eq(run(srv_json_patch, doc, ops, &out, &err), LP_OK, "%s",
		     err.message);
	json_decref(out);
	free(big);
	json_decref(ops);
	json_decref(doc);
}

/* {"x":{"x":...{}}} with n objects, under "a" in a patch op's value. */
static json_t *chain(int n, const char *key)
{
	json_t *v = json_object();
	int i;

	for (i = 1; i < n; i++)
		v = json_pack("{s:o}", key, v);
	return v;
}

static char *xpath(const char *prefix, int n, const char *last)
{
	size_t len = strlen(prefix) + 2 * (size_t)n + strlen(last) + 1;
	char *p = malloc(len), *q;
	int i;

	q = p + sprintf(p, "%s", prefix);
	for (i = 0; i < n; i++)
		q += sprintf(q, "/x");
	sprintf(q, "%s", last);
	return p;
}

Test(json_patch, move_and_copy_cannot_nest_past_the_limit)
{
	json_t *doc = J("{}"), *out;
	char *deep = xpath("/a", 500, "/y");
	json_t *ops = json_pack("[{s:s,s:s,s:o},{s:s,s:s,s:s}]", "op", "add",
				"path", "/a", "value", chain(600, "x"), "op",
				"copy", "from", "/a", "path", deep);
	struct srv_error err;

	/* 1 + 600 levels fit; a copy 500 levels down would make 1101 */
	cr_assert_eq(run(srv_json_patch, doc, ops, &out, &err), LP_E_INVALID);
	json_object_set_new(json_array_get(ops, 1), "op", json_string("move"));
	json_object_set_new(json_array_get(ops, 1), "from", json_string("/b"));
	json_array_insert_new(ops, 1,
			      json_pack("{s:s,s:s,s:o}", "op", "add", "path",
					"/b", "value", chain(600, "z")));
	cr_assert_eq(run(srv_json_patch, doc, ops, &out, &err), LP_E_INVALID);
	/* a shallow move to the same place is fine */
	json_object_set_new(json_array_get(ops, 1), "value", json_object());
	cr_assert_eq(run(srv_json_patch, doc, ops, &out, &err), LP_OK, "%s",
		     err.message);
	json_decref(out);
	free(deep);
	json_decref(ops);
	json_decref(doc);
}

Test(json_patch, deep_nesting_is_refused_without_crashing)
{
	json_t *deep = deep_object(10000), *doc = J("{\"a\":1}"), *out;
	json_t *ops = json_pack("[{s:s,s:s,s:O}]", "op", "add", "path", "/b",
				"value", deep);
	json_t *deepdoc = json_pack("{s:O}", "x", deep);
	json_t *noop = J("[]");
	char *longpath = xpath("", 100000, "");
	json_t *longops = json_pack("[{s:s,s:s,s:i}]", "op", "add", "path",
				    longpath, "value", 1);
	struct srv_error err;

	cr_assert_eq(run(srv_json_patch, doc, ops, &out, &err),
		     LP_E_BADREQUEST);
	cr_assert_eq(run(srv_json_patch, deepdoc, noop, &out, &err),
		     LP_E_INVALID);
	cr_assert_eq(run(srv_json_patch, doc, longops, &out, &err),
		     LP_E_INVALID);
	free(longpath);
	json_decref(longops);
	json_decref(noop);
	json_decref(deepdoc);
	json_decref(ops);
	json_decref(deep);
	json_decref(doc);
}

/* ---- strategic merge patch ---------------------------------------------- */

/* Paths the schema was asked about, to check their spelling. */
static char asked[4096];

static enum srv_list_strategy svc_list(void *ud, const char *path,
				       const char **merge_key)
{
	(void)ud;
	if (strlen(asked) + strlen(path) + 2 < sizeof asked) {
		strcat(asked, path);
		strcat(asked, ";");
	}
	if (strcmp(path, "spec.ports") == 0) {
		*merge_key = "port";
		return SRV_LIST_MERGE_KEYED;
	}
	if (strcmp(path, "spec.containers") == 0) {
		*merge_key = "name";
		return SRV_LIST_MERGE_KEYED;
	}
	if (strcmp(path, "spec.containers.ports") == 0) {
		*merge_key = "containerPort";
		return SRV_LIST_MERGE_KEYED;
	}
	if (strcmp(path, "metadata.finalizers") == 0 ||
	    strcmp(path, "spec.matrix") == 0 || strcmp(path, "spec.mixed") == 0)
		return SRV_LIST_MERGE_SET;
	return SRV_LIST_REPLACE;
}

static const struct srv_smp_schema svc_schema = { svc_list, NULL };

static lp_err smp_svc(const json_t *doc, const json_t *patch, json_t **out,
		      struct srv_error *err)
{
	return srv_strategic_merge_patch(doc, patch, &svc_schema, out, err);
}

#define SVC                                                                   \
	"{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{"           \
	"\"name\":\"web\",\"labels\":{\"a\":\"1\",\"b\":\"2\"},"                \
	"\"finalizers\":[\"f1\",\"f2\"]},\"spec\":{\"type\":\"ClusterIP\","     \
	"\"clusterIP\":\"10.0.0.1\",\"selector\":{\"app\":\"web\"},"            \
	"\"ports\":[{\"port\":80,\"name\":\"http\"},"                          \
	"{\"port\":443,\"name\":\"https\"}]}}"

/* SVC with spec replaced by the given members. */
static char *svc_with(const char *metadata, const char *spec)
{
	json_t *d = J(SVC);
	char *s;

	if (metadata)
		json_object_set_new(d, "metadata", J(metadata));
	if (spec)
		json_object_set_new(d, "spec", J(spec));
	s = json_dumps(d, JSON_COMPACT);
	json_decref(d);
	return s;
}

static void smp_ok(const char *doc, const char *patch, const char *want)
{
	expect_ok(smp_svc, doc, patch, want);
}

Test(strategic_merge, service_merges_ports_by_key_and_finalizers_as_a_set)
{
	char *want = svc_with(
		"{\"name\":\"web\",\"labels\":{\"b\":\"2\",\"c\":\"3\"},"
		"\"finalizers\":[\"f1\",\"f2\",\"f3\"]}",
		"{\"type\":\"ClusterIP\",\"clusterIP\":\"10.0.0.1\","
		"\"selector\":{\"app\":\"web\"},\"ports\":["
		"{\"port\":80,\"name\":\"http\"},"
		"{\"port\":443,\"name\":\"https\",\"targetPort\":8443},"
		"{\"port\":8080,\"name\":\"alt\"}]}");

	asked[0] = '\0';
	smp_ok(SVC,
	       "{\"metadata\":{\"labels\":{\"a\":null,\"c\":\"3\"},"
	       "\"finalizers\":[\"f2\",\"f3\"]},"
	       "\"spec\":{\"ports\":[{\"port\":443,\"targetPort\":8443},"
	       "{\"port\":8080,\"name\":\"alt\"}]}}",
	       want);
	cr_assert(strstr(asked, "spec.ports;"), "%s", asked);
	cr_assert(strstr(asked, "metadata.finalizers;"), "%s", asked);
	free(want);
}

/* Without $setElementOrder (kubectl always sends one), upstream puts patch
   items that the document does not order before the document's own. */
Test(strategic_merge, unanchored_new_items_go_first_as_upstream)
{
	char *want = svc_with("{\"name\":\"web\",\"labels\":{\"a\":\"1\","
			      "\"b\":\"2\"},\"finalizers\":[\"f3\",\"f1\","
			      "\"f2\"]}",
			      NULL);

	smp_ok(SVC, "{\"metadata\":{\"finalizers\":[\"f3\"]}}", want);
	free(want);
	smp_ok("{\"spec\":{\"ports\":[{\"port\":1},{\"port\":2}]}}",
	       "{\"spec\":{\"ports\":[{\"port\":3}]}}",
	       "{\"spec\":{\"ports\":[{\"port\":3},{\"port\":1},"
	       "{\"port\":2}]}}");
}

Test(strategic_merge, nested_keyed_lists_use_field_name_paths)
{
	asked[0] = '\0';
	smp_ok("{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"i1\","
	       "\"ports\":[{\"containerPort\":80,\"protocol\":\"TCP\"}],"
	       "\"args\":[\"x\",\"y\"]}]}}",
	       "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"i2\","
	       "\"ports\":[{\"containerPort\":80,\"name\":\"http\"}],"
	       "\"args\":[\"z\"]}]}}",
	       "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"i2\","
	       "\"ports\":[{\"containerPort\":80,\"protocol\":\"TCP\","
	       "\"name\":\"http\"}],\"args\":[\"z\"]}]}}");
	cr_assert(strstr(asked, "spec.containers.ports;"), "%s", asked);
	cr_assert(strstr(asked, "spec.containers.args;"), "%s", asked);
}

Test(strategic_merge, null_deletes_and_unmatched_nulls_vanish)
{
	smp_ok("{\"a\":{\"b\":1,\"c\":2}}",
	       "{\"a\":{\"b\":null,\"z\":null},\"n\":null,"
	       "\"new\":{\"x\":null,\"y\":{\"q\":null,\"r\":1}}}",
	       "{\"a\":{\"c\":2},\"new\":{\"y\":{\"r\":1}}}");
	/* a changed kind takes the patch's value */
	smp_ok("{\"a\":{\"b\":1},\"l\":[1]}", "{\"a\":[1,2],\"l\":{\"k\":1}}",
	       "{\"a\":[1,2],\"l\":{\"k\":1}}");
}

Test(strategic_merge, keyed_list_delete_directive)
{
	smp_ok(SVC, "{\"spec\":{\"ports\":[{\"port\":80,\"$patch\":\"delete\"},"
		    "{\"port\":9,\"$patch\":\"delete\"}]}}",
	       "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{"
	       "\"name\":\"web\",\"labels\":{\"a\":\"1\",\"b\":\"2\"},"
	       "\"finalizers\":[\"f1\",\"f2\"]},\"spec\":{\"type\":"
	       "\"ClusterIP\",\"clusterIP\":\"10.0.0.1\",\"selector\":{"
	       "\"app\":\"web\"},\"ports\":[{\"port\":443,\"name\":"
	       "\"https\"}]}}");
	/* every duplicate goes */
	smp_ok("{\"spec\":{\"ports\":[{\"port\":1},{\"port\":1},{\"port\":2,"
	       "\"v\":\"a\"},{\"port\":3}]}}",
	       "{\"spec\":{\"ports\":[{\"port\":1,\"$patch\":\"delete\"},"
	       "{\"port\":3,\"$patch\":\"delete\"}]}}",
	       "{\"spec\":{\"ports\":[{\"port\":2,\"v\":\"a\"}]}}");
	expect_err(smp_svc, SVC,
		   "{\"spec\":{\"ports\":[{\"$patch\":\"delete\"}]}}",
		   LP_E_BADREQUEST);
}

Test(strategic_merge, list_replace_directive)
{
	smp_ok("{\"spec\":{\"ports\":[{\"port\":1},{\"port\":2}]}}",
	       "{\"spec\":{\"ports\":[{\"$patch\":\"replace\"},{\"port\":9,"
	       "\"x\":null},{\"port\":7}]}}",
	       "{\"spec\":{\"ports\":[{\"port\":9},{\"port\":7}]}}");
	smp_ok("{\"spec\":{\"ports\":[{\"port\":1},{\"port\":2}]}}",
	       "{\"spec\":{\"ports\":[{\"$patch\":\"replace\"}]}}",
	       "{\"spec\":{\"ports\":[]}}");
}

Test(strategic_merge, map_directives)
{
	/* replace: the patch's members are the whole map */
	smp_ok("{\"m\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"},\"k\":1}}",
	       "{\"m\":{\"labels\":{\"$patch\":\"replace\",\"z\":\"9\"}}}",
	       "{\"m\":{\"labels\":{\"z\":\"9\"},\"k\":1}}");
	/* delete: the map goes */
	smp_ok(SVC, "{\"spec\":{\"selector\":{\"$patch\":\"delete\"}}}",
	       "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{"
	       "\"name\":\"web\",\"labels\":{\"a\":\"1\",\"b\":\"2\"},"
	       "\"finalizers\":[\"f1\",\"f2\"]},\"spec\":{\"type\":"
	       "\"ClusterIP\",\"clusterIP\":\"10.0.0.1\",\"ports\":["
	       "{\"port\":80,\"name\":\"http\"},{\"port\":443,\"name\":"
	       "\"https\"}]}}");
	smp_ok("{\"a\":1}", "{\"new\":{\"$patch\":\"delete\",\"x\":1}}",
	       "{\"a\":1}");
	/* merge is the default, said explicitly */
	smp_ok("{\"m\":{\"a\":1}}", "{\"m\":{\"$patch\":\"merge\",\"b\":2}}",
	       "{\"m\":{\"a\":1,\"b\":2}}");
	/* at the top */
	smp_ok("{\"a\":1,\"b\":2}", "{\"$patch\":\"delete\"}", "{}");
	smp_ok("{\"a\":1,\"b\":2}", "{\"$patch\":\"replace\",\"c\":3}",
	       "{\"c\":3}");
}

Test(strategic_merge, retain_keys_clears_the_others_then_merges)
{
	smp_ok("{\"spec\":{\"type\":\"ClusterIP\",\"clusterIP\":\"1\","
	       "\"selector\":{\"a\":\"b\"},\"ports\":[{\"port\":80}]}}",
	       "{\"spec\":{\"$retainKeys\":[\"type\",\"ports\",\"new\"],"
	       "\"type\":\"NodePort\",\"clusterIP\":null}}",
	       "{\"spec\":{\"type\":\"NodePort\",\"ports\":[{\"port\":80}]}}");
	expect_err(smp_svc, SVC,
		   "{\"spec\":{\"$retainKeys\":[\"type\"],\"clusterIP\":\"x\"}}",
		   LP_E_BADREQUEST);
	expect_err(smp_svc, SVC, "{\"spec\":{\"$retainKeys\":\"type\"}}",
		   LP_E_BADREQUEST);
}

Test(strategic_merge, set_element_order_orders_without_adding)
{
	smp_ok("{\"spec\":{\"ports\":[{\"port\":80},{\"port\":443},"
	       "{\"port\":8080}]}}",
	       "{\"spec\":{\"$setElementOrder/ports\":[{\"port\":9999},"
	       "{\"port\":8080},{\"port\":80},{\"port\":443}]}}",
	       "{\"spec\":{\"ports\":[{\"port\":8080},{\"port\":80},"
	       "{\"port\":443}]}}");
	/* server-only items stay where the document had them */
	smp_ok("{\"spec\":{\"ports\":[{\"port\":1,\"o\":\"a\"},{\"port\":2},"
	       "{\"port\":7},{\"port\":9},{\"port\":8},{\"port\":3},"
	       "{\"port\":4}]}}",
	       "{\"spec\":{\"$setElementOrder/ports\":[{\"port\":2},"
	       "{\"port\":1},{\"port\":4},{\"port\":3}]}}",
	       "{\"spec\":{\"ports\":[{\"port\":2},{\"port\":1,\"o\":\"a\"},"
	       "{\"port\":7},{\"port\":9},{\"port\":8},{\"port\":4},"
	       "{\"port\":3}]}}");
	/* with the list's patch: merged, then ordered */
	smp_ok("{\"spec\":{\"ports\":[{\"port\":1},{\"port\":2,\"v\":2}]}}",
	       "{\"spec\":{\"$setElementOrder/ports\":[{\"port\":4},"
	       "{\"port\":1},{\"port\":2},{\"port\":3}],\"ports\":["
	       "{\"port\":4,\"v\":4},{\"port\":3,\"v\":3}]}}",
	       "{\"spec\":{\"ports\":[{\"port\":4,\"v\":4},{\"port\":1},"
	       "{\"port\":2,\"v\":2},{\"port\":3,\"v\":3}]}}");
	/* primitive lists too */
	smp_ok("{\"metadata\":{\"finalizers\":[\"a\",\"b\",\"c\"]}}",
	       "{\"metadata\":{\"$setElementOrder/finalizers\":[\"c\",\"a\","
	       "\"b\",\"zz\"]}}",
	       "{\"metadata\":{\"finalizers\":[\"c\",\"a\",\"b\"]}}");
	/* on a list the document lacks */
	smp_ok("{\"metadata\":{}}",
	       "{\"metadata\":{\"$setElementOrder/finalizers\":[\"b\",\"zz\","
	       "\"a\"],\"finalizers\":[\"b\",\"a\"]}}",
	       "{\"metadata\":{\"finalizers\":[\"b\",\"a\"]}}");
}

Test(strategic_merge, set_element_order_must_agree_with_the_patch_list)
{
	expect_err(smp_svc,
		   "{\"spec\":{\"ports\":[{\"port\":1},{\"port\":3},"
		   "{\"port\":2}]}}",
		   "{\"spec\":{\"$setElementOrder/ports\":[{\"port\":1},"
		   "{\"port\":2},{\"port\":3}],\"ports\":[{\"port\":3,\"v\":3},"
		   "{\"port\":1,\"v\":1}]}}",
		   LP_E_BADREQUEST);
	expect_err(smp_svc, SVC,
		   "{\"spec\":{\"$setElementOrder/ports\":{\"port\":1}}}",
		   LP_E_BADREQUEST);
	expect_err(smp_svc, SVC, "{\"spec\":{\"$setElementOrder\":[]}}",
		   LP_E_BADREQUEST);
	expect_err(smp_svc, SVC,
		   "{\"spec\":{\"$setElementOrder/ports\":[{\"name\":\"x\"}]}}",
		   LP_E_BADREQUEST);
}

Test(strategic_merge, delete_from_primitive_list)
{
	smp_ok("{\"metadata\":{\"finalizers\":[\"f1\",\"f2\",\"f1\",\"f3\"]}}",
	       "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":"
	       "[\"f1\",\"nope\"]}}",
	       "{\"metadata\":{\"finalizers\":[\"f2\",\"f3\"]}}");
	/* deletion wins over an addition of the same value */
	smp_ok("{\"metadata\":{\"finalizers\":[\"f1\"]}}",
	       "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":"
	       "[\"f2\"],\"finalizers\":[\"f2\",\"f4\"]}}",
	       "{\"metadata\":{\"finalizers\":[\"f4\",\"f1\"]}}");
	/* never adds the list */
	smp_ok("{\"metadata\":{}}",
	       "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":"
	       "[\"f1\"]}}",
	       "{\"metadata\":{}}");
	expect_err(smp_svc, SVC,
		   "{\"metadata\":{\"$deleteFromPrimitiveList\":[\"f1\"]}}",
		   LP_E_BADREQUEST);
	/* a value that is no list differs in type from the list: kube's
	   mergeMap skips it */
	expect_ok(smp_svc, SVC,
		  "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":"
		  "\"f1\"}}",
		  SVC);
}

Test(strategic_merge, unknown_or_malformed_directives_are_bad_requests)
{
	static const char *const bad[] = {
		"{\"metadata\":{\"$patch\":\"frobnicate\"}}",
		"{\"metadata\":{\"$patch\":5}}",
		"{\"$patch\":\"nope\"}",
		"{\"spec\":{\"ports\":[{\"$patch\":\"merge\"}]}}",
		"{\"spec\":{\"ports\":[{\"port\":1,\"$patch\":\"zap\"}]}}",
		"{\"spec\":{\"other\":[{\"$patch\":\"zap\"}]}}",
		"{\"spec\":{\"new\":{\"deeper\":{\"$patch\":\"zap\"}}}}",
		/* and the list rules */
		"{\"spec\":{\"ports\":[{\"name\":\"no-key\"}]}}",
		"{\"spec\":{\"ports\":[1,2]}}",
		"{\"metadata\":{\"finalizers\":[\"a\",1]}}",
		"{\"metadata\":{\"finalizers\":[{\"a\":1}]}}",
		"[]",
		"\"x\"",
	};
	size_t i;

	for (i = 0; i < sizeof bad / sizeof *bad; i++)
		expect_err(smp_svc, SVC, bad[i], LP_E_BADREQUEST);
}

Test(strategic_merge, list_of_lists_is_invalid_as_in_kube)
{
	expect_err(smp_svc, "{\"spec\":{\"matrix\":[[1]]}}",
		   "{\"spec\":{\"matrix\":[[2]]}}", LP_E_INVALID);
}

Test(strategic_merge, lists_replace_without_a_schema)
{
	expect_ok(smp_null_schema, SVC,
		  "{\"spec\":{\"ports\":[{\"port\":1,\"x\":null}]},"
		  "\"metadata\":{\"finalizers\":[\"z\"]}}",
		  "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{"
		  "\"name\":\"web\",\"labels\":{\"a\":\"1\",\"b\":\"2\"},"
		  "\"finalizers\":[\"z\"]},\"spec\":{\"type\":\"ClusterIP\","
		  "\"clusterIP\":\"10.0.0.1\",\"selector\":{\"app\":\"web\"},"
		  "\"ports\":[{\"port\":1}]}}");
}

Test(strategic_merge, keys_starting_with_a_dollar_are_plain_fields)
{
	smp_ok("{\"schema\":{\"$ref\":\"a\"}}",
	       "{\"schema\":{\"$ref\":\"b\",\"$schema\":\"c\"}}",
	       "{\"schema\":{\"$ref\":\"b\",\"$schema\":\"c\"}}");
}

Test(strategic_merge, deep_nesting_is_refused_without_crashing)
{
	json_t *deep = deep_object(10000), *doc = J(SVC), *out;
	json_t *wrap = json_pack("{s:O}", "spec", deep);
	struct srv_error err;

	cr_assert_eq(run(smp_svc, doc, wrap, &out, &err), LP_E_BADREQUEST);
	cr_assert_eq(run(smp_svc, wrap, doc, &out, &err), LP_E_INVALID);
	json_decref(wrap);
	json_decref(deep);
	json_decref(doc);
}

Test(strategic_merge, document_must_be_an_object)
{
	expect_err(smp_svc, "[1]", "{}", LP_E_INVAL);
}

Test(strategic_merge, big_lists_merge_in_near_linear_time,
     .timeout = BIG_TIMEOUT)
{
	/* 60000 ports in the document, 60000 in the patch (half new) with
	   an order of all of them: a scan per element would be 10^10 steps */
	json_t *doc = json_object(), *patch = json_object();
	json_t *dports = json_array(), *pports = json_array();
	json_t *order = json_array(), *out;
	struct srv_error err;
	int i, n = 60000;

	for (i = 0; i < n; i++) {
		json_array_append_new(dports, json_pack("{s:i}", "port", i));
		json_array_append_new(pports, json_pack("{s:i,s:i}", "port",
							i + n / 2, "v", i));
	}
	for (i = n + n / 2 - 1; i >= 0; i--)
		json_array_append_new(order, json_pack("{s:i}", "port", i));
	json_object_set_new(doc, "spec", json_pack("{s:o}", "ports", dports));
	json_object_set_new(patch, "spec",
			    json_pack("{s:o,s:o}", "ports", pports,
				      "$setElementOrder/ports", order));
	/* the patch list must follow the order list: reverse it */
	{
		json_t *rev = json_array();
		for (i = n - 1; i >= 0; i--)
			json_array_append(rev, json_array_get(pports, (size_t)i));
		json_object_set_new(json_object_get(patch, "spec"), "ports",
				    rev);
	}
	cr_assert_eq(run(smp_svc, doc, patch, &out, &err), LP_OK, "%s",
		     err.message);
	{
		json_t *ports = json_object_get(json_object_get(out, "spec"),
						"ports");
		cr_assert_eq(json_array_size(ports), (size_t)(n + n / 2));
		cr_assert_eq(json_integer_value(json_object_get(
				     json_array_get(ports, 0), "port")),
			     n + n / 2 - 1);
	}
	json_decref(out);
	json_decref(doc);
	json_decref(patch);
}

/* ---- random inputs: never a crash, a leak or a changed input ------------ */

static const char *const fuzz_keys[] = {
	"a", "b", "ports", "finalizers", "port", "name", "$patch",
	"$retainKeys", "$setElementOrder/ports", "$setElementOrder/finalizers",
	"$deleteFromPrimitiveList/finalizers", "$setElementOrder",
	"$deleteFromPrimitiveList/ports",
};
static const char *const fuzz_strs[] = {
	"replace", "delete", "merge", "bogus", "a", "b", "ports", "port",
};

static json_t *fuzz_value(uint64_t *st, int depth)
{
	json_t *v;
	size_t i, n;

	switch (ts_rand(st) % (depth > 0 ? 9 : 4)) {
	case 0:
		return json_integer((json_int_t)(ts_rand(st) % 4));
	case 1:
		return json_string(fuzz_strs[ts_rand(st) % 8]);
	case 2:
		return json_null();
	case 3:
		return json_boolean(ts_rand(st) % 2);
	case 4:
	case 5:
		v = json_object();
		n = ts_rand(st) % 5;
		for (i = 0; i < n; i++)
			json_object_set_new(v, fuzz_keys[ts_rand(st) % 13],
					    fuzz_value(st, depth - 1));
		return v;
	case 6: /* a keyed-looking list */
		v = json_array();
		n = ts_rand(st) % 4;
		for (i = 0; i < n; i++) {
			json_t *e = json_pack("{s:i}", "port",
					      (int)(ts_rand(st) % 4));
			if (ts_rand(st) % 3 == 0)
				json_object_set_new(e, "$patch",
						    json_string(fuzz_strs[ts_rand(st) % 4]));
			if (ts_rand(st) % 3 == 0)
				json_object_set_new(e, "x",
						    fuzz_value(st, depth - 1));
			json_array_append_new(v, e);
		}
		return v;
	default:
		v = json_array();
		n = ts_rand(st) % 4;
		for (i = 0; i < n; i++)
			json_array_append_new(v, fuzz_value(st, depth - 1));
		return v;
	}
}

static enum srv_list_strategy fuzz_list(void *ud, const char *path,
					const char **merge_key)
{
	size_t n = strlen(path);

	(void)ud;
	if (n >= 5 && strcmp(path + n - 5, "ports") == 0) {
		*merge_key = "port";
		return SRV_LIST_MERGE_KEYED;
	}
	if (n >= 10 && strcmp(path + n - 10, "finalizers") == 0)
		return SRV_LIST_MERGE_SET;
	return SRV_LIST_REPLACE;
}

static const struct srv_smp_schema fuzz_schema = { fuzz_list, NULL };

static lp_err smp_fuzz(const json_t *doc, const json_t *patch, json_t **out,
		       struct srv_error *err)
{
	return srv_strategic_merge_patch(doc, patch, &fuzz_schema, out, err);
}

static char *fuzz_pointer(uint64_t *st)
{
	static const char *const toks[] = { "a", "b", "0", "1", "-", "ports",
					    "port", "01", "~0", "~1", "" };
	char *p = malloc(64);
	size_t i, n = ts_rand(st) % 4, len = 0;

	p[0] = '\0';
	for (i = 0; i < n; i++)
		len += (size_t)sprintf(p + len, "/%s", toks[ts_rand(st) % 11]);
	return p;
}

static json_t *fuzz_ops(uint64_t *st)
{
	static const char *const names[] = { "add", "remove", "replace",
					     "move", "copy", "test" };
	json_t *ops = json_array();
	size_t i, n = ts_rand(st) % 5;

	for (i = 0; i < n; i++) {
		char *path = fuzz_pointer(st), *from = fuzz_pointer(st);
		json_t *op = json_pack("{s:s,s:s,s:s}", "op",
				       names[ts_rand(st) % 6], "path", path,
				       "from", from);
		if (ts_rand(st) % 8)
			json_object_set_new(op, "value", fuzz_value(st, 2));
		json_array_append_new(ops, op);
		free(path);
		free(from);
	}
	return ops;
}

static void fuzz_one(patch_fn fn, json_t *doc, json_t *patch)
{
	json_t *out;
	struct srv_error err;
	lp_err rc = run(fn, doc, patch, &out, &err);

	cr_assert(rc == LP_OK || rc == LP_E_BADREQUEST || rc == LP_E_INVALID,
		  "unexpected %s: %s", lp_errname(rc), err.message);
	json_decref(out);
}

Test(fuzz, random_patches_fail_cleanly_or_apply, .timeout = BIG_TIMEOUT)
{
	uint64_t st = ts_seed("patch_fuzz", 0x6902);
	int i;

	for (i = 0; i < 3000; i++) {
		json_t *doc = json_object(), *patch, *ops;
		size_t k, n = ts_rand(&st) % 5;

		for (k = 0; k < n; k++)
			json_object_set_new(doc, fuzz_keys[ts_rand(&st) % 6],
					    fuzz_value(&st, 3));
		patch = fuzz_value(&st, 4);
		ops = fuzz_ops(&st);
		fuzz_one(smp_fuzz, doc, patch);
		fuzz_one(srv_merge_patch, doc, patch);
		fuzz_one(srv_json_patch, doc, ops);
		json_decref(ops);
		json_decref(patch);
		json_decref(doc);
	}
}

/* ---- list edge cases ---------------------------------------------------- */

Test(strategic_merge, list_edge_cases)
{
	/* empty merge lists stay empty */
	smp_ok("{\"spec\":{\"ports\":[]}}", "{\"spec\":{\"ports\":[]}}",
	       "{\"spec\":{\"ports\":[]}}");
	/* duplicates in the document: the first one merges, order kept */
	smp_ok("{\"spec\":{\"ports\":[{\"port\":1,\"v\":1},{\"port\":1,"
	       "\"v\":2}]}}",
	       "{\"spec\":{\"ports\":[{\"port\":1,\"x\":1}]}}",
	       "{\"spec\":{\"ports\":[{\"port\":1,\"v\":1,\"x\":1},{\"port\":1,"
	       "\"v\":2}]}}");
	smp_ok("{\"metadata\":{\"finalizers\":[\"a\",\"a\",\"b\"]}}",
	       "{\"metadata\":{\"finalizers\":[\"b\",\"b\"]}}",
	       "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}");
	/* directive elements in the patch list are skipped by the order
	   check; an emptied list is set */
	smp_ok("{\"spec\":{\"ports\":[{\"port\":1},{\"port\":2}]}}",
	       "{\"spec\":{\"$setElementOrder/ports\":[{\"port\":2}],"
	       "\"ports\":[{\"port\":1,\"$patch\":\"delete\"},{\"port\":2,"
	       "\"v\":2}]}}",
	       "{\"spec\":{\"ports\":[{\"port\":2,\"v\":2}]}}");
	smp_ok("{\"spec\":{\"ports\":[{\"port\":1}]}}",
	       "{\"spec\":{\"$setElementOrder/ports\":[],"
	       "\"ports\":[{\"port\":1,\"$patch\":\"delete\"}]}}",
	       "{\"spec\":{\"ports\":[]}}");
	/* a number merge key matches by value, 1 and 1.0 being different
	   types as in upstream's decoding */
	smp_ok("{\"spec\":{\"ports\":[{\"port\":1}]}}",
	       "{\"spec\":{\"ports\":[{\"port\":\"1\",\"s\":true}]}}",
	       "{\"spec\":{\"ports\":[{\"port\":\"1\",\"s\":true},"
	       "{\"port\":1}]}}");
	static const char *const bad[][2] = {
		/* keyed list of scalars */
		{ "{\"spec\":{\"ports\":[1]}}", "{\"spec\":{\"ports\":[2]}}" },
		/* set list of objects */
		{ "{\"metadata\":{\"finalizers\":[{\"a\":1}]}}",
		  "{\"metadata\":{\"finalizers\":[{\"a\":2}]}}" },
		/* a document element without the merge key */
		{ "{\"spec\":{\"ports\":[{\"name\":\"x\"}]}}",
		  "{\"spec\":{\"ports\":[{\"port\":1}]}}" },
		/* an order list of scalars for a keyed list */
		{ "{\"spec\":{\"ports\":[{\"port\":1}]}}",
		  "{\"spec\":{\"$setElementOrder/ports\":[1]}}" },
		/* an order for a field that is not a list */
		{ "{\"spec\":{\"ports\":{\"port\":1}}}",
		  "{\"spec\":{\"$setElementOrder/ports\":[{\"port\":1}]}}" },
		{ "{\"spec\":{\"ports\":[{\"port\":1}]}}",
		  "{\"spec\":{\"$setElementOrder/ports\":[{\"port\":1}],"
		  "\"ports\":null}}" },
		/* deleting objects from a primitive list */
		{ "{\"metadata\":{\"finalizers\":[{\"a\":1}]}}",
		  "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":"
		  "[{\"a\":1}]}}" },
		/* an unknown directive in a list the order check walks */
		{ "{\"spec\":{\"ports\":[{\"port\":1}]}}",
		  "{\"spec\":{\"$setElementOrder/ports\":[{\"port\":1}],"
		  "\"ports\":[{\"port\":1},{\"$patch\":\"zap\"}]}}" },
	};
	size_t i;

	for (i = 0; i < sizeof bad / sizeof *bad; i++)
		expect_err(smp_svc, bad[i][0], bad[i][1], LP_E_BADREQUEST);
	expect_err(smp_svc, "{\"metadata\":{\"finalizers\":[[\"a\"]]}}",
		   "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":"
		   "[[\"a\"]]}}",
		   LP_E_INVALID);
}

Test(strategic_merge, long_field_paths)
{
	char key[300], doc[1024], patch[1024], want[1024];

	memset(key, 'k', sizeof key - 1);
	key[sizeof key - 1] = '\0';
	snprintf(doc, sizeof doc, "{\"%s\":{\"%s\":{\"l\":[1],\"m\":1}}}", key,
		 key);
	snprintf(patch, sizeof patch, "{\"%s\":{\"%s\":{\"l\":[2],\"n\":2}}}",
		 key, key);
	snprintf(want, sizeof want,
		 "{\"%s\":{\"%s\":{\"l\":[2],\"m\":1,\"n\":2}}}", key, key);
	smp_ok(doc, patch, want);
}

static enum srv_list_strategy broken_list(void *ud, const char *path,
					  const char **merge_key)
{
	(void)ud;
	(void)path;
	*merge_key = NULL;
	return SRV_LIST_MERGE_KEYED;
}

static lp_err smp_broken(const json_t *doc, const json_t *patch,
			 json_t **out, struct srv_error *err)
{
	static const struct srv_smp_schema broken = { broken_list, NULL };

	return srv_strategic_merge_patch(doc, patch, &broken, out, err);
}

Test(strategic_merge, keyed_list_without_merge_key_is_a_schema_error)
{
	expect_err(smp_broken, "{\"l\":[{\"a\":1}]}", "{\"l\":[{\"a\":2}]}",
		   LP_E_INVAL);
}

Test(strategic_merge, retain_keys_ignores_non_string_entries)
{
	smp_ok("{\"s\":{\"a\":1,\"b\":2}}",
	       "{\"s\":{\"$retainKeys\":[1,null,\"a\"],\"a\":3}}",
	       "{\"s\":{\"a\":3}}");
}

/* ---- out of memory ------------------------------------------------------ */

/* Fails exactly the allocation that brings the countdown to zero. */

static void *oom_malloc(size_t n)
{
	if (oom_countdown > 0 && --oom_countdown == 0) {
		oom_failed++;
		return NULL;
	}
	return malloc(n);
}

static void oom_free(void *p)
{
	free(p);
}

/* Call fn with its Nth allocation failing, for N = 1, 2, ... until a call
   needs fewer than N: each must give the right result or LP_E_NOMEM. */
static void oom_loop(patch_fn fn, const char *doc, const char *patch)
{
	json_t *d = J(doc), *p = J(patch), *want = NULL, *out;
	struct srv_error err;
	lp_err rc;
	long n;

	cr_assert_eq(run(fn, d, p, &want, &err), LP_OK, "%s", err.message);
	json_set_alloc_funcs(oom_malloc, oom_free);
	for (n = 1;; n++) {
		oom_failed = 0;
		oom_countdown = n;
		rc = run(fn, d, p, &out, &err);
		oom_countdown = -1;
		if (!oom_failed) {
			cr_assert_eq(rc, LP_OK);
			assert_json_eq(out, want, "result without a failure");
			json_decref(out);
			break;
		}
		if (rc == LP_OK) {
			assert_json_eq(out, want, "result after a failure");
			json_decref(out);
		} else {
			cr_assert_eq(rc, LP_E_NOMEM, "allocation %ld: %s: %s", n,
				     lp_errname(rc), err.message);
		}
	}
	json_set_alloc_funcs(malloc, free);
	cr_log_info("%ld allocations", n);
	json_decref(want);
	json_decref(d);
	json_decref(p);
}

Test(oom, every_allocation_failure_is_nomem_and_leaks_nothing,
     .timeout = BIG_TIMEOUT)
{
	oom_loop(srv_merge_patch, SVC,
		 "{\"metadata\":{\"labels\":{\"a\":null,\"n\":{\"x\":null,"
		 "\"y\":[1,null]}}},\"spec\":{\"ports\":[{\"port\":1}]}}");
	oom_loop(srv_merge_patch, "{\"a\":1}", "[{\"b\":null},2]");
	oom_loop(srv_json_patch, SVC,
		 "[{\"op\":\"add\",\"path\":\"/spec/ports/-\",\"value\":"
		 "{\"port\":9}},{\"op\":\"copy\",\"from\":\"/metadata\","
		 "\"path\":\"/spec/m\"},{\"op\":\"move\",\"from\":"
		 "\"/spec/selector\",\"path\":\"/sel\"},{\"op\":\"test\","
		 "\"path\":\"/sel/app\",\"value\":\"web\"},{\"op\":\"replace\","
		 "\"path\":\"/spec/ports/0\",\"value\":{\"port\":8}},"
		 "{\"op\":\"remove\",\"path\":\"/metadata/labels\"}]");
	oom_loop(smp_svc, SVC,
		 "{\"metadata\":{\"labels\":{\"a\":null,\"c\":\"3\"},"
		 "\"$setElementOrder/finalizers\":[\"f3\",\"f1\"],"
		 "\"finalizers\":[\"f3\"],"
		 "\"$deleteFromPrimitiveList/finalizers\":[\"f2\"]},"
		 "\"spec\":{\"$retainKeys\":[\"ports\",\"type\",\"selector\"],"
		 "\"selector\":{\"$patch\":\"replace\",\"x\":\"y\"},"
		 "\"$setElementOrder/ports\":[{\"port\":8080},{\"port\":443},"
		 "{\"port\":80}],\"ports\":[{\"port\":80,\"$patch\":\"delete\"},"
		 "{\"port\":8080,\"name\":\"alt\",\"n\":{\"q\":null}},"
		 "{\"port\":443,\"targetPort\":1}]},"
		 "\"new\":{\"ports\":[{\"port\":1}],\"l\":[{\"$patch\":\"delete\"},"
		 "{\"a\":null}]}}");
	oom_loop(smp_svc, "{\"spec\":{\"ports\":[{\"port\":1},{\"port\":2}]}}",
		 "{\"spec\":{\"ports\":[{\"$patch\":\"replace\"},{\"port\":3}]}}");
}

Test(oom, merge_patch_diff_returns_null_when_memory_runs_out)
{
	json_t *a = J(SVC), *b = J("{\"metadata\":{\"name\":\"x\"},"
				   "\"spec\":{\"ports\":[]},\"z\":1}");
	json_t *want = srv_merge_patch_diff(a, b), *d;
	long n;

	json_set_alloc_funcs(oom_malloc, oom_free);
	for (n = 1;; n++) {
		oom_failed = 0;
		oom_countdown = n;
		d = srv_merge_patch_diff(a, b);
		oom_countdown = -1;
		if (!oom_failed)
			break;
		if (d) {
			assert_json_eq(d, want, "diff after a failure");
			json_decref(d);
		}
	}
	json_set_alloc_funcs(malloc, free);
	assert_json_eq(d, want, "diff");
	json_decref(d);
	json_decref(want);
	json_decref(a);
	json_decref(b);
}

Test(api, missing_arguments_are_inval_not_crashes)
{
	json_t *o = J("{}"), *a = J("[]"), *out = UNTOUCHED;
	struct srv_error err = { 0 };

	cr_assert_eq(srv_merge_patch(NULL, o, &out, &err), LP_E_INVAL);
	cr_assert_eq(srv_merge_patch(o, NULL, &out, NULL), LP_E_INVAL);
	cr_assert_eq(srv_json_patch(o, NULL, &out, &err), LP_E_INVAL);
	cr_assert_eq(srv_json_patch(o, a, NULL, &err), LP_E_INVAL);
	cr_assert_eq(srv_strategic_merge_patch(NULL, o, NULL, &out, &err),
		     LP_E_INVAL);
	cr_assert_eq(out, UNTOUCHED);
	cr_assert_null(srv_merge_patch_diff(NULL, o));
	/* err may be NULL on any path */
	cr_assert_eq(srv_json_patch(o, o, &out, NULL), LP_E_BADREQUEST);
	json_decref(o);
	json_decref(a);
}

/* kube's library decodes a token with a replacer of "~1" and "~0" only:
   any other '~' is the key's own character. */
Test(json_patch, a_tilde_not_followed_by_0_or_1_is_literal)
{
	json_t *doc = J("{\"m\":{}}"), *out = NULL;
	json_t *ops = J("[{\"op\":\"add\",\"path\":\"/m/~2\",\"value\":1},"
			"{\"op\":\"add\",\"path\":\"/m/a~\",\"value\":2},"
			"{\"op\":\"add\",\"path\":\"/m/~01\",\"value\":3}]");
	struct srv_error err;
	cr_assert_eq(run(srv_json_patch, doc, ops, &out, &err), LP_OK, "%s",
		     err.message);
	const json_t *m = json_object_get(out, "m");
	cr_assert_eq(json_integer_value(json_object_get(m, "~2")), 1);
	cr_assert_eq(json_integer_value(json_object_get(m, "a~")), 2);
	cr_assert_eq(json_integer_value(json_object_get(m, "~1")), 3);
	json_decref(out);
	json_decref(ops);
	json_decref(doc);
}
