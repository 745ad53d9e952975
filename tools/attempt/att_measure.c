/*
 * att_measure.c - the attempt's measurement: the plan of interleaved processes, running
 * each (pinned, observed, retried once on an infrastructure failure) and the instruction arm.
 */
#include "att.h"
#include "att_run.h"
#include "../baseline/baseline.h"
#include "../bench/bench_icount.h"
#include "../gate/gate.h"

#include "tl_err.h"
#include "tl_fs.h"
#include "tl_hash.h"
#include "tl_json.h"
#include "tl_manifest.h"
#include "tl_opt.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ATT_BUSY_RERUNS 2 /* re-runs of one process observed busy, at most */

/* argv of one player process (from player-<backend>.json). */
int att_player_argv(const att *a, int b, const aproc *q, const char *report, char **argv, char *store, size_t slen)
{
    char *pj = NULL;
    char name[64];
    snprintf(name, sizeof name, "player-%s.json", a->backends[b]);
    pj = tl_join(a->players[b], name);
    cJSON *d;
    int bad = tl_json_load(pj, &d);
    free(pj);
    if (bad) return -1;
    int n = 0, lk = att_layout_of(a, q);
    size_t k = 0;
#define PUT(s) (argv[n++] = store + k, k += (size_t)snprintf(store + k, slen - k, "%s", (s)) + 1)
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s/tandem-player", a->players[b]);
    PUT(tmp);
    PUT("--backend");
    PUT(a->backends[b]);
    const cJSON *subs = cJSON_GetObjectItemCaseSensitive(d, "subjects");
    for (int s = 0; s < a->ns; s++) {
        const cJSON *e, *hit = NULL;
        cJSON_ArrayForEach(e, subs) {
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
            if (cJSON_IsString(nm) && !strcmp(nm->valuestring, a->subjects[s])) hit = e;
        }
        if (!hit) { cJSON_Delete(d); return -2; }
        const cJSON *mod = cJSON_GetObjectItemCaseSensitive(hit, !strcmp(a->backends[b], "aot") ? "module" : "tu");
        if (!cJSON_IsString(mod)) { cJSON_Delete(d); return -2; }
        PUT(!strcmp(a->backends[b], "aot") ? "--module" : "--tu");
        snprintf(tmp, sizeof tmp, "%s/%s", a->players[b], mod->valuestring);
        if (s == 0) att_layout_module(a, b, lk, 0, tmp, sizeof tmp); /* the gate subject in this layout */
        PUT(tmp);
    }
    const char *bmod = a->bl ? td_baseline_module(a->bl, a->backends[b]) : NULL;
    if (bmod) { /* the baseline revision, last: the first subject stays the current runtime */
        PUT(!strcmp(a->backends[b], "aot") ? "--module" : "--tu");
        PUT(att_layout_module(a, b, lk, 1, tmp, sizeof tmp) ? tmp : bmod);
    }
    if (!strcmp(a->backends[b], "jit") && !bmod) { /* with a baseline each TU's folder is its own root */
        PUT("--root");
        snprintf(tmp, sizeof tmp, "%s/src", a->players[b]);
        PUT(tmp);
    }
    cJSON_Delete(d);
    PUT("--suite");
    PUT(q->suite);
    PUT("--retention");
    PUT(q->retention);
    PUT("--samples");
    snprintf(tmp, sizeof tmp, "%d", a->samples);
    PUT(tmp);
    PUT("--warmup");
    snprintf(tmp, sizeof tmp, "%d", a->warmup);
    PUT(tmp);
    if (a->quick) PUT("--quick");
    /* the first subject is the gate subject (att_finish.c): a row it leaves unsupported is NA
     * in the gate whatever the others measure, so they skip it (issue 43, item 6) */
    if (a->ns + (bmod != NULL) > 1) PUT("--skip-na-of-first");
    /* with a baseline, the second gated process of each suite and backend loads and runs the
     * subjects in reverse order: two layouts of the same code, so that where the current and
     * the baseline runtime land (always first and last otherwise) is a measured factor, not a
     * bias in one direction (gate_baseline.c reads the ratio per layout; issue 42) */
    if (bmod && q->round % 2 == 0 && q->round > 0) PUT("--load-reverse");
    if (a->seeds[lk]) { /* JIT: the units re-laid; AOT: the seed of the modules above, reported */
        PUT("--layout-seed");
        snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)a->seeds[lk]);
        PUT(tmp);
    }
    PUT("--out");
    PUT(report);
