/*
 * tl_redact.c - machine paths replaced by placeholders in published evidence (tl_redact.h).
 */
#include "tl_redact.h"

#include "tl_err.h"
#include "tl_fs.h"
#include "tl_json.h"
#include "tl_safe.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILE ((size_t)256 << 20)

int tl_redaction_parse(char *arg, tl_redaction *r, const char **why)
{
    char *eq = strrchr(arg, '=');
    if (!eq) { *why = "expected PATH=<placeholder>"; return 0; }
    *eq = '\0';
    const char *p = arg, *ph = eq + 1;
    size_t lp = strlen(p), lh = strlen(ph);
    if (p[0] != '/' || lp < 2) { *why = "the path must be absolute and not '/'"; return 0; }
    if (p[lp - 1] == '/') { *why = "the path must not end with '/'"; return 0; }
    for (size_t i = 0; i < lp; i++)
        if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f) { *why = "the path holds a control character"; return 0; }
    if (lh < 3 || lh > 34 || ph[0] != '<' || ph[lh - 1] != '>') { *why = "the placeholder must be <name>"; return 0; }
    for (size_t i = 1; i + 1 < lh; i++)
        if (!((ph[i] >= 'a' && ph[i] <= 'z') || ph[i] == '-')) {
            *why = "the placeholder's name is lowercase letters and '-'";
            return 0;
        }
    r->path = p;
    r->placeholder = ph;
    return 1;
}

static int name_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-' || c >= 0x80;
}

/* s[0..len) with every path (r sorted longest first) that starts an absolute path (the
 * byte before is not a name character nor '/') replaced by its placeholder. Returns a
 * malloc'd copy (NUL-terminated) and its length, or NULL when nothing was replaced. */
static char *replace(const char *s, size_t len, const tl_redaction *r, size_t n, size_t *outlen)
{
    size_t cap = len + 64, o = 0;
    char *out = NULL;
    int changed = 0;
    for (size_t i = 0; i < len;) {
        size_t hit = n;
        if (s[i] == '/' && (i == 0 || (!name_char((unsigned char)s[i - 1]) && s[i - 1] != '/')))
            for (size_t k = 0; k < n; k++) {
                size_t lp = strlen(r[k].path);
                if (lp <= len - i && !memcmp(s + i, r[k].path, lp)) { hit = k; break; }
            }
        if (!out) out = malloc(cap);
        const char *src = hit < n ? r[hit].placeholder : s + i;
        size_t add = hit < n ? strlen(r[hit].placeholder) : 1;
        if (o + add + 1 > cap) {
            cap = (o + add + 1) * 2;
            out = realloc(out, cap);
        }
        memcpy(out + o, src, add);
        o += add;
        if (hit < n) { i += strlen(r[hit].path); changed = 1; }
        else i++;
    }
    if (!changed) { free(out); return NULL; }
    out[o] = '\0';
    *outlen = o;
    return out;
}

