/*
 * tl_spawn.h - the child side of every program Tandem's tools start (tl_proc.c, the AOT
 * backend's clang, git, inspect's clang): nothing they start outlives them.
 *
 * PR_SET_PDEATHSIG kills a child when the process that forked it dies, even by SIGKILL, but
 * not the child's own children: a SIGKILLed attempt left clang's children running and
 * writing into its folder. So every child gets its own process group and the death signal,
 * and a program Tandem did not write (clang, git: they start children of their own) runs
 * under a guard: a forked copy of the child that waits for it and, when the tool dies,
 * kills the whole group, program and grandchildren alike.
 *
 * Only async-signal-safe calls after fork; libc only (the backends link it too).
 */
#ifndef TL_SPAWN_H
#define TL_SPAWN_H
#include <sys/types.h>

/* In a child just forked by `parent`: its own process group and SIGKILL when the parent
 * dies. 0 ok; -1 when the parent died already (the child should _exit). */
int tl_spawn_child_init(pid_t parent);

/* In such a child: run argv (execvp, so a name is looked up in PATH) under a guard (above)
 * and _exit with its status (128 + signal when it was killed; 127 when it could not be
 * executed, with a line on stderr). tmpdir, when not NULL, becomes the program's TMPDIR
 * (its temporaries stay in the caller's folder). Never returns. */
void tl_spawn_exec_guarded(char *const argv[], const char *tmpdir) __attribute__((noreturn));

#endif
