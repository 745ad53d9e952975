/*
 * ci_out.c - what CI servers read (issue 43, item 5): JUnit XML of the smoke cases and of
 * the gated rows, and a CSV of every gated and report-only row, written beside the JSON
 * they are made from (smoke-<backend>.json, gate-summary.json), so they can never say
 * something the JSON does not.
 *
 * JUnit: <testsuites name tests failures skipped time> holding one <testsuite> per backend
 * (name, tests, failures, skipped, time), one <testcase name classname time> per smoke case
 * or gated row, a <failure message type> for a failed case or a gated row over its limits
 * (message: the ratios and the limits), <skipped> for an NA row. The XML is written by
 * libxml2's text writer (escaping included): row names carry quotes and angle brackets.
 * CSV: RFC 4180 (a field with a comma, quote or newline is quoted, quotes doubled).
 */
#include "ci_out.h"

#include "tl_err.h"
#include "tl_fs.h"
#include "tl_json.h"

#include <cjson/cJSON.h>
#include <libxml/xmlwriter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static int jnum(const cJSON *o, const char *k, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (cJSON_IsNumber(v)) *out = v->valuedouble;
    return cJSON_IsNumber(v);
}

static void attr(xmlTextWriterPtr w, const char *k, const char *v) { xmlTextWriterWriteAttribute(w, BAD_CAST k, BAD_CAST v); }

static void attrf(xmlTextWriterPtr w, const char *k, const char *fmt, double v)
{
    char b[64];
    snprintf(b, sizeof b, fmt, v);
    attr(w, k, b);
}

/* One test case: its name, class, seconds, and NULL (passed), a failure, or a skip. */
typedef struct ci_case {
    char name[512], classname[128], message[512];
    double seconds;
    int failed, skipped;
} ci_case;

typedef struct ci_suite {
    char name[64];
    ci_case *cases;
    int n;
} ci_suite;

static int write_junit(const char *path, const char *title, const ci_suite *s, int ns)
{
    int tests = 0, failures = 0, skipped = 0;
    double secs = 0;
    for (int i = 0; i < ns; i++)
        for (int c = 0; c < s[i].n; c++)
            tests++, failures += s[i].cases[c].failed, skipped += s[i].cases[c].skipped, secs += s[i].cases[c].seconds;
    xmlTextWriterPtr w = xmlNewTextWriterFilename(path, 0);
    if (!w) { tl_error(path, NULL, "cannot write the JUnit XML"); return 1; }
    xmlTextWriterSetIndent(w, 1);
    xmlTextWriterStartDocument(w, NULL, "UTF-8", NULL);
    xmlTextWriterStartElement(w, BAD_CAST "testsuites");
    attr(w, "name", title);
    attrf(w, "tests", "%.0f", tests);
    attrf(w, "failures", "%.0f", failures);
    attrf(w, "skipped", "%.0f", skipped);
    attrf(w, "time", "%.6f", secs);
    for (int i = 0; i < ns; i++) {
        int f = 0, k = 0;
        double t = 0;
        for (int c = 0; c < s[i].n; c++) f += s[i].cases[c].failed, k += s[i].cases[c].skipped, t += s[i].cases[c].seconds;
        xmlTextWriterStartElement(w, BAD_CAST "testsuite");
        attr(w, "name", s[i].name);
        attrf(w, "tests", "%.0f", s[i].n);
        attrf(w, "failures", "%.0f", f);
        attrf(w, "errors", "%.0f", 0);
        attrf(w, "skipped", "%.0f", k);
        attrf(w, "time", "%.6f", t);
        for (int c = 0; c < s[i].n; c++) {
            const ci_case *x = &s[i].cases[c];
            xmlTextWriterStartElement(w, BAD_CAST "testcase");
            attr(w, "name", x->name);
            attr(w, "classname", x->classname);
            attrf(w, "time", "%.6f", x->seconds);
            if (x->failed || x->skipped) {
                xmlTextWriterStartElement(w, BAD_CAST(x->failed ? "failure" : "skipped"));
                attr(w, "message", x->message);
                if (x->failed) attr(w, "type", title);
                xmlTextWriterEndElement(w);
            }
            xmlTextWriterEndElement(w);
        }
        xmlTextWriterEndElement(w);
    }
    int rc = xmlTextWriterEndDocument(w) < 0;
    xmlFreeTextWriter(w);
    if (rc) tl_error(path, NULL, "cannot write the JUnit XML");
    return rc;
}

