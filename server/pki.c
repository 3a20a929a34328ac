/*
 * pki.c -- the CA, the serving certificate, the admin token and the
 * kubeconfig of a data directory, with GnuTLS (see pki.h for the files).
 *
 * Thread: the main thread of `lapis serve`, at start, while the process
 * holds DIR/lapis.lock; nothing here is shared with other threads.
 *
 * What srv_pki_load_or_create() does with DIR/pki:
 *
 *   ca.crt missing ------------------> ca_create: new key, self-signed CA,
 *                                      staged: ca.key, then ca.crt
 *   ca.crt present ------------------> ca_load: must be a CA, unexpired,
 *                                      with ca.key holding its key, or fail
 *   server.key missing --------------> srv_setup: new key (staged first)
 *   server.crt missing or stale -----> srv_issue: sign a new one with the CA
 *   server.crt fine -----------------> reused as is
 *
 * Invariants
 *  1. Every file is replaced atomically (struct batch: temporary name in the
 *     same directory, data written out, rename, fsync of the directory), so
 *     a crash leaves each file either old or new, never torn. Nothing is
 *     renamed until every new file is ready, so a failed call changes no
 *     file unless it fails in the middle of the renames.
 *  2. A key is written before the certificate that uses it. A crash between
 *     the two leaves ca.key without ca.crt (the next start makes a new CA,
 *     replacing the orphan key) or a server.key that does not match
 *     server.crt (the next start re-issues the certificate). So a half
 *     finished first start heals itself, while a CA that exists is never
 *     replaced: it is what clients trust.
 *  3. A file that exists is read, never guessed at: a file that cannot be
 *     read or parsed is an error naming it, not a reason to overwrite it.
 *  4. Serials are 16 random bytes with the top bit clear and the first byte
 *     non-zero, so the DER INTEGER is positive, minimal (Go's x509 parser
 *     rejects non-minimal ones) and carries 127 random bits.
 *  5. Private key bytes and the token are wiped before their memory is
 *     released.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lapis/assert.h"
#include "lapis/log.h"
#include "pki.h"
#include "registry/object.h"

/* Our PEM files are well under 1 KiB; a MiB leaves room for a CA bundle a
   user put there and stops a huge or endless file from being slurped. */
#define PKI_MAX_FILE (1u << 20)
/* Re-issue the serving certificate this long before it expires, so a
   server restarted now and then never serves an expired one. */
#define PKI_RENEW_BEFORE ((time_t)30 * 24 * 3600)
/* notBefore lies this far in the past so that a client whose clock is a
   little behind ours still accepts a certificate made a moment ago. */
#define PKI_SKEW ((time_t)60)
#define PKI_CA_YEARS 10
#define PKI_SRV_YEARS 1
/* The admin token: 32 random bytes (256 bits), written as hex. */
#define PKI_TOKEN_BYTES 32
/* Bounds for a token a user wrote into admin.token themselves: shorter is
   too easy to guess, longer is no token anyone meant. */
#define PKI_TOKEN_MIN 16
#define PKI_TOKEN_MAX 1024
/* RFC 1035: a DNS name is at most 253 characters as text, a label 63. */
#define PKI_DNS_MAX 253
#define PKI_LABEL_MAX 63

enum san_kind { SAN_DNS, SAN_IP };

struct san {
	enum san_kind kind;
	size_t ip_len;		   /* 4 or 16 for SAN_IP */
	unsigned char ip[16];	   /* network order */
	char dns[PKI_DNS_MAX + 1]; /* for SAN_DNS, NUL-terminated */
};

struct sanlist {
	struct san *v; /* new */
	size_t n;
};

/* A certificate with its key, in GnuTLS form and as PEM text. */
struct kp {
	gnutls_x509_crt_t crt;	   /* NULL until loaded or made */
	gnutls_x509_privkey_t key; /* NULL until loaded or made */
	char *crt_pem;		   /* new, NUL-terminated */
	char *key_pem;		   /* new, NUL-terminated; wiped on free */
};

/* ---- errors ---------------------------------------------------------- */

static lp_err sys_fail(struct srv_error *err, const char *op, const char *path)
{
	int e = errno;
	lp_err rc = e == ENOMEM ? LP_E_NOMEM : LP_E_IO;
	return srv_error_set(err, LP_ERR(rc), "%s: %s: %s", path, op,
			     strerror(e));
}

static lp_err tls_fail(struct srv_error *err, int grc, const char *path,
		       const char *what)
{
	lp_err rc = grc == GNUTLS_E_MEMORY_ERROR ? LP_E_NOMEM : LP_E_IO;
	return srv_error_set(err, LP_ERR(rc), "%s: %s: %s", path, what,
			     gnutls_strerror(grc));
}

static lp_err nomem(struct srv_error *err)
{
	return srv_error_set(err, LP_ERR(LP_E_NOMEM), "out of memory");
}

/* ---- small helpers --------------------------------------------------- */

static void wipe_free(char *s)
{
	if (!s)
		return;
	explicit_bzero(s, strlen(s));
	free(s);
}

