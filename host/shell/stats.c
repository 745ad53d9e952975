/*
 * stats.c - the bench statistics of one row and subject in the player's report: the raw
 * per-sample arrays and the arithmetic derived from them (the gate recomputes all of it
 * from the raw samples, tools/gate/gate_report.c), with the samples' lengths and the
 * clock's share of them (clock.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "shell.h"

/* Integers above 2^53 do not survive a JSON double: they are written as strings. */
static cJSON *json_u64(uint64_t v)
{
    if (v > (1ull << 53)) {
        char b[32];
        snprintf(b, sizeof b, "%llu", (unsigned long long)v);
        return cJSON_CreateString(b);
    }
    return cJSON_CreateNumber((double)v);
}
static cJSON *json_i64(int64_t v)
{
    if (v > (int64_t)(1ll << 53) || v < -(int64_t)(1ll << 53)) {
        char b[32];
        snprintf(b, sizeof b, "%lld", (long long)v);
        return cJSON_CreateString(b);
    }
    return cJSON_CreateNumber((double)v);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Per row and subject: the raw arrays, then the arithmetic derived from them:
 *   nsPerOp        (sum(ns) - sum(controlNs if subtracted)) / sum(ops)   (ratio of means)
 *   medianNsPerOp  median over samples of (ns - control) / ops
 *   allocsPerOp, allocBytesPerOp = sum / sum(ops); retainedBytes = the worst (largest) sample's
 *   live-heap delta over its timed segments only; negative when every sample released memory.
 *   segments[], units[]: per sample, its timed segments and the repetitions of the row's
 *   unit (cohort, round, call); minSampleNs: the shortest sample (target >= 1 ms);
 *   clockShares[]: each sample's segments x read cost / ns (clock.c), clockShare the worst,
 *   clockShareOver when above 1%; opsPerSample: the smallest sample's ops (per sample: ops[]). */
void pl_row_stats(cJSON *o, const pl_row *r)
{
    cJSON *ns = cJSON_AddArrayToObject(o, "ns");
    cJSON *ops = cJSON_AddArrayToObject(o, "ops");
    cJSON *allocs = cJSON_AddArrayToObject(o, "allocs");
    cJSON *bytes = cJSON_AddArrayToObject(o, "allocBytes");
    cJSON *ctrl = cJSON_AddArrayToObject(o, "controlNs");
    cJSON *ret = cJSON_AddArrayToObject(o, "retained");
    cJSON *chk = cJSON_AddArrayToObject(o, "check");
    /* segments and units only when every sample stated them (a module older than
     * host->sample_shape does not) */
    int shaped = r->nraw > 0;
    for (size_t i = 0; i < r->nraw; i++) shaped &= r->raw[i].segments > 0;
    cJSON *segs = shaped ? cJSON_AddArrayToObject(o, "segments") : NULL;
    cJSON *units = shaped ? cJSON_AddArrayToObject(o, "units") : NULL;
    cJSON *shares = shaped ? cJSON_AddArrayToObject(o, "clockShares") : NULL;
    uint64_t sns = 0, sops = 0, salloc = 0, sbytes = 0, min_ops = 0, min_ns = 0, short_samples = 0;
    double worst_share = 0;
    int64_t sctrl = 0, worst_retained = r->nraw ? r->raw[0].retained : 0;
    int subtract = 0;
    double *per = r->nraw ? malloc(r->nraw * sizeof *per) : NULL;
    for (size_t i = 0; i < r->nraw; i++) {
        const pl_sample *x = &r->raw[i];
        cJSON_AddItemToArray(ns, json_u64(x->ns));
        cJSON_AddItemToArray(ops, json_u64(x->ops));
        cJSON_AddItemToArray(allocs, json_u64(x->allocs));
        cJSON_AddItemToArray(bytes, json_u64(x->bytes));
        cJSON_AddItemToArray(ctrl, json_i64(x->control_ns));
        cJSON_AddItemToArray(ret, json_i64(x->retained));
        cJSON_AddItemToArray(chk, json_i64(x->check));
        if (shaped) {
            cJSON_AddItemToArray(segs, json_u64(x->segments));
            cJSON_AddItemToArray(units, json_u64(x->units));
        }
        double share = pl_clock_share(x->segments, x->ns);
        if (shaped) cJSON_AddItemToArray(shares, cJSON_CreateNumber(share));
        if (share > worst_share) worst_share = share;
        if (!i || x->ops < min_ops) min_ops = x->ops;
        if (!i || x->ns < min_ns) min_ns = x->ns;
        short_samples += x->ns < TD_PLAYER_MIN_SAMPLE_NS;
        sns += x->ns;
        sops += x->ops;
        salloc += x->allocs;
        sbytes += x->bytes;
        if (x->subtract) subtract = 1;
        if (x->retained > worst_retained) worst_retained = x->retained;
        int64_t c = x->subtract ? x->control_ns : 0;
        sctrl += c;
        per[i] = x->ops ? ((double)x->ns - (double)c) / (double)x->ops : 0;
    }
    cJSON_AddBoolToObject(o, "gated", r->gated);
    cJSON_AddNumberToObject(o, "sampleCount", (double)r->nraw);
    cJSON_AddItemToObject(o, "opsPerSample", json_u64(min_ops));
    cJSON_AddItemToObject(o, "minSampleNs", json_u64(min_ns));
    if (shaped) {
        cJSON_AddNumberToObject(o, "clockShare", worst_share);
        cJSON_AddBoolToObject(o, "clockShareOver", worst_share > PL_CLOCK_SHARE_TARGET);
    }
    if (r->nraw) pl_clock_note_row(worst_share, min_ns, short_samples);
    cJSON_AddBoolToObject(o, "controlSubtracted", subtract);
    if (sops) {
        qsort(per, r->nraw, sizeof *per, cmp_double);
        double med = r->nraw % 2 ? per[r->nraw / 2] : (per[r->nraw / 2 - 1] + per[r->nraw / 2]) / 2;
        cJSON_AddNumberToObject(o, "nsPerOp", ((double)sns - (double)sctrl) / (double)sops);
        cJSON_AddNumberToObject(o, "medianNsPerOp", med);
        cJSON_AddNumberToObject(o, "allocsPerOp", (double)salloc / (double)sops);
        cJSON_AddNumberToObject(o, "allocBytesPerOp", (double)sbytes / (double)sops);
        cJSON_AddItemToObject(o, "retainedBytes", json_i64(worst_retained));
    } else {
        cJSON_AddNullToObject(o, "nsPerOp");
        cJSON_AddNullToObject(o, "medianNsPerOp");
        cJSON_AddNullToObject(o, "allocsPerOp");
        cJSON_AddNullToObject(o, "allocBytesPerOp");
        cJSON_AddNullToObject(o, "retainedBytes");
    }
    free(per);
}
