/*
 * schema.h -- the OpenAPI v3 schemas of CustomResourceDefinition versions
 * (issue 5): the structural-schema check run when a CRD is written, and the
 * compiled form that prunes, defaults and validates custom resources, the
 * way kube-apiserver 1.33 does (apiextensions-apiserver
 * pkg/apiserver/schema/{validation,complete,convert}.go, pruning/,
 * defaulting/, objectmeta/, listtype/, and kube-openapi's
 * pkg/validation/validate for the value checks and their messages).
 *
 * Pure. A compiled struct srv_schema is immutable: any number of threads may
 * use one at once (regexec on a shared regex_t is thread-safe in glibc; the
 * UTF-8 locale for patterns is switched per thread with uselocale).
 *
 * Order for a custom resource (kube's, reference §8.7):
 *   srv_schema_prune -> srv_schema_default -> (admission) -> srv_schema_validate
 * srv_schema_default drops nulls of non-nullable fields without a default
 * first (kube's PruneNonNullableNullsWithoutDefaults), then defaults.
 *
 * Field errors use kube's causes: reason (FieldValueInvalid, ...), field
 * path (spec.items[0].name) and the message body without the field
 * ("Invalid value: 3: spec.n in body should be less than or equal to 2").
 * err->message is kube's aggregate of all errors: "<field>: <body>" for one,
 * "[<field>: <body>, <field>: <body>]" for several (duplicates removed),
 * i.e. what follows `<Kind> "<name>" is invalid: ` in kube's Status message.
 * srv_error keeps at most SRV_MAX_CAUSES causes; the message has them all
 * (cut at its buffer size).
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
 * 20 (the corpus' deepest is 12); the bound keeps every walk, which recurses
 * along the schema, well inside a thread's stack. Objects may be nested
 * deeper than their schema: below the schema's leaves nothing recurses
 * without bound.
 */
#define SRV_SCHEMA_MAX_DEPTH 256

struct srv_schema;

/*
 * Compile a version's schema.openAPIV3Schema. The schema is expected to have
 * passed srv_schema_check_structural; compile does not repeat those checks
 * (unsupported keywords such as $ref are ignored here, not rejected).
 * Patterns are Go RE2 syntax, translated to POSIX extended expressions
 * (\d \w \s and negations, classes, (?i) and other flags, lazy
 * quantifiers, \x escapes); a pattern that Go accepts but that cannot be
 * translated or compiled (Unicode classes \p{..}, huge non-ASCII ranges,
 * (?m)) matches every value: compile records a warning
 * (srv_schema_warning) and logs it. Enum values and defaults are deep
 * copies: the caller's JSON is only read during the call.
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

/*
 * Check a CRD version's schema as kube does when a CRD is created
 * (validateCustomResourceDefinitionValidation minus CEL compilation and the
 * status-subresource root restriction, which need the rest of the CRD):
 * the structural rules (reference §8.6, schema/validation.go and
 * complete.go), that defaults are pruned and valid against their schema,
 * and the OpenAPI restrictions (no $ref/id/definitions/..., no
 * uniqueItems, properties xor additionalProperties, list-type and map-type
 * rules, x-kubernetes-validations syntax, Go-compilable patterns, nullable
 * not at the root). Errors are causes with kube's paths under fld_path, the
 * path of the schema itself: for srv_schema_check_structural it is
 * "spec.validation.openAPIV3Schema" (kube's path when every version shares
 * one schema); pass "spec.versions[0].schema.openAPIV3Schema" and so on for
 * per-version schemas. Structural errors are sorted by text, as kube's.
 * Errors: LP_E_INVALID with causes (FieldValueRequired "Required value: must
 * not be empty for specified object fields" at
 * ...openAPIV3Schema.properties[spec].type, ...); LP_E_BADREQUEST for
 * wrongly typed keywords (as srv_schema_compile); LP_E_NOMEM.
 */
lp_err srv_schema_check_structural(const json_t *schema,
				   struct srv_error *err);
lp_err srv_schema_check_structural_at(const json_t *schema,
				      const char *fld_path,
				      struct srv_error *err);

/*
 * Validate a whole custom resource (after prune and default): the schema's
 * value checks as kube-openapi does them (type, enum, bounds, lengths in
 * runes, pattern, formats kube checks, items, additionalProperties,
 * combinators, required), then the basic checks of embedded resources
 * (apiVersion and kind present and well-formed; metadata types, name,
 * generateName, namespace, labels, annotations, finalizers), then list-type
 * set and map uniqueness. The root's metadata, apiVersion and kind are the
 * caller's to check. x-kubernetes-validations (CEL) rules are not
 * evaluated (see srv_schema_rule). obj is only read.
 * Errors: LP_E_INVALID with causes and err->message as described at the top;
 * LP_E_NOMEM.
 */
lp_err srv_schema_validate(const struct srv_schema *s, const json_t *obj,
			   struct srv_error *err);

/*
 * Drop what the schema does not know (kube's pruning.PruneWithOptions with
 * isResourceRoot): object keys not declared in properties and not covered
 * by additionalProperties, except under x-kubernetes-preserve-unknown-fields
 * (whose declared properties are still pruned); apiVersion, kind and
 * metadata are kept at the root and in embedded resources, where metadata
 * keeps only ObjectMeta's fields (name, generateName, namespace, selfLink,
 * uid, resourceVersion, generation, creationTimestamp, deletionTimestamp,
 * deletionGracePeriodSeconds, labels, annotations, ownerReferences,
 * finalizers, managedFields, with unknown keys inside ownerReferences and
 * managedFields entries dropped too) and loses empty values the way kube's
 * round trip through ObjectMeta does (null, "", empty maps and lists,
 * generation 0). unknown (may be NULL) is called with each dropped path
 * (spec.foo, spec.items[0].bar, metadata.foo), borrowed for the call, in
 * object order; dropped empty metadata values are not reported. A path that
 * did not fit in memory is reported cut short. Idempotent.
 */
void srv_schema_prune(const struct srv_schema *s, json_t *obj,
		      void (*unknown)(void *ud, const char *path), void *ud);

/*
 * Drop null values of non-nullable fields that have no default, then apply
 * defaults top-down (kube's defaulting.Default): a declared property with a
 * default that is missing, or null while not nullable, gets a deep copy of
 * the default, then the walk goes on inside it; items and
 * additionalProperties values that are null get their schema's default.
 * Run after srv_schema_prune. Idempotent.
 * Errors: LP_E_NOMEM (obj may then be partly defaulted).
 */
lp_err srv_schema_default(const struct srv_schema *s, json_t *obj);

/*
 * The x-kubernetes-validations rules of the schema, in schema order, for
 * the caller's "rule not evaluated" warnings. For i < count, *path is the
 * data path of the value the rule applies to ("" for the root, "spec",
 * "spec.items[*]", "spec.labels.*"), *rule the CEL text and *message the
 * rule's message (NULL if none); all borrowed until srv_schema_free.
 * Returns false when i is out of range.
 */
size_t srv_schema_rule_count(const struct srv_schema *s);
bool srv_schema_rule(const struct srv_schema *s, size_t i, const char **path,
		     const char **rule, const char **message);

/*
 * Why patterns match everything (see srv_schema_compile), one text per
 * pattern, borrowed until srv_schema_free; NULL when i is out of range.
 */
size_t srv_schema_warning_count(const struct srv_schema *s);
const char *srv_schema_warning(const struct srv_schema *s, size_t i);

#endif
