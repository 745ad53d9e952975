/* gate_eval.c - the gate's inputs (reports, observations, the pre-gate), the INVALID rules
 * on reports and across them, and the verdict; the lines (ratios, median and worst,
 * thresholds) are gate_lines.c's. */
#include "gate_int.h"

#include "tl_fs.h"
#include "tl_hash.h"
#include "tl_json.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void ge_invalid(gate_result *res, const char *fmt, ...)
{
    char b[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    char *t = gate_text_escape(b); /* a reason quotes report text: keep it one line of UTF-8 */
    for (size_t i = 0; i < res->ninvalid; i++)
        if (!strcmp(res->invalid[i], t)) { free(t); return; }
    *GE_GROW(res->invalid, res->ninvalid) = t;
}

static int list_dir(const char *dir, tl_strlist *out, int want_dirs)
{
    DIR *d = opendir(dir);
    if (!d) return 1;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char *p = tl_join(dir, e->d_name);
        struct stat st;
        int isd = lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
        free(p);
        /* every non-folder entry is listed: a FIFO or link named like a report is refused when
         * read (INVALID with its reason), never skipped in silence */
        if (want_dirs == isd) tl_strlist_push(out, e->d_name);
    }
    closedir(d);
    tl_strlist_sort(out);
    return 0;
}

int ge_report_only_retention(const gate_config *c, const char *ret)
{
    for (int i = 0; i < c->nreport_only_retention; i++)
        if (!strcmp(c->report_only_retention[i], ret)) return 1;
    return 0;
}

const gr_row *ge_find_entry(const gr_report *r, const char *row, const char *subject)
{
    for (size_t i = 0; i < r->nrows; i++)
        if (!strcmp(r->rows[i].name, row) && !strcmp(r->rows[i].subject, subject)) return &r->rows[i];
    return NULL;
}

int ge_has_subject(const gr_report *r, const char *s)
{
    for (size_t i = 0; i < r->nsubjects; i++)
        if (!strcmp(r->subjects[i], s)) return 1;
    return 0;
}

int ge_backend_rank(const gate_config *c, const char *b)
{
    for (int i = 0; i < c->nbackends; i++)
        if (!strcmp(c->backends[i], b)) return i;
    return c->nbackends;
}

double *ge_values(const gr_row *e)
{
    double *v = malloc((e->n + 1) * sizeof *v);
    for (size_t i = 0; i < e->n; i++) v[i] = gr_sample_value(&e->s[i]);
    return v;
}

static int close_enough(double claimed, double actual, double tol)
{
    double d = fabs(claimed - actual), m = fmax(fabs(claimed), fabs(actual));
    return d <= tol * m || d <= 1e-9;
}

