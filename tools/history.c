/*
 * history.c - `tandem history [DIR]`: the gated rows over the published packets, in commit
 * order, so a regression shows where it entered.
 *
 * A packet is a folder directly under DIR (default reports/) holding gate/gate-summary.json
 * and attempt-manifest.json (scripts/publish-packet.sh's layout); its commit is the
 * manifest's gitHead, ordered by `git rev-list --count` in --repo (ancestors first; one
 * commit's packets by folder name). Per gated row, peer and backend: the median ratio of
 * each packet (gate-summary.json rows) and, when the packet carries the instruction arm's
 * summaries (instructions/<suite>-<backend>-instructions.json), subject A's instructions
 * per op. Output: a Markdown table per suite on stdout (or --md FILE) and, with --out DIR,
 * history-<suite>.svg (one line per row, peer and backend; x: the packets).
 * Only what a packet commits is read: its raw runs (runs.zip) are kept outside the
 * repository (reports/README.md, "What a packet commits"), so history never needs them.
 *
 * Every file is opened through tl_read_file (regular files only, no links followed, size
 * capped) and parsed with cJSON; every number must be finite. A folder without the two
 * files is not a packet (noted); a packet with a file that is not what it must be is
 * MALFORMED: named on stderr with the reason and skipped (listed under the table too).
 * Exit: 0 at least one packet read; 1 none (or an output not written); 2 usage.
 */
#include "gate/gate_int.h"

#include "tl_err.h"
#include "tl_fs.h"
#include "tl_home.h"
#include "tl_json.h"
#include "tl_opt.h"
#include "tl_proc.h"
#include "tl_safe.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define HX_MAX_FILE (64u << 20)

static const tl_opt history_opts[] = {
    { "repo", 0, TL_OPT_PATH, "DIR", 0, 0, "the git repository the packets' commits are ordered in\n"
      "(default: Tandem's home, the source tree or PREFIX/share/tandem)" },
    { "out", 0, TL_OPT_PATH, "DIR", 0, 0, "also write history-<suite>.svg (a line chart per suite) and\n"
      "history.md there" },
    { "markdown", 0, TL_OPT_FLAG, NULL, 0, 0, "print the Markdown tables (history.md) instead of the\n"
      "terminal view" },
    { NULL, 0, 0, NULL, 0, 0, NULL }
};

static const tl_optspec history_spec = {
    "tandem history", "[DIR] [--repo DIR] [--out DIR] [--markdown]",
    "Per gated row, peer and backend: the median ratio (and, when the packet has the\n"
    "instruction arm, instructions per op of the subject) of every published packet under\n"
    "DIR (default reports/), in commit order. On the terminal, within 100 columns: the\n"
    "packets, then one line per row and backend: its last ratio, its trend (one mark per\n"
    "packet, low to high), and its change point (the packet where the ratio moved most).\n"
    "--markdown prints the Markdown tables instead; --out writes them (history.md) and an\n"
    "SVG line chart per suite. A packet: a folder with gate/gate-summary.json and\n"
    "attempt-manifest.json (its gitHead orders it).",
    history_opts,
    "A malformed packet (a file that is not a regular file, not JSON, a field missing or of\n"
    "the wrong type, a number that is not finite, a commit not in --repo) is named with the\n"
    "reason on stderr and skipped. Exit: 0 at least one packet read, 1 none or an output not\n"
    "written, 2 usage.",
    0, 1
};

typedef struct hx_val { double ratio, ins; } hx_val;

typedef struct hx_series {
    char *suite, *row, *peer, *backend;
    hx_val *v;                 /* per packet; NaN: absent */
} hx_series;

typedef struct hx_packet {
    char *name, *commit;
    long order;
    char *verdict, *base_verdict;
    cJSON *summary;
    cJSON *ins[GATE_MAX_SUITES * GATE_MAX_BACKENDS];
    int nins;
} hx_packet;

static int hx_commit_ok(const char *s)
{
    if (!s || strlen(s) != 40) return 0;
    for (int i = 0; i < 40; i++)
        if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i])) return 0;
    return 1;
}

