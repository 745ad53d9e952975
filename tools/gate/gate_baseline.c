/*
 * gate_baseline.c - the second verdict of a run: subject A against a baseline revision of
 * itself ("<A>@<rev>", built by tools/baseline.c and measured in the same processes).
 *
 * gate_lines.c computes the per-process ratios A / baseline exactly as it does for a peer
 * (res->blines, the baseline's own thresholds, each process's layout = its build's layout
 * seed and its load order, and each side's own statistic);
 * here each gated row (sync rows included) x backend gets one result from two arms:
 *   regression     instructions per op A / baseline > baselineInstructions (1.005), or time
 *                  grown in every layout beyond the noise: each layout's median ratio >
 *                  baselineMedian (1.02) and > 1 + the band (the larger of the row's process
 *                  spread and the same code's layout spread, both sides'; that spread of each
 *                  side's time over the process's subjects built once, "baselineSameCodeSpread"
 *                  "peers" (default), or of its own time, "own"), no process below 1.00 (time_arm);
 *   improved       symmetrically: instructions <= 2 - baselineInstructions, or every layout's
 *                  median <= 2 - baselineMedian and < 1 / (1 + band), every process below 1.00;
 *   layout         a time ratio the one-layout rule (median > 1.02 or worst > 1.05) would have
 *                  called a regression (or improvement) but that is not beyond the band in
 *                  every layout; or, with one layout measured, any time verdict (no spread
 *                  between layouts to exceed: only the instruction arm decides). Never a regression (issue 42: identical code at two
 *                  addresses differs by up to 10%, the same way in every process of a layout);
 *   no regression  otherwise. "decided by" names the arm(s).
 * Beside the verdict, the time arm's reach (reach_of): how far a row's time had to grow in
 * every layout to count, max(baselineMedian, 1 + band), the median row's and the range.
 * The baseline verdict is reported (gate.md section, gate-summary.json "baseline"); a
 * regression has its own exit code, 4 or 5 (gate_exit_code, README "Exit codes").
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
    return k == GB_REGRESSION ? "regression" : k == GB_IMPROVED ? "improved" : k == GB_SAME ? "same"
         : k == GB_LAYOUT ? "layout" : k == GB_BUSY ? "busy" : "NA";
}

/* The time arm of one row over its layouts (a process's layout is its build's layout seed
 * and its load order: att_player_argv, att_layouts.c): per layout the median of its
 * processes' ratios, and of each side's own time. Identical code at two addresses differs
 * by up to 10% (issue 42), the same way in every process of one layout, so one layout's
 * verdict is a verdict on placement. The band a time move must leave is the larger of the
 * process noise (the row's spread over its processes) and the same code's layout spread
 * (per side, its highest layout median over its lowest; the two sides' combined,
 * (1 + a)(1 + b) - 1: each side is placed independently in each layout, so placement alone
 * moves the ratio of identical code by up to both sides' spreads): time regressed
 * only when every layout's median ratio is beyond baselineMedian and that band and no
 * process saw the current runtime faster; improved symmetrically. A ratio that the
 * one-layout rule (median, worst) would have called a regression or an improvement but
 * that fails this test is "layout". Processes observed busy are left out; when every one
 * is, the time arm cannot decide ("busy"). Each layout's side medians come from other
 * processes, so a host that moves whole processes would put that movement in the same
 * code's spread; with "peers" (default) each side's time is first divided by its process's
 * reference (stat_ref), which the host moves alike, and only the placement's spread is left. */
typedef struct gb_time {
    int kind, nlayouts;
    double lo, hi;          /* lowest and highest layout median ratio */
    double spread;          /* hi / lo - 1: the ratio's layout spread (0 with one layout) */
    double code_spread;     /* the same code's layout spread, both sides' combined (0 with one) */
    int against_peers;      /* code_spread measured against the subjects built once (stat_ref) */
    double reach;           /* what each layout median had to exceed: max(baselineMedian, 1 + band)
                             * (NaN below 2 layouts, where time decides nothing) */
} gb_time;

/* lo/hi of one layout median, and the spread hi / lo - 1 they make (NaN without both). */
static void lohi(double m, double *lo, double *hi)
{
    if (!isfinite(m)) return;
    if (isnan(*lo) || m < *lo) *lo = m;
    if (isnan(*hi) || m > *hi) *hi = m;
}

static double lohi_spread(double lo, double hi)
{
    return lo > 0 && isfinite(hi) ? hi / lo - 1 : NAN;
}

