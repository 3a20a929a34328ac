/*
 * managed.c -- metadata.managedFields and server-side apply (managed.h).
 *
 * A field set is a sorted array of member paths. A path is the path
 * elements from the object's root, each followed by a 0 byte: "f:<name>"
 * for an object's field, "k:<json>" for a keyed list's item (its key fields
 * as a JSON object, keys sorted), "v:<json>" for a set's value (neither
 * holds a 0 byte: JSON text escapes it, and jansson keys cannot hold one).
 * Sorted bytewise, a path comes before the paths below it and siblings come
 * in strcmp order of their elements -- FieldsV1's sorted keys, depth first
 * -- so union, difference and intersection are merges, "anything at or
 * below P" is a binary search, and FieldsV1 is written in one pass
 * (fset_to_v1). Writes do this on every create and update: no JSON object
 * per node (jansson's objects are hash tables) until the entry is written.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include "managed.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crd.h"
#include "fields.h"
#include "registry/json.h"
#include "registry/object.h"
#include "schema.h"
#include "table.h"

#define LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"
#define SRV_MF_MAX_UPDATERS 10 /* DefaultMaxUpdateManagers upstream */
#define SRV_MF_ANCIENT "ancient-changes"

/* ------------------------------------------------------------ sets */

struct span {
	size_t off, len;
};

struct fset {
	char *buf; /* the paths' bytes */
	size_t used, cap;
	struct span *v;
	size_t n, cap_v;
	bool oom; /* sticky: an add failed; the set is incomplete */
};

static void fset_free(struct fset *s)
{
	if (!s)
		return;
	free(s->buf);
	free(s->v);
	free(s);
}

static struct fset *fset_new(void)
{
	return calloc(1, sizeof(struct fset));
}

static const char *at(const struct fset *s, size_t i)
{
	return s->buf + s->v[i].off;
}

/* Append a path (unsorted until fset_norm). */
static void fset_add(struct fset *s, const char *p, size_t len)
{
	if (s->oom)
		return;
	if (s->used + len > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 512;
		while (cap < s->used + len)
			cap *= 2;
		char *b = realloc(s->buf, cap);
		if (!b) {
			s->oom = true;
			return;
		}
		s->buf = b;
		s->cap = cap;
	}
	if (s->n == s->cap_v) {
		size_t cap = s->cap_v ? s->cap_v * 2 : 16;
		struct span *v = realloc(s->v, cap * sizeof *v);
		if (!v) {
			s->oom = true;
			return;
		}
		s->v = v;
		s->cap_v = cap;
	}
	memcpy(s->buf + s->used, p, len);
	s->v[s->n++] = (struct span){s->used, len};
	s->used += len;
}

static int pcmp(const char *a, size_t al, const char *b, size_t bl)
{
	int d = memcmp(a, b, al < bl ? al : bl);
	if (d)
		return d;
	return al < bl ? -1 : al > bl;
}

static int cmp_span(const void *x, const void *y, void *ud)
{
	const struct fset *s = ud;
	const struct span *a = x, *b = y;
	return pcmp(s->buf + a->off, a->len, s->buf + b->off, b->len);
}

/* Sort and drop duplicates. */
static void fset_norm(struct fset *s)
{
	if (s->n < 2)
		return;
	size_t k = 1;
	while (k < s->n && cmp_span(&s->v[k - 1], &s->v[k], s) < 0)
		k++;
	if (k == s->n)
		return; /* sorted and unique already (a walk in key order) */
	qsort_r(s->v, s->n, sizeof *s->v, cmp_span, s);
	size_t o = 1;
	for (size_t i = 1; i < s->n; i++)
		if (cmp_span(&s->v[i], &s->v[o - 1], s))
			s->v[o++] = s->v[i];
	s->n = o;
}

static bool fset_has(const struct fset *s, const char *p, size_t len)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = pcmp(at(s, mid), s->v[mid].len, p, len);
		if (!d)
			return true;
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Does s hold p or a path below it? */
static bool fset_has_at_or_below(const struct fset *s, const char *p, size_t len)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pcmp(at(s, mid), s->v[mid].len, p, len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && s->v[lo].len >= len && !memcmp(at(s, lo), p, len);
}

/* A new set of a's paths that keep(b) says (both normalized):
   want_in_b true: a ∩ b, false: a − b. */
static struct fset *fset_filter(const struct fset *a, const struct fset *b,
				bool want_in_b)
{
	struct fset *o = fset_new();
	if (!o)
		return NULL;
	for (size_t i = 0; i < a->n; i++)
		if (fset_has(b, at(a, i), a->v[i].len) == want_in_b)
			fset_add(o, at(a, i), a->v[i].len);
	return o;
}

/* *a = *a − b (b may be NULL). */
static void fset_sub(struct fset **a, const struct fset *b)
{
	if (!b || !b->n || !(*a)->n)
		return;
	struct fset *o = fset_filter(*a, b, false);
	if (!o) {
		(*a)->oom = true;
		return;
	}
	fset_free(*a);
	*a = o;
}

/* a ∪= b (both normalized): one merge. */
static void fset_union(struct fset *a, const struct fset *b)
{
	if (!b->n)
		return;
	if (!a->n) {
		for (size_t i = 0; i < b->n; i++)
			fset_add(a, at(b, i), b->v[i].len);
		return;
	}
	struct fset *o = fset_new();
	if (!o) {
		a->oom = true;
		return;
	}
	size_t i = 0, j = 0;
	while (i < a->n || j < b->n) {
		int d = i == a->n   ? 1
			: j == b->n ? -1
				    : pcmp(at(a, i), a->v[i].len, at(b, j),
					   b->v[j].len);
		if (d <= 0) {
			fset_add(o, at(a, i), a->v[i].len);
			i++;
			j += d == 0;
		} else {
			fset_add(o, at(b, j), b->v[j].len);
			j++;
		}
	}
	bool oom = o->oom;
	struct fset t = *a;
	*a = *o;
	*o = t;
	fset_free(o);
	a->oom = oom;
}

static bool fset_equal(const struct fset *a, const struct fset *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (pcmp(at(a, i), a->v[i].len, at(b, i), b->v[i].len))
			return false;
	return true;
}

/* A growable path of elements (each followed by its 0 byte). */
struct pbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static size_t pb_push(struct pbuf *b, const char *pre, const char *el,
		      size_t el_len)
{
	size_t old = b->len;
	size_t pl = strlen(pre);
	size_t need = b->len + pl + el_len + 1;
	if (need > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		while (cap < need)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return old;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, pre, pl);
	memcpy(b->p + b->len + pl, el, el_len);
	b->len += pl + el_len;
	b->p[b->len++] = 0;
	return old;
}

/* FieldsV1 into s: a node is a member when it is {} or has ".". */
static void from_v1(struct fset *s, struct pbuf *b, const json_t *v)
{
	const char *k;
	json_t *c;
	json_object_foreach((json_t *)v, k, c)
	{
		if (!strcmp(k, "."))
			continue;
		size_t o = pb_push(b, "", k, strlen(k));
		if (b->oom) {
			s->oom = true;
			return;
		}
		if (!json_is_object(c) || json_object_size(c) == 0 ||
		    json_object_get(c, "."))
			fset_add(s, b->p, b->len);
		if (json_is_object(c))
			from_v1(s, b, c);
		b->len = o;
	}
}

static struct fset *fset_from_v1(const json_t *v1)
{
	struct fset *s = fset_new();
	if (!s)
		return NULL;
	struct pbuf b = {0};
	if (json_is_object(v1))
		from_v1(s, &b, v1);
	free(b.p);
	fset_norm(s);
	return s;
}

/* FieldsV1 of a normalized set (new): keys sorted, "." first on a member
   with paths below it, {} for a member without. */
static json_t *fset_to_v1(const struct fset *s)
{
	/* the stack of nodes down the current path, one per element */
	size_t maxd = 1;
	for (size_t i = 0; i < s->n; i++) {
		size_t d = 0;
		for (size_t k = 0; k < s->v[i].len; k++)
			d += at(s, i)[k] == 0;
		if (d + 1 > maxd)
			maxd = d + 1;
	}
	json_t **node = malloc(maxd * sizeof *node);
	size_t *plen = malloc(maxd * sizeof *plen);
	const char **ppath = malloc(maxd * sizeof *ppath);
	json_t *root = json_object();
	if (!node || !plen || !ppath || !root) {
		free(node);
		free(plen);
		free(ppath);
		return root;
	}
	size_t d = 0;
	node[0] = root;
	plen[0] = 0;
	ppath[0] = "";
	for (size_t i = 0; i < s->n; i++) {
		const char *p = at(s, i);
		size_t len = s->v[i].len;
		while (d > 0 && !(plen[d] <= len && !memcmp(p, ppath[d], plen[d])))
			d--;
		size_t pos = plen[d];
		while (pos < len && d + 1 < maxd) {
			/* Sorted: a child not on the stack was never made (its
			   subtree's paths are contiguous). Keys are jansson's own
			   or JSON text it wrote: valid UTF-8. */
			const char *pe = p + pos;
			size_t el = strlen(pe);
			json_t *c = json_object();
			json_object_set_new_nocheck(node[d], pe, c);
			d++;
			node[d] = c;
			plen[d] = pos + el + 1;
			ppath[d] = p;
			pos += el + 1;
		}
		if (i + 1 < s->n && s->v[i + 1].len > len &&
		    !memcmp(at(s, i + 1), p, len))
			json_object_set_new_nocheck(node[d], ".", json_object());
	}
	free(node);
	free(plen);
	free(ppath);
	return root;
}

/* A path as upstream prints it: .data.a, .spec.ports[port=80,protocol="TCP"],
   .metadata.finalizers[="x"]. */
static void path_string(const char *p, size_t len, char *out, size_t n)
{
	size_t o = 0;
	out[0] = 0;
	for (size_t pos = 0; pos < len && o + 1 < n;) {
		const char *pe = p + pos;
		pos += strlen(pe) + 1;
		int w = 0;
		if (pe[0] == 'f') {
			w = snprintf(out + o, n - o, ".%s", pe + 2);
		} else if (pe[0] == 'v') {
			w = snprintf(out + o, n - o, "[=%s]", pe + 2);
		} else {
			json_error_t je;
			json_t *kv = json_loads(pe + 2, JSON_ALLOW_NUL, &je);
			const char *kk;
			json_t *vv;
			bool first = true;
			w = snprintf(out + o, n - o, "[");
			json_object_foreach(kv, kk, vv)
			{
				if (o + (size_t)w >= n)
					break;
				char *sv = json_dumps(vv, JSON_ENCODE_ANY | JSON_COMPACT);
				w += snprintf(out + o + w, n - o - (size_t)w, "%s%s=%s",
					      first ? "" : ",", kk, sv ? sv : "");
				free(sv);
				first = false;
			}
			json_decref(kv);
			if (o + (size_t)w < n)
				w += snprintf(out + o + w, n - o - (size_t)w, "]");
		}
		if (w < 0)
			break;
		o += (size_t)w;
		if (o >= n) {
			out[n - 1] = 0;
			break;
		}
	}
}

/* ------------------------------------------------------------ walking */

enum scope {
	SC_ALL,	      /* every field */
	SC_NO_STATUS, /* the main resource of a type with a status
			 subresource: status is not its to change */
	SC_STATUS,    /* the status subresource: all but spec, the reset
			 field of kube's status strategies (GetResetFields),
			 so a label it sets is its own */
};

struct walk {
	const struct srv_resource *res;
	enum scope scope;
	int depth;	  /* 0: the object's own fields */
	char path[1024];  /* dotted field path without list positions */
	size_t len;
	bool too_deep;	  /* the path did not fit: treated as unknown */
	bool map_keys;	  /* a custom resource's map keys are members of
			     an apply's set (fs_add_fields) */
	bool in_meta;	  /* inside a custom resource's (or an embedded
			     resource's) metadata: ObjectMeta's fields */
	struct pbuf pb;	  /* the set path of the position */
};

/* The position's set path into s. */
static void mark(struct fset *s, const struct walk *w)
{
	if (w->pb.oom)
		s->oom = true;
	else
		fset_add(s, w->pb.p, w->pb.len);
}

static size_t push(struct walk *w, const char *field)
{
	size_t old = w->len;
	size_t fl = strlen(field);
	size_t need = (old ? 1 : 0) + fl;
	if (old + need + 1 > sizeof w->path) {
		w->too_deep = true;
	} else {
		if (old)
			w->path[w->len++] = '.';
		memcpy(w->path + w->len, field, fl);
		w->len += fl;
		w->path[w->len] = 0;
	}
	w->depth++;
	return old;
}

static void pop(struct walk *w, size_t old)
{
	w->len = old;
	w->path[old] = 0;
	w->depth--;
}

static bool path_is(const struct walk *w, const char *p)
{
	return !w->too_deep && !strcmp(w->path, p);
}

/* Fields no manager owns (upstream's stripMeta, and the reset fields of
   the main resource and its status subresource). */
static bool skip_field(const struct walk *w, const char *key)
{
	if (w->depth == 0) {
		if (!strcmp(key, "apiVersion") || !strcmp(key, "kind"))
			return true;
		if (w->scope == SC_NO_STATUS && !strcmp(key, "status"))
			return true;
		if (w->scope == SC_STATUS && !strcmp(key, "spec"))
			return true;
		return false;
	}
	if (w->depth == 1 && path_is(w, "metadata")) {
		static const char *const server[] = {
		    "name",	    "namespace",	 "uid",
		    "resourceVersion", "generation",	 "creationTimestamp",
		    "deletionTimestamp", "deletionGracePeriodSeconds",
		    "selfLink",	    "managedFields",	 "clusterName"};
		for (size_t i = 0; i < sizeof server / sizeof server[0]; i++)
			if (!strcmp(key, server[i]))
				return true;
	}
	return false;
}

