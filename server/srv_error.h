/*
 * srv_error.h -- the words that go with an lp_err on the server side
 * (STYLE.md §3 "Messages"): a message and, for Invalid, field causes. Filled
 * where a failure is found; server/status.c turns it into a Kubernetes
 * Status at the edge.
 */
#ifndef LAPIS_SRV_ERROR_H
#define LAPIS_SRV_ERROR_H

#include <stdbool.h>
#include <stdint.h>

#include "lapis/err.h"

/* Causes: kube lists every one; lapis keeps as many as fit its text
   (SRV_CAUSE_TEXT bytes for all their reasons, fields and messages) and
   SRV_MAX_CAUSES, and drops the rest. One cause's field is cut at
   SRV_CAUSE_FIELD_MAX bytes and its message at SRV_CAUSE_MESSAGE_MAX
   (above kube's 5 KiB for a messageExpression's result). */
#define SRV_MAX_CAUSES 256
#define SRV_CAUSE_TEXT (32 * 1024)
#define SRV_CAUSE_FIELD_MAX 1024
#define SRV_CAUSE_MESSAGE_MAX (6 * 1024)

/* Where a cause's texts start in srv_error.text. */
struct srv_cause_at {
	uint32_t reason, field, message;
};

/* A cause as its reader sees it: pointers into its srv_error, valid
   while that is neither cleared nor changed. */
struct srv_cause {
	const char *reason; /* FieldValueInvalid, FieldValueRequired, ... */
	const char *field;  /* e.g. metadata.name, spec.ports[0].port */
	const char *message;
};

struct srv_error {
	lp_err code;	   /* LP_OK while nothing failed */
	char message[16384];
	int n_causes;
	uint32_t text_len; /* bytes of text in use */
	struct srv_cause_at causes[SRV_MAX_CAUSES];
	char text[SRV_CAUSE_TEXT];
	/* Expired lists: the token the Status offers in metadata.continue
	   ("" for none); srv_error_clear empties it. */
	char cont[2048];
	/* A plain Go error in kube (ErrorToAPIStatus): 500 with no reason. */
	bool no_reason;
	/* kube's NewGenericServerResponse: details present, even empty. */
	bool generic;
	/* details.kind is the Kind, not the resource (kube's rest.BeforeDelete
	   builds its conflicts on a GroupResource naming the Kind). */
	bool on_kind;
	/* No name, group or kind in details (kube's NewInvalid on an empty
	   GroupKind and name: a patch its decoder refused). */
	bool anonymous;
	/* details.kind and group as an Invalid names them when not the
	   resource's own (a custom resource sent with another kind: kube
	   names it by the kind it says); "" for the resource's. */
	char kind_as[256], group_as[256];
	/* details.retryAfterSeconds 1 and Retry-After (kube's
	   NewGenerateNameConflict: every generated name was taken). */
	bool retry_soon;
	/* No retryAfterSeconds where its code would add one (a too large
	   resourceVersion the etcd store finds itself:
	   validateMinimumResourceVersion's retry of 0 seconds). */
	bool no_retry;
};

/* s was cut to fit a buffer: drop a UTF-8 sequence its end leaves
   incomplete, so that the text stays valid wherever it was. */
void srv_cut_utf8(char *s);

/* Set code and message (printf-style); keeps causes. err may be NULL.
   Texts too long for their buffers (here and in srv_error_cause) are cut
   at a UTF-8 character boundary.
   Returns code, so `return srv_error_set(err, LP_E_BADREQUEST, ...)` works. */
lp_err srv_error_set(struct srv_error *err, lp_err code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Add a field cause (dropped when SRV_MAX_CAUSES are there or its texts
   no longer fit). err may be NULL. */
void srv_error_cause(struct srv_error *err, const char *reason,
		     const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Cause i (< n_causes) of err. */
struct srv_cause srv_cause_get(const struct srv_error *err, int i);

/* kube's ErrorList.ToAggregate of err's causes into out (n bytes):
   "<field>: <message>" alone, several inside [ ] joined by ", ", a cause
   whose text repeats an earlier one's said once; fields lose the prefix
   cut (may be NULL) when they start with it. Returns how many are shown. */
int srv_error_aggregate(const struct srv_error *err, const char *cut, char *out,
			size_t n);

/* When causes were added, make err kube's Invalid: LP_E_INVALID with the
   message `<Kind>[.<group>] "<name>" is invalid: <field>: <body>` (several
   causes inside [ ]). Returns LP_OK when there are no causes. */
lp_err srv_error_invalid(struct srv_error *err, const char *kind,
			 const char *group, const char *name);

/* Clear to LP_OK: code, an empty message, no causes. Cheap (a struct is
   about 53 KB, and `= {0}` zeroes all of it): the causes array is only
   ever read below n_causes and the message up to its NUL, so the rest is
   left as it was. Prefer it to `= {0}` on a per-request path. */
void srv_error_clear(struct srv_error *err);

#endif
