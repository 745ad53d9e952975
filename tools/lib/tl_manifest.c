/* tl_manifest.c - the manifests' data and JSON: file records and their hashes, staging.json
 * (parse, load, save), binary manifests (parse, load, write). Checking files against them:
 * tl_stage_verify.c; players and the reuse rule: tl_player_verify.c. */
#include "tl_manifest.h"

#include "tl_err.h"
#include "tl_fs.h"
#include "tl_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int tl_file_rec_cmp(const void *a, const void *b)
{
    return strcmp(((const tl_file_rec *)a)->path, ((const tl_file_rec *)b)->path);
}

void tl_staging_hash(const tl_file_rec *files, size_t n, char hex[TL_SHA256_HEX])
{
    tl_sha256 h;
    if (tl_sha256_init(&h) != 0) {
        hex[0] = '\0';
        return;
    }
    for (size_t i = 0; i < n; i++) {
        tl_sha256_update(&h, files[i].sha256, 64);
        tl_sha256_update(&h, "  ", 2);
        tl_sha256_update(&h, files[i].path, strlen(files[i].path));
        tl_sha256_update(&h, "\n", 1);
    }
    tl_sha256_final(&h, hex);
}

void tl_build_id(const char *staging_hash, const char *backend, const char *compiler, const char *flags,
                 char hex[TL_SHA256_HEX])
{
    tl_sha256 h;
    if (tl_sha256_init(&h) != 0) {
        hex[0] = '\0';
        return;
    }
    const char *parts[4] = { staging_hash, backend, compiler, flags };
    for (int i = 0; i < 4; i++) {
        tl_sha256_update(&h, parts[i] ? parts[i] : "", parts[i] ? strlen(parts[i]) : 0);
        tl_sha256_update(&h, "\n", 1);
    }
    tl_sha256_final(&h, hex);
}

void tl_file_recs_free(tl_file_rec *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].path);
    free(v);
}

/* files[] of {path, bytes, sha256}, sorted and unique. */
static int parse_files(const char *name, const cJSON *doc, tl_file_rec **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    const cJSON *arr = tl_json_field(name, doc, "", "files", cJSON_Array, "an array");
    if (!arr)
        return 1;
    size_t n = (size_t)cJSON_GetArraySize(arr), i = 0;
    tl_file_rec *v = calloc(n ? n : 1, sizeof *v);
    if (!v) {
        tl_error(name, "files", "out of memory");
        return 1;
    }
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        char at[64];
        snprintf(at, sizeof at, "files[%zu]", i);
        if (!cJSON_IsObject(e)) {
            tl_error(name, at, "expected an object");
            goto fail;
        }
        const char *path = tl_json_str(name, e, at, "path");
        if (!path)
            goto fail;
        const char *why;
        if (!tl_rel_path_ok(path, &why)) {
            char f[96];
            tl_error(name, tl_json_at(f, sizeof f, at, "path"), "unsafe path '%s': %s", path, why);
            goto fail;
        }
        if (tl_json_u64(name, e, at, "bytes", &v[i].bytes))
            goto fail;
        const char *sha = tl_json_sha(name, e, at, "sha256");
        if (!sha)
            goto fail;
        memcpy(v[i].sha256, sha, TL_SHA256_HEX);
        v[i].path = strdup(path);
        if (!v[i].path)
            goto fail;
        if (i > 0) {
            int c = strcmp(v[i - 1].path, v[i].path);
            if (c >= 0) {
                char f[96];
                tl_error(name, tl_json_at(f, sizeof f, at, "path"), c == 0 ? "duplicate path '%s'"
                                                                           : "'%s' out of order (files[] must be sorted by path)",
                         path);
                i++;
                goto fail;
            }
        }
    }
    *out = v;
    *nout = n;
    return 0;
fail:
    tl_file_recs_free(v, i);
    return 1;
}

