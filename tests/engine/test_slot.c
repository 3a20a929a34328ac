/*
 * test_slot.c -- the revision slot (engine.h "Model" 4): bytes returned by
 * every read path carry their record's mod_rev in decimal at the slot.
 *
 * Invariants checked
 *  1. A put with slot_off inserts the decimal mod_rev at that offset; the
 *     slot may be at 0 or at value_len; slot_off > value_len is LP_E_INVAL.
 *  2. Every read path shows it: latest get, get at an old revision, range
 *     (latest and at_rev), eng_txn_result cur and prev, watch PUT events
 *     (rec and prev) and DEL events (rec carries the delete's revision, prev
 *     the last stored one), after reopen too.
 *  3. ENG_NO_SLOT values come back byte for byte.
 */
#include "common.h"

static struct tc_store S;

static void setup(void)
{
	tc_open(&S, "slot", NULL);
}

static void teardown(void)
{
	tc_done(&S);
}

TestSuite(eng_slot, .init = setup, .fini = teardown);

#define RV "{\"rv\":\"\"}"
#define RV_OFF 7

static int64_t put_rv(const char *key, const char *v, uint32_t off)
{
	struct eng_commit_res res = {0};
	TC_OK(tc_put(S.e, key, strlen(key), v, strlen(v), off, NULL, &res));
	return res.rev;
}

static void want_value(const struct eng_record *r, const char *want)
{
	cr_assert_eq(r->value_len, strlen(want), "value '%.*s', want '%s'",
		     (int)r->value_len, (const char *)r->value, want);
	cr_assert(memcmp(r->value, want, r->value_len) == 0,
		  "value '%.*s', want '%s'", (int)r->value_len,
		  (const char *)r->value, want);
}

static void want_get(const char *key, int64_t at, const char *want)
{
	eng_rd *r;
	struct eng_record rec = {0};
	TC_OK(eng_rd_begin(S.e, &r));
	TC_OK(eng_get(r, key, strlen(key), at, &rec));
	want_value(&rec, want);
	eng_rd_end(r);
}

Test(eng_slot, get_latest_and_old)
{
	cr_assert_eq(put_rv("/a", RV, RV_OFF), 2);
	want_get("/a", 0, "{\"rv\":\"2\"}");
	for (int i = 0; i < 10; i++)
		put_rv("/b", RV, RV_OFF);
	cr_assert_eq(put_rv("/a", RV, RV_OFF), 13);
	want_get("/a", 0, "{\"rv\":\"13\"}");
	want_get("/a", 12, "{\"rv\":\"2\"}");
	want_get("/a", 2, "{\"rv\":\"2\"}");
	want_get("/b", 12, "{\"rv\":\"12\"}");
	want_get("/b", 5, "{\"rv\":\"5\"}");
	tc_reopen(&S);
	want_get("/a", 0, "{\"rv\":\"13\"}");
	want_get("/b", 7, "{\"rv\":\"7\"}");
}

Test(eng_slot, slot_at_start_end_and_none)
{
	put_rv("/start", "abc", 0);
	put_rv("/end", "abc", 3);
	put_rv("/none", "a\"rv\"", ENG_NO_SLOT);
	put_rv("/empty", "", 0);
	want_get("/start", 0, "2abc");
	want_get("/end", 0, "abc3");
	want_get("/none", 0, "a\"rv\"");
	want_get("/empty", 0, "5");
	struct eng_info in;
	TC_OK(eng_info(S.e, &in));
	cr_assert_eq(in.data_bytes, 4 + 4 + 5 + 1);
}

Test(eng_slot, bad_slot_is_refused)
{
	eng_txn *t;
	TC_OK(eng_txn_new(S.e, &t));
	TC_RC(eng_txn_put(t, "/a", 2, "abc", 3, 4, NULL), LP_E_INVAL);
	TC_RC(eng_txn_put(t, "/a", 2, "", 0, 1, NULL), LP_E_INVAL);
	TC_RC(eng_txn_put(t, "/a", 2, "abc", 3, ENG_NO_SLOT - 1, NULL),
	      LP_E_INVAL);
	eng_txn_free(t);
	cr_assert_eq(eng_rev(S.e), 1);
}

