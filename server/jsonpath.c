/*
 * jsonpath.c -- see jsonpath.h. A parser into a tree of nodes (client-go's
 * node types) and a walk over sets of values, both written after client-go's
 * util/jsonpath behaviour.
 *
 * Invariants:
 *  1. Parsing never recurses per token: a template is a loop over text and
 *     actions, an action a loop over its tokens. It recurses only into the
 *     sub-templates of unions, dict keys and filter sides, at most
 *     MAX_NEST deep.
 *  2. A walk returns a new set, or fails; on failure the set is what
 *     client-go's step returns with its error (its input, mostly), which a
 *     filter's existence test still looks at.
 *  3. Values in sets are borrowed from the document, or made by the walk
 *     (a template's texts and numbers) and held by the walk's `made` list
 *     until it ends.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonpath.h"
#include "registry/json.h"

#define MAX_NEST 32

enum jk {
	JK_LIST,
	JK_TEXT,
	JK_FIELD,
	JK_ARRAY,
	JK_FILTER,
	JK_INT,
	JK_FLOAT,
	JK_BOOL,
	JK_WILD,
	JK_RECURSIVE,
	JK_UNION,
	JK_IDENT,
};

struct param {
	long long v;
	bool known, derived;
};

struct node {
	enum jk k;
	char *s;     /* TEXT, FIELD, IDENT; FILTER: the operator or "exists" */
	size_t slen; /* TEXT: its length (it may hold NUL) */
	long long i; /* INT */
	double f;    /* FLOAT */
	bool b;	     /* BOOL */
	struct param pa[3];  /* ARRAY */
	struct node **kid;   /* LIST: its nodes; UNION: lists; FILTER: left, right */
	size_t n, cap;
};

struct srv_jsonpath {
	struct node *root;
};

/* ------------------------------------------------------------------ */
/* nodes                                                                */
/* ------------------------------------------------------------------ */

static void node_free(struct node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++)
		node_free(n->kid[i]);
	free(n->kid);
	free(n->s);
	free(n);
}

static struct node *node_new(enum jk k)
{
	struct node *n = calloc(1, sizeof *n);
	if (n)
		n->k = k;
	return n;
}

/* Append kid to n (takes it, also on failure). */
static bool node_add(struct node *n, struct node *kid)
{
	if (!kid)
		return false;
	if (n->n == n->cap) {
		size_t cap = n->cap ? 2 * n->cap : 4;
		struct node **k = realloc(n->kid, cap * sizeof *k);
		if (!k) {
			node_free(kid);
			return false;
		}
		n->kid = k;
		n->cap = cap;
	}
	n->kid[n->n++] = kid;
	return true;
}

static struct node *node_str(enum jk k, const char *s, size_t len)
{
	struct node *n = node_new(k);
	if (!n)
		return NULL;
	n->s = malloc(len + 1);
	if (!n->s) {
		free(n);
		return NULL;
	}
	memcpy(n->s, s, len);
	n->s[len] = '\0';
	n->slen = len;
	return n;
}

/* ------------------------------------------------------------------ */
/* parser                                                               */
/* ------------------------------------------------------------------ */

#define JP_EOF (-1)

struct parser {
	const char *in;
	size_t len, pos, start, width;
	struct node *root;
	char *err;
	size_t errcap;
	int nest;
};

static bool fail(struct parser *p, const char *msg)
{
	if (p->err && p->errcap && !p->err[0])
		snprintf(p->err, p->errcap, "%s", msg);
	return false;
}

/* The next rune (a byte that starts no valid UTF-8 sequence is U+FFFD of
   width 1, as Go decodes it), or JP_EOF. */
static long next(struct parser *p)
{
	if (p->pos >= p->len) {
		p->width = 0;
		return JP_EOF;
	}
	uint32_t r;
	size_t w = reg_utf8_decode((const unsigned char *)p->in + p->pos,
				   p->len - p->pos, &r);
	p->width = w;
	p->pos += w;
	return (long)r;
}

static void backup(struct parser *p)
{
	p->pos -= p->width;
}

static long peek(struct parser *p)
{
	long r = next(p);
	backup(p);
	return r;
}

static bool starts(const struct parser *p, const char *s)
{
	size_t n = strlen(s);
	return p->len - p->pos >= n && !memcmp(p->in + p->pos, s, n);
}

static const char *consume(struct parser *p, size_t *len)
{
	const char *s = p->in + p->start;
	*len = p->pos - p->start;
	p->start = p->pos;
	return s;
}

