#!/usr/bin/env bash
# apply.sh -- server-side apply and metadata.managedFields end to end: curl
# for kube's exact shapes (codes, messages, causes, field sets), then the
# real kubectl (apply --server-side, conflicts, --force-conflicts, the
# upgrade from client-side apply, a CRD over the annotation limit, custom
# resources with map and set lists, the status subresource).
set -uo pipefail
. "$(dirname "$0")/lib.bash"
e2e_init apply

DATA=$WORK/data
serve_lapis serve "$DATA" --insecure-http
check "server starts" [ -n "$URL" ]

apply() { req PATCH "$1" "$2" application/apply-patch+yaml; }
py() { python3 -c "import json; d=json.load(open('$WORK/body')); $1"; }
# mf MANAGER OPERATION: that entry's fieldsV1, compact with sorted keys
mf() {
	python3 -c "
import json
d = json.load(open('$WORK/body'))
for e in d['metadata'].get('managedFields', []):
    if e['manager'] == '$1' and e['operation'] == '$2':
        print(json.dumps(e['fieldsV1'], sort_keys=True, separators=(',', ':')))"
}
mf_is() {
	local got
	got=$(mf "$1" "$2")
	[[ $got == "$3" ]] || { echo "#   $1/$2 owns $got"; return 1; }
}
# err_all RE...: kubectl's stderr matches every extended regex
err_all() {
	local p
	for p; do grep -Eq -- "$p" "$WORK/err" || return 1; done
}
msg_is() {
	local got
	got=$(py "print(d['message'])")
	[[ $got == "$1" ]] || { echo "#   message: $got"; return 1; }
}
rv() { py "print(d['metadata']['resourceVersion'])"; }

CMP=/api/v1/namespaces/default/configmaps

# --- apply creates, re-applies, removes what it no longer applies
apply "$CMP/s1?fieldManager=m1" $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s1\n  labels: {x: "1"}\ndata: {a: "1", b: "2"}\n'
check "apply of a missing object creates it (201)" code_has 201 '"data":{"a":"1","b":"2"}'
check "... with the manager's Apply entry" py "e=d['metadata']['managedFields'][0]; assert (e['manager'],e['operation'],e['apiVersion'],e['fieldsType'])==('m1','Apply','v1','FieldsV1'), e; assert e['time'].endswith('Z')"
check "... owning the applied fields (no '.' for maps)" mf_is m1 Apply '{"f:data":{"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:x":{}}}}'
RV=$(rv)
apply "$CMP/s1?fieldManager=m1" $'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s1, labels: {x: "1"}}\ndata: {a: "1", b: "2"}\n'
check "the same apply again is 200" code_is 200
check "... and writes nothing" [ "$(rv)" == "$RV" ]
apply "$CMP/s1?fieldManager=m1" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s1"},"data":{"a":"1"}}'
check "an apply without data.b and the label (JSON is YAML) is 200" code_is 200
check "... removes what the manager no longer applies" py "assert d['data']=={'a':'1'}, d['data']; assert 'x' not in d['metadata'].get('labels',{})"
check "... and owns what it applies now" mf_is m1 Apply '{"f:data":{"f:a":{}}}'

# the field manager converts a built-in's merged object to its Go type
# with the unstructured converter (toVersioned), not encoding/json
SVC=/api/v1/namespaces/default/services
apply "$SVC/fl1?fieldManager=py" '{"apiVersion":"v1","kind":"Service","metadata":{"name":"fl1"},"spec":{"ports":[{"port":80.0,"protocol":"TCP"}]}}'
check "an integral float for an int32 (Python's json.dumps(80.0)) is the integer" code_has 201 '"port":80,'
LEA=/apis/coordination.k8s.io/v1/namespaces/default/leases
apply "$LEA/fl2?fieldManager=m" '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"fl2"},"spec":{"leaseDurationSeconds":4294967297}}'
check "an int32 past its range keeps its low 32 bits, as Go's conversion does" code_has 201 '"leaseDurationSeconds":1}'
apply "$LEA/fl3?fieldManager=m" $'apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: fl3, namespace: default}\nspec: {renewTime: "2026-01-01T00:00:00.123Z"}\n'
check "a value the converter refuses (a MicroTime of a JavaScript Date) is kube's 500 without a reason" code_has 500 '"message":"failed to convert new object (default/fl3; coordination.k8s.io/v1, Kind=Lease) to proper version: unable to convert unstructured object to coordination.k8s.io/v1, Kind=Lease: parsing time \"2026-01-01T00:00:00.123Z\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \".123Z\" as \".000000\""'
check "... (no reason)" py "assert 'reason' not in d, d"

apply "$CMP/s9?fieldManager=m1" $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s9\n  uid: 11111111-1111-1111-1111-111111111111\n'
check "an apply naming a uid does not create the missing object: 409" code_has 409 '"reason":"Conflict"' '"details":{"name":"s9","kind":"configmaps"}'
check "... with kube's message" msg_is 'Operation cannot be fulfilled on configmaps "s9": uid mismatch: the provided object specified uid 11111111-1111-1111-1111-111111111111, and no existing object was found'
req GET "$CMP/s9"
check "... and nothing was created" code_is 404

# structured-merge-diff's typed conversion of the configuration comes
# first, whatever fieldValidation says (kubernetes#122480)
apply "$CMP/s10?fieldManager=m1&fieldValidation=Ignore" $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s10\nbogus: 1\ndata: {a: "1"}\n'
check "an apply with a field ConfigMap does not have is kube's 500, under Ignore too" code_is 500
check "... its typed conversion's words" msg_is 'failed to create typed patch object (/s10; /v1, Kind=ConfigMap): .bogus: field not declared in schema'
check "... a plain error: no reason" python3 -c "import json; d=json.load(open('$WORK/body')); assert 'reason' not in d and 'details' not in d, d"
req GET "$CMP/s10"
check "... and nothing was created" code_is 404
apply "$CMP/s10?fieldManager=m1" $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s10\n  labels: {a: 1}\ndata:\n  b: true\n  c: [x]\n  d: 1000000\n  e: {k: [1.5, "s", null]}\nimmutable: "yes"\n'
check "values of the wrong type: every error, as structured-merge-diff lists them" msg_is 'failed to create typed patch object (/s10; /v1, Kind=ConfigMap): errors:
  .data.b: expected string, got &value.valueUnstructured{Value:true}
  .data.c: expected string, got &value.valueUnstructured{Value:[]interface {}{"x"}}
  .data.d: expected string, got &value.valueUnstructured{Value:1e+06}
  .data.e: expected string, got &value.valueUnstructured{Value:map[string]interface {}{"k":[]interface {}{1.5, "s", interface {}(nil)}}}
  .immutable: expected boolean, got &{yes}
  .metadata.labels.a: expected string, got &value.valueUnstructured{Value:1}'
