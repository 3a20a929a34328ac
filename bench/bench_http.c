/*
 * bench_http.c -- the HTTP benchmark of issue 3: lapis against a bare
 * libmicrohttpd responder that serves the same bytes, and against etcd.
 *
 *   bench-http [--lapis PATH] [--etcd PATH|none] [--dir DIR] [--keep]
 *              [--objects N] [--seconds S] [--warm S] [--rounds R]
 *              [--watchers N] [--watch-seconds S] [--quick]
 *              [--only s1,s2,s3,tls,s4,s5] [--s5-minutes M]
 *              [--s5-compaction SECONDS] [--s5-rate N]
 *
 * What it does, in order (docs/bench-http.md has the figures):
 *  A. Starts lapis (--insecure-http --nosync) on DIR/lapis, creates N
 *     ConfigMaps of about 1 KiB in namespace default with POST, reads every
 *     one back (the bytes the bare responder will serve) and walks the
 *     collection once with limit=500 (the pages). Forks the bare responder
 *     with those tables, starts etcd on random loopback ports, puts the same
 *     N objects (lapis's bytes as values) under /registry/configmaps/default/
 *     and compacts and defragments it.
 *     S1: GET one object (a random one of the N) at 1, 4 and 16 connections.
 *     S2: LIST with limit=500, each connection walking every page with
 *         continue, at 1, 4 and 16 connections; lapis's RSS is sampled every
 *         50 ms during the 16-connection run.
 *     S1 again at 4 connections through libcurl over plain HTTP, the
 *     reference for the TLS figure.
 *     S3: restarts lapis (a clean RSS baseline, taken once the server is
 *     quiet: its informer cache loads after it answers), opens W watch
 *     connections on the collection from the current resourceVersion,
 *     then sends 5
 *     updates a second (merge PATCH of one object); then the same against
 *     the bare responder (chunked fan-out of lapis's event bytes, suspend
 *     and resume); R rounds of both, then once against etcd's /v3/watch,
 *     then once against a raw fan-out (a forked child with no HTTP library
 *     that send()s each framed event to every watch: the kernel's floor).
 *  B. Restarts lapis with TLS (no --insecure-http): S1 at 4 connections with
 *     libcurl, bearer token and the CA from the data directory.
 *  C. Restarts lapis without --nosync (commits are fsynced) and measures
 *     S4: POST creates at 1 and 16 connections, beside a raw LMDB loop of
 *     one synced commit per put on the same filesystem (preloaded with the
 *     dataset) and etcd puts at 1 and 16 connections; and the same creates
 *     at 1 and 16 connections against a copy of the store served with
 *     --nosync (where a lone write commits on the HTTP thread that read
 *     it), so that a create's time at 1 connection parts into the HTTP path
 *     and the synced commit with the hand-over to the writer thread and
 *     back, and the 16-connection row is what a test server does.
 *  D. S5 (only when --only names it or --s5-minutes is given: it takes 30
 *     minutes by default): a durable lapis on its own data directory with
 *     --compaction-interval M/6 minutes, the dataset created fresh, then M
 *     minutes of writes at a fixed rate with a GET probe, one row per 10 s
 *     window (see the S5 section; phase A is skipped when only S5 runs).
 *
 * Invariants:
 *  1. It is a benchmark, not a test: it prints figures beside the issue's
 *     targets and whether they are met, and exits 0 whatever the figures
 *     are. It exits 1 when it cannot run (a server does not start, the
 *     dataset cannot be loaded), 2 on a usage error.
 *  2. Server CPU is the server process's time on a CPU, the sum over its
 *     threads of /proc/PID/task/TID/schedstat (nanoseconds; utime+stime of
 *     /proc/PID/stat, in 10 ms ticks, where that is missing), read just
 *     before and just after the measured window. A thread that ends
 *     inside a window is not counted: neither lapis nor etcd ends threads
 *     under load (their pools live as long as they do). The client runs
 *     in this process and never in the server's, so the two never mix; the
 *     client's own CPU is printed beside each row (both share 2 cores).
 *  3. The same client drives every server: one epoll thread, one request in
 *     flight per keep-alive connection, the latency of each request taken
 *     from just before its first byte is written to the moment its last
 *     byte is parsed. The same per-connection random sequence picks the
 *     objects for every server.
 *  4. The bare responder is a fork of this program made before any thread
 *     starts; it runs libmicrohttpd with lapis's daemon flags, thread pool
 *     size and limits, and answers from persistent buffers holding the
 *     bytes lapis returned for the same request, with the same headers.
 *  5. S1, S2 and S4 figures are the best of R rounds (--rounds), the
 *     servers alternating within each round: load from other processes on a
 *     shared machine only lowers a rate, so the best round is the least
 *     disturbed. S1 and S2 also print the median over rounds of each
 *     round's lapis/bare ratio (the two ran back to back): the best rounds
 *     of two servers may come from different moments, and on 2 cores a
 *     lucky thread placement moves one server's best by 2x. S3 prints every
 *     round and judges the round with the lowest p99.
 *  6. Every child (lapis, the bare responder, etcd) gets SIGTERM when this
 *     process dies (PR_SET_PDEATHSIG), and everything lives in one
 *     directory, removed at exit unless --keep.
 *
 * Threads: the main thread runs everything except the S3 updater thread and
 * the libcurl worker threads of the TLS runs.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <lmdb.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "acceptor.h"    /* lapis's accept thread */
#include "http_daemon.h" /* lapis's daemon flags and limits */

#define COLL "/api/v1/namespaces/default/configmaps"
#define EPREFIX "/registry/configmaps/default/"
#define EPREFIX_END "/registry/configmaps/default0" /* '/' + 1 */
#define PAGE 500		/* the issue's page size */
#define MAX_CONNS 16		/* the largest S1/S2/S4 connection count */
#define MAX_UPDATES 1024	/* S3 updates: 5/s for at most ~200 s */
#define TMPFS_MAGIC_ 0x01021994 /* linux/magic.h's TMPFS_MAGIC */

static struct {
	const char *lapis, *etcd, *dir;
	int objects, rounds, watchers;
	double secs, warm, watch_secs;
	bool keep;
	const char *only;	/* comma-separated scenarios, NULL: all */
	double s5_minutes;	/* S5's length */
	double s5_compact_s;	/* S5's compaction interval; 0: minutes * 10 s */
	int s5_rate;		/* S5's writes per second */
	bool s5_asked;		/* --s5-minutes given */
} cfg = {
	.s5_minutes = 30,
	.s5_rate = 200,
	.objects = 10000,
	.rounds = 2,
	.watchers = 1000,
	.secs = 3.0,
	.warm = 0.5,
	.watch_secs = 5.0,
};

static long clk_tck;
static unsigned n_cpus;

/* ------------------------------------------------------------ basics */

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "bench-http: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

static void *xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		die("out of memory");
	return p;
}

static char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

/* A growable byte buffer, always NUL-terminated. */
struct buf {
	char *p;
	size_t len, cap;
};

static void buf_reserve(struct buf *b, size_t n)
{
	if (b->len + n + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + n + 1)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p)
		die("out of memory");
	b->p = p;
	b->cap = cap;
}

static void buf_add(struct buf *b, const void *p, size_t n)
{
	buf_reserve(b, n);
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_printf(struct buf *b, const char *fmt, ...)
{
	char small[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("buf_printf: bad format");
	if ((size_t)n < sizeof small) {
		buf_add(b, small, (size_t)n);
		return;
	}
	buf_reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static void buf_clear(struct buf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = 0;
}

static void buf_free(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

static const char b64_tab[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Standard base64 with padding, as etcd's JSON gateway wants bytes. */
static void b64_enc(struct buf *o, const void *src, size_t n)
{
	const unsigned char *p = src;
	buf_reserve(o, (n + 2) / 3 * 4);
	char *w = o->p + o->len;
	size_t i = 0;
	for (; i + 3 <= n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
		*w++ = b64_tab[v >> 18];
		*w++ = b64_tab[(v >> 12) & 63];
		*w++ = b64_tab[(v >> 6) & 63];
		*w++ = b64_tab[v & 63];
	}
	if (i < n) {
		unsigned v = (unsigned)p[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)p[i + 1] << 8;
		*w++ = b64_tab[v >> 18];
		*w++ = b64_tab[(v >> 12) & 63];
		*w++ = i + 1 < n ? b64_tab[(v >> 6) & 63] : '=';
		*w++ = '=';
	}
	o->len = (size_t)(w - o->p);
	o->p[o->len] = 0;
}

static size_t b64_dec(const char *s, size_t n, unsigned char *out)
{
	unsigned v = 0;
	int bits = 0;
	size_t o = 0;
	for (size_t i = 0; i < n && s[i] != '='; i++) {
		const char *c = strchr(b64_tab, s[i]);
		if (!c || !s[i])
			break;
		v = v << 6 | (unsigned)(c - b64_tab);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(v >> bits);
		}
	}
	return o;
}

/* xorshift64*: the per-connection object picker (invariant 3). */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

/* Latencies in microseconds. */
struct lat {
	uint32_t *v;
	size_t n, cap;
	bool sorted;
};

static void lat_add(struct lat *l, int64_t ns)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 4096;
		uint32_t *v = realloc(l->v, l->cap * sizeof *v);
		if (!v)
			die("out of memory");
		l->v = v;
	}
	int64_t us = ns / 1000;
	l->v[l->n++] = us < 0 ? 0 : us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
	l->sorted = false;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The p-th percentile in milliseconds (nearest rank), 0 when empty. */
static double lat_ms(struct lat *l, double p)
{
	if (!l->n)
		return 0;
	if (!l->sorted) {
		qsort(l->v, l->n, sizeof *l->v, cmp_u32);
		l->sorted = true;
	}
	size_t i = (size_t)(p / 100.0 * (double)l->n);
	if (i >= l->n)
		i = l->n - 1;
	return l->v[i] / 1000.0;
}

static void lat_free(struct lat *l)
{
	free(l->v);
	memset(l, 0, sizeof *l);
}

/* ------------------------------------------------------------ processes */

/* utime+stime of a process in seconds from /proc/PID/stat, in clock ticks
   (10 ms), -1 if it is gone. */
static double proc_cpu_ticks_s(pid_t pid)
{
	char path[64], b[2048];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, b, sizeof b - 1);
	close(fd);
	if (n <= 0)
		return -1;
	b[n] = 0;
	char *p = strrchr(b, ')');
	if (!p)
		return -1;
	unsigned long long ut, st;
	/* fields 3..15: state ppid pgrp session tty tpgid flags minflt
	   cminflt majflt cmajflt utime stime */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
		   &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)clk_tck;
}

/* A process's CPU time in seconds (invariant 2): the sum of its threads'
   time on a CPU from /proc/PID/task/TID/schedstat, in nanoseconds; a
   window of 25,000 watch events at 8 us each is 20 clock ticks, so
   /proc/PID/stat's ticks alone moved the S3 figure in steps of 0.4 us.
   Falls back to the ticks where schedstat is not there; -1 if the process
   is gone. */
static double proc_cpu_s(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	unsigned long long ns = 0;
	bool ok = true;
	struct dirent *de;
	while (ok && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char p2[320], b[128];
		snprintf(p2, sizeof p2, "/proc/%d/task/%s/schedstat", (int)pid,
			 de->d_name);
		int fd = open(p2, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue; /* the thread ended meanwhile */
		ssize_t n = read(fd, b, sizeof b - 1);
		close(fd);
		unsigned long long t;
		if (n <= 0 || (b[n] = 0, sscanf(b, "%llu", &t) != 1))
			ok = false;
		else
			ns += t;
	}
	closedir(d);
	if (!ok)
		return proc_cpu_ticks_s(pid);
	return (double)ns / 1e9;
}

static double self_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* A field of /proc/PID/status in KiB (field with its colon, e.g.
   "VmRSS:"), -1 if the process is gone. */
static long proc_status_kb(pid_t pid, const char *field)
{
	char path[64], line[256];
	size_t fl = strlen(field);
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	long kb = -1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, field, fl)) {
			kb = atol(line + fl);
			break;
		}
	fclose(f);
	return kb;
}

/* VmRSS in KiB, -1 if the process is gone. */
static long proc_rss_kb(pid_t pid)
{
	return proc_status_kb(pid, "VmRSS:");
}

/* Wait until pid is quiet: RSS unchanged and under 10 ms of CPU over half a
   second. A restarted lapis loads its informer cache (every object of the
   store, decoded) for a second or more after it answers; an RSS baseline
   taken before that ends charges the cache to whatever is measured next.
   Returns the seconds waited, -1 if it never settled within 30 s. */
static double settle(pid_t pid)
{
	int64_t t0 = now_ns();
	long rss = proc_rss_kb(pid);
	double cpu = proc_cpu_s(pid);
	while (now_ns() - t0 < 30000000000LL) {
		sleep_ms(500);
		long rss1 = proc_rss_kb(pid);
		double cpu1 = proc_cpu_s(pid);
		if (rss1 == rss && cpu1 - cpu < 0.01)
			return (double)(now_ns() - t0) / 1e9;
		rss = rss1;
		cpu = cpu1;
	}
	return -1;
}

/* Start argv[0] (searched in PATH) with stdout and stderr in log. */
static pid_t spawn(char *const argv[], const char *log)
{
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM); /* invariant 6 */
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int nul = open("/dev/null", O_RDONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (nul >= 0)
			dup2(nul, 0);
		execvp(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

static void stop_child(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	for (int i = 0; i < 300; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return;
		sleep_ms(50);
	}
	fprintf(stderr, "bench-http: pid %d ignored SIGTERM for 15 s, killing\n",
		(int)pid);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static bool child_alive(pid_t pid)
{
	return waitpid(pid, NULL, WNOHANG) == 0;
}

static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) ||
	    getsockname(fd, (struct sockaddr *)&a, &al))
		die("cannot find a free port: %s", strerror(errno));
	close(fd);
	return ntohs(a.sin_port);
}

/* ------------------------------------------------------------ HTTP client */

enum hstate { HS_HEAD, HS_BODY, HS_CSIZE, HS_CDATA, HS_CCRLF, HS_TRAILER };

/* One keep-alive client connection and its response parser. */
struct hconn {
	int fd;
	int idx;
	struct buf out;		/* the request */
	size_t out_off;		/* bytes of out written */
	enum hstate st;
	int status;
	bool chunked;
	bool head_seen;
	uint64_t remain;	/* body or chunk bytes still to come */
	struct buf hdr;		/* the head, then chunk-size and trailer lines */
	struct buf body;	/* kept when keep_body */
	bool keep_body;
	uint64_t body_bytes;
	int64_t t_sent;
	bool busy;		/* a request is in flight */
	uint64_t rng;
	uint64_t seq;		/* generator state */
	char cont[1024];	/* LIST: the continue token or etcd start key */
	/* streams: each body line goes to on_line instead of body */
	void (*on_line)(struct hconn *c, const char *line, size_t n);
	void *ud;
	struct buf line;
	int n_events;
	bool closed;
};

static void hp_reset(struct hconn *c)
{
	c->st = HS_HEAD;
	c->status = 0;
	c->chunked = false;
	c->head_seen = false;
	c->remain = 0;
	c->body_bytes = 0;
	buf_clear(&c->hdr);
	buf_clear(&c->body);
}

static void hconn_free(struct hconn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	buf_free(&c->out);
	buf_free(&c->hdr);
	buf_free(&c->body);
	buf_free(&c->line);
}

static void body_data(struct hconn *c, const char *p, size_t n)
{
	c->body_bytes += n;
	if (c->on_line) {
		while (n) {
			const char *nl = memchr(p, '\n', n);
			if (!nl) {
				buf_add(&c->line, p, n);
				return;
			}
			size_t k = (size_t)(nl - p);
			if (c->line.len) {
				buf_add(&c->line, p, k);
				c->on_line(c, c->line.p, c->line.len);
				buf_clear(&c->line);
			} else {
				c->on_line(c, p, k);
			}
			p += k + 1;
			n -= k + 1;
		}
	} else if (c->keep_body) {
		buf_add(&c->body, p, n);
	}
}

/* Parse the head in c->hdr. Returns 1 if the response has no body, 0 if
   a body follows, -1 on a protocol error. */
