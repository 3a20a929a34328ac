/*
 * test_store.c -- reg_put_then (server/registry/store.c): an object write
 * and then a second write of the same key (its status) as one chain, on a
 * real store in a temporary directory.
 *
 * Invariants checked
 *  1. A create (ENG_CMP_ABSENT) or an update (ENG_CMP_MOD) and its second
 *     write take consecutive revisions R and R+1 in one commit group; *out
 *     is the first write as stored at R, the key then reads the second.
 *  2. A first write whose compare fails (exists, stale revision, absent)
 *     writes nothing, takes no revision and commits no group; *then_rc is
 *     LP_E_AGAIN.
 */
#include <criterion/criterion.h>

#include "../engine/common.h"
#include "registry/store.h"

static struct tc_store S;
static struct reg_key K;

static void setup(void)
{
	tc_open(&S, "regstore", NULL);
	cr_assert_eq(reg_object_key("g.example.com", "things", NULL, "a", &K),
		     LP_OK);
}

static void teardown(void)
{
	tc_done(&S);
}

TestSuite(reg_put_then, .init = setup, .fini = teardown);

static json_t *thing(const char *v)
{
	json_t *o =
	    json_pack("{s:s,s:{s:s,s:s},s:{s:s}}", "kind", "Thing", "metadata",
		      "name", "a", "resourceVersion", "9", "spec", "v", v);
	cr_assert_not_null(o);
	return o;
}

static json_t *with_status(const char *v, const char *phase)
{
	json_t *o = thing(v);
	json_object_set_new(o, "status", json_pack("{s:s}", "phase", phase));
	return o;
}

/* The stored object's string at obj.field (borrowed from *o). */
static const char *field(json_t *o, const char *obj, const char *f)
{
	return json_string_value(json_object_get(json_object_get(o, obj), f));
}

struct counts {
	uint64_t groups, txns;
	int64_t rev;
};

static struct counts counts(void)
{
	struct eng_stats st;
	eng_stats(S.e, &st);
	return (struct counts){st.groups, st.txns, st.rev};
}

/* put_then with cmp; checks invariant 1 and returns R. */
static int64_t chained(const struct eng_cmp *cmp, const char *v)
{
	struct counts before = counts();
	json_t *obj = thing(v);
	json_t *then = with_status(v, "Ready");
	char *out = NULL;
	size_t out_len = 0;
	int64_t rev = 0;
	lp_err then_rc = LP_E_IO;
	TC_OK(reg_put_then(S.e, &K, obj, cmp, then, &out, &out_len, &rev,
			   &then_rc));
	TC_OK(then_rc);
	json_decref(obj);
	json_decref(then);
	struct counts after = counts();
	cr_assert_eq(rev, before.rev + 1);
	cr_assert_eq(after.rev, rev + 1, "the second write at R+1");
	cr_assert_eq(after.groups, before.groups + 1, "one commit group");
	cr_assert_eq(after.txns, before.txns + 2);

	json_t *first = json_loadb(out, out_len, 0, NULL);
	cr_assert_not_null(first);
	char rv[24];
	snprintf(rv, sizeof rv, "%lld", (long long)rev);
	cr_assert_str_eq(field(first, "metadata", "resourceVersion"), rv);
	cr_assert_str_eq(field(first, "spec", "v"), v);
	cr_assert_null(json_object_get(first, "status"), "*out is the first");
	json_decref(first);
	free(out);

	struct reg_obj cur = {0};
	TC_OK(reg_get(S.e, &K, &cur));
	TC_OK(reg_obj_decode(&cur));
	cr_assert_eq(cur.mod, rev + 1);
	cr_assert_str_eq(field(cur.obj, "status", "phase"), "Ready");
	cr_assert_str_eq(field(cur.obj, "spec", "v"), v);
	reg_obj_free(&cur);
	return rev;
}

/* put_then with cmp fails with want and changes nothing (invariant 2). */
static void refused(const struct eng_cmp *cmp, lp_err want)
{
	struct counts before = counts();
	json_t *obj = thing("refused");
	json_t *then = with_status("refused", "Ready");
	char *out = NULL;
	size_t out_len = 0;
	lp_err then_rc = LP_OK;
	TC_RC(reg_put_then(S.e, &K, obj, cmp, then, &out, &out_len, NULL,
			   &then_rc),
	      want);
	cr_assert_eq(then_rc, LP_E_AGAIN);
	cr_assert_null(out);
	json_decref(obj);
	json_decref(then);
	struct counts after = counts();
	cr_assert_eq(after.rev, before.rev, "no revision taken");
	cr_assert_eq(after.txns, before.txns, "nothing committed");
}

Test(reg_put_then, create_then_status_is_one_group)
{
	const struct eng_cmp absent = {ENG_CMP_ABSENT, 0};
	chained(&absent, "one");
}

Test(reg_put_then, update_then_status_is_one_group)
{
	const struct eng_cmp absent = {ENG_CMP_ABSENT, 0};
	int64_t r = chained(&absent, "one");
	const struct eng_cmp at = {ENG_CMP_MOD, r + 1};
	chained(&at, "two");
}

Test(reg_put_then, stale_update_writes_nothing)
{
	const struct eng_cmp absent = {ENG_CMP_ABSENT, 0};
	int64_t r = chained(&absent, "one");
	const struct eng_cmp stale = {ENG_CMP_MOD, r};
	refused(&stale, LP_E_CONFLICT);
	struct reg_obj cur = {0};
	TC_OK(reg_get(S.e, &K, &cur));
	cr_assert_eq(cur.mod, r + 1);
	reg_obj_free(&cur);
}

Test(reg_put_then, create_of_existing_writes_nothing)
{
	const struct eng_cmp absent = {ENG_CMP_ABSENT, 0};
	chained(&absent, "one");
	refused(&absent, LP_E_EXISTS);
}

Test(reg_put_then, update_of_absent_writes_nothing)
{
	const struct eng_cmp at = {ENG_CMP_MOD, 1};
	refused(&at, LP_E_NOTFOUND);
}
