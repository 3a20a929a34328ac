/*
 * fuzz_managed.c -- metadata.managedFields and server-side apply
 * (server/managed.h) on arbitrary objects: client-sent entries and
 * FieldsV1 sets, applied configurations, keyed and set lists.
 *
 * Input: JSON text, an array [LIVE, CONFIG] (anything else is ignored).
 * LIVE is the stored object (an object, or anything else for "absent"),
 * CONFIG the client's object. Both run against the built-in ConfigMap and
 * Service descriptors (the latter has keyed ports and a status
 * subresource), applied as "fuzz" and as "kubectl" respectively, and
 * against a custom resource (a CRD stored once in a throwaway store, kept
 * for the process: a schema preserving unknown fields with set, map and
 * atomic lists, maps of objects, an atomic map, defaults, an int-or-string
 * and an embedded resource), as "fuzz" on the resource, its status and
 * its scale.
 *
 * Invariants:
 *   1. srv_mf_update(LIVE, CONFIG) succeeds or is LP_E_INVALID (client
 *      entries) or LP_E_NOMEM; on success every entry it leaves owns
 *      something and is an Apply or Update entry with a FieldsV1 object.
 *   2. An update that changes nothing records nothing: updating the result
 *      with itself leaves it as it is.
 *   3. srv_mf_apply(LIVE, CONFIG) succeeds, or is LP_E_CONFLICT without
 *      force, or LP_E_NOMEM; with force it never conflicts; a CONFIG whose
 *      metadata is not an object is LP_E_BADREQUEST; one with a set member
 *      or map key twice is kube's plain 500 (LP_E_IO without a reason).
 *   4. Apply is idempotent: applying CONFIG again with force to the result
 *      changes nothing, managedFields and times included (the second apply
 *      may fall in a later second: a time that moved is a failure). Not
 *      for a LIVE with an entry that owns nothing, which no store holds:
 *      such entries count as the object's managers (no
 *      "before-first-apply") but leave with the write, as in kube. Nor
 *      for a CONFIG holding a null: structured-merge-diff merges a null
 *      by the type (a scalar becomes null, a map keeps the live one), and
 *      kube 1.37 changed it again (TestApplyNullToObject); lapis drops a
 *      null member over a live one and copies one where there is none.
 *   5. Neither function modifies its inputs.
 */
#include <jansson.h>
#include <stdbool.h>
#include <string.h>

#include "crd.h"
#include "fuzz.h"
#include "lapis/engine.h"
#include "managed.h"
#include "registry/object.h"
#include "registry/registry.h"
#include "registry/store.h"
#include "resources.h"

/* The custom resource's CRD: what one() is run against besides the
   built-ins. */
static const char crd_text[] =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\","
    "\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"widgets.fz.example.com\","
    "\"uid\":\"0b6f3c2e-5d1a-4b7e-9c3f-2a1d4e5f6a7b\","
    "\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},"
    "\"spec\":{\"group\":\"fz.example.com\",\"scope\":\"Namespaced\","
    "\"names\":{\"plural\":\"widgets\",\"kind\":\"Widget\"},"
    "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,"
    "\"subresources\":{\"status\":{},\"scale\":{"
    "\"specReplicasPath\":\".spec.replicas\","
    "\"statusReplicasPath\":\".status.replicas\"}},"
    "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
    "\"x-kubernetes-preserve-unknown-fields\":true,\"properties\":{"
    "\"spec\":{\"type\":\"object\",\"properties\":{"
    "\"replicas\":{\"type\":\"integer\"},"
    "\"size\":{\"type\":\"integer\",\"default\":1},"
    "\"tags\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"set\","
    "\"items\":{\"type\":\"string\"}},"
    "\"ports\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
    "\"x-kubernetes-list-map-keys\":[\"name\",\"proto\"],"
    "\"items\":{\"type\":\"object\",\"required\":[\"name\"],"
    "\"properties\":{\"name\":{\"type\":\"string\"},"
    "\"proto\":{\"type\":\"string\",\"default\":\"TCP\"},"
    "\"port\":{\"type\":\"integer\"}}}},"
    "\"atomic\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
    "\"labels\":{\"type\":\"object\","
    "\"additionalProperties\":{\"type\":\"string\"}},"
    "\"groups\":{\"type\":\"object\",\"additionalProperties\":{"
    "\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true,"
    "\"properties\":{\"a\":{\"type\":\"string\"}}}},"
    "\"selector\":{\"type\":\"object\",\"x-kubernetes-map-type\":\"atomic\","
    "\"properties\":{\"matchLabels\":{\"type\":\"object\","
    "\"additionalProperties\":{\"type\":\"string\"}}}},"
    "\"free\":{\"type\":\"object\","
    "\"x-kubernetes-preserve-unknown-fields\":true,\"properties\":{"
    "\"inner\":{\"type\":\"object\",\"properties\":{"
    "\"x\":{\"type\":\"string\"}}}}},"
    "\"ios\":{\"x-kubernetes-int-or-string\":true},"
    "\"tmpl\":{\"type\":\"object\",\"x-kubernetes-embedded-resource\":true,"
    "\"x-kubernetes-preserve-unknown-fields\":true},"
    "\"nested\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
    "\"x-kubernetes-list-map-keys\":[\"k\"],\"items\":{\"type\":\"object\","
    "\"required\":[\"k\"],\"properties\":{\"k\":{\"type\":\"string\"},"
    "\"vals\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"set\","
    "\"items\":{\"type\":\"integer\"}}}}}}},"
    "\"status\":{\"type\":\"object\",\"properties\":{"
    "\"replicas\":{\"type\":\"integer\"},"
    "\"ready\":{\"type\":\"boolean\"}}}}}}}]}}";