static lp_err path_join(char *buf, size_t size, const char *dir,
			const char *name, struct srv_error *err)
{
	int n = snprintf(buf, size, "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= size)
		return srv_error_set(err, LP_ERR(LP_E_IO), "%s/%s: %s", dir,
				     name, strerror(ENAMETOOLONG));
	return LP_OK;
}

static char *memdup_str(const void *p, size_t len)
{
	char *s = malloc(len + 1);
	if (!s)
		return NULL;
	memcpy(s, p, len);
	s[len] = '\0';
	return s;
}

static bool visible_ascii(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
			return false;
	return true;
}

/* Add whole years in UTC, the way a calendar does (Feb 29 rolls over to
   Mar 1), falling back to 365-day years if the date cannot be broken up. */
static time_t add_years(time_t t, int years)
{
	struct tm tm;
	if (gmtime_r(&t, &tm)) {
		tm.tm_year += years;
		time_t r = timegm(&tm);
		if (r != (time_t)-1)
			return r;
	}
	return t + (time_t)years * 365 * 24 * 3600;
}

/* ---- files ----------------------------------------------------------- */

/* Make dir (0700) unless it exists; an existing one must be a directory
   and is left as it is. *created (may be NULL) says which. */
static lp_err ensure_dir(const char *dir, bool *created, struct srv_error *err)
{
	if (mkdir(dir, 0700) == 0) {
		/* mkdir's mode passes through the umask; say it exactly. */
		if (chmod(dir, 0700) != 0)
			return sys_fail(err, "chmod", dir);
		if (created)
			*created = true;
		return LP_OK;
	}
	if (errno != EEXIST)
		return sys_fail(err, "mkdir", dir);
	struct stat st;
	if (stat(dir, &st) != 0)
		return sys_fail(err, "stat", dir);
	if (!S_ISDIR(st.st_mode))
		return srv_error_set(err, LP_ERR(LP_E_IO), "%s: %s", dir,
				     strerror(ENOTDIR));
	if (created)
		*created = false;
	return LP_OK;
}

/*
 * Read a small text file. A missing file is not an error: *found is false
 * and *out NULL. Otherwise *out is new and NUL-terminated, *len its length.
 * Not a regular file, larger than PKI_MAX_FILE or holding a NUL byte: an
 * error. O_NONBLOCK keeps a FIFO in the file's place from hanging us
 * before the type check refuses it.
 */
static lp_err read_small(const char *path, char **out, size_t *len, bool *found,
			 struct srv_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT) {
			*found = false;
			*out = NULL;
			*len = 0;
			return LP_OK;
		}
		return sys_fail(err, "open", path);
	}
	char *buf = NULL;
	size_t cap = 0, got = 0;
	lp_err rc;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		rc = sys_fail(err, "stat", path);
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = srv_error_set(err, LP_ERR(LP_E_IO),
				   "%s: not a regular file", path);
		goto fail;
	}
	if (st.st_size > (off_t)PKI_MAX_FILE) {
		rc = srv_error_set(err, LP_ERR(LP_E_IO),
				   "%s: larger than %u bytes", path,
				   PKI_MAX_FILE);
		goto fail;
	}
	/* One byte more than the size so that a file growing under us is
	   noticed rather than cut short. */
	cap = (size_t)st.st_size + 1;
	buf = malloc(cap + 1);
	if (!buf) {
		rc = nomem(err);
		goto fail;
	}
	while (got < cap) {
		ssize_t n = read(fd, buf + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = sys_fail(err, "read", path);
			goto fail;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got == cap) {
		rc = srv_error_set(err, LP_ERR(LP_E_IO),
				   "%s: changed while being read", path);
		goto fail;
	}
	if (memchr(buf, '\0', got)) {
		rc = srv_error_set(err, LP_ERR(LP_E_IO),
				   "%s: holds a NUL byte, not text", path);
		goto fail;
	}
	buf[got] = '\0';
	close(fd);
	*found = true;
	*out = buf;
	*len = got;
	return LP_OK;
fail:
	if (buf) {
		explicit_bzero(buf, cap + 1);
		free(buf);
	}
	close(fd);
	return rc;
}

/*
 * A batch of files replaced together (invariant 1). batch_add writes each
 * under a temporary name in its final directory and starts its writeback;
 * batch_commit waits for all the data to reach the device
 * (sync_file_range), renames the files in the order added, then fsyncs each
 * directory once. Started together, the writebacks overlap.
 *
 * Why not fsync every file: each fsync ends in a device cache flush, a few
 * milliseconds apiece on a virtual disk, and a first start writes five
 * files. Written out before its rename, a file's data is ordered before the
 * rename in the journal (ext4 data=ordered; XFS logs the size update at I/O
 * completion, before the rename), and the directory's fsync flushes the
 * device cache for all of them. So after a crash a new name either is
 * absent or holds its whole content -- what a per-file fsync buys -- at one
 * flush per directory. git's core.fsyncMethod=batch rests on the same
 * argument. Where sync_file_range is unavailable the file is fsynced.
 *
 * A stage marked `barrier` has its directory synced right after its
 * rename, before any later one (invariant 2).
 */
#define PKI_BATCH_MAX 6

struct stage {
	int fd;		     /* the temporary file, open until commit */
	bool barrier;	     /* fsync the directory after this rename */
	bool renamed;	     /* tmp is now path: nothing to unlink */
	const char *dir;     /* borrowed from batch_add's caller: must
				outlive batch_commit */
	char path[PATH_MAX]; /* the final name */
	char tmp[PATH_MAX];  /* the temporary name, in the same dir */
};

struct batch {
	size_t n;
	struct stage s[PKI_BATCH_MAX];
};

/* Close and remove every temporary file not yet renamed; reusable. */
static void batch_abort(struct batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		struct stage *st = &b->s[i];
		if (st->fd >= 0)
			close(st->fd);
		if (!st->renamed)
			unlink(st->tmp);
	}
	b->n = 0;
}

