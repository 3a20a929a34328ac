/*
 * cli_debug.c -- `lapis debug-load`, a hidden command for tests only: it
 * fills a data directory with generated keys, because until the HTTP API
 * exists the end-to-end tests have no other way to write a store.
 *
 * It takes lapis.lock like serve (so it refuses a directory being served),
 * writes keys /registry/test/k<i> for i in [0, N) in transactions of
 * --batch keys, each value --value-size pseudo-random lowercase letters
 * from splitmix64(seed), and prints the revision at the end (and, with
 * --progress, after every commit, so a test can kill it mid-way once it has
 * seen a commit, without sleeping).
 *
 * Deterministic: the same seed writes the same values. The seed is printed;
 * it comes from --seed, else $LAPIS_SEED, else 1.
 *
 * Main thread only.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"

static const char usage[] =
    "usage: lapis debug-load --data-dir DIR --keys N [--value-size B]\n"
    "                        [--seed S] [--batch K] [--nosync] "
    "[--progress]\n"
    "\n"
    "TEST ONLY: write N generated keys /registry/test/k<i> into the store\n"
    "of DIR (created if missing), taking its lock like 'lapis serve'. Used\n"
    "by the end-to-end tests to put data into a store; not for real data.\n"
    "\n"
    "Options:\n"
    "  -d, --data-dir DIR    data directory\n"
    "  -n, --keys N          keys to write\n"
    "  -s, --value-size B    bytes per value (default 100)\n"
    "      --seed S          seed of the values (default $LAPIS_SEED or 1)\n"
    "      --batch K         keys per transaction (default 100)\n"
    "      --nosync          do not fsync at commit\n"
    "      --progress        print 'committed K keys, revision R' after\n"
    "                        every commit\n"
    "  -h, --help            show this help\n";

/* splitmix64: small, fast and good enough for test data. */
static uint64_t next_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int cli_debug_load(int argc, char **argv)
{
	enum { OPT_SEED = 256, OPT_BATCH, OPT_NOSYNC, OPT_PROGRESS };
	static const struct option opts[] = {
	    {"data-dir", required_argument, NULL, 'd'},
	    {"keys", required_argument, NULL, 'n'},
	    {"value-size", required_argument, NULL, 's'},
	    {"seed", required_argument, NULL, OPT_SEED},
	    {"batch", required_argument, NULL, OPT_BATCH},
	    {"nosync", no_argument, NULL, OPT_NOSYNC},
	    {"progress", no_argument, NULL, OPT_PROGRESS},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *dir = NULL;
	int64_t n_keys = -1, value_size = 100, seed = 1, batch = 100;
	int nosync = 0, progress = 0, c;
	const char *env_seed = getenv("LAPIS_SEED");

	if (env_seed && cli_parse_int(env_seed, 0, INT64_MAX, &seed)) {
		fprintf(stderr, "lapis debug-load: invalid LAPIS_SEED '%s'\n",
			env_seed);
		return cli_usage(usage, 1);
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "d:n:s:h", opts, NULL)) != -1) {
		int bad = 0;
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'n':
			bad = cli_parse_int(optarg, 0, INT64_MAX, &n_keys);
			break;
		case 's':
			bad = cli_parse_int(optarg, 0, ENG_VALUE_MAX,
					    &value_size);
			break;
		case OPT_SEED:
			bad = cli_parse_int(optarg, 0, INT64_MAX, &seed);
			break;
		case OPT_BATCH:
			/* A batch is one txn; keep it well below what the
			   writer is happy to hold in memory. */
			bad = cli_parse_int(optarg, 1, 100000, &batch);
			break;
		case OPT_NOSYNC:
			nosync = 1;
			break;
		case OPT_PROGRESS:
			progress = 1;
			break;
		case 'h':
			return cli_usage(usage, 0);
		default:
			return cli_usage(usage, 1);
		}
		if (bad) {
			fprintf(stderr,
				"lapis debug-load: invalid value '%s'\n",
				optarg);
			return cli_usage(usage, 1);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "lapis debug-load: unexpected argument '%s'\n",
			argv[optind]);
		return cli_usage(usage, 1);
	}
	if (!dir || n_keys < 0) {
		fputs("lapis debug-load: --data-dir and --keys are required\n",
		      stderr);
		return cli_usage(usage, 1);
	}
	fprintf(stderr,
		"lapis debug-load: seed %lld (--seed or LAPIS_SEED "
		"to override)\n",
		(long long)seed);

	struct cli_datadir d;
	char *value = NULL;
	eng_txn *t = NULL;
	int rc = cli_datadir_lock(dir, 1, &d);
	if (rc != CLI_OK)
		return rc;
	rc = cli_datadir_open_store(&d, nosync, 0, 0);
	if (rc != CLI_OK)
		goto out;
	rc = CLI_FAIL;
	value = malloc((size_t)value_size + 1);
	if (!value) {
		fputs("lapis: out of memory\n", stderr);
		goto out;
	}

	uint64_t state = (uint64_t)seed;
	int64_t rev = eng_rev(d.e);
	lp_err err = LP_OK;
	for (int64_t i = 0; i < n_keys;) {
		err = eng_txn_new(d.e, &t);
		if (err != LP_OK)
			goto engine_fail;
		for (int64_t j = 0; j < batch && i < n_keys; j++, i++) {
			char key[64];
			int klen =
			    snprintf(key, sizeof key, "/registry/test/k%lld",
				     (long long)i);
			for (int64_t b = 0; b < value_size; b++)
				value[b] = (char)('a' + next_rand(&state) % 26);
			err =
			    eng_txn_put(t, key, (size_t)klen, value,
					(size_t)value_size, ENG_NO_SLOT, NULL);
			if (err != LP_OK)
				goto engine_fail;
		}
		struct eng_commit_res res;
		err = eng_txn_commit(t, &res);
		if (err != LP_OK)
			goto engine_fail;
		eng_txn_free(t);
		t = NULL;
		rev = res.rev;
		if (progress) {
			printf("committed %lld keys, revision %lld\n",
			       (long long)i, (long long)rev);
			fflush(stdout);
		}
	}
	printf("debug-load: wrote %lld keys, revision %lld\n",
	       (long long)n_keys, (long long)rev);
	rc = CLI_OK;
	goto out;

engine_fail:
	fprintf(stderr, "lapis debug-load: write failed: %s\n",
		lp_strerror(err));
out:
	eng_txn_free(t);
	free(value);
	cli_datadir_close(&d);
	return rc;
}
