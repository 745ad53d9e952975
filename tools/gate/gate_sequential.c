/*
 * gate_sequential.c - the sequential rule for borderline rows (SEQUENTIAL.md; issue 42, item 4).
 *
 * The planned processes are look 0. A gated row borderline there (a threshold within its
 * noise band, gate_line_borderline) gets batches of more processes of its suite and backend:
 * the attempt writes which ones, by look, into runs/sequential/sequential.json. The gate does
 * not trust that record: it re-derives every look itself and refuses (INVALID) a process added
 * where no gated row of the suite and backend was still borderline, more than a batch per look,
 * a look skipped or more looks than the rule allows. Each row is decided at its first look
 * where it is not borderline, on the processes up to that look; a row still borderline when
 * its suite stopped getting processes is decided on all of them and says so. A row that was
 * not borderline after the planned processes is decided on those alone, whatever was added
 * for another row of its suite: more processes never reach a row that did not need them, and
 * whether a row goes on never depends on which side of the threshold it lies.
 */
#include "gate_int.h"

#include "tl_fs.h"
#include "tl_hash.h"
#include "tl_json.h"
#include "tl_safe.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SEQ_RECORD "sequential/sequential.json"

typedef struct gate_seq {
    int nlooks;
    size_t n;
    char **proc;     /* report files the rule added */
    int *look;       /* and the look (1..nlooks) each belongs to */
} gate_seq;

int gate_seq_borderline(const gate_config *c, const ge_line *L)
{
    size_t nok = 0;
    for (size_t p = 0; p < L->nproc; p++) nok += !isnan(L->ratio[p]);
    if (nok != 1 || L->kind == GL_REPORT || isnan(L->thr_median)) return gate_line_borderline(L);
    /* one process has no spread: the fixed band stands in for it (--quick) */
    double q = c->seq_quick_band;
    return fabs(L->median - L->thr_median) <= L->median * q ||
           (!isnan(L->thr_worst) && fabs(L->worst - L->thr_worst) <= L->worst * q);
}

static int seq_look_of(const gate_result *res, const char *report)
{
    const gate_seq *s = res->seq;
    for (size_t i = 0; s && i < s->n; i++)
        if (!strcmp(s->proc[i], report)) return s->look[i];
    return 0;
}

static const gr_report *seq_report(const gate_result *res, const char *file)
{
    for (size_t i = 0; i < res->nreps; i++)
        if (res->reps[i].ok && !strcmp(res->reps[i].file, file)) return &res->reps[i];
    return NULL;
}

/* The record's looks into res->seq; a malformed one is INVALID (no extra process counts). */
static void seq_parse(gate_result *res, const cJSON *doc)
{
    gate_seq *s = calloc(1, sizeof *s);
    res->seq = s;
    const cJSON *looks = cJSON_GetObjectItemCaseSensitive(doc, "looks"), *lk;
    if (!cJSON_IsArray(looks)) {
        ge_invalid(res, "%s: looks: expected an array", SEQ_RECORD);
        return;
    }
    cJSON_ArrayForEach(lk, looks) {
        int k = ++s->nlooks;
        const cJSON *num = cJSON_GetObjectItemCaseSensitive(lk, "look");
        const cJSON *ps = cJSON_GetObjectItemCaseSensitive(lk, "processes"), *p;
        if (!cJSON_IsNumber(num) || num->valuedouble != k || !cJSON_IsArray(ps)) {
            ge_invalid(res, "%s: looks[%d]: expected \"look\": %d and a \"processes\" array", SEQ_RECORD, k - 1, k);
            continue;
        }
        cJSON_ArrayForEach(p, ps) {
            if (!cJSON_IsString(p) || !seq_report(res, p->valuestring)) {
                ge_invalid(res, "%s: look %d: %s is not a report of the run", SEQ_RECORD, k,
                            cJSON_IsString(p) ? p->valuestring : "(not a string)");
                continue;
            }
            if (seq_look_of(res, p->valuestring)) {
                ge_invalid(res, "%s: %s is listed twice", SEQ_RECORD, p->valuestring);
                continue;
            }
            s->proc = realloc(s->proc, (s->n + 1) * sizeof *s->proc);
            s->look = realloc(s->look, (s->n + 1) * sizeof *s->look);
            s->proc[s->n] = strdup(p->valuestring);
            s->look[s->n++] = k;
        }
    }
    if (s->nlooks > res->cfg->seq_max_batches)
        ge_invalid(res, "%s: %d looks, the rule allows %d (sequential.maxBatches)", SEQ_RECORD, s->nlooks,
                    res->cfg->seq_max_batches);
}