static lp_err batch_add(struct batch *b, const char *dir, const char *name,
			const void *data, size_t len, mode_t mode, bool barrier,
			struct srv_error *err)
{
	LP_ASSERT(b->n < PKI_BATCH_MAX);
	struct stage *st = &b->s[b->n];
	memset(st, 0, sizeof *st);
	st->fd = -1;
	lp_err rc = path_join(st->path, sizeof st->path, dir, name, err);
	if (rc)
		return rc;
	int n = snprintf(st->tmp, sizeof st->tmp, "%s/.%s.XXXXXX", dir, name);
	if (n < 0 || (size_t)n >= sizeof st->tmp)
		return srv_error_set(err, LP_ERR(LP_E_IO), "%s: %s", st->path,
				     strerror(ENAMETOOLONG));
	st->dir = dir;
	st->barrier = barrier;
	/* mkostemp creates the file 0600, so a key is never readable by
	   others, not even for a moment. */
	st->fd = mkostemp(st->tmp, O_CLOEXEC);
	if (st->fd < 0)
		return sys_fail(err, "create", st->tmp);
	b->n++; /* from here batch_abort removes it */
	if (fchmod(st->fd, mode) != 0)
		return sys_fail(err, "chmod", st->tmp);
	const char *p = data;
	size_t left = len;
	while (left > 0) {
		ssize_t w = write(st->fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return sys_fail(err, "write", st->tmp);
		p += w;
		left -= (size_t)w;
	}
	/* Start the writeback; batch_commit waits for it. Only a hint. */
	(void)sync_file_range(st->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	return LP_OK;
}

static lp_err sync_dir(const char *dir, struct srv_error *err)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return sys_fail(err, "open", dir);
	if (fsync(dfd) != 0) {
		lp_err rc = sys_fail(err, "fsync", dir);
		close(dfd);
		return rc;
	}
	close(dfd);
	return LP_OK;
}

/* Make the batch visible and durable. On failure the files not yet
   renamed are removed; the batch is empty afterwards either way. */
static lp_err batch_commit(struct batch *b, struct srv_error *err)
{
	lp_err rc = LP_OK;
	for (size_t i = 0; i < b->n && !rc; i++) {
		struct stage *st = &b->s[i];
		if (sync_file_range(st->fd, 0, 0,
				    SYNC_FILE_RANGE_WAIT_BEFORE |
					SYNC_FILE_RANGE_WRITE |
					SYNC_FILE_RANGE_WAIT_AFTER) != 0 &&
		    fsync(st->fd) != 0)
			rc = sys_fail(err, "fsync", st->tmp);
		int fd = st->fd;
		st->fd = -1;
		if (close(fd) != 0 && !rc)
			rc = sys_fail(err, "close", st->tmp);
	}
	for (size_t i = 0; i < b->n && !rc; i++) {
		struct stage *st = &b->s[i];
		if (rename(st->tmp, st->path) != 0) {
			rc = sys_fail(err, "rename", st->path);
			break;
		}
		st->renamed = true;
		if (st->barrier)
			rc = sync_dir(st->dir, err);
	}
	/* A rename is durable once its directory is synced: each directory
	   once, after its last rename, unless a barrier just did it. */
	for (size_t i = 0; i < b->n && !rc; i++) {
		bool later = false;
		for (size_t j = i + 1; j < b->n && !later; j++)
			later = strcmp(b->s[j].dir, b->s[i].dir) == 0;
		if (!later && !b->s[i].barrier)
			rc = sync_dir(b->s[i].dir, err);
	}
	batch_abort(b);
	return rc;
}

/* Whether dir/name holds exactly data (a restart on a fixed port writes
   no kubeconfig: on a full disk it could not, and serve would not start). */
static bool same_file(const char *dir, const char *name, const char *data,
		      size_t len)
{
	char path[PATH_MAX];
	struct srv_error e;
	srv_error_clear(&e);
	if (path_join(path, sizeof path, dir, name, &e))
		return false;
	char *old = NULL;
	size_t olen = 0;
	bool found = false;
	bool same = read_small(path, &old, &olen, &found, &e) == LP_OK &&
		    found && olen == len && !memcmp(old, data, len);
	wipe_free(old);
	return same;
}

/* Replace dir/name with data, atomically, with mode: a batch of one. */
static lp_err write_atomic(const char *dir, const char *name, const void *data,
			   size_t len, mode_t mode, struct srv_error *err)
{
	struct batch b = {0};
	lp_err rc = batch_add(&b, dir, name, data, len, mode, false, err);
	if (rc) {
		batch_abort(&b);
		return rc;
	}
	return batch_commit(&b, err);
}

/* ---- subject alternative names --------------------------------------- */

/* pki.h's DNS name rule. */
static bool dns_name_ok(const char *s)
{
	size_t len = strlen(s);
	if (len == 0 || len > PKI_DNS_MAX)
		return false;
	/* A wildcard may only be the whole first label, before another. */
	if (s[0] == '*') {
		if (s[1] != '.' || s[2] == '\0')
			return false;
		s += 2;
	}
	const char *label = s;
	bool all_digits = true;
	for (const char *c = s;; c++) {
		if (*c == '.' || *c == '\0') {
			size_t ll = (size_t)(c - label);
			if (ll == 0 || ll > PKI_LABEL_MAX || label[0] == '-' ||
			    c[-1] == '-')
				return false;
			if (*c == '\0')
				break;
			label = c + 1;
			all_digits = true;
			continue;
		}
		if (*c >= '0' && *c <= '9')
			continue;
		all_digits = false;
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      *c == '-'))
			return false;
	}
	/* A name whose last label is all digits reads as a (malformed)
	   address, e.g. "127.1"; RFC 3696 §2 rules such names out. */
	return !all_digits;
}

static lp_err san_parse(const char *s, size_t i, struct san *o,
			struct srv_error *err)
{
	memset(o, 0, sizeof *o);
	if (!s)
		return srv_error_set(err, LP_ERR(LP_E_INVAL),
				     "extra SAN %zu is NULL", i);
	if (inet_pton(AF_INET, s, o->ip) == 1) {
		o->kind = SAN_IP;
		o->ip_len = 4;
		return LP_OK;
	}
	if (inet_pton(AF_INET6, s, o->ip) == 1) {
		o->kind = SAN_IP;
		o->ip_len = 16;
		return LP_OK;
	}
	if (!dns_name_ok(s))
		return srv_error_set(err, LP_ERR(LP_E_INVAL),
				     "extra SAN \"%.300s\" is neither an IP "
				     "address nor a DNS name",
				     s);
	o->kind = SAN_DNS;
	memcpy(o->dns, s, strlen(s) + 1);
	return LP_OK;
}

static bool san_eq(const struct san *a, const struct san *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == SAN_IP)
		return a->ip_len == b->ip_len &&
		       memcmp(a->ip, b->ip, a->ip_len) == 0;
	return strcasecmp(a->dns, b->dns) == 0;
}

static void san_text(const struct san *s, char *buf, size_t size)
{
	if (s->kind == SAN_DNS) {
		snprintf(buf, size, "DNS:%s", s->dns);
		return;
	}
	char ip[INET6_ADDRSTRLEN];
	if (!inet_ntop(s->ip_len == 4 ? AF_INET : AF_INET6, s->ip, ip,
		       sizeof ip))
		snprintf(ip, sizeof ip, "?");
	snprintf(buf, size, "IP:%s", ip);
}

