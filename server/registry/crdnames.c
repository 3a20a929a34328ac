/*
 * crdnames.c -- see crdnames.h. kube's apiextensions naming controller
 * (pkg/controller/status, calculateNamesAndConditions) and establishing
 * controller, in our words.
 *
 * Invariants:
 *  1. A name goes into acceptedNames only when it is the one already
 *     accepted or no one in t holds it; a conflicting name keeps its old
 *     accepted value, so a decision never takes a name from anyone.
 *  2. The result depends only on crd and t (and now, for changed
 *     conditions): deciding twice from the same view writes nothing the
 *     second time.
 */
#include <stdio.h>
#include <string.h>

#include "crdnames.h"

lp_err reg_crd_taken_init(struct reg_crd_taken *t)
{
	t->resources = json_object();
	t->kinds = json_object();
	if (!t->resources || !t->kinds) {
		reg_crd_taken_free(t);
		return LP_E_NOMEM;
	}
	return LP_OK;
}

void reg_crd_taken_free(struct reg_crd_taken *t)
{
	json_decref(t->resources);
	json_decref(t->kinds);
	t->resources = t->kinds = NULL;
}

static void hold(json_t *set, const char *name)
{
	if (name && *name)
		json_object_set_new(set, name, json_true());
}

static const char *str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

void reg_crd_taken_add(struct reg_crd_taken *t, const json_t *names)
{
	hold(t->resources, str(names, "plural"));
	hold(t->resources, str(names, "singular"));
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(names, "shortNames"), i, v)
	    hold(t->resources, json_string_value(v));
	hold(t->kinds, str(names, "kind"));
	hold(t->kinds, str(names, "listKind"));
}

void reg_crd_taken_add_builtin(struct reg_crd_taken *t, const char *plural,
			       const char *kind, const char *const *short_names)
{
	char low[256], list[272];
	size_t n = 0;
	for (; kind[n] && n < sizeof low - 1; n++)
		low[n] = (char)(kind[n] >= 'A' && kind[n] <= 'Z'
				    ? kind[n] - 'A' + 'a'
				    : kind[n]);
	low[n] = '\0';
	snprintf(list, sizeof list, "%sList", kind);
	hold(t->resources, plural);
	hold(t->resources, low);
	for (const char *const *s = short_names; s && *s; s++)
		hold(t->resources, *s);
	hold(t->kinds, kind);
	hold(t->kinds, list);
}

/* ------------------------------------------------------------ reading */

/* A string array member, or NULL (which jansson's array calls treat as
   empty) when missing or not an array. */
static const json_t *strings(const json_t *o, const char *k)
{
	const json_t *a = json_object_get(o, k);
	return json_is_array(a) ? a : NULL;
}

static bool same_list(const json_t *a, const json_t *b)
{
	size_t n = json_array_size(a);
	if (n != json_array_size(b))
		return false;
	for (size_t i = 0; i < n; i++)
		if (strcmp(json_string_value(json_array_get(a, i))
			       ? json_string_value(json_array_get(a, i))
			       : "",
			   json_string_value(json_array_get(b, i))
			       ? json_string_value(json_array_get(b, i))
			       : ""))
			return false;
	return true;
}

static bool list_has(const json_t *a, const char *s)
{
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v)
	{
		if (json_string_value(v) && !strcmp(json_string_value(v), s))
			return true;
	}
	return false;
}

static const json_t *cond_of(const json_t *crd, const char *type)
{
	size_t i;
	json_t *c;
	json_array_foreach(
	    json_object_get(json_object_get(crd, "status"), "conditions"), i, c)
	{
		if (!strcmp(str(c, "type"), type))
			return c;
	}
	return NULL;
}

static bool cond_true(const json_t *crd, const char *type)
{
	return !strcmp(str(cond_of(crd, type), "status"), "True");
}

static void approval_cond(const json_t *crd, json_t *conds, const char *now);

/* Does the approval condition say what the annotation does? */
static bool approval_settled(const json_t *crd)
{
	const json_t *have =
	    json_object_get(json_object_get(crd, "status"), "conditions");
	json_t *conds = json_is_array(have) ? json_deep_copy(have) : json_array();
	if (!conds)
		return true; /* out of memory: the next decision sees to it */
	approval_cond(crd, conds, "");
	bool same = json_is_array(have) ? json_equal(conds, have)
					: json_array_size(conds) == 0;
	json_decref(conds);
	return same;
}

bool reg_crd_names_settled(const json_t *crd)
{
	const json_t *want =
	    json_object_get(json_object_get(crd, "spec"), "names");
	const json_t *acc =
	    json_object_get(json_object_get(crd, "status"), "acceptedNames");
	static const char *const one[] = {"plural", "singular", "kind",
					  "listKind"};
	for (size_t i = 0; i < sizeof one / sizeof one[0]; i++)
		if (strcmp(str(want, one[i]), str(acc, one[i])))
			return false;
	return same_list(strings(want, "shortNames"),
			 strings(acc, "shortNames")) &&
	       same_list(strings(want, "categories"),
			 strings(acc, "categories")) &&
	       cond_true(crd, "NamesAccepted") && cond_true(crd, "Established") &&
	       approval_settled(crd);
}