#undef PUT
    argv[n] = NULL;
    return n;
}

/* The player's last "TANDEM-PLAYER-RESULT:" line, or "" when none. */
static void marker(const char *out_path, char *m, size_t len)
{
    char *buf;
    size_t l;
    m[0] = 0;
    if (tl_read_all(out_path, &buf, &l)) return;
    const char *key = "TANDEM-PLAYER-RESULT:";
    char *p = buf, *last = NULL;
    while ((p = strstr(p, key))) { last = p; p += strlen(key); }
    if (last) {
        last += strlen(key);
        while (*last == ' ') last++;
        snprintf(m, len, "%.*s", (int)strcspn(last, "\n"), last);
    }
    free(buf);
}

static void move_to(const char *from, const char *to)
{
    if (!tl_is_file(from)) return;
    tl_mkdirs_parent(to);
    rename(from, to);
}

/* One try's record in the process's observations (tr): when and how it ran, how it ended,
 * the binaries before and after, and the noise (other processes' CPU during the run), whose
 * object is returned. */
static cJSON *try_record(const att *a, cJSON *tr, int t, const att_child *c, time_t wall0, uint64_t st, const char *m,
                         const char *kind, const char *before, const char *after, int fault)
{
    char wall[32];
    strftime(wall, sizeof wall, "%Y-%m-%dT%H:%M:%SZ", gmtime(&wall0));
    cJSON_AddNumberToObject(tr, "try", t);
    cJSON_AddNumberToObject(tr, "pid", c->pid);
    cJSON_AddStringToObject(tr, "started", wall);
    cJSON_AddNumberToObject(tr, "startOffsetSeconds", round((double)(st - a->t0) / 1e6) / 1000);
    cJSON_AddNumberToObject(tr, "seconds", round(c->seconds * 1000) / 1000);
    if (c->exited) cJSON_AddNumberToObject(tr, "exitCode", c->code);
    else cJSON_AddNullToObject(tr, "exitCode");
    if (c->signaled) cJSON_AddNumberToObject(tr, "signal", c->sig);
    cJSON_AddBoolToObject(tr, "killedAtStartDeadline", c->killed_start);
    cJSON_AddBoolToObject(tr, "killedAtTimeout", c->killed_timeout);
    cJSON_AddStringToObject(tr, "marker", m);
    cJSON_AddStringToObject(tr, "outcome", kind);
    cJSON_AddNumberToObject(tr, "cpu", a->cpu);
    cJSON_AddStringToObject(tr, "binariesBefore", before);
    cJSON_AddStringToObject(tr, "binariesAfter", after);
    cJSON_AddBoolToObject(tr, "binariesUnchanged", !strcmp(before, after));
    if (fault) cJSON_AddStringToObject(tr, "injectedFault", fault == 1 ? "crash" : "hang");
    const char *noise = c->other_cpu > 25.0 ? "busy" : "quiet";
    cJSON *nz = cJSON_AddObjectToObject(tr, "noise");
    cJSON_AddStringToObject(nz, "status", noise);
    cJSON_AddNumberToObject(nz, "otherCpuPercent", round(c->other_cpu * 10) / 10);
    cJSON *top = cJSON_AddArrayToObject(nz, "busiest");
    for (int k = 0; k < 3; k++)
        if (c->top[k][0]) cJSON_AddItemToArray(top, cJSON_CreateString(c->top[k]));
    return nz;
}

/* Keep a failed try's report and output under runs/failed-runs/. */
static void keep_failed_try(att *a, const aproc *q, int t, const char *report, const char *outp)
{
    char rel[256];
    snprintf(rel, sizeof rel, "runs/failed-runs/%s.try%d.json", q->name, t);
    char *d = att_path(a, rel);
    move_to(report, d);
    free(d);
    snprintf(rel, sizeof rel, "runs/failed-runs/%s.try%d.out", q->name, t);
    d = att_path(a, rel);
    char *buf;
    size_t l;
    if (tl_is_file(outp) && !tl_read_all(outp, &buf, &l)) {
        tl_mkdirs_parent(d);
        tl_write_atomic(d, buf, l, 0644);
        free(buf);
    }
    free(d);
}

