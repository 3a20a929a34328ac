/*
 * nsctl.c -- the namespace controller: empties a terminating namespace
 * and then finalizes it (kube's pkg/controller/namespace, in our words).
 *
 * DELETE of a namespace marks it (deletionTimestamp, phase Terminating;
 * spec.finalizers still holds "kubernetes"). For such a namespace, sync:
 *  1. deletes every object in it, of every namespaced resource (built-in
 *     and custom), with propagation Background, as DELETE would: objects
 *     with finalizers are only marked and stay until their finalizers go,
 *     and one already deleting in the foreground or orphaning loses that
 *     finalizer, as a Background delete of it does;
 *  2. counts what remains, per resource and per finalizer, and writes
 *     kube's five deletion conditions into status.conditions (only when
 *     they change: a condition keeps its lastTransitionTime while its
 *     status stays);
 *  3. when nothing remains, removes "kubernetes" from spec.finalizers (the
 *     finalize operation), after which the namespace goes once its own
 *     metadata.finalizers are gone too.
 * While content remains, each delete or update of an object in the
 * namespace queues the namespace again (observe), and a slow timer
 * re-checks as a backstop. Step 1 waits until a second after the first
 * sync met the namespace terminating (SETTLE_MS). Queue keys are
 * namespace names.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "lapis/log.h"
#include "registry/json.h"
#include "registry/object.h"
#include "registry/registry.h"
#include "registry/store.h"

#define NS_PREFIX REG_ROOT "namespaces/"
#define NS_FINALIZER "kubernetes"
#define RECHECK_MS 5000
/* The content of a terminating namespace is left alone this long first.
   kube's controller starts with a discovery of every API group before its
   first delete, which leaves a client deleting the namespace's own
   manifest (kubectl delete -f, -k: the namespace first, then what is in
   it) time to delete each item itself; emptying it at once made those
   deletes fail with NotFound. */
#define SETTLE_MS 1000

/* kube's namespace controller writes status and finalize from
   kube-controller-manager */
static const struct ctl_as as_status = {"kube-controller-manager", "status"};
static const struct ctl_as as_finalize = {"kube-controller-manager",
					  "finalize"};

struct nsctl {
	const struct ctl_store *s;
	/* The namespaces being deleted (name -> true). Informer thread
	   only: observe is its sole user. */
	json_t *terminating;
	/* When a sync first met each terminating namespace (monotonic ms),
	   under mu: the sync workers' own. */
	pthread_mutex_t mu;
	json_t *first_seen;
};

/* How long the content of namespace name is still to be left alone (0:
   no longer); done: forget it (the namespace is gone or not
   terminating). */
static int64_t settle_left(struct nsctl *n, const char *name, bool done)
{
	int64_t left = 0, now = ctl_now_ms();
	pthread_mutex_lock(&n->mu);
	if (done) {
		json_object_del(n->first_seen, name);
	} else {
		json_t *t = json_object_get(n->first_seen, name);
		if (!t) {
			json_object_set_new(n->first_seen, name,
					    json_integer(now));
			left = SETTLE_MS;
		} else if (now - json_integer_value(t) < SETTLE_MS) {
			left = SETTLE_MS - (now - json_integer_value(t));
		}
	}
	pthread_mutex_unlock(&n->mu);
	return left;
}

static lp_err ns_init(const struct ctl_store *s, void **ud)
{
	struct nsctl *n = calloc(1, sizeof *n);
	if (!n)
		return LP_E_NOMEM;
	n->s = s;
	n->terminating = json_object();
	n->first_seen = json_object();
	if (!n->terminating || !n->first_seen) {
		json_decref(n->terminating);
		json_decref(n->first_seen);
		free(n);
		return LP_E_NOMEM;
	}
	pthread_mutex_init(&n->mu, NULL);
	*ud = n;
	return LP_OK;
}

static void ns_fini(void *ud)
{
	struct nsctl *n = ud;
	if (!n)
		return;
	json_decref(n->terminating);
	json_decref(n->first_seen);
	pthread_mutex_destroy(&n->mu);
	free(n);
}

