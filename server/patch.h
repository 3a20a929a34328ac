/*
 * patch.h -- the three PATCH formats kube serves, on jansson documents:
 * JSON merge patch (RFC 7386), JSON patch (RFC 6902) and Kubernetes
 * strategic merge patch (apimachinery's strategicpatch package).
 *
 * Pure functions, any thread. Inputs are borrowed and never modified; the
 * result is new. Errors fill err: LP_E_BADREQUEST for a malformed patch
 * (kube answers 400), LP_E_INVALID (422) where kube answers that, e.g. a
 * JSON patch `test` that fails or a path that does not exist is 422 Invalid
 * in kube ("the server rejected our request due to an error in our request")
 * -- the exact codes are documented per function.
 */
#ifndef LAPIS_PATCH_H
#define LAPIS_PATCH_H

#include <jansson.h>

#include "srv_error.h"

/* The lp_err functions answer LP_E_INVAL to a NULL doc, patch, ops or out. */

/* RFC 7386: a null member deletes, objects merge recursively, anything else
   replaces. A non-object patch replaces the whole document. As kube applies
   it (evanphx/json-patch v4): nulls inside newly added subtrees are dropped,
   and a patch that is null, a string, a number or a boolean is
   LP_E_BADREQUEST ("Invalid JSON Patch"). LP_E_BADREQUEST also when the
   patch nests deeper than 1000 levels, LP_E_INVALID when the document does,
   LP_E_NOMEM. *out new, written only on success. */
lp_err srv_merge_patch(const json_t *doc, const json_t *patch, json_t **out,
		       struct srv_error *err);

/* RFC 6902: add, remove, replace, move, copy, test; JSON pointers with ~0 ~1
   escapes and "-" for the end of an array. All or nothing. As kube's
   evanphx/json-patch v4 applies them: an object's missing member reads as
   null (a replace of it adds it, a copy from it copies null, a test of
   null passes), a missing value is null (a test without one fails), a
   replace of the root by an object or array is the new document.
   LP_E_BADREQUEST: ops is not an array of objects, or an operation
   mistypes op, path or from, or ops nests deeper than 1000 levels.
   LP_E_ENTITYTOOLARGE: more than 10000 operations (kube's limit).
   LP_E_INVALID with kube's message "the server rejected our request due to
   an error in our request" when an operation does not apply: a path that
   does not exist, a bad array index, a failing test, a move into its own
   child, copies adding more than 3 MiB, a result deeper than 1000 levels.
   LP_E_NOMEM. *out new, written only on success. */
lp_err srv_json_patch(const json_t *doc, const json_t *ops, json_t **out,
		      struct srv_error *err);

/* What strategic merge needs to know of a type: for the list at a dotted
   path (array elements written as the field name only, e.g.
   "spec.ports", "subsets.addresses"), its patch strategy. */
enum srv_list_strategy {
	SRV_LIST_REPLACE,     /* atomic: the patch's list replaces */
	SRV_LIST_MERGE_KEYED, /* merge elements by merge_key */
	SRV_LIST_MERGE_SET,   /* primitive list merged as a set (finalizers) */
};
struct srv_smp_schema {
	/* Returns the strategy of the list at path; for MERGE_KEYED sets
	   *merge_key (static string). NULL schema: every list replaces. */
	enum srv_list_strategy (*list)(void *ud, const char *path,
				       const char **merge_key);
	void *ud;
};

/* Strategic merge patch: like merge patch for objects; lists by the
   schema's strategy; directives $patch (replace, merge, delete),
   $retainKeys, $setElementOrder/<list>, $deleteFromPrimitiveList/<list>.
   A map with $patch: delete is removed (upstream leaves {} there).
   LP_E_BADREQUEST: the patch is not an object, an unknown or malformed
   directive, a list element without its merge key, mixed element types,
   nesting deeper than 1000 levels. LP_E_INVALID: a list of lists (kube's
   422 message), a document deeper than 1000 levels. LP_E_INVAL: doc is not
   an object, or the schema names a keyed list without a merge key.
   LP_E_NOMEM. *out new, written only on success. */
lp_err srv_strategic_merge_patch(const json_t *doc, const json_t *patch,
				 const struct srv_smp_schema *schema,
				 json_t **out, struct srv_error *err);

/* Compute the merge patch that turns a into b (both objects); new. NULL
   when out of memory, when a or b is not an object, or when either nests
   deeper than 1000 levels. */
json_t *srv_merge_patch_diff(const json_t *a, const json_t *b);

/* Nesting depth of v (0 for a scalar), or limit + 1 as soon as it passes
   limit; limit at most SRV_PATCH_MAX_DEPTH. Iterative. */
#define SRV_PATCH_MAX_DEPTH 1000
int srv_json_height(const json_t *v, int limit);

/* The deepest a custom resource's create or update body may nest: what a
   patch takes as its document (SRV_PATCH_MAX_DEPTH), less the levels
   managedFields add above a field (metadata, the list, its entry,
   fieldsV1, a leaf's {}). Anything stored then reads back within the
   decoder's 2048 levels, and patches. */
#define SRV_BODY_MAX_DEPTH (SRV_PATCH_MAX_DEPTH - 8)

#endif
