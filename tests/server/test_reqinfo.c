/*
 * test_reqinfo.c -- tests of server/reqinfo.c: kube's RequestInfo from
 * method, path and query (reference §1.3), and how the path is split: kube
 * drops trailing slashes and never collapses "//", an empty namespace
 * segment means every namespace and any other empty segment is a 404.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "../../server/reqinfo.h"

/* A query of at most two parameters, "key=value" each. */
struct q {
	const char *kv[2];
};

static const char *qget(void *ud, const char *key)
{
	const struct q *q = ud;
	size_t kl = strlen(key);
	for (int i = 0; i < 2; i++)
		if (q->kv[i] && !strncmp(q->kv[i], key, kl) &&
		    q->kv[i][kl] == '=')
			return q->kv[i] + kl + 1;
	return NULL;
}

static struct srv_reqinfo ri;

static lp_err parse_q(const char *method, const char *path, struct q *q)
{
	struct srv_error err = {0};
	srv_reqinfo_free(&ri); /* the previous call's, if any */
	memset(&ri, 0, sizeof ri);
	lp_err rc = srv_reqinfo_parse(method, path, qget, q, &ri, &err);
	if (rc)
		cr_assert_eq(err.code, rc);
	return rc;
}

static lp_err parse(const char *method, const char *path)
{
	struct q none = {{NULL, NULL}};
	return parse_q(method, path, &none);
}

static void fini(void)
{
	srv_reqinfo_free(&ri);
}

TestSuite(reqinfo, .fini = fini);

/* Expect a resource request with these parts. */
static void expect(const char *verb, const char *group, const char *version,
		   const char *ns, const char *resource, const char *name,
		   const char *sub)
{
	cr_assert(ri.is_resource);
	cr_expect_str_eq(ri.verb, verb);
	cr_expect_str_eq(ri.group, group);
	cr_expect_str_eq(ri.version, version);
	cr_expect_str_eq(ri.ns, ns);
	cr_expect_str_eq(ri.resource, resource);
	cr_expect_str_eq(ri.name, name);
	cr_expect_str_eq(ri.subresource, sub);
}

Test(reqinfo, core_and_group_paths)
{
	cr_assert_eq(parse("GET", "/api/v1/namespaces/default/pods/p1"), LP_OK);
	expect("get", "", "v1", "default", "pods", "p1", "");
	cr_expect_str_eq(ri.prefix, "api");
	srv_reqinfo_free(&ri);
	cr_assert_eq(parse("PUT", "/apis/apps/v1/namespaces/ns/deployments/d/"
				  "status"),
		     LP_OK);
	expect("update", "apps", "v1", "ns", "deployments", "d", "status");
	cr_expect_str_eq(ri.prefix, "apis");
	srv_reqinfo_free(&ri);
	cr_assert_eq(parse("DELETE", "/api/v1/namespaces/ns/configmaps"),
		     LP_OK);
	expect("deletecollection", "", "v1", "ns", "configmaps", "", "");
	srv_reqinfo_free(&ri);
	cr_assert_eq(parse("PUT", "/api/v1/namespaces/ns/finalize"), LP_OK);
	expect("update", "", "v1", "ns", "namespaces", "ns", "finalize");
}

Test(reqinfo, non_resource_paths)
{
	const char *paths[] = {"/", "/version", "/api", "/api/v1", "/apis",
			       "/apis/apps", "/apis/apps/v1", "/healthz/ping"};
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		cr_assert_eq(parse("GET", paths[i]), LP_OK, "%s", paths[i]);
		cr_expect(!ri.is_resource, "%s", paths[i]);
		cr_expect_str_eq(ri.prefix, "", "%s", paths[i]);
		cr_expect_str_eq(ri.verb, "get");
		srv_reqinfo_free(&ri);
	}
}

