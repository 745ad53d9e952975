/*
 * gate_report.c - THE reader of per-process JSON reports. Everything the gate knows about
 * the report format is here; adapt this file when the format changes.
 *
 * Accepted (SUITES.md + the player shell's report):
 *   schemaVersion, suite, backend, buildId, subjects (array of strings or {name}),
 *   completed (else passed), failure (null | object | string),
 *   settings { retention: "matched"|"default", samples, ... } (retention also top-level),
 *   environment { buildType, flags, ... }, flags (top-level, the backend's flags),
 *   samples (requested per row),
 *   rows[]: either one entry per (row, subject):
 *       { subject, name, supported, reason, samples: [ {ns, ops, allocs, bytes, controlNs,
 *         nsPerOp}, ... ], nsPerOp, meanNsPerOp, medianNsPerOp, allocBytesPerOp, retainedBytes }
 *     or one per row with subjects { "<name>": { ...same entry fields... } }.
 *   A sample may also be a bare number / decimal string (raw ns) with "ops" or
 *   "opsPerSample" given on the entry. Integers may be strings (beyond 2^53).
 *
 * The player shell's bench report (players/shell/main.c, row_stats) writes per entry:
 *   sampleRecords [ {ns, ops, allocs, frees, bytes, check, controlNs, retainedBytes} ],
 *   the same as parallel arrays ns[], ops[], allocs[], allocBytes[], controlNs[],
 *   retained[], check[]; gated (bool), sampleCount, opsPerSample, controlSubtracted
 *   (controlNs is subtracted only when true), nsPerOp = (sum ns - sum control) / sum ops,
 *   medianNsPerOp, allocsPerOp, allocBytesPerOp, retainedBytes (last sample's);
 *   settings.retention, settings.flow; environment.optimisationFlags.
 * When both the records and the arrays are present they must agree (else INVALID as
 * arithmetic not matching the raw samples).
 */
#include "gate.h"

#include "tl_fs.h"
#include "tl_hash.h"
#include "tl_json.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *xdup(const char *s) { return strdup(s ? s : ""); }

int gr_is_report_name(const char *name)
{
    size_t l = strlen(name);
    if (l < 6 || strcmp(name + l - 5, ".json")) return 0;
    static const char *const not_reports[] = { "gate-summary.json", "gate-config.json", "quiet-pregate.json",
                                               "attempt-manifest.json", "staging.json", NULL };
    for (int i = 0; not_reports[i]; i++)
        if (!strcmp(name, not_reports[i])) return 0;
    return 1;
}

/* A number, or a string holding a decimal number. NaN when neither. */
static double num(const cJSON *v)
{
    if (cJSON_IsNumber(v)) return v->valuedouble;
    if (cJSON_IsString(v) && v->valuestring[0]) {
        char *end;
        errno = 0;
        double d = strtod(v->valuestring, &end);
        if (!*end && !errno) return d;
    }
    return NAN;
}

static double field(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return v ? num(v) : NAN;
}

