/*
 * objects.c -- get, list, create, update, patch, delete and deletecollection
 * of every resource in the descriptor table (reference §3, §5, §10).
 *
 * Threads: MHD pool threads. Each handler reads with short engine snapshots
 * (never held while waiting on the writer or on the network) and writes
 * through eng_txn_commit with a compare on the revision it read, so a
 * concurrent writer makes it retry (patch) or answer 409 (update).
 *
 * Order of checks (reference §2.5): routing 404 -> content type 415 -> query
 * options 400/422 -> body 413/400 -> apiVersion/kind/name/namespace 400 ->
 * namespace lifecycle 404/403 -> current object 404 -> preconditions 409 ->
 * validation 422 -> storage 409.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include "api.h"
#include "crd.h"
#include "fields.h"
#include "qparse.h"
#include "ipaddr.h"
#include "jsonpath.h"
#include "managed.h"
#include "lapis/log.h"
#include "objects.h"
#include "pagebuf.h"
#include "patch.h"
#include "pb.h"
#include "registry/json.h"
#include "registry/object.h"
#include "registry/registry.h"
#include "registry/store.h"
#include "review.h"
#include "satoken.h"
#include "schema.h"
#include "selector.h"
#include "table.h"
#include "yamljson.h"

/* Retries of a patch or a delete that raced with another writer. */
#define WRITE_RETRIES 8
#define UNCOND_UPDATE_RETRIES 1000

/* ------------------------------------------------------------ small helpers */

static void what_of(const struct srv_resource *res, const char *name,
		    struct srv_status_what *w)
{
	w->name = name;
	w->group = srv_resource_store_group(res);
	w->kind = res->resource;
	w->uid = NULL;
}

static void fail_res(struct srv_req *r, const struct srv_resource *res,
		     const char *name, const struct srv_error *err)
{
	struct srv_status_what w;
	what_of(res, name, &w);
	if (err->code == LP_E_INVALID || err->on_kind)
		w.kind = res->kind;
	if (err->code == LP_E_INVALID && err->kind_as[0]) {
		w.kind = err->kind_as;
		w.group = err->group_as;
	}
	srv_reply_error(r, err, err->anonymous ? NULL : &w);
}

static lp_err not_found_err(const struct srv_resource *res, const char *name,
			    struct srv_error *err)
{
	char gr[320];
	return srv_error_set(err, LP_E_NOTFOUND, "%s \"%s\" not found",
			     srv_resource_gr(res, gr, sizeof gr), name);
}

static const char *meta_str(const json_t *obj, const char *k)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), k));
}

/* A resourceVersion as Go's strconv.ParseUint reads it into an int64:
   decimal digits only (no sign, no blanks, as strtoll would allow). */
static bool parse_i64(const char *s, int64_t *out)
{
	if (!s || !*s)
		return false;
	return srv_parse_rv(s, out) == LP_OK;
}

/* An integer query parameter as kube's conversion reads it: a bad one
   (an empty one too) is its 400 in strconv's words. */
static lp_err int_param(const char *v, int64_t *out, struct srv_error *err)
{
	const char *why = srv_go_parse_int(v, out);
	if (!why)
		return LP_OK;
	char q[80];
	srv_go_quote(v, q, sizeof q);
	return srv_error_set(err, LP_E_BADREQUEST,
			     "strconv.ParseInt: parsing %s: %s", q, why);
}

/* A resourceVersion as Go's strconv.ParseUint (base 10) reads it: its
   value in *out, or err set to strconv's error (bare) or to the storage
   error kube's versioner words with it, after prefix. LP_E_IO (kube's
   plain 500) unless the caller sets another code. */
static lp_err rv_parse_as(const char *s, uint64_t *out, bool bare,
			  const char *prefix, struct srv_error *err)
{
	const char *why = NULL;
	if (!*s || strspn(s, "0123456789") != strlen(s)) {
		why = "invalid syntax";
	} else {
		errno = 0;
		*out = strtoull(s, NULL, 10);
		if (errno == ERANGE)
			why = "value out of range";
	}
	if (!why)
		return LP_OK;
	char q[200];
	srv_go_quote(s, q, sizeof q);
	if (bare)
		return srv_error_set(
		    err, LP_E_IO, "strconv.ParseUint: parsing %s: %s", q, why);
	return srv_error_set(err, LP_E_IO,
			     "%sresourceVersion: Invalid value: %s: "
			     "strconv.ParseUint: parsing %s: %s",
			     prefix, q, q, why);
}

static lp_err rv_parse(const char *s, uint64_t *out, struct srv_error *err)
{
	return rv_parse_as(s, out, false, "", err);
}

/* A revision as ParseUint read it, as the engine's: one past int64 is
   past any revision. */
static int64_t clamp_rev(uint64_t n)
{
	return n > INT64_MAX ? INT64_MAX : (int64_t)n;
}

/* kube's 504 for a read at revision n, not reached yet. */
static lp_err too_large(eng *e, uint64_t n, struct srv_error *err)
{
	srv_error_cause(err, "ResourceVersionTooLarge", "",
			"Too large resource version");
	return srv_error_set(
	    err, LP_E_FUTURE,
	    "Timeout: Too large resource version: %llu, current: %lld",
	    (unsigned long long)n, (long long)eng_rev(e));
}

/* Wait up to wait_ms for revision n, as kube's watch cache does for a read
   "not older than" a revision it has not seen; its 504 after that. A read
   of the API parks instead (srv_park_for_rev), and waits no more when run
   again. */
static lp_err wait_rev(eng *e, uint64_t n, int64_t wait_ms,
		       struct srv_error *err)
{
	if (eng_wait_rev(e, clamp_rev(n), (int)wait_ms) == LP_OK)
		return LP_OK;
	return too_large(e, n, err);
}

/* How long r's read may still wait for a revision in its handler: a read
   that was parked (or one while the server stops) waits no more. */
static int64_t rev_wait_ms(struct srv_req *r)
{
	return r->rev_waited || srv_stopping(r->s) ? 0 : SRV_REV_WAIT_MS;
}

bool srv_is_dns_label(const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (!alnum && !(c == '-' && i > 0 && i < n - 1))
			return false;
	}
	return true;
}

bool srv_dns_subdomain_like(const char *s)
{
	size_t n = strlen(s);
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (alnum)
			continue;
		/* '-' inside a label, '.' between two: both need an
		   alphanumeric before and after ("a..b", "a.-b" are not) */
		if (c == '-' && i > 0 && i < n - 1 && s[i - 1] != '.' &&
		    (s[i + 1] != '.'))
			continue;
		if (c == '.' && i > 0 && i < n - 1 && s[i - 1] != '.' &&
		    s[i - 1] != '-' && s[i + 1] != '.' && s[i + 1] != '-')
			continue;
		return false;
	}
	return true;
}

bool srv_is_dns_subdomain(const char *s)
{
	return strlen(s) <= 253 && srv_dns_subdomain_like(s);
}

bool srv_dns1035_like(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || !(s[0] >= 'a' && s[0] <= 'z'))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      (c == '-' && i < n - 1)))
			return false;
	}
	return true;
}

bool srv_label_value_like(const char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		bool alnum = (ch >= 'a' && ch <= 'z') ||
			     (ch >= 'A' && ch <= 'Z') ||
			     (ch >= '0' && ch <= '9');
		if (!alnum && ((i == 0 || i == n - 1) ||
			       (ch != '-' && ch != '_' && ch != '.')))
			return false;
	}
	return true;
}

/* A label value: empty, or at most 63 characters, alphanumeric at both ends
   and [-_.a-zA-Z0-9] inside. */
bool srv_is_label_value(const char *v)
{
	return strlen(v) <= 63 && srv_label_value_like(v);
}

int srv_name_problems(enum srv_name_rule rule, const char *s,
		      const char *msgs[2])
{
	bool sub = rule == SRV_RULE_DNS_SUBDOMAIN;
	int n = 0;
	if (strlen(s) > (sub ? 253u : 63u))
		msgs[n++] = sub ? "must be no more than 253 characters"
				: "must be no more than 63 characters";
	switch (rule) {
	case SRV_RULE_DNS_LABEL:
		/* a valid subdomain (the length checked above): the dots */
		if (!srv_is_dns_label(s, SIZE_MAX))
			msgs[n++] = srv_dns_subdomain_like(s)
					? "must not contain dots"
					: SRV_MSG_DNS_LABEL;
		break;
	case SRV_RULE_DNS_SUBDOMAIN:
		if (!srv_dns_subdomain_like(s))
			msgs[n++] = SRV_MSG_DNS_SUBDOMAIN;
		break;
	case SRV_RULE_DNS1035:
		if (!srv_dns1035_like(s))
			msgs[n++] = SRV_MSG_DNS1035;
		break;
	case SRV_RULE_LABEL_VALUE:
		if (!srv_label_value_like(s))
			msgs[n++] = SRV_MSG_LABEL_VALUE;
		break;
	}
	return n;
}

void srv_invalid_causes(struct srv_error *err, const char *field,
			const char *value, const char *const *msgs, int n)
{
	char q[2048];
	if (n)
		srv_go_quote(value, q, sizeof q);
	for (int i = 0; i < n; i++)
		srv_error_cause(err, "FieldValueInvalid", field,
				"Invalid value: %s: %s", q, msgs[i]);
}

void srv_path_segment_causes(struct srv_error *err, const char *field,
			     const char *name)
{
	const char *msgs[2];
	int n = 0;
	if (!strcmp(name, "."))
		msgs[n++] = "may not be '.'";
	else if (!strcmp(name, ".."))
		msgs[n++] = "may not be '..'";
	else {
		if (strchr(name, '/'))
			msgs[n++] = "may not contain '/'";
		if (strchr(name, '%'))
			msgs[n++] = "may not contain '%'";
	}
	srv_invalid_causes(err, field, name, msgs, n);
}

bool srv_name_causes(struct srv_error *err, const char *field,
		     enum srv_name_rule rule, const char *s)
{
	const char *msgs[2];
	int n = srv_name_problems(rule, s, msgs);
	srv_invalid_causes(err, field, s, msgs, n);
	return n == 0;
}

/* A label key or annotation key: [prefix/]name (qualified name), whose name
   part follows the label-value rule but may not be empty. */
bool srv_is_qualified_name(const char *k)
{
	const char *slash = strchr(k, '/');
	const char *name = k;
	if (slash) {
		char prefix[256];
		size_t pl = (size_t)(slash - k);
		if (pl == 0 || pl >= sizeof prefix)
			return false;
		memcpy(prefix, k, pl);
		prefix[pl] = 0;
		if (!srv_is_dns_subdomain(prefix))
			return false;
		name = slash + 1;
	}
	return *name && srv_is_label_value(name);
}

/* The name part's pattern, ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]. */
static bool qname_like(const char *s)
{
	size_t n = strlen(s);
	if (!n || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("-_.", s[i]))
			return false;
	return true;
}

int srv_qname_problems(const char *k, const char *msgs[4])
{
	int n = 0;
	const char *slash = strchr(k, '/');
	const char *name = k;
	if (slash && strchr(slash + 1, '/')) {
		msgs[n++] = "a qualified name " SRV_MSG_QNAME_RULE
			    " with an optional DNS subdomain prefix and '/' "
			    "(e.g. 'example.com/MyName')";
		return n;
	}
	if (slash) {
		size_t pl = (size_t)(slash - k);
		char buf[256];
		char *prefix = pl < sizeof buf ? buf : strndup(k, pl);
		if (prefix == buf) {
			memcpy(buf, k, pl);
			buf[pl] = '\0';
		}
		if (!pl) {
			msgs[n++] = "prefix part must be non-empty";
		} else {
			if (pl > 253)
				msgs[n++] = "prefix part must be no more than 253 characters";
			if (!prefix || !srv_dns_subdomain_like(prefix))
				msgs[n++] = "prefix part " SRV_MSG_DNS_SUBDOMAIN;
		}
		if (prefix != buf)
			free(prefix);
		name = slash + 1;
	}
	size_t nl = strlen(name);
	if (!nl)
		msgs[n++] = "name part must be non-empty";
	else if (nl > 63)
		msgs[n++] = "name part must be no more than 63 characters";
	if (!qname_like(name))
		msgs[n++] = SRV_MSG_QNAME;
	return n;
}

void srv_qname_causes(struct srv_error *err, const char *field,
		      const char *shown, const char *k)
{
	const char *msgs[4];
	int n = srv_qname_problems(k, msgs);
	srv_invalid_causes(err, field, shown, msgs, n);
}

void srv_ns_finalizer_causes(struct srv_error *err, const char *field,
			     const char *n)
{
	static const char *const why[] = {
	    "name is neither a standard finalizer name nor is it fully "
	    "qualified"};
	srv_qname_causes(err, field, n, n);
	if (!strchr(n, '/') && strcmp(n, "kubernetes") && strcmp(n, "orphan") &&
	    strcmp(n, "foregroundDeletion"))
		srv_invalid_causes(err, field, n, why, 1);
}

/* kube's limit on all annotations of an object together. */
#define ANNOTATIONS_MAX (256 * 1024)

/* A name (or, prefix, a generateName: kube masks a trailing dash) as
   res's kind names its objects: a DNS-1123 label for namespaces, a
   DNS-1035 label for services (ValidateServiceName), else a DNS-1123
   subdomain. Adds kube's causes on field, one per failed rule, the length
   first (utilvalidation's IsDNS1123Label and friends). */
static void check_name(const struct srv_resource *res, const char *field,
		       const char *name, bool prefix, struct srv_error *err)
{
	bool core = !res->group[0];
	bool label = core && !strcmp(res->resource, "namespaces");
	bool svc = core && !strcmp(res->resource, "services");
	if ((core && !strcmp(res->resource, "events")) ||
	    !strcmp(res->group, "rbac.authorization.k8s.io")) {
		/* core/v1 Events validate no name rule of their own (kube's
		   ValidateEventCreate for v1 is the legacy checks), and the
		   RBAC kinds' ValidateRBACName is the same: only the generic
		   path segment rules (ValidatePathSegmentName) */
		srv_path_segment_causes(err, field, name);
		return;
	}
	char *masked = strdup(name);
	if (!masked)
		return;
	size_t mn = strlen(masked);
	if (prefix && mn > 1 && masked[mn - 1] == '-')
		masked[mn - 1] = 'a';
	enum srv_name_rule rule = svc	  ? SRV_RULE_DNS1035
				  : label ? SRV_RULE_DNS_LABEL
					  : SRV_RULE_DNS_SUBDOMAIN;
	const char *msgs[2];
	int n = srv_name_problems(rule, masked, msgs);
	free(masked);
	srv_invalid_causes(err, field, name, msgs, n); /* the name as sent */
}

/* The 415 of a create or update body in a media type that no serializer
   of the resource reads (kube's NegotiateInputSerializer lists them). */
#define BODY_TYPES_415                                                         \
	"the body of the request was in an unknown format - accepted media "   \
	"types include: application/json, application/yaml, "                  \
	"application/vnd.kubernetes.protobuf"

/* Is res core's namespaces (not a custom resource of that plural)? */
static bool is_namespaces(const struct srv_resource *res)
{
	return !res->group[0] && !strcmp(res->resource, "namespaces");
}

/* kube's dedupOwnerReferencesAndAddWarning (BeforeCreate, BeforeUpdate):
   an owner reference equal to an earlier one is dropped, with a Warning
   naming the UIDs. */
static void dedup_owner_refs(struct srv_req *r, json_t *obj, bool patch)
{
	json_t *refs =
	    json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
	if (!json_is_array(refs) || json_array_size(refs) < 2)
		return;
	char dups[512] = "";
	size_t dl = 0;
	for (size_t i = 1; i < json_array_size(refs);) {
		json_t *ref = json_array_get(refs, i);
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = json_equal(ref, json_array_get(refs, j));
		if (!seen) {
			i++;
			continue;
		}
		const char *uid = json_string_value(json_object_get(ref, "uid"));
		if (dl < sizeof dups)
			dl += (size_t)snprintf(dups + dl, sizeof dups - dl, "%s%s",
					       dl ? ", " : "", uid ? uid : "");
		json_array_remove(refs, i);
	}
	/* kube dedups a patch only after mutating admission, and says so */
	if (dl)
		srv_warn(
		    r,
		    ".metadata.ownerReferences contains duplicate entries%s; "
		    "API server dedups owner references in 1.20+, and may "
		    "reject such requests as early as 1.24; please fix your "
		    "requests; duplicate UID(s) observed: %s",
		    patch ? " after mutating admission happens" : "", dups);
}

/* Metadata validation (apimachinery ObjectMeta rules). Adds causes. */
static void validate_meta(const struct srv_resource *res, const json_t *obj,
			  struct srv_error *err)
{
	const json_t *m = json_object_get(obj, "metadata");
	const char *name = json_string_value(json_object_get(m, "name"));
	const char *gen =
	    json_string_value(json_object_get(m, "generateName"));
	/* kube validates generateName as a name prefix (a trailing dash
	   allowed), before the name */
	if (gen && *gen)
		check_name(res, "metadata.generateName", gen, true, err);
	if (!name || !*name)
		srv_error_cause(err, "FieldValueRequired", "metadata.name",
				"Required value: name or generateName is required");
	else
		check_name(res, "metadata.name", name, false, err);
	const json_t *labels = json_object_get(m, "labels");
	const char *k;
	json_t *v;
	if (labels && !json_is_object(labels) && !json_is_null(labels))
		srv_error_cause(err, "FieldValueInvalid", "metadata.labels",
				"Invalid value: must be an object");
	json_object_foreach((json_t *)labels, k, v)
	{
		char f[320];
		snprintf(f, sizeof f, "metadata.labels");
		srv_qname_causes(err, f, k, k);
		if (json_is_string(v))
			srv_name_causes(err, f, SRV_RULE_LABEL_VALUE,
					json_string_value(v));
		else
			srv_error_cause(
			    err, "FieldValueInvalid", f,
			    "Invalid value: \"\": " SRV_MSG_LABEL_VALUE);
	}
	/* then annotations, owner references, finalizers:
	 * ValidateObjectMetaAccessor's order */
	const json_t *ann = json_object_get(m, "annotations");
	size_t total = 0;
	json_object_foreach((json_t *)ann, k, v)
	{
		/* ValidateAnnotations checks the key lowercased */
		char low[320];
		size_t li = 0;
		for (; k[li] && li < sizeof low - 1; li++)
			low[li] = (char)tolower((unsigned char)k[li]);
		low[li] = '\0';
		srv_qname_causes(err, "metadata.annotations", k,
				 k[li] ? k : low);
		total +=
		    strlen(k) + (json_is_string(v) ? json_string_length(v) : 0);
		if (!json_is_string(v))
			srv_error_cause(
			    err, "FieldValueInvalid", "metadata.annotations",
			    "Invalid value: annotation values must be strings");
	}
	if (total > ANNOTATIONS_MAX)
		srv_error_cause(
		    err, "FieldValueTooLong", "metadata.annotations",
		    "Too long: may not be more than %d bytes", ANNOTATIONS_MAX);
	/* kube's ValidateOwnerReferences: each names its owner fully, and
	   one at most is the controller (v1.33's messages: v1.34 drops the
	   field's name from the last three) */
	const json_t *refs = json_object_get(m, "ownerReferences");
	size_t i;
	const json_t *ref;
	char first_ctl[320] = "";
	json_array_foreach((json_t *)refs, i, ref)
	{
		static const char *const need[][2] = {
		    {"kind", "kind must not be empty"},
		    {"name", "name must not be empty"},
		    {"uid", "uid must not be empty"}};
		const char *av = json_string_value(json_object_get(ref, "apiVersion"));
		const char *slash = av ? strchr(av, '/') : NULL;
		if (!av || !*av || (slash && !slash[1]))
			srv_error_cause(err, "FieldValueInvalid",
					"metadata.ownerReferences.apiVersion",
					"Invalid value: \"%.100s\": version must not be empty",
					av ? av : "");
		for (size_t n = 0; n < 3; n++) {
			const char *got =
			    json_string_value(json_object_get(ref, need[n][0]));
			if (!got || !*got) {
				char f[64];
				snprintf(f, sizeof f, "metadata.ownerReferences.%s",
					 need[n][0]);
				srv_error_cause(err, "FieldValueInvalid", f,
						"Invalid value: \"\": %s", need[n][1]);
			}
		}
		const char *rkind =
		    json_string_value(json_object_get(ref, "kind"));
		if (av && !strcmp(av, "v1") && rkind &&
		    !strcmp(rkind, "Event")) {
			/* kube's BannedOwners; the reference printed as Go's
			   %#v prints it (a pointer's address is the Go
			   heap's, so any one will do) */
			const char *rn =
			    json_string_value(json_object_get(ref, "name"));
			const char *ru =
			    json_string_value(json_object_get(ref, "uid"));
			const char *ptr[2];
			static const char *const flag[2] = {
			    "controller", "blockOwnerDeletion"};
			for (int b = 0; b < 2; b++)
				ptr[b] = json_is_boolean(
					     json_object_get(ref, flag[b]))
					     ? "0xc000012345"
					     : "nil";
			srv_error_cause(
			    err, "FieldValueInvalid",
			    "metadata.ownerReferences",
			    "Invalid value: "
			    "v1.OwnerReference{APIVersion:\"v1\", "
			    "Kind:\"Event\", Name:\"%.253s\", UID:\"%.100s\", "
			    "Controller:(*bool)(%s), "
			    "BlockOwnerDeletion:(*bool)(%s)}: /v1, Kind=Event "
			    "is disallowed from being an owner",
			    rn ? rn : "", ru ? ru : "", ptr[0], ptr[1]);
		}
		if (!json_is_true(json_object_get(ref, "controller")))
			continue;
		const char *rk = json_string_value(json_object_get(ref, "kind"));
		const char *rn = json_string_value(json_object_get(ref, "name"));
		char cur[320];
		snprintf(cur, sizeof cur, "%.150s/%.150s", rk ? rk : "", rn ? rn : "");
		if (first_ctl[0])
			srv_error_cause(err, "FieldValueInvalid",
					"metadata.ownerReferences",
					"Invalid value: \"\": Only one reference can have Controller set to true. Found \"true\" in references for %s and %s",
					first_ctl, cur);
		else
			snprintf(first_ctl, sizeof first_ctl, "%s", cur);
	}
	/* kube's ValidateFinalizers: qualified names, not both orphan and
	   foregroundDeletion */
	const json_t *fins = json_object_get(m, "finalizers");
	const json_t *fin;
	bool orphan = false, fg = false;
	json_array_foreach((json_t *)fins, i, fin)
	{
		const char *f = json_string_value(fin);
		srv_qname_causes(err, "metadata.finalizers", f ? f : "",
				 f ? f : "");
		orphan = orphan || (f && !strcmp(f, "orphan"));
		fg = fg || (f && !strcmp(f, "foregroundDeletion"));
	}
	if (orphan && fg) {
		/* the whole list, as Go's %#v of the []string */
		char list[4096] = "";
		size_t o = 0;
		json_array_foreach((json_t *)fins, i, fin)
		{
			char q[512];
			const char *f = json_string_value(fin);
			srv_go_quote(f ? f : "", q, sizeof q);
			int n = snprintf(list + o, sizeof list - o, "%s%s",
					 i ? ", " : "", q);
			if (n < 0 || (size_t)n >= sizeof list - o)
				break;
			o += (size_t)n;
		}
		srv_error_cause(err, "FieldValueInvalid", "metadata.finalizers",
				"Invalid value: []string{%s}: finalizer orphan "
				"and foregroundDeletion cannot be both set",
				list);
	}
}

/* A new object's uid and creationTimestamp, into its metadata m. */
static void stamp_new(json_t *m)
{
	char uid[37], now[32];
	reg_uuid(uid);
	reg_now(now);
	json_object_set_new(m, "uid", json_string(uid));
	json_object_set_new(m, "creationTimestamp", json_string(now));
}

/* Turn collected causes into kube's Invalid message. */
static lp_err invalid_from_causes(const struct srv_resource *res,
				  const char *name, struct srv_error *err)
{
	return srv_error_invalid(err, res->kind, srv_resource_store_group(res),
				 name);
}

/* The Invalid of a custom resource whose kind or apiVersion is not its
   endpoint's: kube names it by the group and kind the object says
   (NewInvalid on its GroupVersionKind), "SomethingElse.mygroup.example.com
   \"foo\" is invalid: kind: ...". */
static lp_err invalid_as_sent(const struct srv_resource *res, const json_t *obj,
			      struct srv_error *err)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));
	const char *nm = meta_str(obj, "name");
	const char *sl = av && *av ? strchr(av, '/') : NULL;
	if (av && *av) /* its group: "" for a core "v1" */
		snprintf(err->group_as, sizeof err->group_as, "%.*s",
			 sl ? (int)(sl - av) : 0, av);
	else
		snprintf(err->group_as, sizeof err->group_as, "%s",
			 srv_resource_store_group(res));
	const char *k = kind && *kind ? kind : res->kind;
	snprintf(err->kind_as, sizeof err->kind_as, "%s", k);
	return srv_error_invalid(err, k, err->group_as, nm ? nm : "");
}

/* ------------------------------------------------------------ bodies */

static const char *media_type(struct srv_req *r, char *buf, size_t n)
{
	const char *ct = srv_header(r, "Content-Type");
	if (!ct || !*ct) {
		snprintf(buf, n, "application/json");
		return buf;
	}
	size_t i = 0;
	while (ct[i] && ct[i] != ';' && ct[i] != ' ' && i < n - 1) {
		buf[i] = ct[i];
		i++;
	}
	buf[i] = 0;
	return buf;
}

/* go-yaml's repeated-key report, which kube's strict YAML decoding
   records as one strict error (reference §5.8). */
#define YAML_DUP_PREFIX "yaml: unmarshal errors:\n"

/* A YAML body: with strict (not Ignore), repeated keys are also recorded
   in strict, as kube's YAMLToJSONStrict pass does before the typed decode. */
static lp_err decode_yaml(struct srv_req *r, struct srv_strict *strict,
			  json_t **out, struct srv_error *err)
{
	if (strict && strict->mode != SRV_FV_IGNORE) {
		struct srv_error serr;
		srv_error_clear(&serr);
		if (srv_yaml_to_json_strict(r->body, r->body_len, out, &serr) == LP_OK)
			return LP_OK;
		if (serr.code != LP_E_BADREQUEST ||
		    strncmp(serr.message, YAML_DUP_PREFIX, strlen(YAML_DUP_PREFIX))) {
			*err = serr;
			return serr.code;
		}
		srv_strict_add(strict, serr.message);
	}
	return srv_yaml_to_json(r->body, r->body_len, out, err);
}

/* kube's handlers/rest.go summarizeData(body, 30): how a decoding error
   quotes the body. */
static void summarize_body(const char *b, size_t n, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t k = n > 30 ? 30 : n;
	size_t o = 0;

	if (n == 0) {
		snprintf(out, cap, "<empty>");
		return;
	}
	if (b[0] == '{') {
		snprintf(out, cap, "%.*s%s", (int)k, b, n > k ? " ..." : "");
		return;
	}
	for (size_t i = 0; i < k && o + 3 < cap; i++) {
		out[o++] = hex[(unsigned char)b[i] >> 4];
		out[o++] = hex[(unsigned char)b[i] & 15];
	}
	out[o] = '\0';
	if (n > k)
		snprintf(out + o, cap - o, " ...");
}

/* The Go reflect name of the struct kube's json MetaFactory.Interpret
   reads every JSON body into, first, for its apiVersion and kind. */
#define FIND_KIND_TYPE                                                         \
	"struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; " \
	"Kind string \"json:\\\"kind,omitempty\\\"\" }"

/* key equals want (lower case ASCII) as encoding/json matches a field
   name: without regard to case, with KELVIN SIGN for k and LATIN SMALL
   LETTER LONG S for s (the runes that fold onto those letters). */
static bool go_fold_eq(const char *key, const char *want)
{
	const unsigned char *k = (const unsigned char *)key;
	for (; *want; want++) {
		if (*want == 'k' && k[0] == 0xe2 && k[1] == 0x84 && k[2] == 0xaa)
			k += 3;
		else if (*want == 's' && k[0] == 0xc5 && k[1] == 0xbf)
			k += 2;
		else if (*k < 0x80 && tolower(*k) == *want)
			k++;
		else
			return false;
	}
	return !*k;
}

/*
 * kube's JSON body decoding, first step (serializer/json meta.go
 * Interpret): Go's json.Unmarshal of the body into {apiVersion, kind},
 * whose error stops the request before anything else is decoded. o is
 * jansson's tree of the body, or NULL where jansson refused it. True,
 * with Go's error text in out, where Go refuses it too: a syntax error
 * anywhere, a body that is not an object (null passes), or an apiVersion
 * or kind (any case) that is neither a string nor null.
 */
static bool interpret_fails(const struct srv_req *r, const json_t *o,
			    char *out, size_t cap)
{
	if (!o)
		return !reg_go_json_check(r->body, r->body_len, out, cap);
	if (json_is_null(o))
		return false;
	if (!json_is_object(o)) {
		snprintf(out, cap,
			 "json: cannot unmarshal %s into Go value of type " FIND_KIND_TYPE,
			 reg_go_type(o));
		return true;
	}
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)o, key, v) {
		const char *f = go_fold_eq(key, "apiversion") ? "apiVersion"
				: go_fold_eq(key, "kind")     ? "kind"
							      : NULL;
		if (f && !json_is_string(v) && !json_is_null(v)) {
			snprintf(out, cap,
				 "json: cannot unmarshal %s into Go struct field .%s of type string",
				 reg_go_type(v), f);
			return true;
		}
	}
	return false;
}

/* interpret_fails, answered: for a create or update of kind, kube's
   transformDecodeError (400 naming the kind and quoting the body); for a
   DeleteOptions body (kind NULL), the error as a BadRequest as it stands
   (kube PR 133358). */
static bool unrecognized(const struct srv_req *r, const json_t *o,
			 const char *kind, struct srv_error *err)
{
	char goerr[256], sum[128];
	if (!interpret_fails(r, o, goerr, sizeof goerr))
		return false;
	if (!kind) {
		srv_error_set(err, LP_E_BADREQUEST,
			      "couldn't get version/kind; json parse error: %s",
			      goerr);
		return true;
	}
	summarize_body(r->body, r->body_len, sum, sizeof sum);
	srv_error_set(err, LP_E_BADREQUEST,
		      "the object provided is unrecognized (must be of type %s): couldn't get version/kind; json parse error: %s (%s)",
		      kind, goerr, sum);
	return true;
}

/* A JSON body jansson refused may hold what Go's decoder takes: invalid
   UTF-8 or a lone surrogate escape in a string, which Go reads as U+FFFD
   (reg_json_go_strings). Rewrites r->body so; true when it changed. */
static bool body_as_go_reads(struct srv_req *r)
{
	char *fixed;
	size_t n;
	if (!r->body_len ||
	    reg_json_go_strings(r->body, r->body_len, &fixed, &n) != 1)
		return false;
	free(r->body);
	r->body = fixed;
	r->body_len = n;
	r->body_cap = n + 1;
	return true;
}

#define NUL_REFUSED "a string with a NUL character is not supported"

/* jansson's words for a body it refused, but for a \u0000: jansson names
   its flag; the YAML and protobuf bodies are refused in lapis's words */
static const char *json_error_text(const json_error_t *je)
{
	return strstr(je->text, "JSON_ALLOW_NUL") ||
		       strstr(je->text, "NUL byte")
		   ? NUL_REFUSED
		   : je->text;
}

/* Does object o hold a NUL character lapis refuses? kube keeps one in
   any string. lapis keeps it in a custom resource's strings outside its
   metadata, which every string carries with its length through (the
   schema's checks, CEL, the field managers' sets, the encoder); its
   metadata, and every built-in's fields, are read as C strings, where a
   NUL would cut a name or a label short. o may be any JSON value. */
static bool nul_refused(const struct srv_resource *res, const json_t *o)
{
	if (!o)
		return false;
	if (res && res->custom) {
		static const char *const read_as_c[] = {"metadata",
							"apiVersion", "kind"};
		for (size_t i = 0; i < 3; i++) {
			const json_t *m = json_object_get(o, read_as_c[i]);
			if (m && reg_json_has_nul(m))
				return true;
		}
		return false;
	}
	return reg_json_has_nul(o);
}

/* A custom resource's JSON body holding a number past float64's range:
   kube's unstructured decoding fails on it as Go's json does, after the
   body's kind was read, and transformDecodeError names both. True with
   err set; false when jtext is another error or the body names no kind
   (the caller's plain 400 then). */
static bool number_overflow(const struct srv_req *r, const char *jtext,
			    const struct srv_resource *res,
			    struct srv_error *err)
{
	static const char pre[] = "real number overflow near '";
	const char *p = strstr(jtext, pre);
	if (!p)
		return false;
	p += sizeof pre - 1;
	size_t n = strcspn(p, "'");
	char lit[64];
	if (!n || n >= sizeof lit)
		return false;
	memcpy(lit, p, n);
	lit[n] = '\0';
	/* the body with every such literal a 0 of the same width, for its
	   apiVersion and kind */
	char *copy = malloc(r->body_len + 1);
	if (!copy)
		return false;
	memcpy(copy, r->body, r->body_len);
	copy[r->body_len] = '\0';
	for (char *q = copy; (q = strstr(q, lit)) != NULL; q += n) {
		q[0] = '0';
		memset(q + 1, ' ', n - 1);
	}
	json_t *o = reg_json_load(copy, r->body_len, JSON_DECODE_ANY, NULL);
	free(copy);
	const char *kind = json_string_value(json_object_get(o, "kind"));
	const char *av = json_string_value(json_object_get(o, "apiVersion"));
	bool named = kind && *kind;
	if (named) {
		const char *sl = av ? strchr(av, '/') : NULL;
		srv_error_set(
		    err, LP_E_BADREQUEST,
		    "%.100s in version \"%.100s\" cannot be handled as "
		    "a %s: json: cannot unmarshal number %s into Go "
		    "value of type float64",
		    kind,
		    sl	 ? sl + 1
		    : av ? av
			 : "",
		    res->kind, lit);
	}
	json_decref(o);
	return named;
}

/* Decode the request body as JSON, YAML or (built-ins) protobuf: an object
   of type res, or DeleteOptions where res is NULL. strict (may be NULL)
   collects what kube's strict decoding finds on the way. */
