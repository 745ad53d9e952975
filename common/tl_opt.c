/*
 * tl_opt.c - the option parser of `tandem` and its player (see tl_opt.h): getopt_long
 * driven by one table per verb, checked numbers, one error format, generated help.
 */
#include "tl_opt.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define TL_OPT_LONG_BASE 256 /* getopt val of a long-only option: base + its index */

static const tl_optspec **capture_slot; /* tl_opt_capture */

void tl_opt_capture(const tl_optspec **slot) { capture_slot = slot; }

static size_t count_opts(const tl_opt *o)
{
    size_t n = 0;
    while (o[n].name) n++;
    return n;
}

static int takes_value(const tl_opt *o) { return o->kind != TL_OPT_FLAG; }

static const char *metavar(const tl_opt *o)
{
    if (o->arg) return o->arg;
    switch (o->kind) {
    case TL_OPT_INT: return "N";
    case TL_OPT_DOUBLE: return "X";
    case TL_OPT_PATH: return "PATH";
    default: return "S";
    }
}

/* ---- checked numbers -------------------------------------------------------------- */

static int plain_number_text(const char *s)
{
    if (!s[0] || isspace((unsigned char)s[0])) return 0;
    for (const char *p = s; *p; p++)
        if (*p == 'x' || *p == 'X' || isspace((unsigned char)*p)) return 0; /* no hex, no spaces */
    return 1;
}

int tl_opt_parse_double(const char *s, double min, double max, double *out, const char **why)
{
    char *end;
    if (!plain_number_text(s)) { *why = "not a number"; return -1; }
    errno = 0;
    double d = strtod(s, &end);
    if (end == s || *end) { *why = "not a number"; return -1; }
    if (!isfinite(d)) { *why = "not a finite number"; return -1; }
    if (errno == ERANGE && d != 0) { *why = "out of range"; return -1; }
    if (d < min || d > max) { *why = "out of range"; return -1; }
    *out = d;
    return 0;
}

int tl_opt_parse_int(const char *s, long long min, long long max, long long *out, const char **why)
{
    char *end;
    if (!plain_number_text(s)) { *why = "not a number"; return -1; }
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (end == s || *end) {
        double d;
        const char *w2;
        /* "1e99" or "1.5" are numbers, just not integers; "1x" is not a number */
        *why = tl_opt_parse_double(s, -INFINITY, INFINITY, &d, &w2) == 0 ? "not an integer" : w2;
        return -1;
    }
    if (errno == ERANGE || x < min || x > max) { *why = "out of range"; return -1; }
    *out = x;
    return 0;
}

/* ---- errors ----------------------------------------------------------------------- */

int tl_opt_fail(const tl_optres *res, const char *opt, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", res->spec->prog);
    if (opt) fprintf(stderr, "%s: ", opt);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return TL_OPT_USAGE;
}

static void expected_line(const tl_optspec *spec, const tl_opt *o)
{
    fprintf(stderr, "%s: --%s: expected %s from %.15g to %.15g\n", spec->prog, o->name,
            o->kind == TL_OPT_INT ? "an integer" : "a number", o->min, o->max);
}

/* Convert and store one value of option o. 0 ok, TL_OPT_USAGE refused (printed). */
static int take_value(const tl_optspec *spec, const tl_opt *o, tl_optval *v, const char *s)
{
    const char *why;
    if (o->kind == TL_OPT_PATH && !s[0]) {
        fprintf(stderr, "%s: --%s: empty path\n", spec->prog, o->name);
        return TL_OPT_USAGE;
    }
    if (o->kind == TL_OPT_INT) {
        long long x;
        if (tl_opt_parse_int(s, (long long)o->min, (long long)o->max, &x, &why)) {
            fprintf(stderr, "%s: --%s: %s: '%s'\n", spec->prog, o->name, why, s);
            expected_line(spec, o);
            return TL_OPT_USAGE;
        }
        v->i = x;
        v->d = (double)x;
    } else if (o->kind == TL_OPT_DOUBLE) {
        double d;
        if (tl_opt_parse_double(s, o->min, o->max, &d, &why)) {
            fprintf(stderr, "%s: --%s: %s: '%s'\n", spec->prog, o->name, why, s);
            expected_line(spec, o);
            return TL_OPT_USAGE;
        }
        v->d = d;
    }
    v->s = s;
    v->all[v->count] = s;
    return 0;
}

/* Levenshtein distance of a[0..la) and b (two rows; words are short). */
static size_t edit_distance(const char *a, size_t la, const char *b)
{
    size_t lb = strlen(b), row[2][64];
    if (la >= 63 || lb >= 63) return (size_t)-1;
    for (size_t j = 0; j <= lb; j++) row[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t *cur = row[i & 1], *prev = row[!(i & 1)];
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]), del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
    }
    return row[la & 1][lb];
}

