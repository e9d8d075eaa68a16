/* placeholder replaced below */
#include "search.h"
#include "common/error.h"
int search_run(struct search_counts *out, struct store *s, const struct search_options *o)
{ (void)out; (void)s; (void)o; return lscat_error_set("search: not implemented yet"); }
