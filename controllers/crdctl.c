/*
 * crdctl.c -- the CRD finalizer controller: deletes a deleted CRD's custom
 * resources, then lets the CRD go (kube's apiextensions
 * pkg/controller/finalizer, in our words; reference §8.4).
 *
 * The first DELETE of a CRD marks it (deletionTimestamp, the finalizer
 * customresourcecleanup.apiextensions.k8s.io, Terminating True
 * InstanceDeletionPending: server/objects.c) and the API refuses new
 * instances (405). For such a CRD, sync:
 *  1. sets Terminating True / InstanceDeletionInProgress;
 *  2. deletes every instance, in every namespace, as DELETE would (an
 *     instance with finalizers is only marked and stays until they go);
 *  3. while instances remain: a re-check on each change under the CRD's
 *     instances, with a 5 s timer as a backstop; the condition stays
 *     InstanceDeletionInProgress for a minute, then, as kube's one-minute
 *     poll times out, says InstanceDeletionCheck "could not confirm zero
 *     CustomResources remaining: context deadline exceeded" until the
 *     next pass starts another minute;
 *  4. then Terminating False / InstanceDeletionCompleted "removed all
 *     instances", and drops the finalizer: the CRD goes (with it its
 *     serving entry, discovery and OpenAPI).
 * A CRD that was never Established gets Terminating False /
 * NeverEstablished and goes at once. An update of the CRD that only moves
 * its Terminating condition (this controller's own writes) does not
 * requeue it, as in kube: that would loop without end while instances
 * remain.
 * Queue keys are CRD names (<plural>.<group>).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "lapis/clock.h"
#include "lapis/log.h"
#include "registry/crdnames.h"
#include "registry/json.h"
#include "registry/registry.h"
#include "registry/store.h"

#define CLEANUP "customresourcecleanup.apiextensions.k8s.io"
#define RECHECK_MS 5000
/* how soon a sync looks again while creates are still in flight */
#define FENCE_MS 20
/* kube's finalizer polls a minute for the instances to go before it
   reports the poll's timeout; LAPIS_CRD_CLEANUP_WAIT_MS (a positive count
   of milliseconds) shortens it for tests */
#define WAIT_MS 60000
/* kube's finalizer starts on a deleted CRD only after its informer saw the
   deletion and its queue ran it, and writes the Terminating condition
   before it deletes anything: tens of milliseconds in which the
   instances are still served. A client that deletes them right after
   the CRD (kubectl delete -f of a manifest holding both) finds them
   there; lapis's controller, in a few hundred microseconds, had removed
   the endpoint first (404 for kubectl's next delete). So the first pass
   over a deleted CRD waits this long; LAPIS_CRD_CLEANUP_DELAY_MS sets it
   for tests. */
#define DELAY_MS 50

/* kube's CRD finalizer runs in kube-apiserver: conditions through
   status, the cleanup finalizer's removal through the object */
static const struct ctl_as as_status = {"kube-apiserver", "status"};
static const struct ctl_as as_main = {"kube-apiserver", NULL};

struct crdctl {
	const struct ctl_store *s;
	/* Terminating CRDs: name -> instance key prefix. Informer thread
	   only. */
	json_t *terminating;
	/* CRDs waiting for held instances: name -> when the current minute
	   of waiting began (ms, monotonic). The sync worker only (one). */
	json_t *waiting;
	int64_t wait_ms;
	/* deleted CRDs: name -> [uid, when a sync first saw that one (ms,
	   monotonic)]. The sync worker only. */
	json_t *seen;
	int64_t delay_ms;
};

static lp_err crd_init(const struct ctl_store *s, void **ud)
{
	struct crdctl *c = calloc(1, sizeof *c);
	if (!c)
		return LP_E_NOMEM;
	c->s = s;
	c->wait_ms = lp_env_ms("LAPIS_CRD_CLEANUP_WAIT_MS", WAIT_MS);
	c->delay_ms = lp_env_ms("LAPIS_CRD_CLEANUP_DELAY_MS", DELAY_MS);
	c->terminating = json_object();
	c->waiting = json_object();
	c->seen = json_object();
	if (!c->terminating || !c->waiting || !c->seen) {
		json_decref(c->terminating);
		json_decref(c->waiting);
		json_decref(c->seen);
		free(c);
		return LP_E_NOMEM;
	}
	*ud = c;
	return LP_OK;
}

