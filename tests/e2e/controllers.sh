#!/usr/bin/env bash
# controllers.sh -- the namespace controller and the garbage collector
# (issue 4) with the real kubectl over TLS: deleting a namespace removes its
# content (built-in and custom) and then the namespace, waiting for
# finalizers with kube's conditions; background, foreground and orphan
# deletion of an owner with dependents; owners known by UID; --controllers.
#
# Nothing sleeps: `kubectl wait --for=delete` (a watch) waits for what must
# go, with $TIMEOUT only as a safety net. Where something must stay, the
# check runs after a later step that the controller could only reach by
# passing the point where it would have removed it.
set -uo pipefail
. "$(dirname "$0")/lib.bash"
e2e_init controllers
# synced: writes run on the write pool's fibers (server/writes.c), the
# path every synced server takes; kubectl.sh, crd.sh and apply.sh keep
# the nosync path of --nosync and --ephemeral (a write leads its own
# group when no commit is under way)
E2E_SYNC=1

if ! command -v kubectl >/dev/null 2>&1; then
	echo "SKIPPED: the controller tests need kubectl (see scripts/deps.sh)"
	e2e_finish
	exit 0
fi
K=(kubectl --request-timeout="${TIMEOUT}s")
W="--timeout=${TIMEOUT}s"

# start_server NAME ARGS...: starts lapis over TLS, sets URL, SERVER_PID
# and KUBECONFIG.
start_server() {
	local name=$1
	shift
	local data=$WORK/$name
	serve_lapis "$name" "$data" "$@"
	export KUBECONFIG=$data/kubeconfig
	export HOME=$WORK/home-$name
	mkdir -p "$HOME"
}

stop_server() {
	kill -TERM "$SERVER_PID"
	reap "$SERVER_PID"
	check "$1: server stops cleanly" exited_zero
}

# cm NAME [OWNER-NAME OWNER-UID BLOCK [NS [OWNER-API OWNER-KIND]]]
cm() {
	local name=$1 ns=${5:-default}
	if (($# == 1)); then
		"${K[@]}" -n "$ns" create configmap "$name" >/dev/null
		return
	fi
	"${K[@]}" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: $name
  namespace: $ns
  ownerReferences:
  - apiVersion: ${6:-v1}
    kind: ${7:-ConfigMap}
    name: $2
    uid: $3
    blockOwnerDeletion: $4
YAML
}

uid_of() { "${K[@]}" get "$@" -o 'jsonpath={.metadata.uid}'; }

# naming_crd PLURAL KIND: a CRD of group naming.lapis.dev.
naming_crd() {
	schemaless_crd "$1" naming.lapis.dev "$2" | "${K[@]}" create -f -
}
names_accepted() {
	"${K[@]}" get crd "$1.naming.lapis.dev" -o \
		'jsonpath={.status.conditions[?(@.type=="NamesAccepted")].status}/{.status.conditions[?(@.type=="Established")].status}'
}

# the CRD finalizer's minute of waiting for held instances, shortened
LAPIS_CRD_CLEANUP_WAIT_MS=15000 start_server main
check "server starts over TLS" [ -n "$URL" ]
check "every controller runs by default" \
	grep -q 'controllers: namespace, gc, crd-finalizer, crd-naming, event-ttl$' "$WORK/main.log"

# ---------------------------------------------------------------- CRD
expect_rc 0 "create a CRD" "${K[@]}" apply -f - <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.test.lapis.dev
spec:
  group: test.lapis.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
YAML
expect_rc 0 "the CRD is established" "${K[@]}" wait --for=condition=Established \
	crd/widgets.test.lapis.dev "$W"

# ---------------------------------------------------------------- namespaces
expect_rc 0 "create namespace doomed" "${K[@]}" create namespace doomed
expect_rc 0 "a configmap in it" "${K[@]}" -n doomed create configmap c1 --from-literal=a=1
expect_rc 0 "a secret in it" "${K[@]}" -n doomed create secret generic s1 --from-literal=p=q
expect_rc 0 "a lease in it" "${K[@]}" apply -f - <<'YAML'
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: l1, namespace: doomed}
spec: {holderIdentity: me}
YAML
expect_rc 0 "a custom resource in it" "${K[@]}" apply -f - <<'YAML'
apiVersion: test.lapis.dev/v1
kind: Widget
metadata: {name: w1, namespace: doomed}
spec: {size: 1}
YAML
expect_rc 0 "a configmap held by a finalizer" "${K[@]}" apply -f - <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: held, namespace: doomed, finalizers: [test.lapis.dev/hold]}
YAML
expect_rc 0 "delete the namespace (no wait)" "${K[@]}" delete namespace doomed --wait=false
expect_rc 0 "its configmap goes" "${K[@]}" -n doomed wait --for=delete configmap/c1 "$W"
expect_rc 0 "its secret goes" "${K[@]}" -n doomed wait --for=delete secret/s1 "$W"
expect_rc 0 "its lease goes" "${K[@]}" -n doomed wait --for=delete lease/l1 "$W"
expect_rc 0 "its custom resource goes" "${K[@]}" -n doomed wait --for=delete widget/w1 "$W"
expect_rc 0 "the namespace reports the finalizer that holds it" \
	"${K[@]}" wait namespace/doomed "$W" \
	'--for=jsonpath={.status.conditions[?(@.type=="NamespaceFinalizersRemaining")].status}=True'
