#ifndef LSCAT_COMMON_BLOCKEQ_H
#define LSCAT_COMMON_BLOCKEQ_H
/* The block a kernel asserts: isolate's params.json "block_eq":[X,Y,Z], from
 * `assert(blockDim.x == WARP_SIZE)` and the like (docs/isolate.md "Block asserts"). Read by
 * execute's probe (which blocks it runs) and tune's plan (which shapes it measures). */

/* eq[d] = the asserted size of dimension d, 0 where none (all 0 when params is NULL or has no
 * valid record). 1 when any is set. */
int block_eq_parse(int eq[3], const char *params);
/* Whether block bx x by x bz satisfies eq. */
int block_eq_fits(const int eq[3], int bx, int by, int bz);

#endif
