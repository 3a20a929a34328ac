/*
 * bench_crd.c -- the CustomResourceDefinition benchmarks of issue 5.
 *
 *   bench-crd [--lapis PATH] [--crds N] [--nosync] [--objects N]
 *             [--updates N] [--seconds S] [--rounds R] [--pin | --no-pin]
 *             [--keep]
 *
 *  1. Starts lapis (--insecure-http; synced commits unless --nosync) on a
 *     fresh data directory and creates N CRDs (default 1,000; ten groups,
 *     each CRD with a small typed schema, the status subresource and a
 *     printer column) by direct HTTP POSTs, one after the other. Every
 *     create must answer 201 and, since lapis decides names and conditions
 *     before the create returns, a LIST of CRDs right after the last one
 *     must show all N Established=True. The time from the first POST to
 *     that LIST's answer is "total time to Established".
 *     Then --updates (default 200) merge patches of the first CRD, each
 *     setting a short name not used before, so that each changes the
 *     accepted names: lapis commits each update and its status write as
 *     one chain (one fsync). Every PATCH must answer 200 and a GET after
 *     the last must show its short name accepted.
 *  2. With all N installed: times /apis, aggregated discovery
 *     (/apis as apidiscovery.k8s.io v2), /openapi/v3 and one group
 *     version's OpenAPI document (the best of 5 requests each).
 *  3. Creates --objects (default 1,000) custom resources of one CRD and as
 *     many ConfigMaps of the same size, then measures GET of a random
 *     object and LIST with limit=500 of the collection, for the custom
 *     resource and the ConfigMap alternately at 1 and 2 connections,
 *     best of R rounds (load from other processes only lowers a rate), and
 *     prints the CR/ConfigMap ratio beside the target (>= 0.95).
 *     Beside the rates: the server's CPU per request (its CPU clock) and the
 *     median over paired rounds of ConfigMap/CR CPU per request, and, where
 *     the kernel lets us count them (perf_event_open; not in most VMs), the
 *     server's user-space instructions per request.
 *
 * Pinning (--pin, the default when we may run on 2 or more CPUs): for the
 * GET/LIST figures (step 3) the server's threads run on one CPU and this
 * process (the load generator) on another, so the two do not take turns
 * on the same core: the spread of single paired rounds narrows. Each
 * request then wakes the other CPU, which on a VM costs more than the
 * request (rates fall several-fold): compare rates only between runs with
 * the same pinning. The choice is printed in the configuration line.
 *
 * A benchmark, not a test: it prints figures and exits 0 whatever they
 * are; 1 when it cannot run; 2 on a usage error.
 *
 * Threads: the main thread, plus one client thread per connection during
 * step 3.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <linux/perf_event.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct {
	const char *lapis;
	int crds, objects, rounds, updates;
	double seconds;
	bool nosync, keep;
	int pin; /* -1: when 2 CPUs or more are ours; 0 off; 1 on */
} cfg = {"build/lapis", 1000, 1000, 3, 200, 2.0, false, false, -1};

/* The CPUs the server and the load generator are pinned to; -1 when not
   pinned. */
static int server_cpu = -1, client_cpu = -1;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static char tmpdir[256];
static pid_t server_pid;

static void cleanup(void)
{
	if (server_pid > 0) {
		kill(server_pid, SIGTERM);
		waitpid(server_pid, NULL, 0);
		server_pid = 0;
	}
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb;
	(void)flag;
	(void)f;
	return remove(p);
}

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "bench-crd: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	cleanup();
	exit(1);
}

/* ------------------------------------------------------------ pinning */

/* Pin thread tid (0: the calling one) to cpu. */
static bool pin_to(pid_t tid, int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (!sched_setaffinity(tid, sizeof set, &set))
		return true;
	fprintf(stderr, "bench-crd: cannot pin thread %d to CPU %d: %s\n",
		(int)tid, cpu, strerror(errno));
	return false;
}

/* Choose the two CPUs (the first two we may run on) when pinning is on or
   left to us and there are two. Only the GET/LIST measurements (step 3)
   run pinned (pin_both), so the CRD creation and discovery figures stay
   comparable with earlier runs. */
