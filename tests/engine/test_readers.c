/*
 * test_readers.c -- regression: a thread's parked read transaction holds an
 * LMDB reader slot; when the thread exits the slot must come back, or a
 * process that starts more than max_readers short-lived reading threads gets
 * LP_E_READERSFULL (found by bench-engine's author).
 */
#include <criterion/criterion.h>
#include <pthread.h>

#include "lapis/engine.h"
#include "support.h"

static eng *E;

static void *reader(void *arg)
{
	eng_rd *r;
	lp_err rc = eng_rd_begin(E, &r);
	if (!rc)
		eng_rd_end(r);
	*(lp_err *)arg = rc;
	return NULL;
}

Test(eng_readers, exited_threads_give_their_reader_slots_back)
{
	char *dir = ts_tmpdir("readers");
	struct eng_opts o = {.dir = dir, .nosync = 1, .max_readers = 8};
	cr_assert_eq(eng_open(&o, &E), LP_OK);
	for (int i = 0; i < 100; i++) {
		pthread_t t;
		lp_err rc = LP_E_IO;
		pthread_create(&t, NULL, reader, &rc);
		pthread_join(t, NULL);
		cr_assert_eq(rc, LP_OK, "thread %d: %s", i + 1, lp_errname(rc));
	}
	eng_close(E);
	ts_rmtree_free(dir);
}

Test(eng_readers, a_thread_exiting_after_close_is_harmless)
{
	char *dir = ts_tmpdir("readers2");
	struct eng_opts o = {.dir = dir, .nosync = 1};
	cr_assert_eq(eng_open(&o, &E), LP_OK);
	lp_err rc = LP_E_IO;
	pthread_t t;
	pthread_create(&t, NULL, reader, &rc);
	pthread_join(t, NULL);
	cr_assert_eq(rc, LP_OK);
	eng_rd *r;
	cr_assert_eq(eng_rd_begin(E, &r), LP_OK); /* this thread parks one too */
	eng_rd_end(r);
	eng_close(E);
	ts_rmtree_free(dir);
}