/* One process, with one retry on an infrastructure failure and re-runs while observed busy
 * (within the attempt's budget). 0 ok, 1 failed. */
int att_run_process(att *a, aproc *q, int total)
{
    int b = !strcmp(q->backend, a->backends[0]) ? 0 : 1;
    char rel[256], *report, *obs_path, *outp, *errp;
    snprintf(rel, sizeof rel, "runs/%s.json", q->name);
    report = att_path(a, rel);
    snprintf(rel, sizeof rel, "runs/observations/%s.json", q->name);
    obs_path = att_path(a, rel);
    tl_mkdirs_parent(obs_path);
    cJSON *obs = cJSON_CreateObject();
    cJSON_AddStringToObject(obs, "process", q->name);
    cJSON_AddNumberToObject(obs, "index", q->idx);
    cJSON_AddStringToObject(obs, "suite", q->suite);
    cJSON_AddStringToObject(obs, "backend", q->backend);
    cJSON_AddStringToObject(obs, "retention", q->retention);
    cJSON *tries = cJSON_AddArrayToObject(obs, "tries");
    int rc = 1, infra_retry = 1, busy_reruns = 0, final_busy = 0;
    /* tries: one retry on an infrastructure failure, and re-runs of a try observed busy
     * while the attempt's busy budget lasts (a->busy_reruns_left) */
    for (int t = 1; t <= 2 + ATT_BUSY_RERUNS; t++) {
        q->tries = t;
        snprintf(rel, sizeof rel, "runs/logs/%s.try%d.out", q->name, t);
        outp = att_path(a, rel);
        snprintf(rel, sizeof rel, "runs/logs/%s.try%d.err", q->name, t);
        errp = att_path(a, rel);
        tl_mkdirs_parent(outp);
        char *argv[64], store[16384];
        int n = att_player_argv(a, b, q, report, argv, store, sizeof store);
        if (n < 0) {
            att_log(a, 1, "%s: cannot form the player command (player-%s.json lacks a subject?)", q->name, q->backend);
            snprintf(q->outcome, sizeof q->outcome, "no player command");
            free(outp);
            free(errp);
            break;
        }
        char before[TL_SHA256_HEX], after[TL_SHA256_HEX];
        cJSON *tr = cJSON_CreateObject();
        cJSON_AddItemToArray(tries, tr);
        cJSON *args = cJSON_AddArrayToObject(tr, "arguments");
        for (int i = 0; i < n; i++) cJSON_AddItemToArray(args, cJSON_CreateString(argv[i]));
        cJSON *bins = cJSON_AddArrayToObject(tr, "binaries");
        att_binaries_hash(a, b, before, bins);
        int fault = (a->fault_proc == q->idx && t == 1) ? a->fault_kind : 0;
        time_t wall0 = time(NULL);
        att_child c;
        uint64_t st = att_now_ns();
        att_run_child(argv, outp, errp, a->cpu, a->start_deadline, a->timeout, fault, &c);
        if (c.aborted) snprintf(after, sizeof after, "not-checked-aborted"); /* hashing stops on the signal too */
        else att_binaries_hash(a, b, after, NULL);
        char m[128];
        marker(outp, m, sizeof m);
        int own_failure = !strncmp(m, "fail", 4) || !strncmp(m, "error", 5);
        int ok = !c.aborted && c.exited && c.code == 0 && !strcmp(m, "pass") && tl_is_file(report);
        int infra = !ok && !own_failure && !c.aborted;
        const char *kind = ok ? "ok" : c.aborted ? "aborted" : own_failure ? "player-failure" : c.killed_start ? "start-deadline"
                           : c.killed_timeout ? "hang-killed" : c.signaled ? "crash" : "infrastructure";
        int same_bins = !strcmp(before, after);
        if (!same_bins && !c.aborted) { ok = 0; infra = 0; kind = "binary-changed"; }
        cJSON *nz = try_record(a, tr, t, &c, wall0, st, m, kind, before, after, fault);
        snprintf(q->outcome, sizeof q->outcome, "%s%s%s (exit %d%s)", kind, m[0] ? ", marker " : "", m,
                 c.exited ? c.code : -1, c.signaled ? ", signal" : "");
        q->seconds += c.seconds;
        att_log(a, 0, "%s try %d: %s in %.2f s, other CPU %.1f%%", q->name, t, q->outcome, c.seconds, c.other_cpu);
        if (ok && c.other_cpu > 25.0 && busy_reruns < ATT_BUSY_RERUNS && a->busy_reruns_left > 0 && !tl_stop_signal) {
            /* a busy process measured the host, not the code: its report is kept aside
             * (runs/busy-runs/, never read by the gate) and the process runs again */
            a->busy_reruns_left--;
            a->busy_reruns++;
            busy_reruns++;
            snprintf(rel, sizeof rel, "runs/busy-runs/%s.try%d.json", q->name, t);
            char *d = att_path(a, rel);
            move_to(report, d);
            free(d);
            free(outp);
            free(errp);
            att_log(a, 1, "process %d/%d %s: try %d busy (other CPU %.1f%%): re-running it (%d busy re-run(s) left)",
                    q->idx, total, q->name, t, c.other_cpu, a->busy_reruns_left);
            continue;
        }
        if (ok) {
            final_busy = c.other_cpu > 25.0; /* busy and the budget spent: said, not hidden */
            cJSON_DeleteItemFromObjectCaseSensitive(obs, "noise");
            cJSON_AddItemToObject(obs, "noise", cJSON_Duplicate(nz, 1));
            rc = 0;
            free(outp);
            free(errp);
            break;
        }
        keep_failed_try(a, q, t, report, outp);
        free(outp);
        free(errp);
        att_log(a, 1, "process %d/%d %s: try %d %s%s", q->idx, total, q->name, t, q->outcome,
             infra && t == 1 ? ": infrastructure failure, retrying once" : "");
        if (!infra || !infra_retry--) break;
    }
    /* an infrastructure retry first (its tries are what the status counts), then busy */
    strcpy(q->status, rc != 0 ? (tl_stop_signal ? "aborted" : "failed") : q->tries > 1 + busy_reruns ? "ok-after-retry"
                      : final_busy ? "ok-but-busy" : busy_reruns ? "ok-after-busy-rerun" : "ok");
    cJSON_AddStringToObject(obs, "status", q->status);
    if (!cJSON_GetObjectItemCaseSensitive(obs, "noise")) {
        cJSON *nz = cJSON_AddObjectToObject(obs, "noise");
        cJSON_AddStringToObject(nz, "status", "failed");
    }
    tl_json_save(obs_path, obs);
    cJSON_Delete(obs);
    free(report);
    free(obs_path);
    return rc;
}

