#include "tl_json.h"

#include "tl_err.h"
#include "tl_fs.h"
#include "tl_hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tl_json_at(char *buf, size_t len, const char *at, const char *key)
{
    if (at && at[0])
        snprintf(buf, len, "%s.%s", at, key);
    else
        snprintf(buf, len, "%s", key);
    return buf;
}

static void line_col(const char *buf, const char *pos, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *p = buf; p < pos; p++) {
        if (*p == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

static int check_dups(const char *name, const cJSON *node, const char *at)
{
    if (cJSON_IsObject(node)) {
        for (const cJSON *a = node->child; a; a = a->next) {
            char f[1024];
            tl_json_at(f, sizeof f, at, a->string ? a->string : "?");
            for (const cJSON *b = a->next; b; b = b->next)
                if (a->string && b->string && !strcmp(a->string, b->string)) {
                    tl_error(name, f, "duplicate key");
                    return 1;
                }
            if (check_dups(name, a, f))
                return 1;
        }
    } else if (cJSON_IsArray(node)) {
        int i = 0;
        for (const cJSON *a = node->child; a; a = a->next, i++) {
            char f[1024];
            snprintf(f, sizeof f, "%s[%d]", at && at[0] ? at : "", i);
            if (check_dups(name, a, f))
                return 1;
        }
    }
    return 0;
}

int tl_json_parse(const char *name, const char *buf, size_t len, cJSON **out)
{
    *out = NULL;
    if (len == 0) {
        tl_error(name, "(document)", "empty file, expected a JSON object");
        return 1;
    }
    const char *nul = memchr(buf, '\0', len);
    if (nul) {
        tl_error(name, "(document)", "NUL byte at offset %zu", (size_t)(nul - buf));
        return 1;
    }
    /* cJSON_ParseWithOpts needs a NUL-terminated string. */
    char *copy = malloc(len + 1);
    if (!copy) {
        tl_error(name, NULL, "out of memory");
        return 1;
    }
    memcpy(copy, buf, len);
    copy[len] = '\0';
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithOpts(copy, &end, 1);
    if (!doc) {
        int line, col;
        cJSON *lax = cJSON_ParseWithOpts(copy, &end, 0);
        if (lax) {
            const char *g = end;
            while (*g == ' ' || *g == '\t' || *g == '\n' || *g == '\r')
                g++;
            line_col(copy, g, &line, &col);
            tl_error(name, "(document)", "trailing garbage after the JSON value at line %d column %d", line, col);
            cJSON_Delete(lax);
        } else {
            const char *ep = cJSON_GetErrorPtr();
            if (!ep || ep < copy || ep > copy + len)
                ep = copy + len;
            /* Truncated when the text ends inside a string or with brackets still open. */
            int depth = 0, in_str = 0, esc = 0;
            for (const char *q = copy; *q; q++) {
                if (in_str) {
                    if (esc)
                        esc = 0;
                    else if (*q == '\\')
                        esc = 1;
                    else if (*q == '"')
                        in_str = 0;
                } else if (*q == '"') {
                    in_str = 1;
                } else if (*q == '{' || *q == '[') {
                    depth++;
                } else if (*q == '}' || *q == ']') {
                    depth--;
                }
            }
            line_col(copy, ep, &line, &col);
            if (in_str || depth > 0) {
                int el, ec;
                line_col(copy, copy + len, &el, &ec);
                tl_error(name, "(document)", "truncated JSON: unexpected end of input at line %d column %d", el, ec);
            } else {
                tl_error(name, "(document)", "malformed JSON at line %d column %d", line, col);
            }
        }
        free(copy);
        return 1;
    }
    free(copy);
    if (check_dups(name, doc, "")) {
        cJSON_Delete(doc);
        return 1;
    }
    *out = doc;
    return 0;
}

int tl_json_load(const char *path, cJSON **out)
{
    char *buf;
    size_t len;
    *out = NULL;
    int e = tl_read_all(path, &buf, &len);
    if (e) {
        tl_error(path, NULL, "cannot read: %s", tl_strerror(e));
        return 1;
    }
    int rc = tl_json_parse(path, buf, len, out);
    free(buf);
    return rc;
}

int tl_json_save(const char *path, const cJSON *doc)
{
    char *s = cJSON_Print(doc);
    if (!s) {
        tl_error(path, NULL, "cannot format JSON (out of memory)");
        return 1;
    }
    size_t n = strlen(s);
    char *t = realloc(s, n + 2);
    if (!t) {
        free(s);
        tl_error(path, NULL, "out of memory");
        return 1;
    }
    t[n] = '\n';
    t[n + 1] = '\0';
    int e = tl_write_atomic(path, t, n + 1, 0644);
    free(t);
    if (e) {
        tl_error(path, NULL, "cannot write: %s", tl_strerror(e));
        return 1;
    }
    return 0;
}

static const char *type_of(const cJSON *v)
{
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsNull(v))
        return "null";
    if (cJSON_IsArray(v))
        return "an array";
    if (cJSON_IsObject(v))
        return "an object";
    return "an invalid value";
}

const cJSON *tl_json_field(const char *file, const cJSON *obj, const char *at, const char *key, int type_mask,
                           const char *type_name)
{
    char f[1024];
    tl_json_at(f, sizeof f, at, key);
    if (!cJSON_IsObject(obj)) {
        tl_error(file, at && at[0] ? at : "(document)", "expected an object, got %s", type_of(obj));
        return NULL;
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) {
        tl_error(file, f, "missing");
        return NULL;
    }
    if (!(v->type & type_mask)) {
        tl_error(file, f, "expected %s, got %s", type_name, type_of(v));
        return NULL;
    }
    return v;
}

const char *tl_json_str(const char *file, const cJSON *obj, const char *at, const char *key)
{
    const cJSON *v = tl_json_field(file, obj, at, key, cJSON_String, "a string");
    return v ? v->valuestring : NULL;
}

int tl_json_u64(const char *file, const cJSON *obj, const char *at, const char *key, uint64_t *out)
{
    const cJSON *v = tl_json_field(file, obj, at, key, cJSON_Number, "a number");
    if (!v)
        return 1;
    double d = v->valuedouble;
    if (!(d >= 0) || d > 9007199254740992.0 || (double)(uint64_t)d != d) {
        char f[1024];
        tl_error(file, tl_json_at(f, sizeof f, at, key), "expected a non-negative integer, got %g", d);
        return 1;
    }
    *out = (uint64_t)d;
    return 0;
}

int tl_json_bool(const char *file, const cJSON *obj, const char *at, const char *key, int *out)
{
    const cJSON *v = tl_json_field(file, obj, at, key, cJSON_True | cJSON_False, "a boolean");
    if (!v)
        return 1;
    *out = cJSON_IsTrue(v);
    return 0;
}

const char *tl_json_sha(const char *file, const cJSON *obj, const char *at, const char *key)
{
    const char *s = tl_json_str(file, obj, at, key);
    if (s && !tl_is_sha256_hex(s)) {
        char f[1024];
        tl_error(file, tl_json_at(f, sizeof f, at, key), "expected 64 lowercase hex digits (SHA-256)");
        return NULL;
    }
    return s;
}
