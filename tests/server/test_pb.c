/*
 * test_pb.c -- tests of server/pb.c, the protobuf body decoder.
 *
 * Two sources of input:
 *   - the .bin files in data/pb/, bodies captured from kubectl v1.33.1 (`kubectl create
 *     namespace|configmap|secret generic|serviceaccount|service clusterip|
 *     service nodeport ... --validate=false`) against a recording HTTP
 *     listener; they are what a real client sends.
 *   - messages hand-encoded here with a tiny protobuf writer (struct enc),
 *     for every kind, the JSON mapping rules and each malformed case.
 * Deterministic: the mutation sweep uses fixed byte patterns, no seeds.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../server/pb.h"

/* The largest protobuf field number (2^29 - 1). */
#define PB_FIELD_MAX_TEST 536870911u

/* ------------------------------------------------------------------ */
/* A tiny protobuf writer                                               */
/* ------------------------------------------------------------------ */

struct enc {
	uint8_t *b;
	size_t len, cap;
};

static void put_raw(struct enc *e, const void *p, size_t n)
{
	if (e->len + n > e->cap) {
		size_t cap = e->cap ? e->cap : 64;
		while (cap < e->len + n)
			cap *= 2;
		e->b = realloc(e->b, cap);
		cr_assert(e->b);
		e->cap = cap;
	}
	if (n)
		memcpy(e->b + e->len, p, n);
	e->len += n;
}

static void put_byte(struct enc *e, uint8_t c)
{
	put_raw(e, &c, 1);
}