static bool is_digit(long r)
{
	return r >= '0' && r <= '9';
}

/* unicode.IsLetter or IsDigit, or '_' (any non-ASCII rune counts as a
   letter here) */
static bool is_alnum(long r)
{
	return r == '_' || is_digit(r) || (r >= 'a' && r <= 'z') ||
	       (r >= 'A' && r <= 'Z') || (r >= 0x80 && r != 0xfffd);
}

static bool is_terminator(long r)
{
	switch (r) {
	case JP_EOF:
	case ' ':
	case '\t':
	case '\r':
	case '\n':
	case '.':
	case ',':
	case '[':
	case ']':
	case '$':
	case '@':
	case '{':
	case '}':
		return true;
	default:
		return false;
	}
}

static struct node *parse_sub(struct parser *p, const char *text, size_t len);
static bool inside_action(struct parser *p, struct node *cur);

/* The whole template: text, and actions between braces. */
static bool parse_template(struct parser *p)
{
	for (;;) {
		if (starts(p, "{")) {
			size_t n;
			const char *s;
			if (p->pos > p->start) {
				s = consume(p, &n);
				if (!node_add(p->root, node_str(JK_TEXT, s, n)))
					return fail(p, "out of memory");
			}
			p->pos++;
			consume(p, &n);
			struct node *list = node_new(JK_LIST);
			if (!node_add(p->root, list))
				return fail(p, "out of memory");
			if (!inside_action(p, list))
				return false;
			continue;
		}
		if (next(p) == JP_EOF)
			break;
	}
	if (p->pos > p->start) {
		size_t n;
		const char *s = consume(p, &n);
		if (!node_add(p->root, node_str(JK_TEXT, s, n)))
			return fail(p, "out of memory");
	}
	return true;
}

/* A field after '.' or '..': up to an unescaped terminator; backslashes
   dropped, `*` the wildcard. */
static bool parse_field(struct parser *p, struct node *cur)
{
	size_t n;
	consume(p, &n);
	for (;;) {
		long r = next(p);
		if (r == '\\') {
			next(p);
		} else if (is_terminator(r)) {
			backup(p);
			break;
		}
	}
	const char *s = consume(p, &n);
	if (n == 1 && s[0] == '*')
		return node_add(cur, node_new(JK_WILD)) || fail(p, "out of memory");
	struct node *f = node_str(JK_FIELD, s, n);
	if (!f)
		return fail(p, "out of memory");
	size_t o = 0;
	for (size_t i = 0; i < n; i++)
		if (f->s[i] != '\\')
			f->s[o++] = f->s[i];
	f->s[o] = '\0';
	f->slen = o;
	return node_add(cur, f) || fail(p, "out of memory");
}

