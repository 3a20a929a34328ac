/*
 * goregex.h -- Go regular expressions (RE2 syntax, Go's regexp semantics
 * for "does it match"), for the pattern keyword of CRD schemas, on PCRE2.
 *
 * A pattern Go accepts (srv_re2_error says so) is rewritten into PCRE2's
 * dialect where the two differ (\s and \v, octal escapes, a literal "{",
 * "[" inside a class, named groups, \Q...\E, "$") and compiled with Go's
 * semantics switched on: UTF-8, "^" of (?m) also after a final newline,
 * no capturing. It is matched with
 * PCRE2's DFA matcher, anchored behind a "(?s:.*)" prefix, so a match
 * takes time linear in the value's length for a given pattern, as with
 * Go's RE2 automata (a backtracking matcher, or glibc's regexec, can take
 * seconds on one long value). PCRE2 also brings what a translation to POSIX
 * lacked: Unicode classes (\pL, \p{Greek}) and Unicode case folding.
 *
 * A compiled expression is read-only: any number of threads may match
 * against one at once.
 */
#ifndef LAPIS_SERVER_GOREGEX_H
#define LAPIS_SERVER_GOREGEX_H

#include <stdbool.h>
#include <stddef.h>

struct srv_goregex;

/* Compile pattern (a NUL-terminated Go regular expression). On success
   returns it (srv_goregex_free). NULL when it cannot be compiled, with
   *why (a static string: "out of memory", or what PCRE2 refused) set;
   *oom is set when memory ran out. */
struct srv_goregex *srv_goregex_compile(const char *pattern, const char **why,
					bool *oom);

/* Does s (len bytes of UTF-8, NULs allowed) hold a match of re, as Go's
   regexp.MatchString says? A value PCRE2 cannot decide (invalid UTF-8, no
   memory for its work space) counts as a match: it is not refused for
   want of an answer. Any thread. */
bool srv_goregex_match(const struct srv_goregex *re, const char *s, size_t len);

void srv_goregex_free(struct srv_goregex *re);

#endif
