#!/usr/bin/env bash
# Negative smoke: each row below breaks one line of a copy of the runtime (one behaviour a
# smoke case asserts) and requires exactly that case to fail, on both players, at the
# expectation named in the row, with the runner exiting non-zero. So each case shown here
# can fail, and fails for the behaviour it claims to check.
# usage: smoke_negative.sh TANDEM ROOT WORKDIR [CASE...]   (no CASE: every row)
set -uo pipefail
tandem=$1 root=$2 work=$3
shift 3
only=" $* "
failed=0

# expect_only_case CASE[+ALSO] RUNTIME_FILE OLD NEW CASE_FILE CHECK
#   Copy runtime/ and players/ to WORKDIR/case-CASE, replace OLD (a fixed string that must
#   occur exactly once in runtime/RUNTIME_FILE) by NEW, run the smoke suite on both players.
#   Pass when the run exits non-zero and the only failing case is number CASE, failing on
#   both players at a line of players/suites/smoke/CASE_FILE that contains CHECK; with +ALSO,
#   case ALSO, which checks the same behaviour another way, must fail too (anywhere).
expect_only_case() {
    local n=${1%%+*} also= file=$2 old=$3 new=$4 case_file=$5 check=$6
    [[ "$1" != *+* ]] || also=${1#*+}
    [ "$only" = "  " ] || [[ "$only" == *" $n "* ]] || return 0
    local dir="$work/case-$n" t0=$SECONDS
    rm -rf "$dir" && mkdir -p "$dir/broken"
    cp -r "$root/runtime" "$root/players" "$dir/broken/"
    local f="$dir/broken/runtime/$file"
    local count
    count=$(grep -cF -- "$old" "$f")
    if [ "$count" != 1 ]; then
        echo "negative smoke $n: the line to break occurs $count times in runtime/$file (expected once): $old"
        failed=1
        return
    fi
    OLD="$old" NEW="$new" perl -0pi -e 's/\Q$ENV{OLD}\E/$ENV{NEW}/' "$f"
    "$tandem" smoke --staging "$dir/broken" --out "$dir/out" >"$dir/log" 2>&1
    local rc=$?
    local rows bad
    rows=$(grep -E '^[0-9]+ ' "$dir/log" | grep 'FAIL ')
    bad=""
    [ $rc -ne 0 ] || bad="expected a non-zero exit, got 0"
    if [ -n "$also" ] && [ -z "$bad" ]; then
        printf '%s\n' "$rows" | grep -qE "^$also " || bad="expected case $also to fail too"
        rows=$(printf '%s\n' "$rows" | grep -vE "^$also ")
    fi
    [ -n "$bad" ] || [ "$(printf '%s\n' "$rows" | grep -c 'FAIL ')" -eq 1 ] || bad="expected exactly 1 failing case"
    [ -n "$bad" ] || [[ "$rows" == "$n "* ]] || bad="expected case $n to fail"
    local lines=()
    [ -n "$bad" ] || mapfile -t lines < <(printf '%s\n' "$rows" | grep -oE "FAIL players/suites/smoke/$case_file:[0-9]+" | grep -oE '[0-9]+$')
    [ -n "$bad" ] || [ "${#lines[@]}" -eq 2 ] || bad="expected FAIL $case_file:line on both players"
    local line
    for line in "${lines[@]}"; do
        [ -n "$bad" ] || sed -n "${line}p" "$dir/broken/players/suites/smoke/$case_file" | grep -qF -- "$check" ||
            bad="expected the failure at the line with '$check', got $case_file:$line"
    done
    if [ -n "$bad" ]; then
        echo "negative smoke $n: FAIL: $bad"
        grep -v "TANDEM-CASE-START\|TANDEM-CASE-PASS" "$dir/log" | tail -60
        failed=1
        return
    fi
    echo "negative smoke $n: ok in $((SECONDS - t0)) s: $rows"
}

# 5: the untyped get forgets that a shared task is the handle's: it answers as if the task
# were pending (TD_E_PENDING) instead of refusing it (TD_E_SHARED). Only the untyped
# out-of-line get (td_task_get, where the inline one and tcc's assembly send a task that has
# not succeeded) changes, so case 4's typed get still refuses.
expect_only_case 5 src/task.c \
    '    return task_get(t.source, t.token, out);' \
    '    return TD_WORD_MODE(td_atomic_load_u32(&t.source->word)) == TD_MODE_SHARED ? TD_E_PENDING : task_get(t.source, t.token, out);' \
    smoke_shared.c 'SMOKE_EQ(TD_E_SHARED, smoke_shape_get(&sh, t, &o))'

# 11: TD_END (how an untyped method completes) resets the resume point after completing, so
# a worker still unwinding from it corrupts the rental the main thread took meanwhile. Case 9
# (the main thread's continuation re-rents the runner while its step unwinds) fails too: the
# re-rented runner restarts on a gate already consumed for it (completion.c hands a result
# over to its waiting runner).
expect_only_case 11+9 include/tandem/async.h \
    '#define TD_END(r) } TD_RETURN_VALUE((r), 0)' \
    '#define TD_END(r) } td_runner_finish_((r), TD_SUCCEEDED, 0, NULL); (r)->resume = 0; return' \
    smoke_workers.c 'SMOKE_EQ(1, second.entered)'

# 16: a worker's post that repeats the callback of the entry queued before it runs with that
# entry's argument: the main thread's post runs twice, the worker's never (still 2 in all).
expect_only_case 16 src/loop.c \
    'loop_queue_push(&loop->queues[r->timing], r->fn, r->arg, r->target);' \
    'loop_queue_push(&loop->queues[r->timing], r->fn, (loop->queues[r->timing].count && loop->queues[r->timing].items[loop->queues[r->timing].count - 1].fn == r->fn) ? loop->queues[r->timing].items[loop->queues[r->timing].count - 1].arg : r->arg, r->target);' \
    smoke_loop.c 'SMOKE_EQ(1, main_post.count)'

# 22: a return-to-main result is held one frame too long (published in the frame after next).
expect_only_case 22 src/threads.c \
    'td_loop_post(loop, TD_TIMING_UPDATE, threads_work_publish, w) : TD_E_RETIRED' \
    'td_loop_post_at(loop, TD_TIMING_UPDATE, td_loop_frame(loop) + 2, threads_work_publish, w) : TD_E_RETIRED' \
    smoke_threads.c 'SMOKE_EQ(TD_SUCCEEDED, held.after_frame)'

# 23: run-on-pool leaves the caller's flowed context current on the worker after the work
# function returns, so code that the completion resumes there without a context of its own
# (an await that captured none) runs in the caller's; the worker's reset after every job
# hides it from the next job.
expect_only_case 23 src/threads.c \
    '            td_context_restore_(NULL);' \
    '            (void)0;' \
    smoke_threads.c 'SMOKE_TRUE(work_only.resumed == NULL)'

# 29: a delay's cancellation is published at once on the cancelling thread, as if
# cancel_immediately had been asked (frame waits keep deferring).
expect_only_case 29 src/waits.c \
    'if (o && o->cancel_immediately && w->cancel.source)' \
    'if (o && (o->cancel_immediately || w->kind == WAIT_DELAY) && w->cancel.source)' \
    smoke_loop.c 'SMOKE_EQ(0, where.count)'

# 34: end-of-frame rejection reports a user error instead of "not supported".
expect_only_case 34 src/waits.c \
    'TD_ERR_NOT_SUPPORTED, "end of frame' \
    'TD_ERR_USER, "end of frame' \
    smoke_loop.c 'SMOKE_EQ(TD_ERR_NOT_SUPPORTED, out.error.code)'

[ $failed -eq 0 ] && echo "negative smoke: every broken runtime failed exactly its case, on both players, with file:line"
exit $failed
