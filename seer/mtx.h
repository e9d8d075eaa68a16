/* The Matrix Market reader (NIST's exchange format, the SuiteSparse collection's download
 * form). Accepts the coordinate format with real, integer or pattern values and general,
 * symmetric or skew-symmetric symmetry; symmetric files store one triangle and are mirrored,
 * skew-symmetric ones mirrored with the sign flipped, pattern entries read as 1.0, entries at
 * the same position summed. Refuses the array (dense) format, complex and hermitian fields, and
 * malformed files: a missing banner, a bad size line, an index that is 0-based or out of range,
 * a non-number, a non-finite value, a diagonal entry in a skew-symmetric file, extra text on a
 * line, more or fewer entries than declared (a truncated file). Every refusal is LSCAT_EINVALID
 * with "FILE:LINE: what is wrong" and nothing is returned. */
#ifndef LSCAT_SEER_MTX_H
#define LSCAT_SEER_MTX_H

#include "seer/csr.h"

#include <stdio.h>

/* What the banner said. */
struct seer_mtx_info {
    char field[16];    /* "real", "integer", "pattern" */
    char symmetry[16]; /* "general", "symmetric", "skew-symmetric" */
    long long entries; /* entries stored in the file (before mirroring) */
};

/* Read the file at path into *out (caller releases). info may be NULL. */
int seer_mtx_read(struct seer_csr *out, struct seer_mtx_info *info, const char *path);
/* The same from an open stream; name is used in messages. */
int seer_mtx_read_stream(struct seer_csr *out, struct seer_mtx_info *info, FILE *f,
                         const char *name);

#endif
