/*
 * skip.c - `tandem-player --skip-na-of-first`: the rows the first subject (the gate subject
 * of `tandem attempt`) leaves unsupported are skipped by the other subjects of the process.
 * The gate reads such a row as NA whatever the peers measure, so measuring it for them is
 * work nobody asked for (issue 43: a one-row project's attempt spent 96 of ~100 rows on its
 * peers). The rows are learned from one support-only call of the first subject before any
 * measured call (host->support_only: the suite reports its unsupported rows and runs
 * nothing, the subject not initialised), so the measured calls stay as they were.
 */
#include "shell.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char **skip_names;
static size_t skip_n;
static char skip_why[160];

static void skip_collect(void *ctx, const char *name, const char *reason)
{
    (void)ctx, (void)reason;
    if (!name || pl_skip_has(name)) return;
    char **grown = realloc(skip_names, (skip_n + 1) * sizeof *skip_names);
    char *copy = strdup(name);
    if (!grown || !copy) abort();
    skip_names = grown;
    skip_names[skip_n++] = copy;
}

/* A call that does not honour support_only (a case suite, or a module built before it) runs
 * its rows and cases: the host copy hands them to the shell's own callbacks, which discard
 * them outside measured calls, like a warm-up's. */
int pl_skip_probe(const td_player_module *first, const char *suite, const td_player_host *host)
{
    td_player_host h = *host;
    h.subject = first->subject;
    h.support_only = 1;
    h.row_unsupported = skip_collect;
    h.sample_index = -1;
    h.warmup_index = 0;
    snprintf(skip_why, sizeof skip_why, "skipped: NA for the first subject '%s'", first->subject);
    int rc = first->run_suite(suite, &h, NULL);
    if (rc) {
        fprintf(stderr, "tandem-player: --skip-na-of-first: the support-only call of '%s' returned %d: every subject "
                        "runs every row\n", first->subject, rc);
        pl_skip_free();
        return rc;
    }
    fprintf(stderr, "tandem-player: --skip-na-of-first: %zu row(s) NA for '%s', skipped by the other subjects\n", skip_n,
            first->subject);
    return 0;
}

int pl_skip_has(const char *name)
{
    for (size_t i = 0; i < skip_n; i++)
        if (!strcmp(skip_names[i], name)) return 1;
    return 0;
}

const char *pl_skip_reason(void) { return skip_why; }

void pl_skip_free(void)
{
    for (size_t i = 0; i < skip_n; i++) free(skip_names[i]);
    free(skip_names);
    skip_names = NULL;
    skip_n = 0;
}
