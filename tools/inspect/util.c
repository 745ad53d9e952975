/*
 * util.c - string lists and formatting helpers for the inspector.
 */
#include "inspect.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *ti_strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (!d) {
        perror("tandem inspect");
        exit(1);
    }
    memcpy(d, s, n);
    return d;
}

char *ti_fmt(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) {
        perror("tandem inspect");
        exit(1);
    }
    va_end(ap);
    return s;
}

void ti_sl_add(ti_strlist *l, const char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 8;
        l->v = realloc(l->v, sizeof(char *) * (size_t)l->cap);
        if (!l->v) {
            perror("tandem inspect");
            exit(1);
        }
    }
    l->v[l->n++] = ti_strdup(s);
}

void ti_sl_addf(ti_strlist *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) {
        perror("tandem inspect");
        exit(1);
    }
    va_end(ap);
    ti_sl_add(l, s);
    free(s);
}

int ti_sl_has(const ti_strlist *l, const char *s)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], s))
            return 1;
    return 0;
}

void ti_sl_free(ti_strlist *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

char *ti_oneline(const char *s, size_t max)
{
    while (*s == ' ' || *s == '\t' || *s == '\n')
        s++;
    size_t n = strcspn(s, "\n");
    /* drop attached metadata: ", !dbg !12", ", !tbaa !5", ... */
    const char *md = strstr(s, ", !");
    if (md && (size_t)(md - s) < n)
        n = (size_t)(md - s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    char *out;
    if (n > max) {
        out = malloc(max + 4);
        memcpy(out, s, max);
        memcpy(out + max, "...", 4);
    } else {
        out = malloc(n + 1);
        memcpy(out, s, n);
        out[n] = 0;
    }
    /* tabs from the disassembler read badly in tables */
    for (char *p = out; *p; p++)
        if (*p == '\t')
            *p = ' ';
    return out;
}

const char *ti_rule_name(ti_rule_kind k)
{
    switch (k) {
    case TI_MUST_INLINE: return "must_inline";
    case TI_NO_INIT_CHECK: return "no_init_check";
    case TI_NO_CALL: return "no_call";
    case TI_CLEARS_FRAME: return "clears_frame";
    case TI_NO_FRAME_COPY: return "no_frame_copy";
    case TI_NO_LOCKED: return "no_locked";
    }
    return "?";
}

const char *ti_status_name(ti_status s)
{
    switch (s) {
    case TI_PASS: return "pass";
    case TI_FAIL: return "fail";
    case TI_INFO: return "info";
    case TI_SKIPPED: return "skipped";
    case TI_ALLOWED: return "allowed";
    }
    return "?";
}

char *ti_sl_join(const ti_strlist *l, const char *prefix, const char *sep, const char *empty)
{
    size_t len = strlen(prefix) + strlen(empty) + 1;
    for (int k = 0; k < l->n; k++)
        len += strlen(l->v[k]) + strlen(sep);
    char *s = calloc(1, len);
    if (!s) {
        perror("tandem inspect");
        exit(1);
    }
    strcat(s, prefix);
    for (int k = 0; k < l->n; k++) {
        if (k)
            strcat(s, sep);
        strcat(s, l->v[k]);
    }
    if (!l->n)
        strcat(s, empty);
    return s;
}
