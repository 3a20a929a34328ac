/*
 * informer.c -- an informer over the engine (see informer.h): list, watch,
 * cache, handlers, and a re-list that delivers the differences.
 *
 * Threads
 *  - The informer thread (run) alone lists, watches, writes the cache and
 *    calls the handlers. It may read the cache without the lock: nobody
 *    else writes it.
 *  - The engine's writer thread runs on_ready, which only sets a flag
 *    under wake_mu (never i->mu, which inf_list may hold for a long walk),
 *    and signals the informer thread only when it is idle: after a batch
 *    of events the thread pauses up to batch_ms (pause_batch), ended early
 *    by inf_wait_rev (urgent) and inf_stop, so that a steady stream of
 *    commits wakes it once per pause, not once per commit.
 *  - Any thread reads the cache (inf_get, inf_list) and waits (inf_wait_*)
 *    under i->mu.
 *  - inf_start, inf_stop and inf_free are called by the informer's owner,
 *    one at a time.
 *
 * The informer thread's states (run performs every transition):
 *
 *   inf_start -> LIST --list_all, replace--> WATCH (watch)
 *                 ^ ^                          |
 *                 | +--- OVERFLOW, COMPACTED --+  at once
 *                 +----- any other error ------+  after BACKOFF_MS
 *   LIST or WATCH -- inf_stop, or LP_E_CLOSED from the engine --> DONE
 *                    (waiters then get LP_E_CLOSED)
 *   A list that hits LP_E_COMPACTED between its pages starts again.
 *
 * Invariants
 *  1. After replace() the cache holds exactly the listed records, and the
 *     handlers have been called once per difference from the previous
 *     cache, in the order: adds and updates in key order, then deletes.
 *  2. i->rev is the revision the cache reflects: every change under the
 *     prefix up to i->rev is applied and its handler has returned. It only
 *     grows (a re-list is newer than any event applied before it).
 *  3. A cache item is freed only by the informer thread, after removing it
 *     from the table under i->mu and after its last handler call; so a
 *     handler's pointers and a reader's (under i->mu) stay valid.
 *  4. The table has no two items with equal keys.
 *  5. Indexes: an item in the table is in entry (x, v) of the index table
 *     exactly when indexer x gave value v for it (its memb array records
 *     each entry and its position there), unless i->idx_lost is set (no
 *     memory for an entry; the next list rebuilds every index). An entry
 *     with no items is freed. Items and entries change together under
 *     i->mu, so readers never see an item without its entries.
 *  6. An item's json and memb values are made (prepare) on the informer
 *     thread before the item enters the table, and never change after;
 *     except that an item inf_opts.eager rejects enters with no json and
 *     no memb values (lazy), and inf_json, on the informer thread, may
 *     later set its json and tree and clear lazy, under i->mu.
 *
 * Locks: i->mu guards the tables, rev, synced, done and the stats; wake_mu
 * guards ready, stop, idle and urgent. Never both at once. The engine is
 * called with no lock held.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "informer.h"
#include "lapis/assert.h"
#include "lapis/clock.h"
#include "lapis/log.h"
#include "registry/json.h"
#include "workqueue.h" /* ctl__siphash */

#if !JANSSON_THREAD_SAFE_REFCOUNT
#error                                                                         \
    "decoded objects are shared between threads: jansson must count references atomically"
#endif

#define INF_MAGIC 0x494e4631u
/* An index value is a namespace, a UID or such: longer ones are ignored
   rather than copied (an object's size is bounded, not its values). */
#define MAX_VALUE 1024
/* A list page: big enough that paging costs little, small enough that one
   snapshot is short (STYLE.md §5: short read transactions). */
#define DEF_PAGE 500
#define MIN_BUCKETS 64
/* After an unexpected engine error (readers full, I/O), wait this long
   before listing again, so a persistent failure does not spin. */
#define BACKOFF_MS 1000
/* How long events gather between batches under a steady stream
   (pause_batch), unless inf_opts.batch_ms says otherwise. */
#define BATCH_MS 2

/* A decoded tree shared between threads. Our count, not jansson's, says
   when it goes: the thread that drops the last reference has acquired
   every other thread's release, then holds jansson's only reference. */
struct inf_tree {
	atomic_size_t refs;
	json_t *json; /* immutable; jansson's count stays 1 */
};

json_t *inf_keep(const struct inf_obj *obj)
{
	if (!obj->tree)
		return NULL;
	atomic_fetch_add_explicit(&obj->tree->refs, 1, memory_order_relaxed);
	return obj->tree->json;
}

void inf_unkeep(struct inf_tree *t)
{
	if (!t)
		return;
	size_t was =
	    atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel);
	LP_ASSERT(was > 0);
	if (was == 1) {
		json_decref(t->json);
		free(t);
	}
}

struct ientry;

static void check_inf(const inf *i);

/* One index value of an item (invariant 5). */
struct imemb {
	unsigned idx;	  /* the indexer; immutable */
	char *value;	  /* immutable */
	uint64_t hash;	  /* of (idx, value); immutable */
	struct ientry *e; /* its entry, NULL when not linked; under i->mu */
	size_t pos;	  /* the item's place in e->v; under i->mu */
};

struct citem {
	struct citem *hnext; /* hash chain; under i->mu */
	uint64_t hash;	     /* immutable */
	uint64_t gen;	     /* the list generation that last saw it;
				informer thread only */
	struct imemb *memb;  /* index values; see struct imemb */
	size_t n_memb, cap_memb;
	bool lazy;	    /* obj.json is left for inf_json (invariant 6) */
	struct inf_obj obj; /* points into data, json owned; immutable once
			       in the table, but for a lazy json */
	uint8_t data[];	    /* key, then value */
};

/* The items that indexer idx gave value for. Under i->mu. */
struct ientry {
	struct ientry *hnext;
	uint64_t hash;
	unsigned idx;
	struct citem **v;
	size_t n, cap;
	char value[];
};

struct indexer {
	char *name;
	inf_index_fn fn;
	void *ud;
};

/* What an indexer's function writes into (inf_emit). */
struct inf_emit {
	inf *i;
	struct citem *c;
	unsigned idx;
	int nomem;
};

struct inf {
	uint32_t magic;
	char *name;	 /* immutable */
	eng *e;		 /* immutable, borrowed */
	uint8_t *prefix; /* immutable */
	size_t plen;
	struct inf_handlers h; /* immutable */
	uint32_t page;	       /* immutable */
	uint64_t seed[2];      /* immutable */
	int raw;	       /* immutable */
	bool (*whole)(void *, const uint8_t *, size_t); /* immutable */
	void *whole_ud;					/* immutable */
	bool (*eager)(void *, const struct inf_obj *);	/* immutable */
	void *eager_ud;					/* immutable */
	uint32_t resync_ms;    /* immutable */
	uint32_t batch_ms;     /* immutable */
	int64_t next_resync;   /* CLOCK_MONOTONIC ms; informer thread only */
	/* immutable once started (inf_add_indexer before inf_start) */
	struct indexer idx[INF_MAX_INDEXERS];
	unsigned n_idx;

