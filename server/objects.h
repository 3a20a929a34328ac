/*
 * objects.h -- what the object handlers (objects.c) share with the watch
 * handler (watch.c) and the server's start-up.
 */
#ifndef LAPIS_OBJECTS_H
#define LAPIS_OBJECTS_H

#include <stdbool.h>
#include <stdint.h>

#include "http.h"
#include "resources.h"
#include "selector.h"

/* The options of a list or watch, validated (reference §3.3, §4.2). */
struct list_opts {
	int64_t limit;
	const char *cont;
	const char *rv;
	const char *rvm;
	srv_lsel *lsel;
	srv_fsel *fsel;
};

lp_err srv_list_opts(struct srv_req *r, const struct srv_resource *res,
		     bool watch, struct list_opts *o, struct srv_error *err);

/* Does obj match the selectors (either may be NULL)? */
bool srv_object_matches(const struct srv_resource *res, const srv_lsel *ls,
			const srv_fsel *fs, const json_t *obj);

/* Serve a watch (watch.c). name "" watches the collection. */
void srv_watch(struct srv_req *r, const struct srv_resource *res,
	       const char *ns, const char *name);

/* Create the namespaces a fresh store starts with. */
lp_err srv_bootstrap(eng *e);

#endif
