/*
 * shape.c - the engine of the shape rules (see shape.h): model building helpers, write
 * summaries over the module's call graph, the init-only set, and the per-function check
 * that turns branches, stores and calls into findings with evidence.
 *
 * Summaries: w[f] = the global ranges f writes, transitively (direct stores, callees,
 * stores through a pointer argument bound to the global at the call site, function
 * pointers passed to external code such as pthread_once, indirect calls through a global
 * function pointer to every function that pointer may hold); pw[f] = writes through f's
 * own pointer parameters. Computed to a fixpoint. Pointers that escape into memory are
 * not followed (a documented limit).
 */
#include "shape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHY_MAX 700

/* ---- building ---------------------------------------------------------------------------- */
int ti_sp_find_fn(const ti_sprog *p, const char *name)
{
    for (int i = 0; i < p->nfn; i++)
        if (!strcmp(p->fn[i].name, name))
            return i;
    return -1;
}

int ti_sp_fn(ti_sprog *p, const char *name)
{
    int i = ti_sp_find_fn(p, name);
    if (i >= 0)
        return i;
    if (p->nfn == p->fncap) {
        p->fncap = p->fncap ? p->fncap * 2 : 64;
        p->fn = realloc(p->fn, sizeof(ti_sfn) * (size_t)p->fncap);
    }
    ti_sfn *f = &p->fn[p->nfn];
    memset(f, 0, sizeof *f);
    f->name = ti_strdup(name);
    f->ret_param = -1;
    f->ret_global = -1;
    return p->nfn++;
}

int ti_sp_find_global(const ti_sprog *p, const char *name)
{
    for (int i = 0; i < p->ng; i++)
        if (!strcmp(p->g[i].name, name))
            return i;
    return -1;
}

int ti_sp_global(ti_sprog *p, const char *name, int constant, long long size)
{
    int i = ti_sp_find_global(p, name);
    if (i >= 0)
        return i;
    if (p->ng == p->gcap) {
        p->gcap = p->gcap ? p->gcap * 2 : 64;
        p->g = realloc(p->g, sizeof(ti_sglobal) * (size_t)p->gcap);
    }
    p->g[p->ng] = (ti_sglobal){ ti_strdup(name), constant, size };
    return p->ng++;
}

ti_sev *ti_sp_event(ti_sfn *f, ti_ev_kind k, int block, char *text)
{
    if (f->nev == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 32;
        f->ev = realloc(f->ev, sizeof(ti_sev) * (size_t)f->cap);
    }
    ti_sev *e = &f->ev[f->nev++];
    memset(e, 0, sizeof *e);
    e->kind = k;
    e->block = block;
    e->text = text;
    e->callee = -1;
    e->size = -1;
    e->inlined_from = -1;
    return e;
}

void ti_sp_fpinit(ti_sprog *p, int g, long long off, int fn)
{
    if (p->nfpinit == p->fpcap) {
        p->fpcap = p->fpcap ? p->fpcap * 2 : 16;
        p->fpinit = realloc(p->fpinit, sizeof(ti_sfpinit) * (size_t)p->fpcap);
    }
    p->fpinit[p->nfpinit++] = (ti_sfpinit){ g, off, fn };
}

void ti_sp_free(ti_sprog *p)
{
    for (int i = 0; i < p->nfn; i++) {
        ti_sfn *f = &p->fn[i];
        for (int k = 0; k < f->nev; k++) {
            free(f->ev[k].text);
            free(f->ev[k].load_text);
            free(f->ev[k].succ);
        }
        for (int b = 0; b < f->nblocks; b++)
            free(f->bsucc[b]);
        for (int k = 0; k < f->nw; k++)
            free(f->w[k].why);
        for (int k = 0; k < f->npw; k++)
            free(f->pw[k].why);
        for (int k = 0; k < f->nlw; k++)
            free(f->lw[k].why);
        free(f->bsucc);
        free(f->nbsucc);
        free(f->ev);
        free(f->w);
        free(f->pw);
        free(f->lw);
        free(f->name);
    }
    for (int i = 0; i < p->ng; i++)
        free(p->g[i].name);
    free(p->fn);
    free(p->g);
    free(p->fpinit);
    memset(p, 0, sizeof *p);
}

