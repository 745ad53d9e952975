/*
 * gate_clock.c - samples and the clock (SUITES.md "Samples and meters"), report-only:
 * gate.md's "Samples and the clock" section and gate-summary.json's "clock" object.
 *
 * Per report: the clock the player timed with, its measured cost per read and its
 * granularity (host/shell/clock.c), the shortest sample and the samples under 1 ms.
 * Per (suite, row, subject), over every report: the worst share of a sample the clock
 * reads take, segments x read cost / sample ns (one read's cost falls inside a segment:
 * host/shell/clock.c), recomputed here from the raw samples
 * and the report's read cost (the report's own clockShare is never read). Rows over 1%
 * are listed, gated ones first: there the clock is a visible part of what the ratio
 * compares. Reports without a clock or segments (older ones) are listed as such.
 */
#include "gate_int.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GC_SHARE_TARGET 0.01
#define GC_MIN_SAMPLE_NS 1e6

typedef struct gc_over {
    const char *suite, *retention, *row, *subject;
    int gated;
    double share, seg_ns;       /* worst share; ns per segment of that sample */
    size_t procs;               /* reports where the row is over the target */
} gc_over;

typedef struct gc_proc {
    const gr_report *r;
    double min_ns, worst;
    size_t under, over, rows;   /* samples under 1 ms; (row, subject) entries over the target */
    int shaped;                 /* segments stated for every supported entry */
} gc_proc;

/* Is (suite, retention, row) gated against `subject` (A or a peer) in the evaluated lines? */
static int gc_gated(const gate_result *res, const gr_report *r, const char *row, const char *subject)
{
    for (size_t i = 0; i < res->nlines; i++) {
        const ge_line *L = &res->lines[i];
        if (L->kind == GL_REPORT || strcmp(L->suite, r->suite) || strcmp(L->retention, r->retention) || strcmp(L->row, row))
            continue;
        if (!strcmp(subject, res->cfg->subject) || !strcmp(subject, L->peer)) return 1;
    }
    return 0;
}

static int gc_cmp(const void *a, const void *b)
{
    const gc_over *x = a, *y = b;
    if (x->gated != y->gated) return y->gated - x->gated;
    if (x->share != y->share) return x->share < y->share ? 1 : -1;
    int c = strcmp(x->suite, y->suite);
    if (!c) c = strcmp(x->retention, y->retention);
    if (!c) c = strcmp(x->row, y->row);
    return c ? c : strcmp(x->subject, y->subject);
}

/* The per-report figures and the rows over the target (sorted); *nover set. */
static gc_over *gc_collect(const gate_result *res, gc_proc *procs, size_t *nover)
{
    gc_over *ov = NULL;
    size_t n = 0, cap = 0;
    for (size_t k = 0; k < res->nreps; k++) {
        const gr_report *r = &res->reps[k];
        gc_proc *p = &procs[k];
        memset(p, 0, sizeof *p);
        p->r = r;
        p->min_ns = NAN;
        p->shaped = r->ok && !isnan(r->clock_read_ns);
        if (!r->ok) continue;
        for (size_t i = 0; i < r->nrows; i++) {
            const gr_row *w = &r->rows[i];
            if (!w->supported || !w->n) continue;
            double worst = 0, seg_ns = NAN;
            int shaped = 1;
            for (size_t s = 0; s < w->n; s++) {
                const gr_sample *x = &w->s[s];
                if (isnan(p->min_ns) || x->ns < p->min_ns) p->min_ns = x->ns;
                p->under += x->ns < GC_MIN_SAMPLE_NS;
                if (isnan(x->segments) || isnan(r->clock_read_ns)) { shaped = 0; continue; }
                double share = x->segments * r->clock_read_ns / x->ns;
                if (share > worst) {
                    worst = share;
                    seg_ns = x->ns / x->segments;
                }
            }
            p->rows++;
            if (!shaped) { p->shaped = 0; continue; }
            if (worst > p->worst) p->worst = worst;
            if (worst <= GC_SHARE_TARGET) continue;
            p->over++;
            size_t j = 0;
            while (j < n && (strcmp(ov[j].suite, r->suite) || strcmp(ov[j].retention, r->retention) ||
                             strcmp(ov[j].row, w->name) || strcmp(ov[j].subject, w->subject)))
                j++;
            if (j == n) {
                if (n == cap) {
                    cap = cap ? cap * 2 : 64;
                    ov = realloc(ov, cap * sizeof *ov);
                    if (!ov) abort();
                }
                ov[n++] = (gc_over){ r->suite, r->retention, w->name, w->subject, gc_gated(res, r, w->name, w->subject), 0,
                                     NAN, 0 };
            }
            ov[j].procs++;
            if (worst > ov[j].share) {
                ov[j].share = worst;
                ov[j].seg_ns = seg_ns;
            }
        }
    }
    if (n) qsort(ov, n, sizeof *ov, gc_cmp);
    *nover = n;
    return ov;
}

