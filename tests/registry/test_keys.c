/*
 * test_keys.c -- tests of server/registry/keys.c: the kube key layout, its
 * refusals, and that split undoes build.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/registry/object.h"
#include "../../server/registry/registry.h"

static void expect_key(const char *group, const char *resource, const char *ns,
		       const char *name, const char *want)
{
	struct reg_key k;
	lp_err rc = reg_object_key(group, resource, ns, name, &k);
	cr_assert_eq(rc, LP_OK, "%s", lp_errname(rc));
	cr_assert_str_eq(k.bytes, want);
	cr_assert_eq(k.len, strlen(want));
}

Test(keys, namespaced_object_of_a_named_group)
{
	expect_key("stable.example.com", "crontabs", "default", "c1",
		   "/registry/stable.example.com/crontabs/default/c1");
}

Test(keys, core_group_has_no_group_segment)
{
	expect_key("", "configmaps", "kube-system", "cm",
		   "/registry/configmaps/kube-system/cm");
	expect_key(NULL, "configmaps", "kube-system", "cm",
		   "/registry/configmaps/kube-system/cm");
}

Test(keys, cluster_scoped_has_no_namespace_segment)
{
	expect_key("apiextensions.k8s.io", "customresourcedefinitions", NULL,
		   "crontabs.stable.example.com",
		   "/registry/apiextensions.k8s.io/customresourcedefinitions/"
		   "crontabs.stable.example.com");
	expect_key("", "namespaces", "", "default",
		   "/registry/namespaces/default");
}

Test(keys, list_prefixes_end_in_a_slash)
{
	struct reg_key k;
	cr_assert_eq(reg_list_prefix("", "pods", NULL, &k), LP_OK);
	cr_assert_str_eq(k.bytes, "/registry/pods/");
	cr_assert_eq(reg_list_prefix("apps", "deployments", "ns1", &k), LP_OK);
	cr_assert_str_eq(k.bytes, "/registry/apps/deployments/ns1/");
	cr_assert_eq(k.len, strlen(k.bytes));
}

Test(keys, prefix_of_one_resource_does_not_cover_another)
{
	struct reg_key pre, other;
	cr_assert_eq(reg_list_prefix("", "pods", NULL, &pre), LP_OK);
	cr_assert_eq(reg_object_key("", "podtemplates", "a", "b", &other),
		     LP_OK);
	cr_assert_neq(memcmp(other.bytes, pre.bytes, pre.len), 0);
	cr_assert_eq(reg_list_prefix("", "pods", "a", &pre), LP_OK);
	cr_assert_eq(reg_object_key("", "pods", "ab", "x", &other), LP_OK);
	cr_assert_neq(memcmp(other.bytes, pre.bytes, pre.len), 0);
}

Test(keys, bad_segments_are_refused)
{
	struct reg_key k;
	const char *bad[] = {"", ".", "..", "a/b", "/", "x/"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_expect_eq(reg_object_key("", "pods", "ns", bad[i], &k),
			     LP_E_INVAL, "name '%s'", bad[i]);
		if (bad[i][0])
			cr_expect_eq(
			    reg_object_key("", "pods", bad[i], "n", &k),
			    LP_E_INVAL, "namespace '%s'", bad[i]);
		cr_expect_eq(reg_object_key("", bad[i], "ns", "n", &k),
			     LP_E_INVAL, "resource '%s'", bad[i]);
		if (bad[i][0])
			cr_expect_eq(reg_object_key(bad[i], "r", "ns", "n", &k),
				     LP_E_INVAL, "group '%s'", bad[i]);
	}
	cr_expect_eq(reg_object_key("", NULL, "ns", "n", &k), LP_E_INVAL);
	cr_expect_eq(reg_object_key("", "pods", "ns", NULL, &k), LP_E_INVAL);
	cr_expect_eq(reg_list_prefix("", NULL, NULL, &k), LP_E_INVAL);
}

Test(keys, longest_kubernetes_key_fits)
{
	/* group 253 + resource 63 + namespace 63 + name 253 characters. */
	char group[254], resource[64], ns[64], name[254];
	memset(group, 'g', 253);
	group[253] = '\0';
	memset(resource, 'r', 63);
	resource[63] = '\0';
	memset(ns, 'n', 63);
	ns[63] = '\0';
	memset(name, 'x', 253);
	name[253] = '\0';
	struct reg_key k;
	cr_assert_eq(reg_object_key(group, resource, ns, name, &k), LP_OK);
	cr_assert_eq(k.len, strlen(REG_ROOT) + 253 + 1 + 63 + 1 + 63 + 1 + 253);
	cr_assert_leq(k.len, ENG_KEY_MAX);
}

