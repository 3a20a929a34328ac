/*
 * lmdb_hold.c -- TEST ONLY: hold an LMDB environment's write lock from a
 * second process, so a running server's writer waits in mdb_txn_begin until
 * the test lets go. It makes "a write that cannot finish" deterministic for
 * the --request-timeout end-to-end test (tests/e2e/timeout.sh), with the
 * real binary and the real store.
 *
 *   lmdb_hold [-r] DIR   DIR is the environment (a data directory's store/)
 *
 * Prints "holding" once it owns the write lock (with -r: once it is inside
 * a read transaction, as a backup is; cli.sh kills it there), then waits
 * for a line or end of file on stdin, aborts its transaction and exits 0;
 * 1 on failure.
 * LMDB's lock file is shared between processes (its writer mutex is a
 * process-shared one), which is what makes this work.
 */
#include <lmdb.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rd = argc == 3 && !strcmp(argv[1], "-r");
	if (argc != 2 + rd) {
		fputs("usage: lmdb_hold [-r] DIR\n", stderr);
		return 2;
	}
	const char *dir = argv[1 + rd];
	MDB_env *env;
	MDB_txn *txn;
	int rc = mdb_env_create(&env);
	if (!rc)
		rc = mdb_env_set_maxdbs(env, 8);
	if (!rc)
		rc = mdb_env_set_maxreaders(env, 1024); /* as the engine */
	if (!rc)
		rc = mdb_env_open(env, dir, MDB_NOTLS, 0600);
	if (!rc)
		rc = mdb_txn_begin(env, NULL, rd ? MDB_RDONLY : 0, &txn);
	if (rc) {
		fprintf(stderr, "lmdb_hold: %s: %s\n", dir, mdb_strerror(rc));
		return 1;
	}
	printf("holding\n");
	fflush(stdout);
	char line[64];
	(void)fgets(line, sizeof line, stdin);
	mdb_txn_abort(txn);
	mdb_env_close(env);
	return 0;
}
