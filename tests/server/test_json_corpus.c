/*
 * test_json_corpus.c -- server/registry/json.c over the real-world CRD
 * corpus (shared/testdata/crds, every file in its index.json, YAML turned
 * into JSON by server/yamljson.c): each document dumps to json_dumps'
 * bytes, and its JSON text, compact and indented, loads to jansson's tree,
 * on the fast path unless the document holds a real.
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "registry/json.h"
#include "srv_error.h"
#include "yamljson.h"

static bool has_real(const json_t *v)
{
	size_t i;
	const char *k;
	json_t *c;
	if (json_is_real(v))
		return true;
	if (json_is_array(v)) {
		json_array_foreach(v, i, c) if (has_real(c)) return true;
	} else if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k,
				    c) if (has_real(c)) return true;
	}
	return false;
}

/* text loads the same both ways; returns whether the fast path took it. */
static bool check_load(const char *text, const char *what)
{
	size_t n = strlen(text);
	static const size_t flags[] = {0, JSON_REJECT_DUPLICATES};
	for (size_t f = 0; f < 2; f++) {
		json_error_t e1, e2;
		json_t *a = reg_json_load(text, n, flags[f], &e1);
		json_t *b = json_loadb(text, n, flags[f], &e2);
		cr_assert(a && b, "%s", what);
		cr_assert(reg__json_identical(a, b), "%s: trees differ", what);
		cr_assert_eq(e1.position, e2.position, "%s", what);
		json_decref(a);
		json_decref(b);
	}
	json_t *fast = reg__json_load_fast(text, n, 0);
	json_decref(fast);
	return fast != NULL;
}

/* One document: dumps alike, loads alike; counts into *n_fast. */
static void check_doc(const json_t *doc, const char *what, int *n_fast)
{
	size_t n;
	char *d1 = reg_json_dump(doc, &n);
	char *d2 = json_dumps(doc, JSON_COMPACT);
	cr_assert(d1 && d2, "%s", what);
	cr_assert(reg__json_dump_matches(d1, d2), "%s: dumps differ", what);
	cr_assert(has_real(doc) || !strcmp(d1, d2), "%s", what);
	cr_assert_eq(n, strlen(d1), "%s", what);
	char *pretty = json_dumps(doc, JSON_INDENT(2));
	cr_assert_not_null(pretty);
	bool fast = check_load(d2, what);
	bool fast_pretty = check_load(pretty, what);
	cr_assert_eq(fast, fast_pretty, "%s", what);
	cr_assert(fast || has_real(doc),
		  "%s: the fast path gave up on a document without reals",
		  what);
	*n_fast += fast;
	free(d1);
	free(d2);
	free(pretty);
}

struct docs_seen {
	const char *file;
	int n_docs, n_fast;
};

static void check_each(json_t *doc, void *ud)
{
	struct docs_seen *seen = ud;
	if (!json_is_object(doc) && !json_is_array(doc))
		return;
	check_doc(doc, seen->file, &seen->n_fast);
	seen->n_docs++;
}

Test(json_corpus, every_crd_and_object_loads_and_dumps_as_jansson)
{
	char *dir = tcorp_dir();
	if (!dir)
		cr_skip("no shared/testdata/crds");
	json_t *index = tcorp_index(dir);
	size_t i;
	json_t *f;
	struct docs_seen seen = {0};
	json_array_foreach(json_object_get(index, "files"), i, f)
	{
		seen.file = json_string_value(json_object_get(f, "file"));
		tcorp_each_doc(dir, seen.file, check_each, &seen);
	}
	int n_docs = seen.n_docs, n_fast = seen.n_fast;
	cr_log_info("%d documents, %d on the fast path", n_docs, n_fast);
	cr_assert_gt(n_docs, 70);
	json_decref(index);
	free(dir);
}
