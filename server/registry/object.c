/*
 * object.c -- see object.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "lapis/engine.h"
#include "object.h"

/* controllers/informer.c decodes only this head of most objects (a layout
   it does not recognize costs it a whole decode, never a wrong one). */
static const char *const top_order[] = {"kind", "apiVersion", "metadata"};
static const char *const meta_order[] = {
	"name",		"generateName",	      "namespace",
	"selfLink",	"uid",		      "resourceVersion",
	"generation",	"creationTimestamp", "deletionTimestamp",
	"deletionGracePeriodSeconds", "labels", "annotations",
	"ownerReferences", "finalizers",      "managedFields"};

/* Rebuild o with the listed keys first, the rest after in their order. */
static void reorder(json_t *o, const char *const *keys, size_t n)
{
	json_t *tmp = json_object();
	if (!tmp)
		return;
	for (size_t i = 0; i < n; i++) {
		json_t *v = json_object_get(o, keys[i]);
		if (v)
			json_object_set(tmp, keys[i], v);
	}
	const char *k;
	size_t kl;
	json_t *v;
	json_object_keylen_foreach(o, k, kl, v)
	{
		if (!json_object_getn(tmp, k, kl))
			json_object_setn_nocheck(tmp, k, kl, v);
	}
	/* json_object_update would cut keys at a NUL byte. */
	json_object_clear(o);
	json_object_keylen_foreach(tmp, k, kl, v)
	{
		json_object_setn_nocheck(o, k, kl, v);
	}
	json_decref(tmp);
}

void reg_canonical(json_t *obj)
{
	if (!json_is_object(obj))
		return;
	json_t *m = json_object_get(obj, "metadata");
	if (json_is_object(m))
		reorder(m, meta_order, sizeof meta_order / sizeof *meta_order);
	reorder(obj, top_order, 3);
}

#define MARK "\x01lapis-rv\x01"

static const struct reg_json_order meta_canon = {meta_order,
						 sizeof meta_order /
						     sizeof *meta_order,
						 NULL,
						 NULL,
						 "resourceVersion",
						 false};
const struct reg_json_order reg_canon_order = {top_order,   3,	  "metadata",
					       &meta_canon, NULL, false};
static const struct reg_json_order meta_sorted = {
    NULL, 0, NULL, NULL, "resourceVersion", true};
static const struct reg_json_order sorted_order = {
    NULL, 0, "metadata", &meta_sorted, NULL, true};

/* kube's own API groups (the core group has no slash in apiVersion). */
static const char *const kube_groups[] = {"admissionregistration.k8s.io",
					  "apiextensions.k8s.io",
					  "apiregistration.k8s.io",
					  "apps",
					  "authentication.k8s.io",
					  "authorization.k8s.io",
					  "autoscaling",
					  "batch",
					  "certificates.k8s.io",
					  "coordination.k8s.io",
					  "discovery.k8s.io",
					  "events.k8s.io",
					  "flowcontrol.apiserver.k8s.io",
					  "internal.apiserver.k8s.io",
					  "networking.k8s.io",
					  "node.k8s.io",
					  "policy",
					  "rbac.authorization.k8s.io",
					  "resource.k8s.io",
					  "scheduling.k8s.io",
					  "storage.k8s.io",
					  "storagemigration.k8s.io"};

bool reg_is_custom(const json_t *obj)
{
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));
	const char *slash = av ? strchr(av, '/') : NULL;
	if (!slash)
		return false;
	size_t gl = (size_t)(slash - av);
	for (size_t i = 0; i < sizeof kube_groups / sizeof *kube_groups; i++)
		if (strlen(kube_groups[i]) == gl &&
		    !memcmp(kube_groups[i], av, gl))
			return false;
	return true;
}

static int cmp_key(const void *a, const void *b)
{
	const char *const *x = a, *const *y = b;
	return strcmp(*x, *y);
}

/* o's members in byte order of their keys, as Go writes a map field of a
   struct (labels, a ConfigMap's data). Keys holding a NUL byte, which no
   field of these maps can, are left where they are. */
static void sort_map(json_t *o)
{
	size_t n = json_object_size(o), i = 0;
	if (n < 2)
		return;
	const char *prev = NULL, *k;
	size_t kl;
	json_t *v;
	bool sorted = true;
	json_object_keylen_foreach(o, k, kl, v)
	{
		if (strlen(k) != kl)
			return;
		if (prev && strcmp(prev, k) > 0)
			sorted = false;
		prev = k;
	}
	if (sorted)
		return;
	const char **keys = malloc(n * sizeof *keys);
	json_t *tmp = json_object();
	if (!keys || !tmp) {
		free(keys);
		json_decref(tmp);
		return;
	}
	json_object_foreach(o, k, v) keys[i++] = k;
	qsort(keys, i, sizeof *keys, cmp_key);
	for (size_t j = 0; j < i; j++)
		json_object_set(tmp, keys[j], json_object_get(o, keys[j]));
	free(keys);
	json_object_clear(o);
	json_object_update(o, tmp);
	json_decref(tmp);
}

