/*
 * crd.c -- CustomResourceDefinitions: the CRD resource's strategy
 * (defaults, validation, names and conditions) and the serving map that turns
 * established CRDs into resource descriptors (reference §8).
 *
 * Threads: MHD pool threads read the map; writers of CRDs (any thread)
 * update it under map_mu.
 *
 * The serving map is an immutable, reference-counted snapshot published
 * through one RCU-protected pointer (liburcu's bulletproof flavor: MHD's pool
 * threads are not ours to register, see DESIGN notes in README). It holds
 * one reference-counted struct crdent per CRD (the CRD object and one
 * descriptor per served version) and a hash index by (group, version,
 * resource). A CRD write rebuilds that CRD's crdent only; the new map shares
 * every other crdent with the old one (pointer copies, O(CRDs)), so a
 * thousand CRDs cost a thousand schema compilations, not a million.
 *
 *   reader:  rcu_read_lock; m = rcu_dereference(cur); ref(m); rcu_read_unlock
 *            ... use m's descriptors ...; unref(m)
 *   writer:  lock map_mu; read the written CRD from the store; build its
 *            crdent; m' = m with that crdent replaced (others ref'd);
 *            rcu_xchg_pointer(cur, m'); call_rcu(old) -> unref(old); unlock
 *
 * Invariants:
 *  1. A snapshot and its crdents are never changed after they are published.
 *  2. A snapshot is freed when its last reference goes; the published
 *     pointer holds one, dropped only after a grace period, so a reader
 *     between rcu_dereference and ref never sees it freed. A crdent is freed
 *     with the last snapshot that holds it.
 *  3. The map is process-wide: one serving process per store.
 *  4. Only committed writes change it (srv_crd_after_write is not called
 *     for dry runs or failed writes; srv_crd_create and srv_crd_update
 *     rebuild only after their write commits), and each update re-reads
 *     the CRD from the store under map_mu, so concurrent writers converge
 *     on the store.
 *  5. Every naming decision (a create's, an update's, the crd-naming
 *     controller's) is made under map_mu from the map, and its status is
 *     committed and the CRD's entry rebuilt before map_mu is released: no
 *     two CRDs of a group accept one name (see "CRD hooks").
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu-bp.h>

#include "cadata.h"
#include "crd.h"
#include "fields.h"
#include "jsonpath.h"
#include "lapis/log.h"
#include "objects.h"
#include "registry/crdnames.h"
#include "registry/json.h"
#include "registry/object.h"
#include "registry/registry.h"
#include "registry/store.h"
#include "resources.h"
#include "schema.h"
#include "table.h"

static lp_err prep_cr_status(const struct srv_resource *r, json_t *obj,
			     const json_t *old, struct srv_error *err);

struct crdent;

struct srv_crd_info {
	struct srv_schema *schema; /* compiled openAPIV3Schema, or NULL */
	/* The storage version's, which prunes and defaults what a write of
	   another version stores (kube's schemaCoercingConverter): schema
	   itself for the storage version, else owned; NULL for Webhook CRDs
	   (fields pass unchanged, webhook_warning) or without a schema. */
	struct srv_schema *storage_schema;
	char *storage_version;
	bool status; /* status subresource enabled */
	bool scale;
	json_t *version; /* the CRD's spec.versions[i] (borrowed from crd) */
	const char *crd_name; /* metadata.name (borrowed from crd) */
	bool webhook;	      /* spec.conversion.strategy Webhook */
	/* Established: served when only its names are accepted (kube's
	   crdHandler), but in discovery and OpenAPI only then */
	bool established;
	char *deprecation;    /* the Warning for a deprecated version (owned) */
	char *webhook_warning; /* a non-storage version of a Webhook CRD:
				  the Warning every request carries (owned) */
	uint64_t serial;       /* unique per built entry: caches key on it */
	const struct crdent *owner; /* the CRD's serving state holding this */
};

static _Atomic uint64_t entry_serial;

/*
 * The creates of one CRD object (one uid) in flight, shared by every
 * serving state built for it. srv_crd_fence closes it when the CRD is
 * being deleted: a create that got past its terminating check before the
 * CRD's Terminating condition was published either committed before the
 * finalizer's last scan (which then sees and deletes it) or finds the
 * fence closed (its 405). Both sides use sequentially consistent atomics:
 * a create raises inflight and then reads closed, the finalizer sets
 * closed and then reads inflight, so at least one sees the other.
 */
struct crd_fence {
	_Atomic long refs; /* one per crdent holding it */
	_Atomic long inflight;
	_Atomic bool closed;
};

/* One served (CRD, version): a descriptor and what it owns. */
struct entry {
	struct srv_resource res;
	struct srv_crd_info info;
	const char **short_names;
	const char **categories;
	const char **subresources;
	const char **fields; /* selectableFields' paths, borrowed from the CRD */
	struct srv_column *columns;
	char **descs; /* column descriptions we made */
	size_t n_descs;
};

/*
 * One CRD's serving state, built from its stored object once and shared by
 * every map that holds it (a write of another CRD copies the pointer, not
 * the state). Immutable once built; freed when the last map holding it is.
 */
struct crdent {
	_Atomic long refs; /* one per map holding it */
	json_t *crd;	   /* the CRD object as stored (owned) */
	const char *name;  /* metadata.name, borrowed from crd */
	size_t n;	   /* served versions (0: not servable yet) */
	struct entry *e;
	/* none is served: e[0] is the storage version's, built for the
	   controllers alone (srv_resources_stored), never in a map's index */
	bool unserved;
	/* Reads prune and default, with the schema of the version an object
	   is stored in, every object last written before this revision (0:
	   none): the schemas changed since (kube coerces everything it reads
	   from etcd; we only what may have been written under other
	   schemas). See coerce_since. */
	int64_t coerce_rev;
	/* status.storedVersions names a version other than the storage
	   one: objects may be stored in it, and reads convert them. */
	bool mixed;
	/* Which storage serves it: kept across CRD writes that leave spec
	   and acceptedNames alone, new otherwise (kube tears the storage
	   down then, ending its watches). */
	uint64_t storage_id;
	bool torn; /* a new storage for a CRD that had one: announce it
		      (srv_crd_teardowns) once this state is published */
	struct crd_fence *fence; /* shared with prev when the same uid */
};

/* Counts storage teardowns (a CRD deleted, or its spec or accepted names
   changed): watches of custom resources look again when it moves. */
_Atomic uint64_t srv_crd_teardowns;
static _Atomic uint64_t storage_ids;
static _Atomic uint64_t map_gens; /* the last map's gen */

/*
 * A published map: every CRD (sorted by name) and a hash index of the served
 * descriptors by (group, version, resource). Immutable once published.
 */
struct crdmap {
	_Atomic long refs; /* readers + one for being published */
	/* Set (release) by the updater that unpublishes the map, read
	   (acquire) by the RCU callback: the updater's reads of the map
	   happen before its free also for ThreadSanitizer, which does not
	   see liburcu's own call_rcu hand-over. */
	_Atomic int retired;
	struct rcu_head rcu;
	uint64_t gen;	    /* srv_resources_hold_gen */
	size_t n;	    /* CRDs */
	struct crdent **c;  /* sorted by name */
	size_t n_res;	    /* served descriptors */
	struct entry **res; /* in CRD order */
	size_t hmask;	    /* hash capacity - 1 (a power of two) */
	struct entry **h;   /* open addressing, NULL = empty slot */
};

static struct crdmap *cur_map; /* RCU-protected; written under map_mu */
static pthread_mutex_t map_mu = PTHREAD_MUTEX_INITIALIZER;

/* The parker map_lock took from this thread, restored by map_unlock. A
   request's fiber would park in a commit made under map_mu, and its OS
   thread would run another fiber that then blocks on map_mu for good:
   under the lock, commits block the thread instead (writes.c's fibers
   park only with no lock held). */
static _Thread_local const struct eng_parker *map_saved_parker;

static void map_lock(void)
{
	pthread_mutex_lock(&map_mu);
	map_saved_parker = eng_set_parker(NULL);
}

static void map_unlock(void)
{
	eng_set_parker(map_saved_parker);
	map_saved_parker = NULL;
	pthread_mutex_unlock(&map_mu);
}

static void ent_unref(struct crdent *c)
{
	if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	for (size_t i = 0; i < c->n + c->unserved; i++) {
		free(c->e[i].short_names);
		free(c->e[i].categories);
		free(c->e[i].subresources);
		free(c->e[i].fields);
		for (struct srv_column *col = c->e[i].columns;
		     col && col->name; col++)
			srv_jsonpath_free((struct srv_jsonpath *)col->path);
		free(c->e[i].columns);
		if (c->e[i].info.storage_schema != c->e[i].info.schema)
			srv_schema_free(c->e[i].info.storage_schema);
		srv_schema_free(c->e[i].info.schema);
		free(c->e[i].info.deprecation);
		free(c->e[i].info.webhook_warning);
		for (size_t d = 0; d < c->e[i].n_descs; d++)
			free(c->e[i].descs[d]);
		free(c->e[i].descs);
	}
	free(c->e);
	if (c->fence && atomic_fetch_sub(&c->fence->refs, 1) == 1)
		free(c->fence);
	json_decref(c->crd);
	free(c);
}

static void map_unref(struct crdmap *m)
{
	if (!m || atomic_fetch_sub(&m->refs, 1) != 1)
		return;
	for (size_t i = 0; i < m->n; i++)
		ent_unref(m->c[i]);
	free(m->c);
	free(m->res);
	free(m->h);
	free(m);
}

static void map_free_rcu(struct rcu_head *h)
{
	struct crdmap *m = caa_container_of(h, struct crdmap, rcu);
	(void)atomic_load_explicit(&m->retired, memory_order_acquire);
	map_unref(m);
}

/* Hand an unpublished map to RCU: freed after a grace period. */
static void map_retire(struct crdmap *old)
{
	atomic_store_explicit(&old->retired, 1, memory_order_release);
	call_rcu(&old->rcu, map_free_rcu);
}

static struct crdmap *map_get(void)
{
	rcu_read_lock();
	/* rcu_dereference, spelled as the acquire load it is on every
	   architecture we run on, so ThreadSanitizer sees the ordering
	   (liburcu 0.13's volatile accesses are invisible to it). */
	struct crdmap *m = __atomic_load_n(&cur_map, __ATOMIC_ACQUIRE);
	if (m)
		atomic_fetch_add(&m->refs, 1);
	rcu_read_unlock();
	return m;
}

/* FNV-1a over group, version and resource, NUL-separated. */
static size_t gvr_hash(const char *g, const char *v, const char *r)
{
	uint64_t h = 14695981039346656037ull;
	const char *parts[3] = {g, v, r};
	for (int i = 0; i < 3; i++) {
		for (const unsigned char *p = (const unsigned char *)parts[i];
		     *p; p++)
			h = (h ^ *p) * 1099511628211ull;
		h = (h ^ 0) * 1099511628211ull;
	}
	return (size_t)h;
}

static const struct srv_resource *map_find(const struct crdmap *m,
					   const char *group,
					   const char *version,
					   const char *resource)
{
	if (!m->h)
		return NULL;
	for (size_t i = gvr_hash(group, version, resource) & m->hmask;;
	     i = (i + 1) & m->hmask) {
		const struct entry *e = m->h[i];
		if (!e)
			return NULL;
		const struct srv_resource *c = &e->res;
		if (!strcmp(c->resource, resource) &&
		    !strcmp(c->version, version) && !strcmp(c->group, group))
			return c;
	}
}

static size_t map_pos(const struct crdmap *m, const char *name, bool *found);
static const char *meta_of(const json_t *obj, const char *k);

bool srv_crd_enter(const struct srv_resource *r)
{
	struct crd_fence *f = r->crd ? r->crd->owner->fence : NULL;
	if (!f)
		return true;
	atomic_fetch_add(&f->inflight, 1);
	if (!atomic_load(&f->closed))
		return true;
	atomic_fetch_sub(&f->inflight, 1);
	return false;
}

void srv_crd_leave(const struct srv_resource *r)
{
	struct crd_fence *f = r->crd ? r->crd->owner->fence : NULL;
	if (f)
		atomic_fetch_sub(&f->inflight, 1);
}

long srv_crd_fence(const char *name, const char *uid)
{
	struct crdmap *m = map_get();
	bool found;
	size_t pos = map_pos(m, name, &found);
	long n = 0;
	if (found) {
		struct crdent *c = m->c[pos];
		const char *cuid = meta_of(c->crd, "uid");
		if (c->fence && cuid && uid && !strcmp(cuid, uid)) {
			atomic_store(&c->fence->closed, true);
			n = atomic_load(&c->fence->inflight);
		}
	}
	map_unref(m);
	return n;
}

bool srv_cr_current(const struct srv_resource *r)
{
	if (!r->crd)
		return true;
	struct crdmap *m = map_get();
	const struct srv_resource *c =
	    m ? map_find(m, r->group, r->version, r->resource) : NULL;
	bool same = c && c->crd &&
		    c->crd->owner->storage_id == r->crd->owner->storage_id;
	map_unref(m);
	return same;
}

void srv_resources_release(void *hold)
{
	map_unref(hold);
}

uint64_t srv_resources_hold_gen(const void *hold)
{
	return hold ? ((const struct crdmap *)hold)->gen : 0;
}

const struct srv_resource *srv_resource_lookup(const char *group,
					       const char *version,
					       const char *resource,
					       void **hold)
{
	*hold = NULL;
	const struct srv_resource *r =
	    srv_resource_find(group, version, resource);
	if (r)
		return r;
	struct crdmap *m = map_get();
	if (!m)
		return NULL;
	const struct srv_resource *c = map_find(m, group, version, resource);
	if (c) {
		*hold = m;
		return c;
	}
	map_unref(m);
	return NULL;
}

/* srv_resources_all, and with stored the unserved CRDs' entries */
static size_t resources(const struct srv_resource ***out, void **hold,
			bool stored)
{
	struct crdmap *m = map_get();
	size_t n = srv_n_builtin + (m ? m->n_res + (stored ? m->n : 0) : 0);
	const struct srv_resource **a = malloc((n ? n : 1) * sizeof *a);
	if (!a) {
		map_unref(m);
		*out = NULL;
		*hold = NULL;
		return 0;
	}
	size_t k = 0;
	for (size_t i = 0; i < srv_n_builtin; i++)
		a[k++] = &srv_builtin[i];
	for (size_t i = 0; m && i < m->n_res; i++)
		a[k++] = &m->res[i]->res;
	for (size_t i = 0; stored && m && i < m->n; i++)
		if (m->c[i]->unserved)
			a[k++] = &m->c[i]->e[0].res;
	*out = a;
	*hold = m;
	return k;
}

size_t srv_resources_all(const struct srv_resource ***out, void **hold)
{
	return resources(out, hold, false);
}

bool srv_cr_established(const struct srv_resource *r)
{
	return !r->crd || r->crd->established;
}

size_t srv_resources_stored(const struct srv_resource ***out, void **hold)
{
	return resources(out, hold, true);
}

/* ------------------------------------------------------------ building */