static int parse_head(struct hconn *c)
{
	if (strncmp(c->hdr.p, "HTTP/1.", 7) || c->hdr.len < 12)
		return -1;
	c->status = atoi(c->hdr.p + 9);
	bool have_cl = false;
	uint64_t cl = 0;
	for (char *l = strstr(c->hdr.p, "\r\n"); l && l[2] != '\r';
	     l = strstr(l + 2, "\r\n")) {
		char *h = l + 2;
		if (!strncasecmp(h, "content-length:", 15)) {
			have_cl = true;
			cl = strtoull(h + 15, NULL, 10);
		} else if (!strncasecmp(h, "transfer-encoding:", 18)) {
			const char *v = h + 18;
			while (*v == ' ')
				v++;
			c->chunked = !strncasecmp(v, "chunked", 7);
		}
	}
	c->head_seen = true;
	buf_clear(&c->hdr);
	if (c->chunked) {
		c->st = HS_CSIZE;
		return 0;
	}
	if (have_cl && cl) {
		c->remain = cl;
		c->st = HS_BODY;
		return 0;
	}
	if (have_cl || c->status == 204 || c->status == 304 || c->status < 200)
		return 1;
	return -1; /* close-delimited bodies: no server here sends them */
}

/* Feed received bytes. Returns 1 when a response completed (*used bytes
   were consumed), 0 when more is needed, -1 on a protocol error. */
static int hp_feed(struct hconn *c, const char *p, size_t n, size_t *used)
{
	size_t i = 0;
	while (i < n) {
		switch (c->st) {
		case HS_HEAD: {
			size_t old = c->hdr.len;
			size_t from = old > 3 ? old - 3 : 0;
			buf_add(&c->hdr, p + i, n - i);
			char *e = memmem(c->hdr.p + from, c->hdr.len - from,
					 "\r\n\r\n", 4);
			if (!e) {
				i = n;
				break;
			}
			size_t head = (size_t)(e - c->hdr.p) + 4;
			i += head - old;
			c->hdr.len = head;
			c->hdr.p[head] = 0;
			int r = parse_head(c);
			if (r) {
				*used = i;
				return r;
			}
			break;
		}
		case HS_BODY:
		case HS_CDATA: {
			size_t k = n - i;
			if (k > c->remain)
				k = (size_t)c->remain;
			body_data(c, p + i, k);
			i += k;
			c->remain -= k;
			if (c->remain)
				break;
			if (c->st == HS_BODY) {
				*used = i;
				return 1;
			}
			c->st = HS_CCRLF;
			c->remain = 2;
			break;
		}
		case HS_CCRLF: {
			size_t k = n - i;
			if (k > c->remain)
				k = (size_t)c->remain;
			i += k;
			c->remain -= k;
			if (!c->remain)
				c->st = HS_CSIZE;
			break;
		}
		case HS_CSIZE:
		case HS_TRAILER: {
			const char *nl = memchr(p + i, '\n', n - i);
			size_t k = nl ? (size_t)(nl - (p + i)) + 1 : n - i;
			buf_add(&c->hdr, p + i, k);
			i += k;
			if (!nl)
				break;
			if (c->st == HS_CSIZE) {
				uint64_t sz = strtoull(c->hdr.p, NULL, 16);
				buf_clear(&c->hdr);
				if (sz) {
					c->remain = sz;
					c->st = HS_CDATA;
				} else {
					c->st = HS_TRAILER;
				}
			} else {
				bool last = c->hdr.len <= 2;
				buf_clear(&c->hdr);
				if (last) {
					*used = i;
					return 1;
				}
			}
			break;
		}
		}
	}
	*used = i;
	return 0;
}

static int tcp_connect(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static void req_build(struct buf *b, const char *method, const char *path,
		      const char *ctype, const void *body, size_t blen)
{
	buf_clear(b);
	buf_printf(b, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n",
		   method, path);
	if (ctype)
		buf_printf(b, "Content-Type: %s\r\nContent-Length: %zu\r\n",
			   ctype, blen);
	buf_add(b, "\r\n", 2);
	buf_add(b, body, blen);
}

/* Write what is left of c->out: 1 all written, 0 would block, -1 error. */
static int hc_flush(struct hconn *c)
{
	while (c->out_off < c->out.len) {
		ssize_t w = send(c->fd, c->out.p + c->out_off,
				 c->out.len - c->out_off, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
		}
		c->out_off += (size_t)w;
	}
	return 1;
}

/* One blocking request on c, connecting to port when needed; the body is
   in c->body. Returns the HTTP status, -1 when the server is unreachable. */
static int sreq(struct hconn *c, int port, const char *method, const char *path,
		const char *ctype, const void *body, size_t blen)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		if (c->fd < 0) {
			c->fd = tcp_connect(port);
			if (c->fd < 0)
				return -1;
		}
		req_build(&c->out, method, path, ctype, body, blen);
		c->out_off = 0;
		c->keep_body = true;
		hp_reset(c);
		if (hc_flush(c) == 1) {
			char rb[65536];
			for (;;) {
				ssize_t r = recv(c->fd, rb, sizeof rb, 0);
				if (r < 0 && errno == EINTR)
					continue;
				if (r <= 0)
					break;
				size_t used;
				int d = hp_feed(c, rb, (size_t)r, &used);
				if (d < 0)
					break;
				if (d == 1)
					return c->status;
			}
		}
		close(c->fd);
		c->fd = -1;
	}
	return -1;
}

/* ------------------------------------------------------------ load engine */

struct load;
/* Fill c->out with the next request; false: this connection is done. */
typedef bool (*load_gen)(struct load *L, struct hconn *c);
/* A 2xx response is in c (its body too when keep_body). */
typedef void (*load_resp)(struct load *L, struct hconn *c);

struct load {
	/* in */
	int port;
	int nconn;
	double warm, secs;	/* secs 0: until every generator says done */
	load_gen gen;
	load_resp resp;
	bool keep_body;
	pid_t srv;		/* whose CPU to count */
	bool sample_rss;
	uint64_t total;		/* generator limit, when secs is 0 */
	/* generator state */
	uint64_t next;
	uint64_t walks;		/* LIST: completed walks */
	/* out */
	uint64_t n, n_err;
	uint64_t bytes;
	double wall, rate, cpu_us, client_pct, p50, p99;
	long rss0, rss_max;
	char first_err[160];
	struct lat lat;
	/* run state */
	int ep;
	bool measuring, stopping;
};

static void ep_set(int ep, struct hconn *c, uint32_t evs, int op)
{
	struct epoll_event ev = {.events = evs, .data.ptr = c};
	epoll_ctl(ep, op, c->fd, &ev);
}

static bool load_connect(struct load *L, struct hconn *c)
{
	c->fd = tcp_connect(L->port);
	if (c->fd < 0)
		return false;
	set_nonblock(c->fd);
	ep_set(L->ep, c, EPOLLIN, EPOLL_CTL_ADD);
	return true;
}

static void load_send(struct load *L, struct hconn *c);

static void load_fail(struct load *L, struct hconn *c, const char *why)
{
	L->n_err++;
	if (!L->first_err[0])
		snprintf(L->first_err, sizeof L->first_err, "%s", why);
	epoll_ctl(L->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	if (L->n_err > 1000 || !load_connect(L, c)) {
		L->stopping = true; /* the server is gone: give up */
		c->busy = false;
		return;
	}
	if (c->busy && !L->stopping)
		load_send(L, c); /* the same request again */
	else
		c->busy = false;
}

static void load_send(struct load *L, struct hconn *c)
{
	hp_reset(c);
	c->keep_body = L->keep_body;
	c->out_off = 0;
	c->busy = true;
	c->t_sent = now_ns();
	int r = hc_flush(c);
	if (r == 0)
		ep_set(L->ep, c, EPOLLIN | EPOLLOUT, EPOLL_CTL_MOD);
	else if (r < 0)
		load_fail(L, c, "send failed");
}

static void load_issue(struct load *L, struct hconn *c)
{
	if (L->stopping || !L->gen(L, c)) {
		c->busy = false;
		return;
	}
	load_send(L, c);
}

static void load_done(struct load *L, struct hconn *c)
{
	int64_t t = now_ns();
	if (c->status >= 200 && c->status < 300) {
		if (L->measuring) {
			L->n++;
			L->bytes += c->body_bytes;
			lat_add(&L->lat, t - c->t_sent);
		}
		if (L->resp)
			L->resp(L, c);
	} else {
		L->n_err++;
		if (!L->first_err[0])
			snprintf(L->first_err, sizeof L->first_err, "HTTP %d: %.120s",
				 c->status, c->body.p ? c->body.p : "");
	}
	c->busy = false;
	load_issue(L, c);
}

/* Run one load; results in L. */
static void run_load(struct load *L)
{
	struct hconn *cs = xcalloc((size_t)L->nconn, sizeof *cs);
	L->ep = epoll_create1(EPOLL_CLOEXEC);
	L->n = L->n_err = L->bytes = 0;
	L->first_err[0] = 0;
	L->measuring = L->stopping = false;
	L->rss0 = L->rss_max = L->sample_rss ? proc_rss_kb(L->srv) : 0;
	lat_free(&L->lat);
	for (int i = 0; i < L->nconn; i++) {
		cs[i].idx = i;
		cs[i].rng = 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1);
		if (!load_connect(L, &cs[i]))
			die("cannot connect to 127.0.0.1:%d: %s", L->port,
			    strerror(errno));
	}
	int64_t t0 = now_ns(), tm0 = 0, tm1 = 0;
	int64_t warm_end = t0 + (int64_t)(L->warm * 1e9);
	double cpu0 = 0, cpu1 = 0, self0 = 0, self1 = 0;
	if (L->warm <= 0) {
		L->measuring = true;
		tm0 = t0;
		cpu0 = proc_cpu_s(L->srv);
		self0 = self_cpu_s();
	}
	for (int i = 0; i < L->nconn; i++)
		load_issue(L, &cs[i]);
	int64_t next_rss = t0;
	static char rb[256 * 1024];
	struct epoll_event evs[64];
	for (;;) {
		int busy = 0;
		for (int i = 0; i < L->nconn; i++)
			busy += cs[i].busy;
		int64_t t = now_ns();
		if (!L->measuring && !tm1 && t >= warm_end) {
			L->measuring = true;
			tm0 = t;
			cpu0 = proc_cpu_s(L->srv);
			self0 = self_cpu_s();
		}
		bool over = L->measuring && L->secs > 0 &&
			    t >= tm0 + (int64_t)(L->secs * 1e9);
		if ((over || !busy) && !tm1) {
			tm1 = t;
			cpu1 = proc_cpu_s(L->srv);
			self1 = self_cpu_s();
			L->stopping = true;
			L->measuring = false;
		}
		if (!busy || (tm1 && t > tm1 + 5000000000LL))
			break;
		if (L->sample_rss && t >= next_rss) {
			long kb = proc_rss_kb(L->srv);
			if (kb > L->rss_max)
				L->rss_max = kb;
			next_rss = t + 50000000;
		}
		int ne = epoll_wait(L->ep, evs, 64, 5);
		for (int e = 0; e < ne; e++) {
			struct hconn *c = evs[e].data.ptr;
			if (c->fd < 0)
				continue;
			if (evs[e].events & EPOLLOUT) {
				int r = hc_flush(c);
				if (r < 0) {
					load_fail(L, c, "send failed");
					continue;
				}
				if (r == 1)
					ep_set(L->ep, c, EPOLLIN, EPOLL_CTL_MOD);
			}
			if (!(evs[e].events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
				continue;
			ssize_t r = recv(c->fd, rb, sizeof rb, 0);
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (r <= 0) {
				load_fail(L, c, r ? "receive failed"
						  : "server closed the connection");
				continue;
			}
			size_t off = 0;
			while (off < (size_t)r && c->fd >= 0) {
				if (!c->busy) /* bytes nobody asked for */
					break;
				size_t used;
				int d = hp_feed(c, rb + off, (size_t)r - off, &used);
				off += used;
				if (d < 0) {
					load_fail(L, c, "bad response");
					break;
				}
				if (d == 0)
					break;
				load_done(L, c);
			}
		}
	}
	L->wall = (double)(tm1 - tm0) / 1e9;
	L->rate = L->wall > 0 ? (double)L->n / L->wall : 0;
	L->cpu_us = L->n ? (cpu1 - cpu0) * 1e6 / (double)L->n : 0;
	L->client_pct = L->wall > 0 ? (self1 - self0) * 100.0 / L->wall : 0;
	L->p50 = lat_ms(&L->lat, 50);
	L->p99 = lat_ms(&L->lat, 99);
	for (int i = 0; i < L->nconn; i++)
		hconn_free(&cs[i]);
	free(cs);
	close(L->ep);
}

/* ------------------------------------------------------------ dataset */

/* lapis's bytes for each object and page, and the etcd keys. */
static struct {
	int n;
	char **body;
	size_t *len;
	char **ekey;		/* base64 of /registry/configmaps/default/obj-N */
	char (*tok)[1024];	/* continue token that fetches page i ("" first) */
	char **page;
	size_t *page_len;
	int n_pages;
	char elist_first[128], elist_end[128];
} ds;

static void obj_name(char *b, size_t n, uint64_t i)
{
	snprintf(b, n, "obj-%05llu", (unsigned long long)i);
}

/* A ConfigMap of about 1 KiB once lapis adds uid, resourceVersion and
   creationTimestamp: four values of 190 letters that differ per object. */
static void obj_post_body(struct buf *b, uint64_t i, const char *name)
{
	buf_printf(b, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
		      "{\"name\":\"%s\",\"labels\":{\"app\":\"bench\",\"shard\":\"%llu\"}},"
		      "\"data\":{",
		   name, (unsigned long long)(i % 16));
	for (int k = 0; k < 4; k++) {
		char v[191];
		for (int j = 0; j < 190; j++)
			v[j] = (char)('a' + (i * 7 + (uint64_t)j * 3 + (uint64_t)k) % 26);
		v[190] = 0;
		buf_printf(b, "%s\"key%d\":\"%s\"", k ? "," : "", k, v);
	}
	buf_add(b, "}}", 2);
}

static bool gen_k8s_create(struct load *L, struct hconn *c)
{
	if (L->total && L->next >= L->total)
		return false;
	uint64_t i = L->next++;
	char name[64];
	struct buf body = {0};
	if (L->total)
		obj_name(name, sizeof name, i);
	else /* S4: fresh names */
		snprintf(name, sizeof name, "s4-%d-%07llu", L->nconn,
			 (unsigned long long)i);
	obj_post_body(&body, i, name);
	req_build(&c->out, "POST", COLL, "application/json", body.p, body.len);
	buf_free(&body);
	return true;
}

static bool gen_k8s_get_seq(struct load *L, struct hconn *c)
{
	if (L->next >= L->total)
		return false;
	c->seq = L->next++;
	char path[160], name[64];
	obj_name(name, sizeof name, c->seq);
	snprintf(path, sizeof path, COLL "/%s", name);
	req_build(&c->out, "GET", path, NULL, NULL, 0);
	return true;
}

static void resp_keep_body(struct load *L, struct hconn *c)
{
	(void)L;
	ds.body[c->seq] = xstrndup(c->body.p, c->body.len);
	ds.len[c->seq] = c->body.len;
}

static bool gen_k8s_get(struct load *L, struct hconn *c)
{
	(void)L;
	char path[160], name[64];
	obj_name(name, sizeof name, rng_next(&c->rng) % (uint64_t)ds.n);
	snprintf(path, sizeof path, COLL "/%s", name);
	req_build(&c->out, "GET", path, NULL, NULL, 0);
	return true;
}

static bool gen_k8s_list(struct load *L, struct hconn *c)
{
	(void)L;
	char path[1200];
	if (c->cont[0])
		snprintf(path, sizeof path, COLL "?limit=%d&continue=%s", PAGE,
			 c->cont);
	else
		snprintf(path, sizeof path, COLL "?limit=%d", PAGE);
	req_build(&c->out, "GET", path, NULL, NULL, 0);
	return true;
}

/* The continue token of a list body (in metadata, ahead of the items), or
   "" on the last page. */
static void k8s_continue(const char *body, size_t len, char *out, size_t n)
{
	out[0] = 0;
	size_t scan = len < 512 ? len : 512;
	const char *p = memmem(body, scan, "\"continue\":\"", 12);
	if (!p)
		return;
	p += 12;
	const char *e = memchr(p, '"', (size_t)(body + len - p));
	if (!e || (size_t)(e - p) >= n)
		return;
	memcpy(out, p, (size_t)(e - p));
	out[e - p] = 0;
}

static void resp_k8s_list(struct load *L, struct hconn *c)
{
	k8s_continue(c->body.p, c->body.len, c->cont, sizeof c->cont);
	if (!c->cont[0])
		L->walks++;
}

/* etcd: POST /v3/kv/range {key} -- what kube-apiserver sends for a GET
   (a linearizable read). */
static bool gen_etcd_get(struct load *L, struct hconn *c)
{
	(void)L;
	char body[200];
	int n = snprintf(body, sizeof body, "{\"key\":\"%s\"}",
			 ds.ekey[rng_next(&c->rng) % (uint64_t)ds.n]);
	req_build(&c->out, "POST", "/v3/kv/range", "application/json", body,
		  (size_t)n);
	return true;
}

static bool gen_etcd_list(struct load *L, struct hconn *c)
{
	(void)L;
	char body[1400];
	int n = snprintf(body, sizeof body,
			 "{\"key\":\"%s\",\"range_end\":\"%s\",\"limit\":%d}",
			 c->cont[0] ? c->cont : ds.elist_first, ds.elist_end, PAGE);
	req_build(&c->out, "POST", "/v3/kv/range", "application/json", body,
		  (size_t)n);
	return true;
}

/* Next page: start just after the last key returned, while "more". */
static void resp_etcd_list(struct load *L, struct hconn *c)
{
	const char *b = c->body.p;
	size_t len = c->body.len;
	size_t tail = len < 256 ? len : 256;
	bool more = memmem(b + len - tail, tail, "\"more\":true", 11) != NULL;
	const char *k = NULL;
	for (const char *p = b + len; p-- > b + 7;)
		if (!memcmp(p - 7, "\"key\":\"", 7)) {
			k = p;
			break;
		}
	c->cont[0] = 0;
	if (!more || !k) {
		L->walks++;
		return;
	}
	const char *e = memchr(k, '"', (size_t)(b + len - k));
	unsigned char key[600];
	if (!e || (size_t)(e - k) > 700)
		return;
	size_t kl = b64_dec(k, (size_t)(e - k), key);
	key[kl++] = 0; /* the smallest key after it */
	struct buf o = {0};
	b64_enc(&o, key, kl);
	if (o.len < sizeof c->cont)
		memcpy(c->cont, o.p, o.len + 1);
	buf_free(&o);
}

static bool gen_etcd_put(struct load *L, struct hconn *c)
{
	if (L->total && L->next >= L->total)
		return false;
	uint64_t i = L->next++;
	char key[128];
	if (L->total)
		snprintf(key, sizeof key, EPREFIX "obj-%05llu",
			 (unsigned long long)i);
	else
		snprintf(key, sizeof key, EPREFIX "s4-%d-%07llu", L->nconn,
			 (unsigned long long)i);
	struct buf body = {0};
	buf_add(&body, "{\"key\":\"", 8);
	b64_enc(&body, key, strlen(key));
	buf_add(&body, "\",\"value\":\"", 11);
	size_t oi = (size_t)(i % (uint64_t)ds.n);
	b64_enc(&body, ds.body[oi], ds.len[oi]);
	buf_add(&body, "\"}", 2);
	req_build(&c->out, "POST", "/v3/kv/put", "application/json", body.p,
		  body.len);
	buf_free(&body);
	return true;
}

/* ------------------------------------------------------------ bare responder */

/*
 * The bare responder: libmicrohttpd as lapis configures it, answering from
 * persistent buffers (invariant 4). It runs in a forked child; its tables
 * are the parent's ds, inherited copy-on-write and never written.
 *
 * Fan-out: each watch is a chunked response whose reader copies the events
 * it has not sent yet, or suspends the connection when there are none; a
 * POST /fire publishes its body as the next event and resumes every
 * suspended watch. bmu guards the event list and the watch list; the lock
 * order is MHD's response mutex (held around the reader), then bmu, then
 * MHD's internal suspend/resume lock.
 */
struct bwatch {
	struct MHD_Connection *conn;
	size_t sent;		/* events fully sent, under bmu */
	size_t off;		/* bytes of event[sent] sent, under bmu */
	bool suspended;		/* under bmu */
	struct bwatch *next, *prev; /* under bmu */
};

static pthread_mutex_t bmu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char *p;
	size_t len;
} bev[MAX_UPDATES];
static size_t bn_ev;
static struct bwatch bw_head = {.next = &bw_head, .prev = &bw_head};
static char bare_seen; /* con_cls of a GET between the two calls */

static enum MHD_Result bare_reply(struct MHD_Connection *conn, unsigned code,
				  const char *p, size_t n)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		n, (void *)p, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "Cache-Control", "no-cache, private");
	enum MHD_Result ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

