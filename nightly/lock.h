/* One `lscat nightly` per store at a time. The lock is an flock(2) on "<store>.nightly.lock",
 * which the kernel drops when its holder dies, so a killed or crashed night never leaves the
 * store locked; the file keeps the holder's pid, host and start time for the message a second
 * run prints and for the log line of the run that takes over after a crash. */
#ifndef LSCAT_NIGHTLY_LOCK_H
#define LSCAT_NIGHTLY_LOCK_H

struct nightly_lock {
    int fd;     /* -1 when not held */
    char *path; /* the lock file */
};
#define NIGHTLY_LOCK_INIT { .fd = -1, .path = NULL }

/* Take the lock of the store at `db_path`. Returns 0 when held; LSCAT_EBUSY when another
 * nightly holds it (the message names its pid, host and start); LSCAT_ERR when the file cannot
 * be used. A lock file left by a dead holder is taken over with a warning naming its pid. */
int nightly_lock_acquire(struct nightly_lock *lock, const char *db_path);
/* Clear the holder line and drop the lock. Safe on NIGHTLY_LOCK_INIT and twice. */
void nightly_lock_release(struct nightly_lock *lock);

#endif
