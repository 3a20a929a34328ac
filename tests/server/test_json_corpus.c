/*
 * test_json_corpus.c -- server/registry/json.c over the real-world CRD
 * corpus (shared/testdata/crds, every file in its index.json, YAML turned
 * into JSON by server/yamljson.c): each document dumps to json_dumps'
 * bytes, and its JSON text, compact and indented, loads to jansson's tree,
 * on the fast path unless the document holds a real.
 */
#include <criterion/criterion.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "registry/json.h"
#include "srv_error.h"
#include "yamljson.h"

static char *corpus_dir(void)
{
	struct stat st;
	const char *fixed = "/work/shared/testdata/crds";
	if (stat(fixed, &st) == 0 && S_ISDIR(st.st_mode))
		return strdup(fixed);
	char src[4096];
	snprintf(src, sizeof src, "%s", __FILE__);
	char path[8192];
	snprintf(path, sizeof path, "%s/../../../shared/testdata/crds",
		 dirname(src));
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return strdup(path);
	return NULL;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return buf;
}

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
	cr_assert_str_eq(d1, d2, "%s: dumps differ", what);
	cr_assert_eq(n, strlen(d2), "%s", what);
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

Test(json_corpus, every_crd_and_object_loads_and_dumps_as_jansson)
{
	char *dir = corpus_dir();
	if (!dir)
		cr_skip("no shared/testdata/crds");
	char ipath[8192];
	snprintf(ipath, sizeof ipath, "%s/index.json", dir);
	json_error_t je;
	json_t *index = json_load_file(ipath, 0, &je);
	cr_assert_not_null(index, "%s: %s", ipath, je.text);
	size_t i;
	json_t *f;
	int n_docs = 0, n_fast = 0;
	json_array_foreach(json_object_get(index, "files"), i, f)
	{
		const char *file =
		    json_string_value(json_object_get(f, "file"));
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", dir, file);
		size_t len;
		char *buf = read_all(path, &len);
		/* Split on lines "---" as kubectl does. */
		char *start = buf, *p = buf;
		for (;;) {
			char *eol = strchr(p, '\n');
			size_t ll = eol ? (size_t)(eol - p) : strlen(p);
			bool sep = ll >= 3 && strncmp(p, "---", 3) == 0 &&
				   (ll == 3 || (ll == 4 && p[3] == '\r'));
			if (sep || !eol) {
				size_t dl =
				    (size_t)((sep ? p : p + ll) - start);
				struct srv_error err = {0};
				json_t *doc = NULL;
				if (srv_yaml_to_json(start, dl, &doc, &err) ==
					LP_OK &&
				    (json_is_object(doc) ||
				     json_is_array(doc))) {
					check_doc(doc, file, &n_fast);
					n_docs++;
				}
				json_decref(doc);
				if (!eol)
					break;
				start = eol + 1;
			}
			p = eol + 1;
		}
		free(buf);
	}
	cr_log_info("%d documents, %d on the fast path", n_docs, n_fast);
	cr_assert_gt(n_docs, 70);
	json_decref(index);
	free(dir);
}
