/*
 * review.h -- answers to the self reviews (resources.h: srv_resource.review):
 * the self reviews, SubjectAccessReview and LocalSubjectAccessReview
 * (authorization.k8s.io/v1), SelfSubjectReview and TokenReview
 * (authentication.k8s.io/v1).
 */
#ifndef LAPIS_REVIEW_H
#define LAPIS_REVIEW_H

#include <jansson.h>

#include "http.h"
#include "resources.h"
#include "srv_error.h"

/* Fill obj's status (the decoded create body of review resource res,
   posted in namespace ns: "" for the cluster-scoped ones) for the identity
   of r. LP_OK, or kube's error in err. */
lp_err srv_review(struct srv_req *r, const struct srv_resource *res,
		  const char *ns, json_t *obj, struct srv_error *err);

#endif
