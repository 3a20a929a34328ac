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
 * Numbers are where both part from jansson, to answer as kube-apiserver
 * (Go's encoding/json) does: integers beyond int64 load as reals, and
 * reals dump in Go's shortest form. What one dumps, the other loads.
 *
 * Pure, any thread.
 */
#ifndef LAPIS_REG_JSON_H
#define LAPIS_REG_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Parse n bytes at p as json_loadb(p, n, flags, err) does: the same tree
 * (same values, types and key order) or NULL with the same *err (err may be
 * NULL), with one exception: an integer beyond int64, which jansson refuses
 * ("too big integer"), is read as a real, as Go reads a JSON number into
 * interface{} (kube's decoding of custom resources) and as reg_json_dump
 * writes such a real back (12345678901234567000). Flags the fast path
 * knows: JSON_REJECT_DUPLICATES, JSON_DECODE_ANY, JSON_ALLOW_NUL,
 * JSON_DISABLE_EOF_CHECK; any other flag goes to jansson directly.
 * Returns a new reference.
 */
json_t *reg_json_load(const char *p, size_t n, size_t flags, json_error_t *err);

/* The value of the hex digit c (either case), or -1. */
int reg_hex_digit(int c);

/*
 * Encode v as json_dumps(v, JSON_COMPACT) does, byte for byte, except for
 * reals, which are written as Go's encoding/json writes a float64
 * (reg_go_float), since that is what kube-apiserver answers: a new
 * NUL-terminated string allocated with malloc (free it with free), its
 * length in *len (len may be NULL). NULL where jansson fails: v neither an
 * object nor an array, a string that is not valid UTF-8, a cycle; or out of
 * memory. (A tree deeper than the dumper's own limit, or holding a key that
 * is not UTF-8, goes to json_dumps whole, reals and all.)
 */
char *reg_json_dump(const json_t *v, size_t *len);

/*
 * Members an ordered dump writes first, in this order, at one level of an
 * object (at most REG_JSON_ORDER_MAX keys); the others follow in the
 * tree's order. The member named child, when it is an object, is written
 * in child_order; the member named mark is the one whose value's offset
 * reg_json_dump_ordered reports. child and mark may be NULL. sorted (read
 * at the top level only): the others follow in byte order of their keys,
 * and every object below is written with its members in that order, as Go
 * encodes a map[string]interface{} tree.
 */
#define REG_JSON_ORDER_MAX 16
struct reg_json_order {
	const char *const *keys;
	size_t n_keys;
	const char *child;
	const struct reg_json_order *child_order;
	const char *mark;
	bool sorted;
};

/*
 * The object v as reg_json_dump writes it after its members (and child's)
 * were moved into ord's order, without moving them: new, malloc'd (free
 * with free), its length in *len; in *mark_off the offset of the first
 * byte of mark's value, or SIZE_MAX where none was written. NULL where
 * reg_json_dump would fail, and also where it would hand the tree to
 * json_dumps (see above): the caller then reorders the tree itself.
 */
char *reg_json_dump_ordered(const json_t *v, const struct reg_json_order *ord,
			    size_t *len, size_t *mark_off);

/*
 * v (any JSON value) as Go's encoding/json writes a map[string]interface{}
 * tree: reg_json_dump's text with every object's members in byte order of
 * their keys. New, malloc'd (free with free); NULL as reg_json_dump.
 */
char *reg_json_dump_sorted(const json_t *v, size_t *len);

/* Go's word for the JSON type of v in encoding/json's UnmarshalTypeError
   ("object", "array", "string", "bool", "number", "null"). */
const char *reg_go_type(const json_t *v);

/* Whether a string or a member name anywhere in v holds a NUL character
   (jansson keeps one given a length: the YAML and protobuf decoders). */
bool reg_json_has_nul(const json_t *v);

/* Room for any reg_go_float text, its NUL included. */
#define REG_GO_FLOAT_MAX 40

/*
 * x as Go's encoding/json writes a float64: the shortest digits that read
 * back as x, in %f form ("0.1", "1000", "-0") unless |x| is below 1e-6 or
 * from 1e21 on, where it is %e form with no leading zero in a negative
 * exponent ("1e+21", "1.5e-7"). x must be finite. Returns the length.
 */
size_t reg_go_float(double x, char out[REG_GO_FLOAT_MAX]);

/* The closing quote of the JSON string whose text (after its opening quote)
   starts at p, in [p, end), or NULL: a quote is escaped when an odd run
   of backslashes comes before it. Finds the candidates with memchr. */
const char *reg_json_string_end(const char *p, const char *end);

/* Length of the valid UTF-8 sequence that starts at s (RFC 3629: no
   overlong forms, no surrogates, nothing past U+10FFFF), or 0 where none
   does; n > 0 bytes are readable. */
size_t reg_utf8_seq(const unsigned char *s, size_t n);

/* One character at s decoded as Go's utf8.DecodeRune does: where no valid
   sequence starts, U+FFFD of width 1. Returns the width; n > 0. */
size_t reg_utf8_decode(const unsigned char *s, size_t n, uint32_t *r);

/* Go's unicode.IsPrint of a scalar (ASCII: space to '~'). Without
   Unicode's tables unassigned code points outside the known non-printing
   blocks count as printing. */
bool reg_go_isprint(uint32_t r);

/* cp (at most U+10FFFF) written at out as UTF-8 (1 to 4 bytes): returns
   the width. */
size_t reg_utf8_encode(char *out, uint32_t cp);

/* A NUL-terminated copy of n bytes at s with every byte that starts no
   valid UTF-8 sequence replaced by U+FFFD, as Go's encoding/json writes a
   string; its length in *len (len may be NULL). New (free), or NULL when
   out of memory. */
char *reg_utf8_copy(const char *s, size_t n, size_t *len);

/*
 * The JSON text at p (n bytes) with its strings as Go's decoder reads
 * them (encoding/json's unquote): a byte that starts no valid UTF-8
 * sequence becomes U+FFFD, and so does a \u escape of a surrogate that
 * does not start a valid pair (a following escape is read on its own).
 * Outside strings nothing changes. 0: nothing to change; 1: the new text
 * in *out (malloc, NUL-terminated), its length in *len; -1: no memory.
 */
int reg_json_go_strings(const char *p, size_t n, char **out, size_t *len);

/*
 * Go's encoding/json syntax check of n bytes at p (checkValid, which
 * json.Unmarshal runs over the whole input before it decodes anything):
 * 1 when they are one JSON value with only white space around it;
 * otherwise 0 and Go's SyntaxError text in msg (cap bytes, truncated):
 * "unexpected end of JSON input", "exceeded max depth" or "invalid
 * character 'x' <where>" with the byte quoted as Go's quoteChar does.
 * Go accepts what jansson refuses in strings (invalid UTF-8, \u0000) and
 * nests 10,000 deep.
 */
int reg_go_json_check(const char *p, size_t n, char *msg, size_t cap);

/* For tests and the fuzzer, which must see the fast paths at work. */

/* The loader's fast path alone: the tree, or NULL where reg_json_load would
   ask json_loadb. Same flags as reg_json_load (others: NULL). New. */
json_t *reg__json_load_fast(const char *p, size_t n, size_t flags);

/* True when a and b are the same tree: json_equal, and also the same key
   order in every object and the same type (integer or real) everywhere. */
int reg__json_identical(const json_t *a, const json_t *b);

/* True when ours, reg_json_dump's text of a tree, is jansson's, its
   json_dumps(JSON_COMPACT) of that same tree: the same bytes, except that
   reals may be written otherwise (Go's form) as long as both texts read
   back to equal numbers. */
int reg__json_dump_matches(const char *ours, const char *jansson);

#endif
