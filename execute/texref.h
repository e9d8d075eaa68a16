/* The texture_object repair (execute/texref.c): texture references, removed in CUDA 12, become
 * lscat's texture-object stand-ins (isolate/compat/lscat_texref.h) that the harness binds. */
#ifndef LSCAT_EXECUTE_TEXREF_H
#define LSCAT_EXECUTE_TEXREF_H

#include "common/buf.h"
#include "execute/repair.h"

/* When the diagnostics say removed_cuda_api: pull every texture reference kernel.cu uses but
 * lacks from the repository ("pull_decl:<name>@<path:line>(text)"), rewrite every file-scope
 * `texture<...>` declaration into a registered `__device__ lscat_texref<...>`, copy the header
 * from in->compat_dir to in->include_dir and include it ("texture_object:<names>"). Fixes are
 * appended to `fixes` as JSON strings, comma-separated. Returns the number applied. */
int texref_repair(struct buf *src, struct buf *fixes, const struct repair_input *in);

#endif
