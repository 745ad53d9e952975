/*
 * contract.c - load and validate a codegen contract (JSON, read with cJSON).
 *
 * {
 *   "schema": "tandem-contract/1",
 *   "init_guards": {                        guards no hot function may test
 *     "variables": ["td_g_initialised"],     exact global names
 *     "patterns": ["*initiali[sz]ed*"],      fnmatch patterns over global names
 *     "once_functions": ["pthread_once"],    default: pthread_once, call_once, __cxa_guard_acquire
 *     "initialisers": ["td_runtime_init"],   declared initialiser functions
 *     "finalisers": ["td_runtime_shutdown"], shutdown functions (their writes do not make a
 *                                            global "written after init")
 *     "allowed_settings": {                  settings a hot path may branch on, each with a reason
 *       "td_runtime_settings.tracking": "why this branch is not an init guard"
 *     }
 *   },
 *   "allocators": ["malloc", ...],           what "no_call": true forbids (default malloc calloc realloc free)
 *   "functions": {
 *     "td_task_get": {
 *       "must_inline": ["td_source_get_core"],
 *       "no_init_check": true,
 *       "no_call": true,                       or an array of callee names
 *       "clears_frame": true,                  or {"frame_size": 72, "frame_type": "struct.td_frame"}
 *       "no_frame_copy": true,                 or {"frame_size": N, "frame_type": T, "min_copy_bytes": N}
 *       "no_locked": true,                     no locked instruction (a single-thread fast path)
 *       "backends": ["aot"]                    the backends whose code has the function
 *                                              (default both: a function one compiler's
 *                                              build leaves out, e.g. out of line only
 *                                              where it inlines, is checked there only)
 *     }
 *   }
 * }
 * Keys starting with "_" are comments. Any other unknown key is an error, so a typo in
 * a rule name cannot silently disable it.
 */
#include "inspect.h"

#include <cjson/cJSON.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = 0;
        if (len)
            *len = (size_t)n;
    }
    return buf;
}

static int str_array(const cJSON *a, ti_strlist *out, const char *path, const char *field, char *err,
                     size_t errsz)
{
    if (!cJSON_IsArray(a)) {
        snprintf(err, errsz, "%s: field '%s': expected an array of strings", path, field);
        return -1;
    }
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        if (!cJSON_IsString(e) || !e->valuestring[0]) {
            snprintf(err, errsz, "%s: field '%s[%d]': expected a non-empty string", path, field, i);
            return -1;
        }
        ti_sl_add(out, e->valuestring);
        i++;
    }
    return 0;
}

/* init_guards.allowed_settings: {"global.field": "reason", ...}; the name must be a C
 * designator of a global (identifier, then .field or [index] parts). */
static int settings_load(const cJSON *o, ti_contract *c, const char *path, char *err, size_t errsz)
{
    if (!cJSON_IsObject(o)) {
        snprintf(err, errsz, "%s: field 'init_guards.allowed_settings': expected an object of \"setting\": \"reason\"", path);
        return -1;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, o)
    {
        const char *n = e->string;
        if (n[0] == '_')
            continue;
        if (!cJSON_IsString(e) || !e->valuestring[0]) {
            snprintf(err, errsz, "%s: field 'init_guards.allowed_settings.%s': expected the reason (a non-empty string)",
                     path, n);
            return -1;
        }
        size_t id = strspn(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        int ok = id > 0 && !(n[0] >= '0' && n[0] <= '9') && strspn(n + id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.[]") == strlen(n + id)
                 && (n[id] == 0 || n[id] == '.' || n[id] == '[');
        if (!ok) {
            snprintf(err, errsz,
                     "%s: field 'init_guards.allowed_settings.%s': not a global or a field of one (e.g. settings.tracking)",
                     path, n);
            return -1;
        }
        c->settings = realloc(c->settings, sizeof(ti_setting) * (size_t)(c->nsettings + 1));
        ti_setting *st = &c->settings[c->nsettings++];
        st->name = ti_strdup(n);
        st->global = ti_fmt("%.*s", (int)id, n);
        st->reason = ti_strdup(e->valuestring);
        st->off = 0;
        st->size = -1;
    }
    return 0;
}

static ti_rule *new_rule(ti_contract *c, ti_rule_kind k, const char *fn)
{
    c->rules = realloc(c->rules, sizeof(ti_rule) * (size_t)(c->nrules + 1));
    ti_rule *r = &c->rules[c->nrules++];
    memset(r, 0, sizeof *r);
    r->kind = k;
    r->function = ti_strdup(fn);
    r->frame_size = -1;
    r->min_copy = -1;
    r->backends = TI_ON_AOT | TI_ON_JIT;
    return r;
}

/* functions.NAME.backends: a non-empty array of "aot" / "jit", each once. Returns the mask,
 * or 0 with a message in err naming the file and the field. */
static int backends_mask(const cJSON *e, const char *path, const char *field, char *err, size_t errsz)
{
    int mask = 0;
    const cJSON *b;
    if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) == 0) {
        snprintf(err, errsz, "%s: field '%s': expected a non-empty array of \"aot\" and \"jit\"", path, field);
        return 0;
    }
    cJSON_ArrayForEach(b, e)
    {
        int bit = !cJSON_IsString(b) ? 0 : !strcmp(b->valuestring, "aot") ? TI_ON_AOT
                  : !strcmp(b->valuestring, "jit") ? TI_ON_JIT : 0;
        if (!bit || (mask & bit)) {
            snprintf(err, errsz, "%s: field '%s': %s (expected \"aot\" and \"jit\", each once)", path, field,
                     bit ? "a backend named twice" : "not a backend");
            return 0;
        }
        mask |= bit;
    }
    return mask;
}

