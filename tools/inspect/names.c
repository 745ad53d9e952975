/*
 * names.c - a contract names only functions the inspected code has (issue 41).
 *
 * A function renamed or removed leaves a rule that checks nothing (the AOT side would say
 * "not in the module", the JIT side "not in the tcc object", as if the code were at
 * fault): such a contract is refused like any other unusable contract, before any rule is
 * judged. "Has" keeps the meaning tests/inspect/contract_names.py gave it: the name is a
 * C identifier somewhere in the sources of the code inspected, read as text (comments
 * too), or a name the runtime's TD_METHOD_DEFINE pastes together: a method's name (the
 * first argument of a TD_METHOD_DEFINE) followed by one of the suffixes pasted onto
 * `name ##` in those sources. The sources are the translation unit (--tu) and every file it
 * includes, found as the compilers find them (a quoted include beside its includer, then
 * on the -I paths; an angle include on the -I paths; system headers are not the code
 * inspected); without --tu, the IR (--ir).
 */
#include "inspect.h"
#include "tl_fs.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TI_NAMES_MAX_FILES 4096

/* The texts read, each file once (by its real path). */
typedef struct ti_srcs {
    ti_strlist real;     /* realpath of each file read */
    ti_strlist text;     /* its contents */
} ti_srcs;

static int is_ident(int ch)
{
    return isalnum(ch) || ch == '_';
}


/* Where `#include` of `name` from the file `from` resolves: beside `from` when quoted, then
 * the -I paths; NULL when not found there (a system header). */
static char *find_include(const char *from, const char *name, int quoted, const ti_options *o)
{
    if (name[0] == '/')
        return tl_is_file(name) ? ti_strdup(name) : NULL;
    if (quoted) {
        const char *slash = strrchr(from, '/');
        char *p = slash ? ti_fmt("%.*s/%s", (int)(slash - from), from, name) : ti_strdup(name);
        if (tl_is_file(p))
            return p;
        free(p);
    }
    for (int i = 0; i < o->includes.n; i++) {
        char *p = ti_fmt("%s/%s", o->includes.v[i], name);
        if (tl_is_file(p))
            return p;
        free(p);
    }
    return NULL;
}

static void read_source(ti_srcs *s, const char *path, const ti_options *o);

/* Follow each `#include "x"` / `#include <x>` line of text (whatever the conditions
 * around it: the code of every configuration counts). */
static void read_includes(ti_srcs *s, const char *path, const char *text, const ti_options *o)
{
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        const char *p = l;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p++ != '#')
            continue;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp(p, "include", 7))
            continue;
        p += 7;
        while (*p == ' ' || *p == '\t')
            p++;
        char close = *p == '"' ? '"' : *p == '<' ? '>' : 0;
        const char *end = close ? strchr(p + 1, close) : NULL;
        const char *eol = strchr(p, '\n');
        if (!end || (eol && end > eol))
            continue;
        char *name = ti_fmt("%.*s", (int)(end - p - 1), p + 1);
        char *inc = find_include(path, name, close == '"', o);
        if (inc)
            read_source(s, inc, o);
        free(inc);
        free(name);
    }
}

static void read_source(ti_srcs *s, const char *path, const ti_options *o)
{
    char *real = realpath(path, NULL);
    if (!real || ti_sl_has(&s->real, real) || s->real.n >= TI_NAMES_MAX_FILES) {
        free(real);
        return;
    }
    char *text = NULL;
    size_t len;
    if (tl_read_all(path, &text, &len) == 0) {
        ti_sl_add(&s->real, real);
        ti_sl_add(&s->text, text);
        read_includes(s, path, text, o);
    }
    free(text);
    free(real);
}

/* 1 when `word` occurs in the texts as a whole identifier. */
static int has_ident(const ti_srcs *s, const char *word, size_t len)
{
    if (!len)
        return 0;
    for (int i = 0; i < s->text.n; i++) {
        const char *t = s->text.v[i];
        for (const char *p = t; (p = strstr(p, word)); p++)
            if ((p == t || !is_ident((unsigned char)p[-1])) && !is_ident((unsigned char)p[len]))
                return 1;
    }
    return 0;
}

/* Every identifier that follows the word `lead`, then `sep` (spaces around both) in the
 * texts: the pasted suffixes (`name ## SUFFIX`), the method names (`TD_METHOD_DEFINE(NAME`). */
static void idents_after(const ti_srcs *s, const char *lead, const char *sep, ti_strlist *out)
{
    size_t ll = strlen(lead), sl = strlen(sep);
    for (int i = 0; i < s->text.n; i++) {
        const char *t = s->text.v[i];
        for (const char *p = t; (p = strstr(p, lead)); p++) {
            if (p > t && is_ident((unsigned char)p[-1]))
                continue;
            const char *q = p + ll;
            while (isspace((unsigned char)*q))
                q++;
            if (strncmp(q, sep, sl))
                continue;
            q += sl;
            while (isspace((unsigned char)*q))
                q++;
            const char *b = q;
            while (is_ident((unsigned char)*q))
                q++;
            if (q == b)
                continue;
            char *w = ti_fmt("%.*s", (int)(q - b), b);
            if (!ti_sl_has(out, w))
                ti_sl_add(out, w);
            free(w);
        }
    }
}

/* `name` is a method's name followed by a suffix the macros paste onto it. */
static int pasted(const ti_strlist *methods, const ti_strlist *suffixes, const char *name)
{
    size_t n = strlen(name);
    for (int k = 0; k < suffixes->n; k++) {
        size_t sl = strlen(suffixes->v[k]);
        if (sl >= n || strcmp(name + n - sl, suffixes->v[k]))
            continue;
        for (int m = 0; m < methods->n; m++)
            if (strlen(methods->v[m]) == n - sl && !strncmp(methods->v[m], name, n - sl))
                return 1;
    }
    return 0;
}

int ti_contract_names_check(const ti_contract *c, const ti_options *o, char *err, size_t errsz)
{
    const char *code = o->tu ? o->tu : o->ir;
    if (!code)
        return 0;
    ti_srcs s = { { 0 }, { 0 } };
    read_source(&s, code, o);
    ti_strlist suffixes = { 0 }, methods = { 0 };
    idents_after(&s, "name", "##", &suffixes);
    idents_after(&s, "TD_METHOD_DEFINE", "(", &methods);
    int rc = 0;
    for (int i = 0; i < c->nrules && !rc; i++) {
        const char *fn = c->rules[i].function;
        if (has_ident(&s, fn, strlen(fn)) || pasted(&methods, &suffixes, fn))
            continue;
        snprintf(err, errsz, "%s: field 'functions.%s': no function %s in the code inspected (the name is nowhere in %s%s%s): "
                             "a renamed or removed function leaves a rule that checks nothing",
                 c->path, fn, fn, o->tu ? "" : "the IR ", code, o->tu ? " nor the files it includes" : "");
        rc = -1;
    }
    ti_sl_free(&suffixes);
    ti_sl_free(&methods);
    ti_sl_free(&s.real);
    ti_sl_free(&s.text);
    return rc;
}