/* INVALID rule: arithmetic that does not match the raw samples. */
static void check_arith(gate_result *res, const gr_report *r, const gr_row *e)
{
    double tol = res->cfg->tolerance;
    if (e->arrays_disagree)
        ge_invalid(res, "%s: row '%s' subject '%s': the raw arrays do not match the sample records", r->file, e->name,
                e->subject);
    if (!e->n) return;
    double *v = ge_values(e);
    double tot_ns = 0, tot_ops = 0, tot_bytes = 0;
    for (size_t i = 0; i < e->n; i++) {
        tot_ns += e->s[i].ns - e->s[i].control_ns;
        tot_ops += e->s[i].ops;
        tot_bytes += e->s[i].bytes;
        if (!isnan(e->s[i].claimed_nspo) && !close_enough(e->s[i].claimed_nspo, v[i], tol))
            ge_invalid(res, "%s: row '%s' subject '%s' sample %zu: nsPerOp %.6g does not match raw %.6g", r->file,
                    e->name, e->subject, i, e->s[i].claimed_nspo, v[i]);
    }
    double mean = gs_mean(v, e->n), med = gs_median(v, e->n), total = tot_ns / tot_ops;
    if (!isnan(e->claimed_mean) && !close_enough(e->claimed_mean, mean, tol))
        ge_invalid(res, "%s: row '%s' subject '%s': meanNsPerOp %.6g does not match the samples' %.6g", r->file, e->name,
                e->subject, e->claimed_mean, mean);
    if (!isnan(e->claimed_median) && !close_enough(e->claimed_median, med, tol))
        ge_invalid(res, "%s: row '%s' subject '%s': medianNsPerOp %.6g does not match the samples' %.6g", r->file,
                e->name, e->subject, e->claimed_median, med);
    if (!isnan(e->claimed_nspo) && !close_enough(e->claimed_nspo, mean, tol) &&
        !close_enough(e->claimed_nspo, med, tol) && !close_enough(e->claimed_nspo, total, tol))
        ge_invalid(res, "%s: row '%s' subject '%s': nsPerOp %.6g matches neither mean %.6g, median %.6g nor total %.6g "
                     "of the raw samples", r->file, e->name, e->subject, e->claimed_nspo, mean, med, total);
    if (!isnan(e->claimed_alloc)) {
        double per = tot_bytes / tot_ops;
        double *b = malloc(e->n * sizeof *b);
        for (size_t i = 0; i < e->n; i++) b[i] = e->s[i].bytes / e->s[i].ops;
        double bm = gs_mean(b, e->n), bmed = gs_median(b, e->n);
        free(b);
        if (!close_enough(e->claimed_alloc, per, tol) && !close_enough(e->claimed_alloc, bm, tol) &&
            !close_enough(e->claimed_alloc, bmed, tol))
            ge_invalid(res, "%s: row '%s' subject '%s': allocBytesPerOp %.6g does not match the samples' %.6g", r->file,
                    e->name, e->subject, e->claimed_alloc, per);
    }
    free(v);
}

/* Read one JSON input of the gate (an observation or the pre-gate): a regular file, not a
 * link, valid UTF-8, a JSON object. NULL with an INVALID reason otherwise. */
static cJSON *read_input(gate_result *res, const char *path, const char *rel, const char *kind)
{
    char *buf;
    size_t len;
    int e = tl_read_file(path, TL_OPEN_NOFOLLOW, (size_t)64 << 20, &buf, &len);
    if (e) {
        ge_invalid(res, "%s: cannot read: %s", rel, tl_strerror(e));
        return NULL;
    }
    ge_input *in = GE_GROW(res->inputs, res->ninputs);
    in->file = strdup(rel);
    tl_sha256_buf(buf, len, in->sha256);
    in->kind = kind;
    cJSON *doc = tl_utf8_valid(buf, len) ? cJSON_ParseWithLength(buf, len) : NULL;
    free(buf);
    if (!cJSON_IsObject(doc)) {
        ge_invalid(res, "%s: not a JSON object in UTF-8", rel);
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}

/* An optional finite, non-negative percentage; NaN when absent, INVALID when mistyped. */
static double percent(gate_result *res, const char *rel, const cJSON *v)
{
    if (!v) return NAN;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 || v->valuedouble > 100.0 * 4096) {
        ge_invalid(res, "%s: otherCpuPercent: not a finite non-negative number", rel);
        return NAN;
    }
    return v->valuedouble;
}

