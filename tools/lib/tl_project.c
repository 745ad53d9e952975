/*
 * tl_project.c - load and validate tandem.json (see tl_project.h for the format).
 *
 * Every field is checked where it is read, and every error names the file and the field:
 * a user's first contact with Tandem is often a hand-written project file, and "invalid
 * project" without the field would leave them guessing.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tl_project.h"

#include "tl_err.h"
#include "tl_fs.h"
#include "tl_json.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct ctx {
    const char *file;
    tl_project *p;
} ctx;

/* Unknown keys are errors, so that a misspelt optional field ("smok") is not silently
 * ignored. `allowed` is NULL-terminated. */
static int check_keys(const ctx *c, const cJSON *obj, const char *at, const char *const *allowed)
{
    int bad = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, obj) {
        int ok = 0;
        for (const char *const *a = allowed; *a && !ok; a++) ok = !strcmp(*a, it->string);
        if (!ok) {
            char f[256], list[512] = "";
            for (const char *const *a = allowed; *a; a++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", a == allowed ? "" : ", ", *a);
            tl_error(c->file, tl_json_at(f, sizeof f, at, it->string), "unknown key (expected one of: %s)", list);
            bad = 1;
        }
    }
    return bad;
}

static const cJSON *get_obj(const ctx *c, const cJSON *obj, const char *at, const char *key, int required)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    char f[256];
    if (!v) {
        if (required) tl_error(c->file, tl_json_at(f, sizeof f, at, key), "missing (expected an object)");
        return NULL;
    }
    if (!cJSON_IsObject(v)) {
        tl_error(c->file, tl_json_at(f, sizeof f, at, key), "expected an object");
        return NULL;
    }
    return v;
}

static int is_ident(const char *s)
{
    if (!s[0] || isdigit((unsigned char)s[0]) || strlen(s) > 63) return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_') return 0;
    return 1;
}

/* A path field: relative to the project root, or "@tandem/..." in Tandem's tree; no ".."
 * or absolute paths (tl_rel_path_ok); must exist as a folder (want_dir) or regular file. */
static int resolve_path(const ctx *c, const char *field, const char *rel, int want_dir, char **out)
{
    const char *base = c->p->root, *r = rel, *why = NULL;
    size_t pl = strlen(TL_PROJECT_TANDEM_PREFIX);
    if (!strncmp(rel, TL_PROJECT_TANDEM_PREFIX, pl)) {
        base = c->p->tandem_root;
        r = rel + pl;
    }
    if (!tl_rel_path_ok(r, &why)) {
        tl_error(c->file, field, "'%s': %s (paths are relative to the project folder, or start with %s)", rel, why,
                 TL_PROJECT_TANDEM_PREFIX);
        return 1;
    }
    char *full = tl_join(base, r);
    if (!full) { tl_error(c->file, field, "out of memory"); return 1; }
    if (want_dir ? !tl_is_dir(full) : !tl_is_file(full)) {
        tl_error(c->file, field, "'%s': %s is not an existing %s", rel, full, want_dir ? "folder" : "regular file");
        free(full);
        return 1;
    }
    *out = full;
    return 0;
}

static int get_path(const ctx *c, const cJSON *obj, const char *at, const char *key, int required, int want_dir,
                    char **out)
{
    char f[256];
    tl_json_at(f, sizeof f, at, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v && !required) return 0;
    if (!v) { tl_error(c->file, f, "missing (expected a path)"); return 1; }
    if (!cJSON_IsString(v)) { tl_error(c->file, f, "expected a string (a path)"); return 1; }
    return resolve_path(c, f, v->valuestring, want_dir, out);
}

static int get_name(const ctx *c, const cJSON *obj, const char *at, const char *key, int required, char **out)
{
    char f[256];
    tl_json_at(f, sizeof f, at, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v && !required) return 0;
    if (!v) { tl_error(c->file, f, "missing (expected a name)"); return 1; }
    if (!cJSON_IsString(v) || !v->valuestring[0]) { tl_error(c->file, f, "expected a non-empty string"); return 1; }
    if (!(*out = strdup(v->valuestring))) { tl_error(c->file, f, "out of memory"); return 1; }
    return 0;
}

