/*
 * ci_out.h - JUnit XML and CSV for CI servers (ci_out.c).
 */
#ifndef TD_CI_OUT_H
#define TD_CI_OUT_H

/* out_dir/smoke-junit.xml from out_dir/smoke-<backend>.json: one testcase per case per
 * backend. 0 ok, 1 error (reported). */
int td_ci_smoke(const char *out_dir, const char *const *backends, int nb);

/* out_dir/gate-junit.xml (one testcase per gated row per backend; a failure's message is
 * the ratios and the limits) and out_dir/gate-rows.csv (every row) from
 * out_dir/gate-summary.json. 0 ok, 1 error (reported). */
int td_ci_gate(const char *out_dir);

#endif
