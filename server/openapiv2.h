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
 * (fieldValidation among them), and the definitions of every kind served
 * (the v3 documents' schemas in v2 form), which `kubectl explain
 * --output=plaintext-openapiv2` and v2 clients read; kubectl consults the
 * v3 documents first for fieldValidation, and the server validates.
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
 * x-* extensions as YAML, here JSON text), the paths' and operations'
 * x-* extensions, and definitions (schemas with every member Schema has
 * but xml and externalDocs; default, enum and example values as YAML, here
 * JSON text). Other members are left out. doc is not changed (jansson
 * iterates objects through non-const pointers). Returns the bytes
 * (malloc'd, *len set), or NULL out of memory or when doc is not an object.
 */
unsigned char *srv_openapi_v2_pb(json_t *doc, size_t *len);

/*
 * The Swagger 2.0 form of an OpenAPI v3 schema, as kube publishes its
 * definitions in /openapi/v2 (new reference): references point into
 * #/definitions/ and stand alone (a one-member allOf wrapper unwrapped, no
 * type or properties beside them); allOf, anyOf, oneOf and not are dropped;
 * a nullable schema loses its type, items and properties, and the names of
 * nullable members leave required; a schema that preserves unknown fields
 * loses its items and properties, and its type when that is object; an
 * array left without items loses its type (kube's CRD conversion, which
 * kubectl's v2 reader needs). Never NULL but out of memory.
 */
json_t *srv_openapi_v2_schema(json_t *v3);

#endif
