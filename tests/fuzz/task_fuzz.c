/*
 * task_fuzz.c - libFuzzer target: each input is a sequence of task-protocol operations run
 * on the runtime and checked against the reference model (task_ops.h, task_model.h).
 * TASK_FUZZ_LENIENT=1 in the environment reports mismatches without aborting, so that the
 * sanitizers see what a wrong answer leads to (a use-after-free, say).
 */
#include <stdlib.h>
#include "task_ops.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int lenient = -1;
    if (lenient < 0) {
        const char *env = getenv("TASK_FUZZ_LENIENT");
        lenient = env != NULL && env[0] == '1';
    }
    tf_run(data, size, lenient);
    return 0;
}
