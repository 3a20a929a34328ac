/*
 * cli_store.c -- the store maintenance commands: `lapis backup`,
 * `lapis restore` and `lapis inspect` (DESIGN.md "Command line and files").
 *
 *   backup   a second process opens the store read-only (beside a running
 *            server: no lapis.lock), and eng_backup() writes one compacted
 *            file; the backup is then opened and its revision and hash are
 *            printed.
 *   restore  a new data directory around a copy of a backup file, its
 *            revision bumped (eng_bump) so that every client watching the
 *            old store re-lists.
 *   inspect  eng_info() and eng_check() of a data directory, store
 *            directory or backup file, as text or one JSON object.
 *
 * Invariants
 *  1. backup and inspect never write the store they read.
 *  2. restore writes only into a directory that was empty or missing, holds
 *     its lapis.lock while it does, and on failure removes what it created,
 *     so that it can simply be run again.
 *
 * Main thread only.
 */
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_common.h"

/* ---------------------------------------------------------------- backup */

static const char backup_usage[] =
    "usage: lapis backup [--data-dir DIR] --out FILE [--force]\n"
    "\n"
    "Write a consistent, compacted copy of the store to FILE, while a\n"
    "server may be running on DIR (the store is opened read-only). Prints\n"
    "the backup's revision and content hash.\n"
    "\n"
    "Options:\n"
    "  -d, --data-dir DIR  data directory (or store directory) to back up\n"
    "                      (default " CLI_DEFAULT_DATA_DIR ")\n"
    "  -o, --out FILE      the backup file to write\n"
    "  -f, --force         overwrite FILE if it exists\n"
    "  -h, --help          show this help\n";

struct progress {
	int tty;	    /* stderr is a terminal: show progress */
	uint64_t shown_mib; /* last MiB count shown */
};

/* SIGINT, SIGTERM or SIGHUP during a backup: the copy stops at its next
   block and eng_backup removes its temporary file (a killed backup left
   it, and a dead process's read slot that its server frees). */
static volatile sig_atomic_t backup_stop;
/* the copy's process, in the parent (cli_in_child): a signal goes on to
   it */
static volatile pid_t backup_child;

static void on_backup_signal(int sig)
{
	if (backup_child > 0)
		kill(backup_child, sig);
	else
		backup_stop = sig;
}

static bool backup_progress(void *ud, uint64_t bytes)
{
	struct progress *p = ud;
	uint64_t mib = bytes >> 20;
	if (backup_stop)
		return false;
	if (!p->tty || mib == p->shown_mib)
		return true;
	p->shown_mib = mib;
	fprintf(stderr, "\rlapis: backup: %llu MiB written",
		(unsigned long long)mib);
	fflush(stderr);
	return true;
}

/* Print "key: value" lines of a store's identity after a backup. */
static int print_backup_info(const char *file)
{
	struct cli_store s;
	int rc = cli_store_open(file, &s);
	if (rc != CLI_OK)
		return rc;
	struct eng_info info;
	lp_err err = eng_info(s.e, &info);
	cli_store_close(&s);
	if (err != LP_OK) {
		fprintf(stderr, "lapis: cannot read the backup %s: %s\n", file,
			lp_strerror(err));
		return CLI_FAIL;
	}
	struct stat st;
	if (stat(file, &st) != 0) {
		fprintf(stderr, "lapis: %s: %s\n", file, strerror(errno));
		return CLI_FAIL;
	}
	printf("file: %s\n", file);
	printf("revision: %lld\n", (long long)info.rev);
	printf("hash: %s\n", info.hash);
	printf("bytes: %lld\n", (long long)st.st_size);
	return CLI_OK;
}

/* Would a backup of dir written to out land in dir's store directory (or
   be the backup file dir itself)? Its rename would replace data.mdb, or
   sit among the store's files (found by an audit: --force onto
   store/data.mdb swapped the live file out from under a server). */
