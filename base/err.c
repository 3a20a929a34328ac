/* err.c -- names and texts of lp_err, generated from LP_ERR_LIST. */
#include "lapis/err.h"
#include "lapis/log.h"

static const char *const texts[] = {
#define X(name, text) text,
	LP_ERR_LIST(X)
#undef X
};

static const char *const names[] = {
#define X(name, text) #name,
	LP_ERR_LIST(X)
#undef X
};

const char *lp_strerror(lp_err rc)
{
	if ((unsigned)rc >= (unsigned)LP_E__COUNT)
		return "?";
	return texts[rc];
}

const char *lp_errname(lp_err rc)
{
	if ((unsigned)rc >= (unsigned)LP_E__COUNT)
		return "?";
	return names[rc];
}

#ifdef LAPIS_DEBUG
lp_err lp__err_at(lp_err rc, const char *file, int line)
{
	lp_debug("error %s made at %s:%d", lp_errname(rc), file, line);
	return rc;
}
#endif
