/*
 * fuzz_json.c -- server/registry/json.c against jansson itself: the fast
 * loader and dumper must give exactly what json_loadb and json_dumps give.
 *
 * Input: any bytes, loaded whole under each flag set lapis uses (0,
 * JSON_REJECT_DUPLICATES, JSON_ALLOW_NUL, JSON_DECODE_ANY, all three, and
 * JSON_DISABLE_EOF_CHECK alone and with JSON_DECODE_ANY).
 *
 * Invariants:
 *   1. reg_json_load and json_loadb both fail or both succeed; on success
 *      the trees are identical (values, types, key order), on failure the
 *      errors are (text, source, line, column, position), and so is what
 *      a success leaves in the error. The exception is an integer beyond
 *      int64, which jansson refuses ("too big integer") and ours reads as
 *      a real: then a tree of ours holds the numbers jansson reads with
 *      JSON_DECODE_INT_AS_REAL (compared as doubles). The other is a NUL
 *      byte where the value is read, which jansson may skip between
 *      tokens and reg_json_load refuses ("invalid character '\x00'").
 *   2. Whenever the fast path alone (reg__json_load_fast) returns a tree,
 *      json_loadb accepts the input and builds the same tree.
 *   3. For every object or array loaded, reg_json_dump's bytes are
 *      json_dumps(JSON_COMPACT)'s but for reals, written in Go's form,
 *      which read back as the same numbers (reg__json_dump_matches); its
 *      length is its text's; both fail together.
 *   4. The dump of a tree loads back on the fast path unless the tree holds
 *      a real, a string with U+0000 or more than 64 levels (the give-ups a
 *      dump can produce), to the same tree.
 *   6. For every object loaded, reg_json_dump_ordered in kube's order
 *      (reg_canon_order) writes exactly reg_json_dump's text of the tree
 *      reordered by reg_canonical, or gives up only where that dump gives
 *      up or fails; its mark is the offset of metadata.resourceVersion's
 *      value, or SIZE_MAX where metadata has none.
 *   5. Go's syntax check (reg_go_json_check) accepts whatever
 *      reg_json_load accepts with JSON_DECODE_ANY (jansson is the stricter
 *      of the two: UTF-8, \u0000, depth), and always writes a message
 *      when it refuses.
 *   7. srv_json_indent (kube's pretty printing) takes any bytes; its
 *      length is its text's unless the input holds a NUL. The indented
 *      text of what reg_json_load reads (JSON_DECODE_ANY) reads back as
 *      the same tree, and indenting it again changes nothing.
 */
#include <stdbool.h>

#include "fuzz.h"
#include "pretty.h"
#include "registry/json.h"
#include "registry/object.h"

static const size_t flag_sets[] = {
    0,
    JSON_REJECT_DUPLICATES,
    JSON_ALLOW_NUL,
    JSON_DECODE_ANY,
    JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL | JSON_DECODE_ANY,
    JSON_DISABLE_EOF_CHECK,
    JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY,
};

/* Nesting the fast loader takes (MAX_DEPTH in json.c). */
#define FAST_DEPTH 64

static bool gives_up_on(const json_t *v, int depth)
{
	size_t i;
	const char *k;
	json_t *c;
	switch (json_typeof(v)) {
	case JSON_REAL:
		return true;
	case JSON_STRING:
		return memchr(json_string_value(v), 0, json_string_length(v));
	case JSON_ARRAY:
		if (depth >= FAST_DEPTH)
			return true;
		json_array_foreach(
		    v, i, c) if (gives_up_on(c, depth + 1)) return true;
		return false;
	case JSON_OBJECT:
		if (depth >= FAST_DEPTH)
			return true;
		json_object_foreach(
		    (json_t *)v, k,
		    c) if (gives_up_on(c, depth + 1)) return true;
		return false;
	case JSON_INTEGER:
	case JSON_TRUE:
	case JSON_FALSE:
	case JSON_NULL:
		return false;
	}
	return false;
}

static void check_dump(const json_t *v)
{
	size_t n = 0;
	char *d1 = reg_json_dump(v, &n);
	char *d2 = json_dumps(v, JSON_COMPACT);
	FUZZ_CHECK(!d1 == !d2, "dump: ours %s, jansson's %s",
		   d1 ? "text" : "NULL", d2 ? "text" : "NULL");
	if (d1) {
		FUZZ_CHECK(n == strlen(d1) && reg__json_dump_matches(d1, d2),
			   "dumps differ:\n  ours    %s\n  jansson %s", d1, d2);
		if (!gives_up_on(v, 0)) {
			json_t *back = reg__json_load_fast(d1, n, 0);
			FUZZ_CHECK(back, "the fast path gave up on a dump: %s",
				   d1);
			FUZZ_CHECK(reg__json_identical(back, v),
				   "dump reloads differently: %s", d1);
			json_decref(back);
		}
	}
	free(d1);
	free(d2);
}

/* Invariant 6. v is a tree loaded from text: no key holds a NUL byte, so
   json_deep_copy copies it whole. */