static int check_schema(const char *name, const cJSON *doc, const char *kind)
{
    uint64_t sv;
    if (!cJSON_IsObject(doc)) {
        tl_error(name, "(document)", "expected a JSON object");
        return 1;
    }
    if (tl_json_u64(name, doc, "", "schemaVersion", &sv))
        return 1;
    if (sv != TL_SCHEMA_VERSION) {
        tl_error(name, "schemaVersion", "unsupported version %llu (this tandem reads %d)", (unsigned long long)sv,
                 TL_SCHEMA_VERSION);
        return 1;
    }
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(doc, "kind");
    if (k) {
        if (!cJSON_IsString(k)) {
            tl_error(name, "kind", "expected a string");
            return 1;
        }
        if (strcmp(k->valuestring, kind)) {
            tl_error(name, "kind", "expected \"%s\", got \"%s\"", kind, k->valuestring);
            return 1;
        }
    }
    return 0;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

void tl_staging_free(tl_staging *st)
{
    free(st->source_root);
    free(st->git_head);
    free(st->git_rev);
    for (size_t i = 0; i < st->npaths; i++)
        free(st->paths[i]);
    free(st->paths);
    tl_file_recs_free(st->files, st->nfiles);
    cJSON_Delete(st->mounts);
    memset(st, 0, sizeof *st);
}

static int staging_from_json(const char *name, const cJSON *doc, tl_staging *st)
{
    memset(st, 0, sizeof *st);
    if (check_schema(name, doc, "tandem-staging"))
        return 1;
    const char *root = tl_json_str(name, doc, "", "sourceRoot");
    if (!root)
        return 1;
    const cJSON *gh = tl_json_field(name, doc, "", "gitHead", cJSON_String | cJSON_NULL, "a string or null");
    if (!gh)
        return 1;
    if (tl_json_bool(name, doc, "", "dirty", &st->dirty))
        return 1;
    const cJSON *gr = cJSON_GetObjectItemCaseSensitive(doc, "gitRev");
    if (gr && !cJSON_IsString(gr)) {
        tl_error(name, "gitRev", "expected a string");
        return 1;
    }
    const cJSON *paths = cJSON_GetObjectItemCaseSensitive(doc, "paths");
    if (paths) {
        if (!cJSON_IsArray(paths)) {
            tl_error(name, "paths", "expected an array");
            return 1;
        }
        size_t i = 0;
        for (const cJSON *p = paths->child; p; p = p->next, i++)
            if (!cJSON_IsString(p)) {
                char f[64];
                snprintf(f, sizeof f, "paths[%zu]", i);
                tl_error(name, f, "expected a string");
                return 1;
            }
    }
    uint64_t count;
    if (tl_json_u64(name, doc, "", "fileCount", &count))
        return 1;
    const char *sh = tl_json_sha(name, doc, "", "stagingHash");
    if (!sh)
        return 1;
    if (parse_files(name, doc, &st->files, &st->nfiles))
        return 1;
    if (count != st->nfiles) {
        tl_error(name, "fileCount", "says %llu but files[] has %zu entries", (unsigned long long)count, st->nfiles);
        goto fail;
    }
    char hex[TL_SHA256_HEX];
    tl_staging_hash(st->files, st->nfiles, hex);
    if (strcmp(hex, sh)) {
        tl_error(name, "stagingHash", "does not match files[] (recorded %s, computed %s)", sh, hex);
        goto fail;
    }
    memcpy(st->staging_hash, sh, TL_SHA256_HEX);
    st->source_root = strdup(root);
    st->git_head = cJSON_IsString(gh) ? dup_or_null(gh->valuestring) : NULL;
    st->git_rev = gr ? dup_or_null(gr->valuestring) : NULL;
    const cJSON *mounts = cJSON_GetObjectItemCaseSensitive(doc, "mounts");   /* optional: tl_srcmap.h */
    st->mounts = cJSON_IsArray(mounts) ? cJSON_Duplicate(mounts, 1) : NULL;
    if (paths) {
        st->npaths = (size_t)cJSON_GetArraySize(paths);
        st->paths = calloc(st->npaths ? st->npaths : 1, sizeof *st->paths);
        size_t i = 0;
        for (const cJSON *p = paths->child; p && st->paths; p = p->next)
            st->paths[i++] = strdup(p->valuestring);
    }
    return 0;
fail:
    tl_staging_free(st);
    return 1;
}

int tl_staging_parse(const char *name, const char *buf, size_t len, tl_staging *out)
{
    cJSON *doc;
    memset(out, 0, sizeof *out);
    if (tl_json_parse(name, buf, len, &doc))
        return 1;
    int rc = staging_from_json(name, doc, out);
    cJSON_Delete(doc);
    return rc;
}

int tl_staging_load(const char *staging_dir, tl_staging *out)
{
    char *path = tl_join(staging_dir, TL_STAGING_JSON);
    char *buf;
    size_t len;
    memset(out, 0, sizeof *out);
    int e = tl_read_file(path, TL_OPEN_NOFOLLOW, 0, &buf, &len);
    if (e) {
        tl_error(path, NULL, "cannot read: %s", tl_strerror(e));
        free(path);
        return 1;
    }
    int rc = tl_staging_parse(path, buf, len, out);
    free(buf);
    free(path);
    return rc;
}

static cJSON *files_to_json(const tl_file_rec *v, size_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", v[i].path);
        cJSON_AddNumberToObject(o, "bytes", (double)v[i].bytes);
        cJSON_AddStringToObject(o, "sha256", v[i].sha256);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

int tl_staging_save(const char *staging_dir, const tl_staging *st)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "schemaVersion", TL_SCHEMA_VERSION);
    cJSON_AddStringToObject(doc, "kind", "tandem-staging");
    cJSON_AddStringToObject(doc, "sourceRoot", st->source_root ? st->source_root : "");
    if (st->git_head)
        cJSON_AddStringToObject(doc, "gitHead", st->git_head);
    else
        cJSON_AddNullToObject(doc, "gitHead");
    cJSON_AddBoolToObject(doc, "dirty", st->dirty);
    if (st->git_rev)
        cJSON_AddStringToObject(doc, "gitRev", st->git_rev);
    cJSON *paths = cJSON_AddArrayToObject(doc, "paths");
    for (size_t i = 0; i < st->npaths; i++)
        cJSON_AddItemToArray(paths, cJSON_CreateString(st->paths[i]));
    cJSON_AddNumberToObject(doc, "fileCount", (double)st->nfiles);
    cJSON_AddStringToObject(doc, "stagingHash", st->staging_hash);
    cJSON_AddItemToObject(doc, "files", files_to_json(st->files, st->nfiles));
    if (st->mounts) cJSON_AddItemToObject(doc, "mounts", cJSON_Duplicate(st->mounts, 1));
    char *path = tl_join(staging_dir, TL_STAGING_JSON);
    int rc = tl_json_save(path, doc);
    free(path);
    cJSON_Delete(doc);
    return rc;
}