static lp_err decode_body(struct srv_req *r, const char *mt,
			  const struct srv_resource *res,
			  struct srv_strict *strict, json_t **out,
			  struct srv_error *err)
{
	const char *expect_kind = res ? res->kind : "DeleteOptions";
	bool json = !strcasecmp(mt, "application/json");
	bool yaml = !strcasecmp(mt, "application/yaml");
	if (!json && !yaml && (!r->body || r->body_len == 0))
		return srv_error_set(err, LP_E_BADREQUEST,
				     "the request body is empty");
	json_t *o = NULL;
	bool custom = res && res->custom;
	if (json) {
		json_error_t je;
		size_t nul = custom ? JSON_ALLOW_NUL : 0;
		for (int pass = 0; pass < 2; pass++) {
			o = r->body_len
				? reg_json_load(r->body, r->body_len,
						JSON_REJECT_DUPLICATES |
						    JSON_DECODE_ANY | nul,
						&je)
				: NULL;
			if (!o && r->body_len && strstr(je.text, "duplicate"))
				o = reg_json_load(r->body, r->body_len,
						  JSON_DECODE_ANY | nul, &je);
			if (o || pass || !body_as_go_reads(r))
				break;
		}
		if (unrecognized(r, o, res ? res->kind : NULL, err)) {
			json_decref(o);
			return err->code;
		}
		if (!o && res && res->custom &&
		    number_overflow(r, json_error_text(&je), res, err))
			return err->code;
		if (!o)
			return srv_error_set(
			    err, LP_E_BADREQUEST,
			    "error decoding the request body: %s "
			    "(line %d, column %d)",
			    json_error_text(&je), je.line, je.column);
	} else if (yaml) {
		/* kube's serializer turns YAML into JSON first (an empty
		   body is null), then reads it as a JSON body */
		lp_err rc = LP_OK;
		if (r->body_len)
			rc = decode_yaml(r, strict, &o, err);
		else
			o = json_null();
		if (rc) {
			/* go-yaml's error, in transformDecodeError's words
			   for a create or update */
			if (rc == LP_E_BADREQUEST && res) {
				char sum[128], msg[sizeof err->message];
				snprintf(msg, sizeof msg, "%s", err->message);
				summarize_body(r->body, r->body_len, sum, sizeof sum);
				srv_error_set(err, rc,
					      "the object provided is unrecognized (must be of type %s): %s (%s)",
					      res->kind, msg, sum);
			}
			return rc;
		}
		if (unrecognized(r, o, res ? res->kind : NULL, err)) {
			json_decref(o);
			return err->code;
		}
	} else if (!strcasecmp(mt, "application/vnd.kubernetes.protobuf")) {
		lp_err rc = srv_pb_decode(r->body, r->body_len, expect_kind, &o, err);
		if (rc)
			return rc;
	} else {
		return srv_error_set(err, LP_E_UNSUPPORTEDMEDIA,
				     BODY_TYPES_415);
	}
	/* kube keeps a NUL inside a string: a custom resource's may hold
	   one, outside its metadata (nul_refused) */
	if ((custom || !json) && nul_refused(res, o)) {
		json_decref(o);
		return srv_error_set(
		    err, LP_E_BADREQUEST,
		    "error decoding the request body: " NUL_REFUSED);
	}
	/* a custom resource keeps what it is sent (a built-in drops
	   unknown fields, and its known ones nest a few levels) */
	if (res && res->custom &&
	    srv_json_height(o, SRV_BODY_MAX_DEPTH) > SRV_BODY_MAX_DEPTH) {
		json_decref(o);
		return srv_error_set(err, LP_E_BADREQUEST,
				     "the object nests deeper than %d levels",
				     SRV_BODY_MAX_DEPTH);
	}
	/* Go decodes null into the empty object (a custom resource's
	   unstructured decoding refuses it below) */
	if (json_is_null(o) && (!res || !res->custom)) {
		json_decref(o);
		o = json_object();
		if (!o)
			return srv_error_set(err, LP_E_NOMEM, "out of memory");
	}
	if (!json_is_object(o)) {
		json_decref(o);
		return srv_error_set(err, LP_E_BADREQUEST,
				     "the request body must be a JSON object");
	}
	*out = o;
	return LP_OK;
}

static lp_err patch_invalid(const char *shown, const char *msg,
			    struct srv_error *err);

/* Whether s is printable ASCII needing no escape in a JSON string. */
static bool json_plain_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e ||
		    *s == '"' || *s == '\\')
			return false;
	return true;
}

/* The Go package of the internal type kube decodes group's kinds into
   (its legacyscheme), or NULL for a group not worded here. */
static const char *internal_pkg(const char *group)
{
	static const char *const t[][2] = {
	    {"", "core"},
	    {"events.k8s.io", "core"},
	    {"coordination.k8s.io", "coordination"},
	    {"rbac.authorization.k8s.io", "rbac"},
	    {"admissionregistration.k8s.io", "admissionregistration"},
	    {"authentication.k8s.io", "authentication"},
	    {"authorization.k8s.io", "authorization"},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (!strcmp(group, t[i][0]))
			return t[i][1];
	return NULL;
}

/* Whether kube's legacyscheme has kind in group version gv: k8s.io/api's
   register.go of each group version here (a name ending in '+' with its
   List), and the options metav1 adds to every one. Another group's kinds
   count as absent. */
static bool scheme_has(const char *gv, const char *kind)
{
	static const char *const reg[][2] = {
	    {"v1", "Pod+"},
	    {"v1", "PodStatusResult"},
	    {"v1", "PodTemplate+"},
	    {"v1", "ReplicationController+"},
	    {"v1", "Service+"},
	    {"v1", "ServiceProxyOptions"},
	    {"v1", "Endpoints+"},
	    {"v1", "Node+"},
	    {"v1", "NodeProxyOptions"},
	    {"v1", "Binding"},
	    {"v1", "Event+"},
	    {"v1", "List"},
	    {"v1", "LimitRange+"},
	    {"v1", "ResourceQuota+"},
	    {"v1", "Namespace+"},
	    {"v1", "Secret+"},
	    {"v1", "ServiceAccount+"},
	    {"v1", "PersistentVolume+"},
	    {"v1", "PersistentVolumeClaim+"},
	    {"v1", "PodAttachOptions"},
	    {"v1", "PodLogOptions"},
	    {"v1", "PodExecOptions"},
	    {"v1", "PodPortForwardOptions"},
	    {"v1", "PodProxyOptions"},
	    {"v1", "ComponentStatus+"},
	    {"v1", "SerializedReference"},
	    {"v1", "RangeAllocation"},
	    {"v1", "ConfigMap+"},
	    {"coordination.k8s.io/v1", "Lease+"},
	    {"events.k8s.io/v1", "Event+"},
	    {"rbac.authorization.k8s.io/v1", "Role+"},
	    {"rbac.authorization.k8s.io/v1", "RoleBinding+"},
	    {"rbac.authorization.k8s.io/v1", "ClusterRole+"},
	    {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding+"},
	    {"admissionregistration.k8s.io/v1",
	     "ValidatingWebhookConfiguration+"},
	    {"admissionregistration.k8s.io/v1",
	     "MutatingWebhookConfiguration+"},
	    {"admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy+"},
	    {"admissionregistration.k8s.io/v1",
	     "ValidatingAdmissionPolicyBinding+"},
	    {"authentication.k8s.io/v1", "TokenReview"},
	    {"authentication.k8s.io/v1", "TokenRequest"},
	    {"authentication.k8s.io/v1", "SelfSubjectReview"},
	    {"authorization.k8s.io/v1", "SelfSubjectRulesReview"},
	    {"authorization.k8s.io/v1", "SelfSubjectAccessReview"},
	    {"authorization.k8s.io/v1", "SubjectAccessReview"},
	    {"authorization.k8s.io/v1", "LocalSubjectAccessReview"},
	};
	static const char *const opts[] = {
	    "WatchEvent",    "ListOptions",   "GetOptions",  "DeleteOptions",
	    "CreateOptions", "UpdateOptions", "PatchOptions"};
	size_t kl = strlen(kind);
	bool known = false;
	for (size_t i = 0; i < sizeof reg / sizeof reg[0]; i++) {
		if (strcmp(gv, reg[i][0]))
			continue;
		known = true;
		size_t n = strlen(reg[i][1]);
		bool list = reg[i][1][n - 1] == '+';
		n -= list;
		if (strncmp(kind, reg[i][1], n))
			continue;
		if (kl == n ||
		    (list && kl == n + 4 && !strcmp(kind + n, "List")))
			return true;
	}
	for (size_t i = 0; known && i < sizeof opts / sizeof opts[0]; i++)
		if (!strcmp(kind, opts[i]))
			return true;
	return false;
}

/* A body of another kind than the endpoint's: the versioning decoder's
   error as kube words it. The body's kind is created in its version and
   converted into the endpoint's internal type, which fails (converting
   (v1.Secret) to (core.ConfigMap): unknown conversion), or the scheme
   has no such kind there (no kind "Foo" is registered ...); a create or
   update gets transformDecodeError's 400 "<Kind> in version "<v>" cannot
   be handled as a <Kind>: ...", a merge or JSON patch's result the patch's
   422. */
static lp_err wrong_kind(const struct srv_req *r, bool patched, bool pt_merge,
			 const struct srv_resource *res, json_t *obj,
			 const char *kind, const char *av, const char *gv,
			 struct srv_error *err)
{
	const char *pkg = internal_pkg(res->group);
	if (!pkg || (!r && !patched))
		return srv_error_set(err, LP_E_BADREQUEST,
				     "the object provided is unrecognized "
				     "(must be of type %s): kind %s",
				     res->kind, kind);
	const char *bgv = av && *av ? av : gv;
	const char *slash = strrchr(bgv, '/');
	const char *ver = slash ? slash + 1 : bgv;
	char why[700];
	if (scheme_has(bgv, kind))
		snprintf(why, sizeof why,
			 "converting (%s.%s) to (%s.%s): unknown conversion",
			 ver, kind, pkg, res->kind);
	else
		snprintf(
		    why, sizeof why,
		    "no kind \"%s\" is registered for version \"%s\" in scheme "
		    "\"pkg/api/legacyscheme/scheme.go:30\"",
		    kind, bgv);
	if (patched) {
		size_t n = 0;
		char *text = pt_merge ? reg_json_dump_sorted(obj, &n)
				      : reg_json_dump(obj, &n);
		lp_err rc = patch_invalid(text ? text : "", why, err);
		free(text);
		return rc;
	}
	return srv_error_set(
	    err, LP_E_BADREQUEST,
	    "%s in version \"%s\" cannot be handled as a %s: %s", kind, ver,
	    res->kind, why);
}

/* Body kind and apiVersion must name the resource (400 otherwise). r: the
   request whose JSON body obj is (a create or update: kube's
   transformDecodeError quotes it and adds its summary), or NULL; patched:
   obj is a merge or JSON patch's result, whose decoding error kube
   answers as patch's 422 (patch.go); pt_merge: a merge patch's, which
   Go's map encoding gives sorted keys. */
static lp_err check_type_of(const struct srv_req *r, bool patched,
			    bool pt_merge, const struct srv_resource *res,
			    json_t *obj, struct srv_error *err)
{
	char gv[300];
	srv_resource_gv(res, gv, sizeof gv);
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));
	if ((!kind || !*kind) && res->custom) {
		/* unstructured decoding needs the kind (built-ins take the
		   endpoint's); kube's NewMissingKindErr quotes the JSON it
		   decoded */
		size_t n = 0;
		char *text = pt_merge ? reg_json_dump_sorted(obj, &n)
				      : reg_json_dump(obj, &n);
		if (patched) {
			char msg[2200];
			snprintf(msg, sizeof msg,
				 "Object 'Kind' is missing in '%.2048s'",
				 text ? text : "");
			patch_invalid(text ? text : "", msg, err);
			free(text);
			return err->code;
		}
		char sum[128] = "";
		if (r)
			summarize_body(r->body, r->body_len, sum, sizeof sum);
		srv_error_set(
		    err, LP_E_BADREQUEST,
		    "the object provided is unrecognized (must be of type %s): "
		    "Object 'Kind' is missing in '%.2048s'%s%s%s",
		    res->kind, text ? text : "", r ? " (" : "", sum,
		    r ? ")" : "");
		free(text);
		return err->code;
	}
	if (!kind || !*kind) {
		json_object_set_new(obj, "kind", json_string(res->kind));
	} else if (strcmp(kind, res->kind) && res->custom) {
		/* the custom resource validator's TypeMeta check */
		char q[300];
		srv_go_quote(kind, q, sizeof q);
		srv_error_cause(err, "FieldValueInvalid", "kind",
				"Invalid value: %s: must be %s", q, res->kind);
		return invalid_as_sent(res, obj, err);
	} else if (strcmp(kind, res->kind)) {
		return wrong_kind(r, patched, pt_merge, res, obj, kind, av, gv,
				  err);
	}
	if (!av || !*av)
		json_object_set_new(obj, "apiVersion", json_string(gv));
	else if (strcmp(av, gv))
		return srv_error_set(err, LP_E_BADREQUEST,
				     "the API version in the data (%s) does not match the expected API version (%s)",
				     av, gv);
	json_t *m = json_object_get(obj, "metadata");
	if (!m || json_is_null(m)) {
		m = json_object();
		json_object_set_new(obj, "metadata", m);
	} else if (!json_is_object(m)) {
		return srv_error_set(err, LP_E_BADREQUEST,
				     "metadata must be an object");
	}
	json_object_del(m, "selfLink");
	return LP_OK;
}

static lp_err check_type(const struct srv_resource *res, json_t *obj,
			 struct srv_error *err)
{
	return check_type_of(NULL, false, false, res, obj, err);
}

/* A patch's result's kind and apiVersion, before check_type: a strategic
   merge patch's are the type's (kube decodes it into the endpoint's Go
   type: a change is lost), and a custom resource's are kube's
   customResourceValidator.ValidateTypeMeta's 422 causes, both when both
   differ (create and update check the version before, with their 400). */
static lp_err patched_type(const struct srv_resource *res, json_t *next,
			   bool smp, struct srv_error *err)
{
	char gv[300];
	srv_resource_gv(res, gv, sizeof gv);
	if (smp && !res->custom) {
		json_object_set_new(next, "kind", json_string(res->kind));
		json_object_set_new(next, "apiVersion", json_string(gv));
		return LP_OK;
	}
	if (!res->custom)
		return LP_OK;
	const char *kind = json_string_value(json_object_get(next, "kind"));
	const char *av = json_string_value(json_object_get(next, "apiVersion"));
	char q[300];
	if (kind && *kind && strcmp(kind, res->kind)) {
		srv_go_quote(kind, q, sizeof q);
		srv_error_cause(err, "FieldValueInvalid", "kind",
				"Invalid value: %s: must be %s", q, res->kind);
	}
	if (av && *av && strcmp(av, gv)) {
		srv_go_quote(av, q, sizeof q);
		srv_error_cause(err, "FieldValueInvalid", "apiVersion",
				"Invalid value: %s: must be %s", q, gv);
	}
	if (!err->n_causes)
		return LP_OK;
	return invalid_as_sent(res, next, err);
}

/* ------------------------------------------------------------ storage */

static lp_err key_of(const struct srv_resource *res, const char *ns,
		     const char *name, struct reg_key *k, struct srv_error *err)
{
	/* kube's key functions: a name that is no path segment is a 400
	   (IsValidPathSegmentName) */
	const char *bad = !strcmp(name, ".")	      ? "may not be '.'"
			  : !strcmp(name, "..")	      ? "may not be '..'"
			  : strchr(name, '%') != NULL ? "may not contain '%'"
						      : NULL;
	if (bad) {
		char q[1100];
		srv_go_quote(name, q, sizeof q);
		return srv_error_set(err, LP_E_BADREQUEST,
				     "Name parameter invalid: %s: %s", q, bad);
	}
	lp_err rc = reg_object_key(srv_resource_store_group(res),
				   res->resource, res->namespaced ? ns : NULL,
				   name, k);
	/* a name too long for a key (over 253 bytes, as no object's) names
	   none: kube's store finds nothing under it */
	if (rc)
		return not_found_err(res, name, err);
	return LP_OK;
}

/* Namespace lifecycle for writes into ns: 404 missing, 403 terminating on
   create. */
static lp_err check_namespace(struct srv_req *r, const struct srv_resource *res,
			      const char *ns, const char *name, bool creating,
			      struct srv_error *err, struct srv_status_what *w)
{
	if (!res->namespaced)
		return LP_OK;
	struct reg_key k;
	if (reg_object_key("", "namespaces", NULL, ns, &k)) {
		w->name = ns;
		w->kind = "namespaces";
		w->group = "";
		return srv_error_set(err, LP_E_NOTFOUND, "namespaces \"%s\" not found", ns);
	}
	struct reg_obj c = {0};
	lp_err rc = reg_get(srv_engine(r->s), &k, &c);
	if (rc == LP_E_NOTFOUND) {
		w->name = ns;
		w->kind = "namespaces";
		w->group = "";
		return srv_error_set(err, LP_E_NOTFOUND, "namespaces \"%s\" not found", ns);
	}
	if (rc)
		return srv_error_set(err, rc, "reading namespace: %s", lp_strerror(rc));
	/* Only a Terminating namespace refuses content: a namespace whose
	   bytes lack the word cannot be one, and skips the decode (a JSON
	   parse costing more than the rest of this check). */
	if (creating && memmem(c.bytes, c.len, "Terminating", 11) &&
	    reg_obj_decode(&c) == LP_OK) {
		const char *phase = json_string_value(json_object_get(
			json_object_get(c.obj, "status"), "phase"));
		if (phase && !strcmp(phase, "Terminating")) {
			char gr[320];
			srv_error_cause(err, "NamespaceTerminating", "metadata.namespace",
					"namespace %s is being terminated", ns);
			reg_obj_free(&c);
			what_of(res, name, w);
			return srv_error_set(err, LP_E_FORBIDDEN,
					     "%s \"%s\" is forbidden: unable to create new content in namespace %s because it is being terminated",
					     srv_resource_gr(res, gr, sizeof gr), name, ns);
		}
	}
	reg_obj_free(&c);
	return LP_OK;
}

/* Storage errors in words. */
static lp_err storage_err(const struct srv_resource *res, const char *name,
			  lp_err rc, struct srv_error *err)
{
	char gr[320];
	srv_resource_gr(res, gr, sizeof gr);
	if (rc == LP_E_EXISTS)
		return srv_error_set(err, rc, "%s \"%s\" already exists", gr, name);
	if (rc == LP_E_CONFLICT)
		return srv_error_set(err, rc,
				     "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please apply your changes to the latest version and try again",
				     gr, name);
	if (rc == LP_E_NOTFOUND)
		return not_found_err(res, name, err);
	if (rc == LP_E_FULL)
		return srv_error_set(err, LP_E_FULL,
				     "Internal error occurred: the store is full");
	return srv_error_set(err, rc, "Internal error occurred: %s",
			     lp_strerror(rc));
}

/* ------------------------------------------------------------ options */

/* The options kind kube decodes a write's query into, for its messages. */
static const char *opts_kind(const struct srv_req *r)
{
	if (!strcmp(r->method, "PUT"))
		return "UpdateOptions";
	if (!strcmp(r->method, "PATCH"))
		return "PatchOptions";
	if (!strcmp(r->method, "DELETE"))
		return "DeleteOptions";
	return "CreateOptions";
}

/* The dryRun values d[0..n) (from the query or a DeleteOptions body): each
   must be All (kube's ValidateDryRun). */
static lp_err dry_run_values(struct srv_req *r, const char *const *d, size_t n,
			     bool *dry, struct srv_error *err)
{
	*dry = false;
	if (!n)
		return LP_OK;
	bool ok = n <= 8;
	for (size_t i = 0; ok && i < n; i++)
		ok = !strcmp(d[i], "All");
	if (!ok) {
		/* Go's %#v of the []string */
		char list[400] = "";
		size_t o = 0;
		for (size_t i = 0; i < n && i < 8 && o < sizeof list; i++)
			o += (size_t)snprintf(list + o, sizeof list - o,
					      "%s\"%.32s\"", i ? ", " : "", d[i]);
		srv_error_cause(err, "FieldValueNotSupported", "dryRun",
				"Unsupported value: []string{%s}: supported values: \"All\"", list);
		return srv_error_set(err, LP_E_INVALID,
				     "%s.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{%s}: supported values: \"All\"",
				     opts_kind(r), list);
	}
	*dry = true;
	r->dry_run = true;
	return LP_OK;
}

static lp_err dry_run(struct srv_req *r, bool *dry, struct srv_error *err)
{
	const char *d[8];
	size_t n = srv_query_all(r, "dryRun", d, 8);
	return dry_run_values(r, d, n, dry, err);
}

