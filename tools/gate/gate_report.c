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
 *       { subject, name, supported, reason, skipped, samples: [ {ns, ops, allocs, bytes, controlNs,
 *         nsPerOp}, ... ], nsPerOp, meanNsPerOp, medianNsPerOp, allocBytesPerOp, retainedBytes }
 *     or one per row with subjects { "<name>": { ...same entry fields... } }.
 *   A sample may also be a bare number / decimal string (raw ns) with "ops" or
 *   "opsPerSample" given on the entry. Integers may be strings (beyond 2^53).
 *
 * The player shell's bench report (host/shell/report.c, pl_row_stats) writes per entry:
 *   sampleRecords [ {ns, ops, allocs, frees, bytes, check, controlNs, retainedBytes} ],
 *   the same as parallel arrays ns[], ops[], allocs[], allocBytes[], controlNs[],
 *   retained[], check[]; gated (bool), sampleCount, opsPerSample, controlSubtracted
 *   (controlNs is subtracted only when true), nsPerOp = (sum ns - sum control) / sum ops,
 *   medianNsPerOp, allocsPerOp, allocBytesPerOp, retainedBytes (the worst sample's, timed segments only);
 *   settings.retention, settings.flow; environment.optimisationFlags; per sample segments
 *   (records and a parallel array: timed segments, two clock reads each) and units; the
 *   report's clock { name, readCostNs, granularityNs, ... } (host/shell/clock.c).
 *   segments and the clock are optional (older reports); when present they are checked.
 * When both the records and the arrays are present they must agree (else INVALID as
 * arithmetic not matching the raw samples).
 */
#include "gate.h"

#include "tl_fs.h"
#include "tl_hash.h"
#include "tl_json.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
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

/* Largest raw count the reader accepts (ns, ops, bytes): 2^63, an int64 clock's range. */
#define GR_MAX 9223372036854775808.0
/* Largest report file read (a real report is a few hundred KiB). */
#define GR_MAX_BYTES ((size_t)256 << 20)

/* A finite JSON number, or a string holding a plain decimal number (integers beyond 2^53
 * travel as strings). "inf", "nan", hex, blanks and the empty string are refused.
 * 0 ok, 1 mistyped (*why set). */
static int strict_num(const cJSON *v, double *out, const char **why)
{
    double d;
    if (cJSON_IsNumber(v)) {
        d = v->valuedouble;
    } else if (cJSON_IsString(v)) {
        const char *t = v->valuestring;
        size_t i = t[0] == '-' ? 1 : 0;
        if (!isdigit((unsigned char)t[i])) { *why = "not a decimal number"; return 1; }
        for (; t[i]; i++)
            if (!isdigit((unsigned char)t[i]) && !strchr(".eE+-", t[i])) { *why = "not a decimal number"; return 1; }
        char *end;
        errno = 0;
        d = strtod(t, &end);
        if (*end || errno == EINVAL) { *why = "not a decimal number"; return 1; }
    } else {
        *why = "not a number";
        return 1;
    }
    if (!isfinite(d)) { *why = "not a finite number"; return 1; }
    *out = d;
    return 0;
}

static void fail(gr_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(gr_report *r, const char *fmt, ...)
{
    if (r->error) return;
    char b[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    r->error = xdup(b);
    r->ok = 0;
}

/* Where a value sits, for messages: "row 'X' subject 'Y' sample 3". */
typedef struct where { const char *row, *subject; long sample; } where;

static const char *at(const where *w, char *b, size_t len)
{
    if (w->sample >= 0) snprintf(b, len, "row '%s' subject '%s' sample %ld", w->row, w->subject, w->sample);
    else snprintf(b, len, "row '%s' subject '%s'", w->row, w->subject);
    return b;
}

/* An optional numeric value v (NULL: absent -> *out = NaN). Present: finite, within
 * [lo, hi] (lo excluded when lo_open), an integer when whole. 0 ok, 1 refused (r failed). */
static int checked(gr_report *r, const where *w, const char *key, const cJSON *v, double lo, int lo_open, double hi,
                   int whole, double *out)
{
    *out = NAN;
    if (!v) return 0;
    const char *why = NULL;
    double d = 0;
    char b[512];
    if (strict_num(v, &d, &why)) {
        if (cJSON_IsNumber(v)) { /* printed as null by cJSON: say what it is */
            fail(r, "%s: %s: %s (%s)", at(w, b, sizeof b), key, why, isnan(v->valuedouble) ? "NaN" : "infinite");
            return 1;
        }
        char *t = cJSON_PrintUnformatted(v);
        fail(r, "%s: %s: %s (%.40s)", at(w, b, sizeof b), key, why, t ? t : "?");
        free(t);
        return 1;
    }
    if (d < lo || (lo_open && d == lo) || d > hi) {
        fail(r, "%s: %s: %.17g is out of range (%s %.17g .. %.17g)", at(w, b, sizeof b), key, d,
             lo_open ? "above" : "from", lo, hi);
        return 1;
    }
    if (whole && d != floor(d)) {
        fail(r, "%s: %s: %.17g is not an integer", at(w, b, sizeof b), key, d);
        return 1;
    }
    *out = d;
    return 0;
}

static const cJSON *get(const cJSON *o, const char *key) { return cJSON_GetObjectItemCaseSensitive(o, key); }

static const char *sfield(const cJSON *o, const char *key)
{
    const cJSON *v = get(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* An optional boolean: absent -> dflt; present and not a boolean -> refused. */
static int boolean(gr_report *r, const where *w, const cJSON *o, const char *key, int dflt, int *out)
{
    const cJSON *v = get(o, key);
    *out = dflt;
    if (!v) return 0;
    if (!cJSON_IsBool(v)) {
        char b[512];
        fail(r, "%s: %s: not a boolean", at(w, b, sizeof b), key);
        return 1;
    }
    *out = cJSON_IsTrue(v);
    return 0;
}

double gr_sample_value(const gr_sample *s)
{
    return s->ops > 0 ? (s->ns - s->control_ns) / s->ops : NAN;
}

/* Fill one (row, subject) entry from its JSON object; every number is checked. */
static void read_entry(gr_report *r, gr_row *row, const cJSON *e)
{
    where w = { row->name, row->subject, -1 };
    char b[512];
    if (!cJSON_IsObject(e)) { fail(r, "%s: not an object", at(&w, b, sizeof b)); return; }
    int bad = boolean(r, &w, e, "supported", 1, &row->supported);
    const char *st = sfield(e, "status");
    if (st && !strcmp(st, "NA")) row->supported = 0;
    int gated = -1, subtract = 1;
    bad |= boolean(r, &w, e, "skipped", 0, &row->skipped);
    if (row->skipped && row->supported) fail(r, "%s: skipped: true on a supported row", at(&w, b, sizeof b));
    if (get(e, "gated")) bad |= boolean(r, &w, e, "gated", 0, &gated);
    row->gated = gated;
    /* an unsupported entry (NA) states no measurement: its null statistics and empty
     * arrays are never read, it is compared only for agreement between processes */
    if (bad || !row->supported) return;
    bad |= checked(r, &w, "meanNsPerOp", get(e, "meanNsPerOp"), 0, 0, GR_MAX, 0, &row->claimed_mean);
    bad |= checked(r, &w, "medianNsPerOp", get(e, "medianNsPerOp"), 0, 0, GR_MAX, 0, &row->claimed_median);
    bad |= checked(r, &w, "nsPerOp", get(e, "nsPerOp"), 0, 0, GR_MAX, 0, &row->claimed_nspo);
    bad |= checked(r, &w, "allocBytesPerOp", get(e, "allocBytesPerOp"), 0, 0, GR_MAX, 0, &row->claimed_alloc);
    /* retained bytes are a difference over the run: negative when the run released memory */
    bad |= checked(r, &w, "retainedBytes", get(e, "retainedBytes"), -GR_MAX, 0, GR_MAX, 1, &row->retained);
    bad |= boolean(r, &w, e, "controlSubtracted", 1, &subtract); /* absent: a stated controlNs is subtracted */
    double ops_default = NAN, count = NAN;
    const cJSON *ops_arr = get(e, "ops");
    bad |= checked(r, &w, "opsPerSample", get(e, "opsPerSample"), 1, 0, GR_MAX, 1, &ops_default);
    if (isnan(ops_default) && ops_arr && !cJSON_IsArray(ops_arr))
        bad |= checked(r, &w, "ops", ops_arr, 1, 0, GR_MAX, 1, &ops_default);
    bad |= checked(r, &w, "sampleCount", get(e, "sampleCount"), 0, 0, 1e6, 1, &count);
    if (bad) return;
    const cJSON *ss = get(e, "sampleRecords");
    if (!ss) ss = get(e, "samples");
    const cJSON *ns_arr = get(e, "ns");
    if (ns_arr && !cJSON_IsArray(ns_arr)) { fail(r, "%s: ns: not an array", at(&w, b, sizeof b)); return; }
    if (!ss && ns_arr) ss = ns_arr;
    if (!ss) {
        if (row->supported) fail(r, "%s: a supported row without samples", at(&w, b, sizeof b));
        return;
    }
    if (!cJSON_IsArray(ss)) { fail(r, "%s: samples: not an array", at(&w, b, sizeof b)); return; }
    int n = cJSON_GetArraySize(ss);
    if (!n && row->supported) { fail(r, "%s: a supported row with an empty samples array", at(&w, b, sizeof b)); return; }
    if (n > 1000000) { fail(r, "%s: samples: %d entries (more than 1000000)", at(&w, b, sizeof b), n); return; }
    static const char *const arr_keys[] = { "ops", "allocs", "allocBytes", "controlNs", "segments", NULL };
    for (int k = 0; arr_keys[k]; k++) {
        const cJSON *a = get(e, arr_keys[k]);
        if (a && cJSON_IsArray(a) && cJSON_GetArraySize(a) != n)
            fail(r, "%s: %s: %d entries, the samples have %d", at(&w, b, sizeof b), arr_keys[k], cJSON_GetArraySize(a), n);
        else if (a && !cJSON_IsArray(a) && strcmp(arr_keys[k], "ops"))
            fail(r, "%s: %s: not an array", at(&w, b, sizeof b), arr_keys[k]);
    }
    if (ns_arr && ss != ns_arr && cJSON_GetArraySize(ns_arr) != n) row->arrays_disagree = 1;
    if (!r->ok) return;
    if (!isnan(count) && count != (double)n) {
        fail(r, "%s: sampleCount %.0f but %d samples", at(&w, b, sizeof b), count, n);
        return;
    }
    row->s = calloc((size_t)n + 1, sizeof *row->s);
    const cJSON *allocs = get(e, "allocs"), *bytes = get(e, "allocBytes"), *ctrl = get(e, "controlNs");
    const cJSON *segs = get(e, "segments");
    const cJSON *x;
    cJSON_ArrayForEach(x, ss) {
        gr_sample *s = &row->s[row->n];
        w.sample = (long)row->n;
        int i = (int)row->n;
        const cJSON *vns, *vops, *vctl, *val, *vby, *vclaim = NULL, *vseg;
        if (cJSON_IsObject(x)) {
            vns = get(x, "ns");
            vops = get(x, "ops");
            vctl = get(x, "controlNs");
            val = get(x, "allocs");
            vby = get(x, "bytes");
            if (!vby) vby = get(x, "allocBytes");
            vclaim = get(x, "nsPerOp");
            vseg = get(x, "segments");
        } else {
            vns = x;
            vops = cJSON_IsArray(ops_arr) ? cJSON_GetArrayItem(ops_arr, i) : NULL;
            vctl = cJSON_IsArray(ctrl) ? cJSON_GetArrayItem(ctrl, i) : NULL;
            val = cJSON_IsArray(allocs) ? cJSON_GetArrayItem(allocs, i) : NULL;
            vby = cJSON_IsArray(bytes) ? cJSON_GetArrayItem(bytes, i) : NULL;
            vseg = cJSON_IsArray(segs) ? cJSON_GetArrayItem(segs, i) : NULL;
        }
        if (!vns) { fail(r, "%s: no raw ns", at(&w, b, sizeof b)); return; }
        if (checked(r, &w, "ns", vns, 0, 1, GR_MAX, 0, &s->ns)) return;
        if (checked(r, &w, "ops", vops, 1, 0, GR_MAX, 1, &s->ops)) return;
        if (isnan(s->ops)) s->ops = ops_default;
        if (isnan(s->ops)) { fail(r, "%s: no op count", at(&w, b, sizeof b)); return; }
        double ctl;
        if (checked(r, &w, "controlNs", vctl, 0, 0, GR_MAX, 0, &ctl)) return;
        s->control_ns = subtract && !isnan(ctl) ? ctl : 0;
        if (s->control_ns >= s->ns) {
            fail(r, "%s: controlNs %.17g is not below the measurement ns %.17g", at(&w, b, sizeof b), s->control_ns, s->ns);
            return;
        }
        if (checked(r, &w, "allocs", val, 0, 0, GR_MAX, 1, &s->allocs)) return;
        if (checked(r, &w, "bytes", vby, 0, 0, GR_MAX, 1, &s->bytes)) return;
        if (checked(r, &w, "nsPerOp", vclaim, 0, 0, GR_MAX, 0, &s->claimed_nspo)) return;
        if (checked(r, &w, "segments", vseg, 1, 0, GR_MAX, 1, &s->segments)) return;
        if (cJSON_IsObject(x) && cJSON_IsArray(segs)) { /* the array beside the records must agree */
            double a = NAN;
            const char *why;
            const cJSON *as = cJSON_GetArrayItem(segs, i);
            if (!as || strict_num(as, &a, &why) || (!isnan(s->segments) && a != s->segments)) row->arrays_disagree = 1;
        }
        if (isnan(s->allocs)) s->allocs = 0;
        if (isnan(s->bytes)) s->bytes = 0;
        /* the parallel arrays, when present beside the records, must agree with them */
        if (ss != ns_arr && cJSON_IsArray(ns_arr)) {
            double a = NAN, o = s->ops;
            const char *why;
            const cJSON *an = cJSON_GetArrayItem(ns_arr, i), *ao = cJSON_IsArray(ops_arr) ? cJSON_GetArrayItem(ops_arr, i) : NULL;
            if (!an || strict_num(an, &a, &why) || (ao && strict_num(ao, &o, &why)) || a != s->ns || o != s->ops)
                row->arrays_disagree = 1;
        }
        row->n++;
    }
}

/* A new (row, subject) entry; NULL (r failed) when the report already has one: a
 * duplicate row is contradictory evidence, never "the first wins". */
static gr_row *new_row(gr_report *r, const char *name, const char *subject)
{
    if (!name[0] || !subject[0]) {
        fail(r, "row '%s' subject '%s': an empty row or subject name", name, subject);
        return NULL;
    }
    for (size_t i = 0; i < r->nrows; i++)
        if (!strcmp(r->rows[i].name, name) && !strcmp(r->rows[i].subject, subject)) {
            fail(r, "duplicate row '%s' for subject '%s'", name, subject);
            return NULL;
        }
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
    r->clock_read_ns = r->clock_granularity_ns = NAN;
    char *path = tl_join(runs_dir, rel);
    char *buf = NULL;
    size_t len = 0;
    int e = tl_read_file(path, TL_OPEN_NOFOLLOW, GR_MAX_BYTES, &buf, &len);
    cJSON *doc = NULL;
    if (e) { fail(r, "cannot read: %s", tl_strerror(e)); goto out; }
    tl_sha256_buf(buf, len, r->sha256);
    if (!tl_utf8_valid(buf, len)) { fail(r, "not valid UTF-8"); goto out; }
    if (tl_json_parse(path, buf, len, &doc) || !cJSON_IsObject(doc)) { fail(r, "not a JSON object"); goto out; }

    const char *s;
    if (!(s = sfield(doc, "suite"))) { fail(r, "no suite"); goto out; }
    r->suite = xdup(s);
    if (!(s = sfield(doc, "backend"))) { fail(r, "no backend"); goto out; }
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
    /* the subjects' load order (host/shell/main.c --load-reverse): the layout factor of a
     * baseline comparison; anything but the two names refuses the report */
    s = sfield(settings, "loadOrder");
    if (s && strcmp(s, "forward") && strcmp(s, "reverse")) { fail(r, "settings.loadOrder: expected \"forward\" or \"reverse\""); goto out; }
    r->layout = s && !strcmp(s, "reverse");
    /* and the build's layout seed (tandem-player --layout-seed; absent: 0, the default): one
     * layout is one (seed, load order); the seed is folded into the key (two seeds collide
     * with odds of 1 in 10^9) */
    const cJSON *ls = cJSON_GetObjectItemCaseSensitive(settings, "layoutSeed");
    if (ls && (!cJSON_IsNumber(ls) || !(ls->valuedouble >= 0) || ls->valuedouble > 9007199254740991.0 ||
               ls->valuedouble != floor(ls->valuedouble))) { fail(r, "settings.layoutSeed: expected an integer 0 .. 2^53 - 1"); goto out; }
    if (ls) r->layout += 2 * (int)fmod(ls->valuedouble, 1000000007.0);
    s = sfield(env, "buildType");
    if (!s) s = sfield(doc, "buildType");
    r->build_type = s ? xdup(s) : NULL;
    {
        where w = { "-", "-", -1 };
        double top = NAN, set = NAN;
        if (checked(r, &w, "samples", get(doc, "samples"), 1, 0, 1e6, 1, &top) ||
            checked(r, &w, "settings.samples", get(settings, "samples"), 1, 0, 1e6, 1, &set))
            goto out;
        if (!isnan(top) && !isnan(set) && top != set) {
            fail(r, "samples %.0f and settings.samples %.0f disagree", top, set);
            goto out;
        }
        r->samples = !isnan(top) ? (int)top : !isnan(set) ? (int)set : -1;
    }

    {   /* the clock the samples were timed with: optional, checked when present */
        const cJSON *ck = get(doc, "clock");
        where w = { "-", "-", -1 };
        if (ck && !cJSON_IsObject(ck)) { fail(r, "clock: not an object"); goto out; }
        if (ck) {
            const char *cn = sfield(ck, "name");
            if (!cn || !cn[0]) { fail(r, "clock: no name"); goto out; }
            r->clock_name = xdup(cn);
            if (checked(r, &w, "clock.readCostNs", get(ck, "readCostNs"), 0, 1, 1e9, 0, &r->clock_read_ns) ||
                checked(r, &w, "clock.granularityNs", get(ck, "granularityNs"), 0, 1, 1e9, 0, &r->clock_granularity_ns))
                goto out;
            if (isnan(r->clock_read_ns)) { fail(r, "clock: no readCostNs"); goto out; }
        }
    }

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
        if (!n || !n[0]) { fail(r, "subjects: an entry without a name"); goto out; }
        for (size_t k = 0; k < r->nsubjects; k++)
            if (!strcmp(r->subjects[k], n)) { fail(r, "subjects: '%s' listed twice", n); goto out; }
        r->subjects = realloc(r->subjects, (r->nsubjects + 1) * sizeof *r->subjects);
        r->subjects[r->nsubjects++] = xdup(n);
    }

    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "rows");
    if (!cJSON_IsArray(rows)) { fail(r, "no rows array"); goto out; }
    cJSON_ArrayForEach(x, rows) {
        const char *name = sfield(x, "name");
        if (!name) { fail(r, "a row without a name"); goto out; }
        const char *subject = sfield(x, "subject");
        const cJSON *per = cJSON_GetObjectItemCaseSensitive(x, "subjects");
        gr_row *row;
        if (subject) {
            if (!(row = new_row(r, name, subject))) goto out;
            read_entry(r, row, x);
        } else if (cJSON_IsObject(per)) {
            const cJSON *e2;
            cJSON_ArrayForEach(e2, per) {
                if (!(row = new_row(r, name, e2->string))) goto out;
                read_entry(r, row, e2);
            }
        } else if (cJSON_IsArray(per)) {
            const cJSON *e2;
            cJSON_ArrayForEach(e2, per) {
                const char *sn = sfield(e2, "name");
                if (!sn) sn = sfield(e2, "subject");
                if (!sn) { fail(r, "row '%s': a subject entry without a name", name); goto out; }
                if (!(row = new_row(r, name, sn))) goto out;
                read_entry(r, row, e2);
            }
        } else {
            fail(r, "row '%s': no subject", name);
            goto out;
        }
        if (!r->ok) goto out;
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
    free(r->clock_name);
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
