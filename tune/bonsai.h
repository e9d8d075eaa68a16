/* BONSAI-format search spaces for `lscat sweep` (Kurzak et al., ICPP 2019): a CSV file whose
 * line 1 names the parameters, line 2 gives their types (Integer, Real, String), line 3 says
 * when each is bound (Compile: a -D flag of the build; Runtime: handed to the driver), then one
 * record per line. Parsing is strict: every problem is an error naming the file, the line and
 * the column, never a silently smaller space. Records are grouped by their compile-time tuple
 * so that each distinct tuple is compiled once. */
#ifndef LSCAT_TUNE_BONSAI_H
#define LSCAT_TUNE_BONSAI_H

#include <stddef.h>

enum bonsai_type { BONSAI_INTEGER = 0, BONSAI_REAL = 1, BONSAI_STRING = 2 };
enum bonsai_when { BONSAI_COMPILE = 0, BONSAI_RUNTIME = 1 };

struct bonsai_param {
    char *name;
    enum bonsai_type type;
    enum bonsai_when when;
};

struct bonsai_record {
    int index;      /* 1-based record number: the n-th record of the file (line index + 3) */
    int line;       /* its line in the file */
    char **values;  /* one per parameter, as written (unquoted); owned by the space */
    int group;      /* index into bonsai_space.groups */
};

/* The records that share one compile-time tuple: built once. */
struct bonsai_group {
    int first;      /* index into records of its first record */
    int nrecords;
    int *records;   /* indices into bonsai_space.records, in file order */
};

struct bonsai_space {
    char *path;
    int nparams;
    struct bonsai_param *params;
    int nrecords;
    struct bonsai_record *records;
    int ngroups;
    struct bonsai_group *groups; /* in order of their first record */
};

/* Parse the CSV text `data` (len bytes) read from `path` (for messages). Fields may be quoted
 * ("a,b", "" for a quote); a tab or newline inside a value is refused (values travel in
 * tab-separated lines to the driver). Names must be C identifiers (they become -D macros and
 * are how the driver asks for a value) and unique; the output's own column names (Record,
 * Status, Error, Time) are refused. Returns 0 with *out a new space (bonsai_space_free), or
 * LSCAT_EINVALID with "PATH:LINE:COLUMN: what is wrong" set. */
int bonsai_space_parse(struct bonsai_space **out, const char *path, const char *data, size_t len);
/* Read and parse the file. LSCAT_ERR when it cannot be read. */
int bonsai_space_load(struct bonsai_space **out, const char *path);
void bonsai_space_free(struct bonsai_space *s);

/* The -D flags of a group: "-DNAME=value" for each compile-time parameter, in column order,
 * NULL-terminated; free with bonsai_flags_free. */
char **bonsai_group_flags(const struct bonsai_space *s, int group);
void bonsai_flags_free(char **flags);

/* The parameter named `name`, or -1. */
int bonsai_param_find(const struct bonsai_space *s, const char *name);

/* Record selection for --rows A:B and --shard I/N: is record `index` (1-based) in? rows_from
 * and rows_to 0 mean unbounded; shard_count 0 or 1 means no sharding. Records go to shards by
 * (index - 1) mod N: deterministic, balanced, and the same on every node. */
int bonsai_selected(int index, int rows_from, int rows_to, int shard, int shard_count);

/* A list of record numbers, "3,5-9,12" (1-based, ranges inclusive; how lscat-mpi hands a
 * sweep's chunk to a worker, `--records`): sel[k] = 1 for each k listed (sel has nrecords + 1
 * bytes; sel NULL only checks the syntax). LSCAT_EINVALID naming the bad part, or a number
 * above nrecords. */
int bonsai_records_parse(char *sel, int nrecords, const char *list);

#endif
