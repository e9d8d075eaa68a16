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

/* Build the space from two comma lists: sizes "N" (square) or "WxH"; blocks "X" (1D),
 * "XxY" or "XxYxZ". NULL takes the default. Every value must be 1..65536 and a block at most
 * 1024 threads; duplicates are dropped. Returns 0 or LSCAT_EINVALID with a message. */
int tune_space_parse(struct tune_space *out, const char *sizes, const char *blocks);
void tune_space_release(struct tune_space *s);
/* Index of c in the space, or -1. */
int tune_space_find(const struct tune_space *s, const struct tune_config *c);

#endif