/* The strings of array a (or, with member, of its elements' member), NULL
   terminated and borrowed from a; NULL when there are none. */
static const char **str_list(const json_t *a, const char *member)
{
	size_t n = json_array_size(a);
	if (!n)
		return NULL;
	const char **v = calloc(n + 1, sizeof *v);
	if (!v)
		return NULL;
	size_t k = 0, i;
	json_t *s;
	json_array_foreach((json_t *)a, i, s) {
		const json_t *str = member ? json_object_get(s, member) : s;
		if (json_is_string(str))
			v[k++] = json_string_value(str);
	}
	return v;
}

static bool condition_true(const json_t *crd, const char *type)
{
	size_t i;
	json_t *c;
	json_array_foreach(
	    json_object_get(json_object_get(crd, "status"), "conditions"), i, c)
	{
		const char *t = json_string_value(json_object_get(c, "type"));
		const char *s = json_string_value(json_object_get(c, "status"));
		if (t && s && !strcmp(t, type))
			return !strcmp(s, "True");
	}
	return false;
}

json_t *srv_age_cell(const json_t *obj); /* table.c */

static json_t *cr_name_cell(const json_t *o)
{
	const char *s = json_string_value(
	    json_object_get(json_object_get(o, "metadata"), "name"));
	return json_string(s ? s : "");
}

/* The version's selectableFields as field selector labels: each jsonPath
   without its leading '.' ("spec.color"), borrowed from the CRD object
   (reference §3.6). NULL when it has none. */
static const char **selectable_fields(const json_t *sf)
{
	const char **v = str_list(sf, "jsonPath");
	size_t k = 0;
	for (size_t i = 0; v && v[i]; i++)
		if (v[i][0] == '.' && v[i][1])
			v[k++] = v[i] + 1;
	if (v)
		v[k] = NULL;
	return v;
}

/* Printer columns: Name, then the CRD's columns, or Age when it has none
   (reference §7.3). */
static void build_columns(struct entry *e, const json_t *apc)
{
	size_t n = json_array_size(apc);
	e->columns = calloc(n + 3, sizeof *e->columns);
	e->descs = n ? calloc(n, sizeof *e->descs) : NULL;
	if (!e->columns)
		return;
	struct srv_column *c = e->columns;
	*c++ = (struct srv_column){
	    "Name", "string", "name", SRV_DESC_NAME, 0, cr_name_cell, NULL};
	if (!n) {
		/* apiextensions' serveDefaultColumnsIfEmpty */
		*c++ = (struct srv_column){
		    "Age", "date", "", SRV_DESC_CREATED, 0, srv_age_cell, NULL};
	}
	size_t i;
	json_t *col;
	json_array_foreach((json_t *)apc, i, col)
	{
		const char *name =
		    json_string_value(json_object_get(col, "name"));
		const char *type =
		    json_string_value(json_object_get(col, "type"));
		const char *path =
		    json_string_value(json_object_get(col, "jsonPath"));
		if (!name || !type || !path)
			continue;
		/* kube's table convertor parses "{<jsonPath>}" with client-go;
		   the first column it cannot parse ends the list there */
		struct srv_jsonpath *jp = srv_jsonpath_column(path);
		if (!jp)
			break;
		const char *desc =
		    json_string_value(json_object_get(col, "description"));
		if (!desc && e->descs) {
			char buf[512];
			snprintf(buf, sizeof buf,
				 "Custom resource definition column (in "
				 "JSONPath format): %s",
				 path);
			e->descs[e->n_descs] = strdup(buf);
			desc = e->descs[e->n_descs];
			if (desc)
				e->n_descs++;
		}
		const char *fmt =
		    json_string_value(json_object_get(col, "format"));
		*c++ = (struct srv_column){
		    name,
		    type,
		    fmt ? fmt : "",
		    desc ? desc : "",
		    (int)json_integer_value(json_object_get(col, "priority")),
		    NULL,
		    path,
		    jp};
	}
	e->res.columns = e->columns;
}

/* kube's parseKubeVersion: v<major>[(alpha|beta)<minor>]; rank 0 alpha,
   1 beta, 2 GA. A number past Go's int (strconv.Atoi fails) is no kube
   version. */
static bool kube_version(const char *v, long *major, int *rank, long *minor)
{
	if (!v || v[0] != 'v' || !(v[1] >= '0' && v[1] <= '9'))
		return false;
	char *end;
	errno = 0;
	*major = strtol(v + 1, &end, 10);
	if (errno == ERANGE)
		return false;
	*rank = 2;
	*minor = 0;
	if (!*end)
		return true;
	if (!strncmp(end, "alpha", 5)) {
		*rank = 0;
		end += 5;
	} else if (!strncmp(end, "beta", 4)) {
		*rank = 1;
		end += 4;
	} else {
		return false;
	}
	if (!(*end >= '0' && *end <= '9'))
		return false;
	errno = 0;
	*minor = strtol(end, &end, 10);
	return !*end && errno != ERANGE;
}

/* kube's CompareKubeAwareVersionStrings: > 0 when a sorts before b in
   discovery (GA over beta over alpha, then higher numbers; versions that
   are not kube-like last, by name). */
int srv_kube_version_cmp(const char *a, const char *b)
{
	long amaj = 0, amin = 0, bmaj = 0, bmin = 0;
	int arank = 0, brank = 0;
	bool oka = kube_version(a, &amaj, &arank, &amin);
	bool okb = kube_version(b, &bmaj, &brank, &bmin);
	if (!strcmp(a, b))
		return 0;
	if (!oka || !okb)
		return !oka && !okb ? strcmp(b, a) : (oka ? 1 : -1);
	if (arank != brank)
		return arank - brank;
	if (amaj != bmaj)
		return amaj < bmaj ? -1 : 1;
	return amin == bmin ? 0 : (amin < bmin ? -1 : 1);
}

/*
 * The Warning a deprecated version carries (new), as apiextensions-apiserver
 * words it by default: "<group>/<version> <Kind> is deprecated", plus
 * "; use <group>/<newest> <Kind>" when a newer served, undeprecated version
 * exists. deprecationWarning replaces it.
 */
/*
 * lapis calls no conversion webhook: a version other than the storage
 * version of a Webhook CRD is converted as with strategy None (apiVersion
 * rewritten, fields as stored), and every request to it says so.
 */
static char *webhook_warning(const struct srv_resource *r,
			     const struct srv_crd_info *info)
{
	char *w = NULL;
	if (asprintf(&w,
		     "%s/%s %s: CustomResourceDefinition %s asks for webhook "
		     "conversion, which lapis does not call; objects are "
		     "converted to and from the storage version %s/%s as with "
		     "strategy None (apiVersion rewritten, fields unchanged)",
		     r->group, r->version, r->kind,
		     info->crd_name ? info->crd_name : "", r->group,
		     info->storage_version) < 0)
		return NULL;
	return w;
}

static char *deprecation_warning(const json_t *spec, const json_t *v)
{
	const char *custom =
	    json_string_value(json_object_get(v, "deprecationWarning"));
	if (custom)
		return strdup(custom);
	const char *group = json_string_value(json_object_get(spec, "group"));
	const char *name = json_string_value(json_object_get(v, "name"));
	const char *kind = json_string_value(
	    json_object_get(json_object_get(spec, "names"), "kind"));
	const char *best = NULL;
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(spec, "versions"), i, o)
	{
		const char *on = json_string_value(json_object_get(o, "name"));
		if (on && json_is_true(json_object_get(o, "served")) &&
		    !json_is_true(json_object_get(o, "deprecated")) &&
		    srv_kube_version_cmp(name, on) < 0 &&
		    (!best || srv_kube_version_cmp(on, best) > 0))
			best = on;
	}
	char buf[1024];
	int n = snprintf(buf, sizeof buf, "%s/%s %s is deprecated",
			 group ? group : "", name, kind ? kind : "");
	if (best && n > 0 && (size_t)n < sizeof buf)
		snprintf(buf + n, sizeof buf - (size_t)n, "; use %s/%s %s",
			 group ? group : "", best, kind ? kind : "");
	return strdup(buf);
}

/* Fill one served version's descriptor. */
static void build_entry(struct entry *e, const json_t *crd, const json_t *v,
			const char *storage)
{
	json_t *spec = json_object_get(crd, "spec");
	json_t *acc =
	    json_object_get(json_object_get(crd, "status"), "acceptedNames");
	struct srv_resource *r = &e->res;
	r->group = json_string_value(json_object_get(spec, "group"));
	r->version = json_string_value(json_object_get(v, "name"));
	r->resource = json_string_value(json_object_get(acc, "plural"));
	r->kind = json_string_value(json_object_get(acc, "kind"));
	r->list_kind = json_string_value(json_object_get(acc, "listKind"));
	if (!r->list_kind)
		r->list_kind = r->kind;
	r->singular = json_string_value(json_object_get(acc, "singular"));
	if (!r->singular)
		r->singular = "";
	e->short_names = str_list(json_object_get(acc, "shortNames"), NULL);
	e->categories = str_list(json_object_get(acc, "categories"), NULL);
	r->short_names = e->short_names;
	r->categories = e->categories;
	const char *scope = json_string_value(json_object_get(spec, "scope"));
	r->namespaced = !scope || strcmp(scope, "Cluster");
	r->verbs = SRV_V_ALL;
	r->terminating = condition_true(crd, "Terminating");
	json_t *sub = json_object_get(v, "subresources");
	e->info.status = json_object_get(sub, "status") != NULL;
	e->info.scale = json_object_get(sub, "scale") != NULL;
	e->subresources = calloc(3, sizeof *e->subresources);
	size_t ns = 0;
	if (e->subresources && e->info.status)
		e->subresources[ns++] = "status";
	if (e->subresources && e->info.scale)
		e->subresources[ns++] = "scale";
	r->subresources = ns ? e->subresources : NULL;
	e->fields = selectable_fields(json_object_get(v, "selectableFields"));
	r->fields = e->fields;
	r->unconditional_update = false;
	r->custom = true;
	e->info.storage_version = (char *)(storage ? storage : r->version);
	e->info.version = (json_t *)v;
	e->info.crd_name = json_string_value(
	    json_object_get(json_object_get(crd, "metadata"), "name"));
	const char *strategy = json_string_value(
	    json_object_get(json_object_get(spec, "conversion"), "strategy"));
	e->info.webhook = strategy && !strcmp(strategy, "Webhook");
	e->info.established = condition_true(crd, "Established");
	if (e->info.webhook && strcmp(r->version, e->info.storage_version))
		e->info.webhook_warning = webhook_warning(r, &e->info);
	if (json_is_true(json_object_get(v, "deprecated")))
		e->info.deprecation = deprecation_warning(spec, v);
	e->info.serial = atomic_fetch_add(&entry_serial, 1) + 1;
	r->crd = &e->info;
	r->prepare = srv_prep_cr;
	r->prepare_status = prep_cr_status;
	build_columns(e, json_object_get(v, "additionalPrinterColumns"));
	struct srv_error serr;
	srv_error_clear(&serr);
	json_t *sch =
	    json_object_get(json_object_get(v, "schema"), "openAPIV3Schema");
	if (sch && srv_schema_compile(sch, &e->info.schema, &serr))
		lp_warn("%s/%s %s: schema not compiled: %s", r->group,
			r->version, r->resource, serr.message);
	for (size_t w = 0; w < srv_schema_warning_count(e->info.schema); w++)
		lp_warn("%s/%s %s: %s", r->group, r->version, r->resource,
			srv_schema_warning(e->info.schema, w));
	if (!strcmp(r->version, e->info.storage_version)) {
		e->info.storage_schema = e->info.schema;
		return;
	}
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(spec, "versions"), i, o)
	{
		const char *on = json_string_value(json_object_get(o, "name"));
		json_t *ss = json_object_get(json_object_get(o, "schema"),
					     "openAPIV3Schema");
		if (e->info.webhook || !on ||
		    strcmp(on, e->info.storage_version) || !ss)
			continue;
		srv_error_clear(&serr);
		if (srv_schema_compile(ss, &e->info.storage_schema, &serr))
			e->info.storage_schema = NULL;
	}
}

/* What decides how stored objects are pruned and defaulted: every
   version's name and schema, and spec.preserveUnknownFields. New. */
static json_t *coercion_part(const json_t *crd)
{
	json_t *spec = json_object_get(crd, "spec");
	json_t *out = json_object(), *vs = json_array();
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(spec, "versions"), i, v)
	{
		json_t *x = json_object();
		json_t *n = json_object_get(v, "name"),
		       *sch = json_object_get(v, "schema");
		if (n)
			json_object_set(x, "name", n);
		if (sch)
			json_object_set(x, "schema", sch);
		json_array_append_new(vs, x);
	}
	json_object_set_new(out, "versions", vs);
	json_t *p = json_object_get(spec, "preserveUnknownFields");
	if (p)
		json_object_set(out, "preserveUnknownFields", p);
	return out;
}

static int64_t meta_int(const json_t *obj, const char *k)
{
	json_t *v = json_object_get(json_object_get(obj, "metadata"), k);
	if (json_is_integer(v))
		return (int64_t)json_integer_value(v);
	const char *s = json_string_value(v);
	return s ? strtoll(s, NULL, 10) : 0;
}

/* Whether prev (NULL: none) is the state of the same CRD object as crd:
   the same uid, not one deleted and created again under its name. */
static bool same_crd(const json_t *crd, const struct crdent *prev)
{
	const char *uid = json_string_value(
	    json_object_get(json_object_get(crd, "metadata"), "uid"));
	const char *puid =
	    prev ? json_string_value(json_object_get(
		       json_object_get(prev->crd, "metadata"), "uid"))
		 : NULL;
	return uid && puid && !strcmp(uid, puid);
}

/*
 * The revision before which stored objects of crd may have been written
 * under other schemas (ent->coerce_rev). prev is the same CRD's state
 * before this write, if the server has one. Unchanged schemas keep prev's
 * revision; changed ones give this write's. Without prev (start-up, or a
 * CRD created or recreated now), a CRD whose spec never changed
 * (generation 1) had no other schemas; one whose spec did may have, and
 * we no longer know when: every object older than the CRD's last write
 * is coerced (until it is written again). A write of a CR that read the
 * old schema and commits after the CRD's update is not coerced.
 */
static int64_t coerce_since(const json_t *crd, const struct crdent *prev)
{
	int64_t rv = meta_int(crd, "resourceVersion");
	if (!same_crd(crd, prev))
		return meta_int(crd, "generation") > 1 ? rv : 0;
	json_t *a = coercion_part(crd), *b = coercion_part(prev->crd);
	bool same = json_equal(a, b);
	json_decref(a);
	json_decref(b);
	return same ? prev->coerce_rev : rv;
}

/* Whether crd keeps prev's storage: the same object (uid), spec and
   accepted names (kube's crdHandler rebuilds the storage otherwise). */
static bool same_storage(const json_t *crd, const struct crdent *prev)
{
	return same_crd(crd, prev) &&
	       json_equal(json_object_get(crd, "spec"),
			  json_object_get(prev->crd, "spec")) &&
	       json_equal(json_object_get(json_object_get(crd, "status"),
					  "acceptedNames"),
			  json_object_get(json_object_get(prev->crd, "status"),
					  "acceptedNames"));
}

