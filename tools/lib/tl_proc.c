/*
 * tl_proc.c - running a child program and waiting for it (see tl_proc.h).
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include "tl_err.h"
#include "tl_proc.h"

extern char **environ;

int tl_run(char *const argv[])
{
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
    if (rc != 0) {
        tl_error(argv[0], NULL, "cannot start: %s", strerror(rc));
        return -1;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            tl_error(argv[0], NULL, "waitpid: %s", strerror(errno));
            return -1;
        }
    }
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return WEXITSTATUS(st);
}

int tl_run_player(const char *dir, const char *backend, const char *suite, const char *report,
                  const char *const *extra)
{
    char player[4200], module[4200];
    int aot = !strcmp(backend, "aot");
    snprintf(player, sizeof player, "%s/tandem-player", dir);
    snprintf(module, sizeof module, aot ? "%s/tandem.so" : "%s/src/tandem-player-tandem.c", dir);
    char *argv[32];
    int n = 0;
    argv[n++] = player;
    argv[n++] = "--backend";
    argv[n++] = (char *)backend;
    argv[n++] = aot ? "--module" : "--tu";
    argv[n++] = module;
    argv[n++] = "--suite";
    argv[n++] = (char *)suite;
    argv[n++] = "--out";
    argv[n++] = (char *)report;
    for (int i = 0; extra && extra[i] && n < 31; i++)
        argv[n++] = (char *)extra[i];
    argv[n] = NULL;
    fflush(stdout);
    return tl_run(argv);
}
