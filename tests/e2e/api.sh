#!/usr/bin/env bash
# api.sh -- the REST API end to end with curl: the real binary on a loopback
# port, a temporary data directory. Checks kube's status codes and shapes for
# every verb, paging, watch, and bad input (the server keeps serving).
set -uo pipefail
. "$(dirname "$0")/lib.bash"
e2e_init api
# synced: writes run on the write pool's fibers (server/writes.c), the
# path every synced server takes; kubectl.sh, crd.sh and apply.sh keep
# the nosync path of --nosync and --ephemeral (a write leads its own
# group when no commit is under way)
E2E_SYNC=1

DATA=$WORK/data
start_server() {
	serve_lapis serve "$DATA" --insecure-http "$@"
	[[ -n $URL ]]
}
stop_server() {
	kill -TERM "$SERVER_PID"
	reap "$SERVER_PID"
}

jq_() { python3 -c "import json,sys; d=json.load(open('$WORK/body')); print($1)"; }

check "server starts and prints its URL" start_server

req GET /readyz
check "readyz is ok" code_is 200
req GET /version
check "version reports the kube API level" code_has 200 '"gitVersion": "v1.33.0"'
check "... indented, as kube's WriteRawJSON writes it for every client" python3 -c "
import json; b=open('$WORK/body').read(); assert b==json.dumps(json.loads(b), indent=2), b"
check "... in kube 1.33's version.Info shape: emulation and compatibility versions, an RFC 3339 build date" python3 -c "
import json, re; d=json.load(open('$WORK/body'))
assert list(d)[:7]==['major','minor','emulationMajor','emulationMinor','minCompatibilityMajor','minCompatibilityMinor','gitVersion'], list(d)
assert (d['emulationMinor'], d['minCompatibilityMinor'])==('33','32'), d
assert re.fullmatch(r'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ', d['buildDate']), d"
req GET /api
check "/api lists v1" grep -q '"versions":\["v1"\]' "$WORK/body"

# kube's pretty printing (negotiation.isPrettyPrint): JSON bodies are
# indented as json.MarshalIndent(obj, "", "  ") writes them for a
# User-Agent of curl, Wget or a browser, for ?pretty= read by Go's
# ParseBool (which overrides the User-Agent), and for an Accept clause
# with pretty=1; never a watch's events nor the OpenAPI documents.
# pretty_get AGENT PATH [CURL-ARG...]: the body in $WORK/body
pretty_get() {
	local ua=$1 p=$2
	shift 2
	CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -A "$ua" "$@" "$URL$p")
}
is_pretty() { python3 -c "
import json; b=open('$WORK/body').read()
assert b==json.dumps(json.loads(b), indent=2, ensure_ascii=False), b[:300]"; }
is_compact() { python3 -c "
import json; b=open('$WORK/body').read()
assert b==json.dumps(json.loads(b), separators=(',', ':'), ensure_ascii=False), b[:300]"; }
for ua in curl/8.1.2 Wget/1.21.3 'Mozilla/5.0 (X11; Linux x86_64)'; do
	pretty_get "$ua" /api/v1/namespaces/default
	check "a GET from $ua is pretty-printed" is_pretty
done
pretty_get curl/8.1.2 /api/v1/namespaces
check "... a list too" is_pretty
pretty_get curl/8.1.2 /api/v1/namespaces/nowhere
check "... and an error's Status" eval 'code_is 404 && is_pretty'
pretty_get curl/8.1.2 /apis
check "... and discovery" is_pretty
pretty_get curl/8.1.2 /api/v1/namespaces/default -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io'
check "... and a Table" is_pretty
for q in false 0 F no; do
	pretty_get curl/8.1.2 "/api/v1/namespaces/default?pretty=$q"
	check "?pretty=$q turns it off for curl (Go's ParseBool; not a bool reads as false)" is_compact
done
for q in true 1 T TRUE; do
	pretty_get lapis-e2e "/api/v1/namespaces/default?pretty=$q"
	check "?pretty=$q turns it on for any client" is_pretty
done
pretty_get curl/8.1.2 "/api/v1/namespaces/default?pretty="
check "an empty ?pretty= leaves the User-Agent's choice" is_pretty
pretty_get lapis-e2e /api/v1/namespaces/default
check "other clients get compact JSON" is_compact
pretty_get lapis-e2e /api/v1/namespaces/default -H 'Accept: application/json;pretty=1'
check "an Accept clause with pretty=1 asks for it" is_pretty
pretty_get lapis-e2e /api/v1/namespaces/default -H 'Accept: application/json;pretty=0'
check "... pretty=0 does not" is_compact
pretty_get curl/8.1.2 /api/v1/namespaces/default -H 'Accept: application/yaml'
check "YAML is YAML for curl too" bash -c "head -1 '$WORK/body' | grep -qx 'apiVersion: v1'"
pretty_get curl/8.1.2 /openapi/v3
check "the OpenAPI documents are served as they are" is_compact
pretty_get lapis-e2e /api/v1/namespaces/default -H 'accept: application/yaml' -H 'user-agent: curl/8.1.2'
check "header names are read without case (Accept, User-Agent)" bash -c "head -1 '$WORK/body' | grep -qx 'apiVersion: v1'"
pretty_get lapis-e2e /api/v1/namespaces/default -H 'user-agent: curl/8.1.2'
check "... a lower-case user-agent of curl gets indented JSON" is_pretty

# Query arguments: the server reads the first 12 in one pass and asks
# libmicrohttpd for the rest. Either way the first of a repeated key counts
# (Go's url.Values.Get), keys compared exactly as Go's (not without case,
# as libmicrohttpd's lookup), and a key without '=' is there, empty (?watch).
n_items() { python3 -c "import json; print(len(json.load(open('$WORK/body'))['items']))"; }
many=$(for i in $(seq 14); do printf 'x%d=%d&' "$i" "$i"; done)
for pre in "" "$many"; do
	what=$([[ -n $pre ]] && echo "past the 12 kept at hand" || echo "among the first 12")
	req GET "/api/v1/namespaces?${pre}limit=1&limit=3"
	check "a repeated query argument, $what: the first counts" eval 'code_is 200 && [[ $(n_items) == 1 ]]'
	req GET "/api/v1/namespaces?${pre}LIMIT=2"
	check "... a key in capitals, $what, is an unknown one: the whole list" eval 'code_is 200 && [[ $(n_items) -gt 2 ]]'
	req GET "/api/v1/namespaces?${pre}watch&timeoutSeconds=1"
	check "... ?watch without a value, $what, watches" code_has 200 '"type":"ADDED"'
done
pretty_get curl/8.1.2 '/api/v1/namespaces?watch=1&timeoutSeconds=1'
check "a watch's events stay one line each" python3 -c "
import json; ls=open('$WORK/body').read().splitlines(); assert len(ls)>=4, ls
[json.loads(l) for l in ls]"
req GET /api/v1
check "/api/v1 lists configmaps" grep -q '"name":"configmaps"' "$WORK/body"
req GET /apis
check "/apis lists coordination.k8s.io" grep -q '"coordination.k8s.io"' "$WORK/body"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' "$URL/api")
check "aggregated discovery for /api" grep -q '"kind":"APIGroupDiscoveryList"' "$WORK/body"
curl -sS -D "$WORK/hdr" -o /dev/null -H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' "$URL/apis"
check "... Cache-Control: public, as kube's aggregated discovery" grep -qix 'Cache-Control: public.' "$WORK/hdr"
ETAG=$(sed -n 's/^ETag: *//Ip' "$WORK/hdr" | tr -d '\r')
curl -sS -D "$WORK/hdr" -o /dev/null -H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' -H "If-None-Match: $ETAG" "$URL/apis"
check "... If-None-Match of its ETag: 304 with the validators and no Content-Type" bash -c 'head -1 "'"$WORK"'/hdr" | grep -q " 304" && grep -qi "^ETag: " "'"$WORK"'/hdr" && ! grep -qi "^Content-Type:" "'"$WORK"'/hdr"'
V2B1='application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList'
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H "Accept: $V2B1,application/json" "$URL/apis")
check "aggregated discovery v2beta1 is not served (kube 1.33): the next clause's APIGroupList" code_has 200 '"kind":"APIGroupList"'
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H "Accept: $V2B1" "$URL/api")
check "... v2beta1 alone is 406, indented as kube's WriteRawJSON writes a Status no clause accepts" code_has 406 '"reason": "NotAcceptable"'
req GET /apis
check "built-in groups by kube's priorities, ties by name (admissionregistration before apiextensions)" python3 -c "
import json; g=[x['name'] for x in json.load(open('$WORK/body'))['groups']]
assert g[:7]==['events.k8s.io','authentication.k8s.io','authorization.k8s.io','rbac.authorization.k8s.io','admissionregistration.k8s.io','apiextensions.k8s.io','coordination.k8s.io'], g"
req GET /api/v1
check "/api/v1 lists its resources and subresources by path, as kube's installer registers them; stored kinds alone hashed" python3 -c "
import json; rs=json.load(open('$WORK/body'))['resources']; n=[r['name'] for r in rs]
assert n==['configmaps','endpoints','events','namespaces','namespaces/finalize','namespaces/status','secrets','serviceaccounts','serviceaccounts/token','services','services/status'], n
assert all(('storageVersionHash' in r) == ('/' not in r['name']) for r in rs), rs"
req GET /apis/authorization.k8s.io/v1
check "... the review kinds, which store nothing, have no storageVersionHash" python3 -c "
import json; rs=json.load(open('$WORK/body'))['resources']; assert rs and not any('storageVersionHash' in r for r in rs), rs"
req GET /apis/coordination.k8s.io
check "an APIGroup's TypeMeta comes first, as kube encodes it" python3 -c "
import json; d=json.load(open('$WORK/body')); assert list(d)[:2]==['kind','apiVersion'], list(d)"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' "$URL/api")
check "aggregated /api: a built-in's responseKind without group and version, subresources by name" python3 -c "
import json; rs=json.load(open('$WORK/body'))['items'][0]['versions'][0]['resources']
ns=[r for r in rs if r['resource']=='namespaces'][0]
assert ns['responseKind']=={'group':'','version':'','kind':'Namespace'}, ns
assert [x['subresource'] for x in ns['subresources']]==['finalize','status'], ns
assert [r['resource'] for r in rs]==sorted(r['resource'] for r in rs), rs"
curl -sS -D "$WORK/hdr" -o /dev/null "$URL/readyz"
check "health answers are nosniff, as kube's" grep -qi '^X-Content-Type-Options: nosniff' "$WORK/hdr"
# discovery answers JSON, YAML or protobuf without conversions: else kube's 406
for p in /api /apis /api/v1 /apis/coordination.k8s.io /apis/coordination.k8s.io/v1; do
	CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H 'Accept: text/html' "$URL$p")
	check "discovery $p with Accept: text/html is 406 (indented JSON: kube's WriteRawJSON)" code_has 406 '"reason": "NotAcceptable"' 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf'
	CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H 'Accept: application/json;as=Table;g=meta.k8s.io;v=v1, application/vnd.kubernetes.protobuf, */*' "$URL$p")
	check "... a Table clause is skipped for the next acceptable one" code_is 200
done
req GET /api/v1/namespaces/default
check "namespace default exists at first start" code_is 200
req GET /api/v1/namespaces/kube-system/configmaps/kube-apiserver-legacy-service-account-token-tracking
check "kube-apiserver's legacy token tracking ConfigMap exists, since the UTC day it was made" python3 -c "
import datetime, json
d = json.load(open('$WORK/body'))
today = datetime.datetime.now(datetime.timezone.utc).date()
assert d['data']['since'] in (str(today), str(today - datetime.timedelta(days=1))), d['data']
assert d['metadata']['managedFields'][0]['manager'] == 'kube-apiserver', d['metadata']"

req GET /api/v1/namespaces/default/services/kubernetes
check "kube-apiserver's own Service default/kubernetes exists, at the range's first IP" code_has 200 '"labels":{"component":"apiserver","provider":"kubernetes"}' '"clusterIP":"10.96.0.1"' "\"ports\":[{\"name\":\"https\",\"protocol\":\"TCP\",\"port\":443,\"targetPort\":${URL##*:}}]"
req GET /api/v1/namespaces/default/endpoints/kubernetes
check "... and its Endpoints, this server's address and port" code_has 200 "\"subsets\":[{\"addresses\":[{\"ip\":\"127.0.0.1\"}],\"ports\":[{\"name\":\"https\",\"port\":${URL##*:},\"protocol\":\"TCP\"}]}]"
req POST /api/v1/namespaces/default/services '{"metadata":{"name":"steal"},"spec":{"clusterIP":"10.96.0.1","ports":[{"port":80}]}}'
check "... whose IP no other Service can take" code_has 422 'provided IP is already allocated'
req POST /api/v1/namespaces/default/services '{"metadata":{"name":"headless"},"spec":{"clusterIP":"None","ports":[{"port":80}]}}'
req GET '/api/v1/services?fieldSelector=spec.clusterIP!%3DNone'
check "Services select by spec.clusterIP (kube-proxy's spec.clusterIP!=None)" code_has 200 '"name":"kubernetes"'
check "... leaving the headless one out" bash -c "! grep -q '\"name\":\"headless\"' '$WORK/body'"
req GET '/api/v1/namespaces/default/services?fieldSelector=spec.type%3DClusterIP,metadata.name%3Dheadless'
check "... and by spec.type" code_has 200 '"name":"headless"'
req DELETE /api/v1/namespaces/default/services/headless
check "deleting a Service answers the deleted object (kube's ReturnDeletedObject)" code_has 200 '{"kind":"Service","apiVersion":"v1","metadata":{"name":"headless",'
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"gone"}}'
req DELETE /api/v1/namespaces/default/configmaps/gone
check "... a ConfigMap's, a Status" code_has 200 '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"gone","kind":"configmaps"'
req POST /api/v1/namespaces/default/configmaps/named-in-path '{"metadata":{"name":"named-in-path"}}'
check "a POST on a built-in object's path is 405, kube's generic answer where go-restful has no route" code_has 405 '"message":"the server does not allow this method on the requested resource","reason":"MethodNotAllowed","details":{},"code":405'
req GET /apis/authorization.k8s.io/v1/selfsubjectaccessreviews
check "... as is a verb a built-in lacks (no resource-named message: that is the custom resource handler's)" code_has 405 '"message":"the server does not allow this method on the requested resource","reason":"MethodNotAllowed","details":{}'
req GET /api/v1/namespaces/default/configmaps/named-in-path/foo
check "an unknown subresource of a built-in is the generic 404, not its object's" code_has 404 '"message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404'
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"dupkey"},"data":{"k":"v"},"binaryData":{"k":"AA=="}}'
check "a ConfigMap key in both data and binaryData is 422" code_has 422 '"field":"data[k]"' 'Invalid value: \"k\": duplicate of key present in binaryData'

# create, get, list
CM='{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a1","labels":{"app":"x"}},"data":{"k":"v"}}'
req POST /api/v1/namespaces/default/configmaps "$CM"
check "create configmap is 201" code_is 201
RV1=$(jq_ "d['metadata']['resourceVersion']")
check "created object carries uid and resourceVersion" bash -c "[[ -n '$RV1' ]] && grep -q '\"uid\":' '$WORK/body'"
req POST /api/v1/namespaces/default/configmaps "$CM"
check "create again is 409 AlreadyExists" code_has 409 '"reason":"AlreadyExists"'
req GET /api/v1/namespaces/default/configmaps/a1
check "get is 200 with the stored resourceVersion" code_has 200 "\"resourceVersion\":\"$RV1\""
req GET /api/v1/namespaces/default/configmaps/nope
check "get missing is 404 NotFound" code_has 404 '"reason":"NotFound"' 'configmaps \"nope\" not found'
req POST /api/v1/namespaces/nosuch/configmaps "$CM"
check "create in a missing namespace is 404" code_has 404 'namespaces'

for i in $(seq -w 1 20); do
	req POST /api/v1/namespaces/default/configmaps "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"p$i\"},\"data\":{\"i\":\"$i\"}}"
done
req GET "/api/v1/namespaces/default/configmaps"
ALL=$(jq_ "','.join(i['metadata']['name'] for i in d['items'])")
# kube encodes a built-in list as a typed list: its items carry no kind
# and apiVersion (kubernetes#3030), where a GET of one object does
check "a built-in list's items carry no kind and apiVersion, as kube's" python3 -c "
import json; d=json.load(open('$WORK/body'))
assert d['kind']=='ConfigMapList' and d['apiVersion']=='v1' and len(d['items'])>=20, d
assert all('kind' not in i and 'apiVersion' not in i and list(i)[0]=='metadata' for i in d['items']), d['items'][0]"
pretty_get curl/8.1.2 "/api/v1/namespaces/default/configmaps?limit=2"
check "... indented too" python3 -c "
import json; b=open('$WORK/body').read(); d=json.loads(b)
assert b==json.dumps(d, indent=2) and all('kind' not in i for i in d['items']), b[:300]"
req GET "/api/v1/namespaces/default/configmaps/p01"
check "... while a GET of one has both" code_has 200 '{"kind":"ConfigMap","apiVersion":"v1","metadata":'
LISTRV=$(jq_ "d['metadata']['resourceVersion']")
# page through with limit 3
PAGED=
TOKEN=
PAGES=0
while :; do
	if [[ -n $TOKEN ]]; then
		req GET "/api/v1/namespaces/default/configmaps?limit=3&continue=$TOKEN"
	else
		req GET "/api/v1/namespaces/default/configmaps?limit=3"
	fi
	PAGES=$((PAGES + 1))
	PAGED+=$(jq_ "''.join(','+i['metadata']['name'] for i in d['items'])")
	TOKEN=$(jq_ "d['metadata'].get('continue','')")
	[[ -z $TOKEN || $PAGES -gt 20 ]] && break
	# writes between pages must not show up
	req POST /api/v1/namespaces/default/configmaps "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"zz$PAGES\"}}"
	req DELETE /api/v1/namespaces/default/configmaps/p20
done
check "pages with limit=3 concatenate to the full list, despite writes" [ "${PAGED#,}" == "$ALL" ]
check "remainingItemCount is exact on every page" python3 - "$URL" <<'PY'
import json, sys, urllib.request, urllib.parse
url = sys.argv[1] + "/api/v1/namespaces/default/configmaps"
total = len(json.load(urllib.request.urlopen(url))["items"])
seen, tok = 0, None
while True:
    q = "?limit=4" + ("&continue=" + urllib.parse.quote(tok) if tok else "")
    d = json.load(urllib.request.urlopen(url + q))
    seen += len(d["items"])
    tok = d["metadata"].get("continue")
    if not tok:
        break
    assert d["metadata"]["remainingItemCount"] == total - seen, (d["metadata"], total, seen)
assert seen == total
PY
check "a token altered or used in another namespace is counted anew, as kube counts every page (found by an audit)" python3 - "$URL" <<'PY'
import base64, json, sys, urllib.request, urllib.parse
url = sys.argv[1] + "/api/v1/namespaces/%s/configmaps"
def get(ns, q):
    return json.load(urllib.request.urlopen(url % ns + q))
def post(ns, body):
    r = urllib.request.Request(sys.argv[1] + "/api/v1/namespaces" + ns, json.dumps(body).encode(),
                               {"Content-Type": "application/json"})
    urllib.request.urlopen(r)
def enc(d):
    return base64.urlsafe_b64encode(json.dumps(d).encode()).decode().rstrip("=")
# another namespace holding four names after the first page's last one
second = get("default", "")["items"][1]["metadata"]["name"]
post("", {"metadata": {"name": "tokns"}})
for suffix in ("-1", "-2", "-3", "-4"):
    post("/tokns/configmaps", {"metadata": {"name": second + suffix}})
first = get("default", "?limit=2")
tok = first["metadata"]["continue"]
raw = json.loads(base64.urlsafe_b64decode(tok + "=" * (-len(tok) % 4)))
assert raw["start"].rstrip("\0") == second, raw
left = sum(1 for i in get("default", "")["items"] if i["metadata"]["name"] > second)
for n in (0, 1000000):
    d = get("default", "?limit=1&continue=" + urllib.parse.quote(enc(dict(raw, n=n))))
    assert d["metadata"].get("remainingItemCount", 0) == left - 1, (n, d["metadata"], left)
d = get("tokns", "?limit=1&continue=" + urllib.parse.quote(tok))
assert [i["metadata"]["name"] for i in d["items"]] == [second + "-1"], d["items"]
assert d["metadata"]["remainingItemCount"] == 3, d["metadata"]
PY
req GET "/api/v1/namespaces/default/configmaps?limit=5"
check "remainingItemCount is present" bash -c "python3 -c \"import json; d=json.load(open('$WORK/body')); assert d['metadata']['remainingItemCount'] > 0\""
req GET "/api/v1/namespaces/default/configmaps?resourceVersion=0&limit=1"
check "resourceVersion=0 ignores the limit, as kube's watch cache does: every item, no continue" python3 -c "
import json; d=json.load(open('$WORK/body'))
assert len(d['items']) > 1 and 'continue' not in d['metadata'] and 'remainingItemCount' not in d['metadata'], d['metadata']"
# The watch stays open (for 68 years): read its first event and hang up.
check "a watch with the largest timeoutSeconds starts (no overflow)" python3 - "$URL" <<'PY'
import sys, urllib.request
r = urllib.request.urlopen(sys.argv[1] + "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0&timeoutSeconds=9223372036854775807")
assert b'"type":"ADDED"' in r.readline()
PY
req GET "/api/v1/namespaces/default/configmaps?limit=3&continue=garbage!!"
check "a garbage continue token is 400" code_is 400
# %00 is not decoded: the handlers read C strings, and a NUL would cut the
# path short (namespaces/victim%00/configmaps/x deleted the namespace)
req POST /api/v1/namespaces '{"metadata":{"name":"victim"}}'
req DELETE "/api/v1/namespaces/victim%00/configmaps/anything"
check "a %00 in a namespace segment does not cut the path" code_has 404 'configmaps \"anything\" not found'
req GET /api/v1/namespaces/victim
check "... the namespace stays" code_has 200 '"phase":"Active"'
req GET "/api/v1/namespaces/default/configmaps/a%00b"
check "a name with %00 (or any '%') is kube's 400 of IsValidPathSegmentName" code_has 400 "Name parameter invalid: \\\"a%00b\\\": may not contain '%'"
req POST "/api/v1/namespaces/default/configmaps?dryRun=All%00x" '{"metadata":{"name":"dr00"}}'
check "... and dryRun=All%00x is no dry run but a 422" code_has 422 'dryRun: Unsupported value'
req GET "/api/v1/namespaces/default/configmaps/$(printf 'a%.0s' {1..1100})"
check "a name too long for any key finds nothing: 404" code_is 404
tok() { printf '%s' "$1" | base64 -w0 | tr '+/' '-_' | tr -d '='; }
req GET "/api/v1/namespaces/default/configmaps?limit=3&continue=$(tok '{"v":"v2","rv":5,"start":"x"}')"
check "a token of another version is 400 in storage.DecodeContinue's words" code_has 400 '"message":"invalid continue token: continue key is not valid: server does not recognize this encoded version v2"'
req GET "/api/v1/namespaces/default/configmaps?limit=3&continue=$(tok '{"v":"meta.k8s.io/v1","rv":5,"start":"../x"}')"
check "... and one whose start key path.Clean would change" code_has 400 '"message":"invalid continue token: continue key is not valid: ../x"'
req GET "/api/v1/namespaces/default/configmaps?limit=3&continue=$(tok '{"v":"meta.k8s.io/v1","rv":5,"start":""}')"
check "... and one with no start key" code_has 400 '"message":"invalid continue token: continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"'
# Names of 250 characters make continue tokens too long for the room
# do_list keeps before a page's items: such pages take the copying path.
LONG=$(printf 'l%.0s' $(seq 1 248))
req POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"long"}}'
for i in 1 2 3; do
	req POST /api/v1/namespaces/long/configmaps "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"$i-$LONG\"}}"
done
check "pages with long continue tokens walk the whole list" python3 - "$URL" <<'PY'
import json, sys, urllib.request, urllib.parse
url = sys.argv[1] + "/api/v1/namespaces/long/configmaps"
names, tok = [], None
while True:
    q = "?limit=1" + ("&continue=" + urllib.parse.quote(tok) if tok else "")
    d = json.load(urllib.request.urlopen(url + q))
    names += [i["metadata"]["name"] for i in d["items"]]
    tok = d["metadata"].get("continue")
    if not tok:
        break
    assert len(tok) > 384 and d["metadata"]["remainingItemCount"] == 3 - len(names), d["metadata"]
    assert d["kind"] == "ConfigMapList" and d["apiVersion"] == "v1"
assert [n[0] for n in names] == ["1", "2", "3"], names
PY
req GET "/api/v1/namespaces/default/configmaps?labelSelector=app%3Dx"
check "label selector selects" bash -c "[[ \$(python3 -c \"import json; print(len(json.load(open('$WORK/body'))['items']))\") == 1 ]]"
req GET "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dp03"
check "field selector selects" bash -c "[[ \$(python3 -c \"import json; print(len(json.load(open('$WORK/body'))['items']))\") == 1 ]]"
req GET "/api/v1/namespaces/default/configmaps?labelSelector=a%20in%20(b"
check "a bad label selector is 400" code_is 400

# conversions: Table (kubectl get) and PartialObjectMetadata (metadata informers)
TABLE='application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json'
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H "Accept: $TABLE" "$URL/api/v1/namespaces/default/configmaps?limit=2")
check "list as Table has kube's columns and a continue token" code_has 200 '"kind":"Table"' '"name":"Data"' '"continue":' '"kind":"PartialObjectMetadata"'
check "... typed and described as kube's printers: Age a string, ObjectMeta's docs" python3 -c "
import json; c=json.load(open('$WORK/body'))['columnDefinitions']
assert [(x['name'],x['type'],x['format']) for x in c]==[('Name','string','name'),('Data','string',''),('Age','string','')], c
assert c[0]['description'].startswith('Name must be unique within a namespace. Is required when creating resources'), c[0]
assert c[2]['description'].startswith('CreationTimestamp is a timestamp') and c[2]['description'].endswith('api-conventions.md#metadata'), c[2]"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H "Accept: $TABLE" "$URL/api/v1/namespaces/default/configmaps?limit=2&includeObject=None")
check "... includeObject=None: each row's object is null (a RawExtension, which omitempty keeps)" python3 -c "
import json; r=json.load(open('$WORK/body'))['rows']; assert r and all('object' in x and x['object'] is None for x in r), r"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H 'Accept: application/yaml;q=0.5, application/json;q=0.9' "$URL/api/v1/namespaces/default/configmaps/a1")
check "Accept clauses are taken by their q (goautoneg's order)" code_has 200 '{"kind":"ConfigMap"'
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H 'Accept: application/json;g=meta.k8s.io' "$URL/api/v1/namespaces/default/configmaps/a1")
check "... a conversion parameter kube cannot serve makes its clause unacceptable: 406" code_is 406
req POST /api/v1/namespaces/default/services '{"metadata":{"name":"selcol"},"spec":{"selector":{"tier":"b","app":"a"},"ports":[{"port":80}]}}'
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H "Accept: $TABLE" "$URL/api/v1/namespaces/default/services/selcol")
check "a Service's Selector column is sorted by key (labels.FormatLabels)" python3 -c "
import json; t=json.load(open('$WORK/body')); assert 'app=a,tier=b' in t['rows'][0]['cells'], t['rows']"
req DELETE /api/v1/namespaces/default/services/selcol
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H "Accept: $TABLE" "$URL/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
check "CRDs have kube's default table: Name, Created At (the timestamp)" python3 -c "
import json; t=json.load(open('$WORK/body')); c=t['columnDefinitions']
assert [(x['name'],x['type']) for x in c]==[('Name','string'),('Created At','date')], c"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H 'Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' "$URL/api/v1/namespaces/default/configmaps")
check "list as PartialObjectMetadataList" code_has 200 '"kind":"PartialObjectMetadataList"'
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H 'Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' "$URL/api/v1/namespaces/default/configmaps/a1")
check "get as PartialObjectMetadata drops the data" bash -c "grep -q '\"kind\":\"PartialObjectMetadata\"' '$WORK/body' && ! grep -q '\"data\"' '$WORK/body'"
# writes answer as the Accept asks too (kube's transformResponseObject):
# the metadata client's patches get metadata, not Secret data
PMA='Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json'
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H "$PMA" -H 'Content-Type: application/merge-patch+json' -X PATCH --data-binary '{"metadata":{"labels":{"pm":"1"}}}' "$URL/api/v1/namespaces/default/configmaps/a1")
check "a patch answers PartialObjectMetadata when asked" code_has 200 '"kind":"PartialObjectMetadata"' '"pm":"1"'
check "... without the object's data" bash -c "! grep -q '\"data\"' '$WORK/body'"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H 'Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json' -X DELETE "$URL/api/v1/namespaces/default/configmaps?labelSelector=nothing%3Dhere")
check "... and a deletecollection PartialObjectMetadataList" code_has 200 '"kind":"PartialObjectMetadataList"'
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H 'Accept: text/html' "$URL/api/v1/namespaces/default/configmaps/a1")
check "an Accept allowing neither JSON nor YAML is 406" code_is 406
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H 'Accept: application/yaml' "$URL/api/v1/namespaces/default/configmaps/a1")
check "YAML responses" code_has 200 'kind: ConfigMap'
req POST /api/v1/namespaces/default/configmaps "$(printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fromyaml\ndata:\n  k: v\n')" application/yaml
check "YAML request bodies" code_has 201 '"name":"fromyaml"'
# a write answers in YAML too when the Accept asks for it (kube's
# yaml_test.go: create and update, of an object and its /status)
yaml_write() { # METHOD PATH BODY CONTENT-TYPE
	CODE=$(curl -sS -o "$WORK/body" -D "$WORK/headers" -w '%{http_code}' -X "$1" \
		-H "Content-Type: $4" -H 'Accept: application/yaml' --data-binary "$3" "$URL$2")
}
yaml_answer() { # CODE LINE...: the code, a YAML Content-Type and each line
	local c=$1 l
	shift
	[[ $CODE == "$c" ]] && grep -qi '^content-type: application/yaml' "$WORK/headers" || return 1
	for l in "$@"; do grep -qxF -- "$l" "$WORK/body" || return 1; done
}
yaml_write POST /api/v1/namespaces/default/configmaps $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yw\ndata:\n  k: v1\n' application/yaml
check "a create with Accept: application/yaml answers YAML" yaml_answer 201 'kind: ConfigMap' '  k: v1'
yaml_write PUT /api/v1/namespaces/default/configmaps/yw $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yw\ndata:\n  k: v2\n' application/yaml
check "... an update" yaml_answer 200 '  k: v2'
yaml_write PATCH /api/v1/namespaces/default/configmaps/yw '{"data":{"k":"v3"}}' application/merge-patch+json
check "... a patch" yaml_answer 200 '  k: v3'
yaml_write PATCH '/api/v1/namespaces/default/configmaps/yw?fieldManager=y&force=true' $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yw\ndata:\n  k: v4\n' application/apply-patch+yaml
check "... an apply" yaml_answer 200 '  k: v4'
yaml_write PUT /api/v1/namespaces/default/status $'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: default\nstatus:\n  phase: Active\n' application/yaml
check "... and a /status update" yaml_answer 200 'kind: Namespace' '  phase: Active'

# update, conflict, patch
req GET /api/v1/namespaces/default/configmaps/a1
OBJ=$(cat "$WORK/body")
NEW=$(python3 -c "import json,sys; d=json.loads(sys.argv[1]); d['data']['k']='v2'; print(json.dumps(d))" "$OBJ")
req PUT /api/v1/namespaces/default/configmaps/a1 "$NEW"
check "update is 200" code_is 200
req PUT /api/v1/namespaces/default/configmaps/a1 "$NEW"
check "stale update is 409 Conflict" code_has 409 '"reason":"Conflict"'
# An update that changes nothing writes nothing: the same resourceVersion
# comes back (kube skips no-op writes); a dry run of a change returns the
# changed object at the current resourceVersion and writes nothing.
req GET /api/v1/namespaces/default/configmaps/a1
CUR=$(cat "$WORK/body")
RV1=$(jq_ "d['metadata']['resourceVersion']")
req PUT /api/v1/namespaces/default/configmaps/a1 "$CUR"
check "a no-op update is 200 with the resourceVersion unchanged" \
	code_has 200 "\"resourceVersion\":\"$RV1\"" '"k":"v2"'
# The same object with its keys in another order (the Python client sends
# a read object back sorted) is no change either: kube re-encodes it.
SORTED=$(python3 -c "import json,sys; print(json.dumps(json.loads(sys.argv[1]), sort_keys=True))" "$CUR")
req PUT /api/v1/namespaces/default/configmaps/a1 "$SORTED"
check "a no-op update with keys reordered keeps the resourceVersion" \
	code_has 200 "\"resourceVersion\":\"$RV1\""
req PATCH /api/v1/namespaces/default/configmaps/a1 '[{"op":"remove","path":"/data"},{"op":"add","path":"/data","value":{"k":"v2"}}]' application/json-patch+json
check "a JSON patch that puts the same data back keeps it too" \
	code_has 200 "\"resourceVersion\":\"$RV1\""
DRY=$(python3 -c "import json,sys; d=json.loads(sys.argv[1]); d['data']['k']='v3'; print(json.dumps(d))" "$CUR")
req PUT "/api/v1/namespaces/default/configmaps/a1?dryRun=All" "$DRY"
check "a dry-run update answers the change at the same resourceVersion" \
	code_has 200 "\"resourceVersion\":\"$RV1\"" '"k":"v3"'
req GET /api/v1/namespaces/default/configmaps/a1
check "... and wrote nothing" code_has 200 "\"resourceVersion\":\"$RV1\"" '"k":"v2"'
REAL=$(python3 -c "import json,sys; d=json.loads(sys.argv[1]); d['metadata']['annotations']={'touched':'1'}; print(json.dumps(d))" "$CUR")
req PUT /api/v1/namespaces/default/configmaps/a1 "$REAL"
check "a real change gets a new resourceVersion" \
	bash -c "grep -q '\"touched\":\"1\"' '$WORK/body' && ! grep -q '\"resourceVersion\":\"$RV1\"' '$WORK/body'"
