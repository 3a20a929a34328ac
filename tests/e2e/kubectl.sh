#!/usr/bin/env bash
# kubectl.sh -- the real kubectl against the real binary over TLS with the
# kubeconfig lapis writes: the default kubectl, kubectl.1.27 and 1.28 (which
# fetch /openapi/v2 in protobuf before create -f and apply -f), kubectl.1.29
# and kubectl.1.33 (which sends protobuf bodies for built-in kinds).
#
# Where no kubectl >= 1.29 exists, the tests report themselves skipped in one
# loud line and pass (scripts/deps.sh says how to get kubectl).
set -uo pipefail
. "$(dirname "$0")/lib.bash"
e2e_init kubectl

# type -P: the kubectl on PATH, not lib.bash's kubectl function (this
# script tests the default kubectl itself).
kdir=$(dirname "$(readlink -f "$(type -P kubectl || echo /nonexistent)")")
KUBECTLS=()
for v in "" .1.27 .1.28 .1.29 .1.33; do
	if [[ -z $v ]] && type -P kubectl >/dev/null; then
		KUBECTLS+=("$(type -P kubectl)")
	elif [[ -n $v && -x $kdir/kubectl$v ]]; then
		KUBECTLS+=("$kdir/kubectl$v")
	fi
done
if ((${#KUBECTLS[@]} < 2)); then
	echo "SKIPPED: kubectl-driven tests need kubectl >= 1.29 (see scripts/deps.sh)"
	e2e_finish
	exit 0
fi

DATA=$WORK/data
serve_lapis serve "$DATA"
check "server starts over TLS" [ -n "$URL" ]
export KUBECONFIG=$DATA/kubeconfig
export HOME=$WORK/home # a fresh discovery cache per run
mkdir -p "$HOME"

CODE=$(curl -sS -o /dev/null -w '%{http_code}' --cacert <(python3 -c "import yaml,base64,sys; d=yaml.safe_load(open('$KUBECONFIG')); sys.stdout.write(base64.b64decode(d['clusters'][0]['cluster']['certificate-authority-data']).decode())") "$URL/api/v1/namespaces")
check "no token is 401 over TLS" [ "$CODE" == 401 ]
# kube's bearer token parsing: the header trimmed, the token the second
# word (found by an audit: lapis refused trailing spaces and extra words)
python3 -c "import yaml,base64,sys; d=yaml.safe_load(open('$KUBECONFIG')); sys.stdout.write(base64.b64decode(d['clusters'][0]['cluster']['certificate-authority-data']).decode())" >"$WORK/ca.pem"
TOKEN=$(cat "$DATA/admin.token")
auth_code() {
	curl -sS -o /dev/null -w '%{http_code}' --cacert "$WORK/ca.pem" -H "Authorization: $1" "$URL/api/v1/namespaces"
}
check "a bearer token with trailing spaces and in lower case is taken" [ "$(auth_code "bearer $TOKEN   ")" == 200 ]
check "... and one followed by another word" [ "$(auth_code "Bearer $TOKEN extra")" == 200 ]
check "... but not one after two spaces (an empty token)" [ "$(auth_code "Bearer  $TOKEN")" == 401 ]
# plain HTTP to the TLS port gets Go's answer on the bare socket (its
# tlsRecordHeaderLooksLikeHTTP) rather than a silent close, and the server
# goes on serving TLS
PLAIN=${URL/https:/http:}
check "plain HTTP to the TLS port is told so" bash -c "curl -sS -i '$PLAIN/api' | tr -d '\r' | grep -qx 'Client sent an HTTP request to an HTTPS server.'"
check "... a HEAD and an OPTIONS too" bash -c "curl -sS -I '$PLAIN/api' | grep -q 'HTTP/1.0 400' && curl -sS -i -X OPTIONS '$PLAIN/api' | grep -q 'HTTP/1.0 400'"
check "... and TLS still works" [ "$(auth_code "Bearer $TOKEN")" == 200 ]

for K in "${KUBECTLS[@]}"; do
	kv=$(basename "$K")
	ns=ns-${kv//./-}
	expect_rc 0 "$kv: create namespace" "$K" create namespace "$ns"
	expect_rc 0 "$kv: create configmap" "$K" -n "$ns" create configmap c1 --from-literal=a=1
	expect_rc 0 "$kv: create secret" "$K" -n "$ns" create secret generic s1 --from-literal=p=q
	expect_rc 0 "$kv: create serviceaccount" "$K" -n "$ns" create serviceaccount sa1
	# RBAC kinds (kubectl 1.33 sends them in protobuf)
	expect_rc 0 "$kv: create role" "$K" -n "$ns" create role r1 --verb=get,list --resource=configmaps --resource-name=c1
	expect_rc 0 "$kv: create rolebinding" "$K" -n "$ns" create rolebinding rb1 --role=r1 --user=alice --group=devs --serviceaccount="$ns":sa1
	expect_rc 0 "$kv: create clusterrole" "$K" create clusterrole "cr-$ns" --verb=get --non-resource-url=/healthz
	expect_rc 0 "$kv: create clusterrolebinding" "$K" create clusterrolebinding "crb-$ns" --clusterrole="cr-$ns" --serviceaccount="$ns":sa1
	expect_rc 0 "$kv: get rolebinding -o wide" "$K" -n "$ns" get rolebinding rb1 -o wide --no-headers
	check "$kv: ... shows its role and subjects" out_has "^rb1 +Role/r1 +[0-9]+s +alice +devs +$ns/sa1\$"
	expect_rc 0 "$kv: get role" "$K" -n "$ns" get role r1 -o jsonpath='{.rules[0].resourceNames[0]}/{.rules[0].verbs[1]}'
	check "$kv: ... has its rule" out_has '^c1/list$'
	expect_rc 0 "$kv: get configmap" "$K" -n "$ns" get configmap c1 -o json
	check "$kv: get shows the data" out_has '"a": "1"'
	cat >"$WORK/cm.yaml" <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: c2
  namespace: $ns
  labels:
    tier: web
data:
  x: "1"
YAML
	expect_rc 0 "$kv: apply -f creates" "$K" apply -f "$WORK/cm.yaml"
	sed -i 's/x: "1"/x: "2"/' "$WORK/cm.yaml"
	expect_rc 0 "$kv: apply -f updates" "$K" apply -f "$WORK/cm.yaml"
	expect_rc 0 "$kv: get after apply" "$K" -n "$ns" get cm c2 -o jsonpath='{.data.x}'
	check "$kv: apply changed the value" out_has '^2$'
	expect_rc 0 "$kv: patch merge" "$K" -n "$ns" patch cm c2 --type=merge -p '{"data":{"m":"1"}}'
	expect_rc 0 "$kv: patch json" "$K" -n "$ns" patch cm c2 --type=json -p '[{"op":"add","path":"/data/j","value":"1"}]'
	expect_rc 0 "$kv: patch strategic" "$K" -n "$ns" patch cm c2 -p '{"data":{"s":"1"}}'
	expect_rc 0 "$kv: label selector" "$K" -n "$ns" get cm -l tier=web -o name
	check "$kv: selector selects c2 only" bash -c "[[ \$(cat '$WORK/out') == configmap/c2 ]]"
	"$K" -n "$ns" get cm c2 -o yaml >"$WORK/c2.yaml"
	expect_rc 0 "$kv: replace" "$K" replace -f "$WORK/c2.yaml"
	expect_rc 0 "$kv: create lease" "$K" -n "$ns" create -f - <<<"{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":\"l1\"},\"spec\":{\"holderIdentity\":\"me\",\"leaseDurationSeconds\":15,\"renewTime\":\"2026-01-02T03:04:05.123456Z\"}}"
	expect_rc 0 "$kv: get lease keeps microseconds" "$K" -n "$ns" get lease l1 -o jsonpath='{.spec.renewTime}'
	check "$kv: lease renewTime to the microsecond" out_has '2026-01-02T03:04:05.123456Z'
	for i in $(seq 1 20); do "$K" -n "$ns" create configmap "p$i" >/dev/null 2>&1; done
	"$K" -n "$ns" get cm -o name >"$WORK/plain"
	"$K" -n "$ns" get cm -o name --chunk-size=3 >"$WORK/chunked"
	check "$kv: --chunk-size=3 equals the plain list" cmp -s "$WORK/plain" "$WORK/chunked"
	expect_rc 0 "$kv: delete configmap" "$K" -n "$ns" delete cm c1
	expect_rc 1 "$kv: get deleted is an error" "$K" -n "$ns" get cm c1
	expect_rc 1 "$kv: a missing namespace is an error" "$K" -n nosuch-ns get cm c1
	expect_rc 0 "$kv: api-resources" "$K" api-resources
	check "$kv: api-resources lists leases" out_has 'leases'
	check "$kv: api-resources lists configmaps" out_has 'configmaps'

	# Valid objects of every built-in kind pass kubectl's default
	# validation (--validate=strict: the server's fieldValidation=Strict
	# after kubectl read the OpenAPI v3 document).
	cat >"$WORK/all.yaml" <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: $ns-all, labels: {a: b}}
spec: {finalizers: [kubernetes]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: all-cm, namespace: $ns, annotations: {note: hello}}
data: {k: v}
binaryData: {b: AAEC}
immutable: false
---
apiVersion: v1
kind: Secret
metadata: {name: all-s, namespace: $ns}
type: Opaque
stringData: {p: q}
data: {d: AAEC}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: all-sa, namespace: $ns}
secrets: [{name: x}]
# not {name: y}: kubectl reads YAML 1.1, where y is true, which kube refuses
imagePullSecrets: [{name: pull}]
automountServiceAccountToken: false
---
apiVersion: v1
kind: Service
metadata: {name: all-svc, namespace: $ns}
spec:
  selector: {app: x}
  ports: [{name: http, port: 80, targetPort: http, protocol: TCP}, {name: m, port: 81, targetPort: 9000}]
  sessionAffinity: ClientIP
  sessionAffinityConfig: {clientIP: {timeoutSeconds: 60}}
---
apiVersion: v1
kind: Endpoints
metadata: {name: all-svc, namespace: $ns}
subsets:
- addresses: [{ip: 10.0.0.1, targetRef: {kind: Pod, name: p, namespace: $ns}}]
  ports: [{name: http, port: 8080, protocol: TCP}]
---
apiVersion: v1
kind: Event
metadata: {name: all-ev, namespace: $ns}
involvedObject: {kind: ConfigMap, name: all-cm, namespace: $ns}
reason: Test
message: hello
type: Normal
count: 1
source: {component: e2e}
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: all-l, namespace: $ns}
spec: {holderIdentity: me, leaseDurationSeconds: 15, leaseTransitions: 0, acquireTime: "2026-01-02T03:04:05.000001Z"}
YAML
	expect_rc 0 "$kv: create -f of every built-in kind with default validation" "$K" create -f "$WORK/all.yaml"
	check "$kv: ... without a warning but kube 1.33's v1 Endpoints deprecation" bash -c "! grep Warning '$WORK/err' | grep -v 'Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice' | grep -q ."
	check "$kv: ... which is there" grep -q 'Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice' "$WORK/err"
	expect_rc 0 "$kv: apply -f of every built-in kind" "$K" apply -f "$WORK/all.yaml"
	check "$kv: ... without an unknown-field warning" bash -c "! grep -q 'unknown field' '$WORK/err'"

	# Unknown fields: kubectl's default (Strict) names them, warn drops
	# them with a Warning, false (Ignore) drops them silently.
	for kind in cm svc lease; do
		case $kind in
		cm) obj='{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u-NAME"},"data":{"a":"b"},"spec":{"bogus":1}}'
		    path=spec ;;
		svc) obj='{"apiVersion":"v1","kind":"Service","metadata":{"name":"u-NAME"},"spec":{"ports":[{"port":80,"bogus":1}]}}'
		     path='spec.ports[0].bogus' ;;
		lease) obj='{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"u-NAME"},"spec":{"holderIdentity":"me","bogus":1}}'
		       path=spec.bogus ;;
		esac
		expect_rc 1 "$kv: $kind with an unknown field is refused by default" "$K" -n "$ns" create -f - <<<"${obj/NAME/strict}"
		check "$kv: ... naming the field" err_has "strict decoding error: unknown field \"${path//[/\\[}\""
		expect_rc 0 "$kv: $kind with --validate=warn is created" "$K" -n "$ns" create --validate=warn -f - <<<"${obj/NAME/warn}"
		check "$kv: ... with a warning naming the field" err_has "Warning: unknown field \"${path//[/\\[}\""
		expect_rc 0 "$kv: ... and without it" "$K" -n "$ns" get "$kind" u-warn -o json
		check "$kv: ... (no bogus in the object)" bash -c "! grep -q bogus '$WORK/out'"
		expect_rc 0 "$kv: $kind with --validate=false is created" "$K" -n "$ns" create --validate=false -f - <<<"${obj/NAME/ignore}"
		check "$kv: ... silently" bash -c "! grep -q 'Warning' '$WORK/err'"
		expect_rc 0 "$kv: ... without the field" "$K" -n "$ns" get "$kind" u-ignore -o json
		check "$kv: ... (no bogus in the object)" bash -c "! grep -q bogus '$WORK/out'"
	done

	# kubectl explain reads the built-in schemas from OpenAPI v3
	expect_rc 0 "$kv: explain configmap.data" "$K" explain configmap.data
	check "$kv: ... is a map of strings" out_has 'data.*<map\[string\]string>'
	expect_rc 0 "$kv: explain service.spec.ports" "$K" explain service.spec.ports
	check "$kv: ... lists port as required" out_has 'port.*<integer> -required-'
	check "$kv: ... and targetPort, named by its type as kube's v3 allOf and oneOf make kubectl print it" out_has 'targetPort.*<IntOrString>'
	expect_rc 0 "$kv: explain service.spec.ports.targetPort" "$K" explain service.spec.ports.targetPort
	check "$kv: ... is an IntOrString" out_has 'FIELD: *targetPort <IntOrString>'
	expect_rc 0 "$kv: explain lease.spec" "$K" explain lease.spec
	check "$kv: ... lists renewTime" out_has 'renewTime'
	expect_rc 0 "$kv: explain secret" "$K" explain secret
	check "$kv: ... lists stringData" out_has 'stringData'
	expect_rc 0 "$kv: explain namespace.metadata.labels" "$K" explain namespace.metadata.labels
	expect_rc 0 "$kv: explain configmap.metadata.managedFields" "$K" explain configmap.metadata.managedFields
	check "$kv: ... names fieldsV1 by its type, as kube's named meta/v1 FieldsV1 makes kubectl print it" out_has 'fieldsV1.*<FieldsV1>'
	# kube's +enum fields carry their values in OpenAPI (found by a
	# helper); kubectl prints them from 1.30 on
	[[ $kv == kubectl ]] || (( ${kv##*.} >= 30 )) || continue
	expect_rc 0 "$kv: explain service.spec.type" "$K" explain service.spec.type
	check "$kv: ... prints the ENUM values, as from kube's OpenAPI" bash -c "grep -q '^ENUM:' '$WORK/out' && grep -q '^ *ExternalName\$' '$WORK/out'"
	expect_rc 0 "$kv: explain service.spec" "$K" explain service.spec
	check "$kv: ... lists them under sessionAffinity" out_has 'enum: ClientIP, None'
	expect_rc 0 "$kv: explain namespace.status.phase" "$K" explain namespace.status.phase
	check "$kv: ... and a namespace's phases" bash -c "grep -q '^ *Terminating\$' '$WORK/out'"
done

K=${KUBECTLS[0]}
# Services: defaults and cluster IPs from --service-cluster-ip-range
expect_rc 0 "create service allocates a cluster IP" "$K" create service clusterip web --tcp=80:8080
expect_rc 0 "get service" "$K" get svc web -o jsonpath='{.spec.clusterIP} {.spec.ports[0].protocol} {.spec.ports[0].targetPort} {.spec.sessionAffinity}'
check "service gets an IP in 10.96.0.0/12 and kube's defaults" out_has '^10\.(9[6-9]|10[0-9]|11[01])\.[0-9]+\.[0-9]+ TCP 8080 None$'
expect_rc 0 "a requested cluster IP is reserved" "$K" create service clusterip web2 --tcp=80 --clusterip=10.96.0.50
expect_rc 1 "the same cluster IP twice is refused" "$K" create service clusterip web3 --tcp=80 --clusterip=10.96.0.50
check "... as already allocated" err_has 'already allocated'
expect_rc 0 "deleting a service" "$K" delete svc web2
expect_rc 0 "frees its cluster IP" "$K" create service clusterip web3 --tcp=80 --clusterip=10.96.0.50
expect_rc 1 "an IP outside the range is refused" "$K" create service clusterip web4 --tcp=80 --clusterip=1.2.3.4
expect_rc 0 "get shows server-side columns" "$K" get svc web
check "with CLUSTER-IP and PORT(S)" out_has 'CLUSTER-IP.*PORT\(S\)'
# node ports: allocated from 30000-32767 for NodePort and LoadBalancer
# Services, reserved like cluster IPs, kept across updates, released on
# delete and on a change to ClusterIP
expect_rc 0 "create service nodeport allocates node ports" "$K" create service nodeport np1 --tcp=80:8080 --tcp=443:8443
expect_rc 0 "get its node ports" "$K" get svc np1 -o 'jsonpath={.spec.ports[*].nodePort} {.spec.externalTrafficPolicy}'
check "... two, in the range, with externalTrafficPolicy Cluster" out_has '^3[0-2][0-9]{3} 3[0-2][0-9]{3} Cluster$'
NP1=$(cut -d' ' -f1 "$WORK/out")
expect_rc 0 "get svc prints PORT(S) with them" "$K" get svc np1
check "... as port:nodePort/TCP" out_has "80:$NP1/TCP,443:[0-9]+/TCP"
expect_rc 0 "a requested node port" "$K" create service nodeport np2 --tcp=80 --node-port=30080
expect_rc 1 "the same node port twice is refused" "$K" create service nodeport np3 --tcp=80 --node-port=30080
check "... as kube's 422" err_has 'spec.ports\[0\].nodePort: Invalid value: 30080: provided port is already allocated'
expect_rc 1 "a node port outside the range is refused" "$K" create service nodeport np3 --tcp=80 --node-port=8080
check "... naming the range" err_has 'provided port is not in the valid range. The range of valid ports is 30000-32767'
expect_rc 0 "a label (an update without node ports in the patch)" "$K" label svc np1 tier=web
expect_rc 0 "... keeps them" "$K" get svc np1 -o 'jsonpath={.spec.ports[0].nodePort}'
check "... unchanged" out_has "^$NP1\$"
expect_rc 0 "a change to ClusterIP" "$K" patch svc np2 -p '{"spec":{"type":"ClusterIP"}}'
expect_rc 0 "... drops the node port" "$K" get svc np2 -o 'jsonpath={.spec.ports[0].nodePort}/{.spec.externalTrafficPolicy}'
check "... and externalTrafficPolicy" out_has '^/$'
expect_rc 0 "... and releases it" "$K" create service nodeport np3 --tcp=80 --node-port=30080
expect_rc 0 "deleting a NodePort service" "$K" delete svc np3
expect_rc 0 "... releases its node port" "$K" create service nodeport np4 --tcp=80 --node-port=30080
expect_rc 0 "apply Endpoints with many addresses" "$K" apply -f - <<'YAML'
apiVersion: v1
kind: Endpoints
metadata: {name: many, namespace: default}
subsets:
- addresses: [{ip: 10.0.0.1}, {ip: 10.0.0.2}, {ip: 10.0.0.3}, {ip: "fd00::4"}]
  ports: [{name: a, port: 80}, {name: b, port: 81}]
YAML
expect_rc 0 "get endpoints" "$K" get ep many --no-headers
check "... lists three, then how many more, as kube" out_has '^many +10\.0\.0\.1:80,10\.0\.0\.2:80,10\.0\.0\.3:80 \+ 5 more\.\.\. '
# kubectl apply from NodePort to ClusterIP: the three-way patch drops the
# node port the file had and keeps the allocated one, which kube then drops
cat >"$WORK/svc.yaml" <<'YAML'
apiVersion: v1
kind: Service
metadata: {name: applied, namespace: default}
spec:
  type: NodePort
  selector: {app: x}
  ports:
  - {name: http, port: 80, targetPort: 8080}
  - {name: https, port: 443, targetPort: 8443, nodePort: 30443}
YAML
expect_rc 0 "apply a NodePort Service" "$K" apply -f "$WORK/svc.yaml"
sed -i 's/type: NodePort/type: ClusterIP/; s/, nodePort: 30443//' "$WORK/svc.yaml"
expect_rc 0 "apply it again as ClusterIP" "$K" apply -f "$WORK/svc.yaml"
expect_rc 0 "... its node ports are gone" "$K" get svc applied -o 'jsonpath={.spec.type}:{.spec.ports[*].nodePort}'
check "... both" out_has '^ClusterIP:$'
expect_rc 0 "create service loadbalancer" "$K" create service loadbalancer lb1 --tcp=80
expect_rc 0 "... allocates node ports too" "$K" get svc lb1 -o 'jsonpath={.spec.ports[0].nodePort} {.spec.allocateLoadBalancerNodePorts}'
check "... and defaults allocateLoadBalancerNodePorts" out_has '^3[0-2][0-9]{3} true$'
expect_rc 0 "get svc of a LoadBalancer without an address" "$K" get svc lb1 --no-headers
check "... shows EXTERNAL-IP <pending>, as kube" out_has '^lb1 +LoadBalancer +10\.[0-9.]+ +<pending> +80:3[0-9]+/TCP'
expect_rc 0 "an address in its status" "$K" patch svc lb1 --subresource=status --type=merge -p '{"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.10"}]}}}'
expect_rc 0 "... shows in EXTERNAL-IP" "$K" get svc lb1 --no-headers
check "... that address" out_has '^lb1 +LoadBalancer +10\.[0-9.]+ +203\.0\.113\.10 +'
# the server's tables are wide (kube's TableConvertor): no address is cut;
# ingress ip (else hostname) sorted and without repeats, then externalIPs
expect_rc 0 "several ingress addresses and an external IP" "$K" patch svc lb1 --subresource=status --type=merge -p '{"status":{"loadBalancer":{"ingress":[{"hostname":"lb.example.com"},{"ip":"203.0.113.10"},{"ip":"198.51.100.7"},{"ip":"203.0.113.10"}]}}}'
expect_rc 0 "..." "$K" patch svc lb1 -p '{"spec":{"externalIPs":["192.0.2.5"]}}'
expect_rc 0 "... get svc" "$K" get svc lb1 --no-headers
check "... lists them all as kube's loadBalancerStatusStringer does" out_has '^lb1 +LoadBalancer +10\.[0-9.]+ +198\.51\.100\.7,203\.0\.113\.10,lb\.example\.com,192\.0\.2\.5 +'
expect_rc 0 "create service externalname" "$K" create service externalname ext1 --external-name=example.com
expect_rc 0 "... get shows its name as EXTERNAL-IP" "$K" get svc ext1 --no-headers
check "... and no cluster IP" out_has '^ext1 +ExternalName +<none> +example\.com +<none>'
expect_rc 0 "externalTrafficPolicy Local" "$K" patch svc lb1 -p '{"spec":{"externalTrafficPolicy":"Local"}}'
expect_rc 0 "... allocates a health check node port" "$K" get svc lb1 -o 'jsonpath={.spec.healthCheckNodePort}'
check "... in the range" out_has '^3[0-2][0-9]{3}$'

"$K" -n default get cm -w --request-timeout=3s >"$WORK/watch" 2>&1 &
WPID=$!
"$K" -n default create configmap watched >/dev/null 2>&1
wait "$WPID"
check "get -w sees a new object" grep -q watched "$WORK/watch"

# events.k8s.io/v1 (controller-runtime's recorder writes there since
# v0.23): kubectl creates one (1.33: a protobuf body), and core/v1 readers
# see it.
for K in "${KUBECTLS[@]}"; do
	kv=$(basename "$K")
	en=ev-${kv//./-}
	expect_rc 0 "$kv: create an events.k8s.io/v1 Event" "$K" -n default create -f - <<<"{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"$en\"},\"eventTime\":\"2026-11-30T08:00:00.000000Z\",\"reportingController\":\"example.com/ctl\",\"reportingInstance\":\"ctl-1\",\"action\":\"Reconcile\",\"reason\":\"Synced\",\"regarding\":{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"watched\",\"namespace\":\"default\"},\"note\":\"from $kv\",\"type\":\"Normal\"}"
	expect_rc 0 "$kv: get it as a core/v1 Event" "$K" -n default get events "$en" -o 'jsonpath={.message}/{.reportingComponent}/{.involvedObject.name}'
	check "... with core's names" out_has "^from $kv/example.com/ctl/watched\$"
done
# kubectl auth: the self reviews (1.33 sends them as protobuf)
for K in "${KUBECTLS[@]}"; do
	kv=$(basename "$K")
	expect_rc 0 "$kv: auth can-i create configmaps" "$K" auth can-i create configmaps
	check "... yes" out_has '^yes$'
	if [[ $kv == kubectl.1.27 ]]; then
		# 1.27 asks for SelfSubjectReview v1beta1 and v1alpha1 only,
		# which kube 1.33 does not serve (beta APIs are off by default)
		expect_rc 1 "$kv: auth whoami" "$K" auth whoami
		check "... finds no SelfSubjectReview it knows, as against kube 1.33" err_has 'the selfsubjectreviews API is not enabled in the cluster'
		continue
	fi
	expect_rc 0 "$kv: auth whoami" "$K" auth whoami
	check "... the admin" out_has '^Username +lapis-admin$'
	check "... in system:masters" out_has '^Groups +\[system:masters system:authenticated\]$'
done
expect_rc 0 "a TokenReview of the admin token" kubectl create -o 'jsonpath={.status.authenticated}/{.status.user.username}' -f - <<<"{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenReview\",\"spec\":{\"token\":\"$(cat "$DATA/admin.token")\"}}"
check "... authenticates lapis-admin" out_has '^true/lapis-admin$'
expect_rc 0 "a TokenReview of another token" kubectl create -o 'jsonpath={.status}' -f - <<<'{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"not-the-token"}}'
check "... authenticates no one" out_has '^\{"user":\{\}\}$'
# kubectl create token (1.33: a protobuf TokenRequest) and a TokenReview
# of what it printed
expect_rc 0 "create serviceaccount for tokens" kubectl -n default create serviceaccount tokens
for K in "${KUBECTLS[@]}"; do
	kv=$(basename "$K")
	expect_rc 0 "$kv: create token" "$K" -n default create token tokens --duration=20m --audience=api --audience=vault
	check "... prints a JWT" out_has '^eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{86}$'
	expect_rc 0 "$kv: a TokenReview of it" "$K" create -o 'jsonpath={.status.authenticated}/{.status.user.username}/{.status.audiences}' -f - <<<"{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenReview\",\"spec\":{\"token\":\"$(cat "$WORK/out")\",\"audiences\":[\"vault\"]}}"
	check "... authenticates the service account for its audience" out_has '^true/system:serviceaccount:default:tokens/\["vault"\]$'
done
expect_rc 0 "create secret for a bound token" kubectl -n default create secret generic token-bound
expect_rc 0 "create token bound to it" kubectl -n default create token tokens --bound-object-kind=Secret --bound-object-name=token-bound
expect_rc 1 "create token with a lifetime under 10 minutes" kubectl -n default create token tokens --duration=5m
check "... is kube's error" err_has 'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes'
expect_rc 1 "create token for a missing account" kubectl -n default create token nobody
check "... says it is not found" err_has 'serviceaccounts "nobody" not found'
expect_rc 1 "create token in a missing namespace" kubectl -n no-such-ns create token nobody
check "... is admission's 404 for the namespace, before any account is looked for" err_has 'namespaces "no-such-ns" not found'
expect_rc 0 "kubectl auth can-i --list" kubectl auth can-i --list
check "... every verb on every resource" out_has '^\*\.\* +\[\] +\[\] +\[\*\]$'
expect_rc 0 "kubectl get events.events.k8s.io prints kube's event columns" kubectl -n default get events.events.k8s.io
check "... with the events' rows" out_has 'Normal +Synced +configmap/watched +from kubectl'
cat >"$WORK/padded.json" <<'JSON'
{"apiVersion":"v1","kind":"Event","metadata":{"name":"padded"},"involvedObject":{"kind":"ConfigMap","name":"x","namespace":"default"},"reason":"WS","message":" \t padded message\n\u00a0","type":"Normal"}
JSON
expect_rc 0 "an event whose message has white space around it" kubectl -n default create -f "$WORK/padded.json"
expect_rc 0 "... get events" kubectl -n default get events --field-selector metadata.name=padded --no-headers
check "... prints it trimmed, as printEvent's strings.TrimSpace" out_has 'configmap/x +padded message$'
expect_rc 0 "kubectl get events -o wide" kubectl -n default get events -o wide
check "... adds kube's wide columns" out_has '^LAST SEEN +TYPE +REASON +OBJECT +SUBOBJECT +SOURCE +MESSAGE +FIRST SEEN +COUNT +NAME'
check "... the source (reporting controller, instance), count 1 of a singleton and name" out_has 'configmap/watched +example.com/ctl, ctl-1 +from kubectl[^ ]* +[0-9a-z]+ +1 +'
expect_rc 0 "kubectl events lists them for the object" kubectl -n default events --for configmap/watched
check "... by reason and note" out_has 'Synced.*from kubectl'

# a list over 128 KiB goes gzipped to Go's transport, which asks for gzip
# on its own and inflates what it gets (api.sh checks the encoding)
expect_rc 0 "create namespace gzk" kubectl create namespace gzk
python3 -c '
import json
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "gz-%d" % i},
     "data": {"k": "v" * 1400}} for i in range(100)]}))' >"$WORK/gzlist.json"
