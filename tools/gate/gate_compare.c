/*
 * gate_compare.c - `tandem gate --compare RUNS_A RUNS_B`: stability, measured.
 *
 * Both runs folders are evaluated with the same rules: one configuration, or (--config-b)
 * B's own, which may differ from A's only in expectedProcesses. Two attempts of the same
 * code differ there whenever the sequential rule (SEQUENTIAL.md) added processes to one of
 * them; judged by A's count, B would read INVALID for processes its own gate counted. Any
 * other difference is refused, naming the field: the rows would be judged by two rules. For
 * every gated line
 * (suite, retention, row, peer, backend) of either: both results, both medians, whether
 * the verdict flipped, and whether the row is "borderline": its threshold lies within the
 * noise band of its median in either run (band = the run's per-process spread, worst/best
 * process ratio - 1, as a fraction of the median). A Markdown table goes to stdout (and to
 * --out FILE). Exit: 0 no flip, 1 a flip (or a run that is not comparable: INVALID, a
 * gated line missing from one run), 2 usage.
 */
#include "gate_int.h"

#include <cjson/cJSON.h>

#include "tl_err.h"
#include "tl_fs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ge_line *cmp_find(const gate_result *r, const ge_line *L)
{
    for (size_t i = 0; i < r->nlines; i++) {
        const ge_line *M = &r->lines[i];
        if (!strcmp(M->suite, L->suite) && !strcmp(M->retention, L->retention) && !strcmp(M->row, L->row) &&
            !strcmp(M->peer, L->peer) && M->backend && L->backend && !strcmp(M->backend, L->backend))
            return M;
    }
    return NULL;
}

/* The threshold within median * (1 +- spread) (gate_int.h). */
int gate_line_borderline(const ge_line *L)
{
    if (!L || L->kind == GL_REPORT || isnan(L->median) || isnan(L->thr_median)) return 0;
    double band = L->median * (L->spread > 0 ? L->spread : 0);
    if (fabs(L->median - L->thr_median) <= band) return 1;
    return !isnan(L->thr_worst) && !isnan(L->worst) && fabs(L->worst - L->thr_worst) <= L->worst * L->spread;
}

static void cmp_num(FILE *o, double v)
{
    if (isnan(v)) fprintf(o, " - |");
    else fprintf(o, " %.4f |", v);
}

/* The first field (a dotted path) where a and b differ, or NULL when they are equal. */
static const char *cmp_json_diff(const cJSON *a, const cJSON *b, char *path, size_t n)
{
    if (cJSON_IsObject(a) && cJSON_IsObject(b)) {
        const cJSON *x;
        size_t l = strlen(path);
        for (int pass = 0; pass < 2; pass++) { /* a's fields in b, then fields only b has */
            const cJSON *from = pass ? b : a;
            cJSON_ArrayForEach(x, from) {
                const cJSON *y = cJSON_GetObjectItemCaseSensitive(pass ? a : b, x->string);
                snprintf(path + l, n - l, "%s%s", l ? "." : "", x->string);
                if (!y) return path;
                if (!pass && cmp_json_diff(x, y, path, n)) return path;
                path[l] = 0;
            }
        }
        return NULL;
    }
    return cJSON_Compare(a, b, 1) ? NULL : path;
}

/* 0 when a and b set the same rules (expectedProcesses aside); else 1, the field said. */
static int cmp_same_rules(const gate_config *a, const gate_config *b, const char *b_name)
{
    cJSON *ja = gate_config_json(a), *jb = gate_config_json(b);
    cJSON_DeleteItemFromObjectCaseSensitive(ja, "expectedProcesses");
    cJSON_DeleteItemFromObjectCaseSensitive(jb, "expectedProcesses");
    char path[256] = "";
    const char *d = cmp_json_diff(ja, jb, path, sizeof path);
    if (d)
        tl_error(b_name, "--config-b", "field '%s' differs from the first configuration's: the two runs would be "
                 "judged by different rules (only expectedProcesses may differ)", d);
    cJSON_Delete(ja);
    cJSON_Delete(jb);
    return d != NULL;
}

