/*
 * lmdb_hold.c -- TEST ONLY: hold an LMDB environment's write lock from a
 * second process, so a running server's writer waits in mdb_txn_begin until
 * the test lets go. It makes "a write that cannot finish" deterministic for
 * the --request-timeout end-to-end test (tests/e2e/timeout.sh), with the
 * real binary and the real store.
 *
 *   lmdb_hold DIR     DIR is the environment (a data directory's store/)
 *
 * Prints "holding" once it owns the write lock, then waits for a line or
 * end of file on stdin, aborts its transaction and exits 0; 1 on failure.
 * LMDB's lock file is shared between processes (its writer mutex is a
 * process-shared one), which is what makes this work.
 */
#include <lmdb.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fputs("usage: lmdb_hold DIR\n", stderr);
		return 2;
	}
	MDB_env *env;
	MDB_txn *txn;
	int rc = mdb_env_create(&env);
	if (!rc)
		rc = mdb_env_set_maxdbs(env, 8);
	if (!rc)
		rc = mdb_env_set_maxreaders(env, 1024); /* as the engine */
	if (!rc)
		rc = mdb_env_open(env, argv[1], MDB_NOTLS, 0600);
	if (!rc)
		rc = mdb_txn_begin(env, NULL, 0, &txn);
	if (rc) {
		fprintf(stderr, "lmdb_hold: %s: %s\n", argv[1],
			mdb_strerror(rc));
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