	pthread_t tid;	     /* owner only */
	int started, joined; /* owner only */
	uint64_t gen;	     /* informer thread only */

	pthread_mutex_t mu; /* guards everything down to the stats */
	pthread_cond_t cv;  /* rev, synced or done changed */
	struct citem **tab;
	size_t n_buckets; /* a power of two */
	size_t n;
	struct ientry **itab; /* the index entries */
	size_t n_ibuckets;    /* a power of two */
	size_t n_entries;
	int idx_lost; /* invariant 5: an index lacks an item */
	int64_t rev;
	int synced;
	int done;	     /* the thread has ended (or never will run) */
	struct inf_stats st; /* but rev and objects, filled on read */

	pthread_mutex_t wake_mu; /* guards ready, stop, idle, urgent */
	pthread_cond_t wake_cv;	 /* the informer thread waits here */
	int ready;		 /* the watch's ready callback fired */
	int stop;		 /* inf_stop asked */
	int idle;		 /* the informer thread waits for ready */
	int urgent;		 /* inf_wait_rev waits: no pause */
};

/* ---------------------------------------------------------------- cache */

/* The head of a value: its members up to and including "metadata", with
   metadata's managedFields cut out, then the closing brace: JSON, what
   decode_head reads, and all a metadata-only consumer needs. Its parts as
   offsets into the value: [0, cut_from) + [cut_to, meta_end) + "}". */
struct head {
	size_t cut_from, cut_to, meta_end;
};
static bool head_of(const uint8_t *value, size_t len, struct head *h);

/* A new item of r: its key and value, or only the value's head where
   inf_opts.whole says no (metadata is all anyone reads of it, and a write
   of a large object then grows the cache by its metadata alone). */
static struct citem *citem_new(inf *i, const struct eng_record *r)
{
	struct head h;
	bool head = !i->raw && i->whole &&
		    !i->whole(i->whole_ud, r->key, r->key_len) &&
		    head_of(r->value, r->value_len, &h);
	size_t vlen =
	    head ? h.meta_end - (h.cut_to - h.cut_from) + 1 : r->value_len;
	struct citem *c = malloc(sizeof *c + r->key_len + vlen + 1);
	if (!c)
		return NULL;
	c->hnext = NULL;
	c->gen = 0;
	c->memb = NULL;
	c->n_memb = c->cap_memb = 0;
	c->lazy = false;
	memcpy(c->data, r->key, r->key_len);
	uint8_t *v = c->data + r->key_len;
	if (head) {
		memcpy(v, r->value, h.cut_from);
		memcpy(v + h.cut_from, r->value + h.cut_to,
		       h.meta_end - h.cut_to);
		v[vlen - 1] = '}';
	} else if (vlen) {
		memcpy(v, r->value, vlen);
	}
	v[vlen] = 0; /* handy for printing */
	c->obj.key = c->data;
	c->obj.key_len = r->key_len;
	c->obj.value = v;
	c->obj.value_len = vlen;
	c->obj.create_rev = r->create_rev;
	c->obj.mod_rev = r->mod_rev;
	c->obj.version = r->version;
	c->obj.json = NULL;
	c->obj.tree = NULL;
	c->hash = ctl__siphash(i->seed, r->key, r->key_len);
	return c;
}

/* Free an item out of the table (its entries unlinked). NULL ok. */
static void citem_free(struct citem *c)
{
	if (!c)
		return;
	for (size_t k = 0; k < c->n_memb; k++)
		free(c->memb[k].value);
	free(c->memb);
	inf_unkeep(c->obj.tree);
	free(c);
}

static uint64_t value_hash(const inf *i, unsigned idx, const char *v)
{
	/* Mixing the indexer in by a multiple of the golden ratio keeps equal
	   values of two indexers in different buckets. */
	return ctl__siphash(i->seed, v, strlen(v)) +
	       (uint64_t)(idx + 1) * 0x9e3779b97f4a7c15ull;
}

void inf_emit(struct inf_emit *em, const char *value)
{
	if (!value || em->nomem)
		return;
	size_t len = strlen(value);
	if (len > MAX_VALUE)
		return;
	struct citem *c = em->c;
	for (size_t k = 0; k < c->n_memb; k++)
		if (c->memb[k].idx == em->idx &&
		    strcmp(c->memb[k].value, value) == 0)
			return; /* a repeat counts once */
	if (c->n_memb == c->cap_memb) {
		size_t cap = c->cap_memb ? 2 * c->cap_memb : 2;
		struct imemb *m = realloc(c->memb, cap * sizeof *m);
		if (!m) {
			em->nomem = 1;
			return;
		}
		c->memb = m;
		c->cap_memb = cap;
	}
	char *v = malloc(len + 1);
	if (!v) {
		em->nomem = 1;
		return;
	}
	memcpy(v, value, len + 1);
	c->memb[c->n_memb++] = (struct imemb){
	    .idx = em->idx,
	    .value = v,
	    .hash = value_hash(em->i, em->idx, v),
	};
}

/* The namespace index's function. */
static void index_namespace(void *ud, const struct inf_obj *obj,
			    struct inf_emit *em)
{
	(void)ud;
	if (!obj->json)
		return;
	json_t *meta = json_object_get(obj->json, "metadata");
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	inf_emit(em, ns ? ns : "");
}

/*
 * Decode c's value and compute its index values (invariant 6). Informer
 * thread, no lock, before c enters the table. Errors: LP_E_NOMEM (c keeps
 * what it got; the caller decides).
 */
/*
 * A string member `"name":"..."` at p, without escapes: the end of the
 * member, its value's text in *v and *vlen. NULL when the bytes are not
 * that (the caller decodes whole).
 */
static const char *plain_end(const char *p, const char *end, const char *name,
			     const char **v, size_t *vlen)
{
	size_t nl = strlen(name);
	if ((size_t)(end - p) < nl + 5 || p[0] != '"' ||
	    memcmp(p + 1, name, nl) || memcmp(p + 1 + nl, "\":\"", 3))
		return NULL;
	p += nl + 4;
	const char *q = memchr(p, '"', (size_t)(end - p));
	if (!q || memchr(p, '\\', (size_t)(q - p)))
		return NULL;
	*v = p;
	*vlen = (size_t)(q - p);
	return q + 1;
}

/* plain_end's member as a new string, *p advanced past it; NULL: not one. */
static json_t *plain_member(const char **p, const char *end, const char *name)
{
	const char *v;
	size_t n;
	const char *e = plain_end(*p, end, name, &v, &n);
	if (!e)
		return NULL;
	*p = e;
	return json_stringn(v, n);
}

/*
 * The end of the JSON value at p (a string, object, array or scalar of
 * compact, valid JSON as the registry writes it), or NULL at end.
 */
