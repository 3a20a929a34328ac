/*
 * satoken.c -- ES256 JSON Web Tokens for service accounts (satoken.h).
 *
 * GnuTLS signs and verifies; ECDSA signatures there are DER
 * (SEQUENCE { r, s }), a JWT carries r and s as two 32-byte big-endian
 * numbers (RFC 7518 §3.4), so each direction converts.
 */
#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdlib.h>
#include <string.h>

#include "registry/json.h"
#include "registry/object.h"
#include "satoken.h"

#define P256_BYTES 32

struct srv_sa {
	gnutls_privkey_t key;
	gnutls_pubkey_t pub;
	char *kid; /* base64url(SHA-256(DER public key)) */
	char *header_b64; /* base64url of the fixed header */
};

void srv_sa_free(struct srv_sa *sa)
{
	if (!sa)
		return;
	if (sa->key)
		gnutls_privkey_deinit(sa->key);
	if (sa->pub)
		gnutls_pubkey_deinit(sa->pub);
	free(sa->kid);
	free(sa->header_b64);
	free(sa);
}

static lp_err bad_key(struct srv_sa *sa, int g, struct srv_error *err)
{
	srv_sa_free(sa);
	return srv_error_set(err, LP_E_INVAL,
			     "service account signing key: %s",
			     gnutls_strerror(g));
}

lp_err srv_sa_new(const char *key_pem, struct srv_sa **out,
		  struct srv_error *err)
{
	struct srv_sa *sa = calloc(1, sizeof *sa);
	if (!sa)
		return srv_error_set(err, LP_E_NOMEM, "out of memory");
	int g = gnutls_privkey_init(&sa->key);
	if (g >= 0 && key_pem) {
		gnutls_datum_t d = {(unsigned char *)key_pem,
				    (unsigned)strlen(key_pem)};
		g = gnutls_privkey_import_x509_raw(sa->key, &d,
						   GNUTLS_X509_FMT_PEM, NULL, 0);
	} else if (g >= 0) {
		g = gnutls_privkey_generate(
		    sa->key, GNUTLS_PK_ECDSA,
		    GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0);
	}
	if (g < 0 || (g = gnutls_pubkey_init(&sa->pub)) < 0 ||
	    (g = gnutls_pubkey_import_privkey(sa->pub, sa->key, 0, 0)) < 0)
		return bad_key(sa, g, err);
	unsigned bits = 0;
	if (gnutls_privkey_get_pk_algorithm(sa->key, &bits) != GNUTLS_PK_ECDSA)
		return bad_key(sa, GNUTLS_E_UNKNOWN_PK_ALGORITHM, err);
	gnutls_datum_t der = {NULL, 0};
	unsigned char sum[32];
	if ((g = gnutls_pubkey_export2(sa->pub, GNUTLS_X509_FMT_DER, &der)) < 0)
		return bad_key(sa, g, err);
	g = gnutls_hash_fast(GNUTLS_DIG_SHA256, der.data, der.size, sum);
	gnutls_free(der.data);
	if (g < 0)
		return bad_key(sa, g, err);
	sa->kid = reg_b64url(sum, sizeof sum);
	json_t *h = json_pack("{s:s,s:s}", "alg", "ES256", "kid",
			      sa->kid ? sa->kid : "");
	size_t hl = 0;
	char *ht = h ? reg_json_dump(h, &hl) : NULL;
	json_decref(h);
	sa->header_b64 = ht ? reg_b64url((unsigned char *)ht, hl) : NULL;
	free(ht);
	if (!sa->kid || !sa->header_b64) {
		srv_sa_free(sa);
		return srv_error_set(err, LP_E_NOMEM, "out of memory");
	}
	*out = sa;
	return LP_OK;
}

json_t *srv_sa_jwk(const struct srv_sa *sa)
{
	gnutls_ecc_curve_t curve;
	gnutls_datum_t x = {NULL, 0}, y = {NULL, 0};
	if (gnutls_pubkey_export_ecc_raw2(sa->pub, &curve, &x, &y,
					  GNUTLS_EXPORT_FLAG_NO_LZ) < 0)
		return NULL;
	json_t *jwk = NULL;
	unsigned char xb[P256_BYTES] = {0}, yb[P256_BYTES] = {0};
	if (curve == GNUTLS_ECC_CURVE_SECP256R1 && x.size <= P256_BYTES &&
	    y.size <= P256_BYTES) {
		/* the coordinates whole, 32 bytes each (RFC 7518 §6.2.1) */
		memcpy(xb + P256_BYTES - x.size, x.data, x.size);
		memcpy(yb + P256_BYTES - y.size, y.data, y.size);
		char *xs = reg_b64url(xb, sizeof xb);
		char *ys = reg_b64url(yb, sizeof yb);
		if (xs && ys)
			jwk = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "use",
					"sig", "kty", "EC", "kid", sa->kid, "crv",
					"P-256", "alg", "ES256", "x", xs, "y", ys);
		free(xs);
		free(ys);
	}
	gnutls_free(x.data);
	gnutls_free(y.data);
	return jwk;
}