static void load_observations(const char *runs_dir, gate_result *res)
{
    char *od = tl_join(runs_dir, "observations");
    tl_strlist files = { 0 };
    if (tl_is_dir(od)) list_dir(od, &files, 0);
    for (size_t i = 0; i < files.n; i++) {
        size_t l = strlen(files.v[i]);
        if (l < 6 || strcmp(files.v[i] + l - 5, ".json")) continue;
        char *p = tl_join(od, files.v[i]);
        char rel[1024];
        snprintf(rel, sizeof rel, "observations/%s", files.v[i]);
        cJSON *doc = read_input(res, p, rel, "observation");
        free(p);
        if (!doc) continue;
        ge_obs *o = GE_GROW(res->obs, res->nobs);
        o->file = strdup(rel);
        const cJSON *proc = cJSON_GetObjectItemCaseSensitive(doc, "process");
        const cJSON *noise = cJSON_GetObjectItemCaseSensitive(doc, "noise");
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(noise, "status");
        o->process = strdup(cJSON_IsString(proc) ? proc->valuestring : files.v[i]);
        o->status = strdup(cJSON_IsString(st) ? st->valuestring : "unknown");
        o->cpu = percent(res, rel, cJSON_GetObjectItemCaseSensitive(noise, "otherCpuPercent"));
        cJSON_Delete(doc);
    }
    tl_strlist_free(&files);
    free(od);
    /* the quiet pre-gate: in RUNS_DIR or its parent (an attempt folder) */
    const char *cands[2] = { "quiet-pregate.json", "../quiet-pregate.json" };
    for (int k = 0; k < 2; k++) {
        char *p = tl_join(runs_dir, cands[k]);
        struct stat st;
        int there = lstat(p, &st) == 0;
        cJSON *doc = there ? read_input(res, p, cands[k], "pregate") : NULL;
        free(p);
        if (!there) continue;
        const cJSON *sv = cJSON_GetObjectItemCaseSensitive(doc, "status");
        res->pregate_status = strdup(cJSON_IsString(sv) ? sv->valuestring : "unknown");
        res->pregate_cpu = percent(res, cands[k], cJSON_GetObjectItemCaseSensitive(doc, "otherCpuPercent"));
        cJSON_Delete(doc);
        break;
    }
}

/* A row skipped by a peer (tandem-player --skip-na-of-first) is NA only because the gate
 * subject leaves it unsupported in the same process: a peer cannot skip a row it supports. */
static void check_skipped(gate_result *res, const gr_report *r, const gr_row *e)
{
    if (!e->skipped) return;
    const char *subj = res->cfg->subject;
    const gr_row *a = ge_find_entry(r, e->name, subj);
    if (!strcmp(e->subject, subj))
        ge_invalid(res, "%s: row '%s': the gate subject '%s' skipped it (only its peers skip rows)", r->file, e->name, subj);
    else if (!a || a->supported)
        ge_invalid(res, "%s: row '%s': subject '%s' skipped it, but the gate subject '%s' %s", r->file, e->name, e->subject,
                subj, a ? "supports it" : "has no entry for it");
}

/* The reports of RUNS_DIR (every file named like one; a name that is not plain text is
 * INVALID, never read). 1 when RUNS_DIR is not a readable folder. */
static int read_reports(const char *runs_dir, gate_result *res)
{
    tl_strlist files = { 0 };
    if (!tl_is_dir(runs_dir) || list_dir(runs_dir, &files, 0)) return 1;
    for (size_t i = 0; i < files.n; i++) {
        if (!gr_is_report_name(files.v[i])) continue;
        if (!gate_text_plain(files.v[i])) {
            ge_invalid(res, "%s: a report file name with control characters or bytes that are not UTF-8", files.v[i]);
            continue;
        }
        gr_report *r = GE_GROW(res->reps, res->nreps);
        gr_report_load(runs_dir, files.v[i], r);
        ge_input *in = GE_GROW(res->inputs, res->ninputs);
        in->file = strdup(files.v[i]);
        memcpy(in->sha256, r->sha256, sizeof in->sha256);
        in->kind = "report";
    }
    tl_strlist_free(&files);
    return 0;
}

/* The rules on one report by itself: readable, complete, a release build of a configured
 * backend with the gate subject, the sample counts, each row's skips and arithmetic. */
