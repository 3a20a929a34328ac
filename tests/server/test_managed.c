/*
 * test_managed.c -- tests of server/managed.c: the field sets an update
 * records in metadata.managedFields (what it takes from other managers and
 * what removals drop), the reset and validation of client-sent entries, and
 * server-side apply (create, merge by list kind, pruning of what a manager
 * no longer applies, conflicts with kube's message and causes, force,
 * shared ownership), on the built-in ConfigMap and Service descriptors.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "../../server/managed.h"
#include "../../server/resources.h"

static json_t *J(const char *s)
{
	json_error_t e;
	json_t *v = json_loads(s, 0, &e);
	cr_assert_not_null(v, "bad test JSON '%s': %s", s, e.text);
	return v;
}

static const struct srv_resource *CM(void)
{
	const struct srv_resource *r = srv_resource_find("", "v1", "configmaps");
	cr_assert_not_null(r);
	return r;
}

static const struct srv_resource *SVC(void)
{
	const struct srv_resource *r = srv_resource_find("", "v1", "services");
	cr_assert_not_null(r);
	return r;
}

static struct srv_mf_op op_of(const struct srv_resource *r, const char *mgr)
{
	return (struct srv_mf_op){.res = r, .manager = mgr, .api_version = "v1"};
}

/* The fieldsV1 of obj's entry (manager, operation), compact with sorted
   keys, or "" when there is none. Caller frees. */
static char *owns(const json_t *obj, const char *mgr, const char *op)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(json_object_get(obj, "metadata"),
					   "managedFields"),
			   i, e)
	{
		if (!strcmp(json_string_value(json_object_get(e, "manager")), mgr) &&
		    !strcmp(json_string_value(json_object_get(e, "operation")), op))
			return json_dumps(json_object_get(e, "fieldsV1"),
					  JSON_COMPACT | JSON_SORT_KEYS);
	}
	return strdup("");
}

static void assert_owns(const json_t *obj, const char *mgr, const char *op,
			const char *want)
{
	char *got = owns(obj, mgr, op);
	cr_assert_str_eq(got, want, "%s/%s owns %s, want %s", mgr, op, got, want);
	free(got);
}

static size_t n_entries(const json_t *obj)
{
	return json_array_size(json_object_get(json_object_get(obj, "metadata"),
					       "managedFields"));
}

Test(mf_update, a_create_owns_every_field_with_dots_on_new_maps)
{
	json_t *o = J("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
		      "{\"name\":\"a\",\"uid\":\"u\",\"labels\":{\"l\":\"v\"}},"
		      "\"data\":{\"a\":\"1\",\"b\":\"2\"}}");
	struct srv_mf_op op = op_of(CM(), "creator");
	struct srv_error err = {0};
	cr_assert_eq(srv_mf_update(&op, NULL, o, &err), LP_OK);
	assert_owns(o, "creator", "Update",
		    "{\"f:data\":{\".\":{},\"f:a\":{},\"f:b\":{}},"
		    "\"f:metadata\":{\"f:labels\":{\".\":{},\"f:l\":{}}}}");
	json_t *e = json_array_get(json_object_get(json_object_get(o, "metadata"),
						   "managedFields"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(e, "apiVersion")), "v1");
	cr_assert_str_eq(json_string_value(json_object_get(e, "fieldsType")), "FieldsV1");
	cr_assert_not_null(json_string_value(json_object_get(e, "time")));
	json_decref(o);
}

Test(mf_update, an_update_takes_what_it_changes_and_removals_leave_everyone)
{
	json_t *old = J("{\"metadata\":{\"name\":\"a\",\"managedFields\":["
			"{\"manager\":\"A\",\"operation\":\"Apply\",\"apiVersion\":\"v1\","
			"\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:data\":{\"f:a\":{},\"f:b\":{},\"f:c\":{}}}}]},"
			"\"data\":{\"a\":\"1\",\"b\":\"2\",\"c\":\"3\"}}");
	json_t *next = json_deep_copy(old);
	json_t *d = json_object_get(next, "data");
	json_object_set_new(d, "a", json_string("9"));
	json_object_del(d, "c");
	json_object_set_new(d, "n", json_string("new"));
	struct srv_mf_op op = op_of(CM(), "B");
	struct srv_error err = {0};
	cr_assert_eq(srv_mf_update(&op, old, next, &err), LP_OK);
	assert_owns(next, "A", "Apply", "{\"f:data\":{\"f:b\":{}}}");
	assert_owns(next, "B", "Update", "{\"f:data\":{\"f:a\":{},\"f:n\":{}}}");
	/* sorted as upstream: Apply before Update */
	json_t *mf = json_object_get(json_object_get(next, "metadata"), "managedFields");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(mf, 0), "operation")), "Apply");
	json_decref(old);
	json_decref(next);
}

Test(mf_update, a_no_op_keeps_the_entries_as_they_were)
{
	json_t *old = J("{\"metadata\":{\"name\":\"a\",\"managedFields\":["
			"{\"manager\":\"A\",\"operation\":\"Update\",\"apiVersion\":\"v1\","
			"\"time\":\"2020-01-01T00:00:00Z\",\"fieldsType\":\"FieldsV1\","
			"\"fieldsV1\":{\"f:data\":{\".\":{},\"f:a\":{}}}}]},\"data\":{\"a\":\"1\"}}");
	json_t *next = json_deep_copy(old);
	struct srv_mf_op op = op_of(CM(), "A");
	struct srv_error err = {0};
	cr_assert_eq(srv_mf_update(&op, old, next, &err), LP_OK);
	cr_assert(json_equal(old, next), "a write that changes nothing records nothing");
	json_decref(old);
	json_decref(next);
}

