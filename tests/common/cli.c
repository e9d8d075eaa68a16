/* Tests for common/cli.c: global and stage options, values (also from the environment the
 * dispatcher fills), errors, subcommand discovery, the subcommand table and internal modes. */
#include "common/cli.h"
#include "common/error.h"
#include "tests/support/test.h"

#include <stdlib.h>

enum { O_FROM = 1, O_FORCE };
static const struct cli_opt opts[] = {
    { "from", 0, "HOUR", "first hour", O_FROM },
    { "force", 'f', NULL, "force", O_FORCE },
    CLI_OPT_END,
};

struct seen {
    const char *from;
    int force;
};

static int on_opt(void *ctx, int id, const char *arg)
{
    struct seen *s = ctx;
    if (id == O_FROM) {
        if (!strcmp(arg, "bad"))
            return lscat_error_setc(LSCAT_EINVALID, "--from: 'bad' is not an hour");
        s->from = arg;
    }
    if (id == O_FORCE)
        s->force++;
    return 0;
}

static int parse(struct cli *cli, struct seen *s, char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    memset(s, 0, sizeof(*s));
    return cli_parse(cli, "lscat-test", argc, argv, opts, on_opt, s);
}

static void test_cli__parses_globals_stage_options_and_arguments_anywhere(void)
{
    unsetenv("LSCAT_DB");
    unsetenv("LSCAT_WORK");
    char *argv[] = { "p", "scan", "--work", "/tmp/w", "-j4", "--from=2015-01-01T00", "-f",
                     "x", "-vv", "--", "--not-an-option", NULL };
    struct cli cli;
    struct seen s;
    CHECK_INT(parse(&cli, &s, argv), ==, 0);
    CHECK_STR(cli.work_dir, "/tmp/w");
    CHECK_STR(cli.db_path, "/tmp/w/lscat.db"); /* --db follows --work */
    CHECK_INT(cli.jobs, ==, 4);
    CHECK_INT(cli.verbosity, ==, 2);
    CHECK_STR(s.from, "2015-01-01T00");
    CHECK_INT(s.force, ==, 1);
    CHECK_INT(cli.nargs, ==, 3);
    CHECK_STR(cli.args[0], "scan");
    CHECK_STR(cli.args[1], "x");
    CHECK_STR(cli.args[2], "--not-an-option");
    cli_release(&cli);
}

static void test_cli__environment_supplies_defaults_and_flags_win(void)
{
    setenv("LSCAT_DB", "/tmp/env.db", 1);
    setenv("LSCAT_JOBS", "3", 1);
    char *argv1[] = { "p", NULL };
    struct cli cli;
    struct seen s;
    CHECK_INT(parse(&cli, &s, argv1), ==, 0);
    CHECK_STR(cli.db_path, "/tmp/env.db");
    CHECK_INT(cli.jobs, ==, 3);
    cli_release(&cli);
    char *argv2[] = { "p", "--db", "/tmp/flag.db", "--jobs", "2", NULL };
    CHECK_INT(parse(&cli, &s, argv2), ==, 0);
    CHECK_STR(cli.db_path, "/tmp/flag.db");
    CHECK_INT(cli.jobs, ==, 2);
    cli_release(&cli);
    unsetenv("LSCAT_DB");
    unsetenv("LSCAT_JOBS");
}

static void test_cli__usage_errors_name_the_option(void)
{
    struct cli cli;
    struct seen s;
    char *a1[] = { "p", "--frobnicate", NULL };
    CHECK_INT(parse(&cli, &s, a1), ==, LSCAT_EINVALID);
    CHECK_STR(lscat_error_last(), "unknown option '--frobnicate'");
    cli_release(&cli);
    char *a2[] = { "p", "--from", NULL };
    CHECK_INT(parse(&cli, &s, a2), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "'--from' needs a value");
    cli_release(&cli);
    char *a3[] = { "p", "-j", "zero", NULL };
    CHECK_INT(parse(&cli, &s, a3), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "not a whole number");
    cli_release(&cli);
    char *a4[] = { "p", "-j0", NULL };
    CHECK_INT(parse(&cli, &s, a4), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "out of range");
    cli_release(&cli);
    char *a5[] = { "p", "--from", "bad", NULL };
    CHECK_INT(parse(&cli, &s, a5), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "not an hour");
    cli_release(&cli);
    char *a6[] = { "p", "--force=yes", NULL };
    CHECK_INT(parse(&cli, &s, a6), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "takes no value");
    cli_release(&cli);
    char *a7[] = { "p", "--log-format", "xml", NULL };
    CHECK_INT(parse(&cli, &s, a7), ==, LSCAT_EINVALID);
    cli_release(&cli);
}