int gate_compare(const char *runs_a, const char *runs_b, const gate_config *cfg, const gate_config *cfg_b,
                 const char *cfg_b_name, const char *out_file)
{
    if (!cfg_b) cfg_b = cfg;
    else if (cmp_same_rules(cfg, cfg_b, cfg_b_name)) return GATE_USAGE;
    if (!tl_is_dir(runs_a) || !tl_is_dir(runs_b)) {
        tl_error(!tl_is_dir(runs_a) ? runs_a : runs_b, "--compare", "not a folder");
        return GATE_USAGE;
    }
    gate_result A, B;
    if (gate_evaluate(runs_a, cfg, &A)) {
        tl_error(runs_a, NULL, "cannot read");
        return GATE_USAGE;
    }
    if (gate_evaluate(runs_b, cfg_b, &B)) {
        tl_error(runs_b, NULL, "cannot read");
        gate_result_free(&A);
        return GATE_USAGE;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&text, &len);
    int flips = 0, missing = 0, border = 0, rows = 0;
    fprintf(o, "# Gate comparison\n\nA: `%s` (%s)  \nB: `%s` (%s)\n\n", runs_a, gate_verdict_name(A.verdict), runs_b,
            gate_verdict_name(B.verdict));
    fprintf(o, "Borderline: the threshold lies within a run's noise band around its median (band = the\n"
               "per-process spread, worst/best process ratio - 1). A flip on a borderline row is noise at\n"
               "this sample size; a flip elsewhere is not explained by the spread.\n\n");
    fprintf(o, "| suite | row | vs | backend | A | A median | A spread | B | B median | B spread | flipped | borderline |\n"
               "| --- | --- | --- | --- | --- | ---: | ---: | --- | ---: | ---: | --- | --- |\n");
    for (int pass = 0; pass < 2; pass++) {
        const gate_result *X = pass ? &B : &A, *Y = pass ? &A : &B;
        for (size_t i = 0; i < X->nlines; i++) {
            const ge_line *L = &X->lines[i];
            if (L->kind == GL_REPORT) continue;
            const ge_line *M = cmp_find(Y, L);
            if (pass && M && M->kind != GL_REPORT) continue; /* listed in the first pass */
            const ge_line *la = pass ? M : L, *lb = pass ? L : M;
            const char *ra = la ? la->result : "missing", *rb = lb ? lb->result : "missing";
            int flipped = la && lb && strcmp(ra, rb);
            int bl = gate_line_borderline(la) || gate_line_borderline(lb);
            rows++;
            flips += flipped;
            missing += !la || !lb;
            border += flipped && bl;
            char *es = gate_md_escape(L->suite), *er = gate_md_escape(L->row), *ep = gate_md_escape(L->peer);
            fprintf(o, "| %s | %s | %s | %s | %s |", es, er, ep, L->backend, ra);
            free(es);
            free(er);
            free(ep);
            cmp_num(o, la ? la->median : NAN);
            cmp_num(o, la ? la->spread : NAN);
            fprintf(o, " %s |", rb);
            cmp_num(o, lb ? lb->median : NAN);
            cmp_num(o, lb ? lb->spread : NAN);
            fprintf(o, " %s | %s |\n", flipped ? "**flipped**" : !la || !lb ? "not comparable" : "no",
                    bl ? "borderline" : "-");
        }
    }
    fprintf(o, "\n%d gated rows compared: %d flipped (%d of them borderline), %d missing from one run; "
               "A %s, B %s.\n",
            rows, flips, border, missing, gate_verdict_name(A.verdict), gate_verdict_name(B.verdict));
    fclose(o);
    fputs(text, stdout);
    int rc = (flips || missing || A.verdict == GATE_INVALID || B.verdict == GATE_INVALID) ? 1 : 0;
    if (A.verdict == GATE_INVALID || B.verdict == GATE_INVALID)
        fprintf(stderr, "tandem gate --compare: %s is INVALID: its verdicts are not comparable\n",
                A.verdict == GATE_INVALID ? runs_a : runs_b);
    if (out_file) {
        int e = tl_write_atomic(out_file, text, len, 0644);
        if (e) {
            tl_error(out_file, "--out", "cannot write: %s", tl_strerror(e));
            rc = 1;
        }
    }
    free(text);
    gate_result_free(&A);
    gate_result_free(&B);
    return rc;
}
