/*
 * test_object.c -- tests of server/registry/object.c's stored encoding:
 * reg_encode writes kube's member order (reg_canonical's) with the revision
 * slot in metadata.resourceVersion, whether it takes the ordered dump
 * (resourceVersion already "") or reorders and marks the tree itself, and
 * reg_json_dump_ordered agrees byte for byte with a reorder and a dump.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/registry/json.h"
#include "../../server/registry/object.h"

static json_t *load(const char *s)
{
	json_t *j = json_loads(s, JSON_ALLOW_NUL, NULL);
	cr_assert(j, "bad test input %s", s);
	return j;
}

/* reg_encode of obj: the bytes with "RV" spliced into the slot. */
static char *encode_spliced(json_t *obj)
{
	char *b;
	size_t n;
	uint32_t slot;
	cr_assert_eq(reg_encode(obj, &b, &n, &slot), LP_OK);
	cr_assert_eq(strlen(b), n);
	cr_assert(slot >= 2 && slot < n);
	cr_assert(b[slot - 1] == '"' && b[slot] == '"', "slot %u in %s",
		  (unsigned)slot, b);
	char *out = malloc(n + 3);
	memcpy(out, b, slot);
	memcpy(out + slot, "RV", 2);
	memcpy(out + slot + 2, b + slot, n - slot + 1);
	free(b);
	return out;
}

/* Members in every order a client sends them, server fields added last as
   the create path adds them. */
static const char shuffled[] =
    "{\"data\":{\"b\":\"2\",\"a\":\"1\"},\"metadata\":{\"labels\":{\"x\":"
    "\"y\"},\"annotations\":{\"k\":\"v\"},\"name\":\"cm\",\"namespace\":"
    "\"default\",\"uid\":\"u-1\",\"resourceVersion\":\"\","
    "\"creationTimestamp\":\"2026-01-01T00:00:00Z\",\"managedFields\":[],"
    "\"finalizers\":[\"f\"],\"other\":1},\"apiVersion\":\"v1\","
    "\"kind\":\"ConfigMap\",\"immutable\":false}";

static const char canonical[] =
    "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":"
    "\"cm\",\"namespace\":\"default\",\"uid\":\"u-1\",\"resourceVersion\":"
    "\"RV\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\",\"labels\":{"
    "\"x\":\"y\"},\"annotations\":{\"k\":\"v\"},\"finalizers\":[\"f\"],"
    "\"managedFields\":[],\"other\":1},\"data\":{\"a\":\"1\",\"b\":\"2\"},"
    "\"immutable\":false}";

Test(reg_encode, writes_kube_order_with_the_slot)
{
	json_t *o = load(shuffled);
	char *s = encode_spliced(o);
	cr_assert_str_eq(s, canonical);
	free(s);
	json_decref(o);
}

Test(reg_encode, marks_the_tree_where_resource_version_is_not_empty)
{
	/* "7" (or no resourceVersion at all) takes the reorder-and-mark way,
	   which must give the same bytes. */
	json_t *o = load(shuffled);
	json_object_set_new(json_object_get(o, "metadata"), "resourceVersion",
			    json_string("7"));
	char *s = encode_spliced(o);
	cr_assert_str_eq(s, canonical);
	free(s);
	json_decref(o);

	o = load(shuffled);
	json_t *m = json_object_get(o, "metadata");
	json_object_del(m, "resourceVersion");
	s = encode_spliced(o);
	/* added after the reorder, it lands at the end of metadata */
	cr_assert(strstr(s, "\"other\":1,\"resourceVersion\":\"RV\"}"), "%s",
		  s);
	free(s);
	json_decref(o);
}

/* A built-in's map fields are sorted, as Go writes a map; a custom
   resource (a group not kube's) is sorted at every level, as kube writes
   an unstructured object, the slot still in metadata.resourceVersion. */
