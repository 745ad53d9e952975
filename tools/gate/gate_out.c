/* gate_out.c - gate.md, gate-summary.json, gate-chart.svg (gate_chart.c) and
 * gate-chart-full.svg; byte-deterministic. */
#include "gate_int.h"

#include "tl_err.h"
#include "tl_fs.h"
#include "tl_json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *gate_verdict_name(int code)
{
    return code == GATE_PASS ? "PASS" : code == GATE_FAIL ? "FAIL" : code == GATE_INVALID ? "INVALID" : "USAGE";
}

int gate_exit_code(int verdict, const char *baseline)
{
    if (verdict != GATE_PASS && verdict != GATE_FAIL) return verdict; /* INVALID, USAGE */
    if (!baseline) return verdict;
    if (!strcmp(baseline, "regression")) return verdict == GATE_PASS ? GATE_REGRESSION : GATE_REGRESSION_AND_FAIL;
    if (!strcmp(baseline, "no regression")) return verdict;
    return GATE_INVALID; /* "no data", "not judged", or a verdict this build does not know */
}

int gate_summary_baseline_of(const cJSON *summary, char *buf, size_t n)
{
    buf[0] = 0;
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(summary, "baseline");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(b, "verdict");
    int bad = b && !(cJSON_IsString(v) && strlen(v->valuestring) < n);
    if (cJSON_IsString(v) && !bad) snprintf(buf, n, "%s", v->valuestring);
    return bad;
}

int gate_summary_baseline(const char *summary_path, char *buf, size_t n)
{
    cJSON *d = NULL;
    buf[0] = 0;
    if (!tl_is_file(summary_path) || tl_json_load(summary_path, &d)) return 1;
    int bad = gate_summary_baseline_of(d, buf, n);
    cJSON_Delete(d);
    return bad;
}

static const char *fx(char *buf, double v, const char *fmt)
{
    if (isnan(v)) return "NA";
    snprintf(buf, 32, fmt, v);
    return buf;
}

/* Retained bytes: a negative delta is memory released, not retention. */
static const char *fx_retained(char *buf, double v)
{
    if (isnan(v)) return "NA";
    if (v < 0) snprintf(buf, 32, "%.0f (released)", v);
    else snprintf(buf, 32, "%.0f", v);
    return buf;
}

static cJSON *jnum(double v, const char *fmt)
{
    if (isnan(v) || isinf(v)) return cJSON_CreateNull();
    char b[64];
    snprintf(b, sizeof b, fmt, v);
    return cJSON_CreateRaw(b);
}

/* Report text for gate.md (gate_md_escape), from a ring of buffers so one gate_buf_printf can
 * hold several; the ring is freed by md_done(). */
static char *md_ring[16];
static unsigned md_next;
static const char *M(const char *s)
{
    unsigned k = md_next++ % 16;
    free(md_ring[k]);
    md_ring[k] = gate_md_escape(s ? s : "-");
    return md_ring[k];
}
static void md_done(void)
{
    for (unsigned k = 0; k < 16; k++) {
        free(md_ring[k]);
        md_ring[k] = NULL;
    }
}

static const char *kind_name(int k) { return k == GL_SYNC ? "sync" : k == GL_GATED ? "gated" : "report-only"; }

