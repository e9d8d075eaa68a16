/* The store's schema as numbered migrations, embedded from schema/NNN_*.sql at build time
 * (mk/embed-sql.sh writes the table). Migration N moves a store from user_version N-1 to N. */
#ifndef LSCAT_SCHEMA_H
#define LSCAT_SCHEMA_H

struct schema_migration {
    int version;
    const char *name; /* file name without .sql */
    const char *sql;
};

extern const struct schema_migration schema_migrations[];
extern const int schema_migration_count;
/* The newest schema version this lscat knows (the last migration's number). */
extern const int schema_version_latest;

#endif