static lp_err field_validation(struct srv_req *r, struct srv_error *err)
{
	const char *fv = srv_query(r, "fieldValidation");
	if (!fv || !*fv || !strcmp(fv, "Ignore") || !strcmp(fv, "Warn") ||
	    !strcmp(fv, "Strict"))
		return LP_OK;
	srv_error_cause(err, "FieldValueNotSupported", "fieldValidation",
			"Unsupported value: \"%.64s\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"", fv);
	return srv_error_set(err, LP_E_INVALID,
			     "%s.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"%.64s\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"",
			     opts_kind(r), fv);
}

/* ------------------------------------------------------------ get */

/* kube's 406 for PartialObjectMetadata asked of a list, or
   PartialObjectMetadataList of one object (asPartialObjectMetadata(List)),
   naming the internal Go type the response holds. */
static void refuse_shape(struct srv_req *r, const struct srv_resource *res,
			 unsigned vb)
{
	char pkg[64];
	const char *g = res->group;
	if (res->custom)
		snprintf(pkg, sizeof pkg, "unstructured");
	else if (!*g || !strcmp(g, "events.k8s.io"))
		snprintf(pkg, sizeof pkg, "core");
	else
		snprintf(pkg, sizeof pkg, "%.*s", (int)strcspn(g, "."), g);
	const char *kind = res->custom ? "Unstructured" : res->kind;
	if (vb == SRV_V_WATCH)
		srv_reply_fail(r, LP_E_NOTACCEPTABLE,
			       "only the following media types are "
			       "accepted: application/json, "
			       "application/yaml, "
			       "application/vnd.kubernetes.protobuf");
	else if (vb == SRV_V_LIST || vb == SRV_V_DELETECOLLECTION)
		srv_reply_fail(r, LP_E_NOTACCEPTABLE,
			       "you requested PartialObjectMetadata, but the "
			       "requested object is a list (*%s.%sList)",
			       pkg, kind);
	else
		srv_reply_fail(r, LP_E_NOTACCEPTABLE,
			       "you requested PartialObjectMetadataList, but "
			       "the requested object is not a list (*%s.%s)",
			       pkg, kind);
}

static void do_get(struct srv_req *r, const struct srv_resource *res,
		   const char *ns, const char *name)
{
	/* kube's GetResource: export is refused unless "0" or "false" */
	const char *exp = srv_query(r, "export");
	if (exp && strcmp(exp, "0") && strcasecmp(exp, "false")) {
		struct srv_error e;
		srv_error_clear(&e);
		srv_error_set(
		    &e, LP_E_BADREQUEST,
		    "the export parameter, deprecated since v1.14, is "
		    "no longer supported");
		srv_reply_error(r, &e, NULL);
		return;
	}
	/* a plain GET: the answer kept for its path, if nothing was
	   committed since it was made (respcache.c); seq is read before
	   anything of the store. A custom resource's answer also depends on
	   its CRD's schemas: the serving map this request's descriptor came
	   from, immutable, names them. */
	bool keep = (!res->custom || r->hold) && srv_get_keepable(r);
	uint64_t seq = keep ? eng_read_seq(srv_engine(r->s)) : 0;
	uint64_t tag = res->custom ? srv_resources_hold_gen(r->hold) : 0;
	if (keep && srv_reply_kept(r, seq, tag))
		return;
	struct srv_error err;
	srv_error_clear(&err);
	struct reg_key k;
	if (key_of(res, ns, name, &k, &err)) {
		fail_res(r, res, name, &err);
		return;
	}
	/* resourceVersion N: not older than N, which kube waits up to 3 s
	   for before its 504 */
	const char *rvq = srv_query(r, "resourceVersion");
	uint64_t rvn = 0;
	if (rvq && *rvq && rv_parse(rvq, &rvn, &err)) {
		/* the watch cache's ParseResourceVersion: a storage error,
		   no Status, so kube's plain 500 */
		err.no_reason = true;
		srv_reply_error(r, &err, NULL);
		return;
	}
	if (rvn > 0) {
		if (srv_park_for_rev(r, clamp_rev(rvn)))
			return; /* run again once reached, or at the limit */
		if (wait_rev(srv_engine(r->s), rvn, rev_wait_ms(r), &err)) {
			srv_reply_error(r, &err, NULL);
			return;
		}
	}
	struct reg_obj c = {0};
	lp_err rc = reg_get(srv_engine(r->s), &k, &c);
	if (rc) {
		storage_err(res, name, rc, &err);
		fail_res(r, res, name, &err);
		return;
	}
	if (r->neg.out == SRV_OUT_PARTIAL_SHAPE) {
		reg_obj_free(&c);
		refuse_shape(r, res, SRV_V_GET);
		return;
	}
	/* served in the asked version (the YAML and Table forms too) */
	char *conv = NULL;
	size_t cl;
	if (srv_resource_convert_at(res, c.bytes, c.len, c.mod, &conv, &cl,
				    &err)) {
		reg_obj_free(&c);
		srv_reply_error(r, &err, NULL);
		return;
	}
	if (conv) {
		reg_obj_free(&c);
		c.bytes = conv;
		c.len = cl;
	}
	if (r->neg.out != SRV_OUT_PLAIN && reg_obj_decode(&c) == LP_OK) {
		json_t *out;
		if (r->neg.out == SRV_OUT_PARTIAL) {
			out = srv_partial(&r->neg, c.obj);
		} else {
			json_t *items = json_array();
			json_array_append(items, c.obj);
			json_t *lm = json_object();
			json_object_set(lm, "resourceVersion",
					json_object_get(json_object_get(c.obj, "metadata"),
							"resourceVersion"));
			out = srv_table(res, &r->neg, items, lm, true);
			json_decref(items);
			json_decref(lm);
		}
		reg_obj_free(&c);
		srv_reply_json(r, 200, out);
		return;
	}
	if (srv_wants_yaml(r) && reg_obj_decode(&c) == LP_OK) {
		srv_reply_json(r, 200, json_incref(c.obj));
		reg_obj_free(&c);
		return;
	}
	if (keep && !conv)
		srv_reply_keep(r, seq, tag, c.bytes, c.len);
	else
		srv_reply_take(r, 200, "application/json", c.bytes, c.len);
	c.bytes = NULL;
	reg_obj_free(&c);
}

/* ------------------------------------------------------------ list */

/* Room for a list's metadata before its items (do_list): the
   resourceVersion, remainingItemCount and a continue token, whose size
   follows the last name's (about 1.6 bytes a character). 384 bytes hold it
   for names of up to about 150 characters; longer ones take a copy. */
#define LIST_META_ROOM 384u
/* At most this much is reserved for a page up front (put_item): a guess
   from the first item's size must not reserve hundreds of megabytes. */
#define LIST_GUESS_MAX (4u * 1024 * 1024)

struct growbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void gb_put(struct growbuf *b, const void *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void gb_str(struct growbuf *b, const char *s)
{
	gb_put(b, s, strlen(s));
}

struct list_ctx {
	const struct srv_resource *res;
	srv_lsel *lsel;
	srv_fsel *fsel;
	struct srv_pagebuf *out;
	size_t n_expected; /* items the page will likely hold (limit); 0 */
	size_t n_items;
	json_t *items;	  /* when set: collect decoded objects instead */
	struct srv_error err; /* set when an item cannot be served */
	/* Decided once per list by read_list, not per item: a page has
	   hundreds of items, and the per-item calls cost a custom resource's
	   page 7% more instructions than a ConfigMap's (callgrind). */
	bool filtered; /* a label or field selector to match */
	bool convert;  /* served in another version than stored */
	/* A built-in's items go without their kind and apiVersion, as kube
	   encodes a typed list (kubernetes#3030): the bytes each item starts
	   with, `{"kind":"K","apiVersion":"GV",`, put as `{`. */
	char strip[320];
	size_t strip_len; /* 0: items as they are */
};

struct field_ud {
	const struct srv_resource *res;
	const json_t *obj;
	char buf[64];
};

static const char *field_get(void *ud, const char *field)
{
	struct field_ud *f = ud;
	return srv_resource_field(f->res, f->obj, field, f->buf, sizeof f->buf);
}

bool srv_object_matches(const struct srv_resource *res, const srv_lsel *ls,
			const srv_fsel *fs, const json_t *obj)
{
	if (ls && !srv_lsel_empty(ls) &&
	    !srv_lsel_match(ls, json_object_get(json_object_get(obj, "metadata"),
						"labels")))
		return false;
	if (fs && !srv_fsel_empty(fs)) {
		struct field_ud f = {.res = res, .obj = obj};
		if (!srv_fsel_match(fs, field_get, &f))
			return false;
	}
	return true;
}

/* Most of a page's cost is copying its items: reserve the page's likely
   size at the first item, so the page is not copied again as it grows,
   then copy each item (and its comma) once. */
static void put_item(struct list_ctx *c, const char *bytes, size_t len)
{
	if (c->n_items == 0 && c->n_expected > 1) {
		size_t guess = c->n_expected * (len + 1);
		srv_pagebuf_reserve(
		    c->out, guess < LIST_GUESS_MAX ? guess : LIST_GUESS_MAX);
	}
	bool strip = c->strip_len && len > c->strip_len &&
		     !memcmp(bytes, c->strip, c->strip_len);
	if (strip) { /* '{' and what follows the prefix */
		bytes += c->strip_len;
		len -= c->strip_len;
	}
	if (!srv_pagebuf_reserve(c->out, len + 2))
		return;
	char *at = c->out->p + c->out->len;
	if (c->n_items)
		*at++ = ',';
	if (strip)
		*at++ = '{';
	memcpy(at, bytes, len);
	at[len] = 0;
	c->out->len = (size_t)(at + len - c->out->p);
}

static enum eng_take list_cb(void *ud, const struct eng_record *rec)
{
	struct list_ctx *c = ud;
	bool filtered = c->filtered;
	const char *bytes = (const char *)rec->value;
	size_t len = rec->value_len;
	char *conv = NULL;
	size_t cl;
	json_t *obj = NULL;
	/* a custom resource's selectable fields are read off the object as
	   served (pruned and defaulted with its current schema, as kube's
	   storage decodes it): converted before the selectors */
	bool conv_first = c->convert && c->res->custom;
	if (conv_first &&
	    srv_resource_convert_at(c->res, bytes, len, rec->mod_rev, &conv,
				    &cl, &c->err))
		return ENG_STOP;
	if (conv_first && conv) {
		bytes = conv;
		len = cl;
	}
	if (filtered) {
		/* a built-in's selectors read the stored form (resources.h) */
		obj = reg_json_load(bytes, len, JSON_ALLOW_NUL, NULL);
		bool match = obj && srv_object_matches(c->res, c->lsel,
						       c->fsel, obj);
		if (!match) {
			json_decref(obj);
			free(conv);
			return ENG_SKIP;
		}
	}
	if (c->convert && !conv_first &&
	    srv_resource_convert_at(c->res, bytes, len, rec->mod_rev, &conv,
				    &cl, &c->err)) {
		json_decref(obj);
		return ENG_STOP;
	}
	if (conv && !conv_first) {
		bytes = conv;
		len = cl;
		json_decref(obj);
		obj = NULL;
	}
	if (c->items && !obj) {
		obj = reg_json_load(bytes, len, JSON_ALLOW_NUL, NULL);
		if (!obj) {
			free(conv);
			return ENG_SKIP;
		}
	}
	if (c->items) {
		json_array_append_new(c->items, obj);
	} else {
		json_decref(obj);
		put_item(c, bytes, len);
	}
	free(conv);
	c->n_items++;
	return c->out->oom ? ENG_STOP : ENG_TAKE;
}



static void list_opts_free(struct list_opts *o)
{
	srv_lsel_free(o->lsel);
	srv_fsel_free(o->fsel);
}

const struct srv_status_what srv_listopts_what = {.group = "meta.k8s.io",
						    .kind = "ListOptions"};

#define RVM "resourceVersionMatch"

/* kube's ValidateListOptions (validateWatchOptions for a watch, with the
   WatchList gate on): every error it finds, in its order, as one
   ListOptions Invalid (details srv_listopts_what). */
static lp_err validate_list_opts(struct srv_req *r, const struct list_opts *o,
				 bool watch, struct srv_error *err)
{
	const char *sie = srv_query(r, "sendInitialEvents");
	const char *m = o->rvm;
	if (watch) {
		if (sie && (!m || strcmp(m, "NotOlderThan")))
			srv_error_cause(err, "FieldValueForbidden", RVM,
					"Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan");
		if (m && !sie)
			srv_error_cause(err, "FieldValueForbidden", RVM,
					"Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided");
		if (m && strcmp(m, "NotOlderThan"))
			srv_error_cause(err, "FieldValueNotSupported", RVM,
					"Unsupported value: \"%.32s\": supported values: \"NotOlderThan\"",
					m);
		if (m && o->cont)
			srv_error_cause(err, "FieldValueForbidden", RVM,
					"Forbidden: resourceVersionMatch is forbidden when continue is provided");
	} else {
		if (m && !o->rv)
			srv_error_cause(err, "FieldValueForbidden", RVM,
					"Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided");
		if (m && o->cont)
			srv_error_cause(err, "FieldValueForbidden", RVM,
					"Forbidden: resourceVersionMatch is forbidden when continue is provided");
		if (m && strcmp(m, "Exact") && strcmp(m, "NotOlderThan"))
			srv_error_cause(err, "FieldValueNotSupported", RVM,
					"Unsupported value: \"%.32s\": supported values: \"Exact\", \"NotOlderThan\", \"\"",
					m);
		if (m && !strcmp(m, "Exact") && o->rv && !strcmp(o->rv, "0"))
			srv_error_cause(err, "FieldValueForbidden", RVM,
					"Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"");
		if (sie)
			srv_error_cause(err, "FieldValueForbidden", "sendInitialEvents",
					"Forbidden: sendInitialEvents is forbidden for list");
	}
	return srv_error_invalid(err, "ListOptions", "meta.k8s.io", "");
}

lp_err srv_list_opts(struct srv_req *r, const struct srv_resource *res,
		     bool watch, struct list_opts *o, struct srv_error *err)
{
	memset(o, 0, sizeof *o);
	o->wait_ms = rev_wait_ms(r);
	/* integers kube decodes into ListOptions: a bad one is its 400 (the
	   watch path words timeoutSeconds' range errors itself) */
	static const char *const ints[] = {"limit", "timeoutSeconds"};
	int64_t ignored;
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		const char *l = watch && i ? NULL : srv_query(r, ints[i]);
		if (l)
			int_param(l, i ? &ignored : &o->limit, err);
		if (err->code)
			return err->code;
	}
	if (watch)
		o->limit = 0;
	o->cont = srv_query(r, "continue");
	if (o->cont && !*o->cont)
		o->cont = NULL;
	o->rv = srv_query(r, "resourceVersion");
	if (o->rv && !*o->rv)
		o->rv = NULL;
	o->rvm = srv_query(r, "resourceVersionMatch");
	if (o->rvm && !*o->rvm)
		o->rvm = NULL;
	/* kube's order: the parameters decode (selectors included, 400),
	   ValidateListOptions (422), field labels convert (400), then the
	   storage reads the continue token and the resourceVersion */
	lp_err rc = srv_lsel_parse(srv_query(r, "labelSelector"), &o->lsel, err);
	if (rc)
		return rc;
	rc = srv_fsel_parse(srv_query(r, "fieldSelector"), &o->fsel, err);
	if (rc)
		return rc;
	if (validate_list_opts(r, o, watch, err))
		return err->code;
	for (size_t i = 0; i < srv_fsel_count(o->fsel); i++) {
		const char *f = srv_fsel_field(o->fsel, i);
		char buf[8];
		json_t *probe = json_object();
		bool known = srv_resource_field(res, probe, f, buf, sizeof buf) != NULL;
		json_decref(probe);
		if (known)
			continue;
		/* the kinds with field labels of their own (and custom
		   resources) refuse in their converter's words; the rest
		   fall to apimachinery's DefaultMetaV1FieldSelectorConversion */
		if (res->custom || res->fields)
			return srv_error_set(err, LP_E_BADREQUEST,
					     "field label not supported: %s",
					     f);
		/* Go's %q writes a byte as four characters at most; the
		   label whole, as kube prints it */
		size_t qn = 4 * strlen(f) + 3;
		char *q = malloc(qn);
		if (!q)
			return srv_error_set(err, LP_E_NOMEM, "out of memory");
		srv_go_quote(f, q, qn);
		srv_error_set(err, LP_E_BADREQUEST,
			      "%s is not a known field selector: only "
			      "\"metadata.name\", \"metadata.namespace\"",
			      q);
		free(q);
		return err->code;
	}
	if (watch) {
		/* the watch cache's ParseResourceVersion: a storage error,
		   no Status, so kube's plain 500 */
		if (o->rv && rv_parse(o->rv, &o->rvn, err)) {
			err->no_reason = true;
			return err->code;
		}
	} else if (o->cont) {
		/* storage.ValidateListOptions: the token first, then no
		   resourceVersion but "0" beside it */
		int64_t crv;
		char *start = NULL, msg[160];
		size_t sl;
		lp_err drc = reg_continue_decode(o->cont, &crv, &start, &sl,
						 msg, sizeof msg);
		if (drc == LP_E_NOMEM)
			return srv_error_set(err, drc, "out of memory");
		if (drc)
			return srv_error_set(err, LP_E_BADREQUEST,
					     "invalid continue token: %s", msg);
		free(start);
		if (o->rv && strcmp(o->rv, "0"))
			return srv_error_set(err, LP_E_BADREQUEST,
					     "specifying resource version is "
					     "not allowed when using continue");
	} else if (o->rv) {
		if (rv_parse_as(o->rv, &o->rvn, false,
				"invalid resource version: ", err)) {
			err->code = LP_E_BADREQUEST;
			return err->code;
		}
		/* resourceVersion "0" is kube's watch cache, which ignores
		   the limit (cacher.go computeListLimit): one whole page, no
		   continue token, nothing to expire */
		if (!strcmp(o->rv, "0"))
			o->limit = 0;
	}
	return LP_OK;
}

/* Read a list into c at the options' revision. Fills *list_rev, the
   continue token (new, or NULL) and the remaining count (-1: none). */

/* kube's handleCompactedErrorForPaging: the token of an expired continue
   with its revision -1 (continue at the latest) into err->cont. false when
   there is none to give (the shorter message then). */
static bool expired_token(const char *cont, struct srv_error *err)
{
	int64_t rv;
	char *start = NULL;
	size_t sl;
	char msg[64];
	if (reg_continue_decode(cont, &rv, &start, &sl, msg, sizeof msg))
		return false;
	char *tok = reg_continue_encode(-1, start, sl);
	free(start);
	bool fits = tok && strlen(tok) < sizeof err->cont;
	if (fits)
		memcpy(err->cont, tok, strlen(tok) + 1);
	free(tok);
	return fits;
}

/* How read_list reads a list at or from revision n. */
enum list_read {
	LIST_READ_LATEST, /* the latest revision, or the continue token's */
	LIST_READ_EXACT,  /* exactly n */
	LIST_READ_WAIT,	  /* not older than n: wait for it first */
	/* the legacy exact read of the one key (below) goes to etcd, which
	   reads the latest and checks it reached n at once */
	LIST_READ_AT_ONCE,
};

/* How read_list reads o's list (and *n). *single: a selector asks for one
   name without a continue token, which kube's MatchesSingle reads as that
   one key, not a range: no limit, continue token or exact revision applies
   (the namespace must be known for a namespaced kind's key). */
static enum list_read list_read_how(const struct srv_resource *res,
				    const char *ns, const struct list_opts *o,
				    int64_t *n, bool *single)
{
	*single = !o->cont && srv_fsel_exact(o->fsel, "metadata.name") &&
		  (!res->namespaced || (ns && *ns));
	*n = 0;
	if (o->cont || !o->rv)
		return LIST_READ_LATEST;
	*n = clamp_rev(o->rvn);
	if ((o->rvm && !strcmp(o->rvm, "Exact")) ||
	    (!o->rvm && *n != 0 && !*single && o->limit > 0))
		return LIST_READ_EXACT;
	if (*single && !o->rvm && o->limit > 0 && *n > 0)
		return LIST_READ_AT_ONCE;
	return *n > 0 ? LIST_READ_WAIT : LIST_READ_LATEST;
}

/* The revision a list from o waits for before it reads (0: none). */
static int64_t list_waits_for(const struct srv_resource *res, const char *ns,
			      const struct list_opts *o)
{
	int64_t n;
	bool single;
	return list_read_how(res, ns, o, &n, &single) == LIST_READ_WAIT ? n : 0;
}

static lp_err read_list(eng *e, const struct srv_resource *res, const char *ns,
			struct list_opts *o, struct list_ctx *c,
			int64_t *list_rev, char **token, int64_t *remaining,
			struct srv_error *err)
{
	struct reg_key prefix;
	if (reg_list_prefix(srv_resource_store_group(res), res->resource,
			    res->namespaced && ns && *ns ? ns : NULL, &prefix))
		return srv_error_set(err, LP_E_NOTFOUND, "not found");
	bool filtered = !srv_lsel_empty(o->lsel) || !srv_fsel_empty(o->fsel);
	c->filtered = filtered;
	c->convert = srv_resource_needs_convert(res);
	struct reg_list_req q = {.prefix = &prefix,
				 .limit = o->limit > 0 ? (uint64_t)o->limit : 0,
				 .cont = o->cont,
				 .count = !filtered};
	int64_t n;
	bool single;
	enum list_read how = list_read_how(res, ns, o, &n, &single);
	if (single)
		q.limit = 0;
	bool exact = how == LIST_READ_EXACT;
	if (exact) {
		q.at_rev = n;
	} else if (how == LIST_READ_AT_ONCE && n > eng_rev(e)) {
		/* its 504 comes without waiting or retryAfterSeconds (found
		   by an audit) */
		err->no_retry = true;
		return too_large(e, o->rvn, err);
	} else if (how == LIST_READ_WAIT &&
		   wait_rev(e, o->rvn, o->wait_ms, err)) {
		return err->code;
	}
	struct reg_list_res rr;
	lp_err rc = reg_list(e, &q, list_cb, c, &rr);
	if (rc == LP_E_BADREQUEST)
		return srv_error_set(err, rc, "invalid continue token: %s", rr.msg);
	if (rc == LP_E_COMPACTED) {
		if (o->cont && expired_token(o->cont, err))
			return srv_error_set(err, LP_E_COMPACTED,
					     "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.");
		if (o->cont)
			return srv_error_set(err, LP_E_COMPACTED,
					     "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.");
		return srv_error_set(err, LP_E_COMPACTED,
				     "The resourceVersion for the provided list is too old.");
	}
	if (rc == LP_E_FUTURE && (exact || o->cont)) {
		/* kube 1.33 sends an exact read, and every continue, to etcd
		   (no cache snapshots), whose error for a revision it has
		   not reached passes through as a plain 500 */
		err->no_reason = true;
		return srv_error_set(
		    err, LP_E_IO,
		    "etcdserver: mvcc: required revision is a future revision");
	}
	if (rc == LP_E_FUTURE) /* (exact reads and continues are above) */
		return too_large(e, (uint64_t)q.at_rev, err);
	if (rc)
		return srv_error_set(err, rc, "Internal error occurred: %s",
				     lp_strerror(rc));
	if (c->out->oom)
		return srv_error_set(err, LP_E_NOMEM, "out of memory");
	*list_rev = rr.rev;
	*token = rr.token;
	*remaining = rr.remaining;
	return LP_OK;
}

/* The list metadata ("\",\"metadata\":{...},\"items\":[") into m.
   Unstructured lists (custom resources) carry continue even when empty,
   as kube's do. */
static void list_meta(struct growbuf *m, int64_t rev, const char *token,
		      int64_t remaining, bool custom)
{
	char num[64];
	gb_str(m, "\",\"metadata\":{\"resourceVersion\":\"");
	snprintf(num, sizeof num, "%lld", (long long)rev);
	gb_str(m, num);
	gb_str(m, "\"");
	if (token) {
		gb_str(m, ",\"continue\":\"");
		gb_str(m, token);
		gb_str(m, "\"");
		if (remaining >= 0) {
			snprintf(num, sizeof num, ",\"remainingItemCount\":%lld",
				 (long long)remaining);
			gb_str(m, num);
		}
	} else if (custom) {
		gb_str(m, ",\"continue\":\"\"");
	}
	gb_str(m, "},\"items\":[");
}

/* A page's continue token and remaining count in list metadata lm: both
   only when more follows, the count when it is known (-1: a selector
   made it unknowable, as in kube). */
static void page_meta(json_t *lm, const char *token, int64_t remaining)
{
	if (!token)
		return;
	json_object_set_new(lm, "continue", json_string(token));
	if (remaining >= 0)
		json_object_set_new(lm, "remainingItemCount",
				    json_integer(remaining));
}

/* A list as Table or PartialObjectMetadataList: decoded items. */
static void do_list_objects(struct srv_req *r, const struct srv_resource *res,
			    const char *ns, struct list_opts *o)
{
	struct srv_error err;
	srv_error_clear(&err);
	struct srv_pagebuf unused = {0};
	struct list_ctx c = {.res = res, .lsel = o->lsel, .fsel = o->fsel,
			     .out = &unused, .items = json_array()};
	int64_t rev = 0, remaining = -1;
	char *token = NULL;
	lp_err rc = read_list(srv_engine(r->s), res, ns, o, &c, &rev, &token,
			      &remaining, &err);
	srv_pagebuf_free(&unused);
	if (rc || c.err.code) {
		json_decref(c.items);
		free(token);
		srv_reply_error(r, rc ? &err : &c.err, NULL);
		return;
	}
	if (r->neg.out == SRV_OUT_PARTIAL_SHAPE) {
		json_decref(c.items);
		free(token);
		refuse_shape(r, res, SRV_V_LIST);
		return;
	}
	json_t *lm = json_object();
	char rvt[24];
	snprintf(rvt, sizeof rvt, "%lld", (long long)rev);
	json_object_set_new(lm, "resourceVersion", json_string(rvt));
	page_meta(lm, token, remaining);
	free(token);
	json_t *out = r->neg.out == SRV_OUT_TABLE
			      ? srv_table(res, &r->neg, c.items, lm, true)
			      : srv_partial_list(&r->neg, c.items, lm);
	json_decref(lm);
	json_decref(c.items);
	srv_reply_json(r, 200, out);
}

static void do_list(struct srv_req *r, const struct srv_resource *res,
		    const char *ns)
{
	struct srv_error err;
	srv_error_clear(&err);
	struct list_opts o;
	if (srv_list_opts(r, res, false, &o, &err)) {
		list_opts_free(&o);
		srv_reply_error(r, &err,
				err.code == LP_E_INVALID ? &srv_listopts_what : NULL);
		return;
	}
	if (srv_park_for_rev(r, list_waits_for(res, ns, &o))) {
		/* run again once reached, or at the limit */
		list_opts_free(&o);
		return;
	}
	if (r->neg.out != SRV_OUT_PLAIN) {
		do_list_objects(r, res, ns, &o);
		list_opts_free(&o);
		return;
	}
	/* The page is built in one recycled buffer (pagebuf.h) and sent from
	   it: the items are copied once, from the store into the buffer. */
	struct srv_pagebuf b;
	srv_pagebuf_init(&b);
	char gv[300];
	srv_resource_gv(res, gv, sizeof gv);
	struct list_ctx c = {.res = res, .lsel = o.lsel, .fsel = o.fsel,
			     .out = &b,
			     .n_expected = o.limit > 0 && o.limit <= 100000
						   ? (size_t)o.limit
						   : 0};
	if (!res->custom) {
		int n = snprintf(c.strip, sizeof c.strip,
				 "{\"kind\":\"%s\",\"apiVersion\":\"%s\",",
				 res->kind, gv);
		c.strip_len =
		    n > 0 && (size_t)n < sizeof c.strip ? (size_t)n : 0;
	}
	const char *head[] = {"{\"kind\":\"", res->list_kind,
			      "\",\"apiVersion\":\"", gv};
	for (size_t i = 0; i < sizeof head / sizeof *head; i++)
		srv_pagebuf_put(&b, head[i], strlen(head[i]));
	size_t meta_at = b.len;
	/* The list metadata is known only after the read: leave room for it
	   before the items, so that the items (a page is often 0.5 MiB) are
	   never copied again (a long continue token takes a copy). */
	static const char spaces[LIST_META_ROOM] = {0};
	srv_pagebuf_put(&b, spaces, sizeof spaces);
	size_t items_at = b.len;
	int64_t rev = 0, remaining = -1;
	char *token = NULL;
	lp_err rc = read_list(srv_engine(r->s), res, ns, &o, &c, &rev, &token,
			      &remaining, &err);
	list_opts_free(&o);
	if (rc || c.err.code) {
		srv_pagebuf_free(&b);
		free(token);
		srv_reply_error(r, rc ? &err : &c.err, NULL);
		return;
	}
	srv_pagebuf_put(&b, "]}", 2);
	/* Now that the revision is known, write the list metadata. */
	struct growbuf m = {0};
	list_meta(&m, rev, token, remaining, res->custom);
	free(token);
	if (b.oom || m.oom) {
		srv_pagebuf_free(&b);
		free(m.p);
		srv_reply_fail(r, LP_E_NOMEM, "out of memory");
		return;
	}
	size_t start;
	if (m.len <= items_at - meta_at) {
		/* slide the head right, up against the items, and put the
		   metadata between them */
		start = items_at - meta_at - m.len;
		memmove(b.p + start, b.p, meta_at);
		memcpy(b.p + start + meta_at, m.p, m.len);
	} else {
		struct srv_pagebuf out = {0};
		srv_pagebuf_put(&out, b.p, meta_at);
		srv_pagebuf_put(&out, m.p, m.len);
		srv_pagebuf_put(&out, b.p + items_at, b.len - items_at);
		srv_pagebuf_free(&b);
		if (out.oom) {
			srv_pagebuf_free(&out);
			free(m.p);
			srv_reply_fail(r, LP_E_NOMEM, "out of memory");
			return;
		}
		b = out;
		start = 0;
	}
	free(m.p);
	if (srv_wants_yaml(r)) {
		json_t *j = reg_json_load(b.p + start, b.len - start,
					  JSON_ALLOW_NUL, NULL);
		srv_pagebuf_free(&b);
		srv_reply_json(r, 200, j);
		return;
	}
	const char *body = b.p + start;
	size_t body_len = b.len - start;
	srv_reply_take_cb(r, 200, "application/json", body, body_len,
			  srv_pagebuf_release, srv_pagebuf_detach(&b));
}

/* ------------------------------------------------------------ fieldValidation */

/*
 * Unknown and duplicate fields (reference §5.8), one path for built-ins and
 * custom resources: the finder records kube's strict errors in a
 * srv_strict, strict_finish answers them as kube's handlers do.
 */

static enum srv_fv fv_of(struct srv_req *r)
{
	return srv_fv_mode(srv_query(r, "fieldValidation"));
}

/* Warn: one Warning per error. go-yaml's repeated-key report becomes one
   warning per line, without its heading (kube's parseYAMLWarnings). */
static void strict_warn(struct srv_req *r, const struct srv_strict *s)
{
	for (size_t i = 0; i < s->n; i++) {
		const char *e = s->errs[i];
		if (strncmp(e, YAML_DUP_PREFIX, strlen(YAML_DUP_PREFIX))) {
			srv_warn(r, "%s", e);
			continue;
		}
		for (const char *p = e + strlen(YAML_DUP_PREFIX); *p;) {
			const char *nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) : strlen(p);
			while (n && (*p == ' ' || *p == '\t')) {
				p++;
				n--;
			}
			if (n)
				srv_warn(r, "%.*s", (int)n, p);
			p += n;
			if (*p == '\n')
				p++;
		}
	}
}

/* Go's %q of s into out (size bytes), cut with "..." inside the quotes
   when longer, so that the message after it still fits. */
static void go_quote_cut(const char *s, size_t len, char *out, size_t size)
{
	size_t o = 0;
	out[o++] = '"';
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[8] = "";
		if (c == '"' || c == '\\')
			snprintf(esc, sizeof esc, "\\%c", c);
		else if (c == '\n')
			snprintf(esc, sizeof esc, "\\n");
		else if (c == '\t')
			snprintf(esc, sizeof esc, "\\t");
		else if (c < 0x20 || c == 0x7f)
			snprintf(esc, sizeof esc, "\\x%02x", c);
		else
			esc[0] = (char)c;
		size_t n = strlen(esc);
		if (o + n + 5 > size) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		memcpy(out + o, esc, n);
		o += n;
	}
	out[o++] = '"';
	out[o] = '\0';
}

/*
 * kube's 422 for a patch whose result its decoder refused: one cause on
 * field "patch" whose value is shown (the patched object, or the strategic
 * merge patch as Go prints it), cut so that msg stays whole. Returns the
 * error set.
 */
static lp_err patch_invalid(const char *shown, const char *msg,
			    struct srv_error *err)
{
	/* the cause's message holds `Invalid value: "<v>": msg` */
	size_t room = SRV_CAUSE_MESSAGE_MAX;
	size_t fixed = strlen(msg) + sizeof "Invalid value: \"\": ";
	char q[SRV_CAUSE_MESSAGE_MAX];
	go_quote_cut(shown, strlen(shown), q,
		     fixed + 8 < room ? room - fixed : 8);
	srv_error_cause(err, "FieldValueInvalid", "patch",
			"Invalid value: %s: %s", q, msg);
	srv_error_invalid(err, "", "", "");
	err->anonymous = true;
	return err->code;
}

/*
 * Answer what strict collected, then free it. Ignore: nothing. Warn: the
 * warnings. Strict with errors: a body (shown NULL) is kube's 400 "<Kind> in
 * version "<v>" cannot be handled as a <Kind>: strict decoding error: ...";
 * a patch is patch_invalid's 422. Returns the error set.
 */
/* The order kube reports a custom resource's unknown fields in: those of
   its metadata (ObjectMeta's coercion), then the pruned paths sorted,
   then those of embedded resources' metadata sorted. */
#define MARK_EMBEDDED_META 1 /* struct srv_strict mark */

/* kube's stages of a custom resource's unknown fields: the root's
   metadata (ObjectMeta decoding), then pruning's, sorted, then embedded
   resources' metadata (objectmeta coercion), sorted; -1 for the rest. */
static int unknown_class(const char *e, unsigned char mark)
{
	static const char pre[] = "unknown field \"";
	if (strncmp(e, pre, sizeof pre - 1))
		return -1;
	if (mark == MARK_EMBEDDED_META)
		return 2;
	return strncmp(e + sizeof pre - 1, "metadata.", 9) ? 1 : 0;
}

struct unknown_ent {
	char *text;
	int cls;
};

static int cmp_unknown(const void *a, const void *b)
{
	const struct unknown_ent *x = a, *y = b;
	return x->cls != y->cls ? (x->cls < y->cls ? -1 : 1)
				: strcmp(x->text, y->text);
}

static void sort_unknown(struct srv_strict *s)
{
	/* the others (duplicate fields, the decoder's) keep their place,
	   before */
	size_t k = 0;
	struct unknown_ent rest[SRV_STRICT_MAX];
	size_t nr = 0;
	for (size_t i = 0; i < s->n; i++) {
		int c = unknown_class(s->errs[i], s->mark[i]);
		if (c < 0) {
			s->mark[k] = s->mark[i];
			s->errs[k++] = s->errs[i];
		} else {
			rest[nr++] = (struct unknown_ent){s->errs[i], c};
		}
	}
	qsort(rest, nr, sizeof *rest, cmp_unknown);
	for (size_t i = 0; i < nr; i++) {
		s->mark[k + i] = 0;
		s->errs[k + i] = rest[i].text;
	}
}

static lp_err strict_finish(struct srv_req *r, const struct srv_resource *res,
			    struct srv_strict *s, const char *shown,
			    struct srv_error *err)
{
	lp_err rc = LP_OK;
	if (res->custom)
		sort_unknown(s);
	if (s->mode == SRV_FV_WARN)
		strict_warn(r, s);
	if (s->mode == SRV_FV_STRICT && s->n) {
		char *msg = srv_strict_message(s);
		if (!msg)
			rc = srv_error_set(err, LP_E_NOMEM, "out of memory");
		else if (!shown)
			rc = srv_error_set(err, LP_E_BADREQUEST,
					   "%s in version \"%s\" cannot be handled as a %s: %s",
					   res->kind, res->version, res->kind, msg);
		else
			rc = patch_invalid(shown, msg, err);
		free(msg);
	}
	srv_strict_free(s);
	return rc;
}

/*
 * What kube's decoding of a create or update body finds. A built-in's
 * type error refuses the body whatever fieldValidation says: 400 "<Kind>
 * in version "<v>" cannot be handled as a <Kind>: json: cannot unmarshal
 * ..." (fields.h). Otherwise strict collects the duplicate fields of a
 * JSON text and a built-in's unknown fields, which are dropped, in kube's
 * order (a YAML body's by name: Go re-encodes it from a map), for
 * strict_finish; a custom resource's or a CRD's text gives its
 * duplicates only. One pass over the object for the types and names.
 */
static void on_unknown(void *ud, const char *path, bool embedded_meta)
{
	struct srv_strict *s = ud;
	s->mark_now = embedded_meta ? MARK_EMBEDDED_META : 0;
	srv_strict_field(s, "unknown field", path);
	s->mark_now = 0;
}

static lp_err body_fields(struct srv_req *r, const struct srv_resource *res,
			  const char *mt, json_t *obj, struct srv_strict *strict,
			  struct srv_error *err)
{
	char gv[300];
	srv_resource_gv(res, gv, sizeof gv);
	if (!strcasecmp(mt, "application/json") && strict->mode != SRV_FV_IGNORE) {
		if (res->custom ||
		    !srv_builtin_scan_json(res->kind, gv, r->body, r->body_len, strict))
			srv_builtin_scan_json(NULL, NULL, r->body, r->body_len, strict);
	}
	struct srv_typeerr te;
	if (res->custom) {
		/* the coercing decoder reads metadata into ObjectMeta: a
		   member of the wrong type is a decoding error (400) */
		if (!srv_object_meta_typecheck(json_object_get(obj, "metadata"),
					       false, &te))
			return srv_error_set(err, LP_E_BADREQUEST,
					     "%s in version \"%s\" cannot be handled as a %s: %s",
					     res->kind, res->version, res->kind,
					     te.text);
		/* kube's schemaCoercingDecoder prunes while it decodes: a
		   custom resource's unknown fields are found (400 when Strict)
		   before its namespace or current object is looked at */
		const struct srv_schema *sch = srv_cr_schema(res);
		if (sch && json_is_object(obj)) {
			srv_schema_prune(sch, obj, on_unknown, strict);
			r->body_pruned = true;
			/* then objectmeta.Coerce: an embedded resource's
			   metadata decodes into ObjectMeta, its apiVersion
			   and kind are strings */
			char why[1024];
			if (srv_schema_coerce(sch, obj, why, sizeof why))
				return srv_error_set(err, LP_E_BADREQUEST,
						     "%s in version \"%s\" cannot be handled as a %s: %s",
						     res->kind, res->version,
						     res->kind, why);
		}
		return LP_OK;
	}
	bool yaml = !strcasecmp(mt, "application/yaml");
	if (!srv_builtin_check(res->kind, gv, obj, yaml,
			       yaml ? SRV_DEC_YAML : SRV_DEC_JSON, strict, &te))
		/* no table (none is served today): its metadata still */
		srv_object_meta_typecheck(json_object_get(obj, "metadata"),
					  true, &te);
	if (!te.set)
		return LP_OK;
	return srv_error_set(err, LP_E_BADREQUEST,
			     "%s in version \"%s\" cannot be handled as a %s: %s",
			     res->kind, res->version, res->kind, te.text);
}


/*
 * A custom resource against its version's schema (reference §8.7, §8.8):
 * prune unknown fields (Warning headers, or 400 with fieldValidation=Strict),
 * apply defaults, validate (422 with causes), and warn for CEL rules that
 * are not evaluated.
 */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* apiextensions-apiserver's warnings for the finalizers a custom resource
   write adds (those not in old; all on create), in name order: one not
   qualified by a domain and not kube's own (orphan, foregroundDeletion,
   kubernetes) is worth a Warning. */
static void finalizer_warnings(struct srv_req *r, const json_t *obj,
			       const json_t *old)
{
	const json_t *fs = json_object_get(json_object_get(obj, "metadata"),
					   "finalizers");
	const json_t *ofs = json_object_get(json_object_get(old, "metadata"),
					    "finalizers");
	size_t n = json_array_size(fs), k = 0;
	if (!n)
		return;
	const char **add = calloc(n, sizeof *add);
	if (!add)
		return;
	for (size_t i = 0; i < n; i++) {
		const char *f = json_string_value(json_array_get(fs, i));
		bool had = false;
		for (size_t j = 0; f && j < json_array_size(ofs) && !had; j++) {
			const char *o = json_string_value(json_array_get(ofs, j));
			had = o && !strcmp(f, o);
		}
		if (f && !had && !strchr(f, '/') && strcmp(f, "orphan") &&
		    strcmp(f, "foregroundDeletion") && strcmp(f, "kubernetes"))
			add[k++] = f;
	}
	qsort(add, k, sizeof *add, cmp_str);
	for (size_t i = 0; i < k; i++) {
		if (i && !strcmp(add[i], add[i - 1]))
			continue;
		char q[300];
		srv_go_quote(add[i], q, sizeof q);
		srv_warn(r, "metadata.finalizers: %s: prefer a domain-qualified finalizer name%s to avoid accidental conflicts with other finalizer writers",
			 q, strchr(add[i], '.') ? " including a path (/)" : "");
	}
	free(add);
}

/* unstructured.NestedInt64 (NestedString when str) at path (".spec.r", a
   scale subresource's path) of obj: false with its accessor error in msg
   when a value on the way is no map, or the value there is of another
   type (null too); true when it is right or absent (or under a null). */
static bool scale_nested_ok(const json_t *obj, const char *path, bool str,
			    char *msg, size_t n)
{
	char buf[256];
	if (!path || strlen(path) >= sizeof buf)
		return true;
	snprintf(buf, sizeof buf, "%s", path[0] == '.' ? path + 1 : path);
	const json_t *v = obj;
	size_t at = 0, len = strlen(buf);
	char *shown;
	while (at <= len) {
		if (json_is_null(v))
			return true; /* not found */
		size_t e = at + strcspn(buf + at, ".");
		if (!json_is_object(v)) {
			shown = srv_go_sprint(v);
			snprintf(msg, n,
				 ".%.*s accessor error: %s is of the type %s, "
				 "expected map[string]interface{}",
				 (int)e, buf, shown ? shown : "",
				 srv_go_type_of(v, false));
			free(shown);
			return false;
		}
		char seg[256];
		snprintf(seg, sizeof seg, "%.*s", (int)(e - at), buf + at);
		v = json_object_get(v, seg);
		if (!v)
			return true;
		at = e + 1;
	}
	if (str ? json_is_string(v) : json_is_integer(v))
		return true;
	shown = srv_go_sprint(v);
	snprintf(msg, n,
		 ".%s accessor error: %s is of the type %s, expected %s", buf,
		 shown ? shown : "", srv_go_type_of(v, false),
		 str ? "string" : "int64");
	free(shown);
	return false;
}

/* The custom resource validator's ValidateScaleSpec/Status: the values at
   a scale subresource's replicas paths, when there, are integers in
   [0, 2147483647] (field: the path as the CRD writes it). True when it
   added causes. */
static bool scale_causes(const struct srv_resource *res, const json_t *obj,
			 struct srv_error *err)
{
	const json_t *sc = srv_cr_scale(res);
	static const char *const keys[] = {"specReplicasPath", "statusReplicasPath"};
	int before = err->n_causes;
	for (size_t i = 0; sc && i < 2; i++) {
		const char *p = json_string_value(json_object_get(sc, keys[i]));
		const json_t *v = p ? srv_jsonpath_first(obj, p) : NULL;
		char why[600];
		if (json_is_null(v))
			continue;
		if (p && !scale_nested_ok(obj, p, false, why, sizeof why)) {
			/* unstructured.NestedInt64's error, the value 0 */
			srv_error_cause(err, "FieldValueInvalid", p,
					"Invalid value: 0: %s", why);
		} else if (!v) {
			continue;
		} else if (json_integer_value(v) < 0)
			srv_error_cause(err, "FieldValueInvalid", p,
					"Invalid value: %lld: should be a non-negative integer",
					(long long)json_integer_value(v));
		else if (json_integer_value(v) > 2147483647)
			srv_error_cause(err, "FieldValueInvalid", p,
					"Invalid value: %lld: should be less than or equal to 2147483647",
					(long long)json_integer_value(v));
	}
	/* ValidateScaleStatus: the selector, when there, is a string */
	const char *lp =
	    json_string_value(json_object_get(sc, "labelSelectorPath"));
	char why[600];
	if (lp && !json_is_null(srv_jsonpath_first(obj, lp)) &&
	    !scale_nested_ok(obj, lp, true, why, sizeof why))
		srv_error_cause(err, "FieldValueInvalid", lp,
				"Invalid value: \"\": %s", why);
	return err->n_causes > before;
}

/*
 * Does a schema error at field (kube's path: spec.a, spec.items[2].b) fall
 * on what the update left as it was? The value there, or for a missing
 * one (Required) the object holding it, equals the old object's
 * correlated value, as kube's ratcheting pairs and compares them
 * (srv_schema_corr_equal): object fields by name, the items of map lists
 * by their keys; the items of sets and atomic lists pair with nothing, so
 * there the whole list must be unchanged.
 */
static bool ratchets(const struct srv_schema_node *n, const char *field,
		     const json_t *obj, const json_t *old)
{
	const json_t *a = obj, *b = old;
	const json_t *pa = NULL, *pb = NULL; /* the holders of a and b */
	const struct srv_schema_node *pn = NULL; /* and their schema */
	const char *p = field;
	while (*p && a && b) {
		if (*p == '[') {
			char *end;
			unsigned long i = strtoul(p + 1, &end, 10);
			if (end == p + 1 || *end != ']' || !json_is_array(a) ||
			    !json_is_array(b))
				return false;
			const char *const *keys;
			size_t n_keys;
			if (srv_schema_list_kind(n, &keys, &n_keys) !=
			    SRV_SLIST_MAP)
				return srv_schema_corr_equal(n, a, b);
			pa = a;
			pb = b;
			pn = n;
			a = json_array_get(a, i);
			b = srv_schema_old_item(n, a, b);
			n = srv_schema_items(n);
			p = end + 1;
			continue;
		}
		if (*p == '.')
			p++;
		size_t len = strcspn(p, ".[");
		char key[256];
		if (!len || len >= sizeof key)
			return false;
		memcpy(key, p, len);
		key[len] = 0;
		p += len;
		if (!json_is_object(a) || !json_is_object(b))
			return false;
		pa = a;
		pb = b;
		pn = n;
		a = json_object_get(a, key);
		b = json_object_get(b, key);
		n = srv_schema_prop(n, key);
	}
	if (*p)
		return false;
	if (a && b)
		return srv_schema_corr_equal(n, a, b);
	return !a && !b && pa && pb && srv_schema_corr_equal(pn, pa, pb);
}

struct scale_hook {
	const struct srv_resource *res;
	const json_t *obj, *old;
};

static void add_scale_causes(void *ud, struct srv_error *err)
{
	struct scale_hook *h = ud;
	scale_causes(h->res, h->obj, err);
}

/* kube's validation ratcheting (on by default since 1.30): an update
   keeps what it did not change, even if the schema has since become
   stricter */
static bool keep_cause(void *ud, const char *field)
{
	struct scale_hook *h = ud;
	/* never the root's apiVersion and kind, whose changes ratcheting
	   cannot see (kube's ratchetingValueValidator.SubPropertyValidator) */
	if (!strcmp(field, "apiVersion") || !strcmp(field, "kind"))
		return true;
	return !h->old || !ratchets(srv_schema_root(srv_cr_schema(h->res)),
				    field, h->obj, h->old);
}

