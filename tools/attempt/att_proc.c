/* att_proc.c - CPU sampling from /proc/[pid]/stat and the supervised, pinned child. */
#include "att.h"
#include "tl_safe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

uint64_t att_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* utime + stime (fields 14 and 15) and comm of /proc/<pid>/stat. */
static int read_stat(int pid, unsigned long long *ticks, char comm[32], int *ppid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    char *l = strchr(buf, '('), *r = strrchr(buf, ')');
    if (!l || !r) return -1;
    snprintf(comm, 32, "%.*s", (int)(r - l - 1 < 31 ? r - l - 1 : 31), l + 1);
    char st;
    int pp;
    unsigned long long ut, stt;
    /* after ')': state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
    if (sscanf(r + 2, "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &st, &pp, &ut, &stt) != 4) return -1;
    *ticks = ut + stt;
    *ppid = pp;
    return 0;
}

void att_cpu_take(att_cpu_snap *s, pid_t exclude_child)
{
    memset(s, 0, sizeof *s);
    DIR *d = opendir("/proc");
    if (!d) return;
    struct dirent *e;
    size_t cap = 0;
    int self = getpid();
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == self || pid == exclude_child) continue;
        unsigned long long t;
        char comm[32];
        int ppid;
        if (read_stat((int)pid, &t, comm, &ppid)) continue;
        if (ppid == self) continue;
        if (s->n == cap) {
            cap = cap ? cap * 2 : 256;
            s->p = realloc(s->p, cap * sizeof *s->p);
        }
        s->p[s->n].pid = (int)pid;
        s->p[s->n].ticks = t;
        memcpy(s->p[s->n].comm, comm, 32);
        s->n++;
    }
    closedir(d);
    s->t_ns = att_now_ns();
}

void att_cpu_free(att_cpu_snap *s)
{
    free(s->p);
    memset(s, 0, sizeof *s);
}

double att_cpu_between(const att_cpu_snap *a, const att_cpu_snap *b, char top[][96], int ntop)
{
    double secs = (double)(b->t_ns - a->t_ns) / 1e9, hz = (double)sysconf(_SC_CLK_TCK), total = 0;
    if (secs <= 0) return 0;
    double best[8] = { 0 };
    for (int k = 0; k < ntop && k < 8; k++) top[k][0] = 0;
    for (size_t i = 0; i < b->n; i++) {
        unsigned long long before = 0;
        int found = 0;
        for (size_t j = 0; j < a->n; j++)
            if (a->p[j].pid == b->p[i].pid) { before = a->p[j].ticks; found = 1; break; }
        if (!found) continue; /* started in between: its ticks are not all ours to count */
        double pct = (double)(b->p[i].ticks - before) / hz / secs * 100.0;
        total += pct;
        for (int k = 0; k < ntop && k < 8; k++)
            if (pct > best[k] && pct >= 1.0) {
                for (int m = (ntop < 8 ? ntop : 8) - 1; m > k; m--) { best[m] = best[m - 1]; memcpy(top[m], top[m - 1], 96); }
                best[k] = pct;
                snprintf(top[k], 96, "%s(%d) %.1f%%", b->p[i].comm, b->p[i].pid, pct);
                break;
            }
    }
    return total;
}

/* Is the child still running? 1 yes, 0 it exited (left unreaped: its pid, which is also
 * its group's id, stays taken until waitpid, so kill(-pid) can never hit a stranger). */
static int running(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid) return 0;
    return 1;
}

static void nap_ms(long ms)
{
    struct timespec ts = { 0, ms * 1000 * 1000 };
    nanosleep(&ts, NULL);
}

/* End a child's process group: SIGKILL to the group while the leader still holds the
 * group id, reap the leader, then reap the group's orphans (reparented to us, the
 * subreaper) until the group is gone (at most about 5 s: SIGKILL cannot be refused). */
static void end_group(pid_t pid, int *status)
{
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR) {}
    for (int i = 0; i < 500; i++) {
        int st;
        while (waitpid(-1, &st, WNOHANG) > 0) {}
        if (kill(-pid, 0) < 0 && errno == ESRCH) return;
        nap_ms(10);
    }
}

int att_run_child(char *const argv[], const char *out_path, const char *err_path, int cpu, double start_deadline_s,
                  double timeout_s, int fault, att_child *res)
{
    memset(res, 0, sizeof *res);
    if (tl_stop_signal) { res->aborted = (int)tl_stop_signal; return -1; }
    att_cpu_snap s0, s1;
    att_cpu_take(&s0, 0);
    uint64_t t0 = att_now_ns();
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) { att_cpu_free(&s0); return -1; }
    if (pid == 0) {
        setpgid(0, 0);
        /* the attempt's stop handler is not the child's; dying with the attempt is */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        int same = !strcmp(out_path, err_path); /* one log: append, never truncate */
        int o = open(out_path, O_WRONLY | O_CREAT | O_NOFOLLOW | (same ? O_APPEND : O_TRUNC), 0644);
        int e = same ? o : open(err_path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_TRUNC, 0644);
        if (o >= 0) dup2(o, 1);
        if (e >= 0) dup2(e, 2);
        if (cpu >= 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpu, &set);
            sched_setaffinity(0, sizeof set, &set);
        }
        if (fault == 1) { signal(SIGSEGV, SIG_DFL); raise(SIGSEGV); }
        if (fault == 2) { /* started (it wrote), then hangs: killed at the timeout */
            static const char msg[] = "tandem attempt: injected hang (tests)\n";
            ssize_t w = write(2, msg, sizeof msg - 1);
            (void)w;
            for (;;) pause();
        }
        execv(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    res->pid = pid;
    int status = 0, started = 0;
    while (running(pid)) {
        double el = (double)(att_now_ns() - t0) / 1e9;
        if (tl_stop_signal) {
            /* the attempt is stopping: ask the group to end, then make it */
            res->aborted = (int)tl_stop_signal;
            kill(-pid, SIGTERM);
            for (int i = 0; i < 200 && running(pid); i++) nap_ms(10);
            break;
        }
        if (!started) {
            struct stat a, b;
            started = (!stat(out_path, &a) && a.st_size > 0) || (!stat(err_path, &b) && b.st_size > 0);
        }
        if ((!started && el > start_deadline_s) || el > timeout_s) {
            if (!started && el > start_deadline_s) res->killed_start = 1;
            else res->killed_timeout = 1;
            break;
        }
        nap_ms(20);
    }
    end_group(pid, &status);
    res->seconds = (double)(att_now_ns() - t0) / 1e9;
    att_cpu_take(&s1, pid);
    res->other_cpu = att_cpu_between(&s0, &s1, res->top, 3);
    att_cpu_free(&s0);
    att_cpu_free(&s1);
    if (WIFEXITED(status)) { res->exited = 1; res->code = WEXITSTATUS(status); }
    if (WIFSIGNALED(status)) { res->signaled = 1; res->sig = WTERMSIG(status); }
    return 0;
}