/* An object added by an update owns its own path (".") unless it is one
   of the structs a built-in type always has (upstream compares with the
   zero value of the Go type, where those exist already). */
static bool owns_itself(const struct walk *w)
{
	if (path_is(w, "metadata"))
		return false;
	if (w->res && !w->res->custom)
		return !(path_is(w, "spec") || path_is(w, "status") ||
			 path_is(w, "involvedObject") || path_is(w, "source"));
	return true;
}

/* What a list is to server-side apply. */
struct lkind {
	enum srv_schema_list kind;
	const char *const *keys;
	size_t n_keys;
	bool atomic_items; /* items are owned whole (ownerReferences) */
	/* a custom resource's item schema: a key an item leaves out takes
	   its default from there, as structured-merge-diff fills it */
	const struct srv_schema_node *items;
};

static void list_kind(const struct walk *w, const struct srv_schema_node *sn,
		      struct lkind *lk)
{
	static const char *const k_uid[] = {"uid"};
	static const char *const k_port[] = {"port", "protocol"};
	memset(lk, 0, sizeof *lk);
	lk->kind = SRV_SLIST_ATOMIC;
	if (w->too_deep)
		return;
	if (path_is(w, "metadata.finalizers")) {
		lk->kind = SRV_SLIST_SET;
		return;
	}
	if (path_is(w, "metadata.ownerReferences")) {
		lk->kind = SRV_SLIST_MAP;
		lk->keys = k_uid;
		lk->n_keys = 1;
		lk->atomic_items = true;
		return;
	}
	if (!w->res)
		return;
	if (w->res->custom) {
		lk->kind = srv_schema_list_kind(sn, &lk->keys, &lk->n_keys);
		lk->items = srv_schema_items(sn);
		/* items the schema makes atomic maps are leaves, the item
		   itself what a manager owns (SMD's ToFieldSet) */
		lk->atomic_items = lk->kind == SRV_SLIST_MAP &&
				   srv_schema_map_atomic(lk->items);
		return;
	}
	if (path_is(w, "spec.ports") && !strcmp(w->res->resource, "services")) {
		lk->kind = SRV_SLIST_MAP;
		lk->keys = k_port;
		lk->n_keys = 2;
		return;
	}
	if (path_is(w, "secrets") &&
	    !strcmp(w->res->resource, "serviceaccounts")) {
		/* keyed by name, its items ObjectReferences owned whole */
		static const char *const k_sa[] = {"name"};
		lk->kind = SRV_SLIST_MAP;
		lk->keys = k_sa;
		lk->n_keys = 1;
		lk->atomic_items = true;
		return;
	}
	if (!w->res->smp_list)
		return;
	const char *key = NULL;
	switch (w->res->smp_list(NULL, w->path, &key)) {
	case SRV_LIST_MERGE_SET:
		lk->kind = SRV_SLIST_SET;
		break;
	case SRV_LIST_MERGE_KEYED: {
		/* the keys smp_list names, as static arrays */
		static const char *const k_name[] = {"name"};
		static const char *const k_p[] = {"port"};
		lk->kind = SRV_SLIST_MAP;
		lk->n_keys = 1;
		if (key && !strcmp(key, "name"))
			lk->keys = k_name;
		else if (key && !strcmp(key, "uid"))
			lk->keys = k_uid;
		else if (key && !strcmp(key, "port"))
			lk->keys = k_p;
		else
			*lk = (struct lkind){.kind = SRV_SLIST_ATOMIC};
		break;
	}
	case SRV_LIST_REPLACE:
		break;
	}
}

/* An object owned and replaced whole: x-kubernetes-map-type: atomic in a
   custom resource's schema; in a built-in, what k8s.io/api marks
   +mapType=atomic or +structType=atomic among the kinds served: a
   Service's selector, an Event's object references (core/v1
   ObjectReference; events.k8s.io's regarding is stored as involvedObject,
   and an apply through that group walks it by its own name) and a role
   binding's roleRef (rbac/v1 RoleRef). */
static bool atomic_object(const struct walk *w, const struct srv_schema_node *sn)
{
	if (!w->res)
		return false;
	if (w->res->custom)
		return srv_schema_map_atomic(sn);
	if (!strcmp(w->res->resource, "services") && !w->res->group[0])
		return path_is(w, "spec.selector");
	if (!strcmp(w->res->resource, "events"))
		return path_is(w, "involvedObject") || path_is(w, "related") ||
		       path_is(w, "regarding");
	if (!strcmp(w->res->resource, "rolebindings") ||
	    !strcmp(w->res->resource, "clusterrolebindings"))
		return path_is(w, "roleRef");
	return false;
}

/* "<prefix><json>" (malloc), or NULL when out of memory. */
static char *pe_json(const char *prefix, const json_t *v)
{
	char *s = reg_json_dump_sorted(v, NULL);
	if (!s)
		return NULL;
	size_t n = strlen(prefix) + strlen(s) + 1;
	char *pe = malloc(n);
	if (pe)
		snprintf(pe, n, "%s%s", prefix, s);
	free(s);
	return pe;
}

/* The path element of a keyed list's item; NULL when it has no key. */
static char *item_pe(const json_t *item, const struct lkind *lk,
		     const struct walk *w)
{
	if (!json_is_object(item))
		return NULL;
	json_t *k = json_object();
	for (size_t i = 0; i < lk->n_keys; i++) {
		json_t *v = json_object_get(item, lk->keys[i]);
		if (!v && lk->items)
			v = (json_t *)srv_schema_default_of(
			    srv_schema_prop(lk->items, lk->keys[i]));
		if (!v && !strcmp(lk->keys[i], "protocol") &&
		    path_is(w, "spec.ports")) {
			/* upstream defaults the key: ports are TCP */
			json_object_set_new(k, "protocol", json_string("TCP"));
			continue;
		}
		if (!v) { /* any value, null too, is a key (helpers.go) */
			json_decref(k);
			return NULL;
		}
		json_object_set(k, lk->keys[i], v);
	}
	char *pe = pe_json("k:", k);
	json_decref(k);
	return pe;
}

/* Path elements of a list's items, or false when the list cannot be keyed
   (then it is atomic). A live list may hold an item twice (finalizers
   written by an update, say): structured-merge-diff (typed/tofieldset.go,
   compare.go, merge.go) then makes each repeated key one leaf, owned and
   compared whole with all its copies, and keeps every other item as it
   keeps it in a list without repeats. */
struct lidx {
	char **pe;   /* by position */
	size_t *ord; /* positions in order of pe, then of position: lookups
			and repeats in O(n log n), whatever the list's size */
	size_t *cnt; /* by position: the items with its pe (1: no repeat) */
	size_t n;
};

static void lidx_free(struct lidx *ix)
{
	for (size_t i = 0; i < ix->n; i++)
		free(ix->pe[i]);
	free(ix->pe);
	free(ix->ord);
	free(ix->cnt);
	ix->pe = NULL;
	ix->ord = NULL;
	ix->cnt = NULL;
	ix->n = 0;
}

static int cmp_ord(const void *a, const void *b, void *ud)
{
	char **pe = ud;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int d = strcmp(pe[x], pe[y]);
	return d ? d : (x > y) - (x < y);
}

/* dups: whether repeated keys are kept (a live list) or make the list
   atomic (a configuration: smd_check refuses its repeats first). */
static bool lidx_build(const json_t *arr, const struct lkind *lk,
		       const struct walk *w, struct lidx *ix, bool dups)
{
	size_t n = json_array_size(arr);
	ix->n = 0;
	ix->pe = calloc(n ? n : 1, sizeof *ix->pe);
	ix->ord = malloc((n ? n : 1) * sizeof *ix->ord);
	ix->cnt = malloc((n ? n : 1) * sizeof *ix->cnt);
	if (!ix->pe || !ix->ord || !ix->cnt) {
		lidx_free(ix);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		const json_t *it = json_array_get(arr, i);
		char *pe;
		if (lk->kind == SRV_SLIST_SET)
			pe = (json_is_object(it) || json_is_array(it))
				     ? NULL
				     : pe_json("v:", it);
		else
			pe = item_pe(it, lk, w);
		if (!pe) {
			lidx_free(ix);
			return false;
		}
		ix->pe[ix->n] = pe;
		ix->ord[ix->n] = ix->n;
		ix->n++;
	}
	qsort_r(ix->ord, ix->n, sizeof *ix->ord, cmp_ord, ix->pe);
	for (size_t i = 0; i < ix->n;) {
		size_t j = i + 1;
		while (j < ix->n &&
		       !strcmp(ix->pe[ix->ord[i]], ix->pe[ix->ord[j]]))
			j++;
		if (j - i > 1 && !dups) {
			lidx_free(ix);
			return false;
		}
		for (size_t x = i; x < j; x++)
			ix->cnt[ix->ord[x]] = j - i;
		i = j;
	}
	return true;
}

/* The index in ix->ord of pe's first item, or -1. */
static long lidx_run(const struct lidx *ix, const char *pe)
{
	size_t lo = 0, hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(ix->pe[ix->ord[mid]], pe) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n && !strcmp(ix->pe[ix->ord[lo]], pe) ? (long)lo : -1;
}

/* The position of pe's first item, or -1. */
static long lidx_find(const struct lidx *ix, const char *pe)
{
	long r = lidx_run(ix, pe);
	return r < 0 ? -1 : (long)ix->ord[r];
}

/* Whether position i holds its key's first item. */
static bool lidx_first(const struct lidx *ix, size_t i)
{
	return ix->cnt[i] == 1 || lidx_find(ix, ix->pe[i]) == (long)i;
}

/* Enter field key: the dotted path and the set path. Returns what leave
   takes back. */
struct mark_pos {
	size_t dotted, set;
};

static struct mark_pos enter_field(struct walk *w, const char *key)
{
	struct mark_pos m = {w->len, w->pb.len};
	push(w, key);
	pb_push(&w->pb, "f:", key, strlen(key));
	return m;
}

static void enter_item(struct walk *w, const char *pe, struct mark_pos *m)
{
	m->set = w->pb.len;
	pb_push(&w->pb, "", pe, strlen(pe));
}

static void leave(struct walk *w, struct mark_pos m)
{
	pop(w, m.dotted);
	w->pb.len = m.set;
}

static void leave_item(struct walk *w, struct mark_pos m)
{
	w->pb.len = m.set;
}

static void fs_add(struct fset *s, const json_t *v, struct walk *w,
		   const struct srv_schema_node *sn, bool dots);

/* Whether key k of a custom resource's object at sn is a field its type
   declares (the schema's properties; apiVersion, kind and metadata where
   kube's builder adds them: the root and embedded resources) rather than
   a map key (additionalProperties, or anything under
   x-kubernetes-preserve-unknown-fields). */
static bool cr_declared(const struct walk *w, const struct srv_schema_node *sn,
			const char *k)
{
	bool open, emb;
	srv_schema_smd(sn, &open, &emb);
	if ((w->depth == 0 || emb) &&
	    (!strcmp(k, "apiVersion") || !strcmp(k, "kind") ||
	     !strcmp(k, "metadata")))
		return true;
	return srv_schema_declares(sn, k);
}

/* The fields of object v (the position itself is the caller's).
   structured-merge-diff's ToFieldSet (dots false) makes a map key, a
   member its type does not declare, a member of the set itself, beside
   whatever it holds: applying `spec: {replicas: 3}` to a schema that
   preserves unknown fields owns spec and spec.replicas, and keeps spec
   when another manager takes replicas. Built-in types declare their
   fields in Go structs; their maps (labels, data) hold leaves, members
   already, and so does ObjectMeta in a custom resource. */
static void fs_add_fields(struct fset *s, const json_t *v, struct walk *w,
			  const struct srv_schema_node *sn, bool dots)
{
	bool cr = !dots && w->map_keys && !w->in_meta;
	const char *k;
	json_t *c;
	json_object_foreach((json_t *)v, k, c)
	{
		if (skip_field(w, k))
			continue;
		bool declared = !cr || cr_declared(w, sn, k);
		bool meta = cr && declared && !strcmp(k, "metadata");
		struct mark_pos m = enter_field(w, k);
		if (!declared)
			mark(s, w);
		w->in_meta |= meta;
		fs_add(s, c, w, srv_schema_prop(sn, k), dots);
		w->in_meta &= !meta;
		leave(w, m);
	}
}

/* The set of value v at the position: its leaves, keyed items and set
   values; with dots (an update's additions) objects own themselves too,
   and so do sets and lists of atomic items. */
static void fs_add(struct fset *s, const json_t *v, struct walk *w,
		   const struct srv_schema_node *sn, bool dots)
{
	if (json_is_object(v)) {
		if (json_object_size(v) == 0 || atomic_object(w, sn)) {
			mark(s, w);
			return;
		}
		if (dots && owns_itself(w))
			mark(s, w);
		fs_add_fields(s, v, w, sn, dots);
		return;
	}
	if (json_is_array(v) && !json_array_size(v) && !dots) {
		/* structured-merge-diff's ToFieldSet: an empty list owns
		   nothing unless atomic (Compare, behind an update's sets,
		   makes it a leaf instead) */
		struct lkind lk;
		list_kind(w, sn, &lk);
		if (lk.kind != SRV_SLIST_ATOMIC)
			return;
	}
	if (json_is_array(v) && json_array_size(v)) {
		struct lkind lk;
		list_kind(w, sn, &lk);
		struct lidx ix;
		if (lk.kind != SRV_SLIST_ATOMIC &&
		    lidx_build(v, &lk, w, &ix, true)) {
			if (dots) /* a new list owns itself (SMD's Compare) */
				mark(s, w);
			for (size_t i = 0; i < ix.n; i++) {
				if (!lidx_first(&ix, i))
					continue;
				struct mark_pos m;
				enter_item(w, ix.pe[i], &m);
				mark(s, w);
				/* a repeated key is a leaf */
				if (lk.kind == SRV_SLIST_MAP &&
				    !lk.atomic_items && ix.cnt[i] == 1)
					fs_add_fields(s, json_array_get(v, i), w,
						      srv_schema_items(sn), dots);
				leave_item(w, m);
			}
			lidx_free(&ix);
			return;
		}
	}
	mark(s, w);
}