/* The defaults, then the extras, without duplicates. *out new. */
static lp_err sans_build(const char *const *extra, size_t n_extra,
			 struct sanlist *out, struct srv_error *err)
{
	static const char *const defaults[] = {"localhost", "127.0.0.1", "::1"};
	size_t n_def = sizeof defaults / sizeof defaults[0];
	if (n_extra > SIZE_MAX / sizeof(struct san) - n_def)
		return srv_error_set(err, LP_ERR(LP_E_INVAL),
				     "too many extra SANs");
	struct san *v = calloc(n_def + n_extra, sizeof *v);
	if (!v)
		return nomem(err);
	size_t n = 0;
	for (size_t i = 0; i < n_def + n_extra; i++) {
		struct san s;
		const char *text = i < n_def ? defaults[i] : extra[i - n_def];
		lp_err rc =
		    san_parse(text, i - (i < n_def ? 0 : n_def), &s, err);
		if (rc) {
			free(v);
			return rc;
		}
		bool dup = false;
		for (size_t j = 0; j < n && !dup; j++)
			dup = san_eq(&v[j], &s);
		if (!dup)
			v[n++] = s;
	}
	out->v = v;
	out->n = n;
	return LP_OK;
}

static bool crt_has_san(gnutls_x509_crt_t crt, const struct san *want)
{
	size_t want_len =
	    want->kind == SAN_IP ? want->ip_len : strlen(want->dns);
	for (unsigned seq = 0;; seq++) {
		unsigned char buf[PKI_DNS_MAX + 3];
		size_t size = sizeof buf;
		unsigned critical;
		int t = gnutls_x509_crt_get_subject_alt_name(crt, seq, buf,
							     &size, &critical);
		if (t == GNUTLS_E_SHORT_MEMORY_BUFFER)
			continue; /* longer than any name we ask for */
		if (t < 0)
			return false; /* the end, or an unreadable entry */
		if (size != want_len)
			continue;
		if (want->kind == SAN_IP && t == GNUTLS_SAN_IPADDRESS &&
		    memcmp(buf, want->ip, want_len) == 0)
			return true;
		if (want->kind == SAN_DNS && t == GNUTLS_SAN_DNSNAME &&
		    strncasecmp((const char *)buf, want->dns, want_len) == 0)
			return true;
	}
}

/* ---- certificates and keys ------------------------------------------- */

static void kp_free(struct kp *k)
{
	if (k->crt)
		gnutls_x509_crt_deinit(k->crt);
	if (k->key)
		gnutls_x509_privkey_deinit(k->key);
	free(k->crt_pem);
	wipe_free(k->key_pem);
	memset(k, 0, sizeof *k);
}

static lp_err key_new(const char *path, gnutls_x509_privkey_t *out,
		      struct srv_error *err)
{
	gnutls_x509_privkey_t key;
	int g = gnutls_x509_privkey_init(&key);
	if (g < 0)
		return tls_fail(err, g, path, "new key");
	g = gnutls_x509_privkey_generate(
	    key, GNUTLS_PK_ECDSA,
	    GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0);
	if (g < 0) {
		gnutls_x509_privkey_deinit(key);
		return tls_fail(err, g, path, "generate ECDSA P-256 key");
	}
	*out = key;
	return LP_OK;
}

/* The key as unencrypted PKCS#8 PEM ("PRIVATE KEY"), which GnuTLS, Go and
   OpenSSL all read. *out new. */
static lp_err key_to_pem(gnutls_x509_privkey_t key, const char *path,
			 char **out, struct srv_error *err)
{
	gnutls_datum_t d = {NULL, 0};
	int g = gnutls_x509_privkey_export2_pkcs8(key, GNUTLS_X509_FMT_PEM,
						  NULL, GNUTLS_PKCS_PLAIN, &d);
	if (g < 0)
		return tls_fail(err, g, path, "export key");
	char *s = memdup_str(d.data, d.size);
	explicit_bzero(d.data, d.size);
	gnutls_free(d.data);
	if (!s)
		return nomem(err);
	*out = s;
	return LP_OK;
}

static lp_err crt_to_pem(gnutls_x509_crt_t crt, const char *path, char **out,
			 struct srv_error *err)
{
	gnutls_datum_t d = {NULL, 0};
	int g = gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &d);
	if (g < 0)
		return tls_fail(err, g, path, "export certificate");
	char *s = memdup_str(d.data, d.size);
	gnutls_free(d.data);
	if (!s)
		return nomem(err);
	*out = s;
	return LP_OK;
}

static lp_err key_import(const char *path, const char *pem, size_t len,
			 gnutls_x509_privkey_t *out, struct srv_error *err)
{
	gnutls_x509_privkey_t key;
	int g = gnutls_x509_privkey_init(&key);
	if (g < 0)
		return tls_fail(err, g, path, "load key");
	gnutls_datum_t d = {(unsigned char *)pem, (unsigned)len};
	/* import2 reads PKCS#8 and the older per-algorithm PEM forms. */
	g = gnutls_x509_privkey_import2(key, &d, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (g < 0) {
		gnutls_x509_privkey_deinit(key);
		return tls_fail(err, g, path, "not a usable PEM private key");
	}
	*out = key;
	return LP_OK;
}

/* The first certificate of a PEM file. */
static lp_err crt_import(const char *path, const char *pem, size_t len,
			 gnutls_x509_crt_t *out, struct srv_error *err)
{
	gnutls_x509_crt_t crt;
	int g = gnutls_x509_crt_init(&crt);
	if (g < 0)
		return tls_fail(err, g, path, "load certificate");
	gnutls_datum_t d = {(unsigned char *)pem, (unsigned)len};
	g = gnutls_x509_crt_import(crt, &d, GNUTLS_X509_FMT_PEM);
	if (g < 0) {
		gnutls_x509_crt_deinit(crt);
		return tls_fail(err, g, path, "not a PEM certificate");
	}
	*out = crt;
	return LP_OK;
}

/* Whether key is the private half of crt's public key. */
static bool key_matches(gnutls_x509_crt_t crt, gnutls_x509_privkey_t key)
{
	unsigned char a[64], b[64];
	size_t na = sizeof a, nb = sizeof b;
	if (gnutls_x509_crt_get_key_id(crt, GNUTLS_KEYID_USE_SHA256, a, &na) <
		0 ||
	    gnutls_x509_privkey_get_key_id(key, GNUTLS_KEYID_USE_SHA256, b,
					   &nb) < 0)
		return false;
	return na == nb && memcmp(a, b, na) == 0;
}

static lp_err set_serial(gnutls_x509_crt_t crt, const char *path,
			 struct srv_error *err)
{
	unsigned char serial[16];
	int g = gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof serial);
	if (g < 0)
		return tls_fail(err, g, path, "random serial");
	serial[0] &= 0x7f; /* invariant 4 */
	if (serial[0] == 0)
		serial[0] = 1;
	g = gnutls_x509_crt_set_serial(crt, serial, sizeof serial);
	if (g < 0)
		return tls_fail(err, g, path, "set serial");
	return LP_OK;
}

