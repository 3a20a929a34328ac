/*
 * pb.c -- Kubernetes protobuf request bodies decoded to JSON (see pb.h).
 *
 * Two parts. A protobuf wire-format reader (varints, tags, length-delimited
 * payloads, skipping of unknown fields) over a byte range, and a
 * table-driven decoder: each built-in message lapis serves is a table of
 * fields {number, JSON name, type, flags, nested table}, written from the
 * generated.proto files of k8s.io/api (core/v1, coordination/v1) and
 * k8s.io/apimachinery (meta/v1, runtime, util/intstr), with the JSON
 * behaviour taken from the Go types' json tags.
 *
 * Pure, any thread: no globals but the constant tables.
 *
 * How the JSON is made equal to kube's JSON for the object that the Go
 * protobuf decoder would build:
 *   - client-go writes every non-pointer field (strings, ints, bools, value
 *     structs) even when zero, and pointer fields only when set. A field
 *     flagged OMITZERO is a Go value field tagged omitempty (or omitzero):
 *     its zero value is left out, as encoding/json does. Every other field
 *     is emitted whenever it is on the wire, zero or not: a pointer field
 *     that is present, or a field without omitempty.
 *   - Repeated and map fields appear only when non-empty (all of them are
 *     omitempty in Go).
 *   - Time: an empty payload is the zero time (JSON null, or left out for
 *     creationTimestamp, which is omitzero); otherwise seconds only
 *     (apimachinery drops nanos), formatted "2006-01-02T15:04:05Z" in UTC.
 *     MicroTime keeps microseconds (nanos truncated toward zero, then
 *     normalised as Go's time.Unix does): "2006-01-02T15:04:05.000000Z".
 *     0001-01-01T00:00:00Z is Go's zero time and is null too. Years outside
 *     0001..9999 are refused: kube could not read such a time back.
 *   - bytes become standard base64 with padding; map<string,bytes> values
 *     likewise ("" for an empty value).
 *   - IntOrString: type 0 gives the number intVal, 1 the string strVal,
 *     anything else is refused (Go's MarshalJSON fails on it too).
 *   - FieldsV1.Raw holds JSON text and is parsed into the tree; CBOR
 *     (newer apimachinery may write it) is refused as unsupported.
 *   - Strings are coerced to valid UTF-8 as encoding/json does: every byte
 *     that does not start a valid sequence becomes U+FFFD. NUL is kept in
 *     values (jansson strings carry a length) but refused in map keys,
 *     which jansson cannot hold.
 *
 * Invariants:
 *   1. The reader never reads outside [p, end): every length is checked
 *      against the bytes left before a pointer is advanced.
 *   2. Each field of a table has a distinct JSON name, so a JSON member is
 *      written by exactly one field: a non-repeated message member is
 *      always an object we made, a repeated member always an array.
 *   3. Repetition of a non-repeated field: scalars, Time, MicroTime,
 *      IntOrString and FieldsV1 take the last value (Time and MicroTime are
 *      replaced whole by apimachinery too); embedded messages merge, as
 *      protobuf specifies: later scalars win, repeated fields append, maps
 *      merge by key.
 *   4. Recursion is bounded by PB_MAX_DEPTH; unknown fields are skipped by
 *      length without recursion, so no input can nest deeper than the
 *      tables do.
 *   5. On error nothing is returned and everything built so far is freed.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pb.h"
#include "pbtab.h"
#include "registry/json.h"
#include "registry/object.h"

/* The envelope's magic: "k8s" and a zero byte (apimachinery's protobuf
   serializer prefix). */
static const uint8_t pb_magic[4] = { 'k', '8', 's', 0 };

/* A 64-bit varint takes at most 10 bytes of 7 bits; the 10th may only
   carry bit 63. */
#define PB_VARINT_MAX 10

/* Field numbers are 29 bits wide (protobuf's limit). */
#define PB_FIELD_MAX 536870911u

/* The deepest table chain is Service.status.loadBalancer.ingress.ports (6
   levels with the envelope); 64 leaves room for new tables while keeping
   the C stack use small should a table ever become recursive. */
#define PB_MAX_DEPTH 64

/* Go's zero time.Time, 0001-01-01T00:00:00Z, in Unix seconds, and the last
   second of 9999, the range that RFC 3339 four-digit years can carry. */
#define PB_SEC_MIN (-62135596800LL)
#define PB_SEC_MAX 253402300799LL

enum pb_wire {
	PB_WT_VARINT = 0,
	PB_WT_I64 = 1,
	PB_WT_LEN = 2,
	PB_WT_SGROUP = 3,
	PB_WT_EGROUP = 4,
	PB_WT_I32 = 5,
};

/* The reader: a byte range. */
struct pbr {
	const uint8_t *p;   /* next unread byte */
	const uint8_t *end; /* one past the last byte */
};

/* Both yield their code as a constant (not srv_error_set's return value), so
   an optimizing compiler sees that a failed reader leaves its out-parameters
   unwritten only on paths that return nonzero. */
#define BAD(err, ...)                                                          \
	(srv_error_set((err), LP_ERR(LP_E_BADREQUEST),                         \
		       "protobuf body: " __VA_ARGS__),                         \
	 LP_E_BADREQUEST)
#define NOMEM(err)                                                             \
	(srv_error_set((err), LP_ERR(LP_E_NOMEM), "out of memory"), LP_E_NOMEM)

/* ------------------------------------------------------------------ */
/* Message tables                                                       */
/* ------------------------------------------------------------------ */

