/*
 * att_finish.c - the attempt's end: the gate, files.sha256, the runs archive and the
 * manifest's final state.
 */
#include "att.h"
#include "att_run.h"
#include "../baseline/baseline.h"
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

/* files.sha256 of the whole attempt folder (sha256sum format, sorted by path). */
int att_write_sums(att *a)
{
    tl_strlist files = { 0 };
    static const char *const skip[] = { "files.sha256", NULL };
    if (tl_walk(a->dir, NULL, TL_WALK_REFUSE_SYMLINKS, NULL, skip, &files)) return 1;
    tl_strlist_sort(&files);
    char **full = calloc(files.n + 1, sizeof *full);
    tl_hash_result *res = calloc(files.n + 1, sizeof *res);
    for (size_t i = 0; i < files.n; i++) full[i] = tl_join(a->dir, files.v[i]);
    tl_hash_files((const char *const *)full, files.n, res, 0);
    size_t cap = 4096, len = 0;
    char *s = malloc(cap);
    int bad = 0;
    for (size_t i = 0; i < files.n; i++) {
        if (res[i].err) bad = 1;
        size_t need = strlen(files.v[i]) + 80;
        if (len + need >= cap) { cap = (len + need) * 2; s = realloc(s, cap); }
        len += (size_t)sprintf(s + len, "%s  %s\n", res[i].hex, files.v[i]);
        free(full[i]);
    }
    char *p = att_path(a, "files.sha256");
    if (!bad) bad = tl_write_atomic(p, s, len, 0644) != 0;
    free(p);
    free(s);
    free(full);
    free(res);
    tl_strlist_free(&files);
    return bad;
}

/* The project's gate (att_project.c: its section over the defaults, its gated suites) for
 * the processes run so far; the subject is the first one measured. */
void att_gate_config(const att *a, gate_config *cfg)
{
    *cfg = a->gate;
    if (a->subjects_given) cfg->npeers = 0;
    snprintf(cfg->subject, sizeof cfg->subject, "%s", a->subjects[0]);
    cfg->nbackends = a->nb;
    for (int b = 0; b < a->nb; b++) snprintf(cfg->backends[b], sizeof cfg->backends[b], "%s", a->backends[b]);
    cfg->processes = a->rounds;
    cfg->expected_processes = a->np;
    for (int s = 0; s < cfg->nsuites; s++) cfg->suites[s].samples = a->samples;
    if (a->seq_band >= 0) cfg->seq_quick_band = a->seq_band;
}

/* 8. The gate over runs/ with the configuration written to gate/gate-config.json.
 * Returns the verdict (GATE_PASS, GATE_FAIL, GATE_INVALID). */
int att_stage_gate(att *a)
{
    att_manifest_set_str(a, "stage", "gate");
    int rc;
    char *gd = att_path(a, "gate"), *rd = att_path(a, "runs");
    tl_mkdirs(gd);
    gate_config cfg;
    att_gate_config(a, &cfg);
    cJSON *cj = gate_config_json(&cfg);
    char *cp = tl_join(gd, "gate-config.json");
    tl_json_save(cp, cj);
    cJSON_Delete(cj);
    /* instructions_expected: a failed instruction arm leaves the baseline "not judged" */
    gate_opts go = { rd, gd, cp, 1, a->instr_dir, a->instructions && a->bl };
    gate_config cfg2;
    gate_config_default(&cfg2);
    int crc = gate_config_load(cp, &cfg2); /* what the gate reads is what was written */
    rc = crc ? GATE_INVALID : gate_run(&go, &cfg2);
    free(cp);
    att_log(a, 1, "gate: %s", gate_verdict_name(rc));
    att_manifest_set_str(a, "verdict", gate_verdict_name(rc));
    cJSON_DeleteItemFromObjectCaseSensitive(a->man, "gateReport");
    cJSON_AddStringToObject(a->man, "gateReport", "gate/gate.md");
    free(gd);
    free(rd);
    free(a->instr_dir);
    a->instr_dir = NULL;
    return rc;
}

/* 9. The runs archive (`tandem pack`: runs/files.sha256 + runs.zip). */
void att_stage_archive(att *a)
{
    att_manifest_set_str(a, "stage", "archive");
    char *rd = att_path(a, "runs"), *zp = att_path(a, "runs.zip");
    char *args[] = { "pack", rd, "--out", zp, NULL };
    int r = att_run_tool(a, args);
    if (r) att_log(a, 1, "pack failed (exit %d)", r);
    free(rd);
    free(zp);
}

/* 10. Done: the manifest's last state, then files.sha256 of the whole folder (nothing is
 * written after it). */
void att_stage_done(att *a, int verdict, int exit_code)
{
    att_manifest_set_str(a, "stage", "done");
    cJSON_AddStringToObject(a->man, "archive", "runs.zip");
    att_save_manifest(a);
    double el = (double)(att_now_ns() - a->t0) / 1e9;
    att_log(a, 0, "done in %.1f s: %s; writing files.sha256 (last step)", el, gate_verdict_name(verdict));
    if (a->log) { fclose(a->log); a->log = NULL; }
    if (att_write_sums(a)) fprintf(stderr, "attempt: files.sha256 could not be written\n");
    td_why_print(a->dir, "attempt", stdout);   /* the reasons, above the verdict line */
    if (a->base_verdict[0]) /* both verdicts on the last line, and the exit that carries them */
        printf("attempt: %s in %.0f s; baseline %s: %s; exit %d; report %s/gate/gate.md\n", gate_verdict_name(verdict), el,
               a->bl->name, a->base_verdict, exit_code, a->dir);
    else
        printf("attempt: %s in %.0f s; report %s/gate/gate.md\n", gate_verdict_name(verdict), el, a->dir);
}
