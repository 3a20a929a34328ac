/*
 * status.h -- every failure leaves as a Kubernetes Status (STYLE.md §3):
 * one table maps each lp_err to an HTTP code and a reason, and one builder
 * writes the Status JSON.
 *
 * Pure, any thread.
 */
#ifndef LAPIS_STATUS_H
#define LAPIS_STATUS_H

#include <jansson.h>

#include "srv_error.h"

/* The HTTP code and Status reason of an error code ("" for none). */
int srv_status_code(lp_err rc);
const char *srv_status_reason(lp_err rc);

/* What a Status names: details.name / group / kind. Any may be NULL. */
struct srv_status_what {
	const char *name;
	const char *group;
	const char *kind;
	const char *uid;
};

/*
 * Build a Failure Status for err (its code, message and causes). new.
 * retry_after > 0 adds details.retryAfterSeconds. Returns NULL only on OOM.
 */
json_t *srv_status_failure(const struct srv_error *err,
			   const struct srv_status_what *what, int retry_after);

/* A Success Status (deletes): {"kind":"Status",...,"status":"Success",
   "details":{...}}. new. */
json_t *srv_status_success(const struct srv_status_what *what);

#endif
