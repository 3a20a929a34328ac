/*
 * fuzz_list_paging.c -- paged lists against their one-shot list (issue 6,
 * harness 1), through the real engine and registry (reg_list) on a
 * temporary store.
 *
 * The input is a program: puts and deletes over a small key space in two
 * resource prefixes and three namespaces, compactions, and paged lists with
 * arbitrary limits, with writes, deletes and compactions between pages;
 * plus garbage and edited continue tokens.
 *
 * Kept on purpose across calls: one engine (opening LMDB per input would
 * make the harness slow); each input writes under a prefix of its own.
 *
 * Invariants:
 *   1. The pages of a list, concatenated, equal the one-shot list at the
 *      first page's revision: same keys and bytes, in key order, no
 *      duplicate, no skip -- whatever is written, deleted or compacted
 *      between pages -- unless a compaction passed that revision, which
 *      must then give LP_E_COMPACTED.
 *   2. Every page reads at the first page's revision; remaining counts are
 *      exact (what the later pages deliver).
 *   3. A malformed token is LP_E_BADREQUEST; a well-formed but edited one
 *      never yields a key outside the request's prefix.
 */
#include <stdbool.h>

#include "fuzz.h"
#include "lapis/engine.h"
#include "registry/object.h"
#include "registry/registry.h"
#include "registry/store.h"

static eng *E;
static unsigned long call_no;
static char dir_path[64];

static void close_store(void)
{
	fuzz_store_close(E, dir_path);
	E = NULL;
}

static void open_once(void)
{
	if (E)
		return;
	E = fuzz_store_open("paging", dir_path, sizeof dir_path);
	atexit(close_store);
}

struct page {
	char **keys;
	char **vals;
	size_t n, cap;
};

static void page_free(struct page *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->keys[i]);
		free(p->vals[i]);
	}
	free(p->keys);
	free(p->vals);
	memset(p, 0, sizeof *p);
}

static enum eng_take collect(void *ud, const struct eng_record *rec)
{
	struct page *p = ud;
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 16;
		p->keys = realloc(p->keys, p->cap * sizeof *p->keys);
		p->vals = realloc(p->vals, p->cap * sizeof *p->vals);
		FUZZ_CHECK(p->keys && p->vals, "oom");
	}
	p->keys[p->n] = fuzz_strndup(rec->key, rec->key_len);
	p->vals[p->n] = fuzz_strndup(rec->value, rec->value_len);
	p->n++;
	return ENG_TAKE;
}

struct prog {
	const uint8_t *d;
	size_t n, i;
};

static unsigned next(struct prog *p)
{
	return p->i < p->n ? p->d[p->i++] : 0;
}

static void key_of(char *buf, size_t n, unsigned long call, unsigned b)
{
	snprintf(buf, n, "/registry/fz%lu/%s/ns%u/k%02u", call, (b & 1) ? "b" : "a",
		 (b >> 1) % 3, (b >> 3) % 24);
}

static void write_op(struct prog *p, unsigned long call)
{
	unsigned op = next(p), b = next(p);
	char key[128], val[64];
	key_of(key, sizeof key, call, b);
	eng_txn *t;
	FUZZ_CHECK(eng_txn_new(E, &t) == LP_OK, "txn");
	if (op & 1) {
		eng_txn_del(t, key, strlen(key), NULL);
	} else {
		int n = snprintf(val, sizeof val, "{\"rv\":\"\",\"b\":%u}", b);
		eng_txn_put(t, key, strlen(key), val, (size_t)n, 7, NULL);
	}
	lp_err rc = eng_txn_commit(t, NULL);
	FUZZ_CHECK(rc == LP_OK, "commit: %s", lp_errname(rc));
	eng_txn_free(t);
}

static void compact_op(struct prog *p)
{
	int64_t rev = eng_rev(E), lo = eng_compacted(E);
	int64_t target = lo + (int64_t)(next(p) % (unsigned)(rev - lo + 1));
	FUZZ_CHECK(eng_compact(E, target, NULL) == LP_OK, "compact");
}

/* One paged list of prefix with writes between pages, checked against the
   one-shot list at its revision. */
