/*
 * cel.c -- the CEL subset of cel.h: a lexer and recursive-descent parser
 * into a small tree, a resolver that binds names, and a tree-walking
 * evaluator over jansson values read through the caller's schema.
 *
 * Any thread: a compiled program is never written after cel_compile, and
 * each cel_eval keeps its state (an arena, the macro variables, the step
 * count) on its own stack and heap.
 *
 * Invariants:
 *   1. A tree is at most MAX_DEPTH nodes deep (checked as each node is
 *      made) and the parser recurses at most MAX_DEPTH times, so neither
 *      compiling nor evaluating can exhaust the stack; chains of && and ||
 *      are built balanced, as cel-go's parser does, so that long chains
 *      of conditions stay shallow.
 *   2. Every string value points into a buffer that is NUL-terminated at
 *      or after the value's end (a JSON string, a literal, an arena copy):
 *      s[len] may always be read.
 *   3. Evaluation allocates only from its arena, freed as a whole when
 *      cel_eval returns; values read from JSON borrow the JSON.
 *   4. Every node visit, every iteration and every 16 bytes a function
 *      reads or writes cost a step; past STEP_LIMIT steps or ARENA_LIMIT
 *      bytes the evaluation stops, and nothing (no && or all()) absorbs
 *      that.
 *
 * Errors follow cel-go: a runtime error is a value that operators pass on,
 * except where CEL absorbs it (false && e, true || e, all() with a false
 * element, exists() with a true one).
 *
 * The subset: literals of every CEL kind (bytes too); self, oldSelf and
 * macro variables; the operators with CEL's precedence; list and map
 * literals; has(), all, exists, exists_one, map (2 and 3 arguments) and
 * filter; the two-variable all, exists, existsOne, transformList,
 * transformMap and transformMapEntry (cel-go's ext.TwoVarComprehensions);
 * size, the strings extension (contains, startsWith, endsWith,
 * matches, lowerAscii, upperAscii, trim, split, join, indexOf,
 * lastIndexOf, replace, substring, charAt, strings.quote), the
 * conversions int, uint,
 * double, string, bool, bytes, dyn, duration and timestamp, and kube's
 * list library (isSorted, sum, min, max, indexOf, lastIndexOf); kube's ip
 * library (isIP, ip, ip.isCanonical, family, isUnspecified, isLoopback,
 * isLinkLocalMulticast, isLinkLocalUnicast, isGlobalUnicast, string and
 * ==), cidr library (isCIDR, cidr, containsIP, containsCIDR, ip, masked,
 * prefixLength, string and ==) and url library (isURL, url, getScheme,
 * getHost, getHostname, getPort, getEscapedPath, getQuery); cel-go's
 * duration accessors (getHours, getMinutes, getSeconds,
 * getMilliseconds) and timestamp accessors (getFullYear, getMonth,
 * getDayOfMonth, getDate, getDayOfWeek, getDayOfYear, getHours,
 * getMinutes, getSeconds, getMilliseconds), in UTC or in a zone written
 * as an offset ("+05:30") or "UTC"; cel-go's optional types (a.?f,
 * a[?k], [?e] and {?k: v} literals, optional.of, optional.ofNonZeroValue,
 * optional.none, hasValue, value, or and orValue short-circuiting, the
 * optMap and optFlatMap macros, first, last, optional.unwrap and
 * unwrapOpt; a selection or index of an optional is optional), the sets
 * extension (sets.contains, sets.equivalent, sets.intersects), kube's
 * quantity library (quantity.c does the arithmetic), its format
 * library (format.<name>(), format.named, validate) and its semver
 * library (semver and isSemver, normalizing or not, major, minor, patch,
 * isGreaterThan, isLessThan, compareTo and ==; semver.c parses); type()
 * and the type names (int, uint, double, bool, string, bytes, list, map,
 * null_type, type, google.protobuf.Duration and Timestamp, net.IP,
 * net.CIDR, kubernetes.URL, Quantity, Semver and NamedFormat,
 * optional_type; an object the schema declares with fields is of a type
 * no name equals, as in kube); a time zone by name ("Europe/Paris") from
 * the system's zone files, as Go's LoadLocation reads them (tz.c).
 * Outside it, and refused by cel_compile: kube's authz library, message
 * construction, and any
 * name but self and oldSelf. Two url values compared with == are
 * CEL_UNSUPPORTED too (kube compares their re-serialised text).
 * cel_compile_checked tells text that is not CEL (kube refuses it when a
 * CRD is written) from CEL outside the subset.
 *
 * Known differences from kube, all on values a validated object does not
 * hold: a property the schema does not declare is read as dyn (kube
 * refuses the rule when it is compiled); list + list concatenates lists
 * of x-kubernetes-list-type map instead of merging them by key; a
 * map-list compares equal as a multiset of its elements, not by its keys.
 */
#include "cel.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipaddr.h"
#include "quantity.h"
#include "registry/json.h"
#include "resources.h"
#include "schema.h"
#include "semver.h"
#include "tz.h"

/* trunc(3) without libm, which lapis_srv does not link: every double
   from 2^52 up is already integral. */
static double dtrunc(double d)
{
	if (!(d > -4503599627370496.0 && d < 4503599627370496.0))
		return d;
	return (double)(int64_t)d;
}

/* cel-go's parser refuses more than 250 levels of recursion
   (parser.MaxRecursionDepth default); the same bound keeps our stack
   small. */
#define MAX_DEPTH 250
/* Equality descends into JSON; jansson parses at most 2048 levels. */
#define MAX_EQ_DEPTH 2100
/* kube's per-expression runtime cost limit is 1e6 (celconfig.PerCallLimit,
   given to CRD rules' programs as cel.CostLimit); one of our steps is
   roughly one of its cost units. */
#define STEP_LIMIT 1000000ULL
/* A rule that builds strings or lists in a loop stops here, well before
   the machine notices. */
#define ARENA_LIMIT (64u << 20)
#define COST_MSG CEL_COST_MSG

/* ---------------------------------------------------------------- tree */

enum nkind {
	N_INT,
	N_UINT,
	N_DOUBLE,
	N_STRING,
	N_BYTES,
	N_BOOL,
	N_NULL,
	N_TYPE,	 /* a type name (int, string, list, ...): s */
	N_IDENT, /* before resolution only */
	N_VAR,	 /* a macro variable: slot */
	N_SELF,
	N_OLD,
	N_SELECT, /* a.s */
	N_HAS,	  /* has(a.s): a is the N_SELECT */
	N_INDEX,  /* a[b] */
	N_LIST,	  /* args */
	N_MAP,	  /* args: key, value, key, value ... */
	N_NOT,
	N_NEG,
	N_BIN, /* a op b */
	N_AND,
	N_OR,
	N_COND, /* a ? b : c */
	N_CALL, /* op: function; a: target or NULL; args */
	N_COMP, /* op: macro; a: range; b, c: bodies; slot */
};

enum binop {
	B_EQ,
	B_NE,
	B_LT,
	B_LE,
	B_GT,
	B_GE,
	B_IN,
	B_ADD,
	B_SUB,
	B_MUL,
	B_DIV,
	B_MOD
};

/* The macros; the M2_ ones are the two-variable comprehensions of cel-go's
   ext.TwoVarComprehensions, which Kubernetes 1.33 enables. */
enum macro {
	M_ALL,
	M_EXISTS,
	M_EXISTS_ONE,
	M_MAP,
	M_MAP3,
	M_FILTER,
	M_OPTMAP,  /* cel-go's optional types: opt.optMap(v, e) */
	M_OPTFLAT, /* opt.optFlatMap(v, e) */
	M2_ALL,
	M2_EXISTS,
	M2_EXISTS_ONE,
	M2_TLIST,  /* transformList */
	M2_TMAP,   /* transformMap */
	M2_TENTRY, /* transformMapEntry */
};

enum fn {
	F_SIZE,
	F_CONTAINS,
	F_STARTS,
	F_ENDS,
	F_MATCHES,
	F_FIND, /* kube's regex library */
	F_FINDALL,
	F_LOWER,
	F_UPPER,
	F_TRIM,
	F_SPLIT,
	F_JOIN,
	F_INDEXOF,
	F_LASTINDEXOF,
	F_REPLACE,
	F_SUBSTRING,
	F_CHARAT,
	F_INT,
	F_UINT,
	F_DOUBLE,
	F_STRING,
	F_BOOL,
	F_BYTES,
	F_DYN,
	F_DURATION,
	F_TIMESTAMP,
	F_ISSORTED,
	F_SUM,
	F_MIN,
	F_MAX,
	/* kube's ip and cidr libraries */
	F_ISIP,
	F_IP, /* ip(string), and cidr.ip() */
	F_IP_CANON,
	F_FAMILY,
	F_IS_UNSPEC,
	F_IS_LOOPBACK,
	F_IS_LL_MCAST,
	F_IS_LL_UCAST,
	F_IS_GLOBAL,
	F_ISCIDR,
	F_CIDR,
	F_CONTAINS_IP,
	F_CONTAINS_CIDR,
	F_MASKED,
	F_PREFIXLEN,
	/* kube's url library */
	F_ISURL,
	F_URL,
	F_GETSCHEME,
	F_GETHOST,
	F_GETHOSTNAME,
	F_GETPORT,
	F_GETPATH,
	F_GETQUERY,
	/* cel-go's timestamp accessors (hours to milliseconds: durations'
	   too) */
	F_GETFULLYEAR,
	F_GETMONTH,
	F_GETDAYOFMONTH,
	F_GETDATE,
	F_GETDAYOFWEEK,
	F_GETDAYOFYEAR,
	F_GETHOURS,
	F_GETMINUTES,
	F_GETSECONDS,
	F_GETMILLIS,
	/* cel-go's optional types */
	F_OPT_OF,
	F_OPT_NZ,
	F_OPT_NONE,
	F_OPT_UNWRAP, /* optional.unwrap(l), l.unwrapOpt() */
	F_HASVALUE,
	F_VALUE,
	F_OR,	   /* evaluated by eval_call: short-circuits */
	F_ORVALUE, /* the same */
	F_FIRST,
	F_LAST,
	/* cel-go's sets extension */
	F_SETS_CONTAINS,
	F_SETS_EQUIV,
	F_SETS_INTERSECTS,
	/* kube's format library; F_FMT is format.<name>(), the node's
	   lit.i the index into fmts */
	F_FMT_NAMED,
	F_FMT,
	F_VALIDATE,
	/* kube's quantity library */
	F_QUANTITY,
	F_ISQUANTITY,
	F_SIGN,
	F_ISINTEGER,
	F_ASINTEGER,
	F_ASFLOAT,
	F_QADD,
	F_QSUB,
	F_QLT,
	F_QGT,
	F_QCMP,
	/* kube's semver library (isGreaterThan, isLessThan and compareTo
	   are the quantity library's names, told apart by the receiver) */
	F_SEMVER,
	F_ISSEMVER,
	F_MAJOR,
	F_MINOR,
	F_PATCH,
	F_TYPE,
	F_QUOTE,  /* strings.quote */
	F_FORMAT, /* cel-go's string.format */
};

/* The functions of the subset: name, and how many arguments a global call
   (gmin..gmax) and a method call (mmin..mmax, not counting the target)
   take; -1 where there is no such form. */
static const struct fndef {
	const char *name;
	enum fn id;
	int gmin, gmax, mmin, mmax;
} fns[] = {
    {"size", F_SIZE, 1, 1, 0, 0},
    {"contains", F_CONTAINS, -1, -1, 1, 1},
    {"startsWith", F_STARTS, -1, -1, 1, 1},
    {"endsWith", F_ENDS, -1, -1, 1, 1},
    {"matches", F_MATCHES, 2, 2, 1, 1},
    {"find", F_FIND, -1, -1, 1, 1},
    {"findAll", F_FINDALL, -1, -1, 1, 2},
    {"lowerAscii", F_LOWER, -1, -1, 0, 0},
    {"upperAscii", F_UPPER, -1, -1, 0, 0},
    {"trim", F_TRIM, -1, -1, 0, 0},
    {"split", F_SPLIT, -1, -1, 1, 2},
    {"join", F_JOIN, -1, -1, 0, 1},
    {"indexOf", F_INDEXOF, -1, -1, 1, 2},
    {"lastIndexOf", F_LASTINDEXOF, -1, -1, 1, 2},
    {"replace", F_REPLACE, -1, -1, 2, 3},
    {"substring", F_SUBSTRING, -1, -1, 1, 2},
    {"charAt", F_CHARAT, -1, -1, 1, 1},
    {"int", F_INT, 1, 1, -1, -1},
    {"uint", F_UINT, 1, 1, -1, -1},
    {"double", F_DOUBLE, 1, 1, -1, -1},
    {"string", F_STRING, 1, 1, -1, -1},
    {"bool", F_BOOL, 1, 1, -1, -1},
    {"bytes", F_BYTES, 1, 1, -1, -1},
    {"dyn", F_DYN, 1, 1, -1, -1},
    {"duration", F_DURATION, 1, 1, -1, -1},
    {"timestamp", F_TIMESTAMP, 1, 1, -1, -1},
    {"isSorted", F_ISSORTED, -1, -1, 0, 0},
    {"sum", F_SUM, -1, -1, 0, 0},
    {"min", F_MIN, -1, -1, 0, 0},
    {"max", F_MAX, -1, -1, 0, 0},
    {"isIP", F_ISIP, 1, 1, -1, -1},
    {"ip", F_IP, 1, 1, 0, 0},
    {"ip.isCanonical", F_IP_CANON, 1, 1, -1, -1},
    {"family", F_FAMILY, -1, -1, 0, 0},
    {"isUnspecified", F_IS_UNSPEC, -1, -1, 0, 0},
    {"isLoopback", F_IS_LOOPBACK, -1, -1, 0, 0},
    {"isLinkLocalMulticast", F_IS_LL_MCAST, -1, -1, 0, 0},
    {"isLinkLocalUnicast", F_IS_LL_UCAST, -1, -1, 0, 0},
    {"isGlobalUnicast", F_IS_GLOBAL, -1, -1, 0, 0},
    {"isCIDR", F_ISCIDR, 1, 1, -1, -1},
    {"cidr", F_CIDR, 1, 1, -1, -1},
    {"containsIP", F_CONTAINS_IP, -1, -1, 1, 1},
    {"containsCIDR", F_CONTAINS_CIDR, -1, -1, 1, 1},
    {"masked", F_MASKED, -1, -1, 0, 0},
    {"prefixLength", F_PREFIXLEN, -1, -1, 0, 0},
    {"isURL", F_ISURL, 1, 1, -1, -1},
    {"url", F_URL, 1, 1, -1, -1},
    {"getScheme", F_GETSCHEME, -1, -1, 0, 0},
    {"getHost", F_GETHOST, -1, -1, 0, 0},
    {"getHostname", F_GETHOSTNAME, -1, -1, 0, 0},
    {"getPort", F_GETPORT, -1, -1, 0, 0},
    {"getEscapedPath", F_GETPATH, -1, -1, 0, 0},
    {"getQuery", F_GETQUERY, -1, -1, 0, 0},
    {"getFullYear", F_GETFULLYEAR, -1, -1, 0, 1},
    {"getMonth", F_GETMONTH, -1, -1, 0, 1},
    {"getDayOfMonth", F_GETDAYOFMONTH, -1, -1, 0, 1},
    {"getDate", F_GETDATE, -1, -1, 0, 1},
    {"getDayOfWeek", F_GETDAYOFWEEK, -1, -1, 0, 1},
    {"getDayOfYear", F_GETDAYOFYEAR, -1, -1, 0, 1},
    {"getHours", F_GETHOURS, -1, -1, 0, 1},
    {"getMinutes", F_GETMINUTES, -1, -1, 0, 1},
    {"getSeconds", F_GETSECONDS, -1, -1, 0, 1},
    {"getMilliseconds", F_GETMILLIS, -1, -1, 0, 1},
    {"optional.of", F_OPT_OF, 1, 1, -1, -1},
    {"optional.ofNonZeroValue", F_OPT_NZ, 1, 1, -1, -1},
    {"optional.none", F_OPT_NONE, 0, 0, -1, -1},
    {"optional.unwrap", F_OPT_UNWRAP, 1, 1, -1, -1},
    {"unwrapOpt", F_OPT_UNWRAP, -1, -1, 0, 0},
    {"hasValue", F_HASVALUE, -1, -1, 0, 0},
    {"value", F_VALUE, -1, -1, 0, 0},
    {"or", F_OR, -1, -1, 1, 1},
    {"orValue", F_ORVALUE, -1, -1, 1, 1},
    {"first", F_FIRST, -1, -1, 0, 0},
    {"last", F_LAST, -1, -1, 0, 0},
    {"sets.contains", F_SETS_CONTAINS, 2, 2, -1, -1},
    {"sets.equivalent", F_SETS_EQUIV, 2, 2, -1, -1},
    {"sets.intersects", F_SETS_INTERSECTS, 2, 2, -1, -1},
    {"format.named", F_FMT_NAMED, 1, 1, -1, -1},
    {"validate", F_VALIDATE, -1, -1, 1, 1},
    {"quantity", F_QUANTITY, 1, 1, -1, -1},
    {"isQuantity", F_ISQUANTITY, 1, 1, -1, -1},
    {"sign", F_SIGN, -1, -1, 0, 0},
    {"isInteger", F_ISINTEGER, -1, -1, 0, 0},
    {"asInteger", F_ASINTEGER, -1, -1, 0, 0},
    {"asApproximateFloat", F_ASFLOAT, -1, -1, 0, 0},
    {"add", F_QADD, -1, -1, 1, 1},
    {"sub", F_QSUB, -1, -1, 1, 1},
    {"isLessThan", F_QLT, -1, -1, 1, 1},
    {"isGreaterThan", F_QGT, -1, -1, 1, 1},
    {"compareTo", F_QCMP, -1, -1, 1, 1},
    {"semver", F_SEMVER, 1, 2, -1, -1},
    {"isSemver", F_ISSEMVER, 1, 2, -1, -1},
    {"major", F_MAJOR, -1, -1, 0, 0},
    {"minor", F_MINOR, -1, -1, 0, 0},
    {"patch", F_PATCH, -1, -1, 0, 0},
    {"type", F_TYPE, 1, 1, -1, -1},
    {"strings.quote", F_QUOTE, 1, 1, -1, -1},
    {"format", F_FORMAT, -1, -1, 1, 1},
};

struct node {
	enum nkind k;
	int op;	   /* enum binop, fn or macro */
	int depth; /* 1 + the deepest child */
	int slot;  /* N_VAR, N_COMP: the variable */
	int slot2; /* N_COMP of an M2_ macro: the second variable */
	union {
		int64_t i;
		uint64_t u;
		double d;
		bool b;
	} lit;
	char *s;  /* string/bytes literal, field or identifier name;
		     owned, NUL-terminated */
	char *s2; /* N_COMP of an M2_ macro: the second variable's name */
	size_t s_len;
	struct srv_goregex *re; /* N_CALL matches with a literal pattern */
	bool opt_sel;		/* N_SELECT, N_INDEX: a.?s, a[?b] */
	bool opt_elem;		/* an element of N_LIST, a key of N_MAP:
				   written with a leading '?' */
	bool no_member;		/* N_CALL: a type conversion written as a
				   method, which no overload takes (the
				   checker refuses it) */
	struct node *a, *b, *c; /* operands, see enum nkind */
	struct node **args;	/* owned array of n_args */
	int n_args;
	struct node *all_next; /* every node of a program, for cel_free */
	size_t pos; /* where it is in the source, as cel-go locates it: an
		       identifier's start, a selection's '.', a macro's '('
		       (CEL_NO_POS when unknown) */
};

struct cel_prog {
	struct node *root;
	struct node *all; /* list through all_next */
	int n_slots;	  /* macro variables */
	bool old_self;	  /* mentions oldSelf */
	bool opt_old;	  /* oldSelf is optional (optionalOldSelf) */
};

/* --------------------------------------------------------------- utf-8 */

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0; its
   character in *cp. */
static size_t utf8_len(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t w = n ? reg_utf8_seq(s, n) : 0;
	if (w)
		reg_utf8_decode(s, n, cp);
	return w;
}

static bool utf8_valid(const char *s, size_t n)
{
	uint32_t cp;
	for (size_t i = 0; i < n;) {
		size_t l = utf8_len((const unsigned char *)s + i, n - i, &cp);
		if (!l)
			return false;
		i += l;
	}
	return true;
}

/* Code points in valid UTF-8. */
static int64_t utf8_count(const char *s, size_t n)
{
	int64_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			k++;
	return k;
}

/* Byte offset of code point cp (0..count) in valid UTF-8. */
static size_t utf8_off(const char *s, size_t n, int64_t cp)
{
	size_t i = 0;
	for (; i < n && cp > 0; cp--) {
		i++;
		while (i < n && ((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
	}
	return i;
}

/* Copy src into dst (size > 0) as one line, cut at a UTF-8 boundary. */
static void put_msg(char *dst, size_t size, const char *src)
{
	size_t n = 0, total = strlen(src);
	if (!size)
		return;
	for (size_t i = 0; i < total && n + 1 < size;) {
		uint32_t cp;
		size_t l =
		    utf8_len((const unsigned char *)src + i, total - i, &cp);
		if (!l) {
			i++;
			continue;
		}
		if (n + l >= size)
			break;
		if (l == 1 && (cp < 0x20 || cp == 0x7f))
			dst[n++] = ' ';
		else
			memcpy(dst + n, src + i, l), n += l;
		i += l;
	}
	dst[n] = 0;
}

/* put_msg of a formatted text. */
static void put_vfmt(char *dst, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
static void put_vfmt(char *dst, size_t size, const char *fmt, va_list ap)
{
	char text[1024];
	vsnprintf(text, sizeof text, fmt, ap);
	put_msg(dst, size, text);
}

static void put_fmt(char *dst, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void put_fmt(char *dst, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	put_vfmt(dst, size, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------ escaping */

/* kube's reserved CEL words (k8s.io/apiserver/pkg/cel/escaping.go). */
static const char *const reserved[] = {
    "true",	"false",   "null",	"in",	    "as",  "break",  "const",
    "continue", "else",	   "for",	"function", "if",  "import", "let",
    "loop",	"package", "namespace", "return",   "var", "void",   "while",
};

/* Is s (n bytes) one of the n_w words w? */
static bool is_word(const char *const *w, size_t n_w, const char *s, size_t n)
{
	for (size_t i = 0; i < n_w; i++)
		if (strlen(w[i]) == n && memcmp(w[i], s, n) == 0)
			return true;
	return false;
}

static bool is_reserved(const char *s, size_t n)
{
	return is_word(reserved, sizeof reserved / sizeof *reserved, s, n);
}

/* CEL's own reserved words, which no identifier may be. */
static bool is_cel_reserved(const char *s, size_t n)
{
	static const char *const w[] = {
	    "as",	 "break",  "const",  "continue", "else",  "for",
	    "function",	 "if",	   "import", "let",	 "loop",  "package",
	    "namespace", "return", "var",    "void",	 "while",
	};
	return is_word(w, sizeof w / sizeof *w, s, n);
}

/* ----------------------------------------------------------- the arena */

struct chunk {
	struct chunk *next;
	size_t size, used;
	max_align_t data[];
};

struct ctx {
	const struct cel_schema *ops; /* NULL: everything is dyn */
	struct val *slots;	      /* macro variables, by slot */
	const json_t *old_json;
	bool opt_old; /* the program's oldSelf is optional */
	const void *node;
	uint64_t steps;
	uint64_t limit; /* steps allowed: STEP_LIMIT or a smaller budget */
	const char *limit_msg; /* what passing it says */
	struct chunk *chunks;
	size_t arena_total;
	const char *abort_msg; /* set: stop, and answer CEL_ERROR */
};

static void abort_eval(struct ctx *c, const char *msg)
{
	if (!c->abort_msg)
		c->abort_msg = msg;
}

static bool charge(struct ctx *c, uint64_t n)
{
	c->steps += n;
	if (c->steps > c->limit)
		abort_eval(c, c->limit_msg);
	return !c->abort_msg;
}

static void *aalloc(struct ctx *c, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (!n)
		n = 16;
	if (c->abort_msg || n > ARENA_LIMIT ||
	    c->arena_total + n > ARENA_LIMIT) {
		abort_eval(c, COST_MSG);
		return NULL;
	}
	charge(c, n / 16);
	struct chunk *h = c->chunks;
	if (!h || h->size - h->used < n) {
		size_t sz = n > 8192 ? n : 8192;
		h = malloc(sizeof *h + sz);
		if (!h) {
			abort_eval(c, "out of memory");
			return NULL;
		}
		h->size = sz;
		h->used = 0;
		h->next = c->chunks;
		c->chunks = h;
	}
	void *p = (char *)h->data + h->used;
	h->used += n;
	c->arena_total += n;
	return p;
}

static void arena_free(struct ctx *c)
{
	while (c->chunks) {
		struct chunk *n = c->chunks->next;
		free(c->chunks);
		c->chunks = n;
	}
}

/* ---------------------------------------------------------------- values */

enum vk {
	V_ERR,	 /* s: the message */
	V_UNSUP, /* s: what is not supported */
	V_NULL,
	V_BOOL,
	V_INT,
	V_UINT,
	V_DOUBLE,
	V_STR,
	V_BYTES,
	V_LIST,
	V_MAP,
	V_DUR,	  /* i: nanoseconds, as Go's time.Duration */
	V_TS,	  /* ts */
	V_IP,	  /* ip: kube's net.IP */
	V_CIDR,	  /* ip, with bits: kube's net.CIDR (address unmasked) */
	V_URL,	  /* s: the text, which url() took: kube's URL */
	V_OPT,	  /* opt: the value, NULL for optional.none() */
	V_QTY,	  /* q: kube's Quantity */
	V_FMT,	  /* i: the format, an index into fmts: kube's Format */
	V_SEMVER, /* sv: kube's Semver */
	V_TYPE,	  /* s: a type's name, as type() and the type names give */
};

struct val {
	enum vk k;
	bool json; /* V_LIST, V_MAP: read from JSON (js) */
	bool set;  /* V_LIST built from a set-list: equal in any order */
	bool qptr; /* V_QTY made by add or sub: kube's *Quantity, which no
		      Quantity's == accepts */
	union {
		bool b;
		int64_t i;
		uint64_t u;
		double d;
		struct {
			const char *p;
			size_t n;
		} s;
		struct {
			const json_t *j;
			const void *node;
		} js;
		const struct val *opt;
		const struct srv_qty *q;
		const struct srv_semver *sv;
		struct {
			struct val *items;
			size_t n;
		} l;
		struct {
			struct val *keys, *vals;
			size_t n;
		} m;
		struct {
			int64_t sec;
			int32_t ns;
			int16_t off; /* the zone written, in minutes east of
					UTC: kept for string() as Go keeps it */
		} ts;
		struct {
			unsigned char b[16]; /* IPv6 form; IPv4 as
						::ffff:a.b.c.d */
			bool v4;	     /* netip's Is4 */
			int16_t bits;	     /* V_CIDR: prefix length */
		} ip;
	};
};

static struct val mkbool(bool b)
{
	struct val v = {.k = V_BOOL};
	v.b = b;
	return v;
}

static struct val mkint(int64_t i)
{
	struct val v = {.k = V_INT};
	v.i = i;
	return v;
}

static struct val mkuint(uint64_t u)
{
	struct val v = {.k = V_UINT};
	v.u = u;
	return v;
}

static struct val mkdouble(double d)
{
	struct val v = {.k = V_DOUBLE};
	v.d = d;
	return v;
}

static struct val mkstr(enum vk k, const char *p, size_t n)
{
	struct val v = {.k = k};
	v.s.p = p;
	v.s.n = n;
	return v;
}

static struct val mkdur(int64_t ns)
{
	struct val v = {.k = V_DUR};
	v.i = ns;
	return v;
}

static struct val err_static(const char *msg)
{
	return mkstr(V_ERR, msg, strlen(msg));
}

static struct val errf(struct ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A formatted error, in the arena (out of memory: a static one, and the
   evaluation stops anyway). */
static struct val errf(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	char buf[256];
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	size_t n = strlen(buf);
	char *p = aalloc(c, n + 1);
	if (!p)
		return err_static(c->abort_msg ? c->abort_msg : COST_MSG);
	memcpy(p, buf, n + 1);
	return mkstr(V_ERR, p, n);
}

static struct val no_overload(void)
{
	return err_static("no such overload");
}

static bool is_err(const struct val *v)
{
	return v->k == V_ERR || v->k == V_UNSUP;
}

static bool is_num(const struct val *v)
{
	return v->k == V_INT || v->k == V_UINT || v->k == V_DOUBLE;
}

/* A new NUL-terminated arena string of n bytes (contents unset). */
static char *astr(struct ctx *c, size_t n)
{
	char *p = aalloc(c, n + 1);
	if (p)
		p[n] = 0;
	return p;
}

static enum cel_stype stype(struct ctx *c, const void *node)
{
	return node && c->ops ? c->ops->type(node) : CEL_S_ANY;
}

static const void *items_of(struct ctx *c, const void *node)
{
	return node && c->ops && c->ops->items ? c->ops->items(node) : NULL;
}

/* ---------------------------------------------------- durations, times */

/* Go's time.ParseDuration. */
static bool parse_duration(const char *s, size_t n, int64_t *out)
{
	static const struct {
		const char *u;
		uint64_t ns;
	} units[] = {
	    {"ns", 1},
	    {"us", 1000},
	    {"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
	    {"\xce\xbcs", 1000}, /* U+03BC Greek mu */
	    {"ms", 1000000},
	    {"s", 1000000000},
	    {"m", 60000000000ULL},
	    {"h", 3600000000000ULL},
	};
	const uint64_t lim = 1ULL << 63;
	uint64_t d = 0;
	bool neg = false;
	size_t i = 0;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	if (n - i == 1 && s[i] == '0') {
		*out = 0;
		return true;
	}
	if (i == n)
		return false;
	while (i < n) {
		uint64_t v = 0, f = 0;
		double scale = 1;
		bool pre = false, post = false;
		if (!(s[i] == '.' || (s[i] >= '0' && s[i] <= '9')))
			return false;
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
			if (v > (lim - 1) / 10)
				return false;
			v = v * 10 + (uint64_t)(s[i] - '0');
			if (v > lim)
				return false;
			pre = true;
		}
		if (i < n && s[i] == '.') {
			bool over = false;
			for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
				post = true;
				if (over)
					continue;
				if (f > (lim - 1) / 10) {
					over = true;
					continue;
				}
				uint64_t y = f * 10 + (uint64_t)(s[i] - '0');
				if (y > lim) {
					over = true;
					continue;
				}
				f = y;
				scale *= 10;
			}
		}
		if (!pre && !post)
			return false;
		size_t u0 = i;
		while (i < n && s[i] != '.' && !(s[i] >= '0' && s[i] <= '9'))
			i++;
		if (u0 == i)
			return false;
		uint64_t unit = 0;
		for (size_t k = 0; k < sizeof units / sizeof *units; k++)
			if (strlen(units[k].u) == i - u0 &&
			    memcmp(units[k].u, s + u0, i - u0) == 0)
				unit = units[k].ns;
		if (!unit)
			return false;
		if (v > lim / unit)
			return false;
		v *= unit;
		if (f > 0) {
			double add = (double)f * ((double)unit / scale);
			if (add >= 9.3e18)
				return false;
			v += (uint64_t)add;
			if (v > lim)
				return false;
		}
		d += v;
		if (d > lim)
			return false;
	}
	if (neg) {
		*out = d == lim ? INT64_MIN : -(int64_t)d;
		return true;
	}
	if (d > lim - 1)
		return false;
	*out = (int64_t)d;
	return true;
}

/* Days since 1970-01-01 of a proleptic Gregorian date. */
/* CEL's timestamp range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z. */
#define TS_MIN (-62135596800LL)
#define TS_MAX 253402300799LL

static bool digits(const char *s, size_t n, size_t at, int k, int *out)
{
	int v = 0;
	if (at + (size_t)k > n)
		return false;
	for (int i = 0; i < k; i++) {
		if (s[at + i] < '0' || s[at + i] > '9')
			return false;
		v = v * 10 + (s[at + i] - '0');
	}
	*out = v;
	return true;
}

/* RFC 3339, as Go's time.Parse(time.RFC3339, s). */
static bool parse_ts(const char *s, size_t n, int64_t *sec, int32_t *ns,
		     int16_t *off)
{
	static const int mdays[] = {31, 28, 31, 30, 31, 30,
				    31, 31, 30, 31, 30, 31};
	int y, mo, d, h, mi, se, oh = 0, om = 0, sign = 0;
	int32_t frac = 0;
	size_t i;
	if (!digits(s, n, 0, 4, &y) || n < 20 || s[4] != '-' ||
	    !digits(s, n, 5, 2, &mo) || s[7] != '-' ||
	    !digits(s, n, 8, 2, &d) || s[10] != 'T' ||
	    !digits(s, n, 11, 2, &h) || s[13] != ':' ||
	    !digits(s, n, 14, 2, &mi) || s[16] != ':' ||
	    !digits(s, n, 17, 2, &se))
		return false;
	i = 19;
	if (i < n && s[i] == '.') {
		int k = 0;
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, k++)
			if (k < 9)
				frac = frac * 10 + (s[i] - '0');
		if (!k)
			return false;
		for (; k < 9; k++)
			frac *= 10;
	}
	if (i < n && s[i] == 'Z') {
		i++;
	} else if (i < n && (s[i] == '+' || s[i] == '-')) {
		sign = s[i] == '-' ? -1 : 1;
		if (!digits(s, n, i + 1, 2, &oh) || i + 3 >= n ||
		    s[i + 3] != ':' || !digits(s, n, i + 4, 2, &om))
			return false;
		i += 6;
		if (oh > 23 || om > 59)
			return false;
	} else {
		return false;
	}
	if (i != n || mo < 1 || mo > 12 || h > 23 || mi > 59 || se > 59)
		return false;
	int md = mdays[mo - 1];
	if (mo == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		md = 29;
	if (d < 1 || d > md)
		return false;
	int64_t t = srv_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 +
		    se - sign * (oh * 3600 + om * 60);
	if (t < TS_MIN || t > TS_MAX)
		return false;
	*sec = t;
	*ns = frac;
	*off = (int16_t)(sign * (oh * 60 + om));
	return true;
}

/* A date (format date, "2006-01-02") as midnight UTC, as kube reads it. */
static bool parse_date(const char *s, size_t n, int64_t *sec)
{
	char buf[32];
	int32_t ns;
	int16_t off;
	if (n != 10)
		return false;
	memcpy(buf, s, 10);
	memcpy(buf + 10, "T00:00:00Z", 11);
	return parse_ts(buf, 20, sec, &ns, &off);
}

/* ------------------------------------------------------------- base64 */

static int b64val(unsigned char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+')
		return 62;
	if (ch == '/')
		return 63;
	return -1;
}

/* Standard base64 with padding, as Go's base64.StdEncoding (which skips
   \r and \n). Returns false on bad input; out has room for n*3/4+3. */
static bool b64dec(const char *s, size_t n, char *out, size_t *out_len)
{
	uint32_t acc = 0;
	int bits = 0, pad = 0, k = 0;
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '\r' || ch == '\n')
			continue;
		k++;
		if (ch == '=') {
			pad++;
			continue;
		}
		int v = b64val(ch);
		if (v < 0 || pad)
			return false;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)((acc >> bits) & 0xff);
		}
	}
	if (k % 4 || pad > 2 || (pad && (k - pad) % 4 + pad != 4))
		return false;
	if (bits && (acc & ((1u << bits) - 1)))
		return false;
	*out_len = o;
	return true;
}

/* ---------------------------------------------------- JSON to values */

static struct val bad_data(struct ctx *c, const char *want)
{
	return errf(c, "invalid data, expected %s", want);
}

/* The CEL value of JSON j under schema node (kube's UnstructuredToVal).
   j is borrowed and must outlive the evaluation. */
static struct val from_json(struct ctx *c, const json_t *j, const void *node)
{
	enum cel_stype t = stype(c, node);
	struct val v = {.k = V_NULL};
	if (json_is_null(j))
		return v;
	switch (t) {
	case CEL_S_ANY:
		break;
	case CEL_S_OBJECT:
	case CEL_S_MAP:
		if (!json_is_object(j))
			return bad_data(c, "a map for the provided schema "
					   "with type=object");
		break;
	case CEL_S_ARRAY:
		if (!json_is_array(j))
			return bad_data(c, "an array for the provided schema "
					   "with type=array");
		break;
	case CEL_S_STRING:
		if (!json_is_string(j))
			return bad_data(c, "string");
		break;
	case CEL_S_INT:
		if (json_is_integer(j))
			return mkint(json_integer_value(j));
		if (json_is_real(j)) {
			double d = json_real_value(j);
			if (d == dtrunc(d) && d >= -9223372036854775808.0 &&
			    d < 9223372036854775808.0)
				return mkint((int64_t)d);
		}
		return bad_data(c, "int");
	case CEL_S_DOUBLE:
		if (json_is_number(j))
			return mkdouble(json_number_value(j));
		return bad_data(c, "float");
	case CEL_S_BOOL:
		if (!json_is_boolean(j))
			return bad_data(c, "bool");
		break;
	case CEL_S_INT_OR_STRING:
		if (!json_is_integer(j) && !json_is_string(j))
			return bad_data(c, "XIntOrString value to be either "
					   "a string or integer");
		break;
	case CEL_S_DURATION: {
		int64_t d;
		if (!json_is_string(j))
			return bad_data(c, "string");
		/* kube's value conversion: strfmt.ParseDuration ("3d",
		   "1 hour", "PT1H" too) */
		char why[160];
		if (!parse_duration(json_string_value(j), json_string_length(j),
				    &d) &&
		    !srv_strfmt_duration_units(json_string_value(j), &d, why,
					       sizeof why))
			return errf(c, "Invalid duration %.64s: %s",
				    json_string_value(j), why);
		return mkdur(d);
	}
	case CEL_S_TIMESTAMP: {
		if (!json_is_string(j))
			return bad_data(c, "string");
		v.k = V_TS;
		if (!parse_ts(json_string_value(j), json_string_length(j),
			      &v.ts.sec, &v.ts.ns, &v.ts.off) &&
		    !parse_date(json_string_value(j), json_string_length(j),
				&v.ts.sec))
			return errf(c,
				    "Invalid date-time formatted string %.64s",
				    json_string_value(j));
		return v;
	}
	case CEL_S_BYTES: {
		if (!json_is_string(j))
			return bad_data(c, "string");
		size_t n = json_string_length(j), o;
		char *p = astr(c, n / 4 * 3 + 3);
		if (!p)
			return err_static(COST_MSG);
		if (!b64dec(json_string_value(j), n, p, &o))
			return errf(c, "Invalid byte formatted string %.64s",
				    json_string_value(j));
		p[o] = 0;
		return mkstr(V_BYTES, p, o);
	}
	}
	switch (json_typeof(j)) {
	case JSON_OBJECT:
	case JSON_ARRAY:
		v.k = json_is_object(j) ? V_MAP : V_LIST;
		v.json = true;
		v.js.j = j;
		v.js.node = node;
		return v;
	case JSON_STRING:
		return mkstr(V_STR, json_string_value(j),
			     json_string_length(j));
	case JSON_INTEGER:
		return mkint(json_integer_value(j));
	case JSON_REAL:
		return mkdouble(json_real_value(j));
	case JSON_TRUE:
		return mkbool(true);
	case JSON_FALSE:
		return mkbool(false);
	case JSON_NULL:
		break;
	}
	return v;
}

/* ------------------------------------------------------ lists and maps */

static size_t list_len(const struct val *v)
{
	return v->json ? json_array_size(v->js.j) : v->l.n;
}

static struct val list_get(struct ctx *c, const struct val *v, size_t i)
{
	if (!v->json)
		return v->l.items[i];
	return from_json(c, json_array_get(v->js.j, i),
			 items_of(c, v->js.node));
}

/* Does the list compare equal regardless of order? */
static bool list_unordered(struct ctx *c, const struct val *v)
{
	if (!v->json)
		return v->set;
	return v->js.node && c->ops && c->ops->list_type &&
	       c->ops->list_type(v->js.node) != CEL_L_ATOMIC;
}

static size_t map_len(const struct val *v)
{
	return v->json ? json_object_size(v->js.j) : v->m.n;
}

/* Is the JSON map an object whose names CEL sees escaped? */
static bool map_escaped(struct ctx *c, const struct val *v)
{
	enum cel_stype t = stype(c, v->js.node);
	return t == CEL_S_OBJECT || t == CEL_S_ANY;
}

/* kube's cel.Unescape: into out (room for n+1); false if s holds an
   escape that means nothing. */
static bool unescape(const char *s, size_t n, char *out, size_t *out_len)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		if (i + 4 < n && s[i] == '_' && s[i + 1] == '_' &&
		    s[i + 2] != '_') {
			size_t j = i + 2;
			while (j < n && s[j] != '_')
				j++;
			if (j + 1 < n && s[j + 1] == '_') {
				const char *w = s + i + 2;
				size_t wl = j - i - 2;
				const char *rep = NULL;
				if (wl == 11 && !memcmp(w, "underscores", 11))
					rep = "__";
				else if (wl == 3 && !memcmp(w, "dot", 3))
					rep = ".";
				else if (wl == 4 && !memcmp(w, "dash", 4))
					rep = "-";
				else if (wl == 5 && !memcmp(w, "slash", 5))
					rep = "/";
				if (rep) {
					memcpy(out + o, rep, strlen(rep));
					o += strlen(rep);
				} else if (is_reserved(w, wl) && i == 0 &&
					   j + 2 == n) {
					memcpy(out + o, w, wl);
					o += wl;
				} else {
					return false;
				}
				i = j + 2;
				continue;
			}
		}
		out[o++] = s[i++];
	}
	out[o] = 0;
	*out_len = o;
	return true;
}

/* kube's cel.Escape of a property name, for iterating an object's keys:
   the name itself when it needs no escape or cannot have one. */
static struct val escape_key(struct ctx *c, const char *k, size_t n)
{
	struct val same = mkstr(V_STR, k, n);
	if (n == 0 || (k[0] >= '0' && k[0] <= '9'))
		return same;
	if (is_reserved(k, n)) {
		char *p = astr(c, n + 4);
		if (!p)
			return err_static(COST_MSG);
		memcpy(p, "__", 2);
		memcpy(p + 2, k, n);
		memcpy(p + 2 + n, "__", 2);
		return mkstr(V_STR, p, n + 4);
	}
	bool need = false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)k[i];
		if (ch == '-' || ch == '.' || ch == '/' ||
		    (ch == '_' && i + 1 < n && k[i + 1] == '_'))
			need = true;
		else if (!(ch == '_' || (ch >= '0' && ch <= '9') ||
			   (ch >= 'a' && ch <= 'z') ||
			   (ch >= 'A' && ch <= 'Z')))
			return same;
	}
	if (!need)
		return same;
	char *p = astr(c, n * 15);
	if (!p)
		return err_static(COST_MSG);
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		const char *rep = NULL;
		if (k[i] == '_' && i + 1 < n && k[i + 1] == '_')
			rep = "__underscores__", i++;
		else if (k[i] == '.')
			rep = "__dot__";
		else if (k[i] == '-')
			rep = "__dash__";
		else if (k[i] == '/')
			rep = "__slash__";
		if (rep) {
			memcpy(p + o, rep, strlen(rep));
			o += strlen(rep);
		} else {
			p[o++] = k[i];
		}
	}
	p[o] = 0;
	return mkstr(V_STR, p, o);
}

