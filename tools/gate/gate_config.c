/* gate_config.c - the gate configuration: defaults from SUITES.md, JSON overrides. */
#include "gate.h"

#include "tl_err.h"
#include "tl_json.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static void cp(char *dst, size_t len, const char *s) { snprintf(dst, len, "%s", s ? s : ""); }

static gate_suite_cfg *add_suite(gate_config *c, const char *name, int use_mean, int gated)
{
    gate_suite_cfg *s = &c->suites[c->nsuites++];
    memset(s, 0, sizeof *s);
    cp(s->name, sizeof s->name, name);
    s->use_mean = use_mean;
    s->gated = gated;
    return s;
}

#define PUSH(arr, n, str) cp((arr)[(n)++], sizeof (arr)[0], (str))

void gate_config_default(gate_config *c)
{
    memset(c, 0, sizeof *c);
    cp(c->subject, sizeof c->subject, "tandem");
    PUSH(c->report_only_peers, c->nreport_only_peers, "callback");
    PUSH(c->backends, c->nbackends, "aot");
    PUSH(c->backends, c->nbackends, "jit");
    c->processes = 3;
    c->expected_processes = 0;
    c->sync_median = 1.00;
    c->median = 0.95;
    c->worst = 1.00;
    c->base_median = 1.02;
    c->base_worst = 1.05;
    c->base_instr = 1.005;
    c->base_spread_peers = 1; /* issue 42: calibrated on the second host (reports/2026-12-06-calibration) */
    c->alloc_check = 1;
    c->alloc_max = 0;
    c->tolerance = 1e-6;
    c->alpha = 0.05;
    c->noise_cv = 0.10;
    c->noise_spread = 0.10;
    c->seq_batch = 2;
    c->seq_max_batches = 2;
    c->seq_quick_band = 0.10;
    PUSH(c->report_only_retention, c->nreport_only_retention, "default");
    gate_suite_cfg *s = add_suite(c, "primary", 1, 1);
    PUSH(s->sync, s->nsync, "completed get-result");
    PUSH(s->sync, s->nsync, "completed<int> get-result");
    PUSH(s->sync, s->nsync, "fromresult");
    PUSH(s->report_only, s->nreport_only, "flow on");
    PUSH(s->report_only, s->nreport_only, "flow=on");
    PUSH(s->report_only, s->nreport_only, "flow-on");
    PUSH(s->report_only, s->nreport_only, "empty-loop control"); /* reported, never subtracted */
    /* The stackful peers run td_peer.h (the lower bound, the same code as `callback`) for
     * these rows, not their own library: report-only against them (SUITES.md). */
    static const char *const stackful[] = { "fcontext", "ucontext" };
    static const char *const lower_rows[] = { "^Completed get-result", "^FromResult<int> get-result",
                                              "^NextFrame scheduling", "^NextFrame get-result" };
    for (int p = 0; p < 2; p++)
        for (int k = 0; k < 4; k++) {
            cp(s->lower_peer[s->nlower], sizeof s->lower_peer[0], stackful[p]);
            cp(s->lower_row[s->nlower], sizeof s->lower_row[0], lower_rows[k]);
            s->nlower++;
        }
    s = add_suite(c, "builderlifecycle", 0, 1);
    PUSH(s->report_only, s->nreport_only, "flow on");
    PUSH(s->report_only, s->nreport_only, "flow=on");
    PUSH(s->report_only, s->nreport_only, "flow-on");
    PUSH(s->report_only, s->nreport_only, "N=1");
    PUSH(s->report_only, s->nreport_only, "Resumption"); /* SUITES.md: 48 metrics, 8 gated rows */
    add_suite(c, "throughput", 0, 1);
    add_suite(c, "whenany", 0, 0);
    add_suite(c, "buildercycle", 0, 0);
    /* cancellation: the cancelled groups and the screen transition, where both libraries run
     * their own code; N=1 (one method: the harness as much as the library), the normal
     * completions (the control of the cost per cancelled method) and the races (the stackful
     * peers have no race without a callback layer: NA) report-only */
    s = add_suite(c, "cancellation", 0, 1);
    PUSH(s->report_only, s->nreport_only, "N=1");
    PUSH(s->report_only, s->nreport_only, "^Complete");
    PUSH(s->report_only, s->nreport_only, "^Race");
}

