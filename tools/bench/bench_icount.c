/*
 * bench_icount.c - `tandem bench --meter instructions`: the instruction arm.
 *
 * One valgrind callgrind process per subject (the player with one module or TU), with
 * collection off at start; the player switches it on only inside the rows' timed segments
 * and reads the counts back itself (host/shell/meter.c). Each subject's player report
 * goes to WORK/icount/<suite>-<backend>-<subject>.json (its callgrind dumps to the folder
 * of the same name + ".cg", emptied before each run); the combined summary
 * (rows x subjects: instructions, locked instructions, indirect calls and calls per op) to
 * --out or WORK/icount/<suite>-<backend>-instructions.json, and a table is printed.
 * Report-only: no verdict rests on it; it answers "more or fewer instructions" on a noisy
 * machine, deterministically (same build, same counts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "bench_icount.h"
#include "tl_err.h"
#include "tl_fs.h"
#include "tl_json.h"
#include "tl_proc.h"

static const cJSON *ic_row(const cJSON *doc, const char *name)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "rows")) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
        if (cJSON_IsString(n) && !strcmp(n->valuestring, name)) return it;
    }
    return NULL;
}

static double ic_num(const cJSON *o, const char *key)
{
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* One subject under callgrind. 0 ok (doc loaded and complete), 1 failed. */
static int ic_run_subject(const bench_icount_spec *sp, const char *subject, const char *report, cJSON **doc)
{
    char cgdir[4200], cgout[4300], outarg[4400], mod[4200], root[4200], player[4200];
    snprintf(cgdir, sizeof cgdir, "%.4000s.cg", report);
    if (tl_is_dir(cgdir) && tl_rm_rf(cgdir)) {
        tl_error(cgdir, NULL, "cannot empty the callgrind folder");
        return 1;
    }
    if (tl_mkdirs(cgdir)) {
        tl_error(cgdir, NULL, "cannot create the callgrind folder");
        return 1;
    }
    snprintf(cgout, sizeof cgout, "%s/callgrind.out", cgdir);
    snprintf(outarg, sizeof outarg, "--callgrind-out-file=%s", cgout);
    snprintf(player, sizeof player, "%s/tandem-player", sp->player_dir);
    int aot = !strcmp(sp->backend, "aot");
    int alt = sp->alt_subject && !strcmp(subject, sp->alt_subject);
    if (alt) snprintf(mod, sizeof mod, "%s", sp->alt_module);
    else if (aot) snprintf(mod, sizeof mod, "%s/%s.so", sp->player_dir, subject);
    else snprintf(mod, sizeof mod, "%s/src/tandem-player-%s.c", sp->player_dir, subject);
    if (!tl_is_file(mod)) {
        tl_error(mod, NULL, "subject '%s' is not in the player folder", subject);
        return 1;
    }
    char *argv[64];
    int n = 0;
    argv[n++] = "valgrind";
    argv[n++] = "--tool=callgrind";
    argv[n++] = "--quiet";
    argv[n++] = "--collect-atstart=no";
    argv[n++] = "--dump-instr=yes";
    argv[n++] = "--dump-line=no";
    argv[n++] = "--compress-pos=no";
    argv[n++] = "--compress-strings=no";
    argv[n++] = outarg;
    argv[n++] = player;
    argv[n++] = "--backend";
    argv[n++] = (char *)sp->backend;
    argv[n++] = aot ? "--module" : "--tu";
    argv[n++] = mod;
    if (!aot && !alt) {
        snprintf(root, sizeof root, "%s/src", sp->player_dir);
        argv[n++] = "--root";
        argv[n++] = root;
    }
    argv[n++] = "--suite";
    argv[n++] = (char *)sp->suite;
    argv[n++] = "--out";
    argv[n++] = (char *)report;
    argv[n++] = "--meter";
    argv[n++] = "instructions";
    argv[n++] = "--meter-out";
    argv[n++] = cgout;
    argv[n++] = "--samples";
    argv[n++] = (char *)sp->samples;
    argv[n++] = "--warmup";
    argv[n++] = (char *)sp->warmup;
    argv[n++] = "--retention";
    argv[n++] = (char *)sp->retention;
    argv[n++] = "--flow";
    argv[n++] = (char *)sp->flow;
    argv[n++] = "--timeout";
    argv[n++] = (char *)sp->timeout;
    if (sp->quick) argv[n++] = "--quick";
    if (sp->functions > 0) argv[n++] = "--meter-functions";
    if (sp->filter) {
        argv[n++] = "--filter";
        argv[n++] = (char *)sp->filter;
    }
    argv[n] = NULL;
    printf("tandem bench: %s %s %s under callgrind\n", sp->suite, sp->backend, subject);
    fflush(stdout);
    remove(report);
    int prc = tl_run_player_argv(argv);   /* no protocol lines on the terminal */
    if (prc < 0) {
        tl_error("valgrind", NULL, "cannot run valgrind (scripts/deps.sh installs it)");
        return 1;
    }
    if (!tl_is_file(report) || tl_json_load(report, doc)) {
        tl_error(report, NULL, "the player under callgrind (exit %d) wrote no readable report", prc);
        return 1;
    }
    if (prc != 0 || !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(*doc, "completed"))) {
        tl_error(report, "completed", "the run under callgrind failed (exit %d)", prc);
        return 1;
    }
    /* The counts are read back: keep the dumps only while they are needed. */
    tl_rm_rf(cgdir);
    return 0;
}

