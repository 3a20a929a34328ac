/*
 * gzip.h -- compressed answers, as kube-apiserver compresses them.
 *
 * kube gzips an API answer (an object, a list, a Table, discovery, a
 * Status) whose body is over 128 KiB when the request's Accept-Encoding
 * names gzip (responsewriters.SerializeObject, feature
 * APIResponseCompression, on by default), at level 1. /openapi/v2 sits
 * behind kube-openapi's gziphandler instead, which reads the header with
 * q-values and compresses from 1,400 bytes. Watches and the other
 * documents (/openapi/v3, /version, health, OIDC) are never compressed.
 *
 * Threads: any; no state.
 */
#ifndef LAPIS_SERVER_GZIP_H
#define LAPIS_SERVER_GZIP_H

#include <stdbool.h>
#include <stddef.h>

/* the body sizes from which each rule compresses: over the first, from
   the second */
#define SRV_GZIP_API_OVER (128u * 1024u)
#define SRV_GZIP_V2_FROM 1400u

/* Does Accept-Encoding value ae (NULL: absent) take gzip by kube's
   negotiateContentEncoding? One of its comma-separated tokens, trimmed of
   spaces, is exactly "gzip" (no parameter: "gzip;q=1" is not). */
bool srv_gzip_api_accepts(const char *ae);

/* Does ae take gzip by gziphandler's parseEncodings? The last
   comma-separated coding named gzip (case-insensitive) has a q-value over
   0: 1 unless its last ';' parameter is a q=, clamped to [0, 1]; a coding
   whose last q= does not parse is dropped. */
bool srv_gzip_v2_accepts(const char *ae);

/* data[0, len) as one gzip member at level 1: a new buffer of *out_len
   bytes, or NULL (out of memory, or too large for zlib's counters) when
   the answer is to go as it is. */
char *srv_gzip(const char *data, size_t len, size_t *out_len);

#endif
