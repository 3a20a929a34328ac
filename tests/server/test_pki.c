/*
 * test_pki.c -- server/pki.c: the CA, serving certificate, admin token and
 * kubeconfig of a data directory. Real files in temporary directories;
 * certificates checked with GnuTLS itself, a TLS handshake over a socket
 * pair, and the kubeconfig read back by python3's yaml and by kubectl.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../server/pki.h"
#include "support.h"

/* ---- helpers --------------------------------------------------------- */

static char *pathf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *pathf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = NULL;
	int n = vasprintf(&p, fmt, ap);
	va_end(ap);
	cr_assert(n >= 0);
	return p;
}

/* Whole file, NUL-terminated; NULL if it cannot be read. */
static char *slurp(const char *dir, const char *name)
{
	char *path = pathf("%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	free(path);
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	cr_assert(m);
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		fwrite(chunk, 1, n, m);
	fclose(f);
	fclose(m);
	return buf;
}

static void spit(const char *dir, const char *name, const void *data,
		 size_t len)
{
	char *path = pathf("%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	cr_assert(f, "open %s: %s", path, strerror(errno));
	cr_assert_eq(fwrite(data, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
	free(path);
}

static void spit_str(const char *dir, const char *name, const char *s)
{
	spit(dir, name, s, strlen(s));
}

static mode_t mode_of(const char *dir, const char *name)
{
	char *path = pathf("%s/%s", dir, name);
	struct stat st;
	cr_assert_eq(stat(path, &st), 0, "stat %s: %s", path, strerror(errno));
	free(path);
	return st.st_mode & 07777;
}

static int exists(const char *dir, const char *name)
{
	char *path = pathf("%s/%s", dir, name);
	struct stat st;
	int r = lstat(path, &st) == 0;
	free(path);
	return r;
}

static gnutls_x509_crt_t crt_of(const char *pem)
{
	gnutls_x509_crt_t crt;
	cr_assert_eq(gnutls_x509_crt_init(&crt), 0);
	gnutls_datum_t d = {(unsigned char *)pem, (unsigned)strlen(pem)};
	cr_assert_eq(gnutls_x509_crt_import(crt, &d, GNUTLS_X509_FMT_PEM), 0);
	return crt;
}

static gnutls_x509_privkey_t key_of(const char *pem)
{
	gnutls_x509_privkey_t key;
	cr_assert_eq(gnutls_x509_privkey_init(&key), 0);
	gnutls_datum_t d = {(unsigned char *)pem, (unsigned)strlen(pem)};
	cr_assert_eq(
	    gnutls_x509_privkey_import2(key, &d, GNUTLS_X509_FMT_PEM, NULL, 0),
	    0);
	return key;
}

static int has_ip(gnutls_x509_crt_t crt, const char *text)
{
	unsigned char ip[16];
	if (inet_pton(AF_INET, text, ip) == 1)
		return gnutls_x509_crt_check_ip(crt, ip, 4, 0);
	cr_assert_eq(inet_pton(AF_INET6, text, ip), 1);
	return gnutls_x509_crt_check_ip(crt, ip, 16, 0);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A data directory that does not exist yet, inside a fresh temp dir. */
static char *tmp;
static char *dir;
static char *pki;

static void setup(void)
{
	tmp = ts_tmpdir("pki");
	dir = pathf("%s/data", tmp);
	pki = pathf("%s/pki", dir);
}

static void teardown(void)
{
	free(pki);
	free(dir);
	ts_rmtree_free(tmp);
}

TestSuite(pki, .init = setup, .fini = teardown);

static void load_ok(const char *const *extra, size_t n, struct srv_pki *p)
{
	struct srv_error err = {0};
	lp_err rc = srv_pki_load_or_create(dir, extra, n, p, &err);
	cr_assert_eq(rc, LP_OK, "load: %s", err.message);
}

static lp_err load_err(const char *const *extra, size_t n,
		       struct srv_error *err)
{
	struct srv_pki p = {0};
	lp_err rc = srv_pki_load_or_create(dir, extra, n, &p, err);
	cr_assert_neq(rc, LP_OK, "expected an error");
	cr_assert_null(p.ca_pem, "out written on failure");
	cr_assert_null(p.token, "out written on failure");
	return rc;
}

static const char *const files[] = {"pki/ca.crt", "pki/ca.key",
				    "pki/server.crt", "pki/server.key",
				    "pki/sa.key", "admin.token"};
#define N_FILES (sizeof files / sizeof files[0])

static void snapshot(char *snap[N_FILES])
{
	for (size_t i = 0; i < N_FILES; i++) {
		snap[i] = slurp(dir, files[i]);
		cr_assert(snap[i], "missing %s", files[i]);
	}
}

static void snapshot_free(char *snap[N_FILES])
{
	for (size_t i = 0; i < N_FILES; i++)
		free(snap[i]);
}

/* ---- first start, reuse ---------------------------------------------- */

Test(pki, first_start_creates_every_file_with_private_modes)
{
	struct srv_pki p = {0};
	double t0 = now_ms();
	load_ok(NULL, 0, &p);
	double t1 = now_ms();
	/* Reported, never asserted (STYLE.md §7: a test never checks a
	   time). */
	fprintf(stderr, "pki: first srv_pki_load_or_create took %.2f ms\n",
		t1 - t0);

	cr_assert_eq(mode_of(dir, "pki"), 0700);
	cr_assert_eq(mode_of(dir, "pki/ca.key"), 0600);
	cr_assert_eq(mode_of(dir, "pki/server.key"), 0600);
	cr_assert_eq(mode_of(dir, "pki/sa.key"), 0600);
	cr_assert_eq(mode_of(dir, "admin.token"), 0600);
	cr_assert(exists(dir, "pki/ca.crt"));
	cr_assert(exists(dir, "pki/server.crt"));

	char *ca = slurp(dir, "pki/ca.crt"),
	     *crt = slurp(dir, "pki/server.crt"),
	     *key = slurp(dir, "pki/server.key"),
	     *tok = slurp(dir, "admin.token"),
	     *sak = slurp(dir, "pki/sa.key");
	cr_assert_str_eq(p.sa_key_pem, sak);
	cr_assert(strstr(p.sa_key_pem, "-----BEGIN PRIVATE KEY-----"));
	cr_assert_str_neq(p.sa_key_pem, p.key_pem);
	free(sak);
	cr_assert_str_eq(p.ca_pem, ca);
	cr_assert_str_eq(p.cert_pem, crt);
	cr_assert_str_eq(p.key_pem, key);
	cr_assert_str_eq(p.token, tok);
	cr_assert_eq(strlen(p.token), 64);
	cr_assert_eq(strspn(p.token, "0123456789abcdef"), 64);
	cr_assert(strstr(p.ca_pem, "-----BEGIN CERTIFICATE-----"));
	cr_assert(strstr(p.key_pem, "-----BEGIN PRIVATE KEY-----"));
	/* No temporary files are left behind. */
	char *cmd =
	    pathf("test -z \"$(ls -A '%s' '%s' | grep '^\\.')\"", dir, pki);
	cr_assert_eq(system(cmd), 0, "temporary files left");
	free(cmd);
	free(ca);
	free(crt);
	free(key);
	free(tok);
	srv_pki_free(&p);
	cr_assert_null(p.ca_pem);
	srv_pki_free(&p); /* twice is fine: fields are NULL */
	srv_pki_free(NULL);
}

Test(pki, second_start_reuses_ca_cert_key_and_token_byte_for_byte)
{
	struct srv_pki a = {0}, b = {0};
	const char *extra[] = {"api.example.com"};
	load_ok(extra, 1, &a);
	char *snap[N_FILES];
	snapshot(snap);
	load_ok(extra, 1, &b);
	cr_assert_str_eq(a.ca_pem, b.ca_pem);
	cr_assert_str_eq(a.cert_pem, b.cert_pem);
	cr_assert_str_eq(a.key_pem, b.key_pem);
	cr_assert_str_eq(a.token, b.token);
	cr_assert_str_eq(a.sa_key_pem, b.sa_key_pem);
	char *again[N_FILES];
	snapshot(again);
	for (size_t i = 0; i < N_FILES; i++)
		cr_assert_str_eq(snap[i], again[i], "%s changed", files[i]);
	snapshot_free(snap);
	snapshot_free(again);
	srv_pki_free(&a);
	srv_pki_free(&b);
}

Test(pki, existing_data_dir_is_used_and_its_mode_left_alone)
{
	cr_assert_eq(mkdir(dir, 0755), 0);
	cr_assert_eq(chmod(dir, 0755), 0);
	struct srv_pki p = {0};
	load_ok(NULL, 0, &p);
	cr_assert_eq(mode_of(dir, "."), 0755);
	cr_assert_eq(mode_of(dir, "pki"), 0700);
	srv_pki_free(&p);
}

/* ---- what the certificates say ----------------------------------------- */

Test(pki, serving_cert_verifies_against_ca_and_carries_every_san)
{
	const char *extra[] = {"10.1.2.3", "fd00::7", "api.example.com",
			       "*.apps.example.com", "localhost"};
	struct srv_pki p = {0};
	load_ok(extra, 5, &p);
	gnutls_x509_crt_t ca = crt_of(p.ca_pem), crt = crt_of(p.cert_pem);
	unsigned status = 99;
	cr_assert_eq(gnutls_x509_crt_verify(crt, &ca, 1, 0, &status), 0);
	cr_assert_eq(status, 0, "verify status %#x", status);

	cr_assert(gnutls_x509_crt_check_hostname(crt, "localhost"));
	cr_assert(gnutls_x509_crt_check_hostname(crt, "api.example.com"));
	cr_assert(gnutls_x509_crt_check_hostname(crt, "web.apps.example.com"));
	cr_assert_not(gnutls_x509_crt_check_hostname(crt, "example.org"));
	cr_assert(has_ip(crt, "127.0.0.1"));
	cr_assert(has_ip(crt, "::1"));
	cr_assert(has_ip(crt, "10.1.2.3"));
	cr_assert(has_ip(crt, "fd00::7"));
	cr_assert_not(has_ip(crt, "10.1.2.4"));

	/* "localhost" given twice is listed once. */
	int n_dns_localhost = 0;
	for (unsigned seq = 0;; seq++) {
		char buf[300];
		size_t size = sizeof buf;
		int t = gnutls_x509_crt_get_subject_alt_name(crt, seq, buf,
							     &size, NULL);
		if (t < 0)
			break;
		if (t == GNUTLS_SAN_DNSNAME && strcmp(buf, "localhost") == 0)
			n_dns_localhost++;
	}
	cr_assert_eq(n_dns_localhost, 1);

	gnutls_x509_crt_deinit(crt);
	gnutls_x509_crt_deinit(ca);
	srv_pki_free(&p);
}

Test(pki, ca_is_a_critical_ca_for_signing_certs_for_ten_years)
{
	struct srv_pki p = {0};
	load_ok(NULL, 0, &p);
	gnutls_x509_crt_t ca = crt_of(p.ca_pem);
	char cn[64];
	size_t cn_len = sizeof cn;
	cr_assert_eq(gnutls_x509_crt_get_dn_by_oid(
			 ca, GNUTLS_OID_X520_COMMON_NAME, 0, 0, cn, &cn_len),
		     0);
	cr_assert_str_eq(cn, "lapis-ca");
	unsigned critical = 0, is_ca = 0;
	int pathlen;
	cr_assert_geq(gnutls_x509_crt_get_basic_constraints(ca, &critical,
							    &is_ca, &pathlen),
		      0);
	cr_assert(is_ca);
	cr_assert(critical);
	unsigned usage = 0;
	cr_assert_geq(gnutls_x509_crt_get_key_usage(ca, &usage, &critical), 0);
	cr_assert_eq(usage, GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN);
	/* Self-signed. */
	unsigned status = 99;
	cr_assert_eq(gnutls_x509_crt_verify(ca, &ca, 1, 0, &status), 0);
	cr_assert_eq(status, 0);
	/* Ten calendar years plus the minute of skew allowance; 2 or 3 leap
	   days fall in any ten years. */
	time_t nb = gnutls_x509_crt_get_activation_time(ca);
	time_t na = gnutls_x509_crt_get_expiration_time(ca);
	cr_assert_geq(na - nb, (time_t)(3652 * 86400 + 60));
	cr_assert_leq(na - nb, (time_t)(3653 * 86400 + 60));
	gnutls_x509_crt_deinit(ca);
	srv_pki_free(&p);
}

Test(pki, serving_cert_is_a_p256_server_cert_for_one_year)
{
	struct srv_pki p = {0};
	load_ok(NULL, 0, &p);
	gnutls_x509_crt_t crt = crt_of(p.cert_pem);
	char cn[64];
	size_t cn_len = sizeof cn;
	cr_assert_eq(gnutls_x509_crt_get_dn_by_oid(
			 crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, cn, &cn_len),
		     0);
	cr_assert_str_eq(cn, "lapis");
	unsigned usage = 0, critical = 0, is_ca = 1;
	cr_assert_geq(gnutls_x509_crt_get_key_usage(crt, &usage, &critical), 0);
	cr_assert_eq(usage, GNUTLS_KEY_DIGITAL_SIGNATURE |
				GNUTLS_KEY_KEY_ENCIPHERMENT);
	cr_assert(gnutls_x509_crt_check_key_purpose(
	    crt, GNUTLS_KP_TLS_WWW_SERVER, 0));
	int pathlen;
	gnutls_x509_crt_get_basic_constraints(crt, &critical, &is_ca, &pathlen);
	cr_assert_not(is_ca);
	/* A 16-byte positive serial. */
	unsigned char serial[40];
	size_t serial_len = sizeof serial;
	cr_assert_eq(gnutls_x509_crt_get_serial(crt, serial, &serial_len), 0);
	cr_assert_eq(serial_len, 16);
	cr_assert_lt(serial[0], 0x80);
	cr_assert_neq(serial[0], 0);
	/* One calendar year (365 or 366 days) and a minute of skew. */
	time_t nb = gnutls_x509_crt_get_activation_time(crt);
	time_t na = gnutls_x509_crt_get_expiration_time(crt);
	cr_assert_geq(na - nb, (time_t)(365 * 86400 + 60));
	cr_assert_leq(na - nb, (time_t)(366 * 86400 + 60));
	/* ECDSA on P-256, and the key is the certificate's. */
	gnutls_x509_privkey_t key = key_of(p.key_pem);
	unsigned bits = 0;
	cr_assert_eq(gnutls_x509_privkey_get_pk_algorithm2(key, &bits),
		     GNUTLS_PK_ECDSA);
	gnutls_ecc_curve_t curve;
	gnutls_datum_t x, y, k;
	cr_assert_eq(
	    gnutls_x509_privkey_export_ecc_raw(key, &curve, &x, &y, &k), 0);
	cr_assert_eq(curve, GNUTLS_ECC_CURVE_SECP256R1);
	gnutls_free(x.data);
	gnutls_free(y.data);
	gnutls_free(k.data);
	unsigned char a[64], b[64];
	size_t na_ = sizeof a, nb_ = sizeof b;
	cr_assert_eq(gnutls_x509_crt_get_key_id(crt, 0, a, &na_), 0);
	cr_assert_eq(gnutls_x509_privkey_get_key_id(key, 0, b, &nb_), 0);
	cr_assert_eq(na_, nb_);
	cr_assert_arr_eq(a, b, na_);
	gnutls_x509_privkey_deinit(key);
	gnutls_x509_crt_deinit(crt);
	srv_pki_free(&p);
}

/* Serve one TLS handshake with the credentials on one end of a socket
   pair (child process) and verify it from the other, as a client that
   trusts only ca_pem and expects host. Returns the client's result. */
static int handshake(const struct srv_pki *p, const char *host)
{
	int sv[2];
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(sv[0]);
		gnutls_certificate_credentials_t cred;
		gnutls_session_t s;
		gnutls_datum_t c = {(unsigned char *)p->cert_pem,
				    (unsigned)strlen(p->cert_pem)};
		gnutls_datum_t k = {(unsigned char *)p->key_pem,
				    (unsigned)strlen(p->key_pem)};
		if (gnutls_certificate_allocate_credentials(&cred) < 0 ||
		    gnutls_certificate_set_x509_key_mem(
			cred, &c, &k, GNUTLS_X509_FMT_PEM) < 0 ||
		    gnutls_init(&s, GNUTLS_SERVER) < 0 ||
		    gnutls_set_default_priority(s) < 0 ||
		    gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred) < 0)
			_exit(2);
		gnutls_transport_set_int(s, sv[1]);
		int r;
		do
			r = gnutls_handshake(s);
		while (r < 0 && !gnutls_error_is_fatal(r));
		if (r == 0)
			gnutls_bye(s, GNUTLS_SHUT_WR);
		_exit(r == 0 ? 0 : 1);
	}
	close(sv[1]);
	gnutls_certificate_credentials_t cred;
	gnutls_session_t s;
	gnutls_datum_t ca = {(unsigned char *)p->ca_pem,
			     (unsigned)strlen(p->ca_pem)};
	cr_assert_eq(gnutls_certificate_allocate_credentials(&cred), 0);
	cr_assert_eq(gnutls_certificate_set_x509_trust_mem(cred, &ca,
							   GNUTLS_X509_FMT_PEM),
		     1);
	cr_assert_eq(gnutls_init(&s, GNUTLS_CLIENT), 0);
	cr_assert_eq(gnutls_set_default_priority(s), 0);
	cr_assert_eq(gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred),
		     0);
	gnutls_session_set_verify_cert(s, host, 0);
	gnutls_transport_set_int(s, sv[0]);
	int r;
	do
		r = gnutls_handshake(s);
	while (r < 0 && !gnutls_error_is_fatal(r));
	gnutls_deinit(s);
	gnutls_certificate_free_credentials(cred);
	close(sv[0]);
	int wst;
	cr_assert_eq(waitpid(pid, &wst, 0), pid);
	return r;
}

Test(pki, tls_client_trusting_the_ca_accepts_the_serving_cert)
{
	struct srv_pki p = {0};
	load_ok(NULL, 0, &p);
	cr_assert_eq(handshake(&p, "localhost"), 0);
	cr_assert_lt(handshake(&p, "example.org"), 0,
		     "a name not in the SANs must be refused");
	srv_pki_free(&p);
}

/* ---- re-issue -------------------------------------------------------- */

Test(pki, new_extra_san_reissues_only_the_serving_cert)
{
	const char *first[] = {"a.example.com"};
	const char *second[] = {"b.example.com", "192.0.2.9"};
	struct srv_pki a = {0}, b = {0}, c = {0};
	load_ok(first, 1, &a);
	char *before[N_FILES];
	snapshot(before);
	load_ok(second, 2, &b);
	char *after[N_FILES];
	snapshot(after);
	for (size_t i = 0; i < N_FILES; i++) {
		if (strcmp(files[i], "pki/server.crt") == 0)
			cr_assert_str_neq(before[i], after[i],
					  "server.crt not re-issued");
		else
			cr_assert_str_eq(before[i], after[i], "%s changed",
					 files[i]);
	}
	cr_assert_str_eq(b.cert_pem, after[2]);
	cr_assert_str_eq(b.ca_pem, a.ca_pem);
	cr_assert_str_eq(b.key_pem, a.key_pem);
	gnutls_x509_crt_t ca = crt_of(b.ca_pem), crt = crt_of(b.cert_pem);
	unsigned status = 99;
	cr_assert_eq(gnutls_x509_crt_verify(crt, &ca, 1, 0, &status), 0);
	cr_assert_eq(status, 0);
	cr_assert(gnutls_x509_crt_check_hostname(crt, "b.example.com"));
	cr_assert(has_ip(crt, "192.0.2.9"));
	cr_assert(has_ip(crt, "127.0.0.1"));
	cr_assert_not(gnutls_x509_crt_check_hostname(crt, "a.example.com"));
	gnutls_x509_crt_deinit(crt);
	gnutls_x509_crt_deinit(ca);

	/* A subset of what the certificate has re-issues nothing; neither
	   does the same name in other case. */
	const char *subset[] = {"B.Example.COM"};
	load_ok(subset, 1, &c);
	cr_assert_str_eq(c.cert_pem, b.cert_pem);
	srv_pki_free(&c);
	load_ok(NULL, 0, &c);
	cr_assert_str_eq(c.cert_pem, b.cert_pem);

	snapshot_free(before);
	snapshot_free(after);
	srv_pki_free(&a);
	srv_pki_free(&b);
	srv_pki_free(&c);
}

/* Sign, with the CA on disk, a serving certificate for server.key valid
   from nb to na (offsets from now, seconds) and store it as server.crt. */
static void plant_serving_cert(time_t nb, time_t na)
{
	char *ca_pem = slurp(dir, "pki/ca.crt");
	char *ca_key_pem = slurp(dir, "pki/ca.key");
	char *key_pem = slurp(dir, "pki/server.key");
	gnutls_x509_crt_t ca = crt_of(ca_pem);
	gnutls_x509_privkey_t ca_key = key_of(ca_key_pem),
			      key = key_of(key_pem);
	gnutls_x509_crt_t crt;
	time_t now = time(NULL);
	unsigned char serial[] = {0x12, 0x34};
	unsigned char lo[4] = {127, 0, 0, 1}, v6[16] = {[15] = 1};
	cr_assert_eq(gnutls_x509_crt_init(&crt), 0);
	cr_assert_eq(gnutls_x509_crt_set_version(crt, 3), 0);
	cr_assert_eq(gnutls_x509_crt_set_serial(crt, serial, sizeof serial), 0);
	cr_assert_eq(gnutls_x509_crt_set_key(crt, key), 0);
	cr_assert_eq(gnutls_x509_crt_set_activation_time(crt, now + nb), 0);
	cr_assert_eq(gnutls_x509_crt_set_expiration_time(crt, now + na), 0);
	cr_assert_eq(
	    gnutls_x509_crt_set_subject_alt_name(
		crt, GNUTLS_SAN_DNSNAME, "localhost", 9, GNUTLS_FSAN_APPEND),
	    0);
	cr_assert_eq(gnutls_x509_crt_set_subject_alt_name(
			 crt, GNUTLS_SAN_IPADDRESS, lo, 4, GNUTLS_FSAN_APPEND),
		     0);
	cr_assert_eq(gnutls_x509_crt_set_subject_alt_name(
			 crt, GNUTLS_SAN_IPADDRESS, v6, 16, GNUTLS_FSAN_APPEND),
		     0);
	cr_assert_eq(
	    gnutls_x509_crt_sign2(crt, ca, ca_key, GNUTLS_DIG_SHA256, 0), 0);
	gnutls_datum_t out;
	cr_assert_eq(gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &out),
		     0);
	spit(pki, "server.crt", out.data, out.size);
	gnutls_free(out.data);
	gnutls_x509_crt_deinit(crt);
	gnutls_x509_crt_deinit(ca);
	gnutls_x509_privkey_deinit(ca_key);
	gnutls_x509_privkey_deinit(key);
	free(ca_pem);
	free(ca_key_pem);
	free(key_pem);
}

Test(pki, serving_cert_expiring_within_30_days_is_reissued)
{
	struct srv_pki a = {0}, b = {0};
	load_ok(NULL, 0, &a);
	plant_serving_cert(-3600, 10 * 86400);
	char *planted = slurp(dir, "pki/server.crt");
	load_ok(NULL, 0, &b);
	cr_assert_str_neq(b.cert_pem, planted);
	gnutls_x509_crt_t crt = crt_of(b.cert_pem);
	cr_assert_gt(gnutls_x509_crt_get_expiration_time(crt) -
			 gnutls_x509_crt_get_activation_time(crt),
		     (time_t)300 * 86400);
	cr_assert_str_eq(b.key_pem, a.key_pem);
	gnutls_x509_crt_deinit(crt);
	free(planted);
	srv_pki_free(&a);
	srv_pki_free(&b);
}

Test(pki, serving_cert_valid_for_long_enough_is_kept)
{
	struct srv_pki a = {0}, b = {0};
	load_ok(NULL, 0, &a);
	plant_serving_cert(-3600, 40 * 86400);
	char *planted = slurp(dir, "pki/server.crt");
	load_ok(NULL, 0, &b);
	cr_assert_str_eq(b.cert_pem, planted);
	free(planted);
	srv_pki_free(&a);
	srv_pki_free(&b);
}

Test(pki, serving_cert_not_yet_valid_is_reissued)
{
	struct srv_pki a = {0}, b = {0};
	load_ok(NULL, 0, &a);
	plant_serving_cert(86400, 200 * 86400);
	char *planted = slurp(dir, "pki/server.crt");
	load_ok(NULL, 0, &b);
	cr_assert_str_neq(b.cert_pem, planted);
	free(planted);
	srv_pki_free(&a);
	srv_pki_free(&b);
}

Test(pki, new_ca_reissues_serving_cert_and_keeps_its_key)
{
	struct srv_pki a = {0}, b = {0};
	load_ok(NULL, 0, &a);
	char *p1 = pathf("%s/ca.crt", pki), *p2 = pathf("%s/ca.key", pki);
	cr_assert_eq(unlink(p1), 0);
	cr_assert_eq(unlink(p2), 0);
	free(p1);
	free(p2);
	load_ok(NULL, 0, &b);
	cr_assert_str_neq(b.ca_pem, a.ca_pem);
	cr_assert_str_neq(b.cert_pem, a.cert_pem);
	cr_assert_str_eq(b.key_pem, a.key_pem);
	cr_assert_str_eq(b.token, a.token);
	gnutls_x509_crt_t ca = crt_of(b.ca_pem), crt = crt_of(b.cert_pem);
	unsigned status = 99;
	cr_assert_eq(gnutls_x509_crt_verify(crt, &ca, 1, 0, &status), 0);
	cr_assert_eq(status, 0);
	gnutls_x509_crt_deinit(crt);
	gnutls_x509_crt_deinit(ca);
	srv_pki_free(&a);
	srv_pki_free(&b);
}

Test(pki, orphan_ca_key_from_an_interrupted_start_is_replaced)
{
	cr_assert_eq(mkdir(dir, 0700), 0);
	cr_assert_eq(mkdir(pki, 0700), 0);
	spit_str(pki, "ca.key", "half of a first start\n");
	struct srv_pki p = {0};
	load_ok(NULL, 0, &p);
	char *key = slurp(dir, "pki/ca.key");
	cr_assert(strstr(key, "-----BEGIN PRIVATE KEY-----"));
	free(key);
	srv_pki_free(&p);
}

Test(pki, server_key_not_matching_server_cert_gets_a_new_cert)
{
	struct srv_pki a = {0}, b = {0};
	load_ok(NULL, 0, &a);
	/* A new server.key whose certificate never got written. */
	char *p1 = pathf("%s/server.crt", pki),
	     *p2 = pathf("%s/server.key", pki);
	cr_assert_eq(unlink(p1), 0);
	cr_assert_eq(unlink(p2), 0);
	struct srv_pki tmp_p = {0};
	load_ok(NULL, 0, &tmp_p);
	spit_str(pki, "server.crt", a.cert_pem); /* the old one is back */
	load_ok(NULL, 0, &b);
	cr_assert_str_eq(b.key_pem, tmp_p.key_pem);
	cr_assert_str_neq(b.cert_pem, a.cert_pem);
	gnutls_x509_crt_t crt = crt_of(b.cert_pem);
	gnutls_x509_privkey_t key = key_of(b.key_pem);
	unsigned char x[64], y[64];
	size_t nx = sizeof x, ny = sizeof y;
	cr_assert_eq(gnutls_x509_crt_get_key_id(crt, 0, x, &nx), 0);
	cr_assert_eq(gnutls_x509_privkey_get_key_id(key, 0, y, &ny), 0);
	cr_assert_arr_eq(x, y, nx);
	gnutls_x509_privkey_deinit(key);
	gnutls_x509_crt_deinit(crt);
	free(p1);
	free(p2);
	srv_pki_free(&tmp_p);
	srv_pki_free(&a);
	srv_pki_free(&b);
}

/* ---- bad input ------------------------------------------------------- */

Test(pki, malformed_extra_san_is_invalid_and_touches_nothing)
{
	char long_label[80], long_name[300];
	memset(long_label, 'a', 64);
	strcpy(long_label + 64, ".com");
	for (int i = 0; i < 63; i++)
		memcpy(long_name + 4 * i, "abc.", 4);
	strcpy(long_name + 252, "xy"); /* 254 characters */
	const char *bad[] = {"",
			     " ",
			     "foo bar",
			     "-a.com",
			     "a-.com",
			     "a..b",
			     ".a.com",
			     "a.com.",
			     "127.1",
			     "1.2.3.4.5",
			     "fe80::1%eth0",
			     "*",
			     "*.",
			     "a.*.com",
			     "**.com",
			     "under_score.com",
			     "caf\xc3\xa9.com",
			     "http://x",
			     long_label,
			     long_name};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct srv_error err = {0};
		const char *one[] = {"ok.example.com", bad[i]};
		cr_assert_eq(load_err(one, 2, &err), LP_E_INVAL, "SAN \"%s\"",
			     bad[i]);
		cr_assert_eq(err.code, LP_E_INVAL);
		cr_assert(strstr(err.message, "SAN"), "%s", err.message);
		cr_assert_not(exists(dir, "."),
			      "created the data dir for \"%s\"", bad[i]);
	}
	const char *with_null[] = {NULL};
	struct srv_error err = {0};
	cr_assert_eq(load_err(with_null, 1, &err), LP_E_INVAL);
	cr_assert_eq(load_err(NULL, 3, &err), LP_E_INVAL);
}