Test(eng_slot, range_latest_and_at_rev)
{
	put_rv("/r/a", RV, RV_OFF);
	put_rv("/r/b", "x" RV, RV_OFF + 1);
	put_rv("/r/a", RV, RV_OFF);
	struct tc_list l = {0};
	struct eng_range_req q = {.prefix = "/r/", .prefix_len = 3};
	struct eng_range_res res = {0};
	TC_OK(tc_range(S.e, &q, &l, &res));
	cr_assert_eq(l.n, 2);
	cr_assert_str_eq((char *)l.v[0].value, "{\"rv\":\"4\"}");
	cr_assert_str_eq((char *)l.v[1].value, "x{\"rv\":\"3\"}");
	tc_list_free(&l);
	q.at_rev = 3;
	TC_OK(tc_range(S.e, &q, &l, &res));
	cr_assert_eq(l.n, 2);
	cr_assert_str_eq((char *)l.v[0].value, "{\"rv\":\"2\"}");
	cr_assert_str_eq((char *)l.v[1].value, "x{\"rv\":\"3\"}");
	tc_list_free(&l);
}

Test(eng_slot, txn_result_cur_and_prev)
{
	put_rv("/a", RV, RV_OFF);
	put_rv("/pad", "p", ENG_NO_SLOT);
	eng_txn *t;
	TC_OK(eng_txn_new(S.e, &t));
	TC_OK(eng_txn_put(t, "/a", 2, RV, strlen(RV), RV_OFF, NULL));
	TC_OK(eng_txn_put(t, "/c", 2, "<>", 2, 1, NULL));
	struct eng_commit_res res = {0};
	TC_OK(eng_txn_commit(t, &res));
	cr_assert_eq(res.rev, 4);
	struct eng_record prev = {0}, cur = {0};
	cr_assert_eq(eng_txn_result(t, 0, &prev, &cur), 1);
	want_value(&cur, "{\"rv\":\"4\"}");
	want_value(&prev, "{\"rv\":\"2\"}");
	cr_assert_eq(eng_txn_result(t, 1, NULL, &cur), 0);
	want_value(&cur, "<4>");
	eng_txn_free(t);

	/* A failed compare: prev is the current record, slot filled. */
	struct eng_cmp cmp = {.kind = ENG_CMP_ABSENT};
	TC_OK(eng_txn_new(S.e, &t));
	TC_OK(eng_txn_put(t, "/a", 2, RV, strlen(RV), RV_OFF, &cmp));
	TC_RC(eng_txn_commit(t, &res), LP_E_EXISTS);
	cr_assert_eq(res.failed_op, 0);
	cr_assert_eq(eng_txn_result(t, 0, &prev, NULL), 1);
	want_value(&prev, "{\"rv\":\"4\"}");
	eng_txn_free(t);
}

