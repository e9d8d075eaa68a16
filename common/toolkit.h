/* Where the CUDA compiler and lscat's shared sources are: one lookup for every stage that
 * compiles (execute's harness builds, sweep's user builds). */
#ifndef LSCAT_TOOLKIT_H
#define LSCAT_TOOLKIT_H

/* nvcc: `given` when set (NULL when it is not executable), else $CUDA_HOME/bin/nvcc (default
 * /usr/local/cuda), else the first nvcc on $PATH. A heap string, or NULL when none is found. */
char *toolkit_find_nvcc(const char *given);

/* The folder holding lscat's shared sources, recognised by the file `marker` in it (e.g.
 * "tune/timing.cu"): $LSCAT_SHARE_DIR when set (NULL when it lacks the marker), else
 * <folder of this program>/../share/lscat, else `source_dir` (the tree it was built from). A
 * heap string, or NULL when none has the marker. */
char *toolkit_find_share(const char *marker, const char *source_dir);

#endif