static const char *sfield(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

double gr_sample_value(const gr_sample *s)
{
    return s->ops > 0 ? (s->ns - s->control_ns) / s->ops : NAN;
}

static void fail(gr_report *r, const char *fmt, const char *a)
{
    if (r->error) return;
    char b[512];
    snprintf(b, sizeof b, fmt, a ? a : "");
    r->error = xdup(b);
    r->ok = 0;
}

/* Fill one (row, subject) entry from its JSON object. */
static void read_entry(gr_report *r, gr_row *row, const cJSON *e)
{
    const cJSON *sup = cJSON_GetObjectItemCaseSensitive(e, "supported");
    row->supported = !sup || cJSON_IsTrue(sup);
    if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "status")) &&
        !strcmp(sfield(e, "status"), "NA"))
        row->supported = 0;
    row->claimed_mean = field(e, "meanNsPerOp");
    row->claimed_median = field(e, "medianNsPerOp");
    row->claimed_nspo = field(e, "nsPerOp");
    row->claimed_alloc = field(e, "allocBytesPerOp");
    row->retained = field(e, "retainedBytes");
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(e, "gated");
    row->gated = cJSON_IsBool(g) ? cJSON_IsTrue(g) : -1;
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(e, "controlSubtracted");
    int subtract = !cs || cJSON_IsTrue(cs); /* absent: a stated controlNs is subtracted */
    double ops_default = field(e, "opsPerSample");
    const cJSON *ops_arr = cJSON_GetObjectItemCaseSensitive(e, "ops");
    if (isnan(ops_default) && !cJSON_IsArray(ops_arr)) ops_default = field(e, "ops");
    const cJSON *ss = cJSON_GetObjectItemCaseSensitive(e, "sampleRecords");
    if (!ss) ss = cJSON_GetObjectItemCaseSensitive(e, "samples");
    const cJSON *ns_arr = cJSON_GetObjectItemCaseSensitive(e, "ns");
    if (!ss && cJSON_IsArray(ns_arr)) ss = ns_arr;
    if (!ss) return;
    if (!cJSON_IsArray(ss)) { fail(r, "row '%s': samples is not an array", row->name); return; }
    int n = cJSON_GetArraySize(ss);
    row->s = calloc((size_t)n + 1, sizeof *row->s);
    const cJSON *allocs = cJSON_GetObjectItemCaseSensitive(e, "allocs");
    const cJSON *bytes = cJSON_GetObjectItemCaseSensitive(e, "allocBytes");
    const cJSON *ctrl = cJSON_GetObjectItemCaseSensitive(e, "controlNs");
    const cJSON *x;
    cJSON_ArrayForEach(x, ss) {
        gr_sample *s = &row->s[row->n];
        s->claimed_nspo = NAN;
        if (cJSON_IsObject(x)) {
            s->ns = field(x, "ns");
            s->ops = field(x, "ops");
            if (isnan(s->ops)) s->ops = ops_default;
            s->control_ns = subtract ? field(x, "controlNs") : 0;
            if (isnan(s->control_ns)) s->control_ns = 0;
            s->allocs = field(x, "allocs");
            s->bytes = field(x, "bytes");
            if (isnan(s->bytes)) s->bytes = field(x, "allocBytes");
            s->claimed_nspo = field(x, "nsPerOp");
        } else {
            s->ns = num(x);
            s->ops = cJSON_IsArray(ops_arr) ? num(cJSON_GetArrayItem(ops_arr, (int)row->n)) : ops_default;
            s->control_ns = subtract && cJSON_IsArray(ctrl) ? num(cJSON_GetArrayItem(ctrl, (int)row->n)) : 0;
            if (isnan(s->control_ns)) s->control_ns = 0;
            s->allocs = cJSON_IsArray(allocs) ? num(cJSON_GetArrayItem(allocs, (int)row->n)) : NAN;
            s->bytes = cJSON_IsArray(bytes) ? num(cJSON_GetArrayItem(bytes, (int)row->n)) : NAN;
        }
        if (isnan(s->allocs)) s->allocs = 0;
        if (isnan(s->bytes)) s->bytes = 0;
        if (isnan(s->ns) || isnan(s->ops) || s->ns < 0 || s->ops <= 0) {
            fail(r, "row '%s': a sample without raw ns and a positive op count", row->name);
            row->n++;
            return;
        }
        /* the parallel arrays, when present beside the records, must agree with them */
        if (ss != ns_arr && cJSON_IsArray(ns_arr)) {
            double a = num(cJSON_GetArrayItem(ns_arr, (int)row->n));
            double o = cJSON_IsArray(ops_arr) ? num(cJSON_GetArrayItem(ops_arr, (int)row->n)) : s->ops;
            if (a != s->ns || o != s->ops) row->arrays_disagree = 1;
        }
        row->n++;
    }
    if (ss != ns_arr && cJSON_IsArray(ns_arr) && cJSON_GetArraySize(ns_arr) != (int)row->n) row->arrays_disagree = 1;
}

static gr_row *new_row(gr_report *r, const char *name, const char *subject)
{
    r->rows = realloc(r->rows, (r->nrows + 1) * sizeof *r->rows);
    gr_row *row = &r->rows[r->nrows++];
    memset(row, 0, sizeof *row);
    row->name = xdup(name);
    row->subject = xdup(subject);
    row->supported = 1;
    row->claimed_mean = row->claimed_median = row->claimed_nspo = row->claimed_alloc = row->retained = NAN;
    row->gated = -1;
    return row;
}

