/*
 * selector.c -- label and field selectors (see selector.h), matching
 * apimachinery v0.33 (Kubernetes 1.33): pkg/labels/selector.go,
 * pkg/fields/selector.go and the qualified-name and label-value checks of
 * pkg/util/validation. Written from their behaviour, not their code.
 *
 * Any thread; no shared state. A parsed selector is immutable.
 *
 * Label selectors. A lexer turns the input into tokens: whitespace
 * (' ', '\t', '\r', '\n') separates; the special bytes = ! ( ) , > < make
 * operator tokens ("==" and "!=" are the only two-byte ones); every other
 * run of bytes is an identifier, where the words "in" and "notin" are
 * keywords -- except where a value is expected, where they are plain
 * identifiers again ("x in (in)"). The recursive-descent parser needs one
 * token of lookahead, so tokens are lexed on demand, never stored.
 *
 * Invariants:
 *  1. Every stored key and value is an identifier token of the input,
 *     copied once into the selector's arena with a NUL; the arena holds
 *     2 * strlen(input) + 1 bytes, which every input fits.
 *  2. The values of one requirement are sorted bytewise and unique (kube
 *     keeps them in a string set), so error paths index them as kube does
 *     ("values[1][key]") and matching can binary-search them.
 *  3. Messages are built in a bounded buffer the size of srv_error.message,
 *     cut at a UTF-8 boundary, with invalid UTF-8 of the input replaced by
 *     U+FFFD (what Go's JSON encoder shows a client), so a message is always
 *     valid UTF-8 and never costs more than the buffer.
 *  4. Work is linear in the input, up to the sort of each requirement's
 *     values and of the field terms (n log n); nothing recurses.
 *
 * Field selectors. Terms are split at commas not escaped by a backslash,
 * sorted bytewise (kube sorts the raw terms, which fixes which bad term is
 * reported), and each is split at the first "!=", "==" or "=" (tried in that
 * order at each position). The left side is the field, taken as is; the
 * right side is unescaped: \\ \, \= are the only escapes, and a bare ',' or
 * '=' is an error. As in Go, once a value needs unescaping, invalid UTF-8
 * in it becomes U+FFFD.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lapis/assert.h"
#include "registry/json.h"
#include "selector.h"

/* ---- messages ----------------------------------------------------------- */

/* The longest message srv_error can carry, NUL included. */
#define MSG_CAP sizeof(((struct srv_error *)0)->message)

struct msgbuf {
	char buf[MSG_CAP];
	size_t len;
	bool full; /* a character did not fit: everything after is dropped */
};

static void mb_reset(struct msgbuf *mb)
{
	mb->len = 0;
	mb->buf[0] = '\0';
	mb->full = false;
}

