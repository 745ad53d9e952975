/*
 * att_prepare.c - the attempt's first stages: quiet pre-gate, staging, players (build or
 * reuse, compile check) and the smoke cases on both players.
 */
#include "att.h"
#include "att_run.h"
#include "../bench/bench_icount.h"
#include "../gate/gate.h"
#include "why.h"

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

int att_quiet_pregate(att *a, double secs, int require)
{
    att_cpu_snap s0, s1;
    att_cpu_take(&s0, 0);
    struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };
    nanosleep(&ts, NULL);
    att_cpu_take(&s1, 0);
    char top[5][96];
    double cpu = att_cpu_between(&s0, &s1, top, 5);
    att_cpu_free(&s0);
    att_cpu_free(&s1);
    const double limit = 25.0;
    const char *status = cpu > limit ? "busy" : "quiet";
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "schemaVersion", 1);
    cJSON_AddStringToObject(o, "kind", "tandem-quiet-pregate");
    cJSON_AddStringToObject(o, "status", status);
    cJSON_AddNumberToObject(o, "otherCpuPercent", round(cpu * 10) / 10);
    cJSON_AddNumberToObject(o, "limitPercent", limit);
    cJSON_AddNumberToObject(o, "seconds", secs);
    cJSON_AddNumberToObject(o, "cpus", (double)sysconf(_SC_NPROCESSORS_ONLN));
    cJSON_AddStringToObject(o, "policy", require ? "refuse when busy" : "flag when busy, continue");
    cJSON *t = cJSON_AddArrayToObject(o, "busiest");
    for (int k = 0; k < 5; k++)
        if (top[k][0]) cJSON_AddItemToArray(t, cJSON_CreateString(top[k]));
    char *p = att_path(a, "quiet-pregate.json");
    tl_json_save(p, o);
    free(p);
    cJSON_Delete(o);
    att_log(a, 1, "quiet pre-gate: %s (other processes %.1f%% of one CPU over %.0f s; limit %.0f%%)", status, cpu, secs, limit);
    att_manifest_set_str(a, "quietPregate", status);
    if (cpu > limit && require) {
        att_log(a, 1, "refusing: the host is busy and --require-quiet was given");
        return 1;
    }
    return 0;
}

/* 1. The quiet pre-gate. 0 go on, 1 stop (refused busy). */
int att_stage_pregate(att *a)
{
    if (att_quiet_pregate(a, a->quick ? 1.0 : 3.0, a->require_quiet)) { att_manifest_set_str(a, "stage", "refused-busy"); return 1; }
    return 0;
}

/* 2. Stage the sources (`tandem stage`). 0 go on, 1 stop. */
int att_stage_staging(att *a)
{
    att_manifest_set_str(a, "stage", "staging");
    char *st = att_path(a, "staging");
    char *args[] = { "stage", "--project", a->project, "--out", st, a->from_git ? "--from-git" : NULL,
                     (char *)a->from_git, NULL };
    int r = att_run_tool(a, args);
    free(st);
    if (tl_stop_signal) return 1;
    if (r) { att_log(a, 1, "stage failed (exit %d); see attempt.log", r); att_manifest_set_str(a, "stage", "stage-failed"); return 1; }
    tl_staging sj;
    char *sd = att_path(a, "staging");
    if (!tl_staging_load(sd, &sj)) {
        cJSON_AddStringToObject(a->man, "stagingHash", sj.staging_hash);
        if (sj.git_head) cJSON_AddStringToObject(a->man, "gitHead", sj.git_head);
        cJSON_AddBoolToObject(a->man, "dirty", sj.dirty);
        att_log(a, 1, "staged %zu files, stagingHash %.16s...%s", sj.nfiles, sj.staging_hash, sj.dirty ? " (dirty tree)" : "");
        tl_staging_free(&sj);
    }
    free(sd);
    return 0;
}

/* 1 when the players in dir were built with exactly the measured suites (players_build),
 * else 0 with the reason in why: players holding other suites would be measured in another
 * layout than the baseline's module. */
static int players_suites_match(att *a, int b, const char *dir, char *why, size_t wlen)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/player-%s.json", dir, a->backends[b]);
    cJSON *doc = NULL;
    if (tl_json_load(path, &doc)) { snprintf(why, wlen, "%s: not readable", path); return 0; }
    const cJSON *have = tl_json_field(path, doc, "", "suites", cJSON_Array, "an array");
    const char *want[TL_PROJECT_MAX + 1];
    int nwant = tl_project_measured_suites(&a->proj, want, TL_PROJECT_MAX + 1), ok = have != NULL;
    if (ok) ok = cJSON_GetArraySize(have) == nwant;
    for (int i = 0; ok && i < nwant; i++) {
        int found = 0;
        const cJSON *it;
        cJSON_ArrayForEach(it, have) found |= cJSON_IsString(it) && !strcmp(it->valuestring, want[i]);
        ok = found;
    }
    if (!ok) {
        char *list = have ? cJSON_PrintUnformatted(have) : NULL;
        snprintf(why, wlen, "%s: suites %s, not the %d measured suites this attempt builds its players with",
                 path, list ? list : "(none)", nwant);
        free(list);
    }
    cJSON_Delete(doc);
    return ok;
}