static void md_lines(gate_buf *b, const gate_result *res, int report_only)
{
    char f1[32], f2[32], f3[32], f4[32], f5[32];
    const char *last_suite = NULL, *last_ret = NULL;
    for (size_t i = 0; i < res->nlines; i++) {
        const ge_line *L = &res->lines[i];
        if ((L->kind == GL_REPORT) != report_only) continue;
        if (!last_suite || strcmp(last_suite, L->suite) || strcmp(last_ret, L->retention)) {
            last_suite = L->suite;
            last_ret = L->retention;
            gate_buf_printf(b, "\n#### %s (retention %s)\n\n", M(L->suite), M(L->retention));
            gate_buf_printf(b, "| row | vs | backend | process ratios | median | worst | threshold | MW p | effect | %s |\n",
                      report_only ? "why" : "result");
            gate_buf_printf(b, "| --- | --- | --- | --- | ---: | ---: | --- | ---: | ---: | --- |\n");
        }
        gate_buf pr = { 0 };
        for (size_t p = 0; p < L->nproc; p++) gate_buf_printf(&pr, "%s%s", p ? " " : "", fx(f1, L->ratio[p], "%.4f"));
        char thr[64] = "-";
        if (L->kind == GL_SYNC) snprintf(thr, sizeof thr, "median <= %.2f", L->thr_median);
        else if (L->kind == GL_GATED) snprintf(thr, sizeof thr, "median <= %.2f, worst <= %.2f", L->thr_median, L->thr_worst);
        char seq[96] = "";   /* the sequential rule's processes (gate_sequential.c) */
        if (L->seq_added || L->seq_open)
            snprintf(seq, sizeof seq, " (%zu processes, %d added by the sequential rule%s)", L->nproc, L->seq_added,
                     L->seq_open ? ", borderline after the budget" : "");
        gate_buf_printf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s%s%s |\n", M(L->row),
                  M(L->peer), M(L->backend), pr.p ? pr.p : "", fx(f2, L->median, "%.4f"),
                  fx(f3, L->worst, "%.4f"), thr, fx(f4, L->mw.p, "%.3g"), fx(f5, L->mw.effect, "%+.3f"),
                  report_only ? (strcmp(L->result, "NA") ? L->why : "NA") : L->result,
                  gate_line_borderline(L) ? " (borderline)" : "", seq);
        free(pr.p);
    }
    if (!last_suite) gate_buf_printf(b, "\n(none)\n");
}

/* The gated set as configured (the reports' own flags are checked against it, never trusted). */
static void md_gated_set(gate_buf *b, const gate_config *c)
{
    gate_buf_printf(b, "## The gated set (from the gate's configuration)\n\n"
                 "A row is gated only where %s and the peer both run their own library's code for it.\n\n",
              M(c->subject));
    gate_buf_printf(b, "| suite | gated | report-only rows (pattern) | lower-bound code (peer: rows) |\n| --- | --- | --- | --- |\n");
    for (int i = 0; i < c->nsuites; i++) {
        const gate_suite_cfg *s = &c->suites[i];
        gate_buf ro = { 0 }, lb = { 0 };
        for (int k = 0; k < s->nreport_only; k++) gate_buf_printf(&ro, "%s`%s`", k ? ", " : "", M(s->report_only[k]));
        for (int k = 0; k < s->nlower; k++)
            gate_buf_printf(&lb, "%s%s: `%s`", k ? ", " : "", M(s->lower_peer[k]), M(s->lower_row[k]));
        gate_buf_printf(b, "| %s | %s | %s | %s |\n", M(s->name), s->gated ? "yes" : "no (report-only suite)",
                  ro.p ? ro.p : "-", lb.p ? lb.p : "-");
        free(ro.p);
        free(lb.p);
    }
    gate_buf pe = { 0 }, rr = { 0 };
    for (int k = 0; k < c->nreport_only_peers; k++) gate_buf_printf(&pe, "%s%s", k ? ", " : "", M(c->report_only_peers[k]));
    for (int k = 0; k < c->nreport_only_retention; k++)
        gate_buf_printf(&rr, "%s%s", k ? ", " : "", M(c->report_only_retention[k]));
    gate_buf_printf(b, "\nLower bounds (report-only, shown as the distance to the lower bound): %s. "
                 "Report-only retention: %s.\n\n", pe.p ? pe.p : "none", rr.p ? rr.p : "none");
    free(pe.p);
    free(rr.p);
}

/* 1 when the AOT player's worst process allocated less per op than the JIT player's, at the
 * precision gate.md prints (4 decimals of bytes, 6 of calls): a difference too small to print
 * is not one a reader could see or act on. */
static int aot_allocates_less(const ge_xb *X)
{
    return llround(X->aot_bytes * 1e4) < llround(X->jit_bytes * 1e4) ||
           llround(X->aot_allocs * 1e6) < llround(X->jit_allocs * 1e6);
}

