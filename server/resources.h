/*
 * resources.h -- the descriptor of a served resource, and the static table of
 * built-ins (DESIGN.md: one serving path for everything; CRDs produce the same
 * descriptor later).
 *
 * Descriptors are immutable after start: any thread reads them, no lock.
 */
#ifndef LAPIS_RESOURCES_H
#define LAPIS_RESOURCES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "lapis/engine.h"
#include "patch.h"
#include "srv_error.h"

enum srv_verb_bit {
	SRV_V_GET = 1u << 0,
	SRV_V_LIST = 1u << 1,
	SRV_V_WATCH = 1u << 2,
	SRV_V_CREATE = 1u << 3,
	SRV_V_UPDATE = 1u << 4,
	SRV_V_PATCH = 1u << 5,
	SRV_V_DELETE = 1u << 6,
	SRV_V_DELETECOLLECTION = 1u << 7,
};
#define SRV_V_ALL 0xffu

struct srv_resource;
struct srv_crd_info;

/*
 * Another version of a built-in's storage: events.k8s.io/v1 Events are
 * core/v1 Events in storage, as in kube (the same keys, so each API sees
 * the other's writes). Objects are stored in the storage version's form;
 * to_served converts a stored tree in place into this version's form (as
 * Go's encoding of that version's struct would write it), to_stored the
 * other way, before a write is validated and stored.
 */
struct srv_view {
	const char *group;	/* the storage version's group ("" core) */
	const char *gv;		/* its apiVersion ("v1") */
	void (*to_served)(json_t *obj);
	void (*to_stored)(json_t *obj);
};

/* Per-type strategy: defaults and validation of a new or updated object.
   old is NULL on create. Fill err (LP_E_INVALID with causes, or
   LP_E_BADREQUEST) and return its code on failure. */
typedef lp_err (*srv_prepare_fn)(const struct srv_resource *r, json_t *obj,
				 const json_t *old, struct srv_error *err);

/* A printer column of Table output. */
/* ObjectMeta's docs for name and creationTimestamp, which kube's Table
   columns Name and Age (or Created At) describe themselves with. */
#define SRV_DESC_NAME                                                          \
	"Name must be unique within a namespace. Is required when creating "   \
	"resources, although some resources may allow a client to request the " \
	"generation of an appropriate name automatically. Name is primarily "  \
	"intended for creation idempotence and configuration definition. "     \
	"Cannot be updated. More info: "                                       \
	"https://kubernetes.io/docs/concepts/overview/working-with-objects/"   \
	"names#names"
#define SRV_DESC_CREATED                                                       \
	"CreationTimestamp is a timestamp representing the server time when "  \
	"this object was created. It is not guaranteed to be set in "          \
	"happens-before order across separate operations. Clients may not "    \
	"set this value. It is represented in RFC3339 form and is in UTC.\n\n" \
	"Populated by the system. Read-only. Null for lists. More info: "      \
	"https://git.k8s.io/community/contributors/devel/sig-architecture/"    \
	"api-conventions.md#metadata"

struct srv_jsonpath;

struct srv_column {
	const char *name;
	const char *type;	/* string, integer, date, ... */
	const char *format;	/* "name" for the first column, else "" */
	const char *desc;
	int priority;
	/* The cell of obj; new reference. NULL: evaluate jsonpath. */
	json_t *(*cell)(const json_t *obj);
	const char *jsonpath;	/* custom resources' printer columns */
	const struct srv_jsonpath *path; /* jsonpath, parsed (jsonpath.h) */
};