static bool into_store(const char *dir, const char *out)
{
	char *o = strdup(out);
	struct stat ps, ss, os;
	bool in = false;
	if (o && stat(dirname(o), &ps) == 0) {
		static const char *const stores[] = {"store", "."};
		for (size_t i = 0; i < 2 && !in; i++) {
			char *sd = cli_path_join(dir, stores[i]);
			char *dm = sd ? cli_path_join(sd, "data.mdb") : NULL;
			in = dm && stat(sd, &ss) == 0 &&
			     ss.st_dev == ps.st_dev && ss.st_ino == ps.st_ino &&
			     access(dm, F_OK) == 0;
			free(dm);
			free(sd);
		}
	}
	if (!in && stat(dir, &ss) == 0 && S_ISREG(ss.st_mode) &&
	    stat(out, &os) == 0)
		in = ss.st_dev == os.st_dev && ss.st_ino == os.st_ino;
	free(o);
	return in;
}

struct backup_job {
	const char *dir, *out;
};

static int backup_run(void *ud);

int cli_backup(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"data-dir", required_argument, NULL, 'd'},
	    {"out", required_argument, NULL, 'o'},
	    {"force", no_argument, NULL, 'f'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *dir = CLI_DEFAULT_DATA_DIR, *out = NULL;
	int force = 0, c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:o:fh", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'f':
			force = 1;
			break;
		case 'h':
			return cli_usage(backup_usage, 0);
		default:
			return cli_usage(backup_usage, 1);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "lapis backup: unexpected argument '%s'\n",
			argv[optind]);
		return cli_usage(backup_usage, 1);
	}
	if (!out || !out[0]) {
		fputs("lapis backup: --out FILE is required\n", stderr);
		return cli_usage(backup_usage, 1);
	}
	struct stat st;
	if (!force && stat(out, &st) == 0) {
		fprintf(stderr,
			"lapis: %s exists; remove it or use --force to "
			"overwrite it\n",
			out);
		return CLI_FAIL;
	}

	if (into_store(dir, out)) {
		fprintf(stderr,
			"lapis: %s is in the store directory of %s, which it "
			"would replace a file of under a running server; write "
			"the backup elsewhere\n",
			out, dir);
		return CLI_FAIL;
	}

	backup_child = -1;
	struct sigaction sa = {.sa_handler = on_backup_signal,
			       .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	struct backup_job job = {dir, out};
	int sig = 0;
	int rc = cli_in_child(backup_run, &job, &sig, &backup_child);
	pid_t pid = backup_child;
	backup_child = -1;
	if (rc != -1)
		return rc;
	/* what the dead copy left: its temporary file, and the store it
	   opened of the finished backup to print its identity */
	char pat[PATH_MAX];
	snprintf(pat, sizeof pat, "%s.tmp.%ld.??????", out, (long)pid);
	glob_t g;
	if (glob(pat, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			unlink(g.gl_pathv[i]);
		globfree(&g);
	}
	cli_remove_wraps(out, pid);
	fprintf(stderr,
		"lapis: backup of %s to %s failed: reading the store crashed "
		"(%s): a damaged page? (lapis inspect tells)\n",
		dir, out, strsignal(sig));
	return CLI_FAIL;
}

/* backup's work, in the child: the copy and the report. */
static int backup_run(void *ud)
{
	const struct backup_job *job = ud;
	const char *dir = job->dir, *out = job->out;
	struct cli_store s;
	int rc = cli_store_open(dir, &s);
	if (rc != CLI_OK)
		return rc;
	struct progress p = {isatty(STDERR_FILENO), 0};
	lp_err err = eng_backup(s.e, out, backup_progress, &p);
	if (p.tty && p.shown_mib)
		fputc('\n', stderr);
	cli_store_close(&s);
	if (backup_stop && err != LP_OK) { /* too late to stop: it is done */
		fprintf(stderr,
			"lapis: backup of %s to %s stopped by signal %d; "
			"nothing written\n",
			dir, out, (int)backup_stop);
		return CLI_FAIL;
	}
	if (err != LP_OK) {
		fprintf(stderr, "lapis: backup of %s to %s failed: %s\n", dir,
			out, lp_strerror(err));
		return CLI_FAIL;
	}
	return print_backup_info(out);
}

/* ---------------------------------------------------------------- inspect */

static const char inspect_usage[] =
    "usage: lapis inspect [--json] PATH\n"
    "\n"
    "Summarize a store and check its invariants. PATH is a data directory,\n"
    "a store directory (holding data.mdb) or a backup file. The store is\n"
    "opened read-only, so a running server may be using it.\n"
    "Exits 1 if the check finds a violation.\n"
    "\n"
    "Options:\n"
    "  -j, --json   print one JSON object with the keys revision,\n"
    "               compactedRevision, keys, dataBytes, fileBytes,\n"
    "               historyEntries, logEntries, format, clusterID, hash,\n"
    "               check (\"ok\" or the violation)\n"
    "  -h, --help   show this help\n";

/* Large enough for any violation message eng_check() writes in full. */
#define CHECK_MSG_MAX 512

struct inspect_job {
	const char *path;
	int json;
};

static int inspect_run(void *ud);

int cli_inspect(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int json = 0, c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'h':
			return cli_usage(inspect_usage, 0);
		default:
			return cli_usage(inspect_usage, 1);
		}
	}
	if (argc - optind != 1) {
		fputs(optind == argc ? "lapis inspect: PATH is required\n"
				     : "lapis inspect: only one PATH\n",
		      stderr);
		return cli_usage(inspect_usage, 1);
	}
	const char *path = argv[optind];

	/* LMDB trusts its pages: a damaged one trips an assertion (abort) or
	   a bad pointer in the walk, and inspect, the tool to diagnose it,
	   died with it (found by an audit). The walk runs in a child; a child
	   killed by a signal is a failed check. */
	struct inspect_job job = {path, json};
	int sig = 0;
	volatile pid_t pid = 0;
	int rc = cli_in_child(inspect_run, &job, &sig, &pid);
	if (rc != -1)
		return rc;
	cli_remove_wraps(path, pid); /* a backup file's store, if it was */
	char verdict[160];
	snprintf(verdict, sizeof verdict,
		 "failed: reading the store crashed (%s): a damaged page",
		 strsignal(sig));
	if (json) {
		fputs("{\"check\":", stdout);
		cli_json_string(stdout, verdict);
		fputs("}\n", stdout);
	} else {
		printf("check:              %s\n", verdict);
	}
	fprintf(stderr, "lapis: %s: check %s; restore a backup\n", path,
		verdict);
	return CLI_FAIL;
}