#define FLD(n, name, type, flags) { (n), (name), PB_##type, (flags), NULL, NULL, NULL }
/* A field whose Go type is a named one (an enum string, types.UID). */
#define FLDG(n, name, type, flags, go) \
	{ (n), (name), PB_##type, (flags), NULL, NULL, (go) }
#define SUB(n, name, sub, flags) { (n), (name), PB_MSG, (flags), &(sub), NULL, NULL }
/* A strategic-merge list of messages keyed by key (patchMergeKey). */
#define SUBK(n, name, sub, flags, key) \
	{ (n), (name), PB_MSG, (flags) | PB_MERGE, &(sub), (key), NULL }
/* MSG_PKG names the OpenAPI package of the tables that follow. */
#define MSG(var, goname, tab)                                             \
	static const struct pb_msg var = { goname, MSG_PKG,                 \
					   sizeof(tab) / sizeof((tab)[0]), (tab) }
#define RQ PB_REQUIRED
#define O PB_OMITZERO
#define R PB_REP

/* apimachinery pkg/apis/meta/v1 */
#define MSG_PKG "io.k8s.apimachinery.pkg.apis.meta.v1"

static const struct pb_field f_owner_reference[] = {
    FLD(5, "apiVersion", STRING, RQ),
    FLD(1, "kind", STRING, RQ),
    FLD(3, "name", STRING, RQ),
    FLDG(4, "uid", STRING, RQ, "types.UID"),
    FLD(6, "controller", BOOL, PB_PTR),
    FLD(7, "blockOwnerDeletion", BOOL, PB_PTR),
};
MSG(m_owner_reference, "OwnerReference", f_owner_reference);

static const struct pb_field f_managed_fields_entry[] = {
	FLD(1, "manager", STRING, O),
	FLDG(2, "operation", STRING, O, "v1.ManagedFieldsOperationType"),
	FLD(3, "apiVersion", STRING, O),
	FLD(4, "time", TIME, 0),
	FLD(6, "fieldsType", STRING, O),
	FLD(7, "fieldsV1", FIELDSV1, 0),
	FLD(8, "subresource", STRING, O),
};
MSG(m_managed_fields_entry, "ManagedFieldsEntry", f_managed_fields_entry);

static const struct pb_field f_object_meta[] = {
    FLD(1, "name", STRING, O),
    FLD(2, "generateName", STRING, O),
    FLD(3, "namespace", STRING, O),
    FLD(4, "selfLink", STRING, O),
    FLDG(5, "uid", STRING, O, "types.UID"),
    FLD(6, "resourceVersion", STRING, O),
    FLD(7, "generation", INT64, O),
    FLD(8, "creationTimestamp", TIME, O),
    FLD(9, "deletionTimestamp", TIME, PB_PTR),
    FLD(10, "deletionGracePeriodSeconds", INT64, PB_PTR),
    FLD(11, "labels", MAP_STRING, 0),
    FLD(12, "annotations", MAP_STRING, 0),
    SUBK(13, "ownerReferences", m_owner_reference, R, "uid"),
    FLD(14, "finalizers", STRING, R | PB_MERGE),
    SUB(17, "managedFields", m_managed_fields_entry, R),
};
MSG(m_object_meta, "ObjectMeta", f_object_meta);

static const struct pb_field f_condition[] = {
	FLD(1, "type", STRING, RQ),
	FLDG(2, "status", STRING, RQ, "v1.ConditionStatus"),
	FLD(3, "observedGeneration", INT64, O),
	FLD(4, "lastTransitionTime", TIME, RQ),
	FLD(5, "reason", STRING, RQ),
	FLD(6, "message", STRING, RQ),
};
MSG(m_condition, "Condition", f_condition);

static const struct pb_field f_preconditions[] = {
	FLDG(1, "uid", STRING, 0, "types.UID"),
	FLD(2, "resourceVersion", STRING, 0),
};
MSG(m_preconditions, "Preconditions", f_preconditions);

static const struct pb_field f_delete_options[] = {
    FLD(1, "gracePeriodSeconds", INT64, 0),
    SUB(2, "preconditions", m_preconditions, PB_PTR),
    FLD(3, "orphanDependents", BOOL, 0),
    FLDG(4, "propagationPolicy", STRING, 0, "v1.DeletionPropagation"),
    FLD(5, "dryRun", STRING, R),
    FLD(6, "ignoreStoreReadErrorWithClusterBreakingPotential", BOOL, 0),
};
MSG(m_delete_options, "DeleteOptions", f_delete_options);

static const struct pb_field f_field_selector_requirement[] = {
	FLD(1, "key", STRING, RQ),
	FLD(2, "operator", STRING, RQ),
	FLD(3, "values", STRING, R),
};
MSG(m_field_selector_requirement, "FieldSelectorRequirement",
    f_field_selector_requirement);

static const struct pb_field f_label_selector_requirement[] = {
	FLD(1, "key", STRING, RQ),
	FLDG(2, "operator", STRING, RQ, "v1.LabelSelectorOperator"),
	FLD(3, "values", STRING, R),
};
MSG(m_label_selector_requirement, "LabelSelectorRequirement",
    f_label_selector_requirement);

static const struct pb_field f_label_selector[] = {
	FLD(1, "matchLabels", MAP_STRING, 0),
	SUB(2, "matchExpressions", m_label_selector_requirement, R),
};
MSG(m_label_selector, "LabelSelector", f_label_selector);

#undef MSG_PKG

/* k8s.io/api core/v1 */
#define MSG_PKG "io.k8s.api.core.v1"

static const struct pb_field f_object_reference[] = {
	FLD(1, "kind", STRING, O),
	FLD(2, "namespace", STRING, O),
	FLD(3, "name", STRING, O),
	FLDG(4, "uid", STRING, O, "types.UID"),
	FLD(5, "apiVersion", STRING, O),
	FLD(6, "resourceVersion", STRING, O),
	FLD(7, "fieldPath", STRING, O),
};
MSG(m_object_reference, "ObjectReference", f_object_reference);

static const struct pb_field f_local_object_reference[] = {
	FLD(1, "name", STRING, O),
};
MSG(m_local_object_reference, "LocalObjectReference", f_local_object_reference);

static const struct pb_field f_namespace_condition[] = {
	FLDG(1, "type", STRING, RQ, "v1.NamespaceConditionType"),
	FLDG(2, "status", STRING, RQ, "v1.ConditionStatus"),
	FLD(4, "lastTransitionTime", TIME, 0),
	FLD(5, "reason", STRING, O),
	FLD(6, "message", STRING, O),
};
MSG(m_namespace_condition, "NamespaceCondition", f_namespace_condition);

static const struct pb_field f_namespace_spec[] = {
	FLDG(1, "finalizers", STRING, R, "v1.FinalizerName"),
};
MSG(m_namespace_spec, "NamespaceSpec", f_namespace_spec);

static const struct pb_field f_namespace_status[] = {
	FLDG(1, "phase", STRING, O, "v1.NamespacePhase"),
	SUBK(2, "conditions", m_namespace_condition, R, "type"),
};
MSG(m_namespace_status, "NamespaceStatus", f_namespace_status);

static const struct pb_field f_namespace[] = {
	SUB(1, "metadata", m_object_meta, 0),
	SUB(2, "spec", m_namespace_spec, 0),
	SUB(3, "status", m_namespace_status, 0),
};
MSG(m_namespace, "Namespace", f_namespace);

static const struct pb_field f_config_map[] = {
    SUB(1, "metadata", m_object_meta, 0),
    FLD(4, "immutable", BOOL, PB_PTR),
    FLD(2, "data", MAP_STRING, 0),
    FLD(3, "binaryData", MAP_BYTES, 0),
};
MSG(m_config_map, "ConfigMap", f_config_map);

static const struct pb_field f_secret[] = {
    SUB(1, "metadata", m_object_meta, 0),
    FLD(5, "immutable", BOOL, PB_PTR),
    FLD(2, "data", MAP_BYTES, 0),
    FLD(4, "stringData", MAP_STRING, 0),
    FLDG(3, "type", STRING, O, "v1.SecretType"),
};
MSG(m_secret, "Secret", f_secret);

static const struct pb_field f_service_account[] = {
    SUB(1, "metadata", m_object_meta, 0),
    SUBK(2, "secrets", m_object_reference, R, "name"),
    SUB(3, "imagePullSecrets", m_local_object_reference, R),
    FLD(4, "automountServiceAccountToken", BOOL, PB_PTR),
};
MSG(m_service_account, "ServiceAccount", f_service_account);

static const struct pb_field f_client_ip_config[] = {
    FLD(1, "timeoutSeconds", INT32, PB_PTR),
};
MSG(m_client_ip_config, "ClientIPConfig", f_client_ip_config);

static const struct pb_field f_session_affinity_config[] = {
    SUB(1, "clientIP", m_client_ip_config, PB_PTR),
};
MSG(m_session_affinity_config, "SessionAffinityConfig", f_session_affinity_config);

static const struct pb_field f_service_port[] = {
    FLD(1, "name", STRING, O),
    FLDG(2, "protocol", STRING, O, "v1.Protocol"),
    FLD(6, "appProtocol", STRING, PB_PTR),
    FLD(3, "port", INT32, RQ),
    FLD(4, "targetPort", INTORSTR, 0),
    FLD(5, "nodePort", INT32, O),
};
MSG(m_service_port, "ServicePort", f_service_port);

static const struct pb_field f_service_spec[] = {
    SUBK(1, "ports", m_service_port, R, "port"),
    FLD(2, "selector", MAP_STRING, 0),
    FLD(3, "clusterIP", STRING, O),
    FLD(18, "clusterIPs", STRING, R),
    FLDG(4, "type", STRING, O, "v1.ServiceType"),
    FLD(5, "externalIPs", STRING, R),
    FLDG(7, "sessionAffinity", STRING, O, "v1.ServiceAffinity"),
    FLD(8, "loadBalancerIP", STRING, O),
    FLD(9, "loadBalancerSourceRanges", STRING, R),
    FLD(10, "externalName", STRING, O),
    FLDG(11, "externalTrafficPolicy", STRING, O,
	 "v1.ServiceExternalTrafficPolicy"),
    FLD(12, "healthCheckNodePort", INT32, O),
    FLD(13, "publishNotReadyAddresses", BOOL, O),
    SUB(14, "sessionAffinityConfig", m_session_affinity_config, PB_PTR),
    FLDG(19, "ipFamilies", STRING, R, "v1.IPFamily"),
    FLDG(17, "ipFamilyPolicy", STRING, PB_PTR, "v1.IPFamilyPolicy"),
    FLD(20, "allocateLoadBalancerNodePorts", BOOL, PB_PTR),
    FLD(21, "loadBalancerClass", STRING, PB_PTR),
    FLDG(22, "internalTrafficPolicy", STRING, PB_PTR,
	 "v1.ServiceInternalTrafficPolicy"),
    FLD(23, "trafficDistribution", STRING, PB_PTR),
};
MSG(m_service_spec, "ServiceSpec", f_service_spec);

static const struct pb_field f_port_status[] = {
    FLD(1, "port", INT32, RQ),
    FLDG(2, "protocol", STRING, RQ, "v1.Protocol"),
    FLD(3, "error", STRING, PB_PTR),
};
MSG(m_port_status, "PortStatus", f_port_status);

static const struct pb_field f_load_balancer_ingress[] = {
    FLD(1, "ip", STRING, O),
    FLD(2, "hostname", STRING, O),
    FLDG(3, "ipMode", STRING, PB_PTR, "v1.LoadBalancerIPMode"),
    SUB(4, "ports", m_port_status, R),
};
MSG(m_load_balancer_ingress, "LoadBalancerIngress", f_load_balancer_ingress);

static const struct pb_field f_load_balancer_status[] = {
	SUB(1, "ingress", m_load_balancer_ingress, R),
};
MSG(m_load_balancer_status, "LoadBalancerStatus", f_load_balancer_status);

static const struct pb_field f_service_status[] = {
	SUB(1, "loadBalancer", m_load_balancer_status, 0),
	SUBK(2, "conditions", m_condition, R, "type"),
};
MSG(m_service_status, "ServiceStatus", f_service_status);

static const struct pb_field f_service[] = {
	SUB(1, "metadata", m_object_meta, 0),
	SUB(2, "spec", m_service_spec, 0),
	SUB(3, "status", m_service_status, 0),
};
MSG(m_service, "Service", f_service);

static const struct pb_field f_endpoint_address[] = {
    FLD(1, "ip", STRING, RQ),
    FLD(3, "hostname", STRING, O),
    FLD(4, "nodeName", STRING, PB_PTR),
    SUB(2, "targetRef", m_object_reference, PB_PTR),
};
MSG(m_endpoint_address, "EndpointAddress", f_endpoint_address);

static const struct pb_field f_endpoint_port[] = {
    FLD(1, "name", STRING, O),
    FLD(2, "port", INT32, RQ),
    FLDG(3, "protocol", STRING, O, "v1.Protocol"),
    FLD(4, "appProtocol", STRING, PB_PTR),
};
MSG(m_endpoint_port, "EndpointPort", f_endpoint_port);

static const struct pb_field f_endpoint_subset[] = {
	SUB(1, "addresses", m_endpoint_address, R),
	SUB(2, "notReadyAddresses", m_endpoint_address, R),
	SUB(3, "ports", m_endpoint_port, R),
};
MSG(m_endpoint_subset, "EndpointSubset", f_endpoint_subset);

static const struct pb_field f_endpoints[] = {
	SUB(1, "metadata", m_object_meta, 0),
	SUB(2, "subsets", m_endpoint_subset, R),
};
MSG(m_endpoints, "Endpoints", f_endpoints);

static const struct pb_field f_event_source[] = {
	FLD(1, "component", STRING, O),
	FLD(2, "host", STRING, O),
};
MSG(m_event_source, "EventSource", f_event_source);

static const struct pb_field f_event_series[] = {
	FLD(1, "count", INT32, O),
	FLD(2, "lastObservedTime", MICROTIME, 0),
};
MSG(m_event_series, "EventSeries", f_event_series);

static const struct pb_field f_event[] = {
    SUB(1, "metadata", m_object_meta, RQ),
    SUB(2, "involvedObject", m_object_reference, RQ),
    FLD(3, "reason", STRING, O),
    FLD(4, "message", STRING, O),
    SUB(5, "source", m_event_source, 0),
    FLD(6, "firstTimestamp", TIME, 0),
    FLD(7, "lastTimestamp", TIME, 0),
    FLD(8, "count", INT32, O),
    FLD(9, "type", STRING, O),
    FLD(10, "eventTime", MICROTIME, 0),
    SUB(11, "series", m_event_series, PB_PTR),
    FLD(12, "action", STRING, O),
    SUB(13, "related", m_object_reference, PB_PTR),
    FLD(14, "reportingComponent", STRING, 0),
    FLD(15, "reportingInstance", STRING, 0),
};
MSG(m_event, "Event", f_event);

#undef MSG_PKG

/* k8s.io/api events/v1: the same stored object as core/v1's Event
   (resources.c converts between the two) */
#define MSG_PKG "io.k8s.api.events.v1"

static const struct pb_field f_event_series_v1[] = {
	FLD(1, "count", INT32, RQ),
	FLD(2, "lastObservedTime", MICROTIME, RQ),
};
MSG(m_event_series_v1, "EventSeries", f_event_series_v1);

static const struct pb_field f_event_v1[] = {
    SUB(1, "metadata", m_object_meta, 0),
    FLD(2, "eventTime", MICROTIME, RQ),
    SUB(3, "series", m_event_series_v1, PB_PTR),
    FLD(4, "reportingController", STRING, O),
    FLD(5, "reportingInstance", STRING, O),
    FLD(6, "action", STRING, O),
    FLD(7, "reason", STRING, O),
    SUB(8, "regarding", m_object_reference, 0),
    SUB(9, "related", m_object_reference, PB_PTR),
    FLD(10, "note", STRING, O),
    FLD(11, "type", STRING, O),
    SUB(12, "deprecatedSource", m_event_source, 0),
    FLD(13, "deprecatedFirstTimestamp", TIME, 0),
    FLD(14, "deprecatedLastTimestamp", TIME, 0),
    FLD(15, "deprecatedCount", INT32, O),
};
MSG(m_event_v1, "Event", f_event_v1);

#undef MSG_PKG

/* k8s.io/api authorization/v1: the self reviews kubectl auth can-i
   sends (review.c answers them; nothing is stored) */
#define MSG_PKG "io.k8s.api.authorization.v1"

static const struct pb_field f_field_selector_attributes[] = {
	FLD(1, "rawSelector", STRING, O),
	SUB(2, "requirements", m_field_selector_requirement, R),
};
MSG(m_field_selector_attributes, "FieldSelectorAttributes",
    f_field_selector_attributes);

static const struct pb_field f_label_selector_attributes[] = {
	FLD(1, "rawSelector", STRING, O),
	SUB(2, "requirements", m_label_selector_requirement, R),
};
MSG(m_label_selector_attributes, "LabelSelectorAttributes",
    f_label_selector_attributes);

static const struct pb_field f_resource_attributes[] = {
    FLD(1, "namespace", STRING, O),
    FLD(2, "verb", STRING, O),
    FLD(3, "group", STRING, O),
    FLD(4, "version", STRING, O),
    FLD(5, "resource", STRING, O),
    FLD(6, "subresource", STRING, O),
    FLD(7, "name", STRING, O),
    SUB(8, "fieldSelector", m_field_selector_attributes, PB_PTR),
    SUB(9, "labelSelector", m_label_selector_attributes, PB_PTR),
};
MSG(m_resource_attributes, "ResourceAttributes", f_resource_attributes);

static const struct pb_field f_non_resource_attributes[] = {
	FLD(1, "path", STRING, O),
	FLD(2, "verb", STRING, O),
};
MSG(m_non_resource_attributes, "NonResourceAttributes",
    f_non_resource_attributes);

static const struct pb_field f_ssar_spec[] = {
    SUB(1, "resourceAttributes", m_resource_attributes, PB_PTR),
    SUB(2, "nonResourceAttributes", m_non_resource_attributes, PB_PTR),
};
MSG(m_ssar_spec, "SelfSubjectAccessReviewSpec", f_ssar_spec);

static const struct pb_field f_sar_status[] = {
	FLD(1, "allowed", BOOL, RQ),
	FLD(4, "denied", BOOL, O),
	FLD(2, "reason", STRING, O),
	FLD(3, "evaluationError", STRING, O),
};
MSG(m_sar_status, "SubjectAccessReviewStatus", f_sar_status);

static const struct pb_field f_ssar[] = {
	SUB(1, "metadata", m_object_meta, 0),
	SUB(2, "spec", m_ssar_spec, RQ),
	SUB(3, "status", m_sar_status, 0),
};
MSG(m_ssar, "SelfSubjectAccessReview", f_ssar);

static const struct pb_field f_ssrr_spec[] = {
	FLD(1, "namespace", STRING, O),
};
MSG(m_ssrr_spec, "SelfSubjectRulesReviewSpec", f_ssrr_spec);

static const struct pb_field f_resource_rule[] = {
	FLD(1, "verbs", STRING, R | RQ),
	FLD(2, "apiGroups", STRING, R),
	FLD(3, "resources", STRING, R),
	FLD(4, "resourceNames", STRING, R),
};
MSG(m_resource_rule, "ResourceRule", f_resource_rule);

static const struct pb_field f_non_resource_rule[] = {
	FLD(1, "verbs", STRING, R | RQ),
	FLD(2, "nonResourceURLs", STRING, R),
};
MSG(m_non_resource_rule, "NonResourceRule", f_non_resource_rule);

static const struct pb_field f_subject_rules_status[] = {
	SUB(1, "resourceRules", m_resource_rule, R | RQ),
	SUB(2, "nonResourceRules", m_non_resource_rule, R | RQ),
	FLD(3, "incomplete", BOOL, RQ),
	FLD(4, "evaluationError", STRING, O),
};
MSG(m_subject_rules_status, "SubjectRulesReviewStatus",
    f_subject_rules_status);

static const struct pb_field f_ssrr[] = {
	SUB(1, "metadata", m_object_meta, 0),
	SUB(2, "spec", m_ssrr_spec, RQ),
	SUB(3, "status", m_subject_rules_status, 0),
};
MSG(m_ssrr, "SelfSubjectRulesReview", f_ssrr);

/* extra (map<string, ExtraValue>) is not in the table: lapis's one
   identity has none */
static const struct pb_field f_sar_spec[] = {
    SUB(1, "resourceAttributes", m_resource_attributes, PB_PTR),
    SUB(2, "nonResourceAttributes", m_non_resource_attributes, PB_PTR),
    FLD(3, "user", STRING, O),
    FLD(4, "groups", STRING, R),
    FLD(6, "uid", STRING, O),
};
MSG(m_sar_spec, "SubjectAccessReviewSpec", f_sar_spec);

static const struct pb_field f_sar[] = {
	SUB(1, "metadata", m_object_meta, 0),
	SUB(2, "spec", m_sar_spec, RQ),
	SUB(3, "status", m_sar_status, 0),
};
MSG(m_sar, "SubjectAccessReview", f_sar);

static const struct pb_field f_lsar[] = {
	SUB(1, "metadata", m_object_meta, 0),
	SUB(2, "spec", m_sar_spec, RQ),
	SUB(3, "status", m_sar_status, 0),
};
MSG(m_lsar, "LocalSubjectAccessReview", f_lsar);

#undef MSG_PKG

/* k8s.io/api authentication/v1: kubectl auth whoami */
#define MSG_PKG "io.k8s.api.authentication.v1"

static const struct pb_field f_user_info[] = {
	FLD(1, "username", STRING, O),
	FLD(2, "uid", STRING, O),
	FLD(3, "groups", STRING, R),
};
MSG(m_user_info, "UserInfo", f_user_info);

static const struct pb_field f_ssr_status[] = {
	SUB(1, "userInfo", m_user_info, 0),
};
MSG(m_ssr_status, "SelfSubjectReviewStatus", f_ssr_status);

static const struct pb_field f_ssr[] = {
	SUB(1, "metadata", m_object_meta, 0),
	SUB(2, "status", m_ssr_status, 0),
};
MSG(m_ssr, "SelfSubjectReview", f_ssr);

static const struct pb_field f_token_review_spec[] = {
	FLD(1, "token", STRING, O),
	FLD(2, "audiences", STRING, R),
};
MSG(m_token_review_spec, "TokenReviewSpec", f_token_review_spec);

static const struct pb_field f_token_review_status[] = {
	FLD(1, "authenticated", BOOL, O),
	SUB(2, "user", m_user_info, 0),
	FLD(4, "audiences", STRING, R),
	FLD(3, "error", STRING, O),
};
MSG(m_token_review_status, "TokenReviewStatus", f_token_review_status);

static const struct pb_field f_token_review[] = {
	SUB(1, "metadata", m_object_meta, 0),
	SUB(2, "spec", m_token_review_spec, RQ),
	SUB(3, "status", m_token_review_status, 0),
};
MSG(m_token_review, "TokenReview", f_token_review);

/* TokenRequest: the serviceaccounts/token subresource (kubectl create
   token) */
static const struct pb_field f_bound_ref[] = {
	FLD(1, "kind", STRING, O),
	FLD(2, "apiVersion", STRING, O),
	FLD(3, "name", STRING, O),
	FLDG(4, "uid", STRING, O, "types.UID"),
};
MSG(m_bound_ref, "BoundObjectReference", f_bound_ref);

static const struct pb_field f_token_request_spec[] = {
    FLD(1, "audiences", STRING, R | RQ),
    FLD(4, "expirationSeconds", INT64, O),
    SUB(3, "boundObjectRef", m_bound_ref, PB_PTR | PB_KEEPEMPTY),
};
MSG(m_token_request_spec, "TokenRequestSpec", f_token_request_spec);

static const struct pb_field f_token_request_status[] = {
	FLD(1, "token", STRING, RQ),
	FLD(2, "expirationTimestamp", TIME, RQ),
};
MSG(m_token_request_status, "TokenRequestStatus", f_token_request_status);

static const struct pb_field f_token_request[] = {
	SUB(1, "metadata", m_object_meta, 0),
	SUB(2, "spec", m_token_request_spec, RQ),
	SUB(3, "status", m_token_request_status, 0),
};
MSG(m_token_request, "TokenRequest", f_token_request);

#undef MSG_PKG

/* k8s.io/api coordination/v1 */
#define MSG_PKG "io.k8s.api.coordination.v1"

/* every LeaseSpec field is a pointer with omitempty */
static const struct pb_field f_lease_spec[] = {
	FLD(1, "holderIdentity", STRING, PB_PTR),
	FLD(2, "leaseDurationSeconds", INT32, PB_PTR),
	FLD(3, "acquireTime", MICROTIME, PB_PTR),
	FLD(4, "renewTime", MICROTIME, PB_PTR),
	FLD(5, "leaseTransitions", INT32, PB_PTR),
	FLDG(6, "strategy", STRING, PB_PTR, "v1.CoordinatedLeaseStrategy"),
	FLD(7, "preferredHolder", STRING, PB_PTR),
};
MSG(m_lease_spec, "LeaseSpec", f_lease_spec);

static const struct pb_field f_lease[] = {
	SUB(1, "metadata", m_object_meta, 0),
	SUB(2, "spec", m_lease_spec, 0),
};
MSG(m_lease, "Lease", f_lease);

#undef MSG_PKG

/* k8s.io/api rbac/v1: Role, ClusterRole and their bindings (generated.proto
   field numbers). A role's rules have no omitempty: an empty list stays,
   and a missing one is null (prep_role). */
#define MSG_PKG "io.k8s.api.rbac.v1"

static const struct pb_field f_policy_rule[] = {
    FLD(1, "verbs", STRING, R | RQ),	  FLD(2, "apiGroups", STRING, R),
    FLD(3, "resources", STRING, R),	  FLD(4, "resourceNames", STRING, R),
    FLD(5, "nonResourceURLs", STRING, R),
};
MSG(m_policy_rule, "PolicyRule", f_policy_rule);

static const struct pb_field f_role[] = {
    SUB(1, "metadata", m_object_meta, 0),
    SUB(2, "rules", m_policy_rule, R | PB_KEEPEMPTY),
};
MSG(m_role, "Role", f_role);

static const struct pb_field f_aggregation_rule[] = {
    SUB(1, "clusterRoleSelectors", m_label_selector, R),
};
MSG(m_aggregation_rule, "AggregationRule", f_aggregation_rule);

static const struct pb_field f_cluster_role[] = {
    SUB(1, "metadata", m_object_meta, 0),
    SUB(2, "rules", m_policy_rule, R | PB_KEEPEMPTY),
    SUB(3, "aggregationRule", m_aggregation_rule, PB_PTR),
};
MSG(m_cluster_role, "ClusterRole", f_cluster_role);

static const struct pb_field f_subject[] = {
    FLD(1, "kind", STRING, RQ),
    FLD(2, "apiGroup", STRING, O),
    FLD(3, "name", STRING, RQ),
    FLD(4, "namespace", STRING, O),
};
MSG(m_subject, "Subject", f_subject);

static const struct pb_field f_role_ref[] = {
    FLD(1, "apiGroup", STRING, RQ),
    FLD(2, "kind", STRING, RQ),
    FLD(3, "name", STRING, RQ),
};
MSG(m_role_ref, "RoleRef", f_role_ref);

static const struct pb_field f_role_binding[] = {
    SUB(1, "metadata", m_object_meta, 0),
    SUB(2, "subjects", m_subject, R),
    SUB(3, "roleRef", m_role_ref, RQ),
};
MSG(m_role_binding, "RoleBinding", f_role_binding);

static const struct pb_field f_cluster_role_binding[] = {
    SUB(1, "metadata", m_object_meta, 0),
    SUB(2, "subjects", m_subject, R),
    SUB(3, "roleRef", m_role_ref, RQ),
};
MSG(m_cluster_role_binding, "ClusterRoleBinding", f_cluster_role_binding);

#undef MSG_PKG

/* k8s.io/api admissionregistration/v1, JSON bodies only (pb_kinds:
   json_only): the embedded Rule and RuleWithOperations (json ",inline")
   are written out flat, as their JSON has them. Pointers with omitempty
   are PB_PTR; sideEffects, a pointer without omitempty (nil is written
   null), is PB_PTR | PB_KEEPEMPTY. */
#define MSG_PKG "io.k8s.api.admissionregistration.v1"

static const struct pb_field f_rule_with_operations[] = {
	FLDG(1, "operations", STRING, R, "v1.OperationType"),
	FLD(1, "apiGroups", STRING, R),
	FLD(2, "apiVersions", STRING, R),
	FLD(3, "resources", STRING, R),
	FLDG(4, "scope", STRING, PB_PTR, "v1.ScopeType"),
};
MSG(m_rule_with_operations, "RuleWithOperations", f_rule_with_operations);

static const struct pb_field f_named_rule_with_operations[] = {
	FLD(1, "resourceNames", STRING, R),
	FLDG(1, "operations", STRING, R, "v1.OperationType"),
	FLD(1, "apiGroups", STRING, R),
	FLD(2, "apiVersions", STRING, R),
	FLD(3, "resources", STRING, R),
	FLDG(4, "scope", STRING, PB_PTR, "v1.ScopeType"),
};
MSG(m_named_rule_with_operations, "NamedRuleWithOperations",
	f_named_rule_with_operations);

static const struct pb_field f_service_reference[] = {
	FLD(1, "namespace", STRING, RQ),
	FLD(2, "name", STRING, RQ),
	FLD(3, "path", STRING, PB_PTR),
	FLD(4, "port", INT32, PB_PTR),
};
MSG(m_service_reference, "ServiceReference", f_service_reference);

static const struct pb_field f_webhook_client_config[] = {
	FLD(3, "url", STRING, PB_PTR),
	SUB(1, "service", m_service_reference, PB_PTR),
	FLD(2, "caBundle", BYTES, O),
};
MSG(m_webhook_client_config, "WebhookClientConfig", f_webhook_client_config);

static const struct pb_field f_match_condition[] = {
	FLD(1, "name", STRING, RQ),
	FLD(2, "expression", STRING, RQ),
};
MSG(m_match_condition, "MatchCondition", f_match_condition);

static const struct pb_field f_validating_webhook[] = {
    FLD(1, "name", STRING, RQ),
    SUB(2, "clientConfig", m_webhook_client_config, RQ),
    SUB(3, "rules", m_rule_with_operations, R),
    FLDG(4, "failurePolicy", STRING, PB_PTR, "v1.FailurePolicyType"),
    FLDG(9, "matchPolicy", STRING, PB_PTR, "v1.MatchPolicyType"),
    SUB(5, "namespaceSelector", m_label_selector, PB_PTR),
    SUB(10, "objectSelector", m_label_selector, PB_PTR),
    FLDG(6, "sideEffects", STRING, RQ | PB_PTR | PB_KEEPEMPTY,
	 "v1.SideEffectClass"),
    FLD(7, "timeoutSeconds", INT32, PB_PTR),
    FLD(8, "admissionReviewVersions", STRING, R | RQ),
    SUBK(11, "matchConditions", m_match_condition, R, "name"),
};
MSG(m_validating_webhook, "ValidatingWebhook", f_validating_webhook);

static const struct pb_field f_mutating_webhook[] = {
    FLD(1, "name", STRING, RQ),
    SUB(2, "clientConfig", m_webhook_client_config, RQ),
    SUB(3, "rules", m_rule_with_operations, R),
    FLDG(4, "failurePolicy", STRING, PB_PTR, "v1.FailurePolicyType"),
    FLDG(9, "matchPolicy", STRING, PB_PTR, "v1.MatchPolicyType"),
    SUB(5, "namespaceSelector", m_label_selector, PB_PTR),
    SUB(11, "objectSelector", m_label_selector, PB_PTR),
    FLDG(6, "sideEffects", STRING, RQ | PB_PTR | PB_KEEPEMPTY,
	 "v1.SideEffectClass"),
    FLD(7, "timeoutSeconds", INT32, PB_PTR),
    FLD(8, "admissionReviewVersions", STRING, R | RQ),
    FLDG(10, "reinvocationPolicy", STRING, PB_PTR, "v1.ReinvocationPolicyType"),
    SUBK(12, "matchConditions", m_match_condition, R, "name"),
};
MSG(m_mutating_webhook, "MutatingWebhook", f_mutating_webhook);

static const struct pb_field f_validating_webhook_configuration[] = {
	SUB(1, "metadata", m_object_meta, 0),
	SUBK(2, "webhooks", m_validating_webhook, R, "name"),
};
MSG(m_validating_webhook_configuration, "ValidatingWebhookConfiguration",
	f_validating_webhook_configuration);

static const struct pb_field f_mutating_webhook_configuration[] = {
	SUB(1, "metadata", m_object_meta, 0),
	SUBK(2, "webhooks", m_mutating_webhook, R, "name"),
};
MSG(m_mutating_webhook_configuration, "MutatingWebhookConfiguration",
	f_mutating_webhook_configuration);

static const struct pb_field f_param_kind[] = {
	FLD(1, "apiVersion", STRING, O),
	FLD(2, "kind", STRING, O),
};
MSG(m_param_kind, "ParamKind", f_param_kind);

static const struct pb_field f_match_resources[] = {
	SUB(1, "namespaceSelector", m_label_selector, PB_PTR),
	SUB(2, "objectSelector", m_label_selector, PB_PTR),
	SUB(3, "resourceRules", m_named_rule_with_operations, R),
	SUB(4, "excludeResourceRules", m_named_rule_with_operations, R),
	FLDG(7, "matchPolicy", STRING, PB_PTR, "v1.MatchPolicyType"),
};
MSG(m_match_resources, "MatchResources", f_match_resources);

static const struct pb_field f_validation[] = {
	FLD(1, "expression", STRING, RQ),
	FLD(2, "message", STRING, O),
	FLDG(3, "reason", STRING, PB_PTR, "v1.StatusReason"),
	FLD(4, "messageExpression", STRING, O),
};
MSG(m_validation, "Validation", f_validation);

static const struct pb_field f_audit_annotation[] = {
	FLD(1, "key", STRING, RQ),
	FLD(2, "valueExpression", STRING, RQ),
};
MSG(m_audit_annotation, "AuditAnnotation", f_audit_annotation);

static const struct pb_field f_variable[] = {
	FLD(1, "name", STRING, RQ),
	FLD(2, "expression", STRING, RQ),
};
MSG(m_variable, "Variable", f_variable);

static const struct pb_field f_vap_spec[] = {
	SUB(1, "paramKind", m_param_kind, PB_PTR),
	SUB(2, "matchConstraints", m_match_resources, PB_PTR),
	SUB(3, "validations", m_validation, R),
	FLDG(4, "failurePolicy", STRING, PB_PTR, "v1.FailurePolicyType"),
	SUB(5, "auditAnnotations", m_audit_annotation, R),
	SUBK(6, "matchConditions", m_match_condition, R, "name"),
	SUBK(7, "variables", m_variable, R, "name"),
};
MSG(m_vap_spec, "ValidatingAdmissionPolicySpec", f_vap_spec);

static const struct pb_field f_expression_warning[] = {
	FLD(2, "fieldRef", STRING, RQ),
	FLD(3, "warning", STRING, RQ),
};
MSG(m_expression_warning, "ExpressionWarning", f_expression_warning);

static const struct pb_field f_type_checking[] = {
	SUB(1, "expressionWarnings", m_expression_warning, R),
};
MSG(m_type_checking, "TypeChecking", f_type_checking);

static const struct pb_field f_vap_status[] = {
	FLD(1, "observedGeneration", INT64, O),
	SUB(2, "typeChecking", m_type_checking, PB_PTR),
	SUBK(3, "conditions", m_condition, R, "type"),
};
MSG(m_vap_status, "ValidatingAdmissionPolicyStatus", f_vap_status);

static const struct pb_field f_vap[] = {
	SUB(1, "metadata", m_object_meta, 0),
	SUB(2, "spec", m_vap_spec, 0),
	SUB(3, "status", m_vap_status, 0),
};
MSG(m_vap, "ValidatingAdmissionPolicy", f_vap);

static const struct pb_field f_param_ref[] = {
	FLD(1, "name", STRING, O),
	FLD(2, "namespace", STRING, O),
	SUB(3, "selector", m_label_selector, PB_PTR),
	FLDG(4, "parameterNotFoundAction", STRING, PB_PTR,
	 "v1.ParameterNotFoundActionType"),
};
MSG(m_param_ref, "ParamRef", f_param_ref);

static const struct pb_field f_vapb_spec[] = {
	FLD(1, "policyName", STRING, O),
	SUB(2, "paramRef", m_param_ref, PB_PTR),
	SUB(3, "matchResources", m_match_resources, PB_PTR),
	FLDG(4, "validationActions", STRING, R, "v1.ValidationAction"),
};
MSG(m_vapb_spec, "ValidatingAdmissionPolicyBindingSpec", f_vapb_spec);

static const struct pb_field f_vapb[] = {
	SUB(1, "metadata", m_object_meta, 0),
	SUB(2, "spec", m_vapb_spec, 0),
};
MSG(m_vapb, "ValidatingAdmissionPolicyBinding", f_vapb);

#undef MSG_PKG

/* apiextensions-apiserver pkg/apis/apiextensions/v1: CRDs are decoded from
   JSON (and YAML) only, with these tables for kube's strict decoding,
   their omitempty fields and OpenAPI (pb_kinds: json_only). */
#define MSG_PKG "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1"
/* A field of a recursive or wrapped schema type: sub is its schema. */
#define SUBT(n, name, type, sub, flags, go) \
	{ (n), (name), PB_##type, (flags), &(sub), NULL, (go) }

static const struct pb_field f_ext_docs[] = {
	FLD(1, "description", STRING, O),
	FLD(2, "url", STRING, O),
};
MSG(m_ext_docs, "ExternalDocumentation", f_ext_docs);

static const struct pb_field f_validation_rule[] = {
	FLD(1, "rule", STRING, RQ),
	FLD(2, "message", STRING, O),
	FLD(3, "messageExpression", STRING, O),
	FLDG(4, "reason", STRING, PB_PTR, "v1.FieldValueErrorReason"),
	FLD(5, "fieldPath", STRING, O),
	FLD(6, "optionalOldSelf", BOOL, PB_PTR),
};
MSG(m_validation_rule, "ValidationRule", f_validation_rule);

/* JSONSchemaProps refers to itself: declared here, defined below. */
static const struct pb_msg m_jsp;

/* Pointer fields (*string, *int64, *float64, *bool, *JSON) have no O:
   omitempty leaves out only their null. */
static const struct pb_field f_jsp[] = {
	FLD(1, "id", STRING, O),
	FLDG(2, "$schema", STRING, O, "v1.JSONSchemaURL"),
	FLD(3, "$ref", STRING, PB_PTR),
	FLD(4, "description", STRING, O),
	FLD(5, "type", STRING, O),
	FLD(6, "format", STRING, O),
	FLD(7, "title", STRING, O),
	FLDG(8, "default", JSON, PB_PTR, "v1.JSON"),
	FLD(9, "maximum", DOUBLE, PB_PTR),
	FLD(10, "exclusiveMaximum", BOOL, O),
	FLD(11, "minimum", DOUBLE, PB_PTR),
	FLD(12, "exclusiveMinimum", BOOL, O),
	FLD(13, "maxLength", INT64, PB_PTR),
	FLD(14, "minLength", INT64, PB_PTR),
	FLD(15, "pattern", STRING, O),
	FLD(16, "maxItems", INT64, PB_PTR),
	FLD(17, "minItems", INT64, PB_PTR),
	FLD(18, "uniqueItems", BOOL, O),
	FLD(19, "multipleOf", DOUBLE, PB_PTR),
	FLDG(20, "enum", JSON, R, "v1.JSON"),
	FLD(21, "maxProperties", INT64, PB_PTR),
	FLD(22, "minProperties", INT64, PB_PTR),
	FLD(23, "required", STRING, R),
	SUBT(24, "items", OR_ARRAY, m_jsp, PB_PTR, "v1.JSONSchemaPropsOrArray"),
	SUB(25, "allOf", m_jsp, R),
	SUB(26, "oneOf", m_jsp, R),
	SUB(27, "anyOf", m_jsp, R),
	SUB(28, "not", m_jsp, PB_PTR),
	SUB(29, "properties", m_jsp, PB_MAPV),
	SUBT(30, "additionalProperties", OR_BOOL, m_jsp, PB_PTR,
	     "v1.JSONSchemaPropsOrBool"),
	SUB(31, "patternProperties", m_jsp, PB_MAPV),
	SUBT(32, "dependencies", OR_STRARRAY, m_jsp, PB_MAPV,
	     "v1.JSONSchemaPropsOrStringArray"),
	SUBT(33, "additionalItems", OR_BOOL, m_jsp, PB_PTR,
	     "v1.JSONSchemaPropsOrBool"),
	SUB(34, "definitions", m_jsp, PB_MAPV),
	SUB(35, "externalDocs", m_ext_docs, PB_PTR),
	FLDG(36, "example", JSON, PB_PTR, "v1.JSON"),
	FLD(37, "nullable", BOOL, O),
	FLD(38, "x-kubernetes-preserve-unknown-fields", BOOL, PB_PTR),
	FLD(39, "x-kubernetes-embedded-resource", BOOL, O),
	FLD(40, "x-kubernetes-int-or-string", BOOL, O),
	FLD(41, "x-kubernetes-list-map-keys", STRING, R),
	FLD(42, "x-kubernetes-list-type", STRING, PB_PTR),
	FLD(43, "x-kubernetes-map-type", STRING, PB_PTR),
	SUBK(44, "x-kubernetes-validations", m_validation_rule, R, "rule"),
};
MSG(m_jsp, "JSONSchemaProps", f_jsp);

static const struct pb_field f_crd_validation[] = {
	SUB(1, "openAPIV3Schema", m_jsp, PB_PTR),
};
MSG(m_crd_validation, "CustomResourceValidation", f_crd_validation);

static const struct pb_field f_crd_sub_status[] = {0};
static const struct pb_msg m_crd_sub_status = {
	"CustomResourceSubresourceStatus", MSG_PKG, 0, f_crd_sub_status};

static const struct pb_field f_crd_sub_scale[] = {
	FLD(1, "specReplicasPath", STRING, RQ),
	FLD(2, "statusReplicasPath", STRING, RQ),
	FLD(3, "labelSelectorPath", STRING, PB_PTR),
};
MSG(m_crd_sub_scale, "CustomResourceSubresourceScale", f_crd_sub_scale);

static const struct pb_field f_crd_subresources[] = {
	SUB(1, "status", m_crd_sub_status, PB_PTR),
	SUB(2, "scale", m_crd_sub_scale, PB_PTR),
};
MSG(m_crd_subresources, "CustomResourceSubresources", f_crd_subresources);

static const struct pb_field f_crd_column[] = {
	FLD(1, "name", STRING, RQ),
	FLD(2, "type", STRING, RQ),
	FLD(3, "format", STRING, O),
	FLD(4, "description", STRING, O),
	FLD(5, "priority", INT32, O),
	FLD(6, "jsonPath", STRING, RQ),
};
MSG(m_crd_column, "CustomResourceColumnDefinition", f_crd_column);

static const struct pb_field f_selectable_field[] = {
	FLD(1, "jsonPath", STRING, RQ),
};
MSG(m_selectable_field, "SelectableField", f_selectable_field);

static const struct pb_field f_crd_version[] = {
	FLD(1, "name", STRING, RQ),
	FLD(2, "served", BOOL, RQ),
	FLD(3, "storage", BOOL, RQ),
	FLD(7, "deprecated", BOOL, O),
	FLD(8, "deprecationWarning", STRING, PB_PTR),
	SUB(4, "schema", m_crd_validation, PB_PTR),
	SUB(5, "subresources", m_crd_subresources, PB_PTR),
	SUB(6, "additionalPrinterColumns", m_crd_column, R),
	SUB(9, "selectableFields", m_selectable_field, R),
};
MSG(m_crd_version, "CustomResourceDefinitionVersion", f_crd_version);

static const struct pb_field f_crd_names[] = {
	FLD(1, "plural", STRING, RQ),
	FLD(2, "singular", STRING, O),
	FLD(3, "shortNames", STRING, R),
	FLD(4, "kind", STRING, RQ),
	FLD(5, "listKind", STRING, O),
	FLD(6, "categories", STRING, R),
};
MSG(m_crd_names, "CustomResourceDefinitionNames", f_crd_names);

static const struct pb_field f_service_ref[] = {
	FLD(1, "namespace", STRING, RQ),
	FLD(2, "name", STRING, RQ),
	FLD(3, "path", STRING, PB_PTR),
	FLD(4, "port", INT32, PB_PTR),
};
MSG(m_service_ref, "ServiceReference", f_service_ref);

static const struct pb_field f_webhook_client[] = {
	FLD(3, "url", STRING, PB_PTR),
	SUB(1, "service", m_service_ref, PB_PTR),
	FLD(2, "caBundle", BYTES, O),
};
MSG(m_webhook_client, "WebhookClientConfig", f_webhook_client);

static const struct pb_field f_webhook_conversion[] = {
	SUB(2, "clientConfig", m_webhook_client, PB_PTR),
	FLD(3, "conversionReviewVersions", STRING, R | RQ | PB_KEEPEMPTY),
};
MSG(m_webhook_conversion, "WebhookConversion", f_webhook_conversion);

static const struct pb_field f_crd_conversion[] = {
	FLDG(1, "strategy", STRING, RQ, "v1.ConversionStrategyType"),
	SUB(2, "webhook", m_webhook_conversion, PB_PTR),
};
MSG(m_crd_conversion, "CustomResourceConversion", f_crd_conversion);

static const struct pb_field f_crd_spec[] = {
	FLD(1, "group", STRING, RQ),
	SUB(3, "names", m_crd_names, RQ),
	FLDG(4, "scope", STRING, RQ, "v1.ResourceScope"),
	SUB(7, "versions", m_crd_version, R | RQ | PB_KEEPEMPTY),
	SUB(9, "conversion", m_crd_conversion, PB_PTR),
	FLD(10, "preserveUnknownFields", BOOL, O),
};
MSG(m_crd_spec, "CustomResourceDefinitionSpec", f_crd_spec);

static const struct pb_field f_crd_condition[] = {
	FLDG(1, "type", STRING, RQ, "v1.CustomResourceDefinitionConditionType"),
	FLDG(2, "status", STRING, RQ, "v1.ConditionStatus"),
	FLD(3, "lastTransitionTime", TIME, 0),
	FLD(4, "reason", STRING, O),
	FLD(5, "message", STRING, O),
	FLD(6, "observedGeneration", INT64, O),
};
MSG(m_crd_condition, "CustomResourceDefinitionCondition", f_crd_condition);

static const struct pb_field f_crd_status[] = {
	SUB(1, "conditions", m_crd_condition, R | PB_KEEPEMPTY),
	SUB(2, "acceptedNames", m_crd_names, 0),
	FLD(3, "storedVersions", STRING, R | PB_KEEPEMPTY),
	FLD(4, "observedGeneration", INT64, O),
};
MSG(m_crd_status, "CustomResourceDefinitionStatus", f_crd_status);

static const struct pb_field f_crd[] = {
	SUB(1, "metadata", m_object_meta, 0),
	SUB(2, "spec", m_crd_spec, RQ),
	SUB(3, "status", m_crd_status, 0),
};
MSG(m_crd, "CustomResourceDefinition", f_crd);

#undef MSG_PKG

/* k8s.io/api autoscaling/v1: the Scale of a custom resource's /scale */
#define MSG_PKG "io.k8s.api.autoscaling.v1"

static const struct pb_field f_scale_spec[] = {
    FLD(1, "replicas", INT32, O),
};
MSG(m_scale_spec, "ScaleSpec", f_scale_spec);

static const struct pb_field f_scale_status[] = {
    FLD(1, "replicas", INT32, 0),
    FLD(2, "selector", STRING, O),
};
MSG(m_scale_status, "ScaleStatus", f_scale_status);

static const struct pb_field f_scale[] = {
    SUB(1, "metadata", m_object_meta, 0),
    SUB(2, "spec", m_scale_spec, 0),
    SUB(3, "status", m_scale_status, 0),
};
MSG(m_scale, "Scale", f_scale);

#undef SUBT
#undef MSG_PKG
#undef O
#undef R
#undef RQ

/* The kinds a body may carry. api_version NULL: any group at version v1
   (client-go encodes DeleteOptions in the group version of the client that
   sends it, e.g. "v1" or "coordination.k8s.io/v1"). */
static const struct {
	const char *kind;
	const char *api_version;
	const struct pb_msg *msg;
	bool json_only; /* tables for JSON bodies alone: no protobuf decoding */
} pb_kinds[] = {
    {"Namespace", "v1", &m_namespace},
    {"ConfigMap", "v1", &m_config_map},
    {"Secret", "v1", &m_secret},
    {"ServiceAccount", "v1", &m_service_account},
    {"Service", "v1", &m_service},
    {"Endpoints", "v1", &m_endpoints},
    {"Event", "v1", &m_event},
    {"Lease", "coordination.k8s.io/v1", &m_lease},
    {"Role", "rbac.authorization.k8s.io/v1", &m_role},
    {"ClusterRole", "rbac.authorization.k8s.io/v1", &m_cluster_role},
    {"RoleBinding", "rbac.authorization.k8s.io/v1", &m_role_binding},
    {"ClusterRoleBinding", "rbac.authorization.k8s.io/v1",
     &m_cluster_role_binding},
    {"Event", "events.k8s.io/v1", &m_event_v1},
    {"SelfSubjectAccessReview", "authorization.k8s.io/v1", &m_ssar},
    {"SelfSubjectRulesReview", "authorization.k8s.io/v1", &m_ssrr},
    {"SelfSubjectReview", "authentication.k8s.io/v1", &m_ssr},
    {"SubjectAccessReview", "authorization.k8s.io/v1", &m_sar},
    {"LocalSubjectAccessReview", "authorization.k8s.io/v1", &m_lsar},
    {"TokenReview", "authentication.k8s.io/v1", &m_token_review},
    {"TokenRequest", "authentication.k8s.io/v1", &m_token_request},
    {"Scale", "autoscaling/v1", &m_scale},
    {"DeleteOptions", NULL, &m_delete_options},
    {"CustomResourceDefinition", "apiextensions.k8s.io/v1", &m_crd, true},
    {"ValidatingWebhookConfiguration", "admissionregistration.k8s.io/v1",
     &m_validating_webhook_configuration, true},
    {"MutatingWebhookConfiguration", "admissionregistration.k8s.io/v1",
     &m_mutating_webhook_configuration, true},
    {"ValidatingAdmissionPolicy", "admissionregistration.k8s.io/v1", &m_vap,
     true},
    {"ValidatingAdmissionPolicyBinding", "admissionregistration.k8s.io/v1",
     &m_vapb, true},
};

/* ------------------------------------------------------------------ */
/* Wire reader                                                          */
/* ------------------------------------------------------------------ */

/* Bytes left; a zeroed pbr (both NULL) is empty without pointer
   arithmetic on NULL. */
static size_t pbr_left(const struct pbr *r)
{
	return r->p == r->end ? 0 : (size_t)(r->end - r->p);
}

static lp_err rd_varint(struct pbr *r, uint64_t *out, const char *where,
			struct srv_error *err)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < PB_VARINT_MAX; i++) {
		if (r->p == r->end)
			return BAD(err, "truncated varint in %s", where);
		uint8_t b = *r->p++;
		if (i == PB_VARINT_MAX - 1 && b > 1)
			return BAD(err, "varint longer than 64 bits in %s", where);
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*out = v;
			return LP_OK;
		}
	}
	/* Not reached: the 10th byte either ends the varint or fails above. */
	return BAD(err, "varint longer than 64 bits in %s", where);
}

