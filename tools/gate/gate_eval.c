/* gate_eval.c - ratios, median and worst, thresholds, INVALID rules and the verdict. */
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

#define GROW(arr, n) ((arr) = realloc((arr), ((n) + 1) * sizeof *(arr)), &(arr)[(n)++])

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
    *GROW(res->invalid, res->ninvalid) = t;
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

static int is_report_only_retention(const gate_config *c, const char *ret)
{
    for (int i = 0; i < c->nreport_only_retention; i++)
        if (!strcmp(c->report_only_retention[i], ret)) return 1;
    return 0;
}

static const gr_row *find_entry(const gr_report *r, const char *row, const char *subject)
{
    for (size_t i = 0; i < r->nrows; i++)
        if (!strcmp(r->rows[i].name, row) && !strcmp(r->rows[i].subject, subject)) return &r->rows[i];
    return NULL;
}

static int has_subject(const gr_report *r, const char *s)
{
    for (size_t i = 0; i < r->nsubjects; i++)
        if (!strcmp(r->subjects[i], s)) return 1;
    return 0;
}

static double *values(const gr_row *e)
{
    double *v = malloc((e->n + 1) * sizeof *v);
    for (size_t i = 0; i < e->n; i++) v[i] = gr_sample_value(&e->s[i]);
    return v;
}

static double entry_stat(const gr_row *e, int use_mean)
{
    if (!e || !e->supported || !e->n) return NAN;
    double *v = values(e);
    double s = use_mean ? gs_mean(v, e->n) : gs_median(v, e->n);
    free(v);
    return s;
}