Test(mf_update, a_reset_clears_and_undecodable_entries_keep_the_stored)
{
	json_t *old = J(
	    "{\"metadata\":{\"name\":\"a\",\"managedFields\":["
	    "{\"manager\":\"B\",\"operation\":\"Update\",\"apiVersion\":\"v1\","
	    "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:data\":{\"f:a\":{},"
	    "\"f:b\":{}}}}]},"
	    "\"data\":{\"a\":\"1\",\"b\":\"1\"}}");
	json_t *next =
	    J("{\"metadata\":{\"name\":\"a\",\"managedFields\":[{}]},"
	      "\"data\":{\"a\":\"2\",\"b\":\"1\"}}");
	struct srv_mf_op op = op_of(CM(), "A");
	struct srv_error err = {0};
	/* every entry goes, and the update is not tracked: kube's
	   skipNonAppliedManager tracks an object without entries again
	   only from its next apply */
	cr_assert_eq(srv_mf_update(&op, old, next, &err), LP_OK);
	cr_assert_eq(n_entries(next), 0);
	json_decref(next);
	next = J("{\"metadata\":{\"name\":\"a\",\"managedFields\":[{}]},"
		 "\"data\":{\"a\":\"1\",\"b\":\"1\"}}");
	cr_assert_eq(srv_mf_update(&op, old, next, &err), LP_OK);
	cr_assert_eq(n_entries(next), 0,
		     "a reset changing nothing leaves none");
	json_decref(next);
	/* [] resets too (a non-nil empty list in kube's isResetManagedFields)
	 */
	next = J("{\"metadata\":{\"name\":\"a\",\"managedFields\":[]},"
		 "\"data\":{\"a\":\"1\",\"b\":\"1\"}}");
	cr_assert_eq(srv_mf_update(&op, old, next, &err), LP_OK);
	cr_assert_eq(n_entries(next), 0);
	json_decref(next);
	/* Entries that do not decode (operation, fieldsType, apiVersion, a
	   FieldsV1 that is no set) leave the stored ones in place, as kube's
	   decodeLiveOrNew does; the change is then recorded on top. */
	static const char *const undecodable[] = {
	    "{\"manager\":\"x\",\"operation\":\"Bogus\",\"apiVersion\":\"v1\","
	    "\"fieldsType\":\"FieldsV1\"}",
	    "{\"manager\":\"x\",\"operation\":\"Update\",\"apiVersion\":\"v1\","
	    "\"fieldsType\":\"FieldsV2\"}",
	    "{\"manager\":\"x\",\"operation\":\"Apply\",\"apiVersion\":\"v1\","
	    "\"fieldsType\":\"\",\"fieldsV1\":{}}",
	    "{\"manager\":\"x\",\"operation\":\"Update\","
	    "\"fieldsType\":\"FieldsV1\"}",
	    "{\"manager\":\"x\",\"operation\":\"Update\",\"apiVersion\":\"v1\","
	    "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"data\":{}}}",
	    "{\"manager\":\"x\",\"operation\":\"Update\",\"apiVersion\":\"v1\","
	    "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:data\":{\"k:[1]\":{}"
	    "}}}",
	    "{\"manager\":\"x\",\"operation\":\"Update\",\"apiVersion\":\"v1\","
	    "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:data\":\"x\"}}",
	};
	for (size_t i = 0; i < sizeof undecodable / sizeof *undecodable; i++) {
		char body[512];
		snprintf(
		    body, sizeof body,
		    "{\"metadata\":{\"name\":\"a\",\"managedFields\":[%s]},"
		    "\"data\":{\"a\":\"2\",\"b\":\"1\"}}",
		    undecodable[i]);
		next = J(body);
		memset(&err, 0, sizeof err);
		cr_assert_eq(srv_mf_update(&op, old, next, &err), LP_OK, "%s",
			     undecodable[i]);
		cr_assert_eq(n_entries(next), 2, "%s", undecodable[i]);
		assert_owns(next, "B", "Update", "{\"f:data\":{\"f:b\":{}}}");
		assert_owns(next, "A", "Update", "{\"f:data\":{\"f:a\":{}}}");
		json_decref(next);
	}
	/* A decodable entry that fails validation is the client's 422 */
	next =
	    J("{\"metadata\":{\"name\":\"a\",\"managedFields\":[{\"manager\":"
	      "\"x\\u0001\",\"operation\":\"Update\",\"apiVersion\":\"v1\","
	      "\"fieldsType\":\"FieldsV1\"}]},\"data\":{}}");
	memset(&err, 0, sizeof err);
	cr_assert_eq(srv_mf_update(&op, old, next, &err), LP_E_INVALID);
	cr_assert_eq(err.n_causes, 1);
	cr_assert_str_eq(srv_cause_get(&err, 0).field,
			 "metadata.managedFields[0].manager");
	json_decref(next);
	/* On a subresource the request's entries never count */
	struct srv_mf_op sop = op;
	sop.subresource = "status";
	next = J("{\"metadata\":{\"name\":\"a\",\"managedFields\":[]},"
		 "\"data\":{\"a\":\"1\",\"b\":\"1\"}}");
	cr_assert_eq(srv_mf_update(&sop, old, next, &err), LP_OK);
	cr_assert_eq(n_entries(next), 1);
	assert_owns(next, "B", "Update",
		    "{\"f:data\":{\"f:a\":{},\"f:b\":{}}}");
	json_decref(old);
	json_decref(next);
}