/* A Warning header with text: a strategy's warnings (res->warnings), a
   ratcheted rule failure or a rule not evaluated (srv_schema_check_rules). */
static void warn_cb(void *ud, const char *text)
{
	srv_warn(ud, "%s", text);
}

static lp_err cr_schema(struct srv_req *r, const struct srv_resource *res,
			json_t *obj, const json_t *old, const char *name,
			struct srv_error *err)
{
	const struct srv_schema *sch = srv_cr_schema(res);
	if (!sch) {
		finalizer_warnings(r, obj, old);
		srv_cr_set_version(res, obj, true);
		return LP_OK;
	}
	/* validated in the request's version, as kube's handler decodes
	   and validates it (a create's strategy has already set the
	   storage one); stored in the storage version after */
	srv_cr_set_version(res, obj, false);
	if (!r->body_pruned) { /* a patch's result, an apply */
		/* what an apply's typing let through (under
		   x-kubernetes-preserve-unknown-fields) is pruned silently */
		struct srv_strict strict = {.mode = r->applied ? SRV_FV_IGNORE
							       : fv_of(r)};
		srv_schema_prune(sch, obj, on_unknown, &strict);
		if (strict_finish(r, res, &strict, r->strict_shown, err))
			return err->code;
	}
	if (!r->cr_defaulted) {
		if (r->applied)
			srv_schema_default_keep_nulls(sch, obj);
		else
			srv_schema_default(sch, obj);
	}
	/* kube's order: ObjectMeta, the schema, the scale checks, embedded
	   resources, list types; /status validates against the status
	   schema alone, so its messages name paths from there */
	struct scale_hook sh = {res, obj, old};
	const char *sub = r->ri.subresource;
	struct srv_schema_vopts vo = {
	    .after_schema = add_scale_causes,
	    .keep = keep_cause,
	    .ud = &sh,
	    .old = old,
	    .root_composites = true,
	    .sub = sub && strcmp(sub, "status") == 0 ? "status" : NULL};
	lp_err rc = srv_schema_validate_with(sch, obj, err, &vo);
	if (rc && rc != LP_E_INVALID)
		return srv_error_set(err, rc, "Internal error occurred: %s",
				     lp_strerror(rc));
	/* the x-kubernetes-validations rules last, on the whole object
	   (a /status write's too), as kube's strategies run them */
	err->code = LP_OK;
	if ((rc = srv_schema_check_rules(sch, obj, old, err, warn_cb, r)))
		return srv_error_set(err, rc, "Internal error occurred: %s",
				     lp_strerror(rc));
	if (err->n_causes)
		return invalid_from_causes(res, name, err);
	finalizer_warnings(r, obj, old);
	/* converted to the storage version (conversion None), the object
	   keeps what that version's schema knows, with its defaults */
	srv_cr_set_version(res, obj, true);
	const struct srv_schema *st = srv_cr_storage_schema(res);
	if (st) {
		srv_schema_prune(st, obj, NULL, NULL);
		srv_schema_default(st, obj);
	}
	return LP_OK;
}

/* ------------------------------------------------------------ service IPs */

/* kube's update and patch handlers on the body (a patch's result): its
   namespace, if it says one, is the request's
   (EnsureObjectNamespaceMatchesRequestNamespace), then checkName: it
   names an object, the one of the URL. True when it answered the 400. */
static bool check_body_name(struct srv_req *r, const json_t *obj,
			    const char *ns, const char *name)
{
	const char *bname = meta_str(obj, "name");
	const char *bns = meta_str(obj, "namespace");
	if (ns[0] && bns && *bns && strcmp(bns, ns)) {
		srv_reply_fail(r, LP_E_BADREQUEST,
			       "the namespace of the provided object does not "
			       "match the namespace sent on the request");
		return true;
	}
	if (!bname || !*bname) {
		srv_reply_fail(r, LP_E_BADREQUEST,
			       "the name of the object (%.253s based on URL) "
			       "was undeterminable: name must be provided",
			       name);
		return true;
	}
	if (strcmp(bname, name)) {
		srv_reply_fail(r, LP_E_BADREQUEST,
			       "the name of the object (%.253s) does not match "
			       "the name on the URL (%.253s)",
			       bname, name);
		return true;
	}
	return false;
}

/* kube's NewInternalError(err): 500 InternalError, "Internal error
   occurred: <err>", the error again as the one cause, no object named. */
static lp_err internal_err(struct srv_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static lp_err internal_err(struct srv_error *err, const char *fmt, ...)
{
	char inner[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(inner, sizeof inner, fmt, ap);
	va_end(ap);
	err->n_causes = 0;
	srv_error_cause(err, "", "", "%s", inner);
	srv_error_set(err, LP_E_IO, "Internal error occurred: %s", inner);
	err->anonymous = true;
	return LP_E_IO;
}


/*
 * A Service's cluster IP and node ports are reserved under their own keys,
 * written in the same transaction as the Service, so two Services never
 * share one: "serviceips/<ip>" and "servicenodeports/<port>" (group
 * lapis.dev), each holding the Service's key. A write plans what it
 * reserves and releases (struct svc_plan), then commits the plan with the
 * object; a reservation that collides is picked again when it was picked
 * here, else is kube's 422.
 */
static lp_err svc_ip_key(const char *ip, struct reg_key *k)
{
	/* held under its canonical text: 010.96.0.5 is 10.96.0.5 */
	struct srv_ip p;
	char canon[SRV_IP_TEXT];
	if (srv_ip_parse(ip, &p)) {
		srv_ip_string(&p, canon);
		ip = canon;
	}
	return reg_object_key("lapis.dev", "serviceips", NULL, ip, k);
}

/* obj's spec, made an object if it is not one. */
static json_t *obj_spec(json_t *obj)
{
	json_t *spec = json_object_get(obj, "spec");
	if (!json_is_object(spec)) {
		spec = json_object();
		json_object_set_new(obj, "spec", spec);
	}
	return spec;
}

/* kube's default --service-node-port-range */
#define NODE_PORT_MIN 30000
#define NODE_PORT_MAX 32767

struct svc_res {
	char val[24];	 /* the IP, or the port number */
	bool port;	 /* a node port, else the cluster IP */
	bool del;	 /* released, else reserved */
	bool random;	 /* picked here: picked again on a collision */
	json_t *at;	 /* a picked port is written to at[member] */
	const char *member;
	char field[48];	 /* the field a requested one names in errors */
};

#define NODE_PORTS (NODE_PORT_MAX - NODE_PORT_MIN + 1)

struct svc_plan {
	struct svc_res *v;
	size_t n, cap;
	uint32_t base, size; /* --service-cluster-ip-range */
	eng *e;		     /* where the node port reservations are read */
	bool taken_read;     /* taken holds the store's reservations */
	uint8_t taken[(NODE_PORTS + 7) / 8]; /* a bit per reserved port */
};

/* The key a reservation is held under. */
static lp_err res_key(const struct svc_res *r, struct reg_key *k)
{
	return r->port ? reg_object_key("lapis.dev", "servicenodeports", NULL,
					r->val, k)
		       : svc_ip_key(r->val, k);
}

static struct svc_res *plan_add(struct svc_plan *p)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 8;
		struct svc_res *v = realloc(p->v, cap * sizeof *v);
		if (!v)
			return NULL;
		p->v = v;
		p->cap = cap;
	}
	struct svc_res *r = &p->v[p->n++];
	memset(r, 0, sizeof *r);
	return r;
}

static bool plan_has(const struct svc_plan *p, bool port, const char *val)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].port == port && !strcmp(p->v[i].val, val))
			return true;
	return false;
}

/* The node ports obj's spec holds: ports[].nodePort and the health check
   port when its type needs it, each number once, into *out (new; NULL
   when none), *n of them. false: out of memory. */
static bool held_ports(const json_t *spec, json_int_t **out, size_t *n)
{
	const json_t *ports = json_object_get(spec, "ports");
	json_int_t hc = srv_service_needs_health_port(spec)
			    ? json_integer_value(
				  json_object_get(spec, "healthCheckNodePort"))
			    : 0;
	size_t i, k = 0, cap = json_array_size(ports) + 1;
	json_int_t *v = malloc(cap * sizeof *v);
	*out = NULL;
	*n = 0;
	if (!v)
		return false;
	json_t *p;
	json_array_foreach(ports, i, p)
	{
		json_int_t np = json_integer_value(json_object_get(p, "nodePort"));
		bool seen = np <= 0;
		for (size_t j = 0; j < k && !seen; j++)
			seen = v[j] == np;
		if (!seen)
			v[k++] = np;
	}
	bool seen = hc <= 0;
	for (size_t j = 0; j < k && !seen; j++)
		seen = v[j] == hc;
	if (!seen)
		v[k++] = hc;
	if (!k) {
		free(v);
		return true;
	}
	*out = v;
	*n = k;
	return true;
}

/* Plan the releases of everything spec holds (a delete). false: out of
   memory. */
static bool plan_release_port(struct svc_plan *p, json_int_t port)
{
	struct svc_res *r = plan_add(p);
	if (!r)
		return false;
	snprintf(r->val, sizeof r->val, "%lld", (long long)port);
	r->port = r->del = true;
	return true;
}

/* The cluster IP spec holds: none for ExternalName and headless
   ("None") Services. */
static const char *held_ip(const json_t *spec)
{
	const char *type = json_string_value(json_object_get(spec, "type"));
	const char *ip = json_string_value(json_object_get(spec, "clusterIP"));
	if (!ip || !*ip || !strcmp(ip, "None") ||
	    (type && !strcmp(type, "ExternalName")))
		return NULL;
	return ip;
}

static bool plan_release_all(struct svc_plan *p, const json_t *spec)
{
	const char *ip = held_ip(spec);
	if (ip) {
		struct svc_res *r = plan_add(p);
		if (!r)
			return false;
		snprintf(r->val, sizeof r->val, "%s", ip);
		r->del = true;
	}
	json_int_t *held;
	size_t n;
	if (!held_ports(spec, &held, &n))
		return false;
	bool ok = true;
	for (size_t i = 0; i < n && ok; i++)
		ok = plan_release_port(p, held[i]);
	free(held);
	return ok;
}

/* Plan the cluster IP: a Service that needs one and did not hold one
   (ospec NULL for a create; an ExternalName Service's type changed)
   reserves the one it asks for, which must be in the range (else a cause
   in err), or one picked here; one that held an IP and no longer needs
   one releases it. false: out of memory. */
static bool plan_cluster_ip(struct svc_plan *p, json_t *spec,
			    const json_t *ospec, struct srv_error *err)
{
	const char *type = json_string_value(json_object_get(spec, "type"));
	const char *want = json_string_value(json_object_get(spec, "clusterIP"));
	bool needs = !(type && !strcmp(type, "ExternalName")) &&
		     !(want && !strcmp(want, "None"));
	const char *had = ospec ? held_ip(ospec) : NULL;
	const char *otype =
	    ospec ? json_string_value(json_object_get(ospec, "type")) : NULL;
	bool had_none = !ospec || (otype && !strcmp(otype, "ExternalName"));
	struct svc_res *r;
	if (had && !needs) {
		if (!(r = plan_add(p)))
			return false;
		snprintf(r->val, sizeof r->val, "%s", had);
		r->del = true;
		return true;
	}
	if (!needs || !had_none)
		return true;
	if (!(r = plan_add(p)))
		return false;
	if (!want || !*want) {
		r->random = true;
		r->at = spec;
		return true;
	}
	snprintf(r->val, sizeof r->val, "%s", want);
	struct srv_ip in;
	if (strlen(want) >= sizeof r->val || !srv_ip_parse(want, &in) ||
	    !in.v4) {
		srv_error_cause(err, "FieldValueInvalid", "spec.clusterIPs[0]",
				"Invalid value: \"%.64s\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
				want);
		return true;
	}
	uint32_t v = (uint32_t)in.b[12] << 24 | (uint32_t)in.b[13] << 16 |
		     (uint32_t)in.b[14] << 8 | in.b[15];
	/* kube 1.33's allocator (MultiCIDRServiceAllocator, GA): an IP in
	   no ServiceCIDR is MetaAllocator's ErrMismatchedNetwork */
	if (v - p->base >= p->size)
		srv_error_cause(err, "FieldValueInvalid", "spec.clusterIPs",
				"Invalid value: []string{\"%.40s\"}: failed to "
				"allocate IP %.40s: the provided network does "
				"not match the current range",
				want, want);
	json_object_set_new(spec, "clusterIPs", json_pack("[s]", want));
	return true;
}

/* Plan at[member], one node port (field: its path in errors): a missing
   one is picked when alloc, a requested one must be in the range (else a
   cause in err) and is reserved unless old held it (had, n_had) or the
   plan holds it already. false: out of memory. */
static bool plan_port(struct svc_plan *p, json_t *at, const char *member,
		      const char *field, bool alloc, const json_int_t *had,
		      size_t n_had, struct srv_error *err)
{
	json_int_t np = json_integer_value(json_object_get(at, member));
	struct svc_res *r;
	if (!np) {
		if (!alloc)
			return true;
		if (!(r = plan_add(p)))
			return false;
		r->port = r->random = true;
		r->at = at;
		r->member = member;
		snprintf(r->field, sizeof r->field, "%s", field);
		return true;
	}
	if (np < NODE_PORT_MIN || np > NODE_PORT_MAX) {
		if (!strcmp(member, "healthCheckNodePort"))
			internal_err(err,
				     "failed to allocate requested HealthCheck NodePort %lld: provided port is not in the valid range. The range of valid ports is %d-%d",
				     (long long)np, NODE_PORT_MIN, NODE_PORT_MAX);
		else
			srv_error_cause(err, "FieldValueInvalid", field,
					"Invalid value: %lld: provided port is not in the valid range. The range of valid ports is %d-%d",
					(long long)np, NODE_PORT_MIN, NODE_PORT_MAX);
		return true;
	}
	char val[24];
	snprintf(val, sizeof val, "%lld", (long long)np);
	for (size_t j = 0; j < n_had; j++)
		if (had[j] == np)
			return true;
	if (plan_has(p, true, val))
		return true;
	if (!(r = plan_add(p)))
		return false;
	r->port = true;
	snprintf(r->val, sizeof r->val, "%s", val);
	snprintf(r->field, sizeof r->field, "%s", field);
	return true;
}

/*
 * Plan the node ports spec (the Service after the write; old: before it,
 * NULL for a create) reserves and releases: a port without a nodePort gets
 * one when the type allocates them (NodePort; LoadBalancer unless
 * allocateLoadBalancerNodePorts is false), a requested one must be in the
 * range (else a cause in err) and is reserved unless old held it; the
 * health check port likewise; what old held and spec no longer does is
 * released. false: out of memory.
 */
static bool plan_node_ports(struct svc_plan *p, json_t *spec,
			    const json_t *ospec, struct srv_error *err)
{
	json_int_t *had = NULL, *now = NULL;
	size_t n_had = 0, n_now = 0;
	bool ok = !ospec || held_ports(ospec, &had, &n_had);
	const char *type = json_string_value(json_object_get(spec, "type"));
	json_t *alb = json_object_get(spec, "allocateLoadBalancerNodePorts");
	bool alloc = type && (!strcmp(type, "NodePort") ||
			      (!strcmp(type, "LoadBalancer") && !json_is_false(alb)));
	if (ok && srv_service_needs_node_ports(spec)) {
		size_t i;
		json_t *port;
		json_array_foreach(json_object_get(spec, "ports"), i, port)
		{
			char field[48];
			snprintf(field, sizeof field, "spec.ports[%zu].nodePort", i);
			if (!(ok = plan_port(p, port, "nodePort", field, alloc,
					     had, n_had, err)))
				break;
		}
		if (ok && srv_service_needs_health_port(spec))
			ok = plan_port(p, spec, "healthCheckNodePort",
				       "spec.healthCheckNodePort", true, had,
				       n_had, err);
	}
	/* releases: what old held and the new spec does not */
	ok = ok && held_ports(spec, &now, &n_now);
	for (size_t j = 0; ok && j < n_had; j++) {
		bool kept = false;
		for (size_t k = 0; k < n_now && !kept; k++)
			kept = now[k] == had[j];
		if (!kept)
			ok = plan_release_port(p, had[j]);
	}
	free(had);
	free(now);
	return ok;
}

/* A uniform number below n (n > 0) from the kernel's generator (through
   reg_random's per-thread block): generated
   names, cluster IPs and node ports differ from one run to the next (an
   unseeded rand() repeated its sequence after each restart, so the names
   and addresses it had handed out collided with stored ones). */
static uint32_t random_below(uint32_t n)
{
	uint32_t v;
	uint32_t lim = UINT32_MAX - UINT32_MAX % n; /* no modulo bias */
	do
		reg_random(&v, sizeof v);
	while (v >= lim);
	return v % n;
}

static void port_mark(struct svc_plan *p, long v)
{
	if (v >= NODE_PORT_MIN && v <= NODE_PORT_MAX)
		p->taken[(v - NODE_PORT_MIN) / 8] |=
		    (uint8_t)(1u << ((v - NODE_PORT_MIN) % 8));
}

static bool port_taken(const struct svc_plan *p, int v)
{
	return p->taken[(v - NODE_PORT_MIN) / 8] &
	       (1u << ((v - NODE_PORT_MIN) % 8));
}

static enum eng_take taken_cb(void *ud, const struct eng_record *rec)
{
	/* ".../servicenodeports/<port>" */
	const char *k = (const char *)rec->key;
	size_t i = rec->key_len;
	while (i > 0 && k[i - 1] != '/')
		i--;
	long v = 0;
	for (; i < rec->key_len && v < 100000; i++)
		v = k[i] >= '0' && k[i] <= '9' ? v * 10 + (k[i] - '0') : 100000;
	port_mark(ud, v);
	return ENG_TAKE;
}

/* The node ports reserved in the store, into p->taken. */
static lp_err read_taken_ports(struct svc_plan *p)
{
	memset(p->taken, 0, sizeof p->taken);
	struct reg_key pk;
	lp_err rc = reg_list_prefix("lapis.dev", "servicenodeports", NULL, &pk);
	if (rc)
		return rc;
	struct reg_list_req q = {.prefix = &pk};
	struct reg_list_res res = {0};
	rc = reg_list(p->e, &q, taken_cb, p, &res);
	free(res.token);
	p->taken_read = rc == LP_OK;
	return rc;
}

/* kube's dynamic node port picks prefer the upper band of the range,
   leaving the first ports to Services that ask for one
   (calculateRangeOffset: min(max(16, size/32), 128)). */
#define NODE_PORT_OFFSET                                                       \
	(NODE_PORTS / 32 < 16	 ? 16                                          \
	 : NODE_PORTS / 32 > 128 ? 128                                         \
				 : NODE_PORTS / 32)

/* A free port in [lo, hi] picked at random, marked taken; 0: none. */
static int pick_free_port(struct svc_plan *p, int lo, int hi)
{
	int n_free = 0;
	for (int v = lo; v <= hi; v++)
		n_free += !port_taken(p, v);
	if (!n_free)
		return 0;
	int k = (int)random_below((uint32_t)n_free);
	for (int v = lo; v <= hi; v++)
		if (!port_taken(p, v) && k-- == 0) {
			port_mark(p, v);
			return v;
		}
	return 0;
}

/* Pick every random reservation of the plan again, written into the
   object: a node port of the range that neither the store nor the plan
   holds (the store's reservations read once per plan, again after a
   collision), a cluster IP of the service range but its network address
   and .1 (kube's own Service). LP_E_FULL: no node port is free. */
static lp_err plan_pick(struct svc_plan *p)
{
	bool ports = false;
	for (size_t i = 0; i < p->n && !ports; i++)
		ports = p->v[i].random && p->v[i].port;
	if (ports) {
		lp_err rc = p->taken_read ? LP_OK : read_taken_ports(p);
		if (rc)
			return rc;
		for (size_t i = 0; i < p->n; i++)
			if (p->v[i].port && !p->v[i].random && !p->v[i].del)
				port_mark(p, strtol(p->v[i].val, NULL, 10));
	}
	for (size_t i = 0; i < p->n; i++) {
		struct svc_res *r = &p->v[i];
		if (!r->random)
			continue;
		if (!r->port) {
			uint32_t v = p->base + 2 + random_below(p->size - 3);
			snprintf(r->val, sizeof r->val, "%u.%u.%u.%u", v >> 24,
				 (v >> 16) & 255, (v >> 8) & 255, v & 255);
			json_object_set_new(r->at, "clusterIP",
					    json_string(r->val));
			json_object_set_new(r->at, "clusterIPs",
					    json_pack("[s]", r->val));
			continue;
		}
		int v = pick_free_port(p, NODE_PORT_MIN + NODE_PORT_OFFSET,
				       NODE_PORT_MAX);
		if (!v)
			v = pick_free_port(p, NODE_PORT_MIN,
					   NODE_PORT_MIN + NODE_PORT_OFFSET -
					       1);
		if (!v)
			return LP_E_FULL;
		snprintf(r->val, sizeof r->val, "%d", v);
		json_object_set_new(r->at, r->member, json_integer(v));
	}
	return LP_OK;
}

/* A pick that failed: kube's allocator errors. */
static lp_err pick_err(lp_err rc, struct srv_error *err)
{
	if (rc == LP_E_FULL)
		return internal_err(
		    err, "failed to allocate a nodePort: range is full");
	return internal_err(err, "failed to allocate: %s", lp_strerror(rc));
}

/* The side keys of plan p, reservations holding owner's key, in plan
   order: new arrays (free both), *n of them. A release whose key cannot be
   built (a malformed value stored long ago) is left out, so that it never
   blocks a delete; a reservation's must build (else false, as for out of
   memory). (*map)[i] is the plan entry of side i (free it too). */
static bool plan_sides(const struct svc_plan *p, const struct reg_key *owner,
		       struct reg_key **keys_out, struct reg_side **sides_out,
		       size_t **map_out, int *n_out)
{
	struct reg_key *keys = p->n ? calloc(p->n, sizeof *keys) : NULL;
	struct reg_side *sd = p->n ? calloc(p->n, sizeof *sd) : NULL;
	size_t *map = p->n ? calloc(p->n, sizeof *map) : NULL;
	bool ok = !p->n || (keys && sd && map);
	int n = 0;
	for (size_t i = 0; ok && i < p->n; i++) {
		const struct svc_res *r = &p->v[i];
		if (res_key(r, &keys[n])) {
			ok = r->del;
			continue;
		}
		sd[n].key = &keys[n];
		sd[n].del = r->del;
		sd[n].value = r->del ? NULL : owner->bytes;
		sd[n].cmp.kind = r->del ? ENG_CMP_NONE : ENG_CMP_ABSENT;
		sd[n].cmp.mod_rev = 0;
		map[n++] = i;
	}
	if (!ok) {
		free(keys);
		free(sd);
		free(map);
		return false;
	}
	*keys_out = keys;
	*sides_out = sd;
	*map_out = map;
	*n_out = n;
	return true;
}

/* Commit obj under k (cmp) with the plan's reservations (holding k) and
   releases. *failed: the plan entry whose reservation collided, or -1. */
static lp_err plan_commit(eng *e, const struct reg_key *k, json_t *obj,
			  const struct eng_cmp *cmp, const struct svc_plan *p,
			  int *failed, char **out, size_t *out_len)
{
	*failed = -1;
	struct reg_key *keys;
	struct reg_side *sd;
	size_t *map;
	int n, side = -1;
	if (!plan_sides(p, k, &keys, &sd, &map, &n))
		return LP_E_NOMEM;
	lp_err rc = reg_put_sides(e, k, obj, cmp, sd, n, &side, out, out_len,
				  NULL);
	if (side >= 0 && side < n)
		*failed = (int)map[side];
	free(keys);
	free(sd);
	free(map);
	return rc;
}

/* Delete k (at revision mod) and release what old holds when it is a
   Service: its cluster IP and node ports. */
static lp_err delete_releasing(eng *e, const struct srv_resource *res,
			       const struct reg_key *k, int64_t mod,
			       const json_t *old, int64_t *rev)
{
	if (strcmp(res->resource, "services") || res->group[0])
		return reg_delete_sides(e, k, mod, NULL, 0, rev);
	struct svc_plan p = {0};
	struct reg_key *keys = NULL;
	struct reg_side *sd = NULL;
	size_t *map = NULL;
	int n = 0;
	lp_err rc = LP_E_NOMEM;
	if (plan_release_all(&p, json_object_get(old, "spec")) &&
	    plan_sides(&p, k, &keys, &sd, &map, &n))
		rc = reg_delete_sides(e, k, mod, sd, n, rev);
	free(keys);
	free(sd);
	free(map);
	free(p.v);
	return rc;
}

static bool parse_cidr(const char *cidr, uint32_t *base, uint32_t *size)
{
	unsigned a, b, c, d, bits;
	if (!cidr || sscanf(cidr, "%u.%u.%u.%u/%u", &a, &b, &c, &d, &bits) != 5 ||
	    a > 255 || b > 255 || c > 255 || d > 255 || bits < 8 || bits > 30)
		return false;
	uint32_t mask = bits ? 0xffffffffu << (32 - bits) : 0;
	*base = ((a << 24) | (b << 16) | (c << 8) | d) & mask;
	*size = ~mask + 1;
	return true;
}

/* The 422 of a reservation that collided (plan entry r); a health check
   port's is kube's 500 (allocHealthCheckNodePort's plain error, which
   txnAllocNodePorts makes an InternalError). */
static lp_err taken(const struct svc_res *r, struct srv_error *err)
{
	if (r->port && !strcmp(r->field, "spec.healthCheckNodePort"))
		return internal_err(err,
				    "failed to allocate requested HealthCheck NodePort %s: provided port is already allocated",
				    r->val);
	if (r->port)
		srv_error_cause(err, "FieldValueInvalid", r->field,
				"Invalid value: %s: provided port is already allocated",
				r->val);
	else
		srv_error_cause(err, "FieldValueInvalid", "spec.clusterIPs",
				"Invalid value: []string{\"%s\"}: failed to allocate IP %s: provided IP is already allocated",
				r->val, r->val);
	return LP_E_INVALID;
}

/* Write plan p with obj under k (cmp), picking collided random node ports
   again. Errors as reg_put, LP_E_INVALID with causes in err. */
static lp_err commit_picking(struct srv_req *r, const struct reg_key *k,
			     json_t *obj, const struct eng_cmp *cmp,
			     struct svc_plan *p, char **out, size_t *out_len,
			     struct srv_error *err)
{
	eng *e = srv_engine(r->s);
	for (int attempt = 0; attempt < 64; attempt++) {
		int failed;
		lp_err rc = plan_commit(e, k, obj, cmp, p, &failed, out, out_len);
		if (rc != LP_E_EXISTS || failed < 0)
			return rc;
		if (!p->v[failed].random)
			return taken(&p->v[failed], err);
		/* another write took it meanwhile: read what is taken now */
		p->taken_read = false;
		if ((rc = plan_pick(p)))
			return pick_err(rc, err);
	}
	return internal_err(err, "failed to allocate a nodePort: range is full");
}

/* A dry run's allocations: what plan p reserves must be free, as kube's
   dry-run allocators check without reserving (a pick that is taken is
   picked again; a requested one taken is the 422). Nothing is written. */
static lp_err plan_check(struct srv_req *r, struct svc_plan *p,
			 struct srv_error *err)
{
	eng *e = srv_engine(r->s);
	for (int attempt = 0; attempt < 64; attempt++) {
		bool again = false;
		for (size_t i = 0; i < p->n && !again; i++) {
			struct svc_res *x = &p->v[i];
			struct reg_key k;
			struct reg_obj c = {0};
			if (x->del || res_key(x, &k) || reg_get(e, &k, &c) != LP_OK)
				continue;
			reg_obj_free(&c);
			if (!x->random)
				return taken(x, err);
			again = true;
		}
		if (!again)
			return LP_OK;
		p->taken_read = false;
		lp_err rc = plan_pick(p);
		if (rc)
			return pick_err(rc, err);
	}
	return internal_err(err, "failed to allocate: range is full");
}

/* Plan a Service write (ospec NULL: a create) into p: LP_OK,
   LP_E_INVALID with causes in err, LP_E_NOMEM, or LP_E_IO for a bad
   --service-cluster-ip-range. */
static lp_err plan_service(struct srv_req *r, struct svc_plan *p,
			   json_t *spec, const json_t *ospec,
			   struct srv_error *err)
{
	const char *cidr = srv_options(r->s)->service_cidr;
	if (!parse_cidr(cidr, &p->base, &p->size))
		return srv_error_set(err, LP_E_IO, "bad --service-cluster-ip-range");
	if (srv_service_ip_families(spec, ospec, err))
		return LP_E_INVALID;
	if (!plan_cluster_ip(p, spec, ospec, err) ||
	    !plan_node_ports(p, spec, ospec, err))
		return LP_E_NOMEM;
	if (err->code)
		return err->code;
	if (err->n_causes)
		return LP_E_INVALID;
	p->e = srv_engine(r->s);
	lp_err rc = plan_pick(p);
	return rc ? pick_err(rc, err) : LP_OK;
}

/* Create a Service with its cluster IP and node ports (plan_service).
   Errors as reg_put, LP_E_INVALID for an IP or port outside its range or
   already allocated. */
static lp_err create_service(struct srv_req *r, const struct reg_key *k,
			     json_t *obj, bool dry, char **out, size_t *out_len,
			     struct srv_error *err)
{
	struct eng_cmp absent = {ENG_CMP_ABSENT, 0};
	struct svc_plan p = {0};
	lp_err rc = plan_service(r, &p, obj_spec(obj), NULL, err);
	if (!rc && dry && !(rc = plan_check(r, &p, err)))
		rc = reg_put(srv_engine(r->s), k, obj, &absent, true, "", out,
			     out_len, NULL);
	else if (!rc && !dry)
		rc = commit_picking(r, k, obj, &absent, &p, out, out_len, err);
	free(p.v);
	return rc;
}

/* An update of a Service that reserves or releases a cluster IP or node
   ports commits them with it. *planned false: nothing to reserve or
   release (the caller writes as for any object). */
static lp_err update_service(struct srv_req *r, const struct reg_key *k,
			     json_t *next, const json_t *old,
			     const struct eng_cmp *cmp, bool dry, bool *planned,
			     char **out, size_t *out_len, struct srv_error *err)
{
	struct svc_plan p = {0};
	*planned = false;
	lp_err rc = plan_service(r, &p, obj_spec(next),
				 json_object_get(old, "spec"), err);
	if (!rc && dry)
		rc = plan_check(r, &p, err); /* the caller encodes, dry */
	else if (!rc && p.n) {
		*planned = true;
		rc = commit_picking(r, k, next, cmp, &p, out, out_len, err);
	}
	free(p.v);
	return rc;
}

/* ------------------------------------------------------------ create */

static void gen_name(const char *prefix, char *out, size_t n)
{
	static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	char suffix[6];
	for (int i = 0; i < 5; i++)
		suffix[i] = alphabet[random_below(sizeof alphabet - 1)];
	suffix[5] = 0;
	snprintf(out, n, "%.58s%s", prefix, suffix);
}

/* ------------------------------------------------------------ CRD cleanup */

#define CRD_CLEANUP "customresourcecleanup.apiextensions.k8s.io"

static void set_finalizer(json_t *m, const char *f, bool on);

/* Whether DELETE of a CRD leaves it to the crd-finalizer controller (set
   when that controller runs; without it a CRD and its instances go at
   once, as before the controller existed). */
static atomic_bool crd_cleanup;

void srv_set_crd_cleanup(bool on)
{
	atomic_store(&crd_cleanup, on);
}

static bool is_crd(const struct srv_resource *res)
{
	return !strcmp(res->group, "apiextensions.k8s.io") &&
	       !strcmp(res->resource, "customresourcedefinitions");
}

/* kube's REST storages without a TableConvertor, whose request scope so
   refuses a Table clause of Accept (AllowsMediaTypeTransform): the review
   kinds, serviceaccounts/token, namespaces/finalize and
   customresourcedefinitions/status (kube's e2e table_conversion test posts
   a SelfSubjectAccessReview asking for a Table only: 406). A custom
   resource's subresources take its own table convertor. */
static bool no_table_convertor(const struct srv_resource *res, const char *sub)
{
	if (res->review)
		return true;
	if (!sub[0] || res->custom)
		return false;
	return (!res->group[0] && !strcmp(res->resource, "serviceaccounts") &&
		!strcmp(sub, "token")) ||
	       (is_namespaces(res) && !strcmp(sub, "finalize")) ||
	       (is_crd(res) && !strcmp(sub, "status"));
}

/* The first DELETE of a CRD: the cleanup finalizer and Terminating
   (reference §8.4 step 2). */
static void crd_mark_terminating(json_t *crd)
{
	set_finalizer(json_object_get(crd, "metadata"), CRD_CLEANUP, true);
	reg_set_condition(crd, "Terminating", "True", "InstanceDeletionPending",
			  "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon");
}

/* The write's field manager (managed.h): fieldManager or the client's
   User-Agent. A bad fieldManager is kube's 422 on the options kind. */
static lp_err field_manager_ok(struct srv_req *r, const char *options,
			       struct srv_error *err)
{
	if (!srv_mf_check_manager(srv_query(r, "fieldManager"), err))
		return LP_OK;
	return srv_error_invalid(err, options, "meta.k8s.io", "");
}

static void mf_op(struct srv_req *r, const struct srv_resource *res,
		  const char *sub, struct srv_mf_op *op, char *mgr, size_t mn,
		  char *gv, size_t gn)
{
	*op = (struct srv_mf_op){
	    .res = res,
	    .manager = srv_mf_manager(srv_query(r, "fieldManager"),
				      srv_header(r, "User-Agent"), mgr, mn),
	    .api_version = srv_resource_gv(res, gv, gn),
	    .subresource = sub && *sub ? sub : NULL};
}

/* Decode c, the stored object a write to res starts from, as kube's
   storage decodes it: a custom resource written under schemas its CRD
   has changed since, or in another version, is pruned and defaulted as a
   GET serves it (srv_resource_convert), so a field the schema dropped is
   no field the request sent. c->bytes stay the stored ones. */
