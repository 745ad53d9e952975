/*
 * gate_baseline.c - the second verdict of a run: subject A against a baseline revision of
 * itself ("<A>@<rev>", built by tools/baseline.c and measured in the same processes).
 *
 * gate_eval.c computes the per-process ratios A / baseline exactly as it does for a peer
 * (res->blines, the baseline's own thresholds); here they become two answers:
 *   no regression  every gated row (sync rows included) on every backend has median ratio
 *                  <= baselineMedian (1.02) and worst <= baselineWorst (1.05) and, where the
 *                  instruction meter ran, instructions per op A / baseline <= baselineInstructions
 *                  (1.005); any row beyond is a regression, named.
 *   improved       the rows faster beyond the noise band: median <= 2 - baselineMedian (0.98)
 *                  with every process below 1.00, or instructions <= 2 - baselineInstructions
 *                  (0.995).
 * The baseline verdict is reported (gate.md section, gate-summary.json "baseline"); the exit
 * code stays the peer verdict's (README "Did my change make it faster?").
 */
#include "gate_int.h"

#include "tl_err.h"
#include "tl_fs.h"
#include "tl_json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gate_is_baseline(const gate_config *c, const char *subject)
{
    size_t n = strlen(c->subject);
    return subject && !strncmp(subject, c->subject, n) && subject[n] == '@' && subject[n + 1];
}

int gate_row_gated(const gate_config *c, const char *suite, const char *row)
{
    const gate_suite_cfg *sc = gate_suite_find(c, suite);
    if (!sc || !sc->gated) return 0;
    for (int p = 0; p < sc->nreport_only; p++)
        if (gate_pattern_match(row, sc->report_only[p])) return 0;
    return 1;
}

int gb_time_kind(const gate_config *c, double median, double worst)
{
    if (!isfinite(median) || !isfinite(worst)) return GB_NA;
    if (median > c->base_median || worst > c->base_worst) return GB_REGRESSION;
    if (median <= 2 - c->base_median && worst < 1.0) return GB_IMPROVED;
    return GB_SAME;
}

int gb_instr_kind(const gate_config *c, double ratio)
{
    if (!isfinite(ratio) || ratio <= 0) return GB_NA;
    if (ratio > c->base_instr) return GB_REGRESSION;
    if (ratio <= 2 - c->base_instr) return GB_IMPROVED;
    return GB_SAME;
}

const char *gb_kind_name(int k)
{
    return k == GB_REGRESSION ? "regression" : k == GB_IMPROVED ? "improved" : k == GB_SAME ? "same" : "NA";
}

/* irPerOp of `subject` in row `row` of a summary (bench_icount.c's format); NaN when absent.
 * A present value that is not a finite positive number refuses the summary (*bad). */
static double ins_of(const cJSON *doc, const char *file, const char *row, const char *subject, int *bad)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "rows")) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
        if (!cJSON_IsString(n) || strcmp(n->valuestring, row)) continue;
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(it, "subjects"), subject);
        if (!cJSON_IsObject(m)) return NAN;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "irPerOp");
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble <= 0) {
            tl_error(file, "irPerOp", "row '%s' subject '%s': not a finite positive number", row, subject);
            *bad = 1;
            return NAN;
        }
        return v->valuedouble;
    }
    return NAN;
}

static cJSON *num6(double v)
{
    if (!isfinite(v)) return cJSON_CreateNull();
    char b[48];
    snprintf(b, sizeof b, "%.6f", v);
    return cJSON_CreateNumber(strtod(b, NULL));
}

static const char *cell(char *buf, size_t len, double v, const char *fmt)
{
    if (!isfinite(v)) snprintf(buf, len, "-");
    else snprintf(buf, len, fmt, v);
    return buf;
}

/* The gated peer line beside a baseline line (same suite, retention, row, backend). */
static const ge_line *peer_of(const gate_result *res, const ge_line *B)
{
    const ge_line *any = NULL;
    for (size_t i = 0; i < res->nlines; i++) {
        const ge_line *L = &res->lines[i];
        if (strcmp(L->suite, B->suite) || strcmp(L->retention, B->retention) || strcmp(L->row, B->row) ||
            strcmp(L->backend, B->backend))
            continue;
        if (L->kind != GL_REPORT) return L;
        if (!any) any = L;
    }
    return any;
}