Test(pki, wellformed_extra_sans_are_accepted)
{
	char max_label[80];
	memset(max_label, 'a', 63);
	strcpy(max_label + 63, ".com");
	const char *good[] = {
	    "my-host",	  "1.2.3.4",	     "2001:db8::1", "*.example.com",
	    "x1.y2.z3-q", "::ffff:10.0.0.1", max_label,	    "Mixed.Case.Org"};
	struct srv_pki p = {0};
	load_ok(good, sizeof good / sizeof good[0], &p);
	gnutls_x509_crt_t crt = crt_of(p.cert_pem);
	cr_assert(gnutls_x509_crt_check_hostname(crt, "my-host"));
	cr_assert(gnutls_x509_crt_check_hostname(crt, "mixed.case.org"));
	cr_assert(has_ip(crt, "2001:db8::1"));
	gnutls_x509_crt_deinit(crt);
	srv_pki_free(&p);
}

Test(pki, null_or_empty_arguments_are_invalid)
{
	struct srv_pki p = {0};
	struct srv_error err = {0};
	cr_assert_eq(srv_pki_load_or_create(NULL, NULL, 0, &p, &err),
		     LP_E_INVAL);
	cr_assert_eq(srv_pki_load_or_create("", NULL, 0, &p, &err), LP_E_INVAL);
	cr_assert_eq(srv_pki_load_or_create(dir, NULL, 0, NULL, &err),
		     LP_E_INVAL);
	/* err may be NULL. */
	cr_assert_eq(srv_pki_load_or_create(NULL, NULL, 0, &p, NULL),
		     LP_E_INVAL);
	cr_assert_null(p.ca_pem);
}

