/*
 * assert.h -- asserts are for our own bugs, never for input (STYLE.md §9).
 *
 * LP_ASSERT is always on. LP_DASSERT guards expensive checks and is compiled
 * only with LAPIS_DEBUG. A failed assert prints the condition, where, and an
 * optional context string, then aborts.
 */
#ifndef LAPIS_ASSERT_H
#define LAPIS_ASSERT_H

_Noreturn void lp__panic(const char *file, int line, const char *cond,
			 const char *ctx);

#define LP_ASSERT(c)                                                          \
	((c) ? (void)0 : lp__panic(__FILE__, __LINE__, #c, NULL))
#define LP_ASSERT_CTX(c, ctx)                                                 \
	((c) ? (void)0 : lp__panic(__FILE__, __LINE__, #c, (ctx)))
#define LP_UNREACHABLE() lp__panic(__FILE__, __LINE__, "unreachable", NULL)

#ifdef LAPIS_DEBUG
#define LP_DASSERT(c) LP_ASSERT(c)
#else
#define LP_DASSERT(c) ((void)0)
#endif

#endif