/* Whether status.storedVersions names a version other than storage. */
static bool stored_elsewhere(const json_t *crd, const char *storage)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(json_object_get(crd, "status"),
					   "storedVersions"),
			   i, v)
	{
		const char *s = json_string_value(v);
		if (s && (!storage || strcmp(s, storage)))
			return true;
	}
	return false;
}

/* A CRD's serving state (crd taken), or NULL when out of memory; prev is
   its state before (NULL: none). A CRD whose names are neither accepted
   nor established serves nothing. */
static struct crdent *ent_new(json_t *crd, const struct crdent *prev)
{
	struct crdent *c = calloc(1, sizeof *c);
	if (!c) {
		json_decref(crd);
		return NULL;
	}
	atomic_store(&c->refs, 1);
	c->crd = crd;
	c->name = json_string_value(
	    json_object_get(json_object_get(crd, "metadata"), "name"));
	if (!c->name)
		c->name = "";
	if (same_crd(crd, prev) && prev->fence) {
		c->fence = prev->fence;
		atomic_fetch_add(&c->fence->refs, 1);
	} else {
		c->fence = calloc(1, sizeof *c->fence);
		if (!c->fence) {
			ent_unref(c);
			return NULL;
		}
		atomic_store(&c->fence->refs, 1);
	}
	json_t *spec = json_object_get(crd, "spec");
	json_t *acc =
	    json_object_get(json_object_get(crd, "status"), "acceptedNames");
	const char *group = json_string_value(json_object_get(spec, "group"));
	const char *plural = json_string_value(json_object_get(acc, "plural"));
	const char *kind = json_string_value(json_object_get(acc, "kind"));
	if ((!condition_true(crd, "Established") &&
	     !condition_true(crd, "NamesAccepted")) ||
	    !group || !plural || !*plural || !kind || !*kind)
		return c;
	json_t *versions = json_object_get(spec, "versions");
	const char *storage = NULL;
	size_t j;
	json_t *v;
	json_array_foreach(versions, j,
			   v) if (json_is_true(json_object_get(v, "storage")))
	    storage = json_string_value(json_object_get(v, "name"));
	c->coerce_rev = coerce_since(crd, prev);
	c->mixed = stored_elsewhere(crd, storage);
	c->storage_id = same_storage(crd, prev)
			    ? prev->storage_id
			    : atomic_fetch_add(&storage_ids, 1) + 1;
	c->torn = prev && c->storage_id != prev->storage_id;
	c->e = calloc(json_array_size(versions) + 1, sizeof *c->e);
	if (!c->e) {
		ent_unref(c);
		return NULL;
	}
	json_array_foreach(versions, j, v)
	{
		if (json_is_true(json_object_get(v, "served")) &&
		    json_string_value(json_object_get(v, "name"))) {
			c->e[c->n].info.owner = c;
			build_entry(&c->e[c->n++], crd, v, storage);
		}
	}
	json_array_foreach(versions, j, v)
	{
		if (c->n || !storage ||
		    !json_is_true(json_object_get(v, "storage")))
			continue;
		c->e[0].info.owner = c;
		build_entry(&c->e[0], crd, v, storage);
		c->unserved = true;
		break;
	}
	return c;
}

/* A map over the CRDs c[0..n) (sorted by name; references taken), with its
   descriptor list and hash index. NULL when out of memory (the references
   are dropped then). */
static struct crdmap *map_new(struct crdent **c, size_t n)
{
	struct crdmap *m = calloc(1, sizeof *m);
	if (!m) {
		for (size_t i = 0; i < n; i++)
			ent_unref(c[i]);
		free(c);
		return NULL;
	}
	atomic_store(&m->refs, 1);
	m->gen = atomic_fetch_add(&map_gens, 1) + 1;
	m->c = c;
	m->n = n;
	size_t n_res = 0;
	for (size_t i = 0; i < n; i++)
		n_res += c[i]->n;
	size_t cap = 16;
	while (cap < 2 * n_res)
		cap *= 2;
	m->res = malloc((n_res ? n_res : 1) * sizeof *m->res);
	m->h = calloc(cap, sizeof *m->h);
	if (!m->res || !m->h) {
		map_unref(m);
		return NULL;
	}
	m->hmask = cap - 1;
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < c[i]->n; j++) {
			struct entry *e = &c[i]->e[j];
			const struct srv_resource *r = &e->res;
			/* The first CRD to hold a (group, version, resource)
			   serves it; naming keeps plurals unique per group. */
			if (map_find(m, r->group, r->version, r->resource))
				continue;
			m->res[m->n_res++] = e;
			size_t k = gvr_hash(r->group, r->version, r->resource) &
				   m->hmask;
			while (m->h[k])
				k = (k + 1) & m->hmask;
			m->h[k] = e;
		}
	}
	return m;
}

/* Publish m (may be NULL: nothing changes); the old map goes after a grace
   period. Call with map_mu held. */
static void publish(struct crdmap *m)
{
	if (!m)
		return;
	struct crdmap *old = __atomic_exchange_n(&cur_map, m, __ATOMIC_ACQ_REL);
	if (old)
		map_retire(old);
}

/* The published map without taking a reference. Call with map_mu held:
   only updaters replace it. */
static struct crdmap *map_locked(void)
{
	return __atomic_load_n(&cur_map, __ATOMIC_ACQUIRE);
}

/* Index of the first CRD whose name is >= name. */
static size_t map_pos(const struct crdmap *m, const char *name, bool *found)
{
	size_t lo = 0, hi = m ? m->n : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(m->c[mid]->name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = m && lo < m->n && !strcmp(m->c[lo]->name, name);
	return lo;
}

/* Replace, add or (ent NULL) remove the CRD named name, sharing every other
   CRD's state with the current map. Takes ent. Call with map_mu held. */
static void map_set(const char *name, struct crdent *ent)
{
	struct crdmap *old = map_locked();
	bool found;
	size_t pos = map_pos(old, name, &found);
	size_t n_old = old ? old->n : 0;
	size_t n = n_old + (ent && !found) - (!ent && found);
	if (!ent && !found)
		return;
	struct crdent **c = malloc((n ? n : 1) * sizeof *c);
	if (!c) {
		ent_unref(ent);
		return;
	}
	size_t k = 0;
	for (size_t i = 0; i < n_old; i++) {
		if (i == pos && ent)
			c[k++] = ent;
		if (i == pos && found)
			continue;
		atomic_fetch_add(&old->c[i]->refs, 1);
		c[k++] = old->c[i];
	}
	if (pos == n_old && ent)
		c[k++] = ent;
	publish(map_new(c, k));
}

static lp_err crd_key(const char *name, struct reg_key *k)
{
	return reg_object_key("apiextensions.k8s.io",
			      "customresourcedefinitions", NULL, name, k);
}

/* The engine tracks every version ent serves (NULL ok), so that watches of
   a quiet one outlive compaction (srv_watch_track). */
static void track(eng *e, const struct crdent *ent)
{
	for (size_t i = 0; ent && i < ent->n; i++)
		srv_watch_track(e, &ent->e[i].res);
}

/* Rebuild the entry of the CRD named name from the store (removed when the
   store has none). Returns the stored CRD (new) or NULL. Call with map_mu
   held. */
static json_t *reload_one(eng *e, const char *name)
{
	struct reg_key k;
	if (crd_key(name, &k))
		return NULL;
	struct reg_obj c = {0};
	lp_err rc = reg_get(e, &k, &c);
	if (!rc)
		rc = reg_obj_decode(&c);
	if (rc == LP_E_NOTFOUND) {
		reg_obj_free(&c);
		struct crdmap *cur = map_locked();
		bool had;
		map_pos(cur, name, &had);
		map_set(name, NULL);
		/* after the publish: a watch that sees the count move must
		   find the map without the CRD */
		if (had)
			atomic_fetch_add(&srv_crd_teardowns, 1);
		return NULL;
	}
	if (rc) {
		lp_error("cannot read CRD %s: %s", name, lp_strerror(rc));
		reg_obj_free(&c);
		return NULL;
	}
	json_t *crd = json_incref(c.obj);
	reg_obj_free(&c);
	/* The entry owns a copy: readers drop entries on other threads,
	   and jansson's reference count orders no free after a decrement
	   (release only), so no json_t is shared between the two. */
	struct crdmap *m = map_locked();
	bool found;
	size_t pos = map_pos(m, name, &found);
	struct crdent *ent =
	    ent_new(json_deep_copy(crd), found ? m->c[pos] : NULL);
	track(e, ent);
	bool torn = ent && ent->torn;
	if (ent)
		map_set(name, ent);
	if (torn) /* after the publish, as above */
		atomic_fetch_add(&srv_crd_teardowns, 1);
	return crd;
}

struct collect {
	json_t *a;
};

static enum eng_take collect_cb(void *ud, const struct eng_record *rec)
{
	struct collect *c = ud;
	json_t *o = reg_json_load((const char *)rec->value, rec->value_len,
				  JSON_ALLOW_NUL, NULL);
	if (o)
		json_array_append_new(c->a, o);
	return ENG_TAKE;
}

static int cmp_ent(const void *a, const void *b)
{
	return strcmp((*(struct crdent *const *)a)->name,
		      (*(struct crdent *const *)b)->name);
}

/* Rebuild the whole map from the store (start-up, deletecollection). Call
   with map_mu held. */
static void reload_all(eng *e)
{
	struct reg_key prefix;
	if (reg_list_prefix("apiextensions.k8s.io", "customresourcedefinitions",
			    NULL, &prefix))
		return;
	struct collect col = {.a = json_array()};
	struct reg_list_req q = {.prefix = &prefix};
	struct reg_list_res res;
	lp_err rc = reg_list(e, &q, collect_cb, &col, &res);
	free(res.token);
	if (rc) {
		lp_error("cannot read CRDs: %s", lp_strerror(rc));
		json_decref(col.a);
		return;
	}
	size_t n = json_array_size(col.a), k = 0;
	struct crdent **c = malloc((n ? n : 1) * sizeof *c);
	struct crdmap *old = map_locked();
	for (size_t i = 0; c && i < n; i++) {
		json_t *crd = json_array_get(col.a, i);
		const char *nm = json_string_value(
		    json_object_get(json_object_get(crd, "metadata"), "name"));
		bool found = false;
		size_t pos = nm ? map_pos(old, nm, &found) : 0;
		struct crdent *ent =
		    ent_new(json_deep_copy(crd), found ? old->c[pos] : NULL);
		track(e, ent);
		if (ent)
			c[k++] = ent;
	}
	json_decref(col.a);
	if (!c)
		return;
	qsort(c, k, sizeof *c, cmp_ent);
	publish(map_new(c, k));
	/* CRDs may have gone: watches look again (srv_cr_current), once the
	   new map is published */
	if (old)
		atomic_fetch_add(&srv_crd_teardowns, 1);
}

void srv_crds_refresh(eng *e)
{
	map_lock();
	reload_all(e);
	map_unlock();
}

void srv_crds_shutdown(void)
{
	map_lock();
	struct crdmap *old =
	    __atomic_exchange_n(&cur_map, NULL, __ATOMIC_ACQ_REL);
	map_unlock();
	if (old)
		map_retire(old);
	rcu_barrier();
}

/* ------------------------------------------------------------ CRD strategy */

/* kube's complaints about s under rule (utilvalidation's texts), joined
   by "," as apiextensions joins them; false when s passes. */
static bool name_errs(enum srv_name_rule rule, const char *s, char *buf,
		      size_t n)
{
	const char *msgs[2];
	int k = srv_name_problems(rule, s, msgs);
	snprintf(buf, n, "%s%s%s", k ? msgs[0] : "", k > 1 ? "," : "",
		 k > 1 ? msgs[1] : "");
	return k > 0;
}

/* A DNS-1035 cause of field (value quoted; mixed: kind's lower case form,
   "may have mixed case, but should otherwise match: ..."). */
static void dns1035_cause(struct srv_error *err, const char *field,
			  const char *value, bool mixed)
{
	char low[300], why[600], q[300];
	size_t i = 0;
	for (; value[i] && i < sizeof low - 1; i++)
		low[i] = mixed && value[i] >= 'A' && value[i] <= 'Z'
				 ? (char)(value[i] + 32)
				 : value[i];
	low[i] = 0;
	if (!name_errs(SRV_RULE_DNS1035, low, why, sizeof why))
		return;
	srv_go_quote(value, q, sizeof q);
	srv_error_cause(err, "FieldValueInvalid", field, "Invalid value: %s: %s%s",
			q, mixed ? "may have mixed case, but should otherwise match: " : "",
			why);
}

static void lower(const char *s, char *out, size_t n)
{
	size_t i = 0;
	for (; s && s[i] && i < n - 1; i++)
		out[i] =
		    (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] + 32 : s[i]);
	out[i] = 0;
}

static json_t *obj_child(json_t *o, const char *k)
{
	json_t *c = json_object_get(o, k);
	if (!json_is_object(c)) {
		c = json_object();
		json_object_set_new(o, k, c);
	}
	return c;
}

static lp_err crd_invalid(const json_t *obj, struct srv_error *err)
{
	return srv_error_invalid(
	    err, "CustomResourceDefinition", "apiextensions.k8s.io",
	    json_string_value(
		json_object_get(json_object_get(obj, "metadata"), "name")));
}

static const json_t *version_schema(const json_t *v)
{
	return json_object_get(json_object_get(v, "schema"), "openAPIV3Schema");
}

static bool status_enabled(const json_t *v)
{
	return json_object_get(json_object_get(v, "subresources"), "status") !=
	       NULL;
}

/* The schema the old CRD had for the version named like v, or NULL. */
static const json_t *old_schema(const json_t *old, const json_t *v)
{
	const char *name = json_string_value(json_object_get(v, "name"));
	size_t i;
	json_t *ov;
	json_array_foreach(
	    json_object_get(json_object_get(old, "spec"), "versions"), i, ov)
	{
		const char *on = json_string_value(json_object_get(ov, "name"));
		if (name && on && !strcmp(name, on))
			return version_schema(ov);
	}
	return NULL;
}

/*
 * The versions' schemas: they must compile (a keyword of the wrong JSON
 * type is a 400, as kube's decoder answers) and be structural and within
 * kube's OpenAPI restrictions (422 causes). Paths as kube reports them:
 * when every version has the same schema, kube's conversion to its
 * internal form hoists it to spec.validation. On update, a schema equal
 * to the old one of the same version is not checked again, so CRDs
 * stored before a rule existed stay updatable (kube relaxes its rules for
 * what the old object already had, too).
 */
