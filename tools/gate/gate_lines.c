/* gate_lines.c - the gate's lines: per (suite, retention) group of reports, each row's
 * ratios of the gate subject to each peer and baseline per backend (median, worst,
 * thresholds, PASS/FAIL/REPORT/NA), its allocation rows and its AOT/JIT comparison. The
 * inputs and the rules on whole reports are gate_eval.c's. */
#include "gate_int.h"

#include "tl_fs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One (suite, retention) group: its reports and the names they hold; `row` and its flags
 * are the row being evaluated. */
typedef struct ge_group {
    const char *suite, *ret;
    const gate_suite_cfg *sc;           /* NULL: the suite is not configured */
    int use_mean, ret_ro;
    const gr_report **gr;
    size_t ngr;
    tl_strlist rows;                    /* first-appearance order */
    tl_strlist subjects;                /* sorted */
    tl_strlist backends;                /* configured order */
    tl_strlist peers, bases;            /* the subjects compared with the gate subject */
    const char *row;
    int row_ro, sync;
} ge_group;

/* What made a line NA: an unsupported entry of the gate subject (a) or of the peer (b). */
typedef struct ge_na { int na, a_unsup, b_unsup; } ge_na;

static double entry_stat(const gr_row *e, int use_mean)
{
    if (!e || !e->supported || !e->n) return NAN;
    double *v = ge_values(e);
    double s = use_mean ? gs_mean(v, e->n) : gs_median(v, e->n);
    free(v);
    return s;
}

/* An entry's allocation bytes (bytes = 1) or calls (bytes = 0) per op over its samples. */
static double entry_alloc_per_op(const gr_row *e, int bytes)
{
    double v = 0, ops = 0;
    for (size_t q = 0; q < e->n; q++) {
        v += bytes ? e->s[q].bytes : e->s[q].allocs;
        ops += e->s[q].ops;
    }
    return ops > 0 ? v / ops : NAN;
}

static int in_list(char (*arr)[64], int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(arr[i], s)) return 1;
    return 0;
}

static int row_may_be_unsupported(const gate_suite_cfg *sc, const char *row)
{
    for (int p = 0; sc && p < sc->nunsupported; p++)
        if (gate_pattern_match(row, sc->unsupported[p])) return 1;
    return 0;
}

/* Contradictory evidence about one row across the processes of a (suite, retention) group:
 * support or gating that differ between processes or subjects, gating that differs from the
 * configuration (which decides it), identical sample arrays in two processes (replayed). */
static void check_row_agreement(gate_result *res, const gr_report **gr, size_t ngr, const char *row,
                                const tl_strlist *subjects, const gate_suite_cfg *sc, int cfg_report_only)
{
    const gr_report *flag_rep = NULL;
    int flag = -1;
    for (size_t s = 0; s < subjects->n; s++) {
        const gr_report *sup_rep = NULL;
        int sup = -1;
        for (size_t i = 0; i < ngr; i++) {
            const gr_row *e = ge_find_entry(gr[i], row, subjects->v[s]);
            if (!e) continue;
            if (sup < 0) { sup = e->supported; sup_rep = gr[i]; }
            else if (sup != e->supported)
                ge_invalid(res, "%s and %s disagree about row '%s' of subject '%s': supported %s vs %s", sup_rep->file,
                           gr[i]->file, row, subjects->v[s], sup ? "true" : "false", e->supported ? "true" : "false");
            /* an NA entry carries no gating of its own (row_unsupported has no gated flag) */
            if (e->gated >= 0 && e->supported) {
                if (flag < 0) { flag = e->gated; flag_rep = gr[i]; }
                else if (flag != e->gated)
                    ge_invalid(res, "%s and %s disagree about gating row '%s' (gated %s vs %s)", flag_rep->file,
                               gr[i]->file, row, flag ? "true" : "false", e->gated ? "true" : "false");
            }
            if (e->n < 2) continue;
            for (size_t j = i + 1; j < ngr; j++) {
                const gr_row *f = ge_find_entry(gr[j], row, subjects->v[s]);
                if (!f || f->n != e->n) continue;
                size_t k = 0;
                while (k < e->n && e->s[k].ns == f->s[k].ns && e->s[k].ops == f->s[k].ops) k++;
                if (k == e->n)
                    ge_invalid(res, "%s and %s have identical samples for row '%s' subject '%s' (a replayed report)",
                               gr[i]->file, gr[j]->file, row, subjects->v[s]);
            }
        }
    }
    if (sc && sc->gated && flag >= 0 && flag == cfg_report_only)
        ge_invalid(res, "%s: row '%s' is %s in the report but %s in the gate's configuration", flag_rep->file, row,
                   flag ? "gated" : "report-only", cfg_report_only ? "report-only" : "gated");
}