/* ---- ranges ------------------------------------------------------------------------------ */
static int overlap(long long alo, long long ahi, long long blo, long long bhi)
{
    if (ahi < 0 || bhi < 0)
        return 1;
    return alo < bhi && blo < ahi;
}

static void range_of(ti_sval at, long long size, long long *lo, long long *hi)
{
    if (at.off < 0 || size < 0) {
        *lo = 0;
        *hi = -1;
    } else {
        *lo = at.off;
        *hi = at.off + size;
    }
}

static char *loc_name(const ti_sprog *p, int g, long long lo, long long hi)
{
    const ti_sglobal *gl = &p->g[g];
    if (hi < 0 || (lo == 0 && gl->size >= 0 && hi >= gl->size))
        return ti_strdup(gl->name);
    return ti_fmt("%s+%lld (%lld byte%s)", gl->name, lo, hi - lo, hi - lo == 1 ? "" : "s");
}

static char *clip(char *s)
{
    if (strlen(s) > WHY_MAX)
        strcpy(s + WHY_MAX - 3, "...");
    return s;
}

/* ---- summaries ----------------------------------------------------------------------------- */
/* An entry already as strong (same range or the whole global; a plain write beats a
 * read-modify-write) makes a new one redundant. */
static int add_w(ti_sloc **v, int *n, int *cap, int g, long long lo, long long hi, int rmw, const char *why)
{
    for (int i = 0; i < *n; i++) {
        ti_sloc *l = &(*v)[i];
        if (l->g == g && (l->hi < 0 || (l->lo == lo && l->hi == hi)) && (!l->rmw || rmw))
            return 0;
    }
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        *v = realloc(*v, sizeof(ti_sloc) * (size_t)*cap);
    }
    (*v)[(*n)++] = (ti_sloc){ g, lo, hi, rmw, clip(ti_strdup(why)) };
    return 1;
}

static int add_pw(ti_sfn *f, int param, long long lo, long long hi, int rmw, const char *why)
{
    for (int i = 0; i < f->npw; i++) {
        ti_sploc *l = &f->pw[i];
        if (l->param == param && (l->hi < 0 || (l->lo == lo && l->hi == hi)) && (!l->rmw || rmw))
            return 0;
    }
    if (f->npw == f->pwcap) {
        f->pwcap = f->pwcap ? f->pwcap * 2 : 8;
        f->pw = realloc(f->pw, sizeof(ti_sploc) * (size_t)f->pwcap);
    }
    f->pw[f->npw++] = (ti_sploc){ param, lo, hi, rmw, clip(ti_strdup(why)) };
    return 1;
}

/* A write an event causes: a global range, or a range through one of the caller's params. */
typedef struct effect {
    int is_param;
    int id;
    long long lo, hi;
    int rmw;
    const char *why;
} effect;

typedef int (*effect_fn)(void *ctx, const effect *e);

static int is_memfn(const char *n)
{
    return !strcmp(n, "memset") || !strcmp(n, "memcpy") || !strcmp(n, "memmove") || !strcmp(n, "bzero");
}

/* Functions an indirect call through global g (+off) may reach. */
static int fp_targets(const ti_sprog *p, int g, long long off, int *out, int max)
{
    int n = 0;
    for (int i = 0; i < p->nfpinit && n < max; i++)
        if (p->fpinit[i].g == g && (p->fpinit[i].off < 0 || off < 0 || p->fpinit[i].off == off))
            out[n++] = p->fpinit[i].fn;
    for (int f = 0; f < p->nfn; f++)
        for (int k = 0; k < p->fn[f].nev && n < max; k++) {
            const ti_sev *e = &p->fn[f].ev[k];
            if (e->kind == TI_EV_STORE && e->value.kind == TI_SV_FUNC && e->at.kind == TI_SV_GLOBAL && e->at.id == g
                && (e->at.off < 0 || off < 0 || e->at.off == off)) {
                int dup = 0;
                for (int d = 0; d < n; d++)
                    dup |= out[d] == e->value.id;
                if (!dup)
                    out[n++] = e->value.id;
            }
        }
    return n;
}

/* Bind one callee's summary at a call: its global writes (when `transitive`) and its
 * parameter writes through the call's arguments. Stops early when fn returns nonzero. */
