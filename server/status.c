/*
 * status.c -- lp_err -> HTTP code and Kubernetes reason, in one table, and
 * the Status object (apimachinery pkg/api/errors).
 *
 * The switch has no default: -Wswitch-enum makes a new lp_err without a
 * mapping a build error, and tests/server/test_status.c walks the list.
 */
#include <stdlib.h>
#include <string.h>

#include "registry/json.h"
#include "status.h"

struct mapping {
	int code;
	const char *reason;
};

static struct mapping map(lp_err rc)
{
	switch (rc) {
	case LP_E_OK:
		return (struct mapping){200, ""};
	case LP_E_NOTFOUND:
		return (struct mapping){404, "NotFound"};
	case LP_E_EXISTS:
		return (struct mapping){409, "AlreadyExists"};
	case LP_E_CONFLICT:
		return (struct mapping){409, "Conflict"};
	case LP_E_COMPACTED:
		return (struct mapping){410, "Expired"};
	case LP_E_FUTURE:
		return (struct mapping){504, "Timeout"};
	case LP_E_KEYTOOLONG:
		return (struct mapping){422, "Invalid"};
	case LP_E_VALTOOLARGE:
		return (struct mapping){413, "RequestEntityTooLarge"};
	case LP_E_FULL:
		return (struct mapping){500, "InternalError"};
	case LP_E_READERSFULL:
		return (struct mapping){429, "TooManyRequests"};
	case LP_E_NOMEM:
		return (struct mapping){500, "InternalError"};
	case LP_E_IO:
		return (struct mapping){500, "InternalError"};
	case LP_E_CORRUPT:
		return (struct mapping){500, "InternalError"};
	case LP_E_FORMAT:
		return (struct mapping){500, "InternalError"};
	case LP_E_LOCKED:
		return (struct mapping){500, "InternalError"};
	case LP_E_AGAIN:
		return (struct mapping){500, "InternalError"};
	case LP_E_OVERFLOW:
		return (struct mapping){410, "Expired"};
	case LP_E_CLOSED:
		return (struct mapping){503, "ServiceUnavailable"};
	case LP_E_INVAL:
		return (struct mapping){500, "InternalError"};
	case LP_E_BADREQUEST:
		return (struct mapping){400, "BadRequest"};
	case LP_E_INVALID:
		return (struct mapping){422, "Invalid"};
	case LP_E_UNAUTHORIZED:
		return (struct mapping){401, "Unauthorized"};
	case LP_E_FORBIDDEN:
		return (struct mapping){403, "Forbidden"};
	case LP_E_NOTACCEPTABLE:
		return (struct mapping){406, "NotAcceptable"};
	case LP_E_UNSUPPORTEDMEDIA:
		return (struct mapping){415, "UnsupportedMediaType"};
	case LP_E_METHODNOTALLOWED:
		return (struct mapping){405, "MethodNotAllowed"};
	case LP_E_ENTITYTOOLARGE:
		return (struct mapping){413, "RequestEntityTooLarge"};
	case LP_E_TOOMANY:
		return (struct mapping){429, "TooManyRequests"};
	case LP_E_TIMEOUT:
		return (struct mapping){504, "Timeout"};
	case LP_E_UNAVAILABLE:
		return (struct mapping){503, "ServiceUnavailable"};
	case LP_E_INTERNAL:
		return (struct mapping){500, "InternalError"};
	case LP_E__COUNT:
		break;
	}
	return (struct mapping){500, "InternalError"};
}

int srv_status_code(lp_err rc)
{
	return map(rc).code;
}

const char *srv_status_reason(lp_err rc)
{
	return map(rc).reason;
}

/* v as a JSON string the way Go's encoder writes one: a byte that starts
   no valid UTF-8 sequence (a message may quote a client's bytes, cut
   anywhere) becomes U+FFFD. */
static json_t *go_string(const char *v)
{
	json_t *j = json_string(v);
	if (j)
		return j;
	size_t n;
	char *b = reg_utf8_copy(v, strlen(v), &n);
	j = b ? json_stringn(b, n) : NULL;
	free(b);
	return j;
}

static void set_str(json_t *o, const char *k, const char *v)
{
	if (v && *v)
		json_object_set_new(o, k, go_string(v));
}

json_t *srv_status_failure(const struct srv_error *err,
			   const struct srv_status_what *what, int retry_after)
{
	lp_err rc = err ? err->code : LP_E_IO;
	struct mapping m = map(rc);
	json_t *s = json_object();
	if (!s)
		return NULL;
	json_object_set_new(s, "kind", json_string("Status"));
	json_object_set_new(s, "apiVersion", json_string("v1"));
	json_t *lm = json_object();
	if (err && err->cont[0])
		json_object_set_new(lm, "continue", json_string(err->cont));
	json_object_set_new(s, "metadata", lm);
	json_object_set_new(s, "status", json_string("Failure"));
	const char *msg = err && err->message[0] ? err->message
						  : lp_strerror(rc);
	json_object_set_new(s, "message", go_string(msg));
	if (!err || !err->no_reason)
		set_str(s, "reason", m.reason);
	json_t *d = json_object();
	/* kube's NewBadRequest carries no details (a generic response's are
	   empty) */
	if (rc == LP_E_BADREQUEST)
		what = NULL;
	if (what) {
		set_str(d, "name", what->name);
		set_str(d, "group", what->group);
		set_str(d, "kind", what->kind);
		set_str(d, "uid", what->uid);
	}
	if (err && err->n_causes) {
		json_t *cs = json_array();
		for (int i = 0; i < err->n_causes; i++) {
			struct srv_cause c = srv_cause_get(err, i);
			json_t *o = json_object();
			set_str(o, "reason", c.reason);
			set_str(o, "message", c.message);
			set_str(o, "field", c.field);
			json_array_append_new(cs, o);
		}
		json_object_set_new(d, "causes", cs);
	}
	/* kube's NewInternalError: the error itself as the one cause */
	static const char ie[] = "Internal error occurred: ";
	if ((!err || !err->n_causes) && m.code == 500 &&
	    (!err || !err->no_reason) && !strncmp(msg, ie, sizeof ie - 1)) {
		json_t *o = json_object();
		set_str(o, "message", msg + sizeof ie - 1);
		json_object_set_new(d, "causes", json_pack("[o]", o));
	}
	if (retry_after > 0)
		json_object_set_new(d, "retryAfterSeconds",
				    json_integer(retry_after));
	/* kube's NewTimeoutError sets details whatever it holds */
	if (json_object_size(d) || (err && err->generic) ||
	    rc == LP_E_TIMEOUT)
		json_object_set_new(s, "details", d);
	else
		json_decref(d);
	json_object_set_new(s, "code", json_integer(m.code));
	return s;
}

json_t *srv_status_success(const struct srv_status_what *what)
{
	json_t *s = json_object();
	if (!s)
		return NULL;
	json_object_set_new(s, "kind", json_string("Status"));
	json_object_set_new(s, "apiVersion", json_string("v1"));
	json_object_set_new(s, "metadata", json_object());
	json_object_set_new(s, "status", json_string("Success"));
	json_t *d = json_object();
	if (what) {
		set_str(d, "name", what->name);
		set_str(d, "group", what->group);
		set_str(d, "kind", what->kind);
		set_str(d, "uid", what->uid);
	}
	json_object_set_new(s, "details", d);
	return s;
}