void gate_seq_load(const char *runs_dir, gate_result *res)
{
    char *path = tl_join(runs_dir, SEQ_RECORD);
    struct stat st;
    int there = lstat(path, &st) == 0;
    char *buf = NULL;
    size_t len = 0;
    int e = there ? tl_read_file(path, TL_OPEN_NOFOLLOW, (size_t)16 << 20, &buf, &len) : 0;
    free(path);
    if (!there) return;
    if (e) {
        ge_invalid(res, "%s: cannot read: %s", SEQ_RECORD, tl_strerror(e));
        res->seq = calloc(1, sizeof *res->seq);
        return;
    }
    res->inputs = realloc(res->inputs, (res->ninputs + 1) * sizeof *res->inputs);
    ge_input *in = &res->inputs[res->ninputs++];
    in->file = strdup(SEQ_RECORD);
    tl_sha256_buf(buf, len, in->sha256);
    in->kind = "sequential";
    cJSON *doc = tl_utf8_valid(buf, len) ? cJSON_ParseWithLength(buf, len) : NULL;
    free(buf);
    if (!cJSON_IsObject(doc)) {
        ge_invalid(res, "%s: not a JSON object in UTF-8", SEQ_RECORD);
        res->seq = calloc(1, sizeof *res->seq);
    } else {
        seq_parse(res, doc);
    }
    cJSON_Delete(doc);
}

int gate_seq_extra(const gate_result *res, const char *suite, const char *backend)
{
    int n = 0;
    for (size_t i = 0; res->seq && i < res->seq->n; i++) {
        const gr_report *r = seq_report(res, res->seq->proc[i]);
        n += r && !strcmp(r->suite, suite) && !strcmp(r->backend, backend);
    }
    return n;
}

void gate_seq_free(gate_result *res)
{
    gate_seq *s = res->seq;
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) free(s->proc[i]);
    free(s->proc);
    free(s->look);
    free(s);
    res->seq = NULL;
}

/* L's processes up to look k into T (T's ratio array is buf); returns how many of look k. */
static size_t seq_restrict(const gate_result *res, const ge_line *L, int k, ge_line *T, double *buf)
{
    *T = *L;
    T->ratio = buf;
    T->nproc = 0;
    size_t at_k = 0;
    for (size_t p = 0; p < L->nproc; p++) {
        int lk = seq_look_of(res, L->proc[p]);
        if (lk > k) continue;
        at_k += lk == k;
        buf[T->nproc++] = L->ratio[p];
    }
    gate_line_stats(T);
    return at_k;
}

static int seq_same_group(const ge_line *a, const ge_line *b)
{
    return !strcmp(a->suite, b->suite) && !strcmp(a->retention, b->retention) && !strcmp(a->backend, b->backend);
}

/* Per look of a line's suite and backend: at most a batch, no look skipped. 1 when refused. */
static int seq_check_looks(gate_result *res, const ge_line *L, int *lmax)
{
    const gate_config *c = res->cfg;
    *lmax = 0;
    int count[64] = { 0 };
    for (size_t p = 0; p < L->nproc; p++) {
        int lk = seq_look_of(res, L->proc[p]);
        if (lk > 63) lk = 63;
        count[lk]++;
        if (lk > *lmax) *lmax = lk;
    }
    for (int k = 1; k <= *lmax; k++)
        if (!count[k] || count[k] > c->seq_batch) {
            ge_invalid(res, "%s: %s %s: look %d has %d process(es), the rule adds 1 to %d per look, no look skipped",
                        SEQ_RECORD, L->suite, L->backend, k, count[k], c->seq_batch);
            return 1;
        }
    return 0;
}

/* The first look at which L is not borderline (INT_MAX: borderline at every look to lmax). */
static int seq_first_clear(const gate_result *res, const ge_line *L, int lmax, double *buf)
{
    for (int k = 0; k <= lmax; k++) {
        ge_line T;
        seq_restrict(res, L, k, &T, buf);
        if (!gate_seq_borderline(res->cfg, &T)) return k;
    }
    return INT_MAX;
}

