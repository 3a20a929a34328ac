/*
 * patch.c -- the three PATCH formats kube serves, on jansson trees: JSON
 * merge patch (RFC 7386, as evanphx/json-patch v4 applies it for kube), JSON
 * patch (RFC 6902) and strategic merge patch (apimachinery's strategicpatch
 * package as the apiserver runs it: parallel lists merged, unmatched nulls
 * ignored).
 *
 * Thread: any. Pure functions; no state outside the call.
 *
 * Invariants:
 *  1. Inputs are never modified. Each entry point checks the nesting depth of
 *     its inputs (iteratively) and then works on a deep copy of the
 *     document; an error releases the copy, so a patch applies wholly or not
 *     at all, and *out is written only on success.
 *  2. Recursion is bounded by PATCH_MAX_DEPTH. Nothing deeper reaches a
 *     recursive function, ours or jansson's (json_deep_copy, json_dumps,
 *     json_equal and json_decref all recurse). JSON patch keeps an upper
 *     bound of the working document's depth from operation to operation so
 *     that add, move and copy cannot build a deeper tree either.
 *  3. Strategic list merges find elements through a hash of canonical keys
 *     (a jansson object), never by scanning, so the work stays near-linear
 *     in the sizes of document and patch; upstream's quadratic scans would
 *     let one large list in a patch hold a request thread for minutes.
 *  4. Error codes are kube's (see patch.h): a malformed patch is 400
 *     BadRequest, an operation that does not apply is 422 Invalid with
 *     kube's generic message; the detail of a 422 goes to the debug log
 *     only, as kube drops it too (NewGenericServerResponse).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lapis/log.h"
#include "patch.h"
#include "qparse.h"
#include "registry/json.h"

/*
 * Deepest nesting (in containers) of any input or result. Kubernetes
 * objects are shallow: the deepest built-in, a CRD's openAPIV3Schema, stays
 * far below 100 levels. 1000 leaves room for odd custom resources while
 * keeping every recursion here and in jansson under a megabyte of stack,
 * sanitizer builds included.
 */
#define PATCH_MAX_DEPTH SRV_PATCH_MAX_DEPTH
/* kube's maxJSONPatchOperations (endpoints/handlers/patch.go). */
#define JSON_PATCH_MAX_OPS 10000
/* kube's default JSONPatchMaxCopyBytes: copy operations may add at most
   this many (encoded) bytes, so a patch of doubling copies stays small. */
#define JSON_PATCH_MAX_COPY_BYTES (3u * 1024 * 1024)

/* NewGenericServerResponse's text for 422, which kube answers to a JSON
   patch operation that fails and to a strategic list of lists. */
#define MSG_422 "the server rejected our request due to an error in our request"

#define DIR_PATCH "$patch"
#define DIR_RETAIN "$retainKeys"
#define DIR_ORDER "$setElementOrder"
#define DIR_DELETE_PRIM "$deleteFromPrimitiveList"

/*
 * jansson's iterators take a non-const object although iterating does not
 * modify it; this is the one place where we cast that away.
 */
static json_t *mut(const json_t *v)
{
	return (json_t *)v;
}

/*
 * Our own buffers come from jansson's allocator too: the keys that
 * json_dumps makes must go back to its free function, and one hook
 * (json_set_alloc_funcs) then lets tests fail any allocation made here.
 */
static void *pmalloc(size_t n)
{
	json_malloc_t m;
	json_free_t f;

	json_get_alloc_funcs(&m, &f);
	return m(n ? n : 1);
}

static void pfree(void *p)
{
	json_malloc_t m;
	json_free_t f;

	if (!p)
		return;
	json_get_alloc_funcs(&m, &f);
	f(p);
}