/* Make a full data directory, then replace name (under dir) with text. */
static void corrupt(const char *name, const char *text)
{
	struct srv_pki p = {0};
	load_ok(NULL, 0, &p);
	srv_pki_free(&p);
	spit_str(dir, name, text);
}

static void expect_io(const char *name_in_message)
{
	struct srv_error err = {0};
	cr_assert_eq(load_err(NULL, 0, &err), LP_E_IO);
	cr_assert_eq(err.code, LP_E_IO);
	cr_assert(strstr(err.message, name_in_message), "message: %s",
		  err.message);
}

Test(pki, garbage_ca_crt_is_an_error_naming_it_and_is_kept)
{
	corrupt("pki/ca.crt", "not a certificate\n");
	expect_io("pki/ca.crt");
	char *s = slurp(dir, "pki/ca.crt");
	cr_assert_str_eq(s, "not a certificate\n");
	free(s);
}

Test(pki, truncated_ca_crt_is_an_error)
{
	struct srv_pki p = {0};
	load_ok(NULL, 0, &p);
	spit(pki, "ca.crt", p.ca_pem, strlen(p.ca_pem) / 2);
	srv_pki_free(&p);
	expect_io("pki/ca.crt");
}

Test(pki, ca_crt_without_ca_key_is_an_error)
{
	struct srv_pki p = {0};
	load_ok(NULL, 0, &p);
	srv_pki_free(&p);
	char *path = pathf("%s/ca.key", pki);
	cr_assert_eq(unlink(path), 0);
	free(path);
	expect_io("pki/ca.key");
	cr_assert_not(exists(dir, "pki/ca.key"));
}