/*
 * The fields both certificates share: version 3, a random serial, subject
 * CN, the public key of key and its subject key identifier, and the
 * validity from now - PKI_SKEW to not_after.
 */
static lp_err crt_common(gnutls_x509_crt_t crt, gnutls_x509_privkey_t key,
			 const char *cn, time_t now, time_t not_after,
			 const char *path, struct srv_error *err)
{
	lp_err rc = set_serial(crt, path, err);
	if (rc)
		return rc;
	unsigned char id[20];
	size_t id_len = sizeof id;
	int g;
	if ((g = gnutls_x509_crt_set_version(crt, 3)) < 0 ||
	    (g = gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME,
					       0, cn, (unsigned)strlen(cn))) <
		0 ||
	    (g = gnutls_x509_crt_set_key(crt, key)) < 0 ||
	    (g = gnutls_x509_crt_set_activation_time(crt, now - PKI_SKEW)) <
		0 ||
	    (g = gnutls_x509_crt_set_expiration_time(crt, not_after)) < 0 ||
	    (g = gnutls_x509_privkey_get_key_id(key, GNUTLS_KEYID_USE_SHA1, id,
						&id_len)) < 0 ||
	    (g = gnutls_x509_crt_set_subject_key_id(crt, id, id_len)) < 0)
		return tls_fail(err, g, path, "build certificate");
	return LP_OK;
}

/* Make a new CA and stage ca.key, then ca.crt (invariant 2). */
static lp_err ca_create(const char *pki_dir, time_t now, struct batch *b,
			struct kp *ca, struct srv_error *err)
{
	char crt_path[PATH_MAX], key_path[PATH_MAX];
	lp_err rc;
	if ((rc = path_join(crt_path, sizeof crt_path, pki_dir, "ca.crt",
			    err)) ||
	    (rc = path_join(key_path, sizeof key_path, pki_dir, "ca.key", err)))
		return rc;
	struct kp k = {0};
	rc = key_new(key_path, &k.key, err);
	if (rc)
		goto fail;
	int g = gnutls_x509_crt_init(&k.crt);
	if (g < 0) {
		rc = tls_fail(err, g, crt_path, "new certificate");
		goto fail;
	}
	rc = crt_common(k.crt, k.key, "lapis-ca", now,
			add_years(now, PKI_CA_YEARS), crt_path, err);
	if (rc)
		goto fail;
	/* basicConstraints (GnuTLS marks it critical) CA:true without a path
	   length limit, as kubeadm's CA; the CA only signs certificates and
	   revocation lists. */
	if ((g = gnutls_x509_crt_set_basic_constraints(k.crt, 1, -1)) < 0 ||
	    (g = gnutls_x509_crt_set_key_usage(
		 k.crt, GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN)) < 0 ||
	    (g = gnutls_x509_crt_sign2(k.crt, k.crt, k.key, GNUTLS_DIG_SHA256,
				       0)) < 0) {
		rc = tls_fail(err, g, crt_path, "sign CA certificate");
		goto fail;
	}
	if ((rc = key_to_pem(k.key, key_path, &k.key_pem, err)) ||
	    (rc = crt_to_pem(k.crt, crt_path, &k.crt_pem, err)))
		goto fail;
	if ((rc = batch_add(b, pki_dir, "ca.key", k.key_pem, strlen(k.key_pem),
			    0600, true, err)) ||
	    (rc = batch_add(b, pki_dir, "ca.crt", k.crt_pem, strlen(k.crt_pem),
			    0644, false, err)))
		goto fail;
	*ca = k;
	return LP_OK;
fail:
	kp_free(&k);
	return rc;
}

/* Load the existing CA (crt_pem is ca.crt's text, taken on success). */
static lp_err ca_load(const char *pki_dir, char *crt_pem, size_t crt_len,
		      time_t now, struct kp *ca, struct srv_error *err)
{
	char crt_path[PATH_MAX], key_path[PATH_MAX];
	lp_err rc;
	if ((rc = path_join(crt_path, sizeof crt_path, pki_dir, "ca.crt",
			    err)) ||
	    (rc = path_join(key_path, sizeof key_path, pki_dir, "ca.key", err)))
		return rc;
	struct kp k = {0};
	size_t key_len = 0;
	bool found = false;
	rc = crt_import(crt_path, crt_pem, crt_len, &k.crt, err);
	if (rc)
		goto fail;
	unsigned critical = 0, is_ca = 0;
	int pathlen = -1;
	if (gnutls_x509_crt_get_basic_constraints(k.crt, &critical, &is_ca,
						  &pathlen) < 0 ||
	    !is_ca) {
		rc = srv_error_set(err, LP_ERR(LP_E_IO),
				   "%s: not a CA certificate", crt_path);
		goto fail;
	}
	time_t not_after = gnutls_x509_crt_get_expiration_time(k.crt);
	if (not_after == (time_t)-1 || not_after <= now) {
		rc = srv_error_set(err, LP_ERR(LP_E_IO),
				   "%s: the CA has expired; move %s away to "
				   "create a new one (clients must then be "
				   "given the new kubeconfig)",
				   crt_path, pki_dir);
		goto fail;
	}
	rc = read_small(key_path, &k.key_pem, &key_len, &found, err);
	if (rc)
		goto fail;
	if (!found) {
		rc = srv_error_set(err, LP_ERR(LP_E_IO),
				   "%s: missing, but ca.crt exists: cannot "
				   "issue certificates without the CA's key",
				   key_path);
		goto fail;
	}
	rc = key_import(key_path, k.key_pem, key_len, &k.key, err);
	if (rc)
		goto fail;
	if (!key_matches(k.crt, k.key)) {
		rc = srv_error_set(err, LP_ERR(LP_E_IO),
				   "%s: not the key of %s", key_path, crt_path);
		goto fail;
	}
	if (not_after - now < PKI_RENEW_BEFORE)
		lp_warn("pki: the CA %s expires in less than 30 days",
			crt_path);
	k.crt_pem = crt_pem;
	*ca = k;
	return LP_OK;
fail:
	kp_free(&k);
	return rc;
}