/* What an update changed from o to n at the position: chg gains what it
   added or changed, rem what it removed. */
static void fs_cmp(struct fset *chg, struct fset *rem, const json_t *o,
		   const json_t *n, struct walk *w,
		   const struct srv_schema_node *sn);

static void fs_cmp_fields(struct fset *chg, struct fset *rem, const json_t *o,
			  const json_t *n, struct walk *w,
			  const struct srv_schema_node *sn)
{
	const char *k;
	json_t *nv, *ov;
	json_object_foreach((json_t *)n, k, nv)
	{
		if (skip_field(w, k))
			continue;
		struct mark_pos m = enter_field(w, k);
		const struct srv_schema_node *sub = srv_schema_prop(sn, k);
		ov = json_object_get(o, k);
		if (!ov)
			fs_add(chg, nv, w, sub, true);
		else if (ov != nv)
			fs_cmp(chg, rem, ov, nv, w, sub);
		leave(w, m);
	}
	json_object_foreach((json_t *)o, k, ov)
	{
		if (json_object_get(n, k) || skip_field(w, k))
			continue;
		struct mark_pos m = enter_field(w, k);
		mark(rem, w);
		fs_add(rem, ov, w, srv_schema_prop(sn, k), true);
		leave(w, m);
	}
}

/* Whether the copies of a repeated key hold the same values in the same
   order in o and n (positions from runs ro of oi and rn of ni). */
static bool runs_equal(const json_t *o, const struct lidx *oi, long ro,
		       const json_t *n, const struct lidx *ni, long rn)
{
	size_t c = oi->cnt[oi->ord[ro]];
	if (c != ni->cnt[ni->ord[rn]])
		return false;
	for (size_t x = 0; x < c; x++)
		if (!srv_json_value_eq(json_array_get(o, oi->ord[ro + x]),
				       json_array_get(n, ni->ord[rn + x])))
			return false;
	return true;
}

/* Item it at the position added (chg) or removed (rem), with its fields
   when granular: compare.go's compareListItem against nothing. */
static void cmp_item_whole(struct fset *s, const json_t *it, struct walk *w,
			   bool granular, const struct srv_schema_node *isn)
{
	mark(s, w);
	if (granular)
		fs_add_fields(s, it, w, isn, true);
}

/* compare.go's visitListItems: items by key, one to one; a key repeated
   on both sides is a leaf, changed when its copies differ; one that
   becomes repeated is added as a leaf and its single item removed, and
   the other way round. */
static bool cmp_lists(struct fset *chg, struct fset *rem, const json_t *o,
		      const json_t *n, struct walk *w,
		      const struct srv_schema_node *sn)
{
	struct lkind lk;
	list_kind(w, sn, &lk);
	if (lk.kind == SRV_SLIST_ATOMIC)
		return false;
	struct lidx oi, ni;
	if (!lidx_build(o, &lk, w, &oi, true))
		return false;
	if (!lidx_build(n, &lk, w, &ni, true)) {
		lidx_free(&oi);
		return false;
	}
	const struct srv_schema_node *isn = srv_schema_items(sn);
	bool granular = lk.kind == SRV_SLIST_MAP && !lk.atomic_items;
	for (size_t i = 0; i < ni.n; i++) {
		if (!lidx_first(&ni, i))
			continue;
		const json_t *nv = json_array_get(n, i);
		long ro = lidx_run(&oi, ni.pe[i]);
		size_t oc = ro < 0 ? 0 : oi.cnt[oi.ord[ro]], nc = ni.cnt[i];
		const json_t *ov =
		    ro < 0 ? NULL : json_array_get(o, oi.ord[ro]);
		struct mark_pos m;
		enter_item(w, ni.pe[i], &m);
		if (oc >= 2 && nc >= 2) {
			if (!runs_equal(o, &oi, ro, n, &ni,
					lidx_run(&ni, ni.pe[i])))
				mark(chg, w);
		} else if (oc >= 2) {
			cmp_item_whole(chg, nv, w, granular, isn);
			mark(rem, w);
		} else if (nc >= 2) {
			if (ov)
				cmp_item_whole(rem, ov, w, granular, isn);
			mark(chg, w);
		} else if (!ov) {
			cmp_item_whole(chg, nv, w, granular, isn);
		} else if (!granular) {
			if (!srv_json_value_eq(ov, nv))
				mark(chg, w);
		} else {
			fs_cmp_fields(chg, rem, ov, nv, w, isn);
		}
		leave_item(w, m);
	}
	for (size_t j = 0; j < oi.n; j++) {
		if (!lidx_first(&oi, j) || lidx_find(&ni, oi.pe[j]) >= 0)
			continue;
		struct mark_pos m;
		enter_item(w, oi.pe[j], &m);
		if (oi.cnt[j] >= 2)
			mark(rem, w); /* a repeated key: a leaf */
		else
			cmp_item_whole(rem, json_array_get(o, j), w, granular,
				       isn);
		leave_item(w, m);
	}
	lidx_free(&oi);
	lidx_free(&ni);
	return true;
}

/* null, {} or []: what structured-merge-diff compares as a leaf when
   both sides are (emptyPromoteToLeaf) */
static bool empty_or_null(const json_t *v)
{
	return json_is_null(v) || (json_is_object(v) && !json_object_size(v)) ||
	       (json_is_array(v) && !json_array_size(v));
}

/*
 * structured-merge-diff's Compare (typed/compare.go): a granular map or
 * list present on both sides, null or empty on one of them at most, is
 * compared by its members and does not change itself (a null going to a
 * map with members, or back, changes only the members); both null or
 * empty, it is a leaf.
 */
static void fs_cmp(struct fset *chg, struct fset *rem, const json_t *o,
		   const json_t *n, struct walk *w,
		   const struct srv_schema_node *sn)
{
	bool both_empty = empty_or_null(o) && empty_or_null(n);
	if ((json_is_object(o) || json_is_object(n)) &&
	    (json_is_object(o) || json_is_null(o)) &&
	    (json_is_object(n) || json_is_null(n)) && !both_empty &&
	    !atomic_object(w, sn)) {
		/* emptied, it is not changed itself: its members are
		   removed, so its owners keep it and the updater gets
		   nothing (doMap, visitMapItems) */
		fs_cmp_fields(chg, rem, o, n, w, sn);
		return;
	}
	if ((json_is_array(o) || json_is_array(n)) &&
	    (json_is_array(o) || json_is_null(o)) &&
	    (json_is_array(n) || json_is_null(n)) && !both_empty) {
		json_t *none = json_array();
		bool done =
		    none && cmp_lists(chg, rem, json_is_array(o) ? o : none,
				      json_is_array(n) ? n : none, w, sn);
		json_decref(none);
		if (done)
			return;
	}
	if (srv_json_value_eq(o, n))
		return;
	if (json_is_object(o) || json_is_array(o))
		fs_add(rem, o, w, sn, true);
	mark(chg, w);
}

/* ------------------------------------------------------------ apply */

static json_t *merge_val(json_t *l, const json_t *c, struct walk *w,
			 const struct srv_schema_node *sn);

/* One item of an associative list merged: live lv (borrowed; NULL when
   config brings it) with config's cv. */
static json_t *merge_item(json_t *lv, const json_t *cv, const struct lkind *lk,
			  struct walk *w, const struct srv_schema_node *isn)
{
	if (!lv || lk->kind == SRV_SLIST_SET || lk->atomic_items)
		return json_deep_copy(cv);
	json_incref(lv);
	return merge_val(lv, cv, w, isn);
}

/* The items of live list l and config list c merged, in the order
   structured-merge-diff gives them (typed/merge.go, visitListItems): the
   items both hold follow config's order, a new item from config lands at
   its place in config, and a live item config does not name keeps its
   place among the live items around it. Two cursors walk the lists; a
   live item config also holds is taken only when it is the next such item
   in config's order, otherwise config's walk brings it later. Returns a
   new list, or NULL when out of memory. */
static json_t *merge_items(json_t *l, const json_t *c, const struct lidx *li,
			   const struct lidx *ci, const struct lkind *lk,
			   struct walk *w, const struct srv_schema_node *isn)
{
	size_t ln = li->n, cn = ci->n;
	json_t *out = json_array();
	long *in_c = malloc((ln ? ln : 1) * sizeof *in_c);
	long *in_l = malloc((cn ? cn : 1) * sizeof *in_l);
	bool *taken = calloc(ln ? ln : 1, sizeof *taken);
	if (!out || !in_c || !in_l || !taken)
		goto oom;
	for (size_t i = 0; i < ln; i++)
		in_c[i] = lidx_find(ci, li->pe[i]);
	for (size_t k = 0; k < cn; k++)
		in_l[k] = lidx_find(li, ci->pe[k]);
	size_t shared = 0; /* config's next item that live holds too */
	size_t i = 0, k = 0;
	while (i < ln || k < cn) {
		while (shared < cn && (shared < k || in_l[shared] < 0))
			shared++;
		json_t *item = NULL;
		if (i < ln && in_c[i] >= 0 &&
		    (taken[i] || (k < cn && (size_t)in_c[i] != k &&
				  (size_t)in_c[i] != shared))) {
			i++; /* config's walk brings it (or brought it) */
			continue;
		}
		if (i < ln && in_c[i] < 0) {
			item = json_incref(json_array_get(l, i++));
		} else if (k < cn) {
			long j = in_l[k];
			if (j >= 0)
				taken[j] = true;
			/* config's item replaces every copy of a repeated key
			   (merge.go: such an item is observed as nil) */
			item = merge_item(j >= 0 && li->cnt[j] == 1
					      ? json_array_get(l, (size_t)j)
					      : NULL,
					  json_array_get(c, k++), lk, w, isn);
		} else {
			i++; /* not reached: every shared item is taken */
			continue;
		}
		if (!item || json_array_append_new(out, item))
			goto oom;
	}
	free(in_c);
	free(in_l);
	free(taken);
	return out;
oom:
	json_decref(out);
	free(in_c);
	free(in_l);
	free(taken);
	return NULL;
}

/*
 * Whether an applied null at w's path merges into the live value lv
 * (which stays; what the manager owned there before goes with the prune)
 * rather than replacing it: structured-merge-diff treats a null as a leaf
 * that the configuration's side wins, unless it meets a granular map or
 * list with members (typed/merge.go, emptyPromoteToLeaf), so re-applying a
 * null changes nothing.
 */
static bool null_merges(const struct walk *w, const json_t *lv,
			const struct srv_schema_node *sn)
{
	if (json_is_object(lv))
		return json_object_size(lv) && !atomic_object(w, sn);
	if (json_is_array(lv) && json_array_size(lv)) {
		struct lkind lk;
		list_kind(w, sn, &lk);
		return lk.kind != SRV_SLIST_ATOMIC;
	}
	return false;
}

/* config merged into l (taken; mutated); returns the result (new ref). */
static json_t *merge_val(json_t *l, const json_t *c, struct walk *w,
			 const struct srv_schema_node *sn)
{
	if (json_is_object(l) && json_is_object(c) && !atomic_object(w, sn)) {
		const char *k;
		json_t *cv;
		json_object_foreach((json_t *)c, k, cv)
		{
			if (w->depth == 1 && path_is(w, "metadata") &&
			    !strcmp(k, "managedFields"))
				continue;
			if (json_is_null(cv)) {
				size_t d = push(w, k);
				json_t *lv = json_object_get(l, k);
				if (!null_merges(w, lv, srv_schema_prop(sn, k)))
					json_object_set_new(l, k, json_null());
				pop(w, d);
				continue;
			}
			size_t d = push(w, k);
			json_t *lv = json_object_get(l, k);
			json_incref(lv);
			json_t *nv = merge_val(lv, cv, w, srv_schema_prop(sn, k));
			pop(w, d);
			if (nv)
				json_object_set_new(l, k, nv);
		}
		return l;
	}
	if (json_is_array(l) && json_is_array(c)) {
		struct lkind lk;
		list_kind(w, sn, &lk);
		struct lidx li, ci;
		if (lk.kind != SRV_SLIST_ATOMIC &&
		    lidx_build(l, &lk, w, &li, true)) {
			json_t *out = NULL;
			if (lidx_build(c, &lk, w, &ci, false)) {
				out = merge_items(l, c, &li, &ci, &lk, w,
						  srv_schema_items(sn));
				lidx_free(&ci);
			}
			lidx_free(&li);
			if (out) {
				json_decref(l);
				return out;
			}
		}
	}
	json_decref(l);
	return json_deep_copy(c);
}

/* A value as structured-merge-diff's value.ToString writes a key or set
   member: strings quoted as Go's %q, numbers and booleans as they are. */
static void smd_value(const json_t *v, char *out, size_t n)
{
	if (json_is_string(v)) {
		size_t o = 0;
		const char *s = json_string_value(v);
		if (o < n)
			out[o++] = '"';
		for (; *s && o + 3 < n; s++) {
			if (*s == '"' || *s == '\\')
				out[o++] = '\\';
			out[o++] = *s;
		}
		if (o < n)
			out[o++] = '"';
		out[o < n ? o : n - 1] = '\0';
		return;
	}
	char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	snprintf(out, n, "%s", t ? t : "");
	free(t);
}

