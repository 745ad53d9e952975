/*
 * baseline_bench.c - `tandem bench --baseline REV`'s verdict: one process (time) or one
 * callgrind process per subject (instructions), so each gated row has one ratio
 * subject / subject@<rev>; judged with the project's gate (its gated rows, its baseline
 * thresholds; gate_baseline.c: median and worst are that one ratio; instructions against
 * baselineInstructions).
 */
#include "baseline.h"
#include "gate/gate.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static double bb_num(const cJSON *o, const char *key)
{
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble > 0 ? v->valuedouble : NAN;
}

/* A time report's statistic of (subject, row): the gate's (primary: the mean, else the
 * median of per-sample ns/op), NaN when unsupported or absent. */
static double bb_time(const cJSON *doc, const char *suite, const char *subject, const char *row)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "rows")) {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(it, "subject"), *n = cJSON_GetObjectItemCaseSensitive(it, "name");
        if (!cJSON_IsString(s) || !cJSON_IsString(n) || strcmp(s->valuestring, subject) || strcmp(n->valuestring, row))
            continue;
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "supported"))) return NAN;
        return bb_num(it, !strcmp(suite, "primary") ? "nsPerOp" : "medianNsPerOp");
    }
    return NAN;
}

static double bb_ins(const cJSON *row, const char *subject)
{
    return bb_num(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(row, "subjects"), subject), "irPerOp");
}

int td_baseline_bench_verdict(const gate_config *cfg, const cJSON *doc, int instructions, const char *suite,
                              const char *backend, const char *subject, const char *base)
{
    size_t gated = 0, reg = 0, imp = 0;
    printf("\nbaseline %s against %s (%s, %s, %s): ratio = %s / %s; regression above %s %.3f, improved at or below %.3f%s\n",
           subject, base, suite, backend, instructions ? "instructions per op" : "ns/op, one process", subject, base,
           instructions ? "instructions" : "median", instructions ? cfg->base_instr : cfg->base_median,
           instructions ? 2 - cfg->base_instr : 2 - cfg->base_median, instructions ? "" : " (one process: no worst)");
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "rows")) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
        if (!cJSON_IsString(n) || !gate_row_gated(cfg, suite, n->valuestring)) continue;
        if (!strncmp(n->valuestring, "(meter)", 7)) continue; /* the meter's own cost, the same on both sides */
        double a, b;
        int kind;
        if (instructions) {
            a = bb_ins(it, subject);
            b = bb_ins(it, base);
            kind = gb_instr_kind(cfg, a / b);
        } else {
            const cJSON *s = cJSON_GetObjectItemCaseSensitive(it, "subject");
            if (!cJSON_IsString(s) || strcmp(s->valuestring, subject)) continue; /* one line per row */
            a = bb_time(doc, suite, subject, n->valuestring);
            b = bb_time(doc, suite, base, n->valuestring);
            /* one process: its ratio is both the median and the worst */
            kind = gb_time_kind(cfg, a / b, a / b);
        }
        if (kind == GB_NA) continue;
        gated++;
        reg += kind == GB_REGRESSION;
        imp += kind == GB_IMPROVED;
        printf("  %-10s %-50.50s %.4f  (%.2f vs %.2f)\n", kind == GB_REGRESSION ? "REGRESSION" : gb_kind_name(kind),
               n->valuestring, a / b, a, b);
    }
    const char *verdict = !gated ? "no data" : reg ? "REGRESSION" : "no regression";
    printf("baseline verdict (%s, %s): %s: %zu gated row(s), %zu regression(s), %zu improved\n", suite, backend, verdict,
           gated, reg, imp);
    return !gated ? 1 : reg ? 3 : 0;
}
