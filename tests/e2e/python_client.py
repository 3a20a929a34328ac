"""python_client.py -- Debian's python3-kubernetes (22.x) against lapis.

Run by tests/e2e/python.sh with KUBECONFIG pointing at a running server.
Prints TAP-like lines and a closing "N passed, N failed" line.
"""
import json
import datetime
import sys
import threading

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import DynamicApiError

passed = failed = 0


def check(desc, cond):
    global passed, failed
    if cond:
        passed += 1
        print("ok - " + desc)
    else:
        failed += 1
        print("not ok - " + desc)


config.load_kube_config()
v1 = client.CoreV1Api()
coord = client.CoordinationV1Api()

ns = client.V1Namespace(metadata=client.V1ObjectMeta(name="py"))
v1.create_namespace(ns)
check("create namespace", v1.read_namespace("py").status.phase == "Active")

cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c1", labels={"app": "py"}),
                        data={"k": "v"})
created = v1.create_namespaced_config_map("py", cm)
check("create configmap", created.metadata.resource_version)
got = v1.read_namespaced_config_map("c1", "py")
check("read configmap", got.data == {"k": "v"})

for i in range(7):
    v1.create_namespaced_config_map(
        "py", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="p%d" % i)))
names, token = [], None
while True:
    page = v1.list_namespaced_config_map("py", limit=3, _continue=token)
    names += [i.metadata.name for i in page.items]
    token = page.metadata._continue
    if not token:
        break
full = [i.metadata.name for i in v1.list_namespaced_config_map("py").items]
check("paged list equals the full list", names == full and len(full) == 8)

sel = v1.list_namespaced_config_map("py", label_selector="app=py")
check("label selector", [i.metadata.name for i in sel.items] == ["c1"])

patched = v1.patch_namespaced_config_map("c1", "py", {"data": {"m": "1"}})
check("patch (merge)", patched.data.get("m") == "1" and patched.data.get("k") == "v")

got.data["k"] = "v2"
try:
    v1.replace_namespaced_config_map("c1", "py", got)
    check("stale replace conflicts", False)
except ApiException as e:
    check("stale replace conflicts (409)", e.status == 409)

try:
    v1.read_namespaced_config_map("nope", "py")
    check("missing object is 404", False)
except ApiException as e:
    check("missing object is 404", e.status == 404)

rv = v1.list_namespaced_config_map("py").metadata.resource_version
events = []


def watcher():
    w = watch.Watch()
    for ev in w.stream(v1.list_namespaced_config_map, "py", resource_version=rv,
                       timeout_seconds=5):
        events.append((ev["type"], ev["object"].metadata.name))
        if len(events) >= 2:
            w.stop()


t = threading.Thread(target=watcher)
t.start()
v1.create_namespaced_config_map("py", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="w1")))
v1.delete_namespaced_config_map("w1", "py")
t.join(30)
check("watch sees ADDED then DELETED", events[:2] == [("ADDED", "w1"), ("DELETED", "w1")])

lease = client.V1Lease(metadata=client.V1ObjectMeta(name="l1"),
                       spec=client.V1LeaseSpec(holder_identity="me", lease_duration_seconds=10))
coord.create_namespaced_lease("py", lease)
check("lease", coord.read_namespaced_lease("l1", "py").spec.holder_identity == "me")

# server-side apply through the dynamic client (application/apply-patch+yaml;
# the 22.x REST layer sends only a str body with that content type)
dyn = DynamicClient(client.ApiClient())
cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
body = {"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "ssa", "namespace": "py"}, "data": {"a": "1", "b": "2"}}
dyn.server_side_apply(cms, body=json.dumps(body), name="ssa", namespace="py",
                      field_manager="py-ssa")
body["data"] = {"a": "3"}
applied = dyn.server_side_apply(cms, body=json.dumps(body), name="ssa", namespace="py",
                                field_manager="py-ssa")
check("server-side apply creates, then updates and prunes",
      dict(applied.data) == {"a": "3"} and
      [(e.manager, e.operation) for e in applied.metadata.managedFields] == [("py-ssa", "Apply")])
try:
    dyn.server_side_apply(cms, body=json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                                                "metadata": {"name": "c1", "namespace": "py"},
                                                "data": {"k": "other"}}),
                          name="c1", namespace="py", field_manager="py-ssa")
    check("an apply over another manager's field conflicts", False)