static lp_err ca_load_or_create(const char *pki_dir, time_t now,
				struct batch *b, struct kp *ca,
				struct srv_error *err)
{
	char crt_path[PATH_MAX];
	lp_err rc =
	    path_join(crt_path, sizeof crt_path, pki_dir, "ca.crt", err);
	if (rc)
		return rc;
	char *pem = NULL;
	size_t len = 0;
	bool found = false;
	rc = read_small(crt_path, &pem, &len, &found, err);
	if (rc)
		return rc;
	if (!found)
		return ca_create(pki_dir, now, b, ca, err);
	rc = ca_load(pki_dir, pem, len, now, ca, err);
	if (rc)
		free(pem);
	return rc;
}

/*
 * Why crt, the serving certificate, must be re-issued, written into why;
 * false when it is fine as it is.
 */
static bool srv_stale(gnutls_x509_crt_t crt, gnutls_x509_privkey_t key,
		      const struct kp *ca, const struct sanlist *sans,
		      time_t now, char *why, size_t why_size)
{
	if (!key_matches(crt, key)) {
		snprintf(why, why_size, "the old one did not match server.key");
		return true;
	}
	time_t nb = gnutls_x509_crt_get_activation_time(crt);
	time_t na = gnutls_x509_crt_get_expiration_time(crt);
	if (nb == (time_t)-1 || na == (time_t)-1 || nb > now) {
		snprintf(why, why_size, "the old one was not valid yet");
		return true;
	}
	if (na - now < PKI_RENEW_BEFORE) {
		snprintf(why, why_size, "the old one expired within 30 days");
		return true;
	}
	unsigned status = 0;
	if (gnutls_x509_crt_verify(crt, &ca->crt, 1, 0, &status) < 0 ||
	    status != 0) {
		snprintf(why, why_size, "the old one did not verify against ca.crt");
		return true;
	}
	for (size_t i = 0; i < sans->n; i++) {
		if (!crt_has_san(crt, &sans->v[i])) {
			char t[PKI_DNS_MAX + 8];
			san_text(&sans->v[i], t, sizeof t);
			snprintf(why, why_size, "the old one lacked the SAN %s", t);
			return true;
		}
	}
	return false;
}

/* Sign a new serving certificate for k->key with the CA, k->crt new. The
   validity ends a year from now, or with the CA if that comes first. */
static lp_err srv_issue(const char *crt_path, const struct kp *ca,
			const struct sanlist *sans, time_t now, struct kp *k,
			struct srv_error *err)
{
	gnutls_x509_crt_t crt;
	int g = gnutls_x509_crt_init(&crt);
	if (g < 0)
		return tls_fail(err, g, crt_path, "new certificate");
	time_t not_after = add_years(now, PKI_SRV_YEARS);
	time_t ca_after = gnutls_x509_crt_get_expiration_time(ca->crt);
	if (ca_after != (time_t)-1 && ca_after < not_after)
		not_after = ca_after;
	lp_err rc =
	    crt_common(crt, k->key, "lapis", now, not_after, crt_path, err);
	if (rc)
		goto fail;
	for (size_t i = 0; i < sans->n; i++) {
		const struct san *s = &sans->v[i];
		if (s->kind == SAN_IP)
			g = gnutls_x509_crt_set_subject_alt_name(
			    crt, GNUTLS_SAN_IPADDRESS, s->ip,
			    (unsigned)s->ip_len, GNUTLS_FSAN_APPEND);
		else
			g = gnutls_x509_crt_set_subject_alt_name(
			    crt, GNUTLS_SAN_DNSNAME, s->dns,
			    (unsigned)strlen(s->dns), GNUTLS_FSAN_APPEND);
		if (g < 0) {
			rc = tls_fail(err, g, crt_path, "add SAN");
			goto fail;
		}
	}
	unsigned char aki[64];
	size_t aki_len = sizeof aki;
	unsigned critical;
	if (gnutls_x509_crt_get_subject_key_id(ca->crt, aki, &aki_len,
					       &critical) >= 0 &&
	    (g = gnutls_x509_crt_set_authority_key_id(crt, aki, aki_len)) < 0) {
		rc = tls_fail(err, g, crt_path, "set authority key id");
		goto fail;
	}
	if ((g = gnutls_x509_crt_set_basic_constraints(crt, 0, -1)) < 0 ||
	    (g = gnutls_x509_crt_set_key_usage(
		 crt, GNUTLS_KEY_DIGITAL_SIGNATURE |
			  GNUTLS_KEY_KEY_ENCIPHERMENT)) < 0 ||
	    (g = gnutls_x509_crt_set_key_purpose_oid(
		 crt, GNUTLS_KP_TLS_WWW_SERVER, 0)) < 0 ||
	    (g = gnutls_x509_crt_sign2(crt, ca->crt, ca->key, GNUTLS_DIG_SHA256,
				       0)) < 0) {
		rc = tls_fail(err, g, crt_path, "sign serving certificate");
		goto fail;
	}
	if (k->crt)
		gnutls_x509_crt_deinit(k->crt);
	k->crt = crt;
	return LP_OK;
fail:
	gnutls_x509_crt_deinit(crt);
	return rc;
}

/* Load or make server.key and server.crt (see the diagram at the top),
   staging what is new in b. why (why_size bytes) says why a certificate
   was issued, and is "" when the old one is kept. */