static lp_err check_schemas(const json_t *versions, const json_t *old,
			    struct srv_error *err)
{
	size_t n = json_array_size(versions), i;
	json_t *v;
	bool same = n > 0, any_status = false;
	json_array_foreach((json_t *)versions, i, v)
	{
		same = same &&
		       json_equal(version_schema(v),
				  version_schema(json_array_get(versions, 0)));
		any_status = any_status || status_enabled(v);
	}
	json_array_foreach((json_t *)versions, i, v)
	{
		const json_t *sch = version_schema(v);
		if (!json_is_object(sch))
			continue;
		struct srv_schema *compiled = NULL;
		lp_err rc = srv_schema_compile(sch, &compiled, err);
		srv_schema_free(compiled);
		if (rc)
			return rc;
		if (same && i > 0)
			continue;
		const json_t *os = old ? old_schema(old, v) : NULL;
		if (os && json_equal(os, sch))
			continue;
		char base[64];
		if (same)
			snprintf(base, sizeof base, "spec.validation");
		else
			snprintf(base, sizeof base, "spec.versions[%zu].schema",
				 i);
		srv_schema_check_crd(
		    sch, base, same ? any_status : status_enabled(v), old, err);
	}
	return LP_OK;
}

/* kube's validateDeprecationWarning for version i. */
static void check_deprecation(const json_t *v, size_t i, struct srv_error *err)
{
	const json_t *w = json_object_get(v, "deprecationWarning");
	if (!json_is_string(w))
		return;
	const char *t = json_string_value(w);
	char f[64], q[600];
	snprintf(f, sizeof f, "spec.versions[%zu].deprecationWarning", i);
	srv_go_quote(t, q, sizeof q);
	if (!json_is_true(json_object_get(v, "deprecated"))) {
		srv_error_cause(err, "FieldValueInvalid", f,
				"Invalid value: %s: can only be set for deprecated versions", q);
		return;
	}
	if (strlen(t) > 256)
		srv_error_cause(err, "FieldValueInvalid", f,
				"Invalid value: %s: must be <= 256 characters long", q);
	if (!*t)
		srv_error_cause(err, "FieldValueInvalid", f,
				"Invalid value: \"\": must not be an empty string");
	for (size_t k = 0; t[k]; k++)
		if ((unsigned char)t[k] < 0x20 || t[k] == 0x7f) {
			srv_error_cause(err, "FieldValueInvalid", f,
					"Invalid value: %s: must only contain printable UTF-8 characters; non-printable character found at index %zu",
					q, k);
			break;
		}
}

/* kube's validateSimpleJSONPath: a cause (false) unless s starts with '.'. */
static bool simple_path(const char *field, const char *s, struct srv_error *err)
{
	char q[300];
	srv_go_quote(s, q, sizeof q);
	if (!*s) {
		srv_error_cause(err, "FieldValueInvalid", field,
				"Invalid value: \"\": must not be empty");
		return false;
	}
	if (s[0] != '.') {
		srv_error_cause(err, "FieldValueInvalid", field,
				"Invalid value: %s: must be a simple json path starting with .", q);
		return false;
	}
	return true;
}

/* The printer columns and scale paths of every version (reference §8.2),
   at kube's paths: its conversion to the internal form hoists them to
   spec.additionalPrinterColumns / spec.subresources when all versions
   have the same ones. */
static void check_columns_and_scale(const json_t *versions,
				    struct srv_error *err)
{
	static const char *const types[] = {"boolean", "date", "integer",
					    "number", "string"};
	static const char *const formats[] = {"byte", "date", "date-time",
					      "double", "float", "int32",
					      "int64", "password"};
	for (int what = 0; what < 2; what++) {
		const char *member = what ? "subresources" : "additionalPrinterColumns";
		size_t n = json_array_size(versions), i;
		bool same = n > 0;
		for (i = 1; i < n; i++)
			same = same && json_equal(json_object_get(json_array_get(versions, i), member),
						  json_object_get(json_array_get(versions, 0), member));
		json_t *v;
		json_array_foreach((json_t *)versions, i, v) {
			if (same && i > 0)
				break;
			char base[64];
			if (same)
				snprintf(base, sizeof base, "spec");
			else
				snprintf(base, sizeof base, "spec.versions[%zu]", i);
			const json_t *m = json_object_get(v, member);
			if (what == 0) {
				size_t j;
				json_t *c;
				json_array_foreach((json_t *)m, j, c) {
					char f[128], q[300];
					const char *cn = json_string_value(json_object_get(c, "name"));
					const char *ct = json_string_value(json_object_get(c, "type"));
					const char *cf = json_string_value(json_object_get(c, "format"));
					const char *cp = json_string_value(json_object_get(c, "jsonPath"));
					snprintf(f, sizeof f, "%s.additionalPrinterColumns[%zu].name", base, j);
					if (!cn || !*cn)
						srv_error_cause(err, "FieldValueRequired", f, "Required value");
					snprintf(f, sizeof f, "%s.additionalPrinterColumns[%zu].type", base, j);
					bool tok = false;
					for (size_t k = 0; ct && k < 5; k++)
						tok = tok || !strcmp(ct, types[k]);
					if (!ct || !*ct) {
						srv_error_cause(err, "FieldValueRequired", f,
								"Required value: must be one of boolean,date,integer,number,string");
					} else if (!tok) {
						srv_go_quote(ct, q, sizeof q);
						srv_error_cause(err, "FieldValueInvalid", f,
								"Invalid value: %s: must be one of boolean,date,integer,number,string", q);
					}
					bool fok = !cf || !*cf;
					for (size_t k = 0; !fok && k < 8; k++)
						fok = !strcmp(cf, formats[k]);
					if (!fok) {
						snprintf(f, sizeof f, "%s.additionalPrinterColumns[%zu].format", base, j);
						srv_go_quote(cf, q, sizeof q);
						srv_error_cause(err, "FieldValueInvalid", f,
								"Invalid value: %s: must be one of byte,date,date-time,double,float,int32,int64,password", q);
					}
					snprintf(f, sizeof f, "%s.additionalPrinterColumns[%zu].JSONPath", base, j);
					if (!cp || !*cp)
						srv_error_cause(err, "FieldValueRequired", f, "Required value");
					else
						simple_path(f, cp, err);
				}
				continue;
			}
			const json_t *sc = json_object_get(m, "scale");
			if (!json_is_object(sc))
				continue;
			static const struct {
				const char *key, *prefix, *under;
				bool required;
			} ps[] = {{"specReplicasPath", ".spec.", "should be a json path under .spec", true},
				  {"statusReplicasPath", ".status.", "should be a json path under .status", true},
				  {"labelSelectorPath", NULL, "should be a json path under either .spec or .status", false}};
			for (size_t k = 0; k < 3; k++) {
				char f[128], q[300];
				snprintf(f, sizeof f, "%s.subresources.scale.%s", base, ps[k].key);
				const char *p = json_string_value(json_object_get(sc, ps[k].key));
				if (!p || !*p) {
					if (ps[k].required)
						srv_error_cause(err, "FieldValueRequired", f, "Required value");
					continue;
				}
				if (!simple_path(f, p, err))
					continue;
				bool ok = ps[k].prefix ? !strncmp(p, ps[k].prefix, strlen(ps[k].prefix))
						       : !strncmp(p, ".spec.", 6) || !strncmp(p, ".status.", 8);
				if (!ok) {
					srv_go_quote(p, q, sizeof q);
					srv_error_cause(err, "FieldValueInvalid", f,
							"Invalid value: %s: %s", q, ps[k].under);
				}
			}
		}
	}
}

/*
 * The schema node a selectable field's jsonPath names, as kube's
 * cel.ValidFieldPath walks a structural schema without array notation:
 * ".name" steps into properties (the name must be one) or, where the node
 * has none, into additionalProperties (any key). NULL with the reason in
 * why (and *root the first name) when the path does not resolve; a node
 * of additionalProperties: true resolves to NULL with why empty.
 */
static const json_t *field_path_node(const json_t *sch, const char *p,
				     char *why, size_t wn, char *root,
				     size_t rn)
{
	const json_t *node = sch;
	bool first = true;
	*why = 0;
	while (*p) {
		if (*p == '[') {
			snprintf(why, wn, "array notation is not allowed");
			return NULL;
		}
		if (*p != '.') {
			snprintf(why, wn, "expected [ or . but got: %.*s",
				 (int)strcspn(p, ".[]"), p);
			return NULL;
		}
		p++;
		if (!*p) {
			snprintf(why, wn, "unexpected end of JSON path");
			return NULL;
		}
		/* a name, or a lone delimiter read as one ("..": ".") */
		size_t n = strcspn(p, ".[]");
		if (!n)
			n = 1;
		if (first)
			snprintf(root, rn, "%.*s", (int)n, p);
		first = false;
		const json_t *props = json_object_get(node, "properties");
		const json_t *addl = json_object_get(node, "additionalProperties");
		if (json_is_object(props)) {
			node = json_object_getn(props, p, n);
		} else if (json_is_object(addl)) {
			node = addl;
		} else if (json_is_true(addl)) {
			node = NULL;
			if (p[n]) /* nothing to step into below it */
				break;
			return NULL;
		} else {
			node = NULL;
		}
		if (!node)
			break;
		p += n;
	}
	if (!node)
		snprintf(why, wn, "does not refer to a valid field");
	return node;
}

/* Go's apiequality.Semantic.DeepEqual of member in every version (a
   missing list equals an empty one). */
static bool versions_same(const json_t *versions, const char *member)
{
	const json_t *first =
	    json_object_get(json_array_get(versions, 0), member);
	size_t i;
	json_t *v;
	json_array_foreach((json_t *)versions, i, v)
	{
		const json_t *m = json_object_get(v, member);
		bool e1 =
		    !first || (json_is_array(first) && !json_array_size(first));
		bool e2 = !m || (json_is_array(m) && !json_array_size(m));
		if (!(e1 && e2) && !json_equal(first, m))
			return false;
	}
	return true;
}

/*
 * The CRD's versions as Go's %#v prints kube's internal
 * []apiextensions.CustomResourceDefinitionVersion, the value of its
 * spec.versions errors: what every version holds alike (schema,
 * subresources, columns, selectable fields) moved to the spec by the
 * conversion and nil here; pointers as addresses (kube's differ per
 * request). New string, NULL when out of memory.
 */
static char *go_versions(const json_t *versions)
{
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);
	if (!f)
		return NULL;
	static const char *const hoisted[] = {"schema", "subresources",
					      "additionalPrinterColumns",
					      "selectableFields"};
	bool same[4];
	for (int k = 0; k < 4; k++)
		same[k] = versions_same(versions, hoisted[k]);
	unsigned long addr = 0xc000a4e000UL;
	char q[1024];
	size_t i;
	const json_t *v;
	if (!json_is_array(versions)) {
		/* none given: the nil slice the conversion keeps */
		fputs("[]apiextensions.CustomResourceDefinitionVersion(nil)",
		      f);
		fclose(f);
		return out;
	}
	fputs("[]apiextensions.CustomResourceDefinitionVersion{", f);
	json_array_foreach((json_t *)versions, i, v)
	{
		const char *name =
		    json_string_value(json_object_get(v, "name"));
		srv_go_quote(name ? name : "", q, sizeof q);
		fprintf(
		    f,
		    "%sapiextensions.CustomResourceDefinitionVersion{Name:%s, "
		    "Served:%s, Storage:%s, Deprecated:%s, ",
		    i ? ", " : "", q,
		    json_is_true(json_object_get(v, "served")) ? "true"
							       : "false",
		    json_is_true(json_object_get(v, "storage")) ? "true"
								: "false",
		    json_is_true(json_object_get(v, "deprecated")) ? "true"
								   : "false");
		if (json_is_string(json_object_get(v, "deprecationWarning")))
			fprintf(f, "DeprecationWarning:(*string)(0x%lx), ",
				addr += 0x30);
		else
			fputs("DeprecationWarning:(*string)(nil), ", f);
		static const char *const ptr_types[] = {
		    "CustomResourceValidation", "CustomResourceSubresources"};
		static const char *const ptr_names[] = {"Schema",
							"Subresources"};
		for (int k = 0; k < 2; k++) {
			const json_t *m = json_object_get(v, hoisted[k]);
			if (same[k] || !json_is_object(m))
				fprintf(f, "%s:(*apiextensions.%s)(nil), ",
					ptr_names[k], ptr_types[k]);
			else
				fprintf(f, "%s:(*apiextensions.%s)(0x%lx), ",
					ptr_names[k], ptr_types[k],
					addr += 0x60);
		}
		const json_t *cols =
		    json_object_get(v, "additionalPrinterColumns");
		fputs("AdditionalPrinterColumns:[]apiextensions."
		      "CustomResourceColumnDefinition",
		      f);
		if (same[2] || !json_is_array(cols)) {
			fputs("(nil), ", f);
		} else {
			size_t j;
			const json_t *c;
			fputc('{', f);
			json_array_foreach((json_t *)cols, j, c)
			{
				static const char *const cf[][2] = {
				    {"Name", "name"},
				    {"Type", "type"},
				    {"Format", "format"},
				    {"Description", "description"}};
				fprintf(f,
					"%sapiextensions."
					"CustomResourceColumnDefinition{",
					j ? ", " : "");
				for (int k = 0; k < 4; k++) {
					const char *s = json_string_value(
					    json_object_get(c, cf[k][1]));
					srv_go_quote(s ? s : "", q, sizeof q);
					fprintf(f, "%s:%s, ", cf[k][0], q);
				}
				const char *jp = json_string_value(
				    json_object_get(c, "jsonPath"));
				srv_go_quote(jp ? jp : "", q, sizeof q);
				fprintf(f,
					"Priority:%" JSON_INTEGER_FORMAT
					", JSONPath:%s}",
					json_integer_value(
					    json_object_get(c, "priority")),
					q);
			}
			fputs("}, ", f);
		}
		const json_t *sf = json_object_get(v, "selectableFields");
		fputs("SelectableFields:[]apiextensions.SelectableField", f);
		if (same[3] || !json_is_array(sf)) {
			fputs("(nil)", f);
		} else {
			size_t j;
			const json_t *c;
			fputc('{', f);
			json_array_foreach((json_t *)sf, j, c)
			{
				const char *jp = json_string_value(
				    json_object_get(c, "jsonPath"));
				srv_go_quote(jp ? jp : "", q, sizeof q);
				fprintf(f,
					"%sapiextensions.SelectableField{"
					"JSONPath:%s}",
					j ? ", " : "", q);
			}
			fputc('}', f);
		}
		fputc('}', f);
	}
	fputc('}', f);
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

/* selectableFields sf at base (reference §8.2): each jsonPath given,
   resolving in the schema sch, outside metadata, to a string, boolean or
   integer; no path twice; at most 8 distinct. With refused, kube's
   conversion moved the fields, or the schema, to the spec without the
   other, which kube 1.33 refuses with that text. */
