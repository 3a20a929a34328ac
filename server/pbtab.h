/*
 * pbtab.h -- the field tables of the built-in kinds, shared by the protobuf
 * decoder (pb.c), the fieldValidation walker and the OpenAPI schemas of the
 * built-in kinds (fields.c). One table per Go message of k8s.io/api and
 * apimachinery that lapis serves: the JSON names in it are the complete set
 * of fields kube's typed decoding knows, so they decide what an unknown
 * field is, and the OpenAPI documents are generated from the same tables.
 *
 * Internal to server/: the tables are constant data, any thread.
 */
#ifndef LAPIS_PBTAB_H
#define LAPIS_PBTAB_H

#include <stddef.h>
#include <stdint.h>

enum pb_type {
	PB_STRING,     /* string: JSON string */
	PB_BYTES,      /* bytes: base64 string */
	PB_BOOL,       /* varint: true/false */
	PB_INT32,      /* varint truncated to 32 bits: number */
	PB_INT64,      /* varint: number */
	PB_MSG,	       /* embedded message: object, table in .sub */
	PB_TIME,       /* meta/v1 Time: RFC 3339 seconds or null */
	PB_MICROTIME,  /* meta/v1 MicroTime: RFC 3339 micros or null */
	PB_INTORSTR,   /* util/intstr IntOrString: number or string */
	PB_FIELDSV1,   /* meta/v1 FieldsV1: embedded JSON */
	PB_MAP_STRING, /* map<string,string>: object of strings */
	PB_MAP_BYTES,  /* map<string,bytes>: object of base64 strings */
	/* apiextensions v1 (CustomResourceDefinition), JSON bodies only
	   (pb_kinds' json_only: no protobuf decoding of these): */
	PB_DOUBLE,	/* float64: number */
	PB_JSON,	/* apiextensions JSON: any value, kept as it is */
	PB_OR_BOOL,	/* JSONSchemaPropsOrBool: a schema (.sub) or a bool */
	PB_OR_ARRAY,	/* JSONSchemaPropsOrArray: a schema or a list of them */
	PB_OR_STRARRAY, /* JSONSchemaPropsOrStringArray: a schema or strings */
};

/* Field flags. */
#define PB_REP 0x1	/* repeated: a JSON array, appended to */
#define PB_OMITZERO 0x2 /* Go value field with omitempty: zero is left out */
#define PB_REQUIRED 0x4 /* required in kube's OpenAPI schema */
#define PB_MERGE                                                               \
	0x8 /* strategic merge patch: patchStrategy merge (a                   \
	       keyed list when merge_key is set, else a set) */

/* map[string]T: a JSON object whose every member value is one value of
   the field's type (as PB_REP makes a list of them); map keys join kube's
   paths (".key") but not Go's. */
#define PB_MAPV 0x10
/* A list without omitempty in a table whose empty lists matter (the CRD's
   status.storedVersions: [] and null differ in kube's messages): an empty
   one is kept where omitempty would leave it out. */
#define PB_KEEPEMPTY 0x20
/* A pointer field with omitempty (*int64, *JSONSchemaProps, ...): a null
   is Go's nil, left out of the encoding (the apiextensions, admission and
   coordination tables, and since session 60 the core and events ones;
   other tables keep such nulls as they come). With PB_KEEPEMPTY, a
   pointer without omitempty: nil is written null. A null for any other
   field is Go's zero value: {} for a struct, "" / 0 / false for a scalar
   without omitempty (encoding/json writes it), left out with omitempty. */
#define PB_PTR 0x40

struct pb_msg;

struct pb_field {
	uint32_t num;	   /* protobuf field number */
	const char *json;  /* JSON member name (Go json tag) */
	enum pb_type type; /* wire and JSON mapping */
	unsigned flags;	   /* PB_REP, PB_OMITZERO, PB_REQUIRED, PB_MERGE,
			      PB_MAPV, PB_KEEPEMPTY, PB_PTR */
	const struct pb_msg *sub; /* table of a PB_MSG field (the schema of a
				     PB_OR_* one), else NULL */
	const char *merge_key;	  /* patchMergeKey of a PB_MERGE list */
	/* Go type of a value (an item, for a repeated field) when it is a
	   named type, as reflect names it in decoding errors ("v1.Protocol",
	   "types.UID"); NULL: the one its pb_type implies */
	const char *go;
};

struct pb_msg {
	const char *name; /* Go type name, for error messages */
	const char *pkg;  /* OpenAPI name prefix, e.g.
			     "io.k8s.api.core.v1" */
	size_t n_fields;  /* entries in fields */
	const struct pb_field *fields;
};

/*
 * The table of a top-level kind: kind "ConfigMap" with api_version "v1",
 * "Lease" with "coordination.k8s.io/v1", ... NULL when lapis has none.
 * Borrowed, static.
 */
const struct pb_msg *srv_pb_kind_msg(const char *kind, const char *api_version);

/* The table of meta/v1 ObjectMeta. Borrowed, static. */
const struct pb_msg *srv_pb_object_meta(void);

/* The table of meta/v1 DeleteOptions (a DELETE's body in any group
   version). Borrowed, static. */
const struct pb_msg *srv_pb_delete_options(void);

/* The field of m named json, or NULL. Borrowed, static. */
const struct pb_field *srv_pb_field(const struct pb_msg *m, const char *json);

#endif
