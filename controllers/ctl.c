/*
 * ctl.c -- controllers and the manager that feeds them from one shared
 * informer over the whole store (ctl.h).
 */
#include "ctl.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lapis/log.h"
#include "registry/object.h"
#include "registry/registry.h"
#include "registry/store.h"
#include "workqueue.h"

#define NS_PER_MS 1000000LL

extern const struct ctl_def ctl_namespace;     /* nsctl.c */
extern const struct ctl_def ctl_gc;	       /* gc.c */
extern const struct ctl_def ctl_crd_finalizer; /* crdctl.c */
extern const struct ctl_def ctl_crd_naming;    /* crdnaming.c */
extern const struct ctl_def ctl_event_ttl_def; /* eventttl.c */

const struct ctl_def *const ctl_builtin[] = {
    &ctl_namespace,	&ctl_gc, &ctl_crd_finalizer, &ctl_crd_naming,
    &ctl_event_ttl_def, NULL};

struct ctl {
	const struct ctl_def *def;
	void *ud;
	struct ctl_mgr *m;
	wq *q;
	pthread_t *threads;
	unsigned n_threads;
};

struct ctl_mgr {
	struct ctl_store store;
	inf *informer;
	ctl *c;
	size_t n;
	uint32_t mask; /* the controllers made, as ctl_parse_enabled gives */
	bool started, stopped;
};

/* ------------------------------------------------------------ helpers */

lp_err ctl_read(const struct ctl_store *s, const char *key, struct reg_obj *o)
{
	struct reg_key k = {.len = strlen(key)};
	if (k.len > ENG_KEY_MAX)
		return LP_E_NOTFOUND;
	memcpy(k.bytes, key, k.len + 1);
	lp_err rc = reg_get(s->e, &k, o);
	return rc ? rc : reg_obj_decode(o);
}

const char *ctl_meta_str(const json_t *obj, const char *k)
{
	return json_string_value(
	    json_object_get(json_object_get(obj, "metadata"), k));
}

bool ctl_has_finalizer(const json_t *obj, const char *f)
{
	return reg_strings_has(
	    json_object_get(json_object_get(obj, "metadata"), "finalizers"), f);
}

bool ctl_drop_finalizer(json_t *obj, const char *f)
{
	json_t *m = json_object_get(obj, "metadata");
	json_t *fs = json_object_get(m, "finalizers");
	if (!reg_strings_drop(fs, f))
		return false;
	/* kube's controllers patch; Go's encoding then leaves out the
	   emptied list (omitempty), as kube stores it */
	if (json_array_size(fs) == 0)
		json_object_del(m, "finalizers");
	return true;
}

bool ctl_set_condition(json_t *obj, const struct ctl_cond *c)
{
	return reg_set_condition(obj, c->type, c->status, c->reason,
				 c->message);
}

/* ------------------------------------------------------------ events */

/* The informer decodes each state once, for every controller: as it
   arrives, or here when no index needed it (decode_now). */
json_t *ctl_ev_old(struct ctl_ev *ev)
{
	return ev->old ? inf_json(ev->inf, ev->old) : NULL;
}

json_t *ctl_ev_cur(struct ctl_ev *ev)
{
	return ev->cur ? inf_json(ev->inf, ev->cur) : NULL;
}

json_t *ctl_ev_obj(struct ctl_ev *ev)
{
	return ev->type == CTL_DELETE ? ctl_ev_old(ev) : ctl_ev_cur(ev);
}

static bool obj_mentions(const struct inf_obj *o, const char *s)
{
	return o && memmem(o->value, o->value_len, s, strlen(s));
}

bool ctl_ev_mentions(const struct ctl_ev *ev, const char *s)
{
	return obj_mentions(ev->old, s) || obj_mentions(ev->cur, s);
}

static void dispatch(ctl_mgr *m, enum ctl_ev_type type,
		     const struct inf_obj *old, const struct inf_obj *cur)
{
	const struct inf_obj *o = cur ? cur : old;
	char key[ENG_KEY_MAX + 1];
	if (o->key_len > ENG_KEY_MAX)
		return;
	memcpy(key, o->key, o->key_len);
	key[o->key_len] = '\0';
	struct ctl_ev ev = {.type = type,
			    .key = key,
			    .old = old,
			    .cur = cur,
			    .inf = m->informer};
	for (size_t i = 0; i < m->n; i++)
		m->c[i].def->observe(m->c[i].ud, &m->c[i], &ev);
}

static void on_add(void *ud, const struct inf_obj *obj)
{
	dispatch(ud, CTL_ADD, NULL, obj);
}

static void on_update(void *ud, const struct inf_obj *old,
		      const struct inf_obj *cur)
{
	dispatch(ud, CTL_UPDATE, old, cur);
}

static void on_delete(void *ud, const struct inf_obj *last)
{
	dispatch(ud, CTL_DELETE, last, NULL);
}