static void put_varint(struct enc *e, uint64_t v)
{
	while (v >= 0x80) {
		put_byte(e, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	put_byte(e, (uint8_t)v);
}

static void put_tag(struct enc *e, uint32_t num, unsigned wt)
{
	put_varint(e, (uint64_t)num << 3 | wt);
}

/* varint field */
static void put_uint(struct enc *e, uint32_t num, uint64_t v)
{
	put_tag(e, num, 0);
	put_varint(e, v);
}

/* length-delimited field */
static void put_bytes(struct enc *e, uint32_t num, const void *p, size_t n)
{
	put_tag(e, num, 2);
	put_varint(e, n);
	put_raw(e, p, n);
}

static void put_str(struct enc *e, uint32_t num, const char *s)
{
	put_bytes(e, num, s, strlen(s));
}

/* embedded message; frees sub */
static void put_msg(struct enc *e, uint32_t num, struct enc *sub)
{
	put_bytes(e, num, sub->b, sub->len);
	free(sub->b);
	memset(sub, 0, sizeof *sub);
}

/* map entry {1: key, 2: value} */
static void put_map(struct enc *e, uint32_t num, const char *k, const void *v,
		    size_t vlen)
{
	struct enc en = { 0 };
	put_str(&en, 1, k);
	put_bytes(&en, 2, v, vlen);
	put_msg(e, num, &en);
}

/* Timestamp {1: seconds, 2: nanos} as field num */
static void put_time(struct enc *e, uint32_t num, int64_t sec, int32_t nanos)
{
	struct enc t = { 0 };
	put_uint(&t, 1, (uint64_t)sec);
	if (nanos)
		put_uint(&t, 2, (uint64_t)(int64_t)nanos);
	put_msg(e, num, &t);
}

/* "k8s\0" + runtime.Unknown{typeMeta{apiVersion, kind}, raw, "", ""};
   frees raw. apiVersion or kind NULL: left out. */
static struct enc envelope(const char *api_version, const char *kind,
			   struct enc *raw)
{
	struct enc e = { 0 }, tm = { 0 }, u = { 0 };
	put_raw(&e, "k8s", 4);
	if (api_version)
		put_str(&tm, 1, api_version);
	if (kind)
		put_str(&tm, 2, kind);
	put_msg(&u, 1, &tm);
	put_msg(&u, 2, raw);
	put_str(&u, 3, "");
	put_str(&u, 4, "");
	put_raw(&e, u.b, u.len);
	free(u.b);
	return e;
}

/* ObjectMeta as a Go client writes it: every value field present. */
static void put_meta(struct enc *e, const char *name, const char *ns)
{
	struct enc m = { 0 }, ts = { 0 };
	put_str(&m, 1, name);
	put_str(&m, 2, "");
	put_str(&m, 3, ns);
	put_str(&m, 4, "");
	put_str(&m, 5, "");
	put_str(&m, 6, "");
	put_uint(&m, 7, 0);
	put_msg(&m, 8, &ts);
	put_msg(e, 1, &m);
}

/* Prepend a tag and length to the payload at b[*pos..cap): nesting built
   from the inside out in linear time. */
static void prepend_len_field(uint8_t *b, size_t cap, size_t *pos,
			      uint32_t num)
{
	uint8_t tmp[20];
	struct enc h = { tmp, 0, sizeof tmp };
	put_tag(&h, num, 2);
	put_varint(&h, cap - *pos);
	cr_assert(h.b == tmp && *pos >= h.len);
	*pos -= h.len;
	memcpy(b + *pos, tmp, h.len);
}

/* levels nested field num around the message inner (borrowed). */
static struct enc nest(uint32_t num, int levels, const struct enc *inner)
{
	size_t cap = inner->len + (size_t)levels * 16;
	uint8_t *b = malloc(cap);
	cr_assert(b);
	size_t pos = cap - inner->len;
	memcpy(b + pos, inner->b, inner->len);
	for (int i = 0; i < levels; i++)
		prepend_len_field(b, cap, &pos, num);
	struct enc e = { 0 };
	put_raw(&e, b + pos, cap - pos);
	free(b);
	return e;
}

/* ------------------------------------------------------------------ */
/* Checks                                                               */
/* ------------------------------------------------------------------ */

static json_t *decode_ok(const void *b, size_t len, const char *expect_kind)
{
	json_t *out = NULL;
	struct srv_error err = { 0 };
	lp_err rc = srv_pb_decode(b, len, expect_kind, &out, &err);
	cr_assert_eq(rc, LP_OK, "decode failed: %s: %s", lp_errname(rc),
		     err.message);
	cr_assert_not_null(out);
	return out;
}

static void expect_json_kind(const struct enc *body, const char *expect_kind,
			     const char *want_text)
{
	json_error_t jerr;
	json_t *want = json_loads(want_text, 0, &jerr);
	cr_assert_not_null(want, "bad expected JSON: %s", jerr.text);
	json_t *got = decode_ok(body->b, body->len, expect_kind);
	char *g = json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT);
	char *w = json_dumps(want, JSON_SORT_KEYS | JSON_COMPACT);
	cr_expect(json_equal(got, want), "got  %s\nwant %s", g, w);
	free(g);
	free(w);
	json_decref(got);
	json_decref(want);
}

static void expect_json(struct enc *body, const char *want_text)
{
	expect_json_kind(body, NULL, want_text);
	free(body->b);
	memset(body, 0, sizeof *body);
}

static void expect_error_kind(const void *b, size_t len, const char *kind,
			      lp_err code)
{
	json_t *out = (json_t *)0x1; /* must stay untouched on failure */
	struct srv_error err = { 0 };
	lp_err rc = srv_pb_decode(b, len, kind, &out, &err);
	cr_assert_eq(rc, code, "want %s, got %s (%s)", lp_errname(code),
		     lp_errname(rc), err.message);
	cr_assert_eq(err.code, code);
	cr_assert_neq(err.message[0], '\0', "an error carries a message");
	cr_assert_eq(out, (json_t *)0x1, "out written on failure");
}

static void expect_error(struct enc *body, lp_err code)
{
	expect_error_kind(body->b, body->len, NULL, code);
	free(body->b);
	memset(body, 0, sizeof *body);
}

/* Wrap a raw message as a Namespace body. */
static struct enc ns_body(struct enc *raw)
{
	return envelope("v1", "Namespace", raw);
}

/* The fixture file name under data/pb next to this source. */
static struct enc fixture(const char *name)
{
	char path[4096];
	const char *slash = strrchr(__FILE__, '/');
	int dirlen = slash ? (int)(slash - __FILE__) : 1;
	snprintf(path, sizeof path, "%.*s/data/pb/%s", dirlen,
		 slash ? __FILE__ : ".", name);
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot open %s", path);
	struct enc e = { 0 };
	uint8_t buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		put_raw(&e, buf, n);
	fclose(f);
	return e;
}

static void expect_fixture(const char *name, const char *want)
{
	struct enc e = fixture(name);
	expect_json(&e, want);
}

/* ------------------------------------------------------------------ */
/* Bodies captured from kubectl 1.33                                    */
/* ------------------------------------------------------------------ */

Test(pb, decodes_kubectl_create_namespace)
{
	expect_fixture("namespace_foo.bin",
		       "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
		       "\"metadata\":{\"name\":\"foo\"},\"spec\":{},\"status\":{}}");
}

Test(pb, decodes_kubectl_create_configmap)
{
	expect_fixture("configmap.bin",
		       "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
		       "\"metadata\":{\"name\":\"cm1\",\"namespace\":\"default\"},"
		       "\"data\":{\"a\":\"1\",\"b\":\"\"}}");
}

Test(pb, decodes_kubectl_create_configmap_from_file)
{
	expect_fixture("configmap_binary.bin",
		       "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
		       "\"metadata\":{\"name\":\"cm2\",\"namespace\":\"default\"},"
		       "\"data\":{\"blob\":\"k\\u0001\\u0002\",\"t\":\"x\"}}");
}

Test(pb, decodes_kubectl_create_secret_with_type)
{
	expect_fixture("secret_opaque.bin",
		       "{\"apiVersion\":\"v1\",\"kind\":\"Secret\","
		       "\"metadata\":{\"name\":\"s1\",\"namespace\":\"default\"},"
		       "\"data\":{\"pw\":\"aHVudGVyMg==\"},\"type\":\"Opaque\"}");
}

Test(pb, decodes_kubectl_create_secret_with_binary_and_empty_values)
{
	expect_fixture("secret_binary.bin",
		       "{\"apiVersion\":\"v1\",\"kind\":\"Secret\","
		       "\"metadata\":{\"name\":\"s2\",\"namespace\":\"default\"},"
		       "\"data\":{\"bin\":\"AQI=\",\"e\":\"\"}}");
}

Test(pb, decodes_kubectl_create_serviceaccount)
{
	expect_fixture("serviceaccount.bin",
		       "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\","
		       "\"metadata\":{\"name\":\"sa1\",\"namespace\":\"default\"}}");
}

Test(pb, decodes_kubectl_create_service_clusterip_int_target_port)
{
	expect_fixture("service_clusterip.bin",
		       "{\"apiVersion\":\"v1\",\"kind\":\"Service\","
		       "\"metadata\":{\"name\":\"svc1\",\"namespace\":\"default\","
		       "\"labels\":{\"app\":\"svc1\"}},"
		       "\"spec\":{\"ports\":[{\"name\":\"80-8080\",\"protocol\":\"TCP\","
		       "\"port\":80,\"targetPort\":8080}],"
		       "\"selector\":{\"app\":\"svc1\"},\"type\":\"ClusterIP\"},"
		       "\"status\":{\"loadBalancer\":{}}}");
}

Test(pb, decodes_kubectl_create_service_nodeport_string_target_port)
{
	expect_fixture("service_nodeport.bin",
		       "{\"apiVersion\":\"v1\",\"kind\":\"Service\","
		       "\"metadata\":{\"name\":\"svc2\",\"namespace\":\"default\","
		       "\"labels\":{\"app\":\"svc2\"}},"
		       "\"spec\":{\"ports\":[{\"name\":\"443-https\",\"protocol\":\"TCP\","
		       "\"port\":443,\"targetPort\":\"https\",\"nodePort\":30443}],"
		       "\"selector\":{\"app\":\"svc2\"},\"type\":\"NodePort\"},"
		       "\"status\":{\"loadBalancer\":{}}}");
}

/* ------------------------------------------------------------------ */
/* Hand-encoded kinds                                                   */
/* ------------------------------------------------------------------ */

Test(pb, namespace_like_kubectl_drops_go_zero_values)
{
	struct enc raw = { 0 }, spec = { 0 }, st = { 0 };
	put_meta(&raw, "foo", "");
	put_msg(&raw, 2, &spec);
	put_str(&st, 1, "");
	put_msg(&raw, 3, &st);
	struct enc e = ns_body(&raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
			"\"metadata\":{\"name\":\"foo\"},\"spec\":{},\"status\":{}}");
}

Test(pb, namespace_spec_finalizers_and_status_conditions)
{
	struct enc raw = { 0 }, spec = { 0 }, st = { 0 }, c = { 0 }, ts = { 0 };
	put_meta(&raw, "ns1", "");
	put_str(&spec, 1, "kubernetes");
	put_str(&spec, 1, "example.com/x");
	put_msg(&raw, 2, &spec);
	put_str(&st, 1, "Terminating");
	put_str(&c, 1, "NamespaceDeletionDiscoveryFailure");
	put_str(&c, 2, "False");
	put_msg(&c, 4, &ts);
	put_str(&c, 5, "");
	put_str(&c, 6, "");
	put_msg(&st, 2, &c);
	put_msg(&raw, 3, &st);
	struct enc e = ns_body(&raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
			"\"metadata\":{\"name\":\"ns1\"},"
			"\"spec\":{\"finalizers\":[\"kubernetes\",\"example.com/x\"]},"
			"\"status\":{\"phase\":\"Terminating\",\"conditions\":[{"
			"\"type\":\"NamespaceDeletionDiscoveryFailure\","
			"\"status\":\"False\",\"lastTransitionTime\":null}]}}");
}

Test(pb, configmap_data_binary_data_and_immutable_false)
{
	struct enc raw = { 0 };
	const uint8_t bin[] = { 0x00, 0xff, 0x10, 0x80 };
	put_meta(&raw, "cm", "default");
	put_uint(&raw, 4, 0);
	put_map(&raw, 2, "k", "v", 1);
	put_map(&raw, 2, "empty", "", 0);
	put_map(&raw, 3, "b", bin, sizeof bin);
	put_map(&raw, 3, "b3", "abc", 3);
	struct enc e = envelope("v1", "ConfigMap", &raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
			"\"metadata\":{\"name\":\"cm\",\"namespace\":\"default\"},"
			"\"immutable\":false,\"data\":{\"k\":\"v\",\"empty\":\"\"},"
			"\"binaryData\":{\"b\":\"AP8QgA==\",\"b3\":\"YWJj\"}}");
}

Test(pb, secret_data_bytes_string_data_and_type)
{
	struct enc raw = { 0 };
	const uint8_t tok[] = { 0xde, 0xad, 0xbe, 0xef, 0x01 };
	put_meta(&raw, "s", "ns");
	put_uint(&raw, 5, 1);
	put_map(&raw, 2, "token", tok, sizeof tok);
	put_map(&raw, 2, "none", "", 0);
	put_map(&raw, 4, "plain", "text", 4);
	put_str(&raw, 3, "kubernetes.io/service-account-token");
	struct enc e = envelope("v1", "Secret", &raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"Secret\","
			"\"metadata\":{\"name\":\"s\",\"namespace\":\"ns\"},"
			"\"immutable\":true,"
			"\"data\":{\"token\":\"3q2+7wE=\",\"none\":\"\"},"
			"\"stringData\":{\"plain\":\"text\"},"
			"\"type\":\"kubernetes.io/service-account-token\"}");
}

Test(pb, map_entry_missing_key_or_value_is_empty_string)
{
	struct enc raw = { 0 }, en = { 0 };
	put_str(&en, 2, "v");
	put_msg(&raw, 2, &en);
	put_str(&en, 1, "k");
	put_msg(&raw, 3, &en);
	struct enc e = envelope("v1", "ConfigMap", &raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
			"\"data\":{\"\":\"v\"},\"binaryData\":{\"k\":\"\"}}");
}

Test(pb, map_duplicate_keys_last_wins)
{
	struct enc raw = { 0 };
	put_map(&raw, 2, "k", "1", 1);
	put_map(&raw, 2, "k", "2", 1);
	struct enc e = envelope("v1", "ConfigMap", &raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
			"\"data\":{\"k\":\"2\"}}");
}

Test(pb, serviceaccount_secrets_pull_secrets_and_automount)
{
	struct enc raw = { 0 }, r1 = { 0 }, r2 = { 0 };
	put_meta(&raw, "builder", "ci");
	put_str(&r1, 1, "Secret");
	put_str(&r1, 3, "builder-token");
	put_str(&r1, 2, "");
	put_msg(&raw, 2, &r1);
	put_str(&r2, 1, "regcred");
	put_msg(&raw, 3, &r2);
	put_uint(&raw, 4, 0);
	struct enc e = envelope("v1", "ServiceAccount", &raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\","
			"\"metadata\":{\"name\":\"builder\",\"namespace\":\"ci\"},"
			"\"secrets\":[{\"kind\":\"Secret\",\"name\":\"builder-token\"}],"
			"\"imagePullSecrets\":[{\"name\":\"regcred\"}],"
			"\"automountServiceAccountToken\":false}");
}

Test(pb, lease_microtime_holder_and_duration)
{
	struct enc raw = { 0 }, spec = { 0 };
	put_meta(&raw, "kube-scheduler", "kube-system");
	put_str(&spec, 1, "node-1_8f3a");
	put_uint(&spec, 2, 15);
	put_time(&spec, 3, 1700000000, 0);
	put_time(&spec, 4, 1700000000, 123456789);
	put_uint(&spec, 5, 0);
	put_msg(&raw, 2, &spec);
	struct enc e = envelope("coordination.k8s.io/v1", "Lease", &raw);
	expect_json(&e, "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
			"\"metadata\":{\"name\":\"kube-scheduler\","
			"\"namespace\":\"kube-system\"},"
			"\"spec\":{\"holderIdentity\":\"node-1_8f3a\","
			"\"leaseDurationSeconds\":15,"
			"\"acquireTime\":\"2023-11-14T22:13:20.000000Z\","
			"\"renewTime\":\"2023-11-14T22:13:20.123456Z\","
			"\"leaseTransitions\":0}}");
}

Test(pb, lease_strategy_and_preferred_holder)
{
	struct enc raw = { 0 }, spec = { 0 };
	put_str(&spec, 6, "OldestEmulationVersion");
	put_str(&spec, 7, "");
	put_msg(&raw, 2, &spec);
	struct enc e = envelope("coordination.k8s.io/v1", "Lease", &raw);
	expect_json(&e, "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
			"\"spec\":{\"strategy\":\"OldestEmulationVersion\","
			"\"preferredHolder\":\"\"}}");
}

Test(pb, service_ports_int_and_string_target_ports)
{
	struct enc raw = { 0 }, spec = { 0 }, p = { 0 }, tp = { 0 }, sac = { 0 },
		   cip = { 0 }, st = { 0 }, lb = { 0 };
	put_meta(&raw, "web", "default");

	put_str(&p, 1, "http");
	put_str(&p, 2, "TCP");
	put_uint(&p, 3, 80);
	put_uint(&tp, 1, 0);
	put_uint(&tp, 2, 8080);
	put_str(&tp, 3, "");
	put_msg(&p, 4, &tp);
	put_uint(&p, 5, 0);
	put_msg(&spec, 1, &p);

	put_str(&p, 1, "metrics");
	put_str(&p, 2, "TCP");
	put_str(&p, 6, "http");
	put_uint(&p, 3, 9090);
	put_uint(&tp, 1, 1);
	put_str(&tp, 3, "metrics");
	put_msg(&p, 4, &tp);
	put_uint(&p, 5, 30090);
	put_msg(&spec, 1, &p);

	put_map(&spec, 2, "app", "web", 3);
	put_str(&spec, 3, "10.0.0.10");
	put_str(&spec, 18, "10.0.0.10");
	put_str(&spec, 4, "NodePort");
	put_str(&spec, 7, "ClientIP");
	put_uint(&cip, 1, 10800);
	put_msg(&sac, 1, &cip);
	put_msg(&spec, 14, &sac);
	put_str(&spec, 19, "IPv4");
	put_str(&spec, 17, "SingleStack");
	put_str(&spec, 11, "Cluster");
	put_str(&spec, 22, "Cluster");
	put_uint(&spec, 12, 0);
	put_uint(&spec, 13, 0);
	put_msg(&raw, 2, &spec);
	put_msg(&st, 1, &lb);
	put_msg(&raw, 3, &st);
	struct enc e = envelope("v1", "Service", &raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"Service\","
			"\"metadata\":{\"name\":\"web\",\"namespace\":\"default\"},"
			"\"spec\":{\"ports\":["
			"{\"name\":\"http\",\"protocol\":\"TCP\",\"port\":80,"
			"\"targetPort\":8080},"
			"{\"name\":\"metrics\",\"protocol\":\"TCP\",\"appProtocol\":\"http\","
			"\"port\":9090,\"targetPort\":\"metrics\",\"nodePort\":30090}],"
			"\"selector\":{\"app\":\"web\"},\"clusterIP\":\"10.0.0.10\","
			"\"clusterIPs\":[\"10.0.0.10\"],\"type\":\"NodePort\","
			"\"sessionAffinity\":\"ClientIP\","
			"\"sessionAffinityConfig\":{\"clientIP\":{\"timeoutSeconds\":10800}},"
			"\"ipFamilies\":[\"IPv4\"],\"ipFamilyPolicy\":\"SingleStack\","
			"\"externalTrafficPolicy\":\"Cluster\","
			"\"internalTrafficPolicy\":\"Cluster\"},"
			"\"status\":{\"loadBalancer\":{}}}");
}

Test(pb, service_status_ingress_and_conditions)
{
	struct enc raw = { 0 }, st = { 0 }, lb = { 0 }, ing = { 0 }, ps = { 0 },
		   c = { 0 };
	put_str(&ing, 1, "192.0.2.1");
	put_str(&ing, 3, "VIP");
	put_uint(&ps, 1, 443);
	put_str(&ps, 2, "TCP");
	put_msg(&ing, 4, &ps);
	put_msg(&lb, 1, &ing);
	put_msg(&st, 1, &lb);
	put_str(&c, 1, "Ready");
	put_str(&c, 2, "True");
	put_uint(&c, 3, 3);
	put_time(&c, 4, 0, 0);
	put_str(&c, 5, "Up");
	put_str(&c, 6, "");
	put_msg(&st, 2, &c);
	put_msg(&raw, 3, &st);
	struct enc e = envelope("v1", "Service", &raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"Service\","
			"\"status\":{\"loadBalancer\":{\"ingress\":[{\"ip\":\"192.0.2.1\","
			"\"ipMode\":\"VIP\",\"ports\":[{\"port\":443,\"protocol\":\"TCP\"}]}]},"
			"\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
			"\"observedGeneration\":3,"
			"\"lastTransitionTime\":\"1970-01-01T00:00:00Z\","
			"\"reason\":\"Up\",\"message\":\"\"}]}}");
}

Test(pb, endpoints_subsets_addresses_and_ports)
{
	struct enc raw = { 0 }, sub = { 0 }, a = { 0 }, ref = { 0 }, p = { 0 };
	put_meta(&raw, "web", "default");
	put_str(&a, 1, "10.1.0.5");
	put_str(&a, 3, "");
	put_str(&a, 4, "node-1");
	put_str(&ref, 1, "Pod");
	put_str(&ref, 2, "default");
	put_str(&ref, 3, "web-0");
	put_str(&ref, 4, "0b5d");
	put_msg(&a, 2, &ref);
	put_msg(&sub, 1, &a);
	put_str(&a, 1, "10.1.0.6");
	put_msg(&sub, 2, &a);
	put_str(&p, 1, "");
	put_uint(&p, 2, 8080);
	put_str(&p, 3, "TCP");
	put_msg(&sub, 3, &p);
	put_msg(&raw, 2, &sub);
	struct enc e = envelope("v1", "Endpoints", &raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\","
			"\"metadata\":{\"name\":\"web\",\"namespace\":\"default\"},"
			"\"subsets\":[{\"addresses\":[{\"ip\":\"10.1.0.5\","
			"\"nodeName\":\"node-1\",\"targetRef\":{\"kind\":\"Pod\","
			"\"namespace\":\"default\",\"name\":\"web-0\",\"uid\":\"0b5d\"}}],"
			"\"notReadyAddresses\":[{\"ip\":\"10.1.0.6\"}],"
			"\"ports\":[{\"port\":8080,\"protocol\":\"TCP\"}]}]}");
}

Test(pb, event_times_source_series_and_reporting)
{
	struct enc raw = { 0 }, io = { 0 }, src = { 0 }, ts = { 0 }, ser = { 0 };
	put_meta(&raw, "web.17a", "default");
	put_str(&io, 1, "Pod");
	put_str(&io, 3, "web-0");
	put_str(&io, 7, "spec.containers{app}");
	put_msg(&raw, 2, &io);
	put_str(&raw, 3, "Started");
	put_str(&raw, 4, "Started container app");
	put_str(&src, 1, "kubelet");
	put_str(&src, 2, "node-1");
	put_msg(&raw, 5, &src);
	put_time(&raw, 6, 1700000000, 999999999); /* nanos dropped, as kube */
	put_msg(&raw, 7, &ts);			  /* zero Time: null */
	put_uint(&raw, 8, 2);
	put_str(&raw, 9, "Normal");
	put_msg(&raw, 10, &ts); /* zero MicroTime: null */
	put_uint(&ser, 1, 4);
	put_time(&ser, 2, 1700000001, 5000);
	put_msg(&raw, 11, &ser);
	put_str(&raw, 12, "");
	put_str(&raw, 14, "");
	put_str(&raw, 15, "");
	struct enc e = envelope("v1", "Event", &raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"Event\","
			"\"metadata\":{\"name\":\"web.17a\",\"namespace\":\"default\"},"
			"\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"web-0\","
			"\"fieldPath\":\"spec.containers{app}\"},"
			"\"reason\":\"Started\",\"message\":\"Started container app\","
			"\"source\":{\"component\":\"kubelet\",\"host\":\"node-1\"},"
			"\"firstTimestamp\":\"2023-11-14T22:13:20Z\","
			"\"lastTimestamp\":null,\"count\":2,\"type\":\"Normal\","
			"\"eventTime\":null,"
			"\"series\":{\"count\":4,"
			"\"lastObservedTime\":\"2023-11-14T22:13:21.000005Z\"},"
			"\"reportingComponent\":\"\",\"reportingInstance\":\"\"}");
}

Test(pb, event_related_object)
{
	struct enc raw = { 0 }, rel = { 0 };
	put_str(&rel, 1, "Node");
	put_str(&rel, 3, "node-1");
	put_msg(&raw, 13, &rel);
	put_str(&raw, 12, "Binding");
	struct enc e = envelope("v1", "Event", &raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"Event\","
			"\"related\":{\"kind\":\"Node\",\"name\":\"node-1\"},"
			"\"action\":\"Binding\"}");
}

Test(pb, delete_options_propagation_and_preconditions)
{
	struct enc raw = { 0 }, pre = { 0 };
	put_uint(&raw, 1, 0);
	put_str(&pre, 1, "6f1c");
	put_str(&pre, 2, "42");
	put_msg(&raw, 2, &pre);
	put_str(&raw, 4, "Foreground");
	put_str(&raw, 5, "All");
	struct enc e = envelope("v1", "DeleteOptions", &raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\","
			"\"gracePeriodSeconds\":0,"
			"\"preconditions\":{\"uid\":\"6f1c\",\"resourceVersion\":\"42\"},"
			"\"propagationPolicy\":\"Foreground\",\"dryRun\":[\"All\"]}");
}

Test(pb, delete_options_in_any_group_at_v1)
{
	struct enc raw = { 0 };
	put_uint(&raw, 3, 1);
	put_uint(&raw, 6, 0);
	struct enc e = envelope("coordination.k8s.io/v1", "DeleteOptions", &raw);
	expect_json(&e, "{\"apiVersion\":\"coordination.k8s.io/v1\","
			"\"kind\":\"DeleteOptions\",\"orphanDependents\":true,"
			"\"ignoreStoreReadErrorWithClusterBreakingPotential\":false}");

	raw = (struct enc){ 0 };
	put_str(&raw, 4, "Orphan");
	e = envelope("meta.k8s.io/v1", "DeleteOptions", &raw);
	expect_json(&e, "{\"apiVersion\":\"meta.k8s.io/v1\",\"kind\":\"DeleteOptions\","
			"\"propagationPolicy\":\"Orphan\"}");
}

Test(pb, empty_type_meta_takes_expected_kind)
{
	struct enc raw = { 0 };
	put_str(&raw, 4, "Background");
	struct enc e = envelope(NULL, NULL, &raw);
	expect_json_kind(&e, "DeleteOptions", "{\"propagationPolicy\":\"Background\"}");
	expect_error_kind(e.b, e.len, NULL, LP_E_BADREQUEST);
	free(e.b);
}

Test(pb, expected_kind_does_not_override_type_meta)
{
	struct enc raw = { 0 };
	put_meta(&raw, "foo", "");
	struct enc e = envelope("v1", "Namespace", &raw);
	expect_json_kind(&e, "ConfigMap", "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
					   "\"metadata\":{\"name\":\"foo\"}}");
	free(e.b);
}

Test(pb, missing_api_version_is_accepted)
{
	struct enc raw = { 0 };
	put_meta(&raw, "foo", "");
	struct enc e = envelope(NULL, "Namespace", &raw);
	expect_json(&e, "{\"kind\":\"Namespace\",\"metadata\":{\"name\":\"foo\"}}");
}

Test(pb, no_raw_gives_only_type_meta)
{
	struct enc e = { 0 }, u = { 0 }, tm = { 0 };
	put_raw(&e, "k8s", 4);
	put_str(&tm, 1, "v1");
	put_str(&tm, 2, "Namespace");
	put_msg(&u, 1, &tm);
	put_raw(&e, u.b, u.len);
	free(u.b);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\"}");
}

