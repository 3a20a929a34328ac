/*
 * test_crdnames.c -- the CRD naming and establishing decision
 * (server/registry/crdnames.c; reference §8.3): which requested names a CRD
 * gets against the names its group holds, the NamesAccepted and
 * Established conditions, and when nothing is left to write.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "registry/crdnames.h"

#define NOW "2026-01-02T03:04:05Z"
#define LATER "2026-06-07T08:09:10Z"

/* A CRD as created: requested names, an empty status. */
static json_t *crd_new(const char *plural, const char *singular,
		       const char *kind, const char *shorts)
{
	json_t *c = json_pack(
	    "{s:{s:s},s:{s:s,s:{s:s,s:s,s:s,s:s+}},s:{s:{s:s,s:s},s:[]}}",
	    "metadata", "uid", "u-1", "spec", "group", "g.example.com", "names",
	    "plural", plural, "singular", singular, "kind", kind, "listKind",
	    kind, "List", "status", "acceptedNames", "plural", "", "kind", "",
	    "conditions");
	cr_assert_not_null(c);
	if (shorts) {
		json_t *a = json_loads(shorts, 0, NULL);
		cr_assert_not_null(a);
		json_object_set_new(
		    json_object_get(json_object_get(c, "spec"), "names"),
		    "shortNames", a);
	}
	return c;
}

static const char *sval(const json_t *o, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", path);
	const json_t *cur = o;
	for (char *save = NULL, *p = strtok_r(buf, ".", &save); p;
	     p = strtok_r(NULL, ".", &save))
		cur = json_object_get(cur, p);
	return json_string_value(cur);
}

static const json_t *cond(const json_t *st, const char *type)
{
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(st, "conditions"), i, c)
	{
		if (!strcmp(json_string_value(json_object_get(c, "type")),
			    type))
			return c;
	}
	return NULL;
}

static void expect_cond(const json_t *st, const char *type, const char *status,
			const char *reason, const char *message)
{
	const json_t *c = cond(st, type);
	cr_assert_not_null(c, "no %s condition", type);
	cr_expect_str_eq(sval(c, "status"), status, "%s status", type);
	cr_expect_str_eq(sval(c, "reason"), reason, "%s reason", type);
	cr_expect_str_eq(sval(c, "message"), message, "%s message", type);
}

/* Decide and apply: the CRD as it would be stored after the write. */
static json_t *decide(json_t *crd, const struct reg_crd_taken *t,
		      const char *now)
{
	json_t *st = NULL;
	cr_assert_eq(reg_crd_names_status(crd, t, now, false, &st), LP_OK);
	if (st)
		json_object_set_new(crd, "status", st);
	return st;
}

static struct reg_crd_taken taken(void)
{
	struct reg_crd_taken t;
	cr_assert_eq(reg_crd_taken_init(&t), LP_OK);
	return t;
}

Test(crdnames, a_free_crd_is_accepted_and_established)
{
	json_t *crd = crd_new("foos", "foo", "Foo", "[\"fo\"]");
	json_object_set_new(
	    json_object_get(json_object_get(crd, "spec"), "names"),
	    "categories", json_pack("[s]", "all"));
	struct reg_crd_taken t = taken();
	cr_assert_not(reg_crd_names_settled(crd));
	json_t *st = decide(crd, &t, NOW);
	cr_assert_not_null(st);
	json_t *want =
	    json_pack("{s:s,s:s,s:[s],s:s,s:s,s:[s]}", "plural", "foos",
		      "singular", "foo", "shortNames", "fo", "kind", "Foo",
		      "listKind", "FooList", "categories", "all");
	cr_assert(json_equal(json_object_get(st, "acceptedNames"), want));
	json_decref(want);
	expect_cond(st, "NamesAccepted", "True", "NoConflicts",
		    "no conflicts found");
	expect_cond(st, "Established", "True", "InitialNamesAccepted",
		    "the initial names have been accepted");
	cr_expect_str_eq(sval(cond(st, "Established"), "lastTransitionTime"),
			 NOW);
	cr_assert(reg_crd_names_settled(crd));
	/* Deciding again from the same view writes nothing, even with its
	   own names in the taken sets (kube counts the CRD itself). */
	reg_crd_taken_add(&t, json_object_get(st, "acceptedNames"));
	cr_assert_null(decide(crd, &t, LATER));
	reg_crd_taken_free(&t);
	json_decref(crd);
}