/* Go's strconv.Atoi: an optional sign, then decimal digits, in int64. */
static bool go_atoi(const char *s, size_t n, long long *out)
{
	char buf[32];
	size_t i = (n && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
	if (n == i || n >= sizeof buf)
		return false;
	for (size_t j = i; j < n; j++)
		if (!is_digit(s[j]))
			return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	*out = strtoll(buf, NULL, 10);
	return errno == 0;
}

static bool parse_number(struct parser *p, struct node *cur)
{
	long r = peek(p);
	if (r == '+' || r == '-')
		next(p);
	for (;;) {
		r = next(p);
		if (r != '.' && !is_digit(r)) {
			backup(p);
			break;
		}
	}
	size_t n;
	const char *s = consume(p, &n);
	struct node *num = node_new(JK_INT);
	if (!num)
		return fail(p, "out of memory");
	if (go_atoi(s, n, &num->i))
		return node_add(cur, num) || fail(p, "out of memory");
	/* strconv.ParseFloat of [+-]digits[.digits]: some digit, one dot */
	size_t i = (s[0] == '+' || s[0] == '-') ? 1 : 0, digits = 0, dots = 0;
	for (size_t j = i; j < n; j++) {
		if (s[j] == '.')
			dots++;
		else
			digits++;
	}
	char buf[64];
	if (!digits || dots > 1 || n >= sizeof buf) {
		node_free(num);
		return fail(p, "cannot parse number");
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	num->k = JK_FLOAT;
	num->f = strtod(buf, NULL);
	return node_add(cur, num) || fail(p, "out of memory");
}

/* client-go's slice syntax, ^(-?\d*)(:-?\d*)?(:-?\d*)?$, into params. */
static bool parse_slice(struct parser *p, const char *t, size_t n,
			struct param pa[3])
{
	size_t at = 0;
	const char *part[3] = {NULL, NULL, NULL};
	size_t plen[3] = {0, 0, 0};
	bool present[3] = {true, false, false};
	for (int k = 0; k < 3; k++) {
		if (k > 0) {
			if (at >= n || t[at] != ':')
				break;
			at++;
			present[k] = true;
		}
		part[k] = t + at;
		if (at < n && t[at] == '-')
			at++;
		while (at < n && is_digit(t[at]))
			at++;
		plen[k] = (size_t)(t + at - part[k]);
	}
	if (at != n)
		return fail(p, "invalid array index");
	memset(pa, 0, 3 * sizeof *pa);
	for (int k = 0; k < 3; k++) {
		if (present[k] && plen[k] > 0) {
			pa[k].known = true;
			if (!go_atoi(part[k], plen[k], &pa[k].v))
				return fail(p, "array index is not a number");
		} else if (k == 1 && !present[1]) {
			/* [N]: the end is N+1, marked derived */
			pa[1].known = true;
			pa[1].v = pa[0].v + 1;
			pa[1].derived = true;
		}
	}
	return true;
}

static bool parse_array(struct parser *p, struct node *cur)
{
	for (;;) {
		long r = next(p);
		if (r == JP_EOF || r == '\n')
			return fail(p, "unterminated array");
		if (r == ']')
			break;
	}
	size_t n;
	const char *t = consume(p, &n);
	t++;
	n -= 2;
	if (n == 1 && t[0] == '*')
		t = ":";
	if (memchr(t, ',', n)) {
		/* a union: each part is "[part]" on its own */
		struct node *u = node_new(JK_UNION);
		if (!u)
			return fail(p, "out of memory");
		const char *s = t, *end = t + n;
		for (;;) {
			const char *c = memchr(s, ',', (size_t)(end - s));
			const char *e = c ? c : end;
			const char *a = s, *b = e;
			while (a < b && *a == ' ')
				a++;
			while (b > a && b[-1] == ' ')
				b--;
			char *sub = malloc((size_t)(b - a) + 3);
			struct node *list = NULL;
			if (sub) {
				sub[0] = '[';
				memcpy(sub + 1, a, (size_t)(b - a));
				sub[(b - a) + 1] = ']';
				sub[(b - a) + 2] = '\0';
				list = parse_sub(p, sub, (size_t)(b - a) + 2);
				free(sub);
			}
			if (!list || !node_add(u, list)) {
				node_free(u);
				return fail(p, "out of memory");
			}
			if (!c)
				break;
			s = c + 1;
		}
		return node_add(cur, u) || fail(p, "out of memory");
	}
	if (n >= 2 && t[0] == '\'' && t[n - 1] == '\'' &&
	    !memchr(t + 1, '\'', n - 2)) {
		/* a dict key: read again as the field path ".key" */
		char *sub = malloc(n);
		if (!sub)
			return fail(p, "out of memory");
		sub[0] = '.';
		memcpy(sub + 1, t + 1, n - 2);
		struct node *list = parse_sub(p, sub, n - 1);
		free(sub);
		if (!list)
			return false;
		for (size_t i = 0; i < list->n; i++) {
			if (!node_add(cur, list->kid[i])) {
				list->kid[i] = NULL;
				node_free(list);
				return fail(p, "out of memory");
			}
			list->kid[i] = NULL;
		}
		list->n = 0;
		node_free(list);
		return true;
	}
	struct node *a = node_new(JK_ARRAY);
	if (!a)
		return fail(p, "out of memory");
	if (!parse_slice(p, t, n, a->pa)) {
		node_free(a);
		return false;
	}
	return node_add(cur, a) || fail(p, "out of memory");
}

static bool is_op_char(char c)
{
	return c == '!' || c == '<' || c == '>' || c == '=';
}

static bool parse_filter(struct parser *p, struct node *cur)
{
	size_t n;
	p->pos += 3;
	consume(p, &n);
	bool begin = false, end = false;
	long pair = 0;
	for (;;) {
		long r = next(p);
		if (r == JP_EOF || r == '\n')
			return fail(p, "unterminated filter");
		if (r == '"' || r == '\'') {
			if (!begin) {
				begin = true;
				pair = r;
				continue;
			}
			if (p->in[p->pos - 2] != '\\' && r == pair)
				end = true;
		} else if (r == ')' && begin == end) {
			break;
		}
	}
	if (next(p) != ']')
		return fail(p, "unclosed array expect ]");
	const char *t = consume(p, &n);
	n -= 2;
	/* ^([^!<>=]+)([!<>=]+)(.+?)$ */
	size_t i = 0, j;
	while (i < n && !is_op_char(t[i]))
		i++;
	j = i;
	while (j < n && is_op_char(t[j]))
		j++;
	if (j == n && j - i >= 2)
		j--; /* the operator gives its last character to the value */
	struct node *f = node_new(JK_FILTER);
	if (!f)
		return fail(p, "out of memory");
	struct node *left, *right;
	if (i == 0 || j == i || j == n) {
		left = parse_sub(p, t, n);
		right = left ? node_new(JK_LIST) : NULL;
		f->s = strdup("exists");
	} else {
		left = parse_sub(p, t, i);
		right = left ? parse_sub(p, t + j, n - j) : NULL;
		f->s = strndup(t + i, j - i);
	}
	if (!left || !right || !f->s) {
		node_free(left);
		node_free(right);
		node_free(f);
		return fail(p, "invalid filter");
	}
	if (!node_add(f, left)) {
		node_free(right);
		node_free(f);
		return fail(p, "out of memory");
	}
	if (!node_add(f, right)) {
		node_free(f);
		return fail(p, "out of memory");
	}
	return node_add(cur, f) || fail(p, "out of memory");
}

/* Go's strconv.UnquoteChar over s (between quotes q): the text into out,
   or false where Go fails. */
static bool unquote(const char *s, size_t n, char q, char *out, size_t *olen)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		if (c == (unsigned char)q)
			return false;
		if (c != '\\') {
			out[o++] = (char)c;
			i++;
			continue;
		}
		if (i + 1 >= n)
			return false;
		char e = s[i + 1];
		i += 2;
		const char *simple = strchr("abfnrtv", e);
		if (e && simple) {
			out[o++] = "\a\b\f\n\r\t\v"[simple - "abfnrtv"];
		} else if (e == '\\' || e == q) {
			out[o++] = e;
		} else if (e == 'x' || e == 'u' || e == 'U') {
			size_t k = e == 'x' ? 2 : e == 'u' ? 4 : 8;
			uint32_t v = 0;
			if (i + k > n)
				return false;
			for (size_t m = 0; m < k; m++) {
				int d = reg_hex_digit((unsigned char)s[i + m]);
				if (d < 0)
					return false;
				v = v << 4 | (uint32_t)d;
			}
			i += k;
			if (e == 'x') {
				out[o++] = (char)v;
				continue;
			}
			if (v > 0x10ffff || (v >= 0xd800 && v < 0xe000))
				return false;
			if (v < 0x80) {
				out[o++] = (char)v;
			} else if (v < 0x800) {
				out[o++] = (char)(0xc0 | v >> 6);
				out[o++] = (char)(0x80 | (v & 0x3f));
			} else if (v < 0x10000) {
				out[o++] = (char)(0xe0 | v >> 12);
				out[o++] = (char)(0x80 | (v >> 6 & 0x3f));
				out[o++] = (char)(0x80 | (v & 0x3f));
			} else {
				out[o++] = (char)(0xf0 | v >> 18);
				out[o++] = (char)(0x80 | (v >> 12 & 0x3f));
				out[o++] = (char)(0x80 | (v >> 6 & 0x3f));
				out[o++] = (char)(0x80 | (v & 0x3f));
			}
		} else if (e >= '0' && e <= '7') {
			uint32_t v = (uint32_t)(e - '0');
			if (i + 2 > n)
				return false;
			for (size_t m = 0; m < 2; m++) {
				if (s[i + m] < '0' || s[i + m] > '7')
					return false;
				v = v * 8 + (uint32_t)(s[i + m] - '0');
			}
			i += 2;
			if (v > 255)
				return false;
			out[o++] = (char)v;
		} else {
			return false;
		}
	}
	*olen = o;
	return true;
}

