/*
 * tl_proc.c - running a child program and waiting for it (see tl_proc.h).
 */
#include <errno.h>
#include <spawn.h>
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