/* ------------------------------------------------------------------ */
/* ObjectMeta and the JSON mapping rules                                */
/* ------------------------------------------------------------------ */

/* A ConfigMap whose metadata uses every ObjectMeta field. */
static struct enc full_meta_body(void)
{
	struct enc raw = { 0 }, m = { 0 }, ts = { 0 }, or = { 0 }, mf = { 0 },
		   f1 = { 0 };
	put_str(&m, 1, "a");
	put_str(&m, 2, "a-");
	put_str(&m, 3, "");
	put_str(&m, 5, "uid-1");
	put_str(&m, 6, "17");
	put_uint(&m, 7, 3);
	put_time(&m, 8, 1700000000, 0);
	put_msg(&m, 9, &ts); /* set pointer, zero time: null */
	put_uint(&m, 10, 30);
	put_map(&m, 11, "app", "a", 1);
	put_map(&m, 12, "note", "x y", 3);
	put_str(&or, 5, "apps/v1");
	put_str(&or, 1, "ReplicaSet");
	put_str(&or, 3, "rs");
	put_str(&or, 4, "u2");
	put_uint(&or, 6, 1);
	put_uint(&or, 7, 0);
	put_msg(&m, 13, &or);
	put_str(&m, 14, "f/one");
	put_str(&m, 14, "f/two");
	put_str(&mf, 1, "kubectl");
	put_str(&mf, 2, "Update");
	put_str(&mf, 3, "v1");
	put_time(&mf, 4, 1700000000, 0);
	put_str(&mf, 6, "FieldsV1");
	put_str(&f1, 1, "{\"f:data\":{\".\":{},\"f:k\":{}}}");
	put_msg(&mf, 7, &f1);
	put_str(&mf, 8, "");
	put_msg(&m, 17, &mf);
	put_msg(&raw, 1, &m);
	return envelope("v1", "ConfigMap", &raw);
}