apply "$CMP/s10?fieldManager=m1" $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s10\n  finalizers: [a/b, [x]]\n  ownerReferences: [{apiVersion: v1, kind: K, name: n}]\n'
check "a set item that is a list stops the set's walk" msg_is 'failed to create typed patch object (/s10; /v1, Kind=ConfigMap): errors:
  .metadata.finalizers: element 1: not supported: associative list with lists as elements
  .metadata.ownerReferences: element 0: associative list with keys has an element that omits key field "uid" (and doesn'"'"'t have default value)'
apply "/api/v1/namespaces/default/services/s10?fieldManager=m1" $'apiVersion: v1\nkind: Service\nmetadata: {name: s10}\nspec:\n  ports: [{port: 80, targetPort: {a: 1}}, {port: 80, protocol: TCP}, 7]\n  selector: {app: [x]}\n'
check "a keyed list: items by their keys (protocol defaulted), duplicates, an item that is no map ends it" msg_is 'failed to create typed patch object (/s10; /v1, Kind=Service): errors:
  .spec.ports[port=80,protocol="TCP"].targetPort: expected any scalar, got &{map[a:1]}
  .spec.ports: duplicate entries for key [port=80,protocol="TCP"]
  .spec.ports: element 2: associative list with keys may not have non-map elements
  .spec.selector.app: expected string, got &value.valueUnstructured{Value:[]interface {}{"x"}}'
apply "$CMP/s10?fieldManager=m1" $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s10\n  creationTimestamp: null\n  labels: null\ndata: {a: "1"}\nbinaryData: null\n'
check "nulls are every type's value" code_has 201 '"data":{"a":"1"}'

# --- updates take fields; conflicts; force
req POST "$CMP?fieldManager=creator" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s2","labels":{"l":"v"}},"data":{"c":"1","d":"2"}}'
check "a create records an Update entry" code_is 201
check "... owning the fields with '.' on the maps it made" mf_is creator Update '{"f:data":{".":{},"f:c":{},"f:d":{}},"f:metadata":{"f:labels":{".":{},"f:l":{}}}}'
apply "$CMP/s2?fieldManager=m1" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s2"},"data":{"c":"9"}}'
check "apply changing a field another manager set is 409" code_has 409 '"reason":"Conflict"'
check "... with kube's message" msg_is 'Apply failed with 1 conflict: conflict with "creator" using v1: .data.c'
check "... and a FieldManagerConflict cause" py "c=d['details']['causes']; assert c==[{'reason':'FieldManagerConflict','message':'conflict with \"creator\" using v1','field':'.data.c'}], c"
apply "$CMP/s2?fieldManager=m1" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s2"},"data":{"c":"9","d":"8"}}'
check "two conflicts are listed by manager" msg_is $'Apply failed with 2 conflicts: conflicts with "creator" using v1:\n- .data.c\n- .data.d'
req GET "$CMP/s2"
check "... and nothing was written" py "assert d['data']=={'c':'1','d':'2'}"
apply "$CMP/s2?fieldManager=m1" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s2"},"data":{"d":"2"}}'
check "applying the value another manager set shares it (200)" code_is 200
check "... m1 owns .data.d" mf_is m1 Apply '{"f:data":{"f:d":{}}}'
check "... creator still owns it" mf_is creator Update '{"f:data":{".":{},"f:c":{},"f:d":{}},"f:metadata":{"f:labels":{".":{},"f:l":{}}}}'
apply "$CMP/s2?fieldManager=m1&force=true" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s2"},"data":{"c":"9","d":"2"}}'
check "force takes the field over (200)" code_has 200 '"c":"9"'
check "... from the other manager" mf_is creator Update '{"f:data":{".":{},"f:d":{}},"f:metadata":{"f:labels":{".":{},"f:l":{}}}}'
req PATCH "$CMP/s2?fieldManager=patcher" '{"data":{"c":"7"}}' application/merge-patch+json
check "a merge patch takes what it changes" mf_is patcher Update '{"f:data":{"f:c":{}}}'
check "... from the applier" mf_is m1 Apply '{"f:data":{"f:d":{}}}'
req PATCH "$CMP/s2" '{"data":{"e":"1"}}' application/merge-patch+json
ua_owns() { mf lapis-e2e Update | grep -qF '"f:e"'; }
check "without fieldManager the User-Agent names the manager" ua_owns
# kube's applyPatcher decodes the body strictly once the apply merged: a
# repeated key is its 400 under Strict, a Warning under Warn (the default),
# nothing under Ignore
DUPS=$'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dups\ndata:\n  a: "1"\n  a: "2"\n'
apply "$CMP/dups?fieldManager=m&fieldValidation=Strict" "$DUPS"
check "an apply with a repeated key under Strict is 400" code_has 400 '"message":"error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key \"a\" already set in map"'
req GET "$CMP/dups"
check "... and creates nothing" code_is 404
dup_warn() { # QUERY -> the Warning headers of the apply
	curl -sS -o /dev/null -D - -X PATCH -H 'Content-Type: application/apply-patch+yaml' \
		--data-binary "$DUPS" "$URL$CMP/dups?fieldManager=m$1" | grep -i '^warning:' | tr -d '\r'
}
check "... under Warn (the default) it applies with one Warning per repeat" \
	[ "$(dup_warn '')" = 'Warning: 299 - "line 7: key \"a\" already set in map"' ]
check "... under Ignore without one" [ -z "$(dup_warn '&fieldValidation=Ignore')" ]

# the manager is always UTF-8 (jansson refused it: the entry was stored
# without one): the User-Agent's characters whole, up to 128 bytes, and a
# byte of fieldManager that starts no character as U+FFFD, as kube's JSON
mgrs() { # URL USER-AGENT -> the managers of the created object
	curl -sS -X POST -H 'Content-Type: application/json' -H "User-Agent: $2" \
		-d '{"metadata":{"generateName":"ua-"},"data":{"x":"y"}}' "$URL$1" |
		python3 -c 'import json,sys; print(json.dumps([e.get("manager") for e in json.load(sys.stdin)["metadata"]["managedFields"]]))'
}
X127=$(printf 'x%.0s' $(seq 127))
check "a User-Agent whose 128th byte starts a 2-byte character stops before it" \
	[ "$(mgrs /api/v1/namespaces/default/configmaps "${X127}é/1.0")" = "[\"$X127\"]" ]
check "... bytes that are no UTF-8 become U+FFFD" \
	[ "$(mgrs /api/v1/namespaces/default/configmaps $'a\xffb/1.0')" = '["a\ufffdb"]' ]
check "... unprintable characters go (U+200B)" \
	[ "$(mgrs /api/v1/namespaces/default/configmaps $'a\xe2\x80\x8bb/1.0')" = '["ab"]' ]
check "a fieldManager byte that is no UTF-8 is U+FFFD" \
	[ "$(mgrs '/api/v1/namespaces/default/configmaps?fieldManager=m%FF' curl)" = '["m\ufffd"]' ]
req GET "$CMP/s2"
RV=$(rv)
req PUT "$CMP/s2" "$(cat "$WORK/body")"
same_rv() { code_is 200 && [[ $(rv) == "$RV" ]]; }
check "a PUT sending back the same object writes nothing" same_rv
req PUT "$CMP/s2" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s2","managedFields":[{"manager":"x","operation":"Bogus","fieldsType":"FieldsV2"}]},"data":{"c":"7"}}'
check "managedFields that do not decode leave the stored ones (kube's decodeLiveOrNew)" py "
ms = {m['manager'] for m in d['metadata']['managedFields']}; assert 'creator' in ms and 'x' not in ms, ms"
req PUT "$CMP/s2" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s2","managedFields":[{"manager":"x\u0001","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1"}]},"data":{"c":"7"}}'
check "... one that decodes but fails validation is 422 on its field" code_has 422 '"field":"metadata.managedFields[0].manager"'
# kubectl's server-side apply keeps the client-side annotation in step
# when the object it makes has one (lastAppliedUpdater asks the result, so
# an apply-create carrying it rebuilds it), and drops it when the
# annotations would pass 256 KiB (SetLastApplied)
apply "$CMP/la1?fieldManager=kubectl" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"la1","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"nonempty"}},"data":{"k":"v"}}'
check "an apply-create by kubectl rebuilds the last-applied annotation from the configuration" py "
la = d['metadata']['annotations']['kubectl.kubernetes.io/last-applied-configuration']
assert json.loads(la) == {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'la1', 'annotations': {}}, 'data': {'k': 'v'}}, la"
apply "$CMP/la2?fieldManager=kubectl" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"la2","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"nonempty"}},"data":{"k":"<a&b>"}}'
check "... written as Go's json.Encoder writes it: keys sorted, <, > and & escaped, a newline at the end" py "
la = d['metadata']['annotations']['kubectl.kubernetes.io/last-applied-configuration']
assert la == '{\"apiVersion\":\"v1\",\"data\":{\"k\":\"\\\\u003ca\\\\u0026b\\\\u003e\"},\"kind\":\"ConfigMap\",\"metadata\":{\"annotations\":{},\"name\":\"la2\"}}\\n', la"
python3 -c "import json; print(json.dumps({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'la1', 'annotations': {'big': 'x' * 200000, 'kubectl.kubernetes.io/last-applied-configuration': 'nonempty'}}, 'data': {'k': 'v'}}))" >"$WORK/la.json"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X PATCH -H 'Content-Type: application/apply-patch+yaml' --data-binary @"$WORK/la.json" "$URL$CMP/la1?fieldManager=kubectl")
check "... and drops it when the annotations would pass 256 KiB, the apply going through" py "
a = d['metadata']['annotations']
assert 'kubectl.kubernetes.io/last-applied-configuration' not in a and len(a['big']) == 200000, list(a)"
# kube's managed-fields details, from its apply integration tests:
# managedFields: [] resets them as [{}] does (isResetManagedFields); a
# client's two entries of one identity are one, the later
# (decodeManagedFields); a label set through /status is that manager's
# (only spec is a status strategy's reset field); a no-op apply whose
# merge differs until the object is normalised or defaulted keeps the
# revision and the times (IgnoreManagedFieldsTimestampsTransformer)
apply "$CMP/r1?fieldManager=one" $'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: r1, labels: {a: b}}\n'
req PUT "$CMP/r1?fieldManager=two" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"r1","managedFields":[],"labels":{"a":"b"}}}'
check "managedFields [] resets them too" py "assert 'managedFields' not in d['metadata'], d['metadata']"
apply "$CMP/r2?fieldManager=one" $'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: r2, labels: {a: one}}\n'
apply "$CMP/r2?fieldManager=two" $'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: r2, labels: {b: two}}\n'
req GET "$CMP/r2"
req PUT "$CMP/r2" "$(py "
for e in d['metadata']['managedFields']: e['manager'] = 'multi'
print(json.dumps(d))")"
check "a client's two entries renamed to one manager are one, the later" py "
m = d['metadata']['managedFields']
assert [(e['manager'], e['fieldsV1']) for e in m] == [('multi', {'f:metadata': {'f:labels': {'f:b': {}}}})], m"
SV=/api/v1/namespaces/default/services
apply "$SV/r3?fieldManager=first" '{"apiVersion":"v1","kind":"Service","metadata":{"name":"r3"},"spec":{"ports":[{"port":80}]}}'
apply "$SV/r3/status?fieldManager=labeler" '{"apiVersion":"v1","kind":"Service","metadata":{"name":"r3","labels":{"b":"two"}}}'
check "a label applied through /status is its manager's, for the subresource" py "
e = [m for m in d['metadata']['managedFields'] if m['manager'] == 'labeler']
assert d['metadata']['labels'] == {'b': 'two'} and len(e) == 1 and e[0]['subresource'] == 'status' and e[0]['fieldsV1'] == {'f:metadata': {'f:labels': {'f:b': {}}}}, e"
apply "$CMP/r4?fieldManager=one" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"r4","annotations":{}},"data":{"k":"v"}}'
RV=$(rv)
T=$(py "print(d['metadata']['managedFields'][0]['time'])")
sleep 1.1
apply "$CMP/r4?fieldManager=one" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"r4","annotations":{}},"data":{"k":"v"}}'
check "a no-op apply holding an empty map keeps the revision and the time" py "assert d['metadata']['resourceVersion'] == '$RV' and d['metadata']['managedFields'][0]['time'] == '$T', d['metadata']"
req PUT "$CMP/s2" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s2","managedFields":[{}]},"data":{"c":"7"}}'
check "managedFields [{}] clears them" py "assert 'managedFields' not in d['metadata'], d['metadata']"
req PUT "$CMP/s2" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s2","managedFields":[{}]},"data":{"c":"7","d":"8"}}'
check "... and the update is not tracked (kube's skipNonAppliedManager)" py "assert 'managedFields' not in d['metadata'], d['metadata']"
req PATCH "$CMP/s2?fieldManager=later" '{"data":{"e":"9"}}' application/merge-patch+json
check "... nor any later update" py "assert 'managedFields' not in d['metadata'], d['metadata']"
apply "$CMP/s2?fieldManager=first" $'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s2}\ndata: {c: "0"}\n'
check "the first apply conflicts with before-first-apply, which holds what the object had" code_has 409 'Apply failed with 1 conflict: conflict with \"before-first-apply\" using v1: .data.c'
apply "$CMP/s2?fieldManager=first&force=true" $'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s2}\ndata: {c: "0"}\n'
check "... forced, it takes the field and tracking starts again" py "
m = {e['manager']: e for e in d['metadata']['managedFields']}
assert m['first']['fieldsV1'] == {'f:data': {'f:c': {}}}, m
b = m['before-first-apply']; assert b['operation'] == 'Update' and b['fieldsV1'] == {'f:data': {'.': {}, 'f:d': {}, 'f:e': {}}}, b"

