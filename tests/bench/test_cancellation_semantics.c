/*
 * test_cancellation_semantics.c - the cancellation suite refuses wrong semantics.
 *
 * The suite (players/suites/cancellation/cancellation.c, compiled in here) runs one nested
 * arm against a fake subject whose groups complete at the frame. Correct, the arm emits its
 * two rows with no failure, the Cancel row stating the Complete row's time as its control
 * (not subtracted). Each broken variant must fail the row with its reason and emit no
 * sample worth gating: a cleanup run twice, a cancelled group whose outcome does not name the
 * token, a method that completes instead of reading CANCELED, a round that leaves bytes on
 * the heap (a leak), a group still pending after the frame.
 */
#include "../runtime/td_test.h"
#include "fake_host.h"
#include "../../players/suites/cancellation/cancellation.c"

/* ---- the fake subject: a group of n methods finished by the next frame ------------------ */

enum { BREAK_NONE, BREAK_CLEANUP_TWICE, BREAK_TOKEN, BREAK_COMPLETES, BREAK_LEAK, BREAK_PENDING };
static int breakage;
static uint32_t group_n, group_finished;
static int group_typed, group_shape, group_requested, group_started;
static int64_t live_bytes;
static uint64_t clock_ns;

static int fake_cancel_start(int typed, int shape, uint32_t n)
{
    if (group_started) return -1;
    group_started = 1;
    group_typed = typed;
    group_shape = shape;
    group_n = n;
    group_finished = 0;
    group_requested = 0;
    if (breakage == BREAK_LEAK) live_bytes += 64;
    return 0;
}

static int fake_cancel_request(void) { return group_requested++ ? -1 : 0; }
static void fake_frame(void) { group_finished = breakage == BREAK_PENDING ? group_n - 1 : group_n; }
static uint32_t fake_cancel_pending(void) { return group_n - group_finished; }

static int fake_cancel_get(int typed, td_cancel_tally *out)
{
    (void)typed;
    int64_t n = group_n;
    group_started = 0;
    out->status = group_requested ? TD_TALLY_CANCELED : TD_TALLY_SUCCEEDED;
    out->token_ok = group_requested && breakage != BREAK_TOKEN;
    out->cleanups = (uint32_t)(breakage == BREAK_CLEANUP_TWICE ? 2 * n : n);
    out->canceled = group_requested ? (uint32_t)(breakage == BREAK_COMPLETES ? n - 1 : n) : 0;
    out->value = group_typed && !group_requested ? (group_shape == TD_CANCEL_NESTED ? n : n * (n + 1) / 2) : 0;
    return 0;
}

const td_subject_ops td_subject = {
    .frame = fake_frame,
    .cancel_start = fake_cancel_start,
    .cancel_request = fake_cancel_request,
    .cancel_pending = fake_cancel_pending,
    .cancel_get = fake_cancel_get,
};

/* ---- the fake host: every clock read 1 us, rows and failures recorded -------------------- */

static int got_rows, got_fails, got_subtract;
static int64_t got_control;
static uint64_t got_ns;
static char got_fail[512];

static uint64_t fake_now(void) { return clock_ns += 1000; }
static int64_t fake_live(void) { return live_bytes; }

static void fake_row_ext(void *ctx, const td_player_row *row, const td_player_row_ext *ext)
{
    (void)ctx;
    got_rows++;
    if (strncmp(row->name, "Cancel ", 7)) return;
    got_ns = row->ns;
    got_control = ext->control_ns;
    got_subtract = ext->subtract_control;
}

static void fake_fail(void *ctx, const char *row, const char *message)
{
    (void)ctx, (void)row;
    if (!got_fails++) snprintf(got_fail, sizeof got_fail, "%s", message);
}

static void run(int broken)
{
    /* a measured call: the leak check is on */
    td_player_host h = fake_host("nested typed N=100", fake_now, fake_live, fake_row_ext, fake_fail);
    breakage = broken;
    group_started = 0;
    got_rows = got_fails = got_subtract = 0;
    got_control = 0;
    got_fail[0] = 0;
    TD_CHECK(td_suite_cancellation(&h, NULL) == TD_PLAYER_OK);
}

static void correct_groups(void)
{
    run(BREAK_NONE);
    TD_CHECK(got_fails == 0 && got_rows == 2);
    TD_CHECK(got_subtract == 0 && got_control > 0 && (uint64_t)got_control <= got_ns);
    printf("correct: 2 rows, Cancel %llu ns with its control %lld ns stated\n", (unsigned long long)got_ns,
           (long long)got_control);
}

static void broken_groups(void)
{
    static const struct { int breakage; const char *reason; } cases[] = {
        { BREAK_CLEANUP_TWICE, "cleanups run: expected 100, got 200" },
        { BREAK_TOKEN, "group outcome names the token: expected 1, got 0" },
        { BREAK_COMPLETES, "methods read CANCELED with the token: expected 100, got 99" },
        { BREAK_LEAK, "bytes left on the heap by a round: expected 0, got 64" },
        { BREAK_PENDING, "finished after the frame: expected 0, got 1" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run(cases[i].breakage);
        TD_CHECK(got_fails >= 1);
        TD_CHECK(strstr(got_fail, cases[i].reason) != NULL);
        printf("broken %zu: %s\n", i, got_fail);
    }
}

int main(void)
{
    TD_RUN(correct_groups);
    TD_RUN(broken_groups);
    return TD_TEST_SUMMARY();
}
