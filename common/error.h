/* The thread-local error slot (libgit2's git_error_set/git_error_last). Library code returns
 * 0 or a negative LSCAT_E* code and leaves a human-readable message here; the command that
 * called it prints the message and chooses the exit code. */
#ifndef LSCAT_ERROR_H
#define LSCAT_ERROR_H

enum {
    LSCAT_OK = 0,
    LSCAT_ERR = -1,       /* generic failure; the message says what */
    LSCAT_ENOTFOUND = -3, /* the thing asked for does not exist */
    LSCAT_EEXISTS = -4,   /* it already exists */
    LSCAT_ETIMEOUT = -5,  /* a deadline passed */
    LSCAT_EINVALID = -6,  /* bad input from the user or from a file */
    LSCAT_EBUSY = -7,     /* locked by someone else (e.g. another lscat on the store) */
    LSCAT_EVERSION = -8,  /* made by a newer lscat */
};

/* Set the message (printf format) and return LSCAT_ERR, so `return lscat_error_set(...)` reads
 * naturally. The message should be lowercase, name its subject and say what to do. */
int lscat_error_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same, returning `code` instead of LSCAT_ERR. */
int lscat_error_setc(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prepend context to the current message: "ctx: old message". Returns LSCAT_ERR. */
int lscat_error_wrap(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The last message set on this thread, or "" when none. Borrowed: valid until the next set. */
const char *lscat_error_last(void);
/* The code given with the last message (LSCAT_ERR when set by lscat_error_set). */
int lscat_error_code(void);
void lscat_error_clear(void);

#endif