Test(reqinfo, list_watch_and_field_selector_name)
{
	struct q w = {{"watch=true", "fieldSelector=metadata.name=x"}};
	cr_assert_eq(parse_q("GET", "/api/v1/namespaces/ns/pods", &w), LP_OK);
	expect("watch", "", "v1", "ns", "pods", "x", "");
	srv_reqinfo_free(&ri);
	struct q l = {{"watch=false", "fieldSelector=metadata.name=x"}};
	cr_assert_eq(parse_q("GET", "/api/v1/namespaces/ns/pods", &l), LP_OK);
	expect("list", "", "v1", "ns", "pods", "", "");
	srv_reqinfo_free(&ri);
	cr_assert_eq(parse("GET", "/api/v1/watch/namespaces/ns/pods/p"), LP_OK);
	expect("watch", "", "v1", "ns", "pods", "p", "");
	cr_expect(ri.watch_path);
}

/* Trailing slashes are dropped, as kube's strings.Trim does. */
Test(reqinfo, trailing_slashes_are_dropped)
{
	cr_assert_eq(parse("GET", "/api/v1/namespaces/ns/pods/"), LP_OK);
	expect("list", "", "v1", "ns", "pods", "", "");
	srv_reqinfo_free(&ri);
	cr_assert_eq(parse("GET", "/api/v1/namespaces/ns/pods/p///"), LP_OK);
	expect("get", "", "v1", "ns", "pods", "p", "");
	srv_reqinfo_free(&ri);
	cr_assert_eq(parse("GET", "/api/v1/namespaces//"), LP_OK);
	expect("list", "", "v1", "", "namespaces", "", "");
}

/* kube-apiserver lists across namespaces for /api/v1/namespaces//pods
   (the Python client's list_namespaced_pod("") relies on it). */
Test(reqinfo, empty_namespace_means_all_namespaces)
{
	cr_assert_eq(parse("GET", "/api/v1/namespaces//pods"), LP_OK);
	expect("list", "", "v1", "", "pods", "", "");
	srv_reqinfo_free(&ri);
	cr_assert_eq(parse("GET", "/apis/apps/v1/watch/namespaces//deployments"),
		     LP_OK);
	expect("watch", "apps", "v1", "", "deployments", "", "");
}

/* Anywhere else an empty segment is a 404, as kube's router answers: a
   collapsed "//" used to read /api/v1//pods as /api/v1/pods and
   /api/v1/namespaces/ns//p as a list of "p" in ns. */
Test(reqinfo, other_empty_segments_are_not_found)
{
	const char *paths[] = {
	    "//api/v1/pods",
	    "//version",
	    "/healthz//ping",
	    "/apis//v1",
	    "/api//v1/pods",
	    "/apis/apps//deployments/x",
	    "/api/v1//pods",
	    "/api/v1/watch//pods",
	    "/api/v1/namespaces/ns//p",
	    "/api/v1/namespaces/ns/pods//status",
	    "/api/v1/namespaces/ns/pods/p//x",
	    "/api/v1/namespaces//pods//p",
	    "/api/v1/namespaces/ns/pods/p/status//x",
	};
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
		cr_expect_eq(parse("GET", paths[i]), LP_E_NOTFOUND, "%s",
			     paths[i]);
}

Test(reqinfo, dot_segments_are_not_found)
{
	const char *paths[] = {"/api/v1/namespaces/../pods", "/./version",
			       "/api/v1/namespaces/ns/pods/.",
			       "/api/v1/namespaces/ns/pods/p/status/.."};
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
		cr_expect_eq(parse("GET", paths[i]), LP_E_NOTFOUND, "%s",
			     paths[i]);
}

Test(reqinfo, watch_with_nothing_after_it_is_not_found)
{
	cr_expect_eq(parse("GET", "/api/v1/watch"), LP_E_NOTFOUND);
	cr_expect_eq(parse("GET", "/api/v1/watch/"), LP_E_NOTFOUND);
}

/* More segments than the parser keeps: the extra ones are ignored, but an
   empty or dot segment among them still counts. */
Test(reqinfo, long_paths)
{
	char p[512] = "/api/v1/namespaces/ns/pods/p/status";
	for (int i = 0; i < 20; i++)
		strcat(p, "/x");
	cr_assert_eq(parse("GET", p), LP_OK);
	expect("get", "", "v1", "ns", "pods", "p", "status");
	srv_reqinfo_free(&ri);
	strcat(p, "//x");
	cr_expect_eq(parse("GET", p), LP_E_NOTFOUND);
	p[strlen(p) - 3] = 0;
	strcat(p, "/..");
	cr_expect_eq(parse("GET", p), LP_E_NOTFOUND);
}
