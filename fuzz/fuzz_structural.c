/*
 * fuzz_structural.c -- kube's checks of a CRD version's schema
 * (srv_schema_check_crd, server/structural.c) on arbitrary schemas: the
 * structural rules, defaults, list and map types, and the rules' texts,
 * fieldPaths, compilation (CEL), result types and oldSelf placement.
 *
 * The first input byte's low bit says whether the version has a status
 * subresource; the rest is the openAPIV3Schema as JSON (anything else is
 * skipped).
 *
 * Invariants:
 *   1. No crash, leak or undefined behaviour.
 *   2. Every cause has a reason, a field under the base path and a
 *      message, all valid UTF-8 (they reach a Status as JSON strings).
 *   3. The check is deterministic: a second run gives the same causes.
 */
#include <jansson.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "registry/json.h"
#include "schema.h"
#include "srv_error.h"

static const char base[] = "spec.validation";

static void check_utf8(const char *s, const char *what)
{
	json_t *probe = json_string(s);
	FUZZ_CHECK(probe, "%s is not UTF-8", what);
	json_decref(probe);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	bool status = data[0] & 1;
	json_t *schema = reg_json_load((const char *)data + 1, size - 1, 0, NULL);
	if (!schema)
		return 0;
	/* bit 1: an update from a CRD with the same schema (its rules are
	   then stored expressions) */
	json_t *old = NULL;
	if (data[0] & 2)
		old = json_pack("{s:{s:[{s:{s:O}}]}}", "spec", "versions",
				"schema", "openAPIV3Schema", schema);
	static struct srv_error a, b;
	srv_error_clear(&a);
	srv_error_clear(&b);
	a.n_causes = b.n_causes = 0;
	srv_schema_check_crd(schema, base, status, old, &a);
	srv_schema_check_crd(schema, base, status, old, &b);
	json_decref(old);
	FUZZ_CHECK(a.n_causes == b.n_causes, "%d causes, then %d",
		   a.n_causes, b.n_causes);
	for (int i = 0; i < a.n_causes; i++) {
		struct srv_cause c = srv_cause_get(&a, i);
		FUZZ_CHECK(c.reason[0], "a cause without a reason");
		FUZZ_CHECK(!strncmp(c.field, base, strlen(base)),
			   "a cause outside the schema: %s", c.field);
		FUZZ_CHECK(c.message[0], "a cause without a message");
		check_utf8(c.field, "a cause's field");
		check_utf8(c.message, "a cause's message");
		FUZZ_CHECK(!strcmp(c.message, srv_cause_get(&b, i).message) &&
			       !strcmp(c.field, srv_cause_get(&b, i).field),
			   "cause %d differs between two runs", i);
	}
	json_decref(schema);
	return 0;
}
