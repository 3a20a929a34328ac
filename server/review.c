/*
 * review.c -- the self reviews kubectl auth sends (see review.h):
 * SelfSubjectAccessReview and SelfSubjectRulesReview (authorization.k8s.io/v1,
 * `kubectl auth can-i`, `can-i --list`) and SelfSubjectReview
 * (authentication.k8s.io/v1, `kubectl auth whoami`). As in kube they are
 * create-only and nothing is stored: the answer is the request with its
 * status filled in, 201 Created. TokenReview and SubjectAccessReview, the
 * delegated authentication and authorization of aggregated API servers
 * and of kube-rbac-proxy-style metrics endpoints, are answered the same
 * way for that identity; a TokenReview also authenticates the service
 * account tokens of TokenRequest (objects.c, do_token), as kube's service
 * account authenticator, which reads the account from the store.
 *
 * lapis has one identity, with every right (README.md, "Serving"): the
 * admin token's bearer over TLS, anyone over --insecure-http (kube's old
 * insecure port, whose user was system:unsecured). So every access review
 * is allowed, the rules are everything, and the user is that identity.
 *
 * Any thread (the store reads are snapshot reads).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "registry/object.h"
#include "registry/registry.h"
#include "registry/store.h"
#include "review.h"
#include "satoken.h"

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
				       first ? "" : ", ", toupper((unsigned char)k[0]),
				       k + 1,
				       json_string_value(v));
		first = false;
	}
	if (at < n)
		snprintf(buf + at, n - at, "}");
}

/* kube's ValidateSubjectAccessReviewSpec and its self form (without
   the subject): causes into err. */
static void access_spec_causes(const json_t *spec, bool self,
			       struct srv_error *err)
{
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
	const char *user = json_string_value(json_object_get(spec, "user"));
	if (!self && (!user || !*user) &&
	    json_array_size(json_object_get(spec, "groups")) == 0)
		srv_error_cause(err, "FieldValueInvalid", "spec.user",
				"Invalid value: \"\": at least one of user or group must be specified");
}

