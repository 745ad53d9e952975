/*
 * tl_spawn.c - process groups, death signals and the guard (see tl_spawn.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tl_spawn.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int tl_spawn_child_init(pid_t parent)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    return getppid() == parent ? 0 : -1;   /* the parent died before the prctl */
}

/* The guard's death signal: the tool is gone, so is everything in the group. */
static void guard_orphaned(int sig)
{
    (void)sig;
    kill(0, SIGKILL);
    _exit(128 + SIGKILL);
}

void tl_spawn_exec_guarded(char *const argv[], const char *tmpdir)
{
    pid_t guard = getpid(), tool = getppid();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = guard_orphaned;
    sigaction(SIGUSR1, &sa, NULL);
    /* a catchable death signal, so the guard can take the group with it; a SIGTERM or
     * SIGINT meant for the group (an attempt stopping) reaches every member as before */
    prctl(PR_SET_PDEATHSIG, SIGUSR1);
    if (getppid() != tool) kill(0, SIGKILL);
    pid_t pid = fork();
    if (pid < 0) {
        dprintf(2, "%s: cannot start: fork: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    if (pid == 0) {
        sa.sa_handler = SIG_DFL;
        sigaction(SIGUSR1, &sa, NULL);
        prctl(PR_SET_PDEATHSIG, SIGKILL);   /* dies with the guard too */
        if (getppid() != guard) _exit(127);
        if (tmpdir) setenv("TMPDIR", tmpdir, 1);
        execvp(argv[0], argv);
        dprintf(2, "%s: cannot start: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) _exit(127);
    _exit(WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st));
}