static ssize_t bare_reader(void *cls, uint64_t pos, char *out, size_t max)
{
	(void)pos;
	struct bwatch *w = cls;
	size_t n = 0;
	pthread_mutex_lock(&bmu);
	while (w->sent < bn_ev && n < max) {
		size_t k = bev[w->sent].len - w->off;
		if (k > max - n)
			k = max - n;
		memcpy(out + n, bev[w->sent].p + w->off, k);
		n += k;
		w->off += k;
		if (w->off == bev[w->sent].len) {
			w->sent++;
			w->off = 0;
		}
	}
	if (!n) {
		w->suspended = true;
		MHD_suspend_connection(w->conn);
	}
	pthread_mutex_unlock(&bmu);
	return (ssize_t)n;
}

static void bare_wfree(void *cls)
{
	struct bwatch *w = cls;
	pthread_mutex_lock(&bmu);
	w->prev->next = w->next;
	w->next->prev = w->prev;
	pthread_mutex_unlock(&bmu);
	free(w);
}

static enum MHD_Result bare_watch(struct MHD_Connection *conn)
{
	struct bwatch *w = calloc(1, sizeof *w);
	if (!w)
		return MHD_NO;
	w->conn = conn;
	pthread_mutex_lock(&bmu);
	w->sent = bn_ev; /* from now on, as a watch from the current rv */
	w->next = &bw_head;
	w->prev = bw_head.prev;
	bw_head.prev->next = w;
	bw_head.prev = w;
	pthread_mutex_unlock(&bmu);
	struct MHD_Response *r = MHD_create_response_from_callback(
		MHD_SIZE_UNKNOWN, 64 * 1024, bare_reader, w, bare_wfree);
	if (!r) {
		bare_wfree(w);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "Cache-Control", "no-cache, private");
	enum MHD_Result ret = MHD_queue_response(conn, 200, r);
	MHD_destroy_response(r);
	return ret;
}

static void bare_fire(const char *p, size_t n)
{
	pthread_mutex_lock(&bmu);
	if (bn_ev < MAX_UPDATES) {
		bev[bn_ev].p = xstrndup(p, n);
		bev[bn_ev].len = n;
		bn_ev++;
	}
	for (struct bwatch *w = bw_head.next; w != &bw_head; w = w->next)
		if (w->suspended) {
			w->suspended = false;
			MHD_resume_connection(w->conn);
		}
	pthread_mutex_unlock(&bmu);
}

static enum MHD_Result bare_access(void *cls, struct MHD_Connection *conn,
				   const char *url, const char *method,
				   const char *version, const char *upload,
				   size_t *upload_size, void **con_cls)
{
	(void)cls;
	(void)version;
	if (!strcmp(method, "POST") && !strcmp(url, "/fire")) {
		struct buf *b = *con_cls;
		if (!b) {
			*con_cls = xcalloc(1, sizeof *b);
			return MHD_YES;
		}
		if (*upload_size) {
			buf_add(b, upload, *upload_size);
			*upload_size = 0;
			return MHD_YES;
		}
		bare_fire(b->p ? b->p : "", b->len);
		return bare_reply(conn, 200, "{}", 2);
	}
	/* Answer on the second call, as lapis does: libmicrohttpd closes the
	   connection after a response queued before the request is complete. */
	if (!*con_cls) {
		*con_cls = &bare_seen;
		return MHD_YES;
	}
	if (strcmp(method, "GET"))
		return bare_reply(conn, 405, "{}", 2);
	if (!strcmp(url, COLL)) {
		if (MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "watch"))
			return bare_watch(conn);
		const char *tok = MHD_lookup_connection_value(
			conn, MHD_GET_ARGUMENT_KIND, "continue");
		for (int i = 0; i < ds.n_pages; i++)
			if (!strcmp(ds.tok[i], tok ? tok : ""))
				return bare_reply(conn, 200, ds.page[i],
						  ds.page_len[i]);
		return bare_reply(conn, 410, "{}", 2);
	}
	if (!strncmp(url, COLL "/obj-", strlen(COLL) + 5)) {
		long i = atol(url + strlen(COLL) + 5);
		if (i >= 0 && i < ds.n && ds.body[i])
			return bare_reply(conn, 200, ds.body[i], ds.len[i]);
	}
	return bare_reply(conn, 404, "{}", 2);
}

static void bare_completed(void *cls, struct MHD_Connection *conn,
			   void **con_cls, enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)conn;
	(void)toe;
	struct buf *b = *con_cls;
	if (b && (void *)b != (void *)&bare_seen) {
		buf_free(b);
		free(b);
		*con_cls = NULL;
	}
}

static void bare_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	(void)fmt;
	(void)ap;
}


/* A listening TCP socket on 127.0.0.1 at a free port (*port), or -1. */
static int listen_loopback(int flags, int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);
	int one = 1;
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
	    bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 1024) ||
	    getsockname(fd, (struct sockaddr *)&a, &al)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* The child: serve until SIGTERM; the port goes up the pipe. */
static int bare_main(int wfd)
{
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	int port;
	int fd = listen_loopback(0, &port);
	if (fd < 0)
		return 1;
	/* the same flags and limits as lapis's server/http.c */
	struct MHD_Daemon *d = MHD_start_daemon(
		SRV_MHD_FLAGS, 0, NULL, NULL, bare_access, NULL,
		MHD_OPTION_THREAD_POOL_SIZE, n_cpus,
		MHD_OPTION_CONNECTION_LIMIT, SRV_MHD_CONNECTION_LIMIT,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, SRV_MHD_MEMORY_LIMIT,
		MHD_OPTION_CONNECTION_TIMEOUT, 120u,
		MHD_OPTION_NOTIFY_COMPLETED, bare_completed, NULL,
		MHD_OPTION_EXTERNAL_LOGGER, bare_log, NULL, MHD_OPTION_END);
	if (!d || !srv_acceptor_start(d, fd))
		return 1;
	if (write(wfd, &port, sizeof port) != sizeof port)
		return 1;
	close(wfd);
	int sig;
	sigwait(&stop, &sig);
	/* Suspended watches cannot be stopped cleanly; the process ends. */
	return 0;
}

/* Fork a child running fn(write end of a pipe), which sends its port up the
   pipe once it listens. */
static pid_t child_start(int (*fn)(int), const char *what, int *port)
{
	int p[2];
	if (pipe(p))
		die("pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(p[0]);
		_exit(fn(p[1]));
	}
	close(p[1]);
	if (read(p[0], port, sizeof *port) != sizeof *port)
		die("%s did not start", what);
	close(p[0]);
	return pid;
}

/* ------------------------------------------------------------ raw fan-out */

/*
 * The kernel's floor for S3: a child with no HTTP library and one thread.
 * It answers a watch GET with a chunked head and, on POST /fire, writes the
 * posted bytes as one chunk to every watch connection with one send() each.
 * Its CPU per delivered event is what a loopback TCP write of those bytes
 * costs on this machine with no server around it. Neither lapis nor the
 * bare responder can go below it, so etcd's CPU per event over this floor
 * is the most the etcd/lapis ratio can be here.
 */
#define RAW_MAX_FD 65536

struct rconn {
	bool watch;
	struct buf in;
};

/* The child's connections by descriptor; slots at hi and above are empty. */
static struct rconn **rconns;
static int rconns_hi;

/* Send all of p on a non-blocking socket, waiting while its buffer is full
   (which S3's rates never fill). Returns false if the peer went. */
static bool raw_send(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
		} else if (w < 0 && errno == EAGAIN) {
			sleep_ms(1);
		} else if (!(w < 0 && errno == EINTR)) {
			return false;
		}
	}
	return true;
}

/* Answer the complete requests buffered on fd. Returns false to close it. */
static bool raw_requests(int fd, struct buf *frame)
{
	static const char head200[] = "HTTP/1.1 200 OK\r\n"
				      "Content-Type: application/json\r\n"
				      "Transfer-Encoding: chunked\r\n\r\n";
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
	struct rconn *c = rconns[fd];
	while (c->in.len) {
		char *e = memmem(c->in.p, c->in.len, "\r\n\r\n", 4);
		if (!e)
			return true;
		size_t head = (size_t)(e - c->in.p) + 4, cl = 0;
		for (char *l = memmem(c->in.p, head, "\r\n", 2); l && l < e;
		     l = memmem(l + 2, (size_t)(e - l), "\r\n", 2))
			if (!strncasecmp(l + 2, "content-length:", 15))
				cl = strtoull(l + 17, NULL, 10);
		if (c->in.len < head + cl)
			return true;
		if (!strncmp(c->in.p, "POST /fire ", 11)) {
			buf_clear(frame);
			buf_printf(frame, "%zx\r\n", cl);
			buf_add(frame, c->in.p + head, cl);
			buf_add(frame, "\r\n", 2);
			for (int i = 0; i < rconns_hi; i++)
				if (rconns[i] && rconns[i]->watch)
					raw_send(i, frame->p, frame->len);
			if (!raw_send(fd, ok, sizeof ok - 1))
				return false;
		} else if (!strncmp(c->in.p, "GET ", 4)) {
			c->watch = true;
			if (!raw_send(fd, head200, sizeof head200 - 1))
				return false;
		} else {
			return false;
		}
		c->in.len -= head + cl;
		memmove(c->in.p, c->in.p + head + cl, c->in.len);
	}
	return true;
}

static void raw_accept(int ep, int ls)
{
	int c;
	while ((c = accept4(ls, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct epoll_event ev = {.events = EPOLLIN, .data.fd = c};
		if (c >= RAW_MAX_FD || epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev)) {
			close(c);
			continue;
		}
		rconns[c] = xcalloc(1, sizeof **rconns);
		if (c >= rconns_hi)
			rconns_hi = c + 1;
	}
}

/* The child: serve until SIGTERM; the port goes up the pipe. */
static int raw_main(int wfd)
{
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	int port;
	int ls = listen_loopback(SOCK_NONBLOCK, &port);
	if (ls < 0)
		return 1;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = ls};
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev))
		return 1;
	rconns = xcalloc(RAW_MAX_FD, sizeof *rconns);
	struct buf frame = {0};
	if (write(wfd, &port, sizeof port) != sizeof port)
		return 1;
	close(wfd);
	static char rb[64 * 1024];
	for (;;) {
		struct epoll_event evs[256];
		int ne = epoll_wait(ep, evs, 256, -1);
		for (int i = 0; i < ne; i++) {
			int fd = evs[i].data.fd;
			if (fd == ls) {
				raw_accept(ep, ls);
				continue;
			}
			ssize_t r = recv(fd, rb, sizeof rb, 0);
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (r > 0)
				buf_add(&rconns[fd]->in, rb, (size_t)r);
			if (r <= 0 || !raw_requests(fd, &frame)) {
				epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
				close(fd);
				buf_free(&rconns[fd]->in);
				free(rconns[fd]);
				rconns[fd] = NULL;
			}
		}
	}
}

/* ------------------------------------------------------------ servers */

struct server {
	const char *name;
	pid_t pid;
	int port;
};

static bool file_has(const char *path, const char *needle, char *line, size_t n)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool found = false;
	while (fgets(line, (int)n, f))
		if (strstr(line, needle)) {
			found = true;
			break;
		}
	fclose(f);
	return found;
}

/* Start lapis on the data directory, with --compaction-interval compaction
   unless NULL; false if it did not come up. */
static bool lapis_start_opts(struct server *s, const char *datadir, bool tls,
			     bool nosync, const char *compaction,
			     const char *log)
{
	char *argv[12];
	int a = 0;
	argv[a++] = (char *)cfg.lapis;
	argv[a++] = "serve";
	argv[a++] = "--data-dir";
	argv[a++] = (char *)datadir;
	argv[a++] = "--listen";
	argv[a++] = "127.0.0.1:0";
	if (!tls)
		argv[a++] = "--insecure-http";
	if (nosync)
		argv[a++] = "--nosync";
	if (compaction) {
		argv[a++] = "--compaction-interval";
		argv[a++] = (char *)compaction;
	}
	argv[a] = NULL;
	s->name = "lapis";
	s->pid = spawn(argv, log);
	char line[1024];
	const char *needle = tls ? "lapis: serving https://127.0.0.1:"
				 : "lapis: serving http://127.0.0.1:";
	for (int i = 0; i < 600; i++) {
		if (file_has(log, needle, line, sizeof line)) {
			s->port = atoi(strstr(line, needle) + strlen(needle));
			return true;
		}
		if (!child_alive(s->pid))
			break;
		sleep_ms(50);
	}
	fprintf(stderr, "bench-http: lapis did not start; see %s\n", log);
	stop_child(s->pid);
	s->pid = 0;
	return false;
}

