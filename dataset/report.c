#include "dataset/report.h"
#include "common/error.h"
int report_run(struct buf *table, struct report_summary **summaries_out, int *n_out,
               struct store *s, const struct report_options *o)
{
    (void)table; (void)summaries_out; (void)n_out; (void)s; (void)o;
    return lscat_error_set("report: not implemented yet");
}