Test(mf_manager, field_manager_first_then_the_user_agent_product)
{
	char b[SRV_MF_MANAGER_MAX + 1];
	cr_assert_str_eq(srv_mf_manager("mine", "kubectl/v1.33", b, sizeof b), "mine");
	cr_assert_str_eq(srv_mf_manager(NULL, "kubectl/v1.33.1 (linux/amd64)", b, sizeof b), "kubectl");
	cr_assert_str_eq(srv_mf_manager(NULL, "a\tb\x01" "c/1", b, sizeof b), "abc");
	cr_assert_str_eq(srv_mf_manager(NULL, NULL, b, sizeof b), "");
	char ua[300];
	memset(ua, 'u', sizeof ua - 1);
	ua[sizeof ua - 1] = 0;
	cr_assert_eq(strlen(srv_mf_manager(NULL, ua, b, sizeof b)), SRV_MF_MANAGER_MAX);
	struct srv_error err = {0};
	cr_assert_eq(srv_mf_check_manager(ua, &err), LP_E_INVALID);
	cr_assert_str_eq(srv_cause_get(&err, 0).message,
			 "Too long: may not be more than 128 bytes");
	cr_assert_eq(srv_mf_check_manager("ok", &err), LP_OK);
}

Test(mf_apply, a_create_owns_exactly_the_configuration)
{
	json_t *cfg = J("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
			"{\"name\":\"a\",\"labels\":{\"x\":\"1\"}},\"data\":{\"a\":\"1\"}}");
	struct srv_mf_op op = op_of(CM(), "m1");
	struct srv_error err = {0};
	json_t *out = NULL;
	cr_assert_eq(srv_mf_apply(&op, NULL, cfg, false, &out, &err), LP_OK);
	assert_owns(out, "m1", "Apply",
		    "{\"f:data\":{\"f:a\":{}},\"f:metadata\":{\"f:labels\":{\"f:x\":{}}}}");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(out, "data"), "a")), "1");
	json_decref(cfg);
	json_decref(out);
}

/* live: m1 applied a and b; other updated c. */
static json_t *live_two_managers(void)
{
	return J("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\","
		 "\"managedFields\":["
		 "{\"manager\":\"m1\",\"operation\":\"Apply\",\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\","
		 "\"fieldsV1\":{\"f:data\":{\"f:a\":{},\"f:b\":{}}}},"
		 "{\"manager\":\"other\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\","
		 "\"fieldsV1\":{\"f:data\":{\"f:b\":{},\"f:c\":{}}}}]},"
		 "\"data\":{\"a\":\"1\",\"b\":\"2\",\"c\":\"3\"}}");
}

Test(mf_apply, what_is_no_longer_applied_goes_unless_another_owns_it)
{
	json_t *live = live_two_managers();
	json_t *cfg = J("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"},\"data\":{}}");
	struct srv_mf_op op = op_of(CM(), "m1");
	struct srv_error err = {0};
	json_t *out = NULL;
	cr_assert_eq(srv_mf_apply(&op, live, cfg, false, &out, &err), LP_OK);
	json_t *d = json_object_get(out, "data");
	cr_assert_null(json_object_get(d, "a"), "m1's own field is removed");
	cr_assert_str_eq(json_string_value(json_object_get(d, "b")), "2", "b is other's too");
	cr_assert_str_eq(json_string_value(json_object_get(d, "c")), "3");
	assert_owns(out, "m1", "Apply", "{\"f:data\":{}}");
	json_decref(live);
	json_decref(cfg);
	json_decref(out);
}

Test(mf_apply, a_change_to_anothers_field_conflicts_unless_forced)
{
	json_t *live = live_two_managers();
	json_t *cfg = J("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"},"
			"\"data\":{\"a\":\"1\",\"b\":\"2\",\"c\":\"9\"}}");
	struct srv_mf_op op = op_of(CM(), "m1");
	struct srv_error err = {0};
	json_t *out = NULL;
	cr_assert_eq(srv_mf_apply(&op, live, cfg, false, &out, &err), LP_E_CONFLICT);
	cr_assert_null(out);
	cr_assert_str_eq(err.message,
			 "Apply failed with 1 conflict: conflict with \"other\" using v1: .data.c");
	cr_assert_eq(err.n_causes, 1);
	cr_assert_str_eq(srv_cause_get(&err, 0).reason, "FieldManagerConflict");
	cr_assert_str_eq(srv_cause_get(&err, 0).field, ".data.c");
	cr_assert_str_eq(srv_cause_get(&err, 0).message,
			 "conflict with \"other\" using v1");
	memset(&err, 0, sizeof err);
	cr_assert_eq(srv_mf_apply(&op, live, cfg, true, &out, &err), LP_OK);
	assert_owns(out, "m1", "Apply", "{\"f:data\":{\"f:a\":{},\"f:b\":{},\"f:c\":{}}}");
	assert_owns(out, "other", "Update", "{\"f:data\":{\"f:b\":{}}}");
	json_decref(live);
	json_decref(cfg);
	json_decref(out);
}

Test(mf_apply, several_conflicts_are_listed_by_manager)
{
	json_t *live = live_two_managers();
	json_t *cfg = J("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"},"
			"\"data\":{\"b\":\"8\",\"c\":\"9\"}}");
	struct srv_mf_op op = op_of(CM(), "m2");
	struct srv_error err = {0};
	json_t *out = NULL;
	cr_assert_eq(srv_mf_apply(&op, live, cfg, false, &out, &err), LP_E_CONFLICT);
	cr_assert_str_eq(err.message,
			 "Apply failed with 3 conflicts: conflicts with \"m1\":\n- .data.b\n"
			 "conflicts with \"other\" using v1:\n- .data.b\n- .data.c");
	json_decref(live);
	json_decref(cfg);
}

