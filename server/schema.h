/*
 * schema.h -- the compiled OpenAPI v3 schema of a CustomResourceDefinition
 * version, which prunes, defaults and validates custom resources the way
 * kube-apiserver does (apiextensions-apiserver pkg/apiserver/schema/
 * pruning, defaulting, listtype, objectmeta, and kube-openapi's
 * pkg/validation/validate for the value checks and their messages;
 * reference §8.6-§8.8).
 *
 * Pure. A compiled struct srv_schema is immutable: any number of threads may
 * use one at once (regexec on a shared regex_t is thread-safe in glibc;
 * patterns compile and run in the C.UTF-8 locale, switched per thread with
 * uselocale for the duration of a call).
 *
 * Order for a custom resource (kube's, reference §8.7):
 *   srv_schema_prune -> srv_schema_default -> (admission) -> srv_schema_validate
 *   -> srv_schema_check_rules
 * srv_schema_default drops nulls of non-nullable fields without a default
 * first (kube's PruneNonNullableNullsWithoutDefaults), then defaults.
 *
 * The structural-schema check of a CRD being written (§8.6) is
 * srv_schema_check_crd (structural.c). The x-kubernetes-validations rules
 * run in srv_schema_check_rules (CEL, cel.c), after the rest. Not done
 * here: the ratcheting of srv_schema_validate's own errors (the caller's
 * keep callback), and the ObjectMeta rules of embedded resources beyond
 * metadata being an object.
 */
#ifndef LAPIS_SCHEMA_H
#define LAPIS_SCHEMA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "srv_error.h"

/*
 * Deepest schema nesting accepted, counting every step through properties,
 * items, additionalProperties, allOf/anyOf/oneOf/not. Real CRDs stay below
 * 20; the bound keeps every walk, which recurses along the schema, well
 * inside a thread's stack. Objects may be nested deeper than their schema:
 * below the schema's leaves nothing recurses.
 */
#define SRV_SCHEMA_MAX_DEPTH 256

struct srv_schema;

/*
 * Compile a version's schema.openAPIV3Schema (only read during the call;
 * enum values and defaults are deep-copied). Unknown keywords and formats
 * are ignored, as is a "default" of null. Patterns are Go RE2 syntax,
 * translated to POSIX extended expressions (\d \w \s and negations, \x
 * escapes, classes, (?:...) groups, lazy quantifiers; (?i) anywhere makes
 * the whole pattern case-insensitive, a superset of RE2's matches), or run
 * on PCRE2 when they have no POSIX spelling (\p{..}, the m and U flags,
 * deeply nested repetitions); a pattern Go's regexp refuses matches every
 * value, and compile records why (srv_schema_warning).
 * Errors: LP_E_BADREQUEST when a keyword has the wrong JSON type (message
 * like Go's "json: cannot unmarshal string into Go struct field
 * JSONSchemaProps.properties.spec.maxLength of type int64"); LP_E_INVALID
 * when the schema is not an object or nests deeper than
 * SRV_SCHEMA_MAX_DEPTH; LP_E_NOMEM. *out (new; srv_schema_free) is written
 * only on success.
 */
lp_err srv_schema_compile(const json_t *openapi_v3_schema,
			  struct srv_schema **out, struct srv_error *err);

/* Free a compiled schema. NULL is fine. */
void srv_schema_free(struct srv_schema *s);

/* Go's %v of a float64 (strconv 'g', shortest precision: exponent form
   below 1e-4 and from 1e+06), as messages and printer columns show it. */
#define SRV_GO_FLOAT_MAX 40
void srv_go_float(double v, char out[SRV_GO_FLOAT_MAX]);
/* A field error's value as kube's ErrorBody prints it: strings quoted,
   numbers and booleans plain, objects and arrays with Go's %#v
   (map[string]interface {}{"a":1}). Allocated; NULL out of memory. */
char *srv_go_value(const json_t *x);

