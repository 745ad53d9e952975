/*
 * td_test.h - a minimal test harness for the runtime tests (clang, tcc, sanitizers).
 * A failed check prints file:line, the expression, expected and actual, marks the
 * current test failed and returns from it. The program prints "N passed, N failed" and
 * exits non-zero when any test failed.
 */
#ifndef TD_TEST_H
#define TD_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

static int td_test_failed_flag;
static int td_test_passed_count, td_test_failed_count;

#define TD_CHECK(cond)                                                                  \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);    \
            td_test_failed_flag = 1;                                                    \
            return;                                                                     \
        }                                                                               \
    } while (0)

#define TD_CHECK_EQ(expected, actual)                                                   \
    do {                                                                                \
        long long e_ = (long long)(expected), a_ = (long long)(actual);                 \
        if (e_ != a_) {                                                                 \
            fprintf(stderr, "%s:%d: %s == %s: expected %lld, actual %lld\n", __FILE__,  \
                    __LINE__, #expected, #actual, e_, a_);                              \
            td_test_failed_flag = 1;                                                    \
            return;                                                                     \
        }                                                                               \
    } while (0)

/* TD_TEST_ONLY=name runs only the tests of that name (e.g. to run one against an older
 * runtime whose other failures would abort the process first). */
#define TD_RUN(fn)                                                                      \
    do {                                                                                \
        const char *only_ = getenv("TD_TEST_ONLY");                                     \
        if (only_ && strcmp(only_, #fn) != 0)                                           \
            break;                                                                      \
        td_test_failed_flag = 0;                                                        \
        fn();                                                                           \
        if (td_test_failed_flag) {                                                      \
            td_test_failed_count++;                                                     \
            fprintf(stderr, "FAIL %s\n", #fn);                                          \
        } else {                                                                        \
            td_test_passed_count++;                                                     \
            printf("ok   %s\n", #fn);                                                   \
        }                                                                               \
    } while (0)

#define TD_TEST_SUMMARY()                                                               \
    (printf("%d passed, %d failed\n", td_test_passed_count, td_test_failed_count),      \
     td_test_failed_count ? 1 : 0)

#endif
