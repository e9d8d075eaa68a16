/* Thread-local error slot. Each thread owns one fixed buffer, so setting an error never
 * allocates and never fails; messages longer than the buffer are cut with "...". */
#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define ERROR_MAX 2048

static _Thread_local char slot[ERROR_MAX];
static _Thread_local int slot_code;

static void vset(const char *fmt, va_list ap)
{
    int n = vsnprintf(slot, sizeof(slot), fmt, ap);
    if (n >= (int)sizeof(slot))
        memcpy(slot + sizeof(slot) - 4, "...", 4);
}

int lscat_error_set(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(fmt, ap);
    va_end(ap);
    slot_code = LSCAT_ERR;
    return LSCAT_ERR;
}

int lscat_error_setc(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(fmt, ap);
    va_end(ap);
    slot_code = code;
    return code;
}

int lscat_error_wrap(const char *fmt, ...)
{
    char old[ERROR_MAX], ctx[ERROR_MAX];
    memcpy(old, slot, sizeof(old));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx, sizeof(ctx), fmt, ap);
    va_end(ap);
    if (old[0])
        lscat_error_setc(slot_code ? slot_code : LSCAT_ERR, "%s: %s", ctx, old);
    else
        lscat_error_setc(LSCAT_ERR, "%s", ctx);
    return LSCAT_ERR;
}

const char *lscat_error_last(void)
{
    return slot;
}

int lscat_error_code(void)
{
    return slot[0] ? slot_code : LSCAT_OK;
}

void lscat_error_clear(void)
{
    slot[0] = '\0';
    slot_code = LSCAT_OK;
}
