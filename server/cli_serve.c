/*
 * cli_serve.c -- `lapis serve`: the Kubernetes API on a data directory.
 *
 * Start: hold the data directory's lock, open the store, create the
 * built-in namespaces on a fresh store, load or create the credentials
 * (pki/, admin.token), start the compactor and the HTTP server, write
 * DIR/kubeconfig, then print the URL and the KUBECONFIG line. Stop on
 * SIGINT or SIGTERM: no new connections, watches ended, in-flight requests
 * finished, the store closed; exit 0.
 *
 * Signals: SIGINT and SIGTERM are blocked before any thread starts, so every
 * thread inherits the mask and the main thread alone takes them with
 * sigwait(). No handler runs.
 *
 * Main thread only.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../controllers/ctl.h"
#include "api.h"
#include "cli_common.h"
#include "crd.h"
#include "ctlops.h"
#include "http.h"
#include "lapis/clock.h"
#include "lapis/log.h"
#include "objects.h"
#include "pki.h"
#include "quantity.h"

/* The help text, laid out as it prints. */
/* clang-format off */
static const char usage[] =
    "usage: lapis serve [--data-dir DIR] [--listen ADDR:PORT] [--ephemeral]\n"
    "                   [--insecure-http [--force-insecure]] [--tls-san NAME]...\n"
    "                   [--nosync] [--compaction-interval DUR]\n"
    "                   [--request-timeout DUR] [--idle-timeout DUR]\n"
    "                   [--read-header-timeout DUR]\n"
    "                   [--controllers LIST] [--event-ttl DUR]\n"
    "                   [--write-workers N] [--read-cache-mb N]\n"
    "                   [--quota-bytes SIZE]\n"
    "\n"
    "Serve the Kubernetes API for built-in resources on a data directory,\n"
    "creating it on first start (store, CA and serving certificate, admin\n"
    "token, kubeconfig). Prints the URL and `export KUBECONFIG=DIR/kubeconfig`.\n"
    "Stops cleanly on SIGINT or SIGTERM.\n"
    "\n"
    "Options:\n"
    "  -d, --data-dir DIR            data directory (default " CLI_DEFAULT_DATA_DIR ")\n"
    "  -l, --listen ADDR:PORT        address to listen on (default 127.0.0.1:6443;\n"
    "                                port 0 picks a free port; [::1]:PORT for IPv6)\n"
    "      --ephemeral               a throwaway store in a temporary directory,\n"
    "                                no fsync, removed on exit (tests)\n"
    "      --insecure-http           plain HTTP, no authentication, full rights\n"
    "                                (like kube's old insecure port); refused on a\n"
    "                                non-loopback address unless --force-insecure\n"
    "      --tls-san NAME            an extra DNS name or IP in the serving\n"
    "                                certificate (repeatable)\n"
    "      --nosync                  do not fsync at commit (a machine crash may\n"
    "                                lose recent writes); a write then commits\n"
    "                                on its HTTP thread unless another commit\n"
    "                                is under way\n"
    "      --compaction-interval DUR compact history older than one interval,\n"
    "                                every interval, like kube-apiserver; Go\n"
    "                                syntax: 250ms, 2s, 5m, 1h30m; 0 turns it off\n"
    "                                (default 5m)\n"
    "      --request-timeout DUR     the longest a write may take; then\n"
    "                                the client gets 504 Timeout (the write may\n"
    "                                still commit, as in kube). Default 60s; a\n"
    "                                request's ?timeout= may shorten it. Watches\n"
    "                                end after their timeoutSeconds instead\n"
    "      --idle-timeout DUR        close idle or stalled connections after this\n"
    "                                (default 120s; watches carry their own\n"
    "                                timeoutSeconds and bookmarks)\n"
    "      --read-header-timeout DUR close a connection whose request line and\n"
    "                                headers take longer than this (default\n"
    "                                32s, as kube-apiserver's; between requests\n"
    "                                it counts after --idle-timeout)\n"
    "      --controllers LIST        the controllers to run: names, * for all,\n"
    "                                -name for not that one, in order (default\n"
    "                                *; \"*,-gc\" runs all but the garbage\n"
    "                                collector; \"\" none). Known: namespace\n"
    "                                (empties and finalizes deleted namespaces),\n"
    "                                gc (ownerReferences garbage collection;\n"
    "                                also called garbagecollector),\n"
    "                                crd-finalizer (deletes a deleted CRD's\n"
    "                                custom resources, then the CRD),\n"
    "                                crd-naming (gives a CRD whose names\n"
    "                                clashed its names once they are free),\n"
    "                                event-ttl (deletes Events --event-ttl\n"
    "                                after their last write)\n"
    "      --event-ttl DUR           how long an Event is kept after its last\n"
    "                                write, as kube-apiserver's (default 1h;\n"
    "                                0 keeps them)\n"
    "      --write-workers N         writes in flight at once, each on a fiber\n"
    "                                that waits for the group commit without a\n"
    "                                thread: up to N writes share one fsync, more\n"
    "                                wait in order (default 64; 1 to 4096)\n"
    "      --read-cache-mb N         MiB of objects kept after a GET read them,\n"
    "                                answering later GETs of the same objects\n"
    "                                until the next write commits, and as much\n"
    "                                again of whole GET answers (default 32;\n"
    "                                0 turns both off)\n"
    "      --quota-bytes SIZE        as etcd's --quota-backend-bytes: once the\n"
    "                                store's pages in use pass SIZE (a kube\n"
    "                                quantity: bytes, or with Ki, Mi, Gi, Ti,\n"
    "                                K, M, G, T), writes that put fail with a\n"
    "                                500 'the store is full' while deletes go\n"
    "                                on, until deletes and compaction free\n"
    "                                pages; the file stops at SIZE + SIZE/4 +\n"
    "                                64 MiB (default 0: no quota, the disk is\n"
    "                                the limit)\n"
    "  -h, --help                    show this help\n"
    "\n"
    "The data directory holds store/ (the LMDB environment), pki/, admin.token,\n"
    "kubeconfig and lapis.lock (held while serving: a second server on the same\n"
    "directory is refused).\n";
