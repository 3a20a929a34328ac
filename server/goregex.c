/*
 * goregex.c -- Go regular expressions on PCRE2 (see goregex.h).
 *
 * The rewrite assumes a pattern Go accepts (srv_re2_error checked it when
 * the CRD was written); anything it does not expect makes it give up, and
 * the caller then leaves the pattern unchecked with a warning, as before.
 * Where Go and PCRE2 read the same text differently:
 *   - \s is [\t\n\f\r ] in Go; PCRE2's \s also holds \v (U+000B). \S
 *     holds \v in Go, so in a class it becomes PCRE2's \S plus \x0B.
 *   - \v is the character U+000B in Go, a class in PCRE2.
 *   - \1 to \777 are octal in Go (\1 alone is refused), back references
 *     in PCRE2: written \x{..}.
 *   - "{" that starts no repetition is literal in Go, and some such texts
 *     ("{,3}") are repetitions in newer PCRE2: written \{.
 *   - "[" inside a class is literal in Go; PCRE2 reads "[." and "[=" as
 *     collating elements: written \[ unless it starts [:name:].
 *   - (?P<name>...) and (?<name>...) name groups Go allows names PCRE2
 *     refuses (a leading digit, duplicates): written (?:...), nothing is
 *     captured anyway.
 *   - \Q...\E without its \E runs to the end in both, which here would
 *     swallow the closing of the wrapper: its text is written escaped.
 *   - "$" without the m flag is the end of the text in Go; PCRE2 also
 *     lets it match before a final newline: written \z there.
 * Compile options give the rest of Go's semantics: PCRE2_UTF ("." is one
 * rune; case folding is Unicode's), PCRE2_ALT_CIRCUMFLEX (Go's (?m)^ also
 * matches after a final newline), PCRE2_NO_AUTO_CAPTURE, and "\n" as the
 * only newline.
 *
 * Matching: pcre2_dfa_match, anchored, on "(?s:.*)(?:PATTERN)". The DFA
 * matcher follows every alternative at once and keeps no backtracking
 * stack; anchoring behind ".*" makes one pass over the value instead of
 * one pass per start position, so the time is linear in its length.
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include "goregex.h"

#include <ctype.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct srv_goregex {
	pcre2_code *code;
};

/* The DFA matcher's work space, in ints: three per active state and
   position, so a few thousand states fit. A pattern that needs more gets
   a larger one from the heap (WS_MAX bounds it: 4 MiB). */
#define WS_STACK 1536
#define WS_MAX (1 << 20)

