/* srv_error.c -- see srv_error.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "srv_error.h"

void srv_cut_utf8(char *s)
{
	size_t end = strlen(s), k = 0;
	while (k < 3 && k < end &&
	       ((unsigned char)s[end - 1 - k] & 0xC0) == 0x80)
		k++;
	if (k == end)
		return;
	unsigned char lead = (unsigned char)s[end - 1 - k];
	size_t want = lead >= 0xF0   ? 4
		      : lead >= 0xE0 ? 3
		      : lead >= 0xC0 ? 2
				     : 1;
	if (want > k + 1)
		s[end - 1 - k] = 0;
}

/* n: what printf said it wrote into s, of cap bytes. */
static void cut_whole(char *s, int n, size_t cap)
{
	if (n >= 0 && (size_t)n >= cap)
		srv_cut_utf8(s);
}

lp_err srv_error_set(struct srv_error *err, lp_err code, const char *fmt, ...)
{
	if (!err)
		return code;
	err->code = code;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(err->message, sizeof err->message, fmt, ap);
	va_end(ap);
	cut_whole(err->message, n, sizeof err->message);
	return code;
}

void srv_error_cause(struct srv_error *err, const char *reason,
		     const char *field, const char *fmt, ...)
{
	if (!err || err->n_causes >= SRV_MAX_CAUSES)
		return;
	struct srv_cause *c = &err->causes[err->n_causes++];
	int n =
	    snprintf(c->reason, sizeof c->reason, "%s", reason ? reason : "");
	cut_whole(c->reason, n, sizeof c->reason);
	n = snprintf(c->field, sizeof c->field, "%s", field ? field : "");
	cut_whole(c->field, n, sizeof c->field);
	va_list ap;
	va_start(ap, fmt);
	n = vsnprintf(c->message, sizeof c->message, fmt, ap);
	va_end(ap);
	cut_whole(c->message, n, sizeof c->message);
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
		err->no_retry = false;
		err->kind_as[0] = 0;
		err->group_as[0] = 0;
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