static void list_op(struct prog *p, unsigned long call)
{
	unsigned b = next(p);
	char pfx[96];
	if (b & 4)
		snprintf(pfx, sizeof pfx, "/registry/fz%lu/%s/ns%u/", call,
			 (b & 1) ? "b" : "a", (b >> 3) % 3);
	else
		snprintf(pfx, sizeof pfx, "/registry/fz%lu/%s/", call,
			 (b & 1) ? "b" : "a");
	struct reg_key prefix;
	prefix.len = strlen(pfx);
	memcpy(prefix.bytes, pfx, prefix.len + 1);
	uint64_t limit = 1 + next(p) % 7;
	struct page all = {0};
	int64_t rev = 0, remaining = -1;
	char *token = NULL;
	bool expired = false;
	for (int page_no = 0; page_no < 64; page_no++) {
		struct page pg = {0};
		struct reg_list_req q = {.prefix = &prefix, .limit = limit,
					 .cont = token, .count = true};
		struct reg_list_res res;
		lp_err rc = reg_list(E, &q, collect, &pg, &res);
		if (rc == LP_E_COMPACTED) {
			FUZZ_CHECK(page_no > 0 && eng_compacted(E) > rev,
				   "COMPACTED on page %d (rev %lld, compacted %lld)",
				   page_no, (long long)rev, (long long)eng_compacted(E));
			expired = true;
			page_free(&pg);
			break;
		}
		FUZZ_CHECK(rc == LP_OK, "reg_list: %s", lp_errname(rc));
		if (page_no == 0)
			rev = res.rev;
		FUZZ_CHECK(res.rev == rev, "page %d at %lld, first at %lld", page_no,
			   (long long)res.rev, (long long)rev);
		if (remaining >= 0)
			FUZZ_CHECK((int64_t)pg.n <= remaining, "more than remaining");
		for (size_t i = 0; i < pg.n; i++) {
			FUZZ_CHECK(!strncmp(pg.keys[i], pfx, strlen(pfx)),
				   "key %s outside %s", pg.keys[i], pfx);
			collect(&all, &(struct eng_record){
					       .key = (const uint8_t *)pg.keys[i],
					       .key_len = strlen(pg.keys[i]),
					       .value = (const uint8_t *)pg.vals[i],
					       .value_len = strlen(pg.vals[i])});
		}
		if (remaining >= 0)
			remaining -= (int64_t)pg.n;
		page_free(&pg);
		free(token);
		token = res.token;
		if (token)
			remaining = res.remaining;
		else
			FUZZ_CHECK(remaining <= 0 && (page_no == 0 || remaining == 0),
				   "no token but %lld remaining", (long long)remaining);
		if (!token)
			break;
		/* writes, deletes and compactions between pages */
		unsigned between = next(p) % 4;
		for (unsigned i = 0; i < between; i++) {
			unsigned what = next(p);
			if (what % 5 == 4)
				compact_op(p);
			else
				write_op(p, call);
		}
	}
	free(token);
	if (!expired && rev >= eng_compacted(E)) {
		struct page once = {0};
		struct reg_list_req q = {.prefix = &prefix, .at_rev = rev};
		struct reg_list_res res;
		lp_err rc = reg_list(E, &q, collect, &once, &res);
		FUZZ_CHECK(rc == LP_OK || rc == LP_E_COMPACTED, "one-shot: %s",
			   lp_errname(rc));
		if (rc == LP_OK) {
			FUZZ_CHECK(once.n == all.n, "pages gave %zu, one-shot %zu",
				   all.n, once.n);
			for (size_t i = 0; i < once.n; i++) {
				FUZZ_CHECK(!strcmp(once.keys[i], all.keys[i]) &&
						   !strcmp(once.vals[i], all.vals[i]),
					   "item %zu: %s vs %s", i, all.keys[i],
					   once.keys[i]);
				if (i)
					FUZZ_CHECK(strcmp(all.keys[i - 1], all.keys[i]) < 0,
						   "order at %zu", i);
			}
		}
		page_free(&once);
	}
	page_free(&all);
}

/* A hostile token: garbage, or a valid one whose start key was edited. */
static void token_op(struct prog *p, unsigned long call)
{
	char pfx[64];
	snprintf(pfx, sizeof pfx, "/registry/fz%lu/a/", call);
	struct reg_key prefix;
	prefix.len = strlen(pfx);
	memcpy(prefix.bytes, pfx, prefix.len + 1);
	char start[48];
	size_t sl = 0;
	unsigned n = next(p) % 24;
	for (unsigned i = 0; i < n && sl < sizeof start - 1; i++) {
		static const char alphabet[] = "./\\abnsk0\xff\x01-";
		start[sl++] = alphabet[next(p) % (sizeof alphabet - 1)];
	}
	start[sl] = 0;
	char *tok;
	if (next(p) & 1) {
		tok = reg_continue_encode((int64_t)(next(p) % 8) - 1, start, sl);
	} else {
		tok = fuzz_strndup((const uint8_t *)start, sl);
	}
	FUZZ_CHECK(tok != NULL, "oom");
	struct page pg = {0};
	struct reg_list_req q = {.prefix = &prefix, .limit = 5, .cont = tok};
	struct reg_list_res res;
	lp_err rc = reg_list(E, &q, collect, &pg, &res);
	FUZZ_CHECK(rc == LP_OK || rc == LP_E_BADREQUEST || rc == LP_E_COMPACTED ||
			   rc == LP_E_FUTURE,
		   "edited token: %s", lp_errname(rc));
	for (size_t i = 0; i < pg.n; i++)
		FUZZ_CHECK(!strncmp(pg.keys[i], pfx, strlen(pfx)),
			   "edited token read %s outside %s", pg.keys[i], pfx);
	if (rc == LP_OK)
		free(res.token);
	page_free(&pg);
	free(tok);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	open_once();
	unsigned long call = ++call_no;
	struct prog p = {.d = data, .n = size > 512 ? 512 : size};
	while (p.i < p.n) {
		switch (next(&p) % 8) {
		case 0:
		case 1:
		case 2:
		case 3:
			write_op(&p, call);
			break;
		case 4:
			compact_op(&p);
			break;
		case 5:
		case 6:
			list_op(&p, call);
			break;
		case 7:
			token_op(&p, call);
			break;
		}
	}
	return 0;
}
