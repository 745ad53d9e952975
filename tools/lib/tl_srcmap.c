/*
 * tl_srcmap.c - staged paths back to the user's files (see tl_srcmap.h).
 */
#include "tl_srcmap.h"

#include "tl_fs.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

cJSON *tl_srcmap_mounts(const char *const *from, const char *const *dest, size_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", dest[i]);
        cJSON_AddStringToObject(o, "from", from[i]);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

char *tl_srcmap_source(const tl_staging *st, const char *rel)
{
    const char *from = NULL, *rest = NULL;
    size_t best = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, st->mounts) {   /* the longest staged path holding rel */
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(m, "path"), *f = cJSON_GetObjectItemCaseSensitive(m, "from");
        if (!cJSON_IsString(p) || !cJSON_IsString(f)) continue;
        size_t l = strlen(p->valuestring);
        if (l > best && !strncmp(rel, p->valuestring, l) && (rel[l] == '/' || !rel[l])) {
            best = l;
            from = f->valuestring;
            rest = rel[l] ? rel + l + 1 : NULL;
        }
    }
    if (from) return rest ? tl_join(from, rest) : strdup(from);
    return tl_join(st->source_root ? st->source_root : ".", rel);
}

/* The staged path at s (after a prefix): up to the first ':' or space, when staging.json
 * lists it. Its length, or 0. */
static size_t staged_at(const tl_staging *st, const char *s, char *rel, size_t cap)
{
    size_t n = strcspn(s, ": \t\n'\"()");
    if (!n || n >= cap) return 0;
    memcpy(rel, s, n);
    rel[n] = 0;
    for (size_t i = 0; i < st->nfiles; i++)
        if (!strcmp(st->files[i].path, rel)) return n;
    return 0;
}

char *tl_srcmap_text(const tl_staging *st, const char *text, const char *const *prefixes, size_t nprefixes)
{
    size_t cap = strlen(text) * 2 + 256, len = 0;
    char *out = malloc(cap), rel[4096];
    if (!out) return NULL;
    for (const char *s = text; *s;) {
        size_t pl = 0, rl = 0;
        for (size_t k = 0; k < nprefixes && !rl; k++) {
            pl = strlen(prefixes[k]);
            if (!strncmp(s, prefixes[k], pl)) rl = staged_at(st, s + pl, rel, sizeof rel);
        }
        char *src = rl ? tl_srcmap_source(st, rel) : NULL;
        const char *piece = src ? src : s;
        size_t n = src ? strlen(src) : 1;
        if (len + n + 1 > cap) {
            char *grown = realloc(out, cap = (len + n + 1) * 2);
            if (!grown) { free(out); free(src); return NULL; }
            out = grown;
        }
        memcpy(out + len, piece, n);
        len += n;
        s += src ? pl + rl : 1;
        free(src);
    }
    out[len] = 0;
    return out;
}