/*
 * Validate a whole custom resource (after prune and default) as kube-openapi
 * does: type (integer also takes an integral real such as 3.0, as kube),
 * nullable, enum, bounds, multipleOf, lengths in runes, pattern, formats
 * (int32, int64, byte, date, date-time, uuid[345], ipv4, ipv6, cidr,
 * hostname, email, uri, mac, hexcolor), items, min/maxItems,
 * additionalProperties, min/maxProperties, required, allOf/anyOf/oneOf/not,
 * x-kubernetes-int-or-string; then apiVersion and kind of embedded
 * resources, and x-kubernetes-list-type set and map uniqueness. The root's
 * metadata, apiVersion and kind are the caller's to check. obj is only
 * read.
 * Errors: LP_E_INVALID with causes (kube's reason, field path such as
 * spec.items[0].name, and message body such as "Invalid value: 11:
 * spec.replicas in body should be less than or equal to 10"; exact
 * duplicates dropped; at most SRV_MAX_CAUSES kept) appended to err, and
 * err->message left empty: the caller builds the Status message;
 * LP_E_NOMEM.
 */
lp_err srv_schema_validate(const struct srv_schema *s, const json_t *obj,
			   struct srv_error *err);
/* How a custom resource's validation differs from srv_schema_validate. */
struct srv_schema_vopts {
	/* adds the caller's causes between the schema's and the embedded
	   resources' and list types' (kube's custom resource strategy puts
	   its scale checks there) */
	void (*after_schema)(void *ud, struct srv_error *err);
	/* when set, a schema cause at path (the value's own, before
	   renaming) is kept only if keep says so: validation ratcheting
	   (embedded resources' causes are never ratcheted, as in kube) */
	bool (*keep)(void *ud, const char *path);
	void *ud;
	/* an update's old object: the list-type causes count only if old
	   breaks no list type (kube's ValidateListSetsAndMaps on it) */
	const json_t *old;
	/* kube's resource validator: the anyOf/oneOf/allOf/not errors carry
	   its root field path, nil ("<nil>") or, with sub, "status" */
	bool root_composites;
	/* "status": messages name paths from there, as kube's status
	   validator built from the status schema alone does */
	const char *sub;
	/* kube's defaulting validation of a CRD's default: objectmeta's
	   Validate (the embedded resources' causes) before, and instead of,
	   the schema's; no list-type checks (ValidateCustomResource alone) */
	bool defaulting;
};
lp_err srv_schema_validate_with(const struct srv_schema *s, const json_t *obj,
				struct srv_error *err,
				const struct srv_schema_vopts *o);

/*
 * Drop what the schema does not know (kube's pruning.PruneWithOptions with
 * isResourceRoot): object keys not declared in properties and not covered
 * by additionalProperties, except under x-kubernetes-preserve-unknown-fields
 * (whose declared properties are still pruned). At the root and in
 * x-kubernetes-embedded-resource objects, apiVersion and kind (when
 * strings) and metadata (when an object) are kept, metadata reduced to
 * ObjectMeta's fields. Below additionalProperties: true (no schema),
 * objects lose all their keys, as in kube. unknown (may be NULL) is called
 * with each dropped path (spec.foo, spec.items[0].bar, metadata.foo),
 * borrowed for the call, and whether it is in an embedded resource's
 * metadata (kube's objectmeta coercion finds those, after pruning); the
 * root's own apiVersion/kind when not strings are dropped silently.
 * Idempotent.
 */
void srv_schema_prune(const struct srv_schema *s, json_t *obj,
		      void (*unknown)(void *ud, const char *path,
				      bool embedded_meta),
		      void *ud);
/* kube's pruning.Prune alone, as it checks a CRD's defaults: as
   srv_schema_prune, but the top is a resource only when resource_root,
   and a resource's apiVersion, kind and metadata stay whole, whatever
   their types. */