/* ------------------------------------------------------------ controllers */

void ctl_add(ctl *c, const char *key)
{
	if (wq_add(c->q, key) != LP_OK)
		lp_warn("%s: cannot queue %s: out of memory", c->def->name,
			key);
}

void ctl_add_after(ctl *c, const char *key, int64_t delay_ms)
{
	if (wq_add_after(c->q, key, delay_ms * NS_PER_MS) != LP_OK)
		lp_warn("%s: cannot queue %s: out of memory", c->def->name,
			key);
}

int64_t ctl_now_ms(void)
{
	wq_clock *clk = wq_clock_real();
	return clk->now(clk) / NS_PER_MS;
}

const struct ctl_store *ctl_store_of(ctl *c)
{
	return &c->m->store;
}

lp_err ctl_wait_rev(ctl *c, int64_t rev)
{
	return inf_wait_rev(c->m->informer, rev);
}

size_t ctl_index(ctl *c, const char *indexer, const char *value,
		 int (*fn)(void *ud, const struct inf_obj *obj), void *ud)
{
	int x = inf_indexer_find(c->m->informer, indexer);
	if (x < 0)
		return 0;
	return inf_index(c->m->informer, (unsigned)x, value, fn, ud);
}

static void *worker(void *arg)
{
	ctl *c = arg;
	inf_background_thread("controller");
	if (inf_wait_synced(c->m->informer) != LP_OK)
		return NULL;
	const char *key;
	while (wq_get(c->q, &key) == LP_OK) {
		lp_err rc = c->def->sync(c->ud, c, key);
		if (rc == LP_OK) {
			wq_forget(c->q, key);
		} else {
			int64_t delay = 0;
			wq_add_rate_limited(c->q, key, &delay);
			lp_debug("%s: %s: %s; again in %lld ms", c->def->name,
				 key, lp_strerror(rc),
				 (long long)(delay / NS_PER_MS));
		}
		wq_done(c->q, key);
	}
	return NULL;
}

/* ------------------------------------------------------------ manager */

static const char *const gc_alias = "garbagecollector";

static int find_def(const char *name, size_t len)
{
	if (len == strlen(gc_alias) && !memcmp(name, gc_alias, len))
		name = "gc", len = 2;
	for (int i = 0; ctl_builtin[i]; i++) {
		const char *n = ctl_builtin[i]->name;
		if (strlen(n) == len && !memcmp(n, name, len))
			return i;
	}
	return -1;
}

/* "a, b, c": the names of the built-in controllers in mask, into buf. */
static void join_names(uint32_t mask, char *buf, size_t n)
{
	buf[0] = '\0';
	for (int i = 0; ctl_builtin[i]; i++) {
		if (!((mask >> i) & 1u))
			continue;
		strncat(buf, buf[0] ? ", " : "", n - strlen(buf) - 1);
		strncat(buf, ctl_builtin[i]->name, n - strlen(buf) - 1);
	}
}

