/*
 * tl_proc.h - running a child program and waiting for it.
 */
#ifndef TL_PROC_H
#define TL_PROC_H
#include <stddef.h>

/* Run argv (argv[0] a path, or a name looked up in PATH) with the current environment and
 * wait for it. The child is killed if this process dies (PR_SET_PDEATHSIG), so nothing it
 * started outlives it. Returns its exit status (127 when it could not be executed, with an
 * error naming argv[0]), 128 + signal when it was killed, or -1 (with an error printed
 * naming argv[0]) when it could not be forked. */
int tl_run(char *const argv[]);

/* tl_run for a player: its stdout passes through line by line except the protocol lines
 * (TL_PROC_PROTOCOL: TANDEM-CASE-*, TANDEM-PLAYER-RESULT, which the player's reports and
 * logs keep), so a verb's terminal shows what a person reads. Same return as tl_run. */
#define TL_PROC_PROTOCOL "TANDEM-"
int tl_run_player_argv(char *const argv[]);

/* Run argv (looked up in PATH) with stderr to /dev/null and capture the first line of its
 * stdout into out (NUL-terminated, newline removed; out may be NULL). *nonempty (optional)
 * tells whether it wrote anything at all. Returns its exit status, or -1. */
int tl_run_capture(const char *const *argv, char *out, size_t outlen, int *nonempty);

/* Run one subject of a player folder built by `tandem build` (DIR/tandem-player with
 * DIR/<subject>.so for aot, DIR/src/tandem-player-<subject>.c for jit) on one suite, writing
 * its report to `report`; `extra` (NULL-terminated, may be NULL) is appended to the player's
 * arguments. Returns the player's exit status as tl_run does. */
int tl_run_player(const char *dir, const char *backend, const char *subject, const char *suite, const char *report,
                  const char *const *extra);

#endif
