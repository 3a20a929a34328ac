/*
 * test_watch_publish.c -- regression: a commit is visible to readers before
 * its events are published, so a watch opened in between from the new
 * revision must not be handed that revision's changes (engine.h: only
 * changes after from_rev). Found by the informer tests (issue 4).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "lapis/engine.h"
#include "support.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int hold, in_hook;
static eng *E;

/* Runs on the writer between commit and publish: parks it there. */
static void hook(void *ud, uint64_t group)
{
	(void)ud;
	(void)group;
	pthread_mutex_lock(&mu);
	if (hold) {
		in_hook = 1;
		pthread_cond_broadcast(&cv);
		while (hold)
			pthread_cond_wait(&cv, &mu);
	}
	pthread_mutex_unlock(&mu);
}

static void ready(void *ud)
{
	(void)ud;
}

static void *writer(void *arg)
{
	(void)arg;
	eng_txn *t;
	struct eng_commit_res r;
	cr_assert_eq(eng_txn_new(E, &t), LP_OK);
	cr_assert_eq(eng_txn_put(t, "/p/a", 4, "v", 1, ENG_NO_SLOT, NULL), LP_OK);
	cr_assert_eq(eng_txn_commit(t, &r), LP_OK);
	eng_txn_free(t);
	return NULL;
}

Test(eng_watch_publish, watch_opened_between_commit_and_publish_skips_that_revision)
{
	char *dir = ts_tmpdir("watchpub");
	struct eng_opts o = {.dir = dir, .nosync = 1, .on_commit = hook};
	cr_assert_eq(eng_open(&o, &E), LP_OK);
	pthread_mutex_lock(&mu);
	hold = 1;
	pthread_mutex_unlock(&mu);
	pthread_t t;
	pthread_create(&t, NULL, writer, NULL);
	pthread_mutex_lock(&mu);
	while (!in_hook)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	int64_t rev = eng_rev(E); /* committed, visible, not yet published */
	cr_assert_eq(rev, 2);
	eng_watch *w;
	cr_assert_eq(eng_watch_open(E, "/p/", 3, rev, ready, NULL, &w), LP_OK);
	pthread_mutex_lock(&mu);
	hold = 0;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(t, NULL);
	eng_event *ev = NULL;
	lp_err rc = eng_watch_next(w, &ev);
	cr_expect_eq(rc, LP_E_AGAIN, "got %s%s", lp_errname(rc),
		     rc == LP_OK ? " (a change at from_rev)" : "");
	if (rc == LP_OK)
		eng_event_unref(ev);
	eng_watch_close(w);
	eng_close(E);
	ts_rmtree_free(dir);
}