/* A JSON file of the packet through the safe open. 0 ok; 1 with why. */
static int hx_load(const char *path, cJSON **out, char *why, size_t wlen)
{
    char *buf = NULL;
    size_t len = 0;
    int e = tl_read_file(path, TL_OPEN_NOFOLLOW, HX_MAX_FILE, &buf, &len);
    if (e) {
        snprintf(why, wlen, "%s: %s", path, tl_strerror(e));
        return 1;
    }
    *out = cJSON_ParseWithLength(buf, len);
    free(buf);
    if (!*out || !cJSON_IsObject(*out)) {
        cJSON_Delete(*out);
        *out = NULL;
        snprintf(why, wlen, "%s: not a JSON object", path);
        return 1;
    }
    return 0;
}

static const char *hx_str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

/* A number or null: 0 ok (*out NaN for null), 1 not a finite number. */
static int hx_num(const cJSON *o, const char *k, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    *out = NAN;
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return 1;
    *out = v->valuedouble;
    return 0;
}

/* The summary's rows and the instruction summaries: every field the history uses. */
static int hx_validate(hx_packet *p, const char *dir, char *why, size_t wlen)
{
    const char *kind = hx_str(p->summary, "kind");
    if (!kind || strcmp(kind, "tandem-gate-summary")) {
        snprintf(why, wlen, "gate/gate-summary.json: kind is not \"tandem-gate-summary\"");
        return 1;
    }
    if (!hx_str(p->summary, "verdict") || !hx_str(p->summary, "subject")) {
        snprintf(why, wlen, "gate/gate-summary.json: verdict and subject must be strings");
        return 1;
    }
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(p->summary, "rows"), *r;
    if (!cJSON_IsArray(rows)) {
        snprintf(why, wlen, "gate/gate-summary.json: rows is not an array");
        return 1;
    }
    int i = 0;
    cJSON_ArrayForEach(r, rows) {
        double m, w;
        if (!hx_str(r, "suite") || !hx_str(r, "row") || !hx_str(r, "peer") || !hx_str(r, "backend") ||
            !hx_str(r, "kind") || hx_num(r, "median", &m) || hx_num(r, "worst", &w) || (isfinite(m) && m <= 0)) {
            snprintf(why, wlen, "gate/gate-summary.json: rows[%d]: suite, row, peer, backend, kind must be strings and "
                                "median, worst finite positive numbers or null", i);
            return 1;
        }
        i++;
    }
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(p->summary, "baseline");
    if (b && (!cJSON_IsObject(b) || !hx_str(b, "verdict"))) {
        snprintf(why, wlen, "gate/gate-summary.json: baseline is not an object with a verdict");
        return 1;
    }
    /* the instruction arm, when published */
    char *id = tl_join(dir, "instructions");
    DIR *d = tl_is_dir(id) ? opendir(id) : NULL;
    struct dirent *e;
    int bad = 0;
    while (d && !bad && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 19 || strcmp(e->d_name + l - 18, "-instructions.json")) continue;
        if (p->nins == (int)(sizeof p->ins / sizeof p->ins[0])) break;
        char *f = tl_join(id, e->d_name);
        cJSON *doc = NULL;
        bad = hx_load(f, &doc, why, wlen);
        free(f);
        if (bad) break;
        const cJSON *ir;
        int k = 0;
        if (!hx_str(doc, "suite") || !hx_str(doc, "backend") || !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "rows")))
            bad = 1;
        cJSON_ArrayForEach(ir, cJSON_GetObjectItemCaseSensitive(doc, "rows")) {
            if (bad) break;
            const cJSON *per = cJSON_GetObjectItemCaseSensitive(ir, "subjects"), *s;
            if (!hx_str(ir, "name") || !cJSON_IsObject(per)) { bad = 1; break; }
            cJSON_ArrayForEach(s, per) {
                double v;
                if (!cJSON_IsNull(s) && (!cJSON_IsObject(s) || hx_num(s, "irPerOp", &v))) bad = 1;
            }
            k++;
        }
        if (bad) snprintf(why, wlen, "instructions/%s: not an instruction summary (suite, backend, rows[].name, "
                                     "rows[].subjects.*.irPerOp finite)", e->d_name);
        if (bad) cJSON_Delete(doc);
        else p->ins[p->nins++] = doc;
    }
    if (d) closedir(d);
    free(id);
    return bad;
}