static bool lapis_start(struct server *s, const char *datadir, bool tls,
			bool nosync, const char *log)
{
	return lapis_start_opts(s, datadir, tls, nosync, NULL, log);
}

static bool etcd_start(struct server *s, const char *datadir, const char *log)
{
	int cport = free_port(), pport = free_port();
	char curl_[64], purl[64], cluster[96];
	snprintf(curl_, sizeof curl_, "http://127.0.0.1:%d", cport);
	snprintf(purl, sizeof purl, "http://127.0.0.1:%d", pport);
	snprintf(cluster, sizeof cluster, "bench=%s", purl);
	char *argv[] = {(char *)cfg.etcd, "--name", "bench", "--data-dir",
			(char *)datadir, "--listen-client-urls", curl_,
			"--advertise-client-urls", curl_, "--listen-peer-urls",
			purl, "--initial-advertise-peer-urls", purl,
			"--initial-cluster", cluster, "--logger", "zap",
			"--log-level", "warn", NULL};
	s->name = "etcd";
	s->pid = spawn(argv, log);
	s->port = cport;
	struct hconn c = {.fd = -1};
	for (int i = 0; i < 300; i++) {
		sleep_ms(100);
		if (!child_alive(s->pid))
			break;
		if (sreq(&c, cport, "POST", "/v3/kv/range", "application/json",
			 "{\"key\":\"AA==\"}", 14) == 200) {
			hconn_free(&c);
			return true;
		}
	}
	hconn_free(&c);
	fprintf(stderr, "bench-http: etcd did not start; see %s\n", log);
	stop_child(s->pid);
	s->pid = 0;
	return false;
}

static long long json_ll(const char *body, const char *field)
{
	const char *p = strstr(body, field);
	if (!p)
		return -1;
	p += strlen(field);
	while (*p == '"' || *p == ':' || *p == ' ')
		p++;
	return atoll(p);
}

/* ------------------------------------------------------------ reporting */

static void target(const char *what, double got, double want, bool at_least)
{
	bool met = at_least ? got >= want : got <= want;
	printf("    %-58s %7.2f  target %s %.2f: %s", what, got,
	       at_least ? ">=" : "<=", want, met ? "met" : "MISSED");
	if (!met)
		printf(" (by %.0f%%)", at_least ? (1 - got / want) * 100
						: (got / want - 1) * 100);
	printf("\n");
}

static void row_head(const char *unit)
{
	printf("  %-13s %5s %10s %8s %8s %14s %10s %9s %6s\n", "server",
	       "conns", unit, "p50 ms", "p99 ms", "srv CPU us/op", "bytes/op",
	       "client%", "errors");
}

static void row(const char *name, int conns, const struct load *L)
{
	printf("  %-13s %5d %10.0f %8.2f %8.2f %14.1f %10.0f %8.0f%% %6llu\n",
	       name, conns, L->rate, L->p50, L->p99, L->cpu_us,
	       L->n ? (double)L->bytes / (double)L->n : 0, L->client_pct,
	       (unsigned long long)L->n_err);
	if (L->first_err[0])
		printf("    first error: %s\n", L->first_err);
}

static void bare_config(void)
{
	printf("  bare = libmicrohttpd %s in a child process, flags "
	       "INTERNAL_POLLING_THREAD|EPOLL|ALLOW_SUSPEND_RESUME|ITC|ERROR_LOG|"
	       "NO_LISTEN_SOCKET, each connection accepted by a thread of its "
	       "own (server/acceptor.c, as lapis), "
	       "thread pool %u (nproc, as lapis), connection limit %u, memory "
	       "limit %zu KiB (server/http_daemon.h, as lapis), timeout 120 s; "
	       "answers from MHD_RESPMEM_PERSISTENT buffers holding lapis's "
	       "bytes, with lapis's headers (Content-Type, Cache-Control)\n",
	       MHD_get_version(), n_cpus, SRV_MHD_CONNECTION_LIMIT,
	       SRV_MHD_MEMORY_LIMIT / 1024);
}

/* Keep the better of two runs of the same thing (invariant 5). */
static void keep_best(struct load *best, struct load *run, bool *have)
{
	if (!*have || run->rate > best->rate) {
		lat_free(&best->lat);
		*best = *run;
		run->lat = (struct lat){0};
		*have = true;
	}
	lat_free(&run->lat);
}

static int cmp_double(const void *a, const void *b);

/* The median of v[0..n) (sorts v); 0 when n is 0. */
static double median(double *v, int n)
{
	if (n == 0)
		return 0;
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ------------------------------------------------------------ S1, S2 */

enum srv_kind { K_LAPIS, K_BARE, K_ETCD, K_N };
static const char *const kind_name[K_N] = {"lapis", "bare", "etcd"};

struct phase_a {
	struct server srv[K_N];
	bool have_etcd;
};

static void run_grid(struct phase_a *A, const char *title, const char *unit,
		     load_gen gk8s, load_resp rk8s, load_gen getcd,
		     load_resp retcd, bool keep_body, bool list)
{
	static const int conns[] = {1, 4, 16};
	struct load best[3][K_N];
	memset(best, 0, sizeof best);
	/* per round, lapis/bare: throughput and CPU per request */
	enum { PAIRS_MAX = 64 };
	double pair_rate[3][PAIRS_MAX], pair_cpu[3][PAIRS_MAX];
	int n_pair[3] = {0};
	printf("\n%s\n", title);
	printf("  %.1f s per run after %.1f s warm-up, best of %d rounds, servers "
	       "alternating\n",
	       cfg.secs, cfg.warm, cfg.rounds);
	bare_config();
	row_head(unit);
	for (int ci = 0; ci < 3; ci++) {
		bool have[K_N] = {false};
		for (int r = 0; r < cfg.rounds; r++) {
			double rate[K_N] = {0}, cpu[K_N] = {0};
			for (int k = 0; k < K_N; k++) {
				if (k == K_ETCD && !A->have_etcd)
					continue;
				struct load L = {
					.port = A->srv[k].port,
					.nconn = conns[ci],
					.warm = cfg.warm,
					.secs = cfg.secs,
					.gen = k == K_ETCD ? getcd : gk8s,
					.resp = k == K_ETCD ? retcd : rk8s,
					.keep_body = keep_body,
					.srv = A->srv[k].pid,
					.sample_rss = list && k == K_LAPIS &&
						      conns[ci] == 16,
				};
				run_load(&L);
				rate[k] = L.rate;
				cpu[k] = L.cpu_us;
				keep_best(&best[ci][k], &L, &have[k]);
			}
			int np = n_pair[ci];
			if (rate[K_BARE] > 0 && cpu[K_BARE] > 0 && np < PAIRS_MAX) {
				pair_rate[ci][np] = rate[K_LAPIS] / rate[K_BARE];
				pair_cpu[ci][np] = cpu[K_LAPIS] / cpu[K_BARE];
				n_pair[ci]++;
			}
		}
		for (int k = 0; k < K_N; k++)
			if (have[k])
				row(kind_name[k], conns[ci], &best[ci][k]);
	}
	printf("  ratios and targets (issue 3):\n");
	for (int ci = 0; ci < 3; ci++) {
		struct load *l = &best[ci][K_LAPIS], *b = &best[ci][K_BARE],
			    *e = &best[ci][K_ETCD];
		char what[128];
		if (!list) {
			snprintf(what, sizeof what, "%2d conn: lapis/bare req/s",
				 conns[ci]);
			target(what, l->rate / b->rate, 0.9, true);
			snprintf(what, sizeof what, "%2d conn: lapis/bare CPU per request",
				 conns[ci]);
			target(what, l->cpu_us / b->cpu_us, 1.2, false);
			if (A->have_etcd) {
				snprintf(what, sizeof what, "%2d conn: lapis/etcd req/s",
					 conns[ci]);
				if (conns[ci] == 1)
					target(what, l->rate / e->rate, 2.0, true);
				else
					printf("    %-58s %7.2f\n", what,
					       l->rate / e->rate);
			}
		} else {
			snprintf(what, sizeof what, "%2d conn: lapis/bare CPU per page",
				 conns[ci]);
			target(what, l->cpu_us / b->cpu_us, 2.5, false);
			snprintf(what, sizeof what, "%2d conn: lapis/bare pages/s",
				 conns[ci]);
			printf("    %-58s %7.2f\n", what, l->rate / b->rate);
			if (A->have_etcd) {
				snprintf(what, sizeof what, "%2d conn: lapis/etcd pages/s",
					 conns[ci]);
				if (conns[ci] == 4)
					target(what, l->rate / e->rate, 10.0, true);
				else
					printf("    %-58s %7.2f\n", what,
					       l->rate / e->rate);
				snprintf(what, sizeof what,
					 "%2d conn: etcd/lapis CPU per page", conns[ci]);
				printf("    %-58s %7.2f\n", what, e->cpu_us / l->cpu_us);
			}
			if (conns[ci] == 16)
				printf("    lapis RSS during 16 concurrent lists: %ld KiB "
				       "before, %ld KiB peak (+%ld KiB, %.1f pages of "
				       "%.0f KiB in flight)\n",
				       l->rss0, l->rss_max, l->rss_max - l->rss0, 16.0,
				       l->n ? (double)l->bytes / (double)l->n / 1024 : 0);
		}
	}
	printf("  median over the %d rounds of each round's lapis/bare ratio "
	       "(run back to back):\n",
	       cfg.rounds);
	for (int ci = 0; ci < 3; ci++) {
		char what[128];
		double mr = median(pair_rate[ci], n_pair[ci]),
		       mc = median(pair_cpu[ci], n_pair[ci]);
		snprintf(what, sizeof what, "%2d conn: lapis/bare %s, paired median",
			 conns[ci], list ? "pages/s" : "req/s");
		if (list)
			printf("    %-58s %7.2f\n", what, mr);
		else
			target(what, mr, 0.9, true);
		snprintf(what, sizeof what, "%2d conn: lapis/bare CPU per %s, paired median",
			 conns[ci], list ? "page" : "request");
		target(what, mc, list ? 2.5 : 1.2, false);
	}
	for (int ci = 0; ci < 3; ci++)
		for (int k = 0; k < K_N; k++)
			lat_free(&best[ci][k].lat);
}

/* ------------------------------------------------------------ S3 */

struct s3 {
	const char *name;
	int port;
	pid_t srv;
	int n;			/* watchers */
	int k;			/* updates */
	double interval;	/* seconds between updates */
	void (*watch_req)(struct s3 *s, struct buf *out);
	int (*update)(struct s3 *s, struct hconn *sc, int k);
	int (*events_in)(const char *line, size_t n);
	_Atomic int64_t send_ns[MAX_UPDATES];
	struct lat lat;
	uint64_t delivered, stray;
	bool capture;		/* keep watcher 0's event lines */
	/* out */
	double mem_kb, cpu_us, p50, p99, max_ms;
	double settle_s; /* waited for the server to be quiet, -1: never */
	int complete, heads, closed;
	uint64_t expected;
	bool updates_ok;
};

/* Events lapis sent to watcher 0: the bytes the bare responder fans out. */
static struct buf lapis_events[MAX_UPDATES];
static int n_lapis_events;
static long long watch_rv;
static long long etcd_rev;

static void s3_line(struct hconn *c, const char *line, size_t n)
{
	struct s3 *s = c->ud;
	int ev = s->events_in(line, n);
	if (ev < 0) {
		fprintf(stderr, "bench-http: %s watch %d: %.200s\n", s->name,
			c->idx, line);
		return;
	}
	int64_t t = now_ns();
	for (int e = 0; e < ev; e++) {
		int i = c->n_events++;
		if (i >= s->k) {
			s->stray++;
			continue;
		}
		int64_t sent = atomic_load_explicit(&s->send_ns[i],
						    memory_order_acquire);
		if (sent)
			lat_add(&s->lat, t - sent);
		s->delivered++;
		if (s->capture && c->idx == 0) {
			buf_add(&lapis_events[i], line, n);
			buf_add(&lapis_events[i], "\n", 1);
			n_lapis_events = i + 1;
		}
	}
}

static void *s3_updater(void *arg)
{
	struct s3 *s = arg;
	struct hconn sc = {.fd = -1};
	int64_t start = now_ns();
	s->updates_ok = true;
	for (int i = 0; i < s->k; i++) {
		int64_t at = start + (int64_t)((double)i * s->interval * 1e9);
		int64_t wait = at - now_ns();
		if (wait > 0)
			sleep_ms((long)(wait / 1000000));
		atomic_store_explicit(&s->send_ns[i], now_ns(),
				      memory_order_release);
		int st = s->update(s, &sc, i);
		if (st < 200 || st >= 300) {
			fprintf(stderr, "bench-http: %s update %d: HTTP %d %.200s\n",
				s->name, i, st, sc.body.p ? sc.body.p : "");
			s->updates_ok = false;
		}
	}
	hconn_free(&sc);
	return NULL;
}

static void s3_pump(int ep, struct hconn *cs, struct s3 *s, int timeout_ms)
{
	static char rb[64 * 1024];
	struct epoll_event evs[256];
	int ne = epoll_wait(ep, evs, 256, timeout_ms);
	for (int e = 0; e < ne; e++) {
		struct hconn *c = evs[e].data.ptr;
		if (c->closed)
			continue;
		ssize_t r = recv(c->fd, rb, sizeof rb, 0);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r <= 0) {
			c->closed = true;
			s->closed++;
			epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
			continue;
		}
		size_t off = 0;
		while (off < (size_t)r) {
			bool had = c->head_seen;
			size_t used;
			int d = hp_feed(c, rb + off, (size_t)r - off, &used);
			off += used;
			if (!had && c->head_seen)
				s->heads++;
			if (d != 0) { /* the stream ended or broke */
				c->closed = true;
				s->closed++;
				epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
				break;
			}
		}
	}
	(void)cs;
}

static void run_s3(struct s3 *s)
{
	struct hconn *cs = xcalloc((size_t)s->n, sizeof *cs);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	s->settle_s = settle(s->srv);
	long rss0 = proc_rss_kb(s->srv);
	struct buf req = {0};
	s->watch_req(s, &req);
	for (int i = 0; i < s->n; i++) {
		struct hconn *c = &cs[i];
		c->idx = i;
		c->ud = s;
		c->on_line = s3_line;
		c->fd = tcp_connect(s->port);
		if (c->fd < 0)
			die("%s: watch connection %d: %s", s->name, i,
			    strerror(errno));
		hp_reset(c);
		if (send(c->fd, req.p, req.len, MSG_NOSIGNAL) != (ssize_t)req.len)
			die("%s: cannot send watch %d", s->name, i);
		set_nonblock(c->fd);
		ep_set(ep, c, EPOLLIN, EPOLL_CTL_ADD);
		if (i % 64 == 63)
			s3_pump(ep, cs, s, 0);
	}
	buf_free(&req);
	/* Every watch answered, then a second to settle: idle watchers. */
	int64_t t_end = now_ns() + 10000000000LL;
	while (s->heads < s->n && now_ns() < t_end)
		s3_pump(ep, cs, s, 10);
	t_end = now_ns() + 1000000000LL;
	while (now_ns() < t_end)
		s3_pump(ep, cs, s, 10);
	long rss1 = proc_rss_kb(s->srv);
	s->mem_kb = (double)(rss1 - rss0) * 1.024 / s->n; /* KB */
	double cpu0 = proc_cpu_s(s->srv);
	pthread_t th;
	if (pthread_create(&th, NULL, s3_updater, s))
		die("pthread_create");
	s->expected = (uint64_t)s->n * (uint64_t)s->k;
	int64_t deadline = now_ns() +
			   (int64_t)(((double)s->k * s->interval + 5.0) * 1e9);
	while (s->delivered < s->expected && now_ns() < deadline)
		s3_pump(ep, cs, s, 10);
	pthread_join(th, NULL);
	double cpu1 = proc_cpu_s(s->srv);
	s->cpu_us = s->delivered ? (cpu1 - cpu0) * 1e6 / (double)s->delivered : 0;
	s->complete = 0;
	for (int i = 0; i < s->n; i++)
		s->complete += cs[i].n_events >= s->k;
	s->p50 = lat_ms(&s->lat, 50);
	s->p99 = lat_ms(&s->lat, 99);
	s->max_ms = lat_ms(&s->lat, 100);
	for (int i = 0; i < s->n; i++)
		hconn_free(&cs[i]);
	free(cs);
	close(ep);
}

