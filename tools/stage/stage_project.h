/*
 * stage_project.h - what `tandem stage` copies for a project (tandem.json), and where.
 *
 * The staging folder has one layout whatever the project's own (backends/backend.h's TU
 * generator and both players read it): runtime/src, runtime/include, runtime/port,
 * runtime/contract.json, players/include, players/subjects/<name>, players/suites/<name>.
 * A project names its folders in tandem.json; each becomes a *mount*: a source path
 * (absolute) staged at a fixed place of that layout. A subject's link libraries (tandem.json
 * subjects.NAME.link) are staged as a generated file, players/subjects/NAME/link.libs.
 */
#ifndef STAGE_PROJECT_H
#define STAGE_PROJECT_H
#include <stddef.h>

#include "tl_archive.h"
#include "tl_fs.h"
#include "tl_project.h"

#define STAGE_MAX_MOUNTS (2 * TL_PROJECT_MAX + 8)

typedef struct stage_mount {
    char *from;   /* absolute source folder or file */
    char *dest;   /* staged path, relative to the staging folder */
} stage_mount;

typedef struct stage_mounts {
    stage_mount m[STAGE_MAX_MOUNTS];
    size_t n;
    int identity; /* every mount is root/dest: the staged layout is the project's own */
} stage_mounts;

/* The mounts of a loaded project, sorted by dest. 0 ok, 1 error (reported). */
int stage_mounts_from_project(const tl_project *p, stage_mounts *ms);
void stage_mounts_free(stage_mounts *ms);

/* The source file of staged path `dest` (malloc'd): its mount's source, or root/dest when
 * no mount holds it (ms NULL or empty). */
char *stage_mount_source(const char *root, const stage_mounts *ms, const char *dest);

/* Append the staged path of every regular file of every mount to out (symlinks followed
 * only to files inside their mount). 0 ok, 1 error (reported). */
int stage_mounts_list(const stage_mounts *ms, tl_strlist *out);

/* `tandem stage --out OUT [--project PROJECT]` from another verb (bench, smoke): the
 * project's staging. Returns the verb's exit code. */
int stage_project_run(const char *project, const char *out);

/* The path `rel` (a folder or a file, relative to `root`, inside it) of git revision `rev` of
 * the repository holding root (`git -C root archive rev -- rel`), every file renamed from
 * rel[/rest] to dest[/rest]. An empty list (0, *n == 0) when the revision has no such path.
 * 0 ok, 1 error (reported). */
int stage_git_read_as(const char *root, const char *rev, const char *rel, const char *dest, tl_mem_file **out,
                      size_t *n);

/* The staged files the project file itself generates: players/subjects/NAME/link.libs of
 * every subject whose tandem.json entry names link libraries (subjects.NAME.link), one a
 * line, read by the backends (backends/backend.h td_backend_subject_libs); in the project
 * file's order. 0 ok, 1 error (reported). */
int stage_project_generated(const tl_project *p, tl_mem_file **out, size_t *n);

/* The subject whose generated path `path` is (players/subjects/<subject>/link.libs of one of
 * the project's subjects), else NULL: a file of that path from anywhere else is not staged. */
const char *stage_project_generated_by(const tl_project *p, const char *path);

#endif
