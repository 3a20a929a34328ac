/*
 * pb.h -- Kubernetes protobuf request bodies, decoded to JSON at the edge.
 *
 * kubectl 1.32+ and newer client-go send application/vnd.kubernetes.protobuf
 * bodies for built-in kinds. A body is the 4-byte magic "k8s\0" followed by
 * a runtime.Unknown message (typeMeta {apiVersion, kind}, raw, contentEncoding,
 * contentType); raw holds the kind's own message. We decode the messages of
 * the built-in kinds lapis serves with a field table per message (field
 * numbers from k8s.io/api and apimachinery's generated.proto files) into the
 * JSON kube would accept for the same object.
 *
 * Pure, any thread.
 */
#ifndef LAPIS_PB_H
#define LAPIS_PB_H

#include <jansson.h>
#include <stddef.h>

#include "srv_error.h"

/*
 * Decode a protobuf body. Kinds: Namespace, ConfigMap, Secret,
 * ServiceAccount, Service, Endpoints, Event (core/v1), Lease
 * (coordination.k8s.io/v1), DeleteOptions (meta/v1, in whichever group
 * version "<group>/v1" or "v1" the client encodes it; also accepted with an
 * empty typeMeta when the caller says so through expect_kind), plus their
 * ObjectMeta, ListMeta-free nested messages. An empty apiVersion matches
 * any. The output carries apiVersion and kind from typeMeta. Unknown fields
 * are skipped as protobuf allows.
 * Errors: LP_E_BADREQUEST (bad magic, truncated or malformed wire data; a
 * kind or version kube's scheme lacks, in kube's transformDecodeError
 * words), LP_E_UNSUPPORTEDMEDIA (expect_kind itself, which has no table
 * here), LP_E_NOMEM. *out new.
 * expect_kind may be NULL; when given and typeMeta has no kind it names the
 * kind (the output then carries no kind).
 */
lp_err srv_pb_decode(const void *buf, size_t len, const char *expect_kind,
		     json_t **out, struct srv_error *err);

#endif
