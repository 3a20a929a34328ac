/* srv_error.c -- see srv_error.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "srv_error.h"

lp_err srv_error_set(struct srv_error *err, lp_err code, const char *fmt, ...)
{
	if (!err)
		return code;
	err->code = code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof err->message, fmt, ap);
	va_end(ap);
	return code;
}

void srv_error_cause(struct srv_error *err, const char *reason,
		     const char *field, const char *fmt, ...)
{
	if (!err || err->n_causes >= SRV_MAX_CAUSES)
		return;
	struct srv_cause *c = &err->causes[err->n_causes++];
	snprintf(c->reason, sizeof c->reason, "%s", reason ? reason : "");
	snprintf(c->field, sizeof c->field, "%s", field ? field : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->message, sizeof c->message, fmt, ap);
	va_end(ap);
}

void srv_error_clear(struct srv_error *err)
{
	if (err) {
		err->code = LP_OK;
		err->message[0] = 0;
		err->n_causes = 0;
		err->cont[0] = 0;
		err->no_reason = false;
		err->generic = false;
		err->on_kind = false;
		err->retry_soon = false;
		err->anonymous = false;
	}
}

lp_err srv_error_invalid(struct srv_error *err, const char *kind,
			 const char *group, const char *name)
{
	if (!err || err->n_causes == 0)
		return LP_OK;
	char msg[sizeof err->message];
	size_t off = 0;
	for (int i = 0; i < err->n_causes && off < sizeof msg; i++)
		off += (size_t)snprintf(msg + off, sizeof msg - off, "%s%s: %s",
					i ? ", " : "", err->causes[i].field,
					err->causes[i].message);
	return srv_error_set(err, LP_E_INVALID, "%s%s%s \"%s\" is invalid: %s%s%s",
			     kind, group && *group ? "." : "", group ? group : "",
			     name ? name : "", err->n_causes > 1 ? "[" : "", msg,
			     err->n_causes > 1 ? "]" : "");
}
