/*
 * err.h -- the one error type of lapis.
 *
 * Every function that can fail returns an lp_err. LP_OK is 0. The list is an
 * X-macro so that the enum, the names and the texts are generated from one
 * place; server/status.c maps each code to a Kubernetes Status.
 *
 * Storage codes (engine/) come first, request codes (server/) after them.
 */
#ifndef LAPIS_ERR_H
#define LAPIS_ERR_H

#define LP_ERR_LIST(X)                                                        \
	X(OK, "success")                                                          \
	/* storage codes: the only ones engine/ returns */                          \
	X(NOTFOUND, "not found")                                                  \
	X(EXISTS, "already exists")                                               \
	X(CONFLICT, "compare failed")                                             \
	X(COMPACTED, "revision has been compacted")                               \
	X(FUTURE, "revision not reached yet")                                     \
	X(KEYTOOLONG, "key too long")                                             \
	X(VALTOOLARGE, "value too large")                                         \
	X(FULL, "store is full")                                                  \
	X(READERSFULL, "too many concurrent readers")                             \
	X(NOMEM, "out of memory")                                                 \
	X(IO, "input/output error")                                               \
	X(CORRUPT, "store is corrupt")                                            \
	X(FORMAT, "unsupported store format")                                     \
	X(LOCKED, "data directory is in use by another process")                  \
	X(AGAIN, "nothing yet")                                                   \
	X(OVERFLOW, "watcher fell behind")                                        \
	X(CLOSED, "engine is closing")                                            \
	X(INVAL, "invalid argument")                                              \
	/* request codes: server/ */                                              \
	X(BADREQUEST, "bad request")                                              \
	X(INVALID, "invalid")                                                     \
	X(UNAUTHORIZED, "unauthorized")                                           \
	X(FORBIDDEN, "forbidden")                                                 \
	X(NOTACCEPTABLE, "not acceptable")                                        \
	X(UNSUPPORTEDMEDIA, "unsupported media type")                             \
	X(METHODNOTALLOWED, "method not allowed")                                 \
	X(ENTITYTOOLARGE, "request entity too large")                             \
	X(TOOMANY, "too many requests")                                           \
	X(TIMEOUT, "timeout")                                                     \
	X(UNAVAILABLE, "service unavailable")                                     \
	X(INTERNAL, "internal error")

typedef enum lp_err {
#define LP__ERR_ENUM(name, text) LP_E_##name,
	LP_ERR_LIST(LP__ERR_ENUM)
#undef LP__ERR_ENUM
	LP_E__COUNT
} lp_err;

#define LP_OK LP_E_OK

/* Short text of an error code; never NULL (an unknown code gives "?"). */
const char *lp_strerror(lp_err rc);
/* The code's name without prefix, e.g. "NOTFOUND"; never NULL. */
const char *lp_errname(lp_err rc);

/*
 * LP_ERR(code): make an error where it is first found. In debug builds
 * (LAPIS_DEBUG) it logs file:line once, as SQLite's SQLITE_CORRUPT_BKPT.
 */
#ifdef LAPIS_DEBUG
lp_err lp__err_at(lp_err rc, const char *file, int line);
#define LP_ERR(code) lp__err_at((code), __FILE__, __LINE__)
#else
#define LP_ERR(code) (code)
#endif

#endif
