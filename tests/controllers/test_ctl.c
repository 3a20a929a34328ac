/*
 * test_ctl.c -- the controller runtime's pure parts: the --controllers
 * value (names, "*", "-name", in order; unknown names refused with the
 * known ones listed) and the finalizer helpers. The controllers themselves
 * run against the real server in tests/e2e/controllers.sh.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "../../controllers/ctl.h"

static uint32_t bit(const char *name)
{
	for (int i = 0; ctl_builtin[i]; i++)
		if (!strcmp(ctl_builtin[i]->name, name))
			return 1u << i;
	cr_assert_fail("no controller %s", name);
	return 0;
}

static uint32_t parse_ok(const char *spec)
{
	uint32_t m = 0xdead;
	char msg[256] = "";
	cr_assert_eq(ctl_parse_enabled(spec, &m, msg, sizeof msg), LP_OK,
		     "%s: %s", spec, msg);
	return m;
}

Test(ctl, the_controllers_flag)
{
	uint32_t ns = bit("namespace"), gc = bit("gc"),
		 crd = bit("crd-finalizer"), naming = bit("crd-naming"),
		 ttl = bit("event-ttl");
	cr_assert_eq(parse_ok("*"), ns | gc | crd | naming | ttl);
	cr_assert_eq(parse_ok("*,-gc"), ns | crd | naming | ttl);
	cr_assert_eq(parse_ok("*,-crd-naming"), ns | gc | crd | ttl);
	cr_assert_eq(
	    parse_ok(
		"*,-garbagecollector,-crd-finalizer,-crd-naming,-event-ttl"),
	    ns);
	cr_assert_eq(parse_ok("gc"), gc);
	cr_assert_eq(parse_ok(""), 0);
	cr_assert_eq(parse_ok(NULL), 0);
	cr_assert_eq(parse_ok("-*"), 0);
	cr_assert_eq(parse_ok("*,-*,namespace"), ns);
	cr_assert_eq(parse_ok("-gc,*"), ns | gc | crd | naming | ttl,
		     "applied in order");
	cr_assert_eq(parse_ok("namespace,,gc,"), ns | gc,
		     "empty items ignored");
}

Test(ctl, unknown_controllers_are_refused)
{
	static const char *const bad[] = {"bogus",	"*,-bogus", "gc,nam",
					  "namespace ", "-",	    "**"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		uint32_t m = 7;
		char msg[256] = "";
		cr_assert_eq(ctl_parse_enabled(bad[i], &m, msg, sizeof msg),
			     LP_E_INVAL, "%s", bad[i]);
		cr_assert_eq(m, 7, "%s: mask untouched", bad[i]);
		cr_assert(strstr(msg, "known: namespace, gc, crd-finalizer, "
				      "crd-naming, event-ttl"),
			  "%s: %s", bad[i], msg);
	}
	char msg[256] = "";
	uint32_t m;
	ctl_parse_enabled("*,-bogus", &m, msg, sizeof msg);
	cr_assert_str_eq(msg, "unknown controller \"bogus\" (known: namespace, "
			      "gc, crd-finalizer, crd-naming, event-ttl)");
}

Test(ctl, finalizer_helpers)
{
	json_t *o = json_loads("{\"metadata\":{\"uid\":\"u\",\"finalizers\":"
			       "[\"a\",\"orphan\",\"b\",\"orphan\"]}}",
			       0, NULL);
	cr_assert_not_null(o);
	cr_assert_str_eq(ctl_meta_str(o, "uid"), "u");
	cr_assert_null(ctl_meta_str(o, "name"));
	cr_assert(ctl_has_finalizer(o, "orphan"));
	cr_assert_not(ctl_has_finalizer(o, "foregroundDeletion"));
	cr_assert(ctl_drop_finalizer(o, "orphan"));
	cr_assert_not(ctl_has_finalizer(o, "orphan"), "every copy goes");
	cr_assert_not(ctl_drop_finalizer(o, "orphan"));
	json_t *want = json_loads("{\"metadata\":{\"uid\":\"u\",\"finalizers\":"
				  "[\"a\",\"b\"]}}",
				  0, NULL);
	cr_assert(json_equal(o, want));
	json_decref(want);
	json_decref(o);
	json_t *none = json_object();
	cr_assert_not(ctl_has_finalizer(none, "x"));
	cr_assert_not(ctl_drop_finalizer(none, "x"));
	json_decref(none);
}
