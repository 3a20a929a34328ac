/*
 * crdnames.h -- the naming and establishing decision for a
 * CustomResourceDefinition (reference §8.3): which of its requested names
 * it may have, given the names the other CRDs and the built-in resources
 * of its group hold, and its NamesAccepted and Established conditions.
 *
 * Pure: it reads the CRD and a set of taken names and builds a status; it
 * neither reads nor writes the store. The API server decides with it
 * inline, at create and update (server/crd.c), and the crd-naming
 * controller (controllers/crdnames.c) re-decides with it when names in a
 * group change. Whoever writes the result must decide from a view of the
 * group that no other decision changes meanwhile (server/crd.c serializes
 * every decision on its map lock).
 *
 * Any thread; no shared state.
 */
#ifndef LAPIS_REG_CRDNAMES_H
#define LAPIS_REG_CRDNAMES_H

#include <jansson.h>
#include <stdbool.h>

#include "lapis/err.h"

/* Where CRDs live: their group, resource and storage key prefix
   (REG_ROOT, registry.h). */
#define CRD_GROUP "apiextensions.k8s.io"
#define CRD_RESOURCE "customresourcedefinitions"
#define CRD_PREFIX REG_ROOT CRD_GROUP "/" CRD_RESOURCE "/"

/*
 * The names held in one group, as kube's naming controller collects them:
 * plurals, singulars and short names share one set (a path segment or a
 * kubectl word can only mean one resource), kinds and list kinds another.
 */
struct reg_crd_taken {
	json_t *resources; /* name -> true (owned) */
	json_t *kinds;	   /* kind -> true (owned) */
};

/* Empty sets. Errors: LP_E_NOMEM (then nothing to free). */
lp_err reg_crd_taken_init(struct reg_crd_taken *t);
/* Free the sets. Accepts a zeroed struct. */
void reg_crd_taken_free(struct reg_crd_taken *t);
/* Add what names (an acceptedNames object: plural, singular, shortNames,
   kind, listKind; NULL or missing members are fine) holds. Empty strings
   hold nothing. */
void reg_crd_taken_add(struct reg_crd_taken *t, const json_t *names);
/* Add one built-in resource: its plural, singular (the lowercase kind),
   short names (NULL-terminated, may be NULL), kind and kind + "List". */
void reg_crd_taken_add_builtin(struct reg_crd_taken *t, const char *plural,
			       const char *kind,
			       const char *const *short_names);

/*
 * Whether nothing is left to decide for crd: every requested name
 * (spec.names) is the accepted one (status.acceptedNames), and
 * NamesAccepted and Established are both True. A settled CRD's decision
 * cannot change until its own spec.names does, so the controller skips it.
 */
bool reg_crd_names_settled(const json_t *crd);

/*
 * kube's naming controller and establishing controller in one step, for
 * crd against the names in t (which may include crd's own accepted names,
 * as kube's do):
 *  - each requested name (plural, singular, kind, listKind) is accepted
 *    when it already is, or when t does not hold it; short names are
 *    accepted together, each new one checked; categories always are. A
 *    conflicting name keeps its previously accepted value (empty for a new
 *    CRD).
 *  - NamesAccepted: True/NoConflicts "no conflicts found", or
 *    False/<Plural|Singular|ShortNames|Kind|ListKind>Conflict
 *    "\"<name>\" is already in use" (the last conflict wins, as in kube).
 *  - Established: True/InitialNamesAccepted "the initial names have been
 *    accepted" once the names are accepted (kube's establishing
 *    controller, without its delay), unless ca_invalid (the conversion
 *    webhook's caBundle does not load): then False/InvalidCABundle "The
 *    conversion webhook CABundle is invalid"; a CRD that never was established
 * and has a conflict is False/NotAccepted "not all names are accepted"; an
 *    established CRD stays established.
 * Other conditions (Terminating) and status fields are kept; a condition's
 * lastTransitionTime becomes now only when its status changes.
 * *out is the new status (new reference), or NULL when it equals crd's
 * status (nothing to write). Errors: LP_E_NOMEM.
 */
lp_err reg_crd_names_status(const json_t *crd, const struct reg_crd_taken *t,
			    const char *now, bool ca_invalid, json_t **out);

/* The API approval of a CRD in a protected group (k8s.io, kubernetes.io and
   their subdomains), from its annotation api-approved.kubernetes.io: a URL
   with scheme and host approves, a value starting with "unapproved"
   bypasses, anything else is invalid. kube's apihelpers.GetAPIApprovalState. */
enum reg_approval {
	REG_APPROVAL_UNPROTECTED, /* not a protected group: no check */
	REG_APPROVAL_INVALID,
	REG_APPROVAL_APPROVED,
	REG_APPROVAL_BYPASSED,
	REG_APPROVAL_MISSING,
};
#define REG_APPROVAL_ANNOTATION "api-approved.kubernetes.io"

/* crd's approval state; reason (n bytes) gets kube's text for it (also for
   an unprotected group's annotation). *value: the annotation or "". The
   status condition KubernetesAPIApprovalPolicyConformant of a protected
   CRD follows it (reg_crd_names_status). */
enum reg_approval reg_crd_approval(const json_t *crd, const char **value,
				   char *reason, size_t n);

#endif
