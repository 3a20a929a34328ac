/*
 * fuzz_pb.c -- Kubernetes protobuf request bodies (server/pb.h
 * srv_pb_decode): the 4-byte magic, runtime.Unknown, and each built-in
 * kind's message, on arbitrary bytes.
 *
 * Each input is decoded three times: with no expected kind, expecting
 * DeleteOptions (a body with an empty typeMeta) and expecting ConfigMap.
 *
 * Invariants (beyond "no crash, no leak"):
 *   1. The result is LP_OK, LP_E_BADREQUEST, LP_E_UNSUPPORTEDMEDIA or
 *      LP_E_NOMEM; a failure has a message that is valid UTF-8 and leaves
 *      *out untouched.
 *   2. A decoded body is a JSON object that jansson can encode (so every
 *      string in it is valid UTF-8 and every number finite), whose kind
 *      and apiVersion, when present, are strings.
 *   3. Decoding does not depend on the expected kind when typeMeta names
 *      one: if two decodes both succeed and the output has a kind, they
 *      give the same object.
 */
#include <jansson.h>
#include <stdbool.h>

#include "fuzz.h"
#include "pb.h"

static json_t untouched_;

static json_t *decode(const uint8_t *data, size_t size, const char *kind)
{
	struct srv_error err = {0};
	json_t *out = &untouched_;
	lp_err rc = srv_pb_decode(data, size, kind, &out, &err);
	FUZZ_CHECK(rc == LP_OK || rc == LP_E_BADREQUEST ||
			   rc == LP_E_UNSUPPORTEDMEDIA || rc == LP_E_NOMEM,
		   "srv_pb_decode gave %s", lp_errname(rc));
	if (rc) {
		FUZZ_CHECK(out == &untouched_, "a failed decode wrote out");
		json_t *m = json_string(err.message);
		FUZZ_CHECK(m && err.message[0],
			   "a failed decode has no UTF-8 message");
		json_decref(m);
		return NULL;
	}
	FUZZ_CHECK(json_is_object(out), "a decoded body is not an object");
	char *txt = json_dumps(out, JSON_COMPACT);
	FUZZ_CHECK(txt, "a decoded body cannot be encoded as JSON");
	free(txt);
	const json_t *k = json_object_get(out, "kind");
	const json_t *av = json_object_get(out, "apiVersion");
	FUZZ_CHECK(!k || json_is_string(k), "kind is not a string");
	FUZZ_CHECK(!av || json_is_string(av), "apiVersion is not a string");
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *a = decode(data, size, NULL);
	json_t *b = decode(data, size, "DeleteOptions");
	json_t *c = decode(data, size, "ConfigMap");
	json_t *with_kind = a && json_object_get(a, "kind") ? a : NULL;
	if (with_kind && b)
		FUZZ_CHECK(json_equal(a, b), "the expected kind changed a "
					     "body that names its kind");
	if (with_kind && c)
		FUZZ_CHECK(json_equal(a, c), "the expected kind changed a "
					     "body that names its kind");
	json_decref(a);
	json_decref(b);
	json_decref(c);
	return 0;
}