Test(crdnames, a_clash_keeps_the_name_unaccepted_and_not_established)
{
	struct reg_crd_taken t = taken();
	json_t *holder =
	    json_pack("{s:s,s:s,s:s,s:s}", "plural", "crontabs", "singular",
		      "crontab", "kind", "CronTab", "listKind", "CronTabList");
	reg_crd_taken_add(&t, holder);
	json_decref(holder);
	json_t *crd = crd_new("crontabzs", "crontabz", "CronTab", NULL);
	json_t *st = decide(crd, &t, NOW);
	cr_assert_not_null(st);
	/* The free names are accepted one by one; the clashing kind and
	   list kind keep their old (empty) values. */
	json_t *want = json_pack("{s:s,s:s,s:s}", "plural", "crontabzs",
				 "singular", "crontabz", "kind", "");
	cr_assert(json_equal(json_object_get(st, "acceptedNames"), want), "%s",
		  json_dumps(json_object_get(st, "acceptedNames"), 0));
	json_decref(want);
	/* The last conflict wins: ListKind after Kind. */
	expect_cond(st, "NamesAccepted", "False", "ListKindConflict",
		    "\"CronTabList\" is already in use");
	expect_cond(st, "Established", "False", "NotAccepted",
		    "not all names are accepted");
	cr_assert_not(reg_crd_names_settled(crd));
	cr_assert_null(decide(crd, &t, LATER), "still waiting: no write");

	/* The holder goes: the next decision accepts and establishes. */
	struct reg_crd_taken empty = taken();
	st = decide(crd, &empty, LATER);
	cr_assert_not_null(st);
	expect_cond(st, "NamesAccepted", "True", "NoConflicts",
		    "no conflicts found");
	expect_cond(st, "Established", "True", "InitialNamesAccepted",
		    "the initial names have been accepted");
	cr_expect_str_eq(sval(st, "acceptedNames.kind"), "CronTab");
	cr_expect_str_eq(sval(cond(st, "NamesAccepted"), "lastTransitionTime"),
			 LATER, "the status changed: a new transition time");
	cr_assert(reg_crd_names_settled(crd));
	reg_crd_taken_free(&empty);
	reg_crd_taken_free(&t);
	json_decref(crd);
}

