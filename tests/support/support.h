/*
 * support.h -- helpers shared by the tests: temporary directories, seeds,
 * and the slowness factor of sanitized builds.
 */
#ifndef LAPIS_TEST_SUPPORT_H
#define LAPIS_TEST_SUPPORT_H

#include <stdint.h>

/* Make a new temporary directory; returns a malloc'd path. Aborts on failure. */
char *ts_tmpdir(const char *tag);
/* Remove a directory tree (best effort) and free the path. NULL ok. */
void ts_rmtree_free(char *path);
/* The seed for a randomized test: $LAPIS_SEED if set, else def. Printed. */
uint64_t ts_seed(const char *test, uint64_t def);
/* A small fast PRNG (splitmix64). */
uint64_t ts_rand(uint64_t *state);
/* Slowness factor: 1 plain, 4 under sanitizers ($LAPIS_TEST_SLOW). */
int ts_slow(void);

#endif