expect_rc 0 "get the terminating namespace" "${K[@]}" get namespace doomed -o json
check "it is Terminating" out_has '"phase": "Terminating"'
check "with the kubernetes finalizer" out_has '"kubernetes"'
check "NamespaceContentRemaining names the resource" \
	out_has 'Some resources are remaining: configmaps. has 1 resource instances'
check "NamespaceFinalizersRemaining names the finalizer" \
	out_has 'Some content in the namespace has finalizers remaining: test.lapis.dev/hold in 1 resource instances'
check "the other conditions are False" out_has '"reason": "ResourcesDiscovered"'
expect_rc 0 "the held configmap is marked for deletion" \
	"${K[@]}" -n doomed get configmap held -o 'jsonpath={.metadata.deletionTimestamp}'
check "with a deletionTimestamp" [ -s "$WORK/out" ]
expect_rc 1 "creating in a terminating namespace is refused" \
	"${K[@]}" -n doomed create configmap late
check "with 403 Forbidden and kube's message" \
	err_has 'forbidden: unable to create new content in namespace doomed because it is being terminated'
expect_rc 1 "so is a token request there (admission, before the account is looked for)" \
	"${K[@]}" -n doomed create token anyone
check "... with the same 403" \
	err_has 'serviceaccounts "anyone" is forbidden: unable to create new content in namespace doomed because it is being terminated'
expect_rc 0 "release the finalizer" "${K[@]}" -n doomed patch configmap held \
	--type=merge -p '{"metadata":{"finalizers":null}}'
expect_rc 0 "then the namespace goes" "${K[@]}" wait --for=delete namespace/doomed "$W"
expect_rc 0 "kubectl delete namespace waits for the content" \
	"${K[@]}" create namespace quick
"${K[@]}" -n quick create configmap q1 >/dev/null
expect_rc 0 "delete namespace quick (waits)" "${K[@]}" delete namespace quick "$W"
expect_rc 1 "quick is gone" "${K[@]}" get namespace quick
expect_rc 0 "a namespace of the same name starts empty" "${K[@]}" create namespace quick
expect_rc 0 "list it" "${K[@]}" -n quick get configmaps -o name
check "nothing in it" [ ! -s "$WORK/out" ]
# kube's namespace controller deletes the content with Background
# propagation, even what is deleting already: an owner waiting in the
# foreground for a held dependent loses foregroundDeletion and goes at once
expect_rc 0 "a namespace held by a finalizer of its own" "${K[@]}" apply -f - <<'YAML'
apiVersion: v1
kind: Namespace
metadata: {name: fgns, finalizers: [test.lapis.dev/ns-hold]}
YAML
"${K[@]}" -n fgns create configmap fg-owner >/dev/null
U=$(uid_of configmap fg-owner -n fgns)
"${K[@]}" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Secret
metadata:
  name: fg-dep
  namespace: fgns
  finalizers: [test.lapis.dev/hold]
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: fg-owner, uid: "$U", blockOwnerDeletion: true}]
YAML
expect_rc 0 "... its owner deleted in the foreground" "${K[@]}" -n fgns delete configmap fg-owner --cascade=foreground --wait=false
expect_rc 0 "... waits for the held dependent" "${K[@]}" -n fgns wait configmap/fg-owner \
	'--for=jsonpath={.metadata.finalizers[0]}=foregroundDeletion' "$W"
expect_rc 0 "delete the namespace" "${K[@]}" delete namespace fgns --wait=false
expect_rc 0 "... the waiting owner goes" "${K[@]}" -n fgns wait --for=delete configmap/fg-owner "$W"
expect_rc 0 "... the namespace reports only the held secret" "${K[@]}" wait namespace/fgns "$W" \
	'--for=jsonpath={.status.conditions[?(@.type=="NamespaceFinalizersRemaining")].message}=Some content in the namespace has finalizers remaining: test.lapis.dev/hold in 1 resource instances'
"${K[@]}" -n fgns patch secret fg-dep --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
expect_rc 0 "... once it goes, the namespace is finalized (its own finalizer holds it)" "${K[@]}" wait namespace/fgns "$W" \
	'--for=jsonpath={.status.conditions[?(@.type=="NamespaceContentRemaining")].status}=False'
finalized_spec() {
	local i
	for i in $(seq 100); do
		"${K[@]}" get namespace fgns -o json >"$WORK/out" 2>/dev/null
		python3 -c "import json, sys; sys.exit(json.load(open('$WORK/out'))['spec'] != {})" && return 0
		sleep 0.1
	done
	echo "#   $(python3 -c "import json; print(json.load(open('$WORK/out'))['spec'])")"
	return 1
}
check "... with an empty spec: no finalizers left is no field (omitempty)" finalized_spec
"${K[@]}" patch namespace fgns --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
expect_rc 0 "... and goes once released" "${K[@]}" wait --for=delete namespace/fgns "$W"
# kubectl delete -f of a manifest that holds a namespace and its content
# deletes the namespace first, then each item: the controller leaves the
# content a moment (as kube's, busy with its discovery), so every delete
# finds its object
cat >"$WORK/bundle.yaml" <<'YAML'
apiVersion: v1
kind: Namespace
metadata: {name: bundle}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c1, namespace: bundle}
---
apiVersion: v1
kind: Secret
metadata: {name: s1, namespace: bundle}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: sa1, namespace: bundle}
---
apiVersion: test.lapis.dev/v1
kind: Widget
metadata: {name: w1, namespace: bundle}
YAML
for round in 1 2 3; do
	expect_rc 0 "a namespace with its content, applied (round $round)" "${K[@]}" apply -f "$WORK/bundle.yaml"
	expect_rc 0 "... and deleted from the same manifest, every item found" "${K[@]}" delete -f "$WORK/bundle.yaml" "$W"