static int eqv(struct ctx *c, const struct val *a, const struct val *b,
	       struct val *err, int depth);

/* The schema of the value under raw name key of JSON map m. */
static const void *child_of(struct ctx *c, const struct val *m, const char *key)
{
	enum cel_stype t = stype(c, m->js.node);
	if (t == CEL_S_OBJECT && c->ops->prop)
		return c->ops->prop(m->js.node, key);
	if (t == CEL_S_MAP && c->ops->addl)
		return c->ops->addl(m->js.node);
	return NULL;
}

/* Look key up in map m: 1 found (*out set), 0 absent, -1 error (*out is
   the error). */
static int map_find(struct ctx *c, const struct val *m, const struct val *key,
		    struct val *out)
{
	if (!m->json) {
		for (size_t i = 0; i < m->m.n; i++) {
			struct val e;
			int r = eqv(c, &m->m.keys[i], key, &e, 0);
			if (r < 0) {
				*out = e;
				return -1;
			}
			if (r) {
				*out = m->m.vals[i];
				return 1;
			}
		}
		return 0;
	}
	if (key->k != V_STR) {
		*out = is_err(key) ? *key : no_overload();
		return -1;
	}
	enum cel_stype t = stype(c, m->js.node);
	const char *name = key->s.p;
	size_t n = key->s.n;
	char small[256], *buf = small;
	if (t == CEL_S_OBJECT || t == CEL_S_ANY) {
		if (n + 1 > sizeof small) {
			buf = astr(c, n);
			if (!buf) {
				*out = err_static(COST_MSG);
				return -1;
			}
		}
		if (!unescape(key->s.p, n, buf, &n))
			return 0;
		name = buf;
	}
	const json_t *j = json_object_getn(m->js.j, name, n);
	if (!j || (t == CEL_S_OBJECT && json_is_null(j)))
		return 0;
	/* name is the unescaped copy, NUL-terminated, for an object */
	*out = from_json(c, j, child_of(c, m, name));
	return 1;
}

/* The keys of a map as a list of values (for iterating). */
static bool map_keys(struct ctx *c, const struct val *m, struct val **out,
		     size_t *n_out)
{
	size_t n = map_len(m), i = 0;
	struct val *k = aalloc(c, (n ? n : 1) * sizeof *k);
	if (!k)
		return false;
	if (!m->json) {
		memcpy(k, m->m.keys, n * sizeof *k);
	} else {
		bool esc = map_escaped(c, m);
		const char *key;
		size_t klen;
		json_t *v;
		json_object_keylen_foreach((json_t *)m->js.j, key, klen, v)
		{
			(void)v;
			if (i == n)
				break;
			k[i++] = esc ? escape_key(c, key, klen)
				     : mkstr(V_STR, key, klen);
		}
		n = i;
	}
	*out = k;
	*n_out = n;
	return !c->abort_msg;
}

/* ------------------------------------------------ equality, comparison */

/* Compare an int with a double: -1, 0, 1, or 2 when d is NaN. */
static int cmp_int_double(int64_t i, double d)
{
	if (isnan(d))
		return 2;
	if (d >= 9223372036854775808.0)
		return -1;
	if (d < -9223372036854775808.0)
		return 1;
	double t = dtrunc(d);
	int64_t ti = (int64_t)t;
	if (i != ti)
		return i < ti ? -1 : 1;
	return d > t ? -1 : d < t ? 1 : 0;
}

static int cmp_uint_double(uint64_t u, double d)
{
	if (isnan(d))
		return 2;
	if (d >= 18446744073709551616.0)
		return -1;
	if (d < 0)
		return 1;
	double t = dtrunc(d);
	uint64_t tu = (uint64_t)t;
	if (u != tu)
		return u < tu ? -1 : 1;
	return d > t ? -1 : 0;
}

/* Numbers of any kind: -1, 0, 1, or 2 for unordered (NaN). */
static int cmp_num(const struct val *a, const struct val *b)
{
	if (a->k == V_INT && b->k == V_INT)
		return (a->i > b->i) - (a->i < b->i);
	if (a->k == V_UINT && b->k == V_UINT)
		return (a->u > b->u) - (a->u < b->u);
	if (a->k == V_DOUBLE && b->k == V_DOUBLE) {
		if (isnan(a->d) || isnan(b->d))
			return 2;
		return (a->d > b->d) - (a->d < b->d);
	}
	if (a->k == V_INT && b->k == V_UINT)
		return a->i < 0
			   ? -1
			   : ((uint64_t)a->i > b->u) - ((uint64_t)a->i < b->u);
	if (a->k == V_UINT && b->k == V_INT)
		return b->i < 0
			   ? 1
			   : (a->u > (uint64_t)b->i) - (a->u < (uint64_t)b->i);
	if (a->k == V_INT && b->k == V_DOUBLE)
		return cmp_int_double(a->i, b->d);
	if (a->k == V_UINT && b->k == V_DOUBLE)
		return cmp_uint_double(a->u, b->d);
	if (a->k == V_DOUBLE && b->k == V_INT) {
		int r = cmp_int_double(b->i, a->d);
		return r == 2 ? 2 : -r;
	}
	int r = cmp_uint_double(b->u, a->d);
	return r == 2 ? 2 : -r;
}

static int cmp_bytes(const char *a, size_t an, const char *b, size_t bn)
{
	int r = memcmp(a, b, an < bn ? an : bn);
	if (r)
		return r < 0 ? -1 : 1;
	return (an > bn) - (an < bn);
}

/* Ordering: -1, 0, 1, 2 (unordered), or -2 (no such overload). */
static int ordering(const struct val *a, const struct val *b)
{
	if (is_num(a) && is_num(b))
		return cmp_num(a, b);
	if (a->k != b->k)
		return -2;
	switch (a->k) {
	case V_STR:
	case V_BYTES:
		return cmp_bytes(a->s.p, a->s.n, b->s.p, b->s.n);
	case V_BOOL:
		return (a->b > b->b) - (a->b < b->b);
	case V_DUR:
		return (a->i > b->i) - (a->i < b->i);
	case V_TS:
		if (a->ts.sec != b->ts.sec)
			return a->ts.sec < b->ts.sec ? -1 : 1;
		return (a->ts.ns > b->ts.ns) - (a->ts.ns < b->ts.ns);
	case V_ERR:
	case V_UNSUP:
	case V_NULL:
	case V_INT:
	case V_UINT:
	case V_DOUBLE:
	case V_LIST:
	case V_MAP:
	case V_IP:
	case V_CIDR:
	case V_URL:
	case V_OPT:
	case V_QTY:
	case V_FMT:
	case V_SEMVER:
	case V_TYPE:
		break;
	}
	return -2;
}

/* charge() for equality, which answers -1 with the error in *err. */
static bool charge_eq(struct ctx *c, uint64_t n, struct val *err)
{
	if (charge(c, n))
		return true;
	*err = err_static(COST_MSG);
	return false;
}

static int eq_lists(struct ctx *c, const struct val *a, const struct val *b,
		    struct val *err, int depth)
{
	size_t n = list_len(a);
	if (n != list_len(b))
		return 0;
	if (list_unordered(c, a) || list_unordered(c, b)) {
		/* a multiset: each element of b takes an unused equal one
		   of a */
		unsigned char *used = aalloc(c, n ? n : 1);
		if (!used) {
			*err = err_static(COST_MSG);
			return -1;
		}
		memset(used, 0, n);
		for (size_t i = 0; i < n; i++) {
			struct val eb = list_get(c, b, i);
			bool found = false;
			for (size_t k = 0; k < n && !found; k++) {
				if (used[k])
					continue;
				if (!charge_eq(c, 1, err))
					return -1;
				struct val ea = list_get(c, a, k);
				int r = eqv(c, &ea, &eb, err, depth + 1);
				if (r < 0)
					return r;
				if (r)
					used[k] = 1, found = true;
			}
			if (!found)
				return 0;
		}
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		if (!charge_eq(c, 1, err))
			return -1;
		struct val ea = list_get(c, a, i), eb = list_get(c, b, i);
		int r = eqv(c, &ea, &eb, err, depth + 1);
		if (r <= 0)
			return r;
	}
	return 1;
}

/* Maps are equal with the same keys and equal values. A JSON map is
   compared by its raw property names, as kube's unstructuredMap.Equal
   does, so that {'foo-bar': 1} equals the object {"foo-bar": 1}. */
static int eq_maps(struct ctx *c, const struct val *a, const struct val *b,
		   struct val *err, int depth)
{
	if (!a->json && b->json) {
		const struct val *t = a;
		a = b;
		b = t;
	}
	if (map_len(a) != map_len(b))
		return 0;
	if (a->json) {
		const char *key;
		size_t klen;
		json_t *va;
		json_object_keylen_foreach((json_t *)a->js.j, key, klen, va)
		{
			struct val x, y;
			if (!charge_eq(c, 1, err))
				return -1;
			x = from_json(c, va, child_of(c, a, key));
			if (b->json) {
				const json_t *vb =
				    json_object_getn(b->js.j, key, klen);
				if (!vb)
					return 0;
				y = from_json(c, vb, child_of(c, b, key));
			} else {
				struct val k = mkstr(V_STR, key, klen);
				int r = map_find(c, b, &k, &y);
				if (r < 0) {
					*err = y;
					return -1;
				}
				if (!r)
					return 0;
			}
			int r = eqv(c, &x, &y, err, depth + 1);
			if (r <= 0)
				return r;
		}
		return 1;
	}
	/* both built: every key of a, by equality, in b */
	for (size_t i = 0; i < a->m.n; i++) {
		struct val y;
		if (!charge_eq(c, 1, err))
			return -1;
		int r = map_find(c, b, &a->m.keys[i], &y);
		if (r < 0) {
			*err = y;
			return -1;
		}
		if (!r)
			return 0;
		r = eqv(c, &a->m.vals[i], &y, err, depth + 1);
		if (r <= 0)
			return r;
	}
	return 1;
}

/* CEL's heterogeneous ==: 1, 0, or -1 with *err. */
static int eqv(struct ctx *c, const struct val *a, const struct val *b,
	       struct val *err, int depth)
{
	if (is_err(a) || is_err(b)) {
		*err = is_err(a) ? *a : *b;
		return -1;
	}
	if (depth > MAX_EQ_DEPTH) {
		*err = err_static("value nested too deeply");
		return -1;
	}
	if (is_num(a) && is_num(b))
		return cmp_num(a, b) == 0;
	if (a->k == V_OPT) { /* cel-go's Optional.Equal */
		if (b->k != V_OPT)
			return 0;
		if (!a->opt || !b->opt)
			return !a->opt && !b->opt;
		return eqv(c, a->opt, b->opt, err, depth + 1);
	}
	/* kube's IP, CIDR, URL, Quantity and Format types refuse to compare
	   with another type (their Equal says "no such overload"); cel-go's
	   own types answer false */
	if (a->k != b->k &&
	    (a->k == V_IP || a->k == V_CIDR || a->k == V_URL || a->k == V_QTY ||
	     a->k == V_FMT || a->k == V_SEMVER)) {
		*err = no_overload();
		return -1;
	}
	if (a->k != b->k)
		return 0;
	switch (a->k) {
	case V_NULL:
		return 1;
	case V_IP:
	case V_CIDR:
		return a->ip.v4 == b->ip.v4 && a->ip.bits == b->ip.bits &&
		       !memcmp(a->ip.b, b->ip.b, 16);
	case V_URL:
		*err = mkstr(V_UNSUP, "equality of url values",
			     strlen("equality of url values"));
		return -1;
	case V_LIST:
		return eq_lists(c, a, b, err, depth);
	case V_MAP:
		return eq_maps(c, a, b, err, depth);
	case V_QTY:
		/* kube's add and sub answer a *Quantity, and Quantity's
		   Equal takes only a Quantity */
		if (b->qptr) {
			*err = no_overload();
			return -1;
		}
		return srv_qty_cmp(a->q, b->q) == 0;
	case V_FMT:
		return a->i == b->i;
	case V_SEMVER:
		return srv_semver_cmp(a->sv, b->sv) == 0;
	case V_TYPE:
		return a->s.n == b->s.n && !memcmp(a->s.p, b->s.p, a->s.n);
	case V_OPT:
		break;
	case V_STR:
	case V_BYTES:
		if (a->s.n != b->s.n)
			return 0;
		if (!charge_eq(c, a->s.n / 16, err))
			return -1;
		return memcmp(a->s.p, b->s.p, a->s.n) == 0;
	case V_BOOL:
	case V_DUR:
	case V_TS:
		return ordering(a, b) == 0;
	case V_ERR:
	case V_UNSUP:
	case V_INT:
	case V_UINT:
	case V_DOUBLE:
		break;
	}
	return 0;
}

/* ---------------------------------------------------------- arithmetic */

static struct val ovf(void)
{
	return err_static("integer overflow");
}

static struct val uovf(void)
{
	return err_static("unsigned integer overflow");
}

static struct val ts_add(const struct val *t, int64_t dns, bool sub)
{
	int64_t sec = t->ts.sec;
	int32_t ns = t->ts.ns;
	int64_t ds = dns / 1000000000, dn = dns % 1000000000;
	if (sub)
		ds = -ds, dn = -dn;
	int64_t s = sec + ds, n = ns + dn;
	if (n < 0)
		n += 1000000000, s--;
	else if (n >= 1000000000)
		n -= 1000000000, s++;
	if (s < TS_MIN || s > TS_MAX)
		return err_static("timestamp overflow");
	struct val v = {.k = V_TS};
	v.ts.sec = s;
	v.ts.ns = (int32_t)n;
	v.ts.off = t->ts.off;
	return v;
}

static struct val new_list(struct ctx *c, size_t n);

static bool is_set_list(struct ctx *c, const struct val *v)
{
	if (!v->json)
		return v->set;
	return v->js.node && c->ops && c->ops->list_type &&
	       c->ops->list_type(v->js.node) == CEL_L_SET;
}

/* Whether the objects x and y (read from JSON) name the same item of the
   map list node: equal values, or both none, at every key. -1 when
   either was built by the rule. */
static int same_map_item(struct ctx *c, const void *node, const struct val *x,
			 const struct val *y)
{
	if (x->k != V_MAP || y->k != V_MAP || !x->json || !y->json)
		return -1;
	const char *key;
	for (size_t i = 0; (key = c->ops->map_key(node, i)); i++) {
		const json_t *p = json_object_get(x->js.j, key),
			     *q = json_object_get(y->js.j, key);
		if ((p || q) && !json_equal(p, q))
			return 0;
	}
	return 1;
}

/* a + b where a is a map list: a's items, each replaced by b's item of
   the same keys, then b's other items, as kube's unstructuredMapList.Add;
   *done false (nothing built) when an item was built by the rule. */
static struct val merge_map_lists(struct ctx *c, const void *node,
				  const struct val *a, const struct val *b,
				  bool *done)
{
	size_t na = list_len(a), nb = list_len(b), k = na;
	struct val v = new_list(c, na + nb);
	*done = true;
	if (is_err(&v))
		return v;
	for (size_t i = 0; i < na; i++)
		v.l.items[i] = list_get(c, a, i);
	for (size_t i = 0; i < nb; i++) {
		struct val e = list_get(c, b, i);
		size_t at = k;
		for (size_t j = 0; j < na && at == k; j++) {
			if (!charge(c, 1))
				return err_static(COST_MSG);
			int r = same_map_item(c, node, &v.l.items[j], &e);
			if (r < 0) {
				*done = false;
				return v;
			}
			if (r)
				at = j;
		}
		v.l.items[at] = e;
		if (at == k)
			k++;
	}
	v.l.n = k;
	v.set = true; /* compared as a map list is, in any order */
	return v;
}

/* a + b; for a set-list the union, as kube's unstructuredSetList.Add; for
   a map list merged by its keys. */
static struct val concat_lists(struct ctx *c, const struct val *a,
			       const struct val *b)
{
	size_t na = list_len(a), nb = list_len(b), k;
	bool set = is_set_list(c, a);
	if (a->json && a->js.node && c->ops && c->ops->list_type &&
	    c->ops->map_key && c->ops->list_type(a->js.node) == CEL_L_MAP &&
	    c->ops->map_key(a->js.node, 0)) {
		bool done;
		struct val m = merge_map_lists(c, a->js.node, a, b, &done);
		if (done || is_err(&m))
			return m;
	}
	struct val v = new_list(c, na + nb);
	if (is_err(&v))
		return v;
	for (k = 0; k < na; k++)
		v.l.items[k] = list_get(c, a, k);
	for (size_t i = 0; i < nb; i++) {
		struct val e = list_get(c, b, i), err;
		bool dup = false;
		for (size_t j = 0; set && j < k && !dup; j++) {
			if (!charge(c, 1))
				return err_static(COST_MSG);
			int r = eqv(c, &v.l.items[j], &e, &err, 0);
			if (r < 0)
				return err;
			dup = r == 1;
		}
		if (!dup)
			v.l.items[k++] = e;
	}
	v.l.n = k;
	v.set = set;
	return v;
}

static struct val arith(struct ctx *c, enum binop op, const struct val *a,
			const struct val *b)
{
	int64_t r;
	uint64_t u;
	if (a->k == V_INT && b->k == V_INT) {
		switch (op) {
		case B_ADD:
			return __builtin_add_overflow(a->i, b->i, &r)
				   ? ovf()
				   : mkint(r);
		case B_SUB:
			return __builtin_sub_overflow(a->i, b->i, &r)
				   ? ovf()
				   : mkint(r);
		case B_MUL:
			return __builtin_mul_overflow(a->i, b->i, &r)
				   ? ovf()
				   : mkint(r);
		case B_DIV:
			if (b->i == 0)
				return err_static("division by zero");
			if (a->i == INT64_MIN && b->i == -1)
				return ovf();
			return mkint(a->i / b->i);
		case B_MOD:
			if (b->i == 0)
				return err_static("modulus by zero");
			if (a->i == INT64_MIN && b->i == -1)
				return ovf();
			return mkint(a->i % b->i);
		case B_EQ:
		case B_NE:
		case B_LT:
		case B_LE:
		case B_GT:
		case B_GE:
		case B_IN:
			break;
		}
		return no_overload();
	}
	if (a->k == V_UINT && b->k == V_UINT) {
		switch (op) {
		case B_ADD:
			return __builtin_add_overflow(a->u, b->u, &u)
				   ? uovf()
				   : mkuint(u);
		case B_SUB:
			return __builtin_sub_overflow(a->u, b->u, &u)
				   ? uovf()
				   : mkuint(u);
		case B_MUL:
			return __builtin_mul_overflow(a->u, b->u, &u)
				   ? uovf()
				   : mkuint(u);
		case B_DIV:
			if (b->u == 0)
				return err_static("division by zero");
			return mkuint(a->u / b->u);
		case B_MOD:
			if (b->u == 0)
				return err_static("modulus by zero");
			return mkuint(a->u % b->u);
		case B_EQ:
		case B_NE:
		case B_LT:
		case B_LE:
		case B_GT:
		case B_GE:
		case B_IN:
			break;
		}
		return no_overload();
	}
	if (a->k == V_DOUBLE && b->k == V_DOUBLE) {
		if (op == B_ADD)
			return mkdouble(a->d + b->d);
		if (op == B_SUB)
			return mkdouble(a->d - b->d);
		if (op == B_MUL)
			return mkdouble(a->d * b->d);
		if (op == B_DIV)
			return mkdouble(a->d / b->d);
		return no_overload();
	}
	if (op == B_ADD && a->k == b->k && (a->k == V_STR || a->k == V_BYTES)) {
		char *p = astr(c, a->s.n + b->s.n);
		if (!p)
			return err_static(COST_MSG);
		memcpy(p, a->s.p, a->s.n);
		memcpy(p + a->s.n, b->s.p, b->s.n);
		return mkstr(a->k, p, a->s.n + b->s.n);
	}
	if (op == B_ADD && a->k == V_LIST && b->k == V_LIST)
		return concat_lists(c, a, b);
	if (a->k == V_DUR && b->k == V_DUR) {
		if (op == B_ADD)
			return __builtin_add_overflow(a->i, b->i, &r)
				   ? ovf()
				   : mkdur(r);
		if (op == B_SUB)
			return __builtin_sub_overflow(a->i, b->i, &r)
				   ? ovf()
				   : mkdur(r);
		return no_overload();
	}
	if (a->k == V_TS && b->k == V_DUR && (op == B_ADD || op == B_SUB))
		return ts_add(a, b->i, op == B_SUB);
	if (a->k == V_DUR && b->k == V_TS && op == B_ADD)
		return ts_add(b, a->i, false);
	if (a->k == V_TS && b->k == V_TS && op == B_SUB) {
		int64_t s = a->ts.sec - b->ts.sec; /* both within TS range */
		if (__builtin_mul_overflow(s, (int64_t)1000000000, &r) ||
		    __builtin_add_overflow(r, (int64_t)(a->ts.ns - b->ts.ns),
					   &r))
			return ovf();
		return mkdur(r);
	}
	return no_overload();
}

/* ------------------------------------------------------------ strings */

/* First occurrence of nd in h at or after byte from, or -1. */
static int64_t find_sub(const char *h, size_t hn, const char *nd, size_t nn,
			size_t from)
{
	if (from > hn)
		return -1;
	if (nn == 0)
		return (int64_t)from;
	const char *p = memmem(h + from, hn - from, nd, nn);
	return p ? p - h : -1;
}

/* Last occurrence of nd in h starting at or before byte upto, or -1. */
static int64_t rfind_sub(struct ctx *c, const char *h, size_t hn,
			 const char *nd, size_t nn, size_t upto)
{
	if (nn > hn)
		return -1;
	if (upto > hn - nn)
		upto = hn - nn;
	charge(c, (upto + 1) * (nn / 16 + 1) / 16);
	for (size_t i = upto + 1; i-- > 0;)
		if (memcmp(h + i, nd, nn) == 0)
			return (int64_t)i;
	return -1;
}

