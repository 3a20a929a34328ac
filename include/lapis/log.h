/*
 * log.h -- logging to stderr, one line per call, with a level.
 *
 * Thread-safe (one write(2) per line). The level is set once at start-up.
 */
#ifndef LAPIS_LOG_H
#define LAPIS_LOG_H

enum lp_log_level { LP_LOG_DEBUG, LP_LOG_INFO, LP_LOG_WARN, LP_LOG_ERROR };

/* Messages below this level are dropped. Default LP_LOG_INFO; LAPIS_LOG=debug. */
void lp_log_set_level(enum lp_log_level level);
void lp_log(enum lp_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define lp_debug(...) lp_log(LP_LOG_DEBUG, __VA_ARGS__)
#define lp_info(...) lp_log(LP_LOG_INFO, __VA_ARGS__)
#define lp_warn(...) lp_log(LP_LOG_WARN, __VA_ARGS__)
#define lp_error(...) lp_log(LP_LOG_ERROR, __VA_ARGS__)

#endif