static lp_err srv_setup(const char *pki_dir, const struct kp *ca,
			const struct sanlist *sans, time_t now, struct batch *b,
			struct kp *out, char *why, size_t why_size,
			struct srv_error *err)
{
	char crt_path[PATH_MAX], key_path[PATH_MAX];
	lp_err rc;
	if ((rc = path_join(crt_path, sizeof crt_path, pki_dir, "server.crt",
			    err)) ||
	    (rc = path_join(key_path, sizeof key_path, pki_dir, "server.key",
			    err)))
		return rc;
	struct kp k = {0};
	size_t key_len = 0, crt_len = 0;
	bool key_found = false, crt_found = false;
	if ((rc =
		 read_small(key_path, &k.key_pem, &key_len, &key_found, err)) ||
	    (rc = read_small(crt_path, &k.crt_pem, &crt_len, &crt_found, err)))
		goto fail;
	if (key_found) {
		rc = key_import(key_path, k.key_pem, key_len, &k.key, err);
	} else {
		rc = key_new(key_path, &k.key, err);
		if (!rc)
			rc = key_to_pem(k.key, key_path, &k.key_pem, err);
	}
	if (rc)
		goto fail;
	if (crt_found) {
		rc = crt_import(crt_path, k.crt_pem, crt_len, &k.crt, err);
		if (rc)
			goto fail;
		if (!srv_stale(k.crt, k.key, ca, sans, now, why, why_size)) {
			why[0] = '\0';
			*out = k;
			return LP_OK;
		}
	} else {
		snprintf(why, why_size, "none existed");
	}
	rc = srv_issue(crt_path, ca, sans, now, &k, err);
	if (rc)
		goto fail;
	free(k.crt_pem);
	k.crt_pem = NULL;
	rc = crt_to_pem(k.crt, crt_path, &k.crt_pem, err);
	if (rc)
		goto fail;
	/* Key first (invariant 2). A mismatch heals on the next start, so
	   no barrier is needed between the two. */
	if ((!key_found &&
	     (rc = batch_add(b, pki_dir, "server.key", k.key_pem,
			     strlen(k.key_pem), 0600, false, err))) ||
	    (rc = batch_add(b, pki_dir, "server.crt", k.crt_pem,
			    strlen(k.crt_pem), 0644, false, err)))
		goto fail;
	*out = k;
	return LP_OK;
fail:
	kp_free(&k);
	return rc;
}

/* ---- service account signing key -------------------------------------- */

/* Load sa.key (the key that signs service account tokens, as kube's
   --service-account-signing-key-file), or make one and stage it in b.
   *out new PEM; *created true when made. */
static lp_err sa_key_setup(const char *pki_dir, struct batch *b, char **out,
			   bool *created, struct srv_error *err)
{
	char path[PATH_MAX];
	lp_err rc = path_join(path, sizeof path, pki_dir, "sa.key", err);
	if (rc)
		return rc;
	struct kp k = {0};
	size_t len = 0;
	bool found = false;
	if ((rc = read_small(path, &k.key_pem, &len, &found, err)))
		goto done;
	if (found) {
		rc = key_import(path, k.key_pem, len, &k.key, err);
	} else {
		if (!(rc = key_new(path, &k.key, err)) &&
		    !(rc = key_to_pem(k.key, path, &k.key_pem, err)))
			rc = batch_add(b, pki_dir, "sa.key", k.key_pem,
				       strlen(k.key_pem), 0600, false, err);
	}
	if (!rc) {
		*out = k.key_pem;
		k.key_pem = NULL;
		*created = !found;
	}
done:
	kp_free(&k);
	return rc;
}

/* ---- admin token ----------------------------------------------------- */

/* Load admin.token, or make one and stage it in b (*created true). */
static lp_err token_load_or_create(const char *data_dir, struct batch *b,
				   char **out, bool *created,
				   struct srv_error *err)
{
	char path[PATH_MAX];
	lp_err rc = path_join(path, sizeof path, data_dir, "admin.token", err);
	if (rc)
		return rc;
	char *text = NULL;
	size_t len = 0;
	bool found = false;
	rc = read_small(path, &text, &len, &found, err);
	if (rc)
		return rc;
	if (found) {
		/* An editor's trailing newline is not part of the token. */
		while (len > 0 &&
		       (text[len - 1] == '\n' || text[len - 1] == '\r' ||
			text[len - 1] == ' ' || text[len - 1] == '\t'))
			text[--len] = '\0';
		if (len < PKI_TOKEN_MIN || len > PKI_TOKEN_MAX ||
		    !visible_ascii(text, len)) {
			wipe_free(text);
			return srv_error_set(err, LP_ERR(LP_E_IO),
					     "%s: the token must be %d to %d "
					     "visible ASCII characters",
					     path, PKI_TOKEN_MIN,
					     PKI_TOKEN_MAX);
		}
		*out = text;
		*created = false;
		return LP_OK;
	}
	unsigned char raw[PKI_TOKEN_BYTES];
	int g = gnutls_rnd(GNUTLS_RND_KEY, raw, sizeof raw);
	if (g < 0)
		return tls_fail(err, g, path, "random token");
	static const char hex[] = "0123456789abcdef";
	char *tok = malloc(2 * PKI_TOKEN_BYTES + 1);
	if (!tok) {
		explicit_bzero(raw, sizeof raw);
		return nomem(err);
	}
	for (size_t i = 0; i < PKI_TOKEN_BYTES; i++) {
		tok[2 * i] = hex[raw[i] >> 4];
		tok[2 * i + 1] = hex[raw[i] & 0xf];
	}
	tok[2 * PKI_TOKEN_BYTES] = '\0';
	explicit_bzero(raw, sizeof raw);
	rc = batch_add(b, data_dir, "admin.token", tok, 2 * PKI_TOKEN_BYTES,
		       0600, false, err);
	if (rc) {
		wipe_free(tok);
		return rc;
	}
	*out = tok;
	*created = true;
	return LP_OK;
}

/* ---- public ---------------------------------------------------------- */