static int callee_effects(const ti_sprog *p, const ti_sev *ev, int t, const char *via, int transitive, effect_fn fn,
                          void *ctx)
{
    const ti_sfn *c = &p->fn[t];
    char *why;
    if (transitive)
        for (int i = 0; i < c->nw; i++) {
            why = ti_fmt("%s %s, which writes it: %s", via, c->name, c->w[i].why);
            effect e = { 0, c->w[i].g, c->w[i].lo, c->w[i].hi, c->w[i].rmw, why };
            int stop = fn(ctx, &e);
            free(why);
            if (stop)
                return stop;
        }
    for (int i = 0; i < c->npw; i++) {
        const ti_sploc *pw = &c->pw[i];
        if (pw->param >= ev->nargs)
            continue;
        ti_sval a = ev->args[pw->param];
        if (a.kind != TI_SV_GLOBAL && a.kind != TI_SV_PARAM)
            continue;
        long long lo = 0, hi = -1;
        if (a.off >= 0 && pw->hi >= 0) {
            lo = a.off + pw->lo;
            hi = a.off + pw->hi;
        }
        why = ti_fmt("%s %s with a pointer to it (argument %d), which writes through it: %s", via, c->name,
                     pw->param + 1, pw->why);
        effect e = { a.kind == TI_SV_PARAM, a.id, lo, hi, pw->rmw, why };
        int stop = fn(ctx, &e);
        free(why);
        if (stop)
            return stop;
    }
    return 0;
}

/* Every write one event causes. `transitive`: include what callees write to globals. */
static int event_effects(const ti_sprog *p, const ti_sev *ev, int transitive, effect_fn fn, void *ctx)
{
    if (ev->kind == TI_EV_STORE) {
        if (ev->at.kind != TI_SV_GLOBAL && ev->at.kind != TI_SV_PARAM)
            return 0;
        long long lo, hi;
        range_of(ev->at, ev->size, &lo, &hi);
        effect e = { ev->at.kind == TI_SV_PARAM, ev->at.id, lo, hi, ev->rmw, ev->text };
        return fn(ctx, &e);
    }
    if (ev->kind != TI_EV_CALL)
        return 0;
    if (ev->callee >= 0 && p->fn[ev->callee].defined)
        return callee_effects(p, ev, ev->callee, "calls", transitive, fn, ctx);
    if (ev->callee >= 0) {
        /* external code: it may write what it is given a pointer to and call what it is given */
        const char *name = p->fn[ev->callee].name;
        int only_first = is_memfn(name);
        for (int a = 0; a < ev->nargs; a++) {
            ti_sval v = ev->args[a];
            if ((v.kind == TI_SV_GLOBAL || v.kind == TI_SV_PARAM) && (!only_first || a == 0)) {
                char *why = ti_fmt("%s (external %s is given a pointer to it, argument %d)", ev->text, name, a + 1);
                effect e = { v.kind == TI_SV_PARAM, v.id, 0, -1, 0, why };
                int stop = fn(ctx, &e);
                free(why);
                if (stop)
                    return stop;
            } else if (v.kind == TI_SV_FUNC && transitive && p->fn[v.id].defined) {
                char *via = ti_fmt("%s hands a function to external %s:", ev->text, name);
                int stop = callee_effects(p, ev, v.id, via, 1, fn, ctx);
                free(via);
                if (stop)
                    return stop;
            }
        }
        return 0;
    }
    if (ev->fp.kind == TI_SV_GLOBAL) {
        int t[16];
        int n = fp_targets(p, ev->fp.id, ev->fp.off, t, 16);
        for (int k = 0; k < n; k++) {
            if (!p->fn[t[k]].defined)
                continue;
            char *via = ti_fmt("calls through %s, which may hold", p->g[ev->fp.id].name);
            int stop = callee_effects(p, ev, t[k], via, transitive, fn, ctx);
            free(via);
            if (stop)
                return stop;
        }
    }
    return 0;
}

typedef struct sum_ctx {
    ti_sfn *f;
    int changed;
    int local;   /* collecting into lw */
} sum_ctx;

static int sum_add(void *ctx, const effect *e)
{
    sum_ctx *s = ctx;
    if (e->is_param)
        s->changed |= add_pw(s->f, e->id, e->lo, e->hi, e->rmw, e->why);
    else if (s->local)
        add_w(&s->f->lw, &s->f->nlw, &s->f->lwcap, e->id, e->lo, e->hi, e->rmw, e->why);
    else
        s->changed |= add_w(&s->f->w, &s->f->nw, &s->f->wcap, e->id, e->lo, e->hi, e->rmw, e->why);
    return 0;
}