static int frame_opts(const cJSON *v, ti_rule *r, const char *path, const char *field, char *err,
                      size_t errsz)
{
    if (cJSON_IsTrue(v))
        return 0;
    if (!cJSON_IsObject(v)) {
        snprintf(err, errsz, "%s: field '%s': expected true or an object", path, field);
        return -1;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, v)
    {
        if (e->string[0] == '_')
            continue;
        if (!strcmp(e->string, "frame_size") || !strcmp(e->string, "min_copy_bytes")) {
            if (!cJSON_IsNumber(e) || e->valuedouble < 0) {
                snprintf(err, errsz, "%s: field '%s.%s': expected a non-negative number", path, field,
                         e->string);
                return -1;
            }
            if (!strcmp(e->string, "frame_size"))
                r->frame_size = (long long)e->valuedouble;
            else
                r->min_copy = (long long)e->valuedouble;
        } else if (!strcmp(e->string, "frame_type")) {
            if (!cJSON_IsString(e)) {
                snprintf(err, errsz, "%s: field '%s.frame_type': expected a string", path, field);
                return -1;
            }
            r->frame_type = ti_strdup(e->valuestring);
        } else {
            snprintf(err, errsz, "%s: field '%s.%s': unknown option (frame_size, frame_type, min_copy_bytes)",
                     path, field, e->string);
            return -1;
        }
    }
    return 0;
}

/* The contract's JSON; NULL with a message (naming the line of a syntax error). */
static cJSON *parse_file(const char *path, char *err, size_t errsz)
{
    char *text = read_file(path, NULL);
    if (!text) {
        snprintf(err, errsz, "%s: cannot read the contract", path);
        return NULL;
    }
    cJSON *root = cJSON_Parse(text);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        int line = 1;
        for (const char *p = text; at && p < at; p++)
            line += *p == '\n';
        snprintf(err, errsz, "%s: not valid JSON (near line %d)", path, line);
    }
    free(text);
    return root;
}

/* The top level: an object of known fields, the schema if given. */
static int check_top(const cJSON *root, const char *path, char *err, size_t errsz)
{
    if (!cJSON_IsObject(root)) {
        snprintf(err, errsz, "%s: the contract must be a JSON object", path);
        return -1;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, root)
    {
        const char *k = e->string;
        if (k[0] == '_' || !strcmp(k, "schema") || !strcmp(k, "description") || !strcmp(k, "functions")
            || !strcmp(k, "init_guards") || !strcmp(k, "allocators"))
            continue;
        snprintf(err, errsz, "%s: field '%s': unknown top-level field", path, k);
        return -1;
    }
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    if (schema && (!cJSON_IsString(schema) || strcmp(schema->valuestring, "tandem-contract/1"))) {
        snprintf(err, errsz, "%s: field 'schema': expected \"tandem-contract/1\"", path);
        return -1;
    }
    return 0;
}

