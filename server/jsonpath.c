/*
 * jsonpath.c -- see jsonpath.h. Evaluates left to right over a small set of
 * current values (a path with [*] or a filter can fan out), keeping the
 * first match at the end.
 */
#include <stdlib.h>
#include <string.h>

#include "jsonpath.h"

#define MAX_SET 256
#define MAX_STEPS 64

struct set {
	json_t *v[MAX_SET];
	size_t n;
};

static void add(struct set *s, json_t *v)
{
	if (v && s->n < MAX_SET)
		s->v[s->n++] = v;
}

/* Compare a filter value (quoted string, number, true/false) with v. */
static bool equals(const json_t *v, const char *lit, size_t n)
{
	if (n >= 2 && (lit[0] == '"' || lit[0] == '\'') && lit[n - 1] == lit[0])
		return json_is_string(v) && json_string_length(v) == n - 2 &&
		       !memcmp(json_string_value(v), lit + 1, n - 2);
	char buf[64];
	if (n >= sizeof buf)
		return false;
	memcpy(buf, lit, n);
	buf[n] = 0;
	if (!strcmp(buf, "true"))
		return json_is_true(v);
	if (!strcmp(buf, "false"))
		return json_is_false(v);
	char *end;
	double d = strtod(buf, &end);
	if (*end || end == buf)
		return false;
	return json_is_number(v) && json_number_value(v) == d;
}

/* One step from `p`; returns the position after it or NULL on error. */
static const char *step(const char *p, struct set *in, struct set *out)
{
	out->n = 0;
	if (*p == '.') {
		p++;
		size_t n = strcspn(p, ".[");
		if (n == 0)
			return NULL;
		char key[256];
		if (n >= sizeof key)
			return NULL;
		memcpy(key, p, n);
		key[n] = 0;
		for (size_t i = 0; i < in->n; i++)
			add(out, json_object_get(in->v[i], key));
		return p + n;
	}
	if (*p != '[')
		return NULL;
	p++;
	const char *close = strchr(p, ']');
	if (!close)
		return NULL;
	if (*p == '\'' || *p == '"') {
		char q = *p;
		const char *e = strchr(p + 1, q);
		if (!e || e[1] != ']')
			return NULL;
		char key[256];
		size_t n = (size_t)(e - p - 1);
		if (n >= sizeof key)
			return NULL;
		memcpy(key, p + 1, n);
		key[n] = 0;
		for (size_t i = 0; i < in->n; i++)
			add(out, json_object_get(in->v[i], key));
		return e + 2;
	}
	if (*p == '*') {
		for (size_t i = 0; i < in->n; i++) {
			size_t j;
			json_t *v;
			const char *k;
			if (json_is_array(in->v[i]))
				json_array_foreach(in->v[i], j, v) add(out, v);
			else if (json_is_object(in->v[i]))
				json_object_foreach(in->v[i], k, v) add(out, v);
		}
		return close + 1;
	}
	if (*p == '?') {
		/* [?(@.path OP literal)] or [?(@.path)] */
		const char *e = strstr(p, ")]");
		if (p[1] != '(' || p[2] != '@' || !e)
			return NULL;
		const char *expr = p + 3;
		size_t elen = (size_t)(e - expr);
		char buf[256];
		if (elen >= sizeof buf)
			return NULL;
		memcpy(buf, expr, elen);
		buf[elen] = 0;
		char *op = strstr(buf, "==");
		bool neq = false;
		if (!op) {
			op = strstr(buf, "!=");
			neq = op != NULL;
		}
		char *lit = NULL;
		if (op) {
			*op = 0;
			lit = op + 2;
			while (*lit == ' ')
				lit++;
		}
		size_t pl = strlen(buf);
		while (pl && buf[pl - 1] == ' ')
			buf[--pl] = 0;
		size_t ll = lit ? strlen(lit) : 0;
		while (ll && lit[ll - 1] == ' ')
			ll--;
		for (size_t i = 0; i < in->n; i++) {
			if (!json_is_array(in->v[i]))
				continue;
			size_t j;
			json_t *item;
			json_array_foreach(in->v[i], j, item)
			{
				json_t *got = buf[0] ? srv_jsonpath_first(item, buf) : item;
				bool ok = lit ? (got && equals(got, lit, ll)) != neq
					      : got != NULL;
				if (ok)
					add(out, item);
			}
		}
		return e + 2;
	}
	char *end;
	long idx = strtol(p, &end, 10);
	if (end != close)
		return NULL;
	for (size_t i = 0; i < in->n; i++) {
		size_t len = json_array_size(in->v[i]);
		long k = idx < 0 ? (long)len + idx : idx;
		if (json_is_array(in->v[i]) && k >= 0 && (size_t)k < len)
			add(out, json_array_get(in->v[i], (size_t)k));
	}
	return close + 1;
}

static bool eval(const json_t *doc, const char *path, struct set *res)
{
	struct set a, b;
	struct set *cur = &a, *next = &b;
	a.n = 0;
	add(&a, (json_t *)doc);
	const char *p = path;
	/* client-go accepts "{.a.b}" templates too */
	char buf[1024];
	size_t n = strlen(p);
	if (n >= 2 && p[0] == '{' && p[n - 1] == '}' && n - 2 < sizeof buf) {
		memcpy(buf, p + 1, n - 2);
		buf[n - 2] = 0;
		p = buf;
	}
	if (*p == '$')
		p++;
	for (int steps = 0; *p; steps++) {
		if (steps >= MAX_STEPS)
			return false;
		p = step(p, cur, next);
		if (!p)
			return false;
		struct set *t = cur;
		cur = next;
		next = t;
	}
	*res = *cur;
	return true;
}

json_t *srv_jsonpath_first(const json_t *doc, const char *path)
{
	struct set r;
	if (!path || !*path || !eval(doc, path, &r) || r.n == 0)
		return NULL;
	return r.v[0];
}

bool srv_jsonpath_valid(const char *path)
{
	struct set r;
	json_t *empty = json_object();
	bool ok = path && (path[0] == '.' || path[0] == '{' || path[0] == '$') &&
		  eval(empty, path, &r);
	json_decref(empty);
	return ok;
}
