/*
 * pki.h -- the credentials a first `lapis serve` creates and every later
 * start reuses (DESIGN.md "Command line and files"): a CA, a serving
 * certificate signed by it, the admin bearer token, and a kubeconfig that
 * kubectl uses as is.
 *
 *   DIR/pki/ca.crt, ca.key          self-signed CA "lapis-ca", 10 years
 *   DIR/pki/server.crt, server.key  serving certificate "lapis", 1 year
 *                                   (less if the CA expires sooner), SANs
 *                                   localhost, 127.0.0.1, ::1 + extras
 *   DIR/pki/sa.key                  signs service account tokens
 *                                   (TokenRequest), as kube's
 *                                   --service-account-signing-key-file
 *   DIR/admin.token                 32 random bytes as 64 hex characters
 *   DIR/kubeconfig                  cluster, user and context "lapis"
 *
 * Keys are ECDSA P-256, so a first start costs a few milliseconds. Keys,
 * token and kubeconfig are mode 0600, DIR/pki 0700; every file is written
 * atomically (temporary name, data written out, rename, fsync of the
 * directory; pki.c explains why that suffices).
 *
 * Main thread of `lapis serve`, before the listener starts, while the
 * process holds DIR/lapis.lock: nothing here guards against a second
 * process writing the same files.
 */
#ifndef LAPIS_PKI_H
#define LAPIS_PKI_H

#include <stddef.h>

#include "srv_error.h"

/* The credentials in memory. Every field is new: malloc'd, NUL-terminated,
   owned by the struct and released by srv_pki_free(). The PEM texts are
   the files' bytes as stored on disk. */
struct srv_pki {
	char *ca_pem;	/* DIR/pki/ca.crt: the CA certificate, PEM */
	char *cert_pem; /* DIR/pki/server.crt: the serving certificate, PEM */
	char *key_pem;	/* DIR/pki/server.key: its private key, PEM */
	char *token;	/* DIR/admin.token without trailing whitespace */
	char *sa_key_pem; /* DIR/pki/sa.key: the token signing key, PEM */
};

/*
 * Load the credentials under data_dir, creating whatever is missing.
 *
 * data_dir is created (0700) if it does not exist, and so is data_dir/pki.
 * extra_sans (n_extra entries; NULL when n_extra is 0) names the serving
 * certificate's subject alternative names beyond localhost, 127.0.0.1 and
 * ::1: an entry that inet_pton reads as IPv4 or IPv6 is an IP SAN, any
 * other must be a DNS name (labels of letters, digits and '-', 1-63
 * characters, at most 253 in all, a leading "*." label allowed, the last
 * label not all digits).
 *
 *  - ca.crt missing: a new CA is made (any orphan ca.key is replaced).
 *  - ca.crt present: it must parse, be a CA, not be expired, and ca.key
 *    must be present and hold its key; otherwise an error (the CA is the
 *    trust anchor, so it is never replaced behind the user's back).
 *  - The serving certificate is (re-)issued from the CA when server.crt is
 *    missing, lacks one of the requested SANs, does not verify against the
 *    CA, does not match server.key, is not yet valid, or expires within 30
 *    days. server.key is kept when present and generated when missing.
 *  - sa.key is created when missing (a data directory of an older lapis
 *    gets one at its next start) and must hold a usable key otherwise.
 *  - admin.token is created when missing; an existing one (trailing
 *    whitespace ignored) must be 16-1024 visible ASCII characters.
 * A file that exists must be a readable regular file of at most 1 MiB
 * holding what it should; anything else is an error naming it. New files
 * are all prepared before any is renamed into place, so a failed call
 * changes nothing unless a rename itself fails midway (the next call then
 * repairs what it can: see pki.c, invariant 2).
 *
 * On success fills *out (new; release with srv_pki_free). Errors, with
 * err->message naming the path and the reason; *out untouched:
 *   LP_E_INVAL   data_dir NULL or empty, out NULL, a malformed extra SAN
 *                (checked before anything is touched)
 *   LP_E_IO      a file or directory cannot be created, read or written,
 *                or holds something unusable (bad PEM, CA without key,
 *                key not matching, expired CA, malformed token)
 *   LP_E_NOMEM   out of memory
 */
lp_err srv_pki_load_or_create(const char *data_dir,
			      const char *const *extra_sans, size_t n_extra,
			      struct srv_pki *out, struct srv_error *err);

/* Wipe and free the fields (key and token are zeroed first) and set them
   to NULL. p may be NULL; a zeroed struct is fine. */
void srv_pki_free(struct srv_pki *p);

/*
 * Write data_dir/kubeconfig (0600, atomically) in kubectl's YAML format:
 * cluster "lapis" at server_url, user "admin", context "lapis" with
 * namespace "default", current-context "lapis". With p, the cluster
 * carries certificate-authority-data (base64 of p->ca_pem) and the user
 * p->token. p NULL is for plain http: no CA, an empty user, and
 * insecure-skip-tls-verify (the JavaScript client refuses http without it).
 * data_dir is created (0700) if missing. p is borrowed for the call.
 * Errors, err filled:
 *   LP_E_INVAL   data_dir or server_url NULL or empty, server_url or
 *                p->token not visible ASCII (no spaces or control
 *                characters), p without ca_pem or token
 *   LP_E_IO      the file cannot be written
 *   LP_E_NOMEM   out of memory
 */
lp_err srv_kubeconfig_write(const char *data_dir, const char *server_url,
			    const struct srv_pki *p, struct srv_error *err);

#endif