done
expect_rc 1 "... and the namespace is gone" "${K[@]}" get namespace bundle

# ---------------------------------------------------------------- gc
# background (kube's default): the owner goes at once, then its dependents
cm owner-b
U=$(uid_of configmap owner-b)
cm dep-b1 owner-b "$U" false
cm dep-b2 owner-b "$U" true
expect_rc 0 "a custom resource owned by a configmap" "${K[@]}" apply -f - <<YAML
apiVersion: test.lapis.dev/v1
kind: Widget
metadata:
  name: wb
  namespace: default
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner-b, uid: "$U"}]
YAML
expect_rc 0 "background: delete the owner" "${K[@]}" delete configmap owner-b
expect_rc 0 "background: dependents go" "${K[@]}" wait --for=delete \
	configmap/dep-b1 configmap/dep-b2 widget/wb "$W"

# foreground: the owner stays, with foregroundDeletion, until its blocking
# dependents are gone
cm owner-f
U=$(uid_of configmap owner-f)
cm dep-f1 owner-f "$U" true
cm dep-f2 owner-f "$U" false
"${K[@]}" patch configmap dep-f1 -p '{"metadata":{"finalizers":["test.lapis.dev/hold"]}}' >/dev/null
expect_rc 0 "foreground: delete the owner" "${K[@]}" delete configmap owner-f \
	--cascade=foreground --wait=false
expect_rc 0 "foreground: the non-blocking dependent goes" \
	"${K[@]}" wait --for=delete configmap/dep-f2 "$W"
expect_rc 0 "foreground: the blocking dependent is marked" "${K[@]}" wait configmap/dep-f1 \
	'--for=jsonpath={.metadata.finalizers[0]}=test.lapis.dev/hold' "$W"
expect_rc 0 "foreground: the owner stays while it is held" \
	"${K[@]}" get configmap owner-f -o 'jsonpath={.metadata.finalizers} {.metadata.deletionTimestamp}'
check "with the foregroundDeletion finalizer and a deletionTimestamp" \
	out_has '^\["foregroundDeletion"\] [0-9]{4}-'
expect_rc 0 "foreground: get the blocking dependent" \
	"${K[@]}" get configmap dep-f1 -o 'jsonpath={.metadata.deletionTimestamp}'
check "it is being deleted" [ -s "$WORK/out" ]
expect_rc 0 "foreground: release the dependent" "${K[@]}" patch configmap dep-f1 \
	--type=merge -p '{"metadata":{"finalizers":null}}'
expect_rc 0 "foreground: then the owner goes" \
	"${K[@]}" wait --for=delete configmap/dep-f1 configmap/owner-f "$W"

# foreground through a cycle of blocking references (p owns q, q owns p):
# as kube's GC, q's references stop blocking once its dependent p waits
# for it, and both go
cm cyc-p
UP=$(uid_of configmap cyc-p)
cm cyc-q cyc-p "$UP" true
UQ=$(uid_of configmap cyc-q)
cm cyc-p cyc-q "$UQ" true 2>/dev/null
expect_rc 0 "cycle: delete one in the foreground" "${K[@]}" delete configmap cyc-p \
	--cascade=foreground --wait=false
expect_rc 0 "cycle: both go" \
	"${K[@]}" wait --for=delete configmap/cyc-p configmap/cyc-q "$W"

# a foreground deadlock: an object owning itself (blocking), deleted in the
# foreground, waits for ever, as in kube; and, as kube's
# processDeletingDependentsItem, the collector does not queue a dependent
# that itself waits, so nothing spins meanwhile (lapis's collector queued it
# for itself without end, a core busy for as long)
cm self-o
U=$(uid_of configmap self-o)
cm self-o self-o "$U" true
expect_rc 0 "deadlock: delete a self-owner in the foreground" "${K[@]}" delete configmap self-o \
	--cascade=foreground --wait=false
expect_rc 0 "deadlock: it waits with foregroundDeletion" "${K[@]}" wait configmap/self-o \
	'--for=jsonpath={.metadata.finalizers[0]}=foregroundDeletion' "$W"
cpu_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }
idle_while_stuck() {
	local t0 t1
	sleep 1
	t0=$(cpu_ticks)
	sleep 3
	t1=$(cpu_ticks)
	# a busy loop takes most of a core: well over a second of the three
	(( t1 - t0 < 50 )) || { echo "#   $((t1 - t0)) ticks of CPU in 3 s"; return 1; }
}
check "deadlock: the server stays idle meanwhile" idle_while_stuck
expect_rc 0 "deadlock: still there" "${K[@]}" get configmap self-o
"${K[@]}" patch configmap self-o --type=merge -p '{"metadata":{"ownerReferences":null}}' >/dev/null
expect_rc 0 "deadlock: dropping the reference lets it go" \
	"${K[@]}" wait --for=delete configmap/self-o "$W"