/* An array of strings; each must be a C identifier when `ident`. */
static int get_strs(const ctx *c, const cJSON *obj, const char *at, const char *key, int ident, char **out, int *n)
{
    char f[256];
    tl_json_at(f, sizeof f, at, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key), *it;
    if (!v) return 0;
    if (!cJSON_IsArray(v)) { tl_error(c->file, f, "expected an array of strings"); return 1; }
    if (cJSON_GetArraySize(v) > TL_PROJECT_MAX) { tl_error(c->file, f, "more than %d entries", TL_PROJECT_MAX); return 1; }
    int i = 0, bad = 0;
    cJSON_ArrayForEach(it, v) {
        if (!cJSON_IsString(it) || (ident ? !is_ident(it->valuestring) : !it->valuestring[0])) {
            tl_error(c->file, f, "[%d]: expected %s", i, ident ? "a C identifier (a name)" : "a non-empty string");
            bad = 1;
        } else if (!(out[(*n)++] = strdup(it->valuestring))) {
            bad = 1;
        }
        i++;
    }
    return bad;
}

static int get_number(const ctx *c, const cJSON *obj, const char *at, const char *key, double lo, double hi,
                      int integer, double *out)
{
    char f[256];
    tl_json_at(f, sizeof f, at, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) return 0;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi ||
        (integer && v->valuedouble != floor(v->valuedouble))) {
        tl_error(c->file, f, "expected %s from %g to %g", integer ? "an integer" : "a number", lo, hi);
        return 1;
    }
    *out = v->valuedouble;
    return 0;
}

static int has_subject(const tl_project *p, const char *name)
{
    return name && tl_project_subject_find(p, name) != NULL;
}

static int load_runtime(const ctx *c, const cJSON *doc)
{
    static const char *const keys[] = { "sources", "include", "port", "contract", NULL };
    const cJSON *rt = get_obj(c, doc, "", "runtime", 1);
    if (!rt) return 1;
    int bad = check_keys(c, rt, "runtime", keys);
    bad |= get_path(c, rt, "runtime", "sources", 1, 1, &c->p->sources);
    bad |= get_path(c, rt, "runtime", "include", 1, 1, &c->p->include);
    bad |= get_path(c, rt, "runtime", "port", 0, 1, &c->p->port);
    bad |= get_path(c, rt, "runtime", "contract", 0, 0, &c->p->contract);
    return bad;
}

/* A library a subject links: a name for -lNAME (letters, digits, '_', '.', '+', '-', not
 * starting with '-' or '.') or an absolute path to an existing regular file. */
static int check_lib(const ctx *c, const char *field, const char *lib)
{
    if (lib[0] == '/') {
        if (tl_is_file(lib)) return 0;
        tl_error(c->file, field, "'%s' is not an existing regular file (an absolute path names a library file)", lib);
        return 1;
    }
    int ok = lib[0] && lib[0] != '-' && lib[0] != '.' && strlen(lib) < 64;
    for (const char *q = lib; ok && *q; q++) ok = isalnum((unsigned char)*q) || strchr("_.+-", *q);
    if (!ok)
        tl_error(c->file, field, "'%s': expected a library name (linked as -lNAME: letters, digits, '_', '.', '+', '-') "
                 "or an absolute path to a library file", lib);
    return !ok;
}

