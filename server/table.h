/*
 * table.h -- content negotiation for conversions (reference §1.7, §7):
 * Table output for kubectl's human-readable get, and PartialObjectMetadata
 * for metadata-only clients (controller-runtime's metadata informers).
 *
 * Pure, any thread.
 */
#ifndef LAPIS_TABLE_H
#define LAPIS_TABLE_H

#include <jansson.h>
#include <stdbool.h>

#include "resources.h"
#include "srv_error.h"

/* SRV_OUT_PARTIAL_SHAPE: PartialObjectMetadata asked of a list, or
   PartialObjectMetadataList of one object, which kube's negotiation takes
   and its transform refuses (406, in the caller's words). */
enum srv_out {
	SRV_OUT_PLAIN,
	SRV_OUT_TABLE,
	SRV_OUT_PARTIAL,
	SRV_OUT_PARTIAL_SHAPE
};
enum srv_include { SRV_INC_NONE, SRV_INC_METADATA, SRV_INC_OBJECT };

struct srv_neg {
	enum srv_out out;
	const char *version;	/* "v1" or "v1beta1" for conversions */
	enum srv_include include; /* Table rows' object */
	bool yaml;		/* the chosen clause is application/yaml */
	bool pretty;		/* the chosen clause has pretty=1 */
};

/*
 * Choose the response form from Accept and includeObject. list: a list
 * (PartialObjectMetadataList is then what "as=" asks for; a watch's events
 * take the singular form). no_table: Table clauses are skipped (a watch
 * in watch-list mode). Errors: LP_E_NOTACCEPTABLE (406), LP_E_BADREQUEST
 * (bad includeObject).
 */
lp_err srv_negotiate(const char *accept, const char *include_object,
		     bool list, bool no_table, struct srv_neg *out, struct srv_error *err);

/* The form of an error's Status: kube's DefaultEndpointRestrictions skip
   the clauses that ask for a conversion. false: no clause is acceptable
   (kube then writes indented JSON). */
bool srv_negotiate_status(const char *accept, struct srv_neg *out);

/* One object as PartialObjectMetadata (new). */
json_t *srv_partial(const struct srv_neg *n, const json_t *obj);
/* A list of objects (array, borrowed) as PartialObjectMetadataList (new);
   listmeta (borrowed) is its metadata. */
json_t *srv_partial_list(const struct srv_neg *n, const json_t *items,
			 const json_t *listmeta);
/* A Table of objects (array, borrowed) with the resource's columns (new).
   headers false: columnDefinitions null (watch events after the first). */
json_t *srv_table(const struct srv_resource *res, const struct srv_neg *n,
		  const json_t *items, const json_t *listmeta, bool headers);
/* The same for Scale objects of custom resources, with kube's columns
   for them: Name, Desired (.spec.replicas), Available (.status.replicas),
   Age. */
json_t *srv_table_scale(const struct srv_neg *n, const json_t *items,
			const json_t *listmeta, bool headers);

/* A JSON value as Go's fmt %v prints what encoding/json decoded it to:
   strings bare, numbers as Go (floats shortest), maps as map[k:v ...] in
   key order, lists as [a b], null as <nil>. New string; NULL when out of
   memory. */
char *srv_go_sprint(const json_t *v);
/* v as Go's json.Marshal writes an interface{} value (object keys sorted,
   compact, <, > and & escaped as \u003c, \u003e, \u0026): new, NULL when
   out of memory. */
char *srv_go_json(const json_t *v);

/* kube's human-readable duration ("5m12s", "3d4h", ...) of seconds. */
void srv_human_duration(long long secs, char *buf, size_t n);

#endif