static void check_selectable(const json_t *sf, const json_t *sch,
			     const char *base, const char *refused,
			     struct srv_error *err)
{
	size_t n = json_array_size(sf), distinct = 0, i;
	if (!n)
		return;
	if (refused) {
		srv_error_cause(err, "FieldValueInvalid", base,
				"Invalid value: \"\": %s", refused);
		return;
	}
	if (!json_is_object(sch))
		return;
	const char **seen = calloc(n, sizeof *seen);
	if (!seen)
		return;
	json_t *f;
	json_array_foreach((json_t *)sf, i, f) {
		const char *p = json_string_value(json_object_get(f, "jsonPath"));
		char fld[96], q[300], why[300], root[256] = "";
		snprintf(fld, sizeof fld, "%s[%zu].jsonPath", base, i);
		if (!p || !*p) {
			srv_error_cause(err, "FieldValueRequired", fld,
					"Required value");
			continue;
		}
		srv_go_quote(p, q, sizeof q);
		const json_t *node =
		    field_path_node(sch, p, why, sizeof why, root, sizeof root);
		if (!node && why[0]) {
			srv_error_cause(err, "FieldValueInvalid", fld,
					"Invalid value: %s: is an invalid path: %s",
					q, why);
			continue;
		}
		if (!strcmp(root, "metadata"))
			srv_error_cause(err, "FieldValueInvalid", fld,
					"Invalid value: %s: must not point to "
					"fields in metadata",
					q);
		const char *t = json_string_value(json_object_get(node, "type"));
		if (!t || (strcmp(t, "string") && strcmp(t, "boolean") &&
			   strcmp(t, "integer")))
			srv_error_cause(err, "FieldValueInvalid", fld,
					"Invalid value: %s: must point to a field "
					"of type string, boolean or integer. Enum "
					"string fields and strings with formats "
					"are allowed.",
					q);
		bool dup = false;
		for (size_t k = 0; k < distinct && !dup; k++)
			dup = !strcmp(seen[k], p);
		if (dup)
			srv_error_cause(err, "FieldValueDuplicate", fld,
					"Duplicate value: %s", q);
		else
			seen[distinct++] = p;
	}
	free(seen);
	if (distinct > 8)
		srv_error_cause(err, "FieldValueTooMany", base,
				"Too many: %zu: must have at most 8 items",
				distinct);
}

/* The webhook's URL as kube's ValidateWebhookURL sees it (https only). */
static void check_webhook_url(const char *url, struct srv_error *err)
{
	static const char form[] = "; desired format: https://host[/path]";
	const char *f = "spec.conversion.webhookClientConfig.url";
	const char *sep = strstr(url, "://");
	size_t slen = sep ? (size_t)(sep - url) : 0;
	if (!sep || slen != 5 || strncmp(url, "https", 5))
		srv_error_cause(err, "FieldValueInvalid", f,
				"Invalid value: \"%.*s\": 'https' is the only "
				"allowed URL scheme%s",
				(int)slen, url, form);
	const char *auth = sep ? sep + 3 : url;
	size_t alen = strcspn(auth, "/?#");
	const char *at = memchr(auth, '@', alen);
	const char *host = at ? at + 1 : auth;
	if (host == auth + alen)
		srv_error_cause(err, "FieldValueInvalid", f,
				"Invalid value: \"\": host must be specified%s",
				form);
	if (at)
		srv_error_cause(err, "FieldValueInvalid", f,
				"Invalid value: \"%.*s\": user information is "
				"not permitted in the URL",
				(int)(at - auth), auth);
	const char *hash = strchr(auth, '#');
	const char *q = strchr(auth, '?');
	if (hash)
		srv_error_cause(err, "FieldValueInvalid", f,
				"Invalid value: \"%s\": fragments are not "
				"permitted in the URL",
				hash + 1);
	if (q && (!hash || q < hash) && q[1] && q[1] != '#')
		srv_error_cause(
		    err, "FieldValueInvalid", f,
		    "Invalid value: \"%.*s\": query parameters are not "
		    "permitted in the URL",
		    (int)(hash ? hash - q - 1 : (long)strlen(q + 1)), q + 1);
}

/* The webhook's service reference as kube's ValidateWebhookService. */
static void check_webhook_service(const json_t *svc, struct srv_error *err)
{
	const char *name = json_string_value(json_object_get(svc, "name"));
	const char *ns = json_string_value(json_object_get(svc, "namespace"));
	const json_t *port = json_object_get(svc, "port");
	const char *path = json_string_value(json_object_get(svc, "path"));
	if (!name || !*name)
		srv_error_cause(
		    err, "FieldValueRequired",
		    "spec.conversion.webhookClientConfig.service.name",
		    "Required value: service name is required");
	if (!ns || !*ns)
		srv_error_cause(
		    err, "FieldValueRequired",
		    "spec.conversion.webhookClientConfig.service.namespace",
		    "Required value: service namespace is required");
	json_int_t p = json_integer_value(port);
	if (port && (p < 1 || p > 65535))
		srv_error_cause(
		    err, "FieldValueInvalid",
		    "spec.conversion.webhookClientConfig.service.port",
		    "Invalid value: %lld: port is not valid: must be between 1 "
		    "and 65535, inclusive",
		    (long long)p);
	if (path && *path && strcmp(path, "/") && path[0] != '/')
		srv_error_cause(
		    err, "FieldValueInvalid",
		    "spec.conversion.webhookClientConfig.service.path",
		    "Invalid value: \"%s\": must start with a '/'", path);
}

/*
 * spec.conversion as kube's validateCustomResourceConversion: None, or
 * Webhook with a client config (url xor service) and review versions that
 * include one kube speaks. The paths are kube's internal ones
 * (webhookClientConfig, conversionReviewVersions), as kube reports them.
 */
/* The caBundle of webhook client config cc, if any, as a CA pool that does
   not load: true with kube's text in why. */
static bool bad_ca_bundle(const json_t *cc, char *why, size_t n,
			  unsigned char **raw, size_t *raw_n)
{
	const json_t *ca = json_object_get(cc, "caBundle");
	const char *b64 = json_string_value(ca);
	return b64 && *b64 &&
	       srv_ca_bundle_invalid(b64, json_string_length(ca), why, n, raw,
				     raw_n);
}

/* Is crd's conversion webhook caBundle one that does not load? */
static bool crd_ca_invalid(const json_t *crd)
{
	char why[160];
	const json_t *conv =
	    json_object_get(json_object_get(crd, "spec"), "conversion");
	const char *st = json_string_value(json_object_get(conv, "strategy"));
	return st && !strcmp(st, "Webhook") &&
	       bad_ca_bundle(json_object_get(json_object_get(conv, "webhook"),
					     "clientConfig"),
			     why, sizeof why, NULL, NULL);
}

/* kube's allowInvalidCABundle: a CRD not yet established, or whose
   caBundle already does not load, may keep or get one that does not */
static bool ca_may_be_invalid(const json_t *old)
{
	return !old || !condition_true(old, "Established") ||
	       crd_ca_invalid(old);
}

/* The cause of a caBundle that does not load: its bytes as Go's %#v
   prints a []byte */
static void ca_bundle_cause(const json_t *cc, struct srv_error *err)
{
	char why[160];
	unsigned char *raw = NULL;
	size_t n = 0;
	if (!bad_ca_bundle(cc, why, sizeof why, &raw, &n))
		return;
	size_t cap = 16 + n * 6;
	char *v = malloc(cap);
	if (v) {
		size_t k = (size_t)snprintf(v, cap, "[]byte{");
		for (size_t i = 0; i < n; i++)
			k += (size_t)snprintf(v + k, cap - k, "%s0x%x",
					      i ? ", " : "", raw[i]);
		snprintf(v + k, cap - k, "}");
	}
	srv_error_cause(err, "FieldValueInvalid",
			"spec.conversion.webhookClientConfig.caBundle",
			"Invalid value: %s: %s", v ? v : "[]byte{}", why);
	free(v);
	free(raw);
}

static void check_conversion(const json_t *conv, bool ca_any,
			     struct srv_error *err)
{
	const char *strategy =
	    json_string_value(json_object_get(conv, "strategy"));
	const json_t *wh = json_object_get(conv, "webhook");
	const json_t *cc = json_object_get(wh, "clientConfig");
	const json_t *crv = json_object_get(wh, "conversionReviewVersions");
	if (!strategy || !*strategy) {
		srv_error_cause(err, "FieldValueRequired",
				"spec.conversion.strategy", "Required value");
		return;
	}
	if (strcmp(strategy, "Webhook")) {
		if (strcmp(strategy, "None"))
			srv_error_cause(err, "FieldValueNotSupported",
					"spec.conversion.strategy",
					"Unsupported value: \"%s\": supported "
					"values: \"None\", \"Webhook\"",
					strategy);
		if (cc)
			srv_error_cause(err, "FieldValueForbidden",
					"spec.conversion.webhookClientConfig",
					"Forbidden: should not be set when "
					"strategy is not set to Webhook");
		if (json_array_size(crv))
			srv_error_cause(
			    err, "FieldValueForbidden",
			    "spec.conversion.conversionReviewVersions",
			    "Forbidden: should not be set when strategy is not "
			    "set to Webhook");
		return;
	}
	const char *url = json_string_value(json_object_get(cc, "url"));
	const json_t *svc = json_object_get(cc, "service");
	if (!cc)
		srv_error_cause(
		    err, "FieldValueRequired",
		    "spec.conversion.webhookClientConfig",
		    "Required value: required when strategy is set to Webhook");
	else if (!url == !svc)
		srv_error_cause(err, "FieldValueRequired",
				"spec.conversion.webhookClientConfig",
				"Required value: exactly one of url or service "
				"is required");
	else if (url)
		check_webhook_url(url, err);
	else
		check_webhook_service(svc, err);
	if (cc && !ca_any)
		ca_bundle_cause(cc, err);
	size_t n = json_array_size(crv);
	if (!n) {
		srv_error_cause(err, "FieldValueRequired",
				"spec.conversion.conversionReviewVersions",
				"Required value");
		return;
	}
	bool known = false;
	char list[256] = "";
	size_t used = 0;
	for (size_t i = 0; i < n; i++) {
		const char *v = json_string_value(json_array_get(crv, i));
		char f[80];
		snprintf(f, sizeof f,
			 "spec.conversion.conversionReviewVersions[%zu]", i);
		if (used < sizeof list)
			used += (size_t)snprintf(list + used,
						 sizeof list - used, "%s\"%s\"",
						 i ? ", " : "", v ? v : "");
		bool dup = false;
		for (size_t j = 0; j < i && v; j++) {
			const char *o =
			    json_string_value(json_array_get(crv, j));
			dup = dup || (o && !strcmp(o, v));
		}
		if (dup) {
			srv_error_cause(
			    err, "FieldValueInvalid", f,
			    "Invalid value: \"%s\": duplicate version", v);
			continue;
		}
		/* IsDNS1035Label: a cause per complaint */
		srv_name_causes(err, f, SRV_RULE_DNS1035, v ? v : "");
		known =
		    known || (v && (!strcmp(v, "v1") || !strcmp(v, "v1beta1")));
	}
	if (!known)
		srv_error_cause(err, "FieldValueInvalid",
				"spec.conversion.conversionReviewVersions",
				"Invalid value: []string{%s}: must include at "
				"least one of v1, v1beta1",
				list);
}

/* Does array a hold s (as a string, or as member m of an object)? */
static bool in_list(const json_t *a, const char *m, const char *s)
{
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v)
	{
		const char *e = json_string_value(m ? json_object_get(v, m) : v);
		if (e && !strcmp(e, s))
			return true;
	}
	return false;
}

/* kube's ValidateCustomResourceDefinitionStoredVersions, on crd as it
   would be stored. */
static void check_stored_versions(const json_t *crd, struct srv_error *err)
{
	const json_t *sv =
	    json_object_get(json_object_get(crd, "status"), "storedVersions");
	const json_t *versions =
	    json_object_get(json_object_get(crd, "spec"), "versions");
	/* the list as Go's %#v prints a []string */
	char list[512];
	size_t used = (size_t)snprintf(list, sizeof list, "[]string%s",
				       json_is_array(sv) ? "{" : "(nil)");
	size_t i, j;
	json_t *v, *w;
	json_array_foreach(sv, i, v) if (used < sizeof list) used +=
	    (size_t)snprintf(list + used, sizeof list - used, "%s\"%s\"",
			     i ? ", " : "",
			     json_string_value(v) ? json_string_value(v) : "");
	if (json_is_array(sv) && used < sizeof list)
		snprintf(list + used, sizeof list - used, "}");
	if (!json_array_size(sv)) {
		srv_error_cause(err, "FieldValueInvalid", "status.storedVersions",
				"Invalid value: %s: must have at least one "
				"stored version",
				list);
		return;
	}
	json_array_foreach(versions, j, w)
	{
		const char *vn = json_string_value(json_object_get(w, "name"));
		if (vn && !in_list(sv, NULL, vn) &&
		    json_is_true(json_object_get(w, "storage")))
			srv_error_cause(err, "FieldValueInvalid",
					"status.storedVersions",
					"Invalid value: %s: must have the "
					"storage version %s",
					list, vn);
	}
	json_array_foreach(sv, i, v)
	{
		const char *s = json_string_value(v) ? json_string_value(v) : "";
		if (in_list(versions, "name", s))
			continue;
		char f[64];
		snprintf(f, sizeof f, "status.storedVersions[%zu]", i);
		srv_error_cause(
		    err, "FieldValueInvalid", f,
		    "Invalid value: \"%s\": missing from spec.versions; %s "
		    "was previously a storage version, and must remain in "
		    "spec.versions until a storage migration ensures no data "
		    "remains persisted in %s and removes %s from "
		    "status.storedVersions",
		    s, s, s, s);
	}
}

/* The schema and selectable fields of every version, and the fields
   kube's conversion hoists to the spec when every version has the same
   (sf_same, sch_same). */
static lp_err check_schemas_and_fields(json_t *versions, const json_t *old,
				       bool sf_same, bool sch_same,
				       struct srv_error *err)
{
	if (sf_same) {
		const json_t *v0 = json_array_get(versions, 0);
		check_selectable(json_object_get(v0, "selectableFields"),
				 version_schema(v0), "spec.selectableFields",
				 sch_same
				     ? NULL
				     : "selectableFields may only be set "
				       "when validations.schema is included",
				 err);
	}
	return check_schemas(versions, old, err);
}

/* A JSON string's text, "" for anything else (Go's zero string). */
static const char *str_or_empty(const json_t *j)
{
	const char *t = json_string_value(j);
	return t ? t : "";
}

/* kube's validateAPIApproval: a CRD in a protected group needs the
   approval annotation, unless an update leaves its state as it was. */
static void check_approval(const json_t *crd, const json_t *old,
			   struct srv_error *err)
{
	char reason[512], ignore[512];
	const char *value, *ov;
	enum reg_approval st =
	    reg_crd_approval(crd, &value, reason, sizeof reason);
	if (st == REG_APPROVAL_UNPROTECTED || st == REG_APPROVAL_APPROVED ||
	    st == REG_APPROVAL_BYPASSED ||
	    (old && reg_crd_approval(old, &ov, ignore, sizeof ignore) == st))
		return;
	if (st == REG_APPROVAL_MISSING)
		srv_error_cause(err, "FieldValueRequired",
				"metadata.annotations[" REG_APPROVAL_ANNOTATION
				"]",
				"Required value: %s", reason);
	else
		srv_error_cause(err, "FieldValueInvalid",
				"metadata.annotations[" REG_APPROVAL_ANNOTATION
				"]",
				"Invalid value: \"%s\": %s", value, reason);
}

