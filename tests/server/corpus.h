/*
 * corpus.h -- the real-world CRD corpus (shared/testdata/crds) for the
 * server tests: where it is, its index, and its files' YAML documents as
 * JSON (server/yamljson.c).
 */
#ifndef LAPIS_TEST_CORPUS_H
#define LAPIS_TEST_CORPUS_H

#include <stddef.h>

#include <jansson.h>

/* The corpus directory (malloc'd), or NULL where there is none. */
char *tcorp_dir(void);
/* The bytes of path, NUL-terminated (malloc'd); asserts it reads. */
char *tcorp_read(const char *path, size_t *len);
/* dir/index.json, parsed (new); asserts. */
json_t *tcorp_index(const char *dir);
/* fn for every non-null YAML document of dir/file, split on lines "---"
   as kubectl splits them, in order; asserts each converts. fn borrows
   doc. */
void tcorp_each_doc(const char *dir, const char *file,
		    void (*fn)(json_t *doc, void *ud), void *ud);

#endif