# orphan: the dependents stay, without the ownerReference
cm owner-o
U=$(uid_of configmap owner-o)
cm dep-o1 owner-o "$U" true
cm other-owner
U2=$(uid_of configmap other-owner)
expect_rc 0 "orphan: a dependent with two owners" "${K[@]}" apply -f - <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: dep-o2
  namespace: default
  ownerReferences:
  - {apiVersion: v1, kind: ConfigMap, name: owner-o, uid: "$U"}
  - {apiVersion: v1, kind: ConfigMap, name: other-owner, uid: "$U2"}
YAML
expect_rc 0 "orphan: delete the owner" "${K[@]}" delete configmap owner-o --cascade=orphan
expect_rc 0 "orphan: the owner is gone" "${K[@]}" wait --for=delete configmap/owner-o "$W"
expect_rc 0 "orphan: the dependent stays" \
	"${K[@]}" get configmap dep-o1 -o 'jsonpath={.metadata.ownerReferences}'
check "without its ownerReference" [ ! -s "$WORK/out" ]
expect_rc 0 "orphan: the other dependent keeps its other owner" \
	"${K[@]}" get configmap dep-o2 -o 'jsonpath={.metadata.ownerReferences[*].name}'
check "only other-owner is left" [ "$(cat "$WORK/out")" == other-owner ]
expect_rc 0 "orphan: the managed fields of the dependent" \
	"${K[@]}" get configmap dep-o2 -o 'jsonpath={.metadata.managedFields[*].fieldsV1}'
check "... no longer own the removed reference (kube's GC patches it away)" \
	bash -c "grep -q '$U2' '$WORK/out' && ! grep -q '$U' '$WORK/out'"

# a dependent created with an owner that does not exist is collected
cm dangling nobody 00000000-0000-0000-0000-000000000000 false
expect_rc 0 "a dependent of a missing owner goes" \
	"${K[@]}" wait --for=delete configmap/dangling "$W"

# owners are known by UID: recreating the owner does not adopt the old
# dependents, which go with the old owner
cm owner-r
U=$(uid_of configmap owner-r)
cm dep-r owner-r "$U" false
expect_rc 0 "uid: delete the owner (orphan, keeps the dependent)" \
	"${K[@]}" delete configmap owner-r --cascade=orphan
cm owner-r
U3=$(uid_of configmap owner-r)
cm dep-r3 owner-r "$U3" false
expect_rc 0 "uid: point a dependent at the old owner's UID" "${K[@]}" patch configmap dep-r3 \
	--type=json -p "[{\"op\":\"replace\",\"path\":\"/metadata/ownerReferences/0/uid\",\"value\":\"$U\"}]"
expect_rc 0 "uid: a reference to the old UID is an absent owner" \
	"${K[@]}" wait --for=delete configmap/dep-r3 "$W"
expect_rc 0 "uid: the recreated owner stays" "${K[@]}" get configmap owner-r

# references map as kube's REST mapper maps them: a kind in lower case is
# the kind, "<Kind>List" a resource that does not exist (an absent owner),
# a version not served maps to nothing (the dependent waits for ever)
BOGUS=00000000-0000-0000-0000-0000000000aa
cm dep-v9 owner-r "$BOGUS" false "" v9 ConfigMap
cm dep-lc owner-r "$BOGUS" false "" v1 configmap
cm dep-lk owner-r "$BOGUS" false "" v1 ConfigMapList
expect_rc 0 "mapping: a lower-case kind names the kind (the owner's other UID: absent)" \
	"${K[@]}" wait --for=delete configmap/dep-lc "$W"
expect_rc 0 "mapping: a <Kind>List kind names no resource (absent)" \
	"${K[@]}" wait --for=delete configmap/dep-lk "$W"
sleep 1
expect_rc 0 "mapping: a version not served maps to nothing: the dependent stays, as in kube" \
	"${K[@]}" get configmap dep-v9 -o 'jsonpath={.metadata.deletionTimestamp}'
check "... (not even marked for deletion)" bash -c "[ ! -s '$WORK/out' ]"
"${K[@]}" delete configmap dep-v9 >/dev/null

# a cluster-scoped dependent of a namespaced owner: kube's GC gives up on
# it (namespacedOwnerOfClusterScopedObjectErr) and leaves it alone
expect_rc 0 "a namespace owned by a configmap (invalid scope)" "${K[@]}" apply -f - <<YAML
apiVersion: v1
kind: Namespace
metadata:
  name: scoped
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner-r, uid: "$U3"}]
YAML
expect_rc 0 "... then one whose cluster-scoped owner never existed" "${K[@]}" apply -f - <<YAML
apiVersion: v1
kind: Namespace
metadata:
  name: scoped-dangling
  ownerReferences: [{apiVersion: v1, kind: Namespace, name: nobody, uid: "00000000-0000-0000-0000-000000000001"}]
YAML
expect_rc 0 "... the dangling one is collected" \
	"${K[@]}" wait --for=delete namespace/scoped-dangling "$W"
expect_rc 0 "... the one with a namespaced owner is left alone, as in kube" \
	"${K[@]}" get namespace scoped -o 'jsonpath={.metadata.deletionTimestamp}'