apply "$CMP/c0?fieldManager=first" $'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c0}\ndata: {a: "1"}\n'
apply "$CMP/c0?fieldManager=newm" $'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c0}\ndata: {a: "1"}\n'
check "a manager applying what is there already shares it, its entry without a time (the object did not change)" py "
m = {e['manager']: e for e in d['metadata']['managedFields']}
assert 'time' not in m['newm'] and 'time' in m['first'], m
assert d['metadata']['managedFields'][0]['manager'] == 'newm', 'an entry without a time sorts first among the Apply ones'"
req GET /api/v1/namespaces/default
check "the namespaces the server creates are kube-apiserver's Update, as kube's controller writes them" py "
e = d['metadata']['managedFields']; assert [(x['manager'], x['operation']) for x in e] == [('kube-apiserver', 'Update')], e
assert e[0]['fieldsV1'] == {'f:metadata': {'f:labels': {'.': {}, 'f:kubernetes.io/metadata.name': {}}}}, e"
req PATCH '/api/v1/namespaces/default?fieldManager=labeler' '{"metadata":{"labels":{"team":"a"}}}' application/merge-patch+json
check "... so an update of one is tracked" py "
assert 'labeler' in [x['manager'] for x in d['metadata']['managedFields']], d['metadata']"
req GET /api/v1/namespaces/default/services/kubernetes
check "... as is the kubernetes Service" py "
assert [x['manager'] for x in d['metadata']['managedFields']] == ['kube-apiserver'], d['metadata']"
# a list an update left with a repeated item (finalizers are a set):
# structured-merge-diff owns the repeated key as one leaf and the rest
# item by item, so another applier's member is no conflict and every copy
# stays; taken whole, the list conflicted, and forced lost x/x and x/y
req PUT "$CMP/s2?fieldManager=u" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s2","finalizers":["x/x","x/x","x/y"]}}'
check "an update may repeat a finalizer" code_is 200
check "... its manager owns the repeated one as a leaf, the other as an item" mf_is u Update '{"f:metadata":{"f:finalizers":{".":{},"v:\"x/x\"":{},"v:\"x/y\"":{}}}}'
apply "$CMP/s2?fieldManager=fin" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s2","finalizers":["x/z"]}}'
check "another applier's finalizer beside it is no conflict, and every copy stays" code_has 200 '"finalizers":["x/x","x/x","x/y","x/z"]'
apply "$CMP/s2?fieldManager=fin" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s2","finalizers":["x/z","x/x"]}}'
check "... applying the repeated one conflicts on that item alone" code_has 409 'conflict with \"u\" using v1: .metadata.finalizers[=\"x/x\"]'
req PATCH "$CMP/s2" '{"metadata":{"finalizers":null}}' application/merge-patch+json
check "... (finalizers cleared)" code_is 200