static lp_err rd_tag(struct pbr *r, uint32_t *num, unsigned *wt,
		     const char *where, struct srv_error *err)
{
	uint64_t t;
	lp_err rc = rd_varint(r, &t, where, err);
	if (rc)
		return rc;
	if ((t >> 3) == 0 || (t >> 3) > PB_FIELD_MAX)
		return BAD(err, "invalid field number %llu in %s",
			   (unsigned long long)(t >> 3), where);
	*num = (uint32_t)(t >> 3);
	*wt = (unsigned)(t & 7);
	return LP_OK;
}

/* A length-delimited payload: *sub covers it, r moves past it. */
static lp_err rd_len(struct pbr *r, struct pbr *sub, const char *where,
		     struct srv_error *err)
{
	uint64_t n;
	lp_err rc = rd_varint(r, &n, where, err);
	if (rc)
		return rc;
	if (n > (uint64_t)pbr_left(r))
		return BAD(err, "length %llu past the end of %s (%zu bytes left)",
			   (unsigned long long)n, where, pbr_left(r));
	sub->p = r->p;
	sub->end = r->p + (size_t)n;
	r->p = sub->end;
	return LP_OK;
}

static lp_err rd_fixed(struct pbr *r, size_t n, const char *where,
		       struct srv_error *err)
{
	if (pbr_left(r) < n)
		return BAD(err, "truncated %zu-byte value in %s", n, where);
	r->p += n;
	return LP_OK;
}