lp_err srv_prep_crd_status(const struct srv_resource *r, json_t *obj,
			   const json_t *old, struct srv_error *err)
{
	(void)r;
	(void)old;
	/* kube's status strategy validates the accepted names only:
	   storedVersions is checked on create and main updates */
	return crd_invalid(obj, err);
}

lp_err srv_prep_crd(const struct srv_resource *r, json_t *obj,
		    const json_t *old, struct srv_error *err)
{
	(void)r;
	json_t *spec = obj_child(obj, "spec");
	json_t *names = obj_child(spec, "names");
	const char *group = json_string_value(json_object_get(spec, "group"));
	const char *plural =
	    json_string_value(json_object_get(names, "plural"));
	const char *kind = json_string_value(json_object_get(names, "kind"));
	/* defaults (kube's SetDefaults_CustomResourceDefinitionSpec: an empty
	   name counts as unset; listKind only from a kind) */
	const char *sg = json_string_value(json_object_get(names, "singular"));
	const char *lkd = json_string_value(json_object_get(names, "listKind"));
	if (kind && (!sg || !*sg)) {
		char low[128];
		lower(kind, low, sizeof low);
		json_object_set_new(names, "singular", json_string(low));
	}
	if (kind && *kind && (!lkd || !*lkd)) {
		char lk[160];
		snprintf(lk, sizeof lk, "%sList", kind);
		json_object_set_new(names, "listKind", json_string(lk));
	}
	if (!json_object_get(spec, "conversion")) {
		json_t *c = json_object();
		json_object_set_new(c, "strategy", json_string("None"));
		json_object_set_new(spec, "conversion", c);
	}
	json_t *svc = json_object_get(
	    json_object_get(
		json_object_get(json_object_get(spec, "conversion"), "webhook"),
		"clientConfig"),
	    "service");
	if (json_is_object(svc) && !json_object_get(svc, "port"))
		json_object_set_new(svc, "port", json_integer(443));
	/* validation: metadata first (ValidateObjectMeta's name function
	   compares with plural + "." + group whatever they are, empty too);
	   an update's validation has no name function: a changed plural or
	   group is only their own "field is immutable" */
	const char *name = json_string_value(
	    json_object_get(json_object_get(obj, "metadata"), "name"));
	if (name && !old) {
		char want[512];
		snprintf(want, sizeof want, "%s.%s", plural ? plural : "",
			 group ? group : "");
		if (strcmp(name, want))
			srv_error_cause(err, "FieldValueInvalid",
					"metadata.name",
					"Invalid value: \"%s\": must be "
					"spec.names.plural+\".\"+spec.group",
					name);
	}
	char gwhy[600];
	if (!group || !*group) {
		srv_error_cause(err, "FieldValueRequired", "spec.group",
				"Required value");
	} else if (name_errs(SRV_RULE_DNS_SUBDOMAIN, group, gwhy,
			     sizeof gwhy)) {
		char q[2048];
		srv_go_quote(group, q, sizeof q);
		srv_error_cause(err, "FieldValueInvalid", "spec.group",
				"Invalid value: %s: %s", q, gwhy);
	} else if (!strchr(group, '.')) {
		srv_error_cause(err, "FieldValueInvalid", "spec.group",
				"Invalid value: \"%s\": should be a domain "
				"with at least one dot",
				group);
	}
	const char *scope = json_string_value(json_object_get(spec, "scope"));
	if (!scope || (strcmp(scope, "Cluster") && strcmp(scope, "Namespaced")))
		srv_error_cause(err,
				scope && *scope ? "FieldValueNotSupported"
						: "FieldValueRequired",
				"spec.scope",
				scope && *scope
				    ? "Unsupported value: \"%s\": supported "
				      "values: \"Cluster\", \"Namespaced\""
				    : "Required value%s",
				scope && *scope ? scope : "");
	size_t i;
	json_t *v;
	json_t *versions = json_object_get(spec, "versions");
	size_t n_storage = 0;
	const char *storage = NULL, *first_storage = NULL;
	/* kube's conversion to its internal type moves selectableFields
	   and the schema to the spec when every version has the same, and
	   validates them there (one moved without the other: refused) */
	bool unique = true;
	bool sf_same = versions_same(versions, "selectableFields");
	bool sch_same = versions_same(versions, "schema");
	json_array_foreach(versions, i, v)
	{
		const char *vn = json_string_value(json_object_get(v, "name"));
		char f[80];
		snprintf(f, sizeof f, "spec.versions[%zu].name", i);
		dns1035_cause(err, f, vn ? vn : "", false);
		check_deprecation(v, i, err);
		for (size_t j = 0; j < i && vn; j++) {
			const char *o = json_string_value(json_object_get(
			    json_array_get(versions, j), "name"));
			if (o && !strcmp(o, vn))
				unique = false;
		}
		if (json_is_true(json_object_get(v, "storage"))) {
			n_storage++;
			storage = vn;
			if (!first_storage)
				first_storage = vn ? vn : "";
		}
		if (!json_is_object(json_object_get(
			json_object_get(v, "schema"), "openAPIV3Schema"))) {
			snprintf(f, sizeof f,
				 "spec.versions[%zu].schema.openAPIV3Schema",
				 i);
			srv_error_cause(err, "FieldValueRequired", f,
					"Required value: schemas are required");
		}
		if (!sf_same) {
			snprintf(f, sizeof f,
				 "spec.versions[%zu].selectableFields", i);
			check_selectable(
			    json_object_get(v, "selectableFields"),
			    version_schema(v), f,
			    sch_same ? "selectableFields may only be set when "
				       "version.schema.openAPIV3Schema is not "
				       "included"
				     : NULL,
			    err);
		}
	}
	check_columns_and_scale(versions, err);
	/* each version its own schema: kube checks it in its loop */
	if (!sch_same) {
		lp_err rc = check_schemas_and_fields(versions, old, sf_same,
						     sch_same, err);
		if (rc)
			return rc;
	}
	/* after every version's own checks, as kube's loop; the value is
	   the versions as Go's %#v prints kube's internal ones */
	if (!unique || n_storage != 1) {
		char *gv = go_versions(versions);
		if (!unique)
			srv_error_cause(
			    err, "FieldValueInvalid", "spec.versions",
			    "Invalid value: %s: must contain unique "
			    "version names",
			    gv ? gv : "");
		if (n_storage != 1)
			srv_error_cause(
			    err, "FieldValueInvalid", "spec.versions",
			    "Invalid value: %s: must have exactly one "
			    "version marked as storage version",
			    gv ? gv : "");
		free(gv);
	}
	/* kube's ValidateCustomResourceDefinitionSpec: the names required
	   (after defaulting), then ValidateCustomResourceDefinitionNames */
	const char *singular =
	    json_string_value(json_object_get(names, "singular"));
	const char *lk = json_string_value(json_object_get(names, "listKind"));
	static const char *const req[] = {"plural", "singular", "kind",
					  "listKind"};
	for (size_t k = 0; k < 4; k++) {
		const char *nv =
		    json_string_value(json_object_get(names, req[k]));
		if (!nv || !*nv) {
			char f[40];
			snprintf(f, sizeof f, "spec.names.%s", req[k]);
			srv_error_cause(err, "FieldValueRequired", f,
					"Required value");
		}
	}
	if (plural && *plural)
		dns1035_cause(err, "spec.names.plural", plural, false);
	if (singular && *singular)
		dns1035_cause(err, "spec.names.singular", singular, false);
	if (kind && *kind)
		dns1035_cause(err, "spec.names.kind", kind, true);
	if (lk && *lk)
		dns1035_cause(err, "spec.names.listKind", lk, true);
	/* short names, then (after kind against listKind) categories: each a
	   DNS-1035 label */
	for (int which = 0; which < 2; which++) {
		const char *list = which ? "categories" : "shortNames";
		if (which && kind && lk && *kind && !strcmp(kind, lk))
			srv_error_cause(
			    err, "FieldValueInvalid", "spec.names.listKind",
			    "Invalid value: \"%s\": kind and listKind "
			    "may not be the same",
			    lk);
		json_array_foreach(json_object_get(names, list), i, v)
		{
			char f[64];
			snprintf(f, sizeof f, "spec.names.%s[%zu]", list, i);
			dns1035_cause(
			    err, f,
			    json_string_value(v) ? json_string_value(v) : "",
			    false);
		}
	}
	/* schemas the same in every version: kube checks them in the spec,
	   after the names */
	if (sch_same) {
		lp_err rc = check_schemas_and_fields(versions, old, sf_same,
						     sch_same, err);
		if (rc)
			return rc;
	}
	check_conversion(json_object_get(spec, "conversion"),
			 ca_may_be_invalid(old), err);
	if (old) {
		/* kube's validateCustomResourceDefinitionSpecUpdate, after the
		   spec's own checks: scope and kind once established (they
		   name the stored objects), then group and plural always; a
		   missing one is "" */
		json_t *ospec = json_object_get(old, "spec");
		json_t *onames = json_object_get(ospec, "names");
		bool est = condition_true(old, "Established");
		const struct {
			const char *field, *was, *now;
			bool check;
		} imm[] = {
		    {"spec.scope",
		     str_or_empty(json_object_get(ospec, "scope")),
		     scope ? scope : "", est},
		    {"spec.names.kind",
		     str_or_empty(json_object_get(onames, "kind")),
		     kind ? kind : "", est},
		    {"spec.group",
		     str_or_empty(json_object_get(ospec, "group")),
		     group ? group : "", true},
		    {"spec.names.plural",
		     str_or_empty(json_object_get(onames, "plural")),
		     plural ? plural : "", true},
		};
		for (size_t k = 0; k < sizeof imm / sizeof imm[0]; k++)
			if (imm[k].check && strcmp(imm[k].was, imm[k].now))
				srv_error_cause(err, "FieldValueInvalid",
						imm[k].field,
						"Invalid value: \"%s\": field "
						"is immutable",
						imm[k].now);
	}
	/* status: kube's PrepareForCreate stores the storage version, if
	   one; with none, ValidateCustomResourceDefinitionStoredVersions says
	   so */
	if (!old && !n_storage)
		srv_error_cause(err, "FieldValueInvalid",
				"status.storedVersions",
				"Invalid value: []string(nil): must have at "
				"least one stored version");
	/* with more than one, it stores the first: the others are missing */
	json_array_foreach(n_storage > 1 && !old ? versions : NULL, i, v)
	{
		const char *vn = json_string_value(json_object_get(v, "name"));
		if (json_is_true(json_object_get(v, "storage")) && vn &&
		    vn != first_storage)
			srv_error_cause(err, "FieldValueInvalid",
					"status.storedVersions",
					"Invalid value: []string{\"%s\"}: must "
					"have the storage version %s",
					first_storage, vn);
	}
	if (old) {
		/* PrepareForUpdate keeps the old status and appends the first
		   storage version to storedVersions; validated as stored */
		json_t *ost = json_object_get(old, "status");
		json_t *st = ost ? json_deep_copy(ost) : json_object();
		json_t *sv = json_object_get(st, "storedVersions");
		bool have = false;
		json_array_foreach(sv, i, v) have =
		    have || (json_string_value(v) && first_storage &&
			     !strcmp(json_string_value(v), first_storage));
		if (!have && first_storage && json_is_array(sv))
			json_array_append_new(sv, json_string(first_storage));
		json_object_set_new(obj, "status", st);
		json_t *om = json_object_get(old, "metadata");
		json_int_t gen =
		    json_integer_value(json_object_get(om, "generation"));
		if (!json_equal(json_object_get(old, "spec"), spec))
			gen++;
		json_object_set_new(json_object_get(obj, "metadata"),
				    "generation", json_integer(gen ? gen : 1));
		check_stored_versions(obj, err);
	}
	check_approval(obj, old, err);
	/* kube's validatePreserveUnknownFields, last */
	if (json_is_true(json_object_get(spec, "preserveUnknownFields")))
		srv_error_cause(err, "FieldValueInvalid",
				"spec.preserveUnknownFields",
				"Invalid value: true: cannot set to true, set "
				"x-kubernetes-preserve-unknown-fields to true "
				"in spec.versions[*].schema instead");
	if (crd_invalid(obj, err))
		return err->code;
	if (!old) {
		/* conditions null, as Go writes the nil slice of kube's
		   PrepareForCreate (no omitempty) */
		json_t *st = json_object();
		json_object_set_new(st, "conditions", json_null());
		json_t *acc = json_object();
		json_object_set_new(acc, "plural", json_string(""));
		json_object_set_new(acc, "kind", json_string(""));
		json_object_set_new(st, "acceptedNames", acc);
		json_t *sv = json_array();
		json_array_append_new(sv, json_string(storage));
		json_object_set_new(st, "storedVersions", sv);
		json_object_set_new(obj, "status", st);
		json_object_set_new(json_object_get(obj, "metadata"),
				    "generation", json_integer(1));
	}
	return LP_OK;
}

/* ------------------------------------------------------------ CR strategy */

/* Does anything outside metadata (and status, when it has its own
   endpoint) differ? apiVersion is not compared: kube compares the two in
   the request's version, and lapis converts (conversion None) by
   apiVersion alone, the stored object seen in the request's version and
   the new one already in the storage version. */
static bool skip_key(const char *k, bool skip_status)
{
	return !strcmp(k, "metadata") || !strcmp(k, "apiVersion") ||
	       (skip_status && !strcmp(k, "status"));
}

static bool content_changed(const json_t *a, const json_t *b, bool skip_status)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)a, k, v)
	{
		if (skip_key(k, skip_status))
			continue;
		/* numbers by value: a default of 1.0 is stored as 1 */
		const json_t *w = json_object_get(b, k);
		if (!w || !srv_json_value_eq(v, w))
			return true;
	}
	json_object_foreach((json_t *)b, k, v)
	{
		if (skip_key(k, skip_status))
			continue;
		if (!json_object_get(a, k))
			return true;
	}
	return false;
}

void srv_cr_set_version(const struct srv_resource *r, json_t *obj,
			bool to_storage)
{
	char gv[320];
	snprintf(gv, sizeof gv, "%s/%s", r->group,
		 to_storage ? r->crd->storage_version : r->version);
	json_object_set_new(obj, "apiVersion", json_string(gv));
}

/* Stored in the storage version (conversion None: only apiVersion). */
static void to_storage_version(const struct srv_resource *r, json_t *obj)
{
	srv_cr_set_version(r, obj, true);
}

/* A /status write's object, stored in the storage version as every write;
   kube's status strategy changes nothing else that lapis's update path
   does not. */
static lp_err prep_cr_status(const struct srv_resource *r, json_t *obj,
			     const json_t *old, struct srv_error *err)
{
	(void)old;
	(void)err;
	to_storage_version(r, obj);
	return LP_OK;
}