static void summarise(ti_sprog *p)
{
    if (p->summarised)
        return;
    p->summarised = 1;
    int changed = 1;
    for (int iter = 0; changed && iter < 100; iter++) {
        changed = 0;
        for (int i = 0; i < p->nfn; i++) {
            ti_sfn *f = &p->fn[i];
            if (!f->defined)
                continue;
            sum_ctx s = { f, 0, 0 };
            for (int k = 0; k < f->nev; k++)
                event_effects(p, &f->ev[k], 1, sum_add, &s);
            changed |= s.changed;
        }
    }
}

/* Each function's own writes (callees' pointer writes bound at the call, not their global
 * writes). Code inlined from a function in `skip` (an initialiser or finaliser, known from
 * the debug scope on AOT) is that function's, not its host's. */
static void local_writes(ti_sprog *p, const char *skip)
{
    if (p->local_done)
        return;
    p->local_done = 1;
    for (int i = 0; i < p->nfn; i++) {
        ti_sfn *f = &p->fn[i];
        sum_ctx s = { f, 0, 1 };
        for (int k = 0; f->defined && k < f->nev; k++) {
            int from = f->ev[k].inlined_from;
            if (from >= 0 && from != i && skip[from])
                continue;
            event_effects(p, &f->ev[k], 0, sum_add, &s);
        }
    }
}

/* ---- init-only set ------------------------------------------------------------------------- */
/* Functions only the listed roots (and functions only they call) run: internal, address never
 * taken, every caller inside the set. */
static void closure_only(const ti_sprog *p, const ti_strlist *roots, char *in)
{
    for (int i = 0; i < p->nfn; i++)
        in[i] = p->fn[i].defined && ti_sl_has(roots, p->fn[i].name);
    int grew = 1;
    while (grew) {
        grew = 0;
        for (int t = 0; t < p->nfn; t++) {
            if (in[t] || !p->fn[t].defined || !p->fn[t].internal || p->fn[t].address_taken)
                continue;
            int callers = 0, outside = 0;
            for (int f = 0; f < p->nfn && !outside; f++)
                for (int k = 0; k < p->fn[f].nev; k++)
                    if (p->fn[f].ev[k].kind == TI_EV_CALL && p->fn[f].ev[k].callee == t) {
                        callers++;
                        if (!in[f]) {
                            outside = 1;
                            break;
                        }
                    }
            if (callers && !outside) {
                in[t] = 1;
                grew = 1;
            }
        }
    }
}

typedef struct check_ctx {
    ti_sprog *p;
    const ti_contract *c;
    char *init_only, *fini_only;
    ti_strlist bad, allowed, notes;
    int branches;
} check_ctx;

/* The initialiser's store proving it writes L, or NULL; *other names a non-initialiser writer. */
static const char *init_writer(check_ctx *x, int g, long long lo, long long hi, const char **other_fn,
                               const char **other_why)
{
    const ti_sprog *p = x->p;
    *other_fn = NULL;
    *other_why = NULL;
    for (int f = 0; f < p->nfn; f++) {
        if (!p->fn[f].defined || x->init_only[f] || x->fini_only[f])
            continue;
        for (int k = 0; k < p->fn[f].nlw; k++) {
            const ti_sloc *l = &p->fn[f].lw[k];
            if (l->g == g && overlap(l->lo, l->hi, lo, hi)) {
                *other_fn = p->fn[f].name;
                *other_why = l->why;
                return NULL;
            }
        }
    }
    for (int f = 0; f < p->nfn; f++) {
        if (!p->fn[f].defined || !ti_sl_has(&x->c->initialisers, p->fn[f].name))
            continue;
        for (int k = 0; k < p->fn[f].nw; k++) {
            const ti_sloc *l = &p->fn[f].w[k];
            if (l->g == g && overlap(l->lo, l->hi, lo, hi))
                return l->why;
        }
    }
    return NULL;
}

static const ti_setting *allowed_setting(const check_ctx *x, int g, long long lo, long long hi)
{
    for (int i = 0; i < x->c->nsettings; i++) {
        const ti_setting *s = &x->c->settings[i];
        if (s->size < 0 || strcmp(s->global, x->p->g[g].name))
            continue;
        if (overlap(s->off, s->off + s->size, lo, hi))
            return s;
    }
    return NULL;
}