static void choose_cpus(void)
{
	cpu_set_t set;
	if (cfg.pin == 0 || sched_getaffinity(0, sizeof set, &set))
		return;
	int cpus[2], n = 0;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	if (n < 2) {
		if (cfg.pin == 1)
			fprintf(stderr, "bench-crd: --pin needs 2 CPUs; "
					"running unpinned\n");
		return;
	}
	server_cpu = cpus[0];
	client_cpu = cpus[1];
}

/* The server's threads (each one: an affinity names one thread) to its CPU,
   this thread (and the client threads it starts later) to the other. */
static void pin_both(void)
{
	if (server_cpu < 0)
		return;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)server_pid);
	DIR *d = opendir(path);
	int n = 0;
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.' &&
		    pin_to((pid_t)atoi(de->d_name), server_cpu))
			n++;
	if (d)
		closedir(d);
	pin_to(0, client_cpu);
	printf("   pinned: the server's %d threads to CPU %d, the load "
	       "generator to CPU %d\n",
	       n, server_cpu, client_cpu);
}

static void describe_config(void)
{
	char pin[128];
	if (server_cpu >= 0)
		snprintf(pin, sizeof pin,
			 "GET/LIST with the server pinned to CPU %d, the load "
			 "generator to CPU %d",
			 server_cpu, client_cpu);
	else
		snprintf(pin, sizeof pin, "not pinned");
	printf("bench-crd: %s, %d CRDs, %d objects of each kind, %d rounds "
	       "of %.1f s, %s; %s; %ld CPUs online\n",
	       cfg.lapis, cfg.crds, cfg.objects, cfg.rounds, cfg.seconds,
	       cfg.nosync ? "--nosync" : "synced commits", pin,
	       sysconf(_SC_NPROCESSORS_ONLN));
}

/* The machine's load averages, for the record (the figures depend on it). */
static void print_load(const char *when)
{
	char buf[128] = "";
	FILE *f = fopen("/proc/loadavg", "re");
	if (f) {
		if (!fgets(buf, sizeof buf, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
	printf("load average %s: %s\n", when, buf[0] ? buf : "unknown");
}

/* ------------------------------------------------------------ instructions */

/* The server's user-space instructions, counted per thread (a counter on a
   running process counts only the thread it names, and inherit covers only
   threads created after it): one counter for each of the server's threads,
   opened once its thread pool runs. Most VMs expose no hardware counters;
   then the figure is left out. */
#define ICOUNT_MAX 256
static struct {
	int fd[ICOUNT_MAX];
	int n;
	bool on;
	char why[160]; /* why not, when off */
} ic;

static int perf_open(pid_t tid)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

static void icount_open(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d) {
		snprintf(ic.why, sizeof ic.why, "%s: %s", path,
			 strerror(errno));
		return;
	}
	struct dirent *de;
	while ((de = readdir(d)) && ic.n < ICOUNT_MAX) {
		if (de->d_name[0] == '.')
			continue;
		int fd = perf_open((pid_t)atoi(de->d_name));
		if (fd < 0) {
			snprintf(ic.why, sizeof ic.why,
				 "perf_event_open(instructions): %s",
				 strerror(errno));
			break;
		}
		ic.fd[ic.n++] = fd;
	}
	closedir(d);
	ic.on = ic.n > 0 && !ic.why[0];
	if (!ic.on) {
		for (int i = 0; i < ic.n; i++)
			close(ic.fd[i]);
		ic.n = 0;
	}
}

/* The instructions the server's threads ran so far; 0 when not counted. */
static uint64_t icount_read(void)
{
	uint64_t sum = 0;
	for (int i = 0; ic.on && i < ic.n; i++) {
		uint64_t v = 0;
		if (read(ic.fd[i], &v, sizeof v) == (ssize_t)sizeof v)
			sum += v;
	}
	return sum;
}

/* ------------------------------------------------------------ HTTP client */

/* One keep-alive connection with one request in flight. */
struct conn {
	int fd;
	int port;
	char *buf; /* the last response's body */
	size_t len, cap;
	char in[65536]; /* bytes read but not yet consumed */
	size_t in_len, in_off;
};

static void conn_open(struct conn *c, int port)
{
	c->port = port;
	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&a, sizeof a))
		die("connect: %s", strerror(errno));
	int one = 1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	c->in_len = c->in_off = 0;
}

