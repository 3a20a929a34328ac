/*
 * replay.c -- the plain driver of a harness: runs LLVMFuzzerTestOneInput
 * once on each file named on the command line, and on every regular file
 * of each directory named there (in name order, so runs repeat exactly).
 * This is how CTest replays the corpora and the regression inputs in the
 * builds without libFuzzer (SQLite's fuzzcheck.c idea, STYLE.md §7).
 *
 * Exit 0 when every input ran; 1 when an argument cannot be read or a
 * directory holds no input (a corpus that vanished must not pass quietly).
 * A harness that finds a bug aborts or trips a sanitizer, which fails the
 * test with the input's name printed just before.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Read a whole file; new buffer (never NULL on success, even when empty). */
static bool slurp(const char *path, uint8_t **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	size_t cap = 4096, n = 0;
	uint8_t *b = malloc(cap);
	while (b) {
		n += fread(b + n, 1, cap - n, f);
		if (n < cap)
			break;
		uint8_t *nb = realloc(b, cap * 2);
		if (!nb) {
			free(b);
			b = NULL;
			break;
		}
		b = nb;
		cap *= 2;
	}
	bool ok = b && !ferror(f);
	fclose(f);
	if (!ok) {
		free(b);
		return false;
	}
	*buf = b;
	*len = n;
	return true;
}

static bool run_file(const char *path)
{
	uint8_t *buf;
	size_t len;
	if (!slurp(path, &buf, &len)) {
		fprintf(stderr, "replay: cannot read %s: %s\n", path,
			strerror(errno));
		return false;
	}
	/* Named before it runs, so that a crash says which input it was. */
	fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
	/* A copy of exactly len bytes, so ASan sees any read past the end. */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact) {
		free(buf);
		return false;
	}
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return true;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file directly in dir; adds their count to *n_run. */
static bool run_dir(const char *dir, size_t *n_run)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "replay: cannot open %s: %s\n", dir,
			strerror(errno));
		return false;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	bool ok = true;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **nn = realloc(names, cap * sizeof *names);
			if (!nn) {
				ok = false;
				break;
			}
			names = nn;
		}
		size_t l = strlen(dir) + 1 + strlen(de->d_name) + 1;
		if (!(names[n] = malloc(l))) {
			ok = false;
			break;
		}
		snprintf(names[n++], l, "%s/%s", dir, de->d_name);
	}
	closedir(d);
	if (ok && names)
		qsort(names, n, sizeof *names, cmp_names);
	size_t ran = 0;
	for (size_t i = 0; ok && i < n; i++) {
		struct stat st;
		if (stat(names[i], &st) == 0 && !S_ISREG(st.st_mode))
			continue;
		ok = run_file(names[i]);
		ran++;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (ok && ran == 0) {
		fprintf(stderr, "replay: %s holds no input\n", dir);
		ok = false;
	}
	*n_run += ran;
	return ok;
}

int main(int argc, char **argv)
{
	size_t n_run = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE-OR-DIRECTORY...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i],
				strerror(errno));
			return 1;
		}
		if (S_ISDIR(st.st_mode) ? !run_dir(argv[i], &n_run)
					: !run_file(argv[i]))
			return 1;
		if (!S_ISDIR(st.st_mode))
			n_run++;
	}
	printf("replay: %zu inputs ok\n", n_run);
	return 0;
}