/* The allocation section's explanation of the rows whose allocations differ by backend: both
 * players compile the same staged source, so an allocation the JIT performs and the AOT does
 * not was removed by clang. LLVM may delete a malloc/free pair whose every use it sees (the
 * allocation is not observable, so C's as-if rule allows it); tcc compiles each call as
 * written. Without this a reader sees 0 B/op on one backend and 8 on the other and suspects
 * the counter. */
static void md_backend_allocs(gate_buf *b, const gate_result *res)
{
    char f1[32], f2[32], f3[32], f4[32];
    size_t n = 0;
    for (size_t i = 0; i < res->nxb; i++) {
        const ge_xb *X = &res->xb[i];
        if (!aot_allocates_less(X)) continue;
        if (!n++)
            gate_buf_printf(b, "\nAllocations that differ by backend (every subject; worst process per backend). Both "
                               "players run\nthe same source: where AOT allocates less, clang removed the allocation.\n\n");
        gate_buf_printf(b, "- %s / %s / %s / **%s**: AOT %s B/op (%s allocs/op), JIT %s B/op (%s allocs/op): the AOT "
                           "compiler removed an allocation that the JIT performs (clang elided a malloc/free pair, "
                           "which it may do for a pair it can see; tcc does not).\n",
                        M(X->suite), M(X->retention), M(X->row), M(X->subject), fx(f1, X->aot_bytes, "%.4f"),
                        fx(f2, X->aot_allocs, "%.6f"), fx(f3, X->jit_bytes, "%.4f"), fx(f4, X->jit_allocs, "%.6f"));
    }
    if (!n)
        gate_buf_printf(b, "\nAllocations by backend: no row allocates less on AOT than on JIT (the AOT compiler removed "
                           "no allocation that the JIT performs).\n");
}

