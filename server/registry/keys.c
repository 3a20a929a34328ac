/*
 * keys.c -- storage keys of Kubernetes objects (see registry.h for the
 * layout and its invariants).
 *
 * Any thread; no state. Keys are built segment by segment into a caller's
 * fixed buffer, so a too-long key is detected before anything is cut.
 */
#include <string.h>

#include "registry.h"

/* A segment may be part of a key: invariant 1 of registry.h. */
static int segment_ok(const char *s, size_t len)
{
	if (len == 0)
		return 0;
	if ((len == 1 && s[0] == '.') ||
	    (len == 2 && s[0] == '.' && s[1] == '.'))
		return 0;
	return memchr(s, '/', len) == NULL;
}

/* Append len bytes of s to k; LP_E_KEYTOOLONG if they do not fit. */
static lp_err append(struct reg_key *k, const char *s, size_t len)
{
	if (len > ENG_KEY_MAX - k->len)
		return LP_ERR(LP_E_KEYTOOLONG);
	memcpy(k->bytes + k->len, s, len);
	k->len += len;
	k->bytes[k->len] = '\0';
	return LP_OK;
}

/* Append a segment and a '/' after it. */
static lp_err append_segment(struct reg_key *k, const char *s)
{
	size_t len = strlen(s);
	if (!segment_ok(s, len))
		return LP_ERR(LP_E_INVAL);
	lp_err rc = append(k, s, len);
	if (rc != LP_OK)
		return rc;
	return append(k, "/", 1);
}

/* Build "/registry/[<group>/]<resource>/" into k. */
static lp_err resource_prefix(const char *group, const char *resource,
			      struct reg_key *k)
{
	if (!resource)
		return LP_ERR(LP_E_INVAL);
	k->len = 0;
	k->bytes[0] = '\0';
	lp_err rc = append(k, REG_ROOT, sizeof REG_ROOT - 1);
	if (rc == LP_OK && group && group[0])
		rc = append_segment(k, group);
	if (rc == LP_OK)
		rc = append_segment(k, resource);
	return rc;
}

/* Copy the bytes k holds, not the whole buffer: keys are built per
   request, and a struct copy moves 1 KiB. */
static void key_copy(struct reg_key *out, const struct reg_key *k)
{
	out->len = k->len;
	memcpy(out->bytes, k->bytes, k->len + 1);
}

/* Build "/registry/[<group>/]<resource>/[<ns>/]" into k. */
static lp_err list_prefix(const char *group, const char *resource,
			  const char *ns, struct reg_key *k)
{
	lp_err rc = resource_prefix(group, resource, k);
	if (rc == LP_OK && ns && ns[0])
		rc = append_segment(k, ns);
	return rc;
}

lp_err reg_list_prefix(const char *group, const char *resource, const char *ns,
		       struct reg_key *out)
{
	struct reg_key k;
	lp_err rc = list_prefix(group, resource, ns, &k);
	if (rc != LP_OK)
		return rc;
	key_copy(out, &k);
	return LP_OK;
}

lp_err reg_object_key(const char *group, const char *resource, const char *ns,
		      const char *name, struct reg_key *out)
{
	if (!name)
		return LP_ERR(LP_E_INVAL);
	struct reg_key k;
	lp_err rc = list_prefix(group, resource, ns, &k);
	if (rc != LP_OK)
		return rc;
	size_t len = strlen(name);
	if (!segment_ok(name, len))
		return LP_ERR(LP_E_INVAL);
	rc = append(&k, name, len);
	if (rc != LP_OK)
		return rc;
	key_copy(out, &k);
	return LP_OK;
}

lp_err reg_key_split(const char *group, const char *resource, int namespaced,
		     const void *key, size_t key_len, struct reg_key_parts *out)
{
	struct reg_key pre;
	lp_err rc = resource_prefix(group, resource, &pre);
	if (rc != LP_OK)
		return rc == LP_E_KEYTOOLONG ? LP_ERR(LP_E_INVAL) : rc;
	const char *k = key;
	if (key_len <= pre.len || memcmp(k, pre.bytes, pre.len) != 0)
		return LP_ERR(LP_E_INVAL);
	const char *rest = k + pre.len;
	size_t rest_len = key_len - pre.len;
	if (memchr(rest, '\0', rest_len))
		return LP_ERR(LP_E_INVAL);
	struct reg_key_parts p = {0};
	const char *slash = memchr(rest, '/', rest_len);
	if (namespaced) {
		if (!slash)
			return LP_ERR(LP_E_INVAL);
		p.ns = rest;
		p.ns_len = (size_t)(slash - rest);
		p.name = slash + 1;
		p.name_len = rest_len - p.ns_len - 1;
		if (!segment_ok(p.ns, p.ns_len))
			return LP_ERR(LP_E_INVAL);
	} else {
		p.name = rest;
		p.name_len = rest_len;
	}
	if (!segment_ok(p.name, p.name_len))
		return LP_ERR(LP_E_INVAL);
	*out = p;
	return LP_OK;
}