const gate_suite_cfg *gate_suite_find(const gate_config *c, const char *suite)
{
    for (int i = 0; i < c->nsuites; i++)
        if (!strcmp(c->suites[i].name, suite)) return &c->suites[i];
    return NULL;
}

gate_suite_cfg *gate_suite_get(gate_config *c, const char *suite)
{
    gate_suite_cfg *s = (gate_suite_cfg *)gate_suite_find(c, suite);
    if (s || c->nsuites == GATE_MAX_SUITES || strlen(suite) >= sizeof s->name) return s;
    return add_suite(c, suite, 0, 1);
}

int gate_pattern_match(const char *text, const char *pat)
{
    int anchored = pat[0] == '^';
    if (anchored) pat++;
    size_t tl = strlen(text), pl = strlen(pat);
    if (!pl || pl > tl) return 0;
    for (size_t i = 0; i + pl <= (anchored ? pl : tl); i++) {
        size_t k = 0;
        while (k < pl && tolower((unsigned char)text[i + k]) == tolower((unsigned char)pat[k])) k++;
        if (k < pl) continue;
        if (isdigit((unsigned char)pat[pl - 1]) && isdigit((unsigned char)text[i + pl])) continue;
        return 1;
    }
    return 0;
}

/* An optional number within [lo, hi] (lo excluded when lo_open); finite always. */
static int get_range(const char *file, const cJSON *o, const char *key, double lo, int lo_open, double hi, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) return 0;
    if (!cJSON_IsNumber(v)) { tl_error(file, key, "expected a number"); return 1; }
    double d = v->valuedouble;
    if (!isfinite(d)) { tl_error(file, key, "not a finite number"); return 1; }
    if (d < lo || (lo_open && d == lo) || d > hi) {
        tl_error(file, key, "%g is out of range (%s %g to %g)", d, lo_open ? "above" : "from", lo, hi);
        return 1;
    }
    *out = d;
    return 0;
}

/* An optional integer from 0 to max (checked before any conversion to int). */
static int get_int(const char *file, const cJSON *o, const char *key, int max, int *out)
{
    double d = *out;
    if (get_range(file, o, key, 0, 0, max, &d)) return 1;
    if (d != floor(d)) { tl_error(file, key, "expected an integer, got %g", d); return 1; }
    *out = (int)d;
    return 0;
}

static int get_strs(const char *file, const cJSON *o, const char *key, char (*arr)[64], int *n, int max, size_t width)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) return 0;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > max) {
        tl_error(file, key, "expected an array of at most %d strings", max);
        return 1;
    }
    *n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v) {
        if (!cJSON_IsString(e) || strlen(e->valuestring) >= width) {
            tl_error(file, key, "expected strings shorter than %zu bytes", width);
            return 1;
        }
        snprintf((char *)arr + (size_t)*n * width, width, "%s", e->valuestring);
        (*n)++;
    }
    return 0;
}

/* "lowerBoundRows": { "<peer>": ["<row pattern>", ...], ... } replaces the suite's list. */
static int get_lower(const char *file, const cJSON *suite, const char *at, gate_suite_cfg *s)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(suite, "lowerBoundRows");
    if (!v) return 0;
    if (!cJSON_IsObject(v)) {
        tl_error(file, at, "lowerBoundRows: expected an object of peer -> array of row patterns");
        return 1;
    }
    s->nlower = 0;
    const cJSON *peer;
    cJSON_ArrayForEach(peer, v) {
        if (!peer->string || !peer->string[0] || strlen(peer->string) >= sizeof s->lower_peer[0] ||
            !cJSON_IsArray(peer)) {
            tl_error(file, at, "lowerBoundRows: '%s': expected a peer name and an array of row patterns",
                     peer->string ? peer->string : "");
            return 1;
        }
        const cJSON *e;
        cJSON_ArrayForEach(e, peer) {
            if (!cJSON_IsString(e) || !e->valuestring[0] || strlen(e->valuestring) >= sizeof s->lower_row[0]) {
                tl_error(file, at, "lowerBoundRows.%s: expected non-empty strings shorter than %zu bytes", peer->string,
                         sizeof s->lower_row[0]);
                return 1;
            }
            if (s->nlower == GATE_MAX_LOWER) {
                tl_error(file, at, "lowerBoundRows: more than %d entries", GATE_MAX_LOWER);
                return 1;
            }
            cp(s->lower_peer[s->nlower], sizeof s->lower_peer[0], peer->string);
            cp(s->lower_row[s->nlower], sizeof s->lower_row[0], e->valuestring);
            s->nlower++;
        }
    }
    return 0;
}

