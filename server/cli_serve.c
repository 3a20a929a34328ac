/*
 * cli_serve.c -- `lapis serve`: run the server on a data directory.
 *
 * Until the HTTP API server exists, serving means: hold the data
 * directory's lock, open the store, run the compactor, print one line
 * naming the data directory, and wait for SIGINT or SIGTERM; then close the
 * store (queued writes finish) and exit 0.
 *
 * Signals: SIGINT and SIGTERM are blocked before the engine starts any
 * thread, so every thread inherits the mask and the main thread alone takes
 * them, synchronously, with sigwait(). No handler runs, so nothing here has
 * to be async-signal-safe.
 *
 * Main thread only.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli_common.h"
#include "lapis/log.h"

static const char usage[] =
    "usage: lapis serve [--data-dir DIR] [--nosync] "
    "[--compaction-interval DUR]\n"
    "\n"
    "Start lapis on a data directory, creating it on first start.\n"
    "Stops cleanly on SIGINT or SIGTERM.\n"
    "\n"
    "Options:\n"
    "  -d, --data-dir DIR            data directory "
    "(default " CLI_DEFAULT_DATA_DIR ")\n"
    "      --nosync                  do not fsync at commit (tests, "
    "throwaway\n"
    "                                servers: a machine crash may lose "
    "writes)\n"
    "      --compaction-interval DUR compact history older than one "
    "interval,\n"
    "                                every interval, like "
    "kube-apiserver;\n"
    "                                Go syntax: 250ms, 2s, 5m, 1h30m; 0 "
    "turns\n"
    "                                it off (default 5m)\n"
    "  -h, --help                    show this help\n"
    "\n"
    "The data directory holds store/ (the LMDB environment) and lapis.lock\n"
    "(held while serving: a second server on the same directory is "
    "refused).\n";

/* kube-apiserver compacts etcd every 5 minutes by default. */
#define DEFAULT_COMPACTION_MS (5ULL * 60 * 1000)

int cli_serve(int argc, char **argv)
{
	enum { OPT_NOSYNC = 256, OPT_COMPACTION };
	static const struct option opts[] = {
	    {"data-dir", required_argument, NULL, 'd'},
	    {"nosync", no_argument, NULL, OPT_NOSYNC},
	    {"compaction-interval", required_argument, NULL, OPT_COMPACTION},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *dir = CLI_DEFAULT_DATA_DIR;
	int nosync = 0;
	uint64_t compaction_ms = DEFAULT_COMPACTION_MS;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case OPT_NOSYNC:
			nosync = 1;
			break;
		case OPT_COMPACTION:
			if (cli_parse_duration(optarg, &compaction_ms) != 0) {
				fprintf(stderr,
					"lapis serve: invalid duration '%s' "
					"(examples: 0, 250ms, 2s, 5m, 1h30m)\n",
					optarg);
				return cli_usage(usage, 1);
			}
			break;
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

	struct cli_datadir d;
	int rc = cli_datadir_lock(dir, 1, &d);
	if (rc != CLI_OK)
		return rc;
	rc = cli_datadir_open_store(&d, nosync);
	if (rc != CLI_OK)
		goto out;

	char interval[64];
	cli_format_duration(compaction_ms, interval, sizeof interval);
	lp_err lerr = eng_compactor_start(d.e, compaction_ms);
	if (lerr != LP_OK) {
		fprintf(stderr, "lapis: cannot start the compactor: %s\n",
			lp_strerror(lerr));
		rc = CLI_FAIL;
		goto out;
	}
	if (compaction_ms)
		lp_info("compaction every %s", interval);
	else
		lp_info("compaction off");
	if (nosync)
		lp_info("nosync: commits are not fsynced");

	printf("lapis: serving data directory %s (revision %lld)\n", d.dir,
	       (long long)eng_rev(d.e));
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
	cli_datadir_close(&d);
	if (rc == CLI_OK)
		lp_info("stopped");
	return rc;
}
