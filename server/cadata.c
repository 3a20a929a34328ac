/*
 * cadata.c -- CA data as Go's TLS transport loads it (cadata.h).
 *
 * PEM blocks are found as Go's encoding/pem Decode finds them: a line
 * "-----BEGIN TYPE-----" at the start or after a newline, "key: value"
 * headers, a base64 body (spaces, tabs and line breaks ignored) and
 * "-----END TYPE-----" alone on its line; a block that looks like one but
 * is not is skipped from its BEGIN line. The rest of the data starts after
 * the END line's line break, which is why data ending in two line breaks
 * reads as one more (failed) block in client-go's error.
 */
#include "cadata.h"

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pem {
	const unsigned char *type;
	size_t type_len;
	bool headers;
	unsigned char *der; /* new */
	size_t der_len;
};

/* libc's memmem over [p, e) */
static const unsigned char *find(const unsigned char *p, const unsigned char *e,
				 const char *s)
{
	return memmem(p, (size_t)(e - p), s, strlen(s));
}

static bool has_prefix(const unsigned char *p, const unsigned char *e,
		       const char *s)
{
	size_t n = strlen(s);
	return (size_t)(e - p) >= n && !memcmp(p, s, n);
}

/* Go's getLine: the line at p without its break and trailing spaces and
   tabs ([*lb, *le)), and where the next starts */
static const unsigned char *get_line(const unsigned char *p,
				     const unsigned char *e,
				     const unsigned char **le)
{
	const unsigned char *nl = memchr(p, '\n', (size_t)(e - p));
	const unsigned char *next = nl ? nl + 1 : e;
	const unsigned char *end = nl ? nl : e;
	while (end > p &&
	       (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	*le = end;
	return next;
}

/* base64.StdEncoding.Decode of [p, e) without spaces, tabs, CR, LF */
static bool unbase64(const unsigned char *p, const unsigned char *e,
		     unsigned char **out, size_t *out_n)
{
	size_t n = (size_t)(e - p), k = 0;
	char *s = malloc(n + 1);
	if (!s)
		return false;
	for (; p < e; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			s[k++] = (char)*p;
	s[k] = '\0';
	gnutls_datum_t in = {(unsigned char *)s, (unsigned)k}, raw = {0};
	bool ok =
	    k % 4 == 0 && (k == 0 || gnutls_base64_decode2(&in, &raw) >= 0);
	free(s);
	if (!ok)
		return false;
	*out = raw.data;
	*out_n = raw.size;
	return true;
}

/* One try of Go's Decode at *p: the block, with *p after it; false when
   no block is found (*p left as it was). */
static bool pem_next(const unsigned char **p, const unsigned char *e,
		     struct pem *b)
{
	const unsigned char *rest = *p;
	for (;;) {
		if (has_prefix(rest, e, "-----BEGIN ")) {
			rest += 11;
		} else {
			const unsigned char *at =
			    find(rest, e, "\n-----BEGIN ");
			if (!at)
				return false;
			rest = at + 12;
		}
		const unsigned char *tl = rest, *te;
		rest = get_line(rest, e, &te);
		if (te - tl < 5 || memcmp(te - 5, "-----", 5))
			continue; /* decodeError: on from after that line */
		*b =
		    (struct pem){.type = tl, .type_len = (size_t)(te - tl - 5)};
		for (;;) { /* headers: lines with a colon */
			const unsigned char *le;
			const unsigned char *next = get_line(rest, e, &le);
			if (!memchr(rest, ':', (size_t)(le - rest)) ||
			    rest == e)
				break;
			b->headers = true;
			rest = next;
		}
		const unsigned char *end_at, *trailer;
		if (!b->headers && has_prefix(rest, e, "-----END ")) {
			end_at = rest;
			trailer = rest + 9;
		} else {
			end_at = find(rest, e, "\n-----END ");
			if (!end_at)
				continue;
			trailer = end_at + 10;
		}
		size_t tlen = b->type_len + 5;
		if ((size_t)(e - trailer) < tlen ||
		    memcmp(trailer, b->type, b->type_len) ||
		    memcmp(trailer + b->type_len, "-----", 5))
			continue;
		const unsigned char *le;
		const unsigned char *after = get_line(trailer + tlen, e, &le);
		if (le != trailer + tlen)
			continue; /* more than spaces after the END line */
		if (!unbase64(rest, end_at, &b->der, &b->der_len))
			continue;
		*p = after;
		return true;
	}
}

static bool is_cert(const struct pem *b)
{
	return b->type_len == 11 && !memcmp(b->type, "CERTIFICATE", 11) &&
	       !b->headers;
}

static bool der_parses(const struct pem *b)
{
	gnutls_x509_crt_t crt;
	if (gnutls_x509_crt_init(&crt) < 0)
		return false;
	gnutls_datum_t d = {b->der, (unsigned)b->der_len};
	bool ok = gnutls_x509_crt_import(crt, &d, GNUTLS_X509_FMT_DER) >= 0;
	gnutls_x509_crt_deinit(crt);
	return ok;
}

bool srv_ca_data_invalid(const unsigned char *data, size_t n, char *why,
			 size_t why_n)
{
	if (!n)
		return false;
	const unsigned char *e = data + n;
	/* AppendCertsFromPEM: any certificate that parses */
	for (const unsigned char *p = data; p < e;) {
		struct pem b;
		if (!pem_next(&p, e, &b))
			break;
		bool ok = is_cert(&b) && der_parses(&b);
		gnutls_free(b.der);
		if (ok)
			return false;
	}
	/* createErrorParsingCAData: the first problem */
	const char *what = "no valid certificate authority data seen";
	for (const unsigned char *p = data; p < e;) {
		struct pem b;
		if (!pem_next(&p, e, &b)) {
			what = "unable to parse bytes as PEM block";
			break;
		}
		bool bad = is_cert(&b) && !der_parses(&b);
		gnutls_free(b.der);
		if (bad) {
			what = "failed to parse certificate: x509: malformed "
			       "certificate";
			break;
		}
	}
	snprintf(why, why_n, "unable to load root certificates: %s", what);
	return true;
}

bool srv_ca_bundle_invalid(const char *b64, size_t len, char *why, size_t why_n,
			   unsigned char **raw, size_t *raw_n)
{
	unsigned char *d = NULL;
	size_t dn = 0;
	if (raw)
		*raw = NULL;
	if (!unbase64((const unsigned char *)b64,
		      (const unsigned char *)b64 + len, &d, &dn)) {
		snprintf(why, why_n,
			 "unable to load root certificates: unable to parse "
			 "bytes as PEM block");
		return true;
	}
	bool bad = srv_ca_data_invalid(d, dn, why, why_n);
	if (bad && raw && raw_n && (*raw = malloc(dn ? dn : 1)) != NULL) {
		memcpy(*raw, d, dn);
		*raw_n = dn;
	}
	gnutls_free(d);
	return bad;
}