void srv_schema_prune_plain(const struct srv_schema *s, json_t *obj,
			    bool resource_root);

/*
 * Drop null values of non-nullable declared properties that have no
 * default, then apply defaults top-down (kube's defaulting.Default): a
 * declared property with a default that is missing, or null while not
 * nullable, gets a deep copy of the default, then the walk goes on inside
 * it; items and additionalProperties values that are null (and not
 * nullable) get their schema's default. Run after srv_schema_prune.
 * Idempotent. Out of memory leaves a default unapplied.
 */
/*
 * kube-openapi's strfmt.ParseDuration past Go's time.ParseDuration: the
 * sum of every "<digits><space*><letters>" run of s whose unit is known
 * (ns/nano, us/µs/micro, ms/milli, s/sec, m/min, h/hr/hour, d/day,
 * w/wk/week: equal to one, ignoring case, or starting with a group's
 * last), in nanoseconds, wrapping as Go's Duration does ("28 weeks",
 * "1 hr", "PT1D2H"); false with Go's error text in err when no unit is
 * known or a count is past int64.
 */
bool srv_strfmt_duration_units(const char *s, int64_t *ns, char *err,
			       size_t err_n);

void srv_schema_default(const struct srv_schema *s, json_t *obj);
/* srv_schema_default without dropping the non-nullable nulls that have no
   default: kube's defaulting.Default alone, as the field manager runs it
   on an apply's result, whose nulls no decoder removed (validation then
   refuses them). */
void srv_schema_default_keep_nulls(const struct srv_schema *s, json_t *obj);

/*
 * The x-kubernetes-validations rules of the schema, in schema order (for
 * tests and fuzzers; srv_schema_check_rules evaluates them). For i < count,
 * *path is the data path of the value the rule applies to ("" for the root,
 * "spec", "spec.items[*]", "spec.labels.*"), *rule the CEL text and *message
 * the rule's message (NULL if none); all borrowed until srv_schema_free.
 * Returns false when i is out of range.
 */
size_t srv_schema_rule_count(const struct srv_schema *s);
bool srv_schema_rule(const struct srv_schema *s, size_t i, const char **path,
		     const char **rule, const char **message);
/*
 * Evaluate the schema's x-kubernetes-validations rules on obj (kube's
 * schema/cel Validator, run after every other check of a custom resource):
 * old is the object before an update (NULL on create), which transition
 * rules (those naming oldSelf) need and which ratchets the others, whose
 * failures on values the update left as they were become warnings. When
 * err already holds a cause kube calls blocking (Required, NotSupported,
 * TooLong, TooMany, TypeInvalid), no rule runs and err gets kube's
 * "some validation rules were not checked" cause instead. Failures are
 * appended to err as causes (its code is left to the caller); warn gets
 * each ratcheted failure's text and, once per rule, the rules that were
 * not evaluated (outside cel.c's subset) with why. Errors: LP_E_NOMEM.
 */
lp_err srv_schema_check_rules(const struct srv_schema *s, const json_t *obj,
			      const json_t *old, struct srv_error *err,
			      void (*warn)(void *ud, const char *text),
			      void *ud);

/*
 * The rules of s on a default value def, as kube's defaulting validation
 * runs its CEL validator: first as an update that leaves def as it was
 * (transition rules see oldSelf == self; nothing ratchets), then, when
 * that passed, as a create (optionalOldSelf rules see no oldSelf).
 * Failures are appended to err as srv_schema_check_rules appends them;
 * no warnings. Errors: LP_E_NOMEM.
 */
lp_err srv_schema_check_default_rules(const struct srv_schema *s,
				      const json_t *def, struct srv_error *err);

/*
 * Why patterns match everything (see srv_schema_compile), one text per
 * pattern, borrowed until srv_schema_free; NULL when i is out of range.
 */
size_t srv_schema_warning_count(const struct srv_schema *s);
const char *srv_schema_warning(const struct srv_schema *s, size_t i);