/* The map fields of the built-in kinds lapis serves, sorted. */
static void sort_builtin_maps(json_t *obj)
{
	json_t *m = json_object_get(obj, "metadata");
	sort_map(json_object_get(m, "labels"));
	sort_map(json_object_get(m, "annotations"));
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	if (!kind)
		return;
	if (!strcmp(kind, "ConfigMap") || !strcmp(kind, "Secret")) {
		sort_map(json_object_get(obj, "data"));
		sort_map(json_object_get(obj, "binaryData"));
	} else if (!strcmp(kind, "Service")) {
		sort_map(
		    json_object_get(json_object_get(obj, "spec"), "selector"));
	}
}

lp_err reg_encode(json_t *obj, char **out, size_t *len, uint32_t *slot)
{
	json_t *m = json_object_get(obj, "metadata");
	if (!json_is_object(m))
		return LP_E_INVAL;
	/* Written in canonical order with the slot found on the way; where
	   the ordered dump gives up, or resourceVersion is not "", the tree
	   is reordered and marked instead. */
	bool custom = reg_is_custom(obj);
	if (!custom)
		sort_builtin_maps(obj);
	size_t n, at;
	char *s = reg_json_dump_ordered(
	    obj, custom ? &sorted_order : &reg_canon_order, &n, &at);
	if (s && at < n && n - at >= 2 && s[at] == '"' && s[at + 1] == '"' &&
	    at + 1 <= UINT32_MAX) {
		*out = s;
		*len = n;
		*slot = (uint32_t)(at + 1);
		return LP_OK;
	}
	free(s);
	reg_canonical(obj);
	/* The marker cannot appear anywhere else unescaped: control bytes in
	   strings are written as \u0001 by the encoder... and so is ours, so
	   search for its escaped form, right after the resourceVersion key. */
	json_object_set_new(m, "resourceVersion", json_string(MARK));
	s = custom ? reg_json_dump_sorted(obj, &n) : reg_json_dump(obj, &n);
	json_object_set_new(m, "resourceVersion", json_string(""));
	if (!s)
		return LP_E_NOMEM;
	static const char pat[] = "\"resourceVersion\":\"\\u0001lapis-rv\\u0001\"";
	char *p = strstr(s, pat);
	if (!p) {
		free(s);
		return LP_E_INVAL;
	}
	char *val = p + strlen("\"resourceVersion\":\"");
	size_t marklen = strlen("\\u0001lapis-rv\\u0001");
	memmove(val, val + marklen, n - (size_t)(val - s) - marklen + 1);
	*out = s;
	*len = n - marklen;
	*slot = (uint32_t)(val - s);
	return LP_OK;
}

/* n random bytes (n <= 64) from a per-thread block of the kernel's, so
   that one getrandom(2) serves 64 uids or some 200 generated names (it
   was a system call per uid, and one per character of a generated name's
   suffix); bytes are wiped from the block as they are handed out. */
void reg_random(void *out, size_t n)
{
	static _Thread_local unsigned char pool[1024];
	static _Thread_local size_t left;
	unsigned char *b = out;
	if (left < n) {
		/* over 256 bytes, a signal may cut a read short */
		size_t got = 0;
		while (got < sizeof pool) {
			ssize_t r = getrandom(pool + got, sizeof pool - got, 0);
			if (r < 0 && errno != EINTR)
				break;
			if (r > 0)
				got += (size_t)r;
		}
		if (got < sizeof pool) { /* no kernel generator: the clock */
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			for (size_t i = 0; i < n; i++)
				b[i] = (unsigned char)(rand() ^
						       (ts.tv_nsec >> (i % 24)));
			return;
		}
		left = sizeof pool;
	}
	unsigned char *p = pool + sizeof pool - left;
	memcpy(b, p, n);
	explicit_bzero(p, n);
	left -= n;
}

void reg_uuid(char buf[37])
{
	unsigned char b[16];
	reg_random(b, sizeof b);
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	/* 8-4-4-4-12 lowercase hex digits, by hand: snprintf's 16
	   conversions cost 6k instructions, 1% of a create */
	static const char hex[] = "0123456789abcdef";
	char *o = buf;
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*o++ = '-';
		*o++ = hex[b[i] >> 4];
		*o++ = hex[b[i] & 15];
	}
	*o = 0;
}

