/*
 * tl_proc.c - running a child program and waiting for it (see tl_proc.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tl_err.h"
#include "tl_proc.h"
#include "tl_spawn.h"


/* The child dies with us, and so does everything it starts (tl_spawn.h: its own process
 * group, PR_SET_PDEATHSIG, a guard): a tool that is killed, even with SIGKILL, leaves no
 * player, valgrind or compiler running behind it. exec failure: exit 127. */
int tl_run(char *const argv[])
{
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        tl_error(argv[0], NULL, "cannot start: fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        if (tl_spawn_child_init(parent)) _exit(127);
        tl_spawn_exec_guarded(argv, NULL);
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

/* Copy the lines of fd to stdout but those starting with the protocol prefix. */
static void pass_lines(int fd)
{
    char buf[8192], line[8192];
    size_t n = 0;
    ssize_t r;
    size_t pl = strlen(TL_PROC_PROTOCOL);
    while ((r = read(fd, buf, sizeof buf)) > 0 || (r < 0 && errno == EINTR)) {
        for (ssize_t i = 0; i < r; i++) {
            if (n < sizeof line) line[n++] = buf[i];
            if (buf[i] != '\n' && n < sizeof line) continue;
            if (n < pl || strncmp(line, TL_PROC_PROTOCOL, pl)) fwrite(line, 1, n, stdout);
            n = 0;
        }
    }
    if (n && (n < pl || strncmp(line, TL_PROC_PROTOCOL, pl))) fwrite(line, 1, n, stdout);
    fflush(stdout);
}

/* Start argv (tl_spawn.h: its own group, dying with us) with its stdout into a pipe whose
 * read end is *rfd; stderr to /dev/null when quiet_stderr. Its pid, or -1 (nothing left
 * open). */
static pid_t spawn_piped(char *const argv[], int *rfd, int quiet_stderr)
{
    int pfd[2];
    if (pipe(pfd) != 0) return -1;
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return -1;
    }
    if (pid == 0) {
        if (tl_spawn_child_init(parent)) _exit(127);
        dup2(pfd[1], 1);
        int dn = quiet_stderr ? open("/dev/null", O_WRONLY) : -1;
        if (dn >= 0) dup2(dn, 2);
        close(pfd[0]);
        close(pfd[1]);
        tl_spawn_exec_guarded(argv, NULL);
    }
    close(pfd[1]);
    *rfd = pfd[0];
    return pid;
}

int tl_run_player_argv(char *const argv[])
{
    int rfd;
    pid_t pid = spawn_piped(argv, &rfd, 0);
    if (pid < 0) return tl_run(argv);   /* no pipe: unfiltered rather than not at all */
    pass_lines(rfd);
    close(rfd);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) { tl_error(argv[0], NULL, "waitpid: %s", strerror(errno)); return -1; }
    return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

int tl_run_player(const char *dir, const char *backend, const char *subject, const char *suite, const char *report,
                  const char *const *extra)
{
    char player[4200], module[4200];
    int aot = !strcmp(backend, "aot");
    snprintf(player, sizeof player, "%s/tandem-player", dir);
    if (aot) snprintf(module, sizeof module, "%s/%s.so", dir, subject);
    else snprintf(module, sizeof module, "%s/src/tandem-player-%s.c", dir, subject);
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
    return tl_run_player_argv(argv);
}

/* git rev-parse and friends (stage.c, baseline.c). */
int tl_run_capture(const char *const *argv, char *out, size_t outlen, int *nonempty)
{
    int rfd;
    pid_t pid = spawn_piped((char *const *)argv, &rfd, 1);
    if (pid < 0)
        return -1;
    char buf[4096];
    size_t got = 0;
    ssize_t r;
    int any = 0;
    while ((r = read(rfd, buf, sizeof buf)) > 0 || (r < 0 && errno == EINTR)) {
        if (r <= 0)
            continue;
        any = 1;
        if (out && got + 1 < outlen) {
            size_t c = (size_t)r < outlen - 1 - got ? (size_t)r : outlen - 1 - got;
            memcpy(out + got, buf, c);
            got += c;
        }
    }
    close(rfd);
    if (out && outlen) {
        out[got] = '\0';
        char *nl = strchr(out, '\n');
        if (nl)
            *nl = '\0';
    }
    if (nonempty)
        *nonempty = any;
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