Test(pb, object_meta_full)
{
	struct enc e = full_meta_body();
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
			"\"name\":\"a\",\"generateName\":\"a-\",\"uid\":\"uid-1\","
			"\"resourceVersion\":\"17\",\"generation\":3,"
			"\"creationTimestamp\":\"2023-11-14T22:13:20Z\","
			"\"deletionTimestamp\":null,\"deletionGracePeriodSeconds\":30,"
			"\"labels\":{\"app\":\"a\"},\"annotations\":{\"note\":\"x y\"},"
			"\"ownerReferences\":[{\"apiVersion\":\"apps/v1\","
			"\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"uid\":\"u2\","
			"\"controller\":true,\"blockOwnerDeletion\":false}],"
			"\"finalizers\":[\"f/one\",\"f/two\"],"
			"\"managedFields\":[{\"manager\":\"kubectl\",\"operation\":\"Update\","
			"\"apiVersion\":\"v1\",\"time\":\"2023-11-14T22:13:20Z\","
			"\"fieldsType\":\"FieldsV1\","
			"\"fieldsV1\":{\"f:data\":{\".\":{},\"f:k\":{}}}}]}}");
}

Test(pb, fields_v1_empty_or_absent_raw_is_null)
{
	struct enc raw = { 0 }, m = { 0 }, mf = { 0 }, f1 = { 0 };
	put_msg(&mf, 7, &f1);
	put_msg(&m, 17, &mf);
	put_str(&f1, 1, "");
	put_msg(&mf, 7, &f1);
	put_msg(&m, 17, &mf);
	put_msg(&raw, 1, &m);
	struct enc e = envelope("v1", "ConfigMap", &raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
			"\"managedFields\":[{\"fieldsV1\":null},{\"fieldsV1\":null}]}}");
}

