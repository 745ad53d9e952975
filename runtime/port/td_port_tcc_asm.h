/*
 * td_port_tcc_asm.h - under tcc only (td_port.h includes it there): the runtime's hottest
 * functions written in x86-64 assembly, because tcc never inlines and compiles their C
 * into a call, a frame and every local on the stack. Each has a C equivalent, the path
 * every other compiler (and tcc's debug build, TD_DEBUG) takes; test_port_asm runs both on
 * the same words, every state of the word's table (detail/word.h), and compares the word,
 * the return code and the outcome they leave.
 *
 * The assembler takes no C expression, so the protocol's constants and the offsets the code
 * names are the literals below, each checked against its C definition at compile time where
 * that definition is visible (task.c, async.c: a grep for the C name finds the check), and
 * spelled in the strings through TD_ASM_S. Numeric labels ("11f") stay local to one function.
 */
#ifndef TD_PORT_TCC_ASM_H
#define TD_PORT_TCC_ASM_H

#define TD_ASM_S_(x) #x
#define TD_ASM_S(x) TD_ASM_S_(x)            /* a constant's literal, in an asm string */

#define TD_ASM_SUCCEEDED 1                  /* TD_SUCCEEDED */
#define TD_ASM_WORD_STAMPED 0x40            /* TD_WORD_STAMPED */
#define TD_ASM_WORD_POOLED_SUCCESS 0x101    /* TD_SUCCEEDED | TD_WORD_POOLED: a token plus this is
                                             * the word of a runner pooled by its success */
#define TD_ASM_POOLED_SUCCESS_TO_NEXT 0x3ff /* TD_TOKEN_STEP - TD_SUCCEEDED: that word plus this is
                                             * the next version with TD_WORD_POOLED */
#define TD_ASM_SOURCE_VALUE 8               /* offsetof(td_source, value) */
#define TD_ASM_SOURCE_CONT_ARG 0x20         /* offsetof(td_source, cont_arg): a stamp's address */
#define TD_ASM_OUTCOME_VALUE 8              /* offsetof(td_outcome, value) */
#define TD_ASM_OUTCOME_ERROR 16             /* offsetof(td_outcome, error), 24 bytes */
#define TD_ASM_RUNNER_SYNC 0x90             /* offsetof(td_runner, sync) */

/* The C equivalents of the functions below (what td_task_get / td_task_i64_get /
 * td_task_result / td_task_i64_result do first, task.h and task.c):
 *
 *   if (t.source == NULL) -> succeeded, value (typed: t.value; untyped: 0)
 *   w = t.source->word;
 *   if (untyped && (w & TD_WORD_STAMPED) && (int32_t)(*stamp - t.token) >= 0) -> succeeded, 0
 *   if (w == t.token + (TD_SUCCEEDED | TD_WORD_POOLED)) {      (mode NONE, pooled at success)
 *       value = t.source->value;
 *       t.source->word = w + (TD_TOKEN_STEP - TD_SUCCEEDED);   (next version, pooled: release)
 *       -> succeeded, value
 *   }
 *   -> the out-of-line C function (slow), arguments in place
 *
 * and of td_port_runner_return_ (a step's TD_RETURN_VALUE):
 *
 *   if (r->sync) { r->source.value = value; *r->sync = TD_SUCCEEDED; } else td_runner_succeed_(r, value);
 */
/* The consumption's common cases as two functions in assembly, with the C signatures of
 * td_task_i64_get and td_task_get (SysV x86-64: the task's two words in rdi and rsi, the
 * outcome in rdx): under tcc the C fast path is a call, a frame, every local on the stack and
 * some fifty instructions; these are a dozen to twenty. `name` answers what it can and
 * tail-jumps to `slow` (the out-of-line C function, same arguments in place) otherwise:
 *   - a source-free task: succeeded, its value (typed: the second word; untyped: 0);
 *   - untyped: a stamp source (word & 0x40, TD_WORD_STAMPED) whose stamp, at cont_arg
 *     (offset 0x20), reached the token: succeeded, 0;
 *   - a runner pooled by its success at the token in mode NONE (the word equal to token +
 *     0x101: the token is the version in place, TD_SUCCEEDED | TD_WORD_POOLED; mode AWAITED,
 *     0x4, is the slow function's, as for the C inline queries, task.h): the value
 *     (offset 8) read, then the next version stored with the flag (the word + 0x3ff), a
 *     plain store (x86-64: a release store), as TD_SOURCE_CONSUME_IF_SUCCEEDED_ does;
 * a success writes the outcome as td_port_store_tag_value_zero24_. task.c checks every
 * constant and offset named here against the C definitions at compile time. */