Test(pki, ca_key_of_another_ca_is_an_error)
{
	struct srv_pki p = {0};
	load_ok(NULL, 0, &p);
	srv_pki_free(&p);
	char *server_key = slurp(dir, "pki/server.key");
	spit_str(pki, "ca.key", server_key);
	free(server_key);
	expect_io("pki/ca.key");
}

Test(pki, garbage_ca_key_is_an_error)
{
	corrupt("pki/ca.key", "-----BEGIN PRIVATE KEY-----\nAAAA\n"
			      "-----END PRIVATE KEY-----\n");
	expect_io("pki/ca.key");
}

Test(pki, non_ca_certificate_in_place_of_the_ca_is_an_error)
{
	struct srv_pki p = {0};
	load_ok(NULL, 0, &p);
	spit_str(pki, "ca.crt", p.cert_pem);
	spit_str(pki, "ca.key", p.key_pem);
	srv_pki_free(&p);
	expect_io("not a CA");
}

Test(pki, garbage_server_key_and_cert_are_errors)
{
	corrupt("pki/server.key", "junk");
	expect_io("pki/server.key");
}

Test(pki, garbage_sa_key_is_an_error)
{
	corrupt("pki/sa.key", "junk");
	expect_io("pki/sa.key");
}

Test(pki, missing_sa_key_of_an_older_data_dir_is_made_and_the_rest_kept)
{
	struct srv_pki a = {0}, b = {0};
	load_ok(NULL, 0, &a);
	char *path = pathf("%s/sa.key", pki);
	cr_assert_eq(unlink(path), 0);
	free(path);
	load_ok(NULL, 0, &b);
	cr_assert_str_eq(a.ca_pem, b.ca_pem);
	cr_assert_str_eq(a.cert_pem, b.cert_pem);
	cr_assert_str_eq(a.token, b.token);
	cr_assert_str_neq(a.sa_key_pem, b.sa_key_pem);
	cr_assert_eq(mode_of(dir, "pki/sa.key"), 0600);
	srv_pki_free(&a);
	srv_pki_free(&b);
}

