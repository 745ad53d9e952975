/*
 * gate_chart.c - gate-chart.svg: the gate at a glance. The verdict and the counts at the
 * top, then the gated rows only (report-only rows are in gate-chart-full.svg), grouped by
 * suite, one line per row and peer with AOT and JIT side by side: dots are the process
 * ratios, the bar the median, the row's own thresholds drawn on it (orange: the median
 * limit, red: the worst limit), PASS/FAIL at the end. At most about 1,000 px tall:
 * lines get thinner when there are many. Byte-deterministic like every gate output.
 */
#include "gate_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void cb_xml(gate_buf *b, const char *s)
{
    char *t = gate_xml_escape(s ? s : "");
    gate_buf_printf(b, "%s", t);
    free(t);
}

/* One chart line: a (suite, row, peer) with its gated line per backend (NULL: none). */
typedef struct chart_row {
    const ge_line *be[2]; /* [0] aot, [1] jit */
} chart_row;

static int same_row(const ge_line *a, const ge_line *b)
{
    return !strcmp(a->suite, b->suite) && !strcmp(a->row, b->row) && !strcmp(a->peer, b->peer) &&
           !strcmp(a->retention, b->retention);
}

/* The gated lines grouped into rows, in the gate's order (suites stay together). */
static size_t chart_rows(const gate_result *res, chart_row *rows)
{
    size_t n = 0;
    for (size_t i = 0; i < res->nlines; i++) {
        const ge_line *L = &res->lines[i];
        if (L->kind == GL_REPORT) continue;
        int b = !strcmp(L->backend, "jit") ? 1 : 0;
        size_t k = 0;
        while (k < n && !(rows[k].be[0] ? same_row(rows[k].be[0], L) : same_row(rows[k].be[1], L))) k++;
        if (k == n) memset(&rows[n++], 0, sizeof rows[0]);
        if (!rows[k].be[b]) rows[k].be[b] = L;
    }
    return n;
}

typedef struct panel { double x0, w, xmax; } panel;

static double px(const panel *p, double v)
{
    double c = v > p->xmax ? p->xmax : v < 0 ? 0 : v;
    return p->x0 + p->w * c / p->xmax;
}

static void draw_line(gate_buf *b, const panel *p, const ge_line *L, double y, double lh)
{
    const char *col = !strcmp(L->backend, "aot") ? "#1f77b4" : "#2ca02c";
    double bh = lh * 0.45 < 8 ? lh * 0.45 : 8;
    if (!isnan(L->median))
        gate_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" opacity=\"0.55\"/>\n", p->x0,
                  y - bh / 2, px(p, L->median) - p->x0, bh, col);
    double tick = lh / 2 - 1;
    if (!isnan(L->thr_median))
        gate_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ff7f0e\" stroke-width=\"2\"/>\n",
                  px(p, L->thr_median), y - tick, px(p, L->thr_median), y + tick);
    if (!isnan(L->thr_worst))
        gate_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\" stroke-width=\"2\"/>\n",
                  px(p, L->thr_worst), y - tick, px(p, L->thr_worst), y + tick);
    double r = lh < 14 ? 2 : 3;
    for (size_t k = 0; k < L->nproc; k++)
        if (!isnan(L->ratio[k]))
            gate_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.0f\" fill=\"%s\"/>\n", px(p, L->ratio[k]), y, r, col);
    int fail = !strcmp(L->result, "FAIL");
    gate_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\"%s>%s</text>\n", p->x0 + p->w + 6, y + 4,
              fail ? "#d62728" : !strcmp(L->result, "PASS") ? "#2b8a3e" : "#888", fail ? " font-weight=\"bold\"" : "",
              L->result);
}

static void draw_axis(gate_buf *b, const panel *p, const char *title, double top, double bottom)
{
    gate_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-weight=\"bold\">%s</text>\n", p->x0 + p->w / 2,
              top - 24, title);
    for (int k = 0; k <= (int)(p->xmax * 4 + 0.5); k++) {
        double v = k / 4.0, x = px(p, v);
        gate_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", x, top - 4, x, bottom,
                  k == 4 ? "#bbb" : "#eee");
        if (k % 2 == 0)
            gate_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#555\">%.1f</text>\n", x, top - 8, v);
    }
}

