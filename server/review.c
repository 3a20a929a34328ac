/*
 * review.c -- the self reviews kubectl auth sends (see review.h):
 * SelfSubjectAccessReview and SelfSubjectRulesReview (authorization.k8s.io/v1,
 * `kubectl auth can-i`, `can-i --list`) and SelfSubjectReview
 * (authentication.k8s.io/v1, `kubectl auth whoami`). As in kube they are
 * create-only and nothing is stored: the answer is the request with its
 * status filled in, 201 Created.
 *
 * lapis has one identity, with every right (README.md, "Serving"): the
 * admin token's bearer over TLS, anyone over --insecure-http (kube's old
 * insecure port, whose user was system:unsecured). So every access review
 * is allowed, the rules are everything, and the user is that identity.
 *
 * Pure but for the request: any thread.
 */
#include <string.h>

#include "review.h"

#define ADMIN_USER "lapis-admin"
#define INSECURE_USER "system:unsecured"

static json_t *groups(void)
{
	return json_pack("[s,s]", "system:masters", "system:authenticated");
}

static const char *user_of(struct srv_req *r)
{
	return srv_options(r->s)->insecure ? INSECURE_USER : ADMIN_USER;
}

static json_t *star(void)
{
	return json_pack("[s]", "*");
}

/* Go's %#v of a ResourceAttributes or NonResourceAttributes, as kube's
   field errors print a struct value (its strings only: what lapis keeps). */
static void go_struct(const char *type, const json_t *o, char *buf, size_t n)
{
	size_t at = (size_t)snprintf(buf, n, "authorization.%s{", type);
	const char *k;
	json_t *v;
	bool first = true;
	json_object_foreach((json_t *)o, k, v)
	{
		if (!json_is_string(v) || at >= n)
			continue;
		at += (size_t)snprintf(buf + at, n - at, "%s%c%s:\"%s\"",
				       first ? "" : ", ", k[0] - 32, k + 1,
				       json_string_value(v));
		first = false;
	}
	if (at < n)
		snprintf(buf + at, n - at, "}");
}

static lp_err access_review(struct srv_req *r, json_t *obj,
			    struct srv_error *err)
{
	json_t *spec = json_object_get(obj, "spec");
	json_t *ra = json_object_get(spec, "resourceAttributes");
	json_t *na = json_object_get(spec, "nonResourceAttributes");
	bool has_ra = json_is_object(ra), has_na = json_is_object(na);
	if (has_ra && has_na) {
		char shown[512];
		go_struct("NonResourceAttributes", na, shown, sizeof shown);
		srv_error_cause(err, "FieldValueInvalid",
				"spec.nonResourceAttributes",
				"Invalid value: %s: cannot be specified in combination with resourceAttributes",
				shown);
	} else if (!has_ra && !has_na) {
		srv_error_cause(err, "FieldValueInvalid", "spec.resourceAttributes",
				"Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified");
	}
	if (srv_error_invalid(err, "SelfSubjectAccessReview",
			      "authorization.k8s.io", ""))
		return err->code;
	char reason[128];
	snprintf(reason, sizeof reason, "lapis: %s has every right",
		 user_of(r));
	json_object_set_new(obj, "status",
			    json_pack("{s:b,s:s}", "allowed", 1, "reason",
				      reason));
	return LP_OK;
}

static void rules_review(json_t *obj)
{
	json_t *rr = json_pack("[{s:o,s:o,s:o}]", "verbs", star(), "apiGroups",
			       star(), "resources", star());
	json_t *nr = json_pack("[{s:o,s:o}]", "verbs", star(),
			       "nonResourceURLs", star());
	json_object_set_new(obj, "status",
			    json_pack("{s:o,s:o,s:b}", "resourceRules", rr,
				      "nonResourceRules", nr, "incomplete", 0));
}

static void self_review(struct srv_req *r, json_t *obj)
{
	json_object_set_new(
	    obj, "status",
	    json_pack("{s:{s:s,s:o}}", "userInfo", "username", user_of(r),
		      "groups", groups()));
}

lp_err srv_review(struct srv_req *r, const struct srv_resource *res,
		  json_t *obj, struct srv_error *err)
{
	if (!json_is_object(json_object_get(obj, "metadata")))
		json_object_set_new(obj, "metadata", json_object());
	if (!strcmp(res->kind, "SelfSubjectAccessReview"))
		return access_review(r, obj, err);
	if (!strcmp(res->kind, "SelfSubjectRulesReview"))
		rules_review(obj);
	else
		self_review(r, obj);
	return LP_OK;
}
