/*
 * why.c - the lines before an attempt's verdict line that say why (issue 43, item 3): the
 * gate's INVALID reasons, the first failing rows with their ratios and limits, and a busy
 * host, read back from the attempt's own outputs (gate/gate-summary.json,
 * quiet-pregate.json), so the terminal says what gate.md says without opening it.
 */
#include "why.h"

#include "tl_err.h"
#include "tl_fs.h"
#include "tl_json.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHY_MAX_LINES 5   /* the first few; gate.md has them all */

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "?";
}

static double num(const cJSON *o, const char *k, int *have)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    *have = cJSON_IsNumber(v);
    return *have ? v->valuedouble : 0;
}

/* One failing gated row: "FAIL: suite / row [backend] vs peer: median 1.31 (limit 1.10)". */
static void fail_row(FILE *out, const char *prefix, const cJSON *r)
{
    int hm, hw, htm, htw;
    double m = num(r, "median", &hm), w = num(r, "worst", &hw);
    double tm = num(r, "thresholdMedian", &htm), tw = num(r, "thresholdWorst", &htw);
    fprintf(out, "%s: FAIL: %s / %s [%s] vs %s:", prefix, str(r, "suite"), str(r, "row"), str(r, "backend"),
            str(r, "peer"));
    if (hm) fprintf(out, " median ratio %.3f", m);
    if (hm && htm) fprintf(out, " (limit %.3f)", tm);
    if (hw) fprintf(out, ", worst %.3f", w);
    if (hw && htw) fprintf(out, " (limit %.3f)", tw);
    fputc('\n', out);
}

static void fail_alloc(FILE *out, const char *prefix, const cJSON *r)
{
    int h;
    double b = num(r, "bytesPerOp", &h);
    fprintf(out, "%s: FAIL: allocation %s / %s [%s]: %.3f bytes/op\n", prefix, str(r, "suite"), str(r, "row"),
            str(r, "backend"), b);
}

/* The failing entries of one array of the summary, counted; the first few printed. */
static int print_fails(FILE *out, const char *prefix, const cJSON *arr, int shown, int alloc)
{
    int n = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, arr) {
        if (strcmp(str(r, "result"), "FAIL")) continue;
        if (shown + n < WHY_MAX_LINES) alloc ? fail_alloc(out, prefix, r) : fail_row(out, prefix, r);
        n++;
    }
    return n;
}

void td_why_compile(const char *log, long from, const char *prefix, FILE *out)
{
    FILE *f = fopen(log, "r");
    if (!f) return;
    char line[2048];
    int n = 0;
    if (from > 0) fseek(f, from, SEEK_SET);
    while (n < 3 && fgets(line, sizeof line, f))
        if (strstr(line, " error: ") || strstr(line, " fatal error: ")) {
            fprintf(out, "%s: %s%s", prefix, line, strchr(line, '\n') ? "" : "\n");
            n++;
        }
    fclose(f);
}

void td_why_print(const char *dir, const char *prefix, FILE *out)
{
    char *sp = tl_join(dir, "gate/gate-summary.json"), *qp = tl_join(dir, "quiet-pregate.json");
    cJSON *s = NULL, *q = NULL;
    tl_err_capture(NULL, 0, 1);   /* an attempt stopped before its gate has no summary */
    int have_s = sp && !tl_json_load(sp, &s), have_q = qp && !tl_json_load(qp, &q);
    tl_err_capture(NULL, 0, 0);
    int shown = 0, total = 0;
    const cJSON *it;
    if (have_s) {
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(s, "invalid")) {
            if (cJSON_IsString(it) && shown < WHY_MAX_LINES) {
                fprintf(out, "%s: INVALID: %s\n", prefix, it->valuestring);
                shown++;
            }
            total++;
        }
        int rows = print_fails(out, prefix, cJSON_GetObjectItemCaseSensitive(s, "rows"), shown, 0);
        shown += rows < WHY_MAX_LINES - shown ? rows : WHY_MAX_LINES - shown;
        total += rows;
        int allocs = print_fails(out, prefix, cJSON_GetObjectItemCaseSensitive(s, "allocations"), shown, 1);
        shown += allocs < WHY_MAX_LINES - shown ? allocs : WHY_MAX_LINES - shown;
        total += allocs;
        if (total > shown) fprintf(out, "%s: ... and %d more in gate.md\n", prefix, total - shown);
    }
    if (have_q && !strcmp(str(q, "status"), "busy")) {
        int h;
        fprintf(out, "%s: the host was busy at the start (other processes %.0f%% of one CPU; limit %.0f%%): the times "
                     "may be noisy; --require-quiet refuses such a host\n", prefix, num(q, "otherCpuPercent", &h),
                num(q, "limitPercent", &h));
    }
    cJSON_Delete(s);
    cJSON_Delete(q);
    free(sp);
    free(qp);
}