static bool parse_quote(struct parser *p, struct node *cur, long q)
{
	for (;;) {
		long r = next(p);
		if (r == JP_EOF || r == '\n')
			return fail(p, "unterminated quoted string");
		if (r == q && p->in[p->pos - 2] != '\\')
			break;
	}
	size_t n;
	const char *s = consume(p, &n);
	char *buf = malloc(n + 1);
	size_t len = 0;
	if (!buf)
		return fail(p, "out of memory");
	bool ok = unquote(s + 1, n - 2, (char)q, buf, &len);
	struct node *t = ok ? node_str(JK_TEXT, buf, len) : NULL;
	free(buf);
	if (!ok)
		return fail(p, "unquote string error");
	return node_add(cur, t) || fail(p, "out of memory");
}

static bool parse_identifier(struct parser *p, struct node *cur)
{
	for (;;) {
		if (is_terminator(next(p))) {
			backup(p);
			break;
		}
	}
	size_t n;
	const char *s = consume(p, &n);
	if ((n == 4 && !memcmp(s, "true", 4)) || (n == 5 && !memcmp(s, "false", 5))) {
		struct node *b = node_new(JK_BOOL);
		if (b)
			b->b = n == 4;
		return node_add(cur, b) || fail(p, "out of memory");
	}
	return node_add(cur, node_str(JK_IDENT, s, n)) || fail(p, "out of memory");
}