int td_ci_smoke(const char *out_dir, const char *const *backends, int nb)
{
    ci_suite s[2];
    int ns = 0, bad = 0;
    for (int b = 0; b < nb && ns < 2; b++) {
        char name[64];
        snprintf(name, sizeof name, "smoke-%s.json", backends[b]);
        char *p = tl_join(out_dir, name);
        cJSON *d = NULL;
        if (!p || tl_json_load(p, &d)) { free(p); bad = 1; continue; }
        const cJSON *cases = cJSON_GetObjectItemCaseSensitive(d, "cases"), *c;
        ci_suite *S = &s[ns++];
        snprintf(S->name, sizeof S->name, "smoke.%s", backends[b]);
        S->cases = calloc((size_t)cJSON_GetArraySize(cases) + 1, sizeof *S->cases);
        S->n = 0;
        cJSON_ArrayForEach(c, cases) {
            ci_case *x = &S->cases[S->n++];
            double ns_ = 0;
            snprintf(x->name, sizeof x->name, "%s", jstr(c, "name"));
            snprintf(x->classname, sizeof x->classname, "tandem.smoke.%s", backends[b]);
            x->seconds = jnum(c, "ns", &ns_) ? ns_ / 1e9 : 0;
            x->failed = !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "passed"));
            if (x->failed) snprintf(x->message, sizeof x->message, "%s", jstr(c, "failure")[0] ? jstr(c, "failure") : "failed");
        }
        cJSON_Delete(d);
        free(p);
    }
    char *out = tl_join(out_dir, "smoke-junit.xml");
    if (!bad) bad = write_junit(out, "tandem smoke", s, ns);
    for (int i = 0; i < ns; i++) free(s[i].cases);
    free(out);
    return bad;
}

/* One CSV field, quoted when it must be. */
static void csv_field(FILE *f, const char *v, int last)
{
    if (strpbrk(v, ",\"\r\n")) {
        fputc('"', f);
        for (const char *p = v; *p; p++) {
            if (*p == '"') fputc('"', f);
            fputc(*p, f);
        }
        fputc('"', f);
    } else {
        fputs(v, f);
    }
    fputc(last ? '\n' : ',', f);
}

static int write_csv(const char *path, const cJSON *rows)
{
    static const char *const cols[] = { "suite", "retention", "row", "peer", "backend", "kind", "median", "worst",
                                        "thresholdMedian", "thresholdWorst", "result" };
    enum { NCOLS = sizeof cols / sizeof *cols };
    FILE *f = fopen(path, "w");
    if (!f) { tl_error(path, NULL, "cannot write the CSV"); return 1; }
    for (int i = 0; i < NCOLS; i++) csv_field(f, cols[i], i == NCOLS - 1);
    const cJSON *r;
    cJSON_ArrayForEach(r, rows) {
        for (int i = 0; i < NCOLS; i++) {
            char b[64] = "";
            double v;
            int numeric = i >= 6 && i <= 9;   /* median .. thresholdWorst; empty when null */
            if (numeric && jnum(r, cols[i], &v)) snprintf(b, sizeof b, "%.6f", v);
            csv_field(f, numeric ? b : jstr(r, cols[i]), i == NCOLS - 1);
        }
    }
    return fclose(f) ? (tl_error(path, NULL, "cannot write the CSV"), 1) : 0;
}

/* A gated row's failure message: what it measured against what it was allowed. */
static void gate_case(ci_case *x, const cJSON *r)
{
    double m = 0, w = 0, tm = 0, tw = 0;
    int hm = jnum(r, "median", &m), hw = jnum(r, "worst", &w);
    int htm = jnum(r, "thresholdMedian", &tm), htw = jnum(r, "thresholdWorst", &tw);
    snprintf(x->name, sizeof x->name, "%s / %s (%s) vs %s", jstr(r, "suite"), jstr(r, "row"), jstr(r, "retention"),
             jstr(r, "peer"));
    snprintf(x->classname, sizeof x->classname, "tandem.gate.%s.%s", jstr(r, "backend"), jstr(r, "suite"));
    x->failed = !strcmp(jstr(r, "result"), "FAIL");
    x->skipped = !strcmp(jstr(r, "result"), "NA");
    if (x->skipped) snprintf(x->message, sizeof x->message, "NA: the subject does not implement this row");
    if (x->failed && hm && hw)
        snprintf(x->message, sizeof x->message, "median ratio %.4f (limit %.4f), worst %.4f (limit %.4f)", m,
                 htm ? tm : 0, w, htw ? tw : 0);
}

int td_ci_gate(const char *out_dir)
{
    char *sp = tl_join(out_dir, "gate-summary.json"), *xp = tl_join(out_dir, "gate-junit.xml");
    char *cp = tl_join(out_dir, "gate-rows.csv");
    cJSON *d = NULL;
    int bad = !sp || tl_json_load(sp, &d);
    ci_suite s[8];
    int ns = 0;
    const cJSON *rows = bad ? NULL : cJSON_GetObjectItemCaseSensitive(d, "rows"), *r;
    size_t nrows = (size_t)cJSON_GetArraySize(rows) + 1;
    cJSON_ArrayForEach(r, rows) {
        if (!strcmp(jstr(r, "kind"), "report-only")) continue;   /* gated: "gated" and "sync" rows */
        char name[64];
        snprintf(name, sizeof name, "gate.%s", jstr(r, "backend"));
        int i = 0;
        while (i < ns && strcmp(s[i].name, name)) i++;
        if (i == ns && ns == 8) continue;
        if (i == ns) {
            snprintf(s[ns].name, sizeof s[ns].name, "%s", name);
            s[ns].cases = calloc(nrows, sizeof *s[ns].cases);
            s[ns++].n = 0;
        }
        gate_case(&s[i].cases[s[i].n++], r);
    }
    if (!bad) bad = write_junit(xp, "tandem gate", s, ns) | write_csv(cp, rows);
    for (int i = 0; i < ns; i++) free(s[i].cases);
    cJSON_Delete(d);
    free(sp);
    free(xp);
    free(cp);
    return bad;
}