struct srv_resource {
	const char *group;	 /* "" for core */
	const char *version;
	const char *resource;	 /* plural */
	const char *kind;
	const char *list_kind;
	const char *singular;
	const char *const *short_names; /* NULL-terminated or NULL */
	const char *const *categories;
	bool namespaced;
	unsigned verbs;
	const char *const *subresources; /* "status", "finalize", ... */
	bool unconditional_update; /* PUT without resourceVersion allowed */
	bool create_on_update;	 /* PUT of a missing object creates it (201),
				    kube's AllowCreateOnUpdate */
	bool return_deleted;	 /* DELETE answers the deleted object (kube's
				    ReturnDeletedObject) */
	const char *const *fields; /* extra field selectors (beyond
				       metadata.name/namespace) */
	srv_prepare_fn prepare;
	srv_prepare_fn prepare_status; /* the /status endpoint's; NULL: none */
	/* strategic merge patch: list strategies; NULL = every list atomic */
	enum srv_list_strategy (*smp_list)(void *ud, const char *path,
					   const char **merge_key);
	const struct srv_column *columns; /* terminated by name NULL */
	/* A custom resource whose CRD is being deleted: discovery lists
	   delete, deletecollection, get, list, watch only, and create is 405;
	   the other verbs still work (reference §8.4). */
	bool terminating;
	bool custom;		 /* a custom resource: JSON and YAML bodies only,
				    no strategic merge patch (415) */
	const struct srv_crd_info *crd; /* custom resources: serving info */
	/* CustomResourceDefinitions: after a write, refresh the serving map;
	   before a delete, remove the instances. NULL for others. */
	/* After a committed (not dry-run) write of the object named name, or
	   of several objects (name NULL). */
	void (*after_write)(eng *e, const char *name);
	lp_err (*before_delete)(eng *e, const json_t *obj);
	const struct srv_view *view; /* stored as another version; NULL */
	/* kube's Warning on every request for the resource (its deprecation
	   notice); NULL: none. */
	const char *warning;
	/* The warnings kube's strategy gives a create or main update of obj
	   (old NULL for a create): WarningsOnCreate/WarningsOnUpdate, each
	   through warn. NULL: none. */
	void (*warnings)(const json_t *obj, const json_t *old,
			 void (*warn)(void *ud, const char *text), void *ud);
	/* A review (SelfSubjectAccessReview, ...): create only, answered from
	   the request by review.c, nothing stored. */
	bool review;
};

/* The verbs of a subresource (SRV_V_* bits): finalize takes update,
   token create, status and scale get, update and patch. Discovery and the
   dispatch both ask here. */
unsigned srv_subresource_verbs(const char *sub);

/* The type a subresource takes and answers when it is not its resource's
   kind (serviceaccounts/token: TokenRequest, authentication.k8s.io/v1; a
   custom resource's scale: autoscaling/v1 Scale), else NULL. Its descriptor decodes and checks the body, is in no table
   and serves nothing on its own. */
const struct srv_resource *srv_subresource_type(const char *sub);

/* Whether a Service spec holds node ports (type NodePort or
   LoadBalancer), and a health check node port (a LoadBalancer with
   externalTrafficPolicy Local). */
bool srv_service_needs_node_ports(const json_t *spec);
bool srv_service_needs_health_port(const json_t *spec);

/* The built-in table and its size. */
extern const struct srv_resource srv_builtin[];
extern const size_t srv_n_builtin;

/* Find a built-in by group, version and plural; NULL when none. */
const struct srv_resource *srv_resource_find(const char *group,
					     const char *version,
					     const char *resource);

/*
 * Find any served resource, built-in or custom (crd.c). A custom one lives
 * in the CRD serving map: *hold receives a reference to keep it alive
 * (release with srv_resources_release; NULL when nothing is held).
 */
const struct srv_resource *srv_resource_lookup(const char *group,
					       const char *version,
					       const char *resource,
					       void **hold);

/* Every served resource (built-ins first), for discovery and OpenAPI:
   *out is a new array of borrowed pointers valid while *hold is held. */
size_t srv_resources_all(const struct srv_resource ***out, void **hold);
/* The same and, last, the storage version of each CRD none of whose
   versions is served: what the controllers reach objects through (kube's
   CRD finalizer deletes through the storage version's store, served or
   not). */
size_t srv_resources_stored(const struct srv_resource ***out, void **hold);
void srv_resources_release(void *hold);
/* The generation of the serving map hold keeps (0: none held): a number
   of its own for every map published, never reused, so two descriptors
   with the same one come from the same immutable map. */
uint64_t srv_resources_hold_gen(const void *hold);

