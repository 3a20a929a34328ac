/*
 * cli_common.c -- helpers shared by the `lapis` subcommands (see
 * cli_common.h for the data directory layout and the invariants).
 *
 * Main thread of the command only. Errors meant for the user are printed
 * here, once, as "lapis: ..." lines on stderr.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_common.h"

int cli_usage(const char *text, int is_error)
{
	fputs(text, is_error ? stderr : stdout);
	return is_error ? CLI_USAGE : CLI_OK;
}

/* ---------------------------------------------------------------- parsing */

/* Duration units, in nanoseconds. */
static const struct {
	const char *name;
	uint64_t ns;
} units[] = {
    {"ns", 1ULL},
    {"us", 1000ULL},
    {"\xc2\xb5s", 1000ULL}, /* U+00B5 micro sign, as Go accepts */
    {"\xce\xbcs", 1000ULL}, /* U+03BC Greek mu, as Go accepts */
    {"ms", 1000000ULL},
    {"s", 1000000000ULL},
    {"m", 60ULL * 1000000000ULL},
    {"h", 3600ULL * 1000000000ULL},
};

/* The longest unit name that p starts with; its index, or -1. */
static int match_unit(const char *p, size_t *len)
{
	int best = -1;
	size_t best_len = 0;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		size_t n = strlen(units[i].name);
		if (n > best_len && strncmp(p, units[i].name, n) == 0) {
			best = (int)i;
			best_len = n;
		}
	}
	*len = best_len;
	return best;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int cli_parse_duration(const char *s, uint64_t *ms)
{
	if (!s || !*s)
		return -1;
	/* Go accepts a bare "0" and no other number without a unit. */
	if (strcmp(s, "0") == 0) {
		*ms = 0;
		return 0;
	}
	uint64_t total = 0; /* nanoseconds */
	const char *p = s;
	while (*p) {
		uint64_t whole = 0;
		int n_digits = 0, overflow = 0;
		for (; is_digit(*p); p++, n_digits++) {
			uint64_t d = (uint64_t)(*p - '0');
			if (whole > (UINT64_MAX - d) / 10)
				overflow = 1;
			else
				whole = whole * 10 + d;
		}
		/* A fraction is kept to 18 digits: more cannot change the
		   nanoseconds of any unit up to an hour. */
		double frac = 0, scale = 1;
		if (*p == '.') {
			for (p++; is_digit(*p); p++, n_digits++) {
				if (scale < 1e18) {
					frac = frac * 10 + (*p - '0');
					scale *= 10;
				}
			}
		}
		if (n_digits == 0)
			return -1;
		size_t ulen;
		int u = match_unit(p, &ulen);
		if (u < 0)
			return -1;
		p += ulen;
		uint64_t unit = units[u].ns;
		if (overflow || whole > UINT64_MAX / unit)
			return -1;
		uint64_t v = whole * unit;
		uint64_t f = (uint64_t)(frac / scale * (double)unit);
		if (v > UINT64_MAX - f || total > UINT64_MAX - (v + f))
			return -1;
		total += v + f;
	}
	/* The compactor counts in milliseconds: a non-zero interval that
	   would round to 0 (off) is a mistake, not a wish. */
	if (total > 0 && total < 1000000)
		return -1;
	*ms = total / 1000000;
	return 0;
}

void cli_format_duration(uint64_t ms, char *buf, size_t cap)
{
	if (ms == 0) {
		snprintf(buf, cap, "0s");
		return;
	}
	if (ms < 1000) {
		snprintf(buf, cap, "%llums", (unsigned long long)ms);
		return;
	}
	unsigned long long h = ms / 3600000, m = ms / 60000 % 60,
			   s = ms / 1000 % 60, frac = ms % 1000;
	char hm[48] = "";
	if (h)
		snprintf(hm, sizeof hm, "%lluh%llum", h, m);
	else if (m)
		snprintf(hm, sizeof hm, "%llum", m);
	char fs[8] = "";
	if (frac) {
		snprintf(fs, sizeof fs, ".%03llu", frac);
		for (size_t n = strlen(fs); n > 1 && fs[n - 1] == '0'; n--)
			fs[n - 1] = '\0';
	}
	snprintf(buf, cap, "%s%llu%ss", hm, s, fs);
}

