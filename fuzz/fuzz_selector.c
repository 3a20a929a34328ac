/*
 * fuzz_selector.c -- label and field selectors (server/selector.h): parse
 * what a client may send as labelSelector and fieldSelector, and match the
 * results against objects built from the same input.
 *
 * Input: NUL-separated parts
 *   label selector A \0 label selector B \0 field selector A \0
 *   field selector B \0 key \0 value \0 key \0 value ...
 * The key/value pairs are both the object's labels (those jansson can
 * hold: UTF-8 keys and values) and its fields (as srv_fsel_match reads
 * them; the first pair of a name wins).
 *
 * Invariants:
 *   1. Parsing succeeds, or fails with LP_E_BADREQUEST and a message that
 *      is not empty and is valid UTF-8 (it goes into a JSON Status).
 *   2. Selectors are conjunctions: when A and B both parse to non-empty
 *      selectors, "A,B" parses too and matches exactly the objects that
 *      both A and B match. An empty selector matches everything.
 *   3. A field selector requiring field f to equal v (srv_fsel_exact)
 *      matches only objects whose f is v; it lists exactly as many
 *      fields as it has terms.
 */
#include <jansson.h>
#include <stdbool.h>

#include "fuzz.h"
#include "selector.h"

#define MAX_PARTS 64

struct input {
	const char *part[MAX_PARTS];
	size_t n;
};

static const char *get_field(void *ud, const char *field)
{
	const struct input *in = ud;
	for (size_t i = 4; i + 1 < in->n; i += 2)
		if (strcmp(in->part[i], field) == 0)
			return in->part[i + 1];
	return NULL;
}

static void check_err(lp_err rc, const struct srv_error *err,
		      const char *what)
{
	FUZZ_CHECK(rc == LP_E_BADREQUEST, "%s gave %s", what, lp_errname(rc));
	FUZZ_CHECK(err->code == rc && err->message[0],
		   "%s failed without a message", what);
	json_t *probe = json_string(err->message);
	FUZZ_CHECK(probe, "%s: the message is not UTF-8", what);
	json_decref(probe);
}

static char *join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = malloc(la + lb + 2);
	if (s) {
		memcpy(s, a, la);
		s[la] = ',';
		memcpy(s + la + 1, b, lb + 1);
	}
	return s;
}

static void labels_case(const char *a, const char *b, const json_t *labels)
{
	struct srv_error err = {0};
	srv_lsel *sa = NULL, *sb = NULL, *sab = NULL;
	lp_err rc = srv_lsel_parse(a, &sa, &err);
	if (rc) {
		check_err(rc, &err, "srv_lsel_parse");
		FUZZ_CHECK(!sa, "a failed parse wrote its output");
		return;
	}
	bool ma = srv_lsel_match(sa, labels);
	if (srv_lsel_empty(sa))
		FUZZ_CHECK(ma && srv_lsel_match(sa, NULL),
			   "an empty label selector refused an object");
	srv_error_clear(&err);
	rc = srv_lsel_parse(b, &sb, &err);
	if (rc) {
		check_err(rc, &err, "srv_lsel_parse");
		goto out;
	}
	if (srv_lsel_empty(sa) || srv_lsel_empty(sb))
		goto out;
	char *ab = join(a, b);
	if (!ab)
		goto out;
	srv_error_clear(&err);
	rc = srv_lsel_parse(ab, &sab, &err);
	FUZZ_CHECK(rc == LP_OK, "\"%s\" and \"%s\" parse, \"%s\" gives %s",
		   a, b, ab, err.message);
	bool mb = srv_lsel_match(sb, labels);
	FUZZ_CHECK(srv_lsel_match(sab, labels) == (ma && mb),
		   "\"%s\" matches differently from \"%s\" and \"%s\"", ab, a,
		   b);
	FUZZ_CHECK(srv_lsel_match(sab, NULL) ==
			   (srv_lsel_match(sa, NULL) && srv_lsel_match(sb, NULL)),
		   "\"%s\" on no labels", ab);
	free(ab);
out:
	srv_lsel_free(sab);
	srv_lsel_free(sb);
	srv_lsel_free(sa);
}

/* Invariant 3 for one parsed field selector. */
static void fsel_props(const srv_fsel *s, struct input *in)
{
	size_t n = srv_fsel_count(s);
	bool m = srv_fsel_match(s, get_field, in);
	FUZZ_CHECK(srv_fsel_field(s, n) == NULL, "a field past the count");
	if (n == 0)
		FUZZ_CHECK(srv_fsel_empty(s) && m,
			   "an empty field selector refused an object");
	for (size_t i = 0; i < n; i++) {
		const char *f = srv_fsel_field(s, i);
		FUZZ_CHECK(f, "field %zu of %zu is missing", i, n);
		const char *x = srv_fsel_exact(s, f);
		if (x && m) {
			const char *v = get_field(in, f);
			FUZZ_CHECK(strcmp(v ? v : "", x) == 0,
				   "%s must be \"%s\" but \"%s\" matched", f,
				   x, v ? v : "");
		}
	}
}

static void fields_case(struct input *in)
{
	const char *a = in->part[2], *b = in->part[3];
	struct srv_error err = {0};
	srv_fsel *sa = NULL, *sb = NULL, *sab = NULL;
	lp_err rc = srv_fsel_parse(a, &sa, &err);
	if (rc) {
		check_err(rc, &err, "srv_fsel_parse");
		FUZZ_CHECK(!sa, "a failed parse wrote its output");
		return;
	}
	fsel_props(sa, in);
	srv_error_clear(&err);
	rc = srv_fsel_parse(b, &sb, &err);
	if (rc) {
		check_err(rc, &err, "srv_fsel_parse");
		goto out;
	}
	if (srv_fsel_empty(sa) || srv_fsel_empty(sb))
		goto out;
	char *ab = join(a, b);
	if (!ab)
		goto out;
	srv_error_clear(&err);
	rc = srv_fsel_parse(ab, &sab, &err);
	FUZZ_CHECK(rc == LP_OK, "\"%s\" and \"%s\" parse, \"%s\" gives %s",
		   a, b, ab, err.message);
	fsel_props(sab, in);
	FUZZ_CHECK(srv_fsel_count(sab) ==
			   srv_fsel_count(sa) + srv_fsel_count(sb),
		   "\"%s\" has a different number of terms", ab);
	bool m = srv_fsel_match(sab, get_field, in);
	FUZZ_CHECK(m == (srv_fsel_match(sa, get_field, in) &&
			 srv_fsel_match(sb, get_field, in)),
		   "\"%s\" matches differently from \"%s\" and \"%s\"", ab, a,
		   b);
	free(ab);
out:
	srv_fsel_free(sab);
	srv_fsel_free(sb);
	srv_fsel_free(sa);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_strndup(data, size);
	if (!buf)
		return 0;
	struct input in = {.n = 0};
	for (size_t i = 0; i < MAX_PARTS; i++)
		in.part[i] = "";
	for (size_t off = 0; in.n < MAX_PARTS && off <= size;) {
		in.part[in.n++] = buf + off;
		off += strlen(buf + off) + 1;
	}
	json_t *labels = json_object();
	for (size_t i = 4; labels && i + 1 < in.n; i += 2)
		if (!json_object_get(labels, in.part[i])) {
			json_t *v = json_string(in.part[i + 1]);
			if (v) /* a key that is not UTF-8 is refused */
				json_object_set_new(labels, in.part[i], v);
		}
	if (labels) {
		labels_case(in.part[0], in.part[1], labels);
		fields_case(&in);
		json_decref(labels);
	}
	free(buf);
	return 0;
}
