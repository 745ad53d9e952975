/*
 * gate_icount.c - the instruction table of gate.md (`tandem gate --instructions DIR`).
 *
 * DIR holds the summaries `tandem bench --meter instructions` writes
 * (<suite>-<backend>-instructions.json). Report-only: they never change the verdict. For
 * every row of every summary, side by side: the gate's median time ratio against each
 * peer (matched retention), instructions per op per subject with locked instructions and
 * indirect calls, and the subject's instruction ratio to each other subject. Every
 * summary is validated first (kind, suite, backend, subjects, finite non-negative
 * counts); a bad one is refused with its file and field, and nothing is rendered.
 */
#include "gate_int.h"

#include "tl_err.h"
#include "tl_json.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static const char *const ic_fields[] = { "irPerOp", "lockedPerOp", "indirectCallsPerOp", "callsPerOp", NULL };

/* 0 ok, 1 refused (reported). */
static int ic_validate(const char *file, const cJSON *d)
{
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(d, "kind");
    if (!cJSON_IsString(k) || strcmp(k->valuestring, "instructions")) {
        tl_error(file, "kind", "expected \"instructions\"");
        return 1;
    }
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(d, "suite")) ||
        !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(d, "backend"))) {
        tl_error(file, "suite", "suite and backend must be strings");
        return 1;
    }
    const cJSON *subs = cJSON_GetObjectItemCaseSensitive(d, "subjects"), *s;
    if (!cJSON_IsArray(subs) || cJSON_GetArraySize(subs) < 1) {
        tl_error(file, "subjects", "expected a non-empty array of names");
        return 1;
    }
    cJSON_ArrayForEach(s, subs) if (!cJSON_IsString(s) || !s->valuestring[0]) {
        tl_error(file, "subjects", "expected names");
        return 1;
    }
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(d, "rows"), *r;
    if (!cJSON_IsArray(rows)) {
        tl_error(file, "rows", "expected an array");
        return 1;
    }
    cJSON_ArrayForEach(r, rows) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(r, "name");
        const cJSON *per = cJSON_GetObjectItemCaseSensitive(r, "subjects");
        if (!cJSON_IsString(n) || !cJSON_IsObject(per)) {
            tl_error(file, "rows", "a row needs a name and a subjects object");
            return 1;
        }
        cJSON_ArrayForEach(s, subs) {
            const cJSON *m = cJSON_GetObjectItemCaseSensitive(per, s->valuestring);
            if (!m || cJSON_IsNull(m)) continue; /* NA */
            for (int f = 0; ic_fields[f]; f++) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, ic_fields[f]);
                if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0) {
                    tl_error(file, ic_fields[f], "row '%s' subject '%s': expected a finite number >= 0", n->valuestring,
                             s->valuestring);
                    return 1;
                }
            }
        }
    }
    return 0;
}

static double ic_get(const cJSON *per, const char *subject, const char *field)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(per, subject);
    const cJSON *v = cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, field) : NULL;
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const ge_line *ic_line(const gate_result *res, const char *suite, const char *backend, const char *row,
                              const char *peer)
{
    for (size_t i = 0; i < res->nlines; i++) {
        const ge_line *L = &res->lines[i];
        if (!strcmp(L->suite, suite) && L->backend && !strcmp(L->backend, backend) && !strcmp(L->row, row) &&
            !strcmp(L->peer, peer) && !strcmp(L->retention, "matched"))
            return L;
    }
    return NULL;
}

