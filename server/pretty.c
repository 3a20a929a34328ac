/*
 * pretty.c -- kube's pretty-printed JSON: see pretty.h.
 *
 * Go's json.Indent (encoding/json/indent.go) drives a scanner over valid
 * JSON; ours relies on the input being the compact JSON we encoded, so a
 * byte loop that knows only strings, structure and whitespace suffices.
 */
#include "pretty.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct out {
	char *p;
	size_t len, cap;
	bool oom;
};

static bool reserve(struct out *o, size_t more)
{
	if (o->oom)
		return false;
	if (o->len + more + 1 <= o->cap)
		return true;
	size_t cap = o->cap ? o->cap : 256;
	while (cap < o->len + more + 1) {
		if (cap > SIZE_MAX / 2) {
			o->oom = true;
			return false;
		}
		cap *= 2;
	}
	char *p = realloc(o->p, cap);
	if (!p) {
		o->oom = true;
		return false;
	}
	o->p = p;
	o->cap = cap;
	return true;
}

static void put(struct out *o, const char *s, size_t n)
{
	if (!reserve(o, n))
		return;
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

static void newline(struct out *o, size_t depth)
{
	if (depth > (SIZE_MAX - 2) / 2 || !reserve(o, 1 + 2 * depth))
		return;
	o->p[o->len++] = '\n';
	memset(o->p + o->len, ' ', 2 * depth);
	o->len += 2 * depth;
}

char *srv_json_indent(const char *in, size_t n, size_t *out_len)
{
	/* compact JSON grows by about a third; one guess spares most of the
	   reallocations of a large list */
	struct out o = {0};
	if (!reserve(&o, n + n / 2))
		return NULL;
	size_t depth = 0;
	bool need_indent = false; /* after '{' or '[': not yet known empty */
	for (size_t i = 0; i < n; i++) {
		char c = in[i];
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
			continue;
		if (need_indent && c != '}' && c != ']') {
			need_indent = false;
			newline(&o, ++depth);
		}
		switch (c) {
		case '"': {
			/* the string through its closing quote, escapes
			   included */
			size_t j = i + 1;
			while (j < n && in[j] != '"')
				j += in[j] == '\\' ? 2 : 1;
			if (j > n)
				j = n; /* a trailing lone backslash */
			put(&o, in + i, (j < n ? j + 1 : n) - i);
			i = j;
			break;
		}
		case '{':
		case '[':
			need_indent = true;
			put(&o, &c, 1);
			break;
		case ',':
			put(&o, &c, 1);
			newline(&o, depth);
			break;
		case ':':
			put(&o, ": ", 2);
			break;
		case '}':
		case ']':
			if (need_indent)
				need_indent =
				    false; /* {} and [] stay as they are */
			else {
				if (depth)
					depth--;
				newline(&o, depth);
			}
			put(&o, &c, 1);
			break;
		default: {
			/* a number or a literal: up to the next structural
			   byte or space */
			size_t j = i + 1;
			while (j < n && !strchr(" \t\r\n\",:{}[]", in[j]))
				j++;
			put(&o, in + i, j - i);
			i = j - 1;
			break;
		}
		}
	}
	if (o.oom) {
		free(o.p);
		return NULL;
	}
	o.p[o.len] = '\0';
	*out_len = o.len;
	return o.p;
}

bool srv_go_parse_bool(const char *s, bool *ok)
{
	static const char *const yes[] = {"1",	  "t",	  "T",
					  "TRUE", "true", "True"};
	static const char *const no[] = {"0",	  "f",	   "F",
					 "FALSE", "false", "False"};
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
		if (!strcmp(s, yes[i])) {
			*ok = true;
			return true;
		}
		if (!strcmp(s, no[i])) {
			*ok = true;
			return false;
		}
	}
	*ok = false;
	return false;
}