Test(mf_apply, applying_the_same_value_shares_the_field)
{
	json_t *live = live_two_managers();
	json_t *cfg = J("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"},"
			"\"data\":{\"c\":\"3\"}}");
	struct srv_mf_op op = op_of(CM(), "m2");
	struct srv_error err = {0};
	json_t *out = NULL;
	cr_assert_eq(srv_mf_apply(&op, live, cfg, false, &out, &err), LP_OK);
	assert_owns(out, "m2", "Apply", "{\"f:data\":{\"f:c\":{}}}");
	assert_owns(out, "other", "Update", "{\"f:data\":{\"f:b\":{},\"f:c\":{}}}");
	json_decref(live);
	json_decref(cfg);
	json_decref(out);
}

Test(mf_apply, service_ports_merge_by_port_and_defaulted_protocol)
{
	json_t *live = J("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"s\"},"
			 "\"spec\":{\"ports\":[{\"port\":80,\"protocol\":\"TCP\",\"name\":\"a\"}]},"
			 "\"status\":{\"loadBalancer\":{}}}");
	json_t *cfg = J("{\"apiVersion\":\"v1\",\"kind\":\"Service\","
			"\"metadata\":{\"name\":\"s\"},"
			"\"spec\":{\"ports\":[{\"port\":80,\"name\":\"web\"},{"
			"\"port\":81}]},"
			"\"status\":{\"loadBalancer\":{\"ingress\":[{\"ip\":"
			"\"1.2.3.4\"}]}}}");
	struct srv_mf_op op = op_of(SVC(), "m");
	struct srv_error err = {0};
	json_t *out = NULL;
	/* forced: the live object has no entries, so before-first-apply
	   owns the port's name the apply changes */
	cr_assert_eq(srv_mf_apply(&op, live, cfg, true, &out, &err), LP_OK);
	json_t *ports = json_object_get(json_object_get(out, "spec"), "ports");
	cr_assert_eq(json_array_size(ports), 2);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(ports, 0), "name")), "web");
	/* status is the status subresource's: not the main resource's set */
	assert_owns(out, "m", "Apply",
		    "{\"f:spec\":{\"f:ports\":{"
		    "\"k:{\\\"port\\\":80,\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},\"f:name\":{},\"f:port\":{}},"
		    "\"k:{\\\"port\\\":81,\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},\"f:port\":{}}}}}");
	json_decref(live);
	json_decref(cfg);
	json_decref(out);
}

Test(mf_apply, a_service_selector_is_owned_and_replaced_whole)
{
	/* ServiceSpec.selector is +mapType=atomic: one owner, no merge */
	json_t *live = J("{\"apiVersion\":\"v1\",\"kind\":\"Service\","
			 "\"metadata\":{\"name\":\"s\"},"
			 "\"spec\":{\"selector\":{\"app\":\"a\"}}}");
	json_t *cfg = J("{\"apiVersion\":\"v1\",\"kind\":\"Service\","
			"\"metadata\":{\"name\":\"s\"},"
			"\"spec\":{\"selector\":{\"app\":\"a\"}}}");
	struct srv_mf_op op = op_of(SVC(), "a");
	struct srv_error err = {0};
	json_t *out = NULL;
	cr_assert_eq(srv_mf_apply(&op, live, cfg, false, &out, &err), LP_OK);
	assert_owns(out, "a", "Apply", "{\"f:spec\":{\"f:selector\":{}}}");
	json_t *cfg_b = J("{\"apiVersion\":\"v1\",\"kind\":\"Service\","
			  "\"metadata\":{\"name\":\"s\"},"
			  "\"spec\":{\"selector\":{\"tier\":\"b\"}}}");
	struct srv_mf_op op_b = op_of(SVC(), "b");
	json_t *out_b = NULL;
	struct srv_error err_b = {0};
	cr_assert_eq(srv_mf_apply(&op_b, out, cfg_b, false, &out_b, &err_b),
		     LP_E_CONFLICT);
	cr_assert_null(out_b);
	cr_assert_eq(srv_mf_apply(&op_b, out, cfg_b, true, &out_b, &err_b),
		     LP_OK);
	char *sel = json_dumps(
	    json_object_get(json_object_get(out_b, "spec"), "selector"),
	    JSON_COMPACT | JSON_SORT_KEYS);
	cr_assert_str_eq(sel, "{\"tier\":\"b\"}");
	free(sel);
	json_decref(live);
	json_decref(cfg);
	json_decref(cfg_b);
	json_decref(out);
	json_decref(out_b);
}

Test(mf_update,
     object_references_are_owned_whole_and_new_keyed_lists_own_themselves)
{
	const struct srv_resource *ev = srv_resource_find("", "v1", "events");
	const struct srv_resource *sa =
	    srv_resource_find("", "v1", "serviceaccounts");
	cr_assert(ev && sa);
	json_t *e =
	    J("{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{"
	      "\"name\":\"e\"},"
	      "\"involvedObject\":{\"kind\":\"ConfigMap\",\"name\":\"x\"},"
	      "\"related\":{\"name\":\"y\"},\"reason\":\"R\"}");
	struct srv_mf_op op = op_of(ev, "m");
	struct srv_error err = {0};
	cr_assert_eq(srv_mf_update(&op, NULL, e, &err), LP_OK);
	assert_owns(
	    e, "m", "Update",
	    "{\"f:involvedObject\":{},\"f:reason\":{},\"f:related\":{}}");
	json_t *a = J("{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\","
		      "\"metadata\":{\"name\":\"a\"},"
		      "\"secrets\":[{\"name\":\"s1\",\"namespace\":\"n\"}]}");
	op = op_of(sa, "m");
	cr_assert_eq(srv_mf_update(&op, NULL, a, &err), LP_OK);
	assert_owns(
	    a, "m", "Update",
	    "{\"f:secrets\":{\".\":{},\"k:{\\\"name\\\":\\\"s1\\\"}\":{}}}");
	json_t *s =
	    J("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{"
	      "\"name\":\"s\"},"
	      "\"spec\":{\"ports\":[{\"port\":80,\"protocol\":\"TCP\"}]}}");
	op = op_of(SVC(), "m");
	cr_assert_eq(srv_mf_update(&op, NULL, s, &err), LP_OK);
	assert_owns(s, "m", "Update",
		    "{\"f:spec\":{\"f:ports\":{\".\":{},"
		    "\"k:{\\\"port\\\":80,\\\"protocol\\\":\\\"TCP\\\"}\":{\"."
		    "\":{},\"f:port\":{},\"f:protocol\":{}}}}}");
	json_decref(e);
	json_decref(a);
	json_decref(s);
}