static double hx_ins(const hx_packet *p, const char *suite, const char *backend, const char *row, const char *subject)
{
    for (int i = 0; i < p->nins; i++) {
        if (strcmp(hx_str(p->ins[i], "suite"), suite) || strcmp(hx_str(p->ins[i], "backend"), backend)) continue;
        const cJSON *r;
        cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(p->ins[i], "rows")) {
            if (strcmp(hx_str(r, "name"), row)) continue;
            double v;
            const cJSON *m = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "subjects"), subject);
            if (cJSON_IsObject(m) && !hx_num(m, "irPerOp", &v)) return v;
        }
    }
    return NAN;
}

static int hx_cmp(const void *a, const void *b)
{
    const hx_packet *x = a, *y = b;
    if (x->order != y->order) return x->order < y->order ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* One packet folder: 0 read, 1 not a packet (quiet), 2 malformed (why). */
static int hx_read(const char *root, const char *name, const char *repo, hx_packet *p, char *why, size_t wlen)
{
    memset(p, 0, sizeof *p);
    char *dir = tl_join(root, name), *sp = tl_join(dir, "gate/gate-summary.json"), *mp = tl_join(dir, "attempt-manifest.json");
    struct stat st;
    cJSON *man = NULL;
    int rc = 1;
    if (lstat(sp, &st) != 0 && lstat(mp, &st) != 0) goto done; /* neither: not a packet */
    rc = 2;
    if (hx_load(sp, &p->summary, why, wlen) || hx_load(mp, &man, why, wlen)) goto done;
    const char *head = hx_str(man, "gitHead");
    if (!hx_commit_ok(head)) {
        snprintf(why, wlen, "attempt-manifest.json: gitHead is not a 40-hex commit");
        cJSON_Delete(man);
        goto done;
    }
    p->commit = strdup(head);
    cJSON_Delete(man);
    char count[64] = "";
    const char *argv[] = { "git", "-C", repo, "rev-list", "--count", p->commit, NULL };
    char *end = NULL;
    if (tl_run_capture(argv, count, sizeof count, NULL) != 0 || !count[0] || (p->order = strtol(count, &end, 10)) < 0 ||
        *end) {
        snprintf(why, wlen, "commit %.12s is not in the repository %s", p->commit, repo);
        goto done;
    }
    if (hx_validate(p, dir, why, wlen)) goto done;
    p->name = strdup(name);
    p->verdict = strdup(hx_str(p->summary, "verdict"));
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(p->summary, "baseline");
    p->base_verdict = strdup(b ? hx_str(b, "verdict") : "-");
    rc = 0;
done:
    free(dir);
    free(sp);
    free(mp);
    return rc;
}

static void hx_free(hx_packet *p)
{
    free(p->name);
    free(p->commit);
    free(p->verdict);
    free(p->base_verdict);
    cJSON_Delete(p->summary);
    for (int i = 0; i < p->nins; i++) cJSON_Delete(p->ins[i]);
}

/* The series: every gated (not report-only) row, peer and backend of any packet. */
static hx_series *hx_collect(hx_packet *P, size_t np, size_t *ns)
{
    hx_series *S = NULL;
    *ns = 0;
    for (size_t k = 0; k < np; k++) {
        const char *subject = hx_str(P[k].summary, "subject");
        const cJSON *r;
        cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(P[k].summary, "rows")) {
            if (!strcmp(hx_str(r, "kind"), "report-only")) continue;
            const char *su = hx_str(r, "suite"), *ro = hx_str(r, "row"), *pe = hx_str(r, "peer"), *be = hx_str(r, "backend");
            size_t i;
            for (i = 0; i < *ns; i++)
                if (!strcmp(S[i].suite, su) && !strcmp(S[i].row, ro) && !strcmp(S[i].peer, pe) && !strcmp(S[i].backend, be))
                    break;
            if (i == *ns) {
                S = realloc(S, (*ns + 1) * sizeof *S);
                S[i] = (hx_series){ strdup(su), strdup(ro), strdup(pe), strdup(be), malloc(np * sizeof(hx_val)) };
                for (size_t q = 0; q < np; q++) S[i].v[q] = (hx_val){ NAN, NAN };
                (*ns)++;
            }
            hx_num(r, "median", &S[i].v[k].ratio);
            S[i].v[k].ins = hx_ins(&P[k], su, be, ro, subject);
        }
    }
    return S;
}

/* Terminal text: a name as it is, control characters shown as '?', cut to width columns
 * (ASCII names; '~' marks a cut). */
