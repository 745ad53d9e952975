/*
 * report.c - the inspector's report: inspect.json (cJSON) and inspect.md, one row per
 * rule with the AOT and JIT results side by side and the evidence that decided each.
 */
#include "inspect.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ti_exit_code(const ti_contract *c, int jit_strict)
{
    (void)jit_strict; /* INFO results never fail; strict mode turns them into FAIL upstream */
    for (int k = 0; k < c->nrules; k++)
        if (c->rules[k].aot.status == TI_FAIL || c->rules[k].jit.status == TI_FAIL)
            return 3;
    return 0;
}

int ti_aot_sites_satisfied(const ti_contract *c)
{
    int n = 0;
    for (int k = 0; k < c->nrules; k++)
        if (c->rules[k].kind == TI_MUST_INLINE && c->rules[k].aot.status == TI_PASS)
            n += c->rules[k].aot.sites;
    return n;
}

static cJSON *result_json(const ti_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "status", ti_status_name(r->status));
    cJSON_AddStringToObject(o, "summary", r->summary ? r->summary : "");
    cJSON *ev = cJSON_AddArrayToObject(o, "evidence");
    for (int i = 0; i < r->evidence.n; i++)
        cJSON_AddItemToArray(ev, cJSON_CreateString(r->evidence.v[i]));
    return o;
}

static const char *rule_arg(const ti_rule *r, char *buf, size_t sz)
{
    buf[0] = 0;
    if (r->kind == TI_MUST_INLINE)
        snprintf(buf, sz, "%s", r->callee);
    else if (r->kind == TI_NO_CALL) {
        size_t at = 0;
        for (int i = 0; i < r->names.n && at < sz; i++)
            at += (size_t)snprintf(buf + at, sz - at, "%s%s", i ? "," : "", r->names.v[i]);
    } else if (r->kind == TI_CLEARS_FRAME || r->kind == TI_NO_FRAME_COPY) {
        size_t at = 0;
        if (r->frame_type)
            at += (size_t)snprintf(buf + at, sz - at, "%s ", r->frame_type);
        if (r->frame_size >= 0)
            at += (size_t)snprintf(buf + at, sz - at, "%lld bytes ", r->frame_size);
        if (r->min_copy >= 0)
            at += (size_t)snprintf(buf + at, sz - at, "copies >= %lld ", r->min_copy);
        if (at)
            buf[at - 1] = 0;
    }
    return buf;
}

/* Markdown table cells: no pipes, no newlines. */
static void md_cell(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
}

static const char *badge(ti_status s)
{
    switch (s) {
    case TI_PASS: return "PASS";
    case TI_FAIL: return "**FAIL**";
    case TI_INFO: return "info";
    case TI_SKIPPED: return "skipped";
    case TI_ALLOWED: return "allowed";
    }
    return "?";
}

