#!/usr/bin/env python3
"""Write the seed corpus of the task-protocol fuzzer (tests/fuzz/corpus/), deterministically.

Each seed is a sequence of 4-byte operations [opcode, a, b, c] (task_ops.h): a scenario per
kind of task and per protocol rule, the two reproductions of issue 40, and a few random
sequences from fixed seeds. Run it again after changing the op encoding:
    python3 tests/fuzz/make_seeds.py tests/fuzz/corpus
"""
import os
import random
import sys

# opcodes (task_ops.h)
(MAKE, MAKE2, COMPLETE, FAULT, CANCEL_PRODUCER, CANCEL, ON_COMPLETED, GET, GET2, STATUS, SHARE,
 RUN_FRAME, ADVANCE, CAPACITY, RETIRE, CANCEL_REGISTER, CANCEL_UNREGISTER, CANCEL_AFTER, LINKED,
 FORGET, RESET, RESULT) = range(22)
# kinds (task_model.h)
(MANUAL, AUTO, RUNNER_I64, RUNNER, FROM_RESULT, FROM_ERROR, FROM_CANCELED, NEXT_FRAME, YIELD,
 DELAY_FRAME, FRAME_TOKEN, DELAY, WHEN_ALL, WHEN_ANY, RACE, TIMEOUT, ATTACH, SUPPRESS, CALLBACK,
 FUTURE) = range(20)


def op(code, a=0, b=0, c=0):
    return bytes([code, a & 255, b & 255, c & 255])


def make(kind, b=0, c=0):
    return op(MAKE, kind, b, c)


def consume_twice(h):
    return op(GET, h) + op(STATUS, h) + op(GET, h) + op(ON_COMPLETED, h) + op(SHARE, h)


