/* Role rules for kernel parameters, from their names. The lists come from LS-CAT's description
 * and from reading course and sample code: names are split into lowercase words at '_' and at
 * camel-case humps, then matched whole or by word ("num_cols" is a width, "nElements" a size). */
#include "isolate/params.h"

#include <ctype.h>
#include <string.h>

#define MAX_WORDS 8

/* Split "numCols_A" into "num", "cols", "a". Returns the word count. */
static int split_words(char words[MAX_WORDS][32], const char *name)
{
    int n = 0, len = 0;
    for (const char *p = name;; p++) {
        int boundary = !*p || *p == '_' || !isalnum((unsigned char)*p) ||
                       (len > 0 && isupper((unsigned char)*p) && islower((unsigned char)p[-1]));
        if (boundary && len > 0) {
            words[n][len] = '\0';
            if (++n == MAX_WORDS)
                return n;
            len = 0;
        }
        if (!*p)
            return n;
        if (isalnum((unsigned char)*p) && len < 31)
            words[n][len++] = (char)tolower((unsigned char)*p);
    }
}

static int in_list(const char *w, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(w, *list) == 0)
            return 1;
    return 0;
}

static const char *const width_words[] = {
    "w", "width", "cols", "ncols", "numcols", "ncol", "col", "columns", "nx", "dimx", "xdim",
    "sizex", "xsize", "wid", "cols_a", "imgw", "imagew", "nc", "x", NULL };
static const char *const height_words[] = {
    "h", "height", "rows", "nrows", "numrows", "nrow", "row", "ny", "dimy", "ydim", "sizey",
    "ysize", "imgh", "imageh", "nr", "y", NULL };
static const char *const depth_words[] = { "d", "depth", "nz", "dimz", "zdim", "sizez", "z",
                                           "slices", "channels", "nch", "oc", "ic", "layers",
                                           "nchannels", NULL };
static const char *const size_words[] = {
    "n", "size", "len", "length", "count", "cnt", "num", "nelem", "nelems", "numel", "elements",
    "total", "sz", "nnz", "dim", "m", "k", "nn", "npts", "npoints", "points", "items",
    "nitems", "batch", "nb", "samples", "nsamples", "ne", "elems", "max", "limit", NULL };
static const char *const stride_words[] = { "stride", "pitch", "ld", "lda", "ldb", "ldc",
                                            "step", "offset", "spacing", NULL };
static const char *const scale_words[] = {
    "alpha", "beta", "gamma", "scale", "factor", "coef", "coeff", "a", "b", "c", "lambda",
    "lr", "eps", "epsilon", "dt", "dx", "dy", "mu", "sigma", "weight", "momentum", "rate",
    "theta", "t", "omega", "mult", "multiplier", "val", "value", "tol", "tolerance",
    "temperature", "time", "correction", "decay", "damping", "gain", "bias", "inv", NULL };

static enum params_role role_of_word(const char *word)
{
    char w[32];
    size_t n = strlen(word);
    /* "beta1", "n2", "stride_0": a trailing index does not change the role */
    while (n > 1 && n < sizeof w && isdigit((unsigned char)word[n - 1]))
        n--;
    if (n >= sizeof w)
        n = sizeof w - 1;
    memcpy(w, word, n);
    w[n] = '\0';
    if (in_list(w, width_words))
        return PARAMS_ROLE_WIDTH;
    if (in_list(w, height_words))
        return PARAMS_ROLE_HEIGHT;
    if (in_list(w, depth_words))
        return PARAMS_ROLE_DEPTH;
    if (in_list(w, stride_words))
        return PARAMS_ROLE_STRIDE;
    if (in_list(w, size_words))
        return PARAMS_ROLE_SIZE;
    if (in_list(w, scale_words))
        return PARAMS_ROLE_SCALE;
    return PARAMS_ROLE_UNKNOWN;
}

/* A scalar naming the block or tile size ("blocksize", "tilewidth", "blk"), not a count of
 * blocks ("nblocks", "num_tiles", "blocks"). `joined`: the lowercase words run together. */