const char *tl_opt_nearest(const char *word, size_t len, const char *const *cands, size_t n)
{
    const char *best = NULL, *prefixed = NULL;
    size_t bestd = (size_t)-1, nprefixed = 0;
    for (size_t i = 0; i < n; i++) {
        if (len && !strncmp(cands[i], word, len)) { prefixed = cands[i]; nprefixed++; }
        size_t d = edit_distance(word, len, cands[i]);
        if (d < bestd) { bestd = d; best = cands[i]; }
    }
    if (nprefixed == 1) return prefixed;
    return bestd <= 2 && bestd * 2 < len ? best : NULL;
}

/* The long options that start with the given prefix ("--ro" of "--ro=1"): 0, 1 or more. */
static int prefix_matches(const tl_opt *opts, const char *arg)
{
    size_t len = strcspn(arg, "=");
    int n = !strncmp("help", arg, len);
    for (size_t i = 0; opts[i].name; i++) n += !strncmp(opts[i].name, arg, len);
    return n;
}

static void unknown_option(const tl_optspec *spec, const char *arg, int short_opt)
{
    if (short_opt) {
        fprintf(stderr, "%s: unknown option '-%c' (%s --help lists the options)\n", spec->prog, short_opt, spec->prog);
        return;
    }
    int len = (int)strcspn(arg, "=");
    int n = !strncmp(arg, "--", 2) ? prefix_matches(spec->opts, arg + 2) : 0;
    const char *names[128], *near = NULL;
    size_t k = 0;
    for (const tl_opt *o = spec->opts; o->name && k < 128; o++)
        if (o->help) names[k++] = o->name;   /* hidden options are never suggested */
    if (n <= 1 && !strncmp(arg, "--", 2)) near = tl_opt_nearest(arg + 2, (size_t)len - 2, names, k);
    fprintf(stderr, "%s: %s option '%.*s' (%s%s%s%s --help lists the options)\n", spec->prog,
            n > 1 ? "ambiguous" : "unknown", len, arg, near ? "did you mean --" : "", near ? near : "",
            near ? "? " : "", spec->prog);
}

/* ---- parsing ---------------------------------------------------------------------- */

int tl_opt_parse(const tl_optspec *spec, int argc, char **argv, tl_optres *res)
{
    size_t n = count_opts(spec->opts);
    memset(res, 0, sizeof *res);
    res->spec = spec;
    res->v = calloc(n + 1, sizeof *res->v);
    struct option *lo = calloc(n + 2, sizeof *lo);
    char *shorts = calloc(2 * n + 4, 1);
    if (!res->v || !lo || !shorts) abort();
    size_t k = 0;
    shorts[k++] = ':'; /* a missing value returns ':' (our message, not getopt's) */
    shorts[k++] = 'h';
    for (size_t i = 0; i < n; i++) {
        const tl_opt *o = &spec->opts[i];
        res->v[i].all = calloc((size_t)argc + 1, sizeof(char *));
        if (!res->v[i].all) abort();
        lo[i].name = o->name;
        lo[i].has_arg = takes_value(o) ? required_argument : no_argument;
        lo[i].val = o->short_name ? (unsigned char)o->short_name : TL_OPT_LONG_BASE + (int)i;
        if (o->short_name) {
            shorts[k++] = o->short_name;
            if (takes_value(o)) shorts[k++] = ':';
        }
    }
    lo[n].name = "help";
    lo[n].val = 'h';

    int rc = TL_OPT_OK, c;
    optind = 0; /* a fresh scan: verbs call other verbs' parsers */
    opterr = 0;
    while (rc == TL_OPT_OK && (c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        if (c == 'h') {
            if (capture_slot) *capture_slot = spec;
            else tl_opt_help(spec, stdout);
            rc = TL_OPT_HELP;
            break;
        }
        if (c == '?' || c == ':') {
            const tl_opt *o = NULL;
            for (size_t i = 0; i < n && optopt; i++)
                if (lo[i].val == optopt) o = &spec->opts[i];
            if (c == ':' && o)
                fprintf(stderr, "%s: --%s: needs a value (%s)\n", spec->prog, o->name, metavar(o));
            else if (o) /* '?' with a known option: a flag given a value (--quick=1) */
                fprintf(stderr, "%s: --%s: takes no value\n", spec->prog, o->name);
            else
                unknown_option(spec, argv[optind - 1], optopt > 0 && optopt < TL_OPT_LONG_BASE ? optopt : 0);
            rc = TL_OPT_USAGE;
            break;
        }
        size_t idx = n;
        for (size_t i = 0; i < n; i++)
            if (lo[i].val == c) idx = i;
        if (idx == n) abort();
        const tl_opt *o = &spec->opts[idx];
        tl_optval *v = &res->v[idx];
        if (takes_value(o)) rc = take_value(spec, o, v, optarg);
        if (rc == TL_OPT_OK) v->count++;
    }
    if (rc == TL_OPT_OK) {
        res->npos = argc - optind;
        res->pos = argv + optind;
        if (spec->max_pos >= 0 && res->npos > spec->max_pos) {
            fprintf(stderr, "%s: unexpected argument '%s'\n", spec->prog, res->pos[spec->max_pos]);
            rc = TL_OPT_USAGE;
        } else if (res->npos < spec->min_pos) {
            fprintf(stderr, "%s: missing argument\nusage: %s %s\n", spec->prog, spec->prog, spec->synopsis);
            rc = TL_OPT_USAGE;
        }
    }
    free(lo);
    free(shorts);
    optind = 0;
    return rc;
}

void tl_opt_free(tl_optres *res)
{
    if (res->v)
        for (size_t i = 0; res->spec && res->spec->opts[i].name; i++) free(res->v[i].all);
    free(res->v);
    memset(res, 0, sizeof *res);
}

/* ---- help ------------------------------------------------------------------------- */

static void print_indented(FILE *out, const char *text, const char *indent)
{
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        fprintf(out, "%.*s", (int)len, p);
        p += len;
        if (*p == '\n') {
            p++;
            fprintf(out, "\n%s", *p ? indent : "");
        }
    }
}