check "... (not even marked for deletion)" bash -c "[ ! -s '$WORK/out' ]"
# kube's graph reports a reference whose owner lives in another namespace:
# a Warning Event OwnerRefInvalidNamespace about the dependent, from
# garbage-collector-controller (in default for a cluster-scoped one)
event_for() { # NAMESPACE OBJECT-NAME: polls until an Event names it
	local i
	for i in $(seq 100); do
		"${K[@]}" get events -n "$1" --field-selector "involvedObject.name=$2" -o name 2>/dev/null | grep -q . && return 0
		sleep 0.1
	done
	return 1
}
check "... which kube reports in an Event in default" event_for default scoped
expect_rc 0 "... get it" "${K[@]}" get events -n default --field-selector involvedObject.name=scoped -o json
check "... with kube's message, type, source and object, once" python3 -c "
import json; d = json.load(open('$WORK/out'))['items']
assert len(d) == 1, d
e = d[0]
assert e['message'] == 'ownerRef [v1/ConfigMap, namespace: , name: owner-r, uid: $U3] does not exist in namespace \"\"', e['message']
assert (e['type'], e['count'], e['source'], e['reportingComponent']) == ('Warning', 1, {'component': 'garbage-collector-controller'}, 'garbage-collector-controller'), e
assert e['involvedObject']['kind'] == 'Namespace' and e['involvedObject']['name'] == 'scoped' and 'namespace' not in e['involvedObject'], e
assert e['metadata']['name'].startswith('scoped.'), e"
expect_rc 0 "a namespace for a dependent elsewhere" "${K[@]}" create namespace elsewhere
cm far owner-r "$U3" false elsewhere
expect_rc 0 "... a dependent naming an owner of another namespace goes (absent where it looks)" \
	"${K[@]}" -n elsewhere wait --for=delete configmap/far "$W"
expect_rc 0 "... and kube's Event names it" "${K[@]}" get events -n elsewhere --field-selector reason=OwnerRefInvalidNamespace \
	-o 'jsonpath={.items[*].message}'
check "... in its namespace" out_has "^ownerRef \[v1/ConfigMap, namespace: elsewhere, name: owner-r, uid: $U3\] does not exist in namespace \"elsewhere\"$"

# ---------------------------------------------------------------- crd-finalizer
expect_rc 0 "crd: a widget" "${K[@]}" apply -f - <<'YAML'
apiVersion: test.lapis.dev/v1
kind: Widget
metadata: {name: plain, namespace: default}
YAML
expect_rc 0 "crd: a widget held by a finalizer" "${K[@]}" apply -f - <<'YAML'
apiVersion: test.lapis.dev/v1
kind: Widget
metadata: {name: held, namespace: default, finalizers: [test.lapis.dev/hold]}
YAML
expect_rc 0 "crd: delete the CRD (no wait)" "${K[@]}" delete crd widgets.test.lapis.dev --wait=false
expect_rc 0 "crd: the plain widget goes" "${K[@]}" wait --for=delete widget/plain "$W"
expect_rc 0 "crd: the CRD waits for the held widget" "${K[@]}" wait crd/widgets.test.lapis.dev "$W" \
	'--for=jsonpath={.status.conditions[?(@.type=="Terminating")].reason}=InstanceDeletionInProgress'
expect_rc 0 "crd: get the terminating CRD" "${K[@]}" get crd widgets.test.lapis.dev -o json
check "crd: with the cleanup finalizer" out_has '"customresourcecleanup.apiextensions.k8s.io"'
check "crd: and a deletionTimestamp" out_has '"deletionTimestamp"'
# kube's finalizer polls a minute before it reports the instances left
sleep 1
expect_rc 0 "crd: get the terminating CRD again" "${K[@]}" get crd widgets.test.lapis.dev -o json
check "crd: in its first minute of waiting it says deletion is in progress, as kube" python3 -c "
import json; d = json.load(open('$WORK/out'))
c = [c for c in d['status']['conditions'] if c['type'] == 'Terminating'][0]
assert (c['status'], c['reason'], c['message']) == ('True', 'InstanceDeletionInProgress', 'CustomResource deletion is in progress'), c"
# the controller's own Terminating writes do not requeue the CRD (kube's
# updateCustomResourceDefinition): it re-checks every 5 s, it does not spin
rv_of() { "${K[@]}" get crd widgets.test.lapis.dev -o 'jsonpath={.metadata.resourceVersion}'; }
RV1=$(rv_of)
sleep 2
RV2=$(rv_of)
check "crd: while it waits, the CRD is not rewritten in a loop ($RV1 -> $RV2 in 2 s)" \
	bash -c "[[ -n '$RV1' && -n '$RV2' ]] && (( $RV2 - $RV1 <= 4 ))"
expect_rc 0 "crd: after its (shortened) minute the check's timeout shows, as kube's poll" \
	"${K[@]}" wait crd/widgets.test.lapis.dev "$W" \
	'--for=jsonpath={.status.conditions[?(@.type=="Terminating")].message}=could not confirm zero CustomResources remaining: context deadline exceeded'
expect_rc 1 "crd: no new widgets while it terminates" "${K[@]}" apply -f - <<'YAML'
apiVersion: test.lapis.dev/v1
kind: Widget
metadata: {name: late, namespace: default}
YAML
check "crd: 405 with kube's message" \
	err_has 'create not allowed while custom resource definition is terminating'
expect_rc 0 "crd: the held widget is still served" "${K[@]}" get widget held
expect_rc 0 "crd: discovery while it terminates" "${K[@]}" get --raw /apis/test.lapis.dev/v1
check "crd: lists only delete, deletecollection, get, list, watch" \
	out_has '"verbs":\["delete","deletecollection","get","list","watch"\]'
