/* File-system helpers every stage needs: creating folder trees, writing files so that a crash
 * never leaves half a file under the final name, and time stamps. */
#ifndef LSCAT_FS_H
#define LSCAT_FS_H

#include <stddef.h>

/* mkdir -p. Returns 0 or LSCAT_ERR with a message naming the path. */
int fs_mkdirs(const char *path, unsigned mode);
/* mkdir -p of the folder that holds `file_path`. */
int fs_mkdirs_parent(const char *file_path);
/* Write to "<path>.tmp.<pid>", fsync, rename over `path`. */
int fs_write_atomic(const char *path, const void *data, size_t len);
/* Copy the whole file `from` to `to` through fs_write_atomic (read into memory: small files). */
int fs_copy_atomic(const char *from, const char *to);
int fs_exists(const char *path);
int fs_is_dir(const char *path);
/* rm -rf; refuses "", "/" and paths with "..". */
int fs_remove_tree(const char *path);
/* Is `pid` a live process on this machine (ours included)? A pid we may not signal is live. */
int fs_pid_alive(long pid);
/* The pid of a temporary name "<anything>.tmp.<pid>" (file or folder), or 0 when `name` is not
 * one. */
long fs_temp_pid(const char *name);
/* Remove the temporaries ("<name>.tmp.<pid>", files or folders) that a killed process left in
 * `dir` and in its subfolders down to `depth` levels below it (depth 1: dir/x/<temp>), when
 * their pid is no live process: a live pid's temporaries are another lscat's work in progress
 * (or a recycled pid: a later run takes them). Temporaries of another machine sharing the folder
 * would look dead here: lscat's work folder belongs to one machine at a time. Logs one info
 * event (stale_temporaries_removed) when it removed any. Returns how many were removed (a
 * missing `dir` is 0), or LSCAT_ERR when one could not be removed. */
int fs_remove_stale_temps(const char *dir, int depth);
/* Swap two existing paths in one step (renameat2 RENAME_EXCHANGE). LSCAT_ERR when the file
 * system cannot (errno says EINVAL or ENOSYS then) or either is missing. */
int fs_exchange(const char *a, const char *b);
/* Join two path parts with one '/'. Caller frees. */
char *fs_join(const char *a, const char *b);

/* Current UTC time as "YYYY-MM-DDTHH:MM:SSZ" (the store's time format). */
void fs_utc_now(char out[32]);
/* Monotonic seconds, for durations. */
double fs_mono_s(void);

#endif