static void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
	c->len = c->cap = 0;
}

static void send_all(struct conn *c, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);
		if (w <= 0)
			die("send: %s", strerror(errno));
		p += w;
		n -= (size_t)w;
	}
}

static int getbyte(struct conn *c)
{
	if (c->in_off == c->in_len) {
		ssize_t r = recv(c->fd, c->in, sizeof c->in, 0);
		if (r <= 0)
			die("recv: %s",
			    r ? strerror(errno) : "connection closed");
		c->in_len = (size_t)r;
		c->in_off = 0;
	}
	return (unsigned char)c->in[c->in_off++];
}

static void readline(struct conn *c, char *out, size_t n)
{
	size_t k = 0;
	for (;;) {
		int ch = getbyte(c);
		if (ch == '\n')
			break;
		if (ch != '\r' && k + 1 < n)
			out[k++] = (char)ch;
	}
	out[k] = 0;
}

static void body_put(struct conn *c, size_t n)
{
	if (c->len + n + 1 > c->cap) {
		c->cap = (c->len + n + 1) * 2;
		c->buf = realloc(c->buf, c->cap);
		if (!c->buf)
			die("out of memory");
	}
	while (n) {
		if (c->in_off == c->in_len) {
			ssize_t r = recv(c->fd, c->in, sizeof c->in, 0);
			if (r <= 0)
				die("recv body");
			c->in_len = (size_t)r;
			c->in_off = 0;
		}
		size_t take = c->in_len - c->in_off;
		if (take > n)
			take = n;
		memcpy(c->buf + c->len, c->in + c->in_off, take);
		c->len += take;
		c->in_off += take;
		n -= take;
	}
	c->buf[c->len] = 0;
}

/* Send a request (a body of type ctype, NULL: JSON) and read the whole
   response into c->buf; the status. */
static int request_ct(struct conn *c, const char *method, const char *path,
		      const char *accept, const char *ctype, const char *body)
{
	char head[2048];
	size_t bl = body ? strlen(body) : 0;
	int n = snprintf(
	    head, sizeof head,
	    "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: %s\r\n"
	    "%s%s%sContent-Length: %zu\r\n\r\n",
	    method, path, c->port, accept ? accept : "application/json",
	    body ? "Content-Type: " : "",
	    body ? (ctype ? ctype : "application/json") : "",
	    body ? "\r\n" : "", bl);
	send_all(c, head, (size_t)n);
	if (bl)
		send_all(c, body, bl);
	char line[4096];
	readline(c, line, sizeof line);
	int status = 0;
	if (sscanf(line, "HTTP/1.%*d %d", &status) != 1)
		die("bad status line: %s", line);
	long clen = -1;
	bool chunked = false;
	for (;;) {
		readline(c, line, sizeof line);
		if (!line[0])
			break;
		if (!strncasecmp(line, "Content-Length:", 15))
			clen = atol(line + 15);
		if (!strncasecmp(line, "Transfer-Encoding:", 18) &&
		    strstr(line, "chunked"))
			chunked = true;
	}
	c->len = 0;
	if (chunked) {
		for (;;) {
			readline(c, line, sizeof line);
			size_t sz = strtoul(line, NULL, 16);
			if (!sz) {
				readline(c, line, sizeof line);
				break;
			}
			body_put(c, sz);
			readline(c, line, sizeof line);
		}
	} else if (clen > 0) {
		body_put(c, (size_t)clen);
	}
	if (!c->buf)
		body_put(c, 0);
	return status;
}

static int request(struct conn *c, const char *method, const char *path,
		   const char *accept, const char *body)
{
	return request_ct(c, method, path, accept, NULL, body);
}

/* ------------------------------------------------------------ the server */

