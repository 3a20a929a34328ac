/*
 * fuzz_continue.c -- continue tokens (server/registry/object.h
 * reg_continue_decode and reg_continue_encode).
 *
 * A client hands the token back verbatim, so every byte of it is hostile.
 * Each input is tried three ways:
 *   a. as a token, decoded directly (base64url edge cases: padding, bad
 *      characters, lengths 4k+1);
 *   b. base64url-encoded here first, so that the fuzzer works on the JSON
 *      inside (its edge cases: NULs in strings, big and odd numbers,
 *      duplicate keys, deep nesting) and the dictionary helps;
 *   c. as an 8-byte revision followed by a start key, encoded then decoded.
 *
 * Invariants:
 *   1. Decoding succeeds with LP_OK or fails with LP_E_BADREQUEST and a
 *      NUL-terminated message; on failure the outputs are untouched.
 *   2. A decoded token has a revision other than 0 and a start key that is
 *      not empty, not absolute and has no empty, "." or ".." segment (a
 *      token's own leading '/' is dropped, as kube's DecodeContinue).
 *   3. Decoding is the inverse of encoding: encode(decode(t)) decodes to
 *      the same revision and start key, NULs included; and encode(rv, key)
 *      decodes back to (rv, key) exactly when rv != 0 and key is a valid
 *      start key that jansson can hold as a string (UTF-8); a key with a
 *      leading '/' decodes without it when the rest is valid.
 */
#include <jansson.h>
#include <stdbool.h>

#include "fuzz.h"
#include "registry/object.h"

static const char b64u[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* base64url without padding; new, NULL when out of memory. */
static char *enc64(const uint8_t *s, size_t n)
{
	char *o = malloc(n / 3 * 4 + 5), *p = o;
	if (!o)
		return NULL;
	size_t i = 0;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 |
			     s[i + 2];
		for (int k = 18; k >= 0; k -= 6)
			*p++ = b64u[(v >> k) & 63];
	}
	if (n - i == 1) {
		*p++ = b64u[s[i] >> 2];
		*p++ = b64u[(s[i] & 3) << 4];
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)s[i] << 8 | s[i + 1];
		*p++ = b64u[v >> 10];
		*p++ = b64u[(v >> 4) & 63];
		*p++ = b64u[(v & 15) << 2];
	}
	*p = 0;
	return o;
}

/* Invariant 2's rule for a start key, written from kube's words. */
static bool valid_start(const char *k, size_t n)
{
	if (n == 0 || k[0] == '/')
		return false;
	size_t seg = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || k[i] == '/') {
			const char *s = k + seg;
			size_t l = i - seg;
			if (l == 0 || (l == 1 && s[0] == '.') ||
			    (l == 2 && s[0] == '.' && s[1] == '.'))
				return false;
			seg = i + 1;
		}
	}
	return true;
}

/* Decode tok, check invariants 1 and 2; on success the outputs are set. */
static bool decode(const char *tok, int64_t *rv, char **start, size_t *len)
{
	char msg[128];
	int64_t r = 0x5a5a;
	char *s = (char *)&r; /* any non-NULL sentinel */
	size_t l = 0x5a5a;
	memset(msg, 'x', sizeof msg);
	/* a one-byte message buffer must still come back terminated */
	char tiny[1] = {'x'};
	int64_t r2;
	char *s2;
	size_t l2;
	lp_err rc2 = reg_continue_decode(tok, &r2, &s2, &l2, tiny, 1);
	lp_err rc = reg_continue_decode(tok, &r, &s, &l, msg, sizeof msg);
	FUZZ_CHECK(rc == rc2, "decoding depends on the message buffer");
	if (rc2 == LP_OK)
		free(s2);
	else
		FUZZ_CHECK(tiny[0] == 0, "a short message is not terminated");
	if (rc != LP_OK) {
		FUZZ_CHECK(rc == LP_E_BADREQUEST, "decode gave %s",
			   lp_errname(rc));
		FUZZ_CHECK(memchr(msg, 0, sizeof msg) && msg[0],
			   "no message for a bad token");
		FUZZ_CHECK(r == 0x5a5a && s == (char *)&r && l == 0x5a5a,
			   "a failed decode wrote its outputs");
		return false;
	}
	FUZZ_CHECK(r != 0, "a token decoded to revision 0");
	FUZZ_CHECK(valid_start(s, l), "a token decoded to a bad start key");
	FUZZ_CHECK(s[l] == 0, "the start key is not terminated");
	*rv = r;
	*start = s;
	*len = l;
	return true;
}

/* Invariant 3 for (rv, key): encode, then decode. */
static void roundtrip(int64_t rv, const char *key, size_t n)
{
	char *tok = reg_continue_encode(rv, key, n);
	if (!tok)
		return; /* out of memory */
	json_t *probe = json_stringn(key, n);
	/* a leading '/' is dropped (kube's DecodeContinue) */
	const char *k = key;
	size_t kn = n;
	if (kn && k[0] == '/') {
		k++;
		kn--;
	}
	bool want = rv != 0 && probe && valid_start(k, kn);
	json_decref(probe);
	int64_t r;
	char *s;
	size_t l;
	bool got = decode(tok, &r, &s, &l);
	FUZZ_CHECK(got == want, "encode(%lld, %zu bytes) %s", (long long)rv,
		   n, want ? "does not decode" : "decodes");
	if (got) {
		FUZZ_CHECK(r == rv && l == kn && memcmp(s, k, kn) == 0,
			   "encode then decode changed the token");
		free(s);
	}
	free(tok);
}

static void try_token(const char *tok)
{
	int64_t rv;
	char *start;
	size_t len;
	if (decode(tok, &rv, &start, &len)) {
		roundtrip(rv, start, len);
		free(start);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *tok = fuzz_strndup(data, size);
	if (!tok)
		return 0;
	try_token(tok); /* a */
	free(tok);
	char *wrapped = enc64(data, size); /* b */
	if (wrapped) {
		try_token(wrapped);
		free(wrapped);
	}
	if (size >= 8) { /* c */
		uint64_t u = 0;
		for (int i = 0; i < 8; i++)
			u = u << 8 | data[i];
		roundtrip((int64_t)u, (const char *)data + 8, size - 8);
	}
	return 0;
}