static const char *value_end(const char *p, const char *end)
{
	int depth = 0;
	for (; p < end; p++) {
		switch (*p) {
		case '"':
			if (!(p = reg_json_string_end(p + 1, end)))
				return NULL;
			if (!depth)
				return p + 1;
			break;
		case '{':
		case '[':
			depth++;
			break;
		case '}':
		case ']':
			if (--depth == 0)
				return p + 1;
			if (depth < 0)
				return p;
			break;
		case ',':
			if (!depth)
				return p;
			break;
		default:
			break;
		}
	}
	return depth ? NULL : p;
}

/*
 * Where the managedFields member of the metadata object at p..end is, with
 * one comma beside it: [*from, *to). No controller reads managedFields,
 * and they are most of a small object's metadata. false when there is no
 * such member at its top level.
 */
static bool managed_span(const char *p, const char *end, const char **from,
			 const char **to, const char **obj_end)
{
	static const char key[] = "\"managedFields\":";
	bool found = false;
	if (p >= end || *p != '{')
		return false;
	const char *q = p + 1;
	for (;;) {
		if (q >= end)
			return false;
		if (*q == '}') {
			if (obj_end)
				*obj_end = q + 1;
			return found;
		}
		const char *member = q;
		const char *k = value_end(q, end); /* the key */
		if (!k || k >= end || *k != ':')
			return false;
		const char *v = value_end(k + 1, end);
		if (!v)
			return false;
		if (!found && (size_t)(k + 1 - member) == sizeof key - 1 &&
		    !memcmp(member, key, sizeof key - 1)) {
			found = true;
			*from = member;
			*to = v;
			if (*to < end && **to == ',')
				(*to)++;
			else if (*from > p + 1 && (*from)[-1] == ',')
				(*from)--;
			if (!obj_end)
				return true;
		}
		q = v;
		if (q < end && *q == ',')
			q++;
	}
}

/*
 * The metadata object at p..end without its managedFields member: a new
 * copy in *out, or false when there is no such member at its top level
 * (decode p as it is).
 */
static bool drop_managed(const char *p, const char *end, char **out,
			 size_t *out_len)
{
	const char *cut_from, *cut_to;
	if (!managed_span(p, end, &cut_from, &cut_to, NULL))
		return false;
	size_t n = (size_t)(end - p) - (size_t)(cut_to - cut_from);
	char *b = malloc(n);
	if (!b)
		return false;
	size_t a = (size_t)(cut_from - p);
	memcpy(b, p, a);
	memcpy(b + a, cut_to, (size_t)(end - cut_to));
	*out = b;
	*out_len = n;
	return true;
}

/*
 * The head of a value (struct head): kind and apiVersion (either first, as
 * decode_head reads them), then metadata with its managedFields cut out.
 * false when the value is not laid out so.
 */
static bool head_of(const uint8_t *value, size_t len, struct head *h)
{
	static const char meta[] = ",\"metadata\":";
	const char *s = (const char *)value, *end = s + len, *p = s + 1, *v;
	size_t n;
	if (len < 2 || *s != '{')
		return false;
	/* as decode_head reads it: built-ins lead with kind, custom
	   resources with apiVersion */
	bool kind_first = *p == '"' && end - p > 1 && p[1] == 'k';
	if (!(p = plain_end(p, end, kind_first ? "kind" : "apiVersion", &v,
			    &n)) ||
	    p == end || *p++ != ',' ||
	    !(p = plain_end(p, end, kind_first ? "apiVersion" : "kind", &v,
			    &n)) ||
	    (size_t)(end - p) < sizeof meta - 1 ||
	    memcmp(p, meta, sizeof meta - 1))
		return false;
	p += sizeof meta - 1;
	const char *m_end = NULL, *from, *to;
	if (!managed_span(p, end, &from, &to, &m_end)) {
		if (!m_end)
			return false; /* not an object */
		from = to = m_end;
	}
	h->cut_from = (size_t)(from - s);
	h->cut_to = (size_t)(to - s);
	h->meta_end = (size_t)(m_end - s);
	return true;
}

/*
 * kind, apiVersion and metadata of a value laid out as the registry stores
 * objects (`{"kind":..,"apiVersion":..,"metadata":{..},...`, compact, in
 * that order, or apiVersion before kind for a custom resource:
 * server/registry/object.c), decoding nothing after metadata
 * and not its managedFields. NULL when the value is laid out otherwise.
 */
static json_t *decode_head(const uint8_t *value, size_t len)
{
	static const char meta[] = ",\"metadata\":";
	const char *p = (const char *)value, *end = p + len;
	if (len < 2 || *p++ != '{')
		return NULL;
	json_t *o = json_object();
	if (!o)
		return NULL;
	/* built-ins lead with kind, custom resources (members sorted) with
	   apiVersion */
	bool kind_first = *p == '"' && end - p > 1 && p[1] == 'k';
	const char *k1 = kind_first ? "kind" : "apiVersion";
	const char *k2 = kind_first ? "apiVersion" : "kind";
	json_t *v1 = plain_member(&p, end, k1);
	if (!v1 || json_object_set_new(o, k1, v1) || p == end || *p++ != ',')
		goto whole;
	json_t *v2 = plain_member(&p, end, k2);
	if (!v2 || json_object_set_new(o, k2, v2) ||
	    (size_t)(end - p) < sizeof meta - 1 ||
	    memcmp(p, meta, sizeof meta - 1))
		goto whole;
	p += sizeof meta - 1;
	char *cut = NULL;
	size_t cut_len = 0;
	json_t *m = drop_managed(p, end, &cut, &cut_len)
			? reg_json_load(cut, cut_len, JSON_DISABLE_EOF_CHECK, NULL)
			: reg_json_load(p, (size_t)(end - p),
					JSON_DISABLE_EOF_CHECK, NULL);
	free(cut);
	if (!json_is_object(m) || json_object_set_new(o, "metadata", m))
		goto whole;
	return o;
whole:
	json_decref(o);
	return NULL;
}

/*
 * o's value decoded (its head only, unless inf_opts.whole asks for it whole)
 * into *tree, a new reference; *tree NULL when the value is not a JSON
 * object (then counted in the stats if count: once per cached value). Any
 * thread, no lock held. Errors: LP_E_NOMEM.
 */
static lp_err decode(inf *i, const struct inf_obj *o, bool count,
		     struct inf_tree **tree)
{
	json_t *j = NULL;
	*tree = NULL;
	if (i->whole && !i->whole(i->whole_ud, o->key, o->key_len))
		j = decode_head(o->value, o->value_len);
	if (!j)
		j = reg_json_load((const char *)o->value, o->value_len,
				  JSON_ALLOW_NUL, NULL);
	if (j && !json_is_object(j)) {
		json_decref(j);
		j = NULL;
	}
	if (!j) {
		if (count) {
			pthread_mutex_lock(&i->mu);
			i->st.decode_errors++;
			pthread_mutex_unlock(&i->mu);
		}
		return LP_OK;
	}
	struct inf_tree *t = malloc(sizeof *t);
	if (!t) {
		json_decref(j);
		return LP_ERR(LP_E_NOMEM);
	}
	atomic_init(&t->refs, 1);
	t->json = j;
	*tree = t;
	return LP_OK;
}