static void hx_cell(char *dst, size_t cap, const char *s, size_t width)
{
    size_t n = 0;
    for (; *s && n + 1 < cap && n < width; s++) dst[n++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
    if (*s && n) dst[n - 1] = '~';
    dst[n] = 0;
}

/* The trend of one series over the last `span` packets: one mark per packet from its
 * lowest to its highest ratio (a blank: no value), and the change point, the largest step
 * between two consecutive values ("" when none moved by 5%). */
static void hx_trend(const hx_series *s, size_t np, size_t span, char *marks, size_t mcap, char *change, size_t ccap)
{
    static const char *const level[] = { "\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588" };
    size_t from = np > span ? np - span : 0, m = 0, at = 0;
    double lo = INFINITY, hi = -INFINITY, best = 0, prev = NAN;
    for (size_t k = from; k < np; k++)
        if (!isnan(s->v[k].ratio)) lo = fmin(lo, s->v[k].ratio), hi = fmax(hi, s->v[k].ratio);
    marks[0] = change[0] = 0;
    for (size_t k = from; k < np && m + 4 < mcap; k++) {
        double r = s->v[k].ratio;
        const char *c = isnan(r) ? " " : level[hi > lo ? (int)((r - lo) / (hi - lo) * 7.0 + 0.5) : 3];
        m += (size_t)snprintf(marks + m, mcap - m, "%s", c);
        if (!isnan(r) && !isnan(prev) && fabs(r - prev) > best) best = fabs(r - prev), at = k;
        if (!isnan(r)) prev = r;
    }
    double before = NAN;
    for (size_t k = at; k-- > 0 && isnan(before);) before = s->v[k].ratio;
    if (best > 0 && !isnan(before) && best / before >= 0.05)
        snprintf(change, ccap, "#%zu %.3f>%.3f", at + 1, before, s->v[at].ratio);
}

/* The terminal view: every line within 100 columns, no Markdown or HTML escapes. */
static void hx_text(FILE *out, const hx_packet *P, size_t np, const hx_series *S, size_t ns)
{
    enum { SPAN = 24 };
    fprintf(out, "tandem history: %zu packet(s) in commit order; median ratio subject/peer (below 1.000: faster)\n",
            np);
    for (size_t k = 0; k < np; k++) {
        char name[48];
        hx_cell(name, sizeof name, P[k].name, 40);
        fprintf(out, "  #%-3zu %-40s %.7s  %-7s baseline: %s\n", k + 1, name, P[k].commit, P[k].verdict,
                P[k].base_verdict ? P[k].base_verdict : "-");
    }
    fprintf(out, "\n%-44s %-4s %6s  %-*s %s\n", "row (suite / row vs peer)", "be", "last", SPAN,
            np > SPAN ? "trend (last 24)" : "trend", "change point");
    for (size_t i = 0; i < ns; i++) {
        char label[512], cell[64], marks[SPAN * 4 + 8], change[48], last[16] = "-";
        snprintf(label, sizeof label, "%s / %s vs %s", S[i].suite, S[i].row, S[i].peer);
        hx_cell(cell, sizeof cell, label, 44);
        for (size_t k = np; k-- > 0;)
            if (!isnan(S[i].v[k].ratio)) { snprintf(last, sizeof last, "%.3f", S[i].v[k].ratio); break; }
        hx_trend(&S[i], np, SPAN, marks, sizeof marks, change, sizeof change);
        size_t cols = np < SPAN ? np : SPAN;   /* marks are one column each, 3 bytes */
        fprintf(out, "%-44s %-4.4s %6s  %s%*s %s\n", cell, S[i].backend, last, marks, (int)(SPAN - cols), "", change);
    }
    if (!ns) fprintf(out, "(no gated row in any packet)\n");
}

static void hx_md(gate_buf *b, const hx_packet *P, size_t np, const hx_series *S, size_t ns, const tl_strlist *skipped)
{
    gate_buf_printf(b, "# History of the gated rows\n\nPackets in commit order (median ratio of the subject to the peer; "
                       "below 1.00 the subject is faster; in brackets: the subject's instructions per op when the "
                       "packet has the instruction arm).\n\n| # | packet | commit | verdict | baseline |\n| --- | --- | --- | --- | --- |\n");
    for (size_t k = 0; k < np; k++) {
        char *n = gate_md_escape(P[k].name), *v = gate_md_escape(P[k].verdict), *bv = gate_md_escape(P[k].base_verdict);
        gate_buf_printf(b, "| %zu | %s | %.7s | %s | %s |\n", k + 1, n, P[k].commit, v, bv);
        free(n);
        free(v);
        free(bv);
    }
    const char *suite = NULL;
    for (size_t i = 0; i < ns; i++) {
        if (!suite || strcmp(suite, S[i].suite)) {
            suite = S[i].suite;
            gate_buf_printf(b, "\n## %s\n\n| row | backend | peer |", suite);
            for (size_t k = 0; k < np; k++) gate_buf_printf(b, " %zu: %.7s |", k + 1, P[k].commit);
            gate_buf_printf(b, "\n| --- | --- | --- |");
            for (size_t k = 0; k < np; k++) gate_buf_printf(b, " ---: |");
            gate_buf_printf(b, "\n");
        }
        char *ro = gate_md_escape(S[i].row), *pe = gate_md_escape(S[i].peer);
        gate_buf_printf(b, "| %s | %s | %s |", ro, S[i].backend, pe);
        free(ro);
        free(pe);
        for (size_t k = 0; k < np; k++) {
            const hx_val *v = &S[i].v[k];
            if (isnan(v->ratio) && isnan(v->ins)) gate_buf_printf(b, " - |");
            else if (isnan(v->ins)) gate_buf_printf(b, " %.3f |", v->ratio);
            else if (isnan(v->ratio)) gate_buf_printf(b, " - (%.1f) |", v->ins);
            else gate_buf_printf(b, " %.3f (%.1f) |", v->ratio, v->ins);
        }
        gate_buf_printf(b, "\n");
    }
    if (!ns) gate_buf_printf(b, "\n(no gated row in any packet)\n");
    if (skipped->n) {
        gate_buf_printf(b, "\n## Skipped\n\n");
        for (size_t i = 0; i < skipped->n; i++) {
            char *e = gate_md_escape(skipped->v[i]);
            gate_buf_printf(b, "- %s\n", e);
            free(e);
        }
    }
}

/* history-<suite>.svg: x = packets, y = median ratio; one polyline per series. */
static int hx_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The y range of one panel: from the lowest value (and 1.0) up to the highest that is not an
 * outlier, an outlier being above 3x the panel's median (an early 19x run would flatten
 * every later point); values above the range are drawn on its top edge, marked. */