/* Skip a field we have no table entry for. Groups (deprecated since proto2
   and never written by Kubernetes) are refused rather than walked. */
static lp_err skip_field(struct pbr *r, unsigned wt, const char *where,
			 struct srv_error *err)
{
	uint64_t v;
	struct pbr sub;

	switch (wt) {
	case PB_WT_VARINT:
		return rd_varint(r, &v, where, err);
	case PB_WT_I64:
		return rd_fixed(r, 8, where, err);
	case PB_WT_LEN:
		return rd_len(r, &sub, where, err);
	case PB_WT_I32:
		return rd_fixed(r, 4, where, err);
	case PB_WT_SGROUP:
	case PB_WT_EGROUP:
		return BAD(err, "groups are not supported (in %s)", where);
	default:
		return BAD(err, "invalid wire type %u in %s", wt, where);
	}
}

/* protobuf int32 from a varint: the low 32 bits, two's complement. */
static int32_t to_int32(uint64_t v)
{
	uint32_t u = (uint32_t)v;
	return u <= INT32_MAX ? (int32_t)u : (int32_t)(u - 0x80000000u) + INT32_MIN;
}

static int64_t to_int64(uint64_t v)
{
	return v <= INT64_MAX ? (int64_t)v : (int64_t)(v - 0x8000000000000000u) + INT64_MIN;
}