static int start_lapis(void)
{
	char data[300], logp[300];
	snprintf(data, sizeof data, "%s/data", tmpdir);
	snprintf(logp, sizeof logp, "%s/lapis.log", tmpdir);
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		int fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		char *argv[] = {(char *)cfg.lapis,
				"serve",
				"--data-dir",
				data,
				"--listen",
				"127.0.0.1:0",
				"--insecure-http",
				cfg.nosync ? "--nosync" : NULL,
				NULL};
		execv(cfg.lapis, argv);
		_exit(127);
	}
	server_pid = pid;
	const char *needle = "lapis: serving http://127.0.0.1:";
	for (int i = 0; i < 600; i++) {
		FILE *f = fopen(logp, "r");
		char line[1024];
		while (f && fgets(line, sizeof line, f)) {
			char *p = strstr(line, needle);
			if (p) {
				fclose(f);
				return atoi(p + strlen(needle));
			}
		}
		if (f)
			fclose(f);
		if (waitpid(pid, NULL, WNOHANG) == pid)
			break;
		usleep(50000);
	}
	server_pid = 0;
	die("lapis did not start; see %s", logp);
}

/* ------------------------------------------------------------ 1. CRDs */

static char *crd_body(int i)
{
	char *b = NULL;
	int g = i % 10;
	if (asprintf(
		&b,
		"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":"
		"\"CustomResourceDefinition\",\"metadata\":{\"name\":"
		"\"w%04ds.g%d.bench.example.com\"},\"spec\":{\"group\":"
		"\"g%d.bench.example.com\",\"scope\":\"Namespaced\",\"names\":"
		"{\"plural\":\"w%04ds\",\"kind\":\"W%04d\"},\"versions\":[{"
		"\"name\":\"v1\",\"served\":true,\"storage\":true,"
		"\"subresources\":{\"status\":{}},\"additionalPrinterColumns\":"
		"[{\"name\":\"Size\",\"type\":\"integer\",\"jsonPath\":"
		"\".spec.size\"}],\"schema\":{\"openAPIV3Schema\":{\"type\":"
		"\"object\",\"properties\":{\"spec\":{\"type\":\"object\","
		"\"properties\":{\"size\":{\"type\":\"integer\",\"minimum\":0,"
		"\"default\":1},\"name\":{\"type\":\"string\",\"maxLength\":64}"
		","
		"\"data\":{\"type\":\"string\"},\"tags\":{\"type\":\"array\","
		"\"items\":{\"type\":\"string\"}}}},\"status\":{\"type\":"
		"\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}}}]"
		"}}",
		i, g, g, i, i) < 0)
		die("out of memory");
	return b;
}

static int count_established(const char *body)
{
	json_t *l = json_loads(body, 0, NULL);
	int n = 0;
	size_t i, j;
	json_t *it, *c;
	json_array_foreach(json_object_get(l, "items"), i, it)
	{
		json_array_foreach(
		    json_object_get(json_object_get(it, "status"),
				    "conditions"),
		    j, c)
		{
			const char *t =
			    json_string_value(json_object_get(c, "type"));
			const char *s =
			    json_string_value(json_object_get(c, "status"));
			if (t && s && !strcmp(t, "Established") &&
			    !strcmp(s, "True"))
				n++;
		}
	}
	json_decref(l);
	return n;
}

/* The accepted short names of the CRD in body include name. */
static bool short_accepted(const char *body, const char *name)
{
	json_t *crd = json_loads(body, 0, NULL);
	json_t *sn = json_object_get(
	    json_object_get(json_object_get(crd, "status"), "acceptedNames"),
	    "shortNames");
	bool found = false;
	size_t i;
	json_t *v;
	json_array_foreach(sn, i, v) found =
	    found ||
	    !strcmp(json_string_value(v) ? json_string_value(v) : "", name);
	json_decref(crd);
	return found;
}

/* cfg.updates merge patches of CRD 0, each with one new short name
   (without a resourceVersion: the answer is the update at R, the status
   write then is R+1). */