/*
 * Is a CRD version's openAPIV3Schema one kube-apiserver accepts (reference
 * §8.2's OpenAPI restrictions and §8.6's structural rules; structural.c)?
 * schema is only read; base is the path of the schema's parent
 * ("spec.versions[0].schema", or "spec.validation" when every version has
 * the same schema, as kube reports it); status says the status subresource
 * is enabled (which restricts the root); old is the CRD before an update
 * (NULL on create), whose expressions compile in kube's environment for
 * stored expressions and any other in the one for new expressions
 * (cel_compile_env). Each violation is appended to err as a cause with
 * kube's field path and message; nothing else is set.
 */
void srv_schema_check_crd(const json_t *schema, const char *base, bool status,
			  const json_t *old, struct srv_error *err);

/*
 * lapis's floor under kube's static cost estimate of rule placed on the
 * node schema (the root of a resource when root), as srv_schema_check_crd
 * compares it with kube's limits; -1 when the rule does not compile or
 * reads fields the schema does not declare. *exact says it is kube's
 * estimate itself (cel_cost_floor).
 */
double srv_rule_cost_floor(const json_t *schema, const char *rule, bool root,
			   bool *exact);

/*
 * Walking a compiled schema by field (server-side apply, managed.c): the
 * node of a property (or of additionalProperties' schema), of a list's
 * items, and a list's x-kubernetes-list-type with its map keys. NULL stands
 * for "nothing known" everywhere: every function takes it and answers
 * NULL or atomic. Nodes live as long as their schema.
 */
struct srv_schema_node;
enum srv_schema_list { SRV_SLIST_ATOMIC, SRV_SLIST_SET, SRV_SLIST_MAP };
const struct srv_schema_node *srv_schema_root(const struct srv_schema *s);
const struct srv_schema_node *
srv_schema_prop(const struct srv_schema_node *n, const char *name);
const struct srv_schema_node *
srv_schema_items(const struct srv_schema_node *n);
/* The item of the list old that item of the list at n correlates with,
   as kube's ratcheting and transition rules pair them: a map list's item
   with the same keys; NULL for a set or an atomic list (their items pair
   with nothing) or when old has none. */
const json_t *srv_schema_old_item(const struct srv_schema_node *n,
				  const json_t *item, const json_t *old);
/* Are v and old, v's schema n, equal as kube's ratcheting compares them
   (CorrelatedObject.CachedDeepEqual): a map list's items by their keys in
   any order, an object's members only where the schema has one. */
bool srv_schema_corr_equal(const struct srv_schema_node *n, const json_t *v,
			   const json_t *old);
/* Is name one of the properties the object at n declares (a struct field
   in structured-merge-diff's terms, not an additionalProperties key)? */
bool srv_schema_declares(const struct srv_schema_node *n, const char *name);
/* x-kubernetes-preserve-unknown-fields at n itself. */
bool srv_schema_preserves(const struct srv_schema_node *n);
/* How structured-merge-diff types the value at n, as kube's type
   converter reads the CRD's published schema (kube-openapi's schemaconv
   of apiextensions' builder output): an int-or-string is an untyped
   scalar, an object declaring no property and no additionalProperties
   schema takes anything (SRV_SMD_ANY, as does a node without a type or
   n NULL). For SRV_SMD_MAP (and an object's SRV_SMD_ANY), *open says that a
   member the object does not declare is anything
   (x-kubernetes-preserve-unknown-fields); one with an additionalProperties
   schema reads it through srv_schema_prop. *embedded:
   x-kubernetes-embedded-resource, whose apiVersion and kind are strings
   and whose metadata is ObjectMeta. */
enum srv_smd {
	SRV_SMD_ANY,
	SRV_SMD_STRING,
	SRV_SMD_NUMERIC,
	SRV_SMD_BOOL,
	SRV_SMD_UNTYPED,
	SRV_SMD_MAP,
	SRV_SMD_LIST
};
enum srv_smd srv_schema_smd(const struct srv_schema_node *n, bool *open,
			    bool *embedded);