static void hx_range(const hx_series *S, size_t ns, size_t first, size_t np, double *lo, double *hi)
{
    double v[4096];
    size_t n = 0;
    for (size_t i = first; i < ns && !strcmp(S[i].row, S[first].row) && !strcmp(S[i].suite, S[first].suite); i++)
        for (size_t k = 0; k < np && n < 4096; k++)
            if (!isnan(S[i].v[k].ratio)) v[n++] = S[i].v[k].ratio;
    qsort(v, n, sizeof *v, hx_cmp_double);
    double cap = n ? 3 * v[n / 2] : 1;
    *lo = 1;
    *hi = 1;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < *lo) *lo = v[i];
        if (v[i] > *hi && v[i] <= cap) *hi = v[i];
    }
    *lo = floor(*lo * 10) / 10;
    *hi = ceil(*hi * 10) / 10;
    if (*hi - *lo < 0.2) *hi = *lo + 0.2;
}

/* One panel: a row's series (AOT solid, JIT dashed) against the packets, at (x, y). */
static void hx_panel(gate_buf *b, const hx_series *S, size_t ns, size_t first, size_t np, int x, int y)
{
    enum { PW = 250, PH = 110, LEFT = 40, TOP = 22 };
    double lo, hi;
    hx_range(S, ns, first, np, &lo, &hi);
    char title[96];
    hx_cell(title, sizeof title, S[first].row, 48);
    char *et = gate_xml_escape(title);
    gate_buf_printf(b, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>\n", x + 4, y + 14, et);
    free(et);
#define PY(r) (y + TOP + PH - ((r) - lo) / (hi - lo) * PH)
#define PX(k) (x + LEFT + (np > 1 ? (double)(k) * PW / (double)(np - 1) : PW / 2.0))
    gate_buf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#ccc\"/>\n", x + LEFT,
                    y + TOP, PW, PH);
    gate_buf_printf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.2f</text>\n<text x=\"%d\" y=\"%.1f\" "
                       "text-anchor=\"end\">%.2f</text>\n", x + LEFT - 3, PY(hi) + 4, hi, x + LEFT - 3, PY(lo) + 4, lo);
    gate_buf_printf(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#444\" stroke-dasharray=\"2 2\"/>\n"
                       "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#444\">1.00</text>\n", x + LEFT,
                    x + LEFT + PW, PY(1.0), PY(1.0), x + LEFT - 3, PY(1.0) + 4);
    for (size_t k = 0; k < np; k += np > 12 ? (np + 11) / 12 : 1)   /* at most 12 labels: readable */
        gate_buf_printf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#666\">%zu</text>\n", PX(k),
                        y + TOP + PH + 12, k + 1);
    for (size_t i = first; i < ns && !strcmp(S[i].row, S[first].row) && !strcmp(S[i].suite, S[first].suite); i++) {
        const char *colr = strcmp(S[i].backend, "jit") ? "#1f77b4" : "#d62728";
        gate_buf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s points=\"", colr,
                        strcmp(S[i].backend, "jit") ? "" : " stroke-dasharray=\"4 2\"");
        for (size_t k = 0; k < np; k++)
            if (!isnan(S[i].v[k].ratio)) gate_buf_printf(b, "%.1f,%.1f ", PX(k), PY(fmin(S[i].v[k].ratio, hi)));
        gate_buf_printf(b, "\"/>\n");
        for (size_t k = 0; k < np; k++) {
            double r = S[i].v[k].ratio;
            if (isnan(r)) continue;
            if (r <= hi) {
                gate_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"%s\"/>\n", PX(k), PY(r), colr);
                continue;
            }
            gate_buf_printf(b, "<path d=\"M%.1f %.1f l-4 7 h8 z\" fill=\"%s\"><title>%.2f: beyond the plot</title></path>\n"
                               "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" fill=\"%s\">%.1f</text>\n", PX(k), PY(hi), colr,
                            r, PX(k) + 5, PY(hi) + 9, colr, r);
        }
    }
