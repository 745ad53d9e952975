/*
 * subject_thread.c - each subject's timed suite calls on a thread of its own (issue 42).
 *
 * Why: with one heap, two copies of the same code in one process were told apart by their
 * place on the command line, by up to 30% on rows that allocate thousands of objects, in
 * either direction: which one depended only on the bytes allocated before them (the
 * player's --heap-offset moves it; scripts/order_bias.py --heap-offsets shows it). Each
 * subject's objects landed where the other subjects' allocation history had left off.
 * glibc's malloc gives each thread an arena of its own (a fresh heap while there are fewer
 * arenas than its limit, 8 per core): a subject whose calls all run on one thread of its
 * own allocates from a heap that only its own calls (and the host's records of them) have
 * touched, so identical code gets identical placement whatever its position.
 *
 * Invariants:
 *   - one call runs at a time: the main thread hands a call to the subject's thread and
 *     waits for it to end, so the host, pl_run and the subjects are never used by two
 *     threads at once (the mutex orders every access before and after the handoff);
 *   - a subject's calls all run on the same thread, started before any subject's first
 *     call, and each thread allocates once before the next starts: each makes a fresh
 *     arena, none reuses one that another subject's threads used and left (glibc reuses
 *     the arenas of threads that ended, e.g. a suite's workers);
 *   - the main thread allocates nothing for a subject's call (the host's records of a
 *     call are made on the calling thread: the subject's).
 * The smoke suite and the instruction meter keep the main thread: placement moves time, not
 * what a case checks nor the instructions that run; --shared-heap keeps it for timed calls
 * too (the behaviour before, to reproduce the bias).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

typedef struct subject_thread {
    pthread_t thread;
    int started;
    int ready;                 /* its arena attached (its first allocation made) */
    int pending;               /* a call handed over, not yet done */
    int quit;
    int rc;
    td_player_host *host;      /* the call's host (the caller's, used by one thread at a time) */
} subject_thread;            /* subject_threads[i] runs pl_run.subjects[i] */

static subject_thread subject_threads[PL_MAX_SUBJECTS];
static pthread_mutex_t handoff_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t handoff_cond = PTHREAD_COND_INITIALIZER;

static void *subject_thread_main(void *arg)
{
    subject_thread *t = arg;
    const td_player_module *entry = pl_run.subjects[t - subject_threads].mod.entry;
    free(malloc(1)); /* the thread's arena, made now (the invariants above) */
    pthread_mutex_lock(&handoff_lock);
    t->ready = 1;
    pthread_cond_broadcast(&handoff_cond);
    for (;;) {
        while (!t->pending && !t->quit) pthread_cond_wait(&handoff_cond, &handoff_lock);
        if (t->quit) break;
        pthread_mutex_unlock(&handoff_lock);
        int rc = entry->run_suite(pl_run.suite, t->host, NULL);
        pthread_mutex_lock(&handoff_lock);
        t->rc = rc;
        t->pending = 0;
        pthread_cond_broadcast(&handoff_cond);
    }
    pthread_mutex_unlock(&handoff_lock);
    return NULL;
}

int pl_subject_threads_start(int n)
{
    for (int i = 0; i < n && i < PL_MAX_SUBJECTS; i++) {
        subject_thread *t = &subject_threads[i];
        memset(t, 0, sizeof *t);
        /* the default attributes: glibc sizes the stack like the main thread's (RLIMIT_STACK) */
        int e = pthread_create(&t->thread, NULL, subject_thread_main, t);
        if (e) {
            fprintf(stderr, "tandem-player: cannot start the thread of subject '%s': %s\n",
                    pl_run.subjects[i].mod.entry->subject, strerror(e));
            pl_subject_threads_stop();
            return -1;
        }
        t->started = 1;
        pthread_mutex_lock(&handoff_lock);
        while (!t->ready) pthread_cond_wait(&handoff_cond, &handoff_lock);
        pthread_mutex_unlock(&handoff_lock);
    }
    return 0;
}

int pl_subject_thread_call(int index, td_player_host *host, int *rc)
{
    if (index < 0 || index >= PL_MAX_SUBJECTS || !subject_threads[index].started) {
        fprintf(stderr, "tandem-player: subject %d has no thread (pl_subject_threads_start)\n", index);
        return -1;
    }
    subject_thread *t = &subject_threads[index];
    pthread_mutex_lock(&handoff_lock);
    t->host = host;
    t->pending = 1;
    pthread_cond_broadcast(&handoff_cond);
    while (t->pending) pthread_cond_wait(&handoff_cond, &handoff_lock);
    *rc = t->rc;
    pthread_mutex_unlock(&handoff_lock);
    return 0;
}

void pl_subject_threads_stop(void)
{
    pthread_mutex_lock(&handoff_lock);
    for (int i = 0; i < PL_MAX_SUBJECTS; i++)
        if (subject_threads[i].started) subject_threads[i].quit = 1;
    pthread_cond_broadcast(&handoff_cond);
    pthread_mutex_unlock(&handoff_lock);
    for (int i = 0; i < PL_MAX_SUBJECTS; i++)
        if (subject_threads[i].started) {
            pthread_join(subject_threads[i].thread, NULL);
            subject_threads[i].started = 0;
        }
}