static void check_report(gate_result *res, gr_report *r)
{
    const gate_config *cfg = res->cfg;
    if (!r->ok) { ge_invalid(res, "%s: not a readable report: %s", r->file, r->error); return; }
    if (!r->nsubjects) /* subjects from the rows */
        for (size_t k = 0; k < r->nrows; k++)
            if (!ge_has_subject(r, r->rows[k].subject)) {
                r->subjects = realloc(r->subjects, (r->nsubjects + 1) * sizeof *r->subjects);
                r->subjects[r->nsubjects++] = strdup(r->rows[k].subject);
            }
    if (!r->completed || r->failure)
        ge_invalid(res, "%s: failed or incomplete report (completed=%s, failure: %s)", r->file,
                   r->completed ? "true" : "false", r->failure ? r->failure : "none");
    const char *why;
    if (!gr_release(r, &why)) ge_invalid(res, "%s: not a release build: %s", r->file, why);
    if (ge_backend_rank(cfg, r->backend) == cfg->nbackends)
        ge_invalid(res, "%s: backend '%s' is not one of the configured backends", r->file, r->backend);
    if (!ge_has_subject(r, cfg->subject))
        ge_invalid(res, "%s: subject '%s' is not in the report", r->file, cfg->subject);
    const gate_suite_cfg *sc = gate_suite_find(cfg, r->suite);
    if (sc && sc->gated && sc->samples <= 0 && r->samples < 0)
        ge_invalid(res, "%s: wrong sample count: the report states no sample count and the configuration sets none",
                   r->file);
    for (size_t k = 0; k < r->nrows; k++) {
        const gr_row *e = &r->rows[k];
        check_skipped(res, r, e);
        if (!e->supported) continue;
        if ((r->samples >= 0 && e->n != (size_t)r->samples) || (sc && sc->samples > 0 && e->n != (size_t)sc->samples))
            ge_invalid(res, "%s: wrong sample count: row '%s' subject '%s' has %zu samples, expected %d", r->file,
                       e->name, e->subject, e->n, sc && sc->samples > 0 ? sc->samples : r->samples);
        check_arith(res, r, e);
    }
}

/* Replayed reports: separate processes never write the same bytes. */
static void check_replayed(gate_result *res)
{
    for (size_t i = 0; i < res->nreps; i++)
        for (size_t j = i + 1; j < res->nreps; j++)
            if (res->reps[i].ok && res->reps[j].ok && !strcmp(res->reps[i].sha256, res->reps[j].sha256))
                ge_invalid(res, "%s and %s are byte-identical reports (one process's report replayed)",
                           res->reps[i].file, res->reps[j].file);
}

/* One build id per backend and layout seed: every report of a backend ran the same player
 * (tandem attempt --layouts: a seeded AOT layout is a build of its own; gr_report.layout / 2
 * is the folded seed). */
static void check_build_ids(gate_result *res)
{
    const gate_config *cfg = res->cfg;
    for (int b = 0; b < cfg->nbackends; b++) {
        for (size_t i = 0; i < res->nreps; i++) {
            const gr_report *r = &res->reps[i], *f = NULL;
            if (!r->ok || strcmp(r->backend, cfg->backends[b])) continue;
            if (!r->build_id || !r->build_id[0]) { ge_invalid(res, "%s: no buildId", r->file); continue; }
            for (size_t j = 0; j < i && !f; j++)
                if (res->reps[j].ok && !strcmp(res->reps[j].backend, r->backend) && res->reps[j].layout / 2 == r->layout / 2 &&
                    res->reps[j].build_id && res->reps[j].build_id[0])
                    f = &res->reps[j];
            if (f && strcmp(f->build_id, r->build_id))
                ge_invalid(res, "mixed build id within backend %s: %s has %.16s..., %s has %.16s...", cfg->backends[b],
                           f->file, f->build_id, r->file, r->build_id);
        }
    }
}