static int is_block_scalar(const char *joined)
{
    static const char *const exact[] = { "bs", "bsize", "tpb", "bdim", "dimblock", "blockdim",
                                         "blocksize", "tilesize", "tile", "tilewidth", "tiledim",
                                         "blockwidth", "tw", "ts", "threadsperblock", NULL };
    if (in_list(joined, exact))
        return 1;
    if (!strncmp(joined, "num", 3) || (joined[0] == 'n' && strchr("bt", joined[1])) ||
        strstr(joined, "blocks") || strstr(joined, "tiles"))
        return 0;
    return strstr(joined, "block") || strstr(joined, "tile") || strstr(joined, "blk");
}

enum params_role params_role_of(const char *name)
{
    char words[MAX_WORDS][32], joined[256] = "";
    int n = split_words(words, name);
    for (int i = 0; i < n; i++)
        strncat(joined, words[i], sizeof joined - strlen(joined) - 1);
    enum params_role r = role_of_word(joined);
    if (r != PARAMS_ROLE_UNKNOWN)
        return r;
    if (is_block_scalar(joined)) /* block_size is a block, not a matrix size (#14 item 9) */
        return PARAMS_ROLE_BLOCK;
    /* A dimension of a named matrix: "wA", "hB", "nA", "rows_C" is the first word's role, not
     * the letter's (a lone "a" or "b" reads as a scale factor). */
    if (n == 2 && strlen(words[1]) == 1 && strchr("abc", words[1][0]) &&
        (r = role_of_word(words[0])) != PARAMS_ROLE_UNKNOWN && r != PARAMS_ROLE_SCALE)
        return r;
    if (strstr(joined, "width") || strstr(joined, "cols") || strstr(joined, "column"))
        return PARAMS_ROLE_WIDTH;
    if (strstr(joined, "height") || strstr(joined, "rows"))
        return PARAMS_ROLE_HEIGHT;
    if (strstr(joined, "stride") || strstr(joined, "pitch"))
        return PARAMS_ROLE_STRIDE;
    /* Word by word, most specific first: the last word usually carries the meaning
     * ("num_rows" -> rows, "matrix_size" -> size). */
    for (int i = n - 1; i >= 0; i--) {
        r = role_of_word(words[i]);
        if (r != PARAMS_ROLE_UNKNOWN)
            return r;
    }
    if (strncmp(joined, "num", 3) == 0 || strncmp(joined, "n", 1) == 0 ||
        strstr(joined, "size") || strstr(joined, "len") || strstr(joined, "count"))
        return PARAMS_ROLE_SIZE;
    return PARAMS_ROLE_UNKNOWN;
}

static const char *const role_names[] = { "unknown", "buffer", "width", "height", "depth",
                                          "size", "stride", "scale", "block" };

const char *params_role_name(enum params_role r)
{
    return (unsigned)r < sizeof role_names / sizeof *role_names ? role_names[r] : "unknown";
}

enum params_role params_role_parse(const char *name)
{
    for (unsigned i = 0; i < sizeof role_names / sizeof *role_names; i++)
        if (strcmp(name, role_names[i]) == 0)
            return (enum params_role)i;
    return PARAMS_ROLE_UNKNOWN;
}

int params_is_block_name(const char *name)
{
    char words[MAX_WORDS][32], joined[256] = "";
    int n = split_words(words, name);
    for (int i = 0; i < n; i++)
        strncat(joined, words[i], sizeof joined - strlen(joined) - 1);
    static const char *const exact[] = { "bs", "bx", "by", "bdim", "tpb", "nt", "tb", "nthreads",
                                         "dimblock", "bsize", "b", "ts", "tw", NULL };
    if (in_list(joined, exact))
        return 1;
    return strstr(joined, "block") || strstr(joined, "tile") || strstr(joined, "thread") ||
           strstr(joined, "blk") != NULL;
}
