/*
 * test_events.c -- events.k8s.io/v1 as a view of core/v1 Events
 * (server/resources.c): the conversions both ways, the layout each form is
 * written in, and the field selectors read from the stored form.
 * Deterministic: fixed inputs only.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../server/resources.h"

static json_t *parse(const char *text)
{
	json_error_t je;
	json_t *j = json_loads(text, 0, &je);
	cr_assert_not_null(j, "bad test JSON: %s", je.text);
	return j;
}

static const struct srv_resource *events_v1(void)
{
	const struct srv_resource *r =
	    srv_resource_find("events.k8s.io", "v1", "events");
	cr_assert_not_null(r);
	cr_assert_not_null(r->view);
	return r;
}

/* The object's member names in order, joined by commas. */
static char *keys(const json_t *o)
{
	size_t cap = 1024, n = 0;
	char *s = calloc(1, cap);
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)o, k, v)
	{
		n += (size_t)snprintf(s + n, cap - n, "%s%s", n ? "," : "", k);
	}
	return s;
}

static void expect_keys(const json_t *o, const char *want)
{
	char *got = keys(o);
	cr_expect_str_eq(got, want);
	free(got);
}

static void expect_equal(const json_t *got, const json_t *want)
{
	char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
	char *w = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
	cr_expect_str_eq(g, w);
	free(g);
	free(w);
}

#define FULL_CORE                                                              \
	"{\"kind\":\"Event\",\"apiVersion\":\"v1\","                           \
	"\"metadata\":{\"name\":\"e\",\"namespace\":\"default\"},"           \
	"\"involvedObject\":{\"kind\":\"ConfigMap\",\"name\":\"c\"},"        \
	"\"reason\":\"R\",\"message\":\"m\",\"source\":{\"component\":\"k\"}," \
	"\"firstTimestamp\":\"2026-11-30T08:00:00Z\","                        \
	"\"lastTimestamp\":\"2026-11-30T08:01:00Z\",\"count\":3,"             \
	"\"type\":\"Warning\",\"eventTime\":\"2026-11-30T08:00:00.000001Z\"," \
	"\"series\":{\"count\":2,\"lastObservedTime\":"                       \
	"\"2026-11-30T08:02:00.000000Z\"},\"action\":\"A\","                  \
	"\"related\":{\"kind\":\"Secret\",\"name\":\"s\"},"                   \
	"\"reportingComponent\":\"ctl\",\"reportingInstance\":\"i\"}"

Test(events, a_full_core_event_converts_both_ways_without_loss)
{
	const struct srv_resource *r = events_v1();
	json_t *orig = parse(FULL_CORE);
	json_t *o = json_deep_copy(orig);
	r->view->to_served(o);
	cr_expect_str_eq(json_string_value(json_object_get(o, "apiVersion")),
			 "events.k8s.io/v1");
	expect_keys(o, "kind,apiVersion,metadata,eventTime,series,"
		       "reportingController,reportingInstance,action,reason,"
		       "regarding,related,note,type,deprecatedSource,"
		       "deprecatedFirstTimestamp,deprecatedLastTimestamp,"
		       "deprecatedCount");
	cr_expect_str_eq(json_string_value(json_object_get(o, "note")), "m");
	cr_expect_eq(json_integer_value(json_object_get(o, "deprecatedCount")),
		     3);
	r->view->to_stored(o);
	cr_expect(json_equal(o, orig), "the round trip changed the object");
	expect_keys(o, "kind,apiVersion,metadata,involvedObject,reason,"
		       "message,source,firstTimestamp,lastTimestamp,count,"
		       "type,eventTime,series,action,related,"
		       "reportingComponent,reportingInstance");
	json_decref(o);
	json_decref(orig);
}

Test(events, each_form_is_written_as_go_encodes_its_struct)
{
	const struct srv_resource *r = events_v1();
	/* a legacy core event: no eventTime, empty reporting fields */
	json_t *o = parse("{\"kind\":\"Event\",\"apiVersion\":\"v1\","
			  "\"metadata\":{\"name\":\"e\"},\"reason\":\"R\","
			  "\"reportingComponent\":\"\",\"reportingInstance\":\"\"}");
	r->view->to_served(o);
	json_t *want = parse(
	    "{\"kind\":\"Event\",\"apiVersion\":\"events.k8s.io/v1\","
	    "\"metadata\":{\"name\":\"e\"},\"eventTime\":null,\"reason\":\"R\","
	    "\"regarding\":{},\"deprecatedSource\":{},"
	    "\"deprecatedFirstTimestamp\":null,\"deprecatedLastTimestamp\":null}");
	expect_equal(o, want);
	json_decref(want);
	json_decref(o);

	/* a minimal events.k8s.io event, stored */
	o = parse("{\"kind\":\"Event\",\"apiVersion\":\"events.k8s.io/v1\","
		  "\"metadata\":{\"name\":\"e\"},\"note\":\"n\"}");
	r->view->to_stored(o);
	want = parse("{\"kind\":\"Event\",\"apiVersion\":\"v1\","
		     "\"metadata\":{\"name\":\"e\"},\"involvedObject\":{},"
		     "\"message\":\"n\",\"source\":{},\"firstTimestamp\":null,"
		     "\"lastTimestamp\":null,\"eventTime\":null,"
		     "\"reportingComponent\":\"\",\"reportingInstance\":\"\"}");
	expect_equal(o, want);
	json_decref(want);
	json_decref(o);
}

Test(events, field_selectors_read_the_stored_form)
{
	const struct srv_resource *v1 = events_v1();
	const struct srv_resource *core = srv_resource_find("", "v1", "events");
	cr_assert_not_null(core);
	json_t *o = parse(FULL_CORE);
	char buf[32];
	cr_expect_str_eq(srv_resource_field(v1, o, "regarding.name", buf,
					    sizeof buf),
			 "c");
	cr_expect_str_eq(srv_resource_field(v1, o, "reportingController", buf,
					    sizeof buf),
			 "ctl");
	cr_expect_null(srv_resource_field(v1, o, "involvedObject.name", buf,
					  sizeof buf));
	cr_expect_str_eq(srv_resource_field(core, o, "involvedObject.kind",
					    buf, sizeof buf),
			 "ConfigMap");
	/* source: source.component, else the reporting controller */
	cr_expect_str_eq(srv_resource_field(core, o, "source", buf, sizeof buf),
			 "k");
	json_object_set_new(o, "source", json_object());
	cr_expect_str_eq(srv_resource_field(core, o, "source", buf, sizeof buf),
			 "ctl");
	cr_expect_str_eq(srv_resource_field(v1, o, "source", buf, sizeof buf),
			 "ctl");
	json_object_del(o, "reportingComponent");
	cr_expect_str_eq(srv_resource_field(core, o, "source", buf, sizeof buf),
			 "");
	json_decref(o);
}