#  if defined(__x86_64__)
/* The fragments the functions below share. A function's start: aligned to 16 bytes (libtcc
 * places it wherever the code before it ends; the padding sits after a jump, never run). */
#    define TD_PORT_ASM_FUNCTION_(name)                                                    \
    ".text\n"                                                                               \
    ".p2align 4\n"                                                                          \
    ".globl " #name "\n"                                                                    \
    #name ":\n\t"
/* A task's word in eax (the source in rdi), or a jump to `none` for a source-free task. */
#    define TD_PORT_TASK_WORD_ASM_(none)                                                   \
    "testq %rdi, %rdi\n\t"                                                                  \
    "jz " none "\n\t"                                                                       \
    "movl (%rdi), %eax\n\t"
/* A stamp source whose stamp reached the token (esi) jumps to `reached`; any other word goes
 * to `other` (rcx is scratch). */
#    define TD_PORT_STAMP_ASM_(reached, other)                                             \
    "testb $" TD_ASM_S(TD_ASM_WORD_STAMPED) ", %al\n\t"                                     \
    "jz " other "\n\t"                                                                      \
    "movq " TD_ASM_S(TD_ASM_SOURCE_CONT_ARG) "(%rdi), %rcx\n\t"                             \
    "movl (%rcx), %ecx\n\t"                                                                 \
    "subl %esi, %ecx\n\t"                                                                   \
    "jns " reached "\n"
/* A runner pooled by its success at the token (esi) in mode NONE: `read` (the value, or
 * nothing), then the next version stored with the flag; any other word jumps to `miss`.
 * `scratch` is a free 32-bit register. */
#    define TD_PORT_POOLED_ASM_(scratch, miss, read)                                       \
    "leal " TD_ASM_S(TD_ASM_WORD_POOLED_SUCCESS) "(%rsi), " scratch "\n\t"                  \
    "cmpl " scratch ", %eax\n\t"                                                            \
    "jne " miss "\n\t"                                                                      \
    read                                                                                    \
    "addl $" TD_ASM_S(TD_ASM_POOLED_SUCCESS_TO_NEXT) ", " scratch "\n\t"                    \
    "movl " scratch ", (%rdi)\n"
#    define TD_PORT_READ_VALUE_ASM_ "movq " TD_ASM_S(TD_ASM_SOURCE_VALUE) "(%rdi), %rsi\n\t"
/* ... the gets' pooled case: the value into rsi, then the success's outcome at `L` */
#    define TD_PORT_GET_POOLED_ASM_(L, miss)                                                \
    TD_PORT_POOLED_ASM_("%ecx", miss, TD_PORT_READ_VALUE_ASM_)                             \
    L ":\t" TD_PORT_GET_SUCCEEDED_ASM_
/* ... the success's outcome (the value in rsi) and TD_OK: where each path ends, not jumped to
 * from another (one jump less on the stamp path, whose time otherwise moved with the
 * placement of the code before it) */
#    define TD_PORT_GET_SUCCEEDED_ASM_                                                      \
    "movl $" TD_ASM_S(TD_ASM_SUCCEEDED) ", (%rdx)\n\t"                                      \
    "movq %rsi, " TD_ASM_S(TD_ASM_OUTCOME_VALUE) "(%rdx)\n\t"                               \
    "movq $0, " TD_ASM_S(TD_ASM_OUTCOME_ERROR) "(%rdx)\n\t"                                 \
    "movq $0, " TD_ASM_S(TD_ASM_OUTCOME_ERROR) "+8(%rdx)\n\t"                               \
    "movq $0, " TD_ASM_S(TD_ASM_OUTCOME_ERROR) "+16(%rdx)\n\t"                              \
    "xorl %eax, %eax\n\t"                                                                   \
    "ret\n"
