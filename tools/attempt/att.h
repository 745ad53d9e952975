/* att.h - helpers of `tandem attempt`: CPU sampling of other processes (the quiet
 * pre-gate and each process's noise status) and running one pinned, supervised child. */
#ifndef TD_ATT_H
#define TD_ATT_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* CPU ticks of every process but ours (and our children) at one moment. */
typedef struct att_cpu_snap {
    size_t n;
    struct att_cpu_proc { int pid; unsigned long long ticks; char comm[32]; } *p;
    uint64_t t_ns;
} att_cpu_snap;

void att_cpu_take(att_cpu_snap *s, pid_t exclude_child);
void att_cpu_free(att_cpu_snap *s);
/* Other processes' CPU between two snapshots, in percent of one CPU. top (optional) gets
 * the busiest ones: up to ntop entries "comm(pid) NN.N%". */
double att_cpu_between(const att_cpu_snap *a, const att_cpu_snap *b, char top[][96], int ntop);

uint64_t att_now_ns(void);

/* Run one child: argv[0] a path; stdout and stderr to files (one file, appended, when
 * both paths are the same); pinned to `cpu` (-1: none)
 * with sched_setaffinity in the child; in its own process group, killed (SIGKILL) when
 * the attempt dies (PR_SET_PDEATHSIG). Killed (SIGKILL to the group) when no output
 * appeared within start_deadline_s, or after timeout_s. When the attempt receives SIGINT
 * or SIGTERM (tl_stop_signal, see tl_safe.h) the group gets SIGTERM, then SIGKILL after
 * a grace of 2 s, and `aborted` says which signal stopped the attempt. However the child
 * ends, its whole group is killed and waited for before this returns (the attempt is the
 * child subreaper: see att_contain()), so nothing the child started outlives it.
 * fault (tests only): 1 the child crashes (SIGSEGV) before exec, 2 it hangs.
 * Returns 0, or -1 when the child could not be started (fork failed, or a stop signal
 * had already arrived: then `aborted` is set). */
typedef struct att_child {
    int pid;
    int exited, code, signaled, sig;
    int killed_start, killed_timeout;
    int aborted;               /* the stop signal that ended it, 0 when none */
    double seconds;
    double other_cpu;          /* other processes' CPU during the run, % of one CPU */
    char top[3][96];
} att_child;

int att_run_child(char *const argv[], const char *out_path, const char *err_path, int cpu, double start_deadline_s,
                  double timeout_s, int fault, att_child *res);

/* Containment of the attempt (issue 18): install the SIGINT/SIGTERM handler that sets
 * tl_stop_signal and make this process the child subreaper (orphaned grandchildren are
 * reparented to it, so att_run_child can wait for them). 0 ok, else errno. */
int att_contain(void);

/* "SIGTERM", "SIGINT", or "signal N". */
const char *att_signal_name(int sig, char *buf, size_t len);

/* Is s an allowed name for a label, suite or subject (it becomes part of file names):
 * 1..max bytes of [A-Za-z0-9._-], not starting with '.'? 1 yes; 0 with *why set. */
int att_name_ok(const char *s, size_t max, const char **why);

/* Check an existing --out: it must be a directory (not a symbolic link to one) with no
 * entry of any kind. 0 ok; else -1 with why (a message naming the first entry found). */
int att_out_empty(const char *dir, char *why, size_t len);

#endif