#undef PY
#undef PX
}

/* One suite's chart: a small panel per gated row (its AOT and JIT series), three across,
 * a labelled 1.0 line in each, packets numbered on the x axis and listed with their commits
 * below, values beyond a panel's range marked on its top edge. */
static char *hx_svg(const char *suite, const hx_packet *P, size_t np, const hx_series *S, size_t ns)
{
    enum { COLS = 3, CW = 310, CH = 160 };
    size_t panels = 0;
    for (size_t i = 0; i < ns; i++)
        if (!strcmp(S[i].suite, suite) && (!i || strcmp(S[i - 1].row, S[i].row) || strcmp(S[i - 1].suite, suite))) panels++;
    int rows = (int)((panels + COLS - 1) / COLS), key = (int)((np + 3) / 4) * 14 + 24;
    int W = COLS * CW + 20, H = 34 + rows * CH + key;
    gate_buf b = { 0 };
    char *es = gate_xml_escape(suite);
    gate_buf_printf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
                        "font-size=\"10\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                        "<text x=\"8\" y=\"18\" font-size=\"13\" font-weight=\"bold\">%s: median ratio per packet, "
                        "AOT solid blue, JIT dashed red (below 1.00: faster than the peer)</text>\n", W, H, es);
    free(es);
    size_t p = 0;
    for (size_t i = 0; i < ns; i++) {
        if (strcmp(S[i].suite, suite) || (i && !strcmp(S[i - 1].row, S[i].row) && !strcmp(S[i - 1].suite, suite)))
            continue;
        hx_panel(&b, S, ns, i, np, 10 + (int)(p % COLS) * CW, 30 + (int)(p / COLS) * CH);
        p++;
    }
    int ky = 34 + rows * CH + 10;
    gate_buf_printf(&b, "<text x=\"10\" y=\"%d\" font-weight=\"bold\">packets (x axis)</text>\n", ky);
    for (size_t k = 0; k < np; k++) {
        char name[48];
        hx_cell(name, sizeof name, P[k].name, 28);
        char *en = gate_xml_escape(name);
        gate_buf_printf(&b, "<text x=\"%d\" y=\"%d\">%zu: %.7s %s</text>\n", 10 + (int)(k % 4) * 235,
                        ky + 14 + (int)(k / 4) * 14, k + 1, P[k].commit, en);
        free(en);
    }
    gate_buf_printf(&b, "</svg>\n");
    return b.p;
}

