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
	uint64_t rvn; /* rv as ParseUint read it (0 with a continue token) */
	const char *rvm;
	srv_lsel *lsel;
	srv_fsel *fsel;
	int64_t wait_ms; /* how long a read not older than rvn may wait for
			    it in read_list (0 once parked: revwait.c) */
};

lp_err srv_list_opts(struct srv_req *r, const struct srv_resource *res,
		     bool watch, struct list_opts *o, struct srv_error *err);
/* The details of srv_list_opts' LP_E_INVALID: kube's ListOptions in
   meta.k8s.io. */
extern const struct srv_status_what srv_listopts_what;

/* The revision a deletecollection's list would wait for (0: none, or r
   waited once already): the access handler parks r for it, if not reached,
   before the write pool runs it (revwait.c), whose fiber would wait on its
   libmicrohttpd thread. */
int64_t srv_collection_wait_rev(struct srv_req *r);

/* Does obj match the selectors (either may be NULL)? */
bool srv_object_matches(const struct srv_resource *res, const srv_lsel *ls,
			const srv_fsel *fs, const json_t *obj);

/* Have the engine track res's collection (all namespaces), so that a
   watch of it from a compacted revision at which it has not changed since
   starts from now, as kube's watch cache serves a quiet resource
   (eng_watch_track; watch.c). Every built-in is tracked at the server's
   start (srv_watch_init), each CRD version when its serving entry is
   built (crd.c). */
void srv_watch_track(eng *e, const struct srv_resource *res);

/* Serve a watch (watch.c). name "" watches the collection. */
void srv_watch(struct srv_req *r, const struct srv_resource *res,
	       const char *ns, const char *name);

/*
 * For controllers (ctlops.c): delete as DELETE does with propagationPolicy
 * policy (NULL: the default) and a UID precondition (NULL: none); and a
 * read-modify-write where fn edits the object and says whether it changed
 * (retried on concurrent writes; removing the last finalizer of an object
 * being deleted deletes it). Errors: LP_E_NOTFOUND, LP_E_CONFLICT (another
 * UID, or writes kept racing), storage errors.
 */
lp_err srv_delete_object(eng *e, const struct srv_resource *res,
			 const char *ns, const char *name, const char *uid,
			 const char *policy);
lp_err srv_mutate_object(eng *e, const struct srv_resource *res,
			 const char *ns, const char *name, const char *uid,
			 const char *manager, const char *subresource,
			 bool (*fn)(json_t *obj, void *arg), void *arg);

/* A core/v1 Event about involved (an ObjectReference) as client-go's
   recorder writes one (its name the object's and the time in ns; in the
   object's namespace, or default for a cluster-scoped one; source and
   reportingComponent component; count 1), recorded in managedFields as an
   update by manager. */
lp_err srv_record_event(eng *e, const json_t *involved, const char *type,
			const char *reason, const char *message,
			const char *component, const char *manager);

/* Whether the crd-finalizer controller runs: then DELETE of a CRD marks it
   Terminating with the cleanup finalizer and the controller removes the
   instances; else the CRD and its instances go at once. */
void srv_set_crd_cleanup(bool on);

/* Create the namespaces a fresh store starts with, those missing (also
   once a minute while serving, as kube's system namespaces controller). */
lp_err srv_bootstrap(eng *e);

/* kube-apiserver's own Service and Endpoints, default/kubernetes: the
   Service at the first address of cidr (--service-cluster-ip-range, the IP
   reserved), port 443 (https) to the serving port; the Endpoints at ip and
   port. Created when missing; the Endpoints' ports and addresses brought
   up to date each time, the Service's ports only with reconcile (at
   start: the serving port may change), as kube's controller, which runs
   every 10 s and reconciles the Service at start only; the rest left as
   users made it. LP_E_EXISTS: the IP is another Service's. */
lp_err srv_bootstrap_kubernetes_service(eng *e, const char *cidr,
					const char *ip, int port,
					bool reconcile);

#endif