/* A DER integer's magnitude (leading zeros dropped) right-aligned into
   32 bytes; false when it does not fit. */
static bool put_num(const gnutls_datum_t *v, unsigned char *dst)
{
	size_t n = v->size;
	const unsigned char *p = v->data;
	while (n > 0 && *p == 0) {
		p++;
		n--;
	}
	if (n > P256_BYTES)
		return false;
	memset(dst, 0, P256_BYTES - n);
	memcpy(dst + P256_BYTES - n, p, n);
	return true;
}

char *srv_sa_sign(const struct srv_sa *sa, const json_t *claims)
{
	char *ct = json_dumps(claims, JSON_COMPACT | JSON_SORT_KEYS);
	char *cb = ct ? reg_b64url((unsigned char *)ct, strlen(ct)) : NULL;
	free(ct);
	if (!cb)
		return NULL;
	size_t hl = strlen(sa->header_b64), cl = strlen(cb);
	/* header.claims.signature: 64 signature bytes are 86 characters */
	char *tok = malloc(hl + 1 + cl + 1 + 87);
	if (!tok) {
		free(cb);
		return NULL;
	}
	memcpy(tok, sa->header_b64, hl);
	tok[hl] = '.';
	memcpy(tok + hl + 1, cb, cl + 1);
	free(cb);
	gnutls_datum_t data = {(unsigned char *)tok, (unsigned)(hl + 1 + cl)};
	gnutls_datum_t sig = {NULL, 0}, r = {NULL, 0}, s = {NULL, 0};
	unsigned char raw[2 * P256_BYTES];
	bool ok = gnutls_privkey_sign_data2(sa->key, GNUTLS_SIGN_ECDSA_SHA256, 0,
					    &data, &sig) >= 0 &&
		  gnutls_decode_rs_value(&sig, &r, &s) >= 0 && put_num(&r, raw) &&
		  put_num(&s, raw + P256_BYTES);
	gnutls_free(sig.data);
	gnutls_free(r.data);
	gnutls_free(s.data);
	char *sb = ok ? reg_b64url(raw, sizeof raw) : NULL;
	if (!sb) {
		free(tok);
		return NULL;
	}
	size_t at = hl + 1 + cl;
	tok[at] = '.';
	memcpy(tok + at + 1, sb, strlen(sb) + 1);
	free(sb);
	return tok;
}

/* Decode one base64url part of length n (no padding allowed). */
static unsigned char *part(const char *s, size_t n, size_t *out_len)
{
	if (n == 0 || memchr(s, '=', n))
		return NULL;
	char *t = strndup(s, n);
	unsigned char *o = t ? reg_unb64url(t, out_len) : NULL;
	free(t);
	return o;
}

json_t *srv_sa_verify(const struct srv_sa *sa, const char *token)
{
	const char *d1 = token ? strchr(token, '.') : NULL;
	const char *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
	if (!d2 || strchr(d2 + 1, '.'))
		return NULL;
	size_t hl, cl, sl;
	unsigned char *h = part(token, (size_t)(d1 - token), &hl);
	unsigned char *c = part(d1 + 1, (size_t)(d2 - d1 - 1), &cl);
	unsigned char *sg = part(d2 + 1, strlen(d2 + 1), &sl);
	json_t *hdr = h ? reg_json_load((char *)h, hl, 0, NULL) : NULL;
	json_t *claims = c ? reg_json_load((char *)c, cl, 0, NULL) : NULL;
	const char *alg = json_string_value(json_object_get(hdr, "alg"));
	const char *kid = json_string_value(json_object_get(hdr, "kid"));
	bool ok = json_is_object(claims) && sg && sl == 2 * P256_BYTES && alg &&
		  !strcmp(alg, "ES256") && (!kid || !strcmp(kid, sa->kid));
	if (ok) {
		gnutls_datum_t r = {sg, P256_BYTES};
		gnutls_datum_t s = {sg + P256_BYTES, P256_BYTES};
		gnutls_datum_t der = {NULL, 0};
		gnutls_datum_t data = {(unsigned char *)token,
				       (unsigned)(d2 - token)};
		ok = gnutls_encode_rs_value(&der, &r, &s) >= 0 &&
		     gnutls_pubkey_verify_data2(sa->pub, GNUTLS_SIGN_ECDSA_SHA256,
						0, &data, &der) >= 0;
		gnutls_free(der.data);
	}
	free(h);
	free(c);
	free(sg);
	json_decref(hdr);
	if (!ok) {
		json_decref(claims);
		return NULL;
	}
	return claims;
}
