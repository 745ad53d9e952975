/*
 * att_project.c - what the attempt takes from the project file (tandem.json,
 * tools/lib/tl_project.h): the subjects (gate subject, peers, lower bound, in that order),
 * the gate (its section over the built-in defaults, gate_config_from_project, as `tandem
 * gate` reads it) and its gated suites, the report-only suites, the smoke suite and the
 * attempt's defaults. Options given on the command line still win.
 */
#include "att.h"
#include "att_run.h"

#include "tl_project.h"
#include "tl_home.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tandem's own report-only default-retention suites, those the project has. */
static const char *const report_only_default[] = { "primary", "builderlifecycle", "whenany", "buildercycle" };

static void append(char *buf, size_t len, const char *name)
{
    size_t l = strlen(buf);
    snprintf(buf + l, len - l, "%s%s", l ? "," : "", name);
}

int att_project_load(att *a, const char *given)
{
    const tl_project *p = &a->proj;   /* kept for the baseline (att_baseline.c) */
    if (tl_project_open(given, tl_home(), &a->proj)) return 1;
    snprintf(a->project, sizeof a->project, "%s", p->root);
    /* the gate: the project's section over the built-in defaults (as `tandem gate`
     * reads it); its gated suites are the ones with gated processes, in the project's
     * order when it names them */
    gate_config_default(&a->gate);
    if (gate_config_from_project(&a->gate, p)) return 1;
    if (p->ngated_suites)
        for (int i = 0; i < p->ngated_suites && a->ngated < ATT_MAX_GATED; i++) a->gated[a->ngated++] = strdup(p->gated_suites[i]);
    else
        for (int s = 0; s < a->gate.nsuites && a->ngated < ATT_MAX_GATED; s++)
            if (a->gate.suites[s].gated) a->gated[a->ngated++] = strdup(a->gate.suites[s].name);
    /* report-only default-retention processes: the project's suites among Tandem's list,
     * never a suite the project does not stage */
    for (size_t i = 0; i < sizeof report_only_default / sizeof *report_only_default; i++)
        if (tl_project_suite_find(p, report_only_default[i]))
            append(a->report_only_default, sizeof a->report_only_default, report_only_default[i]);
    append(a->def_subjects, sizeof a->def_subjects, p->gate_subject);
    for (int i = 0; i < p->npeers; i++) append(a->def_subjects, sizeof a->def_subjects, p->peers[i]);
    if (p->lower_bound) append(a->def_subjects, sizeof a->def_subjects, p->lower_bound);
    for (int i = 0; i < p->nbackends; i++) append(a->def_backends, sizeof a->def_backends, p->backends[i]);
    if (!a->def_backends[0]) snprintf(a->def_backends, sizeof a->def_backends, "aot,jit");
    a->smoke = p->smoke != NULL;
    snprintf(a->gate_subject, sizeof a->gate_subject, "%s", p->gate_subject);
    a->def_rounds = p->rounds;
    a->def_samples = p->samples;
    a->def_timeout = p->timeout;
    return 0;
}

void att_project_free(att *a)
{
    for (int i = 0; i < a->ngated; i++) free(a->gated[i]);
    a->ngated = 0;
    tl_project_free(&a->proj);
}