/* Reuse backend b's players from --players-from when the reuse rule allows and they hold the
 * measured suites. 1 reused. */
static int players_reuse(att *a, int b, const char *sd, char *why, size_t wlen)
{
    if (!a->players_from) return 0;
    char cand[PATH_MAX];
    int reused = 0;
    snprintf(cand, sizeof cand, "%s/%s", a->players_from, a->backends[b]);
    if (!tl_is_dir(cand)) snprintf(cand, sizeof cand, "%s/players/%s", a->players_from, a->backends[b]);
    char *abs = tl_abspath(cand);
    if (tl_is_dir(abs) && tl_players_reusable(abs, sd, why, wlen) && players_suites_match(a, b, abs, why, wlen)) {
        snprintf(a->players[b], sizeof a->players[b], "%s", abs);
        reused = 1;
    }
    att_log(a, 1, "%s players from %s: %s (%s)", a->backends[b], abs, reused ? "reused" : "not reusable", why);
    free(abs);
    return reused;
}

/* Build backend b's players into players/<backend> (`tandem build`) with the measured suites
 * only, as the baseline builds its module (att_baseline.c, td_baseline_prepare): a module
 * holding more suites (the smoke suite's 42 cases, the demo) lays out the same runtime's
 * code and data otherwise, which alone moved the AOT throughput rows by 15-20 % against a
 * baseline of the same runtime. The smoke suite gets players of its own (att_run_smoke).
 * 0 ok, 1 failed. */
static int players_build(att *a, int b, char *sd)
{
    char rel[64];
    snprintf(rel, sizeof rel, "players/%s", a->backends[b]);
    char *pd = att_path(a, rel);
    snprintf(a->players[b], sizeof a->players[b], "%s", pd);
    char *args[ATT_BUILD_ARGS];
    int n = att_build_args_begin(a, b, sd, pd, args);
    for (int s = 0; s < a->ns && n < 36; s++) { args[n++] = "--subject"; args[n++] = a->subjects[s]; }
    int nsuites = att_build_args_end(a, args, n);
    att_log(a, 1, "building the %s player (compile check; %d measured suites)", a->backends[b], nsuites);
    if (a->log) fflush(a->log);
    long at = a->log ? ftell(a->log) : 0;   /* the build's messages start here in the log */
    int r = att_run_tool(a, args);
    free(pd);
    if (r && !tl_stop_signal) {
        att_log(a, 1, "%s build failed (exit %d): compile check failed; see attempt.log", a->backends[b], r);
        char *lp = att_path(a, "attempt.log");
        td_why_compile(lp, at, "attempt", stdout);   /* the first errors, in the user's files */
        free(lp);
    }
    return r != 0;
}

int att_build_args_begin(const att *a, int b, char *staging, char *out, char **args)
{
    int n = 0;
    args[n++] = "build";
    args[n++] = "--backend";
    args[n++] = (char *)a->backends[b];
    args[n++] = "--staging";
    args[n++] = staging;
    args[n++] = "--out";
    args[n++] = out;
    return n;
}

int att_build_args_end(att *a, char **args, int n)
{
    const char *suites[TL_PROJECT_MAX + 1];
    int nsuites = tl_project_measured_suites(&a->proj, suites, TL_PROJECT_MAX + 1);
    for (int s = 0; s < nsuites && n < ATT_BUILD_ARGS - 2; s++) {
        args[n++] = "--suite";
        args[n++] = (char *)suites[s];
    }
    args[n] = NULL;
    return nsuites;
}

/* The load check: every subject loads (AOT dlopen, JIT libtcc compile) in the shell,
 * recorded in the compile-check entry e. 0 ok, 1 failed. */
static int players_load_check(att *a, int b, cJSON *e)
{
    char *pargv[64], store[16384];
    aproc probe = { 0 };
    snprintf(probe.suite, sizeof probe.suite, "primary");
    snprintf(probe.retention, sizeof probe.retention, "matched");
    int n = att_player_argv(a, b, &probe, "/dev/null", pargv, store, sizeof store);
    if (n < 0) { att_log(a, 1, "%s player lacks a subject", a->backends[b]); return 1; }
    /* keep --backend and the modules; replace the rest with --subjects */
    int k = 0;
    while (k < n && strcmp(pargv[k], "--suite")) k++;
    pargv[k] = "--subjects";
    pargv[k + 1] = NULL;
    char lo[64], le[64];
    snprintf(lo, sizeof lo, "compile-check-%s.out", a->backends[b]);
    snprintf(le, sizeof le, "compile-check-%s.err", a->backends[b]);
    char *po = att_path(a, lo), *pe = att_path(a, le);
    att_child c;
    att_run_child(pargv, po, pe, -1, 120, 300, 0, &c);
    free(po);
    free(pe);
    int ok = c.exited && c.code == 0;
    cJSON_AddBoolToObject(e, "loads", ok);
    cJSON_AddNumberToObject(e, "loadSeconds", round(c.seconds * 1000) / 1000);
    att_log(a, 1, "compile check %s: every subject %s (%.1f s)", a->backends[b], ok ? "loads" : "does NOT load", c.seconds);
    return !ok;
}