/* The combined summary: rows (in the first subject's order) x subjects. */
static cJSON *ic_summary(const bench_icount_spec *sp, char **subjects, int nsub, cJSON **docs)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "kind", "instructions");
    cJSON_AddStringToObject(s, "suite", sp->suite);
    cJSON_AddStringToObject(s, "backend", sp->backend);
    const cJSON *bid = cJSON_GetObjectItemCaseSensitive(docs[0], "buildId");
    cJSON_AddStringToObject(s, "buildId", cJSON_IsString(bid) ? bid->valuestring : "");
    cJSON *subs = cJSON_AddArrayToObject(s, "subjects");
    for (int i = 0; i < nsub; i++) cJSON_AddItemToArray(subs, cJSON_CreateString(subjects[i]));
    cJSON *rows = cJSON_AddArrayToObject(s, "rows");
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(docs[0], "rows")) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
        if (!cJSON_IsString(n)) continue;
        cJSON *row = cJSON_CreateObject();
        cJSON_AddStringToObject(row, "name", n->valuestring);
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(it, "gated");
        if (cJSON_IsBool(g)) cJSON_AddBoolToObject(row, "gated", cJSON_IsTrue(g));
        cJSON *per = cJSON_AddObjectToObject(row, "subjects");
        for (int i = 0; i < nsub; i++) {
            const cJSON *r = ic_row(docs[i], n->valuestring);
            const cJSON *m = r ? cJSON_GetObjectItemCaseSensitive(r, "instructions") : NULL;
            if (m) cJSON_AddItemToObject(per, subjects[i], cJSON_Duplicate(m, 1));
            else cJSON_AddNullToObject(per, subjects[i]);
        }
        cJSON_AddItemToArray(rows, row);
    }
    return s;
}

void bench_icount_print(const cJSON *summary)
{
    const cJSON *subs = cJSON_GetObjectItemCaseSensitive(summary, "subjects");
    const cJSON *suite = cJSON_GetObjectItemCaseSensitive(summary, "suite");
    const cJSON *backend = cJSON_GetObjectItemCaseSensitive(summary, "backend");
    printf("\n%s (%s): per op, instructions / locked / indirect calls / calls (callgrind, timed segments only)\n",
           cJSON_IsString(suite) ? suite->valuestring : "?", cJSON_IsString(backend) ? backend->valuestring : "?");
    printf("%-46s", "row");
    const cJSON *s;
    cJSON_ArrayForEach(s, subs) printf(" | %-27.27s", cJSON_IsString(s) ? s->valuestring : "?");
    int cb = -1, i = 0;
    cJSON_ArrayForEach(s, subs) {
        if (cJSON_IsString(s) && !strcmp(s->valuestring, "callback")) cb = i;
        i++;
    }
    if (cb > 0) printf(" | ins/%s", "callback");
    printf("\n");
    const cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(summary, "rows")) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(row, "name");
        const cJSON *per = cJSON_GetObjectItemCaseSensitive(row, "subjects");
        printf("%-46.46s", cJSON_IsString(n) ? n->valuestring : "?");
        double first = -1, base = -1;
        i = 0;
        cJSON_ArrayForEach(s, subs) {
            const cJSON *m = cJSON_IsString(s) ? cJSON_GetObjectItemCaseSensitive(per, s->valuestring) : NULL;
            if (!cJSON_IsObject(m)) printf(" | %-27s", "NA");
            else {
                char cell[64];
                snprintf(cell, sizeof cell, "%.1f / %.2f / %.2f / %.2f", ic_num(m, "irPerOp"), ic_num(m, "lockedPerOp"),
                         ic_num(m, "indirectCallsPerOp"), ic_num(m, "callsPerOp"));
                printf(" | %-27s", cell);
                if (i == 0) first = ic_num(m, "irPerOp");
                if (i == cb) base = ic_num(m, "irPerOp");
            }
            i++;
        }
        if (cb > 0) {
            if (first > 0 && base > 0) printf(" | %.2f", first / base);
            else printf(" | -");
        }
        printf("\n");
    }
    printf("(the meter's own cost per segment is the row \"(meter) empty segment\"; it is inside every row's "
           "counts, never subtracted)\n");
}

