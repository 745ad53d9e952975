/*
 * td_test_gated.h - the async method several runtime tests share: it awaits a typed gate
 * and returns the gate's value. TD_TEST_GATED_METHOD(name) defines name##_method.
 */
#ifndef TD_TEST_GATED_H
#define TD_TEST_GATED_H

#include <tandem/tandem.h>

typedef struct { td_task_i64 gate; int64_t v; } gate_frame;

static void gate_step(td_runner *r, gate_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_VALUE(r, f->gate, f->v);
    TD_RETURN_VALUE(r, f->v);
    TD_END(r);
}

#define TD_TEST_GATED_METHOD(name) TD_METHOD_DEFINE(name, gate_frame, gate_step)

#endif
