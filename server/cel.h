/*
 * cel.h -- the part of the Common Expression Language that CRD
 * x-kubernetes-validations rules use, compiled once per rule and evaluated
 * against JSON values (reference §8.8; kube's
 * apiextensions-apiserver/pkg/apiserver/schema/cel and cel-go).
 *
 * What is not here (a function, a macro or syntax outside the subset)
 * makes cel_compile fail: the caller then keeps the rule unevaluated and
 * says so, rather than guess. A compiled program never fails for lack of
 * support on a value it was written for, except where cel_eval says
 * CEL_UNSUPPORTED.
 *
 * Values are jansson values read through the schema of the rule's node,
 * as kube's UnstructuredToVal reads them: an integer is a CEL int where the
 * schema says integer and a double where it says number; a list whose
 * x-kubernetes-list-type is set or map compares equal regardless of order;
 * an object's property names are reached by their CEL-escaped names
 * (__dash__, __dot__, __slash__, __<keyword>__).
 *
 * A compiled program is immutable: any number of threads may evaluate it
 * at once.
 */
#ifndef LAPIS_SERVER_CEL_H
#define LAPIS_SERVER_CEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The type a schema node gives its values. */
enum cel_stype {
	CEL_S_ANY,    /* no type, x-kubernetes-preserve-unknown-fields: dyn */
	CEL_S_OBJECT, /* type object with properties (or with neither
			 properties nor additionalProperties) */
	CEL_S_MAP,    /* type object with additionalProperties */
	CEL_S_ARRAY,
	CEL_S_STRING,
	CEL_S_INT,    /* type integer */
	CEL_S_DOUBLE, /* type number */
	CEL_S_BOOL,
	CEL_S_INT_OR_STRING, /* x-kubernetes-int-or-string: dyn */
	CEL_S_DURATION,	 /* string, format duration: a google.protobuf.Duration
			  */
	CEL_S_TIMESTAMP, /* string, format date-time: a Timestamp */
	CEL_S_BYTES,	 /* string, format byte: base64 of bytes */
};

enum cel_ltype { CEL_L_ATOMIC, CEL_L_SET, CEL_L_MAP };

/*
 * How the evaluator reads the schema: the caller's callbacks over its own
 * node type. Every node pointer is opaque here and may be NULL (no schema:
 * CEL_S_ANY, and every descent from it is NULL too). Borrowed, valid for
 * the call of cel_eval.
 */
struct cel_schema {
	/* the declared property's schema, or NULL */
	const void *(*prop)(const void *node, const char *name);
	/* items' schema, or NULL */
	const void *(*items)(const void *node);
	/* additionalProperties' schema, or NULL */
	const void *(*addl)(const void *node);
	enum cel_stype (*type)(const void *node);
	enum cel_ltype (*list_type)(const void *node);
	/* the most a value here can hold, as kube estimates it for costs
	   (its DeclType's MaxElements: characters of a string, items of a
	   list, entries of a map), or 0 when unknown; may itself be NULL */
	double (*max_size)(const void *node);
	/* the i-th name of a map list's x-kubernetes-list-map-keys, or NULL
	   past the last; may itself be NULL */
	const char *(*map_key)(const void *node, size_t i);
};

/* kube's request size bound (apiserver's MaxRequestSizeBytes), from which
   it estimates how much an unbounded value can hold: a string without
   maxLength, CEL_MAX_REQUEST - 2 characters. */
#define CEL_MAX_REQUEST 3145728.0

typedef struct cel_prog cel_prog;

/*
 * Compile rule text. Returns a new program, or NULL when the text does not
 * parse or uses something outside the subset; then *why (if why_size) says
 * what, as one line. Out of memory also returns NULL, with why "out of
 * memory".
 */
cel_prog *cel_compile(const char *src, char *why, size_t why_size);

/*
 * cel_compile, and when it fails, *invalid (if not NULL) says whether the
 * text is not CEL that kube would compile at all (a syntax error, an
 * undeclared name, a bad literal, a bad regex, a macro misused: kube
 * refuses the CRD that carries it) rather than CEL outside the subset or
 * out of memory.
 */
cel_prog *cel_compile_checked(const char *src, char *why, size_t why_size,
			      bool *invalid, size_t *at);

/*
 * cel_compile_checked in one of kube's two environments: when new_expr,
 * the one kube compiles an expression with that the object before the
 * update did not have (NewExpressionsEnv: kube 1.33's compatibility
 * version 1.32, without the semver library's semver, isSemver, major,
 * minor and patch: undeclared); else the one for stored expressions,
 * with every library (cel_compile_checked's).
 */
cel_prog *cel_compile_env(const char *src, bool new_expr, char *why,
			  size_t why_size, bool *invalid, size_t *at);

/* No position in the source. */
#define CEL_NO_POS ((size_t)-1)
/* The expression compiles but cel-go fails to build its program (a
   find() or findAll() pattern Go's regexp refuses): why holds that error
   alone, which kube words "program instantiation failed: <why>". */
#define CEL_PROGRAM_POS ((size_t)-2)

/*
 * The position part of cel-go's display of an error at byte at of src
 * with text msg (what follows its "ERROR: <input>"): ":LINE:COLUMN: msg",
 * the source line, and a caret line under the column. When
 * cel_compile_checked or cel_check_fields is given at, it gets there the
 * failure's position (CEL_NO_POS when none is known) and why holds the
 * bare text for this display ("Syntax error: ..." for a syntax error).
 */
void cel_error_display(const char *src, size_t at, const char *msg, char *out,
		       size_t size);