/* ------------------------------------------------------------------ */
/* JSON values                                                          */
/* ------------------------------------------------------------------ */

/* A NUL-terminated copy of s with every byte that starts no valid UTF-8
   sequence replaced by U+FFFD, as Go's encoding/json writes strings.
   *buf new (free), *len its length without the terminator. */
static lp_err utf8_copy(const uint8_t *s, size_t n, char **buf, size_t *len,
			struct srv_error *err)
{
	*buf = reg_utf8_copy((const char *)s, n, len);
	return *buf ? LP_OK : NOMEM(err);
}

static lp_err make_string(const struct pbr *r, json_t **out,
			  struct srv_error *err)
{
	char *b;
	size_t n;
	lp_err rc = utf8_copy(r->p, pbr_left(r), &b, &n, err);
	if (rc)
		return rc;
	json_t *s = json_stringn_nocheck(b, n);
	free(b);
	if (!s)
		return NOMEM(err);
	*out = s;
	return LP_OK;
}

/* Standard base64 with padding, as encoding/json writes []byte. */
static lp_err make_base64(const struct pbr *r, json_t **out,
			  struct srv_error *err)
{
	char *b = reg_b64(r->p, pbr_left(r));
	json_t *j = b ? json_string_nocheck(b) : NULL;
	free(b);
	if (!j)
		return NOMEM(err);
	*out = j;
	return LP_OK;
}

