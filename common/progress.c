/* Terminal progress bar with rate and ETA. Draws with \r on one line; never when stderr is
 * not a TTY, so logs captured by a nightly job stay clean. */
#include "common/progress.h"

#include "common/log.h"
#include "common/xalloc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct progress {
    pthread_mutex_t lock;
    char *label;
    char note[64];
    uint64_t done, total;
    double start_s, last_draw_s;
    int tty, drawn;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void progress_format_duration(char *out, unsigned out_size, double s)
{
    if (s < 0)
        s = 0;
    if (s < 60)
        snprintf(out, out_size, "%.1fs", s);
    else if (s < 3600)
        snprintf(out, out_size, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else
        snprintf(out, out_size, "%dh%02dm", (int)(s / 3600), ((int)s % 3600) / 60);
}

struct progress *progress_new(const char *label, uint64_t total)
{
    struct progress *p = xcalloc(1, sizeof(*p));
    pthread_mutex_init(&p->lock, NULL);
    p->label = xstrdup(label);
    p->total = total;
    p->start_s = now_s();
    p->tty = isatty(STDERR_FILENO) && log_enabled(LOG_INFO) && log_get_format() == LOG_TEXT &&
             !getenv("LSCAT_NO_PROGRESS");
    return p;
}

static void draw(struct progress *p, int force)
{
    double t = now_s();
    if (!p->tty || (!force && t - p->last_draw_s < 0.1))
        return;
    p->last_draw_s = t;
    double el = t - p->start_s;
    double rate = el > 0 ? p->done / el : 0;
    char line[256], eta[32] = "";
    if (p->total && rate > 0 && p->done < p->total) {
        char d[16];
        progress_format_duration(d, sizeof(d), (p->total - p->done) / rate);
        snprintf(eta, sizeof(eta), " ETA %s", d);
    }
    int width = 24;
    char bar[32];
    int fill = p->total ? (int)(width * (double)p->done / p->total) : 0;
    if (fill > width)
        fill = width;
    memset(bar, '#', (size_t)fill);
    memset(bar + fill, '.', (size_t)(width - fill));
    bar[width] = '\0';
    if (p->total)
        snprintf(line, sizeof(line), "\r%s [%s] %llu/%llu %.1f/s%s%s%s\033[K", p->label, bar,
                 (unsigned long long)p->done, (unsigned long long)p->total, rate, eta,
                 p->note[0] ? " " : "", p->note);
    else
        snprintf(line, sizeof(line), "\r%s %llu %.1f/s%s%s\033[K", p->label,
                 (unsigned long long)p->done, rate, p->note[0] ? " " : "", p->note);
    log_raw(line);
    p->drawn = 1;
}

void progress_set_total(struct progress *p, uint64_t total)
{
    pthread_mutex_lock(&p->lock);
    p->total = total;
    draw(p, 0);
    pthread_mutex_unlock(&p->lock);
}

void progress_add(struct progress *p, uint64_t n)
{
    pthread_mutex_lock(&p->lock);
    p->done += n;
    draw(p, p->done == p->total);
    pthread_mutex_unlock(&p->lock);
}

void progress_set(struct progress *p, uint64_t done)
{
    pthread_mutex_lock(&p->lock);
    p->done = done;
    draw(p, 0);
    pthread_mutex_unlock(&p->lock);
}

void progress_note(struct progress *p, const char *note)
{
    pthread_mutex_lock(&p->lock);
    snprintf(p->note, sizeof(p->note), "%s", note);
    pthread_mutex_unlock(&p->lock);
}

void progress_free(struct progress *p)
{
    if (!p)
        return;
    if (p->drawn)
        log_raw("\r\033[K");
    double el = now_s() - p->start_s;
    char d[16];
    progress_format_duration(d, sizeof(d), el);
    if (p->total)
        log_info("%s: %llu/%llu in %s, %.1f/s%s%s", p->label, (unsigned long long)p->done,
                 (unsigned long long)p->total, d, el > 0 ? p->done / el : 0.0,
                 p->note[0] ? ", " : "", p->note);
    else
        log_info("%s: %llu in %s, %.1f/s%s%s", p->label, (unsigned long long)p->done, d,
                 el > 0 ? p->done / el : 0.0, p->note[0] ? ", " : "", p->note);
    pthread_mutex_destroy(&p->lock);
    free(p->label);
    free(p);
}
