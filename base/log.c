/* log.c -- one line per message on stderr, written with one write(2). */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lapis/assert.h"
#include "lapis/log.h"

static _Atomic int min_level = -1;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void lp_log_set_level(enum lp_log_level level)
{
	atomic_store(&min_level, (int)level);
}

static int current_level(void)
{
	int l = atomic_load(&min_level);
	if (l >= 0)
		return l;
	const char *env = getenv("LAPIS_LOG");
	l = LP_LOG_INFO;
	if (env) {
		for (int i = 0; i < 4; i++)
			if (strcmp(env, level_names[i]) == 0)
				l = i;
	}
	atomic_store(&min_level, l);
	return l;
}

void lp_log(enum lp_log_level level, const char *fmt, ...)
{
	if ((int)level < current_level())
		return;
	char line[1024];
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	int n = snprintf(line, sizeof line, "%02d:%02d:%02d.%03ld %s ", tm.tm_hour,
			 tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000L,
			 level_names[level]);
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	va_end(ap);
	size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
	if (len > sizeof line - 2)
		len = sizeof line - 2;
	line[len++] = '\n';
	ssize_t w = write(STDERR_FILENO, line, len);
	(void)w;
}

void lp__panic(const char *file, int line, const char *cond, const char *ctx)
{
	fprintf(stderr, "lapis: assertion failed at %s:%d: %s%s%s\n", file, line,
		cond, ctx ? " -- " : "", ctx ? ctx : "");
	abort();
}