/* Proleptic Gregorian date of a day count from 1970-01-01 (the usual
   era-of-400-years method: eras have exactly 146097 days). */
static void civil_date(int64_t days, int64_t *y, unsigned *mo, unsigned *d)
{
	days += 719468; /* shift the epoch to 0000-03-01 */
	int64_t era = (days >= 0 ? days : days - 146096) / 146097;
	unsigned doe = (unsigned)(days - era * 146097);		 /* [0, 146096] */
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100); /* [0, 365] */
	unsigned mp = (5 * doy + 2) / 153;			 /* March = 0 */

	*d = doy - (153 * mp + 2) / 5 + 1;
	*mo = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*mo <= 2);
}

/* "2006-01-02T15:04:05Z", or with micros "2006-01-02T15:04:05.000000Z".
   sec is within [PB_SEC_MIN, PB_SEC_MAX]. */
static json_t *format_time(int64_t sec, long micros, bool with_micros)
{
	int64_t days = sec / 86400, sod = sec % 86400;
	if (sod < 0) {
		sod += 86400;
		days--;
	}
	int64_t y;
	unsigned mo, d;
	civil_date(days, &y, &mo, &d);

	char buf[40];
	int n = snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d",
			 (int)y, mo, d, (int)(sod / 3600), (int)(sod / 60 % 60),
			 (int)(sod % 60));
	if (with_micros)
		snprintf(buf + n, sizeof buf - (size_t)n, ".%06ldZ", micros);
	else
		snprintf(buf + n, sizeof buf - (size_t)n, "Z");
	return json_string(buf);
}

/* A meta/v1 Timestamp payload {1: seconds int64, 2: nanos int32}. */
static lp_err read_timestamp(struct pbr r, int64_t *sec, int32_t *nanos,
			     struct srv_error *err)
{
	int64_t s = 0;
	int32_t ns = 0;

	while (r.p < r.end) {
		uint32_t num;
		unsigned wt;
		uint64_t v;
		lp_err rc = rd_tag(&r, &num, &wt, "Timestamp", err);
		if (rc)
			return rc;
		if (num != 1 && num != 2) {
			rc = skip_field(&r, wt, "Timestamp", err);
			if (rc)
				return rc;
			continue;
		}
		if (wt != PB_WT_VARINT)
			return BAD(err, "wrong wire type %u for field Timestamp.%s",
				   wt, num == 1 ? "seconds" : "nanos");
		rc = rd_varint(&r, &v, "Timestamp", err);
		if (rc)
			return rc;
		if (num == 1)
			s = to_int64(v);
		else
			ns = to_int32(v);
	}
	*sec = s;
	*nanos = ns;
	return LP_OK;
}

/* Time or MicroTime: *out a string, or JSON null for Go's zero time;
   *zero says which. */