/* ---- the groups, in a stable order: configured suites first ---------------------------- */
typedef struct grp { const char *suite, *retention; } grp;

static int suite_rank(const gate_config *c, const char *s)
{
    for (int i = 0; i < c->nsuites; i++)
        if (!strcmp(c->suites[i].name, s)) return i;
    return c->nsuites;
}

static const gate_config *g_cfg; /* for qsort */
static int grp_cmp(const void *a, const void *b)
{
    const grp *x = a, *y = b;
    int ra = suite_rank(g_cfg, x->suite), rb = suite_rank(g_cfg, y->suite);
    if (ra != rb) return ra - rb;
    int c = strcmp(x->suite, y->suite);
    if (c) return c;
    int dx = ge_report_only_retention(g_cfg, x->retention), dy = ge_report_only_retention(g_cfg, y->retention);
    if (dx != dy) return dx - dy;
    return strcmp(x->retention, y->retention);
}

static void push_new(tl_strlist *l, const char *s)
{
    size_t q;
    for (q = 0; q < l->n && strcmp(l->v[q], s); q++) {}
    if (q == l->n) tl_strlist_push(l, s);
}

/* The group's reports, rows (first-appearance order), subjects (sorted) and backends (in
 * configured order). */
static void group_collect(const gate_result *res, ge_group *G)
{
    const gate_config *cfg = res->cfg;
    for (size_t i = 0; i < res->nreps; i++) {
        const gr_report *r = &res->reps[i];
        if (!r->ok || strcmp(r->suite, G->suite) || strcmp(r->retention, G->ret)) continue;
        *GE_GROW(G->gr, G->ngr) = r;
        for (size_t k = 0; k < r->nrows; k++) push_new(&G->rows, r->rows[k].name);
        for (size_t k = 0; k < r->nsubjects; k++) push_new(&G->subjects, r->subjects[k]);
        push_new(&G->backends, r->backend);
    }
    tl_strlist_sort(&G->subjects);
    tl_strlist *bk = &G->backends;
    for (size_t a = 0; a < bk->n; a++)
        for (size_t b2 = a + 1; b2 < bk->n; b2++)
            if (ge_backend_rank(cfg, bk->v[b2]) < ge_backend_rank(cfg, bk->v[a]) ||
                (ge_backend_rank(cfg, bk->v[b2]) == ge_backend_rank(cfg, bk->v[a]) && strcmp(bk->v[b2], bk->v[a]) < 0)) {
                char *t = bk->v[a];
                bk->v[a] = bk->v[b2];
                bk->v[b2] = t;
            }
}

/* INVALID: a process of the group without a subject or a row the others have. */
static void group_check_missing(gate_result *res, const ge_group *G)
{
    for (size_t i = 0; i < G->ngr; i++)
        for (size_t s = 0; s < G->subjects.n; s++) {
            if (!ge_has_subject(G->gr[i], G->subjects.v[s])) {
                ge_invalid(res, "%s: subject '%s' missing (other %s processes have it)", G->gr[i]->file,
                           G->subjects.v[s], G->suite);
                continue;
            }
            for (size_t k = 0; k < G->rows.n; k++)
                if (!ge_find_entry(G->gr[i], G->rows.v[k], G->subjects.v[s]))
                    ge_invalid(res, "%s: missing row '%s' for subject '%s'", G->gr[i]->file, G->rows.v[k],
                               G->subjects.v[s]);
        }
}

