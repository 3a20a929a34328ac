/*
 * fuzz_reqinfo.c -- request path and query to RequestInfo
 * (server/reqinfo.h srv_reqinfo_parse), behind a percent-decoding step of
 * our own that stands in for libmicrohttpd's.
 *
 * Input: "METHOD PATH?QUERY" (without a space, the method is GET). The path
 * is percent-decoded (%XX; a '%' not followed by two hex digits stays as
 * it is; %00 ends the path, as a C string would), and so is each query
 * key and value ('+' also means a space there, as in a form); then the
 * request info is parsed. This reaches "%2e%2e"-style dot segments and
 * "%2F" slashes inside what the client meant as one segment.
 *
 * Invariants:
 *   1. srv_reqinfo_parse succeeds, or fails with LP_E_NOTFOUND; a path
 *      with a "." or ".." segment (after decoding) always fails.
 *   2. On success: the verb is one of kube's verbs or a lowercase method;
 *      group, version, namespace, resource, name and subresource hold no
 *      '/' and are not "." or ".."; a resource request has prefix "api" or
 *      "apis", a version, and the group is "" exactly when the prefix is
 *      "api"; a non-resource request has an empty prefix.
 *   3. The strings point into the request info (or are static), so they
 *      stay readable until srv_reqinfo_free, which ASan checks after the
 *      input buffers are gone.
 *   4. Empty segments, as kube splits the path (trailing slashes dropped,
 *      "//" never collapsed): the one that may succeed is a single empty
 *      segment right after a "namespaces" segment, and then the request is
 *      a resource request in every namespace (namespace ""); any other
 *      empty segment fails with LP_E_NOTFOUND.
 *   5. A resource request names a resource.
 */
#include <stdbool.h>

#include "fuzz.h"
#include "reqinfo.h"

#define MAX_PARAMS 32

struct query {
	char *key[MAX_PARAMS], *val[MAX_PARAMS];
	size_t n;
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decode s[0..n) into a new string; plus: '+' is a space. */
static char *pct_decode(const char *s, size_t n, bool plus)
{
	char *o = malloc(n + 1), *p = o;
	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		int h, l;
		if (s[i] == '%' && i + 2 < n && (h = hexval(s[i + 1])) >= 0 &&
		    (l = hexval(s[i + 2])) >= 0) {
			*p++ = (char)(h << 4 | l);
			i += 2;
		} else {
			*p++ = plus && s[i] == '+' ? ' ' : s[i];
		}
	}
	*p = 0;
	return o;
}

static const char *query_get(void *ud, const char *key)
{
	const struct query *q = ud;
	for (size_t i = 0; i < q->n; i++)
		if (strcmp(q->key[i], key) == 0)
			return q->val[i];
	return NULL;
}

static bool dot_segment(const char *s, size_t n)
{
	return (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.');
}

/* Does the decoded path hold a "." or ".." segment? */
static bool has_dots(const char *p)
{
	for (;;) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (dot_segment(p, n))
			return true;
		if (!e)
			return false;
		p = e + 1;
	}
}

/*
 * The decoded path's empty segments as kube splits it: trailing slashes
 * dropped, then every '/' but the leading one separates two segments.
 * Returns how many there are; *after_ns says whether the first follows a
 * "namespaces" segment. A model written apart from server/reqinfo.c.
 */
static int empty_segments(const char *p, bool *after_ns)
{
	size_t len = strlen(p);
	while (len > 0 && p[len - 1] == '/')
		len--;
	size_t i = len > 0 && p[0] == '/' ? 1 : 0;
	int n = 0;
	*after_ns = false;
	if (i >= len)
		return 0;
	const char *prev = NULL; /* previous segment, prev_len bytes */
	size_t prev_len = 0;
	for (;;) {
		const char *s = p + i;
		const char *e = memchr(s, '/', len - i);
		size_t sl = e ? (size_t)(e - s) : len - i;
		if (sl == 0 && n++ == 0)
			*after_ns = prev && prev_len == 10 &&
				    !memcmp(prev, "namespaces", 10);
		if (!e)
			return n;
		prev = s;
		prev_len = sl;
		i += sl + 1;
	}
}

static void check_part(const char *what, const char *v)
{
	FUZZ_CHECK(v, "%s is NULL", what);
	FUZZ_CHECK(!strchr(v, '/') && !dot_segment(v, strlen(v)),
		   "%s is \"%s\"", what, v);
}

