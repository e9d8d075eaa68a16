/* Logging with levels, to stderr, as text for people or JSON lines for machines
 * (`--log-format json`). Thread-safe: one line is written at a time. Library code logs through
 * here and never prints to stdout. */
#ifndef LSCAT_LOG_H
#define LSCAT_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };
enum log_format { LOG_TEXT = 0, LOG_JSON = 1 };

/* `prog` names the program in every line (e.g. "lscat-harvest"); borrowed, must outlive use. */
void log_init(const char *prog, enum log_level level, enum log_format format);
enum log_level log_get_level(void);
enum log_format log_get_format(void);
int log_enabled(enum log_level level);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/* A structured event: `event` names it, then key/value pairs as a NULL-terminated list of
 * strings ("key", "value", ..., NULL). Text format prints "event key=value ..."; JSON format
 * prints one object. Values that look like numbers are emitted as JSON numbers. */
void log_event(enum log_level level, const char *event, ...);

/* Print to stderr bypassing the level (for the progress bar). Holds the log lock. */
void log_raw(const char *s);
/* LSCAT_TUNE_TRACE=FILE: one line per event of tune's runners, lscat-mpi's chunk turn and
 * sweep's records, "<monotonic s> <pid> <event ...>", appended by every process that has it
 * set (docs/tune.md "Where a configuration's time goes"). Nothing when unset. */
void log_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