Test(mf_apply, finalizers_are_a_set)
{
	json_t *live = J("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\","
			 "\"finalizers\":[\"x/one\"]}}");
	json_t *cfg = J("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\","
			"\"finalizers\":[\"x/two\"]}}");
	struct srv_mf_op op = op_of(CM(), "m");
	struct srv_error err = {0};
	json_t *out = NULL;
	cr_assert_eq(srv_mf_apply(&op, live, cfg, false, &out, &err), LP_OK);
	json_t *f = json_object_get(json_object_get(out, "metadata"), "finalizers");
	cr_assert_eq(json_array_size(f), 2, "a set is united, not replaced");
	assert_owns(out, "m", "Apply", "{\"f:metadata\":{\"f:finalizers\":{\"v:\\\"x/two\\\"\":{}}}}");
	json_decref(live);
	json_decref(cfg);
	json_decref(out);
}

/* fieldsV1 owning the finalizers listed (FIN_V items) */
#define FIN_V(f) "\"v:\\\"" f "\\\"\":{}"
#define FINS_OWNED(items) "{\"f:metadata\":{\"f:finalizers\":{" items "}}}"

/* A ConfigMap "a" whose finalizers are fins (a JSON list). */
static json_t *fins_cm(const char *fins)
{
	json_t *o = J("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
		      "\"metadata\":{\"name\":\"a\"}}");
	json_object_set_new(json_object_get(o, "metadata"), "finalizers",
			    J(fins));
	return o;
}

/* fins_cm(fins) as "u" left it in an update from ["x/x"], which "a" had
   applied. */
static json_t *live_repeated_finalizers(const char *fins)
{
	json_t *old = fins_cm("[\"x/x\"]");
	json_object_set_new(
	    json_object_get(old, "metadata"), "managedFields",
	    J("[{\"manager\":\"a\",\"operation\":\"Apply\","
	      "\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\","
	      "\"fieldsV1\":" FINS_OWNED(FIN_V("x/x")) "}]"));
	json_t *next = json_deep_copy(old);
	json_object_set_new(json_object_get(next, "metadata"), "finalizers",
			    J(fins));
	struct srv_mf_op op = op_of(CM(), "u");
	struct srv_error err = {0};
	cr_assert_eq(srv_mf_update(&op, old, next, &err), LP_OK);
	json_decref(old);
	return next;
}

static void assert_finalizers(const json_t *obj, const char *want)
{
	char *got = json_dumps(
	    json_object_get(json_object_get(obj, "metadata"), "finalizers"),
	    JSON_COMPACT);
	cr_assert_str_eq(got, want);
	free(got);
}

/* structured-merge-diff (typed/compare.go, tofieldset.go): a repeated key
   is one leaf, owned whole; the rest of the list stays item by item. */
Test(mf_update, a_repeated_set_member_is_one_leaf_and_the_rest_stay_items)
{
	json_t *o = live_repeated_finalizers("[\"x/x\",\"x/x\",\"x/y\"]");
	/* x/x became repeated: its single item is removed and the repeat
	   added, so "a" loses it and "u" owns it with x/y */
	assert_owns(o, "u", "Update",
		    FINS_OWNED(FIN_V("x/x") "," FIN_V("x/y")));
	cr_assert_eq(n_entries(o), 1, "a owned only x/x");
	json_decref(o);
}

Test(mf_apply, another_member_beside_a_repeated_one_is_no_conflict)
{
	json_t *live = live_repeated_finalizers("[\"x/x\",\"x/x\",\"x/y\"]");
	json_t *cfg = fins_cm("[\"x/z\"]");
	struct srv_mf_op op = op_of(CM(), "b");
	for (int force = 0; force < 2; force++) {
		struct srv_error err = {0};
		json_t *out = NULL;
		cr_assert_eq(srv_mf_apply(&op, live, cfg, force, &out, &err),
			     LP_OK, "force %d: %s", force, err.message);
		/* every copy stays */
		assert_finalizers(out, "[\"x/x\",\"x/x\",\"x/y\",\"x/z\"]");
		assert_owns(out, "u", "Update",
			    FINS_OWNED(FIN_V("x/x") "," FIN_V("x/y")));
		assert_owns(out, "b", "Apply", FINS_OWNED(FIN_V("x/z")));
		json_decref(out);
	}
	json_decref(live);
	json_decref(cfg);
}

