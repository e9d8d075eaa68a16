/* The parameter model's name rules: which role a kernel parameter plays, guessed from its name
 * (LS-CAT's idea: `width`, `rows`, `n`, `pitch`, `alpha`, ...), and which non-type template
 * parameters name a block or tile size. Pure functions, no libclang: unit-tested on their own. */
#ifndef LSCAT_ISOLATE_PARAMS_H
#define LSCAT_ISOLATE_PARAMS_H

/* Roles. A pointer parameter is always PARAMS_ROLE_BUFFER; a scalar whose name matches no rule
 * is PARAMS_ROLE_UNKNOWN and gets the value 1 in the harness. */
enum params_role {
    PARAMS_ROLE_UNKNOWN = 0,
    PARAMS_ROLE_BUFFER,
    PARAMS_ROLE_WIDTH,
    PARAMS_ROLE_HEIGHT,
    PARAMS_ROLE_DEPTH,
    PARAMS_ROLE_SIZE,
    PARAMS_ROLE_STRIDE,
    PARAMS_ROLE_SCALE,
    PARAMS_ROLE_BLOCK,  /* block_size, TILE_WIDTH, blockDim: the configuration's block x */
};

/* The role of a scalar parameter called `name` (case and '_' insensitive). */
enum params_role params_role_of(const char *name);
/* "width", "height", ... ("unknown" for PARAMS_ROLE_UNKNOWN). */
const char *params_role_name(enum params_role r);
/* The role with this name, or PARAMS_ROLE_UNKNOWN. */
enum params_role params_role_parse(const char *name);
/* Nonzero when a non-type template parameter called `name` names a block or tile size. */
int params_is_block_name(const char *name);

#endif