Test(pki, garbage_server_crt_is_an_error)
{
	corrupt("pki/server.crt", "junk");
	expect_io("pki/server.crt");
}

Test(pki, fifo_in_place_of_a_file_is_an_error_not_a_hang)
{
	struct srv_pki p = {0};
	load_ok(NULL, 0, &p);
	srv_pki_free(&p);
	char *path = pathf("%s/server.crt", pki);
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(mkfifo(path, 0600), 0);
	free(path);
	expect_io("not a regular file");
}

Test(pki, directory_in_place_of_a_file_is_an_error)
{
	cr_assert_eq(mkdir(dir, 0700), 0);
	char *path = pathf("%s/admin.token", dir);
	cr_assert_eq(mkdir(path, 0700), 0);
	free(path);
	expect_io("admin.token");
}

Test(pki, oversized_file_is_an_error)
{
	size_t n = (1u << 20) + 1;
	char *big = malloc(n);
	memset(big, 'A', n);
	struct srv_pki p = {0};
	load_ok(NULL, 0, &p);
	srv_pki_free(&p);
	spit(pki, "ca.crt", big, n);
	free(big);
	expect_io("larger than");
}

Test(pki, nul_byte_in_a_file_is_an_error)
{
	struct srv_pki p = {0};
	load_ok(NULL, 0, &p);
	srv_pki_free(&p);
	spit(dir, "admin.token", "0123456789abcdef\0tail", 21);
	expect_io("NUL");
}