/* ------------------------------------------------------------ deciding */

/* What a decision found so far: the last conflict wins (as in kube). */
struct verdict {
	const char *reason; /* NULL: no conflict */
	char message[512];
};

/* kube's equalToAcceptedOrFresh. */
static bool free_or_ours(const char *want, const char *accepted,
			 const json_t *set)
{
	return !strcmp(want, accepted) || !*want || !json_object_get(set, want);
}

static void conflict(struct verdict *v, const char *reason, const char *name)
{
	v->reason = reason;
	snprintf(v->message, sizeof v->message, "\"%s\" is already in use",
		 name);
}

/* One single-valued name: the requested value or, on a conflict, the
   accepted one. Sets key in acc (empty strings left out unless always). */
static void decide_one(json_t *acc, const json_t *want, const json_t *old,
		       const char *key, const json_t *set, const char *reason,
		       bool always, struct verdict *v)
{
	const char *w = str(want, key), *o = str(old, key);
	const char *pick = w;
	if (!free_or_ours(w, o, set)) {
		conflict(v, reason, w);
		pick = o;
	}
	if (*pick || always)
		json_object_set_new(acc, key, json_string(pick));
}

/* Short names: all or nothing; only the ones not accepted yet are checked
   (kube's aggregate message: one error, or "[e1, e2]"). */
static void decide_short(json_t *acc, const json_t *want, const json_t *old,
			 const json_t *set, struct verdict *v)
{
	const json_t *ws = strings(want, "shortNames");
	const json_t *os = strings(old, "shortNames");
	const json_t *pick = ws;
	if (!same_list(ws, os)) {
		char msg[512] = "";
		size_t n_bad = 0, len = 0;
		size_t i;
		json_t *s;
		json_array_foreach(ws, i, s)
		{
			const char *name = json_string_value(s);
			if (!name || list_has(os, name) ||
			    free_or_ours(name, "", set))
				continue;
			int w = snprintf(msg + len, sizeof msg - len,
					 "%s\"%s\" is already in use",
					 n_bad ? ", " : "", name);
			if (w > 0 && (size_t)w < sizeof msg - len)
				len += (size_t)w;
			n_bad++;
		}
		if (n_bad) {
			v->reason = "ShortNamesConflict";
			snprintf(v->message, sizeof v->message,
				 n_bad > 1 ? "[%s]" : "%s", msg);
			pick = os;
		}
	}
	if (json_array_size(pick))
		json_object_set_new(acc, "shortNames", json_deep_copy(pick));
}

/* Set condition type in conds (appended when missing); lastTransitionTime
   moves to now only when the status changes. */
static void set_cond(json_t *conds, const char *type, const char *status,
		     const char *reason, const char *message, const char *now)
{
	size_t i;
	json_t *c;
	json_array_foreach(conds, i, c)
	{
		if (strcmp(str(c, "type"), type))
			continue;
		if (strcmp(str(c, "status"), status) ||
		    !json_object_get(c, "lastTransitionTime"))
			json_object_set_new(c, "lastTransitionTime",
					    json_string(now));
		json_object_set_new(c, "status", json_string(status));
		json_object_set_new(c, "reason", json_string(reason));
		json_object_set_new(c, "message", json_string(message));
		return;
	}
	json_array_append_new(
	    conds, json_pack("{s:s,s:s,s:s,s:s,s:s}", "type", type, "status",
			     status, "lastTransitionTime", now, "reason",
			     reason, "message", message));
}

static bool ends_with_domain(const char *g, const char *d)
{
	size_t gl = strlen(g), dl = strlen(d);
	return !strcmp(g, d) ||
	       (gl > dl && g[gl - dl - 1] == '.' && !strcmp(g + gl - dl, d));
}

/* Go's url.ParseRequestURI with a scheme and a host, as far as an
   approval URL goes: scheme "://" host, no blanks or control bytes. */
static bool approval_url(const char *s)
{
	const char *p = s;
	if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
		return false;
	while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
	       (*p >= '0' && *p <= '9') || *p == '+' || *p == '-' || *p == '.')
		p++;
	if (strncmp(p, "://", 3))
		return false;
	p += 3;
	size_t host = strcspn(p, "/?#");
	if (!host || p[0] == '@' || p[0] == ':')
		return false;
	for (const char *q = s; *q; q++)
		if ((unsigned char)*q <= ' ' || *q == 0x7f)
			return false;
	return true;
}