# Unconditional updates (no resourceVersion) racing each other all land:
# kube re-applies such an update on the new object instead of a 409.
# bg_write METHOD PATH BODY OUT: the request in the background, its status
# code appended to OUT; its pid is added to the caller's pids array.
bg_write() {
	curl -sS -o /dev/null -w '%{http_code}\n' -X "$1" -H 'Content-Type: application/json' \
		--data-binary "$3" "$URL$2" >>"$4" &
	pids+=($!)
}
race_puts() {
	local i pids=()
	: >"$WORK/race"
	for i in $(seq 1 40); do
		bg_write PUT /api/v1/namespaces/default/configmaps/race \
			"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"race\"},\"data\":{\"i\":\"$i\"}}" "$WORK/race"
	done
	wait "${pids[@]}"
	local bad
	bad=$(grep -vc '^200$' "$WORK/race")
	[[ $bad == 0 ]] || { echo "#   $bad of 40 not 200: $(sort "$WORK/race" | uniq -c | tr '\n' ' ')"; return 1; }
}
req POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"race"}}'
check "40 racing unconditional updates are all 200" race_puts
req PATCH /api/v1/namespaces/default/configmaps/a1 '{"data":{"m":"1"}}' application/merge-patch+json
check "merge patch is 200 and merges" code_has 200 '"m":"1"' '"k":"v2"'
req PATCH /api/v1/namespaces/default/configmaps/a1 '[{"op":"replace","path":"/data/m","value":"2"}]' application/json-patch+json
check "json patch is 200" code_has 200 '"m":"2"'
req PATCH /api/v1/namespaces/default/configmaps/a1 '[{"op":"test","path":"/data/m","value":"other"}]' application/json-patch+json
check "a json patch whose test fails is kube's generic 422, details {}" code_has 422 '"message":"the server rejected our request due to an error in our request","reason":"Invalid","details":{},"code":422'
req PATCH /api/v1/namespaces/default/configmaps/a1 '[{"op":"remove","path":"/data/nothere"}]' application/json-patch+json
check "... as does removing a missing member" code_has 422 '"reason":"Invalid","details":{}'
req PATCH /api/v1/namespaces/default/configmaps/a1 '[{"op":"bogus","path":"/data/x"}]' application/json-patch+json
check "... as does an unknown op (evanphx/json-patch's Apply error)" code_has 422 '"reason":"Invalid","details":{}'
req PATCH /api/v1/namespaces/default/configmaps/a1 '[{"op":"replace","path":"","value":{}}]' application/json-patch+json
check "... replacing the whole document by an empty object leaves no name (evanphx/json-patch v4's replace of the root)" code_has 400 'the name of the object (a1 based on URL) was undeterminable: name must be provided'
req PATCH /api/v1/namespaces/default/configmaps/a1 '[{"op":"replace","path":"","value":7}]' application/json-patch+json
check "... by a scalar is its 422" code_has 422 '"reason":"Invalid","details":{}'
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"jp4"},"data":{"n":"x"}}'
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"smpk"}}'
req PATCH /api/v1/namespaces/default/configmaps/smpk '{"kind":"Namespace","apiVersion":"v2","data":{"k":"1"}}' application/strategic-merge-patch+json
check "a strategic merge patch changing kind and apiVersion: lost, as kube decodes it into the endpoint's type" code_has 200 '"kind":"ConfigMap","apiVersion":"v1"' '"k":"1"'
req PATCH /api/v1/namespaces/default/configmaps/jp4 '[{"op":"replace","path":"/metadata/labels","value":{"a":"b"}},{"op":"add","path":"/data/nv"},{"op":"copy","from":"/data/nope","path":"/data/c"},{"op":"test","path":"/data/missing","value":null}]' application/json-patch+json
check "JSON patch as kube's evanphx/json-patch v4: a replace of a missing member adds it, no value is null, a missing member copies and tests as null" code_has 200 '"labels":{"a":"b"}' '"data":{"c":"","n":"x","nv":""}'
req PATCH '/api/v1/namespaces/default/configmaps/jp4?fieldValidation=Strict' '[{"op":"add","path":"/data/s","value":"1","extra":1}]' application/json-patch+json
check "a JSON patch operation with a member kube's jsonPatchOp lacks: Strict's 422 on patch" code_has 422 'strict decoding error: json patch unknown field \"[0].extra\"'
req PATCH /api/v1/namespaces/default/configmaps/a1 '[{"op":"test","path":"","value":{}},{"op":"remove","path":"/data/m"}]' application/json-patch+json
check "... which only a test may name" code_has 422 '"reason":"Invalid"'
req PATCH /api/v1/namespaces/default/configmaps/a1 '[{"op":"add","path":"/metadata/labels","value":{"i":"1"}},{"op":"add","path":"/metadata/finalizers","value":["a/b","c/d"]},{"op":"remove","path":"/metadata/finalizers/-1"},{"op":"add","path":"/metadata/finalizers/00","value":"e/f"}]' application/json-patch+json
check "array indices as kube's library reads them: -1 the last, 00 the first" code_has 200 '"finalizers":["e/f","a/b"]'
req PATCH /api/v1/namespaces/default/configmaps/a1 '[{"op":"remove","path":"/metadata/finalizers"}]' application/json-patch+json
req PATCH /api/v1/namespaces/default/configmaps/a1 '{"op":"add"}' application/json-patch+json
check "a json patch that is not a list is 400 in the words of kube's strict decoding" code_has 400 '"message":"error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"'
req PATCH /api/v1/namespaces/default/configmaps/a1 '[{"op":"add","path":7}]' application/json-patch+json
check "... and so is a path that is not a string" code_has 400 'error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.path of type string'
req PATCH /api/v1/namespaces/default/configmaps/a1 'null' application/json-patch+json
check "a null json patch is no operations: 200" code_has 200 '"m":"2"'
req PATCH /api/v1/namespaces/default/configmaps/a1 '[{"op":"add","path":"/data/x","value":"1"}]' application/merge-patch+json
check "a merge patch that is a list is 400, kube's decoding into a map (fieldValidation Warn)" code_has 400 '"message":"error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"'
req PATCH /api/v1/namespaces/default/configmaps/a1 '5' application/strategic-merge-patch+json
check "... a strategic merge patch that is a number too" code_has 400 '"message":"json: cannot unmarshal number into Go value of type map[string]interface {}"'
req PATCH /api/v1/namespaces/default/configmaps/a1 'null' application/merge-patch+json
check "... a null merge patch is json-patch's ErrBadJSONPatch" code_has 400 '"message":"Invalid JSON Patch"'
req PATCH /api/v1/namespaces/default/configmaps/a1 'null' application/strategic-merge-patch+json
check "... a null strategic merge patch changes nothing" code_has 200 '"m":"2"'
# a patch Go's decoder refuses, in each of kube's patchers' words: a
# strict decoding (Warn, the default, or Strict) prefixes a JSON or merge
# patch's error; json-patch's MergePatch has only ErrBadJSONPatch
req PATCH /api/v1/namespaces/default/configmaps/a1 '{"data":' application/merge-patch+json
check "a malformed merge patch is 400 with Go's error, strictly decoded" code_has 400 '"message":"error decoding patch: unexpected end of JSON input"'
req PATCH '/api/v1/namespaces/default/configmaps/a1?fieldValidation=Ignore' '{"data":' application/merge-patch+json
check "... and json-patch's ErrBadJSONPatch under Ignore" code_has 400 '"message":"Invalid JSON Patch"'
req PATCH /api/v1/namespaces/default/configmaps/a1 '{"data" 1}' application/strategic-merge-patch+json
check "a malformed strategic merge patch is Go's error as it stands" code_has 400 '"message":"invalid character '"'1'"' after object key"'
req PATCH '/api/v1/namespaces/default/configmaps/a1?fieldValidation=Strict' 'xyz' application/json-patch+json
check "a malformed JSON patch under Strict" code_has 400 '"message":"error decoding patch: invalid character '"'x'"' looking for beginning of value"'
req PATCH '/api/v1/namespaces/default/configmaps/a1?fieldValidation=Ignore' '[{"op":' application/json-patch+json
check "... and under Ignore (json-patch's DecodePatch)" code_has 400 '"message":"unexpected end of JSON input"'
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X PATCH -H 'Content-Type: application/merge-patch+json' \
	--data-binary '' "$URL/api/v1/namespaces/default/configmaps/a1")
check "an empty merge patch is Go's unexpected end" code_has 400 '"message":"error decoding patch: unexpected end of JSON input"'
req PATCH /api/v1/namespaces/default/configmaps/a1 '{"data":{"s":"3"}}' application/strategic-merge-patch+json
check "strategic merge patch is 200" code_has 200 '"s":"3"'
req PATCH /api/v1/namespaces/default/configmaps/a1 '{"data":{}}' text/plain
check "patch with an unknown type is 415" code_is 415
# a Service's and a Namespace's status conditions merge by type
# (patchMergeKey), as every merge-keyed list does; they were replaced whole
req POST /api/v1/namespaces/default/services '{"metadata":{"name":"smpc"},"spec":{"ports":[{"port":80}]}}'
C2='[{"type":"A","status":"True","reason":"R","message":"m","lastTransitionTime":"2026-01-01T00:00:00Z"},{"type":"B","status":"False","reason":"R","message":"m","lastTransitionTime":"2026-01-01T00:00:00Z"}]'
req PATCH /api/v1/namespaces/default/services/smpc/status '{"status":{"conditions":'"$C2"'}}' application/merge-patch+json
req PATCH /api/v1/namespaces/default/services/smpc/status '{"status":{"conditions":[{"type":"B","status":"True"}]}}' application/strategic-merge-patch+json
check "a strategic merge patch of a Service's status conditions merges by type" [ "$(jq_ "[(c['type'], c['status']) for c in d['status']['conditions']]")" == "[('A', 'True'), ('B', 'True')]" ]
req PATCH /api/v1/namespaces/default/services/smpc/status '{"status":{"conditions":[{"type":"A","$patch":"delete"}]}}' application/strategic-merge-patch+json
check "... and deletes one by its type" [ "$(jq_ "[c['type'] for c in d['status']['conditions']]")" == "['B']" ]
req DELETE /api/v1/namespaces/default/services/smpc

# bad input
req POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"'
check "malformed JSON is 400" code_is 400
# kube reads every JSON body first for its apiVersion and kind (json
# MetaFactory.Interpret, Go's json.Unmarshal), and transformDecodeError
# names the kind and quotes the body: its first 30 bytes when it starts
# with '{', in hex otherwise
UNREC='the object provided is unrecognized (must be of type ConfigMap): couldn'"'"'t get version/kind; json parse error: '
check "... in Go's words, with the body's first 30 bytes" code_has 400 '"reason":"BadRequest"' \
	"\"message\":\"${UNREC}unexpected end of JSON input ({\\\"apiVersion\\\":\\\"v1\\\",\\\"kind\\\":\\\"Con ...)\""
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	--data-binary '' "$URL/api/v1/namespaces/default/configmaps")
check "an empty JSON body is 400: Go's unexpected end, quoting <empty>" code_has 400 "${UNREC}unexpected end of JSON input (<empty>)"
# Go's decoder reads a string's invalid UTF-8 and lone surrogate escapes
# as U+FFFD where jansson refuses them: kube stores such a ConfigMap
req POST /api/v1/namespaces/default/configmaps $'{"metadata":{"name":"utf","annotations":{"a":"x\xffy"}},"data":{"k":"\\ud800z","p":"\\ud83d\\ude00"}}'
check "invalid UTF-8 and a lone surrogate in strings are U+FFFD, as Go reads them: 201" code_has 201 $'"a":"x\xef\xbf\xbdy"' $'"k":"\xef\xbf\xbdz"' $'"p":"\xf0\x9f\x98\x80"'
req PATCH /api/v1/namespaces/default/configmaps/utf $'{"data":{"m":"\xc0\x80"}}' application/merge-patch+json
check "... in a patch too, one U+FFFD per byte of an overlong form" code_has 200 $'"m":"\xef\xbf\xbd\xef\xbf\xbd"'
req DELETE /api/v1/namespaces/default/configmaps/utf
req POST /api/v1/namespaces/default/configmaps 'xyz'
check "a body that is no JSON is 400 on its first byte, quoted in hex" code_has 400 "${UNREC}invalid character 'x' looking for beginning of value (78797a)"
req POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"t"}} x'
check "... so is text after the object" code_has 400 "${UNREC}invalid character 'x' after top-level value"
req POST /api/v1/namespaces/default/configmaps '{"a":1 "b":2}'
check "... and a missing comma" code_has 400 "${UNREC}invalid character '\\\"' after object key:value pair ({\\\"a\\\":1 \\\"b\\\":2})"
req POST /api/v1/namespaces/default/configmaps '[1,2]'
check "a JSON array is 400: it does not decode into {apiVersion, kind}" code_has 400 \
	"${UNREC}json: cannot unmarshal array into Go value of type struct { APIVersion string \\\"json:\\\\\\\"apiVersion,omitempty\\\\\\\"\\\"; Kind string \\\"json:\\\\\\\"kind,omitempty\\\\\\\"\\\" } (5b312c325d)"
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"k5"},"kind":5}'
check "a kind that is not a string is 400 before anything else" code_has 400 "${UNREC}json: cannot unmarshal number into Go struct field .kind of type string"
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"k6"},"APIVERSION":["v1"]}'
check "... so is an apiVersion in any case" code_has 400 "${UNREC}json: cannot unmarshal array into Go struct field .apiVersion of type string"
req GET /api/v1/namespaces/default/configmaps/k5
check "... and nothing was created" code_is 404
req POST /api/v1/namespaces/default/configmaps 'null'
check "a null body decodes as an empty object: 422 on the missing name" code_has 422 'metadata.name: Required value: name or generateName is required'
req POST /api/v1/namespaces/default/configmaps $'{"a\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9":'
check "a quote cut inside a character ends in U+FFFD, as Go writes it" code_has 400 $'\xc3\xa9\xc3\xa9\xef\xbf\xbd ...)'
# a YAML body is turned into JSON first, then read the same way; the
# summary quotes the YAML body, in hex unless it starts with '{'
req POST /api/v1/namespaces/default/configmaps $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y1\n data: x' application/yaml
check "malformed YAML is 400 in go-yaml's words, the body quoted in hex" code_has 400 \
	"the object provided is unrecognized (must be of type ConfigMap): yaml: line 4: did not find expected key (61706956657273696f6e3a2076310a6b696e643a20436f6e6669674d6170 ...)"
req POST /api/v1/namespaces/default/configmaps $'- a\n- b' application/yaml
check "a YAML list is 400: it does not decode into {apiVersion, kind}" code_has 400 "${UNREC}json: cannot unmarshal array into Go value of type struct"
req POST /api/v1/namespaces/default/configmaps $'kind: [1]\nmetadata: {name: y2}' application/yaml
check "... nor does a YAML kind that is a list" code_has 400 "${UNREC}json: cannot unmarshal array into Go struct field .kind of type string"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X POST -H 'Content-Type: application/yaml' \
	--data-binary '' "$URL/api/v1/namespaces/default/configmaps")
check "an empty YAML body is null, an empty object: 422 on the missing name" code_has 422 'metadata.name: Required value'
req PUT /api/v1/namespaces/default/configmaps/a1 '{"metadata":{"name":"a1"'
check "an update's malformed body is the same 400" code_has 400 "${UNREC}unexpected end of JSON input"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X DELETE -H 'Content-Type: application/json' \
	--data-binary '{"gracePeriodSeconds":' "$URL/api/v1/namespaces/default/configmaps/a1")
check "a malformed DeleteOptions body is 400 with the error as it stands (kube PR 133358)" code_has 400 \
	'"message":"couldn'"'"'t get version/kind; json parse error: unexpected end of JSON input"'
req GET /api/v1/namespaces/default/configmaps/a1
check "... and deletes nothing" code_is 200
# names: the length and the pattern are separate causes, length first
# (utilvalidation); Services are DNS-1035 labels (ValidateServiceName)
L254=$(printf 'a%.0s' $(seq 254))
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"'"$L254"'"}}'
check "a 254-character name is 422 on its length alone" code_has 422 'metadata.name: Invalid value: \"'"$L254"'\": must be no more than 253 characters'
check "... (the pattern holds)" bash -c "! grep -q 'RFC 1123' '$WORK/body'"
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"a..b"}}'
check "a name with an empty DNS label is 422" code_has 422 'a lowercase RFC 1123 subdomain must consist of'
req POST /api/v1/namespaces/default/services '{"metadata":{"name":"1abc"},"spec":{"ports":[{"port":80}]}}'
check "a Service name must be a DNS-1035 label (starting with a letter)" code_has 422 'metadata.name: Invalid value: \"1abc\": a DNS-1035 label must consist of lower case alphanumeric characters or'
req POST /api/v1/namespaces/default/services '{"metadata":{"name":"a.b"},"spec":{"ports":[{"port":80}]}}'
check "... without dots" code_has 422 'a DNS-1035 label'
# Service defaults and the create's status reset (SetDefaults_Service,
# PrepareForCreate, the allocator's families)
req POST /api/v1/namespaces/default/services '{"metadata":{"name":"hl1"},"spec":{"clusterIP":"None","sessionAffinity":"ClientIP","ports":[{"port":80}]},"status":{"loadBalancer":{"ingress":[{"ip":"1.2.3.4"}]}}}'
check "a headless Service without a selector: clusterIPs [None], RequireDualStack over both families" code_has 201 '"clusterIPs":["None"]' '"ipFamilyPolicy":"RequireDualStack"' '"ipFamilies":["IPv4","IPv6"]'
check "... ClientIP affinity times out after 10800 s" has '"sessionAffinityConfig":{"clientIP":{"timeoutSeconds":10800}}'
check "... and the status sent is reset" has '"status":{"loadBalancer":{}}'
req POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}'
check "a create with neither name nor generateName is 422 on an empty name, as kube's" code_has 422 'ConfigMap \"\" is invalid: metadata.name: Required value: name or generateName is required'
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"","generateName":""}}'
check "... also when both are empty strings (their members are dropped before the message is written)" code_has 422 'ConfigMap \"\" is invalid: metadata.name: Required value: name or generateName is required'
# jansson skips a NUL byte between tokens (kube refuses it); the strict
# field scan of such a body once spun on it forever
printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"nul"},"zz":[1\000]}' >"$WORK/nul.json"
CODE=$(curl -sS -m 10 -o "$WORK/body" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	--data-binary @"$WORK/nul.json" "$URL/api/v1/namespaces/default/configmaps?fieldValidation=Strict")
check "a NUL byte between JSON tokens is 400, not a spinning thread" code_has 400 "invalid character"
# kube keeps a NUL inside a string; lapis refuses it alike in JSON, YAML
# (and protobuf, test_pb.c) rather than store what it cannot read back
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"nul","annotations":{"a":"\u0000"}}}'
check "a \\u0000 in a JSON string is 400 in lapis's words" code_has 400 'error decoding the request body: a string with a NUL character is not supported'
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nul\n  annotations:\n    a: "\\0"\n' >"$WORK/nul.yaml"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X POST -H 'Content-Type: application/yaml' \
	--data-binary @"$WORK/nul.yaml" "$URL/api/v1/namespaces/default/configmaps")
check "... and a \"\\0\" in YAML is 400 too (it was stored, then unreadable)" code_has 400 'error decoding the request body: a string with a NUL character is not supported'
# a ConfigMap p with data {k: "a\0"} in kube's protobuf envelope
printf 'k8s\000\n\017\n\002v1\022\tConfigMap\022\016\n\003\n\001p\022\007\n\001k\022\002a\000' >"$WORK/nul.pb"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X POST -H 'Content-Type: application/vnd.kubernetes.protobuf' \
	--data-binary @"$WORK/nul.pb" "$URL/api/v1/namespaces/default/configmaps")
check "... and in a protobuf body" code_has 400 'error decoding the request body: a string with a NUL character is not supported'
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X PATCH -H 'Content-Type: application/apply-patch+yaml' \
	--data-binary @"$WORK/nul.yaml" "$URL/api/v1/namespaces/default/configmaps/nul?fieldManager=t")
check "... and in a server-side apply" code_has 400 'error decoding YAML: error converting YAML to JSON: yaml: a string with a NUL character is not supported'
req PATCH /api/v1/namespaces/default/configmaps/nul '{"data":{"b":"\u0000"}}' application/merge-patch+json
check "... and in a merge patch" code_has 400 'error decoding patch: a string with a NUL character is not supported'
for n in nul p; do
	req GET /api/v1/namespaces/default/configmaps/$n
	check "... and nothing was stored ($n)" code_is 404
done
req POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}'
check "wrong kind for the path is 400" code_is 400
# in the versioning decoder's words (transformDecodeError): the body's
# kind is made in its version and cannot convert to the endpoint's, or
# kube's scheme has no such kind there
check "... the conversion kube cannot make" has 'Secret in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion'
req POST /apis/coordination.k8s.io/v1/namespaces/default/leases '{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"name":"x"}}'
check "... a core list to leases" code_has 400 'ConfigMapList in version \"v1\" cannot be handled as a Lease: converting (v1.ConfigMapList) to (coordination.Lease): unknown conversion'
req POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"Gadget","metadata":{"name":"x"}}'
check "... a kind the scheme lacks" code_has 400 'Gadget in version \"v1\" cannot be handled as a ConfigMap: no kind \"Gadget\" is registered for version \"v1\" in scheme \"pkg/api/legacyscheme/scheme.go:30\"'
req PUT /api/v1/namespaces/default/configmaps/a1 '{"apiVersion":"v2","kind":"Secret","metadata":{"name":"a1"}}'
check "... or lacks in that version (an update)" code_has 400 'Secret in version \"v2\" cannot be handled as a ConfigMap: no kind \"Secret\" is registered for version \"v2\"'
req PATCH /api/v1/namespaces/default/configmaps/a1 '{"kind":"Secret"}' application/merge-patch+json
check "... and a merge patch making another kind is the patch's 422 with that error" code_has 422 '"field":"patch"' 'converting (v1.Secret) to (core.ConfigMap): unknown conversion'
req POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"}}'
check "an invalid name is 422 Invalid" code_has 422 '"field":"metadata.name"'
check "... in kube's words, examples and regular expression included" has "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
req POST /api/v1/namespaces '{"metadata":{"name":"Bad.ns","labels":{"a b":"c d"}}}'
check "a namespace's name is a DNS-1123 label, and labels are checked, in kube's words" code_has 422 \
	"a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')" \
	"name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')" \
	"a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
req POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"badkeys"},"data":{"ok":"1","a b":"2"},"binaryData":{"c/d":"AA=="}}'
check "invalid data and binaryData keys are 422 on each key's path" code_has 422 '"field":"data[a b]"' '"field":"binaryData[c/d]"' 'Invalid value: \"a b\": a valid config key must consist of alphanumeric characters'
check "the valid key got no cause" bash -c "! grep -q 'data\[ok\]' '$WORK/body'"
req GET /api/v1/namespaces/default/configmaps/badkeys
check "nothing was stored for invalid keys" code_is 404
head -c 5242880 /dev/zero | tr '\0' 'a' > "$WORK/big"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X POST -H 'Content-Type: application/json' --data-binary @"$WORK/big" "$URL/api/v1/namespaces/default/configmaps")
check "a 5 MiB body is 413" code_is 413
# rawhttp.exchange(raw): raw bytes to the server on a connection of their
# own, and all it answers until it closes (the checks below send heads no
# HTTP client would)
cat >"$WORK/rawhttp.py" <<PY
import os, socket
host, port = "$URL".split('//')[1].split(':')
def sockets(pid):
    n = 0
    for f in os.listdir("/proc/%s/fd" % pid):
        try:
            n += os.readlink("/proc/%s/fd/%s" % (pid, f)).startswith("socket:")
        except OSError:
            pass
    return n
def exchange(raw):
    s = socket.create_connection((host, int(port)), timeout=30)
    s.sendall(raw)
    out = b''
    while True:
        d = s.recv(65536)
        if not d:
            return out
        out += d
PY
# Framing refused from the headers, before any body is read: Content-Length
# headers that disagree (libmicrohttpd takes the first, so the rest of the
# body would be run as the next request: here a DELETE), and a transfer
# coding other than chunked (which libmicrohttpd waited on until the idle
# timeout), as Go's server does.
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"smuggled"}}'
check "framing: two Content-Lengths are 400, a transfer coding but chunked 501" python3 - "$URL" "$WORK" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from rawhttp import exchange
inner = b'DELETE /api/v1/namespaces/default/configmaps/smuggled HTTP/1.1\r\nHost: x\r\n\r\n'
r = exchange(b'GET /readyz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: %d\r\n\r\n' % len(inner) + inner)
assert r.startswith(b'HTTP/1.1 400') and b'multiple Content-Length' in r and r.count(b'HTTP/1.1') == 1, r[:400]
for te in (b'gzip, chunked', b'identity'):
    r = exchange(b'POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ' + te + b'\r\nContent-Type: application/json\r\n\r\n{}')
    assert r.startswith(b'HTTP/1.1 501') and b'Unsupported transfer encoding' in r, r[:400]
PY
req GET /api/v1/namespaces/default/configmaps/smuggled
check "... and the DELETE in the first one's body never ran" code_is 200
# A control byte in the request line's URI is 400, as Go's
# url.ParseRequestURI refuses it: a NUL cut libmicrohttpd's URI string
# short, and a DELETE of "smuggled\0x" deleted smuggled (found by an audit)
check "a control byte in the URL is 400 and acts on nothing" python3 - "$URL" "$WORK" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from rawhttp import exchange
cm = b'/api/v1/namespaces/default/configmaps'
for method, path in ((b'DELETE', cm + b'/smuggled\x00x'), (b'GET', cm + b'?labelSelector=a\x00b'),
                     (b'GET', cm + b'/a\x01b'), (b'GET', cm + b'/a\x7fb'), (b'GET', cm + b'?limit=1\x1f')):
    r = exchange(method + b' ' + path + b' HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    assert r.startswith(b'HTTP/1.1 400') and b'invalid control character in URL' in r, (path, r[:300])
r = exchange(b'GET ' + cm + b'/smuggled HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
assert r.startswith(b'HTTP/1.1 200'), r[:300]
PY
# What Go's server refuses in a request's head before kube sees it
# (readRequest): a method that is not a token, HTTP/1.1 without one Host
# or with a bad one, a header name that is not a token or a value with a
# control byte (400, Go's words), a folded header line (400: RFC 9112
# allows it, and libmicrohttpd 0.9.75 glued the fold onto the header's
# name), an Expect other than 100-continue (417; a list holding it too,
# as libmicrohttpd would send no 100 Continue for it)
check "a bad method, Host or header is 400 and a bad Expect 417, acting on nothing" python3 - "$URL" "$WORK" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from rawhttp import exchange
cm = b'/api/v1/namespaces/default/configmaps/smuggled'
D = b'DELETE ' + cm + b' HTTP/1.1'
H = D + b'\r\nHost: x\r\n'
for head, code, msg in (
        (b'DEL(TE ' + cm + b' HTTP/1.1\r\nHost: x', b'400', b'invalid method'),
        (b'DEL\x01TE ' + cm + b' HTTP/1.1\r\nHost: x', b'400', b'invalid method'),
        (D, b'400', b'missing required Host header'),
        (H + b'Host: y', b'400', b'too many Host headers'),
        (D + b'\r\nHost: a b', b'400', b'malformed Host header'),
        (D + b'\r\nHost: x/y', b'400', b'malformed Host header'),
        (H + b'X\x01Y: 1', b'400', b'invalid header name'),
        (H + b'X(Y): 1', b'400', b'invalid header name'),
        (H + b'X-Y: a\x01b', b'400', b'invalid header value'),
        (H + b'X-Y: a\x7fb', b'400', b'invalid header value'),
        (H + b'X-Y: a\x00b\r\nAccept: */*', b'400', b'invalid header value'),
        (H + b'Accept: */*\r\nX-Y: a\x00b', b'400', b'invalid header value'),
        (H + b'X-Y: 1\r\n 2', b'400', b'obsolete line folding is not supported'),
        (H + b'Accept: application/json\r\n\t,*/*', b'400', b'obsolete line folding is not supported'),
        (D + b'\r\n: v\r\nHost: x', b'400', b'invalid header name'),
        (H + b'Expect: 200-ok', b'417', b'Expectation Failed'),
        (H + b'Expect: 100-continue, x', b'417', b'Expectation Failed')):
    r = exchange(head + b'\r\nConnection: close\r\n\r\n')
    assert r.startswith(b'HTTP/1.1 ' + code) and msg in r and b'"kind":"Status"' in r, (head, r[:300])
# what Go lets through: HTTP/1.0 without Host, an IPv6 Host with a port,
# a Host with trailing blanks (Go trims them), a tab and UTF-8 in a value, an empty Expect and 100-continue in any case
for head in (b'GET ' + cm + b' HTTP/1.0',
             b'GET ' + cm + b' HTTP/1.1\r\nHost: [::1]:6443',
             b'GET ' + cm + b' HTTP/1.1\r\nHost: x \t',
             b'GET ' + cm + b' HTTP/1.1\r\nHost: x\r\nX-Y: caf\xc3\xa9\tb',
             b'GET ' + cm + b' HTTP/1.1\r\nHost: x\r\nExpect:',
             b'GET ' + cm + b' HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue'):
    r = exchange(head + b'\r\nConnection: close\r\n\r\n')
    assert b'HTTP/1.1 200 OK' in r and b'"name":"smuggled"' in r, (head, r[:300])
PY
# a protobuf body of a version kube's scheme lacks is its 400
# (transformDecodeError), not a 415: a ConfigMap p in "v2"
printf 'k8s\000\n\017\n\002v2\022\tConfigMap\022\005\n\003\n\001p' >"$WORK/v2.pb"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X POST -H 'Content-Type: application/vnd.kubernetes.protobuf' \
	--data-binary @"$WORK/v2.pb" "$URL/api/v1/namespaces/default/configmaps")
check "a protobuf ConfigMap in version v2 is kube's 400" code_has 400 'ConfigMap in version \"v2\" cannot be handled as a ConfigMap: no kind \"ConfigMap\" is registered for version \"v2\"'
# the 1 MiB limit on data (kube's MaxSecretSize): a Secret's counted in
# decoded bytes (base64 padding holds none), a ConfigMap's on field "[]"
python3 - "$WORK" <<'PY'
import base64, json, sys
w = sys.argv[1]
def cm(name, n):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "x" * n}}
def sec(name, n):
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "data": {"k": base64.b64encode(b"y" * n).decode()}}
for f, o in (("cm-max", cm("cm-max", 1048576)), ("cm-over", cm("cm-over", 1048577)),
             ("sec-max", sec("sec-max", 1048576)), ("sec-over", sec("sec-over", 1048577))):
    open(f"{w}/{f}.json", "w").write(json.dumps(o))
PY
post_file() {
	CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
		--data-binary @"$WORK/$2.json" "$URL/api/v1/namespaces/default/$1")
}
post_file configmaps cm-max
check "a ConfigMap of exactly 1 MiB of data is created" code_is 201
post_file configmaps cm-over
check "... one byte more is 422 on field [] (kube's NewPath(\"\"))" code_has 422 '[]: Too long: may not be more than 1048576 bytes'
post_file secrets sec-max
check "a Secret of exactly 1 MiB of decoded data is created" code_is 201
post_file secrets sec-over
check "... one byte more is 422 on data" code_has 422 'data: Too long: may not be more than 1048576 bytes'
req GET /api/v1/nothing
check "an unknown resource is 404" code_is 404
req GET /apis/nogroup.example.com/v1/things
check "an unknown group is 404" code_is 404
# Paths split as kube splits them: "//" is never collapsed; an empty
# namespace means every namespace, any other empty segment is a 404.
req GET /api/v1/namespaces//configmaps
check "an empty namespace segment lists every namespace, as kube does" \
	code_has 200 '"kind":"ConfigMapList"' '"name":"a1","namespace":"default"'
req GET /api/v1//configmaps
check "an empty segment before the resource is 404" code_is 404
req GET /api/v1/namespaces/default//a1
check "an empty resource segment is 404" code_is 404
req GET //version
check "a leading // is 404, as kube answers" code_is 404
req PUT /api/v1/namespaces/default/configmaps '{}'
check "PUT on a collection is 400 or 405" bash -c "[[ $CODE == 400 || $CODE == 405 ]]"
req POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"y"}}' application/cbor
check "an unsupported media type is 415" code_is 415
req GET /api/v1/namespaces/default/configmaps/a1
check "the server still serves after bad input" code_is 200

# A null for a Go pointer field with omitempty decodes to nil, which kube's
# encoding leaves out: not stored, not answered, not in managedFields
# (they were kept as sent: found by a helper)
check "explicit nulls of pointer fields are left out, as kube's decoding drops them" python3 - "$URL" <<'PY'
import json, sys, urllib.request
url = sys.argv[1] + "/api/v1/namespaces/default/"
def post(kind, body):
    r = urllib.request.urlopen(urllib.request.Request(url + kind, data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"}))
    return json.loads(r.read())
own = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "0e6b4b9a-1111-2222-3333-444455556666",
        "controller": None, "blockOwnerDeletion": None}]
objs = [
    ("secrets", {"metadata": {"name": "null-ptr-s", "ownerReferences": own}, "immutable": None}, ["immutable"]),
    ("configmaps", {"metadata": {"name": "null-ptr-c"}, "immutable": None}, ["immutable"]),
    ("serviceaccounts", {"metadata": {"name": "null-ptr-sa"}, "automountServiceAccountToken": None}, ["automountServiceAccountToken"]),
    ("services", {"metadata": {"name": "null-ptr-svc"}, "spec": {"ports": [{"port": 80, "appProtocol": None}],
        "loadBalancerClass": None, "trafficDistribution": None, "sessionAffinityConfig": None}},
        ["spec.loadBalancerClass", "spec.trafficDistribution", "spec.sessionAffinityConfig", "spec.ports.0.appProtocol"]),
    ("endpoints", {"metadata": {"name": "null-ptr-ep"}, "subsets": [{"addresses": [{"ip": "10.1.2.3", "nodeName": None, "targetRef": None}],
        "ports": [{"port": 80, "appProtocol": None}]}]},
        ["subsets.0.addresses.0.nodeName", "subsets.0.addresses.0.targetRef", "subsets.0.ports.0.appProtocol"]),
    ("events", {"metadata": {"name": "null-ptr-ev"}, "involvedObject": {"kind": "ConfigMap", "name": "x", "namespace": "default"},
        "series": None, "related": None}, ["series", "related"]),
]
for kind, body, gone in objs:
    o = post(kind, body)
    for path in gone:
        x = o
        for k in path.split("."):
            x = x[int(k)] if isinstance(x, list) else x
            if isinstance(x, dict) and k in x and not isinstance(x, list):
                x = x[k]
            elif not isinstance(x, list):
                x = "absent"
                break
        assert x == "absent", (kind, path, o)
    mf = json.dumps(o["metadata"].get("managedFields", []))
    assert "f:immutable" not in mf and "f:appProtocol" not in mf and "f:series" not in mf, (kind, mf)
ref = post("configmaps", {"metadata": {"name": "null-ptr-ref", "ownerReferences": own}})["metadata"]["ownerReferences"][0]
assert "controller" not in ref and "blockOwnerDeletion" not in ref, ref
urllib.request.urlopen(urllib.request.Request(url + "events/null-ptr-ev", method="DELETE"))  # later checks count the events
PY
# A null for a value struct or a scalar without omitempty decodes to Go's
# zero value, which kube writes: {} for an Event's involvedObject and
# source, a Lease's spec; "" for reportingComponent (kept as null before)
check "explicit nulls of value structs and plain scalars are Go's zero values" python3 - "$URL" <<'PY'
import json, sys, urllib.request
def post(path, body):
    r = urllib.request.urlopen(urllib.request.Request(sys.argv[1] + path, data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"}, method="POST"))
    return json.loads(r.read())
def delete(path):
    urllib.request.urlopen(urllib.request.Request(sys.argv[1] + path, method="DELETE"))
ev = post("/api/v1/namespaces/default/events", {"metadata": {"name": "null-val-ev"}, "involvedObject": None,
    "source": None, "reason": "r", "type": "Normal", "reportingComponent": None})
assert ev["involvedObject"] == {} and ev["source"] == {} and ev["reportingComponent"] == "", ev
assert ev["firstTimestamp"] is None and "reason" in ev, ev
delete("/api/v1/namespaces/default/events/null-val-ev")
ev = post("/apis/events.k8s.io/v1/namespaces/default/events", {"metadata": {"name": "null-val-ev1"},
    "eventTime": "2024-01-01T00:00:00.000000Z", "reportingController": "a/b", "reportingInstance": "i",
    "action": "A", "reason": "r", "type": "Normal", "regarding": None, "deprecatedSource": None})
assert ev["regarding"] == {} and ev["deprecatedSource"] == {}, ev
delete("/apis/events.k8s.io/v1/namespaces/default/events/null-val-ev1")
le = post("/apis/coordination.k8s.io/v1/namespaces/default/leases", {"metadata": {"name": "null-val-le"}, "spec": None})
assert le["spec"] == {}, le
delete("/apis/coordination.k8s.io/v1/namespaces/default/leases/null-val-le")
cr = post("/apis/rbac.authorization.k8s.io/v1/clusterroles", {"metadata": {"name": "null-val-cr"}, "aggregationRule": None})
assert "aggregationRule" not in cr, cr
delete("/apis/rbac.authorization.k8s.io/v1/clusterroles/null-val-cr")
PY
# structs k8s.io/api marks +structType=atomic are owned whole: a role
# binding's roleRef (rbac/v1 RoleRef) and an events.k8s.io Event's
# regarding (core/v1 ObjectReference) are f:roleRef: {} and f:regarding: {}
# (they were tracked field by field: found by a helper)
check "managedFields own a roleRef and an applied events.k8s.io regarding whole, as kube's atomic structs" python3 - "$URL" <<'PY'
import json, sys, urllib.request
url = sys.argv[1]
def call(method, path, body, ctype):
    r = urllib.request.urlopen(urllib.request.Request(url + path, data=body.encode(), method=method,
        headers={"Content-Type": ctype}))
    return json.loads(r.read())["metadata"]["managedFields"][0]["fieldsV1"]
rr = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}
f = call("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
         json.dumps({"metadata": {"name": "atomic-crb"}, "roleRef": rr}), "application/json")
assert f["f:roleRef"] == {}, f
f = call("PATCH", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings/atomic-rb?fieldManager=m",
         json.dumps({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                     "metadata": {"name": "atomic-rb"}, "roleRef": rr}), "application/apply-patch+yaml")
assert f["f:roleRef"] == {}, f
f = call("PATCH", "/apis/events.k8s.io/v1/namespaces/default/events/atomic-ev?fieldManager=m",
         json.dumps({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "atomic-ev"},
                     "eventTime": "2026-12-07T10:00:00.000000Z", "reportingController": "a/b",
                     "reportingInstance": "i", "action": "A", "reason": "R", "type": "Normal",
                     "regarding": {"kind": "ConfigMap", "name": "x", "namespace": "default"}}),
         "application/apply-patch+yaml")
