/*
 * fields.h -- what kube's typed decoding knows of the built-in kinds, from
 * the field tables of pbtab.h: fieldValidation (unknown fields of built-in
 * objects are dropped, warned about or refused, reference §5.8) and the
 * OpenAPI v3 schemas of the built-in kinds.
 *
 * The strict-error list (struct srv_strict) is also what custom resources
 * use for the unknown fields their structural schema prunes, so Warn and
 * Strict read the same for every kind.
 *
 * Pure, any thread.
 */
#ifndef LAPIS_FIELDS_H
#define LAPIS_FIELDS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "pbtab.h"

/* fieldValidation: absent or "" is Warn, kube's default since 1.27. */
enum srv_fv { SRV_FV_WARN, SRV_FV_IGNORE, SRV_FV_STRICT };

/* sigs.k8s.io/json keeps at most 100 strict errors per decode. */
#define SRV_STRICT_MAX 100

/*
 * The strict decoding errors of one request, in the order found, without
 * repeats (sigs.k8s.io/json dedupes them by text). With SRV_FV_IGNORE
 * nothing is kept. Zero-initialise, set mode, free with srv_strict_free.
 */
struct srv_strict {
	enum srv_fv mode;
	size_t n; /* entries in errs */
	char
	    *errs[SRV_STRICT_MAX]; /* each new, e.g. `unknown field "spec.x"` */
	/* the caller's mark of each entry: what mark held when it was
	   added (a custom resource's decoding marks the unknown fields of
	   embedded resources' metadata, which kube finds last) */
	unsigned char mark[SRV_STRICT_MAX];
	unsigned char mark_now;
};

/* The mode of a fieldValidation value; anything unknown is Warn (the
   caller refuses bad values with 422 before). */
enum srv_fv srv_fv_mode(const char *value);

/* Add one error text (copied); ignored when a repeat, past the cap, under
   Ignore, or out of memory. */
void srv_strict_add(struct srv_strict *s, const char *text);

/* Go's %T of the value an unstructured object holds: string, int64 (or
   float64 when json_numbers: encoding/json into interface{}), float64,
   bool, map[string]interface {}, []interface {}, and <nil> for null. */
const char *srv_go_type_of(const json_t *v, bool json_numbers);

/*
 * Parse s as Go's time.Parse(RFC3339 or, micro, RFC3339Micro) does (the
 * general parser: one- or two-digit hours, a fraction after the seconds of
 * an RFC3339 time, exactly six digits for RFC3339Micro, offsets up to 24
 * hours, the day checked against its month): the instant in seconds since
 * the Unix epoch and its nanoseconds; or Go's error text into err (err_n
 * at least 1) and false.
 */
bool srv_go_time_parse(const char *s, bool micro, long long *unix_sec,
		       long *nsec, char *err, size_t err_n);

/* Go's strconv.Quote of a string into out (quotes included, cut to size
   between characters): backslash escapes for the quote, the backslash,
   control characters, characters Go's unicode.IsPrint refuses (\u200b,
   \U000e0001) and bytes that start no UTF-8 character (\xff); the rest
   as is. out holds 4 bytes per byte of in, and 3, at most. */
void srv_go_quote(const char *in, char *out, size_t size);

/* Go's %#v of a []string, from a JSON list of strings, into out (cut at
   size): []string{"a", "b"}, each element as srv_go_quote writes it. */
void srv_go_string_list(const json_t *l, char *out, size_t size);

/* Add `<what> "<path>"` with path quoted as Go's strconv.Quote does; what
   is "unknown field" or "duplicate field". */
void srv_strict_field(struct srv_strict *s, const char *what, const char *path);

/* "strict decoding error: <e1>, <e2>, ..." (new, free it), NULL when there
   are no errors or out of memory. */
char *srv_strict_message(const struct srv_strict *s);

void srv_strict_free(struct srv_strict *s);

/*
 * Drop the members of obj that the message m does not have, recursively
 * through embedded messages and repeated messages, recording each in s as
 * `unknown field "<path>"` (s may be NULL). Paths are kube's: dotted names
 * with [i] for list items ("spec.ports[0].foo"), under prefix (may be "").
 * Members are visited in obj's order, or by name when sorted is set (the
 * order kube reports for a YAML body or a patch result, which Go re-encodes
 * from a map). Values of the wrong JSON type are left alone: this checks
 * names, not types (srv_builtin_check checks both). Maps (labels, data,
 * ...) take any key.
 */
void srv_fields_prune(const struct pb_msg *m, json_t *obj, const char *prefix,
		      bool sorted, struct srv_strict *s);

/*
 * How kube turns a request's object into its Go struct, which decides the
 * type errors it finds, their order and their words.
 */
enum srv_decoder {
	SRV_DEC_JSON,	      /* encoding/json (sigs.k8s.io/json) over a JSON
				 body, or a JSON or merge patch's result */
	SRV_DEC_YAML,	      /* the same over the JSON Go makes of a YAML
				 body: an integral float is an integer there */
	SRV_DEC_UNSTRUCTURED, /* runtime.DefaultUnstructuredConverter: the
				 result of a strategic merge patch */
};

/* Room for a type error's text: a cut path (PATH_MAX_LEN in fields.c)
   and the words around it. */
#define SRV_TYPEERR_MAX 1400

/*
 * The type error of one decode, if any (kube refuses the request with it
 * whatever fieldValidation says). JSON and YAML: Go's UnmarshalTypeError,
 * "json: cannot unmarshal number into Go struct field ConfigMap.data of
 * type string", the first in decoding order unless an UnmarshalJSON
 * method (IntOrString, Time) failed, which ends decoding; unstructured:
 * the converter's first error, "cannot convert float64 to int32".
 */
