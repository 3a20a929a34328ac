/*
 * managed.h -- metadata.managedFields and server-side apply (reference
 * §5.4 and §5.9; upstream: apimachinery's pkg/util/managedfields and
 * structured-merge-diff).
 *
 * Every write records who set which field: an entry per manager, operation
 * (Update or Apply), API version and subresource, holding the set of fields
 * it owns in the FieldsV1 form clients read ({"f:data":{".":{},"f:a":{}}}).
 *
 * - An update (create, PUT, merge/JSON/strategic patch, status) takes the
 *   fields it added or changed: the manager's Update entry gains them,
 *   every other entry loses them, and every entry loses the fields the
 *   write removed.
 * - An apply (application/apply-patch+yaml) sends the configuration the
 *   manager wants: it is merged into the live object (maps by key, lists by
 *   x-kubernetes-list-type: atomic lists replaced, sets united, map lists
 *   merged item by key), fields the manager applied before and leaves out
 *   now are removed unless another manager owns them, and the manager's
 *   Apply entry becomes exactly the configuration's fields. A change to a
 *   field another manager owns is a conflict (409, causes of reason
 *   FieldManagerConflict) unless force is set, which takes the field over.
 *   For the manager "kubectl", conflicts on fields of the client-side
 *   apply annotation are taken over as upstream does, and the annotation
 *   follows the applied configuration.
 *
 * Lists are keyed as in kube: metadata.finalizers is a set,
 * metadata.ownerReferences is keyed by uid; built-ins from their patch
 * strategies (spec.ports by port and protocol), custom resources from
 * their schema's x-kubernetes-list-type and x-kubernetes-list-map-keys. A
 * list whose items cannot be keyed (a missing key, a duplicate) is atomic.
 * A custom resource's x-kubernetes-map-type: atomic object is owned,
 * compared and replaced whole.
 *
 * Past ten Update entries the oldest are merged into "ancient-changes", one
 * per API version (upstream's capManagersManager).
 *
 * As upstream's skipNonAppliedManager, an update of an object that has no
 * entries (or whose write clears them) records none, and the first apply
 * to such an object first records what it holds as an Update by
 * "before-first-apply".
 *
 * Not done: field sets of another version of a custom resource (entries
 * of other versions are compared as if written in this one).
 *
 * Threads: any; no state of its own.
 */
#ifndef LAPIS_MANAGED_H
#define LAPIS_MANAGED_H

#include <jansson.h>
#include <stdbool.h>

#include "resources.h"
#include "srv_error.h"

/* Longest field manager name (FieldManagerMaxLength upstream). */
#define SRV_MF_MANAGER_MAX 128
/* Room for a manager as srv_mf_manager writes it: a fieldManager of 128
   bytes that are no UTF-8 becomes 128 U+FFFD of 3 bytes each. */
#define SRV_MF_MANAGER_BUF (3 * SRV_MF_MANAGER_MAX + 1)

struct srv_mf_op {
	const struct srv_resource *res;
	const char *manager;	 /* see srv_mf_manager */
	const char *api_version; /* the request's: "v1" or "<group>/<version>" */
	const char *subresource; /* NULL, "status", ... */
	/* srv_mf_apply: the configuration as the manager comes to own it,
	   without the fields its type does not have (NULL: config) */
	const json_t *owned;
};

/* The manager of a write, always UTF-8: fieldManager when given (a byte
   that starts no UTF-8 character becomes U+FFFD), else the User-Agent up
   to its first '/', printable characters only, whole, at most
   SRV_MF_MANAGER_MAX bytes, into buf (SRV_MF_MANAGER_BUF bytes).
   Returns buf. */
const char *srv_mf_manager(const char *field_manager, const char *user_agent,
			   char *buf, size_t n);

/* Check a fieldManager query parameter (length, printable). Adds a cause on
   field "fieldManager" and returns LP_E_INVALID when it is bad. */
lp_err srv_mf_check_manager(const char *field_manager, struct srv_error *err);

/*
 * Record a non-apply write of next (old NULL: a create) in next's
 * metadata.managedFields. The entries to start from are the ones next
 * carries when the client sent any (validated: operation Apply or Update,
 * fieldsType FieldsV1, manager length), else old's; [{}] clears them; an
 * update (old not NULL) that starts from none records none. LP_E_INVALID with
 * causes on metadata.managedFields for bad entries; LP_E_NOMEM.
 */
lp_err srv_mf_update(const struct srv_mf_op *op, const json_t *old,
		     json_t *next, struct srv_error *err);

/*
 * Server-side apply of config (an object) onto live (NULL: the object does
 * not exist). *out (new) is the merged object with its managedFields.
 * LP_E_CONFLICT with causes when the apply changes fields other managers
 * own and force is not set; LP_E_BADREQUEST when config or its metadata
 * is not an object; LP_E_NOMEM.
 */
lp_err srv_mf_apply(const struct srv_mf_op *op, const json_t *live,
		    const json_t *config, bool force, json_t **out,
		    struct srv_error *err);

#endif