/* The text changes once a second: each thread keeps its last one (a
   create stamps two, the object's and its managed-fields entry's, and
   strftime costs ~1,400 instructions). */
void reg_now(char buf[32])
{
	static _Thread_local time_t last = -1;
	static _Thread_local char text[32];
	time_t t = time(NULL);
	if (t != last) {
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
		last = t;
	}
	memcpy(buf, text, sizeof text);
}

/* ------------------------------------------------------------ lists */

bool reg_strings_has(const json_t *arr, const char *s)
{
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v)
	{
		if (json_is_string(v) && !strcmp(json_string_value(v), s))
			return true;
	}
	return false;
}

bool reg_strings_drop(json_t *arr, const char *s)
{
	bool dropped = false;
	for (size_t i = 0; i < json_array_size(arr);) {
		const char *v = json_string_value(json_array_get(arr, i));
		if (v && !strcmp(v, s)) {
			json_array_remove(arr, i);
			dropped = true;
		} else {
			i++;
		}
	}
	return dropped;
}

bool reg_set_condition(json_t *obj, const char *type, const char *status,
		       const char *reason, const char *message)
{
	json_t *st = json_object_get(obj, "status");
	if (!json_is_object(st)) {
		st = json_object();
		json_object_set_new(obj, "status", st);
	}
	json_t *conds = json_object_get(st, "conditions");
	if (!json_is_array(conds)) {
		conds = json_array();
		json_object_set_new(st, "conditions", conds);
	}
	char now[32];
	reg_now(now);
	size_t i;
	json_t *v;
	json_array_foreach(conds, i, v)
	{
		const char *t = json_string_value(json_object_get(v, "type"));
		if (!t || strcmp(t, type))
			continue;
		const char *os = json_string_value(json_object_get(v, "status"));
		const char *orr = json_string_value(json_object_get(v, "reason"));
		const char *om = json_string_value(json_object_get(v, "message"));
		bool flip = !os || strcmp(os, status);
		if (!flip && orr && !strcmp(orr, reason) && om &&
		    !strcmp(om, message))
			return false;
		if (flip)
			json_object_set_new(v, "lastTransitionTime",
					    json_string(now));
		json_object_set_new(v, "status", json_string(status));
		json_object_set_new(v, "reason", json_string(reason));
		json_object_set_new(v, "message", json_string(message));
		return true;
	}
	json_array_append_new(conds,
			      json_pack("{s:s,s:s,s:s,s:s,s:s}", "type", type,
					"status", status, "lastTransitionTime",
					now, "reason", reason, "message",
					message));
	return true;
}

/* ------------------------------------------------------------ tokens */

static const char b64u[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
static const char b64s[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* base64 of s[0..n) in alphabet tab: padded with '=', or cut short. */
static char *b64_with(const char *tab, bool pad, const unsigned char *s,
		      size_t n)
{
	char *o = malloc((n + 2) / 3 * 4 + 1), *p = o;
	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)s[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)s[i + 1] << 8;
		if (i + 2 < n)
			v |= s[i + 2];
		*p++ = tab[(v >> 18) & 63];
		*p++ = tab[(v >> 12) & 63];
		if (i + 1 < n || pad)
			*p++ = i + 1 < n ? tab[(v >> 6) & 63] : '=';
		if (i + 2 < n || pad)
			*p++ = i + 2 < n ? tab[v & 63] : '=';
	}
	*p = 0;
	return o;
}

char *reg_b64url(const unsigned char *s, size_t n)
{
	return b64_with(b64u, false, s, n);
}

char *reg_b64(const unsigned char *s, size_t n)
{
	return b64_with(b64s, true, s, n);
}

static int b64val(char c)
{
	const char *p = c ? strchr(b64u, c) : NULL;
	return p ? (int)(p - b64u) : -1;
}

unsigned char *reg_unb64url(const char *s, size_t *out_len)
{
	size_t n = strlen(s);
	while (n && s[n - 1] == '=')
		n--;
	if (n % 4 == 1)
		return NULL;
	unsigned char *o = malloc(n / 4 * 3 + 3);
	if (!o)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i += 4) {
		unsigned v = 0;
		size_t m = n - i < 4 ? n - i : 4;
		for (size_t j = 0; j < 4; j++) {
			int d = j < m ? b64val(s[i + j]) : 0;
			if (d < 0) {
				free(o);
				return NULL;
			}
			v = (v << 6) | (unsigned)d;
		}
		o[k++] = (unsigned char)(v >> 16);
		if (m > 2)
			o[k++] = (unsigned char)(v >> 8);
		if (m > 3)
			o[k++] = (unsigned char)v;
	}
	*out_len = k;
	return o;
}