static int load_subjects(const ctx *c, const cJSON *doc)
{
    static const char *const keys[] = { "folder", "link", NULL };
    const cJSON *subs = get_obj(c, doc, "", "subjects", 1), *it;
    if (!subs) return 1;
    int bad = 0;
    cJSON_ArrayForEach(it, subs) {
        char at[256];
        snprintf(at, sizeof at, "subjects.%s", it->string);
        if (!is_ident(it->string)) { tl_error(c->file, at, "a subject's name must be a C identifier"); bad = 1; continue; }
        if (!cJSON_IsObject(it)) { tl_error(c->file, at, "expected an object {\"folder\": PATH}"); bad = 1; continue; }
        if (c->p->nsubjects == TL_PROJECT_MAX) { tl_error(c->file, at, "more than %d subjects", TL_PROJECT_MAX); return 1; }
        tl_project_subject *s = &c->p->subjects[c->p->nsubjects++];
        s->name = strdup(it->string);
        bad |= check_keys(c, it, at, keys);
        bad |= get_path(c, it, at, "folder", 1, 1, &s->folder);
        int lbad = get_strs(c, it, at, "link", 0, s->link, &s->nlink);
        for (int i = 0; !lbad && i < s->nlink; i++) {
            char f[320];
            snprintf(f, sizeof f, "%s.link[%d]", at, i);
            lbad |= check_lib(c, f, s->link[i]);
        }
        bad |= lbad;
        /* one source of truth: a link.libs of the folder's own would be silently replaced */
        char *own = s->folder ? tl_join(s->folder, "link.libs") : NULL;
        struct stat ost;
        if (own && lstat(own, &ost) == 0) {
            tl_error(c->file, at, "%s: a subject's link libraries are named in tandem.json (%s.link), not in its "
                     "folder: move its lines there and remove the file", own, at);
            bad = 1;
        }
        free(own);
    }
    if (!bad && c->p->nsubjects == 0) { tl_error(c->file, "subjects", "no subject (name at least one)"); bad = 1; }
    return bad;
}

static int load_suites(const ctx *c, const cJSON *doc)
{
    const cJSON *suites = get_obj(c, doc, "", "suites", 1), *it;
    if (!suites) return 1;
    int bad = 0;
    cJSON_ArrayForEach(it, suites) {
        char at[256];
        snprintf(at, sizeof at, "suites.%s", it->string);
        if (!is_ident(it->string)) { tl_error(c->file, at, "a suite's name must be a C identifier"); bad = 1; continue; }
        if (!cJSON_IsString(it)) { tl_error(c->file, at, "expected a string (the suite's folder)"); bad = 1; continue; }
        if (c->p->nsuites == TL_PROJECT_MAX) { tl_error(c->file, at, "more than %d suites", TL_PROJECT_MAX); return 1; }
        tl_project_suite *s = &c->p->suites[c->p->nsuites++];
        s->name = strdup(it->string);
        bad |= resolve_path(c, at, it->valuestring, 1, &s->folder);
    }
    if (!bad && c->p->nsuites == 0) { tl_error(c->file, "suites", "no suite (name at least one)"); bad = 1; }
    if (!bad && get_name(c, doc, "", "smoke", 0, &c->p->smoke)) bad = 1;
    if (!bad && c->p->smoke && !tl_project_suite_find(c->p, c->p->smoke)) {
        tl_error(c->file, "smoke", "'%s' is not one of the suites", c->p->smoke);
        bad = 1;
    }
    return bad;
}

static int load_gate(const ctx *c, const cJSON *doc)
{
    static const char *const keys[] = { "subject", "peers", "lowerBound", "gatedSuites", "unsupportedRows", "config",
                                        NULL };
    const cJSON *g = get_obj(c, doc, "", "gate", 1);
    tl_project *p = c->p;
    if (!g) return 1;
    int bad = check_keys(c, g, "gate", keys);
    bad |= get_name(c, g, "gate", "subject", 1, &p->gate_subject);
    bad |= get_name(c, g, "gate", "lowerBound", 0, &p->lower_bound);
    bad |= get_strs(c, g, "gate", "peers", 1, p->peers, &p->npeers);
    bad |= get_strs(c, g, "gate", "gatedSuites", 1, p->gated_suites, &p->ngated_suites);
    bad |= get_path(c, g, "gate", "config", 0, 0, &p->gate_config);
    char *un = NULL;
    bad |= get_name(c, g, "gate", "unsupportedRows", 0, &un);
    if (un && strcmp(un, "na") && strcmp(un, "invalid")) {
        tl_error(c->file, "gate.unsupportedRows", "'%s': expected \"na\" or \"invalid\"", un);
        bad = 1;
    }
    p->unsupported_invalid = un && !strcmp(un, "invalid");
    free(un);
    if (bad) return 1;
    if (!has_subject(p, p->gate_subject)) {
        tl_error(c->file, "gate.subject", "'%s' is not one of the subjects", p->gate_subject);
        bad = 1;
    }
    if (p->lower_bound && !has_subject(p, p->lower_bound)) {
        tl_error(c->file, "gate.lowerBound", "'%s' is not one of the subjects", p->lower_bound);
        bad = 1;
    }
    for (int i = 0; i < p->npeers; i++)
        if (!has_subject(p, p->peers[i]) || !strcmp(p->peers[i], p->gate_subject)) {
            char f[64];
            snprintf(f, sizeof f, "gate.peers[%d]", i);
            tl_error(c->file, f, "'%s' is not one of the subjects other than gate.subject", p->peers[i]);
            bad = 1;
        }
    for (int i = 0; i < p->ngated_suites; i++)
        if (!tl_project_suite_find(p, p->gated_suites[i])) {
            char f[64];
            snprintf(f, sizeof f, "gate.gatedSuites[%d]", i);
            tl_error(c->file, f, "'%s' is not one of the suites", p->gated_suites[i]);
            bad = 1;
        }
    return bad;
}

