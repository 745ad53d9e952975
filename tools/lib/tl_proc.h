/*
 * tl_proc.h - running a child program and waiting for it.
 */
#ifndef TL_PROC_H
#define TL_PROC_H

/* Run argv (argv[0] a path, or a name looked up in PATH) with the current environment and
 * wait for it. Returns its exit status, 128 + signal when it was killed, or -1 (with an
 * error printed naming argv[0]) when it could not be started. */
int tl_run(char *const argv[]);

#endif