static void ns_observe(void *ud, ctl *c, struct ctl_ev *ev)
{
	struct nsctl *n = ud;
	if (!strncmp(ev->key, NS_PREFIX, strlen(NS_PREFIX))) {
		const char *name = ev->key + strlen(NS_PREFIX);
		if (ev->type == CTL_DELETE) {
			json_object_del(n->terminating, name);
			return;
		}
		if (!ctl_ev_mentions(ev, "deletionTimestamp"))
			return;
		if (ctl_meta_str(ctl_ev_cur(ev), "deletionTimestamp")) {
			json_object_set_new(n->terminating, name, json_true());
			ctl_add(c, name);
		}
		return;
	}
	if (json_object_size(n->terminating) == 0 || ev->type == CTL_ADD)
		return;
	const char *ns = ctl_meta_str(ctl_ev_obj(ev), "namespace");
	if (ns && json_object_get(n->terminating, ns))
		ctl_add(c, ns);
}

/* ------------------------------------------------------------ content */

/* One namespaced resource's objects in the namespace. */
struct scan {
	struct nsctl *n;
	const char *ns;
	bool delete;	    /* first pass: what to delete */
	json_t *keys;	    /* [key, uid] pairs to delete (first pass) */
	json_t *remaining;  /* gr -> count */
	json_t *finalizers; /* finalizer -> count */
	const char *gr;
	lp_err err;
};

static enum eng_take scan_one(void *ud, const struct eng_record *rec)
{
	struct scan *sc = ud;
	json_t *o = reg_json_load((const char *)rec->value, rec->value_len,
				  JSON_ALLOW_NUL, NULL);
	if (!json_is_object(o)) {
		json_decref(o);
		return ENG_SKIP;
	}
	if (sc->delete) {
		/* kube deletes the collection with Background propagation:
		   an object deleting in the foreground or orphaning loses
		   that finalizer too (and goes if it was the last); one held
		   by other finalizers only stays as it is */
		if (!ctl_meta_str(o, "deletionTimestamp") ||
		    ctl_has_finalizer(o, "foregroundDeletion") ||
		    ctl_has_finalizer(o, "orphan")) {
			json_t *p = json_pack("[s#s?]", (const char *)rec->key,
					      (int)rec->key_len,
					      ctl_meta_str(o, "uid"));
			if (p)
				json_array_append_new(sc->keys, p);
		}
	} else {
		json_int_t had =
		    json_integer_value(json_object_get(sc->remaining, sc->gr));
		json_object_set_new(sc->remaining, sc->gr,
				    json_integer(had + 1));
		json_t *fa = json_object_get(json_object_get(o, "metadata"),
					     "finalizers");
		size_t i;
		json_t *f;
		json_array_foreach(fa, i, f)
		{
			const char *fs = json_string_value(f);
			if (!fs)
				continue;
			json_int_t c = json_integer_value(
			    json_object_get(sc->finalizers, fs));
			json_object_set_new(sc->finalizers, fs,
					    json_integer(c + 1));
		}
	}
	json_decref(o);
	return ENG_TAKE;
}

static void scan_resource(void *arg, const char *prefix, const char *gr)
{
	struct scan *sc = arg;
	if (sc->err)
		return;
	char p[ENG_KEY_MAX + 1];
	int len = snprintf(p, sizeof p, "%s%s/", prefix, sc->ns);
	if (len < 0 || (size_t)len >= sizeof p)
		return;
	sc->gr = gr;
	eng_rd *rd;
	lp_err rc = eng_rd_begin(sc->n->s->e, &rd);
	if (rc == LP_OK) {
		struct eng_range_req q = {.prefix = p,
					  .prefix_len = (size_t)len};
		struct eng_range_res res;
		rc = eng_range(rd, &q, scan_one, sc, &res);
		eng_rd_end(rd);
	}
	if (rc)
		sc->err = rc;
}

/* "a. has 1 resource instances, b.g has 2 resource instances" (sorted) */
static void describe(const json_t *counts, const char *fmt, char *out, size_t n)
{
	size_t k = json_object_size(counts), i = 0;
	const char **names = calloc(k ? k : 1, sizeof *names);
	const char *name;
	json_t *v;
	out[0] = '\0';
	if (!names)
		return;
	json_object_foreach((json_t *)counts, name, v) names[i++] = name;
	for (size_t a = 1; a < k; a++) {
		for (size_t b = a; b > 0 && strcmp(names[b - 1], names[b]) > 0;
		     b--) {
			const char *t = names[b];
			names[b] = names[b - 1];
			names[b - 1] = t;
		}
	}
	size_t used = 0;
	for (i = 0; i < k && used < n; i++) {
		int w =
		    snprintf(out + used, n - used, fmt, i ? ", " : "", names[i],
			     (long long)json_integer_value(
				 json_object_get(counts, names[i])));
		if (w < 0)
			break;
		used += (size_t)w;
	}
	free(names);
}