static int load_attempt(const ctx *c, const cJSON *doc)
{
    static const char *const keys[] = { "rounds", "samples", "timeout", "backends", NULL };
    const cJSON *a = get_obj(c, doc, "", "attempt", 0);
    tl_project *p = c->p;
    if (!a) return cJSON_GetObjectItemCaseSensitive(doc, "attempt") != NULL;
    /* the same ranges as `tandem attempt`'s options */
    double rounds = 0, samples = 0;
    int bad = check_keys(c, a, "attempt", keys);
    bad |= get_number(c, a, "attempt", "rounds", 1, 20, 1, &rounds);
    bad |= get_number(c, a, "attempt", "samples", 1, 1000000, 1, &samples);
    bad |= get_number(c, a, "attempt", "timeout", 0.001, 86400, 0, &p->timeout);
    bad |= get_strs(c, a, "attempt", "backends", 1, p->backends, &p->nbackends);
    p->rounds = (int)rounds;
    p->samples = (int)samples;
    for (int i = 0; i < p->nbackends; i++)
        if (strcmp(p->backends[i], "aot") && strcmp(p->backends[i], "jit")) {
            char f[64];
            snprintf(f, sizeof f, "attempt.backends[%d]", i);
            tl_error(c->file, f, "'%s' is not aot or jit", p->backends[i]);
            bad = 1;
        }
    return bad;
}

int tl_project_load(const char *path, const char *tandem_root, tl_project *p)
{
    memset(p, 0, sizeof *p);
    char *abs = tl_abspath(path);
    if (!abs) { tl_error(path, NULL, "cannot resolve the path"); return 1; }
    if (tl_is_dir(abs)) {
        p->root = abs;
        p->file = tl_join(abs, TL_PROJECT_FILE);
    } else {
        p->file = abs;
        p->root = strdup(abs);
        char *slash = strrchr(p->root, '/');
        if (slash) *(slash == p->root ? slash + 1 : slash) = 0;
    }
    p->tandem_root = tl_abspath(tandem_root);
    if (!p->file || !p->root || !p->tandem_root) { tl_error(path, NULL, "out of memory"); return 1; }
    cJSON *doc = NULL;
    if (tl_json_load(p->file, &doc)) return 1;
    ctx c = { p->file, p };
    static const char *const keys[] = { "tandemProject", "name", "runtime", "subjects", "suites", "smoke",
                                        "gate", "attempt", NULL };
    int bad = 0;
    if (!cJSON_IsObject(doc)) {
        tl_error(p->file, NULL, "expected an object");
        bad = 1;
    } else {
        double schema = 0;
        const cJSON *sv = cJSON_GetObjectItemCaseSensitive(doc, "tandemProject");
        if (!sv) { tl_error(p->file, "tandemProject", "missing (expected %d)", TL_PROJECT_SCHEMA); bad = 1; }
        else if (get_number(&c, doc, "", "tandemProject", TL_PROJECT_SCHEMA, TL_PROJECT_SCHEMA, 1, &schema)) bad = 1;
        bad |= check_keys(&c, doc, "", keys);
        bad |= get_name(&c, doc, "", "name", 1, &p->name);
        bad |= load_runtime(&c, doc);
        bad |= load_subjects(&c, doc);
        bad |= load_suites(&c, doc);
        if (!bad) bad |= load_gate(&c, doc);   /* names subjects and suites: after them */
        bad |= load_attempt(&c, doc);
    }
    cJSON_Delete(doc);
    return bad;
}

