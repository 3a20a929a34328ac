/*
 * fuzz_cel.c -- CEL rules (server/cel.h): compile what a CRD author may
 * write in x-kubernetes-validations and evaluate it against JSON a client
 * may send.
 *
 * Input: the rule, a newline, then the JSON of self, optionally followed
 * by a NUL and the JSON of oldSelf (else oldSelf is self). JSON that does
 * not parse is replaced by a fixed object, so that every input still
 * evaluates something.
 *
 * Each rule runs twice over the same values: without a schema (every
 * node dyn) and under a small fixed schema of every node type, which
 * refers to itself so that any depth of JSON has a schema.
 *
 * Invariants:
 *   1. cel_compile returns a program, or NULL with a one-line, non-empty,
 *      valid UTF-8 reason.
 *   2. cel_eval answers one of the four results; the message is empty for
 *      CEL_TRUE and CEL_FALSE, and non-empty, one line and valid UTF-8
 *      (it goes into a JSON Status) otherwise.
 *   3. Evaluation is deterministic: the same program on the same values
 *      gives the same result and message.
 *   4. Without a schema, any JSON value equals itself: "self == oldSelf"
 *      with oldSelf the same document is CEL_TRUE (JSON has no NaN).
 *   5. cel_eval_string (messageExpression) agrees with cel_eval: a value
 *      where cel_eval gave a verdict, the same error otherwise.
 *   6. cel_compile_checked agrees with cel_compile, and cel_check_fields
 *      answers, with a one-line reason when it refuses; where it accepts,
 *      cel_cost_floor is a number (not NaN, not negative) and the same
 *      twice.
 * Sanitizers and libFuzzer's timeout and memory limit catch the rest:
 * no input may crash, leak, hang or exhaust the stack.
 *
 * The program for invariant 4 is compiled on the first call and kept.
 */
#include <jansson.h>
#include <stdbool.h>

#include "cel.h"
#include "fuzz.h"

struct fnode {
	enum cel_stype type;
	enum cel_ltype lt;
	const char *names[12];
	const struct fnode *props[12];
	const struct fnode *items;
	const struct fnode *addl;
};

static const void *f_prop(const void *node, const char *name)
{
	const struct fnode *t = node;
	for (int i = 0; i < 12 && t->names[i]; i++)
		if (!strcmp(t->names[i], name))
			return t->props[i];
	return NULL;
}

static const void *f_items(const void *node)
{
	return ((const struct fnode *)node)->items;
}

static const void *f_addl(const void *node)
{
	return ((const struct fnode *)node)->addl;
}

static enum cel_stype f_type(const void *node)
{
	return ((const struct fnode *)node)->type;
}

static enum cel_ltype f_lt(const void *node)
{
	return ((const struct fnode *)node)->lt;
}

/* kube's size estimates: unbounded strings and lists, as kube sizes them
   without maxLength or maxItems */
static double f_max_size(const void *node)
{
	enum cel_stype t = ((const struct fnode *)node)->type;
	if (t == CEL_S_STRING || t == CEL_S_BYTES || t == CEL_S_INT_OR_STRING)
		return 3145726;
	return t == CEL_S_ARRAY || t == CEL_S_MAP ? 1048575 : 0;
}

static const struct cel_schema fops = {f_prop, f_items, f_addl,
				       f_type, f_lt,	f_max_size};

static const struct fnode s_str = {.type = CEL_S_STRING};
static const struct fnode s_int = {.type = CEL_S_INT};
static const struct fnode s_num = {.type = CEL_S_DOUBLE};
static const struct fnode s_bool = {.type = CEL_S_BOOL};
static const struct fnode s_dur = {.type = CEL_S_DURATION};
static const struct fnode s_ts = {.type = CEL_S_TIMESTAMP};
static const struct fnode s_bytes = {.type = CEL_S_BYTES};
static const struct fnode s_ios = {.type = CEL_S_INT_OR_STRING};
static const struct fnode s_any = {.type = CEL_S_ANY};
static const struct fnode s_set = {
    .type = CEL_S_ARRAY, .lt = CEL_L_SET, .items = &s_str};