expect_rc 0 "kubectl create 100 ConfigMaps of 1.4 KB" kubectl -n gzk create -f "$WORK/gzlist.json"
for K in "${KUBECTLS[@]}"; do
	kv=$(basename "$K")
	expect_rc 0 "$kv: get -o json of their list (gzipped)" "$K" -n gzk get configmaps -o json
	check "... all 100, whole" python3 -c "
import json; d=json.load(open('$WORK/out'))
assert len(d['items'])==100 and all(len(i['data']['k'])==1400 for i in d['items']), len(d['items'])"
done

# PodSecurity's namespace label check (kube runs the admission plugin by
# default): a level or version label it cannot read is 422 on create, and
# on an update that changes which labels are invalid.
expect_rc 0 "a namespace for PodSecurity labels" kubectl create namespace psa
expect_rc 1 "an unknown PodSecurity level is refused" kubectl label ns psa pod-security.kubernetes.io/enforce=bogus
check "... in the admission plugin's words" err_has 'The Namespace "psa" is invalid: metadata.labels\[pod-security.kubernetes.io/enforce\]: Invalid value: "bogus": must be one of privileged, baseline, restricted'
expect_rc 0 "valid levels and versions are taken" kubectl label ns psa pod-security.kubernetes.io/enforce=restricted pod-security.kubernetes.io/enforce-version=v1.33 pod-security.kubernetes.io/warn-version=latest
cat >"$WORK/psa.json" <<'JSON'
{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"psa2","labels":{"pod-security.kubernetes.io/warn":"strict","pod-security.kubernetes.io/enforce-version":"1.33","pod-security.kubernetes.io/audit-version":"v1.01"}}}
JSON
expect_rc 1 "a namespace created with bad PodSecurity labels is refused" kubectl create -f "$WORK/psa.json"
check "... each in the plugin's order" python3 -c "
import re; t=open('$WORK/err').read()
got=re.findall(r'labels\[pod-security.kubernetes.io/([a-z-]+)\]: Invalid value: \"([^\"]*)\": (.*)', t)
assert got==[('enforce-version','1.33','must be \"latest\" or \"v1.x\"'),('audit-version','v1.01','must be \"latest\" or \"v1.x\"'),('warn','strict','must be one of privileged, baseline, restricted')], got"

