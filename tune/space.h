/* The sweep space of `lscat tune`: matrix sizes x block shapes, parsed from the command line
 * and defaulting to LS-CAT's (7 square sizes x 20 shapes = 140 configurations per kernel), so
 * lscat's numbers stay comparable with LS-CAT's. */
#ifndef LSCAT_TUNE_SPACE_H
#define LSCAT_TUNE_SPACE_H

struct tune_config {
    int w, h;       /* the matrix size */
    int bx, by, bz; /* the block shape */
};

struct tune_space {
    struct tune_config *configs; /* sizes outer (smallest W*H first, whatever the order
                                    given), block shapes inner (as given) */
    int n;
};

#define TUNE_DEFAULT_SIZES "240,496,784,1016,1232,1680,2024"
#define TUNE_DEFAULT_BLOCKS                                                                  \
    "8x8,16x16,24x24,32x32,64,128,192,256,320,384,448,512,576,640,704,768,832,896,960,1024"

/* `lscat tune --space fit` (the default): shapes fitted to the kernel's indexing
 * (kernels.indexing, docs/tune.md "Spaces"). A 1D kernel gets 1D shapes, its grid covering
 * W*H; a kernel indexing y (2d, 3d) gets 2D shapes and (BX,1) rows, its grid (ceil(W/BX),
 * ceil(H/BY)) covering W x H for each. 20 shapes each, as LS-CAT's list. */
#define TUNE_BLOCKS_1D                                                                       \
    "32,64,96,128,160,192,224,256,320,384,448,512,576,640,704,768,832,896,960,1024"
#define TUNE_BLOCKS_2D                                                                       \
    "8x8,16x8,16x16,24x24,32x4,32x8,32x16,32x32,64x4,64x8,64x16,128x2,128x4,128x8,256x4,"   \
    "64,128,256,512,1024"

/* The block lists of a named space: "fit" (NULL = the default) gives TUNE_BLOCKS_1D for 1D
 * kernels and TUNE_BLOCKS_2D for kernels indexing y; "lscat" LS-CAT's 20 shapes
 * (TUNE_DEFAULT_BLOCKS) for every kernel (*blocks_2d NULL). An explicit --blocks list (not
 * NULL) is every kernel's and goes only with the default name. Returns 0 or LSCAT_EINVALID. */
int tune_space_named(const char **blocks_1d, const char **blocks_2d, const char *name,
                     const char *blocks);

/* Build the space from two comma lists: sizes "N" (square) or "WxH"; blocks "X" (1D),
 * "XxY" or "XxYxZ". NULL takes the default. Every value must be 1..65536 and a block at most
 * 1024 threads; duplicates are dropped. Returns 0 or LSCAT_EINVALID with a message. */
int tune_space_parse(struct tune_space *out, const char *sizes, const char *blocks);
void tune_space_release(struct tune_space *s);
/* base with block bx x by x bz added at each of its sizes, into *out (released by the caller),
 * when base lacks it: 1. 0 when base has it already (out untouched). The source's own launch
 * that the probe kept (docs/tune.md "Spaces"). */
int tune_space_with_block(struct tune_space *out, const struct tune_space *base, int bx, int by,
                          int bz);
/* Index of c in the space, or -1. */
int tune_space_find(const struct tune_space *s, const struct tune_config *c);

#endif
