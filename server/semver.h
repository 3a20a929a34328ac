/*
 * semver.h -- semantic versions as kube's CEL semver library reads them
 * (apiserver v0.33 pkg/cel/library/semverlib.go, which parses with
 * github.com/blang/semver/v4).
 *
 * Pure, any thread, no allocation.
 */
#ifndef LAPIS_SEMVER_H
#define LAPIS_SEMVER_H

#include <stddef.h>
#include <stdint.h>

struct srv_semver {
	uint64_t major, minor, patch;
	/* The pre-release identifiers as written, dot-separated and not
	   NUL-terminated, pointing into the parsed text; pre_len 0: none.
	   Build metadata is checked and dropped: it has no precedence. */
	const char *pre;
	size_t pre_len;
};

/* blang's Parse of the n bytes at s: NULL on success, else its error
   (word for word, strconv's for a number past uint64) in why. */
const char *srv_semver_parse(const char *s, size_t n, struct srv_semver *out,
			     char *why, size_t why_size);

/* kube's normalizeAndParse: a leading "v" dropped, leading zeros of each
   of the first three dot-separated parts dropped, a missing minor or
   patch filled with 0. out gets the normalized text (it needs n + 5
   bytes) and *out_len its length, which the version points into. */
const char *srv_semver_parse_normalized(const char *s, size_t n, char *text,
					size_t *text_len,
					struct srv_semver *out, char *why,
					size_t why_size);

/* Version.Compare: -1, 0 or 1 (build metadata does not count). */
int srv_semver_cmp(const struct srv_semver *a, const struct srv_semver *b);

#endif