static void k8s_watch_req(struct s3 *s, struct buf *out)
{
	(void)s;
	char path[200];
	snprintf(path, sizeof path, COLL "?watch=1&resourceVersion=%lld",
		 watch_rv);
	req_build(out, "GET", path, NULL, NULL, 0);
}

static int k8s_events_in(const char *line, size_t n)
{
	if (n > 20 && (!strncmp(line, "{\"type\":\"MODIFIED\"", 18) ||
		       !strncmp(line, "{\"type\":\"ADDED\"", 15)))
		return 1;
	if (n > 20 && !strncmp(line, "{\"type\":\"BOOKMARK\"", 18))
		return 0;
	return -1;
}

static int lapis_update(struct s3 *s, struct hconn *sc, int k)
{
	char body[128];
	int n = snprintf(body, sizeof body, "{\"data\":{\"seq\":\"%d\"}}", k);
	return sreq(sc, s->port, "PATCH", COLL "/obj-00000",
		    "application/merge-patch+json", body, (size_t)n);
}

static int bare_update(struct s3 *s, struct hconn *sc, int k)
{
	const struct buf *ev = &lapis_events[k % n_lapis_events];
	return sreq(sc, s->port, "POST", "/fire", "application/json", ev->p,
		    ev->len);
}

static void etcd_watch_req(struct s3 *s, struct buf *out)
{
	(void)s;
	char body[300];
	int n = snprintf(body, sizeof body,
			 "{\"create_request\":{\"key\":\"%s\",\"range_end\":\"%s\","
			 "\"start_revision\":%lld}}",
			 ds.elist_first, ds.elist_end, etcd_rev + 1);
	req_build(out, "POST", "/v3/watch", "application/json", body, (size_t)n);
}

static int etcd_events_in(const char *line, size_t n)
{
	int ev = 0;
	for (const char *p = line; (p = memmem(p, (size_t)(line + n - p),
					       "\"kv\":", 5)); p += 5)
		ev++;
	if (!ev && !memmem(line, n, "\"result\"", 8))
		return -1;
	return ev;
}

static int etcd_update(struct s3 *s, struct hconn *sc, int k)
{
	(void)k;
	struct buf body = {0};
	buf_printf(&body, "{\"key\":\"%s\",\"value\":\"", ds.ekey[0]);
	b64_enc(&body, ds.body[0], ds.len[0]);
	buf_add(&body, "\"}", 2);
	int st = sreq(sc, s->port, "POST", "/v3/kv/put", "application/json",
		      body.p, body.len);
	buf_free(&body);
	return st;
}

static void s3_row(const struct s3 *s, int round)
{
	printf("  %-6s %5d %8d %5d %9llu/%-9llu %8d %8.2f %8.2f %8.2f %10.1f %10.1f %7.1f\n",
	       s->name, round, s->n, s->k, (unsigned long long)s->delivered,
	       (unsigned long long)s->expected, s->complete, s->p50, s->p99,
	       s->max_ms, s->cpu_us, s->mem_kb, s->settle_s);
	if (s->closed || s->stray || !s->updates_ok || s->heads < s->n)
		printf("    (%d of %d watches answered, %d ended early, %llu "
		       "events past the last update, updates %s)\n",
		       s->heads, s->n, s->closed, (unsigned long long)s->stray,
		       s->updates_ok ? "ok" : "FAILED");
}

/* ------------------------------------------------------------ TLS (libcurl) */

struct curl_run {
	char base[128];
	const char *ca;		/* NULL: plain HTTP */
	char auth[300];
	_Atomic int phase;	/* 0 warm-up, 1 measured, 2 stop */
	pthread_mutex_t mu;
	uint64_t n, err;
	struct lat lat;
};

struct curl_worker {
	struct curl_run *r;
	int idx;
	pthread_t th;
};

static size_t curl_sink(char *p, size_t sz, size_t nm, void *ud)
{
	(void)p;
	*(size_t *)ud += sz * nm;
	return sz * nm;
}

static void *curl_main(void *arg)
{
	struct curl_worker *w = arg;
	struct curl_run *r = w->r;
	CURL *h = curl_easy_init();
	struct curl_slist *hs = curl_slist_append(NULL, "Accept: application/json");
	hs = curl_slist_append(hs, r->auth);
	size_t got = 0;
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hs);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, curl_sink);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &got);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	if (r->ca)
		curl_easy_setopt(h, CURLOPT_CAINFO, r->ca);
	uint64_t rng = 0x9E3779B97F4A7C15ULL * (uint64_t)(w->idx + 1);
	struct lat lat = {0};
	uint64_t n = 0, err = 0;
	int ph;
	while ((ph = atomic_load(&r->phase)) < 2) {
		char url[256];
		snprintf(url, sizeof url, "%s" COLL "/obj-%05llu", r->base,
			 (unsigned long long)(rng_next(&rng) % (uint64_t)ds.n));
		curl_easy_setopt(h, CURLOPT_URL, url);
		int64_t t = now_ns();
		CURLcode cc = curl_easy_perform(h);
		long code = 0;
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		if (ph != 1 || atomic_load(&r->phase) != 1)
			continue;
		if (cc != CURLE_OK || code != 200) {
			if (!err)
				fprintf(stderr, "bench-http: curl: %s, HTTP %ld\n",
					curl_easy_strerror(cc), code);
			err++;
			continue;
		}
		n++;
		lat_add(&lat, now_ns() - t);
	}
	pthread_mutex_lock(&r->mu);
	r->n += n;
	r->err += err;
	for (size_t i = 0; i < lat.n; i++)
		lat_add(&r->lat, (int64_t)lat.v[i] * 1000);
	pthread_mutex_unlock(&r->mu);
	lat_free(&lat);
	curl_slist_free_all(hs);
	curl_easy_cleanup(h);
	return NULL;
}

/* S1 GET through libcurl: nthreads easy handles, one per connection. */
static void run_curl(struct curl_run *r, int nthreads, pid_t srv, struct load *out)
{
	struct curl_worker ws[MAX_CONNS];
	pthread_mutex_init(&r->mu, NULL);
	atomic_store(&r->phase, 0);
	for (int i = 0; i < nthreads; i++) {
		ws[i].r = r;
		ws[i].idx = i;
		if (pthread_create(&ws[i].th, NULL, curl_main, &ws[i]))
			die("pthread_create");
	}
	sleep_ms((long)(cfg.warm * 1000));
	double cpu0 = proc_cpu_s(srv), self0 = self_cpu_s();
	int64_t t0 = now_ns();
	atomic_store(&r->phase, 1);
	sleep_ms((long)(cfg.secs * 1000));
	atomic_store(&r->phase, 2);
	int64_t t1 = now_ns();
	double cpu1 = proc_cpu_s(srv), self1 = self_cpu_s();
	for (int i = 0; i < nthreads; i++)
		pthread_join(ws[i].th, NULL);
	memset(out, 0, sizeof *out);
	out->n = r->n;
	out->n_err = r->err;
	out->wall = (double)(t1 - t0) / 1e9;
	out->rate = (double)r->n / out->wall;
	out->cpu_us = r->n ? (cpu1 - cpu0) * 1e6 / (double)r->n : 0;
	out->client_pct = (self1 - self0) * 100 / out->wall;
	out->p50 = lat_ms(&r->lat, 50);
	out->p99 = lat_ms(&r->lat, 99);
	lat_free(&r->lat);
	pthread_mutex_destroy(&r->mu);
}

/* ------------------------------------------------------------ S4 raw LMDB */

/* The raw LMDB side of S4: an environment on the same filesystem as
   lapis's store, preloaded with the dataset in one commit so that, like
   lapis's store, it reuses freed pages instead of growing the file at every
   commit (growing costs a journal commit per fdatasync on ext4). */
struct raw_env {
	MDB_env *env;
	MDB_dbi dbi;
	uint64_t next; /* key counter across rounds */
};

static void raw_open(struct raw_env *r, const char *dir)
{
	MDB_txn *txn;
	mkdir(dir, 0755);
	if (mdb_env_create(&r->env) ||
	    mdb_env_set_mapsize(r->env, (size_t)1 << 30) ||
	    mdb_env_open(r->env, dir, 0, 0644))
		die("raw LMDB: cannot open %s", dir);
	if (mdb_txn_begin(r->env, NULL, 0, &txn) ||
	    mdb_dbi_open(txn, NULL, 0, &r->dbi))
		die("raw LMDB: cannot open the database");
	for (int i = 0; i < ds.n; i++) {
		char k[64];
		int kl = snprintf(k, sizeof k, EPREFIX "obj-%05d", i);
		MDB_val key = {(size_t)kl, k}, val = {ds.len[i], ds.body[i]};
		if (mdb_put(txn, r->dbi, &key, &val, 0))
			die("raw LMDB: preload failed");
	}
	if (mdb_txn_commit(txn))
		die("raw LMDB: preload commit failed");
}

/* One synced commit per put with LMDB's default flags: warm-up, then
   cfg.secs measured. */
static void raw_run(struct raw_env *r, struct load *out)
{
	memset(out, 0, sizeof *out);
	int64_t t0 = now_ns(), t, tm0 = t0 + (int64_t)(cfg.warm * 1e9);
	int64_t t_end = tm0 + (int64_t)(cfg.secs * 1e9);
	double self0 = 0;
	bool measuring = false;
	while ((t = now_ns()) < t_end) {
		if (!measuring && t >= tm0) {
			measuring = true;
			tm0 = t;
			self0 = self_cpu_s();
		}
		char k[64];
		uint64_t i = r->next++;
		int kl = snprintf(k, sizeof k, EPREFIX "raw-%08llu",
				  (unsigned long long)i);
		size_t oi = (size_t)(i % (uint64_t)ds.n);
		MDB_val key = {(size_t)kl, k}, val = {ds.len[oi], ds.body[oi]};
		MDB_txn *txn;
		if (mdb_txn_begin(r->env, NULL, 0, &txn) ||
		    mdb_put(txn, r->dbi, &key, &val, 0) || mdb_txn_commit(txn))
			die("raw LMDB: put failed");
		if (measuring) {
			lat_add(&out->lat, now_ns() - t);
			out->n++;
		}
	}
	out->wall = (double)(now_ns() - tm0) / 1e9;
	out->rate = (double)out->n / out->wall;
	double cpu = self_cpu_s() - self0;
	out->client_pct = cpu * 100 / out->wall;
	out->cpu_us = out->n ? cpu * 1e6 / (double)out->n : 0;
	out->p50 = lat_ms(&out->lat, 50);
	out->p99 = lat_ms(&out->lat, 99);
}

/* ------------------------------------------------------------ S5 */

/*
 * S5 endurance: one durable lapis (fsync per commit group, what users run)
 * with the compactor at --compaction-interval cfg.s5_compact_s, the dataset
 * created fresh, then for cfg.s5_minutes:
 *  - writes at a fixed rate (open loop, cfg.s5_rate a second over
 *    S5_WRITE_CONNS connections), alternately a merge PATCH of one data value
 *    and a PUT of the whole object (no resourceVersion: unconditional), each
 *    to a random object, every value the same length: the object count and
 *    sizes stay constant, only history accumulates. A write's latency runs
 *    from the moment it was due, so a stalled server cannot hide its backlog
 *    (no coordinated omission);
 *  - a GET probe: S5_GET_CONNS connections in a closed loop, each GET of a
 *    random object; its rate per window is the server's spare capacity.
 * Every S5_WINDOW_S seconds a window closes with the GETs, server CPU,
 * write latencies, the data file's size, LMDB's own accounting of the file
 * (pages in use, pages on the freelist, history entries, the oldest reader),
 * and the server's VmRSS, RssAnon (the heap) and open fds. Compactions come
 * from lapis's log ("compacted to revision R in N ms"); a window that
 * overlaps one is a compaction window.
 */
#define S5_WINDOW_S 10
#define S5_GET_CONNS 2
#define S5_WRITE_CONNS 64 /* --write-workers' default */
#define S5_MAX_CMP 4096

struct s5_win {
	double t_end; /* seconds from the start */
	uint64_t gets, writes, errs;
	size_t w_first, w_last; /* its writes in s5.wr[] */
	double cpu_s;		/* server CPU in the window */
	double behind_ms;	/* the longest a due write waited */
	bool compaction;
	long long file_bytes; /* data.mdb st_size */
	long long used_pages, free_pages, hist_entries;
	long long reader_lag; /* txns behind the last, -1: no reader */
	long rss_kb;	/* VmRSS: LMDB's mapped pages as read, and the heap */
	long anon_kb;	/* RssAnon: the heap alone */
	int fds;
};

/* One write: when it completed (ms from the start) and its latency. */
struct s5_wrec {
	uint32_t t_ms;
	uint32_t lat_us;
};

static struct {
	pid_t pid;
	int port;
	int64_t t0;
	struct s5_win *win;
	int n_win, cap_win;
	struct s5_wrec *wr;
	size_t n_wr, cap_wr;
	struct {
		double start_s, end_s, ms;
		long long rev;
	} cmp[S5_MAX_CMP];
	int n_cmp;
	int n_cmp_fail;
	int log_fd;
	struct buf log_line;
	MDB_env *env;
	const char *store;
	long psize;
	char first_err[200];
	uint64_t n_put, n_patch;
	uint64_t idle_closed; /* idle connections the server closed */
} s5;

static double s5_now_s(void)
{
	return (double)(now_ns() - s5.t0) / 1e9;
}

static void s5_add_write(int64_t t_done, int64_t lat_ns)
{
	if (s5.n_wr == s5.cap_wr) {
		s5.cap_wr = s5.cap_wr ? s5.cap_wr * 2 : 65536;
		struct s5_wrec *p = realloc(s5.wr, s5.cap_wr * sizeof *p);
		if (!p)
			die("out of memory");
		s5.wr = p;
	}
	int64_t us = lat_ns / 1000;
	s5.wr[s5.n_wr++] =
	    (struct s5_wrec){.t_ms = (uint32_t)((t_done - s5.t0) / 1000000),
			     .lat_us = us < 0		 ? 0
				       : us > UINT32_MAX ? UINT32_MAX
							 : (uint32_t)us};
}

/* New lines of lapis's log: record each compaction it reports. */
static void s5_poll_log(void)
{
	char b[4096];
	ssize_t r;
	while ((r = read(s5.log_fd, b, sizeof b)) > 0) {
		for (ssize_t i = 0; i < r; i++) {
			if (b[i] != '\n') {
				buf_add(&s5.log_line, b + i, 1);
				continue;
			}
			const char *l = s5.log_line.p ? s5.log_line.p : "";
			const char *c = strstr(l, "compacted to revision ");
			if (c && s5.n_cmp < S5_MAX_CMP) {
				long long rev = atoll(c + 22);
				const char *in = strstr(c, " in ");
				double ms = in ? atof(in + 4) : 0;
				double end = s5_now_s();
				s5.cmp[s5.n_cmp].rev = rev;
				s5.cmp[s5.n_cmp].ms = ms;
				s5.cmp[s5.n_cmp].end_s = end;
				s5.cmp[s5.n_cmp].start_s = end - ms / 1000.0;
				s5.n_cmp++;
				printf("  [%6.1f s] lapis: %s\n", end, c);
			} else if (strstr(l, "compaction to revision")) {
				s5.n_cmp_fail++;
				printf("  [%6.1f s] lapis: %s\n", s5_now_s(),
				       l);
			}
			buf_clear(&s5.log_line);
		}
	}
}

