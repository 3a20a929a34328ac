/*
 * test_fields.c -- tests of server/fields.c: the unknown-field walker of
 * built-in kinds, the duplicate-field scan of JSON texts, the strict-error
 * list, and the OpenAPI schemas generated from the field tables.
 * Deterministic: fixed inputs only.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../server/fields.h"

static json_t *parse(const char *text)
{
	json_error_t je;
	json_t *j = json_loads(text, 0, &je);
	cr_assert_not_null(j, "bad test JSON: %s", je.text);
	return j;
}

/* The errors of s joined as srv_strict_message does, "" when none. */
static char *errors(const struct srv_strict *s)
{
	char *m = srv_strict_message(s);
	return m ? m : strdup("");
}

static void expect_errors(const struct srv_strict *s, const char *want)
{
	char *m = errors(s);
	cr_expect_str_eq(m, want);
	free(m);
}

static void expect_json(json_t *j, const char *want)
{
	json_t *w = parse(want);
	char *got = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	cr_expect(json_equal(j, w), "got %s, want %s", got, want);
	free(got);
	json_decref(w);
}

Test(fields, known_fields_of_every_kind_stay)
{
	static const struct {
		const char *kind, *av, *obj;
	} cases[] = {
	    {"ConfigMap", "v1",
	     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
	     "\"name\":\"a\",\"labels\":{\"x\":\"y\"},\"ownerReferences\":[{"
	     "\"apiVersion\":\"v1\",\"kind\":\"K\",\"name\":\"n\",\"uid\":"
	     "\"u\",\"controller\":true}],\"managedFields\":[{\"manager\":"
	     "\"m\",\"fieldsV1\":{\"f:data\":{}}}]},\"data\":{\"any-key\":"
	     "\"v\"},\"binaryData\":{\"b\":\"AA==\"},\"immutable\":false}"},
	    {"Service", "v1",
	     "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"ports\":[{\"name\":"
	     "\"h\",\"port\":80,\"targetPort\":\"http\",\"protocol\":\"TCP\","
	     "\"appProtocol\":\"x\",\"nodePort\":30000}],\"selector\":{\"a\":"
	     "\"b\"},\"sessionAffinityConfig\":{\"clientIP\":{"
	     "\"timeoutSeconds\":3}},\"trafficDistribution\":\"PreferClose\"},"
	     "\"status\":{\"loadBalancer\":{\"ingress\":[{\"ip\":\"1.2.3.4\","
	     "\"ports\":[{\"port\":1,\"protocol\":\"TCP\"}]}]},\"conditions\":["
	     "{\"type\":\"T\",\"status\":\"True\",\"lastTransitionTime\":null,"
	     "\"reason\":\"R\",\"message\":\"\"}]}}"},
	    {"Lease", "coordination.k8s.io/v1",
	     "{\"metadata\":{\"name\":\"l\"},\"spec\":{\"holderIdentity\":"
	     "\"me\",\"leaseDurationSeconds\":15,\"acquireTime\":\"2026-01-"
	     "02T03:04:05.123456Z\",\"renewTime\":null,\"leaseTransitions\":1,"
	     "\"strategy\":\"OldestEmulationVersion\",\"preferredHolder\":"
	     "\"you\"}}"},
	    {"Event", "v1",
	     "{\"metadata\":{\"name\":\"e\"},\"involvedObject\":{\"kind\":"
	     "\"Pod\",\"fieldPath\":\"x\"},\"series\":{\"count\":2,"
	     "\"lastObservedTime\":\"2026-01-02T03:04:05.000000Z\"},\"source\":"
	     "{\"component\":\"c\"},\"related\":{\"name\":\"r\"},"
	     "\"reportingComponent\":\"c\",\"eventTime\":null}"},
	    {"Endpoints", "v1",
	     "{\"metadata\":{\"name\":\"e\"},\"subsets\":[{\"addresses\":[{"
	     "\"ip\":\"1.2.3.4\",\"targetRef\":{\"kind\":\"Pod\"}}],"
	     "\"notReadyAddresses\":[],\"ports\":[{\"port\":80,\"appProtocol\":"
	     "\"h\"}]}]}"},
	    {"ServiceAccount", "v1",
	     "{\"metadata\":{\"name\":\"sa\"},\"secrets\":[{\"name\":\"s\"}],"
	     "\"imagePullSecrets\":[{\"name\":\"p\"}],"
	     "\"automountServiceAccountToken\":true}"},
	    {"Secret", "v1",
	     "{\"metadata\":{\"name\":\"s\"},\"type\":\"Opaque\",\"data\":{"
	     "\"a\":\"AA==\"},\"stringData\":{\"b\":\"c\"},\"immutable\":"
	     "true}"},
	    {"Namespace", "v1",
	     "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"finalizers\":["
	     "\"kubernetes\"]},\"status\":{\"phase\":\"Active\",\"conditions\":"
	     "[{\"type\":\"T\",\"status\":\"True\"}]}}"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct srv_strict s = {.mode = SRV_FV_STRICT};
		json_t *o = parse(cases[i].obj);
		json_t *orig = json_deep_copy(o);
		cr_expect(srv_builtin_prune(cases[i].kind, cases[i].av, o,
					    false, &s));
		cr_expect(json_equal(o, orig), "%s changed", cases[i].kind);
		cr_expect_eq(s.n, 0, "%s: %zu errors, first %s", cases[i].kind,
			     s.n, s.n ? s.errs[0] : "");
		struct srv_typeerr te;
		for (int d = SRV_DEC_JSON; d <= SRV_DEC_UNSTRUCTURED; d++) {
			cr_expect(srv_builtin_typecheck(
			    cases[i].kind, cases[i].av, o, false, d, &te));
			cr_expect_not(te.set, "%s: %s", cases[i].kind, te.text);
		}
		cr_expect(srv_builtin_scan_json(cases[i].kind, cases[i].av,
						cases[i].obj,
						strlen(cases[i].obj), &s));
		cr_expect_eq(s.n, 0, "%s: scan found %s", cases[i].kind,
			     s.n ? s.errs[0] : "");
		srv_strict_free(&s);
		json_decref(o);
		json_decref(orig);
	}
}

Test(fields, unknown_fields_are_dropped_with_kube_paths)
{
	struct srv_strict s = {.mode = SRV_FV_STRICT};
	json_t *o = parse(
	    "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{"
	    "\"name\":\"s\",\"nope\":1},"
	    "\"spec\":{\"ports\":[{\"port\":80},{\"port\":81,\"bogus\":{"
	    "\"deep\":1}}],"
	    "\"selector\":{\"free\":\"form\"},\"foo\":[1]},\"top\":true}");
	srv_builtin_prune("Service", "v1", o, false, &s);
	expect_errors(&s,
		      "strict decoding error: unknown field \"metadata.nope\", "
		      "unknown field \"spec.ports[1].bogus\", unknown field "
		      "\"spec.foo\", unknown field \"top\"");
	expect_json(o, "{\"apiVersion\":\"v1\",\"kind\":\"Service\","
		       "\"metadata\":{\"name\":\"s\"},"
		       "\"spec\":{\"ports\":[{\"port\":80},{\"port\":81}],"
		       "\"selector\":{\"free\":\"form\"}}}");
	srv_strict_free(&s);
	json_decref(o);
}

Test(fields, sorted_order_for_yaml_and_patches)
{
	struct srv_strict s = {.mode = SRV_FV_WARN};
	json_t *o = parse("{\"zeta\":1,\"metadata\":{\"name\":\"a\"},\"alpha\":"
			  "2,\"data\":{}}");
	srv_builtin_prune("ConfigMap", "v1", o, true, &s);
	expect_errors(&s, "strict decoding error: unknown field \"alpha\", "
			  "unknown field \"zeta\"");
	srv_strict_free(&s);
	json_decref(o);
}

Test(fields, ignore_drops_silently)
{
	struct srv_strict s = {.mode = SRV_FV_IGNORE};
	json_t *o = parse("{\"metadata\":{\"x\":1},\"y\":2}");
	srv_builtin_prune("ConfigMap", "v1", o, false, &s);
	cr_expect_eq(s.n, 0);
	expect_json(o, "{\"metadata\":{}}");
	json_decref(o);
}

Test(fields, wrong_types_and_unknown_kinds_are_left_alone)
{
	json_t *o = parse("{\"metadata\":\"not an "
			  "object\",\"spec\":{\"ports\":[1,\"x\",null]}}");
	struct srv_strict s = {.mode = SRV_FV_STRICT};
	cr_expect(srv_builtin_prune("Service", "v1", o, false, &s));
	cr_expect_eq(s.n, 0);
	cr_expect_not(srv_builtin_prune("APIService",
					"apiregistration.k8s.io/v1", o, false,
					&s));
	cr_expect_not(srv_builtin_prune("ConfigMap", "v2", o, false, &s));
	json_decref(o);
}

/* The type error srv_builtin_check finds in text (JSON) for kind in
   api_version, "" when none. */
static void expect_type_error(const char *kind, const char *av,
			      const char *text, enum srv_decoder dec,
			      const char *want)
{
	struct srv_typeerr te;
	json_t *o = parse(text);
	cr_expect(srv_builtin_check(kind, av, o, dec == SRV_DEC_YAML, dec, NULL,
				    &te));
	cr_expect_str_eq(te.set ? te.text : "", want, "for %s", text);
	json_decref(o);
}

#define GO_ERR "json: cannot unmarshal "

Test(fields, type_errors_in_encoding_json_words_issue3)
{
	static const struct {
		const char *kind, *av, *obj, *want;
	} cases[] = {
	    {"ConfigMap", "v1", "{\"data\":{\"a\":1}}",
	     GO_ERR "number into Go struct field ConfigMap.data of type "
		    "string"},
	    {"ConfigMap", "v1", "{\"metadata\":\"x\"}",
	     GO_ERR "string into Go struct field ConfigMap.metadata of type "
		    "v1.ObjectMeta"},
	    {"ConfigMap", "v1", "{\"metadata\":{\"labels\":[\"a\"]}}",
	     GO_ERR "array into Go struct field ObjectMeta.metadata.labels of "
		    "type map[string]string"},
	    {"ConfigMap", "v1", "{\"binaryData\":{\"b\":{}}}",
	     GO_ERR "object into Go struct field ConfigMap.binaryData of type "
		    "[]uint8"},
	    {"ConfigMap", "v1", "{\"immutable\":\"true\"}",
	     GO_ERR "string into Go struct field ConfigMap.immutable of type "
		    "bool"},
	    {"ConfigMap", "v1", "{\"metadata\":{\"generation\":-0.5}}",
	     GO_ERR "number -0.5 into Go struct field "
		    "ObjectMeta.metadata.generation of type int64"},
	    {"ConfigMap", "v1", "{\"metadata\":{\"finalizers\":[\"a\",2]}}",
	     GO_ERR
	     "number into Go struct field ObjectMeta.metadata.finalizers "
	     "of type string"},
	    {"ConfigMap", "v1", "{\"metadata\":{\"finalizers\":\"a\"}}",
	     GO_ERR
	     "string into Go struct field ObjectMeta.metadata.finalizers "
	     "of type []string"},
	    {"ConfigMap", "v1", "{\"metadata\":{\"uid\":1}}",
	     GO_ERR "number into Go struct field ObjectMeta.metadata.uid of "
		    "type types.UID"},
	    {"ConfigMap", "v1",
	     "{\"metadata\":{\"ownerReferences\":[{\"controller\":1}]}}",
	     GO_ERR
	     "number into Go struct field "
	     "OwnerReference.metadata.ownerReferences.controller of type "
	     "bool"},
	    {"ConfigMap", "v1", "{\"metadata\":{\"creationTimestamp\":[]}}",
	     GO_ERR "array into Go struct field "
		    "ObjectMeta.metadata.creationTimestamp of type string"},
	    {"Service", "v1", "{\"spec\":{\"ports\":[{\"port\":\"80\"}]}}",
	     GO_ERR "string into Go struct field ServicePort.spec.ports.port "
		    "of type int32"},
	    {"Service", "v1", "{\"spec\":{\"ports\":[{\"port\":2147483648}]}}",
	     GO_ERR "number 2147483648 into Go struct field "
		    "ServicePort.spec.ports.port of type int32"},
	    {"Service", "v1", "{\"spec\":{\"ports\":[7]}}",
	     GO_ERR "number into Go struct field ServiceSpec.spec.ports of "
		    "type v1.ServicePort"},
	    {"Service", "v1",
	     "{\"spec\":{\"ports\":[{\"protocol\":6,\"targetPort\":1.5}]}}",
	     GO_ERR "number 1.5 into Go struct field "
		    "ServicePort.spec.ports.targetPort of type int32"},
	    {"Service", "v1", "{\"spec\":{\"ports\":[{\"protocol\":6}]}}",
	     GO_ERR
	     "number into Go struct field ServicePort.spec.ports.protocol "
	     "of type v1.Protocol"},
	    {"Service", "v1", "{\"spec\":{\"ipFamilies\":[true]}}",
	     GO_ERR "bool into Go struct field ServiceSpec.spec.ipFamilies of "
		    "type v1.IPFamily"},
	    {"Service", "v1",
	     "{\"spec\":{\"sessionAffinityConfig\":{\"clientIP\":{"
	     "\"timeoutSeconds\":0.000001}}}}",
	     GO_ERR "number 0.000001 into Go struct field "
		    "ClientIPConfig.spec.sessionAffinityConfig.clientIP."
		    "timeoutSeconds of type int32"},
	    {"Lease", "coordination.k8s.io/v1",
	     "{\"spec\":{\"leaseDurationSeconds\":1e-7}}",
	     GO_ERR "number 1e-7 into Go struct field "
		    "LeaseSpec.spec.leaseDurationSeconds of type int32"},
	    {"Lease", "coordination.k8s.io/v1",
	     "{\"spec\":{\"leaseTransitions\":-2.5e21}}",
	     GO_ERR "number -2.5e+21 into Go struct field "
		    "LeaseSpec.spec.leaseTransitions of type int32"},
	    {"Event", "v1", "{\"series\":{\"count\":\"1\"}}",
	     GO_ERR "string into Go struct field EventSeries.series.count of "
		    "type int32"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		expect_type_error(cases[i].kind, cases[i].av, cases[i].obj,
				  SRV_DEC_JSON, cases[i].want);
}

Test(fields, first_type_error_wins_unless_unmarshal_json_fails_issue3)
{
	expect_type_error(
	    "Service", "v1", "{\"spec\":{\"type\":1,\"clusterIP\":2}}",
	    SRV_DEC_JSON,
	    GO_ERR "number into Go struct field "
		   "ServiceSpec.spec.type of type v1.ServiceType");
	/* YAML bodies are decoded in name order */
	expect_type_error("Service", "v1",
			  "{\"spec\":{\"type\":1,\"clusterIP\":2}}",
			  SRV_DEC_YAML,
			  GO_ERR "number into Go struct field "
				 "ServiceSpec.spec.clusterIP of type string");
	expect_type_error(
	    "Service", "v1",
	    "{\"spec\":{\"type\":1,\"ports\":[{\"targetPort\":{}}]}}",
	    SRV_DEC_JSON,
	    GO_ERR "object into Go struct field "
		   "ServicePort.spec.ports.targetPort of type int32");
}

Test(fields, nulls_and_well_typed_values_pass_issue3)
{
	struct srv_typeerr te;
	json_t *o =
	    parse("{\"metadata\":null,\"data\":{\"a\":null,\"b\":\"x\"},"
		  "\"binaryData\":{\"c\":null},\"immutable\":null}");
	cr_expect(srv_builtin_check("ConfigMap", "v1", o, false, SRV_DEC_JSON,
				    NULL, &te));
	cr_expect_not(te.set, "%s", te.text);
	/* a null []byte too: kube's protobuf storage gives back "" */
	expect_json(o, "{\"metadata\":null,\"data\":{\"a\":\"\",\"b\":\"x\"},"
		       "\"binaryData\":{\"c\":\"\"},\"immutable\":null}");
	json_decref(o);
	expect_type_error("Service", "v1",
			  "{\"spec\":{\"ports\":[{\"port\":80,\"targetPort\":"
			  "\"http\"},{\"port\":81,\"targetPort\":8080},null]}}",
			  SRV_DEC_JSON, "");
	/* Go re-encodes a YAML float64 without a fraction: 30.0 is 30 */
	o = parse("{\"spec\":{\"leaseDurationSeconds\":30.0,"
		  "\"leaseTransitions\":2.0}}");
	srv_builtin_check("Lease", "coordination.k8s.io/v1", o, true,
			  SRV_DEC_YAML, NULL, &te);
	cr_expect_not(te.set, "%s", te.text);
	expect_json(o, "{\"spec\":{\"leaseDurationSeconds\":30,"
		       "\"leaseTransitions\":2}}");
	cr_expect(json_is_integer(json_object_get(json_object_get(o, "spec"),
						  "leaseDurationSeconds")));
	json_decref(o);
	/* in a JSON text it is not (kube names it "number 30.0"; jansson
	   keeps no literal, so lapis says "number 30") */
	o = parse("{\"spec\":{\"leaseDurationSeconds\":30.0}}");
	srv_builtin_check("Lease", "coordination.k8s.io/v1", o, false,
			  SRV_DEC_JSON, NULL, &te);
	cr_expect(te.set);
	cr_expect_not(srv_builtin_check("APIService",
					"apiregistration.k8s.io/v1", o, false,
					SRV_DEC_JSON, NULL, &te));
	cr_expect_not(te.set);
	json_decref(o);
}

/* A Time or MicroTime value parsed as Go's time.Parse(RFC3339[Micro]) and
   stored as kube's MarshalJSON writes it: UTC, seconds or six digits. */
static void expect_time(const char *kind, const char *av, const char *field,
			const char *in, const char *want)
{
	char text[512];
	snprintf(text, sizeof text, "{\"spec\":{\"%s\":\"%s\"}}", field, in);
	struct srv_typeerr te;
	json_t *o = parse(text);
	srv_builtin_check(kind, av, o, false, SRV_DEC_JSON, NULL, &te);
	cr_expect_not(te.set, "%s: %s", in, te.text);
	cr_expect_str_eq(json_string_value(json_object_get(
			     json_object_get(o, "spec"), field)),
			 want, "for %s", in);
	json_decref(o);
}

#define MICRO "2006-01-02T15:04:05.000000Z07:00"

Test(fields, times_are_parsed_and_stored_in_utc_as_kube_does_issue3)
{
	const char *l = "coordination.k8s.io/v1";
	expect_time("Lease", l, "renewTime", "2026-01-02T03:04:05.123456Z",
		    "2026-01-02T03:04:05.123456Z");
	expect_time("Lease", l, "renewTime",
		    "2026-01-02T03:04:05.123456+02:00",
		    "2026-01-02T01:04:05.123456Z");
	expect_time("Lease", l, "renewTime",
		    "2026-01-01T00:30:00.000001+01:00",
		    "2025-12-31T23:30:00.000001Z");
	expect_time("Lease", l, "acquireTime",
		    "2024-02-29T23:00:00.500000-01:00",
		    "2024-03-01T00:00:00.500000Z");
	/* Time: seconds; a fraction is read and dropped; one-digit hour */
	static const char ev[] =
	    "{\"firstTimestamp\":\"2026-01-02T3:04:05.987+05:30\","
	    "\"lastTimestamp\":\"2026-01-02T03:04:05Z\"}";
	struct srv_typeerr te;
	json_t *o = parse(ev);
	srv_builtin_check("Event", "v1", o, false, SRV_DEC_JSON, NULL, &te);
	cr_expect_not(te.set, "%s", te.text);
	expect_json(o, "{\"firstTimestamp\":\"2026-01-01T21:34:05Z\","
		       "\"lastTimestamp\":\"2026-01-02T03:04:05Z\"}");
	json_decref(o);
	static const struct {
		const char *in, *want;
	} bad[] = {
	    {"2026-11-30T19:27:41.434Z",
	     "parsing time \"2026-11-30T19:27:41.434Z\" as \"" MICRO
	     "\": cannot parse \".434Z\" as \".000000\""},
	    {"2026-11-30T19:27:41.017586",
	     "parsing time \"2026-11-30T19:27:41.017586\" as \"" MICRO
	     "\": cannot parse \"\" as \"Z07:00\""},
	    {"2026-01-01T00:00:00Z", "parsing time \"2026-01-01T00:00:00Z\" "
				     "as \"" MICRO
				     "\": cannot parse \"Z\" as \".000000\""},
	    {"garbage", "parsing time \"garbage\" as \"" MICRO
			"\": cannot parse \"garbage\" as \"2006\""},
	    {"2026-01-01t00:00:00.000000Z",
	     "parsing time \"2026-01-01t00:00:00.000000Z\" as \"" MICRO
	     "\": cannot parse \"t00:00:00.000000Z\" as \"T\""},
	    {"2026-02-30T00:00:00.000000Z",
	     "parsing time \"2026-02-30T00:00:00.000000Z\": day out of range"},
	    {"2026-13-01T00:00:00.000000Z",
	     "parsing time \"2026-13-01T00:00:00.000000Z\": month out of range"},
	    {"2026-01-01T24:00:00.000000Z",
	     "parsing time \"2026-01-01T24:00:00.000000Z\": hour out of range"},
	    {"2026-01-01T00:00:00.000000Zx",
	     "parsing time \"2026-01-01T00:00:00.000000Zx\": extra text: \"x\""},
	    {"2026-01-01T00:00:00.000000+25:00",
	     "parsing time \"2026-01-01T00:00:00.000000+25:00\": time zone "
	     "offset hour out of range"},
	    {"\\u00e9", "parsing time \"\\xc3\\xa9\" as \"" MICRO
			"\": cannot parse \"\\xc3\\xa9\" as \"2006\""},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char text[256];
		snprintf(text, sizeof text, "{\"spec\":{\"renewTime\":\"%s\"}}",
			 bad[i].in);
		expect_type_error("Lease", l, text, SRV_DEC_JSON, bad[i].want);
	}
	/* a bad time ends decoding: it wins over an earlier type error */
	expect_type_error("Lease", l,
			  "{\"spec\":{\"holderIdentity\":1,\"renewTime\":\"x\"}}",
			  SRV_DEC_JSON,
			  "parsing time \"x\" as \"" MICRO
			  "\": cannot parse \"x\" as \"2006\"");
}

Test(fields, type_errors_in_the_unstructured_converters_words_issue3)
{
	static const struct {
		const char *kind, *obj, *want;
	} cases[] = {
	    {"ConfigMap", "{\"data\":{\"a\":1}}",
	     "cannot convert int64 to string"},
	    {"ConfigMap", "{\"data\":{\"a\":1.5}}",
	     "unrecognized type: string"},
	    {"ConfigMap", "{\"data\":[]}", "cannot restore map from slice"},
	    {"ConfigMap", "{\"metadata\":\"x\"}",
	     "cannot restore struct from: string"},
	    {"ConfigMap", "{\"metadata\":{\"finalizers\":{}}}",
	     "cannot restore slice from map"},
	    {"ConfigMap", "{\"immutable\":\"yes\"}", "unrecognized type: bool"},
	    {"ConfigMap", "{\"metadata\":{\"creationTimestamp\":1}}",
	     "json: cannot unmarshal number into Go value of type string"},
	    /* the struct's order, not the map's: metadata comes first */
	    {"ConfigMap", "{\"data\":{\"a\":1},\"metadata\":{\"uid\":2}}",
	     "cannot convert int64 to types.UID"},
	    {"Service", "{\"spec\":{\"ports\":[{\"port\":\"80\"}]}}",
	     "unrecognized type: int32"},
	    {"Service", "{\"spec\":{\"ports\":[{\"port\":80.5}]}}",
	     "cannot convert float64 to int32"},
	    {"Service", "{\"spec\":{\"ports\":[{\"targetPort\":80.5}]}}",
	     "json: cannot unmarshal number 80.5 into Go value of type int32"},
	    {"Service", "{\"spec\":{\"ports\":[{\"targetPort\":true}]}}",
	     "json: cannot unmarshal bool into Go value of type int32"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		expect_type_error(cases[i].kind, "v1", cases[i].obj,
				  SRV_DEC_UNSTRUCTURED, cases[i].want);
	/* an integral float is an int; an int64 keeps its low 32 bits */
	struct srv_typeerr te;
	json_t *o = parse("{\"spec\":{\"ports\":[{\"port\":80.0,\"targetPort\":"
			  "8080.0,\"nodePort\":4294967297}]}}");
	srv_builtin_typecheck("Service", "v1", o, true, SRV_DEC_UNSTRUCTURED,
			      &te);
	cr_expect_not(te.set, "%s", te.text);
	json_t *port = json_array_get(
	    json_object_get(json_object_get(o, "spec"), "ports"), 0);
	cr_expect_eq(json_integer_value(json_object_get(port, "nodePort")), 1);
	cr_expect(json_is_integer(json_object_get(port, "port")),
		  "80.0 becomes the int32 80");
	json_decref(o);
	/* a whole real out of an int's range: reflect's Convert on amd64,
	   through int64 (its minimum when out of range), an int32 keeping
	   the low 32 bits; never the real itself, which no Go client reads */
	static const struct {
		const char *kind, *av, *obj, *ptr1, *ptr2;
		json_int_t want;
	} conv[] = {
	    {"Lease", "coordination.k8s.io/v1",
	     "{\"spec\":{\"leaseDurationSeconds\":3000000000.0}}", "spec",
	     "leaseDurationSeconds", -1294967296},
	    {"Lease", "coordination.k8s.io/v1",
	     "{\"spec\":{\"leaseDurationSeconds\":1e300}}", "spec",
	     "leaseDurationSeconds", 0},
	    {"ConfigMap", "v1", "{\"metadata\":{\"generation\":1e300}}",
	     "metadata", "generation", INT64_MIN},
	    {"ConfigMap", "v1", "{\"metadata\":{\"generation\":-3e9}}",
	     "metadata", "generation", -3000000000},
	};
	for (size_t i = 0; i < sizeof conv / sizeof conv[0]; i++) {
		o = parse(conv[i].obj);
		srv_builtin_typecheck(conv[i].kind, conv[i].av, o, true,
				      SRV_DEC_UNSTRUCTURED, &te);
		cr_expect_not(te.set, "%s", te.text);
		json_t *v =
		    json_object_get(json_object_get(o, conv[i].ptr1), conv[i].ptr2);
		cr_expect(json_is_integer(v), "%s: an integer", conv[i].obj);
		cr_expect_eq(json_integer_value(v), conv[i].want, "%s: %lld",
			     conv[i].obj, (long long)json_integer_value(v));
		json_decref(o);
	}
}

Test(fields, typecheck_keeps_unknown_members_issue3)
{
	struct srv_typeerr te;
	json_t *o = parse("{\"zz\":1,\"data\":{\"a\":1}}");
	srv_builtin_typecheck("ConfigMap", "v1", o, true, SRV_DEC_JSON, &te);
	cr_expect(te.set);
	cr_expect_not_null(json_object_get(o, "zz"));
	json_decref(o);
}

Test(fields, paths_are_quoted_as_go_does)
{
	struct srv_strict s = {.mode = SRV_FV_STRICT};
	json_t *o = parse("{\"a\\\"b\\\\c\\nd\\u0001\":1,\"ü\":2}");
	srv_builtin_prune("ConfigMap", "v1", o, false, &s);
	expect_errors(
	    &s,
	    "strict decoding error: unknown field \"a\\\"b\\\\c\\nd\\x01\", "
	    "unknown field \"ü\"");
	srv_strict_free(&s);
	json_decref(o);
}

Test(fields, errors_are_deduplicated_and_capped)
{
	struct srv_strict s = {.mode = SRV_FV_STRICT};
	srv_strict_field(&s, "unknown field", "x");
	srv_strict_field(&s, "unknown field", "x");
	srv_strict_field(&s, "duplicate field", "x");
	cr_expect_eq(s.n, 2);
	char k[32];
	for (int i = 0; i < 200; i++) {
		snprintf(k, sizeof k, "f%d", i);
		srv_strict_field(&s, "unknown field", k);
	}
	cr_expect_eq(s.n, SRV_STRICT_MAX);
	srv_strict_free(&s);
	cr_expect_eq(s.n, 0);
}

Test(fields, fv_modes)
{
	cr_expect_eq(srv_fv_mode(NULL), SRV_FV_WARN);
	cr_expect_eq(srv_fv_mode(""), SRV_FV_WARN);
	cr_expect_eq(srv_fv_mode("Warn"), SRV_FV_WARN);
	cr_expect_eq(srv_fv_mode("Strict"), SRV_FV_STRICT);
	cr_expect_eq(srv_fv_mode("Ignore"), SRV_FV_IGNORE);
}

Test(fields, scan_reports_duplicates_and_unknowns_in_document_order)
{
	static const char text[] =
	    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
	    "\"name\":\"a\",\"name\":\"b\","
	    "\"x\":1,\"x\":2,\"labels\":{\"a\":\"1\",\"a\":\"2\"}},\"spec\":{"
	    "\"z\":[{\"q\":1}]},"
	    "\"data\":{\"k\\u0041\":\"y\",\"kA\":\"z\",\"s\":\"\\\"}\"},"
	    "\"kind\":\"ConfigMap\"}";
	struct srv_strict s = {.mode = SRV_FV_WARN};
	cr_expect(
	    srv_builtin_scan_json("ConfigMap", "v1", text, strlen(text), &s));
	expect_errors(
	    &s, "strict decoding error: duplicate field \"metadata.name\", "
		"unknown field \"metadata.x\", duplicate field "
		"\"metadata.labels.a\", "
		"unknown field \"spec\", duplicate field \"data.kA\", "
		"duplicate field \"kind\"");
	srv_strict_free(&s);
}

Test(fields, scan_follows_lists_of_messages)
{
	static const char text[] =
	    "{\"spec\":{\"ports\":[{\"port\":80,\"port\":81},{\"port\":82,"
	    "\"y\":{\"port\":1,\"port\":2}}]}}";
	struct srv_strict s = {.mode = SRV_FV_STRICT};
	srv_builtin_scan_json("Service", "v1", text, strlen(text), &s);
	expect_errors(
	    &s,
	    "strict decoding error: duplicate field \"spec.ports[0].port\", "
	    "unknown field \"spec.ports[1].y\"");
	srv_strict_free(&s);
}

Test(fields, scan_generic_mode_finds_duplicates_at_any_depth)
{
	static const char text[] =
	    "{\"spec\":{\"a\":[{\"b\":1,\"b\":2}],\"c\":{}},\"spec\":1}";
	struct srv_strict s = {.mode = SRV_FV_STRICT};
	srv_builtin_scan_json(NULL, NULL, text, strlen(text), &s);
	expect_errors(&s,
		      "strict decoding error: duplicate field \"spec.a[0].b\", "
		      "duplicate field \"spec\"");
	srv_strict_free(&s);
}

/* Nesting far deeper than a stack of scan frames holds (jansson accepts
   2048 levels; 20,000 here): the scan goes FIELDS_MAX_DEPTH levels down,
   skips the rest whole, and still finds a duplicate after it. It once
   recursed into every object of a custom resource and overflowed the
   stack at about 900 levels. */
Test(fields, scan_bounds_its_depth_in_generic_mode)
{
	for (int arr = 0; arr < 2; arr++) {
		const size_t n = 20000;
		const char *open = arr ? "[" : "{\"a\":";
		const char *close = arr ? "]" : "}";
		size_t ol = strlen(open);
		char *t = malloc(n * (ol + 1) + 64);
		cr_assert(t);
		size_t k = 0;
		k += (size_t)sprintf(t, "{\"x\":");
		for (size_t i = 0; i < n; i++, k += ol)
			memcpy(t + k, open, ol);
		t[k++] = '1';
		for (size_t i = 0; i < n; i++)
			t[k++] = close[0];
		k += (size_t)sprintf(t + k, ",\"y\":1,\"y\":2}");
		struct srv_strict s = {.mode = SRV_FV_STRICT};
		srv_builtin_scan_json(NULL, NULL, t, k, &s);
		expect_errors(&s,
			      "strict decoding error: duplicate field \"y\"");
		srv_strict_free(&s);
		free(t);
	}
}

/* Strings that end in escaped backslashes or hold escaped quotes: the scan
   finds each string's real end (an even run of backslashes before a quote
   ends it), so it still reaches the duplicate after them. */
Test(fields, scan_finds_string_ends_after_backslash_runs)
{
	static const char text[] = "{\"a\":\"x\\\\\",\"b\":\"\\\"}\\\\\",\"c\\\"d\":\"\\\\\\\\\\\"\",\"e\":1,\"e\":2}";
	struct srv_strict s = {.mode = SRV_FV_STRICT};
	srv_builtin_scan_json(NULL, NULL, text, strlen(text), &s);
	expect_errors(&s, "strict decoding error: duplicate field \"e\"");
	srv_strict_free(&s);
	static const char cm[] =
	    "{\"data\":{\"k\\\\\":\"v\\\"\",\"k\\\\\":\"w\"}}";
	struct srv_strict s2 = {.mode = SRV_FV_STRICT};
	srv_builtin_scan_json("ConfigMap", "v1", cm, strlen(cm), &s2);
	cr_expect_eq(s2.n, 1, "%zu errors", s2.n);
	srv_strict_free(&s2);
}

Test(fields, scan_stops_safely_on_truncated_text)
{
	static const char *texts[] = {
	    "{\"metadata\":{\"name\":\"a\"",
	    "{\"a\":\"\\",
	    "{\"spec\":{\"ports\":[{",
	    "{\"a\" 1}",
	    "{\"a\":1 \"b\":2}",
	    "}",
	    "",
	    "{\"\\ud800\":1,\"\\ud800\":1}",
	};
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		struct srv_strict s = {.mode = SRV_FV_STRICT};
		srv_builtin_scan_json("Service", "v1", texts[i],
				      strlen(texts[i]), &s);
		srv_builtin_scan_json(NULL, NULL, texts[i], strlen(texts[i]),
				      &s);
		srv_strict_free(&s);
	}
}

Test(fields, scan_under_ignore_records_nothing)
{
	static const char text[] = "{\"a\":1,\"a\":2}";
	struct srv_strict s = {.mode = SRV_FV_IGNORE};
	srv_builtin_scan_json(NULL, NULL, text, strlen(text), &s);
	cr_expect_eq(s.n, 0);
}

Test(fields, openapi_schemas_from_the_tables)
{
	json_t *schemas = json_object();
	cr_assert(srv_builtin_openapi("", "v1", "Service", schemas));
	json_t *svc = json_object_get(schemas, "io.k8s.api.core.v1.Service");
	cr_assert_not_null(svc);
	json_t *gvk = json_array_get(
	    json_object_get(svc, "x-kubernetes-group-version-kind"), 0);
	cr_expect_str_eq(json_string_value(json_object_get(gvk, "kind")),
			 "Service");
	cr_expect_str_eq(json_string_value(json_object_get(gvk, "version")),
			 "v1");
	cr_expect_str_eq(json_string_value(json_object_get(gvk, "group")), "");
	json_t *props = json_object_get(svc, "properties");
	cr_expect_not_null(json_object_get(props, "apiVersion"));
	/* a reference in an allOf of one, as kube's v3 writes it */
	cr_expect_str_eq(
	    json_string_value(json_object_get(
		json_array_get(
		    json_object_get(json_object_get(props, "spec"), "allOf"),
		    0),
		"$ref")),
	    "#/components/schemas/io.k8s.api.core.v1.ServiceSpec");
	json_t *ports = json_object_get(
	    json_object_get(
		json_object_get(schemas, "io.k8s.api.core.v1.ServiceSpec"),
		"properties"),
	    "ports");
	cr_expect_str_eq(json_string_value(json_object_get(ports, "type")),
			 "array");
	cr_expect_str_eq(json_string_value(json_object_get(
			     ports, "x-kubernetes-patch-merge-key")),
			 "port");
	json_t *sp = json_object_get(schemas, "io.k8s.api.core.v1.ServicePort");
	cr_expect_str_eq(json_string_value(json_array_get(
			     json_object_get(sp, "required"), 0)),
			 "port");
	json_t *pport =
	    json_object_get(json_object_get(sp, "properties"), "port");
	cr_expect_str_eq(json_string_value(json_object_get(pport, "format")),
			 "int32");
	cr_expect_not_null(json_object_get(
	    schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"));
	/* IntOrString has no type of its own: one of integer and string */
	json_t *ios = json_object_get(
	    schemas, "io.k8s.apimachinery.pkg.util.intstr.IntOrString");
	cr_expect_null(json_object_get(ios, "type"));
	cr_expect_eq(json_array_size(json_object_get(ios, "oneOf")), 2);

	cr_assert(
	    srv_builtin_openapi("coordination.k8s.io", "v1", "Lease", schemas));
	json_t *ls = json_object_get(
	    json_object_get(
		json_object_get(schemas,
				"io.k8s.api.coordination.v1.LeaseSpec"),
		"properties"),
	    "renewTime");
	cr_expect_str_eq(
	    json_string_value(json_object_get(
		json_array_get(json_object_get(ls, "allOf"), 0), "$ref")),
	    "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1."
	    "MicroTime");
	json_t *mt = json_object_get(
	    schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime");
	cr_expect_str_eq(json_string_value(json_object_get(mt, "format")),
			 "date-time");
	json_t *cm = NULL;
	cr_assert(srv_builtin_openapi("", "v1", "ConfigMap", schemas));
	cm = json_object_get(
	    json_object_get(
		json_object_get(schemas, "io.k8s.api.core.v1.ConfigMap"),
		"properties"),
	    "data");
	cr_expect_str_eq(
	    json_string_value(json_object_get(
		json_object_get(cm, "additionalProperties"), "type")),
	    "string");
	cr_expect_not(srv_builtin_openapi("apiregistration.k8s.io", "v1",
					  "APIService", schemas));
	json_decref(schemas);
}

/* What encoding/json's omitempty leaves out of a decoded built-in object,
   and what it keeps: value structs, required and non-omitempty scalars,
   times, and whatever a kind without a table has outside its metadata. */
Test(fields, omitempty_as_kube_encodes_the_decoded_struct)
{
	json_t *svc = parse(
	    "{\"metadata\":{\"name\":\"a\",\"generateName\":\"\","
	    "\"labels\":{},\"annotations\":null,\"finalizers\":[],"
	    "\"ownerReferences\":[],\"generation\":0,"
	    "\"deletionGracePeriodSeconds\":0},"
	    "\"spec\":{\"ports\":[{\"name\":\"\",\"port\":0,\"nodePort\":0,"
	    "\"appProtocol\":\"\",\"targetPort\":0}],\"selector\":{},"
	    "\"externalIPs\":null,\"clusterIP\":\"\",\"type\":null,"
	    "\"publishNotReadyAddresses\":false,"
	    "\"allocateLoadBalancerNodePorts\":false,"
	    "\"sessionAffinityConfig\":{}},"
	    "\"status\":{\"loadBalancer\":{\"ingress\":[]},"
	    "\"conditions\":[]}}");
	srv_builtin_omitempty("Service", "v1", svc);
	expect_json(svc,
		    "{\"metadata\":{\"name\":\"a\","
		    "\"deletionGracePeriodSeconds\":0},"
		    "\"spec\":{\"ports\":[{\"port\":0,\"appProtocol\":\"\","
		    "\"targetPort\":0}],"
		    "\"allocateLoadBalancerNodePorts\":false,"
		    "\"sessionAffinityConfig\":{}},"
		    "\"status\":{\"loadBalancer\":{}}}");
	json_decref(svc);

	json_t *ev = parse("{\"metadata\":{\"creationTimestamp\":null},"
			   "\"reason\":\"\",\"count\":0,\"reportingComponent\":\"\","
			   "\"firstTimestamp\":null,\"involvedObject\":{}}");
	srv_builtin_omitempty("Event", "v1", ev);
	expect_json(ev, "{\"metadata\":{\"creationTimestamp\":null},"
			"\"reportingComponent\":\"\",\"firstTimestamp\":null,"
			"\"involvedObject\":{}}");
	json_decref(ev);

	json_t *cr = parse("{\"metadata\":{\"labels\":{},\"namespace\":\"\"},"
			   "\"spec\":{\"m\":{},\"l\":[],\"s\":\"\"},\"data\":{}}");
	srv_builtin_omitempty("Gizmo", "example.com/v1", cr);
	expect_json(cr, "{\"metadata\":{},"
			"\"spec\":{\"m\":{},\"l\":[],\"s\":\"\"},\"data\":{}}");
	json_decref(cr);

	/* A zero time: null in a value field; a pointer's null is nil when
	   kube decodes its stored bytes, so left out; and once more changes
	   nothing. */
	json_t *lease =
	    parse("{\"spec\":{\"holderIdentity\":\"h\","
		  "\"renewTime\":\"0001-01-01T00:00:00.000000Z\","
		  "\"acquireTime\":\"2026-01-01T00:00:00.000000Z\"}}");
	srv_builtin_omitempty("Lease", "coordination.k8s.io/v1", lease);
	const char *want_lease =
	    "{\"spec\":{\"holderIdentity\":\"h\","
	    "\"acquireTime\":\"2026-01-01T00:00:00.000000Z\"}}";
	expect_json(lease, want_lease);
	srv_builtin_omitempty("Lease", "coordination.k8s.io/v1", lease);
	expect_json(lease, want_lease);
	json_decref(lease);
	json_t *ev0 = parse("{\"lastTimestamp\":\"0001-01-01T00:00:00Z\"}");
	srv_builtin_omitempty("Event", "v1", ev0);
	srv_builtin_omitempty("Event", "v1", ev0);
	expect_json(ev0, "{\"lastTimestamp\":null}");
	json_decref(ev0);

	json_t *notobj = parse("[1]");
	srv_builtin_omitempty("ConfigMap", "v1", notobj);
	srv_builtin_omitempty(NULL, NULL, notobj);
	expect_json(notobj, "[1]");
	json_decref(notobj);
}

/* CustomResourceDefinition (apiextensions v1): JSON-only tables with a
   recursive JSONSchemaProps, maps of schemas and the JSONSchemaPropsOr*
   wrappers, whose own decoding is not strict. */
#define CRD_AV "apiextensions.k8s.io/v1"
#define CRD_SCHEMA(s)                                                      \
	"{\"apiVersion\":\"" CRD_AV "\",\"kind\":\"CustomResourceDefinition\"," \
	"\"metadata\":{\"name\":\"as.x.io\"},\"spec\":{\"group\":\"x.io\","    \
	"\"scope\":\"Namespaced\",\"names\":{\"plural\":\"as\",\"kind\":"     \
	"\"A\"},\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":"  \
	"true,\"schema\":{\"openAPIV3Schema\":" s "}}]}}"
#define OAS "spec.versions[0].schema.openAPIV3Schema"

Test(fields, crd_unknown_fields_follow_kube_strict_decoding_issue3)
{
	static const char text[] = CRD_SCHEMA(
	    "{\"type\":\"object\",\"x-foo\":1,\"properties\":{\"spec\":{"
	    "\"type\":\"object\",\"bad\":2,\"allOf\":[{\"zz\":1}],"
	    "\"not\":{\"nn\":1},\"items\":{\"type\":\"string\",\"ii\":1},"
	    "\"additionalProperties\":{\"aa\":1},\"dependencies\":{\"d\":{"
	    "\"dd\":1}},\"definitions\":{\"def\":{\"ee\":1}},"
	    "\"x-kubernetes-validations\":[{\"rule\":\"true\",\"vv\":1}],"
	    "\"default\":{\"anything\":[1,{\"goes\":null}]},"
	    "\"enum\":[1,\"a\",null,{\"b\":[]}],\"maximum\":1.5,"
	    "\"minimum\":2}}}");
	struct srv_strict s = {.mode = SRV_FV_STRICT};
	cr_assert(srv_builtin_scan_json("CustomResourceDefinition", CRD_AV,
					text, strlen(text), &s));
	const char *want =
	    "strict decoding error: unknown field \"" OAS ".x-foo\", "
	    "unknown field \"" OAS ".properties.spec.bad\", "
	    "unknown field \"" OAS ".properties.spec.allOf[0].zz\", "
	    "unknown field \"" OAS ".properties.spec.not.nn\", "
	    "unknown field \"" OAS ".properties.spec.definitions.def.ee\", "
	    "unknown field \"" OAS
	    ".properties.spec.x-kubernetes-validations[0].vv\"";
	expect_errors(&s, want);
	srv_strict_free(&s);

	/* the tree walk finds the same fields (in name order when sorted)
	   and drops them, the wrappers' unknown fields silently */
	json_t *o = parse(text);
	struct srv_strict s2 = {.mode = SRV_FV_STRICT};
	struct srv_typeerr te;
	cr_assert(srv_builtin_check("CustomResourceDefinition", CRD_AV, o,
				    false, SRV_DEC_JSON, &s2, &te));
	cr_expect(!te.set, "%s", te.text);
	cr_expect_eq(s2.n, 6);
	srv_strict_free(&s2);
	json_t *sp = json_object_get(
	    json_object_get(
		json_object_get(
		    json_object_get(
			json_object_get(
			    json_array_get(
				json_object_get(json_object_get(o, "spec"),
						"versions"),
				0),
			    "schema"),
			"openAPIV3Schema"),
		    "properties"),
		"spec"),
	    "items");
	expect_json(sp, "{\"type\":\"string\"}");
	json_decref(o);
}

Test(fields, crd_type_errors_as_go_words_them_issue3)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
	    {CRD_SCHEMA("{\"type\":\"object\"}"), ""},
	    {"{\"spec\":{\"versions\":[{\"served\":\"yes\"}]}}",
	     GO_ERR "string into Go struct field "
		    "CustomResourceDefinitionVersion.spec.versions.served of "
		    "type bool"},
	    {CRD_SCHEMA("{\"maximum\":\"9\"}"),
	     GO_ERR "string into Go struct field "
		    "JSONSchemaProps.spec.versions.schema.openAPIV3Schema."
		    "maximum of type float64"},
	    {CRD_SCHEMA("{\"properties\":[]}"),
	     GO_ERR "array into Go struct field "
		    "JSONSchemaProps.spec.versions.schema.openAPIV3Schema."
		    "properties of type map[string]v1.JSONSchemaProps"},
	    /* a map value: Go's path leaves the key out */
	    {CRD_SCHEMA("{\"properties\":{\"a\":{\"minLength\":1.5}}}"),
	     GO_ERR "number 1.5 into Go struct field "
		    "JSONSchemaProps.spec.versions.schema.openAPIV3Schema."
		    "properties.minLength of type int64"},
	    /* inside a wrapper: the wrapper's field and the inner type, and
	       it ends decoding (an earlier error gives way) */
	    {"{\"spec\":{\"group\":1,\"versions\":[{\"schema\":{"
	     "\"openAPIV3Schema\":{\"items\":{\"properties\":{\"a\":{"
	     "\"type\":5}}}}}}]}}",
	     GO_ERR "number into Go struct field "
		    "JSONSchemaProps.spec.versions.schema.openAPIV3Schema."
		    "items of type string"},
	    {CRD_SCHEMA("{\"items\":[{\"type\":\"string\"},\"x\"]}"),
	     GO_ERR "string into Go struct field "
		    "JSONSchemaProps.spec.versions.schema.openAPIV3Schema."
		    "items of type v1.JSONSchemaProps"},
	    {CRD_SCHEMA("{\"items\":\"x\",\"additionalItems\":false,"
			"\"dependencies\":{\"a\":[\"b\"],\"c\":{}}}"),
	     ""},
	    {CRD_SCHEMA("{\"dependencies\":{\"a\":[\"b\",2]}}"),
	     GO_ERR "number into Go struct field "
		    "JSONSchemaProps.spec.versions.schema.openAPIV3Schema."
		    "dependencies of type string"},
	    {CRD_SCHEMA("{\"additionalProperties\":\"yes\"}"),
	     "boolean or JSON schema expected"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		expect_type_error("CustomResourceDefinition", CRD_AV,
				  cases[i].text, SRV_DEC_JSON, cases[i].want);
}

Test(fields, crd_omitempty_and_openapi_issue3)
{
	json_t *o = parse(CRD_SCHEMA(
	    "{\"type\":\"object\",\"description\":\"\",\"nullable\":false,"
	    "\"x-kubernetes-preserve-unknown-fields\":false,\"required\":[],"
	    "\"properties\":{\"a\":{\"type\":\"\",\"items\":{"
	    "\"format\":\"\"}}},\"patternProperties\":{}}"));
	json_object_set_new(json_object_get(o, "spec"), "preserveUnknownFields",
			    json_false());
	json_t *st = parse("{\"storedVersions\":[],\"conditions\":[]}");
	json_object_set_new(o, "status", st);
	srv_builtin_omitempty("CustomResourceDefinition", CRD_AV, o);
	json_t *want = parse(CRD_SCHEMA(
	    "{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":"
	    "false,\"properties\":{\"a\":{\"items\":{}}}}"));
	json_object_set_new(want, "status",
			    parse("{\"storedVersions\":[],\"conditions\":[]}"));
	cr_expect(json_equal(o, want), "got %s",
		  json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT));
	json_decref(want);
	json_decref(o);

	json_t *schemas = json_object();
	cr_assert(srv_builtin_openapi("apiextensions.k8s.io", "v1",
				      "CustomResourceDefinition", schemas));
	const char *pkg =
	    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.";
	char name[200];
	snprintf(name, sizeof name, "%sJSONSchemaProps", pkg);
	json_t *props =
	    json_object_get(json_object_get(schemas, name), "properties");
	cr_assert_not_null(props);
	expect_json(
	    json_object_get(props, "properties"),
	    "{\"type\":\"object\",\"additionalProperties\":{\"allOf\":"
	    "[{\"$ref\":\"#/components/schemas/io.k8s.apiextensions-"
	    "apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps\"}]}}");
	expect_json(json_object_get(props, "maximum"),
		    "{\"type\":\"number\",\"format\":\"double\"}");
	snprintf(name, sizeof name, "%sJSONSchemaPropsOrBool", pkg);
	cr_expect_not_null(json_object_get(schemas, name));
	snprintf(name, sizeof name, "%sCustomResourceDefinitionSpec", pkg);
	cr_expect_not_null(json_object_get(schemas, name));
	json_decref(schemas);
}

Test(fields, crd_walks_stop_at_a_depth_bound_issue3)
{
	/* 600 nested "not" schemas: the walks stop at FIELDS_MAX_DEPTH
	   without overflowing the stack, and report nothing past it */
	size_t n = 600, cap = n * 12 + 512;
	char *s = malloc(cap), *p = s;
	p += sprintf(p, "{\"spec\":{\"versions\":[{\"schema\":{"
			"\"openAPIV3Schema\":");
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "{\"not\":");
	p += sprintf(p, "{\"deep\":1}");
	for (size_t i = 0; i < n; i++)
		*p++ = '}';
	p += sprintf(p, "}}]}}");
	struct srv_strict st = {.mode = SRV_FV_STRICT};
	cr_assert(srv_builtin_scan_json("CustomResourceDefinition", CRD_AV, s,
					(size_t)(p - s), &st));
	cr_expect_eq(st.n, 0);
	srv_strict_free(&st);
	json_error_t je;
	json_t *o = json_loadb(s, (size_t)(p - s), 0, &je);
	cr_assert_not_null(o, "%s", je.text);
	struct srv_typeerr te;
	cr_expect(srv_builtin_check("CustomResourceDefinition", CRD_AV, o,
				    false, SRV_DEC_JSON, NULL, &te));
	srv_builtin_omitempty("CustomResourceDefinition", CRD_AV, o);
	json_decref(o);
	free(s);
}

/* A NUL byte in a skipped value stops the scan (it once spun there: strchr
   finds the terminator). reg_json_load refuses such texts before. */
Test(fields, scan_stops_at_a_nul_byte_issue3)
{
	static const char text[] = "{\"metadata\":{\"name\":\"a\"},\"zz\":[1\0]}";
	struct srv_strict s = {.mode = SRV_FV_STRICT};
	cr_expect(srv_builtin_scan_json("ConfigMap", "v1", text,
					sizeof text - 1, &s));
	expect_errors(&s, "strict decoding error: unknown field \"zz\"");
	srv_strict_free(&s);
}

/* From the real-CRD probe: a null pointer field is Go's nil, left out
   (conversion: null is then defaulted, not refused); caBundle is []byte,
   decoded as Go's base64.StdEncoding and stored re-encoded. */
Test(fields, crd_nulls_and_base64_as_go_decodes_them_issue3)
{
	json_t *o = parse(CRD_SCHEMA("{\"type\":\"object\",\"maximum\":null,"
				     "\"items\":null,\"default\":null,"
				     "\"x-kubernetes-list-type\":null}"));
	json_object_set_new(json_object_get(o, "spec"), "conversion",
			    json_null());
	srv_builtin_omitempty("CustomResourceDefinition", CRD_AV, o);
	json_t *want = parse(CRD_SCHEMA("{\"type\":\"object\"}"));
	cr_expect(json_equal(o, want), "got %s",
		  json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT));
	json_decref(want);
	json_decref(o);

	static const struct {
		const char *in, *stored, *err;
	} b64[] = {
	    {"YWJj", "YWJj", ""},
	    {"YW\\nJj\\r\\n", "YWJj", ""},
	    {"YQ==", "YQ==", ""},
	    {"YR==", "YQ==", ""}, /* trailing bits dropped, as Go re-encodes */
	    {"", "", ""},
	    {"YWJ", NULL, "illegal base64 data at input byte 0"},
	    {"YW!j", NULL, "illegal base64 data at input byte 2"},
	    {"Y===", NULL, "illegal base64 data at input byte 1"},
	    {"YQ=", NULL, "illegal base64 data at input byte 3"},
	    {"YQ==YQ==", NULL, "illegal base64 data at input byte 4"},
	    {"YWJjZA=x", NULL, "illegal base64 data at input byte 6"},
	    {"${CA_BUNDLE}", NULL, "illegal base64 data at input byte 0"},
	};
	for (size_t i = 0; i < sizeof b64 / sizeof b64[0]; i++) {
		char text[512];
		snprintf(text, sizeof text,
			 "{\"spec\":{\"conversion\":{\"strategy\":\"Webhook\","
			 "\"webhook\":{\"clientConfig\":{\"caBundle\":\"%s\"}}}}}",
			 b64[i].in);
		json_t *c = parse(text);
		struct srv_typeerr te;
		srv_builtin_check("CustomResourceDefinition", CRD_AV, c, false,
				  SRV_DEC_JSON, NULL, &te);
		cr_expect_str_eq(te.set ? te.text : "", b64[i].err, "for %s",
				 b64[i].in);
		if (b64[i].stored)
			cr_expect_str_eq(
			    json_string_value(json_object_get(
				json_object_get(
				    json_object_get(
					json_object_get(
					    json_object_get(c, "spec"),
					    "conversion"),
					"webhook"),
				    "clientConfig"),
				"caBundle")),
			    b64[i].stored, "for %s", b64[i].in);
		json_decref(c);
	}
}

/* LeaseSpec's fields are all pointers with omitempty: a null is left out
   as Go's nil is, the others kept. */
Test(fields, lease_nulls_are_left_out_issue3)
{
	json_t *o = parse("{\"spec\":{\"holderIdentity\":null,"
			  "\"leaseDurationSeconds\":15,\"renewTime\":null,"
			  "\"leaseTransitions\":0}}");
	srv_builtin_omitempty("Lease", "coordination.k8s.io/v1", o);
	expect_json(o, "{\"spec\":{\"leaseDurationSeconds\":15,"
		       "\"leaseTransitions\":0}}");
	json_decref(o);
}

/* Go's strconv.Quote (%q): named escapes, \x for other ASCII controls and
   for bytes that start no UTF-8 character, \u and \U for characters
   unicode.IsPrint refuses; printable characters as they are; cut between
   characters when out is short. */
Test(fields, go_quote_escapes_as_strconv_quote)
{
	static const struct {
		const char *in, *out;
	} t[] = {
	    {"plain", "\"plain\""},
	    {"a\"b\\c", "\"a\\\"b\\\\c\""},
	    {"\a\b\f\n\r\t\v", "\"\\a\\b\\f\\n\\r\\t\\v\""},
	    {"a\x01" "b\x7f", "\"a\\x01b\\x7f\""},
	    {"a\xe2\x80\x8b" "b", "\"a\\u200bb\""},	     /* U+200B */
	    {"\xf3\xa0\x80\x81", "\"\\U000e0001\""},	     /* U+E0001 */
	    {"\xc3\xa9\xe2\x82\xac", "\"\xc3\xa9\xe2\x82\xac\""}, /* é€ */
	    {"m\xff" "n\xc3", "\"m\\xffn\\xc3\""},
	    {"\xef\xbf\xbd", "\"\xef\xbf\xbd\""}, /* U+FFFD prints */
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		char q[64];
		srv_go_quote(t[i].in, q, sizeof q);
		cr_expect_str_eq(q, t[i].out, "case %zu", i);
	}
	char q[8];
	srv_go_quote("ab\xe2\x80\x8b" "c", q, sizeof q);
	cr_expect_str_eq(q, "\"ab\"", "no escape is cut in half");
}