static gb_time time_arm(const gate_result *res, const ge_line *B)
{
    const gate_config *c = res->cfg;
    gb_time t = { GB_NA, 0, NAN, NAN, NAN, NAN, 0, NAN };
    if (!strcmp(B->result, "NA") || !B->nproc) return t;
    /* "peers": each side's time over its process's reference, where every process has one */
    t.against_peers = c->base_spread_peers && B->stat_ref;
    for (size_t p = 0; p < B->nproc && t.against_peers; p++)
        t.against_peers = isnan(B->ratio[p]) || (isfinite(B->stat_ref[p]) && B->stat_ref[p] > 0);
    double pmin = NAN, pmax = NAN, alo = NAN, ahi = NAN, blo = NAN, bhi = NAN;
    size_t nbusy = 0;
    double *v = malloc(3 * B->nproc * sizeof *v), *va = v + B->nproc, *vb = va + B->nproc;
    for (size_t first = 0; first < B->nproc; first++) {
        int key = B->layout ? B->layout[first] : 0, again = 0;
        for (size_t e = 0; e < first && !again; e++) again = B->layout && B->layout[e] == key;
        if (again) continue; /* each layout once, from its first process */
        size_t n = 0, na = 0, nb = 0;
        for (size_t p = first; p < B->nproc; p++) {
            double r = B->ratio[p];
            if (isnan(r) || (B->layout ? B->layout[p] : 0) != key) continue;
            /* a busy process measured the host (outliers of 5-10x under the mean statistic) */
            if (gate_process_busy(res, B->proc[p])) { nbusy++; continue; }
            v[n++] = r;
            double ref = t.against_peers ? B->stat_ref[p] : 1;
            if (B->stat_a && isfinite(B->stat_a[p])) va[na++] = B->stat_a[p] / ref;
            if (B->stat_b && isfinite(B->stat_b[p])) vb[nb++] = B->stat_b[p] / ref;
            if (isnan(pmin) || r < pmin) pmin = r;
            if (isnan(pmax) || r > pmax) pmax = r;
        }
        if (!n) continue;
        t.nlayouts++;
        lohi(gs_median(v, n), &t.lo, &t.hi);
        if (na) lohi(gs_median(va, na), &alo, &ahi);
        if (nb) lohi(gs_median(vb, nb), &blo, &bhi);
    }
    free(v);
    if (!t.nlayouts && nbusy) { /* every process busy: the time arm cannot decide */
        int one = gb_time_kind(c, B->median, B->worst);
        t.kind = one == GB_REGRESSION || one == GB_IMPROVED ? GB_BUSY : one;
        return t;
    }
    if (!t.nlayouts || !(t.lo > 0)) return t;
    t.spread = t.hi / t.lo - 1;
    double sa = lohi_spread(alo, ahi), sb = lohi_spread(blo, bhi);
    /* an A/A with 4 layouts read 1.050-1.080 on one row where the sides' layouts spread 3.9%
     * and 1.4%: within what the two placements together allow (5.4%), beyond the larger */
    t.code_spread = isnan(sa) ? sb : isnan(sb) ? sa : (1 + sa) * (1 + sb) - 1;
    int one = gb_time_kind(c, B->median, B->worst); /* the one-layout rule, for "layout" */
    /* the process noise: the row's spread over all its processes (worst / best - 1). A move
     * counts only when even the nearer layout is farther from 1.00 than that spread and the
     * same code's layout spread: with three processes a rule on signs alone fires on noise
     * for one row in eight (an A/A on a loaded host: 5 of 58 rows "regressed" at identical
     * instructions) */
    double noise = isfinite(B->spread) && B->spread > 0 ? B->spread : 0;
    double band = isfinite(t.code_spread) && t.code_spread > noise ? t.code_spread : noise;
    double reach = fmax(c->base_median, 1 + band); /* the time arm's reach, said beside the verdict */
    if (t.nlayouts >= 2) t.reach = reach;
    if (t.lo > reach && pmin > 1.0) t.kind = GB_REGRESSION;
    else if (t.hi <= 2 - c->base_median && t.hi < 1 / (1 + band) && pmax < 1.0) t.kind = GB_IMPROVED;
    else t.kind = one == GB_REGRESSION || one == GB_IMPROVED ? GB_LAYOUT : one;
    /* one layout measured (--quick's one round) gives no spread between layouts of the same
     * code, and a time difference counts only beyond it: the time arm alone cannot tell code
     * from placement there (an A/A with one process per suite "regressed" 20 rows) */
    if (t.nlayouts < 2 && (t.kind == GB_REGRESSION || t.kind == GB_IMPROVED)) t.kind = GB_LAYOUT;
    return t;
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

/* The time arm's reach over the rows measured in two or more layouts: how far a row's time
 * had to grow in every layout to count (max(baselineMedian, 1 + band)), the median row's and
 * the range. On a host that moves whole processes the band, and so the reach, widens for
 * every row (scripts/host_noise.py): said beside the verdict, since "no regression" by time
 * alone means only "nothing beyond the reach". */
typedef struct gb_reach {
    size_t rows;
    double median, lowest, highest;   /* NaN without rows */
} gb_reach;

static gb_reach reach_of(const double *v, size_t n)
{
    gb_reach r = { n, gs_median(v, n), NAN, NAN };
    for (size_t i = 0; i < n; i++) {
        if (isnan(r.lowest) || v[i] < r.lowest) r.lowest = v[i];
        if (isnan(r.highest) || v[i] > r.highest) r.highest = v[i];
    }
    return r;
}

static void reach_md(gate_buf *m, const gate_config *c, const gb_reach *r)
{
    if (!r->rows) {
        gate_buf_printf(m, "The time arm's reach: no row was measured in two or more layouts (one round, as `--quick`),\n"
                           "so time decides no row here: only the instruction arm (beyond %.3f) does.\n\n",
                        c->base_instr);
        return;
    }
    gate_buf_printf(m, "The time arm's reach: a row's time had to grow beyond x%.2f in every layout to count (the\n"
                       "median of the %zu row(s) measured in two or more layouts; x%.2f .. x%.2f over them). That is\n"
                       "each row's band on this host and in these processes: a smaller time change reads *layout* or\n"
                       "*no regression*, and only the instruction arm (beyond %.3f) sees it.\n\n",
                    r->median, r->rows, r->lowest, r->highest, c->base_instr);
}

/* gate.md's baseline section up to its table's rows: the verdict, the rule, the reach, the
 * header. n: gated rows, regressions, improved, layout, rows with instructions, rows whose
 * instructions were asked for and are missing (the first of them: first_missing). */
static void baseline_md_head(gate_buf *m, const gate_config *c, const cJSON *subs, const size_t n[7],
                             const char *first_missing, const gb_reach *reach)
{
    char *a = gate_md_escape(c->subject);
    gate_buf_printf(m, "## Against the baseline revision: %s\n\n",
                    n[1] ? "REGRESSION" : !n[0] ? "no data" : n[5] ? "not judged" : "no regression");
    if (!n[1] && n[0] && n[5])
        gate_buf_printf(m, "**Not judged.** The instruction arm was asked for, but %zu gated row(s) have no instruction\n"
                           "counts (the first: %s): the instruction arm failed or its summary is missing. Without it a\n"
                           "change smaller than the time arm's reach (the layout spread column) passes unseen, so *no\n"
                           "regression* is not claimed (exit 1). A regression either arm finds is still one (exit 4 or 5).\n\n",
                        n[5], first_missing);
    const cJSON *s;
    cJSON_ArrayForEach(s, subs) {
        char *e = gate_md_escape(s->valuestring);
        gate_buf_printf(m, "Baseline **%s**: the same harness, suites and player shell, its own runtime, measured in the\n"
                           "same processes as %s (sample by sample, alternating order; the second process of each suite\n"
                           "and backend loads and runs the subjects in reverse order, and with `--layouts K` round r runs\n"
                           "both sides built in layout (r - 1) %% K, a pad before each source from a seed: each\n"
                           "(seed, load order) is one layout). ",
                        e, a);
        free(e);
    }
    gate_buf_printf(m, "Ratio = %s / baseline (below 1.00: the current runtime is faster).\n\n"
                       "%zu gated row(s) x backend: %zu regression(s), %zu improved, %zu layout. One verdict from two\n"
                       "arms: a row regressed when its instructions per op grew beyond %.3f (where the instruction\n"
                       "meter ran: %zu row(s)), or when its time grew in every layout beyond the noise: each layout's\n"
                       "median ratio > %.3f and > 1 + the band, no process below 1.00; the band is the larger of the\n"
                       "row's process spread and the same code's layout spread (per side, its highest layout median\n"
                       "%s over its lowest; the two sides' combined, (1 + a)(1 + b) - 1, as each side is placed on its\n"
                       "own). Improved\n"
                       "symmetrically (instructions <= %.3f, or every layout's median <= %.3f and < 1 / (1 + band),\n"
                       "every process below 1.00). A time ratio beyond median %.3f or worst %.3f that\n"
                       "is not beyond them in every layout, or measured in one layout only, is *layout*: where the\n"
                       "code landed, never a regression.\n"
                       "\"decided by\" names the arm(s). A regression exits 4 (the peers PASS) or 5 (the peers FAIL).\n"
                       "Beside it: the gated peer and its median ratio from the table below.\n\n",
                    a, n[0], n[1], n[2], n[3], c->base_instr, n[4], c->base_median,
                    c->base_spread_peers ? "time over the geometric mean of the subjects built once in its process\n"
                                           "(baselineSameCodeSpread \"peers\": a host that moves whole processes moves them alike)"
                                         : "time",
                    2 - c->base_instr,
                    2 - c->base_median, c->base_median, c->base_worst);
    reach_md(m, c, reach);
    gate_buf_printf(m, "| suite | row | backend | peer, median | baseline | median | worst | layouts: median low .. high | "
                       "layout spread | same code's layout spread | ins/op (current / baseline) | ins ratio | result | "
                       "decided by |\n"
                       "| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n");
    free(a);
}

/* gate-summary.json "baseline": the verdict, the counts, the time arm's reach. n: gated rows,
 * regressions, improved, layout (busy rows included), rows with instructions, rows whose
 * instructions were asked for and are missing, busy rows. */
static void summary_verdict(cJSON *j, const size_t n[7], const gb_reach *rs)
{
    const char *verdict = !n[0] ? "no data" : n[1] ? "regression" : n[5] ? "not judged" : "no regression";
    cJSON_AddStringToObject(j, "verdict", verdict);
    cJSON *cnt = cJSON_AddObjectToObject(j, "counts");
    cJSON_AddNumberToObject(cnt, "gated", (double)n[0]);
    cJSON_AddNumberToObject(cnt, "regressions", (double)n[1]);
    cJSON_AddNumberToObject(cnt, "improved", (double)n[2]);
    cJSON_AddNumberToObject(cnt, "layout", (double)n[3]);
    cJSON_AddNumberToObject(cnt, "busy", (double)n[6]);
    cJSON_AddNumberToObject(cnt, "withInstructions", (double)n[4]);
    cJSON_AddNumberToObject(cnt, "instructionsMissing", (double)n[5]);
    cJSON_AddBoolToObject(j, "affectsExitCode", 1); /* gate_exit_code: 4 / 5 on a regression, 1 on no data
                                                      * or not judged */
    cJSON *tj = cJSON_AddObjectToObject(j, "timeReach"); /* reach_of: rows in 2+ layouts */
    cJSON_AddNumberToObject(tj, "rows", (double)rs->rows);
    cJSON_AddItemToObject(tj, "median", num6(rs->median));
    cJSON_AddItemToObject(tj, "lowest", num6(rs->lowest));
    cJSON_AddItemToObject(tj, "highest", num6(rs->highest));
}

int gate_baseline_eval(gate_result *res, const char *instr_dir, int instr_expected)
{
    const gate_config *c = res->cfg;
    res->base_md = NULL;
    res->base_json = NULL;
    res->base_regressions = 0;
    if (!res->nblines) return 0;
    double *reach = malloc(res->nblines * sizeof *reach); /* the time arm's reach per row */
    if (!reach) return 1;
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
    size_t ngated = 0, nreg = 0, nimp = 0, nins = 0, nlay = 0, nbusy = 0, nmiss = 0, nreach = 0;
    char first_missing[160] = "";
    char f[10][32];
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
        int missing = instr_expected && !isfinite(ir); /* asked for, not there */
        if (missing && !nmiss++) {
            char *er = gate_md_escape(B->row); /* for gate.md: a row may hold '<' */
            snprintf(first_missing, sizeof first_missing, "%s / %s [%s]", B->suite, er, B->backend);
            free(er);
        }
        gb_time tm = time_arm(res, B);
        int tk = tm.kind, ik = gb_instr_kind(c, ir);
        double tr = tm.reach;
        if (isfinite(tr)) reach[nreach++] = tr;
        /* one verdict from two arms: instructions beyond their limit, or time beyond the
         * noise in every layout; a time move inside the layout spread is never a regression */
        int reg = tk == GB_REGRESSION || ik == GB_REGRESSION;
        int imp = !reg && (tk == GB_IMPROVED || ik == GB_IMPROVED);
        int lay = !reg && !imp && (tk == GB_LAYOUT || tk == GB_BUSY);
        ngated++;
        nreg += reg;
        nimp += imp;
        nlay += lay;
        nbusy += lay && tk == GB_BUSY;
        int want = reg ? GB_REGRESSION : imp ? GB_IMPROVED : -1; /* the arm(s) that decided it */
        const char *by = want >= 0 ? (tk == want && ik == want ? "time, instructions" : tk == want ? "time" : "instructions")
                       : lay ? (tk == GB_BUSY ? "busy host" : "layout") : isfinite(ir) && tk != GB_NA ? "time, instructions"
                       : tk != GB_NA ? "time" : isfinite(ir) ? "instructions" : "-";
        const char *rname = reg ? "regression" : imp ? "improved" : lay ? gb_kind_name(tk) : tk == GB_NA && ik == GB_NA ? "NA"
                                                                                 : "no regression";
        const ge_line *P = peer_of(res, B);
        char *row = gate_md_escape(B->row), *peer = gate_md_escape(P ? P->peer : "-"), *base = gate_md_escape(B->peer);
        gate_buf_printf(&t, "| %s | %s | %s | %s %s | %s | %s | %s | %d: %s .. %s | %s | %s | %s / %s | %s | %s | %s |\n",
                        B->suite, row, B->backend, peer, cell(f[0], 32, P ? P->median : NAN, "%.4f"), base,
                        cell(f[1], 32, B->median, "%.4f"), cell(f[2], 32, B->worst, "%.4f"), tm.nlayouts,
                        cell(f[6], 32, tm.lo, "%.4f"), cell(f[7], 32, tm.hi, "%.4f"), cell(f[8], 32, tm.spread * 100, "%.1f%%"),
                        cell(f[9], 32, tm.code_spread * 100, "%.1f%%"),
                        cell(f[3], 32, ia, "%.1f"), cell(f[4], 32, ib, "%.1f"), cell(f[5], 32, ir, "%.4f"),
                        reg ? "REGRESSION" : rname, by);
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
        cJSON_AddNumberToObject(o, "layouts", tm.nlayouts);
        cJSON_AddItemToObject(o, "layoutMedianLow", num6(tm.lo));
        cJSON_AddItemToObject(o, "layoutMedianHigh", num6(tm.hi));
        cJSON_AddItemToObject(o, "layoutSpread", num6(tm.spread));
        cJSON_AddItemToObject(o, "sameCodeLayoutSpread", num6(tm.code_spread));
        cJSON_AddStringToObject(o, "sameCodeSpreadOf", tm.against_peers ? "peers" : "own");
        cJSON_AddItemToObject(o, "timeReach", num6(tr));
        cJSON_AddStringToObject(o, "time", gb_kind_name(tk));
        cJSON_AddStringToObject(o, "instructions", missing ? "missing" : gb_kind_name(ik));
        cJSON_AddStringToObject(o, "result", rname);
        cJSON_AddStringToObject(o, "decidedBy", by);
        if (reg) cJSON_AddItemToArray(regs, cJSON_Duplicate(o, 1));
        if (imp) cJSON_AddItemToArray(imps, cJSON_Duplicate(o, 1));
        cJSON_AddItemToArray(rows, o);
    }
    gb_reach rs = reach_of(reach, nreach);
    free(reach);
    if (bad) {
        free(t.p);
        cJSON_Delete(rows);
        cJSON_Delete(regs);
        cJSON_Delete(imps);
        cJSON_Delete(j);
        return 1;
    }
    size_t cnts[7] = { ngated, nreg, nimp, nlay, nins, nmiss, nbusy };
    summary_verdict(j, cnts, &rs);
    cJSON_AddStringToObject(j, "sameCodeSpread", c->base_spread_peers ? "peers" : "own");
    cJSON_AddItemToObject(j, "regressions", regs);
    cJSON_AddItemToObject(j, "improved", imps);
    cJSON_AddItemToObject(j, "rows", rows);

    gate_buf m = { 0 };
    baseline_md_head(&m, c, subs, cnts, first_missing, &rs);
    if (t.p) gate_buf_printf(&m, "%s", t.p);
    else gate_buf_printf(&m, "| - | (no gated row) | - | - | - | - | - | - | - | - | - | - | - | - |\n");
    gate_buf_printf(&m, "\n");
    free(t.p);
    res->base_md = m.p;
    res->base_json = j;
    res->base_regressions = nreg;
    return 0;
}