static lp_err make_time(struct pbr r, bool micro, const char *what,
			json_t **out, bool *zero, struct srv_error *err)
{
	int64_t sec = 0;
	int32_t nanos = 0;
	long micros = 0;

	if (pbr_left(&r) == 0) {
		/* apimachinery: an empty payload is the zero time. */
		sec = PB_SEC_MIN;
	} else {
		lp_err rc = read_timestamp(r, &sec, &nanos, err);
		if (rc)
			return rc;
		if (micro) {
			/* Truncate toward zero to microseconds, then normalise
			   into [0, 1e9) as time.Unix does; |nanos| < 2^31 moves
			   sec by at most 3, so check sec first. */
			if (sec < PB_SEC_MIN - 3 || sec > PB_SEC_MAX + 3)
				return BAD(err, "%s out of range", what);
			int64_t ns = (int64_t)nanos - (int64_t)nanos % 1000;
			int64_t carry = ns / 1000000000;
			ns %= 1000000000;
			if (ns < 0) {
				ns += 1000000000;
				carry--;
			}
			sec += carry;
			micros = (long)(ns / 1000);
		}
		if (sec < PB_SEC_MIN || sec > PB_SEC_MAX)
			return BAD(err, "%s out of range (years 0001 to 9999)", what);
	}
	json_t *j;
	if (sec == PB_SEC_MIN && micros == 0) {
		*zero = true;
		j = json_null();
	} else {
		*zero = false;
		j = format_time(sec, micros, micro);
	}
	if (!j)
		return NOMEM(err);
	*out = j;
	return LP_OK;
}

/* util/intstr IntOrString {1: type int64, 2: intVal int32, 3: strVal}. */
static lp_err make_intorstr(struct pbr r, const char *what, json_t **out,
			    struct srv_error *err)
{
	int64_t type = 0;
	int32_t ival = 0;
	struct pbr sval = { r.p, r.p }; /* empty */

	while (r.p < r.end) {
		uint32_t num;
		unsigned wt;
		uint64_t v;
		lp_err rc = rd_tag(&r, &num, &wt, "IntOrString", err);
		if (rc)
			return rc;
		if (num < 1 || num > 3) {
			rc = skip_field(&r, wt, "IntOrString", err);
			if (rc)
				return rc;
			continue;
		}
		unsigned want = num == 3 ? PB_WT_LEN : PB_WT_VARINT;
		if (wt != want)
			return BAD(err, "wrong wire type %u for field IntOrString.%s",
				   wt, num == 1 ? "type" : num == 2 ? "intVal" : "strVal");
		if (num == 3) {
			rc = rd_len(&r, &sval, "IntOrString", err);
			if (rc)
				return rc;
			continue;
		}
		rc = rd_varint(&r, &v, "IntOrString", err);
		if (rc)
			return rc;
		if (num == 1)
			type = to_int64(v);
		else
			ival = to_int32(v);
	}
	if (type == 1)
		return make_string(&sval, out, err);
	if (type != 0)
		return BAD(err, "%s: impossible IntOrString type %lld", what,
			   (long long)type);
	json_t *j = json_integer(ival);
	if (!j)
		return NOMEM(err);
	*out = j;
	return LP_OK;
}

/* meta/v1 FieldsV1 {1: Raw bytes}: the JSON text it holds, or null. */
static lp_err make_fieldsv1(struct pbr r, const char *what, json_t **out,
			    struct srv_error *err)
{
	struct pbr raw = { r.p, r.p }; /* absent: empty */

	while (r.p < r.end) {
		uint32_t num;
		unsigned wt;
		lp_err rc = rd_tag(&r, &num, &wt, "FieldsV1", err);
		if (rc)
			return rc;
		if (num != 1) {
			rc = skip_field(&r, wt, "FieldsV1", err);
		} else if (wt != PB_WT_LEN) {
			return BAD(err, "wrong wire type %u for field FieldsV1.Raw", wt);
		} else {
			rc = rd_len(&r, &raw, "FieldsV1", err);
		}
		if (rc)
			return rc;
	}
	size_t n = pbr_left(&raw);
	if (n == 0) {
		*out = json_null();
		return LP_OK;
	}
	uint8_t c = raw.p[0];
	if (c == 0xf6 || (c >= 0xa0 && c <= 0xbf) || (c >= 0xc6 && c <= 0xdb))
		return BAD(err, "%s: CBOR-encoded fieldsV1 is not supported", what);
	json_error_t jerr;
	json_t *j =
	    reg_json_load((const char *)raw.p, n, JSON_DECODE_ANY, &jerr);
	/* jansson 2.14's parser returns on some failed allocations without a
	   message or code; every syntax error carries text. Its lexer reports
	   others as a syntax error, so out of memory here can also end as a
	   400 -- harmless, and unavoidable without our own JSON parser. */
	if (!j && (json_error_code(&jerr) == json_error_out_of_memory ||
		   jerr.text[0] == '\0'))
		return NOMEM(err);
	if (!j)
		return BAD(err, "%s: fieldsV1 is not valid JSON: %s", what, jerr.text);
	*out = j;
	return LP_OK;
}

/* ------------------------------------------------------------------ */
/* Table-driven decoding                                                */
/* ------------------------------------------------------------------ */

/* Store a decoded value (new, stolen even on failure) under f in obj. */
static lp_err emit(json_t *obj, const struct pb_field *f, json_t *val,
		   bool zero, struct srv_error *err)
{
	if (f->flags & PB_REP) {
		json_t *arr = json_object_get(obj, f->json);
		if (!arr) {
			arr = json_array();
			if (json_object_set_new(obj, f->json, arr)) {
				json_decref(val);
				return NOMEM(err);
			}
		}
		if (json_array_append_new(arr, val))
			return NOMEM(err);
		return LP_OK;
	}
	if (zero && (f->flags & PB_OMITZERO)) {
		json_decref(val);
		json_object_del(obj, f->json); /* a zero after a value: last wins */
		return LP_OK;
	}
	if (json_object_set_new(obj, f->json, val))
		return NOMEM(err);
	return LP_OK;
}

/* The object under f's name in obj, made if missing (maps, and merging of
   a repeated non-repeated message). Borrowed, valid while obj lives. */
static lp_err member_object(json_t *obj, const struct pb_field *f,
			    json_t **out, struct srv_error *err)
{
	json_t *o = json_object_get(obj, f->json);
	if (!o) {
		o = json_object();
		if (json_object_set_new(obj, f->json, o))
			return NOMEM(err);
	}
	*out = o;
	return LP_OK;
}

/* One map entry message {1: key string, 2: value string or bytes}. */
static lp_err decode_map_entry(const struct pb_msg *m, const struct pb_field *f,
			       struct pbr r, json_t *map, struct srv_error *err)
{
	struct pbr key = { r.p, r.p }, val = { r.p, r.p }; /* absent: "" */
	lp_err rc;

	while (r.p < r.end) {
		uint32_t num;
		unsigned wt;
		rc = rd_tag(&r, &num, &wt, m->name, err);
		if (rc)
			return rc;
		if (num != 1 && num != 2) {
			rc = skip_field(&r, wt, m->name, err);
		} else if (wt != PB_WT_LEN) {
			return BAD(err, "wrong wire type %u in an entry of %s.%s",
				   wt, m->name, f->json);
		} else {
			rc = rd_len(&r, num == 1 ? &key : &val, m->name, err);
		}
		if (rc)
			return rc;
	}

	char *k;
	size_t klen;
	rc = utf8_copy(key.p, pbr_left(&key), &k, &klen, err);
	if (rc)
		return rc;
	if (memchr(k, '\0', klen)) {
		free(k);
		return BAD(err, "a key of %s.%s contains NUL", m->name, f->json);
	}
	json_t *v;
	if (f->type == PB_MAP_BYTES)
		rc = make_base64(&val, &v, err);
	else
		rc = make_string(&val, &v, err);
	if (rc) {
		free(k);
		return rc;
	}
	int fail = json_object_set_new(map, k, v);
	free(k);
	return fail ? NOMEM(err) : LP_OK;
}

static lp_err decode_msg(const struct pb_msg *m, struct pbr r, json_t *obj,
			 unsigned depth, struct srv_error *err);

static lp_err decode_varint_field(const struct pb_msg *m,
				  const struct pb_field *f, uint64_t v,
				  json_t *obj, struct srv_error *err)
{
	json_t *j = NULL;
	bool zero = false;

	switch (f->type) {
	case PB_BOOL:
		zero = v == 0;
		j = json_boolean(!zero);
		break;
	case PB_INT32:
		zero = to_int32(v) == 0;
		j = json_integer(to_int32(v));
		break;
	case PB_INT64:
		zero = v == 0;
		j = json_integer(to_int64(v));
		break;
	case PB_STRING:
	case PB_BYTES:
	case PB_MSG:
	case PB_TIME:
	case PB_MICROTIME:
	case PB_INTORSTR:
	case PB_FIELDSV1:
	case PB_MAP_STRING:
	case PB_MAP_BYTES:
	case PB_DOUBLE:
	case PB_JSON:
	case PB_OR_BOOL:
	case PB_OR_ARRAY:
	case PB_OR_STRARRAY:
		/* The caller checked the wire type against the table. */
		return srv_error_set(err, LP_ERR(LP_E_BADREQUEST),
				     "protobuf body: field %s.%s is not a varint",
				     m->name, f->json);
	}
	if (!j)
		return NOMEM(err);
	return emit(obj, f, j, zero, err);
}

static lp_err decode_len_field(const struct pb_msg *m, const struct pb_field *f,
			       struct pbr sub, json_t *obj, unsigned depth,
			       struct srv_error *err)
{
	json_t *j = NULL, *o;
	bool zero = pbr_left(&sub) == 0;
	lp_err rc = LP_OK;
	char what[128];

	snprintf(what, sizeof what, "%s.%s", m->name, f->json);
	switch (f->type) {
	case PB_STRING:
		rc = make_string(&sub, &j, err);
		break;
	case PB_BYTES:
		rc = make_base64(&sub, &j, err);
		break;
	case PB_MSG:
		if (f->flags & PB_REP) {
			o = json_object();
			if (!o)
				return NOMEM(err);
			rc = decode_msg(f->sub, sub, o, depth + 1, err);
			if (rc) {
				json_decref(o);
				return rc;
			}
			return emit(obj, f, o, false, err);
		}
		/* Non-repeated: merge into what an earlier occurrence made. */
		rc = member_object(obj, f, &o, err);
		if (rc)
			return rc;
		return decode_msg(f->sub, sub, o, depth + 1, err);
	case PB_TIME:
	case PB_MICROTIME:
		rc = make_time(sub, f->type == PB_MICROTIME, what, &j, &zero, err);
		break;
	case PB_INTORSTR:
		rc = make_intorstr(sub, what, &j, err);
		zero = false; /* a Go value struct: omitempty never drops it */
		break;
	case PB_FIELDSV1:
		rc = make_fieldsv1(sub, what, &j, err);
		zero = false;
		break;
	case PB_MAP_STRING:
	case PB_MAP_BYTES:
		rc = member_object(obj, f, &o, err);
		if (rc)
			return rc;
		return decode_map_entry(m, f, sub, o, err);
	case PB_BOOL:
	case PB_INT32:
	case PB_INT64:
	case PB_DOUBLE:
		/* The caller checked the wire type against the table. */
		return BAD(err, "field %s is not length-delimited", what);
	case PB_JSON:
	case PB_OR_BOOL:
	case PB_OR_ARRAY:
	case PB_OR_STRARRAY:
		/* json_only tables: never decoded from protobuf */
		return BAD(err, "field %s has no protobuf decoding", what);
	}
	if (rc)
		return rc;
	return emit(obj, f, j, zero, err);
}