/* Blocks reachable from `from` without passing through `avoid`. */
static void reach(const ti_sfn *f, int from, int avoid, char *seen)
{
    int *stack = malloc(sizeof(int) * (size_t)(f->nblocks + 1));
    int n = 0;
    if (from == avoid || from < 0 || from >= f->nblocks) {
        free(stack);
        return;
    }
    seen[from] = 1;
    stack[n++] = from;
    while (n) {
        int b = stack[--n];
        for (int k = 0; k < f->nbsucc[b]; k++) {
            int s = f->bsucc[b][k];
            if (s == avoid || s < 0 || s >= f->nblocks || seen[s])
                continue;
            seen[s] = 1;
            stack[n++] = s;
        }
    }
    free(stack);
}

typedef struct hit_ctx {
    int g;
    long long lo, hi;
    char *why;
} hit_ctx;

static int hit_test(void *ctx, const effect *e)
{
    hit_ctx *h = ctx;
    if (e->is_param || e->rmw || e->id != h->g || !overlap(e->lo, e->hi, h->lo, h->hi))
        return 0;
    h->why = ti_strdup(e->why);
    return 1;
}

/* The first write to (g, lo, hi) on the path guarded by one successor of branch ev. */
static char *guarded_write(check_ctx *x, const ti_sfn *f, const ti_sev *ev, int g, long long lo, long long hi)
{
    int nb = f->nblocks;
    char *mine = calloc((size_t)nb, 1), *other = calloc((size_t)nb, 1);
    char *found = NULL;
    for (int k = 0; k < ev->nsucc && !found; k++) {
        memset(mine, 0, (size_t)nb);
        memset(other, 0, (size_t)nb);
        reach(f, ev->succ[k], ev->block, mine);
        for (int j = 0; j < ev->nsucc; j++)
            if (j != k && ev->succ[j] != ev->succ[k])
                reach(f, ev->succ[j], ev->block, other);
        for (int e = 0; e < f->nev && !found; e++) {
            const ti_sev *s = &f->ev[e];
            if (s->block < 0 || s->block >= nb || !mine[s->block] || other[s->block])
                continue;
            hit_ctx h = { g, lo, hi, NULL };
            if (event_effects(x->p, s, 1, hit_test, &h)) {
                if (s->kind == TI_EV_STORE)
                    found = ti_fmt("guarded path stores it: %s", h.why);
                else
                    found = ti_fmt("guarded path %s", h.why);
                free(h.why);
            }
        }
    }
    free(mine);
    free(other);
    return found;
}

static void check_branch(check_ctx *x, const ti_sfn *f, const ti_sev *ev)
{
    const ti_sprog *p = x->p;
    if (ev->at.kind != TI_SV_GLOBAL || p->g[ev->at.id].constant)
        return;
    x->branches++;
    int g = ev->at.id;
    long long lo, hi;
    range_of(ev->at, ev->size, &lo, &hi);
    char *name = loc_name(p, g, lo, hi);
    const ti_setting *set = allowed_setting(x, g, lo, hi);
    char *head = ti_fmt("%s: global %s: load %s; branch %s", f->name, name, ev->load_text ? ev->load_text : "?", ev->text);
    char *w = guarded_write(x, f, ev, g, lo, hi);
    const char *other_fn = NULL, *other_why = NULL;
    const char *init_why = w ? NULL : init_writer(x, g, lo, hi, &other_fn, &other_why);
    if (set) {
        ti_sl_addf(&x->allowed, "allowed setting %s (%s): %s%s%s", set->name, set->reason, head, w ? "; " : "",
                   w ? w : "");
    } else if (w) {
        ti_sl_addf(&x->bad, "lazy init: %s; %s", head, w);
    } else if (init_why) {
        ti_sl_addf(&x->bad, "init guard: %s; %s is written only by the initialisers (and finalisers): %s", head, name, init_why);
    } else if (x->notes.n < 6) {
        if (other_fn)
            ti_sl_addf(&x->notes, "not a guard: %s; written outside the initialisers by %s: %s", head, other_fn, other_why);
        else
            ti_sl_addf(&x->notes, "not a guard: %s; no store to %s in the module", head, name);
    }
    free(w);
    free(head);
    free(name);
}