static int hx_put(const char *dir, const char *name, const char *text)
{
    char *p = tl_join(dir, name);
    int e = tl_write_atomic(p, text, strlen(text), 0644);
    if (e) tl_error(p, NULL, "cannot write: %s", tl_strerror(e));
    free(p);
    return e != 0;
}

int td_verb_history(int argc, char **argv)
{
    tl_optres o;
    int prc = tl_opt_parse(&history_spec, argc, argv, &o);
    if (prc) { tl_opt_free(&o); return prc == TL_OPT_HELP ? 0 : 2; }
    const char *root = o.npos ? o.pos[0] : "reports";
    const char *repo = tl_opt_str(&o, "repo", tl_home() ? tl_home() : "."), *out = tl_opt_str(&o, "out", NULL);
    int markdown = tl_opt_given(&o, "markdown") > 0;
    tl_opt_free(&o);
    if (!tl_is_dir(root)) {
        tl_error(root, NULL, "not a folder of packets");
        return 1;
    }
    tl_strlist names = { 0 }, skipped = { 0 };
    DIR *d = opendir(root);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char *p = tl_join(root, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) tl_strlist_push(&names, e->d_name);
        free(p);
    }
    if (d) closedir(d);
    tl_strlist_sort(&names);
    hx_packet *P = calloc(names.n + 1, sizeof *P);
    size_t np = 0;
    for (size_t i = 0; i < names.n; i++) {
        char why[1024] = "";
        int r = hx_read(root, names.v[i], repo, &P[np], why, sizeof why);
        if (r == 0) { np++; continue; }
        hx_free(&P[np]);
        if (r == 1) continue;
        fprintf(stderr, "tandem history: %s/%s: malformed packet, skipped: %s\n", root, names.v[i], why);
        char line[1400];
        snprintf(line, sizeof line, "%s: %s", names.v[i], why);
        tl_strlist_push(&skipped, line);
    }
    qsort(P, np, sizeof *P, hx_cmp);
    size_t ns;
    hx_series *S = hx_collect(P, np, &ns);
    /* suites in first-appearance order (the gate's order), rows grouped under them */
    hx_series *sorted = malloc((ns + 1) * sizeof *sorted);
    size_t k = 0;
    for (size_t i = 0; i < ns; i++) {
        int seen = 0;
        for (size_t j = 0; j < i; j++) seen |= !strcmp(S[j].suite, S[i].suite);
        if (seen) continue;
        for (size_t j = i; j < ns; j++)
            if (!strcmp(S[j].suite, S[i].suite)) sorted[k++] = S[j];
    }
    gate_buf md = { 0 };
    hx_md(&md, P, np, sorted, ns, &skipped);
    if (markdown) fputs(md.p, stdout);
    else if (np) hx_text(stdout, P, np, sorted, ns);
    int rc = np ? 0 : 1;
    if (!np) fprintf(stderr, "tandem history: no packet read under %s\n", root);
    if (out && np) {
        if (tl_mkdirs(out)) { tl_error(out, "--out", "cannot create"); rc = 1; }
        else {
            rc |= hx_put(out, "history.md", md.p);
            for (size_t i = 0; i < ns; i++) {
                if (i && !strcmp(sorted[i - 1].suite, sorted[i].suite)) continue;
                char name[128];
                snprintf(name, sizeof name, "history-%.100s.svg", sorted[i].suite);
                for (char *c = name; *c; c++)
                    if (!isalnum((unsigned char)*c) && *c != '.' && *c != '-' && *c != '_') *c = '_';
                char *svg = hx_svg(sorted[i].suite, P, np, sorted, ns);
                rc |= hx_put(out, name, svg);
                free(svg);
            }
        }
    }
    free(md.p);
    for (size_t i = 0; i < ns; i++) {
        free(S[i].suite);
        free(S[i].row);
        free(S[i].peer);
        free(S[i].backend);
        free(S[i].v);
    }
    free(S);
    free(sorted);
    for (size_t i = 0; i < np; i++) hx_free(&P[i]);
    free(P);
    tl_strlist_free(&names);
    tl_strlist_free(&skipped);
    return rc;
}
