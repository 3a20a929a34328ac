/*
 * fuzz_patch.c -- the three PATCH formats (server/patch.h) on arbitrary
 * documents: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and
 * strategic merge patch, plus srv_merge_patch_diff.
 *
 * Input: JSON text, an array whose first two elements are A and B (NULs
 * allowed in strings). Anything else is ignored. A is the document; B is
 * used as a merge patch, as JSON patch operations and as a strategic merge
 * patch (with no schema and with a small schema of keyed and set lists);
 * A and B are also diffed.
 *
 * Invariants:
 *   1. No function modifies its inputs; each succeeds or fails with one of
 *      its documented codes, and a failure leaves *out untouched.
 *   2. Diff: for two objects A and B without nulls anywhere, applying to A
 *      the merge patch srv_merge_patch_diff(A, B) gives B; diff(A, A) is {}.
 *   3. Merge patch: a null-free patch applied twice gives what it gave
 *      once (with nulls it need not: kube's prunes nulls only in values it
 *      adds, so a second application can keep them).
 *   4. JSON patch is all or nothing: with a failing `test` in front, the
 *      patch fails and writes nothing; a patch that applies, followed by a
 *      `test` of the whole result, applies and gives the same result.
 *   5. Strategic merge without a schema, for a null-free patch with no
 *      `$` directive, gives what the JSON merge patch gives, when it
 *      succeeds (lists then all replace, as in a merge patch).
 * Numbers compare as kube sees them: 1 and 1.0 are the same number.
 */
#include <jansson.h>
#include <stdbool.h>

#include "fuzz.h"
#include "patch.h"
#include "schema.h"

/* The patch functions' limits (patch.c): depth 1000, 10000 operations. */
#define MAX_DEPTH 1000
#define MAX_OPS 10000


/* Does v hold a null anywhere, or (keys) an object key starting with '$'? */
static bool has(const json_t *v, bool keys)
{
	if (json_is_null(v))
		return !keys;
	if (json_is_object(v)) {
		const char *k;
		json_t *c;
		json_object_foreach((json_t *)v, k, c)
			if ((keys && k[0] == '$') || has(c, keys))
				return true;
	} else if (json_is_array(v)) {
		for (size_t i = 0; i < json_array_size(v); i++)
			if (has(json_array_get(v, i), keys))
				return true;
	}
	return false;
}

static int height(const json_t *v)
{
	int h = 0;
	if (json_is_object(v)) {
		const char *k;
		json_t *c;
		json_object_foreach((json_t *)v, k, c) {
			int ch = height(c);
			if (ch > h)
				h = ch;
		}
		return h + 1;
	}
	if (json_is_array(v)) {
		for (size_t i = 0; i < json_array_size(v); i++) {
			int ch = height(json_array_get(v, i));
			if (ch > h)
				h = ch;
		}
		return h + 1;
	}
	return 0;
}

static bool is_code(lp_err rc, const lp_err *ok, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (rc == ok[i])
			return true;
	return false;
}

#define CHECK_CODE(rc, what, ...)                                             \
	do {                                                                  \
		static const lp_err ok_[] = {__VA_ARGS__};                    \
		FUZZ_CHECK(is_code(rc, ok_, sizeof ok_ / sizeof ok_[0]),      \
			   "%s gave %s", what, lp_errname(rc));               \
	} while (0)

/* Sentinel for invariant 1: a failed call must leave *out alone. */
static json_t untouched_;
#define UNTOUCHED (&untouched_)

static void merge_case(const json_t *a, const json_t *b)
{
	struct srv_error err = {0};
	json_t *r = UNTOUCHED;
	lp_err rc = srv_merge_patch(a, b, &r, &err);
	CHECK_CODE(rc, "srv_merge_patch", LP_OK, LP_E_BADREQUEST,
		   LP_E_INVALID, LP_E_NOMEM);
	if (rc) {
		FUZZ_CHECK(r == UNTOUCHED, "a failed merge patch wrote out");
		return;
	}
	if (!has(b, false)) { /* 3 */
		json_t *r2 = NULL;
		if (srv_merge_patch(r, b, &r2, &err) == LP_OK) {
			FUZZ_CHECK(srv_json_value_eq(r, r2), "a merge patch is not "
						"idempotent");
			json_decref(r2);
		}
	}
	json_decref(r);
}

static void diff_case(const json_t *a, const json_t *b)
{
	if (!json_is_object(a) || !json_is_object(b) || has(a, false) ||
	    has(b, false))
		return;
	json_t *d = srv_merge_patch_diff(a, b);
	if (!d)
		return; /* too deep, or out of memory */
	struct srv_error err = {0};
	json_t *r = NULL;
	lp_err rc = srv_merge_patch(a, d, &r, &err);
	FUZZ_CHECK(rc == LP_OK, "the diff does not apply: %s", err.message);
	FUZZ_CHECK(srv_json_value_eq(r, b), "A + diff(A, B) is not B");
	json_decref(r);
	json_decref(d);
	d = srv_merge_patch_diff(a, a);
	FUZZ_CHECK(d && json_object_size(d) == 0, "diff(A, A) is not {}");
	json_decref(d);
}

