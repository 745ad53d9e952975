/* gate_stats.c - mean, median, CV and the Mann-Whitney U test. */
#include "gate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

double gs_mean(const double *v, size_t n)
{
    if (!n) return NAN;
    double s = 0;
    for (size_t i = 0; i < n; i++) s += v[i];
    return s / (double)n;
}

double gs_median(const double *v, size_t n)
{
    if (!n) return NAN;
    double *c = malloc(n * sizeof *c);
    memcpy(c, v, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_d);
    double m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2.0;
    free(c);
    return m;
}

double gs_cv(const double *v, size_t n)
{
    if (n < 2) return 0;
    double m = gs_mean(v, n), s = 0;
    for (size_t i = 0; i < n; i++) s += (v[i] - m) * (v[i] - m);
    s = sqrt(s / (double)(n - 1));
    return m != 0 ? s / fabs(m) : 0;
}

typedef struct { double v; int a; } mw_item;

static int cmp_item(const void *x, const void *y)
{
    const mw_item *p = x, *q = y;
    if (p->v != q->v) return p->v < q->v ? -1 : 1;
    return p->a - q->a;
}

void gs_mann_whitney(const double *a, size_t na, const double *b, size_t nb, gs_mw *out)
{
    memset(out, 0, sizeof *out);
    out->n_a = na;
    out->n_b = nb;
    out->p = 1;
    if (!na || !nb) { out->z = 0; out->effect = 0; return; }
    size_t n = na + nb;
    mw_item *it = malloc(n * sizeof *it);
    for (size_t i = 0; i < na; i++) it[i] = (mw_item){ a[i], 1 };
    for (size_t i = 0; i < nb; i++) it[na + i] = (mw_item){ b[i], 0 };
    qsort(it, n, sizeof *it, cmp_item);
    double ra = 0, ties = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && it[j].v == it[i].v) j++;
        double t = (double)(j - i), rank = (double)(i + j + 1) / 2.0; /* 1-based average */
        for (size_t k = i; k < j; k++)
            if (it[k].a) ra += rank;
        ties += t * t * t - t;
        i = j;
    }
    free(it);
    double n1 = (double)na, n2 = (double)nb, N = (double)n;
    out->u_a = ra - n1 * (n1 + 1) / 2.0;
    double u_b = n1 * n2 - out->u_a;
    out->effect = (u_b - out->u_a) / (n1 * n2);
    double mu = n1 * n2 / 2.0;
    double var = n1 * n2 / 12.0 * ((N + 1) - ties / (N * (N - 1)));
    if (var <= 0) { out->z = 0; out->p = 1; return; }
    double d = fabs(out->u_a - mu) - 0.5;
    if (d < 0) d = 0;
    double z = d / sqrt(var);
    out->z = out->u_a < mu ? -z : z;
    out->p = erfc(z / sqrt(2.0));
    if (out->p > 1) out->p = 1;
}
