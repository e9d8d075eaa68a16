/* Leveled logging to stderr. Text lines read "lscat-harvest: warning: message"; JSON lines
 * carry ts, level, prog and msg so a nightly job's log can be queried. */
#include "common/log.h"

#include "common/buf.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *log_prog = "lscat";
static enum log_level log_level = LOG_INFO;
static enum log_format log_format = LOG_TEXT;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *level_names[] = { "error", "warning", "info", "debug" };

void log_init(const char *prog, enum log_level level, enum log_format format)
{
    log_prog = prog;
    log_level = level;
    log_format = format;
}

enum log_level log_get_level(void)
{
    return log_level;
}

enum log_format log_get_format(void)
{
    return log_format;
}

int log_enabled(enum log_level level)
{
    return level <= log_level;
}

static void add_timestamp(struct buf *b)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    buf_addf(b, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
}

static void emit(struct buf *line)
{
    pthread_mutex_lock(&log_lock);
    fwrite(line->data, 1, line->len, stderr);
    fflush(stderr);
    pthread_mutex_unlock(&log_lock);
}

static void json_head(struct buf *b, enum log_level level)
{
    buf_adds(b, "{\"ts\":\"");
    add_timestamp(b);
    buf_addf(b, "\",\"level\":\"%s\",\"prog\":", level_names[level]);
    buf_add_json_str(b, log_prog, strlen(log_prog));
}

void log_msg(enum log_level level, const char *fmt, ...)
{
    if (!log_enabled(level))
        return;
    struct buf line = BUF_INIT, msg = BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    buf_vaddf(&msg, fmt, ap);
    va_end(ap);
    if (log_format == LOG_JSON) {
        json_head(&line, level);
        buf_adds(&line, ",\"msg\":");
        buf_add_json_str(&line, msg.data, msg.len);
        buf_adds(&line, "}\n");
    } else if (level == LOG_INFO) {
        buf_addf(&line, "%s: %s\n", log_prog, msg.data);
    } else {
        buf_addf(&line, "%s: %s: %s\n", log_prog, level_names[level], msg.data);
    }
    emit(&line);
    buf_release(&line);
    buf_release(&msg);
}

static int looks_numeric(const char *s)
{
    if (!*s)
        return 0;
    char *end;
    strtod(s, &end);
    return *end == '\0' && strspn(s, "0123456789.-+eE") == strlen(s) &&
           !(s[0] == '0' && s[1] >= '0' && s[1] <= '9');
}

void log_event(enum log_level level, const char *event, ...)
{
    if (!log_enabled(level))
        return;
    struct buf line = BUF_INIT;
    va_list ap;
    va_start(ap, event);
    if (log_format == LOG_JSON) {
        json_head(&line, level);
        buf_adds(&line, ",\"event\":");
        buf_add_json_str(&line, event, strlen(event));
    } else {
        buf_addf(&line, "%s: %s", log_prog, event);
    }
    for (;;) {
        const char *k = va_arg(ap, const char *);
        if (!k)
            break;
        const char *v = va_arg(ap, const char *);
        if (!v)
            v = "";
        if (log_format == LOG_JSON) {
            buf_addch(&line, ',');
            buf_add_json_str(&line, k, strlen(k));
            buf_addch(&line, ':');
            if (looks_numeric(v))
                buf_adds(&line, v);
            else
                buf_add_json_str(&line, v, strlen(v));
        } else {
            buf_addf(&line, strpbrk(v, " \t\"") ? " %s=\"%s\"" : " %s=%s", k, v);
        }
    }
    va_end(ap);
    buf_adds(&line, log_format == LOG_JSON ? "}\n" : "\n");
    emit(&line);
    buf_release(&line);
}

void log_raw(const char *s)
{
    pthread_mutex_lock(&log_lock);
    fputs(s, stderr);
    fflush(stderr);
    pthread_mutex_unlock(&log_lock);
}

void log_trace(const char *fmt, ...)
{
    static FILE *f;
    static int tried;
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&mu);
    if (!tried) {
        const char *e = getenv("LSCAT_TUNE_TRACE");
        tried = 1;
        f = e && *e ? fopen(e, "ae") : NULL;
    }
    if (f) {
        struct timespec ts;
        va_list ap;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        fprintf(f, "%.4f %d ", (double)ts.tv_sec + ts.tv_nsec * 1e-9, (int)getpid());
        va_start(ap, fmt);
        vfprintf(f, fmt, ap);
        va_end(ap);
        fputc('\n', f);
        fflush(f);
    }
    pthread_mutex_unlock(&mu);
}
