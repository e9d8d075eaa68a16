/* The driver of lscat sweep's CPU test fixture: runs fixture_launch with the record's Behave
 * and Work (microseconds), fails the test for Behave=test, and sets the output column Twice
 * (2 x the record number) in cleanup. */
#include "tune/sweep_driver.h"

#include <stdlib.h>
#include <string.h>

int fixture_launch(const char *behave, double us);

static int init(struct lscat_sweep_record *rec, void **data)
{
    (void)rec;
    *data = malloc(16);
    return *data ? 0 : 1;
}

static int launch(struct lscat_sweep_record *rec, void *data, cudaStream_t stream)
{
    (void)data;
    (void)stream;
    return fixture_launch(lscat_sweep_string(rec, "Behave"), lscat_sweep_real(rec, "Work"));
}

static int test(struct lscat_sweep_record *rec, void *data)
{
    (void)data;
    return strcmp(lscat_sweep_string(rec, "Behave"), "test") == 0;
}

static void cleanup(struct lscat_sweep_record *rec, void *data)
{
    lscat_sweep_set_output(rec, "Twice", 2.0 * lscat_sweep_index(rec));
    free(data);
}

const struct lscat_sweep_driver lscat_sweep_driver = {
    .outputs = "Twice",
    .init = init,
    .copy_in = NULL,
    .launch = launch,
    .copy_out = NULL,
    .test = test,
    .cleanup = cleanup,
};