expect_rc 0 "crd: release the widget" "${K[@]}" patch widget held --type=merge \
	-p '{"metadata":{"finalizers":null}}'
expect_rc 0 "crd: then the CRD goes" "${K[@]}" wait --for=delete crd/widgets.test.lapis.dev "$W"
expect_rc 1 "crd: and its resource is no longer served" "${K[@]}" get widgets
# A custom resource's dependents are collected though its CRD is gone
# before the collector looks its owner up: it saw the owner deleted
# (kube's absentOwnerCache), so the owner's kind need not be served.
"${K[@]}" apply -f - >/dev/null <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.gc.lapis.dev}
spec:
  group: gc.lapis.dev
  scope: Namespaced
  names: {plural: gadgets, kind: Gadget}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
YAML
expect_rc 0 "gc: a CRD" "${K[@]}" wait --for=condition=Established crd/gadgets.gc.lapis.dev "$W"
expect_rc 0 "gc: a gadget" "${K[@]}" apply -f - <<<'{"apiVersion":"gc.lapis.dev/v1","kind":"Gadget","metadata":{"name":"o","namespace":"default"}}'
GU=$("${K[@]}" get gadget o -o 'jsonpath={.metadata.uid}')
expect_rc 0 "gc: a configmap it owns" "${K[@]}" apply -f - <<<'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"gadget-dep","namespace":"default","ownerReferences":[{"apiVersion":"gc.lapis.dev/v1","kind":"Gadget","name":"o","uid":"'"$GU"'"}]}}'
expect_rc 0 "gc: delete the CRD (its finalizer deletes the gadget)" "${K[@]}" delete crd gadgets.gc.lapis.dev
expect_rc 0 "gc: the gadget's dependent is collected" "${K[@]}" wait --for=delete configmap/gadget-dep "$W"
# Events are not in kube's GC graph (DefaultIgnoredResources): an Event
# whose owner goes stays until its TTL.
expect_rc 0 "gc: an owner" "${K[@]}" create configmap ev-owner
EU=$("${K[@]}" get configmap ev-owner -o 'jsonpath={.metadata.uid}')
expect_rc 0 "gc: an Event it owns" "${K[@]}" apply -f - <<<'{"apiVersion":"v1","kind":"Event","metadata":{"name":"ev-dep","namespace":"default","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"ev-owner","uid":"'"$EU"'"}]},"involvedObject":{"kind":"ConfigMap","name":"ev-owner","namespace":"default"},"reason":"R","message":"m"}'
expect_rc 0 "gc: ... and a configmap" "${K[@]}" apply -f - <<<'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ev-sib","namespace":"default","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"ev-owner","uid":"'"$EU"'"}]}}'
expect_rc 0 "gc: delete the owner" "${K[@]}" delete configmap ev-owner
expect_rc 0 "gc: the configmap it owned goes" "${K[@]}" wait --for=delete configmap/ev-sib "$W"
expect_rc 0 "gc: the Event stays, as kube's GC ignores Events" "${K[@]}" get event ev-dep

# The namespace controller empties a terminating namespace while any
# finalizer is in its spec, kubernetes or not, and leaves the others as
# kube's finalizeNamespace writes them: sorted, without repeats.
expect_rc 0 "ns: a namespace with finalizers of its own" "${K[@]}" apply -f - <<<'{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"nsfin"},"spec":{"finalizers":["z.com/x","a.com/y","z.com/x"]}}'
expect_rc 0 "ns: ... a configmap in it" "${K[@]}" -n nsfin create configmap c1
expect_rc 0 "ns: delete it" "${K[@]}" delete namespace nsfin --wait=false
expect_rc 0 "ns: its content goes" "${K[@]}" -n nsfin wait --for=delete configmap/c1 "$W"
nsfin_left() {
	local i
	for i in $(seq 100); do
		[[ $("${K[@]}" get namespace nsfin -o 'jsonpath={.spec.finalizers}') == '["a.com/y","z.com/x"]' ]] && return 0
		sleep 0.1
	done
	return 1
}
check "ns: kubernetes is taken out of spec.finalizers, the others sorted without repeats" nsfin_left
expect_rc 0 "ns: a namespace finalized to a finalizer of its own alone" "${K[@]}" create namespace nsown
expect_rc 0 "ns: ... a configmap in it" "${K[@]}" -n nsown create configmap c1
expect_rc 0 "ns: ... its spec.finalizers without kubernetes" "${K[@]}" replace --raw /api/v1/namespaces/nsown/finalize -f - <<<'{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"nsown"},"spec":{"finalizers":["example.com/custom"]}}'
expect_rc 0 "ns: delete it" "${K[@]}" delete namespace nsown --wait=false
expect_rc 0 "ns: its content goes all the same" "${K[@]}" -n nsown wait --for=delete configmap/c1 "$W"