Test(pki, token_file_with_a_newline_is_trimmed)
{
	cr_assert_eq(mkdir(dir, 0700), 0);
	spit_str(dir, "admin.token", "my-own-token-0123456789\r\n");
	struct srv_pki p = {0};
	load_ok(NULL, 0, &p);
	cr_assert_str_eq(p.token, "my-own-token-0123456789");
	srv_pki_free(&p);
}

Test(pki, malformed_token_is_an_error)
{
	const char *bad[] = {"",
			     "\n",
			     "short",
			     "has a space 0123456789",
			     "tab\there-0123456789",
			     "caf\xc3\xa9-0123456789abc"};
	cr_assert_eq(mkdir(dir, 0700), 0);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		spit_str(dir, "admin.token", bad[i]);
		expect_io("admin.token");
	}
	char *huge = malloc(2000);
	memset(huge, 'x', 1999);
	huge[1999] = '\0';
	spit_str(dir, "admin.token", huge);
	free(huge);
	expect_io("admin.token");
}

Test(pki, data_dir_that_is_a_file_is_an_error)
{
	spit_str(tmp, "data", "a file");
	expect_io("data");
}

Test(pki, pki_that_is_a_file_is_an_error)
{
	cr_assert_eq(mkdir(dir, 0700), 0);
	spit_str(dir, "pki", "a file");
	expect_io("pki");
}