/* A debug build (TD_DEBUG) takes the C paths instead of these two, whose writes of the word
 * are checked against the state table (detail/word.h). */
#    if !defined(TD_DEBUG)
#    define TD_PORT_DEFINE_TASK_GETS_(i64_name, i64_slow, name, slow)                      \
    __asm__(TD_PORT_ASM_FUNCTION_(i64_name)                                                 \
            TD_PORT_TASK_WORD_ASM_("11f")                                                   \
            TD_PORT_GET_POOLED_ASM_("11", "12f")                                           \
            "12:\tjmp " #i64_slow "\n"                                                      \
            TD_PORT_ASM_FUNCTION_(name)                                                     \
            TD_PORT_TASK_WORD_ASM_("23f")                                                   \
            TD_PORT_STAMP_ASM_("23f", "24f")                                                \
            "24:\t"                                                                         \
            TD_PORT_GET_POOLED_ASM_("21", "22f")                                           \
            "23:\txorl %esi, %esi\n\t"                                                      \
            TD_PORT_GET_SUCCEEDED_ASM_                                                      \
            "22:\tjmp " #slow "\n")
/* The result queries' common cases the same way, with the C signatures of td_task_i64_result
 * (the task in rdi and rsi, the value's address in rdx, the error's in rcx: the pooled case's
 * scratch is r8d) and td_task_result (the error's address in rdx): the same tests as the
 * gets, a success's value (typed) stored at rdx and TD_OK; anything else tail-jumps to `slow`
 * with the arguments in place. */
#    define TD_PORT_DEFINE_TASK_RESULTS_(i64_name, i64_slow, name, slow)                   \
    __asm__(TD_PORT_ASM_FUNCTION_(i64_name)                                                 \
            TD_PORT_TASK_WORD_ASM_("31f")                                                   \
            TD_PORT_POOLED_ASM_("%r8d", "32f", TD_PORT_READ_VALUE_ASM_)                    \
            "31:\tmovq %rsi, (%rdx)\n\t"                                                    \
            "xorl %eax, %eax\n\t"                                                           \
            "ret\n"                                                                         \
            "32:\tjmp " #i64_slow "\n"                                                      \
            TD_PORT_ASM_FUNCTION_(name)                                                     \
            TD_PORT_TASK_WORD_ASM_("43f")                                                   \
            TD_PORT_STAMP_ASM_("43f", "44f")                                                \
            "44:\t"                                                                         \
            TD_PORT_POOLED_ASM_("%ecx", "42f", "")                                         \
            "43:\txorl %eax, %eax\n\t"                                                      \
            "ret\n"                                                                         \
            "42:\tjmp " #slow "\n")
#    endif
#  endif
/* A step's return with a value (async.h, TD_RETURN_VALUE) as a function in assembly with the
 * C signature void name(td_runner *r, int64_t value): inside its start (the runner's `sync`,
 * offset 0x90, not NULL) the value goes to the runner's source (offset 8) and the start's
 * local gets TD_SUCCEEDED (1); anything else tail-jumps to `slow` (td_runner_succeed_, same
 * arguments in place). Under tcc the C test and two stores go through reloaded pointers, and
 * an asm block at every return would cost libtcc at load per expansion; this is one function
 * and a call. async.c checks the offsets. */
#  define TD_PORT_DEFINE_RUNNER_RETURN_(name, slow)                                        \
    __asm__(TD_PORT_ASM_FUNCTION_(name)                                                     \
            "movq " TD_ASM_S(TD_ASM_RUNNER_SYNC) "(%rdi), %rax\n\t"                         \
            "testq %rax, %rax\n\t"                                                          \
            "jz 1f\n\t"                                                                     \
            "movq %rsi, " TD_ASM_S(TD_ASM_SOURCE_VALUE) "(%rdi)\n\t"                        \
            "movl $" TD_ASM_S(TD_ASM_SUCCEEDED) ", (%rax)\n\t"                              \
            "ret\n"                                                                         \
            "1:\tjmp " #slow "\n")
#endif /* TD_PORT_TCC_ASM_H */