static bool is_space(uint32_t cp)
{
	return (cp >= 9 && cp <= 13) || cp == ' ' || cp == 0x85 || cp == 0xa0 ||
	       cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 ||
	       cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

static struct val str_trim(const struct val *s)
{
	const unsigned char *p = (const unsigned char *)s->s.p;
	size_t b = 0, e = s->s.n;
	uint32_t cp;
	while (b < e) {
		size_t l = utf8_len(p + b, e - b, &cp);
		if (!l || !is_space(cp))
			break;
		b += l;
	}
	while (e > b) {
		size_t st = e - 1;
		while (st > b && (p[st] & 0xc0) == 0x80)
			st--;
		size_t l = utf8_len(p + st, e - st, &cp);
		if (!l || !is_space(cp))
			break;
		e = st;
	}
	return mkstr(V_STR, s->s.p + b, e - b);
}

static struct val str_case(struct ctx *c, const struct val *s, bool upper)
{
	char *p = astr(c, s->s.n);
	if (!p)
		return err_static(COST_MSG);
	for (size_t i = 0; i < s->s.n; i++) {
		char ch = s->s.p[i];
		if (upper && ch >= 'a' && ch <= 'z')
			ch = (char)(ch - 'a' + 'A');
		else if (!upper && ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		p[i] = ch;
	}
	return mkstr(V_STR, p, s->s.n);
}

/* A list of n string values, in the arena. */
static struct val new_list(struct ctx *c, size_t n)
{
	struct val v = {.k = V_LIST};
	v.l.items = aalloc(c, (n ? n : 1) * sizeof *v.l.items);
	if (!v.l.items)
		return err_static(COST_MSG);
	v.l.n = n;
	return v;
}

/* An empty map with room for n entries, in the arena. */
static struct val new_map(struct ctx *c, size_t n)
{
	struct val v = {.k = V_MAP};
	v.m.keys = aalloc(c, (n ? n : 1) * sizeof *v.m.keys);
	v.m.vals = aalloc(c, (n ? n : 1) * sizeof *v.m.vals);
	if (!v.m.keys || !v.m.vals)
		return err_static(COST_MSG);
	return v;
}

/* Go's strings.SplitN. */
static struct val str_split(struct ctx *c, const struct val *s,
			    const struct val *sep, int64_t lim)
{
	const char *h = s->s.p;
	size_t hn = s->s.n, nn = sep->s.n;
	if (lim == 0)
		return new_list(c, 0);
	size_t count;
	if (nn == 0) {
		count = (size_t)utf8_count(h, hn);
	} else {
		count = 1;
		for (int64_t at = 0;
		     (at = find_sub(h, hn, sep->s.p, nn, (size_t)at)) >= 0;
		     at += (int64_t)nn)
			count++;
	}
	if (lim > 0 && (uint64_t)lim < count)
		count = (size_t)lim;
	struct val v = new_list(c, count);
	if (is_err(&v))
		return v;
	size_t at = 0;
	for (size_t i = 0; i < count; i++) {
		size_t end;
		if (i + 1 == count) {
			end = hn;
		} else if (nn == 0) {
			end = utf8_off(h + at, hn - at, 1) + at;
		} else {
			end = (size_t)find_sub(h, hn, sep->s.p, nn, at);
		}
		v.l.items[i] = mkstr(V_STR, h + at, end - at);
		at = end + nn;
	}
	if (nn == 0 && count == 0)
		v.l.n = 0;
	return v;
}

/* Go's strings.Replace. */
static struct val str_replace(struct ctx *c, const struct val *s,
			      const struct val *old, const struct val *rep,
			      int64_t lim)
{
	const char *h = s->s.p;
	size_t hn = s->s.n, on = old->s.n, rn = rep->s.n;
	/* a result over the arena's limit is refused before it is built,
	   and so is counting past the replacements that would reach it
	   (a long string of one-byte matches would otherwise be walked in
	   full first) */
	size_t most = rn <= on		 ? SIZE_MAX
		      : hn < ARENA_LIMIT ? (ARENA_LIMIT - hn) / (rn - on)
					 : 0;
	if (lim >= 0 && (uint64_t)lim < most)
		most = (size_t)lim;
	size_t m = 0;
	if (on == 0)
		m = (size_t)utf8_count(h, hn) + 1;
	else
		for (int64_t at = 0;
		     m <= most &&
		     (at = find_sub(h, hn, old->s.p, on, (size_t)at)) >= 0;
		     at += (int64_t)on)
			m++;
	if (lim >= 0 && (uint64_t)lim < m)
		m = (size_t)lim;
	if (m == 0)
		return *s;
	if (m > most)
		return err_static(COST_MSG);
	size_t out_n = hn + m * rn - m * on;
	char *p = astr(c, out_n);
	if (!p)
		return err_static(COST_MSG);
	size_t o = 0, at = 0;
	for (size_t i = 0; i < m; i++) {
		size_t j;
		if (on == 0) {
			j = at;
			if (i > 0)
				j += utf8_off(h + at, hn - at, 1);
		} else {
			j = (size_t)find_sub(h, hn, old->s.p, on, at);
		}
		memcpy(p + o, h + at, j - at);
		o += j - at;
		memcpy(p + o, rep->s.p, rn);
		o += rn;
		at = j + on;
	}
	memcpy(p + o, h + at, hn - at);
	o += hn - at;
	p[o] = 0;
	return mkstr(V_STR, p, o);
}

/* A string value as a NUL-terminated C string (for regexec). */
static const char *cstr(struct ctx *c, const struct val *s)
{
	if (s->s.p[s->s.n] == 0)
		return s->s.p;
	char *p = astr(c, s->s.n);
	if (p)
		memcpy(p, s->s.p, s->s.n);
	return p;
}

/* A regex call's subject s as a C string in *subj (its search charged)
   and its compiled pattern: the parser's for a literal pattern, else
   compiled now into *owned (the caller frees it). Returns an error value,
   or one of kind V_BOOL when *subj and *g are set. */
static struct val call_regex(struct ctx *c, const struct node *n,
			     const struct val *s, const struct val *pat,
			     const char **subj, const struct srv_goregex **g,
			     struct srv_goregex **owned)
{
	*owned = NULL;
	*subj = cstr(c, s);
	if (!*subj)
		return err_static(COST_MSG);
	charge(c, s->s.n / 4 + 1);
	if (n->re) {
		*g = n->re;
		return mkbool(true);
	}
	if (memchr(pat->s.p, 0, pat->s.n))
		return err_static("regex contains NUL");
	const char *ps = cstr(c, pat);
	if (!ps)
		return err_static(COST_MSG);
	char msg[200];
	if (srv_re2_error(ps, msg, sizeof msg))
		return errf(c, "%s", msg);
	const char *why = "";
	charge(c, pat->s.n * 4 + 100);
	*owned = srv_goregex_compile(ps, n->op != F_MATCHES, &why);
	if (!*owned) {
		if (!strcmp(why, "out of memory")) {
			abort_eval(c, "out of memory");
			return err_static("out of memory");
		}
		struct val v = errf(c, "regex %.64s: %s", ps, why);
		if (v.k == V_ERR)
			v.k = V_UNSUP;
		return v;
	}
	*g = *owned;
	return mkbool(true);
}

static struct val do_matches(struct ctx *c, const struct node *n,
			     const struct val *s, const struct val *pat)
{
	if (s->k != V_STR || pat->k != V_STR)
		return no_overload();
	const char *subj;
	const struct srv_goregex *g;
	struct srv_goregex *owned;
	struct val v = call_regex(c, n, s, pat, &subj, &g, &owned);
	if (v.k != V_BOOL)
		return v;
	bool m = srv_goregex_search(g, subj, s->s.n);
	srv_goregex_free(owned);
	return mkbool(m);
}

/* The longest string find() and findAll() search: PCRE2 finds a match's
   offsets by backtracking from each start in turn, a time that can grow
   with the square of the string and more (see schema.c); past this, a
   rule using them is not evaluated (a warning), rather than hold a write
   for seconds. Label keys and values, names and most fields rules search
   are far shorter. */
#define FIND_MAX 4096

/* Go's regexp allMatches over s from *pos: the next match it delivers
   (an empty one right after the previous match is skipped), or false at
   the end. *prev_end is the previous match's end (start it at -1). */
static bool next_match(const struct srv_goregex *g, const char *s, size_t n,
		       size_t *pos, long *prev_end, size_t *so, size_t *eo)
{
	while (*pos <= n) {
		if (!srv_goregex_find(g, s, n, *pos, so, eo))
			return false;
		bool accept = true;
		if (*eo == *pos) { /* empty, here: step over one character */
			if ((long)*so == *prev_end)
				accept = false;
			*pos += *pos < n ? utf8_off(s + *pos, n - *pos, 1) : 1;
		} else {
			*pos = *eo;
		}
		*prev_end = (long)*eo;
		if (accept)
			return true;
	}
	return false;
}

/* kube's regex library (k8s.io/apiserver/pkg/cel/library/regex.go):
   s.find(re) is the first match or "", s.findAll(re[, lim]) every match
   (at most lim when lim >= 0), as Go's FindAllString. */
static struct val do_find(struct ctx *c, const struct node *n,
			  const struct val *s, const struct val *pat, bool all,
			  int64_t lim)
{
	if (s->s.n > FIND_MAX) {
		struct val v =
		    errf(c, "%s() of a string over %d bytes is not evaluated",
			 all ? "findAll" : "find", FIND_MAX);
		if (v.k == V_ERR)
			v.k = V_UNSUP;
		return v;
	}
	const char *subj;
	const struct srv_goregex *g;
	struct srv_goregex *owned;
	struct val v = call_regex(c, n, s, pat, &subj, &g, &owned);
	if (v.k != V_BOOL)
		return v;
	size_t len = s->s.n, pos = 0, so, eo, count = 0;
	long prev = -1;
	if (!all) {
		bool m = next_match(g, subj, len, &pos, &prev, &so, &eo);
		srv_goregex_free(owned);
		return m ? mkstr(V_STR, s->s.p + so, eo - so)
			 : mkstr(V_STR, "", 0);
	}
	while ((lim < 0 || (int64_t)count < lim) &&
	       next_match(g, subj, len, &pos, &prev, &so, &eo))
		count++;
	v = new_list(c, count);
	pos = 0;
	prev = -1;
	for (size_t i = 0; !is_err(&v) && i < count; i++) {
		next_match(g, subj, len, &pos, &prev, &so, &eo);
		v.l.items[i] = mkstr(V_STR, s->s.p + so, eo - so);
	}
	srv_goregex_free(owned);
	return v;
}

static struct val fmt_str(struct ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static struct val fmt_str(struct ctx *c, const char *fmt, ...)
{
	char buf[80];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	size_t n = strlen(buf);
	char *s = astr(c, n);
	if (!s)
		return err_static(COST_MSG);
	memcpy(s, buf, n);
	return mkstr(V_STR, s, n);
}

/* Go's %g of a double (shortest representation), as cel-go's string(). */
static struct val fmt_double(struct ctx *c, double d)
{
	char buf[64];
	if (isnan(d))
		return mkstr(V_STR, "NaN", 3);
	if (isinf(d))
		return d > 0 ? mkstr(V_STR, "+Inf", 4)
			     : mkstr(V_STR, "-Inf", 4);
	int p = 1;
	for (; p < 17; p++) {
		snprintf(buf, sizeof buf, "%.*e", p - 1, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	snprintf(buf, sizeof buf, "%.*e", p - 1, d);
	const char *e = strchr(buf, 'e');
	int exp = e ? atoi(e + 1) : 0;
	/* Go's %g: an exponent when it is below -4 or at least 6 (the
	   precision Go assumes for the shortest form) */
	if (exp >= -4 && exp < 6) {
		int dec = p - 1 - exp;
		snprintf(buf, sizeof buf, "%.*f", dec > 0 ? dec : 0, d);
	}
	return fmt_str(c, "%s", buf);
}

/* Go's duration as cel-go prints it: seconds, shortest, then "s". */
static struct val fmt_dur(struct ctx *c, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	char frac[16];
	snprintf(frac, sizeof frac, "%09" PRIu64, a % 1000000000);
	size_t fl = strlen(frac);
	while (fl > 0 && frac[fl - 1] == '0')
		frac[--fl] = 0;
	return fmt_str(c, "%s%" PRIu64 "%s%ss", ns < 0 ? "-" : "",
		       a / 1000000000, fl ? "." : "", frac);
}

static struct val fmt_ts(struct ctx *c, const struct val *t)
{
	int64_t local = t->ts.sec + t->ts.off * 60;
	int64_t days = local / 86400, rem = local % 86400, y;
	int m, d;
	if (rem < 0)
		rem += 86400, days--;
	srv_civil_from_days(days, &y, &m, &d);
	char frac[16] = "", zone[8] = "Z";
	if (t->ts.ns) {
		snprintf(frac, sizeof frac, ".%09d", (int)t->ts.ns);
		size_t fl = strlen(frac);
		while (fl > 1 && frac[fl - 1] == '0')
			frac[--fl] = 0;
	}
	if (t->ts.off) {
		int a = t->ts.off < 0 ? -t->ts.off : t->ts.off;
		snprintf(zone, sizeof zone, "%c%02d:%02d",
			 t->ts.off < 0 ? '-' : '+', a / 60 % 100, a % 60);
	}
	return fmt_str(c, "%04d-%02d-%02dT%02d:%02d:%02d%s%s", (int)y, m, d,
		       (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60),
		       frac, zone);
}

/* *v times ten plus the decimal digit c, as Go's strconv.ParseUint reads a
   literal: false when that passes 2^64-1 (18446744073709551615 itself is
   taken). */
static bool dec_push(uint64_t *v, char c)
{
	uint64_t d = (uint64_t)(c - '0');
	if (*v > (UINT64_MAX - d) / 10)
		return false;
	*v = *v * 10 + d;
	return true;
}

/* Go's strconv.ParseInt(s, 10, 64) / ParseUint. */
static bool parse_int(const char *s, size_t n, bool is_unsigned, int64_t *i,
		      uint64_t *u)
{
	size_t k = 0;
	bool neg = false;
	uint64_t v = 0;
	if (k < n && (s[k] == '+' || s[k] == '-') && !is_unsigned)
		neg = s[k++] == '-';
	if (k == n)
		return false;
	for (; k < n; k++) {
		if (s[k] < '0' || s[k] > '9')
			return false;
		if (!dec_push(&v, s[k]))
			return false;
	}
	if (is_unsigned) {
		*u = v;
		return true;
	}
	if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
		return false;
	*i = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v)
		 : (int64_t)v;
	return true;
}

static struct val ip_string(struct ctx *c, const struct val *v);

/* cel-go's String.ConvertToType: strconv's own error is dropped for this */
#define FROM_STRING(type) "type conversion error from 'string' to '" type "'"

static struct val conv(struct ctx *c, enum fn f, const struct val *a)
{
	switch (f) {
	case F_INT:
		if (a->k == V_INT)
			return *a;
		if (a->k == V_UINT)
			return a->u > INT64_MAX ? ovf() : mkint((int64_t)a->u);
		if (a->k == V_DOUBLE) {
			if (!(a->d > -9223372036854775809.0 &&
			      a->d < 9223372036854775808.0))
				return ovf();
			return mkint((int64_t)a->d);
		}
		if (a->k == V_STR) {
			int64_t i;
			uint64_t u;
			if (!parse_int(a->s.p, a->s.n, false, &i, &u))
				return err_static(FROM_STRING("int"));
			return mkint(i);
		}
		if (a->k == V_TS)
			return mkint(a->ts.sec);
		if (a->k == V_DUR)
			return mkint(a->i);
		break;
	case F_UINT:
		if (a->k == V_UINT)
			return *a;
		if (a->k == V_INT)
			return a->i < 0 ? uovf() : mkuint((uint64_t)a->i);
		if (a->k == V_DOUBLE) {
			if (!(a->d >= 0 && a->d < 18446744073709551616.0))
				return uovf();
			return mkuint((uint64_t)a->d);
		}
		if (a->k == V_STR) {
			int64_t i;
			uint64_t u;
			if (!parse_int(a->s.p, a->s.n, true, &i, &u))
				return err_static(FROM_STRING("uint"));
			return mkuint(u);
		}
		break;
	case F_DOUBLE:
		if (a->k == V_DOUBLE)
			return *a;
		if (a->k == V_INT)
			return mkdouble((double)a->i);
		if (a->k == V_UINT)
			return mkdouble((double)a->u);
		if (a->k == V_STR) {
			const char *s = cstr(c, a);
			char *end;
			if (!s)
				return err_static(COST_MSG);
			double d = a->s.n ? strtod(s, &end) : 0;
			if (!a->s.n || end != s + a->s.n || strchr(s, 'x') ||
			    strchr(s, 'X'))
				return err_static(FROM_STRING("double"));
			return mkdouble(d);
		}
		break;
	case F_STRING:
		if (a->k == V_STR)
			return *a;
		if (a->k == V_INT)
			return fmt_str(c, "%" PRId64, a->i);
		if (a->k == V_UINT)
			return fmt_str(c, "%" PRIu64, a->u);
		if (a->k == V_DOUBLE)
			return fmt_double(c, a->d);
		if (a->k == V_BOOL)
			return a->b ? mkstr(V_STR, "true", 4)
				    : mkstr(V_STR, "false", 5);
		if (a->k == V_BYTES) {
			if (!utf8_valid(a->s.p, a->s.n))
				return err_static("invalid UTF-8 in bytes, "
						  "cannot convert to string");
			return mkstr(V_STR, a->s.p, a->s.n);
		}
		if (a->k == V_DUR)
			return fmt_dur(c, a->i);
		if (a->k == V_TS)
			return fmt_ts(c, a);
		if (a->k == V_IP || a->k == V_CIDR)
			return ip_string(c, a);
		break;
	case F_BOOL:
		if (a->k == V_BOOL)
			return *a;
		if (a->k == V_STR) {
			static const char *const yes[] = {
			    "1", "t", "T", "TRUE", "true", "True"};
			static const char *const no[] = {
			    "0", "f", "F", "FALSE", "false", "False"};
			if (is_word(yes, 6, a->s.p, a->s.n))
				return mkbool(true);
			if (is_word(no, 6, a->s.p, a->s.n))
				return mkbool(false);
			return err_static(FROM_STRING("bool"));
		}
		break;
	case F_BYTES:
		if (a->k == V_BYTES)
			return *a;
		if (a->k == V_STR)
			return mkstr(V_BYTES, a->s.p, a->s.n);
		break;
	case F_DYN:
		return *a;
	case F_DURATION:
		if (a->k == V_DUR)
			return *a;
		if (a->k == V_STR) {
			int64_t d;
			if (!parse_duration(a->s.p, a->s.n, &d))
				return err_static(
				    FROM_STRING("google.protobuf.Duration"));
			return mkdur(d);
		}
		break;
	case F_TIMESTAMP:
		if (a->k == V_TS)
			return *a;
		if (a->k == V_STR) {
			struct val v = {.k = V_TS};
			if (!parse_ts(a->s.p, a->s.n, &v.ts.sec, &v.ts.ns,
				      &v.ts.off))
				return err_static(
				    FROM_STRING("google.protobuf.Timestamp"));
			return v;
		}
		if (a->k == V_INT) {
			if (a->i < TS_MIN || a->i > TS_MAX)
				return err_static("timestamp overflow");
			struct val v = {.k = V_TS};
			v.ts.sec = a->i;
			return v;
		}
		break;
	case F_SIZE:
	case F_CONTAINS:
	case F_STARTS:
	case F_ENDS:
	case F_MATCHES:
	case F_FIND:
	case F_FINDALL:
	case F_LOWER:
	case F_UPPER:
	case F_TRIM:
	case F_SPLIT:
	case F_JOIN:
	case F_INDEXOF:
	case F_LASTINDEXOF:
	case F_REPLACE:
	case F_SUBSTRING:
	case F_CHARAT:
	case F_ISSORTED:
	case F_SUM:
	case F_MIN:
	case F_MAX:
	case F_ISIP:
	case F_IP:
	case F_IP_CANON:
	case F_FAMILY:
	case F_IS_UNSPEC:
	case F_IS_LOOPBACK:
	case F_IS_LL_MCAST:
	case F_IS_LL_UCAST:
	case F_IS_GLOBAL:
	case F_ISCIDR:
	case F_CIDR:
	case F_CONTAINS_IP:
	case F_CONTAINS_CIDR:
	case F_MASKED:
	case F_PREFIXLEN:
	case F_ISURL:
	case F_URL:
	case F_GETSCHEME:
	case F_GETHOST:
	case F_GETHOSTNAME:
	case F_GETPORT:
	case F_GETPATH:
	case F_GETQUERY:
	case F_GETFULLYEAR:
	case F_GETMONTH:
	case F_GETDAYOFMONTH:
	case F_GETDATE:
	case F_GETDAYOFWEEK:
	case F_GETDAYOFYEAR:
	case F_GETHOURS:
	case F_GETMINUTES:
	case F_GETSECONDS:
	case F_GETMILLIS:
	case F_OPT_OF:
	case F_OPT_NZ:
	case F_OPT_NONE:
	case F_OPT_UNWRAP:
	case F_HASVALUE:
	case F_VALUE:
	case F_OR:
	case F_ORVALUE:
	case F_FIRST:
	case F_LAST:
	case F_SETS_CONTAINS:
	case F_SETS_EQUIV:
	case F_SETS_INTERSECTS:
	case F_FMT_NAMED:
	case F_FMT:
	case F_VALIDATE:
	case F_QUANTITY:
	case F_ISQUANTITY:
	case F_SIGN:
	case F_ISINTEGER:
	case F_ASINTEGER:
	case F_ASFLOAT:
	case F_QADD:
	case F_QSUB:
	case F_QLT:
	case F_QGT:
	case F_QCMP:
	case F_SEMVER:
	case F_ISSEMVER:
	case F_MAJOR:
	case F_MINOR:
	case F_PATCH:
	case F_TYPE:
	case F_QUOTE:
	case F_FORMAT:
		break;
	}
	return no_overload();
}

/* ------------------------------------------- kube's ip, cidr, url */

/* A string formatted into the arena; "" when the arena is spent (the
   evaluation stops then anyway). */
static const char *afmt(struct ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static const char *afmt(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *p = n < 0 ? NULL : astr(c, (size_t)n);
	if (!p)
		return "";
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

static struct val err_text(const char *msg)
{
	return mkstr(V_ERR, msg, strlen(msg));
}

/* Go's strconv.Quote of s[0..n), in the arena ("" when it is spent).
   Printable non-ASCII runes that Go would still escape (U+00A0 ...) are
   kept as they are. */
static const char *goquote(struct ctx *c, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	if (n > ARENA_LIMIT / 4)
		return "";
	char *p = astr(c, n * 4 + 2);
	if (!p)
		return "";
	size_t o = 0;
	p[o++] = '"';
	for (size_t i = 0; i < n;) {
		unsigned char ch = (unsigned char)s[i];
		uint32_t cp;
		size_t l = ch >= 0x80 ? utf8_len((const unsigned char *)s + i,
						 n - i, &cp)
				      : 1;
		if (ch >= 0x80 && l) {
			memcpy(p + o, s + i, l);
			o += l;
			i += l;
			continue;
		}
		i++;
		const char *esc = NULL;
		switch (ch) {
		case '"':
			esc = "\\\"";
			break;
		case '\\':
			esc = "\\\\";
			break;
		case '\a':
			esc = "\\a";
			break;
		case '\b':
			esc = "\\b";
			break;
		case '\f':
			esc = "\\f";
			break;
		case '\n':
			esc = "\\n";
			break;
		case '\r':
			esc = "\\r";
			break;
		case '\t':
			esc = "\\t";
			break;
		case '\v':
			esc = "\\v";
			break;
		default:
			break;
		}
		if (esc) {
			p[o++] = esc[0];
			p[o++] = esc[1];
		} else if (ch < 0x20 || ch >= 0x7f) {
			p[o++] = '\\';
			p[o++] = 'x';
			p[o++] = hex[ch >> 4];
			p[o++] = hex[ch & 15];
		} else {
			p[o++] = (char)ch;
		}
	}
	p[o++] = '"';
	p[o] = 0;
	return p;
}

static const unsigned char v4_in_v6[12] = {0, 0, 0, 0, 0,    0,
					   0, 0, 0, 0, 0xff, 0xff};

/* Why Go's netip.ParseAddr refused a text: its message, and the
   unparsed rest it points at (at NULL: none). */
struct addr_err {
	const char *msg;
	const char *at;
	size_t at_n;
};

static bool addr_fail(struct addr_err *e, const char *msg, const char *at,
		      size_t at_n)
{
	e->msg = msg;
	e->at = at;
	e->at_n = at_n;
	return false;
}

/* Go's parseIPv4Fields over s[0..n): four octets, no leading zeros. */
static bool parse4_fields(const char *s, size_t n, unsigned char out[4],
			  struct addr_err *e)
{
	int val = 0, pos = 0, dig = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			if (dig == 1 && val == 0)
				return addr_fail(
				    e, "IPv4 field has octet with leading zero",
				    NULL, 0);
			val = val * 10 + (s[i] - '0');
			dig++;
			if (val > 255)
				return addr_fail(e, "IPv4 field has value >255",
						 NULL, 0);
		} else if (s[i] == '.') {
			if (i == 0 || i == n - 1 || s[i - 1] == '.')
				return addr_fail(e,
						 "IPv4 field must have at "
						 "least one digit",
						 s + i, n - i);
			if (pos == 3)
				return addr_fail(e, "IPv4 address too long",
						 NULL, 0);
			out[pos++] = (unsigned char)val;
			val = 0;
			dig = 0;
		} else {
			return addr_fail(e, "unexpected character", s + i,
					 n - i);
		}
	}
	if (pos < 3)
		return addr_fail(e, "IPv4 address too short", NULL, 0);
	out[3] = (unsigned char)val;
	return true;
}

static int hexdig(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Go's netip parseIPv6; *zone: a zone (%eth0) was written. */
static bool parse6(const char *in, size_t n, unsigned char ip[16], bool *zone,
		   struct addr_err *e)
{
	const char *s = in;
	const char *pct = memchr(in, '%', n);
	size_t sn = pct ? (size_t)(pct - in) : n;
	*zone = pct != NULL;
	if (pct && sn + 1 == n)
		return addr_fail(e, "zone must be a non-empty string", NULL, 0);
	memset(ip, 0, 16);
	int ell = -1, i = 0;
	if (sn >= 2 && s[0] == ':' && s[1] == ':') {
		ell = 0;
		s += 2;
		sn -= 2;
		if (sn == 0)
			return true;
	}
	while (i < 16) {
		size_t off = 0;
		uint32_t acc = 0;
		for (; off < sn; off++) {
			int h = hexdig(s[off]);
			if (h < 0)
				break;
			acc = (acc << 4) + (uint32_t)h;
			if (off > 3)
				return addr_fail(e,
						 "each colon-separated field "
						 "must have at most 4 hex "
						 "digits",
						 s, sn);
		}
		if (off == 0)
			return addr_fail(e,
					 "each colon-separated field must "
					 "have at least one digit",
					 s, sn);
		if (off < sn && s[off] == '.') {
			if (ell < 0 && i != 12)
				return addr_fail(e,
						 "embedded IPv4 address must "
						 "replace the final 2 fields "
						 "of the address",
						 s, sn);
			if (i + 4 > 16)
				return addr_fail(e,
						 "too many hex fields to fit "
						 "an embedded IPv4 at the end "
						 "of the address",
						 s, sn);
			if (!parse4_fields(s, sn, ip + i, e))
				return false;
			sn = 0;
			i += 4;
			break;
		}
		ip[i] = (unsigned char)(acc >> 8);
		ip[i + 1] = (unsigned char)acc;
		i += 2;
		s += off;
		sn -= off;
		if (sn == 0)
			break;
		if (s[0] != ':')
			return addr_fail(e, "unexpected character, want colon",
					 s, sn);
		if (sn == 1)
			return addr_fail(
			    e, "colon must be followed by more characters", s,
			    sn);
		s++;
		sn--;
		if (s[0] == ':') {
			if (ell >= 0)
				return addr_fail(e, "multiple :: in address", s,
						 sn);
			ell = i;
			s++;
			sn--;
			if (sn == 0)
				break;
		}
	}
	if (sn != 0)
		return addr_fail(e, "trailing garbage after address", s, sn);
	if (i < 16) {
		if (ell < 0)
			return addr_fail(e, "address string too short", NULL,
					 0);
		int k = 16 - i;
		for (int j = i - 1; j >= ell; j--)
			ip[j + k] = ip[j];
		memset(ip + ell, 0, (size_t)k);
	} else if (ell >= 0) {
		return addr_fail(
		    e, "the :: must expand to at least one field of zeros",
		    NULL, 0);
	}
	return true;
}

/* Go's netip.ParseAddr into v (a V_IP); *zone as parse6. */
static bool parse_addr(const char *s, size_t n, struct val *v, bool *zone,
		       struct addr_err *e)
{
	*v = (struct val){.k = V_IP};
	*zone = false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '.') {
			memcpy(v->ip.b, v4_in_v6, 12);
			v->ip.v4 = true;
			return parse4_fields(s, n, v->ip.b + 12, e);
		}
		if (s[i] == ':')
			return parse6(s, n, v->ip.b, zone, e);
		if (s[i] == '%')
			return addr_fail(e, "missing IPv6 address", NULL, 0);
	}
	return addr_fail(e, "unable to parse IP", NULL, 0);
}

/* The text of a ParseAddr error, as Go's parseAddrError.Error. */
static const char *addr_err_text(struct ctx *c, const char *s, size_t n,
				 const struct addr_err *e)
{
	if (e->at)
		return afmt(c, "ParseAddr(%s): %s (at %s)", goquote(c, s, n),
			    e->msg, goquote(c, e->at, e->at_n));
	return afmt(c, "ParseAddr(%s): %s", goquote(c, s, n), e->msg);
}

static bool is_4in6(const struct val *v)
{
	return !v->ip.v4 && !memcmp(v->ip.b, v4_in_v6, 12);
}

/* kube's parseIPAddr: false with the error in *v. */
static bool ip_from(struct ctx *c, const char *s, size_t n, struct val *v)
{
	struct addr_err e;
	bool zone;
	charge(c, n / 16);
	if (!parse_addr(s, n, v, &zone, &e)) {
		*v = err_text(
		    afmt(c,
			 "IP Address %s parse error during conversion from "
			 "string: %s",
			 goquote(c, s, n), addr_err_text(c, s, n, &e)));
		return false;
	}
	if (zone) {
		*v = err_text(afmt(c,
				   "IP address %s with zone value is not "
				   "allowed",
				   goquote(c, s, n)));
		return false;
	}
	if (is_4in6(v)) {
		*v = err_text(afmt(c,
				   "IPv4-mapped IPv6 address %s is not allowed",
				   goquote(c, s, n)));
		return false;
	}
	return true;
}

/* Go's netip.ParsePrefix and kube's parseCIDR: false with the error in
 *v. */
static bool cidr_from(struct ctx *c, const char *s, size_t n, struct val *v)
{
	static const char pre[] = "network address parse error during "
				  "conversion from string: ";
	const char *slash = NULL, *why = NULL;
	charge(c, n / 16);
	for (size_t i = n; i > 0; i--)
		if (s[i - 1] == '/') {
			slash = s + i - 1;
			break;
		}
	if (!slash) {
		why = "no '/'";
	} else {
		struct addr_err e;
		bool zone;
		size_t an = (size_t)(slash - s), bn = n - an - 1;
		const char *b = slash + 1;
		uint64_t bits = 0;
		bool ok = bn > 0 && !(bn > 1 && (b[0] < '1' || b[0] > '9'));
		for (size_t i = 0; ok && i < bn; i++) {
			ok = b[i] >= '0' && b[i] <= '9' &&
			     bits <= (uint64_t)INT64_MAX / 10;
			bits = bits * 10 + (uint64_t)(b[i] - '0');
			ok = ok && bits <= (uint64_t)INT64_MAX;
		}
		if (!parse_addr(s, an, v, &zone, &e))
			why = addr_err_text(c, s, an, &e);
		else if (zone)
			why = "IPv6 zones cannot be present in a prefix";
		else if (!ok)
			why = afmt(c, "bad bits after slash: %s",
				   goquote(c, b, bn));
		else if (bits > (v->ip.v4 ? 32u : 128u))
			why = "prefix length out of range";
		else
			v->ip.bits = (int16_t)bits;
	}
	if (why) {
		*v = err_text(afmt(c, "%s%snetip.ParsePrefix(%s): %s", pre, pre,
				   goquote(c, s, n), why));
		return false;
	}
	if (is_4in6(v)) {
		*v = err_text(afmt(c,
				   "%sIPv4-mapped IPv6 address %s is not "
				   "allowed",
				   pre, goquote(c, s, n)));
		return false;
	}
	v->k = V_CIDR;
	return true;
}

/* The address bytes of v (4 or 16) and their count. */
static const unsigned char *ip_bytes(const struct val *v, int *n)
{
	*n = v->ip.v4 ? 4 : 16;
	return v->ip.v4 ? v->ip.b + 12 : v->ip.b;
}

/* Do a and b (same family) agree on their first bits bits? */
static bool prefix_match(const struct val *a, const struct val *b, int bits)
{
	int n;
	const unsigned char *x = ip_bytes(a, &n), *y = ip_bytes(b, &n);
	int full = bits / 8, rest = bits % 8;
	if (memcmp(x, y, (size_t)full))
		return false;
	if (!rest)
		return true;
	unsigned char mask = (unsigned char)(0xff << (8 - rest));
	return (x[full] & mask) == (y[full] & mask);
}

/* netip.Addr.String, with "/bits" for a V_CIDR. */
static struct val ip_string(struct ctx *c, const struct val *v)
{
	struct srv_ip ip = {.v4 = v->ip.v4};
	char buf[SRV_IP_TEXT];
	memcpy(ip.b, v->ip.b, 16);
	srv_ip_string(&ip, buf);
	if (v->k == V_CIDR)
		return fmt_str(c, "%s/%d", buf, (int)v->ip.bits);
	return fmt_str(c, "%s", buf);
}

static bool ip_is_loopback(const struct val *v)
{
	static const unsigned char one[16] = {[15] = 1};
	return v->ip.v4 ? v->ip.b[12] == 127 : !memcmp(v->ip.b, one, 16);
}

static bool ip_is_unspecified(const struct val *v)
{
	static const unsigned char zero[16];
	return v->ip.v4 ? !memcmp(v->ip.b + 12, zero, 4)
			: !memcmp(v->ip.b, zero, 16);
}

static bool ip_is_ll_unicast(const struct val *v)
{
	const unsigned char *b = v->ip.b;
	return v->ip.v4 ? b[12] == 169 && b[13] == 254
			: b[0] == 0xfe && (b[1] & 0xc0) == 0x80;
}

/* netip.Addr.IsGlobalUnicast: not unspecified, broadcast, loopback,
   multicast or link-local unicast (private addresses are). */
static bool ip_is_global_unicast(const struct val *v)
{
	const unsigned char *b = v->ip.b;
	if (v->ip.v4 && b[12] == 255 && b[13] == 255 && b[14] == 255 &&
	    b[15] == 255)
		return false;
	bool multicast = v->ip.v4 ? (b[12] & 0xf0) == 0xe0 : b[0] == 0xff;
	return !ip_is_unspecified(v) && !ip_is_loopback(v) && !multicast &&
	       !ip_is_ll_unicast(v);
}

/* Go's net/url encodings (the modes of its shouldEscape). */
enum umode { U_PATH, U_HOST, U_ZONE, U_USER, U_QUERY, U_FRAG };

/* Go's url.shouldEscape for the modes we use. */
static bool should_escape(unsigned char ch, enum umode m)
{
	if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9'))
		return false;
	if ((m == U_HOST || m == U_ZONE) && strchr("!$&'()*+,;=:[]<>\"", ch) &&
	    ch)
		return false;
	if (ch && strchr("-_.~", ch))
		return false;
	if (ch && strchr("$&+,/:;=?@", ch)) {
		switch (m) {
		case U_PATH:
			return ch == '?';
		case U_USER:
			return ch == '@' || ch == '/' || ch == '?' || ch == ':';
		case U_QUERY:
			return true;
		case U_FRAG:
			return false;
		case U_HOST:
		case U_ZONE:
			break;
		}
	}
	if (m == U_FRAG && ch && strchr("!()*", ch))
		return false;
	return true;
}

/* Go's url.unescape(s, mode): NULL, the decoded bytes written to out (if
   not NULL; room n) and their count to *out_n; else the error's text. */
static const char *unescape_url(struct ctx *c, const char *s, size_t n,
				enum umode m, char *out, size_t *out_n)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '%') {
			if (i + 2 >= n || hexdig(s[i + 1]) < 0 ||
			    hexdig(s[i + 2]) < 0)
				return afmt(
				    c, "invalid URL escape %s",
				    goquote(c, s + i, n - i > 3 ? 3 : n - i));
			int v = hexdig(s[i + 1]) << 4 | hexdig(s[i + 2]);
			bool pct25 = s[i + 1] == '2' && s[i + 2] == '5';
			if ((m == U_HOST && hexdig(s[i + 1]) < 8 && !pct25) ||
			    (m == U_ZONE && !pct25 && v != ' ' &&
			     should_escape((unsigned char)v, U_HOST)))
				return afmt(c, "invalid URL escape %s",
					    goquote(c, s + i, 3));
			if (out)
				out[o++] = (char)v;
			i += 3;
			continue;
		}
		if ((m == U_HOST || m == U_ZONE) && ch < 0x80 &&
		    should_escape(ch, m))
			return afmt(c, "invalid character %s in host name",
				    goquote(c, s + i, 1));
		if (out)
			out[o++] = ch == '+' && m == U_QUERY ? ' ' : (char)ch;
		i++;
	}
	if (out_n)
		*out_n = o;
	return NULL;
}

/* A URL as Go's url.parse leaves it, in the parts kube reads. */
struct gourl {
	const char *scheme, *host, *path, *query;
	size_t scheme_n, host_n, path_n, query_n;
};

static bool valid_port(const char *p, size_t n)
{
	if (n == 0)
		return true;
	if (p[0] != ':')
		return false;
	for (size_t i = 1; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return true;
}

static const char *rfind(const char *s, size_t n, char ch)
{
	for (size_t i = n; i > 0; i--)
		if (s[i - 1] == ch)
			return s + i - 1;
	return NULL;
}

/* Go's url.parseHost into u->host (unescaped, in the arena). */
static const char *parse_host(struct ctx *c, const char *h, size_t n,
			      struct gourl *u)
{
	char *out = astr(c, n);
	const char *why;
	size_t k, o = 0;
	if (!out)
		return "";
	if (n && h[0] == '[') {
		const char *rb = rfind(h, n, ']');
		if (!rb)
			return "missing ']' in host";
		size_t i = (size_t)(rb - h);
		if (!valid_port(rb + 1, n - i - 1))
			return afmt(c, "invalid port %s after host",
				    goquote(c, rb + 1, n - i - 1));
		for (size_t z = 0; z + 3 <= i; z++) {
			if (memcmp(h + z, "%25", 3))
				continue;
			if ((why = unescape_url(c, h, z, U_HOST, out, &k)))
				return why;
			o = k;
			if ((why = unescape_url(c, h + z, i - z, U_ZONE,
						out + o, &k)))
				return why;
			o += k;
			if ((why = unescape_url(c, rb, n - i, U_HOST, out + o,
						&k)))
				return why;
			u->host = out;
			u->host_n = o + k;
			return NULL;
		}
	} else {
		const char *colon = rfind(h, n, ':');
		if (colon && !valid_port(colon, n - (size_t)(colon - h)))
			return afmt(c, "invalid port %s after host",
				    goquote(c, colon, n - (size_t)(colon - h)));
	}
	if ((why = unescape_url(c, h, n, U_HOST, out, &k)))
		return why;
	u->host = out;
	u->host_n = k;
	return NULL;
}

/* Go's url.parseAuthority: the host into u; the user info checked. */
static const char *parse_authority(struct ctx *c, const char *a, size_t n,
				   struct gourl *u)
{
	const char *at = rfind(a, n, '@');
	size_t hi = at ? (size_t)(at - a) + 1 : 0;
	const char *why = parse_host(c, a + hi, n - hi, u);
	if (why || !at)
		return why;
	size_t un = hi - 1;
	for (size_t i = 0; i < un; i++) {
		unsigned char ch = (unsigned char)a[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') ||
		      (ch && strchr("-._:~!$&'()*+,;=%@", ch))))
			return "net/url: invalid userinfo";
	}
	const char *colon = memchr(a, ':', un);
	size_t nn = colon ? (size_t)(colon - a) : un;
	if ((why = unescape_url(c, a, nn, U_USER, NULL, NULL)))
		return why;
	if (colon)
		why =
		    unescape_url(c, colon + 1, un - nn - 1, U_USER, NULL, NULL);
	return why;
}

/* Go's url.parse(rawURL, viaRequest): NULL and u, else the error's
   text. */
static const char *parse_url(struct ctx *c, const char *s, size_t n, bool via,
			     struct gourl *u)
{
	memset(u, 0, sizeof *u);
	u->scheme = u->host = u->path = u->query = "";
	charge(c, n / 16);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return "net/url: invalid control character in URL";
	if (n == 0 && via)
		return "empty url";
	if (n == 1 && s[0] == '*') {
		u->path = s;
		u->path_n = 1;
		return NULL;
	}
	const char *rest = s;
	size_t rn = n;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))
			continue;
		if ((ch >= '0' && ch <= '9') || ch == '+' || ch == '-' ||
		    ch == '.') {
			if (i == 0)
				break;
			continue;
		}
		if (ch == ':') {
			if (i == 0)
				return "missing protocol scheme";
			char *sc = astr(c, i);
			if (!sc)
				return "";
			for (size_t k = 0; k < i; k++)
				sc[k] = s[k] >= 'A' && s[k] <= 'Z'
					    ? (char)(s[k] - 'A' + 'a')
					    : s[k];
			u->scheme = sc;
			u->scheme_n = i;
			rest = s + i + 1;
			rn = n - i - 1;
		}
		break;
	}
	/* a query (the first '?' on; a lone final '?' is ForceQuery, with
	   the same empty RawQuery) */
	const char *q = memchr(rest, '?', rn);
	if (q) {
		u->query = q + 1;
		u->query_n = rn - (size_t)(q - rest) - 1;
		rn = (size_t)(q - rest);
	}
	if (!(rn && rest[0] == '/')) {
		if (u->scheme_n)
			return NULL; /* opaque */
		if (via)
			return "invalid URI for request";
		const char *sl = memchr(rest, '/', rn);
		size_t seg = sl ? (size_t)(sl - rest) : rn;
		if (memchr(rest, ':', seg))
			return "first path segment in URL cannot contain "
			       "colon";
	}
	bool dbl = rn >= 2 && rest[0] == '/' && rest[1] == '/';
	bool tpl = dbl && rn >= 3 && rest[2] == '/';
	if ((u->scheme_n || (!via && !tpl)) && dbl) {
		const char *a = rest + 2;
		size_t an = rn - 2;
		const char *sl = memchr(a, '/', an);
		size_t alen = sl ? (size_t)(sl - a) : an;
		const char *why = parse_authority(c, a, alen, u);
		if (why)
			return why;
		rest = a + alen;
		rn = an - alen;
	}
	u->path = rest;
	u->path_n = rn;
	return unescape_url(c, rest, rn, U_PATH, NULL, NULL);
}

/* kube's url(): ParseRequestURI must take s, and url.Parse then reads
   it (cutting the fragment). NULL, or the error's text. */
static const char *url_from(struct ctx *c, const char *s, size_t n,
			    struct gourl *u)
{
	const char *why = parse_url(c, s, n, true, u);
	if (why)
		return afmt(c, "parse %s: %s", goquote(c, s, n), why);
	const char *hash = memchr(s, '#', n);
	size_t un = hash ? (size_t)(hash - s) : n;
	if ((why = parse_url(c, s, un, false, u)))
		return afmt(c, "parse %s: %s", goquote(c, s, un), why);
	if (hash &&
	    (why = unescape_url(c, hash + 1, n - un - 1, U_FRAG, NULL, NULL)))
		return afmt(c, "parse %s: %s", goquote(c, s, n), why);
	return NULL;
}

/* Go's url.validEncoded(s, encodePath). */
static bool valid_encoded_path(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch && strchr("!$&'()*+,;=:@[]%", ch))
			continue;
		if (should_escape(ch, U_PATH))
			return false;
	}
	return true;
}

/* URL.EscapedPath: the path as written when that is a valid encoding,
   else the decoded path escaped again. */
static struct val url_escaped_path(struct ctx *c, const struct gourl *u)
{
	static const char hex[] = "0123456789ABCDEF";
	if (valid_encoded_path(u->path, u->path_n))
		return mkstr(V_STR, u->path, u->path_n);
	char *dec = astr(c, u->path_n), *out = astr(c, u->path_n * 3);
	size_t dn, o = 0;
	if (!dec || !out)
		return err_static(COST_MSG);
	unescape_url(c, u->path, u->path_n, U_PATH, dec, &dn);
	for (size_t i = 0; i < dn; i++) {
		unsigned char ch = (unsigned char)dec[i];
		if (!should_escape(ch, U_PATH)) {
			out[o++] = (char)ch;
			continue;
		}
		out[o++] = '%';
		out[o++] = hex[ch >> 4];
		out[o++] = hex[ch & 15];
	}
	out[o] = 0;
	return mkstr(V_STR, out, o);
}

/* Go's url.splitHostPort: the host's name (brackets off) and port. */
static void split_host_port(const struct gourl *u, struct val *host,
			    struct val *port)
{
	const char *h = u->host;
	size_t n = u->host_n;
	*port = mkstr(V_STR, "", 0);
	const char *colon = rfind(h, n, ':');
	if (colon && valid_port(colon, n - (size_t)(colon - h))) {
		*port = mkstr(V_STR, colon + 1, n - (size_t)(colon - h) - 1);
		n = (size_t)(colon - h);
	}
	if (n >= 2 && h[0] == '[' && h[n - 1] == ']')
		h++, n -= 2;
	*host = mkstr(V_STR, h, n);
}

struct qpair {
	struct val k, v;
	size_t at;
};

static int qpair_cmp(const void *x, const void *y)
{
	const struct qpair *a = x, *b = y;
	int r = cmp_bytes(a->k.s.p, a->k.s.n, b->k.s.p, b->k.s.n);
	if (r)
		return r;
	return (a->at > b->at) - (a->at < b->at);
}

/* Go's url.ParseQuery, errors ignored as URL.Query ignores them: a map
   of each key to its values in order. */
static struct val url_query(struct ctx *c, const struct gourl *u)
{
	const char *q = u->query, *end = q + u->query_n;
	size_t np = 1, n = 0;
	for (const char *p = q; p < end; p++)
		np += *p == '&';
	struct qpair *pairs = aalloc(c, np * sizeof *pairs);
	if (!pairs)
		return err_static(COST_MSG);
	while (q < end) {
		const char *amp = memchr(q, '&', (size_t)(end - q));
		const char *ke = amp ? amp : end;
		const char *k = q;
		q = amp ? amp + 1 : end;
		size_t kn = (size_t)(ke - k);
		if (memchr(k, ';', kn) || kn == 0)
			continue;
		const char *eq = memchr(k, '=', kn);
		size_t nk = eq ? (size_t)(eq - k) : kn;
		const char *v = eq ? eq + 1 : ke;
		size_t nv = (size_t)(ke - v);
		char *kb = astr(c, nk), *vb = astr(c, nv);
		size_t kl, vl;
		if (!kb || !vb)
			return err_static(COST_MSG);
		if (unescape_url(c, k, nk, U_QUERY, kb, &kl) ||
		    unescape_url(c, v, nv, U_QUERY, vb, &vl))
			continue;
		pairs[n].k = mkstr(V_STR, kb, kl);
		pairs[n].v = mkstr(V_STR, vb, vl);
		pairs[n].at = n;
		n++;
	}
	charge(c, n);
	qsort(pairs, n, sizeof *pairs, qpair_cmp);
	struct val m = new_map(c, n);
	if (is_err(&m))
		return m;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && pairs[j].k.s.n == pairs[i].k.s.n &&
		       !memcmp(pairs[j].k.s.p, pairs[i].k.s.p, pairs[i].k.s.n))
			j++;
		struct val l = new_list(c, j - i);
		if (is_err(&l))
			return l;
		for (size_t k = i; k < j; k++)
			l.l.items[k - i] = pairs[k].v;
		m.m.keys[m.m.n] = pairs[i].k;
		m.m.vals[m.m.n++] = l;
		i = j;
	}
	return m;
}

/* The url library's methods on a url value. */
static struct val url_method(struct ctx *c, enum fn f, const struct val *r)
{
	struct gourl u;
	struct val host, port;
	if (url_from(c, r->s.p, r->s.n, &u))
		return err_static("url value no longer parses");
	switch ((int)f) { /* of the library's functions only */
	case F_GETSCHEME:
		return mkstr(V_STR, u.scheme, u.scheme_n);
	case F_GETHOST:
		return mkstr(V_STR, u.host, u.host_n);
	case F_GETHOSTNAME:
	case F_GETPORT:
		split_host_port(&u, &host, &port);
		return f == F_GETPORT ? port : host;
	case F_GETPATH:
		return url_escaped_path(c, &u);
	case F_GETQUERY:
		return url_query(c, &u);
	default:
		break;
	}
	return no_overload();
}

/* ------------------------------------------ duration, time accessors */

/* cel-go's DurationGetHours ...: Go's Duration.Hours() (a float64)
   truncated, and Milliseconds() (an integer division). */
static struct val dur_get(enum fn f, int64_t d)
{
	int64_t unit;
	switch ((int)f) { /* of the library's functions only */
	case F_GETHOURS:
		unit = 3600000000000LL;
		break;
	case F_GETMINUTES:
		unit = 60000000000LL;
		break;
	case F_GETSECONDS:
		unit = 1000000000LL;
		break;
	default:
		return mkint(d / 1000000);
	}
	double v = (double)(d / unit) + (double)(d % unit) / (double)unit;
	return mkint((int64_t)v);
}

/* cel-go's timeZone: the offset east of UTC in seconds of the zone tz at
   the time t (a name, read as Go's LoadLocation finds it, or [+-]hh:mm).
   1: done; 0: an error (in *err); -1: an offset Go would take past the
   calendar. */
static int tz_offset(struct ctx *c, const struct val *tz, const struct val *t,
		     int64_t *off, struct val *err)
{
	const char *s = tz->s.p, *colon = memchr(s, ':', tz->s.n);
	size_t n = tz->s.n;
	if (!colon) {
		/* a name: Go's time.LoadLocation */
		int32_t o = 0;
		enum srv_tz r = srv_tz_offset(s, n, t->ts.sec, &o);
		*off = o;
		if (r == SRV_TZ_OK)
			return 1;
		*err = err_text(
		    r == SRV_TZ_INVALID
			? afmt(c, "time: invalid location name")
			: afmt(c, "unknown time zone %.*s", (int)n, s));
		return 0;
	}
	int64_t part[2];
	const char *p[2] = {s, colon + 1};
	size_t pn[2] = {(size_t)(colon - s), n - (size_t)(colon - s) - 1};
	for (int k = 0; k < 2; k++) {
		uint64_t u;
		if (!parse_int(p[k], pn[k], false, &part[k], &u)) {
			bool range = pn[k] > 0;
			for (size_t i = 0; i < pn[k]; i++)
				if (!((p[k][i] >= '0' && p[k][i] <= '9') ||
				      (i == 0 && pn[k] > 1 &&
				       (p[k][i] == '+' || p[k][i] == '-'))))
					range = false;
			*err = err_text(afmt(c, "strconv.Atoi: parsing %s: %s",
					     goquote(c, p[k], pn[k]),
					     range ? "value out of range"
						   : "invalid syntax"));
			return 0;
		}
	}
	/* an offset Go would wrap, or take past the calendar: left out */
	if (part[0] > 1000000 || part[0] < -1000000 || part[1] > 60000000 ||
	    part[1] < -60000000)
		return -1;
	int64_t min =
	    s[0] == '-' ? part[0] * 60 - part[1] : part[0] * 60 + part[1];
	*off = min * 60;
	return 1;
}

