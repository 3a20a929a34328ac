/*
 * pretty.h -- kube's pretty-printed JSON (reference §1.6): the body
 * json.MarshalIndent(obj, "", "  ") writes, made from the compact bytes we
 * store and serve, without decoding them.
 *
 * Pure, any thread.
 */
#ifndef LAPIS_PRETTY_H
#define LAPIS_PRETTY_H

#include <stdbool.h>
#include <stddef.h>

/*
 * in[0, n) indented as Go's json.Indent(dst, in, "", "  ") does: a line
 * break and two spaces per level after each '{', '[' and ',', ": " after
 * a key, empty objects and arrays kept as {} and [], whitespace between
 * tokens dropped, strings copied byte for byte. The input is expected to
 * be valid JSON (we indent only what we encoded); anything else comes out
 * re-spaced, never read past n. New NUL-terminated buffer, its length in
 * *out_len; NULL when out of memory.
 */
char *srv_json_indent(const char *in, size_t n, size_t *out_len);

/*
 * Go's strconv.ParseBool: "1", "t", "T", "TRUE", "true", "True" are true,
 * "0", "f", "F", "FALSE", "false", "False" false; false for anything else
 * (*ok false then).
 */
bool srv_go_parse_bool(const char *s, bool *ok);

#endif