/* The tokens of one action, up to its '}'. */
static bool inside_action(struct parser *p, struct node *cur)
{
	for (;;) {
		size_t n;
		bool ok = true;
		if (starts(p, "}")) {
			p->pos++;
			consume(p, &n);
			return true;
		}
		if (starts(p, "[?(")) {
			ok = parse_filter(p, cur);
		} else if (starts(p, "..")) {
			if (cur->n && cur->kid[cur->n - 1]->k == JK_RECURSIVE)
				return fail(p, "invalid multiple recursive descent");
			p->pos += 2;
			consume(p, &n);
			if (!node_add(cur, node_new(JK_RECURSIVE)))
				return fail(p, "out of memory");
			if (is_alnum(peek(p)))
				ok = parse_field(p, cur);
		} else {
			long r = next(p);
			if (r == JP_EOF || r == '\r' || r == '\n')
				return fail(p, "unclosed action");
			if (r == ' ' || r == '@' || r == '$') {
				consume(p, &n);
			} else if (r == '[') {
				ok = parse_array(p, cur);
			} else if (r == '"' || r == '\'') {
				ok = parse_quote(p, cur, r);
			} else if (r == '.') {
				ok = parse_field(p, cur);
			} else if (r == '+' || r == '-' || is_digit(r)) {
				backup(p);
				ok = parse_number(p, cur);
			} else if (is_alnum(r)) {
				backup(p);
				ok = parse_identifier(p, cur);
			} else {
				return fail(p, "unrecognized character in action");
			}
		}
		if (!ok)
			return false;
	}
}

static struct node *parse_text(const char *text, size_t len, char *err,
			       size_t errcap, int nest)
{
	struct parser p = {.in = text, .len = len, .err = err,
			   .errcap = errcap, .nest = nest};
	if (nest > MAX_NEST) {
		fail(&p, "nested too deep");
		return NULL;
	}
	p.root = node_new(JK_LIST);
	if (!p.root) {
		fail(&p, "out of memory");
		return NULL;
	}
	if (!parse_template(&p)) {
		node_free(p.root);
		return NULL;
	}
	return p.root;
}

/* client-go's parseAction: text parsed as the template "{text}"; its
   root list. */
static struct node *parse_sub(struct parser *p, const char *text, size_t len)
{
	char *t = malloc(len + 3);
	if (!t) {
		fail(p, "out of memory");
		return NULL;
	}
	t[0] = '{';
	memcpy(t + 1, text, len);
	t[len + 1] = '}';
	t[len + 2] = '\0';
	struct node *r = parse_text(t, len + 2, p->err, p->errcap, p->nest + 1);
	free(t);
	return r;
}

struct srv_jsonpath *srv_jsonpath_parse(const char *text, char *err,
					size_t errcap)
{
	if (err && errcap)
		err[0] = '\0';
	struct srv_jsonpath *jp = malloc(sizeof *jp);
	if (!jp)
		return NULL;
	jp->root = parse_text(text, strlen(text), err, errcap, 0);
	if (!jp->root) {
		free(jp);
		return NULL;
	}
	return jp;
}

struct srv_jsonpath *srv_jsonpath_column(const char *path)
{
	size_t n = strlen(path);
	char *t = malloc(n + 3);
	if (!t)
		return NULL;
	t[0] = '{';
	memcpy(t + 1, path, n);
	t[n + 1] = '}';
	t[n + 2] = '\0';
	struct srv_jsonpath *jp = srv_jsonpath_parse(t, NULL, 0);
	free(t);
	return jp;
}