static void free_strs(char **v, int n)
{
    for (int i = 0; i < n; i++) free(v[i]);
}

void tl_project_free(tl_project *p)
{
    if (!p) return;
    free(p->root); free(p->file); free(p->tandem_root); free(p->name);
    free(p->sources); free(p->include); free(p->port); free(p->contract);
    for (int i = 0; i < p->nsubjects; i++) {
        free(p->subjects[i].name);
        free(p->subjects[i].folder);
        free_strs(p->subjects[i].link, p->subjects[i].nlink);
    }
    for (int i = 0; i < p->nsuites; i++) { free(p->suites[i].name); free(p->suites[i].folder); }
    free(p->smoke); free(p->gate_subject); free(p->lower_bound); free(p->gate_config);
    free_strs(p->peers, p->npeers);
    free_strs(p->gated_suites, p->ngated_suites);
    free_strs(p->backends, p->nbackends);
    memset(p, 0, sizeof *p);
}

char *tl_project_locate(const char *given, const char *fallback)
{
    if (given) {
        char *abs = tl_abspath(given);
        char *f = abs ? tl_join(abs, TL_PROJECT_FILE) : NULL;
        int ok = f && (tl_is_file(f) || tl_is_file(abs));
        free(f);
        if (!ok) {
            tl_error(given, NULL, "no %s there (--project names a folder holding one, or the file)", TL_PROJECT_FILE);
            free(abs);
            return NULL;
        }
        return abs;
    }
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd)) {
        for (;;) {
            char *f = tl_join(cwd, TL_PROJECT_FILE);
            int ok = f && tl_is_file(f);
            free(f);
            if (ok) return strdup(cwd);
            char *slash = strrchr(cwd, '/');
            if (!slash || slash == cwd) break;
            *slash = 0;
        }
    }
    return tl_abspath(fallback);
}

int tl_project_open(const char *given, const char *tandem_root, tl_project *p)
{
    memset(p, 0, sizeof *p);
    if (!tandem_root) return 1;   /* no Tandem home: tl_home() said why */
    char *dir = tl_project_locate(given, tandem_root);
    int rc = !dir || tl_project_load(dir, tandem_root, p);
    free(dir);
    return rc;
}

void tl_project_subject_list(const tl_project *p, char *buf, size_t len)
{
    snprintf(buf, len, "%s", p->gate_subject ? p->gate_subject : "");
    for (int i = 0; i < p->nsubjects; i++) {
        if (p->gate_subject && !strcmp(p->subjects[i].name, p->gate_subject)) continue;
        size_t l = strlen(buf);
        snprintf(buf + l, len - l, "%s%s", l ? "," : "", p->subjects[i].name);
    }
}

const tl_project_subject *tl_project_subject_find(const tl_project *p, const char *name)
{
    for (int i = 0; i < p->nsubjects; i++)
        if (!strcmp(p->subjects[i].name, name)) return &p->subjects[i];
    return NULL;
}

const tl_project_suite *tl_project_suite_find(const tl_project *p, const char *name)
{
    for (int i = 0; i < p->nsuites; i++)
        if (!strcmp(p->suites[i].name, name)) return &p->suites[i];
    return NULL;
}

int tl_project_measured_suites(const tl_project *p, const char **out, int max)
{
    int n = 0;
    for (int i = 0; i < p->nsuites && n < max - 1; i++) {
        const char *s = p->suites[i].name;
        if ((p->smoke && !strcmp(s, p->smoke)) || !strcmp(s, TL_PROJECT_DEMO_SUITE)) continue;
        out[n++] = s;
    }
    if (max > 0) out[n] = NULL;
    return n;
}
