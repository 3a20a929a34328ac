/*
 * test_cadata.c -- tests of server/cadata.c: CA data loaded as Go's
 * x509.CertPool.AppendCertsFromPEM loads it, with client-go's words for
 * what fails (kube's check of a conversion webhook's caBundle). The
 * certificate is a real CA, made by server/pki.c in a temporary
 * directory.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/cadata.h"
#include "../../server/pki.h"
#include "../../server/registry/object.h"
#include "support.h"

static char *tmp;
static struct srv_pki pki;

static void setup(void)
{
	tmp = ts_tmpdir("cadata");
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/data", tmp);
	struct srv_error err = {0};
	cr_assert_eq(srv_pki_load_or_create(dir, NULL, 0, &pki, &err), LP_OK,
		     "%s", err.message);
}

static void teardown(void)
{
	srv_pki_free(&pki);
	ts_rmtree_free(tmp);
}

TestSuite(cadata, .init = setup, .fini = teardown);

/* whether s fails to load, and why into why */
static bool bad(const char *s, char *why)
{
	why[0] = '\0';
	return srv_ca_data_invalid((const unsigned char *)s, strlen(s), why,
				   200);
}

#define PREFIX "unable to load root certificates: "

Test(cadata, certificates_load)
{
	char why[200];
	cr_assert(!bad("", why)); /* no pool: the system's roots */
	cr_assert(!bad(pki.ca_pem, why), "%s", why);
	/* text around it and other blocks are passed over */
	char buf[16384];
	snprintf(buf, sizeof buf,
		 "a bundle\n-----BEGIN PRIVATE KEY-----\nAAAA\n-----END "
		 "PRIVATE KEY-----\n%s\n\ntrailing words\n",
		 pki.ca_pem);
	cr_assert(!bad(buf, why), "%s", why);
}

Test(cadata, client_go_words)
{
	char why[200];
	cr_assert(bad("Cg==", why));
	cr_assert_str_eq(why, PREFIX "unable to parse bytes as PEM block");
	/* a block of another type, then nothing: no certificate seen */
	cr_assert(bad("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE "
		      "KEY-----\n",
		      why));
	cr_assert_str_eq(why,
			 PREFIX "no valid certificate authority data seen");
	/* one line break more is read as another block that is none */
	cr_assert(bad("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE "
		      "KEY-----\n\n",
		      why));
	cr_assert_str_eq(why, PREFIX "unable to parse bytes as PEM block");
	/* a certificate with headers is not taken */
	cr_assert(bad("-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\n"
		      "AAAA\n-----END CERTIFICATE-----\n",
		      why));
	cr_assert_str_eq(why,
			 PREFIX "no valid certificate authority data seen");
	/* a certificate whose DER does not parse */
	cr_assert(bad("-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END "
		      "CERTIFICATE-----\n",
		      why));
	cr_assert_str_eq(why, PREFIX "failed to parse certificate: x509: "
				     "malformed certificate");
	/* an END line of another type: no block */
	cr_assert(bad("-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END "
		      "CERT-----\n",
		      why));
	cr_assert_str_eq(why, PREFIX "unable to parse bytes as PEM block");
}

Test(cadata, bundle_as_a_crd_carries_it)
{
	char why[200];
	unsigned char *raw = NULL;
	size_t n = 0;
	/* kube's cabundle_test: the base64 of "Cg==" */
	cr_assert(
	    srv_ca_bundle_invalid("Q2c9PQ==", 8, why, sizeof why, &raw, &n));
	cr_assert_str_eq(why, PREFIX "unable to parse bytes as PEM block");
	cr_assert_eq(n, 4);
	cr_assert(!memcmp(raw, "Cg==", 4));
	free(raw);
	/* the CA, base64 as a CRD holds it */
	char *b64 =
	    reg_b64((const unsigned char *)pki.ca_pem, strlen(pki.ca_pem));
	cr_assert_not_null(b64);
	size_t k = strlen(b64);
	raw = NULL;
	cr_assert(!srv_ca_bundle_invalid(b64, k, why, sizeof why, &raw, &n),
		  "%s", why);
	cr_assert_null(raw);
	free(b64);
}