/* The peers (the configured ones, else every other subject) and the baseline revisions. */
static void group_peers(const gate_config *cfg, ge_group *G)
{
    for (size_t s = 0; s < G->subjects.n; s++) {
        const char *name = G->subjects.v[s];
        if (!strcmp(name, cfg->subject)) continue;
        if (gate_is_baseline(cfg, name)) { tl_strlist_push(&G->bases, name); continue; }
        if (cfg->npeers && !in_list((char (*)[64])cfg->peers, cfg->npeers, name)) continue;
        tl_strlist_push(&G->peers, name);
    }
}

/* ---- one line: the gate subject against one peer or baseline on one backend ------------ */

/* The line's names (pointing at a report's strings: stable storage), kind, why it is
 * report-only and thresholds. */
static void line_setup(const gate_config *cfg, const ge_group *G, ge_line *L, const char *peer, const char *backend,
                       int is_base, int peer_ro)
{
    const gate_suite_cfg *sc = G->sc;
    memset(L, 0, sizeof *L);
    L->suite = G->suite;
    L->retention = G->ret;
    L->row = G->row;
    L->peer = peer;
    L->backend = NULL;
    for (size_t i = 0; i < G->ngr && !L->backend; i++)
        if (!strcmp(G->gr[i]->backend, backend)) L->backend = G->gr[i]->backend;
    for (size_t i = 0; i < G->ngr; i++) {
        const gr_row *e = ge_find_entry(G->gr[i], G->row, peer);
        if (e && e->name) { L->row = e->name; L->peer = e->subject; break; }
    }
    L->kind = G->sync ? GL_SYNC : GL_GATED;
    if (!sc || !sc->gated) L->why = sc ? "suite is report-only" : "suite not configured";
    else if (G->ret_ro) L->why = "default retention";
    else if (G->row_ro) L->why = "row is report-only";
    else if (peer_ro) L->why = "distance to the lower bound";
    else if (!is_base && gate_suite_lower_bound(sc, peer, G->row))
        L->why = "peer runs lower-bound code here (td_peer.h), not its library";
    if (L->why) L->kind = GL_REPORT;
    L->thr_median = L->thr_worst = NAN;
    if (L->kind == GL_SYNC) L->thr_median = cfg->sync_median;
    if (L->kind == GL_GATED) { L->thr_median = cfg->median; L->thr_worst = cfg->worst; }
    if (is_base && L->kind != GL_REPORT) { L->thr_median = cfg->base_median; L->thr_worst = cfg->base_worst; }
}

/* Append a supported entry's samples to the pool *p (for the Mann-Whitney test) and keep
 * the largest within-process CV. */
static void pool_samples(const gr_row *e, double **p, size_t *n, double *cv_max)
{
    if (!e || !e->supported || !e->n) return;
    double *v = ge_values(e);
    double cv = gs_cv(v, e->n);
    if (cv > *cv_max) *cv_max = cv;
    *p = realloc(*p, (*n + e->n) * sizeof **p);
    memcpy(*p + *n, v, e->n * sizeof *v);
    *n += e->n;
    free(v);
}

/* The geometric mean of the row's statistic over the subjects of process r built once (every
 * subject but A and its baseline revisions: the peers and the lower bound), those supported;
 * NaN when none is. What the host did to the whole process moves them as it moves A. */
static double process_reference(const gate_config *cfg, const ge_group *G, const gr_report *r)
{
    double logsum = 0;
    size_t n = 0;
    for (size_t s = 0; s < G->subjects.n; s++) {
        const char *name = G->subjects.v[s];
        if (!strcmp(name, cfg->subject) || gate_is_baseline(cfg, name)) continue;
        double st = entry_stat(ge_find_entry(r, G->row, name), G->use_mean);
        if (isfinite(st) && st > 0) { logsum += log(st); n++; }
    }
    return n ? exp(logsum / n) : NAN;
}

/* The per-process ratios of the line's backend, the pooled samples' Mann-Whitney test and
 * the largest CV; what made it NA. */