static void json_patch_case(const json_t *a, const json_t *b)
{
	struct srv_error err = {0};
	json_t *r = UNTOUCHED;
	lp_err rc = srv_json_patch(a, b, &r, &err);
	CHECK_CODE(rc, "srv_json_patch", LP_OK, LP_E_BADREQUEST, LP_E_INVALID,
		   LP_E_ENTITYTOOLARGE, LP_E_NOMEM);
	if (rc)
		FUZZ_CHECK(r == UNTOUCHED, "a failed json patch wrote out");
	if (!json_is_array(b) || json_array_size(b) >= MAX_OPS)
		goto out;
	/* 4: a test that cannot pass, in front. A sentinel object differs
	   from A unless A is that very object. */
	json_t *ops = json_array(), *x = UNTOUCHED;
	json_t *never = json_pack("{s:b}", "\x01lapis-fuzz-never", 1);
	if (!ops || !never || json_array_append_new(
		    ops, json_pack("{s:s,s:s,s:O}", "op", "test", "path", "",
				   "value", never)) ||
	    json_array_extend(ops, (json_t *)b)) {
		json_decref(never);
		json_decref(ops);
		goto out;
	}
	if (!srv_json_value_eq(a, never)) {
		lp_err rc2 = srv_json_patch(a, ops, &x, &err);
		FUZZ_CHECK(rc2 != LP_OK && x == UNTOUCHED,
			   "a failing test did not stop the patch");
	}
	json_decref(never);
	json_decref(ops);
	/* 4: a test of the whole result, after. */
	if (rc == LP_OK && height(r) + 2 <= MAX_DEPTH) {
		ops = json_deep_copy(b);
		json_t *r2 = NULL;
		if (ops && !json_array_append_new(
				   ops, json_pack("{s:s,s:s,s:O}", "op", "test",
						  "path", "", "value", r))) {
			lp_err rc2 = srv_json_patch(a, ops, &r2, &err);
			FUZZ_CHECK(rc2 == LP_OK || rc2 == LP_E_NOMEM,
				   "a test of the result failed: %s",
				   err.message);
			if (r2)
				FUZZ_CHECK(srv_json_value_eq(r, r2), "a test changed the "
							"result");
			json_decref(r2);
		}
		json_decref(ops);
	}
out:
	if (rc == LP_OK)
		json_decref(r);
}

/* A schema of the kind a built-in type gives: keyed and set lists. */
static enum srv_list_strategy list_of(void *ud, const char *path,
				      const char **merge_key)
{
	(void)ud;
	static const struct {
		const char *path, *key;
		enum srv_list_strategy st;
	} lists[] = {
		{"spec.containers", "name", SRV_LIST_MERGE_KEYED},
		{"spec.containers.env", "name", SRV_LIST_MERGE_KEYED},
		{"spec.containers.ports", "containerPort",
		 SRV_LIST_MERGE_KEYED},
		{"spec.ports", "port", SRV_LIST_MERGE_KEYED},
		{"a", "k", SRV_LIST_MERGE_KEYED},
		{"a.a", "k", SRV_LIST_MERGE_KEYED},
		{"metadata.finalizers", NULL, SRV_LIST_MERGE_SET},
		{"s", NULL, SRV_LIST_MERGE_SET},
		{"a.s", NULL, SRV_LIST_MERGE_SET},
	};
	for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
		if (strcmp(path, lists[i].path) == 0) {
			if (lists[i].key)
				*merge_key = lists[i].key;
			return lists[i].st;
		}
	return SRV_LIST_REPLACE;
}

static void strategic_case(const json_t *a, const json_t *b)
{
	static const struct srv_smp_schema schema = {list_of, NULL};
	struct srv_error err = {0};
	json_t *r = UNTOUCHED;
	lp_err rc = srv_strategic_merge_patch(a, b, NULL, &r, &err);
	CHECK_CODE(rc, "srv_strategic_merge_patch", LP_OK, LP_E_BADREQUEST,
		   LP_E_INVALID, LP_E_INVAL, LP_E_NOMEM);
	if (rc) {
		FUZZ_CHECK(r == UNTOUCHED, "a failed strategic merge wrote out");
	} else {
		if (!has(b, false) && !has(b, true)) { /* 5 */
			json_t *m = NULL;
			if (srv_merge_patch(a, b, &m, &err) == LP_OK)
				FUZZ_CHECK(srv_json_value_eq(r, m),
					   "a plain strategic merge differs "
					   "from the merge patch");
			json_decref(m);
		}
		json_decref(r);
	}
	r = UNTOUCHED;
	srv_error_clear(&err);
	rc = srv_strategic_merge_patch(a, b, &schema, &r, &err);
	CHECK_CODE(rc, "srv_strategic_merge_patch", LP_OK, LP_E_BADREQUEST,
		   LP_E_INVALID, LP_E_INVAL, LP_E_NOMEM);
	if (rc)
		FUZZ_CHECK(r == UNTOUCHED, "a failed strategic merge wrote out");
	else
		json_decref(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *in = json_loadb((const char *)data, size,
				JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	if (!json_is_array(in) || json_array_size(in) < 2) {
		json_decref(in);
		return 0;
	}
	const json_t *a = json_array_get(in, 0), *b = json_array_get(in, 1);
	json_t *a0 = json_deep_copy(a), *b0 = json_deep_copy(b);
	if (a0 && b0) {
		merge_case(a, b);
		diff_case(a, b);
		json_patch_case(a, b);
		strategic_case(a, b);
		/* 1: json_equal, not srv_json_value_eq(): not even 1 -> 1.0 may happen */
		FUZZ_CHECK(json_equal(a, a0) && json_equal(b, b0),
			   "a patch function modified its input");
	}
	json_decref(a0);
	json_decref(b0);
	json_decref(in);
	return 0;
}
