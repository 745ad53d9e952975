/*
 * tl_manifest.h - staging.json, binary manifests, verification and the reuse rule.
 * tl_manifest.c: the records and the manifests' JSON (parse, load, save, write);
 * tl_stage_verify.c: a folder re-hashed against records, a staging against its staging.json;
 * tl_player_verify.c: players against their manifests and staging, the shell, the reuse rule.
 *
 * staging.json (at the top of a staging folder; every other file in the folder is a
 * staged source at its path relative to the repository root):
 *   { "schemaVersion": 1, "kind": "tandem-staging", "sourceRoot": "/abs/repo",
 *     "gitHead": "<40 hex>" | null, "dirty": bool, "gitRev": "<rev>" (only --from-git),
 *     "paths": [ "runtime", ... ], "fileCount": N,
 *     "stagingHash": SHA-256 over the lines "<sha256>  <path>\n" of files[] sorted by path,
 *     "files": [ { "path": "runtime/src/x.c", "bytes": 123, "sha256": "<64 hex>" }, ... ] }
 *
 * binary-manifest-<backend>.json (in a player folder; files[] paths are relative to the
 * folder holding the manifest):
 *   { "schemaVersion": 1, "kind": "tandem-binary-manifest", "backend": "aot",
 *     "buildId": SHA-256 of "stagingHash\nbackend\ncompiler\nflags\n",
 *     "stagingHash": "<64 hex>", "stagingDir": "/abs/staging" (where the player was built
 *     from; `verify --staging DIR` overrides it), "compiler": "...", "flags": "...",
 *     "files": [ { "path", "bytes", "sha256" }, ... ] }
 *
 * Every file in a player folder other than binary-manifest-*.json must be listed by one
 * of the manifests in that folder, otherwise verify reports it as "extra".
 */
#ifndef TL_MANIFEST_H
#define TL_MANIFEST_H
#include <stddef.h>
#include <stdint.h>

#include "tl_err.h"

struct cJSON;
#include "tl_hash.h"

#define TL_SCHEMA_VERSION 1
#define TL_STAGING_JSON "staging.json"

typedef struct tl_file_rec {
    char *path; /* relative, '/'-separated */
    uint64_t bytes;
    char sha256[TL_SHA256_HEX];
} tl_file_rec;

typedef struct tl_staging {
    char *source_root;
    char *git_head; /* NULL when not a git checkout */
    int dirty;
    char *git_rev; /* NULL unless staged with --from-git */
    char **paths;
    size_t npaths;
    tl_file_rec *files; /* sorted by path, unique */
    size_t nfiles;
    char staging_hash[TL_SHA256_HEX];
    struct cJSON *mounts; /* a mapped staging's sources (tl_srcmap.h), or NULL; owned */
} tl_staging;

typedef struct tl_bmanifest {
    char *backend;
    char build_id[TL_SHA256_HEX];
    char staging_hash[TL_SHA256_HEX];
    char *staging_dir; /* may be NULL */
    char *compiler;
    char *flags;
    tl_file_rec *files;
    size_t nfiles;
} tl_bmanifest;

/* stagingHash of sorted records. */
void tl_staging_hash(const tl_file_rec *files, size_t n, char hex[TL_SHA256_HEX]);
/* buildId from its inputs. */
void tl_build_id(const char *staging_hash, const char *backend, const char *compiler, const char *flags,
                 char hex[TL_SHA256_HEX]);
int tl_file_rec_cmp(const void *a, const void *b);
/* Free n records (their paths) and the array. */
void tl_file_recs_free(tl_file_rec *v, size_t n);

/* Parsers (strict; errors "name: field: reason"). 0 ok, 1 invalid. */
int tl_staging_parse(const char *name, const char *buf, size_t len, tl_staging *out);
int tl_staging_load(const char *staging_dir, tl_staging *out);
int tl_staging_save(const char *staging_dir, const tl_staging *st);
void tl_staging_free(tl_staging *st);

int tl_bmanifest_parse(const char *name, const char *buf, size_t len, tl_bmanifest *out);
int tl_bmanifest_load(const char *path, tl_bmanifest *out);
void tl_bmanifest_free(tl_bmanifest *m);

/* Re-hash the files of dir against recs: "changed", "missing" and "extra" (files on disk
 * not listed; entries named in skip_top directly in dir, and top-level names accepted by
 * skip_fn, are ignored) go to rep. A rec with bytes == UINT64_MAX is checked by hash only. Returns 0 when it could run, 1 on an I/O error. */
int tl_files_check(const char *dir, const tl_file_rec *recs, size_t n, const char *const *skip_top,
                   int (*skip_fn)(const char *top_name), tl_report *rep);

/* Verify a staging folder against its staging.json. Mismatches go to rep. 0 clean, 1 not. */
int tl_staging_verify(const char *staging_dir, tl_staging *loaded_out, tl_report *rep);

/* Write <player_dir>/binary-manifest-<backend>.json for the given files (paths relative
 * to player_dir, or absolute under it), reading <staging_dir>/staging.json for the
 * stagingHash. build_id_out receives the 64-hex build id. 0 ok, 1 error (reported). */
int tl_manifest_write(const char *player_dir, const char *backend, const char *staging_dir,
                      const char *compiler_identity, const char *flags, const char *const *files, size_t nfiles,
                      char build_id_out[65]);

/* Verify the players in player_dir (manifests in it, or else in its immediate
 * subfolders) and their staging (staging_override, else each manifest's stagingDir).
 * Every mismatch goes to rep. 0 clean, 1 mismatches or invalid. nmanifests_out optional. */
int tl_players_verify(const char *player_dir, const char *staging_override, tl_report *rep, int *nmanifests_out);

/* The player shell (tandem-player) a build copies into its players: `arg` (--shell) when
 * given, else $TANDEM_PLAYER, else the one next to this executable, else the build folder's.
 * 0 when it is executable, else -1 (out names the path tried last). */
int tl_player_shell(const char *arg, char *out, size_t len);

/* The reuse rule: players in players_dir may be reused for the staging in staging_dir
 * only when the staging verifies against its staging.json, its stagingHash equals each
 * manifest's stagingHash (staged sources byte-identical), each manifest is valid, every
 * binary file matches its manifest, and their shell (players_dir/tandem-player) is the one a
 * build would copy now (tl_player_shell: a shell rebuilt since makes them stale). Returns 1
 * reusable, 0 not; why receives the first reason (or a one-line summary when reusable).
 * Prints nothing. */
int tl_players_reusable(const char *players_dir, const char *staging_dir, char *why, size_t whylen);

#endif