Test(mf_apply, applying_a_repeated_member_takes_it_as_one_item)
{
	json_t *live = live_repeated_finalizers("[\"x/x\",\"x/x\",\"x/y\"]");
	json_t *cfg = fins_cm("[\"x/x\"]");
	struct srv_mf_op op = op_of(CM(), "b");
	struct srv_error err = {0};
	json_t *out = NULL;
	cr_assert_eq(srv_mf_apply(&op, live, cfg, false, &out, &err),
		     LP_E_CONFLICT);
	cr_assert_str_eq(err.message, "Apply failed with 1 conflict: conflict "
				      "with \"u\" using v1: "
				      ".metadata.finalizers[=\"x/x\"]");
	memset(&err, 0, sizeof err);
	cr_assert_eq(srv_mf_apply(&op, live, cfg, true, &out, &err), LP_OK);
	/* the configuration's item replaces the copies */
	assert_finalizers(out, "[\"x/x\",\"x/y\"]");
	assert_owns(out, "u", "Update", FINS_OWNED(FIN_V("x/y")));
	assert_owns(out, "b", "Apply", FINS_OWNED(FIN_V("x/x")));
	json_decref(live);
	json_decref(cfg);
	json_decref(out);
}

Test(mf_update, a_deep_object_is_owned_to_its_leaf)
{
	/* {"spec":{"a":{"a":...{"a":1}}}}, 300 levels: deeper than any fixed
	   stack of the FieldsV1 writer */
	enum { DEPTH = 300 };
	json_t *leaf = json_integer(1);
	for (int i = 0; i < DEPTH; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "a", leaf);
		leaf = o;
	}
	json_t *o = json_object();
	json_object_set_new(o, "metadata", json_pack("{s:s}", "name", "deep"));
	json_object_set_new(o, "spec", leaf);
	struct srv_mf_op op = op_of(CM(), "m");
	struct srv_error err = {0};
	cr_assert_eq(srv_mf_update(&op, NULL, o, &err), LP_OK);
	const json_t *n = json_object_get(json_array_get(json_object_get(
		json_object_get(o, "metadata"), "managedFields"), 0), "fieldsV1");
	n = json_object_get(n, "f:spec");
	/* a built-in's spec is a struct its zero value has: no "." */
	cr_assert_null(json_object_get(n, "."));
	n = json_object_get(n, "f:a");
	for (int i = 1; i < DEPTH; i++) {
		cr_assert(json_is_object(n), "level %d", i);
		cr_assert_not_null(json_object_get(n, "."), "level %d owns itself", i);
		n = json_object_get(n, "f:a");
	}
	cr_assert(json_is_object(n) && json_object_size(n) == 0, "the leaf is {}");
	json_t *out = NULL, *out2 = NULL;
	/* a ConfigMap has no spec, which its typed conversion refuses: the
	   apply goes untyped (no resource) */
	struct srv_mf_op untyped = {.manager = "m", .api_version = "v1"};
	cr_assert_eq(srv_mf_apply(&untyped, o, o, true, &out, &err), LP_OK,
		     "%s", err.message);
	cr_assert_eq(srv_mf_apply(&untyped, out, o, true, &out2, &err), LP_OK);
	cr_assert(json_equal(out, out2), "apply is idempotent at depth");
	json_decref(out);
	json_decref(out2);
	json_decref(o);
}

/* A safety net, not a measurement: quadratic work over these lists would
   take hours (test_patch.c's BIG_TIMEOUT does the same). */
Test(mf_apply, big_sets_and_keyed_lists_are_not_quadratic, .timeout = 120)
{
	enum { N = 50000 };
	json_t *fin = json_array(), *ports = json_array();
	char b[32];
	for (int i = 0; i < N; i++) {
		snprintf(b, sizeof b, "x/f%d", i);
		json_array_append_new(fin, json_string(b));
		json_array_append_new(ports, json_pack("{s:i}", "port", i));
	}
	json_t *cfg = json_pack("{s:s,s:s,s:{s:s,s:o},s:{s:o}}", "apiVersion", "v1",
				"kind", "Service", "metadata", "name", "s",
				"finalizers", fin, "spec", "ports", ports);
	struct srv_mf_op op = op_of(SVC(), "m");
	struct srv_error err = {0};
	json_t *out = NULL, *out2 = NULL;
	cr_assert_eq(srv_mf_apply(&op, NULL, cfg, false, &out, &err), LP_OK);
	json_t *none = J("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"s\"}}");
	cr_assert_eq(srv_mf_apply(&op, out, none, false, &out2, &err), LP_OK);
	cr_assert_eq(json_array_size(json_object_get(json_object_get(out2, "metadata"), "finalizers")), 0);
	cr_assert_eq(json_array_size(json_object_get(json_object_get(out2, "spec"), "ports")), 0);
	json_t *next = json_deep_copy(out);
	cr_assert_eq(srv_mf_update(&op, out, next, &err), LP_OK);
	json_decref(next);
	json_decref(cfg);
	json_decref(none);
	json_decref(out);
	json_decref(out2);
}

/* Many entries meeting a large change (a client may store thousands):
   linear in their sizes, not their product. A safety net, as above. */
Test(mf_update, many_entries_against_many_changes_are_not_quadratic, .timeout = 120)
{
	enum { N = 20000 };
	json_t *data = json_object(), *mf = json_array(), *data2 = json_object();
	char k[32], m[32], f[40];
	for (int i = 0; i < N; i++) {
		snprintf(k, sizeof k, "k%d", i);
		snprintf(m, sizeof m, "m%d", i);
		snprintf(f, sizeof f, "f:%s", k);
		json_object_set_new(data, k, json_string("old"));
		json_object_set_new(data2, k, json_string("new"));
		json_array_append_new(mf, json_pack("{s:s,s:s,s:s,s:s,s:{s:{s:{}}}}", "manager", m,
						    "operation", "Update", "apiVersion", "v1",
						    "fieldsType", "FieldsV1", "fieldsV1", "f:data", f));
	}
	json_t *old = json_pack("{s:{s:s,s:o},s:o}", "metadata", "name", "a",
				"managedFields", mf, "data", data);
	json_t *next = json_pack("{s:{s:s},s:o}", "metadata", "name", "a", "data", data2);
	struct srv_mf_op op = op_of(CM(), "writer");
	struct srv_error err = {0};
	cr_assert_eq(srv_mf_update(&op, old, next, &err), LP_OK);
	cr_assert_eq(n_entries(next), 1, "every other entry lost its only field");
	json_decref(old);
	json_decref(next);
}

