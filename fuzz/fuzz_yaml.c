/*
 * fuzz_yaml.c -- YAML request bodies (server/yamljson.h): srv_yaml_to_json
 * and its strict variant on arbitrary bytes, and the YAML emitter on what
 * they produce.
 *
 * Invariants:
 *   1. Parsing succeeds, or fails with LP_E_BADREQUEST (or LP_E_NOMEM)
 *      and a message that is valid UTF-8, leaving *out untouched.
 *   2. Strict parsing refuses more, never differently: when it succeeds,
 *      the lenient parse succeeds with an equal document.
 *   3. Round trip: for a parsed document D, srv_json_to_yaml(D) parses
 *      back (strictly: the emitter never repeats a key) to a document
 *      equal to D, reals staying reals; and so does the YAML emitted from
 *      that document, whose keys were inserted in another order.
 *
 * Not an invariant: that emitting the read-back document gives the same
 * bytes. go-yaml v2's key order (keyList.Less, which the emitter follows)
 * is not transitive: "-0017x" < "-0xo" < "-4m" < "-0017x" is a cycle, so
 * the order of such keys depends on the order the sort meets them, in
 * kube as here (fuzz/regress/yaml-key-order-cycle).
 */
#include <jansson.h>
#include <stdbool.h>

#include "fuzz.h"
#include "yamljson.h"

static json_t untouched_;

typedef lp_err (*parse_fn)(const char *, size_t, json_t **,
			   struct srv_error *);

static json_t *parse(parse_fn fn, const char *buf, size_t len,
		     const char *what)
{
	struct srv_error err = {0};
	json_t *out = &untouched_;
	lp_err rc = fn(buf, len, &out, &err);
	FUZZ_CHECK(rc == LP_OK || rc == LP_E_BADREQUEST || rc == LP_E_NOMEM,
		   "%s gave %s", what, lp_errname(rc));
	if (rc) {
		FUZZ_CHECK(out == &untouched_, "a failed %s wrote out", what);
		json_t *m = json_string(err.message);
		FUZZ_CHECK(m && err.message[0], "%s failed without a UTF-8 "
						"message", what);
		json_decref(m);
		return NULL;
	}
	FUZZ_CHECK(out != NULL && out != &untouched_, "%s gave no document",
		   what);
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	json_t *d = parse(srv_yaml_to_json, buf, size, "srv_yaml_to_json");
	json_t *s = parse(srv_yaml_to_json_strict, buf, size,
			  "srv_yaml_to_json_strict");
	if (s)
		FUZZ_CHECK(d && json_equal(d, s),
			   "strict parsing gave another document");
	json_decref(s);
	if (!d)
		return 0;
	size_t ylen = 0;
	char *y = srv_json_to_yaml(d, &ylen);
	if (y) {
		FUZZ_CHECK(strlen(y) == ylen, "the YAML length is wrong");
		json_t *back = parse(srv_yaml_to_json_strict, y, ylen,
				     "parsing emitted YAML");
		FUZZ_CHECK(back, "the emitted YAML does not parse:\n%s", y);
		FUZZ_CHECK(json_equal(d, back),
			   "the emitted YAML reads back differently:\n%s", y);
		size_t y2len = 0;
		char *y2 = srv_json_to_yaml(back, &y2len);
		if (y2) {
			json_t *again = parse(srv_yaml_to_json_strict, y2,
					      y2len, "parsing emitted YAML");
			FUZZ_CHECK(again && json_equal(d, again),
				   "YAML emitted twice reads back "
				   "differently:\n%s", y2);
			json_decref(again);
			free(y2);
		}
		json_decref(back);
		free(y);
	}
	json_decref(d);
	return 0;
}