static void bench_updates(struct conn *c)
{
	static const char path[] = "/apis/apiextensions.k8s.io/v1/"
				   "customresourcedefinitions/"
				   "w0000s.g0.bench.example.com";
	char sn[32] = "";
	double t0 = now_s();
	for (int i = 0; i < cfg.updates; i++) {
		char b[128];
		snprintf(sn, sizeof sn, "u%d", i);
		snprintf(b, sizeof b,
			 "{\"spec\":{\"names\":{\"shortNames\":[\"%s\"]}}}",
			 sn);
		int st = request_ct(c, "PATCH", path, NULL,
				    "application/merge-patch+json", b);
		if (st != 200)
			die("update %d of CRD 0: %d %s", i, st, c->buf);
	}
	double t = now_s() - t0;
	if (cfg.updates && (request(c, "GET", path, NULL, NULL) != 200 ||
			    !short_accepted(c->buf, sn)))
		die("CRD 0: short name %s not accepted: %s", sn, c->buf);
	printf("1. %d CRD updates by PATCH, each accepting a new short name "
	       "(%s): %.2f s (%.2f ms each)\n",
	       cfg.updates, cfg.nosync ? "--nosync" : "synced commits", t,
	       cfg.updates ? t * 1000 / cfg.updates : 0.0);
}