static void fields_v1_error(const void *rawjson, size_t n)
{
	struct enc raw = { 0 }, m = { 0 }, mf = { 0 }, f1 = { 0 };
	put_bytes(&f1, 1, rawjson, n);
	put_msg(&mf, 7, &f1);
	put_msg(&m, 17, &mf);
	put_msg(&raw, 1, &m);
	struct enc e = envelope("v1", "ConfigMap", &raw);
	expect_error(&e, LP_E_BADREQUEST);
}

Test(pb, fields_v1_invalid_json_or_cbor_is_refused)
{
	fields_v1_error("{\"f:a\":", 7);
	fields_v1_error("\xa1\x61\x61\xa0", 4); /* CBOR map */
	fields_v1_error("\xf6", 1);		/* CBOR null */
}

Test(pb, creation_timestamp_zero_is_omitted_other_zero_times_are_null)
{
	struct enc raw = { 0 }, m = { 0 }, c = { 0 }, st = { 0 };
	put_time(&m, 8, -62135596800LL, 0); /* Go's zero time */
	put_msg(&raw, 1, &m);
	put_str(&c, 1, "T");
	put_str(&c, 2, "True");
	put_time(&c, 4, -62135596800LL, 0);
	put_msg(&st, 2, &c);
	put_msg(&raw, 3, &st);
	struct enc e = ns_body(&raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{},"
			"\"status\":{\"conditions\":[{\"type\":\"T\",\"status\":\"True\","
			"\"lastTransitionTime\":null}]}}");
}

/* creationTimestamp of seconds s (nanos n) as JSON text, or error. */
static void expect_time(int64_t s, int32_t n, const char *want)
{
	struct enc raw = { 0 }, m = { 0 };
	put_time(&m, 8, s, n);
	put_msg(&raw, 1, &m);
	struct enc e = ns_body(&raw);
	char buf[256];
	snprintf(buf, sizeof buf,
		 "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
		 "\"metadata\":{\"creationTimestamp\":\"%s\"}}", want);
	expect_json(&e, buf);
}

static void expect_microtime(int64_t s, int32_t n, const char *want)
{
	struct enc raw = { 0 }, spec = { 0 };
	put_time(&spec, 4, s, n);
	put_msg(&raw, 2, &spec);
	struct enc e = envelope("coordination.k8s.io/v1", "Lease", &raw);
	char buf[256];
	snprintf(buf, sizeof buf,
		 "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
		 "\"spec\":{\"renewTime\":\"%s\"}}", want);
	expect_json(&e, buf);
}

Test(pb, time_formats_rfc3339_seconds_in_utc)
{
	expect_time(0, 0, "1970-01-01T00:00:00Z");
	expect_time(-1, 0, "1969-12-31T23:59:59Z");
	expect_time(951782400, 0, "2000-02-29T00:00:00Z");
	expect_time(4107542399LL, 0, "2100-02-28T23:59:59Z");
	expect_time(-62135596799LL, 0, "0001-01-01T00:00:01Z");
	expect_time(253402300799LL, 0, "9999-12-31T23:59:59Z");
	expect_time(1700000000, 500000000, "2023-11-14T22:13:20Z");
}

Test(pb, microtime_keeps_six_digits_truncated)
{
	expect_microtime(1700000000, 1, "2023-11-14T22:13:20.000000Z");
	expect_microtime(1700000000, 999999999, "2023-11-14T22:13:20.999999Z");
	expect_microtime(10, -1500, "1970-01-01T00:00:09.999999Z");
	expect_microtime(10, 2000000000, "1970-01-01T00:00:12.000000Z");
	expect_microtime(-62135596800LL, 1000, "0001-01-01T00:00:00.000001Z");
}