/* clang-format on */

/* kube-apiserver compacts etcd every 5 minutes by default. */
#define DEFAULT_COMPACTION_MS (5ULL * 60 * 1000)
#define MAX_SANS 32

/* --quota-bytes: a kube quantity (resource.ParseQuantity: "16Mi",
   "2G", "1048576") that is a whole, non-negative number of bytes. */
static bool parse_size(const char *s, uint64_t *out)
{
	struct srv_qty q;
	int64_t n;
	if (srv_qty_parse(s, strlen(s), &q) || srv_qty_sign(&q) < 0 ||
	    !srv_qty_to_int(&q, &n))
		return false;
	*out = (uint64_t)n;
	return true;
}

/* A store directory (data.mdb, no store/ of its own) given as a data
   directory would get a second, empty cluster made inside it (found by an
   audit). */
static bool is_store_dir(const char *dir)
{
	char *dm = cli_path_join(dir, "data.mdb");
	char *st = cli_path_join(dir, "store");
	bool is = dm && st && access(dm, F_OK) == 0 && access(st, F_OK) != 0;
	free(dm);
	free(st);
	return is;
}

static bool loopback(const char *listen)
{
	char host[128];
	const char *colon = strrchr(listen, ':');
	size_t n = colon ? (size_t)(colon - listen) : strlen(listen);
	if (n >= sizeof host)
		return false;
	memcpy(host, listen, n);
	host[n] = 0;
	if (host[0] == '[') {
		memmove(host, host + 1, n);
		char *e = strchr(host, ']');
		if (e)
			*e = 0;
	}
	if (!strcmp(host, "localhost") || !strcmp(host, "::1"))
		return true;
	struct in_addr a;
	return inet_pton(AF_INET, host, &a) == 1 &&
	       (ntohl(a.s_addr) >> 24) == 127;
}

/* The URL clients use: a wildcard address is reached through loopback. */
static int parse_dur_opt(const char *name, const char *arg, uint64_t *ms)
{
	if (cli_parse_duration(arg, ms) != 0) {
		fprintf(stderr,
			"lapis serve: invalid %s '%s' (examples: 0, 250ms, 2s, "
			"5m, 1h30m)\n",
			name, arg);
		return -1;
	}
	return 0;
}

/* kube-apiserver's bootstrap controllers, while serving: the kubernetes
   Service and its Endpoints every 10 s (created if missing, the Service
   not otherwise changed), the system namespaces every minute (created if
   missing: kube-node-lease is the one a user can delete). The environment
   variable LAPIS_BOOTSTRAP_INTERVAL_MS shortens the 10 s (tests); the
   namespaces follow at 6 times it. */