/* An entry's allocation bytes (bytes = 1) or calls (bytes = 0) per op over its samples. */
static double entry_alloc_per_op(const gr_row *e, int bytes)
{
    double v = 0, ops = 0;
    for (size_t q = 0; q < e->n; q++) {
        v += bytes ? e->s[q].bytes : e->s[q].allocs;
        ops += e->s[q].ops;
    }
    return ops > 0 ? v / ops : NAN;
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
    double *v = values(e);
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
    ge_input *in = GROW(res->inputs, res->ninputs);
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
        ge_obs *o = GROW(res->obs, res->nobs);
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

/* Contradictory evidence about one row across the processes of a (suite, retention) group:
 * support or gating that differ between processes or subjects, gating that differs from the
 * configuration (which decides it), identical sample arrays in two processes (replayed). */
static void check_row_agreement(gate_result *res, const gr_report **gr, size_t ngr, const char *row,
                                const tl_strlist *subjects, const gate_suite_cfg *sc, int cfg_report_only)
{
    const gr_report *flag_rep = NULL;
    int flag = -1;
    for (size_t s = 0; s < subjects->n; s++) {
        const gr_report *sup_rep = NULL;
        int sup = -1;
        for (size_t i = 0; i < ngr; i++) {
            const gr_row *e = find_entry(gr[i], row, subjects->v[s]);
            if (!e) continue;
            if (sup < 0) { sup = e->supported; sup_rep = gr[i]; }
            else if (sup != e->supported)
                ge_invalid(res, "%s and %s disagree about row '%s' of subject '%s': supported %s vs %s", sup_rep->file,
                        gr[i]->file, row, subjects->v[s], sup ? "true" : "false", e->supported ? "true" : "false");
            /* an NA entry carries no gating of its own (row_unsupported has no gated flag) */
            if (e->gated >= 0 && e->supported) {
                if (flag < 0) { flag = e->gated; flag_rep = gr[i]; }
                else if (flag != e->gated)
                    ge_invalid(res, "%s and %s disagree about gating row '%s' (gated %s vs %s)", flag_rep->file, gr[i]->file,
                            row, flag ? "true" : "false", e->gated ? "true" : "false");
            }
            if (e->n < 2) continue;
            for (size_t j = i + 1; j < ngr; j++) {
                const gr_row *f = find_entry(gr[j], row, subjects->v[s]);
                if (!f || f->n != e->n) continue;
                size_t k = 0;
                while (k < e->n && e->s[k].ns == f->s[k].ns && e->s[k].ops == f->s[k].ops) k++;
                if (k == e->n)
                    ge_invalid(res, "%s and %s have identical samples for row '%s' subject '%s' (a replayed report)",
                            gr[i]->file, gr[j]->file, row, subjects->v[s]);
            }
        }
    }
    if (sc && sc->gated && flag >= 0 && flag == cfg_report_only)
        ge_invalid(res, "%s: row '%s' is %s in the report but %s in the gate's configuration", flag_rep->file, row,
                flag ? "gated" : "report-only", cfg_report_only ? "report-only" : "gated");
}

/* A row skipped by a peer (tandem-player --skip-na-of-first) is NA only because the gate
 * subject leaves it unsupported in the same process: a peer cannot skip a row it supports. */
static void check_skipped(gate_result *res, const gr_report *r, const gr_row *e)
{
    if (!e->skipped) return;
    const char *subj = res->cfg->subject;
    const gr_row *a = find_entry(r, e->name, subj);
    if (!strcmp(e->subject, subj))
        ge_invalid(res, "%s: row '%s': the gate subject '%s' skipped it (only its peers skip rows)", r->file, e->name, subj);
    else if (!a || a->supported)
        ge_invalid(res, "%s: row '%s': subject '%s' skipped it, but the gate subject '%s' %s", r->file, e->name, e->subject,
                subj, a ? "supports it" : "has no entry for it");
}

static int row_may_be_unsupported(const gate_suite_cfg *sc, const char *row)
{
    for (int p = 0; sc && p < sc->nunsupported; p++)
        if (gate_pattern_match(row, sc->unsupported[p])) return 1;
    return 0;
}

/* The (suite, retention) groups in a stable order: configured suites first. */
typedef struct grp { const char *suite, *retention; } grp;

static int suite_rank(const gate_config *c, const char *s)
{
    for (int i = 0; i < c->nsuites; i++)
        if (!strcmp(c->suites[i].name, s)) return i;
    return c->nsuites;
}

static const gate_config *g_cfg; /* for qsort */
static int grp_cmp(const void *a, const void *b)
{
    const grp *x = a, *y = b;
    int ra = suite_rank(g_cfg, x->suite), rb = suite_rank(g_cfg, y->suite);
    if (ra != rb) return ra - rb;
    int c = strcmp(x->suite, y->suite);
    if (c) return c;
    int dx = is_report_only_retention(g_cfg, x->retention), dy = is_report_only_retention(g_cfg, y->retention);
    if (dx != dy) return dx - dy;
    return strcmp(x->retention, y->retention);
}

static int in_list(char (*arr)[64], int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(arr[i], s)) return 1;
    return 0;
}

static int backend_rank(const gate_config *c, const char *b)
{
    for (int i = 0; i < c->nbackends; i++)
        if (!strcmp(c->backends[i], b)) return i;
    return c->nbackends;
}