SCENARIOS = {
    # issue 40, reproduction 1: a second get of a consumed when_any
    "issue40_when_any_second_get":
        make(MANUAL) + make(MANUAL) + make(WHEN_ANY, 1, 0) + op(COMPLETE, 0, 1) +
        op(GET, 2) + op(GET, 2) + op(COMPLETE, 1, 2),
    # reproduction 2: the same with no source pool, then the loser completes
    "issue40_when_any_unpooled_loser":
        op(CAPACITY, 0, 0) + make(MANUAL) + make(MANUAL) + make(WHEN_ANY, 1, 0) +
        op(COMPLETE, 0, 1) + op(GET, 2) + op(GET, 2) + op(COMPLETE, 1, 2),
    # the wait version: a delay cancelled at once, read twice, then a frame
    "issue40_delay_cancel_immediately":
        op(CAPACITY, 0, 0) + make(DELAY, 0, 0x11) + op(CANCEL, 0) + op(GET, 0) + op(GET, 0) +
        op(RUN_FRAME),
    "manual_result": make(MANUAL) + op(STATUS, 0) + op(COMPLETE, 0, 7) + consume_twice(0) +
        op(COMPLETE, 0, 8),
    "manual_fault_awaited": make(MANUAL) + op(ON_COMPLETED, 0) + op(ON_COMPLETED, 0) +
        op(GET, 0) + op(FAULT, 0, 2) + op(GET, 0) + op(GET, 0),
    "auto_stale_producer": make(AUTO) + op(COMPLETE, 0, 3) + op(GET, 0) + op(COMPLETE, 0, 4) +
        make(AUTO) + op(COMPLETE, 0, 5) + op(COMPLETE, 1, 6) + op(GET, 1),
    "runner_typed": make(RUNNER_I64) + op(STATUS, 0) + op(COMPLETE, 0, 41) + consume_twice(0),
    "runner_untyped_fault": make(RUNNER) + op(ON_COMPLETED, 0) + op(FAULT, 0, 1) +
        consume_twice(0),
    "runner_unpooled": op(CAPACITY, 1, 0) + make(RUNNER_I64) + op(COMPLETE, 0, 1) +
        op(GET, 0) + make(RUNNER_I64) + op(CANCEL_PRODUCER, 1) + op(GET, 1),
    "from_values": make(FROM_RESULT, 9) + make(FROM_ERROR, 1) + make(FROM_CANCELED) +
        consume_twice(0) + consume_twice(1) + consume_twice(2),
    "frame_waits": make(NEXT_FRAME) + make(YIELD) + make(DELAY_FRAME, 2) + op(ON_COMPLETED, 0) +
        op(ON_COMPLETED, 0) + op(GET, 1) + op(RUN_FRAME) + op(GET, 0) + op(GET, 2) +
        op(RUN_FRAME) + op(GET, 2) + op(GET, 2),
    "frame_wait_token": make(FRAME_TOKEN, 2, 0) + make(FRAME_TOKEN, 0, 0x10) + op(CANCEL, 0) +
        op(GET, 1) + op(RUN_FRAME) + op(GET, 0) + op(GET, 0),
    "delay_elapses": make(DELAY, 3) + op(RUN_FRAME) + op(ADVANCE, 2) + op(RUN_FRAME) +
        op(STATUS, 0) + op(ADVANCE, 1) + op(RUN_FRAME) + consume_twice(0),
    "delay_token_next_frame": make(DELAY, 5, 1) + op(CANCEL, 0) + op(STATUS, 0) + op(RUN_FRAME) +
        consume_twice(0),
    "when_all_fault_first": make(MANUAL) + make(MANUAL) + make(MANUAL) + make(WHEN_ALL, 2, 0) +
        op(CANCEL_PRODUCER, 1) + op(FAULT, 2, 3) + op(COMPLETE, 0) + consume_twice(3),
    "when_all_success": make(FROM_RESULT, 1) + make(AUTO) + make(WHEN_ALL, 1, 0) +
        op(COMPLETE, 1, 2) + consume_twice(2),
    "when_any_fault_wins": make(MANUAL) + make(RUNNER_I64) + make(WHEN_ANY, 1, 0) +
        op(FAULT, 1) + op(GET, 2) + op(GET, 2) + op(COMPLETE, 0),
    "when_any_completed_input": make(MANUAL) + make(FROM_RESULT, 4) + make(WHEN_ANY, 1, 0) +
        consume_twice(2) + op(COMPLETE, 0),
    "race_cancels_losers": make(DELAY, 7, 1, ) + make(MANUAL) + make(RACE, 1, 1) +
        op(COMPLETE, 1, 5) + op(GET, 2) + op(GET, 2) + op(RUN_FRAME) + op(GET, 0),
    "race_immediate_losers": make(DELAY, 7, 0x11) + make(CALLBACK, 1) + make(MANUAL) +
        make(RACE, 2, 1) + op(COMPLETE, 2, 1) + op(STATUS, 3) + op(GET, 3) + op(GET, 3),
    "timeout_times_out": make(MANUAL) + make(TIMEOUT, 2, 0) + op(ADVANCE, 3) + op(RUN_FRAME) +
        op(GET, 1) + op(GET, 1) + op(COMPLETE, 0, 1),
    "timeout_with_error": make(AUTO) + make(TIMEOUT, 1, 1) + op(ADVANCE, 1) + op(RUN_FRAME) +
        consume_twice(1) + op(COMPLETE, 0, 1),
    "timeout_producer_wins": make(RUNNER_I64) + make(TIMEOUT, 4, 0) + op(COMPLETE, 0, 2) +
        consume_twice(1) + op(RUN_FRAME) + op(ADVANCE, 9) + op(RUN_FRAME),
    # make(TIMEOUT, b, c): b % 8 ms; c: bit 0 with error, bit 1 a token, bit 2 immediately,
    # c >> 3 the token's source (c also picks the input: c % handles)
    "timeout_token_immediate": make(MANUAL) + make(TIMEOUT, 5, 6) + op(CANCEL, 0) +
        op(GET, 1) + op(GET, 1) + op(COMPLETE, 0, 1) + op(RUN_FRAME),
    "timeout_token_next_frame": make(AUTO) + make(TIMEOUT, 5, 2) + op(CANCEL, 0) +
        op(STATUS, 1) + op(RUN_FRAME) + consume_twice(1) + op(COMPLETE, 0),
    "timeout_token_cancelled_before": op(CANCEL, 0) + make(MANUAL) + make(TIMEOUT, 5, 2) +
        op(GET, 1) + make(FROM_RESULT, 3) + make(TIMEOUT, 5, 2) + op(GET, 3) + op(GET, 3) +
        op(COMPLETE, 0),
    "attach_cancel": make(MANUAL) + make(ATTACH, 0) + op(CANCEL, 0) + op(GET, 1) + op(GET, 1) +
        op(COMPLETE, 0, 1),
    "attach_input_first": make(MANUAL) + make(ATTACH, 4) + op(COMPLETE, 0, 3) + op(CANCEL, 1) +
        consume_twice(1),
    "suppress": make(MANUAL) + make(SUPPRESS) + op(CANCEL_PRODUCER, 0) + consume_twice(1) +
        make(FROM_RESULT, 2) + make(SUPPRESS, 0, 2) + consume_twice(3),
    "callback_inline_and_later": make(CALLBACK, 0, 1) + make(CALLBACK, 0, 3) + make(CALLBACK) +
        consume_twice(0) + consume_twice(1) + op(COMPLETE, 2, 6) + consume_twice(2),
    "callback_cancelled": make(CALLBACK, 1) + op(CANCEL, 0) + op(GET, 0) + op(GET, 0) +
        op(COMPLETE, 0, 1) + make(CALLBACK, 1) + op(GET, 1),
    "future": make(FUTURE) + make(FUTURE, 3) + op(COMPLETE, 0, 4) + op(COMPLETE, 0, 5) +
        consume_twice(0) + op(CANCEL, 1) + op(GET, 1) + op(GET, 1) + op(FAULT, 1, 2),
    "shared_handles": make(MANUAL) + op(SHARE, 0) + op(SHARE, 0) + op(GET, 0) +
        op(ON_COMPLETED, 1) + op(ON_COMPLETED, 1) + op(COMPLETE, 0, 3) + op(GET, 1) +
        op(GET, 1) + op(STATUS, 0) + make(NEXT_FRAME) + op(SHARE, 2) + op(RUN_FRAME) + op(GET, 3),
    "share_awaited_and_done": make(AUTO) + op(ON_COMPLETED, 0) + op(SHARE, 0) + make(FROM_ERROR) +
        op(SHARE, 1) + op(GET, 2) + op(STATUS, 1),
    "cancel_registrations": op(CANCEL_REGISTER, 0) + op(CANCEL_REGISTER, 0) +
        op(CANCEL_UNREGISTER, 0) + op(CANCEL, 0) + op(CANCEL, 0) + op(CANCEL_REGISTER, 0),
    "cancel_after": op(CANCEL_AFTER, 0, 2) + make(DELAY, 7, 1) + op(RUN_FRAME) + op(ADVANCE, 2) +
        op(RUN_FRAME) + op(RUN_FRAME) + op(GET, 0),
    "linked_sources": op(LINKED, 0, 1) + op(CANCEL_REGISTER, 2) + make(DELAY, 7, 0x15) +
        make(CALLBACK, 5) + op(CANCEL, 1) + op(GET, 0) + op(GET, 1) + op(CANCEL, 2),
    "forget": make(MANUAL) + make(RUNNER_I64) + make(FROM_ERROR) + make(NEXT_FRAME) +
        op(FORGET, 0) + op(FORGET, 1) + op(FORGET, 2) + op(FORGET, 3) + op(FAULT, 0) +
        op(COMPLETE, 1) + op(RUN_FRAME),
    "retire_loop": make(NEXT_FRAME) + make(DELAY, 7) + make(FRAME_TOKEN, 1, 0) +
        op(ON_COMPLETED, 0) + op(CANCEL_AFTER, 1, 7) + op(RETIRE) + op(GET, 0) + op(GET, 1) +
        op(GET, 2) + make(NEXT_FRAME) + op(RUN_FRAME) + op(GET, 3),
    "capacities": op(CAPACITY, 0, 1) + op(CAPACITY, 1, 2) + make(AUTO) + make(RUNNER_I64) +
        op(COMPLETE, 0) + op(COMPLETE, 1) + op(GET, 0) + op(GET, 1) + op(CAPACITY, 0, 3) +
        op(CAPACITY, 1, 3) + make(AUTO) + op(COMPLETE, 2) + op(GET, 2) + op(GET, 2),
    "manual_reset": make(MANUAL) + op(COMPLETE, 0, 1) + op(RESULT, 0) + op(RESET, 0) +
        op(GET, 0) + op(STATUS, 1) + op(FAULT, 1, 1) + op(RESULT, 1) + op(RESULT, 1) +
        op(RESET, 1) + op(CANCEL_PRODUCER, 2) + op(RESULT, 2),
    "results": make(FROM_ERROR, 2) + make(FROM_CANCELED) + make(RUNNER_I64) + make(NEXT_FRAME) +
        op(RESULT, 0) + op(RESULT, 1) + op(COMPLETE, 2, 4) + op(RESULT, 2) + op(RESULT, 2) +
        op(RESULT, 3) + op(RUN_FRAME) + op(RESULT, 3),
    "nested_combinators": make(MANUAL) + make(MANUAL) + make(WHEN_ANY, 1, 0) + make(MANUAL) +
        make(WHEN_ALL, 1, 2) + op(COMPLETE, 1) + op(COMPLETE, 3) + consume_twice(4) +
        op(COMPLETE, 0),
}


def random_seed(n, ops):
    rnd = random.Random(n)
    return b"".join(bytes([rnd.randrange(22), rnd.randrange(256), rnd.randrange(256),
                           rnd.randrange(256)]) for _ in range(ops))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")
    os.makedirs(out, exist_ok=True)
    for name, data in SCENARIOS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    for n in range(6):
        with open(os.path.join(out, "random_%d" % n), "wb") as f:
            f.write(random_seed(n, 48 + 16 * n))


if __name__ == "__main__":
    main()