static ge_na line_samples(gate_result *res, const ge_group *G, ge_line *L, const char *peer, const char *backend)
{
    const char *subj = res->cfg->subject;
    ge_na f = { 0, 0, 0 };
    double *pa = NULL, *pb = NULL;
    size_t npa = 0, npb = 0;
    for (size_t i = 0; i < G->ngr; i++) {
        const gr_report *r = G->gr[i];
        if (strcmp(r->backend, backend)) continue;
        const gr_row *ea = ge_find_entry(r, G->row, subj), *eb = ge_find_entry(r, G->row, peer);
        L->ratio = realloc(L->ratio, (L->nproc + 1) * sizeof *L->ratio);
        L->proc = realloc(L->proc, (L->nproc + 1) * sizeof *L->proc);
        L->layout = realloc(L->layout, (L->nproc + 1) * sizeof *L->layout);
        L->proc[L->nproc] = r->file;
        L->layout[L->nproc] = r->layout;
        double sa = entry_stat(ea, G->use_mean), sb = entry_stat(eb, G->use_mean);
        L->stat_a = realloc(L->stat_a, (L->nproc + 1) * sizeof *L->stat_a);
        L->stat_b = realloc(L->stat_b, (L->nproc + 1) * sizeof *L->stat_b);
        L->stat_a[L->nproc] = sa;
        L->stat_b[L->nproc] = sb;
        if (gate_is_baseline(res->cfg, peer)) {
            L->stat_ref = realloc(L->stat_ref, (L->nproc + 1) * sizeof *L->stat_ref);
            L->stat_ref[L->nproc] = process_reference(res->cfg, G, r);
        }
        if ((ea && ea->supported && !(isfinite(sa) && sa > 0)) || (eb && eb->supported && !(isfinite(sb) && sb > 0)))
            ge_invalid(res, "%s: row '%s': a statistic that is not a finite positive number (%s %g, %s %g)", r->file,
                       G->row, subj, sa, peer, sb);
        if (ea && !ea->supported) f.a_unsup = 1;
        if (eb && !eb->supported) f.b_unsup = 1;
        if ((ea && !ea->supported) || (eb && !eb->supported)) f.na = 1;
        L->ratio[L->nproc++] = isfinite(sa) && sa > 0 && isfinite(sb) && sb > 0 ? sa / sb : NAN;
        pool_samples(ea, &pa, &npa, &L->cv);
        pool_samples(eb, &pb, &npb, &L->cv);
    }
    gs_mann_whitney(pa, npa, pb, npb, &L->mw);
    free(pa);
    free(pb);
    return f;
}

/* Median, worst and spread of the line's ratios; returns how many are not NA (gate_int.h). */
size_t gate_line_stats(ge_line *L)
{
    double *ok = malloc((L->nproc + 1) * sizeof *ok);
    size_t nok = 0;
    for (size_t p = 0; p < L->nproc; p++)
        if (!isnan(L->ratio[p])) ok[nok++] = L->ratio[p];
    L->median = nok ? gs_median(ok, nok) : NAN;
    L->worst = NAN;
    double lo = NAN;
    for (size_t p = 0; p < nok; p++) {
        if (isnan(L->worst) || ok[p] > L->worst) L->worst = ok[p];
        if (isnan(lo) || ok[p] < lo) lo = ok[p];
    }
    L->spread = nok && lo > 0 ? L->worst / lo - 1 : 0;
    free(ok);
    return nok;
}

int gate_line_pass(const ge_line *L)
{
    return L->median <= L->thr_median && (isnan(L->thr_worst) || L->worst <= L->thr_worst);
}

/* The line's result, counted in the peer verdict unless it is a baseline's; INVALID when an
 * NA would drop a gated row that the configuration does not allow to be unsupported. */