lp_err ctl_parse_enabled(const char *spec, uint32_t *mask, char *msg,
			 size_t msg_n)
{
	uint32_t all = 0;
	for (int i = 0; ctl_builtin[i]; i++)
		all |= 1u << i;
	uint32_t m = 0;
	const char *p = spec ? spec : "";
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		bool neg = len > 0 && *p == '-';
		const char *name = p + neg;
		size_t nlen = len - neg;
		if (nlen == 1 && *name == '*') {
			m = neg ? 0 : all;
		} else if (nlen > 0 || neg) {
			int i = find_def(name, nlen);
			if (i < 0) {
				char known[256];
				join_names(all, known, sizeof known);
				snprintf(
				    msg, msg_n,
				    "unknown controller \"%.*s\" (known: %s)",
				    (int)(nlen > 64 ? 64 : nlen), name, known);
				return LP_E_INVAL;
			}
			if (neg)
				m &= ~(1u << i);
			else
				m |= 1u << i;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	*mask = m;
	return LP_OK;
}

/* Register every controller's indexers on the shared informer, each name
   once. Errors: LP_E_INVAL (one name, two functions; too many), NOMEM. */
static lp_err add_indexers(ctl_mgr *m)
{
	for (size_t k = 0; k < m->n; k++) {
		const struct ctl_indexer *x = m->c[k].def->indexers;
		for (; x && x->name; x++) {
			const struct ctl_indexer *seen = NULL;
			for (size_t j = 0; j < k && !seen; j++) {
				const struct ctl_indexer *y =
				    m->c[j].def->indexers;
				for (; y && y->name && !seen; y++)
					if (!strcmp(y->name, x->name))
						seen = y;
			}
			if (seen && seen->fn == x->fn)
				continue;
			unsigned id;
			lp_err rc = inf_add_indexer(m->informer, x->name, x->fn,
						    NULL, &id);
			if (rc) {
				lp_error("controllers: %s: cannot add index "
					 "%s: %s",
					 m->c[k].def->name, x->name,
					 lp_strerror(rc));
				return rc;
			}
		}
	}
	return LP_OK;
}

/* The informer decodes a value whole only when a running controller reads
   more than its metadata (ctl_def.whole_prefix). */
static bool needs_whole(void *ud, const uint8_t *key, size_t len)
{
	const ctl_mgr *m = ud;
	for (size_t i = 0; i < m->n; i++) {
		const char *p = m->c[i].def->whole_prefix;
		size_t pl = p ? strlen(p) : 0;
		if (p && len >= pl && memcmp(key, p, pl) == 0)
			return true;
	}
	return false;
}

/* The informer decodes a value as it arrives only when an index of a
   running controller may give it a value (ctl_indexer.needs); most writes
   (a ConfigMap with no owner) are then cached as bytes, and decoded only
   should a handler look at them. */
static bool decode_now(void *ud, const struct inf_obj *o)
{
	const ctl_mgr *m = ud;
	for (size_t i = 0; i < m->n; i++) {
		const struct ctl_indexer *x = m->c[i].def->indexers;
		for (; x && x->name; x++)
			if (!x->needs || memmem(o->value, o->value_len,
						x->needs, strlen(x->needs)))
				return true;
	}
	return false;
}

lp_err ctl_mgr_new(const struct ctl_store *s, uint32_t mask, ctl_mgr **out)
{
	ctl_mgr *m = calloc(1, sizeof *m);
	if (!m)
		return LP_E_NOMEM;
	m->store = *s;
	m->mask = mask;
	size_t n = 0;
	for (int i = 0; ctl_builtin[i]; i++)
		n += (mask >> i) & 1u;
	m->c = calloc(n ? n : 1, sizeof *m->c);
	if (!m->c) {
		free(m);
		return LP_E_NOMEM;
	}
	lp_err rc = LP_OK;
	for (int i = 0; ctl_builtin[i] && rc == LP_OK; i++) {
		if (!((mask >> i) & 1u))
			continue;
		ctl *c = &m->c[m->n];
		c->def = ctl_builtin[i];
		c->m = m;
		struct wq_opts qo = {.name = c->def->name};
		rc = wq_new(&qo, &c->q);
		if (rc == LP_OK && (rc = c->def->init(&m->store, &c->ud))) {
			wq_free(c->q);
			c->q = NULL;
		}
		if (rc == LP_OK)
			m->n++;
	}
	struct inf_opts io = {
	    .name = "controllers",
	    .e = s->e,
	    .prefix = REG_ROOT,
	    .prefix_len = strlen(REG_ROOT),
	    .handlers = {on_add, on_update, on_delete, m},
	    .whole = needs_whole,
	    .whole_ud = m,
	    .eager = decode_now,
	    .eager_ud = m,
	};
	if (rc == LP_OK && m->n > 0)
		rc = inf_new(&io, &m->informer);
	if (rc == LP_OK && m->n > 0)
		rc = add_indexers(m);
	if (rc != LP_OK) {
		ctl_mgr_free(m);
		return rc;
	}
	*out = m;
	return LP_OK;
}

lp_err ctl_mgr_start(ctl_mgr *m)
{
	if (m->n == 0 || m->started)
		return LP_OK;
	m->started = true;
	lp_err rc = inf_start(m->informer);
	for (size_t i = 0; i < m->n && rc == LP_OK; i++) {
		ctl *c = &m->c[i];
		c->threads = calloc(c->def->workers, sizeof *c->threads);
		if (!c->threads)
			return LP_E_NOMEM;
		for (unsigned t = 0; t < c->def->workers; t++) {
			if (pthread_create(&c->threads[t], NULL, worker, c))
				return LP_E_NOMEM;
			c->n_threads++;
		}
	}
	if (rc == LP_OK) {
		char names[256];
		join_names(m->mask, names, sizeof names);
		lp_info("controllers: %s", names);
	}
	return rc;
}

void ctl_mgr_stop(ctl_mgr *m)
{
	if (!m || m->stopped)
		return;
	m->stopped = true;
	if (m->informer)
		inf_stop(
		    m->informer); /* no observe after this; waiters leave */
	for (size_t i = 0; i < m->n; i++)
		wq_shutdown(m->c[i].q);
	for (size_t i = 0; i < m->n; i++) {
		for (unsigned t = 0; t < m->c[i].n_threads; t++)
			pthread_join(m->c[i].threads[t], NULL);
		m->c[i].n_threads = 0;
	}
}

void ctl_mgr_free(ctl_mgr *m)
{
	if (!m)
		return;
	ctl_mgr_stop(m);
	inf_free(m->informer);
	for (size_t i = 0; i < m->n; i++) {
		m->c[i].def->fini(m->c[i].ud);
		wq_free(m->c[i].q);
		free(m->c[i].threads);
	}
	free(m->c);
	free(m);
}