# --- options and bad configurations
req PATCH "$CMP/s2?force=true" '{"data":{"c":"1"}}' application/merge-patch+json
check "force on a non-apply patch is 422" code_is 422
check "... with kube's message" msg_is 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch'
LONG=$(printf 'm%.0s' {1..129})
req POST "$CMP?fieldManager=$LONG" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s3"}}'
check "a fieldManager over 128 bytes is 422" code_is 422
check "... with kube's message" msg_is 'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes'
# kube's ValidateFieldManager: one cause per character unicode.IsPrint
# refuses (U+200B too, which lapis took), the value quoted as Go's %q
req POST "$CMP?fieldManager=a%01b%E2%80%8Bc" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s3"}}'
check "a fieldManager with unprintable characters is 422, one cause each" msg_is 'CreateOptions.meta.k8s.io "" is invalid: [fieldManager: Invalid value: "a\x01b\u200bc": invalid character U+0001 (at position 1), fieldManager: Invalid value: "a\x01b\u200bc": invalid character U+200B (at position 3)]'
req POST "$CMP?fieldManager=$LONG%E2%80%8B" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s3"}}'
check "... too long and unprintable: both causes" py "
c = [x['message'] for x in d['details']['causes']]
assert c == ['Too long: may not be more than 128 bytes', 'Invalid value: \"$LONG\\\\u200b\": invalid character U+200B (at position 129)'], c"
req POST "$CMP" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s3","managedFields":[{"manager":"x\u200b","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}}]},"data":{"a":"1"}}'
check "a managedFields manager with U+200B is 422 on its field" code_has 422 '"field":"metadata.managedFields[0].manager"' 'invalid character U+200B (at position 1)'
apply "$CMP/s3?fieldManager=m1" '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s3"}}'
check "an apply of another kind is 400" code_is 400
check "... invalid object type" msg_is 'invalid object type: /v1, Kind=Secret'
apply "$CMP/s3?fieldManager=m1" 'null'
check "an apply of null is an empty map to kube: no kind, invalid object type" code_is 400
check "... /, Kind=" msg_is 'invalid object type: /, Kind='
apply "$CMP/s3?fieldManager=m1" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other"}}'
check "an apply naming another object is 400" code_has 400 'does not match the name on the URL'
apply /api/v1/namespaces/default/configmaps/noname?fieldManager=m1 $'apiVersion: v1\nkind: ConfigMap\ndata: {a: "1"}\n'
check "an apply creating an object from a configuration without a name is 400 (kube's checkName)" code_has 400 'the name of the object (noname based on URL) was undeterminable: name must be provided'
apply /api/v1/namespaces/default/configmaps/md1?fieldManager=m1 $'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: md1}\ndata: {a: "1"}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: md2}\n'
check "an apply of two YAML documents takes the first (go-yaml v2 reads no further)" code_has 201 '"name":"md1"' '"data":{"a":"1"}'
apply /api/v1/namespaces/default/configmaps/md1?fieldManager=m1 $'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: md1, namespace: kube-system}\n'
check "an apply naming another namespace is kube's patch 400" code_has 400 'the namespace of the provided object does not match the namespace sent on the request'
apply "$CMP/s3?fieldManager=m1" '[1, 2]'
check "an apply that is not an object is 400" code_is 400
apply "$CMP/s3?fieldManager=m1" '{"apiVersion":"v1","kind":"ConfigMap","metadata":"s3"}'
check "an apply whose metadata is not an object is the typed conversion's 500" msg_is 'failed to create typed patch object (/; /v1, Kind=ConfigMap): .metadata: expected map, got &{s3}'
apply "$CMP/s3?fieldManager=m1" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s3","managedFields":[]}}'
check "an apply carrying managedFields is 400" code_is 400
check "... with kube's message" msg_is 'metadata.managedFields must be nil'
apply "$CMP/s3?fieldManager=m1&dryRun=All" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s3"},"data":{"a":"1"}}'
check "a dry-run apply of a missing object answers 201" code_is 201
req GET "$CMP/s3"
check "... and creates nothing" code_is 404
apply "/api/v1/namespaces/default/services/nosvc/status?fieldManager=m1" '{"apiVersion":"v1","kind":"Service","metadata":{"name":"nosvc"},"status":{}}'
check "an apply to the status of a missing object is 404" code_is 404
apply "$CMP/s3?fieldManager=m1" $'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s3\n'
check "a malformed YAML configuration is 400, in kube's applyPatcher's and sigs.k8s.io/yaml's words" \
	code_has 400 '"message":"error decoding YAML: error converting YAML to JSON: yaml: line '
apply "$CMP/s3?fieldManager=m1" $'- a\n- b'
check "a YAML list is 400: it does not decode into a map" code_has 400 \
	'"message":"error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}"'
req GET /readyz
check "the server still serves" code_is 200

# --- keyed lists of built-ins: Service ports by port and protocol
SVC=/api/v1/namespaces/default/services
apply "$SVC/sv?fieldManager=a" '{"apiVersion":"v1","kind":"Service","metadata":{"name":"sv"},"spec":{"ports":[{"port":80,"name":"http"}]}}'
check "a Service is created by apply" code_is 201
apply "$SVC/sv?fieldManager=b" '{"apiVersion":"v1","kind":"Service","metadata":{"name":"sv"},"spec":{"ports":[{"port":81,"name":"other","protocol":"TCP"}]}}'
check "another manager's port is merged by key" py "assert [p['port'] for p in d['spec']['ports']]==[80,81], d['spec']"
check "... keyed by port and protocol" mf_is b Apply '{"f:spec":{"f:ports":{"k:{\"port\":81,\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{}}}}}'
apply "$SVC/sv?fieldManager=a" '{"apiVersion":"v1","kind":"Service","metadata":{"name":"sv"},"spec":{"ports":[{"port":80,"name":"web"}]}}'
check "a changed item of one's own is merged in place" py "assert [(p['port'],p['name']) for p in d['spec']['ports']]==[(80,'web'),(81,'other')], d['spec']"
apply "$SVC/sv?fieldManager=a" '{"apiVersion":"v1","kind":"Service","metadata":{"name":"sv"},"spec":{}}'
check "an item one no longer applies is removed, the other's stays" py "assert [p['port'] for p in d['spec']['ports']]==[81], d['spec']"

kill -TERM "$SERVER_PID"
reap "$SERVER_PID"
check "server exits 0" exited_zero

# --- kubectl
if ! command -v kubectl >/dev/null 2>&1; then
	echo "SKIPPED: the kubectl part needs kubectl >= 1.29 (see scripts/deps.sh)"
	e2e_finish
	exit
fi
DATA2=$WORK/data2
serve_lapis serve2 "$DATA2"
check "server starts over TLS" [ -n "$URL" ]
export KUBECONFIG=$DATA2/kubeconfig
export HOME=$WORK/home
mkdir -p "$HOME"
K=kubectl

cat >"$WORK/cm.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: k1, namespace: default}
data: {a: "1", b: "2"}
YAML
expect_rc 0 "kubectl apply --server-side creates" $K apply --server-side -f "$WORK/cm.yaml"
check "... serverside-applied" out_has 'configmap/k1 serverside-applied'
sed -i 's/a: "1", b: "2"/a: "1"/' "$WORK/cm.yaml"
expect_rc 0 "kubectl apply --server-side without b" $K apply --server-side -f "$WORK/cm.yaml"
expect_rc 0 "... get" $K get cm k1 -o 'jsonpath={.data}'
check "... removed b" out_has '^\{"a":"1"\}$'
expect_rc 0 "kubectl edits a field by patch" $K patch cm k1 -p '{"data":{"a":"5"}}'
expect_rc 1 "kubectl apply --server-side over it conflicts" $K apply --server-side -f "$WORK/cm.yaml"
check "... naming the manager and the field" err_has 'Apply failed with 1 conflict: conflict with "kubectl-patch" using v1: .data.a'
expect_rc 0 "--force-conflicts takes it over" $K apply --server-side --force-conflicts -f "$WORK/cm.yaml"
expect_rc 0 "... --show-managed-fields" $K get cm k1 -o yaml --show-managed-fields
check "... kubectl's Apply entry" out_has 'manager: kubectl$'
cat >"$WORK/csa.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: k2, namespace: default}
data: {a: "1"}
YAML
expect_rc 0 "client-side kubectl apply" $K apply -f "$WORK/csa.yaml"
sed -i 's/a: "1"/a: "2"/' "$WORK/csa.yaml"
expect_rc 0 "then apply --server-side of a change: no conflict (upgrade)" $K apply --server-side -f "$WORK/csa.yaml"
expect_rc 0 "... get" $K get cm k2 -o 'jsonpath={.data.a} {.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}'
check "... the value and the annotation follow" out_has '^2 .*"a":"2"'
expect_rc 0 "... the annotation" $K get cm k2 -o json
check "... is Go's encoding: sorted keys, a closing newline" python3 -c "
import json,sys; a=json.load(open('$WORK/out'))['metadata']['annotations']['kubectl.kubernetes.io/last-applied-configuration']
assert a=='{\"apiVersion\":\"v1\",\"data\":{\"a\":\"2\"},\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"k2\",\"namespace\":\"default\"}}\n', repr(a)"
# a field another manager changed since the client-side apply is not
# taken over: only that conflict is reported (allowedConflictsFromLastApplied)
cat >"$WORK/csa3.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: k3, namespace: default}
data: {a: "1", b: "2"}
YAML
expect_rc 0 "client-side kubectl apply of two keys" $K apply -f "$WORK/csa3.yaml"
expect_rc 0 "another manager edits one" $K patch cm k3 --field-manager ed -p '{"data":{"b":"edited"}}'
sed -i 's/a: "1", b: "2"/a: "9", b: "new"/' "$WORK/csa3.yaml"
expect_rc 1 "apply --server-side of both conflicts on the edited one" $K apply --server-side -f "$WORK/csa3.yaml"
check "... alone (the other is still as the annotation has it)" err_has 'Apply failed with 1 conflict: conflict with "ed" using v1: .data.b'
expect_rc 0 "... nothing written" $K get cm k3 -o 'jsonpath={.data.a} {.data.b}'
check "... the values stay" out_has '^1 edited$'