static void test_cli__help_is_reported_to_the_caller(void)
{
    struct cli cli;
    struct seen s;
    char *a[] = { "p", "scan", "--help", NULL };
    CHECK_INT(parse(&cli, &s, a), ==, CLI_HELP);
    cli_release(&cli);
}

static void test_cli__finds_the_subcommand_after_global_options(void)
{
    char *a[] = { "p", "--db", "x.db", "-j", "2", "-v", "fetch", "--method", "git", NULL };
    CHECK_INT(cli_find_subcommand(NULL, 9, a), ==, 6);
    char *b[] = { "p", "-q", NULL };
    CHECK_INT(cli_find_subcommand(NULL, 2, b), ==, -1);
}

static void test_cli__a_stage_options_value_is_not_taken_for_the_subcommand(void)
{
    char *a[] = { "p", "--from", "scan", "-f", "import", NULL };
    CHECK_INT(cli_find_subcommand(opts, 5, a), ==, 4);
    CHECK_INT(cli_find_subcommand(NULL, 5, a), ==, 2); /* without the table: a word */
    char *b[] = { "p", "--from=x", "-j4", "scan", NULL };
    CHECK_INT(cli_find_subcommand(opts, 4, b), ==, 3);
}

static void test_cli__bad_global_values_from_the_environment_are_usage_errors(void)
{
    static const char *const bad_jobs[] = { "abc", "0", "-1", "1.5" };
    struct cli cli;
    struct seen s;
    char *argv[] = { "p", NULL };
    for (int i = 0; i < 4; i++) {
        setenv("LSCAT_JOBS", bad_jobs[i], 1);
        CHECK_INT(parse(&cli, &s, argv), ==, LSCAT_EINVALID);
        CHECK_CONTAINS(lscat_error_last(), "LSCAT_JOBS");
        CHECK_CONTAINS(lscat_error_last(), bad_jobs[i]);
        CHECK_INT(cli.jobs, >=, 1);
        cli_release(&cli);
    }
    char *flag[] = { "p", "-j", "2", NULL }; /* the option after the stage name wins */
    CHECK_INT(parse(&cli, &s, flag), ==, 0);
    CHECK_INT(cli.jobs, ==, 2);
    cli_release(&cli);
    unsetenv("LSCAT_JOBS");
    setenv("LSCAT_LOG_FORMAT", "xml", 1);
    CHECK_INT(parse(&cli, &s, argv), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "'xml' is not text or json");
    CHECK_INT(cli.log_json, ==, 0);
    cli_release(&cli);
    setenv("LSCAT_LOG_FORMAT", "json", 1);
    CHECK_INT(parse(&cli, &s, argv), ==, 0);
    CHECK_INT(cli.log_json, ==, 1);
    cli_release(&cli);
    unsetenv("LSCAT_LOG_FORMAT");
}

static void test_cli__check_global_applies_the_parsers_rules(void)
{
    CHECK_OK(cli_check_global("-j", "8"));
    CHECK_OK(cli_check_global("--jobs", "1"));
    CHECK_INT(cli_check_global("-j", "abc"), ==, LSCAT_EINVALID);
    CHECK_CONTAINS(lscat_error_last(), "-j: 'abc' is not a whole number");
    CHECK_INT(cli_check_global("--jobs", "0"), ==, LSCAT_EINVALID);
    CHECK_INT(cli_check_global("-j", "1.5"), ==, LSCAT_EINVALID);
    CHECK_INT(cli_check_global("--log-format", "xml"), ==, LSCAT_EINVALID);
    CHECK_OK(cli_check_global("--log-format", "json"));
    CHECK_OK(cli_check_global("--db", "anything"));
}

static int mode_argc;
static char *mode_argv[8];

static int record_mode(int argc, char **argv)
{
    mode_argc = argc;
    for (int i = 0; i < argc && i < 8; i++)
        mode_argv[i] = argv[i];
    return 7;
}

enum { SUB_SCAN = 1, SUB_FETCH };
static const struct cli_subcommand subs[] = {
    { .name = "scan", .id = SUB_SCAN },
    { .name = "fetch", .id = SUB_FETCH },
    { .name = "--worker", .mode = record_mode },
    { .name = "serve", .mode = record_mode },
    CLI_SUBCOMMAND_END,
};