/* Every string value and key of a JSON tree. Returns how many were changed. */
static size_t redact_json(cJSON *item, const tl_redaction *r, size_t n)
{
    size_t changed = 0, l;
    for (cJSON *c = item; c; c = c->next) {
        if (c->string && !(c->type & cJSON_StringIsConst)) {
            char *k = replace(c->string, strlen(c->string), r, n, &l);
            if (k) { free(c->string); c->string = k; changed++; }
        }
        if (cJSON_IsString(c) && c->valuestring) {
            char *v = replace(c->valuestring, strlen(c->valuestring), r, n, &l);
            if (v) { cJSON_SetValuestring(c, v); free(v); changed++; }
        }
        if (c->child) changed += redact_json(c->child, r, n);
    }
    return changed;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static int is_archive(const char *f)
{
    return ends_with(f, ".zip") || ends_with(f, ".tar.zst") || ends_with(f, ".tar.gz") || ends_with(f, ".tar");
}

static int is_text(const char *f)
{
    return ends_with(f, ".md") || ends_with(f, ".txt") || ends_with(f, ".svg") || ends_with(f, ".log") ||
           ends_with(f, ".csv");
}

static int cmp_len_desc(const void *a, const void *b)
{
    size_t la = strlen(((const tl_redaction *)a)->path), lb = strlen(((const tl_redaction *)b)->path);
    return la < lb ? 1 : la > lb ? -1 : strcmp(((const tl_redaction *)a)->path, ((const tl_redaction *)b)->path);
}

/* Redact one file. 0 ok (*changed set), 1 refused (reported). */
static int redact_file(const char *full, const char *rel, const tl_redaction *r, size_t n, int *changed)
{
    char *buf;
    size_t len, ol;
    *changed = 0;
    int e = tl_read_file(full, TL_OPEN_NOFOLLOW, MAX_FILE, &buf, &len);
    if (e) {
        tl_error(full, NULL, "cannot read: %s", tl_strerror(e));
        return 1;
    }
    int rc = 0;
    if (ends_with(rel, ".json")) {
        cJSON *doc = NULL;
        if (tl_json_parse(full, buf, len, &doc)) {
            tl_error(full, NULL, "refused: not valid JSON, so it cannot be redacted safely");
            rc = 1;
        } else if (redact_json(doc, r, n)) {
            rc = tl_json_save(full, doc);
            *changed = !rc;
        }
        cJSON_Delete(doc);
    } else if (is_text(rel)) {
        char *o = replace(buf, len, r, n, &ol);
        if (o) {
            int we = tl_write_atomic(full, o, ol, 0644);
            if (we) tl_error(full, NULL, "cannot write: %s", tl_strerror(we));
            rc = we != 0;
            *changed = !rc;
            free(o);
        }
    }
    free(buf);
    return rc;
}

/* Does the file still hold a path (raw, or as cJSON escapes it)? 0 no, 1 yes or unreadable (reported). */
static int residue(const char *full, const tl_redaction *r, size_t n)
{
    char *buf;
    size_t len;
    int e = tl_read_file(full, TL_OPEN_NOFOLLOW, MAX_FILE, &buf, &len);
    if (e) {
        tl_error(full, NULL, "cannot read: %s", tl_strerror(e));
        return 1;
    }
    int found = 0;
    for (size_t k = 0; k < n && !found; k++) {
        cJSON *js = cJSON_CreateString(r[k].path);
        char *esc = js ? cJSON_PrintUnformatted(js) : NULL;
        cJSON_Delete(js);
        const char *forms[2] = { r[k].path, NULL };
        if (esc) {
            esc[strlen(esc) - 1] = '\0'; /* drop the quotes */
            forms[1] = esc + 1;
        }
        for (int f = 0; f < 2 && !found; f++) {
            size_t lf = forms[f] ? strlen(forms[f]) : 0;
            if (!lf) continue;
            for (size_t i = 0; i + lf <= len; i++)
                if (buf[i] == forms[f][0] && !memcmp(buf + i, forms[f], lf)) {
                    tl_error(full, NULL, "refused: still holds the path %s %s (a file of a kind that is not redacted, "
                             "or a path inside a longer one)", r[k].path, r[k].placeholder);
                    found = 1;
                    break;
                }
        }
        free(esc);
    }
    free(buf);
    return found;
}

int tl_redact_dir(const char *dir, const tl_redaction *r_in, size_t n, const char *const *skip_top, size_t *nchanged)
{
    *nchanged = 0;
    tl_redaction *r = calloc(n ? n : 1, sizeof *r);
    memcpy(r, r_in, n * sizeof *r);
    qsort(r, n, sizeof *r, cmp_len_desc);
    tl_strlist files = { 0 };
    int bad = tl_walk(dir, NULL, TL_WALK_REFUSE_SYMLINKS, NULL, skip_top, &files);
    if (!bad) {
        tl_strlist_sort(&files);
        for (size_t i = 0; i < files.n; i++) { /* every file: each one refused is named */
            char *full = tl_join(dir, files.v[i]);
            int ch = 0;
            if (!is_archive(files.v[i]) && (redact_file(full, files.v[i], r, n, &ch) || residue(full, r, n))) bad = 1;
            *nchanged += (size_t)ch;
            free(full);
        }
    }
    tl_strlist_free(&files);
    free(r);
    return bad;
}
