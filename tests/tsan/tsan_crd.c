/*
 * tsan_crd.c -- CRD churn against the serving map (server/crd.c): one
 * thread creates, updates and deletes CRDs in a loop through the same
 * strategy and after-write hook the HTTP handlers use, while reader threads
 * look custom resources up and use their descriptors (schema, columns,
 * scale, discovery list) as request handlers do.
 *
 * A plain executable, not Criterion (Criterion aborts under TSan). What it
 * proves: under TSan, no data race between readers and the updater (the
 * liburcu internals are suppressed with their reason in suppressions.txt;
 * the publish/consume points in crd.c are __atomic and visible to TSan);
 * under ASan, no reader touches a freed map or entry (a use after the grace
 * period is a use-after-free ASan reports). It also checks what readers
 * see: a found descriptor is always whole (kind, version, columns present),
 * readers did find the churned CRDs, and the final map is exactly what the
 * store holds.
 *
 * Randomized by LAPIS_SEED (printed); no timing thresholds.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/crd.h"
#include "../../server/registry/object.h"
#include "../../server/registry/registry.h"
#include "../../server/registry/store.h"
#include "../../server/resources.h"
#include "lapis/engine.h"
#include "support.h"

#define READERS 4
#define NAMES 6	  /* CRDs churned, all in one group */
#define ROUNDS 60 /* create, update, delete each name this often */

static eng *E;
static _Atomic int done;
static _Atomic int failures;
static _Atomic long found_count;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	if (atomic_fetch_add(&failures, 1) >= 20)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "tsan_crd: FAIL: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

static void crd_name(int i, char *out, size_t n)
{
	snprintf(out, n, "thing%ds.churn.example.com", i);
}

/* The CRD as a client would send it; version 2 adds a second served
   version and a printer column. */
static json_t *crd_json(int i, int variant)
{
	char name[128], plural[64], kind[64];
	crd_name(i, name, sizeof name);
	snprintf(plural, sizeof plural, "thing%ds", i);
	snprintf(kind, sizeof kind, "Thing%d", i);
	json_t *c = json_pack(
	    "{s:s,s:s,s:{s:s},s:{s:s,s:s,s:{s:s,s:s},s:[{s:s,s:b,s:b,s:{s:{},s:"
	    "{s:s,s:s}},"
	    "s:[{s:s,s:s,s:s}],s:{s:{s:s,s:{s:{s:s,s:{s:{s:s},s:{s:s}}},s:{s:s}"
	    "}}}}]}}",
	    "apiVersion", "apiextensions.k8s.io/v1", "kind",
	    "CustomResourceDefinition", "metadata", "name", name, "spec",
	    "group", "churn.example.com", "scope", "Namespaced", "names",
	    "plural", plural, "kind", kind, "versions", "name", "v1", "served",
	    1, "storage", 1, "subresources", "status", "scale",
	    "specReplicasPath", ".spec.replicas", "statusReplicasPath",
	    ".status.replicas", "additionalPrinterColumns", "name", "Replicas",
	    "type", "integer", "jsonPath", ".spec.replicas", "schema",
	    "openAPIV3Schema", "type", "object", "properties", "spec", "type",
	    "object", "properties", "replicas", "type", "integer", "mode",
	    "type", "string", "status", "type", "object");
	if (!c)
		return NULL;
	if (variant) {
		json_t *versions =
		    json_object_get(json_object_get(c, "spec"), "versions");
		json_t *v2 = json_deep_copy(json_array_get(versions, 0));
		json_object_set_new(v2, "name", json_string("v2"));
		json_object_set_new(v2, "storage", json_false());
		json_array_append_new(
		    json_object_get(v2, "additionalPrinterColumns"),
		    json_pack("{s:s,s:s,s:s}", "name", "Mode", "type", "string",
			      "jsonPath", ".spec.mode"));
		json_array_append_new(versions, v2);
	}
	return c;
}

static const struct srv_resource *crd_res(void)
{
	return srv_resource_find("apiextensions.k8s.io", "v1",
				 "customresourcedefinitions");
}

/* Create or update (through the CRD strategy) and run the after-write
   hook, as the handlers do after a committed write. */
static void put_crd(int i, int variant)
{
	char name[128];
	crd_name(i, name, sizeof name);
	struct reg_key k;
	reg_object_key("apiextensions.k8s.io", "customresourcedefinitions",
		       NULL, name, &k);
	struct reg_obj cur = {0};
	bool exists =
	    reg_get(E, &k, &cur) == LP_OK && reg_obj_decode(&cur) == LP_OK;
	json_t *obj = crd_json(i, variant);
	json_t *m = json_object_get(obj, "metadata");
	struct eng_cmp cmp = {ENG_CMP_ABSENT, 0};
	if (exists) {
		json_t *om = json_object_get(cur.obj, "metadata");
		json_object_set(m, "uid", json_object_get(om, "uid"));
		json_object_set(m, "creationTimestamp",
				json_object_get(om, "creationTimestamp"));
		cmp = (struct eng_cmp){ENG_CMP_MOD, cur.mod};
	} else {
		char uid[37], now[32];
		reg_uuid(uid);
		reg_now(now);
		json_object_set_new(m, "uid", json_string(uid));
		json_object_set_new(m, "creationTimestamp", json_string(now));
	}
	struct srv_error err = {0};
	if (srv_prep_crd(crd_res(), obj, exists ? cur.obj : NULL, &err))
		fail("prepare %s: %s", name, err.message);
	char *out = NULL;
	size_t ol;
	lp_err rc = reg_put(E, &k, obj, &cmp, false, NULL, &out, &ol, NULL);
	free(out);
	json_decref(obj);
	reg_obj_free(&cur);
	if (rc)
		fail("put %s: %s", name, lp_errname(rc));
	else
		srv_crd_after_write(E, name);
}