static char *render_md(const gate_result *res)
{
    const gate_config *c = res->cfg;
    gate_buf b = { 0 };
    char f1[32], f2[32], f3[32];
    gate_buf_printf(&b, "# Gate: %s\n\n", gate_verdict_name(res->verdict));
    gate_buf_printf(&b, "![the gated rows at a glance](gate-chart.svg)\n\n"
                  "Every row, report-only ones included: [gate-chart-full.svg](gate-chart-full.svg).\n\n");
    gate_buf_printf(&b, "Subject **%s** against its peers; ratio = %s's statistic / the peer's (below 1.00: %s is faster).\n"
                  "Per process: primary uses the ratio of means of per-sample ns/op, the other suites the ratio of\n"
                  "medians. Across the processes of a backend: the median and the worst (largest) ratio.\n\n",
              M(c->subject), M(c->subject), M(c->subject));
    gate_buf_printf(&b, "Thresholds: synchronous primary rows median <= %.2f; every other gated row median <= %.2f and worst <= %.2f;\n"
                  "%s; %d gated process(es) per suite and backend.\n\n",
              c->sync_median, c->median, c->worst,
              c->alloc_check ? "subject A allocates 0 bytes per op in steady state" : "allocations report-only",
              c->processes);
    gate_buf_printf(&b, "Gated rows: %zu (%zu pass, %zu fail); report-only rows: %zu; NA: %zu.\n\n", res->n_gated, res->n_pass,
              res->n_fail, res->n_report, res->n_na);
    if (res->ninvalid) {
        gate_buf_printf(&b, "## INVALID\n\n");
        for (size_t i = 0; i < res->ninvalid; i++) gate_buf_printf(&b, "- %s\n", M(res->invalid[i]));
        gate_buf_printf(&b, "\n");
    }
    if (res->base_md) gate_buf_printf(&b, "%s", res->base_md); /* gate_baseline.c */
    md_gated_set(&b, c);
    gate_buf_printf(&b, "## Gated rows\n");
    md_lines(&b, res, 0);
    gate_buf_printf(&b, "\nBorderline: a threshold lies within the row's noise band (|median - threshold| <= median x\n"
                  "spread, or the same for the worst ratio; spread = worst/best process ratio - 1): its verdict\n"
                  "can flip between two attempts of the same code.\n");
    char *seq = gate_seq_md(res); /* gate_sequential.c; NULL when the rule did not run */
    if (seq) gate_buf_printf(&b, "%s", seq);
    free(seq);
    gate_buf_printf(&b, "\nMW p: Mann-Whitney U on the pooled per-sample ns/op of the backend's processes (normal\n"
                  "approximation, tie and continuity correction, two-sided). Effect: rank-biserial correlation,\n"
                  "+1 when every %s sample is faster than every peer sample.\n", M(c->subject));
    gate_buf_printf(&b, "\n## Allocation rows (%s, steady state)\n\n", M(c->subject));
    gate_buf_printf(&b, "| suite | row | backend | bytes/op (worst process) | allocs/op | retained bytes (worst sample, timed) | result |\n");
    gate_buf_printf(&b, "| --- | --- | --- | ---: | ---: | ---: | --- |\n");
    for (size_t i = 0; i < res->nallocs; i++) {
        const ge_alloc *A = &res->allocs[i];
        gate_buf_printf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", M(A->suite), M(A->row), M(A->backend),
                  fx(f1, A->bytes_per_op, "%.4f"), fx(f2, A->allocs_per_op, "%.6f"), fx_retained(f3, A->retained),
                  A->result);
    }
    if (!res->nallocs) gate_buf_printf(&b, "| - | (none) | - | - | - | - | - |\n");
    md_backend_allocs(&b, res);
    gate_buf_printf(&b, "\n## Report-only rows\n");
    md_lines(&b, res, 1);
    gate_buf_printf(&b, "\n## AOT/JIT ratio per row and subject\n\n"
                  "Median over processes of each subject's statistic (ns/op); AOT/JIT below 1.00: the AOT player is faster.\n\n");
    gate_buf_printf(&b, "| suite | retention | row | subject | AOT ns/op | JIT ns/op | AOT/JIT |\n| --- | --- | --- | --- | ---: | ---: | ---: |\n");
    for (size_t i = 0; i < res->nxb; i++) {
        const ge_xb *X = &res->xb[i];
        gate_buf_printf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", M(X->suite), M(X->retention), M(X->row),
                  M(X->subject), fx(f1, X->aot, "%.3f"), fx(f2, X->jit, "%.3f"),
                  fx(f3, X->jit > 0 ? X->aot / X->jit : NAN, "%.4f"));
    }
    if (!res->nxb) gate_buf_printf(&b, "| - | - | (no row ran on both backends) | - | - | - | - |\n");
    gate_buf_printf(&b, "\n## Noise screen\n\n");
    if (res->pregate_status)
        gate_buf_printf(&b, "- quiet pre-gate: **%s** (other processes' CPU %s%%)\n", M(res->pregate_status),
                  fx(f1, res->pregate_cpu, "%.1f"));
    else
        gate_buf_printf(&b, "- quiet pre-gate: no quiet-pregate.json\n");
    size_t busy = 0;
    for (size_t i = 0; i < res->nobs; i++) busy += strcmp(res->obs[i].status, "quiet") != 0;
    gate_buf_printf(&b, "- processes observed: %zu, not quiet: %zu\n", res->nobs, busy);
    for (size_t i = 0; i < res->nobs; i++)
        if (strcmp(res->obs[i].status, "quiet"))
            gate_buf_printf(&b, "  - %s: %s (other CPU %s%%)\n", M(res->obs[i].process), M(res->obs[i].status),
                      fx(f1, res->obs[i].cpu, "%.1f"));
    size_t noisy = 0;
    for (size_t i = 0; i < res->nlines; i++) {
        const ge_line *L = &res->lines[i];
        if (L->kind == GL_REPORT) continue;
        if (L->spread > c->noise_spread || L->cv > c->noise_cv) {
            if (!noisy++)
                gate_buf_printf(&b, "- gated rows with process-ratio spread > %.0f%% or within-process CV > %.0f%%:\n",
                          c->noise_spread * 100, c->noise_cv * 100);
            gate_buf_printf(&b, "  - %s / %s / %s vs %s: spread %.1f%%, CV %.1f%%\n", M(L->suite), M(L->row),
                      M(L->backend), M(L->peer), L->spread * 100, L->cv * 100);
        }
    }
    if (!noisy) gate_buf_printf(&b, "- no gated row above the spread (%.0f%%) or CV (%.0f%%) limits\n", c->noise_spread * 100,
                          c->noise_cv * 100);
    char *clk = gate_clock_md(res); /* gate_clock.c */
    gate_buf_printf(&b, "%s", clk);
    free(clk);
    if (res->instr_md) gate_buf_printf(&b, "%s", res->instr_md);
    gate_buf_printf(&b, "\n## Inputs\n\n| file | kind | suite | backend | retention | build id | SHA-256 |\n| --- | --- | --- | --- | --- | --- | --- |\n");
    for (size_t i = 0; i < res->ninputs; i++) {
        const ge_input *in = &res->inputs[i];
        const gr_report *r = NULL;
        for (size_t k = 0; k < res->nreps; k++)
            if (!strcmp(res->reps[k].file, in->file) && !strcmp(in->kind, "report")) r = &res->reps[k];
        char bid[13];
        snprintf(bid, sizeof bid, "%s", r && r->build_id && r->build_id[0] ? r->build_id : "-");
        gate_buf_printf(&b, "| %s | %s | %s | %s | %s | %s | `%s` |\n", M(in->file), in->kind, M(r ? r->suite : NULL),
                  M(r ? r->backend : NULL), M(r ? r->retention : NULL), M(bid), in->sha256);
    }
    md_done();
    return b.p;
}