/* Kept for the process on purpose: the store holding the CRD, and the
   custom resource's descriptor with the hold that keeps it valid. */
static eng *E;
static char dir_path[64];
static const struct srv_resource *cr;
static void *cr_hold;

static void close_store(void)
{
	srv_resources_release(cr_hold);
	cr = NULL;
	srv_crds_shutdown();
	fuzz_store_close(E, dir_path);
	E = NULL;
}

/* Store the CRD once, as the handlers do (its strategy, a put, the
   after-write hook), and look its resource up. */
static void open_once(void)
{
	if (E)
		return;
	E = fuzz_store_open("managed", dir_path, sizeof dir_path);
	atexit(close_store);
	srv_crds_refresh(E);
	json_error_t je;
	json_t *crd = json_loads(crd_text, 0, &je);
	FUZZ_CHECK(crd != NULL, "the CRD's JSON: %s", je.text);
	struct srv_error err = {0};
	FUZZ_CHECK(srv_prep_crd(srv_resource_find("apiextensions.k8s.io", "v1",
						  "customresourcedefinitions"),
				crd, NULL, &err) == LP_OK,
		   "the CRD: %s", err.message);
	struct reg_key k;
	reg_object_key("apiextensions.k8s.io", "customresourcedefinitions",
		       NULL, "widgets.fz.example.com", &k);
	struct eng_cmp cmp = {ENG_CMP_ABSENT, 0};
	char *out = NULL;
	size_t ol;
	FUZZ_CHECK(reg_put(E, &k, crd, &cmp, false, NULL, &out, &ol, NULL) ==
		       LP_OK,
		   "put the CRD");
	free(out);
	json_decref(crd);
	srv_crd_after_write(E, "widgets.fz.example.com");
	cr = srv_resource_lookup("fz.example.com", "v1", "widgets", &cr_hold);
	FUZZ_CHECK(cr != NULL, "the custom resource is served");
}

static void check_entries(const json_t *obj)
{
	const json_t *mf =
	    json_object_get(json_object_get(obj, "metadata"), "managedFields");
	if (!mf)
		return;
	FUZZ_CHECK(json_is_array(mf) && json_array_size(mf) > 0,
		   "managedFields is a non-empty array");
	size_t i;
	json_t *e;
	json_array_foreach(mf, i, e)
	{
		const char *op =
		    json_string_value(json_object_get(e, "operation"));
		FUZZ_CHECK(op &&
			       (!strcmp(op, "Apply") || !strcmp(op, "Update")),
			   "entry %zu operation", i);
		json_t *f = json_object_get(e, "fieldsV1");
		FUZZ_CHECK(json_is_object(f) && json_object_size(f) > 0,
			   "entry %zu owns something", i);
	}
}

/* Whether every managedFields entry of live owns something, as stored
   objects' entries do. */
static bool entries_own(const json_t *live)
{
	const json_t *mf =
	    json_object_get(json_object_get(live, "metadata"), "managedFields");
	size_t i;
	json_t *e;
	json_array_foreach(mf, i, e)
	{
		json_t *f = json_object_get(e, "fieldsV1");
		if (!json_is_object(f) || json_object_size(f) == 0)
			return false;
	}
	return true;
}

