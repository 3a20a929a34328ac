/*
 * yamljson.h -- YAML request and response bodies (application/yaml), with
 * libyaml, converted at the edge so the rest of the server sees JSON.
 * (Named yamljson.h, not yaml.h, so that it cannot shadow libyaml's <yaml.h>.)
 *
 * Pure, any thread.
 */
#ifndef LAPIS_YAMLJSON_H
#define LAPIS_YAMLJSON_H

#include <jansson.h>
#include <stddef.h>

#include "srv_error.h"

/*
 * Parse one YAML document into JSON as kube's sigs.k8s.io/yaml YAMLToJSON
 * does (go-yaml v2 underneath): YAML 1.1 plain scalars resolve to null,
 * true/false, integers and floats (quoted scalars stay strings; "yes"/"no"/
 * "on"/"off"/"y"/"n" resolve as booleans like go-yaml v2; an integer beyond
 * int64 becomes a real, as kube reads it; a float stays a real even when
 * integral), mappings with string keys (a non-string key is turned into its
 * string form; a key with NUL is refused, as jansson cannot hold it), merge
 * keys ("<<"), anchors and aliases expanded. A repeated mapping key keeps
 * its last value. Bounds, against "billion laughs": aliases may add at most
 * 1,000,000 nodes and 16 MiB of scalar text and no more than go-yaml's alias
 * ratio ("document contains excessive aliasing"); nesting deeper than 1000
 * is refused. Empty input is JSON null. Only the first document is read,
 * as go-yaml v2 reads it (kube ignores the others; an empty first
 * document is null). JSON is YAML: JSON input works.
 * Errors: LP_E_BADREQUEST with go-yaml's message ("yaml: line N: ...", the
 * text kube puts in its 400; where go-yaml gives no line, e.g. an unknown
 * anchor, we add one); LP_E_NOMEM. *out new, written only on success.
 */
lp_err srv_yaml_to_json(const char *buf, size_t len, json_t **out,
			struct srv_error *err);

/*
 * srv_yaml_to_json, and also refuse repeated mapping keys, as kube's strict
 * decoding (sigs.k8s.io/yaml YAMLToJSONStrict, go-yaml v2 UnmarshalStrict)
 * does for fieldValidation=Strict and reports as a warning for Warn: the
 * message is "yaml: unmarshal errors:\n  line N: key \"k\" already set in
 * map" (one line per repeat; like go-yaml v2, a key that overrides one
 * brought in by a merge key counts as a repeat). Same errors otherwise.
 */
lp_err srv_yaml_to_json_strict(const char *buf, size_t len, json_t **out,
			       struct srv_error *err);

/*
 * Emit a JSON value as block-style YAML the way kube does (sigs.k8s.io/yaml
 * JSONToYAML, go-yaml v2): keys sorted in go-yaml's order (digit runs compare
 * as numbers), 2-space indent, list items at their parent key's indent,
 * strings quoted when they would otherwise read as another type or contain
 * special characters, multi-line strings as literal blocks, long plain
 * strings folded at 80 columns. Unlike kube, reals always read back as reals
 * (1.0, not 1) and a key "<<" is quoted (kube's reads back as a merge key),
 * so srv_yaml_to_json gives doc back. doc is only read; it must be acyclic
 * and hold valid UTF-8 (jansson's checked setters ensure that). Returns a
 * malloc'd NUL-terminated buffer and its length in *len, or NULL on
 * out-of-memory (or a string that is not UTF-8).
 */
char *srv_json_to_yaml(const json_t *doc, size_t *len);

#endif