TD=$(cd "$(dirname "$0")/../../../shared/testdata/crds" 2>/dev/null && pwd)
BIG=$TD/prometheus-operator/monitoring.coreos.com_prometheuses.yaml
if [[ -f $BIG ]]; then
	expect_rc 0 "a CRD over kube's 256 KiB annotation limit by apply --server-side" $K apply --server-side -f "$BIG"
	expect_rc 0 "... is established" $K wait --for condition=established --timeout=30s crd/prometheuses.monitoring.coreos.com
	expect_rc 0 "... and applied again unchanged" $K apply --server-side -f "$BIG"
else
	echo "# no shared testdata: the large CRD check is skipped"
fi

$K apply --server-side -f - >/dev/null 2>&1 <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  names: {kind: Gadget, plural: gadgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              tags: {type: array, items: {type: string}, x-kubernetes-list-type: set}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items: {type: object, required: [name], properties: {name: {type: string}, port: {type: integer}}}
              endpoints:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name, proto]
                items: {type: object, required: [name], properties: {name: {type: string}, proto: {type: string, default: TCP}, v: {type: integer}}}
              atomic: {type: array, items: {type: string}}
              labels: {type: object, additionalProperties: {type: string}}
              notes: {type: object, nullable: true, additionalProperties: {type: string}}
              selector:
                type: object
                x-kubernetes-map-type: atomic
                properties: {matchLabels: {type: object, additionalProperties: {type: string}}}
          status: {type: object, properties: {ready: {type: boolean}}}