static void test_cli__internal_modes_run_on_the_command_line_without_their_word(void)
{
    int code = 0;
    char *a[] = { "prog", "--worker", "root", "file", NULL };
    CHECK_INT(cli_run_mode(&code, subs, opts, 4, a), ==, 1);
    CHECK_INT(code, ==, 7);
    CHECK_INT(mode_argc, ==, 3);
    CHECK_STR(mode_argv[0], "prog");
    CHECK_STR(mode_argv[1], "root");
    char *b[] = { "prog", "-v", "serve", "--x", NULL }; /* global options before the word stay */
    CHECK_INT(cli_run_mode(&code, subs, opts, 4, b), ==, 1);
    CHECK_INT(mode_argc, ==, 3);
    CHECK_STR(mode_argv[0], "prog");
    CHECK_STR(mode_argv[1], "-v");
    CHECK_STR(mode_argv[2], "--x");
    char *c[] = { "prog", "scan", "--worker", NULL }; /* a flag mode only as the first word */
    CHECK_INT(cli_run_mode(&code, subs, opts, 3, c), ==, 0);
    char *d[] = { "prog", "--from", "serve", NULL }; /* an option's value, not the mode */
    CHECK_INT(cli_run_mode(&code, subs, opts, 3, d), ==, 0);
}

static void test_cli__subcommands_come_from_the_table_and_others_are_named(void)
{
    struct cli cli;
    struct seen s;
    char *a[] = { "p", "-v", "fetch", NULL };
    CHECK_INT(parse(&cli, &s, a), ==, 0);
    const struct cli_subcommand *sub = cli_subcommand(&cli, subs);
    CHECK(sub != NULL);
    CHECK_INT(sub->id, ==, SUB_FETCH);
    cli_release(&cli);
    char *b[] = { "p", "serve", NULL }; /* an internal mode is not a subcommand */
    CHECK_INT(parse(&cli, &s, b), ==, 0);
    CHECK(cli_subcommand(&cli, subs) == NULL);
    CHECK_STR(lscat_error_last(), "unknown subcommand 'serve' (scan or fetch)");
    cli_release(&cli);
    char *c[] = { "p", NULL };
    CHECK_INT(parse(&cli, &s, c), ==, 0);
    CHECK(cli_subcommand(&cli, subs) == NULL);
    CHECK_STR(lscat_error_last(), "missing subcommand (scan or fetch)");
    CHECK_INT(lscat_error_code(), ==, LSCAT_EINVALID);
    cli_release(&cli);
    CHECK(cli_subcommand_find(subs, "scan") == &subs[0]);
    CHECK(cli_subcommand_find(subs, NULL) == NULL);
}

static void test_cli__a_stage_without_arguments_names_the_first_extra_one(void)
{
    struct cli cli;
    struct seen s;
    char *a[] = { "p", "-v", NULL };
    CHECK_INT(parse(&cli, &s, a), ==, 0);
    CHECK_OK(cli_no_args(&cli));
    cli_release(&cli);
    char *b[] = { "p", "extra", "more", NULL };
    CHECK_INT(parse(&cli, &s, b), ==, 0);
    CHECK_INT(cli_no_args(&cli), ==, LSCAT_EINVALID);
    CHECK_STR(lscat_error_last(), "unexpected argument 'extra'");
    cli_release(&cli);
}

static void test_cli__number_parsers_are_strict(void)
{
    long n;
    double d;
    CHECK_OK(cli_parse_int(&n, "--n", "42", 0, 100));
    CHECK_INT(n, ==, 42);
    CHECK_INT(cli_parse_int(&n, "--n", "42x", 0, 100), <, 0);
    CHECK_INT(cli_parse_int(&n, "--n", "", 0, 100), <, 0);
    CHECK_OK(cli_parse_double(&d, "--t", "0.25", 0, 1));
    CHECK(d == 0.25);
    CHECK_INT(cli_parse_double(&d, "--t", "nan", 0, 1), <, 0);
    CHECK_INT(cli_parse_double(&d, "--t", "2", 0, 1), <, 0);
}

int main(void)
{
    TEST_RUN(test_cli__parses_globals_stage_options_and_arguments_anywhere);
    TEST_RUN(test_cli__environment_supplies_defaults_and_flags_win);
    TEST_RUN(test_cli__usage_errors_name_the_option);
    TEST_RUN(test_cli__help_is_reported_to_the_caller);
    TEST_RUN(test_cli__finds_the_subcommand_after_global_options);
    TEST_RUN(test_cli__a_stage_options_value_is_not_taken_for_the_subcommand);
    TEST_RUN(test_cli__bad_global_values_from_the_environment_are_usage_errors);
    TEST_RUN(test_cli__check_global_applies_the_parsers_rules);
    TEST_RUN(test_cli__internal_modes_run_on_the_command_line_without_their_word);
    TEST_RUN(test_cli__subcommands_come_from_the_table_and_others_are_named);
    TEST_RUN(test_cli__a_stage_without_arguments_names_the_first_extra_one);
    TEST_RUN(test_cli__number_parsers_are_strict);
    return test_done();
}