static lp_err prepare(inf *i, struct citem *c)
{
	if (i->raw)
		return LP_OK;
	if (i->eager && !i->eager(i->eager_ud, &c->obj)) {
		c->lazy = true; /* invariant 6 */
		return LP_OK;
	}
	struct inf_tree *t;
	lp_err rc = decode(i, &c->obj, true, &t);
	if (rc)
		return rc;
	c->obj.json = t ? t->json : NULL;
	c->obj.tree = t;
	struct inf_emit em = {.i = i, .c = c};
	for (unsigned x = 0; x < i->n_idx && !em.nomem; x++) {
		em.idx = x;
		i->idx[x].fn(i->idx[x].ud, &c->obj, &em);
	}
	return em.nomem ? LP_ERR(LP_E_NOMEM) : LP_OK;
}

json_t *inf_json(inf *i, const struct inf_obj *obj)
{
	check_inf(i);
	if (!obj)
		return NULL;
	/* Handlers are given items' own objects (call_add and friends). */
	struct citem *c =
	    (struct citem *)((char *)obj - offsetof(struct citem, obj));
	if (!c->lazy)
		return obj->json;
	struct inf_tree *t;
	if (decode(i, obj, true, &t))
		return NULL; /* no memory: still lazy, asked again later */
	pthread_mutex_lock(&i->mu); /* readers look at it under i->mu */
	c->obj.json = t ? t->json : NULL;
	c->obj.tree = t;
	c->lazy = false;
	pthread_mutex_unlock(&i->mu);
	return c->obj.json;
}

/* Informer thread, or anyone under i->mu. */
static struct citem **slot_of(inf *i, const void *key, size_t len, uint64_t h)
{
	struct citem **pp = &i->tab[h & (i->n_buckets - 1)];
	for (; *pp; pp = &(*pp)->hnext)
		if ((*pp)->hash == h && (*pp)->obj.key_len == len &&
		    memcmp((*pp)->obj.key, key, len) == 0)
			break;
	return pp;
}

/* Under i->mu. On no memory the table stays as it is (only slower). */
static void rehash(inf *i, size_t nb)
{
	struct citem **t = calloc(nb, sizeof *t);
	if (!t)
		return;
	for (size_t b = 0; b < i->n_buckets; b++) {
		struct citem *c = i->tab[b];
		while (c) {
			struct citem *next = c->hnext;
			c->hnext = t[c->hash & (nb - 1)];
			t[c->hash & (nb - 1)] = c;
			c = next;
		}
	}
	free(i->tab);
	i->tab = t;
	i->n_buckets = nb;
}

/* ---------------------------------------------------------------- indexes */

/* Under i->mu. */
static struct ientry **islot_of(inf *i, unsigned idx, const char *v, uint64_t h)
{
	struct ientry **pp = &i->itab[h & (i->n_ibuckets - 1)];
	for (; *pp; pp = &(*pp)->hnext)
		if ((*pp)->hash == h && (*pp)->idx == idx &&
		    strcmp((*pp)->value, v) == 0)
			break;
	return pp;
}

/* Under i->mu. On no memory the table stays as it is (only slower). */
static void irehash(inf *i, size_t nb)
{
	struct ientry **t = calloc(nb, sizeof *t);
	if (!t)
		return;
	for (size_t b = 0; b < i->n_ibuckets; b++) {
		struct ientry *e = i->itab[b];
		while (e) {
			struct ientry *next = e->hnext;
			e->hnext = t[e->hash & (nb - 1)];
			t[e->hash & (nb - 1)] = e;
			e = next;
		}
	}
	free(i->itab);
	i->itab = t;
	i->n_ibuckets = nb;
}

/* Put c into the entry of each of its values (invariant 5). Under i->mu.
   Returns 0, or -1 when an entry could not grow (c is then missing from
   it, and i->idx_lost is set). */
static int link_item(inf *i, struct citem *c)
{
	int rc = 0;
	for (size_t k = 0; k < c->n_memb; k++) {
		struct imemb *m = &c->memb[k];
		LP_ASSERT(!m->e);
		struct ientry **pp = islot_of(i, m->idx, m->value, m->hash);
		struct ientry *e = *pp;
		if (!e) {
			size_t len = strlen(m->value);
			e = malloc(sizeof *e + len + 1);
			if (!e) {
				rc = -1;
				continue;
			}
			*e = (struct ientry){.hash = m->hash, .idx = m->idx};
			memcpy(e->value, m->value, len + 1);
			*pp = e;
			if (++i->n_entries > i->n_ibuckets)
				irehash(i, i->n_ibuckets * 2);
		}
		if (e->n == e->cap) {
			size_t cap = e->cap ? 2 * e->cap : 4;
			struct citem **v = realloc(e->v, cap * sizeof *v);
			if (!v) {
				rc = -1;
				if (e->n == 0) { /* just made: take it out */
					*islot_of(i, e->idx, e->value,
						  e->hash) = e->hnext;
					i->n_entries--;
					free(e);
				}
				continue;
			}
			e->v = v;
			e->cap = cap;
		}
		m->e = e;
		m->pos = e->n;
		e->v[e->n++] = c;
	}
	if (rc)
		i->idx_lost = 1;
	return rc;
}

/* Take c out of every entry it is in, freeing entries left empty. Under
   i->mu. */
static void unlink_item(inf *i, struct citem *c)
{
	for (size_t k = 0; k < c->n_memb; k++) {
		struct imemb *m = &c->memb[k];
		struct ientry *e = m->e;
		if (!e)
			continue;
		LP_ASSERT(m->pos < e->n && e->v[m->pos] == c);
		struct citem *last = e->v[--e->n];
		if (last != c) {
			/* Move the last item into c's place and tell it. */
			e->v[m->pos] = last;
			size_t j = 0;
			while (j < last->n_memb && last->memb[j].e != e)
				j++;
			LP_ASSERT(j < last->n_memb);
			last->memb[j].pos = m->pos;
		}
		m->e = NULL;
		if (e->n == 0) {
			struct ientry **pp =
			    islot_of(i, e->idx, e->value, e->hash);
			LP_ASSERT(*pp == e);
			*pp = e->hnext;
			i->n_entries--;
			free(e->v);
			free(e);
		}
	}
	if (i->n_ibuckets > MIN_BUCKETS && i->n_entries < i->n_ibuckets / 8)
		irehash(i, i->n_ibuckets / 4 < MIN_BUCKETS ? MIN_BUCKETS
							   : i->n_ibuckets / 4);
}

/* ---------------------------------------------------------------- cache
   changes: the table and the indexes together (invariant 5) */

/* Put c in the table in place of old (NULL: a new key), with its index
   values. Informer thread; takes i->mu. Returns -1 when an index lost c
   (no memory), else 0. */
