/* The store's summary: counts per stage and status, and the last run of each stage. */
#ifndef LSCAT_STATUS_H
#define LSCAT_STATUS_H

#include "common/buf.h"
#include "store/store.h"

/* Append the summary of `s` to `out`, as aligned text or as one JSON object
 * ({"store":{...},"sections":{"repos":{"pending":3,...},...},"last_runs":[...]}). */
int status_report(struct buf *out, struct store *s, int json);

#endif