static int s5_count_fds(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static int s5_reader_cb(const char *msg, void *ctx)
{
	long long *oldest = ctx;
	int pid;
	size_t tid;
	char txn[32];
	if (sscanf(msg, "%d %zx %31s", &pid, &tid, txn) == 3 &&
	    pid != getpid() && txn[0] != '-') {
		long long t = atoll(txn);
		if (*oldest < 0 || t < *oldest)
			*oldest = t;
	}
	return 0;
}

/* LMDB's view of the store, from a read-only handle on lapis's files and
   one short read transaction: pages in use, free pages (the freelist
   database, as mdb_stat -f counts them), history entries, and how many
   transactions the oldest reader of lapis lags behind. */
static void s5_lmdb_sample(struct s5_win *w)
{
	w->used_pages = w->free_pages = w->hist_entries = w->reader_lag = -1;
	if (!s5.env) {
		if (mdb_env_create(&s5.env))
			return;
		mdb_env_set_maxdbs(s5.env, 8);
		if (mdb_env_open(s5.env, s5.store, MDB_RDONLY | MDB_NOTLS,
				 0600)) {
			mdb_env_close(s5.env);
			s5.env = NULL;
			return;
		}
		MDB_stat st;
		mdb_env_stat(s5.env, &st);
		s5.psize = st.ms_psize;
	}
	MDB_txn *txn;
	int rc = mdb_txn_begin(s5.env, NULL, MDB_RDONLY, &txn);
	if (rc == MDB_MAP_RESIZED) {
		mdb_env_set_mapsize(s5.env, 0);
		rc = mdb_txn_begin(s5.env, NULL, MDB_RDONLY, &txn);
	}
	if (rc)
		return;
	MDB_envinfo info;
	mdb_env_info(s5.env, &info);
	w->used_pages = (long long)info.me_last_pgno + 1;
	MDB_cursor *c;
	if (!mdb_cursor_open(txn, 0, &c)) {
		MDB_val k, v;
		long long n = 0;
		while (!mdb_cursor_get(c, &k, &v, MDB_NEXT))
			n += (long long)*(size_t *)v.mv_data;
		mdb_cursor_close(c);
		w->free_pages = n;
	}
	MDB_dbi hist;
	MDB_stat hs;
	if (!mdb_dbi_open(txn, "hist", 0, &hist) && !mdb_stat(txn, hist, &hs))
		w->hist_entries = (long long)hs.ms_entries;
	long long oldest = -1;
	mdb_reader_list(s5.env, s5_reader_cb, &oldest);
	w->reader_lag =
	    oldest < 0 ? -1 : (long long)info.me_last_txnid - oldest;
	mdb_txn_abort(txn);
}

static void s5_win_head(void)
{
	printf("  %6s %7s %5s %7s %6s %7s %7s %7s %4s %8s %8s %8s %8s %7s %7s "
	       "%4s %5s\n",
	       "t s", "GET/s", "CPU%", "us/GET", "wr/s", "w p50ms", "w p99ms",
	       "late ms", "cmp", "file MB", "used MB", "free MB", "hist",
	       "RSS MB", "anon MB", "fds", "rlag");
}

static double s5_wr_pct(size_t a, size_t b, double p)
{
	struct lat l = {0};
	for (size_t i = a; i < b; i++)
		lat_add(&l, (int64_t)s5.wr[i].lat_us * 1000);
	double v = lat_ms(&l, p);
	lat_free(&l);
	return v;
}

static void s5_win_row(const struct s5_win *w, double secs)
{
	double mb = 1.0 / (1024 * 1024);
	printf(
	    "  %6.0f %7.0f %5.0f %7.1f %6.0f %7.2f %7.2f %7.0f %4s %8.1f %8.1f "
	    "%8.1f %8lld %7.1f %7.1f %4d %5lld\n",
	    w->t_end, (double)w->gets / secs, w->cpu_s * 100 / secs,
	    w->gets ? w->cpu_s * 1e6 / (double)w->gets : 0,
	    (double)w->writes / secs, s5_wr_pct(w->w_first, w->w_last, 50),
	    s5_wr_pct(w->w_first, w->w_last, 99), w->behind_ms,
	    w->compaction ? "yes" : "-", (double)w->file_bytes * mb,
	    (double)(w->used_pages * s5.psize) * mb,
	    (double)(w->free_pages * s5.psize) * mb, w->hist_entries,
	    (double)w->rss_kb / 1024, (double)w->anon_kb / 1024, w->fds,
	    w->reader_lag);
}

/* The write due now on c: PATCH and PUT alternate. */
static void s5_write_req(struct hconn *c, uint64_t *rng, uint64_t k)
{
	uint64_t i = rng_next(rng) % (uint64_t)cfg.objects;
	char name[64], path[160];
	obj_name(name, sizeof name, i);
	snprintf(path, sizeof path, COLL "/%s", name);
	struct buf body = {0};
	if (k & 1) {
		/* the whole object again, with values of the same length */
		obj_post_body(&body, i + (uint64_t)cfg.objects * (k % 1000 + 1),
			      name);
		req_build(&c->out, "PUT", path, "application/json", body.p,
			  body.len);
		s5.n_put++;
	} else {
		char v[191];
		for (int j = 0; j < 190; j++)
			v[j] = (char)('a' + (rng_next(rng) >> 59) % 26);
		v[190] = 0;
		buf_printf(&body, "{\"data\":{\"key%d\":\"%s\"}}", (int)(k % 4),
			   v);
		req_build(&c->out, "PATCH", path,
			  "application/merge-patch+json", body.p, body.len);
		s5.n_patch++;
	}
	buf_free(&body);
}

static void s5_send(int ep, struct hconn *c, int64_t t_sent)
{
	hp_reset(c);
	c->keep_body = true;
	c->out_off = 0;
	c->busy = true;
	c->t_sent = t_sent;
	int r = hc_flush(c);
	struct epoll_event ev = {
	    .events = r == 0 ? EPOLLIN | EPOLLOUT : EPOLLIN, .data.ptr = c};
	epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
}

static void s5_get_req(struct hconn *c)
{
	char path[160], name[64];
	obj_name(name, sizeof name, rng_next(&c->rng) % (uint64_t)cfg.objects);
	snprintf(path, sizeof path, COLL "/%s", name);
	req_build(&c->out, "GET", path, NULL, NULL, 0);
}

static void s5_connect(int ep, struct hconn *c)
{
	c->fd = tcp_connect(s5.port);
	if (c->fd < 0)
		die("S5: cannot connect to lapis: %s", strerror(errno));
	set_nonblock(c->fd);
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
	epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
}

/* Whether a compaction logged so far overlaps window w (a compaction that
   ends after the window's row is printed is marked when the run ends). */
static bool s5_overlaps_compaction(const struct s5_win *w)
{
	double a = w->t_end - S5_WINDOW_S, b = w->t_end;
	for (int j = 0; j < s5.n_cmp; j++)
		if (s5.cmp[j].start_s < b && s5.cmp[j].end_s >= a)
			return true;
	return false;
}

/* Close window w (its end at t) with the server's and the store's state. */
static void s5_close_window(struct s5_win *w, double t, double *cpu_prev)
{
	w->t_end = t;
	w->w_last = s5.n_wr;
	double cpu = proc_cpu_s(s5.pid);
	w->cpu_s = cpu - *cpu_prev;
	*cpu_prev = cpu;
	w->rss_kb = proc_rss_kb(s5.pid);
	w->anon_kb = proc_status_kb(s5.pid, "RssAnon:");
	w->fds = s5_count_fds(s5.pid);
	char path[4200];
	struct stat st;
	snprintf(path, sizeof path, "%s/data.mdb", s5.store);
	w->file_bytes = stat(path, &st) ? -1 : (long long)st.st_size;
	s5_lmdb_sample(w);
	w->compaction = s5_overlaps_compaction(w);
}

/* The load loop; fills s5.win. */
static void s5_run(void)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct hconn cs[S5_GET_CONNS + S5_WRITE_CONNS];
	memset(cs, 0, sizeof cs);
	for (int i = 0; i < S5_GET_CONNS + S5_WRITE_CONNS; i++) {
		cs[i].idx = i;
		cs[i].rng = 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1);
		s5_connect(ep, &cs[i]);
	}
	uint64_t wrng = 0x5EED5EED5EEDULL, k = 0;
	int n_total = (int)(cfg.s5_minutes * 60 / S5_WINDOW_S + 0.5);
	if (n_total < 1)
		n_total = 1;
	s5.win = xcalloc((size_t)n_total, sizeof *s5.win);
	s5.t0 = now_ns();
	int64_t end = s5.t0 + (int64_t)n_total * S5_WINDOW_S * 1000000000LL;
	int64_t every = (int64_t)(1e9 / cfg.s5_rate), next_write = s5.t0;
	int64_t next_win = s5.t0 + S5_WINDOW_S * 1000000000LL,
		next_poll = s5.t0;
	double cpu_prev = proc_cpu_s(s5.pid);
	struct s5_win *w = &s5.win[0];
	for (int i = 0; i < S5_GET_CONNS; i++) {
		s5_get_req(&cs[i]);
		s5_send(ep, &cs[i], now_ns());
	}
	static char rb[256 * 1024];
	struct epoll_event evs[32];
	bool stopping = false;
	for (;;) {
		int64_t t = now_ns();
		if (!stopping && t >= next_win) {
			s5_poll_log();
			s5_close_window(w, (double)(next_win - s5.t0) / 1e9,
					&cpu_prev);
			s5_win_row(w, S5_WINDOW_S);
			if (++s5.n_win == n_total) {
				stopping = true;
			} else {
				w = &s5.win[s5.n_win];
				w->w_first = s5.n_wr;
				next_win += S5_WINDOW_S * 1000000000LL;
			}
		}
		int busy = 0;
		for (int i = 0; i < S5_GET_CONNS + S5_WRITE_CONNS; i++)
			busy += cs[i].busy;
		if (stopping && (!busy || t > end + 10000000000LL))
			break;
		if (t >= next_poll) {
			s5_poll_log();
			next_poll = t + 200000000;
		}
		/* Send every due write a connection is free for; the rest wait
		   and their latency grows from the moment they were due. */
		for (int i = S5_GET_CONNS; !stopping && next_write <= t &&
					   i < S5_GET_CONNS + S5_WRITE_CONNS;
		     i++) {
			if (cs[i].busy || cs[i].fd < 0)
				continue;
			s5_write_req(&cs[i], &wrng, k++);
			s5_send(ep, &cs[i], next_write);
			next_write += every;
		}
		if (!stopping && next_write < t) {
			double late = (double)(t - next_write) / 1e6;
			if (late > w->behind_ms)
				w->behind_ms = late;
		}
		int64_t wake = next_win < next_poll ? next_win : next_poll;
		if (next_write < wake)
			wake = next_write;
		int to = wake > t ? (int)((wake - t + 999999) / 1000000) : 0;
		int ne = epoll_wait(ep, evs, 32, stopping ? 5 : to);
		for (int e = 0; e < ne; e++) {
			struct hconn *c = evs[e].data.ptr;
			bool is_get = c->idx < S5_GET_CONNS;
			if (c->fd < 0)
				continue;
			int d = 0;
			if (evs[e].events & EPOLLOUT) {
				int r = hc_flush(c);
				if (r == 1) {
					struct epoll_event ev = {
					    .events = EPOLLIN, .data.ptr = c};
					epoll_ctl(ep, EPOLL_CTL_MOD, c->fd,
						  &ev);
				} else if (r < 0) {
					d = -1;
				}
			}
			if (!d &&
			    (evs[e].events & (EPOLLIN | EPOLLERR | EPOLLHUP))) {
				ssize_t r = recv(c->fd, rb, sizeof rb, 0);
				if (r < 0 &&
				    (errno == EAGAIN || errno == EINTR))
					continue;
				size_t used;
				d = r <= 0 ? -1
					   : hp_feed(c, rb, (size_t)r, &used);
			}
			if (d == 0)
				continue;
			int64_t tn = now_ns();
			if (stopping && d > 0) { /* after the last window */
				c->busy = false;
				continue;
			}
			if (d < 0 && !c->busy) {
				/* The server closed a keep-alive connection that
				   had no request in flight (its idle timeout, 120
				   s: writes take the lowest free of 64
				   connections, so the last ones idle for
				   minutes). Reconnect, as HTTP clients do; no
				   request failed. */
				s5.idle_closed++;
				epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
				close(c->fd);
				s5_connect(ep, c);
				continue;
			}
			if (d < 0 || c->status < 200 || c->status >= 300) {
				w->errs++;
				if (!s5.first_err[0])
					snprintf(s5.first_err,
						 sizeof s5.first_err,
						 "%.5s: %s %.120s", c->out.p,
						 d < 0 ? "connection failed"
						       : "HTTP",
						 d < 0	     ? ""
						 : c->body.p ? c->body.p
							     : "");
				if (d < 0) {
					epoll_ctl(ep, EPOLL_CTL_DEL, c->fd,
						  NULL);
					close(c->fd);
					s5_connect(ep, c);
				}
			} else if (is_get) {
				w->gets++;
			} else {
				w->writes++;
				s5_add_write(tn, tn - c->t_sent);
			}
			c->busy = false;
			if (is_get && !stopping) {
				s5_get_req(c);
				s5_send(ep, c, tn);
			}
		}
	}
	for (int i = 0; i < S5_GET_CONNS + S5_WRITE_CONNS; i++)
		hconn_free(&cs[i]);
	close(ep);
	s5_poll_log();
	for (int i = 0; i < s5.n_win; i++)
		s5.win[i].compaction = s5_overlaps_compaction(&s5.win[i]);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median over windows [a, b) of f. */
static double s5_median(int a, int b, double (*f)(const struct s5_win *))
{
	if (b <= a)
		return 0;
	double *v = xcalloc((size_t)(b - a), sizeof *v);
	for (int i = a; i < b; i++)
		v[i - a] = f(&s5.win[i]);
	qsort(v, (size_t)(b - a), sizeof *v, cmp_double);
	double m = v[(b - a) / 2];
	free(v);
	return m;
}

static double s5_get_rate(const struct s5_win *w)
{
	return (double)w->gets / S5_WINDOW_S;
}

static double s5_cpu_per_get(const struct s5_win *w)
{
	return w->gets ? w->cpu_s * 1e6 / (double)w->gets : 0;
}

/* p-th percentile of the writes of the windows whose compaction flag is
   cmp; *n gets their count. */
static double s5_wr_pct_by(bool cmp, double p, size_t *n)
{
	struct lat l = {0};
	for (int i = 0; i < s5.n_win; i++) {
		if (s5.win[i].compaction != cmp)
			continue;
		for (size_t j = s5.win[i].w_first; j < s5.win[i].w_last; j++)
			lat_add(&l, (int64_t)s5.wr[j].lat_us * 1000);
	}
	*n = l.n;
	double v = lat_ms(&l, p);
	lat_free(&l);
	return v;
}

