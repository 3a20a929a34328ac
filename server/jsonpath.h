/*
 * jsonpath.h -- the subset of client-go's JSONPath that CRD printer columns
 * and scale paths use: `.a.b`, `['a.b']`, `[N]`, `[*]`, `..` is not
 * supported, filters `[?(@.x=="v")]` / `[?(@.x!="v")]` / `[?(@.x)]`.
 *
 * Pure, any thread.
 */
#ifndef LAPIS_JSONPATH_H
#define LAPIS_JSONPATH_H

#include <jansson.h>
#include <stdbool.h>

/* The first value path finds in doc (borrowed), or NULL. Missing keys are
   allowed (NULL); a malformed path gives NULL. */
json_t *srv_jsonpath_first(const json_t *doc, const char *path);

/* Is path well-formed for this subset? */
bool srv_jsonpath_valid(const char *path);

#endif
