/*
 * subject_thread_tsan.c - host/shell/subject_thread.c under ThreadSanitizer (label tsan):
 * each subject's calls run on one thread of its own, distinct per subject and not the
 * caller's, one call at a time, with run_suite's return handed back, none before start or
 * after stop; the handoff orders every access (a plain counter touched by the caller and by
 * every call, which TSan reports as a race if a call could overlap the caller), and stop
 * joins the threads.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "run.h"

pl_state pl_run;

static int failures;
#define CHECK(c, ...)                                                                      \
    do {                                                                                   \
        if (!(c)) {                                                                        \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #c);                  \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fprintf(stderr, "\n");                                                         \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

static long plain_counter;              /* no atomics: the handoff alone orders it */
static pthread_t seen[2];
static int calls[2], moved[2];
static const td_player_host *seen_host;

static int suite_of(int i, const td_player_host *host)
{
    pthread_t me = pthread_self();
    if (calls[i]++ == 0) seen[i] = me;
    else if (!pthread_equal(seen[i], me)) moved[i]++;
    seen_host = host;
    plain_counter++;
    return 10 + i;
}
static int suite_a(const char *suite, const td_player_host *host, void *ctx) { (void)suite, (void)ctx; return suite_of(0, host); }
static int suite_b(const char *suite, const td_player_host *host, void *ctx) { (void)suite, (void)ctx; return suite_of(1, host); }

static const td_player_module mod_a = { .subject = "a", .run_suite = suite_a };
static const td_player_module mod_b = { .subject = "b", .run_suite = suite_b };

int main(void)
{
    td_player_host host;
    memset(&host, 0, sizeof host);
    pl_run.suite = "check";
    pl_run.nsubjects = 2;
    pl_run.subjects[0].mod.entry = &mod_a;
    pl_run.subjects[1].mod.entry = &mod_b;
    int rc0 = -1;
    CHECK(pl_subject_thread_call(0, &host, &rc0) == -1 && rc0 == -1, "a call before start ran (rc %d)", rc0);
    CHECK(pl_subject_threads_start(2) == 0, "start");
    for (int k = 0; k < 200; k++) {
        int i = k % 3 == 0, rc = -1;
        plain_counter++;
        CHECK(pl_subject_thread_call(i, &host, &rc) == 0, "call %d", k);
        CHECK(rc == 10 + i, "call %d: rc %d, want %d", k, rc, 10 + i);
        CHECK(seen_host == &host, "call %d: the host was not handed over", k);
    }
    CHECK(plain_counter == 400, "counter %ld, want 400", plain_counter);
    CHECK(calls[0] + calls[1] == 200 && calls[0] > 0 && calls[1] > 0, "calls %d %d", calls[0], calls[1]);
    CHECK(!moved[0] && !moved[1], "a subject's calls on more than one thread (%d, %d)", moved[0], moved[1]);
    CHECK(!pthread_equal(seen[0], seen[1]), "the two subjects shared a thread");
    CHECK(!pthread_equal(seen[0], pthread_self()) && !pthread_equal(seen[1], pthread_self()), "a call on the caller's thread");
    pl_subject_threads_stop();
    pl_subject_threads_stop(); /* nothing left to join */
    int rc = -1;
    CHECK(pl_subject_thread_call(1, &host, &rc) == -1 && rc == -1, "a call after stop ran (rc %d)", rc);
    printf("subject_thread_tsan: %s\n", failures ? "FAIL" : "ok");
    return failures != 0;
}