int gate_evaluate(const char *runs_dir, const gate_config *cfg, gate_result *res)
{
    memset(res, 0, sizeof *res);
    res->cfg = cfg;
    res->pregate_cpu = NAN;
    tl_strlist files = { 0 };
    if (!tl_is_dir(runs_dir) || list_dir(runs_dir, &files, 0)) return 1;

    /* ---- read ---- */
    for (size_t i = 0; i < files.n; i++) {
        if (!gr_is_report_name(files.v[i])) continue;
        if (!gate_text_plain(files.v[i])) {
            ge_invalid(res, "%s: a report file name with control characters or bytes that are not UTF-8", files.v[i]);
            continue;
        }
        gr_report *r = GROW(res->reps, res->nreps);
        gr_report_load(runs_dir, files.v[i], r);
        ge_input *in = GROW(res->inputs, res->ninputs);
        in->file = strdup(files.v[i]);
        memcpy(in->sha256, r->sha256, sizeof in->sha256);
        in->kind = "report";
    }
    tl_strlist_free(&files);
    load_observations(runs_dir, res);
    gate_seq_load(runs_dir, res); /* the sequential rule's added processes (gate_sequential.c) */

    /* ---- per-report rules ---- */
    for (size_t i = 0; i < res->nreps; i++) {
        gr_report *r = &res->reps[i];
        if (!r->ok) { ge_invalid(res, "%s: not a readable report: %s", r->file, r->error); continue; }
        if (!r->nsubjects) /* subjects from the rows */
            for (size_t k = 0; k < r->nrows; k++)
                if (!has_subject(r, r->rows[k].subject)) {
                    r->subjects = realloc(r->subjects, (r->nsubjects + 1) * sizeof *r->subjects);
                    r->subjects[r->nsubjects++] = strdup(r->rows[k].subject);
                }
        if (!r->completed || r->failure)
            ge_invalid(res, "%s: failed or incomplete report (completed=%s, failure: %s)", r->file,
                    r->completed ? "true" : "false", r->failure ? r->failure : "none");
        const char *why;
        if (!gr_release(r, &why)) ge_invalid(res, "%s: not a release build: %s", r->file, why);
        if (backend_rank(cfg, r->backend) == cfg->nbackends)
            ge_invalid(res, "%s: backend '%s' is not one of the configured backends", r->file, r->backend);
        if (!has_subject(r, cfg->subject))
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
    /* replayed reports: separate processes never write the same bytes */
    for (size_t i = 0; i < res->nreps; i++)
        for (size_t j = i + 1; j < res->nreps; j++)
            if (res->reps[i].ok && res->reps[j].ok && !strcmp(res->reps[i].sha256, res->reps[j].sha256))
                ge_invalid(res, "%s and %s are byte-identical reports (one process's report replayed)", res->reps[i].file,
                        res->reps[j].file);
    /* mixed build id within a backend */
    for (int b = 0; b < cfg->nbackends; b++) {
        const char *first = NULL, *ff = NULL;
        for (size_t i = 0; i < res->nreps; i++) {
            const gr_report *r = &res->reps[i];
            if (!r->ok || strcmp(r->backend, cfg->backends[b])) continue;
            if (!r->build_id || !r->build_id[0]) { ge_invalid(res, "%s: no buildId", r->file); continue; }
            if (!first) { first = r->build_id; ff = r->file; }
            else if (strcmp(first, r->build_id))
                ge_invalid(res, "mixed build id within backend %s: %s has %.16s..., %s has %.16s...", cfg->backends[b], ff,
                        first, r->file, r->build_id);
        }
    }
    /* process counts */
    if (cfg->expected_processes > 0 && res->nreps != (size_t)cfg->expected_processes)
        ge_invalid(res, "process count: %zu reports, expected %d", res->nreps, cfg->expected_processes);
    for (int s = 0; s < cfg->nsuites; s++) {
        if (!cfg->suites[s].gated) continue;
        for (int b = 0; b < cfg->nbackends; b++) {
            int n = 0;
            for (size_t i = 0; i < res->nreps; i++) {
                const gr_report *r = &res->reps[i];
                if (r->ok && !strcmp(r->suite, cfg->suites[s].name) && !strcmp(r->backend, cfg->backends[b]) &&
                    !is_report_only_retention(cfg, r->retention))
                    n++;
            }
            int extra = gate_seq_extra(res, cfg->suites[s].name, cfg->backends[b]);
            if (n != cfg->processes + extra)
                ge_invalid(res, "process count: suite %s backend %s has %d gated processes, expected %d", cfg->suites[s].name,
                        cfg->backends[b], n, cfg->processes + extra);
        }
    }

    /* ---- groups ---- */
    grp *groups = NULL;
    size_t ngroups = 0;
    for (size_t i = 0; i < res->nreps; i++) {
        const gr_report *r = &res->reps[i];
        if (!r->ok) continue;
        size_t g;
        for (g = 0; g < ngroups; g++)
            if (!strcmp(groups[g].suite, r->suite) && !strcmp(groups[g].retention, r->retention)) break;
        if (g == ngroups) *GROW(groups, ngroups) = (grp){ r->suite, r->retention };
    }
    g_cfg = cfg;
    if (ngroups > 1) qsort(groups, ngroups, sizeof *groups, grp_cmp);

    for (size_t g = 0; g < ngroups; g++) {
        const char *suite = groups[g].suite, *ret = groups[g].retention;
        const gate_suite_cfg *sc = gate_suite_find(cfg, suite);
        int use_mean = sc ? sc->use_mean : 0;
        int ret_ro = is_report_only_retention(cfg, ret);
        /* the group's reports, rows (first-appearance order), subjects, backends */
        const gr_report **gr = NULL;
        size_t ngr = 0;
        tl_strlist rows = { 0 }, subjects = { 0 }, backends = { 0 };
        for (size_t i = 0; i < res->nreps; i++) {
            const gr_report *r = &res->reps[i];
            if (!r->ok || strcmp(r->suite, suite) || strcmp(r->retention, ret)) continue;
            *GROW(gr, ngr) = r;
            for (size_t k = 0; k < r->nrows; k++) {
                size_t q;
                for (q = 0; q < rows.n && strcmp(rows.v[q], r->rows[k].name); q++) {}
                if (q == rows.n) tl_strlist_push(&rows, r->rows[k].name);
            }
            for (size_t k = 0; k < r->nsubjects; k++) {
                size_t q;
                for (q = 0; q < subjects.n && strcmp(subjects.v[q], r->subjects[k]); q++) {}
                if (q == subjects.n) tl_strlist_push(&subjects, r->subjects[k]);
            }
            size_t q;
            for (q = 0; q < backends.n && strcmp(backends.v[q], r->backend); q++) {}
            if (q == backends.n) tl_strlist_push(&backends, r->backend);
        }
        tl_strlist_sort(&subjects);
        /* backends in configured order */
        for (size_t a = 0; a < backends.n; a++)
            for (size_t b2 = a + 1; b2 < backends.n; b2++)
                if (backend_rank(cfg, backends.v[b2]) < backend_rank(cfg, backends.v[a]) ||
                    (backend_rank(cfg, backends.v[b2]) == backend_rank(cfg, backends.v[a]) &&
                     strcmp(backends.v[b2], backends.v[a]) < 0)) {
                    char *t = backends.v[a];
                    backends.v[a] = backends.v[b2];
                    backends.v[b2] = t;
                }
        /* missing subjects / rows */
        for (size_t i = 0; i < ngr; i++)
            for (size_t s = 0; s < subjects.n; s++) {
                if (!has_subject(gr[i], subjects.v[s])) {
                    ge_invalid(res, "%s: subject '%s' missing (other %s processes have it)", gr[i]->file, subjects.v[s], suite);
                    continue;
                }
                for (size_t k = 0; k < rows.n; k++)
                    if (!find_entry(gr[i], rows.v[k], subjects.v[s]))
                        ge_invalid(res, "%s: missing row '%s' for subject '%s'", gr[i]->file, rows.v[k], subjects.v[s]);
            }
        /* peers */
        tl_strlist peers = { 0 }, bases = { 0 };
        for (size_t s = 0; s < subjects.n; s++) {
            if (!strcmp(subjects.v[s], cfg->subject)) continue;
            if (gate_is_baseline(cfg, subjects.v[s])) { tl_strlist_push(&bases, subjects.v[s]); continue; }
            if (cfg->npeers && !in_list((char (*)[64])cfg->peers, cfg->npeers, subjects.v[s])) continue;
            tl_strlist_push(&peers, subjects.v[s]);
        }
        for (size_t k = 0; k < rows.n; k++) {
            const char *row = rows.v[k];
            int row_ro = 0, sync = 0;
            /* the gated set is the configuration's; the reports' flags are checked against it */
            if (sc)
                for (int p = 0; p < sc->nreport_only; p++) row_ro |= gate_pattern_match(row, sc->report_only[p]);
            check_row_agreement(res, gr, ngr, row, &subjects, sc, row_ro);
            if (sc)
                for (int p = 0; p < sc->nsync; p++) sync |= gate_pattern_match(row, sc->sync[p]);
            /* the peers, then the baseline revisions of subject A: the same ratios, their own
             * thresholds and lines (res->blines), never counted in the peer verdict */
            for (size_t pe = 0; pe < peers.n + bases.n; pe++) {
                int is_base = pe >= peers.n;
                const char *peer = is_base ? bases.v[pe - peers.n] : peers.v[pe];
                int peer_ro = !is_base && in_list((char (*)[64])cfg->report_only_peers, cfg->nreport_only_peers, peer);
                for (size_t b = 0; b < backends.n; b++) {
                    ge_line *L = is_base ? GROW(res->blines, res->nblines) : GROW(res->lines, res->nlines);
                    memset(L, 0, sizeof *L);
                    L->suite = suite;
                    L->retention = ret;
                    L->row = gr[0]->rows ? row : row;
                    L->peer = peer;
                    L->backend = NULL;
                    /* point at stable storage: a report's strings */
                    for (size_t i = 0; i < ngr && !L->backend; i++)
                        if (!strcmp(gr[i]->backend, backends.v[b])) L->backend = gr[i]->backend;
                    for (size_t i = 0; i < ngr; i++) {
                        const gr_row *e = find_entry(gr[i], row, peer);
                        if (e && e->name) { L->row = e->name; L->peer = e->subject; break; }
                    }
                    L->kind = sync ? GL_SYNC : GL_GATED;
                    if (!sc || !sc->gated) L->why = sc ? "suite is report-only" : "suite not configured";
                    else if (ret_ro) L->why = "default retention";
                    else if (row_ro) L->why = "row is report-only";
                    else if (peer_ro) L->why = "distance to the lower bound";
                    else if (!is_base && gate_suite_lower_bound(sc, peer, row))
                        L->why = "peer runs lower-bound code here (td_peer.h), not its library";
                    if (L->why) L->kind = GL_REPORT;
                    L->thr_median = L->thr_worst = NAN;
                    if (L->kind == GL_SYNC) L->thr_median = cfg->sync_median;
                    if (L->kind == GL_GATED) { L->thr_median = cfg->median; L->thr_worst = cfg->worst; }
                    if (is_base && L->kind != GL_REPORT) { L->thr_median = cfg->base_median; L->thr_worst = cfg->base_worst; }
                    double *pa = NULL, *pb = NULL;
                    size_t npa = 0, npb = 0;
                    int na = 0, a_unsup = 0, b_unsup = 0;
                    for (size_t i = 0; i < ngr; i++) {
                        if (strcmp(gr[i]->backend, backends.v[b])) continue;
                        const gr_row *ea = find_entry(gr[i], row, cfg->subject), *eb = find_entry(gr[i], row, peer);
                        L->ratio = realloc(L->ratio, (L->nproc + 1) * sizeof *L->ratio);
                        L->proc = realloc(L->proc, (L->nproc + 1) * sizeof *L->proc);
                        L->layout = realloc(L->layout, (L->nproc + 1) * sizeof *L->layout);
                        L->proc[L->nproc] = gr[i]->file;
                        L->layout[L->nproc] = gr[i]->layout;
                        double sa = entry_stat(ea, use_mean), sb = entry_stat(eb, use_mean);
                        if ((ea && ea->supported && !(isfinite(sa) && sa > 0)) ||
                            (eb && eb->supported && !(isfinite(sb) && sb > 0)))
                            ge_invalid(res, "%s: row '%s': a statistic that is not a finite positive number (%s %g, %s %g)",
                                    gr[i]->file, row, cfg->subject, sa, peer, sb);
                        if (ea && !ea->supported) a_unsup = 1;
                        if (eb && !eb->supported) b_unsup = 1;
                        if ((ea && !ea->supported) || (eb && !eb->supported)) na = 1;
                        L->ratio[L->nproc++] = isfinite(sa) && sa > 0 && isfinite(sb) && sb > 0 ? sa / sb : NAN;
                        if (ea && ea->supported && ea->n) {
                            double *v = values(ea);
                            double cv = gs_cv(v, ea->n);
                            if (cv > L->cv) L->cv = cv;
                            pa = realloc(pa, (npa + ea->n) * sizeof *pa);
                            memcpy(pa + npa, v, ea->n * sizeof *v);
                            npa += ea->n;
                            free(v);
                        }
                        if (eb && eb->supported && eb->n) {
                            double *v = values(eb);
                            double cv = gs_cv(v, eb->n);
                            if (cv > L->cv) L->cv = cv;
                            pb = realloc(pb, (npb + eb->n) * sizeof *pb);
                            memcpy(pb + npb, v, eb->n * sizeof *v);
                            npb += eb->n;
                            free(v);
                        }
                    }
                    gs_mann_whitney(pa, npa, pb, npb, &L->mw);
                    free(pa);
                    free(pb);
                    gate_line_stats(L);
                    size_t nok = 0;
                    for (size_t p = 0; p < L->nproc; p++) nok += !isnan(L->ratio[p]);
                    if (!is_base && L->kind != GL_REPORT && a_unsup && !cfg->unsupported_na && !row_may_be_unsupported(sc, row))
                        ge_invalid(res, "%s %s: subject '%s' leaves gated row '%s' unsupported", suite, backends.v[b],
                                cfg->subject, row);
                    /* a peer's NA would drop the row from the verdict: only the configuration may
                     * (a row the subject leaves unsupported is NA already: the peers skip it) */
                    if (!is_base && L->kind != GL_REPORT && b_unsup && !a_unsup && !row_may_be_unsupported(sc, row))
                        ge_invalid(res, "%s %s: peer '%s' leaves gated row '%s' unsupported, and the gate's configuration "
                                     "does not list it in unsupportedRows", suite, backends.v[b], peer, row);
                    if (is_base) {
                        L->result = na || !nok ? "NA" : L->kind == GL_REPORT ? "REPORT"
                                    : L->median <= L->thr_median && L->worst <= L->thr_worst ? "PASS" : "FAIL";
                    } else if (na || !nok) {
                        L->result = "NA";
                        res->n_na++;
                    } else if (L->kind == GL_REPORT) {
                        L->result = "REPORT";
                        res->n_report++;
                    } else {
                        int pass = gate_line_pass(L);
                        L->result = pass ? "PASS" : "FAIL";
                        res->n_gated++;
                        if (pass) res->n_pass++;
                        else res->n_fail++;
                    }
                }
            }
            /* allocation rows: subject A in steady state, gated rows only */
            if (sc && sc->gated && !ret_ro && !row_ro)
                for (size_t b = 0; b < backends.n; b++) {
                    ge_alloc *A = NULL;
                    for (size_t i = 0; i < ngr; i++) {
                        if (strcmp(gr[i]->backend, backends.v[b])) continue;
                        const gr_row *ea = find_entry(gr[i], row, cfg->subject);
                        if (!ea || !ea->supported || !ea->n) continue;
                        if (!A) {
                            A = GROW(res->allocs, res->nallocs);
                            memset(A, 0, sizeof *A);
                            A->suite = suite;
                            A->retention = ret;
                            A->row = ea->name;
                            A->backend = gr[i]->backend;
                            A->retained = NAN;
                        }
                        double by = entry_alloc_per_op(ea, 1), al = entry_alloc_per_op(ea, 0);
                        if (by > A->bytes_per_op) A->bytes_per_op = by;
                        if (al > A->allocs_per_op) A->allocs_per_op = al;
                        if (!isnan(ea->retained) && (isnan(A->retained) || ea->retained > A->retained))
                            A->retained = ea->retained;
                    }
                    if (A) {
                        int bad = cfg->alloc_check && (A->bytes_per_op > cfg->alloc_max ||
                                                       (cfg->alloc_max == 0 && A->allocs_per_op > 0));
                        A->result = !cfg->alloc_check ? "REPORT" : bad ? "FAIL" : "PASS";
                    }
                }
            /* AOT/JIT per subject */
            for (size_t s = 0; s < subjects.n; s++) {
                double *va = NULL, *vj = NULL;
                size_t na2 = 0, nj = 0;
                const char *rname = NULL, *sname = NULL;
                double alloc[2][2] = { { 0, 0 }, { 0, 0 } }; /* [aot, jit][bytes, calls]: the worst process's */
                for (size_t i = 0; i < ngr; i++) {
                    const gr_row *e = find_entry(gr[i], row, subjects.v[s]);
                    double st = entry_stat(e, use_mean);
                    if (isnan(st)) continue;
                    rname = e->name;
                    sname = e->subject;
                    int jit = !strcmp(gr[i]->backend, "jit");
                    if (!jit && strcmp(gr[i]->backend, "aot")) continue;
                    if (!jit) { va = realloc(va, (na2 + 1) * sizeof *va); va[na2++] = st; }
                    else { vj = realloc(vj, (nj + 1) * sizeof *vj); vj[nj++] = st; }
                    for (int k = 0; k < 2; k++) alloc[jit][k] = fmax(alloc[jit][k], entry_alloc_per_op(e, k == 0));
                }
                if (na2 && nj) {
                    ge_xb *X = GROW(res->xb, res->nxb);
                    X->suite = suite;
                    X->retention = ret;
                    X->row = rname;
                    X->subject = sname;
                    X->aot = gs_median(va, na2);
                    X->jit = gs_median(vj, nj);
                    X->aot_bytes = alloc[0][0];
                    X->aot_allocs = alloc[0][1];
                    X->jit_bytes = alloc[1][0];
                    X->jit_allocs = alloc[1][1];
                }
                free(va);
                free(vj);
            }
        }
        tl_strlist_free(&peers);
        tl_strlist_free(&bases);
        tl_strlist_free(&rows);
        tl_strlist_free(&subjects);
        tl_strlist_free(&backends);
        free(gr);
    }
    free(groups);

    size_t alloc_fail = 0;
    for (size_t i = 0; i < res->nallocs; i++) alloc_fail += !strcmp(res->allocs[i].result, "FAIL");
    if (!res->n_gated && !res->ninvalid) ge_invalid(res, "no gated row: nothing to decide");
    gate_seq_judge(res); /* each row at its first look where it is not borderline */
    char *busy = gate_busy_judge(res); /* a FAIL that measured the host is not a clean FAIL */
    if (busy) ge_invalid(res, "%s", busy);
    res->busy_invalid = busy != NULL;
    free(busy);
    res->verdict = res->ninvalid ? GATE_INVALID : (res->n_fail || alloc_fail) ? GATE_FAIL : GATE_PASS;
    return 0;
}

void gate_result_free(gate_result *res)
{
    for (size_t i = 0; i < res->nlines; i++) {
        free(res->lines[i].ratio);
        free(res->lines[i].proc);
        free(res->lines[i].layout);
    }
    free(res->lines);
    for (size_t i = 0; i < res->nblines; i++) {
        free(res->blines[i].ratio);
        free(res->blines[i].proc);
        free(res->blines[i].layout);
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
