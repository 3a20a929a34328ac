/*
 * test_gzip.c -- tests of server/gzip.c: which Accept-Encoding values
 * take gzip by kube's rule for API answers (negotiateContentEncoding)
 * and by gziphandler's for /openapi/v2 (parseEncodings), and that a
 * compressed body inflates back to the same bytes.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../../server/gzip.h"

Test(gzip, api_rule_exact_tokens)
{
	cr_assert(!srv_gzip_api_accepts(NULL));
	cr_assert(!srv_gzip_api_accepts(""));
	cr_assert(srv_gzip_api_accepts("gzip"));	  /* Go's transport */
	cr_assert(srv_gzip_api_accepts("deflate, gzip")); /* curl */
	cr_assert(srv_gzip_api_accepts("gzip, deflate, br")); /* node-fetch */
	cr_assert(srv_gzip_api_accepts("br,\t gzip \t,zstd"));
	/* a token with parameters, another case, or a near name: none */
	cr_assert(!srv_gzip_api_accepts("gzip;q=1"));
	cr_assert(!srv_gzip_api_accepts("GZIP"));
	cr_assert(!srv_gzip_api_accepts("x-gzip"));
	cr_assert(!srv_gzip_api_accepts("gzipp, deflate"));
	cr_assert(!srv_gzip_api_accepts("*"));
	/* q=0 is not read: the bare token is enough */
	cr_assert(srv_gzip_api_accepts("gzip;q=0, gzip"));
}

Test(gzip, v2_rule_q_values)
{
	cr_assert(!srv_gzip_v2_accepts(NULL));
	cr_assert(!srv_gzip_v2_accepts(""));
	cr_assert(srv_gzip_v2_accepts("gzip"));
	cr_assert(srv_gzip_v2_accepts("GZip"));
	cr_assert(srv_gzip_v2_accepts("gzip;q=1"));
	cr_assert(srv_gzip_v2_accepts("gzip ; q=0.5"));
	cr_assert(srv_gzip_v2_accepts("gzip;q=7")); /* clamped to 1 */
	cr_assert(!srv_gzip_v2_accepts("gzip;q=0"));
	cr_assert(!srv_gzip_v2_accepts("gzip;q=-1"));
	cr_assert(!srv_gzip_v2_accepts("gzip;q=nan"));
	/* an unparsable q drops the coding; a later q= that parses saves it */
	cr_assert(!srv_gzip_v2_accepts("gzip;q=x"));
	cr_assert(!srv_gzip_v2_accepts("gzip;q= 1"));
	cr_assert(srv_gzip_v2_accepts("gzip;q=x;q=1"));
	/* each part resets q to 1: a parameter after q=0 undoes it */
	cr_assert(srv_gzip_v2_accepts("gzip;q=0;level=9"));
	/* the last coding named gzip decides */
	cr_assert(srv_gzip_v2_accepts("gzip;q=0, gzip"));
	cr_assert(!srv_gzip_v2_accepts("gzip, gzip;q=0"));
	cr_assert(!srv_gzip_v2_accepts("*, identity"));
}

Test(gzip, round_trip)
{
	size_t n = 300 * 1024;
	char *in = malloc(n);
	cr_assert_not_null(in);
	for (size_t i = 0; i < n; i++)
		in[i] =
		    (char)("{\"kind\":\"ConfigMap\"}"[i % 20] + (i / 4096) % 3);
	size_t zn = 0;
	char *z = srv_gzip(in, n, &zn);
	cr_assert_not_null(z);
	cr_assert_lt(zn, n / 10);
	/* a gzip member: magic, deflate, as any gzip reader wants it */
	cr_assert_eq((unsigned char)z[0], 0x1f);
	cr_assert_eq((unsigned char)z[1], 0x8b);
	cr_assert_eq(z[2], 8);
	char *out = malloc(n + 1);
	cr_assert_not_null(out);
	z_stream s;
	memset(&s, 0, sizeof s);
	cr_assert_eq(inflateInit2(&s, 15 + 16), Z_OK);
	s.next_in = (unsigned char *)z;
	s.avail_in = (unsigned)zn;
	s.next_out = (unsigned char *)out;
	s.avail_out = (unsigned)(n + 1);
	cr_assert_eq(inflate(&s, Z_FINISH), Z_STREAM_END);
	cr_assert_eq(s.total_out, n);
	inflateEnd(&s);
	cr_assert(!memcmp(in, out, n));
	free(in);
	free(out);
	free(z);
	/* nothing in, a valid empty member out */
	z = srv_gzip("", 0, &zn);
	cr_assert_not_null(z);
	cr_assert_geq(zn, 18);
	free(z);
}