static cJSON *render_json(const gate_result *res)
{
    const gate_config *c = res->cfg;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "schemaVersion", 1);
    cJSON_AddStringToObject(o, "kind", "tandem-gate-summary");
    cJSON_AddStringToObject(o, "verdict", gate_verdict_name(res->verdict));
    cJSON_AddStringToObject(o, "subject", c->subject);
    cJSON *t = cJSON_AddObjectToObject(o, "thresholds");
    cJSON_AddItemToObject(t, "syncMedian", jnum(c->sync_median, "%.6f"));
    cJSON_AddItemToObject(t, "median", jnum(c->median, "%.6f"));
    cJSON_AddItemToObject(t, "worst", jnum(c->worst, "%.6f"));
    cJSON_AddItemToObject(t, "allocBytesPerOp", c->alloc_check ? jnum(c->alloc_max, "%.6f") : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "config", gate_config_json(c));
    cJSON *inv = cJSON_AddArrayToObject(o, "invalid");
    for (size_t i = 0; i < res->ninvalid; i++) cJSON_AddItemToArray(inv, cJSON_CreateString(res->invalid[i]));
    cJSON *cnt = cJSON_AddObjectToObject(o, "counts");
    cJSON_AddNumberToObject(cnt, "gated", (double)res->n_gated);
    cJSON_AddNumberToObject(cnt, "passed", (double)res->n_pass);
    cJSON_AddNumberToObject(cnt, "failed", (double)res->n_fail);
    cJSON_AddNumberToObject(cnt, "reportOnly", (double)res->n_report);
    cJSON_AddNumberToObject(cnt, "na", (double)res->n_na);
    if (res->base_json) cJSON_AddItemToObject(o, "baseline", cJSON_Duplicate(res->base_json, 1)); /* gate_baseline.c */
    cJSON *sq = gate_seq_json(res); /* gate_sequential.c */
    if (sq) cJSON_AddItemToObject(o, "sequential", sq);
    cJSON *ins = cJSON_AddArrayToObject(o, "inputs");
    for (size_t i = 0; i < res->ninputs; i++) {
        const ge_input *in = &res->inputs[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "file", in->file);
        cJSON_AddStringToObject(e, "kind", in->kind);
        cJSON_AddStringToObject(e, "sha256", in->sha256);
        for (size_t k = 0; k < res->nreps; k++) {
            const gr_report *r = &res->reps[k];
            if (strcmp(r->file, in->file) || strcmp(in->kind, "report")) continue;
            if (r->suite) cJSON_AddStringToObject(e, "suite", r->suite);
            if (r->backend) cJSON_AddStringToObject(e, "backend", r->backend);
            if (r->retention) cJSON_AddStringToObject(e, "retention", r->retention);
            if (r->build_id) cJSON_AddStringToObject(e, "buildId", r->build_id);
            cJSON_AddBoolToObject(e, "completed", r->ok && r->completed && !r->failure);
        }
        cJSON_AddItemToArray(ins, e);
    }
    cJSON *rows = cJSON_AddArrayToObject(o, "rows");
    for (size_t i = 0; i < res->nlines; i++) {
        const ge_line *L = &res->lines[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "suite", L->suite);
        cJSON_AddStringToObject(e, "retention", L->retention);
        cJSON_AddStringToObject(e, "row", L->row);
        cJSON_AddStringToObject(e, "peer", L->peer);
        cJSON_AddStringToObject(e, "backend", L->backend);
        cJSON_AddStringToObject(e, "kind", kind_name(L->kind));
        if (L->why) cJSON_AddStringToObject(e, "reportOnlyReason", L->why);
        cJSON *pr = cJSON_AddArrayToObject(e, "processes");
        for (size_t p = 0; p < L->nproc; p++) {
            cJSON *q = cJSON_CreateObject();
            cJSON_AddStringToObject(q, "report", L->proc[p]);
            cJSON_AddItemToObject(q, "ratio", jnum(L->ratio[p], "%.6f"));
            cJSON_AddItemToArray(pr, q);
        }
        cJSON_AddItemToObject(e, "median", jnum(L->median, "%.6f"));
        cJSON_AddItemToObject(e, "worst", jnum(L->worst, "%.6f"));
        cJSON_AddItemToObject(e, "thresholdMedian", jnum(L->thr_median, "%.6f"));
        cJSON_AddItemToObject(e, "thresholdWorst", jnum(L->thr_worst, "%.6f"));
        cJSON *mw = cJSON_AddObjectToObject(e, "mannWhitney");
        cJSON_AddNumberToObject(mw, "nA", (double)L->mw.n_a);
        cJSON_AddNumberToObject(mw, "nB", (double)L->mw.n_b);
        cJSON_AddItemToObject(mw, "uA", jnum(L->mw.u_a, "%.1f"));
        cJSON_AddItemToObject(mw, "z", jnum(L->mw.z, "%.6f"));
        cJSON_AddItemToObject(mw, "p", jnum(L->mw.p, "%.6f"));
        cJSON_AddItemToObject(mw, "rankBiserial", jnum(L->mw.effect, "%.6f"));
        cJSON_AddItemToObject(e, "spread", jnum(L->spread, "%.6f"));
        cJSON_AddItemToObject(e, "maxCv", jnum(L->cv, "%.6f"));
        cJSON_AddStringToObject(e, "result", L->result);
        if (L->kind != GL_REPORT) {
            cJSON_AddBoolToObject(e, "borderline", gate_line_borderline(L));
            cJSON_AddNumberToObject(e, "processesDecided", (double)L->nproc);
            cJSON_AddNumberToObject(e, "sequentialAdded", L->seq_added);
        }
        cJSON_AddItemToArray(rows, e);
    }
    cJSON *al = cJSON_AddArrayToObject(o, "allocations");
    for (size_t i = 0; i < res->nallocs; i++) {
        const ge_alloc *A = &res->allocs[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "suite", A->suite);
        cJSON_AddStringToObject(e, "retention", A->retention);
        cJSON_AddStringToObject(e, "row", A->row);
        cJSON_AddStringToObject(e, "backend", A->backend);
        cJSON_AddItemToObject(e, "bytesPerOp", jnum(A->bytes_per_op, "%.6f"));
        cJSON_AddItemToObject(e, "allocsPerOp", jnum(A->allocs_per_op, "%.9f"));
        cJSON_AddItemToObject(e, "retainedBytes", jnum(A->retained, "%.0f"));
        cJSON_AddStringToObject(e, "result", A->result);
        cJSON_AddItemToArray(al, e);
    }
    cJSON *xb = cJSON_AddArrayToObject(o, "aotJit");
    for (size_t i = 0; i < res->nxb; i++) {
        const ge_xb *X = &res->xb[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "suite", X->suite);
        cJSON_AddStringToObject(e, "retention", X->retention);
        cJSON_AddStringToObject(e, "row", X->row);
        cJSON_AddStringToObject(e, "subject", X->subject);
        cJSON_AddItemToObject(e, "aotNsPerOp", jnum(X->aot, "%.6f"));
        cJSON_AddItemToObject(e, "jitNsPerOp", jnum(X->jit, "%.6f"));
        cJSON_AddItemToObject(e, "aotOverJit", jnum(X->jit > 0 ? X->aot / X->jit : NAN, "%.6f"));
        cJSON_AddItemToObject(e, "aotBytesPerOp", jnum(X->aot_bytes, "%.6f"));
        cJSON_AddItemToObject(e, "jitBytesPerOp", jnum(X->jit_bytes, "%.6f"));
        cJSON_AddItemToObject(e, "aotAllocsPerOp", jnum(X->aot_allocs, "%.9f"));
        cJSON_AddItemToObject(e, "jitAllocsPerOp", jnum(X->jit_allocs, "%.9f"));
        cJSON_AddBoolToObject(e, "aotRemovedAllocations", aot_allocates_less(X));
        cJSON_AddItemToArray(xb, e);
    }
    cJSON *n = cJSON_AddObjectToObject(o, "noise");
    if (res->pregate_status) {
        cJSON_AddStringToObject(n, "pregate", res->pregate_status);
        cJSON_AddItemToObject(n, "pregateOtherCpuPercent", jnum(res->pregate_cpu, "%.3f"));
    } else {
        cJSON_AddNullToObject(n, "pregate");
    }
    cJSON *ob = cJSON_AddArrayToObject(n, "processes");
    for (size_t i = 0; i < res->nobs; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "process", res->obs[i].process);
        cJSON_AddStringToObject(e, "status", res->obs[i].status);
        cJSON_AddItemToObject(e, "otherCpuPercent", jnum(res->obs[i].cpu, "%.3f"));
        cJSON_AddItemToArray(ob, e);
    }
    cJSON_AddItemToObject(o, "clock", gate_clock_json(res)); /* gate_clock.c */
    cJSON_AddStringToObject(o, "report", "gate.md");
    cJSON_AddStringToObject(o, "chart", "gate-chart.svg");
    cJSON_AddStringToObject(o, "chartFull", "gate-chart-full.svg");
    return o;
}