static void s5_report(void)
{
	int n = s5.n_win;
	if (n < 2) {
		printf("  S5: too short for a report (%d window)\n", n);
		return;
	}
	int k =
	    n / 10 < 3 ? 3 : n / 10; /* the ends compared: 10%, >= 3 windows */
	if (2 * k > n)
		k = n / 2;
	double g0 = s5_median(0, k, s5_get_rate),
	       g1 = s5_median(n - k, n, s5_get_rate);
	double c0 = s5_median(0, k, s5_cpu_per_get),
	       c1 = s5_median(n - k, n, s5_cpu_per_get);
	size_t n_cmp_w, n_steady_w;
	double p99c = s5_wr_pct_by(true, 99, &n_cmp_w);
	double p99s = s5_wr_pct_by(false, 99, &n_steady_w);
	double p50c = s5_wr_pct_by(true, 50, &n_cmp_w);
	double p50s = s5_wr_pct_by(false, 50, &n_steady_w);
	int n_cw = 0;
	uint64_t errs = 0, writes = 0;
	for (int i = 0; i < n; i++) {
		n_cw += s5.win[i].compaction;
		errs += s5.win[i].errs;
		writes += s5.win[i].writes;
	}
	const struct s5_win *mid = &s5.win[n / 2 - 1], *last = &s5.win[n - 1];
	double mb = 1.0 / (1024 * 1024);
	long long file_max_first = 0, file_max_last = 0;
	long rss_min_last = -1, rss_max_last = 0;
	int fd_min_last = -1, fd_max_last = 0;
	for (int i = 0; i < n; i++) {
		const struct s5_win *w = &s5.win[i];
		if (i < n / 2) {
			if (w->file_bytes > file_max_first)
				file_max_first = w->file_bytes;
			continue;
		}
		if (w->file_bytes > file_max_last)
			file_max_last = w->file_bytes;
		if (rss_min_last < 0 || w->anon_kb < rss_min_last)
			rss_min_last = w->anon_kb;
		if (w->anon_kb > rss_max_last)
			rss_max_last = w->anon_kb;
		if (fd_min_last < 0 || w->fds < fd_min_last)
			fd_min_last = w->fds;
		if (w->fds > fd_max_last)
			fd_max_last = w->fds;
	}
	printf("  %llu writes (%llu merge PATCH, %llu PUT), %.0f/s; %d "
	       "compactions "
	       "logged (%d failed); %d of %d windows overlap a compaction; "
	       "%llu errors%s%s; %llu idle connections closed by the server "
	       "(reconnected)\n",
	       (unsigned long long)writes, (unsigned long long)s5.n_patch,
	       (unsigned long long)s5.n_put, (double)writes / (n * S5_WINDOW_S),
	       s5.n_cmp, s5.n_cmp_fail, n_cw, n, (unsigned long long)errs,
	       s5.first_err[0] ? "; first: " : "", s5.first_err,
	       (unsigned long long)s5.idle_closed);
	for (int j = 0; j < s5.n_cmp; j++)
		printf("    compaction %d: %.1f-%.1f s, to revision %lld, %.0f "
		       "ms\n",
		       j + 1, s5.cmp[j].start_s, s5.cmp[j].end_s, s5.cmp[j].rev,
		       s5.cmp[j].ms);
	printf(
	    "  GET probe, median of the first %d and last %d windows: %.0f -> "
	    "%.0f req/s, server CPU per GET %.1f -> %.1f us (all server CPU / "
	    "GETs, the fixed write load included)\n",
	    k, k, g0, g1, c0, c1);
	printf("  writes: steady windows p50 %.2f p99 %.2f ms (%zu writes); "
	       "compaction windows p50 %.2f p99 %.2f ms (%zu writes)\n",
	       p50s, p99s, n_steady_w, p50c, p99c, n_cmp_w);
	printf(
	    "  data file %.1f MB at the half (max %.1f MB in the first half), "
	    "%.1f MB at the end (max %.1f MB in the last half); LMDB pages in "
	    "use %.1f -> %.1f MB, free %.1f -> %.1f MB; history entries %lld "
	    "-> "
	    "%lld\n",
	    (double)mid->file_bytes * mb, (double)file_max_first * mb,
	    (double)last->file_bytes * mb, (double)file_max_last * mb,
	    (double)(mid->used_pages * s5.psize) * mb,
	    (double)(last->used_pages * s5.psize) * mb,
	    (double)(mid->free_pages * s5.psize) * mb,
	    (double)(last->free_pages * s5.psize) * mb, mid->hist_entries,
	    last->hist_entries);
	printf("  server anonymous RSS (the heap; VmRSS adds LMDB's mapped "
	       "pages, which follow the file) %.1f MB at the half, %.1f-%.1f MB "
	       "over the last half (VmRSS %.1f -> %.1f MB); open fds %d at the "
	       "half, %d-%d over the last half\n",
	       (double)mid->anon_kb / 1024, (double)rss_min_last / 1024,
	       (double)rss_max_last / 1024, (double)mid->rss_kb / 1024,
	       (double)last->rss_kb / 1024, mid->fds, fd_min_last, fd_max_last);
	printf(
	    "  ratios and targets (issue 3; the file, RSS and fd limits are "
	    "this benchmark's reading of \"stops growing\" and \"flat\"):\n");
	target("GET req/s, last windows / first (fresh), medians", g1 / g0, 0.8,
	       true);
	printf("    %-58s %7.2f\n", "server CPU per GET, last windows / first",
	       c0 > 0 ? c1 / c0 : 0);
	if (n_cmp_w && n_steady_w)
		target("write p99, compaction windows / steady windows",
		       p99c / p99s, 2.0, false);
	else
		printf("    write p99 during compaction: no %s window\n",
		       n_cmp_w ? "steady" : "compaction");
	double growth = mid->file_bytes > 0
			    ? (double)(last->file_bytes - mid->file_bytes) *
				  100 / (double)mid->file_bytes
			    : 0;
	target("data file growth over the last half, %", growth, 5.0, false);
	double rss_growth = mid->anon_kb > 0
				? (double)(rss_max_last - mid->anon_kb) * 100 /
				      (double)mid->anon_kb
				: 0;
	target("server anonymous RSS growth, last half (max vs half), %",
	       rss_growth, 10.0, false);
	target("open fds, max over the last half - at the half",
	       (double)(fd_max_last - mid->fds), 0, false);
}

static void phase_s5(const char *top)
{
	char datadir[4200], log[4200], store[4300], interval[64];
	snprintf(datadir, sizeof datadir, "%s/lapis-s5", top);
	snprintf(log, sizeof log, "%s/lapis-s5.log", top);
	snprintf(store, sizeof store, "%s/store", datadir);
	double cmp_s =
	    cfg.s5_compact_s > 0 ? cfg.s5_compact_s : cfg.s5_minutes * 10;
	snprintf(interval, sizeof interval, "%lldms",
		 (long long)(cmp_s * 1000 + 0.5));
	printf(
	    "\nS5 endurance: %.1f min of writes at %d/s (merge PATCH and PUT "
	    "alternating, random objects of the %d, over %d connections, "
	    "latency from when each was due) and a GET probe (%d connections, "
	    "closed loop, random objects); lapis durable (no --nosync, fsync "
	    "per commit group) with --compaction-interval %s on %s; one row "
	    "per "
	    "%d s window\n",
	    cfg.s5_minutes, cfg.s5_rate, cfg.objects, S5_WRITE_CONNS,
	    S5_GET_CONNS, interval, datadir, S5_WINDOW_S);
	printf(
	    "  columns: server CPU%% of one core and CPU us per GET (all "
	    "server CPU / GETs); late ms = the longest a due write waited for "
	    "a free connection; cmp = a compaction overlapped the window; file "
	    "= data.mdb size; used/free = LMDB's pages in use and on its "
	    "freelist; hist = history entries; rlag = transactions the oldest "
	    "lapis reader lags behind (-1: none)\n");
	struct server S = {0};
	if (!lapis_start_opts(&S, datadir, false, false, interval, log))
		die("lapis did not start for S5");
	struct load L = {.port = S.port,
			 .nconn = 16,
			 .srv = S.pid,
			 .total = (uint64_t)cfg.objects,
			 .gen = gen_k8s_create};
	run_load(&L);
	if (L.n != (uint64_t)cfg.objects)
		die("S5: created %llu of %d objects (%s)",
		    (unsigned long long)L.n, cfg.objects, L.first_err);
	printf("  setup: %d ConfigMaps created with POST in %.1f s (16 "
	       "connections, durable: %.0f/s)\n",
	       cfg.objects, L.wall, L.rate);
	lat_free(&L.lat);
	s5.pid = S.pid;
	s5.port = S.port;
	s5.store = store;
	s5.log_fd = open(log, O_RDONLY | O_CLOEXEC);
	if (s5.log_fd < 0)
		die("S5: cannot read %s", log);
	set_nonblock(s5.log_fd);
	s5_win_head();
	s5_run();
	s5_report();
	if (s5.env)
		mdb_env_close(s5.env);
	s5.env = NULL;
	close(s5.log_fd);
	stop_child(S.pid);
}

/* ------------------------------------------------------------ main */

static int rm_entry(const char *path, const struct stat *sb, int flag,
		    struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static const char usage[] =
    "usage: bench-http [--lapis PATH] [--etcd PATH|none] [--dir DIR] [--keep]\n"
    "                  [--objects N] [--seconds S] [--warm S] [--rounds R]\n"
    "                  [--watchers N] [--watch-seconds S] [--quick]\n"
    "                  [--only s1,s2,s3,tls,s4,s5] [--s5-minutes M]\n"
    "                  [--s5-compaction SECONDS] [--s5-rate N]\n"
    "S5 (endurance, 30 minutes by default) runs only when --only names it or\n"
    "--s5-minutes is given; its compaction interval defaults to M/6 minutes.\n";

static void parse_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool val = true;
		if (!strcmp(a, "--lapis") && v)
			cfg.lapis = v;
		else if (!strcmp(a, "--etcd") && v)
			cfg.etcd = v;
		else if (!strcmp(a, "--dir") && v)
			cfg.dir = v;
		else if (!strcmp(a, "--objects") && v)
			cfg.objects = atoi(v);
		else if (!strcmp(a, "--seconds") && v)
			cfg.secs = atof(v);
		else if (!strcmp(a, "--warm") && v)
			cfg.warm = atof(v);
		else if (!strcmp(a, "--rounds") && v)
			cfg.rounds = atoi(v);
		else if (!strcmp(a, "--watchers") && v)
			cfg.watchers = atoi(v);
		else if (!strcmp(a, "--watch-seconds") && v)
			cfg.watch_secs = atof(v);
		else if (!strcmp(a, "--only") && v)
			cfg.only = v;
		else if (!strcmp(a, "--s5-minutes") && v) {
			cfg.s5_minutes = atof(v);
			cfg.s5_asked = true;
		} else if (!strcmp(a, "--s5-compaction") && v)
			cfg.s5_compact_s = atof(v);
		else if (!strcmp(a, "--s5-rate") && v)
			cfg.s5_rate = atoi(v);
		else {
			val = false;
			if (!strcmp(a, "--keep")) {
				cfg.keep = true;
			} else if (!strcmp(a, "--quick")) {
				cfg.objects = 2000;
				cfg.secs = 1;
				cfg.warm = 0.2;
				cfg.rounds = 1;
				cfg.watchers = 200;
				cfg.watch_secs = 2;
			} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
				fputs(usage, stdout);
				exit(0);
			} else {
				fputs(usage, stderr);
				exit(2);
			}
		}
		if (val)
			i++;
	}
	if (cfg.objects < PAGE || cfg.secs <= 0 || cfg.rounds < 1 ||
	    cfg.watchers < 1 || cfg.watch_secs <= 0 || cfg.s5_minutes <= 0 ||
	    cfg.s5_compact_s < 0 || cfg.s5_rate < 1) {
		fputs(usage, stderr);
		exit(2);
	}
}

/* Whether scenario name (s1, s2, s3, tls, s4, s5) is to run. S5 takes
   half an hour: without --only it runs only when --s5-minutes asks. */
static bool want(const char *name)
{
	if (!cfg.only)
		return strcmp(name, "s5") || cfg.s5_asked;
	size_t n = strlen(name);
	for (const char *p = cfg.only; *p;) {
		size_t k = strcspn(p, ",");
		if (k == n && !strncmp(p, name, n))
			return true;
		p += k + (p[k] == ',');
	}
	return false;
}

/* Phase A's setup: the dataset through lapis, the bare responder, etcd. */
static void setup(struct phase_a *A, const char *top)
{
	char path[4200];
	struct load L = {.port = A->srv[K_LAPIS].port, .nconn = 16,
			 .srv = A->srv[K_LAPIS].pid, .total = (uint64_t)cfg.objects};
	L.gen = gen_k8s_create;
	run_load(&L);
	if (L.n != (uint64_t)cfg.objects)
		die("created %llu of %d objects in lapis (%s)",
		    (unsigned long long)L.n, cfg.objects, L.first_err);
	printf("setup: %d ConfigMaps created in lapis with POST in %.1f s "
	       "(16 connections, --nosync: %.0f/s)\n",
	       cfg.objects, L.wall, L.rate);
	lat_free(&L.lat);

	ds.n = cfg.objects;
	ds.body = xcalloc((size_t)ds.n, sizeof *ds.body);
	ds.len = xcalloc((size_t)ds.n, sizeof *ds.len);
	ds.ekey = xcalloc((size_t)ds.n, sizeof *ds.ekey);
	L = (struct load){.port = A->srv[K_LAPIS].port, .nconn = 16,
			  .srv = A->srv[K_LAPIS].pid, .total = (uint64_t)ds.n,
			  .keep_body = true};
	L.gen = gen_k8s_get_seq;
	L.resp = resp_keep_body;
	run_load(&L);
	lat_free(&L.lat);
	size_t total = 0;
	for (int i = 0; i < ds.n; i++) {
		if (!ds.body[i])
			die("could not read obj-%05d back from lapis", i);
		total += ds.len[i];
		struct buf k = {0}, e = {0};
		buf_printf(&k, EPREFIX "obj-%05d", i);
		b64_enc(&e, k.p, k.len);
		ds.ekey[i] = e.p;
		buf_free(&k);
	}
	struct buf e = {0};
	b64_enc(&e, EPREFIX, strlen(EPREFIX));
	snprintf(ds.elist_first, sizeof ds.elist_first, "%s", e.p);
	buf_clear(&e);
	b64_enc(&e, EPREFIX_END, strlen(EPREFIX_END));
	snprintf(ds.elist_end, sizeof ds.elist_end, "%s", e.p);
	buf_free(&e);

	/* One walk of the pages: the bare responder's LIST table. */
	int max_pages = ds.n / PAGE + 2;
	ds.tok = xcalloc((size_t)max_pages, sizeof *ds.tok);
	ds.page = xcalloc((size_t)max_pages, sizeof *ds.page);
	ds.page_len = xcalloc((size_t)max_pages, sizeof *ds.page_len);
	struct hconn c = {.fd = -1};
	char tok[1024] = "";
	for (;;) {
		if (ds.n_pages == max_pages)
			die("more pages than objects allow");
		char p[1200];
		snprintf(p, sizeof p, COLL "?limit=%d%s%s", PAGE,
			 tok[0] ? "&continue=" : "", tok);
		if (sreq(&c, A->srv[K_LAPIS].port, "GET", p, NULL, NULL, 0) != 200)
			die("LIST failed: %.200s", c.body.p ? c.body.p : "");
		memcpy(ds.tok[ds.n_pages], tok, sizeof tok);
		ds.page[ds.n_pages] = xstrndup(c.body.p, c.body.len);
		ds.page_len[ds.n_pages++] = c.body.len;
		if (ds.n_pages == 1)
			watch_rv = json_ll(c.body.p, "\"resourceVersion\"");
		k8s_continue(c.body.p, c.body.len, tok, sizeof tok);
		if (!tok[0])
			break;
	}
	hconn_free(&c);
	printf("setup: objects average %.0f bytes as lapis returns them; a walk "
	       "is %d pages of up to %d (first page %zu bytes); "
	       "resourceVersion %lld\n",
	       (double)total / ds.n, ds.n_pages, PAGE, ds.page_len[0], watch_rv);

	/* The bare responder, before any thread exists (invariant 4). */
	A->srv[K_BARE].name = "bare";
	A->srv[K_BARE].pid = child_start(bare_main, "the bare responder",
					 &A->srv[K_BARE].port);

	if (!strcmp(cfg.etcd, "none"))
		return;
	snprintf(path, sizeof path, "%s/etcd", top);
	char log[4200];
	snprintf(log, sizeof log, "%s/etcd.log", top);
	if (!etcd_start(&A->srv[K_ETCD], path, log)) {
		printf("setup: etcd did not start: etcd figures skipped\n");
		return;
	}
	A->have_etcd = true;
	L = (struct load){.port = A->srv[K_ETCD].port, .nconn = 32,
			  .srv = A->srv[K_ETCD].pid, .total = (uint64_t)ds.n,
			  .keep_body = true};
	L.gen = gen_etcd_put;
	run_load(&L);
	lat_free(&L.lat);
	if (L.n != (uint64_t)ds.n)
		die("put %llu of %d objects into etcd (%s)",
		    (unsigned long long)L.n, ds.n, L.first_err);
	printf("setup: %d objects put into etcd %s (its own process) in %.1f s "
	       "(32 connections: %.0f/s)\n",
	       ds.n, cfg.etcd, L.wall, L.rate);
	c = (struct hconn){.fd = -1};
	int port = A->srv[K_ETCD].port;
	sreq(&c, port, "POST", "/v3/kv/range", "application/json",
	     "{\"key\":\"AA==\"}", 14);
	etcd_rev = json_ll(c.body.p, "\"revision\"");
	char body[128];
	int n = snprintf(body, sizeof body, "{\"revision\":%lld,\"physical\":true}",
			 etcd_rev);
	int st1 = sreq(&c, port, "POST", "/v3/kv/compaction", "application/json",
		       body, (size_t)n);
	int st2 = sreq(&c, port, "POST", "/v3/maintenance/defragment",
		       "application/json", "{}", 2);
	printf("setup: etcd compacted at revision %lld (HTTP %d) and "
	       "defragmented (HTTP %d)\n",
	       etcd_rev, st1, st2);
	hconn_free(&c);
}

