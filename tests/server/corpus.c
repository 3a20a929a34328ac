/* corpus.c -- see corpus.h. */
#include "corpus.h"

#include <criterion/criterion.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "srv_error.h"
#include "yamljson.h"

char *tcorp_dir(void)
{
	struct stat st;
	const char *fixed = "/work/shared/testdata/crds";
	if (stat(fixed, &st) == 0 && S_ISDIR(st.st_mode))
		return strdup(fixed);
	char src[4096];
	snprintf(src, sizeof src, "%s", __FILE__);
	char *dir = dirname(src); /* tests/server */
	char path[8192];
	snprintf(path, sizeof path, "%s/../../../shared/testdata/crds", dir);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return strdup(path);
	return NULL;
}

char *tcorp_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

json_t *tcorp_index(const char *dir)
{
	char ipath[8192];
	snprintf(ipath, sizeof ipath, "%s/index.json", dir);
	json_error_t je;
	json_t *index = json_load_file(ipath, 0, &je);
	cr_assert_not_null(index, "%s: %s", ipath, je.text);
	return index;
}

void tcorp_each_doc(const char *dir, const char *file,
		    void (*fn)(json_t *doc, void *ud), void *ud)
{
	char path[8192];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	size_t len;
	char *buf = tcorp_read(path, &len);
	char *start = buf, *p = buf;
	for (;;) {
		char *eol = strchr(p, '\n');
		size_t ll = eol ? (size_t)(eol - p) : strlen(p);
		bool sep = (ll == 3 && strncmp(p, "---", 3) == 0) ||
			   (ll == 4 && strncmp(p, "---\r", 4) == 0);
		if (sep || !eol) {
			size_t dl = (size_t)((sep ? p : p + ll) - start);
			struct srv_error err = {0};
			json_t *doc = NULL;
			lp_err rc = srv_yaml_to_json(start, dl, &doc, &err);
			cr_assert_eq(rc, LP_OK, "%s: %s", file, err.message);
			if (!json_is_null(doc))
				fn(doc, ud);
			json_decref(doc);
			if (!eol)
				break;
			start = eol + 1;
		}
		p = eol + 1;
	}
	free(buf);
}