/* 5. The plan: rounds x backends (order flipping each round) x the gated suites (order
 * rotating), then the report-only default-retention processes. */
void att_stage_plan(att *a)
{
    char *ro[8];
    int nro = att_split(a->report_only, ro, 8);
    for (int r = 0; r < a->rounds; r++)
        for (int bi = 0; bi < a->nb; bi++) {
            int b = (r % 2 == 0) ? bi : a->nb - 1 - bi;
            for (int s = 0; s < a->ngated; s++) {
                aproc *q = &a->p[a->np];
                q->idx = a->np + 1;
                q->round = r + 1;
                snprintf(q->suite, sizeof q->suite, "%s", a->gated[(s + r) % a->ngated]);
                snprintf(q->backend, sizeof q->backend, "%s", a->backends[b]);
                snprintf(q->retention, sizeof q->retention, "matched");
                snprintf(q->name, sizeof q->name, "p%02d-%s-%s-r%d", q->idx, q->suite, q->backend, r + 1);
                strcpy(q->status, "pending");
                a->np++;
            }
        }
    for (int bi = 0; bi < a->nb; bi++)
        for (int s = 0; s < nro; s++) {
            aproc *q = &a->p[a->np];
            q->idx = a->np + 1;
            snprintf(q->suite, sizeof q->suite, "%s", ro[s]);
            snprintf(q->backend, sizeof q->backend, "%s", a->backends[bi]);
            snprintf(q->retention, sizeof q->retention, "default");
            snprintf(q->name, sizeof q->name, "p%02d-%s-%s-default", q->idx, q->suite, q->backend);
            strcpy(q->status, "pending");
            a->np++;
        }
    for (int s = 0; s < nro; s++) free(ro[s]);
    /* the busy re-run budget: a third of the gated processes (at least 2), so that a host
     * that stays busy costs at most a third more time (README: the attempt's 5 minutes) */
    int gated = a->rounds * a->nb * a->ngated;
    a->busy_reruns_left = gated / 3 > 2 ? gated / 3 : 2;
    if (a->fault_kind) a->busy_reruns_left = 0; /* --test-fault counts its tries: no busy re-run among them */
}

