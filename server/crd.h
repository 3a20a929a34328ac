/*
 * crd.h -- CustomResourceDefinitions (crd.c): the CRD resource's strategy and
 * hooks, the inline naming/establishing decision, custom resources'
 * strategy and version conversion, and the serving map's life.
 */
#ifndef LAPIS_CRD_H
#define LAPIS_CRD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "lapis/engine.h"
#include "resources.h"

lp_err srv_prep_crd(const struct srv_resource *r, json_t *obj, const json_t *old,
		    struct srv_error *err);
lp_err srv_prep_crd_status(const struct srv_resource *r, json_t *obj,
			   const json_t *old, struct srv_error *err);
lp_err srv_prep_cr(const struct srv_resource *r, json_t *obj, const json_t *old,
		   struct srv_error *err);
/* A custom resource's stored bytes in the version r serves: *out (new) is
   set when they differ, NULL when the bytes serve as they are. Conversion
   is strategy None's, also for a Webhook CRD (lapis calls no webhook; see
   srv_cr_webhook_warning). */
lp_err srv_cr_convert(const struct srv_resource *r, const char *bytes,
		      size_t len, char **out, size_t *out_len,
		      struct srv_error *err);
/* The same for bytes last written at revision written, when their
   resourceVersion says another (a DELETED event's object carries the
   delete's revision over the content of the write before it). */
lp_err srv_cr_convert_at(const struct srv_resource *r, const char *bytes,
			 size_t len, int64_t written, char **out,
			 size_t *out_len, struct srv_error *err);
/* The Warning every request to a version other than the storage version
   of a Webhook CRD carries (lapis converts as with strategy None and says
   so), or NULL. Borrowed: valid while r is held. */
const char *srv_cr_webhook_warning(const struct srv_resource *r);
/* The Warning every request to r's version carries (a deprecated version),
   or NULL. Borrowed: valid while r is held. */
const char *srv_cr_deprecation(const struct srv_resource *r);
/* Add the kind's and its list's OpenAPI v3 schemas, as kube publishes a
   CRD version's (the openAPIV3Schema with type meta, an ObjectMeta
   reference and x-kubernetes-group-version-kind), to schemas. */
void srv_cr_openapi(const struct srv_resource *r, json_t *schemas);
/* kube's schema name for a CRD kind: "<reversed group>.<version>.<kind>". */
void srv_cr_schema_name(const struct srv_resource *r, const char *kind,
			char *buf, size_t n);
/* A number no other descriptor built in this process has (0: built-ins):
   what a CRD descriptor serves never changes while it keeps its serial. */
uint64_t srv_cr_serial(const struct srv_resource *r);
/* The version's compiled schema, or NULL. */
struct srv_schema;
const struct srv_schema *srv_cr_schema(const struct srv_resource *r);
/* A write of a version other than the storage version is stored pruned
   and defaulted by the storage version's schema: that schema, or NULL
   (the storage version itself, a Webhook CRD, no schema). */
const struct srv_schema *srv_cr_storage_schema(const struct srv_resource *r);
/* obj, a write being stored, as r's version sees it when that is not the
   storage version (kube's old object in PrepareForUpdate, and what its
   field manager tracks): a copy (new) with apiVersion r's and pruned by
   r's schema; NULL when obj is in r's version or r has no schema. */
json_t *srv_cr_request_view(const struct srv_resource *r, const json_t *obj);
/* Set obj's apiVersion to r's storage version (to_storage) or to r's
   own, the version a write is validated in (kube's handler version):
   conversion None changes nothing else. */
void srv_cr_set_version(const struct srv_resource *r, json_t *obj,
			bool to_storage);
/* Is r's CRD Established (true for a built-in)? One whose names are
   accepted is served before, but listed in discovery and OpenAPI only
   once it is, as kube's discovery and OpenAPI controllers list it. */
bool srv_cr_established(const struct srv_resource *r);
/* The version objects of r are stored in (r's own for a built-in). */
const char *srv_cr_storage_version(const struct srv_resource *r);
/* A stored object (decoded) as r's version serves it: apiVersion set and,
   conversion None, pruned by that version's schema. Nothing for the
   storage version. */