Test(pki, data_dir_under_a_missing_parent_is_an_error)
{
	struct srv_pki p = {0};
	struct srv_error err = {0};
	char *deep = pathf("%s/no/such/dir", tmp);
	cr_assert_eq(srv_pki_load_or_create(deep, NULL, 0, &p, &err), LP_E_IO);
	cr_assert(strstr(err.message, "no/such"), "%s", err.message);
	free(deep);
}

/* ---- kubeconfig ------------------------------------------------------ */

static int have(const char *tool)
{
	char *cmd = pathf("command -v %s >/dev/null 2>&1", tool);
	int r = system(cmd) == 0;
	free(cmd);
	return r;
}

static int have_pyyaml(void)
{
	return system("python3 -c 'import yaml' >/dev/null 2>&1") == 0;
}

/* Runs python3 on a check script over the kubeconfig; 0 when it passes.
   Expected values come from files, so no quoting reaches the shell. */
static int py_check(const char *script)
{
	spit_str(tmp, "check.py", script);
	char *cmd =
	    pathf("cd '%s' && python3 check.py '%s/kubeconfig'", tmp, dir);
	int r = system(cmd);
	free(cmd);
	return r;
}

static const char py_secure[] =
    "import base64, sys, yaml\n"
    "d = yaml.safe_load(open(sys.argv[1]))\n"
    "assert d['apiVersion'] == 'v1' and d['kind'] == 'Config', d\n"
    "assert d['current-context'] == 'lapis'\n"
    "c, = d['clusters']\n"
    "assert c['name'] == 'lapis'\n"
    "assert c['cluster']['server'] == open('url').read()\n"
    "ca = base64.b64decode(c['cluster']['certificate-authority-data'],"
    " validate=True)\n"
    "assert ca.decode() == open('ca.pem').read()\n"
    "u, = d['users']\n"
    "assert u['name'] == 'admin'\n"
    "assert u['user'] == {'token': open('token').read()}, u\n"
    "x, = d['contexts']\n"
    "assert x == {'name': 'lapis', 'context': {'cluster': 'lapis',"
    " 'user': 'admin', 'namespace': 'default'}}, x\n";

Test(pki, kubeconfig_holds_server_ca_and_token_for_kubectl)
{
	struct srv_pki p = {0};
	load_ok(NULL, 0, &p);
	struct srv_error err = {0};
	const char *url = "https://127.0.0.1:6443";
	cr_assert_eq(srv_kubeconfig_write(dir, url, &p, &err), LP_OK, "%s",
		     err.message);
	cr_assert_eq(mode_of(dir, "kubeconfig"), 0600);
	char *text = slurp(dir, "kubeconfig");
	cr_assert(strstr(text, "current-context: lapis\n"));
	cr_assert(strstr(text, "    server: \"https://127.0.0.1:6443\"\n"));
	free(text);
	if (!have_pyyaml())
		cr_skip_test("python3 with yaml not available");
	spit_str(tmp, "url", url);
	spit_str(tmp, "ca.pem", p.ca_pem);
	spit_str(tmp, "token", p.token);
	cr_assert_eq(py_check(py_secure), 0, "python3 check failed");
	srv_pki_free(&p);
}

/* kubectl's own view of the file: the value at jsonpath, or NULL. */
static char *kubectl_get(const char *jsonpath)
{
	char *cmd = pathf("kubectl --kubeconfig '%s/kubeconfig' config view "
			  "--raw -o jsonpath='%s' > '%s/out' 2>'%s/err'",
			  dir, jsonpath, tmp, tmp);
	int r = system(cmd);
	free(cmd);
	if (r != 0)
		return NULL;
	return slurp(tmp, "out");
}

Test(pki, kubectl_reads_the_kubeconfig)
{
	if (!have("kubectl"))
		cr_skip_test("kubectl not on PATH");
	struct srv_pki p = {0};
	load_ok(NULL, 0, &p);
	struct srv_error err = {0};
	const char *url = "https://localhost:6443";
	cr_assert_eq(srv_kubeconfig_write(dir, url, &p, &err), LP_OK);
	char *s = kubectl_get("{.clusters[0].cluster.server}");
	cr_assert(s, "kubectl failed");
	cr_assert_str_eq(s, url);
	free(s);
	s = kubectl_get("{.users[0].user.token}");
	cr_assert_str_eq(s, p.token);
	free(s);
	s = kubectl_get("{.contexts[0].context.namespace}");
	cr_assert_str_eq(s, "default");
	free(s);
	s = kubectl_get("{.current-context}");
	cr_assert_str_eq(s, "lapis");
	free(s);
	srv_pki_free(&p);
}

