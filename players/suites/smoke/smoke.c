/*
 * smoke.c - the smoke suite's entry point and shared helpers: runs the 42 cases of
 * SMOKE.md in order with flow off, tracking off and RunnerPoolCapacity 128.
 */
#include "smoke.h"

#define SMOKE_CASE(n, name) void smoke_case_##n(SMOKE_ARGS);
#include "smoke_cases.def"
#undef SMOKE_CASE

typedef struct smoke_entry { const char *name; td_player_case_fn fn; } smoke_entry;

static const smoke_entry smoke_cases[] = {
#define SMOKE_CASE(n, name) { name, smoke_case_##n },
#include "smoke_cases.def"
#undef SMOKE_CASE
};

static int64_t *smoke_fake_clock;
static int64_t smoke_read_fake_clock(void *arg) { (void)arg; return *smoke_fake_clock; }

td_loop *smoke_loop_begin(int has_end_of_frame, int64_t *fake_clock_ns)
{
    td_loop_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.has_end_of_frame = has_end_of_frame;
    if (fake_clock_ns) {
        smoke_fake_clock = fake_clock_ns;
        cfg.now = smoke_read_fake_clock;
    }
    td_loop *loop = td_loop_create(&cfg);
    td_loop_set_main(loop);
    return loop;
}

void smoke_loop_end(td_loop *loop) { td_loop_destroy(loop); }

td_status smoke_status(td_task t)
{
    td_status st = (td_status)-1;
    if (td_task_status(t, &st) != TD_OK)
        return (td_status)-1;
    return st;
}

int smoke_run_until(td_loop *loop, td_task t, int max)
{
    int frames = 0;
    while (smoke_status(t) == TD_PENDING && frames < max) {
        td_loop_run_frame(loop);
        frames++;
    }
    return frames;
}

int smoke_thread_start(pthread_t *th, void *(*fn)(void *), void *arg)
{
    return pthread_create(th, NULL, fn, arg) == 0;
}

void smoke_thread_join(pthread_t th) { pthread_join(th, NULL); }

int smoke_wait_flag(volatile uint32_t *flag, uint32_t value)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (td_atomic_load_u32(flag) != value) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 2)
            return 0;
        td_cpu_relax();
    }
    return 1;
}

void smoke_settings(td_settings *s)
{
    td_settings_defaults(s);
    s->flow = 0;
    s->tracking = 0;
    s->runner_pool_capacity = 128;
    s->worker_threads = 2;                /* the thread-pool cases need workers */
}

int td_suite_smoke(const td_player_host *host, void *ctx)
{
    td_settings s;
    smoke_settings(&s);
    int count = (int)(sizeof(smoke_cases) / sizeof(smoke_cases[0]));
    host->expect_cases(ctx, 42);
    for (int i = 0; i < count; i++) {
        /* Every case starts from a freshly initialised runtime. */
        if (td_runtime_init(&s) != TD_OK)
            return TD_PLAYER_E_SETUP;
        td_player_run_case(host, ctx, smoke_cases[i].name, smoke_cases[i].fn, NULL);
        td_runtime_shutdown();
    }
    return TD_PLAYER_OK;
}