/* 6. The processes, one after the other, each pinned and observed. 0 go on, 1 stopped. */
int att_stage_processes(att *a)
{
    att_manifest_set_str(a, "stage", "processes");
    att_log(a, 1, "%d processes: %d rounds x %d suites x %d backends + %d report-only; %d samples each, pinned to CPU %d",
         a->np, a->rounds, a->ngated, a->nb, a->np - a->rounds * a->ngated * a->nb, a->samples, a->cpu);
    uint64_t ps = att_now_ns();
    int failed = 0;
    for (int i = 0; i < a->np; i++) {
        aproc *q = &a->p[i];
        if (att_run_process(a, q, a->np)) failed++;
        att_save_manifest(a);
        if (tl_stop_signal) return 1;
        double el = (double)(att_now_ns() - ps) / 1e9, per = el / (i + 1);
        fprintf(stderr, "attempt: process %d of %d %-40s %-16s elapsed %.0f s, about %.0f s left\n", i + 1, a->np,
                q->name, q->status, (double)(att_now_ns() - a->t0) / 1e9, per * (a->np - i - 1));
        att_log(a, 0, "process %d of %d %s: %s", i + 1, a->np, q->name, q->status);
    }
    cJSON_AddNumberToObject(a->man, "failedProcesses", failed);
    cJSON_AddNumberToObject(a->man, "busyReruns", a->busy_reruns);
    if (a->busy_reruns)
        att_log(a, 1, "%d process(es) re-run because they were observed busy (budget left: %d)", a->busy_reruns,
                a->busy_reruns_left);
    return 0;
}

/* 7. The instruction arm (--instructions, report-only): one callgrind process per suite,
 * backend and subject. Sets a->instr_dir when every summary was written. */
void att_stage_instructions(att *a)
{
    if (!a->instructions) return;
    att_manifest_set_str(a, "stage", "instructions");
    a->instr_dir = att_path(a, "instructions");
    int ifail = 0;
    char failed_at[96] = "";
    for (int b = 0; b < a->nb && !ifail; b++)
        for (int s = 0; s < a->ngated && !ifail; s++) {
            const char *bmod = a->bl ? td_baseline_module(a->bl, a->backends[b]) : NULL;
            bench_icount_spec sp = { a->players[b], a->backends[b], a->gated[s], a->dir, NULL,
                                     "1", "1", "matched", "off", "1200", NULL, a->quick,
                                     bmod ? a->bl->name : NULL, bmod, 0 };
            char outp[PATH_MAX];
            snprintf(outp, sizeof outp, "%s/%s-%s-instructions.json", a->instr_dir, a->gated[s], a->backends[b]);
            sp.out = outp;
            char *subs[MAXS + 1];
            int ns = 0;
            for (; ns < a->ns; ns++) subs[ns] = a->subjects[ns];
            if (bmod) subs[ns++] = a->bl->name;
            ifail = bench_icount_run(&sp, subs, ns) != 0;
            att_log(a, 1, "instructions %s %s: %s", a->gated[s], a->backends[b], ifail ? "failed (see above)" : "done");
            if (ifail) snprintf(failed_at, sizeof failed_at, "%s %s", a->gated[s], a->backends[b]);
        }
    if (ifail) {
        att_log(a, 1, "the instruction arm failed at %s: gate.md has no instruction table%s", failed_at,
                a->bl ? "; the baseline verdict is \"not judged\" unless the time arm finds a regression" : "");
        free(a->instr_dir);
        a->instr_dir = NULL;
    }
}
