/*
 * eventttl.c -- the event TTL controller: deletes an Event a while
 * (--event-ttl, one hour by default) after it was last written, as
 * kube-apiserver does with an etcd lease on every Event it stores.
 *
 * The store keeps no write times, so an Event's last write is read off the
 * Event itself: the latest of its creationTimestamp, its managedFields'
 * times, lastTimestamp, eventTime and series.lastObservedTime. Those are
 * what a write of an Event sets (the server sets the first two, event
 * recorders the others when they count a repeat). One that was written
 * without touching any of them expires from the latest of them, which is
 * where this controller differs from a lease renewed on every write.
 *
 * observe (informer thread): an Event added or updated is queued for when
 * it expires (ctl_add_after).
 * sync (one worker): read the Event; if it expired, delete it (its uid a
 * precondition: one deleted and made again under its name meanwhile stays);
 * if it was written again since, queue it for its new expiry.
 *
 * Events are stored under one prefix for both core/v1 and
 * events.k8s.io/v1 (the same objects, DESIGN.md "Keys").
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ctl.h"
#include "lapis/log.h"
#include "registry/registry.h"
#include "registry/store.h"

#define EVENTS_PREFIX "/registry/events/"

/* kube-apiserver's --event-ttl default */
#define EVENT_TTL_DEFAULT_MS (60LL * 60 * 1000)

static _Atomic int64_t event_ttl_ms = EVENT_TTL_DEFAULT_MS;

void ctl_set_event_ttl(int64_t ms)
{
	event_ttl_ms = ms;
}

int64_t ctl_event_ttl(void)
{
	return event_ttl_ms;
}

/* An RFC 3339 time (fractions and an offset allowed) as ms since the
   epoch; 0 when s is no such time. */
static int64_t time_ms(const char *s)
{
	if (!s)
		return 0;
	int y, mo, d, h, mi, se, n = 0;
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &se,
		   &n) != 6 ||
	    n != 19)
		return 0;
	struct tm tm = {.tm_year = y - 1900,
			.tm_mon = mo - 1,
			.tm_mday = d,
			.tm_hour = h,
			.tm_min = mi,
			.tm_sec = se};
	int64_t ms = (int64_t)timegm(&tm) * 1000;
	const char *p = s + 19;
	if (*p == '.') {
		int64_t f = 0, scale = 100;
		for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
			f += scale ? (*p - '0') * scale : 0;
		ms += f;
	}
	int oh, om;
	if ((*p == '+' || *p == '-') && sscanf(p + 1, "%2d:%2d", &oh, &om) == 2)
		ms -= (*p == '+' ? 1 : -1) * ((int64_t)oh * 3600 + om * 60) *
		      1000;
	return ms;
}

static int64_t later(int64_t a, const json_t *v)
{
	int64_t b = time_ms(json_string_value(v));
	return b > a ? b : a;
}

/* When ev was last written, as far as it tells (above); 0: unknown. */
static int64_t last_write_ms(const json_t *ev)
{
	const json_t *m = json_object_get(ev, "metadata");
	int64_t t = later(0, json_object_get(m, "creationTimestamp"));
	size_t i;
	const json_t *e;
	json_array_foreach(json_object_get(m, "managedFields"), i, e) t =
	    later(t, json_object_get(e, "time"));
	t = later(t, json_object_get(ev, "lastTimestamp"));
	t = later(t, json_object_get(ev, "eventTime"));
	return later(t, json_object_get(json_object_get(ev, "series"),
					"lastObservedTime"));
}

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* How long until ev expires (<= 0: it has), for the TTL in force. */
static int64_t expires_in(const json_t *ev)
{
	return last_write_ms(ev) + event_ttl_ms - wall_ms();
}

static lp_err ttl_init(const struct ctl_store *s, void **ud)
{
	*ud = (void *)s;
	return LP_OK;
}

static void ttl_fini(void *ud)
{
	(void)ud; /* the store is the manager's */
}

static void ttl_observe(void *ud, ctl *c, struct ctl_ev *ev)
{
	(void)ud;
	if (ev->type == CTL_DELETE || event_ttl_ms <= 0 ||
	    strncmp(ev->key, EVENTS_PREFIX, strlen(EVENTS_PREFIX)))
		return;
	int64_t in = expires_in(ctl_ev_cur(ev));
	/* a second late, so that the sync finds it expired */
	ctl_add_after(c, ev->key, in > 0 ? in + 1000 : 0);
}

static lp_err ttl_sync(void *ud, ctl *c, const char *key)
{
	const struct ctl_store *s = ud;
	struct reg_obj cur = {0};
	lp_err rc = ctl_read(s, key, &cur);
	if (rc) {
		reg_obj_free(&cur);
		return rc == LP_E_NOTFOUND ? LP_OK : rc;
	}
	int64_t in = expires_in(cur.obj);
	char uid[64];
	const char *u = ctl_meta_str(cur.obj, "uid");
	snprintf(uid, sizeof uid, "%s", u ? u : "");
	reg_obj_free(&cur);
	if (in > 0) {
		/* written again since it was queued */
		ctl_add_after(c, key, in + 1000);
		return LP_OK;
	}
	rc = s->del(s->ud, key, uid[0] ? uid : NULL, NULL);
	if (rc == LP_OK)
		lp_debug("event-ttl: %s: expired, deleted", key);
	return rc == LP_E_NOTFOUND || rc == LP_E_CONFLICT ? LP_OK : rc;
}

const struct ctl_def ctl_event_ttl_def = {
    .name = "event-ttl",
    .workers = 1,
    .init = ttl_init,
    .fini = ttl_fini,
    .observe = ttl_observe,
    .sync = ttl_sync,
    .whole_prefix = EVENTS_PREFIX,
};
