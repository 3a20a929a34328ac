/*
 * cli_common.h -- what the `lapis` subcommands share: exit codes, argument
 * parsing (durations, counts), the data directory (its lock and its store),
 * opening any store path read-only, and small file helpers.
 *
 * The data directory (DESIGN.md "Command line and files"):
 *
 *   DIR/store/       the LMDB environment (eng_opts.dir)
 *   DIR/lapis.lock   our own lock file: flock(LOCK_EX) by the one process
 *                    that writes the store (serve, restore, debug-load)
 *
 * Invariants
 *  1. A process opens DIR/store writable only while it holds DIR/lapis.lock.
 *     Read-only opens (backup, inspect) never take the lock, so they work
 *     beside a running server.
 *  2. A store opened from a single backup file lives in a temporary directory
 *     that cli_store_close() removes; the backup file itself is never
 *     written (it is hard-linked when possible, else copied).
 *  3. Helpers that print say so; they print one line to stderr starting
 *     with "lapis: " and return CLI_FAIL, so callers just pass the code on.
 *
 * Everything here runs on the main thread of the command.
 */
#ifndef LAPIS_CLI_COMMON_H
#define LAPIS_CLI_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "lapis/engine.h"

/* Exit codes (DESIGN.md): success, failure, usage error. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* The data directory used when --data-dir is not given. */
#define CLI_DEFAULT_DATA_DIR "./lapis-data"

/* A subcommand: argv[0] is the command's name. Returns an exit code. */
typedef int (*cli_cmd_fn)(int argc, char **argv);

int cli_serve(int argc, char **argv);
int cli_backup(int argc, char **argv);
int cli_restore(int argc, char **argv);
int cli_inspect(int argc, char **argv);
int cli_debug_load(int argc, char **argv);

/*
 * Print a command's usage text: to stdout for --help (returns CLI_OK), or,
 * after a usage error, to stderr (returns CLI_USAGE).
 */
int cli_usage(const char *text, int is_error);

/*
 * Parse a Go-style duration ("250ms", "2s", "5m", "1h30m", "1.5h", "0")
 * into milliseconds. Units: ns, us, µs, ms, s, m, h. A non-zero duration
 * below one millisecond, a negative one, a bare number other than 0, and
 * anything that does not fit 64 bits of nanoseconds are refused.
 * Returns 0, or -1 on garbage (*ms untouched).
 */
int cli_parse_duration(const char *s, uint64_t *ms);

/* Format milliseconds the way Go prints a duration ("5m0s", "250ms"). */
void cli_format_duration(uint64_t ms, char *buf, size_t cap);

/* Parse a whole decimal number in [min, max]. Returns 0, or -1 (*out
 * untouched). */
int cli_parse_int(const char *s, int64_t min, int64_t max, int64_t *out);

/* An open data directory, for a process that writes its store. */
struct cli_datadir {
	char *dir;   /* absolute path of the data directory (new) */
	char *store; /* dir + "/store" (new) */
	int lock_fd; /* DIR/lapis.lock, flock'ed; -1 when not held */
	eng *e;	     /* the open store, or NULL */
};

/*
 * Take DIR/lapis.lock (creating DIR first when create is set). A lock held
 * by another process is reported with that process's pid. Prints on failure.
 * Returns CLI_OK or CLI_FAIL; on failure *d holds nothing to release.
 */
int cli_datadir_lock(const char *dir, int create, struct cli_datadir *d);

/* Open DIR/store writable (created if missing), with eng_opts' read_cache
   and quota. Prints on failure. */
int cli_datadir_open_store(struct cli_datadir *d, int nosync,
			   int64_t read_cache, uint64_t quota);

/* Close the store, release the lock, free the paths. Safe on a zeroed d. */
void cli_datadir_close(struct cli_datadir *d);

/* A store opened read-only from any path that holds one. */
struct cli_store {
	eng *e;	      /* the open store */
	char *tmpdir; /* temporary environment around a backup file, or NULL */
};

/*
 * Open read-only the store at path, which may be a data directory (its
 * store/ is used), a store directory (it holds data.mdb) or a single backup
 * file (see invariant 2). Prints on failure. Returns CLI_OK or CLI_FAIL.
 */
int cli_store_open(const char *path, struct cli_store *out);

/* Close the store and remove its temporary directory. Safe on a zeroed s. */
void cli_store_close(struct cli_store *s);

/*
 * Copy src to dst (which must not exist), fsync dst and its directory.
 * Returns 0 or -1 with errno set; a partial dst is removed.
 */
int cli_copy_file(const char *src, const char *dst);

/* fsync a directory (after creating or renaming in it). 0 or -1/errno. */
int cli_fsync_dir(const char *dir);

/* Create a directory and its missing parents. 0 or -1/errno. */
int cli_mkdir_p(const char *path, unsigned mode);

/* 1 if path is a directory with no entries, 0 if it has some, -1/errno. */
int cli_dir_is_empty(const char *path);

/* Remove the regular files in dir (not recursing), then dir. Best effort. */
void cli_remove_flat_dir(const char *dir);

/*
 * Run fn(ud) in a child process and return its result. LMDB trusts its
 * pages: a damaged one trips an assertion or follows a bad pointer, and a
 * tool reading it (inspect, backup, restore) must live to say so. A child
 * killed by a signal returns -1 with the signal in *sig. *pid is the
 * child's pid from the fork on (a signal handler may pass a signal on to
 * it), and after a crash tells what it left (names carry that pid).
 * stdout and stderr are flushed before the fork and in the child.
 */
int cli_in_child(int (*fn)(void *ud), void *ud, int *sig, volatile pid_t *pid);
/* What a store opening of a backup file (cli_store_open) by process pid
   left beside file and in $TMPDIR: removed. */
void cli_remove_wraps(const char *file, pid_t pid);

/* Print s as a JSON string literal, quotes included. */
void cli_json_string(FILE *f, const char *s);

/* malloc'd a + "/" + b; aborts on out of memory (a CLI cannot go on). */
char *cli_path_join(const char *a, const char *b);

#endif
