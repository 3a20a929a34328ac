/*
 * jsonpath.h -- client-go's JSONPath templates (k8s.io/client-go/util/
 * jsonpath), as kube's CRD table convertor uses them for printer columns:
 * the column's jsonPath is parsed as the template "{<jsonPath>}" and a
 * cell is the first value of the template's first part, found with
 * missing keys allowed.
 *
 * The grammar is client-go's parser's: fields `.a` (a backslash escapes
 * the next character: `.metadata.labels.app\.kubernetes\.io/name`), `.*`,
 * recursive descent `..a`, `[N]` and slices `[start:end:step]` (negative
 * counting from the end), `[*]`, unions `[0,2]` and `['a','b']`, dict keys
 * `['a']` (read back as a field path), filters `[?(@.a op value)]` with
 * ==, !=, <, >, <=, >= and `[?(@.a)]`, quoted texts, numbers and booleans,
 * and text outside braces. Evaluation follows client-go too, errors
 * included: an index out of range, a filter or index applied to what is
 * not a list, a comparison of different types, or the identifiers `range`
 * and `end` (templates, not columns) make the whole result an error, which
 * a cell shows as null. Objects are walked in their key order where Go's
 * map order is random (wildcards, recursive descent).
 *
 * Pure, any thread.
 */
#ifndef LAPIS_JSONPATH_H
#define LAPIS_JSONPATH_H

#include <jansson.h>
#include <stddef.h>

struct srv_jsonpath;

/* Parse the template text. NULL with client-go's parse error in err
   (errcap bytes; err may be NULL) when client-go's parser refuses it, or
   out of memory. */
struct srv_jsonpath *srv_jsonpath_parse(const char *text, char *err,
					size_t errcap);

/* Parse a printer column's jsonPath as kube does: the template
   "{<path>}". */
struct srv_jsonpath *srv_jsonpath_column(const char *path);

void srv_jsonpath_free(struct srv_jsonpath *p);

/*
 * The first value the template's first part finds in doc, or NULL when it
 * finds nothing or its evaluation fails. The value is borrowed from doc,
 * or (a text, number or boolean of the template itself) a new value kept
 * in *keep, which the caller json_decref()s (NULL when nothing was made).
 */
json_t *srv_jsonpath_eval_first(const struct srv_jsonpath *p,
				const json_t *doc, json_t **keep);

/* srv_jsonpath_column(path) evaluated once on doc: the first value,
   borrowed from doc (a path that yields a template's own text, number or
   boolean gives NULL), or NULL. For the scale subresource's paths. */
json_t *srv_jsonpath_first(const json_t *doc, const char *path);

#endif