static int cache_put(inf *i, struct citem *c, struct citem *old)
{
	pthread_mutex_lock(&i->mu);
	struct citem **pp = slot_of(i, c->obj.key, c->obj.key_len, c->hash);
	LP_ASSERT(*pp == old);
	if (old) {
		c->hnext = old->hnext;
		*pp = c;
	} else {
		c->hnext = NULL;
		*pp = c;
		if (++i->n > i->n_buckets)
			rehash(i, i->n_buckets * 2);
	}
	/* Link before unlinking, so a value both share keeps its entry. */
	int rc = link_item(i, c);
	if (old)
		unlink_item(i, old);
	pthread_mutex_unlock(&i->mu);
	return rc;
}

/* Take c out of the table and its indexes. Informer thread; takes i->mu. */
static void cache_del(inf *i, struct citem *c)
{
	pthread_mutex_lock(&i->mu);
	struct citem **pp = slot_of(i, c->obj.key, c->obj.key_len, c->hash);
	LP_ASSERT(*pp == c);
	*pp = c->hnext;
	i->n--;
	unlink_item(i, c);
	if (i->n_buckets > MIN_BUCKETS && i->n < i->n_buckets / 8)
		rehash(i, i->n_buckets / 4 < MIN_BUCKETS ? MIN_BUCKETS
							 : i->n_buckets / 4);
	pthread_mutex_unlock(&i->mu);
}

static struct citem *cache_find(inf *i, const void *key, size_t len)
{
	return *slot_of(i, key, len, ctl__siphash(i->seed, key, len));
}

/* ---------------------------------------------------------------- handlers */

static void call_add(inf *i, const struct citem *c)
{
	pthread_mutex_lock(&i->mu);
	i->st.adds++;
	pthread_mutex_unlock(&i->mu);
	if (i->h.on_add)
		i->h.on_add(i->h.ud, &c->obj);
}

static void call_update(inf *i, const struct citem *old, const struct citem *c)
{
	pthread_mutex_lock(&i->mu);
	i->st.updates++;
	pthread_mutex_unlock(&i->mu);
	if (i->h.on_update)
		i->h.on_update(i->h.ud, &old->obj, &c->obj);
}

static void call_delete(inf *i, const struct citem *old)
{
	pthread_mutex_lock(&i->mu);
	i->st.deletes++;
	pthread_mutex_unlock(&i->mu);
	if (i->h.on_delete)
		i->h.on_delete(i->h.ud, &old->obj);
}

/* The cache reflects rev now (invariant 2). */
static void set_rev(inf *i, int64_t rev)
{
	pthread_mutex_lock(&i->mu);
	if (rev > i->rev) {
		i->rev = rev;
		pthread_cond_broadcast(&i->cv);
	}
	pthread_mutex_unlock(&i->mu);
}

/* ---------------------------------------------------------------- list */

struct listing {
	inf *i;
	struct citem **v; /* in key order */
	size_t n, cap;
	lp_err err; /* sticky: no memory while copying */
};

static enum eng_take collect(void *ud, const struct eng_record *r)
{
	struct listing *L = ud;
	if (L->n == L->cap) {
		size_t cap = L->cap ? 2 * L->cap : 256;
		struct citem **v = realloc(L->v, cap * sizeof *v);
		if (!v) {
			L->err = LP_ERR(LP_E_NOMEM);
			return ENG_STOP;
		}
		L->v = v;
		L->cap = cap;
	}
	struct citem *c = citem_new(L->i, r);
	if (!c) {
		L->err = LP_ERR(LP_E_NOMEM);
		return ENG_STOP;
	}
	L->v[L->n++] = c;
	return ENG_TAKE;
}

static void listing_free(struct listing *L)
{
	for (size_t k = 0; k < L->n; k++)
		citem_free(L->v[k]);
	free(L->v);
	memset(L, 0, sizeof *L);
}

/*
 * List the prefix at one revision, a page per snapshot, into L (empty on
 * entry); *rev receives the revision. Errors: LP_E_COMPACTED (compacted
 * past the list's revision between pages: list again), LP_E_NOMEM, and the
 * engine's (LP_E_CLOSED, LP_E_READERSFULL, LP_E_IO).
 */
static lp_err list_all(inf *i, struct listing *L, int64_t *rev)
{
	int64_t at = 0;
	uint8_t from[ENG_KEY_MAX + 1];
	size_t from_len = 0;
	L->i = i;
	for (;;) {
		eng_rd *r = NULL;
		lp_err rc = eng_rd_begin(i->e, &r);
		if (rc)
			return rc;
		struct eng_range_req req = {
		    .prefix = i->plen ? i->prefix : NULL,
		    .prefix_len = i->plen,
		    .from = from_len ? from : NULL,
		    .from_len = from_len,
		    .at_rev = at,
		    .limit = i->page,
		};
		struct eng_range_res res;
		rc = eng_range(r, &req, collect, L, &res);
		eng_rd_end(r);
		if (rc == LP_OK && L->err)
			rc = L->err;
		if (rc)
			return rc;
		if (at == 0)
			at = res.rev;
		if (!res.more || L->n == 0)
			break;
		/* The next page starts just after the last key: the key with
		   a NUL appended is the least key greater than it. */
		const struct citem *last = L->v[L->n - 1];
		memcpy(from, last->obj.key, last->obj.key_len);
		from[last->obj.key_len] = 0;
		from_len = last->obj.key_len + 1;
	}
	*rev = at;
	return LP_OK;
}

/* Take a key the list did not see out of the cache, telling on_delete. */
static void drop(inf *i, struct citem *c)
{
	cache_del(i, c);
	call_delete(i, c);
	citem_free(c);
}

static struct citem *first_stale(inf *i, uint64_t gen)
{
	for (size_t b = 0; b < i->n_buckets; b++)
		for (struct citem *c = i->tab[b]; c; c = c->hnext)
			if (c->gen != gen)
				return c;
	LP_UNREACHABLE();
}

/* An item's index values are incomplete (no memory): the next list
   rebuilds every index. Informer thread. */
static void index_lost(inf *i)
{
	pthread_mutex_lock(&i->mu);
	i->idx_lost = 1;
	pthread_mutex_unlock(&i->mu);
}

/*
 * Make the cache equal to the listing, calling the handlers for the
 * differences (invariant 1), and the indexes with it: only new and
 * changed items are decoded and indexed, unless an index was lost, when
 * every item is (silently for the unchanged ones). Consumes L's items.
 */