/* ------------------------------------------------------------ conditions */

enum { N_COND = 5 };

struct status_edit {
	struct ctl_cond c[N_COND];
};

static bool edit_status(json_t *obj, void *arg)
{
	const struct status_edit *se = arg;
	if (!ctl_meta_str(obj, "deletionTimestamp"))
		return false;
	bool changed = false;
	for (int i = 0; i < N_COND; i++)
		changed |= ctl_set_condition(obj, &se->c[i]);
	return changed;
}

static int cmp_json_str(const void *a, const void *b)
{
	const char *x = json_string_value(*(json_t *const *)a);
	const char *y = json_string_value(*(json_t *const *)b);
	return strcmp(x ? x : "", y ? y : "");
}

/* kube's finalizeNamespace: spec.finalizers becomes the set of the
   others, sorted and without repeats (sets.String's List). */
static bool drop_spec_finalizer(json_t *obj, void *arg)
{
	(void)arg;
	json_t *f = json_object_get(json_object_get(obj, "spec"), "finalizers");
	if (!ctl_meta_str(obj, "deletionTimestamp") || !json_is_array(f))
		return false;
	size_t n = json_array_size(f), m = 0;
	json_t **v = malloc((n ? n : 1) * sizeof *v);
	if (!v)
		return false;
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_array_get(f, i);
		const char *t = json_string_value(x);
		if (t && strcmp(t, NS_FINALIZER))
			v[m++] = x;
	}
	qsort(v, m, sizeof *v, cmp_json_str);
	json_t *out = json_array();
	for (size_t i = 0; out && i < m; i++)
		if (!i || cmp_json_str(&v[i - 1], &v[i]))
			json_array_append(out, v[i]);
	free(v);
	bool changed = out && !json_equal(out, f);
	/* none left: the field goes (omitempty), as kube writes it */
	if (out && !m)
		json_object_del(json_object_get(obj, "spec"), "finalizers");
	else if (changed)
		json_object_set(json_object_get(obj, "spec"), "finalizers",
				out);
	json_decref(out);
	return changed || (out && !m);
}

/* finalized(): no finalizer left in spec at all */
static bool spec_finalized(const json_t *ns)
{
	return json_array_size(json_object_get(json_object_get(ns, "spec"),
					       "finalizers")) == 0;
}

/* ------------------------------------------------------------ sync */

/* Delete what is not being deleted yet; count delete failures. */
static lp_err delete_content(struct nsctl *n, const char *ns, size_t *failed,
			     char *why, size_t why_n)
{
	struct scan sc = {
	    .n = n, .ns = ns, .delete = true, .keys = json_array()};
	if (!sc.keys)
		return LP_E_NOMEM;
	n->s->ns_resources(n->s->ud, scan_resource, &sc);
	size_t i;
	json_t *p;
	json_array_foreach(sc.keys, i, p)
	{
		const char *key = json_string_value(json_array_get(p, 0));
		const char *uid = json_string_value(json_array_get(p, 1));
		lp_err rc = n->s->del(n->s->ud, key, uid, "Background");
		if (rc && rc != LP_E_NOTFOUND && rc != LP_E_CONFLICT) {
			if (!*failed)
				snprintf(why, why_n, "%s: %s", key,
					 lp_strerror(rc));
			(*failed)++;
		}
	}
	json_decref(sc.keys);
	return sc.err;
}