# rbac.authorization.k8s.io/v1 served as storage (nothing enforced): an
# operator's bundle of RBAC objects applies, re-applies unchanged, applies
# server-side and reconciles; kube's defaults and validation.
cat >"$WORK/rbac.yaml" <<'YAML'
apiVersion: v1
kind: ServiceAccount
metadata: {name: op, namespace: default}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: op-manager
  labels: {app: op}
rules:
- apiGroups: [""]
  resources: [configmaps, secrets]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: op-manager}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: op-manager}
subjects:
- {kind: ServiceAccount, name: op, namespace: default}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: op-leader, namespace: default}
rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: op-leader, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: op-leader}
subjects:
- {kind: ServiceAccount, name: op, namespace: default}
YAML
expect_rc 0 "an operator's RBAC bundle applies" kubectl apply -f "$WORK/rbac.yaml"
expect_rc 0 "... re-applies" kubectl apply -f "$WORK/rbac.yaml"
check "... unchanged" bash -c "[[ \$(grep -c unchanged '$WORK/out') == 5 ]]"
expect_rc 0 "... applies server-side" kubectl apply --server-side -f "$WORK/rbac.yaml"
expect_rc 0 "... and reconciles" kubectl auth reconcile -f "$WORK/rbac.yaml"
expect_rc 0 "api-resources lists the RBAC kinds" kubectl api-resources --api-group=rbac.authorization.k8s.io -o name
check "... all four" bash -c "[[ \$(sort '$WORK/out' | tr '\n' ' ') == 'clusterrolebindings.rbac.authorization.k8s.io clusterroles.rbac.authorization.k8s.io rolebindings.rbac.authorization.k8s.io roles.rbac.authorization.k8s.io ' ]]"
expect_rc 0 "/apis lists rbac between authorization and admissionregistration" kubectl get --raw /apis
check "... at kube's priority" python3 -c "
import json; g=[x['name'] for x in json.load(open('$WORK/out'))['groups']]
assert g.index('authorization.k8s.io') + 1 == g.index('rbac.authorization.k8s.io') == g.index('admissionregistration.k8s.io') - 1, g"
expect_rc 0 "get clusterroles shows NAME and CREATED AT" kubectl get clusterrole op-manager
check "... as kube's default table" out_has '^NAME +CREATED AT$'
expect_rc 0 "a subject's apiGroup is defaulted by its kind" kubectl create clusterrolebinding dflt --clusterrole=x --user=u --group=g --serviceaccount=default:s -o jsonpath='{range .subjects[*]}{.kind}={.apiGroup};{end}'
check "... rbac's for users and groups, none for service accounts" out_has '^User=rbac.authorization.k8s.io;Group=rbac.authorization.k8s.io;ServiceAccount=;$'
expect_rc 0 "an aggregated cluster role has null rules" kubectl create clusterrole "system:agg:x" --aggregation-rule=rbac.example.com/agg=true -o json
check "... and its name may hold colons" python3 -c "
import json; d=json.load(open('$WORK/out')); assert d['rules'] is None and d['metadata']['name'] == 'system:agg:x', d"
cat >"$WORK/rbac-bad.yaml" <<'YAML'
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: bad1, namespace: default}
rules:
- apiGroups: [""]
- verbs: [get]
  nonResourceURLs: [/x]
  resources: [pods]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: bad2}