static lp_err decode_current(const struct srv_resource *res,
			     struct reg_obj *c, struct srv_error *err)
{
	if (c->obj || !res->custom)
		return reg_obj_decode(c);
	char *conv = NULL;
	size_t cl = 0;
	lp_err rc = srv_resource_convert(res, c->bytes, c->len, &conv, &cl, err);
	if (rc)
		return rc;
	if (!conv)
		return reg_obj_decode(c);
	c->obj = reg_json_load(conv, cl, JSON_ALLOW_NUL, NULL);
	c->converted = true;
	free(conv);
	return c->obj ? LP_OK : LP_E_CORRUPT;
}

/* The warnings kube's strategy gives this create or update. */
static void type_warnings(struct srv_req *r, const struct srv_resource *res,
			  const json_t *obj, const json_t *old)
{
	if (res->warnings)
		res->warnings(obj, old, warn_cb, r);
}

/* The metadata an update may not change, as kube's rest.BeforeUpdate and
   ValidateObjectMetaUpdate judge it: a uid other than the stored one, a
   deletion timestamp on an object not being deleted, a grace period other
   than the stored one (an update that leaves these out keeps the stored
   ones). m: the update's metadata, om: the stored object's. */
static void meta_immutables(const json_t *m, const json_t *om,
			    struct srv_error *err)
{
	const char *uid = json_string_value(json_object_get(m, "uid"));
	const char *ouid = json_string_value(json_object_get(om, "uid"));
	if (uid && *uid && ouid && strcmp(uid, ouid))
		srv_error_cause(err, "FieldValueInvalid", "metadata.uid",
				"Invalid value: \"%.64s\": field is immutable", uid);
	const json_t *dt = json_object_get(m, "deletionTimestamp");
	const char *dts = json_string_value(dt);
	if (!json_object_get(om, "deletionTimestamp") && dts) {
		/* a metav1.Time prints as Go's time.Time does */
		struct tm tm = {0};
		char shown[64];
		const char *end = strptime(dts, "%Y-%m-%dT%H:%M:%S", &tm);
		if (end && (*end == 'Z' || !*end) &&
		    strftime(shown, sizeof shown, "%Y-%m-%d %H:%M:%S +0000 UTC", &tm))
			srv_error_cause(err, "FieldValueInvalid",
					"metadata.deletionTimestamp",
					"Invalid value: %s: field is immutable", shown);
		else
			srv_error_cause(err, "FieldValueInvalid",
					"metadata.deletionTimestamp",
					"Invalid value: \"%.64s\": field is immutable", dts);
	}
	const json_t *g = json_object_get(m, "deletionGracePeriodSeconds");
	const json_t *og = json_object_get(om, "deletionGracePeriodSeconds");
	if (json_is_integer(g) &&
	    (!json_is_integer(og) || json_integer_value(g) != json_integer_value(og)))
		srv_error_cause(err, "FieldValueInvalid",
				"metadata.deletionGracePeriodSeconds",
				"Invalid value: %lld: field is immutable",
				(long long)json_integer_value(g));
}

/* to's metadata.managedFields made from's (none when from has none);
   nothing when to has no metadata object. */
static void take_managed_fields(json_t *to, const json_t *from)
{
	json_t *m = json_object_get(to, "metadata");
	json_t *mf =
	    json_object_get(json_object_get(from, "metadata"), "managedFields");
	if (!json_is_object(m))
		return;
	if (mf)
		json_object_set(m, "managedFields", mf);
	else
		json_object_del(m, "managedFields");
}

/* Each managedFields entry of obj renamed from its own API version's
   field names into gv's (back: from gv's into its own), for a kind whose
   versions name fields apart (srv_kind_renames_fields: an Event written
   through core/v1 and events.k8s.io/v1). kube's field manager compares
   every manager's fields in the request's version and keeps each entry
   in its own. NULL obj: nothing. */
static void mf_rename(const struct srv_resource *res, json_t *obj,
		      const char *gv, bool back)
{
	json_t *mf =
	    json_object_get(json_object_get(obj, "metadata"), "managedFields");
	size_t i;
	json_t *e;
	json_array_foreach(mf, i, e)
	{
		const char *av =
		    json_string_value(json_object_get(e, "apiVersion"));
		if (av)
			srv_fields_convert(res->kind, back ? gv : av,
					   back ? av : gv,
					   json_object_get(e, "fieldsV1"));
	}
}

/* track_update of a kind whose versions name fields apart: the write's
   fields taken in the request's version (op->api_version), as kube's
   field manager runs before the conversion to the stored one, and every
   entry compared in that version's names, then kept in its own. old and
   next are in the stored form. */
static lp_err track_renamed(const struct srv_mf_op *op,
			    const struct srv_resource *res, const json_t *old,
			    json_t *next, struct srv_error *err)
{
	json_t *o = old ? json_deep_copy(old) : NULL;
	json_t *n = json_deep_copy(next);
	lp_err rc;
	if (!n || (old && !o)) {
		rc = srv_error_set(err, LP_E_NOMEM, "out of memory");
		goto out;
	}
	if (res->view) {
		if (o)
			res->view->to_served(o);
		res->view->to_served(n);
	}
	mf_rename(res, o, op->api_version, false);
	mf_rename(res, n, op->api_version, false);
	rc = srv_mf_update(op, o, n, err);
	if (!rc) {
		mf_rename(res, n, op->api_version, true);
		take_managed_fields(next, n);
	}
out:
	json_decref(o);
	json_decref(n);
	return rc;
}

/* Record a non-apply write in next's managedFields (old NULL: create). */
static lp_err track_update(struct srv_req *r, const struct srv_resource *res,
			   const char *sub, const json_t *old, json_t *next,
			   struct srv_error *err)
{
	char mgr[SRV_MF_MANAGER_BUF], gv[300];
	struct srv_mf_op op;
	mf_op(r, res, sub, &op, mgr, sizeof mgr, gv, sizeof gv);
	if (srv_kind_renames_fields(res->kind))
		return track_renamed(&op, res, old, next, err);
	/* the entry names the form its paths are in (resources.h: a view
	   writes the stored form) */
	op.api_version = srv_resource_store_gv(res, gv, sizeof gv);
	/* a custom resource written through a version other than the
	   storage version: the fields tracked are what the request's
	   version has (old is in that form already), as kube's field
	   manager runs before the conversion; not the storage version's
	   own defaults */
	json_t *seen = res->custom ? srv_cr_request_view(res, next) : NULL;
	if (!seen)
		return srv_mf_update(&op, old, next, err);
	lp_err rc = srv_mf_update(&op, old, seen, err);
	if (!rc)
		take_managed_fields(next, seen);
	json_decref(seen);
	return rc;
}

static void create_object(struct srv_req *r, const struct srv_resource *res,
			  const char *ns, json_t *obj, bool dry, bool tracked);

/* Leave out what kube's encoding of the decoded object would: empty lists
   and maps, zero omitempty scalars (a label removed leaves no "labels":
   {}, as on kube; kubectl diff then shows no change). */
static void omit_empty(const struct srv_resource *res, json_t *obj)
{
	char gv[300];
	srv_builtin_omitempty(res->kind,
			      srv_resource_store_gv(res, gv, sizeof gv), obj);
}

/* A dry-run create's object has no revision: kube's answer leaves the
   empty resourceVersion out (omitempty), where the stored form has its
   slot. The canonical layout puts it after uid, before creationTimestamp,
   in metadata, the first member of that name. */
static void drop_empty_rv(char *out, size_t *len)
{
	static const char rv[] = "\"resourceVersion\":\"\",";
	char *p = out ? memmem(out, *len, rv, sizeof rv - 1) : NULL;
	if (!p)
		return;
	size_t cut = sizeof rv - 1;
	memmove(p, p + cut, *len - (size_t)(p - out) - cut);
	*len -= cut;
}

/* A write's answer as the Accept asked (kube's transformResponseObject on
   every verb): PartialObjectMetadata or a Table of one object (new), or
   NULL for the object itself (or a Status, which passes as it is). */
static json_t *as_negotiated(struct srv_req *r, const struct srv_resource *res,
			     const json_t *obj)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	if (r->neg.out == SRV_OUT_PLAIN || !json_is_object(obj) ||
	    (kind && !strcmp(kind, "Status")))
		return NULL;
	if (r->neg.out == SRV_OUT_PARTIAL)
		return srv_partial(&r->neg, obj);
	json_t *items = json_array();
	json_array_append(items, (json_t *)obj);
	json_t *lm = json_object();
	json_object_set(lm, "resourceVersion",
			json_object_get(json_object_get(obj, "metadata"),
					"resourceVersion"));
	json_t *t = srv_table(res, &r->neg, items, lm, true);
	json_decref(items);
	json_decref(lm);
	return t;
}

/* Answer with an object's stored bytes (out, taken) in the version res
   serves, converted as the Accept asked. */
static void reply_stored(struct srv_req *r, const struct srv_resource *res,
			 int code, char *out, size_t len)
{
	char *conv = NULL;
	size_t cl;
	struct srv_error err;
	srv_error_clear(&err);
	if (srv_resource_needs_convert(res) &&
	    srv_resource_convert(res, out, len, &conv, &cl, &err) == LP_OK &&
	    conv) {
		free(out);
		out = conv;
		len = cl;
	}
	if (r->neg.out != SRV_OUT_PLAIN) {
		json_error_t je;
		json_t *obj = reg_json_load(out, len, JSON_ALLOW_NUL, &je);
		json_t *t = obj ? as_negotiated(r, res, obj) : NULL;
		json_decref(obj);
		if (t) {
			free(out);
			srv_reply_json(r, code, t);
			return;
		}
	} else if (srv_wants_yaml(r)) {
		/* a write answers in YAML too when the Accept asks for it */
		json_t *obj = reg_json_load(out, len, JSON_ALLOW_NUL, NULL);
		if (obj) {
			free(out);
			srv_reply_json(r, code, obj);
			return;
		}
	}
	srv_reply_take(r, code, "application/json", out, len);
}

/* Answer with an object in the stored form (taken; a Status passes) in
   the version res serves. */
static void reply_json_stored(struct srv_req *r,
			      const struct srv_resource *res, int code,
			      json_t *obj)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	if (res->view && kind && strcmp(kind, "Status"))
		res->view->to_served(obj);
	else if (res->custom && kind && strcmp(kind, "Status"))
		srv_cr_to_served(res, obj);
	json_t *t = as_negotiated(r, res, obj);
	if (t) {
		json_decref(obj);
		obj = t;
	}
	srv_reply_json(r, code, obj);
}

/* A create's options and body (type res), as kube decodes them: *dry, and
   *obj (new) on LP_OK; the error in err otherwise. */
static lp_err create_body(struct srv_req *r, const struct srv_resource *res,
			  bool *dry, json_t **obj, struct srv_error *err)
{
	char mtb[128];
	const char *mt = media_type(r, mtb, sizeof mtb);
	struct srv_strict strict = {.mode = fv_of(r)};
	*obj = NULL;
	if (dry_run(r, dry, err) || field_validation(r, err) ||
	    field_manager_ok(r, "CreateOptions", err) ||
	    decode_body(r, mt, res, &strict, obj, err) ||
	    body_fields(r, res, mt, *obj, &strict, err) ||
	    check_type_of(r, false, false, res, *obj, err) ||
	    strict_finish(r, res, &strict, NULL, err)) {
		srv_strict_free(&strict);
		/* an Invalid names the object in its details: answered here,
		   while the object is at hand */
		if (err->code == LP_E_INVALID && *obj) {
			const char *nm = meta_str(*obj, "name");
			fail_res(r, res, nm ? nm : "", err);
		}
		json_decref(*obj);
		*obj = NULL;
		return err->code;
	}
	return LP_OK;
}


/* kube's crdHandler: NewMethodNotSupported (details: group and the
   resource) with its own message for a terminating CRD's create. */
static void terminating_405(struct srv_req *r, const struct srv_resource *res)
{
	struct srv_error err;
	srv_error_clear(&err);
	srv_error_set(&err, LP_E_METHODNOTALLOWED,
		      "create not allowed while custom resource definition is terminating");
	struct srv_status_what w = {.group = res->group, .kind = res->resource};
	srv_reply_error(r, &err, &w);
}

static void do_create(struct srv_req *r, const struct srv_resource *res,
		      const char *ns)
{
	struct srv_error err;
	srv_error_clear(&err);
	if (res->terminating) {
		terminating_405(r, res);
		return;
	}
	bool dry;
	json_t *obj = NULL;
	if (create_body(r, res, &dry, &obj, &err)) {
		if (!r->answered)
			srv_reply_error(r, &err, NULL);
		return;
	}
	if (res->review) {
		/* answered from the request, nothing stored */
		if (srv_review(r, res, ns, obj, &err)) {
			json_decref(obj);
			srv_reply_error(r, &err, NULL);
		} else {
			srv_reply_json(r, 201, obj); /* takes obj */
		}
		return;
	}
	if (res->view)
		res->view->to_stored(obj);
	create_object(r, res, ns, obj, dry, false);
}

/* The create pipeline from a decoded body (obj, taken); tracked: its
   managedFields are final already (server-side apply). Replies. */
static void create_object(struct srv_req *r, const struct srv_resource *res,
			  const char *ns, json_t *obj, bool dry, bool tracked)
{
	struct srv_error err;
	srv_error_clear(&err);
	struct srv_status_what w = {0};
	if (res->terminating) {
		json_decref(obj);
		terminating_405(r, res);
		return;
	}
	json_t *m = json_object_get(obj, "metadata");
	/* namespace reconciliation */
	const char *bns = json_string_value(json_object_get(m, "namespace"));
	if (res->namespaced) {
		if (bns && *bns && strcmp(bns, ns)) {
			json_decref(obj);
			srv_reply_fail(r, LP_E_BADREQUEST,
				       "the namespace of the provided object does not match the namespace sent on the request");
			return;
		}
		json_object_set_new(m, "namespace", json_string(ns));
	} else {
		json_object_del(m, "namespace");
	}
	const char *name = json_string_value(json_object_get(m, "name"));
	const char *gen = json_string_value(json_object_get(m, "generateName"));
	char gname[320];
	bool generated = false;
	if ((!name || !*name) && gen && *gen) {
		gen_name(gen, gname, sizeof gname);
		json_object_set_new(m, "name", json_string(gname));
		generated = true;
	}
	name = json_string_value(json_object_get(m, "name"));
	/* admission names a nameless object "Unknown" (kube's admission
	   errors.go); validation names it "" */
	const char *for_msgs = name && *name ? name : (gen ? gen : "Unknown");
	/* an empty name points at the literal: omit_empty drops the empty
	   member and frees its string */
	const char *val_name = name && *name ? name : "";
	/* admission runs before the name is generated: it sees the prefix */
	if (check_namespace(r, res, ns, generated ? gen : for_msgs, true, &err,
			    &w)) {
		srv_reply_error(r, &err, &w);
		json_decref(obj);
		return;
	}
	const char *rvs = json_string_value(json_object_get(m, "resourceVersion"));
	int64_t rvn = 0;
	/* refused by the storage, after validation */
	bool rv_set = rvs && parse_i64(rvs, &rvn) && rvn != 0 && !dry;
	/* a dry run answers the object as sent, its resourceVersion too
	   (kube's DryRunnableStorage copies it; no store refuses it) */
	char rv_echo[64] = "";
	if (dry && rvs && strlen(rvs) < sizeof rv_echo && json_plain_ascii(rvs))
		snprintf(rv_echo, sizeof rv_echo, "%s", rvs);
	json_object_del(m, "resourceVersion");
	json_object_del(m, "deletionTimestamp");
	json_object_del(m, "deletionGracePeriodSeconds");
	stamp_new(m);
	if (is_namespaces(res) && name) {
		json_t *labels = json_object_get(m, "labels");
		if (!json_is_object(labels)) {
			labels = json_object();
			json_object_set_new(m, "labels", labels);
		}
		json_object_set_new(labels, "kubernetes.io/metadata.name",
				    json_string(name));
	}
	omit_empty(res, obj);
	dedup_owner_refs(r, obj, false);
	/* kube's validators append the type's causes to ObjectMeta's:
	   one 422 holds both */
	validate_meta(res, obj, &err);
	if ((res->prepare && res->prepare(res, obj, NULL, &err)) ||
	    (res->custom && cr_schema(r, res, obj, NULL, val_name, &err)) ||
	    invalid_from_causes(res, val_name, &err) ||
	    (!tracked && track_update(r, res, NULL, NULL, obj, &err) &&
	     (invalid_from_causes(res, val_name, &err), true))) {
		fail_res(r, res, val_name, &err);
		json_decref(obj);
		return;
	}
	type_warnings(r, res, obj, NULL);
	if (rv_set) {
		json_decref(obj);
		/* the storage's plain error (etcd3's Create), once the object
		   passed validation: kube's 500 without a reason */
		srv_error_set(&err, LP_E_IO,
			      "resourceVersion should not be set on objects to "
			      "be created");
		err.no_reason = true;
		srv_reply_error(r, &err, NULL);
		return;
	}
	eng *e = srv_engine(r->s);
	struct eng_cmp cmp = {ENG_CMP_ABSENT, 0};
	char *out = NULL;
	size_t out_len = 0;
	lp_err rc = LP_OK;
	/* the CRD's finalizer waits for creates past this point before its
	   last look at the instances */
	bool fenced = res->crd && !dry, bad_key = false;
	if (fenced && !srv_crd_enter(res)) {
		json_decref(obj);
		terminating_405(r, res);
		return;
	}
	for (int attempt = 0; attempt < WRITE_RETRIES; attempt++) {
		struct reg_key k;
		name = json_string_value(json_object_get(m, "name"));
		if (key_of(res, ns, name, &k, &err)) {
			bad_key = true;
			break;
		}
		if (dry && (strcmp(res->resource, "services") || res->group[0])) {
			/* a dry run still sees an existing name */
			struct reg_obj c = {0};
			if (reg_get(e, &k, &c) == LP_OK) {
				reg_obj_free(&c);
				rc = LP_E_EXISTS;
			} else {
				rc = reg_put(e, &k, obj, &cmp, true, rv_echo,
					     &out, &out_len, NULL);
			}
		} else {
			struct reg_obj c = {0};
			if (dry && reg_get(e, &k, &c) == LP_OK) {
				reg_obj_free(&c);
				rc = LP_E_EXISTS;
			} else if (!strcmp(res->resource, "services") && !res->group[0]) {
				/* a dry run allocates as kube's does: shown,
				   checked, not reserved */
				rc = create_service(r, &k, obj, dry, &out, &out_len,
						    &err);
				if (rc == LP_E_INVALID) {
					invalid_from_causes(res, name, &err);
					fail_res(r, res, name, &err);
					json_decref(obj);
					return;
				}
			} else if (is_crd(res)) {
				/* one fsync for the CRD and its status, the
				   serving map updated: no after_write */
				rc = srv_crd_create(e, &k, obj, &out, &out_len);
				r->write_hooked = rc == LP_OK;
			} else {
				rc = reg_put(e, &k, obj, &cmp, false, NULL, &out,
					     &out_len, NULL);
			}
		}
		if (rc != LP_E_EXISTS || !generated)
			break;
		if (attempt == WRITE_RETRIES - 1)
			break; /* name stays the last one tried */
		gen_name(gen, gname, sizeof gname);
		json_object_set_new(m, "name", json_string(gname));
	}
	if (fenced)
		srv_crd_leave(res);
	if (bad_key) {
		fail_res(r, res, name, &err);
		json_decref(obj);
		return;
	}
	if (rc == LP_E_EXISTS) {
		/* kube's AlreadyExists variants: an object on its way out,
		   or every generated name taken */
		char gr[320];
		srv_resource_gr(res, gr, sizeof gr);
		struct reg_key k;
		struct reg_obj c = {0};
		bool deleting = false;
		if (!key_of(res, ns, name, &k, &err) && reg_get(e, &k, &c) == LP_OK &&
		    reg_obj_decode(&c) == LP_OK)
			deleting = meta_str(c.obj, "deletionTimestamp") != NULL;
		reg_obj_free(&c);
		srv_error_clear(&err);
		srv_error_set(&err, LP_E_EXISTS, "%s%s \"%s\" already exists%s",
			      deleting ? "object is being deleted: " : "", gr,
			      name ? name : "",
			      generated ? ", the server was not able to generate a unique name for the object" : "");
		err.retry_soon = generated;
		fail_res(r, res, name, &err);
		json_decref(obj);
		return;
	}
	if (rc) {
		if (!(err.code == rc && err.anonymous))
			storage_err(res, name, rc, &err);
		fail_res(r, res, name, &err);
		json_decref(obj);
		return;
	}
	snprintf(r->created, sizeof r->created, "%s", name ? name : "");
	json_decref(obj);
	if (dry)
		drop_empty_rv(out, &out_len);
	reply_stored(r, res, 201, out, out_len);
}

/* ------------------------------------------------------------ update */

/*
 * The shared tail of update, patch and the subresources: given the object
 * the client wants (obj, taken) and the current one, apply the strategy and
 * write with a compare on cur->mod. Replies. Returns LP_E_CONFLICT without
 * replying when retry is set and the write raced (patch retries).
 */
enum upd_kind { UPD_MAIN, UPD_STATUS, UPD_FINALIZE };

/* kube's ValidateNamespaceFinalizeUpdate: each of a namespace's
   spec.finalizers a qualified name, a bare one a standard finalizer */
static void finalize_causes(const json_t *ns, struct srv_error *err)
{
	const json_t *f =
	    json_object_get(json_object_get(ns, "spec"), "finalizers");
	size_t fi;
	json_t *fv;
	json_array_foreach(f, fi, fv)
	{
		const char *fs = json_string_value(fv);
		char ff[48];
		snprintf(ff, sizeof ff, "spec.finalizers[%zu]", fi);
		srv_ns_finalizer_causes(err, ff, fs ? fs : "");
	}
}

/* Are the members of a and b equal in value, but for skip? */
static bool same_members(const json_t *a, const json_t *b, const char *skip,
			 bool (*same)(const char *k, const json_t *x,
				      const json_t *y))
{
	const char *k;
	json_t *v;
	size_t na = 0, nb = 0;
	json_object_foreach((json_t *)a, k, v)
	{
		if (!strcmp(k, skip))
			continue;
		na++;
		const json_t *w = json_object_get(b, k);
		if (!w || !same(k, v, w))
			return false;
	}
	json_object_foreach((json_t *)b, k, v) nb += strcmp(k, skip) != 0;
	return na == nb;
}

static bool same_value(const char *k, const json_t *x, const json_t *y)
{
	(void)k;
	return srv_json_value_eq(x, y);
}

static bool same_top(const char *k, const json_t *x, const json_t *y)
{
	if (!strcmp(k, "metadata"))
		return json_is_object(x) && json_is_object(y) &&
		       same_members(x, y, "resourceVersion", same_value);
	return srv_json_value_eq(x, y);
}

/* An object about to be written equal in value to the stored one: every
   member but apiVersion (a custom resource may be seen in the request's
   version), and metadata but its resourceVersion. */
static bool same_object(const json_t *next, const json_t *old)
{
	return same_members(next, old, "apiVersion", same_top);
}

/* Is next, about to be written, what cur's bytes hold? kube skips a write
   only when its encoding is the stored bytes. Where the read converted the
   stored object or coerced it to newer schemas (decode_current), the
   bytes may be in another version, hold what the schema now prunes or
   lack what it defaults: then an update that changes nothing the client
   sees still rewrites them (a storage version migration's no-op write). */
static bool stored_as(const json_t *next, const struct reg_obj *cur)
{
	json_t *raw = reg_json_load(cur->bytes, cur->len, JSON_ALLOW_NUL, NULL);
	bool same = raw &&
		    srv_json_value_eq(json_object_get(next, "apiVersion"),
				      json_object_get(raw, "apiVersion")) &&
		    same_object(next, raw);
	json_decref(raw);
	return same;
}

/* Entry e without its time (new), for comparing. */
static json_t *untimed(const json_t *e)
{
	json_t *c = json_copy((json_t *)e);
	if (c)
		json_object_del(c, "time");
	return c;
}

/*
 * kube's IgnoreManagedFieldsTimestampsTransformer: when next differs from
 * old in its managedFields' times alone, it takes old's times back, so the
 * write is a no-op (an apply whose merge differs from the live object
 * only until defaulting or normalisation fills it back keeps the
 * revision). Leaves next alone otherwise.
 */
static void keep_old_times(json_t *next, const json_t *old)
{
	json_t *nm =
	    json_object_get(json_object_get(next, "metadata"), "managedFields");
	const json_t *om =
	    json_object_get(json_object_get(old, "metadata"), "managedFields");
	size_t n = json_array_size(nm);
	if (!n || n != json_array_size(om) || json_equal(nm, (json_t *)om))
		return;
	for (size_t i = 0; i < n; i++) {
		json_t *a = untimed(json_array_get(nm, i));
		json_t *b = untimed(json_array_get(om, i));
		bool eq = a && b && json_equal(a, b);
		json_decref(a);
		json_decref(b);
		if (!eq)
			return;
	}
	json_t *saved = json_incref(nm);
	json_object_set_new(json_object_get(next, "metadata"), "managedFields",
			    json_deep_copy(om));
	if (!same_object(next, old))
		json_object_set(json_object_get(next, "metadata"),
				"managedFields", saved);
	json_decref(saved);
}

/* The update pipeline of obj (taken) over cur; patch: obj is a patch's
   result (kube's patcher gives its update no uid precondition, so a uid
   it changes is ValidateObjectMetaUpdate's "field is immutable"). */
static lp_err finish_update(struct srv_req *r, const struct srv_resource *res,
			    const char *ns, const char *name,
			    struct reg_obj *cur, json_t *obj,
			    enum upd_kind kind, bool retry, bool dry,
			    bool tracked, bool patch)
{
	struct srv_error err;
	srv_error_clear(&err);
	/* a patch may have put a NUL in a custom resource's metadata */
	if (nul_refused(res, obj)) {
		srv_reply_fail(r, LP_E_BADREQUEST, "%s", NUL_REFUSED);
		json_decref(obj);
		return LP_E_BADREQUEST;
	}
	json_t *m = json_object_get(obj, "metadata");
	json_t *old = cur->obj;
	json_t *om = json_object_get(old, "metadata");
	/* the body's name and namespace were checked (check_body_name) */
	json_object_set_new(m, "name", json_string(name));
	if (res->namespaced) {
		json_object_set_new(m, "namespace", json_string(ns));
	} else {
		json_object_del(m, "namespace");
	}
	const char *buid = json_string_value(json_object_get(m, "uid"));
	const char *ouid = json_string_value(json_object_get(om, "uid"));
	if (!patch && buid && *buid && ouid && strcmp(buid, ouid)) {
		/* the store's Preconditions.Check, before anything of the
		   update is looked at: a StorageError that
		   interpretUpdateError makes a Conflict */
		char gr[320], key[1024];
		srv_error_set(&err, LP_E_CONFLICT,
			      "Operation cannot be fulfilled on %s \"%s\": StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %s, UID in object meta: %s",
			      srv_resource_gr(res, gr, sizeof gr), name,
			      srv_resource_kube_key(res, ns, name, key,
						    sizeof key),
			      buid, ouid);
		fail_res(r, res, name, &err);
		json_decref(obj);
		return LP_E_CONFLICT;
	}
	/* optimistic concurrency */
	const char *rvs =
	    json_string_value(json_object_get(m, "resourceVersion"));
	uint64_t urv = 0;
	if (rvs && *rvs && rv_parse_as(rvs, &urv, true, "", &err)) {
		/* the store's ObjectResourceVersion: strconv's own error,
		   which kube answers as a plain 500 */
		err.no_reason = true;
		srv_reply_error(r, &err, NULL);
		json_decref(obj);
		return LP_E_IO;
	}
	if (urv) {
		if (urv != (uint64_t)cur->mod) {
			storage_err(res, name, LP_E_CONFLICT, &err);
			fail_res(r, res, name, &err);
			json_decref(obj);
			return LP_E_CONFLICT;
		}
	} else if (!res->unconditional_update) {
		/* kube's store raises this Invalid with the resource, not the
		   kind: "foos.example.com", details.kind "foos" */
		srv_error_cause(&err, "FieldValueInvalid", "metadata.resourceVersion",
				"Invalid value: 0x0: must be specified for an update");
		srv_error_invalid(&err, res->resource, srv_resource_store_group(res),
				  name);
		struct srv_status_what w;
		what_of(res, name, &w);
		srv_reply_error(r, &err, &w);
		json_decref(obj);
		return LP_E_INVALID;
	}
	/* what each endpoint may change */
	json_t *next;
	if (kind == UPD_STATUS && res->custom) {
		/* a custom resource's status strategy takes the stored object
		   whole and the body's status alone (customresource's
		   statusStrategy.PrepareForUpdate); managedFields are the
		   update's own */
		/* kube's decoder defaults the body in the request's version
		   before the strategy takes its status: the stored spec gets
		   no default of that version */
		const struct srv_schema *bs = srv_cr_schema(res);
		if (bs) {
			if (!r->body_pruned) /* a patch's result */
				srv_schema_prune(bs, obj, NULL, NULL);
			if (r->applied)
				srv_schema_default_keep_nulls(bs, obj);
			else
				srv_schema_default(bs, obj);
			r->cr_defaulted = true;
		}
		r->body_pruned = false; /* next is the stored object's copy */
		next = json_deep_copy(old);
		json_t *v = json_object_get(obj, "status");
		if (v)
			json_object_set(next, "status", v);
		else
			json_object_del(next, "status");
		if (tracked) /* server-side apply computed the entries */
			take_managed_fields(next, obj);
		json_decref(obj);
	} else {
		/* a built-in's strategies reset one part and keep the body's
		   metadata, on every endpoint: the main one the status, /status
		   the spec (the namespace, service and CRD status strategies),
		   a namespace's /finalize the status */
		next = obj;
		m = json_object_get(next, "metadata");
		/* server-owned fields come from the stored object (kube's
		   rest.BeforeUpdate); a uid, deletion timestamp or grace
		   period the update changes is ValidateObjectMetaUpdate's
		   "field is immutable" */
		meta_immutables(m, om, &err);
		static const char *const keep[] = {"uid", "creationTimestamp",
						   "deletionTimestamp",
						   "deletionGracePeriodSeconds",
						   "generation"};
		for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
			json_t *v = json_object_get(om, keep[i]);
			if (v)
				json_object_set(m, keep[i], v);
			else
				json_object_del(m, keep[i]);
		}
		const char *reset = NULL;
		if (kind == UPD_STATUS)
			reset = "spec";
		else if (kind == UPD_FINALIZE ||
			 srv_resource_has_sub(res, "status"))
			reset = "status";
		if (reset) {
			json_t *ov = json_object_get(old, reset);
			if (ov)
				json_object_set(next, reset, ov);
			else
				json_object_del(next, reset);
		}
		if (kind == UPD_FINALIZE) {
			finalize_causes(next, &err);
			/* a Namespace's spec is a struct: Go writes {} for
			   a body without one */
			if (!json_is_object(json_object_get(next, "spec"))) {
				json_object_set_new(next, "spec",
						    json_object());
				/* in its place, before status */
				json_t *st = json_incref(
				    json_object_get(next, "status"));
				if (st) {
					json_object_del(next, "status");
					json_object_set_new(next, "status", st);
				}
			}
		}
		if (is_namespaces(res)) {
			json_t *labels = json_object_get(m, "labels");
			if (!json_is_object(labels)) {
				labels = json_object();
				json_object_set_new(m, "labels", labels);
			}
			json_object_set_new(labels, "kubernetes.io/metadata.name",
					    json_string(name));
		}
	}
	m = json_object_get(next, "metadata");
	/* no new finalizers once deleting */
	if (json_object_get(om, "deletionTimestamp")) {
		json_t *nf = json_object_get(m, "finalizers");
		json_t *of = json_object_get(om, "finalizers");
		size_t i;
		json_t *f;
		json_array_foreach(nf, i, f)
		{
			bool found = false;
			size_t j;
			json_t *g;
			json_array_foreach(of, j, g) found = found || json_equal(f, g);
			if (!found) {
				srv_error_cause(&err, "FieldValueForbidden", "metadata.finalizers",
						"Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"%.200s\"}",
						json_string_value(f) ? json_string_value(f) : "");
				break;
			}
		}
	}
	/* managedFields: [] is kube's reset (isResetManagedFields: a
	   non-nil empty list), as [{}] is; the encoding's omitempty below
	   would drop it before the field manager sees it */
	json_t *sent_mf = json_object_get(m, "managedFields");
	if (json_is_array(sent_mf) && !json_array_size(sent_mf))
		json_array_append_new(sent_mf, json_object());
	omit_empty(res, next);
	dedup_owner_refs(r, next, patch);
	validate_meta(res, next, &err);
	/* a custom resource is pruned and defaulted before its strategy
	   compares it with the stored object, as kube's decoder defaults it
	   before PrepareForUpdate: an update that leaves out a default is
	   no change (and no new generation); the type's causes follow
	   ObjectMeta's in one 422 */
	if ((res->custom && kind != UPD_FINALIZE && cr_schema(r, res, next, old, name, &err)) ||
	    (kind == UPD_MAIN && res->prepare && res->prepare(res, next, old, &err)) ||
	    (kind == UPD_STATUS && res->prepare_status &&
	     res->prepare_status(res, next, old, &err)) ||
	    invalid_from_causes(res, name, &err) ||
	    (!tracked &&
	     track_update(r, res,
			  kind == UPD_STATUS	 ? "status"
			  : kind == UPD_FINALIZE ? "finalize"
						 : NULL,
			  old, next, &err) &&
	     (invalid_from_causes(res, name, &err), true))) {
		json_decref(next);
		fail_res(r, res, name, &err);
		return err.code;
	}
	if (kind == UPD_MAIN)
		type_warnings(r, res, next, old);
	eng *e = srv_engine(r->s);
	struct reg_key k;
	if (key_of(res, ns, name, &k, &err)) {
		json_decref(next);
		fail_res(r, res, name, &err);
		return err.code;
	}
	/* Deleting and no finalizers left: the update removes the object. */
	json_t *fins = json_object_get(m, "finalizers");
	json_t *specf = json_object_get(json_object_get(next, "spec"), "finalizers");
	bool ns_res = is_namespaces(res);
	if (json_object_get(om, "deletionTimestamp") &&
	    json_array_size(fins) == 0 && (!ns_res || json_array_size(specf) == 0)) {
		lp_err rc =
		    dry ? LP_OK
			: delete_releasing(e, res, &k, cur->mod, old, NULL);
		if (rc == LP_E_CONFLICT && retry) {
			json_decref(next);
			return LP_E_CONFLICT;
		}
		if (rc) {
			storage_err(res, name, rc, &err);
			json_decref(next);
			fail_res(r, res, name, &err);
			return rc;
		}
		char rvt[24];
		snprintf(rvt, sizeof rvt, "%lld", (long long)cur->mod);
		json_object_set_new(m, "resourceVersion", json_string(rvt));
		if (res->custom) {
			/* as kube encodes an unstructured object: every map
			   sorted, managedFields entries too */
			size_t n = 0;
			char *sd = reg_json_dump_sorted(next, &n);
			json_t *sorted =
			    sd ? reg_json_load(sd, n, JSON_ALLOW_NUL, NULL)
			       : NULL;
			free(sd);
			if (sorted) {
				json_decref(next);
				next = sorted;
			}
		}
		reply_json_stored(r, res, 200, next);
		return LP_OK;
	}
	/* A no-op write changes nothing and keeps the revision. An object's
	   maps keep the order they were written in, where kube encodes a
	   built-in in its fields' order and a custom resource's maps
	   sorted: one equal in value to the stored object (defaults placed
	   elsewhere in a map, keys sent in another order, as the Python
	   client sends a read object back) is no change either. */
	/* A custom resource written through another version than its
	   storage one is compared as that version sees it (old is in that
	   form): kube's transformer compares in the request's version, so
	   what only the storage version has (its defaults) is no change. */
	json_t *seen = res->custom ? srv_cr_request_view(res, next) : NULL;
	keep_old_times(seen ? seen : next, old);
	bool same = same_object(seen ? seen : next, old);
	if (!same && !strcmp(res->resource, "services") && !res->group[0]) {
		/* kube compares after its allocator has filled the IP
		   families an update left out (plan_service does that at
		   commit here): with them, an unchanged Service is no write */
		json_t *trial = json_deep_copy(next);
		struct srv_error fe;
		srv_error_clear(&fe);
		json_t *ts = json_object_get(trial, "spec");
		if (json_is_object(ts) &&
		    !srv_service_ip_families(ts, json_object_get(old, "spec"),
					     &fe) &&
		    !fe.n_causes && same_object(trial, old)) {
			same = true;
		}
		json_decref(trial);
	}
	if (same && seen)
		/* the view took the stored times back: so does what is
		   written, should stored_as find a write due */
		json_object_set(
		    json_object_get(next, "metadata"), "managedFields",
		    json_object_get(json_object_get(seen, "metadata"),
				    "managedFields"));
	json_decref(seen);
	if (same && cur->converted && !stored_as(next, cur))
		same = false;
	if (same) {
		json_decref(next);
		char *copy = malloc(cur->len ? cur->len : 1);
		if (!copy) {
			srv_reply_fail(r, LP_E_NOMEM, "out of memory");
			return LP_E_NOMEM;
		}
		memcpy(copy, cur->bytes, cur->len);
		reply_stored(r, res, 200, copy, cur->len);
		return LP_OK;
	}
	char rvt[24];
	snprintf(rvt, sizeof rvt, "%lld", (long long)cur->mod);
	struct eng_cmp cmp = {ENG_CMP_MOD, cur->mod};
	char *out = NULL;
	size_t out_len = 0;
	bool unchanged;
	lp_err rc;
	if (is_crd(res) && !dry) {
		/* The no-op check only (one encoding, nothing written); a
		   change is written with the CRD's naming decision: one fsync
		   for the CRD and its status, the serving map updated, no
		   after_write. */
		rc = reg_put_changed(e, &k, next, &cmp, true, rvt, cur,
				     &unchanged, &out, &out_len);
		if (rc == LP_OK && !unchanged) {
			free(out);
			out = NULL;
			rc = srv_crd_update(e, &k, next, cur->mod, &out, &out_len);
			r->write_hooked = rc == LP_OK;
		}
	} else {
		bool planned = false;
		rc = LP_OK;
		if (!strcmp(res->resource, "services") && !res->group[0])
			rc = update_service(r, &k, next, old, &cmp, dry, &planned,
					    &out, &out_len, &err);
		if (rc == LP_E_INVALID) {
			json_decref(next);
			invalid_from_causes(res, name, &err);
			fail_res(r, res, name, &err);
			return rc;
		}
		if (!rc && !planned)
			rc = reg_put_changed(e, &k, next, &cmp, dry, rvt, cur,
					     &unchanged, &out, &out_len);
	}
	json_decref(next);
	if (rc == LP_E_CONFLICT && retry)
		return LP_E_CONFLICT;
	if (rc) {
		if (!(err.code == rc && err.anonymous))
			storage_err(res, name, rc, &err);
		fail_res(r, res, name, &err);
		return rc;
	}
	reply_stored(r, res, 200, out, out_len);
	return LP_OK;
}