/* The timestamp accessors of cel-go, in UTC or the zone tz. */
static struct val ts_get(struct ctx *c, enum fn f, const struct val *t,
			 const struct val *tz)
{
	int64_t off = 0, y;
	int m, d;
	if (tz) {
		struct val err;
		int r = tz_offset(c, tz, t, &off, &err);
		if (r == 0)
			return err;
		if (r < 0)
			return mkstr(V_UNSUP, "time zone offsets that large",
				     strlen("time zone offsets that large"));
	}
	int64_t local = t->ts.sec + off;
	int64_t days = local / 86400, rem = local % 86400;
	if (rem < 0)
		rem += 86400, days--;
	srv_civil_from_days(days, &y, &m, &d);
	switch ((int)f) { /* of the library's functions only */
	case F_GETFULLYEAR:
		return mkint(y);
	case F_GETMONTH:
		return mkint(m - 1);
	case F_GETDAYOFMONTH:
		return mkint(d - 1);
	case F_GETDATE:
		return mkint(d);
	case F_GETDAYOFWEEK:
		return mkint(((days % 7) + 11) % 7);
	case F_GETDAYOFYEAR:
		return mkint(days - srv_days_from_civil(y, 1, 1));
	case F_GETHOURS:
		return mkint(rem / 3600);
	case F_GETMINUTES:
		return mkint(rem / 60 % 60);
	case F_GETSECONDS:
		return mkint(rem % 60);
	case F_GETMILLIS:
		return mkint(t->ts.ns / 1000000);
	default:
		break;
	}
	return no_overload();
}

/* ------------------------------------------------------------ calls */

static struct val index_range(struct ctx *c, int64_t i)
{
	return errf(c, "index out of range: %" PRId64, i);
}

static struct val str_index_of(struct ctx *c, const struct val *s,
			       const struct val *sub, const struct val *off,
			       bool last)
{
	int64_t len = utf8_count(s->s.p, s->s.n);
	if (sub->s.n == 0 && !off)
		return mkint(last ? len : 0);
	if (off) {
		if (sub->s.n == 0)
			return *off;
		if (off->i < 0 || off->i >= len)
			return index_range(c, off->i);
	}
	int64_t at;
	charge(c, s->s.n / 16);
	if (!last) {
		size_t from = off ? utf8_off(s->s.p, s->s.n, off->i) : 0;
		at = find_sub(s->s.p, s->s.n, sub->s.p, sub->s.n, from);
	} else {
		size_t upto = off ? utf8_off(s->s.p, s->s.n, off->i) : s->s.n;
		at = rfind_sub(c, s->s.p, s->s.n, sub->s.p, sub->s.n, upto);
	}
	return mkint(at < 0 ? -1 : utf8_count(s->s.p, (size_t)at));
}

static struct val list_index_of(struct ctx *c, const struct val *l,
				const struct val *x, bool last)
{
	size_t n = list_len(l);
	for (size_t k = 0; k < n; k++) {
		size_t i = last ? n - 1 - k : k;
		struct val e = list_get(c, l, i), err;
		if (!charge(c, 1))
			return err_static(COST_MSG);
		if (eqv(c, &e, x, &err, 0) == 1)
			return mkint((int64_t)i);
	}
	return mkint(-1);
}

/* sum, min, max and isSorted of kube's lists library. */
static struct val list_fold(struct ctx *c, enum fn f, const struct val *l)
{
	size_t n = list_len(l);
	struct val acc = mkint(0);
	/* the sum of no elements is the zero of their type: a schema's
	   list of durations sums to duration 0, of numbers to 0.0 */
	if (n == 0 && f == F_SUM && l->json && l->js.node && c->ops) {
		const void *it = c->ops->items(l->js.node);
		enum cel_stype t = it ? c->ops->type(it) : CEL_S_ANY;
		if (t == CEL_S_DURATION)
			acc = mkdur(0);
		else if (t == CEL_S_DOUBLE)
			acc = mkdouble(0);
	}
	for (size_t i = 0; i < n; i++) {
		struct val e = list_get(c, l, i);
		if (!charge(c, 1))
			return err_static(COST_MSG);
		if (is_err(&e))
			return e;
		if (f == F_SUM) {
			acc = i == 0 ? e : arith(c, B_ADD, &acc, &e);
			if (is_err(&acc))
				return acc;
			continue;
		}
		if (i == 0) {
			if (ordering(&e, &e) == -2)
				return no_overload();
			acc = e;
			continue;
		}
		int r = ordering(&acc, &e);
		if (r == -2)
			return no_overload();
		if (f == F_ISSORTED && r == 1)
			return mkbool(false);
		if ((f == F_MIN && r == 1) || (f == F_MAX && r == -1))
			acc = e;
		if (f == F_ISSORTED)
			acc = e;
	}
	if (f == F_ISSORTED)
		return mkbool(true);
	if (f == F_SUM && n > 0 && acc.k != V_INT && acc.k != V_UINT &&
	    acc.k != V_DOUBLE && acc.k != V_DUR)
		return no_overload();
	if (n == 0 && f == F_MIN)
		return err_static("min called on empty list");
	if (n == 0 && f == F_MAX)
		return err_static("max called on empty list");
	return acc;
}

/* The functions of kube's ip, cidr and url libraries and cel-go's
   duration and timestamp accessors: r the receiver (method: the target),
   x the nx other arguments. */
static struct val lib_call(struct ctx *c, enum fn f, bool method,
			   const struct val *r, const struct val *x, int nx)
{
	struct val v;
	struct gourl u;
	if (r->k == V_DUR && nx == 0 &&
	    (f == F_GETHOURS || f == F_GETMINUTES || f == F_GETSECONDS ||
	     f == F_GETMILLIS))
		return dur_get(f, r->i);
	switch ((int)f) { /* of the library's functions only */
	case F_ISIP:
	case F_ISCIDR:
	case F_ISURL:
		if (r->k != V_STR)
			break;
		if (f == F_ISURL)
			return mkbool(!parse_url(c, r->s.p, r->s.n, true, &u));
		return mkbool(f == F_ISIP ? ip_from(c, r->s.p, r->s.n, &v)
					  : cidr_from(c, r->s.p, r->s.n, &v));
	case F_IP:
		if (method && r->k == V_CIDR) {
			v = *r;
			v.k = V_IP;
			v.ip.bits = 0;
			return v;
		}
		if (method || r->k != V_STR)
			break;
		ip_from(c, r->s.p, r->s.n, &v);
		return v;
	case F_IP_CANON: {
		if (r->k != V_STR)
			break;
		if (!ip_from(c, r->s.p, r->s.n, &v))
			return v;
		struct val s = ip_string(c, &v);
		if (is_err(&s))
			return s;
		return mkbool(s.s.n == r->s.n && !memcmp(s.s.p, r->s.p, s.s.n));
	}
	case F_CIDR:
		if (r->k != V_STR)
			break;
		cidr_from(c, r->s.p, r->s.n, &v);
		return v;
	case F_URL: {
		if (r->k != V_STR)
			break;
		const char *why = url_from(c, r->s.p, r->s.n, &u);
		if (why)
			return err_text(
			    afmt(c,
				 "URL parse error during conversion "
				 "from string: %s",
				 why));
		return mkstr(V_URL, r->s.p, r->s.n);
	}
	case F_FAMILY:
	case F_IS_UNSPEC:
	case F_IS_LOOPBACK:
	case F_IS_LL_MCAST:
	case F_IS_LL_UCAST:
	case F_IS_GLOBAL:
		if (r->k != V_IP)
			break;
		if (f == F_FAMILY)
			return mkint(r->ip.v4 ? 4 : 6);
		if (f == F_IS_UNSPEC)
			return mkbool(ip_is_unspecified(r));
		if (f == F_IS_LOOPBACK)
			return mkbool(ip_is_loopback(r));
		if (f == F_IS_LL_UCAST)
			return mkbool(ip_is_ll_unicast(r));
		if (f == F_IS_GLOBAL)
			return mkbool(ip_is_global_unicast(r));
		/* 224.0.0.0/24, ff02::/16 (ff?2 whatever the flags) */
		return mkbool(r->ip.v4
				  ? r->ip.b[12] == 224 && r->ip.b[13] == 0 &&
					r->ip.b[14] == 0
				  : r->ip.b[0] == 0xff &&
					(r->ip.b[1] & 0x0f) == 0x02);
	case F_CONTAINS_IP:
	case F_CONTAINS_CIDR:
		if (r->k != V_CIDR)
			break;
		v = x[0];
		if (f == F_CONTAINS_IP && v.k == V_STR &&
		    !ip_from(c, x[0].s.p, x[0].s.n, &v))
			return no_overload(); /* as kube: not the parse
						 error */
		if (f == F_CONTAINS_CIDR && v.k == V_STR &&
		    !cidr_from(c, x[0].s.p, x[0].s.n, &v))
			return v;
		if (v.k != (f == F_CONTAINS_IP ? V_IP : V_CIDR))
			break;
		if (v.ip.v4 != r->ip.v4)
			return mkbool(false);
		if (f == F_CONTAINS_CIDR && r->ip.bits > v.ip.bits)
			return mkbool(false);
		return mkbool(prefix_match(r, &v, r->ip.bits));
	case F_MASKED: {
		if (r->k != V_CIDR)
			break;
		v = *r;
		int n, bits = v.ip.bits;
		unsigned char *b = v.ip.v4 ? v.ip.b + 12 : v.ip.b;
		ip_bytes(&v, &n);
		for (int i = 0; i < n; i++) {
			int keep = bits - i * 8;
			if (keep <= 0)
				b[i] = 0;
			else if (keep < 8)
				b[i] &= (unsigned char)(0xff << (8 - keep));
		}
		return v;
	}
	case F_PREFIXLEN:
		if (r->k != V_CIDR)
			break;
		return mkint(r->ip.bits);
	case F_GETSCHEME:
	case F_GETHOST:
	case F_GETHOSTNAME:
	case F_GETPORT:
	case F_GETPATH:
	case F_GETQUERY:
		if (r->k != V_URL)
			break;
		return url_method(c, f, r);
	case F_GETHOURS:
	case F_GETMINUTES:
	case F_GETSECONDS:
	case F_GETMILLIS:
	case F_GETFULLYEAR:
	case F_GETMONTH:
	case F_GETDAYOFMONTH:
	case F_GETDATE:
	case F_GETDAYOFWEEK:
	case F_GETDAYOFYEAR:
		if (r->k != V_TS || (nx == 1 && x[0].k != V_STR))
			break;
		return ts_get(c, f, r, nx == 1 ? &x[0] : NULL);
	default:
		break;
	}
	return no_overload();
}

/* ----------------------------------------------- optional values, sets */

static struct val opt_none(void)
{
	struct val v = {.k = V_OPT};
	v.opt = NULL;
	return v;
}

/* optional.of(x); an error stays the error. */
static struct val opt_of(struct ctx *c, const struct val *x)
{
	if (is_err(x))
		return *x;
	struct val *p = aalloc(c, sizeof *p);
	if (!p)
		return err_static(COST_MSG);
	*p = *x;
	struct val v = {.k = V_OPT};
	v.opt = p;
	return v;
}

/* cel-go's Zeroer: what optional.ofNonZeroValue leaves out. A list or
   map read from the object is not one (kube's unstructured values do not
   say), nor an IP, CIDR, URL or quantity. */
static bool is_zero(const struct val *v)
{
	switch (v->k) {
	case V_NULL:
		return true;
	case V_BOOL:
		return !v->b;
	case V_INT:
	case V_DUR:
		return v->i == 0;
	case V_UINT:
		return v->u == 0;
	case V_DOUBLE:
		return v->d == 0;
	case V_STR:
	case V_BYTES:
		return v->s.n == 0;
	case V_LIST:
		return !v->json && v->l.n == 0;
	case V_MAP:
		return !v->json && v->m.n == 0;
	case V_TS: /* Go's zero time, 0001-01-01T00:00:00Z */
		return v->ts.sec == TS_MIN && v->ts.ns == 0;
	case V_OPT: /* no Zeroer either: optional.of(optional.none()) */
		return false;
	case V_ERR:
	case V_UNSUP:
	case V_IP:
	case V_CIDR:
	case V_URL:
	case V_QTY:
	case V_FMT:
	case V_SEMVER:
	case V_TYPE:
		break;
	}
	return false;
}

static struct val eval_in(struct ctx *c, const struct val *x,
			  const struct val *in);
static const char *type_name(struct ctx *c, const struct val *v);
static void key_text(const struct val *k, char *buf, size_t size);

/* optional.unwrap(l), l.unwrapOpt(): the values of l's optionals. */
static struct val opt_unwrap(struct ctx *c, const struct val *l)
{
	size_t n = list_len(l), kept = 0;
	struct val out = new_list(c, n);
	if (is_err(&out))
		return out;
	for (size_t i = 0; i < n; i++) {
		struct val e = list_get(c, l, i);
		if (e.k != V_OPT) {
			char buf[128];
			key_text(&e, buf, sizeof buf);
			return is_err(&e)
				   ? e
				   : errf(c, "value %s is not optional", buf);
		}
		if (e.opt)
			out.l.items[kept++] = *e.opt;
	}
	out.l.n = kept;
	return out;
}

static struct val opt_call(struct ctx *c, enum fn f, const struct val *r,
			   const struct val *x)
{
	if (f == F_OPT_OF)
		return opt_of(c, r);
	if (f == F_OPT_NZ)
		return is_zero(r) ? opt_none() : opt_of(c, r);
	if (f == F_OPT_UNWRAP && r->k == V_LIST)
		return opt_unwrap(c, r);
	if (f == F_HASVALUE && r->k == V_OPT)
		return mkbool(r->opt != NULL);
	if (f == F_VALUE && r->k == V_OPT)
		return r->opt ? *r->opt
			      : err_static("optional.none() dereference");
	if ((f == F_FIRST || f == F_LAST) && r->k == V_LIST) {
		size_t n = list_len(r);
		if (!n)
			return opt_none();
		struct val e = list_get(c, r, f == F_FIRST ? 0 : n - 1);
		return opt_of(c, &e);
	}
	if ((f == F_SETS_CONTAINS || f == F_SETS_EQUIV ||
	     f == F_SETS_INTERSECTS) &&
	    r->k == V_LIST && x[0].k == V_LIST) {
		/* contains(a, b): every element of b is in a (equivalent:
		   and back); intersects(a, b): some element of a is in b */
		bool any = f == F_SETS_INTERSECTS;
		for (int pass = 0; pass < (f == F_SETS_EQUIV ? 2 : 1); pass++) {
			const struct val *in = pass || any ? &x[0] : r;
			const struct val *of = pass || any ? r : &x[0];
			size_t n = list_len(of);
			for (size_t i = 0; i < n; i++) {
				struct val e = list_get(c, of, i);
				struct val got = eval_in(c, &e, in);
				if (c->abort_msg)
					return err_static(c->abort_msg);
				bool yes = got.k == V_BOOL && got.b;
				if (any ? yes : !yes)
					return got; /* for contains: false,
						       or the error */
			}
		}
		return mkbool(!any);
	}
	return no_overload();
}

/* -------------------------------------------------- kube's formats */

enum fmtkind {
	FK_LABEL,
	FK_SUBDOMAIN,
	FK_DNS1035,
	FK_QNAME,
	FK_LVALUE,
	FK_URI,
	FK_STRFMT
};

/* format.<name>() (kube's ConstantFormats): what validate() checks, and
   for the kube-openapi formats the one message kube gives. */
static const struct fmtdef {
	const char *name;
	enum fmtkind k;
	bool prefix; /* a generateName prefix: a trailing '-' is masked */
	const char *strfmt, *msg;
} fmts[] = {
    {"dns1123Label", FK_LABEL, false, NULL, NULL},
    {"dns1123Subdomain", FK_SUBDOMAIN, false, NULL, NULL},
    {"dns1035Label", FK_DNS1035, false, NULL, NULL},
    {"qualifiedName", FK_QNAME, false, NULL, NULL},
    {"dns1123LabelPrefix", FK_LABEL, true, NULL, NULL},
    {"dns1123SubdomainPrefix", FK_SUBDOMAIN, true, NULL, NULL},
    {"dns1035LabelPrefix", FK_DNS1035, true, NULL, NULL},
    {"labelValue", FK_LVALUE, false, NULL, NULL},
    {"uri", FK_URI, false, NULL, NULL},
    {"uuid", FK_STRFMT, false, "uuid", "does not match the UUID format"},
    {"byte", FK_STRFMT, false, "byte", "invalid base64"},
    {"date", FK_STRFMT, false, "date", "invalid date"},
    {"datetime", FK_STRFMT, false, "datetime", "invalid datetime"},
};

static int find_fmt(const char *name, size_t n)
{
	for (size_t i = 0; i < sizeof fmts / sizeof *fmts; i++)
		if (strlen(fmts[i].name) == n && !memcmp(fmts[i].name, name, n))
			return (int)i;
	return -1;
}

/* <format>.validate(s): optional.none() when s passes, else
   optional.of(the messages), as apimachinery's validators word them. */
static struct val fmt_validate(struct ctx *c, const struct fmtdef *f,
			       const struct val *s)
{
	const char *msgs[4];
	int n = 0;
	/* a NUL-terminated copy; a NUL inside fails every pattern here, as
	   a space does */
	char *t = astr(c, s->s.n);
	if (!t)
		return err_static(COST_MSG);
	for (size_t i = 0; i < s->s.n; i++)
		t[i] = s->s.p[i] ? s->s.p[i] : ' ';
	size_t len = s->s.n;
	if (f->prefix && len > 1 && t[len - 1] == '-') {
		/* apimachinery's maskTrailingDash: name[:len-2] + "a" */
		t[len - 2] = 'a';
		t[--len] = 0;
	}
	switch (f->k) {
	case FK_LABEL:
		n = srv_name_problems(SRV_RULE_DNS_LABEL, t, msgs);
		break;
	case FK_SUBDOMAIN:
		n = srv_name_problems(SRV_RULE_DNS_SUBDOMAIN, t, msgs);
		break;
	case FK_DNS1035:
		n = srv_name_problems(SRV_RULE_DNS1035, t, msgs);
		break;
	case FK_QNAME:
		n = srv_qname_problems(t, msgs);
		break;
	case FK_LVALUE:
		n = srv_name_problems(SRV_RULE_LABEL_VALUE, t, msgs);
		break;
	case FK_URI: {
		struct gourl u;
		const char *why = parse_url(c, s->s.p, s->s.n, true, &u);
		if (c->abort_msg)
			return err_static(c->abort_msg);
		if (why)
			msgs[n++] = afmt(c, "parse %s: %s",
					 goquote(c, s->s.p, s->s.n), why);
		break;
	}
	case FK_STRFMT:
		if (memchr(s->s.p, 0, s->s.n) ||
		    !srv_schema_format_valid(f->strfmt, t))
			msgs[n++] = f->msg;
		break;
	}
	if (c->abort_msg)
		return err_static(c->abort_msg);
	if (!n)
		return opt_none();
	struct val l = new_list(c, (size_t)n);
	if (is_err(&l))
		return l;
	for (int i = 0; i < n; i++)
		l.l.items[i] = mkstr(V_STR, msgs[i], strlen(msgs[i]));
	return opt_of(c, &l);
}

/* -------------------------------------------------- kube's quantities */

static struct val mkqty(struct ctx *c, const struct srv_qty *q, bool ptr)
{
	struct srv_qty *p = aalloc(c, sizeof *p);
	if (!p)
		return err_static(COST_MSG);
	*p = *q;
	struct val v = {.k = V_QTY, .qptr = ptr};
	v.q = p;
	return v;
}

static struct val qty_call(struct ctx *c, enum fn f, const struct val *r,
			   const struct val *x)
{
	struct srv_qty q, o;
	int64_t i;
	if (f == F_QUANTITY || f == F_ISQUANTITY) {
		if (r->k != V_STR)
			return no_overload();
		const char *why = srv_qty_parse(r->s.p, r->s.n, &q);
		if (f == F_ISQUANTITY)
			return mkbool(!why);
		return why ? err_static(why) : mkqty(c, &q, false);
	}
	if (r->k != V_QTY)
		return no_overload();
	if (f == F_SIGN)
		return mkint(srv_qty_sign(r->q));
	if (f == F_ISINTEGER)
		return mkbool(srv_qty_to_int(r->q, &i));
	if (f == F_ASINTEGER)
		return srv_qty_to_int(r->q, &i)
			   ? mkint(i)
			   : err_static("cannot convert value to integer");
	if (f == F_ASFLOAT)
		return mkdouble(srv_qty_to_double(r->q));
	if ((f == F_QADD || f == F_QSUB) &&
	    (x[0].k == V_INT || x[0].k == V_QTY)) {
		if (x[0].k == V_INT)
			srv_qty_from_int(x[0].i, &o);
		else
			o = *x[0].q;
		if (!srv_qty_add(r->q, &o, f == F_QSUB, &q))
			return err_static(SRV_QTY_ERR_DIGITS);
		return mkqty(c, &q, true);
	}
	if ((f == F_QLT || f == F_QGT || f == F_QCMP) && x[0].k == V_QTY) {
		int cmp = srv_qty_cmp(r->q, x[0].q);
		if (f == F_QCMP)
			return mkint(cmp);
		return mkbool(f == F_QLT ? cmp < 0 : cmp > 0);
	}
	return no_overload();
}

/* cel-go's strings.quote: in double quotes, with backslash escapes for
   \a \b \f \n \r \t \v, the backslash and the quote; a byte that starts
   no UTF-8 sequence becomes U+FFFD. */
static struct val str_quote(struct ctx *c, const struct val *r)
{
	char *out = astr(c, 3 * r->s.n + 2);
	if (!out)
		return err_static(COST_MSG);
	size_t o = 0;
	out[o++] = '"';
	for (size_t i = 0; i < r->s.n;) {
		const unsigned char *p = (const unsigned char *)r->s.p + i;
		size_t w = reg_utf8_seq(p, r->s.n - i);
		const char *esc = NULL;
		switch (*p) {
		case '\a':
			esc = "\\a";
			break;
		case '\b':
			esc = "\\b";
			break;
		case '\f':
			esc = "\\f";
			break;
		case '\n':
			esc = "\\n";
			break;
		case '\r':
			esc = "\\r";
			break;
		case '\t':
			esc = "\\t";
			break;
		case '\v':
			esc = "\\v";
			break;
		case '\\':
			esc = "\\\\";
			break;
		case '"':
			esc = "\\\"";
			break;
		default:
			break;
		}
		if (esc) {
			memcpy(out + o, esc, 2);
			o += 2;
			i++;
		} else if (!w) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		} else {
			memcpy(out + o, p, w);
			o += w;
			i += w;
		}
	}
	out[o++] = '"';
	return mkstr(V_STR, out, o);
}

/* ------------------------------------------------- kube's semvers */

/* semver(s), semver(s, normalize), isSemver(s), isSemver(s, normalize),
   and the methods of a semver. */
static struct val semver_call(struct ctx *c, enum fn f, const struct val *r,
			      const struct val *x, int nx)
{
	if (f == F_SEMVER || f == F_ISSEMVER) {
		if (r->k != V_STR || (nx && x[0].k != V_BOOL))
			return no_overload();
		struct srv_semver v;
		char why[256];
		const char *bad;
		if (nx && x[0].b) {
			char *text = astr(c, r->s.n + 5);
			size_t len;
			if (!text)
				return err_static(COST_MSG);
			bad = srv_semver_parse_normalized(
			    r->s.p, r->s.n, text, &len, &v, why, sizeof why);
		} else {
			bad = srv_semver_parse(r->s.p, r->s.n, &v, why,
					       sizeof why);
		}
		if (f == F_ISSEMVER)
			return mkbool(!bad);
		if (bad)
			return errf(c, "%s", bad);
		struct srv_semver *p = aalloc(c, sizeof *p);
		if (!p)
			return err_static(COST_MSG);
		*p = v;
		struct val out = {.k = V_SEMVER};
		out.sv = p;
		return out;
	}
	if (r->k != V_SEMVER)
		return no_overload();
	if (f == F_MAJOR || f == F_MINOR || f == F_PATCH) {
		/* Go's types.Int(v.Major) of a uint64: wraps past int64 */
		uint64_t u = f == F_MAJOR   ? r->sv->major
			     : f == F_MINOR ? r->sv->minor
					    : r->sv->patch;
		return mkint((int64_t)u);
	}
	if (nx != 1 || x[0].k != V_SEMVER)
		return no_overload();
	int cmp = srv_semver_cmp(r->sv, x[0].sv);
	if (f == F_QCMP)
		return mkint(cmp);
	return mkbool(f == F_QLT ? cmp < 0 : cmp > 0);
}

static struct val fmt_call(struct ctx *c, const struct node *n, enum fn f,
			   const struct val *r, const struct val *x)
{
	struct val v = {.k = V_FMT};
	if (f == F_FMT) {
		v.i = n->lit.i;
		return v;
	}
	if (f == F_FMT_NAMED && r->k == V_STR) {
		int i = find_fmt(r->s.p, r->s.n);
		if (i < 0)
			return opt_none();
		v.i = i;
		return opt_of(c, &v);
	}
	if (f == F_VALIDATE && r->k == V_FMT && x[0].k == V_STR)
		return fmt_validate(c, &fmts[r->i], &x[0]);
	return no_overload();
}

/* ------------------------------------------ cel-go's string.format */

/* cel-go's (ext/formatting.go, the formatter kube 1.33's strings library
   v2 runs) "...".format([args]): %s, %d, %f and %e (with a precision,
   as x/text prints a float for en_US: 1,234.500000, 3.140000×10⁰⁰),
   %b, %x, %X, %o; %% is a percent sign. */