int ti_report_write(const ti_contract *c, const ti_options *o, const char *ir, const char *remarks,
                    const char *obj, int exit_code, char *err, size_t errsz)
{
    char arg[1024];
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "tool", "tandem inspect");
    cJSON_AddStringToObject(root, "schema", "tandem-inspect-report/1");
    cJSON *in = cJSON_AddObjectToObject(root, "inputs");
    cJSON_AddStringToObject(in, "contract", c->path);
    if (o->tu)
        cJSON_AddStringToObject(in, "tu", o->tu);
    cJSON_AddStringToObject(in, "ir", ir);
    cJSON_AddStringToObject(in, "remarks", remarks);
    if (obj)
        cJSON_AddStringToObject(in, "jit_object", obj);
    int aot_fail = 0, jit_fail = 0, jit_info = 0;
    cJSON *rules = cJSON_AddArrayToObject(root, "rules");
    for (int k = 0; k < c->nrules; k++) {
        const ti_rule *r = &c->rules[k];
        aot_fail += r->aot.status == TI_FAIL;
        jit_fail += r->jit.status == TI_FAIL;
        jit_info += r->jit.status == TI_INFO;
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "function", r->function);
        cJSON_AddStringToObject(j, "rule", ti_rule_name(r->kind));
        cJSON_AddStringToObject(j, "arg", rule_arg(r, arg, sizeof arg));
        cJSON_AddItemToObject(j, "aot", result_json(&r->aot));
        cJSON_AddItemToObject(j, "jit", result_json(&r->jit));
        if (r->kind == TI_MUST_INLINE)
            cJSON_AddNumberToObject(j, "aot_sites_inlined", r->aot.sites);
        cJSON_AddItemToArray(rules, j);
    }
    cJSON *sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "rules", c->nrules);
    cJSON_AddNumberToObject(sum, "aot_fail", aot_fail);
    cJSON_AddNumberToObject(sum, "jit_fail", jit_fail);
    cJSON_AddNumberToObject(sum, "jit_info", jit_info);
    cJSON_AddNumberToObject(sum, "must_inline_sites_satisfied_aot", ti_aot_sites_satisfied(c));
    cJSON_AddBoolToObject(sum, "jit_strict", o->jit_strict);
    cJSON_AddBoolToObject(sum, "jit_run", !o->no_jit);
    cJSON_AddNumberToObject(sum, "exit", exit_code);
    cJSON_AddStringToObject(sum, "verdict", exit_code == 0 ? "pass" : "fail");

    char path[4096];
    snprintf(path, sizeof path, "%s/inspect.json", o->out);
    char *text = cJSON_Print(root);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errsz, "%s: cannot write the report", path);
        free(text);
        cJSON_Delete(root);
        return -1;
    }
    fputs(text, f);
    fputc('\n', f);
    fclose(f);
    free(text);
    cJSON_Delete(root);

    snprintf(path, sizeof path, "%s/inspect.md", o->out);
    f = fopen(path, "w");
    if (!f) {
        snprintf(err, errsz, "%s: cannot write the report", path);
        return -1;
    }
    fprintf(f, "# Codegen contract: %s\n\n", c->path);
    fprintf(f, "- translation unit: `%s`\n- AOT: IR `%s`, remarks `%s`\n- JIT: %s%s%s\n", o->tu ? o->tu : "(none)", ir,
            remarks, obj ? "tcc object `" : "not run", obj ? obj : "", obj ? "`" : "");
    fprintf(f, "- verdict: **%s** (exit %d): %d rule(s), AOT failures %d, JIT failures %d, JIT info %d%s\n",
            exit_code == 0 ? "PASS" : "FAIL", exit_code, c->nrules, aot_fail, jit_fail, jit_info,
            o->jit_strict ? " (--jit-strict)" : "");
    fprintf(f, "- must-inline call sites satisfied on AOT: %d\n\n", ti_aot_sites_satisfied(c));
    fprintf(f, "| function | rule | arg | AOT | JIT | AOT evidence | JIT evidence |\n");
    fprintf(f, "| --- | --- | --- | --- | --- | --- | --- |\n");
    for (int k = 0; k < c->nrules; k++) {
        const ti_rule *r = &c->rules[k];
        fprintf(f, "| %s | %s | ", r->function, ti_rule_name(r->kind));
        md_cell(f, rule_arg(r, arg, sizeof arg));
        fprintf(f, " | %s: ", badge(r->aot.status));
        md_cell(f, r->aot.summary);
        fprintf(f, " | %s: ", badge(r->jit.status));
        md_cell(f, r->jit.summary);
        fputs(" | ", f);
        md_cell(f, r->aot.evidence.n ? r->aot.evidence.v[0] : "");
        fputs(" | ", f);
        md_cell(f, r->jit.evidence.n ? r->jit.evidence.v[0] : "");
        fputs(" |\n", f);
    }
    fprintf(f, "\n## Evidence\n");
    for (int k = 0; k < c->nrules; k++) {
        const ti_rule *r = &c->rules[k];
        fprintf(f, "\n### %s: %s %s\n\n", r->function, ti_rule_name(r->kind), rule_arg(r, arg, sizeof arg));
        const ti_result *side[2] = { &r->aot, &r->jit };
        const char *nm[2] = { "AOT", "JIT" };
        for (int s = 0; s < 2; s++) {
            fprintf(f, "- %s %s: %s\n", nm[s], badge(side[s]->status), side[s]->summary ? side[s]->summary : "");
            for (int i = 0; i < side[s]->evidence.n; i++)
                fprintf(f, "  - %s\n", side[s]->evidence.v[i]);
        }
    }
    fprintf(f, "\nScope notes: a rule on a function that was inlined everywhere (no symbol left) is checked on the\n"
               "functions it was inlined into (named in the evidence). The JIT side checks the function and the callees\n"
               "the AOT build inlined into it, since tcc calls them instead; tcc never inlines, so must_inline is\n"
               "`info` there unless --jit-strict.\n");
    fclose(f);
    return 0;
}
