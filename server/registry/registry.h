/*
 * registry.h -- the thin layer between Kubernetes objects and the engine's
 * keys and bytes (DESIGN.md "Keys, values, revisions").
 *
 * For now it holds the key layout only. Keys follow kube-apiserver's etcd
 * layout:
 *
 *   /registry/<group>/<resource>/<namespace>/<name>   namespaced, named group
 *   /registry/<group>/<resource>/<name>               cluster-scoped
 *   /registry/<resource>/<namespace>/<name>           core group ("")
 *   /registry/<resource>/<name>                       core, cluster-scoped
 *
 * Invariants
 *  1. Every segment is non-empty, is neither "." nor "..", and holds no '/'
 *     (and, being a C string, no NUL): so a key splits back into exactly the
 *     segments it was built from.
 *  2. A list prefix ends in '/': the prefix of "pods" never matches the keys
 *     of "podtemplates", nor namespace "a" those of namespace "ab".
 *  3. A key or prefix is at most ENG_KEY_MAX bytes; longer ones are refused
 *     with LP_E_KEYTOOLONG rather than cut.
 *
 * Functions here allocate nothing and are thread-safe.
 */
#ifndef LAPIS_REGISTRY_H
#define LAPIS_REGISTRY_H

#include <stddef.h>

#include "lapis/engine.h"
#include "lapis/err.h"

/* The root every key starts with. */
#define REG_ROOT "/registry/"

/* A key or prefix built in place: bytes[0..len) plus a NUL for printing. */
struct reg_key {
	size_t len;		     /* bytes used, without the NUL */
	char bytes[ENG_KEY_MAX + 1]; /* the key, NUL-terminated */
};

/*
 * Build the key of one object.
 * group: "" or NULL for the core group. ns: NULL or "" for a cluster-scoped
 * resource. resource and name: required.
 * Errors: LP_E_INVAL (a segment breaks invariant 1), LP_E_KEYTOOLONG.
 * *out is written on success only.
 */
lp_err reg_object_key(const char *group, const char *resource, const char *ns,
		      const char *name, struct reg_key *out);

/*
 * Build the prefix of a list: every object of a resource (ns NULL or ""),
 * or those of one namespace. The prefix ends in '/'.
 * Errors and *out as reg_object_key.
 */
lp_err reg_list_prefix(const char *group, const char *resource, const char *ns,
		       struct reg_key *out);

/* Where a key's namespace and name are, as borrowed slices of the key. */
struct reg_key_parts {
	const char *ns; /* NULL for a cluster-scoped key */
	size_t ns_len;
	const char *name;
	size_t name_len;
};

/*
 * Split a key of (group, resource) back into namespace and name.
 * namespaced: 1 if the resource is namespaced. The slices in *out point
 * into key and live as long as it does.
 * Errors: LP_E_INVAL (the key is not a key of that resource and scope, or
 * group/resource break invariant 1). *out is written on success only.
 */
lp_err reg_key_split(const char *group, const char *resource, int namespaced,
		     const void *key, size_t key_len,
		     struct reg_key_parts *out);

#endif