int gate_suite_lower_bound(const gate_suite_cfg *s, const char *peer, const char *row)
{
    for (int i = 0; s && i < s->nlower; i++)
        if (!strcmp(s->lower_peer[i], peer) && gate_pattern_match(row, s->lower_row[i])) return 1;
    return 0;
}

int gate_config_load(const char *path, gate_config *c)
{
    cJSON *doc;
    if (tl_json_load(path, &doc)) return 1;
    int bad = 0;
    if (!cJSON_IsObject(doc)) { tl_error(path, NULL, "expected an object"); cJSON_Delete(doc); return 1; }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "subject");
    if (v) {
        if (!cJSON_IsString(v) || strlen(v->valuestring) >= sizeof c->subject) { tl_error(path, "subject", "expected a string"); bad = 1; }
        else cp(c->subject, sizeof c->subject, v->valuestring);
    }
    bad |= get_strs(path, doc, "peers", c->peers, &c->npeers, GATE_MAX_PEERS, 64);
    bad |= get_strs(path, doc, "reportOnlyPeers", c->report_only_peers, &c->nreport_only_peers, GATE_MAX_PEERS, 64);
    {
        char tmp[GATE_MAX_BACKENDS][64];
        int n = -1;
        bad |= get_strs(path, doc, "backends", tmp, &n, GATE_MAX_BACKENDS, 64);
        if (n >= 0) {
            c->nbackends = n;
            for (int i = 0; i < n; i++) cp(c->backends[i], sizeof c->backends[i], tmp[i]);
        }
        char ret[4][64];
        n = -1;
        bad |= get_strs(path, doc, "reportOnlyRetention", ret, &n, 4, 64);
        if (n >= 0) {
            c->nreport_only_retention = n;
            for (int i = 0; i < n; i++) cp(c->report_only_retention[i], sizeof c->report_only_retention[i], ret[i]);
        }
    }
    bad |= get_int(path, doc, "processesPerBackend", 1000, &c->processes);
    bad |= get_int(path, doc, "expectedProcesses", 100000, &c->expected_processes);
    bad |= get_range(path, doc, "arithmeticTolerance", 0, 0, 0.5, &c->tolerance);
    bad |= get_range(path, doc, "alpha", 0, 1, 1, &c->alpha);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(doc, "thresholds");
    if (t) {
        if (!cJSON_IsObject(t)) { tl_error(path, "thresholds", "expected an object"); bad = 1; }
        else {
            /* a ratio threshold: above 0 and at most 1000 (an infinite one would pass anything) */
            bad |= get_range(path, t, "syncMedian", 0, 1, 1000, &c->sync_median);
            bad |= get_range(path, t, "median", 0, 1, 1000, &c->median);
            bad |= get_range(path, t, "worst", 0, 1, 1000, &c->worst);
            bad |= get_range(path, t, "baselineMedian", 0, 1, 1000, &c->base_median);
            bad |= get_range(path, t, "baselineWorst", 0, 1, 1000, &c->base_worst);
            bad |= get_range(path, t, "baselineInstructions", 0, 1, 1000, &c->base_instr);
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(t, "allocBytesPerOp");
            if (a && cJSON_IsNull(a)) c->alloc_check = 0;
            else if (a) { c->alloc_check = 1; bad |= get_range(path, t, "allocBytesPerOp", 0, 0, 1e12, &c->alloc_max); }
        }
    }
    const cJSON *un = cJSON_GetObjectItemCaseSensitive(doc, "unsupportedGatedRows");
    if (un) {
        if (cJSON_IsString(un) && !strcmp(un->valuestring, "na")) c->unsupported_na = 1;
        else if (cJSON_IsString(un) && !strcmp(un->valuestring, "invalid")) c->unsupported_na = 0;
        else { tl_error(path, "unsupportedGatedRows", "expected \"invalid\" or \"na\""); bad = 1; }
    }
    const cJSON *sp = cJSON_GetObjectItemCaseSensitive(doc, "baselineSameCodeSpread");
    if (sp) {
        if (cJSON_IsString(sp) && !strcmp(sp->valuestring, "peers")) c->base_spread_peers = 1;
        else if (cJSON_IsString(sp) && !strcmp(sp->valuestring, "own")) c->base_spread_peers = 0;
        else { tl_error(path, "baselineSameCodeSpread", "expected \"own\" or \"peers\""); bad = 1; }
    }
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(doc, "noise");
    if (ns && !cJSON_IsObject(ns)) { tl_error(path, "noise", "expected an object"); bad = 1; }
    if (ns && cJSON_IsObject(ns)) {
        bad |= get_range(path, ns, "cv", 0, 0, 1000, &c->noise_cv);
        bad |= get_range(path, ns, "spread", 0, 0, 1000, &c->noise_spread);
    }
    const cJSON *sq = cJSON_GetObjectItemCaseSensitive(doc, "sequential");
    if (sq && !cJSON_IsObject(sq)) { tl_error(path, "sequential", "expected an object"); bad = 1; }
    if (sq && cJSON_IsObject(sq)) {
        bad |= get_int(path, sq, "batch", 64, &c->seq_batch);
        bad |= get_int(path, sq, "maxBatches", 16, &c->seq_max_batches);
        bad |= get_range(path, sq, "quickBand", 0, 0, 1000, &c->seq_quick_band);
    }
    const cJSON *ss = cJSON_GetObjectItemCaseSensitive(doc, "suites");
    if (ss) {
        if (!cJSON_IsArray(ss)) { tl_error(path, "suites", "expected an array"); bad = 1; }
        const cJSON *e;
        int i = 0;
        cJSON_ArrayForEach(e, ss) {
            char at[64];
            snprintf(at, sizeof at, "suites[%d]", i++);
            const char *name = tl_json_str(path, e, at, "name");
            if (!name) { bad = 1; continue; }
            gate_suite_cfg *s = gate_suite_get(c, name);
            if (!s) { tl_error(path, at, "too many suites, or a name of 64 bytes or more"); bad = 1; continue; }
            const cJSON *st = cJSON_GetObjectItemCaseSensitive(e, "statistic");
            if (st) {
                if (cJSON_IsString(st) && !strcmp(st->valuestring, "mean")) s->use_mean = 1;
                else if (cJSON_IsString(st) && !strcmp(st->valuestring, "median")) s->use_mean = 0;
                else { tl_error(path, at, "statistic: expected \"mean\" or \"median\""); bad = 1; }
            }
            const cJSON *g = cJSON_GetObjectItemCaseSensitive(e, "gated");
            if (g) {
                if (!cJSON_IsBool(g)) { tl_error(path, at, "gated: expected a boolean"); bad = 1; }
                else s->gated = cJSON_IsTrue(g);
            }
            bad |= get_int(path, e, "samples", 1000000, &s->samples);
            bad |= get_strs(path, e, "syncRows", s->sync, &s->nsync, GATE_MAX_PATTERNS, 64);
            bad |= get_strs(path, e, "reportOnlyRows", s->report_only, &s->nreport_only, GATE_MAX_PATTERNS, 64);
            bad |= get_strs(path, e, "unsupportedRows", s->unsupported, &s->nunsupported, GATE_MAX_PATTERNS, 64);
            bad |= get_lower(path, e, at, s);
        }
    }
    cJSON_Delete(doc);
    if (!bad && (c->nbackends < 1 || c->processes < 1 || !c->subject[0])) {
        tl_error(path, NULL, "need a subject, at least one backend and processesPerBackend >= 1");
        bad = 1;
    }
    return bad;
}

