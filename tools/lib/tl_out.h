/*
 * tl_out.h - --quiet and --json, one behaviour on every verb that has them (attempt, bench,
 * gate, smoke; inspect's --quiet is its own: the summary without the per-rule table).
 *
 * --quiet: what the verb prints for a person (stdout) goes nowhere; errors stay on stderr,
 * the exit code says the rest. --json: that same output goes to stderr, and stdout holds
 * one line, the verb's summary object (its exit code, its verdict and counts, where its
 * reports are), for a script to read with a JSON parser rather than by scraping the last
 * line. Children inherit the redirection, so their lines follow the same rule.
 */
#ifndef TL_OUT_H
#define TL_OUT_H

struct cJSON;

/* After parsing (nothing printed yet): set the mode up. 0 ok, 1 refused (printed). */
int tl_out_begin(const char *prog, int quiet, int json);

/* The summary under way ({"verb": VERB}), or NULL unless --json (callers skip building). */
struct cJSON *tl_out_summary(void);

/* Copy the top-level keys (NULL-terminated) of the JSON file at path into the summary, and
 * name the file under `as`. A missing file is skipped (a verb stopped before writing it). */
void tl_out_pick(const char *as, const char *path, const char *const *keys);

/* Finish: with --json the summary, with "exitCode": rc, on the real stdout. Returns rc. */
int tl_out_end(int rc);

#endif
