/*
 * object.h -- Kubernetes objects as stored bytes (DESIGN.md "Keys, values,
 * revisions"): the canonical field order, the revision slot, continue
 * tokens, uids and timestamps.
 *
 * Pure, any thread.
 */
#ifndef LAPIS_REG_OBJECT_H
#define LAPIS_REG_OBJECT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lapis/err.h"

struct reg_json_order;

/*
 * Put obj's members in kube's order (kind, apiVersion, metadata first;
 * metadata's own fields in ObjectMeta order) in place.
 */
void reg_canonical(json_t *obj);

/* That order, for reg_json_dump_ordered (json.h), with
   metadata.resourceVersion as the mark (reg_encode's slot). */
extern const struct reg_json_order reg_canon_order;

/*
 * Whether obj is a custom resource: its apiVersion's group is not one of
 * kube's own. kube encodes those from a map tree, every object's members
 * sorted by key; its own kinds are Go structs, fields in declaration order
 * and map fields sorted.
 */
bool reg_is_custom(const json_t *obj);

/*
 * Encode obj compactly, in kube's order: a custom resource with every
 * object's members sorted by key, a built-in kind in reg_canonical's order
 * with its map fields (labels, annotations, data, binaryData, a Service's
 * selector) sorted. With
 * metadata.resourceVersion left as a revision slot: *out (malloc'd) holds
 * the JSON with an empty resourceVersion string and *slot the offset where
 * the engine splices the revision's digits. Where obj's resourceVersion is
 * already "", obj is left as it is (the order is the dump's); otherwise it
 * is reordered in place and its resourceVersion overwritten.
 * Errors: LP_E_NOMEM.
 */
lp_err reg_encode(json_t *obj, char **out, size_t *len, uint32_t *slot);

/* n random bytes (n <= 64) from the kernel's generator, drawn from a
   per-thread block that one getrandom(2) fills. */
void reg_random(void *out, size_t n);
/* A random RFC 4122 version 4 UUID, lowercase text, into buf[37]. */
void reg_uuid(char buf[37]);
/* Now as RFC 3339 UTC with seconds ("2025-05-01T10:20:30Z"), buf[21]. */
void reg_now(char buf[32]);

/* Lists of strings such as metadata.finalizers (arr may be NULL or not an
   array): whether s is in it; remove every copy of s, true when any. */
bool reg_strings_has(const json_t *arr, const char *s);
bool reg_strings_drop(json_t *arr, const char *s);

/*
 * Set a condition in obj's status.conditions (both made when missing) the
 * way kube's condition helpers do: lastTransitionTime moves only when the
 * status changes. True when obj changed.
 */
bool reg_set_condition(json_t *obj, const char *type, const char *status,
		       const char *reason, const char *message);

/* base64url without padding (RFC 4648 §5) of n bytes: new, NULL when out
   of memory. */
char *reg_b64url(const unsigned char *s, size_t n);
/* Standard base64 with padding (RFC 4648 §4), as Go encodes []byte: new,
   NULL when out of memory. */
char *reg_b64(const unsigned char *s, size_t n);
/* Decode base64url (padding tolerated at the end): new, *out_len bytes;
   NULL when malformed or out of memory. */
unsigned char *reg_unb64url(const char *s, size_t *out_len);

/*
 * Continue tokens, as kube encodes them (reference §3.4):
 * base64url-nopad of {"v":"meta.k8s.io/v1","rv":RV,"start":"<suffix>"}.
 * encode: new malloc'd string. decode: *rv and a malloc'd *start.
 * Errors: LP_E_BADREQUEST (with a message in msg) for any malformed token,
 * LP_E_NOMEM.
 */
char *reg_continue_encode(int64_t rv, const char *start, size_t start_len);
/* The same with the number of objects left after this page in "n" (an
   extra member kube's clients ignore), under the range prefix it counts:
   the next page, read at the same revision, then needs no count. "nh"
   checks n against the prefix, the revision and the start key, so that a
   token altered or used in another range is counted anew, as kube counts
   every page. n < 0: omitted. */
char *reg_continue_encode_n(int64_t rv, const char *start, size_t start_len,
			    int64_t n, const void *prefix, size_t prefix_len);
/* The "n" of a token listing under prefix, or -1 when it has none, is
   malformed or does not pass its check. */
int64_t reg_continue_remaining(const char *tok, const void *prefix,
			       size_t prefix_len);
lp_err reg_continue_decode(const char *tok, int64_t *rv, char **start,
			   size_t *start_len, char *msg, size_t msg_len);

#endif
