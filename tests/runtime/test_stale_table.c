/*
 * test_stale_table.c - the staleness table (players/suites/stale/stale_table.h) in the
 * runtime's own builds: clang, tcc, ASan+UBSan and TSan (tests/runtime/CMakeLists.txt).
 *
 * Three passes (stale_table.h, STALE_PASS_*): with the default source pools (a consumed
 * source is recycled and every later query must read TD_E_STALE); with the source pools
 * keeping nothing, so that a source released early is freed and the finish of its pending
 * inputs is a use-after-free that the ASan build reports (issue 40's reproduction 2); and
 * consumed by a share instead of a get.
 * TD_STALE_FILTER=text runs only the rows whose name, "ctor [variant]", contains it;
 * TD_STALE_LIST=1 prints the row names and runs nothing (to run rows one per process
 * against an older runtime, whose first broken row may crash the rest).
 */
#include "td_test.h"
#include "td_test_runtime.h"
#include "../../players/suites/stale/stale_table.h"

static int rows_run, rows_failed;
static const char *pass_name;

static void print_failure(void *ctx, const stale_row *row, const char *query, long long want, long long got,
                          int line)
{
    (void)ctx;
    fprintf(stderr, "%s: %s [%s]: %s: expected %lld, actual %lld (stale_table.h:%d)\n", pass_name, row->ctor,
            row->variant, query, want, got, line);
}

static void row_done(void *ctx, const stale_row *row, int failures)
{
    (void)ctx;
    rows_run++;
    if (failures) {
        rows_failed++;
        fprintf(stderr, "FAIL %s: %s [%s]\n", pass_name, row->ctor, row->variant);
    }
}

static void run_pass(int pass)
{
    stale_report rep;
    memset(&rep, 0, sizeof rep);
    rep.fail = print_failure;
    pass_name = stale_pass_names[pass];
    stale_run_table(&rep, getenv("TD_STALE_FILTER"), pass, row_done, NULL);
}

static void pooled_pass(void) { run_pass(STALE_PASS_POOLED); }
static void shared_pass(void) { run_pass(STALE_PASS_SHARED); }

static void unpooled_pass(void)
{
    td_settings s;
    td_settings_defaults(&s);
    TD_CHECK_EQ(TD_OK, td_set_source_pool_capacity(0));
    run_pass(STALE_PASS_UNPOOLED);
    TD_CHECK_EQ(TD_OK, td_set_source_pool_capacity(s.source_pool_capacity));
}

/* The table's rows all ran and none failed (a failed row printed its queries above). */
static void every_row_passed(void)
{
    printf("stale table: %d row runs, %d failed\n", rows_run, rows_failed);
    TD_CHECK(rows_run > 0);
    TD_CHECK_EQ(0, rows_failed);
}

static void list_rows(void)
{
    for (int a = 0; a < STALE_AREAS; a++)
        for (int i = 0; i < stale_area_sizes[a]; i++)
            printf("%s [%s]\n", stale_areas[a][i].ctor, stale_areas[a][i].variant);
}

int main(void)
{
    if (getenv("TD_STALE_LIST")) {
        list_rows();
        return 0;
    }
    if (runtime_init_with_workers(1) != TD_OK)
        return 1;
    TD_RUN(pooled_pass);
    TD_RUN(unpooled_pass);
    TD_RUN(shared_pass);
    TD_RUN(every_row_passed);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