int cli_parse_int(const char *s, int64_t min, int64_t max, int64_t *out)
{
	if (!s || !*s)
		return -1;
	errno = 0;
	char *end;
	long long v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || end == s || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* ---------------------------------------------------------------- files */

char *cli_path_join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int slash = la > 0 && a[la - 1] != '/';
	char *p = malloc(la + (size_t)slash + lb + 1);
	if (!p) {
		fputs("lapis: out of memory\n", stderr);
		exit(CLI_FAIL);
	}
	memcpy(p, a, la);
	if (slash)
		p[la] = '/';
	memcpy(p + la + slash, b, lb + 1);
	return p;
}

int cli_mkdir_p(const char *path, unsigned mode)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);
	if (len == 0 || len >= sizeof buf) {
		errno = len ? ENAMETOOLONG : ENOENT;
		return -1;
	}
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, (mode_t)mode) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, (mode_t)mode) != 0) {
		struct stat st;
		if (errno != EEXIST)
			return -1;
		if (stat(buf, &st) != 0)
			return -1;
		if (!S_ISDIR(st.st_mode)) {
			errno = ENOTDIR;
			return -1;
		}
	}
	return 0;
}

int cli_dir_is_empty(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int empty = 1;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			empty = 0;
			break;
		}
	}
	closedir(d);
	return empty;
}

void cli_remove_flat_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d)) != NULL) {
			if (!strcmp(de->d_name, ".") ||
			    !strcmp(de->d_name, ".."))
				continue;
			unlinkat(dirfd(d), de->d_name, 0);
		}
		closedir(d);
	}
	rmdir(dir);
}

int cli_fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = fsync(fd);
	int saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

/* Write all of buf to fd. 0 or -1/errno. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, buf, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

int cli_copy_file(const char *src, const char *dst)
{
	/* 1 MiB: large enough that the syscall count does not matter for
	   a multi-GiB store, small enough for any stack of callers (heap). */
	const size_t bufsz = 1u << 20;
	char *buf = NULL;
	int in = -1, out = -1, saved = 0;

	buf = malloc(bufsz);
	if (!buf) {
		saved = ENOMEM;
		goto fail;
	}
	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		saved = errno;
		goto fail;
	}
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0) {
		saved = errno;
		goto fail;
	}
	for (;;) {
		ssize_t r = read(in, buf, bufsz);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || (r > 0 && write_all(out, buf, (size_t)r) != 0)) {
			saved = errno;
			goto fail_unlink;
		}
		if (r == 0)
			break;
	}
	if (fsync(out) != 0) {
		saved = errno;
		goto fail_unlink;
	}
	int crc = close(out);
	out = -1;
	if (crc != 0) {
		saved = errno;
		goto fail_unlink;
	}
	close(in);
	free(buf);
	char *dir = strdup(dst);
	if (dir) {
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		int rc = cli_fsync_dir(slash ? (dir[0] ? dir : "/") : ".");
		saved = errno;
		free(dir);
		errno = saved;
		return rc;
	}
	return 0;

fail_unlink:
	if (out >= 0)
		close(out);
	out = -1;
	unlink(dst);
fail:
	if (out >= 0)
		close(out);
	if (in >= 0)
		close(in);
	free(buf);
	errno = saved;
	return -1;
}

void cli_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

/* ---------------------------------------------------------------- data dir */