assert f["f:regarding"] == {}, f
urllib.request.urlopen(urllib.request.Request(url + "/api/v1/namespaces/default/events/atomic-ev", method="DELETE"))
PY
# secrets: stringData folded, bad base64 refused
req POST /api/v1/namespaces/default/secrets '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s1"},"stringData":{"u":"admin"}}'
check "secret stringData becomes base64 data" code_has 201 '"u":"YWRtaW4="' '"type":"Opaque"'
req POST /api/v1/namespaces/default/secrets '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s2"},"data":{"u":"not base64!"}}'
check "secret with bad base64 is 400" code_is 400

# watch: from a revision, sees a later change, then times out
req GET /api/v1/namespaces/default/configmaps/a1
RVW=$(jq_ "d['metadata']['resourceVersion']")
# the watch starts from RVW and replays anything after it, so the patch
# may come before it registers
req PATCH /api/v1/namespaces/default/configmaps/a1 '{"data":{"w":"1"}}' application/merge-patch+json
watch_grep '"type":"MODIFIED"' "$WORK/watch" "$URL/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$RVW"
check "watch delivers the change as MODIFIED" grep -q '"type":"MODIFIED"' "$WORK/watch"
curl -sS -N "$URL/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1" > "$WORK/watch0"
check "watch without resourceVersion starts with ADDED for each object" bash -c "[[ \$(grep -c '\"type\":\"ADDED\"' '$WORK/watch0') -ge 20 ]]"
curl -sS -N "$URL/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1&timeoutSeconds=1" > "$WORK/watch1"
check "watch from a revision before the first write replays everything" grep -q '"type":"ADDED"' "$WORK/watch1"
curl -sS -N "$URL/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=3" > "$WORK/watchf"
check "sendInitialEvents=false without a resourceVersion starts from now: a stream (its bookmark), no ADDED" bash -c "grep -q '\"type\":\"BOOKMARK\"' '$WORK/watchf' && ! grep -q '\"type\":\"ADDED\"' '$WORK/watchf'"
CODE=$(curl -sS -N -o "$WORK/body" -w '%{http_code}' "$URL/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=99999999&timeoutSeconds=10")
check "sendInitialEvents from a revision not yet reached: 200 and one ERROR event, kube's error watcher" code_has 200 '"type":"ERROR"' '"code":504' 'Timeout: Too large resource version: 99999999, current: ' '"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1'
CODE=$(curl -sS -N -o "$WORK/body" -w '%{http_code}' "$URL/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=18446744073709551615&timeoutSeconds=10")
check "... one from 2^64-1 (ParseUint takes it) names that number" code_has 200 '"type":"ERROR"' 'Timeout: Too large resource version: 18446744073709551615, current: '
# Such a watch waits in its stream (server/watch.c invariant 9), not in
# its request's handler: eight of them at once, more than the server's
# threads, leave a GET answering while they all still wait (the handler's
# wait held its thread and every connection on it for the 3 s); and one
# whose revision arrives in time gets the state at it, then its bookmark.
check "watches waiting for a revision not yet reached hold no server thread: a GET answers while eight wait" python3 - "$URL" <<'PY'
import http.client, json, socket, sys, threading, time
url = sys.argv[1]
host, port = url[len("http://"):].rsplit(":", 1)
c = http.client.HTTPConnection(host, int(port))
c.request("GET", "/api/v1/namespaces/default/configmaps?limit=1")
rv = int(json.loads(c.getresponse().read())["metadata"]["resourceVersion"])
ends = []
def waiter():
    s = socket.create_connection((host, int(port)))
    s.sendall(("GET /api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=%d HTTP/1.1\r\nHost: x\r\n\r\n" % (rv + 100000)).encode())
    b = b""
    while b"ERROR" not in b:
        d = s.recv(65536)
        if not d:
            break
        b += d
    ends.append(b"ResourceVersionTooLarge" in b)
ts = [threading.Thread(target=waiter) for _ in range(8)]
for t in ts:
    t.start()
time.sleep(0.5)  # all eight are in the server
g = http.client.HTTPConnection(host, int(port))
g.request("GET", "/readyz")
assert g.getresponse().read() == b"ok"
assert ends == [], "a GET waited for a watch's wait to end"
for t in ts:
    t.join()
assert ends == [True] * 8, ends
PY
check "... and one whose revision arrives in time gets the state at it, then the initial-events-end bookmark" python3 - "$URL" <<'PY'
import http.client, json, sys, threading, time, urllib.request
url = sys.argv[1]
host, port = url[len("http://"):].rsplit(":", 1)
c = http.client.HTTPConnection(host, int(port))
c.request("GET", "/api/v1/namespaces/default/configmaps?limit=1")
rv = int(json.loads(c.getresponse().read())["metadata"]["resourceVersion"])
def write():  # while the watch waits (kube answers only after its wait)
    time.sleep(0.3)
    urllib.request.urlopen(urllib.request.Request(url + "/api/v1/namespaces/default/configmaps",
        data=json.dumps({"metadata": {"name": "arrived-in-time"}}).encode(), headers={"Content-Type": "application/json"}))
t = threading.Thread(target=write)
t.start()
w = urllib.request.urlopen(url + "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=5&resourceVersion=%d" % (rv + 1))
t.join()
names = []
while True:
    e = json.loads(w.readline())
    if e["type"] == "BOOKMARK":
        assert e["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true", e
        assert int(e["object"]["metadata"]["resourceVersion"]) >= rv + 1, e
        break
    assert e["type"] == "ADDED", e
    names.append(e["object"]["metadata"]["name"])
assert "arrived-in-time" in names, names
PY
# A GET or list "not older than" a revision not reached waits for it with
# its connection suspended (server/revwait.c), not in its handler: eight
# of them (one-object GETs, lists, a Table list, a HEAD) leave a GET
# answering while they all wait, then each gets kube's 504; a client that
# hangs up while its read waits costs nothing; and reads whose revision
# arrives in time answer at it.
check "GETs and lists waiting for a revision not yet reached hold no server thread: a GET answers while eight wait" python3 - "$URL" <<'PY'
import http.client, json, socket, sys, threading, time
url = sys.argv[1]
host, port = url[len("http://"):].rsplit(":", 1)
c = http.client.HTTPConnection(host, int(port))
c.request("GET", "/api/v1/namespaces/default/configmaps?limit=1")
rv = int(json.loads(c.getresponse().read())["metadata"]["resourceVersion"])
far = rv + 100000
paths = ["/api/v1/namespaces/default/configmaps/a1?resourceVersion=%d" % far,
         "/api/v1/namespaces/default/configmaps?resourceVersion=%d" % far,
         "/api/v1/configmaps?resourceVersion=%d&resourceVersionMatch=NotOlderThan" % far,
         "/api/v1/namespaces/default/configmaps?resourceVersion=%d&labelSelector=x%%3Dy" % far,
         "/api/v1/namespaces/default?resourceVersion=%d" % far,
         "/api/v1/namespaces?resourceVersion=%d&fieldSelector=metadata.name%%3Ddefault" % far,
         "/api/v1/namespaces/default/configmaps?resourceVersion=%d&limit=0" % far]
ends = []
def reader(path, method="GET", hdrs={}):
    k = http.client.HTTPConnection(host, int(port), timeout=30)
    k.request(method, path, headers=hdrs)
    resp = k.getresponse()
    b = resp.read()
    ends.append((resp.status, b, method))
ts = [threading.Thread(target=reader, args=(p,)) for p in paths]
ts.append(threading.Thread(target=reader, args=(paths[1], "GET", {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})))
ts.append(threading.Thread(target=reader, args=(paths[0], "HEAD")))
for t in ts:
    t.start()
# one that hangs up while it waits
s = socket.create_connection((host, int(port)))
s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % paths[0]).encode())
time.sleep(0.5)  # all are in the server
s.close()
g = http.client.HTTPConnection(host, int(port))
g.request("GET", "/api/v1/namespaces/default/configmaps/a1")
r0 = g.getresponse()
r0.read()
assert r0.status == 200
assert ends == [], "a GET waited for a read's wait to end: %r" % ends
for t in ts:
    t.join()