static void del_crd(int i)
{
	char name[128];
	crd_name(i, name, sizeof name);
	struct reg_key k;
	reg_object_key("apiextensions.k8s.io", "customresourcedefinitions",
		       NULL, name, &k);
	eng_txn *t;
	if (eng_txn_new(E, &t))
		return fail("txn");
	lp_err rc = eng_txn_del(t, k.bytes, k.len, NULL);
	if (!rc)
		rc = eng_txn_commit(t, NULL);
	eng_txn_free(t);
	if (rc)
		fail("delete %s: %s", name, lp_errname(rc));
	else
		srv_crd_after_write(E, name);
}

static void *writer(void *arg)
{
	uint64_t *seed = arg;
	for (int r = 0; r < ROUNDS; r++) {
		int i = (int)(ts_rand(seed) % NAMES);
		put_crd(i, 0);
		put_crd(i, 1);
		put_crd((i + 1) % NAMES, (int)(ts_rand(seed) % 2));
		if (ts_rand(seed) % 3)
			del_crd(i);
	}
	atomic_store(&done, 1);
	return NULL;
}

/* Use a descriptor as a request handler would. */
static void use(const struct srv_resource *r, int i)
{
	char kind[64];
	snprintf(kind, sizeof kind, "Thing%d", i);
	if (strcmp(r->kind, kind) || strcmp(r->group, "churn.example.com") ||
	    !r->custom)
		fail("descriptor of thing%d says kind %s group %s", i, r->kind,
		     r->group);
	size_t cols = 0;
	for (const struct srv_column *c = r->columns; c && c->name; c++)
		cols += strlen(c->name) + strlen(c->type);
	if (!cols)
		fail("descriptor of thing%d has no columns", i);
	if (!srv_cr_schema(r))
		fail("descriptor of thing%d has no schema", i);
	const json_t *sc = srv_cr_scale(r);
	if (!sc || !json_string_value(json_object_get(sc, "specReplicasPath")))
		fail("descriptor of thing%d has no scale", i);
	(void)srv_cr_needs_convert(r);
}

static void *reader(void *arg)
{
	uint64_t seed = *(uint64_t *)arg;
	while (!atomic_load(&done)) {
		int i = (int)(ts_rand(&seed) % NAMES);
		char plural[64];
		snprintf(plural, sizeof plural, "thing%ds", i);
		void *hold;
		const char *v = ts_rand(&seed) % 2 ? "v1" : "v2";
		const struct srv_resource *r =
		    srv_resource_lookup("churn.example.com", v, plural, &hold);
		if (r) {
			use(r, i);
			atomic_fetch_add(&found_count, 1);
		}
		srv_resources_release(hold);
		const struct srv_resource **all;
		size_t n = srv_resources_all(&all, &hold);
		size_t sum = 0;
		for (size_t k = 0; k < n; k++)
			sum +=
			    strlen(all[k]->resource) + strlen(all[k]->version);
		if (n && !sum)
			fail("empty descriptors in the list");
		free(all);
		srv_resources_release(hold);
	}
	return NULL;
}

int main(void)
{
	uint64_t seed = ts_seed("tsan_crd", 777);
	char *dir = ts_tmpdir("tsan-crd");
	struct eng_opts o = {.dir = dir, .nosync = 1, .initial_map = 1u << 20};
	lp_err rc = eng_open(&o, &E);
	if (rc) {
		fprintf(stderr, "tsan_crd: open: %s\n", lp_errname(rc));
		return 1;
	}
	srv_crds_refresh(E);
	pthread_t w, rd[READERS];
	uint64_t rseed[READERS];
	for (int i = 0; i < READERS; i++) {
		rseed[i] = seed + 1 + (uint64_t)i;
		pthread_create(&rd[i], NULL, reader, &rseed[i]);
	}
	pthread_create(&w, NULL, writer, &seed);
	pthread_join(w, NULL);
	for (int i = 0; i < READERS; i++)
		pthread_join(rd[i], NULL);
	/* The map now says what the store says. */
	for (int i = 0; i < NAMES; i++) {
		char name[128], plural[64];
		crd_name(i, name, sizeof name);
		snprintf(plural, sizeof plural, "thing%ds", i);
		struct reg_key k;
		reg_object_key("apiextensions.k8s.io",
			       "customresourcedefinitions", NULL, name, &k);
		struct reg_obj c = {0};
		bool stored = reg_get(E, &k, &c) == LP_OK;
		reg_obj_free(&c);
		void *hold;
		const struct srv_resource *r = srv_resource_lookup(
		    "churn.example.com", "v1", plural, &hold);
		if (stored != (r != NULL))
			fail("%s: stored %d but served %d", name, stored,
			     r != NULL);
		srv_resources_release(hold);
	}
	if (atomic_load(&found_count) == 0)
		fail("readers never found a churned CRD");
	printf("tsan_crd: %d rounds, %ld lookups found a CRD, %d failures\n",
	       ROUNDS, atomic_load(&found_count), atomic_load(&failures));
	srv_crds_shutdown();
	eng_close(E);
	ts_rmtree_free(dir);
	return atomic_load(&failures) ? 1 : 0;
}