/* Whether v holds a null anywhere. */
static bool has_null(const json_t *v)
{
	if (json_is_null(v))
		return true;
	bool obj = json_is_object(v);
	size_t n = obj ? json_object_size(v) : json_array_size(v);
	void *it = obj ? json_object_iter((json_t *)v) : NULL;
	for (size_t i = 0; i < n; i++) {
		const json_t *c =
		    obj ? json_object_iter_value(it) : json_array_get(v, i);
		if (has_null(c))
			return true;
		if (obj)
			it = json_object_iter_next((json_t *)v, it);
	}
	return false;
}

static void one(const struct srv_resource *res, const char *subresource,
		const json_t *live, const json_t *config)
{
	/* "kubectl" takes over client-side apply's fields (managed.h) */
	struct srv_mf_op op = {
	    .res = res,
	    .manager = strcmp(res->resource, "services") ? "fuzz" : "kubectl",
	    .api_version = res->custom ? "fz.example.com/v1" : "v1",
	    .subresource = subresource};
	json_t *live_copy = live ? json_deep_copy(live) : NULL;
	json_t *cfg_copy = json_deep_copy(config);

	/* 1, 2 */
	json_t *next = json_deep_copy(config);
	struct srv_error err = {0};
	lp_err rc = srv_mf_update(&op, live, next, &err);
	FUZZ_CHECK(rc == LP_OK || rc == LP_E_INVALID || rc == LP_E_NOMEM,
		   "update: %d", rc);
	if (rc == LP_OK) {
		check_entries(next);
		json_t *again = json_deep_copy(next);
		memset(&err, 0, sizeof err);
		rc = srv_mf_update(&op, next, again, &err);
		FUZZ_CHECK(rc == LP_OK || rc == LP_E_NOMEM, "update again: %d",
			   rc);
		if (rc == LP_OK)
			FUZZ_CHECK(json_equal(next, again),
				   "a no-op records nothing");
		json_decref(again);
	}
	json_decref(next);

	/* 3, 4 */
	for (int force = 0; force < 2; force++) {
		json_t *out = NULL;
		memset(&err, 0, sizeof err);
		rc = srv_mf_apply(&op, live, config, force, &out, &err);
		/* what structured-merge-diff's typed conversion of the config
		   refuses (an unknown member, a wrong type, a set member or map
		   key twice, metadata that is no map): kube's plain 500 */
		bool typed =
		    rc == LP_E_IO && err.no_reason &&
		    !strncmp(err.message,
			     "failed to create typed patch object (", 37);
		FUZZ_CHECK(rc == LP_OK || rc == LP_E_NOMEM || typed ||
			       (rc == LP_E_CONFLICT && !force),
			   "apply (force %d): %d %s", force, rc, err.message);
		if (rc != LP_OK)
			continue;
		check_entries(out);
		json_t *out2 = NULL;
		memset(&err, 0, sizeof err);
		rc = srv_mf_apply(&op, out, config, true, &out2, &err);
		FUZZ_CHECK(rc == LP_OK || rc == LP_E_NOMEM, "apply again: %d",
			   rc);
		if (rc == LP_OK && (!live || entries_own(live)) &&
		    !has_null(config))
			FUZZ_CHECK(json_equal(out, out2),
				   "apply is idempotent");
		json_decref(out2);
		json_decref(out);
	}

	/* 5 */
	FUZZ_CHECK(!live || json_equal(live, live_copy), "live untouched");
	FUZZ_CHECK(json_equal(config, cfg_copy), "config untouched");
	json_decref(live_copy);
	json_decref(cfg_copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t je;
	json_t *in = json_loadb((const char *)data, size, 0, &je);
	if (!json_is_array(in) || json_array_size(in) != 2 ||
	    !json_is_object(json_array_get(in, 1))) {
		json_decref(in);
		return 0;
	}
	const json_t *live = json_array_get(in, 0);
	if (!json_is_object(live))
		live = NULL;
	const json_t *config = json_array_get(in, 1);
	one(srv_resource_find("", "v1", "configmaps"), NULL, live, config);
	one(srv_resource_find("", "v1", "services"), NULL, live, config);
	open_once();
	one(cr, NULL, live, config);
	one(cr, "status", live, config);
	one(cr, "scale", live, config);
	json_decref(in);
	return 0;
}