Test(mf_update, update_entries_past_ten_go_to_ancient_changes)
{
	/* eleven managers each set one key, one after the other (times one
	   second apart); the twelfth write must merge the oldest */
	json_t *mf = json_array(), *data = json_object();
	char m[16], k[16], f[24], t[32];
	for (int i = 0; i < 11; i++) {
		snprintf(m, sizeof m, "m%02d", i);
		snprintf(k, sizeof k, "k%02d", i);
		snprintf(f, sizeof f, "f:%s", k);
		snprintf(t, sizeof t, "2020-01-01T00:00:%02dZ", i);
		json_object_set_new(data, k, json_string("v"));
		json_array_append_new(mf, json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:{s:{}}}}", "manager", m,
						    "operation", "Update", "apiVersion", "v1", "time", t,
						    "fieldsType", "FieldsV1", "fieldsV1", "f:data", f));
	}
	json_t *old = json_pack("{s:{s:s,s:o},s:o}", "metadata", "name", "a",
				"managedFields", mf, "data", data);
	json_t *next = json_deep_copy(old);
	json_object_set_new(json_object_get(next, "data"), "new", json_string("x"));
	struct srv_mf_op op = op_of(CM(), "newest");
	struct srv_error err = {0};
	cr_assert_eq(srv_mf_update(&op, old, next, &err), LP_OK);
	/* 12 updaters, upstream's counting: m00 is the version's first; m01
	   makes m00 the bucket and joins it (11); m02 joins it (10) */
	cr_assert_eq(n_entries(next), 10);
	assert_owns(next, "ancient-changes", "Update",
		    "{\"f:data\":{\"f:k00\":{},\"f:k01\":{},\"f:k02\":{}}}");
	assert_owns(next, "m00", "Update", "");
	assert_owns(next, "m02", "Update", "");
	assert_owns(next, "m03", "Update", "{\"f:data\":{\"f:k03\":{}}}");
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(json_object_get(next, "metadata"), "managedFields"), i, e)
	{
		if (!strcmp(json_string_value(json_object_get(e, "manager")), "ancient-changes"))
			cr_assert_str_eq(json_string_value(json_object_get(e, "time")),
					 "2020-01-01T00:00:02Z", "the last merged update's time");
	}
	assert_owns(next, "newest", "Update", "{\"f:data\":{\"f:new\":{}}}");
	json_decref(old);
	json_decref(next);
}

/* arr's items by their field (NULL: the items themselves), joined with
   commas, against want. */
static void assert_order(const json_t *arr, const char *field, const char *want)
{
	char got[256] = "";
	size_t i;
	json_t *it;
	json_array_foreach(arr, i, it)
	{
		const json_t *v = field ? json_object_get(it, field) : it;
		char one[32];
		if (json_is_string(v))
			snprintf(one, sizeof one, "%s", json_string_value(v));
		else
			snprintf(one, sizeof one, "%lld",
				 (long long)json_integer_value(v));
		if (i)
			strcat(got, ",");
		strcat(got, one);
	}
	cr_assert_str_eq(got, want, "order %s, want %s", got, want);
}

/* structured-merge-diff's order: items both lists hold follow the applied
   order, a new item lands at its place in it, and a live item the apply
   does not name keeps its place among the live items around it. */
Test(mf_apply, keyed_list_items_follow_the_applied_order)
{
	json_t *live = J("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"s\"},"
			 "\"spec\":{\"ports\":[{\"port\":80,\"protocol\":\"TCP\"},"
			 "{\"port\":81,\"protocol\":\"TCP\"},{\"port\":82,\"protocol\":\"TCP\"}]}}");
	json_t *cfg = J("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"s\"},"
			"\"spec\":{\"ports\":[{\"port\":82},{\"port\":90},{\"port\":80,\"name\":\"web\"}]}}");
	struct srv_mf_op op = op_of(SVC(), "m");
	struct srv_error err = {0};
	json_t *out = NULL;
	cr_assert_eq(srv_mf_apply(&op, live, cfg, false, &out, &err), LP_OK);
	json_t *ports = json_object_get(json_object_get(out, "spec"), "ports");
	assert_order(ports, "port", "81,82,90,80");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(ports, 3), "name")), "web");
	json_decref(out);
	/* reapplied in another order, the list takes it */
	json_t *live2 = J("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"s\"},"
			  "\"spec\":{\"ports\":[{\"port\":80,\"protocol\":\"TCP\"},"
			  "{\"port\":81,\"protocol\":\"TCP\"}]}}");
	json_t *cfg2 = J("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"s\"},"
			 "\"spec\":{\"ports\":[{\"port\":81},{\"port\":80}]}}");
	cr_assert_eq(srv_mf_apply(&op, live2, cfg2, false, &out, &err), LP_OK);
	assert_order(json_object_get(json_object_get(out, "spec"), "ports"), "port", "81,80");
	json_decref(out);
	/* a set the same way */
	json_t *live3 = J("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\","
			  "\"finalizers\":[\"x/a\",\"x/b\",\"x/c\"]}}");
	json_t *cfg3 = J("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\","
			 "\"finalizers\":[\"x/c\",\"x/a\"]}}");
	struct srv_mf_op op3 = op_of(CM(), "m");
	cr_assert_eq(srv_mf_apply(&op3, live3, cfg3, false, &out, &err), LP_OK);
	assert_order(json_object_get(json_object_get(out, "metadata"), "finalizers"), NULL,
		     "x/b,x/c,x/a");
	json_decref(out);
	json_decref(live);
	json_decref(cfg);
	json_decref(live2);
	json_decref(cfg2);
	json_decref(live3);
	json_decref(cfg3);
}