void tl_bmanifest_free(tl_bmanifest *m)
{
    free(m->backend);
    free(m->staging_dir);
    free(m->compiler);
    free(m->flags);
    tl_file_recs_free(m->files, m->nfiles);
    memset(m, 0, sizeof *m);
}

static int backend_name_ok(const char *b)
{
    if (!b || !b[0] || strlen(b) > 32)
        return 0;
    for (const char *p = b; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
            return 0;
    return 1;
}

static int bmanifest_from_json(const char *name, const cJSON *doc, tl_bmanifest *m)
{
    memset(m, 0, sizeof *m);
    if (check_schema(name, doc, "tandem-binary-manifest"))
        return 1;
    const char *backend = tl_json_str(name, doc, "", "backend");
    if (!backend)
        return 1;
    if (!backend_name_ok(backend)) {
        tl_error(name, "backend", "invalid backend name '%s' (expected [a-z0-9_-]{1,32})", backend);
        return 1;
    }
    const char *bid = tl_json_sha(name, doc, "", "buildId");
    const char *sh = bid ? tl_json_sha(name, doc, "", "stagingHash") : NULL;
    const char *comp = sh ? tl_json_str(name, doc, "", "compiler") : NULL;
    const char *flags = comp ? tl_json_str(name, doc, "", "flags") : NULL;
    if (!flags)
        return 1;
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(doc, "stagingDir");
    if (sd && !cJSON_IsString(sd) && !cJSON_IsNull(sd)) {
        tl_error(name, "stagingDir", "expected a string or null");
        return 1;
    }
    if (parse_files(name, doc, &m->files, &m->nfiles))
        return 1;
    char hex[TL_SHA256_HEX];
    tl_build_id(sh, backend, comp, flags, hex);
    if (strcmp(hex, bid)) {
        tl_error(name, "buildId", "does not match stagingHash, backend, compiler and flags (recorded %s, computed %s)",
                 bid, hex);
        tl_file_recs_free(m->files, m->nfiles);
        m->files = NULL;
        m->nfiles = 0;
        return 1;
    }
    memcpy(m->build_id, bid, TL_SHA256_HEX);
    memcpy(m->staging_hash, sh, TL_SHA256_HEX);
    m->backend = strdup(backend);
    m->compiler = strdup(comp);
    m->flags = strdup(flags);
    m->staging_dir = cJSON_IsString(sd) ? strdup(sd->valuestring) : NULL;
    return 0;
}

int tl_bmanifest_parse(const char *name, const char *buf, size_t len, tl_bmanifest *out)
{
    cJSON *doc;
    memset(out, 0, sizeof *out);
    if (tl_json_parse(name, buf, len, &doc))
        return 1;
    int rc = bmanifest_from_json(name, doc, out);
    cJSON_Delete(doc);
    return rc;
}

int tl_bmanifest_load(const char *path, tl_bmanifest *out)
{
    char *buf;
    size_t len;
    memset(out, 0, sizeof *out);
    int e = tl_read_file(path, TL_OPEN_NOFOLLOW, 0, &buf, &len);
    if (e) {
        tl_error(path, NULL, "cannot read: %s", tl_strerror(e));
        return 1;
    }
    int rc = tl_bmanifest_parse(path, buf, len, out);
    free(buf);
    return rc;
}

int tl_manifest_write(const char *player_dir, const char *backend, const char *staging_dir,
                      const char *compiler_identity, const char *flags, const char *const *files, size_t nfiles,
                      char build_id_out[65])
{
    if (!backend_name_ok(backend)) {
        tl_error(player_dir, "backend", "invalid backend name '%s' (expected [a-z0-9_-]{1,32})",
                 backend ? backend : "(null)");
        return 1;
    }
    tl_staging st;
    if (tl_staging_load(staging_dir, &st))
        return 1;
    char *pdir = tl_abspath(player_dir);
    char *sdir = tl_abspath(staging_dir);
    size_t plen = strlen(pdir);
    tl_file_rec *recs = calloc(nfiles ? nfiles : 1, sizeof *recs);
    char **full = calloc(nfiles ? nfiles : 1, sizeof *full);
    tl_hash_result *res = calloc(nfiles ? nfiles : 1, sizeof *res);
    int rc = 1;
    char mpath_name[64];
    snprintf(mpath_name, sizeof mpath_name, "binary-manifest-%s.json", backend);
    char *mpath = tl_join(pdir, mpath_name);
    if (!recs || !full || !res || !mpath)
        goto out;
    for (size_t i = 0; i < nfiles; i++) {
        const char *f = files[i];
        char *abs = f[0] == '/' ? tl_abspath(f) : NULL;
        const char *rel = f;
        if (abs) {
            if (strncmp(abs, pdir, plen) || abs[plen] != '/') {
                tl_error(f, NULL, "refused: not inside the player folder %s", pdir);
                free(abs);
                goto out;
            }
            rel = abs + plen + 1;
        }
        const char *why;
        if (!tl_rel_path_ok(rel, &why)) {
            tl_error(f, NULL, "refused: %s", why);
            free(abs);
            goto out;
        }
        recs[i].path = strdup(rel);
        free(abs);
        struct stat ls;
        full[i] = tl_join(pdir, recs[i].path);
        if (lstat(full[i], &ls) != 0 || !S_ISREG(ls.st_mode)) {
            tl_error(full[i], NULL, "refused: not a regular file");
            goto out;
        }
    }
    tl_hash_files((const char *const *)full, nfiles, res, 0);
    for (size_t i = 0; i < nfiles; i++) {
        if (res[i].err) {
            tl_error(full[i], NULL, "cannot read: %s", tl_strerror(res[i].err));
            goto out;
        }
        memcpy(recs[i].sha256, res[i].hex, TL_SHA256_HEX);
        recs[i].bytes = res[i].bytes;
    }
    if (nfiles > 1)
        qsort(recs, nfiles, sizeof *recs, tl_file_rec_cmp);
    for (size_t i = 1; i < nfiles; i++)
        if (!strcmp(recs[i - 1].path, recs[i].path)) {
            tl_error(player_dir, recs[i].path, "listed twice");
            goto out;
        }
    char bid[TL_SHA256_HEX];
    tl_build_id(st.staging_hash, backend, compiler_identity ? compiler_identity : "", flags ? flags : "", bid);
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "schemaVersion", TL_SCHEMA_VERSION);
    cJSON_AddStringToObject(doc, "kind", "tandem-binary-manifest");
    cJSON_AddStringToObject(doc, "backend", backend);
    cJSON_AddStringToObject(doc, "buildId", bid);
    cJSON_AddStringToObject(doc, "stagingHash", st.staging_hash);
    cJSON_AddStringToObject(doc, "stagingDir", sdir);
    cJSON_AddStringToObject(doc, "compiler", compiler_identity ? compiler_identity : "");
    cJSON_AddStringToObject(doc, "flags", flags ? flags : "");
    cJSON_AddItemToObject(doc, "files", files_to_json(recs, nfiles));
    rc = tl_json_save(mpath, doc);
    cJSON_Delete(doc);
    if (rc == 0 && build_id_out)
        memcpy(build_id_out, bid, TL_SHA256_HEX);
out:
    if (recs)
        for (size_t i = 0; i < nfiles; i++)
            free(recs[i].path);
    if (full)
        for (size_t i = 0; i < nfiles; i++)
            free(full[i]);
    free(recs);
    free(full);
    free(res);
    free(mpath);
    free(pdir);
    free(sdir);
    tl_staging_free(&st);
    return rc;
}