YAML
expect_rc 0 "a CRD with map and set lists" $K wait --for condition=established --timeout=30s crd/gadgets.example.com
gadget() { printf 'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g1, namespace: default}\n%s\n' "$1"; }
gadget 'spec: {size: 1, tags: [a, b], ports: [{name: http, port: 80}], atomic: [x]}' >"$WORK/g1.yaml"
gadget 'spec: {tags: [c], ports: [{name: https, port: 443}]}' >"$WORK/g2.yaml"
gadget 'spec: {size: 1, tags: [a], ports: [{name: http, port: 8080}]}' >"$WORK/g3.yaml"
expect_rc 0 "manager m1 applies a custom resource" $K apply --server-side --field-manager=m1 -f "$WORK/g1.yaml"
expect_rc 0 "manager m2 applies its part" $K apply --server-side --field-manager=m2 -f "$WORK/g2.yaml"
expect_rc 0 "... get" $K get gadget g1 -o 'jsonpath={.spec}'
check "... map lists merge by key, sets unite" out_has '"ports":\[\{"name":"http","port":80\},\{"name":"https","port":443\}\].*"tags":\["a","b","c"\]'
expect_rc 0 "m1 applies less" $K apply --server-side --field-manager=m1 -f "$WORK/g3.yaml"
expect_rc 0 "... get" $K get gadget g1 -o 'jsonpath={.spec}'
check "... what m1 dropped is gone, m2's stays" out_has '^\{"ports":\[\{"name":"http","port":8080\},\{"name":"https","port":443\}\],"size":1,"tags":\["a","c"\]\}$'
gadget 'spec: {selector: {matchLabels: {a: "1"}}}' >"$WORK/sel1.yaml"
gadget 'spec: {selector: {matchLabels: {b: "2"}}}' >"$WORK/sel2.yaml"
expect_rc 0 "m3 applies an atomic selector (x-kubernetes-map-type: atomic)" $K apply --server-side --field-manager=m3 -f "$WORK/sel1.yaml"
expect_rc 1 "another manager's different selector conflicts on the whole map" $K apply --server-side --field-manager=m4 -f "$WORK/sel2.yaml"
check "... at .spec.selector" err_has 'conflict with "m3": \.spec\.selector$'
expect_rc 0 "with --force-conflicts" $K apply --server-side --field-manager=m4 --force-conflicts -f "$WORK/sel2.yaml"
expect_rc 0 "... get" $K get gadget g1 -o 'jsonpath={.spec.selector} {.metadata.managedFields[?(@.manager=="m4")].fieldsV1}'
check "... the map is replaced, not merged, and owned whole" out_has '^\{"matchLabels":\{"b":"2"\}\} \{"f:spec":\{"f:selector":\{\}\}\}$'
# A map key that an item leaves out takes its schema default, as
# structured-merge-diff fills it: the item is keyed, not the list atomic.
gadget 'spec: {endpoints: [{name: b, proto: TCP, v: 3}]}' >"$WORK/ep1.yaml"
gadget 'spec: {endpoints: [{name: b, v: 4}]}' >"$WORK/ep2.yaml"
expect_rc 0 "m5 applies a map-list item with both keys" $K apply --server-side --field-manager=m5 -f "$WORK/ep1.yaml"
expect_rc 1 "m6 applies the same item without its defaulted key and another value" $K apply --server-side --field-manager=m6 -f "$WORK/ep2.yaml"
check "... conflicts on the item's field, keyed with the default" err_has 'conflict with "m5": \.spec\.endpoints\[name="b",proto="TCP"\]\.v$'
expect_rc 0 "with --force-conflicts" $K apply --server-side --field-manager=m6 --force-conflicts -f "$WORK/ep2.yaml"
expect_rc 0 "... get" $K get gadget g1 -o 'jsonpath={.spec.endpoints} {.metadata.managedFields[?(@.manager=="m6")].fieldsV1}'
check "... m6 owns the item's fields by its defaulted key" out_has '^\[\{"name":"b","proto":"TCP","v":4\}\] \{"f:spec":\{"f:endpoints":\{"k:\{\\"name\\":\\"b\\",\\"proto\\":\\"TCP\\"\}":\{"\.":\{\},"f:name":\{\},"f:v":\{\}\}\}\}\}$'
gadget 'spec: {atomic: [q], bogus: 1}' >"$WORK/gb.yaml"
expect_rc 1 "m7 applying a field the schema does not have fails (--validate=false)" $K apply --server-side --field-manager=m7 --validate=false -f "$WORK/gb.yaml"
check "... with kube's 500 from its typed conversion" err_has 'Error from server: failed to create typed patch object \(default/g1; example.com/v1, Kind=Gadget\): \.spec\.bogus: field not declared in schema'
gadget 'spec: {size: "1", atomic: [1], labels: {a: 1}, selector: {matchLabels: {x: [1]}}, endpoints: [{proto: UDP}], notes: null}' >"$WORK/gt.yaml"
expect_rc 1 "values of the wrong type in a custom resource fail its apply" $K apply --server-side --field-manager=m7 -f "$WORK/gt.yaml"
check "... every error in the schema's types, an atomic list's items by index, a keyed item without its key" err_all 'Error from server: failed to create typed patch object \(default/g1; example.com/v1, Kind=Gadget\): errors:$' '^  \.spec\.atomic\[0\]: expected string, got &value\.valueUnstructured\{Value:1\}$' '^  \.spec\.endpoints: element 0: associative list with keys has an element that omits key field "name" \(and doesn.t have default value\)$' '^  \.spec\.labels\.a: expected string, got &value\.valueUnstructured\{Value:1\}$' '^  \.spec\.selector\.matchLabels\.x: expected string, got &value\.valueUnstructured\{Value:\[\]interface \{\}\{1\}\}$' '^  \.spec\.size: expected numeric \(int or float\), got string$'
printf 'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g1, namespace: default, zbogus: 1}\n' >"$WORK/gm.yaml"
expect_rc 1 "a custom resource's metadata is ObjectMeta to the typed conversion" $K apply --server-side --field-manager=m7 --validate=false -f "$WORK/gm.yaml"
check "... its unknown member fails the apply" err_has 'Error from server: failed to create typed patch object \(default/g1; example.com/v1, Kind=Gadget\): \.metadata\.zbogus: field not declared in schema$'
# What structured-merge-diff prunes: a field the schema declares goes
# whole once its applier leaves it and nobody else owns anything there
# (no "tags: []" or "spec: {}" left behind); an empty set or map list
# applied owns nothing (ToFieldSet), an empty atomic list is a leaf.
g2() { printf 'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g2, namespace: default}\n%s\n' "$1"; }
expect_rc 0 "solo applies lists and a size" $K apply --server-side --field-manager=solo -f - <<<"$(g2 'spec: {size: 2, tags: [a], ports: [{name: p, port: 1}]}')"
expect_rc 0 "... then only the size" $K apply --server-side --field-manager=solo -f - <<<"$(g2 'spec: {size: 2}')"
expect_rc 0 "... get" $K get gadget g2 -o 'jsonpath={.spec}'
check "... the lists are gone, not emptied" out_has '^\{"size":2\}$'
expect_rc 0 "... then nothing under spec" $K apply --server-side --field-manager=solo -f - <<<"$(g2 '')"
expect_rc 0 "... get" $K get gadget g2 -o json
check "... spec is gone, not {}" python3 -c "
import json; d=json.load(open('$WORK/out')); assert 'spec' not in d, d"
# A map that the removal of the applier's keys empties is null, as the
# remove walk of kube 1.33's structured-merge-diff (v4.6.0) leaves it, and
# no decoder drops that null before validation: where the schema does not
# say nullable, the apply is refused (kubernetes#135841).
expect_rc 0 "solo applies two maps" $K apply --server-side --field-manager=solo -f - <<<"$(g2 'spec: {labels: {a: "1"}, notes: {b: "2"}}')"
expect_rc 1 "... then both empty" $K apply --server-side --field-manager=solo -f - <<<"$(g2 'spec: {labels: {}, notes: {}}')"
check "... is refused for the emptied map the schema does not let be null, not the nullable one" err_has '^The Gadget "g2" is invalid: spec\.labels: Invalid value: "null": spec\.labels in body must be of type object: "null"$'
expect_rc 0 "... the nullable one alone" $K apply --server-side --field-manager=solo -f - <<<"$(g2 'spec: {labels: {a: "1"}, notes: {}}')"
expect_rc 0 "... get" $K get gadget g2 -o json
check "... is null" python3 -c "
import json; d=json.load(open('$WORK/out')); assert d['spec'] == {'labels': {'a': '1'}, 'notes': None}, d['spec']"
expect_rc 0 "empty set, map and atomic lists applied" $K apply --server-side --field-manager=solo -f - <<<"$(g2 'spec: {tags: [], ports: [], atomic: [], size: 1}')"
expect_rc 0 "... get" $K get gadget g2 -o 'jsonpath={.metadata.managedFields[?(@.manager=="solo")].fieldsV1}'
check "... own the atomic one only" out_has '^\{"f:spec":\{"f:atomic":\{\},"f:size":\{\}\}\}$'
# structured-merge-diff refuses a configuration holding one key twice
# while it types it: kube's plain 500, no reason.
expect_rc 1 "an applied map list with a key twice" $K apply --server-side --field-manager=dup -f - <<<'{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g3","namespace":"default"},"spec":{"ports":[{"name":"a"},{"name":"a","port":2}]}}'
check "... is kube's 500 from its typed conversion, naming the configuration's namespace and name" err_has 'Error from server: failed to create typed patch object \(default/g3; example.com/v1, Kind=Gadget\): \.spec\.ports: duplicate entries for key \[name="a"\]'
expect_rc 1 "a Service's ports twice by port and the defaulted protocol" $K apply --server-side --field-manager=dup -f - <<<'{"apiVersion":"v1","kind":"Service","metadata":{"name":"dup","namespace":"default"},"spec":{"ports":[{"name":"a","port":80},{"name":"b","port":80}]}}'
check "... too" err_has 'duplicate entries for key \[port=80,protocol="TCP"\]'
# A built-in's struct field goes whole too once its applier leaves it,
# defaulted members and all: a CRD applied without the conversion it had
# gets the default conversion, not a webhook left with only its port.
widgets() {
	printf 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\nspec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]\n%s\n' "$1"
}
expect_rc 0 "a CRD applied with a conversion webhook" $K apply --server-side -f - <<<"$(widgets '  conversion: {strategy: Webhook, webhook: {conversionReviewVersions: [v1], clientConfig: {service: {name: conv, namespace: default, path: /convert}}}}')"
expect_rc 0 "... applied again without it" $K apply --server-side -f - <<<"$(widgets '')"
expect_rc 0 "... get" $K get crd widgets.example.com -o 'jsonpath={.spec.conversion}'
check "... has the default conversion" out_has '^\{"strategy":"None"\}$'
gadget 'status: {ready: true}' >"$WORK/gs.yaml"
expect_rc 0 "apply to the status subresource" $K apply --server-side --field-manager=ctl --subresource=status -f "$WORK/gs.yaml"
expect_rc 0 "... get" $K get gadget g1 -o 'jsonpath={.status.ready} {.metadata.managedFields[?(@.manager=="ctl")].subresource}'
check "... sets status, recorded for the subresource" out_has '^true status$'
# structured-merge-diff's ToFieldSet: a member the type does not declare
# (a map key, anything under x-kubernetes-preserve-unknown-fields) is in
# the applier's set itself, beside what it holds (kube's
# TestApplyScaleSubresource); and x-kubernetes-preserve-unknown-fields
# reaches every schema below it when kube types the configuration
expect_rc 0 "a CRD preserving unknown fields, with a declared object and a scale subresource" $K apply -f - <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: knobs.example.com}
spec:
  group: example.com
  names: {kind: Knob, plural: knobs}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
        properties:
          cfg: {type: object, properties: {a: {type: string}}}