static void bench_crds(int port)
{
	struct conn c = {.fd = -1};
	conn_open(&c, port);
	double t0 = now_s(), slowest = 0;
	for (int i = 0; i < cfg.crds; i++) {
		char *b = crd_body(i);
		double t = now_s();
		int st = request(
		    &c, "POST",
		    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
		    NULL, b);
		t = now_s() - t;
		if (t > slowest)
			slowest = t;
		free(b);
		if (st != 201)
			die("create of CRD %d: %d %s", i, st, c.buf);
	}
	double t_posts = now_s() - t0;
	int st =
	    request(&c, "GET",
		    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
		    NULL, NULL);
	double t_all = now_s() - t0;
	int est = st == 200 ? count_established(c.buf) : -1;
	printf("1. %d CRDs by POST (%s): posts %.2f s (%.2f ms each, slowest "
	       "%.1f ms); all Established (%d of %d) by %.2f s   target < 10 "
	       "s: %s\n",
	       cfg.crds, cfg.nosync ? "--nosync" : "synced commits", t_posts,
	       t_posts * 1000 / cfg.crds, slowest * 1000, est, cfg.crds, t_all,
	       t_all < 10 && est == cfg.crds ? "met" : "MISSED");
	bench_updates(&c);
	static const struct {
		const char *what, *path, *accept;
	} q[] = {
	    {"/apis", "/apis", NULL},
	    {"aggregated discovery /apis", "/apis",
	     "application/"
	     "json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
	    {"/openapi/v3", "/openapi/v3", NULL},
	    {"/openapi/v3/apis/g0.bench.example.com/v1",
	     "/openapi/v3/apis/g0.bench.example.com/v1", NULL},
	};
	for (size_t k = 0; k < sizeof q / sizeof q[0]; k++) {
		double best = 1e9;
		size_t bytes = 0;
		for (int r = 0; r < 5; r++) {
			double t = now_s();
			st = request(&c, "GET", q[k].path, q[k].accept, NULL);
			t = now_s() - t;
			if (st != 200)
				die("%s: %d", q[k].path, st);
			bytes = c.len;
			if (t < best)
				best = t;
		}
		printf("2. %-42s %7.2f ms  (%zu bytes)\n", q[k].what,
		       best * 1000, bytes);
	}
	conn_close(&c);
}

/* ------------------------------------------------------------ 3. GET/LIST */

struct load {
	int port;
	const char *prefix; /* collection path */
	bool list;
	double seconds;
	unsigned seed;
	long done;
};

/* The continue token of a list page, found by scanning its metadata (which
   comes before the items) rather than parsing the half-megabyte page: a
   client that parses every page measures itself, not the server. */
static bool list_continue(const char *page, char *out, size_t n)
{
	const char *items = strstr(page, "\"items\":");
	const char *k = strstr(page, "\"continue\":\"");
	if (!k || (items && k > items))
		return false;
	k += strlen("\"continue\":\"");
	const char *e = strchr(k, '"');
	if (!e || e == k || (size_t)(e - k) >= n)
		return false;
	memcpy(out, k, (size_t)(e - k));
	out[e - k] = 0;
	return true;
}

static void *load_run(void *arg)
{
	struct load *l = arg;
	struct conn c = {.fd = -1};
	conn_open(&c, l->port);
	double end = now_s() + l->seconds;
	char path[512];
	while (now_s() < end) {
		if (l->list) {
			snprintf(path, sizeof path, "%s?limit=500", l->prefix);
			for (;;) {
				if (request(&c, "GET", path, NULL, NULL) != 200)
					die("list %s", path);
				l->done++;
				char cont[400];
				if (!list_continue(c.buf, cont, sizeof cont))
					break;
				snprintf(path, sizeof path,
					 "%s?limit=500&continue=%s", l->prefix,
					 cont);
			}
		} else {
			int i = (int)(rand_r(&l->seed) % (unsigned)cfg.objects);
			snprintf(path, sizeof path, "%s/o%05d", l->prefix, i);
			if (request(&c, "GET", path, NULL, NULL) != 200)
				die("get %s: %s", path, c.buf);
			l->done++;
		}
	}
	conn_close(&c);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	if (!n)
		return 0;
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The median over np paired rounds of a ratio (target >= 0.95), with the
   spread of the rounds: how far one round is to be trusted. Sorts v. */
static void print_paired(const char *what, int conns, const char *ratio,
			 double *v, int np)
{
	double med = median(v, np);
	printf("   %s, %d conn: median over %d paired rounds of %s %.2f "
	       "(rounds %.2f-%.2f)   target >= 0.95: %s\n",
	       what, conns, np, ratio, med, np ? v[0] : 0, np ? v[np - 1] : 0,
	       med >= 0.95 ? "met" : "MISSED");
}

/* The server's CPU time (user + system, all threads) in seconds: its CPU
   clock (nanoseconds), or /proc's ticks (10 ms, too coarse for a round's
   few dozen list pages) when the clock cannot be had. */
static double server_cpu_s(void)
{
	clockid_t cid;
	struct timespec ts;
	if (!clock_getcpuclockid(server_pid, &cid) && !clock_gettime(cid, &ts))
		return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)server_pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	unsigned long long ut = 0, st = 0;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
				"%llu %llu",
			 &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Requests per second over cfg.seconds; *cpu_us gets the server's CPU per
   request (the fair figure when the client shares the machine's cores),
   *ins its user-space instructions per request (0 when not counted). */
static double rate(int port, const char *prefix, bool list, int conns,
		   double *cpu_us, double *ins)
{
	uint64_t ins0 = icount_read();
	double cpu0 = server_cpu_s();
	pthread_t th[8];
	struct load l[8];
	for (int i = 0; i < conns; i++) {
		l[i] = (struct load){
		    port, prefix, list, cfg.seconds, 1234u + (unsigned)i, 0};
		pthread_create(&th[i], NULL, load_run, &l[i]);
	}
	long total = 0;
	for (int i = 0; i < conns; i++) {
		pthread_join(th[i], NULL);
		total += l[i].done;
	}
	*cpu_us = total ? (server_cpu_s() - cpu0) * 1e6 / (double)total : 0;
	*ins = total ? (double)(icount_read() - ins0) / (double)total : 0;
	return (double)total / cfg.seconds;
}

static void bench_reads(int port)
{
	struct conn c = {.fd = -1};
	conn_open(&c, port);
	char pad[801];
	memset(pad, 'x', sizeof pad - 1);
	pad[sizeof pad - 1] = 0;
	/* The same request on both sides means the same bytes: the custom
	   resource's longer apiVersion and its metadata.generation outweigh
	   the ConfigMap's kind by 30 bytes, so the ConfigMap's pad is longer
	   by as much (the sizes are printed below). */
	char cm_pad[831];
	memset(cm_pad, 'x', sizeof cm_pad - 1);
	cm_pad[sizeof cm_pad - 1] = 0;
	for (int i = 0; i < cfg.objects; i++) {
		char *b;
		if (asprintf(&b,
			     "{\"apiVersion\":\"g0.bench.example.com/"
			     "v1\",\"kind\":\"W0000\","
			     "\"metadata\":{\"name\":\"o%05d\",\"labels\":{"
			     "\"app\":\"bench\"}},"
			     "\"spec\":{\"size\":%d,\"name\":\"object "
			     "%d\",\"data\":\"%s\"}}",
			     i, i, i, pad) < 0)
			die("out of memory");
		int st = request(
		    &c, "POST",
		    "/apis/g0.bench.example.com/v1/namespaces/default/w0000s",
		    NULL, b);
		free(b);
		if (st != 201)
			die("create CR: %d %s", st, c.buf);
		if (asprintf(&b,
			     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
			     "\"metadata\":"
			     "{\"name\":\"o%05d\",\"labels\":{\"app\":"
			     "\"bench\"}},\"data\":"
			     "{\"size\":\"%d\",\"name\":\"object "
			     "%d\",\"data\":\"%s\"}}",
			     i, i, i, cm_pad) < 0)
			die("out of memory");
		st = request(&c, "POST",
			     "/api/v1/namespaces/default/configmaps", NULL, b);
		free(b);
		if (st != 201)
			die("create ConfigMap: %d %s", st, c.buf);
	}
	request(
	    &c, "GET",
	    "/apis/g0.bench.example.com/v1/namespaces/default/w0000s/o00000",
	    NULL, NULL);
	size_t cr_len = c.len;
	request(&c, "GET", "/api/v1/namespaces/default/configmaps/o00000", NULL,
		NULL);
	printf("3. %d custom resources (%zu bytes each) and %d ConfigMaps (%zu "
	       "bytes), "
	       "%d CRDs installed; best of %d rounds of %.1f s; %s\n",
	       cfg.objects, cr_len, cfg.objects, c.len, cfg.crds, cfg.rounds,
	       cfg.seconds,
	       server_cpu >= 0 ? "server and load generator pinned to one CPU "
				 "each"
			       : "not pinned");
	pin_both();
	icount_open(server_pid);
	if (ic.on)
		printf("   server instructions per request: counted on %d "
		       "threads\n",
		       ic.n);
	else
		printf("   server instructions per request: not counted (%s)\n",
		       ic.why);
	conn_close(&c);
	const char *cr =
	    "/apis/g0.bench.example.com/v1/namespaces/default/w0000s";
	const char *cm = "/api/v1/namespaces/default/configmaps";
	for (int list = 0; list < 2; list++) {
		for (int conns = 1; conns <= 2; conns++) {
			double best_cr = 0, best_cm = 0;
			double cpu_cr = 1e18, cpu_cm = 1e18;
			double paired[64], tput[64], ins_cr[64], ins_cm[64];
			int np = 0;
			for (int r = 0; r < cfg.rounds; r++) {
				double ca, cb, a, b, ia, ib;
				/* alternate which goes first, so drift in the
				   machine's load falls on both alike */
				if (r % 2) {
					b = rate(port, cm, list, conns, &cb,
						 &ib);
					a = rate(port, cr, list, conns, &ca,
						 &ia);
				} else {
					a = rate(port, cr, list, conns, &ca,
						 &ia);
					b = rate(port, cm, list, conns, &cb,
						 &ib);
				}
				if (np < 64 && ca > 0) {
					paired[np] = cb / ca;
					tput[np] = b > 0 ? a / b : 0;
					ins_cr[np] = ia;
					ins_cm[np] = ib;
					np++;
				}
				best_cr = a > best_cr ? a : best_cr;
				best_cm = b > best_cm ? b : best_cm;
				cpu_cr = ca < cpu_cr ? ca : cpu_cr;
				cpu_cm = cb < cpu_cm ? cb : cpu_cm;
			}
			const char *what = list ? "LIST limit=500 (pages)"
						: "GET one object       ";
			printf("   %s, %d conn: CR %8.0f/s  ConfigMap %8.0f/s  "
			       "ratio %.2f"
			       "   target >= 0.95: %s\n",
			       what, conns, best_cr, best_cm, best_cr / best_cm,
			       best_cr / best_cm >= 0.95 ? "met" : "MISSED");
			printf("   %s, %d conn: server CPU per request CR "
			       "%6.1f us  ConfigMap %6.1f us  ratio "
			       "ConfigMap/CR %.2f   target >= 0.95: %s\n",
			       what, conns, cpu_cr, cpu_cm, cpu_cm / cpu_cr,
			       cpu_cm / cpu_cr >= 0.95 ? "met" : "MISSED");
			if (ic.on) {
				double icr = median(ins_cr, np),
				       icm = median(ins_cm, np);
				printf(
				    "   %s, %d conn: server instructions per "
				    "request (median) CR %.0f  ConfigMap "
				    "%.0f  ratio ConfigMap/CR %.3f\n",
				    what, conns, icr, icm,
				    icr > 0 ? icm / icr : 0);
			}
			/* CPU per request, then throughput: each round's CR and
			   ConfigMap figures were taken back to back, so their
			   ratio is free of the load drifting between rounds,
			   which a best of rounds on each side is not */
			print_paired(what, conns, "ConfigMap/CR server CPU per "
						  "request", paired, np);
			print_paired(what, conns, "CR/ConfigMap req/s", tput,
				     np);
		}
	}
}

static const char usage[] =
    "usage: bench-crd [--lapis PATH] [--crds N] [--nosync] [--objects N]\n"
    "                 [--updates N] [--seconds S] [--rounds R] [--pin | --no-pin] "
    "[--keep]\n"
    "\n"
    "  --lapis PATH   the server to run (default build/lapis)\n"
    "  --crds N       CRDs to create and time (default 1000)\n"
    "  --nosync       the server skips fsync at commit\n"
    "  --objects N    custom resources and ConfigMaps each (default 1000)\n"
    "  --updates N    CRD updates by PATCH to time (default 200)\n"
    "  --seconds S    length of one measured run (default 2)\n"
    "  --rounds R     paired CR/ConfigMap rounds per figure (default 3)\n"
    "  --pin          GET/LIST with the server on one CPU, the load\n"
    "                 generator on another (the default when 2 or more\n"
    "                 CPUs are ours)\n"
    "  --no-pin       let the scheduler place both\n"
    "  --keep         keep the data directory and log\n";

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--lapis") && v)
			cfg.lapis = argv[++i];
		else if (!strcmp(a, "--crds") && v)
			cfg.crds = atoi(argv[++i]);
		else if (!strcmp(a, "--objects") && v)
			cfg.objects = atoi(argv[++i]);
		else if (!strcmp(a, "--updates") && v)
			cfg.updates = atoi(argv[++i]);
		else if (!strcmp(a, "--rounds") && v)
			cfg.rounds = atoi(argv[++i]);
		else if (!strcmp(a, "--seconds") && v)
			cfg.seconds = atof(argv[++i]);
		else if (!strcmp(a, "--nosync"))
			cfg.nosync = true;
		else if (!strcmp(a, "--keep"))
			cfg.keep = true;
		else if (!strcmp(a, "--pin"))
			cfg.pin = 1;
		else if (!strcmp(a, "--no-pin"))
			cfg.pin = 0;
		else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		} else {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (cfg.crds < 1 || cfg.objects < 1 || cfg.rounds < 1 ||
	    cfg.updates < 0 || cfg.seconds <= 0) {
		fprintf(stderr, "bench-crd: --crds, --objects, --rounds, "
				"--seconds must be > 0, --updates >= 0\n");
		return 2;
	}
	const char *t = getenv("TMPDIR");
	snprintf(tmpdir, sizeof tmpdir, "%s/bench-crd-XXXXXX", t ? t : "/tmp");
	if (!mkdtemp(tmpdir))
		die("mkdtemp: %s", strerror(errno));
	choose_cpus();
	describe_config();
	print_load("at start");
	int port = start_lapis();
	bench_crds(port);
	bench_reads(port);
	print_load("at end");
	cleanup();
	if (!cfg.keep)
		nftw(tmpdir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	else
		printf("kept %s\n", tmpdir);
	return 0;
}