Test(pki, insecure_kubeconfig_has_no_ca_an_empty_user_and_skips_tls_verify)
{
	struct srv_error err = {0};
	const char *url = "http://127.0.0.1:8080";
	cr_assert_eq(srv_kubeconfig_write(dir, url, NULL, &err), LP_OK, "%s",
		     err.message);
	cr_assert_eq(mode_of(dir, "kubeconfig"), 0600);
	char *text = slurp(dir, "kubeconfig");
	cr_assert_null(strstr(text, "certificate-authority"));
	cr_assert_null(strstr(text, "token"));
	cr_assert(strstr(text, "  user: {}\n"));
	free(text);
	if (have_pyyaml()) {
		spit_str(tmp, "url", url);
		cr_assert_eq(
		    py_check("import sys, yaml\n"
			     "d = yaml.safe_load(open(sys.argv[1]))\n"
			     "c = d['clusters'][0]['cluster']\n"
			     "assert c == {'server': open('url').read(),"
			     " 'insecure-skip-tls-verify': True}, c\n"
			     "assert d['users'] == [{'name': 'admin',"
			     " 'user': {}}]\n"
			     "assert d['current-context'] == 'lapis'\n"),
		    0);
	}
	if (have("kubectl")) {
		char *s = kubectl_get("{.clusters[0].cluster.server}");
		cr_assert(s, "kubectl failed");
		cr_assert_str_eq(s, url);
		free(s);
		s = kubectl_get(
		    "{.clusters[0].cluster.insecure-skip-tls-verify}");
		cr_assert(s, "kubectl failed");
		cr_assert_str_eq(s, "true");
		free(s);
	}
}

Test(pki, kubeconfig_quotes_tokens_and_urls_that_yaml_would_misread)
{
	if (!have_pyyaml())
		cr_skip_test("python3 with yaml not available");
	const char *tokens[] = {
	    "1234567890123456",	       "12345678e1234567",
	    "true-but-longer-than-16", "\"quoted\\back\"slash'#:x",
	    "-not-a-list-item:x",      "0x1234567890abcdef"};
	const char *url = "https://[::1]:6443/a?b=\"c\"#d";
	for (size_t i = 0; i < sizeof tokens / sizeof tokens[0]; i++) {
		struct srv_pki p = {.ca_pem = "-----BEGIN CERTIFICATE-----\n"
					      "x\n-----END CERTIFICATE-----\n",
				    .token = (char *)tokens[i]};
		struct srv_error err = {0};
		cr_assert_eq(srv_kubeconfig_write(dir, url, &p, &err), LP_OK,
			     "%s", err.message);
		spit_str(tmp, "url", url);
		spit_str(tmp, "ca.pem", p.ca_pem);
		spit_str(tmp, "token", p.token);
		cr_assert_eq(py_check(py_secure), 0, "token %s", tokens[i]);
	}
}

Test(pki, kubeconfig_rewrite_replaces_the_file)
{
	struct srv_error err = {0};
	cr_assert_eq(srv_kubeconfig_write(dir, "http://a:1", NULL, &err),
		     LP_OK);
	cr_assert_eq(srv_kubeconfig_write(dir, "http://b:2", NULL, &err),
		     LP_OK);
	char *text = slurp(dir, "kubeconfig");
	cr_assert(strstr(text, "\"http://b:2\""));
	cr_assert_null(strstr(text, "http://a:1"));
	free(text);
}

Test(pki, kubeconfig_bad_arguments_are_invalid)
{
	struct srv_error err = {0};
	struct srv_pki no_ca = {.token = "0123456789abcdef0123"};
	struct srv_pki no_tok = {.ca_pem = "x"};
	struct srv_pki bad_tok = {.ca_pem = "x", .token = "a b"};
	struct srv_pki nl_tok = {.ca_pem = "x", .token = "abc\nkind: Evil"};
	cr_assert_eq(srv_kubeconfig_write(NULL, "http://x", NULL, &err),
		     LP_E_INVAL);
	cr_assert_eq(srv_kubeconfig_write("", "http://x", NULL, &err),
		     LP_E_INVAL);
	cr_assert_eq(srv_kubeconfig_write(dir, NULL, NULL, &err), LP_E_INVAL);
	cr_assert_eq(srv_kubeconfig_write(dir, "", NULL, &err), LP_E_INVAL);
	cr_assert_eq(
	    srv_kubeconfig_write(dir, "http://x\nkind: Evil", NULL, &err),
	    LP_E_INVAL);
	cr_assert_eq(srv_kubeconfig_write(dir, "http://x y", NULL, &err),
		     LP_E_INVAL);
	cr_assert_eq(srv_kubeconfig_write(dir, "http://x", &no_ca, &err),
		     LP_E_INVAL);
	cr_assert_eq(srv_kubeconfig_write(dir, "http://x", &no_tok, &err),
		     LP_E_INVAL);
	cr_assert_eq(srv_kubeconfig_write(dir, "http://x", &bad_tok, &err),
		     LP_E_INVAL);
	cr_assert_eq(srv_kubeconfig_write(dir, "http://x", &nl_tok, &err),
		     LP_E_INVAL);
	cr_assert_not(exists(dir, "kubeconfig"));
}

Test(pki, kubeconfig_in_an_unusable_dir_is_an_io_error)
{
	spit_str(tmp, "data", "a file");
	struct srv_error err = {0};
	cr_assert_eq(srv_kubeconfig_write(dir, "http://x", NULL, &err),
		     LP_E_IO);
	cr_assert(strstr(err.message, "data"), "%s", err.message);
}

Test(pki, failed_call_writes_nothing_even_when_a_reissue_was_due)
{
	struct srv_pki p = {0};
	load_ok(NULL, 0, &p);
	srv_pki_free(&p);
	spit_str(dir, "admin.token", "bad");
	char *before = slurp(dir, "pki/server.crt");
	const char *extra[] = {"new.example.com"};
	struct srv_error err = {0};
	cr_assert_eq(load_err(extra, 1, &err), LP_E_IO);
	char *after = slurp(dir, "pki/server.crt");
	cr_assert_str_eq(before, after, "server.crt replaced by a failed call");
	char *cmd =
	    pathf("test -z \"$(ls -A '%s' '%s' | grep '^\\.')\"", dir, pki);
	cr_assert_eq(system(cmd), 0, "temporary files left");
	free(cmd);
	free(before);
	free(after);
}
