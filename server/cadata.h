/*
 * cadata.h -- CA data as Go's TLS transport loads it: kube's check of a
 * webhook's caBundle (webhook.ValidateCABundle, transport.TLSConfigFor).
 *
 * Threads: any; no state.
 */
#ifndef LAPIS_SERVER_CADATA_H
#define LAPIS_SERVER_CADATA_H

#include <stdbool.h>
#include <stddef.h>

/* Does data[0, n) fail to load as a CA pool? x509.CertPool's
   AppendCertsFromPEM takes every PEM block of type CERTIFICATE without
   headers whose DER parses, and fails when there is none; then why (n
   bytes) gets kube's text, "unable to load root certificates: " and what
   client-go's createErrorParsingCAData says of the first problem. Empty
   data loads (no pool: the system's roots). */
bool srv_ca_data_invalid(const unsigned char *data, size_t n, char *why,
			 size_t why_n);

/* The same for a caBundle as a CRD carries it, standard base64 (text of
   len bytes); data that does not decode is refused as not loading. When
   it is refused, *raw and *raw_n (raw may be NULL) get the decoded bytes
   (new, malloc'd; NULL when none), for the message's value. */
bool srv_ca_bundle_invalid(const char *b64, size_t len, char *why, size_t why_n,
			   unsigned char **raw, size_t *raw_n);

#endif