/* init_guards (optional), then the default once functions when it names none. */
static int load_guards(const cJSON *g, ti_contract *c, const char *path, char *err, size_t errsz)
{
    int have_once = 0;
    if (g && !cJSON_IsObject(g)) {
        snprintf(err, errsz, "%s: field 'init_guards': expected an object", path);
        return -1;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, g)
    {
        char field[128];
        snprintf(field, sizeof field, "init_guards.%s", e->string);
        ti_strlist *dst = NULL;
        if (e->string[0] == '_')
            continue;
        if (!strcmp(e->string, "allowed_settings")) {
            if (settings_load(e, c, path, err, errsz))
                return -1;
            continue;
        }
        if (!strcmp(e->string, "variables"))
            dst = &c->guard_vars;
        else if (!strcmp(e->string, "patterns"))
            dst = &c->guard_patterns;
        else if (!strcmp(e->string, "once_functions")) {
            dst = &c->once_functions;
            have_once = 1;
        } else if (!strcmp(e->string, "initialisers") || !strcmp(e->string, "initializers"))
            dst = &c->initialisers;
        else if (!strcmp(e->string, "finalisers") || !strcmp(e->string, "finalizers"))
            dst = &c->finalisers;
        else {
            snprintf(err, errsz,
                     "%s: field '%s': unknown field (variables, patterns, once_functions, initialisers, finalisers, "
                     "allowed_settings)",
                     path, field);
            return -1;
        }
        if (str_array(e, dst, path, field, err, errsz))
            return -1;
    }
    if (!have_once) {
        ti_sl_add(&c->once_functions, "pthread_once");
        ti_sl_add(&c->once_functions, "call_once");
        ti_sl_add(&c->once_functions, "__cxa_guard_acquire");
    }
    return 0;
}

/* allocators, else the default list ("no_call": true forbids them). */
static int load_allocators(const cJSON *al, ti_contract *c, const char *path, char *err, size_t errsz)
{
    if (al)
        return str_array(al, &c->allocators, path, "allocators", err, errsz);
    const char *def[] = { "malloc", "calloc", "realloc", "free", "aligned_alloc", "posix_memalign" };
    for (size_t i = 0; i < sizeof def / sizeof *def; i++)
        ti_sl_add(&c->allocators, def[i]);
    return 0;
}

/* A rule that is true or false (no_init_check, no_locked): a rule row when true. */
static int bool_rule(const cJSON *e, ti_contract *c, ti_rule_kind k, const char *name, const char *path,
                     const char *field, char *err, size_t errsz)
{
    if (!cJSON_IsBool(e)) {
        snprintf(err, errsz, "%s: field '%s': expected true or false", path, field);
        return -1;
    }
    if (cJSON_IsTrue(e))
        new_rule(c, k, name);
    return 0;
}

/* One rule of functions.NAME (the key k, its value e): its rule rows. */
static int load_rule(const cJSON *e, ti_contract *c, const char *name, const char *path, const char *field,
                     char *err, size_t errsz)
{
    const char *k = e->string;
    if (!strcmp(k, "must_inline")) {
        ti_strlist callees = { 0 };
        int rc = str_array(e, &callees, path, field, err, errsz);
        for (int i = 0; !rc && i < callees.n; i++)
            new_rule(c, TI_MUST_INLINE, name)->callee = ti_strdup(callees.v[i]);
        ti_sl_free(&callees);
        return rc;
    }
    if (!strcmp(k, "no_init_check"))
        return bool_rule(e, c, TI_NO_INIT_CHECK, name, path, field, err, errsz);
    if (!strcmp(k, "no_locked"))
        return bool_rule(e, c, TI_NO_LOCKED, name, path, field, err, errsz);
    if (!strcmp(k, "no_call")) {
        if (cJSON_IsFalse(e))
            return 0;
        ti_rule *r = new_rule(c, TI_NO_CALL, name);
        if (!cJSON_IsTrue(e))
            return str_array(e, &r->names, path, field, err, errsz);
        for (int i = 0; i < c->allocators.n; i++)
            ti_sl_add(&r->names, c->allocators.v[i]);
        return 0;
    }
    if (!strcmp(k, "clears_frame") || !strcmp(k, "no_frame_copy")) {
        if (cJSON_IsFalse(e))
            return 0;
        ti_rule *r = new_rule(c, k[0] == 'c' ? TI_CLEARS_FRAME : TI_NO_FRAME_COPY, name);
        return frame_opts(e, r, path, field, err, errsz);
    }
    snprintf(err, errsz,
             "%s: field '%s': unknown rule (must_inline, no_init_check, no_call, clears_frame, no_frame_copy, no_locked; or backends)",
             path, field);
    return -1;
}