/* inspect's work, in the child: what it prints and its exit status. */
static int inspect_run(void *ud)
{
	const struct inspect_job *job = ud;
	const char *path = job->path;
	int json = job->json;
	struct cli_store s;
	int rc = cli_store_open(path, &s);
	if (rc != CLI_OK)
		return rc;
	struct eng_info info;
	lp_err err = eng_info(s.e, &info);
	if (err != LP_OK) {
		cli_store_close(&s);
		fprintf(stderr, "lapis: cannot read %s: %s\n", path,
			lp_strerror(err));
		return CLI_FAIL;
	}
	char msg[CHECK_MSG_MAX] = "";
	lp_err check = eng_check(s.e, msg, sizeof msg);
	cli_store_close(&s);
	if (check != LP_OK && !msg[0])
		snprintf(msg, sizeof msg, "%s", lp_strerror(check));
	char verdict[CHECK_MSG_MAX + 16];
	snprintf(verdict, sizeof verdict, "%s%s",
		 check == LP_OK ? "ok" : "failed: ", check == LP_OK ? "" : msg);

	if (json) {
		printf("{\"revision\":%lld,\"compactedRevision\":%lld,"
		       "\"keys\":%llu,\"dataBytes\":%llu,\"fileBytes\":%llu,"
		       "\"historyEntries\":%llu,\"logEntries\":%llu,"
		       "\"format\":%u,\"clusterID\":",
		       (long long)info.rev, (long long)info.compacted,
		       (unsigned long long)info.n_keys,
		       (unsigned long long)info.data_bytes,
		       (unsigned long long)info.file_bytes,
		       (unsigned long long)info.n_history,
		       (unsigned long long)info.n_log, (unsigned)info.format);
		cli_json_string(stdout, info.cluster_id);
		fputs(",\"hash\":", stdout);
		cli_json_string(stdout, info.hash);
		fputs(",\"check\":", stdout);
		cli_json_string(stdout, verdict);
		fputs("}\n", stdout);
	} else {
		printf("revision:           %lld\n", (long long)info.rev);
		printf("compacted revision: %lld\n", (long long)info.compacted);
		printf("keys:               %llu\n",
		       (unsigned long long)info.n_keys);
		printf("data bytes:         %llu\n",
		       (unsigned long long)info.data_bytes);
		printf("file bytes:         %llu\n",
		       (unsigned long long)info.file_bytes);
		printf("history entries:    %llu\n",
		       (unsigned long long)info.n_history);
		printf("log entries:        %llu\n",
		       (unsigned long long)info.n_log);
		printf("format:             %u\n", (unsigned)info.format);
		printf("cluster id:         %s\n", info.cluster_id);
		printf("hash:               %s\n", info.hash);
		printf("check:              %s\n", verdict);
	}
	if (check != LP_OK) {
		fprintf(stderr, "lapis: %s: check failed: %s\n", path, msg);
		return CLI_FAIL;
	}
	return CLI_OK;
}