/* structured-merge-diff's path element of item it of a set or map list:
   [=v] or [k1=v1,k2=v2] with the keys by name. */
static void smd_pe(const json_t *it, const struct lkind *lk, char *out,
		   size_t n)
{
	char v[256];
	if (lk->kind == SRV_SLIST_SET) {
		smd_value(it, v, sizeof v);
		snprintf(out, n, "[=%s]", v);
		return;
	}
	const char *names[8];
	size_t k = lk->n_keys < 8 ? lk->n_keys : 8;
	for (size_t i = 0; i < k; i++)
		names[i] = lk->keys[i];
	for (size_t i = 1; i < k; i++)
		for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			const char *t = names[j];
			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	size_t o = (size_t)snprintf(out, n, "[");
	for (size_t i = 0; i < k && o < n; i++) {
		smd_value(json_object_get(it, names[i]), v, sizeof v);
		o += (size_t)snprintf(out + o, n - o, "%s%s=%s", i ? "," : "",
				      names[i], v);
	}
	if (o < n)
		snprintf(out + o, n - o, "]");
}

/* ---- structured-merge-diff's typed conversion of a configuration ----

   kube's apply turns the configuration into a typed value before anything
   else (structuredMergeManager.Apply's ObjectToTyped, which validates it):
   a member the type does not declare, a value of the wrong type, a keyed
   list item without its keys and a set or map list holding one item twice
   fail the apply with a plain error, the 500 `failed to create typed patch
   object (ns/name; gvk): <errors>`. The type is a built-in's field table
   or a custom resource's schema as kube publishes it (apiVersion, kind and
   ObjectMeta at the root and in embedded resources). The errors are
   structured-merge-diff v4.6's words (typed/validate.go, helpers.go);
   where it walks a Go map in random order, members go by name here. */

enum sk { SK_ANY, SK_STRING, SK_NUMERIC, SK_BOOL, SK_UNTYPED, SK_MAP, SK_LIST };

struct sty {
	enum sk k;
	const struct pb_msg *m;		  /* SK_MAP: a built-in struct */
	const struct pb_field *f;	  /* the built-in field of the value */
	const struct srv_schema_node *sn; /* a custom resource's node */
	bool open;     /* SK_MAP: undeclared members are anything */
	bool typemeta; /* SK_MAP: apiVersion, kind and metadata declared */
	bool pu;       /* at or under x-kubernetes-preserve-unknown-fields */
};

/* The type of field f's value, or of one of its items or map values. */
static struct sty sty_pb(const struct pb_field *f, bool item)
{
	struct sty t = {.k = SK_ANY, .f = f};
	if (!item && (f->flags & PB_REP)) {
		t.k = SK_LIST;
		return t;
	}
	if (!item && (f->flags & PB_MAPV)) {
		t.k = SK_MAP;
		return t;
	}
	switch (f->type) {
	case PB_STRING:
	case PB_BYTES:
	case PB_TIME:
	case PB_MICROTIME:
		t.k = SK_STRING;
		break;
	case PB_BOOL:
		t.k = SK_BOOL;
		break;
	case PB_INT32:
	case PB_INT64:
	case PB_DOUBLE:
		t.k = SK_NUMERIC;
		break;
	case PB_INTORSTR:
		t.k = SK_UNTYPED;
		break;
	case PB_MSG:
		t.k = SK_MAP;
		t.m = f->sub;
		break;
	case PB_MAP_STRING:
	case PB_MAP_BYTES:
		t.k = SK_MAP;
		break;
	case PB_FIELDSV1: /* an object of no properties: anything */
	case PB_JSON:
	case PB_OR_BOOL: /* the schema's unions: anything */
	case PB_OR_ARRAY:
	case PB_OR_STRARRAY:
		break;
	}
	return t;
}

static struct sty sty_node(const struct srv_schema_node *sn)
{
	struct sty t = {.sn = sn};
	bool open, emb;
	switch (srv_schema_smd(sn, &open, &emb)) {
	case SRV_SMD_STRING:
		t.k = SK_STRING;
		break;
	case SRV_SMD_NUMERIC:
		t.k = SK_NUMERIC;
		break;
	case SRV_SMD_BOOL:
		t.k = SK_BOOL;
		break;
	case SRV_SMD_UNTYPED:
		t.k = SK_UNTYPED;
		break;
	case SRV_SMD_MAP:
		t.k = SK_MAP;
		break;
	case SRV_SMD_LIST:
		t.k = SK_LIST;
		break;
	case SRV_SMD_ANY:
		t.k = SK_ANY;
		break;
	}
	t.open = open;
	t.typemeta = emb;
	return t;
}

/* The type of a custom resource's node c inside a value of type parent
   (NULL at the root). kube's converter (schemaconv's ToSchemaFromOpenAPI)
   carries x-kubernetes-preserve-unknown-fields down to every schema below
   it: an object there takes members it does not declare as anything,
   whatever pruning later keeps. */
static struct sty sty_cr(const struct sty *parent,
			 const struct srv_schema_node *c)
{
	struct sty t = sty_node(c);
	t.pu = (parent && parent->pu) || srv_schema_preserves(c);
	t.open |= t.pu;
	return t;
}

/* The type of member k of a map of type t; false when t does not declare
   it and takes no other member. */
static bool sty_member(const struct sty *t, const char *k, struct sty *out)
{
	static const struct sty string = {.k = SK_STRING};
	if (t->typemeta && (!strcmp(k, "apiVersion") || !strcmp(k, "kind"))) {
		*out = string;
		return true;
	}
	if (t->m) { /* a built-in struct */
		const struct pb_field *f = srv_pb_field(t->m, k);
		if (!f)
			return false;
		*out = sty_pb(f, false);
		return true;
	}
	if (t->f) { /* a built-in map: labels, data, a PB_MAPV map */
		*out = t->f->type == PB_MAP_STRING || t->f->type == PB_MAP_BYTES
			   ? string
			   : sty_pb(t->f, true);
		return true;
	}
	if (t->typemeta && !strcmp(k, "metadata")) {
		*out = (struct sty){.k = SK_MAP, .m = srv_pb_object_meta()};
		return true;
	}
	const struct srv_schema_node *c = srv_schema_prop(t->sn, k);
	if (c) { /* declared, or the additionalProperties schema */
		*out = sty_cr(t, c);
		return true;
	}
	if (t->open) {
		*out = (struct sty){.k = SK_ANY};
		return true;
	}
	return false;
}

/* A bounded text: what does not fit is cut. */
struct tbuf {
	char *s;
	size_t len, cap; /* cap > 0 */
};

