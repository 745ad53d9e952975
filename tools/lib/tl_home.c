/*
 * tl_home.c - Tandem's home and a project's results folder (see tl_home.h for the rules).
 *
 * Looked up at run time, never compiled in: a build that embedded its source path would
 * break as soon as the clone moved, and would point every install at one user's tree.
 */
#include "tl_home.h"

#include "tl_err.h"
#include "tl_fs.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TL_HOME_PROJECT "tandem.json"

const char *tl_home_exe_dir(void)
{
    static char dir[PATH_MAX];
    if (dir[0]) return dir;
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    if (n <= 0) return dir[0] = 0, NULL;
    dir[n] = 0;
    char *slash = strrchr(dir, '/');
    if (!slash) return dir[0] = 0, NULL;
    *slash = 0;
    return dir;
}

/* Does dir hold Tandem's data? On success *out is its real path (malloc'd). */
static int holds_data(const char *dir, char **out)
{
    char *f = tl_join(dir, TL_HOME_PROJECT);
    int ok = f && tl_is_file(f);
    free(f);
    if (ok && !(*out = realpath(dir, NULL))) ok = 0;
    return ok;
}

/* 1 when the tool runs from a build tree (its folder holds the tandem-home link). */
static int from_build_tree(void)
{
    const char *exe = tl_home_exe_dir();
    char *link = exe ? tl_join(exe, "tandem-home") : NULL;
    char *real = NULL;
    int yes = link && holds_data(link, &real);
    free(link);
    free(real);
    return yes;
}

const char *tl_home(void)
{
    static char *home;
    static int looked;   /* the error is said once, however often a verb asks */
    if (home || looked) return home;
    looked = 1;
    const char *env = getenv(TL_HOME_ENV), *exe = tl_home_exe_dir();
    if (env && *env) {
        if (holds_data(env, &home)) return home;
        tl_error(env, TL_HOME_ENV, "not Tandem's home: it holds no " TL_HOME_PROJECT
                 " (expected PREFIX/share/tandem of an install, or a source tree)");
        return NULL;
    }
    char *installed = exe ? tl_join(exe, "../share/tandem") : NULL;
    char *built = exe ? tl_join(exe, "tandem-home") : NULL;
    if (!(installed && holds_data(installed, &home)) && !(built && holds_data(built, &home)))
        tl_error(exe ? exe : "/proc/self/exe", NULL, "cannot find Tandem's data: neither %s nor %s holds "
                 TL_HOME_PROJECT "; set " TL_HOME_ENV " to the folder that does (PREFIX/share/tandem)",
                 installed ? installed : "../share/tandem", built ? built : "tandem-home");
    free(installed);
    free(built);
    return home;
}

/* The root of results for Tandem's own project: the build folder when run from one, else
 * the user's cache (an install's home is shared and usually read-only). */
static char *own_work(void)
{
    if (from_build_tree()) return strdup(tl_home_exe_dir());
    const char *xdg = getenv("XDG_CACHE_HOME"), *user = getenv("HOME");
    char *cache = xdg && xdg[0] == '/' ? strdup(xdg) : tl_join(user && *user ? user : "/tmp", ".cache");
    char *w = cache ? tl_join(cache, "tandem") : NULL;
    free(cache);
    return w;
}

char *tl_home_work(const char *project_root, const char *sub)
{
    const char *home = tl_home();
    char *root = realpath(project_root, NULL);
    int own = home && root && !strcmp(home, root);
    char *base = own ? own_work() : tl_join(root ? root : project_root, TL_HOME_WORK_DIR);
    free(root);
    if (!base || !sub) return base;
    char *w = tl_join(base, sub);
    free(base);
    return w;
}