static void check_call(check_ctx *x, const ti_sfn *f, const ti_sev *ev)
{
    const ti_sprog *p = x->p;
    if (ev->callee >= 0) {
        const char *cn = p->fn[ev->callee].name;
        if (ti_is_once_call(x->c, cn)) {
            char ctl[256] = "", init[256] = "";
            for (int a = 0; a < ev->nargs; a++) {
                if (ev->args[a].kind == TI_SV_GLOBAL && !ctl[0])
                    snprintf(ctl, sizeof ctl, "; once control %s", p->g[ev->args[a].id].name);
                if (ev->args[a].kind == TI_SV_FUNC && !init[0])
                    snprintf(init, sizeof init, "; runs %s once", p->fn[ev->args[a].id].name);
            }
            ti_sl_addf(&x->bad, "lazy init (once call): %s%s%s", ev->text, ctl, init);
        }
        return;
    }
    if (ev->fp.kind != TI_SV_GLOBAL)
        return;
    int g = ev->fp.id;
    long long lo = ev->fp.off < 0 ? 0 : ev->fp.off, hi = ev->fp.off < 0 ? -1 : ev->fp.off + 8;
    int t[16];
    int n = fp_targets(p, g, ev->fp.off, t, 16);
    for (int k = 0; k < n; k++) {
        const ti_sfn *c = &p->fn[t[k]];
        for (int i = 0; i < c->nw; i++)
            if (c->w[i].g == g && !c->w[i].rmw && overlap(c->w[i].lo, c->w[i].hi, lo, hi)) {
                char *name = loc_name(p, g, lo, hi);
                ti_sl_addf(&x->bad, "self-replacing entry point: %s: global function pointer %s: load %s; indirect call %s; "
                                    "it may call %s, which overwrites %s: %s",
                           f->name, name, ev->load_text ? ev->load_text : "?", ev->text, c->name, name, c->w[i].why);
                free(name);
                return;
            }
    }
}

static void join(ti_strlist *dst, const ti_strlist *src)
{
    for (int i = 0; i < src->n; i++)
        ti_sl_add(dst, src->v[i]);
}

void ti_shape_check(ti_sprog *p, const ti_contract *c, const int *scope, int nscope, const char *where,
                    const ti_strlist *name_hits, ti_result *res)
{
    summarise(p);
    check_ctx x = { .p = p, .c = c };
    x.init_only = calloc((size_t)p->nfn + 1, 1);
    x.fini_only = calloc((size_t)p->nfn + 1, 1);
    closure_only(p, &c->initialisers, x.init_only);
    closure_only(p, &c->finalisers, x.fini_only);
    char *skip = calloc((size_t)p->nfn + 1, 1);
    for (int i = 0; i < p->nfn; i++)
        skip[i] = x.init_only[i] || x.fini_only[i];
    local_writes(p, skip);
    free(skip);
    int nev = 0;
    for (int s = 0; s < nscope; s++) {
        const ti_sfn *f = &p->fn[scope[s]];
        for (int k = 0; k < f->nev; k++) {
            nev++;
            if (f->ev[k].kind == TI_EV_BRANCH)
                check_branch(&x, f, &f->ev[k]);
            else if (f->ev[k].kind == TI_EV_CALL)
                check_call(&x, f, &f->ev[k]);
        }
    }
    join(&x.bad, name_hits);   /* the cheap signals after the shape findings */
    ti_strlist ev = { 0 };
    if (x.bad.n) {
        res->status = TI_FAIL;
        res->summary = ti_fmt("%d init check(s) in %s", x.bad.n, where);
        join(&ev, &x.bad);
    } else if (x.allowed.n) {
        res->status = TI_ALLOWED;
        res->summary = ti_fmt("no init check in %s; %d branch(es) on allowed settings (%d on globals checked)",
                              where, x.allowed.n, x.branches);
    } else {
        res->status = TI_PASS;
        res->summary = ti_fmt("no lazy init, init guard, once call or self-replacing call in %s (%d branch(es) on "
                              "globals checked)", where, x.branches);
    }
    join(&ev, &x.allowed);
    join(&ev, &x.notes);
    join(&ev, &res->evidence);
    ti_sl_free(&res->evidence);
    res->evidence = ev;
    (void)nev;
    ti_sl_free(&x.bad);
    ti_sl_free(&x.allowed);
    ti_sl_free(&x.notes);
    free(x.init_only);
    free(x.fini_only);
}