static void *pcalloc(size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	p = pmalloc(n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

static char *pstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = pmalloc(n);

	if (p)
		memcpy(p, s, n);
	return p;
}

static lp_err nomem(struct srv_error *err)
{
	return srv_error_set(err, LP_E_NOMEM, "out of memory");
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/*
 * Nesting depth of v: 0 for a scalar, 1 + the depth of its deepest child for
 * an array or object (1 when empty). Iterative with a fixed stack; returns
 * limit + 1 as soon as the depth passes limit (limit <= PATCH_MAX_DEPTH).
 */
static int height(const json_t *v, int limit)
{
	struct frame {
		const json_t *c;
		void *it;	/* objects: next member */
		size_t i;	/* arrays: next index */
	} st[PATCH_MAX_DEPTH + 1];
	int n = 0, best;

	if (!json_is_object(v) && !json_is_array(v))
		return 0;
	if (limit < 1)
		return limit + 1;
	if (limit > PATCH_MAX_DEPTH)
		limit = PATCH_MAX_DEPTH;
	st[n].c = v;
	st[n].it = json_is_object(v) ? json_object_iter(mut(v)) : NULL;
	st[n].i = 0;
	n = 1;
	best = 1;
	while (n > 0) {
		struct frame *f = &st[n - 1];
		const json_t *child = NULL;

		if (json_is_object(f->c)) {
			if (f->it) {
				child = json_object_iter_value(f->it);
				f->it = json_object_iter_next(mut(f->c), f->it);
			}
		} else if (f->i < json_array_size(f->c)) {
			child = json_array_get(f->c, f->i++);
		}
		if (!child) {
			n--;
			continue;
		}
		if (!json_is_object(child) && !json_is_array(child))
			continue;
		if (n == limit)
			return limit + 1;
		st[n].c = child;
		st[n].it = json_is_object(child) ? json_object_iter(mut(child))
						 : NULL;
		st[n].i = 0;
		n++;
		if (n > best)
			best = n;
	}
	return best;
}

int srv_json_height(const json_t *v, int limit)
{
	return height(v, limit);
}

static bool too_deep(const json_t *v)
{
	return height(v, PATCH_MAX_DEPTH) > PATCH_MAX_DEPTH;
}

/* ------------------------------------------------------------------ */
/* JSON merge patch                                                    */
/* ------------------------------------------------------------------ */

/*
 * A deep copy of v without null object members and null array elements, at
 * any depth: evanphx's pruneNulls, which kube applies to every value that a
 * merge patch adds where the document had no object to merge into. NULL
 * only when out of memory. Depth: bounded by the caller's check of v.
 */
static json_t *prune_copy(const json_t *v)
{
	json_t *out, *cv;
	const char *k;
	size_t i;

	if (json_is_object(v)) {
		out = json_object();
		if (!out)
			return NULL;
		json_object_foreach(mut(v), k, cv) {
			if (json_is_null(cv))
				continue;
			if (json_object_set_new(out, k, prune_copy(cv)))
				goto fail;
		}
		return out;
	}
	if (json_is_array(v)) {
		out = json_array();
		if (!out)
			return NULL;
		json_array_foreach(v, i, cv) {
			if (json_is_null(cv))
				continue;
			if (json_array_append_new(out, prune_copy(cv)))
				goto fail;
		}
		return out;
	}
	return json_deep_copy(v);
fail:
	json_decref(out);
	return NULL;
}

/* Merge the object patch into the object target (our copy), in place. */
static lp_err merge_obj(json_t *target, const json_t *patch,
			struct srv_error *err)
{
	const char *k;
	json_t *pv;

	json_object_foreach(mut(patch), k, pv) {
		json_t *cur, *nv;

		if (json_is_null(pv)) {
			json_object_del(target, k);
			continue;
		}
		cur = json_object_get(target, k);
		if (json_is_object(cur) && json_is_object(pv)) {
			lp_err rc = merge_obj(cur, pv, err);
			if (rc)
				return rc;
			continue;
		}
		/* evanphx prunes a value that lands where no object was, but
		   keeps a non-object that replaces an object as it is. */
		nv = json_is_object(cur) ? json_deep_copy(pv) : prune_copy(pv);
		if (json_object_set_new(target, k, nv))
			return nomem(err);
	}
	return LP_OK;
}

lp_err srv_merge_patch(const json_t *doc, const json_t *patch, json_t **out,
		       struct srv_error *err)
{
	json_t *res;
	lp_err rc;

	if (!doc || !patch || !out)
		return srv_error_set(err, LP_E_INVAL, "merge patch: no input");
	/* evanphx refuses a patch that does not decode as an object or an
	   array (null included) with ErrBadJSONPatch, which kube turns into
	   400 "Invalid JSON Patch". */
	if (!json_is_object(patch) && !json_is_array(patch))
		return srv_error_set(err, LP_E_BADREQUEST,
				     "Invalid JSON Patch");
	if (too_deep(patch))
		return srv_error_set(err, LP_E_BADREQUEST,
				     "the patch nests deeper than %d levels",
				     PATCH_MAX_DEPTH);
	if (too_deep(doc))
		return srv_error_set(err, LP_E_INVALID,
				     "the object nests deeper than %d levels",
				     PATCH_MAX_DEPTH);
	if (!json_is_object(patch) || !json_is_object(doc)) {
		res = prune_copy(patch);
		if (!res)
			return nomem(err);
		*out = res;
		return LP_OK;
	}
	res = json_deep_copy(doc);
	if (!res)
		return nomem(err);
	rc = merge_obj(res, patch, err);
	if (rc) {
		json_decref(res);
		return rc;
	}
	*out = res;
	return LP_OK;
}

/* Objects: recursive diff; NULL when out of memory. Depth: bounded by the
   caller's checks of a and b. */
static json_t *diff_obj(const json_t *a, const json_t *b)
{
	json_t *out, *av, *bv, *nv;
	const char *k;

	out = json_object();
	if (!out)
		return NULL;
	json_object_foreach(mut(b), k, bv) {
		av = json_object_get(a, k);
		if (av && json_is_object(av) && json_is_object(bv)) {
			nv = diff_obj(av, bv);
			if (!nv)
				goto fail;
			if (json_object_size(nv) == 0) {
				json_decref(nv);
				continue;
			}
		} else if (!av || !json_equal(av, bv)) {
			/* added, changed type or value; arrays go whole */
			nv = json_deep_copy(bv);
		} else {
			continue;
		}
		if (json_object_set_new(out, k, nv))
			goto fail;
	}
	json_object_foreach(mut(a), k, av) {
		if (!json_object_get(b, k) &&
		    json_object_set_new(out, k, json_null()))
			goto fail;
	}
	return out;
fail:
	json_decref(out);
	return NULL;
}

json_t *srv_merge_patch_diff(const json_t *a, const json_t *b)
{
	if (!json_is_object(a) || !json_is_object(b) || too_deep(a) ||
	    too_deep(b))
		return NULL;
	return diff_obj(a, b);
}

/* ------------------------------------------------------------------ */
/* JSON patch                                                          */
/* ------------------------------------------------------------------ */

enum jp_kind { JP_ADD, JP_REMOVE, JP_REPLACE, JP_MOVE, JP_COPY, JP_TEST };

static const char *const jp_names[] = {
	[JP_ADD] = "add",   [JP_REMOVE] = "remove", [JP_REPLACE] = "replace",
	[JP_MOVE] = "move", [JP_COPY] = "copy",	    [JP_TEST] = "test",
};

struct jp_op {
	enum jp_kind kind;
	const char *path;     /* borrowed from the ops array */
	const char *from;     /* move, copy; else NULL */
	const json_t *value;  /* add, replace, test; else NULL */
	bool value_given;     /* the operation has a "value" */
};

/* The working state of one srv_json_patch call. */
struct jp {
	json_t *root;	  /* the working copy; new */
	int depth;	  /* upper bound of root's nesting depth */
	size_t copied;	  /* encoded bytes added by copy operations */
	char *tok;	  /* token scratch, as long as the longest pointer */
	const char *why;  /* why the last operation did not apply */
};

/* "" or "/"-separated tokens. len is the string's length (a NUL inside is
   refused). A '~' not followed by '0' or '1' is kept as it is, as kube's
   library decodes tokens (a replacer of "~1" and "~0", nothing else). */
static bool ptr_valid(const char *p, size_t len)
{
	if (strlen(p) != len)
		return false;
	return !*p || *p == '/';
}

/* Tokens in a valid pointer: the number of containers above its target. */
static size_t ptr_ntokens(const char *p)
{
	size_t n = 0;

	for (; *p; p++)
		n += *p == '/';
	return n;
}

/* Decode the token after the '/' at *p into buf and advance *p to the next
   '/' or the end. p is valid (ptr_valid); buf holds strlen(*p) + 1. */
static void ptr_token(const char **p, char *buf)
{
	const char *s = *p + 1;
	size_t n = 0;

	while (*s && *s != '/') {
		if (*s == '~' && (s[1] == '0' || s[1] == '1')) {
			buf[n++] = s[1] == '1' ? '/' : '~';
			s += 2;
		} else {
			buf[n++] = *s++;
		}
	}
	buf[n] = '\0';
	*p = s;
}

/*
 * An array index as kube's JSON patch library (evanphx/json-patch v4)
 * reads one: Go's strconv.Atoi (an optional sign, decimal digits, leading
 * zeros allowed, within int64), a negative one counting from the end
 * (SupportNegativeIndices, on by default). n is the number of positions
 * the operation can reach: the array's size, or one more for an add.
 * "-" and everything else is no index.
 */
static bool parse_index(const char *t, size_t n, size_t *idx)
{
	int64_t v;

	if (srv_parse_int(t, INT64_MIN, INT64_MAX, &v))
		return false;
	if (v < 0) {
		/* its magnitude, INT64_MIN's included */
		uint64_t m = (uint64_t)(-(v + 1)) + 1;
		if (m > n)
			return false;
		*idx = n - (size_t)m;
		return true;
	}
	if ((uint64_t)v >= n)
		return false;
	*idx = (size_t)v;
	return true;
}

/* The member or element tok of container c, borrowed; NULL if none. */
static json_t *jp_child(json_t *c, const char *tok)
{
	size_t i;

	if (json_is_object(c))
		return json_object_get(c, tok);
	if (json_is_array(c) && parse_index(tok, json_array_size(c), &i))
		return json_array_get(c, i);
	return NULL;
}

/* For a non-empty pointer: the container that holds its target (borrowed
   from j->root) and, in j->tok, the last token. false when a step on the
   way does not exist. */
static bool jp_parent(struct jp *j, const char *path, json_t **parent)
{
	json_t *cur = j->root;
	const char *p = path;

	for (;;) {
		ptr_token(&p, j->tok);
		if (!*p) {
			*parent = cur;
			return true;
		}
		cur = jp_child(cur, j->tok);
		if (!cur)
			return false;
	}
}

/* The value at path, borrowed from j->root; NULL if there is none. */
static json_t *jp_get(struct jp *j, const char *path)
{
	json_t *parent;

	if (!*path)
		return j->root;
	if (!jp_parent(j, path, &parent))
		return NULL;
	return jp_child(parent, j->tok);
}

static lp_err jp_fail(struct jp *j, const char *why)
{
	j->why = why;
	return LP_E_INVALID;
}

/* Room for a value of depth h under m containers: keeps j->depth an upper
   bound of the document's depth and refuses to pass PATCH_MAX_DEPTH. */
static bool jp_room(struct jp *j, size_t m, int h)
{
	if (m > PATCH_MAX_DEPTH || (size_t)h > PATCH_MAX_DEPTH - m)
		return false;
	if ((int)m + h > j->depth)
		j->depth = (int)m + h;
	return true;
}

/* Put val (stolen) at path, not the root: the add of RFC 6902 §4.1, or its
   replace (§4.3) when must_exist (an array's element must exist). */
static lp_err jp_put(struct jp *j, const char *path, json_t *val,
		     bool must_exist)
{
	json_t *parent;
	size_t i, n;

	if (!jp_parent(j, path, &parent)) {
		json_decref(val);
		return jp_fail(j, "path does not exist");
	}
	/* an object's member need not exist, even for a replace: kube's
	   evanphx/json-patch v4 finds every key of an object (its
	   partialDoc.get never fails; v5 changed that) */
	if (json_is_object(parent))
		return json_object_set_new(parent, j->tok, val) ? LP_E_NOMEM
								: LP_OK;
	if (!json_is_array(parent)) {
		json_decref(val);
		return jp_fail(j, "parent is not a container");
	}
	n = json_array_size(parent);
	if (!must_exist && strcmp(j->tok, "-") == 0)
		i = n;
	else if (!parse_index(j->tok, must_exist ? n : n + 1, &i)) {
		json_decref(val);
		return jp_fail(j, "bad array index");
	}
	if (must_exist)
		return json_array_set_new(parent, i, val) ? LP_E_NOMEM : LP_OK;
	return json_array_insert_new(parent, i, val) ? LP_E_NOMEM : LP_OK;
}

static lp_err jp_remove(struct jp *j, const char *path)
{
	json_t *parent;
	size_t i;

	if (!jp_parent(j, path, &parent))
		return jp_fail(j, "path does not exist");
	if (json_is_object(parent)) {
		if (json_object_del(parent, j->tok))
			return jp_fail(j, "member does not exist");
		return LP_OK;
	}
	if (json_is_array(parent) &&
	    parse_index(j->tok, json_array_size(parent), &i)) {
		json_array_remove(parent, i);
		return LP_OK;
	}
	return jp_fail(j, "bad array index");
}

/* RFC 6902 §4.6 equality: numbers compare by value (1 equals 1.0), objects
   regardless of member order. Depth: bounded by the callers' checks. */
static bool jp_equal(const json_t *a, const json_t *b)
{
	const char *k;
	json_t *av;
	size_t i;

	if (json_is_number(a) && json_is_number(b)) {
		if (json_is_integer(a) && json_is_integer(b))
			return json_integer_value(a) == json_integer_value(b);
		return json_number_value(a) == json_number_value(b);
	}
	if (json_typeof(a) != json_typeof(b))
		return false;
	switch (json_typeof(a)) {
	case JSON_OBJECT:
		if (json_object_size(a) != json_object_size(b))
			return false;
		json_object_foreach(mut(a), k, av) {
			const json_t *bv = json_object_get(b, k);
			if (!bv || !jp_equal(av, bv))
				return false;
		}
		return true;
	case JSON_ARRAY:
		if (json_array_size(a) != json_array_size(b))
			return false;
		for (i = 0; i < json_array_size(a); i++)
			if (!jp_equal(json_array_get(a, i), json_array_get(b, i)))
				return false;
		return true;
	case JSON_STRING:
		return json_string_length(a) == json_string_length(b) &&
		       memcmp(json_string_value(a), json_string_value(b),
			      json_string_length(a)) == 0;
	case JSON_INTEGER:
	case JSON_REAL:
		return false; /* handled above */
	case JSON_TRUE:
	case JSON_FALSE:
	case JSON_NULL:
		return true;
	}
	return false;
}

/* For a path whose target is missing: JSON null (static) when its parent
   is an object, as v4's partialDoc.get answers a missing key; NULL when
   the parent does not exist or is no object. */
static json_t *missing_member(struct jp *j, const char *path)
{
	json_t *parent;
	if (!*path || !jp_parent(j, path, &parent) || !json_is_object(parent))
		return NULL;
	return json_null();
}

static lp_err jp_apply(struct jp *j, const struct jp_op *op)
{
	json_t *v, *c;
	size_t m = ptr_ntokens(op->path), k, len, flen;
	int h;

	/* kube's evanphx/json-patch finds no container for the whole
	   document: only a test may name it, and a replace by an object or
	   an array, which becomes the document */
	if (op->kind == JP_REPLACE && !*op->path) {
		if (!json_is_object(op->value) && !json_is_array(op->value))
			return jp_fail(j, "replace operation value must be "
					  "object or array");
		h = height(op->value, PATCH_MAX_DEPTH);
		if (!jp_room(j, 0, h))
			return jp_fail(j, "result nests too deeply");
		if (!(c = json_deep_copy(op->value)))
			return LP_E_NOMEM;
		json_decref(j->root);
		j->root = c;
		return LP_OK;
	}
	if (op->kind != JP_TEST && (!*op->path || (op->from && !*op->from)))
		return jp_fail(j, "doc is missing path");
	switch (op->kind) {
	case JP_ADD:
	case JP_REPLACE:
		h = height(op->value, PATCH_MAX_DEPTH);
		if (!jp_room(j, m, h))
			return jp_fail(j, "result nests too deeply");
		c = json_deep_copy(op->value);
		if (!c)
			return LP_E_NOMEM;
		return jp_put(j, op->path, c, op->kind == JP_REPLACE);
	case JP_REMOVE:
		return jp_remove(j, op->path);
	case JP_MOVE:
		v = jp_get(j, op->from);
		if (!v)
			return jp_fail(j, "from does not exist");
		if (strcmp(op->from, op->path) == 0)
			return LP_OK;
		flen = strlen(op->from);
		if (strncmp(op->path, op->from, flen) == 0 &&
		    op->path[flen] == '/')
			return jp_fail(j, "cannot move a value into itself");
		/* v sits under k containers, so its depth is at most
		   j->depth - k; measure it only when that bound is not
		   enough, which keeps a chain of moves cheap. */
		k = ptr_ntokens(op->from);
		if (m > k && !jp_room(j, m, j->depth - (int)k)) {
			int lim = m > PATCH_MAX_DEPTH
					  ? 0
					  : PATCH_MAX_DEPTH - (int)m;
			if (!jp_room(j, m, height(v, lim)))
				return jp_fail(j, "result nests too deeply");
		}
		json_incref(v);
		if (jp_remove(j, op->from)) {
			json_decref(v);
			return jp_fail(j, "from does not exist");
		}
		return jp_put(j, op->path, v, false);
	case JP_COPY:
		v = jp_get(j, op->from);
		/* v4 copies an object's missing member as null */
		if (!v && (v = missing_member(j, op->from)) == NULL)
			return jp_fail(j, "from does not exist");
		if (!jp_room(j, m,
			     height(v, m > PATCH_MAX_DEPTH
					       ? 0
					       : PATCH_MAX_DEPTH - (int)m)))
			return jp_fail(j, "result nests too deeply");
		/* encoding a value fails only when memory does */
		len = json_dumpb(v, NULL, 0, JSON_COMPACT | JSON_ENCODE_ANY);
		if (len == 0)
			return LP_E_NOMEM;
		if (len > JSON_PATCH_MAX_COPY_BYTES - j->copied)
			return jp_fail(j, "copies exceed the size limit");
		j->copied += len;
		c = json_deep_copy(v);
		if (!c)
			return LP_E_NOMEM;
		return jp_put(j, op->path, c, false);
	case JP_TEST:
		v = jp_get(j, op->path);
		/* v4 finds an object's missing member as null: a test of
		   null passes there */
		if (!v && (v = missing_member(j, op->path)) == NULL)
			return jp_fail(j, "path does not exist");
		if (!op->value_given || !jp_equal(v, op->value))
			return jp_fail(j, "test failed");
		return LP_OK;
	}
	return jp_fail(j, "unknown operation");
}

/* A string member of op that is a valid pointer; NULL sets *why. */
static const char *jp_pointer(const json_t *op, const char *name,
			      const char **why)
{
	const json_t *v = json_object_get(op, name);

	if (!v) {
		*why = "is missing";
		return NULL;
	}
	if (!json_is_string(v)) {
		*why = "is not a string";
		return NULL;
	}
	if (!ptr_valid(json_string_value(v), json_string_length(v))) {
		*why = "is not a JSON pointer";
		return NULL;
	}
	return json_string_value(v);
}

/* An operation that cannot apply: kube answers evanphx/json-patch's Apply
   error as a generic 422 (NewGenericServerResponse: details {}), its own
   words kept out of the reply; they go to the debug log. */
static lp_err jp_op_invalid(struct srv_error *err, size_t i, const char *name,
			    const char *what, const char *why)
{
	lp_debug("json patch operation %zu (%s): \"%s\" %s", i, name, what,
		 why);
	srv_error_set(err, LP_E_INVALID, "%s", MSG_422);
	err->generic = true;
	return LP_E_INVALID;
}

/* Decode and check every operation before applying any. First kube's
   strict decoding of the list into its jsonPatchOp (op, path and from are
   strings): a 400 for any operation. Then what evanphx/json-patch finds as
   it applies (an unknown op, a missing or bad pointer): kube's 422. Fills
   ops[] and the longest pointer length. */
static lp_err jp_decode(const json_t *arr, struct jp_op *ops, size_t *maxlen,
			struct srv_error *err)
{
	static const char *const strs[] = {"op", "path", "from"};
	size_t i, n = json_array_size(arr), longest = 0;

	for (i = 0; i < n; i++) {
		const json_t *o = json_array_get(arr, i);
		for (size_t f = 0; f < sizeof strs / sizeof *strs; f++) {
			const json_t *v = json_object_get(o, strs[f]);
			if (v && !json_is_null(v) && !json_is_string(v))
				return srv_error_set(
				    err, LP_E_BADREQUEST,
				    "error decoding patch: json: cannot "
				    "unmarshal %s into Go struct field "
				    "jsonPatchOp.%s of type string",
				    reg_go_type(v), strs[f]);
		}
	}
	for (i = 0; i < n; i++) {
		const json_t *o = json_array_get(arr, i);
		const json_t *opv = json_object_get(o, "op");
		const char *name, *why = NULL;
		struct jp_op *op = &ops[i];
		size_t kind;

		name = json_is_string(opv) ? json_string_value(opv) : "unknown";
		for (kind = 0; kind < sizeof jp_names / sizeof *jp_names; kind++)
			if (strcmp(name, jp_names[kind]) == 0)
				break;
		if (kind == sizeof jp_names / sizeof *jp_names)
			return jp_op_invalid(err, i, name, "op",
					     "is not an operation");
		op->kind = (enum jp_kind)kind;
		op->from = NULL;
		op->value = NULL;
		op->path = jp_pointer(o, "path", &why);
		if (!op->path)
			return jp_op_invalid(err, i, name, "path", why);
		if (strlen(op->path) > longest)
			longest = strlen(op->path);
		if (op->kind == JP_MOVE || op->kind == JP_COPY) {
			op->from = jp_pointer(o, "from", &why);
			if (!op->from)
				return jp_op_invalid(err, i, name, "from", why);
			if (strlen(op->from) > longest)
				longest = strlen(op->from);
		}
		/* without a value, v4 adds or replaces null (a test
		   without one fails) */
		op->value = json_object_get(o, "value");
		op->value_given = op->value != NULL;
		if (!op->value)
			op->value = json_null();
	}
	*maxlen = longest;
	return LP_OK;
}

lp_err srv_json_patch(const json_t *doc, const json_t *ops, json_t **out,
		      struct srv_error *err)
{
	struct jp j = { 0 };
	struct jp_op *dec = NULL;
	size_t i, n, maxlen = 0;
	lp_err rc;

	if (!doc || !ops || !out)
		return srv_error_set(err, LP_E_INVAL, "json patch: no input");
	/* null decodes as no operations: the object as it is */
	if (json_is_null(ops)) {
		*out = json_deep_copy(doc);
		return *out ? LP_OK : nomem(err);
	}
	/* kube's strict decoding into []jsonPatchOp words these */
	if (!json_is_array(ops))
		return srv_error_set(err, LP_E_BADREQUEST,
				     "error decoding patch: json: cannot "
				     "unmarshal %s into Go value of type "
				     "[]handlers.jsonPatchOp",
				     reg_go_type(ops));
	n = json_array_size(ops);
	for (i = 0; i < n; i++)
		if (!json_is_object(json_array_get(ops, i)))
			return srv_error_set(err, LP_E_BADREQUEST,
					     "error decoding patch: json: "
					     "cannot unmarshal %s into Go value "
					     "of type handlers.jsonPatchOp",
					     reg_go_type(json_array_get(ops, i)));
	if (n > JSON_PATCH_MAX_OPS)
		return srv_error_set(err, LP_E_ENTITYTOOLARGE,
				     "Request entity too large: The allowed "
				     "maximum operations in a JSON patch is "
				     "%d, got %zu",
				     JSON_PATCH_MAX_OPS, n);
	if (too_deep(ops))
		return srv_error_set(err, LP_E_BADREQUEST,
				     "the patch nests deeper than %d levels",
				     PATCH_MAX_DEPTH);
	j.depth = height(doc, PATCH_MAX_DEPTH);
	if (j.depth > PATCH_MAX_DEPTH)
		return srv_error_set(err, LP_E_INVALID,
				     "the object nests deeper than %d levels",
				     PATCH_MAX_DEPTH);
	dec = pcalloc(n ? n : 1, sizeof *dec);
	if (!dec)
		return nomem(err);
	rc = jp_decode(ops, dec, &maxlen, err);
	if (rc)
		goto fail;
	rc = LP_E_NOMEM;
	j.tok = pmalloc(maxlen + 1);
	j.root = json_deep_copy(doc);
	if (!j.tok || !j.root) {
		nomem(err);
		goto fail;
	}
	for (i = 0; i < n; i++) {
		rc = jp_apply(&j, &dec[i]);
		if (rc == LP_E_NOMEM) {
			nomem(err);
			goto fail;
		}
		if (rc) {
			/* the reason first: the path can be long */
			lp_debug("json patch operation %zu (%s) does not "
				 "apply: %s: %.128s",
				 i, jp_names[dec[i].kind], j.why, dec[i].path);
			srv_error_set(err, LP_E_INVALID, "%s", MSG_422);
			err->generic = true; /* kube: details {} */
			goto fail;
		}
	}
	pfree(j.tok);
	pfree(dec);
	*out = j.root;
	return LP_OK;
fail:
	json_decref(j.root);
	pfree(j.tok);
	pfree(dec);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Strategic merge patch                                               */
/* ------------------------------------------------------------------ */

/* The working state of one srv_strategic_merge_patch call. */
struct smp {
	const struct srv_smp_schema *schema; /* borrowed; may be NULL */
	struct srv_error *err;		     /* borrowed; may be NULL */
	char *path; /* dotted path of the current field; new */
	size_t len; /* strlen(path) */
	size_t cap; /* bytes allocated at path */
};

/* Element kinds for kube's "list element types are identical" rule; an
   integer and a real are both numbers here. */
enum ekind { EK_NONE, EK_OBJECT, EK_ARRAY, EK_STRING, EK_NUMBER, EK_BOOL, EK_NULL };

static enum ekind ekind_of(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return EK_OBJECT;
	case JSON_ARRAY:
		return EK_ARRAY;
	case JSON_STRING:
		return EK_STRING;
	case JSON_INTEGER:
	case JSON_REAL:
		return EK_NUMBER;
	case JSON_TRUE:
	case JSON_FALSE:
		return EK_BOOL;
	case JSON_NULL:
		return EK_NULL;
	}
	return EK_NONE;
}

static lp_err smp_push(struct smp *s, const char *key, size_t *saved)
{
	size_t kl = strlen(key), need = s->len + 1 + kl + 1;

	if (need > s->cap) {
		size_t cap = need * 2;
		char *p = pmalloc(cap);
		if (!p)
			return nomem(s->err);
		memcpy(p, s->path, s->len + 1);
		pfree(s->path);
		s->path = p;
		s->cap = cap;
	}
	*saved = s->len;
	if (s->len)
		s->path[s->len++] = '.';
	memcpy(s->path + s->len, key, kl + 1);
	s->len += kl;
	return LP_OK;
}

static void smp_pop(struct smp *s, size_t saved)
{
	s->len = saved;
	s->path[saved] = '\0';
}

/* The strategy of the list at s->path; *mk the merge key of a keyed one,
   else NULL. */
static lp_err smp_strategy(struct smp *s, enum srv_list_strategy *st,
			   const char **mk)
{
	const char *key = NULL;
	enum srv_list_strategy r;

	if (!s->schema || !s->schema->list) {
		*st = SRV_LIST_REPLACE;
		*mk = NULL;
		return LP_OK;
	}
	r = s->schema->list(s->schema->ud, s->path, &key);
	switch (r) {
	case SRV_LIST_REPLACE:
	case SRV_LIST_MERGE_SET:
		*st = r;
		*mk = NULL;
		return LP_OK;
	case SRV_LIST_MERGE_KEYED:
		if (!key || !*key)
			break;
		*st = r;
		*mk = key;
		return LP_OK;
	}
	return srv_error_set(s->err, LP_E_INVAL,
			     "schema: bad list strategy for %s", s->path);
}

/* The common kind of the elements of a and b (either may be NULL; EK_NONE
   when both are empty), kube's sliceElementType. */
static lp_err smp_elem_kind(struct smp *s, const json_t *a, const json_t *b,
			    enum ekind *out)
{
	const json_t *lists[2] = { a, b };
	enum ekind kind = EK_NONE;
	size_t l, i;

	for (l = 0; l < 2; l++) {
		for (i = 0; i < json_array_size(lists[l]); i++) {
			enum ekind k = ekind_of(json_array_get(lists[l], i));
			if (kind == EK_NONE && k == EK_ARRAY) {
				lp_debug("strategic merge patch: %s: lists "
					 "of lists are not supported",
					 s->path);
				return srv_error_set(s->err, LP_E_INVALID,
						     "%s", MSG_422);
			}
			if (kind != EK_NONE && k != kind)
				return srv_error_set(
					s->err, LP_E_BADREQUEST,
					"list element types are not "
					"identical in %s",
					s->path);
			kind = k;
		}
	}
	*out = kind;
	return LP_OK;
}

/* A canonical text of v: equal values give equal keys; free with pfree. NULL
   when out of memory. */
static char *ckey(const json_t *v)
{
	return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

/* Canonical keys of a list's elements: of elem[mk] when mk, else of the
   element itself. */
struct keys {
	char **k; /* k[i] from pmalloc; NULL where an element lacks mk */
	size_t n;
};

static void keys_free(struct keys *ks)
{
	size_t i;

	for (i = 0; i < ks->n; i++)
		pfree(ks->k[i]);
	pfree(ks->k);
	ks->k = NULL;
	ks->n = 0;
}

/* The key of one element; *key NULL when it lacks mk and !need. */
static lp_err smp_key(struct smp *s, const json_t *e, const char *mk,
		      bool need, char **key)
{
	const json_t *kv = e;

	if (mk) {
		if (!json_is_object(e))
			return srv_error_set(s->err, LP_E_BADREQUEST,
					     "%s: list element is not an "
					     "object but the list merges by "
					     "key %s",
					     s->path, mk);
		kv = json_object_get(e, mk);
		if (!kv) {
			if (need)
				return srv_error_set(
					s->err, LP_E_BADREQUEST,
					"%s: map does not contain declared "
					"merge key: %s",
					s->path, mk);
			*key = NULL;
			return LP_OK;
		}
	}
	*key = ckey(kv);
	return *key ? LP_OK : nomem(s->err);
}

/* Keys of every element of arr (NULL arr: no elements). */
static lp_err keys_of(struct smp *s, const json_t *arr, const char *mk,
		      bool need, struct keys *out)
{
	struct keys ks = { 0 };
	size_t n = json_array_size(arr), i;
	lp_err rc;

	ks.k = pcalloc(n ? n : 1, sizeof *ks.k);
	if (!ks.k)
		return nomem(s->err);
	for (i = 0; i < n; i++) {
		rc = smp_key(s, json_array_get(arr, i), mk, need, &ks.k[i]);
		ks.n = i + 1;
		if (rc) {
			keys_free(&ks);
			return rc;
		}
	}
	*out = ks;
	return LP_OK;
}

/* A hash from key to the index of its first occurrence; new. */
static lp_err index_of(struct smp *s, const struct keys *ks, json_t **out)
{
	json_t *idx = json_object();
	size_t i;

	if (!idx)
		return nomem(s->err);
	for (i = 0; i < ks->n; i++) {
		if (!ks->k[i] || json_object_get(idx, ks->k[i]))
			continue;
		if (json_object_set_new_nocheck(idx, ks->k[i],
						json_integer((json_int_t)i))) {
			json_decref(idx);
			return nomem(s->err);
		}
	}
	*out = idx;
	return LP_OK;
}

/* Rank of key in idx, SIZE_MAX when absent. */
static size_t rank_in(const json_t *idx, const char *key)
{
	const json_t *v = key ? json_object_get(idx, key) : NULL;

	return v ? (size_t)json_integer_value(v) : SIZE_MAX;
}

struct ranked {
	size_t rank; /* position in the order list; SIZE_MAX when absent */
	size_t pos;  /* position in the merged list: keeps the sort stable */
};

static int ranked_cmp(const void *pa, const void *pb)
{
	const struct ranked *a = pa, *b = pb;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/*
 * kube's normalizeElementOrder. The items of merged whose key is in pidx
 * (the patch's order) are sorted by it; the others, server-only, by sidx
 * (the document's order); then both are merged, a server-only item going
 * first when the document had it before the next patch item. keys[] are
 * the keys of merged's elements. *out new.
 */
static lp_err smp_order(struct smp *s, const json_t *merged,
			const struct keys *keys, const json_t *pidx,
			const json_t *sidx, json_t **out)
{
	size_t n = json_array_size(merged), np = 0, ns = 0, i, a, b;
	struct ranked *pr = pcalloc(n ? n : 1, sizeof *pr);
	struct ranked *sr = pcalloc(n ? n : 1, sizeof *sr);
	json_t *res = json_array();
	lp_err rc = LP_OK;

	if (!pr || !sr || !res) {
		rc = nomem(s->err);
		goto done;
	}
	for (i = 0; i < n; i++) {
		size_t r = rank_in(pidx, keys->k[i]);
		if (r != SIZE_MAX)
			pr[np++] = (struct ranked){ r, i };
		else
			sr[ns++] = (struct ranked){ rank_in(sidx, keys->k[i]), i };
	}
	qsort(pr, np, sizeof *pr, ranked_cmp);
	qsort(sr, ns, sizeof *sr, ranked_cmp);
	for (a = 0, b = 0; a < ns || b < np;) {
		size_t pick;
		if (a < ns && b < np) {
			size_t ls = sr[a].rank;
			size_t rs = rank_in(sidx, keys->k[pr[b].pos]);
			if (ls != SIZE_MAX && rs != SIZE_MAX && ls < rs)
				pick = sr[a++].pos;
			else
				pick = pr[b++].pos;
		} else if (a < ns) {
			pick = sr[a++].pos;
		} else {
			pick = pr[b++].pos;
		}
		if (json_array_append(res, json_array_get(merged, pick))) {
			rc = nomem(s->err);
			goto done;
		}
	}
done:
	pfree(pr);
	pfree(sr);
	if (rc) {
		json_decref(res);
		return rc;
	}
	*out = res;
	return LP_OK;
}

/* Order merged by order (patch order) and server (document order), each
   keyed by mk; every element needs its merge key. *out new. */
static lp_err smp_reorder(struct smp *s, const json_t *merged,
			  const json_t *order, const json_t *server,
			  const char *mk, json_t **out)
{
	struct keys mkeys = { 0 }, okeys = { 0 }, skeys = { 0 };
	json_t *pidx = NULL, *sidx = NULL;
	lp_err rc;

	if ((rc = keys_of(s, merged, mk, true, &mkeys)) ||
	    (rc = keys_of(s, order, mk, true, &okeys)) ||
	    (rc = keys_of(s, server, mk, true, &skeys)) ||
	    (rc = index_of(s, &okeys, &pidx)) ||
	    (rc = index_of(s, &skeys, &sidx)))
		goto done;
	rc = smp_order(s, merged, &mkeys, pidx, sidx, out);
done:
	json_decref(pidx);
	json_decref(sidx);
	keys_free(&mkeys);
	keys_free(&okeys);
	keys_free(&skeys);
	return rc;
}

static lp_err smp_map(struct smp *s, json_t *orig, const json_t *patch,
		      bool *deleted);

/* *dir: the $patch of a list element, NULL when it has none. A $patch
   that is not delete, replace or merge is a bad request. */
static lp_err smp_elem_directive(struct smp *s, const json_t *e,
				 const char **dir)
{
	const json_t *d = json_is_object(e) ? json_object_get(e, DIR_PATCH)
					    : NULL;
	const char *v;

	if (!d) {
		*dir = NULL;
		return LP_OK;
	}
	v = json_string_value(d);
	if (!v || (strcmp(v, "delete") && strcmp(v, "replace") &&
		   strcmp(v, "merge")))
		return srv_error_set(s->err, LP_E_BADREQUEST,
				     "unknown patch type: %s in %s",
				     v ? v : "(not a string)", s->path);
	*dir = v;
	return LP_OK;
}

/*
 * The patch value pv as the new value of a field that the document lacks,
 * or whose kind it changes: an object is merged into an empty object (nulls
 * vanish and its directives apply), an array loses its directive elements
 * and has its elements taken the same way, a scalar is copied. *out new;
 * NULL when the value deletes itself ($patch: delete).
 */
static lp_err smp_take(struct smp *s, const json_t *pv, json_t **out)
{
	json_t *res, *e, *c;
	const char *dir;
	bool del = false;
	size_t i;
	lp_err rc;

	if (json_is_object(pv)) {
		res = json_object();
		if (!res)
			return nomem(s->err);
		rc = smp_map(s, res, pv, &del);
		if (rc || del) {
			json_decref(res);
			res = NULL;
		}
		if (rc)
			return rc;
		*out = res;
		return LP_OK;
	}
	if (!json_is_array(pv)) {
		res = json_deep_copy(pv);
		if (!res)
			return nomem(s->err);
		*out = res;
		return LP_OK;
	}
	res = json_array();
	if (!res)
		return nomem(s->err);
	json_array_foreach(pv, i, e) {
		rc = smp_elem_directive(s, e, &dir);
		if (rc)
			goto fail;
		if (dir)
			continue;
		rc = smp_take(s, e, &c);
		if (rc)
			goto fail;
		if (c && json_array_append_new(res, c)) {
			rc = nomem(s->err);
			goto fail;
		}
	}
	*out = res;
	return LP_OK;
fail:
	json_decref(res);
	return rc;
}

/* Merge the scalar list pl into ol as a set, kube's deduplicated union in
   its order. *out new. */
static lp_err smp_list_scalars(struct smp *s, const json_t *ol,
			       const json_t *pl, json_t **out)
{
	struct keys okeys = { 0 }, pkeys = { 0 }, mkeys = { 0 };
	json_t *seen = NULL, *merged = NULL, *pidx = NULL, *sidx = NULL;
	const json_t *lists[2] = { ol, pl };
	size_t l, i;
	lp_err rc;

	mkeys.k = pcalloc(json_array_size(ol) + json_array_size(pl) + 1,
			 sizeof *mkeys.k);
	seen = json_object();
	merged = json_array();
	if (!mkeys.k || !seen || !merged) {
		rc = nomem(s->err);
		goto done;
	}
	if ((rc = keys_of(s, ol, NULL, true, &okeys)) ||
	    (rc = keys_of(s, pl, NULL, true, &pkeys)))
		goto done;
	for (l = 0; l < 2; l++) {
		const struct keys *ks = l ? &pkeys : &okeys;
		for (i = 0; i < ks->n; i++) {
			if (json_object_get(seen, ks->k[i]))
				continue;
			mkeys.k[mkeys.n] = pstrdup(ks->k[i]);
			if (!mkeys.k[mkeys.n] ||
			    json_object_set_new_nocheck(seen, ks->k[i],
							json_true()) ||
			    json_array_append_new(
				    merged,
				    json_deep_copy(json_array_get(lists[l], i)))) {
				pfree(mkeys.k[mkeys.n]);
				rc = nomem(s->err);
				goto done;
			}
			mkeys.n++;
		}
	}
	if ((rc = index_of(s, &pkeys, &pidx)) ||
	    (rc = index_of(s, &okeys, &sidx)))
		goto done;
	rc = smp_order(s, merged, &mkeys, pidx, sidx, out);
done:
	keys_free(&okeys);
	keys_free(&pkeys);
	keys_free(&mkeys);
	json_decref(seen);
	json_decref(merged);
	json_decref(pidx);
	json_decref(sidx);
	return rc;
}

/*
 * Merge the list of objects pl into ol by merge key mk: kube's mergeSlice.
 * Elements with $patch: delete remove their key from ol, an element
 * {"$patch": "replace"} makes the other elements the whole list, matched
 * elements merge (in place: ol belongs to the working copy), new ones are
 * added; then kube's ordering. *out new.
 */
static lp_err smp_list_keyed(struct smp *s, json_t *ol, const json_t *pl,
			     const char *mk, json_t **out)
{
	json_t *dels = NULL, *normal = NULL, *base = NULL, *bidx = NULL;
	json_t *e, *c;
	struct keys bkeys = { 0 };
	bool replace = false, del;
	const char *dir;
	char *key = NULL;
	size_t i;
	lp_err rc;

	dels = json_object();
	normal = json_array();
	base = json_array();
	if (!dels || !normal || !base) {
		rc = nomem(s->err);
		goto done;
	}
	json_array_foreach(pl, i, e) {
		if ((rc = smp_elem_directive(s, e, &dir)))
			goto done;
		if (!dir) {
			if (json_array_append(normal, e)) {
				rc = nomem(s->err);
				goto done;
			}
		} else if (strcmp(dir, "delete") == 0) {
			if ((rc = smp_key(s, e, mk, true, &key)))
				goto done;
			if (json_object_set_new_nocheck(dels, key,
							json_true())) {
				rc = nomem(s->err);
				goto done;
			}
			pfree(key);
			key = NULL;
		} else if (strcmp(dir, "replace") == 0) {
			replace = true;
		} else {
			rc = srv_error_set(s->err, LP_E_BADREQUEST,
					   "merging lists cannot yet be "
					   "specified in the patch (%s)",
					   s->path);
			goto done;
		}
	}
	if (replace) {
		/* The patch's elements are the list, in their order. */
		json_array_foreach(normal, i, e) {
			if ((rc = smp_take(s, e, &c)))
				goto done;
			if (c && json_array_append_new(base, c)) {
				rc = nomem(s->err);
				goto done;
			}
		}
		rc = smp_reorder(s, base, NULL, base, mk, out);
		goto done;
	}
	json_array_foreach(ol, i, e) {
		if ((rc = smp_key(s, e, mk, false, &key)))
			goto done;
		del = key && json_object_get(dels, key);
		pfree(key);
		key = NULL;
		if (!del && json_array_append(base, e)) {
			rc = nomem(s->err);
			goto done;
		}
	}
	/* The document's order, for ordering, before anything is added. */
	if ((rc = keys_of(s, base, mk, false, &bkeys)) ||
	    (rc = index_of(s, &bkeys, &bidx)))
		goto done;
	json_array_foreach(normal, i, e) {
		const json_t *at;
		if ((rc = smp_key(s, e, mk, true, &key)))
			goto done;
		at = json_object_get(bidx, key);
		if (at) {
			json_t *target = json_array_get(
				base, (size_t)json_integer_value(at));
			rc = smp_map(s, target, e, &del);
		} else {
			size_t pos = json_array_size(base);
			rc = smp_take(s, e, &c);
			/* later patch elements with this key merge into this
			   one, as upstream's do */
			if (!rc && c &&
			    (json_array_append_new(base, c) ||
			     json_object_set_new_nocheck(
				     bidx, key, json_integer((json_int_t)pos))))
				rc = nomem(s->err);
		}
		pfree(key);
		key = NULL;
		if (rc)
			goto done;
	}
	{
		/* serverOrder: base up to the elements added above */
		json_t *server = json_array();
		size_t nb = bkeys.n;
		if (!server) {
			rc = nomem(s->err);
			goto done;
		}
		for (i = 0; i < nb; i++) {
			if (json_array_append(server, json_array_get(base, i))) {
				json_decref(server);
				rc = nomem(s->err);
				goto done;
			}
		}
		rc = smp_reorder(s, base, normal, server, mk, out);
		json_decref(server);
	}
done:
	pfree(key);
	keys_free(&bkeys);
	json_decref(dels);
	json_decref(normal);
	json_decref(base);
	json_decref(bidx);
	return rc;
}

/* Merge the patch list pl into the document list ol (both arrays, ol in
   the working copy) by strategy. *out new. */
static lp_err smp_list(struct smp *s, json_t *ol, const json_t *pl,
		       enum srv_list_strategy st, const char *mk,
		       json_t **out)
{
	enum ekind kind;
	lp_err rc;

	if (st == SRV_LIST_REPLACE)
		return smp_take(s, pl, out);
	if (json_array_size(ol) == 0 && json_array_size(pl) == 0) {
		*out = json_array();
		return *out ? LP_OK : nomem(s->err);
	}
	rc = smp_elem_kind(s, ol, pl, &kind);
	if (rc)
		return rc;
	if (kind != EK_OBJECT) {
		if (mk)
			return srv_error_set(s->err, LP_E_BADREQUEST,
					     "%s: list elements are not "
					     "objects but the list merges by "
					     "key %s",
					     s->path, mk);
		return smp_list_scalars(s, ol, pl, out);
	}
	if (!mk)
		return srv_error_set(s->err, LP_E_BADREQUEST,
				     "cannot merge lists without merge key "
				     "for %s",
				     s->path);
	return smp_list_keyed(s, ol, pl, mk, out);
}

/* $retainKeys: check that the patch sets only retained keys, then drop
   the document's others. */
static lp_err smp_retain(struct smp *s, json_t *orig, const json_t *patch)
{
	const json_t *rk = json_object_get(patch, DIR_RETAIN);
	json_t *set = NULL, *v;
	const char *k;
	void *tmp;
	size_t i;
	lp_err rc = LP_OK;

	if (!rk)
		return LP_OK;
	if (!json_is_array(rk))
		goto bad;
	set = json_object();
	if (!set)
		return nomem(s->err);
	json_array_foreach(rk, i, v) {
		if (!json_is_string(v) ||
		    strlen(json_string_value(v)) != json_string_length(v))
			continue; /* matches no key */
		if (json_object_set_new(set, json_string_value(v),
					json_true())) {
			rc = nomem(s->err);
			goto done;
		}
	}
	json_object_foreach(mut(patch), k, v) {
		if (json_is_null(v) || strcmp(k, DIR_RETAIN) == 0 ||
		    strcmp(k, DIR_PATCH) == 0 || has_prefix(k, DIR_ORDER) ||
		    has_prefix(k, DIR_DELETE_PRIM))
			continue;
		if (!json_object_get(set, k))
			goto bad;
	}
	json_object_foreach_safe(orig, tmp, k, v) {
		if (!json_object_get(set, k))
			json_object_del(orig, k);
	}
done:
	json_decref(set);
	return rc;
bad:
	json_decref(set);
	return srv_error_set(s->err, LP_E_BADREQUEST,
			     "invalid patch format of retainKeys");
}

/* kube's validatePatchWithSetOrderList: the patch list's elements (but
   deletions and directives) appear in the order list, in its order. */
static lp_err smp_check_order(struct smp *s, const json_t *pl,
			      const json_t *order, const char *mk)
{
	size_t p = 0, o = 0, np = json_array_size(pl), no;
	char *pk = NULL, *ok = NULL;
	const char *dir;
	lp_err rc;

	no = json_array_size(order);
	if (np == 0 || no == 0)
		return LP_OK;
	while (p < np && o < no) {
		const json_t *pe = json_array_get(pl, p);
		if ((rc = smp_elem_directive(s, pe, &dir)))
			return rc;
		if (dir) {
			p++;
			continue;
		}
		if ((rc = smp_key(s, pe, mk, true, &pk)))
			return rc;
		rc = smp_key(s, json_array_get(order, o), mk, true, &ok);
		if (rc) {
			pfree(pk);
			return rc;
		}
		if (strcmp(pk, ok) == 0)
			p++;
		o++;
		pfree(pk);
		pfree(ok);
	}
	for (; p < np; p++) {
		if ((rc = smp_elem_directive(s, json_array_get(pl, p), &dir)))
			return rc;
		if (!dir)
			return srv_error_set(s->err, LP_E_BADREQUEST,
					     "The order in patch list %s "
					     "doesn't match %s list",
					     s->path, DIR_ORDER);
	}
	return LP_OK;
}

/* One $setElementOrder/<name>: merge the list <name> now and order it.
   Marks name in *done so that the main loop skips the patch's list. */
static lp_err smp_set_order(struct smp *s, json_t *orig, const json_t *patch,
			    const char *dkey, const json_t *order,
			    json_t **done)
{
	const char *name = dkey + strlen(DIR_ORDER);
	json_t *ol, *merged = NULL, *res = NULL;
	const json_t *pl;
	enum srv_list_strategy st;
	enum ekind kind;
	const char *mk;
	size_t saved;
	lp_err rc;

	if (name[0] != '/' || !name[1] || !json_is_array(order))
		return srv_error_set(s->err, LP_E_BADREQUEST,
				     "invalid patch format of setElementOrder "
				     "list");
	name++;
	ol = json_object_get(orig, name);
	pl = json_object_get(patch, name);
	if ((ol && !json_is_array(ol)) || (pl && !json_is_array(pl)))
		return srv_error_set(s->err, LP_E_BADREQUEST,
				     "invalid patch format of setElementOrder "
				     "list: %s is not a list",
				     name);
	if (!*done && !(*done = json_object()))
		return nomem(s->err);
	if (json_object_set_new(*done, name, json_true()))
		return nomem(s->err);
	if (!ol && !pl)
		return LP_OK;
	if ((rc = smp_push(s, name, &saved)))
		return rc;
	if ((rc = smp_strategy(s, &st, &mk)) ||
	    (rc = smp_elem_kind(s, ol, pl, &kind)) ||
	    (rc = smp_check_order(s, pl, order, mk)))
		goto done;
	if (!pl)
		merged = json_incref(ol);
	else if (!ol)
		rc = smp_take(s, pl, &merged);
	else
		rc = smp_list(s, ol, pl, st, mk, &merged);
	if (rc)
		goto done;
	if (json_array_size(merged) == 0) {
		res = json_incref(merged);
	} else {
		/* ol stays in orig until the set below, so its elements
		   are still the document's order */
		rc = smp_reorder(s, merged, order, ol, mk, &res);
		if (rc)
			goto done;
	}
	if (json_object_set_new(orig, name, res))
		rc = nomem(s->err);
done:
	json_decref(merged);
	smp_pop(s, saved);
	return rc;
}

/* $deleteFromPrimitiveList/<name>: remove the listed values. */
static lp_err smp_delete_prim(struct smp *s, json_t *orig, const char *dkey,
			      const json_t *pv)
{
	const char *name = dkey + strlen(DIR_DELETE_PRIM);
	struct keys pk = { 0 };
	json_t *ol, *set = NULL, *res = NULL, *e;
	enum ekind kind;
	size_t saved, i;
	char *key;
	lp_err rc;

	if (name[0] != '/' || !name[1])
		return srv_error_set(s->err, LP_E_BADREQUEST,
				     "invalid patch format of primitive list");
	/* a value that is no list is of another type than the list it
	   names (or than nothing): kube's mergeMap skips a delete list
	   whose type differs */
	if (!json_is_array(pv))
		return LP_OK;
	name++;
	ol = json_object_get(orig, name);
	if (!json_is_array(ol))
		return LP_OK;
	if ((rc = smp_push(s, name, &saved)))
		return rc;
	if ((rc = smp_elem_kind(s, ol, pv, &kind)))
		goto done;
	if (kind == EK_OBJECT) {
		rc = srv_error_set(s->err, LP_E_BADREQUEST,
				   "invalid patch format of primitive list");
		goto done;
	}
	if ((rc = keys_of(s, pv, NULL, true, &pk)) ||
	    (rc = index_of(s, &pk, &set)))
		goto done;
	res = json_array();
	if (!res) {
		rc = nomem(s->err);
		goto done;
	}
	json_array_foreach(ol, i, e) {
		bool gone;
		if ((rc = smp_key(s, e, NULL, true, &key)))
			goto done;
		gone = json_object_get(set, key) != NULL;
		pfree(key);
		if (!gone && json_array_append(res, e)) {
			rc = nomem(s->err);
			goto done;
		}
	}
	rc = json_object_set_new(orig, name, res) ? nomem(s->err) : LP_OK;
	res = NULL;
done:
	json_decref(res);
	json_decref(set);
	keys_free(&pk);
	smp_pop(s, saved);
	return rc;
}

/* One ordinary member k of the patch. */
static lp_err smp_field(struct smp *s, json_t *orig, const char *k,
			const json_t *pv)
{
	json_t *ov, *nv = NULL;
	enum srv_list_strategy st;
	const char *mk;
	bool del = false;
	size_t saved;
	lp_err rc;

	if (json_is_null(pv)) {
		json_object_del(orig, k);
		return LP_OK;
	}
	if ((rc = smp_push(s, k, &saved)))
		return rc;
	ov = json_object_get(orig, k);
	if (!ov || ekind_of(ov) != ekind_of(pv)) {
		rc = smp_take(s, pv, &nv);
	} else if (json_is_object(ov)) {
		rc = smp_map(s, ov, pv, &del);
		if (!rc && del)
			json_object_del(orig, k);
		goto done;
	} else if (json_is_array(ov)) {
		rc = smp_strategy(s, &st, &mk);
		if (!rc)
			rc = smp_list(s, ov, pv, st, mk, &nv);
	} else {
		nv = json_deep_copy(pv);
		if (!nv)
			rc = nomem(s->err);
	}
	if (rc)
		goto done;
	if (!nv)
		json_object_del(orig, k);
	else if (json_object_set_new(orig, k, nv))
		rc = nomem(s->err);
done:
	smp_pop(s, saved);
	return rc;
}

/*
 * Merge the object patch into the object orig (in the working copy), kube's
 * mergeMap. *deleted: the patch says $patch: delete, and the caller removes
 * orig (upstream leaves an empty map there). Recursion: bounded by the
 * patch's depth, which the entry point checked.
 */
static lp_err smp_map(struct smp *s, json_t *orig, const json_t *patch,
		      bool *deleted)
{
	const json_t *d = json_object_get(patch, DIR_PATCH);
	json_t *done = NULL, *pv;
	const char *k;
	lp_err rc;

	if (d) {
		const char *dv = json_string_value(d);
		if (dv && strcmp(dv, "delete") == 0) {
			*deleted = true;
			return LP_OK;
		}
		if (dv && strcmp(dv, "replace") == 0)
			json_object_clear(orig);
		else if (!dv || strcmp(dv, "merge") != 0)
			return srv_error_set(s->err, LP_E_BADREQUEST,
					     "unknown patch type: %s in map %s",
					     dv ? dv : "(not a string)",
					     s->path);
	}
	if ((rc = smp_retain(s, orig, patch)))
		return rc;
	json_object_foreach(mut(patch), k, pv) {
		if (!has_prefix(k, DIR_ORDER))
			continue;
		if ((rc = smp_set_order(s, orig, patch, k, pv, &done)))
			goto done;
	}
	json_object_foreach(mut(patch), k, pv) {
		if (strcmp(k, DIR_PATCH) == 0 || strcmp(k, DIR_RETAIN) == 0 ||
		    has_prefix(k, DIR_ORDER) || has_prefix(k, DIR_DELETE_PRIM))
			continue;
		if (done && json_object_get(done, k))
			continue;
		if ((rc = smp_field(s, orig, k, pv)))
			goto done;
	}
	/* Deletions last, so that a patch adding and deleting the same value
	   ends without it whatever the order of its members. */
	json_object_foreach(mut(patch), k, pv) {
		if (!has_prefix(k, DIR_DELETE_PRIM))
			continue;
		if ((rc = smp_delete_prim(s, orig, k, pv)))
			goto done;
	}
	*deleted = false;
done:
	json_decref(done);
	return rc;
}

lp_err srv_strategic_merge_patch(const json_t *doc, const json_t *patch,
				 const struct srv_smp_schema *schema,
				 json_t **out, struct srv_error *err)
{
	struct smp s = { .schema = schema, .err = err };
	json_t *res = NULL;
	bool del = false;
	lp_err rc;

	if (!doc || !patch || !out)
		return srv_error_set(err, LP_E_INVAL,
				     "strategic merge patch: no input");
	if (!json_is_object(doc))
		return srv_error_set(err, LP_E_INVAL,
				     "strategic merge patch: the document is "
				     "not an object");
	if (!json_is_object(patch))
		return srv_error_set(err, LP_E_BADREQUEST,
				     "error decoding patch: the patch is not "
				     "a JSON object");
	if (too_deep(patch))
		return srv_error_set(err, LP_E_BADREQUEST,
				     "the patch nests deeper than %d levels",
				     PATCH_MAX_DEPTH);
	if (too_deep(doc))
		return srv_error_set(err, LP_E_INVALID,
				     "the object nests deeper than %d levels",
				     PATCH_MAX_DEPTH);
	s.cap = 64;
	s.path = pmalloc(s.cap);
	res = json_deep_copy(doc);
	if (!s.path || !res) {
		rc = nomem(err);
		goto fail;
	}
	s.path[0] = '\0';
	rc = smp_map(&s, res, patch, &del);
	if (rc)
		goto fail;
	if (del)
		json_object_clear(res);
	pfree(s.path);
	*out = res;
	return LP_OK;
fail:
	json_decref(res);
	pfree(s.path);
	return rc;
}
