/*
 * att_sequential.c - more processes for borderline rows, by the sequential rule fixed
 * beforehand (tools/gate/SEQUENTIAL.md; issue 42, item 4).
 *
 * After the planned processes the attempt asks the gate which gated rows are borderline
 * (gate_seq_next: the gate's own evaluation, with what was added so far); each of their
 * suites and backends gets one batch of more processes, within the budget (processes and
 * seconds), then the gate is asked again, up to the rule's number of batches. What was added,
 * look by look, goes to runs/sequential/sequential.json, which the gate reads and checks: it
 * decides each row at its first look where it is not borderline. Nothing here looks at which
 * side of its threshold a row lies, so the rule cannot re-run a row until it passes.
 */
#include "att.h"
#include "att_run.h"
#include "../gate/gate.h"

#include "tl_fs.h"
#include "tl_json.h"
#include "tl_safe.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the rule's time budget: what the added processes may take, so that a default attempt
 * stays within its 5 minutes (SEQUENTIAL.md "Budget") */
#define ATT_SEQ_SECONDS 60.0

/* Mean seconds of the processes already run for a suite and backend (0 when none). */
static double seq_group_seconds(const att *a, const char *suite, const char *backend)
{
    double s = 0;
    int n = 0;
    for (int i = 0; i < a->np; i++)
        if (a->p[i].round && !strcmp(a->p[i].suite, suite) && !strcmp(a->p[i].backend, backend) && a->p[i].seconds > 0) {
            s += a->p[i].seconds;
            n++;
        }
    return n ? s / n : 0;
}

/* Why a row gets more: its figures against its thresholds and its noise band. */
static void seq_log_row(att *a, int look, const gate_seq_row *r, const char *then)
{
    char worst[96] = "";
    if (!isnan(r->thr_worst))
        snprintf(worst, sizeof worst, "; worst %.4f against %.2f, band +-%.4f", r->worst, r->thr_worst, r->worst * r->spread);
    att_log(a, 1, "sequential look %d: %s / %s vs %s [%s] borderline after %d process(es): median %.4f against %.2f, "
                  "band +-%.4f (%s %.1f%%)%s: %s", look, r->suite, r->row, r->peer, r->backend, r->nproc, r->median,
            r->thr_median, r->median * r->spread, r->nproc == 1 ? "one process: the quick band" : "spread", r->spread * 100,
            worst, then);
}

static void seq_save(att *a, cJSON *rec)
{
    char *p = att_path(a, "runs/sequential/sequential.json");
    tl_mkdirs_parent(p);
    tl_json_save(p, rec);
    free(p);
}

/* The next look's processes: a batch for each suite and backend of the rows, while the
 * budget lasts, added to a->p (interleaved: the first process of every suite and backend,
 * then the second, as the plan's rounds) and named in `procs`. Returns how many. */
static int seq_plan_look(att *a, const gate_config *cfg, int look, const gate_seq_row *rows, int n, int budget,
                         int *added, double spent, cJSON *procs)
{
    enum { SEQ_MAX_GROUPS = 32 };
    const gate_seq_row *grp[SEQ_MAX_GROUPS];
    int ngroups = 0, first = a->np;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = !strcmp(rows[j].suite, rows[i].suite) && !strcmp(rows[j].backend, rows[i].backend);
        if (seen) continue;
        double est = seq_group_seconds(a, rows[i].suite, rows[i].backend) * cfg->seq_batch;
        const char *no = *added + cfg->seq_batch > budget || first + (ngroups + 1) * cfg->seq_batch > MAXP || ngroups == SEQ_MAX_GROUPS
                         ? "the process budget is spent" : spent + est > ATT_SEQ_SECONDS ? "the time budget is spent" : NULL;
        char then[160];
        if (no) snprintf(then, sizeof then, "no more processes (%s): decided on these", no);
        else snprintf(then, sizeof then, "%d more process(es) of %s on %s", cfg->seq_batch, rows[i].suite, rows[i].backend);
        for (int j = i; j < n; j++)
            if (!strcmp(rows[j].suite, rows[i].suite) && !strcmp(rows[j].backend, rows[i].backend))
                seq_log_row(a, look, &rows[j], then);
        if (no) continue;
        *added += cfg->seq_batch;
        spent += est;
        grp[ngroups++] = &rows[i];
    }
    for (int k = 0; k < cfg->seq_batch; k++)
        for (int g = 0; g < ngroups; g++) {
            aproc *q = &a->p[a->np];
            memset(q, 0, sizeof *q);
            q->idx = a->np + 1;
            q->round = a->rounds + k + 1;   /* the two layouts alternate, as in the plan */
            snprintf(q->suite, sizeof q->suite, "%s", grp[g]->suite);
            snprintf(q->backend, sizeof q->backend, "%s", grp[g]->backend);
            snprintf(q->retention, sizeof q->retention, "matched");
            snprintf(q->name, sizeof q->name, "p%02d-%s-%s-s%d", q->idx, q->suite, q->backend, look);
            strcpy(q->status, "pending");
            char rel[160];
            snprintf(rel, sizeof rel, "%s.json", q->name);
            cJSON_AddItemToArray(procs, cJSON_CreateString(rel));
            a->np++;
        }
    return a->np - first;
}

