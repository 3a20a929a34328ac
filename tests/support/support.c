/* support.c -- see support.h. */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support.h"

char *ts_tmpdir(const char *tag)
{
	const char *base = getenv("TMPDIR");
	char buf[4096];
	snprintf(buf, sizeof buf, "%s/lapis-%s-XXXXXX", base ? base : "/tmp",
		 tag ? tag : "test");
	if (!mkdtemp(buf)) {
		perror("mkdtemp");
		abort();
	}
	char *p = strdup(buf);
	if (!p)
		abort();
	return p;
}

static int rm_one(const char *path, const struct stat *sb, int flag,
		  struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void ts_rmtree_free(char *path)
{
	if (!path)
		return;
	if (!getenv("LAPIS_KEEP_TMP"))
		nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(path);
}

uint64_t ts_seed(const char *test, uint64_t def)
{
	const char *s = getenv("LAPIS_SEED");
	uint64_t seed = s ? strtoull(s, NULL, 0) : def;
	fprintf(stderr, "%s: seed %llu (set LAPIS_SEED to override)\n", test,
		(unsigned long long)seed);
	return seed;
}

uint64_t ts_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int ts_slow(void)
{
	const char *s = getenv("LAPIS_TEST_SLOW");
	int n = s ? atoi(s) : 1;
	return n > 0 ? n : 1;
}
