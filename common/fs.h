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
int fs_exists(const char *path);
int fs_is_dir(const char *path);
/* rm -rf; refuses "", "/" and paths with "..". */
int fs_remove_tree(const char *path);
/* Join two path parts with one '/'. Caller frees. */
char *fs_join(const char *a, const char *b);

/* Current UTC time as "YYYY-MM-DDTHH:MM:SSZ" (the store's time format). */
void fs_utc_now(char out[32]);
/* Monotonic seconds, for durations. */
double fs_mono_s(void);

#endif