static const struct fnode s_strmap = {.type = CEL_S_MAP, .addl = &s_str};
static const struct fnode s_root; /* defined below: it refers to itself */
static const struct fnode s_list = {
    .type = CEL_S_ARRAY, .lt = CEL_L_MAP, .items = &s_root};
static const struct fnode s_root = {
    .type = CEL_S_OBJECT,
    .names = {"a", "b", "c", "d", "e", "f", "g", "l", "m", "o", "n", "x"},
    .props = {&s_str, &s_int, &s_num, &s_dur, &s_ts, &s_bytes, &s_ios, &s_set,
	      &s_strmap, &s_root, &s_list, &s_any},
};
static const struct fnode s_boolmap = {.type = CEL_S_MAP, .addl = &s_bool};
static const struct fnode s_top = {
    .type = CEL_S_OBJECT,
    .names = {"spec", "status", "flags", "replicas", "ratio", "ports"},
    .props = {&s_root, &s_root, &s_boolmap, &s_int, &s_num, &s_list},
};

/* The fixed schema's CEL declarations (kube's SchemaDeclType). */
static unsigned f_decl(const void *node)
{
	const struct fnode *t = node;
	switch (t->type) {
	case CEL_S_OBJECT:
		return CEL_DECL_EXPOSED | CEL_DECL_OBJECT |
		       (t == &s_top ? CEL_DECL_EMBEDDED : 0);
	case CEL_S_MAP:
		return CEL_DECL_EXPOSED | CEL_DECL_MAP;
	case CEL_S_ARRAY:
		return CEL_DECL_EXPOSED | CEL_DECL_LIST;
	case CEL_S_ANY:
		return 0;
	case CEL_S_STRING:
	case CEL_S_INT:
	case CEL_S_DOUBLE:
	case CEL_S_BOOL:
	case CEL_S_INT_OR_STRING:
	case CEL_S_DURATION:
	case CEL_S_TIMESTAMP:
	case CEL_S_BYTES:
		break;
	}
	return CEL_DECL_EXPOSED;
}

static void check_text(const char *s, const char *what)
{
	FUZZ_CHECK(!strchr(s, '\n') && !strchr(s, '\r'), "%s is not one line",
		   what);
	json_t *probe = json_string(s);
	FUZZ_CHECK(probe, "%s is not UTF-8", what);
	json_decref(probe);
}