#define BOOT_INTERVAL_MS 10000
#define BOOT_NS_EVERY 6

struct boot {
	eng *e;
	const char *cidr;
	char host[INET6_ADDRSTRLEN + 2];
	int port;
	int64_t interval_ms;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	pthread_t th;
	bool started;
};

static void *boot_main(void *arg)
{
	struct boot *b = arg;
	pthread_setname_np(pthread_self(), "bootstrap");
	pthread_mutex_lock(&b->mu);
	for (unsigned tick = 1; !b->stop; tick++) {
		struct timespec dl = lp_mono_deadline(b->interval_ms);
		while (!b->stop &&
		       pthread_cond_timedwait(&b->cv, &b->mu, &dl) != ETIMEDOUT)
			;
		if (b->stop)
			break;
		pthread_mutex_unlock(&b->mu);
		lp_err rc = srv_bootstrap_kubernetes_service(
		    b->e, b->cidr, b->host, b->port, false);
		if (rc && rc != LP_E_EXISTS)
			lp_warn("the kubernetes Service in default: %s",
				lp_strerror(rc));
		if (tick % BOOT_NS_EVERY == 0 && (rc = srv_bootstrap(b->e)))
			lp_warn("the system namespaces: %s", lp_strerror(rc));
		pthread_mutex_lock(&b->mu);
	}
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

static void boot_start(struct boot *b)
{
	b->interval_ms =
	    lp_env_ms("LAPIS_BOOTSTRAP_INTERVAL_MS", BOOT_INTERVAL_MS);
	pthread_mutex_init(&b->mu, NULL);
	lp_cond_init_mono(&b->cv);
	b->started = pthread_create(&b->th, NULL, boot_main, b) == 0;
	if (!b->started)
		lp_warn("cannot start the bootstrap controller: the kubernetes "
			"Service and the system namespaces are not recreated");
}

static void boot_stop(struct boot *b)
{
	if (!b->started)
		return;
	pthread_mutex_lock(&b->mu);
	b->stop = true;
	pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
	pthread_join(b->th, NULL);
	b->started = false;
	pthread_mutex_destroy(&b->mu);
	pthread_cond_destroy(&b->cv);
}

/* How the writes of this run were grouped: txns per group commit, and how
   many groups a lone caller committed on its own thread (engine/writer.c). */
static void log_commit_stats(eng *e)
{
	if (!e)
		return;
	struct eng_stats st;
	eng_stats(e, &st);
	if (!st.groups)
		return;
	lp_info("writes: %llu txns in %llu group commits (%.1f per group; %llu "
		"groups committed by their caller)",
		(unsigned long long)st.txns, (unsigned long long)st.groups,
		(double)st.txns / (double)st.groups,
		(unsigned long long)st.led_groups);
}

/* How many object reads the engine's read cache answered (rcache.c). */
static void log_read_cache_stats(eng *e)
{
	if (!e)
		return;
	uint64_t hits, misses, bytes;
	eng_read_cache_stats(e, &hits, &misses, &bytes);
	if (hits + misses)
		lp_info("read cache: %llu of %llu object reads answered from "
			"it, %llu bytes held",
			(unsigned long long)hits,
			(unsigned long long)(hits + misses),
			(unsigned long long)bytes);
}

int cli_serve(int argc, char **argv)
{
	enum {
		OPT_NOSYNC = 256,
		OPT_COMPACTION,
		OPT_INSECURE,
		OPT_FORCE,
		OPT_EPHEMERAL,
		OPT_SAN,
		OPT_REQ_TIMEOUT,
		OPT_IDLE_TIMEOUT,
		OPT_HEAD_TIMEOUT,
		OPT_SVC_RANGE,
		OPT_CONTROLLERS,
		OPT_WRITE_WORKERS,
		OPT_EVENT_TTL,
		OPT_READ_CACHE,
		OPT_QUOTA,
	};
	static const struct option opts[] = {
	    {"data-dir", required_argument, NULL, 'd'},
	    {"listen", required_argument, NULL, 'l'},
	    {"nosync", no_argument, NULL, OPT_NOSYNC},
	    {"compaction-interval", required_argument, NULL, OPT_COMPACTION},
	    {"insecure-http", no_argument, NULL, OPT_INSECURE},
	    {"force-insecure", no_argument, NULL, OPT_FORCE},
	    {"ephemeral", no_argument, NULL, OPT_EPHEMERAL},
	    {"tls-san", required_argument, NULL, OPT_SAN},
	    {"request-timeout", required_argument, NULL, OPT_REQ_TIMEOUT},
	    {"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
	    {"read-header-timeout", required_argument, NULL, OPT_HEAD_TIMEOUT},
	    {"service-cluster-ip-range", required_argument, NULL,
	     OPT_SVC_RANGE},
	    {"controllers", required_argument, NULL, OPT_CONTROLLERS},
	    {"write-workers", required_argument, NULL, OPT_WRITE_WORKERS},
	    {"event-ttl", required_argument, NULL, OPT_EVENT_TTL},
	    {"read-cache-mb", required_argument, NULL, OPT_READ_CACHE},
	    {"quota-bytes", required_argument, NULL, OPT_QUOTA},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *dir = CLI_DEFAULT_DATA_DIR;
	const char *listen = "127.0.0.1:6443";
	const char *svc_range = "10.96.0.0/12";
	int nosync = 0, insecure = 0, force = 0, ephemeral = 0;
	const char *sans[MAX_SANS];
	size_t n_sans = 0;
	uint64_t compaction_ms = DEFAULT_COMPACTION_MS;
	uint64_t req_ms = 60000, idle_ms = 120000, head_ms = 32000;
	uint64_t event_ttl_ms = (uint64_t)ctl_event_ttl();
	uint32_t controllers = 0;
	char cmsg[256];
	if (ctl_parse_enabled("*", &controllers, cmsg, sizeof cmsg) != LP_OK)
		return CLI_FAIL;
	unsigned write_workers = 0;
	int64_t read_cache = 0; /* the engine's default */
	uint64_t quota = 0;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:l:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'l':
			listen = optarg;
			break;
		case OPT_NOSYNC:
			nosync = 1;
			break;
		case OPT_INSECURE:
			insecure = 1;
			break;
		case OPT_FORCE:
			force = 1;
			break;
		case OPT_EPHEMERAL:
			ephemeral = 1;
			break;
		case OPT_SVC_RANGE:
			svc_range = optarg;
			break;
		case OPT_SAN:
			if (n_sans == MAX_SANS) {
				fprintf(stderr, "lapis serve: at most %d --tls-san\n",
					MAX_SANS);
				return cli_usage(usage, 1);
			}
			sans[n_sans++] = optarg;
			break;
		case OPT_COMPACTION:
			if (parse_dur_opt("--compaction-interval", optarg,
					  &compaction_ms))
				return cli_usage(usage, 1);
			break;
		case OPT_EVENT_TTL:
			if (parse_dur_opt("--event-ttl", optarg, &event_ttl_ms) ||
			    event_ttl_ms > INT64_MAX)
				return cli_usage(usage, 1);
			break;
		case OPT_REQ_TIMEOUT:
			if (parse_dur_opt("--request-timeout", optarg, &req_ms))
				return cli_usage(usage, 1);
			break;
		case OPT_IDLE_TIMEOUT:
			if (parse_dur_opt("--idle-timeout", optarg, &idle_ms))
				return cli_usage(usage, 1);
			break;
		case OPT_HEAD_TIMEOUT:
			if (parse_dur_opt("--read-header-timeout", optarg,
					  &head_ms))
				return cli_usage(usage, 1);
			if (!head_ms) {
				fprintf(stderr, "lapis serve: "
						"--read-header-timeout must be "
						"more than 0\n");
				return cli_usage(usage, 1);
			}
			break;
		case OPT_CONTROLLERS:
			if (ctl_parse_enabled(optarg, &controllers, cmsg,
					      sizeof cmsg) != LP_OK) {
				fprintf(stderr, "lapis serve: --controllers: %s\n",
					cmsg);
				return cli_usage(usage, 1);
			}
			break;
		case OPT_QUOTA:
			if (!parse_size(optarg, &quota) ||
			    (quota && quota < (1u << 20))) {
				fprintf(
				    stderr,
				    "lapis serve: --quota-bytes: want 0 or a "
				    "size of at least 1Mi (bytes, or with "
				    "Ki, Mi, Gi, Ti, K, M, G, T), not '%s'\n",
				    optarg);
				return cli_usage(usage, 1);
			}
			break;
		case OPT_READ_CACHE: {
			char *end;
			errno = 0;
			long n = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || n < 0 ||
			    n > 1024 * 1024) {
				fprintf(stderr,
					"lapis serve: --read-cache-mb: "
					"want 0 to 1048576, not '%s'\n",
					optarg);
				return cli_usage(usage, 1);
			}
			read_cache = n ? (int64_t)n << 20 : -1;
			break;
		}
		case OPT_WRITE_WORKERS: {
			char *end;
			errno = 0;
			long n = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || n < 1 || n > 4096) {
				fprintf(stderr, "lapis serve: --write-workers: "
						"want 1 to 4096, not '%s'\n",
					optarg);
				return cli_usage(usage, 1);
			}
			write_workers = (unsigned)n;
			break;
		}
		case 'h':
			return cli_usage(usage, 0);
		default:
			return cli_usage(usage, 1);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "lapis serve: unexpected argument '%s'\n",
			argv[optind]);
		return cli_usage(usage, 1);
	}
	if (insecure && !force && !loopback(listen)) {
		fprintf(stderr, "lapis serve: --insecure-http on the non-loopback "
				"address %s gives everyone full rights; add "
				"--force-insecure if you mean it\n",
			listen);
		return CLI_USAGE;
	}

	/* usage errors before anything is made on the disk */
	struct sockaddr_storage lss;
	socklen_t lsl;
	struct srv_error lerr0;
	srv_error_clear(&lerr0);
	if (!srv_listen_parse(listen, &lss, &lsl, &lerr0)) {
		fprintf(stderr, "lapis serve: %s\n", lerr0.message);
		return CLI_USAGE;
	}
	if (!ephemeral && is_store_dir(dir)) {
		fprintf(stderr,
			"lapis serve: %s holds data.mdb: it is a store "
			"directory, not a data directory (serve the "
			"directory above it)\n",
			dir);
		return CLI_FAIL;
	}

	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	int err = pthread_sigmask(SIG_BLOCK, &stop, NULL);
	if (err != 0) {
		fprintf(stderr, "lapis: cannot block signals: %s\n",
			strerror(err));
		return CLI_FAIL;
	}

	char tmpdir[] = "/tmp/lapis-ephemeral-XXXXXX";
	if (ephemeral) {
		const char *base = getenv("TMPDIR");
		static char buf[4096];
		snprintf(buf, sizeof buf, "%s/lapis-ephemeral-XXXXXX",
			 base && *base ? base : "/tmp");
		if (!mkdtemp(buf)) {
			perror("lapis: mkdtemp");
			return CLI_FAIL;
		}
		dir = buf;
		nosync = 1;
		(void)tmpdir;
	}

	struct cli_datadir d;
	struct srv *s = NULL;
	struct boot boot = {0};
	ctl_mgr *cm = NULL;
	struct ctl_store cs;
	struct srv_pki pki = {0};
	int rc = cli_datadir_lock(dir, 1, &d);
	if (rc != CLI_OK)
		goto out_nolock;
	rc = cli_datadir_open_store(&d, nosync, read_cache, quota);
	if (rc != CLI_OK)
		goto out;
	lp_err lerr = srv_bootstrap(d.e);
	if (lerr == LP_E_FULL) {
		/* a full store (the quota, the disk) must still serve, or
		   nothing could be deleted to make room: the bootstrap
		   controller tries again every minute */
		lp_warn("the system namespaces are not all there and the "
			"store is full: serving without them until objects "
			"are deleted");
	} else if (lerr != LP_OK) {
		fprintf(stderr, "lapis: cannot create the built-in namespaces: %s\n",
			lp_strerror(lerr));
		rc = CLI_FAIL;
		goto out;
	}
	srv_crds_refresh(d.e);
	struct srv_error serr;
	srv_error_clear(&serr);
	if (!insecure &&
	    srv_pki_load_or_create(d.dir, sans, n_sans, &pki, &serr) != LP_OK) {
		fprintf(stderr, "lapis: credentials: %s\n", serr.message);
		rc = CLI_FAIL;
		goto out;
	}
	char interval[64];
	cli_format_duration(compaction_ms, interval, sizeof interval);
	lerr = eng_compactor_start(d.e, compaction_ms);
	if (lerr != LP_OK) {
		fprintf(stderr, "lapis: cannot start the compactor: %s\n",
			lp_strerror(lerr));
		rc = CLI_FAIL;
		goto out;
	}
	lp_info("compaction %s%s", compaction_ms ? "every " : "off",
		compaction_ms ? interval : "");
	if (nosync)
		lp_info("nosync: commits are not fsynced");

	struct srv_opts so = {
		.e = d.e,
		.listen = listen,
		.insecure = insecure,
		.cert_pem = pki.cert_pem,
		.key_pem = pki.key_pem,
		.token = pki.token,
		.sa_key_pem = pki.sa_key_pem,
		.request_timeout_s = (unsigned)((req_ms + 999) / 1000),
		.idle_timeout_s = (unsigned)((idle_ms + 999) / 1000),
		.head_timeout_ms = head_ms,
		.write_workers = write_workers,
		.service_cidr = svc_range,
		.resp_cache = read_cache,
	};
	if (srv_start(&so, &s, &serr) != LP_OK) {
		fprintf(stderr, "lapis: %s\n", serr.message);
		rc = CLI_FAIL;
		goto out;
	}
	{
		/* kube-apiserver's own Service and Endpoints (the address a
		   wildcard listener answers on: loopback) */
		char *host = boot.host;
		size_t hn = sizeof boot.host;
		snprintf(host, hn, "127.0.0.1");
		const char *colon = strrchr(listen, ':');
		if (listen[0] == '[' && colon && colon > listen + 1)
			snprintf(host, hn, "%.*s", (int)(colon - listen - 2),
				 listen + 1);
		else if (colon && colon > listen)
			snprintf(host, hn, "%.*s", (int)(colon - listen),
				 listen);
		if (!strcmp(host, "0.0.0.0"))
			snprintf(host, hn, "127.0.0.1");
		else if (!strcmp(host, "::"))
			snprintf(host, hn, "::1");
		boot.e = d.e;
		boot.cidr = svc_range;
		boot.port = srv_port(s);
		lerr = srv_bootstrap_kubernetes_service(d.e, svc_range, host,
							boot.port, true);
		if (lerr != LP_OK)
			lp_warn("the kubernetes Service in default: %s%s",
				lp_strerror(lerr),
				lerr == LP_E_EXISTS
				    ? " (its cluster IP is another Service's)"
				    : "");
		boot_start(&boot);
	}
	for (int i = 0; ctl_builtin[i]; i++)
		if (!strcmp(ctl_builtin[i]->name, "crd-finalizer"))
			srv_set_crd_cleanup((controllers >> i) & 1u);
	srv_ctl_store(d.e, &cs);
	ctl_set_event_ttl((int64_t)event_ttl_ms);
	lerr = ctl_mgr_new(&cs, controllers, &cm);
	if (lerr == LP_OK)
		lerr = ctl_mgr_start(cm);
	if (lerr != LP_OK) {
		fprintf(stderr, "lapis: cannot start the controllers: %s\n",
			lp_strerror(lerr));
		rc = CLI_FAIL;
		goto out;
	}
	char url[512];
	srv_url(s, url, sizeof url);
	if (srv_kubeconfig_write(d.dir, url, insecure ? NULL : &pki, &serr) !=
	    LP_OK) {
		fprintf(stderr, "lapis: kubeconfig: %s\n", serr.message);
		rc = CLI_FAIL;
		goto out;
	}
	printf("lapis: serving %s (data directory %s, revision %lld)\n"
	       "export KUBECONFIG=%s/kubeconfig\n",
	       url, d.dir, (long long)eng_rev(d.e), d.dir);
	fflush(stdout);

	int sig = 0;
	err = sigwait(&stop, &sig);
	if (err != 0) {
		fprintf(stderr, "lapis: sigwait: %s\n", strerror(err));
		rc = CLI_FAIL;
		goto out;
	}
	lp_info("received %s, stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
	rc = CLI_OK;

out:
	boot_stop(&boot);
	srv_stop(s);
	ctl_mgr_free(cm); /* before the CRD map and the store go */
	srv_crds_shutdown();
	srv_openapi_cache_free();
	srv_pki_free(&pki);
	log_commit_stats(d.e);
	log_read_cache_stats(d.e);
	cli_datadir_close(&d);
out_nolock:
	if (ephemeral) {
		char cmd[4200];
		snprintf(cmd, sizeof cmd, "rm -rf -- '%s'", dir);
		if (system(cmd) != 0)
			lp_warn("could not remove %s", dir);
	}
	if (rc == CLI_OK)
		lp_info("stopped");
	return rc;
}