char *gate_clock_md(const gate_result *res)
{
    gate_buf b = { 0 };
    gc_proc *procs = calloc(res->nreps ? res->nreps : 1, sizeof *procs);
    if (!procs) abort();
    size_t nover = 0;
    gc_over *ov = gc_collect(res, procs, &nover);
    gate_buf_printf(&b, "\n## Samples and the clock\n\n"
                        "Each sample's timed total is at least 1 ms: a short timed segment is repeated (cohorts,\n"
                        "rounds, calls) and summed, the untimed work between segments left out. Clock share = the\n"
                        "clock's part of a sample: segments x the read cost the player measured at start / the\n"
                        "sample's ns (a segment reads the clock twice; one read's cost falls inside it), recomputed\n"
                        "from the raw samples; target under 1%%. Report-only: it explains, never decides.\n\n");
    gate_buf_printf(&b, "| report | clock | read ns | granularity ns | shortest sample ms | samples < 1 ms | rows over 1%% | worst share |\n"
                        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (size_t k = 0; k < res->nreps; k++) {
        const gc_proc *p = &procs[k];
        char *file = gate_md_escape(p->r->file), *ck = gate_md_escape(p->r->clock_name ? p->r->clock_name : "not stated");
        gate_buf_printf(&b, "| %s | %s |", file, ck);
        free(file);
        free(ck);
        if (isnan(p->r->clock_read_ns)) gate_buf_printf(&b, " - | - |");
        else gate_buf_printf(&b, " %.1f | %.0f |", p->r->clock_read_ns, p->r->clock_granularity_ns);
        if (isnan(p->min_ns)) gate_buf_printf(&b, " - | - |");
        else gate_buf_printf(&b, " %.3f | %zu |", p->min_ns / 1e6, p->under);
        if (p->shaped) gate_buf_printf(&b, " %zu of %zu | %.1f%% |\n", p->over, p->rows, p->worst * 100);
        else gate_buf_printf(&b, " - | no segments stated |\n");
    }
    if (!res->nreps) gate_buf_printf(&b, "| (no reports) | - | - | - | - | - | - | - |\n");
    size_t gated = 0;
    for (size_t i = 0; i < nover; i++) gated += ov[i].gated;
    gate_buf_printf(&b, "\nRows whose clock share is over 1%% in some process (%zu, %zu of them gated rows), worst first:\n\n",
                    nover, gated);
    gate_buf_printf(&b, "| suite | retention | row | subject | gated | worst share | ns per segment | processes over |\n"
                        "| --- | --- | --- | --- | --- | ---: | ---: | ---: |\n");
    for (size_t i = 0; i < nover; i++) {
        char *s = gate_md_escape(ov[i].suite), *r = gate_md_escape(ov[i].row), *sub = gate_md_escape(ov[i].subject);
        char *ret = gate_md_escape(ov[i].retention);
        gate_buf_printf(&b, "| %s | %s | %s | %s | %s | %.1f%% | %.0f | %zu |\n", s, ret, r, sub, ov[i].gated ? "yes" : "no",
                        ov[i].share * 100, ov[i].seg_ns, ov[i].procs);
        free(ret);
        free(s);
        free(r);
        free(sub);
    }
    if (!nover) gate_buf_printf(&b, "| - | - | (none) | - | - | - | - | - |\n");
    free(ov);
    free(procs);
    return b.p;
}

static cJSON *gc_num(double v, const char *fmt)
{
    if (!isfinite(v)) return cJSON_CreateNull();
    char t[64];
    snprintf(t, sizeof t, fmt, v);
    return cJSON_CreateRaw(t);
}

cJSON *gate_clock_json(const gate_result *res)
{
    gc_proc *procs = calloc(res->nreps ? res->nreps : 1, sizeof *procs);
    if (!procs) abort();
    size_t nover = 0;
    gc_over *ov = gc_collect(res, procs, &nover);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "shareTarget", gc_num(GC_SHARE_TARGET, "%.4f"));
    cJSON_AddItemToObject(o, "minSampleNs", gc_num(GC_MIN_SAMPLE_NS, "%.0f"));
    cJSON *rp = cJSON_AddArrayToObject(o, "reports");
    for (size_t k = 0; k < res->nreps; k++) {
        const gc_proc *p = &procs[k];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "file", p->r->file);
        if (p->r->clock_name) cJSON_AddStringToObject(e, "clock", p->r->clock_name);
        else cJSON_AddNullToObject(e, "clock");
        cJSON_AddItemToObject(e, "readCostNs", gc_num(p->r->clock_read_ns, "%.3f"));
        cJSON_AddItemToObject(e, "granularityNs", gc_num(p->r->clock_granularity_ns, "%.0f"));
        cJSON_AddItemToObject(e, "shortestSampleNs", gc_num(p->min_ns, "%.0f"));
        cJSON_AddNumberToObject(e, "samplesUnderMin", (double)p->under);
        cJSON_AddItemToObject(e, "rowsOverShare", p->shaped ? gc_num((double)p->over, "%.0f") : cJSON_CreateNull());
        cJSON_AddItemToObject(e, "worstShare", p->shaped ? gc_num(p->worst, "%.6f") : cJSON_CreateNull());
        cJSON_AddItemToArray(rp, e);
    }
    cJSON *ro = cJSON_AddArrayToObject(o, "rowsOverShare");
    for (size_t i = 0; i < nover; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "suite", ov[i].suite);
        cJSON_AddStringToObject(e, "retention", ov[i].retention);
        cJSON_AddStringToObject(e, "row", ov[i].row);
        cJSON_AddStringToObject(e, "subject", ov[i].subject);
        cJSON_AddBoolToObject(e, "gated", ov[i].gated);
        cJSON_AddItemToObject(e, "worstShare", gc_num(ov[i].share, "%.6f"));
        cJSON_AddItemToObject(e, "nsPerSegment", gc_num(ov[i].seg_ns, "%.1f"));
        cJSON_AddNumberToObject(e, "processesOver", (double)ov[i].procs);
        cJSON_AddItemToArray(ro, e);
    }
    free(ov);
    free(procs);
    return o;
}
