/*
 * why.h - the reasons printed above an attempt's verdict line (why.c).
 */
#ifndef TD_WHY_H
#define TD_WHY_H
#include <stdio.h>

/* From the attempt folder dir: its gate's INVALID reasons and failing rows (ratios and
 * limits; the first few, then how many more gate.md has) and a busy host, one line each,
 * "PREFIX: ..." on out. Nothing for a passing attempt on a quiet host. */
void td_why_print(const char *dir, const char *prefix, FILE *out);

/* The first compiler errors in log from byte `from` on (what a failed build wrote there;
 * `tandem build` names the user's files, tl_srcmap.h), at most 3 lines "PREFIX: ...". */
void td_why_compile(const char *log, long from, const char *prefix, FILE *out);

#endif
