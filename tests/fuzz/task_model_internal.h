/*
 * task_model_internal.h - what the model's files share (task_model.c, task_model_cancel.c).
 */
#ifndef TASK_MODEL_INTERNAL_H
#define TASK_MODEL_INTERNAL_H

#include "task_model.h"
#include <tandem/tandem.h>

static inline tm_outcome tm_outcome_of_(int status, int64_t value, int value_known, int code)
{
    tm_outcome o;
    o.status = status;
    o.value = value;
    o.value_known = value_known;
    o.code = code;
    return o;
}

/* Every cancellation record the runtime writes has code TD_ERR_CANCELED. */
static inline tm_outcome tm_canceled_outcome_(void)
{
    return tm_outcome_of_(TD_CANCELED, 0, 0, TD_ERR_CANCELED);
}

/* Complete task i with o unless it completed already; its continuations run in order. */
void tm_finish_(tm_model *m, int i, const tm_outcome *o);
/* Add a loop item at timing UPDATE (after the others). */
void tm_add_item_(tm_model *m, int type, int target, int64_t deadline);
/* A timeout's delay completed with `status` (elapsed, or cancelled). */
void tm_timeout_delay_done_(tm_model *m, int p, int status);
/* Register what runs when source c is cancelled. */
void tm_add_reg_(tm_model *m, int c, int type, int target);
/* Cancel source c: 1 when this call cancelled it. */
int tm_cancel_source_(tm_model *m, int c);

#endif
