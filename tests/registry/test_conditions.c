/*
 * test_conditions.c -- the registry's small object helpers shared by the
 * server and the controllers: string lists (finalizers) and status
 * conditions set the way kube's helpers set them.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "registry/object.h"

static json_t *cond(json_t *obj, const char *type)
{
	size_t i;
	json_t *v;
	json_array_foreach(
	    json_object_get(json_object_get(obj, "status"), "conditions"), i, v)
	{
		if (!strcmp(json_string_value(json_object_get(v, "type")),
			    type))
			return v;
	}
	return NULL;
}

Test(conditions, string_lists)
{
	json_t *a = json_pack("[s,s,s,i]", "x", "y", "x", 3);
	cr_assert(reg_strings_has(a, "y"));
	cr_assert_not(reg_strings_has(a, "z"));
	cr_assert(reg_strings_drop(a, "x"));
	cr_assert_eq(json_array_size(a), 2,
		     "every copy goes, non-strings stay");
	cr_assert_not(reg_strings_drop(a, "x"));
	cr_assert_not(reg_strings_has(NULL, "x"));
	cr_assert_not(reg_strings_drop(NULL, "x"));
	json_decref(a);
}

Test(conditions, set_moves_the_transition_time_only_on_a_status_change)
{
	json_t *o = json_object();
	cr_assert(reg_set_condition(o, "Ready", "True", "Ok", "fine"));
	json_t *c = cond(o, "Ready");
	cr_assert_not_null(c);
	cr_assert_str_eq(json_string_value(json_object_get(c, "status")),
			 "True");
	cr_assert_not_null(json_object_get(c, "lastTransitionTime"));
	/* the same again: nothing changes */
	cr_assert_not(reg_set_condition(o, "Ready", "True", "Ok", "fine"));
	/* a new reason with the same status keeps the time */
	json_object_set_new(c, "lastTransitionTime", json_string("then"));
	cr_assert(reg_set_condition(o, "Ready", "True", "Other", "still fine"));
	cr_assert_str_eq(
	    json_string_value(json_object_get(c, "lastTransitionTime")),
	    "then");
	cr_assert_str_eq(json_string_value(json_object_get(c, "reason")),
			 "Other");
	/* a status flip moves it */
	cr_assert(reg_set_condition(o, "Ready", "False", "Broken", "no"));
	cr_assert_str_neq(
	    json_string_value(json_object_get(c, "lastTransitionTime")),
	    "then");
	/* another type is appended */
	cr_assert(reg_set_condition(o, "Done", "False", "Wait", "later"));
	cr_assert_eq(json_array_size(json_object_get(
			 json_object_get(o, "status"), "conditions")),
		     2);
	json_decref(o);
}