static void line_judge(gate_result *res, const ge_group *G, ge_line *L, const char *peer, const char *backend,
                       int is_base, ge_na f, size_t nok)
{
    const gate_config *cfg = res->cfg;
    if (!is_base && L->kind != GL_REPORT && f.a_unsup && !cfg->unsupported_na && !row_may_be_unsupported(G->sc, G->row))
        ge_invalid(res, "%s %s: subject '%s' leaves gated row '%s' unsupported", G->suite, backend, cfg->subject, G->row);
    /* a peer's NA would drop the row from the verdict: only the configuration may
     * (a row the subject leaves unsupported is NA already: the peers skip it) */
    if (!is_base && L->kind != GL_REPORT && f.b_unsup && !f.a_unsup && !row_may_be_unsupported(G->sc, G->row))
        ge_invalid(res, "%s %s: peer '%s' leaves gated row '%s' unsupported, and the gate's configuration "
                        "does not list it in unsupportedRows", G->suite, backend, peer, G->row);
    if (is_base) {
        L->result = f.na || !nok ? "NA" : L->kind == GL_REPORT ? "REPORT" : gate_line_pass(L) ? "PASS" : "FAIL";
    } else if (f.na || !nok) {
        L->result = "NA";
        res->n_na++;
    } else if (L->kind == GL_REPORT) {
        L->result = "REPORT";
        res->n_report++;
    } else {
        int pass = gate_line_pass(L);
        L->result = pass ? "PASS" : "FAIL";
        res->n_gated++;
        if (pass) res->n_pass++;
        else res->n_fail++;
    }
}

/* The peers, then the baseline revisions of the gate subject: the same ratios, their own
 * thresholds and lines (res->blines), never counted in the peer verdict. */
static void row_lines(gate_result *res, const ge_group *G)
{
    const gate_config *cfg = res->cfg;
    for (size_t pe = 0; pe < G->peers.n + G->bases.n; pe++) {
        int is_base = pe >= G->peers.n;
        const char *peer = is_base ? G->bases.v[pe - G->peers.n] : G->peers.v[pe];
        int peer_ro = !is_base && in_list((char (*)[64])cfg->report_only_peers, cfg->nreport_only_peers, peer);
        for (size_t b = 0; b < G->backends.n; b++) {
            const char *backend = G->backends.v[b];
            ge_line *L = is_base ? GE_GROW(res->blines, res->nblines) : GE_GROW(res->lines, res->nlines);
            line_setup(cfg, G, L, peer, backend, is_base, peer_ro);
            ge_na f = line_samples(res, G, L, peer, backend);
            size_t nok = gate_line_stats(L);
            line_judge(res, G, L, peer, backend, is_base, f, nok);
        }
    }
}

/* The allocation row of the gate subject on one backend (steady state, gated rows only):
 * its worst process. */
static void row_allocs(gate_result *res, const ge_group *G, const char *backend)
{
    const gate_config *cfg = res->cfg;
    ge_alloc *A = NULL;
    for (size_t i = 0; i < G->ngr; i++) {
        if (strcmp(G->gr[i]->backend, backend)) continue;
        const gr_row *ea = ge_find_entry(G->gr[i], G->row, cfg->subject);
        if (!ea || !ea->supported || !ea->n) continue;
        if (!A) {
            A = GE_GROW(res->allocs, res->nallocs);
            memset(A, 0, sizeof *A);
            A->suite = G->suite;
            A->retention = G->ret;
            A->row = ea->name;
            A->backend = G->gr[i]->backend;
            A->retained = NAN;
        }
        double by = entry_alloc_per_op(ea, 1), al = entry_alloc_per_op(ea, 0);
        if (by > A->bytes_per_op) A->bytes_per_op = by;
        if (al > A->allocs_per_op) A->allocs_per_op = al;
        if (!isnan(ea->retained) && (isnan(A->retained) || ea->retained > A->retained)) A->retained = ea->retained;
    }
    if (A) {
        int bad = cfg->alloc_check && (A->bytes_per_op > cfg->alloc_max || (cfg->alloc_max == 0 && A->allocs_per_op > 0));
        A->result = !cfg->alloc_check ? "REPORT" : bad ? "FAIL" : "PASS";
    }
}

/* AOT against JIT for one subject of the row: the median over processes of each, and each
 * backend's worst process's allocations. */