static bool is_word(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_octal(char c)
{
	return c >= '0' && c <= '7';
}

/* A repetition {n}, {n,} or {n,m} at p? */
static bool is_repeat(const char *p)
{
	const char *s = p + 1;
	if (*s < '0' || *s > '9')
		return false;
	while (*s >= '0' && *s <= '9')
		s++;
	if (*s == ',') {
		s++;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return *s == '}';
}

/* Write byte c as a literal. */
static void literal(FILE *o, unsigned char c)
{
	if (c < 0x80 && !is_word(c))
		fprintf(o, "\\x%02x", c);
	else
		fputc(c, o);
}

/* The escape at p (p[0] is the backslash) that reads the same in a class
   and outside one; returns the text after it, NULL when it is not one. */
static const char *common_escape(FILE *o, const char *p)
{
	char e = p[1];
	if (e == 'v') { /* the character, not PCRE2's class */
		fputs("\\x0b", o);
		return p + 2;
	}
	if (is_octal(e)) {
		/* Go: \0 and \1..\7 followed by more octal, up to 3 digits */
		const char *q = p + 1;
		unsigned v = 0;
		for (int i = 0; i < 3 && is_octal(*q); i++)
			v = v * 8 + (unsigned)(*q++ - '0');
		fprintf(o, "\\x{%x}", v);
		return q;
	}
	if (e == 'x') {
		const char *q = p + 2;
		if (*q == '{') {
			const char *end = strchr(q, '}');
			if (!end)
				return NULL;
			fwrite(p, 1, (size_t)(end + 1 - p), o);
			return end + 1;
		}
		if (!isxdigit((unsigned char)q[0]) ||
		    !isxdigit((unsigned char)q[1]))
			return NULL;
		fwrite(p, 1, 4, o); /* \xHH */
		return p + 4;
	}
	if (e == 'p' || e == 'P') {
		const char *q = p + 2;
		if (*q == '{') {
			const char *end = strchr(q, '}');
			if (!end)
				return NULL;
			q = end + 1;
		} else if (*q) {
			q++;
		} else {
			return NULL;
		}
		fwrite(p, 1, (size_t)(q - p), o);
		return q;
	}
	if (strchr("afnrtdDwW", e)) {
		fwrite(p, 1, 2, o);
		return p + 2;
	}
	if (e && (unsigned char)e < 0x80 && !is_word((unsigned char)e)) {
		literal(o, (unsigned char)e); /* \. \* \\ ... */
		return p + 2;
	}
	return NULL;
}

/* A class, p just past its "["; returns the text after its "]". */
static const char *class(FILE *o, const char *p)
{
	fputc('[', o);
	if (*p == '^') {
		fputc('^', o);
		p++;
	}
	bool first = true;
	for (;;) {
		char c = *p;
		if (!c)
			return NULL;
		if (c == ']' && !first) {
			fputc(']', o);
			return p + 1;
		}
		first = false;
		if (c == '[' && p[1] == ':') {
			const char *end = strstr(p + 2, ":]");
			if (!end)
				return NULL;
			fwrite(p, 1, (size_t)(end + 2 - p), o);
			p = end + 2;
		} else if (c == '\\') {
			if (p[1] == 's') {
				fputs("\\t\\n\\f\\r\\x20", o);
				p += 2;
			} else if (p[1] == 'S') {
				fputs("\\S\\x0b", o);
				p += 2;
			} else if (!(p = common_escape(o, p))) {
				return NULL;
			}
		} else if (c == '-') {
			fputc('-', o); /* a range, or literal where Go says */
			p++;
		} else {
			literal(o, (unsigned char)c);
			p++;
		}
	}
}

/* Go refuses nesting deeper than 1000; so does the rewrite. */
#define MAX_DEPTH 1000

/* The flags at q (just past "(?"): the new multi-line state from m, and
   the text after them (at ':' or ')'), or NULL when they are not flags. */
static const char *flags(const char *q, bool *m)
{
	bool neg = false;
	for (; *q && *q != ':' && *q != ')'; q++) {
		if (*q == '-')
			neg = true;
		else if (*q == 'm')
			*m = !neg;
		else if (!strchr("isU", *q))
			return NULL;
	}
	return *q ? q : NULL;
}

/* Rewrite Go's pattern p for PCRE2 into o; false when it cannot. Tracks
   the m flag per group, as Go scopes it: Go's "$" without it is the end
   of the text, written \z (PCRE2_DOLLAR_ENDONLY would say the same, but
   PCRE2 10.42's DFA matcher then lets no (?m)$ match before a newline). */
static bool rewrite(FILE *o, const char *p)
{
	bool mstack[MAX_DEPTH + 1];
	size_t depth = 0;
	bool m = false;
	while (*p) {
		char c = *p;
		if (c == '\\') {
			char e = p[1];
			if (e == 'Q') {
				const char *end = strstr(p + 2, "\\E");
				const char *stop = end ? end : p + strlen(p);
				for (const char *q = p + 2; q < stop; q++)
					literal(o, (unsigned char)*q);
				p = end ? end + 2 : stop;
			} else if (e == 's') {
				fputs("[\\t\\n\\f\\r\\x20]", o);
				p += 2;
			} else if (e == 'S') {
				fputs("[^\\t\\n\\f\\r\\x20]", o);
				p += 2;
			} else if (e && strchr("bBAz", e)) {
				fwrite(p, 1, 2, o);
				p += 2;
			} else if (!(p = common_escape(o, p))) {
				return false;
			}
		} else if (c == '[') {
			if (!(p = class(o, p + 1)))
				return false;
		} else if (c == '(') {
			const char *q = p + 1, *fl = NULL; /* the flags, to q */
			bool inner = m;
			if (*q == '?') {
				q++;
				if (*q == 'P')
					q++;
				if (*q == '<') {
					if (!(q = strchr(q, '>')))
						return false;
				} else {
					fl = q;
					if (!(q = flags(q, &inner)))
						return false;
					if (*q ==
					    ')') { /* (?flags): the rest */
						fwrite(p, 1,
						       (size_t)(q + 1 - p), o);
						m = inner;
						p = q + 1;
						continue;
					}
				}
				q++; /* past '>' or ':' */
			}
			if (depth == MAX_DEPTH)
				return false;
			mstack[depth++] = m;
			m = inner;
			fputs("(?:", o);
			if (fl && q - 1 > fl) { /* (?flags:...): in the group */
				fputs("(?", o);
				fwrite(fl, 1, (size_t)(q - 1 - fl), o);
				fputc(')', o);
			}
			p = q;
		} else if (c == ')') {
			if (!depth)
				return false;
			m = mstack[--depth];
			fputc(')', o);
			p++;
		} else if (c == '$' && !m) {
			fputs("\\z", o);
			p++;
		} else if (c == '{' && !is_repeat(p)) {
			fputs("\\{", o);
			p++;
		} else {
			fputc(c, o); /* operators, and UTF-8 bytes */
			p++;
		}
	}
	return depth == 0;
}

struct srv_goregex *srv_goregex_compile(const char *pattern, const char **why,
					bool *oom)
{
	*oom = false;
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	if (!o) {
		*oom = true;
		*why = "out of memory";
		return NULL;
	}
	fputs("(?s:.*)(?:", o);
	bool ok = rewrite(o, pattern);
	fputc(')', o);
	if (fclose(o) != 0 || !buf) {
		free(buf);
		*oom = true;
		*why = "out of memory";
		return NULL;
	}
	if (!ok) {
		free(buf);
		*why = "cannot be translated for PCRE2";
		return NULL;
	}
	pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
	if (!cc) {
		free(buf);
		*oom = true;
		*why = "out of memory";
		return NULL;
	}
	pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
	int err = 0;
	PCRE2_SIZE off = 0;
	pcre2_code *code =
	    pcre2_compile((PCRE2_SPTR)buf, len,
			  PCRE2_UTF | PCRE2_ALT_CIRCUMFLEX |
			      PCRE2_NO_AUTO_CAPTURE | PCRE2_NEVER_BACKSLASH_C,
			  &err, &off, cc);
	pcre2_compile_context_free(cc);
	free(buf);
	if (!code) {
		*oom = err == PCRE2_ERROR_HEAPLIMIT;
		*why = *oom ? "out of memory" : "PCRE2 refused it";
		return NULL;
	}
	struct srv_goregex *re = malloc(sizeof *re);
	if (!re) {
		pcre2_code_free(code);
		*oom = true;
		*why = "out of memory";
		return NULL;
	}
	re->code = code;
	return re;
}

bool srv_goregex_match(const struct srv_goregex *re, const char *s, size_t len)
{
	pcre2_match_data *md = pcre2_match_data_create(1, NULL);
	if (!md)
		return true;
	int stack_ws[WS_STACK];
	int *ws = stack_ws;
	size_t n = WS_STACK;
	int rc;
	for (;;) {
		rc = pcre2_dfa_match(re->code, (PCRE2_SPTR)s, len, 0,
				     PCRE2_ANCHORED | PCRE2_DFA_SHORTEST, md,
				     NULL, ws, n);
		if (rc != PCRE2_ERROR_DFA_WSSIZE || n >= WS_MAX)
			break;
		n *= 4;
		if (ws != stack_ws)
			free(ws);
		ws = malloc(n * sizeof *ws);
		if (!ws)
			break;
	}
	if (ws != stack_ws)
		free(ws);
	pcre2_match_data_free(md);
	if (rc == PCRE2_ERROR_NOMATCH)
		return false;
	return true; /* a match, or no answer (goregex.h) */
}

void srv_goregex_free(struct srv_goregex *re)
{
	if (!re)
		return;
	pcre2_code_free(re->code);
	free(re);
}