json_t *srv_cr_request_view(const struct srv_resource *r, const json_t *obj)
{
	const struct srv_crd_info *ci = r->crd;
	char gv[320];
	srv_resource_gv(r, gv, sizeof gv);
	const char *ov = json_string_value(json_object_get(obj, "apiVersion"));
	if (!ci || !ci->schema || !ov || !strcmp(ov, gv))
		return NULL;
	json_t *seen = json_deep_copy(obj);
	if (!seen)
		return NULL;
	json_object_set_new(seen, "apiVersion", json_string(gv));
	srv_schema_prune(ci->schema, seen, NULL, NULL);
	return seen;
}

lp_err srv_prep_cr(const struct srv_resource *r, json_t *obj, const json_t *old,
		   struct srv_error *err)
{
	(void)err;
	const struct srv_crd_info *ci = r->crd;
	json_t *m = json_object_get(obj, "metadata");
	to_storage_version(r, obj);
	if (!old) {
		if (ci->status)
			json_object_del(obj, "status");
		json_object_set_new(m, "generation", json_integer(1));
		return LP_OK;
	}
	json_int_t gen = json_integer_value(
	    json_object_get(json_object_get(old, "metadata"), "generation"));
	/* old is the stored object as the request's version sees it (kube
	   converts it and prunes it with that version's schema before
	   PrepareForUpdate): obj is compared in that form too, without what
	   only the storage version has (its defaults) */
	json_t *seen = srv_cr_request_view(r, obj);
	if (content_changed(seen ? seen : obj, old, ci->status))
		gen++;
	json_decref(seen);
	json_object_set_new(m, "generation", json_integer(gen ? gen : 1));
	return LP_OK;
}

/* The apiVersion a reader asked for, spliced into stored bytes when it
   differs from the storage version (conversion None). New or NULL (same). */
const struct srv_schema *srv_cr_schema(const struct srv_resource *r)
{
	return r->crd ? r->crd->schema : NULL;
}

/* Whether r serves another version than the one objects are stored in. */
static bool other_version(const struct srv_resource *r)
{
	return r->crd && strcmp(r->version, r->crd->storage_version) != 0;
}

const struct srv_schema *srv_cr_storage_schema(const struct srv_resource *r)
{
	return other_version(r) ? r->crd->storage_schema : NULL;
}

const json_t *srv_cr_scale(const struct srv_resource *r)
{
	if (!r->crd || !r->crd->scale)
		return NULL;
	return json_object_get(json_object_get(r->crd->version, "subresources"),
			       "scale");
}

const char *srv_cr_storage_version(const struct srv_resource *r)
{
	return r->crd ? r->crd->storage_version : r->version;
}

bool srv_cr_needs_convert(const struct srv_resource *r)
{
	return r->crd && (other_version(r) || r->crd->owner->coerce_rev > 0 ||
			  r->crd->owner->mixed);
}

void srv_cr_to_served(const struct srv_resource *r, json_t *obj)
{
	if (!r->crd || !json_is_object(obj))
		return;
	char gv[320];
	snprintf(gv, sizeof gv, "%s/%s", r->group, r->version);
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));
	if (av && !strcmp(av, gv))
		return;
	json_object_set_new(obj, "apiVersion", json_string(gv));
	/* kube prunes what it converts with the target version's schema
	   (the fields as stored pass unchanged for a Webhook CRD) */
	if (r->crd->schema && !r->crd->webhook)
		srv_schema_prune(r->crd->schema, obj, NULL, NULL);
}

/* The schema of the version an object of r's CRD is stored in (its
   apiVersion), or NULL: a version served no more, or none. */
static const struct srv_schema *schema_of(const struct srv_resource *r,
					  const json_t *obj)
{
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));
	const char *v = av ? strrchr(av, '/') : NULL;
	if (!v)
		return NULL;
	v++;
	const struct crdent *c = r->crd->owner;
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->e[i].res.version, v))
			return c->e[i].info.schema;
	return NULL;
}

/*
 * The apiVersion and resourceVersion of stored bytes, read off their head
 * (server/registry/object.c writes kind, apiVersion, then metadata with
 * name, generateName, namespace and uid before resourceVersion, none of
 * which can hold a quote). rv NULL: the apiVersion alone. False when the
 * bytes are laid out otherwise.
 */
static bool stored_head(const char *b, size_t len, const char **av,
			size_t *av_len, int64_t *rv)
{
	static const char ak[] = "\"apiVersion\":\"", rk[] = "\"resourceVersion\":\"";
	static const char kk[] = "{\"kind\":\"";
	const char *end = b + len;
	const char *p = NULL;
	/* the layout object.c writes: no search (every list item) */
	if (len > sizeof kk - 1 && !memcmp(b, kk, sizeof kk - 1)) {
		const char *k =
		    memchr(b + sizeof kk - 1, '"', len - (sizeof kk - 1));
		if (k && (size_t)(end - k) > sizeof ak && k[1] == ',' &&
		    !memcmp(k + 2, ak, sizeof ak - 1))
			p = k + 2;
	}
	if (!p) {
		size_t win = len < 512 ? len : 512;
		p = memmem(b, win, ak, sizeof ak - 1);
	}
	if (!p)
		return false;
	p += sizeof ak - 1;
	const char *q = memchr(p, '"', (size_t)(end - p));
	if (!q)
		return false;
	*av = p;
	*av_len = (size_t)(q - p);
	if (!rv)
		return true;
	const char *r = memmem(q, (size_t)(end - q), rk, sizeof rk - 1);
	if (!r)
		return false;
	r += sizeof rk - 1;
	int64_t n = 0;
	const char *d = r;
	for (; d < end && *d >= '0' && *d <= '9' && d - r < 19; d++)
		n = n * 10 + (*d - '0');
	if (d == r || d >= end || *d != '"')
		return false;
	*rv = n;
	return true;
}

/* Is the version of apiVersion av ("group/version") one of crd's
   spec.versions (served or not)? */
static bool spec_has_version(const json_t *crd, const char *av)
{
	const char *v = strrchr(av, '/');
	v = v ? v + 1 : av;
	size_t i;
	const json_t *e;
	json_array_foreach(json_object_get(json_object_get(crd, "spec"), "versions"),
			   i, e)
	{
		const char *n = json_string_value(json_object_get(e, "name"));
		if (n && !strcmp(n, v))
			return true;
	}
	return false;
}

lp_err srv_cr_convert(const struct srv_resource *r, const char *bytes,
		      size_t len, char **out, size_t *out_len,
		      struct srv_error *err)
{
	return srv_cr_convert_at(r, bytes, len, 0, out, out_len, err);
}

lp_err srv_cr_convert_at(const struct srv_resource *r, const char *bytes,
			 size_t len, int64_t written, char **out,
			 size_t *out_len, struct srv_error *err)
{
	*out = NULL;
	if (!srv_cr_needs_convert(r))
		return LP_OK; /* the common case: stored bytes serve as they are */
	const struct crdent *c = r->crd->owner;
	const char *av;
	size_t av_len;
	int64_t rv = written > 0 ? written : 0;
	/* every item of a list comes here: no printf, and the object's
	   resourceVersion is looked for only when the caller does not
	   know the revision (the stored bytes carry their mod_revision) */
	bool head =
	    stored_head(bytes, len, &av, &av_len, written > 0 ? NULL : &rv);
	size_t gl = strlen(r->group), vl = strlen(r->version);
	if (head && rv >= c->coerce_rev && av_len == gl + 1 + vl &&
	    !memcmp(av, r->group, gl) && av[gl] == '/' &&
	    !memcmp(av + gl + 1, r->version, vl))
		return LP_OK; /* written in this version under these schemas */
	json_t *o = reg_json_load(bytes, len, JSON_ALLOW_NUL, NULL);
	if (!json_is_object(o)) {
		json_decref(o);
		return LP_OK;
	}
	if (!head)
		rv = written > 0 ? written : meta_int(o, "resourceVersion");
	const char *sav = json_string_value(json_object_get(o, "apiVersion"));
	if (sav && !spec_has_version(c->crd, sav)) {
		/* kube's converter refuses a stored version that is no longer
		   in spec.versions: the read fails until a storage migration
		   rewrites the object */
		srv_error_set(err, LP_E_IO,
			      "request to convert CR from an invalid group/version: %.300s",
			      sav);
		json_decref(o);
		return err->code;
	}
	if (rv < c->coerce_rev) {
		/* as kube decodes from etcd: pruned and defaulted with the
		   schema of the version the object is stored in */
		const struct srv_schema *s = schema_of(r, o);
		if (!s && !r->crd->webhook)
			s = r->crd->storage_schema;
		if (s) {
			srv_schema_prune(s, o, NULL, NULL);
			srv_schema_default(s, o);
		}
	}
	srv_cr_to_served(r, o);
	size_t n;
	char *s = reg_json_dump_sorted(o, &n); /* as reg_encode writes it */
	json_decref(o);
	if (!s)
		return srv_error_set(err, LP_E_NOMEM, "out of memory");
	*out = s;
	*out_len = n;
	return LP_OK;
}

/* kube's definition name for a CRD kind: the group reversed, then version
   and kind ("com.example.stable.v1.CronTab"). */
void srv_cr_schema_name(const struct srv_resource *r, const char *kind,
			char *buf, size_t n)
{
	size_t o = 0;
	const char *g = r->group, *end = g + strlen(g);
	while (end > g && o < n) {
		const char *dot = end;
		while (dot > g && dot[-1] != '.')
			dot--;
		o += (size_t)snprintf(buf + o, n - o, "%.*s.", (int)(end - dot),
				      dot);
		end = dot > g ? dot - 1 : g;
	}
	if (o < n)
		snprintf(buf + o, n - o, "%s.%s", r->version, kind);
}

static json_t *gvk_list(const struct srv_resource *r, const char *kind)
{
	return json_pack("[{s:s,s:s,s:s}]", "group", r->group, "kind", kind,
			 "version", r->version);
}

static json_t *string_prop(const char *desc)
{
	return json_pack("{s:s,s:s}", "description", desc, "type", "string");
}

/* A reference as apiextensions' builder writes one (spec.RefSchema and a
   description: no allOf wrapping, no default, unlike generated types). */
static json_t *ref_prop(const char *ref, const char *desc)
{
	char full[160];
	snprintf(full, sizeof full, "#/components/schemas/%s", ref);
	return json_pack("{s:s,s:s}", "$ref", full, "description", desc);
}

static const char object_meta_desc[] =
    "Standard object's metadata. More info: "
    "https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#metadata";

static bool is_type(const json_t *n, const char *t)
{
	const char *v = json_string_value(json_object_get(n, "type"));
	return v && !strcmp(v, t);
}

/* Whether list is [{type: integer}, {type: string}] (kube's
   isIntOrStringAnyOfPattern). */
static bool int_or_string_pair(const json_t *list)
{
	return json_array_size(list) == 2 &&
	       json_object_size(json_array_get(list, 0)) == 1 &&
	       json_object_size(json_array_get(list, 1)) == 1 &&
	       is_type(json_array_get(list, 0), "integer") &&
	       is_type(json_array_get(list, 1), "string");
}

/* x-kubernetes-selectable-fields: one {fieldPath} per selectable field
   (the builder's buildSelectableFields), or NULL when it has none. */
static json_t *selectable_ext(const struct srv_resource *r)
{
	if (!r->fields || !r->fields[0])
		return NULL;
	json_t *a = json_array();
	for (size_t i = 0; a && r->fields[i]; i++)
		json_array_append_new(
		    a, json_pack("{s:s}", "fieldPath", r->fields[i]));
	return a;
}

/* A version's schema as kube publishes it (its structural form's
   ToKubeOpenAPI after Unfold, then addEmbeddedProperties): what a
   structural schema does not hold (example, externalDocs, ...) is
   dropped, an int-or-string gets anyOf integer or string, an embedded
   resource apiVersion, kind and metadata. */
static void publish_node(json_t *n, unsigned depth)
{
	static const char *const drop[] = {
	    "example",		 "externalDocs",   "id",
	    "$schema",		 "definitions",	   "dependencies",
	    "patternProperties", "additionalItems"};
	if (!json_is_object(n) || depth > 200)
		return;
	for (size_t i = 0; i < sizeof drop / sizeof *drop; i++)
		json_object_del(n, drop[i]);
	const char *k;
	json_t *v;
	json_object_foreach(json_object_get(n, "properties"), k, v)
	    publish_node(v, depth + 1);
	publish_node(json_object_get(n, "items"), depth + 1);
	publish_node(json_object_get(n, "additionalProperties"), depth + 1);
	if (json_is_true(json_object_get(n, "x-kubernetes-int-or-string"))) {
		json_t *any = json_object_get(n, "anyOf");
		json_t *all = json_object_get(n, "allOf");
		bool done = int_or_string_pair(any) ||
			    int_or_string_pair(json_object_get(
				json_array_get(all, 0), "anyOf"));
		json_t *pair = json_pack("[{s:s},{s:s}]", "type", "integer",
					 "type", "string");
		if (!done && pair && !any) {
			json_object_set_new(n, "anyOf", pair);
		} else if (!done && pair) {
			if (!json_is_array(all)) {
				all = json_array();
				json_object_set_new(n, "allOf", all);
			}
			json_array_insert_new(
			    all, 0, json_pack("{s:o}", "anyOf", pair));
		} else {
			json_decref(pair);
		}
	}
	if (json_is_true(
		json_object_get(n, "x-kubernetes-embedded-resource"))) {
		json_t *props = json_object_get(n, "properties");
		if (!json_is_object(props)) {
			props = json_object();
			json_object_set_new(n, "properties", props);
		}
		json_object_set_new(
		    props, "apiVersion",
		    string_prop(
			"apiVersion defines the versioned schema of this "
			"representation of an object. More info: "
			"https://git.k8s.io/community/contributors/devel/"
			"sig-architecture/api-conventions.md#resources"));
		json_object_set_new(
		    props, "kind",
		    string_prop(
			"kind is a string value representing the type of "
			"this object. In CamelCase. More info: "
			"https://git.k8s.io/community/contributors/devel/"
			"sig-architecture/api-conventions.md#types-kinds"));
		json_object_set_new(
		    props, "metadata",
		    ref_prop("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
			     object_meta_desc));
		json_t *req = json_object_get(n, "required");
		if (!json_is_array(req)) {
			req = json_array();
			json_object_set_new(n, "required", req);
		}
		static const char *const need[] = {"kind", "apiVersion"};
		for (size_t i = 0; i < 2; i++) {
			bool have = false;
			size_t j;
			json_t *x;
			json_array_foreach(req, j, x) have =
			    have ||
			    !strcmp(json_string_value(x) ? json_string_value(x)
							 : "",
				    need[i]);
			if (!have)
				json_array_append_new(req,
						      json_string(need[i]));
		}
	}
}

static void type_meta(json_t *props)
{
	json_object_set_new(
	    props, "apiVersion",
	    string_prop("APIVersion defines the versioned schema of this "
			"representation of an object. Servers should convert "
			"recognized schemas to the latest internal value, and "
			"may reject unrecognized values. More info: "
			"https://git.k8s.io/community/contributors/devel/"
			"sig-architecture/api-conventions.md#resources"));
	json_object_set_new(
	    props, "kind",
	    string_prop("Kind is a string value representing the REST resource "
			"this object represents. Servers may infer this from "
			"the endpoint the client submits requests to. Cannot "
			"be updated. In CamelCase. More info: "
			"https://git.k8s.io/community/contributors/devel/"
			"sig-architecture/api-conventions.md#types-kinds"));
}