static void row_aot_jit(gate_result *res, const ge_group *G, const char *subject)
{
    double *va = NULL, *vj = NULL;
    size_t na2 = 0, nj = 0;
    const char *rname = NULL, *sname = NULL;
    double alloc[2][2] = { { 0, 0 }, { 0, 0 } }; /* [aot, jit][bytes, calls]: the worst process's */
    for (size_t i = 0; i < G->ngr; i++) {
        const gr_row *e = ge_find_entry(G->gr[i], G->row, subject);
        double st = entry_stat(e, G->use_mean);
        if (isnan(st)) continue;
        rname = e->name;
        sname = e->subject;
        int jit = !strcmp(G->gr[i]->backend, "jit");
        if (!jit && strcmp(G->gr[i]->backend, "aot")) continue;
        if (!jit) { va = realloc(va, (na2 + 1) * sizeof *va); va[na2++] = st; }
        else { vj = realloc(vj, (nj + 1) * sizeof *vj); vj[nj++] = st; }
        for (int k = 0; k < 2; k++) alloc[jit][k] = fmax(alloc[jit][k], entry_alloc_per_op(e, k == 0));
    }
    if (na2 && nj) {
        ge_xb *X = GE_GROW(res->xb, res->nxb);
        X->suite = G->suite;
        X->retention = G->ret;
        X->row = rname;
        X->subject = sname;
        X->aot = gs_median(va, na2);
        X->jit = gs_median(vj, nj);
        X->aot_bytes = alloc[0][0];
        X->aot_allocs = alloc[0][1];
        X->jit_bytes = alloc[1][0];
        X->jit_allocs = alloc[1][1];
    }
    free(va);
    free(vj);
}

/* One row of the group: its flags (the gated set is the configuration's; the reports' flags
 * are checked against it), its lines, allocation rows and AOT/JIT rows. */
static void group_row(gate_result *res, ge_group *G, const char *row)
{
    const gate_suite_cfg *sc = G->sc;
    G->row = row;
    G->row_ro = G->sync = 0;
    if (sc)
        for (int p = 0; p < sc->nreport_only; p++) G->row_ro |= gate_pattern_match(row, sc->report_only[p]);
    check_row_agreement(res, G->gr, G->ngr, row, &G->subjects, sc, G->row_ro);
    if (sc)
        for (int p = 0; p < sc->nsync; p++) G->sync |= gate_pattern_match(row, sc->sync[p]);
    row_lines(res, G);
    if (sc && sc->gated && !G->ret_ro && !G->row_ro)
        for (size_t b = 0; b < G->backends.n; b++) row_allocs(res, G, G->backends.v[b]);
    for (size_t s = 0; s < G->subjects.n; s++) row_aot_jit(res, G, G->subjects.v[s]);
}

void ge_eval_groups(gate_result *res)
{
    const gate_config *cfg = res->cfg;
    grp *groups = NULL;
    size_t ngroups = 0;
    for (size_t i = 0; i < res->nreps; i++) {
        const gr_report *r = &res->reps[i];
        if (!r->ok) continue;
        size_t g;
        for (g = 0; g < ngroups; g++)
            if (!strcmp(groups[g].suite, r->suite) && !strcmp(groups[g].retention, r->retention)) break;
        if (g == ngroups) *GE_GROW(groups, ngroups) = (grp){ r->suite, r->retention };
    }
    g_cfg = cfg;
    if (ngroups > 1) qsort(groups, ngroups, sizeof *groups, grp_cmp);

    for (size_t g = 0; g < ngroups; g++) {
        ge_group G = { 0 };
        G.suite = groups[g].suite;
        G.ret = groups[g].retention;
        G.sc = gate_suite_find(cfg, G.suite);
        G.use_mean = G.sc ? G.sc->use_mean : 0;
        G.ret_ro = ge_report_only_retention(cfg, G.ret);
        group_collect(res, &G);
        group_check_missing(res, &G);
        group_peers(cfg, &G);
        for (size_t k = 0; k < G.rows.n; k++) group_row(res, &G, G.rows.v[k]);
        tl_strlist_free(&G.peers);
        tl_strlist_free(&G.bases);
        tl_strlist_free(&G.rows);
        tl_strlist_free(&G.subjects);
        tl_strlist_free(&G.backends);
        free(G.gr);
    }
    free(groups);
}