void srv_jsonpath_free(struct srv_jsonpath *p)
{
	if (!p)
		return;
	node_free(p->root);
	free(p);
}

/* ------------------------------------------------------------------ */
/* evaluation                                                           */
/* ------------------------------------------------------------------ */

struct vals {
	json_t **v;
	size_t n, cap;
};

/* The values one evaluation may gather in all. Go's FindResults has no
   bound, and chained recursive descents (.spec..a..a..a) gather the
   subtrees of subtrees: on a 300-level object that is millions of values
   and many seconds of CPU, for every row of every Table. Past the bound
   the evaluation fails, as it does out of memory (a Table's cell is then
   empty, as for any path that fails). */
#define JSONPATH_MAX_VALUES ((size_t)1 << 22)

struct walk {
	struct vals made; /* values the walk created (invariant 3) */
	size_t pushed;	  /* values gathered, against JSONPATH_MAX_VALUES */
	bool nomem;	  /* out of memory or past JSONPATH_MAX_VALUES */
};

static bool push(struct walk *w, struct vals *s, json_t *v)
{
	if (++w->pushed > JSONPATH_MAX_VALUES) {
		w->nomem = true;
		return false;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		json_t **nv = realloc(s->v, cap * sizeof *nv);
		if (!nv) {
			w->nomem = true;
			return false;
		}
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n++] = v;
	return true;
}

/* A value of the walk's own (held by w->made). */
static json_t *make(struct walk *w, json_t *v)
{
	if (!v || !push(w, &w->made, v)) {
		json_decref(v);
		w->nomem = true;
		return NULL;
	}
	return v;
}

static bool copy(struct walk *w, struct vals *dst, const struct vals *src)
{
	dst->n = 0;
	for (size_t i = 0; i < src->n; i++)
		if (!push(w, dst, src->v[i]))
			return false;
	return true;
}

static bool walk(struct walk *w, const struct node *nd, const struct vals *in,
		 struct vals *out);

/* A step that fails as client-go's do, returning its input (invariant 2). */
static bool fail_with_input(struct walk *w, struct vals *out,
			    const struct vals *in)
{
	copy(w, out, in);
	return false;
}

static bool walk_list(struct walk *w, const struct node *list,
		      const struct vals *in, struct vals *out)
{
	struct vals cur = {0};
	bool ok = copy(w, &cur, in);
	for (size_t i = 0; ok && i < list->n; i++) {
		struct vals next = {0};
		ok = walk(w, list->kid[i], &cur, &next);
		free(cur.v);
		cur = next;
	}
	*out = cur;
	return ok && !w->nomem;
}

/* The children of v as Go's reflection walks an unstructured value:
   an object's values, a list's items, a string's bytes (as numbers). */
static bool children(struct walk *w, json_t *v, struct vals *out)
{
	if (json_is_object(v)) {
		const char *k;
		json_t *c;
		json_object_foreach(v, k, c) if (!push(w, out, c)) return false;
	} else if (json_is_array(v)) {
		size_t i;
		json_t *c;
		json_array_foreach(v, i, c) if (!push(w, out, c)) return false;
	} else if (json_is_string(v)) {
		const unsigned char *s = (const unsigned char *)json_string_value(v);
		for (size_t i = 0; i < json_string_length(v); i++) {
			json_t *b = make(w, json_integer(s[i]));
			if (!b || !push(w, out, b))
				return false;
		}
	}
	return true;
}

static bool walk_recursive(struct walk *w, const struct vals *in,
			   struct vals *out)
{
	for (size_t i = 0; i < in->n; i++) {
		json_t *v = in->v[i];
		if (json_is_null(v))
			continue;
		/* a string's children are its bytes, which have none: the
		   string alone is added, when it has any */
		if (json_is_string(v)) {
			if (json_string_length(v) && !push(w, out, v))
				return false;
			continue;
		}
		struct vals kids = {0};
		if (!children(w, v, &kids)) {
			free(kids.v);
			return false;
		}
		/* the value, then its descendants in pre-order (Go appends
		   the recursion's results after it), straight into out */
		if (kids.n &&
		    !(push(w, out, v) && walk_recursive(w, &kids, out))) {
			free(kids.v);
			return false;
		}
		free(kids.v);
	}
	return true;
}

/* Go's basic kinds for the template comparisons. */
enum bk { BK_BAD, BK_BOOL, BK_INT, BK_FLOAT, BK_STRING };

