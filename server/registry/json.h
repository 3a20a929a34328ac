/*
 * json.h -- JSON text <-> jansson trees on the hot paths: a loader and a
 * compact dumper that give exactly jansson 2.14's results, faster for what
 * Kubernetes objects are made of (ASCII and UTF-8 strings, small integers,
 * objects a few levels deep).
 *
 * Each has a fast path of its own and falls back to jansson itself
 * (json_loadb, json_dumps) whenever the input steps outside what the fast
 * path is sure of, so every error, message, line and column, and every
 * odd case, is jansson's own. The trees are ordinary jansson trees.
 *
 * Pure, any thread.
 */
#ifndef LAPIS_REG_JSON_H
#define LAPIS_REG_JSON_H

#include <jansson.h>
#include <stddef.h>

/*
 * Parse n bytes at p as json_loadb(p, n, flags, err) does: the same tree
 * (same values, types and key order) or NULL with the same *err (err may be
 * NULL). Flags the fast path knows: JSON_REJECT_DUPLICATES,
 * JSON_DECODE_ANY, JSON_ALLOW_NUL, JSON_DISABLE_EOF_CHECK; any other flag
 * goes to jansson directly.
 * Returns a new reference.
 */
json_t *reg_json_load(const char *p, size_t n, size_t flags, json_error_t *err);

/*
 * Encode v as json_dumps(v, JSON_COMPACT) does, byte for byte: a new
 * NUL-terminated string allocated with malloc (free it with free), its
 * length in *len (len may be NULL). NULL where jansson fails: v neither an
 * object nor an array, a string that is not valid UTF-8, a cycle; or out of
 * memory.
 */
char *reg_json_dump(const json_t *v, size_t *len);

/* For tests and the fuzzer, which must see the fast paths at work. */

/* The loader's fast path alone: the tree, or NULL where reg_json_load would
   ask json_loadb. Same flags as reg_json_load (others: NULL). New. */
json_t *reg__json_load_fast(const char *p, size_t n, size_t flags);

/* True when a and b are the same tree: json_equal, and also the same key
   order in every object and the same type (integer or real) everywhere. */
int reg__json_identical(const json_t *a, const json_t *b);

#endif