int cli_datadir_lock(const char *dir, int create, struct cli_datadir *d)
{
	char *abs = NULL, *lock = NULL;
	int fd = -1;

	memset(d, 0, sizeof *d);
	d->lock_fd = -1;
	if (create && cli_mkdir_p(dir, 0700) != 0) {
		fprintf(stderr, "lapis: cannot create data directory %s: %s\n",
			dir, strerror(errno));
		goto fail;
	}
	abs = realpath(dir, NULL);
	if (!abs) {
		fprintf(stderr, "lapis: data directory %s: %s\n", dir,
			strerror(errno));
		goto fail;
	}
	lock = cli_path_join(abs, "lapis.lock");
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "lapis: cannot open %s: %s\n", lock,
			strerror(errno));
		goto fail;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno != EWOULDBLOCK) {
			fprintf(stderr, "lapis: cannot lock %s: %s\n", lock,
				strerror(errno));
			goto fail;
		}
		/* The holder writes its pid after locking; it may not have
		   yet, so an empty file just gives no pid. */
		char pid[32] = "";
		ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		fprintf(stderr,
			"lapis: data directory %s is in use by another process"
			"%s%s (it holds %s)\n",
			abs, pid[0] ? ", pid " : "", pid, lock);
		goto fail;
	}
	char pid[32];
	int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n)
		fprintf(stderr, "lapis: warning: cannot record pid in %s: %s\n",
			lock, strerror(errno));
	free(lock);
	d->dir = abs;
	d->store = cli_path_join(abs, "store");
	d->lock_fd = fd;
	return CLI_OK;

fail:
	if (fd >= 0)
		close(fd);
	free(lock);
	free(abs);
	return CLI_FAIL;
}

static int exists(const char *path);

int cli_datadir_open_store(struct cli_datadir *d, int nosync,
			   int64_t read_cache, uint64_t quota)
{
	/* an empty data.mdb is what LMDB makes a new store of; in a
	   directory served before (its kubeconfig is made after the
	   store's first writes) it is a store lost, and a new one would
	   bring the cluster back empty with its revisions reused */
	char *data = cli_path_join(d->store, "data.mdb");
	char *kc = cli_path_join(d->dir, "kubeconfig");
	struct stat st;
	bool lost = data && kc && stat(data, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_size == 0 && exists(kc);
	free(kc);
	if (lost) {
		fprintf(stderr,
			"lapis: %s is empty, but %s was served before (it "
			"holds a kubeconfig): not making a new, empty store "
			"over it. Restore a backup with lapis restore, or "
			"remove the directory to start anew\n",
			data, d->dir);
		free(data);
		return CLI_FAIL;
	}
	free(data);
	struct eng_opts o = {0};
	o.dir = d->store;
	o.nosync = nosync;
	o.read_cache = read_cache;
	o.quota = quota;
	lp_err rc = eng_open(&o, &d->e);
	if (rc != LP_OK) {
		d->e = NULL;
		fprintf(stderr, "lapis: cannot open store %s: %s\n", d->store,
			lp_strerror(rc));
		return CLI_FAIL;
	}
	return CLI_OK;
}

void cli_datadir_close(struct cli_datadir *d)
{
	eng_close(d->e);
	d->e = NULL;
	if (d->lock_fd >= 0)
		close(d->lock_fd); /* releases the flock */
	d->lock_fd = -1;
	free(d->store);
	free(d->dir);
	d->store = NULL;
	d->dir = NULL;
}

/* ---------------------------------------------------------------- stores */

static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Where a temporary store around the backup file at abs (a real path)
   is made: beside it, where a hard link is possible, then in $TMPDIR (or
   /tmp). Returns the file's directory (malloc'd, for the caller to free;
   bases[0] points into it). */
static char *wrap_bases(const char *abs, const char *bases[2])
{
	const char *tmp = getenv("TMPDIR");
	const char *slash = strrchr(abs, '/');
	char *beside = strndup(abs, (size_t)(slash - abs));
	bases[0] = beside && beside[0] ? beside : "/";
	bases[1] = tmp && tmp[0] ? tmp : "/tmp";
	return beside;
}

/*
 * Make a temporary environment directory holding file as data.mdb. Tried
 * beside the file first, where a hard link is possible, then in $TMPDIR.
 * Returns the new directory (malloc'd) or NULL after printing.
 */
static char *wrap_backup_file(const char *file)
{
	char *abs = realpath(file, NULL);
	if (!abs) {
		fprintf(stderr, "lapis: %s: %s\n", file, strerror(errno));
		return NULL;
	}
	const char *bases[2];
	char *beside = wrap_bases(abs, bases);
	char *dir = NULL;
	int saved = 0;
	for (int i = 0; i < 2 && !dir; i++) {
		char name[64];
		snprintf(name, sizeof name, ".lapis-open-%ld-XXXXXX",
			 (long)getpid());
		char *t = cli_path_join(bases[i], name);
		if (!mkdtemp(t)) {
			saved = errno;
			free(t);
			continue;
		}
		char *data = cli_path_join(t, "data.mdb");
		if (link(abs, data) == 0 || cli_copy_file(abs, data) == 0) {
			dir = t;
		} else {
			saved = errno;
			cli_remove_flat_dir(t);
			free(t);
		}
		free(data);
	}
	if (!dir)
		fprintf(stderr,
			"lapis: cannot make a temporary store around %s: %s\n",
			abs, strerror(saved));
	free(beside);
	free(abs);
	return dir;
}