/* ---------------------------------------------------------------- restore */

struct restore_job {
	struct cli_datadir *d;
	int64_t bump;
};

/* restore's reading of the copy, in the child: open, bump, check, print. */
static int restore_run(void *ud)
{
	const struct restore_job *job = ud;
	struct cli_datadir *d = job->d;
	if (cli_datadir_open_store(d, 0, 0, 0) != CLI_OK)
		return CLI_FAIL;
	int64_t new_rev = 0;
	lp_err err = eng_bump(d->e, job->bump, &new_rev);
	if (err != LP_OK) {
		fprintf(stderr, "lapis: cannot bump the revision: %s\n",
			lp_strerror(err));
		eng_close(d->e);
		return CLI_FAIL;
	}
	char msg[CHECK_MSG_MAX] = "";
	err = eng_check(d->e, msg, sizeof msg);
	if (err != LP_OK) {
		fprintf(stderr,
			"lapis: the restored store fails its check: %s\n",
			msg[0] ? msg : lp_strerror(err));
		eng_close(d->e);
		return CLI_FAIL;
	}
	printf("data directory: %s\n", d->dir);
	printf("revision: %lld\n", (long long)new_rev);
	printf("compacted revision: %lld\n", (long long)eng_compacted(d->e));
	eng_close(d->e);
	return CLI_OK;
}

static const char restore_usage[] =
    "usage: lapis restore --from FILE --data-dir NEW [--bump-revision N]\n"
    "\n"
    "Make a new data directory NEW (missing or empty) around a copy of the\n"
    "backup FILE. The revision is raised by N and everything before it is\n"
    "marked compacted, so that clients watching the old store re-list\n"
    "instead of missing writes made after the backup.\n"
    "\n"
    "Options:\n"
    "  -f, --from FILE        the backup file (from 'lapis backup')\n"
    "  -d, --data-dir NEW     the data directory to create\n"
    "  -b, --bump-revision N  revisions to add, at least 1 (default "
    "1000000,\n"
    "                         well beyond the writes expected since the\n"
    "                         backup, as etcd recommends)\n"
    "  -h, --help             show this help\n";

/* etcd's advice for snapshot restore: bump well past any revision a
   client may have seen since the snapshot was taken. */
#define DEFAULT_BUMP 1000000