static void replace(inf *i, struct listing *L, int64_t rev)
{
	uint64_t gen = ++i->gen;
	pthread_mutex_lock(&i->mu);
	int rebuild = i->idx_lost;
	i->idx_lost = 0;
	i->st.index_rebuilds += rebuild != 0;
	pthread_mutex_unlock(&i->mu);
	for (size_t k = 0; k < L->n; k++) {
		struct citem *c = L->v[k];
		L->v[k] = NULL;
		c->gen = gen;
		struct citem *old = cache_find(i, c->obj.key, c->obj.key_len);
		if (old && old->obj.mod_rev == c->obj.mod_rev && !rebuild) {
			old->gen = gen;
			citem_free(c);
			continue;
		}
		if (prepare(i, c) != LP_OK)
			index_lost(i); /* c goes in with what it has */
		cache_put(i, c, old);
		if (!old)
			call_add(i, c);
		else if (old->obj.mod_rev != c->obj.mod_rev)
			call_update(i, old, c);
		citem_free(old);
	}
	L->n = 0;
	/* What the list did not see is gone: deliver its last known state.
	   Collect first (the walk must not see the table change); with no
	   memory for the array, take one per walk. */
	size_t n_gone = 0;
	for (size_t b = 0; b < i->n_buckets; b++)
		for (struct citem *c = i->tab[b]; c; c = c->hnext)
			n_gone += c->gen != gen;
	struct citem **gone = n_gone ? malloc(n_gone * sizeof *gone) : NULL;
	if (gone) {
		size_t k = 0;
		for (size_t b = 0; b < i->n_buckets; b++)
			for (struct citem *c = i->tab[b]; c; c = c->hnext)
				if (c->gen != gen)
					gone[k++] = c;
		LP_ASSERT(k == n_gone);
		for (size_t j = 0; j < k; j++)
			drop(i, gone[j]);
		free(gone);
	} else {
		for (; n_gone; n_gone--)
			drop(i, first_stale(i, gen));
	}
	pthread_mutex_lock(&i->mu);
	i->st.lists++;
	/* Invariant 2: a list is at least as new as anything applied. */
	if (rev > i->rev)
		i->rev = rev;
	i->synced = 1;
	pthread_cond_broadcast(&i->cv);
	pthread_mutex_unlock(&i->mu);
}

/* ---------------------------------------------------------------- watch */

/* The committing thread, after each commit with events for us. While the
   informer thread pauses between batches (watch), it is not woken: it
   looks for events when the pause ends. */
static void on_ready(void *ud)
{
	inf *i = ud;
	pthread_mutex_lock(&i->wake_mu);
	i->ready = 1;
	int idle = i->idle;
	pthread_mutex_unlock(&i->wake_mu);
	/* After the unlock, so that the informer thread does not wake only to
	   block on wake_mu; i outlives the watch (eng_watch_close waits for
	   this callback). */
	if (idle)
		pthread_cond_signal(&i->wake_cv);
}

/* After a batch of events, let more gather for up to batch_ms before
   looking again, unless inf_wait_rev or inf_stop asks for the thread.
   A wake-up per commit cost, on a VM, more than the events it handled:
   at one connection a create's server CPU was a quarter lower with it
   gone. Controllers then see a change up to batch_ms later. */
static void pause_batch(inf *i)
{
	struct timespec dl = lp_mono_deadline((int)i->batch_ms);
	pthread_mutex_lock(&i->mu);
	i->st.pauses++;
	pthread_mutex_unlock(&i->mu);
	pthread_mutex_lock(&i->wake_mu);
	while (!i->urgent && !i->stop &&
	       pthread_cond_timedwait(&i->wake_cv, &i->wake_mu, &dl) !=
		   ETIMEDOUT) {
	}
	i->urgent = 0;
	pthread_mutex_unlock(&i->wake_mu);
}

static int stopping(inf *i)
{
	pthread_mutex_lock(&i->wake_mu);
	int s = i->stop;
	pthread_mutex_unlock(&i->wake_mu);
	return s;
}

/* Wait for the ready callback or a stop (timeout_ms < 0: no timeout).
   Returns 1 when stopping. */
static int wait_wake(inf *i, int timeout_ms)
{
	struct timespec dl = {0};
	if (timeout_ms >= 0)
		dl = lp_mono_deadline(timeout_ms);
	pthread_mutex_lock(&i->wake_mu);
	i->idle = 1;
	while (!i->ready && !i->stop) {
		if (timeout_ms < 0) {
			pthread_cond_wait(&i->wake_cv, &i->wake_mu);
		} else if (pthread_cond_timedwait(&i->wake_cv, &i->wake_mu,
						  &dl) == ETIMEDOUT) {
			break;
		}
	}
	i->idle = 0;
	int s = i->stop;
	pthread_mutex_unlock(&i->wake_mu);
	return s;
}

/* Apply one event to the cache and call its handler. */
static lp_err apply(inf *i, const eng_event *ev)
{
	const struct eng_record *r = &ev->rec;
	struct citem *old = cache_find(i, r->key, r->key_len);
	if (ev->type == ENG_EV_DEL) {
		/* A delete of a key we never saw cannot happen after a list
		   at a revision the watch starts from; ignore it. */
		if (!old)
			return LP_OK;
		cache_del(i, old);
		call_delete(i, old);
		citem_free(old);
		return LP_OK;
	}
	struct citem *c = citem_new(i, r);
	if (!c)
		return LP_ERR(LP_E_NOMEM);
	if (prepare(i, c) != LP_OK) {
		/* Nothing changed yet: the re-list brings this event. */
		citem_free(c);
		return LP_ERR(LP_E_NOMEM);
	}
	int lost = cache_put(i, c, old);
	if (old) {
		call_update(i, old, c);
		citem_free(old);
	} else {
		call_add(i, c);
	}
	/* The cache has the event, an index lacks it: list again, which
	   rebuilds the indexes. */
	return lost ? LP_ERR(LP_E_NOMEM) : LP_OK;
}

/*
 * Periodic resync: when due, on_update(obj, obj) for every cached object
 * (the informer thread alone changes the cache, so it walks it unlocked).
 * Returns how long to wait for the next one in ms (-1: no resync).
 */
static int resync_due(inf *i)
{
	if (!i->resync_ms)
		return -1;
	int64_t now = lp_mono_ms();
	if (!i->next_resync)
		i->next_resync = now + i->resync_ms;
	if (now >= i->next_resync) {
		for (size_t b = 0; b < i->n_buckets; b++)
			for (struct citem *c = i->tab[b]; c; c = c->hnext)
				call_update(i, c, c);
		pthread_mutex_lock(&i->mu);
		i->st.resyncs++;
		pthread_mutex_unlock(&i->mu);
		now = lp_mono_ms();
		i->next_resync = now + i->resync_ms;
	}
	return (int)(i->next_resync - now);
}

/*
 * Watch from rev until the watch ends. Returns LP_E_CLOSED when stopping
 * or the engine closed, else the error that ended the watch
 * (LP_E_OVERFLOW, LP_E_COMPACTED, LP_E_NOMEM, ...): list again.
 */