static enum upd_kind upd_kind_of(const char *sub)
{
	if (!strcmp(sub, "status"))
		return UPD_STATUS;
	if (!strcmp(sub, "finalize"))
		return UPD_FINALIZE;
	return UPD_MAIN;
}

static void do_update(struct srv_req *r, const struct srv_resource *res,
		      const char *ns, const char *name, const char *sub)
{
	struct srv_error err;
	srv_error_clear(&err);
	struct srv_status_what w = {0};
	char mtb[128];
	const char *mt = media_type(r, mtb, sizeof mtb);
	bool dry;
	json_t *obj = NULL;
	struct srv_strict strict = {.mode = fv_of(r)};
	bool type_bad = false;
	if (dry_run(r, &dry, &err) || field_validation(r, &err) ||
	    field_manager_ok(r, "UpdateOptions", &err) ||
	    decode_body(r, mt, res, &strict, &obj, &err) ||
	    body_fields(r, res, mt, obj, &strict, &err) ||
	    (type_bad =
		 check_type_of(r, false, false, res, obj, &err) != LP_OK) ||
	    strict_finish(r, res, &strict, NULL, &err)) {
		srv_strict_free(&strict);
		json_decref(obj);
		/* a kind kube's strategy refuses names the object, as on
		   create */
		if (type_bad && err.code == LP_E_INVALID)
			fail_res(r, res, name, &err);
		else
			srv_reply_error(r, &err, NULL);
		return;
	}
	if (check_body_name(r, obj, ns, name)) {
		json_decref(obj);
		return;
	}
	if (check_namespace(r, res, ns, name, false, &err, &w)) {
		srv_reply_error(r, &err, &w);
		json_decref(obj);
		return;
	}
	if (res->view)
		res->view->to_stored(obj);
	/* An update without a resourceVersion is unconditional: a write that
	   races it is not the client's conflict, so it is re-applied on the
	   new current object (kube's GuaranteedUpdate retries the same way). */
	const char *brv = meta_str(obj, "resourceVersion");
	bool uncond = !brv || !*brv || !strcmp(brv, "0");
	struct reg_key k;
	if (key_of(res, ns, name, &k, &err)) {
		json_decref(obj);
		fail_res(r, res, name, &err);
		return;
	}
	/* kube retries such an update for as long as it races; the bound only
	   keeps a pathological storm from spinning a worker forever. */
	int tries = uncond ? UNCOND_UPDATE_RETRIES : 1;
	for (int attempt = 0; attempt < tries && !r->answered; attempt++) {
		struct reg_obj c = {0};
		lp_err rc = reg_get(srv_engine(r->s), &k, &c);
		if (rc == LP_E_NOTFOUND && res->create_on_update && !sub[0]) {
			/* kube's Store.Update of a missing object whose
			   strategy allows it: created from the body (named
			   as the URL, checked above; its resourceVersion
			   ignored), 201 */
			json_t *m = json_object_get(obj, "metadata");
			json_object_del(m, "resourceVersion");
			json_object_del(m, "generateName");
			create_object(r, res, ns, json_incref(obj), dry, false);
			break;
		}
		if (rc || (rc = decode_current(res, &c, &err))) {
			storage_err(res, name, rc, &err);
			reg_obj_free(&c);
			fail_res(r, res, name, &err);
			break;
		}
		bool last = attempt == tries - 1;
		json_t *o = uncond && !last ? json_deep_copy(obj) : json_incref(obj);
		rc = finish_update(r, res, ns, name, &c, o, upd_kind_of(sub),
				   uncond && !last, dry, false, false);
		reg_obj_free(&c);
		if (rc != LP_E_CONFLICT || !uncond)
			break;
	}
	json_decref(obj);
}

/* ------------------------------------------------------------ patch */

/* What a patch's 422 shows: the patch as Go prints a map (a strategic
   merge patch) or the patched object (new; NULL when out of memory). */
static char *patch_shown(bool smp, const json_t *patch, const json_t *next)
{
	if (!smp)
		return reg_json_dump_sorted(next, NULL);
	return srv_go_sprint(patch);
}

/*
 * What kube's decoding of a patch result finds. A built-in's type error
 * comes first and alone (kube: "non-strict errors trump"): 422 on field
 * "patch" with encoding/json's words for a JSON or merge patch, the
 * unstructured converter's for a strategic merge patch (fields.h); so
 * does a custom resource's metadata that does not decode into ObjectMeta
 * (a label that is no string: the decoder's objectmeta.Coerce). Then
 * fieldValidation (kube reports the unknown fields of the patched object,
 * in name order: Go re-encodes it from a map). The value a 422 shows is
 * the patched object for JSON and merge patches and the patch itself, as
 * Go prints a map, for a strategic merge patch. A custom resource's
 * unknown fields come from its schema in finish_update: r->strict_shown
 * (new, freed by the caller after finish_update) carries the value there.
 */
static lp_err patch_fields(struct srv_req *r, const struct srv_resource *res,
			   bool smp, bool merge, bool apply,
			   const json_t *patch, json_t *next,
			   struct srv_error *err)
{
	char gv[300];
	srv_resource_gv(res, gv, sizeof gv);
	struct srv_typeerr te = {0};
	json_t *md = json_object_get(next, "metadata");
	if (!res->custom)
		srv_builtin_typecheck(
		    res->kind, gv, next, true,
		    smp || apply ? SRV_DEC_UNSTRUCTURED : SRV_DEC_JSON, &te);
	else if (json_is_object(md)) /* the decoder's objectmeta.Coerce */
		srv_object_meta_typecheck(md, false, &te);
	if (te.set && apply && !res->custom) {
		/* the field manager converts the merged object to its Go
		   type (toVersioned): the converter's error is a plain one,
		   kube's 500 without a reason */
		const char *ns = meta_str(next, "namespace");
		const char *nm = meta_str(next, "name");
		srv_error_set(err, LP_E_INTERNAL,
			      "failed to convert new object (%s/%s; %s%s, "
			      "Kind=%s) to proper version: unable to convert "
			      "unstructured object to %s%s, Kind=%s: %s",
			      ns ? ns : "", nm ? nm : "",
			      res->group[0] ? "" : "/", gv, res->kind,
			      res->group[0] ? "" : "/", gv, res->kind, te.text);
		err->no_reason = true;
		return err->code;
	}
	if (te.set) {
		char *shown = patch_shown(smp, patch, next);
		lp_err rc =
		    shown ? patch_invalid(shown, te.text, err)
			  : srv_error_set(err, LP_E_NOMEM, "out of memory");
		free(shown);
		return rc;
	}
	struct srv_strict strict = {.mode = fv_of(r)};
	char *shown = NULL;
	/* kube decodes a merge or strategic merge patch into a map first:
	   its repeated keys are duplicate fields, at any depth */
	if ((smp || merge) && strict.mode != SRV_FV_IGNORE)
		srv_builtin_scan_json(NULL, NULL, r->body, r->body_len, &strict);
	else if (json_is_array(patch) && strict.mode != SRV_FV_IGNORE)
		srv_json_patch_scan(r->body, r->body_len, &strict);
	if (strict.mode == SRV_FV_STRICT && !(shown = patch_shown(smp, patch, next))) {
		srv_strict_free(&strict);
		return srv_error_set(err, LP_E_NOMEM, "out of memory");
	}
	if (res->custom) {
		/* the duplicates here, the unknown fields in cr_schema; when
		   Strict refuses the duplicates, kube's patcher adds the
		   decoder's unknown fields after them (patch.go) */
		const struct srv_schema *sch = srv_cr_schema(res);
		if (strict.mode == SRV_FV_STRICT && strict.n && sch &&
		    json_is_object(next)) {
			json_t *copy = json_deep_copy(next);
			if (copy)
				srv_schema_prune(sch, copy, on_unknown,
						 &strict);
			json_decref(copy);
		}
		lp_err rc = strict_finish(r, res, &strict, shown, err);
		free(r->strict_shown);
		r->strict_shown = rc ? NULL : shown;
		if (rc)
			free(shown);
		return rc;
	}
	srv_builtin_prune(res->kind, gv, next, true, &strict);
	lp_err rc = strict_finish(r, res, &strict, shown, err);
	free(shown);
	return rc;
}

/* srv_mf_apply, the manager owning only the configuration's fields its
   type has: kube's structured merge types the configuration first and so
   never owns an unknown field; the fields themselves are dropped,
   reported or refused on the result, as for any write (fieldValidation). */
static lp_err apply_typed(struct srv_mf_op *op, const json_t *live,
			  const json_t *cfg, bool force, json_t **out,
			  struct srv_error *err)
{
	const struct srv_resource *res = op->res;
	json_t *owned = json_deep_copy(cfg);
	if (owned && res->custom) {
		const struct srv_schema *sch = srv_cr_schema(res);
		if (sch)
			srv_schema_prune(sch, owned, NULL, NULL);
	} else if (owned) {
		char gv[300];
		srv_builtin_prune(res->kind, srv_resource_gv(res, gv, sizeof gv),
				  owned, false, NULL);
	}
	op->owned = owned; /* NULL (no memory): all of cfg */
	lp_err rc = srv_mf_apply(op, live, cfg, force, out, err);
	op->owned = NULL;
	json_decref(owned);
	return rc;
}

/* A server-side apply configuration: an object of kind want_kind in
   group version gv (400 "invalid object type" otherwise, as upstream's
   version check), naming the object of the URL if it names one. */
static lp_err apply_config_of(const char *gv, const char *want_kind,
			      const char *name, const json_t *cfg,
			      struct srv_error *err)
{
	const json_t *cm = json_object_get(cfg, "metadata");
	/* kube reads the YAML into a map with sigs.k8s.io/yaml */
	if (cfg && !json_is_object(cfg) && !json_is_null(cfg))
		return srv_error_set(err, LP_E_BADREQUEST,
				     "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal %s into Go value of type map[string]interface {}",
				     reg_go_type(cfg));
	/* null reads as an empty map: no kind, as below (a metadata that
	   is no map is the typed conversion's error, srv_mf_apply) */
	if (!json_is_null(cfg) && !json_is_object(cfg))
		return srv_error_set(
		    err, LP_E_BADREQUEST,
		    "the apply configuration must be an object");
	const char *av = json_string_value(json_object_get(cfg, "apiVersion"));
	const char *kind = json_string_value(json_object_get(cfg, "kind"));
	if (!av || !kind || strcmp(av, gv) || strcmp(kind, want_kind)) {
		const char *slash = av ? strchr(av, '/') : NULL;
		return srv_error_set(err, LP_E_BADREQUEST,
				     "invalid object type: %.*s/%s, Kind=%s",
				     slash ? (int)(slash - av) : 0, av ? av : "",
				     slash ? slash + 1 : (av ? av : ""),
				     kind ? kind : "");
	}
	/* upstream's structured merge refuses a configuration carrying
	   entries (an array, even empty; null or another type is ignored) */
	if (json_is_array(json_object_get(cm, "managedFields")))
		return srv_error_set(err, LP_E_BADREQUEST,
				     "metadata.managedFields must be nil");
	const char *cn = meta_str(cfg, "name");
	if (cn && *cn && strcmp(cn, name))
		return srv_error_set(err, LP_E_BADREQUEST,
				     "the name of the object (%.253s) does not match the name on the URL (%.253s)",
				     cn, name);
	return LP_OK;
}

/* apply_config_of for an object of res. */
static lp_err apply_config_ok(const struct srv_resource *res, const char *name,
			      const json_t *cfg, struct srv_error *err)
{
	char gv[300];
	return apply_config_of(srv_resource_gv(res, gv, sizeof gv), res->kind,
			       name, cfg, err);
}

/* An apply names its field manager, not "": kube's 422 otherwise
   (ValidatePatchOptions). */
static lp_err apply_manager_given(struct srv_req *r, struct srv_error *err)
{
	const char *fm = srv_query(r, "fieldManager");
	if (fm && *fm)
		return LP_OK;
	srv_error_cause(err, "FieldValueRequired", "fieldManager",
			"Required value: is required for apply patch");
	return srv_error_set(err, LP_E_INVALID,
			     "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch");
}

/* An apply's YAML body as JSON into *out, or go-yaml's error as
   sigs.k8s.io/yaml and kube's applyPatcher wrap it. */
static lp_err apply_body(struct srv_req *r, const struct srv_resource *res,
			 json_t **out, struct srv_error *err)
{
	if (!r->body || !r->body_len)
		return srv_error_set(err, LP_E_BADREQUEST,
				     "the request body is empty");
	if (!srv_yaml_to_json(r->body, r->body_len, out, err)) {
		if (!nul_refused(res, *out))
			return LP_OK;
		json_decref(*out);
		*out = NULL;
		srv_error_set(err, LP_E_BADREQUEST, "yaml: %s", NUL_REFUSED);
	}
	if (err->code == LP_E_BADREQUEST) {
		char msg[sizeof err->message];
		snprintf(msg, sizeof msg, "%s", err->message);
		srv_error_set(err, LP_E_BADREQUEST,
			      "error decoding YAML: error converting YAML to JSON: %s",
			      msg);
	}
	return err->code;
}

/* What kube's applyPatcher's strict decoding of an apply body found: read
   once per request (again only to word a repeated key), warned once. */
struct apply_dups {
	bool read, found, warned;
};

/* kube's applyPatcher, once an apply has merged: under Strict or Warn
   (the default) it decodes the body again strictly, and a repeated key is
   its 400 under Strict, one Warning per repeat under Warn. */
static lp_err apply_strict(struct srv_req *r, struct apply_dups *d,
			   struct srv_error *err)
{
	enum srv_fv mode = fv_of(r);
	if (mode == SRV_FV_IGNORE || (d->read && (!d->found || d->warned)))
		return LP_OK;
	d->read = true;
	json_t *tmp = NULL;
	struct srv_error serr;
	srv_error_clear(&serr);
	if (srv_yaml_to_json_strict(r->body, r->body_len, &tmp, &serr) ==
	    LP_OK) {
		json_decref(tmp);
		return LP_OK;
	}
	if (strncmp(serr.message, YAML_DUP_PREFIX, strlen(YAML_DUP_PREFIX)))
		return LP_OK; /* the body decoded before: nothing else */
	d->found = true;
	if (mode == SRV_FV_STRICT)
		return srv_error_set(err, LP_E_BADREQUEST,
				     "error strict decoding YAML: error "
				     "converting YAML to JSON: %s",
				     serr.message);
	struct srv_strict st = {.mode = SRV_FV_WARN};
	srv_strict_add(&st, serr.message);
	strict_warn(r, &st);
	srv_strict_free(&st);
	d->warned = true;
	return LP_OK;
}

static const char *const patch_types[] = {
    "application/json-patch+json", "application/merge-patch+json",
    "application/strategic-merge-patch+json", "application/apply-patch+yaml"};

/* go-restful's match of a PATCH route's Consumes (route.go
   matchesContentType): a comma-separated list, each item up to its ';'
   with blanks trimmed, one of the patch types exactly; none given is
   application/octet-stream. */
