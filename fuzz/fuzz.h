/*
 * fuzz.h -- what every harness in fuzz/ shares.
 *
 * A harness defines LLVMFuzzerTestOneInput and nothing else. It is built
 * three ways (fuzz/CMakeLists.txt): with libFuzzer (LAPIS_FUZZ), with
 * AFL++'s driver (LAPIS_AFL), and as a plain replayer linked with
 * fuzz/replay.c, which CTest runs over the harness's corpus and its
 * regression inputs in the normal and ASan builds.
 *
 * A harness checks invariants with FUZZ_CHECK: a violation prints what
 * failed and aborts, which every driver reports as a crash and saves the
 * input. Sanitizers catch the rest (memory errors, leaks, undefined
 * behaviour). One call, one thread; no state survives a call but what a
 * harness keeps on purpose (and says so).
 */
#ifndef LAPIS_FUZZ_H
#define LAPIS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "lapis/engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                 \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "%s:%d: invariant failed: %s: ",      \
				__FILE__, __LINE__, #cond);                   \
			fprintf(stderr, __VA_ARGS__);                         \
			fputc('\n', stderr);                                  \
			abort();                                              \
		}                                                             \
	} while (0)

/* jansson seeds the hash of its objects from /dev/urandom on first use,
   so which keys share a bucket, and with it the code a run covers,
   changed from run to run: a fixed seed, set before main, makes a fixed
   libFuzzer seed repeat a run exactly (with address randomisation off,
   fuzz/run.sh). */
__attribute__((constructor)) static void fuzz_fixed_json_seed(void)
{
	json_object_seed(1);
}

/* The input as a NUL-terminated string (bytes after an embedded NUL are
   kept but invisible to C string functions); new, or NULL when out of
   memory. */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (s) {
		memcpy(s, data, size);
		s[size] = 0;
	}
	return s;
}

/* A throwaway store for a harness that keeps one for the process, in a
   new directory under /tmp named by tag; dir (n bytes, at least 64) gets
   its path for fuzz_store_close. */
static inline eng *fuzz_store_open(const char *tag, char *dir, size_t n)
{
	snprintf(dir, n, "/tmp/lapis-fuzz-%s-XXXXXX", tag);
	FUZZ_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	struct eng_opts o = {.dir = dir, .nosync = 1};
	eng *e = NULL;
	FUZZ_CHECK(eng_open(&o, &e) == LP_OK, "eng_open");
	return e;
}

/* Close the store and remove its files and directory. */
static inline void fuzz_store_close(eng *e, const char *dir)
{
	eng_close(e);
	char p[128];
	snprintf(p, sizeof p, "%s/data.mdb", dir);
	remove(p);
	snprintf(p, sizeof p, "%s/lock.mdb", dir);
	remove(p);
	remove(dir);
}

#endif