int cli_in_child(int (*fn)(void *ud), void *ud, int *sig, volatile pid_t *pid)
{
	fflush(stdout);
	fflush(stderr);
	pid_t p = fork();
	if (p == 0) {
		int rc = fn(ud);
		fflush(stdout);
		fflush(stderr);
		_exit(rc);
	}
	if (p < 0) {
		fprintf(stderr, "lapis: fork: %s\n", strerror(errno));
		return CLI_FAIL;
	}
	*pid = p;
	int st;
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "lapis: waitpid: %s\n",
				strerror(errno));
			return CLI_FAIL;
		}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	*sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	return -1;
}

void cli_remove_wraps(const char *file, pid_t pid)
{
	char *abs = realpath(file, NULL);
	if (!abs)
		return;
	const char *bases[2];
	char *beside = wrap_bases(abs, bases);
	char name[64];
	snprintf(name, sizeof name, ".lapis-open-%ld-??????", (long)pid);
	for (int i = 0; i < 2; i++) {
		char *pat = cli_path_join(bases[i], name);
		glob_t g;
		if (pat && glob(pat, 0, NULL, &g) == 0) {
			for (size_t j = 0; j < g.gl_pathc; j++)
				cli_remove_flat_dir(g.gl_pathv[j]);
			globfree(&g);
		}
		free(pat);
	}
	free(beside);
	free(abs);
}

int cli_store_open(const char *path, struct cli_store *out)
{
	char *env = NULL, *probe = NULL;
	struct stat st;

	memset(out, 0, sizeof *out);
	if (stat(path, &st) != 0) {
		fprintf(stderr, "lapis: %s: %s\n", path, strerror(errno));
		return CLI_FAIL;
	}
	if (S_ISDIR(st.st_mode)) {
		probe = cli_path_join(path, "store/data.mdb");
		if (exists(probe)) {
			env = cli_path_join(path, "store");
		} else {
			free(probe);
			probe = cli_path_join(path, "data.mdb");
			if (exists(probe))
				env = strdup(path);
		}
		free(probe);
		if (!env) {
			fprintf(
			    stderr,
			    "lapis: %s is not a lapis data directory, store "
			    "directory or backup file\n",
			    path);
			return CLI_FAIL;
		}
	} else if (S_ISREG(st.st_mode)) {
		out->tmpdir = wrap_backup_file(path);
		if (!out->tmpdir)
			return CLI_FAIL;
		env = strdup(out->tmpdir);
	} else {
		fprintf(stderr, "lapis: %s is neither a directory nor a file\n",
			path);
		return CLI_FAIL;
	}
	if (!env) {
		fputs("lapis: out of memory\n", stderr);
		goto fail;
	}

	struct eng_opts o = {0};
	o.dir = env;
	o.readonly = 1;
	lp_err rc = eng_open(&o, &out->e);
	if (rc != LP_OK) {
		out->e = NULL;
		fprintf(stderr, "lapis: cannot open store %s: %s\n", path,
			lp_strerror(rc));
		if (eng_has_wal(env) && rc != LP_E_FORMAT)
			fprintf(stderr,
				"lapis: %s has a write-ahead log: a writer "
				"(lapis serve) recovers the store from it "
				"first\n",
				path);
		goto fail;
	}
	free(env);
	return CLI_OK;

fail:
	free(env);
	cli_store_close(out);
	return CLI_FAIL;
}

void cli_store_close(struct cli_store *s)
{
	eng_close(s->e);
	s->e = NULL;
	if (s->tmpdir) {
		cli_remove_flat_dir(s->tmpdir);
		free(s->tmpdir);
		s->tmpdir = NULL;
	}
}