void bench_icount_print_functions(const cJSON *summary, int top)
{
    const cJSON *subs = cJSON_GetObjectItemCaseSensitive(summary, "subjects");
    printf("\nby function: instructions per op (self, callgrind's names; the first %d, then the rest)\n", top);
    const cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(summary, "rows")) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(row, "name");
        const cJSON *per = cJSON_GetObjectItemCaseSensitive(row, "subjects"), *s;
        cJSON_ArrayForEach(s, subs) {
            const cJSON *m = cJSON_IsString(s) ? cJSON_GetObjectItemCaseSensitive(per, s->valuestring) : NULL;
            const cJSON *fns = cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, "functions") : NULL;
            if (!cJSON_IsArray(fns)) continue;
            printf("%s | %s: %.2f\n", cJSON_IsString(n) ? n->valuestring : "?", s->valuestring, ic_num(m, "irPerOp"));
            int i = 0, rest_n = 0;
            double rest = 0;
            const cJSON *f;
            cJSON_ArrayForEach(f, fns) {
                const cJSON *fn = cJSON_GetObjectItemCaseSensitive(f, "function");
                const cJSON *ob = cJSON_GetObjectItemCaseSensitive(f, "object");
                if (i++ < top)
                    printf("  %10.2f  %s (%s)\n", ic_num(f, "irPerOp"), cJSON_IsString(fn) ? fn->valuestring : "?",
                           cJSON_IsString(ob) ? ob->valuestring : "?");
                else {
                    rest += ic_num(f, "irPerOp");
                    rest_n++;
                }
            }
            if (rest_n) printf("  %10.2f  (%d more)\n", rest, rest_n);
        }
    }
}

int bench_icount_run(const bench_icount_spec *sp, char **subjects, int nsub)
{
    char dir[4200], summary_path[4300];
    snprintf(dir, sizeof dir, "%s/icount", sp->work);
    if (tl_mkdirs(dir)) {
        tl_error(dir, NULL, "cannot create the folder");
        return 1;
    }
    if (sp->out) snprintf(summary_path, sizeof summary_path, "%s", sp->out);
    else snprintf(summary_path, sizeof summary_path, "%s/%s-%s-instructions.json", dir, sp->suite, sp->backend);
    cJSON **docs = calloc((size_t)nsub, sizeof *docs);
    int rc = 1;
    if (!docs) return 1;
    for (int i = 0; i < nsub; i++) {
        char report[4400];
        snprintf(report, sizeof report, "%s/%s-%s-%s.json", dir, sp->suite, sp->backend, subjects[i]);
        if (ic_run_subject(sp, subjects[i], report, &docs[i])) goto done;
    }
    cJSON *summary = ic_summary(sp, subjects, nsub, docs);
    bench_icount_print(summary);
    if (sp->functions > 0) bench_icount_print_functions(summary, sp->functions);
    char *text = cJSON_Print(summary);
    cJSON_Delete(summary);
    if (!text || tl_mkdirs_parent(summary_path) || tl_write_atomic(summary_path, text, strlen(text), 0644)) {
        tl_error(summary_path, NULL, "cannot write the instruction summary");
        free(text);
        goto done;
    }
    free(text);
    printf("\ninstructions: %s\n", summary_path);
    rc = 0;
done:
    for (int i = 0; i < nsub; i++) cJSON_Delete(docs[i]);
    free(docs);
    return rc;
}