struct srv_typeerr {
	bool set;		    /* an error was found */
	bool fatal;		    /* it ended decoding */
	char text[SRV_TYPEERR_MAX]; /* the error's text, when set */
};

/*
 * srv_fields_prune for a whole object of a built-in kind (its top-level
 * apiVersion and kind are known too), in the same pass checking the type
 * of every known member's value as dec does when te is not NULL: te is
 * set to the error kube's decoding reports, if any. A null value is
 * accepted anywhere, as Go leaves the zero value; a null in a map of
 * strings becomes "" (Go's zero string). Allocates nothing for a
 * well-typed object of small maps. Returns false (and changes nothing)
 * when lapis has no table for kind in api_version.
 */
bool srv_builtin_check(const char *kind, const char *api_version, json_t *obj,
		       bool sorted, enum srv_decoder dec, struct srv_strict *s,
		       struct srv_typeerr *te);

/*
 * The type check of srv_builtin_check alone: unknown members stay (a
 * patch's error shows the patched object as it was). te must not be NULL.
 */
bool srv_builtin_typecheck(const char *kind, const char *api_version,
			   json_t *obj, bool sorted, enum srv_decoder dec,
			   struct srv_typeerr *te);

/*
 * kube's decoding of an object's metadata into ObjectMeta: false with the
 * first type error in te. A custom resource's (typed false: apiextensions'
 * objectmeta.GetObjectMeta unmarshals the metadata alone) is worded
 * relative to it ("json: cannot unmarshal string into Go struct field
 * ObjectMeta.ownerReferences of type []v1.OwnerReference"); a typed
 * object's from its root (ObjectMeta.metadata.labels). Time values are
 * normalized as in srv_builtin_check; unknown members stay.
 */
bool srv_object_meta_typecheck(json_t *md, bool typed,
				struct srv_typeerr *te);

/*
 * kube's decoding of a DELETE's body into meta/v1 DeleteOptions: false
 * with the first type error in te ("json: cannot unmarshal string into Go
 * struct field DeleteOptions.dryRun of type []string"), which kube answers
 * with 400 before anything is deleted. Unknown members stay.
 */
bool srv_delete_options_typecheck(json_t *opts, struct srv_typeerr *te);

/* Whether Go's base64.StdEncoding decodes s[0..n) (CRs and LFs skipped,
   padding required), as encoding/json reads a []byte; false when out of
   memory too. */
bool srv_base64_ok(const char *s, size_t n);

/* Whether lapis has the field table of a built-in kind (and so its OpenAPI
   schema): not for CRDs, for one. */
bool srv_builtin_has_table(const char *kind, const char *api_version);

/* ObjectMeta's OpenAPI schema from its table, with the schemas it refers
   to (OwnerReference, ManagedFieldsEntry), added to schemas. */
bool srv_object_meta_openapi(json_t *schemas);

/* srv_builtin_check without type checks. */
bool srv_builtin_prune(const char *kind, const char *api_version, json_t *obj,
		       bool sorted, struct srv_strict *s);

/*
 * Leave out what kube's JSON encoding of the Go struct leaves out, as a
 * decode into the struct and an encode back would (encoding/json's
 * omitempty): repeated and map members that are empty or null, and the
 * zero value ("", 0, false) or null of a scalar field flagged
 * PB_OMITZERO. Value structs, times and the members of other fields stay.
 * Objects of a kind with a table are walked whole; any other object (a
 * custom resource, a CRD) only in its metadata, which kube round-trips
 * through ObjectMeta (apiextensions' objectmeta.Coerce). Pure.
 */
void srv_builtin_omitempty(const char *kind, const char *api_version,
			   json_t *obj);

/*
 * A JSON patch's text as kube's strict decoding of its operations reads
 * it: `json patch unknown field "[0].x"` for a member other than op,
 * path, from and value, `json patch duplicate field "[0].path"` for a
 * repeated one or a repeated key inside a value, in the body's order.
 */
void srv_json_patch_scan(const char *text, size_t len, struct srv_strict *s);

/*
 * What sigs.k8s.io/json's strict decoding reports for a JSON body of a
 * built-in kind: duplicate fields, and the unknown fields among them, in
 * the order of the text (srv_builtin_prune then finds the same unknown
 * fields again, which srv_strict_add ignores as repeats). kind NULL: a
 * custom resource, decoded into a map, whose duplicates count at any depth
 * (its unknown fields come from its schema). text must be JSON that
 * jansson accepted. Returns false when lapis has no table for kind.
 */
bool srv_builtin_scan_json(const char *kind, const char *api_version,
			   const char *text, size_t len, struct srv_strict *s);

/*
 * Add the OpenAPI v3 schema of a built-in kind to schemas (an object of
 * schema name to schema, borrowed and added to), with the schemas of every
 * message it uses, named as kube names them ("io.k8s.api.core.v1.Service",
 * "io.k8s.api.core.v1.ServicePort", "io.k8s.apimachinery.pkg.apis.meta.v1.
 * ObjectMeta", ...): types and formats from the tables, nested messages as
 * $ref, required fields, patch strategies and merge keys, and
 * x-kubernetes-group-version-kind on the kind. Returns false when lapis has
 * no table for the kind (nothing added) or out of memory.
 */
bool srv_builtin_openapi(const char *group, const char *version,
			 const char *kind, json_t *schemas);

#endif