YAML
expect_rc 0 "... established" $K wait --for condition=established --timeout=30s crd/knobs.example.com
knob() { # MANAGER JSON [ARGS]: kubectl's server-side apply, the object into body
	run $K apply --server-side --field-manager="$1" -o json --show-managed-fields "${@:3}" -f - <<<"$2"
	cp "$WORK/out" "$WORK/body"
}
# (kubectl asks for fieldValidation=Strict: kube's applyPatcher decodes
# nothing, so the field typing let through is pruned silently)
knob applier '{"apiVersion":"example.com/v1","kind":"Knob","metadata":{"name":"k0","namespace":"default"},"cfg":{"a":"x","extra":1}}'
check "an apply with an unknown field in an object declared under x-kubernetes-preserve-unknown-fields is typed as kube types it (no 500, no strict 400), the field pruned" py "assert d['cfg'] == {'a': 'x'}, d"
knob applier '{"apiVersion":"example.com/v1","kind":"Knob","metadata":{"name":"k0","namespace":"default"},"cfg":{"a":"y","extra":2}}'
check "... applied again over it, no strict 422 either" py "assert d['cfg'] == {'a': 'y'}, d"
knob applier '{"apiVersion":"example.com/v1","kind":"Knob","metadata":{"name":"k1","namespace":"default"},"spec":{"replicas":3,"a":{"b":1}},"cfg":{"a":"x"}}'
check "... the applier owns spec and spec.a themselves, beside their leaves" mf_is applier Apply '{"f:cfg":{"f:a":{}},"f:spec":{".":{},"f:a":{".":{},"f:b":{}},"f:replicas":{}}}'
expect_rc 0 "... scaled by another manager" $K patch knob k1 --subresource=scale --type=merge -p '{"spec":{"replicas":5}}' --field-manager=scaler
expect_rc 0 "... get" $K get knob k1 -o json --show-managed-fields
cp "$WORK/out" "$WORK/body"
check "... which takes replicas and leaves the applier spec itself" mf_is applier Apply '{"f:cfg":{"f:a":{}},"f:spec":{".":{},"f:a":{".":{},"f:b":{}}}}'
check "... the scaler owns replicas, for the subresource, with no time (kube's scale handler takes times from the object's entries)" py "
e = [m for m in d['metadata']['managedFields'] if m['manager'] == 'scaler']
assert len(e) == 1 and e[0]['subresource'] == 'scale' and e[0]['fieldsV1'] == {'f:spec': {'f:replicas': {}}} and 'time' not in e[0], e"
knob applier '{"apiVersion":"example.com/v1","kind":"Knob","metadata":{"name":"k1","namespace":"default"},"spec":{"c":1}}'
check "... applying without spec.a removes it whole, not leaving a: {}" py "assert d['spec'] == {'replicas': 5, 'c': 1} and 'cfg' not in d, d"
# A custom resource's metadata is ObjectMeta to structured-merge-diff
# (kube's builder refers it): labels and annotations are struct fields, so
# an applier that owned the map itself and now applies keys in it keeps
# every key someone owns (addBackOwnedItems); lapis removed the whole map.
knob B '{"apiVersion":"example.com/v1","kind":"Knob","metadata":{"name":"k2","namespace":"default","labels":{"b":"2"}}}'
knob A '{"apiVersion":"example.com/v1","kind":"Knob","metadata":{"name":"k2","namespace":"default","labels":{}}}'
knob A '{"apiVersion":"example.com/v1","kind":"Knob","metadata":{"name":"k2","namespace":"default","labels":{"a":"1"}}}'
check "a custom resource's labels an applier owned as a map, then applied a key into, keep every owned key" py "assert d['metadata']['labels'] == {'a': '1', 'b': '2'}, d['metadata']"
check "... and the other manager its entry" mf_is B Apply '{"f:metadata":{"f:labels":{"f:b":{}}}}'
printf 'apiVersion: example.com/v1\nkind: Knob\nmetadata:\n  name: k3\n  namespace: default\n  labels: {app: demo}\n  annotations: {note: hello}\n' >"$WORK/k3.yaml"
expect_rc 0 "a custom resource by client-side apply" $K apply -f "$WORK/k3.yaml"
expect_rc 0 "... then by server-side apply (kubectl's upgrade of the managed fields)" $K apply --server-side -f "$WORK/k3.yaml"
expect_rc 0 "... get" $K get knob k3 -o json
cp "$WORK/out" "$WORK/body"
check "... keeps its labels, its annotations and the last-applied one" py "m = d['metadata']; assert m['labels'] == {'app': 'demo'} and m['annotations']['note'] == 'hello' and 'kubectl.kubernetes.io/last-applied-configuration' in m['annotations'], m"

# Applied nulls as structured-merge-diff merges them (typed/merge.go): a
# null is a leaf the configuration wins, so re-applying one changes
# nothing, unless it meets a granular map with members, which stays (what
# its applier owned there goes, an emptied map becoming null); no decoder
# runs on an apply's result, so a non-nullable null without a default is
# refused by validation (kubernetes#117447), not dropped.
expect_rc 0 "a CRD with nullable and non-nullable fields" $K apply -f - <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: nullies.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: nullies, kind: Nully}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              a: {type: string}
              obj: {type: object, nullable: true, x-kubernetes-preserve-unknown-fields: true}
              str: {type: string, nullable: true}
              m: {type: object, nullable: true, additionalProperties: {type: string}}
              d: {type: string, default: dd}
              sel: {type: object, x-kubernetes-map-type: atomic, properties: {ml: {type: object, additionalProperties: {type: string}}}}
YAML
expect_rc 0 "... established" $K wait --for condition=established --timeout=30s crd/nullies.example.com
nully() { # MANAGER SPEC-JSON: server-side apply of Nully n1, the object into body
	run $K apply --server-side --field-manager="$1" -o json -f - <<<"{\"apiVersion\":\"example.com/v1\",\"kind\":\"Nully\",\"metadata\":{\"name\":\"n1\",\"namespace\":\"default\"},\"spec\":$2}"
	cp "$WORK/out" "$WORK/body"
}
nully ap '{"a":"x","obj":null,"str":null,"m":null,"d":null}'
check "an apply keeps nullable nulls; a non-nullable one with a default is defaulted" py "assert d['spec'] == {'a': 'x', 'obj': None, 'str': None, 'm': None, 'd': 'dd'}, d"
RV=$(rv)
nully ap '{"a":"x","obj":null,"str":null,"m":null,"d":null}'
check "... applied again: nothing changes (same resourceVersion, generation 1)" py "assert d['metadata']['resourceVersion'] == '$RV' and d['metadata']['generation'] == 1 and d['spec']['str'] is None, d"
nully ap '{"a":"x","obj":{"k":"v"},"str":"s","m":{"x":"a"}}'
expect_rc 0 "... another manager adds to m" $K patch nully n1 --type=merge -p '{"spec":{"m":{"z":"b"}}}' --field-manager=other
nully ap '{"a":"x","obj":null,"str":null,"m":null}'
check "... nulls over values: the scalar null, the emptied map null, the map another manager holds a member of kept with it" py "assert d['spec'] == {'a': 'x', 'obj': None, 'str': None, 'm': {'z': 'b'}, 'd': 'dd'}, d"
expect_rc 1 "a null the schema does not allow, in an atomic map" $K apply --server-side -f - <<<'{"apiVersion":"example.com/v1","kind":"Nully","metadata":{"name":"n2","namespace":"default"},"spec":{"sel":{"ml":null}}}'
check "... is validation's 422, as kube's" err_has 'The Nully "n2" is invalid: spec.sel.ml: Invalid value: "null": spec.sel.ml in body must be of type object: "null"'
expect_rc 1 "... and so is one of a string" $K apply --server-side --field-manager=ap -f - <<<'{"apiVersion":"example.com/v1","kind":"Nully","metadata":{"name":"n1","namespace":"default"},"spec":{"a":null}}'
check "... naming it" err_has 'spec.a: Invalid value: "null": spec.a in body must be of type string: "null"'
run $K apply --server-side --field-manager=one -f - <<<'{"apiVersion":"example.com/v1","kind":"Nully","metadata":{"name":"n3","namespace":"default"},"spec":{"obj":{"k":{"deep":"1"}},"str":"s"}}'
run $K apply --server-side --field-manager=two -f - <<<'{"apiVersion":"example.com/v1","kind":"Nully","metadata":{"name":"n3","namespace":"default"},"spec":{"obj":{"k":{"deep":"2"}},"str":"t"}}'
check "conflicts at two depths" [ "$RC" == 1 ]
check "... are listed as SMD's set iterates: a node's own fields before the paths under its children" python3 -c "
t = open('$WORK/err').read()
assert '- .spec.str\n- .spec.obj.k.deep' in t, t"
# an update that empties a map changes only its members: their owner
# keeps the map, the updater gets no entry (SMD's doMap compares a map
# empty on one side by its members)
run $K create --field-manager=ctl -o json -f - <<<'{"apiVersion":"example.com/v1","kind":"Nully","metadata":{"name":"n4","namespace":"default"},"spec":{"m":{"k":"v"}}}'
cp "$WORK/out" "$WORK/body"
run $K replace --field-manager=upd --show-managed-fields -o json -f - <<<"$(python3 -c "import json; d=json.load(open('$WORK/body')); d['spec']['m']={}; print(json.dumps(d))")"
cp "$WORK/out" "$WORK/body"
check "an update emptying a map" [ "$RC" == 0 ]
check "... leaves the map with its creator and gives the updater no entry (it took the map, the creator's entry went)" py "assert d['spec']['m'] == {} and [(e['manager'], e['fieldsV1']) for e in d['metadata']['managedFields']] == [('ctl', {'f:spec': {'.': {}, 'f:d': {}, 'f:m': {}}})], d['metadata']['managedFields']"