static bool restful_consumes(const char *ct)
{
	for (const char *p = ct && *ct ? ct : "application/octet-stream"; p;) {
		const char *end = strchr(p, ','),
			   *stop = end ? end : p + strlen(p);
		const char *semi = memchr(p, ';', (size_t)(stop - p));
		if (semi)
			stop = semi;
		while (p < stop && (*p == ' ' || *p == '\t'))
			p++;
		while (stop > p && (stop[-1] == ' ' || stop[-1] == '\t'))
			stop--;
		for (size_t i = 0; i < sizeof patch_types / sizeof *patch_types;
		     i++)
			if (strlen(patch_types[i]) == (size_t)(stop - p) &&
			    !memcmp(patch_types[i], p, (size_t)(stop - p)))
				return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

static void do_patch(struct srv_req *r, const struct srv_resource *res,
		     const char *ns, const char *name, const char *sub)
{
	struct srv_error err;
	srv_error_clear(&err);
	struct srv_status_what w = {0};
	const char *ct = srv_header(r, "Content-Type");
	/* a built-in's PATCH is a go-restful route: a body of a type it
	   does not consume is its plain 415 (a custom resource's handler
	   has no router in front) */
	if (!res->custom && r->body_len > 0 && !restful_consumes(ct)) {
		srv_error_set(&err, LP_E_UNSUPPORTEDMEDIA,
			      "415: Unsupported Media Type");
		err.generic = true;
		srv_reply_error(r, &err, NULL);
		return;
	}
	/* kube's PatchResource: the type up to the first ';', exactly */
	char mtb[128];
	size_t ml = ct ? strcspn(ct, ";") : 0;
	snprintf(mtb, sizeof mtb, "%.*s", (int)ml, ct ? ct : "");
	const char *mt = mtb;
	enum { P_JSON, P_MERGE, P_SMP, P_APPLY } pt;
	struct apply_dups dups = {0};
	if (!strcmp(mt, patch_types[0]))
		pt = P_JSON;
	else if (!strcmp(mt, patch_types[1]))
		pt = P_MERGE;
	else if (!strcmp(mt, patch_types[2]))
		pt = P_SMP;
	else if (!strcmp(mt, patch_types[3])) {
		pt = P_APPLY;
		r->applied = true;
	} else {
		srv_reply_fail(
		    r, LP_E_UNSUPPORTEDMEDIA,
		    "the body of the request was in an unknown format - "
		    "accepted media types include: "
		    "application/json-patch+json, "
		    "application/merge-patch+json, "
		    "%sapplication/apply-patch+yaml",
		    res->custom ? ""
				: "application/strategic-merge-patch+json, ");
		return;
	}
	bool dry;
	if (dry_run(r, &dry, &err) || field_validation(r, &err)) {
		srv_reply_error(r, &err, NULL);
		return;
	}
	if (pt == P_APPLY && apply_manager_given(r, &err)) {
		srv_reply_error(r, &err, NULL);
		return;
	}
	const char *force_q = srv_query(r, "force");
	if (pt != P_APPLY && force_q) {
		srv_error_cause(&err, "FieldValueForbidden", "force",
				"Forbidden: may not be specified for non-apply patch");
		srv_error_set(&err, LP_E_INVALID,
			      "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch");
		srv_reply_error(r, &err, NULL);
		return;
	}
	/* a *bool query parameter: all but "0" and "false" (any case) is
	   true, as the Python client's force=True */
	bool force = srv_query_bool(force_q);
	if (field_manager_ok(r, "PatchOptions", &err)) {
		srv_reply_error(r, &err, NULL);
		return;
	}
	json_t *patch = NULL;
	if (pt == P_APPLY) {
		if (apply_body(r, res, &patch, &err)) {
			srv_reply_error(r, &err, NULL);
			return;
		}
	} else {
		/* a JSON patch of null or a scalar is decoded (and answered)
		   as Go decodes it into a list of operations */
		json_error_t je;
		char goerr[256];
		size_t nul = res->custom ? JSON_ALLOW_NUL : 0;
		patch = r->body_len ? reg_json_load(r->body, r->body_len,
						    JSON_DECODE_ANY | nul, &je)
				    : NULL;
		if (!patch && body_as_go_reads(r))
			patch = reg_json_load(r->body, r->body_len,
					      JSON_DECODE_ANY | nul, &je);
		if (!patch && !reg_go_json_check(r->body, r->body_len, goerr,
						 sizeof goerr)) {
			/* Go's syntax error, as each of kube's patchers
			   answers it: a strict decoding (Warn, Strict) of a
			   JSON or merge patch prefixes it; json-patch's
			   MergePatch says only ErrBadJSONPatch */
			bool strict = fv_of(r) != SRV_FV_IGNORE;
			if (pt == P_MERGE && !strict)
				srv_reply_fail(r, LP_E_BADREQUEST, "Invalid JSON Patch");
			else
				srv_reply_fail(r, LP_E_BADREQUEST, "%s%s",
					       strict && pt != P_SMP
						   ? "error decoding patch: "
						   : "",
					       goerr);
			return;
		}
		if (!patch) {
			srv_reply_fail(r, LP_E_BADREQUEST,
				       "error decoding patch: %s",
				       json_error_text(&je));
			return;
		}
	}
	/* kube decodes a strategic merge patch, and a merge patch under Warn
	   or Strict validation, into a map first; a merge patch of null or a
	   scalar is json-patch's ErrBadJSONPatch; a strategic one of null
	   decodes to no map, so no change */
	bool merge_map = pt == P_SMP ||
			 (pt == P_MERGE && fv_of(r) != SRV_FV_IGNORE);
	if (merge_map && !json_is_object(patch) && !json_is_null(patch)) {
		srv_reply_fail(r, LP_E_BADREQUEST,
			       "%sjson: cannot unmarshal %s into Go value of type map[string]interface {}",
			       pt == P_MERGE ? "error decoding patch: " : "",
			       reg_go_type(patch));
		json_decref(patch);
		return;
	}
	if (pt == P_MERGE && !json_is_object(patch) && !json_is_array(patch)) {
		srv_reply_fail(r, LP_E_BADREQUEST, "Invalid JSON Patch");
		json_decref(patch);
		return;
	}
	if (pt == P_SMP && json_is_null(patch)) {
		json_decref(patch);
		patch = json_object();
	}
	if (check_namespace(r, res, ns, name, false, &err, &w)) {
		json_decref(patch);
		srv_reply_error(r, &err, &w);
		return;
	}
	char mgr[SRV_MF_MANAGER_BUF], mgv[300];
	struct srv_mf_op op;
	mf_op(r, res, sub, &op, mgr, sizeof mgr, mgv, sizeof mgv);
	if (pt == P_APPLY && apply_config_ok(res, name, patch, &err)) {
		json_decref(patch);
		srv_reply_error(r, &err, NULL);
		return;
	}
	eng *e = srv_engine(r->s);
	struct reg_key k;
	if (key_of(res, ns, name, &k, &err)) {
		json_decref(patch);
		fail_res(r, res, name, &err);
		return;
	}
	for (int attempt = 0; attempt < WRITE_RETRIES; attempt++) {
		struct reg_obj c = {0};
		lp_err rc = reg_get(e, &k, &c);
		if (rc == LP_E_NOTFOUND && pt == P_APPLY && !*sub) {
			/* server-side apply creates what is missing, unless
			   the configuration names a uid (kube's patcher) */
			reg_obj_free(&c);
			const char *uid = json_string_value(json_object_get(
			    json_object_get(patch, "metadata"), "uid"));
			if (uid && *uid) {
				char gr[320];
				srv_error_set(&err, LP_E_CONFLICT,
					      "Operation cannot be fulfilled on %s \"%s\": uid mismatch: the provided object specified uid %s, and no existing object was found",
					      srv_resource_gr(res, gr, sizeof gr),
					      name, uid);
				json_decref(patch);
				fail_res(r, res, name, &err);
				return;
			}
			break;
		}
		if (!rc)
			rc = decode_current(res, &c, &err);
		if (rc) {
			storage_err(res, name, rc, &err);
			reg_obj_free(&c);
			json_decref(patch);
			fail_res(r, res, name, &err);
			return;
		}
		if (res->custom) {
			/* patch the object as the request's version sees it */
			char gv[300];
			json_object_set_new(c.obj, "apiVersion",
					    json_string(srv_resource_gv(res, gv, sizeof gv)));
		}
		/* a view patches its own form of the stored object; an apply
		   to a kind whose versions name fields apart compares the
		   entries in the request's names (mf_rename) */
		json_t *base = c.obj, *served = NULL;
		bool renames =
		    pt == P_APPLY && srv_kind_renames_fields(res->kind);
		if (res->view || renames) {
			served = json_deep_copy(c.obj);
			if (served && res->view)
				res->view->to_served(served);
			if (renames)
				mf_rename(res, served, op.api_version, false);
			base = served ? served : c.obj;
		}
		json_t *next = NULL;
		struct srv_smp_schema schema = {res->smp_list, NULL};
		switch (pt) {
		case P_JSON:
			if (json_is_array(patch) && json_array_size(patch) > 10000) {
				rc = srv_error_set(&err, LP_E_ENTITYTOOLARGE,
						   "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got %zu",
						   json_array_size(patch));
				break;
			}
			rc = srv_json_patch(base, patch, &next, &err);
			break;
		case P_MERGE:
			rc = srv_merge_patch(base, patch, &next, &err);
			break;
		case P_APPLY:
			rc = apply_typed(&op, base, patch, force, &next, &err);
			if (!rc && renames)
				mf_rename(res, next, op.api_version, true);
			if (!rc)
				rc = apply_strict(r, &dups, &err);
			if (rc == LP_E_CONFLICT) {
				json_decref(served);
				reg_obj_free(&c);
				json_decref(patch);
				srv_reply_error(r, &err, NULL);
				return;
			}
			break;
		case P_SMP:
			rc = srv_strategic_merge_patch(base, patch, &schema, &next,
						       &err);
			break;
		}
		if (!rc && !json_is_object(next)) {
			json_decref(next);
			next = NULL;
			srv_error_cause(&err, "FieldValueInvalid", "patch",
					"Invalid value: the patched object is not an object");
			rc = srv_error_set(&err, LP_E_INVALID,
					   "the server rejected our request due to an error in our request");
		}
		if (rc) {
			json_decref(served);
			reg_obj_free(&c);
			json_decref(patch);
			srv_reply_error(r, &err, NULL);
			return;
		}
		/* A patch that names a revision is conditional on it. */
		const char *prv = json_is_object(patch)
					  ? meta_str(patch, "resourceVersion")
					  : NULL;
		/* One that leaves the revision it read is on the current
		   one; one that removes it is unconditional, which only the
		   kinds whose strategy allows it take (kube's store: "must be
		   specified for an update"). */
		if (pt == P_JSON || !prv) {
			char rvt[24];
			snprintf(rvt, sizeof rvt, "%lld", (long long)c.mod);
			const char *nrv = meta_str(next, "resourceVersion");
			const char *brv = meta_str(base, "resourceVersion");
			if (nrv && !strcmp(nrv, brv ? brv : ""))
				json_object_set_new(json_object_get(next, "metadata"),
						    "resourceVersion", json_string(rvt));
		}
		json_decref(served);
		bool fields_bad =
		    patch_fields(r, res, pt == P_SMP, pt == P_MERGE,
				 pt == P_APPLY, patch, next, &err) != LP_OK;
		if (fields_bad || patched_type(res, next, pt == P_SMP, &err) ||
		    check_type_of(NULL, pt != P_SMP, pt == P_MERGE, res, next,
				  &err)) {
			reg_obj_free(&c);
			json_decref(next);
			json_decref(patch);
			/* a kind kube's strategy refuses names the object,
			   as on create */
			if (!fields_bad && err.code == LP_E_INVALID)
				fail_res(r, res, name, &err);
			else
				srv_reply_error(r, &err, NULL);
			return;
		}
		/* kube's patcher runs checkName on the patched object: a
		   patch that takes its name away (metadata null, a JSON patch
		   removing /metadata) is a mismatch too */
		if (check_body_name(r, next, ns, name)) {
			reg_obj_free(&c);
			json_decref(next);
			json_decref(patch);
			return;
		}
		if (res->view)
			res->view->to_stored(next);
		rc = finish_update(r, res, ns, name, &c, next, upd_kind_of(sub),
				   !prv, dry, pt == P_APPLY, true);
		free(r->strict_shown);
		r->strict_shown = NULL;
		reg_obj_free(&c);
		if (rc != LP_E_CONFLICT || prv)
			break;
		if (attempt == WRITE_RETRIES - 1) {
			storage_err(res, name, LP_E_CONFLICT, &err);
			fail_res(r, res, name, &err);
		}
		if (r->answered)
			break;
	}
	if (!r->answered && pt == P_APPLY) {
		/* create from the applied configuration */
		json_t *obj = NULL;
		lp_err rc = apply_typed(&op, NULL, patch, force, &obj, &err);
		if (!rc)
			rc = apply_strict(r, &dups, &err);
		const char *cn = meta_str(patch, "name");
		if (!rc && (!cn || !*cn))
			/* merged into an empty object, the configuration
			   names nothing: kube's checkName */
			rc = srv_error_set(
			    &err, LP_E_BADREQUEST,
			    "the name of the object (%.253s based on URL) was "
			    "undeterminable: name must be provided",
			    name);
		if (!rc && (rc = patch_fields(r, res, false, false, true, patch,
					      obj, &err)) == LP_OK)
			rc = check_type(res, obj, &err);
		free(r->strict_shown);
		r->strict_shown = NULL;
		if (rc) {
			json_decref(obj);
			json_decref(patch);
			srv_reply_error(r, &err, NULL);
			return;
		}
		json_t *m = json_object_get(obj, "metadata");
		json_object_set_new(m, "name", json_string(name));
		json_object_del(m, "resourceVersion");
		if (res->view)
			res->view->to_stored(obj);
		create_object(r, res, ns, obj, dry, true);
	}
	json_decref(patch);
}

/* ------------------------------------------------------------ delete */

struct del_opts {
	const char *policy; /* Orphan, Background, Foreground or NULL */
	const char *pre_uid;
	const char *pre_rv;
	bool dry;
	bool keep_202; /* orphanDependents=false given: 202 if not gone */
	json_t *body; /* owns the strings above when from the body */
};

/* kube's 422 for orphanDependents beside propagationPolicy (the policy is
   the value shown). */
static lp_err both_set(const char *policy, struct srv_error *err)
{
	srv_error_cause(err, "FieldValueInvalid", "propagationPolicy",
			"Invalid value: \"%.32s\": orphanDependents and deletionPropagation cannot be both set",
			policy);
	return srv_error_set(err, LP_E_INVALID,
			     "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Invalid value: \"%.32s\": orphanDependents and deletionPropagation cannot be both set",
			     policy);
}

static lp_err delete_opts(struct srv_req *r, struct del_opts *o,
			  struct srv_error *err)
{
	memset(o, 0, sizeof *o);
	if (r->body && r->body_len) {
		char mtb[128];
		const char *mt = media_type(r, mtb, sizeof mtb);
		json_t *b = NULL;
		lp_err rc = decode_body(r, mt, NULL, NULL, &b, err);
		if (rc)
			return rc;
		/* kube decodes the body with the meta scheme, which knows
		   DeleteOptions (in any group version, for old clients) and
		   no other kind: 400 for the rest */
		const char *kind = json_string_value(json_object_get(b, "kind"));
		if (kind && *kind && strcmp(kind, "DeleteOptions")) {
			const char *av =
			    json_string_value(json_object_get(b, "apiVersion"));
			srv_error_set(err, LP_E_BADREQUEST,
				      "no kind \"%.64s\" is registered for version \"%.64s\" in scheme \"k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme/register.go:28\"",
				      kind, av ? av : "");
			json_decref(b);
			return LP_E_BADREQUEST;
		}
		/* a member of the wrong type: kube's NewBadRequest of the
		   decoding error, before anything is deleted (a string
		   dryRun, a number for propagationPolicy) */
		struct srv_typeerr te;
		if (!srv_delete_options_typecheck(b, &te)) {
			srv_error_set(err, LP_E_BADREQUEST, "%s", te.text);
			json_decref(b);
			return LP_E_BADREQUEST;
		}
		o->body = b;
		o->policy = json_string_value(json_object_get(b, "propagationPolicy"));
		json_t *pre = json_object_get(b, "preconditions");
		o->pre_uid = json_string_value(json_object_get(pre, "uid"));
		o->pre_rv = json_string_value(json_object_get(pre, "resourceVersion"));
		json_t *od = json_object_get(b, "orphanDependents");
		if (json_is_boolean(od) && o->policy)
			return both_set(o->policy, err);
		if (json_is_true(od))
			o->policy = "Orphan";
		o->keep_202 = json_is_false(od);
		json_t *dr = json_object_get(b, "dryRun");
		/* as the query's: every value counted, the first 8 kept */
		const char *d[8];
		size_t nd = json_array_size(dr);
		for (size_t i = 0; i < nd && i < 8; i++) {
			const char *v = json_string_value(json_array_get(dr, i));
			d[i] = v ? v : "";
		}
		lp_err drc = dry_run_values(r, d, nd, &o->dry, err);
		if (drc)
			return drc;
	} else {
		o->policy = srv_query(r, "propagationPolicy");
		const char *od = srv_query(r, "orphanDependents");
		const char *gp = srv_query(r, "gracePeriodSeconds");
		int64_t ignored;
		if (gp && int_param(gp, &ignored, err))
			return err->code;
		if (od && o->policy)
			return both_set(o->policy, err);
		if (od && srv_query_bool(od))
			o->policy = "Orphan";
		o->keep_202 = od && !srv_query_bool(od);
		lp_err rc = dry_run(r, &o->dry, err);
		if (rc)
			return rc;
	}
	if (o->policy && strcmp(o->policy, "Orphan") &&
	    strcmp(o->policy, "Background") && strcmp(o->policy, "Foreground")) {
		srv_error_cause(err, "FieldValueNotSupported", "propagationPolicy",
				"Unsupported value: \"%.32s\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"",
				o->policy);
		return srv_error_set(err, LP_E_INVALID,
				     "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"%.32s\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"",
				     o->policy);
	}
	return LP_OK;
}

static void set_finalizer(json_t *m, const char *f, bool on)
{
	json_t *a = json_object_get(m, "finalizers");
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v)
	{
		if (json_is_string(v) && !strcmp(json_string_value(v), f)) {
			if (!on)
				json_array_remove(a, i);
			return;
		}
	}
	if (!on)
		return;
	if (!json_is_array(a)) {
		a = json_array();
		json_object_set_new(m, "finalizers", a);
	}
	json_array_append_new(a, json_string(f));
}

/*
 * Delete one object. On success *reply is what to answer (new): the object
 * marked for deletion, the deleted object, or a Success Status.
 */
static lp_err delete_one(eng *e, const struct srv_resource *res,
			 const char *ns, const char *name,
			 const struct del_opts *o, json_t **reply, int *code,
			 struct srv_error *err)
{
	struct reg_key k;
	if (key_of(res, ns, name, &k, err))
		return err->code;
	for (int attempt = 0; attempt < WRITE_RETRIES; attempt++) {
		struct reg_obj c = {0};
		lp_err rc = reg_get(e, &k, &c);
		if (!rc)
			rc = reg_obj_decode(&c);
		if (rc) {
			reg_obj_free(&c);
			return storage_err(res, name, rc, err);
		}
		json_t *m = json_object_get(c.obj, "metadata");
		const char *uid = json_string_value(json_object_get(m, "uid"));
		char gk[320];
		const char *sg = srv_resource_store_group(res);
		snprintf(gk, sizeof gk, "%s%s%s", res->kind, sg[0] ? "." : "",
			 sg);
		/* Namespaces and CRDs have a REST delete of their own in
		   kube, which words a failed precondition its own way, on
		   the qualified resource */
		bool own = is_crd(res) || is_namespaces(res);
		char gr[320];
		srv_resource_gr(res, gr, sizeof gr);
		if (o->pre_uid && uid && strcmp(o->pre_uid, uid)) {
			if (own)
				srv_error_set(err, LP_E_CONFLICT,
					      "Operation cannot be fulfilled on %s \"%s\": Precondition failed: UID in precondition: %s, UID in object meta: %s",
					      gr, name, o->pre_uid, uid);
			else
				srv_error_set(err, LP_E_CONFLICT,
					      "Operation cannot be fulfilled on %s \"%s\": the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated",
					      gk, name, o->pre_uid, uid);
			err->on_kind = !own;
			reg_obj_free(&c);
			return LP_E_CONFLICT;
		}
		/* kube compares the precondition as a string: "05" is not "5" */
		char cur_rv[24];
		snprintf(cur_rv, sizeof cur_rv, "%lld", (long long)c.mod);
		if (o->pre_rv && strcmp(o->pre_rv, cur_rv)) {
			if (own)
				srv_error_set(err, LP_E_CONFLICT,
					      "Operation cannot be fulfilled on %s \"%s\": Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in object meta: %lld",
					      gr, name, o->pre_rv, (long long)c.mod);
			else
				srv_error_set(err, LP_E_CONFLICT,
					      "Operation cannot be fulfilled on %s \"%s\": the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%lld). The object might have been modified",
					      gk, name, o->pre_rv, (long long)c.mod);
			err->on_kind = !own;
			reg_obj_free(&c);
			return LP_E_CONFLICT;
		}
		json_t *next = json_deep_copy(c.obj);
		json_t *nm = json_object_get(next, "metadata");
		if (is_crd(res) && atomic_load(&crd_cleanup) &&
		    !json_object_get(nm, "deletionTimestamp"))
			crd_mark_terminating(next);
		bool ns_res = is_namespaces(res);
		/* kube's CRD delete sets only the timestamp, its cleanup
		   finalizer and the Terminating condition; a namespace that
		   already terminates, its spec.finalizers not yet done, is
		   answered as it is (namespace storage.go) */
		bool ns_waits = own && ns_res &&
				json_object_get(nm, "deletionTimestamp") &&
				json_array_size(json_object_get(
				    json_object_get(next, "spec"), "finalizers"));
		/* orphanDependents=false: the generic store neither orphans
		   nor deletes in the foreground (both finalizers go), while
		   the namespace REST takes it for the foreground
		   (shouldHaveDeleteDependentsFinalizer) */
		const char *policy = o->policy;
		if (!policy && o->keep_202)
			policy = ns_res ? "Foreground" : "Background";
		if (policy && !is_crd(res) && !ns_waits) {
			set_finalizer(nm, "orphan", !strcmp(policy, "Orphan"));
			set_finalizer(nm, "foregroundDeletion",
				      !strcmp(policy, "Foreground"));
		}
		size_t nf = json_array_size(json_object_get(nm, "finalizers"));
		if (ns_res)
			nf += json_array_size(json_object_get(
				json_object_get(next, "spec"), "finalizers"));
		if (nf > 0) {
			bool changed = !json_equal(next, c.obj);
			if (!json_object_get(nm, "deletionTimestamp")) {
				char now[32];
				reg_now(now);
				json_object_set_new(nm, "deletionTimestamp", json_string(now));
				/* kube's generic store (markAsDeleting): no grace
				   period and a bumped generation; the own deletes
				   of namespaces and CRDs update the timestamp
				   alone */
				if (!own) {
					json_int_t gen = json_integer_value(
					    json_object_get(nm, "generation"));
					json_object_set_new(
					    nm, "deletionGracePeriodSeconds",
					    json_integer(0));
					if (gen > 0)
						json_object_set_new(
						    nm, "generation",
						    json_integer(gen + 1));
				}
				if (ns_res) {
					json_t *st = json_object_get(next, "status");
					if (!json_is_object(st)) {
						st = json_object();
						json_object_set_new(next, "status", st);
					}
					json_object_set_new(st, "phase", json_string("Terminating"));
				}
				changed = true;
			}
			if (!changed || o->dry) {
				char *out = NULL;
				size_t ol = 0;
				char rvt[24];
				snprintf(rvt, sizeof rvt, "%lld", (long long)c.mod);
				reg_put(e, &k, next, NULL, true, rvt, &out, &ol, NULL);
				json_decref(next);
				reg_obj_free(&c);
				*reply =
				    out ? reg_json_load(out, ol, JSON_ALLOW_NUL,
							NULL)
					: NULL;
				free(out);
				/* kube: 202 only when orphanDependents=false
				   was given and the object stays */
				*code = o->keep_202 ? 202 : 200;
				return LP_OK;
			}
			struct eng_cmp cmp = {ENG_CMP_MOD, c.mod};
			char *out = NULL;
			size_t ol = 0;
			rc = reg_put(e, &k, next, &cmp, false, NULL, &out, &ol, NULL);
			json_decref(next);
			reg_obj_free(&c);
			if (rc == LP_E_CONFLICT && !o->pre_rv)
				continue;
			if (rc)
				return storage_err(res, name, rc, err);
			*reply = reg_json_load(out, ol, JSON_ALLOW_NUL, NULL);
			free(out);
			*code = o->keep_202 ? 202 : 200;
			return LP_OK;
		}
		json_decref(next);
		if (!o->dry && res->before_delete &&
		    (rc = res->before_delete(e, c.obj))) {
			reg_obj_free(&c);
			return storage_err(res, name, rc, err);
		}
		int64_t del_rev = 0;
		rc = o->dry
			 ? LP_OK
			 : delete_releasing(e, res, &k, c.mod, c.obj, &del_rev);
		if (rc == LP_E_CONFLICT && !o->pre_rv) {
			reg_obj_free(&c);
			continue;
		}
		if (rc) {
			reg_obj_free(&c);
			return storage_err(res, name, rc, err);
		}
		if (res->return_deleted) {
			/* kube's store decodes the deleted object at the
			   delete's revision (as its DELETED event has it) */
			*reply = json_incref(c.obj);
			if (del_rev > 0) {
				char rvt[24];
				snprintf(rvt, sizeof rvt, "%lld",
					 (long long)del_rev);
				json_object_set_new(
				    json_object_get(c.obj, "metadata"),
				    "resourceVersion", json_string(rvt));
			}
		} else {
			struct srv_status_what w = {.name = name, .group = srv_resource_store_group(res),
						    .kind = res->resource, .uid = uid};
			*reply = srv_status_success(&w);
		}
		reg_obj_free(&c);
		*code = 200;
		return LP_OK;
	}
	return storage_err(res, name, LP_E_CONFLICT, err);
}

/* ------------------------------------------------------------ controllers */

lp_err srv_delete_object(eng *e, const struct srv_resource *res,
			 const char *ns, const char *name, const char *uid,
			 const char *policy)
{
	struct del_opts o = {.policy = policy, .pre_uid = uid};
	struct srv_error err;
	srv_error_clear(&err);
	json_t *reply = NULL;
	int code = 0;
	lp_err rc = delete_one(e, res, ns, name, &o, &reply, &code, &err);
	json_decref(reply);
	if (rc == LP_OK && res->after_write)
		res->after_write(e, name);
	return rc;
}

/* Whether obj, being deleted, has no finalizer left to wait for. */
static bool nothing_holds(const struct srv_resource *res, const json_t *obj)
{
	json_t *m = json_object_get(obj, "metadata");
	if (json_array_size(json_object_get(m, "finalizers")) > 0)
		return false;
	return !is_namespaces(res) ||
	       json_array_size(json_object_get(json_object_get(obj, "spec"),
					       "finalizers")) == 0;
}

lp_err srv_mutate_object(eng *e, const struct srv_resource *res,
			 const char *ns, const char *name, const char *uid,
			 const char *manager, const char *subresource,
			 bool (*fn)(json_t *obj, void *arg), void *arg)
{
	struct srv_error err;
	srv_error_clear(&err);
	struct reg_key k;
	if (key_of(res, ns, name, &k, &err))
		return err.code;
	for (int attempt = 0; attempt < WRITE_RETRIES; attempt++) {
		struct reg_obj c = {0};
		lp_err rc = reg_get(e, &k, &c);
		if (!rc)
			rc = reg_obj_decode(&c);
		const char *cuid = rc ? NULL : meta_str(c.obj, "uid");
		if (!rc && uid && (!cuid || strcmp(cuid, uid)))
			rc = LP_E_CONFLICT;
		json_t *next = rc ? NULL : json_deep_copy(c.obj);
		if (!rc && !next)
			rc = LP_E_NOMEM;
		if (rc || !fn(next, arg)) {
			json_decref(next);
			reg_obj_free(&c);
			return rc;
		}
		if (manager) {
			/* as kube's controller writes it: what it removed
			   leaves every entry, what it set is its own */
			char gv[300];
			struct srv_mf_op op = {
			    .res = res,
			    .manager = manager,
			    .api_version = srv_resource_store_gv(res, gv, sizeof gv),
			    .subresource = subresource};
			rc = srv_mf_update(&op, c.obj, next, &err);
			if (rc) {
				json_decref(next);
				reg_obj_free(&c);
				return rc;
			}
		}
		if (meta_str(next, "deletionTimestamp") && nothing_holds(res, next)) {
			if (res->before_delete)
				rc = res->before_delete(e, c.obj);
			if (!rc)
				rc = delete_releasing(e, res, &k, c.mod, c.obj,
						      NULL);
		} else {
			struct eng_cmp cmp = {ENG_CMP_MOD, c.mod};
			char *out = NULL;
			size_t ol = 0;
			rc = reg_put(e, &k, next, &cmp, false, NULL, &out, &ol, NULL);
			free(out);
		}
		json_decref(next);
		reg_obj_free(&c);
		if (rc == LP_E_CONFLICT)
			continue;
		if (rc == LP_OK && res->after_write)
			res->after_write(e, name);
		return rc;
	}
	return LP_E_CONFLICT;
}

static void do_delete(struct srv_req *r, const struct srv_resource *res,
		      const char *ns, const char *name)
{
	struct srv_error err;
	srv_error_clear(&err);
	struct del_opts o;
	if (delete_opts(r, &o, &err)) {
		json_decref(o.body);
		srv_reply_error(r, &err, NULL);
		return;
	}
	if (is_namespaces(res) &&
	    (!strcmp(name, "default") || !strcmp(name, "kube-system") ||
	     !strcmp(name, "kube-public"))) {
		json_decref(o.body);
		struct srv_status_what w = {.name = name, .kind = "namespaces"};
		srv_error_set(&err, LP_E_FORBIDDEN,
			      "namespaces \"%s\" is forbidden: this namespace may not be deleted",
			      name);
		srv_reply_error(r, &err, &w);
		return;
	}
	json_t *reply = NULL;
	int code = 200;
	lp_err rc = delete_one(srv_engine(r->s), res, ns, name, &o, &reply, &code, &err);
	json_decref(o.body);
	if (rc) {
		fail_res(r, res, name, &err);
		return;
	}
	reply_json_stored(r, res, code, reply);
}

int64_t srv_collection_wait_rev(struct srv_req *r)
{
	const char *rv = srv_query(r, "resourceVersion");
	if (!rv || !*rv || r->rev_waited)
		return 0;
	void *hold = NULL;
	const struct srv_resource *res = srv_resource_lookup(
	    r->ri.group, r->ri.version, r->ri.resource, &hold);
	int64_t n = 0;
	if (res) {
		struct srv_error err;
		srv_error_clear(&err);
		struct list_opts o;
		if (!srv_list_opts(r, res, false, &o, &err))
			n = list_waits_for(res, r->ri.ns, &o);
		list_opts_free(&o);
	}
	srv_resources_release(hold);
	return n;
}

static void do_deletecollection(struct srv_req *r, const struct srv_resource *res,
				const char *ns)
{
	struct srv_error err;
	srv_error_clear(&err);
	struct del_opts o;
	struct list_opts lo;
	if (delete_opts(r, &o, &err)) {
		json_decref(o.body);
		srv_reply_error(r, &err, NULL);
		return;
	}
	if (srv_list_opts(r, res, false, &lo, &err)) {
		/* the selectors parsed before the failing one */
		list_opts_free(&lo);
		json_decref(o.body);
		srv_reply_error(r, &err,
				err.code == LP_E_INVALID ? &srv_listopts_what
							 : NULL);
		return;
	}
	json_t *items = json_array();
	struct srv_pagebuf unused = {0};
	struct list_ctx c = {.res = res, .lsel = lo.lsel, .fsel = lo.fsel,
			     .out = &unused, .items = items};
	int64_t rev = 0, remaining;
	char *token = NULL;
	lp_err rc = read_list(srv_engine(r->s), res, ns, &lo, &c, &rev, &token,
			      &remaining, &err);
	srv_pagebuf_free(&unused);
	list_opts_free(&lo);
	if (rc || c.err.code) {
		free(token);
		json_decref(items);
		json_decref(o.body);
		srv_reply_error(r, rc ? &err : &c.err, NULL);
		return;
	}
	size_t i;
	json_t *it;
	json_array_foreach(items, i, it)
	{
		const char *name = meta_str(it, "name");
		const char *ins = meta_str(it, "namespace");
		json_t *reply = NULL;
		int code;
		struct srv_error e2 = {0};
		rc = delete_one(srv_engine(r->s), res, ins ? ins : "", name, &o,
				&reply, &code, &e2);
		json_decref(reply);
		if (rc && rc != LP_E_NOTFOUND) {
			/* before items go: name is one of theirs */
			fail_res(r, res, name, &e2);
			free(token);
			json_decref(items);
			json_decref(o.body);
			return;
		}
	}
	json_decref(o.body);
	char gv[300];
	json_t *list = json_object();
	json_object_set_new(list, "kind", json_string(res->list_kind));
	json_object_set_new(list, "apiVersion",
			    json_string(srv_resource_gv(res, gv, sizeof gv)));
	json_t *lm = json_object();
	char rvt[24];
	snprintf(rvt, sizeof rvt, "%lld", (long long)rev);
	json_object_set_new(lm, "resourceVersion", json_string(rvt));
	/* kube answers the page it listed and deleted, its ListMeta
	   whole: with a limit, the next page's token and count */
	page_meta(lm, token, remaining);
	free(token);
	json_object_set_new(list, "metadata", lm);
	json_object_set_new(list, "items", items);
	/* as a list's: PartialObjectMetadataList or a Table */
	json_t *conv = NULL;
	if (r->neg.out == SRV_OUT_PARTIAL)
		conv = srv_partial_list(&r->neg, items, lm);
	else if (r->neg.out == SRV_OUT_TABLE)
		conv = srv_table(res, &r->neg, items, lm, true);
	if (conv) {
		json_decref(list);
		list = conv;
	} else if (!res->custom) {
		/* a typed list's items, as a list's: no kind nor apiVersion
		   (a custom resource's unstructured items keep theirs) */
		json_array_foreach(items, i, it)
		{
			json_object_del(it, "kind");
			json_object_del(it, "apiVersion");
		}
	}
	srv_reply_json(r, 200, list);
}

/* ------------------------------------------------------------ scale */

/* Set the value at a simple dot path (".spec.replicas"), making objects on
   the way. Takes v. */
static bool set_path(json_t *obj, const char *path, json_t *v)
{
	char buf[256];
	if (!path || path[0] != '.' || strlen(path) >= sizeof buf) {
		json_decref(v);
		return false;
	}
	snprintf(buf, sizeof buf, "%s", path + 1);
	json_t *cur = obj;
	char *s = buf;
	for (char *dot; (dot = strchr(s, '.')); s = dot + 1) {
		*dot = 0;
		json_t *next = json_object_get(cur, s);
		if (!json_is_object(next)) {
			next = json_object();
			json_object_set_new(cur, s, next);
		}
		cur = next;
	}
	return json_object_set_new(cur, s, v) == 0;
}

static json_t *get_path(const json_t *obj, const char *path)
{
	return path ? srv_jsonpath_first(obj, path) : NULL;
}

/* The autoscaling/v1 Scale of a custom resource (new). */
static json_t *scale_of(const json_t *sc, const json_t *obj)
{
	json_t *m = json_object_get(obj, "metadata");
	json_t *s = json_object();
	json_object_set_new(s, "kind", json_string("Scale"));
	json_object_set_new(s, "apiVersion", json_string("autoscaling/v1"));
	json_t *sm = json_object();
	static const char *const keep[] = {"name", "namespace", "uid",
					   "resourceVersion", "creationTimestamp"};
	for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
		json_t *v = json_object_get(m, keep[i]);
		if (v)
			json_object_set(sm, keep[i], v);
	}
	json_object_set_new(s, "metadata", sm);
	json_t *spec = json_object();
	json_t *want = get_path(obj, json_string_value(json_object_get(sc, "specReplicasPath")));
	/* ScaleSpec.replicas is omitempty; ScaleStatus.replicas is not */
	if (json_is_integer(want) && json_integer_value(want))
		json_object_set_new(spec, "replicas", json_integer(json_integer_value(want)));
	json_object_set_new(s, "spec", spec);
	json_t *st = json_object();
	json_t *have = get_path(obj, json_string_value(json_object_get(sc, "statusReplicasPath")));
	json_object_set_new(st, "replicas",
			    json_integer(json_is_integer(have) ? json_integer_value(have) : 0));
	json_t *sel = get_path(obj, json_string_value(json_object_get(sc, "labelSelectorPath")));
	if (json_is_string(sel))
		json_object_set(st, "selector", sel);
	json_object_set_new(s, "status", st);
	return s;
}

/* v as Go's decoder reads it into ScaleSpec.replicas (an int32) into *out
   (absent or null: 0), or false with its UnmarshalTypeError text in msg.
   reencoded: v comes from a patched Scale, which kube encodes again before
   decoding, so that a real with an integral value reads as that integer;
   otherwise (a request's own text) a real never does. */
static bool scale_replicas_of(const json_t *v, bool reencoded, json_int_t *out,
			      char *msg, size_t n)
{
	char num[REG_GO_FLOAT_MAX + 32];
	const char *what;
	*out = 0;
	if (!v || json_is_null(v))
		return true;
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);
		if (i <= 2147483647 && i >= -2147483647 - 1) {
			*out = i;
			return true;
		}
		snprintf(num, sizeof num, "number %lld", (long long)i);
		what = num;
	} else if (json_is_real(v)) {
		double d = json_real_value(v);
		char f[REG_GO_FLOAT_MAX];
		reg_go_float(d, f);
		if (reencoded && !strpbrk(f, ".e") && d <= 2147483647.0 &&
		    d >= -2147483648.0) {
			*out = (json_int_t)d;
			return true;
		}
		snprintf(num, sizeof num, "number %s", f);
		what = num;
	} else {
		what = json_is_string(v)    ? "string"
		       : json_is_boolean(v) ? "bool"
		       : json_is_array(v)   ? "array"
					    : "object";
	}
	snprintf(msg, n,
		 "json: cannot unmarshal %s into Go struct field ScaleSpec.spec.replicas of type int32",
		 what);
	return false;
}

/* A server-side apply of a Scale: the PatchOptions (fieldManager, force)
   and the configuration, an autoscaling/v1 Scale naming the object of the
   URL if it names one, whose replicas, if any, are an int32. */
static lp_err scale_apply_config(struct srv_req *r, const char *name,
				 json_t **cfg, bool *force,
				 struct srv_error *err)
{
	if (apply_manager_given(r, err))
		return err->code;
	if (field_manager_ok(r, "PatchOptions", err))
		return err->code;
	*force = srv_query_bool(srv_query(r, "force"));
	json_t *c = NULL;
	if (apply_body(r, NULL, &c, err))
		return err->code;
	if (apply_config_of("autoscaling/v1", "Scale", name, c, err)) {
		json_decref(c);
		return err->code;
	}
	json_int_t n;
	char why[200];
	if (!scale_replicas_of(
		json_object_get(json_object_get(c, "spec"), "replicas"), false,
		&n, why, sizeof why)) {
		srv_error_set(err, LP_E_BADREQUEST,
			      "Scale in version \"v1\" cannot be handled as a Scale: %s",
			      why);
		json_decref(c);
		return err->code;
	}
	*cfg = c;
	return LP_OK;
}

/* GET, PUT and PATCH of .../scale (reference §8.10). */
static void do_scale(struct srv_req *r, const struct srv_resource *res,
		     const char *ns, const char *name, const char *verb)
{
	struct srv_error err;
	srv_error_clear(&err);
	const json_t *sc = srv_cr_scale(res);
	const struct srv_resource *scale_res = srv_subresource_type("scale");
	eng *e = srv_engine(r->s);
	struct reg_key k;
	if (!sc || key_of(res, ns, name, &k, &err)) {
		not_found_err(res, name, &err);
		fail_res(r, res, name, &err);
		return;
	}
	bool dry;
	if (dry_run(r, &dry, &err)) {
		srv_reply_error(r, &err, NULL);
		return;
	}
	json_t *patch = NULL, *body = NULL, *apply = NULL;
	bool json_patch = false, force = false;
	if (strcmp(verb, "get")) {
		char mtb[128];
		const char *mt = media_type(r, mtb, sizeof mtb);
		if (!strcmp(verb, "patch") &&
		    !strcasecmp(mt, "application/apply-patch+yaml")) {
			if (scale_apply_config(r, name, &apply, &force, &err)) {
				srv_reply_error(r, &err, NULL);
				return;
			}
			goto decoded;
		}
		json_error_t je;
		json_t *in = NULL;
		if (!strcmp(verb, "update")) {
			/* the scale scope's codecs: JSON, YAML or protobuf */
			if (decode_body(r, mt, scale_res, NULL, &in, &err)) {
				srv_reply_error(r, &err, NULL);
				return;
			}
		} else if (r->body_len) {
			in = reg_json_load(r->body, r->body_len,
					   JSON_DECODE_ANY, &je);
		}
		/* a JSON patch is a list of operations (client-node's
		   generated scale patch sends one by default), every other
		   body an object */
		json_patch = !strcmp(verb, "patch") &&
			     !strcasecmp(mt, "application/json-patch+json");
		if (in && !json_patch && !json_is_object(in) &&
		    !strcmp(verb, "patch") &&
		    !strcasecmp(mt, "application/merge-patch+json") &&
		    fv_of(r) != SRV_FV_IGNORE) {
			/* the patcher's strict decoding, as for the main
			   resource (patch_object) */
			srv_reply_fail(
			    r, LP_E_BADREQUEST,
			    "error decoding patch: json: cannot unmarshal %s "
			    "into Go value of type map[string]interface {}",
			    reg_go_type(in));
			json_decref(in);
			return;
		}
		if (json_patch ? !in : !json_is_object(in)) {
			/* (a JSON patch's other shapes are srv_json_patch's
			   to answer, in the main resource's words) */
			json_decref(in);
			srv_reply_fail(r, LP_E_BADREQUEST, "error decoding the request body");
			return;
		}
		if (!strcmp(verb, "patch")) {
			if (strcasecmp(mt, "application/merge-patch+json") &&
			    !json_patch) {
				json_decref(in);
				srv_reply_fail(r, LP_E_UNSUPPORTEDMEDIA,
					       "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml");
				return;
			}
			patch = in;
		} else {
			/* the scale scope's codec knows autoscaling/v1 Scale
			   only: another kind is a decoding error */
			const char *kind =
			    json_string_value(json_object_get(in, "kind"));
			const char *av =
			    json_string_value(json_object_get(in, "apiVersion"));
			/* its scheme registers Scale in autoscaling/v1,
			   extensions/v1beta1 and apps/v1beta1, v1beta2 */
			static const char *const scale_gvs[] = {
			    "autoscaling/v1", "extensions/v1beta1",
			    "apps/v1beta1", "apps/v1beta2"};
			bool gv_known = !av || !*av;
			for (size_t i = 0;
			     !gv_known &&
			     i < sizeof scale_gvs / sizeof *scale_gvs;
			     i++)
				gv_known = !strcmp(av, scale_gvs[i]);
			if ((kind && *kind && strcmp(kind, "Scale")) ||
			    !gv_known) {
				const char *kd = kind && *kind ? kind : "Scale";
				const char *sl = av ? strchr(av, '/') : NULL;
				srv_reply_fail(
				    r, LP_E_BADREQUEST,
				    "%.64s in version \"%.64s\" cannot be "
				    "handled as a Scale: no kind \"%.64s\" is "
				    "registered for version \"%.128s\" in "
				    "scheme \"pkg/runtime/scheme.go:100\"",
				    kd,
				    sl	 ? sl + 1
				    : av ? av
					 : "",
				    kd, av ? av : "");
				json_decref(in);
				return;
			}
			/* the Scale decoder's type errors and fieldValidation,
			   as for any built-in */
			struct srv_strict strict = {.mode = fv_of(r)};
			if (body_fields(r, scale_res, mt, in, &strict, &err) ||
			    strict_finish(r, scale_res, &strict, NULL, &err)) {
				srv_strict_free(&strict);
				json_decref(in);
				srv_reply_error(r, &err, NULL);
				return;
			}
			/* the Scale decoder: replicas is an int32 */
			json_int_t n;
			char why[200];
			if (!scale_replicas_of(
				json_object_get(json_object_get(in, "spec"),
						"replicas"),
				false, &n, why, sizeof why)) {
				srv_reply_fail(r, LP_E_BADREQUEST,
					       "Scale in version \"v1\" cannot be handled as a Scale: %s",
					       why);
				json_decref(in);
				return;
			}
			if (check_body_name(r, in, ns, name)) {
				json_decref(in);
				return;
			}
			body = in;
		}
	}
decoded:
	for (int attempt = 0; attempt < WRITE_RETRIES; attempt++) {
		struct reg_obj c = {0};
		lp_err rc = reg_get(e, &k, &c);
		if (!rc)
			rc = decode_current(res, &c, &err);
		if (rc) {
			storage_err(res, name, rc, &err);
			reg_obj_free(&c);
			fail_res(r, res, name, &err);
			goto out;
		}
		const char *srp = json_string_value(json_object_get(sc, "specReplicasPath"));
		/* scaleFromCustomResource: a value of another type where the
		   paths point is its plain accessor error, a 500 */
		static const char *const paths[] = {"specReplicasPath",
						    "statusReplicasPath",
						    "labelSelectorPath"};
		char why[600];
		bool bad = false;
		for (size_t i = 0; !bad && i < 3; i++)
			bad = !scale_nested_ok(
			    c.obj,
			    json_string_value(json_object_get(sc, paths[i])),
			    i == 2, why, sizeof why);
		if (bad) {
			reg_obj_free(&c);
			srv_error_set(&err, LP_E_IO, "%s", why);
			err.no_reason = true;
			srv_reply_error(r, &err, NULL);
			goto out;
		}
		if (!strcmp(verb, "get") && !get_path(c.obj, srp)) {
			/* kube's scale REST: nothing to read the Scale from */
			reg_obj_free(&c);
			srv_reply_fail(r, LP_E_IO,
				       "Internal error occurred: the spec replicas field \"%.200s\" does not exist",
				       srp ? srp : "");
			goto out;
		}
		json_t *scale = scale_of(sc, c.obj);
		if (!strcmp(verb, "get")) {
			reg_obj_free(&c);
			if (r->neg.out == SRV_OUT_TABLE) {
				/* kube's CRD handler gives the scale scope
				   columns of its own */
				json_t *items = json_pack("[O]", scale);
				json_t *lm = json_pack(
				    "{s:O?}", "resourceVersion",
				    json_object_get(
					json_object_get(scale, "metadata"),
					"resourceVersion"));
				json_t *t = srv_table_scale(&r->neg, items,
							    lm, true);
				json_decref(items);
				json_decref(lm);
				json_decref(scale);
				scale = t;
			} else if (r->neg.out == SRV_OUT_PARTIAL) {
				json_t *p = srv_partial(&r->neg, scale);
				json_decref(scale);
				scale = p;
			}
			srv_reply_json(r, 200, scale);
			goto out;
		}
		json_t *want = NULL, *applied = NULL;
		if (apply) {
			/* the Scale's replicas applied to the object's replicas
			   path, ownership recorded for the subresource (kube's
			   scale handler maps managed fields the same way) */
			json_t *cfg = json_pack(
			    "{s:s, s:s, s:{s:s}}", "apiVersion",
			    json_string_value(json_object_get(c.obj, "apiVersion")),
			    "kind", res->kind, "metadata", "name", name);
			const json_t *ar = json_object_get(
			    json_object_get(apply, "spec"), "replicas");
			if (cfg && ar)
				set_path(cfg, srp, json_incref((json_t *)ar));
			struct srv_mf_op op;
			char mgr[SRV_MF_MANAGER_BUF], mgv[300];
			mf_op(r, res, "scale", &op, mgr, sizeof mgr, mgv,
			      sizeof mgv);
			lp_err arc = cfg ? apply_typed(&op, c.obj, cfg, force,
						       &applied, &err)
					 : srv_error_set(&err, LP_E_NOMEM,
							 "out of memory");
			json_decref(cfg);
			/* the applyPatcher's strict decoding of the body, once
			   it has applied */
			struct apply_dups dups = {0};
			if (!arc)
				arc = apply_strict(r, &dups, &err);
			if (arc) {
				json_decref(applied);
				json_decref(scale);
				reg_obj_free(&c);
				srv_reply_error(r, &err, NULL);
				goto out;
			}
			want = scale_of(sc, applied);
		} else if (patch) {
			lp_err prc = json_patch
					     ? srv_json_patch(scale, patch, &want, &err)
					     : srv_merge_patch(scale, patch, &want, &err);
			/* the patched Scale decoded as a built-in's (type
			   errors, then fieldValidation) */
			if (!prc)
				prc = patch_fields(r, scale_res, false,
						   !json_patch, false, patch,
						   want, &err);
			if (prc) {
				json_decref(want);
				json_decref(scale);
				reg_obj_free(&c);
				srv_reply_error(r, &err, NULL);
				goto out;
			}
		} else {
			want = json_incref(body);
		}
		json_decref(scale);
		json_t *rep = json_object_get(json_object_get(want, "spec"), "replicas");
		const char *rv = json_string_value(json_object_get(
			json_object_get(want, "metadata"), "resourceVersion"));
		int64_t rvn = 0;
		/* a patched Scale is checked as a PUT one: its name against
		   the URL's (checkName), its resourceVersion a precondition
		   (kube's scale update copies it onto the object) */
		if (patch && check_body_name(r, want, ns, name)) {
			json_decref(want);
			json_decref(applied);
			reg_obj_free(&c);
			goto out;
		}
		if ((body || patch) && rv && *rv &&
		    (!parse_i64(rv, &rvn) || rvn != c.mod)) {
			json_decref(want);
			json_decref(applied);
			reg_obj_free(&c);
			storage_err(res, name, LP_E_CONFLICT, &err);
			fail_res(r, res, name, &err);
			goto out;
		}
		if (!rep && patch && !get_path(c.obj, srp)) {
			/* kube patches a Scale whose replicas mean "unset" */
			json_decref(want);
			json_decref(applied);
			reg_obj_free(&c);
			srv_reply_fail(r, LP_E_BADREQUEST,
				       "the spec replicas field \"%.200s\" cannot be empty",
				       srp ? srp : "");
			goto out;
		}
		json_int_t nrep;
		char msg[200];
		if (!scale_replicas_of(rep, true, &nrep, msg, sizeof msg)) {
			/* the patched Scale does not decode: kube's 422 on
			   the patch */
			char *shown = srv_go_json(want);
			patch_invalid(shown ? shown : "", msg, &err);
			free(shown);
			json_decref(want);
			json_decref(applied);
			reg_obj_free(&c);
			srv_reply_error(r, &err, NULL);
			goto out;
		}
		json_t *next = json_deep_copy(c.obj);
		set_path(next, json_string_value(json_object_get(sc, "specReplicasPath")),
			 json_integer(nrep));
		json_decref(want);
		/* the entries the apply computed (no Update entry) */
		if (applied)
			take_managed_fields(next, applied);
		/* kube's scale REST updates a custom resource through its
		   main store, whose strategy validates the whole object
		   against its schema (with ratcheting) and then the scale
		   checks: cnpg's spec.instances minimum 1 holds for kubectl
		   scale too */
		lp_err vrc = LP_OK;
		if (res->custom) {
			r->body_pruned = false;
			vrc = cr_schema(r, res, next, c.obj, name, &err);
		} else if (nrep < 0 && scale_causes(res, next, &err)) {
			vrc = invalid_from_causes(res, name, &err);
		}
		if (vrc) {
			json_decref(next);
			json_decref(applied);
			reg_obj_free(&c);
			fail_res(r, res, name, &err);
			goto out;
		}
		if (res->prepare)
			res->prepare(res, next, c.obj, &err);
		if (!applied)
			track_update(r, res, "scale", c.obj, next, &err);
		json_decref(applied);
		struct eng_cmp cmp = {ENG_CMP_MOD, c.mod};
		char *out = NULL;
		size_t ol = 0;
		char rvt[24];
		snprintf(rvt, sizeof rvt, "%lld", (long long)c.mod);
		/* kube's scale REST updates through the main store, whose
		   GuaranteedUpdate writes nothing for the same bytes: a
		   Scale that changes nothing keeps the revision (a custom
		   resource compared in value, as finish_update does) */
		bool unchanged = false;
		if (res->custom && same_object(next, c.obj)) {
			rc = (out = malloc(c.len ? c.len : 1)) ? LP_OK
							       : LP_E_NOMEM;
			if (out) {
				memcpy(out, c.bytes, c.len);
				ol = c.len;
			}
		} else {
			rc = reg_put_changed(e, &k, next, &cmp, dry, rvt, &c,
					     &unchanged, &out, &ol);
		}
		json_decref(next);
		reg_obj_free(&c);
		if (rc == LP_E_CONFLICT && !body)
			continue;
		if (rc) {
			storage_err(res, name, rc, &err);
			fail_res(r, res, name, &err);
			goto out;
		}
		json_t *stored = reg_json_load(out, ol, JSON_ALLOW_NUL, NULL);
		free(out);
		srv_reply_json(r, 200, stored ? scale_of(sc, stored) : NULL);
		json_decref(stored);
		goto out;
	}
	storage_err(res, name, LP_E_CONFLICT, &err);
	fail_res(r, res, name, &err);
out:
	json_decref(patch);
	json_decref(body);
	json_decref(apply);
}

