/*
 * clean.c - `tandem clean`: the project's attempts folder (tl_home.h: <project>/.tandem/
 * attempts, or build/attempts for Tandem's own) kept to the last N finished attempts, and
 * the interrupted ones removed (issue 43, item 2: after four attempts 87 MB, and an
 * interrupted attempt's folder stayed forever).
 *
 * What counts: a real folder right under attempts/ holding an attempt-manifest.json of kind
 * "tandem-attempt" (anything else is left alone and named). Finished: its stage is "done".
 * Interrupted: any other stage, unless the process that wrote it (the manifest's "pid") is
 * still a running `tandem`: an attempt under way is never removed. Newest first by the
 * manifest's modification time. Removal never follows a symbolic link (tl_rm_rf); the
 * `latest` link goes when its attempt does.
 */
#include "tl_err.h"
#include "tl_fs.h"
#include "tl_home.h"
#include "tl_json.h"
#include "tl_opt.h"
#include "tl_project.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CLEAN_MAX 4096

static const tl_opt clean_opts[] = {
    { "project", 0, TL_OPT_PATH, "DIR", 0, 0, "the project whose attempts are cleaned (default: the nearest\n"
      "tandem.json upward, else Tandem's own)" },
    { "keep", 0, TL_OPT_INT, "N", 0, 100000, "finished attempts kept, the newest (default 5)" },
    { "dry-run", 'n', TL_OPT_FLAG, NULL, 0, 0, "say what would be removed; remove nothing" },
    { NULL, 0, 0, NULL, 0, 0, NULL }
};

static const tl_optspec clean_spec = {
    "tandem clean", "[--project DIR] [--keep N] [--dry-run]",
    "Remove the project's old and interrupted attempts from its attempts folder\n"
    "(<project>/.tandem/attempts; Tandem's own in a build tree: build/attempts): keep the\n"
    "newest N finished attempts (stage \"done\" in attempt-manifest.json), remove the older\n"
    "ones and every interrupted one (any other stage) whose process is no longer running.\n"
    "Folders that are not attempts are left alone and named.",
    clean_opts, "exit codes: 0 cleaned (or nothing to clean), 1 a folder could not be removed, 2 usage", 0, 0
};

typedef struct clean_entry {
    char *path;
    double mtime;
    int done, running;
} clean_entry;

/* Is pid a running tandem (the attempt that wrote the manifest)? */
static int tandem_running(int pid)
{
    char p[64], comm[64] = "";
    snprintf(p, sizeof p, "/proc/%d/comm", pid);
    FILE *f = pid > 0 && kill(pid, 0) == 0 ? fopen(p, "r") : NULL;
    if (!f) return 0;
    int yes = fgets(comm, sizeof comm, f) && !strncmp(comm, "tandem", 6);
    fclose(f);
    return yes;
}

/* One entry of attempts/: 1 an attempt (filled in), 0 something else (named). */
static int clean_read(const char *dir, const char *name, clean_entry *e)
{
    struct stat st, ms;
    char *path = tl_join(dir, name), *mp = path ? tl_join(path, "attempt-manifest.json") : NULL;
    cJSON *m = NULL;
    int ok = path && mp && lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && lstat(mp, &ms) == 0 && S_ISREG(ms.st_mode);
    tl_err_capture(NULL, 0, 1);
    ok = ok && !tl_json_load(mp, &m);
    const char *kind = ok ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "kind")) : NULL;
    ok = kind && !strcmp(kind, "tandem-attempt");
    tl_err_capture(NULL, 0, 0);
    if (ok) {
        const char *stage = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "stage"));
        const cJSON *pid = cJSON_GetObjectItemCaseSensitive(m, "pid");
        e->path = path;
        e->mtime = (double)ms.st_mtim.tv_sec + ms.st_mtim.tv_nsec / 1e9;
        e->done = stage && !strcmp(stage, "done");
        e->running = !e->done && cJSON_IsNumber(pid) && tandem_running(pid->valueint);
        path = NULL;
    }
    cJSON_Delete(m);
    free(mp);
    free(path);
    return ok;
}

static int newest_first(const void *a, const void *b)
{
    double x = ((const clean_entry *)a)->mtime, y = ((const clean_entry *)b)->mtime;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Remove (or say it would) one attempt folder, and the latest link when it names it. */
static int clean_remove(const char *dir, const clean_entry *e, const char *why, int dry)
{
    printf("%s %s (%s)\n", dry ? "would remove" : "remove", e->path, why);
    if (dry) return 0;
    char *link = tl_join(dir, "latest"), target[4096];
    ssize_t n = link ? readlink(link, target, sizeof target - 1) : -1;
    if (n > 0) {
        target[n] = 0;
        const char *base = strrchr(e->path, '/');
        if (base && !strcmp(target, base + 1)) unlink(link);
    }
    free(link);
    if (tl_rm_rf(e->path)) { tl_error(e->path, NULL, "cannot remove"); return 1; }
    return 0;
}

int td_verb_clean(int argc, char **argv)
{
    tl_optres o;
    int prc = tl_opt_parse(&clean_spec, argc, argv, &o);
    if (prc) { tl_opt_free(&o); return prc == TL_OPT_HELP ? 0 : 2; }
    long long keep = tl_opt_int(&o, "keep", 5);
    int dry = tl_opt_given(&o, "dry-run") > 0;
    tl_project p;
    int bad = tl_project_open(tl_opt_str(&o, "project", NULL), tl_home(), &p);
    tl_opt_free(&o);
    char *dir = bad ? NULL : tl_home_work(p.root, "attempts");
    tl_project_free(&p);
    if (!dir) return 1;
    DIR *d = opendir(dir);
    if (!d) {
        printf("tandem clean: %s: no attempts folder, nothing to clean\n", dir);
        free(dir);
        return 0;
    }
    static clean_entry v[CLEAN_MAX];
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < CLEAN_MAX) {
        if (de->d_name[0] == '.' || !strcmp(de->d_name, "latest")) continue;
        if (clean_read(dir, de->d_name, &v[n])) n++;
        else printf("tandem clean: %s/%s: not an attempt, left alone\n", dir, de->d_name);
    }
    closedir(d);
    qsort(v, n, sizeof *v, newest_first);
    long long kept = 0;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].running) printf("keep %s (under way)\n", v[i].path);
        else if (!v[i].done) rc |= clean_remove(dir, &v[i], "interrupted", dry);
        else if (kept++ < keep) printf("keep %s\n", v[i].path);
        else rc |= clean_remove(dir, &v[i], "older than the newest kept", dry);
        free(v[i].path);
    }
    free(dir);
    return rc;
}
