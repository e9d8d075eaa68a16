/* Resource usage that `ptxas -v` reports per kernel entry and architecture: registers, shared
 * memory, stack frame, spills, constant memory. Features for the dataset. */
#ifndef LSCAT_EXECUTE_PTXAS_H
#define LSCAT_EXECUTE_PTXAS_H

#include "common/buf.h"

#include <stddef.h>

struct ptxas_entry {
    char name[256];    /* mangled entry name (truncated) */
    char arch[16];     /* "sm_90" */
    int registers, barriers;
    long shared_bytes, stack_bytes, spill_store_bytes, spill_load_bytes, const_bytes;
};

struct ptxas_info {
    struct ptxas_entry *entries;
    size_t count, alloc;
};
#define PTXAS_INFO_INIT { NULL, 0, 0 }

/* Parse the ptxas lines of a build log (other lines are ignored). Appends to out. */
void ptxas_parse(struct ptxas_info *out, const char *log);
void ptxas_info_release(struct ptxas_info *info);
/* The summary execute stores: per field the maximum over entries compiled for `arch` (the
 * newest architecture of the build; NULL = all). Returns 0, or LSCAT_ENOTFOUND when no entry. */
int ptxas_summary(struct ptxas_entry *out, const struct ptxas_info *info, const char *arch);
/* All entries as a compact JSON array. */
void ptxas_to_json(struct buf *out, const struct ptxas_info *info);
/* Copy only the ptxas lines of `log` into out (ptxas.txt). */
void ptxas_extract(struct buf *out, const char *log);
/* A batched build compiles each kernel's harness inside `namespace <ns>` (docs/execute.md
 * "Batched builds"). Writes to out the name `name` (mangled inside <ns>) has when the kernel is
 * compiled alone: <ns> taken off its nested name and every substitution index one lower.
 * Returns 0, or -1 when `name` is not in <ns> or uses a form this does not rewrite (a reference
 * to <ns> itself, local names, expressions): that kernel is then built alone. */
int ptxas_unnest(char *out, size_t cap, const char *name, const char *ns);

#endif