# ---------------------------------------------------------------- crd-naming
# A CRD whose kind another CRD of its group holds waits, NamesAccepted
# False; the crd-naming controller gives it its names once the holder is
# gone, also when the holder first waits for its instances to go.
expect_rc 0 "naming: a CRD" naming_crd things Thing
expect_rc 0 "naming: an instance held by a finalizer" "${K[@]}" apply -f - <<'YAML'
apiVersion: naming.lapis.dev/v1
kind: Thing
metadata: {name: held, namespace: default, finalizers: [test.lapis.dev/hold]}
YAML
expect_rc 0 "naming: a second CRD of the group with the same kind" naming_crd thingzs Thing
expect_rc 0 "naming: its conditions" names_accepted thingzs
check "naming: ... NamesAccepted False, not Established" out_has '^False/False$'
# a CRD that never became Established goes at once, Terminating False /
# NeverEstablished (kube's finalizer controller)
expect_rc 0 "naming: a third CRD with the kind, never established" naming_crd thingys Thing
"${K[@]}" get --raw '/apis/apiextensions.k8s.io/v1/customresourcedefinitions?watch=1&fieldSelector=metadata.name=thingys.naming.lapis.dev&timeoutSeconds=4' >"$WORK/never.watch" 2>&1 &
NEVER_WATCH=$!
sleep 0.5
expect_rc 0 "naming: delete it" "${K[@]}" delete crd thingys.naming.lapis.dev "$W"
wait "$NEVER_WATCH"
check "naming: ... its last state said NeverEstablished" \
	grep -q '"type":"Terminating","status":"False","lastTransitionTime":"[^"]*","reason":"NeverEstablished","message":"resource was never established"' "$WORK/never.watch"
expect_rc 0 "naming: delete the first CRD (no wait)" "${K[@]}" delete crd things.naming.lapis.dev --wait=false
expect_rc 0 "naming: it waits for its held instance" "${K[@]}" wait crd/things.naming.lapis.dev "$W" \
	'--for=jsonpath={.status.conditions[?(@.type=="Terminating")].reason}=InstanceDeletionInProgress'
expect_rc 0 "naming: meanwhile the second still waits" names_accepted thingzs
check "naming: ... (the first still holds the kind)" out_has '^False/False$'
expect_rc 0 "naming: release the instance" "${K[@]}" patch things.naming.lapis.dev held --type=merge \
	-p '{"metadata":{"finalizers":null}}'
expect_rc 0 "naming: the first CRD goes" "${K[@]}" wait --for=delete crd/things.naming.lapis.dev "$W"
expect_rc 0 "naming: the second becomes Established" "${K[@]}" wait --for=condition=Established \
	crd/thingzs.naming.lapis.dev "$W"
expect_rc 0 "naming: ... with its names" names_accepted thingzs
check "naming: ... NamesAccepted True" out_has '^True/True$'
expect_rc 0 "naming: and it is served" "${K[@]}" get thingzs -A

# ---------------------------------------------------------------- restart
# Work left pending when the server stops is finished after it starts
# again: the informer's first list queues it.
expect_rc 0 "restart: a namespace with held content" "${K[@]}" create namespace survivor
expect_rc 0 "restart: the held configmap" "${K[@]}" apply -f - <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: held, namespace: survivor, finalizers: [test.lapis.dev/hold]}
YAML
expect_rc 0 "restart: delete the namespace" "${K[@]}" delete namespace survivor --wait=false
expect_rc 0 "restart: the namespace waits" "${K[@]}" wait namespace/survivor "$W" \
	'--for=jsonpath={.status.conditions[?(@.type=="NamespaceFinalizersRemaining")].status}=True'
cm owner-s
U=$(uid_of configmap owner-s)
cm dep-s owner-s "$U" true
"${K[@]}" patch configmap dep-s -p '{"metadata":{"finalizers":["test.lapis.dev/hold"]}}' >/dev/null
expect_rc 0 "restart: foreground delete of an owner with a held dependent" \
	"${K[@]}" delete configmap owner-s --cascade=foreground --wait=false
expect_rc 0 "restart: the dependent is marked" "${K[@]}" wait configmap/dep-s "$W" \
	'--for=jsonpath={.metadata.deletionTimestamp}'