void gr_report_load(const char *runs_dir, const char *rel, gr_report *r)
{
    memset(r, 0, sizeof *r);
    r->file = xdup(rel);
    r->samples = -1;
    r->ok = 1;
    char *path = tl_join(runs_dir, rel);
    char *buf = NULL;
    size_t len = 0;
    int e = tl_read_all(path, &buf, &len);
    cJSON *doc = NULL;
    if (e) { fail(r, "cannot read: %s", strerror(e)); goto out; }
    tl_sha256_buf(buf, len, r->sha256);
    if (tl_json_parse(path, buf, len, &doc) || !cJSON_IsObject(doc)) { fail(r, "not a JSON object%s", ""); goto out; }

    const char *s;
    if (!(s = sfield(doc, "suite"))) { fail(r, "no suite%s", ""); goto out; }
    r->suite = xdup(s);
    if (!(s = sfield(doc, "backend"))) { fail(r, "no backend%s", ""); goto out; }
    r->backend = xdup(s);
    r->build_id = xdup(sfield(doc, "buildId"));
    const cJSON *settings = cJSON_GetObjectItemCaseSensitive(doc, "settings");
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(doc, "environment");
    s = sfield(settings, "retention");
    if (!s) s = sfield(doc, "retention");
    r->retention = xdup(s ? s : "matched");
    s = sfield(doc, "flags");
    if (!s) s = sfield(env, "flags");
    if (!s) s = sfield(env, "optimisationFlags");
    if (!s) s = sfield(env, "optimisation");
    r->flags = s ? xdup(s) : NULL;
    s = sfield(env, "buildType");
    if (!s) s = sfield(doc, "buildType");
    r->build_type = s ? xdup(s) : NULL;
    double sm = field(doc, "samples");
    if (isnan(sm)) sm = field(settings, "samples");
    r->samples = isnan(sm) ? -1 : (int)sm;

    const cJSON *c = cJSON_GetObjectItemCaseSensitive(doc, "completed");
    if (!c) c = cJSON_GetObjectItemCaseSensitive(doc, "passed");
    r->completed = cJSON_IsTrue(c);
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(doc, "failure");
    if (f && !cJSON_IsNull(f)) {
        if (cJSON_IsString(f)) r->failure = xdup(f->valuestring);
        else {
            char *t = cJSON_PrintUnformatted(f);
            r->failure = xdup(t);
            free(t);
        }
    }

    const cJSON *subs = cJSON_GetObjectItemCaseSensitive(doc, "subjects"), *x;
    cJSON_ArrayForEach(x, subs) {
        const char *n = cJSON_IsString(x) ? x->valuestring : sfield(x, "name");
        if (!n) continue;
        r->subjects = realloc(r->subjects, (r->nsubjects + 1) * sizeof *r->subjects);
        r->subjects[r->nsubjects++] = xdup(n);
    }

    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "rows");
    if (!cJSON_IsArray(rows)) { fail(r, "no rows array%s", ""); goto out; }
    cJSON_ArrayForEach(x, rows) {
        const char *name = sfield(x, "name");
        if (!name) { fail(r, "a row without a name%s", ""); goto out; }
        const char *subject = sfield(x, "subject");
        const cJSON *per = cJSON_GetObjectItemCaseSensitive(x, "subjects");
        if (subject) {
            read_entry(r, new_row(r, name, subject), x);
        } else if (cJSON_IsObject(per)) {
            const cJSON *e2;
            cJSON_ArrayForEach(e2, per) read_entry(r, new_row(r, name, e2->string), e2);
        } else if (cJSON_IsArray(per)) {
            const cJSON *e2;
            cJSON_ArrayForEach(e2, per) {
                const char *sn = sfield(e2, "name");
                if (!sn) sn = sfield(e2, "subject");
                if (!sn) { fail(r, "row '%s': a subject entry without a name", name); goto out; }
                read_entry(r, new_row(r, name, sn), e2);
            }
        } else {
            fail(r, "row '%s': no subject", name);
            goto out;
        }
    }
out:
    cJSON_Delete(doc);
    free(buf);
    free(path);
}

int gr_release(const gr_report *r, const char **why)
{
    if (r->build_type && strcmp(r->build_type, "Release") && strcmp(r->build_type, "RelWithDebInfo") &&
        strcmp(r->build_type, "release")) {
        *why = "environment.buildType is not Release";
        return 0;
    }
    if (!r->flags) { *why = "no compile flags recorded"; return 0; }
    if (!strstr(r->flags, "-DNDEBUG")) { *why = "compiled without -DNDEBUG"; return 0; }
    if (!strcmp(r->backend, "aot") && !strstr(r->flags, "-O2") && !strstr(r->flags, "-O3")) {
        *why = "AOT module not compiled at -O2/-O3";
        return 0;
    }
    if (strstr(r->flags, "-O0") || strstr(r->flags, "-fsanitize")) { *why = "debug or sanitizer flags"; return 0; }
    return 1;
}

void gr_report_free(gr_report *r)
{
    free(r->file);
    free(r->error);
    free(r->suite);
    free(r->backend);
    free(r->build_id);
    free(r->retention);
    free(r->flags);
    free(r->build_type);
    free(r->failure);
    for (size_t i = 0; i < r->nsubjects; i++) free(r->subjects[i]);
    free(r->subjects);
    for (size_t i = 0; i < r->nrows; i++) {
        free(r->rows[i].name);
        free(r->rows[i].subject);
        free(r->rows[i].s);
    }
    free(r->rows);
    memset(r, 0, sizeof *r);
}