static void eval_twice(const cel_prog *p, const struct cel_schema *ops,
		       const void *node, const json_t *self, const json_t *old)
{
	char m1[256], m2[256];
	enum cel_result r1 = cel_eval(p, ops, node, self, old, m1, sizeof m1);
	FUZZ_CHECK(r1 == CEL_TRUE || r1 == CEL_FALSE || r1 == CEL_ERROR ||
		       r1 == CEL_UNSUPPORTED,
		   "result %d", (int)r1);
	if (r1 == CEL_TRUE || r1 == CEL_FALSE)
		FUZZ_CHECK(!m1[0], "a verdict with a message: %s", m1);
	else
		FUZZ_CHECK(m1[0], "result %d without a message", (int)r1);
	check_text(m1, "the message");
	enum cel_result r2 = cel_eval(p, ops, node, self, old, m2, sizeof m2);
	FUZZ_CHECK(r1 == r2 && !strcmp(m1, m2),
		   "two evaluations differ: %d %s / %d %s", (int)r1, m1,
		   (int)r2, m2);
	/* the same as a messageExpression: a string is no error, and an
	   error is the same error */
	size_t len;
	enum cel_result r3 =
	    cel_eval_string(p, ops, node, self, old, m2, sizeof m2, &len);
	FUZZ_CHECK((r3 == CEL_TRUE || r3 == CEL_FALSE) ==
		       (r1 == CEL_TRUE || r1 == CEL_FALSE),
		   "as a string: %d, as a rule: %d", (int)r3, (int)r1);
	if (r3 == CEL_ERROR || r3 == CEL_UNSUPPORTED)
		FUZZ_CHECK(r3 == r1 && !strcmp(m1, m2),
			   "errors differ: %s / %s", m1, m2);
	else if (r3 == CEL_FALSE)
		FUZZ_CHECK(!len && !m2[0], "no string, but %zu bytes", len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static cel_prog *same;
	if (!same) {
		same = cel_compile("self == oldSelf", NULL, 0);
		FUZZ_CHECK(same, "self == oldSelf does not compile");
	}
	const uint8_t *nl = memchr(data, '\n', size);
	size_t rule_len = nl ? (size_t)(nl - data) : size;
	char *rule = fuzz_strndup(data, rule_len);
	if (!rule)
		return 0;
	const uint8_t *rest = nl ? nl + 1 : data + size;
	size_t rest_len = (size_t)(data + size - rest);
	const uint8_t *nul = memchr(rest, 0, rest_len);
	size_t self_len = nul ? (size_t)(nul - rest) : rest_len;
	json_t *self = json_loadb((const char *)rest, self_len,
				  JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	if (!self)
		self = json_loads("{\"a\":\"x\",\"b\":1,\"l\":[\"p\",\"q\"],"
				  "\"o\":{\"c\":1.5}}",
				  0, NULL);
	json_t *old = NULL;
	if (nul)
		old = json_loadb((const char *)nul + 1, rest_len - self_len - 1,
				 JSON_DECODE_ANY, NULL);
	if (!self)
		goto out;

	char why[200];
	why[0] = 'x';
	cel_prog *p = cel_compile(rule, why, sizeof why);
	if (!p) {
		FUZZ_CHECK(why[0], "a refused rule without a reason");
		check_text(why, "the reason");
		/* where it failed, shown as cel-go shows it */
		size_t at;
		bool inv;
		cel_prog *q =
		    cel_compile_checked(rule, why, sizeof why, &inv, &at);
		FUZZ_CHECK(!q, "refused once, compiled twice");
		cel_free(q);
		if (at != CEL_NO_POS && at != CEL_PROGRAM_POS) {
			FUZZ_CHECK(at <= strlen(rule),
				   "a position past the end");
			char shown[300];
			cel_error_display(rule, at, why, shown, sizeof shown);
			json_t *probe = json_string(shown);
			FUZZ_CHECK(probe, "the display is not UTF-8");
			json_decref(probe);
		}
	} else {
		bool invalid = true;
		cel_prog *q =
		    cel_compile_checked(rule, why, sizeof why, &invalid, NULL);
		FUZZ_CHECK(q && !invalid, "compiles once, not twice");
		cel_free(q);
		for (int root = 0; root < 2; root++) {
			why[0] = 0;
			size_t at;
			if (!cel_check_fields(p, &fops, f_decl,
					      root ? &s_top : &s_root, root,
					      why, sizeof why, &at)) {
				FUZZ_CHECK(at == CEL_NO_POS ||
					       at < strlen(rule),
					   "a field's position past the end");
				FUZZ_CHECK(why[0], "fields refused silently");
				check_text(why, "the fields' reason");
			} else {
				/* the result's type, known or not */
				const void *n = root ? &s_top : &s_root;
				(void)cel_result_mismatch(p, &fops, f_decl, n,
							  root, false);
				(void)cel_result_mismatch(p, &fops, f_decl, n,
							  root, true);
				/* the cost floor: a number, the same twice */
				bool e1, e2;
				double c1 = cel_cost_floor(p, &fops, f_decl, n,
							   root, &e1),
				       c2 = cel_cost_floor(p, &fops, f_decl, n,
							   root, &e2);
				FUZZ_CHECK(c1 >= 0 && c1 == c2 && e1 == e2,
					   "the cost floor is negative, NaN or "
					   "changes");
			}
		}
		const json_t *o = old ? old : self;
		eval_twice(p, NULL, NULL, self, o);
		eval_twice(p, &fops, &s_root, self, o);
		eval_twice(p, &fops, &s_top, self, o);
		cel_free(p);
	}
	char msg[256];
	enum cel_result r =
	    cel_eval(same, NULL, NULL, self, self, msg, sizeof msg);
	FUZZ_CHECK(r == CEL_TRUE, "a value differs from itself (%d %s)", (int)r,
		   msg);
out:
	json_decref(old);
	json_decref(self);
	free(rule);
	return 0;
}