lp_err srv_pki_load_or_create(const char *data_dir,
			      const char *const *extra_sans, size_t n_extra,
			      struct srv_pki *out, struct srv_error *err)
{
	if (!data_dir || !*data_dir || !out)
		return srv_error_set(err, LP_ERR(LP_E_INVAL),
				     "pki: no data directory or no result");
	if (n_extra > 0 && !extra_sans)
		return srv_error_set(err, LP_ERR(LP_E_INVAL),
				     "pki: %zu extra SANs but no list",
				     n_extra);
	struct sanlist sans = {NULL, 0};
	struct kp ca = {0}, srv = {0};
	struct batch b = {0};
	char *token = NULL, *sa_key = NULL;
	char pki_dir[PATH_MAX];
	char why[PKI_DNS_MAX + 64] = "";
	bool pki_new = false, token_new = false, sa_new = false;
	lp_err rc = sans_build(extra_sans, n_extra, &sans, err);
	if (rc)
		return rc;
	if ((rc = path_join(pki_dir, sizeof pki_dir, data_dir, "pki", err)) ||
	    (rc = ensure_dir(data_dir, NULL, err)) ||
	    (rc = ensure_dir(pki_dir, &pki_new, err)))
		goto fail;
	time_t now = time(NULL);
	if ((rc = ca_load_or_create(pki_dir, now, &b, &ca, err)))
		goto fail;
	bool ca_new = b.n > 0;
	/* Nothing is written until everything is ready: a failure before
	   the commit leaves every file as it was. */
	if ((rc = srv_setup(pki_dir, &ca, &sans, now, &b, &srv, why, sizeof why,
			    err)) ||
	    (rc = sa_key_setup(pki_dir, &b, &sa_key, &sa_new, err)) ||
	    (rc =
		 token_load_or_create(data_dir, &b, &token, &token_new, err)) ||
	    (rc = batch_commit(&b, err)))
		goto fail;
	/* A new pki/ is durable once its parent is synced. */
	if (pki_new && !token_new && (rc = sync_dir(data_dir, err)))
		goto fail;
	if (ca_new)
		lp_info("pki: created CA %s/ca.crt", pki_dir);
	if (why[0])
		lp_info("pki: issued serving certificate %s/server.crt (%s)",
			pki_dir, why);
	if (token_new)
		lp_info("pki: created admin token %s/admin.token", data_dir);
	if (sa_new)
		lp_info("pki: created service account signing key %s/sa.key",
			pki_dir);
	out->ca_pem = ca.crt_pem;
	ca.crt_pem = NULL;
	out->cert_pem = srv.crt_pem;
	srv.crt_pem = NULL;
	out->key_pem = srv.key_pem;
	srv.key_pem = NULL;
	out->token = token;
	token = NULL;
	out->sa_key_pem = sa_key;
	sa_key = NULL;
fail:
	batch_abort(&b);
	wipe_free(token);
	wipe_free(sa_key);
	kp_free(&srv);
	kp_free(&ca);
	free(sans.v);
	return rc;
}

void srv_pki_free(struct srv_pki *p)
{
	if (!p)
		return;
	free(p->ca_pem);
	free(p->cert_pem);
	wipe_free(p->key_pem);
	wipe_free(p->token);
	wipe_free(p->sa_key_pem);
	memset(p, 0, sizeof *p);
}

/* ---- kubeconfig ------------------------------------------------------ */

/* s (visible ASCII, checked by the caller) as a YAML double-quoted scalar.
   Quoting keeps a token such as "1234e5..." from reading as a number. */
static char *yaml_quote(const char *s)
{
	size_t len = strlen(s), extra = 0;
	for (size_t i = 0; i < len; i++)
		extra += s[i] == '"' || s[i] == '\\';
	char *out = malloc(len + extra + 3), *o = out;
	if (!out)
		return NULL;
	*o++ = '"';
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '"' || s[i] == '\\')
			*o++ = '\\';
		*o++ = s[i];
	}
	*o++ = '"';
	*o = '\0';
	return out;
}

lp_err srv_kubeconfig_write(const char *data_dir, const char *server_url,
			    const struct srv_pki *p, struct srv_error *err)
{
	if (!data_dir || !*data_dir)
		return srv_error_set(err, LP_ERR(LP_E_INVAL),
				     "kubeconfig: no data directory");
	if (!server_url || !*server_url ||
	    !visible_ascii(server_url, strlen(server_url)))
		return srv_error_set(err, LP_ERR(LP_E_INVAL),
				     "kubeconfig: the server URL must be "
				     "visible ASCII");
	if (p && (!p->ca_pem || !p->token || !*p->token ||
		  !visible_ascii(p->token, strlen(p->token))))
		return srv_error_set(err, LP_ERR(LP_E_INVAL),
				     "kubeconfig: credentials without a CA or "
				     "with a token that is not visible ASCII");
	char *url = NULL, *ca = NULL, *tok = NULL, *text = NULL;
	lp_err rc;
	url = yaml_quote(server_url);
	if (!url)
		goto oom;
	if (p) {
		ca = reg_b64((const unsigned char *)p->ca_pem,
			     strlen(p->ca_pem));
		tok = yaml_quote(p->token);
		if (!ca || !tok)
			goto oom;
	}
	int n;
	if (p)
		n = asprintf(&text,
			     "apiVersion: v1\n"
			     "kind: Config\n"
			     "clusters:\n"
			     "- name: lapis\n"
			     "  cluster:\n"
			     "    server: %s\n"
			     "    certificate-authority-data: %s\n"
			     "users:\n"
			     "- name: admin\n"
			     "  user:\n"
			     "    token: %s\n"
			     "contexts:\n"
			     "- name: lapis\n"
			     "  context:\n"
			     "    cluster: lapis\n"
			     "    user: admin\n"
			     "    namespace: default\n"
			     "current-context: lapis\n",
			     url, ca, tok);
	else
		/* Plain http needs no TLS settings, but the JavaScript
		   client (@kubernetes/client-node 1.x) refuses an http
		   server unless the cluster says insecure-skip-tls-verify;
		   kubectl, client-go and Python ignore it for http. */
		n = asprintf(&text,
			     "apiVersion: v1\n"
			     "kind: Config\n"
			     "clusters:\n"
			     "- name: lapis\n"
			     "  cluster:\n"
			     "    server: %s\n"
			     "    insecure-skip-tls-verify: true\n"
			     "users:\n"
			     "- name: admin\n"
			     "  user: {}\n"
			     "contexts:\n"
			     "- name: lapis\n"
			     "  context:\n"
			     "    cluster: lapis\n"
			     "    user: admin\n"
			     "    namespace: default\n"
			     "current-context: lapis\n",
			     url);
	if (n < 0) {
		text = NULL;
		goto oom;
	}
	if ((rc = ensure_dir(data_dir, NULL, err)) == LP_OK &&
	    !same_file(data_dir, "kubeconfig", text, (size_t)n))
		rc = write_atomic(data_dir, "kubeconfig", text, (size_t)n, 0600,
				  err);
	goto done;
oom:
	rc = nomem(err);
done:
	wipe_free(text);
	wipe_free(tok);
	free(ca);
	free(url);
	return rc;
}