/* Is the object at n x-kubernetes-map-type: atomic (owned and replaced
   whole by server-side apply)? */
bool srv_schema_map_atomic(const struct srv_schema_node *n);
/* The default of the field at n (borrowed), or NULL when it has none. */
const json_t *srv_schema_default_of(const struct srv_schema_node *n);
/* For SRV_SLIST_MAP, *keys (borrowed) and *n_keys name the map keys. */
enum srv_schema_list srv_schema_list_kind(const struct srv_schema_node *n,
					  const char *const **keys,
					  size_t *n_keys);

/* Deep equality of decoded JSON with numbers compared by value (1 equals
   1.0), as kube compares decoded values (enum, uniqueness, defaults). */
bool srv_json_value_eq(const json_t *a, const json_t *b);

/* kube's objectmeta.Coerce, run by the decoder on a pruned custom
   resource: true with its field error ("spec.emb.metadata: Invalid value:
   map[string]interface {}{"name":5}: json: cannot unmarshal number into
   Go struct field ObjectMeta.name of type string") in msg when an
   embedded resource's apiVersion or kind is not a string or its metadata
   does not decode into ObjectMeta; the caller answers 400. Time values
   in such metadata are normalized as the decoding leaves them. */
bool srv_schema_coerce(const struct srv_schema *s, json_t *obj, char *msg,
		       size_t size);
/* The same on a value of the schema's root, the root too when it is an
   embedded resource (kube's Coerce of a CRD's default, isResourceRoot as
   the node's x-kubernetes-embedded-resource): true with the failing
   field's path from the value ("" for the value itself, "apiVersion",
   "embedded.metadata") in field and `Invalid value: ...: <why>` in msg. */
bool srv_schema_coerce_value(const struct srv_schema *s, json_t *obj,
			     char *field, size_t fsize, char *msg,
			     size_t msize);

/*
 * A Go (RE2) regular expression, for CEL's matches(), find() and findAll()
 * (cel.c). With find false it answers srv_goregex_search, a match anywhere
 * in a string as RE2's partial match (one pass over the string), and is
 * compiled as a schema pattern is; with find true, srv_goregex_find, the
 * match itself, on PCRE2. srv_goregex_compile returns a new one, or NULL
 * with *why (static text) when neither engine takes it or out of memory.
 * A compiled one is only read: any thread may search with it.
 */
struct srv_goregex;
struct srv_goregex *srv_goregex_compile(const char *pattern, bool find,
					const char **why);
bool srv_goregex_search(const struct srv_goregex *g, const char *s, size_t n);
/* The leftmost-first match of g (compiled for find) in s[0, len) that
   starts at or after from (the bytes before it are context: ^ matches at
   0 only), as RE2's: true with its offsets in *so and *eo. PCRE2
   backtracks, within a million steps (past them: false); callers bound
   len. */
bool srv_goregex_find(const struct srv_goregex *g, const char *s, size_t len,
		      size_t from, size_t *so, size_t *eo);
/* Accepts NULL. */
void srv_goregex_free(struct srv_goregex *g);

/* Does Go's regexp.Compile refuse pattern? Then true, with its error
   ("error parsing regexp: missing closing ): `(a`") in msg. Only the
   syntax is checked; what needs Unicode tables or the compiled size is
   accepted. */
bool srv_re2_error(const char *pattern, char *msg, size_t size);

/* s without Go's strings.TrimSpace spaces (ASCII) at either end: the
   start, and the length in *len. */
const char *srv_trim_space(const char *s, size_t n, size_t *len);

/* Does s pass the string format named format, as kube-openapi's strfmt
   checks it in a schema? true for a format it does not know. */
bool srv_schema_format_valid(const char *format, const char *s);

#endif
