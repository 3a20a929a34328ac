/*
 * main.c -- the `lapis` command: picks a subcommand and runs it.
 *
 *   lapis serve | backup | restore | inspect | version [OPTIONS]
 *   lapis --help | lapis help [COMMAND] | lapis COMMAND --help
 *
 * Exit codes (DESIGN.md "Command line and files"): 0 success, 1 failure,
 * 2 usage error. --help prints to stdout and exits 0; a usage error prints
 * the usage to stderr and exits 2.
 *
 * Each subcommand lives in its own cli_*.c and parses its own options with
 * getopt_long; this file only dispatches. Commands marked hidden (test
 * helpers) are left out of the overview but answer --help like any other.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef LAPIS_MIMALLOC
#include <mimalloc.h>
#endif

#include "cli_common.h"

static int cli_version(int argc, char **argv);

static const struct {
	const char *name;
	cli_cmd_fn fn;
	const char *summary;
	int hidden;
} commands[] = {
    {"serve", cli_serve, "start the server on a data directory", 0},
    {"backup", cli_backup,
     "write a hot backup of a (running) server's store to one file", 0},
    {"restore", cli_restore, "make a new data directory from a backup", 0},
    {"inspect", cli_inspect,
     "summarize and check a data directory, store or backup", 0},
    {"version", cli_version, "print the version", 0},
    {"debug-load", cli_debug_load, "test only: write generated keys", 1},
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

static int overview(int is_error)
{
	FILE *f = is_error ? stderr : stdout;
	fputs("usage: lapis COMMAND [OPTIONS]\n"
	      "\n"
	      "lapis is a Kubernetes-compatible API server with its own MVCC\n"
	      "key-value store on LMDB.\n"
	      "\n"
	      "Commands:\n",
	      f);
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!commands[i].hidden)
			fprintf(f, "  %-9s %s\n", commands[i].name,
				commands[i].summary);
	fputs("\n"
	      "Run 'lapis COMMAND --help' for the options of a command.\n"
	      "Exit codes: 0 success, 1 failure, 2 usage error.\n",
	      f);
	return is_error ? CLI_USAGE : CLI_OK;
}

static const char version_usage[] = "usage: lapis version\n"
				    "\n"
				    "Print the version of lapis and the allocator it runs on\n"
				    "(mimalloc, or libc's in sanitizer builds).\n";

static int cli_version(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return cli_usage(version_usage, 0);
	if (argc != 1) {
		fprintf(stderr, "lapis version: unexpected argument '%s'\n",
			argv[1]);
		return cli_usage(version_usage, 1);
	}
	printf("lapis %s\n", LAPIS_VERSION);
#ifdef LAPIS_MIMALLOC
	/* mimalloc replaces malloc only when it precedes libc in the link:
	   say which one a malloc'd block really comes from. */
	void *probe = malloc(64);
	int v = mi_version();
	if (probe && mi_is_in_heap_region(probe))
		printf("allocator: mimalloc %d.%d.%d\n", v / 100, v / 10 % 10,
		       v % 10);
	else
		puts("allocator: libc (mimalloc linked but not in use)");
	free(probe);
#else
	puts("allocator: libc");
#endif
	return CLI_OK;
}

static int find_command(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return (int)i;
	return -1;
}

#ifdef LAPIS_MIMALLOC
/*
 * mimalloc keeps the pages a thread freed for that thread to reuse, and
 * blocks other threads free wait on their owner's next allocation. In
 * lapis, watch events are made on the thread that commits a group and
 * freed on the HTTP threads; when writes ran on 64 mostly sleeping worker
 * threads (before session 16's fibers), their responses were too, and
 * under S5's steady writes the heap grew 40% in three minutes with the
 * defaults, where glibc's stayed flat.
 * Returning free pages to the system at once (reset, decommit without
 * delay, no eager commit) keeps it flat, below glibc's, at no cost in CPU
 * per request (docs/bench-http.md, "Session 15: mimalloc").
 */
static void tune_allocator(void)
{
	mi_option_enable(mi_option_page_reset);
	mi_option_set(mi_option_decommit_delay, 0);
	mi_option_set(mi_option_segment_decommit_delay, 0);
	mi_option_disable(mi_option_eager_commit);
}
#endif

int main(int argc, char **argv)
{
#ifdef LAPIS_MIMALLOC
	tune_allocator();
#endif
	if (argc < 2) {
		fputs("lapis: no command given\n", stderr);
		return overview(1);
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h"))
		return argc == 2 ? overview(0) : overview(1);
	if (!strcmp(cmd, "--version"))
		return cli_version(1, argv + 1);
	if (!strcmp(cmd, "help")) {
		if (argc == 2)
			return overview(0);
		int i = find_command(argv[2]);
		if (i < 0) {
			fprintf(stderr, "lapis: unknown command '%s'\n",
				argv[2]);
			return overview(1);
		}
		if (argc > 3) {
			fputs("lapis help: one command at a time\n", stderr);
			return overview(1);
		}
		char help[] = "--help";
		char *sub[] = {argv[2], help, NULL};
		return commands[i].fn(2, sub);
	}
	int i = find_command(cmd);
	if (i < 0) {
		fprintf(stderr, "lapis: unknown command '%s'\n", cmd);
		return overview(1);
	}
	return commands[i].fn(argc - 1, argv + 1);
}