/* ------------------------------------------------------------ tokens */

/* The latest object res/ns/name, decoded into *c (free it with
   reg_obj_free, also on failure). LP_OK, or kube's error in err (a missing
   one: NotFound). */
static lp_err read_object(struct srv_req *r, const struct srv_resource *res,
			  const char *ns, const char *name, struct reg_obj *c,
			  struct srv_error *err)
{
	struct reg_key k;
	lp_err rc = key_of(res, ns, name, &k, err);
	if (!rc && (rc = reg_get(srv_engine(r->s), &k, c)))
		storage_err(res, name, rc, err);
	if (!rc && (rc = reg_obj_decode(c)))
		srv_error_set(err, rc, "Internal error occurred: %s",
			      lp_strerror(rc));
	if (rc)
		reg_obj_free(c);
	return rc;
}

/* A TokenRequest's bound object (kube's TokenREST): a Secret of the
   namespace, whose name and uid go into the token's claims (*claim, new).
   Pods and Nodes are not served here, so none exists. LP_OK or the error
   answered. */
static lp_err token_bound(struct srv_req *r, const char *ns, const json_t *ref,
			  json_t **claim)
{
	const char *kind = json_string_value(json_object_get(ref, "kind"));
	const char *av = json_string_value(json_object_get(ref, "apiVersion"));
	const char *name = json_string_value(json_object_get(ref, "name"));
	const char *uid = json_string_value(json_object_get(ref, "uid"));
	kind = kind ? kind : "";
	av = av ? av : "";
	name = name ? name : "";
	/* Go's schema.FromAPIVersionAndKind: "v1" is the core group */
	const char *slash = strchr(av, '/');
	bool core = !slash;
	struct srv_error err;
	srv_error_clear(&err);
	struct srv_status_what w = {.name = name, .group = ""};
	if (core && (!strcmp(kind, "Pod") || !strcmp(kind, "Node"))) {
		w.kind = !strcmp(kind, "Pod") ? "pods" : "nodes";
		srv_error_set(&err, LP_E_NOTFOUND, "%s \"%s\" not found", w.kind,
			      name);
		srv_reply_error(r, &err, &w);
		return err.code;
	}
	if (!core || strcmp(kind, "Secret")) {
		srv_reply_fail(r, LP_E_BADREQUEST,
			       "cannot bind token to object of type %.*s/%s, Kind=%s",
			       slash ? (int)(slash - av) : 0, av,
			       slash ? slash + 1 : av, kind);
		return LP_E_BADREQUEST;
	}
	const struct srv_resource *sec = srv_resource_find("", "v1", "secrets");
	struct reg_obj c = {0};
	lp_err rc = read_object(r, sec, ns, name, &c, &err);
	if (rc) {
		fail_res(r, sec, name, &err);
		return rc;
	}
	const char *suid = json_string_value(
	    json_object_get(json_object_get(c.obj, "metadata"), "uid"));
	suid = suid ? suid : "";
	if (uid && *uid && strcmp(uid, suid)) {
		reg_obj_free(&c);
		w.kind = "Secret";
		srv_error_set(&err, LP_E_CONFLICT,
			      "Operation cannot be fulfilled on Secret \"%s\": the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated",
			      name, uid);
		srv_reply_error(r, &err, &w);
		return LP_E_CONFLICT;
	}
	*claim = json_pack("{s:s,s:s}", "name", name, "uid", suid);
	reg_obj_free(&c);
	return LP_OK;
}

/* Seconds a token lives: kube's defaults and limits (10 minutes to 2^32
   seconds, an hour when unset). */
#define TOKEN_MIN_SECONDS 600
#define TOKEN_MAX_SECONDS 4294967296LL
#define TOKEN_DEFAULT_SECONDS 3600

/*
 * POST serviceaccounts/NAME/token (kubectl create token): kube's
 * TokenREST.Create. The body is a TokenRequest (JSON, YAML or protobuf);
 * the answer is it with its status holding a token signed by the server's
 * key (satoken.h) for the service account, 201. Nothing is stored, so a
 * dry run answers the same.
 */
static void do_token(struct srv_req *r, const char *ns, const char *name)
{
	const struct srv_resource *tr = srv_subresource_type("token");
	const struct srv_resource *sa = srv_resource_find("", "v1",
							  "serviceaccounts");
	struct srv_error err;
	srv_error_clear(&err);
	bool dry;
	json_t *obj = NULL, *bound = NULL;
	struct reg_obj c = {0};
	if (create_body(r, tr, &dry, &obj, &err)) {
		if (!r->answered)
			srv_reply_error(r, &err, NULL);
		goto out;
	}
	/* admission (NamespaceLifecycle) runs before TokenREST looks for
	   the service account: a missing namespace is its 404, a
	   terminating one its 403 */
	struct srv_status_what w = {0};
	if (check_namespace(r, sa, ns, name, true, &err, &w)) {
		srv_reply_error(r, &err, &w);
		goto out;
	}
	json_t *m = json_object_get(obj, "metadata");
	const char *mname = json_string_value(json_object_get(m, "name"));
	const char *mns = json_string_value(json_object_get(m, "namespace"));
	if (mname && *mname && strcmp(mname, name))
		srv_error_cause(&err, "FieldValueInvalid", "metadata.name",
				"Invalid value: \"%.253s\": must match the service account name if specified",
				mname);
	else if (mns && *mns && strcmp(mns, ns))
		srv_error_cause(&err, "FieldValueInvalid", "metadata.namespace",
				"Invalid value: \"%.63s\": must match the service account namespace if specified",
				mns);
	if (srv_error_invalid(&err, tr->kind, tr->group, name)) {
		fail_res(r, tr, name, &err);
		goto out;
	}
	if (read_object(r, sa, ns, name, &c, &err)) {
		fail_res(r, sa, name, &err);
		goto out;
	}
	json_t *spec = json_object_get(obj, "spec");
	if (!json_is_object(spec)) {
		spec = json_object();
		json_object_set_new(obj, "spec", spec);
	}
	json_t *aud = json_object_get(spec, "audiences");
	if (json_array_size(aud) == 0) {
		aud = json_pack("[s]", SRV_SA_ISSUER);
		json_object_set_new(spec, "audiences", aud);
	}
	json_t *es = json_object_get(spec, "expirationSeconds");
	long long secs = json_is_integer(es) ? json_integer_value(es)
					     : TOKEN_DEFAULT_SECONDS;
	json_object_set_new(spec, "expirationSeconds", json_integer(secs));
	if (!json_object_get(spec, "boundObjectRef"))
		json_object_set_new(spec, "boundObjectRef", json_null());
	json_object_set_new(m, "name", json_string(name));
	json_object_set_new(m, "namespace", json_string(ns));
	char now[32];
	reg_now(now);
	json_object_set_new(m, "creationTimestamp", json_string(now));
	/* kube's ValidateTokenRequest names no object */
	if (secs < TOKEN_MIN_SECONDS)
		srv_error_cause(&err, "FieldValueInvalid", "spec.expirationSeconds",
				"Invalid value: %lld: may not specify a duration less than 10 minutes",
				secs);
	if (secs > TOKEN_MAX_SECONDS)
		srv_error_cause(&err, "FieldValueInvalid", "spec.expirationSeconds",
				"Invalid value: %lld: may not specify a duration larger than 2^32 seconds",
				secs);
	if (srv_error_invalid(&err, tr->kind, tr->group, "")) {
		fail_res(r, tr, "", &err);
		goto out;
	}
	json_t *ref = json_object_get(spec, "boundObjectRef");
	if (json_is_object(ref) && token_bound(r, ns, ref, &bound))
		goto out;
	time_t t0 = time(NULL);
	char jti[37];
	reg_uuid(jti);
	const char *sa_uid = json_string_value(
	    json_object_get(json_object_get(c.obj, "metadata"), "uid"));
	char sub[400];
	snprintf(sub, sizeof sub, "system:serviceaccount:%s:%s", ns, name);
	json_t *kube = json_pack("{s:s,s:{s:s,s:s}}", "namespace", ns,
				 "serviceaccount", "name", name, "uid",
				 sa_uid ? sa_uid : "");
	if (kube && bound)
		json_object_set(kube, "secret", bound);
	json_t *claims = json_pack(
	    "{s:O,s:I,s:I,s:s,s:s,s:o,s:I,s:s}", "aud", aud, "exp",
	    (json_int_t)(t0 + secs), "iat", (json_int_t)t0, "iss",
	    SRV_SA_ISSUER, "jti", jti, "kubernetes.io", kube, "nbf",
	    (json_int_t)t0, "sub", sub);
	char *tok = claims ? srv_sa_sign(srv_sa(r->s), claims) : NULL;
	json_decref(claims);
	if (!tok) {
		srv_reply_fail(r, LP_E_IO,
			       "Internal error occurred: failed to generate token");
		goto out;
	}
	char expiry[32];
	time_t te = t0 + (time_t)secs;
	struct tm tm;
	gmtime_r(&te, &tm);
	strftime(expiry, sizeof expiry, "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(obj, "status",
			    json_pack("{s:s,s:s}", "token", tok,
				      "expirationTimestamp", expiry));
	explicit_bzero(tok, strlen(tok));
	free(tok);
	reg_canonical(obj); /* kind, apiVersion, metadata first, as kube's */
	srv_reply_json(r, 201, obj); /* takes obj */
	obj = NULL;
out:
	json_decref(obj);
	json_decref(bound);
	reg_obj_free(&c);
}

/* ------------------------------------------------------------ routing */

static unsigned verb_bit(const char *v)
{
	static const struct {
		const char *name;
		unsigned bit;
	} t[] = {{"get", SRV_V_GET},	       {"list", SRV_V_LIST},
		 {"watch", SRV_V_WATCH},       {"create", SRV_V_CREATE},
		 {"update", SRV_V_UPDATE},     {"patch", SRV_V_PATCH},
		 {"delete", SRV_V_DELETE},
		 {"deletecollection", SRV_V_DELETECOLLECTION}};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (!strcmp(v, t[i].name))
			return t[i].bit;
	return 0;
}

void srv_handle_resource(struct srv_req *r, const struct srv_resource *res)
{
	struct srv_reqinfo *ri = &r->ri;
	const char *verb = ri->verb;
	const char *ns = ri->ns;
	const char *name = ri->name;
	const char *sub = ri->subresource;
	unsigned vb = verb_bit(verb); /* 0: none of the eight */
	char gr[320]; /* "<resource>[.<group>]", only for the messages */
	/* The namespaces resource: its namespace is its name, on its own
	   paths only (kube has no route for /namespaces/{ns}/namespaces; a
	   custom resource of that plural under a namespace is the CRD
	   handler's scope mismatch, 404). */
	bool ns_res = is_namespaces(res);
	if (!res->namespaced && ns[0] && (!ns_res || ri->in_ns)) {
		srv_reply_no_route(r, LP_E_NOTFOUND);
		return;
	}
	/* kube's crdHandler hands a namespaced kind's request without a
	   namespace to its delegate (404) before anything else, but for a
	   list or watch across namespaces: subresources and verbs included */
	if (res->custom && res->namespaced && !ns[0] && vb != SRV_V_LIST &&
	    vb != SRV_V_WATCH) {
		srv_reply_no_route(r, LP_E_NOTFOUND);
		return;
	}
	/* A deprecated CRD version warns on every request it serves,
	   errors included, as kube's crdHandler does before it
	   dispatches. */
	const char *deprecation = srv_cr_deprecation(res);
	if (deprecation)
		srv_warn(r, "%s", deprecation);
	const char *webhook = srv_cr_webhook_warning(res);
	if (webhook)
		srv_warn(r, "%s", webhook);
	if (res->warning)
		srv_warn(r, "%s", res->warning);
	if (ns_res)
		ns = "";
	{
		struct srv_error nerr;
		srv_error_clear(&nerr);
		/* a watch's events each carry one object: its metadata form
		   is PartialObjectMetadata, as client-go's metadata client
		   asks for it */
		bool listish = vb == SRV_V_LIST || vb == SRV_V_DELETECOLLECTION;
		/* kube: no Table in watch-list mode (the clause is
		   skipped) */
		const char *sie = vb != SRV_V_WATCH
				      ? NULL
				      : srv_query(r, "sendInitialEvents");
		bool watch_list = sie && srv_query_bool(sie);
		if (srv_negotiate(srv_accept(r), srv_query(r, "includeObject"),
				  listish,
				  watch_list || no_table_convertor(res, sub),
				  &r->neg, &nerr)) {
			srv_reply_error(r, &nerr, NULL);
			return;
		}
		/* A get or a list refuses the other shape only once it
		   succeeded (kube's transformResponseObject), after its own
		   errors. */
		if (r->neg.out == SRV_OUT_PARTIAL_SHAPE &&
		    ((vb != SRV_V_GET && vb != SRV_V_LIST) || sub[0])) {
			refuse_shape(r, res, vb);
			return;
		}
		/* kube's YAML serializer has no stream serializer: a watch
		   whose chosen media type is YAML is not acceptable
		   (NegotiateOutputMediaTypeStream), Table and metadata
		   conversions included. */
		if (vb == SRV_V_WATCH && r->neg.yaml) {
			srv_reply_fail(r, LP_E_NOTACCEPTABLE,
				       "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch");
			return;
		}
	}
	if (sub[0]) {
		if (!srv_resource_has_sub(res, sub) || !name[0]) {
			struct srv_error err;
			srv_error_clear(&err);
			if (!res->custom) {
				srv_reply_no_route(r, LP_E_NOTFOUND);
				return;
			}
			not_found_err(res, name, &err);
			fail_res(r, res, name, &err);
			return;
		}
		if (!(srv_subresource_verbs(sub) & vb)) {
			struct srv_status_what w = {.group = res->group, .kind = res->resource};
			struct srv_error err;
			srv_error_clear(&err);
			if (!res->custom) {
				srv_reply_no_route(r, LP_E_METHODNOTALLOWED);
				return;
			}
			srv_error_set(&err, LP_E_METHODNOTALLOWED,
				      "%s is not supported on resources of kind \"%s\"",
				      verb, srv_resource_gr(res, gr, sizeof gr));
			srv_reply_error(r, &err, &w);
			return;
		}
	}
	/* a built-in has no POST route on an object's path (go-restful's
	   405); the custom resource handler creates the object the body
	   names */
	if (!res->custom && !sub[0] && name[0] && vb == SRV_V_CREATE) {
		srv_reply_no_route(r, LP_E_METHODNOTALLOWED);
		return;
	}
	/* go-restful's 405 where a built-in's path has routes, but not for
	   the method: the legacy /watch/ paths are GET only (the custom
	   resource handler serves a watch whatever the method), a
	   collection has no PUT or PATCH, and the list across namespaces of
	   a namespaced kind is GET alone */
	if (!res->custom && ((vb == SRV_V_WATCH && strcmp(r->method, "GET") &&
			      strcmp(r->method, "HEAD")) ||
			     (!name[0] && !sub[0] &&
			      (vb == SRV_V_UPDATE || vb == SRV_V_PATCH ||
			       (res->namespaced && !ns[0] && vb != SRV_V_LIST &&
				vb != SRV_V_WATCH))))) {
		srv_reply_no_route(r, LP_E_METHODNOTALLOWED);
		return;
	}
	if (!vb || !(res->verbs & vb) ||
	    ((vb == SRV_V_UPDATE || vb == SRV_V_PATCH) && !name[0])) {
		struct srv_status_what w = {.group = res->group, .kind = res->resource};
		struct srv_error err;
		srv_error_clear(&err);
		if (!name[0] && (vb == SRV_V_UPDATE || vb == SRV_V_PATCH)) {
			srv_error_set(&err, LP_E_BADREQUEST, "name must be provided");
		} else if (!res->custom) {
			/* a built-in without the verb has no go-restful
			   route for it */
			srv_reply_no_route(r, LP_E_METHODNOTALLOWED);
			return;
		} else {
			/* a method with no verb names none, as kube's
			   RequestInfo gives it (" is not supported ...") */
			srv_error_set(
			    &err, LP_E_METHODNOTALLOWED,
			    "%s is not supported on resources of kind \"%s\"",
			    verb, srv_resource_gr(res, gr, sizeof gr));
		}
		srv_reply_error(r, &err, &w);
		return;
	}
	if (res->namespaced && !ns[0] && vb != SRV_V_LIST &&
	    vb != SRV_V_WATCH) {
		srv_reply_no_route(r, LP_E_NOTFOUND);
		return;
	}
	/* Only a body has a media type to refuse: reads skip the header
	   look-up (~350 of the 1,260 instructions a custom resource GET
	   cost more than a ConfigMap's, callgrind). kube refuses it (415)
	   before it looks at the query options. */
	bool body_verb = vb == SRV_V_CREATE || vb == SRV_V_UPDATE;
	if (body_verb && !sub[0]) {
		char mtb[128];
		const char *mt = media_type(r, mtb, sizeof mtb);
		if (strcasecmp(mt, "application/json") &&
		    strcasecmp(mt, "application/yaml") &&
		    strcasecmp(mt, "application/vnd.kubernetes.protobuf")) {
			/* a custom resource's serializers list protobuf too
			   (NegotiateInputSerializer names them all) */
			srv_reply_fail(r, LP_E_UNSUPPORTEDMEDIA,
				       BODY_TYPES_415);
			return;
		}
	}
	if (res->custom &&
	    (vb == SRV_V_CREATE || vb == SRV_V_UPDATE || vb == SRV_V_PATCH)) {
		char mtb[128];
		const char *mt = media_type(r, mtb, sizeof mtb);
		/* /scale has a codec of its own, which takes protobuf
		   (an HPA's scale client sends it) */
		if ((vb == SRV_V_CREATE || vb == SRV_V_UPDATE) &&
		    strcmp(sub, "scale") &&
		    !strcasecmp(mt, "application/vnd.kubernetes.protobuf")) {
			srv_reply_fail(r, LP_E_UNSUPPORTEDMEDIA,
				       "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml");
			return;
		}
		if (vb == SRV_V_PATCH &&
		    !strcasecmp(mt, "application/strategic-merge-patch+json")) {
			srv_reply_fail(r, LP_E_UNSUPPORTEDMEDIA,
				       "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml");
			return;
		}
	}
	bool writes = vb != SRV_V_GET && vb != SRV_V_LIST && vb != SRV_V_WATCH;
	if (!strcmp(sub, "scale"))
		do_scale(r, res, ns, name, verb);
	else if (!strcmp(sub, "token"))
		do_token(r, ns, name);
	else if (vb == SRV_V_GET)
		do_get(r, res, ns, name);
	else if (vb == SRV_V_LIST)
		do_list(r, res, ns);
	else if (vb == SRV_V_WATCH)
		srv_watch(r, res, ns, name);
	else if (vb == SRV_V_CREATE)
		do_create(r, res, ns);
	else if (vb == SRV_V_UPDATE)
		do_update(r, res, ns, name, sub);
	else if (vb == SRV_V_PATCH)
		do_patch(r, res, ns, name, sub);
	else if (vb == SRV_V_DELETE)
		do_delete(r, res, ns, name);
	else
		do_deletecollection(r, res, ns);
	/* CRDs: the serving map and the naming/establishing decisions follow
	   every write that committed, before the answer goes out (MHD sends
	   it when this callback returns). Dry runs and failures change
	   nothing. A deletecollection may have removed many: name NULL. */
	if (writes && res->after_write && !r->dry_run && !r->write_hooked &&
	    r->code >= 200 && r->code < 300) {
		const char *wname = vb == SRV_V_CREATE		   ? r->created
				    : vb == SRV_V_DELETECOLLECTION ? NULL
								   : name;
		res->after_write(srv_engine(r->s), wname);
	}
}

/* ------------------------------------------------------------ bootstrap */

/* What the server creates itself is recorded as kube-apiserver's
   controllers' writes are: an Update by "kube-apiserver". */
static void track_as(const struct srv_resource *res, const char *manager,
		     json_t *obj)
{
	struct srv_mf_op op = {
	    .res = res, .manager = manager, .api_version = "v1"};
	struct srv_error err;
	srv_error_clear(&err);
	if (op.res)
		(void)srv_mf_update(&op, NULL, obj, &err);
}

static void track_bootstrap(const char *resource, json_t *obj)
{
	track_as(srv_resource_find("", "v1", resource), "kube-apiserver", obj);
}

/* A new object of res written at k, the strategy's prepare applied (its
   create: no old object), as the system writes one. Takes obj. */
static lp_err put_new(eng *e, const struct srv_resource *res,
		      const struct reg_key *k, json_t *obj)
{
	struct srv_error err;
	srv_error_clear(&err);
	if (res->prepare)
		res->prepare(res, obj, NULL, &err);
	struct eng_cmp cmp = {ENG_CMP_ABSENT, 0};
	char *out = NULL;
	size_t ol;
	lp_err rc = reg_put(e, k, obj, &cmp, false, NULL, &out, &ol, NULL);
	json_decref(obj);
	free(out);
	return rc;
}

lp_err srv_record_event(eng *e, const json_t *involved, const char *type,
			const char *reason, const char *message,
			const char *component, const char *manager)
{
	const char *ns =
	    json_string_value(json_object_get(involved, "namespace"));
	const char *iname =
	    json_string_value(json_object_get(involved, "name"));
	if (!ns || !*ns)
		ns = "default"; /* client-go's recorder: a cluster-scoped
				   object's events go to default */
	/* client-go's name: the object's name and the time in ns, hex */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	char name[300], now[32];
	int w = snprintf(name, sizeof name, "%s.%llx", iname ? iname : "",
			 (unsigned long long)ts.tv_sec * 1000000000ull +
			     (unsigned long long)ts.tv_nsec);
	if (w < 0 || w > 253)
		return LP_E_INVAL; /* kube's create would refuse the name */
	reg_now(now);
	json_t *ev = json_pack(
	    "{s:s,s:s,s:{s:s,s:s},s:O,s:s,s:s,s:{s:s},s:s,s:s,s:i,s:s,s:n,"
	    "s:s}",
	    "kind", "Event", "apiVersion", "v1", "metadata", "name", name,
	    "namespace", ns, "involvedObject", involved, "reason", reason,
	    "message", message, "source", "component", component,
	    "firstTimestamp", now, "lastTimestamp", now, "count", 1, "type",
	    type, "eventTime", "reportingComponent", component);
	const struct srv_resource *res = srv_resource_find("", "v1", "events");
	struct reg_key k;
	if (!ev || !res || reg_object_key("", "events", ns, name, &k)) {
		json_decref(ev);
		return LP_E_NOMEM;
	}
	stamp_new(json_object_get(ev, "metadata"));
	track_as(res, manager, ev);
	return put_new(e, res, &k, ev);
}

/* Write obj under k when what is stored differs in obj[in][what] (in
   NULL: obj[what]; what NULL: never), or nothing is stored: created with
   uid and creationTimestamp, or the stored object with that member
   replaced.
   side: a reservation written with a create (NULL: none). Takes obj. */
static lp_err reconcile_object(eng *e, const struct reg_key *k,
			       const char *k_resource, json_t *obj,
			       const char *in, const char *what,
			       const struct reg_side *side)
{
	struct reg_obj c = {0};
	lp_err rc = reg_get(e, k, &c);
	if (rc == LP_OK && (rc = reg_obj_decode(&c)) == LP_OK) {
		json_t *want = in ? json_object_get(obj, in) : obj;
		json_t *have = in ? json_object_get(c.obj, in) : c.obj;
		if (what && json_is_object(have) &&
		    !json_equal(json_object_get(have, what),
				json_object_get(want, what))) {
			json_t *next = json_deep_copy(c.obj);
			json_object_set(in ? json_object_get(next, in) : next,
					what, json_object_get(want, what));
			struct eng_cmp cmp = {ENG_CMP_MOD, c.mod};
			char *out = NULL;
			size_t ol;
			rc = reg_put(e, k, next, &cmp, false, NULL, &out, &ol, NULL);
			free(out);
			json_decref(next);
		}
		reg_obj_free(&c);
		json_decref(obj);
		return rc;
	}
	reg_obj_free(&c);
	if (rc != LP_E_NOTFOUND) {
		json_decref(obj);
		return rc;
	}
	stamp_new(json_object_get(obj, "metadata"));
	track_bootstrap(k_resource, obj);
	struct eng_cmp absent = {ENG_CMP_ABSENT, 0};
	char *out = NULL;
	size_t ol;
	int failed;
	rc = reg_put_sides(e, k, obj, &absent, side, side ? 1 : 0, &failed, &out,
			   &ol, NULL);
	free(out);
	json_decref(obj);
	return rc;
}

lp_err srv_bootstrap_kubernetes_service(eng *e, const char *cidr,
					const char *ip, int port,
					bool reconcile)
{
	uint32_t base, size;
	if (!parse_cidr(cidr, &base, &size))
		return LP_E_INVAL;
	uint32_t v = base + 1;
	char vip[20];
	snprintf(vip, sizeof vip, "%u.%u.%u.%u", v >> 24, (v >> 16) & 255,
		 (v >> 8) & 255, v & 255);
	json_t *svc = json_pack(
	    "{s:s,s:s,s:{s:s,s:s,s:{s:s,s:s}},"
	    "s:{s:[{s:s,s:s,s:i,s:i}],s:s,s:[s],s:s,s:s,s:[s],s:s,s:s},"
	    "s:{s:{}}}",
	    "kind", "Service", "apiVersion", "v1", "metadata", "name",
	    "kubernetes", "namespace", "default", "labels", "component",
	    "apiserver", "provider", "kubernetes", "spec", "ports", "name",
	    "https", "protocol", "TCP", "port", 443, "targetPort", port,
	    "clusterIP", vip, "clusterIPs", vip, "type", "ClusterIP",
	    "sessionAffinity", "None", "ipFamilies",
	    "IPv4", /* the cluster IP's: the service range is IPv4 */
	    "ipFamilyPolicy", "SingleStack",
	    "internalTrafficPolicy", "Cluster", "status", "loadBalancer");
	json_t *ep = json_pack(
	    "{s:s,s:s,s:{s:s,s:s,s:{s:s}},s:[{s:[{s:s}],s:[{s:s,s:i,s:s}]}]}",
	    "kind", "Endpoints", "apiVersion", "v1", "metadata", "name",
	    "kubernetes", "namespace", "default", "labels",
	    "endpointslice.kubernetes.io/skip-mirror", "true", "subsets",
	    "addresses", "ip", ip, "ports", "name", "https", "port", port,
	    "protocol", "TCP");
	struct reg_key sk, ek, ik;
	if (!svc || !ep ||
	    reg_object_key("", "services", "default", "kubernetes", &sk) ||
	    reg_object_key("", "endpoints", "default", "kubernetes", &ek) ||
	    svc_ip_key(vip, &ik)) {
		json_decref(svc);
		json_decref(ep);
		return LP_E_NOMEM;
	}
	struct reg_side side = {.key = &ik, .value = sk.bytes,
				.cmp = {ENG_CMP_ABSENT, 0}};
	lp_err rc = reconcile_object(e, &sk, "services", svc, "spec",
				     reconcile ? "ports" : NULL, &side);
	lp_err rc2 =
	    reconcile_object(e, &ek, "endpoints", ep, NULL, "subsets", NULL);
	return rc ? rc : rc2;
}

/* kube-apiserver's legacy token tracking controller: the ConfigMap
   kube-system/kube-apiserver-legacy-service-account-token-tracking, its
   "since" the UTC date it was made ("2006-01-02"), made again when it is
   gone (pkg/controlplane/controller/legacytokentracking). */
static lp_err bootstrap_token_tracking(eng *e)
{
	static const char name[] =
	    "kube-apiserver-legacy-service-account-token-tracking";
	const struct srv_resource *res =
	    srv_resource_find("", "v1", "configmaps");
	struct reg_key k;
	reg_object_key("", "configmaps", "kube-system", name, &k);
	struct reg_obj c = {0};
	if (reg_get(e, &k, &c) == LP_OK) {
		reg_obj_free(&c);
		return LP_OK;
	}
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	char day[16];
	strftime(day, sizeof day, "%Y-%m-%d", &tm);
	json_t *obj =
	    json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s}}", "kind", "ConfigMap",
		      "apiVersion", "v1", "metadata", "name", name, "namespace",
		      "kube-system", "data", "since", day);
	stamp_new(json_object_get(obj, "metadata"));
	track_bootstrap("configmaps", obj);
	lp_err rc = put_new(e, res, &k, obj);
	return rc == LP_E_EXISTS ? LP_OK : rc;
}

lp_err srv_bootstrap(eng *e)
{
	static const char *const names[] = {"default", "kube-system",
					    "kube-public", "kube-node-lease"};
	const struct srv_resource *res = srv_resource_find("", "v1", "namespaces");
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		struct reg_key k;
		reg_object_key("", "namespaces", NULL, names[i], &k);
		struct reg_obj c = {0};
		if (reg_get(e, &k, &c) == LP_OK) {
			reg_obj_free(&c);
			continue;
		}
		json_t *obj = json_pack("{s:s,s:s,s:{s:s}}", "kind", "Namespace",
					"apiVersion", "v1", "metadata", "name",
					names[i]);
		json_t *m = json_object_get(obj, "metadata");
		stamp_new(m);
		json_t *labels = json_object();
		json_object_set_new(labels, "kubernetes.io/metadata.name",
				    json_string(names[i]));
		json_object_set_new(m, "labels", labels);
		/* recorded before the strategy adds its finalizer and
		   status, as kube's handler records a create */
		track_bootstrap("namespaces", obj);
		lp_err rc = put_new(e, res, &k, obj);
		if (rc && rc != LP_E_EXISTS)
			return rc;
	}
	return bootstrap_token_tracking(e);
}
