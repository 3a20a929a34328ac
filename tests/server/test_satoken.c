/*
 * test_satoken.c -- server/satoken.c: ES256 service account tokens. A
 * token verifies with its signer's key and with no other; every altered,
 * truncated or malformed token is refused without a crash; the parts are
 * what RFC 7515/7519 and kube's tokens hold. Keys are made per test.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../server/registry/object.h"
#include "../../server/satoken.h"

static struct srv_sa *signer(void)
{
	struct srv_sa *sa = NULL;
	struct srv_error err = {0};
	cr_assert_eq(srv_sa_new(NULL, &sa, &err), LP_OK, "%s", err.message);
	return sa;
}

static json_t *claims(void)
{
	return json_pack("{s:s,s:I,s:[s]}", "sub",
			 "system:serviceaccount:default:robot", "exp",
			 (json_int_t)4102444800, "aud", SRV_SA_ISSUER);
}

/* The JSON of base64url part i (0 header, 1 claims) of tok. */
static json_t *part_json(const char *tok, int i)
{
	const char *p = tok;
	for (int k = 0; k < i; k++)
		p = strchr(p, '.') + 1;
	size_t n = strcspn(p, ".");
	char *t = strndup(p, n);
	size_t len = 0;
	unsigned char *raw = reg_unb64url(t, &len);
	free(t);
	cr_assert_not_null(raw);
	json_t *j = json_loadb((char *)raw, len, 0, NULL);
	free(raw);
	cr_assert_not_null(j);
	return j;
}

Test(satoken, a_signed_token_verifies_and_returns_its_claims)
{
	struct srv_sa *sa = signer();
	json_t *c = claims();
	char *tok = srv_sa_sign(sa, c);
	cr_assert_not_null(tok);
	json_t *back = srv_sa_verify(sa, tok);
	cr_assert_not_null(back);
	cr_assert(json_equal(back, c));
	json_t *h = part_json(tok, 0);
	cr_assert_str_eq(json_string_value(json_object_get(h, "alg")), "ES256");
	const char *kid = json_string_value(json_object_get(h, "kid"));
	cr_assert(kid && strlen(kid) == 43, "kid: base64url of 32 bytes");
	/* the claims are written with sorted keys, as Go's library does */
	const char *d1 = strchr(tok, '.') + 1;
	size_t n = strcspn(d1, ".");
	char *ct = strndup(d1, n);
	size_t len = 0;
	unsigned char *raw = reg_unb64url(ct, &len);
	cr_assert(len > 0 && !memcmp(raw, "{\"aud\":", 7));
	free(raw);
	free(ct);
	/* the signature is r || s, 64 bytes: 86 characters */
	cr_assert_eq(strlen(strrchr(tok, '.') + 1), 86);
	json_decref(h);
	json_decref(back);
	json_decref(c);
	free(tok);
	srv_sa_free(sa);
}

Test(satoken, another_key_refuses_the_token)
{
	struct srv_sa *a = signer(), *b = signer();
	json_t *c = claims();
	char *tok = srv_sa_sign(a, c);
	cr_assert_null(srv_sa_verify(b, tok));
	json_decref(c);
	free(tok);
	srv_sa_free(a);
	srv_sa_free(b);
}

Test(satoken, every_altered_byte_is_refused)
{
	struct srv_sa *sa = signer();
	json_t *c = claims();
	char *tok = srv_sa_sign(sa, c);
	size_t n = strlen(tok);
	for (size_t i = 0; i < n; i++) {
		char *t = strdup(tok);
		/* a base64url character into another one, or a dot moved */
		t[i] = t[i] == 'A' ? 'B' : 'A';
		json_t *v = srv_sa_verify(sa, t);
		/* only the last character of a part may change and still
		   decode to the same bytes (its unused low bits) */
		if (v) {
			cr_assert(i + 1 == n || tok[i + 1] == '.',
				  "altered byte %zu accepted", i);
			json_decref(v);
		}
		free(t);
	}
	json_decref(c);
	free(tok);
	srv_sa_free(sa);
}

Test(satoken, malformed_tokens_are_refused)
{
	struct srv_sa *sa = signer();
	json_t *c = claims();
	char *tok = srv_sa_sign(sa, c);
	const char *bad[] = {"", ".", "..", "...", "a.b.c", "eyJ.eyJ.",
			     "not a token at all", "a.b.c.d"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_null(srv_sa_verify(sa, bad[i]), "%s", bad[i]);
	cr_assert_null(srv_sa_verify(sa, NULL));
	size_t n = strlen(tok);
	for (size_t cut = 0; cut < n; cut += 7) {
		char *t = strndup(tok, cut);
		cr_assert_null(srv_sa_verify(sa, t), "cut at %zu", cut);
		free(t);
	}
	/* padding is not base64url's */
	char *padded = malloc(n + 2);
	memcpy(padded, tok, n);
	memcpy(padded + n, "=", 2);
	cr_assert_null(srv_sa_verify(sa, padded));
	free(padded);
	/* alg none with the same claims */
	const char *dot = strchr(tok, '.');
	char *none = NULL;
	cr_assert(asprintf(&none, "eyJhbGciOiJub25lIn0%.*s", (int)(strrchr(tok, '.') - dot + 1), dot) > 0);
	cr_assert_null(srv_sa_verify(sa, none));
	free(none);
	json_decref(c);
	free(tok);
	srv_sa_free(sa);
}

Test(satoken, a_key_that_is_not_pem_is_invalid)
{
	struct srv_sa *sa = NULL;
	struct srv_error err = {0};
	cr_assert_eq(srv_sa_new("junk", &sa, &err), LP_E_INVAL);
	cr_assert_null(sa);
	cr_assert(strstr(err.message, "service account signing key"));
}