int gate_baseline_eval(gate_result *res, const char *instr_dir)
{
    const gate_config *c = res->cfg;
    res->base_md = NULL;
    res->base_json = NULL;
    res->base_regressions = 0;
    if (!res->nblines) return 0;
    /* the instruction summaries, by suite and backend, when the meter ran */
    int bad = 0;
    cJSON *j = cJSON_CreateObject();
    cJSON *subs = cJSON_AddArrayToObject(j, "subjects");
    for (size_t i = 0; i < res->nblines; i++) {
        int seen = 0;
        const cJSON *s;
        cJSON_ArrayForEach(s, subs) seen |= !strcmp(s->valuestring, res->blines[i].peer);
        if (!seen) cJSON_AddItemToArray(subs, cJSON_CreateString(res->blines[i].peer));
    }
    cJSON *th = cJSON_AddObjectToObject(j, "thresholds");
    cJSON_AddItemToObject(th, "median", num6(c->base_median));
    cJSON_AddItemToObject(th, "worst", num6(c->base_worst));
    cJSON_AddItemToObject(th, "instructions", num6(c->base_instr));
    cJSON_AddItemToObject(th, "improvedMedian", num6(2 - c->base_median));
    cJSON_AddItemToObject(th, "improvedInstructions", num6(2 - c->base_instr));
    cJSON *rows = cJSON_CreateArray(), *regs = cJSON_CreateArray(), *imps = cJSON_CreateArray();
    gate_buf t = { 0 };
    size_t ngated = 0, nreg = 0, nimp = 0, nins = 0;
    char f[8][32];
    for (size_t i = 0; i < res->nblines && !bad; i++) {
        const ge_line *B = &res->blines[i];
        if (B->kind == GL_REPORT) continue;
        double ia = NAN, ib = NAN;
        if (instr_dir) {
            char path[4200];
            cJSON *doc = NULL;
            snprintf(path, sizeof path, "%s/%s-%s-instructions.json", instr_dir, B->suite, B->backend);
            if (tl_is_file(path)) {
                if (tl_json_load(path, &doc)) { bad = 1; break; }
                ia = ins_of(doc, path, B->row, c->subject, &bad);
                ib = ins_of(doc, path, B->row, B->peer, &bad);
                cJSON_Delete(doc);
            }
        }
        double ir = isfinite(ia) && isfinite(ib) ? ia / ib : NAN;
        nins += isfinite(ir);
        int tk = strcmp(B->result, "NA") ? gb_time_kind(c, B->median, B->worst) : GB_NA;
        int ik = gb_instr_kind(c, ir);
        int reg = tk == GB_REGRESSION || ik == GB_REGRESSION;
        int imp = !reg && (tk == GB_IMPROVED || ik == GB_IMPROVED);
        ngated++;
        nreg += reg;
        nimp += imp;
        char result[64];
        snprintf(result, sizeof result, "%s", reg ? (tk == GB_REGRESSION && ik == GB_REGRESSION ? "REGRESSION (time, instructions)"
                                                     : tk == GB_REGRESSION ? "REGRESSION (time)" : "REGRESSION (instructions)")
                                               : imp ? (tk == GB_IMPROVED && ik == GB_IMPROVED ? "improved (time, instructions)"
                                                        : tk == GB_IMPROVED ? "improved (time)" : "improved (instructions)")
                                               : tk == GB_NA && ik == GB_NA ? "NA" : "no regression");
        const ge_line *P = peer_of(res, B);
        char *row = gate_md_escape(B->row), *peer = gate_md_escape(P ? P->peer : "-"), *base = gate_md_escape(B->peer);
        gate_buf_printf(&t, "| %s | %s | %s | %s %s | %s | %s | %s | %s / %s | %s | %s |\n", B->suite, row, B->backend,
                        peer, cell(f[0], 32, P ? P->median : NAN, "%.4f"), base, cell(f[1], 32, B->median, "%.4f"),
                        cell(f[2], 32, B->worst, "%.4f"), cell(f[3], 32, ia, "%.1f"), cell(f[4], 32, ib, "%.1f"),
                        cell(f[5], 32, ir, "%.4f"), result);
        free(row);
        free(peer);
        free(base);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "suite", B->suite);
        cJSON_AddStringToObject(o, "retention", B->retention);
        cJSON_AddStringToObject(o, "row", B->row);
        cJSON_AddStringToObject(o, "backend", B->backend);
        cJSON_AddStringToObject(o, "baseline", B->peer);
        cJSON_AddItemToObject(o, "median", num6(B->median));
        cJSON_AddItemToObject(o, "worst", num6(B->worst));
        cJSON_AddItemToObject(o, "instructionsPerOp", num6(ia));
        cJSON_AddItemToObject(o, "baselineInstructionsPerOp", num6(ib));
        cJSON_AddItemToObject(o, "instructionsRatio", num6(ir));
        cJSON_AddStringToObject(o, "time", gb_kind_name(tk));
        cJSON_AddStringToObject(o, "instructions", gb_kind_name(ik));
        cJSON_AddStringToObject(o, "result", reg ? "regression" : imp ? "improved" : tk == GB_NA && ik == GB_NA ? "NA" : "no regression");
        if (reg) cJSON_AddItemToArray(regs, cJSON_Duplicate(o, 1));
        if (imp) cJSON_AddItemToArray(imps, cJSON_Duplicate(o, 1));
        cJSON_AddItemToArray(rows, o);
    }
    if (bad) {
        free(t.p);
        cJSON_Delete(rows);
        cJSON_Delete(regs);
        cJSON_Delete(imps);
        cJSON_Delete(j);
        return 1;
    }
    const char *verdict = !ngated ? "no data" : nreg ? "regression" : "no regression";
    cJSON_AddStringToObject(j, "verdict", verdict);
    cJSON *cnt = cJSON_AddObjectToObject(j, "counts");
    cJSON_AddNumberToObject(cnt, "gated", (double)ngated);
    cJSON_AddNumberToObject(cnt, "regressions", (double)nreg);
    cJSON_AddNumberToObject(cnt, "improved", (double)nimp);
    cJSON_AddNumberToObject(cnt, "withInstructions", (double)nins);
    cJSON_AddBoolToObject(j, "affectsExitCode", 0);
    cJSON_AddItemToObject(j, "regressions", regs);
    cJSON_AddItemToObject(j, "improved", imps);
    cJSON_AddItemToObject(j, "rows", rows);

    gate_buf m = { 0 };
    char *a = gate_md_escape(c->subject);
    gate_buf_printf(&m, "## Against the baseline revision: %s\n\n", nreg ? "REGRESSION" : ngated ? "no regression" : "no data");
    const cJSON *s;
    cJSON_ArrayForEach(s, subs) {
        char *e = gate_md_escape(s->valuestring);
        gate_buf_printf(&m, "Baseline **%s**: the same harness, suites and player shell, its own runtime, measured in the\n"
                            "same processes as %s (sample by sample, alternating order). ",
                        e, a);
        free(e);
    }
    gate_buf_printf(&m, "Ratio = %s / baseline (below 1.00: the current runtime is faster).\n\n"
                        "%zu gated row(s) x backend: %zu regression(s), %zu improved. No regression: median <= %.3f and\n"
                        "worst <= %.3f on every gated row and, where the instruction meter ran (%zu row(s)), instructions per op\n"
                        "<= %.3f; improved: median <= %.3f with every process below 1.00, or instructions <= %.3f.\n"
                        "This verdict is reported; the exit code is the peer verdict's. Beside it: the gated peer and\n"
                        "its median ratio from the table below.\n\n",
                    a, ngated, nreg, nimp, c->base_median, c->base_worst, nins, c->base_instr, 2 - c->base_median,
                    2 - c->base_instr);
    gate_buf_printf(&m, "| suite | row | backend | peer, median | baseline | median | worst | ins/op (current / baseline) | "
                        "ins ratio | result |\n| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- |\n");
    if (t.p) gate_buf_printf(&m, "%s", t.p);
    else gate_buf_printf(&m, "| - | (no gated row) | - | - | - | - | - | - | - | - |\n");
    gate_buf_printf(&m, "\n");
    free(a);
    free(t.p);
    res->base_md = m.p;
    res->base_json = j;
    res->base_regressions = nreg;
    return 0;
}