static void crd_fini(void *ud)
{
	struct crdctl *c = ud;
	if (c) {
		json_decref(c->terminating);
		json_decref(c->waiting);
		json_decref(c->seen);
	}
	free(c);
}

/* The key prefix of a CRD's instances. */
static bool instance_prefix(const json_t *crd, struct reg_key *p)
{
	json_t *spec = json_object_get(crd, "spec");
	const char *group = json_string_value(json_object_get(spec, "group"));
	const char *plural = json_string_value(
	    json_object_get(json_object_get(spec, "names"), "plural"));
	return group && plural && !reg_list_prefix(group, plural, NULL, p);
}

/* obj without what this controller's own status writes change: its
   resourceVersion, managedFields and the Terminating condition (new). */
static json_t *sans_terminating(const json_t *obj)
{
	json_t *o = json_deep_copy(obj);
	json_t *m = json_object_get(o, "metadata");
	json_object_del(m, "resourceVersion");
	json_object_del(m, "managedFields");
	json_t *conds =
	    json_object_get(json_object_get(o, "status"), "conditions");
	size_t i;
	json_t *cnd;
	json_array_foreach(conds, i, cnd)
	{
		const char *t = json_string_value(json_object_get(cnd, "type"));
		if (t && !strcmp(t, "Terminating")) {
			json_array_remove(conds, i);
			break;
		}
	}
	return o;
}

/* kube's updateCustomResourceDefinition: an update that only moved the
   Terminating condition, which this controller writes on every pass, is
   no reason for another pass (requeueing on it loops without end). */
static bool only_terminating_moved(const json_t *old, const json_t *cur)
{
	if (!old || !cur)
		return false;
	json_t *a = sans_terminating(old), *b = sans_terminating(cur);
	bool same = a && b && json_equal(a, b);
	json_decref(a);
	json_decref(b);
	return same;
}

static void crd_observe(void *ud, ctl *c, struct ctl_ev *ev)
{
	struct crdctl *cc = ud;
	if (!strncmp(ev->key, CRD_PREFIX, strlen(CRD_PREFIX))) {
		const char *name = ev->key + strlen(CRD_PREFIX);
		if (ev->type == CTL_DELETE) {
			json_object_del(cc->terminating, name);
			return;
		}
		if (!ctl_ev_mentions(ev, CLEANUP))
			return;
		json_t *crd = ctl_ev_cur(ev);
		struct reg_key p;
		if (ctl_meta_str(crd, "deletionTimestamp") &&
		    ctl_has_finalizer(crd, CLEANUP) &&
		    instance_prefix(crd, &p)) {
			json_object_set_new(cc->terminating, name,
					    json_string(p.bytes));
			if (ev->type != CTL_UPDATE ||
			    !only_terminating_moved(ctl_ev_old(ev), crd))
				ctl_add(c, name);
		}
		return;
	}
	if (ev->type == CTL_ADD)
		return;
	const char *name;
	json_t *v;
	json_object_foreach(cc->terminating, name, v)
	{
		const char *p = json_string_value(v);
		if (p && !strncmp(ev->key, p, strlen(p)))
			ctl_add(c, name);
	}
}

/* ------------------------------------------------------------ instances */

struct scan {
	json_t *live; /* [[key, uid]] not being deleted yet */
	size_t count; /* every instance */
};

static enum eng_take scan_one(void *ud, const struct eng_record *rec)
{
	struct scan *sc = ud;
	sc->count++;
	json_t *o = reg_json_load((const char *)rec->value, rec->value_len,
				  JSON_ALLOW_NUL, NULL);
	if (json_is_object(o) && !ctl_meta_str(o, "deletionTimestamp")) {
		json_t *p =
		    json_pack("[s#s?]", (const char *)rec->key,
			      (int)rec->key_len, ctl_meta_str(o, "uid"));
		if (p)
			json_array_append_new(sc->live, p);
	}
	json_decref(o);
	return ENG_TAKE;
}