/*
 * The version's kind and list schemas as kube's CRD OpenAPI builder
 * publishes them (new references added to schemas): the CRD's
 * openAPIV3Schema with apiVersion and kind described, metadata a reference
 * to ObjectMeta, and x-kubernetes-group-version-kind, which kubectl explain
 * looks the kind up by.
 */
void srv_cr_openapi(const struct srv_resource *r, json_t *schemas)
{
	const json_t *src = r->crd ? version_schema(r->crd->version) : NULL;
	json_t *sch = json_is_object(src) ? json_deep_copy(src) : json_object();
	if (!sch)
		return;
	publish_node(sch, 0);
	if (!json_object_get(sch, "type"))
		json_object_set_new(sch, "type", json_string("object"));
	json_t *props = json_object_get(sch, "properties");
	if (!json_is_object(props)) {
		props = json_object();
		json_object_set_new(sch, "properties", props);
	}
	type_meta(props);
	json_object_set_new(
	    props, "metadata",
	    ref_prop("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
		     object_meta_desc));
	json_object_set_new(sch, "x-kubernetes-group-version-kind",
			    gvk_list(r, r->kind));
	json_t *sel = selectable_ext(r);
	if (sel)
		json_object_set(sch, "x-kubernetes-selectable-fields", sel);
	char name[400], list_name[400];
	srv_cr_schema_name(r, r->kind, name, sizeof name);
	srv_cr_schema_name(r, r->list_kind, list_name, sizeof list_name);
	json_object_set_new(schemas, name, sch);

	char ref[450], desc[300];
	snprintf(ref, sizeof ref, "#/components/schemas/%s", name);
	snprintf(desc, sizeof desc, "%s is a list of %s", r->list_kind,
		 r->kind);
	json_t *lprops = json_object();
	type_meta(lprops);
	char items_desc[400];
	snprintf(items_desc, sizeof items_desc,
		 "List of %s. More info: "
		 "https://git.k8s.io/community/contributors/devel/"
		 "sig-architecture/api-conventions.md",
		 r->resource);
	json_object_set_new(lprops, "items",
			    json_pack("{s:s,s:s,s:{s:s}}", "description",
				      items_desc, "type", "array", "items",
				      "$ref", ref));
	json_object_set_new(
	    lprops, "metadata",
	    ref_prop("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
		     "Standard list metadata. More info: "
		     "https://git.k8s.io/community/contributors/devel/"
		     "sig-architecture/api-conventions.md#types-kinds"));
	json_t *list = json_pack(
	    "{s:s,s:[s],s:o,s:s,s:o}", "description", desc, "required", "items",
	    "properties", lprops, "type", "object",
	    "x-kubernetes-group-version-kind", gvk_list(r, r->list_kind));
	if (list && sel)
		json_object_set(list, "x-kubernetes-selectable-fields", sel);
	json_decref(sel);
	if (list)
		json_object_set_new(schemas, list_name, list);
}

uint64_t srv_cr_serial(const struct srv_resource *r)
{
	return r->crd ? r->crd->serial : 0;
}

const char *srv_cr_deprecation(const struct srv_resource *r)
{
	return r->crd ? r->crd->deprecation : NULL;
}

const char *srv_cr_webhook_warning(const struct srv_resource *r)
{
	return r->crd ? r->crd->webhook_warning : NULL;
}

/* ------------------------------------------------------------ CRD hooks */

/*
 * Naming decisions (registry/crdnames.h). Every one is made under map_mu
 * from the map, and the map holds the outcome of each earlier decision
 * before map_mu is released (the status is written, then the CRD's entry
 * rebuilt from the store): decisions are serialized and each sees the
 * names all earlier ones accepted, so no two CRDs of a group ever accept
 * the same name -- neither two creates racing nor a create racing the
 * crd-naming controller. The inline ones (a create's, an update's) decide
 * for the written CRD; the controller re-decides for CRDs that wait
 * (srv_crd_settle).
 */

/* Add the names the built-in resources of group hold. */
static void builtin_taken(const char *group, struct reg_crd_taken *t)
{
	for (size_t i = 0; i < srv_n_builtin; i++) {
		const struct srv_resource *r = &srv_builtin[i];
		if (!strcmp(r->group, group))
			reg_crd_taken_add_builtin(t, r->resource, r->kind,
						  r->short_names);
	}
}

static const char *crd_group(const json_t *crd)
{
	const char *g = json_string_value(
	    json_object_get(json_object_get(crd, "spec"), "group"));
	return g ? g : "";
}

static const json_t *accepted_names(const json_t *crd)
{
	return json_object_get(json_object_get(crd, "status"), "acceptedNames");
}

/* The naming and establishing decision for crd against the accepted names
   of its group's other CRDs in the map, its own (as kube's naming
   controller counts them) and the group's built-ins. Its own come from
   crd, not from its entry in the map: a write decided before it commits
   (srv_crd_update) carries the status it keeps, and the map may still hold
   an older version, or a deleted CRD of the same name a create replaces.
   *st: the status to write (new), or NULL when crd's is already that.
   Errors: LP_E_NOMEM. Call with map_mu held. */
static lp_err decide(const json_t *crd, json_t **st)
{
	const char *group = crd_group(crd);
	const char *name = json_string_value(
	    json_object_get(json_object_get(crd, "metadata"), "name"));
	struct reg_crd_taken t;
	lp_err rc = reg_crd_taken_init(&t);
	if (rc)
		return rc;
	struct crdmap *m = map_locked();
	for (size_t i = 0; m && i < m->n; i++) {
		const json_t *other = m->c[i]->crd;
		if (!strcmp(crd_group(other), group) &&
		    (!name || strcmp(m->c[i]->name, name)))
			reg_crd_taken_add(&t, accepted_names(other));
	}
	reg_crd_taken_add(&t, accepted_names(crd));
	builtin_taken(group, &t);
	char now[32];
	reg_now(now);
	rc = reg_crd_names_status(crd, &t, now, crd_ca_invalid(crd), st);
	reg_crd_taken_free(&t);
	return rc;
}

static const char *meta_of(const json_t *obj, const char *k)
{
	return json_string_value(
	    json_object_get(json_object_get(obj, "metadata"), k));
}

/* Write crd with status st (taken) if crd is still the stored version
   (its resourceVersion), then rebuild its entry. Call with map_mu held. */
static lp_err write_status(eng *e, const json_t *crd, json_t *st)
{
	const char *name = meta_of(crd, "name");
	const char *rv = meta_of(crd, "resourceVersion");
	struct reg_key k;
	if (!name || !rv || crd_key(name, &k)) {
		json_decref(st);
		return LP_E_INVAL;
	}
	json_t *next = json_deep_copy(crd);
	if (!next) {
		json_decref(st);
		return LP_E_NOMEM;
	}
	json_object_set_new(next, "status", st);
	struct eng_cmp cmp = {ENG_CMP_MOD, strtoll(rv, NULL, 10)};
	char *out = NULL;
	size_t ol;
	lp_err rc = reg_put(e, &k, next, &cmp, false, NULL, &out, &ol, NULL);
	free(out);
	json_decref(next);
	if (rc == LP_OK)
		json_decref(reload_one(e, name));
	return rc;
}

/* The inline check after a write of crd (an update): write the status the
   naming and establishing controllers would, when it differs. Call with
   map_mu held. */
static void settle(eng *e, const json_t *crd)
{
	json_t *st = NULL;
	if (decide(crd, &st) == LP_OK && st)
		write_status(e, crd, st);
}

/*
 * Write the CRD obj under k if cmp holds, with its naming and establishing
 * decided inline: when the decision changes its status, the write
 * (revision R) and then the status (R+1) commit as one chain, one fsync,
 * the status conditioned on the key still holding R. The serving map has
 * the CRD as stored before map_mu is released. *out: obj as stored at R.
 * Errors: the first write's (nothing written), as reg_put_then.
 */
static lp_err write_decided(eng *e, const struct reg_key *k, json_t *obj,
			    const struct eng_cmp *cmp, char **out,
			    size_t *out_len)
{
	const char *name = meta_of(obj, "name");
	char nm[256];
	snprintf(nm, sizeof nm, "%s", name ? name : "");
	map_lock();
	json_t *st = NULL;
	json_t *then = NULL;
	if (decide(obj, &st) == LP_OK && st) {
		then = json_deep_copy(obj);
		if (then)
			json_object_set_new(then, "status", st);
		else
			json_decref(st);
	}
	lp_err rc;
	if (then) {
		lp_err then_rc;
		rc = reg_put_then(e, k, obj, cmp, then, out, out_len, NULL,
				  &then_rc);
		/* The write stands alone: the crd-naming controller sees
		   a CRD waiting for its names and decides again. */
		if (rc == LP_OK && then_rc != LP_OK)
			lp_warn("CRD %s: its status was not written: %s", nm,
				lp_strerror(then_rc));
		json_decref(then);
	} else {
		rc = reg_put(e, k, obj, cmp, false, NULL, out, out_len, NULL);
	}
	if (rc == LP_OK)
		json_decref(reload_one(e, nm));
	map_unlock();
	return rc;
}

lp_err srv_crd_create(eng *e, const struct reg_key *k, json_t *obj, char **out,
		      size_t *out_len)
{
	static const struct eng_cmp absent = {ENG_CMP_ABSENT, 0};
	return write_decided(e, k, obj, &absent, out, out_len);
}

lp_err srv_crd_update(eng *e, const struct reg_key *k, json_t *obj, int64_t mod,
		      char **out, size_t *out_len)
{
	const struct eng_cmp cmp = {ENG_CMP_MOD, mod};
	return write_decided(e, k, obj, &cmp, out, out_len);
}

/* Rebuild the entries of group's CRDs whose stored version differs from
   the map's (deleted, or written by a request whose srv_crd_after_write
   has not run yet): the controller reacts to the store's events, which
   can come before that. Call with map_mu held. */
static void refresh_group(eng *e, const char *group)
{
	struct crdmap *m = map_locked();
	json_t *stale = json_array();
	for (size_t i = 0; stale && m && i < m->n; i++) {
		const json_t *c = m->c[i]->crd;
		if (strcmp(crd_group(c), group))
			continue;
		struct reg_key k;
		struct reg_obj cur = {0};
		const char *rv = meta_of(c, "resourceVersion");
		if (crd_key(m->c[i]->name, &k))
			continue;
		lp_err rc = reg_get(e, &k, &cur);
		if (rc == LP_E_NOTFOUND ||
		    (rc == LP_OK && (!rv || cur.mod != strtoll(rv, NULL, 10))))
			json_array_append_new(stale,
					      json_string(m->c[i]->name));
		reg_obj_free(&cur);
	}
	size_t i;
	json_t *n;
	json_array_foreach(stale, i, n)
	    json_decref(reload_one(e, json_string_value(n)));
	json_decref(stale);
}

lp_err srv_crd_settle(eng *e, const char *name, const char *uid, bool *wrote)
{
	*wrote = false;
	struct reg_key k;
	if (crd_key(name, &k))
		return LP_E_NOTFOUND;
	map_lock();
	struct reg_obj c = {0};
	lp_err rc = reg_get(e, &k, &c);
	if (rc == LP_OK)
		rc = reg_obj_decode(&c);
	const char *cuid = rc ? NULL : meta_of(c.obj, "uid");
	if (rc == LP_OK && uid && (!cuid || strcmp(cuid, uid)))
		rc = LP_E_CONFLICT;
	json_t *st = NULL;
	if (rc == LP_OK && !reg_crd_names_settled(c.obj)) {
		refresh_group(e, crd_group(c.obj));
		rc = decide(c.obj, &st);
	}
	if (rc == LP_OK && st) {
		rc = write_status(e, c.obj, st);
		*wrote = rc == LP_OK;
	}
	reg_obj_free(&c);
	map_unlock();
	return rc;
}

/*
 * After a committed CRD write: rebuild only that CRD's entry, and for a
 * CRD that is still there run the naming and establishing check inline
 * (a status write of its own when the names or conditions change, so
 * watchers see the write and then MODIFIED), rebuilding the entry again.
 * Other CRDs of the group that wait for names freed by this write are the
 * crd-naming controller's. name NULL (several CRDs written) rebuilds
 * everything.
 */
void srv_crd_after_write(eng *e, const char *name)
{
	map_lock();
	if (!name) {
		reload_all(e);
		map_unlock();
		return;
	}
	json_t *crd = reload_one(e, name);
	if (crd) {
		settle(e, crd);
		json_decref(crd);
	}
	map_unlock();
}

struct keys {
	char **k;
	size_t *len;
	size_t n, cap;
	bool oom;
};

static enum eng_take key_cb(void *ud, const struct eng_record *rec)
{
	struct keys *ks = ud;
	if (ks->n == ks->cap) {
		size_t cap = ks->cap ? ks->cap * 2 : 64;
		char **k = realloc(ks->k, cap * sizeof *k);
		size_t *l = k ? realloc(ks->len, cap * sizeof *l) : NULL;
		if (k)
			ks->k = k;
		if (!k || !l) {
			ks->oom = true;
			return ENG_STOP;
		}
		ks->len = l;
		ks->cap = cap;
	}
	char *c = malloc(rec->key_len);
	if (!c) {
		ks->oom = true;
		return ENG_STOP;
	}
	memcpy(c, rec->key, rec->key_len);
	ks->k[ks->n] = c;
	ks->len[ks->n++] = rec->key_len;
	return ENG_TAKE;
}

/* The CRD finalizer's work (reference §8.4): delete every instance, a page
   of keys at a time (no snapshot held while deleting). */
lp_err srv_crd_before_delete(eng *e, const json_t *crd)
{
	json_t *spec = json_object_get(crd, "spec");
	const char *group = json_string_value(json_object_get(spec, "group"));
	const char *plural = json_string_value(
	    json_object_get(json_object_get(spec, "names"), "plural"));
	struct reg_key prefix;
	if (!group || !plural || reg_list_prefix(group, plural, NULL, &prefix))
		return LP_OK;
	for (;;) {
		struct keys ks = {0};
		struct reg_list_req q = {.prefix = &prefix, .limit = 500};
		struct reg_list_res res;
		lp_err rc = reg_list(e, &q, key_cb, &ks, &res);
		free(res.token);
		if (!rc && ks.oom)
			rc = LP_E_NOMEM;
		for (size_t i = 0; !rc && i < ks.n; i++) {
			eng_txn *t;
			if ((rc = eng_txn_new(e, &t)))
				break;
			rc = eng_txn_del(t, ks.k[i], ks.len[i], NULL);
			if (!rc)
				rc = eng_txn_commit(t, NULL);
			eng_txn_free(t);
		}
		size_t n = ks.n;
		for (size_t i = 0; i < ks.n; i++)
			free(ks.k[i]);
		free(ks.k);
		free(ks.len);
		if (rc)
			return rc;
		if (!n)
			return LP_OK;
	}
}
