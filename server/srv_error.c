/* srv_error.c -- see srv_error.h. */
#include <stdarg.h>
#include <stdint.h>
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

/* Write into err's text at text_len, at most cap bytes with its NUL, cut
   at a rune when longer; the offset written at, or UINT32_MAX when the
   text is full. */
static uint32_t put_text(struct srv_error *err, size_t cap, const char *fmt,
			 va_list ap)
{
	size_t room = sizeof err->text - err->text_len;
	if (room < 1)
		return UINT32_MAX;
	if (cap > room)
		cap = room;
	char *at = err->text + err->text_len;
	int n = vsnprintf(at, cap, fmt, ap);
	if (n < 0)
		at[0] = 0;
	else if ((size_t)n >= cap) {
		/* the whole text did not fit: a full arena drops the cause,
		   a text over its own cap is cut */
		if (cap == room)
			return UINT32_MAX;
		srv_cut_utf8(at);
	}
	uint32_t off = err->text_len;
	err->text_len += (uint32_t)strlen(at) + 1;
	return off;
}

static uint32_t put_str(struct srv_error *err, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	uint32_t off = put_text(err, cap, fmt, ap);
	va_end(ap);
	return off;
}

void srv_error_cause(struct srv_error *err, const char *reason,
		     const char *field, const char *fmt, ...)
{
	if (!err || err->n_causes >= SRV_MAX_CAUSES)
		return;
	uint32_t mark = err->text_len;
	struct srv_cause_at c;
	c.reason = put_str(err, 64, "%s", reason ? reason : "");
	c.field = put_str(err, SRV_CAUSE_FIELD_MAX, "%s", field ? field : "");
	va_list ap;
	va_start(ap, fmt);
	c.message = put_text(err, SRV_CAUSE_MESSAGE_MAX, fmt, ap);
	va_end(ap);
	if (c.reason == UINT32_MAX || c.field == UINT32_MAX ||
	    c.message == UINT32_MAX) {
		err->text_len = mark; /* no room left: dropped whole */
		return;
	}
	err->causes[err->n_causes++] = c;
}

struct srv_cause srv_cause_get(const struct srv_error *err, int i)
{
	const struct srv_cause_at *c = &err->causes[i];
	return (struct srv_cause){.reason = err->text + c->reason,
				  .field = err->text + c->field,
				  .message = err->text + c->message};
}

void srv_error_clear(struct srv_error *err)
{
	if (err) {
		err->code = LP_OK;
		err->message[0] = 0;
		err->n_causes = 0;
		err->text_len = 0;
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

int srv_error_aggregate(const struct srv_error *err, const char *cut, char *out,
			size_t n)
{
	size_t off = 0, cl = cut ? strlen(cut) : 0;
	int shown = 0;
	out[0] = 0;
	for (int i = 0; i < err->n_causes && off < n; i++) {
		struct srv_cause c = srv_cause_get(err, i);
		bool again = false;
		for (int j = 0; j < i && !again; j++) {
			struct srv_cause d = srv_cause_get(err, j);
			again = !strcmp(c.field, d.field) &&
				!strcmp(c.message, d.message);
		}
		if (again)
			continue;
		const char *f =
		    cl && !strncmp(c.field, cut, cl) ? c.field + cl : c.field;
		off += (size_t)snprintf(out + off, n - off, "%s%s: %s",
					shown++ ? ", " : "", f, c.message);
	}
	if (shown > 1 && n > 2) { /* inside [ ], the ] lost when cut */
		size_t len = strlen(out);
		if (len > n - 2)
			len = n - 2;
		memmove(out + 1, out, len);
		out[0] = '[';
		out[len + 1] = 0;
		if (len + 2 < n) {
			out[len + 1] = ']';
			out[len + 2] = 0;
		}
	}
	return shown;
}

lp_err srv_error_invalid(struct srv_error *err, const char *kind,
			 const char *group, const char *name)
{
	if (!err || err->n_causes == 0)
		return LP_OK;
	char msg[sizeof err->message];
	srv_error_aggregate(err, NULL, msg, sizeof msg);
	return srv_error_set(err, LP_E_INVALID, "%s%s%s \"%s\" is invalid: %s",
			     kind, group && *group ? "." : "",
			     group ? group : "", name ? name : "", msg);
}