static lp_err watch(inf *i, int64_t rev)
{
	eng_watch *w = NULL;
	lp_err rc = eng_watch_open(i->e, i->plen ? i->prefix : NULL, i->plen,
				   rev, on_ready, i, &w);
	if (rc)
		return rc;
	bool batch = false; /* events applied since the last wait */
	for (;;) {
		pthread_mutex_lock(&i->wake_mu);
		i->ready = 0;
		int stop = i->stop;
		pthread_mutex_unlock(&i->wake_mu);
		if (stop) {
			rc = LP_E_CLOSED;
			break;
		}
		eng_event *ev = NULL;
		rc = eng_watch_next(w, &ev);
		if (rc == LP_OK && ev->rev <= rev) {
			/* Already in the list. The engine can hand these
			   out: a commit is visible to readers before its
			   events reach the ring, and a watch opened from a
			   revision in between gets that revision's events.
			   Applying one again could undo a newer state (a
			   stale delete of a key re-created later). */
			eng_event_unref(ev);
			continue;
		}
		if (rc == LP_OK) {
			rc = apply(i, ev);
			eng_event_unref(ev);
			pthread_mutex_lock(&i->mu);
			i->st.events++;
			pthread_mutex_unlock(&i->mu);
			if (rc)
				break;
			set_rev(i, eng_watch_progress(w));
			resync_due(i); /* also under a steady stream */
			batch = true;
			continue;
		}
		if (rc != LP_E_AGAIN)
			break;
		set_rev(i, eng_watch_progress(w));
		if (batch) {
			batch = false;
			pause_batch(i);
			continue;
		}
		if (wait_wake(i, resync_due(i))) {
			rc = LP_E_CLOSED;
			break;
		}
	}
	eng_watch_close(w);
	return rc;
}

/* ---------------------------------------------------------------- thread */

void inf_background_thread(const char *name)
{
	struct sched_param sp = {0};
	pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
	char buf[16];
	snprintf(buf, sizeof buf, "%s", name);
	pthread_setname_np(pthread_self(), buf);
}

static void *run(void *arg)
{
	inf *i = arg;
	inf_background_thread("informer");
	while (!stopping(i)) {
		struct listing L = {0};
		int64_t rev = 0;
		lp_err rc = list_all(i, &L, &rev);
		if (rc == LP_OK) {
			replace(i, &L, rev);
			pthread_mutex_lock(&i->mu);
			int lost = i->idx_lost;
			pthread_mutex_unlock(&i->mu);
			rc = lost ? LP_ERR(LP_E_NOMEM) : watch(i, rev);
		}
		listing_free(&L);
		if (rc == LP_E_CLOSED)
			break;
		pthread_mutex_lock(&i->mu);
		if (rc == LP_E_OVERFLOW)
			i->st.relist_overflow++;
		else if (rc == LP_E_COMPACTED)
			i->st.relist_compacted++;
		else
			i->st.relist_error++;
		pthread_mutex_unlock(&i->mu);
		if (rc == LP_E_OVERFLOW || rc == LP_E_COMPACTED)
			continue; /* the normal way to catch up: at once */
		lp_warn("informer %s: %s; listing again in %d ms", i->name,
			lp_errname(rc), BACKOFF_MS);
		pthread_mutex_lock(&i->wake_mu);
		i->ready = 0;
		pthread_mutex_unlock(&i->wake_mu);
		if (wait_wake(i, BACKOFF_MS))
			break;
	}
	pthread_mutex_lock(&i->mu);
	i->done = 1;
	pthread_cond_broadcast(&i->cv);
	pthread_mutex_unlock(&i->mu);
	return NULL;
}

/* ---------------------------------------------------------------- public */

static void check_inf(const inf *i)
{
	LP_ASSERT_CTX(i && i->magic == INF_MAGIC, "not a live informer");
}

lp_err inf_new(const struct inf_opts *o, inf **out)
{
	if (!o || !o->e || o->prefix_len > ENG_KEY_MAX ||
	    (o->prefix_len && !o->prefix))
		return LP_ERR(LP_E_INVAL);
	inf *i = calloc(1, sizeof *i);
	if (!i)
		return LP_ERR(LP_E_NOMEM);
	i->name = strdup(o->name ? o->name : "");
	i->prefix = malloc(o->prefix_len ? o->prefix_len : 1);
	i->tab = calloc(MIN_BUCKETS, sizeof *i->tab);
	i->itab = calloc(MIN_BUCKETS, sizeof *i->itab);
	if (!o->raw)
		i->idx[0] = (struct indexer){strdup("namespace"),
					     index_namespace, NULL};
	if (!i->name || !i->prefix || !i->tab || !i->itab ||
	    (!o->raw && !i->idx[0].name)) {
		free(i->idx[0].name);
		free(i->itab);
		free(i->tab);
		free(i->prefix);
		free(i->name);
		free(i);
		return LP_ERR(LP_E_NOMEM);
	}
	if (o->prefix_len)
		memcpy(i->prefix, o->prefix, o->prefix_len);
	i->plen = o->prefix_len;
	i->n_buckets = MIN_BUCKETS;
	i->n_ibuckets = MIN_BUCKETS;
	i->raw = o->raw != 0;
	i->whole = o->whole;
	i->whole_ud = o->whole_ud;
	i->eager = o->eager;
	i->eager_ud = o->eager_ud;
	i->n_idx = o->raw ? 0 : 1;
	i->e = o->e;
	i->h = o->handlers;
	i->page = o->list_page ? o->list_page : DEF_PAGE;
	i->resync_ms = o->resync_ms;
	i->batch_ms = o->batch_ms ? o->batch_ms : BATCH_MS;
	ctl__hash_seed(i->seed);
	pthread_mutex_init(&i->mu, NULL);
	pthread_cond_init(&i->cv, NULL);
	pthread_mutex_init(&i->wake_mu, NULL);
	lp_cond_init_mono(&i->wake_cv);
	i->magic = INF_MAGIC;
	*out = i;
	return LP_OK;
}

lp_err inf_start(inf *i)
{
	check_inf(i);
	if (i->started)
		return LP_ERR(LP_E_INVAL);
	if (pthread_create(&i->tid, NULL, run, i))
		return LP_ERR(LP_E_NOMEM);
	i->started = 1;
	return LP_OK;
}

void inf_stop(inf *i)
{
	check_inf(i);
	pthread_mutex_lock(&i->wake_mu);
	i->stop = 1;
	pthread_cond_broadcast(&i->wake_cv);
	pthread_mutex_unlock(&i->wake_mu);
	if (i->started && !i->joined) {
		pthread_join(i->tid, NULL);
		i->joined = 1;
	}
	pthread_mutex_lock(&i->mu);
	i->done = 1;
	pthread_cond_broadcast(&i->cv);
	pthread_mutex_unlock(&i->mu);
}

void inf_free(inf *i)
{
	if (!i)
		return;
	inf_stop(i);
	for (size_t b = 0; b < i->n_buckets; b++) {
		struct citem *c = i->tab[b];
		while (c) {
			struct citem *next = c->hnext;
			citem_free(c);
			c = next;
		}
	}
	free(i->tab);
	for (size_t b = 0; b < i->n_ibuckets; b++) {
		struct ientry *e = i->itab[b];
		while (e) {
			struct ientry *next = e->hnext;
			free(e->v);
			free(e);
			e = next;
		}
	}
	free(i->itab);
	for (unsigned x = 0; x < i->n_idx; x++)
		free(i->idx[x].name);
	pthread_cond_destroy(&i->wake_cv);
	pthread_mutex_destroy(&i->wake_mu);
	pthread_cond_destroy(&i->cv);
	pthread_mutex_destroy(&i->mu);
	free(i->prefix);
	free(i->name);
	i->magic = 0;
	free(i);
}