static lp_err scan(const struct ctl_store *s, const struct reg_key *p,
		   struct scan *sc)
{
	eng_rd *rd;
	lp_err rc = eng_rd_begin(s->e, &rd);
	if (rc)
		return rc;
	struct eng_range_req q = {.prefix = p->bytes, .prefix_len = p->len};
	struct eng_range_res res;
	rc = eng_range(rd, &q, scan_one, sc, &res);
	eng_rd_end(rd);
	return rc;
}

/* ------------------------------------------------------------ sync */

static bool set_cond(json_t *obj, void *arg)
{
	if (!ctl_meta_str(obj, "deletionTimestamp"))
		return false;
	return ctl_set_condition(obj, arg);
}

static bool drop_cleanup(json_t *obj, void *arg)
{
	(void)arg;
	return ctl_drop_finalizer(obj, CLEANUP);
}

/* The last step: the final Terminating condition, then the cleanup
   finalizer goes and the CRD with it. */
static lp_err let_go(const struct ctl_store *s, const struct reg_key *k,
		     const char *uid, struct ctl_cond *cond)
{
	lp_err rc = s->mutate(s->ud, k->bytes, uid, &as_status, set_cond, cond);
	if (rc == LP_OK)
		rc = s->mutate(s->ud, k->bytes, uid, &as_main, drop_cleanup, NULL);
	return rc == LP_E_NOTFOUND || rc == LP_E_CONFLICT ? LP_OK : rc;
}

