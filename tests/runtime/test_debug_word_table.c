/*
 * test_debug_word_table.c - the word's state table executes (detail/word.h), built only in the
 * debug variants (label debug, clang and tcc, TD_DEBUG): the table's rows accept the
 * protocol's own transitions and refuse their neighbours, and a seeded illegal transition
 * (the consumer storing a pending word of its own version) aborts with a message that names
 * the source's kind, the actor, both words and the rule.
 */
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>
#include "td_test.h"
#include <tandem/tandem.h>

#if !defined(TD_DEBUG)
#error "test_debug_word_table is built with TD_DEBUG only (tests/runtime/CMakeLists.txt)"
#endif

#define V1 (1u * TD_TOKEN_STEP)
#define V2 (2u * TD_TOKEN_STEP)
#define LEGAL(actor, o, n) TD_CHECK(td_word_rule_broken_((actor), (o), (n)) == NULL)
#define ILLEGAL(actor, o, n) TD_CHECK(td_word_rule_broken_((actor), (o), (n)) != NULL)

static void table_rows_accept_the_protocol(void)
{
    LEGAL(TD_ACTOR_OWNER, V1 | TD_SUCCEEDED | TD_MODE_CONSUMED, V2);
    LEGAL(TD_ACTOR_OWNER, V1 | TD_PENDING | TD_WORD_POOLED, V1);
    LEGAL(TD_ACTOR_CLAIMER, V1, V1 | TD_WORD_CLAIMED);
    LEGAL(TD_ACTOR_COMPLETER, V1 | TD_WORD_CLAIMED, V1 | TD_FAULTED);
    LEGAL(TD_ACTOR_COMPLETER, V1 | TD_MODE_AWAITED, V1 | TD_MODE_AWAITED | TD_SUCCEEDED | TD_WORD_RECORD);
    LEGAL(TD_ACTOR_COMPLETER, V1, V1 | TD_SUCCEEDED | TD_WORD_POOLED);
    LEGAL(TD_ACTOR_HANDOVER, V1 | TD_MODE_AWAITED | TD_WORD_RESUMES_RUNNER,
          V1 | TD_MODE_CONSUMED | TD_WORD_RESUMES_RUNNER | TD_SUCCEEDED);
    LEGAL(TD_ACTOR_REGISTRAR, V1, V1 | TD_MODE_AWAITED | TD_WORD_RESUMES_RUNNER);
    LEGAL(TD_ACTOR_SHARER, V1 | TD_CANCELED, V1 | TD_CANCELED | TD_MODE_SHARED);
    LEGAL(TD_ACTOR_CONSUMER, V1 | TD_SUCCEEDED, V1 | TD_SUCCEEDED | TD_MODE_CONSUMED);
    LEGAL(TD_ACTOR_CONSUMER, V1 | TD_SUCCEEDED | TD_WORD_POOLED, V2 | TD_WORD_POOLED);
}

static void table_rows_refuse_their_neighbours(void)
{
    ILLEGAL(TD_ACTOR_OWNER, V1 | TD_SUCCEEDED, V1);                         /* no new version */
    ILLEGAL(TD_ACTOR_OWNER, V1 | TD_SUCCEEDED, V2 | TD_SUCCEEDED);          /* not pending */
    ILLEGAL(TD_ACTOR_CLAIMER, V1 | TD_WORD_CLAIMED, V1 | TD_WORD_CLAIMED);  /* claimed twice */
    ILLEGAL(TD_ACTOR_COMPLETER, V1 | TD_SUCCEEDED, V1 | TD_FAULTED);        /* completed twice */
    ILLEGAL(TD_ACTOR_COMPLETER, V1, V2 | TD_SUCCEEDED);                     /* version moved */
    ILLEGAL(TD_ACTOR_COMPLETER, V1 | TD_MODE_AWAITED, V1 | TD_SUCCEEDED);   /* continuation lost */
    ILLEGAL(TD_ACTOR_HANDOVER, V1, V1 | TD_SUCCEEDED | TD_MODE_CONSUMED);   /* nobody waits */
    ILLEGAL(TD_ACTOR_REGISTRAR, V1 | TD_MODE_AWAITED, V1 | TD_MODE_AWAITED);/* second waiter */
    ILLEGAL(TD_ACTOR_REGISTRAR, V1 | TD_SUCCEEDED, V1 | TD_SUCCEEDED | TD_MODE_AWAITED);
    ILLEGAL(TD_ACTOR_SHARER, V1 | TD_MODE_AWAITED, V1 | TD_MODE_SHARED);
    ILLEGAL(TD_ACTOR_CONSUMER, V1, V1 | TD_MODE_CONSUMED);                  /* still pending */
    ILLEGAL(TD_ACTOR_CONSUMER, V1 | TD_SUCCEEDED, V1);                      /* a pending word */
    ILLEGAL(TD_ACTOR_CONSUMER, V1 | TD_SUCCEEDED, V2 | TD_WORD_POOLED);     /* pooled from nowhere */
    ILLEGAL(TD_ACTOR_CONSUMER, V1 | TD_WORD_CLAIMED | TD_SUCCEEDED, V2);
}

/* The seeded illegal transition, in a child: the consumer of a completed manual source stores
 * the pending word of the same version (what a consumption that forgot to end its token and
 * reset the status instead would write). */
static void seeded_illegal_transition_aborts_naming_it(void)
{
    int pipefd[2];
    TD_CHECK(pipe(pipefd) == 0);
    pid_t pid = fork();
    TD_CHECK(pid >= 0);
    if (pid == 0) {
        dup2(pipefd[1], 2);
        td_runtime_init(NULL);
        td_completion_source *cs = td_completion_source_new();
        td_completion_source_set_result(cs, 3);
        td_source *s = td_completion_source_task(cs).source;
        uint32_t w = td_atomic_load_u32(&s->word);
        TD_WORD_STORE_(s, TD_ACTOR_CONSUMER, w & TD_WORD_VERSION_MASK);
        _exit(0);                       /* not reached when the table holds */
    }
    close(pipefd[1]);
    char buf[2048];
    size_t got = 0;
    ssize_t n;
    while (got < sizeof(buf) - 1 && (n = read(pipefd[0], buf + got, sizeof(buf) - 1 - got)) > 0)
        got += (size_t)n;
    buf[got] = '\0';
    close(pipefd[0]);
    int status = 0;
    TD_CHECK(waitpid(pid, &status, 0) == pid);
    TD_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    TD_CHECK(strstr(buf, "illegal word transition") != NULL);
    TD_CHECK(strstr(buf, "completion-source source") != NULL);      /* the kind */
    TD_CHECK(strstr(buf, "by the consumer") != NULL);                /* the actor */
    TD_CHECK(strstr(buf, "SUCCEEDED, mode NONE) -> ") != NULL);      /* the old word */
    TD_CHECK(strstr(buf, "PENDING, mode NONE); rule: consumer") != NULL);   /* new, rule */
}

int main(void)
{
    TD_RUN(table_rows_accept_the_protocol);
    TD_RUN(table_rows_refuse_their_neighbours);
    TD_RUN(seeded_illegal_transition_aborts_naming_it);
    return TD_TEST_SUMMARY();
}