int inf_has_synced(inf *i)
{
	check_inf(i);
	pthread_mutex_lock(&i->mu);
	int s = i->synced;
	pthread_mutex_unlock(&i->mu);
	return s;
}

lp_err inf_wait_synced(inf *i)
{
	check_inf(i);
	pthread_mutex_lock(&i->mu);
	while (!i->synced && !i->done)
		pthread_cond_wait(&i->cv, &i->mu);
	lp_err rc = i->synced ? LP_OK : LP_E_CLOSED;
	pthread_mutex_unlock(&i->mu);
	return rc;
}

lp_err inf_wait_rev(inf *i, int64_t rev)
{
	check_inf(i);
	pthread_mutex_lock(&i->mu);
	bool behind = i->rev < rev && !i->done;
	pthread_mutex_unlock(&i->mu);
	if (behind) {
		/* end a pause between batches (never both locks at once) */
		pthread_mutex_lock(&i->wake_mu);
		i->urgent = 1;
		pthread_mutex_unlock(&i->wake_mu);
		pthread_cond_signal(&i->wake_cv);
	}
	pthread_mutex_lock(&i->mu);
	while (i->rev < rev && !i->done)
		pthread_cond_wait(&i->cv, &i->mu);
	lp_err rc = i->rev >= rev ? LP_OK : LP_E_CLOSED;
	pthread_mutex_unlock(&i->mu);
	return rc;
}

lp_err inf_get(inf *i, const void *key, size_t key_len, struct inf_item **out)
{
	check_inf(i);
	uint64_t h = ctl__siphash(i->seed, key, key_len);
	lp_err rc = LP_OK;
	pthread_mutex_lock(&i->mu);
	const struct citem *c = *slot_of(i, key, key_len, h);
	if (!c) {
		rc = LP_E_NOTFOUND;
		goto out;
	}
	size_t n = c->obj.key_len + c->obj.value_len + 1;
	struct inf_item *it = malloc(sizeof *it + n);
	if (!it) {
		rc = LP_ERR(LP_E_NOMEM);
		goto out;
	}
	uint8_t *d = (uint8_t *)(it + 1);
	memcpy(d, c->data, n);
	it->obj = c->obj;
	it->obj.key = d;
	it->obj.value = d + c->obj.key_len;
	inf_keep(&it->obj); /* the item's reference */
	bool lazy = c->lazy;
	pthread_mutex_unlock(&i->mu);
	if (lazy) {
		/* this copy's own tree: the cache's is the informer's to set */
		rc = decode(i, &it->obj, false, &it->obj.tree);
		it->obj.json = it->obj.tree ? it->obj.tree->json : NULL;
		if (rc) {
			free(it);
			return rc;
		}
	}
	*out = it;
	return LP_OK;
out:
	pthread_mutex_unlock(&i->mu);
	return rc;
}

lp_err inf_get_by_name(inf *i, const char *ns, const char *name,
		       struct inf_item **out)
{
	check_inf(i);
	char key[ENG_KEY_MAX + 1];
	int n = snprintf(key, sizeof key, "%.*s%s%s%s", (int)i->plen,
			 (const char *)i->prefix, ns ? ns : "",
			 ns && *ns ? "/" : "", name);
	if (n < 0 || (size_t)n > ENG_KEY_MAX)
		return LP_ERR(LP_E_INVAL);
	return inf_get(i, key, (size_t)n, out);
}

void inf_item_free(struct inf_item *it)
{
	if (!it)
		return;
	inf_unkeep(it->obj.tree);
	free(it);
}

size_t inf_list(inf *i, int (*fn)(void *ud, const struct inf_obj *obj),
		void *ud)
{
	check_inf(i);
	size_t n = 0;
	pthread_mutex_lock(&i->mu);
	for (size_t b = 0; b < i->n_buckets; b++) {
		for (const struct citem *c = i->tab[b]; c; c = c->hnext) {
			n++;
			if (fn(ud, &c->obj))
				goto out;
		}
	}
out:
	pthread_mutex_unlock(&i->mu);
	return n;
}

lp_err inf_add_indexer(inf *i, const char *name, inf_index_fn fn, void *ud,
		       unsigned *id)
{
	check_inf(i);
	if (i->started || i->raw || !name || !fn ||
	    i->n_idx == INF_MAX_INDEXERS || inf_indexer_find(i, name) >= 0)
		return LP_ERR(LP_E_INVAL);
	char *n = strdup(name);
	if (!n)
		return LP_ERR(LP_E_NOMEM);
	i->idx[i->n_idx] = (struct indexer){n, fn, ud};
	*id = i->n_idx++;
	return LP_OK;
}

int inf_indexer_find(inf *i, const char *name)
{
	check_inf(i);
	for (unsigned x = 0; x < i->n_idx; x++)
		if (strcmp(i->idx[x].name, name) == 0)
			return (int)x;
	return -1;
}

/* The entry of (indexer, value), or NULL. Under i->mu. */
static const struct ientry *ientry_find(inf *i, unsigned indexer,
					const char *value)
{
	if (indexer >= i->n_idx || !value)
		return NULL;
	return *islot_of(i, indexer, value, value_hash(i, indexer, value));
}

size_t inf_index(inf *i, unsigned indexer, const char *value,
		 int (*fn)(void *ud, const struct inf_obj *obj), void *ud)
{
	check_inf(i);
	size_t n = 0;
	pthread_mutex_lock(&i->mu);
	const struct ientry *e = ientry_find(i, indexer, value);
	for (size_t k = 0; e && k < e->n; k++) {
		n++;
		if (fn(ud, &e->v[k]->obj))
			break;
	}
	pthread_mutex_unlock(&i->mu);
	return n;
}

size_t inf_by_namespace(inf *i, const char *ns,
			int (*fn)(void *ud, const struct inf_obj *obj),
			void *ud)
{
	return inf_index(i, INF_IDX_NAMESPACE, ns, fn, ud);
}

size_t inf_index_count(inf *i, unsigned indexer, const char *value)
{
	check_inf(i);
	pthread_mutex_lock(&i->mu);
	const struct ientry *e = ientry_find(i, indexer, value);
	size_t n = e ? e->n : 0;
	pthread_mutex_unlock(&i->mu);
	return n;
}

size_t inf_index_values(inf *i, unsigned indexer,
			int (*fn)(void *ud, const char *value, size_t n),
			void *ud)
{
	check_inf(i);
	size_t n = 0;
	pthread_mutex_lock(&i->mu);
	for (size_t b = 0; b < i->n_ibuckets; b++) {
		for (const struct ientry *e = i->itab[b]; e; e = e->hnext) {
			if (e->idx != indexer)
				continue;
			n++;
			if (fn(ud, e->value, e->n))
				goto out;
		}
	}
out:
	pthread_mutex_unlock(&i->mu);
	return n;
}

void inf_stats(inf *i, struct inf_stats *out)
{
	check_inf(i);
	pthread_mutex_lock(&i->mu);
	*out = i->st;
	out->rev = i->rev;
	out->objects = i->n;
	out->index_values = i->n_entries;
	pthread_mutex_unlock(&i->mu);
}
