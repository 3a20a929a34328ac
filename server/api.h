/*
 * api.h -- what the dispatcher calls and the reply helper it shares.
 */
#ifndef LAPIS_API_H
#define LAPIS_API_H

#include "http.h"
#include "resources.h"

/* Serve a resource request (objects.c): every verb on res. */
void srv_handle_resource(struct srv_req *r, const struct srv_resource *res);

/* Answer with bytes and the headers hdrs (name, value, ..., NULL; may be
   NULL); Cache-Control is "no-cache, private" unless hdrs name one. Takes
   buf (malloc'd, may be NULL when len is 0). */
void srv_reply_headers(struct srv_req *r, int code, const char *ctype,
		       char *buf, size_t len, const char *const *hdrs);

/* Answer with bytes plus one extra header (name may be NULL) and, with
   it, Vary: Accept; takes buf as srv_reply_headers. */
void srv_reply_extra(struct srv_req *r, int code, const char *ctype, char *buf,
		     size_t len, const char *hname, const char *hvalue);

/* Free the OpenAPI documents cached by group version (at exit, once no
   request runs). */
void srv_openapi_cache_free(void);

#endif