Test(keys, too_long_is_refused_not_cut)
{
	static char name[ENG_KEY_MAX + 1];
	memset(name, 'x', ENG_KEY_MAX);
	struct reg_key k;
	k.len = 7;
	cr_assert_eq(reg_object_key("", "pods", "ns", name, &k),
		     LP_E_KEYTOOLONG);
	cr_assert_eq(k.len, 7, "out written on failure");
	/* Exactly ENG_KEY_MAX bytes fits. */
	size_t room = ENG_KEY_MAX - strlen("/registry/pods/ns/");
	name[room] = '\0';
	cr_assert_eq(reg_object_key("", "pods", "ns", name, &k), LP_OK);
	cr_assert_eq(k.len, (size_t)ENG_KEY_MAX);
	name[room] = 'x';
	name[room + 1] = '\0';
	cr_assert_eq(reg_object_key("", "pods", "ns", name, &k),
		     LP_E_KEYTOOLONG);
}

Test(keys, split_undoes_build)
{
	struct reg_key k;
	struct reg_key_parts p;
	cr_assert_eq(reg_object_key("g.io", "things", "ns1", "obj", &k), LP_OK);
	cr_assert_eq(reg_key_split("g.io", "things", 1, k.bytes, k.len, &p),
		     LP_OK);
	cr_assert_eq(p.ns_len, 3);
	cr_assert_eq(memcmp(p.ns, "ns1", 3), 0);
	cr_assert_eq(p.name_len, 3);
	cr_assert_eq(memcmp(p.name, "obj", 3), 0);

	cr_assert_eq(reg_object_key("", "namespaces", NULL, "default", &k),
		     LP_OK);
	cr_assert_eq(reg_key_split("", "namespaces", 0, k.bytes, k.len, &p),
		     LP_OK);
	cr_assert_null(p.ns);
	cr_assert_eq(p.name_len, 7);
	cr_assert_eq(memcmp(p.name, "default", 7), 0);
}

Test(keys, split_refuses_keys_of_other_shapes)
{
	struct reg_key_parts p;
	const char *bad[] = {
	    "/registry/pods/",		  /* no name */
	    "/registry/pods/ns",	  /* namespaced without a name */
	    "/registry/pods/ns/",	  /* empty name */
	    "/registry/pods//n",	  /* empty namespace */
	    "/registry/pods/ns/a/b",	  /* extra segment */
	    "/registry/pods/../n",	  /* dot-dot namespace */
	    "/registry/podtemplates/a/b", /* another resource */
	    "/registry/pod",		  /* shorter than the prefix */
	    "registry/pods/ns/n",	  /* no leading slash */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_expect_eq(
		    reg_key_split("", "pods", 1, bad[i], strlen(bad[i]), &p),
		    LP_E_INVAL, "key '%s'", bad[i]);
	cr_expect_eq(reg_key_split("", "namespaces", 0,
				   "/registry/namespaces/a/b",
				   strlen("/registry/namespaces/a/b"), &p),
		     LP_E_INVAL);
	static const char with_nul[] = "/registry/pods/ns/a\0b";
	cr_expect_eq(
	    reg_key_split("", "pods", 1, with_nul, sizeof with_nul - 1, &p),
	    LP_E_INVAL);
}

/* reg_uuid: a random (version 4, RFC 4122 variant) UUID in kube's form. */
Test(keys, uuids_are_random_v4_in_lowercase_hex)
{
	char a[37], b[37];
	reg_uuid(a);
	reg_uuid(b);
	cr_assert_eq(strlen(a), 36);
	for (int i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash)
			cr_assert_eq(a[i], '-', "%s", a);
		else
			cr_assert(strchr("0123456789abcdef", a[i]) && a[i],
				  "%s", a);
	}
	cr_assert_eq(a[14], '4', "%s", a);
	cr_assert(strchr("89ab", a[19]), "%s", a);
	cr_assert_str_neq(a, b);
}

/* Each thread draws uids from a block of 64 uids' random bytes: across
   several blocks and two threads, every one is still a v4 uid of its own. */
#define N_UUIDS 300
static char uuids[2][N_UUIDS][37];

static void *draw_uuids(void *arg)
{
	char(*mine)[37] = arg;
	for (int i = 0; i < N_UUIDS; i++)
		reg_uuid(mine[i]);
	return NULL;
}

static int cmp_uuid(const void *x, const void *y)
{
	return strcmp(x, y);
}

Test(keys, uuids_stay_unique_across_blocks_and_threads)
{
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, draw_uuids, uuids[1]), 0);
	draw_uuids(uuids[0]);
	pthread_join(t, NULL);
	char(*all)[37] = &uuids[0][0];
	for (int i = 0; i < 2 * N_UUIDS; i++)
		cr_assert(all[i][14] == '4' && strchr("89ab", all[i][19]), "%s",
			  all[i]);
	qsort(all, 2 * N_UUIDS, sizeof *all, cmp_uuid);
	for (int i = 1; i < 2 * N_UUIDS; i++)
		cr_assert_str_neq(all[i - 1], all[i]);
}