void srv_cr_to_served(const struct srv_resource *r, json_t *obj);
/* The version's scale subresource ({specReplicasPath, ...}) or NULL. */
const json_t *srv_cr_scale(const struct srv_resource *r);
/* Is r served in a version other than its storage version? */
bool srv_cr_needs_convert(const struct srv_resource *r);

/* Moves whenever a CRD's storage is torn down (the CRD deleted, or its spec
   or accepted names changed), as kube's crdHandler does. */
extern _Atomic uint64_t srv_crd_teardowns;

/* A create of a custom resource of r (held) brackets its commit with
   these: enter is false once srv_crd_fence closed r's CRD (kube's 405 for
   a terminating CRD then). True (and leave a no-op) for built-ins. */
bool srv_crd_enter(const struct srv_resource *r);
void srv_crd_leave(const struct srv_resource *r);
/* Close the CRD named name with that uid to creates and return how many
   are still between enter and leave (0 when the server serves no such
   CRD). Once it returns 0 no create of its instances can commit. */
long srv_crd_fence(const char *name, const char *uid);

/* Whether r (a custom resource's descriptor, held) is still what the
   server serves for its group, version and resource, from the same
   storage: watches on it end when it is not. True for built-ins. */
bool srv_cr_current(const struct srv_resource *r);
/* After a committed CRD write (name NULL: several CRDs): the serving map
   follows, and the written CRD's naming/establishing check runs inline.
   Any thread. */
void srv_crd_after_write(eng *e, const char *name);
/*
 * Create the CRD obj under k with its naming and establishing decided
 * inline: the object (the create's revision R) and then its status (R+1)
 * commit as one chain, one fsync, so watchers see ADDED then MODIFIED and
 * both are durable on return; the serving map (discovery, OpenAPI) has the
 * CRD by then. *out (malloc'd) holds the created object as stored at R,
 * what the 201 answers. If the status write fails the create stands and
 * the crd-naming controller decides later. Any thread (not under
 * map_mu). Errors: LP_E_EXISTS, LP_E_FULL, LP_E_NOMEM, engine errors.
 */
struct reg_key;
lp_err srv_crd_create(eng *e, const struct reg_key *k, json_t *obj, char **out,
		      size_t *out_len);
/*
 * Update the CRD under k to obj if the stored one is still at revision
 * mod, with its naming and establishing decided inline as for a create:
 * when the decision changes the status (new names accepted, a clash
 * resolved), the update (R) and the status (R+1, conditioned on R) commit
 * as one chain, one fsync, so watchers see MODIFIED then MODIFIED and both
 * are durable, and the serving map has both, on return. *out (malloc'd)
 * holds the object as updated at R, what the 200 answers (kube's update
 * returns it without the naming controller's later status). Any thread
 * (not under map_mu). Errors: LP_E_CONFLICT, LP_E_NOTFOUND (nothing was
 * written), LP_E_FULL, LP_E_NOMEM, engine errors.
 */
lp_err srv_crd_update(eng *e, const struct reg_key *k, json_t *obj, int64_t mod,
		      char **out, size_t *out_len);
/*
 * The crd-naming controller's write (struct ctl_store.crd_names): decide
 * the accepted names and conditions of the CRD named name, if it waits for
 * any, against the group's CRDs as stored and its built-ins, and write
 * them as its status conditioned on the resourceVersion read; uid (NULL:
 * any) must be its metadata.uid. *wrote: a status was written.
 * Errors: LP_E_NOTFOUND, LP_E_CONFLICT (another uid, or the CRD changed
 * meanwhile), LP_E_NOMEM, engine errors.
 */
lp_err srv_crd_settle(eng *e, const char *name, const char *uid, bool *wrote);
lp_err srv_crd_before_delete(eng *e, const json_t *crd);
/* Build the serving map from the store (start-up and after CRD writes). */
void srv_crds_refresh(eng *e);
/* Drop the map and wait for RCU callbacks (before the process exits). */
void srv_crds_shutdown(void);

/* kube's CompareKubeAwareVersionStrings: > 0 when version a sorts before b
   in discovery (GA over beta over alpha, then higher numbers first;
   versions that are not kube-like last, by name), 0 when equal. */
int srv_kube_version_cmp(const char *a, const char *b);

#endif