enum reg_approval reg_crd_approval(const json_t *crd, const char **value,
				   char *reason, size_t n)
{
	const char *group =
	    str(json_object_get(crd, "spec"), "group");
	const char *a = str(json_object_get(json_object_get(crd, "metadata"),
					    "annotations"),
			    REG_APPROVAL_ANNOTATION);
	*value = a;
	enum reg_approval st;
	if (!*a) {
		st = REG_APPROVAL_MISSING;
		snprintf(reason, n,
			 "protected groups must have approval annotation "
			 "\"%s\", see "
			 "https://github.com/kubernetes/enhancements/pull/1111",
			 REG_APPROVAL_ANNOTATION);
	} else if (!strncmp(a, "unapproved", 10)) {
		st = REG_APPROVAL_BYPASSED;
		snprintf(reason, n, "not approved: \"%s\"", a);
	} else if (approval_url(a)) {
		st = REG_APPROVAL_APPROVED;
		snprintf(reason, n, "approved in %s", a);
	} else {
		st = REG_APPROVAL_INVALID;
		snprintf(reason, n,
			 "protected groups must have approval annotation "
			 "\"%s\" with either a URL or a reason starting with "
			 "\"unapproved\", see "
			 "https://github.com/kubernetes/enhancements/pull/1111",
			 REG_APPROVAL_ANNOTATION);
	}
	if (!ends_with_domain(group, "k8s.io") &&
	    !ends_with_domain(group, "kubernetes.io"))
		return REG_APPROVAL_UNPROTECTED;
	return st;
}

/* kube's apiapproval controller: the condition of a protected CRD. */
static void approval_cond(const json_t *crd, json_t *conds, const char *now)
{
	char reason[512];
	const char *value;
	static const char *const why[] = {
	    [REG_APPROVAL_INVALID] = "InvalidAnnotation",
	    [REG_APPROVAL_APPROVED] = "ApprovedAnnotation",
	    [REG_APPROVAL_BYPASSED] = "UnapprovedAnnotation",
	    [REG_APPROVAL_MISSING] = "MissingAnnotation",
	};
	enum reg_approval st = reg_crd_approval(crd, &value, reason,
						sizeof reason);
	if (st == REG_APPROVAL_UNPROTECTED)
		return;
	set_cond(conds, "KubernetesAPIApprovalPolicyConformant",
		 st == REG_APPROVAL_APPROVED ? "True" : "False", why[st],
		 reason, now);
}

lp_err reg_crd_names_status(const json_t *crd, const struct reg_crd_taken *t,
			    const char *now, bool ca_invalid, json_t **out)
{
	*out = NULL;
	const json_t *want =
	    json_object_get(json_object_get(crd, "spec"), "names");
	const json_t *ost = json_object_get(crd, "status");
	const json_t *old = json_object_get(ost, "acceptedNames");
	json_t *st = json_is_object(ost) ? json_deep_copy(ost) : json_object();
	json_t *acc = json_object();
	if (!st || !acc) {
		json_decref(st);
		json_decref(acc);
		return LP_E_NOMEM;
	}
	/* kube's order of checks, and of acceptedNames' members */
	struct verdict v = {0};
	decide_one(acc, want, old, "plural", t->resources, "PluralConflict",
		   true, &v);
	decide_one(acc, want, old, "singular", t->resources, "SingularConflict",
		   false, &v);
	decide_short(acc, want, old, t->resources, &v);
	decide_one(acc, want, old, "kind", t->kinds, "KindConflict", true, &v);
	decide_one(acc, want, old, "listKind", t->kinds, "ListKindConflict",
		   false, &v);
	if (json_array_size(strings(want, "categories")))
		json_object_set_new(
		    acc, "categories",
		    json_deep_copy(json_object_get(want, "categories")));
	json_object_set_new(st, "acceptedNames", acc);

	json_t *conds = json_object_get(st, "conditions");
	if (!json_is_array(conds)) {
		conds = json_array();
		json_object_set_new(st, "conditions", conds);
	}
	if (v.reason)
		set_cond(conds, "NamesAccepted", "False", v.reason, v.message,
			 now);
	else
		set_cond(conds, "NamesAccepted", "True", "NoConflicts",
			 "no conflicts found", now);
	/* Established: once True it stays (kube keeps the old condition);
	   accepted names establish; a conflict leaves an existing
	   condition as it is and makes a missing one NotAccepted. */
	const json_t *est = cond_of(crd, "Established");
	bool established = !strcmp(str(est, "status"), "True");
	if (!established && !v.reason && ca_invalid)
		set_cond(conds, "Established", "False", "InvalidCABundle",
			 "The conversion webhook CABundle is invalid", now);
	else if (!established && !v.reason)
		set_cond(conds, "Established", "True", "InitialNamesAccepted",
			 "the initial names have been accepted", now);
	else if (!est)
		set_cond(conds, "Established", "False", "NotAccepted",
			 "not all names are accepted", now);
	approval_cond(crd, conds, now);
	if (json_equal(st, ost)) {
		json_decref(st);
		return LP_OK;
	}
	*out = st;
	return LP_OK;
}