# structured-merge-diff's Compare: a granular map or list that is null or
# empty on one side only is compared by its members, the container itself
# unchanged (cases of its merge tests, found by replaying them)
expect_rc 0 "a CRD of granular lists and maps" $K apply -f - <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: grans.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: grans, kind: Gran}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          set: {type: array, nullable: true, x-kubernetes-list-type: set, items: {type: string}}
          m: {type: object, nullable: true, additionalProperties: {type: string}}
          mlist:
            type: array
            x-kubernetes-list-type: map
            x-kubernetes-list-map-keys: [name]
            items: {type: object, required: [name], properties: {name: {type: string}, value: {type: array, x-kubernetes-list-type: set, items: {type: string}}, fy: {type: string}}}
YAML
expect_rc 0 "... established" $K wait --for condition=established --timeout=30s crd/grans.example.com
mf2() { mf_is "$1" "$2" "$3" && mf_is "$4" "$5" "$6"; }
gran() { printf '{"apiVersion":"example.com/v1","kind":"Gran","metadata":{"name":"%s","namespace":"default"},%s}' "$1" "$2"; }
gran_do() { # NAME KUBECTL-ARGS... (the object on stdin): then the object, with its managedFields, into body
	local n=$1
	shift
	run $K "$@" -f -
	$K get gran "$n" -o json --show-managed-fields >"$WORK/body"
}
gran_do g1 apply --server-side --field-manager=one <<<"$(gran g1 '"set":null,"m":null')"
gran_do g1 apply --server-side --field-manager=two <<<"$(gran g1 '"set":["a","b"],"m":{"k":"v"}')"
check "a null set and map one manager applied, filled by another: no conflict" [ "$RC" == 0 ]
check "... the first keeps the containers, the second owns the members" mf2 one Apply '{"f:m":{},"f:set":{}}' two Apply '{"f:m":{"f:k":{}},"f:set":{"v:\"a\"":{},"v:\"b\"":{}}}'
gran_do g2 create --field-manager=ctl <<<"$(gran g2 '"set":[],"mlist":[]')"
gran_do g2 apply --server-side --field-manager=two <<<"$(gran g2 '"set":["a"],"mlist":[{"name":"x"}]')"
check "lists created empty by an update, filled by an apply: no conflict" [ "$RC" == 0 ]
check "... the creator keeps them, the applier owns its items" mf2 ctl Update '{"f:mlist":{},"f:set":{}}' two Apply '{"f:mlist":{"k:{\"name\":\"x\"}":{".":{},"f:name":{}}},"f:set":{"v:\"a\"":{}}}'
# an item the applier stops applying goes whole, though another manager
# owns a field in it (the item itself is nobody's): no keyless remnant
gran_do g3 apply --server-side --field-manager=one <<<"$(gran g3 '"mlist":[{"name":"a"},{"name":"b","value":["c"]}]')"
gran_do g3 replace --field-manager=ctl <<<"$(python3 -c "import json; d=json.load(open('$WORK/body')); d['mlist'][1]['value']=['c','d']; d['mlist'][1]['fy']='y'; print(json.dumps(d))")"
check "another manager adds to an applied item" [ "$RC" == 0 ]
check "... owning just its additions" mf_is ctl Update '{"f:mlist":{"k:{\"name\":\"b\"}":{"f:fy":{},"f:value":{"v:\"d\"":{}}}}}'
gran_do g3 apply --server-side --field-manager=one <<<"$(gran g3 '"mlist":[{"name":"a"}]')"
check "... the applier dropping the item removes it whole (no 422 for a missing key)" py "assert d['mlist'] == [{'name': 'a'}], d"
check "... and the other manager's entry with it" py "assert [e['manager'] for e in d['metadata']['managedFields']] == ['one'], d['metadata']['managedFields']"
# a map the CRD makes atomic after the fact: its old owner's paths below
# it fold into it before an apply (reconcileManagedFieldsWithSchemaChanges)
gran_do g4 apply --server-side --field-manager=one <<<"$(gran g4 '"m":{"a":"1"}')"
expect_rc 0 "the CRD makes m atomic" $K patch crd grans.example.com --type=json -p '[{"op":"add","path":"/spec/versions/0/schema/openAPIV3Schema/properties/m/x-kubernetes-map-type","value":"atomic"}]'
for _ in $(seq 1 50); do $K get crd grans.example.com -o jsonpath='{.spec.versions[0].schema.openAPIV3Schema.properties.m.x-kubernetes-map-type}' | grep -q atomic && break; sleep 0.1; done
gran_do g4 apply --server-side --field-manager=two <<<"$(gran g4 '"m":{"b":"2"}')"
check "... another manager's apply to it then conflicts with the old owner on the map itself" err_has 'conflict with "one": \.m$'
gran_do g4 apply --server-side --field-manager=two --force-conflicts <<<"$(gran g4 '"m":{"b":"2"}')"
check "... forced, it takes the map whole" py "assert d['m'] == {'b': '2'} and [(e['manager'], e['fieldsV1']) for e in d['metadata']['managedFields']] == [('two', {'f:m': {}})], d"

# a map list whose items the schema makes atomic maps: each item is a
# leaf, owned whole (SMD's ToFieldSet inserts an atomic map's path alone)
expect_rc 0 "a CRD with a map list of atomic items" $K apply -f - <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: lmaps.example.com}
spec:
  group: example.com
  names: {kind: LMap, plural: lmaps}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              items:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [key]
                items:
                  type: object
                  x-kubernetes-map-type: atomic
                  required: [key]
                  properties: {key: {type: string}, v: {type: string}}
YAML
expect_rc 0 "... established" $K wait --for condition=established --timeout=30s crd/lmaps.example.com
lmap() { # MANAGER ITEMS-JSON
	run $K apply --server-side --field-manager="$1" -o json --show-managed-fields -f - <<<'{"apiVersion":"example.com/v1","kind":"LMap","metadata":{"name":"l1","namespace":"default"},"spec":{"items":'"$2"'}}'
	cp "$WORK/out" "$WORK/body"
}
lmap mA '[{"key":"a","v":"x"}]'
check "an applier owns an atomic item as a leaf" mf_is mA Apply '{"f:spec":{"f:items":{"k:{\"key\":\"a\"}":{}}}}'
lmap mB '[{"key":"b","v":"x"}]'
check "... and so does another, for its own item" mf2 mA Apply '{"f:spec":{"f:items":{"k:{\"key\":\"a\"}":{}}}}' mB Apply '{"f:spec":{"f:items":{"k:{\"key\":\"b\"}":{}}}}'
# a key may be null: structured-merge-diff keys the item by that value
# (typed/helpers.go) and validation then refuses it; taken for a list
# without keys, the whole list changed and conflicted with mA and mB
run $K apply --server-side --field-manager=mC -f - <<<'{"apiVersion":"example.com/v1","kind":"LMap","metadata":{"name":"l1","namespace":"default"},"spec":{"items":[{"key":null,"v":"y"}]}}'
check "an item whose key is null is keyed by it: validation's 422, not a conflict" err_all 'is invalid' 'spec\.items\[2\]\.key: Invalid value: "null"'

# an apply through a version that is not the storage one compares as that
# version sees the object (kube's transformer compares in the request's
# version): a default only the storage version has makes no change, so a
# re-apply a second later keeps the revision and the times
expect_rc 0 "a CRD of two versions, a default in the storage one's list items only" $K apply -f - <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: cogs.example.com}
spec:
  group: example.com
  names: {kind: Cog, plural: cogs}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {rules: {type: array, items: {type: object, properties: {s: {type: boolean, default: true}, v: {type: object, properties: {b: {type: boolean, default: true}}}}}}}}}}}
  - name: v2
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {rules: {type: array, items: {type: object, properties: {s: {type: boolean, default: true}, v: {type: object}}}}}}}}}
YAML
expect_rc 0 "... established" $K wait --for condition=established --timeout=30s crd/cogs.example.com
cog() { run $K apply --server-side -o 'jsonpath={.metadata.resourceVersion}' -f - <<<'{"apiVersion":"example.com/v2","kind":"Cog","metadata":{"name":"c1"},"spec":{"rules":[{"v":{}}]}}'; }
cog
RV1=$(cat "$WORK/out")
sleep 1.1
cog
check "a re-apply in the non-storage version a second later is no write (same resourceVersion $RV1)" out_has "^$RV1\$"


kill -TERM "$SERVER_PID"
reap "$SERVER_PID"
check "server exits 0 on SIGTERM" exited_zero
e2e_finish