char *reg_continue_encode(int64_t rv, const char *start, size_t start_len)
{
	return reg_continue_encode_n(rv, start, start_len, -1, NULL, 0);
}

/* The check of a carried count: "nh" (see reg_continue_encode_n). */
static void count_check(const void *prefix, size_t prefix_len, int64_t rv,
			const char *start, size_t start_len, int64_t n,
			char hex[17])
{
	uint64_t h = eng_hash64(0x636f6e74696e7565ULL ^ (uint64_t)rv, prefix,
				prefix_len);
	h = eng_hash64(h ^ (uint64_t)n, start, start_len);
	snprintf(hex, 17, "%016llx", (unsigned long long)h);
}

char *reg_continue_encode_n(int64_t rv, const char *start, size_t start_len,
			    int64_t n, const void *prefix, size_t prefix_len)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "v", json_string("meta.k8s.io/v1"));
	json_object_set_new(o, "rv", json_integer(rv));
	json_object_set_new(o, "start", json_stringn(start, start_len));
	if (n >= 0 && prefix) {
		char hex[17];
		count_check(prefix, prefix_len, rv, start, start_len, n, hex);
		json_object_set_new(o, "n", json_integer(n));
		json_object_set_new(o, "nh", json_string(hex));
	}
	size_t len;
	char *s = reg_json_dump(o, &len);
	json_decref(o);
	if (!s)
		return NULL;
	char *t = reg_b64url((unsigned char *)s, len);
	free(s);
	return t;
}

int64_t reg_continue_remaining(const char *tok, const void *prefix,
			       size_t prefix_len)
{
	size_t len;
	unsigned char *raw = reg_unb64url(tok, &len);
	if (!raw)
		return -1;
	json_t *o = reg_json_load((char *)raw, len, JSON_ALLOW_NUL, NULL);
	free(raw);
	json_t *n = json_object_get(o, "n");
	json_t *rv = json_object_get(o, "rv");
	json_t *start = json_object_get(o, "start");
	const char *nh = json_string_value(json_object_get(o, "nh"));
	int64_t v = -1;
	if (json_is_integer(n) && json_integer_value(n) >= 0 &&
	    json_is_integer(rv) && json_is_string(start) && nh) {
		char hex[17];
		count_check(prefix, prefix_len, json_integer_value(rv),
			    json_string_value(start), json_string_length(start),
			    json_integer_value(n), hex);
		if (!strcmp(hex, nh))
			v = json_integer_value(n);
	}
	json_decref(o);
	return v;
}

/* Where Go's base64.RawURLEncoding refuses s (its CorruptInputError
   offset: the first byte outside the alphabet, CR and LF skipped, or a
   last quantum of one character), or -1; the characters it decodes, CR
   and LF dropped, into clean (strlen(s) + 1 bytes). */
static long go_b64url_bad(const char *s, char *clean)
{
	size_t k = 0, last = 0;
	for (size_t i = 0; s[i]; i++) {
		if (s[i] == '\r' || s[i] == '\n')
			continue;
		if (b64val(s[i]) < 0)
			return (long)i;
		clean[k++] = s[i];
		last = i;
	}
	clean[k] = 0;
	return k % 4 == 1 ? (long)last : -1;
}

