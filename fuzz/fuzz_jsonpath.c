/*
 * fuzz_jsonpath.c -- server/jsonpath.c: client-go JSONPath templates, as
 * CRD printer columns give them, parsed and walked over one document.
 *
 * Input: a template text (up to its first NUL), parsed as given and as a
 * column path ("{<input>}"), each walked over a fixed custom resource with
 * objects, lists, nulls, numbers and strings.
 *
 * Invariants:
 *   1. Parsing and walking end, with no leak or memory error (ASan), on
 *      any input; a refused template says why (the parser's message).
 *   2. The first value is NULL, a value inside the document, or the
 *      template's own value handed over in keep (then they are the same).
 *   3. Parsing is deterministic: a template parsed twice walks to the
 *      same first value.
 */
#include <stdbool.h>

#include "fuzz.h"
#include "jsonpath.h"

static const char doc_text[] =
    "{\"metadata\":{\"name\":\"n\",\"labels\":{\"a.b/c\":\"v\"}},"
    "\"spec\":{\"n\":3,\"f\":1.5,\"t\":true,\"z\":null,\"s\":\"str\","
    "\"items\":[{\"name\":\"i0\",\"n\":1},{\"name\":\"i1\",\"n\":5,"
    "\"sub\":[[1,2],[3]]},null,7,\"x\"],\"e\":[],\"o\":{}},"
    "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}";

/* Is v (non-NULL) somewhere inside d? */
static bool inside(const json_t *d, const json_t *v)
{
	if (d == v)
		return true;
	const char *k;
	json_t *c;
	size_t i;
	if (json_is_object(d)) {
		json_object_foreach((json_t *)d, k, c) if (inside(c, v)) return true;
	} else if (json_is_array(d)) {
		json_array_foreach(d, i, c) if (inside(c, v)) return true;
	}
	return false;
}

static void check(struct srv_jsonpath *p, const json_t *doc)
{
	json_t *keep = NULL, *keep2 = NULL;
	json_t *v = srv_jsonpath_eval_first(p, doc, &keep);
	json_t *v2 = srv_jsonpath_eval_first(p, doc, &keep2);
	FUZZ_CHECK(!v || (keep ? v == keep : inside(doc, v)),
		   "a first value neither in the document nor handed over");
	FUZZ_CHECK(!v == !v2 && (!v || keep || v == v2) &&
			   (!keep || json_equal(keep, keep2)),
		   "two walks of one template differ");
	json_decref(keep);
	json_decref(keep2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static json_t *doc;
	if (!doc)
		doc = json_loads(doc_text, 0, NULL); /* kept for every run */
	FUZZ_CHECK(doc, "the document does not load");
	char *text = fuzz_strndup(data, size);
	if (!text)
		return 0;
	char err[128];
	struct srv_jsonpath *p = srv_jsonpath_parse(text, err, sizeof err);
	FUZZ_CHECK(p || err[0], "a template refused without a message");
	if (p)
		check(p, doc);
	srv_jsonpath_free(p);
	p = srv_jsonpath_column(text);
	if (p)
		check(p, doc);
	srv_jsonpath_free(p);
	(void)srv_jsonpath_first(doc, text);
	free(text);
	return 0;
}
