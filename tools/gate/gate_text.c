/*
 * gate_text.c - text from reports made safe for the gate's outputs (issue 18): a row name
 * with a line break must not inject Markdown headings into gate.md, a control character
 * must not make gate-chart.svg invalid XML, bytes that are not UTF-8 must not make
 * gate-summary.json invalid JSON.
 */
#include "gate.h"

#include "tl_safe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tb { char *p; size_t n, cap; } tb;

static void put(tb *b, const char *s, size_t k)
{
    if (b->n + k + 1 > b->cap) {
        b->cap = (b->n + k + 1) * 2;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, k);
    b->n += k;
    b->p[b->n] = 0;
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
    tb b = { 0 };
    put(&b, "", 0);
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        size_t k = utf8_len(p);
        if (k == 1 && *p >= 0x20 && *p != 0x7f) put(&b, (const char *)p, 1);
        else if (k > 1) put(&b, (const char *)p, k);
        else {
            char x[8];
            snprintf(x, sizeof x, "\\x%02x", *p);
            put(&b, x, 4);
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
    tb b = { 0 };
    put(&b, "", 0);
    for (const char *p = t; *p; p++) {
        if (*p == '<') put(&b, "&lt;", 4);
        else if (*p == '>') put(&b, "&gt;", 4);
        else if (*p == '&') put(&b, "&amp;", 5);
        else if (strchr("\\`*_[]#|!~", *p)) {
            char e[2] = { '\\', *p };
            put(&b, e, 2);
        } else put(&b, p, 1);
    }
    free(t);
    return b.p;
}

char *gate_xml_escape(const char *s)
{
    char *t = gate_text_escape(s);
    tb b = { 0 };
    put(&b, "", 0);
    for (const char *p = t; *p; p++) {
        if (*p == '<') put(&b, "&lt;", 4);
        else if (*p == '>') put(&b, "&gt;", 4);
        else if (*p == '&') put(&b, "&amp;", 5);
        else if (*p == '"') put(&b, "&quot;", 6);
        else if (*p == '\'') put(&b, "&apos;", 6);
        else put(&b, p, 1);
    }
    free(t);
    return b.p;
}