/* Does r serve the subresource sub ("status", "scale", ...)? */
bool srv_resource_has_sub(const struct srv_resource *r, const char *sub);

/* "<resource>" or "<resource>.<group>" into buf (Status messages). */
const char *srv_resource_gr(const struct srv_resource *r, char *buf,
			    size_t n);
/* "v1" or "<group>/<version>". */
const char *srv_resource_gv(const struct srv_resource *r, char *buf,
			    size_t n);

/* The etcd key kube-apiserver keeps an object of r under, into buf, for
   the words of its StorageErrors: "/registry/configmaps/NS/NAME",
   "/registry/services/specs/NS/NAME", "/registry/GROUP/RESOURCE/NAME"
   for CRDs and custom resources. */
const char *srv_resource_kube_key(const struct srv_resource *r,
				  const char *ns, const char *name, char *buf,
				  size_t n);

/* The group whose keys hold r's objects (r->view's, else r's own). */
const char *srv_resource_store_group(const struct srv_resource *r);
/* The apiVersion of r's stored objects into buf. */
const char *srv_resource_store_gv(const struct srv_resource *r, char *buf,
				  size_t n);
/* Whether kind is served in API versions that name its fields apart (an
   Event: core/v1 and events.k8s.io/v1), so that field sets recorded in
   one version are renamed for another (srv_fields_convert). */
bool srv_kind_renames_fields(const char *kind);
/* Rename the members of fields, a FieldsV1 set of a kind's object, from
   the names of API version from_gv to those of to_gv ("v1",
   "<group>/<version>"). Nothing changes for other kinds or versions. */
void srv_fields_convert(const char *kind, const char *from_gv,
			const char *to_gv, json_t *fields);
/* srv_resource_convert of bytes last written at revision written (0: the
   revision they carry); see srv_cr_convert_at. */
lp_err srv_resource_convert_at(const struct srv_resource *r, const char *bytes,
			       size_t len, int64_t written, char **out,
			       size_t *out_len, struct srv_error *err);
/* Whether stored bytes need srv_resource_convert to serve r. */
bool srv_resource_needs_convert(const struct srv_resource *r);
/* Stored bytes in the version r serves: *out (new) is set when they
   differ, NULL when the bytes serve as they are (a custom resource's other
   version, a view). */
lp_err srv_resource_convert(const struct srv_resource *r, const char *bytes,
			    size_t len, char **out, size_t *out_len,
			    struct srv_error *err);

/* Field value for field selectors: metadata.name, metadata.namespace, or one
   of r->fields. An entry "label=path" names the label and the dotted path
   into the stored object it reads ("p|q": p's value unless empty or
   missing, then q's); a plain entry is both. Strings as they
   are (one holding a NUL as srv_fsel_unequal), bools and numbers as text.
   Returns a borrowed string or NULL. buf holds converted values. */
const char *srv_resource_field(const struct srv_resource *r, const json_t *obj,
			       const char *field, char *buf, size_t n);

/* kube's initIPFamilyFields (service storage, alloc.go) for lapis's one
   IPv4 service range: defaults spec's ipFamilyPolicy (the old spec's, ospec
   NULL for a create; RequireDualStack for a headless Service without
   selector; else SingleStack) and ipFamilies, and refuses what the range
   cannot give; a create's clusterIP fills its clusterIPs first. true: it added causes to err (kube answers them alone,
   before validation). resources.c. */
bool srv_service_ip_families(json_t *spec, const json_t *ospec,
			     struct srv_error *err);

/* A qualified name, as label keys: [DNS-subdomain prefix/]name. */
bool srv_is_qualified_name(const char *k);
/* kube's IsQualifiedName: its complaints about k in its order (at most
   4, into msgs, static strings); 0 when k is a qualified name. */
int srv_qname_problems(const char *k, const char *msgs[4]);
/* A cause on field for each of them, showing shown (k itself, or the
   annotation key kube checked lowercased). */
struct srv_error;
void srv_qname_causes(struct srv_error *err, const char *field,
		      const char *shown, const char *k);