static lp_err ns_sync(void *ud, ctl *c, const char *name)
{
	struct nsctl *n = ud;
	const struct ctl_store *s = n->s;
	struct reg_key k;
	if (reg_object_key("", "namespaces", NULL, name, &k))
		return LP_OK;
	struct reg_obj cur = {0};
	lp_err rc = reg_get(s->e, &k, &cur);
	if (rc == LP_OK)
		rc = reg_obj_decode(&cur);
	if (rc) {
		reg_obj_free(&cur);
		if (rc == LP_E_NOTFOUND)
			settle_left(n, name, true);
		return rc == LP_E_NOTFOUND ? LP_OK : rc;
	}
	if (!ctl_meta_str(cur.obj, "deletionTimestamp") ||
	    spec_finalized(cur.obj)) {
		reg_obj_free(&cur);
		settle_left(n, name, true);
		return LP_OK;
	}
	int64_t left = settle_left(n, name, false);
	if (left > 0) {
		reg_obj_free(&cur);
		ctl_add_after(c, name, (unsigned)left);
		return LP_OK;
	}
	char uid[64];
	snprintf(uid, sizeof uid, "%s",
		 ctl_meta_str(cur.obj, "uid") ? ctl_meta_str(cur.obj, "uid")
					      : "");
	reg_obj_free(&cur);

	size_t failed = 0;
	char why[512] = "";
	rc = delete_content(n, name, &failed, why, sizeof why);
	if (rc)
		return rc;
	struct scan sc = {.n = n,
			  .ns = name,
			  .remaining = json_object(),
			  .finalizers = json_object()};
	if (!sc.remaining || !sc.finalizers) {
		json_decref(sc.remaining);
		json_decref(sc.finalizers);
		return LP_E_NOMEM;
	}
	s->ns_resources(s->ud, scan_resource, &sc);
	rc = sc.err;

	char fail_msg[700], rem_msg[1024], rem_list[900], fin_msg[1024],
	    fin_list[900];
	snprintf(fail_msg, sizeof fail_msg,
		 "Failed to delete all resource types, %zu remaining: %s",
		 failed, why);
	describe(sc.remaining, "%s%s has %lld resource instances", rem_list,
		 sizeof rem_list);
	snprintf(rem_msg, sizeof rem_msg, "Some resources are remaining: %s",
		 rem_list);
	describe(sc.finalizers, "%s%s in %lld resource instances", fin_list,
		 sizeof fin_list);
	snprintf(fin_msg, sizeof fin_msg,
		 "Some content in the namespace has finalizers remaining: %s",
		 fin_list);
	bool remain = json_object_size(sc.remaining) > 0;
	bool fins = json_object_size(sc.finalizers) > 0;
	struct status_edit se = {{
	    {"NamespaceDeletionDiscoveryFailure", "False",
	     "ResourcesDiscovered", "All resources successfully discovered"},
	    {"NamespaceDeletionGroupVersionParsingFailure", "False",
	     "ParsedGroupVersions",
	     "All legacy kube types successfully parsed"},
	    {"NamespaceDeletionContentFailure", failed ? "True" : "False",
	     failed ? "ContentDeletionFailed" : "ContentDeleted",
	     failed ? fail_msg
		    : "All content successfully deleted, may be waiting on "
		      "finalization"},
	    {"NamespaceContentRemaining", remain ? "True" : "False",
	     remain ? "SomeResourcesRemain" : "ContentRemoved",
	     remain ? rem_msg : "All content successfully removed"},
	    {"NamespaceFinalizersRemaining", fins ? "True" : "False",
	     fins ? "SomeFinalizersRemain" : "ContentHasNoFinalizers",
	     fins ? fin_msg : "All content-preserving finalizers finished"},
	}};
	json_decref(sc.remaining);
	json_decref(sc.finalizers);
	if (rc)
		return rc;
	rc = s->mutate(s->ud, k.bytes, uid, &as_status, edit_status, &se);
	if (rc)
		return rc == LP_E_NOTFOUND || rc == LP_E_CONFLICT ? LP_OK : rc;
	if (failed)
		return LP_E_AGAIN; /* retried with back-off */
	if (remain) {
		ctl_add_after(c, name, RECHECK_MS);
		return LP_OK;
	}
	rc = s->mutate(s->ud, k.bytes, uid, &as_finalize,
		       drop_spec_finalizer, NULL);
	if (rc == LP_OK) {
		lp_debug("namespace: %s finalized", name);
		settle_left(n, name, true);
	}
	return rc == LP_E_NOTFOUND || rc == LP_E_CONFLICT ? LP_OK : rc;
}

const struct ctl_def ctl_namespace = {
    .name = "namespace",
    .workers = 2,
    .init = ns_init,
    .fini = ns_fini,
    .observe = ns_observe,
    .sync = ns_sync,
};