static void check_ordered(const json_t *v)
{
	json_t *c = json_deep_copy(v);
	FUZZ_CHECK(c, "no copy");
	reg_canonical(c);
	size_t n1 = 0, n2 = 0, mark = 0;
	char *want = reg_json_dump(c, &n1);
	char *got = reg_json_dump_ordered(v, &reg_canon_order, &n2, &mark);
	if (got) {
		FUZZ_CHECK(want && n1 == n2 && !strcmp(got, want),
			   "ordered dump differs:\n  ordered %s\n  reorder %s",
			   got, want ? want : "(NULL)");
		const json_t *m = json_object_get(v, "metadata");
		const json_t *rv = json_is_object(m)
				       ? json_object_get(m, "resourceVersion")
				       : NULL;
		if (!rv) {
			FUZZ_CHECK(mark == SIZE_MAX,
				   "a mark with no "
				   "resourceVersion: %zu",
				   mark);
		} else {
			json_t *back =
			    mark >= 18 && mark < n2 &&
				    !memcmp(got + mark - 18,
					    "\"resourceVersion\":", 18)
				? reg_json_load(got + mark, n2 - mark,
						JSON_DECODE_ANY |
						    JSON_DISABLE_EOF_CHECK,
						NULL)
				: NULL;
			FUZZ_CHECK(back && json_equal(back, rv),
				   "mark %zu is not resourceVersion's value in "
				   "%s",
				   mark, got);
			json_decref(back);
		}
	} else {
		FUZZ_CHECK(!want || gives_up_on(c, 0),
			   "ordered dump failed where the dump did not: %s",
			   want);
	}
	free(want);
	free(got);
	json_decref(c);
}

/* Input jansson refuses for an integer beyond int64: a tree of ours holds
   the numbers JSON_DECODE_INT_AS_REAL reads (invariant 1), and dumps. */
static void check_bigints(const json_t *a, const char *p, size_t size,
			  size_t flags)
{
	if (!a || !(json_is_object(a) || json_is_array(a)))
		return;
	json_t *r = json_loadb(p, size, flags | JSON_DECODE_INT_AS_REAL, NULL);
	FUZZ_CHECK(r, "ours read what jansson refuses even with reals");
	char *d1 = reg_json_dump(a, NULL), *d2 = reg_json_dump(r, NULL);
	FUZZ_CHECK(d1 && d2 && reg__json_dump_matches(d1, d2),
		   "big integers read otherwise:\n  ours %s\n  reals %s", d1,
		   d2);
	free(d1);
	free(d2);
	json_decref(r);
	check_dump(a);
}

/* Invariant 7. */
static void check_indent(const char *p, size_t size)
{
	size_t n = 0;
	char *ind = srv_json_indent(p, size, &n);
	if (!ind)
		return; /* out of memory */
	FUZZ_CHECK(memchr(p, '\0', size) || strlen(ind) == n,
		   "indent: length %zu, text %zu", n, strlen(ind));
	json_error_t e;
	json_t *a = reg_json_load(p, size, JSON_DECODE_ANY, &e);
	if (a) {
		json_t *b = reg_json_load(ind, n, JSON_DECODE_ANY, &e);
		FUZZ_CHECK(b && reg__json_identical(a, b),
			   "indent: the indented text reads %s",
			   b ? "as another tree" : "as nothing");
		size_t n2 = 0;
		char *again = srv_json_indent(ind, n, &n2);
		FUZZ_CHECK(!again || (n2 == n && !memcmp(again, ind, n)),
			   "indent: indenting again changed it");
		free(again);
		json_decref(b);
		json_decref(a);
	}
	free(ind);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	check_indent(p, size);
	char gomsg[128] = "";
	int go_ok = reg_go_json_check(p, size, gomsg, sizeof gomsg);
	FUZZ_CHECK(go_ok || gomsg[0], "Go's check refused with no message");
	for (size_t f = 0; f < sizeof flag_sets / sizeof *flag_sets; f++) {
		size_t flags = flag_sets[f];
		json_error_t e1, e2;
		memset(&e1, 0x5a, sizeof e1);
		memset(&e2, 0x5a, sizeof e2);
		json_t *a = reg_json_load(p, size, flags, &e1);
		if (!a && memchr(p, '\0', size)) {
			/* a NUL byte, which jansson may skip, is refused */
			FUZZ_CHECK(!strcmp(e1.text, "invalid character '\\x00' "
						    "in JSON text"),
				   "flags %zx: a NUL byte gave '%s'", flags,
				   e1.text);
			continue;
		}
		json_t *b = json_loadb(p, size, flags, &e2);
		if (!b && json_error_code(&e2) == json_error_numeric_overflow &&
		    !strncmp(e2.text, "too big ", 8)) {
			check_bigints(a, p, size, flags);
			json_decref(a);
			continue;
		}
		FUZZ_CHECK(!a == !b, "flags %zx: ours %s, jansson's %s (%s)",
			   flags, a ? "a tree" : "NULL", b ? "a tree" : "NULL",
			   e2.text);
		FUZZ_CHECK(reg__json_identical(a, b), "flags %zx: trees differ",
			   flags);
		FUZZ_CHECK(!strcmp(e1.text, e2.text) &&
			       !strcmp(e1.source, e2.source) &&
			       e1.line == e2.line && e1.column == e2.column &&
			       e1.position == e2.position,
			   "flags %zx: errors differ: '%s' %d:%d@%d vs '%s' "
			   "%d:%d@%d",
			   flags, e1.text, e1.line, e1.column, e1.position,
			   e2.text, e2.line, e2.column, e2.position);
		json_t *fast = reg__json_load_fast(p, size, flags);
		if (fast)
			FUZZ_CHECK(b && reg__json_identical(fast, b),
				   "flags %zx: the fast path took input "
				   "jansson %s",
				   flags, b ? "reads otherwise" : "refuses");
		if (a && (flags & JSON_DECODE_ANY) &&
		    !(flags & JSON_DISABLE_EOF_CHECK))
			FUZZ_CHECK(go_ok, "flags %zx: Go's check refused what "
					  "jansson reads: %s",
				   flags, gomsg);
		if (a && (json_is_object(a) || json_is_array(a)))
			check_dump(a);
		if (a && json_is_object(a))
			check_ordered(a);
		json_decref(fast);
		json_decref(a);
		json_decref(b);
	}
	return 0;
}
