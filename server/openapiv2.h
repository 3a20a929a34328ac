/*
 * openapiv2.h -- the /openapi/v2 document in the protobuf encoding
 * kubectl 1.27 and 1.28 ask for.
 *
 * Those kubectl versions (and tools built on their libraries) fetch
 * /openapi/v2 as gnostic's openapi_v2.Document in protobuf
 * (application/com.github.proto-openapi.spec.v2@v1.0+protobuf) before
 * `create -f` and `apply -f`, and give up when it is missing. lapis's
 * document (built in api.c) holds the paths of every served resource with
 * their operations, the x-kubernetes-* extensions and the query parameters
 * (fieldValidation among them), and no definitions: the schemas are in the
 * OpenAPI v3 documents, which those kubectl versions consult first for
 * fieldValidation; the server validates.
 *
 * Pure, any thread.
 */
#ifndef LAPIS_OPENAPIV2_H
#define LAPIS_OPENAPIV2_H

#include <jansson.h>
#include <stddef.h>

/* The Content-Type of the protobuf document, as kube-openapi answers it:
   clients ask for "...spec.v2@v1.0+protobuf", but Go's mime parser (in
   kubectl) refuses the '@', so the answer names the dotted form. */
#define SRV_OPENAPI_V2_PB "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

/*
 * Encode a Swagger 2.0 JSON document (doc) as openapi_v2.Document: swagger,
 * info (title, version), paths with their get, put, post, delete and patch
 * operations (produces, consumes, query parameters, responses' descriptions,
 * x-* extensions as YAML, here JSON text) and the paths' and operations'
 * x-* extensions. Other members are left out. doc is not changed (jansson
 * iterates objects through non-const pointers). Returns the bytes
 * (malloc'd, *len set), or NULL out of memory or when doc is not an object.
 */
unsigned char *srv_openapi_v2_pb(json_t *doc, size_t *len);

#endif