static bool known_verb(const char *v)
{
	static const char *const verbs[] = {
		"get",	  "list",    "watch",  "create",  "update",
		"patch",  "delete",  "deletecollection",  "post",
		"put",	  "head",    "options", "connect", "trace",
		"",
	};
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		if (strcmp(v, verbs[i]) == 0)
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = fuzz_strndup(data, size);
	if (!in)
		return 0;
	size_t len = strlen(in);
	const char *method = "GET", *target = in;
	char *sp = memchr(in, ' ', len);
	if (sp) {
		*sp = 0;
		method = in;
		target = sp + 1;
	}
	const char *qm = strchr(target, '?');
	size_t plen = qm ? (size_t)(qm - target) : strlen(target);
	char *path = pct_decode(target, plen, false);
	struct query q = {.n = 0};
	if (qm) {
		char *rest = (char *)qm + 1, *part;
		while ((part = strsep(&rest, "&")) && q.n < MAX_PARAMS) {
			char *eq = strchr(part, '=');
			size_t kl = eq ? (size_t)(eq - part) : strlen(part);
			q.key[q.n] = pct_decode(part, kl, true);
			q.val[q.n] = pct_decode(eq ? eq + 1 : "",
						eq ? strlen(eq + 1) : 0, true);
			if (!q.key[q.n] || !q.val[q.n]) {
				free(q.key[q.n]);
				free(q.val[q.n]);
				break;
			}
			q.n++;
		}
	}
	char *m = strdup(method);
	if (!path || !m)
		goto out;
	struct srv_reqinfo ri;
	struct srv_error err = {0};
	bool dots = has_dots(path);
	bool after_ns;
	int n_empty = empty_segments(path, &after_ns);
	lp_err rc = srv_reqinfo_parse(m, path, query_get, &q, &ri, &err);
	FUZZ_CHECK(rc == LP_OK || rc == LP_E_NOTFOUND, "parse gave %s",
		   lp_errname(rc));
	if (dots)
		FUZZ_CHECK(rc == LP_E_NOTFOUND, "\"%s\" has a dot segment",
			   path);
	if (n_empty > 1 || (n_empty == 1 && !after_ns))
		FUZZ_CHECK(rc == LP_E_NOTFOUND,
			   "\"%s\" has an empty segment outside the namespace",
			   path);
	if (rc)
		goto out;
	/* 4: read before the path goes */
	if (n_empty)
		FUZZ_CHECK(ri.is_resource && !ri.ns[0],
			   "\"%s\" has an empty namespace segment but gave "
			   "namespace \"%s\"",
			   path, ri.ns);
	/* 3: the inputs go first, then everything is read. */
	free(path);
	path = NULL;
	free(m);
	m = NULL;
	for (size_t i = 0; i < q.n; i++) {
		free(q.key[i]);
		free(q.val[i]);
	}
	q.n = 0;
	FUZZ_CHECK(ri.verb && known_verb(ri.verb), "verb \"%s\"",
		   ri.verb ? ri.verb : "(null)");
	check_part("group", ri.group);
	check_part("version", ri.version);
	check_part("namespace", ri.ns);
	check_part("resource", ri.resource);
	check_part("name", ri.name);
	check_part("subresource", ri.subresource);
	FUZZ_CHECK(ri.prefix, "no prefix");
	if (ri.is_resource) {
		bool core = strcmp(ri.prefix, "api") == 0;
		FUZZ_CHECK(core || strcmp(ri.prefix, "apis") == 0,
			   "resource request with prefix \"%s\"", ri.prefix);
		FUZZ_CHECK(ri.version[0], "resource request without version");
		FUZZ_CHECK(ri.resource[0], "resource request without resource");
		FUZZ_CHECK(core ? !ri.group[0] : ri.group[0] != 0,
			   "%s request with group \"%s\"", ri.prefix,
			   ri.group);
	} else {
		FUZZ_CHECK(!ri.prefix[0] && !ri.watch_path,
			   "non-resource request with prefix \"%s\"",
			   ri.prefix);
	}
	srv_reqinfo_free(&ri);
out:
	free(m);
	free(path);
	for (size_t i = 0; i < q.n; i++) {
		free(q.key[i]);
		free(q.val[i]);
	}
	free(in);
	return 0;
}