static unsigned wire_type_of(enum pb_type t)
{
	switch (t) {
	case PB_BOOL:
	case PB_INT32:
	case PB_INT64:
		return PB_WT_VARINT;
	case PB_STRING:
	case PB_BYTES:
	case PB_MSG:
	case PB_TIME:
	case PB_MICROTIME:
	case PB_INTORSTR:
	case PB_FIELDSV1:
	case PB_MAP_STRING:
	case PB_MAP_BYTES:
	case PB_JSON:
	case PB_OR_BOOL:
	case PB_OR_ARRAY:
	case PB_OR_STRARRAY:
		return PB_WT_LEN;
	case PB_DOUBLE:
		return PB_WT_I64;
	}
	return PB_WT_LEN;
}

const struct pb_msg *srv_pb_kind_msg(const char *kind, const char *api_version)
{
	for (size_t i = 0; i < sizeof pb_kinds / sizeof pb_kinds[0]; i++)
		if (pb_kinds[i].api_version && !strcmp(pb_kinds[i].kind, kind) &&
		    !strcmp(pb_kinds[i].api_version, api_version))
			return pb_kinds[i].msg;
	return NULL;
}

const struct pb_msg *srv_pb_object_meta(void)
{
	return &m_object_meta;
}

const struct pb_msg *srv_pb_delete_options(void)
{
	return &m_delete_options;
}

const struct pb_field *srv_pb_field(const struct pb_msg *m, const char *json)
{
	for (size_t i = 0; i < m->n_fields; i++)
		if (!strcmp(m->fields[i].json, json))
			return &m->fields[i];
	return NULL;
}

static const struct pb_field *find_field(const struct pb_msg *m, uint32_t num)
{
	for (size_t i = 0; i < m->n_fields; i++)
		if (m->fields[i].num == num)
			return &m->fields[i];
	return NULL;
}

/* Decode the message m in r into obj (borrowed, added to). */
static lp_err decode_msg(const struct pb_msg *m, struct pbr r, json_t *obj,
			 unsigned depth, struct srv_error *err)
{
	if (depth > PB_MAX_DEPTH)
		return BAD(err, "messages nested deeper than %d", PB_MAX_DEPTH);

	while (r.p < r.end) {
		uint32_t num;
		unsigned wt;
		lp_err rc = rd_tag(&r, &num, &wt, m->name, err);
		if (rc)
			return rc;
		const struct pb_field *f = find_field(m, num);
		if (!f) {
			rc = skip_field(&r, wt, m->name, err);
			if (rc)
				return rc;
			continue;
		}
		if (wt != wire_type_of(f->type))
			return BAD(err, "wrong wire type %u for field %s.%s",
				   wt, m->name, f->json);
		if (wt == PB_WT_VARINT) {
			uint64_t v;
			rc = rd_varint(&r, &v, m->name, err);
			if (!rc)
				rc = decode_varint_field(m, f, v, obj, err);
		} else {
			struct pbr sub;
			rc = rd_len(&r, &sub, m->name, err);
			if (!rc)
				rc = decode_len_field(m, f, sub, obj, depth, err);
		}
		if (rc)
			return rc;
	}
	return LP_OK;
}

/* ------------------------------------------------------------------ */
/* Envelope                                                             */
/* ------------------------------------------------------------------ */

struct pb_unknown {
	struct pbr api_version; /* typeMeta.apiVersion; empty if absent */
	struct pbr kind;	/* typeMeta.kind */
	struct pbr raw;		/* the object's own message */
};

static lp_err read_type_meta(struct pbr r, struct pb_unknown *u,
			     struct srv_error *err)
{
	while (r.p < r.end) {
		uint32_t num;
		unsigned wt;
		lp_err rc = rd_tag(&r, &num, &wt, "TypeMeta", err);
		if (rc)
			return rc;
		if (num != 1 && num != 2) {
			rc = skip_field(&r, wt, "TypeMeta", err);
		} else if (wt != PB_WT_LEN) {
			return BAD(err, "wrong wire type %u for field TypeMeta.%s",
				   wt, num == 1 ? "apiVersion" : "kind");
		} else {
			rc = rd_len(&r, num == 1 ? &u->api_version : &u->kind,
				    "TypeMeta", err);
		}
		if (rc)
			return rc;
	}
	return LP_OK;
}

/* runtime.Unknown {1: typeMeta, 2: raw, 3: contentEncoding, 4: contentType}.
   Like apimachinery we use raw as is and ignore the last two. */
static lp_err read_unknown(struct pbr r, struct pb_unknown *u,
			   struct srv_error *err)
{
	while (r.p < r.end) {
		uint32_t num;
		unsigned wt;
		struct pbr sub;
		lp_err rc = rd_tag(&r, &num, &wt, "Unknown", err);
		if (rc)
			return rc;
		if (num < 1 || num > 4) {
			rc = skip_field(&r, wt, "Unknown", err);
			if (rc)
				return rc;
			continue;
		}
		if (wt != PB_WT_LEN)
			return BAD(err, "wrong wire type %u for field %u of Unknown",
				   wt, num);
		rc = rd_len(&r, &sub, "Unknown", err);
		if (!rc && num == 1)
			rc = read_type_meta(sub, u, err);
		else if (!rc && num == 2)
			u->raw = sub;
		if (rc)
			return rc;
	}
	return LP_OK;
}

static bool span_is(const struct pbr *s, const char *str)
{
	size_t n = strlen(str);
	return pbr_left(s) == n && (n == 0 || memcmp(s->p, str, n) == 0);
}

/* apiVersion matches pattern: exactly, or "v1" in any group for NULL. An
   empty apiVersion matches anything: the request path supplies it. */
static bool version_matches(const struct pbr *v, const char *pattern)
{
	size_t n = pbr_left(v);

	if (n == 0)
		return true;
	if (pattern)
		return span_is(v, pattern);
	return span_is(v, "v1") ||
	       (n > 3 && memcmp(v->p + n - 3, "/v1", 3) == 0);
}

/* Printable-ASCII rendering of a client string for an error message (the
   message ends up in a JSON Status, which needs valid UTF-8). */
static void printable(const struct pbr *s, char *buf, size_t size)
{
	size_t n = pbr_left(s), o = 0;

	for (size_t i = 0; i < n && o + 1 < size; i++) {
		uint8_t c = s->p[i];
		buf[o++] = c >= 0x20 && c < 0x7f && c != '"' ? (char)c : '?';
	}
	buf[o] = '\0';
}

lp_err srv_pb_decode(const void *buf, size_t len, const char *expect_kind,
		     json_t **out, struct srv_error *err)
{
	const uint8_t *b = buf;
	struct pb_unknown u;
	struct pbr kind;
	const struct pb_msg *msg = NULL;
	json_t *obj = NULL, *s;
	lp_err rc;

	if (!b || len < sizeof pb_magic || memcmp(b, pb_magic, sizeof pb_magic))
		return BAD(err, "the data does not start with the Kubernetes "
				"protobuf prefix \"k8s\\x00\"");
	if (len == sizeof pb_magic)
		return BAD(err, "empty body after the prefix");

	memset(&u, 0, sizeof u);
	rc = read_unknown((struct pbr){ b + sizeof pb_magic, b + len }, &u, err);
	if (rc)
		return rc;

	kind = u.kind;
	if (pbr_left(&kind) == 0 && expect_kind)
		kind = (struct pbr){ (const uint8_t *)expect_kind,
				     (const uint8_t *)expect_kind + strlen(expect_kind) };
	if (pbr_left(&kind) == 0)
		return BAD(err, "Object 'Kind' is missing in the protobuf envelope");
	for (size_t i = 0; i < sizeof pb_kinds / sizeof pb_kinds[0]; i++) {
		if (!pb_kinds[i].json_only && span_is(&kind, pb_kinds[i].kind) &&
		    version_matches(&u.api_version, pb_kinds[i].api_version)) {
			msg = pb_kinds[i].msg;
			break;
		}
	}
	if (!msg) {
		char k[64], v[64];
		printable(&kind, k, sizeof k);
		printable(&u.api_version, v, sizeof v);
		/* known: a kind decoded here, in another version */
		bool known = false;
		for (size_t i = 0; i < sizeof pb_kinds / sizeof pb_kinds[0]; i++)
			known |= !pb_kinds[i].json_only &&
				 span_is(&kind, pb_kinds[i].kind);
		/* the kind the endpoint serves, which kube would decode: this
		   decoder's own limit */
		if (!known && expect_kind && span_is(&kind, expect_kind))
			return srv_error_set(
			    err, LP_ERR(LP_E_UNSUPPORTEDMEDIA),
			    "no protobuf decoding for kind \"%s\" in "
			    "version \"%s\"; send it as application/json",
			    k, v);
		/* a kind or version kube's scheme does not have either (or
		   one another endpoint serves): transformDecodeError's 400 */
		const char *sl = strchr(v, '/');
		if (expect_kind && !strcmp(expect_kind, "DeleteOptions"))
			return srv_error_set(
			    err, LP_ERR(LP_E_BADREQUEST),
			    "no kind \"%s\" is registered for version \"%s\" "
			    "in scheme \"k8s.io/apimachinery/pkg/apis/meta/"
			    "internalversion/scheme/register.go:28\"",
			    k, v);
		return srv_error_set(
		    err, LP_ERR(LP_E_BADREQUEST),
		    "%s in version \"%s\" cannot be handled as a %s: no kind "
		    "\"%s\" is registered for version \"%s\" in scheme "
		    "\"pkg/api/legacyscheme/scheme.go:30\"",
		    k, sl ? sl + 1 : v, expect_kind ? expect_kind : k, k, v);
	}

	obj = json_object();
	if (!obj)
		return NOMEM(err);
	if (pbr_left(&u.api_version)) {
		rc = make_string(&u.api_version, &s, err);
		if (rc)
			goto fail;
		if (json_object_set_new(obj, "apiVersion", s)) {
			rc = NOMEM(err);
			goto fail;
		}
	}
	if (pbr_left(&u.kind)) {
		rc = make_string(&u.kind, &s, err);
		if (rc)
			goto fail;
		if (json_object_set_new(obj, "kind", s)) {
			rc = NOMEM(err);
			goto fail;
		}
	}
	if (u.raw.p) {
		rc = decode_msg(msg, u.raw, obj, 1, err);
		if (rc)
			goto fail;
	}
	*out = obj;
	return LP_OK;

fail:
	json_decref(obj);
	return rc;
}