static lp_err crd_sync(void *ud, ctl *c, const char *name)
{
	struct crdctl *cc = ud;
	const struct ctl_store *s = cc->s;
	struct reg_key k;
	if (reg_object_key(CRD_GROUP, CRD_RESOURCE, NULL, name, &k))
		return LP_OK;
	struct reg_obj cur = {0};
	lp_err rc = reg_get(s->e, &k, &cur);
	if (rc == LP_OK)
		rc = reg_obj_decode(&cur);
	struct reg_key p;
	if (rc || !ctl_meta_str(cur.obj, "deletionTimestamp") ||
	    !ctl_has_finalizer(cur.obj, CLEANUP) ||
	    !instance_prefix(cur.obj, &p)) {
		reg_obj_free(&cur);
		json_object_del(cc->waiting, name);
		json_object_del(cc->seen, name);
		return rc == LP_E_NOTFOUND ? LP_OK : rc;
	}
	char uid[64];
	snprintf(uid, sizeof uid, "%s",
		 ctl_meta_str(cur.obj, "uid") ? ctl_meta_str(cur.obj, "uid")
					      : "");
	bool established = false;
	size_t ci;
	json_t *cnd;
	json_array_foreach(
	    json_object_get(json_object_get(cur.obj, "status"), "conditions"),
	    ci, cnd)
	{
		const char *t = json_string_value(json_object_get(cnd, "type"));
		const char *st =
		    json_string_value(json_object_get(cnd, "status"));
		established = established ||
			      (t && st && !strcmp(t, "Established") &&
			       !strcmp(st, "True"));
	}
	reg_obj_free(&cur);
	/* kube's latency before its first pass (DELAY_MS) */
	{
		int64_t t = ctl_now_ms();
		json_t *seen = json_object_get(cc->seen, name);
		const char *su = json_string_value(json_array_get(seen, 0));
		if (!su || strcmp(su, uid)) {
			json_object_set_new(
			    cc->seen, name,
			    json_pack("[sI]", uid, (json_int_t)t));
			seen = json_object_get(cc->seen, name);
		}
		int64_t left =
		    seen ? cc->delay_ms -
			       (t - json_integer_value(json_array_get(seen, 1)))
			 : 0;
		if (left > 0) {
			ctl_add_after(c, name, left);
			return LP_OK;
		}
	}
	/* creates that passed the API server's terminating check before
	   it saw the deletion may still commit: none may once this is 0,
	   so what the scans below see is all there will be */
	if (s->crd_fence && s->crd_fence(s->ud, name, uid) > 0) {
		ctl_add_after(c, name, FENCE_MS);
		return LP_OK;
	}
	if (!established) {
		/* kube: nothing was ever served, so nothing to delete */
		struct ctl_cond never = {"Terminating", "False",
					 "NeverEstablished",
					 "resource was never established"};
		json_object_del(cc->seen, name);
		return let_go(s, &k, uid, &never);
	}

	struct ctl_cond cond = {"Terminating", "True",
				"InstanceDeletionInProgress",
				"CustomResource deletion is in progress"};
	rc = s->mutate(s->ud, k.bytes, uid, &as_status, set_cond, &cond);
	if (rc)
		return rc == LP_E_NOTFOUND || rc == LP_E_CONFLICT ? LP_OK : rc;
	struct scan sc = {.live = json_array()};
	if (!sc.live)
		return LP_E_NOMEM;
	rc = scan(s, &p, &sc);
	size_t i, failed = 0;
	json_t *it;
	lp_err first = LP_OK;
	json_array_foreach(sc.live, i, it)
	{
		lp_err d =
		    s->del(s->ud, json_string_value(json_array_get(it, 0)),
			   json_string_value(json_array_get(it, 1)), NULL);
		if (d && d != LP_E_NOTFOUND && d != LP_E_CONFLICT) {
			failed++;
			first = first ? first : d;
		}
	}
	json_decref(sc.live);
	char msg[256];
	if (rc || failed) {
		snprintf(msg, sizeof msg,
			 rc ? "could not list instances: %s"
			    : "could not issue all deletes: %s",
			 lp_strerror(rc ? rc : first));
		cond = (struct ctl_cond){"Terminating", "True",
					 "InstanceDeletionFailed", msg};
		s->mutate(s->ud, k.bytes, uid, &as_status, set_cond, &cond);
		return rc ? rc : first; /* retried with back-off */
	}
	sc = (struct scan){.live = json_array()};
	if (!sc.live)
		return LP_E_NOMEM;
	rc = scan(s, &p, &sc);
	json_decref(sc.live);
	if (rc)
		return rc;
	if (sc.count > 0) {
		/* InstanceDeletionInProgress stands for a minute of
		   waiting; then, as kube's poll times out, the check's
		   failure, and the next pass starts another minute */
		int64_t now = ctl_now_ms();
		json_t *since = json_object_get(cc->waiting, name);
		if (!json_is_integer(since)) {
			json_object_set_new(cc->waiting, name,
					    json_integer(now));
			since = json_object_get(cc->waiting, name);
		}
		ctl_add_after(c, name, RECHECK_MS);
		if (since && now - json_integer_value(since) < cc->wait_ms)
			return LP_OK;
		json_object_del(cc->waiting, name);
		lp_info("crd-finalizer: %s: %zu custom resources remain after "
			"%lld ms of waiting",
			name, sc.count, (long long)cc->wait_ms);
		cond = (struct ctl_cond){
		    "Terminating", "True", "InstanceDeletionCheck",
		    "could not confirm zero CustomResources remaining: "
		    "context deadline exceeded"};
		rc = s->mutate(s->ud, k.bytes, uid, &as_status, set_cond, &cond);
		return rc == LP_E_NOTFOUND || rc == LP_E_CONFLICT ? LP_OK : rc;
	}
	json_object_del(cc->waiting, name);
	cond = (struct ctl_cond){"Terminating", "False",
				 "InstanceDeletionCompleted",
				 "removed all instances"};
	json_object_del(cc->seen, name);
	return let_go(s, &k, uid, &cond);
}

const struct ctl_def ctl_crd_finalizer = {
    .name = "crd-finalizer",
    .workers = 1,
    .init = crd_init,
    .fini = crd_fini,
    .observe = crd_observe,
    .sync = crd_sync,
    .whole_prefix = CRD_PREFIX,
};