Test(eng_slot, watch_put_and_delete_events)
{
	struct tc_waiter wt;
	tc_waiter_init(&wt);
	eng_watch *w;
	TC_OK(eng_watch_open(S.e, "/w/", 3, 1, tc_ready, &wt, &w));
	put_rv("/w/a", RV, RV_OFF); /* 2 */
	put_rv("/w/a", RV, RV_OFF); /* 3 */
	cr_assert_eq(tc_dels(S.e, "/w/a"), 4);
	put_rv("/w/b", "nothing", ENG_NO_SLOT); /* 5 */
	cr_assert_eq(tc_dels(S.e, "/w/b"), 6);

	eng_event *ev;
	TC_OK(tc_next_wait(w, &wt, &ev));
	cr_assert_eq(ev->type, ENG_EV_PUT);
	cr_assert_eq(ev->rev, 2);
	want_value(&ev->rec, "{\"rv\":\"2\"}");
	cr_assert_null(ev->prev.value);
	eng_event_unref(ev);

	TC_OK(tc_next_wait(w, &wt, &ev));
	cr_assert_eq(ev->type, ENG_EV_PUT);
	cr_assert_eq(ev->rev, 3);
	want_value(&ev->rec, "{\"rv\":\"3\"}");
	cr_assert_not_null(ev->prev.value);
	want_value(&ev->prev, "{\"rv\":\"2\"}");
	eng_event_unref(ev);

	TC_OK(tc_next_wait(w, &wt, &ev));
	cr_assert_eq(ev->type, ENG_EV_DEL);
	cr_assert_eq(ev->rev, 4);
	cr_assert_eq(ev->rec.mod_rev, 4);
	want_value(&ev->rec, "{\"rv\":\"4\"}");
	want_value(&ev->prev, "{\"rv\":\"3\"}");
	cr_assert_eq(ev->prev.mod_rev, 3);
	eng_event_unref(ev);

	TC_OK(tc_next_wait(w, &wt, &ev));
	cr_assert_eq(ev->rev, 5);
	want_value(&ev->rec, "nothing");
	eng_event_unref(ev);
	TC_OK(tc_next_wait(w, &wt, &ev));
	cr_assert_eq(ev->type, ENG_EV_DEL);
	cr_assert_eq(ev->rev, 6);
	want_value(&ev->rec, "nothing");
	eng_event_unref(ev);
	eng_watch_close(w);

	/* A second watcher from revision 3 sees the same DELETE bytes. */
	TC_OK(eng_watch_open(S.e, "/w/", 3, 3, tc_ready, &wt, &w));
	TC_OK(tc_next_wait(w, &wt, &ev));
	cr_assert_eq(ev->type, ENG_EV_DEL);
	want_value(&ev->rec, "{\"rv\":\"4\"}");
	want_value(&ev->prev, "{\"rv\":\"3\"}");
	eng_event_unref(ev);
	eng_watch_close(w);
	tc_waiter_destroy(&wt);
}

/* With a tiny ring, old events come from the change log: slots must be
   filled there as well. */
Test(eng_slot, replayed_events_carry_the_slot)
{
	tc_done(&S);
	struct eng_opts o = {.nosync = 1, .ring_events = 4};
	tc_open(&S, "slot-replay", &o);
	put_rv("/w/a", RV, RV_OFF); /* 2 */
	put_rv("/w/a", RV, RV_OFF); /* 3 */
	tc_dels(S.e, "/w/a");	    /* 4 */
	for (int i = 0; i < 20; i++)
		put_rv("/pad", "p", ENG_NO_SLOT);
	struct tc_waiter wt;
	tc_waiter_init(&wt);
	eng_watch *w;
	TC_OK(eng_watch_open(S.e, "/w/", 3, 1, tc_ready, &wt, &w));
	eng_event *ev;
	TC_OK(tc_next_wait(w, &wt, &ev));
	cr_assert_eq(ev->rev, 2);
	want_value(&ev->rec, "{\"rv\":\"2\"}");
	eng_event_unref(ev);
	TC_OK(tc_next_wait(w, &wt, &ev));
	cr_assert_eq(ev->rev, 3);
	want_value(&ev->rec, "{\"rv\":\"3\"}");
	want_value(&ev->prev, "{\"rv\":\"2\"}");
	eng_event_unref(ev);
	TC_OK(tc_next_wait(w, &wt, &ev));
	cr_assert_eq(ev->type, ENG_EV_DEL);
	cr_assert_eq(ev->rev, 4);
	cr_assert_eq(ev->rec.mod_rev, 4);
	want_value(&ev->rec, "{\"rv\":\"4\"}");
	want_value(&ev->prev, "{\"rv\":\"3\"}");
	eng_event_unref(ev);
	TC_RC(eng_watch_next(w, &ev), LP_E_AGAIN);
	eng_watch_close(w);
	tc_waiter_destroy(&wt);
}