static void tb_add(struct tbuf *b, const char *s, size_t n)
{
	if (b->len + 1 >= b->cap)
		return;
	if (n > b->cap - 1 - b->len)
		n = b->cap - 1 - b->len;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void tb_puts(struct tbuf *b, const char *s)
{
	tb_add(b, s, strlen(s));
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The member names of object v by name (borrowed; free the array), *n of
   them; NULL when out of memory. */
static const char **sorted_keys(const json_t *v, size_t *n)
{
	*n = json_object_size(v);
	const char **keys = malloc((*n ? *n : 1) * sizeof *keys);
	if (!keys)
		return NULL;
	size_t i = 0;
	const char *k;
	json_t *c;
	json_object_foreach((json_t *)v, k, c) keys[i++] = k;
	qsort(keys, *n, sizeof *keys, cmp_key);
	return keys;
}

/* A decoded value as Go prints it inside an interface{} (encoding/json
   decodes to float64, string, bool, nil, map[string]interface{} and
   []interface{}): %#v when sharp, else %v. */
static void go_iface(struct tbuf *b, const json_t *v, bool sharp)
{
	if (b->len + 1 >= b->cap)
		return;
	if (!v || json_is_null(v)) {
		tb_puts(b, sharp ? "interface {}(nil)" : "<nil>");
	} else if (json_is_string(v)) {
		const char *s = json_string_value(v);
		if (!sharp) {
			tb_puts(b, s);
			return;
		}
		size_t n = strlen(s), room = 4 * n + 3;
		char *q = malloc(room);
		if (q) {
			srv_go_quote(s, q, room);
			tb_puts(b, q);
		}
		free(q);
	} else if (json_is_number(v)) {
		char t[SRV_GO_FLOAT_MAX];
		srv_go_float(json_number_value(v), t);
		tb_puts(b, t);
	} else if (json_is_boolean(v)) {
		tb_puts(b, json_is_true(v) ? "true" : "false");
	} else if (json_is_object(v)) {
		size_t n;
		const char **keys = sorted_keys(v, &n);
		if (!keys)
			return;
		tb_puts(b, sharp ? "map[string]interface {}{" : "map[");
		for (size_t i = 0; i < n; i++) {
			if (i)
				tb_puts(b, sharp ? ", " : " ");
			if (sharp) {
				json_t *ks = json_string(keys[i]);
				go_iface(b, ks, true);
				json_decref(ks);
				tb_puts(b, ":");
			} else {
				tb_puts(b, keys[i]);
				tb_puts(b, ":");
			}
			go_iface(b, json_object_get(v, keys[i]), sharp);
		}
		tb_puts(b, sharp ? "}" : "]");
		free(keys);
	} else if (json_is_array(v)) {
		tb_puts(b, sharp ? "[]interface {}{" : "[");
		for (size_t i = 0; i < json_array_size(v); i++) {
			if (i)
				tb_puts(b, sharp ? ", " : " ");
			go_iface(b, json_array_get(v, i), sharp);
		}
		tb_puts(b, sharp ? "}" : "]");
	}
}

/* structured-merge-diff's value of v as Go prints it: %#v is
   "&value.valueUnstructured{Value:...}", %v "&{...}". */
static void smd_go_value(char *out, size_t n, const json_t *v, bool sharp)
{
	struct tbuf b = {out, 0, n};
	out[0] = '\0';
	tb_puts(&b, sharp ? "&value.valueUnstructured{Value:" : "&{");
	go_iface(&b, v, sharp);
	tb_puts(&b, "}");
}

/* The errors of one conversion: ValidationErrors' lines. */
struct smd_errs {
	char text[6000];
	size_t len;
	unsigned n;
};

static void smd_err(struct smd_errs *e, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void smd_err(struct smd_errs *e, const char *path, const char *fmt, ...)
{
	char msg[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	struct tbuf b = {e->text, e->len, sizeof e->text};
	if (e->n)
		tb_puts(&b, "\n");
	if (path[0]) { /* ValidationError.Error: "<path>: <message>" */
		tb_puts(&b, path);
		tb_puts(&b, ": ");
	}
	tb_puts(&b, msg);
	e->len = b.len;
	e->n++;
}

/* Why structured-merge-diff cannot key item it of a set or map list
   (listItemToPathElement), or NULL; k gets a map item's keys with the
   defaults filled in. */
static const char *key_error(const json_t *it, const struct lkind *lk,
			     const struct walk *w, json_t *k, char *buf,
			     size_t n)
{
	if (lk->kind == SRV_SLIST_SET) {
		if (json_is_object(it))
			return "associative list without keys has an element "
			       "that's a map type";
		if (json_is_array(it))
			return "not supported: associative list with lists as "
			       "elements";
		if (json_is_null(it))
			return "associative list without keys has an element "
			       "that's an explicit null";
		return NULL;
	}
	if (json_is_null(it))
		return "associative list with keys may not have a null element";
	if (!json_is_object(it))
		return "associative list with keys may not have non-map "
		       "elements";
	for (size_t x = 0; x < lk->n_keys; x++) {
		const json_t *kv = json_object_get(it, lk->keys[x]);
		if (!kv && lk->items)
			kv = srv_schema_default_of(
			    srv_schema_prop(lk->items, lk->keys[x]));
		if (!kv && !strcmp(lk->keys[x], "protocol") &&
		    path_is(w, "spec.ports")) {
			json_object_set_new(k, "protocol", json_string("TCP"));
			continue;
		}
		if (!kv) {
			char q[300];
			srv_go_quote(lk->keys[x], q, sizeof q);
			snprintf(
			    buf, n,
			    "associative list with keys has an element that "
			    "omits key field %s (and doesn't have default "
			    "value)",
			    q);
			return buf;
		}
		json_object_set(k, lk->keys[x], (json_t *)kv);
	}
	return NULL;
}

static void smd_check(const json_t *v, struct walk *w, const struct sty *t,
		      char *smd, size_t at, size_t cap, struct smd_errs *e);

static void smd_check_list(const json_t *v, struct walk *w, const struct sty *t,
			   char *smd, size_t at, size_t cap, struct smd_errs *e)
{
	struct lkind lk;
	list_kind(w, t->sn, &lk);
	struct sty it = t->sn  ? sty_cr(t, srv_schema_items(t->sn))
			: t->f ? sty_pb(t->f, true)
			       : (struct sty){.k = SK_ANY};
	size_t cnt = json_array_size(v);
	/* each item's key, for the duplicate search: a set member's value,
	   a map item's keys; NULL for what has none */
	char **key = NULL;
	bool *dup = NULL;
	size_t *ord = NULL;
	if (lk.kind != SRV_SLIST_ATOMIC && cnt > 1) {
		key = calloc(cnt, sizeof *key);
		dup = calloc(cnt, sizeof *dup);
		ord = malloc(cnt * sizeof *ord);
		if (!key || !dup || !ord) {
			free(key);
			free(dup);
			free(ord);
			return;
		}
		size_t m = 0;
		for (size_t i = 0; i < cnt; i++) {
			const json_t *x = json_array_get(v, i);
			key[i] = lk.kind == SRV_SLIST_SET
				     ? (json_is_object(x) || json_is_array(x) ||
						json_is_null(x)
					    ? NULL
					    : pe_json("v:", x))
				     : item_pe(x, &lk, w);
			if (key[i])
				ord[m++] = i;
		}
		qsort_r(ord, m, sizeof *ord, cmp_ord, key);
		/* equal keys sort by position (qsort_r is not stable: order
		   each run by position before marking all but its first) */
		for (size_t i = 0; i < m;) {
			size_t j = i + 1;
			while (j < m && !strcmp(key[ord[i]], key[ord[j]]))
				j++;
			size_t first = ord[i];
			for (size_t x = i + 1; x < j; x++)
				if (ord[x] < first)
					first = ord[x];
			for (size_t x = i; x < j; x++)
				dup[ord[x]] = ord[x] != first;
			i = j;
		}
	}
	for (size_t i = 0; i < cnt; i++) {
		const json_t *x = json_array_get(v, i);
		char pe[512], why[400];
		struct mark_pos m = {w->len, w->pb.len};
		if (lk.kind == SRV_SLIST_ATOMIC) {
			snprintf(pe, sizeof pe, "[%zu]", i);
		} else {
			json_t *k = json_object();
			const char *err =
			    k ? key_error(x, &lk, w, k, why, sizeof why) : NULL;
			if (err) {
				json_decref(k);
				smd_err(e, smd, "element %zu: %s", i, err);
				break; /* it cannot go deeper, nor past it */
			}
			smd_pe(lk.kind == SRV_SLIST_SET ? x : k, &lk, pe,
			       sizeof pe);
			json_decref(k);
			if (dup && dup[i])
				smd_err(e, smd, "duplicate entries for key %s",
					pe);
			/* the set path, for list_kind below it */
			enter_item(w, key && key[i] ? key[i] : "", &m);
		}
		int l = snprintf(smd + at, cap - at, "%s", pe);
		if (l > 0 && at + (size_t)l < cap)
			smd_check(x, w, &it, smd, at + (size_t)l, cap, e);
		smd[at] = '\0';
		if (lk.kind != SRV_SLIST_ATOMIC)
			leave_item(w, m);
	}
	for (size_t i = 0; key && i < cnt; i++)
		free(key[i]);
	free(key);
	free(dup);
	free(ord);
}

static void smd_check(const json_t *v, struct walk *w, const struct sty *t,
		      char *smd, size_t at, size_t cap, struct smd_errs *e)
{
	if (json_is_null(v) || t->k == SK_ANY)
		return; /* null is a valid value of every type */
	char got[700];
	switch (t->k) {
	case SK_STRING:
		if (!json_is_string(v)) {
			smd_go_value(got, sizeof got, v, true);
			smd_err(e, smd, "expected string, got %s", got);
		}
		return;
	case SK_NUMERIC:
		if (!json_is_number(v))
			smd_err(e, smd,
				"expected numeric (int or float), got %s",
				srv_go_type_of(v, true));
		return;
	case SK_BOOL:
		if (!json_is_boolean(v)) {
			smd_go_value(got, sizeof got, v, false);
			smd_err(e, smd, "expected boolean, got %s", got);
		}
		return;
	case SK_UNTYPED:
		if (json_is_object(v) || json_is_array(v)) {
			smd_go_value(got, sizeof got, v, false);
			smd_err(e, smd, "expected any scalar, got %s", got);
		}
		return;
	case SK_LIST:
		if (!json_is_array(v)) {
			smd_go_value(got, sizeof got, v, false);
			smd_err(e, smd, "expected list, got %s", got);
			return;
		}
		smd_check_list(v, w, t, smd, at, cap, e);
		return;
	case SK_ANY:
	case SK_MAP:
		break;
	}
	if (!json_is_object(v)) {
		smd_go_value(got, sizeof got, v, false);
		smd_err(e, smd, "expected map, got %s", got);
		return;
	}
	size_t n;
	const char **keys = sorted_keys(v, &n);
	if (!keys)
		return;
	for (size_t i = 0; i < n; i++) {
		struct sty ct;
		int l = snprintf(smd + at, cap - at, ".%s", keys[i]);
		if (l <= 0 || at + (size_t)l >= cap)
			break;
		if (!sty_member(t, keys[i], &ct)) {
			/* the walk of this map stops at it */
			smd_err(e, smd, "field not declared in schema");
			break;
		}
		struct mark_pos m = enter_field(w, keys[i]);
		smd_check(json_object_get(v, keys[i]), w, &ct, smd,
			  at + (size_t)l, cap, e);
		leave(w, m);
		smd[at] = '\0';
	}
	smd[at] = '\0';
	free(keys);
}

/* The objects of a built-in type that are Go maps, not structs: their
   keys are no struct fields to structured-merge-diff. Below a CRD's
   openAPIV3Schema (maps of schemas, and JSON values) no key counts as
   one either, as before: nothing there is defaulted, so only what the
   applier owned is removed. */
static bool builtin_map(const struct walk *w)
{
	static const char *const maps[] = {
	    "metadata.labels", "metadata.annotations", "data",
	    "binaryData",      "stringData",	       "spec.selector"};
	static const char schema[] = "spec.versions.schema.openAPIV3Schema";
	if (w->too_deep)
		return true;
	for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
		if (path_is(w, maps[i]))
			return true;
	return !strncmp(w->path, schema, sizeof schema - 1) &&
	       (!w->path[sizeof schema - 1] ||
		w->path[sizeof schema - 1] == '.');
}

/* Is key, a field of the object at the walk's position, a struct field to
   structured-merge-diff: declared by a custom resource's schema, or a
   field of a built-in's Go struct? */
static bool struct_field(const struct walk *w, const struct srv_schema_node *sn,
			 const char *key)
{
	if (w->pb.len == 0 &&
	    (!strcmp(key, "metadata") || !strcmp(key, "apiVersion") ||
	     !strcmp(key, "kind")))
		return false;
	if (w->res && !w->res->custom)
		return !builtin_map(w);
	return srv_schema_declares(sn, key);
}

/* Whether k is a field of ObjectMeta, the type kube's builder gives the
   metadata of a custom resource and of an embedded resource. */
static bool objectmeta_field(const char *k)
{
	static const char *const f[] = {"name",
					"generateName",
					"namespace",
					"selfLink",
					"uid",
					"resourceVersion",
					"generation",
					"creationTimestamp",
					"deletionTimestamp",
					"deletionGracePeriodSeconds",
					"labels",
					"annotations",
					"ownerReferences",
					"finalizers",
					"managedFields"};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		if (!strcmp(k, f[i]))
			return true;
	return false;
}

/* Whether key k of the object at the walk's position is the ObjectMeta of
   a custom resource: its own metadata or an embedded resource's. */
static bool custom_meta(const struct walk *w, const struct srv_schema_node *sn,
			const char *k)
{
	if (!w->res || !w->res->custom || strcmp(k, "metadata"))
		return false;
	bool open, emb;
	srv_schema_smd(sn, &open, &emb);
	return w->depth == 0 || emb;
}

/* Remove from v (at the walk's position) each member of rm that keep has
   nothing at or below: one walk over the object, following last (the
   applier's previous set, which holds rm). A struct field goes whole once
   the applier had something at or below it and nobody keeps anything
   there, as SMD's prune with EnsureNamedFieldsAreMembers gives: `tags: []`,
   `spec: {}` or a CRD's `conversion` holding only its defaulted webhook
   port are not left behind. An empty list was no member of the merged
   object's set, so SMD leaves it, and so does this. An object or list that
   the removal empties becomes null, as SMD's remove walk leaves it: a
   custom resource keeps it only where its schema says nullable (the
   defaulting pass drops the rest), and a built-in drops it, as its Go
   type decodes null to nothing. objmeta: v is a custom resource's
   ObjectMeta, whose fields (labels, annotations) are struct fields as in
   a built-in's. */
static void remove_paths(json_t *v, struct walk *w,
			 const struct srv_schema_node *sn,
			 const struct fset *rm, const struct fset *last,
			 const struct fset *keep, bool objmeta)
{
	if (json_is_object(v) && !atomic_object(w, sn)) {
		const char *k;
		json_t *c;
		void *tmp;
		json_object_foreach_safe(v, tmp, k, c)
		{
			bool named = objmeta ? objectmeta_field(k)
					     : struct_field(w, sn, k);
			bool meta = !objmeta && custom_meta(w, sn, k);
			struct mark_pos m = enter_field(w, k);
			/* structured-merge-diff adds back what someone owns,
			   a named field's owned descendants owning it too
			   (EnsureNamedFieldsAreMembers); a map key goes whole
			   unless someone owns the key itself */
			bool kept = named ? fset_has_at_or_below(keep, w->pb.p,
								 w->pb.len)
					  : fset_has(keep, w->pb.p, w->pb.len);
			if (!kept &&
			    (fset_has(rm, w->pb.p, w->pb.len) ||
			     (named &&
			      fset_has_at_or_below(last, w->pb.p, w->pb.len) &&
			      !(json_is_array(c) && !json_array_size(c))))) {
				json_object_del(v, k);
			} else if (fset_has_at_or_below(rm, w->pb.p,
							w->pb.len) ||
				   (named && fset_has_at_or_below(last, w->pb.p,
								  w->pb.len))) {
				bool had =
				    json_object_size(c) || json_array_size(c);
				remove_paths(c, w, srv_schema_prop(sn, k), rm,
					     last, keep, meta);
				if (had && !json_object_size(c) &&
				    !json_array_size(c)) {
					if (w->res && w->res->custom)
						json_object_set_new(
						    v, k, json_null());
					else
						json_object_del(v, k);
				}
			}
			leave(w, m);
		}
		return;
	}
	if (!json_is_array(v) || !json_array_size(v))
		return;
	struct lkind lk;
	list_kind(w, sn, &lk);
	struct lidx ix;
	if (lk.kind == SRV_SLIST_ATOMIC || !lidx_build(v, &lk, w, &ix, true))
		return;
	/* from the end, so that a removal moves no item not yet seen */
	for (size_t i = ix.n; i-- > 0;) {
		struct mark_pos m;
		enter_item(w, ix.pe[i], &m);
		/* an item goes whole unless someone owns the item itself */
		if (fset_has(rm, w->pb.p, w->pb.len) &&
		    !fset_has(keep, w->pb.p, w->pb.len))
			json_array_remove(v, i);
		else if (lk.kind == SRV_SLIST_MAP &&
			 fset_has_at_or_below(last, w->pb.p, w->pb.len))
			remove_paths(json_array_get(v, i), w,
				     srv_schema_items(sn), rm, last, keep,
				     false);
		leave_item(w, m);
	}
	lidx_free(&ix);
}

/* ------------------------------------------------------------ entries */

struct ent {
	char *manager, *operation, *api_version, *subresource, *time;
	/* The FieldsV1 loaded (a reference; NULL for a new entry) and the
	   set, decoded from it only when a write touches it (ent_set).
	   An entry that stays clean is written back with its FieldsV1 as it
	   was: most writes leave most entries alone. */
	json_t *v1;
	struct fset *set;
	bool dirty; /* set is the truth: FieldsV1 is written from it */
	bool bump;  /* its time becomes now */
};

struct ents {
	struct ent *v;
	size_t n, cap;
};

static void ent_free(struct ent *e)
{
	free(e->manager);
	free(e->operation);
	free(e->api_version);
	free(e->subresource);
	free(e->time);
	fset_free(e->set);
	json_decref(e->v1);
}

static void ents_free(struct ents *es)
{
	for (size_t i = 0; i < es->n; i++)
		ent_free(&es->v[i]);
	free(es->v);
	memset(es, 0, sizeof *es);
}

/* The last entry loaded replaces an earlier one of the same identity
   (upstream's BuildManagerIdentifier: manager, operation, subresource and,
   for an update, API version), as decodeManagedFields keys its map. */
static void ents_dedup_last(struct ents *es)
{
	struct ent *l = &es->v[es->n - 1];
	bool apply = !strcmp(l->operation, "Apply");
	for (size_t j = 0; j + 1 < es->n; j++) {
		struct ent *e = &es->v[j];
		if (strcmp(e->manager, l->manager) ||
		    strcmp(e->operation, l->operation) ||
		    strcmp(e->subresource, l->subresource) ||
		    (!apply && strcmp(e->api_version, l->api_version)))
			continue;
		ent_free(e);
		memmove(e, e + 1, (es->n - j - 1) * sizeof *e);
		es->n--;
		return;
	}
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

static struct ent *ents_add(struct ents *es, const char *manager,
			    const char *operation, const char *api_version,
			    const char *subresource, const char *time,
			    json_t *v1)
{
	if (es->n == es->cap) {
		size_t cap = es->cap ? es->cap * 2 : 4;
		struct ent *v = realloc(es->v, cap * sizeof *v);
		if (!v)
			return NULL;
		es->v = v;
		es->cap = cap;
	}
	struct ent *e = &es->v[es->n];
	*e = (struct ent){.manager = dup_or_empty(manager),
			  .operation = dup_or_empty(operation),
			  .api_version = dup_or_empty(api_version),
			  .subresource = dup_or_empty(subresource),
			  .time = time ? strdup(time) : NULL,
			  .v1 = json_incref(v1),
			  .set = v1 ? NULL : fset_new(),
			  .dirty = !v1};
	if (!e->manager || !e->operation || !e->api_version ||
	    !e->subresource || (!v1 && !e->set) || (time && !e->time)) {
		es->n++;
		return NULL;
	}
	es->n++;
	return e;
}

/* Upstream's ValidateFieldManager of mgr on field, its causes into err:
   too long, and one per character (bytes decoded as Go's range does) that
   Go's unicode.IsPrint refuses. False when there is any. */
static bool manager_ok(const char *mgr, const char *field,
		       struct srv_error *err)
{
	bool ok = true;
	size_t n = strlen(mgr);
	if (n > SRV_MF_MANAGER_MAX) {
		srv_error_cause(err, "FieldValueTooLong", field,
				"Too long: may not be more than %d bytes",
				SRV_MF_MANAGER_MAX);
		ok = false;
	}
	char q[2048];
	q[0] = 0;
	for (size_t i = 0; i < n;) {
		uint32_t r;
		size_t w =
		    reg_utf8_decode((const unsigned char *)mgr + i, n - i, &r);
		if (!reg_go_isprint(r)) {
			if (!q[0])
				srv_go_quote(mgr, q, sizeof q);
			srv_error_cause(err, "FieldValueInvalid", field,
					"Invalid value: %s: invalid character "
					"U+%04X (at position %zu)",
					q, r, i);
			ok = false;
		}
		i += w;
	}
	return ok;
}

/* Entries of a managedFields array; with err, check them as upstream's
   ValidateManagedFields (causes on metadata.managedFields[i]). */
static lp_err ents_load(struct ents *es, const json_t *mf, struct srv_error *err)
{
	size_t i;
	json_t *e;
	lp_err rc = LP_OK;
	if (!json_is_array(mf))
		return LP_OK;
	json_array_foreach(mf, i, e)
	{
		if (!json_is_object(e))
			continue;
		const char *op = json_string_value(json_object_get(e, "operation"));
		const char *ft = json_string_value(json_object_get(e, "fieldsType"));
		const char *mgr = json_string_value(json_object_get(e, "manager"));
		const char *sub = json_string_value(json_object_get(e, "subresource"));
		char f[96];
		bool ok = true;
		if (!op || (strcmp(op, "Apply") && strcmp(op, "Update"))) {
			snprintf(f, sizeof f, "metadata.managedFields[%zu].operation", i);
			srv_error_cause(err, "FieldValueInvalid", f,
					"Invalid value: \"%.64s\": must be `Apply` or `Update`",
					op ? op : "");
			ok = false;
		}
		if (ft && *ft && strcmp(ft, "FieldsV1")) {
			snprintf(f, sizeof f, "metadata.managedFields[%zu].fieldsType", i);
			srv_error_cause(err, "FieldValueInvalid", f,
					"Invalid value: \"%.64s\": must be `FieldsV1`", ft);
			ok = false;
		}
		if (mgr) {
			snprintf(f, sizeof f, "metadata.managedFields[%zu].manager", i);
			ok &= manager_ok(mgr, f, err);
		}
		if (sub && strlen(sub) > 256) {
			snprintf(f, sizeof f, "metadata.managedFields[%zu].subresource", i);
			srv_error_cause(err, "FieldValueTooLong", f,
					"Too long: may not be more than 256 bytes");
			ok = false;
		}
		if (!ok) {
			/* a client's: 422; a stored object's (never written by
			   lapis): dropped, as kube resets what it cannot decode */
			if (err)
				rc = LP_E_INVALID;
			continue;
		}
		if (!ents_add(es, mgr, op, json_string_value(json_object_get(e, "apiVersion")),
			      sub, json_string_value(json_object_get(e, "time")),
			      json_is_object(json_object_get(e, "fieldsV1"))
				  ? json_object_get(e, "fieldsV1")
				  : NULL))
			return LP_ERR(LP_E_NOMEM);
		ents_dedup_last(es);
	}
	return rc;
}

/* Entry order: upstream's sort of managedFields (operation, time, manager,
   API version, subresource), or without time, manager first, the order of
   their identifiers (conflict messages). */
static int ent_order(const struct ent *p, const struct ent *q, bool stored)
{
	int d;
	if (stored) {
		if ((d = strcmp(p->operation, q->operation)))
			return d;
		if ((d = strcmp(p->time ? p->time : "", q->time ? q->time : "")))
			return d;
	}
	if ((d = strcmp(p->manager, q->manager)))
		return d;
	if (!stored && (d = strcmp(p->operation, q->operation)))
		return d;
	if ((d = strcmp(p->api_version, q->api_version)))
		return d;
	return strcmp(p->subresource, q->subresource);
}

static int cmp_ent(const void *a, const void *b)
{
	return ent_order(a, b, true);
}

static struct fset *ent_set(struct ent *e);

static bool ent_empty(const struct ent *e)
{
	return e->dirty || !e->v1 ? !e->set || e->set->n == 0
				  : json_object_size(e->v1) == 0;
}

static int cmp_by_time(const void *a, const void *b, void *ud)
{
	const struct ents *es = ud;
	const struct ent *p = &es->v[*(const size_t *)a];
	const struct ent *q = &es->v[*(const size_t *)b];
	int d = strcmp(p->time ? p->time : "", q->time ? q->time : "");
	return d ? d : strcmp(p->manager, q->manager);
}

/* Upstream's cap on Update entries (capManagersManager): past
   SRV_MF_MAX_UPDATERS, the oldest are merged into one "ancient-changes"
   entry per API version, counted as upstream counts them. false when out
   of memory. */
static bool ents_cap_pass(struct ents *es, bool *progress)
{
	size_t n = 0;
	size_t *idx = malloc((es->n ? es->n : 1) * sizeof *idx);
	if (!idx)
		return false;
	for (size_t i = 0; i < es->n; i++)
		if (!strcmp(es->v[i].operation, "Update") && !ent_empty(&es->v[i]))
			idx[n++] = i;
	if (n <= SRV_MF_MAX_UPDATERS) {
		free(idx);
		return true;
	}
	qsort_r(idx, n, sizeof *idx, cmp_by_time, es);
	bool ok = true;
	size_t length = n;
	/* per API version, the first (oldest) manager of this pass: the
	   bucket starts as it when there is none */
	struct ent **first = calloc(n, sizeof *first);
	const char **seen = malloc(n * sizeof *seen);
	size_t n_seen = 0;
	if (!first || !seen) {
		free(first);
		free(seen);
		free(idx);
		return false;
	}
	for (size_t i = 0; i < n && length > SRV_MF_MAX_UPDATERS && ok; i++) {
		struct ent *e = &es->v[idx[i]];
		size_t v = 0;
		while (v < n_seen && strcmp(seen[v], e->api_version))
			v++;
		if (v == n_seen) {
			seen[n_seen] = e->api_version;
			first[n_seen++] = e;
			continue;
		}
		struct ent *b = NULL;
		for (size_t j = 0; j < es->n && !b; j++) {
			struct ent *c = &es->v[j];
			if (!strcmp(c->manager, SRV_MF_ANCIENT) &&
			    !strcmp(c->operation, "Update") &&
			    !strcmp(c->api_version, e->api_version) && !*c->subresource)
				b = c;
		}
		if (b == e)
			continue; /* upstream would merge the bucket into itself
				     and drop it */
		if (!b) {
			b = first[v];
			free(b->manager);
			free(b->subresource);
			b->manager = strdup(SRV_MF_ANCIENT);
			b->subresource = strdup("");
			if (!b->manager || !b->subresource) {
				ok = false;
				break;
			}
		}
		if (!ent_set(b) || !ent_set(e)) {
			ok = false;
			break;
		}
		fset_union(b->set, e->set);
		b->dirty = true;
		/* the merged update's time: it is the more recent */
		free(b->time);
		b->time = e->time;
		e->time = NULL;
		fset_free(e->set);
		e->set = fset_new();
		json_decref(e->v1);
		e->v1 = NULL;
		e->dirty = true;
		ok = e->set != NULL;
		length--;
		*progress = true;
	}
	free(first);
	free(seen);
	free(idx);
	return ok;
}

/* Passes until the cap holds or nothing more merges: a single pass can
   stop short (a bucket met after its version's first manager is not merged
   into itself), and what one write leaves the next must not change. */
static bool ents_cap(struct ents *es)
{
	for (int pass = 0; pass < 64; pass++) {
		bool progress = false;
		if (!ents_cap_pass(es, &progress))
			return false;
		if (!progress)
			return true;
	}
	return true;
}

/* A write through /scale: kube's scale handler (ToParent) gives the
   entries it maps back the times the object's entries had for the same
   managers, none for a manager new to the object, so a scale never stamps
   its manager's time (and a first one sorts before the object's other
   updates). */
static bool scale_sub(const struct srv_mf_op *op)
{
	return op->subresource && !strcmp(op->subresource, "scale");
}

/* Write es into metadata m (sorted as upstream; entries owning nothing are
   dropped; no entries: no managedFields). */
static void ents_store(struct ents *es, json_t *m)
{
	char now[32];
	reg_now(now);
	for (size_t i = 0; i < es->n; i++) {
		struct ent *e = &es->v[i];
		if (e->bump) {
			free(e->time);
			e->time = strdup(now);
			e->bump = false;
		}
	}
	ents_cap(es); /* out of memory: more entries than the cap, no harm */
	if (es->n)
		qsort(es->v, es->n, sizeof *es->v, cmp_ent);
	json_t *arr = json_array();
	for (size_t i = 0; i < es->n; i++) {
		struct ent *e = &es->v[i];
		if (ent_empty(e))
			continue;
		json_t *o = json_object();
		json_object_set_new(o, "manager", json_string(e->manager));
		json_object_set_new(o, "operation", json_string(e->operation));
		if (*e->api_version)
			json_object_set_new(o, "apiVersion", json_string(e->api_version));
		if (e->time)
			json_object_set_new(o, "time", json_string(e->time));
		json_object_set_new(o, "fieldsType", json_string("FieldsV1"));
		json_object_set_new(o, "fieldsV1", e->dirty ? fset_to_v1(e->set)
							     : json_incref(e->v1));
		if (*e->subresource)
			json_object_set_new(o, "subresource", json_string(e->subresource));
		json_array_append_new(arr, o);
	}
	if (json_array_size(arr))
		json_object_set_new(m, "managedFields", arr);
	else {
		json_decref(arr);
		json_object_del(m, "managedFields");
	}
}

static struct ent *ents_find(struct ents *es, const char *manager,
			     const char *operation, const char *api_version,
			     const char *subresource)
{
	for (size_t i = 0; i < es->n; i++) {
		struct ent *e = &es->v[i];
		if (!strcmp(e->manager, manager) &&
		    !strcmp(e->operation, operation) &&
		    (!api_version || !strcmp(e->api_version, api_version)) &&
		    !strcmp(e->subresource, subresource ? subresource : ""))
			return e;
	}
	return NULL;
}

/* The entry's set, decoded on first use (NULL when out of memory). */
static struct fset *ent_set(struct ent *e)
{
	if (!e->set)
		e->set = fset_from_v1(e->v1);
	return e->set && !e->set->oom ? e->set : NULL;
}

/*
 * structured-merge-diff's reconcileManagedFieldsWithSchemaChanges, as it
 * runs before an apply: a path below a map or list the custom resource's
 * schema now makes atomic (a CRD changed from granular) becomes the path
 * of that map or list, so its old owners own it whole and conflict on it.
 * Where the schema says nothing (metadata, kept unknown fields) a path
 * stays. atomic_prefix: the length of the part of path p (len bytes) down
 * to the first atomic map or list it goes below, all of it if none.
 */
static size_t atomic_prefix(const char *p, size_t len,
			    const struct srv_schema_node *n)
{
	size_t pos = 0;
	if (len >= 11 && !memcmp(p, "f:metadata", 11))
		return len;
	while (n && pos < len) {
		const char *el = p + pos;
		size_t next = pos + strlen(el) + 1;
		bool field = el[0] == 'f' && el[1] == ':';
		if (field) {
			if (pos && srv_schema_map_atomic(n))
				return pos;
			n = srv_schema_prop(n, el + 2);
		} else {
			const char *const *keys;
			size_t n_keys;
			if (pos && srv_schema_list_kind(n, &keys, &n_keys) ==
				       SRV_SLIST_ATOMIC)
				return pos;
			n = srv_schema_items(n);
		}
		pos = next;
	}
	return len;
}

/* e's set so reconciled with the schema at root (NULL: a built-in, left
   alone); false when out of memory. */
static bool reconcile_atomic(struct ent *e, const struct srv_schema_node *root)
{
	if (!root)
		return true;
	struct fset *s = ent_set(e);
	if (!s)
		return false;
	size_t i;
	for (i = 0; i < s->n; i++)
		if (atomic_prefix(s->buf + s->v[i].off, s->v[i].len, root) <
		    s->v[i].len)
			break;
	if (i == s->n)
		return true;
	struct fset *t = fset_new();
	if (!t)
		return false;
	for (i = 0; i < s->n; i++) {
		const char *p = s->buf + s->v[i].off;
		fset_add(t, p, atomic_prefix(p, s->v[i].len, root));
	}
	fset_norm(t);
	fset_free(s);
	e->set = t;
	e->dirty = true;
	return !t->oom;
}

/* Is path p a member of FieldsV1 v1 (as from_v1 reads it)? */
static bool v1_member(const json_t *v1, const char *p, size_t len)
{
	const json_t *n = v1;
	for (size_t pos = 0; pos < len; pos += strlen(p + pos) + 1) {
		if (!json_is_object(n))
			return false;
		n = json_object_get(n, p + pos);
		if (!n)
			return false;
	}
	return !json_is_object(n) || json_object_size(n) == 0 ||
	       json_object_get(n, ".");
}

static bool ent_has(const struct ent *e, const char *p, size_t len)
{
	return e->set ? fset_has(e->set, p, len) : v1_member(e->v1, p, len);
}

/* Does s share a path with e's set (all: is s within it)? Work is bounded
   by the smaller side for "share": an entry meeting a large change is
   decoded and walked itself, so many entries against many changes stay
   linear in their sizes. */
static bool ent_meets(struct ent *e, const struct fset *s, bool all)
{
	if (!all && !e->set && s->n > 16)
		ent_set(e); /* on no memory, the lookups below still answer */
	if (!all && e->set && e->set->n < s->n) {
		for (size_t i = 0; i < e->set->n; i++)
			if (fset_has(s, at(e->set, i), e->set->v[i].len))
				return true;
		return false;
	}
	for (size_t i = 0; i < s->n; i++)
		if (ent_has(e, at(s, i), s->v[i].len) != all)
			return !all;
	return all;
}

/* e -= a, e -= b, decoding e only when it holds one of their paths.
   false when out of memory. */
static bool ent_drop(struct ent *e, const struct fset *a, const struct fset *b)
{
	if (!ent_meets(e, a, false) && !(b && ent_meets(e, b, false)))
		return true;
	if (!ent_set(e))
		return false;
	fset_sub(&e->set, a);
	fset_sub(&e->set, b);
	e->dirty = true;
	return !e->set->oom;
}

/* ent_drop on every entry but keep. false when out of memory. */
static bool ents_drop(struct ents *es, const struct ent *keep,
		      const struct fset *a, const struct fset *b)
{
	for (size_t i = 0; i < es->n; i++)
		if (&es->v[i] != keep && !ent_drop(&es->v[i], a, b))
			return false;
	return true;
}

/* ------------------------------------------------------------ API */

const char *srv_mf_manager(const char *field_manager, const char *user_agent,
			   char *buf, size_t n)
{
	if (!n)
		return buf;
	/* kube keeps fieldManager as given (its JSON then writes each byte
	   that starts no UTF-8 character as U+FFFD) and takes the
	   User-Agent's printable characters, whole, up to 128 bytes
	   (prefixFromUserAgent) */
	bool given = field_manager && *field_manager;
	const char *s = given ? field_manager : user_agent ? user_agent : "";
	size_t len = given ? strlen(s) : strcspn(s, "/"), o = 0;
	for (size_t i = 0; i < len;) {
		uint32_t r;
		i += reg_utf8_decode((const unsigned char *)s + i, len - i, &r);
		char enc[4];
		size_t w = reg_utf8_encode(enc, r);
		if (!given && !reg_go_isprint(r))
			continue;
		if ((!given && o + w > SRV_MF_MANAGER_MAX) || o + w >= n)
			break;
		memcpy(buf + o, enc, w);
		o += w;
	}
	buf[o] = 0;
	return buf;
}

/* The typed conversion of an apply's configuration (structured-merge-diff,
   above): true with kube's plain 500 in err when it fails. */
static bool smd_typed_error(const struct srv_mf_op *op, const json_t *config,
			    struct walk *w, const struct srv_schema_node *sn,
			    struct srv_error *err)
{
	struct sty root;
	if (op->res && op->res->custom) {
		root = sty_cr(NULL, sn);
		root.k = SK_MAP; /* the builder declares apiVersion, kind,
				    metadata */
	} else {
		const struct pb_msg *m =
		    op->res ? srv_pb_kind_msg(op->res->kind, op->api_version)
			    : NULL;
		root = (struct sty){.k = SK_MAP, .m = m, .open = !m};
	}
	root.typemeta = true;
	char smd[1024] = "";
	struct smd_errs *e = calloc(1, sizeof *e);
	if (!e) {
		srv_error_set(err, LP_E_NOMEM, "out of memory");
		return true;
	}
	smd_check(config, w, &root, smd, 0, sizeof smd, e);
	free(w->pb.p);
	w->pb.p = NULL;
	if (!e->n) {
		free(e);
		return false;
	}
	/* ValidationErrors.Error: one error alone, else a list */
	char *all = e->text;
	char *many = NULL;
	if (e->n > 1) {
		size_t cap = 2 * sizeof e->text + 16, o = 0;
		many = malloc(cap);
		if (many) {
			o += (size_t)snprintf(many, cap, "errors:\n  ");
			for (const char *p = e->text; *p && o + 4 < cap; p++) {
				if (*p == '\n') {
					memcpy(many + o, "\n  ", 3);
					o += 3;
				} else {
					many[o++] = *p;
				}
			}
			many[o] = '\0';
			all = many;
		}
	}
	/* kube's plain error: a 500 without a reason; objectGVKNN names the
	   configuration's namespace and name */
	const json_t *cm = json_object_get(config, "metadata");
	const char *gv = op->api_version ? op->api_version : "";
	const char *slash = strchr(gv, '/');
	const char *cns = json_string_value(json_object_get(cm, "namespace"));
	const char *cn = json_string_value(json_object_get(cm, "name"));
	srv_error_set(err, LP_E_IO,
		      "failed to create typed patch object (%.63s/%.253s; "
		      "%s%s, Kind=%s): %s",
		      cns ? cns : "", cn ? cn : "", slash ? "" : "/", gv,
		      op->res ? op->res->kind : "", all);
	err->no_reason = true;
	free(many);
	free(e);
	return true;
}

lp_err srv_mf_check_manager(const char *fm, struct srv_error *err)
{
	if (!fm || manager_ok(fm, "fieldManager", err))
		return LP_OK;
	return LP_E_INVALID;
}

static void walk_init(struct walk *w, const struct srv_mf_op *op)
{
	memset(w, 0, sizeof *w);
	w->res = op->res;
	w->scope = SC_ALL;
	/* a Scale's set is only the replicas path (kube's scale handler) */
	w->map_keys = op->res && op->res->custom &&
		      !(op->subresource && !strcmp(op->subresource, "scale"));
	if (op->subresource && !strcmp(op->subresource, "status")) {
		w->scope = SC_STATUS;
	} else if (op->res && srv_resource_has_sub(op->res, "status")) {
		w->scope = SC_NO_STATUS;
	}
}

static const struct srv_schema_node *root_of(const struct srv_mf_op *op)
{
	if (!op->res || !op->res->custom)
		return NULL;
	return srv_schema_root(srv_cr_schema(op->res));
}

/* Whether a FieldsV1 value reads as structured-merge-diff reads a set
   (fieldpath's FromJSON): an object whose keys are "." or a path element
   (f:name, i:index, v:JSON value, k:JSON object) and whose values, except
   the "." marker's, are such objects too. */
static bool v1_decodable(const json_t *v, unsigned depth)
{
	if (!json_is_object(v) || depth > 64)
		return false;
	const char *k;
	json_t *c;
	json_object_foreach((json_t *)v, k, c)
	{
		if (!strcmp(k, "."))
			continue;
		if (!strncmp(k, "i:", 2)) {
			char *end;
			errno = 0;
			(void)strtoll(k + 2, &end, 10);
			if (!k[2] || *end || errno)
				return false;
		} else if (!strncmp(k, "v:", 2) || !strncmp(k, "k:", 2)) {
			json_t *x = json_loads(
			    k + 2, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
			bool ok = x && (k[0] == 'v' || json_is_object(x));
			json_decref(x);
			if (!ok)
				return false;
		} else if (strncmp(k, "f:", 2)) {
			return false;
		}
		if (!v1_decodable(c, depth + 1))
			return false;
	}
	return true;
}

/* Whether a request's managedFields decode as kube's DecodeManagedFields
   decodes them: each entry's operation Apply or Update, a non-empty
   apiVersion, fieldsType FieldsV1, and a FieldsV1 set. Where they do not,
   kube keeps the live object's entries (decodeLiveOrNew), so that a
   client that does not understand them cannot lose them. */
static bool ents_decodable(const json_t *mf)
{
	size_t i;
	json_t *e;
	json_array_foreach(mf, i, e)
	{
		const char *o =
		    json_string_value(json_object_get(e, "operation"));
		const char *av =
		    json_string_value(json_object_get(e, "apiVersion"));
		const char *ft =
		    json_string_value(json_object_get(e, "fieldsType"));
		const json_t *v1 = json_object_get(e, "fieldsV1");
		if (!json_is_object(e) || !o ||
		    (strcmp(o, "Apply") && strcmp(o, "Update")) || !av ||
		    !*av || !ft || strcmp(ft, "FieldsV1") ||
		    (v1 && !json_is_null(v1) && !v1_decodable(v1, 0)))
			return false;
	}
	return true;
}

lp_err srv_mf_update(const struct srv_mf_op *op, const json_t *old,
		     json_t *next, struct srv_error *err)
{
	json_t *m = json_object_get(next, "metadata");
	if (!json_is_object(m))
		return LP_OK;
	json_t *sent = json_object_get(m, "managedFields");
	/* A subresource's request never sets them: the stored ones go on
	   (kube's ignoreManagedFieldsFromRequestObject). */
	bool sub = op->subresource && *op->subresource;
	/* [] or [{}] resets: every entry goes, and the request's own changes
	   are then recorded from nothing (kube's decodeLiveOrNew answers an
	   empty set, which its update then fills) */
	bool reset = !sub && json_is_array(sent) &&
		     (json_array_size(sent) == 0 ||
		      (json_array_size(sent) == 1 &&
		       json_is_object(json_array_get(sent, 0)) &&
		       json_object_size(json_array_get(sent, 0)) == 0));
	const json_t *stored =
	    reset ? NULL
		  : json_object_get(json_object_get(old, "metadata"),
				    "managedFields");
	/* a client sending back what it read (client-go's update) sends the
	   stored entries: those are lapis's own; entries that do not decode
	   leave the stored ones in place */
	bool from_req = !reset && !sub && json_is_array(sent) &&
			json_array_size(sent) > 0 &&
			!(stored && json_equal(sent, stored)) &&
			ents_decodable(sent);
	const json_t *base = from_req ? sent : stored;
	if (reset)
		json_object_del(m, "managedFields");
	struct ents es = {0};
	lp_err rc = ents_load(&es, base, from_req ? err : NULL);
	if (!rc && old && es.n == 0) {
		/* an update of an object that has no entries (or whose
		   write clears them) is not tracked: kube's
		   skipNonAppliedManager starts tracking at the first apply */
		json_object_del(m, "managedFields");
		ents_free(&es);
		return LP_OK;
	}
	for (size_t i = 0; !rc && from_req && i < es.n; i++) {
		/* a client's entries are written back in lapis's form */
		if (!ent_set(&es.v[i]))
			rc = LP_ERR(LP_E_NOMEM);
		es.v[i].dirty = true;
	}
	if (rc) {
		ents_free(&es);
		return rc;
	}
	struct walk w;
	walk_init(&w, op);
	struct fset *chg = fset_new(), *rem = fset_new();
	json_t *none = json_object();
	if (!chg || !rem || !none) {
		rc = LP_ERR(LP_E_NOMEM);
		goto out;
	}
	fs_cmp(chg, rem, old ? old : none, next, &w, root_of(op));
	fset_norm(chg);
	fset_norm(rem);
	if (chg->oom || rem->oom) {
		rc = LP_ERR(LP_E_NOMEM);
		goto out;
	}
	struct ent *mine = ents_find(&es, op->manager, "Update", op->api_version,
				     op->subresource);
	if (!ents_drop(&es, mine, chg, rem)) {
		rc = LP_ERR(LP_E_NOMEM);
		goto out;
	}
	if (chg->n) {
		if (!mine)
			mine = ents_add(&es, op->manager, "Update", op->api_version,
					op->subresource, NULL, NULL);
		if (!mine) {
			rc = LP_ERR(LP_E_NOMEM);
			goto out;
		}
		/* the manager's own entry changes only when it did not own
		   all it changed or owned something removed */
		if (mine->dirty || !ent_meets(mine, chg, true) ||
		    ent_meets(mine, rem, false)) {
			if (!ent_set(mine)) {
				rc = LP_ERR(LP_E_NOMEM);
				goto out;
			}
			fset_sub(&mine->set, rem);
			fset_union(mine->set, chg);
			mine->dirty = true;
		}
		mine->bump = !scale_sub(op);
	} else if (mine && !ent_drop(mine, rem, NULL)) {
		rc = LP_ERR(LP_E_NOMEM);
		goto out;
	}
	for (size_t i = 0; i < es.n; i++)
		if (es.v[i].set && es.v[i].set->oom)
			rc = LP_ERR(LP_E_NOMEM);
	if (!rc)
		ents_store(&es, m);
out:
	fset_free(chg);
	fset_free(rem);
	free(w.pb.p);
	json_decref(none);
	ents_free(&es);
	return rc;
}

/* Go's %q of s, enough for manager names. */
static void quote(char *buf, size_t n, const char *s)
{
	size_t o = 0;
	if (n < 3)
		return;
	buf[o++] = '"';
	for (; *s && o + 3 < n; s++) {
		if (*s == '"' || *s == '\\')
			buf[o++] = '\\';
		buf[o++] = *s;
	}
	buf[o++] = '"';
	buf[o] = 0;
}

/* upstream's printManager; through /scale the scale handler shows every
   entry at autoscaling/v1 (ScaleHandler.ToSubresource) */
static void print_manager(char *buf, size_t n, const struct ent *e, bool scale)
{
	char q[300];
	quote(q, sizeof q, e->manager);
	size_t o = (size_t)snprintf(buf, n, "%s", q);
	if (*e->subresource && o < n) {
		char qs[300];
		quote(qs, sizeof qs, e->subresource);
		o += (size_t)snprintf(buf + o, n - o, " with subresource %s", qs);
	}
	if (!strcmp(e->operation, "Update") && o < n)
		snprintf(buf + o, n - o, " using %s",
			 scale ? "autoscaling/v1" : e->api_version);
}

static int cmp_ent_id(const void *a, const void *b)
{
	return ent_order(*(const struct ent *const *)a,
			 *(const struct ent *const *)b, false);
}

/* Set paths in the order structured-merge-diff's Set.Iterate visits
   them, which conflicts are listed in: at each node its members first,
   then the paths under its children, each in element order (a set's own
   sorted order puts .spec.struct.deep.x before .spec.struct.p). */
static int cmp_iterate(const void *x, const void *y, void *ud)
{
	const struct fset *s = ud;
	const struct span *sa = x, *sb = y;
	const char *a = s->buf + sa->off, *ae = a + sa->len;
	const char *b = s->buf + sb->off, *be = b + sb->len;
	for (;;) {
		if (a == ae || b == be) /* one is a member above the other */
			return a == ae ? (b == be ? 0 : -1) : 1;
		size_t al = strlen(a) + 1, bl = strlen(b) + 1;
		int d = strcmp(a, b);
		if (d) {
			bool am = a + al == ae, bm = b + bl == be;
			if (am != bm)
				return am ? -1 : 1;
			return d;
		}
		a += al;
		b += bl;
	}
}

/* The 409 of upstream's NewConflictError for the conflicts in x (one set
   per entry, NULL where none). */
static lp_err conflict_error(struct ents *es, struct fset **x, bool scale,
			     struct srv_error *err)
{
	struct ent **order = malloc((es->n ? es->n : 1) * sizeof *order);
	json_t **paths = calloc(es->n ? es->n : 1, sizeof *paths);
	if (!order || !paths) {
		free(order);
		free(paths);
		return LP_ERR(LP_E_NOMEM);
	}
	size_t m = 0, total = 0;
	for (size_t i = 0; i < es->n; i++) {
		if (!x[i])
			continue;
		order[m++] = &es->v[i];
	}
	qsort(order, m, sizeof *order, cmp_ent_id);
	for (size_t i = 0; i < m; i++) {
		const struct fset *c = x[(size_t)(order[i] - es->v)];
		/* a copy of the spans: the set itself stays sorted */
		struct span *sv = malloc((c->n ? c->n : 1) * sizeof *sv);
		if (!sv) {
			for (size_t j = 0; j < i; j++)
				json_decref(paths[j]);
			free(order);
			free(paths);
			return LP_ERR(LP_E_NOMEM);
		}
		memcpy(sv, c->v, c->n * sizeof *sv);
		qsort_r(sv, c->n, sizeof *sv, cmp_iterate, (void *)c);
		paths[i] = json_array();
		for (size_t j = 0; j < c->n; j++) {
			char ps[1024];
			path_string(c->buf + sv[j].off, sv[j].len, ps,
				    sizeof ps);
			json_array_append_new(paths[i], json_string(ps));
		}
		free(sv);
		total += c->n;
	}
	char msg[1024];
	size_t o = 0;
	if (total == 1) {
		for (size_t i = 0; i < m; i++) {
			if (!json_array_size(paths[i]))
				continue;
			char pm[700];
			print_manager(pm, sizeof pm, order[i], scale);
			snprintf(msg, sizeof msg,
				 "Apply failed with 1 conflict: conflict with %s: %s", pm,
				 json_string_value(json_array_get(paths[i], 0)));
		}
	} else {
		o = (size_t)snprintf(msg, sizeof msg, "Apply failed with %zu conflicts: ",
				     total);
		bool first = true;
		for (size_t i = 0; i < m && o < sizeof msg; i++) {
			char pm[700];
			print_manager(pm, sizeof pm, order[i], scale);
			o += (size_t)snprintf(msg + o, sizeof msg - o, "%sconflicts with %s:",
					      first ? "" : "\n", pm);
			first = false;
			size_t j;
			json_t *p;
			json_array_foreach(paths[i], j, p)
			{
				if (o >= sizeof msg)
					break;
				o += (size_t)snprintf(msg + o, sizeof msg - o, "\n- %s",
						      json_string_value(p));
			}
		}
	}
	for (size_t i = 0; i < m; i++) {
		char pm[700];
		print_manager(pm, sizeof pm, order[i], scale);
		size_t j;
		json_t *p;
		json_array_foreach(paths[i], j, p)
		{
			srv_error_cause(err, "FieldManagerConflict",
					json_string_value(p), "conflict with %s", pm);
		}
		json_decref(paths[i]);
	}
	free(order);
	free(paths);
	return srv_error_set(err, LP_E_CONFLICT, "%s", msg);
}

/* The client-side apply annotation's fields that live still holds as the
   annotation has them, for kubectl's upgrade to server-side apply
   (upstream's allowedConflictsFromLastApplied: the annotation's fields
   less those live changed, added or removed since); NULL when there is
   no annotation or it is of another version than the apply's. */
static struct fset *last_applied_set(const json_t *live, const char *version,
				     struct walk *w,
				     const struct srv_schema_node *sn)
{
	const char *la = json_string_value(json_object_get(
	    json_object_get(json_object_get(live, "metadata"), "annotations"),
	    LAST_APPLIED));
	if (!la || !*la)
		return NULL;
	json_error_t je;
	json_t *obj = reg_json_load(la, strlen(la), JSON_ALLOW_NUL, &je);
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));
	if (!json_is_object(obj) || !av || strcmp(av, version)) {
		json_decref(obj);
		return NULL;
	}
	struct fset *s = fset_new(), *chg = fset_new(), *rem = fset_new();
	struct fset *kept = NULL;
	if (s && chg && rem) {
		fs_add_fields(s, obj, w, sn, false);
		fs_cmp(chg, rem, obj, live, w, sn);
		fset_norm(s);
		fset_union(chg, rem);
		fset_norm(chg);
		kept = fset_filter(s, chg, false);
	}
	fset_free(s);
	fset_free(chg);
	fset_free(rem);
	json_decref(obj);
	return kept;
}

/* kubectl's apply keeps the client-side annotation in step (upstream's
   lastAppliedUpdater): the applied configuration without the annotation. */
static void update_last_applied(json_t *merged, const json_t *config)
{
	json_t *c = json_deep_copy(config);
	/* upstream's buildLastApplied sets what is left, an empty map too */
	json_t *ann = json_object_get(json_object_get(c, "metadata"), "annotations");
	if (json_is_object(ann))
		json_object_del(ann, LAST_APPLIED);
	/* upstream encodes it with json.Encoder, which ends it with a
	   newline, as kubectl's own annotation, sorts the keys and escapes
	   <, > and & (\u003c, \u003e, \u0026) */
	char *s = srv_go_json(c);
	json_decref(c);
	json_t *mann =
	    json_object_get(json_object_get(merged, "metadata"), "annotations");
	if (s && json_is_object(mann))
		json_object_set_new(mann, LAST_APPLIED, json_sprintf("%s\n", s));
	free(s);
	/* upstream's SetLastApplied drops it when the annotations would pass
	   ValidateAnnotationsSize's 256 KiB (keys and values) */
	size_t total = 0;
	const char *k;
	json_t *v;
	json_object_foreach(mann, k, v) total +=
	    strlen(k) + json_string_length(v);
	if (total > 256 * 1024)
		json_object_del(mann, LAST_APPLIED);
}

lp_err srv_mf_apply(const struct srv_mf_op *op, const json_t *live,
		    const json_t *config, bool force, json_t **out,
		    struct srv_error *err)
{
	if (!json_is_object(config))
		return srv_error_set(
		    err, LP_E_BADREQUEST,
		    "the apply configuration must be an object");
	struct walk w;
	walk_init(&w, op);
	const struct srv_schema_node *sn = root_of(op);
	if (smd_typed_error(op, config, &w, sn, err))
		return err->code;
	walk_init(&w, op);
	json_t *none = json_object();
	const json_t *l = live ? live : none;
	struct ents es = {0};
	struct fset *newset = fset_new(), *chg = fset_new(), *rem = fset_new();
	struct fset **x = NULL;
	size_t n_x = 0;
	json_t *merged = NULL;
	lp_err rc = ents_load(
	    &es, json_object_get(json_object_get(l, "metadata"), "managedFields"),
	    NULL);
	if (!rc && (!none || !newset || !chg || !rem))
		rc = LP_ERR(LP_E_NOMEM);
	for (size_t i = 0; !rc && i < es.n; i++)
		if (!ent_set(&es.v[i]) || !reconcile_atomic(&es.v[i], sn))
			rc = LP_ERR(LP_E_NOMEM);
	if (!rc && live && es.n == 0) {
		/* the first apply to an object that has no entries: what it
		   holds is first recorded as an update from nothing by
		   "before-first-apply" (kube's skipNonAppliedManager), which
		   the apply then conflicts with */
		struct fset *held = fset_new(), *gone = fset_new();
		struct ent *b = NULL;
		if (held && gone) {
			fs_cmp(held, gone, none, live, &w, sn);
			fset_norm(held);
		}
		if (!held || !gone || held->oom || gone->oom)
			rc = LP_ERR(LP_E_NOMEM);
		else if (held->n &&
			 !(b = ents_add(&es, "before-first-apply", "Update",
					op->api_version, op->subresource, NULL,
					NULL)))
			rc = LP_ERR(LP_E_NOMEM);
		if (b) {
			fset_free(b->set);
			b->set = held;
			held = NULL;
			b->bump = true;
		}
		fset_free(held);
		fset_free(gone);
	}
	if (rc)
		goto out;
	fs_add_fields(newset, op->owned ? op->owned : config, &w, sn, false);
	fset_norm(newset);
	merged = merge_val(json_deep_copy(l), config, &w, sn);
	struct ent *own = ents_find(&es, op->manager, "Apply", NULL,
				    op->subresource);
	if (own && merged) {
		/* what the manager applied before and leaves out now goes,
		   unless someone (itself included) owns it or below */
		struct fset *keep = fset_new();
		struct fset *rm = keep ? fset_filter(own->set, newset, false) : NULL;
		if (keep && rm) {
			fset_union(keep, newset);
			for (size_t i = 0; i < es.n; i++)
				if (&es.v[i] != own)
					fset_union(keep, es.v[i].set);
			fset_norm(rm);
			remove_paths(merged, &w, sn, rm, own->set, keep, false);
		}
		if (!keep || !rm || keep->oom)
			rc = LP_ERR(LP_E_NOMEM);
		fset_free(keep);
		fset_free(rm);
	}
	if (!merged)
		rc = LP_ERR(LP_E_NOMEM);
	if (rc)
		goto out;
	fs_cmp(chg, rem, l, merged, &w, sn);
	fset_norm(chg);
	fset_norm(rem);
	n_x = es.n; /* entries added below have no conflicts */
	x = calloc(n_x ? n_x : 1, sizeof *x);
	if (!x || chg->oom || rem->oom || newset->oom || w.pb.oom) {
		rc = LP_ERR(LP_E_NOMEM);
		goto out;
	}
	bool conflicts = false;
	for (size_t i = 0; i < n_x; i++) {
		if (&es.v[i] == own)
			continue;
		x[i] = fset_filter(es.v[i].set, chg, true);
		if (!x[i]) {
			rc = LP_ERR(LP_E_NOMEM);
			goto out;
		}
		if (x[i]->n)
			conflicts = true;
		else {
			fset_free(x[i]);
			x[i] = NULL;
		}
	}
	if (conflicts && !force && !strcmp(op->manager, "kubectl")) {
		/* kubectl upgrading from client-side apply: conflicts on
		   fields the annotation lists, live unchanged since, are
		   taken over; the others alone are reported */
		struct fset *allowed =
		    last_applied_set(l, op->api_version, &w, sn);
		if (allowed && allowed->oom)
			rc = LP_ERR(LP_E_NOMEM);
		else if (allowed)
			conflicts = false;
		for (size_t i = 0; allowed && !rc && i < n_x; i++) {
			if (!x[i])
				continue;
			struct fset *left = fset_filter(x[i], allowed, false);
			if (!left) {
				rc = LP_ERR(LP_E_NOMEM);
				break;
			}
			fset_free(x[i]);
			x[i] = left->n ? left : NULL;
			if (left->n)
				conflicts = true;
			else
				fset_free(left);
		}
		fset_free(allowed);
		if (rc)
			goto out;
		force = !conflicts;
	}
	if (conflicts && !force) {
		rc = conflict_error(&es, x, scale_sub(op), err);
		goto out;
	}
	if (!ents_drop(&es, own, chg, rem)) {
		rc = LP_ERR(LP_E_NOMEM);
		goto out;
	}
	bool changed = chg->n || rem->n;
	if (!own)
		own = ents_add(&es, op->manager, "Apply", op->api_version,
			       op->subresource, NULL, NULL);
	if (!own) {
		rc = LP_ERR(LP_E_NOMEM);
		goto out;
	}
	bool same = fset_equal(own->set, newset) &&
		    !strcmp(own->api_version, op->api_version);
	fset_free(own->set);
	own->set = newset;
	newset = NULL;
	if (!same)
		own->dirty = true;
	free(own->api_version);
	own->api_version = strdup(op->api_version);
	/* upstream stamps the time only when the object changed
	   (managedFieldsUpdater.Apply): a manager applying what is
	   there already gets an entry without one */
	own->bump = changed && !scale_sub(op);
	if (!own->api_version) {
		rc = LP_ERR(LP_E_NOMEM);
		goto out;
	}
	for (size_t i = 0; i < es.n; i++)
		if (es.v[i].set->oom)
			rc = LP_ERR(LP_E_NOMEM);
	if (rc)
		goto out;
	/* upstream asks the object the apply made (hasLastApplied of its
	   result): an apply-create carrying the annotation rebuilds it too */
	if (!strcmp(op->manager, "kubectl") &&
	    json_string_value(json_object_get(
		json_object_get(json_object_get(merged, "metadata"),
				"annotations"),
		LAST_APPLIED)))
		update_last_applied(merged, config);
	json_t *m = json_object_get(merged, "metadata");
	if (!json_is_object(m)) {
		m = json_object();
		json_object_set_new(merged, "metadata", m);
	}
	ents_store(&es, m);
	*out = merged;
	merged = NULL;
out:
	for (size_t i = 0; x && i < n_x; i++)
		fset_free(x[i]);
	free(x);
	json_decref(merged);
	fset_free(newset);
	fset_free(chg);
	fset_free(rem);
	free(w.pb.p);
	json_decref(none);
	ents_free(&es);
	return rc;
}