/* The manifest's entry for backend b's players (folder, reused, build id). */
static void players_record(att *a, int b, int reused, cJSON *jp)
{
    cJSON *pe = cJSON_CreateObject();
    cJSON_AddStringToObject(pe, "backend", a->backends[b]);
    cJSON_AddStringToObject(pe, "folder", a->players[b]);
    cJSON_AddBoolToObject(pe, "reused", reused);
    char bidp[PATH_MAX], *bid = NULL;
    size_t bl2;
    snprintf(bidp, sizeof bidp, "%s/build-id-%s", a->players[b], a->backends[b]);
    if (!tl_read_all(bidp, &bid, &bl2)) { bid[strcspn(bid, "\n")] = 0; cJSON_AddStringToObject(pe, "buildId", bid); free(bid); }
    cJSON_AddItemToArray(jp, pe);
}

/* 3. Build or reuse each backend's players; the compile check (every subject loads in the
 * shell): compile-check.json. 0 go on, 1 stop. */
int att_stage_players(att *a)
{
    att_manifest_set_str(a, "stage", "players");
    cJSON *cc = cJSON_CreateObject();
    cJSON_AddNumberToObject(cc, "schemaVersion", 1);
    cJSON_AddStringToObject(cc, "kind", "tandem-compile-check");
    cJSON *ccb = cJSON_AddArrayToObject(cc, "backends");
    cJSON *jp = cJSON_AddArrayToObject(a->man, "players");
    char *sd = att_path(a, "staging");
    int bad = 0;
    for (int b = 0; b < a->nb && !bad; b++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToArray(ccb, e);
        cJSON_AddStringToObject(e, "backend", a->backends[b]);
        char why[1024] = "";
        int reused = players_reuse(a, b, sd, why, sizeof why);
        uint64_t t = att_now_ns();
        if (!reused) bad = players_build(a, b, sd);
        cJSON_AddStringToObject(e, "players", a->players[b]);
        cJSON_AddBoolToObject(e, "reused", reused);
        if (why[0]) cJSON_AddStringToObject(e, "reuseRule", why);
        cJSON_AddNumberToObject(e, "buildSeconds", round((double)(att_now_ns() - t) / 1e6) / 1000);
        if (!bad) bad = players_load_check(a, b, e);
        players_record(a, b, reused, jp);
    }
    char *ccp = att_path(a, "compile-check.json");
    cJSON_AddBoolToObject(cc, "passed", !bad);
    tl_json_save(ccp, cc);
    free(ccp);
    cJSON_Delete(cc);
    free(sd);
    if (tl_stop_signal) return 1;
    if (bad) { att_manifest_set_str(a, "stage", "compile-check-failed"); return 1; }
    return 0;
}

/* Run `tandem smoke` on each backend: the gate subject with the smoke suite, built by the
 * verb into smoke/<backend>/ from the attempt's staging (the measured players hold the
 * measured suites only, players_build). Reports go to smoke/. Returns 1 when a case failed. */
int att_run_smoke(att *a)
{
    /* the project's smoke suite runs on its gate subject, which must be among the built */
    int has_subject = 0;
    for (int s = 0; s < a->ns; s++)
        has_subject |= !strcmp(a->subjects[s], a->gate_subject);
    if (!has_subject || !a->smoke) {
        att_log(a, 1, "smoke skipped: %s%s", !a->smoke ? "the project names no smoke suite"
                                                       : "the subjects do not include ",
                a->smoke ? a->gate_subject : "");
        att_manifest_set_str(a, "smoke", "skipped");
        return 0;
    }
    att_manifest_set_str(a, "stage", "smoke");
    char *sd = att_path(a, "staging"), *out = att_path(a, "smoke");
    int bad = 0;
    for (int b = 0; b < a->nb && !bad; b++) {
        char *args[] = { "smoke", "--project", a->project, "--backend", (char *)a->backends[b],
                         "--staging", sd, "--out", out, NULL };
        uint64_t t = att_now_ns();
        int r = att_run_tool(a, args);
        att_log(a, 1, "smoke %s: %s (%.1f s; smoke/smoke-%s.json)", a->backends[b],
             r == 0 ? "42/42 cases passed" : tl_stop_signal ? "stopped (aborted)" : "FAILED, see attempt.log", (double)(att_now_ns() - t) / 1e9,
             a->backends[b]);
        bad = r != 0;
    }
    att_manifest_set_str(a, "smoke", bad ? "failed" : "passed");
    free(sd);
    free(out);
    return bad;
}

/* 4. Semantics before speed: the 42 smoke cases on each player; a runtime that fails them
 * is not measured. 0 go on, 1 stop. */
int att_stage_smoke(att *a)
{
    if (att_run_smoke(a)) { if (!tl_stop_signal) att_manifest_set_str(a, "stage", "smoke-failed"); return 1; }
    return 0;
}