/* Keep L's processes up to look k; its figures and result from them. */
static void seq_decide(gate_result *res, ge_line *L, int k)
{
    size_t n = 0;
    int added = 0;
    for (size_t p = 0; p < L->nproc; p++) {
        int lk = seq_look_of(res, L->proc[p]);
        if (lk > k) continue;
        added += lk > 0;
        L->ratio[n] = L->ratio[p];
        L->proc[n] = L->proc[p];
        L->layout[n] = L->layout[p];
        n++;
    }
    L->nproc = n;
    L->seq_added = added;
    gate_line_stats(L);
    L->result = gate_line_pass(L) ? "PASS" : "FAIL";
}

void gate_seq_judge(gate_result *res)
{
    if (!res->seq) return;
    /* an added process belongs to a gated suite at a gated retention */
    for (size_t i = 0; i < res->seq->n; i++) {
        const gr_report *r = seq_report(res, res->seq->proc[i]);
        const gate_suite_cfg *sc = r ? gate_suite_find(res->cfg, r->suite) : NULL;
        int ro = 0;
        for (int k = 0; r && k < res->cfg->nreport_only_retention; k++) ro |= !strcmp(res->cfg->report_only_retention[k], r->retention);
        if (!sc || !sc->gated || ro)
            ge_invalid(res, "%s: %s is not a gated process (the rule adds processes to gated suites only)", SEQ_RECORD,
                        res->seq->proc[i]);
    }
    size_t n = res->nlines;
    int *clear = malloc((n + 1) * sizeof *clear), *lmax = malloc((n + 1) * sizeof *lmax);
    for (size_t i = 0; i < n; i++) {
        ge_line *L = &res->lines[i];
        clear[i] = lmax[i] = -1;
        if (L->kind == GL_REPORT || !L->result || !strcmp(L->result, "NA") || seq_check_looks(res, L, &lmax[i])) continue;
        double *buf = malloc((L->nproc + 1) * sizeof *buf);
        clear[i] = seq_first_clear(res, L, lmax[i], buf);
        free(buf);
    }
    /* the rule, re-derived: look k of a suite and backend needs a row of it borderline at every
     * look before k (a process added for no borderline row would be re-running until PASS) */
    for (size_t i = 0; i < n; i++) {
        const ge_line *L = &res->lines[i];
        if (clear[i] < 0) continue;
        for (int k = 1; k <= lmax[i]; k++) {
            int why = 0;
            for (size_t j = 0; j < n && !why; j++) why = clear[j] >= k && seq_same_group(L, &res->lines[j]);
            if (!why) {
                ge_invalid(res, "%s: %s %s got processes at look %d, but none of its gated rows was borderline at "
                                 "every look before it: the rule adds processes only there", SEQ_RECORD, L->suite,
                            L->backend, k);
                break;
            }
        }
    }
    res->n_pass = res->n_fail = 0;
    for (size_t i = 0; i < n; i++) {
        ge_line *L = &res->lines[i];
        if (clear[i] >= 0) {
            L->seq_open = clear[i] > lmax[i];
            seq_decide(res, L, L->seq_open ? lmax[i] : clear[i]);
        }
        if (L->kind != GL_REPORT && L->result && !strcmp(L->result, "PASS")) res->n_pass++;
        if (L->kind != GL_REPORT && L->result && !strcmp(L->result, "FAIL")) res->n_fail++;
    }
    free(clear);
    free(lmax);
}

int gate_seq_next(const char *runs_dir, const gate_config *cfg, gate_seq_row **rows, char **why)
{
    gate_result res;
    *rows = NULL;
    *why = NULL;
    if (gate_evaluate(runs_dir, cfg, &res)) return -1;
    /* a busy host's INVALID is about the FAILs, not the rows' noise: the rule goes on (more
     * processes may be quiet); any other reason stands whatever is added */
    if (res.ninvalid > (size_t)res.busy_invalid) {
        *why = strdup(res.invalid[0]);
        gate_result_free(&res);
        return -2;
    }
    int last = res.seq ? res.seq->nlooks : 0, nr = 0;
    for (size_t i = 0; i < res.nlines; i++) {
        const ge_line *L = &res.lines[i];
        int reaches = 0;   /* its suite and backend got the last look's processes */
        for (size_t p = 0; p < L->nproc; p++) reaches |= seq_look_of(&res, L->proc[p]) == last;
        if (L->kind == GL_REPORT || !L->result || !strcmp(L->result, "NA") || !reaches ||
            !(res.seq ? L->seq_open : gate_seq_borderline(cfg, L)))
            continue;
        *rows = realloc(*rows, (size_t)(nr + 1) * sizeof **rows);
        gate_seq_row *r = &(*rows)[nr++];
        snprintf(r->suite, sizeof r->suite, "%s", L->suite);
        snprintf(r->backend, sizeof r->backend, "%s", L->backend);
        snprintf(r->row, sizeof r->row, "%s", L->row);
        snprintf(r->peer, sizeof r->peer, "%s", L->peer);
        r->nproc = (int)L->nproc;
        r->median = L->median;
        r->worst = L->worst;
        r->thr_median = L->thr_median;
        r->thr_worst = L->thr_worst;
        size_t nok = 0;
        for (size_t p = 0; p < L->nproc; p++) nok += !isnan(L->ratio[p]);
        r->spread = nok == 1 ? cfg->seq_quick_band : L->spread;   /* one process: the fixed band */
    }
    gate_result_free(&res);
    return nr;
}

