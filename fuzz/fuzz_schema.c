/*
 * fuzz_schema.c -- custom resources against CRD schemas (issue 6, harness
 * 7): srv_schema_prune, srv_schema_default and srv_schema_validate on
 * arbitrary objects.
 *
 * The schemas are compiled once per process (kept on purpose): a built-in
 * one exercising every keyword, plus the CRDs of shared/testdata/crds when
 * that folder is beside the repository. The first input byte picks the
 * schema; the rest is a JSON document (non-objects are wrapped as
 * {"spec": <value>}).
 *
 * Invariants:
 *   1. No crash, leak or undefined behaviour; validation returns LP_OK or
 *      LP_E_INVALID with at least one cause.
 *   2. Pruning is idempotent: a second prune drops nothing more.
 *   3. Defaulting is idempotent (after pruning).
 *   4. A valid object stays valid after pruning and defaulting again.
 *   5. (retired with srv_schema_rule_applies: see 8)
 *   6. srv_re2_error on a string input (Go's regexp syntax check of a CRD
 *      pattern) answers in Go's form when it refuses.
 *   7. A string input that parses as an IP (kube's sloppy reading) prints
 *      canonically as an address that parses to the same bytes, strictly;
 *      the IP and CIDR warnings never fail on any string.
 *   8. The x-kubernetes-validations rules (srv_schema_check_rules, CEL)
 *      run on any object, as a create and as an update from itself,
 *      and answer LP_OK or LP_E_NOMEM.
 *   9. Every string format's checker (srv_schema_format_valid) takes a
 *      string input without a crash or undefined behaviour.
 */
#include <dirent.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ipaddr.h"
#include "schema.h"
#include "yamljson.h"

#define MAX_SCHEMAS 64

static struct srv_schema *schemas[MAX_SCHEMAS];
static size_t n_schemas;

static const char builtin_schema[] =
	"{\"type\":\"object\",\"x-kubernetes-validations\":[{\"rule\":\"has(self.spec)\"}],"
	"\"properties\":{\"spec\":{\"type\":\"object\","
	"\"required\":[\"size\"],\"properties\":{"
	"\"size\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":10},"
	"\"mode\":{\"type\":\"string\",\"enum\":[\"a\",\"b\"],\"default\":\"a\"},"
	"\"name\":{\"type\":\"string\",\"pattern\":\"^[a-z]+$\",\"maxLength\":8},"
	"\"when\":{\"type\":\"string\",\"format\":\"date-time\"},"
	"\"ip\":{\"type\":\"string\",\"format\":\"ipv4\"},"
	"\"port\":{\"x-kubernetes-int-or-string\":true},"
	"\"tags\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"set\","
	"\"items\":{\"type\":\"string\",\"x-kubernetes-validations\":"
	"[{\"rule\":\"self != ''\"}]},\"maxItems\":4},"
	"\"ports\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
	"\"x-kubernetes-list-map-keys\":[\"port\"],\"items\":{\"type\":\"object\","
	"\"required\":[\"port\"],\"properties\":{\"port\":{\"type\":\"integer\"},"
	"\"proto\":{\"type\":\"string\",\"default\":\"TCP\"}}}},"
	"\"labels\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\","
	"\"x-kubernetes-validations\":[{\"rule\":\"size(self) < 9\"}]}},"
	"\"free\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true},"
	"\"opt\":{\"type\":\"string\",\"nullable\":true},"
	"\"one\":{\"oneOf\":[{\"required\":[\"x\"]},{\"required\":[\"y\"]}],"
	"\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"integer\"},"
	"\"y\":{\"type\":\"integer\"}}}}},"
	"\"status\":{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"number\","
	"\"default\":1.5}}}}}";

static void add_schema(const json_t *s)
{
	struct srv_error err = {0};
	if (n_schemas < MAX_SCHEMAS &&
	    srv_schema_compile(s, &schemas[n_schemas], &err) == LP_OK)
		n_schemas++;
}

/* Every version schema of every CRD document in a YAML file. */
static void load_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char chunk[8192];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		fwrite(chunk, 1, n, m);
	fclose(f);
	fclose(m);
	/* split on "---" lines */
	char *doc = buf;
	for (;;) {
		char *sep = strstr(doc, "\n---");
		if (sep)
			*sep = 0;
		json_t *o = NULL;
		struct srv_error err = {0};
		if (srv_yaml_to_json(doc, strlen(doc), &o, &err) == LP_OK &&
		    json_is_object(o)) {
			size_t i;
			json_t *v;
			json_array_foreach(json_object_get(json_object_get(o, "spec"),
							   "versions"),
					   i, v)
				add_schema(json_object_get(json_object_get(v, "schema"),
							   "openAPIV3Schema"));
		}
		json_decref(o);
		if (!sep)
			break;
		doc = sep + 4;
	}
	free(buf);
}

static void load_dir(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) && n_schemas < MAX_SCHEMAS) {
		if (e->d_name[0] == '.')
			continue;
		char p[1024];
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		size_t l = strlen(e->d_name);
		if (depth < 2 && e->d_type == DT_DIR && strcmp(e->d_name, "examples") &&
		    strcmp(e->d_name, "invalid") && strcmp(e->d_name, "expected"))
			load_dir(p, depth + 1);
		else if (l > 5 && !strcmp(e->d_name + l - 5, ".yaml"))
			load_file(p);
	}
	closedir(d);
}