/* kube's validateFinalizerName for a Namespace's spec.finalizers: the
   qualified-name rule, and a name without a prefix must be a standard
   finalizer (kubernetes, orphan, foregroundDeletion). objects.c. */
void srv_ns_finalizer_causes(struct srv_error *err, const char *field,
			     const char *n);
/* A DNS-1123 label of at most max characters; a DNS-1123 subdomain; a
   label value (empty, or at most 63 of [-_.a-zA-Z0-9], alphanumeric at
   both ends). objects.c. */
bool srv_is_dns_label(const char *s, size_t max);
bool srv_is_dns_subdomain(const char *s);
/* The patterns alone, whatever the length: a DNS-1123 subdomain (labels
   of [a-z0-9]([-a-z0-9]*[a-z0-9])? joined by dots) and a DNS-1035 label
   ([a-z]([-a-z0-9]*[a-z0-9])?). */
bool srv_dns_subdomain_like(const char *s);
bool srv_dns1035_like(const char *s);
bool srv_is_label_value(const char *v);
/* The label-value pattern alone, whatever the length:
   (([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])? */
bool srv_label_value_like(const char *s);

/* apimachinery's IsDNS1123Label, IsDNS1123Subdomain, IsDNS1035Label and
   IsValidLabelValue: kube's messages for s, the length first (a DNS-1123
   label that is a valid subdomain "must not contain dots"); returns how
   many (0: valid). srv_name_causes adds one FieldValueInvalid cause on
   field per message, the value quoted as Go's %q, and says whether s
   passed. objects.c. */
enum srv_name_rule {
	SRV_RULE_DNS_LABEL,
	SRV_RULE_DNS_SUBDOMAIN,
	SRV_RULE_DNS1035,
	SRV_RULE_LABEL_VALUE,
};
int srv_name_problems(enum srv_name_rule rule, const char *s,
		      const char *msgs[2]);
/* One FieldValueInvalid cause on field per message, "Invalid value:
   <value quoted as Go's %q>: <message>", as apimachinery's validators
   turn each complaint into a field.Invalid. */
void srv_invalid_causes(struct srv_error *err, const char *field,
			const char *value, const char *const *msgs, int n);
bool srv_name_causes(struct srv_error *err, const char *field,
		     enum srv_name_rule rule, const char *s);
/* kube's IsValidPathSegmentName (not "." or "..", no '/' or '%') as
   srv_invalid_causes on field. */
void srv_path_segment_causes(struct srv_error *err, const char *field,
			     const char *name);

/* kube's texts for those (apimachinery's validation.RegexError: the rule,
   examples, the regular expression). */
#define SRV_MSG_QNAME_RULE                                                    \
	"must consist of alphanumeric characters, '-', '_' or '.', "           \
	"and must start and end with an alphanumeric character (e.g. "         \
	"'MyName',  or 'my.name',  or '123-abc', regex used for validation "   \
	"is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define SRV_MSG_QNAME "name part " SRV_MSG_QNAME_RULE
#define SRV_MSG_LABEL_VALUE                                                   \
	"a valid label must be an empty string or consist of alphanumeric "    \
	"characters, '-', '_' or '.', and must start and end with an "         \
	"alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "         \
	"'12345', regex used for validation is "                               \
	"'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
#define SRV_MSG_DNS_SUBDOMAIN                                                 \
	"a lowercase RFC 1123 subdomain must consist of lower case "           \
	"alphanumeric characters, '-' or '.', and must start and end with an " \
	"alphanumeric character (e.g. 'example.com', regex used for "          \
	"validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"   \
	"[a-z0-9])?)*')"
#define SRV_MSG_DNS1035                                                       \
	"a DNS-1035 label must consist of lower case alphanumeric characters " \
	"or '-', start with an alphabetic character, and end with an "        \
	"alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used "   \
	"for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
#define SRV_MSG_DNS_LABEL                                                     \
	"a lowercase RFC 1123 label must consist of lower case alphanumeric "  \
	"characters or '-', and must start and end with an alphanumeric "      \
	"character (e.g. 'my-name',  or '123-abc', regex used for validation " \
	"is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"

#endif