/* functions.NAME: its rules, each with the function's backends. */
static int load_function(const cJSON *fn, ti_contract *c, const char *path, char *err, size_t errsz)
{
    const char *name = fn->string;
    if (!cJSON_IsObject(fn)) {
        snprintf(err, errsz, "%s: field 'functions.%s': expected an object of rules", path, name);
        return -1;
    }
    int first_rule = c->nrules, mask = TI_ON_AOT | TI_ON_JIT;
    const cJSON *e;
    cJSON_ArrayForEach(e, fn)
    {
        char field[512];
        snprintf(field, sizeof field, "functions.%s.%s", name, e->string);
        if (e->string[0] == '_')
            continue;
        if (!strcmp(e->string, "backends")) {
            if (!(mask = backends_mask(e, path, field, err, errsz)))
                return -1;
        } else if (load_rule(e, c, name, path, field, err, errsz))
            return -1;
    }
    for (int i = first_rule; i < c->nrules; i++)
        c->rules[i].backends = mask;
    return 0;
}

int ti_contract_load(const char *path, ti_contract *c, char *err, size_t errsz)
{
    memset(c, 0, sizeof *c);
    c->path = ti_strdup(path);
    cJSON *root = parse_file(path, err, errsz);
    if (!root)
        return -1;
    int rc = -1;
    if (check_top(root, path, err, errsz) ||
        load_guards(cJSON_GetObjectItemCaseSensitive(root, "init_guards"), c, path, err, errsz) ||
        load_allocators(cJSON_GetObjectItemCaseSensitive(root, "allocators"), c, path, err, errsz))
        goto out;
    const cJSON *fns = cJSON_GetObjectItemCaseSensitive(root, "functions");
    if (!cJSON_IsObject(fns)) {
        snprintf(err, errsz, "%s: field 'functions': missing or not an object", path);
        goto out;
    }
    const cJSON *fn;
    cJSON_ArrayForEach(fn, fns)
    {
        if (fn->string[0] != '_' && load_function(fn, c, path, err, errsz))
            goto out;
    }
    if (c->nrules == 0) {
        snprintf(err, errsz, "%s: field 'functions': the contract declares no rules", path);
        goto out;
    }
    rc = 0;
out:
    cJSON_Delete(root);
    return rc;
}

static void free_result(ti_result *r)
{
    free(r->summary);
    ti_sl_free(&r->evidence);
}

void ti_contract_free(ti_contract *c)
{
    for (int i = 0; i < c->nrules; i++) {
        ti_rule *r = &c->rules[i];
        free(r->function);
        free(r->callee);
        free(r->frame_type);
        ti_sl_free(&r->names);
        free_result(&r->aot);
        free_result(&r->jit);
    }
    free(c->rules);
    free(c->path);
    ti_sl_free(&c->guard_vars);
    ti_sl_free(&c->guard_patterns);
    ti_sl_free(&c->once_functions);
    ti_sl_free(&c->initialisers);
    ti_sl_free(&c->finalisers);
    for (int i = 0; i < c->nsettings; i++) {
        free(c->settings[i].name);
        free(c->settings[i].global);
        free(c->settings[i].reason);
    }
    free(c->settings);
    ti_sl_free(&c->allocators);
    memset(c, 0, sizeof *c);
}

int ti_is_guard_name(const ti_contract *c, const char *name)
{
    if (!name || !name[0])
        return 0;
    if (ti_sl_has(&c->guard_vars, name))
        return 1;
    for (int i = 0; i < c->guard_patterns.n; i++)
        if (fnmatch(c->guard_patterns.v[i], name, 0) == 0)
            return 1;
    return 0;
}

int ti_is_init_call(const ti_contract *c, const char *name)
{
    return name && (ti_sl_has(&c->once_functions, name) || ti_sl_has(&c->initialisers, name));
}

int ti_is_once_call(const ti_contract *c, const char *name)
{
    return name && ti_sl_has(&c->once_functions, name);
}