static lp_err access_review(struct srv_req *r, json_t *obj,
			    struct srv_error *err)
{
	access_spec_causes(json_object_get(obj, "spec"), true, err);
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

/* A LocalSubjectAccessReview's own rules (kube's
   ValidateLocalSubjectAccessReview): its resource attributes name its
   namespace, and it has no non-resource attributes. */
static void local_causes(const json_t *spec, const char *ns,
			 struct srv_error *err)
{
	json_t *ra = json_object_get(spec, "resourceAttributes");
	json_t *na = json_object_get(spec, "nonResourceAttributes");
	const char *rns = json_string_value(json_object_get(ra, "namespace"));
	if (json_is_object(ra) && strcmp(rns ? rns : "", ns))
		srv_error_cause(err, "FieldValueInvalid",
				"spec.resourceAttributes.namespace",
				"Invalid value: \"%.63s\": must match metadata.namespace",
				rns ? rns : "");
	if (json_is_object(na)) {
		char shown[512];
		go_struct("NonResourceAttributes", na, shown, sizeof shown);
		srv_error_cause(err, "FieldValueInvalid",
				"spec.nonResourceAttributes",
				"Invalid value: %s: disallowed on this kind of request",
				shown);
	}
}

/* Another subject's access (delegated authorization; local: within
   namespace ns): lapis's identity and the group system:masters have every
   right, no one else any. */
static lp_err subject_access_review(json_t *obj, const char *ns, bool local,
				    struct srv_error *err)
{
	json_t *spec = json_object_get(obj, "spec");
	access_spec_causes(spec, false, err);
	if (local) {
		/* kube: the object takes the request's namespace, or must
		   name the same one */
		json_t *m = json_object_get(obj, "metadata");
		const char *mns =
		    json_string_value(json_object_get(m, "namespace"));
		if (mns && *mns && strcmp(mns, ns))
			return srv_error_set(err, LP_E_BADREQUEST,
					     "the namespace of the provided object does not match the namespace sent on the request");
		json_object_set_new(m, "namespace", json_string(ns));
		local_causes(spec, ns, err);
	}
	if (srv_error_invalid(err,
			      local ? "LocalSubjectAccessReview"
				    : "SubjectAccessReview",
			      "authorization.k8s.io", ""))
		return err->code;
	const char *user = json_string_value(json_object_get(spec, "user"));
	bool allowed = user && (!strcmp(user, ADMIN_USER) ||
				!strcmp(user, INSECURE_USER));
	size_t i;
	json_t *g;
	json_array_foreach(json_object_get(spec, "groups"), i, g)
	{
		const char *gs = json_string_value(g);
		allowed = allowed || (gs && !strcmp(gs, "system:masters"));
	}
	json_object_set_new(
	    obj, "status",
	    allowed ? json_pack("{s:b,s:s}", "allowed", 1, "reason",
				"lapis: the admin has every right")
		    : json_pack("{s:b,s:s}", "allowed", 0, "reason",
				"lapis: only " ADMIN_USER
				" and group system:masters have rights"));
	return LP_OK;
}

/* The uid of a core object (resource, ns, name), new; NULL when there is
   none. */
static char *core_uid(struct srv_req *r, const char *resource, const char *ns,
		      const char *name)
{
	struct reg_key k;
	struct reg_obj c = {0};
	char *uid = NULL;
	if (!reg_object_key("", resource, ns, name, &k) &&
	    !reg_get(srv_engine(r->s), &k, &c) && !reg_obj_decode(&c)) {
		const char *u = json_string_value(json_object_get(
		    json_object_get(c.obj, "metadata"), "uid"));
		uid = u ? strdup(u) : NULL;
	}
	reg_obj_free(&c);
	return uid;
}

/* Seconds of clock skew a token's times tolerate, as Go's JWT library. */
#define TOKEN_LEEWAY 60

/* A service account token lapis signed (do_token in objects.c), checked
   as kube's service account authenticator does: signature, issuer, times,
   audiences (those asked, else the API's), and the account, and the
   Secret it is bound to, still there with the same uid. The status, new;
   NULL when token is not one of lapis's tokens at all. */
static json_t *sa_token_status(struct srv_req *r, const char *token,
			       const json_t *asked)
{
	json_t *cl = srv_sa_verify(srv_sa(r->s), token);
	if (!cl)
		return NULL;
	const char *why = NULL;
	const char *iss = json_string_value(json_object_get(cl, "iss"));
	json_t *kube = json_object_get(cl, "kubernetes.io");
	json_t *sa = json_object_get(kube, "serviceaccount");
	json_t *secret = json_object_get(kube, "secret");
	const char *ns = json_string_value(json_object_get(kube, "namespace"));
	const char *name = json_string_value(json_object_get(sa, "name"));
	const char *uid = json_string_value(json_object_get(sa, "uid"));
	const char *sub = json_string_value(json_object_get(cl, "sub"));
	const char *jti = json_string_value(json_object_get(cl, "jti"));
	json_int_t now = (json_int_t)time(NULL);
	json_t *exp = json_object_get(cl, "exp"), *nbf = json_object_get(cl, "nbf");
	json_t *auds = json_array();
	if (!iss || strcmp(iss, SRV_SA_ISSUER) || !ns || !name || !uid || !sub)
		why = "not a service account token of this server";
	else if (!json_is_integer(exp) ||
		 json_integer_value(exp) + TOKEN_LEEWAY < now)
		why = "service account token has expired";
	else if (json_is_integer(nbf) &&
		 json_integer_value(nbf) - TOKEN_LEEWAY > now)
		why = "service account token is not valid yet";
	if (!why) {
		json_t *api = json_pack("[s]", SRV_SA_ISSUER);
		const json_t *want = json_array_size(asked) ? asked : api;
		size_t i, j;
		json_t *a, *t;
		json_array_foreach(want, i, a)
		{
			json_array_foreach(json_object_get(cl, "aud"), j, t)
			{
				if (json_is_string(a) && json_equal(a, t)) {
					json_array_append(auds, a);
					break;
				}
			}
		}
		json_decref(api);
		if (json_array_size(auds) == 0)
			why = "token audiences is invalid for the target audiences";
	}
	if (!why) {
		char *have = core_uid(r, "serviceaccounts", ns, name);
		if (!have || strcmp(have, uid))
			why = "service account token has been invalidated";
		free(have);
	}
	if (!why && secret) {
		const char *sn = json_string_value(json_object_get(secret, "name"));
		const char *su = json_string_value(json_object_get(secret, "uid"));
		char *have = sn ? core_uid(r, "secrets", ns, sn) : NULL;
		if (!have || !su || strcmp(have, su))
			why = "service account token has been invalidated";
		free(have);
	}
	json_t *st;
	if (why) {
		char msg[160];
		snprintf(msg, sizeof msg, "[invalid bearer token, %s]", why);
		st = json_pack("{s:{},s:s}", "user", "error", msg);
		json_decref(auds);
	} else {
		char g[300];
		snprintf(g, sizeof g, "system:serviceaccounts:%s", ns);
		char cred[64];
		snprintf(cred, sizeof cred, "JTI=%s", jti ? jti : "");
		st = json_pack("{s:b,s:{s:s,s:s,s:[s,s,s]},s:o}", "authenticated",
			       1, "user", "username", sub, "uid", uid, "groups",
			       "system:serviceaccounts", g, "system:authenticated",
			       "audiences", auds);
		if (st && jti)
			json_object_set_new(
			    json_object_get(st, "user"), "extra",
			    json_pack("{s:[s]}",
				      "authentication.kubernetes.io/credential-id",
				      cred));
	}
	json_decref(cl);
	return st;
}

/* Whether a bearer token is lapis's (delegated authentication). */
static lp_err token_review(struct srv_req *r, json_t *obj,
			   struct srv_error *err)
{
	json_t *spec = json_object_get(obj, "spec");
	const char *token = json_string_value(json_object_get(spec, "token"));
	if (!token || !*token)
		return srv_error_set(err, LP_E_BADREQUEST,
				     "token is required for TokenReview in authentication");
	json_t *st;
	if (srv_token_is_admin(r->s, token)) {
		json_t *aud = json_object_get(spec, "audiences");
		st = json_pack("{s:b,s:{s:s,s:o}}", "authenticated", 1, "user",
			       "username", ADMIN_USER, "groups", groups());
		if (json_array_size(aud))
			json_object_set(st, "audiences", aud);
	} else if (!(st = sa_token_status(r, token, json_object_get(spec,
								      "audiences")))) {
		st = json_pack("{s:{}}", "user");
	}
	json_object_set_new(obj, "status", st);
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

/* kube answers a new SelfSubjectReview, stamped now: nothing of the
   request's metadata comes back. */
static void self_review(struct srv_req *r, json_t *obj)
{
	char now[32];
	reg_now(now);
	json_object_set_new(obj, "metadata",
			    json_pack("{s:s}", "creationTimestamp", now));
	json_object_set_new(
	    obj, "status",
	    json_pack("{s:{s:s,s:o}}", "userInfo", "username", user_of(r),
		      "groups", groups()));
}

lp_err srv_review(struct srv_req *r, const struct srv_resource *res,
		  const char *ns, json_t *obj, struct srv_error *err)
{
	json_t *meta = json_object_get(obj, "metadata");
	if (!json_is_object(meta)) {
		meta = json_object();
		json_object_set_new(obj, "metadata", meta);
	}
	/* the create handler's WipeObjectMetaSystemFields: a review comes
	   back without the request's system fields, its creation time the
	   zero time Go writes as null */
	static const char *const wiped[] = {"uid", "deletionTimestamp",
					    "deletionGracePeriodSeconds",
					    "selfLink"};
	for (size_t i = 0; i < sizeof wiped / sizeof *wiped; i++)
		json_object_del(meta, wiped[i]);
	json_object_set_new(meta, "creationTimestamp", json_null());
	lp_err rc = LP_OK;
	if (!strcmp(res->kind, "SelfSubjectAccessReview"))
		rc = access_review(r, obj, err);
	else if (!strcmp(res->kind, "SubjectAccessReview") ||
		 !strcmp(res->kind, "LocalSubjectAccessReview"))
		rc = subject_access_review(obj, ns ? ns : "", res->namespaced,
					   err);
	else if (!strcmp(res->kind, "TokenReview"))
		rc = token_review(r, obj, err);
	else if (!strcmp(res->kind, "SelfSubjectRulesReview"))
		rules_review(obj);
	else
		self_review(r, obj);
	reg_canonical(obj); /* kind, apiVersion, metadata first, as kube's */
	return rc;
}
