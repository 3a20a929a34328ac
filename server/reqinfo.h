/*
 * reqinfo.h -- what a request is about: kube's RequestInfo (reference §1.3).
 *
 * Pure, any thread.
 */
#ifndef LAPIS_REQINFO_H
#define LAPIS_REQINFO_H

#include <stdbool.h>

#include "srv_error.h"

struct srv_reqinfo {
	bool is_resource;	/* under /api/v1 or /apis/G/V with a resource */
	const char *verb;	/* get list watch create update patch delete
				   deletecollection, or the lowercase method for
				   non-resource requests; static string */
	const char *prefix;	/* "api" or "apis"; "" for non-resource */
	const char *group;	/* "" for the core group */
	const char *version;
	const char *ns;		/* "" when none */
	const char *resource;
	const char *name;	/* "" when none */
	const char *subresource;
	bool watch_path;	/* came through the legacy /watch/ prefix */
	bool in_ns;		/* the path went on past /namespaces/{ns}/ to
				   a resource (not a namespace's own path) */
	char *buf_;		/* owns the strings above */
};

/* How to read a query parameter (first value; NULL when absent). */
typedef const char *(*srv_query_fn)(void *ud, const char *key);

/*
 * Parse method, path (already percent-decoded) and query into *out.
 *
 * The path is split as kube-apiserver splits it: trailing slashes are
 * dropped and every other '/' separates segments, so "//" makes an empty
 * segment instead of collapsing. An empty namespace segment means "all
 * namespaces", as in kube (/api/v1/namespaces//pods lists pods in every
 * namespace); an empty segment anywhere else, a leading "//" included, is
 * LP_E_NOTFOUND, where kube's router answers 404 too.
 *
 * Errors: LP_E_NOTFOUND for paths with a "." or ".." segment, an empty
 * segment other than the namespace, or a /watch/ with nothing after it;
 * LP_E_NOMEM. On success free with srv_reqinfo_free.
 */
lp_err srv_reqinfo_parse(const char *method, const char *path, srv_query_fn q,
			 void *ud, struct srv_reqinfo *out,
			 struct srv_error *err);
void srv_reqinfo_free(struct srv_reqinfo *ri);

/* Query booleans as kube decodes them: absent false; "0"/"false" (any case)
   false; anything else, empty included, true. */
bool srv_query_bool(const char *v);

#endif