Test(pb, time_out_of_range_is_refused)
{
	int64_t bad[] = { -62135596801LL, 253402300800LL, INT64_MIN, INT64_MAX };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct enc raw = { 0 }, m = { 0 };
		put_time(&m, 8, bad[i], 0);
		put_msg(&raw, 1, &m);
		struct enc e = ns_body(&raw);
		expect_error(&e, LP_E_BADREQUEST);

		struct enc spec = { 0 };
		put_time(&spec, 3, bad[i], 0);
		put_msg(&raw, 2, &spec);
		e = envelope("coordination.k8s.io/v1", "Lease", &raw);
		expect_error(&e, LP_E_BADREQUEST);
	}
}

Test(pb, negative_integers_from_ten_byte_varints)
{
	struct enc raw = { 0 }, spec = { 0 }, p = { 0 };
	put_uint(&p, 3, (uint64_t)(int64_t)-1); /* int32 -1 as proto writes it */
	put_uint(&p, 5, 0xFFFFFFFFull);	/* int32 truncation: -1 */
	put_msg(&spec, 1, &p);
	put_msg(&raw, 2, &spec);
	struct enc e = envelope("v1", "Service", &raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"Service\","
			"\"spec\":{\"ports\":[{\"port\":-1,\"nodePort\":-1}]}}");

	raw = (struct enc){ 0 };
	put_uint(&raw, 1, (uint64_t)INT64_MIN);
	e = envelope("v1", "DeleteOptions", &raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\","
			"\"gracePeriodSeconds\":-9223372036854775808}");
}

Test(pb, bool_is_any_nonzero_varint)
{
	struct enc raw = { 0 };
	put_uint(&raw, 4, 300);
	struct enc e = envelope("v1", "ConfigMap", &raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
			"\"immutable\":true}");
}

Test(pb, intorstring_empty_is_zero_and_bad_type_is_refused)
{
	struct enc raw = { 0 }, spec = { 0 }, p = { 0 }, tp = { 0 };
	put_msg(&p, 4, &tp);
	put_msg(&spec, 1, &p);
	put_msg(&raw, 2, &spec);
	struct enc e = envelope("v1", "Service", &raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"Service\","
			"\"spec\":{\"ports\":[{\"targetPort\":0}]}}");

	put_uint(&tp, 1, 2);
	put_uint(&tp, 2, 80);
	put_msg(&p, 4, &tp);
	put_msg(&spec, 1, &p);
	put_msg(&raw, 2, &spec);
	e = envelope("v1", "Service", &raw);
	expect_error(&e, LP_E_BADREQUEST);
}

Test(pb, omitempty_field_last_zero_value_wins)
{
	struct enc raw = { 0 }, m = { 0 };
	put_str(&m, 1, "first");
	put_str(&m, 1, "");
	put_str(&m, 3, "");
	put_str(&m, 3, "ns");
	put_msg(&raw, 1, &m);
	struct enc e = envelope("v1", "ConfigMap", &raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
			"\"metadata\":{\"namespace\":\"ns\"}}");
}

Test(pb, embedded_message_occurring_twice_merges)
{
	struct enc raw = { 0 }, m = { 0 };
	put_str(&m, 1, "a");
	put_map(&m, 11, "x", "1", 1);
	put_str(&m, 14, "f1");
	put_msg(&raw, 1, &m);
	put_str(&m, 3, "ns");
	put_map(&m, 11, "y", "2", 1);
	put_str(&m, 14, "f2");
	put_msg(&raw, 1, &m);
	struct enc e = envelope("v1", "ConfigMap", &raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
			"\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\","
			"\"labels\":{\"x\":\"1\",\"y\":\"2\"},"
			"\"finalizers\":[\"f1\",\"f2\"]}}");
}

Test(pb, unknown_fields_of_every_wire_type_are_skipped)
{
	struct enc raw = { 0 }, m = { 0 };
	put_uint(&m, 99, 12345);
	put_tag(&m, 100, 1);
	put_raw(&m, "12345678", 8);
	put_bytes(&m, 101, "\x08\x01", 2);
	put_tag(&m, 102, 5);
	put_raw(&m, "1234", 4);
	put_str(&m, 1, "x");
	put_uint(&m, PB_FIELD_MAX_TEST, 1);
	put_msg(&raw, 1, &m);
	put_bytes(&raw, 4242, "zz", 2);
	struct enc e = { 0 }, u = { 0 }, tm = { 0 };
	put_raw(&e, "k8s", 4);
	put_str(&tm, 1, "v1");
	put_str(&tm, 2, "Namespace");
	put_uint(&tm, 3, 7);
	put_msg(&u, 1, &tm);
	put_msg(&u, 2, &raw);
	put_str(&u, 3, "");
	put_str(&u, 4, "application/vnd.kubernetes.protobuf");
	put_uint(&u, 5, 1);
	put_raw(&e, u.b, u.len);
	free(u.b);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
			"\"metadata\":{\"name\":\"x\"}}");
}