/* The look that decided L (its latest process after gate_seq_judge). */
static int seq_line_look(const gate_result *res, const ge_line *L)
{
    int k = 0;
    for (size_t p = 0; p < L->nproc; p++) {
        int lk = seq_look_of(res, L->proc[p]);
        if (lk > k) k = lk;
    }
    return k;
}

static const char *seq_outcome(const ge_line *L, int look)
{
    if (L->seq_open) return look ? "still borderline when the rule stopped: decided on all its processes"
                                 : "borderline, no process added (the budget or the rule stopped first): decided on the planned processes";
    return "not borderline at this look: decided here";
}

char *gate_seq_md(const gate_result *res)
{
    const gate_config *c = res->cfg;
    if (!res->seq) return NULL;
    gate_buf b = { 0 };
    gate_buf_printf(&b, "\n## Sequential rule (tools/gate/SEQUENTIAL.md)\n\n"
                        "A gated row borderline after the planned processes (look 0) gets batches of up to %d more\n"
                        "processes of its suite and backend, at most %d batches, within the attempt's budget; with one\n"
                        "process, borderline is a threshold within %.0f%% of the median. Each row is decided at its first\n"
                        "look where it is not borderline, on the processes up to that look. %d look(s), %zu process(es)\n"
                        "added.\n\n",
                    c->seq_batch, c->seq_max_batches, c->seq_quick_band * 100, res->seq->nlooks, res->seq->n);
    gate_buf_printf(&b, "| row | vs | backend | processes (added) | look | median | worst | result | why |\n"
                        "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |\n");
    int rows = 0;
    for (size_t i = 0; i < res->nlines; i++) {
        const ge_line *L = &res->lines[i];
        if (!L->seq_added && !L->seq_open) continue;
        int look = seq_line_look(res, L);
        char *er = gate_md_escape(L->row), *ep = gate_md_escape(L->peer), *es = gate_md_escape(L->suite);
        gate_buf_printf(&b, "| %s / %s | %s | %s | %zu (%d) | %d | %.4f | %.4f | %s | %s |\n", es, er, ep, L->backend,
                        L->nproc, L->seq_added, look, L->median, L->worst, L->result, seq_outcome(L, look));
        free(er);
        free(ep);
        free(es);
        rows++;
    }
    if (!rows) gate_buf_printf(&b, "| (no gated row was borderline after the planned processes) | | | | | | | | |\n");
    return b.p;
}

cJSON *gate_seq_json(const gate_result *res)
{
    if (!res->seq) return NULL;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "record", SEQ_RECORD);
    cJSON_AddNumberToObject(o, "looks", res->seq->nlooks);
    cJSON_AddNumberToObject(o, "processesAdded", (double)res->seq->n);
    cJSON *rows = cJSON_AddArrayToObject(o, "rows");
    for (size_t i = 0; i < res->nlines; i++) {
        const ge_line *L = &res->lines[i];
        if (!L->seq_added && !L->seq_open) continue;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "suite", L->suite);
        cJSON_AddStringToObject(e, "row", L->row);
        cJSON_AddStringToObject(e, "peer", L->peer);
        cJSON_AddStringToObject(e, "backend", L->backend);
        cJSON_AddNumberToObject(e, "processesDecided", (double)L->nproc);
        cJSON_AddNumberToObject(e, "sequentialAdded", L->seq_added);
        cJSON_AddNumberToObject(e, "look", seq_line_look(res, L));
        cJSON_AddBoolToObject(e, "borderlineAfterBudget", L->seq_open);
        cJSON_AddStringToObject(e, "result", L->result);
        cJSON_AddItemToArray(rows, e);
    }
    return o;
}