/* The configured number of processes, in all and per gated suite and backend. */
static void check_process_counts(gate_result *res)
{
    const gate_config *cfg = res->cfg;
    if (cfg->expected_processes > 0 && res->nreps != (size_t)cfg->expected_processes)
        ge_invalid(res, "process count: %zu reports, expected %d", res->nreps, cfg->expected_processes);
    for (int s = 0; s < cfg->nsuites; s++) {
        if (!cfg->suites[s].gated) continue;
        for (int b = 0; b < cfg->nbackends; b++) {
            int n = 0;
            for (size_t i = 0; i < res->nreps; i++) {
                const gr_report *r = &res->reps[i];
                if (r->ok && !strcmp(r->suite, cfg->suites[s].name) && !strcmp(r->backend, cfg->backends[b]) &&
                    !ge_report_only_retention(cfg, r->retention))
                    n++;
            }
            int extra = gate_seq_extra(res, cfg->suites[s].name, cfg->backends[b]);
            if (n != cfg->processes + extra)
                ge_invalid(res, "process count: suite %s backend %s has %d gated processes, expected %d",
                           cfg->suites[s].name, cfg->backends[b], n, cfg->processes + extra);
        }
    }
}

/* PASS, FAIL or INVALID from the lines, the allocation rows and the host's business. */
static void decide(gate_result *res)
{
    size_t alloc_fail = 0;
    for (size_t i = 0; i < res->nallocs; i++) alloc_fail += !strcmp(res->allocs[i].result, "FAIL");
    if (!res->n_gated && !res->ninvalid) ge_invalid(res, "no gated row: nothing to decide");
    gate_seq_judge(res); /* each row at its first look where it is not borderline */
    char *busy = gate_busy_judge(res); /* a FAIL that measured the host is not a clean FAIL */
    if (busy) ge_invalid(res, "%s", busy);
    res->busy_invalid = busy != NULL;
    free(busy);
    res->verdict = res->ninvalid ? GATE_INVALID : (res->n_fail || alloc_fail) ? GATE_FAIL : GATE_PASS;
}

int gate_evaluate(const char *runs_dir, const gate_config *cfg, gate_result *res)
{
    memset(res, 0, sizeof *res);
    res->cfg = cfg;
    res->pregate_cpu = NAN;
    if (read_reports(runs_dir, res)) return 1;
    load_observations(runs_dir, res);
    gate_seq_load(runs_dir, res); /* the sequential rule's added processes (gate_sequential.c) */
    for (size_t i = 0; i < res->nreps; i++) check_report(res, &res->reps[i]);
    check_replayed(res);
    check_build_ids(res);
    check_process_counts(res);
    ge_eval_groups(res); /* gate_lines.c */
    decide(res);
    return 0;
}

void gate_result_free(gate_result *res)
{
    for (size_t i = 0; i < res->nlines; i++) {
        free(res->lines[i].ratio);
        free(res->lines[i].proc);
        free(res->lines[i].layout);
        free(res->lines[i].stat_a);
        free(res->lines[i].stat_b);
    }
    free(res->lines);
    for (size_t i = 0; i < res->nblines; i++) {
        free(res->blines[i].ratio);
        free(res->blines[i].proc);
        free(res->blines[i].layout);
        free(res->blines[i].stat_a);
        free(res->blines[i].stat_b);
        free(res->blines[i].stat_ref);
    }
    free(res->blines);
    free(res->base_md);
    cJSON_Delete(res->base_json);
    free(res->allocs);
    free(res->xb);
    for (size_t i = 0; i < res->ninvalid; i++) free(res->invalid[i]);
    free(res->invalid);
    for (size_t i = 0; i < res->ninputs; i++) free(res->inputs[i].file);
    free(res->inputs);
    for (size_t i = 0; i < res->nobs; i++) {
        free(res->obs[i].file);
        free(res->obs[i].process);
        free(res->obs[i].status);
    }
    free(res->obs);
    free(res->pregate_status);
    gate_seq_free(res);
    for (size_t i = 0; i < res->nreps; i++) gr_report_free(&res->reps[i]);
    free(res->reps);
    memset(res, 0, sizeof *res);
}