/* The record's head: the rule and the budget it ran with. */
static cJSON *seq_record(const gate_config *cfg, int budget)
{
    cJSON *rec = cJSON_CreateObject();
    cJSON_AddNumberToObject(rec, "schemaVersion", 1);
    cJSON_AddStringToObject(rec, "kind", "tandem-sequential");
    cJSON *rule = cJSON_AddObjectToObject(rec, "rule");
    cJSON_AddNumberToObject(rule, "batch", cfg->seq_batch);
    cJSON_AddNumberToObject(rule, "maxBatches", cfg->seq_max_batches);
    cJSON_AddNumberToObject(rule, "quickBand", cfg->seq_quick_band);
    cJSON_AddNumberToObject(rule, "budgetProcesses", budget);
    cJSON_AddNumberToObject(rule, "budgetSeconds", ATT_SEQ_SECONDS);
    cJSON_AddArrayToObject(rec, "looks");
    return rec;
}

/* Run one look's processes (a->p[from..]). 0 go on, 1 stopped by a signal. */
static int seq_run_look(att *a, int from)
{
    for (int i = from; i < a->np; i++) {
        aproc *q = &a->p[i];
        att_run_process(a, q, a->np);
        att_save_manifest(a);
        if (tl_stop_signal) return 1;
        att_log(a, 1, "sequential process %d of %d %s: %s", i - from + 1, a->np - from, q->name, q->status);
    }
    return 0;
}

int att_stage_sequential(att *a)
{
    att_manifest_set_str(a, "stage", "sequential");
    gate_config cfg;
    att_gate_config(a, &cfg);
    int gated = a->rounds * a->nb * a->ngated;
    int budget = a->seq_budget >= 0 ? a->seq_budget : gated / 3 > 2 * cfg.seq_batch ? gated / 3 : 2 * cfg.seq_batch;
    cJSON *rec = seq_record(&cfg, budget), *looks = cJSON_GetObjectItemCaseSensitive(rec, "looks");
    char *rd = att_path(a, "runs");
    uint64_t t0 = att_now_ns();
    int added = 0, look = 1, stop = 0;
    const char *stopped = NULL;
    for (;; look++) {
        att_gate_config(a, &cfg);   /* the processes run so far */
        gate_seq_row *rows = NULL;
        char *why = NULL;
        int n = gate_seq_next(rd, &cfg, &rows, &why);
        double spent = (double)(att_now_ns() - t0) / 1e9;
        if (n == -2) att_log(a, 1, "sequential: the gate is INVALID after look %d (%s): no process added", look - 1, why);
        stopped = n == -2 ? "the gate is INVALID" : n < 0 ? "the runs could not be read"
                  : !n ? (look == 1 ? "no gated row borderline after the planned processes" : "no gated row borderline any more")
                  : look > cfg.seq_max_batches ? "the rule's batches are spent" : NULL;
        int from = a->np, k = 0;
        cJSON *lk = cJSON_CreateObject(), *procs = cJSON_CreateArray();
        if (stopped && n > 0)
            for (int i = 0; i < n; i++) seq_log_row(a, look, &rows[i], "still borderline after the rule's batches: decided on all its processes");
        if (!stopped) {
            k = seq_plan_look(a, &cfg, look, rows, n, budget, &added, spent, procs);
            if (!k) stopped = "the budget is spent";
        }
        free(rows);
        free(why);
        if (stopped) {
            cJSON_Delete(procs);
            cJSON_Delete(lk);
            break;
        }
        cJSON_AddNumberToObject(lk, "look", look);
        cJSON_AddItemToObject(lk, "processes", procs);
        stop = seq_run_look(a, from);
        cJSON_AddItemToArray(looks, lk);   /* after they ran: the record names reports that exist */
        seq_save(a, rec);
        if (stop) break;
    }
    double spent = (double)(att_now_ns() - t0) / 1e9;
    if (!stop) {
        cJSON_AddStringToObject(rec, "stopped", stopped);
        seq_save(a, rec);
        att_log(a, 1, "sequential: %d process(es) added in %d look(s), %.0f s (budget %d processes, %.0f s); stopped: %s",
                added, cJSON_GetArraySize(looks), spent, budget, ATT_SEQ_SECONDS, stopped);
    }
    cJSON *m = cJSON_CreateObject();
    cJSON_AddNumberToObject(m, "processesAdded", added);
    cJSON_AddNumberToObject(m, "looks", cJSON_GetArraySize(looks));
    cJSON_AddNumberToObject(m, "seconds", round(spent * 10) / 10);
    cJSON_AddNumberToObject(m, "budgetProcesses", budget);
    cJSON_AddNumberToObject(m, "budgetSeconds", ATT_SEQ_SECONDS);
    cJSON_AddStringToObject(m, "stopped", stop ? "signal" : stopped);
    cJSON_AddStringToObject(m, "record", "runs/sequential/sequential.json");
    cJSON_DeleteItemFromObjectCaseSensitive(a->man, "sequential");
    cJSON_AddItemToObject(a->man, "sequential", m);
    att_save_manifest(a);
    cJSON_Delete(rec);
    free(rd);
    return stop;
}