static enum bk kind_of(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_TRUE:
	case JSON_FALSE:
		return BK_BOOL;
	case JSON_INTEGER:
		return BK_INT;
	case JSON_REAL:
		return BK_FLOAT;
	case JSON_STRING:
		return BK_STRING;
	case JSON_NULL:
	case JSON_OBJECT:
	case JSON_ARRAY:
		return BK_BAD;
	}
	return BK_BAD;
}

static int str_cmp(const json_t *a, const json_t *b)
{
	size_t la = json_string_length(a), lb = json_string_length(b);
	int c = memcmp(json_string_value(a), json_string_value(b),
		       la < lb ? la : lb);
	return c ? c : (la > lb) - (la < lb);
}

/* template.Equal / Less: -1 on a comparison error. */
static int tmpl_eq(const json_t *a, const json_t *b)
{
	enum bk ka = kind_of(a), kb = kind_of(b);
	if (ka == BK_BAD || kb == BK_BAD || ka != kb)
		return -1;
	switch (ka) {
	case BK_BOOL:
		return json_is_true(a) == json_is_true(b);
	case BK_INT:
		return json_integer_value(a) == json_integer_value(b);
	case BK_FLOAT:
		return json_real_value(a) == json_real_value(b);
	case BK_STRING:
		return str_cmp(a, b) == 0;
	case BK_BAD:
		break;
	}
	return -1;
}

static int tmpl_lt(const json_t *a, const json_t *b)
{
	enum bk ka = kind_of(a), kb = kind_of(b);
	if (ka == BK_BAD || kb == BK_BAD || ka != kb || ka == BK_BOOL)
		return -1;
	switch (ka) {
	case BK_INT:
		return json_integer_value(a) < json_integer_value(b);
	case BK_FLOAT:
		return json_real_value(a) < json_real_value(b);
	case BK_STRING:
		return str_cmp(a, b) < 0;
	case BK_BOOL:
	case BK_BAD:
		break;
	}
	return -1;
}

static int compare(const char *op, const json_t *a, const json_t *b)
{
	int lt, eq;
	if (!strcmp(op, "==") || !strcmp(op, "!=")) {
		eq = tmpl_eq(a, b);
		return eq < 0 ? -1 : (op[0] == '=') == (eq == 1);
	}
	if (!strcmp(op, "<"))
		return tmpl_lt(a, b);
	lt = tmpl_lt(a, b);
	if (lt < 0)
		return -1;
	if (!strcmp(op, ">="))
		return !lt;
	eq = lt ? 1 : tmpl_eq(a, b);
	if (eq < 0)
		return -1;
	if (!strcmp(op, "<="))
		return lt || eq;
	if (!strcmp(op, ">"))
		return !(lt || eq);
	return -1; /* an unrecognized operator */
}

static bool walk_filter(struct walk *w, const struct node *f,
			const struct vals *in, struct vals *out)
{
	bool exists = !strcmp(f->s, "exists");
	for (size_t i = 0; i < in->n; i++) {
		json_t *arr = in->v[i];
		if (!json_is_array(arr))
			return fail_with_input(w, out, in);
		size_t j;
		json_t *e;
		json_array_foreach(arr, j, e)
		{
			struct vals one = {0}, lefts = {0}, rights = {0};
			bool ok = push(w, &one, e);
			bool lok = ok && walk_list(w, f->kid[0], &one, &lefts);
			int pass = 0;
			if (exists) {
				pass = lefts.n > 0;
			} else if (!lok || lefts.n > 1) {
				pass = -2;
			} else if (lefts.n == 1) {
				bool rok = walk_list(w, f->kid[1], &one, &rights);
				if (!rok || rights.n > 1)
					pass = -2;
				else if (rights.n == 1)
					pass = compare(f->s, lefts.v[0], rights.v[0]);
			}
			free(one.v);
			free(lefts.v);
			free(rights.v);
			if (w->nomem)
				return false;
			if (pass == -2)
				return fail_with_input(w, out, in);
			if (pass < 0)
				return false;
			if (pass && !push(w, out, e))
				return false;
		}
	}
	return true;
}

