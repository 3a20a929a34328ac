/*
 * selector.h -- label and field selectors: parse once per request, match per
 * object (apimachinery's labels and fields packages, as of Kubernetes 1.33).
 *
 * Label selector grammar: comma-separated requirements, each one of
 *   key | !key | key=value | key==value | key!=value |
 *   key in (v1,v2) | key notin (v1,v2) | key > N | key < N  (N an integer)
 * with kube's validation of keys (optional DNS-subdomain prefix "/" name of
 * at most 63 characters) and values (at most 63 characters, alphanumeric at
 * both ends, '-', '_', '.' inside). Whitespace around tokens is allowed.
 *
 * Field selector grammar: comma-separated `field=value`, `field==value` or
 * `field!=value`; a backslash escapes ',', '=' and '\' in values (any other
 * escape, `\!` included, is an error, as upstream).
 *
 * Pure, any thread. Parse errors fill err with LP_E_BADREQUEST and kube's
 * message (e.g. `unable to parse requirement: ...`); LP_E_NOMEM when memory
 * runs out. *out is written only on success. A parsed selector is immutable:
 * it may be shared by threads until it is freed.
 */
#ifndef LAPIS_SELECTOR_H
#define LAPIS_SELECTOR_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "srv_error.h"

typedef struct srv_lsel srv_lsel;
typedef struct srv_fsel srv_fsel;

/* Parse; "" or NULL gives an empty selector (matches everything). *out new. */
lp_err srv_lsel_parse(const char *s, srv_lsel **out, struct srv_error *err);
/* Match against an object's metadata.labels (object of strings; NULL = no
   labels). labels is borrowed for the call. A NULL sel matches. */
bool srv_lsel_match(const srv_lsel *sel, const json_t *labels);
bool srv_lsel_empty(const srv_lsel *sel);
void srv_lsel_free(srv_lsel *sel);

/* Parse; "" or NULL gives an empty selector. An empty field name (`=x`)
   parses: the resource's field labels refuse it. *out new. */
lp_err srv_fsel_parse(const char *s, srv_fsel **out, struct srv_error *err);
bool srv_fsel_empty(const srv_fsel *sel);
/* The requirements, for checking fields against what a resource supports,
   in kube's order (sorted terms). The field is borrowed until
   srv_fsel_free; NULL when i >= count. */
size_t srv_fsel_count(const srv_fsel *sel);
const char *srv_fsel_field(const srv_fsel *sel, size_t i);
/* kube's RequiresExactMatch: the value that an `=`/`==` term requires of
   field (the first such term in kube's order), borrowed until srv_fsel_free;
   NULL when no term requires one. For metadata.name / metadata.namespace
   lookups that narrow a list. */
const char *srv_fsel_exact(const srv_fsel *sel, const char *field);
/* What get may return for a value no selector's can equal: a string that
   holds a NUL (a custom resource's), which a query's value cannot. */
extern const char srv_fsel_unequal[];
/* Match: get(ud, field) returns the object's value of that field (borrowed),
   NULL when it has none (compared as ""), or srv_fsel_unequal. A NULL sel
   matches. */
bool srv_fsel_match(const srv_fsel *sel,
		    const char *(*get)(void *ud, const char *field), void *ud);
void srv_fsel_free(srv_fsel *sel);

#endif