roleRef: {kind: Role, name: "a/b", apiGroup: x}
subjects:
- {kind: ServiceAccount, name: Bad_Name}
- {kind: User, name: "", apiGroup: foo}
- {kind: Robot, name: r}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: bad3}
aggregationRule: {}
YAML
err_all() {
	local t
	for t in "$@"; do
		grep -Eq -- "$t" "$WORK/err" || { echo "#   stderr lacks $t"; return 1; }
	done
}
expect_rc 1 "invalid RBAC objects are refused" kubectl apply -f "$WORK/rbac-bad.yaml"
check "... a rule without verbs or resources, non-resource URLs in a Role and beside resources" err_all \
	'rules\[0\]\.verbs: Required value: verbs must contain at least one value' \
	'rules\[0\]\.resources: Required value: resource rules must supply at least one resource' \
	'rules\[1\]\.nonResourceURLs: Invalid value: \[\]string\{"/x"\}: namespaced rules cannot apply to non-resource URLs' \
	'rules\[1\]\.nonResourceURLs: Invalid value: \[\]string\{"/x"\}: rules cannot apply to both regular resources and non-resource URLs'
check "... a binding's roleRef and subjects" err_all \
	'roleRef\.apiGroup: Unsupported value: "x": supported values: "rbac\.authorization\.k8s\.io"' \
	'roleRef\.kind: Unsupported value: "Role": supported values: "ClusterRole"' \
	"roleRef\\.name: Invalid value: \"a/b\": may not contain '/'" \
	'subjects\[0\]\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain' \
	'subjects\[0\]\.namespace: Required value' 'subjects\[1\]\.name: Required value' \
	'subjects\[1\]\.apiGroup: Unsupported value: "foo"' \
	'subjects\[2\]\.kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"'