int cli_restore(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"from", required_argument, NULL, 'f'},
	    {"data-dir", required_argument, NULL, 'd'},
	    {"bump-revision", required_argument, NULL, 'b'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *from = NULL, *dir = NULL;
	int64_t bump = DEFAULT_BUMP;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:d:b:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			from = optarg;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'b':
			/* Up to 2^62: the revision stays far from overflow. */
			if (cli_parse_int(optarg, 1, INT64_C(1) << 62, &bump)) {
				fprintf(
				    stderr,
				    "lapis restore: invalid --bump-revision "
				    "'%s' (a whole number >= 1)\n",
				    optarg);
				return cli_usage(restore_usage, 1);
			}
			break;
		case 'h':
			return cli_usage(restore_usage, 0);
		default:
			return cli_usage(restore_usage, 1);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "lapis restore: unexpected argument '%s'\n",
			argv[optind]);
		return cli_usage(restore_usage, 1);
	}
	if (!from || !dir || !from[0] || !dir[0]) {
		fputs("lapis restore: --from FILE and --data-dir NEW are "
		      "required\n",
		      stderr);
		return cli_usage(restore_usage, 1);
	}

	struct stat st;
	if (stat(from, &st) != 0) {
		fprintf(stderr, "lapis: %s: %s\n", from, strerror(errno));
		return CLI_FAIL;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "lapis: %s: not a backup file\n", from);
		return CLI_FAIL;
	}
	/* an empty, cut short or foreign file is refused before anything is
	   made (LMDB would make an empty store of an empty file, and die of
	   SIGBUS on a truncated one) */
	char why[PATH_MAX + 128];
	if (eng_file_check(from, why, sizeof why) != LP_OK) {
		fprintf(stderr, "lapis: not a whole backup: %s\n", why);
		return CLI_FAIL;
	}
	int created = 0;
	if (stat(dir, &st) == 0) {
		int empty = cli_dir_is_empty(dir);
		if (empty != 1) {
			fprintf(stderr,
				"lapis: %s is %s; restore makes a new data "
				"directory\n",
				dir,
				empty == 0 ? "not empty" : "not a directory");
			return CLI_FAIL;
		}
	} else if (errno == ENOENT) {
		created = 1;
	} else {
		fprintf(stderr, "lapis: %s: %s\n", dir, strerror(errno));
		return CLI_FAIL;
	}

	struct cli_datadir d;
	char *data = NULL;
	int rc = cli_datadir_lock(dir, 1, &d);
	if (rc != CLI_OK) {
		if (created)
			rmdir(dir);
		return rc;
	}
	rc = CLI_FAIL;
	if (mkdir(d.store, 0700) != 0) {
		fprintf(stderr, "lapis: cannot create %s: %s\n", d.store,
			strerror(errno));
		goto fail;
	}
	data = cli_path_join(d.store, "data.mdb");
	if (cli_copy_file(from, data) != 0) {
		fprintf(stderr, "lapis: cannot copy %s to %s: %s\n", from, data,
			strerror(errno));
		goto fail;
	}
	if (cli_fsync_dir(d.dir) != 0) {
		fprintf(stderr, "lapis: cannot sync %s: %s\n", d.dir,
			strerror(errno));
		goto fail;
	}
	/* the store is opened, bumped and checked in a child: a damaged
	   page that kills LMDB leaves NEW to be removed here (it aborted,
	   and left a directory that serve died on) */
	struct restore_job job = {&d, bump};
	int sig = 0;
	volatile pid_t pid = 0;
	rc = cli_in_child(restore_run, &job, &sig, &pid);
	if (rc == -1)
		fprintf(stderr,
			"lapis: reading the backup crashed (%s): a damaged "
			"page? (lapis inspect tells)\n",
			strsignal(sig));
	if (rc != CLI_OK) {
		rc = CLI_FAIL;
		goto fail;
	}
	free(data);
	cli_datadir_close(&d);
	return CLI_OK;

fail:
	/* Invariant 2: leave NEW as we found it. */
	eng_close(d.e);
	d.e = NULL;
	if (d.store)
		cli_remove_flat_dir(d.store);
	if (d.dir) {
		char *lock = cli_path_join(d.dir, "lapis.lock");
		unlink(lock);
		free(lock);
		if (created)
			rmdir(d.dir);
	}
	free(data);
	cli_datadir_close(&d);
	return rc;
}