assert len(ends) == len(ts), ends
for code, b, method in ends:
    assert code == 504, (code, b)
    if method == "HEAD":
        continue
    st = json.loads(b)
    assert st["kind"] == "Status" and st["reason"] == "Timeout", st
    assert st["message"].startswith("Timeout: Too large resource version: %d, current: " % far), st
    assert st["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge", st
    assert st["details"]["retryAfterSeconds"] == 1, st
g.request("GET", "/readyz")
assert g.getresponse().read() == b"ok"
PY
check "... deletecollections from a revision not reached too: a GET answers while four wait, then each gets the 504 and deletes nothing" python3 - "$URL" <<'PY'
import http.client, json, sys, threading, time
url = sys.argv[1]
host, port = url[len("http://"):].rsplit(":", 1)
c = http.client.HTTPConnection(host, int(port))
c.request("POST", "/api/v1/namespaces/default/configmaps", json.dumps({"metadata": {"name": "dc-keep", "labels": {"dc": "x"}}}), {"Content-Type": "application/json"})
r = c.getresponse(); r.read(); assert r.status == 201, r.status
c.request("GET", "/api/v1/namespaces/default/configmaps?limit=1")
rv = int(json.loads(c.getresponse().read())["metadata"]["resourceVersion"])
ends = []
def dc():
    k = http.client.HTTPConnection(host, int(port), timeout=30)
    k.request("DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=dc%%3Dx&resourceVersion=%d" % (rv + 100000))
    resp = k.getresponse()
    ends.append((resp.status, json.loads(resp.read()).get("reason")))
ts = [threading.Thread(target=dc) for _ in range(4)]
for t in ts:
    t.start()
time.sleep(0.5)
g = http.client.HTTPConnection(host, int(port))
g.request("GET", "/api/v1/namespaces/default/configmaps/dc-keep")
r0 = g.getresponse(); r0.read()
assert r0.status == 200 and ends == [], (r0.status, ends)
for t in ts:
    t.join()
assert ends == [(504, "Timeout")] * 4, ends
g.request("GET", "/api/v1/namespaces/default/configmaps/dc-keep")
r0 = g.getresponse(); r0.read()
assert r0.status == 200, r0.status
# and one whose revision arrives deletes at it
def dc2():
    k = http.client.HTTPConnection(host, int(port), timeout=30)
    k.request("DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=dc%%3Dx&resourceVersion=%d" % (rv + 1))
    resp = k.getresponse()
    ends.append((resp.status, [i["metadata"]["name"] for i in json.loads(resp.read())["items"]]))
ends.clear()
t = threading.Thread(target=dc2); t.start()
time.sleep(0.3)
c.request("POST", "/api/v1/namespaces/default/configmaps", json.dumps({"metadata": {"name": "dc-new", "labels": {"dc": "x"}}}), {"Content-Type": "application/json"})
r = c.getresponse(); r.read()
t.join()
assert ends == [(200, ["dc-keep", "dc-new"])], ends
PY
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' "$URL/api/v1/namespaces/default/configmaps/a1?resourceVersion=99999999&timeout=1s")
check "a GET waiting for a revision with ?timeout=1s: kube's timeout filter answers at 1 s, before the 3 s" \
	code_has 504 '"reason":"Timeout"' '"message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504'
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' "$URL/api/v1/namespaces/default/configmaps/a1?resourceVersion=18446744073709551615")
check "a GET from resourceVersion 2^64-1 (ParseUint takes it) waits, then kube's 504 naming it" \
	code_has 504 '"message":"Timeout: Too large resource version: 18446744073709551615, current: ' '"retryAfterSeconds":1'
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' "$URL/api/v1/namespaces/default/configmaps?resourceVersion=9223372036854775808")
check "... a list from 2^63 too" \
	code_has 504 '"message":"Timeout: Too large resource version: 9223372036854775808, current: '
check "... and a GET and a list whose revision arrives in time answer at it" python3 - "$URL" <<'PY'
import http.client, json, sys, threading, time, urllib.request
url = sys.argv[1]
host, port = url[len("http://"):].rsplit(":", 1)
c = http.client.HTTPConnection(host, int(port))
c.request("GET", "/api/v1/namespaces/default/configmaps?limit=1")
rv = int(json.loads(c.getresponse().read())["metadata"]["resourceVersion"])
got = {}
def read(name, path):
    r = urllib.request.urlopen(url + path)
    got[name] = json.loads(r.read())
ts = [threading.Thread(target=read, args=("get", "/api/v1/namespaces/default/configmaps/arrived-for-get?resourceVersion=%d" % (rv + 1))),
      threading.Thread(target=read, args=("list", "/api/v1/namespaces/default/configmaps?resourceVersion=%d&resourceVersionMatch=NotOlderThan" % (rv + 1)))]
for t in ts:
    t.start()
time.sleep(0.3)  # both wait: the object does not exist yet
assert got == {}, got
urllib.request.urlopen(urllib.request.Request(url + "/api/v1/namespaces/default/configmaps",
    data=json.dumps({"metadata": {"name": "arrived-for-get"}}).encode(), headers={"Content-Type": "application/json"}))
for t in ts:
    t.join()
assert got["get"]["metadata"]["name"] == "arrived-for-get", got
assert int(got["list"]["metadata"]["resourceVersion"]) >= rv + 1, got["list"]["metadata"]
assert "arrived-for-get" in [i["metadata"]["name"] for i in got["list"]["items"]], got["list"]
PY
RV_NOW=$(curl -sS "$URL/api/v1/namespaces/default/configmaps?limit=1" | python3 -c "import json,sys; print(json.load(sys.stdin)['metadata']['resourceVersion'])")
curl -sS -N -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' "$URL/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$RV_NOW&allowWatchBookmarks=true&timeoutSeconds=3" > "$WORK/watcht"
check "a Table watch's bookmark is a Table too, as kube's watch encoder makes it" python3 -c "
import json; ev=[json.loads(l) for l in open('$WORK/watcht') if l.strip()]
b=[e for e in ev if e['type']=='BOOKMARK']; assert b, ev
o=b[0]['object']; assert o['kind']=='Table' and o['rows'][0]['object']['kind']=='PartialObjectMetadata', o
assert 'columnDefinitions' in o, o"

curl -sS -N "$URL/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1" > "$WORK/watch3"
check "sendInitialEvents ends the initial state with an initial-events-end bookmark" bash -c "grep -q '\"type\":\"ADDED\"' '$WORK/watch3' && grep -q 'k8s.io/initial-events-end' '$WORK/watch3'"
check "... whose bookmark carries the empty ConfigMapList, as kube's typed list encodes, under kubernetes.io/initial-events-list-blueprint" python3 -c "
import base64, json
b = [e for e in map(json.loads, open('$WORK/watch3')) if e['type'] == 'BOOKMARK'][-1]
raw = base64.b64decode(b['object']['metadata']['annotations']['kubernetes.io/initial-events-list-blueprint'])
assert raw == b'{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":null}\n', raw"
req GET "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true"
check "sendInitialEvents without resourceVersionMatch is 422 on resourceVersionMatch, as kube" code_has 422 '"message":"ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"' '"details":{"group":"meta.k8s.io","kind":"ListOptions","causes":'
req GET "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=Exact"
check "... with Exact, also its NotSupported cause" code_has 422 'resourceVersionMatch: Unsupported value: \"Exact\": supported values: \"NotOlderThan\"'
req GET "/api/v1/namespaces/default/configmaps?watch=1&resourceVersionMatch=NotOlderThan&continue=abc"
check "a watch's ListOptions errors all come, in kube's order" code_has 422 '"message":"ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided, resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided]"'
req GET "/api/v1/namespaces/default/configmaps?resourceVersionMatch=Bad&continue=abc"
check "... and a list's" code_has 422 '"message":"ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided, resourceVersionMatch: Unsupported value: \"Bad\": supported values: \"Exact\", \"NotOlderThan\", \"\"]"' '"details":{"group":"meta.k8s.io","kind":"ListOptions","causes":'
CODE=$(curl -sS -N -m 3 -o "$WORK/body" -w '%{http_code}' -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json' "$URL/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1")
check "a watch-list skips a Table clause for the next one (plain objects)" bash -c "[[ $CODE == 200 ]] && grep -q '\"type\":\"ADDED\"' '$WORK/body' && ! grep -q '\"kind\":\"Table\"' '$WORK/body'"
CODE=$(curl -sS -N -m 3 -o "$WORK/body" -w '%{http_code}' -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' "$URL/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1")
check "... and is 406 when Table was the only clause" bash -c "[[ $CODE == 406 ]]"
curl -sS -N "$URL/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1&timeoutSeconds=1" >/dev/null
req PATCH /api/v1/namespaces/default/configmaps/p02 '{"data":{"w":"1"}}' application/merge-patch+json
req PATCH /api/v1/namespaces/default/configmaps/a1 '{"data":{"w":"2"}}' application/merge-patch+json
# both changes of a1 since RVW, and p02's between them if it leaked
watch_lines 2 "$WORK/watch4" "$URL/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$RVW&fieldSelector=metadata.name%3Da1"
check "a watch by name sees only that object" bash -c "[[ \$(grep -c '\"name\":\"a1\"' '$WORK/watch4') == 2 ]] && ! grep -q '\"name\":\"p02\"' '$WORK/watch4'"

# Events larger than MHD's write buffer go out over several reads: an
# unfiltered watcher copies the shared frame straight into MHD's buffer,
# resuming mid-frame; a filtered one frames its own. Every watcher gets
# every event whole and in order, also when a burst fills the buffer.
check "watchers get large events in bursts whole and in order" python3 - "$URL" <<'PY'
import json, sys, urllib.request
url = sys.argv[1]
def call(method, path, body):
    r = urllib.request.Request(url + path, data=json.dumps(body).encode(),
                               method=method, headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(r))
call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bigw"}})
c = "/api/v1/namespaces/bigw/configmaps"
rv = json.load(urllib.request.urlopen(url + c))["metadata"]["resourceVersion"]
qs = ["", "&labelSelector=w%3Dbig"]
ws = [urllib.request.urlopen(url + c + "?watch=1&timeoutSeconds=20&resourceVersion=" + rv + q)
      for q in qs for _ in range(2)]
n = 12
for i in range(n):
    call("POST", c, {"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "big%02d" % i, "labels": {"w": "big"}},
                     "data": {"a": chr(97 + i) * (100000 + 777 * i)}})
for w in ws:
    for i in range(n):
        ev = json.loads(w.readline())
        o = ev["object"]
        assert ev["type"] == "ADDED", ev["type"]
        assert o["metadata"]["name"] == "big%02d" % i, o["metadata"]["name"]
        assert o["data"]["a"] == chr(97 + i) * (100000 + 777 * i)
    w.close()
PY

# Direct delivery (server/watch.c invariant 7): over plain HTTP/1.1 a
# sleeping watch's events are written by a push thread, not libmicrohttpd.
# A slow reader makes the socket take part of a chunk (the rest waits as
# the stream's tail); every event must still come whole, in order and in
# valid chunked framing, the stream must end with its last chunk when its
# timeoutSeconds pass, and the connection must serve its next request.
check "a plain HTTP server writes watch events from its push thread" \
	grep -qx watch-push /proc/"$SERVER_PID"/task/*/comm
check "a slow reader gets large events whole and in order, in valid chunks, then the stream ends and the connection goes on" python3 - "$URL" <<'PY'
import json, socket, sys, threading, time, urllib.request
url = sys.argv[1]
host, port = url[len("http://"):].rsplit(":", 1)
def call(method, path, body):
    r = urllib.request.Request(url + path, data=json.dumps(body).encode(),
                               method=method, headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(r))
call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "slow"}})
c = "/api/v1/namespaces/slow/configmaps"
rv = json.load(urllib.request.urlopen(url + c))["metadata"]["resourceVersion"]
s = socket.create_connection((host, int(port)))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
s.sendall(("GET %s?watch=1&timeoutSeconds=4&resourceVersion=%s HTTP/1.1\r\nHost: x\r\n\r\n" % (c, rv)).encode())
buf = b""
def need(n):
    global buf
    while len(buf) < n:
        d = s.recv(16384)
        assert d, "connection closed early"
        buf += d
        time.sleep(0.002)  # a slow reader
def line():
    global buf
    while b"\r\n" not in buf:
        need(len(buf) + 1)
    l, buf = buf.split(b"\r\n", 1)
    return l
assert line().startswith(b"HTTP/1.1 200"), "status"
hdrs = []
while True:
    l = line()
    if not l:
        break
    hdrs.append(l.lower())
assert b"transfer-encoding: chunked" in hdrs, hdrs
n, sizes = 10, [200000 + 9973 * i for i in range(10)]
def writes():
    time.sleep(0.3)
    for i in range(n):
        call("POST", c, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "s%02d" % i},
                         "data": {"a": chr(97 + i) * sizes[i]}})
t = threading.Thread(target=writes)
t.start()
body = b""
while True:
    size = int(line(), 16)
    need(size + 2)
    chunk, buf = buf[:size], buf[size:]
    assert buf[:2] == b"\r\n", "chunk not ended by CRLF"
    buf = buf[2:]
    if size == 0:
        break
    body += chunk
t.join()
evs = [json.loads(l) for l in body.split(b"\n") if l]
assert [e["object"]["metadata"]["name"] for e in evs] == ["s%02d" % i for i in range(n)], [e["type"] for e in evs]
for i, e in enumerate(evs):
    assert e["type"] == "ADDED" and e["object"]["data"]["a"] == chr(97 + i) * sizes[i], i
s.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
assert line().startswith(b"HTTP/1.1 200"), "the next request on the connection"
PY

# A watch from resourceVersion 0 (or unset) streams the current state in
# chunks, as a list is read (server/watch.c invariant 8): ten watches whose
# clients read nothing, over a 30 MB collection, hold a chunk each, not a
# copy of it each (they held 324 MB more, the whole state framed at once;
# now about 7 MB). The bound is loose: the sanitizer builds carry more.
init_rss() {
	python3 - "$URL" <<'PY' || return 1
import json, sys, urllib.request
url = sys.argv[1]
def post(path, body):
    urllib.request.urlopen(urllib.request.Request(url + path, data=json.dumps(body).encode(),
                           headers={"Content-Type": "application/json"}))
post("/api/v1/namespaces", {"metadata": {"name": "initrss"}})
for i in range(150):
    post("/api/v1/namespaces/initrss/configmaps", {"metadata": {"name": "c%03d" % i}, "data": {"a": "x" * 200000}})
PY
	local before after
	before=$(awk '/^VmRSS:/ {print $2}' /proc/"$SERVER_PID"/status)
	python3 - "${URL#http://}" "$SERVER_PID" <<'PY' >"$WORK/initrss" || return 1
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
ss = []
for i in range(10):
    s = socket.create_connection((host, int(port)))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b"GET /api/v1/namespaces/initrss/configmaps?watch=1 HTTP/1.1\r\nHost: x\r\n\r\n")
    ss.append(s)
time.sleep(3)  # the server reads the state for them meanwhile
print([l.split()[1] for l in open("/proc/%s/status" % sys.argv[2]) if l.startswith("VmRSS:")][0])
PY
	after=$(cat "$WORK/initrss")
	echo "# RSS $before kB -> $after kB with 10 unread watches of the state"
	((after - before < 120000))
}
check "unread watches of a 30 MB collection from resourceVersion 0 do not each hold a copy of it" init_rss
req GET "/api/v1/namespaces/initrss/configmaps?watch=1&timeoutSeconds=2&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
check "... and a watch that reads gets all 150 ADDED events, in order, then the initial-events-end bookmark" python3 -c "
import json
evs = [json.loads(l) for l in open('$WORK/body') if l.strip()]
adds = [e['object']['metadata']['name'] for e in evs if e['type'] == 'ADDED']
assert adds == ['c%03d' % i for i in range(150)], adds[:5]
i = [k for k, e in enumerate(evs) if e['type'] == 'BOOKMARK' and e['object']['metadata'].get('annotations', {}).get('k8s.io/initial-events-end') == 'true']
assert i and i[0] == 150, (i, len(evs))"
req DELETE /api/v1/namespaces/initrss

# timeoutSeconds is read as Go's strconv.ParseInt; any int64 is good, and a
# huge one means no deadline (it used to overflow: signed overflow, on which
# the UBSan build's server aborted).
req GET "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=99999999999999999999"
check "timeoutSeconds beyond int64 is 400" code_has 400 'value out of range'
req GET "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=%205"
check "timeoutSeconds with a blank is 400" code_has 400 'invalid syntax'
req GET "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=-5"
check "a negative watch timeoutSeconds is a watch that ends at once (kube's timer), not a 400" code_is 200
# integer parameters as strconv.ParseInt reads them: empty or blank is 400
req GET "/api/v1/namespaces/default/configmaps?limit="
check "an empty limit is strconv's 400" code_has 400 'strconv.ParseInt: parsing \"\": invalid syntax'
req GET "/api/v1/namespaces/default/configmaps?limit=%205"
check "... a blank before the number too" code_has 400 'strconv.ParseInt: parsing \" 5\": invalid syntax'
req DELETE "/api/v1/namespaces/default/configmaps/nosuch?gracePeriodSeconds="
check "... and an empty gracePeriodSeconds (nothing deleted)" code_has 400 'strconv.ParseInt: parsing \"\": invalid syntax'
exec {HW}< <(curl -sS -N "$URL/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=9223372036854775807")
HWPID=$!
HWLINE=
read -r -t "$TIMEOUT" -u "$HW" HWLINE
check "a watch with timeoutSeconds 2^63-1 starts with its ADDED events" grep -q '"type":"ADDED"' <<<"$HWLINE"
req GET /readyz
check "... and the server goes on" code_is 200
kill "$HWPID" 2>/dev/null
exec {HW}<&-

# 50 idle watches hold no thread and leave GETs answering
threads() { awk '/^Threads:/ { print $2 }' "/proc/$SERVER_PID/status"; }
T0=$(threads)
WPIDS=()
for i in $(seq 1 50); do
	curl -sS -N "$URL/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$RVW&timeoutSeconds=60" >/dev/null 2>&1 &
	WPIDS+=($!)
done
# wait until the server holds 50 more connections (no sleep: poll /proc)
for _ in $(seq 1 $((200 * SLOW))); do
	n=$(ls -l "/proc/$SERVER_PID/fd" 2>/dev/null | grep -c socket)
	((n >= 51)) && break
	read -r -t 0.05 <> <(:) || true
done
req GET /api/v1/namespaces/default/configmaps/p01
check "GETs answer with 50 watches open" code_is 200
T1=$(threads)
check "50 idle watches add no thread ($T0 -> $T1)" [ "$T0" == "$T1" ]
sockets() { ls -l "/proc/$SERVER_PID/fd" 2>/dev/null | grep -c socket; }
S0=$(sockets)
kill "${WPIDS[@]}" 2>/dev/null
wait "${WPIDS[@]}" 2>/dev/null
# The clients above hung up on watches no event reaches: the server finds
# that out by itself (a suspended connection is never read; the watch
# ticker probes the sockets) and closes them, as kube's handler ends when
# the request's context does. Waits for the sockets to go (bounded).
for _ in $(seq 1 $((600 * SLOW))); do
	(($(sockets) <= S0 - 50)) && break
	read -r -t 0.05 <> <(:) || true
done
check "watches whose clients hung up are closed ($S0 -> $(sockets) sockets)" [ "$(sockets)" -le $((S0 - 50)) ]
# Clients that send a request and shut down their side (nc -N, some
# scripts) are answered, then closed as Go's server closes at the EOF:
# libmicrohttpd kept such a connection for the idle timeout (120 s). A
# half-closed client that pipelined two requests gets both answers, and a
# keep-alive client that stays is served on.
S0=$(sockets)
check "half-closed clients are answered, then their connections closed" python3 - "$URL" "$WORK" "$SERVER_PID" "$S0" "$SLOW" <<'PY'
import socket, sys, time
sys.path.insert(0, sys.argv[2])
import rawhttp
host, port = sys.argv[1].split('//')[1].split(':')
pid, s0, slow = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
sockets = lambda: rawhttp.sockets(pid)
def drain(s):
    out = b''
    s.settimeout(30)
    while True:
        d = s.recv(65536)
        if not d:
            return out
        out += d
get = b'GET /api HTTP/1.1\r\nHost: x\r\n\r\n'
keep = socket.create_connection((host, int(port)))
keep.sendall(get)
assert keep.recv(65536).startswith(b'HTTP/1.1 200'), "keep-alive"
half = []
for i in range(20):
    s = socket.create_connection((host, int(port)))
    s.sendall(get * (2 if i == 0 else 1))
    s.shutdown(socket.SHUT_WR)
    half.append(s)
for _ in range(5):
    s = socket.create_connection((host, int(port)))
    s.shutdown(socket.SHUT_WR)
    half.append(s)
outs = [drain(s) for s in half]  # each returns once the server closes
assert outs[0].count(b'HTTP/1.1 200') == 2, outs[0][:300]
assert all(o.count(b'HTTP/1.1 200') == 1 for o in outs[1:20]), [o[:60] for o in outs[1:20]]
assert all(o == b'' for o in outs[20:]), outs[20:]
for s in half:
    s.close()
for _ in range(200 * slow):
    if sockets() <= s0 + 1:
        break
    time.sleep(0.05)
assert sockets() <= s0 + 1, (s0, sockets())
keep.sendall(get)
assert keep.recv(65536).startswith(b'HTTP/1.1 200'), "keep-alive after"
PY

# Watch clients that stopped reading while events came, then went (the
# kernel resets a socket closed with unread data), while older keep-alive
# connections idle on the same threads: their connections close within
# the hang-up probe's second or two. The watch's reader ended them with
# libmicrohttpd's error code, which 0.9.75 leaves a connection closed but
# not cleaned up until its timeout-list walk gets there, and an older
# connection stops that walk: the sockets stayed for 120 s.
check "watches reset after a backlog close though older connections idle" python3 - "$URL" "$WORK" "$SERVER_PID" "$SLOW" <<'PY'
import http.client, json, socket, sys, time
sys.path.insert(0, sys.argv[2])
import rawhttp
host, port = sys.argv[1].split('//')[1].split(':')
port, pid, slow = int(port), sys.argv[3], int(sys.argv[4])
sockets = lambda: rawhttp.sockets(pid)
def call(c, m, p, b=None):
    c.request(m, p, body=json.dumps(b) if b is not None else None,
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    return r.status
idle = [http.client.HTTPConnection(host, port) for _ in range(4)]
for c in idle:
    assert call(c, "GET", "/api") == 200
w = http.client.HTTPConnection(host, port)
assert call(w, "POST", "/api/v1/namespaces", {"metadata": {"name": "backlog"}}) == 201
base = sockets()
ws = []
for _ in range(10):
    s = socket.create_connection((host, port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b"GET /api/v1/namespaces/backlog/configmaps?watch=1 HTTP/1.1\r\nHost: x\r\n\r\n")
    ws.append(s)
time.sleep(0.3)
for i in range(40):
    assert call(w, "POST", "/api/v1/namespaces/backlog/configmaps",
                {"metadata": {"name": "b%d" % i}, "data": {"k": "x" * 20000}}) == 201
assert sockets() >= base + 10, (base, sockets())
for s in ws:
    s.close()
for _ in range(200 * slow):
    if sockets() <= base:
        break
    time.sleep(0.1)
assert sockets() <= base, ("held", sockets() - base)
for c in idle:
    assert call(c, "GET", "/api") == 200, "an idle connection is served on"
assert call(w, "DELETE", "/api/v1/namespaces/backlog") == 200
PY

# delete
req DELETE /api/v1/namespaces/default/configmaps/a1
check "delete is 200 with a Success Status" code_has 200 '"status":"Success"'
req GET /api/v1/namespaces/default/configmaps/a1
check "deleted object is gone" code_is 404
req DELETE "/api/v1/namespaces/default/configmaps?labelSelector=nothing%3Dhere"
check "deletecollection with a selector is 200" code_is 200
for i in 1 2 3; do
	req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"dc'"$i"'","labels":{"dc":"y"}}}'
done
req DELETE "/api/v1/namespaces/default/configmaps?labelSelector=dc%3Dy&limit=2"
check "deletecollection with a limit deletes one page, answering its continue token" code_has 200 '"continue":"' '"name":"dc1"' '"name":"dc2"'
req DELETE "/api/v1/namespaces/default/configmaps?labelSelector=dc%3Dy"
check "... and the rest goes with the next" code_has 200 '"name":"dc3"'
check "... its items as a list's: no kind nor apiVersion (a typed list)" python3 -c "
import json; d=json.load(open('$WORK/body'))
assert d['kind']=='ConfigMapList' and [set(i)&{'kind','apiVersion'} for i in d['items']]==[set()], d"
# the namespaces resource has no routes under a namespace: a wrong path
# must not list, create or delete namespaces
req POST /api/v1/namespaces '{"metadata":{"name":"nsnest"}}'
for mp in "GET namespaces" "GET namespaces/nsnest" "DELETE namespaces/nsnest" "POST namespaces" "PUT namespaces/nsnest/finalize"; do
	req ${mp% *} "/api/v1/namespaces/default/${mp#* }" '{"metadata":{"name":"nsnest"}}'
	check "${mp% *} /api/v1/namespaces/default/${mp#* }: 404, no route" code_has 404 '"message":"the server could not find the requested resource"'
done
req GET /api/v1/namespaces/nsnest
check "... the namespace is still there" code_has 200 '"phase":"Active"'
req PUT /api/v1/namespaces/nsnest/finalize '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"nsnest"}}'
check "a /finalize body without spec: the namespace's spec is {} (a Go struct)" code_has 200 '"spec":{},"status":'
# (the ASan run checks that the parsed label selector is freed)
req DELETE "/api/v1/namespaces/default/configmaps?labelSelector=a%3Db&fieldSelector=spec.bogus%3Dx"
check "deletecollection with a bad field selector after a label selector is 400" code_has 400 'is not a known field selector'
req DELETE "/api/v1/namespaces/default/configmaps?labelSelector=a%3Db&resourceVersionMatch=Exact"
check "... and a ListOptions 422 names meta.k8s.io ListOptions, as a list's" code_has 422 '"group":"meta.k8s.io","kind":"ListOptions"'

# finalizers hold an object until removed
req POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"f1","finalizers":["example.com/hold"]}}'
req DELETE /api/v1/namespaces/default/configmaps/f1
check "delete with a finalizer sets deletionTimestamp" code_has 200 'deletionTimestamp'
req PATCH /api/v1/namespaces/default/configmaps/f1 '{"metadata":{"finalizers":null}}' application/merge-patch+json
req GET /api/v1/namespaces/default/configmaps/f1
check "removing the last finalizer deletes it" code_is 404

# namespaces: terminating refuses new content
req POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"t1"}}'
check "create namespace is 201 and Active" code_has 201 '"phase":"Active"'
# content with a finalizer keeps the namespace Terminating (the namespace
# controller removes the rest and waits; tests/e2e/controllers.sh)
req POST /api/v1/namespaces/t1/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"held","finalizers":["test.lapis.dev/hold"]}}'
check "a held configmap in it" code_is 201
req DELETE /api/v1/namespaces/t1
check "delete namespace marks it Terminating" grep -q '"phase":"Terminating"' "$WORK/body"
req POST /api/v1/namespaces/t1/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"late"}}'
check "create in a terminating namespace is 403" code_is 403
req DELETE /api/v1/namespaces/default
check "namespace default may not be deleted" code_is 403

# fieldValidation of built-in kinds (reference §5.8): unknown and duplicate
# fields, dropped, warned about (the default) or refused, with kube's texts.
# reqh: like req, with the response headers in $WORK/hdr
reqh() {
	local m=$1 p=$2 body=$3 ct=${4:-application/json}
	CODE=$(curl -sS -D "$WORK/hdr" -o "$WORK/body" -w '%{http_code}' -X "$m" \
		-H "Content-Type: $ct" --data-binary "$body" "$URL$p")
}
warns() { grep -qF -- "Warning: 299 - \"$1\"" "$WORK/hdr" || { echo "#   no warning $1: $(grep -i warning "$WORK/hdr")"; return 1; }; }
no_warning() { ! grep -qi '^Warning:' "$WORK/hdr"; }
msg_is() { [[ $(jq_ "d['message']") == "$1" ]] || { echo "#   message: $(jq_ "d['message']")"; return 1; }; }
CMU='{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fv1","bar":1},"data":{"k":"v"},"spec":{"foo":1}}'
reqh POST "/api/v1/namespaces/default/configmaps?fieldValidation=Strict" "$CMU"
check "Strict: an unknown field of a ConfigMap is 400" code_has 400 '"reason":"BadRequest"'
check "... naming every unknown field in kube's words" msg_is 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata.bar", unknown field "spec"'
reqh POST /api/v1/namespaces/default/configmaps "$CMU"
check "Warn (the default): created" code_is 201
check "... with one Warning per unknown field" bash -c 'warns() { grep -qF -- "Warning: 299 - \"$1\"" "'"$WORK"'/hdr"; }; warns "unknown field \\\"metadata.bar\\\"" && warns "unknown field \\\"spec\\\""'
check "... and the fields dropped" bash -c "! grep -q '\"spec\"\|\"bar\"' '$WORK/body'"
reqh POST "/api/v1/namespaces/default/configmaps?fieldValidation=Ignore" "${CMU/fv1/fv2}"
check "Ignore: created" code_is 201
check "... without a Warning" no_warning
check "... and the fields dropped" bash -c "! grep -q '\"spec\"\|\"bar\"' '$WORK/body'"
reqh POST "/api/v1/namespaces/default/configmaps?fieldValidation=Bogus" "$CMU"
check "a bad fieldValidation value is 422" code_has 422 'supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"'
reqh POST "/api/v1/namespaces/default/configmaps?fieldValidation=Strict" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fv3","name":"fv3","labels":{"a":"1","a":"2"}},"data":{"x":"1","x":"2"}}'
check "Strict: duplicate fields are 400" code_is 400
check "... each named, in the body's order" msg_is 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "metadata.name", duplicate field "metadata.labels.a", duplicate field "data.x"'
reqh POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fv3","name":"fv3"},"data":{"x":"1","x":"2"}}'
check "Warn: duplicate fields are warned about" bash -c 'grep -qF "Warning: 299 - \"duplicate field \\\"data.x\\\"\"" "'"$WORK"'/hdr"'
check "... and the last value kept" code_has 201 '"x":"2"'
reqh POST "/api/v1/namespaces/default/services?fieldValidation=Strict" '{"apiVersion":"v1","kind":"Service","metadata":{"name":"fvs"},"spec":{"ports":[{"port":80},{"port":81,"bogus":1}],"selector":{"any":"key"}}}'
check "Strict: an unknown field in a Service's port is 400" code_is 400
check "... with its list index" msg_is 'Service in version "v1" cannot be handled as a Service: strict decoding error: unknown field "spec.ports[1].bogus"'
reqh POST /apis/coordination.k8s.io/v1/namespaces/default/leases '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"fvl"},"spec":{"holderIdentity":"me","renewTime":"2026-01-02T03:04:05.123456Z","bogus":true}}'
check "Warn: a Lease is created without its unknown field" code_has 201 '"renewTime":"2026-01-02T03:04:05.123456Z"'
check "... with the Warning" bash -c 'grep -qF "Warning: 299 - \"unknown field \\\"spec.bogus\\\"\"" "'"$WORK"'/hdr" && ! grep -q bogus "'"$WORK"'/body"'
req GET /api/v1/namespaces/default/configmaps/fv1
RV=$(jq_ "d['metadata']['resourceVersion']")
reqh PUT "/api/v1/namespaces/default/configmaps/fv1?fieldValidation=Strict" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fv1","resourceVersion":"'"$RV"'"},"extra":1}'
check "Strict: an unknown field in an update is 400" code_is 400
check "... with kube's text" msg_is 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "extra"'
reqh PATCH "/api/v1/namespaces/default/configmaps/fv1?fieldValidation=Strict" '{"data":{"k":"w"},"spec":{"x":1}}' application/merge-patch+json
check "Strict: a merge patch adding an unknown field is 422" code_has 422 '"reason":"Invalid"' '"field":"patch"'
check "... Invalid value: the patched object, then the error" bash -c "python3 -c \"import json; m=json.load(open('$WORK/body'))['message']; assert m.startswith(' \\\"\\\" is invalid: patch: Invalid value: \\\"{'), m; assert m.endswith(('}\\\": '+'strict decoding error: unknown field \\\"spec\\\"', '...\\\": '+'strict decoding error: unknown field \\\"spec\\\"')), m\""
reqh PATCH "/api/v1/namespaces/default/configmaps/fv1?fieldValidation=Strict" '{"spec":{"x":1},"data":{"k":"w"}}' application/strategic-merge-patch+json
check "Strict: a strategic merge patch too, showing the patch as Go prints it" msg_is ' "" is invalid: patch: Invalid value: "map[data:map[k:w] spec:map[x:1]]": strict decoding error: unknown field "spec"'
check "... its details name no object, as kube's NewInvalid on an empty GroupKind" python3 -c "
import json; d=json.load(open('$WORK/body'))['details']; assert set(d)=={'causes'}, d"
reqh PATCH /api/v1/namespaces/default/configmaps/fv1 '[{"op":"add","op":"add","path":"/data/jw","value":"1","x":2}]' application/json-patch+json
check "Warn: a JSON patch operation's unknown and repeated members are warned of (kube's strict decoding of its ops)" eval 'code_is 200 && warns "json patch unknown field \\\"[0].x\\\"" && warns "json patch duplicate field \\\"[0].op\\\""'
reqh PATCH /api/v1/namespaces/default/configmaps/fv1 '[{"path":"/data/jx","op":"add","path":"/data/jy","aaa":1,"value":"1","value":"2"},{"op":"add","path":"/metadata/labels","value":{"a":"1","a":"2"}}]' application/json-patch+json
check "... in the body's order, a repeated key inside a value too (sigs.k8s.io/json's order)" eval '[[ $CODE == 200 && "$(grep -i "^Warning:" "$WORK/hdr" | tr -d "\r")" == "$(printf "%s\n" "Warning: 299 - \"json patch duplicate field \\\"[0].path\\\"\"" "Warning: 299 - \"json patch unknown field \\\"[0].aaa\\\"\"" "Warning: 299 - \"json patch duplicate field \\\"[0].value\\\"\"" "Warning: 299 - \"json patch duplicate field \\\"[1].value.a\\\"\"")" ]] || { echo "#   $CODE"; cat "$WORK/hdr"; false; }'
reqh PATCH /api/v1/namespaces/default/configmaps/fv1 '[{"op":"add","path":"/zz","value":1}]' application/json-patch+json
check "Warn: a JSON patch adding an unknown field is applied without it" code_is 200
check "... with the Warning" bash -c 'grep -qF "Warning: 299 - \"unknown field \\\"zz\\\"\"" "'"$WORK"'/hdr" && ! grep -q "\"zz\"" "'"$WORK"'/body"'
reqh PATCH "/api/v1/namespaces/default/configmaps/fv1?fieldValidation=Ignore" '{"zz":1}' application/merge-patch+json
check "Ignore: a merge patch's unknown field is dropped silently" bash -c "[[ $CODE == 200 ]] && ! grep -qi '^Warning:' '$WORK/hdr' && ! grep -q zz '$WORK/body'"
YDUP=$'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fvy\n  name: fvy\ndata:\n  a: b\nzed: 1\n'
reqh POST "/api/v1/namespaces/default/configmaps?fieldValidation=Strict" "$YDUP" application/yaml
check "Strict: a YAML body's repeated key and unknown field are 400" code_is 400
check "... in go-yaml's words, then the unknown field" msg_is $'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: yaml: unmarshal errors:\n  line 5: key "name" already set in map, unknown field "zed"'
reqh POST /api/v1/namespaces/default/configmaps "$YDUP" application/yaml
check "Warn: a YAML body warns per repeated key line" bash -c 'grep -qF "Warning: 299 - \"line 5: key \\\"name\\\" already set in map\"" "'"$WORK"'/hdr" && grep -qF "Warning: 299 - \"unknown field \\\"zed\\\"\"" "'"$WORK"'/hdr"'
check "... and creates the object" code_is 201
# kube's warning recorder: texts whole while they total 4,096 runes at most;
# past that all are cut to 256 runes and added only while the total is under
# 4,096 (apiserver's endpoints/filters/warning.go)
warn_texts() { python3 - "$WORK/hdr" <<'PY'
import sys
out = []
for line in open(sys.argv[1], encoding="utf-8").read().splitlines():
    if line.lower().startswith("warning:"):
        q = line.split(":", 1)[1].strip()[len('299 - "'):-1]
        out.append(str(len(q.replace('\\"', '"'))))
print(" ".join(out))
PY
}
reqh POST /api/v1/namespaces/default/configmaps "$(python3 -c '
import json; o={"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fvw1"}}
for i in range(30): o["h%03d" % i + "h" * 300] = "x"
print(json.dumps(o))')"
check "Warn: 30 long warnings are 16 cut to 256 runes, as kube's recorder sends them" eval '[[ $CODE == 201 && "$(warn_texts)" == "$(echo $(yes 256 | head -16))" ]] || { echo "#   $CODE $(warn_texts)"; false; }'
reqh POST /api/v1/namespaces/default/configmaps "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"fvw2\"},\"x$(printf 'é%.0s' $(seq 400))\":1}"
check "... a warning of 417 runes (817 bytes) is sent whole" eval '[[ $(warn_texts) == 417 ]] || { echo "#   $(warn_texts)"; false; }'
reqh POST /api/v1/namespaces/default/configmaps "$(python3 -c '
import json; o={"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fvw3"}}
for i in range(5): o[str(i) * 1000] = 1
print(json.dumps(o))')"
check "... and five of 1,016 runes are cut to 256 once the fifth passes 4,096" eval '[[ $(warn_texts) == "256 256 256 256 256" ]] || { echo "#   $(warn_texts)"; false; }'
# Type errors in built-in bodies (issue 3): kube's decoder refuses them
# before fieldValidation applies, in every mode, in encoding/json's words
# (sigs.k8s.io/json): the first error in the body's order, named by the Go
# struct that holds the field and the JSON path without list indices.
NSP=/api/v1/namespaces/default
LSP=/apis/coordination.k8s.io/v1/namespaces/default/leases
cannot() { msg_is "$1 in version \"$2\" cannot be handled as a $1: json: cannot unmarshal $3"; }
for fv in Strict Warn Ignore; do
	reqh POST "$NSP/configmaps?fieldValidation=$fv" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ty1"},"data":{"a":1},"zz":1}'
	check "$fv: a number in a ConfigMap's data is 400 BadRequest" code_has 400 '"reason":"BadRequest"'
	check "... in Go's words, before the unknown field" cannot ConfigMap v1 'number into Go struct field ConfigMap.data of type string'
done
req GET "$NSP/configmaps/ty1"
check "... and nothing is stored" code_is 404
# Time and MicroTime values: parsed as Go's time.Parse(RFC3339[Micro])
# does, stored as kube encodes them (UTC; seconds, or six digits); one
# that does not parse is 400 in Go's words (a JavaScript Date's three
# digits, a naive Python datetime's missing zone).
req POST "$LSP" '{"metadata":{"name":"tm1"},"spec":{"renewTime":"2026-01-02T03:04:05.123456+02:00","acquireTime":null}}'
check "a Lease's renewTime with an offset is stored in UTC" code_has 201 '"renewTime":"2026-01-02T01:04:05.123456Z"'
check "... and the null acquireTime left out, as Go's nil pointer" bash -c "! grep -q acquireTime '$WORK/body'"
req POST "$LSP" '{"metadata":{"name":"tm2"},"spec":{"renewTime":"2026-11-30T19:27:41.434Z"}}'
check "... three fractional digits are 400" code_has 400 '"reason":"BadRequest"'
check "... in Go's words" msg_is 'Lease in version "v1" cannot be handled as a Lease: parsing time "2026-11-30T19:27:41.434Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".434Z" as ".000000"'
req POST "$NSP/events" '{"metadata":{"name":"tm3"},"involvedObject":{"kind":"ConfigMap","name":"x"},"firstTimestamp":"2026-01-02T03:04:05.999-00:30"}'
check "an Event's firstTimestamp is stored in UTC, to the second" code_has 201 '"firstTimestamp":"2026-01-02T03:34:05Z"'
req DELETE "$NSP/events/tm3"
req POST "$NSP/events" '{"metadata":{"name":"tm4"},"involvedObject":{"kind":"ConfigMap","name":"x"},"lastTimestamp":"2026-01-02T03:04:05"}'
check "... one without a zone is 400" code_has 400 'parsing time \"2026-01-02T03:04:05\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\" as \"Z07:00\"'
req GET "$NSP/events/tm4"
check "... and nothing is stored" code_is 404
# A strategic merge patch's result goes through the unstructured
# converter, which parses times with the same UnmarshalJSON: the same 422
# as the other patches, and the same normalization.
req PATCH "$LSP/tm1" '{"spec":{"acquireTime":"not-a-time"}}' application/strategic-merge-patch+json
check "a strategic merge patch with a MicroTime that does not parse is 422" code_has 422 'parsing time \"not-a-time\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"not-a-time\" as \"2006\"'
req PATCH "$LSP/tm1" '{"spec":{"acquireTime":"2026-01-02T05:00:00.000000+02:00"}}' application/strategic-merge-patch+json
check "... one with an offset is stored in UTC" code_has 200 '"acquireTime":"2026-01-02T03:00:00.000000Z"'
req POST "$NSP/events" '{"metadata":{"name":"tm5"},"involvedObject":{"kind":"ConfigMap","name":"x"}}'
req PATCH "$NSP/events/tm5" '{"lastTimestamp":"junk"}' application/strategic-merge-patch+json
check "... and an Event's Time too" code_has 422 'parsing time \"junk\" as \"2006-01-02T15:04:05Z07:00\"'
req GET "$NSP/events/tm5"
check "... which stays as it was" bash -c "! grep -q junk '$WORK/body'"
req DELETE "$NSP/events/tm5"
req POST "$NSP/events" '{"metadata":{"name":"tm7"},"involvedObject":{"kind":"ConfigMap","name":"x"},"lastTimestamp":"0001-01-01T00:00:00Z","eventTime":"0001-01-01T02:00:00.000000+02:00"}'
check "the zero time is written null, as Time's and MicroTime's MarshalJSON write it" code_has 201 '"lastTimestamp":null' '"eventTime":null'
req DELETE "$NSP/events/tm7"
req POST "$NSP/secrets" '{"metadata":{"name":"tm6"},"data":{"a":"YQ=="}}'
req PATCH "$NSP/secrets/tm6" '{"data":{"s":"!!"}}' application/strategic-merge-patch+json
check "... and a Secret's data is decoded as Go's []byte: 422 on the patch" code_has 422 'patch: Invalid value: \"map[data:map[s:!!]]\": illegal base64 data at input byte 0'
req PATCH "$NSP/secrets/tm6" '{"data":{"s":"YR=="}}' application/strategic-merge-patch+json
check "... a valid value stored re-encoded" code_has 200 '"data":{"a":"YQ==","s":"YQ=="}'
req DELETE "$NSP/secrets/tm6"
req POST "$NSP/configmaps" '{"apiVersion":"v1","kind":"ConfigMap","metadata":"ty2"}'
check "a string for metadata is 400" code_is 400
check "... into v1.ObjectMeta" cannot ConfigMap v1 'string into Go struct field ConfigMap.metadata of type v1.ObjectMeta'
req POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ty3","labels":["a"]}}'
check "a list for a Namespace's labels is 400" code_is 400
check "... into map[string]string of ObjectMeta" cannot Namespace v1 'array into Go struct field ObjectMeta.metadata.labels of type map[string]string'
req POST "$NSP/secrets" '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"ty4"},"data":{"a":true}}'
check "a bool in a Secret's data is 400, into []uint8" cannot Secret v1 'bool into Go struct field Secret.data of type []uint8'
req POST "$NSP/secrets" '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"ty4"},"data":{"a":"not base64"}}'
check "data that is not base64 is 400 in Go's words, at the bad byte" code_has 400 'Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 3'
req POST "$NSP/secrets" '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"ty4"},"data":{"a":"YWJj\nZA==","b":"YR=="}}'
check "... line breaks are skipped and the bytes stored re-encoded, as Go decodes and kube stores them" code_has 201 '"data":{"a":"YWJjZA==","b":"YQ=="}'
req POST "$NSP/configmaps" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ty4"},"binaryData":{"b":"!!"}}'
check "... and a ConfigMap's binaryData is decoded the same way" code_has 400 'ConfigMap in version \"v1\" cannot be handled as a ConfigMap: illegal base64 data at input byte 0'
SVC='{"apiVersion":"v1","kind":"Service","metadata":{"name":"ty5"},"spec":{"ports":[{"port":80},{"port":PORT}]}}'
req POST "$NSP/services" "${SVC/PORT/\"81\"}"
check "a string for a Service's second port is 400" code_is 400
check "... named by ServicePort and the path without the index" cannot Service v1 'string into Go struct field ServicePort.spec.ports.port of type int32'
req POST "$NSP/services" "${SVC/PORT/99999999999}"
check "a port beyond int32 is 400, with the number" cannot Service v1 'number 99999999999 into Go struct field ServicePort.spec.ports.port of type int32'
req POST "$NSP/services" '{"apiVersion":"v1","kind":"Service","metadata":{"name":"ty5"},"spec":{"type":7,"ports":[{"port":"x","targetPort":true}]}}'
check "IntOrString's own error ends decoding and wins over earlier ones" cannot Service v1 'bool into Go struct field ServicePort.spec.ports.targetPort of type int32'
req POST "$NSP/services" '{"apiVersion":"v1","kind":"Service","metadata":{"name":"ty5"},"spec":{"type":7,"ports":[{"port":"x"}]}}'
check "otherwise the first error in the body wins, named by its Go type" cannot Service v1 'number into Go struct field ServiceSpec.spec.type of type v1.ServiceType'
req POST "$NSP/services" '{"apiVersion":"v1","kind":"Service","metadata":{"name":"ty5"},"spec":{"ports":{"port":80}}}'
check "an object for a list is 400, into its slice type" cannot Service v1 'object into Go struct field ServiceSpec.spec.ports of type []v1.ServicePort'
LEASE='{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"ty6"},"spec":{"leaseDurationSeconds":SECS}}'
req POST "$LSP" "${LEASE/SECS/\"30\"}"
check "a string for a Lease's duration is 400" cannot Lease v1 'string into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32'
req POST "$LSP" "${LEASE/SECS/1.5}"
check "a fraction for it is 400, with the number" cannot Lease v1 'number 1.5 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32'
req POST "$LSP" '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"ty6"},"spec":{"renewTime":5}}'
check "a number for a MicroTime is 400, from its UnmarshalJSON" cannot Lease v1 'number into Go struct field LeaseSpec.spec.renewTime of type string'
req POST "$LSP" $'apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: ty6}\nspec: {leaseDurationSeconds: 1.5}\n' application/yaml
check "a YAML body is checked too" cannot Lease v1 'number 1.5 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32'
req POST "$LSP" "${LEASE/SECS/null}"
check "null is accepted (Go leaves the zero value)" code_is 201
check "... and left out (a nil pointer with omitempty)" bash -c "! grep -q leaseDurationSeconds '$WORK/body'"
req POST "$NSP/configmaps" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ty7","labels":null,"annotations":{"a":null}},"data":null,"binaryData":{"b":null},"immutable":null}'
check "nulls in a ConfigMap are accepted" code_is 201
check "... a null string in a map is stored as \"\"" has '"annotations":{"a":""}'
check "... and a null []byte (binaryData) too, as kube's protobuf storage gives it back" has '"binaryData":{"b":""}'
req POST "$NSP/services" '{"apiVersion":"v1","kind":"Service","metadata":{"name":"ty8"},"spec":{"ports":[{"name":"a","port":80,"targetPort":"http","nodePort":null},{"name":"b","port":81,"targetPort":null}],"selector":{"a":"b"}}}'
check "a well-typed Service with a named targetPort is created" code_has 201 '"targetPort":"http"'
check "... a null targetPort defaults to the port, as kube's zero value does" has '"port":81,"targetPort":81'
req GET "$NSP/configmaps/ty7"
RV=$(jq_ "d['metadata']['resourceVersion']")
req PUT "$NSP/configmaps/ty7" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ty7","resourceVersion":"'"$RV"'"},"immutable":"yes"}'
check "an update with a wrong type is 400 too" cannot ConfigMap v1 'string into Go struct field ConfigMap.immutable of type bool'
# a patch whose result has a wrong type: 422 on field "patch" (kube's patch
# handler), with the decoder's words for JSON and merge patches, and the
# unstructured converter's for a strategic merge patch
reqh PATCH "$NSP/configmaps/ty7?fieldValidation=Ignore" '{"data":{"k":2}}' application/merge-patch+json
check "a merge patch giving a number to data is 422" code_has 422 '"reason":"Invalid"' '"field":"patch"'
check "... Invalid value: the patched object, then Go's error" bash -c "python3 -c \"import json; m=json.load(open('$WORK/body'))['message']; assert m.startswith(' \\\"\\\" is invalid: patch: Invalid value: \\\"{'), m; assert m.endswith(('}\\\": '+'json: cannot unmarshal number into Go struct field ConfigMap.data of type string', '...\\\": '+'json: cannot unmarshal number into Go struct field ConfigMap.data of type string')), m\""
req PATCH "$LSP/ty6" '[{"op":"add","path":"/spec/leaseDurationSeconds","value":"x"}]' application/json-patch+json
check "a JSON patch giving a string to a Lease's duration is 422" code_has 422 'json: cannot unmarshal string into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32'
req PATCH "$NSP/configmaps/ty7" '{"data":{"k":2}}' application/strategic-merge-patch+json
check "a strategic merge patch is 422 in the converter's words" msg_is ' "" is invalid: patch: Invalid value: "map[data:map[k:2]]": cannot convert int64 to string'
req PATCH "$LSP/ty6" '{"spec":{"leaseDurationSeconds":1.5}}' application/strategic-merge-patch+json
check "... a fraction for an int32" msg_is ' "" is invalid: patch: Invalid value: "map[spec:map[leaseDurationSeconds:1.5]]": cannot convert float64 to int32'
req PATCH "$LSP/ty6" '{"spec":{"leaseDurationSeconds":3000000000.0}}' application/strategic-merge-patch+json
check "... a whole number past an int32 is converted as Go converts it, then validated" code_has 422 'spec.leaseDurationSeconds: Invalid value: -1294967296: must be greater than 0'
req PATCH "$LSP/ty6" '{"spec":{"leaseDurationSeconds":1e300}}' application/strategic-merge-patch+json
check "... 1e300 too (0), never stored as a real no Go client reads" code_has 422 'spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0'
req PATCH "$LSP/ty6" '{"metadata":{"labels":"x"}}' application/strategic-merge-patch+json
check "... a string for a map" msg_is ' "" is invalid: patch: Invalid value: "map[metadata:map[labels:x]]": cannot restore map from string'
req GET "$LSP/ty6"
check "... and the Lease is unchanged" [ "$(jq_ "d['spec'].get('leaseDurationSeconds')")" == None ]
req PATCH "$LSP/ty6" '{"spec":{"leaseDurationSeconds":30,"holderIdentity":null}}' application/strategic-merge-patch+json
check "a well-typed strategic merge patch still applies" code_has 200 '"leaseDurationSeconds":30'
# YAML has no stream serializer in kube: a watch asking only for YAML is 406
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H 'Accept: application/yaml' "$URL/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1")
check "a watch with Accept: application/yaml is 406" [ "$CODE" == 406 ]
check "... naming the stream media types (the Status in YAML, as negotiated)" grep -qF 'only the following media types are accepted: application/json;stream=watch,' "$WORK/body"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io, application/yaml' "$URL/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1")
check "a Table watch in JSON still works" [ "$CODE" == 200 ]
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H 'Accept: application/yaml' "$URL/api/v1/namespaces/default/configmaps")
check "a list in YAML still works" [ "$CODE" == 200 ]
# client-go's metadata client watches with as=PartialObjectMetadata: every
# event object, bookmarks included, is PartialObjectMetadata
curl -sS -N -m 3 -o "$WORK/mwatch" -H 'Accept: application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json' \
	"$URL/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=2"
check "a metadata watch gets PartialObjectMetadata events and bookmark" python3 -c "
import json
ev = [json.loads(l) for l in open('$WORK/mwatch') if l.strip()]
assert ev and all(e['object']['kind'] == 'PartialObjectMetadata' and e['object']['apiVersion'] == 'meta.k8s.io/v1' for e in ev), ev[:2]
import base64
a = ev[-1]['object']['metadata']['annotations']
assert ev[-1]['type'] == 'BOOKMARK' and a['k8s.io/initial-events-end'] == 'true', ev[-1]
# under metav1.InitialEventsListBlueprintAnnotationKey, which client-go's
# watch-list List() reads (lapis wrote k8s.io/...: found by a helper)
assert 'k8s.io/initial-events-list-blueprint' not in a, a
assert json.loads(base64.b64decode(a['kubernetes.io/initial-events-list-blueprint'])) == {'kind': 'PartialObjectMetadataList', 'apiVersion': 'meta.k8s.io/v1', 'metadata': {}, 'items': None}, a
# written as Go's json.Encoder writes it, with a newline at the end
assert base64.b64decode(a['kubernetes.io/initial-events-list-blueprint']).endswith(b'}\n'), a
assert all('data' not in e['object'] for e in ev)
# a typed bookmark object's zero creationTimestamp is null, as Go encodes it
assert list(ev[-1]['object']['metadata'])[:2] == ['resourceVersion', 'creationTimestamp'] and ev[-1]['object']['metadata']['creationTimestamp'] is None, ev[-1]"
# kube's cacheWatcher also sends a bookmark 2 s before a watch's deadline,
# so that the client re-watches from a fresh revision
curl -sS -N -m 6 -o "$WORK/prewatch" "$URL/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=$(curl -sS "$URL/api/v1/namespaces/default/configmaps?limit=1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])')&allowWatchBookmarks=true&timeoutSeconds=3"
check "a 3 s watch with bookmarks gets one before it ends" python3 -c "
import json
ev = [json.loads(l) for l in open('$WORK/prewatch') if l.strip()]
assert [e['type'] for e in ev] == ['BOOKMARK'], ev"
# OpenAPI v3: real schemas for built-ins
req GET /openapi/v3/api/v1
check "OpenAPI v3 describes ServicePort with port required" python3 -c "import json; s=json.load(open('$WORK/body'))['components']['schemas']; p=s['io.k8s.api.core.v1.ServicePort']; assert p['required']==['port'] and p['properties']['port']['type']=='integer'; assert s['io.k8s.api.core.v1.ConfigMap']['properties']['data']['additionalProperties']['type']=='string'"
check "... and lists a namespaced kind across namespaces, as list<Kind>ForAllNamespaces" python3 -c "import json; p=json.load(open('$WORK/body'))['paths']['/api/v1/configmaps']; assert p['get']['x-kubernetes-action']=='list' and p['get']['x-kubernetes-group-version-kind']['kind']=='ConfigMap', p"
check "... with kube's operations: ids, tags, deletecollection, subresources (status, finalize, token), " python3 -c "
import json; d=json.load(open('$WORK/body')); P=d['paths']; S=d['components']['schemas']
ids=lambda p: {m: (o['operationId'], o['x-kubernetes-action']) for m, o in P[p].items() if m != 'parameters'}
assert ids('/api/v1/configmaps')=={'get': ('listCoreV1ConfigMapForAllNamespaces','list')}, ids('/api/v1/configmaps')
assert ids('/api/v1/namespaces/{namespace}/configmaps')=={'get': ('listCoreV1NamespacedConfigMap','list'), 'post': ('createCoreV1NamespacedConfigMap','post'), 'delete': ('deleteCoreV1CollectionNamespacedConfigMap','deletecollection')}
assert ids('/api/v1/namespaces/{namespace}/configmaps/{name}')=={'get': ('readCoreV1NamespacedConfigMap','get'), 'put': ('replaceCoreV1NamespacedConfigMap','put'), 'patch': ('patchCoreV1NamespacedConfigMap','patch'), 'delete': ('deleteCoreV1NamespacedConfigMap','delete')}
assert ids('/api/v1/namespaces/{name}/status')['put']==('replaceCoreV1NamespaceStatus','put')
assert ids('/api/v1/namespaces/{name}/finalize')=={'put': ('replaceCoreV1NamespaceFinalize','put')}
t=P['/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token']['post']
assert t['operationId']=='createCoreV1NamespacedServiceAccountToken' and t['x-kubernetes-group-version-kind']=={'group':'authentication.k8s.io','kind':'TokenRequest','version':'v1'}, t
o=P['/api/v1/namespaces/{namespace}/configmaps']['get']
assert o['tags']==['core_v1'] and o['description']=='list or watch objects of kind ConfigMap', o
assert o['responses']['200']['content']['application/json']['schema']['\$ref']=='#/components/schemas/io.k8s.api.core.v1.ConfigMapList'
assert [p['name'] for p in P['/api/v1/namespaces/{namespace}/configmaps/{name}']['parameters']]==['name','namespace','pretty']
sp=P['/api/v1/namespaces/{name}/status']['patch']
assert 'application/strategic-merge-patch+json' in sp['requestBody']['content'] and 'fieldValidation' in [p['name'] for p in sp['parameters']], sp
"
check "... every schema it refers to defined in it" refs_defined "$WORK/body"
req GET /openapi/v3/apis/apiextensions.k8s.io/v1
check "a built-in message without fields has no empty properties (kube-openapi leaves it out: e2e openapiv3 round trip)" python3 -c "
import json; S=json.load(open('$WORK/body'))['components']['schemas']
st=S['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresourceStatus']
assert st=={'type':'object'}, st
bad=[k for k,v in S.items() if v.get('properties')=={}]
assert not bad, bad
"
# kube-openapi's handler3: ?hash= of the current document makes it
# cacheable for a year, another hash redirects to the current one, an
# ETag revalidates, and an Accept with no JSON clause is 406
req GET /openapi/v3
H=$(python3 -c "import json; print(json.load(open('$WORK/body'))['paths']['api/v1']['serverRelativeURL'])")
check "the root document links api/v1 with its hash" [ "${H%%\?hash=*}" == /openapi/v3/api/v1 ]
curl -sS -D "$WORK/hdr" -o /dev/null "$URL$H"
check "... whose URL is Cache-Control: public, immutable" grep -qix 'Cache-Control: public, immutable.' "$WORK/hdr"
check "... and Expires a year ahead" grep -qi "^Expires: .* $(( $(date -u +%Y) + 1 )) " "$WORK/hdr"
ETAG=$(sed -n 's/^ETag: \(.*\)\r$/\1/Ip' "$WORK/hdr")
check "... with an ETag that is the hash, quoted" [ "$ETAG" == "\"${H##*hash=}\"" ]
curl -sS -D "$WORK/hdr" -o /dev/null "$URL/openapi/v3/api/v1"
check "without hash it stays no-cache" grep -qix 'Cache-Control: no-cache, private.' "$WORK/hdr"
CODE=$(curl -sS -o /dev/null -w '%{http_code} %{redirect_url}' "$URL/openapi/v3/api/v1?hash=0BAD")
check "a stale hash is 301 to the current URL" [ "$CODE" == "301 $URL$H" ]
CODE=$(curl -sS -o /dev/null -w '%{http_code}' -H "If-None-Match: $ETAG" "$URL$H")
check "If-None-Match with the ETag is 304" [ "$CODE" == 304 ]
inm_code() { curl -sS -o /dev/null -w '%{http_code}' -H "If-None-Match: $1" "$URL$H"; }
check "... so is one listing it among others, weak, or * (http.ServeContent)" eval '[[ $(inm_code "\"x\", $ETAG") == 304 && $(inm_code "W/$ETAG") == 304 && $(inm_code "*") == 304 && $(inm_code "\"x\"") == 200 ]]'
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H 'Accept: text/html' "$URL/openapi/v3/api/v1")
check "Accept: text/html is 406 with no body" bash -c "[[ $CODE == 406 && ! -s '$WORK/body' ]]"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H 'Accept: application/com.github.proto-openapi.spec.v3@v1.0+protobuf, application/json' "$URL/openapi/v3/api/v1")
check "a protobuf clause before JSON gets JSON" bash -c "[[ $CODE == 200 ]] && head -c 1 '$WORK/body' | grep -q '{'"
# OpenAPI v2: kubectl 1.27 and 1.28 fetch it in protobuf before create -f
# and apply -f; it holds the paths (no definitions: schemas are in v3)
# query options as kube decodes and validates them
req POST '/api/v1/namespaces/default/configmaps?dryRun=All&dryRun=x' '{"metadata":{"name":"dr2"}}'
check "dryRun=All&dryRun=x is 422 naming both values" code_has 422 'CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"All\", \"x\"}: supported values: \"All\"'
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"opt1"}}'
req DELETE '/api/v1/namespaces/default/configmaps/opt1?dryRun=x'
check "a DELETE's bad dryRun names DeleteOptions" code_has 422 'DeleteOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"x\"}'
req PATCH '/api/v1/namespaces/default/configmaps/opt1?fieldValidation=bad' '{}' application/merge-patch+json
check "a PATCH's bad fieldValidation names PatchOptions" code_has 422 'PatchOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"bad\"'
req DELETE '/api/v1/namespaces/default/configmaps/opt1?orphanDependents=true&propagationPolicy=Background'
check "orphanDependents beside propagationPolicy is 422 showing the policy" code_has 422 'propagationPolicy: Invalid value: \"Background\": orphanDependents and deletionPropagation cannot be both set'
req DELETE '/api/v1/namespaces/default/configmaps/opt1?gracePeriodSeconds=abc'
check "a gracePeriodSeconds that is no integer is 400" code_has 400 'strconv.ParseInt: parsing \"abc\": invalid syntax'
req DELETE /api/v1/namespaces/default/configmaps/opt1 '{"kind":"ConfigMap","apiVersion":"v1"}'
check "a DELETE whose body is another kind than DeleteOptions is 400" code_has 400 'no kind \"ConfigMap\" is registered for version \"v1\"'
req DELETE /apis/coordination.k8s.io/v1/namespaces/default/leases/nope '{"kind":"DeleteOptions","apiVersion":"coordination.k8s.io/v1"}'
check "... DeleteOptions of the resource's own group version pass (404 here)" code_is 404
# a DeleteOptions member of the wrong type is kube's 400 of the decoding
# error, and nothing is deleted (a string dryRun once deleted for real)
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"dopt"}}'
req DELETE /api/v1/namespaces/default/configmaps/dopt '{"dryRun":"All"}'
check "a DELETE body with a string dryRun is 400" code_has 400 'json: cannot unmarshal string into Go struct field DeleteOptions.dryRun of type []string'
req DELETE /api/v1/namespaces/default/configmaps '{"dryRun":"All"}'
check "... also on a collection" code_has 400 'DeleteOptions.dryRun of type []string'
req DELETE /api/v1/namespaces/default/configmaps/dopt '{"propagationPolicy":5}'
check "... a number for propagationPolicy, in Go's type" code_has 400 'json: cannot unmarshal number into Go struct field DeleteOptions.propagationPolicy of type v1.DeletionPropagation'
req DELETE /api/v1/namespaces/default/configmaps/dopt '{"dryRun":["All","x"]}'
check "... a body's dryRun list is validated whole (422 naming both)" code_has 422 'dryRun: Unsupported value: []string{\"All\", \"x\"}: supported values: \"All\"'
req GET /api/v1/namespaces/default/configmaps/dopt
check "... and the object is still there" code_is 200
req GET /api/v1/namespaces/default/configmaps/opt1
check "... and deletes nothing" code_is 200
req GET '/api/v1/namespaces/default/configmaps?timeoutSeconds=x'
check "a list's timeoutSeconds that is no integer is 400" code_has 400 'strconv.ParseInt: parsing \"x\": invalid syntax'
req GET '/api/v1/namespaces/default/configmaps?sendInitialEvents=true'
check "sendInitialEvents on a list is kube's 422" code_has 422 'ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list'
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' --max-time 5 "$URL/api/v1/namespaces/default/configmaps?watch&timeoutSeconds=1")
check "a bare ?watch is a watch (Go reads it as an empty value: true)" grep -q '"type":"ADDED"' "$WORK/body"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' "$URL/healthz?verbose")
check "a bare ?verbose is verbose" grep -q '^\[+\]ping ok' "$WORK/body"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' "$URL/readyz?verbose&exclude=store&exclude=nope&exclude=bogus")
check "?exclude passes a check without running it and names what matched none (kube's healthz)" python3 -c "
b = open('$WORK/body').read().splitlines()
assert '[+]store excluded: ok' in b and '[+]etcd ok' in b, b
assert b[-2:] == ['warn: some health checks cannot be excluded: no matches for \"bogus\", \"nope\"', 'readyz check passed'], b"
req GET /livez/etcd
check "... and /livez/etcd is the store's check, under kube's name" code_has 200 ok
# create in a terminating namespace: kube's 403 from admission, which runs
# before a generated name exists
req POST /api/v1/namespaces '{"metadata":{"name":"term1","finalizers":["example.com/hold"]}}'
req DELETE /api/v1/namespaces/term1
req POST /api/v1/namespaces/term1/configmaps '{"metadata":{"generateName":"gg-"}}'
check "a create in a terminating namespace is 403 naming the generateName prefix" code_has 403 'configmaps \"gg-\" is forbidden: unable to create new content in namespace term1 because it is being terminated'
check "... with the resource in its details, as kube's" python3 -c "
import json; d = json.load(open('$WORK/body'))['details']
assert (d['name'], d['kind'], d.get('group', '')) == ('gg-', 'configmaps', ''), d
assert d['causes'][0]['reason'] == 'NamespaceTerminating', d"
req PATCH /api/v1/namespaces/term1 '{"metadata":{"finalizers":null}}' application/merge-patch+json
# a namespace's own delete (kube's namespace storage): the timestamp and
# Terminating, no grace period; while its content holds it, a second
# DELETE changes nothing (no policy finalizers added)
req POST /api/v1/namespaces '{"metadata":{"name":"term2"}}'
req POST /api/v1/namespaces/term2/configmaps '{"metadata":{"name":"held","finalizers":["example.com/hold"]}}'
req DELETE /api/v1/namespaces/term2
check "a namespace DELETE sets no deletionGracePeriodSeconds" bash -c "python3 -c \"import json; m=json.load(open('$WORK/body'))['metadata']; assert m.get('deletionTimestamp') and 'deletionGracePeriodSeconds' not in m, m\""
req DELETE '/api/v1/namespaces/term2?propagationPolicy=Orphan'
check "... a second DELETE while its content is held adds no finalizer" bash -c "python3 -c \"import json; m=json.load(open('$WORK/body'))['metadata']; assert 'orphan' not in m.get('finalizers', []), m\""
req PATCH /api/v1/namespaces/term2/configmaps/held '{"metadata":{"finalizers":null}}' application/merge-patch+json
# the GC's orphaning drops its finalizer; an emptied list goes with it
# (Go's omitempty), not [] (the namespace stays while its content is held)
req POST /api/v1/namespaces '{"metadata":{"name":"term3"}}'
req POST /api/v1/namespaces/term3/configmaps '{"metadata":{"name":"held","finalizers":["example.com/hold"]}}'
req DELETE '/api/v1/namespaces/term3?propagationPolicy=Orphan'
check "a namespace deleted with Orphan takes the orphan finalizer" has '"finalizers":["orphan"]'
orphan_gone() {
	local i
	for i in $(seq 300); do
		req GET /api/v1/namespaces/term3
		grep -q '"orphan"' "$WORK/body" || return 0
		sleep 0.1
	done
	return 1
}
check "... which the GC removes" orphan_gone
check "... leaving no empty finalizers list" bash -c "python3 -c \"import json; m=json.load(open('$WORK/body'))['metadata']; assert 'finalizers' not in m, m\""
req PATCH /api/v1/namespaces/term3/configmaps/held '{"metadata":{"finalizers":null}}' application/merge-patch+json
req GET '/api/v1/watch/namespaces/default/configmaps/opt1?fieldSelector=metadata.name%3Dother&timeoutSeconds=1'
check "a named watch whose fieldSelector asks for another name is kube's 400" code_has 400 "fieldSelector metadata.name doesn't match requested name"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' --max-time 5 "$URL/api/v1/watch/namespaces/default/configmaps/opt1?fieldSelector=metadata.name%3Dopt1&timeoutSeconds=1")
check "... one that asks for the same name streams" grep -q '"type":"ADDED"' "$WORK/body"
req GET '/api/v1/namespaces/default?resourceVersion=99999999'
check "a GET of one object at a revision not yet reached is kube's 504 (after its 3 s wait)" code_has 504 'Timeout: Too large resource version: 99999999, current: ' '"retryAfterSeconds":1'
req GET '/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dopt1&limit=5&resourceVersion=99999999'
check "... a list of one name with a limit at such a revision: etcd's read of the one key, its 504 at once, no retryAfterSeconds (found by an audit)" bash -c "[[ $CODE == 504 ]] && grep -q 'Too large resource version: 99999999' '$WORK/body' && ! grep -q retryAfterSeconds '$WORK/body'"
FUTURE_TOK=$(printf '{"v":"meta.k8s.io/v1","rv":99999999,"start":"a"}' | base64 -w0)
req GET "/api/v1/namespaces/default/configmaps?limit=2&continue=$FUTURE_TOK"
check "... a continue token at such a revision: etcd's plain 500, as kube 1.33 sends every continue to etcd (found by an audit)" code_has 500 '"message":"etcdserver: mvcc: required revision is a future revision","code":500}'
req GET '/api/v1/namespaces/default?resourceVersion=abc'
check "... at one that is no number: the versioner's plain 500, no reason" code_has 500 '"message":"resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax","code":500}'
req GET '/api/v1/namespaces/default?resourceVersion=18446744073709551616'
check "... or out of range" code_has 500 'parsing \"18446744073709551616\": value out of range'
# query keys are matched exactly, as Go's url.Values: another case is an
# unknown parameter kube ignores (MHD's own lookup ignores case)
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"qcase"}}'
req DELETE '/api/v1/namespaces/default/configmaps/qcase?DRYRUN=All'
check "?DRYRUN=All is no dry run: the DELETE deletes" code_is 200
req GET /api/v1/namespaces/default/configmaps/qcase
check "... the object is gone" code_is 404
req GET '/api/v1/namespaces/default/configmaps?WATCH=1&LIMIT=1'
check "?WATCH=1&LIMIT=1 is a whole list, no watch and no page" code_has 200 '"kind":"ConfigMapList"'
check "... without a continue token" python3 -c "import json; m=json.load(open('$WORK/body'))['metadata']; assert 'continue' not in m, m"
# a pair Go's url.ParseQuery refuses (a bad '%' escape, a ';') is dropped
# as Go drops it: the parameter is absent, not a 400
for q in 'limit=%zz' 'labelSelector=%' 'limit=1;x=2' 'labelSelector=a%2'; do
	req GET "/api/v1/namespaces?$q"
	check "?$q is no parameter: the whole list" eval 'code_is 200 && [[ $(n_items) -gt 2 ]]'
done
req GET '/api/v1/namespaces?limit=%zz&limit=1'
check "... and a later good pair of the same key counts" eval 'code_is 200 && [[ $(n_items) == 1 ]]'
req GET '/api/v1/namespaces?labelSelector=a%3Bb'
check "an escaped ';' is a character of the value" code_has 400 'Invalid value: \"a;b\"'
# a list's resourceVersion is strconv.ParseUint's too: no blank, no sign
for bad in '%201' '%091' '%2B1' '-1' '1%20'; do
	req GET "/api/v1/namespaces/default/configmaps?resourceVersion=$bad"
	check "a list at resourceVersion '$bad' is 400 (strtoll took it)" code_has 400 'invalid resource version: '
done
req GET '/api/v1/namespaces/default/configmaps?resourceVersion=01'
check "... a leading zero is still a number" code_is 200
req GET '/api/v1/namespaces/default/configmaps?resourceVersion=abc'
check "... in the storage's words (ValidateListOptions wraps the versioner's error)" code_has 400 'invalid resource version: resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax'
req GET '/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=abc'
check "a watch at such a revision is the watch cache's plain 500" code_has 500 'resourceVersion: Invalid value: \"abc\": strconv.ParseUint'
check "... without a reason" eval '! has "\"reason\""'
req GET '/api/v1/namespaces/default/configmaps?limit=1'
CT=$(python3 -c "import json; print(json.load(open('$WORK/body'))['metadata']['continue'])")
req GET "/api/v1/namespaces/default/configmaps?continue=$CT&resourceVersion=abc"
check "a continue token beside a resourceVersion: the token is read first, then any but 0 refused" code_has 400 'specifying resource version is not allowed when using continue'
req GET '/api/v1/namespaces/default/configmaps?continue=garbage&resourceVersion=5'
check "... a bad token is reported first, in Go's words" code_has 400 'invalid continue token: continue key is not valid: invalid character '"'"'\\u0081'"'"' looking for beginning of value'
req GET '/api/v1/namespaces/default/configmaps?limit=1&continue=garbage!!'
check "a token that is no base64: Go's CorruptInputError offset" code_has 400 'invalid continue token: continue key is not valid: illegal base64 data at input byte 7'
req GET '/api/v1/namespaces/default/configmaps?resourceVersionMatch=Exact&resourceVersion=99999999'
check "an exact list at a revision not yet reached is etcd's plain 500 (kube 1.33 sends it to etcd)" code_has 500 'etcdserver: mvcc: required revision is a future revision'
req GET '/api/v1/namespaces/default/configmaps?limit=1&resourceVersion=99999999'
check "... so is a paged one at such a revision (the legacy exact read)" code_has 500 'etcdserver: mvcc: required revision is a future revision'
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"single1"}}'
req GET '/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dsingle1&limit=1'
check "a list of one name reads that key alone (MatchesSingle): no continue token, whatever the limit" eval 'code_has 200 "\"name\":\"single1\"" && ! has "\"continue\""'
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"w00gone"}}'
req DELETE /api/v1/namespaces/default/configmaps/w00gone
req GET '/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=00&timeoutSeconds=1'
check "a watch at resourceVersion 00 is one at 0 (ParseResourceVersion): the current state, no history" eval 'code_has 200 "\"name\":\"single1\"" && ! has w00gone'
req GET '/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&timeoutSeconds=3&resourceVersion=99999999'
check "a watch from a revision not yet reached gets no bookmark (kube's carry its cache's revision, older than the watch's)" eval 'code_is 200 && ! has BOOKMARK'
reqa() { CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H "Accept: $1" "$URL$2"); }
reqa 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io' '/api/v1/namespaces/default/configmaps?labelSelector=none%3D1'
check "an empty PartialObjectMetadataList has items null (kube fills a nil slice)" code_has 200 '"items":null'
reqa 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io' '/api/v1/namespaces/default/configmaps/single1'
check "PartialObjectMetadataList of one object: kube's negotiation takes it, its transform refuses (406, the internal type named)" code_has 406 'you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)'
reqa 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io' '/apis/coordination.k8s.io/v1/namespaces/default/leases'
check "... PartialObjectMetadata of a list likewise" code_has 406 'you requested PartialObjectMetadata, but the requested object is a list (*coordination.LeaseList)'
# the transform refuses only what the get or list returned: their own
# errors come first (kube's transformResponseObject runs after them)
reqa 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io' '/api/v1/namespaces/default/configmaps/nonexist'
check "... a get of a missing object with the wrong shape is 404, not 406" code_has 404 'configmaps \"nonexist\" not found'
reqa 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io' '/api/v1/namespaces/default/configmaps?resourceVersionMatch=Exact'
check "... a list with bad options is their 422" code_has 422 'resourceVersionMatch is forbidden unless resourceVersion is provided'
reqa 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io' '/api/v1/namespaces/default/configmaps?resourceVersion=abc'
check "... and a malformed resourceVersion its 400" code_has 400 'invalid resource version'
# An error's Status skips the clauses asking for a conversion (kube's
# DefaultEndpointRestrictions): with none left, indented JSON
CODE=$(curl -sS -A client-go -D "$WORK/hdr" -o "$WORK/body" -w '%{http_code}' -H 'Accept: application/yaml;as=Table;g=meta.k8s.io;v=v1' "$URL/api/v1/namespaces/default/configmaps/nonexist")
check "an error asked for as a YAML Table comes as indented JSON" eval '[ "$CODE" == 404 ] && grep -qi "^content-type: application/json" "$WORK/hdr" && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"kind\"]==\"Status\" and d[\"code\"]==404" "$WORK/body" && grep -q "^  \"kind\": \"Status\"" "$WORK/body"'
CODE=$(curl -sS -A client-go -D "$WORK/hdr" -o "$WORK/body" -w '%{http_code}' -H 'Accept: application/yaml;as=Table;g=meta.k8s.io;v=v1, application/yaml' "$URL/api/v1/namespaces/default/configmaps/nonexist")
check "... and as YAML where a plain YAML clause is acceptable" eval '[ "$CODE" == 404 ] && grep -qi "^content-type: application/yaml" "$WORK/hdr" && grep -q "^kind: Status" "$WORK/body"'
reqa 'application/json;as=Table;v=v1;g=meta.k8s.io' '/apis/apiextensions.k8s.io/v1/customresourcedefinitions?labelSelector=none%3D1'
check "an empty Table of CRDs has rows null (kube's default table convertor)" code_has 200 '"rows":null'
reqa 'application/json;as=Table;v=v1;g=meta.k8s.io' '/api/v1/namespaces/default/configmaps?labelSelector=none%3D1'
check "... one of a built-in kind [] (its printer)" code_has 200 '"rows":[]'
# kube's storages without a TableConvertor refuse a Table clause
# (AllowsMediaTypeTransform), before the request runs: the reviews (e2e
# table_conversion "should return a 406 for a backend which does not
# implement metadata"), serviceaccounts/token, namespaces/finalize and
# customresourcedefinitions/status
TBL1='application/json;as=Table;v=v1;g=meta.k8s.io'
reqw() { CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X "$1" -H 'Content-Type: application/json' -H "Accept: $2" --data-binary "$4" "$URL$3"); }
SSAR_BODY='{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"nonResourceAttributes":{"path":"/","verb":"get"}}}'
reqw POST "$TBL1" /apis/authorization.k8s.io/v1/selfsubjectaccessreviews "$SSAR_BODY"
check "a SelfSubjectAccessReview asked for as a Table only is 406 (no table convertor)" code_has 406 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf'
reqw POST "$TBL1, application/json" /apis/authorization.k8s.io/v1/selfsubjectaccessreviews "$SSAR_BODY"
check "... with application/json beside it, the review itself" code_has 201 '"kind":"SelfSubjectAccessReview"'
reqw POST "$TBL1" /apis/authentication.k8s.io/v1/selfsubjectreviews '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}'
check "... a SelfSubjectReview likewise" code_is 406
req POST /api/v1/namespaces/default/serviceaccounts '{"metadata":{"name":"tbl-sa"}}'
reqw POST "$TBL1" /api/v1/namespaces/default/serviceaccounts/tbl-sa/token '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}'
check "... a TokenRequest likewise" code_is 406
req GET /api/v1/namespaces/default
RV_TBL=$(jq_ "d['metadata']['resourceVersion']")
reqw PUT "$TBL1" /api/v1/namespaces/default/finalize '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"},"spec":{"finalizers":[]}}'
check "... a namespace's finalize likewise, and nothing is written" eval 'code_is 406 && req GET /api/v1/namespaces/default && [[ $(jq_ "d[\"metadata\"][\"resourceVersion\"]") == "$RV_TBL" ]]'
reqa "$TBL1" /apis/apiextensions.k8s.io/v1/customresourcedefinitions/nonexist.example.com/status
check "... a CRD's status too, refused before the CRD is looked up" code_is 406
reqa "$TBL1" /api/v1/namespaces/default/status
check "a namespace's status has its table (StatusREST converts)" code_has 200 '"kind":"Table"'
req GET '/api/v1/namespaces/default/configmaps?fieldSelector=%3Dx'
check "an empty field label on a kind without labels of its own: apimachinery's default words" code_has 400 '\"\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"'
req GET '/api/v1/namespaces/default/secrets?fieldSelector=%3Dx'
check "... on a Secret its converter's" code_has 400 'field label not supported: '
# a term with neither field nor value selects everything: kube's parser
# makes it Everything() and the and of the terms drops it
req GET '/api/v1/namespaces/default/secrets?fieldSelector=%3D'
check "a field selector '=' alone is no filter (200)" code_is 200
req GET '/api/v1/namespaces/default/configmaps?fieldSelector=%21%3D,metadata.name%3Dsingle1'
check "... '!=' beside a term is dropped, the term kept" code_has 200 '"name":"single1"'
check "... (only single1)" [ "$(n_items)" == 1 ]
L200=$(printf 'f%.0s' $(seq 200))
req GET "/api/v1/namespaces/default/secrets?fieldSelector=$L200%3Dx"
check "a long unknown field label is named whole, as kube prints it" code_has 400 "field label not supported: $L200\""
# a write that renames the object: kube's 400 with both names
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"rn1"}}'
req PUT /api/v1/namespaces/default/configmaps/rn1 '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"zz"}}'
check "a PUT naming another object is 400 with both names" code_has 400 'the name of the object (zz) does not match the name on the URL (rn1)'
req PATCH /api/v1/namespaces/default/configmaps/rn1 '{"metadata":{"name":"renamed"}}' application/merge-patch+json
check "a patch that renames is 400 with both names" code_has 400 'the name of the object (renamed) does not match the name on the URL (rn1)'
req PATCH "/api/v1/namespaces/default/configmaps/rn1" '{"metadata":null}' application/merge-patch+json
check "a patch that takes the name away is 400 (kube's checkName on the patched object: errEmptyName)" code_has 400 'the name of the object (rn1 based on URL) was undeterminable: name must be provided'
req PATCH "/api/v1/namespaces/default/configmaps/rn1" '[{"op":"remove","path":"/metadata"}]' application/json-patch+json
check "... a JSON patch removing /metadata too" code_has 400 'the name of the object (rn1 based on URL) was undeterminable: name must be provided'
req PUT /api/v1/namespaces/default/configmaps/rn1 '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"rn1","namespace":"kube-system"}}'
check "a PUT naming another namespace is 400 (EnsureObjectNamespaceMatchesRequestNamespace, before checkName)" code_has 400 'the namespace of the provided object does not match the namespace sent on the request'
req PATCH /api/v1/namespaces/default/configmaps/rn1 '{"metadata":{"namespace":"other"}}' application/merge-patch+json
check "... a patch moving it likewise" code_has 400 'the namespace of the provided object does not match the namespace sent on the request'
req GET "/api/v1/namespaces?fieldSelector=metadata.namespace%3Dx"
check "metadata.namespace is no field label of Namespaces (kube's 400)" code_has 400 'field label not supported: metadata.namespace'
# kinds without field labels of their own fall to apimachinery's default
# conversion, which words the refusal otherwise
for p in /api/v1/namespaces/default/configmaps /api/v1/serviceaccounts \
	/apis/coordination.k8s.io/v1/leases /apis/apiextensions.k8s.io/v1/customresourcedefinitions; do
	req GET "$p?fieldSelector=foo%3D1"
	check "an unknown field of $p is apimachinery's 400" code_has 400 '\"foo\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"'
done
req GET "/api/v1/secrets?fieldSelector=foo%3D1"
check "... Secrets keep their converter's words" code_has 400 'field label not supported: foo'
req GET "/api/v1/namespaces?fieldSelector=metadata.name%3Ddefault"
check "... metadata.name is" code_has 200 '"name":"default"'
req GET /openapi/v2
check "OpenAPI v2 in JSON: each resource's PATCH with its fieldValidation parameter" python3 -c "
import json; d=json.load(open('$WORK/body')); assert d['swagger']=='2.0', d.get('swagger')
p=d['paths']['/api/v1/namespaces/{namespace}/configmaps/{name}']['patch']
assert p['x-kubernetes-group-version-kind']=={'group':'','kind':'ConfigMap','version':'v1'}, p
assert 'fieldValidation' in [q['name'] for q in p['parameters'] if q['in']=='query'], p
assert 'application/strategic-merge-patch+json' in p['consumes'], p"
CODE=$(curl -sS -D "$WORK/hdr" -o "$WORK/body" -w '%{http_code}' -H 'Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf' "$URL/openapi/v2")
check "OpenAPI v2 in protobuf as kubectl 1.27 asks for it" [ "$CODE" == 200 ]
check "... named by the dotted media type, as kube answers (Go refuses the @)" grep -qi '^Content-Type: application/com.github.proto-openapi.spec.v2.v1.0+protobuf' "$WORK/hdr"
check "... a Document: swagger 2.0 first, the ConfigMap item path and fieldValidation" python3 -c "
b=open('$WORK/body','rb').read(); assert b[:5]==b'\x0a\x032.0', b[:8]
assert b'/api/v1/namespaces/{namespace}/configmaps/{name}' in b and b'fieldValidation' in b"
check "... its vendor extensions as YAML text, as gnostic writes them (kube's fieldselector_test.go compares it)" python3 -c "
b=open('$WORK/body','rb').read()
assert b'group: \"\"\nkind: ConfigMap\nversion: v1\n' in b, 'no YAML GVK'
assert b'\"kind\":\"ConfigMap\"' not in b, 'JSON GVK'"
CODE=$(curl -sS -o /dev/null -w '%{http_code}' -X POST "$URL/openapi/v2")
check "a POST to /openapi/v2 is 405" [ "$CODE" == 405 ]

# kube decodes a built-in object into its Go struct and encodes it back:
# omitempty leaves out empty lists and maps and zero scalars
# an unsupported body media type is refused before the query options
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X POST -H 'Content-Type: text/plain' --data-binary x "$URL/api/v1/namespaces/default/configmaps?dryRun=x")
check "a text/plain create with a bad dryRun is 415, not 422" code_has 415 'the body of the request was in an unknown format'
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X PUT -H 'Content-Type: text/plain' --data-binary x "$URL/api/v1/namespaces/default/configmaps/x1?fieldValidation=x")
check "... a text/plain update with a bad fieldValidation too" code_is 415
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X PATCH -H 'Content-Type: text/plain' --data-binary x "$URL/api/v1/namespaces/default/configmaps/x1")
check "... a text/plain patch of a built-in is go-restful's plain 415 (its route consumes the patch types only)" code_has 415 '"message":"415: Unsupported Media Type","reason":"UnsupportedMediaType","details":{}'
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X PATCH -H 'Content-Type: APPLICATION/MERGE-PATCH+JSON' --data-binary '{}' "$URL/api/v1/namespaces/default/configmaps/x1")
check "... and so is one whose type differs in case (matched exactly)" code_has 415 '"message":"415: Unsupported Media Type"'
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X PATCH -H 'Content-Type: application/merge-patch+json ; charset=utf-8' --data-binary '{}' "$URL/api/v1/namespaces/default/configmaps/x1")
check "... one the router trims but the handler does not lists the patch types in kube's order" code_has 415 'accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml'
# generateName is validated as a name prefix, before the generated name
req POST '/api/v1/namespaces/default/configmaps?dryRun=All' '{"metadata":{"generateName":"Bad_"}}'
check "a bad generateName has its own cause" code_has 422 '"field":"metadata.generateName"' 'Invalid value: \"Bad_\": a lowercase RFC 1123 subdomain'
req POST '/api/v1/namespaces/default/configmaps?dryRun=All' '{"metadata":{"generateName":"good-"}}'
check "... a trailing dash is fine" code_is 201
check "... and the dry run's object has no resourceVersion (kube leaves the empty one out)" \
	[ "$(jq_ "'resourceVersion' in d['metadata'], 'uid' in d['metadata'], 'creationTimestamp' in d['metadata']")" == "False True True" ]
# a namespace's /finalize takes qualified names, bare ones only standard
req POST /api/v1/namespaces '{"metadata":{"name":"finns"}}'
req PUT /api/v1/namespaces/finns/finalize '{"metadata":{"name":"finns"},"spec":{"finalizers":["bad fin","kubernetes","plain","example.com/x"]}}'
check "/finalize with bad finalizer names is 422 with kube's causes" code_has 422 'spec.finalizers[0]: Invalid value: \"bad fin\": name part must consist of' 'spec.finalizers[2]: Invalid value: \"plain\": name is neither a standard finalizer name nor is it fully qualified'
req PUT /api/v1/namespaces/finns/finalize '{"metadata":{"name":"finns"},"spec":{"finalizers":["kubernetes","example.com/x"]}}'
check "... good ones are taken" code_has 200 '"finalizers":["kubernetes","example.com/x"]'
# duplicate owner references are dropped with kube's warning
reqh POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"dupo","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"o","uid":"u1"},{"apiVersion":"v1","kind":"ConfigMap","name":"o","uid":"u1"},{"apiVersion":"v1","kind":"ConfigMap","name":"p","uid":"u2"}]}}'
check "duplicate ownerReferences: kube's Warning naming the UID" warns '.metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: u1'
check "... and the duplicate is dropped" python3 -c "import json; r=json.load(open('$WORK/body'))['metadata']['ownerReferences']; assert [x['uid'] for x in r]==['u1','u2'], r"
# ObjectMeta's causes in ValidateObjectMetaAccessor's order: labels,
# annotations, owner references, finalizers
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"metaord","finalizers":["bad fin"],"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"o"}],"annotations":{"bad key!":"x"},"labels":{"bad key!":"x"}}}'
check "metadata causes in kube's order: labels, annotations, ownerReferences, finalizers" python3 -c "
import json; d=json.load(open('$WORK/body')); f=[c['field'] for c in d['details']['causes']]
order=[x.split('.')[1] for x in f]
want=['labels','annotations','ownerReferences','finalizers']
assert sorted(set(order), key=order.index)==want, f"
# (an owner that exists, or the collector removes the dependent)
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"dupo-owner"}}'
DUPO_UID=$(jq_ "d['metadata']['uid']")
DUPO_REF="{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"dupo-owner\",\"uid\":\"$DUPO_UID\"}"
req POST /api/v1/namespaces/default/configmaps "{\"metadata\":{\"name\":\"dupo2\",\"ownerReferences\":[$DUPO_REF]}}"
reqh PATCH /api/v1/namespaces/default/configmaps/dupo2 "{\"metadata\":{\"ownerReferences\":[$DUPO_REF,$DUPO_REF]}}" application/merge-patch+json
check "... a patch's: kube's after-admission wording (patch.go dedups only then)" warns ".metadata.ownerReferences contains duplicate entries after mutating admission happens; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: $DUPO_UID"
# a built-in's collection path has go-restful routes for GET, POST and
# DELETE: PUT and PATCH there are 405 (a custom resource's handler says 400
# 'name must be provided'), and so are writes on the list across
# namespaces (GET alone, which controller-runtime's DeleteAllOf without
# InNamespace sends) and anything but GET on a legacy /watch/ path
req PUT /api/v1/namespaces/default/configmaps '{}'
check "a PUT on a built-in collection is go-restful's 405" code_has 405 '"reason":"MethodNotAllowed"' 'the server does not allow this method on the requested resource'
req DELETE "/api/v1/configmaps?dryRun=All"
check "... a DELETE of the list across namespaces too" code_has 405 '"reason":"MethodNotAllowed"'
req POST /api/v1/configmaps '{"metadata":{"name":"nons"}}'
check "... and a POST there" code_has 405 '"reason":"MethodNotAllowed"'
req POST /api/v1/watch/namespaces/default/configmaps '{}'
check "... and a POST on a /watch/ path" code_has 405 '"reason":"MethodNotAllowed"'
# kube's NewBadRequest carries no details
req PUT /api/v1/namespaces/default/configmaps/x1 '{"metadata":{"name":"x2"}}'
check "... and so is a name mismatch, before the object is looked up (kube's checkName)" bash -c "python3 -c \"import json; d=json.load(open('$WORK/body')); assert d['code']==400 and 'details' not in d, d\""
req PUT /api/v1/namespaces/default/configmaps/x1 '{"metadata":{}}'
check "a PUT whose body has no name is 400 too, as kube's checkName" code_has 400 'the name of the object (x1 based on URL) was undeterminable: name must be provided'
req PUT /api/v1/namespaces/default/configmaps/x1 '{"metadata":{"name":"x1","namespace":"other"}}'
check "... and one naming another namespace" code_has 400 'the namespace of the provided object does not match the namespace sent on the request'
# DeleteOptions preconditions (body only): the generic store's words on
# the Kind, the namespace REST's own on the qualified resource
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"pre1"}}'
PRE_UID=$(python3 -c "import json; print(json.load(open('$WORK/body'))['metadata']['uid'])")
req DELETE /api/v1/namespaces/default/configmaps/pre1 '{"preconditions":{"uid":"nope"}}'
check "DELETE with a wrong UID precondition is 409" code_has 409 "Operation cannot be fulfilled on ConfigMap \\\"pre1\\\": the UID in the precondition (nope) does not match the UID in record ($PRE_UID). The object might have been deleted and then recreated"
req DELETE /api/v1/namespaces/default/configmaps/pre1 '{"preconditions":{"resourceVersion":"1"}}'
check "... a wrong resourceVersion too" code_has 409 'Operation cannot be fulfilled on ConfigMap \"pre1\": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record'
check "... its details name the Kind, as kube's rest.BeforeDelete" code_has 409 '"details":{"name":"pre1","kind":"ConfigMap"}'
PRE_RV=$(curl -sS "$URL/api/v1/namespaces/default/configmaps/pre1" | python3 -c "import json,sys; print(json.load(sys.stdin)['metadata']['resourceVersion'])")
req DELETE /api/v1/namespaces/default/configmaps/pre1 "{\"preconditions\":{\"resourceVersion\":\"0$PRE_RV\"}}"
check "... the right revision with a leading zero is no match: kube compares the strings" code_has 409 "the ResourceVersion in the precondition (0$PRE_RV) does not match"
req DELETE /api/v1/namespaces/default/configmaps/pre1 "{\"preconditions\":{\"resourceVersion\":\" $PRE_RV\"}}"
check "... nor with a blank" code_is 409
req DELETE /api/v1/namespaces/default/configmaps/pre1 "{\"preconditions\":{\"uid\":\"$PRE_UID\"}}"
check "... the right UID deletes" code_is 200
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"pre2","labels":{"pre":"c"}}}'
req DELETE '/api/v1/namespaces/default/configmaps?labelSelector=pre%3Dc' '{"preconditions":{"uid":"nope"}}'
check "a deletecollection whose precondition fails on an item is that item's 409 (its name was once read after the list was freed)" code_has 409 '"details":{"name":"pre2","kind":"ConfigMap"}'
req GET /api/v1/namespaces/default/configmaps/pre2
check "... and the item stays" code_is 200
req POST /api/v1/namespaces '{"metadata":{"name":"prens"}}'
PRE_UID=$(python3 -c "import json; print(json.load(open('$WORK/body'))['metadata']['uid'])")
req DELETE /api/v1/namespaces/prens '{"preconditions":{"uid":"nope"}}'
check "a namespace's wrong UID precondition: the namespace REST's words" code_has 409 "Operation cannot be fulfilled on namespaces \\\"prens\\\": Precondition failed: UID in precondition: nope, UID in object meta: $PRE_UID"
req DELETE /api/v1/namespaces/prens '{"preconditions":{"resourceVersion":"1"}}'
check "... and for its resourceVersion" code_has 409 'Operation cannot be fulfilled on namespaces \"prens\": Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: '
# 202 only when orphanDependents=false was given and the object stays
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"od1","finalizers":["example.com/hold"]}}'
req DELETE /api/v1/namespaces/default/configmaps/od1 '{"kind":"DeleteOptions","apiVersion":"v1","orphanDependents":false}'
check "DELETE with orphanDependents=false of an object a finalizer keeps is 202" code_has 202 '"deletionTimestamp"'
req PATCH /api/v1/namespaces/default/configmaps/od1 '{"metadata":{"finalizers":null}}' application/merge-patch+json
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"od2"}}'
req DELETE '/api/v1/namespaces/default/configmaps/od2?orphanDependents=false'
check "... and 200 when it goes at once" code_is 200
req POST /api/v1/namespaces '{"metadata":{"name":"odns"}}'
req DELETE '/api/v1/namespaces/odns?orphanDependents=false'
check "a namespace deleted with orphanDependents=false gets the foregroundDeletion finalizer (the namespace REST's shouldHaveDeleteDependentsFinalizer)" code_has 202 '"finalizers":["foregroundDeletion"]'
# the annotations' total size, in kube 1.33's words
python3 -c 'import json; print(json.dumps({"metadata":{"name":"bigann","annotations":{"a":"x"*262144}}}))' >"$WORK/bigann.json"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary @"$WORK/bigann.json" "$URL/api/v1/namespaces/default/configmaps")
check "annotations over 256 KiB: 422 'Too long: may not be more than 262144 bytes'" code_has 422 'metadata.annotations: Too long: may not be more than 262144 bytes'
# PUT of a missing object creates it where kube's strategy allows
# (AllowCreateOnUpdate: leases, endpoints, events, services), 201, its
# resourceVersion ignored; elsewhere it is 404
req PUT /apis/coordination.k8s.io/v1/namespaces/default/leases/putmade '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"putmade","resourceVersion":"77"},"spec":{"holderIdentity":"me"}}'
check "PUT of a missing Lease creates it: 201" code_has 201 '"name":"putmade"' '"holderIdentity":"me"' '"operation":"Update"'
req GET /apis/coordination.k8s.io/v1/namespaces/default/leases/putmade
check "... and it is there" code_is 200
req PUT /api/v1/namespaces/default/endpoints/putmade '{"metadata":{"name":"putmade"}}'
check "... an Endpoints too" code_has 201 '"name":"putmade"'
req PUT /api/v1/namespaces/default/configmaps/putmade '{"metadata":{"name":"putmade"}}'
check "PUT of a missing ConfigMap is 404" code_has 404 'configmaps \"putmade\" not found'
req PUT /apis/coordination.k8s.io/v1/namespaces/default/leases/putmade2 '{"metadata":{"name":"other"}}'
check "a PUT-create whose name differs from the URL's is 400" code_has 400 'the name of the object (other) does not match the name on the URL (putmade2)'
req PUT '/apis/coordination.k8s.io/v1/namespaces/default/leases/putdry?dryRun=All' '{"metadata":{"name":"putdry"}}'
check "a dry-run PUT-create answers 201" code_is 201
req GET /apis/coordination.k8s.io/v1/namespaces/default/leases/putdry
check "... and stores nothing" code_is 404
# a create carrying a resourceVersion: kube's storage refuses a number
# with a plain error (500, no reason); one that is no number is dropped
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"rvset","resourceVersion":"5"}}'
check "a create with resourceVersion 5 is 500 with kube's message and no reason" bash -c "python3 -c \"import json; d=json.load(open('$WORK/body')); assert d['code']==500 and 'reason' not in d and d['message']=='resourceVersion should not be set on objects to be created', d\""
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"Bad_rv","resourceVersion":"5"}}'
check "... after validation: an invalid object is its 422 (kube's BeforeCreate runs before the storage)" code_has 422 'metadata.name: Invalid value: \"Bad_rv\"'
req POST '/api/v1/namespaces/default/configmaps?dryRun=All' '{"metadata":{"name":"rvset","resourceVersion":"5"}}'
check "... a dry run answers the object as sent, its resourceVersion too (kube's DryRunnableStorage copies it)" code_has 201 '"resourceVersion":"5"'
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"rvset","resourceVersion":"abc"}}'
check "... resourceVersion abc is ignored: 201" code_is 201
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"oe1","generateName":"","labels":{},"annotations":null,"finalizers":[]},"data":{},"binaryData":null}'
check "a create leaves out empty labels, annotations, finalizers, data and a blank generateName" python3 -c "
import json; d=json.load(open('$WORK/body')); m=d['metadata']
assert not {'labels','annotations','finalizers','generateName'} & set(m), m
assert 'data' not in d and 'binaryData' not in d, d"
req PATCH /api/v1/namespaces/default/configmaps/oe1 '{"metadata":{"labels":{"x":"y"}}}' application/merge-patch+json
req PATCH /api/v1/namespaces/default/configmaps/oe1 '{"metadata":{"labels":{"x":null}}}' application/merge-patch+json
check "removing the last label leaves no labels: {}" python3 -c "
import json; d=json.load(open('$WORK/body')); assert 'labels' not in d['metadata'], d"
req PATCH /api/v1/namespaces/default/configmaps/oe1 '{"metadata":{"annotations":{}}}' application/strategic-merge-patch+json
check "a patch adding annotations: {} is a no-op (as kubectl diff sends)" python3 -c "
import json; d=json.load(open('$WORK/body')); assert 'annotations' not in d['metadata'], d"
req POST /api/v1/namespaces/default/services '{"metadata":{"name":"oe2"},"spec":{"type":"","clusterIP":"","ports":[{"port":80,"name":"","nodePort":0}],"externalIPs":[],"selector":{}}}'
check "a Service create leaves out blank port names, nodePort 0, empty externalIPs and selector" python3 -c "
import json; d=json.load(open('$WORK/body')); s=d['spec']
assert s['ports']==[{'port':80,'protocol':'TCP','targetPort':80}], s
assert 'externalIPs' not in s and 'selector' not in s, s
assert s['type']=='ClusterIP' and s['clusterIP'], s
assert d['status']=={'loadBalancer':{}}, d"

# node ports: kube's rules and reservations
SVCS=/api/v1/namespaces/default/services
req POST "$SVCS" '{"metadata":{"name":"np-c"},"spec":{"ports":[{"port":80,"nodePort":30100}]}}'
check "a node port on a ClusterIP Service is kube's 422" code_has 422 'Service \"np-c\" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` is '"'"'ClusterIP'"'"''
req POST "$SVCS" '{"metadata":{"name":"np-d"},"spec":{"type":"NodePort","ports":[{"name":"a","port":80,"nodePort":30100},{"name":"b","port":81,"nodePort":30100}]}}'
check "... one node port for two port numbers is the allocator's 422, alone (kube allocates before it validates)" code_has 422 '"message":"Service \"np-d\" is invalid: spec.ports[1].nodePort: Invalid value: 30100: provided port is already allocated"'
req POST "$SVCS" '{"metadata":{"name":"np-e"},"spec":{"type":"NodePort","ports":[{"name":"a","port":80,"nodePort":30101},{"name":"b","port":80,"nodePort":30101}]}}'
check "... and for one port number and protocol twice, validation's duplicates" code_has 422 'spec.ports[1].nodePort: Duplicate value: 30101' 'spec.ports[1]: Duplicate value: core.ServicePort'
req POST "$SVCS" '{"metadata":{"name":"np-hc1"},"spec":{"type":"NodePort","ports":[{"port":80,"nodePort":30102}]}}'
req POST "$SVCS" '{"metadata":{"name":"np-hc2"},"spec":{"type":"LoadBalancer","externalTrafficPolicy":"Local","healthCheckNodePort":30102,"ports":[{"port":80}]}}'
check "a health check port already taken is kube's 500 (allocHealthCheckNodePort's plain error)" code_has 500 '"message":"Internal error occurred: failed to allocate requested HealthCheck NodePort 30102: provided port is already allocated","reason":"InternalError"'

req POST "$SVCS" '{"metadata":{"name":"np-d"},"spec":{"type":"NodePort","ports":[{"name":"a","port":80,"nodePort":30100},{"name":"b","port":80,"protocol":"UDP","nodePort":30100}]}}'
check "... but TCP and UDP may share one" code_has 201 '"nodePort":30100,' '"protocol":"UDP"'
req POST "$SVCS" '{"metadata":{"name":"np-e"},"spec":{"type":"NodePort","allocateLoadBalancerNodePorts":true,"ports":[{"port":80}]}}'
check "allocateLoadBalancerNodePorts on a NodePort Service is 422" code_has 422 'spec.allocateLoadBalancerNodePorts: Forbidden: may only be used when `type` is '"'"'LoadBalancer'"'"''
req POST "$SVCS" '{"metadata":{"name":"np-f"},"spec":{"type":"LoadBalancer","allocateLoadBalancerNodePorts":false,"ports":[{"port":80}]}}'
check "a LoadBalancer with allocateLoadBalancerNodePorts false gets none" python3 -c "
import json; s=json.load(open('$WORK/body'))['spec']; assert 'nodePort' not in s['ports'][0] and s['externalTrafficPolicy']=='Cluster', s"
req POST "$SVCS?dryRun=All" '{"metadata":{"name":"np-g"},"spec":{"type":"NodePort","ports":[{"port":80}]}}'
check "a dry run shows a cluster IP and node ports, as kube's" python3 -c "
import json; s=json.load(open('$WORK/body'))['spec']; assert s['clusterIP'].startswith('10.') and 30000 <= s['ports'][0]['nodePort'] <= 32767, s"
req POST "$SVCS?dryRun=All" '{"metadata":{"name":"np-g"},"spec":{"type":"NodePort","ports":[{"port":80,"nodePort":30100}]}}'
check "... refuses one already allocated" code_has 422 'spec.ports[0].nodePort: Invalid value: 30100: provided port is already allocated'
req POST "$SVCS?dryRun=All" '{"metadata":{"name":"np-g"},"spec":{"type":"NodePort","ports":[{"port":80,"nodePort":30101}]}}'
req POST "$SVCS" '{"metadata":{"name":"np-g"},"spec":{"type":"NodePort","ports":[{"port":80,"nodePort":30101}]}}'
check "... and reserves nothing" code_has 201 '"nodePort":30101'
req DELETE "$SVCS/np-g"
req GET "$SVCS/np-d"
req PUT "$SVCS/np-d" "$(python3 -c "
import json; d=json.load(open('$WORK/body')); [p.pop('nodePort') for p in d['spec']['ports']]; print(json.dumps(d))")"
check "a PUT without node ports keeps them (by port name)" python3 -c "
import json; p=json.load(open('$WORK/body'))['spec']['ports']; assert [(x['name'], x['nodePort']) for x in p]==[('a',30100),('b',30100)], p"
req DELETE "$SVCS/np-d"
req POST "$SVCS" '{"metadata":{"name":"np-h"},"spec":{"type":"NodePort","ports":[{"port":80,"nodePort":30100}]}}'
check "a deleted Service's node port is free again" code_has 201 '"nodePort":30100'
# kube's ValidateService
svc_bad() { # DESCRIPTION SPEC-JSON EXPECTED...
	local d=$1 spec=$2
	shift 2
	req POST "$SVCS" "{\"metadata\":{\"name\":\"bad\"},\"spec\":$spec}"
	check "$d" code_has 422 "$@"
}
svc_bad "a Service of an unknown type is 422" '{"type":"Foo","ports":[{"port":80}]}' 'spec.type: Unsupported value: \"Foo\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"'
svc_bad "... a port out of range" '{"ports":[{"port":70000,"targetPort":80}]}' 'spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive'
svc_bad "... an unknown protocol" '{"ports":[{"port":80,"protocol":"XYZ"}]}' 'spec.ports[0].protocol: Unsupported value: \"XYZ\": supported values: \"SCTP\", \"TCP\", \"UDP\"'
svc_bad "... several ports without names" '{"ports":[{"port":80},{"port":81}]}' 'spec.ports[0].name: Required value, spec.ports[1].name: Required value'
svc_bad "... a port name twice" '{"ports":[{"name":"x","port":80},{"name":"x","port":81}]}' 'spec.ports[1].name: Duplicate value: \"x\"'
svc_bad "... a port name that is no DNS label" '{"ports":[{"name":"UPPER","port":80}]}' 'spec.ports[0].name: Invalid value: \"UPPER\": a lowercase RFC 1123 label must consist of'
svc_bad "... one port and protocol twice" '{"ports":[{"name":"a","port":80},{"name":"b","port":80}]}' 'spec.ports[1]: Duplicate value: core.ServicePort{Name:\"\", Protocol:\"TCP\"'
svc_bad "... a targetPort name that is no port name" '{"ports":[{"port":80,"targetPort":"Http_x"}]}' 'spec.ports[0].targetPort: Invalid value: \"Http_x\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)'
svc_bad "... an unknown session affinity" '{"sessionAffinity":"Bad","ports":[{"port":80}]}' 'spec.sessionAffinity: Unsupported value: \"Bad\": supported values: \"ClientIP\", \"None\"'
svc_bad "... no ports" '{"ports":[]}' 'spec.ports: Required value'
svc_bad "... an ExternalName without its name" '{"type":"ExternalName"}' 'spec.externalName: Required value'
svc_bad "... a selector that is no label" '{"selector":{"a b":"c"},"ports":[{"port":80}]}' 'spec.selector: Invalid value: \"a b\": name part must consist of'
svc_bad "... external IPs that are special or no IPs" '{"externalIPs":["127.0.0.1","x"],"ports":[{"port":80}]}' 'spec.externalIPs[0]: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)' 'spec.externalIPs[1]: Invalid value: \"x\": must be a valid IP address'
req POST "$SVCS" '{"metadata":{"name":"kubeletport"},"spec":{"type":"LoadBalancer","ports":[{"port":10250}]}}'
check "a LoadBalancer may expose port 10250 (kube 1.33 dropped that rule)" code_has 201 '"port":10250'
svc_bad "... an appProtocol that is no qualified name" '{"ports":[{"port":80,"appProtocol":"bad proto!"}]}' 'spec.ports[0].appProtocol: Invalid value: \"bad proto!\": name part must consist of'
svc_bad "... a ClientIP affinity timeout out of range" '{"sessionAffinity":"ClientIP","sessionAffinityConfig":{"clientIP":{"timeoutSeconds":86401}},"ports":[{"port":80}]}' 'spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 86401: must be greater than 0 and less than 86400'
svc_bad "... source ranges and a class off a LoadBalancer" '{"loadBalancerSourceRanges":["10.0.0.0/8"],"loadBalancerClass":"example.com/lb","ports":[{"port":80}]}' 'spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is' 'spec.loadBalancerClass: Forbidden: may only be used when `type` is' 
svc_bad "... a source range that is no CIDR" '{"type":"LoadBalancer","loadBalancerSourceRanges":["10.0.0.0/33"],"ports":[{"port":80}]}' 'spec.LoadBalancerSourceRanges[0]: Invalid value: \"10.0.0.0/33\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'
svc_bad "... an external traffic policy on an internal Service" '{"externalTrafficPolicy":"Local","ports":[{"port":80}]}' 'spec.externalTrafficPolicy: Invalid value: \"Local\": may only be set for externally-accessible services'
svc_bad "... unknown traffic policies and distribution" '{"type":"NodePort","externalTrafficPolicy":"X","internalTrafficPolicy":"Y","trafficDistribution":"Z","ports":[{"port":80}]}' 'spec.externalTrafficPolicy: Unsupported value: \"X\": supported values: \"Cluster\", \"Local\"' 'spec.internalTrafficPolicy: Unsupported value: \"Y\"' 'spec.trafficDistribution: Unsupported value: \"Z\": supported values: \"PreferClose\"'
svc_bad "... an empty internalTrafficPolicy, a pointer, is a value and not one of them" '{"internalTrafficPolicy":"","ports":[{"port":80}]}' 'spec.internalTrafficPolicy: Unsupported value: \"\": supported values: \"Cluster\", \"Local\"'
svc_bad "... nor an empty family, family policy or traffic distribution" '{"ipFamilies":[""],"ports":[{"port":80}]}' 'spec.ipFamilies[0]: Unsupported value: \"\": supported values: \"IPv4\", \"IPv6\"'
svc_bad "... (the family policy)" '{"ipFamilyPolicy":"","ports":[{"port":80}]}' 'spec.ipFamilyPolicy: Unsupported value: \"\": supported values: \"PreferDualStack\", \"RequireDualStack\", \"SingleStack\"'
svc_bad "... (the traffic distribution)" '{"trafficDistribution":"","ports":[{"port":80}]}' 'spec.trafficDistribution: Unsupported value: \"\": supported values: \"PreferClose\"'
svc_bad "... a health check port without LoadBalancer and Local" '{"type":"NodePort","healthCheckNodePort":30123,"ports":[{"port":80}]}' "spec.healthCheckNodePort: Invalid value: 30123: may only be set when"
svc_bad "... an IP family this cluster lacks (its errors come alone)" '{"ipFamilies":["IPv6"],"type":"Foo","ports":[{"port":80}]}' 'spec.ipFamilies[0]: Invalid value: \"IPv6\": not configured on this cluster"'
svc_bad "... an unknown family and policy" '{"ipFamilies":["IPv5"],"ipFamilyPolicy":"Bogus","ports":[{"port":80}]}' 'spec.ipFamilies[0]: Unsupported value: \"IPv5\": supported values: \"IPv4\", \"IPv6\"' 'spec.ipFamilyPolicy: Unsupported value: \"Bogus\"'
svc_bad "... dual stack required of a single-stack cluster" '{"ipFamilyPolicy":"RequireDualStack","ports":[{"port":80}]}' 'spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": this cluster is not configured for dual-stack services'
svc_bad "... clusterIPs without clusterIP" '{"clusterIPs":["10.96.0.40"],"ports":[{"port":80}]}' 'spec.clusterIPs: Invalid value: []string{\"10.96.0.40\"}: must be empty when `clusterIP` is not specified'
svc_bad "... clusterIPs that disagree with clusterIP" '{"clusterIP":"10.96.0.40","clusterIPs":["10.96.0.41"],"ports":[{"port":80}]}' 'spec.clusterIPs: Invalid value: []string{\"10.96.0.41\"}: first value must match `clusterIP`'
req POST "$SVCS" '{"metadata":{"name":"aff"},"spec":{"sessionAffinityConfig":{"clientIP":{"timeoutSeconds":5}},"externalIPs":["192.0.2.7"],"ports":[{"port":80}]}}'
check "external IPs make a Service's traffic policy Cluster" code_has 201 '"externalTrafficPolicy":"Cluster"'
check "... and affinity None drops its config" python3 -c "
import json; s=json.load(open('$WORK/body'))['spec']; assert 'sessionAffinityConfig' not in s, s"
req POST "$SVCS?fieldManager=me" '{"metadata":{"name":"mf"},"spec":{"clusterIP":"None","ports":[{"port":80}]}}'
check "the allocator's fields (clusterIPs, families) are no manager's, as in kube" python3 -c "
import json; d=json.load(open('$WORK/body')); s=d['spec']; f=d['metadata']['managedFields'][0]['fieldsV1']['f:spec']
assert s['clusterIPs']==['None'] and s['ipFamilyPolicy']=='RequireDualStack' and s['ipFamilies']==['IPv4','IPv6'], s
assert 'f:clusterIP' in f and not {'f:clusterIPs','f:ipFamilies','f:ipFamilyPolicy'} & set(f), f"
req POST "$SVCS" '{"metadata":{"name":"lbl"},"spec":{"type":"LoadBalancer","externalTrafficPolicy":"Local","ports":[{"port":80}]}}'
check "a Local LoadBalancer gets its health check port allocated" code_has 201 '"healthCheckNodePort":3'
req PATCH "$SVCS/lbl" '{"spec":{"healthCheckNodePort":31999,"loadBalancerClass":"example.com/lb"}}' application/merge-patch+json
check "... which, like its load balancer class, may not change" code_has 422 'spec.loadBalancerClass: Invalid value: \"example.com/lb\": may not change once set' 'spec.healthCheckNodePort: Forbidden: field is immutable'
req PATCH "$SVCS/lbl" '{"spec":{"ipFamilies":["IPv4","IPv6"]}}' application/merge-patch+json
check "... nor become dual stack as SingleStack" code_has 422 'spec.ipFamilyPolicy: Invalid value: \"SingleStack\": must be' "'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"
req PATCH "$SVCS/lbl/status" '{"status":{"loadBalancer":{"ingress":[{"ip":"192.0.2.1"},{"hostname":"192.0.2.2"},{"ipMode":"Proxy"},{"ip":"x"}]}}}' application/merge-patch+json
check "a Service's status: ingress hostnames are names, ipMode only beside an ip, ips valid" code_has 422 'status.loadBalancer.ingress[1].hostname: Invalid value: \"192.0.2.2\": must be a DNS name, not an IP address' 'status.loadBalancer.ingress[2].ipMode: Forbidden: may not be specified when `ip` is not set' 'status.loadBalancer.ingress[3].ip: Invalid value: \"x\": must be a valid IP address'
req PATCH "$SVCS/lbl/status" '{"status":{"loadBalancer":{"ingress":[{"ip":"192.0.2.1"},{"hostname":"lb.example.com"}]}}}' application/merge-patch+json
check "... and an ingress ip gets ipMode VIP" code_has 200 '"ingress":[{"ip":"192.0.2.1","ipMode":"VIP"},{"hostname":"lb.example.com"}]'
req PATCH "$SVCS/aff/status" '{"status":{"loadBalancer":{"ingress":[{"ip":"192.0.2.1"}]}}}' application/merge-patch+json
check "... ingress only on a LoadBalancer" code_has 422 "status.loadBalancer.ingress: Forbidden: may only be used when"
# A built-in's /status keeps the body's metadata and resets its spec (kube's
# service, namespace and CRD status strategies): the cloud provider's service
# controller adds and removes its finalizer through services/NAME/status.
req PATCH "$SVCS/lbl/status" '{"metadata":{"finalizers":["service.kubernetes.io/load-balancer-cleanup"],"labels":{"st":"1"}},"spec":{"type":"ClusterIP"}}' application/strategic-merge-patch+json
check "a Service's /status takes a finalizer and labels, not the spec" code_has 200 '"finalizers":["service.kubernetes.io/load-balancer-cleanup"]' '"st":"1"' '"type":"LoadBalancer"'
req DELETE "$SVCS/lbl"
req PATCH "$SVCS/lbl/status" '{"metadata":{"$deleteFromPrimitiveList/finalizers":["service.kubernetes.io/load-balancer-cleanup"]}}' application/strategic-merge-patch+json
check "... and removing the last finalizer there ends the deleted Service" code_is 200
req GET "$SVCS/lbl"
check "... which is gone" code_is 404
# From the built-in kinds probe (session 14): kube's validators append the
# type's causes to the metadata's; per-kind rules and strategy warnings.
NSD=/api/v1/namespaces/default
SA=$NSD/serviceaccounts
req POST "$SVCS" '{"metadata":{"name":"put-same"},"spec":{"ports":[{"port":80}],"selector":{"app":"x"}}}'
SRV=$(python3 -c "import json; print(json.load(open('$WORK/body'))['metadata']['resourceVersion'])")
req PUT "$SVCS/put-same" '{"metadata":{"name":"put-same"},"spec":{"ports":[{"port":80}],"selector":{"app":"x"}}}'
check "a PUT of an unchanged Service leaving out what was allocated (cluster IP, IP families) writes nothing" code_has 200 "\"resourceVersion\":\"$SRV\""
req POST "$SA" '{"metadata":{"name":"rv-del"}}'
RV_SAC=$(jq_ "d['metadata']['resourceVersion']")
req DELETE "$SA/rv-del"
# the DELETED event itself, from a watch replaying what followed the
# create (a list's revision may already be past it: other writes run)
check "a delete that answers the deleted object gives it the delete's revision, as its DELETED event has it" python3 -c "
import json, urllib.request
d = json.load(open('$WORK/body'))
w = urllib.request.urlopen('$URL$SA?watch=1&resourceVersion=$RV_SAC&fieldSelector=metadata.name%3Drv-del&timeoutSeconds=1').read().decode()
ev = [json.loads(x) for x in w.splitlines() if x.strip()]
dl = [e for e in ev if e['type'] == 'DELETED']
assert dl and dl[0]['object']['metadata']['resourceVersion'] == d['metadata']['resourceVersion'], (d['metadata'], ev)"
req GET "$NSD/configmaps/none?export=true"
check "a GET with export=true is kube's 400, before the object is looked up" code_has 400 '"message":"the export parameter, deprecated since v1.14, is no longer supported"'
req GET "/api/v1/namespaces/default?export"
check "... so is export with no value" code_is 400
req GET "/api/v1/namespaces/default?export=FALSE"
check "... while false (any case) or 0 read the object" code_is 200
req GET "$NSD/configmaps?export=true"
check "... and a list ignores it" code_is 200
req POST "$SVCS" '{"metadata":{"name":"Bad_Name"},"spec":{"ports":[{"port":0}]}}'
check "a bad name and a bad port are one 422, metadata first" code_has 422 'Service \"Bad_Name\" is invalid: [metadata.name: Invalid value: \"Bad_Name\": a DNS-1035 label' 'spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive'
req POST "$NSD/configmaps" '{"metadata":{"name":"ck","labels":{"a b":"c"}},"data":{"a b":"c","..x":"d",".":"e"}}'
check "... a ConfigMap's too, with kube's config key complaints" code_has 422 'metadata.labels: Invalid value: \"a b\"' 'data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '"'"'-'"'"', '"'"'_'"'"' or '"'"'.'"'"' (e.g. '"'"'key.name'"'"',  or '"'"'KEY_NAME'"'"',  or '"'"'key-name'"'"', regex used for validation is '"'"'[-._a-zA-Z0-9]+'"'"')' 'data[..x]: Invalid value: \"..x\": must not start with '"'"'..'"'"'' 'data[.]: Invalid value: \".\": must not be '"'"'.'"'"''
req POST "$NSD/events" '{"metadata":{"name":"Bad_Name.x"},"involvedObject":{"kind":"Pod","name":"p","namespace":"default"}}'
check "a core/v1 Event's name need only be a path segment (kube validates no name rule for v1 Events)" code_is 201
req DELETE "$NSD/events/Bad_Name.x"
req POST "$NSD/events" '{"metadata":{"name":"a%b"},"involvedObject":{"kind":"Pod","name":"p","namespace":"default"}}'
check "... which may not hold '%'" code_has 422 'metadata.name: Invalid value: \"a%b\": may not contain '"'"'%'"'"''
req POST "$SVCS" '{"metadata":{"name":"topo","annotations":{"service.kubernetes.io/topology-aware-hints":"auto","service.kubernetes.io/topology-mode":"x"}},"spec":{"ports":[{"port":80}]}}'
check "a Service's topology mode must match the deprecated hints annotation" code_has 422 'metadata.annotations[service.kubernetes.io/topology-mode]: Invalid value: \"x\": must match annotations[service.kubernetes.io/topology-aware-hints] when both are specified'
reqh POST "$SVCS" '{"metadata":{"name":"warned","annotations":{"service.kubernetes.io/topology-aware-hints":"auto"}},"spec":{"externalName":"x.example.com","ports":[{"port":80}]}}'
check "a Service gets kube's strategy warnings: the deprecated annotation, an externalName that is ignored" bash -c "[[ $CODE == 201 ]]" && check "... (both)" bash -c 'grep -qF "annotation service.kubernetes.io/topology-aware-hints is deprecated, please use service.kubernetes.io/topology-mode instead" "'"$WORK"'/hdr" && grep -qF "spec.externalName is ignored when spec.type is not \\\"ExternalName\\\"" "'"$WORK"'/hdr"'
# kube 1.33 reads IPs and CIDRs of legacy fields sloppily (leading zeros,
# IPv4-mapped, non-canonical IPv6 taken) and warns of those forms
reqh POST "$SVCS" '{"metadata":{"name":"sloppy"},"spec":{"type":"LoadBalancer","clusterIP":"010.96.0.77","clusterIPs":["010.96.0.77"],"ports":[{"port":80}],"externalIPs":["010.1.2.3","::ffff:1.2.3.4","2001:db8::0001"],"loadBalancerSourceRanges":["10.1.2.3/8"]}}'
check "a Service with IPs in non-standard forms is created" code_is 201
warns_all() { local w; for w; do warns "$w" || return 1; done; }
check "... with apimachinery's warnings for each" warns_all \
	'spec.clusterIPs[0]: non-standard IP address \"010.96.0.77\" will be considered invalid in a future Kubernetes release: use \"10.96.0.77\"' \
	'spec.externalIPs[1]: non-standard IP address \"::ffff:1.2.3.4\" will be considered invalid in a future Kubernetes release: use \"1.2.3.4\"' \
	'spec.externalIPs[2]: IPv6 address \"2001:db8::0001\" should be in RFC 5952 canonical format (\"2001:db8::1\")' \
	'spec.loadBalancerSourceRanges[0]: CIDR value \"10.1.2.3/8\" is ambiguous in this context (should be \"10.0.0.0/8\" or \"10.1.2.3/32\"?)'
req POST "$SVCS" '{"metadata":{"name":"sloppy2"},"spec":{"clusterIP":"10.96.0.77","ports":[{"port":80}]}}'
check "... and its clusterIP, written with a leading zero, is held as the address it is" code_has 422 'failed to allocate IP 10.96.0.77: provided IP is already allocated'
req DELETE "$SVCS/sloppy"
reqh POST "$SVCS" '{"metadata":{"name":"sloppy3"},"spec":{"clusterIP":"010.96.0.78","ports":[{"port":80}]}}'
check "... a clusterIP alone (no clusterIPs) is warned of as the clusterIPs it becomes" warns 'spec.clusterIPs[0]: non-standard IP address \"010.96.0.78\" will be considered invalid in a future Kubernetes release: use \"10.96.0.78\"'
req DELETE "$SVCS/sloppy3"
reqh POST "$NSD/endpoints" '{"metadata":{"name":"sloppy"},"subsets":[{"addresses":[{"ip":"010.0.0.1"}],"notReadyAddresses":[{"ip":"2001:DB8::1"}]}]}'
check "an Endpoints' addresses too" code_is 201
check "... are warned of" warns_all \
	'subsets[0].addresses[0].ip: non-standard IP address \"010.0.0.1\" will be considered invalid in a future Kubernetes release: use \"10.0.0.1\"' \
	'subsets[0].notReadyAddresses[0].ip: IPv6 address \"2001:DB8::1\" should be in RFC 5952 canonical format (\"2001:db8::1\")'
req DELETE "$NSD/endpoints/sloppy"
reqh POST "$SA" '{"metadata":{"name":"mountable","annotations":{"kubernetes.io/enforce-mountable-secrets":"true"}},"secrets":[{"name":"s1","namespace":"x","uid":"u","kind":"Secret"}]}'
check "a ServiceAccount with enforce-mountable-secrets is warned of it, and its secret references keep only their names" bash -c "[[ $CODE == 201 ]] && grep -qF 'metadata.annotations[kubernetes.io/enforce-mountable-secrets]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets' '$WORK/hdr' && grep -qF '\"secrets\":[{\"name\":\"s1\"}]' '$WORK/body'"
reqh GET "$NSD/endpoints" ''
check "every v1 Endpoints request carries kube 1.33's deprecation warning" bash -c "grep -qF 'v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice' '$WORK/hdr'"
req POST "$NSD/endpoints" '{"metadata":{"name":"e2"},"subsets":[{"addresses":[{"ip":"bad","hostname":"A_b","nodeName":"N!"}],"ports":[{"port":1,"name":"a","appProtocol":"a/b/c"}]}]}'
check "Endpoints: kube's address causes in its order (the IP, hostname, node name, the IP again) and appProtocol" code_has 422 'subsets[0].addresses[0].ip: Invalid value: \"bad\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff), subsets[0].addresses[0].hostname: Invalid value: \"A_b\"' 'subsets[0].addresses[0].nodeName: Invalid value: \"N!\": a lowercase RFC 1123 subdomain' 'subsets[0].addresses[0].ip: Invalid value: \"bad\": must be a valid IP address, subsets[0].ports[0].appProtocol: Invalid value: \"a/b/c\": a qualified name must consist of'
req POST "$NSD/secrets" '{"metadata":{"name":"dnull"},"type":"kubernetes.io/dockerconfigjson","data":{".dockerconfigjson":"bnVsbA=="}}'
check "a docker config Secret holding null is fine, as Go decodes it into a map" code_is 201
req POST "$NSD/secrets" '{"metadata":{"name":"darr"},"type":"kubernetes.io/dockerconfigjson","data":{".dockerconfigjson":"W10="}}'
check "... a list is Go's unmarshal error" code_has 422 'json: cannot unmarshal array into Go value of type map[string]interface {}'
# kube's ValidateSecret decodes a docker config with Go's json.Unmarshal:
# its syntax errors word for word, and a null value is no bytes
req POST "$NSD/secrets" '{"metadata":{"name":"dsyn"},"type":"kubernetes.io/dockerconfigjson","data":{".dockerconfigjson":"YWJj"}}'
check "a docker config that is no JSON is Go's syntax error" code_has 422 'data[.dockerconfigjson]: Invalid value: \"<secret contents redacted>\": invalid character '"'a'"' looking for beginning of value'
req POST "$NSD/secrets" '{"metadata":{"name":"dsyn"},"type":"kubernetes.io/dockerconfigjson","data":{".dockerconfigjson":"e314"}}'
check "... so is text after it" code_has 422 "invalid character 'x' after top-level value"
req POST "$NSD/secrets" '{"metadata":{"name":"dsyn"},"type":"kubernetes.io/dockercfg","data":{".dockercfg":null}}'
check "... and a null one is empty input (the key is there)" code_has 422 'data[.dockercfg]: Invalid value: \"<secret contents redacted>\": unexpected end of JSON input'
req POST "$NSD/secrets" '{"metadata":{"name":"dord"},"type":"kubernetes.io/tls","data":{"bad key":"YWJj"}}'
check "a Secret's key errors come before its type's, as kube's ValidateSecret" code_has 422 'is invalid: [data[bad key]: Invalid value: \"bad key\": a valid config key' 'data[tls.crt]: Required value, data[tls.key]: Required value]'
# apimachinery's IsValidLabelValue, IsDNS1123Label, IsDNS1123Subdomain and
# IsValidPortName: every complaint its own cause, the whole value quoted
LV70=$(printf 'b%.0s' $(seq 70))
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"lv","labels":{"a":"'"$LV70"'","c":"-x"}}}'
check "a label value over 63 characters says so" code_has 422 "metadata.labels: Invalid value: \\\"$LV70\\\": must be no more than 63 characters" 'metadata.labels: Invalid value: \"-x\": a valid label must be an empty string or consist of'
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"lv","labels":{"a":"'"$LV70"'."}}}'
check "... and when it breaks the pattern too, both" code_has 422 'must be no more than 63 characters, metadata.labels: Invalid value: ' 'a valid label must be an empty string'
req POST /api/v1/namespaces '{"metadata":{"name":"a.b"}}'
check "a namespace name with dots: kube's must not contain dots" code_has 422 'Namespace \"a.b\" is invalid: metadata.name: Invalid value: \"a.b\": must not contain dots'
req POST "$SVCS" '{"metadata":{"name":"pn"},"spec":{"ports":[{"port":80,"name":"a.b","targetPort":"-A-"}]}}'
check "a Service port name with dots, a target port name with every fault" code_has 422 'spec.ports[0].name: Invalid value: \"a.b\": must not contain dots' 'spec.ports[0].targetPort: Invalid value: \"-A-\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-), spec.ports[0].targetPort: Invalid value: \"-A-\": must contain at least one letter (a-z), spec.ports[0].targetPort: Invalid value: \"-A-\": must not begin or end with a hyphen'
EN300=$(printf 'a%.0s' $(seq 300))
req POST "$SVCS" '{"metadata":{"name":"en"},"spec":{"type":"ExternalName","externalName":"'"$EN300"'"}}'
check "an externalName over 253 characters says so, whole" code_has 422 "spec.externalName: Invalid value: \\\"$EN300\\\": must be no more than 253 characters"
req POST "$SVCS" '{"metadata":{"name":"c6"},"spec":{"ports":[{"port":80,"nodePort":30001},{"port":80,"name":"b"}]}}'
check "a Service's node port causes come before its duplicate ports, as kube's ValidateService" code_has 422 "spec.ports[0].nodePort: Forbidden: may not be used when \`type\` is 'ClusterIP', spec.ports[1]: Duplicate value: core.ServicePort"
req POST "$SVCS" '{"metadata":{"name":"np"},"spec":{"ports":[{"name":"x"}]}}'
check "a Service port without a port number is kube's port 0, its target port defaulted from it" code_has 422 'Service \"np\" is invalid: [spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive, spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive]'
req POST /api/v1/namespaces '{"metadata":{"name":"nsfin3"},"spec":{"finalizers":["bad_name!"]}}'
check "a namespace finalizer that is no qualified name and no standard one: both causes" code_has 422 'spec.finalizers: Invalid value: \"bad_name!\": name part must consist of' 'spec.finalizers: Invalid value: \"bad_name!\": name is neither a standard finalizer name nor is it fully qualified'
req POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"kq"},"data":{"a\"b":"x"}}'
check "a config key is quoted as Go's %q" code_has 422 'data[a\"b]: Invalid value: \"a\\\"b\": a valid config key'
req POST /api/v1/namespaces '{"metadata":{"name":"phases"}}'
req PATCH /api/v1/namespaces/phases/status '{"status":{"phase":"Terminating"}}' application/merge-patch+json
check "a Namespace's status may say Terminating only once it is deleted" code_has 422 'status.Phase: Invalid value: \"Terminating\": may only be '"'"'Active'"'"' if `deletionTimestamp` is empty'
req PATCH /api/v1/namespaces/phases/status '{"status":{"phase":""}}' application/merge-patch+json
check "... an empty phase defaults to Active" code_has 200 '"status":{"phase":"Active"}'
req PATCH /api/v1/namespaces/phases/status '{"metadata":{"labels":{"st":"2"}},"spec":{"finalizers":[]}}' application/merge-patch+json
check "a Namespace's /status keeps new labels, and its spec" code_has 200 '"st":"2"' '"spec":{"finalizers":["kubernetes"]}'
req PUT /api/v1/namespaces/phases/finalize '{"metadata":{"name":"phases","labels":{"fin":"3"}},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Terminating"}}'
check "... /finalize keeps them too, and the status" code_has 200 '"fin":"3"' '"status":{"phase":"Active"}'
curl -sS -o "$WORK/body" -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' "$URL$NSD/events"
check "the Event Table's Name column has kube's format name" bash -c "grep -qF '{\"name\":\"Name\",\"type\":\"string\",\"format\":\"name\"' '$WORK/body'"
svc_bad "... a headless NodePort Service" '{"type":"NodePort","clusterIP":"None","ports":[{"port":80}]}' "spec.clusterIPs[0]: Invalid value: \\\"None\\\": may not be set to 'None' for NodePort services"
svc_bad "... an ExternalName Service with a cluster IP" '{"type":"ExternalName","externalName":"example.com","clusterIP":"10.96.0.9"}' 'spec.clusterIPs: Forbidden: may not be set for ExternalName services'
req POST "$SVCS" '{"metadata":{"name":"headless"},"spec":{"clusterIP":"None"}}'
check "a headless Service needs no ports" code_has 201 '"clusterIP":"None"'
req POST /api/v1/namespaces '{"metadata":{"name":"nsfin"},"spec":{"finalizers":["example.com/hold"]}}'
check "a namespace keeps its spec finalizers and gets kube's own" code_has 201 '"spec":{"finalizers":["example.com/hold","kubernetes"]}'
req POST /api/v1/namespaces '{"metadata":{"name":"nsfin2"},"spec":{"finalizers":["plain"]}}'
check "... one without a prefix must be a standard one" code_has 422 'spec.finalizers: Invalid value: \"plain\": name is neither a standard finalizer name nor is it fully qualified'
# kube's ObjectMeta rules for owner references and finalizers
CMS=/api/v1/namespaces/default/configmaps
req POST "$CMS" '{"metadata":{"name":"own1","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"a","uid":"u1","controller":true},{"apiVersion":"v1","kind":"ConfigMap","name":"b","uid":"u2","controller":true}]}}'
check "two controller owner references are kube's 422" code_has 422 'metadata.ownerReferences: Invalid value: \"\": Only one reference can have Controller set to true. Found \"true\" in references for ConfigMap/a and ConfigMap/b'
req POST "$CMS" '{"metadata":{"name":"own2","ownerReferences":[{"apiVersion":"apps/","kind":"","name":"","uid":""}]}}'
check "... an owner reference names apiVersion, kind, name and uid" code_has 422 'metadata.ownerReferences.apiVersion: Invalid value: \"apps/\": version must not be empty' 'metadata.ownerReferences.kind: Invalid value: \"\": kind must not be empty' 'metadata.ownerReferences.name: Invalid value: \"\": name must not be empty' 'metadata.ownerReferences.uid: Invalid value: \"\": uid must not be empty'
req POST "$CMS" '{"metadata":{"name":"own3","ownerReferences":[{"apiVersion":"v1","kind":"Event","name":"x","uid":"u1"}]}}'
check "... and no core/v1 Event may own anything (kube's BannedOwners)" code_has 422 'metadata.ownerReferences: Invalid value: v1.OwnerReference{APIVersion:\"v1\", Kind:\"Event\", Name:\"x\", UID:\"u1\", Controller:(*bool)(nil), BlockOwnerDeletion:(*bool)(nil)}: /v1, Kind=Event is disallowed from being an owner'
req POST "$CMS" '{"metadata":{"name":"qn1","labels":{"a/b/c":"v","xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx":"v","/a":"v","a/":"v","Bad_P/a":"v"}}}'
check "label keys get kube's IsQualifiedName complaints, one cause each" code_has 422 'Invalid value: \"a/b/c\": a qualified name must consist of' 'name part must be no more than 63 characters' 'Invalid value: \"/a\": prefix part must be non-empty' 'Invalid value: \"a/\": name part must be non-empty' 'Invalid value: \"a/\": name part must consist of' 'Invalid value: \"Bad_P/a\": prefix part a lowercase RFC 1123 subdomain must consist of'
req POST "$CMS" '{"metadata":{"name":"qn2","annotations":{"Example.COM/Key":"v"}}}'
check "... annotation keys are checked lowercased, as kube's ValidateAnnotations" code_is 201
req POST "$CMS" '{"metadata":{"name":"fin1","finalizers":["bad name!"]}}'
check "a finalizer must be a qualified name" code_has 422 'metadata.finalizers: Invalid value: \"bad name!\": name part must consist of'
req POST "$CMS" '{"metadata":{"name":"fin2","finalizers":["orphan","foregroundDeletion"]}}'
check "... and orphan and foregroundDeletion never go together" code_has 422 'finalizer orphan and foregroundDeletion cannot be both set'
req POST "$CMS" '{"metadata":{"name":"fin3","finalizers":["foregroundDeletion","x.io/y","orphan"]}}'
check "... the message showing the whole list (ValidateFinalizers' %#v)" code_has 422 'metadata.finalizers: Invalid value: []string{\"foregroundDeletion\", \"x.io/y\", \"orphan\"}: finalizer orphan and foregroundDeletion cannot be both set'
# kube's rules for Endpoints, typed and immutable Secrets, immutable
# ConfigMaps and Leases
NSD=/api/v1/namespaces/default
req POST "$NSD/endpoints" '{"metadata":{"name":"bad"},"subsets":[{"addresses":[{"ip":"not-an-ip"},{"ip":"127.0.0.2"}],"ports":[{"port":0,"protocol":"X"}]}]}'
check "Endpoints: addresses must be IPs, not special; ports in range, known protocols" code_has 422 'subsets[0].addresses[0].ip: Invalid value: \"not-an-ip\": must be a valid IP address' 'subsets[0].addresses[1].ip: Invalid value: \"127.0.0.2\": may not be in the loopback range (127.0.0.0/8, ::1/128)' 'subsets[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive' 'subsets[0].ports[0].protocol: Unsupported value: \"X\": supported values: \"SCTP\", \"TCP\", \"UDP\"'
req POST "$NSD/endpoints" '{"metadata":{"name":"bad"},"subsets":[{"ports":[{"port":80},{"port":81}]}]}'
check "... a subset needs addresses, several ports names" code_has 422 'subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`' 'subsets[0].ports[1].name: Required value'
req POST "$NSD/endpoints" '{"metadata":{"name":"good"},"subsets":[{"addresses":[{"ip":"10.0.0.1","hostname":"h"}],"ports":[{"port":80}]}]}'
check "... and a good one is created with kube's default protocol" code_has 201 '"ports":[{"port":80,"protocol":"TCP"}]'
req POST "$NSD/secrets" '{"metadata":{"name":"bad"},"type":"kubernetes.io/tls","data":{}}'
check "a TLS Secret needs tls.crt and tls.key" code_has 422 'Secret \"bad\" is invalid: [data[tls.crt]: Required value, data[tls.key]: Required value]'
req POST "$NSD/secrets" '{"metadata":{"name":"bad"},"type":"kubernetes.io/dockerconfigjson","data":{".dockerconfigjson":"bm90IGpzb24="}}'
check "... a docker config one JSON" code_has 422 'data[.dockerconfigjson]: Invalid value: \"<secret contents redacted>\"'
req POST "$NSD/secrets" '{"metadata":{"name":"bad"},"type":"kubernetes.io/basic-auth","data":{}}'
check "... a basic-auth one a username or a password" code_has 422 'data[username]: Required value, data[password]: Required value'
req POST "$NSD/secrets" '{"metadata":{"name":"bad"},"type":"kubernetes.io/service-account-token"}'
check "... a service account token one its account" code_has 422 'metadata.annotations[kubernetes.io/service-account.name]: Required value'
req POST "$NSD/secrets" '{"metadata":{"name":"frozen"},"immutable":true,"data":{"a":"MQ=="}}'
req PATCH "$NSD/secrets/frozen" '{"data":{"a":"Mg=="}}' application/merge-patch+json
check "an immutable Secret's data cannot change" code_has 422 'Secret \"frozen\" is invalid: data: Forbidden: field is immutable when `immutable` is set'
req PATCH "$NSD/secrets/frozen" '{"immutable":false}' application/merge-patch+json
check "... nor can it become mutable" code_has 422 'immutable: Forbidden: field is immutable when `immutable` is set'
req PATCH "$NSD/secrets/frozen" '{"type":"example.com/other"}' application/merge-patch+json
check "... a Secret's type never changes" code_has 422 'type: Invalid value: \"example.com/other\": field is immutable'
req PATCH "$NSD/secrets/frozen" '{"metadata":{"labels":{"a":"b"}}}' application/merge-patch+json
check "... its metadata can" code_is 200
req POST "$NSD/configmaps" '{"metadata":{"name":"frozen"},"immutable":true,"data":{"a":"1"},"binaryData":{"b":"MQ=="}}'
req PATCH "$NSD/configmaps/frozen" '{"data":{"a":"2"},"binaryData":null}' application/merge-patch+json
check "an immutable ConfigMap's data and binaryData cannot change" code_has 422 'data: Forbidden: field is immutable when `immutable` is set' 'binaryData: Forbidden: field is immutable when `immutable` is set'
req POST /apis/coordination.k8s.io/v1/namespaces/default/leases '{"metadata":{"name":"uncond"},"spec":{"holderIdentity":"a"}}'
req PUT /apis/coordination.k8s.io/v1/namespaces/default/leases/uncond '{"metadata":{"name":"uncond"},"spec":{"holderIdentity":"b"}}'
check "a Lease update must name its resourceVersion (kube's AllowUnconditionalUpdate false)" code_has 422 'leases.coordination.k8s.io \"uncond\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update'
req PATCH /apis/coordination.k8s.io/v1/namespaces/default/leases/uncond '{"metadata":{"resourceVersion":null},"spec":{"holderIdentity":"b"}}' application/merge-patch+json
check "... so must a patch's result: one removing it is the same 422" code_has 422 'leases.coordination.k8s.io \"uncond\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update'
req PATCH /apis/coordination.k8s.io/v1/namespaces/default/leases/uncond '[{"op":"remove","path":"/metadata/resourceVersion"}]' application/json-patch+json
check "... a JSON patch's too" code_has 422 'must be specified for an update'
req PATCH "$NSD/configmaps/frozen" '{"metadata":{"resourceVersion":null,"labels":{"u":"1"}}}' application/merge-patch+json
check "... while a ConfigMap's patch removing it is unconditional" code_is 200
req PUT "$NSD/configmaps/frozen" '{"metadata":{"name":"frozen","resourceVersion":"abc"},"immutable":true,"data":{"a":"1"}}'
check "an update whose resourceVersion is no number: the store's strconv error, a plain 500" code_has 500 'strconv.ParseUint: parsing \"abc\": invalid syntax'
req PATCH "$NSD/configmaps/frozen" '{"metadata":{"resourceVersion":"abc"}}' application/merge-patch+json
check "... a patch's likewise" code_has 500 'strconv.ParseUint: parsing \"abc\": invalid syntax'
# A PUT's uid is checked in the store (Preconditions.Check), whose
# StorageError names kube's etcd key: services keep theirs under specs/.
req PUT "$NSD/configmaps/frozen" '{"metadata":{"name":"frozen","uid":"other"},"immutable":true,"data":{"a":"1"}}'
check "an update's wrong uid: the store's StorageError with kube's key" code_has 409 'Operation cannot be fulfilled on configmaps \"frozen\": StorageError: invalid object, Code: 4, Key: /registry/configmaps/default/frozen, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: other, UID in object meta: '
req POST "$NSD/services" '{"metadata":{"name":"uidsvc"},"spec":{"ports":[{"port":80}]}}'
req PUT "$NSD/services/uidsvc" '{"metadata":{"name":"uidsvc","uid":"other"},"spec":{"ports":[{"port":80}]}}'
check "... a Service's key is under services/specs" code_has 409 'Key: /registry/services/specs/default/uidsvc, ResourceVersion: 0'
req POST /api/v1/namespaces '{"metadata":{"name":"uidns"}}'
req PUT /api/v1/namespaces/uidns '{"metadata":{"name":"uidns","uid":"other"}}'
check "... a namespace's has no namespace" code_has 409 'Key: /registry/namespaces/uidns, ResourceVersion: 0'
req PATCH "$NSD/configmaps/frozen" '{"metadata":{"uid":"other"}}' application/merge-patch+json
check "a patch changing the uid is ValidateObjectMetaUpdate's 422 (a patch has no uid precondition)" code_has 422 'ConfigMap \"frozen\" is invalid: metadata.uid: Invalid value: \"other\": field is immutable'
req PATCH "$NSD/configmaps/frozen" '{"metadata":{"deletionTimestamp":"2020-01-01T00:00:00Z"}}' application/merge-patch+json
check "an update may not set a deletion timestamp" code_has 422 'metadata.deletionTimestamp: Invalid value: 2020-01-01 00:00:00 +0000 UTC: field is immutable'
req POST "$NSD/configmaps" '{"metadata":{"name":"held","finalizers":["example.com/h"]}}'
req DELETE "$NSD/configmaps/held"
req PATCH "$NSD/configmaps/held" '{"metadata":{"deletionGracePeriodSeconds":30}}' application/merge-patch+json
check "... nor change a deleting object's grace period" code_has 422 'metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable'
req PATCH "$NSD/configmaps/held" '{"metadata":{"deletionGracePeriodSeconds":null,"finalizers":null}}' application/merge-patch+json
check "... though leaving it out keeps it (and the object goes)" code_is 200
req POST /apis/coordination.k8s.io/v1/namespaces/default/leases '{"metadata":{"name":"bad"},"spec":{"leaseDurationSeconds":0,"leaseTransitions":-1,"strategy":"Bogus"}}'
check "a Lease: positive duration, transitions not negative (strategy dropped: kube 1.33's CoordinatedLeaderElection gate is off)" code_has 422 'spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0' 'spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0'
check "... nothing of the strategy" bash -c "! grep -q strategy '$WORK/body'"
req POST /apis/coordination.k8s.io/v1/namespaces/default/leases '{"metadata":{"name":"gated"},"spec":{"preferredHolder":"me","strategy":"OldestEmulationVersion","holderIdentity":"h"}}'
check "... a Lease's strategy and preferredHolder are dropped on create" code_has 201 '"spec":{"holderIdentity":"h"}'
req POST "$SVCS" '{"metadata":{"name":"badip"},"spec":{"clusterIP":"10.96.0.5/x","ports":[{"port":80}]}}'
check "a cluster IP that is no IP is kube's 422" code_has 422 'spec.clusterIPs[0]: Invalid value: \"10.96.0.5/x\": must be a valid IP address'
req POST "$SVCS" '{"metadata":{"name":"fixedip"},"spec":{"clusterIP":"10.96.0.50","ports":[{"port":80}]}}'
req PATCH "$SVCS/fixedip" '{"spec":{"clusterIP":"10.96.0.51"}}' application/merge-patch+json
check "a cluster IP may not change once set" code_has 422 'spec.clusterIPs[0]: Invalid value: []string{\"10.96.0.51\"}: may not change once set'
req POST "$SVCS" '{"metadata":{"name":"ext"},"spec":{"type":"ExternalName","externalName":"example.com"}}'
check "an ExternalName Service has no IP fields" python3 -c "
import json; s=json.load(open('$WORK/body'))['spec']
assert not {'clusterIP','clusterIPs','ipFamilies','ipFamilyPolicy','internalTrafficPolicy'} & set(s), s"
req PATCH "$SVCS/ext" '{"spec":{"type":"ClusterIP","externalName":null,"clusterIP":"10.96.0.77","ports":[{"port":80}]}}' application/merge-patch+json
check "... one changed to ClusterIP reserves the IP it asks for" code_has 200 '"clusterIP":"10.96.0.77"' '"ipFamilies":["IPv4"]'
req POST "$SVCS" '{"metadata":{"name":"ext2"},"spec":{"clusterIP":"10.96.0.77","ports":[{"port":80}]}}'
check "... which no other Service can take" code_has 422 'failed to allocate IP 10.96.0.77: provided IP is already allocated'
req POST "$SVCS" '{"metadata":{"name":"outip"},"spec":{"clusterIP":"192.168.1.1","ports":[{"port":80}]}}'
check "a clusterIP outside the range: kube 1.33's allocator (no ServiceCIDR holds it)" code_has 422 'spec.clusterIPs: Invalid value: []string{\"192.168.1.1\"}: failed to allocate IP 192.168.1.1: the provided network does not match the current range'
req PATCH "$SVCS/ext" '{"spec":{"type":"ExternalName","externalName":"example.com"}}' application/merge-patch+json
check "... back to ExternalName drops its IP fields, not its internalTrafficPolicy (kube's dropTypeDependentFields)" python3 -c "
import json; s=json.load(open('$WORK/body'))['spec']; assert not {'clusterIP','clusterIPs','ipFamilies','ipFamilyPolicy'} & set(s), s; assert s['internalTrafficPolicy'] == 'Cluster', s"
req POST "$SVCS" '{"metadata":{"name":"ext2"},"spec":{"clusterIP":"10.96.0.77","ports":[{"port":80}]}}'
check "... and releases it" code_has 201 '"clusterIP":"10.96.0.77"'
# node ports: picked among the free ones, no cap per Service (kube's
# bitmap allocator), the upper band first
np_svc() { python3 -c "
import json, sys; print(json.dumps({'metadata': {'name': sys.argv[1]}, 'spec': {'type': 'NodePort',
  'ports': [{'name': 'p%d' % i, 'port': 1000 + i} for i in range(int(sys.argv[2]))]}}))" "$1" "$2"; }
req POST "$SVCS" "$(np_svc np300 300)"
check "a NodePort Service with 300 ports gets them all, above the static band (30000-30085)" python3 -c "
import json; d = json.load(open('$WORK/body')); p = [x['nodePort'] for x in d['spec']['ports']]
assert len(set(p)) == 300 and min(p) >= 30086 and max(p) <= 32767, d.get('message', p[:5])"
for i in 1 2 3 4; do
	req POST "$SVCS" "$(np_svc "np600-$i" 600)"
	check "... and four of 600 ports each fit the rest of the range ($i)" code_is 201
done
req POST "$SVCS" "$(np_svc np-over 100)"
check "... until it is full: kube's 500" code_has 500 'failed to allocate a nodePort: range is full'
for n in np300 np600-1 np600-2 np600-3 np600-4; do req DELETE "$SVCS/$n"; done
req POST "$SVCS" "$(np_svc np-again 100)"
check "... and deleting them frees the ports" code_is 201
req DELETE "$SVCS/np-again"
req POST "$SVCS" '{"metadata":{"name":"lbc","finalizers":["service.kubernetes.io/load-balancer-cleanup"]},"spec":{"type":"LoadBalancer","loadBalancerClass":"example.com/lb","ports":[{"port":80}]}}'
req PATCH "$SVCS/lbc/status" '{"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.7"}]}}}' application/merge-patch+json
check "a LoadBalancer with a class gets its ingress through /status" code_has 200 '"ingress":[{"ip":"203.0.113.7"'
req PATCH "$SVCS/lbc" '{"spec":{"type":"ClusterIP"}}' application/merge-patch+json
check "... changed to ClusterIP drops its unchanged class and its load balancer status (dropTypeDependentFields)" python3 -c "
import json; o=json.load(open('$WORK/body')); assert 'loadBalancerClass' not in o['spec'] and o['status'] == {'loadBalancer': {}}, o"
req PATCH "$SVCS/lbc/status" '{"metadata":{"finalizers":null}}' application/merge-patch+json
check "... so its /status can be written again (the cleanup finalizer goes)" code_is 200

# events.k8s.io/v1: another version of core/v1 Events, as in kube (one
# storage; seven members renamed; stricter rules for writes through it)
EV=/apis/events.k8s.io/v1/namespaces/default/events
CEV=/api/v1/namespaces/default/events
req GET /apis/events.k8s.io/v1
check "discovery lists events.k8s.io/v1 events" code_has 200 '"name":"events"' '"kind":"Event"'
curl -sS -N "$URL$EV?watch=1&timeoutSeconds=60" >"$WORK/evwatch" &
EVW=$!
sleep 0.3
req POST "$EV" '{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"ev1"},"eventTime":"2026-11-30T08:00:00.123456Z","reportingController":"example.com/ctl","reportingInstance":"ctl-1","action":"Reconcile","reason":"Synced","regarding":{"apiVersion":"v1","kind":"ConfigMap","name":"oe1","namespace":"default"},"note":"hello","type":"Normal"}'
check "an Event created through events.k8s.io/v1 is 201 in that version" python3 -c "
import json; d=json.load(open('$WORK/body'))
assert d['apiVersion']=='events.k8s.io/v1' and d['note']=='hello' and d['regarding']['name']=='oe1', d
assert d['deprecatedSource']=={} and d['deprecatedFirstTimestamp'] is None and d['deprecatedLastTimestamp'] is None, d
assert list(d)[:4]==['kind','apiVersion','metadata','eventTime'], list(d)"
req GET "$CEV/ev1"
check "... and is the same object through core/v1, with core's names" python3 -c "
import json; d=json.load(open('$WORK/body'))
assert d['apiVersion']=='v1' and d['message']=='hello' and d['involvedObject']['name']=='oe1', d
assert d['reportingComponent']=='example.com/ctl' and d['source']=={} and d['firstTimestamp'] is None, d
assert 'note' not in d and 'regarding' not in d, d"
req POST "$CEV" '{"metadata":{"name":"ev2"},"involvedObject":{"kind":"ConfigMap","name":"oe1","namespace":"default"},"reason":"Old","message":"legacy","count":3,"source":{"component":"kubelet"},"firstTimestamp":"2026-11-30T08:00:00Z","lastTimestamp":"2026-11-30T08:01:00Z","type":"Warning"}'
check "a core/v1 Event is created as before" code_has 201 '"reportingComponent":""'
req GET "$EV/ev2"
check "... and reads through events.k8s.io/v1 with the deprecated names" python3 -c "
import json; d=json.load(open('$WORK/body'))
assert d['deprecatedCount']==3 and d['deprecatedSource']=={'component':'kubelet'} and d['note']=='legacy', d
assert d['deprecatedLastTimestamp']=='2026-11-30T08:01:00Z' and d['eventTime'] is None, d
assert 'reportingController' not in d and 'count' not in d, d"
req GET "$EV"
check "a list through events.k8s.io/v1 converts every item" python3 -c "
import json; d=json.load(open('$WORK/body'))
assert d['kind']=='EventList' and d['apiVersion']=='events.k8s.io/v1', d
assert sorted(i['metadata']['name'] for i in d['items'])==['ev1','ev2'] and all('regarding' in i and 'note' in i for i in d['items']), d
assert all('apiVersion' not in i and 'kind' not in i for i in d['items']), d"
req GET "$EV?fieldSelector=reportingController%3Dexample.com%2Fctl"
check "field selectors use the events.k8s.io names" python3 -c "
import json; d=json.load(open('$WORK/body')); assert [i['metadata']['name'] for i in d['items']]==['ev1'], d"
req GET "$EV?fieldSelector=regarding.name%3Doe1,type%3DWarning"
check "... regarding.* and type" python3 -c "
import json; d=json.load(open('$WORK/body')); assert [i['metadata']['name'] for i in d['items']]==['ev2'], d"
req GET "$EV?fieldSelector=involvedObject.name%3Doe1"
check "... and refuse core's names there" code_has 400 'field label not supported: involvedObject.name'
req GET "$CEV?fieldSelector=source%3Dkubelet"
check "core's source selector reads source.component" python3 -c "
import json; d=json.load(open('$WORK/body')); assert [i['metadata']['name'] for i in d['items']]==['ev2'], d"
req GET "$CEV?fieldSelector=source%3Dexample.com%2Fctl"
check "... else the reporting controller, as kube's" python3 -c "
import json; d=json.load(open('$WORK/body')); assert [i['metadata']['name'] for i in d['items']]==['ev1'], d"
req PATCH "$EV/ev1" '{"series":{"count":2,"lastObservedTime":"2026-11-30T08:05:00.000000Z"}}' application/merge-patch+json
check "a merge patch in the events.k8s.io form (a series, as client-go's recorder sends)" code_has 200 '"series":{"count":2' '"apiVersion":"events.k8s.io/v1"'
req GET "$CEV/ev1"
check "... is stored" has '"series":{"count":2,"lastObservedTime":"2026-11-30T08:05:00.000000Z"}'
req PATCH "$EV/ev1" '{"note":"changed"}' application/strategic-merge-patch+json
check "an update through events.k8s.io/v1 may not change the note" code_has 422 'Event \"ev1\" is invalid: message: Invalid value: \"changed\": field is immutable'
req PATCH "$EV/ev1" '{"regarding":{"kind":"Widget","name":"zz"},"deprecatedSource":{"component":"other","host":"h"},"eventTime":"2026-01-01T00:00:00.250000Z","deprecatedFirstTimestamp":"2026-01-01T00:00:00Z","deprecatedCount":7}' application/merge-patch+json
check "... its structs, times and count shown as kube's field errors print them (Go's %#v, time.Time's String, %v)" code_has 422 'involvedObject: Invalid value: core.ObjectReference{Kind:\"Widget\", Namespace:\"default\", Name:\"zz\", UID:\"\", APIVersion:' 'source: Invalid value: core.EventSource{Component:\"other\", Host:\"h\"}: field is immutable' 'firstTimestamp: Invalid value: 2026-01-01 00:00:00 +0000 UTC: field is immutable' 'count: Invalid value: 7: field is immutable' 'eventTime: Invalid value: 2026-01-01 00:00:00.25 +0000 UTC: field is immutable'
req PATCH "$EV/ev1" '{"series":{"count":1}}' application/merge-patch+json
check "... and checks a changed series" code_has 422 'series.count: Invalid value: \"\": should be at least 2'
req PATCH "$CEV/ev1" '{"message":"changed"}' application/merge-patch+json
check "core/v1 keeps its legacy rules (the message may change)" code_has 200 '"message":"changed"'
req POST "$EV" '{"metadata":{"name":"ev3"},"regarding":{"kind":"ConfigMap","name":"oe1"},"type":"Bad","deprecatedCount":3,"deprecatedSource":{"host":"h"},"series":{"count":1}}'
check "a create through events.k8s.io/v1 is checked strictly, in kube's words and order" code_has 422 'Event \"ev3\" is invalid: [series.count: Invalid value: \"\": should be at least 2, series.lastObservedTime: Required value, eventTime: Required value, type: Invalid value: \"\": has invalid value: Bad, count: Invalid value: \"\": needs to be unset, source: Invalid value: \"\": needs to be unset]'
req POST "$EV" '{"metadata":{"name":"ev4"},"eventTime":"2026-11-30T08:00:00.000000Z","regarding":{"kind":"ConfigMap","name":"oe1"},"type":"Normal"}'
check "... with the legacy rules of an event with an eventTime" code_has 422 'reportingController: Required value' 'reportingInstance: Required value' 'action: Required value' 'reason: Required value'
check "... an empty one is also no qualified name (kube runs ValidateQualifiedName on it)" has 'reportingController: Invalid value: \"\": name part must be non-empty'
req POST "$CEV" '{"metadata":{"name":"ev5"},"eventTime":"2026-11-30T08:00:00.000000Z","involvedObject":{"kind":"ConfigMap","name":"oe1"},"reportingComponent":"a b","reportingInstance":"i","action":"A","reason":"R"}'
check "... through core/v1 the field is reportingComponent (legacyValidateEvent's name for v1)" code_has 422 'reportingComponent: Invalid value: \"a b\"'
req GET "$EV/nope"
check "a missing event is kube's NotFound for the core resource" code_has 404 'events \"nope\" not found'
req DELETE "$EV/ev2"
check "a delete through events.k8s.io/v1" code_is 200
req GET "$CEV/ev2"
check "... removes the core/v1 Event" code_is 404
sleep 0.5
kill "$EVW" 2>/dev/null
wait "$EVW" 2>/dev/null
check "a watch through events.k8s.io/v1 sees its own form of every change" python3 -c "
import json; ev=[json.loads(l) for l in open('$WORK/evwatch') if l.strip()]
types=[(e['type'], e['object']['metadata']['name']) for e in ev]
assert ('ADDED','ev1') in types and ('ADDED','ev2') in types and ('DELETED','ev2') in types, types
assert all(e['object']['apiVersion']=='events.k8s.io/v1' and 'regarding' in e['object'] for e in ev), ev"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' "$URL$EV")
check "a Table of events.k8s.io/v1 events has kube's event columns" python3 -c "
import json; d=json.load(open('$WORK/body'))
assert [c['name'] for c in d['columnDefinitions']]==['Last Seen','Type','Reason','Object','Subobject','Source','Message','First Seen','Count','Name'], d
assert [c['priority'] for c in d['columnDefinitions']]==[0,0,0,0,1,1,0,1,1,1], d
r=d['rows'][0]['cells']; assert r[1:4]==['Normal','Synced','configmap/oe1'] and r[6]=='changed' and r[0]!='<unknown>', r"
# managedFields of an Event written through both versions: each entry
# names the version it was written through and that version's fields
# (events.k8s.io's note and regarding, core's message), and a manager's
# fields are compared across versions (they were all recorded in the
# stored core form as v1: found by an audit)
check "an Event's managedFields keep each version's names and compare across them" python3 - "$URL" <<'PY'
import json, sys, urllib.request, urllib.error
url = sys.argv[1]
def call(method, path, body=None, ctype="application/json"):
    req = urllib.request.Request(url + path, data=body and json.dumps(body).encode(), method=method,
                                 headers={"Content-Type": ctype})
    try:
        r = urllib.request.urlopen(req)
        return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
EV = "/apis/events.k8s.io/v1/namespaces/default/events"
CEV = "/api/v1/namespaces/default/events"
ev = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "mf-ev"},
      "eventTime": "2026-12-07T10:00:00.000000Z", "reportingController": "a/b", "reportingInstance": "i",
      "action": "A", "reason": "R", "type": "Normal", "note": "first",
      "regarding": {"kind": "ConfigMap", "name": "x", "namespace": "default"}}
code, d = call("POST", EV + "?fieldManager=ev-a", ev)
assert code == 201, d
code, d = call("GET", CEV + "/mf-ev")
mf = d["metadata"]["managedFields"]
assert [(e["manager"], e["apiVersion"]) for e in mf] == [("ev-a", "events.k8s.io/v1")], mf
f = mf[0]["fieldsV1"]
assert "f:note" in f and "f:regarding" in f and "f:reportingController" in f and "f:message" not in f, f
assert list(f) == sorted(f), list(f)
# core changes the message another manager set through events.k8s.io
code, d = call("PATCH", CEV + "/mf-ev?fieldManager=core-b", {"message": "second"}, "application/merge-patch+json")
assert code == 200, d
mf = {e["manager"]: e for e in d["metadata"]["managedFields"]}
assert mf["core-b"]["apiVersion"] == "v1" and "f:message" in mf["core-b"]["fieldsV1"], mf
assert "f:note" not in mf["ev-a"]["fieldsV1"] and "f:regarding" in mf["ev-a"]["fieldsV1"], mf
# an apply through events.k8s.io of another note conflicts with core-b
ap = dict(ev, note="third")
code, d = call("PATCH", EV + "/mf-ev?fieldManager=ev-c", ap, "application/apply-patch+yaml")
assert code == 409 and 'conflict with "core-b"' in d["message"] and ".note" in d["message"], (code, d)
call("DELETE", CEV + "/mf-ev")
PY

# kubectl auth can-i / whoami: the self reviews, answered, never stored
SSAR=/apis/authorization.k8s.io/v1/selfsubjectaccessreviews
req POST "$SSAR" '{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"namespace":"default","verb":"create","resource":"configmaps"}}}'
check "a SelfSubjectAccessReview is 201 and allowed" code_has 201 '"status":{"allowed":true,"reason":"lapis: system:unsecured has every right"}' '"resourceAttributes":{"namespace":"default","verb":"create","resource":"configmaps"}'
req POST "$SSAR" '{"spec":{}}'
check "... one without attributes is kube's 422" code_has 422 'SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified'
req POST "$SSAR" '{"spec":{"resourceAttributes":{"verb":"get"},"nonResourceAttributes":{"path":"/x","verb":"get"}}}'
check "... and one with both" code_has 422 'spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:\"/x\", Verb:\"get\"}: cannot be specified in combination with resourceAttributes'
req GET "$SSAR"
check "... which can only be created" code_is 405
req POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews '{"spec":{"namespace":"default"}}'
check "a SelfSubjectRulesReview lists every right" code_has 201 '"resourceRules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"]}]' '"nonResourceRules":[{"verbs":["*"],"nonResourceURLs":["*"]}]' '"incomplete":false'
req POST /apis/authentication.k8s.io/v1/selfsubjectreviews '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}'
check "a SelfSubjectReview names the insecure port's user" code_has 201 '"userInfo":{"username":"system:unsecured","groups":["system:masters","system:authenticated"]}'
req POST /apis/authentication.k8s.io/v1/selfsubjectreviews '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview","metadata":{"name":"n","uid":"u-1","labels":{"a":"b"}}}'
check "... a new object stamped now: nothing of the request's metadata comes back" python3 -c "import json, re; m=json.load(open('$WORK/body'))['metadata']; assert list(m) == ['creationTimestamp'] and re.match(r'^20[0-9-]{8}T[0-9:]{8}Z$', m['creationTimestamp']), m"
req POST "$SSAR" '{"metadata":{"name":"n","uid":"u-1","creationTimestamp":"2020-01-01T00:00:00Z","deletionGracePeriodSeconds":3,"selfLink":"/x"},"spec":{"resourceAttributes":{"verb":"get","resource":"configmaps"}}}'
check "a review's system fields are wiped, its creation time the zero time (null), as kube's create handler does" code_has 201 '"metadata":{"name":"n","creationTimestamp":null}'

SAR=/apis/authorization.k8s.io/v1/subjectaccessreviews
req POST "$SAR" '{"spec":{"user":"bob","groups":["dev"],"resourceAttributes":{"verb":"get","resource":"configmaps"}}}'
check "a SubjectAccessReview for another user is not allowed" code_has 201 '"status":{"allowed":false,"reason":"lapis: only lapis-admin and group system:masters have rights"}'
req POST "$SAR" '{"spec":{"groups":["system:masters"],"nonResourceAttributes":{"path":"/metrics","verb":"get"}}}'
check "... for system:masters it is" code_has 201 '"allowed":true'
req POST "$SAR" '{"spec":{"resourceAttributes":{"verb":"get"}}}'
check "... and one without a subject is kube's 422" code_has 422 'spec.user: Invalid value: \"\": at least one of user or group must be specified'
LSAR=/apis/authorization.k8s.io/v1/namespaces/team-a/localsubjectaccessreviews
req POST "$LSAR" '{"spec":{"user":"lapis-admin","resourceAttributes":{"namespace":"team-a","verb":"get","resource":"configmaps"}}}'
check "a LocalSubjectAccessReview (in a namespace that need not exist) takes the request's namespace" code_has 201 '{"kind":"LocalSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","metadata":{"namespace":"team-a","creationTimestamp":null}' '"allowed":true'
req POST "$LSAR" '{"spec":{"groups":["dev"],"resourceAttributes":{"namespace":"other","verb":"get"}}}'
check "... its resource attributes must name that namespace" code_has 422 'LocalSubjectAccessReview.authorization.k8s.io \"\" is invalid: spec.resourceAttributes.namespace: Invalid value: \"other\": must match metadata.namespace'
req POST "$LSAR" '{"spec":{"groups":["dev"],"nonResourceAttributes":{"path":"/x","verb":"get"}}}'
check "... and it has no non-resource attributes" code_has 422 'spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:\"/x\", Verb:\"get\"}: disallowed on this kind of request'
req POST "$LSAR" '{"metadata":{"namespace":"zzz"},"spec":{"user":"u","resourceAttributes":{"namespace":"team-a"}}}'
check "... nor another namespace in its metadata (400)" code_has 400 'the namespace of the provided object does not match the namespace sent on the request'
req POST /apis/authentication.k8s.io/v1/tokenreviews '{"spec":{"token":"anything"}}'
check "a TokenReview over the insecure port authenticates no token" code_has 201 '"status":{"user":{}}'
req POST /apis/authentication.k8s.io/v1/tokenreviews '{"spec":{}}'
check "... and needs one (400)" code_has 400 'token is required for TokenReview in authentication'

# kubectl create token: serviceaccounts/NAME/token (TokenRequest), tokens
# signed by the server that its TokenReview accepts
SA=/api/v1/namespaces/default/serviceaccounts
TR=/apis/authentication.k8s.io/v1/tokenreviews
review_token() { # TOKEN [AUDIENCES-JSON]
	req POST "$TR" "{\"spec\":{\"token\":\"$1\"${2:+,\"audiences\":$2}}}"
}
# imagePullSecrets has no patch strategy (atomic): a strategic merge patch
# replaces it, and a second server-side apply manager conflicts on it;
# secrets merge by name
req POST "$SA" '{"metadata":{"name":"pulls"},"secrets":[{"name":"s1"}]}'
for n in a b; do
	req PATCH "$SA/pulls" "{\"imagePullSecrets\":[{\"name\":\"$n\"}],\"secrets\":[{\"name\":\"s$n\"}]}" application/strategic-merge-patch+json
done
check "a ServiceAccount's imagePullSecrets are replaced by a strategic merge patch, its secrets merged" \
	[ "$(jq_ "[d['imagePullSecrets'], sorted(x['name'] for x in d['secrets'])]")" == "[[{'name': 'b'}], ['s1', 'sa', 'sb']]" ]
req PATCH "$SA/pulls2?fieldManager=m1" '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"pulls2"},"imagePullSecrets":[{"name":"a"}]}' application/apply-patch+yaml
req PATCH "$SA/pulls2?fieldManager=m2" '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"pulls2"},"imagePullSecrets":[{"name":"b"}]}' application/apply-patch+yaml
check "... and a second apply manager conflicts on the whole list" code_has 409 'conflict with \"m1\": .imagePullSecrets'
# force is a *bool query parameter: all but 0 and false (any case) is true
# (the Python client sends force=True)
req PATCH "$SA/pulls2?fieldManager=m2&force=True" '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"pulls2"},"imagePullSecrets":[{"name":"b"}]}' application/apply-patch+yaml
check "... which force=True takes over" code_has 200 '"imagePullSecrets":[{"name":"b"}]'
req PATCH "$SA/pulls2?fieldManager=m1&force=FALSE" '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"pulls2"},"imagePullSecrets":[{"name":"a"}]}' application/apply-patch+yaml
check "... and force=FALSE does not" code_has 409 'conflict with \"m2\": .imagePullSecrets'
req PATCH "$SA/pulls3?fieldManager=" '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"pulls3"}}' application/apply-patch+yaml
check "an apply with an empty fieldManager is kube's 422, details naming PatchOptions" code_has 422 'PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch' '"details":{"group":"meta.k8s.io","kind":"PatchOptions","causes":'
req PATCH "$SA/pulls2?force=true" '{}' application/merge-patch+json
check "... force on another patch names PatchOptions too" code_has 422 '"details":{"group":"meta.k8s.io","kind":"PatchOptions","causes":'
req DELETE "$SA/pulls2"
check "deleting a ServiceAccount answers the deleted object (kube's ReturnDeletedObject)" code_has 200 '{"kind":"ServiceAccount","apiVersion":"v1","metadata":{"name":"pulls2",'
req POST "$SA" '{"metadata":{"name":"robot"}}'
SAUID=$(jq_ "d['metadata']['uid']")
req POST "$SA/robot/token" '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}'
check "a TokenRequest is 201 with kube's defaults and a token" code_has 201 '{"kind":"TokenRequest","apiVersion":"authentication.k8s.io/v1","metadata":{"name":"robot","namespace":"default","creationTimestamp":' '"spec":{"audiences":["https://kubernetes.default.svc.cluster.local"],"expirationSeconds":3600,"boundObjectRef":null}' '"status":{"token":"eyJ' '"expirationTimestamp":'
TOK=$(jq_ "d['status']['token']")
check "... a JWT whose claims name the service account" python3 -c "
import base64,json; h,c,s=json.load(open('$WORK/body'))['status']['token'].split('.')
dec=lambda p: json.loads(base64.urlsafe_b64decode(p+'='*(-len(p)%4)))
assert dec(h)['alg']=='ES256' and dec(h)['kid'], dec(h)
c=dec(c); assert c['sub']=='system:serviceaccount:default:robot' and c['exp']-c['iat']==3600, c
assert c['kubernetes.io']=={'namespace':'default','serviceaccount':{'name':'robot','uid':'$SAUID'}}, c
assert len(base64.urlsafe_b64decode(s+'='*(-len(s)%4)))==64"
review_token "$TOK"
check "a TokenReview authenticates it as the service account" code_has 201 '"authenticated":true' "\"user\":{\"username\":\"system:serviceaccount:default:robot\",\"uid\":\"$SAUID\",\"groups\":[\"system:serviceaccounts\",\"system:serviceaccounts:default\",\"system:authenticated\"],\"extra\":{\"authentication.kubernetes.io/credential-id\":[\"JTI=" '"audiences":["https://kubernetes.default.svc.cluster.local"]'
req GET /.well-known/openid-configuration
check "the issuer's OIDC discovery document names the issuer and this server's key set" code_has 200 "{\"issuer\":\"https://kubernetes.default.svc.cluster.local\",\"jwks_uri\":\"$URL/openid/v1/jwks\",\"response_types_supported\":[\"id_token\"],\"subject_types_supported\":[\"public\"],\"id_token_signing_alg_values_supported\":[\"ES256\"]}"
req GET /openid/v1/jwks
check "... whose P-256 key (kube's kid) verifies the token's ES256 signature" python3 - "$TOK" "$WORK/body" <<'PY'
import base64, hashlib, json, sys
b64d = lambda s: base64.urlsafe_b64decode(s + '=' * (-len(s) % 4))
tok, keys = sys.argv[1], json.load(open(sys.argv[2]))['keys']
h, c, sig = tok.split('.')
k = keys[0]
assert len(keys) == 1 and (k['use'], k['kty'], k['crv'], k['alg']) == ('sig', 'EC', 'P-256', 'ES256'), k
assert json.loads(b64d(h))['kid'] == k['kid'], (h, k)
P = 2**256 - 2**224 + 2**192 + 2**96 - 1
N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551
B = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b
G = (0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296,
     0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5)
X, Y = (int.from_bytes(b64d(k[a]), 'big') for a in 'xy')
assert len(b64d(k['x'])) == len(b64d(k['y'])) == 32 and (Y * Y - X**3 + 3 * X - B) % P == 0
def add(p, q):
    if p is None: return q
    if q is None: return p
    if p[0] == q[0] and (p[1] + q[1]) % P == 0: return None
    l = ((3 * p[0] * p[0] - 3) * pow(2 * p[1], P - 2, P) if p == q
         else (q[1] - p[1]) * pow(q[0] - p[0], P - 2, P)) % P
    x = (l * l - p[0] - q[0]) % P
    return (x, (l * (p[0] - x) - p[1]) % P)
def mul(k, p):
    r = None
    while k:
        if k & 1: r = add(r, p)
        p, k = add(p, p), k >> 1
    return r
raw = b64d(sig)
r, s = int.from_bytes(raw[:32], 'big'), int.from_bytes(raw[32:], 'big')
e = int.from_bytes(hashlib.sha256((h + '.' + c).encode()).digest(), 'big')
w = pow(s, N - 2, N)
pt = add(mul(e * w % N, G), mul(r * w % N, (X, Y)))
assert pt and pt[0] % N == r, "signature does not verify"
PY
review_token "$TOK" '["other"]'
check "... not for an audience it was not made for" code_has 201 '"status":{"user":{},"error":"[invalid bearer token, token audiences is invalid for the target audiences]"}'
review_token "${TOK:0:-3}xyz"
check "... nor when its signature is altered" code_has 201 '"status":{"user":{}}'
req POST "$SA/robot/token" '{"spec":{"audiences":["vault"],"expirationSeconds":7200}}'
check "a TokenRequest for an audience and a lifetime" code_has 201 '"spec":{"audiences":["vault"],"expirationSeconds":7200,"boundObjectRef":null}'
review_token "$(jq_ "d['status']['token']")" '["vault","x"]'
check "... is accepted for that audience" code_has 201 '"authenticated":true' '"audiences":["vault"]'
req POST "$SA/robot/token" '{"spec":{"expirationSeconds":60}}'
check "a lifetime under 10 minutes is kube's 422" code_has 422 'TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes'
req POST "$SA/robot/token" '{"spec":{"expirationSeconds":4294967297}}'
check "... and one over 2^32 seconds" code_has 422 'may not specify a duration larger than 2^32 seconds'
req POST "$SA/robot/token" '{"metadata":{"name":"other"},"spec":{}}'
check "a TokenRequest naming another account is 422" code_has 422 'TokenRequest.authentication.k8s.io \"robot\" is invalid: metadata.name: Invalid value: \"other\": must match the service account name if specified'
req POST "$SA/robot/token" '{"metadata":{"namespace":"kube-system"},"spec":{}}'
check "... or another namespace" code_has 422 'metadata.namespace: Invalid value: \"kube-system\": must match the service account namespace if specified'
req POST "$SA/nobody/token" '{"spec":{}}'
check "a token for a missing account is 404" code_has 404 'serviceaccounts \"nobody\" not found'
req POST "$SA/robot/token" '{"kind":"ServiceAccount","apiVersion":"v1"}'
check "a body of another kind is 400" code_has 400 'ServiceAccount in version \"v1\" cannot be handled as a TokenRequest: converting (v1.ServiceAccount) to (authentication.TokenRequest): unknown conversion'
req POST "$SA/robot/token" '{"spec":{"audiences":"x"}}'
check "... and a mistyped one" code_has 400 'TokenRequest in version \"v1\" cannot be handled as a TokenRequest'
reqh POST "$SA/robot/token" '{"spec":{"bogus":1}}'
check "... an unknown field is accepted" code_is 201
check "... with kube's Warning" warns 'unknown field \"spec.bogus\"'
req GET "$SA/robot/token"
check "serviceaccounts/token can only be created (405)" code_is 405
req POST /api/v1/namespaces/default/secrets '{"metadata":{"name":"bound"}}'
SECUID=$(jq_ "d['metadata']['uid']")
req POST "$SA/robot/token" '{"spec":{"boundObjectRef":{"kind":"Secret","apiVersion":"v1","name":"bound"}}}'
check "a token bound to a Secret" code_has 201 '"boundObjectRef":{"kind":"Secret","apiVersion":"v1","name":"bound"}'
BOUND=$(jq_ "d['status']['token']")
review_token "$BOUND"
check "... is valid while the Secret exists" code_has 201 '"authenticated":true'
req POST "$SA/robot/token" '{"spec":{"boundObjectRef":{"kind":"Secret","apiVersion":"v1","name":"bound","uid":"0000"}}}'
check "... a bound uid that is not the Secret's is 409" code_has 409 "the UID in the bound object reference (0000) does not match the UID in record"
req POST "$SA/robot/token" '{"spec":{"boundObjectRef":{"kind":"Secret","apiVersion":"v1","name":"gone"}}}'
check "... a missing Secret is 404" code_has 404 'secrets \"gone\" not found'
req POST "$SA/robot/token" '{"spec":{"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"p"}}}'
check "... no Pod exists to bind to (404)" code_has 404 'pods \"p\" not found'
req POST "$SA/robot/token" '{"spec":{"boundObjectRef":{"kind":"ConfigMap","apiVersion":"v1","name":"c"}}}'
check "... and other kinds are kube's 400" code_has 400 'cannot bind token to object of type /v1, Kind=ConfigMap'
req DELETE /api/v1/namespaces/default/secrets/bound
review_token "$BOUND"
check "a token whose Secret was deleted is no longer valid" code_has 201 '"status":{"user":{},"error":"[invalid bearer token, service account token has been invalidated]"}'
req DELETE "$SA/robot"
req POST "$SA" '{"metadata":{"name":"robot"}}'
review_token "$TOK"
check "... nor one whose account was deleted and made again" code_has 201 'service account token has been invalidated'
req GET /api/v1
check "discovery lists serviceaccounts/token as TokenRequest" code_has 200 '{"name":"serviceaccounts/token","singularName":"","namespaced":true,"group":"authentication.k8s.io","version":"v1","kind":"TokenRequest","verbs":["create"]}'
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' "$URL/api")
check "... in aggregated discovery too" code_has 200 '{"subresource":"token","responseKind":{"group":"authentication.k8s.io","version":"v1","kind":"TokenRequest"},"verbs":["create"]}'

# restart: data and revisions persist, a watch resumes
gen_cms() {
	local i ok=0
	for i in $(seq "$1"); do
		req POST /api/v1/namespaces/default/configmaps '{"metadata":{"generateName":"gen-"}}'
		[[ $CODE == 201 ]] && ok=$((ok + 1))
	done
	[[ $ok == "$1" ]] || { echo "#   $ok of $1 created, last: $(head -c 300 "$WORK/body")"; return 1; }
}
check "twelve generateName creates" gen_cms 12
# restart: data and revisions persist, a watch resumes
REV_BEFORE=$(curl -sS "$URL/api/v1/namespaces/default/configmaps" | python3 -c "import json,sys; print(json.load(sys.stdin)['metadata']['resourceVersion'])")
# SIGTERM with a watch open: the stream ends with its last chunk, and by
# then the listener is closed, so a client that reconnects is refused
# (not accepted into the backlog and reset when the daemon stops)
python3 - "${URL#http://}" "$SERVER_PID" >"$WORK/shutdown.out" 2>&1 <<'PY' &
import os, signal, socket, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
s.sendall(b"GET /api/v1/namespaces/default/configmaps?watch=1 HTTP/1.1\r\nHost: x\r\n\r\n")
data = b""
while b"\r\n\r\n" not in data:
    data += s.recv(65536)
os.kill(int(sys.argv[2]), signal.SIGTERM)
while not data.endswith(b"\r\n0\r\n\r\n"):
    d = s.recv(65536)
    if not d:
        break
    data += d
print("ended" if data.endswith(b"\r\n0\r\n\r\n") else "cut: %r" % data[-40:])
try:
    socket.create_connection((host, int(port)), timeout=2).close()
    print("accepted")
except ConnectionRefusedError:
    print("refused")
PY
SHUT_PID=$!
reap "$SERVER_PID"
wait "$SHUT_PID"
check "server stops cleanly on SIGTERM" exited_zero
check "... a watch open then ends with its last chunk, a new connection is refused" \
	[ "$(tr '\n' ' ' <"$WORK/shutdown.out")" == "ended refused " ]
check "server restarts on the same data" start_server
req GET /api/v1/namespaces/default/configmaps/p01
check "objects persist across a restart" code_is 200
# an unseeded rand() handed out the same names again after a restart:
# after eight such creates, every retry hit a stored name (409)
check "... and generateName creates after it find new names" gen_cms 12
req POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"after"}}'
check "revisions continue after a restart" bash -c "(( \$(python3 -c \"import json; print(json.load(open('$WORK/body'))['metadata']['resourceVersion'])\") > $REV_BEFORE ))"
curl -sS -N "$URL/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$REV_BEFORE&timeoutSeconds=1" > "$WORK/watch2"
check "a watch resumes from its last revision after a restart" grep -q '"name":"after"' "$WORK/watch2"
# Deep bodies on a write's fiber stack (server/writes.c): as deep as the
# decoder takes is served, deeper is a 400, and the server goes on.
# deep_body D FILE: a ConfigMap create whose field x nests D objects.
deep_body() {
	python3 -c "import sys; d = int(sys.argv[1]); print('{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"deep%d\"},\"x\":' % d + '{\"a\":' * d + '1' + '}' * d + '}')" "$1" >"$2"
}
# req_file METHOD PATH FILE CONTENT-TYPE: req with the body in FILE
req_file() {
	CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X "$1" -H "Content-Type: $4" \
		--data-binary "@$3" "$URL$2")
}
deep_body 2046 "$WORK/deep2k"
req_file POST /api/v1/namespaces/default/configmaps "$WORK/deep2k" application/json
check "a create nested 2,046 deep (the most the decoder takes) runs on its fiber: 201" code_is 201
deep_body 100000 "$WORK/deep100k"
req_file POST /api/v1/namespaces/default/configmaps "$WORK/deep100k" application/json
check "one nested 100,000 deep is a 400" code_has 400 '"reason":"BadRequest"'
req_file PATCH /api/v1/namespaces/default/configmaps/after "$WORK/deep100k" application/merge-patch+json
check "so is a merge patch nested 100,000 deep" code_has 400 '"reason":"BadRequest"'
req GET /readyz
check "and the server goes on" code_is 200
# The read cache (engine/rcache.c): a GET answered from it never shows an
# object older than a write already acknowledged, whichever key the write
# touched; the server reports how many reads it answered.
cached_rounds() {
	local i
	req POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cached"},"data":{"n":"0"}}'
	code_is 201 || return 1
	for i in $(seq 1 30); do
		req GET /api/v1/namespaces/default/configmaps/cached
		req GET /api/v1/namespaces/default/configmaps/cached
		[[ $CODE == 200 ]] && has "\"n\":\"$((i - 1))\"" || return 1
		req PATCH /api/v1/namespaces/default/configmaps/cached "{\"data\":{\"n\":\"$i\"}}" application/merge-patch+json
		[[ $CODE == 200 ]] || return 1
		# a write of another object: the next GET is read afresh too
		req PATCH /api/v1/namespaces/default/configmaps/after "{\"data\":{\"i\":\"$i\"}}" application/merge-patch+json
		[[ $CODE == 200 ]] || return 1
	done
	req DELETE /api/v1/namespaces/default/configmaps/cached
	req GET /api/v1/namespaces/default/configmaps/cached
	code_is 404
}
check "read cache: every GET after a write shows it (30 updates, then a delete)" cached_rounds
# The response cache (server/respcache.c) keeps the answer of a plain GET
# of a built-in object for its path: a GET in another form of an object
# whose plain answer is kept gets that form, and one object read through
# two group versions gets each version's answer.
req POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kept"},"data":{"k":"v"}}'
req GET /api/v1/namespaces/default/configmaps/kept
req GET /api/v1/namespaces/default/configmaps/kept
check "response cache: a plain GET again is compact JSON" eval 'code_is 200 && is_compact'
pretty_get curl/8.1.2 /api/v1/namespaces/default/configmaps/kept
check "... curl's GET of the same path is indented" is_pretty
pretty_get lapis-e2e /api/v1/namespaces/default/configmaps/kept -H 'Accept: application/yaml'
check "... YAML is YAML" bash -c "head -1 '$WORK/body' | grep -qx 'apiVersion: v1'"
pretty_get lapis-e2e /api/v1/namespaces/default/configmaps/kept -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io'
check "... a Table is a Table" python3 -c "
import json; assert json.load(open('$WORK/body'))['kind']=='Table'"
pretty_get lapis-e2e '/api/v1/namespaces/default/configmaps/kept?resourceVersion=0'
check "... a GET with a query argument is answered too" python3 -c "
import json; assert json.load(open('$WORK/body'))['metadata']['name']=='kept'"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -I "$URL/api/v1/namespaces/default/configmaps/kept")
check "... HEAD is 200 with no body" eval 'code_is 200 && [[ ! -s $WORK/body || $(head -c 4 "$WORK/body") == HTTP ]]'
for round in 1 2; do
	req GET "$CEV/ev1"
	check "an Event through core/v1, again ($round): core's answer" python3 -c "
import json; d=json.load(open('$WORK/body'))
assert d['apiVersion']=='v1' and 'message' in d and 'note' not in d, d"
	req GET "$EV/ev1"
	check "... through events.k8s.io/v1 ($round): that version's answer" python3 -c "
import json; d=json.load(open('$WORK/body'))
assert d['apiVersion']=='events.k8s.io/v1' and 'note' in d and 'message' not in d, d"
done
# Both caches under load: three connections GET five objects while a
# fourth patches them (the sanitizer builds run this too); every GET
# answers, and a GET after the last patch shows it.
cache_load() {
	local i j pids=()
	for i in 0 1 2 3 4; do
		req POST /api/v1/namespaces/default/configmaps "{\"metadata\":{\"name\":\"load$i\"},\"data\":{\"n\":\"0\"}}"
		code_is 201 || return 1
	done
	for i in 1 2 3; do
		{
			echo 'user-agent = "lapis-e2e"'
			for j in $(seq 1 300); do
				printf 'url = "%s/api/v1/namespaces/default/configmaps/load%d"\noutput = "/dev/null"\n' "$URL" $((j % 5))
			done
		} | curl -sf -K - &
		pids+=($!)
	done
	for j in $(seq 1 40); do
		req PATCH "/api/v1/namespaces/default/configmaps/load$((j % 5))" "{\"data\":{\"n\":\"$j\"}}" application/merge-patch+json
		code_is 200 || return 1
	done
	for i in "${pids[@]}"; do wait "$i" || return 1; done
	req GET /api/v1/namespaces/default/configmaps/load0
	code_has 200 '"n":"40"'
}
check "GETs beside writes on four connections: every GET answers, the last write shows" cache_load
stop_server
check "... and the server reports the reads the cache answered when it stops" \
	grep -Eq 'read cache: [1-9][0-9]* of [0-9]+ object reads answered' "$REAPED_LOG"
check "... and the GETs the response cache answered" \
	grep -Eq 'response cache: [1-9][0-9]* GETs answered with a kept response' "$REAPED_LOG"
expect_rc 2 "--read-cache-mb x is a usage error" "$LAPIS" serve --read-cache-mb x
nocache_server() { # its own log, which the checks below read
	serve_lapis nocache "$DATA" --insecure-http --read-cache-mb 0
	[[ -n $URL ]]
}
check "a server without the read cache (--read-cache-mb 0) starts" nocache_server
check "... and answers GETs after writes as well" cached_rounds
stop_server
check "... from the store alone: it logs no read cache" \
	bash -c "! grep -q 'read cache:' '$REAPED_LOG'"
check "... and no response cache" bash -c "! grep -q 'response cache:' '$REAPED_LOG'"
# The response cache keeps a path's answer in either slot of the pair its
# hash names (server/respcache.c): 200 objects, each read twice on a 1 MiB
# cache (2,048 slots), are all answered from it the second time. With one
# slot per path (512 slots, as before), 26 of these paths shared a slot
# with another and evicted it; in pairs, no three of them meet.
kept_pairs() {
	serve_lapis keptpairs "$WORK/keptpairs" --insecure-http --read-cache-mb 1
	[[ -n $URL ]] || return 1
	local i
	for i in $(seq 1 200); do
		req POST /api/v1/namespaces/default/configmaps "{\"metadata\":{\"name\":\"kp-$i\"},\"data\":{\"k\":\"v\"}}"
		code_is 201 || return 1
	done
	for _ in 1 2; do
		for i in $(seq 1 200); do
			printf 'user-agent = "lapis-e2e"\nurl = "%s/api/v1/namespaces/default/configmaps/kp-%s"\noutput = "/dev/null"\n' "$URL" "$i"
		done | curl -sf -K - || return 1
	done
	stop_server
	grep -q 'response cache: 200 GETs answered with a kept response' "$REAPED_LOG" ||
		{ grep 'response cache' "$REAPED_LOG"; return 1; }
}
check "response cache: 200 objects read twice, the second reads all answered from it" kept_pairs

# Without fsync a write commits on its HTTP thread unless another commit is
# under way; then it parks for the writer thread's next group, as a synced
# one does. Concurrent writes on such a store (a test server's) all land,
# in one order that a watch sees whole.
nosync_server() {
	local E2E_SYNC=
	serve_lapis nosync "$WORK/nosync" --insecure-http
	[[ -n $URL ]]
}
check "a server without fsync starts" nosync_server
nosync_race() {
	local i pids=() w
	curl -sS -N "$URL/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=30" \
		>"$WORK/nswatch" 2>/dev/null &
	w=$!
	# the watch is registered once a write made after it shows up
	req POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"race"}}'
	code_is 201 || return 1
	for i in $(seq 1 50); do
		grep -q '"name":"race"' "$WORK/nswatch" 2>/dev/null && break
		sleep 0.1
	done
	: >"$WORK/nsrace"
	for i in $(seq 1 40); do
		bg_write POST /api/v1/namespaces/default/configmaps \
			"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c$i\"}}" "$WORK/nsrace"
		bg_write PUT /api/v1/namespaces/default/configmaps/race \
			"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"race\"},\"data\":{\"i\":\"$i\"}}" "$WORK/nsrace"
	done
	wait "${pids[@]}"
	local got
	got=$(sort "$WORK/nsrace" | uniq -c | tr -s ' \n' ' ')
	[[ $got == " 40 200 40 201 " ]] || { echo "#   answers:$got"; return 1; }
	req GET /api/v1/namespaces/default/configmaps
	code_is 200 || return 1
	python3 - "$WORK/body" "$WORK/nswatch" "$w" <<'PY' || return 1
import json, os, signal, sys, time
items = json.load(open(sys.argv[1]))["items"]
names = sorted(o["metadata"]["name"] for o in items)
assert names == sorted(["race"] + ["c%d" % i for i in range(1, 41)]), names
last = max(int(o["metadata"]["resourceVersion"]) for o in items)
# every write reaches the watch, in increasing resourceVersion order
for _ in range(100):
    evs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
    if evs and int(evs[-1]["object"]["metadata"]["resourceVersion"]) >= last:
        break
    time.sleep(0.1)
os.kill(int(sys.argv[3]), signal.SIGTERM)
rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in evs]
assert rvs == sorted(rvs) and len(set(rvs)) == len(rvs), rvs
kinds = [(e["type"], e["object"]["metadata"]["name"]) for e in evs]
assert kinds.count(("MODIFIED", "race")) == 40, kinds
assert sum(1 for t, n in kinds if t == "ADDED" and n.startswith("c")) == 40, kinds
PY
}
check "80 racing writes on a server without fsync all land, and its watch sees them in order" nosync_race
# Response compression as kube's (server/gzip.h): an API answer over 128
# KiB is gzipped when Accept-Encoding names the token gzip (no q-values
# read); /openapi/v2 is gziphandler's (q-values, from 1,400 bytes, Vary:
# Accept-Encoding always); watches and /openapi/v3 never.
# gz_get AE PATH [CURL-ARG...]: headers in $WORK/hdr, the raw body in
# $WORK/gz
gz_get() {
	local ae=$1 p=$2
	shift 2
	CODE=$(curl -sS -D "$WORK/hdr" -o "$WORK/gz" -w '%{http_code}' -H "Accept-Encoding: $ae" "$@" "$URL$p")
}
hdr_has() { grep -qi -- "^$1\s*\$" <(tr -d '\r' <"$WORK/hdr") || { echo "#   headers lack $1:"; cat "$WORK/hdr"; return 1; }; }
hdr_lacks() { ! grep -qi -- "^$1" "$WORK/hdr" || { echo "#   headers have $1:"; cat "$WORK/hdr"; return 1; }; }
# the body inflated is the plain answer (in $WORK/plain) byte for byte
gz_is_plain() { python3 -c "
import gzip; z=open('$WORK/gz','rb').read(); p=open('$WORK/plain','rb').read()
assert z[:2]==b'\x1f\x8b', z[:20]
assert gzip.decompress(z)==p, (len(gzip.decompress(z)), len(p))
assert len(z) < len(p)//5, (len(z), len(p))"; }
gz_fill() {
	req POST /api/v1/namespaces '{"metadata":{"name":"gz"}}'
	code_is 201 || return 1
	local i
	for i in $(seq 1 100); do
		printf '{"metadata":{"name":"gz-%s"},"data":{"k":"%s"}}' "$i" "$(printf 'v%.0s' $(seq 1 1400))" >"$WORK/gzcm.json"
		CODE=$(curl -sS -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
			--data-binary @"$WORK/gzcm.json" "$URL/api/v1/namespaces/gz/configmaps")
		code_is 201 || return 1
	done
}
check "gzip: 100 ConfigMaps of 1.4 KB, a list of over 128 KiB" gz_fill
GZL=/api/v1/namespaces/gz/configmaps
gz_get "" $GZL -A lapis-e2e
cp "$WORK/gz" "$WORK/plain"
big_plain() { code_is 200 && (($(stat -c %s "$WORK/plain") > 131072)); }
check "... without Accept-Encoding, a plain list" big_plain
check "... not Content-Encoding" hdr_lacks Content-Encoding
gz_get gzip $GZL -A lapis-e2e
check "... with Accept-Encoding: gzip (Go's transport), gzipped" hdr_has "Content-Encoding: gzip"
check "... Vary: Accept-Encoding" hdr_has "Vary: Accept-Encoding"
check "... the same bytes inflated, at a fifth of the size or less" gz_is_plain
gz_get "br, deflate ,gzip" $GZL -A lapis-e2e
check "... gzip among other tokens, spaces trimmed (node-fetch, curl)" gz_is_plain
for ae in 'gzip;q=1' GZIP x-gzip '*'; do
	gz_get "$ae" $GZL -A lapis-e2e
	check "... '$ae' is not kube's token gzip: plain" hdr_lacks Content-Encoding
done
gz_get gzip "$GZL?limit=20" -A lapis-e2e
check "... a page under 128 KiB: plain" hdr_lacks Content-Encoding
gz_get gzip "$GZL/gz-1" -A lapis-e2e
check "... one small object: plain" hdr_lacks Content-Encoding
gz_get gzip $GZL -A lapis-e2e -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io'
check "... a Table of under 128 KiB: plain" hdr_lacks Content-Encoding
gz_get gzip $GZL -A lapis-e2e -H 'Accept: application/yaml'
check "... the list as YAML: gzipped" hdr_has "Content-Encoding: gzip"
python3 -c 'import json; print(json.dumps({"metadata": {"name": "gz-big"}, "data": {"x": "y" * 200000}}))' >"$WORK/gzbig.json"
gz_get "" $GZL -H 'Content-Type: application/json' --data-binary @"$WORK/gzbig.json" -A lapis-e2e
check "... a create of 200 KB answered plain without Accept-Encoding" code_is 201
cp "$WORK/gz" "$WORK/plain"
gz_get gzip "$GZL/gz-big" -A lapis-e2e
check "... its GET gzipped (never from the response cache)" hdr_has "Content-Encoding: gzip"
check "... the create's bytes inflated" gz_is_plain
gz_get gzip "$GZL/gz-big?dryRun=All" -X PUT -H 'Content-Type: application/json' --data-binary @"$WORK/plain" -A lapis-e2e
check "... a write's answer gzipped too (the write pool's)" hdr_has "Content-Encoding: gzip"
gz_get gzip "$GZL?watch=1&timeoutSeconds=1" -A lapis-e2e
check "... a watch never" hdr_lacks Content-Encoding
check "... its events whole" grep -q '"name":"gz-big"' "$WORK/gz"
gz_get "" /openapi/v2 -A lapis-e2e
cp "$WORK/gz" "$WORK/plain"
check "/openapi/v2 plain without Accept-Encoding, still Vary: Accept-Encoding (gziphandler)" hdr_has "Vary: Accept-Encoding"
gz_get "gzip;q=0.5" /openapi/v2 -A lapis-e2e
check "... gzipped for gzip;q=0.5 (gziphandler reads q-values)" gz_is_plain
check "... Vary: Accept-Encoding, then the handler's Accept" python3 -c "
h=[l.strip() for l in open('$WORK/hdr') if l.lower().startswith('vary:')]
assert h==['Vary: Accept-Encoding','Vary: Accept'], h"
gz_get "gzip;q=0" /openapi/v2 -A lapis-e2e
check "... plain for gzip;q=0" hdr_lacks Content-Encoding
gz_get gzip /openapi/v3/api/v1 -A lapis-e2e
check "/openapi/v3 documents are never gzipped" hdr_lacks Content-Encoding
req DELETE /api/v1/namespaces/gz
# a watch whose client stopped reading: libmicrohttpd waits for its socket
# and never calls the stream again, so it cannot end the ordinary way; a
# stopping server cuts it (it waited the whole 5 s of its shutdown loop).
# With direct delivery the push thread holds what the socket did not take;
# at the stop it ends the stream if the socket takes the rest, and cuts it
# if not. So twice: as served (either way, it stops cleanly), and with
# LAPIS_DIRECT_WATCH=0 (libmicrohttpd alone: the cut).
python3 -c 'import json; print(json.dumps({"metadata": {"generateName": "big-"}, "data": {"x": "y" * 400000}}))' >"$WORK/big.json"
big_writes() {
	local i
	for i in $(seq 20); do
		curl -sS -o /dev/null -w '%{http_code}\n' -X POST -H 'Content-Type: application/json' \
			--data-binary @"$WORK/big.json" "$URL/api/v1/namespaces/default/configmaps"
	done | sort | uniq -c | tr -s ' \n' ' '
}
stall_watch() {
	python3 - "${URL#http://}" >"$WORK/stall.out" 2>&1 <<'PY' &
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.sendall(b"GET /api/v1/namespaces/default/configmaps?watch=1 HTTP/1.1\r\nHost: x\r\n\r\n")
time.sleep(120)  # and never reads
PY
	STALL_PID=$!
}
stall_watch
check "20 writes of 400 KB for a watch that does not read" [ "$(big_writes)" == " 20 201 " ]
stop_server
kill "$STALL_PID" 2>/dev/null
wait "$STALL_PID" 2>/dev/null
check "... and it stops cleanly" exited_zero
# its own data directory and log: the watch starts as the first one did
nodirect_server() {
	LAPIS_DIRECT_WATCH=0 serve_lapis nodirect "$WORK/nodirect" --insecure-http
	[[ -n $URL ]]
}
check "a server without direct delivery (LAPIS_DIRECT_WATCH=0) starts" nodirect_server
check "... with no push thread" \
	bash -c "[ -d /proc/$SERVER_PID/task ] && ! grep -qx watch-push /proc/$SERVER_PID/task/*/comm"
stall_watch
check "... 20 writes of 400 KB for a watch that does not read" [ "$(big_writes)" == " 20 201 " ]
stop_server
kill "$STALL_PID" 2>/dev/null
wait "$STALL_PID" 2>/dev/null
check "... and it stops cleanly" exited_zero
check "... cutting the watch whose client did not read" \
	grep -q 'stopping: closed 1 watch connection whose client did not read' "$REAPED_LOG"

# Reads waiting for a revision not reached (server/revwait.c) when the
# server stops: each gets its answer (kube's 504, at once) before the
# daemon closes the connections; the stop resumed them, then closed every
# connection before they were answered (empty replies; found by a helper).
check "a server for reads parked at its stop starts" serve_lapis parked "$WORK/parked" --insecure-http
python3 - "$URL" >"$WORK/parked.out" 2>&1 <<'PY' &
import http.client, json, sys, threading
url = sys.argv[1]
host, port = url[len("http://"):].rsplit(":", 1)
paths = ["/api/v1/namespaces/default?resourceVersion=99999999",
         "/api/v1/namespaces/default/configmaps?resourceVersion=99999999",
         "/api/v1/namespaces?resourceVersion=99999999&resourceVersionMatch=NotOlderThan"] * 7
got = []
def read(path):
    try:
        k = http.client.HTTPConnection(host, int(port), timeout=30)
        k.request("GET", path)
        r = k.getresponse()
        got.append("%d %s" % (r.status, json.loads(r.read()).get("reason")))
    except Exception as e:
        got.append(type(e).__name__)
ts = [threading.Thread(target=read, args=(p,)) for p in paths]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(sorted(set(got)), len(got))
PY
PARKED_PID=$!
sleep 1 # the 21 reads are parked (3 s each)
stop_server
wait "$PARKED_PID"
check "... stops cleanly with 21 reads parked" exited_zero
check "... and each of them got kube's 504, none an empty reply" \
	grep -qx "\['504 Timeout'\] 21" "$WORK/parked.out"

e2e_finish