Test(reg_encode, sorts_maps_and_custom_resources_as_kube)
{
	json_t *o =
	    load("{\"kind\":\"Service\",\"apiVersion\":\"v1\","
		 "\"metadata\":{\"name\":\"s\",\"resourceVersion\":\"\","
		 "\"labels\":{\"z\":\"1\",\"a\":\"2\"},\"annotations\":"
		 "{\"y\":\"\",\"b\":\"\"}},\"spec\":{\"selector\":{\"z\":"
		 "\"1\",\"a\":\"2\"},\"type\":\"ClusterIP\"}}");
	char *s = encode_spliced(o);
	cr_assert_str_eq(
	    s, "{\"kind\":\"Service\",\"apiVersion\":\"v1\",\"metadata\":{"
	       "\"name\":\"s\",\"resourceVersion\":\"RV\",\"labels\":{"
	       "\"a\":\"2\",\"z\":\"1\"},\"annotations\":{\"b\":\"\",\"y\":"
	       "\"\"}},\"spec\":{\"selector\":{\"a\":\"2\",\"z\":\"1\"},"
	       "\"type\":\"ClusterIP\"}}");
	free(s);
	json_decref(o);
	static const char cr_in[] =
	    "{\"kind\":\"Gadget\",\"apiVersion\":\"networking.x-k8s.io/v1\","
	    "\"metadata\":{\"name\":\"g\",\"resourceVersion\":\"\","
	    "\"generation\":1,\"labels\":{\"z\":\"\",\"a\":\"\"}},"
	    "\"status\":{\"b\":1,\"a\":[{\"y\":1,\"x\":2}]},"
	    "\"spec\":{\"zeta\":1,\"alpha\":{\"d\":1,\"c\":2}}}";
	static const char cr_out[] =
	    "{\"apiVersion\":\"networking.x-k8s.io/v1\",\"kind\":\"Gadget\","
	    "\"metadata\":{\"generation\":1,\"labels\":{\"a\":\"\",\"z\":\"\"},"
	    "\"name\":\"g\",\"resourceVersion\":\"RV\"},\"spec\":{\"alpha\":"
	    "{\"c\":2,\"d\":1},\"zeta\":1},\"status\":{\"a\":[{\"x\":2,"
	    "\"y\":1}],\"b\":1}}";
	o = load(cr_in);
	s = encode_spliced(o);
	cr_assert_str_eq(s, cr_out);
	free(s);
	json_decref(o);
	/* the reorder-and-mark way gives the same bytes */
	o = load(cr_in);
	json_object_set_new(json_object_get(o, "metadata"), "resourceVersion",
			    json_string("7"));
	s = encode_spliced(o);
	cr_assert_str_eq(s, cr_out);
	free(s);
	json_decref(o);
	/* kube's own groups are not custom */
	o = load("{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":"
		 "\"Lease\",\"metadata\":{}}");
	cr_assert(!reg_is_custom(o));
	json_object_set_new(o, "apiVersion",
			    json_string("gateway.networking.k8s.io/v1"));
	cr_assert(reg_is_custom(o));
	json_decref(o);
}

Test(reg_encode, needs_metadata)
{
	json_t *o = load("{\"kind\":\"X\"}");
	char *b;
	size_t n;
	uint32_t slot;
	cr_assert_eq(reg_encode(o, &b, &n, &slot), LP_E_INVAL);
	json_decref(o);
}

/* reg_json_dump_ordered(v) == reg_json_dump(reg_canonical(copy of v)). */
/* c: a copy of v (json_deep_copy drops keys with a NUL byte). */
static void same_as_reorder_tree(json_t *v, json_t *c, const char *in)
{
	reg_canonical(c);
	size_t n1, n2, mark;
	char *want = reg_json_dump(c, &n1);
	char *got = reg_json_dump_ordered(v, &reg_canon_order, &n2, &mark);
	cr_assert(want && got, "%s", in);
	cr_assert_str_eq(got, want);
	cr_assert_eq(n1, n2);
	const char *rv = strstr(want, "\"resourceVersion\":");
	json_t *m = json_object_get(v, "metadata");
	if (json_is_object(m) && json_object_get(m, "resourceVersion"))
		cr_assert_eq(mark, (size_t)(rv - want) + 18, "%s", in);
	else
		cr_assert_eq(mark, SIZE_MAX);
	free(want);
	free(got);
	json_decref(c);
	json_decref(v);
}

static void same_as_reorder(const char *in)
{
	json_t *v = load(in);
	same_as_reorder_tree(v, json_deep_copy(v), in);
}

Test(reg_json_dump_ordered, agrees_with_reorder_and_dump)
{
	same_as_reorder(shuffled);
	same_as_reorder("{}");
	same_as_reorder("{\"metadata\":{}}");
	same_as_reorder("{\"metadata\":[1,{\"name\":2}],\"kind\":\"K\"}");
	same_as_reorder("{\"spec\":{\"metadata\":{\"uid\":1,\"name\":2}},"
			"\"metadata\":{\"generation\":3,\"resourceVersion\":"
			"\"12\",\"name\":\"n\"}}");
	/* only objects: a nested "metadata" is not reordered */
	same_as_reorder("{\"items\":[{\"metadata\":{\"uid\":1,\"name\":2}}]}");
}