# Informers and controller workers run as background threads
# (SCHED_BATCH: policy 3 in /proc/PID/task/TID/stat, field 41), the HTTP
# threads and the engine's writer as ordinary ones (0): a commit wakes an
# informer without being preempted by it.
thread_policies() {
	local t
	for t in /proc/"$SERVER_PID"/task/*; do
		sed -E 's/^[0-9]+ \(([^)]*)\) /\1 /' "$t/stat" | awk '{print $1 "=" $40}'
	done | sort | uniq -c | awk '{print $2}' | tr '\n' ' '
}
P=$(thread_policies)
check "informer threads are SCHED_BATCH ($P)" grep -q "informer=3" <<<"$P"
check "controller workers are SCHED_BATCH ($P)" grep -q "controller=3" <<<"$P"
check "no informer or worker is left SCHED_OTHER ($P)" \
	bash -c '! grep -qE "(informer|controller)=0" <<<"$1"' _ "$P"
check "HTTP threads are SCHED_OTHER ($P)" grep -q "MHD-worker=0" <<<"$P"
check "no HTTP thread is SCHED_BATCH ($P)" bash -c '! grep -q "MHD-worker=3" <<<"$1"' _ "$P"
stop_server main
start_server main
check "restart: the server starts again on the same data" [ -n "$URL" ]
expect_rc 0 "restart: release the configmap" "${K[@]}" -n survivor patch configmap held \
	--type=merge -p '{"metadata":{"finalizers":null}}'
expect_rc 0 "restart: the namespace goes" "${K[@]}" wait --for=delete namespace/survivor "$W"
expect_rc 0 "restart: release the dependent" "${K[@]}" patch configmap dep-s \
	--type=merge -p '{"metadata":{"finalizers":null}}'
expect_rc 0 "restart: the owner goes" "${K[@]}" wait --for=delete configmap/owner-s "$W"
stop_server main-again

# ---------------------------------------------------------------- the flag
expect_rc 2 "--controllers with an unknown name is a usage error" \
	"$LAPIS" serve --ephemeral --controllers='*,-bogus'
check "which says the known names" err_has 'unknown controller "bogus" \(known: namespace, gc, crd-finalizer, crd-naming, event-ttl\)'

start_server nogc --controllers='*,-gc'
check "--controllers=*,-gc runs all but the garbage collector" \
	grep -q 'controllers: namespace, crd-finalizer, crd-naming, event-ttl$' "$WORK/nogc.log"
cm owner-n
U=$(uid_of configmap owner-n)
cm dep-n owner-n "$U" false
expect_rc 0 "without gc: delete the owner" "${K[@]}" delete configmap owner-n
expect_rc 0 "without gc: namespaces still go" "${K[@]}" create namespace n2
expect_rc 0 "without gc: delete a namespace" "${K[@]}" delete namespace n2 "$W"
expect_rc 0 "without gc: the dependent stays" "${K[@]}" get configmap dep-n
stop_server nogc

# Without crd-naming nothing re-checks a waiting CRD when the clash goes:
# the re-check above is the controller's. The inline check still runs on
# the waiting CRD's own writes.
start_server nonaming --controllers='*,-crd-naming'
check "--controllers=*,-crd-naming runs all but crd-naming" \
	grep -q 'controllers: namespace, gc, crd-finalizer, event-ttl$' "$WORK/nonaming.log"
expect_rc 0 "without crd-naming: a CRD" naming_crd things Thing
expect_rc 0 "without crd-naming: a second one with its kind" naming_crd thingzs Thing
expect_rc 0 "without crd-naming: its conditions" names_accepted thingzs
check "without crd-naming: ... NamesAccepted False" out_has '^False/False$'
expect_rc 0 "without crd-naming: the first CRD goes" "${K[@]}" delete crd things.naming.lapis.dev "$W"
expect_rc 0 "without crd-naming: the second" names_accepted thingzs
check "without crd-naming: ... still waits" out_has '^False/False$'
expect_rc 0 "without crd-naming: a label on the waiting CRD (an update)" \
	"${K[@]}" label crd thingzs.naming.lapis.dev touched=yes
expect_rc 0 "without crd-naming: the update's inline check" names_accepted thingzs
check "without crd-naming: ... gives it its names at once" out_has '^True/True$'
stop_server nonaming

# kube's CRD finalizer starts tens of milliseconds after the deletion (its
# informer, its queue, a status write), and the instances stay served
# meanwhile: kubectl delete -f of a manifest holding a CRD and its
# instances finds them (lapis's controller took a few hundred
# microseconds and kubectl's next delete met a 404). The delay set long
# here, so that the order is certain.
LAPIS_CRD_CLEANUP_DELAY_MS=5000 start_server delay
schemaless_crd gizmos delay.lapis.dev Gizmo >"$WORK/gizmo.yaml"
printf -- '---\napiVersion: delay.lapis.dev/v1\nkind: Gizmo\nmetadata: {name: g1, namespace: default}\n' >>"$WORK/gizmo.yaml"
expect_rc 0 "delay: a CRD" "${K[@]}" create -f <(schemaless_crd gizmos delay.lapis.dev Gizmo)
expect_rc 0 "delay: ... established" "${K[@]}" wait --for=condition=Established crd/gizmos.delay.lapis.dev "$W"
expect_rc 0 "delay: a manifest of the CRD and an instance applied" "${K[@]}" apply -f "$WORK/gizmo.yaml"
expect_rc 0 "delay: kubectl delete -f of it deletes the CRD, then finds the instance" \
	"${K[@]}" delete -f "$WORK/gizmo.yaml" --wait=false
expect_rc 0 "delay: the CRD then goes" "${K[@]}" wait --for=delete crd/gizmos.delay.lapis.dev "$W"
stop_server delay

# ---------------------------------------------------------------- event-ttl
# Events go --event-ttl after their last write (kube-apiserver's etcd
# lease), read off their own times: one whose lastTimestamp is an hour
# ahead stays while one written once goes.
start_server ttl --event-ttl=2s
AHEAD=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ)
expect_rc 0 "an Event" "${K[@]}" create -f - <<<'{"apiVersion":"v1","kind":"Event","metadata":{"name":"once","namespace":"default"},"involvedObject":{"kind":"ConfigMap","name":"x","namespace":"default"},"reason":"R"}'
expect_rc 0 "an Event seen again (lastTimestamp an hour ahead)" "${K[@]}" create -f - <<<"{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"again\",\"namespace\":\"default\"},\"involvedObject\":{\"kind\":\"ConfigMap\",\"name\":\"x\",\"namespace\":\"default\"},\"reason\":\"R\",\"count\":2,\"lastTimestamp\":\"$AHEAD\"}"
expect_rc 0 "the first Event goes after --event-ttl" "${K[@]}" wait --for=delete event/once "$W"
expect_rc 0 "... the one written later stays" "${K[@]}" get event again
stop_server ttl

e2e_finish
