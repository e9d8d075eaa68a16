/* `harvest fetch`: download every candidate repository that is pending (or due for a retry
 * or a refresh) as its default-branch zip over HTTP, or by git clone, keep only its C/C++/CUDA
 * sources, headers and build files (extract.h), and record them. One transaction per
 * repository; the tree under <work>/trees/OWNER/NAME is replaced atomically. */
#ifndef LSCAT_HARVEST_FETCH_H
#define LSCAT_HARVEST_FETCH_H

#include "harvest/http.h"

#include <stdint.h>

struct store;

enum fetch_method { FETCH_ZIP = 0, FETCH_ZIP_ONLY, FETCH_GIT };

struct fetch_options {
    const char *work_dir;
    const char *archive_url;  /* template with {owner} {name} (and {full_name}) */
    const char *git_url;      /* template for clones */
    enum fetch_method method;
    double refresh_older_than_s; /* 0: no refresh */
    int64_t limit;            /* 0: all */
    const char *const *repos; /* only these (owner/name), when nrepos > 0 */
    int nrepos;
    int jobs;                 /* downloads in flight */
    int64_t run_id;
    struct http_options http;
    double git_timeout_s;     /* a clone not done after this long is killed; 0 = no limit */
};
#define FETCH_DEFAULT_ARCHIVE_URL "https://codeload.github.com/{owner}/{name}/zip/HEAD"
#define FETCH_DEFAULT_GIT_URL "https://github.com/{owner}/{name}.git"
#define FETCH_DEFAULT_GIT_TIMEOUT_S 600
#define FETCH_OPTIONS_INIT { .work_dir = NULL, .archive_url = FETCH_DEFAULT_ARCHIVE_URL, \
    .git_url = FETCH_DEFAULT_GIT_URL, .method = FETCH_ZIP, .refresh_older_than_s = 0, \
    .limit = 0, .repos = NULL, .nrepos = 0, .jobs = 4, .run_id = 0, \
    .http = HTTP_OPTIONS_INIT, .git_timeout_s = FETCH_DEFAULT_GIT_TIMEOUT_S }

struct fetch_counts {
    int64_t repos, fetched, gone, failed, files, blobs_new, refused, bytes;
};

int fetch_run(struct fetch_counts *out, struct store *s, const struct fetch_options *o);

/* Expand {owner}, {name}, {full_name} in a URL template. Caller frees. */
char *fetch_expand_url(const char *tmpl, const char *full_name);

/* The commit id GitHub writes as the zip file's comment (40 hex digits), from the end of
 * the file at `path`, into out; 1 when found, 0 when the comment is not a commit id. */
int fetch_zip_commit(char out[41], const char *path);

#endif
