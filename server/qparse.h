/*
 * qparse.h -- the integers of a request's query: resourceVersion, limit,
 * timeoutSeconds, gracePeriodSeconds. Kubernetes reads them with Go's
 * strconv (ParseUint for a resourceVersion, ParseInt for the rest, through
 * apimachinery's query-parameter conversion); these functions accept the
 * same texts, so that what kube refuses with 400 lapis refuses too.
 *
 * Pure, any thread. Both write *out only on success. Fuzzed by
 * fuzz/fuzz_qparse.c against an independent model of the rules.
 */
#ifndef LAPIS_QPARSE_H
#define LAPIS_QPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "lapis/err.h"

/* What srv_parse_rv writes for an absent or empty resourceVersion: no
   revision was asked for, which kube treats differently from "0" (any
   revision). Negative, because no revision text can give it. */
#define SRV_RV_UNSET (-1)

/*
 * A resourceVersion. NULL or "" gives SRV_RV_UNSET. Otherwise the text is
 * one or more ASCII decimal digits and nothing else (no sign, no '+', no
 * spaces; leading zeros are allowed, as ParseUint allows them), with a
 * value of at most INT64_MAX; "0" gives 0.
 * Errors: LP_E_BADREQUEST for anything else, an overflow included.
 */
lp_err srv_parse_rv(const char *s, int64_t *out);

/*
 * A query integer as Go's strconv.ParseInt(s, 10, 64) reads it: an
 * optional '+' or '-', then one or more ASCII decimal digits and nothing
 * else; then the value must lie in [min, max].
 * Errors: LP_E_BADREQUEST for NULL, "", a syntax error, a value beyond
 * int64 or outside [min, max]. Callers that take an empty parameter as
 * absent test for "" first.
 */
lp_err srv_parse_int(const char *s, int64_t min, int64_t max, int64_t *out);

/* An int64 query parameter as kube's conversion reads it (strconv.ParseInt,
   base 10): NULL and its value in *out, or Go's reason, "invalid syntax"
   ("" too) or "value out of range", for "strconv.ParseInt: parsing %q: %s". */
const char *srv_go_parse_int(const char *s, int64_t *out);

/*
 * A duration as Go's time.ParseDuration reads it (kube's `timeout` query
 * parameter): an optional sign, then "0" or one or more decimal numbers,
 * each with an optional fraction and a unit (ns, us, µs, μs, ms, s, m, h).
 * *ns gets nanoseconds. Errors: LP_E_BADREQUEST, with Go's message
 * ("time: invalid duration \"x\"", "time: missing unit in duration ...",
 * "time: unknown unit ...") in msg.
 */
lp_err srv_parse_duration(const char *s, int64_t *ns, char *msg, size_t cap);

#endif