static void s3_all(struct phase_a *A, const char *datadir, const char *top)
{
	int k = (int)(cfg.watch_secs * 5);
	if (k > MAX_UPDATES)
		k = MAX_UPDATES;
	printf("\nS3 watch fan-out: %d watch connections on the collection from "
	       "the current revision, then %d updates at 5/s (lapis: merge PATCH "
	       "of one ConfigMap; bare: POST of lapis's event bytes to /fire; "
	       "etcd: put of the same key through /v3/kv/put)\n",
	       cfg.watchers, k);
	bare_config();
	printf("  bare fan-out: one chunked response per watch, suspended when "
	       "idle, resumed by /fire, copying the same event bytes lapis sent\n");
	printf("  raw fan-out (the kernel's floor): one thread, no HTTP "
	       "library, one send() of each chunk-framed event per watch "
	       "connection, once after the rounds\n");
	printf("  latency: from just before the update request is written to the "
	       "receipt of the event's last byte; memory: server RSS delta after "
	       "all watches answered, per watcher, from a baseline taken once the "
	       "server is quiet (RSS steady, under 10 ms CPU in 0.5 s; 'quiet s' "
	       "is the wait, -1 if it never was; lapis restarted before each of "
	       "its rounds, so its informer cache has loaded); %d rounds of lapis and bare, etcd once; every round "
	       "is printed, targets use each server's best round\n",
	       cfg.rounds);
	printf("  %-6s %5s %8s %5s %19s %8s %8s %8s %8s %10s %10s %7s\n", "server",
	       "round", "watchers", "upd", "delivered/expected", "complete",
	       "p50 ms", "p99 ms", "max ms", "CPU us/ev", "KB/watch", "quiet s");
	struct s3 *best[K_N] = {NULL};
	double mem_max = 0; /* lapis's worst round: the figure must not be luck */
	bool all_ok = true;
	char log[4200];
	for (int r = 0; r < cfg.rounds; r++)
		for (int i = 0; i < K_N; i++) {
			if (i == K_ETCD && (!A->have_etcd || r > 0))
				continue;
			if (i == K_BARE && !n_lapis_events) {
				printf("  bare: skipped (lapis delivered no event to copy)\n");
				continue;
			}
			if (i == K_LAPIS) {
				/* A fresh lapis: earlier runs leave freed memory
				   that would hide the watchers' own. */
				stop_child(A->srv[K_LAPIS].pid);
				snprintf(log, sizeof log, "%s/lapis-s3-%d.log", top, r);
				if (!lapis_start(&A->srv[K_LAPIS], datadir, false, true,
						 log))
					die("lapis did not restart for S3");
				struct hconn c = {.fd = -1};
				if (sreq(&c, A->srv[K_LAPIS].port, "GET",
					 COLL "?limit=1", NULL, NULL, 0) == 200)
					watch_rv = json_ll(c.body.p, "\"resourceVersion\"");
				hconn_free(&c);
			}
			struct s3 *s = xcalloc(1, sizeof *s);
			*s = (struct s3){
				.name = kind_name[i],
				.port = A->srv[i].port,
				.srv = A->srv[i].pid,
				.n = cfg.watchers,
				.k = k,
				.interval = 0.2,
				.watch_req = i == K_ETCD ? etcd_watch_req : k8s_watch_req,
				.update = i == K_LAPIS ? lapis_update
					  : i == K_BARE ? bare_update
							: etcd_update,
				.events_in = i == K_ETCD ? etcd_events_in : k8s_events_in,
				.capture = i == K_LAPIS && r == 0,
			};
			run_s3(s);
			s3_row(s, r + 1);
			if (i == K_LAPIS) {
				all_ok = all_ok && s->delivered == s->expected &&
					 s->complete == s->n;
				if (s->mem_kb > mem_max)
					mem_max = s->mem_kb;
			}
			if (!best[i] || s->p99 < best[i]->p99) {
				if (best[i]) {
					lat_free(&best[i]->lat);
					free(best[i]);
				}
				best[i] = s;
			} else {
				lat_free(&s->lat);
				free(s);
			}
		}
	struct s3 *raw = NULL;
	if (n_lapis_events) {
		int port;
		pid_t pid = child_start(raw_main, "the raw fan-out", &port);
		raw = xcalloc(1, sizeof *raw);
		*raw = (struct s3){.name = "raw", .port = port, .srv = pid,
				   .n = cfg.watchers, .k = k, .interval = 0.2,
				   .watch_req = k8s_watch_req,
				   .update = bare_update,
				   .events_in = k8s_events_in};
		run_s3(raw);
		s3_row(raw, 1);
		stop_child(pid);
	}
	printf("  ratios and targets (issue 3), each server's round with the "
	       "lowest p99 (memory: lapis's highest round):\n");
	struct s3 *l = best[K_LAPIS], *b = best[K_BARE], *e = best[K_ETCD];
	printf("    lapis: every watcher got every event in every round: %s\n",
	       all_ok ? "yes, met" : "NO, MISSED");
	target("lapis delivery latency p99, ms", l->p99, 50, false);
	if (b)
		target("lapis/bare CPU per delivered event", l->cpu_us / b->cpu_us,
		       1.5, false);
	if (e)
		target("etcd/lapis CPU per delivered event", e->cpu_us / l->cpu_us,
		       10, true);
	if (raw && raw->delivered) {
		printf("    %-58s %7.2f\n", "lapis/raw CPU per delivered event",
		       l->cpu_us / raw->cpu_us);
		if (e)
			printf("    %-58s %7.2f\n",
			       "etcd/raw: the most etcd/lapis can be here",
			       e->cpu_us / raw->cpu_us);
	}
	target("lapis memory per idle watcher, KB (worst round)", mem_max, 40,
	       false);
	if (b)
		printf("    %-58s %7.1f\n",
		       "bare memory per idle watcher, KB (MHD alone)", b->mem_kb);
	for (int i = 0; i < K_N; i++) {
		if (best[i])
			lat_free(&best[i]->lat);
		free(best[i]);
	}
	if (raw)
		lat_free(&raw->lat);
	free(raw);
}

/* Phase B: S1 over TLS, beside the plain-HTTP libcurl run. */
static void phase_tls(const char *datadir, const char *top, struct load *plain)
{
	char log[4200];
	printf("\nS1 over TLS: GET one object at 4 connections, libcurl %s easy "
	       "handles in 4 threads (keep-alive), bearer token, the data "
	       "directory's CA\n",
	       curl_version_info(CURLVERSION_NOW)->version);
	struct server T = {0};
	snprintf(log, sizeof log, "%s/lapis-tls.log", top);
	struct load tls = {0};
	if (lapis_start(&T, datadir, true, true, log)) {
		char tokpath[4300], capath[4300], token[256] = "";
		snprintf(tokpath, sizeof tokpath, "%s/admin.token", datadir);
		snprintf(capath, sizeof capath, "%s/pki/ca.crt", datadir);
		FILE *f = fopen(tokpath, "re");
		if (f) {
			if (!fgets(token, sizeof token, f))
				token[0] = 0;
			fclose(f);
		}
		token[strcspn(token, "\r\n")] = 0;
		struct curl_run ct = {.ca = capath};
		snprintf(ct.base, sizeof ct.base, "https://127.0.0.1:%d", T.port);
		snprintf(ct.auth, sizeof ct.auth, "Authorization: Bearer %s", token);
		run_curl(&ct, 4, T.pid, &tls);
		stop_child(T.pid);
	}
	row_head("req/s");
	row("lapis http", 4, plain);
	row("lapis https", 4, &tls);
	printf("    %-58s %7.2f\n", "https/http req/s (same libcurl client)",
	       plain->rate ? tls.rate / plain->rate : 0);
	printf("    %-58s %7.2f\n", "https/http server CPU per request",
	       plain->cpu_us ? tls.cpu_us / plain->cpu_us : 0);
}

/* Copy the file src to dst (created with mode 0600); dies on failure. */
static void copy_file(const char *src, const char *dst)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		die("open %s: %s", src, strerror(errno));
	int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0)
		die("create %s: %s", dst, strerror(errno));
	static char buf[1 << 16];
	ssize_t n;
	while ((n = read(in, buf, sizeof buf)) > 0)
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0)
				die("write %s: %s", dst, strerror(errno));
			off += w;
		}
	if (n < 0)
		die("read %s: %s", src, strerror(errno));
	close(in);
	close(out);
}

/* Phase C: S4, durable writes; best of cfg.rounds rounds, the seven runs
   alternating within each round (invariant 5). "lapis nosync" serves a
   copy of the same store with --nosync: the same creates without the
   fsyncs, which parts a create's time into the HTTP path and the commit. */
static void phase_s4(struct phase_a *A, const char *datadir, const char *top,
		     const struct statfs *sf)
{
	enum { W_L1, W_L16, W_N1, W_N16, W_RAW, W_E1, W_E16, W_N };
	static const char *const wname[W_N] = {
	    "lapis sync", "lapis sync", "lapis nosync", "lapis nosync",
	    "raw LMDB",	  "etcd put",	"etcd put"};
	static const int wconns[W_N] = {1, 16, 1, 16, 1, 1, 16};
	char log[4200], rawdir[4200], nsdir[4200], path[4300], path2[4300];
	printf("\nS4 durable writes: lapis restarted without --nosync on %s (%s); "
	       "POST creates of new ConfigMaps of about 1 KiB\n",
	       datadir,
	       (unsigned long)sf->f_type == TMPFS_MAGIC_ ? "tmpfs" : "a disk filesystem");
	printf("  %.1f s per run after %.1f s warm-up, best of %d rounds, runs "
	       "alternating\n",
	       cfg.secs, cfg.warm, cfg.rounds);
	printf("  raw LMDB = one mdb_put + mdb_txn_commit per op in this process, "
	       "default flags (synced), same filesystem, preloaded with the "
	       "dataset, lapis's object bytes as values; etcd = /v3/kv/put of "
	       "the same bytes (fsynced WAL)\n");
	/* The copy first: lapis is stopped, data.mdb is whole. */
	snprintf(nsdir, sizeof nsdir, "%s/lapis-nosync", top);
	snprintf(path, sizeof path, "%s/store", nsdir);
	if (mkdir(nsdir, 0700) || mkdir(path, 0700))
		die("mkdir %s: %s", path, strerror(errno));
	snprintf(path, sizeof path, "%s/store/data.mdb", datadir);
	snprintf(path2, sizeof path2, "%s/store/data.mdb", nsdir);
	copy_file(path, path2);
	struct server C = {0}, N = {0};
	snprintf(log, sizeof log, "%s/lapis-sync.log", top);
	if (!lapis_start(&C, datadir, false, false, log))
		die("lapis did not start without --nosync");
	snprintf(log, sizeof log, "%s/lapis-nosync.log", top);
	if (!lapis_start(&N, nsdir, false, true, log))
		die("lapis did not start on the copy with --nosync");
	struct raw_env raw = {0};
	snprintf(rawdir, sizeof rawdir, "%s/raw-lmdb", top);
	raw_open(&raw, rawdir);
	struct load best[W_N];
	bool have[W_N] = {false};
	memset(best, 0, sizeof best);
	for (int r = 0; r < cfg.rounds; r++)
		for (int k = 0; k < W_N; k++) {
			struct load L;
			if (k == W_RAW) {
				raw_run(&raw, &L);
			} else {
				bool etcd = k == W_E1 || k == W_E16;
				if (etcd && !A->have_etcd)
					continue;
				bool ns = k == W_N1 || k == W_N16;
				const struct server *to = etcd ? &A->srv[K_ETCD]
							  : ns ? &N
							       : &C;
				L = (struct load){
					.port = to->port,
					.nconn = wconns[k],
					.warm = cfg.warm,
					.secs = cfg.secs,
					.gen = etcd ? gen_etcd_put : gen_k8s_create,
					.srv = to->pid,
					.next = (uint64_t)r << 32,
				};
				run_load(&L);
			}
			keep_best(&best[k], &L, &have[k]);
		}
	stop_child(C.pid);
	stop_child(N.pid);
	mdb_env_close(raw.env);
	row_head("req/s");
	for (int k = 0; k < W_N; k++)
		if (have[k])
			row(wname[k], wconns[k], &best[k]);
	printf("    (raw LMDB's srv CPU column is the loop's own CPU)\n");
	printf("  ratios and targets (issue 3):\n");
	target("lapis@1 conn / raw LMDB synced loop, ops/s",
	       best[W_L1].rate / best[W_RAW].rate, 0.8, true);
	if (A->have_etcd)
		target("lapis@16 / etcd@16, req/s",
		       best[W_L16].rate / best[W_E16].rate, 3.0, true);
	printf("    %-58s %7.2f\n", "lapis@16 / lapis@1, req/s (group commit)",
	       best[W_L16].rate / best[W_L1].rate);
	/* At one connection a create's time is the sum of its parts: what
	   the nosync copy takes (where writes run inline on the HTTP
	   thread), plus the synced commit and the hand-over to the writer
	   thread and back. */
	double t_sync = 1e6 / best[W_L1].rate, t_nosync = 1e6 / best[W_N1].rate;
	double t_raw = 1e6 / best[W_RAW].rate;
	printf("  one create at 1 connection: %.0f us = %.0f us without the "
	       "fsyncs (HTTP, registry, engine: lapis nosync, a lone write "
	       "commits on the HTTP thread) + "
	       "%.0f us for its synced commit and the hand-over to the writer "
	       "thread and back (raw LMDB's commit: %.0f us); 0.8x raw needs "
	       "all of it within %.0f us\n",
	       t_sync, t_nosync, t_sync - t_nosync, t_raw, t_raw / 0.8);
	for (int k = 0; k < W_N; k++)
		lat_free(&best[k].lat);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	clk_tck = sysconf(_SC_CLK_TCK);
	long np = sysconf(_SC_NPROCESSORS_ONLN);
	n_cpus = np > 0 ? (unsigned)np : 1;
	static char self_dir[4096], lapis_default[4200];
	ssize_t sl = readlink("/proc/self/exe", self_dir, sizeof self_dir - 1);
	if (sl > 0) {
		self_dir[sl] = 0;
		char *slash = strrchr(self_dir, '/');
		if (slash)
			*slash = 0;
	}
	snprintf(lapis_default, sizeof lapis_default, "%s/lapis", self_dir);
	cfg.lapis = lapis_default;
	cfg.etcd = "etcd";
	parse_args(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		die("curl_global_init failed");

	char top[4096];
	const char *base = cfg.dir ? cfg.dir : getenv("TMPDIR");
	snprintf(top, sizeof top, "%s/bench-http-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(top))
		die("mkdtemp %s: %s", top, strerror(errno));
	struct statfs sf;
	statfs(top, &sf);
	char datadir[4200];
	snprintf(datadir, sizeof datadir, "%s/lapis", top);
	printf("bench-http: %s, %u CPUs, lapis %s, etcd %s, directory %s (%s)\n",
	       MHD_get_version(), n_cpus, cfg.lapis, cfg.etcd, top,
	       (unsigned long)sf.f_type == TMPFS_MAGIC_ ? "tmpfs: S4 fsyncs are free"
							: "not tmpfs");
	printf("dataset: %d ConfigMaps of about 1 KiB in namespace default\n",
	       cfg.objects);

	/* Phase A: lapis --insecure-http --nosync (S5 alone needs none of it). */
	struct phase_a A;
	memset(&A, 0, sizeof A);
	char log[4200];
	snprintf(log, sizeof log, "%s/lapis-a.log", top);
	bool phase_a = want("s1") || want("s2") || want("tls") || want("s3") ||
		       want("s4");
	if (phase_a) {
		if (!lapis_start(&A.srv[K_LAPIS], datadir, false, true, log))
			die("lapis did not start");
		setup(&A, top);
	}

	if (want("s1"))
		run_grid(&A, "S1 GET one object (a random one of the dataset per request)",
			 "req/s", gen_k8s_get, NULL, gen_etcd_get, NULL, false,
			 false);
	if (want("s2"))
		run_grid(&A, "S2 LIST limit=500, each connection walking all pages with continue",
			 "pages/s", gen_k8s_list, resp_k8s_list, gen_etcd_list,
			 resp_etcd_list, true, true);

	struct curl_run cr = {.ca = NULL};
	struct load plain = {0};
	snprintf(cr.base, sizeof cr.base, "http://127.0.0.1:%d", A.srv[K_LAPIS].port);
	snprintf(cr.auth, sizeof cr.auth, "X-Bench: plain");
	if (want("tls"))
		run_curl(&cr, 4, A.srv[K_LAPIS].pid, &plain);

	if (want("s3"))
		s3_all(&A, datadir, top);
	if (phase_a)
		stop_child(A.srv[K_LAPIS].pid);

	if (want("tls"))
		phase_tls(datadir, top, &plain);
	if (want("s4"))
		phase_s4(&A, datadir, top, &sf);

	if (want("s5"))
		phase_s5(top);
	else
		printf("\nS5 endurance: not run (it takes --s5-minutes, 30 by "
		       "default: --only s5 or --s5-minutes M runs it)\n");

	if (phase_a)
		stop_child(A.srv[K_BARE].pid);
	if (A.have_etcd)
		stop_child(A.srv[K_ETCD].pid);
	if (cfg.keep)
		printf("\nkept %s\n", top);
	else
		nftw(top, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	curl_global_cleanup();
	return 0;
}