char *gate_chart_summary_svg(const gate_result *res)
{
    const gate_config *c = res->cfg;
    chart_row *rows = calloc(res->nlines + 1, sizeof *rows);
    if (!rows) abort();
    size_t nr = chart_rows(res, rows), nsuites = 0;
    for (size_t i = 0; i < nr; i++) {
        const ge_line *L = rows[i].be[0] ? rows[i].be[0] : rows[i].be[1];
        const ge_line *P = i ? (rows[i - 1].be[0] ? rows[i - 1].be[0] : rows[i - 1].be[1]) : NULL;
        nsuites += !P || strcmp(P->suite, L->suite);
    }
    double xmax = 1.5;
    for (size_t i = 0; i < res->nlines; i++)
        if (res->lines[i].kind != GL_REPORT)
            for (size_t k = 0; k < res->lines[i].nproc; k++)
                if (res->lines[i].ratio[k] > xmax && res->lines[i].ratio[k] < 4) xmax = res->lines[i].ratio[k];
    xmax = ceil(xmax * 2) / 2;
    const double label = 430, pw = 260, gap = 60, top = 116, foot = 30;
    size_t slots = nr + nsuites;
    double lh = slots ? (1000 - top - foot) / (double)slots : 18;
    if (lh > 18) lh = 18;
    if (lh < 9) lh = 9;
    double width = label + 2 * (pw + gap), height = top + (slots ? slots : 1) * lh + foot;
    panel pn[2] = { { label, pw, xmax }, { label + pw + gap, pw, xmax } };
    const char *verdict = gate_verdict_name(res->verdict);
    const char *vcol = res->verdict == GATE_PASS ? "#2b8a3e" : res->verdict == GATE_FAIL ? "#d62728" : "#e8590c";

    gate_buf b = { 0 };
    gate_buf_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    gate_buf_printf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                  "font-family=\"sans-serif\" font-size=\"%.0f\">\n", width, height, width, height, lh < 14 ? 9.0 : 11.0);
    gate_buf_printf(&b, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", width, height);
    gate_buf_printf(&b, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"40\" fill=\"%s\"/>\n", width, vcol);
    gate_buf_printf(&b, "<text x=\"12\" y=\"27\" font-size=\"20\" font-weight=\"bold\" fill=\"#ffffff\">Gate %s: %zu of %zu gated "
                  "rows pass", verdict, res->n_pass, res->n_gated);
    if (res->ninvalid) gate_buf_printf(&b, "; %zu INVALID reason(s)", res->ninvalid);
    gate_buf_printf(&b, "</text>\n");
    gate_buf_printf(&b, "<text x=\"12\" y=\"58\" fill=\"#333\">");
    cb_xml(&b, c->subject);
    gate_buf_printf(&b, " / peer (below 1.0: ");
    cb_xml(&b, c->subject);
    gate_buf_printf(&b, " is faster). Dots: process ratios; bar: median; orange tick: the row's median limit; red tick: "
                  "its worst limit.</text>\n");
    gate_buf_printf(&b, "<text x=\"12\" y=\"%.0f\" fill=\"#555\">Gated rows only (%zu report-only rows: gate-chart-full.svg); "
                  "ratios above %.1f drawn at the edge.</text>\n", 74.0, res->n_report, xmax);
    draw_axis(&b, &pn[0], "AOT", top, top + slots * lh);
    draw_axis(&b, &pn[1], "JIT", top, top + slots * lh);

    double y = top;
    const char *suite = NULL;
    for (size_t i = 0; i < nr; i++) {
        const ge_line *L = rows[i].be[0] ? rows[i].be[0] : rows[i].be[1];
        if (!suite || strcmp(suite, L->suite)) {
            suite = L->suite;
            gate_buf_printf(&b, "<text x=\"8\" y=\"%.1f\" font-weight=\"bold\">", y + lh * 0.75);
            cb_xml(&b, suite);
            gate_buf_printf(&b, "</text>\n");
            y += lh;
        }
        double cy = y + lh / 2;
        if (i % 2) gate_buf_printf(&b, "<rect x=\"0\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" fill=\"#f5f5f5\"/>\n", y, width, lh);
        gate_buf_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", label - 8, cy + 4);
        cb_xml(&b, L->row);
        gate_buf_printf(&b, " vs ");
        cb_xml(&b, L->peer);
        gate_buf_printf(&b, "</text>\n");
        for (int k = 0; k < 2; k++)
            if (rows[i].be[k]) draw_line(&b, &pn[k], rows[i].be[k], cy, lh);
        y += lh;
    }
    if (!nr) gate_buf_printf(&b, "<text x=\"%.1f\" y=\"%.1f\">no gated rows</text>\n", label, top + 12);
    gate_buf_printf(&b, "<text x=\"8\" y=\"%.1f\" fill=\"#555\">blue: aot, green: jit; the full chart with the report-only "
                  "rows: gate-chart-full.svg</text>\n", height - 10);
    gate_buf_printf(&b, "</svg>\n");
    free(rows);
    return b.p;
}
