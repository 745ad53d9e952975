/*
 * gate_text.c - text from reports made safe for the gate's outputs (issue 18): a row name
 * with a line break must not inject Markdown headings into gate.md, a control character
 * must not make gate-chart.svg invalid XML, bytes that are not UTF-8 must not make
 * gate-summary.json invalid JSON.
 */
#include "gate_int.h"

#include "tl_safe.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the gate's growing string (gate_int.h); out of memory aborts ------------------ */

static void gate_buf_reserve(gate_buf *b, size_t more)
{
    if (b->n + more + 1 <= b->cap)
        return;
    b->cap = (b->n + more + 1) * 2;
    b->p = realloc(b->p, b->cap);
    if (!b->p)
        abort();
}

void gate_buf_put(gate_buf *b, const char *s, size_t k)
{
    gate_buf_reserve(b, k);
    memcpy(b->p + b->n, s, k);
    b->n += k;
    b->p[b->n] = 0;
}

void gate_buf_printf(gate_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0)
        return;
    gate_buf_reserve(b, (size_t)k);
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)k;
}

/* Length of the valid UTF-8 sequence at p (1 for ASCII), 0 when the byte starts none. */
static size_t utf8_len(const unsigned char *p)
{
    size_t k = *p < 0x80 ? 1 : *p < 0xc2 ? 0 : *p < 0xe0 ? 2 : *p < 0xf0 ? 3 : *p < 0xf5 ? 4 : 0;
    for (size_t i = 1; i < k; i++)
        if (!p[i]) return 0;
    return k && tl_utf8_valid((const char *)p, k) ? k : 0;
}

char *gate_text_escape(const char *s)
{
    gate_buf b = { 0 };
    gate_buf_put(&b, "", 0);
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        size_t k = utf8_len(p);
        if (k == 1 && *p >= 0x20 && *p != 0x7f) gate_buf_put(&b, (const char *)p, 1);
        else if (k > 1) gate_buf_put(&b, (const char *)p, k);
        else {
            char x[8];
            snprintf(x, sizeof x, "\\x%02x", *p);
            gate_buf_put(&b, x, 4);
            k = 1;
        }
        p += k;
    }
    return b.p;
}

int gate_text_plain(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f) return 0;
    return tl_utf8_valid(s, strlen(s));
}

char *gate_md_escape(const char *s)
{
    char *t = gate_text_escape(s);
    gate_buf b = { 0 };
    gate_buf_put(&b, "", 0);
    for (const char *p = t; *p; p++) {
        if (*p == '<') gate_buf_put(&b, "&lt;", 4);
        else if (*p == '>') gate_buf_put(&b, "&gt;", 4);
        else if (*p == '&') gate_buf_put(&b, "&amp;", 5);
        else if (strchr("\\`*_[]#|!~", *p)) {
            char e[2] = { '\\', *p };
            gate_buf_put(&b, e, 2);
        } else gate_buf_put(&b, p, 1);
    }
    free(t);
    return b.p;
}

char *gate_xml_escape(const char *s)
{
    char *t = gate_text_escape(s);
    gate_buf b = { 0 };
    gate_buf_put(&b, "", 0);
    for (const char *p = t; *p; p++) {
        if (*p == '<') gate_buf_put(&b, "&lt;", 4);
        else if (*p == '>') gate_buf_put(&b, "&gt;", 4);
        else if (*p == '&') gate_buf_put(&b, "&amp;", 5);
        else if (*p == '"') gate_buf_put(&b, "&quot;", 6);
        else if (*p == '\'') gate_buf_put(&b, "&apos;", 6);
        else gate_buf_put(&b, p, 1);
    }
    free(t);
    return b.p;
}