static bool walk_array(struct walk *w, const struct node *a,
		       const struct vals *in, struct vals *out)
{
	for (size_t i = 0; i < in->n; i++) {
		json_t *v = in->v[i];
		if (json_is_null(v))
			continue;
		if (!json_is_array(v))
			return fail_with_input(w, out, in);
		long long len = (long long)json_array_size(v);
		struct param pa[3];
		memcpy(pa, a->pa, sizeof pa);
		if (!pa[0].known)
			pa[0].v = 0;
		if (pa[0].v < 0)
			pa[0].v += len;
		if (!pa[1].known)
			pa[1].v = len;
		if (pa[1].v < 0 || (pa[1].v == 0 && pa[1].derived))
			pa[1].v += len;
		if (pa[1].v == pa[0].v)
			return true; /* zero items: client-go stops here */
		if (pa[0].v >= len || pa[0].v < 0 || pa[1].v > len ||
		    pa[1].v < 0 || pa[0].v > pa[1].v)
			return fail_with_input(w, out, in);
		long long step = 1;
		if (pa[2].known) {
			if (pa[2].v <= 0)
				return fail_with_input(w, out, in);
			step = pa[2].v;
		}
		for (long long k = pa[0].v; k < pa[1].v; k += step)
			if (!push(w, out, json_array_get(v, (size_t)k)))
				return false;
	}
	return true;
}

static bool walk(struct walk *w, const struct node *nd, const struct vals *in,
		 struct vals *out)
{
	switch (nd->k) {
	case JK_LIST:
		return walk_list(w, nd, in, out);
	case JK_TEXT: {
		json_t *t = make(w, json_stringn(nd->s, nd->slen));
		return t && push(w, out, t);
	}
	case JK_FIELD:
		for (size_t i = 0; i < in->n; i++) {
			json_t *c = json_is_object(in->v[i])
					? json_object_getn(in->v[i], nd->s, nd->slen)
					: NULL;
			if (c && !push(w, out, c))
				return false;
		}
		return true;
	case JK_ARRAY:
		return walk_array(w, nd, in, out);
	case JK_FILTER:
		return walk_filter(w, nd, in, out);
	case JK_INT:
	case JK_FLOAT:
	case JK_BOOL:
		for (size_t i = 0; i < in->n; i++) {
			json_t *c = make(w, nd->k == JK_INT     ? json_integer(nd->i)
					    : nd->k == JK_FLOAT ? json_real(nd->f)
								: json_boolean(nd->b));
			if (!c || !push(w, out, c))
				return false;
		}
		return true;
	case JK_WILD:
		for (size_t i = 0; i < in->n; i++)
			if (!json_is_null(in->v[i]) && !children(w, in->v[i], out))
				return false;
		return true;
	case JK_RECURSIVE:
		return walk_recursive(w, in, out);
	case JK_UNION:
		for (size_t i = 0; i < nd->n; i++) {
			struct vals part = {0};
			bool ok = walk_list(w, nd->kid[i], in, &part);
			for (size_t j = 0; ok && j < part.n; j++)
				ok = push(w, out, part.v[j]);
			free(part.v);
			if (!ok) {
				out->n = 0;
				return fail_with_input(w, out, in);
			}
		}
		return true;
	case JK_IDENT:
		/* range and end are for templates; any other is unknown */
		return fail_with_input(w, out, in);
	}
	return false;
}

json_t *srv_jsonpath_eval_first(const struct srv_jsonpath *p,
				const json_t *doc, json_t **keep)
{
	*keep = NULL;
	if (!p || !p->root->n)
		return NULL;
	struct walk w = {0};
	struct vals in = {0}, res = {0};
	json_t *first = NULL;
	/* FindResults walks every part from doc and fails as a whole */
	bool ok = push(&w, &in, (json_t *)doc);
	for (size_t i = 0; ok && i < p->root->n; i++) {
		struct vals r = {0};
		ok = walk(&w, p->root->kid[i], &in, &r) && !w.nomem;
		if (i == 0)
			res = r;
		else
			free(r.v);
	}
	if (ok && res.n)
		first = res.v[0];
	for (size_t i = 0; i < w.made.n; i++) {
		if (w.made.v[i] == first)
			*keep = json_incref(first);
		json_decref(w.made.v[i]);
	}
	free(w.made.v);
	free(in.v);
	free(res.v);
	return first;
}

json_t *srv_jsonpath_first(const json_t *doc, const char *path)
{
	struct srv_jsonpath *p = path ? srv_jsonpath_column(path) : NULL;
	json_t *keep = NULL;
	json_t *v = p ? srv_jsonpath_eval_first(p, doc, &keep) : NULL;
	srv_jsonpath_free(p);
	if (keep) {
		json_decref(keep);
		return NULL;
	}
	return v;
}
