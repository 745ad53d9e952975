/*
 * gate_busy.c - a FAIL that rests on busy processes (issue 42, item 4).
 *
 * The attempt observes each process (runs/observations/<process>.json: other processes'
 * CPU during the run, "busy" above 25%) and re-runs a busy one within a budget
 * (tools/attempt/att_measure.c). When the host stayed busy, a gated line can FAIL only
 * because of its busy processes: without them (the quiet ones alone, against the same
 * thresholds) it would pass, or nothing quiet is left. Such a FAIL measured the host, not
 * the code: the line says so, and when every FAIL of the run is of that kind the gate is
 * INVALID (never a clean FAIL, never PASS) with the rows and how busy their processes were.
 */
#include "gate_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The observation of a report's process ("p01-x.json" -> process "p01-x"); NULL if none. */
static const ge_obs *obs_of(const gate_result *res, const char *report)
{
    size_t n = strlen(report);
    if (n > 5 && !strcmp(report + n - 5, ".json")) n -= 5;
    for (size_t i = 0; i < res->nobs; i++)
        if (strlen(res->obs[i].process) == n && !strncmp(res->obs[i].process, report, n)) return &res->obs[i];
    return NULL;
}

/* 1 when the line's FAIL needs a busy process: its quiet processes alone pass (or none is
 * quiet). *cpu: the busiest of its busy processes. */
static int fail_rests_on_busy(const gate_result *res, const ge_line *L, double *cpu)
{
    double *q = malloc((L->nproc + 1) * sizeof *q);
    size_t nq = 0, nbusy = 0;
    *cpu = 0;
    for (size_t p = 0; p < L->nproc; p++) {
        if (isnan(L->ratio[p])) continue;
        const ge_obs *o = obs_of(res, L->proc[p]);
        if (gate_process_busy(res, L->proc[p])) {
            nbusy++;
            if (isfinite(o->cpu) && o->cpu > *cpu) *cpu = o->cpu;
        } else {
            q[nq++] = L->ratio[p];
        }
    }
    int rests = 0;
    if (nbusy) {
        double worst = 0;
        for (size_t i = 0; i < nq; i++) worst = fmax(worst, q[i]);
        rests = !nq || (gs_median(q, nq) <= L->thr_median && (isnan(L->thr_worst) || worst <= L->thr_worst));
    }
    free(q);
    return rests;
}

int gate_process_busy(const gate_result *res, const char *report)
{
    const ge_obs *o = obs_of(res, report);
    return o && !strcmp(o->status, "busy");
}

char *gate_busy_judge(gate_result *res)
{
    size_t nfail = 0, nbusy = 0;
    double top = 0;
    gate_buf rows = { 0 };
    for (size_t i = 0; i < res->nlines; i++) {
        ge_line *L = &res->lines[i];
        if (!L->result || strcmp(L->result, "FAIL")) continue;
        nfail++;
        double cpu;
        if (!fail_rests_on_busy(res, L, &cpu)) continue;
        L->busy_only = 1;
        L->busy_cpu = cpu;
        top = fmax(top, cpu);
        if (nbusy++ < 8) gate_buf_printf(&rows, "%s%s / %s vs %s [%s]", nbusy > 1 ? "; " : "", L->suite, L->row, L->peer, L->backend);
    }
    for (size_t i = 0; i < res->nallocs; i++) nfail += !strcmp(res->allocs[i].result, "FAIL");
    char *why = NULL;
    if (nfail && nbusy == nfail) {
        size_t len = (rows.p ? strlen(rows.p) : 0) + 256;
        why = malloc(len);
        snprintf(why, len, "every FAIL rests on processes observed busy (other CPU up to %.0f%%): %zu row(s): %s%s; "
                           "re-run on a quiet host", top, nbusy, rows.p ? rows.p : "", nbusy > 8 ? "; ..." : "");
    }
    free(rows.p);
    return why;
}