static cJSON *str_array(char (*arr)[64], int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateString(arr[i]));
    return a;
}

static cJSON *fixed(double v)
{
    if (!isfinite(v)) return cJSON_CreateNull(); /* never a bare inf/nan in JSON */
    char b[64];
    snprintf(b, sizeof b, "%.6f", v);
    return cJSON_CreateRaw(b);
}

cJSON *gate_config_json(const gate_config *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "subject", c->subject);
    cJSON_AddItemToObject(o, "peers", str_array((char (*)[64])c->peers, c->npeers));
    cJSON_AddItemToObject(o, "reportOnlyPeers", str_array((char (*)[64])c->report_only_peers, c->nreport_only_peers));
    cJSON *b = cJSON_AddArrayToObject(o, "backends");
    for (int i = 0; i < c->nbackends; i++) cJSON_AddItemToArray(b, cJSON_CreateString(c->backends[i]));
    cJSON_AddNumberToObject(o, "processesPerBackend", c->processes);
    cJSON_AddNumberToObject(o, "expectedProcesses", c->expected_processes);
    cJSON_AddStringToObject(o, "unsupportedGatedRows", c->unsupported_na ? "na" : "invalid");
    cJSON_AddStringToObject(o, "baselineSameCodeSpread", c->base_spread_peers ? "peers" : "own");
    cJSON *t = cJSON_AddObjectToObject(o, "thresholds");
    cJSON_AddItemToObject(t, "syncMedian", fixed(c->sync_median));
    cJSON_AddItemToObject(t, "median", fixed(c->median));
    cJSON_AddItemToObject(t, "worst", fixed(c->worst));
    cJSON_AddItemToObject(t, "baselineMedian", fixed(c->base_median));
    cJSON_AddItemToObject(t, "baselineWorst", fixed(c->base_worst));
    cJSON_AddItemToObject(t, "baselineInstructions", fixed(c->base_instr));
    if (c->alloc_check) cJSON_AddItemToObject(t, "allocBytesPerOp", fixed(c->alloc_max));
    else cJSON_AddNullToObject(t, "allocBytesPerOp");
    cJSON_AddItemToObject(o, "arithmeticTolerance", fixed(c->tolerance));
    cJSON_AddItemToObject(o, "alpha", fixed(c->alpha));
    cJSON *n = cJSON_AddObjectToObject(o, "noise");
    cJSON_AddItemToObject(n, "cv", fixed(c->noise_cv));
    cJSON_AddItemToObject(n, "spread", fixed(c->noise_spread));
    cJSON *sq = cJSON_AddObjectToObject(o, "sequential");
    cJSON_AddNumberToObject(sq, "batch", c->seq_batch);
    cJSON_AddNumberToObject(sq, "maxBatches", c->seq_max_batches);
    cJSON_AddItemToObject(sq, "quickBand", fixed(c->seq_quick_band));
    cJSON *r = cJSON_AddArrayToObject(o, "reportOnlyRetention");
    for (int i = 0; i < c->nreport_only_retention; i++) cJSON_AddItemToArray(r, cJSON_CreateString(c->report_only_retention[i]));
    cJSON *ss = cJSON_AddArrayToObject(o, "suites");
    for (int i = 0; i < c->nsuites; i++) {
        const gate_suite_cfg *s = &c->suites[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", s->name);
        cJSON_AddStringToObject(e, "statistic", s->use_mean ? "mean" : "median");
        cJSON_AddBoolToObject(e, "gated", s->gated);
        cJSON_AddNumberToObject(e, "samples", s->samples);
        cJSON_AddItemToObject(e, "syncRows", str_array((char (*)[64])s->sync, s->nsync));
        cJSON_AddItemToObject(e, "reportOnlyRows", str_array((char (*)[64])s->report_only, s->nreport_only));
        cJSON_AddItemToObject(e, "unsupportedRows", str_array((char (*)[64])s->unsupported, s->nunsupported));
        cJSON *lb = cJSON_AddObjectToObject(e, "lowerBoundRows");
        for (int k = 0; k < s->nlower; k++) {
            cJSON *arr = cJSON_GetObjectItemCaseSensitive(lb, s->lower_peer[k]);
            if (!arr) arr = cJSON_AddArrayToObject(lb, s->lower_peer[k]);
            cJSON_AddItemToArray(arr, cJSON_CreateString(s->lower_row[k]));
        }
        cJSON_AddItemToArray(ss, e);
    }
    return o;
}