Test(crdnames, each_kind_of_conflict_has_its_reason)
{
	static const struct {
		const char *held; /* JSON acceptedNames of another CRD */
		const char *reason, *message;
	} cases[] = {
	    {"{\"plural\":\"foo\"}", "SingularConflict",
	     "\"foo\" is already in use"},
	    {"{\"plural\":\"x\",\"singular\":\"foos\"}", "PluralConflict",
	     "\"foos\" is already in use"},
	    {"{\"plural\":\"x\",\"shortNames\":[\"fo\"]}", "ShortNamesConflict",
	     "\"fo\" is already in use"},
	    {"{\"plural\":\"x\",\"shortNames\":[\"f\",\"fo\"]}",
	     "ShortNamesConflict",
	     "[\"fo\" is already in use, \"f\" is already in use]"},
	    {"{\"plural\":\"x\",\"kind\":\"FooList\"}", "ListKindConflict",
	     "\"FooList\" is already in use"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct reg_crd_taken t = taken();
		json_t *held = json_loads(cases[i].held, 0, NULL);
		cr_assert_not_null(held);
		reg_crd_taken_add(&t, held);
		json_decref(held);
		json_t *crd = crd_new("foos", "foo", "Foo", "[\"fo\",\"f\"]");
		json_t *st = decide(crd, &t, NOW);
		cr_assert_not_null(st);
		expect_cond(st, "NamesAccepted", "False", cases[i].reason,
			    cases[i].message);
		reg_crd_taken_free(&t);
		json_decref(crd);
	}
}

Test(crdnames, short_names_are_all_or_nothing_and_only_new_ones_checked)
{
	json_t *crd = crd_new("foos", "foo", "Foo", "[\"fo\"]");
	struct reg_crd_taken t = taken();
	decide(crd, &t, NOW);
	cr_assert(reg_crd_names_settled(crd));
	/* Add a short name another CRD holds: the accepted list stays the
	   old one, but the CRD keeps being Established. */
	json_object_set_new(
	    json_object_get(json_object_get(crd, "spec"), "names"),
	    "shortNames", json_pack("[s,s]", "fo", "b"));
	json_t *other =
	    json_pack("{s:s,s:[s]}", "plural", "bars", "shortNames", "b");
	reg_crd_taken_add(&t, other);
	json_decref(other);
	/* Its own accepted "fo" in the set does not count against it. */
	reg_crd_taken_add(&t, json_object_get(json_object_get(crd, "status"),
					      "acceptedNames"));
	json_t *st = decide(crd, &t, LATER);
	cr_assert_not_null(st);
	json_t *acc_short =
	    json_object_get(json_object_get(st, "acceptedNames"), "shortNames");
	cr_assert_eq(json_array_size(acc_short), 1);
	cr_expect_str_eq(json_string_value(json_array_get(acc_short, 0)), "fo");
	expect_cond(st, "NamesAccepted", "False", "ShortNamesConflict",
		    "\"b\" is already in use");
	expect_cond(st, "Established", "True", "InitialNamesAccepted",
		    "the initial names have been accepted");
	cr_expect_str_eq(sval(cond(st, "Established"), "lastTransitionTime"),
			 NOW, "an established CRD stays established");
	cr_assert_not(reg_crd_names_settled(crd));
	reg_crd_taken_free(&t);
	json_decref(crd);
}

Test(crdnames, builtins_of_the_group_hold_their_names)
{
	struct reg_crd_taken t = taken();
	static const char *const shorts[] = {"cm", NULL};
	reg_crd_taken_add_builtin(&t, "configmaps", "ConfigMap", shorts);
	json_t *crd = crd_new("cms", "cm", "Thing", NULL);
	json_t *st = decide(crd, &t, NOW);
	expect_cond(st, "NamesAccepted", "False", "SingularConflict",
		    "\"cm\" is already in use");
	json_decref(crd);
	crd = crd_new("maps", "map", "ConfigMap", NULL);
	st = decide(crd, &t, NOW);
	expect_cond(st, "NamesAccepted", "False", "ListKindConflict",
		    "\"ConfigMapList\" is already in use");
	json_decref(crd);
	crd = crd_new("configmap", "x", "X", NULL);
	st = decide(crd, &t, NOW);
	expect_cond(st, "NamesAccepted", "False", "PluralConflict",
		    "\"configmap\" is already in use");
	json_decref(crd);
	reg_crd_taken_free(&t);
}

Test(crdnames, other_conditions_and_status_fields_are_kept)
{
	json_t *crd = crd_new("foos", "foo", "Foo", NULL);
	json_t *st0 = json_object_get(crd, "status");
	json_object_set_new(st0, "storedVersions", json_pack("[s]", "v1"));
	json_array_append_new(
	    json_object_get(st0, "conditions"),
	    json_pack("{s:s,s:s,s:s,s:s,s:s}", "type", "Terminating", "status",
		      "True", "reason", "InstanceDeletionPending", "message",
		      "m", "lastTransitionTime", NOW));
	struct reg_crd_taken t = taken();
	json_t *st = decide(crd, &t, LATER);
	cr_assert_not_null(st);
	cr_expect_str_eq(json_string_value(json_array_get(
			     json_object_get(st, "storedVersions"), 0)),
			 "v1");
	expect_cond(st, "Terminating", "True", "InstanceDeletionPending", "m");
	cr_assert_eq(json_array_size(json_object_get(st, "conditions")), 3);
	reg_crd_taken_free(&t);
	json_decref(crd);
}

Test(crdnames, settled_needs_every_name_and_both_conditions)
{
	json_t *crd = crd_new("foos", "foo", "Foo", NULL);
	struct reg_crd_taken t = taken();
	decide(crd, &t, NOW);
	cr_assert(reg_crd_names_settled(crd));
	json_t *names = json_object_get(json_object_get(crd, "spec"), "names");
	json_object_set_new(names, "categories", json_pack("[s]", "all"));
	cr_assert_not(reg_crd_names_settled(crd), "a new category");
	decide(crd, &t, NOW);
	cr_assert(reg_crd_names_settled(crd));
	json_t *est =
	    (json_t *)cond(json_object_get(crd, "status"), "Established");
	json_object_set_new(est, "status", json_string("False"));
	cr_assert_not(reg_crd_names_settled(crd), "not established");
	reg_crd_taken_free(&t);
	json_decref(crd);
	cr_assert_not(reg_crd_names_settled(NULL));
}

static enum reg_approval approval(const char *group, const char *value)
{
	json_t *crd = crd_new("foos", "foo", "Foo", NULL);
	json_object_set_new(json_object_get(crd, "spec"), "group",
			    json_string(group));
	if (value)
		json_object_set_new(json_object_get(crd, "metadata"),
				    "annotations",
				    json_pack("{s:s}", REG_APPROVAL_ANNOTATION,
					      value));
	char reason[512];
	const char *v;
	enum reg_approval st = reg_crd_approval(crd, &v, reason, sizeof reason);
	cr_expect_str_eq(v, value ? value : "");
	json_decref(crd);
	return st;
}

Test(crdnames, approval_of_protected_groups)
{
	cr_expect_eq(approval("g.example.com", NULL), REG_APPROVAL_UNPROTECTED);
	cr_expect_eq(approval("x-k8s.io", NULL), REG_APPROVAL_UNPROTECTED);
	cr_expect_eq(approval("cluster.x-k8s.io", NULL),
		     REG_APPROVAL_UNPROTECTED);
	cr_expect_eq(approval("notk8s.io", NULL), REG_APPROVAL_UNPROTECTED);
	cr_expect_eq(approval("k8s.io", NULL), REG_APPROVAL_MISSING);
	cr_expect_eq(approval("a.b.kubernetes.io", ""), REG_APPROVAL_MISSING);
	cr_expect_eq(approval("kubernetes.io", "unapproved"),
		     REG_APPROVAL_BYPASSED);
	cr_expect_eq(approval("s.k8s.io", "unapproved, testing only"),
		     REG_APPROVAL_BYPASSED);
	cr_expect_eq(approval("s.k8s.io", "https://github.com/x/y/pull/1"),
		     REG_APPROVAL_APPROVED);
	cr_expect_eq(approval("s.k8s.io", "http://h"), REG_APPROVAL_APPROVED);
	cr_expect_eq(approval("s.k8s.io", "git+ssh://h/p"),
		     REG_APPROVAL_APPROVED);
	static const char *const invalid[] = {
	    "yes", "https://", "https:///path", "/just/a/path", "https://a b",
	    "1http://h", "Unapproved", "approved",
	};
	for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
		cr_expect_eq(approval("s.k8s.io", invalid[i]),
			     REG_APPROVAL_INVALID, "%s", invalid[i]);
}

Test(crdnames, approval_condition_follows_the_annotation)
{
	json_t *crd = crd_new("foos", "foo", "Foo", NULL);
	json_object_set_new(json_object_get(crd, "spec"), "group",
			    json_string("s.k8s.io"));
	struct reg_crd_taken t = taken();
	json_t *st = decide(crd, &t, NOW);
	cr_assert_not_null(st);
	expect_cond(st, "KubernetesAPIApprovalPolicyConformant", "False",
		    "MissingAnnotation",
		    "protected groups must have approval annotation "
		    "\"api-approved.kubernetes.io\", see "
		    "https://github.com/kubernetes/enhancements/pull/1111");
	cr_assert(reg_crd_names_settled(crd));
	json_object_set_new(json_object_get(crd, "metadata"), "annotations",
			    json_pack("{s:s}", REG_APPROVAL_ANNOTATION,
				      "https://example.com/pr"));
	cr_assert_not(reg_crd_names_settled(crd), "a new annotation");
	st = decide(crd, &t, LATER);
	cr_assert_not_null(st);
	expect_cond(st, "KubernetesAPIApprovalPolicyConformant", "True",
		    "ApprovedAnnotation", "approved in https://example.com/pr");
	cr_assert(reg_crd_names_settled(crd));
	reg_crd_taken_free(&t);
	json_decref(crd);
}