static void ic_table(FILE *o, const cJSON *d, const gate_result *res)
{
    const char *suite = cJSON_GetObjectItemCaseSensitive(d, "suite")->valuestring;
    const char *backend = cJSON_GetObjectItemCaseSensitive(d, "backend")->valuestring;
    const cJSON *subs = cJSON_GetObjectItemCaseSensitive(d, "subjects"), *s;
    const char *a = res->cfg->subject;
    char *e1 = gate_md_escape(suite), *e2 = gate_md_escape(backend);
    fprintf(o, "\n#### %s, %s\n\n| row |", e1, e2);
    free(e1);
    free(e2);
    cJSON_ArrayForEach(s, subs) if (strcmp(s->valuestring, a)) {
        char *e = gate_md_escape(s->valuestring);
        fprintf(o, " time ratio vs %s |", e);
        free(e);
    }
    cJSON_ArrayForEach(s, subs) {
        char *e = gate_md_escape(s->valuestring);
        fprintf(o, " %s ins (locked, indirect) |", e);
        free(e);
    }
    cJSON_ArrayForEach(s, subs) if (strcmp(s->valuestring, a)) {
        char *e = gate_md_escape(s->valuestring);
        fprintf(o, " ins ratio vs %s |", e);
        free(e);
    }
    fprintf(o, "\n| --- |");
    int ncol = 0; /* per subject an instruction column; per peer a time and a ratio column */
    cJSON_ArrayForEach(s, subs) ncol += strcmp(s->valuestring, a) ? 3 : 1;
    for (int i = 0; i < ncol; i++) fprintf(o, " ---: |");
    fprintf(o, "\n");
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(d, "rows")) {
        const char *name = cJSON_GetObjectItemCaseSensitive(r, "name")->valuestring;
        const cJSON *per = cJSON_GetObjectItemCaseSensitive(r, "subjects");
        char *en = gate_md_escape(name);
        fprintf(o, "| %s |", en);
        free(en);
        cJSON_ArrayForEach(s, subs) if (strcmp(s->valuestring, a)) {
            const ge_line *L = ic_line(res, suite, backend, name, s->valuestring);
            if (L && !isnan(L->median)) fprintf(o, " %.3f%s |", L->median, L->kind == GL_REPORT ? " (r)" : "");
            else fprintf(o, " - |");
        }
        cJSON_ArrayForEach(s, subs) {
            double ir = ic_get(per, s->valuestring, "irPerOp");
            if (isnan(ir)) fprintf(o, " NA |");
            else
                fprintf(o, " %.1f (%.2f, %.2f) |", ir, ic_get(per, s->valuestring, "lockedPerOp"),
                        ic_get(per, s->valuestring, "indirectCallsPerOp"));
        }
        double ia = ic_get(per, a, "irPerOp");
        cJSON_ArrayForEach(s, subs) if (strcmp(s->valuestring, a)) {
            double ib = ic_get(per, s->valuestring, "irPerOp");
            if (isnan(ia) || isnan(ib) || ib <= 0) fprintf(o, " - |");
            else fprintf(o, " %.2f |", ia / ib);
        }
        fprintf(o, "\n");
    }
}

char *gate_icount_md(const char *dir, const gate_result *res, int *bad)
{
    *bad = 0;
    DIR *dd = opendir(dir);
    if (!dd) {
        tl_error(dir, "--instructions", "not a readable folder");
        *bad = 1;
        return NULL;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(dd))) {
        size_t l = strlen(e->d_name);
        if (l > 18 && !strcmp(e->d_name + l - 18, "-instructions.json")) {
            names = realloc(names, (n + 1) * sizeof *names);
            names[n++] = strdup(e->d_name);
        }
    }
    closedir(dd);
    if (!n) {
        tl_error(dir, "--instructions", "no *-instructions.json summaries (tandem bench --meter instructions)");
        *bad = 1;
        free(names);
        return NULL;
    }
    qsort(names, n, sizeof *names, cmp_str);
    cJSON **docs = calloc(n, sizeof *docs);
    for (size_t i = 0; i < n && !*bad; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (tl_json_load(path, &docs[i]) || ic_validate(path, docs[i])) *bad = 1;
    }
    char *text = NULL;
    size_t len = 0;
    if (!*bad) {
        FILE *o = open_memstream(&text, &len);
        char *ea = gate_md_escape(res->cfg->subject);
        fprintf(o, "\n## Instructions per operation (report-only)\n\n"
                   "valgrind callgrind, user-space instructions inside each row's timed segments only, one\n"
                   "subject per process; deterministic (same build, same counts). Per subject: instructions\n"
                   "per op (locked instructions per op, indirect calls per op). Time ratio: the gate's median\n"
                   "ratio of %s to the peer at matched retention ((r): a report-only line). Ins ratio: %s's\n"
                   "instructions per op over the peer's. The row \"(meter) empty segment\" is the meter's own\n"
                   "cost per segment, inside every row's counts.\n",
                ea, ea);
        free(ea);
        for (size_t i = 0; i < n; i++) ic_table(o, docs[i], res);
        fclose(o);
    }
    for (size_t i = 0; i < n; i++) {
        cJSON_Delete(docs[i]);
        free(names[i]);
    }
    free(docs);
    free(names);
    return text;
}