Test(pb, invalid_utf8_is_replaced_as_go_json_does)
{
	struct enc raw = { 0 }, m = { 0 };
	put_str(&m, 1, "a\xff" "b");
	put_map(&m, 12, "k\xc0\xaf", "\xed\xa0\x80", 3); /* overlong, surrogate */
	put_map(&m, 12, "ok\xe2\x82\xac", "\xf0\x9f\x98\x80", 4);
	put_msg(&raw, 1, &m);
	struct enc e = ns_body(&raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{"
			"\"name\":\"a\\ufffdb\",\"annotations\":{"
			"\"k\\ufffd\\ufffd\":\"\\ufffd\\ufffd\\ufffd\","
			"\"ok\\u20ac\":\"\\ud83d\\ude00\"}}}");
}

Test(pb, nul_in_string_value_is_kept)
{
	struct enc raw = { 0 };
	put_map(&raw, 2, "k", "a\0b", 3);
	struct enc e = envelope("v1", "ConfigMap", &raw);
	json_t *out = decode_ok(e.b, e.len, NULL);
	json_t *v = json_object_get(json_object_get(out, "data"), "k");
	cr_assert(json_is_string(v));
	cr_assert_eq(json_string_length(v), 3);
	cr_assert(memcmp(json_string_value(v), "a\0b", 3) == 0);
	json_decref(out);
	free(e.b);
}

Test(pb, nul_in_map_key_is_refused)
{
	struct enc raw = { 0 }, en = { 0 };
	put_bytes(&en, 1, "a\0b", 3);
	put_str(&en, 2, "v");
	put_msg(&raw, 2, &en);
	struct enc e = envelope("v1", "ConfigMap", &raw);
	expect_error(&e, LP_E_BADREQUEST);
}

/* ------------------------------------------------------------------ */
/* Kinds without a table                                                */
/* ------------------------------------------------------------------ */

/* The message of decoding e with expect_kind, which must fail with code. */
static void expect_message(struct enc *e, const char *kind, lp_err code,
			   const char *message)
{
	json_t *out = NULL;
	struct srv_error err = {0};
	lp_err rc = srv_pb_decode(e->b, e->len, kind, &out, &err);
	cr_assert_eq(rc, code, "want %s, got %s (%s)", lp_errname(code),
		     lp_errname(rc), err.message);
	cr_assert_str_eq(err.message, message);
	free(e->b);
	memset(e, 0, sizeof *e);
}

/* A kind the endpoint serves but this decoder has no table for: kube
   would decode it, so the refusal is ours (415, "send it as JSON"). */
Test(pb, served_kind_without_a_table_is_unsupported_media)
{
	struct enc raw = { 0 };
	put_meta(&raw, "d", "default");
	struct enc e = envelope("apps/v1", "Deployment", &raw);
	expect_error_kind(e.b, e.len, "Deployment", LP_E_UNSUPPORTEDMEDIA);
	free(e.b);
}

/* A CRD has tables for its JSON bodies only (fields.c): no protobuf. */
Test(pb, crd_is_unsupported_media_issue3)
{
	struct enc raw = { 0 };
	put_meta(&raw, "as.x.io", "");
	struct enc e = envelope("apiextensions.k8s.io/v1",
				"CustomResourceDefinition", &raw);
	expect_message(
	    &e, "CustomResourceDefinition", LP_E_UNSUPPORTEDMEDIA,
	    "no protobuf decoding for kind \"CustomResourceDefinition\""
	    " in version \"apiextensions.k8s.io/v1\"; send it as "
	    "application/json");
}

/* A kind or version kube's scheme does not know, or a kind the endpoint
   does not serve: kube's transformDecodeError, 400. */
Test(pb, unknown_kind_or_version_is_bad_request)
{
	struct enc raw = { 0 };
	struct enc e = envelope("v1", "Lease", &raw);
	expect_message(&e, "Lease", LP_E_BADREQUEST,
		       "Lease in version \"v1\" cannot be handled as a Lease: "
		       "no kind \"Lease\" is registered for version \"v1\" in "
		       "scheme \"pkg/api/legacyscheme/scheme.go:30\"");
	raw = (struct enc){ 0 };
	e = envelope("v2", "Namespace", &raw);
	expect_error(&e, LP_E_BADREQUEST);
	raw = (struct enc){0};
	e = envelope("apps/v1", "Deployment", &raw);
	expect_message(&e, "ConfigMap", LP_E_BADREQUEST,
		       "Deployment in version \"v1\" cannot be handled as a "
		       "ConfigMap: no kind \"Deployment\" is registered for "
		       "version \"apps/v1\" in scheme "
		       "\"pkg/api/legacyscheme/scheme.go:30\"");
	raw = (struct enc){ 0 };
	e = envelope("v1beta1", "DeleteOptions", &raw);
	expect_message(&e, "DeleteOptions", LP_E_BADREQUEST,
		       "no kind \"DeleteOptions\" is registered for version "
		       "\"v1beta1\" in scheme \"k8s.io/apimachinery/pkg/apis/"
		       "meta/internalversion/scheme/register.go:28\"");
	raw = (struct enc){ 0 };
	e = envelope("v1", "Namespace\xff\"", &raw);
	expect_error(&e, LP_E_BADREQUEST);
}

/* ------------------------------------------------------------------ */
/* Malformed input                                                      */
/* ------------------------------------------------------------------ */

Test(pb, bad_magic_short_or_empty_body_is_bad_request)
{
	expect_error_kind("", 0, NULL, LP_E_BADREQUEST);
	expect_error_kind(NULL, 0, NULL, LP_E_BADREQUEST);
	expect_error_kind("k8s", 3, NULL, LP_E_BADREQUEST);
	expect_error_kind("k8s", 4, NULL, LP_E_BADREQUEST);
	expect_error_kind("k8s\x01\x0a\x00", 6, NULL, LP_E_BADREQUEST);
	expect_error_kind("{\"kind\":\"Namespace\"}", 20, NULL, LP_E_BADREQUEST);
}

/* A Namespace whose metadata carries these bytes. */
static struct enc ns_with_meta_bytes(const void *p, size_t n)
{
	struct enc raw = { 0 };
	put_bytes(&raw, 1, p, n);
	return ns_body(&raw);
}

Test(pb, truncated_varint_is_bad_request)
{
	struct enc e = ns_with_meta_bytes("\x38\x80", 2); /* generation: 0x80... */
	expect_error(&e, LP_E_BADREQUEST);
	e = ns_with_meta_bytes("\x80", 1); /* tag itself */
	expect_error(&e, LP_E_BADREQUEST);
	/* The envelope cut in the middle of the raw length. */
	struct enc raw = { 0 };
	put_meta(&raw, "x", "");
	e = ns_body(&raw);
	expect_error_kind(e.b, 7, NULL, LP_E_BADREQUEST);
	free(e.b);
}

Test(pb, overlong_varint_is_bad_request)
{
	/* 11 bytes */
	struct enc e = ns_with_meta_bytes("\x38\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12);
	expect_error(&e, LP_E_BADREQUEST);
	/* 10 bytes whose last carries more than bit 63 */
	e = ns_with_meta_bytes("\x38\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 11);
	expect_error(&e, LP_E_BADREQUEST);
	/* 10 bytes, bit 63 only: fine (generation -1) */
	e = ns_with_meta_bytes("\x38\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
			"\"metadata\":{\"generation\":-1}}");
	/* a non-minimal but short varint is accepted */
	e = ns_with_meta_bytes("\x38\x85\x80\x00", 4);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
			"\"metadata\":{\"generation\":5}}");
}

Test(pb, length_past_end_is_bad_request)
{
	struct enc e = ns_with_meta_bytes("\x0a\x05" "ab", 4);
	expect_error(&e, LP_E_BADREQUEST);
	/* nested length larger than its parent although the buffer has more */
	struct enc raw = { 0 };
	put_bytes(&raw, 1, "\x0a\x05" "ab", 4);
	put_str(&raw, 99, "padding padding");
	e = ns_body(&raw);
	expect_error(&e, LP_E_BADREQUEST);
}

Test(pb, huge_declared_lengths_are_bad_request)
{
	const char *huge[] = {
		"\x0a\xff\xff\xff\xff\x0f",			 /* 4 GiB */
		"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\x7f",	 /* 2^63 - 1 */
		"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", /* 2^64 - 1 */
	};
	const size_t n[] = { 6, 10, 11 };
	for (size_t i = 0; i < 3; i++) {
		struct enc e = ns_with_meta_bytes(huge[i], n[i]);
		expect_error(&e, LP_E_BADREQUEST);
		/* and in the envelope itself */
		struct enc env = { 0 };
		put_raw(&env, "k8s", 4);
		put_raw(&env, "\x12", 1);
		put_raw(&env, huge[i] + 1, n[i] - 1);
		expect_error(&env, LP_E_BADREQUEST);
	}
}

Test(pb, wrong_wire_type_for_known_field_is_bad_request)
{
	struct enc raw = { 0 };
	put_uint(&raw, 1, 5); /* metadata as a varint */
	struct enc e = ns_body(&raw);
	expect_error(&e, LP_E_BADREQUEST);

	e = ns_with_meta_bytes("\x08\x01", 2); /* name as a varint */
	expect_error(&e, LP_E_BADREQUEST);
	e = ns_with_meta_bytes("\x3a\x00", 2); /* generation as bytes */
	expect_error(&e, LP_E_BADREQUEST);
	e = ns_with_meta_bytes("\x0d" "abcd", 5); /* name as fixed32 */
	expect_error(&e, LP_E_BADREQUEST);
	e = ns_with_meta_bytes("\x42\x02\x0a\x00", 4); /* Timestamp.seconds as bytes */
	expect_error(&e, LP_E_BADREQUEST);
	e = ns_with_meta_bytes("\x5a\x02\x08\x01", 4); /* label entry key as varint */
	expect_error(&e, LP_E_BADREQUEST);

	struct enc env = { 0 };
	put_raw(&env, "k8s", 4);
	put_uint(&env, 2, 1); /* Unknown.raw as a varint */
	expect_error(&env, LP_E_BADREQUEST);
	put_raw(&env, "k8s", 4);
	put_raw(&env, "\x0a\x02\x08\x01", 4); /* TypeMeta.apiVersion as varint */
	expect_error(&env, LP_E_BADREQUEST);

	raw = (struct enc){ 0 };
	struct enc spec = { 0 }, p = { 0 };
	put_bytes(&p, 4, "\x12\x00", 2); /* IntOrString.intVal as bytes */
	put_msg(&spec, 1, &p);
	put_msg(&raw, 2, &spec);
	e = envelope("v1", "Service", &raw);
	expect_error(&e, LP_E_BADREQUEST);
}

Test(pb, groups_and_invalid_wire_types_are_bad_request)
{
	struct enc e = ns_with_meta_bytes("\xcb\x01\xcc\x01", 4); /* group 25 */
	expect_error(&e, LP_E_BADREQUEST);
	e = ns_with_meta_bytes("\xcc\x01", 2); /* lone end group */
	expect_error(&e, LP_E_BADREQUEST);
	e = ns_with_meta_bytes("\xce\x01\x00", 3); /* wire type 6 */
	expect_error(&e, LP_E_BADREQUEST);
	e = ns_with_meta_bytes("\xcf\x01\x00", 3); /* wire type 7 */
	expect_error(&e, LP_E_BADREQUEST);
}

Test(pb, field_number_zero_or_too_large_is_bad_request)
{
	struct enc e = ns_with_meta_bytes("\x02\x00", 2);
	expect_error(&e, LP_E_BADREQUEST);
	/* field number 2^29 */
	e = ns_with_meta_bytes("\x80\x80\x80\x80\x10\x00", 6);
	expect_error(&e, LP_E_BADREQUEST);
}

Test(pb, truncated_fixed_width_fields_are_bad_request)
{
	struct enc e = ns_with_meta_bytes("\xc9\x01" "1234567", 9);
	expect_error(&e, LP_E_BADREQUEST);
	e = ns_with_meta_bytes("\xcd\x01" "123", 5);
	expect_error(&e, LP_E_BADREQUEST);
}

Test(pb, depth_bomb_in_unknown_field_is_skipped_flat)
{
	/* 100000 nested length-delimited fields under an unknown number: the
	   decoder skips the outermost by its length and never recurses. */
	struct enc leaf = { 0 };
	put_str(&leaf, 1, "x");
	struct enc in = nest(99, 100000, &leaf);
	free(leaf.b);
	struct enc raw = { 0 };
	put_meta(&raw, "deep", "");
	put_msg(&raw, 99, &in);
	struct enc e = ns_body(&raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
			"\"metadata\":{\"name\":\"deep\"}}");
}

Test(pb, depth_bomb_through_known_fields_stops_at_the_tables)
{
	/* ownerReferences nested in ownerReferences: OwnerReference has no
	   field 13, so the inner levels are skipped, not decoded. */
	struct enc leaf = { 0 };
	put_str(&leaf, 1, "Leaf");
	struct enc in = nest(13, 10000, &leaf);
	free(leaf.b);
	struct enc raw = { 0 };
	put_msg(&raw, 1, &in);
	struct enc e = ns_body(&raw);
	expect_json(&e, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
			"\"metadata\":{\"ownerReferences\":[{}]}}");
}

Test(pb, missing_kind_without_expected_kind_is_bad_request)
{
	struct enc raw = { 0 };
	struct enc e = envelope("v1", NULL, &raw);
	expect_error(&e, LP_E_BADREQUEST);
}

/* Every prefix and many single-byte mutations of each captured body either
   decode or fail cleanly (ASan/UBSan builds check the "cleanly"). */
Test(pb, truncations_and_mutations_of_fixtures_never_crash)
{
	static const char *names[] = {
		"namespace_foo.bin", "configmap.bin", "configmap_binary.bin",
		"secret_opaque.bin", "secret_binary.bin", "serviceaccount.bin",
		"service_clusterip.bin", "service_nodeport.bin",
	};
	static const uint8_t pats[] = { 0x01, 0x07, 0x80, 0xff, 0x7f };
	unsigned n_ok = 0, n_err = 0;

	for (size_t f = 0; f < sizeof names / sizeof names[0]; f++) {
		struct enc e = fixture(names[f]);
		for (size_t cut = 0; cut <= e.len; cut++) {
			json_t *out = NULL;
			struct srv_error err = { 0 };
			lp_err rc = srv_pb_decode(e.b, cut, NULL, &out, &err);
			cr_assert(rc == LP_OK || rc == LP_E_BADREQUEST ||
					  rc == LP_E_UNSUPPORTEDMEDIA,
				  "%s cut %zu: %s", names[f], cut, lp_errname(rc));
			if (rc)
				n_err++;
			else
				n_ok++;
			json_decref(out);
		}
		for (size_t i = 0; i < e.len; i++) {
			for (size_t k = 0; k < sizeof pats; k++) {
				uint8_t *m = malloc(e.len);
				cr_assert(m);
				memcpy(m, e.b, e.len);
				m[i] ^= pats[k];
				json_t *out = NULL;
				struct srv_error err = { 0 };
				lp_err rc = srv_pb_decode(m, e.len, NULL, &out, &err);
				cr_assert(rc == LP_OK || rc == LP_E_BADREQUEST ||
						  rc == LP_E_UNSUPPORTEDMEDIA,
					  "%s byte %zu ^ %02x: %s", names[f], i,
					  pats[k], lp_errname(rc));
				if (rc == LP_OK)
					cr_assert_not_null(out);
				json_decref(out);
				free(m);
			}
		}
		free(e.b);
	}
	cr_assert(n_ok > 0 && n_err > 0);
}

/* ------------------------------------------------------------------ */
/* Out of memory                                                        */
/* ------------------------------------------------------------------ */

static long oom_left; /* jansson allocations allowed before they fail */

static void *oom_malloc(size_t n)
{
	if (oom_left-- <= 0)
		return NULL;
	return malloc(n);
}

/* Fail the Nth jansson allocation, for N = 0, 1, ... until the decode
   succeeds: every failure is NOMEM with nothing leaked (ASan build).
   Exception: jansson's JSON lexer reports some allocation failures as
   syntax errors, so inside FieldsV1 a BADREQUEST naming it is allowed. */
static void oom_loop(const struct enc *e)
{
	json_set_alloc_funcs(oom_malloc, free);
	for (long n = 0;; n++) {
		cr_assert_lt(n, 100000, "no success after %ld allocations", n);
		oom_left = n;
		json_t *out = NULL;
		struct srv_error err = { 0 };
		lp_err rc = srv_pb_decode(e->b, e->len, NULL, &out, &err);
		if (rc == LP_OK) {
			cr_assert_gt(n, 0);
			json_decref(out);
			break;
		}
		cr_assert(rc == LP_E_NOMEM ||
				  (rc == LP_E_BADREQUEST &&
				   strstr(err.message, "fieldsV1 is not valid JSON")),
			  "allocation %ld: %s (%s)", n, lp_errname(rc),
			  err.message);
		cr_assert_null(out);
	}
	json_set_alloc_funcs(malloc, free);
}

Test(pb, out_of_memory_anywhere_is_nomem_without_leaks)
{
	struct enc e = full_meta_body();
	oom_loop(&e);
	free(e.b);
	e = fixture("service_nodeport.bin");
	oom_loop(&e);
	free(e.b);
	e = fixture("secret_binary.bin");
	oom_loop(&e);
	free(e.b);
}