static void free_schemas(void)
{
	for (size_t i = 0; i < n_schemas; i++)
		srv_schema_free(schemas[i]);
	n_schemas = 0;
}

static void init_once(void)
{
	if (n_schemas)
		return;
	json_t *b = json_loads(builtin_schema, 0, NULL);
	FUZZ_CHECK(b != NULL, "built-in schema parses");
	add_schema(b);
	json_decref(b);
	FUZZ_CHECK(n_schemas == 1, "built-in schema compiles");
	/* fuzz/ -> repository -> its parent holds shared/ */
	char dir[1024];
	snprintf(dir, sizeof dir, "%s", __FILE__);
	char *slash = strrchr(dir, '/');
	if (slash) {
		*slash = 0;
		strncat(dir, "/../../shared/testdata/crds", sizeof dir - strlen(dir) - 1);
		load_dir(dir, 0);
	}
	atexit(free_schemas);
}

static void count_unknown(void *ud, const char *path, bool embedded_meta)
{
	(void)path;
	(void)embedded_meta;
	(*(int *)ud)++;
}

static void count_warning(void *ud, const char *text)
{
	FUZZ_CHECK(text[0], "an empty warning");
	(*(int *)ud)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	init_once();
	if (size < 1)
		return 0;
	const struct srv_schema *s = schemas[data[0] % n_schemas];
	json_t *o =
	    json_loadb((const char *)data + 1, size - 1, JSON_ALLOW_NUL, NULL);
	if (!o)
		return 0;
	if (json_is_string(o)) {
		const char *pat = json_string_value(o);
		size_t n = strlen(pat) + 100; /* the message quotes a part */
		char *m = malloc(n);
		if (m && srv_re2_error(pat, m, n))
			FUZZ_CHECK(!strncmp(m, "error parsing regexp: ", 22) &&
					   m[strlen(m) - 1] == '`',
				   "re2: %s", m);
		free(m);
		struct srv_ip ip, again;
		if (srv_ip_parse(pat, &ip)) {
			char canon[SRV_IP_TEXT];
			srv_ip_string(&ip, canon);
			FUZZ_CHECK(srv_ip_parse(canon, &again) && again.strict &&
					   !memcmp(ip.b, again.b, 16),
				   "ip %s prints as %s", pat, canon);
		}
		int nw = 0;
		srv_ip_warnings("f", pat, count_warning, &nw);
		srv_cidr_warnings("f", pat, count_warning, &nw);
		/* 9: every string format's checker takes any string */
		static const char *const formats[] = {
		    "byte",	"date",	   "date-time", "uuid",	 "uuid3",
		    "uuid4",	"uuid5",   "ipv4",	"ipv6",	 "cidr",
		    "hostname", "email",   "uri",	"mac",	 "hexcolor",
		    "duration", "ssn",	   "rgbcolor",	"isbn",	 "creditcard",
		    "bsonobjectid"};
		for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
			(void)srv_schema_format_valid(formats[i], pat);
	}
	if (!json_is_object(o)) {
		json_t *w = json_object();
		json_object_set_new(w, "spec", o);
		o = w;
	}
	srv_schema_prune(s, o, NULL, NULL);
	int again = 0;
	srv_schema_prune(s, o, count_unknown, &again);
	FUZZ_CHECK(again == 0, "a second prune dropped %d more fields", again);
	srv_schema_default(s, o);
	json_t *once = json_deep_copy(o);
	srv_schema_default(s, o);
	FUZZ_CHECK(json_equal(once, o), "defaulting is not idempotent");
	struct srv_error err = {0};
	lp_err rc = srv_schema_validate(s, o, &err);
	FUZZ_CHECK(rc == LP_OK || (rc == LP_E_INVALID && err.n_causes > 0) ||
			   rc == LP_E_NOMEM,
		   "validate: %s with %d causes", lp_errname(rc), err.n_causes);
	/* 8. */
	struct srv_error cerr = {0}, uerr = {0};
	int nw8 = 0;
	lp_err crc =
	    srv_schema_check_rules(s, o, NULL, &cerr, count_warning, &nw8);
	FUZZ_CHECK(crc == LP_OK || crc == LP_E_NOMEM, "rules: %s",
		   lp_errname(crc));
	crc = srv_schema_check_rules(s, o, once, &uerr, count_warning, &nw8);
	FUZZ_CHECK(crc == LP_OK || crc == LP_E_NOMEM, "rules on update: %s",
		   lp_errname(crc));
	if (rc == LP_OK) {
		srv_schema_prune(s, o, NULL, NULL);
		srv_schema_default(s, o);
		struct srv_error err2 = {0};
		FUZZ_CHECK(
		    srv_schema_validate(s, o, &err2) == LP_OK,
		    "a valid object became invalid after prune+default: %s",
		    err2.n_causes ? srv_cause_get(&err2, 0).message : "");
	}
	json_decref(once);
	json_decref(o);
	return 0;
}