/* The text format() builds, on the heap while it grows. */
struct sbuf {
	char *p;
	size_t n, cap;
	bool full; /* out of memory, or past the arena's limit */
};

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	if (b->full || !n)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *p = cap > ARENA_LIMIT ? NULL : realloc(b->p, cap);
		if (!p) {
			b->full = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

/* A clause after its '%': the verb, the precision given (-1: none) and
   the bytes it takes. */
struct fmt_clause {
	unsigned char verb;
	int64_t prec;
	size_t len;
};

/* What each verb takes, in cel-go's words: its runtime error adds ", was
   given <type>", its compile-time check (fmt_arg_fits) says it as is. */
static const char *fmt_verb_why(unsigned char verb)
{
	switch (verb) {
	case 's':
		return "string clause can only be used on strings, bools, "
		       "bytes, ints, doubles, maps, lists, types, durations, "
		       "and timestamps";
	case 'd':
		return "decimal clause can only be used on integers";
	case 'o':
		return "octal clause can only be used on integers";
	case 'f':
		return "fixed-point clause can only be used on doubles";
	case 'e':
		return "scientific clause can only be used on doubles";
	case 'b':
		return "only integers and bools can be formatted as binary";
	default: /* x, X */
		return "only integers, byte buffers, and strings can be "
		       "formatted as hex";
	}
}

/* Parse the clause at s[0..n) (n >= 1), or put cel-go's error into msg. */
static bool fmt_clause_parse(const char *s, size_t n, struct fmt_clause *cl,
			     char *msg, size_t size)
{
	static const char pre[] = "could not parse formatting clause: ";
	size_t i = 0;
	cl->prec = -1;
	if (s[0] == '.') {
		uint64_t v = 0;
		bool big = false;
		for (i = 1;; i++) {
			if (i >= n) {
				snprintf(
				    msg, size,
				    "%serror while parsing precision: could "
				    "not find end of precision specifier",
				    pre);
				return false;
			}
			if (s[i] < '0' || s[i] > '9')
				break;
			v = v * 10 + (uint64_t)(s[i] - '0');
			big = big || v > INT64_MAX / 10;
		}
		if (i == 1 || big) {
			snprintf(
			    msg, size,
			    "%serror while parsing precision: error while "
			    "converting precision to integer: strconv.Atoi: "
			    "parsing \"%.*s\": %s",
			    pre, (int)(i - 1 > 64 ? 64 : i - 1), s + 1,
			    i == 1 ? "invalid syntax" : "value out of range");
			return false;
		}
		cl->prec = (int64_t)v;
	}
	cl->verb = (unsigned char)s[i];
	cl->len = i + 1;
	if (!strchr("sdfebxXo", cl->verb) || !cl->verb) {
		/* Go's %c of the byte read as a rune */
		char r[4] = {(char)cl->verb, 0};
		if (cl->verb >= 0x80) {
			r[0] = (char)(0xc0 | cl->verb >> 6);
			r[1] = (char)(0x80 | (cl->verb & 0x3f));
		}
		snprintf(msg, size, "%sunrecognized formatting clause \"%s\"",
			 pre, r);
		return false;
	}
	return true;
}

static const struct val FMT_OK = {.k = V_NULL};

#define FMT_DURING "error during formatting: "

/* cel-go's error for a value the clause's verb does not take. */
static struct val fmt_wrong(struct ctx *c, unsigned char verb,
			    const struct val *v)
{
	return errf(c, FMT_DURING "%s, was given %s", fmt_verb_why(verb),
		    type_name(c, v));
}

static struct val fmt_string(struct ctx *c, struct sbuf *b,
			     const struct val *v);

/* An integer's sign and magnitude; false for anything else. */
static bool int_parts(const struct val *v, bool *neg, uint64_t *m)
{
	if (v->k == V_INT) {
		*neg = v->i < 0;
		*m = *neg ? (uint64_t)0 - (uint64_t)v->i : (uint64_t)v->i;
		return true;
	}
	if (v->k == V_UINT) {
		*neg = false;
		*m = v->u;
		return true;
	}
	return false;
}

/* Go's %d, %b, %o, %x of an integer: a sign, then the magnitude. */
static void sb_int(struct sbuf *b, bool neg, uint64_t m, unsigned base,
		   bool upper)
{
	const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char buf[72];
	size_t i = sizeof buf;
	do {
		buf[--i] = dig[m % base];
		m /= base;
	} while (m);
	if (neg)
		buf[--i] = '-';
	sb_put(b, buf + i, sizeof buf - i);
}

/* A value inside a list or map, as cel-go's clauseForType and
   quoteForCEL write it: a CEL literal. */
static struct val fmt_member(struct ctx *c, struct sbuf *b, const struct val *v)
{
	bool neg;
	uint64_t m;
	if (int_parts(v, &neg, &m)) {
		sb_int(b, neg, m, 10, false);
		return FMT_OK;
	}
	if (v->k == V_STR || v->k == V_BYTES) {
		if (v->k == V_BYTES)
			sb_put(b, "b", 1);
		sb_str(b, goquote(c, v->s.p, v->s.n));
		return FMT_OK;
	}
	if (v->k == V_DOUBLE) {
		/* Go's %.6f; an infinity or NaN quoted */
		char buf[400];
		if (isnan(v->d))
			sb_str(b, "\"NaN\"");
		else if (isinf(v->d))
			sb_str(b, v->d > 0 ? "\"+Inf\"" : "\"-Inf\"");
		else {
			snprintf(buf, sizeof buf, "%.6f", v->d);
			sb_str(b, buf);
		}
		return FMT_OK;
	}
	if (v->k == V_DUR || v->k == V_TS) {
		struct val s = v->k == V_DUR ? fmt_dur(c, v->i) : fmt_ts(c, v);
		sb_str(b, v->k == V_DUR ? "duration(\"" : "timestamp(\"");
		sb_put(b, s.s.p, s.s.n);
		sb_str(b, "\")");
		return FMT_OK;
	}
	if (v->k == V_BOOL || v->k == V_NULL || v->k == V_TYPE ||
	    v->k == V_LIST || v->k == V_MAP)
		return fmt_string(c, b, v);
	return errf(c, FMT_DURING "no formatting function for %s",
		    type_name(c, v));
}

static struct val fmt_list(struct ctx *c, struct sbuf *b, const struct val *l)
{
	size_t n = list_len(l);
	sb_put(b, "[", 1);
	for (size_t i = 0; i < n && !b->full; i++) {
		struct val e = list_get(c, l, i);
		if (is_err(&e))
			return e;
		if (i)
			sb_put(b, ", ", 2);
		struct val rc = fmt_member(c, b, &e);
		if (is_err(&rc))
			return rc;
	}
	sb_put(b, "]", 1);
	return FMT_OK;
}

struct fmt_pair {
	char *key, *val;
	size_t klen, vlen;
};

static int fmt_pair_cmp(const void *a, const void *b)
{
	const struct fmt_pair *x = a, *y = b;
	size_t n = x->klen < y->klen ? x->klen : y->klen;
	int d = memcmp(x->key, y->key, n);
	return d ? d : (x->klen > y->klen) - (x->klen < y->klen);
}

/* A member into the arena: its text as fmt_member writes it. */
static struct val fmt_piece(struct ctx *c, const struct val *v, bool key,
			    char **out, size_t *len)
{
	struct sbuf t = {0};
	struct val rc = FMT_OK;
	if (key && v->k != V_STR && v->k != V_BOOL && v->k != V_INT &&
	    v->k != V_UINT)
		rc = errf(c,
			  FMT_DURING
			  "no formatting function for map key of type %s",
			  type_name(c, v));
	else
		rc = fmt_member(c, &t, v);
	if (!is_err(&rc) && t.full)
		rc = err_static(COST_MSG);
	if (!is_err(&rc)) {
		*out = astr(c, t.n);
		if (!*out)
			rc = err_static(COST_MSG);
		else if (t.n)
			memcpy(*out, t.p, t.n);
		*len = t.n;
	}
	free(t.p);
	return rc;
}

/* {key:value, ...} in byte order of the keys written */
static struct val fmt_map(struct ctx *c, struct sbuf *b, const struct val *m)
{
	struct val *keys;
	size_t n;
	if (!map_keys(c, m, &keys, &n))
		return err_static(COST_MSG);
	struct fmt_pair *p = aalloc(c, (n ? n : 1) * sizeof *p);
	if (!p)
		return err_static(COST_MSG);
	for (size_t i = 0; i < n; i++) {
		struct val v;
		int f = map_find(c, m, &keys[i], &v);
		if (f < 0)
			return v;
		if (f == 0)
			return err_static("no such key");
		struct val rc =
		    fmt_piece(c, &keys[i], true, &p[i].key, &p[i].klen);
		if (!is_err(&rc))
			rc = fmt_piece(c, &v, false, &p[i].val, &p[i].vlen);
		if (is_err(&rc))
			return rc;
	}
	qsort(p, n, sizeof *p, fmt_pair_cmp);
	sb_put(b, "{", 1);
	for (size_t i = 0; i < n; i++) {
		if (i)
			sb_put(b, ", ", 2);
		sb_put(b, p[i].key, p[i].klen);
		sb_put(b, ":", 1);
		sb_put(b, p[i].val, p[i].vlen);
	}
	sb_put(b, "}", 1);
	return FMT_OK;
}

/* %s: cel-go's FormatString */
static struct val fmt_string(struct ctx *c, struct sbuf *b, const struct val *v)
{
	if (v->k == V_LIST)
		return fmt_list(c, b, v);
	if (v->k == V_MAP)
		return fmt_map(c, b, v);
	if (v->k == V_NULL || v->k == V_TYPE) {
		if (v->k == V_NULL)
			sb_str(b, "null");
		else
			sb_put(b, v->s.p, v->s.n);
		return FMT_OK;
	}
	if (v->k == V_INT || v->k == V_UINT || v->k == V_DOUBLE ||
	    v->k == V_BOOL || v->k == V_STR || v->k == V_TS ||
	    v->k == V_BYTES || v->k == V_DUR) {
		struct val s = conv(c, F_STRING, v);
		if (is_err(&s))
			return s;
		sb_put(b, s.s.p, s.s.n);
		return FMT_OK;
	}
	return fmt_wrong(c, 's', v);
}

/* %f and %e: x/text's printer for en_US, which groups the integer part
   of %f in threes and writes %e's exponent as ×10 and superscript digits
   (at least two). Its rounding is strconv's, as C's printf. */
static struct val fmt_float(struct ctx *c, struct sbuf *b, const struct val *v,
			    const struct fmt_clause *cl)
{
	bool sci = cl->verb == 'e';
	double d;
	if (v->k == V_DOUBLE)
		d = v->d;
	else if (v->k == V_STR && v->s.n == 3 && !memcmp(v->s.p, "NaN", 3))
		d = NAN;
	else if (v->k == V_STR && v->s.n == 8 && !memcmp(v->s.p, "Infinity", 8))
		d = INFINITY;
	else if (v->k == V_STR && v->s.n == 9 &&
		 !memcmp(v->s.p, "-Infinity", 9))
		d = -INFINITY;
	else
		return fmt_wrong(c, cl->verb, v);
	if (isnan(d)) {
		sb_str(b, "NaN");
		return FMT_OK;
	}
	if (d < 0)
		sb_put(b, "-", 1);
	if (isinf(d)) {
		sb_str(b, "\u221e");
		return FMT_OK;
	}
	int64_t prec = cl->prec < 0 ? 6 : cl->prec;
	if (prec > 4096)
		return err_static(COST_MSG);
	size_t cap = (size_t)prec + 400;
	char *num = astr(c, cap);
	if (!num)
		return err_static(COST_MSG);
	snprintf(num, cap, sci ? "%.*e" : "%.*f", (int)prec, fabs(d));
	if (sci) {
		static const char *const sup[] = {
		    "\u2070", "\u00b9", "\u00b2", "\u00b3", "\u2074",
		    "\u2075", "\u2076", "\u2077", "\u2078", "\u2079"};
		char *e = strchr(num, 'e');
		if (!e)
			return err_static(COST_MSG);
		sb_put(b, num, (size_t)(e - num));
		sb_str(b, "\u00d710");
		if (e[1] == '-')
			sb_str(b, "\u207b");
		const char *x = e + 2;
		while (x[0] == '0' && x[1] && x[2]) /* keep two digits */
			x++;
		for (; *x; x++)
			sb_str(b, sup[*x - '0']);
		return FMT_OK;
	}
	const char *dot = strchr(num, '.');
	size_t il = dot ? (size_t)(dot - num) : strlen(num);
	for (size_t i = 0; i < il; i++) {
		sb_put(b, num + i, 1);
		if (i + 1 < il && (il - i - 1) % 3 == 0)
			sb_put(b, ",", 1);
	}
	if (dot)
		sb_str(b, dot);
	return FMT_OK;
}

static struct val fmt_clause_run(struct ctx *c, struct sbuf *b,
				 const struct fmt_clause *cl,
				 const struct val *v)
{
	bool neg;
	uint64_t m;
	bool isint = int_parts(v, &neg, &m);
	switch (cl->verb) {
	case 's':
		return fmt_string(c, b, v);
	case 'd':
	case 'o':
		if (!isint)
			return fmt_wrong(c, cl->verb, v);
		sb_int(b, neg, m, cl->verb == 'd' ? 10 : 8, false);
		return FMT_OK;
	case 'f':
	case 'e':
		return fmt_float(c, b, v, cl);
	case 'b':
		if (v->k == V_BOOL)
			sb_str(b, v->b ? "1" : "0");
		else if (isint)
			sb_int(b, neg, m, 2, false);
		else
			return fmt_wrong(c, 'b', v);
		return FMT_OK;
	default: /* x, X */
		if (isint) {
			sb_int(b, neg, m, 16, cl->verb == 'X');
		} else if (v->k == V_STR || v->k == V_BYTES) {
			const char *dig = cl->verb == 'X' ? "0123456789ABCDEF"
							  : "0123456789abcdef";
			for (size_t i = 0; i < v->s.n && !b->full; i++) {
				unsigned char ch = (unsigned char)v->s.p[i];
				char h[2] = {dig[ch >> 4], dig[ch & 15]};
				sb_put(b, h, 2);
			}
		} else {
			return fmt_wrong(c, cl->verb, v);
		}
		return FMT_OK;
	}
}

static struct val str_format(struct ctx *c, const struct val *f,
			     const struct val *args)
{
	const char *s = f->s.p;
	size_t n = f->s.n, i = 0, argi = 0, nargs = list_len(args);
	struct sbuf b = {0};
	struct val rc = FMT_OK;
	while (i < n && !is_err(&rc) && !b.full) {
		if (s[i] != '%') {
			size_t j = i;
			while (j < n && s[j] != '%')
				j++;
			sb_put(&b, s + i, j - i);
			i = j;
			continue;
		}
		if (i + 1 < n && s[i + 1] == '%') {
			sb_put(&b, "%", 1);
			i += 2;
			continue;
		}
		if (argi >= nargs) {
			rc = errf(c, "index %zu out of range", argi);
			break;
		}
		if (i + 1 >= n) {
			rc = err_static("unexpected end of string");
			break;
		}
		struct fmt_clause cl;
		char msg[256];
		if (!fmt_clause_parse(s + i + 1, n - i - 1, &cl, msg,
				      sizeof msg)) {
			rc = errf(c, "%s", msg);
			break;
		}
		struct val a = list_get(c, args, argi);
		rc = is_err(&a) ? a : fmt_clause_run(c, &b, &cl, &a);
		i += 1 + cl.len;
		argi++;
	}
	char *out = NULL;
	if (!is_err(&rc) && !b.full && (out = astr(c, b.n)) && b.n)
		memcpy(out, b.p, b.n);
	free(b.p);
	if (is_err(&rc))
		return rc;
	if (!out)
		return err_static(COST_MSG);
	charge(c, b.n / 16);
	return mkstr(V_STR, out, b.n);
}

static struct val call(struct ctx *c, const struct node *n, const struct val *t,
		       const struct val *a, int na)
{
	enum fn f = (enum fn)n->op;
	if (!t && !na) /* optional.none(), format.<name>() */
		return f == F_OPT_NONE ? opt_none()
				       : fmt_call(c, n, f, NULL, NULL);
	/* the receiver: the target of a method call, else the first
	   argument of a global one */
	const struct val *r = t ? t : &a[0];
	const struct val *x = t ? a : a + 1; /* the other arguments */
	int nx = t ? na : na - 1;
	/* string functions walk their receiver (code points, searches) */
	if (r->k == V_STR || r->k == V_BYTES)
		charge(c, r->s.n / 16);
	switch (f) {
	case F_SIZE:
		if (r->k == V_STR)
			return mkint(utf8_count(r->s.p, r->s.n));
		if (r->k == V_BYTES)
			return mkint((int64_t)r->s.n);
		if (r->k == V_LIST)
			return mkint((int64_t)list_len(r));
		if (r->k == V_MAP)
			return mkint((int64_t)map_len(r));
		break;
	case F_CONTAINS:
	case F_STARTS:
	case F_ENDS:
		if (r->k != V_STR || x[0].k != V_STR)
			break;
		charge(c, r->s.n / 16);
		if (x[0].s.n > r->s.n)
			return mkbool(false);
		if (f == F_STARTS)
			return mkbool(!memcmp(r->s.p, x[0].s.p, x[0].s.n));
		if (f == F_ENDS)
			return mkbool(!memcmp(r->s.p + r->s.n - x[0].s.n,
					      x[0].s.p, x[0].s.n));
		return mkbool(find_sub(r->s.p, r->s.n, x[0].s.p, x[0].s.n, 0) >=
			      0);
	case F_MATCHES:
		return do_matches(c, n, r, &x[0]);
	case F_FIND:
	case F_FINDALL:
		if (r->k != V_STR || x[0].k != V_STR ||
		    (nx == 2 && x[1].k != V_INT))
			break;
		return do_find(c, n, r, &x[0], f == F_FINDALL,
			       nx == 2 ? x[1].i : -1);
	case F_LOWER:
	case F_UPPER:
		if (r->k != V_STR)
			break;
		return str_case(c, r, f == F_UPPER);
	case F_TRIM:
		if (r->k != V_STR)
			break;
		return str_trim(r);
	case F_SPLIT:
		if (r->k != V_STR || x[0].k != V_STR ||
		    (nx == 2 && x[1].k != V_INT))
			break;
		return str_split(c, r, &x[0], nx == 2 ? x[1].i : -1);
	case F_JOIN: {
		if (r->k != V_LIST || (nx == 1 && x[0].k != V_STR))
			break;
		size_t ln = list_len(r), total = 0, sn = nx ? x[0].s.n : 0;
		for (size_t i = 0; i < ln; i++) {
			struct val e = list_get(c, r, i);
			if (e.k != V_STR)
				return is_err(&e) ? e : no_overload();
			total += e.s.n + (i ? sn : 0);
			if (total > ARENA_LIMIT)
				return err_static(COST_MSG);
		}
		char *p = astr(c, total);
		if (!p)
			return err_static(COST_MSG);
		size_t o = 0;
		for (size_t i = 0; i < ln; i++) {
			struct val e = list_get(c, r, i);
			if (i && sn)
				memcpy(p + o, x[0].s.p, sn), o += sn;
			memcpy(p + o, e.s.p, e.s.n);
			o += e.s.n;
		}
		return mkstr(V_STR, p, total);
	}
	case F_INDEXOF:
	case F_LASTINDEXOF:
		if (r->k == V_LIST && nx == 1)
			return list_index_of(c, r, &x[0], f == F_LASTINDEXOF);
		if (r->k != V_STR || x[0].k != V_STR ||
		    (nx == 2 && x[1].k != V_INT))
			break;
		return str_index_of(c, r, &x[0], nx == 2 ? &x[1] : NULL,
				    f == F_LASTINDEXOF);
	case F_REPLACE:
		if (r->k != V_STR || x[0].k != V_STR || x[1].k != V_STR ||
		    (nx == 3 && x[2].k != V_INT))
			break;
		return str_replace(c, r, &x[0], &x[1], nx == 3 ? x[2].i : -1);
	case F_SUBSTRING: {
		if (r->k != V_STR || x[0].k != V_INT ||
		    (nx == 2 && x[1].k != V_INT))
			break;
		int64_t len = utf8_count(r->s.p, r->s.n);
		int64_t st = x[0].i, en = nx == 2 ? x[1].i : len;
		if (nx == 2 && st > en)
			return errf(c,
				    "invalid substring range. start: %" PRId64
				    ", end: %" PRId64,
				    st, en);
		if (st < 0 || st > len)
			return index_range(c, st);
		if (en < 0 || en > len)
			return index_range(c, en);
		size_t b = utf8_off(r->s.p, r->s.n, st);
		size_t e = utf8_off(r->s.p, r->s.n, en);
		return mkstr(V_STR, r->s.p + b, e - b);
	}
	case F_CHARAT: {
		if (r->k != V_STR || x[0].k != V_INT)
			break;
		int64_t len = utf8_count(r->s.p, r->s.n);
		if (x[0].i < 0 || x[0].i > len)
			return index_range(c, x[0].i);
		size_t b = utf8_off(r->s.p, r->s.n, x[0].i);
		size_t e = utf8_off(r->s.p + b, r->s.n - b, 1) + b;
		return mkstr(V_STR, r->s.p + b, e - b);
	}
	case F_INT:
	case F_UINT:
	case F_DOUBLE:
	case F_STRING:
	case F_BOOL:
	case F_BYTES:
	case F_DYN:
	case F_DURATION:
	case F_TIMESTAMP:
		return conv(c, f, r);
	case F_ISSORTED:
	case F_SUM:
	case F_MIN:
	case F_MAX:
		if (r->k != V_LIST)
			break;
		return list_fold(c, f, r);
	case F_ISIP:
	case F_IP:
	case F_IP_CANON:
	case F_FAMILY:
	case F_IS_UNSPEC:
	case F_IS_LOOPBACK:
	case F_IS_LL_MCAST:
	case F_IS_LL_UCAST:
	case F_IS_GLOBAL:
	case F_ISCIDR:
	case F_CIDR:
	case F_CONTAINS_IP:
	case F_CONTAINS_CIDR:
	case F_MASKED:
	case F_PREFIXLEN:
	case F_ISURL:
	case F_URL:
	case F_GETSCHEME:
	case F_GETHOST:
	case F_GETHOSTNAME:
	case F_GETPORT:
	case F_GETPATH:
	case F_GETQUERY:
	case F_GETFULLYEAR:
	case F_GETMONTH:
	case F_GETDAYOFMONTH:
	case F_GETDATE:
	case F_GETDAYOFWEEK:
	case F_GETDAYOFYEAR:
	case F_GETHOURS:
	case F_GETMINUTES:
	case F_GETSECONDS:
	case F_GETMILLIS:
		return lib_call(c, f, t != NULL, r, x, nx);
	case F_OPT_OF:
	case F_OPT_NZ:
	case F_OPT_UNWRAP:
	case F_HASVALUE:
	case F_VALUE:
	case F_FIRST:
	case F_LAST:
	case F_SETS_CONTAINS:
	case F_SETS_EQUIV:
	case F_SETS_INTERSECTS:
		return opt_call(c, f, r, x);
	case F_OPT_NONE:
		return opt_none();
	case F_OR:
	case F_ORVALUE: /* eval_call's */
		break;
	case F_FMT_NAMED:
	case F_FMT:
	case F_VALIDATE:
		return fmt_call(c, n, f, r, x);
	case F_QUANTITY:
	case F_ISQUANTITY:
	case F_SIGN:
	case F_ISINTEGER:
	case F_ASINTEGER:
	case F_ASFLOAT:
	case F_QADD:
	case F_QSUB:
	case F_QLT:
	case F_QGT:
	case F_QCMP:
		if (r->k == V_SEMVER)
			return semver_call(c, f, r, x, nx);
		return qty_call(c, f, r, x);
	case F_SEMVER:
	case F_ISSEMVER:
	case F_MAJOR:
	case F_MINOR:
	case F_PATCH:
		return semver_call(c, f, r, x, nx);
	case F_TYPE: {
		const char *tn = type_name(c, r);
		return mkstr(V_TYPE, tn, strlen(tn));
	}
	case F_QUOTE:
		return r->k == V_STR ? str_quote(c, r) : no_overload();
	case F_FORMAT:
		if (r->k != V_STR || x[0].k != V_LIST)
			break;
		return str_format(c, r, &x[0]);
	}
	return no_overload();
}

/* --------------------------------------------------------- evaluation */

static struct val ev(struct ctx *c, const struct node *n);

static struct val eval_and_or(struct ctx *c, const struct node *n, bool is_and)
{
	struct val l = ev(c, n->a);
	if (c->abort_msg)
		return l;
	/* and: false absorbs; or: true absorbs */
	if (l.k == V_BOOL && l.b != is_and)
		return l;
	struct val r = ev(c, n->b);
	if (c->abort_msg)
		return r;
	if (r.k == V_BOOL && r.b != is_and)
		return r;
	if (l.k == V_BOOL && r.k == V_BOOL)
		return l;
	if (is_err(&l))
		return l;
	if (is_err(&r))
		return r;
	return no_overload();
}

/* A map key as cel-go prints it (%v), into buf. */
static void key_text(const struct val *k, char *buf, size_t size)
{
	switch (k->k) {
	case V_STR:
		snprintf(buf, size, "%.*s", k->s.n > 100 ? 100 : (int)k->s.n,
			 k->s.p);
		return;
	case V_INT:
		snprintf(buf, size, "%" PRId64, k->i);
		return;
	case V_UINT:
		snprintf(buf, size, "%" PRIu64, k->u);
		return;
	case V_BOOL:
		snprintf(buf, size, "%s", k->b ? "true" : "false");
		return;
	case V_DOUBLE:
		snprintf(buf, size, "%g", k->d);
		return;
	case V_ERR:
	case V_UNSUP:
	case V_NULL:
	case V_BYTES:
	case V_LIST:
	case V_MAP:
	case V_DUR:
	case V_TS:
	case V_IP:
	case V_CIDR:
	case V_URL:
	case V_OPT:
	case V_QTY:
	case V_FMT:
	case V_SEMVER:
	case V_TYPE:
		break;
	}
	snprintf(buf, size, "?");
}

/* The name of v's type, as cel-go's type() gives it: an object the
   schema declares with fields is kube's object type, which no type name
   equals; an error has none. */
static const char *type_name(struct ctx *c, const struct val *v)
{
	static const char *const names[] = {
	    [V_NULL] = "null_type",
	    [V_BOOL] = "bool",
	    [V_INT] = "int",
	    [V_UINT] = "uint",
	    [V_DOUBLE] = "double",
	    [V_STR] = "string",
	    [V_BYTES] = "bytes",
	    [V_LIST] = "list",
	    [V_MAP] = "map",
	    [V_DUR] = "google.protobuf.Duration",
	    [V_TS] = "google.protobuf.Timestamp",
	    [V_IP] = "net.IP",
	    [V_CIDR] = "net.CIDR",
	    [V_URL] = "kubernetes.URL",
	    [V_OPT] = "optional_type",
	    [V_QTY] = "kubernetes.Quantity",
	    [V_FMT] = "kubernetes.NamedFormat",
	    [V_SEMVER] = "kubernetes.Semver",
	    [V_TYPE] = "type"};
	if (v->k == V_MAP && v->json && stype(c, v->js.node) == CEL_S_OBJECT)
		return "object";
	return names[v->k] ? names[v->k] : "dyn";
}

static struct val key_err(struct ctx *c, const struct val *k)
{
	char buf[128];
	key_text(k, buf, sizeof buf);
	return errf(c, "no such key: %s", buf);
}

static struct val eval_index(struct ctx *c, const struct val *a,
			     const struct val *k)
{
	if (a->k == V_LIST) {
		size_t len = list_len(a);
		int64_t i;
		if (k->k == V_INT)
			i = k->i;
		else if (k->k == V_UINT && !a->json && k->u <= INT64_MAX)
			i = (int64_t)k->u;
		else if (k->k == V_DOUBLE && !a->json && k->d == dtrunc(k->d) &&
			 k->d > -9e18 && k->d < 9e18)
			i = (int64_t)k->d;
		else
			return errf(c, "unsupported index type");
		if (i < 0 || (uint64_t)i >= len) {
			if (a->json)
				return errf(c, "index out of bounds: %" PRId64,
					    i);
			return errf(c,
				    "index '%" PRId64
				    "' out of range in list size '%zu'",
				    i, len);
		}
		return list_get(c, a, (size_t)i);
	}
	if (a->k == V_MAP) {
		struct val v;
		int r = map_find(c, a, k, &v);
		if (r < 0)
			return v;
		if (!r)
			return key_err(c, k);
		return v;
	}
	return no_overload();
}

/* a.?f, a[?k], and a selection or index of an optional: optional.of the
   value when a (or the optional's value) has it, else optional.none(),
   as cel-go's QualifyIfPresent: a value that is neither a map nor a list
   has nothing. */
static struct val opt_index(struct ctx *c, const struct val *a,
			    const struct val *k)
{
	if (a->k == V_OPT) {
		if (!a->opt)
			return *a;
		a = a->opt;
	}
	struct val v;
	if (a->k == V_MAP) {
		int r = map_find(c, a, k, &v);
		if (r < 0)
			return v;
		return r ? opt_of(c, &v) : opt_none();
	}
	if (a->k == V_LIST) {
		int64_t i;
		if (k->k == V_INT)
			i = k->i;
		else if (k->k == V_UINT && k->u <= INT64_MAX)
			i = (int64_t)k->u;
		else if (k->k == V_DOUBLE && k->d == dtrunc(k->d) &&
			 k->d > -9e18 && k->d < 9e18)
			i = (int64_t)k->d;
		else if (k->k == V_UINT || k->k == V_DOUBLE) {
			char buf[128];
			key_text(k, buf, sizeof buf);
			return errf(c, "unsupported index value %s in list",
				    buf);
		} else {
			return errf(c, "unsupported index type '%s' in list",
				    type_name(c, k));
		}
		if (i < 0 || (uint64_t)i >= list_len(a))
			return opt_none();
		v = list_get(c, a, (size_t)i);
		return opt_of(c, &v);
	}
	return opt_none();
}

static struct val eval_in(struct ctx *c, const struct val *x,
			  const struct val *in)
{
	if (in->k == V_LIST) {
		size_t n = list_len(in);
		struct val first = {.k = V_NULL};
		bool have_err = false;
		for (size_t i = 0; i < n; i++) {
			struct val e = list_get(c, in, i), err;
			if (!charge(c, 1))
				return err_static(COST_MSG);
			int r = eqv(c, &e, x, &err, 0);
			if (r == 1)
				return mkbool(true);
			if (r < 0 && !have_err)
				first = err, have_err = true;
		}
		return have_err ? first : mkbool(false);
	}
	if (in->k == V_MAP) {
		struct val v;
		int r = map_find(c, in, x, &v);
		if (r < 0)
			return v;
		return mkbool(r == 1);
	}
	return no_overload();
}

static struct val eval_bin(struct ctx *c, const struct node *n)
{
	struct val a = ev(c, n->a);
	if (is_err(&a) || c->abort_msg)
		return a;
	struct val b = ev(c, n->b);
	if (is_err(&b) || c->abort_msg)
		return b;
	enum binop op = (enum binop)n->op;
	struct val err;
	int r;
	switch (op) {
	case B_EQ:
	case B_NE:
		r = eqv(c, &a, &b, &err, 0);
		if (r < 0)
			return err;
		return mkbool(op == B_EQ ? r == 1 : r == 0);
	case B_LT:
	case B_LE:
	case B_GT:
	case B_GE:
		if (a.k == V_STR || a.k == V_BYTES)
			charge(c, a.s.n / 16);
		r = ordering(&a, &b);
		if (r == -2)
			return no_overload();
		if (r == 2)
			return mkbool(false);
		if (op == B_LT)
			return mkbool(r < 0);
		if (op == B_LE)
			return mkbool(r <= 0);
		if (op == B_GT)
			return mkbool(r > 0);
		return mkbool(r >= 0);
	case B_IN:
		return eval_in(c, &a, &b);
	case B_ADD:
	case B_SUB:
	case B_MUL:
	case B_DIV:
	case B_MOD:
		return arith(c, op, &a, &b);
	}
	return no_overload();
}

/* Insert k: v into the built map m (room reserved), or an error if k is
   there already (cel-go's InsertMapKeyValue). */
static struct val map_insert(struct ctx *c, struct val *m, const struct val *k,
			     const struct val *v)
{
	struct val x;
	if (k->k != V_STR && k->k != V_INT && k->k != V_UINT && k->k != V_BOOL)
		return is_err(k) ? *k : err_static("unsupported key type");
	int r = map_find(c, m, k, &x);
	if (r < 0)
		return x;
	if (r) {
		char buf[128];
		key_text(k, buf, sizeof buf);
		return errf(c, "insert failed: key %s already exists", buf);
	}
	m->m.keys[m->m.n] = *k;
	m->m.vals[m->m.n++] = *v;
	return *m;
}

/* transformMapEntry's step: insert every entry of map p into out, whose
   arrays are grown as needed. */
static struct val eval_entries(struct ctx *c, struct val *out, size_t *cap,
			       const struct val *p)
{
	if (p->k != V_MAP)
		return is_err(p) ? *p : no_overload();
	struct val *keys;
	size_t nk;
	if (!map_keys(c, p, &keys, &nk))
		return err_static(COST_MSG);
	if (out->m.n + nk > *cap) {
		size_t want =
		    out->m.n + nk > 2 * *cap ? out->m.n + nk : 2 * *cap;
		struct val *nkeys = aalloc(c, want * sizeof *nkeys);
		struct val *nvals = aalloc(c, want * sizeof *nvals);
		if (!nkeys || !nvals)
			return err_static(COST_MSG);
		memcpy(nkeys, out->m.keys, out->m.n * sizeof *nkeys);
		memcpy(nvals, out->m.vals, out->m.n * sizeof *nvals);
		out->m.keys = nkeys;
		out->m.vals = nvals;
		*cap = want;
	}
	for (size_t i = 0; i < nk; i++) {
		struct val v, e;
		int r = map_find(c, p, &keys[i], &v);
		if (r < 0)
			return v;
		if (!r)
			v.k = V_NULL;
		e = map_insert(c, out, &keys[i], &v);
		if (is_err(&e))
			return e;
	}
	return *out;
}

/* A predicate's verdict for filters: true, false, or an error in *err. */
static int verdict(const struct val *p, struct val *err)
{
	if (p->k == V_BOOL)
		return p->b;
	*err = is_err(p) ? *p : no_overload();
	return -1;
}

static struct val eval_comp(struct ctx *c, const struct node *n)
{
	struct val range = ev(c, n->a);
	if (is_err(&range) || c->abort_msg)
		return range;
	if (n->op == M_OPTMAP || n->op == M_OPTFLAT) {
		/* none stays none; else the body over the value, wrapped
		   in an optional by optMap */
		if (range.k != V_OPT)
			return no_overload();
		if (!range.opt)
			return range;
		c->slots[n->slot] = *range.opt;
		struct val p = ev(c, n->b);
		if (c->abort_msg || n->op == M_OPTFLAT)
			return p;
		return opt_of(c, &p);
	}
	struct val *keys = NULL;
	size_t cnt;
	if (range.k == V_LIST) {
		cnt = list_len(&range);
	} else if (range.k == V_MAP) {
		if (!map_keys(c, &range, &keys, &cnt))
			return err_static(COST_MSG);
	} else {
		return no_overload();
	}
	enum macro m = (enum macro)n->op;
	struct val out = {.k = V_NULL}, pending = {.k = V_NULL}, e;
	bool have_pending = false;
	int64_t count = 0;
	size_t kept = 0, cap = cnt ? cnt : 1; /* of out's map arrays */
	switch (m) {
	case M_MAP:
	case M_MAP3:
	case M_FILTER:
	case M_OPTMAP:
	case M_OPTFLAT:
	case M2_TLIST:
	case M2_TMAP:
	case M2_TENTRY:
		out = (m == M2_TMAP || m == M2_TENTRY) ? new_map(c, cnt)
						       : new_list(c, cnt);
		if (is_err(&out))
			return out;
		break;
	case M_ALL:
	case M_EXISTS:
	case M_EXISTS_ONE:
	case M2_ALL:
	case M2_EXISTS:
	case M2_EXISTS_ONE:
		break;
	}
	/* with a filter, b is the filter and c the transform */
	const struct node *filter = m >= M2_TLIST && n->c ? n->b : NULL;
	const struct node *xform = m >= M2_TLIST ? (n->c ? n->c : n->b) : n->c;
	for (size_t i = 0; i < cnt; i++) {
		if (!charge(c, 1))
			return err_static(COST_MSG);
		struct val elem = keys ? keys[i] : list_get(c, &range, i);
		if (m >= M2_ALL) {
			/* (index, element) of a list, (key, value) of a map */
			if (keys) {
				int r = map_find(c, &range, &keys[i],
						 &c->slots[n->slot2]);
				if (r < 0)
					return c->slots[n->slot2];
				if (!r) /* a null field of an object */
					c->slots[n->slot2].k = V_NULL;
				c->slots[n->slot] = elem;
			} else {
				c->slots[n->slot] = mkint((int64_t)i);
				c->slots[n->slot2] = elem;
			}
		} else {
			c->slots[n->slot] = elem;
		}
		struct val p = ev(c, filter ? filter : n->b);
		if (c->abort_msg)
			return p;
		switch (m) {
		case M_ALL:
		case M_EXISTS:
		case M2_ALL:
		case M2_EXISTS:
			if (p.k == V_BOOL) {
				if (p.b == (m == M_EXISTS || m == M2_EXISTS))
					return p;
			} else if (!have_pending) {
				pending = is_err(&p) ? p : no_overload();
				have_pending = true;
			}
			break;
		case M_EXISTS_ONE:
		case M2_EXISTS_ONE:
			if (verdict(&p, &e) < 0)
				return e;
			count += p.b;
			break;
		case M_MAP:
		case M_MAP3:
		case M_FILTER:
		case M_OPTMAP:
		case M_OPTFLAT:
		case M2_TLIST:
		case M2_TMAP:
		case M2_TENTRY:
			if (filter || m == M_MAP3 || m == M_FILTER) {
				int r = verdict(&p, &e);
				if (r < 0)
					return e;
				if (!r)
					break;
				if (m == M_FILTER) {
					out.l.items[kept++] = elem;
					break;
				}
				p = ev(c, xform);
				if (c->abort_msg)
					return p;
			}
			if (is_err(&p))
				return p;
			if (m == M_MAP || m == M_MAP3 || m == M2_TLIST) {
				out.l.items[kept++] = p;
			} else if (m == M2_TMAP) {
				e = map_insert(c, &out, &c->slots[n->slot], &p);
				if (is_err(&e))
					return e;
			} else {
				e = eval_entries(c, &out, &cap, &p);
				if (is_err(&e))
					return e;
			}
			break;
		}
	}
	switch (m) {
	case M_ALL:
	case M_EXISTS:
	case M2_ALL:
	case M2_EXISTS:
		return have_pending ? pending
				    : mkbool(m == M_ALL || m == M2_ALL);
	case M_EXISTS_ONE:
	case M2_EXISTS_ONE:
		return mkbool(count == 1);
	case M2_TMAP:
	case M2_TENTRY:
		return out;
	case M_MAP:
	case M_MAP3:
	case M_FILTER:
	case M_OPTMAP:
	case M_OPTFLAT:
	case M2_TLIST:
		break;
	}
	out.l.n = kept;
	return out;
}

static struct val eval_call(struct ctx *c, const struct node *n)
{
	struct val t, args[3];
	if (n->no_member) /* the checker refuses it before */
		return err_static("no such overload");
	if (n->a) {
		t = ev(c, n->a);
		if (is_err(&t) || c->abort_msg)
			return t;
		/* or, orValue: the alternative only when the target is
		   optional.none() (cel-go's decorateOptionalOr); a target
		   not optional is the answer */
		if (n->op == F_OR || n->op == F_ORVALUE) {
			if (t.k != V_OPT)
				return t;
			if (t.opt)
				return n->op == F_OR ? t : *t.opt;
			return ev(c, n->args[0]);
		}
	}
	for (int i = 0; i < n->n_args; i++) {
		args[i] = ev(c, n->args[i]);
		if (is_err(&args[i]) || c->abort_msg)
			return args[i];
	}
	return call(c, n, n->a ? &t : NULL, args, n->n_args);
}

static struct val ev(struct ctx *c, const struct node *n)
{
	struct val v = {.k = V_NULL};
	if (!charge(c, 1))
		return err_static(COST_MSG);
	switch (n->k) {
	case N_INT:
		return mkint(n->lit.i);
	case N_UINT:
		return mkuint(n->lit.u);
	case N_DOUBLE:
		return mkdouble(n->lit.d);
	case N_STRING:
		return mkstr(V_STR, n->s, n->s_len);
	case N_BYTES:
		return mkstr(V_BYTES, n->s, n->s_len);
	case N_BOOL:
		return mkbool(n->lit.b);
	case N_NULL:
		return v;
	case N_TYPE:
		return mkstr(V_TYPE, n->s, n->s_len);
	case N_IDENT:
		return err_static("unresolved identifier");
	case N_VAR:
		return c->slots[n->slot];
	case N_SELF:
		return c->slots[0];
	case N_OLD:
		/* optionalOldSelf: optional.of(the old value), or none on a
		   create or a newly added field */
		if (c->opt_old)
			return c->old_json ? opt_of(c, &c->slots[1])
					   : opt_none();
		if (!c->old_json)
			return err_static("no such attribute: oldSelf");
		return c->slots[1];
	case N_SELECT:
	case N_HAS: {
		const struct node *sel = n->k == N_HAS ? n->a : n;
		struct val o = ev(c, sel->a);
		if (is_err(&o) || c->abort_msg)
			return o;
		struct val key = mkstr(V_STR, sel->s, sel->s_len);
		if (n->k == N_SELECT && (n->opt_sel || o.k == V_OPT))
			return opt_index(c, &o, &key);
		if (n->k == N_HAS && o.k == V_OPT) {
			/* cel-go's presence test on an optional: false for
			   none, else the test on its value */
			if (!o.opt)
				return mkbool(false);
			o = *o.opt;
		}
		if (o.k != V_MAP)
			return err_static("invalid type for field selection.");
		int r = map_find(c, &o, &key, &v);
		if (r < 0)
			return v;
		if (n->k == N_HAS) /* a value that does not convert is an
				      error, as kube's Contains says */
			return r == 1 && is_err(&v) ? v : mkbool(r == 1);
		if (!r)
			return errf(c, "no such key: %s", sel->s);
		return v;
	}
	case N_INDEX: {
		struct val a = ev(c, n->a);
		if (is_err(&a) || c->abort_msg)
			return a;
		struct val k = ev(c, n->b);
		if (is_err(&k) || c->abort_msg)
			return k;
		if (n->opt_sel || a.k == V_OPT)
			return opt_index(c, &a, &k);
		return eval_index(c, &a, &k);
	}
	case N_LIST: {
		v = new_list(c, (size_t)n->n_args);
		size_t kept = 0;
		for (int i = 0; !is_err(&v) && i < n->n_args; i++) {
			struct val e = ev(c, n->args[i]);
			if (is_err(&e) || c->abort_msg)
				return e;
			if (n->args[i]->opt_elem) {
				if (e.k != V_OPT) {
					char buf[128];
					key_text(&e, buf, sizeof buf);
					return errf(
					    c,
					    "cannot initialize optional "
					    "list element from "
					    "non-optional value %s",
					    buf);
				}
				if (!e.opt)
					continue;
				e = *e.opt;
			}
			v.l.items[kept++] = e;
		}
		if (!is_err(&v))
			v.l.n = kept;
		return v;
	}
	case N_MAP: {
		size_t np = (size_t)n->n_args / 2;
		v = new_map(c, np);
		if (is_err(&v))
			return v;
		for (size_t i = 0; i < np; i++) {
			struct val k = ev(c, n->args[2 * i]), x;
			if (is_err(&k) || c->abort_msg)
				return k;
			if (k.k != V_STR && k.k != V_INT && k.k != V_UINT &&
			    k.k != V_BOOL)
				return err_static("unsupported key type");
			struct val e = ev(c, n->args[2 * i + 1]);
			if (is_err(&e) || c->abort_msg)
				return e;
			if (n->args[2 * i]->opt_elem) {
				if (e.k != V_OPT) {
					char kb[128], vb[128];
					key_text(&k, kb, sizeof kb);
					key_text(&e, vb, sizeof vb);
					return errf(
					    c,
					    "cannot initialize optional "
					    "entry '%s' from "
					    "non-optional value %s",
					    kb, vb);
				}
				if (!e.opt)
					continue;
				e = *e.opt;
			}
			int r = map_find(c, &v, &k, &x);
			if (r < 0)
				return x;
			if (r)
				return errf(c, "repeated key in map literal");
			v.m.keys[v.m.n] = k;
			v.m.vals[v.m.n++] = e;
		}
		return v;
	}
	case N_NOT:
		v = ev(c, n->a);
		if (v.k == V_BOOL)
			return mkbool(!v.b);
		return is_err(&v) ? v : no_overload();
	case N_NEG:
		v = ev(c, n->a);
		if (v.k == V_INT)
			return v.i == INT64_MIN ? ovf() : mkint(-v.i);
		if (v.k == V_DOUBLE)
			return mkdouble(-v.d);
		if (v.k == V_DUR)
			return v.i == INT64_MIN ? ovf() : mkdur(-v.i);
		return is_err(&v) ? v : no_overload();
	case N_BIN:
		return eval_bin(c, n);
	case N_AND:
		return eval_and_or(c, n, true);
	case N_OR:
		return eval_and_or(c, n, false);
	case N_COND:
		v = ev(c, n->a);
		if (v.k == V_BOOL)
			return ev(c, v.b ? n->b : n->c);
		return is_err(&v) ? v : no_overload();
	case N_CALL:
		return eval_call(c, n);
	case N_COMP:
		return eval_comp(c, n);
	}
	return v;
}

/* Evaluate p into *v in c (whose arena the caller frees); the result's
   kind, with *text the message of an error or of something unsupported. */
static enum cel_result run(struct ctx *c, const cel_prog *p, const void *node,
			   const json_t *self, const json_t *old_self,
			   struct val *v, const char **text)
{
	*text = "";
	c->opt_old = p->opt_old;
	if (!c->ops)
		node = NULL;
	c->slots = aalloc(c, (size_t)(p->n_slots + 2) * sizeof *c->slots);
	if (!c->slots) {
		*text = c->abort_msg;
		return CEL_ERROR;
	}
	c->slots[0] = from_json(c, self, node);
	c->slots[1] =
	    old_self ? from_json(c, old_self, node) : (struct val){.k = V_NULL};
	*v = ev(c, p->root);
	if (c->abort_msg) {
		*text = c->abort_msg;
		return CEL_ERROR;
	}
	if (v->k == V_ERR) {
		*text = v->s.p;
		return CEL_ERROR;
	}
	if (v->k == V_UNSUP) {
		*text = v->s.p;
		return CEL_UNSUPPORTED;
	}
	return v->k == V_BOOL && v->b ? CEL_TRUE : CEL_FALSE;
}

enum cel_result cel_eval_budget(const cel_prog *p, const struct cel_schema *ops,
				const void *node, const json_t *self,
				const json_t *old_self, uint64_t *budget,
				char *msg, size_t msg_size)
{
	struct ctx c = {.ops = ops,
			.old_json = old_self,
			.node = node,
			.limit = STEP_LIMIT,
			.limit_msg = COST_MSG};
	if (budget && *budget < STEP_LIMIT) {
		c.limit = *budget;
		c.limit_msg = CEL_BUDGET_MSG;
	}
	struct val v;
	const char *text;
	enum cel_result res = run(&c, p, node, self, old_self, &v, &text);
	if (budget)
		*budget -= c.steps < *budget ? c.steps : *budget;
	if (msg_size)
		put_msg(msg, msg_size, text);
	arena_free(&c);
	return res;
}

enum cel_result cel_eval(const cel_prog *p, const struct cel_schema *ops,
			 const void *node, const json_t *self,
			 const json_t *old_self, char *msg, size_t msg_size)
{
	return cel_eval_budget(p, ops, node, self, old_self, NULL, msg,
			       msg_size);
}

enum cel_result cel_eval_string(const cel_prog *p, const struct cel_schema *ops,
				const void *node, const json_t *self,
				const json_t *old_self, char *out,
				size_t out_size, size_t *len)
{
	struct ctx c = {.ops = ops,
			.old_json = old_self,
			.node = node,
			.limit = STEP_LIMIT,
			.limit_msg = COST_MSG};
	struct val v;
	const char *text;
	enum cel_result res = run(&c, p, node, self, old_self, &v, &text);
	*len = 0;
	if (res == CEL_TRUE || res == CEL_FALSE) {
		res = v.k == V_STR ? CEL_TRUE : CEL_FALSE;
		text = "";
	}
	if (res == CEL_TRUE) {
		*len = v.s.n;
		if (out_size) {
			size_t n = v.s.n < out_size - 1 ? v.s.n : out_size - 1;
			memcpy(out, v.s.p, n);
			out[n] = 0;
		}
	} else if (out_size) {
		put_msg(out, out_size, text);
	}
	arena_free(&c);
	return res;
}

/* -------------------------------------------------------------- lexer */

enum tok {
	T_EOF,
	T_ERR,
	T_INT, /* u: the magnitude (a '-' before it is unary) */
	T_UINT,
	T_DOUBLE,
	T_STRING, /* s, s_len: decoded */
	T_BYTES,
	T_IDENT,
	T_TRUE,
	T_FALSE,
	T_NULL,
	T_IN,
	T_EQ,
	T_NE,
	T_LE,
	T_GE,
	T_AND,
	T_OR,
	T_PUNCT, /* ch */
};

struct parser {
	const char *src;
	size_t len, pos;
	enum tok t; /* the current token */
	size_t t_pos;
	char ch; /* T_PUNCT, and '<' '>' */
	uint64_t u;
	double d;
	char *s; /* owned, for T_STRING, T_BYTES, T_IDENT */
	size_t s_len;
	int depth; /* recursion */
	cel_prog *prog;
	char *why;
	size_t why_size;
	bool failed;
	bool unsup; /* it failed on something outside the subset, not on
		       text that is not CEL */
	int n_slots;
	size_t err_at;	 /* where it failed (CEL_NO_POS: nowhere known) */
	size_t call_paren; /* make_call's: its call's '(' */
	bool err_syntax; /* a syntax error, not a checker's */
	bool err_program; /* cel-go would fail building the program, not
			     compiling it (a bad find() pattern) */
	char bare[256];	 /* the failure's text alone */
	bool new_env;	 /* kube's environment for new expressions */
};

static void vfail(struct parser *ps, size_t at, bool syntax, const char *fmt,
		  va_list ap)
{
	char line[300];
	if (ps->failed)
		return;
	ps->failed = true;
	vsnprintf(ps->bare, sizeof ps->bare, fmt, ap);
	ps->err_at = at;
	ps->err_syntax = syntax;
	if (at == CEL_NO_POS || !syntax)
		snprintf(line, sizeof line, "%s", ps->bare);
	else
		snprintf(line, sizeof line, "syntax error at %zu: %s", at,
			 ps->bare);
	if (ps->why_size)
		put_msg(ps->why, ps->why_size, line);
}

static void fail(struct parser *ps, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A syntax error at byte at of the source (CEL_NO_POS: none). */
static void fail(struct parser *ps, size_t at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(ps, at, true, fmt, ap);
	va_end(ap);
}

static void fail_check(struct parser *ps, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A checker's error (an undeclared name) at byte at. */
static void fail_check(struct parser *ps, size_t at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(ps, at, false, fmt, ap);
	va_end(ap);
}

static void fail_macro(struct parser *ps, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A macro's error (cel-go's parser reports it at the argument its
   expander names, without "Syntax error: "). */
static void fail_macro(struct parser *ps, size_t at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(ps, at, false, fmt, ap);
	va_end(ap);
}

static void nomem(struct parser *ps)
{
	fail(ps, CEL_NO_POS, "out of memory");
	ps->unsup = true;
}

static void too_deep(struct parser *ps)
{
	fail(ps, CEL_NO_POS,
	     "expression nested too deeply (more than %d levels)", MAX_DEPTH);
	ps->unsup = true;
}

static bool is_id0(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       ch == '_';
}

static bool is_dig(char ch)
{
	return ch >= '0' && ch <= '9';
}

/* A quoted literal at ps->pos (the quote); raw and bytes per prefix. */
static void lex_string(struct parser *ps, bool raw, bool bytes)
{
	const char *s = ps->src;
	size_t i = ps->pos, n = ps->len, start = i;
	char q = s[i];
	bool triple = i + 2 < n && s[i + 1] == q && s[i + 2] == q;
	i += triple ? 3 : 1;
	/* decoded text is never longer than the source */
	char *out = malloc(n - start + 1);
	size_t o = 0;
	if (!out) {
		nomem(ps);
		ps->t = T_ERR;
		return;
	}
	for (;;) {
		if (i >= n) {
			fail(ps, start, "unterminated string");
			goto bad;
		}
		if (triple ? (i + 2 < n && s[i] == q && s[i + 1] == q &&
			      s[i + 2] == q)
			   : s[i] == q) {
			i += triple ? 3 : 1;
			break;
		}
		if (!triple && (s[i] == '\n' || s[i] == '\r')) {
			fail(ps, i, "newline in string");
			goto bad;
		}
		if (s[i] != '\\' || raw) {
			out[o++] = s[i++];
			continue;
		}
		if (i + 1 >= n) {
			fail(ps, i, "unterminated string");
			goto bad;
		}
		char e = s[i + 1];
		uint32_t cp = 0;
		int k = 0;
		const char *simple = strchr("\\'\"`?abfnrtv", e);
		if (e && simple) {
			static const char map[] = "\\'\"`?\a\b\f\n\r\t\v";
			out[o++] = map[simple - "\\'\"`?abfnrtv"];
			i += 2;
			continue;
		}
		if (e == 'x' || e == 'X')
			k = 2;
		else if (e == 'u' && !bytes)
			k = 4;
		else if (e == 'U' && !bytes)
			k = 8;
		if (k) {
			if (i + 2 + (size_t)k > n) {
				fail(ps, i, "bad escape");
				goto bad;
			}
			for (int j = 0; j < k; j++) {
				int h = hexdig(s[i + 2 + j]);
				if (h < 0) {
					fail(ps, i, "bad escape");
					goto bad;
				}
				cp = cp * 16 + (uint32_t)h;
			}
			i += 2 + (size_t)k;
		} else if (e >= '0' && e <= '3') {
			if (i + 4 > n) {
				fail(ps, i, "bad escape");
				goto bad;
			}
			for (int j = 1; j <= 3; j++) {
				if (s[i + j] < '0' || s[i + j] > '7') {
					fail(ps, i, "bad escape");
					goto bad;
				}
				cp = cp * 8 + (uint32_t)(s[i + j] - '0');
			}
			i += 4;
		} else {
			fail(ps, i, "bad escape");
			goto bad;
		}
		if (bytes && cp < 256 && e != 'u' && e != 'U') {
			out[o++] = (char)cp;
			continue;
		}
		if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
			fail(ps, i, "bad code point in escape");
			goto bad;
		}
		o += reg_utf8_encode(out + o, cp);
	}
	out[o] = 0;
	ps->s = out;
	ps->s_len = o;
	ps->pos = i;
	ps->t = bytes ? T_BYTES : T_STRING;
	return;
bad:
	free(out);
	ps->t = T_ERR;
}

/* A token that cannot be read. */
static void lex_error(struct parser *ps, size_t at, const char *msg)
{
	fail(ps, at, "%s", msg);
	ps->t = T_ERR;
}

/* An integer literal of magnitude v, its digits ending before i; a u
   after them makes it unsigned. */
static void lex_int(struct parser *ps, uint64_t v, size_t i)
{
	ps->u = v;
	ps->t = T_INT;
	if (i < ps->len && (ps->src[i] == 'u' || ps->src[i] == 'U'))
		i++, ps->t = T_UINT;
	ps->pos = i;
}

static void lex_number(struct parser *ps)
{
	const char *s = ps->src;
	size_t i = ps->pos, n = ps->len, start = i;
	if (s[i] == '0' && i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		uint64_t v = 0;
		i += 2;
		if (i >= n || hexdig(s[i]) < 0) {
			lex_error(ps, start, "bad hex literal");
			return;
		}
		for (; i < n && hexdig(s[i]) >= 0; i++) {
			if (v >> 60) {
				lex_error(ps, start,
					  "integer literal out of range");
				return;
			}
			v = v * 16 + (uint64_t)hexdig(s[i]);
		}
		lex_int(ps, v, i);
		return;
	}
	bool is_double = false;
	while (i < n && is_dig(s[i]))
		i++;
	if (i + 1 < n && s[i] == '.' && is_dig(s[i + 1])) {
		is_double = true;
		for (i++; i < n && is_dig(s[i]); i++)
			;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		size_t j = i + 1;
		if (j < n && (s[j] == '+' || s[j] == '-'))
			j++;
		if (j < n && is_dig(s[j])) {
			is_double = true;
			for (i = j; i < n && is_dig(s[i]); i++)
				;
		}
	}
	if (is_double) {
		/* as long as it is (DBL_MAX written out has 309 digits) */
		char small[128], *buf = small;
		if (i - start >= sizeof small &&
		    !(buf = malloc(i - start + 1))) {
			nomem(ps);
			return;
		}
		memcpy(buf, s + start, i - start);
		buf[i - start] = 0;
		ps->d = strtod(buf, NULL);
		if (buf != small)
			free(buf);
		ps->t = T_DOUBLE;
		ps->pos = i;
		return;
	}
	uint64_t v = 0;
	for (size_t j = start; j < i; j++) {
		if (!dec_push(&v, s[j])) {
			lex_error(ps, start, "integer literal out of range");
			return;
		}
	}
	lex_int(ps, v, i);
}

static void next(struct parser *ps)
{
	const char *s = ps->src;
	size_t n = ps->len;
	free(ps->s);
	ps->s = NULL;
	if (ps->failed) {
		ps->t = T_ERR;
		return;
	}
	for (;;) {
		while (ps->pos < n && strchr(" \t\n\r\f", s[ps->pos]) &&
		       s[ps->pos])
			ps->pos++;
		if (ps->pos + 1 < n && s[ps->pos] == '/' &&
		    s[ps->pos + 1] == '/') {
			while (ps->pos < n && s[ps->pos] != '\n')
				ps->pos++;
			continue;
		}
		break;
	}
	size_t i = ps->pos;
	ps->t_pos = i;
	if (i >= n) {
		ps->t = T_EOF;
		return;
	}
	char ch = s[i], c2 = i + 1 < n ? s[i + 1] : 0;
	if (is_id0(ch)) {
		size_t j = i;
		while (j < n && (is_id0(s[j]) || is_dig(s[j])))
			j++;
		/* string prefixes: r, b, rb, br (any case) */
		size_t pl = j - i;
		if (j < n && (s[j] == '"' || s[j] == '\'') && pl <= 2) {
			bool raw = false, bytes = false, ok = true;
			for (size_t k = i; k < j; k++) {
				if ((s[k] == 'r' || s[k] == 'R') && !raw)
					raw = true;
				else if ((s[k] == 'b' || s[k] == 'B') && !bytes)
					bytes = true;
				else
					ok = false;
			}
			if (ok) {
				ps->pos = j;
				lex_string(ps, raw, bytes);
				return;
			}
		}
		ps->s = malloc(pl + 1);
		if (!ps->s) {
			nomem(ps);
			ps->t = T_ERR;
			return;
		}
		memcpy(ps->s, s + i, pl);
		ps->s[pl] = 0;
		ps->s_len = pl;
		ps->pos = j;
		ps->t = T_IDENT;
		if (!strcmp(ps->s, "true"))
			ps->t = T_TRUE;
		else if (!strcmp(ps->s, "false"))
			ps->t = T_FALSE;
		else if (!strcmp(ps->s, "null"))
			ps->t = T_NULL;
		else if (!strcmp(ps->s, "in"))
			ps->t = T_IN;
		return;
	}
	if (is_dig(ch) || (ch == '.' && is_dig(c2))) {
		lex_number(ps);
		return;
	}
	if (ch == '"' || ch == '\'') {
		lex_string(ps, false, false);
		return;
	}
	static const struct {
		char a, b;
		enum tok t;
	} two[] = {{'=', '=', T_EQ}, {'!', '=', T_NE},	{'<', '=', T_LE},
		   {'>', '=', T_GE}, {'&', '&', T_AND}, {'|', '|', T_OR}};
	for (size_t k = 0; k < sizeof two / sizeof *two; k++)
		if (ch == two[k].a && c2 == two[k].b) {
			ps->t = two[k].t;
			ps->pos = i + 2;
			return;
		}
	if (ch && strchr("()[]{}.,:?!-+*/%<>", ch)) {
		ps->t = T_PUNCT;
		ps->ch = ch;
		ps->pos = i + 1;
		return;
	}
	lex_error(ps, i, "unexpected character");
}

static bool is_punct(struct parser *ps, char ch)
{
	return ps->t == T_PUNCT && ps->ch == ch;
}

static bool expect(struct parser *ps, char ch)
{
	if (!is_punct(ps, ch)) {
		fail(ps, ps->t_pos, "expected '%c'", ch);
		return false;
	}
	next(ps);
	return true;
}

/* ------------------------------------------------------------- parser */

static struct node *mknode(struct parser *ps, enum nkind k, struct node *a,
			   struct node *b, struct node *c)
{
	if (ps->failed)
		return NULL;
	struct node *n = calloc(1, sizeof *n);
	if (!n) {
		nomem(ps);
		return NULL;
	}
	n->k = k;
	n->a = a;
	n->b = b;
	n->c = c;
	n->pos = CEL_NO_POS;
	n->all_next = ps->prog->all;
	ps->prog->all = n;
	int d = 0;
	if (a && a->depth > d)
		d = a->depth;
	if (b && b->depth > d)
		d = b->depth;
	if (c && c->depth > d)
		d = c->depth;
	n->depth = d + 1;
	if (n->depth > MAX_DEPTH)
		too_deep(ps);
	return n;
}

/* Take ownership of args (n of them) into node x. */
static void set_args(struct parser *ps, struct node *x, struct node **args,
		     int n)
{
	if (!x) {
		free(args);
		return;
	}
	x->args = args;
	x->n_args = n;
	for (int i = 0; i < n; i++)
		if (args[i] && args[i]->depth + 1 > x->depth)
			x->depth = args[i]->depth + 1;
	if (x->depth > MAX_DEPTH)
		too_deep(ps);
}

static struct node *parse_expr(struct parser *ps);

/* Append e to the growing array *v of *n (room for *cap). */
static bool push_node(struct parser *ps, struct node ***v, int *n, int *cap,
		      struct node *e)
{
	if (*n == *cap) {
		int nc = *cap ? *cap * 2 : 8;
		struct node **nv = realloc(*v, (size_t)nc * sizeof *nv);
		if (!nv) {
			nomem(ps);
			return false;
		}
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = e;
	return true;
}

/* Comma-separated expressions up to close; new array in *out. */
static int parse_list(struct parser *ps, char close, bool pairs, bool opt_ok,
		      struct node ***out)
{
	struct node **v = NULL;
	int n = 0, cap = 0;
	*out = NULL;
	while (!ps->failed && !is_punct(ps, close)) {
		for (int k = 0; k < (pairs ? 2 : 1); k++) {
			if (k == 1 && !expect(ps, ':'))
				break;
			/* [?e], {?k: v}: an optional element or entry */
			bool opt = k == 0 && opt_ok && is_punct(ps, '?');
			if (opt)
				next(ps);
			struct node *e = parse_expr(ps);
			if (!e || !push_node(ps, &v, &n, &cap, e))
				break;
			e->opt_elem = opt;
		}
		if (ps->failed || !is_punct(ps, ','))
			break;
		next(ps);
	}
	if (!ps->failed)
		expect(ps, close);
	if (ps->failed) {
		free(v);
		return -1;
	}
	*out = v;
	return n;
}

/* The function called name, or NULL when the environment declares none:
   kube 1.33 compiles a new expression for compatibility version 1.32
   (DefaultCompatibilityVersion), before its semver library (introduced
   in 1.33), and stored ones with everything. */
static const struct fndef *find_fn(const struct parser *ps, const char *name)
{
	for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
		if (strcmp(fns[i].name, name))
			continue;
		enum fn id = fns[i].id;
		if (ps->new_env &&
		    (id == F_SEMVER || id == F_ISSEMVER || id == F_MAJOR ||
		     id == F_MINOR || id == F_PATCH))
			return NULL;
		return &fns[i];
	}
	return NULL;
}

/* A literal regex pattern: check and compile it now, as cel-go does. */
static void precompile(struct parser *ps, struct node *call,
		       const struct node *pat)
{
	if (!pat || pat->k != N_STRING || ps->failed)
		return;
	char msg[200];
	const char *why = "";
	if (memchr(pat->s, 0, pat->s_len)) {
		fail(ps, CEL_NO_POS, "regex contains NUL");
		ps->unsup = true;
		return;
	}
	if (srv_re2_error(pat->s, msg, sizeof msg)) {
		/* cel-go's checker refuses a bad pattern for matches() at
		   its argument; kube's regex library one for find() when
		   it builds the program */
		if (call->op == F_MATCHES) {
			fail_check(ps, pat->pos, "invalid matches argument");
		} else if (!ps->failed) {
			fail(ps, CEL_NO_POS, "%s", msg);
			ps->err_program = true;
		}
		return;
	}
	call->re = srv_goregex_compile(pat->s, call->op != F_MATCHES, &why);
	if (!call->re) {
		fail(ps, CEL_NO_POS, "regex not supported: %s", why);
		ps->unsup = true;
	}
}

/* duration() and timestamp() of a literal: checked now, as cel-go's
   checker does. */
static void check_time_literal(struct parser *ps, enum fn f,
			       const struct node *a)
{
	int64_t d;
	int32_t ns;
	int16_t off;
	if (ps->failed)
		return;
	/* cel-go's checker places these at the argument */
	if (f == F_DURATION && a->k == N_STRING &&
	    !parse_duration(a->s, a->s_len, &d))
		fail_check(ps, a->pos, "invalid duration argument");
	if (f == F_TIMESTAMP && a->k == N_STRING &&
	    !parse_ts(a->s, a->s_len, &d, &ns, &off))
		fail_check(ps, a->pos, "invalid timestamp");
	if (f == F_TIMESTAMP && a->k == N_INT &&
	    (a->lit.i < TS_MIN || a->lit.i > TS_MAX))
		fail_check(ps, a->pos, "invalid timestamp");
}

static struct node *make_macro(struct parser *ps, const char *name,
			       struct node *target, struct node **args, int na)
{
	static const struct {
		const char *name;
		int na;
		enum macro m;
	} macros[] = {
	    {"all", 2, M_ALL},
	    {"exists", 2, M_EXISTS},
	    {"exists_one", 2, M_EXISTS_ONE},
	    {"map", 2, M_MAP},
	    {"map", 3, M_MAP3},
	    {"filter", 2, M_FILTER},
	    {"optMap", 2, M_OPTMAP},
	    {"optFlatMap", 2, M_OPTFLAT},
	    {"all", 3, M2_ALL},
	    {"exists", 3, M2_EXISTS},
	    {"existsOne", 3, M2_EXISTS_ONE},
	    {"exists_one", 3, M2_EXISTS_ONE},
	    {"transformList", 3, M2_TLIST},
	    {"transformList", 4, M2_TLIST},
	    {"transformMap", 3, M2_TMAP},
	    {"transformMap", 4, M2_TMAP},
	    {"transformMapEntry", 3, M2_TENTRY},
	    {"transformMapEntry", 4, M2_TENTRY},
	};
	for (size_t i = 0; i < sizeof macros / sizeof *macros; i++) {
		if (strcmp(macros[i].name, name) || macros[i].na != na)
			continue;
		bool two = macros[i].m >= M2_ALL;
		if (args[0]->k != N_IDENT || (two && args[1]->k != N_IDENT)) {
			/* cel-go's expander errors, at the argument */
			enum macro mm = macros[i].m;
			const struct node *bad =
			    args[0]->k != N_IDENT ? args[0] : args[1];
			fail_macro(ps, bad->pos, "%s",
				   mm == M_MAP || mm == M_MAP3 || mm == M_FILTER
				       ? "argument is not an identifier"
				   : mm == M_OPTMAP
				       ? "optMap() variable name must be a "
					 "simple identifier"
				   : mm == M_OPTFLAT
				       ? "optFlatMap() variable name must be a "
					 "simple identifier"
				       : "argument must be a simple name");
			free(args);
			return NULL;
		}
		int body = two ? 2 : 1; /* the first argument after the names */
		struct node *m = mknode(ps, N_COMP, target, args[body],
					na > body + 1 ? args[body + 1] : NULL);
		if (m) {
			m->op = macros[i].m;
			m->s = args[0]->s; /* the variables' names */
			args[0]->s = NULL;
			m->s_len = args[0]->s_len;
			if (two) {
				m->s2 = args[1]->s;
				args[1]->s = NULL;
			}
		}
		free(args);
		return m;
	}
	return NULL;
}

/* A call: name(args) or target.name(args). Takes args. */
static struct node *make_call(struct parser *ps, const char *name,
			      struct node *target, struct node **args, int na,
			      size_t at)
{
	if (!target && !strcmp(name, "has")) {
		struct node *h = NULL;
		if (na != 1 || args[0]->k != N_SELECT || args[0]->opt_sel)
			fail_macro(ps, na == 1 ? args[0]->pos : at,
				   "invalid argument to has() macro");
		else
			h = mknode(ps, N_HAS, args[0], NULL, NULL);
		free(args);
		return h;
	}
	if (target && na >= 2) {
		struct node *m = make_macro(ps, name, target, args, na);
		if (m || ps->failed)
			return m;
	}
	int fi;
	if (!target && !strncmp(name, "format.", 7) &&
	    (fi = find_fmt(name + 7, strlen(name + 7))) >= 0) {
		struct node *n = NULL;
		if (na)
			fail(ps, CEL_NO_POS, "function '%s' takes no arguments",
			     name);
		else if ((n = mknode(ps, N_CALL, NULL, NULL, NULL))) {
			n->op = F_FMT;
			n->lit.i = fi;
		}
		free(args);
		return n;
	}
	const struct fndef *f = find_fn(ps, name);
	/* the variables of kube's other CEL environments (admission
	   policies, authorization): a CRD rule has none of them, and
	   cel-go's checker names the target before the function */
	static const char *const foreign[] = {
	    "authorizer", "params",    "request",	 "object",
	    "oldObject",  "variables", "namespaceObject"};
	for (size_t i = 0; !f && target && target->k == N_IDENT &&
			   i < sizeof foreign / sizeof *foreign;
	     i++) {
		if (strcmp(target->s, foreign[i]))
			continue;
		fail_check(ps, target->pos,
			   "undeclared reference to '%s' (in container '')",
			   target->s);
		free(args);
		return NULL;
	}
	if (!f) {
		/* kube's environment declares no function lapis lacks (no
		   cel-go ext.Math, ext.Encoders, ext.Lists or cel.bind, and
		   strings v2 without reverse): cel-go's checker finds it
		   undeclared, at its '('; a target that is a name is checked
		   first (math in math.abs(1), cel in cel.bind(...)), which
		   lapis takes to be undeclared unless it is self or oldSelf
		   (a macro's variable as the target of an unknown method is
		   named instead of the method: a rejection either way) */
		if (target && target->k == N_IDENT &&
		    strcmp(target->s, "self") && strcmp(target->s, "oldSelf"))
			fail_check(ps, target->pos,
				   "undeclared reference to '%s' (in container "
				   "'')",
				   target->s);
		else
			fail_check(ps, ps->call_paren,
				   "undeclared reference to '%s' (in container "
				   "'')",
				   name);
		free(args);
		return NULL;
	}
	int lo = target ? f->mmin : f->gmin, hi = target ? f->mmax : f->gmax;
	/* a type conversion is declared as a global function alone: as a
	   method (self.i.string()) cel-go's checker finds no overload */
	bool no_member = target && f->id >= F_INT && f->id <= F_TIMESTAMP;
	if (!no_member && (lo < 0 || na < lo || na > hi)) {
		fail(ps, CEL_NO_POS,
		     "function '%s' is not supported with %d argument%s%s",
		     name, na, na == 1 ? "" : "s",
		     target ? " as a method" : "");
		ps->unsup = true;
		free(args);
		return NULL;
	}
	struct node *n = mknode(ps, N_CALL, target, NULL, NULL);
	if (!n) {
		free(args);
		return NULL;
	}
	n->no_member = no_member;
	n->op = f->id;
	set_args(ps, n, args, na);
	if (f->id == F_MATCHES || f->id == F_FIND || f->id == F_FINDALL)
		precompile(ps, n, target ? args[0] : args[1]);
	/* the literal of a global call only: a method (no_member) may have
	   no argument at all, and is refused by its overload */
	if ((f->id == F_DURATION || f->id == F_TIMESTAMP) && !no_member)
		check_time_literal(ps, f->id, args[0]);
	return n;
}

/* ns.name as a new string when it names a namespaced function of the
   subset, else NULL. */
static char *qualified(struct parser *ps, const char *ns, const char *name)
{
	size_t a = strlen(ns), b = strlen(name);
	char *q = malloc(a + b + 2);
	if (!q) {
		nomem(ps);
		return NULL;
	}
	memcpy(q, ns, a);
	q[a] = '.';
	memcpy(q + a + 1, name, b + 1);
	if (find_fn(ps, q) || (!strcmp(ns, "format") && find_fmt(name, b) >= 0))
		return q;
	free(q);
	return NULL;
}

/* The current identifier token, taken and consumed; NULL, after failing
   at at, when it is a reserved word standing alone. After a '.' (member)
   a reserved word names a field or method, as cel-go's parser reads it,
   and kube's type provider finds a field such as `namespace` under its
   escaped name (recognizeKeywordAsFieldName, on from Kubernetes 1.31). */
static char *take_ident(struct parser *ps, size_t at, bool member)
{
	char *name = ps->s;
	ps->s = NULL;
	if (!member && is_cel_reserved(name, strlen(name))) {
		fail(ps, at, "reserved identifier '%s'", name);
		free(name);
		return NULL;
	}
	next(ps);
	return name;
}

/* name(args) or target.name(args), the current token the '('; frees
   name. */
static struct node *parse_call(struct parser *ps, char *name,
			       struct node *target, size_t at)
{
	struct node **args, *n = NULL;
	size_t paren = ps->t_pos;
	next(ps);
	int na = parse_list(ps, ')', false, false, &args);
	ps->call_paren = paren;
	if (na >= 0)
		n = make_call(ps, name, target, args, na, at);
	/* has(a.b): cel-go's macro makes the test's selection at its '(' */
	if (n && n->k == N_HAS && n->a)
		n->a->pos = paren;
	if (n && n->k == N_CALL)
		n->pos = paren;
	free(name);
	return n;
}

/* A node of kind k over a, named name (which it takes). */
static struct node *name_node(struct parser *ps, enum nkind k, struct node *a,
			      char *name)
{
	struct node *n = mknode(ps, k, a, NULL, NULL);
	if (!n) {
		free(name);
		return NULL;
	}
	n->s = name;
	n->s_len = strlen(name);
	return n;
}

static struct node *parse_primary_at(struct parser *ps, size_t at);

/* A literal, a name, a call, a parenthesized expression; located where
   it starts unless it has a place of its own (cel-go's). */
static struct node *parse_primary(struct parser *ps)
{
	size_t at = ps->t_pos;
	struct node *n = parse_primary_at(ps, at);
	if (n && n->pos == CEL_NO_POS)
		n->pos = at;
	return n;
}

static struct node *parse_primary_at(struct parser *ps, size_t at)
{
	struct node *n = NULL;
	switch (ps->t) {
	case T_INT:
		if (ps->u > INT64_MAX) {
			fail(ps, at, "integer literal out of range");
			return NULL;
		}
		n = mknode(ps, N_INT, NULL, NULL, NULL);
		if (n)
			n->lit.i = (int64_t)ps->u;
		next(ps);
		return n;
	case T_UINT:
		n = mknode(ps, N_UINT, NULL, NULL, NULL);
		if (n)
			n->lit.u = ps->u;
		next(ps);
		return n;
	case T_DOUBLE:
		n = mknode(ps, N_DOUBLE, NULL, NULL, NULL);
		if (n)
			n->lit.d = ps->d;
		next(ps);
		return n;
	case T_STRING:
	case T_BYTES:
		n = mknode(ps, ps->t == T_STRING ? N_STRING : N_BYTES, NULL,
			   NULL, NULL);
		if (n) {
			n->s = ps->s;
			n->s_len = ps->s_len;
			ps->s = NULL;
		}
		next(ps);
		return n;
	case T_TRUE:
	case T_FALSE:
		n = mknode(ps, N_BOOL, NULL, NULL, NULL);
		if (n)
			n->lit.b = ps->t == T_TRUE;
		next(ps);
		return n;
	case T_NULL:
		n = mknode(ps, N_NULL, NULL, NULL, NULL);
		next(ps);
		return n;
	case T_IDENT: {
		char *name = take_ident(ps, at, false);
		if (!name)
			return NULL;
		if (is_punct(ps, '('))
			return parse_call(ps, name, NULL, at);
		if (is_punct(ps, '{')) {
			fail(ps, at, "message construction is not supported");
			free(name);
			return NULL;
		}
		n = name_node(ps, N_IDENT, NULL, name);
		if (n)
			n->pos = at;
		return n;
	}
	case T_PUNCT:
		if (ps->ch == '(') {
			next(ps);
			n = parse_expr(ps);
			if (!expect(ps, ')'))
				return NULL;
			return n;
		}
		if (ps->ch == '[' || ps->ch == '{') {
			bool is_map = ps->ch == '{';
			struct node **args;
			next(ps);
			int na = parse_list(ps, is_map ? '}' : ']', is_map,
					    true, &args);
			if (na < 0)
				return NULL;
			n = mknode(ps, is_map ? N_MAP : N_LIST, NULL, NULL,
				   NULL);
			set_args(ps, n, args, na);
			return n;
		}
		break;
	case T_EOF:
		fail(ps, at, "unexpected end of expression");
		return NULL;
	case T_ERR:
	case T_IN:
	case T_EQ:
	case T_NE:
	case T_LE:
	case T_GE:
	case T_AND:
	case T_OR:
		break;
	}
	fail(ps, at, "unexpected token");
	return NULL;
}

/* Selections, indexes and method calls after n. */
static struct node *parse_member_tail(struct parser *ps, struct node *n)
{
	while (n && !ps->failed) {
		size_t at = ps->t_pos;
		if (is_punct(ps, '.')) {
			next(ps);
			bool opt = is_punct(ps, '?');
			if (opt)
				next(ps);
			if (ps->t == T_TRUE || ps->t == T_FALSE ||
			    ps->t == T_NULL) {
				/* ANTLR's words for a literal keyword where
				   the grammar wants a name (cel-go's
				   parser_test.go) */
				fail(ps, ps->t_pos,
				     "mismatched input '%s' expecting "
				     "IDENTIFIER",
				     ps->t == T_TRUE	? "true"
				     : ps->t == T_FALSE ? "false"
							: "null");
				return NULL;
			}
			if (ps->t != T_IDENT) {
				fail(ps, ps->t_pos, "expected a field name");
				return NULL;
			}
			char *name = take_ident(ps, at, true);
			if (!name)
				return NULL;
			if (opt && is_punct(ps, '(')) {
				fail(ps, ps->t_pos, "unexpected '(' after .?%s",
				     name);
				free(name);
				return NULL;
			}
			char *qn;
			if (is_punct(ps, '(') && n->k == N_IDENT &&
			    (qn = qualified(ps, n->s, name))) {
				/* a namespaced function (ip.isCanonical,
				   optional.of, sets.contains,
				   format.dns1123Label ...): cel-go's checker
				   takes the qualified name over the target
				   (n is left unused) */
				free(name);
				n = parse_call(ps, qn, NULL, at);
				continue;
			}
			if (ps->failed) {
				free(name);
				return NULL;
			}
			if (is_punct(ps, '(')) {
				n = parse_call(ps, name, n, at);
				continue;
			}
			n = name_node(ps, N_SELECT, n, name);
			if (n) {
				n->opt_sel = opt;
				n->pos = at;
			}
		} else if (is_punct(ps, '[')) {
			next(ps);
			bool opt = is_punct(ps, '?');
			if (opt)
				next(ps);
			struct node *k = parse_expr(ps);
			if (!k || !expect(ps, ']'))
				return NULL;
			n = mknode(ps, N_INDEX, n, k, NULL);
			if (n) {
				n->opt_sel = opt;
				n->pos = at;
			}
		} else {
			break;
		}
	}
	return ps->failed ? NULL : n;
}

static struct node *parse_unary(struct parser *ps)
{
	char ops[MAX_DEPTH];
	size_t op_at[MAX_DEPTH];
	int n_ops = 0;
	while (is_punct(ps, '!') || is_punct(ps, '-')) {
		if (n_ops == MAX_DEPTH) {
			too_deep(ps);
			return NULL;
		}
		op_at[n_ops] = ps->t_pos;
		ops[n_ops++] = ps->ch;
		next(ps);
	}
	struct node *n;
	if (n_ops && ops[n_ops - 1] == '-' &&
	    (ps->t == T_INT || ps->t == T_DOUBLE)) {
		/* a negative literal: -9223372036854775808 is an int */
		size_t at = ps->t_pos;
		if (ps->t == T_INT) {
			if (ps->u > (uint64_t)INT64_MAX + 1) {
				fail(ps, at, "integer literal out of range");
				return NULL;
			}
			n = mknode(ps, N_INT, NULL, NULL, NULL);
			if (n)
				n->lit.i = ps->u == (uint64_t)INT64_MAX + 1
					       ? INT64_MIN
					       : -(int64_t)ps->u;
		} else {
			n = mknode(ps, N_DOUBLE, NULL, NULL, NULL);
			if (n)
				n->lit.d = -ps->d;
		}
		if (n)
			n->pos = op_at[n_ops - 1];
		next(ps);
		if (is_punct(ps, '.') || is_punct(ps, '[')) {
			/* -1.f() is -(1.f()): no literal to fold */
			if (n && n->k == N_INT) {
				if (n->lit.i == INT64_MIN) {
					fail(ps, at,
					     "integer literal out of range");
					return NULL;
				}
				n->lit.i = -n->lit.i;
			} else if (n) {
				n->lit.d = -n->lit.d;
			}
		} else {
			n_ops--;
		}
		n = parse_member_tail(ps, n);
	} else {
		n = parse_member_tail(ps, parse_primary(ps));
	}
	while (n && n_ops > 0) {
		n_ops--;
		n = mknode(ps, ops[n_ops] == '!' ? N_NOT : N_NEG, n, NULL,
			   NULL);
		if (n)
			n->pos = op_at[n_ops];
	}
	return n;
}

/* n op r, r parsed by operand after the operator's token. */
static struct node *parse_bin(struct parser *ps, struct node *n, enum binop op,
			      struct node *(*operand)(struct parser *))
{
	size_t at = ps->t_pos;
	next(ps);
	struct node *r = operand(ps);
	if (!r)
		return NULL;
	n = mknode(ps, N_BIN, n, r, NULL);
	if (n) {
		n->op = op;
		n->pos = at;
	}
	return n;
}

static struct node *parse_mul(struct parser *ps)
{
	struct node *n = parse_unary(ps);
	while (n &&
	       (is_punct(ps, '*') || is_punct(ps, '/') || is_punct(ps, '%'))) {
		enum binop op = ps->ch == '*'	? B_MUL
				: ps->ch == '/' ? B_DIV
						: B_MOD;
		n = parse_bin(ps, n, op, parse_unary);
	}
	return ps->failed ? NULL : n;
}

static struct node *parse_add(struct parser *ps)
{
	struct node *n = parse_mul(ps);
	while (n && (is_punct(ps, '+') || is_punct(ps, '-'))) {
		n = parse_bin(ps, n, ps->ch == '+' ? B_ADD : B_SUB, parse_mul);
	}
	return ps->failed ? NULL : n;
}

static struct node *parse_rel(struct parser *ps)
{
	struct node *n = parse_add(ps);
	while (n && !ps->failed) {
		enum binop op;
		if (ps->t == T_EQ)
			op = B_EQ;
		else if (ps->t == T_NE)
			op = B_NE;
		else if (ps->t == T_LE)
			op = B_LE;
		else if (ps->t == T_GE)
			op = B_GE;
		else if (ps->t == T_IN)
			op = B_IN;
		else if (is_punct(ps, '<'))
			op = B_LT;
		else if (is_punct(ps, '>'))
			op = B_GT;
		else
			break;
		n = parse_bin(ps, n, op, parse_add);
	}
	return ps->failed ? NULL : n;
}

/* terms[lo..hi) joined by k as a balanced tree, as cel-go balances
   chains of && and ||. */
static struct node *balance(struct parser *ps, enum nkind k,
			    struct node **terms, int lo, int hi)
{
	if (hi - lo == 1)
		return terms[lo];
	int mid = lo + (hi - lo) / 2;
	struct node *l = balance(ps, k, terms, lo, mid);
	struct node *r = balance(ps, k, terms, mid, hi);
	if (!l || !r)
		return NULL;
	return mknode(ps, k, l, r, NULL);
}

static struct node *parse_logic(struct parser *ps, bool is_and)
{
	struct node **terms = NULL, *n = NULL;
	int cnt = 0, cap = 0;
	enum tok op = is_and ? T_AND : T_OR;
	for (;;) {
		struct node *t = is_and ? parse_rel(ps) : parse_logic(ps, true);
		if (!t || !push_node(ps, &terms, &cnt, &cap, t))
			goto out;
		if (ps->t != op)
			break;
		next(ps);
	}
	n = balance(ps, is_and ? N_AND : N_OR, terms, 0, cnt);
out:
	free(terms);
	return ps->failed ? NULL : n;
}

static struct node *parse_expr(struct parser *ps)
{
	if (++ps->depth > MAX_DEPTH) {
		too_deep(ps);
		return NULL;
	}
	struct node *n = parse_logic(ps, false);
	if (n && is_punct(ps, '?')) {
		size_t q = ps->t_pos;
		next(ps);
		struct node *t = parse_logic(ps, false);
		if (t && expect(ps, ':')) {
			struct node *f = parse_expr(ps);
			n = f ? mknode(ps, N_COND, n, t, f) : NULL;
			if (n)
				n->pos = q;
		}
	}
	ps->depth--;
	return ps->failed ? NULL : n;
}

/* ------------------------------------------------------------ resolver */

struct scope {
	const char *name;
	int slot;
	const struct scope *up;
};

/* The type names a rule may write: CEL's own, and the qualified names
   of the types kube's libraries add (a variable may shadow the first). */
static bool is_type_name(const char *s)
{
	static const char *const names[] = {
	    "int",
	    "uint",
	    "double",
	    "bool",
	    "string",
	    "bytes",
	    "list",
	    "map",
	    "null_type",
	    "type",
	    "google.protobuf.Duration",
	    "google.protobuf.Timestamp",
	    "net.IP",
	    "net.CIDR",
	    "kubernetes.URL",
	    "kubernetes.Quantity",
	    "kubernetes.Semver",
	    "kubernetes.NamedFormat",
	    "optional_type",
	};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strcmp(s, names[i]))
			return true;
	return false;
}

/* n as a dotted name (a.b.c: selections down to an identifier) into buf;
   false when it is not one or does not fit. */
static bool dotted_name(const struct node *n, char *buf, size_t size)
{
	if (n->k == N_IDENT) {
		if (strlen(n->s) >= size)
			return false;
		strcpy(buf, n->s);
		return true;
	}
	if (n->k != N_SELECT || n->opt_sel || !dotted_name(n->a, buf, size))
		return false;
	size_t len = strlen(buf);
	if (len + 1 + n->s_len >= size)
		return false;
	buf[len] = '.';
	memcpy(buf + len + 1, n->s, n->s_len + 1);
	return true;
}

/* Bind identifiers: macro variables (innermost first), self, oldSelf. */
static void resolve(struct parser *ps, struct node *n, const struct scope *sc)
{
	if (!n || ps->failed)
		return;
	if (n->k == N_IDENT) {
		for (const struct scope *s = sc; s; s = s->up)
			if (!strcmp(s->name, n->s)) {
				n->k = N_VAR;
				n->slot = s->slot;
				return;
			}
		if (!strcmp(n->s, "self")) {
			n->k = N_SELF;
		} else if (!strcmp(n->s, "oldSelf")) {
			n->k = N_OLD;
			ps->prog->old_self = true;
		} else if (is_type_name(n->s)) {
			n->k = N_TYPE;
		} else {
			fail_check(ps, n->pos,
				   "undeclared reference to '%s' (in "
				   "container '')",
				   n->s);
		}
		return;
	}
	/* a qualified type name, google.protobuf.Duration: unless its
	   first name is a variable */
	char dn[64];
	if (n->k == N_SELECT && dotted_name(n, dn, sizeof dn) &&
	    is_type_name(dn)) {
		const struct node *root = n;
		while (root->k == N_SELECT)
			root = root->a;
		bool var =
		    !strcmp(root->s, "self") || !strcmp(root->s, "oldSelf");
		for (const struct scope *s = sc; s && !var; s = s->up)
			var = !strcmp(s->name, root->s);
		if (!var) {
			char *name = strdup(dn);
			if (!name) {
				nomem(ps);
				return;
			}
			free(n->s);
			n->s = name;
			n->s_len = strlen(name);
			n->k = N_TYPE;
			/* the selections under it stay in the node list
			   and are freed with it; nothing evaluates them */
			return;
		}
	}
	if (n->k == N_COMP) {
		resolve(ps, n->a, sc);
		struct scope inner = {n->s, 2 + ps->n_slots++, sc};
		struct scope inner2 = {n->s2, 0, &inner};
		n->slot = inner.slot;
		if (n->s2) {
			inner2.slot = 2 + ps->n_slots++;
			n->slot2 = inner2.slot;
		}
		resolve(ps, n->b, n->s2 ? &inner2 : &inner);
		resolve(ps, n->c, n->s2 ? &inner2 : &inner);
		return;
	}
	resolve(ps, n->a, sc);
	resolve(ps, n->b, sc);
	resolve(ps, n->c, sc);
	for (int i = 0; i < n->n_args; i++)
		resolve(ps, n->args[i], sc);
}

/* ------------------------------------------------- field check */

/* What a node's value is known to be: a schema node (a resource root or
   not), the metadata kube declares at a resource root (name and
   generateName), or anything. */
enum stk { ST_ANY, ST_NODE, ST_META };

struct sty {
	enum stk k;
	const void *node;
	bool rroot;
};

struct fchk {
	const struct cel_schema *ops;
	unsigned (*decl)(const void *node);
	struct sty self;
	bool old_opt; /* oldSelf is an optional (optionalOldSelf) */
	struct sty *slots;
	/* the size of a macro's variable over a computed value (by slot;
	   vsized false: unknown) */
	double *vsize;
	bool *vsized;
	enum skind *vkind; /* its type, from a computed list's elements */
	char *why;
	size_t why_size;
	bool failed;
	size_t at;     /* the selection being checked */
	size_t err_at; /* where it failed */
	int in_format; /* under a format() call: literals may mix types */
};

static struct sty st_node(struct fchk *c, const void *node)
{
	struct sty t = {ST_ANY, NULL, false};
	if (node && (c->decl(node) & CEL_DECL_EXPOSED)) {
		t.k = ST_NODE;
		t.node = node;
		t.rroot = (c->decl(node) & CEL_DECL_EMBEDDED) != 0;
	}
	return t;
}

static bool is_string_prop(struct fchk *c, const void *node, const char *n)
{
	const void *p = node ? c->ops->prop(node, n) : NULL;
	return p && c->ops->type(p) == CEL_S_STRING;
}

/* kube's WithTypeAndObjectMeta keeps a resource root's schema as it is
   only when it declares kind, apiVersion and metadata with name and
   generateName, all strings; else those are what it declares. */
static bool meta_declared(struct fchk *c, const void *node)
{
	const void *m = c->ops->prop(node, "metadata");
	return is_string_prop(c, node, "kind") &&
	       is_string_prop(c, node, "apiVersion") && m &&
	       (c->decl(m) & CEL_DECL_OBJECT) && is_string_prop(c, m, "name") &&
	       is_string_prop(c, m, "generateName");
}

static void undefined(struct fchk *c, const char *name)
{
	if (!c->failed && c->why_size)
		put_fmt(c->why, c->why_size, "undefined field '%s'", name);
	if (!c->failed)
		c->err_at = c->at;
	c->failed = true;
}

/* t.name, checked: the field's type. */
static struct sty select_field(struct fchk *c, struct sty t, const char *name,
			       size_t len)
{
	struct sty any = {ST_ANY, NULL, false};
	if (t.k == ST_META) {
		if (strcmp(name, "name") && strcmp(name, "generateName"))
			undefined(c, name);
		return any;
	}
	if (t.k != ST_NODE)
		return any;
	unsigned d = c->decl(t.node);
	if (d & CEL_DECL_MAP)
		return st_node(c, c->ops->addl(t.node));
	if (!(d & CEL_DECL_OBJECT))
		return any;
	if (t.rroot && !meta_declared(c, t.node)) {
		if (!strcmp(name, "kind") || !strcmp(name, "apiVersion"))
			return any;
		if (!strcmp(name, "metadata")) {
			struct sty m = {ST_META, NULL, false};
			return m;
		}
	}
	char small[256], *real = len < sizeof small ? small : malloc(len + 1);
	size_t rn;
	struct sty r = any;
	if (!real)
		return any;
	if (!unescape(name, len, real, &rn) || memchr(real, 0, rn)) {
		undefined(c, name);
	} else {
		real[rn] = 0;
		const void *p = c->ops->prop(t.node, real);
		if (!p || !(c->decl(p) & CEL_DECL_EXPOSED))
			undefined(c, name);
		else
			r = st_node(c, p);
	}
	if (real != small)
		free(real);
	return r;
}

/* The schema node of an element of the list or map at s, else anything. */
static struct sty elem_node(struct fchk *c, struct sty s)
{
	struct sty any = {ST_ANY, NULL, false};
	if (s.k != ST_NODE)
		return any;
	if (c->decl(s.node) & CEL_DECL_LIST)
		return st_node(c, c->ops->items(s.node));
	if (c->decl(s.node) & CEL_DECL_MAP)
		return st_node(c, c->ops->addl(s.node));
	return any;
}

static struct sty check_node(struct fchk *c, const struct node *n)
{
	struct sty any = {ST_ANY, NULL, false}, t;
	if (!n || c->failed)
		return any;
	switch (n->k) {
	case N_SELF:
	case N_OLD:
		return c->self;
	case N_VAR:
		return c->slots[n->slot];
	case N_SELECT:
		/* x.?f checks f as x.f does (cel-go's checkOptSelect): the
		   value an optional holds has the field's schema */
		t = check_node(c, n->a);
		c->at = n->pos;
		return select_field(c, t, n->s, n->s_len);
	case N_HAS:
		check_node(c, n->a);
		return any;
	case N_INDEX:
		t = check_node(c, n->a);
		check_node(c, n->b);
		return elem_node(c, t);
	case N_COMP: {
		t = check_node(c, n->a);
		bool list = t.k == ST_NODE && (c->decl(t.node) & CEL_DECL_LIST);
		bool map = t.k == ST_NODE && (c->decl(t.node) & CEL_DECL_MAP);
		enum macro m = (enum macro)n->op;
		struct sty elem = any;
		if (list)
			elem = st_node(c, c->ops->items(t.node));
		if (m >= M2_ALL) {
			c->slots[n->slot] = any; /* an index or a key */
			c->slots[n->slot2] =
			    map ? st_node(c, c->ops->addl(t.node)) : elem;
		} else {
			/* a list's element; a map's key; an optional's
			   value */
			c->slots[n->slot] =
			    (m == M_OPTMAP || m == M_OPTFLAT) ? any : elem;
		}
		check_node(c, n->b);
		check_node(c, n->c);
		return any;
	}
	case N_INT:
	case N_UINT:
	case N_DOUBLE:
	case N_STRING:
	case N_BYTES:
	case N_BOOL:
	case N_NULL:
	case N_TYPE:
	case N_IDENT:
	case N_LIST:
	case N_MAP:
	case N_NOT:
	case N_NEG:
	case N_BIN:
	case N_AND:
	case N_OR:
	case N_COND:
	case N_CALL:
		break;
	}
	check_node(c, n->a);
	check_node(c, n->b);
	check_node(c, n->c);
	for (int i = 0; i < n->n_args; i++)
		check_node(c, n->args[i]);
	return any;
}

/* ------------------------------------------------- type check */

/* What an expression's type is known to be from its form and the schema.
   A type not known here is dyn to kube's checker's view as lapis models
   it, and dyn matches everything: only known types can clash. */
enum skind {
	SK_UNKNOWN,
	SK_BOOL,
	SK_INT,
	SK_UINT,
	SK_DOUBLE,
	SK_STRING,
	SK_BYTES,
	SK_LIST,
	SK_MAP,
	SK_NULL,
	SK_OBJECT, /* a schema's object */
	/* kube's library types, as its functions return them */
	SK_QUANTITY,
	SK_SEMVER,
	SK_IP,
	SK_CIDR,
	SK_URL,
	SK_FORMAT,
	SK_OTHER, /* a duration, a timestamp: never in a type error */
};

/* A type: a list's elements and a map's values in e, a map's keys in
   key, when they are scalars (else unknown); opt: an optional of it
   (only where lapis knows what it holds: oldSelf under optionalOldSelf,
   and what is selected or indexed from it). */
struct tty {
	enum skind k, e, key;
	bool opt;
};

/* The kube library types whose equality kube's estimator prices at 1
   (library.CostEstimator, `_==_`), and the rest of them. */
enum lib { LIB_NONE, LIB_QUANTITY, LIB_SEMVER, LIB_IP, LIB_CIDR, LIB_OTHER };

/* A node's type and, when it is one, its schema node. */
struct tres {
	struct tty t;
	struct sty s;
	/* a floor under kube's cost estimate of the node, and the most its
	   value holds (kube's size estimate; 0 unknown) */
	double cost, size;
	bool exact; /* cost is kube's estimate itself */
	bool sized; /* size is kube's estimate itself */
	/* kube cannot size it (a string or type a call returns): its
	   estimate takes the largest size, so that == takes the other
	   side's */
	bool unbounded;
	bool opt;     /* an optional */
	enum lib lib; /* a value of kube's libraries, by its type */
};

/* cel-go's estimate of a concatenation with an operand it cannot size:
   the largest size (MaxUint64) times the traversal factor. */
#define UNSIZED_CONCAT_COST 1.8446744073709552e18

/* cel-go's cost factors (common/cost.go) */
#define TRAVERSAL_FACTOR 0.1 /* per character of a string walked */
#define REGEX_FACTOR 0.25    /* per character of a pattern */
#define LIST_CREATE_COST 10
#define MAP_CREATE_COST 30
#define COST_CAP 1e30

/* x rounded up, as cel-go's multiplyByCostFactor rounds (x >= 0). */
static double up(double x)
{
	if (x >= 1e18)
		return x;
	double t = (double)(uint64_t)x;
	return t < x ? t + 1 : t;
}

static double node_size(struct fchk *c, struct sty s)
{
	return s.k == ST_NODE && c->ops->max_size ? c->ops->max_size(s.node)
						  : 0;
}

static enum skind schema_kind(struct fchk *c, struct sty t)
{
	if (t.k != ST_NODE)
		return SK_UNKNOWN;
	switch (c->ops->type(t.node)) {
	case CEL_S_STRING:
		return SK_STRING;
	case CEL_S_INT:
		return SK_INT;
	case CEL_S_DOUBLE:
		return SK_DOUBLE;
	case CEL_S_BOOL:
		return SK_BOOL;
	case CEL_S_ARRAY:
		return (c->decl(t.node) & CEL_DECL_LIST) ? SK_LIST : SK_UNKNOWN;
	case CEL_S_MAP:
		return (c->decl(t.node) & CEL_DECL_MAP) ? SK_MAP : SK_UNKNOWN;
	case CEL_S_BYTES:
		return SK_BYTES;
	case CEL_S_OBJECT:
		return (c->decl(t.node) & CEL_DECL_OBJECT) ? SK_OBJECT
							   : SK_UNKNOWN;
	case CEL_S_DURATION:
	case CEL_S_TIMESTAMP:
		return SK_OTHER;
	case CEL_S_ANY:
	case CEL_S_INT_OR_STRING:
		break;
	}
	return SK_UNKNOWN;
}

/* One of kube's library types. */
static bool is_lib(enum skind k)
{
	return k >= SK_QUANTITY && k <= SK_FORMAT;
}

static bool is_scalar(enum skind k)
{
	return k != SK_UNKNOWN && k != SK_LIST && k != SK_MAP && k != SK_OTHER;
}

static struct tty schema_tty(struct fchk *c, struct sty s)
{
	struct tty t = {schema_kind(c, s), SK_UNKNOWN, SK_UNKNOWN};
	if (t.k == SK_LIST)
		t.e = schema_kind(c, st_node(c, c->ops->items(s.node)));
	if (t.k == SK_MAP) {
		t.key = SK_STRING;
		t.e = schema_kind(c, st_node(c, c->ops->addl(s.node)));
	}
	if (!is_scalar(t.e))
		t.e = SK_UNKNOWN;
	return t;
}

static const char *kind_name(enum skind k)
{
	static const char *const names[] = {
	    [SK_BOOL] = "bool",
	    [SK_INT] = "int",
	    [SK_UINT] = "uint",
	    [SK_DOUBLE] = "double",
	    [SK_STRING] = "string",
	    [SK_BYTES] = "bytes",
	    [SK_NULL] = "null",
	    [SK_OBJECT] = "object",
	    [SK_QUANTITY] = "kubernetes.Quantity",
	    [SK_SEMVER] = "kubernetes.Semver",
	    [SK_IP] = "net.IP",
	    [SK_CIDR] = "net.CIDR",
	    [SK_URL] = "kubernetes.URL",
	    [SK_FORMAT] = "kubernetes.NamedFormat",
	};
	return is_scalar(k) ? names[k] : NULL;
}

/* t as cel-go's FormatCELType writes it, or false when lapis cannot name
   it (then it is in no error). */
static bool tty_name(struct tty t, char *buf, size_t size)
{
	if (t.opt) {
		char in[96];
		t.opt = false;
		if (!tty_name(t, in, sizeof in))
			return false;
		int w = snprintf(buf, size, "optional_type(%s)", in);
		return w > 0 && (size_t)w < size;
	}
	const char *e = kind_name(t.e), *k = kind_name(t.key);
	if (t.k == SK_LIST && e)
		snprintf(buf, size, "list(%s)", e);
	else if (t.k == SK_MAP && e && k)
		snprintf(buf, size, "map(%s, %s)", k, e);
	else if (kind_name(t.k))
		snprintf(buf, size, "%s", kind_name(t.k));
	else
		return false;
	return true;
}

/* Whether a value of kind a may stand where b is expected (cel-go's
   isAssignable): unknowns match; null stands for an object; two objects
   are let through (kube names each schema node's type apart, lapis does
   not). */
static bool kind_fits(enum skind a, enum skind b)
{
	if (a == SK_UNKNOWN || b == SK_UNKNOWN || a == SK_OTHER ||
	    b == SK_OTHER || a == b)
		return true;
	return (a == SK_NULL && (b == SK_OBJECT || is_lib(b))) ||
	       ((a == SK_OBJECT || is_lib(a)) && b == SK_NULL);
}

static struct tres tcheck(struct fchk *c, const struct node *n);

static bool tty_fits(struct tty a, struct tty b)
{
	if (!kind_fits(a.k, b.k) || a.opt != b.opt)
		return false;
	if (a.k == SK_LIST && b.k == SK_LIST)
		return kind_fits(a.e, b.e);
	if (a.k == SK_MAP && b.k == SK_MAP)
		return kind_fits(a.e, b.e) && kind_fits(a.key, b.key);
	return true;
}

static bool known(struct tty t)
{
	return t.k != SK_UNKNOWN && t.k != SK_OTHER;
}

/* A type error at at; of several, cel-go shows first the one that comes
   first in the text. */
static void type_error(struct fchk *c, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void type_error(struct fchk *c, size_t at, const char *fmt, ...)
{
	if (c->failed && at >= c->err_at)
		return;
	if (c->why_size) {
		va_list ap;
		va_start(ap, fmt);
		put_vfmt(c->why, c->why_size, fmt, ap);
		va_end(ap);
	}
	c->failed = true;
	c->err_at = at;
}

/* cel-go's "found no matching overload"; member: args[0] is the target.
   A type lapis cannot name is dyn when dyn is set, else there is no
   error (lapis cannot tell). */
static void no_match_as(struct fchk *c, size_t at, const char *fn,
			const struct tty *args, int n, bool member, bool dyn)
{
	char sig[256], name[96];
	size_t o = 0;
	sig[0] = 0;
	for (int i = 0; i < n; i++) {
		if (!tty_name(args[i], name, sizeof name)) {
			if (!dyn)
				return;
			snprintf(name, sizeof name, "dyn");
		}
		const char *pre = i == 0	     ? (member ? "" : "(")
				  : member && i == 1 ? ""
						     : ", ";
		o += (size_t)snprintf(sig + o, sizeof sig - o, "%s%s%s", pre,
				      name, member && i == 0 ? ".(" : "");
		if (o >= sizeof sig)
			return;
	}
	type_error(c, at,
		   "found no matching overload for '%s' applied to '%s%s)'", fn,
		   sig, n == 0 ? "(" : "");
}

static void no_match(struct fchk *c, size_t at, const char *fn,
		     const struct tty *args, int n, bool member)
{
	no_match_as(c, at, fn, args, n, member, false);
}

/* The type of literal members nodes[0], nodes[stride] ... (cnt of them),
   checked, which HomogeneousAggregateLiterals requires to agree; a
   member written with '?' (its flag on nodes[i * stride + opt]) is an
   optional's value. */
static enum skind join_members(struct fchk *c, struct node *const *nodes,
			       int stride, int cnt, int opt, struct tres *sum)
{
	struct tty prev = {SK_UNKNOWN, SK_UNKNOWN, SK_UNKNOWN};
	bool all = cnt > 0;
	char a[64], b[64];
	for (int i = 0; i < cnt; i++) {
		const struct node *m = nodes[i * stride];
		struct tres mt = tcheck(c, m);
		struct tty t = mt.t;
		sum->cost += mt.cost;
		sum->exact = sum->exact && mt.exact &&
			     !nodes[i * stride + opt]->opt_elem;
		if (nodes[i * stride + opt]->opt_elem || !known(t)) {
			all = false;
		} else if (!known(prev)) {
			prev = t;
		} else if (!tty_fits(prev, t)) {
			/* cel-go exempts what format() is given */
			if (!c->in_format && tty_name(prev, a, sizeof a) &&
			    tty_name(t, b, sizeof b))
				type_error(c, m->pos,
					   "expected type '%s' but found '%s'",
					   a, b);
			all = false;
		} else if (prev.k != t.k) {
			all = false; /* null beside objects */
		}
	}
	return all && is_scalar(prev.k) ? prev.k : SK_UNKNOWN;
}

static const char *const bin_fn[] = {
    [B_EQ] = "_==_", [B_NE] = "_!=_", [B_LT] = "_<_",  [B_LE] = "_<=_",
    [B_GT] = "_>_",  [B_GE] = "_>=_", [B_IN] = "@in",  [B_ADD] = "_+_",
    [B_SUB] = "_-_", [B_MUL] = "_*_", [B_DIV] = "_/_", [B_MOD] = "_%_",
};

static bool numeric(enum skind k)
{
	return k == SK_INT || k == SK_UINT || k == SK_DOUBLE;
}

/* a op b, both known: whether an overload takes them (cel-go's standard
   library with kube's CrossTypeNumericComparisons), and its result. */
static bool bin_overload(enum binop op, struct tty a, struct tty b,
			 struct tty *r)
{
	struct tty boolean = {SK_BOOL, SK_UNKNOWN, SK_UNKNOWN};
	*r = boolean;
	switch (op) {
	case B_EQ:
	case B_NE:
		return tty_fits(a, b);
	case B_LT:
	case B_LE:
	case B_GT:
	case B_GE:
		if (numeric(a.k) && numeric(b.k))
			return true;
		return a.k == b.k &&
		       (a.k == SK_STRING || a.k == SK_BYTES || a.k == SK_BOOL);
	case B_IN:
		if (b.k == SK_LIST)
			return kind_fits(a.k, b.e) &&
			       (is_scalar(a.k) || b.e == SK_UNKNOWN);
		if (b.k == SK_MAP)
			return kind_fits(a.k, b.key) &&
			       (is_scalar(a.k) || b.key == SK_UNKNOWN);
		return false;
	case B_ADD:
		if (a.k == SK_LIST && b.k == SK_LIST) {
			*r = a;
			if (a.e == SK_UNKNOWN)
				r->e = b.e;
			return kind_fits(a.e, b.e);
		}
		*r = a;
		return a.k == b.k &&
		       (numeric(a.k) || a.k == SK_STRING || a.k == SK_BYTES);
	case B_SUB:
	case B_MUL:
	case B_DIV:
		*r = a;
		return a.k == b.k && numeric(a.k);
	case B_MOD:
		*r = a;
		return a.k == b.k && (a.k == SK_INT || a.k == SK_UINT);
	}
	return true;
}

static void tcheck_bin(struct fchk *c, const struct node *n, struct tres *r)
{
	struct tres a = tcheck(c, n->a), b = tcheck(c, n->b);
	enum binop op = (enum binop)n->op;
	bool text = (a.t.k == SK_STRING || a.t.k == SK_BYTES) && a.t.k == b.t.k;
	/* cel-go: == and != walk the smaller value (0 for a field of a
	   scalar type, 1 for a scalar literal), comparing or joining strings
	   walks them, in walks a list; other operators on numbers cost 1 */
	double least = a.size < b.size ? a.size : b.size;
	bool sized = a.sized && b.sized;
	if (a.unbounded != b.unbounded) { /* the other side's size */
		least = a.unbounded ? b.size : a.size;
		sized = a.unbounded ? b.sized : a.sized;
	} else if (a.unbounded) {
		sized = false; /* kube's is past any limit; a floor here */
	}
	r->cost = a.cost + b.cost;
	r->exact = a.exact && b.exact;
	if (op == B_EQ && a.lib == b.lib && a.lib != LIB_NONE &&
	    a.lib != LIB_OTHER) {
		r->cost += 1; /* kube's estimator: quantities, versions,
				 addresses compare at 1 */
	} else if (op == B_EQ || op == B_NE) {
		r->cost += up(least * TRAVERSAL_FACTOR);
		r->exact = r->exact && sized;
	} else if (text && op != B_IN && op <= B_GE) {
		r->cost += up(least * TRAVERSAL_FACTOR);
		r->exact = r->exact && sized;
	} else if (text && op == B_ADD) {
		/* cel-go adds the sizes: one it cannot size is the largest,
		   so the concatenation is past any limit (and so is its
		   result's size) */
		if (a.unbounded || b.unbounded) {
			r->cost += UNSIZED_CONCAT_COST;
			r->unbounded = true;
		} else {
			r->cost += up((a.size + b.size) * TRAVERSAL_FACTOR);
		}
		r->exact = r->exact && sized;
	} else if (op == B_IN && b.t.k == SK_LIST) {
		r->cost += b.size;
		r->exact = r->exact && b.sized;
	} else if ((op == B_IN && b.t.k == SK_MAP) ||
		   (a.t.k == SK_OTHER && b.t.k == SK_OTHER && op != B_IN) ||
		   (numeric(a.t.k) && numeric(b.t.k) && op != B_IN) ||
		   (op == B_ADD && a.t.k == SK_LIST && b.t.k == SK_LIST) ||
		   (op <= B_GE && a.t.k == SK_BOOL && b.t.k == SK_BOOL)) {
		r->cost += 1;
	} else {
		r->exact = false;
	}
	if (op == B_ADD && (text || (a.t.k == SK_LIST && b.t.k == SK_LIST))) {
		r->size = a.size + b.size;
		r->sized = sized;
	}

	if (op <= B_IN)
		r->t.k = SK_BOOL;
	else if (a.t.k == SK_OTHER && b.t.k == SK_OTHER)
		r->t.k = SK_OTHER; /* durations and timestamps */
	if (!known(a.t) || !known(b.t))
		return;
	struct tty out, args[2] = {a.t, b.t};
	if (a.t.opt || b.t.opt) {
		/* only == and != take optionals, two of one type */
		if ((op != B_EQ && op != B_NE) || !tty_fits(a.t, b.t))
			no_match(c, n->pos, bin_fn[op], args, 2, false);
		return;
	}
	if (!bin_overload(op, a.t, b.t, &out)) {
		no_match(c, n->pos, bin_fn[op], args, 2, false);
		return;
	}
	r->t = out;
}

/* The string functions' overloads (cel-go's standard ones and its
   strings extension): the target, a string or (join) a list of strings,
   and each argument's kind; matches(s, re) has its string first. */
static const struct {
	enum fn fn;
	bool list_target;
	enum skind args[3];
} str_sigs[] = {
    {F_CONTAINS, false, {SK_STRING}},
    {F_STARTS, false, {SK_STRING}},
    {F_ENDS, false, {SK_STRING}},
    {F_MATCHES, false, {SK_STRING}},
    {F_LOWER, false, {SK_UNKNOWN}},
    {F_UPPER, false, {SK_UNKNOWN}},
    {F_TRIM, false, {SK_UNKNOWN}},
    {F_SPLIT, false, {SK_STRING, SK_INT}},
    {F_REPLACE, false, {SK_STRING, SK_STRING, SK_INT}},
    {F_SUBSTRING, false, {SK_INT, SK_INT}},
    {F_CHARAT, false, {SK_INT}},
    {F_JOIN, true, {SK_STRING}},
    {F_FORMAT, false, {SK_LIST}},
};

/* Whether fn, when a string function above, takes these n arguments,
   the target first. */
static bool string_fn_takes(int fn, const struct tty *args, int n)
{
	for (size_t i = 0; i < sizeof str_sigs / sizeof *str_sigs; i++) {
		if ((int)str_sigs[i].fn != fn)
			continue;
		bool ok =
		    str_sigs[i].list_target
			? args[0].k == SK_LIST && (args[0].e == SK_STRING ||
						   args[0].e == SK_UNKNOWN)
			: args[0].k == SK_STRING;
		for (int j = 1; j < n && j <= 3; j++)
			ok = ok && args[j].k == str_sigs[i].args[j - 1];
		return ok;
	}
	return true;
}

/* The overloads of kube's library functions (Kubernetes 1.33): the
   receiver's kind for a method, and each argument's kind (an alternative
   for the first); a function with several entries takes what any one
   takes. */
static const struct {
	enum fn fn;
	bool member;
	enum skind recv, args[2], alt;
} lib_sigs[] = {
    {F_QUANTITY, false, 0, {SK_STRING}, 0},
    {F_ISQUANTITY, false, 0, {SK_STRING}, 0},
    {F_SEMVER, false, 0, {SK_STRING, SK_BOOL}, 0},
    {F_ISSEMVER, false, 0, {SK_STRING, SK_BOOL}, 0},
    {F_IP, false, 0, {SK_STRING}, 0},
    {F_ISIP, false, 0, {SK_STRING}, 0},
    {F_IP_CANON, false, 0, {SK_STRING}, 0},
    {F_CIDR, false, 0, {SK_STRING}, 0},
    {F_ISCIDR, false, 0, {SK_STRING}, 0},
    {F_URL, false, 0, {SK_STRING}, 0},
    {F_ISURL, false, 0, {SK_STRING}, 0},
    {F_SIGN, true, SK_QUANTITY, {0}, 0},
    {F_ISINTEGER, true, SK_QUANTITY, {0}, 0},
    {F_ASINTEGER, true, SK_QUANTITY, {0}, 0},
    {F_ASFLOAT, true, SK_QUANTITY, {0}, 0},
    {F_QADD, true, SK_QUANTITY, {SK_QUANTITY}, SK_INT},
    {F_QSUB, true, SK_QUANTITY, {SK_QUANTITY}, SK_INT},
    {F_QLT, true, SK_QUANTITY, {SK_QUANTITY}, 0},
    {F_QLT, true, SK_SEMVER, {SK_SEMVER}, 0},
    {F_QGT, true, SK_QUANTITY, {SK_QUANTITY}, 0},
    {F_QGT, true, SK_SEMVER, {SK_SEMVER}, 0},
    {F_QCMP, true, SK_QUANTITY, {SK_QUANTITY}, 0},
    {F_QCMP, true, SK_SEMVER, {SK_SEMVER}, 0},
    {F_MAJOR, true, SK_SEMVER, {0}, 0},
    {F_MINOR, true, SK_SEMVER, {0}, 0},
    {F_PATCH, true, SK_SEMVER, {0}, 0},
    {F_FAMILY, true, SK_IP, {0}, 0},
    {F_IS_UNSPEC, true, SK_IP, {0}, 0},
    {F_IS_LOOPBACK, true, SK_IP, {0}, 0},
    {F_IS_LL_MCAST, true, SK_IP, {0}, 0},
    {F_IS_LL_UCAST, true, SK_IP, {0}, 0},
    {F_IS_GLOBAL, true, SK_IP, {0}, 0},
    {F_IP, true, SK_CIDR, {0}, 0},
    {F_PREFIXLEN, true, SK_CIDR, {0}, 0},
    {F_MASKED, true, SK_CIDR, {0}, 0},
    {F_CONTAINS_IP, true, SK_CIDR, {SK_STRING}, SK_IP},
    {F_CONTAINS_CIDR, true, SK_CIDR, {SK_STRING}, SK_CIDR},
    {F_GETSCHEME, true, SK_URL, {0}, 0},
    {F_GETHOST, true, SK_URL, {0}, 0},
    {F_GETHOSTNAME, true, SK_URL, {0}, 0},
    {F_GETPORT, true, SK_URL, {0}, 0},
    {F_GETPATH, true, SK_URL, {0}, 0},
    {F_GETQUERY, true, SK_URL, {0}, 0},
    {F_VALIDATE, true, SK_FORMAT, {SK_STRING}, 0},
};

/* Whether fn, when one of kube's library functions above, takes these n
   arguments (the receiver first, when member). */
static bool lib_fn_takes(int fn, bool member, const struct tty *args, int n)
{
	bool listed = false;
	for (size_t i = 0; i < sizeof lib_sigs / sizeof *lib_sigs; i++) {
		if ((int)lib_sigs[i].fn != fn)
			continue;
		listed = true;
		if (lib_sigs[i].member != member ||
		    (member && args[0].k != lib_sigs[i].recv))
			continue;
		bool ok = true;
		for (int j = member ? 1 : 0, a = 0; j < n && a < 2; j++, a++)
			ok = ok && (args[j].k == lib_sigs[i].args[a] ||
				    (a == 0 && lib_sigs[i].alt &&
				     args[j].k == lib_sigs[i].alt));
		if (ok)
			return true;
	}
	return !listed;
}

static const char *fn_name(int fn)
{
	for (size_t i = 0; i < sizeof fns / sizeof *fns; i++)
		if ((int)fns[i].id == fn)
			return fns[i].name;
	return NULL;
}

static enum skind call_kind(int fn)
{
	static const struct {
		enum fn fn;
		enum skind k;
	} kinds[] = {
	    {F_CONTAINS, SK_BOOL},
	    {F_STARTS, SK_BOOL},
	    {F_ENDS, SK_BOOL},
	    {F_MATCHES, SK_BOOL},
	    {F_BOOL, SK_BOOL},
	    {F_ISIP, SK_BOOL},
	    {F_ISCIDR, SK_BOOL},
	    {F_ISURL, SK_BOOL},
	    {F_HASVALUE, SK_BOOL},
	    {F_SIZE, SK_INT},
	    {F_INT, SK_INT},
	    {F_UINT, SK_UINT},
	    {F_DOUBLE, SK_DOUBLE},
	    {F_LOWER, SK_STRING},
	    {F_UPPER, SK_STRING},
	    {F_TRIM, SK_STRING},
	    {F_STRING, SK_STRING},
	    {F_SUBSTRING, SK_STRING},
	    {F_REPLACE, SK_STRING},
	    {F_JOIN, SK_STRING},
	    {F_SPLIT, SK_LIST},
	    /* the libraries' results, as cel-go and kube declare them */
	    {F_INDEXOF, SK_INT},
	    {F_LASTINDEXOF, SK_INT},
	    {F_GETFULLYEAR, SK_INT},
	    {F_GETMONTH, SK_INT},
	    {F_GETDAYOFMONTH, SK_INT},
	    {F_GETDATE, SK_INT},
	    {F_GETDAYOFWEEK, SK_INT},
	    {F_GETDAYOFYEAR, SK_INT},
	    {F_GETHOURS, SK_INT},
	    {F_GETMINUTES, SK_INT},
	    {F_GETSECONDS, SK_INT},
	    {F_GETMILLIS, SK_INT},
	    {F_SIGN, SK_INT},
	    {F_ASINTEGER, SK_INT},
	    {F_QCMP, SK_INT},
	    {F_MAJOR, SK_INT},
	    {F_MINOR, SK_INT},
	    {F_PATCH, SK_INT},
	    {F_FAMILY, SK_INT},
	    {F_PREFIXLEN, SK_INT},
	    {F_ASFLOAT, SK_DOUBLE},
	    {F_ISINTEGER, SK_BOOL},
	    {F_QLT, SK_BOOL},
	    {F_QGT, SK_BOOL},
	    {F_ISQUANTITY, SK_BOOL},
	    {F_ISSEMVER, SK_BOOL},
	    {F_IS_UNSPEC, SK_BOOL},
	    {F_IS_LOOPBACK, SK_BOOL},
	    {F_IS_LL_MCAST, SK_BOOL},
	    {F_IS_LL_UCAST, SK_BOOL},
	    {F_IS_GLOBAL, SK_BOOL},
	    {F_IP_CANON, SK_BOOL},
	    {F_CONTAINS_IP, SK_BOOL},
	    {F_CONTAINS_CIDR, SK_BOOL},
	    {F_ISSORTED, SK_BOOL},
	    {F_GETSCHEME, SK_STRING},
	    {F_GETHOST, SK_STRING},
	    {F_GETHOSTNAME, SK_STRING},
	    {F_GETPORT, SK_STRING},
	    {F_GETPATH, SK_STRING},
	    {F_QUOTE, SK_STRING},
	    {F_FORMAT, SK_STRING},
	    {F_CHARAT, SK_STRING},
	    {F_DURATION, SK_OTHER},
	    {F_TIMESTAMP, SK_OTHER},
	    {F_QUANTITY, SK_QUANTITY},
	    {F_QADD, SK_QUANTITY},
	    {F_QSUB, SK_QUANTITY},
	    {F_SEMVER, SK_SEMVER},
	    {F_IP, SK_IP},
	    {F_CIDR, SK_CIDR},
	    {F_MASKED, SK_CIDR},
	    {F_URL, SK_URL},
	    {F_FMT, SK_FORMAT}, /* format.named() is an optional of one */
	    {F_SETS_CONTAINS, SK_BOOL},
	    {F_SETS_EQUIV, SK_BOOL},
	    {F_SETS_INTERSECTS, SK_BOOL},
	};
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
		if ((int)kinds[i].fn == fn)
			return kinds[i].k;
	return SK_UNKNOWN;
}

/* The size of the elements of a schema list's node, and whether it is
   kube's estimate (false when x is not such a list). */
static double items_size(struct fchk *c, const struct tres *x, bool *sized)
{
	*sized = false;
	if (x->s.k != ST_NODE || !(c->decl(x->s.node) & CEL_DECL_LIST))
		return 0;
	struct sty e = st_node(c, c->ops->items(x->s.node));
	*sized = e.k == ST_NODE;
	return node_size(c, e);
}

/* The least size of a string argument: a literal's own, else 0 (kube's
   estimates of a field start at 0). */
static double least_size(const struct node *arg, const struct tres *a)
{
	return arg && arg->k == N_STRING ? a->size : 0;
}

/* kube's ResultSize of s.split(sep[, n]): at most as many parts as s has
   characters, or n when n is a literal. */
static void split_size(const struct node *n, const struct tres *a, int na,
		       struct tres *r)
{
	if (na == 3 && n->n_args == 2 && n->args[1]->k == N_INT) {
		if (n->args[1]->lit.i < 0)
			return; /* kube reads -1 as 2^64 - 1 */
		r->size = (double)n->args[1]->lit.i;
		r->sized = true;
		return;
	}
	r->size = a[0].size;
	r->sized = a[0].sized;
}

/* kube's ResultSize of s.replace(old, new[, n]) at its largest: new for
   every character and s kept where old may be empty, s kept where new is
   no longer than old, else new for each of s's shortest olds. */
static void replace_size(const struct node *n, const struct tres *a, int na,
			 struct tres *r)
{
	if (na < 3 || n->n_args < 2)
		return;
	double sz = a[0].size, old_min = least_size(n->args[0], &a[1]),
	       new_max = a[2].size, count, kept;
	if (old_min == 0)
		count = sz + 1, kept = sz;
	else if (new_max <= old_min)
		count = 0, kept = sz;
	else
		count = up(sz / old_min), kept = 0;
	r->size = count * new_max + kept;
	r->sized = a[0].sized && a[1].sized && a[2].sized;
}

/* What a call costs by itself in kube's estimate (cel-go's
   checker/cost.go and kube's library.CostEstimator, Kubernetes 1.33),
   with its target (first, when member) and arguments a[0..na). Sets
   *exact when the figure is kube's given the sizes it read (bit i of
   *need: a[i]'s size), false for what lapis does not model (the figure
   is then a floor); sets r's size and library type where kube knows
   them. */
static double call_cost(struct fchk *c, const struct node *n, bool member,
			const struct tres *a, int na, bool *exact,
			unsigned *need, struct tres *r)
{
	enum fn fn = (enum fn)n->op;
	double s0 = na > 0 ? a[0].size : 0, s1 = na > 1 ? a[1].size : 0;
	enum skind k0 = na > 0 ? a[0].t.k : SK_UNKNOWN;
	*exact = true;
	*need = 0;
	switch (fn) {
	/* walks of the target or the first argument */
	case F_LOWER:
	case F_UPPER:
	case F_TRIM:
	case F_SUBSTRING:
		if (!member || na < 1)
			break;
		r->size = s0; /* kube's ResultSize: the target's */
		r->sized = a[0].sized;
		*need = 1;
		return up(s0 * TRAVERSAL_FACTOR);
	case F_SPLIT:
	case F_REPLACE:
		if (!member || na < 1)
			break;
		*need = 1;
		if (fn == F_SPLIT)
			split_size(n, a, na, r);
		else
			replace_size(n, a, na, r);
		return up(s0 * 2 * TRAVERSAL_FACTOR);
	case F_QUOTE:
		r->size = 2 * s0 + 2;
		r->sized = a[0].sized;
		*need = 1;
		return up(s0 * TRAVERSAL_FACTOR);
	case F_BYTES:
	case F_STRING:
		/* string to bytes and back walk it; other conversions 1 */
		if (k0 == (fn == F_BYTES ? SK_STRING : SK_BYTES)) {
			r->size = fn == F_BYTES ? 4 * s0 : s0;
			r->sized = a[0].sized;
			*need = 1;
			return up(s0 * TRAVERSAL_FACTOR);
		}
		if (!known(a[0].t) && a[0].t.k != SK_OTHER)
			break;
		r->unbounded = true; /* a string cel-go does not size */
		return 1;
	case F_ISIP:
	case F_ISCIDR:
	case F_CIDR:
	case F_URL:
	case F_QUANTITY:
	case F_ISQUANTITY:
	case F_SEMVER:
	case F_ISSEMVER:
		r->lib = fn == F_CIDR	    ? LIB_CIDR
			 : fn == F_QUANTITY ? LIB_QUANTITY
			 : fn == F_SEMVER   ? LIB_SEMVER
			 : fn == F_URL	    ? LIB_OTHER
					    : LIB_NONE;
		*need = 1;
		return up(s0 * TRAVERSAL_FACTOR);
	case F_IP:
		r->lib = LIB_IP;
		if (member)
			return 1; /* cidr.ip() */
		*need = 1;
		return up(s0 * TRAVERSAL_FACTOR);
	case F_IP_CANON:
		*need = 1;
		return up(s0 * 2 * TRAVERSAL_FACTOR);
	case F_CONTAINS_IP:
	case F_CONTAINS_CIDR:
		/* two 4-16 byte addresses compared (and for a CIDR masked,
		   +2 +1); a string argument parsed first */
		if (!member || na != 2)
			break;
		if (a[1].t.k == SK_STRING) {
			*need = 2;
			return (fn == F_CONTAINS_IP ? 4 : 7) +
			       up(s1 * TRAVERSAL_FACTOR);
		}
		if (a[1].lib != (fn == F_CONTAINS_IP ? LIB_IP : LIB_CIDR))
			break;
		return fn == F_CONTAINS_IP ? 4 : 7;
	case F_VALIDATE:
		/* the name's walk times kube's longest format regex (128
		   characters at 0.25); an optional list of errors */
		if (!member || na != 2)
			break;
		r->unbounded = r->opt = true;
		*need = 2;
		return up(s1 * TRAVERSAL_FACTOR) * 32;
	/* walks of two strings */
	case F_STARTS:
	case F_ENDS:
		if (!member || na != 2)
			break;
		*need = 2;
		return up(s1 * TRAVERSAL_FACTOR);
	case F_CONTAINS:
		if (!member || na != 2)
			break;
		*need = 3;
		return up(s0 * TRAVERSAL_FACTOR) * up(s1 * TRAVERSAL_FACTOR);
	case F_MATCHES:
	case F_FIND:
	case F_FINDALL:
		if (fn == F_MATCHES && !member)
			return 1; /* cel-go prices the global form at 1 */
		if (!member || na != 2)
			break;
		if (fn != F_MATCHES) { /* at most the target's length */
			r->size = s0;
			r->sized = a[0].sized;
		}
		*need = 3;
		return up((s0 + 1) * TRAVERSAL_FACTOR) * up(s1 * REGEX_FACTOR);
	/* kube's lists library: each element compared, a string element
	   walked too; indexOf on a string walks it */
	case F_ISSORTED:
	case F_SUM:
	case F_MIN:
	case F_MAX:
	case F_INDEXOF:
	case F_LASTINDEXOF: {
		if (!member || na < 1)
			break;
		*need = 1;
		if (k0 == SK_STRING)
			return up(s0 * TRAVERSAL_FACTOR);
		if (k0 != SK_LIST)
			break;
		enum skind e = a[0].t.e;
		if (e != SK_STRING && e != SK_BYTES &&
		    (a[0].s.k == ST_NODE || e != SK_UNKNOWN))
			return s0;
		/* kube sizes a string element only through the list's
		   schema path */
		bool es;
		double esz = items_size(c, &a[0], &es);
		if (!es)
			break;
		return s0 * (1 + up(esz * TRAVERSAL_FACTOR));
	}
	case F_JOIN: {
		bool es;
		double esz = items_size(c, &a[0], &es);
		if (!member || na < 1 || !es)
			break;
		double size = s0 * esz + (na > 1 && s0 > 0 ? s1 * (s0 - 1) : 0);
		*need = na > 1 ? 3 : 1;
		r->size = size;
		r->sized = a[0].sized && (na < 2 || a[1].sized);
		return up(size * TRAVERSAL_FACTOR);
	}
	/* cel-go's default: 1 */
	case F_SIZE:
	case F_INT:
	case F_UINT:
	case F_DOUBLE:
	case F_BOOL:
	case F_DURATION:
	case F_TIMESTAMP:
	case F_TYPE:
	case F_CHARAT:
	case F_GETFULLYEAR:
	case F_GETMONTH:
	case F_GETDAYOFMONTH:
	case F_GETDATE:
	case F_GETDAYOFWEEK:
	case F_GETDAYOFYEAR:
	case F_GETHOURS:
	case F_GETMINUTES:
	case F_GETSECONDS:
	case F_GETMILLIS:
	case F_ISURL:
	case F_OPT_OF:
	case F_OPT_NZ:
	case F_OPT_NONE:
	case F_HASVALUE:
	case F_VALUE:
	case F_OR:
	case F_ORVALUE:
	case F_FIRST:
	case F_LAST:
	/* kube's accessors: 1 */
	case F_FAMILY:
	case F_IS_UNSPEC:
	case F_IS_LOOPBACK:
	case F_IS_LL_MCAST:
	case F_IS_LL_UCAST:
	case F_IS_GLOBAL:
	case F_MASKED:
	case F_PREFIXLEN:
	case F_GETSCHEME:
	case F_GETHOST:
	case F_GETHOSTNAME:
	case F_GETPORT:
	case F_GETPATH:
	case F_GETQUERY:
	case F_FMT_NAMED:
	case F_FMT:
	case F_SIGN:
	case F_ISINTEGER:
	case F_ASINTEGER:
	case F_ASFLOAT:
	case F_QADD:
	case F_QSUB:
	case F_QLT:
	case F_QGT:
	case F_QCMP:
	case F_MAJOR:
	case F_MINOR:
	case F_PATCH:
	case F_FORMAT:
		r->lib = fn == F_MASKED			    ? LIB_CIDR
			 : fn == F_QADD || fn == F_QSUB	    ? LIB_QUANTITY
			 : fn == F_FMT || fn == F_FMT_NAMED ? LIB_OTHER
							    : LIB_NONE;
		if (fn == F_DURATION || fn == F_TIMESTAMP) {
			r->size = 1; /* scalars to cel-go */
			r->sized = true;
		}
		/* a type, a character, a URL's parts: values cel-go does
		   not size */
		r->unbounded = fn == F_TYPE || fn == F_CHARAT ||
			       fn == F_FORMAT || fn == F_GETSCHEME ||
			       fn == F_GETHOST || fn == F_GETHOSTNAME ||
			       fn == F_GETPORT || fn == F_GETPATH ||
			       fn == F_GETQUERY;
		/* opt.orValue(d) is of d's type: a string, list or map cel-go
		   does not size, a number or bool sized 1 */
		if (fn == F_ORVALUE && member && na == 2) {
			enum skind d = a[1].t.k;
			r->unbounded = d == SK_STRING || d == SK_BYTES ||
				       d == SK_LIST || d == SK_MAP;
			if (numeric(d) || d == SK_BOOL) {
				r->size = 1;
				r->sized = true;
			}
		}
		r->opt = fn == F_OPT_OF || fn == F_OPT_NZ || fn == F_OPT_NONE ||
			 fn == F_OR;
		return 1;
	case F_DYN: /* 1, and the argument's sizes */
		r->size = s0;
		r->sized = na > 0 && a[0].sized;
		r->lib = na > 0 ? a[0].lib : LIB_NONE;
		return 1;
	/* cel-go's sets: each element of one against each of the other
	   (twice for equivalent), and 1 */
	case F_SETS_CONTAINS:
	case F_SETS_EQUIV:
	case F_SETS_INTERSECTS:
		if (na != 2)
			break;
		*need = 3;
		return (fn == F_SETS_EQUIV ? 2 : 1) * s0 * s1 + 1;
	case F_OPT_UNWRAP:
		break;
	}
	*exact = false;
	*need = 0;
	return 0;
}

/* cel-go's TypeName() of a kind, for format()'s errors; NULL where lapis
   cannot name it as kube does (an object's declared type). */
static const char *fmt_kind_name(enum skind k)
{
	if (k == SK_LIST || k == SK_MAP)
		return k == SK_LIST ? "list" : "map";
	if (k == SK_NULL)
		return "null_type";
	return k == SK_OBJECT ? NULL : kind_name(k);
}

/* Whether the literal list member e fits the clause verb (cel-go's
   stringFormatChecker); *bad the node that does not, *why the clause's
   words. A %s walks into list and map literals. */
static bool fmt_arg_fits(struct fchk *c, unsigned char verb,
			 const struct node *e, const struct node **bad,
			 const char **why)
{
	enum skind k = tcheck(c, e).t.k;
	/* the kinds each verb takes; 's' takes every kind but a library
	   type's (and walks into literals) */
	static const struct {
		unsigned char verb;
		enum skind ok[4];
	} rules[] = {
	    {'d', {SK_INT, SK_UINT}},
	    {'o', {SK_INT, SK_UINT}},
	    {'f', {SK_DOUBLE, SK_STRING}},
	    {'e', {SK_DOUBLE, SK_STRING}},
	    {'b', {SK_INT, SK_UINT, SK_BOOL}},
	    {'x', {SK_INT, SK_UINT, SK_STRING, SK_BYTES}},
	    {'X', {SK_INT, SK_UINT, SK_STRING, SK_BYTES}},
	};
	*bad = e;
	*why = fmt_verb_why(verb);
	if (!fmt_kind_name(k) || k == SK_UNKNOWN)
		return true; /* dyn, or a type lapis cannot name */
	if (verb == 's') {
		if (is_lib(k))
			return false;
		/* a map literal's args are its keys and values */
		bool walk = e->k == N_LIST || e->k == N_MAP;
		for (int i = 0; walk && i < e->n_args; i++)
			if (!fmt_arg_fits(c, verb, e->args[i], bad, why))
				return false;
		return true;
	}
	for (size_t i = 0; i < sizeof rules / sizeof *rules; i++) {
		if (rules[i].verb != verb)
			continue;
		for (int j = 0; j < 4; j++)
			if (rules[i].ok[j] == k)
				return true;
		return false;
	}
	return true;
}

/* cel-go's stringFormatValidator: a literal format string given a list
   literal is checked when the rule compiles, clause by clause. */
static void check_format(struct fchk *c, const struct node *n)
{
	const char *s = n->a->s;
	const struct node *l = n->args[0];
	size_t len = n->a->s_len, i = 0;
	int argi = 0;
	c->in_format++;
	while (i < len && !c->failed) {
		if (s[i] != '%') {
			i++;
			continue;
		}
		if (i + 1 < len && s[i + 1] == '%') {
			i += 2;
			continue;
		}
		int at = argi++;
		char msg[256];
		struct fmt_clause cl;
		const struct node *bad;
		const char *why;
		if (i + 1 >= len) {
			type_error(c, n->pos, "unexpected end of string");
		} else if (at >= l->n_args) {
			type_error(c, n->pos, "index %d out of range", at);
		} else if (!fmt_clause_parse(s + i + 1, len - i - 1, &cl, msg,
					     sizeof msg)) {
			type_error(c, n->pos, "%s", msg);
		} else if (!fmt_arg_fits(c, cl.verb, l->args[at], &bad, &why)) {
			type_error(c, bad->pos,
				   "error during formatting: %s, was given %s",
				   why, fmt_kind_name(tcheck(c, bad).t.k));
		} else {
			i += 1 + cl.len;
			continue;
		}
		break;
	}
	if (!c->failed && l->n_args > argi)
		type_error(c, n->pos,
			   "too many arguments supplied to string.format "
			   "(expected %d, got %d)",
			   argi, l->n_args);
	c->in_format--;
}

/* A call with an optional among its arguments (every type known): an
   optional's own methods take it as their target (or() its argument
   too), type(), dyn() and optional.of() anything; any other function has
   no overload for it. true when the call is judged here. */
static bool tcheck_opt_call(struct fchk *c, const struct node *n,
			    const struct tty *args, int na, bool member,
			    struct tres *r)
{
	bool any = false;
	for (int i = 0; i < na; i++)
		any = any || args[i].opt;
	if (!any)
		return false;
	enum fn f = (enum fn)n->op;
	bool own =
	    member && args[0].opt &&
	    (f == F_HASVALUE || f == F_VALUE || f == F_ORVALUE || f == F_OR);
	bool takes_any = !member && (f == F_TYPE || f == F_DYN ||
				     f == F_OPT_OF || f == F_OPT_NZ);
	for (int i = 0; i < na && !takes_any; i++) {
		bool ok =
		    (own && i == 0) || (f == F_OR && i == 1) || !args[i].opt;
		if (!ok || (f == F_ORVALUE && own && i == 1 &&
			    !kind_fits(args[1].k, args[0].k))) {
			no_match(c, n->pos, fn_name(n->op), args, na, member);
			return true;
		}
	}
	if (own && (f == F_VALUE || f == F_ORVALUE)) {
		r->t = args[0]; /* what the optional holds */
		r->t.opt = false;
	}
	return own || takes_any;
}

/* What cel-go's standard library converts to each type (standard.go's
   overloads; kube's IP and CIDR libraries add string(ip), string(cidr));
   a duration or timestamp is SK_OTHER here, never refused. */
static bool conv_takes(int fn, enum skind k)
{
	switch (fn) {
	case F_INT:
		return k == SK_INT || k == SK_UINT || k == SK_DOUBLE ||
		       k == SK_STRING;
	case F_UINT:
	case F_DOUBLE:
		return k == SK_INT || k == SK_UINT || k == SK_DOUBLE ||
		       k == SK_STRING;
	case F_STRING:
		return k == SK_STRING || k == SK_BOOL || k == SK_BYTES ||
		       k == SK_DOUBLE || k == SK_INT || k == SK_UINT ||
		       k == SK_IP || k == SK_CIDR;
	case F_BOOL:
		return k == SK_BOOL || k == SK_STRING;
	case F_BYTES:
		return k == SK_BYTES || k == SK_STRING;
	case F_DURATION:
		return k == SK_STRING;
	case F_TIMESTAMP:
		return k == SK_STRING || k == SK_INT;
	default: /* dyn takes anything */
		return true;
	}
}

/* A type conversion: as a method, or given a type it does not convert,
   cel-go's "found no matching overload"; a type lapis cannot name is
   dyn to it, which a global conversion takes. */
static void conv_check(struct fchk *c, const struct node *n,
		       const struct tty *args, int na, bool member)
{
	if (!member && na == 1 && !args[0].opt &&
	    (!known(args[0]) || conv_takes(n->op, args[0].k)))
		return;
	no_match_as(c, n->pos, fn_name(n->op), args, na, member, true);
}

static void tcheck_call(struct fchk *c, const struct node *n, struct tres *r)
{
	struct tty args[4];
	struct tres a[4];
	int na = 0;
	bool member = n->a != NULL, bad = false, fixed;
	unsigned need;
	r->exact = true;
	c->in_format += n->op == F_FORMAT;
	for (int i = member ? -1 : 0; i < n->n_args; i++) {
		struct tres t = tcheck(c, i < 0 ? n->a : n->args[i]);
		r->cost += t.cost;
		r->exact = r->exact && t.exact;
		if (na < 4) {
			a[na] = t;
			args[na++] = t.t;
		}
	}
	c->in_format -= n->op == F_FORMAT;
	if (n->op == F_FORMAT && member && n->a->k == N_STRING &&
	    n->n_args == 1 && n->args[0]->k == N_LIST)
		check_format(c, n);
	r->cost += call_cost(c, n, member, a, na, &fixed, &need, r);
	/* the sizes count only for the functions that walk them */
	r->exact = r->exact && fixed && na == n->n_args + (member ? 1 : 0);
	for (int i = 0; i < na; i++)
		if (need & (1u << i))
			r->exact = r->exact && a[i].sized;
	r->t.k = call_kind(n->op);
	if (n->op == F_SPLIT)
		r->t.e = SK_STRING;
	if (na < n->n_args + (member ? 1 : 0))
		return; /* more than any function checked here takes */
	if (n->op >= F_INT && n->op <= F_TIMESTAMP) { /* no_member too */
		conv_check(c, n, args, na, member);
		return;
	}
	for (int i = 0; i < na; i++)
		if (!known(args[i]))
			return;
	if (tcheck_opt_call(c, n, args, na, member, r))
		return;
	if (n->op == F_SIZE && na == 1)
		bad = args[0].k != SK_STRING && args[0].k != SK_BYTES &&
		      args[0].k != SK_LIST && args[0].k != SK_MAP;
	else if (n->op == F_SUM && member && na == 1 && args[0].k == SK_LIST &&
		 args[0].e != SK_UNKNOWN)
		/* kube's lists library sums numbers and durations */
		bad = !numeric(args[0].e);
	else if (na >= 1)
		bad = !string_fn_takes(n->op, args, na) ||
		      !lib_fn_takes(n->op, member, args, na);
	if (bad)
		no_match(c, n->pos, fn_name(n->op), args, na, member);
}

static void tcheck_comp(struct fchk *c, const struct node *n, struct tres *r)
{
	struct tres range = tcheck(c, n->a);
	enum macro m = (enum macro)n->op;
	char name[64];
	if (m < M_OPTMAP && range.t.opt && tty_name(range.t, name, sizeof name))
		type_error(c, n->a->pos,
			   "expression of type '%s' cannot be range of a "
			   "comprehension",
			   name);
	/* A variable's size is kube's estimate at its path: the range's
	   path and @items (or @keys), whose first step kube's
	   sizeEstimator skips as if it were self. A computed range (a
	   literal, a call, a macro's result) has no path, so the variable
	   is sized as self is: kube's MaxElements of the rule's node. Over a
	   field, check_node's slot holds the schema node. */
	bool computed = n->a->k != N_SELF && n->a->k != N_OLD &&
			n->a->k != N_VAR && n->a->k != N_SELECT &&
			n->a->k != N_INDEX;
	c->vsize[n->slot] = node_size(c, c->self);
	c->vsized[n->slot] = m < M_OPTMAP && computed && c->self.k == ST_NODE;
	/* and typed as the computed list's elements (a map's keys) */
	c->vkind[n->slot] = !computed || m >= M_OPTMAP ? SK_UNKNOWN
			    : range.t.k == SK_LIST     ? range.t.e
			    : range.t.k == SK_MAP      ? range.t.key
						       : SK_UNKNOWN;
	/* a schema map's keys are strings of kube's StringType, sized 0 */
	if (m < M_OPTMAP && range.s.k == ST_NODE &&
	    (c->decl(range.s.node) & CEL_DECL_MAP)) {
		c->vsize[n->slot] = 0;
		c->vsized[n->slot] = true;
		c->vkind[n->slot] = SK_STRING;
	}
	if (m >= M2_ALL) {
		/* the first variable: a list's index (kube finds no size at
		   @indices: an int, 1) or a map's key (StringType's 0); over a
		   computed range both are sized as self (the path quirk) */
		bool list = range.s.k == ST_NODE
				? (c->decl(range.s.node) & CEL_DECL_LIST) != 0
				: range.t.k == SK_LIST;
		bool map = range.s.k == ST_NODE
			       ? (c->decl(range.s.node) & CEL_DECL_MAP) != 0
			       : range.t.k == SK_MAP;
		bool root = computed && c->self.k == ST_NODE;
		c->vsize[n->slot] = c->vsize[n->slot2] =
		    root   ? node_size(c, c->self)
		    : list ? 1
			   : 0;
		c->vsized[n->slot] = root || (!computed && (list || map));
		c->vsized[n->slot2] = root;
		c->vkind[n->slot2] = computed ? range.t.e : SK_UNKNOWN;
		c->vkind[n->slot] = list  ? SK_INT
				    : map ? SK_STRING
					  : SK_UNKNOWN;
	}
	/* the variables' types are in c->slots, from check_node */
	struct tres bb = tcheck(c, n->b), tt = tcheck(c, n->c);
	struct tty b = bb.t, t = tt.t;
	/* cel-go expands each macro into a comprehension and prices it as
	   the range, the accumulator's start, the result, and per element
	   the loop condition and step (parser/macro.go, checker/cost.go):
	   - all: @not_strictly_false(@r) 2, @r && p 1 + p; result @r 1;
	   - exists: @not_strictly_false(!@r) 3, @r || p 1 + p; result 1;
	   - exists_one: p ? @r + 1 : @r, p + 2; result @r == 1, 2;
	   - map: start [] 10; @r + [t] 12 + t (with a filter p ? ... : @r,
	     p + 12 + t); result 1;
	   - filter: start 10; p ? @r + [x] : @r, p + 13; result 1.
	   The others are a floor: their bodies, and for the accumulating
	   two-variable ones one more per element. */
	double count =
	    range.t.k == SK_LIST || range.t.k == SK_MAP ? range.size : 0;
	double per = 0, once = 0;
	bool modelled = true;
	switch (m) {
	case M_ALL:
		per = 3, once = 1;
		break;
	case M_EXISTS:
		per = 4, once = 1;
		break;
	case M_EXISTS_ONE:
		per = 2, once = 2;
		break;
	case M_MAP:
	case M_MAP3:
		per = 12, once = 11;
		break;
	case M_FILTER:
		per = 13, once = 11;
		break;
	/* cel-go's two-variable ones (ext/comprehensions.go) alike; their
	   map results start at {} 30 and add with cel.@mapInsert, 1 and
	   its arguments (the key too, for transformMap) */
	case M2_ALL:
		per = 3, once = 1;
		break;
	case M2_EXISTS:
		per = 4, once = 1;
		break;
	case M2_EXISTS_ONE:
		per = 2, once = 2;
		break;
	case M2_TLIST:
		per = 12, once = 11;
		break;
	case M2_TMAP:
		per = 3, once = 31;
		break;
	case M2_TENTRY:
		per = 2, once = 31;
		break;
	case M_OPTMAP:
	case M_OPTFLAT:
		/* opt.hasValue() ? [optional.of(] cel.bind(v, opt.value(),
		   e) [)] : optional.none(): the target twice, a bind's
		   empty range 10, three calls (two for optFlatMap) */
		r->cost = 2 * range.cost + (m == M_OPTMAP ? 13 : 12) + bb.cost;
		r->exact = range.exact && bb.exact;
		r->opt = true;
		return;
	}
	double each = bb.cost + tt.cost + per;
	if (count > 0) /* never 0 times a capped cost */
		r->cost = count * each;
	r->cost += range.cost + once;
	r->exact = modelled && range.exact && range.sized && bb.exact &&
		   (!n->c || tt.exact);
	if (m == M_MAP || m == M_MAP3 || m == M_FILTER || m >= M2_TLIST) {
		/* a list (a map) of as many elements as the range */
		r->size = count;
		r->sized = range.sized;
	}
	if (m != M_OPTMAP && m != M_OPTFLAT && known(range.t) &&
	    range.t.k != SK_LIST && range.t.k != SK_MAP &&
	    tty_name(range.t, name, sizeof name))
		type_error(c, n->a->pos,
			   "expression of type '%s' cannot be range of a "
			   "comprehension (must be list, map, or dynamic)",
			   name);
	switch (m) {
	case M_ALL:
	case M_EXISTS:
	case M_EXISTS_ONE:
	case M2_ALL:
	case M2_EXISTS:
	case M2_EXISTS_ONE:
		r->t.k = SK_BOOL;
		break;
	case M_MAP:
	case M_MAP3:
		r->t.k = SK_LIST;
		r->t.e = m == M_MAP ? b.k : t.k;
		break;
	case M_FILTER:
		r->t.k = SK_LIST;
		r->t.e = range.t.k == SK_LIST ? range.t.e : SK_UNKNOWN;
		break;
	case M2_TLIST:
		r->t.k = SK_LIST;
		break;
	case M2_TMAP:
		r->t.k = SK_MAP;
		break;
	case M_OPTMAP:
	case M_OPTFLAT:
	case M2_TENTRY:
		break;
	}
	if (!is_scalar(r->t.e))
		r->t.e = SK_UNKNOWN;
}

/* a[b] */
static void tcheck_index(struct fchk *c, const struct node *n, struct tres *r)
{
	struct tres a = tcheck(c, n->a), b = tcheck(c, n->b);
	r->cost = a.cost + b.cost + 1; /* a[?b] is the call _[?_](a, b) */
	r->exact = a.exact && b.exact;
	if (n->opt_sel || a.opt) {
		r->opt = true;
		/* an element of an optional list or map, or one taken with
		   [?], is an optional of the element's type (cel-go's
		   _[?_] overloads) */
		r->s = elem_node(c, a.s);
		if (r->s.k == ST_NODE) {
			r->t = schema_tty(c, r->s);
			r->t.opt = known(r->t);
		} else if ((a.t.k == SK_LIST || a.t.k == SK_MAP) &&
			   a.t.e != SK_UNKNOWN) {
			r->t.k = a.t.e;
			r->t.opt = true;
		}
		return;
	}
	r->s = elem_node(c, a.s);
	if (r->s.k == ST_NODE) {
		r->t = schema_tty(c, r->s);
		r->size = node_size(c, r->s);
		r->sized = true;
	} else {
		if ((a.t.k == SK_LIST || a.t.k == SK_MAP) &&
		    a.t.e != SK_UNKNOWN)
			r->t.k = a.t.e;
		/* an element of what a function returned (split(),
		   findAll()): kube sizes it at its path, the call's none
		   and @items, whose first step its sizeEstimator skips, so as
		   the rule's own node */
		if (n->a->k == N_CALL && n->a->op != F_DYN) {
			r->size = node_size(c, c->self);
			r->sized = c->self.k == ST_NODE;
		}
	}
	if (!known(a.t) || !known(b.t))
		return;
	bool ok = a.t.k == SK_LIST ? b.t.k == SK_INT
		  : a.t.k == SK_MAP
		      ? kind_fits(b.t.k, a.t.key) && is_scalar(b.t.k)
		      : false;
	struct tty args[2] = {a.t, b.t};
	if (!ok)
		no_match(c, n->pos, "_[_]", args, 2, false);
}

static struct tres tcheck(struct fchk *c, const struct node *n)
{
	struct tres r = {{SK_UNKNOWN, SK_UNKNOWN, SK_UNKNOWN},
			 {ST_ANY, NULL, false}};
	if (!n)
		return r;
	struct tres a, b, x;
	char name[64];
	/* literals cost nothing; cel-go sizes a scalar one 1, a string by
	   its runes, bytes by their count */
	bool literal = n->k <= N_NULL;
	r.exact = r.sized = literal;
	r.size = literal ? 1 : 0;
	switch (n->k) {
	case N_BOOL:
		r.t.k = SK_BOOL;
		break;
	case N_INT:
		r.t.k = SK_INT;
		break;
	case N_UINT:
		r.t.k = SK_UINT;
		break;
	case N_DOUBLE:
		r.t.k = SK_DOUBLE;
		break;
	case N_STRING:
		r.t.k = SK_STRING;
		r.size = 0;
		for (size_t i = 0; i < n->s_len; i++) /* runes */
			r.size += ((unsigned char)n->s[i] & 0xc0) != 0x80;
		break;
	case N_BYTES:
		r.t.k = SK_BYTES;
		r.size = (double)n->s_len;
		break;
	case N_NULL:
		r.t.k = SK_NULL;
		break;
	case N_SELF:
	case N_VAR:
		r.s = n->k == N_SELF ? c->self : c->slots[n->slot];
		r.t = schema_tty(c, r.s);
		r.cost = 1; /* a name */
		r.exact = true;
		r.size = node_size(c, r.s);
		r.sized = r.s.k == ST_NODE;
		if (n->k == N_VAR && r.s.k != ST_NODE) {
			r.t.k = c->vkind[n->slot];
			r.size = c->vsize[n->slot];
			r.sized = c->vsized[n->slot];
		}
		break;
	case N_SELECT:
	case N_HAS:
		x = tcheck(c, n->k == N_HAS ? n->a->a : n->a);
		/* cel-go selects within an optional, and names the type it
		   holds */
		struct tty xt = x.t;
		xt.opt = false;
		if (known(xt) && xt.k != SK_MAP && xt.k != SK_OBJECT &&
		    !is_lib(xt.k) && tty_name(xt, name, sizeof name))
			type_error(c, n->k == N_HAS ? n->a->pos : n->pos,
				   "type '%s' does not support field "
				   "selection",
				   name);
		/* a presence test costs nothing in kube's estimate (its
		   PresenceTestHasCost(false)) but its operand, a field of
		   an object or map 1 */
		r.cost = x.cost;
		if (n->k == N_HAS) {
			r.t.k = SK_BOOL;
			r.exact = x.exact;
		} else if (n->opt_sel || x.opt) {
			/* a.?f is cel-go's call _?._(a, 'f'), 1; a field of
			   an optional is selected within it, at no cost */
			r.cost += n->opt_sel ? 1 : 0;
			r.exact = x.exact;
			r.opt = true;
			if (x.s.k == ST_NODE) {
				/* the field's type, as an optional */
				bool f = c->failed;
				r.s = select_field(c, x.s, n->s, n->s_len);
				c->failed = f;
				r.t = schema_tty(c, r.s);
				r.t.opt = known(r.t);
			}
		} else {
			bool f = c->failed;
			c->at = n->pos;
			r.s = select_field(c, x.s, n->s, n->s_len);
			c->failed = f; /* check_node has judged the fields */
			r.t = schema_tty(c, r.s);
			r.size = node_size(c, r.s);
			r.sized = r.s.k == ST_NODE;
			/* an embedded resource's apiVersion, kind, metadata
			   and its name and generateName, as kube adds them
			   (WithTypeAndObjectMeta): strings without maxLength */
			if (r.s.k == ST_META) {
				r.t.k = SK_OBJECT;
			} else if (r.s.k == ST_ANY &&
				   (x.s.k == ST_META ||
				    (x.s.k == ST_NODE && x.s.rroot &&
				     (c->decl(x.s.node) & CEL_DECL_OBJECT) &&
				     !meta_declared(c, x.s.node) &&
				     (!strcmp(n->s, "kind") ||
				      !strcmp(n->s, "apiVersion"))))) {
				r.t.k = SK_STRING;
				r.size = CEL_MAX_REQUEST - 2;
				r.sized = true;
			}
			if (x.t.k == SK_OBJECT || x.t.k == SK_MAP)
				r.cost += 1;
			r.exact =
			    x.exact && (x.t.k == SK_OBJECT || x.t.k == SK_MAP);
		}
		break;
	case N_INDEX:
		tcheck_index(c, n, &r);
		break;
	case N_LIST:
		r.t.k = SK_LIST;
		r.exact = r.sized = true;
		r.t.e = join_members(c, n->args, 1, n->n_args, 0, &r);
		r.cost += LIST_CREATE_COST;
		r.size = n->n_args;
		break;
	case N_MAP: /* args: key, value, key, value ... */
		r.t.k = SK_MAP;
		r.exact = r.sized = true;
		r.t.key = join_members(c, n->args, 2, n->n_args / 2, 0, &r);
		if (n->n_args > 1)
			r.t.e = join_members(c, n->args + 1, 2, n->n_args / 2,
					     -1, &r);
		r.cost += MAP_CREATE_COST;
		r.size = n->n_args / 2;
		break;
	case N_NOT:
	case N_NEG:
		a = tcheck(c, n->a);
		r.cost = a.cost + 1;
		r.exact = a.exact;
		if (n->k == N_NOT) {
			r.t.k = SK_BOOL;
			if (known(a.t) && (a.t.k != SK_BOOL || a.t.opt))
				no_match(c, n->pos, "!_", &a.t, 1, false);
		} else if (known(a.t)) {
			if ((a.t.k == SK_INT || a.t.k == SK_DOUBLE) && !a.t.opt)
				r.t.k = a.t.k;
			else
				no_match(c, n->pos, "-_", &a.t, 1, false);
		}
		break;
	case N_AND:
	case N_OR:
		r.t.k = SK_BOOL;
		r.exact = true;
		for (int i = 0; i < 2; i++) {
			const struct node *o = i ? n->b : n->a;
			x = tcheck(c, o);
			r.cost += x.cost;
			r.exact = r.exact && x.exact;
			if (known(x.t) && (x.t.k != SK_BOOL || x.t.opt) &&
			    tty_name(x.t, name, sizeof name))
				type_error(c, o->pos,
					   "expected type 'bool' but found "
					   "'%s'",
					   name);
		}
		break;
	case N_COND: {
		a = tcheck(c, n->a);
		b = tcheck(c, n->b);
		x = tcheck(c, n->c);
		struct tty args[3] = {a.t, b.t, x.t};
		if (known(a.t) && known(b.t) && known(x.t) &&
		    (a.t.k != SK_BOOL || a.t.opt || !tty_fits(b.t, x.t)))
			no_match(c, n->pos, "_?_:_", args, 3, false);
		if (b.t.k == x.t.k && b.t.e == x.t.e && b.t.key == x.t.key &&
		    b.t.opt == x.t.opt)
			r.t = b.t;
		r.cost = a.cost + (b.cost > x.cost ? b.cost : x.cost);
		r.size = b.size > x.size ? b.size : x.size;
		r.exact = a.exact && b.exact && x.exact;
		r.sized = b.sized && x.sized;
		r.lib = b.lib == x.lib ? b.lib : LIB_NONE;
		break;
	}
	case N_BIN:
		tcheck_bin(c, n, &r);
		break;
	case N_CALL:
		tcheck_call(c, n, &r);
		break;
	case N_COMP:
		tcheck_comp(c, n, &r);
		break;
	case N_OLD:
		r.cost = 1;
		r.exact = true;
		if (!c->old_opt) {
			r.s = c->self;
			r.t = schema_tty(c, r.s);
			r.size = node_size(c, r.s);
			r.sized = r.s.k == ST_NODE;
		} else { /* an optional of self's type, as kube declares it */
			r.s = c->self;
			r.t = schema_tty(c, r.s);
			r.t.opt = r.opt = true;
		}
		break;
	case N_TYPE:
		/* a name, sized at its path [name] by kube's sizeEstimator,
		   which skips the first step as if it were self */
		r.cost = 1;
		r.exact = true;
		r.size = node_size(c, c->self);
		r.sized = c->self.k == ST_NODE;
		break;
	case N_IDENT:
		break;
	}
	/* cel-go sizes a computed number, bool, duration or timestamp by
	   its type: 1 */
	bool computed = n->k == N_BIN || n->k == N_NOT || n->k == N_NEG ||
			n->k == N_AND || n->k == N_OR || n->k == N_CALL ||
			n->k == N_HAS || n->k == N_COMP;
	if (computed && !r.sized &&
	    (numeric(r.t.k) || r.t.k == SK_BOOL || r.t.k == SK_OTHER)) {
		r.size = 1;
		r.sized = true;
	}
	/* nested comprehensions multiply: kept finite, far past any limit */
	if (!(r.cost < COST_CAP))
		r.cost = COST_CAP;
	if (!(r.size < COST_CAP))
		r.size = COST_CAP;
	return r;
}

/* c's root and per-variable state for p over node: false when memory
   ran out. */
static void fchk_end(struct fchk *c);

static bool fchk_start(struct fchk *c, const cel_prog *p, const void *node,
		       bool resource_root)
{
	size_t n = (size_t)p->n_slots + 2;
	c->self = st_node(c, node);
	c->self.rroot = c->self.rroot || resource_root;
	c->slots = calloc(n, sizeof *c->slots);
	c->vsize = calloc(n, sizeof *c->vsize);
	c->vsized = calloc(n, sizeof *c->vsized);
	c->vkind = calloc(n, sizeof *c->vkind); /* SK_UNKNOWN */
	if (c->slots && c->vsize && c->vsized && c->vkind)
		return true;
	fchk_end(c);
	return false;
}

static void fchk_end(struct fchk *c)
{
	free(c->slots);
	free(c->vsize);
	free(c->vsized);
	free(c->vkind);
}

bool cel_check_fields(const cel_prog *p, const struct cel_schema *ops,
		      unsigned (*decl)(const void *node), const void *node,
		      bool resource_root, char *why, size_t why_size,
		      size_t *at)
{
	struct fchk c = {.ops = ops,
			 .decl = decl,
			 .why = why,
			 .why_size = why_size,
			 .old_opt = p->opt_old,
			 .at = CEL_NO_POS,
			 .err_at = CEL_NO_POS};
	if (why_size)
		why[0] = 0;
	if (!fchk_start(&c, p, node, resource_root))
		return true; /* nothing proven */
	check_node(&c, p->root);
	/* then kube's checker on types, over the fields found */
	if (!c.failed)
		tcheck(&c, p->root);
	fchk_end(&c);
	if (at)
		*at = c.err_at;
	return !c.failed;
}

/* The type (and cost) of p's whole expression, without judging it:
   false when memory ran out. */
static bool root_type(const cel_prog *p, const struct cel_schema *ops,
		      unsigned (*decl)(const void *node), const void *node,
		      bool resource_root, struct tres *out)
{
	struct fchk c = {.ops = ops,
			 .decl = decl,
			 .old_opt = p->opt_old,
			 .at = CEL_NO_POS,
			 .err_at = CEL_NO_POS};
	if (!fchk_start(&c, p, node, resource_root))
		return false;
	check_node(&c, p->root); /* the macro variables' types */
	*out = tcheck(&c, p->root);
	fchk_end(&c);
	return true;
}

double cel_cost_floor(const cel_prog *p, const struct cel_schema *ops,
		      unsigned (*decl)(const void *node), const void *node,
		      bool resource_root, bool *exact)
{
	struct tres r;
	*exact = false;
	if (!root_type(p, ops, decl, node, resource_root, &r))
		return 0; /* nothing known */
	*exact = r.exact && r.cost < COST_CAP;
	return r.cost;
}

bool cel_result_mismatch(const cel_prog *p, const struct cel_schema *ops,
			 unsigned (*decl)(const void *node), const void *node,
			 bool resource_root, bool want_string)
{
	struct tres r;
	if (!root_type(p, ops, decl, node, resource_root, &r) ||
	    r.t.k == SK_UNKNOWN)
		return false; /* nothing proven */
	return want_string ? r.t.k != SK_STRING : r.t.k != SK_BOOL;
}

/* ------------------------------------------------------------- public */

void cel_free(cel_prog *p)
{
	if (!p)
		return;
	while (p->all) {
		struct node *n = p->all;
		p->all = n->all_next;
		free(n->s);
		free(n->s2);
		free(n->args);
		srv_goregex_free(n->re);
		free(n);
	}
	free(p);
}

void cel_set_optional_old_self(cel_prog *p)
{
	p->opt_old = true;
}

bool cel_uses_old_self(const cel_prog *p)
{
	return p->old_self;
}

cel_prog *cel_compile(const char *src, char *why, size_t why_size)
{
	return cel_compile_checked(src, why, why_size, NULL, NULL);
}

cel_prog *cel_compile_checked(const char *src, char *why, size_t why_size,
			      bool *invalid, size_t *at)
{
	return cel_compile_env(src, false, why, why_size, invalid, at);
}

cel_prog *cel_compile_env(const char *src, bool new_expr, char *why,
			  size_t why_size, bool *invalid, size_t *at)
{
	struct parser ps = {.src = src,
			    .why = why,
			    .why_size = why_size,
			    .err_at = CEL_NO_POS,
			    .new_env = new_expr};
	if (invalid)
		*invalid = false;
	if (at)
		*at = CEL_NO_POS;
	if (why_size)
		why[0] = 0;
	ps.len = strlen(src);
	ps.prog = calloc(1, sizeof *ps.prog);
	if (!ps.prog) {
		if (why_size)
			put_msg(why, why_size, "out of memory");
		return NULL;
	}
	if (!utf8_valid(src, ps.len))
		fail(&ps, (size_t)-1, "the rule is not valid UTF-8");
	next(&ps);
	struct node *root = parse_expr(&ps);
	if (!ps.failed && ps.t != T_EOF) {
		/* ANTLR's words at cel-go's `start: expr EOF`: a lone token
		   more is deleted ("extraneous"), else the input mismatches */
		size_t tok = ps.t_pos, tl = ps.pos - ps.t_pos;
		next(&ps);
		if (!ps.failed)
			fail(&ps, tok, "%s input '%.*s' expecting <EOF>",
			     ps.t == T_EOF ? "extraneous" : "mismatched",
			     (int)(tl > 64 ? 64 : tl), src + tok);
	}
	if (!ps.failed)
		resolve(&ps, root, NULL);
	free(ps.s);
	if (ps.failed || !root) {
		if (!ps.failed && why_size)
			put_msg(why, why_size, "syntax error");
		if (invalid)
			*invalid = !ps.unsup;
		if (at && ps.failed && ps.err_program) {
			/* Go's regexp error alone, for kube's "program
			   instantiation failed: " */
			*at = CEL_PROGRAM_POS;
			if (why_size)
				put_msg(why, why_size, ps.bare);
		} else if (at && ps.failed && ps.err_at != CEL_NO_POS) {
			/* the text alone, for cel_error_display */
			*at = ps.err_at;
			if (why_size)
				put_fmt(why, why_size, "%s%s",
					ps.err_syntax ? "Syntax error: " : "",
					ps.bare);
		}
		cel_free(ps.prog);
		return NULL;
	}
	/* slots: 0 self, 1 oldSelf, then one per macro */
	ps.prog->n_slots = ps.n_slots;
	ps.prog->root = root;
	return ps.prog;
}

/* cel-go's Error.ToDisplayString, after its "ERROR: <input>": the line
   and column (a column counts runes, from 1), the message, the source
   line and a caret under the column (dots before it, full-width ones
   under runes of more than one byte). */
void cel_error_display(const char *src, size_t at, const char *msg, char *out,
		       size_t size)
{
	size_t len = strlen(src), line = 1, start = 0;
	if (at > len)
		at = len;
	for (size_t i = 0; i < at; i++)
		if (src[i] == '\n') {
			line++;
			start = i + 1;
		}
	size_t end = start;
	while (end < len && src[end] != '\n')
		end++;
	size_t col = 0;
	for (size_t i = start; i < at; i++)
		if (((unsigned char)src[i] & 0xc0) != 0x80)
			col++;
	size_t o = 0;
#define PUT(...)                                                               \
	do {                                                                   \
		if (o < size) {                                                \
			int k_ = snprintf(out + o, size - o, __VA_ARGS__);     \
			o += k_ > 0 ? (size_t)k_ : 0;                          \
		}                                                              \
	} while (0)
	PUT(":%zu:%zu: %s\n | ", line, col + 1, msg);
	for (size_t i = start; i < end; i++)
		PUT("%c", src[i] == '\t' ? ' ' : src[i]);
	PUT("\n | ");
	for (size_t i = start; i < at && i < end; i++) {
		unsigned char b = (unsigned char)src[i];
		if ((b & 0xc0) == 0x80)
			continue;
		PUT("%s", b >= 0x80 ? "\xef\xbc\x8e" : ".");
	}
	PUT("%s",
	    at < end && (unsigned char)src[at] >= 0x80 ? "\xef\xbc\xbe" : "^");
#undef PUT
	if (size && o >= size) {
		/* cut: no rune left in halves */
		size_t e = size - 1;
		while (e && ((unsigned char)out[e - 1] & 0xc0) == 0x80)
			e--;
		if (e && (unsigned char)out[e - 1] >= 0xc0)
			e--;
		out[e] = 0;
	}
}
