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
 * with sched_setaffinity in the child; in its own process group. Killed (SIGKILL to the
 * group) when no output appeared within start_deadline_s, or after timeout_s.
 * fault (tests only): 1 the child crashes (SIGSEGV) before exec, 2 it hangs. */
typedef struct att_child {
    int pid;
    int exited, code, signaled, sig;
    int killed_start, killed_timeout;
    double seconds;
    double other_cpu;          /* other processes' CPU during the run, % of one CPU */
    char top[3][96];
} att_child;

int att_run_child(char *const argv[], const char *out_path, const char *err_path, int cpu, double start_deadline_s,
                  double timeout_s, int fault, att_child *res);

#endif
