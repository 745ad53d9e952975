/*
 * task_ops.h - the decoder and executor shared by the libFuzzer target (task_fuzz.c) and the
 * corpus replay (replay_main.c, built by clang and by tcc).
 *
 * An input is a sequence of operations of 4 bytes each: an opcode and three argument bytes
 * (missing bytes read 0), at most TF_MAX_OPS of them. Each operation is performed on the
 * runtime through its public API and checked against the reference model (task_model.h);
 * operations the model calls undefined (a usage error) are skipped. After the input the
 * executor tears down: cancels every source, completes every producer, retires the loop,
 * consumes what is left (all checked), frees everything and shuts the runtime down.
 */
#ifndef TASK_OPS_H
#define TASK_OPS_H

#include <stddef.h>
#include <stdint.h>

#define TF_MAX_OPS 256
#define TF_OP_BYTES 4

/* The opcodes (the first byte of an operation, modulo TF_OP_COUNT). */
enum {
    TF_MAKE, TF_MAKE_AGAIN,     /* two codes: making is the most useful operation */
    TF_COMPLETE, TF_FAULT, TF_CANCEL_PRODUCER, TF_CANCEL,
    TF_ON_COMPLETED, TF_GET, TF_GET_AGAIN, TF_STATUS, TF_SHARE,
    TF_RUN_FRAME, TF_ADVANCE, TF_CAPACITY, TF_RETIRE,
    TF_CANCEL_REGISTER, TF_CANCEL_UNREGISTER, TF_CANCEL_AFTER, TF_LINKED, TF_FORGET,
    TF_RESET, TF_RESULT,
    TF_OP_COUNT
};

/* Run one input. lenient 0: the first mismatch prints a report and aborts. lenient 1: every
 * mismatch is printed and counted, and the run goes on (to let a sanitizer see what a
 * wrong answer leads to). Returns the number of mismatches. */
int tf_run(const uint8_t *data, size_t size, int lenient);

/* The name of an opcode, for reports. */
const char *tf_op_name(int op);

#endif