check "... an aggregationRule without selectors" err_has 'aggregationRule\.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil'
expect_rc 1 "a binding's roleRef cannot change" kubectl patch rolebinding op-leader --type=merge -p '{"roleRef":{"name":"other"}}'
check "... in kube's words" err_has 'roleRef: Invalid value: rbac\.RoleRef\{APIGroup:"rbac\.authorization\.k8s\.io", Kind:"Role", Name:"other"\}: cannot change roleRef'
expect_rc 0 "... while its subjects can" kubectl patch rolebinding op-leader --type=merge -p '{"subjects":[{"kind":"Group","name":"g2"}]}'
expect_rc 0 "the bundle deletes" kubectl delete -f "$WORK/rbac.yaml"
CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' --cacert "$WORK/ca.pem" -H "Authorization: Bearer $TOKEN" -X PUT \
	-H 'Content-Type: application/json' --data-binary '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"put-made","namespace":"default"},"rules":[]}' \
	"$URL/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/put-made")
check "a PUT of a missing role creates it (RBAC's AllowCreateOnUpdate), its empty rules kept" \
	bash -c "[[ $CODE == 201 ]] && grep -q '\"rules\":\[\]' '$WORK/body'"

kill -TERM "$SERVER_PID"
reap "$SERVER_PID"
check "server exits 0 on SIGTERM" exited_zero
e2e_finish