/* Encode r (a valid scalar value) as UTF-8 into out[4]; returns the width. */
static size_t utf8_enc(uint32_t r, char *out)
{
	if (r < 0x80) {
		out[0] = (char)r;
		return 1;
	}
	if (r < 0x800) {
		out[0] = (char)(0xc0 | (r >> 6));
		out[1] = (char)(0x80 | (r & 0x3f));
		return 2;
	}
	if (r < 0x10000) {
		out[0] = (char)(0xe0 | (r >> 12));
		out[1] = (char)(0x80 | ((r >> 6) & 0x3f));
		out[2] = (char)(0x80 | (r & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (r >> 18));
	out[1] = (char)(0x80 | ((r >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((r >> 6) & 0x3f));
	out[3] = (char)(0x80 | (r & 0x3f));
	return 4;
}

/* Append n bytes that are one whole character (or ASCII), or nothing. */
static void mb_put(struct msgbuf *mb, const char *s, size_t n)
{
	if (mb->full)
		return;
	if (n > MSG_CAP - 1 - mb->len) {
		mb->full = true;
		return;
	}
	memcpy(mb->buf + mb->len, s, n);
	mb->len += n;
	mb->buf[mb->len] = '\0';
}

/* Append input bytes as Go's %s shows them after JSON encoding: invalid
   UTF-8 becomes U+FFFD (invariant 3). */
static void mb_raw(struct msgbuf *mb, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	while (i < n && !mb->full) {
		size_t run = i;
		while (run < n && u[run] < 0x80)
			run++;
		if (run > i) {
			/* ASCII runs go in one piece, cut to what fits. */
			size_t room = MSG_CAP - 1 - mb->len;
			size_t k = run - i < room ? run - i : room;
			mb_put(mb, s + i, k);
			if (k < run - i)
				mb->full = true;
			i += k;
			continue;
		}
		uint32_t r;
		size_t w = reg_utf8_decode(u + i, n - i, &r);
		if (r == 0xfffd && w == 1)
			mb_put(mb, "\xef\xbf\xbd", 3);
		else
			mb_put(mb, s + i, w);
		i += w;
	}
}

static void mb_str(struct msgbuf *mb, const char *s)
{
	mb_raw(mb, s, strlen(s));
}

/* Append s quoted as Go's %q (strconv.Quote) does. */
static void mb_quote(struct msgbuf *mb, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	char tmp[16];

	mb_put(mb, "\"", 1);
	for (size_t i = 0; i < n && !mb->full;) {
		uint32_t r;
		size_t w = reg_utf8_decode(u + i, n - i, &r);
		if (r == 0xfffd && w == 1) {
			snprintf(tmp, sizeof tmp, "\\x%02x", u[i]);
			mb_put(mb, tmp, 4);
		} else if (r == '"' || r == '\\') {
			tmp[0] = '\\';
			tmp[1] = (char)r;
			mb_put(mb, tmp, 2);
		} else if (reg_go_isprint(r)) {
			mb_put(mb, s + i, w);
		} else {
			const char *esc = NULL;
			switch (r) {
			case '\a': esc = "\\a"; break;
			case '\b': esc = "\\b"; break;
			case '\f': esc = "\\f"; break;
			case '\n': esc = "\\n"; break;
			case '\r': esc = "\\r"; break;
			case '\t': esc = "\\t"; break;
			case '\v': esc = "\\v"; break;
			default: break;
			}
			if (esc)
				snprintf(tmp, sizeof tmp, "%s", esc);
			else if (r < 0x20 || r == 0x7f)
				snprintf(tmp, sizeof tmp, "\\x%02x", (unsigned)r);
			else if (r < 0x10000)
				snprintf(tmp, sizeof tmp, "\\u%04x", (unsigned)r);
			else
				snprintf(tmp, sizeof tmp, "\\U%08x", (unsigned)r);
			mb_put(mb, tmp, strlen(tmp));
		}
		i += w;
	}
	mb_put(mb, "\"", 1);
}

/* Hand the message over as the error. */
static lp_err mb_fail(const struct msgbuf *mb, struct srv_error *err)
{
	return srv_error_set(err, LP_ERR(LP_E_BADREQUEST), "%s", mb->buf);
}

static lp_err nomem(struct srv_error *err)
{
	return srv_error_set(err, LP_ERR(LP_E_NOMEM), "out of memory");
}

/* ---- validation (pkg/util/validation, v0.33 texts) ---------------------- */

#define QNAME_RE "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define QNAME_MSG                                                            \
	"must consist of alphanumeric characters, '-', '_' or '.', and must " \
	"start and end with an alphanumeric character (e.g. 'MyName',  or "   \
	"'my.name',  or '123-abc', regex used for validation is '" QNAME_RE "')"
#define SUBDOMAIN_MSG                                                         \
	"a lowercase RFC 1123 subdomain must consist of lower case "          \
	"alphanumeric characters, '-' or '.', and must start and end with an " \
	"alphanumeric character (e.g. 'example.com', regex used for "        \
	"validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*" \
	"[a-z0-9])?)*')"
#define LABEL_VALUE_MSG                                                       \
	"a valid label must be an empty string or consist of alphanumeric "   \
	"characters, '-', '_' or '.', and must start and end with an "        \
	"alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "        \
	"'12345', regex used for validation is '(" QNAME_RE ")?')"

/* Name part of a qualified name and a label key: 63 bytes (a DNS label). */
#define NAME_MAX_LEN 63
/* Prefix of a qualified name: a DNS subdomain, 253 bytes. */
#define SUBDOMAIN_MAX_LEN 253
/* Label values: 63 bytes. */
#define VALUE_MAX_LEN 63

static bool is_alnum(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

static bool is_lower_alnum(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], whole string. */
static bool qname_re(const char *s, size_t n)
{
	if (n == 0 || !is_alnum((unsigned char)s[0]) ||
	    !is_alnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 1; i + 1 < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!is_alnum(c) && c != '-' && c != '_' && c != '.')
			return false;
	}
	return true;
}

/* DNS-1123 subdomain regex: dot-separated labels of [a-z0-9-], each
   starting and ending with [a-z0-9]. */
static bool subdomain_re(const char *s, size_t n)
{
	size_t start = 0;

	if (n == 0)
		return false;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.') {
			unsigned char c = (unsigned char)s[i];
			if (!is_lower_alnum(c) && c != '-')
				return false;
			continue;
		}
		if (i == start || !is_lower_alnum((unsigned char)s[start]) ||
		    !is_lower_alnum((unsigned char)s[i - 1]))
			return false;
		start = i + 1;
	}
	return true;
}

/* Appends messages joined by "; " (kube joins a check's list so). */
struct joiner {
	struct msgbuf *mb; /* NULL: only count */
	int n;
};

static void join_add(struct joiner *j, const char *a, const char *b)
{
	if (j->mb) {
		if (j->n > 0)
			mb_str(j->mb, "; ");
		mb_str(j->mb, a);
		mb_str(j->mb, b);
	}
	j->n++;
}

/* IsQualifiedName: true if valid; else, with mb, appends the reasons. */
static bool check_qname(const char *k, size_t n, struct msgbuf *mb)
{
	struct joiner j = {mb, 0};
	const char *slash = memchr(k, '/', n);
	const char *name = k;
	size_t name_len = n;

	if (slash) {
		size_t plen = (size_t)(slash - k);
		if (memchr(slash + 1, '/', n - plen - 1)) {
			join_add(&j, "a qualified name " QNAME_MSG,
				 " with an optional DNS subdomain prefix and "
				 "'/' (e.g. 'example.com/MyName')");
			return false;
		}
		if (plen == 0) {
			join_add(&j, "prefix part ", "must be non-empty");
		} else {
			if (plen > SUBDOMAIN_MAX_LEN)
				join_add(&j, "prefix part ",
					 "must be no more than 253 characters");
			if (!subdomain_re(k, plen))
				join_add(&j, "prefix part ", SUBDOMAIN_MSG);
		}
		name = slash + 1;
		name_len = n - plen - 1;
	}
	if (name_len == 0)
		join_add(&j, "name part ", "must be non-empty");
	else if (name_len > NAME_MAX_LEN)
		join_add(&j, "name part ", "must be no more than 63 characters");
	if (!qname_re(name, name_len))
		join_add(&j, "name part ", QNAME_MSG);
	return j.n == 0;
}

/* IsValidLabelValue: true if valid; else, with mb, appends the reasons. */
static bool check_label_value(const char *v, size_t n, struct msgbuf *mb)
{
	struct joiner j = {mb, 0};

	if (n > VALUE_MAX_LEN)
		join_add(&j, "", "must be no more than 63 characters");
	if (n > 0 && !qname_re(v, n))
		join_add(&j, "", LABEL_VALUE_MSG);
	return j.n == 0;
}

/* Go's strconv.ParseInt(s, 10, 64): optional sign, at least one digit,
   nothing else, within int64. */
static bool parse_int(const char *s, size_t n, long long *out)
{
	size_t i = 0;
	bool neg = false;
	unsigned long long v = 0;
	/* The magnitude limit: 2^63 for a negative number, 2^63 - 1 else. */
	unsigned long long lim;

	if (n > 0 && (s[0] == '+' || s[0] == '-')) {
		neg = s[0] == '-';
		i = 1;
	}
	if (i == n)
		return false;
	lim = neg ? (unsigned long long)INT64_MAX + 1 : INT64_MAX;
	for (; i < n; i++) {
		unsigned d = (unsigned char)s[i] - '0';
		if (d > 9)
			return false;
		if (v > (lim - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (neg)
		*out = v == (unsigned long long)INT64_MAX + 1
			       ? INT64_MIN
			       : -(long long)v;
	else
		*out = (long long)v;
	return true;
}

/* ---- label selectors ---------------------------------------------------- */

enum lop {
	OP_EXISTS,
	OP_NOT_EXISTS,
	OP_EQ,	    /* = and == */
	OP_NEQ,
	OP_IN,
	OP_NOTIN,
	OP_GT,
	OP_LT,
};

struct lreq {
	const char *key;  /* in the arena */
	enum lop op;
	size_t v_off;	  /* first value in sel->vals */
	size_t n_v;	  /* number of values: sorted, unique (invariant 2) */
	long long num;	  /* OP_GT, OP_LT: the bound */
};

struct srv_lsel {
	struct lreq *reqs;
	size_t n_reqs, cap_reqs;
	const char **vals; /* values of all requirements, in the arena or "" */
	size_t n_vals, cap_vals;
	char *arena;	   /* keys and values, NUL-terminated (invariant 1) */
	size_t arena_len, arena_cap;
};

enum tok {
	T_EOS,
	T_ID,
	T_IN,
	T_NOTIN,
	T_NOT,	   /* ! */
	T_EQ,	   /* = */
	T_EQEQ,	   /* == */
	T_NEQ,	   /* != */
	T_GT,	   /* > */
	T_LT,	   /* < */
	T_LPAREN,
	T_RPAREN,
	T_COMMA,
};

struct token {
	enum tok t;
	const char *lit; /* into the input; "" at the end */
	size_t len;
};

struct parser {
	const char *s;
	size_t len, pos;
	struct token peek;
	bool have_peek;
	srv_lsel *sel;
	struct msgbuf mb;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_special(char c)
{
	switch (c) {
	case '=': case '!': case '(': case ')': case ',': case '>': case '<':
		return true;
	default:
		return false;
	}
}

static void lex(struct parser *p, struct token *tk)
{
	while (p->pos < p->len && is_space(p->s[p->pos]))
		p->pos++;
	tk->lit = p->s + p->pos;
	if (p->pos == p->len) {
		tk->t = T_EOS;
		tk->lit = "";
		tk->len = 0;
		return;
	}
	char c = p->s[p->pos];
	if (is_special(c)) {
		bool two = (c == '=' || c == '!') && p->pos + 1 < p->len &&
			   p->s[p->pos + 1] == '=';
		tk->len = two ? 2 : 1;
		p->pos += tk->len;
		switch (c) {
		case '=': tk->t = two ? T_EQEQ : T_EQ; break;
		case '!': tk->t = two ? T_NEQ : T_NOT; break;
		case '(': tk->t = T_LPAREN; break;
		case ')': tk->t = T_RPAREN; break;
		case ',': tk->t = T_COMMA; break;
		case '>': tk->t = T_GT; break;
		default: tk->t = T_LT; break;
		}
		return;
	}
	size_t start = p->pos;
	while (p->pos < p->len && !is_special(p->s[p->pos]) &&
	       !is_space(p->s[p->pos]))
		p->pos++;
	tk->len = p->pos - start;
	if (tk->len == 2 && memcmp(tk->lit, "in", 2) == 0)
		tk->t = T_IN;
	else if (tk->len == 5 && memcmp(tk->lit, "notin", 5) == 0)
		tk->t = T_NOTIN;
	else
		tk->t = T_ID;
}

/* The next token without taking it. Where values are expected, the
   keywords are identifiers. */
static enum tok look(struct parser *p, bool values, struct token *tk)
{
	if (!p->have_peek) {
		lex(p, &p->peek);
		p->have_peek = true;
	}
	*tk = p->peek;
	if (values && (tk->t == T_IN || tk->t == T_NOTIN))
		tk->t = T_ID;
	return tk->t;
}

static enum tok take(struct parser *p, bool values, struct token *tk)
{
	look(p, values, tk);
	p->have_peek = false;
	return tk->t;
}

/* Start a message: requirement errors carry kube's prefix. */
static void err_begin(struct parser *p, bool in_requirement)
{
	mb_reset(&p->mb);
	if (in_requirement)
		mb_str(&p->mb, "unable to parse requirement: ");
}

/* "found '<lit>', expected: <what>" (what includes its own punctuation). */
static lp_err found(struct parser *p, bool in_requirement,
		    const struct token *tk, const char *what)
{
	err_begin(p, in_requirement);
	mb_str(&p->mb, "found '");
	mb_raw(&p->mb, tk->lit, tk->len);
	mb_str(&p->mb, what);
	return LP_E_BADREQUEST;
}

static char *arena_copy(srv_lsel *sel, const char *s, size_t n)
{
	LP_ASSERT(n + 1 <= sel->arena_cap - sel->arena_len);
	char *d = sel->arena + sel->arena_len;
	memcpy(d, s, n);
	d[n] = '\0';
	sel->arena_len += n + 1;
	return d;
}

static lp_err add_value(srv_lsel *sel, const char *s, size_t n)
{
	if (sel->n_vals == sel->cap_vals) {
		size_t cap = sel->cap_vals ? sel->cap_vals * 2 : 8;
		const char **v = realloc(sel->vals, cap * sizeof *v);
		if (!v)
			return LP_E_NOMEM;
		sel->vals = v;
		sel->cap_vals = cap;
	}
	sel->vals[sel->n_vals++] = n ? arena_copy(sel, s, n) : "";
	return LP_OK;
}

static lp_err add_req(srv_lsel *sel, const char *key, size_t key_len,
		      enum lop op, struct lreq **out)
{
	if (sel->n_reqs == sel->cap_reqs) {
		size_t cap = sel->cap_reqs ? sel->cap_reqs * 2 : 4;
		struct lreq *r = realloc(sel->reqs, cap * sizeof *r);
		if (!r)
			return LP_E_NOMEM;
		sel->reqs = r;
		sel->cap_reqs = cap;
	}
	struct lreq *r = &sel->reqs[sel->n_reqs++];
	r->key = arena_copy(sel, key, key_len);
	r->op = op;
	r->v_off = sel->n_vals;
	r->n_v = 0;
	r->num = 0;
	*out = r;
	return LP_OK;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "( v, v, ... )" after in/notin; values go to sel->vals. */
static lp_err parse_values(struct parser *p)
{
	struct token tk, la, la2;
	bool any = false;	/* a value was inserted (kube: s.Len() > 0) */
	bool empty = false;	/* "" was inserted: once is enough for a set */
	lp_err rc;

	if (take(p, true, &tk) != T_LPAREN)
		return found(p, true, &tk, "' expected: '('");
	look(p, true, &la);
	if (la.t == T_RPAREN) {
		take(p, true, &tk);
		return add_value(p->sel, "", 0);
	}
	if (la.t != T_ID && la.t != T_COMMA)
		return found(p, true, &la, "', expected: ',', ')' or identifier");

	/* kube's parseIdentifiersList as of v0.33: after ",," the second
	   comma is taken, so "(a,,)" fails (Kubernetes 1.35 accepts it). */
	for (;;) {
		take(p, true, &tk);
		if (tk.t == T_ID) {
			if ((rc = add_value(p->sel, tk.lit, tk.len)) != LP_OK)
				return rc;
			any = true;
			look(p, true, &la2);
			if (la2.t == T_RPAREN)
				break;
			if (la2.t != T_COMMA)
				return found(p, true, &la2,
					     "', expected: ',' or ')'");
			continue;
		}
		if (tk.t != T_COMMA)
			return found(p, true, &tk,
				     "', expected: ',', or identifier");
		/* A comma with nothing before it, after it or between it
		   and the next stands for an empty value. */
		look(p, true, &la2);
		bool add = !any || la2.t == T_RPAREN || la2.t == T_COMMA;
		if (add && !empty) {
			if ((rc = add_value(p->sel, "", 0)) != LP_OK)
				return rc;
			empty = any = true;
		}
		if (la2.t == T_RPAREN)
			break;
		if (la2.t == T_COMMA)
			take(p, true, &la2);
	}
	/* The list ends only where ')' is next. */
	if (take(p, true, &tk) != T_RPAREN)
		return found(p, true, &la, "', expected: ')'");
	return LP_OK;
}

/* kube's NewRequirement checks of the values: the bound of > and < is an
   integer; every value is a valid label value. Errors aggregate as kube
   prints a list: one alone, several as "[e1, e2]". */
static lp_err check_values(struct parser *p, struct lreq *r)
{
	const char **v = p->sel->vals + r->v_off;
	bool int_bad = false;
	size_t n_bad = 0;

	if (r->op == OP_GT || r->op == OP_LT) {
		/* The grammar gives > and < exactly one value. */
		int_bad = !parse_int(v[0], strlen(v[0]), &r->num);
		n_bad += int_bad;
	}
	for (size_t i = 0; i < r->n_v; i++)
		n_bad += !check_label_value(v[i], strlen(v[i]), NULL);
	if (n_bad == 0)
		return LP_OK;

	err_begin(p, true);
	if (n_bad > 1)
		mb_str(&p->mb, "[");
	bool first = true;
	if (int_bad) {
		mb_str(&p->mb, "values[0]: Invalid value: ");
		mb_quote(&p->mb, v[0], strlen(v[0]));
		mb_str(&p->mb, ": for 'Gt', 'Lt' operators, the value must "
			       "be an integer");
		first = false;
	}
	for (size_t i = 0; i < r->n_v; i++) {
		size_t n = strlen(v[i]);
		char idx[32];
		if (check_label_value(v[i], n, NULL))
			continue;
		if (!first)
			mb_str(&p->mb, ", ");
		first = false;
		snprintf(idx, sizeof idx, "values[%zu][", i);
		mb_str(&p->mb, idx);
		mb_str(&p->mb, r->key);
		mb_str(&p->mb, "]: Invalid value: ");
		mb_quote(&p->mb, v[i], n);
		mb_str(&p->mb, ": ");
		check_label_value(v[i], n, &p->mb);
	}
	if (n_bad > 1)
		mb_str(&p->mb, "]");
	return LP_E_BADREQUEST;
}

static lp_err parse_requirement(struct parser *p)
{
	struct token tk, la;
	bool negate = false;
	enum lop op;
	struct lreq *r;
	lp_err rc;

	if (take(p, true, &tk) == T_NOT) {
		negate = true;
		take(p, true, &tk);
	}
	if (tk.t != T_ID)
		return found(p, true, &tk, "', expected: identifier");
	if (!check_qname(tk.lit, tk.len, NULL)) {
		/* kube validates the key with a nil field path. */
		err_begin(p, true);
		mb_str(&p->mb, "<nil>: Invalid value: ");
		mb_quote(&p->mb, tk.lit, tk.len);
		mb_str(&p->mb, ": ");
		check_qname(tk.lit, tk.len, &p->mb);
		return LP_E_BADREQUEST;
	}
	/* "!key" is complete whatever follows: "!a=b" then fails in the
	   caller on '='. "key" alone is complete before ',' or the end. */
	look(p, true, &la);
	if (negate || la.t == T_EOS || la.t == T_COMMA)
		return add_req(p->sel, tk.lit, tk.len,
			       negate ? OP_NOT_EXISTS : OP_EXISTS, &r);

	struct token optk;
	take(p, false, &optk);
	if (optk.t == T_IN)
		op = OP_IN;
	else if (optk.t == T_NOTIN)
		op = OP_NOTIN;
	else if (optk.t == T_EQ || optk.t == T_EQEQ)
		op = OP_EQ;
	else if (optk.t == T_NEQ)
		op = OP_NEQ;
	else if (optk.t == T_GT)
		op = OP_GT;
	else if (optk.t == T_LT)
		op = OP_LT;
	else
		return found(p, true, &optk,
			     "', expected: in, notin, =, ==, !=, gt, lt");
	if ((rc = add_req(p->sel, tk.lit, tk.len, op, &r)) != LP_OK)
		return rc;

	if (op == OP_IN || op == OP_NOTIN) {
		if ((rc = parse_values(p)) != LP_OK)
			return rc;
	} else if (look(p, true, &la) == T_EOS || la.t == T_COMMA) {
		if ((rc = add_value(p->sel, "", 0)) != LP_OK)
			return rc;
	} else if (take(p, true, &la) == T_ID) {
		if ((rc = add_value(p->sel, la.lit, la.len)) != LP_OK)
			return rc;
	} else {
		return found(p, true, &la, "', expected: identifier");
	}

	/* Invariant 2: sort, then drop duplicates. */
	const char **v = p->sel->vals + r->v_off;
	size_t n = p->sel->n_vals - r->v_off, k = 0;
	qsort(v, n, sizeof *v, cmp_str);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || strcmp(v[k - 1], v[i]) != 0)
			v[k++] = v[i];
	r->n_v = k;
	p->sel->n_vals = r->v_off + k;
	return check_values(p, r);
}

void srv_lsel_free(srv_lsel *sel)
{
	if (!sel)
		return;
	free(sel->reqs);
	free(sel->vals);
	free(sel->arena);
	free(sel);
}

lp_err srv_lsel_parse(const char *s, srv_lsel **out, struct srv_error *err)
{
	struct parser *p = NULL;
	srv_lsel *sel = calloc(1, sizeof *sel);
	lp_err rc = LP_E_NOMEM;
	struct token tk;

	if (!sel)
		goto fail;
	if (!s)
		s = "";
	size_t len = strlen(s);
	if (len > (SIZE_MAX - 1) / 2)
		goto fail;
	/* Invariant 1: the identifiers and their NULs fit. */
	sel->arena_cap = 2 * len + 1;
	sel->arena = malloc(sel->arena_cap);
	/* The parser holds a message buffer: keep it off the stack. */
	p = calloc(1, sizeof *p);
	if (!sel->arena || !p)
		goto fail;
	p->s = s;
	p->len = len;
	p->sel = sel;

	for (;;) {
		look(p, true, &tk);
		if (tk.t == T_EOS)
			break;
		if (tk.t != T_ID && tk.t != T_NOT) {
			rc = found(p, false, &tk, "', expected: !, identifier, "
						  "or 'end of string'");
			goto fail;
		}
		if ((rc = parse_requirement(p)) != LP_OK)
			goto fail;
		take(p, true, &tk);
		if (tk.t == T_EOS)
			break;
		if (tk.t != T_COMMA) {
			rc = found(p, false, &tk,
				   "', expected: ',' or 'end of string'");
			goto fail;
		}
		if (look(p, true, &tk) != T_ID && tk.t != T_NOT) {
			rc = found(p, false, &tk,
				   "', expected: identifier after ','");
			goto fail;
		}
	}
	free(p);
	*out = sel;
	return LP_OK;
fail:
	if (rc == LP_E_NOMEM)
		nomem(err);
	else
		mb_fail(&p->mb, err);
	free(p);
	srv_lsel_free(sel);
	return rc;
}

bool srv_lsel_empty(const srv_lsel *sel)
{
	return !sel || sel->n_reqs == 0;
}

/* Bytewise order of a label value (may hold NUL) against a selector's. */
static int cmp_value(const char *a, size_t a_len, const char *b)
{
	size_t b_len = strlen(b);
	int c = memcmp(a, b, a_len < b_len ? a_len : b_len);
	if (c)
		return c;
	return (a_len > b_len) - (a_len < b_len);
}

static bool has_value(const srv_lsel *sel, const struct lreq *r,
		      const json_t *v)
{
	if (!json_is_string(v))
		return false;
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	size_t lo = r->v_off, hi = r->v_off + r->n_v;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_value(s, n, sel->vals[mid]);
		if (c == 0)
			return true;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return false;
}

static bool req_match(const srv_lsel *sel, const struct lreq *r,
		      const json_t *labels)
{
	const json_t *v = json_is_object(labels)
				  ? json_object_get(labels, r->key)
				  : NULL;
	long long n;

	switch (r->op) {
	case OP_EXISTS:
		return v != NULL;
	case OP_NOT_EXISTS:
		return v == NULL;
	case OP_EQ:
	case OP_IN:
		return v && has_value(sel, r, v);
	case OP_NEQ:
	case OP_NOTIN:
		return !v || !has_value(sel, r, v);
	case OP_GT:
	case OP_LT:
		if (!json_is_string(v) ||
		    !parse_int(json_string_value(v), json_string_length(v), &n))
			return false;
		return r->op == OP_GT ? n > r->num : n < r->num;
	}
	return false;
}

bool srv_lsel_match(const srv_lsel *sel, const json_t *labels)
{
	if (!sel)
		return true;
	for (size_t i = 0; i < sel->n_reqs; i++)
		if (!req_match(sel, &sel->reqs[i], labels))
			return false;
	return true;
}

/* ---- field selectors ---------------------------------------------------- */

struct fterm {
	const char *field; /* in the arena */
	const char *value; /* in the arena, unescaped */
	bool neq;	   /* != rather than = or == */
};

struct srv_fsel {
	struct fterm *terms;
	size_t n;
	char *arena;
};

struct slice {
	const char *p;
	size_t n;
};

static int cmp_slice(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;
	int c = memcmp(x->p, y->p, x->n < y->n ? x->n : y->n);
	if (c)
		return c;
	return (x->n > y->n) - (x->n < y->n);
}

/* kube's UnescapeValue into out (room for 3 bytes per input byte). */
static bool unescape(const char *s, size_t n, char *out, size_t *out_len,
		     struct msgbuf *mb)
{
	const unsigned char *u = (const unsigned char *)s;
	bool in_slash = false;
	size_t o = 0;
	char enc[4];

	if (!memchr(s, '\\', n) && !memchr(s, ',', n) && !memchr(s, '=', n)) {
		/* Nothing to unescape: the bytes as they are. */
		memcpy(out, s, n);
		*out_len = n;
		return true;
	}
	for (size_t i = 0; i < n;) {
		uint32_t r;
		size_t w = reg_utf8_decode(u + i, n - i, &r);
		i += w;
		if (in_slash) {
			if (r != '\\' && r != ',' && r != '=') {
				mb_reset(mb);
				mb_str(mb, "invalid field selector: invalid "
					   "escape sequence: \\");
				mb_put(mb, enc, utf8_enc(r, enc));
				return false;
			}
			out[o++] = (char)r;
			in_slash = false;
			continue;
		}
		if (r == '\\') {
			in_slash = true;
		} else if (r == ',' || r == '=') {
			/* Go prints the rune with %v: its number. */
			char tmp[80];
			snprintf(tmp, sizeof tmp, "invalid field selector: "
				 "unescaped character in value: %u", (unsigned)r);
			mb_reset(mb);
			mb_str(mb, tmp);
			return false;
		} else {
			/* Invalid bytes come out as U+FFFD, as Go's do. */
			size_t k = utf8_enc(r, enc);
			memcpy(out + o, enc, k);
			o += k;
		}
	}
	if (in_slash) {
		mb_reset(mb);
		mb_str(mb, "invalid field selector: invalid escape sequence: \\");
		return false;
	}
	*out_len = o;
	return true;
}

void srv_fsel_free(srv_fsel *sel)
{
	if (!sel)
		return;
	free(sel->terms);
	free(sel->arena);
	free(sel);
}

lp_err srv_fsel_parse(const char *s, srv_fsel **out, struct srv_error *err)
{
	srv_fsel *sel = calloc(1, sizeof *sel);
	struct slice *parts = NULL;
	struct msgbuf *mb = NULL;
	size_t n_parts = 1, len;
	lp_err rc = LP_E_NOMEM;

	if (!sel)
		goto fail;
	if (!s)
		s = "";
	len = strlen(s);
	if (len == 0)
		goto done;
	/* Each term: its bytes, up to 3 per input byte once unescaped, and
	   two NULs; there are at most len + 1 terms. */
	if (len > SIZE_MAX / 8 - 4)
		goto fail;

	/* Split at commas that no backslash escapes. */
	bool in_slash = false;
	for (size_t i = 0; i < len; i++) {
		if (in_slash)
			in_slash = false;
		else if (s[i] == '\\')
			in_slash = true;
		else if (s[i] == ',')
			n_parts++;
	}
	parts = malloc(n_parts * sizeof *parts);
	sel->terms = malloc(n_parts * sizeof *sel->terms);
	sel->arena = malloc(5 * len + 2 * n_parts);
	mb = malloc(sizeof *mb);
	if (!parts || !sel->terms || !sel->arena || !mb)
		goto fail;
	mb_reset(mb);
	size_t k = 0, start = 0;
	in_slash = false;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || (!in_slash && s[i] == ',')) {
			parts[k].p = s + start;
			parts[k].n = i - start;
			k++;
			start = i + 1;
			in_slash = false;
		} else if (in_slash) {
			in_slash = false;
		} else if (s[i] == '\\') {
			in_slash = true;
		}
	}
	LP_ASSERT(k == n_parts);
	qsort(parts, n_parts, sizeof *parts, cmp_slice);

	char *a = sel->arena;
	for (size_t i = 0; i < n_parts; i++) {
		const char *t = parts[i].p;
		size_t n = parts[i].n, op = 0, op_len = 0;
		if (n == 0)
			continue;
		/* The first operator wins; at one place "!=", then "==",
		   then "=". */
		for (op = 0; op < n; op++) {
			if (t[op] == '!' && op + 1 < n && t[op + 1] == '=')
				op_len = 2;
			else if (t[op] == '=')
				op_len = op + 1 < n && t[op + 1] == '=' ? 2 : 1;
			if (op_len)
				break;
		}
		if (!op_len) {
			mb_reset(mb);
			mb_str(mb, "invalid selector: '");
			mb_raw(mb, s, len);
			mb_str(mb, "'; can't understand '");
			mb_raw(mb, t, n);
			mb_str(mb, "'");
			rc = LP_E_BADREQUEST;
			goto fail;
		}
		struct fterm *ft = &sel->terms[sel->n++];
		ft->neq = t[op] == '!';
		ft->field = a;
		memcpy(a, t, op);
		a[op] = '\0';
		a += op + 1;
		size_t v_len;
		if (!unescape(t + op + op_len, n - op - op_len, a, &v_len, mb)) {
			rc = LP_E_BADREQUEST;
			goto fail;
		}
		ft->value = a;
		a[v_len] = '\0';
		a += v_len + 1;
		/* "=", "==" or "!=" alone selects everything: kube's parser
		   runs each term's Transform, which makes a term with neither
		   field nor value Everything(), and the and of the terms
		   drops it (fields/selector.go) */
		if (!op && !v_len)
			sel->n--;
	}
	/* an empty field with a value parses: kube refuses it when it
	   converts the field labels of the resource, in that resource's
	   words */
done:
	free(mb);
	free(parts);
	*out = sel;
	return LP_OK;
fail:
	if (rc == LP_E_NOMEM)
		nomem(err);
	else
		mb_fail(mb, err);
	free(mb);
	free(parts);
	srv_fsel_free(sel);
	return rc;
}

bool srv_fsel_empty(const srv_fsel *sel)
{
	return !sel || sel->n == 0;
}

size_t srv_fsel_count(const srv_fsel *sel)
{
	return sel ? sel->n : 0;
}

const char *srv_fsel_field(const srv_fsel *sel, size_t i)
{
	if (!sel || i >= sel->n)
		return NULL;
	return sel->terms[i].field;
}

const char *srv_fsel_exact(const srv_fsel *sel, const char *field)
{
	if (!sel || !field)
		return NULL;
	for (size_t i = 0; i < sel->n; i++)
		if (!sel->terms[i].neq && strcmp(sel->terms[i].field, field) == 0)
			return sel->terms[i].value;
	return NULL;
}

const char srv_fsel_unequal[] = "";

bool srv_fsel_match(const srv_fsel *sel,
		    const char *(*get)(void *ud, const char *field), void *ud)
{
	if (!sel)
		return true;
	for (size_t i = 0; i < sel->n; i++) {
		const struct fterm *t = &sel->terms[i];
		const char *v = get(ud, t->field);
		bool eq =
		    v != srv_fsel_unequal && strcmp(v ? v : "", t->value) == 0;
		if (eq == t->neq)
			return false;
	}
	return true;
}