/* kube's skipNonAppliedManager: an update of an object that has no
   entries records none; the first apply to it records what it held as
   "before-first-apply" (an Update in the apply's version), which the
   apply conflicts with */
Test(mf_apply, before_first_apply_owns_what_an_untracked_object_held)
{
	json_t *old =
	    J("{\"metadata\":{\"name\":\"a\",\"labels\":{\"x\":\"y\"}},"
	      "\"data\":{\"a\":\"1\",\"b\":\"2\"}}");
	json_t *next =
	    J("{\"metadata\":{\"name\":\"a\",\"labels\":{\"x\":\"y\"}},"
	      "\"data\":{\"a\":\"1\",\"b\":\"3\"}}");
	struct srv_mf_op op = op_of(CM(), "u");
	struct srv_error err = {0};
	cr_assert_eq(srv_mf_update(&op, old, next, &err), LP_OK);
	cr_assert_eq(n_entries(next), 0, "an untracked object's update");
	json_t *cfg =
	    J("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	      "\"metadata\":{\"name\":\"a\"},\"data\":{\"a\":\"9\"}}");
	op = op_of(CM(), "m1");
	json_t *out = NULL;
	cr_assert_eq(srv_mf_apply(&op, next, cfg, false, &out, &err),
		     LP_E_CONFLICT);
	cr_assert_str_eq(err.message,
			 "Apply failed with 1 conflict: conflict with "
			 "\"before-first-apply\" using v1: .data.a");
	memset(&err, 0, sizeof err);
	cr_assert_eq(srv_mf_apply(&op, next, cfg, true, &out, &err), LP_OK);
	assert_owns(out, "m1", "Apply", "{\"f:data\":{\"f:a\":{}}}");
	assert_owns(out, "before-first-apply", "Update",
		    "{\"f:data\":{\".\":{},\"f:b\":{}},\"f:metadata\":{"
		    "\"f:labels\":{\".\":{},\"f:x\":{}}}}");
	json_decref(old);
	json_decref(next);
	json_decref(cfg);
	json_decref(out);
}

/* The typed conversion of a configuration (structured-merge-diff's, kube's
   first step of an apply): its errors are one plain 500. */
static void assert_typed_error(const char *cfg_text, const char *want)
{
	json_t *cfg = J(cfg_text);
	struct srv_mf_op op = op_of(SVC(), "m1");
	struct srv_error err = {0};
	json_t *out = NULL;
	cr_assert_neq(srv_mf_apply(&op, NULL, cfg, false, &out, &err), LP_OK);
	cr_assert(err.no_reason, "a plain error");
	cr_assert_str_eq(err.message, want);
	cr_assert_null(out);
	json_decref(cfg);
}

Test(mf_apply, an_undeclared_member_is_the_typed_conversions_error)
{
	assert_typed_error(
	    "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{"
	    "\"name\":\"s\","
	    "\"namespace\":\"ns\"},\"spec\":{\"ports\":[{\"port\":80,\"nam\":"
	    "\"x\"}]}}",
	    "failed to create typed patch object (ns/s; /v1, Kind=Service): "
	    ".spec.ports[port=80,protocol=\"TCP\"].nam: field not declared in "
	    "schema");
}

Test(mf_apply, wrongly_typed_values_are_listed_as_go_prints_them)
{
	assert_typed_error(
	    "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{"
	    "\"name\":\"s\"},"
	    "\"spec\":{\"clusterIP\":1.5,\"ports\":[{\"port\":\"80\","
	    "\"protocol\":\"UDP\","
	    "\"targetPort\":[1]}],\"publishNotReadyAddresses\":{\"a\":null},"
	    "\"externalIPs\":[\"a\",false]}}",
	    "failed to create typed patch object (/s; /v1, Kind=Service): "
	    "errors:\n"
	    "  .spec.clusterIP: expected string, got "
	    "&value.valueUnstructured{Value:1.5}\n"
	    "  .spec.externalIPs[1]: expected string, got "
	    "&value.valueUnstructured{Value:false}\n"
	    "  .spec.ports[port=\"80\",protocol=\"UDP\"].port: expected "
	    "numeric (int or float), got string\n"
	    "  .spec.ports[port=\"80\",protocol=\"UDP\"].targetPort: expected "
	    "any scalar, got &{[1]}\n"
	    "  .spec.publishNotReadyAddresses: expected boolean, got "
	    "&{map[a:<nil>]}");
}

Test(mf_apply, nulls_and_well_typed_values_pass)
{
	json_t *cfg = J("{\"apiVersion\":\"v1\",\"kind\":\"Service\","
			"\"metadata\":{\"name\":\"s\","
			"\"labels\":null,\"creationTimestamp\":null},\"spec\":{"
			"\"ports\":[{\"port\":80,"
			"\"targetPort\":\"web\"},{\"port\":81,\"targetPort\":"
			"8081}],\"selector\":null,"
			"\"type\":null}}");
	struct srv_mf_op op = op_of(SVC(), "m1");
	struct srv_error err = {0};
	json_t *out = NULL;
	cr_assert_eq(srv_mf_apply(&op, NULL, cfg, false, &out, &err), LP_OK,
		     "%s", err.message);
	json_decref(cfg);
	json_decref(out);
}
