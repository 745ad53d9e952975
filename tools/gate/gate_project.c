/*
 * gate_project.c - the gate's configuration from a project's tandem.json ("gate" section),
 * the one place both `tandem gate` (--project, or the project found by the default rule)
 * and `tandem attempt` read it (see gate_config_from_project in gate.h).
 */
#include "gate.h"

#include "tl_err.h"
#include "tl_project.h"

#include <stdio.h>
#include <string.h>

static int in_list(char *const *v, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i], name)) return 1;
    return 0;
}

int gate_config_from_project(gate_config *c, const tl_project *p)
{
    /* the project's configuration file first: the section's own fields are applied over it */
    if (p->gate_config && gate_config_load(p->gate_config, c)) {
        tl_error(p->file, "gate.config", "the gate configuration %s is refused (see above)", p->gate_config);
        return 1;
    }
    if (p->npeers > GATE_MAX_PEERS) {
        tl_error(p->file, "gate.peers", "%d peers: the gate compares at most %d", p->npeers, GATE_MAX_PEERS);
        return 1;
    }
    snprintf(c->subject, sizeof c->subject, "%s", p->gate_subject);
    if (p->npeers) {
        c->npeers = 0;
        for (int i = 0; i < p->npeers; i++) snprintf(c->peers[c->npeers++], sizeof c->peers[0], "%s", p->peers[i]);
    }
    if (p->lower_bound) {
        c->nreport_only_peers = 1;
        snprintf(c->report_only_peers[0], sizeof c->report_only_peers[0], "%s", p->lower_bound);
    }
    c->unsupported_na = !p->unsupported_invalid;
    /* the gated suites: the project's list, else the configuration's among the project's
     * suites (a gated suite the project does not stage would have no process) */
    for (int i = 0; i < p->ngated_suites; i++)
        if (!gate_suite_get(c, p->gated_suites[i])) {
            char f[64];
            snprintf(f, sizeof f, "gate.gatedSuites[%d]", i);
            tl_error(p->file, f, "'%s': the gate configuration holds at most %d suites", p->gated_suites[i],
                     GATE_MAX_SUITES);
            return 1;
        }
    char was[512] = "";
    int ngated = 0;
    for (int s = 0; s < c->nsuites; s++) {
        gate_suite_cfg *sc = &c->suites[s];
        if (sc->gated) {
            size_t l = strlen(was);
            snprintf(was + l, sizeof was - l, "%s%s", l ? ", " : "", sc->name);
        }
        if (p->ngated_suites) sc->gated = in_list(p->gated_suites, p->ngated_suites, sc->name);
        else sc->gated = sc->gated && tl_project_suite_find(p, sc->name) != NULL;
        ngated += sc->gated;
    }
    if (!ngated) {
        tl_error(p->file, "gate.gatedSuites", "none given, and none of the gate's gated suites (%s) is among the "
                 "project's suites", was[0] ? was : "none");
        return 1;
    }
    return 0;
}