Test(reg_json_dump_ordered, keys_with_a_nul_byte_are_members_of_their_own)
{
	/* JSON text cannot carry them (jansson refuses \u0000 in a key);
	   json_object_setn can, and neither side may drop one. */
	json_t *t[2];
	for (int i = 0; i < 2; i++) {
		t[i] = load("{\"metadata\":{\"uid\":3,\"name\":2},\"kind\":2}");
		json_object_setn_new_nocheck(t[i], "kind\0x", 6,
					     json_integer(1));
		json_object_setn_new_nocheck(json_object_get(t[i], "metadata"),
					     "name\0", 5, json_integer(1));
	}
	same_as_reorder_tree(t[0], t[1], "keys with NUL");
}

Test(reg_json_dump_ordered, gives_up_where_the_dump_would)
{
	size_t n, mark;
	json_t *a = json_array();
	cr_assert_null(reg_json_dump_ordered(a, &reg_canon_order, &n, &mark));
	json_decref(a);
	/* a string that is not UTF-8 fails as reg_json_dump does */
	json_t *o = json_object();
	json_object_set_new(o, "kind", json_stringn_nocheck("\xff", 1));
	cr_assert_null(reg_json_dump_ordered(o, &reg_canon_order, &n, &mark));
	cr_assert_null(reg_json_dump(o, &n));
	json_decref(o);
}

/* storage.DecodeContinue's errors in Go's words: base64.RawURLEncoding's
   CorruptInputError offset, encoding/json's syntax and type errors. */
static void bad_token(const char *tok, const char *want)
{
	int64_t rv;
	char *start = NULL, msg[200];
	size_t sl;
	cr_assert_eq(
	    reg_continue_decode(tok, &rv, &start, &sl, msg, sizeof msg),
	    LP_E_BADREQUEST, "%s decoded", tok);
	cr_expect_str_eq(msg, want, "token %s", tok);
}

Test(reg_continue_decode, errors_in_gos_words)
{
	bad_token("garbage!!", "continue key is not valid: illegal base64 "
			       "data at input byte 7");
	bad_token("YQ=", "continue key is not valid: illegal base64 data at "
			 "input byte 2");
	bad_token("YWJjZ", "continue key is not valid: illegal base64 data "
			   "at input byte 4");
	/* base64 of "foo", of "\x81..." and of "[1]" */
	bad_token("Zm9v", "continue key is not valid: invalid character 'o' "
			  "in literal false (expecting 'a')");
	bad_token("garbage", "continue key is not valid: invalid character "
			     "'\\u0081' looking for beginning of value");
	bad_token("WzFd", "continue key is not valid: json: cannot unmarshal "
			  "array into Go value of type storage.continueToken");
	/* a member of the wrong type: the first in the body's order, before
	   the version is looked at ({"v":..,"rv":"90",..}, {..,"rv":1.5,..},
	   {"start":5,"v":7,"rv":1}) */
	bad_token("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6IjkwIiwic3RhcnQiOiJhIn0",
		  "continue key is not valid: json: cannot unmarshal string "
		  "into Go struct field continueToken.rv of type int64");
	bad_token("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MS41LCJzdGFydCI6ImEifQ",
		  "continue key is not valid: json: cannot unmarshal number "
		  "1.5 into Go struct field continueToken.rv of type int64");
	bad_token("eyJzdGFydCI6NSwidiI6NywicnYiOjF9",
		  "continue key is not valid: json: cannot unmarshal number "
		  "into Go struct field continueToken.start of type string");
	/* null is the zero token */
	bad_token("bnVsbA", "continue key is not valid: server does not "
			    "recognize this encoded version ");
	int64_t rv;
	char *start = NULL, msg[200];
	size_t sl;
	char *tok = reg_continue_encode(7, "a", 1);
	cr_assert_not_null(tok);
	cr_assert_eq(
	    reg_continue_decode(tok, &rv, &start, &sl, msg, sizeof msg), LP_OK);
	cr_expect_eq(rv, 7);
	free(start);
	free(tok);
	/* members matched in any case, a null leaving the field as it was:
	   {"V":"meta.k8s.io/v1","RV":3,"Start":"a","rv":null} */
	cr_assert_eq(reg_continue_decode("eyJWIjoibWV0YS5rOHMuaW8vdjEiLCJSViI6"
					 "MywiU3RhcnQiOiJhIiwicnYiOm51bGx9",
					 &rv, &start, &sl, msg, sizeof msg),
		     LP_OK, "%s", msg);
	cr_expect_eq(rv, 3);
	cr_expect_str_eq(start, "a");
	free(start);
}