/*
 * What kube's SchemaDeclType makes of a schema node, for cel_check_fields:
 * CEL_DECL_EXPOSED when it is declared to CEL at all (a property that is
 * not is no field), with the kind of declaration; CEL_DECL_EMBEDDED for
 * x-kubernetes-embedded-resource (a resource root).
 */
enum {
	CEL_DECL_EXPOSED = 1,
	CEL_DECL_OBJECT = 2, /* an object with fields (no additionalProperties
				schema): unknown fields are undefined */
	CEL_DECL_LIST = 4,
	CEL_DECL_MAP = 8,
	CEL_DECL_EMBEDDED = 16,
};

/*
 * kube's type checker on field selections: false, with *why "undefined
 * field 'x'", when p selects (a.x or has(a.x)) a field that the object
 * it reads, known from the schema, does not declare to CEL. decl gives
 * the CEL_DECL_ flags of a node; ops->prop, items and addl descend.
 * node is the rule's node, resource_root true at the root of a custom
 * resource or of an embedded resource (apiVersion, kind, metadata.name
 * and metadata.generateName are fields there). Only what is known is
 * checked: a value of any other origin may have any field.
 */
bool cel_check_fields(const cel_prog *p, const struct cel_schema *ops,
		      unsigned (*decl)(const void *node), const void *node,
		      bool resource_root, char *why, size_t why_size,
		      size_t *at);

/*
 * Is p's result known, from its form and the schema (as cel_check_fields
 * reads it), to be of another type than a rule's bool (want_string false)
 * or a messageExpression's string? kube refuses such a rule ("cel
 * expression must evaluate to a bool"). Where the type is not known here
 * (dyn values, functions beyond the common ones), false.
 */
/*
 * A floor under kube's static cost estimate of p (cel-go's estimator with
 * kube's sizes from ops->max_size), for a program cel_check_fields
 * accepted: what lapis knows costs at least this much (names, selections,
 * string traversals and regexes, comprehensions over ranges of known
 * size); everything else counts nothing, so kube's estimate is never
 * lower. *exact says the floor is kube's estimate itself: every part of
 * p is one lapis models exactly (names, selections, indexes, literals,
 * operators, size(), the string methods above, all()) over sizes kube
 * knows the same way.
 */
double cel_cost_floor(const cel_prog *p, const struct cel_schema *ops,
		      unsigned (*decl)(const void *node), const void *node,
		      bool resource_root, bool *exact);

bool cel_result_mismatch(const cel_prog *p, const struct cel_schema *ops,
			 unsigned (*decl)(const void *node), const void *node,
			 bool resource_root, bool want_string);

/* Does the program mention oldSelf (a transition rule)? */
bool cel_uses_old_self(const cel_prog *p);

/* The rule's optionalOldSelf: p's oldSelf is an optional, optional.of
   the old value or, with no old value (a create, a newly set field),
   optional.none(); the rule is then evaluated without one too. */
void cel_set_optional_old_self(cel_prog *p);

/* Accepts NULL. */
void cel_free(cel_prog *p);

enum cel_result {
	CEL_TRUE,
	CEL_FALSE,	 /* the rule failed (also: a result not a bool) */
	CEL_ERROR,	 /* a runtime error; msg says it as cel-go does,
			    e.g. "no such key: replicas" */
	CEL_UNSUPPORTED, /* the evaluation met something outside the
			    subset (msg says what); not a verdict */
};

/*
 * Evaluate p with self bound to self (borrowed, not NULL) read through
 * node, and oldSelf to old_self (NULL: no oldSelf; a transition rule is not
 * evaluated then, and the caller should not call, unless the rule's oldSelf
 * is optional: cel_set_optional_old_self). msg (if msg_size) gets
 * a one-line message for CEL_ERROR and CEL_UNSUPPORTED, else "".
 * Evaluation is bounded in steps (one million, kube's per-call limit); a
 * rule that exceeds the bound gets CEL_ERROR with msg CEL_COST_MSG.
 */
#define CEL_COST_MSG "operation cancelled: actual cost limit exceeded"
enum cel_result cel_eval(const cel_prog *p, const struct cel_schema *ops,
			 const void *node, const json_t *self,
			 const json_t *old_self, char *msg, size_t msg_size);

/*
 * cel_eval with a budget of steps shared by a run of evaluations (kube's
 * RuntimeCELCostBudget for one object's rules): *budget is what is left,
 * and is reduced by the steps this evaluation took. When the budget, not
 * the rule's own limit, ends the evaluation, the result is CEL_ERROR with
 * msg CEL_BUDGET_MSG. budget may be NULL (cel_eval).
 */
#define CEL_BUDGET_MSG                                                         \
	"validation failed due to running out of cost budget, no further "     \
	"validation rules will be run"
enum cel_result cel_eval_budget(const cel_prog *p, const struct cel_schema *ops,
				const void *node, const json_t *self,
				const json_t *old_self, uint64_t *budget,
				char *msg, size_t msg_size);

/*
 * Evaluate p as cel_eval does, for a string (a messageExpression): CEL_TRUE
 * when the result is a string, its bytes in out (cut at out_size - 1 and
 * NUL-terminated; the string may hold a NUL of its own) and its whole
 * length in *len; CEL_FALSE when the result is no string; CEL_ERROR and
 * CEL_UNSUPPORTED as cel_eval, with the message in out.
 */
enum cel_result cel_eval_string(const cel_prog *p, const struct cel_schema *ops,
				const void *node, const json_t *self,
				const json_t *old_self, char *out,
				size_t out_size, size_t *len);

#endif