lp_err reg_continue_decode(const char *tok, int64_t *rv, char **start,
			   size_t *start_len, char *msg, size_t msg_len)
{
	size_t n;
	char *b64 = malloc(strlen(tok) + 1);
	if (!b64)
		return LP_E_NOMEM;
	long bad = go_b64url_bad(tok, b64);
	/* what Go decodes, reg_unb64url does: it fails only for memory */
	unsigned char *raw = bad < 0 ? reg_unb64url(b64, &n) : NULL;
	free(b64);
	if (bad < 0 && !raw)
		return LP_E_NOMEM;
	if (!raw) {
		/* storage.DecodeContinue wraps Go's errors in its own */
		snprintf(msg, msg_len,
			 "continue key is not valid: illegal base64 data at "
			 "input byte %ld",
			 bad);
		return LP_E_BADREQUEST;
	}
	json_error_t je;
	char gomsg[160];
	json_t *o = NULL;
	lp_err rc = LP_E_BADREQUEST;
	if (!reg_go_json_check((char *)raw, n, gomsg, sizeof gomsg)) {
		free(raw);
		snprintf(msg, msg_len, "continue key is not valid: %s", gomsg);
		return rc;
	}
	o = reg_json_load((char *)raw, n, JSON_ALLOW_NUL | JSON_DECODE_ANY,
			  &je);
	free(raw);
	if (json_is_null(o)) {
		/* Go leaves the token's zero value */
		json_decref(o);
		o = json_object();
	}
	if (!json_is_object(o)) {
		if (o)
			snprintf(msg, msg_len,
				 "continue key is not valid: json: cannot "
				 "unmarshal %s into Go value of type "
				 "storage.continueToken",
				 reg_go_type(o));
		else
			snprintf(msg, msg_len, "continue key is not valid: %s",
				 je.text);
		goto out;
	}
	/* Go's json.Unmarshal into storage.continueToken: members matched to
	   the fields by name in any case, the last one standing; a value of
	   the wrong type leaves its field as it was, and the first such
	   error, in the body's order, is what the decode returns */
	static const char *const field[] = {"v", "rv", "start"};
	json_t *val[3] = {NULL, NULL, NULL};
	const char *mk;
	json_t *mv;
	bool typed = false;
	json_object_foreach(o, mk, mv)
	{
		size_t f = 0;
		while (f < 3 && strcasecmp(mk, field[f]))
			f++;
		if (f == 3 || json_is_null(mv))
			continue;
		bool ok = f == 1 ? json_is_integer(mv) : json_is_string(mv);
		if (ok) {
			val[f] = mv;
			continue;
		}
		if (typed)
			continue;
		typed = true;
		if (f == 1 && json_is_real(mv)) {
			/* Go quotes the literal: its shortest form here */
			char num[32];
			double d = json_real_value(mv);
			for (int prec = 1; prec <= 17; prec++) {
				snprintf(num, sizeof num, "%.*g", prec, d);
				if (strtod(num, NULL) == d)
					break;
			}
			snprintf(msg, msg_len,
				 "continue key is not valid: json: cannot "
				 "unmarshal number %s into Go struct field "
				 "continueToken.rv of type int64",
				 num);
		} else
			snprintf(msg, msg_len,
				 "continue key is not valid: json: cannot "
				 "unmarshal %s into Go struct field "
				 "continueToken.%s of type %s",
				 reg_go_type(mv), field[f],
				 f == 1 ? "int64" : "string");
	}
	if (typed)
		goto out;
	json_t *v = val[0], *r = val[1], *s = val[2];
	const char *vs = json_is_string(v) ? json_string_value(v) : "";
	if (strcmp(vs, "meta.k8s.io/v1") != 0) {
		snprintf(msg, msg_len,
			 "continue key is not valid: server does not recognize "
			 "this encoded version %.64s",
			 vs);
		goto out;
	}
	if (!json_is_integer(r) || json_integer_value(r) == 0) {
		snprintf(msg, msg_len, "continue key is not valid: incorrect "
				       "encoded start resourceVersion (version "
				       "meta.k8s.io/v1)");
		goto out;
	}
	if (!json_is_string(s) || json_string_length(s) == 0) {
		snprintf(msg, msg_len, "continue key is not valid: encoded start "
				       "key empty (version meta.k8s.io/v1)");
		goto out;
	}
	const char *sv = json_string_value(s);
	size_t sl = json_string_length(s);
	/* path.Clean("/" + start, unless it has its '/') must leave it as
	   it is: no empty, "." or ".." segment, no '/' at the end; and "/"
	   alone, which kube reads as the start of the range, is refused */
	const char *raw_start = sv;
	if (sv[0] == '/') {
		sv++;
		sl--;
	}
	bool clean = sl > 0;
	for (size_t i = 0; clean && i < sl;) {
		size_t j = i;
		while (j < sl && sv[j] != '/')
			j++;
		if (j == i || (j - i == 1 && sv[i] == '.') ||
		    (j - i == 2 && sv[i] == '.' && sv[i + 1] == '.') ||
		    (j < sl && j + 1 == sl))
			clean = false;
		i = j + 1;
	}
	if (!clean) {
		snprintf(msg, msg_len, "continue key is not valid: %.256s",
			 raw_start);
		goto out;
	}
	char *copy = malloc(sl + 1);
	if (!copy) {
		rc = LP_E_NOMEM;
		goto out;
	}
	memcpy(copy, sv, sl);
	copy[sl] = 0;
	*rv = json_integer_value(r);
	*start = copy;
	*start_len = sl;
	rc = LP_OK;
out:
	json_decref(o);
	return rc;
}
