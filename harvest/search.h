/* `harvest search`: GitHub's repository search API (language and push date), sliced into
 * date ranges small enough that each query stays under the API's 1,000-result cap, each
 * query paginated by its Link headers. Results become candidates with evidence
 * "search_language". GITHUB_TOKEN (via http_options.token) is never logged or stored. */
#ifndef LSCAT_HARVEST_SEARCH_H
#define LSCAT_HARVEST_SEARCH_H

#include "harvest/http.h"

#include <stdint.h>
#include <time.h>

struct store;

struct search_options {
    const char *api_url;   /* e.g. https://api.github.com (tests: a local server) */
    const char *language;  /* e.g. Cuda */
    time_t since, until;   /* pushed:since..until, whole days */
    int per_page;          /* 100 */
    int cap;               /* the API's result cap per query: 1000 */
    int64_t run_id;
    struct http_options http;
};
#define SEARCH_OPTIONS_INIT { .api_url = NULL, .language = "Cuda", .since = 0, .until = 0, \
    .per_page = 100, .cap = 1000, .run_id = 0, .http = HTTP_OPTIONS_INIT }

struct search_counts {
    int64_t queries, results, repos_new, failed, truncated;
};

int search_run(struct search_counts *out, struct store *s, const struct search_options *o);

/* The URL of rel="next" in a Link header value, copied into out; 1 when found. */
int search_link_next(char *out, size_t out_size, const char *link);

#endif
