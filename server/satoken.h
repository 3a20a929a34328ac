/*
 * satoken.h -- service account tokens: JSON Web Tokens (RFC 7519) signed
 * with ES256 by DIR/pki/sa.key (pki.h), as kube-apiserver signs the tokens
 * of TokenRequest (serviceaccounts/token) with its
 * --service-account-signing-key-file.
 *
 * A token is base64url(header) "." base64url(claims) "." base64url(r || s),
 * the header {"alg":"ES256","kid":K} where K is base64url of the SHA-256 of
 * the public key's DER (SubjectPublicKeyInfo), as kube names its keys.
 * The claims are the caller's (satoken.c does not look into them).
 *
 * Threads: a signer is read-only after srv_sa_new; any thread may sign and
 * verify with it at once.
 */
#ifndef LAPIS_SATOKEN_H
#define LAPIS_SATOKEN_H

#include <jansson.h>

#include "srv_error.h"

/* The issuer lapis names in its tokens and accepts in TokenReview, and the
   API audience a TokenRequest without audiences gets: kube's usual
   --service-account-issuer. */
#define SRV_SA_ISSUER "https://kubernetes.default.svc.cluster.local"

struct srv_sa;

/* A signer from a PEM private key (ECDSA P-256), or from a new key that
   lives as long as the signer when key_pem is NULL (--insecure-http has no
   pki/: its tokens do not outlive the process). LP_E_INVAL when key_pem is
   not such a key, LP_E_NOMEM; err says which. */
lp_err srv_sa_new(const char *key_pem, struct srv_sa **out,
		  struct srv_error *err);
void srv_sa_free(struct srv_sa *sa);

/* The signer's public key as a JSON Web Key (RFC 7517), as kube serves it
   at /openid/v1/jwks: use, kty, kid, crv, alg, x, y. New; NULL when out of
   memory. */
json_t *srv_sa_jwk(const struct srv_sa *sa);

/* The signed token of claims (an object, borrowed; serialized with sorted
   keys, as Go's JWT library writes them): new, NULL when out of memory or
   when signing fails. */
char *srv_sa_sign(const struct srv_sa *sa, const json_t *claims);

/* The claims of token when it is a well-formed ES256 token of this
   signer's key whose signature verifies: new object. NULL otherwise (no
   reason: a token review answers "invalid bearer token" either way). */
json_t *srv_sa_verify(const struct srv_sa *sa, const char *token);

#endif