static void xml(gate_buf *b, const char *s)
{
    char *t = gate_xml_escape(s);
    gate_buf_printf(b, "%s", t);
    free(t);
}

/* Horizontal chart: one line per (row, peer, backend) of the gated and report-only rows;
 * dots = process ratios, bar = median; threshold lines at the median and worst limits. */
static char *render_svg(const gate_result *res)
{
    const gate_config *c = res->cfg;
    gate_buf b = { 0 };
    const double left = 430, plot = 440, lh = 18, top = 56;
    double xmax = 1.25;
    for (size_t i = 0; i < res->nlines; i++)
        for (size_t p = 0; p < res->lines[i].nproc; p++)
            if (res->lines[i].ratio[p] > xmax && res->lines[i].ratio[p] < 4) xmax = res->lines[i].ratio[p];
    xmax = ceil(xmax * 4) / 4;
    size_t n = res->nlines;
    double height = top + (n ? n : 1) * lh + 40, width = left + plot + 90;
#define X(v) (left + plot * ((v) > xmax ? xmax : (v) < 0 ? 0 : (v)) / xmax)
    gate_buf_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    gate_buf_printf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                  "font-family=\"sans-serif\" font-size=\"11\">\n", width, height, width, height);
    gate_buf_printf(&b, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", width, height);
    gate_buf_printf(&b, "<text x=\"8\" y=\"18\" font-size=\"14\" font-weight=\"bold\">Gate %s: ", gate_verdict_name(res->verdict));
    xml(&b, c->subject);
    gate_buf_printf(&b, " / peer, per row and backend</text>\n");
    gate_buf_printf(&b, "<text x=\"8\" y=\"34\" fill=\"#555\">dots: process ratios; bar: median; red: worst limit %.2f; "
                  "orange: median limit %.2f; grey rows: report-only</text>\n", c->worst, c->median);
    for (int k = 0; k <= (int)(xmax * 4); k++) {
        double v = k / 4.0;
        gate_buf_printf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>\n", X(v), top - 6, X(v),
                  top + n * lh);
        gate_buf_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#555\">%.2f</text>\n", X(v), top - 10, v);
    }
    for (size_t i = 0; i < n; i++) {
        const ge_line *L = &res->lines[i];
        double y = top + i * lh + lh / 2;
        int ro = L->kind == GL_REPORT;
        const char *col = !strcmp(L->backend, "aot") ? "#1f77b4" : !strcmp(L->backend, "jit") ? "#2ca02c" : "#9467bd";
        if (i % 2) gate_buf_printf(&b, "<rect x=\"0\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" fill=\"#f7f7f7\"/>\n", y - lh / 2, width, lh);
        gate_buf_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"%s\">", left - 6, y + 4, ro ? "#888" : "#000");
        xml(&b, L->suite);
        gate_buf_printf(&b, ": ");
        xml(&b, L->row);
        gate_buf_printf(&b, " vs ");
        xml(&b, L->peer);
        gate_buf_printf(&b, " [");
        xml(&b, L->backend);
        gate_buf_printf(&b, "]</text>\n");
        if (!isnan(L->median))
            gate_buf_printf(&b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" opacity=\"%s\"/>\n", left,
                      y - 4, X(L->median) - left, 8.0, col, ro ? "0.25" : "0.55");
        for (size_t p = 0; p < L->nproc; p++)
            if (!isnan(L->ratio[p]))
                gate_buf_printf(&b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", X(L->ratio[p]), y, col);
        gate_buf_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">%s</text>\n", left + plot + 8, y + 4,
                  !strcmp(L->result, "FAIL") ? "#d62728" : ro ? "#888" : "#000", L->result);
    }
    if (!n) gate_buf_printf(&b, "<text x=\"%.1f\" y=\"%.1f\">no rows</text>\n", left, top + 12);
    gate_buf_printf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\" stroke-width=\"1.5\"/>\n",
              X(c->worst), top - 6, X(c->worst), top + n * lh);
    gate_buf_printf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ff7f0e\" stroke-width=\"1.5\" "
                  "stroke-dasharray=\"4 3\"/>\n", X(c->median), top - 6, X(c->median), top + n * lh);
    gate_buf_printf(&b, "<text x=\"8\" y=\"%.1f\" fill=\"#555\">blue: aot, green: jit; ratios above %.2f are drawn at the edge</text>\n",
              top + n * lh + 24, xmax);
    gate_buf_printf(&b, "</svg>\n");
#undef X
    return b.p;
}

static int put(const char *dir, const char *name, const char *text)
{
    char *p = tl_join(dir, name);
    int e = tl_write_atomic(p, text, strlen(text), 0644);
    if (e) tl_error(p, NULL, "cannot write: %s", tl_strerror(e));
    free(p);
    return e ? 1 : 0;
}

int gate_write_outputs(const char *out_dir, const gate_result *res)
{
    int e = tl_mkdirs(out_dir);
    if (e) { tl_error(out_dir, "--out", "cannot create: %s", tl_strerror(e)); return 1; }
    char *m = render_md(res), *s = gate_chart_summary_svg(res), *full = render_svg(res);
    cJSON *j = render_json(res);
    char *jt = cJSON_Print(j);
    cJSON_Delete(j);
    size_t l = strlen(jt);
    jt = realloc(jt, l + 2);
    jt[l] = '\n';
    jt[l + 1] = 0;
    int rc = put(out_dir, "gate.md", m) | put(out_dir, "gate-summary.json", jt) | put(out_dir, "gate-chart.svg", s) |
             put(out_dir, "gate-chart-full.svg", full);
    free(m);
    free(s);
    free(full);
    free(jt);
    return rc;
}