except (ApiException, DynamicApiError) as e:
    check("an apply over another manager's field conflicts (409)", e.status == 409)

secret = client.V1Secret(metadata=client.V1ObjectMeta(name="s1"), string_data={"u": "admin"})
v1.create_namespaced_secret("py", secret)
check("secret stringData is folded into data",
      v1.read_namespaced_secret("s1", "py").data == {"u": "YWRtaW4="})

# events.k8s.io/v1: the client's own EventsV1Event, read back as core/v1
evapi = client.EventsV1Api()
ev = client.EventsV1Event(
    metadata=client.V1ObjectMeta(name="ev1"), event_time=datetime.datetime.now(datetime.timezone.utc),
    reporting_controller="example.com/py", reporting_instance="py-1", action="Test", reason="Tested",
    regarding=client.V1ObjectReference(api_version="v1", kind="ConfigMap", name="c1", namespace="py"),
    note="hello", type="Normal")
made = evapi.create_namespaced_event("py", ev)
check("events.k8s.io/v1 create", made.note == "hello" and made.regarding.name == "c1")
evapi.patch_namespaced_event("ev1", "py", {"series": {"count": 2, "lastObservedTime": "2026-11-30T08:05:00.000000Z"}})
check("events.k8s.io/v1 series patch", evapi.read_namespaced_event("ev1", "py").series.count == 2)
core_ev = v1.read_namespaced_event("ev1", "py")
check("the same event through core/v1", core_ev.message == "hello" and core_ev.reporting_component == "example.com/py")

# kubectl auth can-i's review through the client's AuthorizationV1Api
ssar = client.AuthorizationV1Api().create_self_subject_access_review(client.V1SelfSubjectAccessReview(
    spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=client.V1ResourceAttributes(
        namespace="py", verb="delete", resource="secrets"))))
check("SelfSubjectAccessReview allows the admin", ssar.status.allowed is True)

# kubectl create token's API: a TokenRequest, then a TokenReview of it
v1.create_namespaced_service_account("py", client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="bot")))
treq = v1.create_namespaced_service_account_token("bot", "py", client.AuthenticationV1TokenRequest(
    spec=client.V1TokenRequestSpec(audiences=["py-aud"], expiration_seconds=900)))
check("TokenRequest answers a token", treq.status.token.count(".") == 2 and treq.spec.expiration_seconds == 900)
trev = client.AuthenticationV1Api().create_token_review(client.V1TokenReview(
    spec=client.V1TokenReviewSpec(token=treq.status.token, audiences=["py-aud"])))
check("TokenReview authenticates it", trev.status.authenticated is True and
      trev.status.user.username == "system:serviceaccount:py:bot" and trev.status.audiences == ["py-aud"])

# A configmap with a finalizer keeps the namespace Terminating; the
# namespace controller deletes the rest and waits for it.
v1.create_namespaced_config_map("py", client.V1ConfigMap(
    metadata=client.V1ObjectMeta(name="held", finalizers=["test.lapis.dev/hold"])))
v1.delete_namespace("py")
ns = v1.read_namespace("py")
check("delete namespace marks it Terminating", ns.status.phase == "Terminating")
v1.patch_namespaced_config_map("held", "py", {"metadata": {"finalizers": None}})
gone = False
w = watch.Watch()
for ev in w.stream(v1.list_namespace, field_selector="metadata.name=py",
                   resource_version=ns.metadata.resource_version,
                   timeout_seconds=60):
    if ev["type"] == "DELETED":
        gone = True
        w.stop()
check("the namespace goes once its content is gone", gone)

print("python: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
