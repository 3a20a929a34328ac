/*
 * fuzz_fields.c -- the field tables' walkers (server/fields.h) on
 * arbitrary JSON: srv_builtin_scan_json over the text, srv_builtin_check
 * (unknown fields and type errors) and srv_builtin_omitempty over the
 * tree, for built-in kinds and the CustomResourceDefinition, whose tables
 * recurse (JSONSchemaProps) and wrap schemas (JSONSchemaPropsOr*).
 *
 * The first input byte picks the kind; the rest is a JSON text.
 *
 * Invariants (beyond "no crash, no leak"):
 *   1. A type error, when set, is a non-empty UTF-8 text.
 *   2. The walk drops what it reports: a second walk over its result finds
 *      no unknown field.
 *   3. The text scan and the tree walk agree: with no duplicate key in the
 *      text (jansson keeps the last one) and fewer errors than the cap, they
 *      report the same unknown fields in the same order.
 *   4. Leaving out empty values is idempotent.
 */
#include <jansson.h>
#include <stdbool.h>

#include "fields.h"
#include "fuzz.h"
#include "registry/json.h"

static const struct {
	const char *kind, *av;
} kinds[] = {
    {"CustomResourceDefinition", "apiextensions.k8s.io/v1"},
    {"ConfigMap", "v1"},
    {"Service", "v1"},
    {"Lease", "coordination.k8s.io/v1"},
    {"Event", "events.k8s.io/v1"},
    {"Namespace", "v1"},
};

static bool has_duplicates(const struct srv_strict *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strncmp(s->errs[i], "duplicate field", 15))
			return true;
	return false;
}

static char *message(const struct srv_strict *s)
{
	char *m = srv_strict_message(s);
	return m ? m : strdup("");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t k = data[0] % (sizeof kinds / sizeof kinds[0]);
	const char *kind = kinds[k].kind, *av = kinds[k].av;
	const char *text = (const char *)data + 1;
	size_t len = size - 1;

	json_error_t je;
	json_t *obj = reg_json_load(text, len, 0, &je);
	if (!obj)
		return 0;
	struct srv_strict scan = {.mode = SRV_FV_STRICT};
	FUZZ_CHECK(srv_builtin_scan_json(kind, av, text, len, &scan),
		   "no table for %s", kind);

	struct srv_strict walk = {.mode = SRV_FV_STRICT};
	struct srv_typeerr te;
	srv_builtin_check(kind, av, obj, false, SRV_DEC_JSON, &walk, &te);
	if (te.set) {
		json_t *t = json_string(te.text);
		FUZZ_CHECK(t && te.text[0], "type error text not UTF-8: %s",
			   te.text);
		json_decref(t);
	}

	if (!has_duplicates(&scan) && scan.n < SRV_STRICT_MAX &&
	    walk.n < SRV_STRICT_MAX) {
		char *a = message(&scan), *b = message(&walk);
		FUZZ_CHECK(a && b && !strcmp(a, b), "scan %s, walk %s", a, b);
		free(a);
		free(b);
	}

	struct srv_strict again = {.mode = SRV_FV_STRICT};
	srv_builtin_check(kind, av, obj, false, SRV_DEC_JSON, &again, &te);
	FUZZ_CHECK(again.n == 0, "a second walk found %zu unknown fields",
		   again.n);

	json_t *copy = json_deep_copy(obj);
	srv_builtin_check(kind, av, copy, true, SRV_DEC_UNSTRUCTURED, NULL,
			  &te);
	json_decref(copy);

	srv_builtin_omitempty(kind, av, obj);
	json_t *once = json_deep_copy(obj);
	srv_builtin_omitempty(kind, av, obj);
	FUZZ_CHECK(json_equal(once, obj), "omitempty is not idempotent");
	json_decref(once);

	srv_strict_free(&scan);
	srv_strict_free(&walk);
	srv_strict_free(&again);
	json_decref(obj);
	return 0;
}
