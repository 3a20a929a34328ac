/*
 * review.h -- answers to the self reviews (resources.h: srv_resource.review):
 * SelfSubjectAccessReview, SelfSubjectRulesReview (authorization.k8s.io/v1)
 * and SelfSubjectReview (authentication.k8s.io/v1).
 */
#ifndef LAPIS_REVIEW_H
#define LAPIS_REVIEW_H

#include <jansson.h>

#include "http.h"
#include "resources.h"
#include "srv_error.h"

/* Fill obj's status (the decoded create body of review resource res) for
   the identity of r. LP_OK, or kube's Invalid in err. */
lp_err srv_review(struct srv_req *r, const struct srv_resource *res,
		  json_t *obj, struct srv_error *err);

#endif