void tl_opt_help(const tl_optspec *spec, FILE *out)
{
    enum { COL = 24 };
    fprintf(out, "usage: %s ", spec->prog);
    char pad[64];
    snprintf(pad, sizeof pad, "%*s", (int)strlen(spec->prog) + 8, "");
    print_indented(out, spec->synopsis, pad);
    fputs("\n\n", out);
    if (spec->about) {
        fputs(spec->about, out);
        fputs("\n\n", out);
    }
    fputs("options:\n", out);
    char col[COL + 1];
    memset(col, ' ', COL);
    col[COL] = 0;
    fprintf(out, "  -h, --help%*s%s\n", COL - 12, "", "this help");
    for (const tl_opt *o = spec->opts; o->name; o++) {
        if (!o->help) continue;
        char left[160];
        int l = snprintf(left, sizeof left, "  %s%c%s--%s%s%s", o->short_name ? "-" : "", o->short_name ? o->short_name : ' ',
                         o->short_name ? ", " : "", o->name, takes_value(o) ? " " : "", takes_value(o) ? metavar(o) : "");
        if (!o->short_name) l = snprintf(left, sizeof left, "  --%s%s%s", o->name, takes_value(o) ? " " : "",
                                          takes_value(o) ? metavar(o) : "");
        fputs(left, out);
        if (l >= COL - 1) fprintf(out, "\n%s", col);
        else fprintf(out, "%*s", COL - l, "");
        print_indented(out, o->help, col);
        if (o->kind == TL_OPT_INT || o->kind == TL_OPT_DOUBLE)
            fprintf(out, " [%s, %.15g to %.15g]", o->kind == TL_OPT_INT ? "integer" : "number", o->min, o->max);
        fputc('\n', out);
    }
    if (spec->after) {
        fputc('\n', out);
        fputs(spec->after, out);
        fputc('\n', out);
    }
}

/* ---- lookups ---------------------------------------------------------------------- */

static const tl_optval *find(const tl_optres *res, const char *name)
{
    for (size_t i = 0; res->spec->opts[i].name; i++)
        if (!strcmp(res->spec->opts[i].name, name)) return &res->v[i];
    fprintf(stderr, "%s: internal error: no option --%s in the table\n", res->spec->prog, name);
    abort();
}

int tl_opt_given(const tl_optres *res, const char *name) { return find(res, name)->count; }

const char *tl_opt_str(const tl_optres *res, const char *name, const char *def)
{
    const tl_optval *v = find(res, name);
    return v->count ? v->s : def;
}

long long tl_opt_int(const tl_optres *res, const char *name, long long def)
{
    const tl_optval *v = find(res, name);
    return v->count ? v->i : def;
}

double tl_opt_double(const tl_optres *res, const char *name, double def)
{
    const tl_optval *v = find(res, name);
    return v->count ? v->d : def;
}

const char *const *tl_opt_all(const tl_optres *res, const char *name, int *n)
{
    const tl_optval *v = find(res, name);
    *n = v->count;
    return v->all;
}
