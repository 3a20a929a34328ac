/*
 * reqinfo.c -- RequestInfo derivation (reference §1.3, upstream
 * apiserver/pkg/endpoints/request/requestinfo.go), written from the rules.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "reqinfo.h"

#define MAX_PARTS 16

bool srv_query_bool(const char *v)
{
	if (!v)
		return false;
	return !(strcmp(v, "0") == 0 || strcasecmp(v, "false") == 0);
}

static const char *method_verb(const char *m)
{
	if (!strcmp(m, "POST"))
		return "create";
	if (!strcmp(m, "GET") || !strcmp(m, "HEAD"))
		return "get";
	if (!strcmp(m, "PUT"))
		return "update";
	if (!strcmp(m, "PATCH"))
		return "patch";
	if (!strcmp(m, "DELETE"))
		return "delete";
	return "";
}

static const char *lower_method(const char *m)
{
	static const char *const known[] = {"get",    "post",  "put",
					    "patch",  "delete", "head",
					    "options", "connect", "trace"};
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (!strcasecmp(m, known[i]))
			return known[i];
	return "";
}

/* Does the fieldSelector name exactly one metadata.name? Returns it in buf. */
static const char *selector_name(const char *fs, char *buf, size_t n)
{
	if (!fs)
		return NULL;
	const char *prefixes[] = {"metadata.name==", "metadata.name="};
	for (int i = 0; i < 2; i++) {
		size_t pl = strlen(prefixes[i]);
		if (strncmp(fs, prefixes[i], pl) != 0)
			continue;
		const char *v = fs + pl;
		size_t vl = strlen(v);
		if (vl == 0 || vl >= n || strpbrk(v, ",\\!=/%") ||
		    !strcmp(v, ".") || !strcmp(v, ".."))
			return NULL;
		memcpy(buf, v, vl + 1);
		return buf;
	}
	return NULL;
}

static lp_err not_found(struct srv_error *err)
{
	/* go-restful has no route: kube's generic 404, empty details */
	err->generic = true;
	return srv_error_set(
	    err, LP_E_NOTFOUND,
	    "the server could not find the requested resource");
}

struct split {
	int n;	      /* segments, parts[] holds the first MAX_PARTS */
	int n_empty;  /* empty segments */
	int empty_at; /* index of the first empty one */
	bool dots;    /* a "." or ".." segment */
};

/*
 * Splits path (len bytes, written over) into segments as kube-apiserver
 * does: trailing slashes dropped, then every '/' after the leading one
 * separates two segments, so "a//b" holds an empty segment. kube's
 * RequestInfo splits the trimmed path without collapsing, and its router
 * matches an empty segment only where it takes a parameter; a leading "//"
 * is a 404 there ("//version", "//api/v1/pods").
 */
static void split_path(char *path, size_t len, char **parts, struct split *sp)
{
	while (len > 0 && path[len - 1] == '/')
		path[--len] = 0;
	char *s = path[0] == '/' ? path + 1 : path;
	if (!*s)
		return;
	for (;;) {
		char *e = strchr(s, '/');
		if (e)
			*e = 0;
		if (!strcmp(s, ".") || !strcmp(s, ".."))
			sp->dots = true;
		if (!*s && sp->n_empty++ == 0)
			sp->empty_at = sp->n;
		if (sp->n < MAX_PARTS)
			parts[sp->n] = s;
		sp->n++;
		if (!e)
			return;
		s = e + 1;
	}
}

void srv_reqinfo_free(struct srv_reqinfo *ri)
{
	if (ri) {
		free(ri->buf_);
		ri->buf_ = NULL;
	}
}

lp_err srv_reqinfo_parse(const char *method, const char *path, srv_query_fn q,
			 void *ud, struct srv_reqinfo *out,
			 struct srv_error *err)
{
	struct srv_reqinfo ri = {.verb = lower_method(method ? method : ""),
				 .prefix = "", .group = "", .version = "",
				 .ns = "", .resource = "", .name = "",
				 .subresource = ""};
	size_t plen = path ? strlen(path) : 0;
	/* room for the path plus a name taken from a field selector */
	ri.buf_ = malloc(plen + 256 + 2);
	if (!ri.buf_)
		return srv_error_set(err, LP_E_NOMEM, "out of memory");
	memcpy(ri.buf_, path ? path : "", plen + 1);
	char *parts[MAX_PARTS];
	struct split sp = {0};
	split_path(ri.buf_, plen, parts, &sp);
	if (sp.dots) {
		srv_reqinfo_free(&ri);
		return not_found(err);
	}
	if (sp.n < 3 || (strcmp(parts[0], "api") && strcmp(parts[0], "apis")) ||
	    (!strcmp(parts[0], "apis") && sp.n < 4)) {
		if (sp.n_empty) {
			srv_reqinfo_free(&ri);
			return not_found(err);
		}
		*out = ri;
		return LP_OK;
	}
	/* Only the first nine segments are ever looked at below. */
	int n = sp.n < MAX_PARTS ? sp.n : MAX_PARTS;
	int i = 0;
	ri.prefix = parts[i++];
	if (!strcmp(ri.prefix, "apis"))
		ri.group = parts[i++];
	ri.version = parts[i++];
	ri.is_resource = true;
	const char *verb = method_verb(method ? method : "");
	if (i < n && !strcmp(parts[i], "watch")) {
		verb = "watch";
		ri.watch_path = true;
		i++;
		if (i >= n) {
			srv_reqinfo_free(&ri);
			return not_found(err);
		}
	}
	int ns_at = -1;
	if (i < n && !strcmp(parts[i], "namespaces")) {
		if (i + 1 < n) {
			ri.ns = parts[i + 1];
			ns_at = i + 1;
			if (n - i >= 3 && strcmp(parts[i + 2], "status") &&
			    strcmp(parts[i + 2], "finalize")) {
				i += 2;
				ri.in_ns = true;
			}
		}
	}
	/* The namespace is the one place kube gives an empty segment a
	   meaning: /api/v1/namespaces//pods lists across namespaces. */
	if (sp.n_empty > 1 || (sp.n_empty == 1 && sp.empty_at != ns_at)) {
		srv_reqinfo_free(&ri);
		return not_found(err);
	}
	if (i < n)
		ri.resource = parts[i];
	if (i + 1 < n)
		ri.name = parts[i + 1];
	if (i + 2 < n)
		ri.subresource = parts[i + 2];
	if (!ri.name[0] && !strcmp(verb, "get")) {
		const char *w = q ? q(ud, "watch") : NULL;
		verb = srv_query_bool(w) ? "watch" : "list";
	}
	if (!ri.name[0] && (!strcmp(verb, "watch") || !strcmp(verb, "list"))) {
		char *nb = ri.buf_ + plen + 1;
		const char *nm = selector_name(q ? q(ud, "fieldSelector") : NULL,
					       nb, 256);
		if (nm && !strcmp(verb, "watch"))
			ri.name = nm;
	}
	if (!ri.name[0] && !strcmp(verb, "delete"))
		verb = "deletecollection";
	ri.verb = verb;
	*out = ri;
	return LP_OK;
}
