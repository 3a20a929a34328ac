/*
 * gzip.c -- compressed answers (gzip.h).
 */
#include "gzip.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#define ZLIB_CONST /* next_in is const: data stays as given */
#include <zlib.h>

#include "schema.h"

/* [*b, *e) trimmed as Go's strings.TrimSpace trims */
static void trim(const char **b, const char **e)
{
	size_t len;
	*b = srv_trim_space(*b, (size_t)(*e - *b), &len);
	*e = *b + len;
}

bool srv_gzip_api_accepts(const char *ae)
{
	if (!ae)
		return false;
	for (const char *p = ae;;) {
		const char *comma = strchr(p, ',');
		const char *b = p, *e = comma ? comma : p + strlen(p);
		trim(&b, &e);
		if (e - b == 4 && !memcmp(b, "gzip", 4))
			return true;
		if (!comma)
			return false;
		p = comma + 1;
	}
}

/* Go's strconv.ParseFloat on [b, e), near enough for a q-value: all of
   it read by strtod, no leading space, no overflow; false when it fails. */
static bool parse_q(const char *b, const char *e, double *q)
{
	char buf[64];
	size_t n = (size_t)(e - b), tn;
	if (!n || n >= sizeof buf || srv_trim_space(b, n, &tn) != b)
		return false; /* empty, or a leading space */
	memcpy(buf, b, n);
	buf[n] = '\0';
	char *end;
	errno = 0;
	*q = strtod(buf, &end);
	return end == buf + n && !(errno == ERANGE && isinf(*q));
}

bool srv_gzip_v2_accepts(const char *ae)
{
	if (!ae)
		return false;
	double gzip_q = -1; /* no coding named gzip yet */
	for (const char *p = ae;;) {
		const char *comma = strchr(p, ',');
		const char *end = comma ? comma : p + strlen(p);
		/* parseCoding: the parts between ';', each trimmed; the
		   first the coding, lower-cased; q starts at 1 in every part
		   and a q= part sets it, clamped to [0, 1] */
		const char *cb = NULL, *ce = NULL;
		double q = 1;
		bool bad = false; /* the last q= part's ParseFloat failed */
		for (const char *s = p;;) {
			const char *semi = memchr(s, ';', (size_t)(end - s));
			const char *b = s, *e = semi ? semi : end;
			trim(&b, &e);
			q = 1;
			if (!cb) {
				cb = b;
				ce = e;
			} else if (e - b >= 2 && !memcmp(b, "q=", 2)) {
				bad = !parse_q(b + 2, e, &q);
				if (q < 0)
					q = 0;
				else if (q > 1)
					q = 1;
			}
			if (!semi)
				break;
			s = semi + 1;
		}
		if (!bad && ce > cb && ce - cb == 4 &&
		    !strncasecmp(cb, "gzip", 4))
			gzip_q = q;
		if (!comma)
			break;
		p = comma + 1;
	}
	return gzip_q > 0;
}

char *srv_gzip(const char *data, size_t len, size_t *out_len)
{
	if (len > UINT_MAX / 2)
		return NULL;
	z_stream z;
	memset(&z, 0, sizeof z);
	/* windowBits 15 + 16: a gzip header and trailer around the deflate
	   stream, as Go's compress/gzip writes it */
	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return NULL;
	uLong cap = deflateBound(&z, (uLong)len);
	char *out = malloc(cap ? cap : 1);
	if (!out) {
		deflateEnd(&z);
		return NULL;
	}
	z.next_in = (const Bytef *)data;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)cap;
	int rc = deflate(&z, Z_FINISH);
	*out_len = z.total_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	return out;
}
